//! JSON Schemas (draft 2020-12) of every document npgx writes with `--format json`, generated
//! with schemars from the very types the writers serialise (docs/json.md, `npgx schema NAME`,
//! the copies under `schemas/`).
//!
//! The model. A document is the envelope of [`crate::envelope`] — `schema` (a constant,
//! `npgx.<name>`) and `schema_version` (a constant: a schema describes one version) — around
//! the fields of one engine type, or of one of several when a command writes different bodies
//! under one name (`npgx.dump-config`: `check`, `new` and `plan`). The `npgx.dump-scan` document is streamed from the scan's records,
//! so its schema comes from the read-side view the HTML report reads it back through
//! ([`crate::scan::document::ScanDocument`], kept field for field equal to the writer by its own
//! test).
//!
//! Which fields are required. A schema serves the readers of a version, and fields added
//! within a version are optional on the reading side (`#[serde(default)]`): older documents of
//! the same version lack them. So a field is required when every writer writes it *and* every
//! reader needs it: schemars is run twice, once for what serde serialises (a field with
//! `skip_serializing_if` may be absent) and once for what it deserialises (a `default` or an
//! `Option` field may be absent), and a field stays required only where both say so. Unknown
//! fields are allowed (`additionalProperties` is left open), as docs/json.md promises readers
//! that new fields may appear.
//!
//! The output does not depend on the build: object keys are sorted, whether or not another
//! crate turned on serde_json's `preserve_order`.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::envelope::SCHEMA_PREFIX;

/// The name of the document `npgx schema --list --format json` prints.
pub const LIST_SCHEMA_NAME: &str = "schema-list";
/// Its version.
pub const LIST_SCHEMA_VERSION: u32 = 1;

/// One document kind: its name without the `npgx.` prefix, its version, what writes it, and the
/// schemas of its possible bodies (references into the generator's definitions).
struct Kind {
    name: &'static str,
    version: u32,
    written_by: &'static str,
    bodies: fn(&mut SchemaGenerator) -> Vec<Schema>,
}

fn body<T: JsonSchema + ?Sized>(g: &mut SchemaGenerator) -> Schema {
    g.subschema_for::<T>()
}

