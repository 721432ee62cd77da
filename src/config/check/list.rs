//! The `dump_list` constraint (adump `CheckDumpList`): each model's and each item's keys, layers
//! and optype/opname blacklists.

use serde_json::Value;

use super::{index, member, Checker, Val, MAX_BLACKLIST};
use crate::config::cann;

impl Checker<'_> {
    pub(super) fn dump_list(&mut self) {
        const F: &str = "CheckDumpList";
        if self.bad.contains("dump_list") {
            return;
        }
        let Some(Value::Array(items)) = self.dump.get("dump_list") else {
            return;
        };
        if items.is_empty() {
            return;
        }
        let switch_off = match self.val("dump_op_switch") {
            Val::Absent | Val::Str("off") => Some(true),
            Val::Str(_) => Some(false),
            Val::Bad => None,
        };
        let scene_watcher = self.is("dump_scene", "watcher");
        let level = match self.val("dump_level") {
            Val::Absent => Some("all"),
            Val::Str(l) => Some(l),
            Val::Bad => None,
        };
        if switch_off.is_none() {
            self.notes.push("dump_op_switch is invalid: the model_name / layer emptiness rule (applied when it is off) was not checked".into());
        }
        if level.is_none() {
            self.notes.push("dump_level is invalid: the blacklist and opname_range rules (which need dump_level op) were not checked against it".into());
        }
        for (i, item) in items.iter().enumerate() {
            let base = index("dump_list", i);
            let Some(obj) = item.as_object() else {
                continue;
            };
            let str_of = |k: &str| obj.get(k).and_then(Value::as_str);
            let list_len = |k: &str| obj.get(k).and_then(Value::as_array).map(Vec::len);
            let model_name_path = member(&base, "model_name");
            let model_name_ok = !self.bad.contains(&model_name_path);
            if switch_off == Some(true) {
                if model_name_ok && str_of("model_name") == Some("") {
                    self.ep0001(&model_name_path, F, cann::VALUE_EMPTY, format!("set {model_name_path} to the model (graph) name or remove the key to dump every model"));
                }
                let p = member(&base, "layer");
                if !self.bad.contains(&p) && list_len("layer") == Some(0) {
                    self.ep0001(
                        &p,
                        F,
                        cann::VALUE_EMPTY,
                        format!("list op names in {p} or remove the key to dump every op"),
                    );
                }
            }
            let wp = member(&base, "watcher_nodes");
            if !self.bad.contains(&wp) {
                let watcher_nodes = list_len("watcher_nodes").unwrap_or(0);
                if scene_watcher {
                    if watcher_nodes == 0 {
                        self.ep0001(&wp, F, cann::VALUE_EMPTY, format!("list in {wp} the op(s) whose output gets overwritten (the victims)"));
                    }
                    if model_name_ok && str_of("model_name").is_some_and(|s| !s.is_empty()) {
                        let m =
                            cann::ep0005_cannot_set_when(&model_name_path, "dump_scene", "watcher");
                        self.ep0005(&model_name_path, F, m, format!("remove {model_name_path}: watcher items take only layer and watcher_nodes"));
                    }
                } else if watcher_nodes > 0 {
                    let m = cann::ep0005_cannot_set_unless(&wp, "dump_scene", "watcher");
                    self.ep0005(&wp, F, m, format!("add \"dump_scene\": \"watcher\" (with dump_mode output) or remove {wp}"));
                }
            }
            for key in ["optype_blacklist", "opname_blacklist"] {
                let p = member(&base, key);
                if self.bad.contains(&p) {
                    continue;
                }
                let Some(entries) = obj.get(key).and_then(Value::as_array) else {
                    continue;
                };
                if entries.len() > MAX_BLACKLIST {
                    self.ep0003(
                        &entries.len().to_string(),
                        &p,
                        F,
                        cann::BLACKLIST_TOO_LONG,
                        format!("keep at most 100 entries in {p} (it has {})", entries.len()),
                    );
                }
                if entries.is_empty() {
                    continue;
                }
                if level.is_some_and(|l| l != "op") {
                    let m = cann::ep0005_cannot_set_unless(&p, "dump_level", "op");
                    self.ep0005(
                        &p,
                        F,
                        m,
                        format!("set \"dump_level\": \"op\" or remove {p}"),
                    );
                }
                for (j, entry) in entries.iter().enumerate() {
                    let Some(pos) = entry.get("pos").and_then(Value::as_array) else {
                        continue;
                    };
                    for (k, v) in pos.iter().enumerate() {
                        let Some(v) = v.as_str().filter(|v| !v.is_empty()) else {
                            continue;
                        };
                        let pp = index(&member(&index(&p, j), "pos"), k);
                        self.blacklist_pos(v, &pp);
                    }
                }
            }
            let rp = member(&base, "opname_range");
            if !self.bad.contains(&rp) {
                if let Some(ranges) = obj
                    .get("opname_range")
                    .and_then(Value::as_array)
                    .filter(|r| !r.is_empty())
                {
                    if level.is_some_and(|l| l != "op") {
                        let m = cann::ep0005_cannot_set_unless(&rp, "dump_level", "op");
                        self.ep0005(
                            &rp,
                            F,
                            m,
                            format!("set \"dump_level\": \"op\" or remove {rp}"),
                        );
                    }
                    if model_name_ok {
                        match str_of("model_name") {
                            None => self.ep0001(
                                &model_name_path,
                                F,
                                cann::NOT_FOUND,
                                format!("add {model_name_path}: opname_range needs the model name"),
                            ),
                            Some("") => self.ep0001(
                                &model_name_path,
                                F,
                                cann::VALUE_EMPTY,
                                format!("set {model_name_path}: opname_range needs the model name"),
                            ),
                            Some(_) => {}
                        }
                    }
                    for (j, r) in ranges.iter().enumerate() {
                        let ip = index(&rp, j);
                        let typed_wrong = ["begin", "end"]
                            .iter()
                            .any(|k| self.bad.contains(&member(&ip, k)));
                        let Some(r) = r.as_object().filter(|_| !typed_wrong) else {
                            continue;
                        };
                        let b = r.get("begin").and_then(Value::as_str).unwrap_or("");
                        let e = r.get("end").and_then(Value::as_str).unwrap_or("");
                        if b.is_empty() || e.is_empty() {
                            self.ep0003(
                                &format!("begin={b}, end={e}"),
                                &ip,
                                F,
                                cann::RANGE_INCOMPLETE,
                                format!("give {ip} both \"begin\" and \"end\" op names"),
                            );
                        }
                    }
                }
            }
        }
    }

    /// adump checks the `input` prefix, then the `output` prefix; a known prefix with a
    /// non-digit index is reported, and then — as both prefix checks failed — the prefix error
    /// is reported as well. npgx reports both lines, as CANN logs them.
    pub(super) fn blacklist_pos(&mut self, value: &str, path: &str) {
        const F: &str = "CheckDumpList";
        let mut known_prefix = false;
        for prefix in ["input", "output"] {
            if let Some(idx) = value.strip_prefix(prefix).filter(|i| !i.is_empty()) {
                if idx.bytes().all(|b| b.is_ascii_digit()) {
                    return;
                }
                known_prefix = true;
                self.ep0003(
                    value,
                    path,
                    F,
                    cann::POS_INDEX_NOT_DIGIT,
                    format!("write {path} as {prefix}<N> with a decimal index, e.g. {prefix}0"),
                );
            }
        }
        let fix = if known_prefix {
            format!("(reported by CANN together with the line above) write {path} as input<N> or output<N>")
        } else {
            format!("write {path} as input<N> or output<N>, e.g. input0")
        };
        self.ep0003(value, path, F, cann::POS_INVALID_PREFIX, fix);
    }
}
