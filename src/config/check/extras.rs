//! npgx's own warnings, after CANN's rules: keys adump ignores (typos, most likely).

use serde_json::{Map, Value};

use super::{closest, index, member, Checker, KNOWN_ITEM_KEYS, KNOWN_KEYS};
use crate::config::{Problem, Severity, Source};

impl Checker<'_> {
    pub(super) fn unknown_keys(&mut self) {
        let mut found = Vec::new();
        for key in self.dump.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                found.push((key.clone(), closest(key, KNOWN_KEYS)));
            }
        }
        // Keys of an object in the dump_list tree that CANN does not read.
        let mut unknown_in = |obj: &Value, base: &str, known: &[&'static str]| {
            for key in obj.as_object().into_iter().flat_map(Map::keys) {
                if !known.contains(&key.as_str()) {
                    found.push((member(base, key), closest(key, known)));
                }
            }
        };
        if let Some(Value::Array(items)) = self.dump.get("dump_list") {
            for (i, item) in items.iter().enumerate() {
                let base = index("dump_list", i);
                unknown_in(item, &base, KNOWN_ITEM_KEYS);
                for (key, known) in [
                    ("optype_blacklist", &["name", "pos"][..]),
                    ("opname_blacklist", &["name", "pos"][..]),
                    ("opname_range", &["begin", "end"][..]),
                ] {
                    let p = member(&base, key);
                    for (j, entry) in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        unknown_in(entry, &index(&p, j), known);
                    }
                }
            }
        }
        for (path, suggestion) in found {
            let fix = match suggestion {
                Some(s) => format!("did you mean \"{s}\"? rename the key"),
                None => "remove it or check the spelling against the acl.json documentation".into(),
            };
            self.problems.push(Problem {
                severity: Severity::Warning,
                source: Source::Npgx,
                code: "unknown-key".into(),
                message: format!("{path} is not a dump configuration key; CANN ignores it"),
                path,
                function: None,
                fix,
                line: None,
                column: None,
            });
        }
    }
}