/// Every document npgx writes, in the order `--list` shows them.
fn kinds() -> Vec<Kind> {
    use crate::{compare, config, incident, plog, repro, scan, triage};
    let mut kinds = vec![
        Kind {
            name: scan::SCHEMA_NAME,
            version: scan::SCHEMA_VERSION,
            written_by: "npgx dump-scan --format json",
            bodies: |g| vec![body::<scan::document::ScanDocument>(g)],
        },
        Kind {
            name: compare::SCHEMA_NAME,
            version: compare::SCHEMA_VERSION,
            written_by: "npgx dump-compare --format json",
            bodies: |g| vec![body::<compare::records::CompareDocument<'static>>(g)],
        },
        Kind {
            name: compare::convert::SCHEMA_NAME,
            version: compare::convert::SCHEMA_VERSION,
            written_by: "npgx dump-convert --format json",
            bodies: |g| vec![body::<compare::convert::ConvertReport>(g)],
        },
        Kind {
            name: config::SCHEMA_NAME,
            version: config::SCHEMA_VERSION,
            written_by: "npgx dump-config check|new|plan --format json",
            bodies: |g| {
                vec![
                    body::<config::CheckReport>(g),
                    body::<config::NewConfig>(g),
                    body::<config::plan::Plan>(g),
                ]
            },
        },
        Kind {
            name: plog::summary::SCHEMA_NAME,
            version: plog::summary::SCHEMA_VERSION,
            written_by: "npgx plog --format json",
            bodies: |g| vec![body::<plog::PlogSummary>(g)],
        },
        Kind {
            name: plog::summary::RECORDS_SCHEMA_NAME,
            version: plog::summary::RECORDS_SCHEMA_VERSION,
            written_by: "npgx plog --records --format json",
            bodies: |g| vec![body::<plog::summary::RecordsDocument>(g)],
        },
        Kind {
            name: plog::aicore::SCHEMA_NAME,
            version: plog::aicore::SCHEMA_VERSION,
            written_by: "npgx aicore --format json",
            bodies: |g| vec![body::<plog::aicore::AicoreDocument<'static>>(g)],
        },
        Kind {
            name: repro::case::SCHEMA_NAME,
            version: repro::case::SCHEMA_VERSION,
            written_by: "npgx repro --format json, and the case directory's case.json",
            bodies: |g| vec![body::<repro::Case>(g)],
        },
        Kind {
            name: repro::anomaly::SCHEMA_NAME,
            version: repro::anomaly::SCHEMA_VERSION,
            written_by: "npgx repro --from-scan --format json, and its case directory's case.json",
            bodies: |g| vec![body::<repro::anomaly::AnomalyRepro>(g)],
        },
        Kind {
            name: triage::RUN_SCHEMA_NAME,
            version: triage::RUN_SCHEMA_VERSION,
            written_by: "npgx triage run|bisect --format json",
            bodies: |g| vec![body::<triage::TriageRun>(g)],
        },
        Kind {
            name: triage::analyze::SCHEMA_NAME,
            version: triage::analyze::SCHEMA_VERSION,
            written_by: "npgx triage analyze --format json",
            bodies: |g| vec![body::<triage::analyze::TriageAnalysis>(g)],
        },
        Kind {
            name: triage::classify::SCHEMA_NAME,
            version: triage::classify::SCHEMA_VERSION,
            written_by: "npgx triage classify --format json",
            bodies: |g| vec![body::<triage::classify::ClassifyDocument<'static>>(g)],
        },
        Kind {
            name: triage::nodes::SCHEMA_NAME,
            version: triage::nodes::SCHEMA_VERSION,
            written_by: "npgx triage bisect --nodes: bisect/nodes.json in the triage tree",
            bodies: |g| vec![body::<triage::nodes::NodeSearch>(g)],
        },
        Kind {
            name: incident::REPORT_SCHEMA_NAME,
            version: incident::REPORT_SCHEMA_VERSION,
            written_by: "npgx report --format json",
            bodies: |g| vec![body::<incident::Written<'static>>(g)],
        },
    ];
    #[cfg(feature = "tables")]
    kinds.push(Kind {
        name: crate::merge::SCHEMA_NAME,
        version: crate::merge::SCHEMA_VERSION,
        written_by: "npgx merge --format json",
        bodies: |g| vec![body::<crate::merge::MergeReport>(g)],
    });
    kinds.push(Kind {
        name: LIST_SCHEMA_NAME,
        version: LIST_SCHEMA_VERSION,
        written_by: "npgx schema --list --format json",
        bodies: |g| vec![body::<Listing>(g)],
    });
    kinds
}

/// Every document's full name (`npgx.dump-scan`) and version.
pub fn list() -> Vec<(String, u32)> {
    kinds()
        .into_iter()
        .map(|k| (format!("{SCHEMA_PREFIX}{}", k.name), k.version))
        .collect()
}

/// The `npgx schema --list --format json` document: every schema npgx can print.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listing {
    pub schemas: Vec<Listed>,
}

/// One entry of [`Listing`].
#[derive(Debug, Serialize, JsonSchema)]
pub struct Listed {
    /// The document's `schema` (`npgx.dump-scan`), the argument of `npgx schema NAME`.
    pub name: String,
    /// Its `schema_version`, the only one this npgx writes.
    pub version: u32,
    /// The commands (or files) that write it.
    pub written_by: &'static str,
}

/// What `npgx schema --list` reports.
pub fn listing() -> Listing {
    Listing {
        schemas: kinds()
            .into_iter()
            .map(|k| Listed {
                name: format!("{SCHEMA_PREFIX}{}", k.name),
                version: k.version,
                written_by: k.written_by,
            })
            .collect(),
    }
}

/// The JSON Schema of the document named `name` (`npgx.dump-scan`; the bare `dump-scan` is
/// accepted too), or `None` when npgx writes no such document.
pub fn document_schema(name: &str) -> Option<Value> {
    let bare = name.strip_prefix(SCHEMA_PREFIX).unwrap_or(name);
    let kind = kinds().into_iter().find(|k| k.name == bare)?;
    let written = generate(&kind, SchemaSettings::draft2020_12().for_serialize());
    let read = generate(&kind, SchemaSettings::draft2020_12().for_deserialize());
    let mut schema = written;
    keep_required_in_both(&mut schema, &read);
    Some(sorted(schema))
}

/// One contract's schema of `kind`: the envelope's two constants, the body (or the bodies,
/// any of which may be the document's) and their definitions.
fn generate(kind: &Kind, settings: SchemaSettings) -> Value {
    let mut g = settings.into_generator();
    let bodies: Vec<Value> = (kind.bodies)(&mut g)
        .into_iter()
        .map(Schema::to_value)
        .collect();
    let full = format!("{SCHEMA_PREFIX}{}", kind.name);
    let mut root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": full,
        "description": format!(
            "The `{full}` document, version {}, written by `{}` (docs/json.md).",
            kind.version, kind.written_by
        ),
        "type": "object",
        "properties": {
            "schema": { "const": full },
            "schema_version": { "const": kind.version },
        },
        "required": ["schema", "schema_version"],
    });
    let combined = if bodies.len() == 1 { "allOf" } else { "anyOf" };
    root[combined] = Value::Array(bodies);
    root["$defs"] = Value::Object(g.take_definitions(true));
    root
}

/// Narrows every `required` list of `written` (the serialising contract's schema) to the names
/// the deserialising contract's schema `read` also requires at the same place. The two are
/// generated from the same types in the same order, so their trees match but for `required`;
/// where `read` has no counterpart the list is kept.
fn keep_required_in_both(written: &mut Value, read: &Value) {
    match (written, read) {
        (Value::Object(w), Value::Object(r)) => {
            for (key, value) in w.iter_mut() {
                // (A `required` that is not a list is a property of that name.)
                if let ("required", Value::Array(names)) = (key.as_str(), &mut *value) {
                    let in_read: Vec<&Value> = match r.get("required") {
                        Some(Value::Array(names)) => names.iter().collect(),
                        _ => Vec::new(),
                    };
                    names.retain(|n| in_read.contains(&n));
                } else if let Some(other) = r.get(key) {
                    keep_required_in_both(value, other);
                }
            }
            if w.get("required")
                .and_then(Value::as_array)
                .is_some_and(Vec::is_empty)
            {
                w.remove("required");
            }
        }
        (Value::Array(w), Value::Array(r)) => {
            for (a, b) in w.iter_mut().zip(r) {
                keep_required_in_both(a, b);
            }
        }
        _ => {}
    }
}

/// `value` with the keys of every object in sorted order.
fn sorted(value: Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(String, Value)> = map.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, sorted(v)))
                    .collect::<Map<_, _>>(),
            )
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::{document_schema, keep_required_in_both, list};
    use serde_json::json;

    #[test]
    fn every_listed_document_has_a_schema_with_its_envelope() {
        let names = list();
        assert!(names.len() >= 13, "{names:?}");
        for (name, version) in names {
            let s = document_schema(&name).expect(&name);
            assert_eq!(s["properties"]["schema"]["const"], json!(name));
            assert_eq!(s["properties"]["schema_version"]["const"], json!(version));
            assert_eq!(s["required"], json!(["schema", "schema_version"]));
            assert_eq!(
                s["$schema"],
                json!("https://json-schema.org/draft/2020-12/schema")
            );
        }
        assert!(document_schema("npgx.nothing").is_none());
        assert_eq!(
            document_schema("dump-scan"),
            document_schema("npgx.dump-scan")
        );
    }

    #[test]
    fn a_field_stays_required_only_where_both_contracts_require_it() {
        let mut written = json!({
            "required": ["a", "b", "c"],
            "properties": {"x": {"required": ["d"]}, "y": {"required": ["e"]}},
            "anyOf": [{"required": ["f", "g"]}],
        });
        let read = json!({
            "required": ["a", "c", "z"],
            "properties": {"x": {"type": "object"}},
            "anyOf": [{"required": ["g"]}],
        });
        keep_required_in_both(&mut written, &read);
        assert_eq!(
            written,
            json!({
                "required": ["a", "c"],
                "properties": {"x": {}, "y": {"required": ["e"]}},
                "anyOf": [{"required": ["g"]}],
            })
        );
    }
}
