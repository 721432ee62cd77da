//! Device-address links in `npgx dump-scan` and `npgx dump-config plan`, on the `addr_*` trees
//! `scripts/gen_dump_fixtures.py` writes with explicit `OpInput.address` / `OpOutput.address`
//! (Python's protobuf runtime). What must be found — producers, overwrites, the planned config
//! and its size — is stated by the writer in `expected.json` (`addresses`, `plan`), from the
//! scenario it wrote. Every written plan is read back by `dump-config check`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::common::{self, npgx, npgx_json};
use crate::dump_scan::check_case;

fn expected(name: &str) -> Value {
    let dir = common::fixture(&format!("dump/{name}"));
    let text = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json readable");
    serde_json::from_str(&text).expect("expected.json is JSON")
}

fn root(name: &str) -> PathBuf {
    common::fixture(&format!("dump/{name}/root"))
}

/// A fresh directory under the system temp dir for one test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("npgx-it-plan-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// `[op_name, order, index]` of a tensor in a link, or null.
fn at(v: &Value) -> Value {
    if v.is_null() {
        return Value::Null;
    }
    json!([v["op_name"], v["order"], v["index"]])
}

/// The group's `addresses` in the shape of the writer's expectation.
fn addresses_as_expected(a: &Value) -> Value {
    let links: Vec<Value> = a["links"]
        .as_array()
        .expect("links")
        .iter()
        .map(|l| {
            json!({"consumer": at(&l["consumer"]), "held": l["held"], "start": l["start"],
                   "end": l["end"], "producer": at(&l["producer"]),
                   "producer_held": l["producer_held"]})
        })
        .collect();
    let overwrites: Vec<Value> = a["overwrites"]
        .as_array()
        .expect("overwrites")
        .iter()
        .map(|w| {
            let between: Vec<Value> = w["between"]
                .as_array()
                .expect("between")
                .iter()
                .map(|b| json!([b["op_name"], b["order"], b["overlaps"]]))
                .collect();
            json!({"producer": at(&w["producer"]), "consumer": at(&w["consumer"]),
                   "start": w["start"], "end": w["end"], "between": between,
                   "between_count": w["between_count"]})
        })
        .collect();
    json!({"status": a["status"], "links": links, "overwrites": overwrites})
}

