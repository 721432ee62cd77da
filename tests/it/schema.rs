//! `npgx schema`: the committed copies under `schemas/` are what the binary generates, the list
//! names every document, and the independent validator (`scripts/validate_json.py`, Python's
//! `jsonschema`) rejects a document that lacks a required field.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common::{npgx, npgx_json, repo};

fn schemas_dir() -> PathBuf {
    repo().join("schemas")
}

fn listed() -> Vec<(String, u64)> {
    let v = npgx_json(["schema", "--list", "--format", "json"], 0);
    assert_eq!(v["schema"], "npgx.schema-list");
    v["schemas"]
        .as_array()
        .expect("schemas[]")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().expect("name").to_string(),
                s["version"].as_u64().expect("version"),
            )
        })
        .collect()
}

/// Each committed schema equals what `npgx schema NAME` prints, byte for byte; with
/// `NPGX_BLESS=1` the test writes them instead. No file is left for a document npgx no longer
/// writes.
#[test]
fn committed_schemas_are_the_generated_ones() {
    let bless = std::env::var_os("NPGX_BLESS").is_some_and(|v| v == "1");
    let mut stale = Vec::new();
    let names = listed();
    for (name, version) in &names {
        let out = npgx(["schema", name]);
        assert_eq!(out.status.code(), Some(0), "npgx schema {name}");
        let generated = String::from_utf8(out.stdout).expect("utf-8 schema");
        let parsed: Value = serde_json::from_str(&generated).expect("a schema is JSON");
        assert_eq!(parsed["properties"]["schema_version"]["const"], *version);
        let path = schemas_dir().join(format!("{name}.schema.json"));
        if bless {
            std::fs::create_dir_all(schemas_dir()).expect("create schemas/");
            std::fs::write(&path, &generated).expect("write a schema");
        } else if std::fs::read_to_string(&path).ok().as_deref() != Some(generated.as_str()) {
            stale.push(name.clone());
        }
    }
    assert!(
        stale.is_empty(),
        "schemas/ differs from the generated schemas of {stale:?}: regenerate them with \
         `NPGX_BLESS=1 cargo test --test it schema::` (or `npgx schema NAME > \
         schemas/NAME.schema.json`) and review the diff"
    );
    let files: Vec<String> = std::fs::read_dir(schemas_dir())
        .expect("schemas/")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    for file in &files {
        let name = file
            .strip_suffix(".schema.json")
            .unwrap_or_else(|| panic!("schemas/{file} is not a <name>.schema.json"));
        // A lean build (no `tables` feature) has no `npgx merge`, but its schema stays.
        let lean_lacks = cfg!(not(feature = "tables")) && name == "npgx.merge";
        assert!(
            lean_lacks || names.iter().any(|(n, _)| n == name),
            "schemas/{file}: npgx writes no document {name}; remove the file"
        );
    }
}

/// The list names every document the commands write, with the version each writes.
#[test]
fn the_list_names_every_document_with_its_version() {
    let names = listed();
    for (name, version) in [
        ("npgx.dump-scan", 2),
        ("npgx.dump-compare", 1),
        ("npgx.dump-convert", 1),
        ("npgx.dump-config", 2),
        ("npgx.plog", 2),
        ("npgx.plog-records", 1),
        ("npgx.aicore", 1),
        ("npgx.repro", 1),
        ("npgx.triage-run", 2),
        ("npgx.triage-analyze", 1),
        ("npgx.triage-classify", 3),
        ("npgx.triage-nodes", 1),
        ("npgx.report", 1),
        ("npgx.merge", 1),
        ("npgx.schema-list", 1),
    ] {
        if cfg!(not(feature = "tables")) && name == "npgx.merge" {
            continue;
        }
        assert!(
            names.contains(&(name.to_string(), version)),
            "{name} v{version} not in {names:?}"
        );
    }
    let out = npgx(["schema", "--list"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(text.lines().count(), names.len(), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("npgx.dump-scan ") && l.contains(" v2 ")),
        "{text}"
    );
}

/// An unknown name is a usage error that lists the names; no name lists them; a bare name works as
/// the full one.
#[test]
fn an_unknown_name_exits_2_with_the_list() {
    let out = npgx(["schema", "npgx.nothing"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"npgx.nothing\""), "{err}");
    assert!(err.contains("npgx.dump-scan"), "{err}");
    assert!(err.contains("npgx.triage-run"), "{err}");
    // No name at all lists them, as the help says.
    let bare = npgx(["schema"]);
    assert_eq!(bare.status.code(), Some(0));
    assert_eq!(bare.stdout, npgx(["schema", "--list"]).stdout);
    assert_eq!(
        npgx(["schema", "dump-scan"]).stdout,
        npgx(["schema", "npgx.dump-scan"]).stdout
    );
}

/// Runs the validator on `files`; returns (exit code, stdout + stderr).
fn validate(files: &[&Path]) -> (i32, String) {
    let o = Command::new(crate::common::test_python())
        .arg(repo().join("scripts/validate_json.py"))
        .args(files)
        .output()
        .expect("python runs scripts/validate_json.py");
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// The validator itself: a real document passes, the same document without a required field
/// (at the top and deep inside) or with an unknown schema name fails, and so does an empty
/// corpus.
#[test]
#[ignore = "needs Python with jsonschema (NPGX_PYTHON); scripts/test.sh installs it and runs this"]
fn the_validator_rejects_a_document_missing_a_required_field() {
    let dir = repo().join("target/test-schema");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let doc = npgx_json(
        [
            "dump-scan",
            repo()
                .join("testdata/dump-example")
                .to_str()
                .expect("utf-8"),
            "--format",
            "json",
        ],
        1,
    );
    let write = |name: &str, v: &Value| {
        let p = dir.join(name);
        std::fs::write(&p, serde_json::to_vec_pretty(v).expect("json")).expect("write");
        p
    };
    let good = write("good.json", &doc);
    let (code, out) = validate(&[&good]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("1  npgx.dump-scan"), "{out}");

    let mut top = doc.clone();
    top.as_object_mut().expect("object").remove("summary");
    let top = write("no-summary.json", &top);
    let (code, out) = validate(&[&top]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("'summary' is a required property"), "{out}");

    let mut deep = doc.clone();
    deep["anomalies"][0]
        .as_object_mut()
        .expect("an anomaly")
        .remove("op_name");
    let deep = write("no-op-name.json", &deep);
    let (code, out) = validate(&[&deep]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("/anomalies/0"), "{out}");

    let mut unknown = doc.clone();
    unknown["schema"] = "npgx.nothing".into();
    let unknown = write("unknown.json", &unknown);
    let (code, out) = validate(&[&unknown]);
    assert_eq!(code, 1, "{out}");

    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).expect("empty dir");
    let o = Command::new(crate::common::test_python())
        .arg(repo().join("scripts/validate_json.py"))
        .arg("--corpus")
        .arg(&empty)
        .output()
        .expect("python runs");
    assert_eq!(o.status.code(), Some(1), "an empty corpus must fail");
}
