//! Step 3 of the validator: the scene rules, `dump_debug`, `dump_step` and `dump_stats`
//! (EP0001/EP0003/EP0005); `dump_path` and `dump_list` have files of their own.

use serde_json::Value;

use super::{index, Checker, Val, DUMP_STATS, MAX_STEP_INTERVALS};
use crate::config::cann;

impl Checker<'_> {
    pub(super) fn constraints(&mut self) {
        let scene = self.val("dump_scene");
        match scene {
            Val::Bad => {
                self.notes.push(
                    "dump_scene is invalid, so the rules that depend on it (scene conflicts, dump_path, dump_debug, dump_step, dump_list, dump_stats) were not checked".into(),
                );
                return;
            }
            Val::Str("watcher") => self.watcher_scene(),
            Val::Str(exception) => {
                self.exception_scene(exception);
                self.notes.push(format!(
                    "dump_scene is {exception}: like CANN, npgx skips the dump_path, dump_debug, dump_step, dump_list and dump_stats checks (dump_path is optional; ASCEND_DUMP_PATH, then ASCEND_WORK_PATH, override it)"
                ));
                return;
            }
            Val::Absent => {}
        }
        self.dump_path();
        match self.val("dump_debug") {
            Val::Str("on") => {
                self.dump_debug_on();
                self.notes.push(
                    "dump_debug is on: like CANN, npgx skips the dump_step, dump_list and dump_stats checks (CANN forces dump_mode all for overflow dumps)".into(),
                );
                return;
            }
            Val::Bad => {
                self.notes.push(
                    "dump_debug is invalid, so the dump_step, dump_list and dump_stats checks (which CANN skips when dump_debug is on) were not run".into(),
                );
                return;
            }
            _ => {}
        }
        self.dump_step();
        self.dump_list();
        self.dump_stats();
    }

    pub(super) fn watcher_scene(&mut self) {
        const F: &str = "CheckWatcherDumpScene";
        for key in ["dump_debug", "dump_op_switch"] {
            if self.is(key, "on") {
                let m = cann::ep0005_value_conflict(key, "on", "dump_scene", "watcher");
                self.ep0005(key, F, m, format!("remove {key} (or set it to off): the watcher scene cannot be combined with it"));
            }
        }
        match self.val("dump_mode") {
            Val::Str(mode) if mode != "output" => {
                let m = cann::ep0005_value_conflict("dump_mode", mode, "dump_scene", "watcher");
                self.ep0005(
                    "dump_mode",
                    F,
                    m,
                    "set dump_mode to \"output\" (or remove it: output is the default)".into(),
                );
            }
            _ => {}
        }
        for key in [
            "dump_level",
            "dump_data",
            "dump_kernel_data",
            "dump_step",
            "dump_stats",
        ] {
            if self.dump.contains_key(key) {
                let m = cann::ep0005_cannot_set_when(key, "dump_scene", "watcher");
                self.ep0005(
                    key,
                    F,
                    m,
                    format!("remove {key}: the watcher scene does not take it"),
                );
            }
        }
    }

    pub(super) fn exception_scene(&mut self, scene: &str) {
        for key in [
            "dump_mode",
            "dump_level",
            "dump_data",
            "dump_debug",
            "dump_op_switch",
            "dump_kernel_data",
            "dump_step",
            "dump_stats",
            "dump_list",
        ] {
            if self.dump.contains_key(key) {
                let m = cann::ep0005_cannot_set_when(key, "dump_scene", scene);
                self.ep0005(
                    key,
                    "CheckExceptionDumpScene",
                    m,
                    format!("remove {key}: exception scenes take only dump_scene and, optionally, dump_path"),
                );
            }
        }
    }

    pub(super) fn dump_debug_on(&mut self) {
        const F: &str = "CheckDumpDebug";
        if self.is("dump_op_switch", "on") {
            let m = cann::ep0005_value_conflict("dump_op_switch", "on", "dump_debug", "on");
            self.ep0005(
                "dump_op_switch",
                F,
                m,
                "remove dump_op_switch (overflow detection covers single ops too) or turn dump_debug off".into(),
            );
        }
        if self.dump.contains_key("dump_list") {
            let m = cann::ep0005_cannot_set_when("dump_list", "dump_debug", "on");
            self.ep0005(
                "dump_list",
                F,
                m,
                "remove the dump_list key entirely (even an empty list is rejected) for an overflow dump".into(),
            );
        }
    }

    pub(super) fn dump_step(&mut self) {
        const F: &str = "CheckDumpStep";
        let Val::Str(step) = self.val("dump_step") else {
            return;
        };
        if step.is_empty() {
            return;
        }
        // std::getline splitting plus adump's extra empty item after a trailing delimiter is
        // exactly Rust's `split`.
        let groups: Vec<&str> = step.split('|').collect();
        if groups.len() > MAX_STEP_INTERVALS {
            self.ep0003(
                step,
                "dump_step",
                F,
                cann::STEP_TOO_MANY,
                format!("use at most 100 '|'-separated items (there are {}); merge consecutive steps into ranges like 5-10", groups.len()),
            );
            return;
        }
        for (i, group) in groups.iter().enumerate() {
            let path = index("dump_step", i);
            let parts: Vec<&str> = group.split('-').collect();
            if parts.len() > 2 {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_INVALID_FORMAT,
                    format!("write item {i} (\"{group}\") as one step N or one range A-B"),
                );
                continue;
            }
            if !parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_NOT_DIGIT,
                    format!("write item {i} (\"{group}\") with digits only, e.g. 3 or 5-10 (no spaces, no empty items)"),
                );
                continue;
            }
            // strtol saturates on overflow.
            let num = |s: &str| s.parse::<i64>().unwrap_or(i64::MAX);
            if num(parts[0]) > num(parts[parts.len() - 1]) {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_INVALID_RANGE,
                    format!("swap the ends: {}-{}", parts[1], parts[0]),
                );
            }
        }
    }

    pub(super) fn dump_stats(&mut self) {
        const F: &str = "CheckDumpStats";
        if self.bad.contains("dump_stats") {
            return;
        }
        let Some(Value::Array(stats)) = self.dump.get("dump_stats") else {
            return;
        };
        if stats.is_empty() {
            self.ep0001(
                "dump_stats",
                F,
                cann::VALUE_EMPTY,
                format!("list the statistics to dump, e.g. [\"{}\"], or remove dump_stats (the default is the first six)", DUMP_STATS[..6].join("\", \"")),
            );
            return;
        }
        match self.val("dump_data") {
            Val::Absent | Val::Str("tensor") => {
                let m = cann::ep0005_cannot_set_when("dump_stats", "dump_data", "tensor");
                let fix = if self.dump.contains_key("dump_data") {
                    "set \"dump_data\": \"stats\" (dump_stats only applies to statistics dumps) or remove dump_stats"
                } else {
                    "add \"dump_data\": \"stats\" (the default is tensor) or remove dump_stats"
                };
                self.ep0005("dump_stats", F, m, fix.into());
            }
            _ => {}
        }
    }
}
