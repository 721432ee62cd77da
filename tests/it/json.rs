//! One JSON envelope for every command (`docs/json.md`): each command run with `--format json`
//! prints one object whose `schema` is `npgx.<command>` and whose `schema_version` is a positive
//! integer, and never a bare array.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common::{npgx, repo, sample};

fn scratch(name: &str) -> PathBuf {
    let d = repo().join("target/test-json").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// Runs npgx with `args`, expects one of `codes`, and checks the envelope names `schema`.
fn envelope(schema: &str, args: &[String], codes: &[i32]) -> Value {
    let out = npgx(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let code = out.status.code().unwrap_or(-1);
    assert!(
        codes.contains(&code),
        "{args:?}: exit {code}; stderr:\n{stderr}"
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{args:?}: stdout is not one JSON document ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    assert!(v.is_object(), "{args:?}: not an object");
    assert_eq!(v["schema"], format!("npgx.{schema}"), "{args:?}");
    assert!(
        v["schema_version"].as_u64().is_some_and(|n| n >= 1),
        "{args:?}: schema_version {}",
        v["schema_version"]
    );
    v
}

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|a| a.to_string()).collect()
}

#[test]
fn every_command_prints_the_one_envelope() {
    let example = s(&repo().join("testdata/dump-example"));
    let log = s(&sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log"));
    let triage_sample = s(&sample("triage/21-hccl-watchdog-collective-timeout.txt"));
    let work = scratch("envelope");

    envelope(
        "dump-scan",
        &args(&["dump-scan", &example, "--format", "json", "--no-progress"]),
        &[0, 1],
    );
    #[cfg(feature = "tables")]
    {
        let shard = s(&work.join("example.parquet"));
        let out = crate::common::npgx([
            "dump-scan",
            &example,
            "--format",
            "parquet",
            "-o",
            &shard,
            "--no-progress",
        ]);
        assert_eq!(out.status.code(), Some(1), "the example has anomalies");
        let merged = envelope("merge", &args(&["merge", &shard, "--format", "json"]), &[1]);
        assert_eq!(merged["summary"]["shards"], 1);
    }
    envelope(
        "dump-compare",
        &args(&["dump-compare", &example, &example, "--format", "json"]),
        &[0],
    );
    envelope(
        "dump-convert",
        &args(&[
            "dump-convert",
            &example,
            "-o",
            &s(&work.join("npy")),
            "--format",
            "json",
        ]),
        &[0],
    );
    let cfg = work.join("dump_config.json");
    let made = envelope(
        "dump-config",
        &args(&[
            "dump-config",
            "new",
            "model",
            "-o",
            &s(&cfg),
            "--format",
            "json",
        ]),
        &[0],
    );
    assert_eq!(made["preset"], "model");
    envelope(
        "dump-config",
        &args(&["dump-config", "check", &s(&cfg), "--format", "json"]),
        &[0],
    );
    envelope("plog", &args(&["plog", &log, "--format", "json"]), &[0, 1]);
    envelope(
        "plog-records",
        &args(&["plog", &log, "--records", "--format", "json"]),
        &[0, 1],
    );
    envelope(
        "aicore",
        &args(&["aicore", &log, "--format", "json"]),
        &[0, 1],
    );
    envelope(
        "repro",
        &args(&[
            "repro",
            "--from-aicore",
            &s(&sample("cann/slog-2021-offline-model")),
            "-o",
            &s(&work.join("case")),
            "--format",
            "json",
        ]),
        &[0, 1],
    );
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string(work.join("case/case.json")).expect("case.json"),
    )
    .expect("case.json is JSON");
    assert_eq!(case["schema"], "npgx.repro");
    envelope(
        "triage-classify",
        &args(&["triage", "classify", &triage_sample, "--format", "json"]),
        &[0, 1],
    );
}

/// `triage run` and `analyze` on a script whose compile call never runs: five passing steps, no
/// torch needed, so the envelope of both is checked on every machine.
#[test]
fn triage_run_and_analyze_print_the_envelope() {
    let work = scratch("triage");
    let script = work.join("model.py");
    std::fs::write(
        &script,
        "import sys\nif len(sys.argv) > 5:\n    import torch\n    compiled = torch.compile(model, backend=\"npugraph_ex\")\nprint(\"ok\")\n",
    )
    .expect("write script");
    let python = crate::common::plain_python();
    let run = envelope(
        "triage-run",
        &args(&[
            "triage",
            "run",
            &s(&script),
            "--out",
            &s(&work),
            "--cmd",
            &format!("{python} {{script}}"),
            "--format",
            "json",
        ]),
        &[0],
    );
    let tree = run["run"]["root"]
        .as_str()
        .unwrap_or_else(|| panic!("run names its log tree: {run:#}"))
        .to_string();
    envelope(
        "triage-analyze",
        &args(&["triage", "analyze", &tree, "--format", "json"]),
        &[0, 1],
    );
    let bisect = envelope(
        "triage-run",
        &args(&[
            "triage",
            "bisect",
            &s(&script),
            "--out",
            &s(&work),
            "--cmd",
            &format!("{python} {{script}}"),
            "--format",
            "json",
        ]),
        &[0],
    );
    assert_eq!(bisect["bisect"]["outcome"], "not_applicable", "{bisect:#}");
}
