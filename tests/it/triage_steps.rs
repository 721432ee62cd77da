//! `npgx triage steps ROOT CMD_TEMPLATE` against `scripts/run_triage_contract.sh`, a bash
//! transcription of run_triage.sh's contract written from the issue's text: both run on copies
//! of the same ROOT (agent-made step scripts: PyTorch on CPU for steps 1–3, the labelled test
//! double `testdata/triage/npugraph_ex_double/` for steps 4–5) and must leave the same files,
//! the same `first_failure.txt` and `warnings.txt`, the same variables seen by each step, and
//! exit with the same code.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use walkdir::WalkDir;

use crate::common::repo;
use crate::triage::{read, scratch, torch_python};

/// Prints, on lines the comparison keeps, what the contract sets on each step's process and the
/// arguments the step got (ROOT written as `<ROOT>`, so the two runs' lines compare).
const PREAMBLE: &str = r#"import os, sys
_root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _k in ("TORCH_LOGS", "TORCH_COMPILE_DEBUG", "TORCH_COMPILE_DEBUG_DIR", "ASCEND_PROCESS_LOG_PATH",
           "ASCEND_GLOBAL_LOG_LEVEL", "ASCEND_SLOG_PRINT_TO_STDOUT", "PYTHONUNBUFFERED"):
    print("CONTRACT:", _k, "=", os.environ.get(_k, "<unset>").replace(_root, "<ROOT>"), flush=True)
print("CONTRACT: argv", [a.replace(_root, "<ROOT>") for a in sys.argv], flush=True)
"#;

/// Steps 4–5 only.
const PLOG_DOUBLE: &str = r#"# TEST DOUBLE: stands in for CANN, which writes plogs into ASCEND_PROCESS_LOG_PATH on an NPU.
_plog = os.path.join(os.environ["ASCEND_PROCESS_LOG_PATH"], "plog")
os.makedirs(_plog, exist_ok=True)
with open(os.path.join(_plog, "plog-%d_20260101000000000.log" % os.getpid()), "w") as _f:
    _f.write("[INFO] GE(%d,python):2026-01-01-00:00:00.000.000 [ge_api.cc:1]%d test double\n"
             % (os.getpid(), os.getpid()))
"#;

const MODEL: &str = r#"import torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU())
x = torch.randn(2, 4)
"#;

/// Step 3 where the model breaks the graph under `fullgraph=True`.
const STEP3_BREAK: &str = r#"def f(x):
    y = model(x)
    torch._dynamo.graph_break()
    return y + 1
compiled = torch.compile(f, backend="aot_eager", fullgraph=True)
print(compiled(x).sum().item())
"#;
const STEP5: &str =
    "compiled = torch.compile(model, backend=\"npugraph_ex\")\nprint(compiled(x).sum().item())\n";

const STEP_NAMES: [&str; 5] = [
    "step1-eager",
    "step2-compile-eager",
    "step3-compile-aot_eager",
    "step4-npugraph_ex-force_eager",
    "step5-npugraph_ex",
];

/// A torch step script: the preamble, the model, the step's body (and the plog double for
/// steps 4–5).
fn torch_step(number: usize, body: &str) -> String {
    let plog = if number >= 4 { PLOG_DOUBLE } else { "" };
    format!("{PREAMBLE}{plog}{MODEL}{body}")
}

/// Writes `scripts` (step number → source) into `ROOT/scripts/` of a fresh ROOT.
fn make_root(dir: &Path, scripts: &[(usize, String)]) -> PathBuf {
    let root = dir.join("ROOT");
    fs::create_dir_all(root.join("scripts")).unwrap();
    for (n, text) in scripts {
        let p = root
            .join("scripts")
            .join(format!("{}.py", STEP_NAMES[n - 1]));
        fs::write(p, text).unwrap();
    }
    root
}

/// One run's result: its exit code, the npgx JSON (npgx only), stderr.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

