//! The `dump_list` constraint (adump `CheckDumpList`): each model's and each item's keys, layers
//! and optype/opname blacklists.

use serde_json::{Map, Value};

use super::{index, member, Checker, Val, MAX_BLACKLIST};
use crate::config::cann;

/// The adump function the `dump_list` rules are reported under.
const F: &str = "CheckDumpList";

/// The settings outside `dump_list` its rules depend on; `None` where the setting is invalid
/// (the rules that need it are skipped).
#[derive(Clone, Copy)]
struct ListSettings<'a> {
    /// `dump_op_switch` is off (or absent).
    switch_off: Option<bool>,
    /// `dump_scene` is `watcher`.
    scene_watcher: bool,
    /// `dump_level` (`all` when absent).
    level: Option<&'a str>,
}

/// One object of `dump_list`, at JSON path `base`.
struct ListItem<'a> {
    base: String,
    obj: &'a Map<String, Value>,
    model_name_path: String,
    /// Whether `model_name` had no wrong type or value reported when the item's checks began.
    model_name_ok: bool,
}

impl<'a> ListItem<'a> {
    /// The string at `k`, if it is one.
    fn str_of(&self, k: &str) -> Option<&'a str> {
        self.obj.get(k).and_then(Value::as_str)
    }

    /// The length of the array at `k`, if it is one.
    fn list_len(&self, k: &str) -> Option<usize> {
        self.obj.get(k).and_then(Value::as_array).map(Vec::len)
    }
}

impl Checker<'_> {
    /// The `dump_list` rules, item by item, with the list-wide settings they depend on.
    pub(super) fn dump_list(&mut self) {
        if self.bad.contains("dump_list") {
            return;
        }
        let Some(Value::Array(items)) = self.dump.get("dump_list") else {
            return;
        };
        if items.is_empty() {
            return;
        }
        let s = ListSettings {
            switch_off: match self.val("dump_op_switch") {
                Val::Absent | Val::Str("off") => Some(true),
                Val::Str(_) => Some(false),
                Val::Bad => None,
            },
            scene_watcher: self.is("dump_scene", "watcher"),
            level: match self.val("dump_level") {
                Val::Absent => Some("all"),
                Val::Str(l) => Some(l),
                Val::Bad => None,
            },
        };
        if s.switch_off.is_none() {
            self.notes.push("dump_op_switch is invalid: the model_name / layer emptiness rule (applied when it is off) was not checked".into());
        }
        if s.level.is_none() {
            self.notes.push("dump_level is invalid: the blacklist and opname_range rules (which need dump_level op) were not checked against it".into());
        }
        for (i, item) in items.iter().enumerate() {
            let base = index("dump_list", i);
            let Some(obj) = item.as_object() else {
                continue;
            };
            let model_name_path = member(&base, "model_name");
            let item = ListItem {
                model_name_ok: !self.bad.contains(&model_name_path),
                base,
                obj,
                model_name_path,
            };
            if s.switch_off == Some(true) {
                self.list_item_not_empty(&item);
            }
            self.list_item_watcher(&item, s);
            for key in ["optype_blacklist", "opname_blacklist"] {
                self.list_item_blacklist(&item, key, s);
            }
            self.list_item_opname_range(&item, s);
        }
    }

    /// With `dump_op_switch` off, an item's `model_name` and `layer` may be absent but not
    /// empty.
    fn list_item_not_empty(&mut self, item: &ListItem<'_>) {
        let model_name_path = &item.model_name_path;
        if item.model_name_ok && item.str_of("model_name") == Some("") {
            self.ep0001(model_name_path, F, cann::VALUE_EMPTY, format!("set {model_name_path} to the model (graph) name or remove the key to dump every model"));
        }
        let p = member(&item.base, "layer");
        if !self.bad.contains(&p) && item.list_len("layer") == Some(0) {
            self.ep0001(
                &p,
                F,
                cann::VALUE_EMPTY,
                format!("list op names in {p} or remove the key to dump every op"),
            );
        }
    }

    /// `watcher_nodes`: needed by the watcher scene, which takes no `model_name`; refused in
    /// any other scene.
    fn list_item_watcher(&mut self, item: &ListItem<'_>, s: ListSettings<'_>) {
        let wp = member(&item.base, "watcher_nodes");
        if self.bad.contains(&wp) {
            return;
        }
        let model_name_path = &item.model_name_path;
        let watcher_nodes = item.list_len("watcher_nodes").unwrap_or(0);
        if s.scene_watcher {
            if watcher_nodes == 0 {
                self.ep0001(
                    &wp,
                    F,
                    cann::VALUE_EMPTY,
                    format!("list in {wp} the op(s) whose output gets overwritten (the victims)"),
                );
            }
            if item.model_name_ok && item.str_of("model_name").is_some_and(|n| !n.is_empty()) {
                let m = cann::ep0005_cannot_set_when(model_name_path, "dump_scene", "watcher");
                self.ep0005(
                    model_name_path,
                    F,
                    m,
                    format!(
                        "remove {model_name_path}: watcher items take only layer and watcher_nodes"
                    ),
                );
            }
        } else if watcher_nodes > 0 {
            let m = cann::ep0005_cannot_set_unless(&wp, "dump_scene", "watcher");
            self.ep0005(
                &wp,
                F,
                m,
                format!("add \"dump_scene\": \"watcher\" (with dump_mode output) or remove {wp}"),
            );
        }
    }

    /// An item's `key` blacklist (`optype_blacklist` or `opname_blacklist`): at most
    /// [`MAX_BLACKLIST`] entries, only with `dump_level` op, every `pos` an `input<N>` or
    /// `output<N>`.
    fn list_item_blacklist(&mut self, item: &ListItem<'_>, key: &str, s: ListSettings<'_>) {
        let p = member(&item.base, key);
        if self.bad.contains(&p) {
            return;
        }
        let Some(entries) = item.obj.get(key).and_then(Value::as_array) else {
            return;
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
            return;
        }
        if s.level.is_some_and(|l| l != "op") {
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

    /// An item's non-empty `opname_range`: only with `dump_level` op and a `model_name`, each
    /// range with both ends.
    fn list_item_opname_range(&mut self, item: &ListItem<'_>, s: ListSettings<'_>) {
        let rp = member(&item.base, "opname_range");
        if self.bad.contains(&rp) {
            return;
        }
        let Some(ranges) = item
            .obj
            .get("opname_range")
            .and_then(Value::as_array)
            .filter(|r| !r.is_empty())
        else {
            return;
        };
        if s.level.is_some_and(|l| l != "op") {
            let m = cann::ep0005_cannot_set_unless(&rp, "dump_level", "op");
            self.ep0005(
                &rp,
                F,
                m,
                format!("set \"dump_level\": \"op\" or remove {rp}"),
            );
        }
        let model_name_path = &item.model_name_path;
        if item.model_name_ok {
            match item.str_of("model_name") {
                None => self.ep0001(
                    model_name_path,
                    F,
                    cann::NOT_FOUND,
                    format!("add {model_name_path}: opname_range needs the model name"),
                ),
                Some("") => self.ep0001(
                    model_name_path,
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

    /// adump checks the `input` prefix, then the `output` prefix; a known prefix with a
    /// non-digit index is reported, and then — as both prefix checks failed — the prefix error
    /// is reported as well. npgx reports both lines, as CANN logs them.
    pub(super) fn blacklist_pos(&mut self, value: &str, path: &str) {
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