/// Runs the scan checks of `dump_scan.rs` on the case, then compares its one group's address
/// links with the writer's.
fn check_addresses(name: &str) -> Value {
    let got = check_case(name);
    let groups = got["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "{name}: one group");
    assert_eq!(
        addresses_as_expected(&groups[0]["addresses"]),
        expected(name)["addresses"],
        "{name}: addresses"
    );
    got
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn an_overwrite_between_producer_and_consumer_is_found_with_the_ops_in_between() {
    let got = check_addresses("addr_overwrite");
    // Nothing is born: every anomalous output has an anomalous input.
    assert!(got["groups"][0]["first_born"].is_null());
    assert_eq!(
        got["next"],
        "npgx dump-config plan scan.json -o dump_config.json"
    );
    let out = npgx([
        "dump-scan".as_ref(),
        root("addr_overwrite").as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    for want in [
        "OVERWRITTEN   : input 0 of model/C (MatMul) #3 read anomalous values at 0x20000000–0x20000100 (256 B); its producer model/A (Mul) #0 left output 0 clean",
        "in between  : model/B #1 (overlaps), model/Other #2",
        "producer      : input 0 of model/C (MatMul) #3 ← output 0 of model/A (Mul) #0 (clean)",
        "next: npgx dump-config plan scan.json -o dump_config.json",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_clean_run_links_nothing_and_suggests_no_plan() {
    let got = check_addresses("addr_clean");
    assert!(got["next"].is_null());
    assert_eq!(got["groups"][0]["addresses"]["with_address"], 6);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_nan_born_in_an_op_links_its_inputs_to_their_producers() {
    let got = check_addresses("addr_born");
    assert_eq!(got["groups"][0]["first_born"]["op_name"], "model/Div");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn absent_addresses_are_reported_not_guessed() {
    let got = check_addresses("addr_absent");
    assert_eq!(got["groups"][0]["addresses"]["without_address"], 6);
    let out = npgx([
        "dump-scan".as_ref(),
        root("addr_absent").as_os_str(),
        "--no-progress".as_ref(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("addresses     : absent in these files"),
        "{text}"
    );
    assert!(!text.contains("producer      :"), "{text}");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn several_ranks_scan_as_one_group_each() {
    let got = check_case("addr_ranks");
    let ranks: Vec<&Value> = got["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .map(|g| &g["rank"])
        .collect();
    assert_eq!(ranks, [&json!(0), &json!(1)]);
}

/// Saves the case's scan as JSON, plans from it into `dir/dump_config.json`, and returns the
/// plan document.
fn plan(name: &str, dir: &Path) -> Value {
    let scan = dir.join("scan.json");
    let out = npgx([
        "dump-scan".as_ref(),
        root(name).as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
        "-o".as_ref(),
        scan.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert!(out.status.code().is_some_and(|c| c < 2), "{out:?}");
    npgx_json(
        [
            "dump-config".as_ref(),
            "plan".as_ref(),
            scan.as_os_str(),
            "-o".as_ref(),
            dir.join("dump_config.json").as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    )
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn every_plan_is_the_expected_config_estimated_and_valid() {
    for name in [
        "addr_overwrite",
        "addr_clean",
        "addr_born",
        "addr_absent",
        "addr_ranks",
    ] {
        let dir = scratch(name);
        let doc = plan(name, &dir);
        assert_eq!(doc["schema"], "npgx.dump-config", "{name}");
        let want = expected(name)["plan"].clone();
        let want = want.as_array().expect("plan list");
        let dumps = doc["dumps"].as_array().expect("dumps");
        assert_eq!(dumps.len(), want.len(), "{name}: {doc:#}");
        for (d, w) in dumps.iter().zip(want) {
            assert_eq!(d["rank"], w["rank"], "{name}");
            assert_eq!(d["scene"], w["scene"], "{name}");
            assert_eq!(d["config"]["dump"], w["dump"], "{name}: {doc:#}");
            assert_eq!(d["estimate"]["plan_bytes"], w["plan_bytes"], "{name}");
            // A full dump of the step: every tensor the first pass read (256 bytes each).
            let tensors = expected(name)["groups"]
                .as_array()
                .expect("groups")
                .iter()
                .find(|g| g["key"]["rank"] == w["rank"])
                .and_then(|g| g["tensors"].as_u64())
                .expect("tensor count");
            assert_eq!(d["estimate"]["full_bytes"], json!(tensors * 256), "{name}");
            // The written file is what the document shows, and `check` accepts it.
            let written = PathBuf::from(d["written"].as_str().expect("written"));
            let on_disk: Value =
                serde_json::from_slice(&std::fs::read(&written).expect("plan written"))
                    .expect("plan is JSON");
            assert_eq!(on_disk, d["config"], "{name}");
            let check = npgx([
                "dump-config".as_ref(),
                "check".as_ref(),
                written.as_os_str(),
                "--no-fs-check".as_ref(),
            ]);
            assert_eq!(check.status.code(), Some(0), "{name}: {check:?}");
        }
        if dumps.len() > 1 {
            // Ranks with different plans get one file each.
            assert!(dir.join("dump_config.rank0.json").exists(), "{name}");
            assert!(dir.join("dump_config.rank1.json").exists(), "{name}");
            assert!(!dir.join("dump_config.json").exists(), "{name}");
        }
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn an_existing_plan_is_not_overwritten_without_force() {
    let dir = scratch("force");
    plan("addr_born", &dir);
    let scan = dir.join("scan.json");
    let target = dir.join("dump_config.json");
    std::fs::write(&target, "keep me").expect("write");
    let args = |force: bool| {
        let mut a: Vec<&std::ffi::OsStr> = vec![
            "dump-config".as_ref(),
            "plan".as_ref(),
            scan.as_os_str(),
            "-o".as_ref(),
            target.as_os_str(),
        ];
        if force {
            a.push("--force".as_ref());
        }
        npgx(a)
    };
    let refused = args(false);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("pass --force"),
        "{refused:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep me");
    let forced = args(true);
    assert_eq!(forced.status.code(), Some(0), "{forced:?}");
    assert!(std::fs::read_to_string(&target)
        .expect("read")
        .contains("\"dump_mode\": \"all\""));
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
fn a_document_plan_cannot_read_is_refused() {
    let dir = scratch("refused");
    // Another document, a newer version of one plan reads (it planned nothing before: the
    // version went unchecked), another tool's JSON.
    for (text, message) in [
        (
            r#"{"schema": "npgx.plog", "schema_version": 2}"#,
            "x.json: schema \"npgx.plog\" is not one dump-config plan reads; expected one of npgx.dump-scan v2, npgx.dump-compare v1, npgx.merge v1",
        ),
        (
            r#"{"schema": "npgx.dump-scan", "schema_version": 9, "groups": [], "opdebug": []}"#,
            "x.json: npgx.dump-scan schema_version 9 is not one this npgx reads (expected npgx.dump-scan v2)",
        ),
        (
            r#"{"groups": []}"#,
            "x.json: not an npgx JSON document (no \"schema\" field)",
        ),
    ] {
        let bad = dir.join("x.json");
        std::fs::write(&bad, text).expect("write");
        let out = npgx(["dump-config".as_ref(), "plan".as_ref(), bad.as_os_str()]);
        assert_eq!(out.status.code(), Some(2), "{text}");
        assert!(String::from_utf8_lossy(&out.stdout).is_empty(), "{out:?}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains(message),
            "{out:?}"
        );
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn with_the_ge_graph_producers_and_sizes_come_from_the_graph() {
    let dir = scratch("graph");
    plan("addr_born", &dir);
    let graph = common::fixture("dump/addr_born/ge_proto_00000001_Build.txt");
    let doc = npgx_json(
        [
            "dump-config".as_ref(),
            "plan".as_ref(),
            dir.join("scan.json").as_os_str(),
            "--graph".as_ref(),
            graph.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    );
    let want = &expected("addr_born")["plan_with_graph"];
    let d = &doc["dumps"][0];
    assert_eq!(d["config"]["dump"]["dump_list"][0]["layer"], want["layer"]);
    assert_eq!(d["estimate"]["plan_bytes"], want["plan_bytes"]);
    // Every planned name is an op of the graph: no finding.
    assert_eq!(d["warnings"], json!([]), "{doc:#}");
    assert!(d["written"].is_null());
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_dump_compare_origin_is_planned_as_a_narrowed_dump() {
    let case = common::fixture("compare/chain");
    let truth: Value = serde_json::from_slice(
        &std::fs::read(case.join("truth.json")).expect("truth.json readable"),
    )
    .expect("truth is JSON");
    // The first run of the case is the default comparison (no extra arguments).
    let origin = truth["runs"][0]["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .find_map(|g| g["origin"]["op_name"].as_str())
        .expect("an origin");
    let dir = scratch("compare");
    let doc_path = dir.join("compare.json");
    let out = npgx([
        "dump-compare".as_ref(),
        case.join("golden").as_os_str(),
        case.join("target").as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
        "-o".as_ref(),
        doc_path.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = npgx_json(
        [
            "dump-config".as_ref(),
            "plan".as_ref(),
            doc_path.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    );
    let dumps = doc["dumps"].as_array().expect("dumps");
    assert_eq!(dumps.len(), 1, "{doc:#}");
    let dump = &dumps[0]["config"]["dump"];
    assert_eq!(dump["dump_list"][0]["layer"], json!([origin]));
    assert_eq!(
        (&dump["dump_mode"], &dump["dump_step"]),
        (&json!("all"), &json!("0"))
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_html_page_shows_the_overwrite_and_the_next_step() {
    let dir = scratch("html");
    let page = dir.join("scan.html");
    let out = npgx([
        "dump-scan".as_ref(),
        root("addr_overwrite").as_os_str(),
        "--no-progress".as_ref(),
        "--html".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    let html = std::fs::read_to_string(&page).expect("page written");
    for want in [
        "Overwritten: ",
        "0x20000000–0x20000100 (256 bytes)",
        "2 operators ran in between",
        "npgx dump-config plan scan.json -o dump_config.json",
    ] {
        assert!(html.contains(want), "missing {want:?}");
    }
    std::fs::remove_dir_all(&dir).expect("cleanup");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_merge_origin_rank_is_planned_for_that_rank_and_step() {
    let case = common::fixture("cluster/ranks64");
    let truth: Value = serde_json::from_slice(
        &std::fs::read(case.join("expected.json")).expect("expected.json readable"),
    )
    .expect("expected is JSON");
    let dir = scratch("merge");
    let shard = dir.join("all.parquet");
    let out = npgx([
        "dump-scan".as_ref(),
        case.join("root").as_os_str(),
        "--format".as_ref(),
        "parquet".as_ref(),
        "-o".as_ref(),
        shard.as_os_str(),
        "--no-progress".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let merged = dir.join("merge.json");
    let out = npgx([
        "merge".as_ref(),
        shard.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
        "-o".as_ref(),
        merged.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = npgx_json(
        [
            "dump-config".as_ref(),
            "plan".as_ref(),
            merged.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    );
    let dumps = doc["dumps"].as_array().expect("dumps");
    assert_eq!(dumps.len(), 1, "only the origin rank: {doc:#}");
    assert_eq!(dumps[0]["rank"], truth["origin"]);
    let dump = &dumps[0]["config"]["dump"];
    assert_eq!(
        dump["dump_list"][0],
        json!({"layer": [truth["origin_first"]["op_name"]]}),
        "merge names models by key: no model_name"
    );
    assert_eq!(
        dump["dump_step"],
        json!(truth["anomalous_step"].to_string())
    );
    std::fs::remove_dir_all(&dir).expect("cleanup");
}
