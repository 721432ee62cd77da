//! The JSON envelope every command's document has (docs/json.md):
//! `{"schema": "npgx.<command>", "schema_version": N, …fields of that command…}`. The renderers
//! in [`crate::report`] write it; [`crate::incident`] builds one for a triage tree it analyses
//! and checks the envelope of every document it reads. Never write `schema` or
//! `schema_version` by hand.

use serde::Serialize;
use serde_json::{Map, Value};

/// What every `schema` starts with; the rest is the document's name, which each engine defines
/// beside its record and version (`crate::dump::SCHEMA_NAME` = `dump-scan`).
pub const SCHEMA_PREFIX: &str = "npgx.";

/// The JSON envelope of every command: `schema` = `npgx.<command>`, `schema_version` = `version`,
/// then the fields of `body`. A body that is not a JSON object (a list of records, say) goes under
/// the key `items`. A `schema` or `schema_version` field of the body is replaced.
pub fn document<T: Serialize + ?Sized>(
    command: &str,
    version: u32,
    body: &T,
) -> serde_json::Result<Value> {
    let mut out = Map::new();
    out.insert(
        "schema".into(),
        Value::String(format!("{SCHEMA_PREFIX}{command}")),
    );
    out.insert("schema_version".into(), Value::from(version));
    match serde_json::to_value(body)? {
        Value::Object(fields) => {
            for (k, v) in fields {
                if k != "schema" && k != "schema_version" {
                    out.insert(k, v);
                }
            }
        }
        other => {
            out.insert("items".into(), other);
        }
    }
    Ok(Value::Object(out))
}

/// The same envelope, serialised straight from the body without building a [`Value`] first —
/// for documents that grow with the input (a scan's anomalies). The body must be a struct or map
/// that does not itself serialise `schema` or `schema_version`.
#[derive(Serialize)]
pub struct Envelope<'a, T: Serialize + ?Sized> {
    schema: String,
    schema_version: u32,
    #[serde(flatten)]
    body: &'a T,
}

impl<'a, T: Serialize + ?Sized> Envelope<'a, T> {
    pub fn new(command: &str, version: u32, body: &'a T) -> Self {
        Envelope {
            schema: format!("{SCHEMA_PREFIX}{command}"),
            schema_version: version,
            body,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{document, Envelope};
    use serde_json::json;

    #[test]
    fn the_streamed_envelope_equals_the_document() {
        let body = json!({"a": [1, 2], "b": {"c": null}});
        let streamed: serde_json::Value =
            serde_json::from_str(&serde_json::to_string(&Envelope::new("z", 2, &body)).unwrap())
                .unwrap();
        assert_eq!(streamed, document("z", 2, &body).unwrap());
    }

    #[test]
    fn objects_keep_their_fields_and_lose_their_own_version() {
        let v = document("x", 3, &json!({"schema_version": 1, "a": 1})).unwrap();
        assert_eq!(v, json!({"schema": "npgx.x", "schema_version": 3, "a": 1}));
    }

    #[test]
    fn lists_go_under_items() {
        let v = document("y", 1, &json!([1, 2])).unwrap();
        assert_eq!(
            v,
            json!({"schema": "npgx.y", "schema_version": 1, "items": [1, 2]})
        );
    }
}