fn run_contract(args: &[&str], env: &[(&str, &str)], python: &str) -> Ran {
    let mut c = Command::new("bash");
    c.arg(repo().join("scripts/run_triage_contract.sh"))
        .args(args)
        .env("PYTHON", python)
        .env_remove("PYTHONUNBUFFERED");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("bash runs");
    Ran {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

fn run_npgx(args: &[&str], env: &[(&str, &str)]) -> Ran {
    let mut c = Command::new(env!("CARGO_BIN_EXE_npgx"));
    // Neither run may inherit a variable the contract says npgx does not set.
    c.args(["triage", "steps", "--format", "json"])
        .args(args)
        .env_remove("PYTHONUNBUFFERED");
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().expect("npgx runs");
    Ran {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// The tree as the comparison sees it: relative path → what of its content is compared.
///
/// Digits in names under `ascend_plog/` and `torch_compile_debug/` become `N` (pids and
/// timestamps), and `torch_compile_debug/` is followed down to its `run_*` directories only, its
/// directories only (what PyTorch writes there depends on its version and names files at
/// random, not on the contract). Contents compared:
/// `first_failure.txt`, `warnings.txt` and `SUCCESS` whole, the `CONTRACT:` lines of each
/// `stdout_stderr.log`; `env.txt` by name only (its format is each writer's own).
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for e in WalkDir::new(root).min_depth(1) {
        let e = e.unwrap();
        let rel = e.path().strip_prefix(root).unwrap();
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        if parts[0] == "scripts" || parts[0] == "triage_report.md" {
            continue;
        }
        let in_debug = parts.iter().position(|p| p == "torch_compile_debug");
        if let Some(i) = in_debug {
            // Directories only, down to the first run_* one.
            let run = parts[i..].iter().position(|p| p.starts_with("run_"));
            if !e.file_type().is_dir() || run.is_some_and(|r| parts.len() > i + r + 1) {
                continue;
            }
        }
        // Components below the step's ascend_plog/ or torch_compile_debug/ lose their digits.
        let generic_from = parts
            .iter()
            .position(|p| p == "ascend_plog" || p == "torch_compile_debug")
            .map_or(parts.len(), |i| i + 1);
        let name = parts
            .iter()
            .enumerate()
            .map(|(i, p)| {
                if i >= generic_from {
                    digits_as_n(p)
                } else {
                    p.clone()
                }
            })
            .collect::<Vec<_>>()
            .join("/");
        let content = if e.file_type().is_dir() {
            "<dir>".to_string()
        } else {
            match parts.last().map(String::as_str) {
                Some("first_failure.txt" | "warnings.txt" | "SUCCESS") => read(e.path()),
                Some("stdout_stderr.log") => read(e.path())
                    .lines()
                    .filter(|l| l.starts_with("CONTRACT:"))
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            }
        };
        out.insert(name, content);
    }
    out
}

/// `p` with every run of digits replaced by one `N`.
fn digits_as_n(p: &str) -> String {
    let mut s = String::new();
    let mut last_digit = false;
    for ch in p.chars() {
        if ch.is_ascii_digit() {
            if !last_digit {
                s.push('N');
            }
            last_digit = true;
        } else {
            s.push(ch);
            last_digit = false;
        }
    }
    s
}

/// Runs the transcription and npgx on two copies of a ROOT holding `scripts`, with `template`
/// (`PY` replaced by the interpreter) and `env`; asserts they agree and returns npgx's run, its
/// ROOT and the common snapshot.
fn both(
    name: &str,
    scripts: &[(usize, String)],
    template: &str,
    env: &[(&str, &str)],
    python: &str,
) -> (Ran, PathBuf, BTreeMap<String, String>) {
    let dir = scratch(&format!("steps-{name}"));
    let reference = make_root(&dir.join("contract"), scripts);
    let ours = make_root(&dir.join("npgx"), scripts);
    let template = template.replace("PY", python);
    let want = run_contract(&[reference.to_str().unwrap(), &template], env, python);
    let got = run_npgx(&[ours.to_str().unwrap(), &template], env);
    let (a, b) = (snapshot(&reference), snapshot(&ours));
    assert_eq!(
        got.code, want.code,
        "exit codes differ\nnpgx stderr:\n{}\ncontract stderr:\n{}",
        got.stderr, want.stderr
    );
    assert_eq!(
        b, a,
        "trees differ (left npgx, right the contract)\nnpgx stderr:\n{}",
        got.stderr
    );
    assert!(ours.join("triage_report.md").is_file(), "{}", got.stderr);
    for env_txt in [reference.join("env.txt"), ours.join("env.txt")] {
        assert!(env_txt.is_file(), "{}", env_txt.display());
    }
    (got, ours, b)
}

fn analysis(ran: &Ran) -> Value {
    let v: Value = serde_json::from_str(&ran.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\n{}", ran.stdout, ran.stderr));
    assert_eq!(v["schema"], "npgx.triage-analyze", "{v:#}");
    v
}

fn double_env(double: &Path, mode: &'static str) -> Vec<(&'static str, String)> {
    vec![
        ("PYTHONPATH", double.display().to_string()),
        ("NPGX_TEST_DOUBLE", mode.to_string()),
    ]
}

/// Steps 1–4 as plain scripts that pass and step 5 with real PyTorch under the test double in
/// `mode`: what the contract gives a step does not depend on PyTorch (steps_all_pass), what
/// PyTorch does with it at step 5 (the debug directory) does — one torch process per runner.
fn torch_step5_case(name: &str, mode: &'static str) -> (Ran, PathBuf, BTreeMap<String, String>) {
    let py = torch_python();
    let double = repo().join("testdata/triage/npugraph_ex_double");
    let env = double_env(&double, mode);
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let mut scripts: Vec<(usize, String)> = (1..=4).map(|n| plain_step(n, 0)).collect();
    scripts.push((5, torch_step(5, STEP5)));
    both(name, &scripts, "PY {SCRIPT} --batch 2", &env, &py)
}

#[test]
fn steps_all_pass_like_the_contract() {
    // Plain step scripts: what each step is given and leaves behind does not depend on PyTorch.
    // Steps 1–4 of steps_stop_at_a_failing_step5_like_the_contract pass with real PyTorch.
    let py = crate::common::plain_python();
    let scripts: Vec<(usize, String)> = (1..=5).map(|n| plain_step(n, 0)).collect();
    let (ran, root, tree) = both("all-pass", &scripts, "PY {SCRIPT} --batch 2", &[], &py);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    for step in STEP_NAMES {
        assert_eq!(
            tree.get(&format!("{step}/SUCCESS")).map(String::as_str),
            Some("")
        );
    }
    assert!(!root.join("first_failure.txt").exists());
    // What each step saw, from the contract's text: steps 1–3 TORCH_LOGS, steps 4–5 the debug
    // directory (one level below the step's torch_compile_debug/), no PYTHONUNBUFFERED.
    let log1 = &tree["step1-eager/stdout_stderr.log"];
    assert!(log1.contains("CONTRACT: TORCH_LOGS = +all"), "{log1}");
    assert!(
        log1.contains("CONTRACT: TORCH_COMPILE_DEBUG = <unset>"),
        "{log1}"
    );
    assert!(
        log1.contains("CONTRACT: ASCEND_PROCESS_LOG_PATH = <ROOT>/step1-eager/ascend_plog"),
        "{log1}"
    );
    assert!(
        log1.contains("CONTRACT: PYTHONUNBUFFERED = <unset>"),
        "{log1}"
    );
    assert!(
        log1.contains("'<ROOT>/scripts/step1-eager.py', '--batch', '2'"),
        "{log1}"
    );
    let log5 = &tree["step5-npugraph_ex/stdout_stderr.log"];
    assert!(log5.contains(
        "CONTRACT: TORCH_COMPILE_DEBUG_DIR = <ROOT>/step5-npugraph_ex/torch_compile_debug"
    ));
    assert!(log5.contains("CONTRACT: TORCH_LOGS = <unset>"), "{log5}");
    // Steps 1–3 left no plog (no NPU), steps 4–5 the double's.
    assert_eq!(
        read(&root.join("warnings.txt")),
        "step1-eager ascend_plog missing or empty\n\
         step2-compile-eager ascend_plog missing or empty\n\
         step3-compile-aot_eager ascend_plog missing or empty\n"
    );
    let v = analysis(&ran);
    assert!(v["first_failure"].is_null(), "{v:#}");
    assert!(!read(&root.join("triage_report.md")).is_empty());
}

#[test]
#[ignore = "needs torch (scripts/test.sh provides it)"]
fn steps_stop_at_a_failing_step3_like_the_contract() {
    // Steps 1–2 plain (they pass), step 3 real PyTorch breaking the graph under fullgraph=True.
    let scripts = [
        plain_step(1, 0),
        plain_step(2, 0),
        (3, torch_step(3, STEP3_BREAK)),
    ];
    let (ran, root, tree) = both(
        "step3",
        &scripts,
        "PY {SCRIPT} --batch 2",
        &[],
        &torch_python(),
    );
    assert_eq!(ran.code, 3, "{}", ran.stderr);
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step3-compile-aot_eager exit_code=1\n"
    );
    assert!(!tree.keys().any(|k| k.starts_with("step4")), "{tree:#?}");
    let v = analysis(&ran);
    assert_eq!(v["route"], "compile-error", "{v:#}");
}

#[test]
#[ignore = "needs torch (scripts/test.sh provides it)"]
fn steps_stop_at_a_failing_step5_like_the_contract() {
    let (ran, root, tree) = torch_step5_case("step5", "fail_without_force_eager");
    assert_eq!(ran.code, 5, "{}", ran.stderr);
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step5-npugraph_ex exit_code=1\n"
    );
    assert!(tree.contains_key("step4-npugraph_ex-force_eager/SUCCESS"));
    assert!(!tree.contains_key("step5-npugraph_ex/SUCCESS"));
    // TORCH_COMPILE_DEBUG_DIR=<step>/torch_compile_debug: PyTorch's run_* one level further down,
    // and the analysis finds it there.
    assert!(
        tree.keys().any(
            |k| k.starts_with("step5-npugraph_ex/torch_compile_debug/torch_compile_debug/run_")
        ),
        "{tree:#?}"
    );
    let v = analysis(&ran);
    assert_eq!(v["route"], "runtime-error", "{v:#}");
    // The cause is the CANN report the double wrote to step 5's stderr, not the RuntimeError.
    let e = &v["evidence"]["first_causal_error"];
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("event wait timeout occurred during task execution"),
        "{e:#}"
    );
    assert!(
        v["handoff_paths"]
            .to_string()
            .contains("torch_compile_debug/run_"),
        "{v:#}"
    );
}

/// Step scripts without PyTorch: the contract's skipping, exit codes and files do not need it.
fn plain_step(number: usize, exit: i32) -> (usize, String) {
    let plog = if number >= 4 { PLOG_DOUBLE } else { "" };
    (number, format!("{PREAMBLE}{plog}sys.exit({exit})\n"))
}

#[test]
fn steps_skip_a_missing_step_script_like_the_contract() {
    let py = crate::common::plain_python();
    let scripts = [
        plain_step(1, 0),
        plain_step(3, 0),
        plain_step(4, 7),
        plain_step(5, 0),
    ];
    let (ran, root, tree) = both("missing", &scripts, "PY {SCRIPT}", &[], &py);
    assert_eq!(ran.code, 4, "{}", ran.stderr);
    assert!(!root.join("step2-compile-eager").exists());
    assert!(!tree.keys().any(|k| k.starts_with("step5")), "{tree:#?}");
    assert_eq!(
        read(&root.join("first_failure.txt")),
        "step4-npugraph_ex-force_eager exit_code=7\n"
    );
    assert!(
        ran.stderr.contains("step2-compile-eager skipped"),
        "{}",
        ran.stderr
    );
    let v = analysis(&ran);
    assert_eq!(
        v["first_failure"]["step"], "step4-npugraph_ex-force_eager",
        "{v:#}"
    );

    // Every script missing: 0, and nothing but env.txt (and npgx's report).
    let (ran, _, tree) = both("all-missing", &[], "PY {SCRIPT}", &[], &py);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    assert_eq!(tree.keys().collect::<Vec<_>>(), ["env.txt"], "{tree:#?}");
}

#[test]
fn steps_refuse_bad_arguments_with_64_like_the_contract() {
    let py = crate::common::test_python();
    let dir = scratch("steps-bad-arguments");
    let with_scripts = make_root(&dir.join("ok"), &[plain_step(1, 0)]);
    let no_scripts = dir.join("bare");
    fs::create_dir_all(&no_scripts).unwrap();
    let missing = dir.join("missing");
    let ok = with_scripts.to_str().unwrap();
    let template = format!("{py} {{SCRIPT}}");
    let cases: Vec<Vec<&str>> = vec![
        vec![ok, "python main.py"],
        vec![ok, "python {script}"],
        vec![missing.to_str().unwrap(), &template],
        vec![no_scripts.to_str().unwrap(), &template],
        vec![ok],
        vec![],
        vec![ok, &template, "extra"],
    ];
    for args in cases {
        let want = run_contract(&args, &[], &py);
        let got = run_npgx(&args, &[]);
        assert_eq!(want.code, 64, "contract {args:?}: {}", want.stderr);
        assert_eq!(got.code, 64, "npgx {args:?}: {}", got.stderr);
        assert!(got.stdout.is_empty(), "{args:?}: {}", got.stdout);
        assert!(!got.stderr.is_empty(), "{args:?}");
        // Nothing was written.
        let written: Vec<_> = fs::read_dir(&with_scripts)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(written, ["scripts"], "{args:?}");
        assert!(!missing.exists());
    }
    // --help is not a bad argument.
    let help = crate::common::npgx(["triage", "steps", "--help"]);
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).contains("run_triage.sh"));
}
