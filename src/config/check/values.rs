//! Step 2 of the validator: enumeration values (EP0001 when empty, EP0002 when not one of the
//! allowed values).

use serde_json::Value;

use super::{
    closest, index, Checker, Val, DUMP_DATA, DUMP_LEVELS, DUMP_MODES, DUMP_SCENES, DUMP_STATS,
    KERNEL_DATA, SWITCH,
};
use crate::config::cann::{self, Code};

impl Checker<'_> {
    pub(super) fn field_values(&mut self) {
        for (key, allowed) in [
            ("dump_mode", DUMP_MODES),
            ("dump_data", DUMP_DATA),
            ("dump_op_switch", SWITCH),
            ("dump_level", DUMP_LEVELS),
            ("dump_debug", SWITCH),
            ("dump_scene", DUMP_SCENES),
        ] {
            if let Val::Str(v) = self.val(key) {
                self.enum_value(key, key, v, allowed);
            }
        }
        if let Val::Str(v) = self.val("dump_kernel_data") {
            // adump splits on ',' and checks each item, reporting under the key itself.
            for item in v.split(',') {
                self.enum_value("dump_kernel_data", "dump_kernel_data", item, KERNEL_DATA);
            }
        }
        if !self.bad.contains("dump_stats") {
            if let Some(Value::Array(stats)) = self.dump.get("dump_stats") {
                for (i, s) in stats.iter().enumerate() {
                    if let Some(s) = s.as_str() {
                        let path = index("dump_stats", i);
                        if !self.enum_value("dump_stats", &path, s, DUMP_STATS) {
                            self.bad.insert("dump_stats".into());
                        }
                    }
                }
            }
        }
    }

    /// adump `IsValueValid`: empty ⇒ EP0001, not allowed ⇒ EP0002.
    pub(super) fn enum_value(
        &mut self,
        key: &str,
        path: &str,
        value: &str,
        allowed: &[&str],
    ) -> bool {
        if value.is_empty() {
            let fix = format!("set {path} to one of {} or remove it", allowed.join(", "));
            self.ep0001(path, "CheckItemValue", cann::VALUE_EMPTY, fix);
            self.bad.insert(key.to_string());
            return false;
        }
        if allowed.contains(&value) {
            return true;
        }
        let message = cann::ep0002(value, path, self.file, allowed);
        let fix = match closest(value, allowed) {
            Some(s) => format!(
                "replace \"{value}\" with \"{s}\" (allowed: {})",
                allowed.join(", ")
            ),
            None => format!("use one of: {}", allowed.join(", ")),
        };
        self.report(Code::EP0002, path, "CheckItemValue", message, fix);
        self.bad.insert(key.to_string());
        self.bad.insert(path.to_string());
        false
    }
}
