//! The JSON envelope every command's document has (docs/json.md):
//! `{"schema": "npgx.<command>", "schema_version": N, …fields of that command…}`. The renderers
//! in [`crate::report`] write it; [`crate::incident`] builds one for a triage tree it analyses.
//! Never write `schema` or `schema_version` by hand.
//!
//! Every reader of a saved document goes through [`read`] (or [`check`] for a document already
//! in hand): `npgx report` and `--html`, `dump-config plan`, `repro --fx-node` and
//! `--from-scan`. It refuses another tool's JSON, another npgx document and a version newer
//! than the reader knows, with the file, the schema found and the schemas expected in the
//! message; the reader then reads the fields through the document's typed view.

use std::path::Path;

use anyhow::Context as _;
use serde::Serialize;
use serde_json::{Map, Value};

/// What every `schema` starts with; the rest is the document's name, which each engine defines
/// beside its record and version (`crate::scan::SCHEMA_NAME` = `dump-scan`).
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

/// Who reads saved documents, and which: each document's name (`dump-scan`) with the newest
/// `schema_version` the reader knows (versions 1 up to it are read).
#[derive(Debug, Clone, Copy)]
pub struct Readers<'a> {
    /// The reader as its errors name it, with its verb: `npgx report renders`.
    pub reader: &'a str,
    /// What it reads, as the error for a file that is not JSON says: `an npgx JSON document`.
    pub what: &'a str,
    pub documents: &'a [(&'a str, u32)],
}

impl Readers<'_> {
    /// `npgx.dump-scan v2, npgx.plog v2`.
    fn expected(&self) -> String {
        self.documents
            .iter()
            .map(|(s, v)| format!("{SCHEMA_PREFIX}{s} v{v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Reads the npgx JSON document at `path` and [`check`]s its envelope; returns the document and
/// its name (one of `readers.documents`).
pub fn read<'a>(path: &Path, readers: &Readers<'a>) -> anyhow::Result<(Value, &'a str)> {
    let source = path.display();
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {source}"))?;
    let doc: Value = serde_json::from_reader(std::io::BufReader::new(file)).map_err(|e| {
        anyhow::anyhow!(
            "{source}: not a JSON document ({e}); expected {} ({})",
            readers.what,
            readers.expected()
        )
    })?;
    let name = check(&source.to_string(), &doc, readers)?;
    Ok((doc, name))
}

/// Checks the envelope of `doc` (from `source`, a file or a command): a `schema` the reader
/// reads, and a `schema_version` from 1 up to the newest it knows. Returns the document's name.
pub fn check<'a>(source: &str, doc: &Value, readers: &Readers<'a>) -> anyhow::Result<&'a str> {
    let Some(schema) = doc.get("schema").and_then(Value::as_str) else {
        anyhow::bail!(
            "{source}: not an npgx JSON document (no \"schema\" field); expected one of {}",
            readers.expected()
        );
    };
    let bare = schema.strip_prefix(SCHEMA_PREFIX);
    let Some(&(name, newest)) = readers.documents.iter().find(|(s, _)| Some(*s) == bare) else {
        anyhow::bail!(
            "{source}: schema {schema:?} is not one {}; expected one of {}",
            readers.reader,
            readers.expected()
        );
    };
    match doc.get("schema_version").and_then(Value::as_u64) {
        Some(v) if (1..=u64::from(newest)).contains(&v) => Ok(name),
        Some(v) => anyhow::bail!(
            "{source}: {schema} schema_version {v} is not one this npgx reads (expected {schema} v{newest}); use the npgx that wrote it"
        ),
        None => anyhow::bail!(
            "{source}: {schema} without an integer schema_version (expected {schema} v{newest})"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::{check, document, read, Envelope, Readers};
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

    const READERS: Readers<'static> = Readers {
        reader: "the test reads",
        what: "an npgx JSON document",
        documents: &[("a", 2), ("b", 1)],
    };

    #[test]
    fn check_names_the_source_the_schema_found_and_the_ones_expected() {
        let ok = json!({"schema": "npgx.a", "schema_version": 1});
        assert_eq!(check("f.json", &ok, &READERS).unwrap(), "a");
        let newest = json!({"schema": "npgx.b", "schema_version": 1});
        assert_eq!(check("f.json", &newest, &READERS).unwrap(), "b");
        let cases = [
            (
                json!({"x": 1}),
                "f.json: not an npgx JSON document (no \"schema\" field); expected one of npgx.a v2, npgx.b v1",
            ),
            (
                json!({"schema": "npgx.c", "schema_version": 1}),
                "f.json: schema \"npgx.c\" is not one the test reads; expected one of npgx.a v2, npgx.b v1",
            ),
            (
                json!({"schema": "npgx.a", "schema_version": 3}),
                "f.json: npgx.a schema_version 3 is not one this npgx reads (expected npgx.a v2); use the npgx that wrote it",
            ),
            (
                json!({"schema": "npgx.a", "schema_version": 0}),
                "f.json: npgx.a schema_version 0 is not one this npgx reads (expected npgx.a v2); use the npgx that wrote it",
            ),
            (
                json!({"schema": "npgx.b", "schema_version": "1"}),
                "f.json: npgx.b without an integer schema_version (expected npgx.b v1)",
            ),
        ];
        for (doc, message) in cases {
            assert_eq!(
                check("f.json", &doc, &READERS).unwrap_err().to_string(),
                message
            );
        }
    }

    #[test]
    fn read_names_a_file_that_is_not_json() {
        let dir = std::env::temp_dir().join(format!("npgx-envelope-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let bad = dir.join("notes.txt");
        std::fs::write(&bad, "hello").unwrap();
        let e = read(&bad, &READERS).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: not a JSON document (", bad.display())),
            "{e}"
        );
        assert!(
            e.ends_with("expected an npgx JSON document (npgx.a v2, npgx.b v1)"),
            "{e}"
        );
        let good = dir.join("a.json");
        std::fs::write(
            &good,
            r#"{"schema": "npgx.a", "schema_version": 2, "k": 1}"#,
        )
        .unwrap();
        let (doc, name) = read(&good, &READERS).unwrap();
        assert_eq!((doc["k"].as_u64(), name), (Some(1), "a"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
