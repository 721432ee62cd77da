//! `npgx report` and `--html`: pages rendered from the JSON of dump trees written by
//! `scripts/gen_dump_fixtures.py` / `gen_compare_fixtures.py` and of logs from
//! `../shared/samples/`, checked as text and — with Debian's `chromium` — in a real headless
//! browser through `scripts/browser_check.py` (no console errors, no network request, the summary
//! names the right first failure, plots with their marks, a table that sorts).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{fixture, npgx, repo, sample};

fn scratch(name: &str) -> PathBuf {
    let d = repo().join("target/test-report").join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// Runs npgx, expects `code`, returns stdout.
fn run(args: &[&std::ffi::OsStr], code: i32) -> Vec<u8> {
    let o = npgx(args);
    assert_eq!(
        o.status.code(),
        Some(code),
        "npgx {args:?}\nstderr: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

macro_rules! args {
    ($($a:expr),* $(,)?) => { &[$(std::ffi::OsStr::new(&$a)),*] };
}

fn json_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, bytes).unwrap();
    p
}

fn page(dir: &Path, name: &str, inputs: &[&Path]) -> (PathBuf, String) {
    let out = dir.join(name);
    let mut a: Vec<&std::ffi::OsStr> = vec!["report".as_ref(), "-o".as_ref(), out.as_os_str()];
    a.extend(inputs.iter().map(|p| p.as_os_str()));
    run(&a, 0);
    let html = fs::read_to_string(&out).unwrap();
    (out, html)
}

/// A saved dump-scan document of the torchair fixture, and the scan's `--html` page.
fn scan_docs(dir: &Path) -> (PathBuf, PathBuf) {
    let root = fixture("dump/torchair/root");
    let json = run(
        args![OsStr("dump-scan"), root, OsStr("--format"), OsStr("json")],
        1,
    );
    let html = dir.join("scan-flag.html");
    run(
        args![
            OsStr("dump-scan"),
            root,
            OsStr("--html"),
            html,
            OsStr("--no-progress")
        ],
        1,
    );
    (json_file(dir, "scan.json", &json), html)
}

#[allow(non_snake_case)]
fn OsStr(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

fn compare_doc(dir: &Path) -> PathBuf {
    let case = fixture("compare/chain");
    let json = run(
        args![
            OsStr("dump-compare"),
            case.join("golden"),
            case.join("target"),
            OsStr("--format"),
            OsStr("json")
        ],
        1,
    );
    json_file(dir, "compare.json", &json)
}

const LOG: &str = "logs/01-plog-raw-aivec-gatherv3-assert-2025.log";

fn log_docs(dir: &Path) -> (PathBuf, PathBuf) {
    let log = sample(LOG);
    let plog = npgx(args![OsStr("plog"), log, OsStr("--format"), OsStr("json")]).stdout;
    let aicore = run(
        args![OsStr("aicore"), log, OsStr("--format"), OsStr("json")],
        1,
    );
    (
        json_file(dir, "plog.json", &plog),
        json_file(dir, "aicore.json", &aicore),
    )
}

/// A five-step tree whose failing step 5 logged a real triage sample.
fn triage_tree(dir: &Path) -> PathBuf {
    let root = dir.join("torch-npugraph-ex-triage-logs/20260101-000000-pid1");
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, text).unwrap();
    };
    w("env.txt", "torch: 2.7.1\ntorch_npu: 2.7.1.post1\n");
    for s in [
        "step1-eager",
        "step2-compile-eager",
        "step3-compile-aot_eager",
        "step4-npugraph_ex-force_eager",
    ] {
        w(&format!("{s}/stdout_stderr.log"), "ok\n");
        w(&format!("{s}/SUCCESS"), "");
    }
    let log =
        fs::read_to_string(sample("triage/23-aicore-execution-timeout-event-query.txt")).unwrap();
    w("step5-npugraph_ex/stdout_stderr.log", &log);
    w("first_failure.txt", "step5-npugraph_ex exit_code=1\n");
    fs::create_dir_all(root.join("scripts")).unwrap();
    root
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_saved_document_renders_the_same_page_as_the_html_flag() {
    let dir = scratch("same-page");
    let (json, flag) = scan_docs(&dir);
    let (_, from_json) = page(&dir, "scan.html", &[&json]);
    assert_eq!(from_json, fs::read_to_string(&flag).unwrap());

    let case = fixture("compare/chain");
    let flag = dir.join("compare-flag.html");
    run(
        args![
            OsStr("dump-compare"),
            case.join("golden"),
            case.join("target"),
            OsStr("--html"),
            flag,
            OsStr("--no-progress")
        ],
        1,
    );
    let (_, from_json) = page(&dir, "compare.html", &[&compare_doc(&dir)]);
    assert_eq!(from_json, fs::read_to_string(&flag).unwrap());

    let tree = triage_tree(&dir);
    let flag = dir.join("triage-flag.html");
    // Exit 1: the tree has no plogs (incomplete); the page is still written.
    run(
        args![
            OsStr("triage"),
            OsStr("analyze"),
            tree,
            OsStr("--html"),
            flag
        ],
        1,
    );
    let (_, from_tree) = page(&dir, "triage.html", &[&tree]);
    assert_eq!(from_tree, fs::read_to_string(&flag).unwrap());
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn scan_json_carries_each_operators_magnitude_and_the_anomalies_order() {
    let dir = scratch("scan-order");
    let (json, _) = scan_docs(&dir);
    let doc: Value = serde_json::from_slice(&fs::read(json).unwrap()).unwrap();
    let expected: Value =
        serde_json::from_slice(&fs::read(fixture("dump/torchair/expected.json")).unwrap()).unwrap();
    let groups = doc["groups"].as_array().unwrap();
    let exp_groups = expected["groups"].as_array().unwrap();
    assert_eq!(groups.len(), exp_groups.len());
    for (gi, (g, e)) in groups.iter().zip(exp_groups).enumerate() {
        let order: Vec<&str> = e["order"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        assert_eq!(
            g["magnitudes"].as_array().unwrap().len(),
            order.len(),
            "{g:#}"
        );
        let fa = &g["first_anomaly"];
        if fa.is_null() {
            assert!(e["first_anomaly"].is_null());
            continue;
        }
        let at = order.iter().position(|p| *p == fa["path"]).unwrap();
        assert_eq!(fa["order"], json!(at), "group {gi}");
        assert_eq!(fa["group"], json!(gi));
    }
    for a in doc["anomalies"].as_array().unwrap() {
        let g = a["group"].as_u64().unwrap() as usize;
        let order = exp_groups[g]["order"].as_array().unwrap();
        assert_eq!(
            order[a["order"].as_u64().unwrap() as usize],
            a["path"],
            "{a:#}"
        );
    }
}

#[test]
fn plog_json_has_a_per_second_error_and_warning_timeline() {
    let log = sample(LOG);
    let doc: Value = serde_json::from_slice(
        &npgx(args![OsStr("plog"), log, OsStr("--format"), OsStr("json")]).stdout,
    )
    .unwrap();
    let p = &doc["processes"][0];
    let t = p["timeline"].as_array().unwrap();
    let errors: u64 = t.iter().map(|x| x["error"].as_u64().unwrap()).sum();
    let warnings: u64 = t.iter().map(|x| x["warning"].as_u64().unwrap()).sum();
    assert_eq!(errors, p["levels"]["ERROR"].as_u64().unwrap_or(0));
    assert_eq!(warnings, p["levels"]["WARNING"].as_u64().unwrap_or(0));
    assert!(
        t[0]["time"].as_str().unwrap().ends_with(".000.000"),
        "{t:?}"
    );
    assert!(t
        .windows(2)
        .all(|w| w[0]["time"].as_str() < w[1]["time"].as_str()));
}

#[test]
fn other_tools_json_and_newer_schemas_exit_2_naming_the_file_and_schema() {
    let dir = scratch("bad-input");
    let other = json_file(&dir, "tlparse.json", br#"{"version": 3, "entries": []}"#);
    let o = npgx(args![
        OsStr("report"),
        other,
        OsStr("-o"),
        dir.join("x.html")
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("tlparse.json: not an npgx JSON document"),
        "{err}"
    );
    assert!(err.contains("npgx.dump-scan v2"), "{err}");

    let newer = json_file(
        &dir,
        "newer.json",
        br#"{"schema": "npgx.dump-compare", "schema_version": 7, "pairs": []}"#,
    );
    let o = npgx(args![
        OsStr("report"),
        newer,
        OsStr("-o"),
        dir.join("x.html")
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("newer.json: npgx.dump-compare schema_version 7")
            && err.contains("expected npgx.dump-compare v1"),
        "{err}"
    );
    let text = json_file(&dir, "notes.txt", b"hello");
    let o = npgx(args![
        OsStr("report"),
        text,
        OsStr("-o"),
        dir.join("x.html")
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("notes.txt: not a JSON document"));
    assert!(!dir.join("x.html").exists());
}

const XSS: &str =
    "</script><script>window.__npgx_xss=1</script><img src=x onerror=window.__npgx_xss=2>";

/// Documents with markup in an op name and in a log line.
fn hostile_docs(dir: &Path) -> Vec<PathBuf> {
    let log = dir.join("hostile.log");
    fs::write(
        &log,
        format!("start\nRuntimeError: {XSS}\n[ERROR] RUNTIME(1,python):2026-01-01-00:00:00.000.000 {XSS}\n"),
    )
    .unwrap();
    let anomaly = json!({"group": 0, "order": 0, "op_name": XSS, "op_type": XSS, "io": "output",
        "index": 0, "kind": "nan", "kinds": ["nan"], "dtype": "DT_FLOAT", "shape": [2], "elements": 2,
        "nan": 1, "pos_inf": 0, "neg_inf": 0, "overflow": 0, "min": 1.0, "max": 2.0, "mean": 1.5,
        "source": "dump", "path": XSS});
    let scan = json!({"schema": "npgx.dump-scan", "schema_version": 1, "root": XSS,
        "summary": {"files_seen": 1, "dump_files": 1, "tensors": 1, "bytes": 8, "anomalous_tensors": 1, "groups": 1, "errors": 1},
        "groups": [{"rank": 0, "model": XSS, "layout": "model", "files": 1, "tensors": 1, "bytes": 8,
                    "anomalous_tensors": 1, "first_anomaly": anomaly, "first_born": anomaly,
                    "magnitudes": [2.0]}],
        "anomalies": [anomaly], "opdebug": [], "errors": [{"path": XSS, "message": XSS, "offset": null}]});
    let classify = json!({"schema": "npgx.triage-classify", "schema_version": 2, "items": [{
        "file": log, "route": "runtime-error", "rule": XSS, "matched": XSS, "notes": [],
        "first_causal_error": {"line": 2, "text": XSS, "message": XSS,
                               "shape": "python_exception", "tier": "strong", "rank": "error",
                               "skipped_cascades": [],
                               "evidence": {"rule": "python.exception", "lines": [2]}}}],
        "errors": []});
    vec![
        json_file(dir, "hostile-scan.json", scan.to_string().as_bytes()),
        json_file(
            dir,
            "hostile-classify.json",
            classify.to_string().as_bytes(),
        ),
    ]
}

#[test]
fn markup_in_op_names_and_log_lines_is_escaped() {
    let dir = scratch("escape");
    let docs = hostile_docs(&dir);
    let (_, html) = page(
        &dir,
        "hostile.html",
        &docs.iter().map(PathBuf::as_path).collect::<Vec<_>>(),
    );
    assert!(!html.contains("window.__npgx_xss=1</script>"), "raw script");
    assert!(!html.contains("<img src=x"), "raw img");
    assert!(html.contains("&lt;/script&gt;&lt;script&gt;window.__npgx_xss=1"));
    // The log line was read and shown (escaped), highlighted as the causal line.
    assert!(
        html.contains("class=\"causal\" data-line=\"2\""),
        "no context lines"
    );
    // Only the page's own script element (and the table rows' JSON) exist.
    assert_eq!(html.matches("<script").count(), 2, "{html}");
}

// ---------------------------------------------------------------------------------------------
// In a real browser.

/// Opens `page` in headless Chromium; returns the checker's JSON after asserting no console
/// error, no exception and no network request.
fn browse(page: &Path, evals: &[(&str, &str)], screenshot: Option<&Path>) -> Value {
    let mut c = Command::new(crate::common::test_python());
    c.arg(repo().join("scripts/browser_check.py")).arg(page);
    for (name, expr) in evals {
        c.arg("--eval").arg(format!("{name}={expr}"));
    }
    if let Some(s) = screenshot {
        c.arg("--screenshot").arg(s);
    }
    let o = c.output().expect("python runs scripts/browser_check.py");
    assert!(
        o.status.success(),
        "browser_check.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["console_errors"], json!([]), "{}: {v:#}", page.display());
    assert_eq!(v["exceptions"], json!([]), "{}: {v:#}", page.display());
    assert_eq!(v["requests"], json!([]), "{}: {v:#}", page.display());
    v
}

const SUMMARY: &str = "document.querySelector('#summary').innerText";

/// Texts of the SVG `<text>` elements inside plots of `class`.
fn svg_texts(class: &str) -> String {
    format!("[...document.querySelectorAll('figure.{class} svg text')].map(t => t.textContent)")
}

/// Clicks the header `col` of the first table in `box_sel` twice; returns the column's cells
/// after each click.
fn sort_js(box_sel: &str, col: &str) -> String {
    format!(
        "(() => {{ const box = document.querySelector('{box_sel}'); const ths = [...box.querySelectorAll('th')]; \
         const i = ths.findIndex(t => t.textContent === '{col}'); const cells = () => [...box.querySelectorAll('tbody tr')].map(r => r.cells[i].textContent); \
         ths[i].click(); const up = cells(); ths[i].click(); const down = cells(); return {{up, down, rows: box.querySelectorAll('tbody tr').length}}; }})()"
    )
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str().unwrap().parse().ok())
        .collect()
}

fn assert_sorts(v: &Value) {
    let up = numbers(&v["up"]);
    let down = numbers(&v["down"]);
    assert!(up.len() >= 2, "{v:#}");
    assert!(up.windows(2).all(|w| w[0] <= w[1]), "not ascending: {up:?}");
    assert!(
        down.windows(2).all(|w| w[0] >= w[1]),
        "not descending: {down:?}"
    );
}

#[test]
#[ignore = "needs Debian's chromium (scripts/test.sh installs it)"]
fn pages_open_in_chromium_offline_with_the_first_failure_plots_and_sorting() {
    let dir = scratch("browser");

    // Dump scan: the summary names the fixture's first anomaly and birth; the plots mark them.
    let (scan, _) = scan_docs(&dir);
    let (scan_page, _) = page(&dir, "scan.html", &[&scan]);
    let expected: Value =
        serde_json::from_slice(&fs::read(fixture("dump/torchair/expected.json")).unwrap()).unwrap();
    let v = browse(
        &scan_page,
        &[
            ("summary", SUMMARY),
            ("texts", &svg_texts("scan-plot")),
            ("plots", "document.querySelectorAll('figure.scan-plot svg').length"),
            ("marks", "document.querySelectorAll('figure.scan-plot svg circle, figure.scan-plot svg polygon, figure.scan-plot svg line').length"),
            ("sort", &sort_js(".datatable", "max")),
        ],
        None,
    );
    let summary = v["eval"]["summary"].as_str().unwrap();
    let texts = v["eval"]["texts"].to_string();
    for g in expected["groups"].as_array().unwrap() {
        let Some(fa) = g["first_anomaly"]["op_name"].as_str() else {
            continue;
        };
        assert!(
            summary.contains(&format!("of {fa} (")),
            "{fa} not in {summary}"
        );
        assert!(texts.contains(&format!("first anomaly: {fa}")), "{texts}");
        if let Some(b) = g["first_born"]["op_name"].as_str() {
            assert!(summary.contains(&format!("born at {b}")), "{summary}");
            assert!(texts.contains(&format!("birth: {b}")), "{texts}");
        }
    }
    assert_eq!(
        v["eval"]["plots"],
        json!(expected["groups"].as_array().unwrap().len())
    );
    assert!(v["eval"]["marks"].as_u64().unwrap() > 0);
    assert!(texts.contains("NaN"), "legend: {texts}");
    assert_sorts(&v["eval"]["sort"]);

    // Dump compare: the first divergence and origin of the fixture's truth.
    let compare = compare_doc(&dir);
    let (compare_page, _) = page(&dir, "compare.html", &[&compare]);
    let truth: Value =
        serde_json::from_slice(&fs::read(fixture("compare/chain/truth.json")).unwrap()).unwrap();
    let v = browse(
        &compare_page,
        &[
            ("summary", SUMMARY),
            ("texts", &svg_texts("compare-plot")),
            (
                "plots",
                "document.querySelectorAll('figure.compare-plot svg').length",
            ),
            ("sort", &sort_js(".datatable", "cosine")),
        ],
        None,
    );
    let summary = v["eval"]["summary"].as_str().unwrap();
    let texts = v["eval"]["texts"].to_string();
    let g0 = &truth["runs"][0]["groups"][0];
    let fd = g0["first_divergence"]["op_name"].as_str().unwrap();
    assert!(summary.contains(&format!("output 0 of {fd}:")), "{summary}");
    assert!(
        texts.contains(&format!("first divergence: {fd}")),
        "{texts}"
    );
    if let Some(o) = g0["origin"]["op_name"].as_str() {
        assert!(summary.contains(&format!("origin {o}")), "{summary}");
        assert!(texts.contains(&format!("origin: {o}")), "{texts}");
    }
    assert!(
        texts.contains("threshold 0.99") && texts.contains("threshold 0.01"),
        "{texts}"
    );
    assert!(v["eval"]["plots"].as_u64().unwrap() >= 2);
    assert_sorts(&v["eval"]["sort"]);

    // Logs: the plog's first causal error, its timeline, the AI Core card.
    let (plog, aicore) = log_docs(&dir);
    let (logs_page, _) = page(&dir, "logs.html", &[&plog, &aicore]);
    let pdoc: Value = serde_json::from_slice(&fs::read(&plog).unwrap()).unwrap();
    let adoc: Value = serde_json::from_slice(&fs::read(&aicore).unwrap()).unwrap();
    let v = browse(
        &logs_page,
        &[
            ("summary", SUMMARY),
            (
                "timelines",
                "document.querySelectorAll('figure.timeline svg').length",
            ),
            ("causal", "document.querySelector('.log .causal').innerText"),
            ("card", "document.querySelector('.card.aicore').innerText"),
        ],
        None,
    );
    let summary = v["eval"]["summary"].as_str().unwrap();
    let fc = pdoc["first_causal"]["text"].as_str().unwrap();
    assert!(summary.contains(fc), "{fc} not in {summary}");
    assert!(v["eval"]["timelines"].as_u64().unwrap() >= 1);
    let line = pdoc["first_causal"]["line"].as_u64().unwrap();
    assert!(
        v["eval"]["causal"]
            .as_str()
            .unwrap()
            .starts_with(&line.to_string()),
        "{v:#}"
    );
    let kernel = adoc["errors"][0]["kernel_name"]["value"].as_str().unwrap();
    let card = v["eval"]["card"].as_str().unwrap();
    assert!(card.contains(kernel), "{card}");
    assert!(summary.contains(kernel), "{summary}");

    // Triage: the ladder, the failing step and its causal error in context.
    let tree = triage_tree(&dir);
    let analysis = run(
        args![
            OsStr("triage"),
            OsStr("analyze"),
            tree,
            OsStr("--format"),
            OsStr("json")
        ],
        1,
    );
    let a: Value = serde_json::from_slice(&analysis).unwrap();
    let (triage_page, _) = page(&dir, "triage.html", &[&tree]);
    let v = browse(
        &triage_page,
        &[
            ("summary", SUMMARY),
            (
                "failed",
                "document.querySelector('tr[data-step=step5-npugraph_ex] .status-failed') !== null",
            ),
            (
                "steps",
                "document.querySelectorAll('table.ladder tbody tr').length",
            ),
            ("causal", "document.querySelector('.log .causal').innerText"),
        ],
        None,
    );
    let summary = v["eval"]["summary"].as_str().unwrap();
    let fce = &a["evidence"]["first_causal_error"];
    assert!(
        summary.contains("step5-npugraph_ex failed (exit 1)"),
        "{summary}"
    );
    assert!(
        summary.contains(fce["message"].as_str().unwrap()),
        "{summary}"
    );
    assert_eq!(v["eval"]["failed"], true);
    assert_eq!(v["eval"]["steps"], 5);
    let causal = v["eval"]["causal"].as_str().unwrap();
    assert!(
        causal.starts_with(&fce["line"].to_string())
            && causal.contains(fce["text"].as_str().unwrap().trim()),
        "{causal} vs {fce:#}"
    );

    // Everything on one page; and markup from the inputs never runs.
    let hostile = hostile_docs(&dir);
    let (all, _) = page(
        &dir,
        "all.html",
        &[
            &tree,
            &scan,
            &compare,
            &plog,
            &aicore,
            &hostile[0],
            &hostile[1],
        ],
    );
    let v = browse(
        &all,
        &[
            ("xss", "window.__npgx_xss === undefined"),
            (
                "sections",
                "document.querySelectorAll('section.input').length",
            ),
            (
                "rows",
                "document.querySelectorAll('#summary tbody tr').length",
            ),
        ],
        None,
    );
    assert_eq!(v["eval"]["xss"], true);
    assert_eq!(v["eval"]["sections"], 7);
}

#[test]
#[ignore = "needs Debian's chromium (scripts/test.sh installs it)"]
fn the_browser_check_sees_network_requests_and_console_errors() {
    let dir = scratch("checker");
    let p = dir.join("leaky.html");
    fs::write(
        &p,
        "<!DOCTYPE html><html><body><img src=\"http://127.0.0.1:9/x.png\"><script>console.error('boom')</script></body></html>",
    )
    .unwrap();
    let o = Command::new(crate::common::test_python())
        .arg(repo().join("scripts/browser_check.py"))
        .arg(&p)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["requests"].to_string().contains("127.0.0.1:9"), "{v:#}");
    assert!(v["console_errors"].to_string().contains("boom"), "{v:#}");
}

#[test]
fn format_json_names_the_page_and_its_inputs_in_the_envelope() {
    let dir = scratch("format-json");
    let (plog, aicore) = log_docs(&dir);
    let out = dir.join("logs.html");
    let v: Value = serde_json::from_slice(&run(
        args![
            OsStr("report"),
            plog,
            aicore,
            OsStr("-o"),
            out,
            OsStr("--format"),
            OsStr("json")
        ],
        0,
    ))
    .unwrap();
    assert_eq!(v["schema"], "npgx.report");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["bytes"], json!(fs::metadata(&out).unwrap().len()));
    assert_eq!(v["inputs"][0]["schema"], "npgx.plog");
    assert_eq!(v["inputs"][1]["schema"], "npgx.aicore");
}

/// Each document the page reads through a typed view, with one of its required fields renamed
/// (as an engine change would): the section names the missing field instead of rendering blank
/// values; the same document with fields this npgx does not know still renders.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_renamed_field_is_named_on_the_page_and_unknown_fields_are_ignored() {
    let dir = scratch("renamed");
    let (scan, _) = scan_docs(&dir);
    let compare = compare_doc(&dir);
    let (plog, aicore) = log_docs(&dir);
    let classify = json_file(
        &dir,
        "classify.json",
        &run(
            args![
                OsStr("triage"),
                OsStr("classify"),
                sample("triage/23-aicore-execution-timeout-event-query.txt"),
                OsStr("--format"),
                OsStr("json")
            ],
            1,
        ),
    );
    let tree = triage_tree(&dir);
    let analyze = json_file(
        &dir,
        "analyze.json",
        &run(
            args![
                OsStr("triage"),
                OsStr("analyze"),
                tree,
                OsStr("--format"),
                OsStr("json")
            ],
            1,
        ),
    );
    for (doc, at, field) in [
        (&scan, "/groups/0", "layout"),
        (&scan, "/anomalies/0", "source"),
        (&compare, "/summary", "pairs"),
        (&compare, "/pairs/0", "io"),
        (&plog, "/processes/0", "pid"),
        (&aicore, "/errors/0", "kind"),
        (&classify, "/items/0", "route"),
        (&analyze, "", "complete"),
    ] {
        let mut v: Value = serde_json::from_slice(&fs::read(doc).unwrap()).unwrap();
        let schema = v["schema"].as_str().unwrap().to_string();
        let name = doc.file_stem().unwrap().to_str().unwrap();

        let mut newer = v.clone();
        newer["from_a_newer_npgx"] = json!(1);
        newer.pointer_mut(at).unwrap()["from_a_newer_npgx"] = json!([1]);
        let p = json_file(
            &dir,
            &format!("{name}-newer.json"),
            newer.to_string().as_bytes(),
        );
        let (_, html) = page(&dir, &format!("{name}-newer.html"), &[&p]);
        assert!(!html.contains("does not read as"), "{name} {at}: {html}");

        let fields = v.pointer_mut(at).unwrap().as_object_mut().unwrap();
        let value = fields.remove(field).unwrap();
        fields.insert(format!("{field}_renamed"), value);
        let p = json_file(
            &dir,
            &format!("{name}-{field}.json"),
            v.to_string().as_bytes(),
        );
        let (_, html) = page(&dir, &format!("{name}-{field}.html"), &[&p]);
        let want = format!("does not read as {schema}: missing field `{field}`");
        assert!(html.contains(&want), "{name} {at}: no {want:?} in {html}");
    }
}
