//! `npgx triage`: classification of every shared triage sample against its README, analysis of
//! hand-made trees, and real runs of the ladder (PyTorch on CPU for steps 1–3, the labelled
//! test double in `testdata/triage/npugraph_ex_double/` for steps 4–5).

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{
    all_expectations, npgx, npgx_json, npgx_peak_rss, readme_expectations, repo, sample,
    sparse_file,
};

/// Runs `triage classify --format json` on `paths` and returns the items.
fn classify_items(paths: &[PathBuf], code: i32) -> Vec<Value> {
    let mut args = vec![
        "triage".into(),
        "classify".into(),
        "--format".into(),
        "json".into(),
    ];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let v = npgx_json(&args, code);
    assert_eq!(v["schema"], "npgx.triage-classify");
    assert_eq!(v["schema_version"], 3);
    v["items"].as_array().expect("items").clone()
}

/// The first causal line of a classify item (or, without an error, its evidence line).
fn item_line(item: &Value) -> Option<u64> {
    match item["first_causal_error"].as_object() {
        Some(e) => e["line"].as_u64(),
        None => item["evidence_line"].as_u64(),
    }
}

#[test]
fn the_readmes_list_every_sample() {
    for dir in ["triage", "logs"] {
        let listed: Vec<String> = readme_expectations(dir)
            .into_iter()
            .map(|e| e.file)
            .collect();
        let mut files: Vec<String> = fs::read_dir(sample(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n != "README.md")
            .collect();
        files.sort();
        let mut listed_sorted = listed.clone();
        listed_sorted.sort();
        assert_eq!(
            files, listed_sorted,
            "{dir}: files without an expectation in README.md"
        );
    }
}

#[test]
fn classify_matches_the_readmes_for_every_sample() {
    let expected = all_expectations();
    assert!(expected.len() >= 60, "READMEs read: {}", expected.len());
    let paths: Vec<PathBuf> = expected
        .iter()
        .map(|(d, e)| sample(&format!("{d}/{}", e.file)))
        .collect();
    let items = classify_items(&paths, 1);
    assert_eq!(items.len(), expected.len());
    let mut misses = Vec::new();
    for ((dir, e), item) in expected.iter().zip(&items) {
        // Every item says what decided it (the skills tell agents to read `why`).
        if item["why"].as_str().is_none_or(str::is_empty) {
            misses.push(format!("{dir}/{}: no `why`", e.file));
        }
        if let Some(route) = &e.route {
            if item["route"] != route.as_str() {
                misses.push(format!(
                    "{dir}/{}: route {} (README {route})",
                    e.file, item["route"]
                ));
            }
        }
        if let Some(line) = e.line {
            if item_line(item) != Some(line) {
                misses.push(format!(
                    "{dir}/{}: line {:?} (README L{line})",
                    e.file,
                    item_line(item)
                ));
            }
        }
    }
    assert!(misses.is_empty(), "misses:\n{}", misses.join("\n"));
}

#[test]
fn plog_and_classify_agree_on_the_first_causal_line_of_every_sample() {
    let expected = all_expectations();
    let paths: Vec<PathBuf> = expected
        .iter()
        .map(|(d, e)| sample(&format!("{d}/{}", e.file)))
        .collect();
    let items = classify_items(&paths, 1);
    for (p, item) in paths.iter().zip(&items) {
        let out = npgx(["plog", "--format", "json", p.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(0), "{}", p.display());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let plog_line = v["first_causal"]["line"].as_u64();
        let classify_line = item["first_causal_error"]["line"].as_u64();
        assert_eq!(plog_line, classify_line, "{}", p.display());
    }
}

#[test]
fn classify_corpus_script_prints_100_percent() {
    let python = std::env::var("NPGX_PYTHON").unwrap_or_else(|_| "python3".into());
    let out = Command::new(repo().join("scripts/classify_corpus.sh"))
        .args(["--npgx", env!("CARGO_BIN_EXE_npgx")])
        .env("NPGX_PYTHON", python)
        .output()
        .expect("scripts/classify_corpus.sh runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains("(100%)"), "{text}");
    assert!(!text.contains("miss:"), "{text}");
}

#[test]
fn classify_details_of_edge_cases() {
    let v = classify_items(
        &[
            sample("triage/23-aicore-execution-timeout-event-query.txt"),
            sample("triage/03-dynamo-observed-exception-wrapped-engine-dead.txt"),
            sample("triage/15-aclgraph-capture-stream-wait-event-resource-alloc-fail.txt"),
            sample("triage/42-suspect-remote-507057-err00100-ez9999-prefixed.txt"),
            sample("triage/48-env-atb-undefined-symbol-leading-space.txt"),
        ],
        1,
    );
    // 23: the watchdog termination, terminate and ERR02005 lines come first and are skipped;
    // the CANN root message sits under the hint; the code family decides the layer.
    let e = &v[0]["first_causal_error"];
    assert_eq!(e["root_line"], 11);
    assert_eq!(
        e["skipped_cascades"],
        serde_json::json!([1, 2, 3, 4, 5, 6, 7])
    );
    assert_eq!(e["evidence"]["rule"], "torch-npu.hint+cann.report");
    assert_eq!(v[0]["rule"], "shape.cann-code-family");
    assert_eq!(v[0]["matched"], "EH9999");
    // 03: the embedded repr is unescaped and classified by its exception class.
    assert_eq!(v[1]["first_causal_error"]["shape"], "wrapped_exception");
    assert_eq!(
        v[1]["first_causal_error"]["message"],
        "Unsupported: Observed exception"
    );
    assert_eq!(v[1]["rule"], "shape.exception-class");
    // 15: capture beats the runtime-looking `stream` / `event` words and the 207005 code.
    assert_eq!(v[2]["rule"], "capture.context");
    assert_eq!(v[2]["matched_line"], 2);
    assert_eq!(
        v[2]["sub_skill"],
        "torch-npugraph-ex-compile-error-diagnosis"
    );
    // 42: the wrapper exception on line 1 is the evidence, the device error the cause.
    let e = &v[3]["first_causal_error"];
    assert_eq!(e["evidence"]["wrapper_line"], 1);
    assert_eq!(e["shape"], "cann_report");
    // 48: an environment problem names the package.
    assert_eq!(v[4]["route"], "environment");
    assert_eq!(v[4]["package"], "NNAL ATB (Ascend Transformer Boost)");
    assert!(v[4]["sub_skill"].is_null());
}

#[test]
fn classify_text_output_exit_codes_and_bad_file() {
    let out = npgx([
        "triage",
        "classify",
        sample("triage/21-hccl-watchdog-collective-timeout.txt")
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1), "a causal error was found");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "route:       runtime-error  (skill npgx-runtime-error; CANNBot: torch-npugraph-ex-runtime-error-diagnosis)"
        ),
        "{text}"
    );
    assert!(text.contains("first causal error (line 1)"), "{text}");
    assert!(text.contains("found by c10.error"), "{text}");
    // Nothing to route: exit 0.
    let dir = scratch("classify-exit");
    let quiet = dir.join("quiet.log");
    fs::write(&quiet, "loading model\nstep 1 done\n").unwrap();
    let out = npgx(["triage", "classify", quiet.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    // An unreadable input: exit 2, named on stderr, the other files still classified.
    let out = npgx([
        "triage",
        "classify",
        "--format",
        "json",
        "/nonexistent/x.log",
        quiet.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/x.log"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["items"].as_array().unwrap().len(), 1);
    assert_eq!(v["errors"][0]["file"], "/nonexistent/x.log");
}

#[test]
fn classify_streams_a_huge_file_without_newlines_in_bounded_memory() {
    let dir = scratch("huge");
    let big = dir.join("no-newline.log");
    // 2.5 GB of NUL bytes without a newline, then a final short line.
    sparse_file(&big, 2_500_000_000, b"\nValueError: after the blob\n");
    let (code, stdout, peak_kib) = npgx_peak_rss([
        "triage",
        "classify",
        "--format",
        "json",
        big.to_str().unwrap(),
    ]);
    fs::remove_file(&big).unwrap();
    assert_eq!(code, Some(1), "{}", String::from_utf8_lossy(&stdout));
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    let item = &v["items"][0];
    assert_eq!(item["first_causal_error"]["line"], 2, "{item:#}");
    let notes = item["notes"].to_string();
    assert!(notes.contains("NUL bytes"), "{notes}");
    assert!(notes.contains("only their head was read"), "{notes}");
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}

#[test]
fn classify_reads_garbage_and_non_utf8_as_undetermined() {
    let dir = scratch("garbage");
    let junk = dir.join("junk.bin");
    let bytes: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    fs::write(&junk, &bytes).unwrap();
    let latin1 = dir.join("latin1.log");
    fs::write(&latin1, b"caf\xe9 \xff\xfe ok\nno error here\n").unwrap();
    let items = classify_items(&[junk, latin1], 0);
    for item in &items {
        assert_eq!(item["route"], "undetermined", "{item:#}");
        assert!(item["first_causal_error"].is_null());
    }
}

/// A scratch directory under the target dir, fresh for each test.
pub(crate) fn scratch(name: &str) -> PathBuf {
    let d = repo().join("target/test-triage").join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

/// A tree as run_triage.sh leaves it: steps 1–4 passed, step 5 failed with a CANN report;
/// TORCH_COMPILE_DEBUG output nested one level deeper (the script's quirk).
fn step5_tree(root: &Path) {
    write(&root.join("env.txt"), "torch: 2.7.1\ntorch_npu: 2.7.1.post1\ntorchair: 0.1\nnot found /usr/local/Ascend/ascend-toolkit/latest/version.cfg\n");
    for s in [
        "step1-eager",
        "step2-compile-eager",
        "step3-compile-aot_eager",
        "step4-npugraph_ex-force_eager",
    ] {
        write(&root.join(s).join("stdout_stderr.log"), "ok\n");
        write(&root.join(s).join("SUCCESS"), "");
        fs::create_dir_all(root.join(s).join("ascend_plog")).unwrap();
    }
    fs::create_dir_all(root.join("step4-npugraph_ex-force_eager/torch_compile_debug/torch_compile_debug/run_2026_01_01_00_00_00_000000-pid_7")).unwrap();
    fs::create_dir_all(root.join("step5-npugraph_ex/torch_compile_debug/torch_compile_debug/run_2026_01_01_00_00_10_000000-pid_8/npugraph_ex")).unwrap();
    write(
        &root.join("step5-npugraph_ex/stdout_stderr.log"),
        "loading\nTraceback (most recent call last):\n  File \"m.py\", line 3, in <module>\n    y = c(x)\nRuntimeError: call aclnnMatmul failed, detail:EZ9999: Inner Error!\n        The error from device(chipId:0, dieId:0), serial number is 3, an exception occurred during AICORE execution.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_proc.cc][LINE:1250]\n        TraceBack (most recent call last):\n        rtStreamSynchronize execute failed[FUNC:x][FILE:y][LINE:1]\n",
    );
    write(&root.join("step5-npugraph_ex/ascend_plog/debug/plog/plog-8_20260101000010000.log"), "[ERROR] RUNTIME(8,python):2026-01-01-00:00:10.000.000 [device_error_proc.cc:1250]8 ProcessStarsCoreErrorInfo:aicore error\n");
    write(
        &root.join("first_failure.txt"),
        "step5-npugraph_ex exit_code=1\n",
    );
    fs::create_dir_all(root.join("scripts")).unwrap();
}

#[test]
fn analyze_step5_tree_routes_by_keywords_with_force_eager_note() {
    let root = scratch("analyze-step5");
    step5_tree(&root);
    let v = npgx_json(
        [
            "triage",
            "analyze",
            "--format",
            "json",
            root.to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(v["complete"], true, "{v:#}");
    assert_eq!(v["first_failure"]["step"], "step5-npugraph_ex");
    assert_eq!(v["route"], "runtime-error");
    assert_eq!(v["sub_skill"], "torch-npugraph-ex-runtime-error-diagnosis");
    // The wrapper only says the call failed: the report's device line under it is the error,
    // the wrapper its evidence.
    let e = &v["evidence"]["first_causal_error"];
    assert_eq!(e["line"], 6);
    assert_eq!(e["evidence"]["wrapper_line"], 5);
    assert_eq!(
        e["message"],
        "EZ9999: The error from device(chipId:0, dieId:0), serial number is 3, an exception occurred during AICORE execution."
    );
    let notes = v["notes"].to_string();
    assert!(notes.contains("only with force_eager=False"), "{notes}");
    let paths: Vec<&str> = v["handoff_paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert!(paths[0].ends_with("step4-npugraph_ex-force_eager/torch_compile_debug/torch_compile_debug/run_2026_01_01_00_00_00_000000-pid_7"));
    assert!(paths[1].ends_with("run_2026_01_01_00_00_10_000000-pid_8"));
    assert_eq!(v["versions"]["torch_npu"], "2.7.1.post1");
    // The tree is not modified by analyze.
    assert!(!root.join("triage_report.md").exists());
    // Markdown handoff names the rule, the evidence line and the sub-skill.
    let out = npgx(["triage", "analyze", root.to_str().unwrap()]);
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains(
            "- Route: **runtime-error** → skill `npgx-runtime-error` (CANNBot: `torch-npugraph-ex-runtime-error-diagnosis`)"
        ),
        "{md}"
    );
    assert!(
        md.contains("First causal error at `step5-npugraph_ex/stdout_stderr.log:6`"),
        "{md}"
    );
}

#[test]
fn analyze_reports_incomplete_and_out_of_order_trees() {
    let root = scratch("analyze-incomplete");
    step5_tree(&root);
    fs::remove_file(root.join("step2-compile-eager/SUCCESS")).unwrap();
    fs::remove_dir_all(root.join("step3-compile-aot_eager/ascend_plog")).unwrap();
    fs::remove_file(root.join("step4-npugraph_ex-force_eager/stdout_stderr.log")).unwrap();
    let v = npgx_json(
        [
            "triage",
            "analyze",
            "--format",
            "json",
            root.to_str().unwrap(),
        ],
        1,
    );
    assert_eq!(v["complete"], false);
    let problems: Vec<String> = v["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        problems,
        vec![
            "step3-compile-aot_eager: ascend_plog/ is missing — re-run this step".to_string(),
            "step4-npugraph_ex-force_eager: stdout_stderr.log is missing — re-run this step"
                .to_string(),
            "step2-compile-eager has no SUCCESS marker, but the first failure is step5-npugraph_ex"
                .to_string(),
        ]
    );

    let root = scratch("analyze-order");
    step5_tree(&root);
    write(
        &root.join("first_failure.txt"),
        "step2-compile-eager exit_code=1\n",
    );
    let v = npgx_json(
        [
            "triage",
            "analyze",
            "--format",
            "json",
            root.to_str().unwrap(),
        ],
        1,
    );
    let problems = v["problems"].to_string();
    assert!(problems.contains("steps out of order: step3-compile-aot_eager has output after the first failure (step2-compile-eager)"), "{problems}");
    assert_eq!(v["route"], "compile-error");
    assert_eq!(v["rule"], "step.pre-classification");

    let root = scratch("analyze-bad-first-failure");
    step5_tree(&root);
    write(&root.join("first_failure.txt"), "step9 exit_code=1\n");
    let out = npgx(["triage", "analyze", root.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("first_failure.txt:1: unknown step name `step9`"));
}

// ---------------------------------------------------------------------------------------------
// Real runs.

/// The interpreter with PyTorch (see [`crate::common::python_with`]).
pub(crate) fn torch_python() -> String {
    crate::common::python_with("torch")
}

fn triage_run(
    out: &Path,
    script: &str,
    cmd: &str,
    extra_env: &[(&str, &str)],
    tail: &[&str],
) -> (i32, Value, PathBuf) {
    triage_cmd("run", out, script, cmd, extra_env, tail)
}

fn triage_cmd(
    sub: &str,
    out: &Path,
    script: &str,
    cmd: &str,
    extra_env: &[(&str, &str)],
    tail: &[&str],
) -> (i32, Value, PathBuf) {
    let script = repo().join("testdata/triage").join(script);
    let mut c = Command::new(env!("CARGO_BIN_EXE_npgx"));
    c.args([
        "triage",
        sub,
        "--format",
        "json",
        "--timeout",
        "300",
        "--out",
    ])
    .arg(out)
    .arg("--cmd")
    .arg(cmd)
    .arg(&script)
    .args(tail);
    for (k, v) in extra_env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    let args: Vec<std::ffi::OsString> = c.get_args().map(Into::into).collect();
    crate::common::keep_documents(&args, &o.stdout);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    let root = PathBuf::from(v["run"]["root"].as_str().unwrap());
    (o.status.code().unwrap_or(-1), v, root)
}

pub(crate) fn read(p: &Path) -> String {
    fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test.sh installs it and runs this"]
fn run_eager_failure_stops_at_step1() {
    let py = torch_python();
    let out = scratch("run-eager-break");
    let (code, v, root) = triage_run(
        &out,
        "eager_break.py",
        &format!("{py} {{script}}"),
        &[],
        &[],
    );
    assert_eq!(code, 1, "{v:#}");
    assert!(root.starts_with(
        out.canonicalize()
            .unwrap()
            .join("torch-npugraph-ex-triage-logs")
    ));
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    let (stamp, pid) = name.split_once("-pid").unwrap();
    assert_eq!(stamp.len(), "20260101-120000".len(), "{name}");
    let digits_and_dash = stamp.bytes().enumerate().all(|(i, b)| {
        if i == 8 {
            b == b'-'
        } else {
            b.is_ascii_digit()
        }
    });
    assert!(digits_and_dash, "{name}");
    assert!(pid.parse::<u32>().is_ok(), "{name}");
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step1-eager exit_code=1\n"
    );
    assert!(!root.join("step2-compile-eager").exists());
    assert_eq!(
        fs::read(root.join("scripts/original.py")).unwrap(),
        fs::read(repo().join("testdata/triage/eager_break.py")).unwrap()
    );
    let step1 = read(&root.join("scripts/step1-eager.py"));
    assert!(step1.contains("\ncompiled = model\n"), "{step1}");
    let a = &v["analysis"];
    assert_eq!(a["route"], "compile-error");
    assert!(a["notes"].to_string().contains("eager already crashes"));
    let e = &a["evidence"]["first_causal_error"];
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.starts_with("RuntimeError: ")
            && msg.contains("mat1 and mat2 shapes cannot be multiplied"),
        "{e:#}"
    );
    let warnings = read(&root.join("warnings.txt"));
    assert_eq!(warnings, "step1-eager ascend_plog missing or empty\n");
    let env = read(&root.join("env.txt"));
    assert!(env.contains("\ntorch: 2."), "{env}");
    assert!(
        env.contains("torch_npu: not available (ModuleNotFoundError)"),
        "{env}"
    );
    assert!(root.join("triage_report.md").exists());
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test.sh installs it and runs this"]
fn run_graph_break_under_fullgraph_fails_step2() {
    let py = torch_python();
    let out = scratch("run-graph-break");
    let (code, v, root) = triage_run(
        &out,
        "graph_break_fullgraph.py",
        &format!("{py} {{script}}"),
        &[],
        &[],
    );
    assert_eq!(code, 1);
    assert!(root.join("step1-eager/SUCCESS").exists());
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step2-compile-eager exit_code=1\n"
    );
    let step2 = read(&root.join("scripts/step2-compile-eager.py"));
    assert!(
        step2.contains("    backend=\"eager\",  # the backend under triage\n    fullgraph=True,\n"),
        "{step2}"
    );
    let a = &v["analysis"];
    assert_eq!(a["route"], "compile-error");
    let msg = a["evidence"]["first_causal_error"]["message"]
        .as_str()
        .unwrap();
    assert!(msg.starts_with("torch._dynamo.exc.Unsupported"), "{msg}");
    // TORCH_LOGS=+all reached the child: the log has glog-prefixed dynamo lines.
    let log = read(&root.join("step2-compile-eager/stdout_stderr.log"));
    assert!(log.contains("torch/_dynamo/"), "TORCH_LOGS output missing");
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test.sh installs it and runs this"]
fn run_passes_eager_steps_then_meets_missing_npugraph_ex() {
    let py = torch_python();
    let out = scratch("run-missing-backend");
    let (code, v, root) = triage_run(
        &out,
        "missing_backend.py",
        &format!("{py} {{script}}"),
        &[],
        &[],
    );
    assert_eq!(code, 1);
    for s in [
        "step1-eager",
        "step2-compile-eager",
        "step3-compile-aot_eager",
    ] {
        assert!(root.join(s).join("SUCCESS").exists(), "{s}");
    }
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step4-npugraph_ex-force_eager exit_code=1\n"
    );
    assert!(root
        .join("step4-npugraph_ex-force_eager/torch_compile_debug")
        .is_dir());
    let a = &v["analysis"];
    assert_eq!(a["route"], "environment", "{a:#}");
    assert!(a["notes"].to_string().contains("environment problem"));
    // Steps 2/3 dropped the npugraph_ex options; the plan says which.
    let steps = &v["run"]["plan"]["steps"];
    assert_eq!(
        steps[1]["options"],
        serde_json::json!({"action": "dropped", "keys": ["static_kernel_compile"], "text": "{\"static_kernel_compile\": True}"})
    );
    assert_eq!(v["run"]["plan"]["call"]["enclosing_function"], "build");
}

#[test]
fn timeout_stops_the_whole_process_group() {
    let out = scratch("run-timeout");
    let pidfile = out.join("child.pid");
    let started = Instant::now();
    let o = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args([
            "triage",
            "run",
            "--timeout",
            "2",
            "--cmd",
            "python3 {script}",
            "--out",
        ])
        .arg(&out)
        .arg(repo().join("testdata/triage/sleeper.py"))
        .arg("--")
        .arg(&pidfile)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(started.elapsed() < Duration::from_secs(30));
    let root = fs::read_dir(out.join("torch-npugraph-ex-triage-logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step1-eager exit_code=124\nreason=timeout after 2s\n"
    );
    assert!(read(&root.join("step1-eager/stdout_stderr.log")).contains("child started"));
    let child: i32 = read(&pidfile).trim().parse().unwrap();
    assert!(
        !Path::new(&format!("/proc/{child}")).exists()
            || read(Path::new(&format!("/proc/{child}/stat"))).contains(" Z "),
        "the step's child {child} survived"
    );
}

#[test]
fn ctrl_c_stops_the_step_and_keeps_what_was_collected() {
    let out = scratch("run-interrupt");
    let pidfile = out.join("child.pid");
    let mut npgx = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(["triage", "run", "--cmd", "python3 {script}", "--out"])
        .arg(&out)
        .arg(repo().join("testdata/triage/sleeper.py"))
        .arg("--")
        .arg(&pidfile)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while !pidfile.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let status = Command::new("kill")
        .args(["-INT", &npgx.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let o = npgx.wait().unwrap();
    assert_eq!(o.code(), Some(130));
    let root = fs::read_dir(out.join("torch-npugraph-ex-triage-logs"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step1-eager exit_code=130\nreason=interrupted\n"
    );
    assert!(root.join("triage_report.md").exists());
    let child: i32 = read(&pidfile).trim().parse().unwrap();
    assert!(
        !Path::new(&format!("/proc/{child}")).exists()
            || read(Path::new(&format!("/proc/{child}/stat"))).contains(" Z "),
        "the step's child {child} survived"
    );
}

#[test]
fn run_rejects_scripts_without_compile_call_or_with_syntax_errors() {
    let out = scratch("run-bad-scripts");
    let bad = out.join("bad.py");
    write(&bad, "import torch\nprint(1)\n");
    let o = npgx([
        "triage",
        "run",
        "--out",
        out.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.py: no torch.compile(...) call"));
    write(&bad, "def f(:\n    pass\n");
    let o = npgx([
        "triage",
        "run",
        "--out",
        out.to_str().unwrap(),
        bad.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("bad.py: Python syntax error at line 1, column 7"));
    assert!(!out.join("torch-npugraph-ex-triage-logs").exists());
}

// The slow half of `--compare-outputs` (route performance by the timings, step 5's fastest call
// at least the double's 0.05 s sleep) is checked where the performance skill runs the same
// ladder: scripts/check_skills.py's fixture for npgx-performance expects it (tests/it/skills.rs).

#[test]
fn analyze_falls_back_to_the_plog_when_the_screen_log_has_no_error() {
    let root = scratch("analyze-plog-fallback");
    step5_tree(&root);
    write(
        &root.join("step5-npugraph_ex/stdout_stderr.log"),
        "loading model\nstep 1\n",
    );
    let v = npgx_json(
        [
            "triage",
            "analyze",
            "--format",
            "json",
            root.to_str().unwrap(),
        ],
        0,
    );
    assert_eq!(v["route"], "runtime-error", "{v:#}");
    assert_eq!(v["matched"], "CANN plog");
    let ev = &v["evidence"];
    assert!(ev["file"]
        .as_str()
        .unwrap()
        .ends_with("ascend_plog/debug/plog/plog-8_20260101000010000.log"));
    assert_eq!(ev["first_causal_error"]["line"], 1);
    assert_eq!(ev["first_causal_error"]["shape"], "plog_record");
}

// ---------------------------------------------------------------------------------------------
// Bisect (issue 14) and the seeded steps.

/// `triage <sub>` on `script` with the test double in `options` mode and `env` on top.
pub(crate) fn double_options(
    sub: &str,
    name: &str,
    script: &str,
    env: &[(&str, &str)],
    tail: &[&str],
) -> (i32, Value, PathBuf) {
    let py = torch_python();
    let double = repo().join("testdata/triage/npugraph_ex_double");
    let mut all = vec![
        ("PYTHONPATH", double.to_str().unwrap().to_string()),
        ("NPGX_TEST_DOUBLE", "options".to_string()),
    ];
    all.extend(env.iter().map(|(k, v)| (*k, v.to_string())));
    let all: Vec<(&str, &str)> = all.iter().map(|(k, v)| (*k, v.as_str())).collect();
    triage_cmd(
        sub,
        &scratch(name),
        script,
        &format!("{py} {{script}}"),
        &all,
        tail,
    )
}

/// The variants' names and verdicts, in run order.
pub(crate) fn verdicts(v: &Value) -> Vec<(String, String)> {
    v["bisect"]["variants"]
        .as_array()
        .unwrap_or_else(|| panic!("no variants: {v:#}"))
        .iter()
        .map(|x| {
            (
                x["name"].as_str().unwrap().to_string(),
                x["verdict"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test.sh installs it and runs this"]
fn run_bisect_isolates_a_crash_to_one_option_and_skips_a_rejected_one() {
    // Three of the catalogue's flips run (the others rejected by the double, to keep the test
    // short): the catalogue's order and values are unit tested (src/triage/bisect,
    // flips_go_away_from_the_value_in_force).
    let (code, v, root) = double_options(
        "run",
        "bisect-crash",
        "double_model.py",
        &[
            ("NPGX_TEST_DOUBLE_FAIL_WHEN", "remove_noop_ops=True"),
            (
                "NPGX_TEST_DOUBLE_REJECT",
                "force_recapture,clone_input,reuse_graph_pool_in_same_fx,remove_cat_ops,input_inplace_pass,pattern_fusion_pass,capture_error_mode",
            ),
        ],
        &["--bisect"],
    );
    assert_eq!(code, 1, "{v:#}");
    // The ladder: step 4 (force_eager added to the script's options) passes, step 5 fails.
    assert!(root.join("step4-npugraph_ex-force_eager/SUCCESS").exists());
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step5-npugraph_ex exit_code=1\n"
    );
    let step4 = read(&root.join("scripts/step4-npugraph_ex-force_eager.py"));
    assert!(
        step4.contains("options={\"inplace_pass\": False, \"force_eager\": True}"),
        "{step4}"
    );
    let a = &v["analysis"];
    // The double's error names the capture (a CANN report's route: triage_steps.rs, step 5).
    assert_eq!(a["route"], "compile-error", "{a:#}");
    assert!(a["notes"]
        .to_string()
        .contains("only with force_eager=False"));
    // TORCH_COMPILE_DEBUG wrote run_* directly under torch_compile_debug/ (no doubled level).
    let runs = a["handoff_paths"].as_array().unwrap();
    assert!(!runs.is_empty(), "{a:#}");
    for r in runs {
        let r = r.as_str().unwrap();
        assert!(
            r.contains("/torch_compile_debug/run_")
                && !r.contains("torch_compile_debug/torch_compile_debug"),
            "{r}"
        );
    }
    let b = &v["bisect"];
    assert_eq!(b["mode"], "failure");
    assert_eq!(b["outcome"], "isolated", "{b:#}");
    assert_eq!(
        b["implicated"],
        serde_json::json!(["remove_noop_ops=False"])
    );
    // The order of the catalogue, each flipped away from the value in force (the script sets
    // inplace_pass=False), clone_input skipped because the installed backend has no such key.
    let got = verdicts(&v);
    let names: Vec<&str> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "clone_output-True",
            "remove_noop_ops-False",
            "inplace_pass-True",
        ]
    );
    for (n, verdict) in &got {
        let want = if n == "remove_noop_ops-False" {
            "disappears"
        } else {
            "stays"
        };
        assert_eq!(verdict, want, "{n}");
    }
    // Every key the installed backend rejects is skipped with that reason, in catalogue order.
    let skipped: Vec<(&str, &str)> = b["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["key"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(
        skipped.iter().map(|(k, _)| *k).collect::<Vec<_>>(),
        [
            "force_recapture",
            "clone_input",
            "reuse_graph_pool_in_same_fx",
            "remove_cat_ops",
            "input_inplace_pass",
            "pattern_fusion_pass",
            "capture_error_mode",
        ]
    );
    assert!(
        skipped.iter().all(|(_, r)| r.contains("rejects")),
        "{skipped:?}"
    );
    assert_eq!(b["runs"], 3);
    // The variant directories hold what a step directory holds.
    let pass = root.join("bisect/remove_noop_ops-False");
    assert!(pass.join("SUCCESS").exists());
    assert!(pass.join("ascend_plog").is_dir());
    assert!(!read(&pass.join("stdout_stderr.log")).is_empty());
    let script = read(&pass.join("remove_noop_ops-False.py"));
    assert!(
        script.contains("options={\"inplace_pass\": False, \"remove_noop_ops\": False}"),
        "{script}"
    );
    assert!(
        script.starts_with("# npgx triage: the same random state"),
        "{script}"
    );
    assert_eq!(
        read(&root.join("bisect/clone_output-True/exit_code")),
        "1\n"
    );
    assert!(!root.join("bisect/clone_input-False").exists());
    let report = read(&root.join("triage_report.md"));
    assert!(
        report.contains("| variant | option changed | result | first causal error | seconds |"),
        "{report}"
    );
    assert!(report.contains("| `bisect/remove_noop_ops-False` | remove_noop_ops: True → False | failure disappears | — |"), "{report}");
    assert!(
        report.contains("- skipped `clone_input`: the installed npugraph_ex rejects it"),
        "{report}"
    );
    assert!(report.contains("**Conclusion:** passes only with remove_noop_ops=False → the no-op removal pass is implicated; hand off to torch-npugraph-ex-compile-error-diagnosis with these two run directories:"), "{report}");
}

#[test]
#[ignore = "needs PyTorch (CPU); scripts/test.sh installs it and runs this"]
fn accuracy_ladder_hands_its_dumps_to_dump_compare_and_bisect_isolates_clone_output() {
    let (code, v, root) = double_options(
        "bisect",
        "bisect-accuracy",
        "double_model.py",
        &[
            ("NPGX_TEST_DOUBLE_OFF_WHEN", "clone_output=False"),
            // Two variants keep the test short (one implicated, one not; the script sets
            // inplace_pass itself, so it stays); the catalogue's order is checked above and by
            // the unit tests.
            (
                "NPGX_TEST_DOUBLE_REJECT",
                "force_recapture,clone_input,reuse_graph_pool_in_same_fx,remove_noop_ops,remove_cat_ops,input_inplace_pass,pattern_fusion_pass",
            ),
        ],
        &["--compare-outputs", "--dump-tensors"],
    );
    assert_eq!(code, 0, "{v:#}");
    // The ladder: npgx set the dump options on steps 4 and 5 only, into each step's own
    // directory, and wrapped the compiled callable to capture its outputs (--compare-outputs).
    let step5 = read(&root.join("scripts/step5-npugraph_ex.py"));
    assert!(step5.contains("compiled = __import__(\"npgx_capture\").wrap(torch.compile(model, backend=\"npugraph_ex\", options={\"inplace_pass\": False, \"dump_tensor_data\": True, \"data_dump_dir\": __import__(\"os\").environ[\"NPGX_DUMP_DIR\"]}))"), "{step5}");
    assert!(!read(&root.join("scripts/step3-compile-aot_eager.py")).contains("dump_tensor_data"));
    assert!(root.join("scripts/npgx_capture.py").exists());
    assert!(root.join("step1-eager/outputs/call0_out0.npy").exists());
    let a = &v["analysis"];
    assert_eq!(a["route"], "accuracy", "{a:#}");
    assert_eq!(a["rule"], "compare.outputs");
    let outputs = &a["comparison"]["outputs"];
    // step 4 (force_eager) matches eager; step 5 is off: dumping, the double scales the first
    // computing node's output by 1 + 1e-2, which reaches the outputs as about 1e-2.
    assert_eq!(outputs[0]["allclose"], true);
    assert_eq!(outputs[1]["allclose"], false);
    let max_abs = outputs[1]["max_abs_error"].as_f64().unwrap();
    assert!((2e-3..2e-2).contains(&max_abs), "{max_abs}");
    assert_eq!(outputs[1]["tensors"], 3);
    assert!(a["notes"]
        .to_string()
        .contains("comes from ACL graph capture / replay"));
    let d = &a["dump_comparison"];
    assert!(
        d["golden"]
            .as_str()
            .unwrap()
            .contains("step4-npugraph_ex-force_eager"),
        "{d:#}"
    );
    assert!(
        d["target"].as_str().unwrap().contains("step5-npugraph_ex"),
        "{d:#}"
    );
    // The double perturbs the first computing node by 1 %: it is where step 5 first diverges,
    // and (no inputs in .pt dumps) the origin; the graph input matches.
    let first = d["first_divergence"]["op_name"]
        .as_str()
        .expect("a divergence");
    assert_eq!(d["origin"]["op_name"], first, "{d:#}");
    assert_eq!(d["origin_evidence"], "none");
    let step5_dumps = root.join("step5-npugraph_ex/worldsize1_global_rank0");
    let dumped: Vec<String> = std::fs::read_dir(&step5_dumps)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        dumped
            .iter()
            .any(|n| n.starts_with(&format!("{first}_device_0_"))),
        "{first} not among {dumped:?}"
    );
    assert_eq!(d["pairs"].as_u64(), Some(dumped.len() as u64));
    assert!(
        d["failed"].as_u64().unwrap() >= 2,
        "the error propagates: {d:#}"
    );
    let report = read(&root.join("triage_report.md"));
    assert!(
        report.contains(&format!("npgx repro --path accuracy --op {first}")),
        "{report}"
    );
    // The bisect.
    assert_eq!(v["schema"], "npgx.triage-run");
    assert_eq!(v["analysis"]["route"], "accuracy");
    // double_model.py seeds nothing: every step and variant starts from npgx's seed, so eager
    // repeats itself and the variants that do not turn graph mode off match step 4 (below).
    assert_eq!(
        v["analysis"]["comparison"]["eager_repeat"]["allclose"],
        true
    );
    assert!(root.join("step1-eager-repeat/SUCCESS").exists());
    assert!(read(&root.join("env.txt")).contains("\nseed: 0\n"));
    assert_eq!(v["analysis"]["versions"]["seed"], 0);
    let b = &v["bisect"];
    assert_eq!(b["mode"], "accuracy");
    assert_eq!(b["outcome"], "isolated", "{b:#}");
    assert_eq!(b["implicated"], serde_json::json!(["clone_output=True"]));
    assert_eq!(
        verdicts(&v),
        [
            ("clone_output-True".to_string(), "matches".to_string()),
            ("inplace_pass-True".to_string(), "differs".to_string()),
        ]
    );
    // One more run with data dumps, the passing variant's, compared by dump-compare with step
    // 5's own dumps (the ladder's).
    assert_eq!(b["runs"], 3, "{b:#}");
    let d = &b["dump_comparison"];
    assert!(
        d["golden"]
            .as_str()
            .unwrap()
            .contains("bisect/dump-clone_output-True"),
        "{d:#}"
    );
    let target = d["target"].as_str().unwrap();
    assert!(
        target.contains("step5-npugraph_ex") && !target.contains("bisect/"),
        "{d:#}"
    );
    assert!(!root.join("bisect/dump-step5").exists());
    let node = d["first_divergence"]["op_name"]
        .as_str()
        .expect("a divergence");
    let conclusion = b["conclusion"].as_str().unwrap();
    assert!(conclusion.starts_with("matches step 4 only with clone_output=True → outputs are overwritten by a later replay"), "{conclusion}");
    assert!(
        conclusion.contains(&format!("diverge first at FX node `{node}`")),
        "{conclusion}"
    );
}

/// Issue 33: every routed sample says what to do, each remedy with its source; a CANN report's
/// own `Solution:` comes first, quoted with its line; `plog` and `aicore` carry the same remedies,
/// and the text output prints them as a `do:` block.
#[test]
fn remedies_name_their_source_and_quote_the_report() {
    let expected = all_expectations();
    let paths: Vec<PathBuf> = expected
        .iter()
        .map(|(d, e)| sample(&format!("{d}/{}", e.file)))
        .collect();
    for (p, item) in paths.iter().zip(classify_items(&paths, 1)) {
        if item["route"] == "undetermined" {
            continue;
        }
        let remedy = item["remedy"].as_array().cloned().unwrap_or_default();
        assert!(!remedy.is_empty(), "{}: no remedy", p.display());
        for r in &remedy {
            assert!(
                r["do"].as_str().is_some_and(|s| !s.is_empty())
                    && r["source"].as_str().is_some_and(|s| !s.is_empty()),
                "{}: {r}",
                p.display()
            );
        }
    }
    // logs/31: EL0004 with `Possible Cause:` (line 3) and `Solution:` (line 4).
    let oom = sample("logs/31-oom-el0004-memory-allocation-failure.log");
    let item = &classify_items(std::slice::from_ref(&oom), 1)[0];
    let r = &item["remedy"];
    assert_eq!(
        (r[0]["source"].as_str(), r[0]["line"].as_u64()),
        (Some("CANN report"), Some(4))
    );
    assert_eq!(r[2]["matched"], "nature:memory");
    assert_eq!(item["kind"], "resource");
    let out = npgx(["plog", "--format", "json", oom.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["first_causal"]["remedy"], *r);
    let text = npgx(["triage", "classify", oom.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("  do:\n    - Close applications not in use. [CANN report, line 4]"),
        "{text}"
    );
    // The report's `Possible Cause:` is printed as one, not as something to do.
    assert!(
        text.contains("    - Possible cause: ") && text.contains("[CANN report, line 3]"),
        "{text}"
    );
    // triage/88: the environment's remedy names the missing CANN function's fix.
    let env = sample("triage/88-env-capture-begin-symbol-missing-markdown-quote-prefix.txt");
    let item = &classify_items(std::slice::from_ref(&env), 1)[0];
    assert_eq!(item["remedy"][0]["matched"], "key:failed to find function");
    assert!(item["why"]
        .as_str()
        .is_some_and(|w| w.starts_with("kind before phase")));
    // aicore: the first device error's remedy, with the file in npgx's own commands.
    let log = sample("logs/13-ptoas-aivec-illegal-instr-0x10-507035.log");
    let out = npgx(["aicore", "--format", "json", log.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = v["remedy"][0]["check"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        checks.iter().any(|c| c.as_str()
            == Some(&format!(
                "npgx repro --from-aicore {} -o <CASE_DIR>",
                log.display()
            ))),
        "{checks:?}"
    );
    // logs/01: a device fault (line 1) whose kernel assertion follows (line 34): the check it
    // names comes first, with its line, in all three commands alike.
    let log = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let item = &classify_items(std::slice::from_ref(&log), 1)[0];
    let r = &item["remedy"];
    assert_eq!(
        (r[0]["matched"].as_str(), r[0]["line"].as_u64()),
        (Some("kernel.assert"), Some(34)),
        "{r:#}"
    );
    assert!(
        r[0]["do"].as_str().is_some_and(|d| d.contains(
            "`(0 <= val && val < this->gxSize_)` at /home/phisik3/Ascend/CANN-7.8/opp/built-in/op_impl/ai_core/tbe/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h:137 failed (Index 100000000 out of range[0 655360)!)"
        )),
        "{r:#}"
    );
    assert_eq!(r[1]["matched"], "nature:device-fault");
    let out = npgx(["plog", "--format", "json", log.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["first_causal"]["remedy"], *r);
    // aicore gives the same remedies without the checks that rerun `npgx aicore` itself.
    let out = npgx(["aicore", "--format", "json", log.to_str().unwrap()]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut own = r.clone();
    for x in own.as_array_mut().unwrap() {
        let checks = x.as_object_mut().unwrap();
        let kept: Vec<Value> = checks["check"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| !c.as_str().unwrap().starts_with("npgx aicore "))
            .cloned()
            .collect();
        if kept.is_empty() {
            checks.remove("check");
        } else {
            checks.insert("check".into(), Value::Array(kept));
        }
    }
    assert_eq!(v["remedy"], own);
}

/// A kernel assertion is quoted for the device fault it belongs to — `aicore`'s grouping: the
/// same process, inside the fault's record — in `triage classify`, `plog` and `aicore` alike.
/// Variants of logs/01 (fault at line 1, its assertion at line 34): five more failing cores
/// before it (more candidates than the ranking keeps), the assertion printed by another
/// process, and a second fault (another stream and task) between the first and the assertion.
#[test]
fn a_kernel_assertion_is_quoted_only_for_its_own_device_fault() {
    let log =
        std::fs::read_to_string(sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    let core = lines[2];
    let mut many = lines.clone();
    for _ in 0..5 {
        many.insert(3, core);
    }
    let other_pid: Vec<String> = lines
        .iter()
        .map(|l| {
            if l.contains("[ASSERT]") {
                l.replace("IDEDD(155320,", "IDEDD(999,")
                    .replace("[tid:155320]", "[tid:999]")
            } else {
                (*l).to_string()
            }
        })
        .collect();
    let mut two = lines[..17].to_vec();
    let second: Vec<String> = lines[..17]
        .iter()
        .map(|l| {
            l.replace("stream_id=2", "stream_id=7")
                .replace("task_id=1,", "task_id=9,")
        })
        .collect();
    two.extend(second.iter().map(String::as_str));
    two.extend(&lines[17..]);
    // The same log after 1000 lines of another process: read again around the fault only.
    let filler =
        "[INFO] GE(7,python3):2025-05-08-09:56:00.000.000 [ge.cc:1]7 Run:[INIT][DEFAULT]step";
    let mut deep = vec![filler; 1000];
    deep.extend(&lines);
    let dir = scratch("kernel-assert-variants");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, text, expected) in [
        ("many-cores.log", many.join("\n"), Some(39)),
        ("other-pid.log", other_pid.join("\n"), None),
        ("two-faults.log", two.join("\n"), None),
        ("deep.log", deep.join("\n"), Some(1034)),
    ] {
        let p = dir.join(name);
        std::fs::write(&p, text + "\n").unwrap();
        let path = p.to_str().unwrap();
        let item = &classify_items(std::slice::from_ref(&p), 1)[0];
        let v = npgx(["plog", "--format", "json", path]);
        let plog: Value = serde_json::from_slice(&v.stdout).unwrap();
        let v = npgx(["aicore", "--format", "json", path]);
        let aicore: Value = serde_json::from_slice(&v.stdout).unwrap();
        for (what, r) in [
            ("classify", &item["remedy"]),
            ("plog", &plog["first_causal"]["remedy"]),
            ("aicore", &aicore["remedy"]),
        ] {
            let first = (r[0]["matched"].as_str(), r[0]["line"].as_u64());
            match expected {
                Some(line) => assert_eq!(
                    first,
                    (Some("kernel.assert"), Some(line)),
                    "{name} {what}: {r:#}"
                ),
                None => assert!(
                    !r.to_string().contains("kernel.assert"),
                    "{name} {what}: {r:#}"
                ),
            }
        }
    }
}
