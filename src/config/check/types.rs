//! Step 1 of the validator: every field has the JSON type adump reads it as (EP0001).

use serde_json::{Map, Value};

use super::{example, index, json_kind, leaf, member, Checker};
use crate::config::cann;

impl Checker<'_> {
    pub(super) fn field_types(&mut self) {
        for key in [
            "dump_path",
            "dump_mode",
            "dump_op_switch",
            "dump_level",
            "dump_scene",
            "dump_data",
            "dump_debug",
            "dump_kernel_data",
            "dump_step",
        ] {
            self.string_field(self.dump, key, "");
        }
        if let Some(stats) = self.dump.get("dump_stats") {
            self.array_of(stats, "dump_stats", true);
        }
        if let Some(list) = self.dump.get("dump_list") {
            let Some(items) = list.as_array() else {
                self.ep0001(
                    "dump_list",
                    "CheckDumpListFieldTypes",
                    cann::MUST_BE_ARRAY,
                    "make dump_list an array of objects: \"dump_list\": [{\"model_name\": \"…\"}]"
                        .into(),
                );
                return;
            };
            for (i, item) in items.iter().enumerate() {
                let path = index("dump_list", i);
                let Some(obj) = item.as_object() else {
                    self.ep0001(
                        &path,
                        "CheckDumpListFieldTypes",
                        cann::MUST_BE_OBJECT,
                        format!("make {path} an object such as {{\"model_name\": \"…\", \"layer\": [\"…\"]}}"),
                    );
                    continue;
                };
                self.string_field(obj, "model_name", &path);
                for key in ["layer", "watcher_nodes"] {
                    if let Some(v) = obj.get(key) {
                        self.array_of(v, &member(&path, key), true);
                    }
                }
                for key in ["optype_blacklist", "opname_blacklist"] {
                    if let Some(v) = obj.get(key) {
                        let p = member(&path, key);
                        if self.array_of(v, &p, false) {
                            for (j, entry) in v.as_array().into_iter().flatten().enumerate() {
                                let ep = index(&p, j);
                                if let Some(e) = entry.as_object() {
                                    self.string_field(e, "name", &ep);
                                    if let Some(pos) = e.get("pos") {
                                        self.array_of(pos, &member(&ep, "pos"), true);
                                    }
                                }
                            }
                        }
                    }
                }
                if let Some(v) = obj.get("opname_range") {
                    let p = member(&path, "opname_range");
                    if self.array_of(v, &p, false) {
                        for (j, entry) in v.as_array().into_iter().flatten().enumerate() {
                            if let Some(e) = entry.as_object() {
                                let ep = index(&p, j);
                                self.string_field(e, "begin", &ep);
                                self.string_field(e, "end", &ep);
                            }
                        }
                    }
                }
            }
        }
    }

    /// adump `CheckStringField`: present ⇒ string.
    pub(super) fn string_field(&mut self, obj: &Map<String, Value>, key: &str, base: &str) {
        match obj.get(key) {
            None | Some(Value::String(_)) => {}
            Some(other) => {
                let path = member(base, key);
                let fix = format!(
                    "write {path} as a JSON string, e.g. \"{key}\": \"{}\" (it is {})",
                    example(key),
                    json_kind(other)
                );
                self.ep0001(&path, "CheckFieldValue", cann::MUST_BE_STRING, fix);
            }
        }
    }

    /// adump `CheckArrayOfType`: an array whose members are all strings (or all objects).
    /// Returns whether the container itself is an array.
    pub(super) fn array_of(&mut self, v: &Value, path: &str, strings: bool) -> bool {
        let Some(items) = v.as_array() else {
            let fix = if strings {
                format!(
                    "make {path} an array of strings, e.g. [\"{}\"] (it is {})",
                    example(leaf(path)),
                    json_kind(v)
                )
            } else {
                format!("make {path} an array of objects (it is {})", json_kind(v))
            };
            self.ep0001(path, "CheckArrayOfType", cann::MUST_BE_ARRAY, fix);
            return false;
        };
        for (i, item) in items.iter().enumerate() {
            let ok = if strings {
                item.is_string()
            } else {
                item.is_object()
            };
            if !ok {
                let p = index(path, i);
                let (reason, fix) = if strings {
                    (
                        cann::MEMBER_MUST_BE_STRING,
                        format!(
                            "quote {p}: every member of {path} must be a string (it is {})",
                            json_kind(item)
                        ),
                    )
                } else {
                    (
                        cann::MEMBER_MUST_BE_OBJECT,
                        format!("make {p} an object (it is {})", json_kind(item)),
                    )
                };
                self.ep0001(&p, "CheckArrayOfType", reason, fix);
                // The container is unusable for the later rules too.
                self.bad.insert(path.to_string());
            }
        }
        true
    }
}
