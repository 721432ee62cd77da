//! From the operator to the user's line (issue 43, docs/source-map.md): dump-scan, dump-compare
//! and dump-config on the trees and graph texts of `scripts/gen_source_map_fixtures.py`, against
//! the writer's `truth.json`.

use serde_json::Value;

use crate::common::{fixture, npgx, npgx_json};

/// An empty scratch directory of this test process.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir =
        std::env::temp_dir().join(format!("npgx-it-source-map-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn truth(case: &str) -> Value {
    let p = fixture(&format!("source_map/{case}/truth.json"));
    serde_json::from_slice(&std::fs::read(&p).expect("truth.json")).expect("truth is JSON")
}

/// Every key of `want` (an expected `fx` record) in `got`; `*_contains` keys check a substring of
/// the field's joined list.
fn check_fx(got: &Value, want: &Value, what: &str) {
    let got_obj = got
        .as_object()
        .unwrap_or_else(|| panic!("{what}: no fx record: {got}"));
    for (k, v) in want.as_object().expect("expected fx is an object") {
        if let Some(field) = k.strip_suffix("_contains") {
            let joined: Vec<String> = got[field]
                .as_array()
                .unwrap_or_else(|| panic!("{what}: {field} is a list: {got}"))
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect();
            let needle = v.as_str().expect("a string");
            assert!(
                joined.iter().any(|s| s.contains(needle)),
                "{what}: {field} {joined:?} should mention {needle:?}"
            );
            continue;
        }
        assert_eq!(
            got_obj.get(k).unwrap_or(&Value::Null),
            v,
            "{what}: fx.{k} in {got:#}"
        );
    }
}

fn scan(case: &str) -> (Value, Value) {
    let t = truth(case);
    let root = fixture(&format!("source_map/{case}"));
    let mut args = vec![
        "dump-scan".to_string(),
        root.join(t["scan"]["root"].as_str().expect("root"))
            .display()
            .to_string(),
        "--format".into(),
        "json".into(),
    ];
    for g in t["scan"]["graphs"].as_array().into_iter().flatten() {
        args.push("--graphs".into());
        args.push(root.join(g.as_str().expect("a path")).display().to_string());
    }
    (npgx_json(&args, 1), t)
}

fn first_anomaly(doc: &Value) -> &Value {
    let groups = doc["groups"].as_array().expect("groups");
    assert_eq!(groups.len(), 1, "one group");
    &groups[0]["first_anomaly"]
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn scan_traces_the_first_anomaly_to_the_users_line() {
    for case in ["py_layers", "py_only", "txt_module", "fx_eager", "pbtxt"] {
        let (doc, t) = scan(case);
        assert_eq!(doc["complete"], true, "{case}: {:#}", doc["errors"]);
        let want = &t["scan"]["first_anomaly"];
        let first = first_anomaly(&doc);
        assert_eq!(first["op_name"], want["op_name"], "{case}");
        check_fx(&first["fx"], &want["fx"], &format!("{case} first anomaly"));
        // Every anomaly of an operator the truth names.
        if let Some(each) = t["scan"]["anomalies"].as_object() {
            for (op, want) in each {
                let a = doc["anomalies"]
                    .as_array()
                    .expect("anomalies")
                    .iter()
                    .find(|a| a["op_name"] == op.as_str())
                    .unwrap_or_else(|| panic!("{case}: no anomaly of {op}"));
                check_fx(&a["fx"], want, &format!("{case} {op}"));
            }
        }
        if let Some(m) = t["scan"]["mm_1_missing_contains"].as_str() {
            check_fx(
                &first["fx"],
                &serde_json::json!({ "missing_contains": m }),
                case,
            );
        }
    }
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_table_ends_the_first_anomaly_with_the_users_line() {
    let root = fixture("source_map/py_layers/dump");
    let out = npgx(["dump-scan".as_ref(), root.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("from /home/user/llm/model.py:12 in forward: h = self.proj(x) @ self.w (FX node mm_1 of graph_1)"),
        "{text}"
    );
}

/// A scan of py_layers' tree two levels down: neither the root nor its parent holds a graph
/// text. The root and the document.
fn scan_without_graph_texts() -> (std::path::PathBuf, Value) {
    let root = fixture("source_map/py_layers/dump/worldsize1_global_rank0/20250101120000");
    let doc = npgx_json(
        [
            "dump-scan".as_ref(),
            root.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        1,
    );
    (root, doc)
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn without_graph_texts_fx_is_null() {
    // Neither the root nor its parent holds a graph text (the tree two levels down).
    let (root, doc) = scan_without_graph_texts();
    assert_eq!(first_anomaly(&doc)["fx"], Value::Null);
    // --graphs naming a file that is no graph text: an error entry, the scan goes on.
    let bogus = fixture("source_map/py_layers/truth.json");
    let doc = npgx_json(
        [
            "dump-scan".as_ref(),
            root.as_os_str(),
            "--graphs".as_ref(),
            bogus.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        3,
    );
    assert_eq!(doc["complete"], false);
    let e = &doc["errors"][0];
    assert!(
        e["path"]
            .as_str()
            .is_some_and(|p| p.ends_with("truth.json")),
        "{e}"
    );
    assert!(
        first_anomaly(&doc)["fx"]["missing"][0]
            .as_str()
            .is_some_and(|m| m.contains("no torchair graph dump")),
        "{doc:#}"
    );
}

fn dump_config(case: &str, select: &[&str]) -> Value {
    let root = fixture(&format!("source_map/{case}"));
    let mut args: Vec<String> = vec![
        "dump-config".into(),
        "new".into(),
        "model".into(),
        "--graphs".into(),
        root.display().to_string(),
        "--format".into(),
        "json".into(),
    ];
    args.extend(select.iter().map(|s| s.to_string()));
    npgx_json(&args, 0)
}

/// `dump-config new model --graphs <py_layers> --line ARGS…`.
fn line_config(args: &[&str]) -> std::process::Output {
    let root = fixture("source_map/py_layers").display().to_string();
    let mut all = vec!["dump-config", "new", "model", "--graphs", &root, "--line"];
    all.extend_from_slice(args);
    npgx(all)
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn dump_config_dumps_exactly_the_operators_of_a_line() {
    for case in ["py_layers", "py_only"] {
        let t = truth(case);
        let doc = dump_config(
            case,
            &["--line", t["line"]["select"].as_str().expect("line")],
        );
        assert_eq!(
            doc["config"]["dump"]["dump_list"], t["line"]["dump_list"],
            "{case}"
        );
        let unsure: Vec<&str> = doc["fx"]["unsure"]
            .as_array()
            .expect("unsure")
            .iter()
            .filter_map(|n| n["fx_node"].as_str())
            .collect();
        assert_eq!(
            serde_json::json!(unsure),
            t["line"]["unsure"],
            "{case} unsure"
        );
        let doc = dump_config(
            case,
            &["--fx-node", t["fx_node"]["select"].as_str().expect("node")],
        );
        assert_eq!(
            doc["config"]["dump"]["dump_list"], t["fx_node"]["dump_list"],
            "{case} --fx-node"
        );
    }
    // The torchair FX data dump filter of the same selection, run by Python on stand-in nodes
    // (torch.fx's `stack_trace`: outermost frame first): the line's nodes of any name, not a
    // node of the same name from another line, nor one whose line is only an outer frame.
    let doc = dump_config("py_layers", &["--line", "model.py:12"]);
    let filter = doc["fx"]["fx_dump_filter"].as_str().expect("filter");
    let frame = |line: u32| {
        format!("  File \"/home/user/llm/model.py\", line {line}, in forward\n    h = f(x)\n")
    };
    let nodes = [
        ("mm", frame(12)),
        ("mm_1", frame(12)),
        ("mm_2", frame(12)),
        ("mul", frame(13)),
        ("mm_1", frame(40)),
        (
            "inner",
            format!(
                "{}  File \"/usr/lib/torch/nn/functional.py\", line 12, in linear\n",
                frame(12)
            ),
        ),
        ("no_trace", String::new()),
    ];
    let nodes_py: Vec<String> = nodes
        .iter()
        .map(|(n, t)| format!("({n:?}, {t:?})"))
        .collect();
    let probe = format!(
        "import types\nconfig = types.SimpleNamespace(debug=types.SimpleNamespace(\
         data_dump=types.SimpleNamespace()))\n{filter}\nf = config.debug.data_dump.filter\n\
         nodes = [{}]\n\
         print([i for i, (n, t) in enumerate(nodes) \
         if f(types.SimpleNamespace(name=n, stack_trace=t or None)) is not None])",
        nodes_py.join(", ")
    );
    let run = std::process::Command::new(crate::common::plain_python())
        .args(["-c", &probe])
        .output()
        .expect("python3 runs");
    assert_eq!(
        String::from_utf8_lossy(&run.stdout).trim(),
        "[0, 1, 2]",
        "{filter}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let doc = dump_config("py_layers", &["--fx-node", "mm_1"]);
    assert_eq!(
        doc["fx"]["fx_dump_filter"],
        "config.debug.data_dump.filter = lambda n: n if n.name in {\"mm_1\"} else None"
    );
    // What it writes passes check.
    let dir = scratch("config");
    let out = dir.join("dump_config.json");
    let made = line_config(&["model.py:12", "-o", &out.display().to_string()]);
    assert_eq!(made.status.code(), Some(0), "{made:?}");
    let stderr = String::from_utf8_lossy(&made.stderr);
    assert!(stderr.contains("graph_1 mm_1: MatMulV2_1"), "{stderr}");
    let checked = npgx(["dump-config".as_ref(), "check".as_ref(), out.as_os_str()]);
    assert_eq!(checked.status.code(), Some(0), "{checked:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn dump_config_line_errors_name_what_is_missing() {
    let out = line_config(&["model.py:99"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no FX node of model.py:99"), "{stderr}");
    let out = npgx(["dump-config", "new", "model", "--line", "model.py:12"]);
    assert_eq!(out.status.code(), Some(2), "--line needs --graphs");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn compare_names_the_fx_node_of_the_divergence() {
    // gen_compare_fixtures' fx_graph case: the target tree holds the .txt graph dump.
    let root = fixture("compare/fx_graph");
    let doc = npgx_json(
        [
            "dump-compare".as_ref(),
            root.join("golden").as_os_str(),
            root.join("target").as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        1,
    );
    let g = &doc["groups"][0];
    check_fx(
        &g["first_divergence"]["fx"],
        &serde_json::json!({"fx_node": "add", "fx_target": "aten.add.Tensor", "graph": "graph_1",
                            "source": null, "user_line": null}),
        "first divergence",
    );
    check_fx(
        &g["origin"]["fx"],
        &serde_json::json!({"fx_node": "add"}),
        "origin",
    );
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_html_page_names_the_users_line() {
    let dir = scratch("html");
    let page = dir.join("scan.html");
    let root = fixture("source_map/py_layers/dump");
    let out = npgx([
        "dump-scan".as_ref(),
        root.as_os_str(),
        "--html".as_ref(),
        page.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let html = std::fs::read_to_string(&page).expect("the page");
    assert!(
        html.contains("from /home/user/llm/model.py:12 in forward: h = self.proj(x) @ self.w (FX node mm_1 of graph_1)"),
        "the page names the user's line"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_plan_offers_the_operators_of_the_born_line() {
    let dir = scratch("plan");
    let scan = dir.join("scan.json");
    let root = fixture("source_map/py_layers/dump");
    let out = npgx([
        "dump-scan".as_ref(),
        root.as_os_str(),
        "--format".as_ref(),
        "json".as_ref(),
        "-o".as_ref(),
        scan.as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let plan = npgx_json(
        [
            "dump-config".as_ref(),
            "plan".as_ref(),
            scan.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    );
    let text = plan.to_string();
    let graphs = fixture("source_map/py_layers").display().to_string();
    assert!(
        text.contains(&format!(
            "npgx dump-config new model --graphs {graphs} --line model.py:12"
        )),
        "{plan:#}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[cfg(feature = "tables")]
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_csv_rows_carry_the_origin_columns() {
    let root = fixture("source_map/py_layers/dump");
    let out = npgx([
        "dump-scan".as_ref(),
        root.as_os_str(),
        "--format".as_ref(),
        "csv".as_ref(),
        "--all".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let mut rows = csv::Reader::from_reader(&out.stdout[..]);
    let header = rows.headers().expect("a header").clone();
    let at = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
    };
    let (op, node, line, graph) = (
        at("op_name"),
        at("fx_node"),
        at("user_line"),
        at("fx_graph"),
    );
    let mut seen = 0;
    for r in rows.records() {
        let r = r.expect("a row");
        match &r[op] {
            "MatMulV2_1" | "MatMulV2" => {
                assert_eq!(&r[line], "12", "{r:?}");
                assert_eq!(&r[graph], "graph_1", "{r:?}");
                seen += 1;
            }
            "TransData_9" => assert_eq!(&r[node], "", "GE-inserted: {r:?}"),
            "SplitV" => {
                assert_eq!(&r[node], "split");
                assert_eq!(&r[line], "", "torch's own frame: {r:?}");
            }
            _ => {}
        }
    }
    assert!(seen >= 4, "the rows of both MatMulV2 operators");
}

/// `npgx repro --from-scan` on a saved scan of `case`: the repro-fx document and the case dir.
fn repro_from_scan(case: &str) -> (Value, std::path::PathBuf) {
    let (doc, _) = scan(case);
    let dir = scratch(&format!("repro-{case}"));
    let scan_json = dir.join("scan.json");
    std::fs::write(&scan_json, serde_json::to_vec(&doc).expect("json")).expect("write scan");
    assert_eq!(
        doc["next_repro"], "npgx repro --from-scan scan.json -o repro_anomaly",
        "{case}: the scan offers the repro"
    );
    let out = dir.join("case");
    let r = npgx_json(
        [
            "repro".as_ref(),
            "--from-scan".as_ref(),
            scan_json.as_os_str(),
            "-o".as_ref(),
            out.as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    );
    (r, out)
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn repro_from_scan_rebuilds_the_fx_node_on_its_dumped_inputs() {
    // torchair's eager FX dump: the call's INPUT.<i> files by name and timestamp.
    let t = truth("fx_eager");
    let want = &t["repro"];
    let (r, out) = repro_from_scan("fx_eager");
    assert_eq!(r["schema"], "npgx.repro-fx");
    for k in ["fx_node", "target", "call"] {
        assert_eq!(r[k], want[k], "{k} in {r:#}");
    }
    assert_eq!(r["record"], "first_born");
    assert_eq!(r["rebuildable"], true);
    assert_eq!(r["missing"], serde_json::json!([]), "{r:#}");
    let inputs = r["inputs"].as_array().expect("inputs");
    let want_inputs = want["inputs"].as_array().expect("expected inputs");
    assert_eq!(inputs.len(), want_inputs.len(), "{r:#}");
    for (got, w) in inputs.iter().zip(want_inputs) {
        assert_eq!(got["argument"], w["argument"]);
        assert_eq!(got["node"], w["node"]);
        let from = got["from"].as_str().expect("from");
        assert!(
            from.ends_with(w["from"].as_str().expect("a path")),
            "{from}"
        );
        let file = got["file"].as_str().expect("a copied file");
        assert!(out.join(file).is_file(), "{file}");
    }
    assert_eq!(r["dumped_outputs"].as_array().map(Vec::len), Some(1));
    assert!(out.join("case.json").is_file() && out.join("README.md").is_file());
    // A GE dump: the node became one GE operator with one input per argument.
    let (r, out) = repro_from_scan("py_layers");
    assert_eq!(r["fx_node"], "mm_1");
    assert_eq!(r["op_name"], "MatMulV2_1");
    assert_eq!(r["call"], "F(T[0], T[1])");
    let files: Vec<&str> = r["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .filter_map(|i| i["file"].as_str())
        .collect();
    assert_eq!(files.len(), 2, "{r:#}");
    assert!(files.iter().all(|f| out.join(f).is_file()));
}

#[test]
#[ignore = "runs the generated script with PyTorch (NPGX_PYTHON); scripts/test.sh runs it"]
fn the_repro_script_compares_the_golden_with_the_dumped_output() {
    let want = truth("fx_eager")["repro"].clone();
    let (r, out) = repro_from_scan("fx_eager");
    let script = out.join(r["script"].as_str().expect("script"));
    let run = std::process::Command::new(crate::common::python_with("torch"))
        .arg(&script)
        .args(["--device", "cpu"])
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert_eq!(
        run.status.code(),
        Some(1),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let n = want["nan_dumped"].as_u64().expect("count");
    assert!(
        stdout.contains(&format!(
            "golden (CPU) vs the dumped output: output 0: 0 NaN/Inf eagerly, {n} dumped"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("npugraph_ex is not installed here"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "verdict: {}",
            want["golden_vs_dumped"].as_str().expect("verdict")
        )),
        "{stdout}"
    );
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn repro_from_scan_says_why_without_an_fx_node() {
    // A scan that read no graph text: no FX node, and the error says what to do.
    let (_, doc) = scan_without_graph_texts();
    assert_eq!(doc["next_repro"], Value::Null);
    let dir = scratch("repro-no-fx");
    let scan_json = dir.join("scan.json");
    std::fs::write(&scan_json, serde_json::to_vec(&doc).expect("json")).expect("write scan");
    let out = npgx([
        "repro".as_ref(),
        "--from-scan".as_ref(),
        scan_json.as_os_str(),
        "-o".as_ref(),
        dir.join("case").as_os_str(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("has no FX node") && err.contains("--graphs PATH"),
        "{err}"
    );
}
