//! The triage tree: step names, file names, and the environment of each step.
//!
//! `triage run` makes the tree below; `triage steps` fills the ROOT it is given the same way,
//! from the step scripts it finds there (no `original.py`, no bisect).
//!
//! ```text
//! torch-npugraph-ex-triage-logs/<YYYYMMDD-HHMMSS>-pid<PID>/
//!   env.txt  first_failure.txt  warnings.txt  triage_report.md
//!   scripts/original.py step1-eager.py … step5-npugraph_ex.py
//!   step1-eager/{stdout_stderr.log, ascend_plog/, SUCCESS}
//!   …
//!   step5-npugraph_ex/{stdout_stderr.log, torch_compile_debug/, ascend_plog/, SUCCESS}
//!   step1-eager-repeat/…            (--compare-outputs, when all five steps passed)
//!   bisect/<variant>/{<variant>.py, stdout_stderr.log, torch_compile_debug/, ascend_plog/,
//!                     SUCCESS or exit_code}           (bisect)
//! ```

use std::path::Path;

use npgx_parsers::pyedit::StepEdit;
use serde::{Deserialize, Serialize};

/// Directory that holds all triage runs, under the output directory.
pub const LOGS_DIR: &str = "torch-npugraph-ex-triage-logs";
pub const ENV_FILE: &str = "env.txt";
pub const FIRST_FAILURE_FILE: &str = "first_failure.txt";
pub const WARNINGS_FILE: &str = "warnings.txt";
pub const REPORT_FILE: &str = "triage_report.md";
pub const SCRIPTS_DIR: &str = "scripts";
pub const ORIGINAL_SCRIPT: &str = "original.py";
pub const LOG_FILE: &str = "stdout_stderr.log";
pub const PLOG_DIR: &str = "ascend_plog";
pub const DEBUG_DIR: &str = "torch_compile_debug";
pub const SUCCESS_MARKER: &str = "SUCCESS";
/// A failed bisect variant's exit code (steps record theirs in `first_failure.txt`).
pub const EXIT_CODE_FILE: &str = "exit_code";
/// `--compare-outputs`: step 1 run a second time from the same seed, to measure the noise floor.
pub const EAGER_REPEAT_DIR: &str = "step1-eager-repeat";
/// Bisect variants: `bisect/<variant>/`.
pub const BISECT_DIR: &str = "bisect";

/// One rung of the ladder.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
pub enum Step {
    #[serde(rename = "step1-eager")]
    Eager,
    #[serde(rename = "step2-compile-eager")]
    CompileEager,
    #[serde(rename = "step3-compile-aot_eager")]
    CompileAotEager,
    #[serde(rename = "step4-npugraph_ex-force_eager")]
    ForceEager,
    #[serde(rename = "step5-npugraph_ex")]
    NpugraphEx,
}

impl Step {
    pub const ALL: [Step; 5] = [
        Step::Eager,
        Step::CompileEager,
        Step::CompileAotEager,
        Step::ForceEager,
        Step::NpugraphEx,
    ];

    /// `step1-eager` … `step5-npugraph_ex`: the step directory and script stem.
    pub fn name(self) -> &'static str {
        match self {
            Step::Eager => "step1-eager",
            Step::CompileEager => "step2-compile-eager",
            Step::CompileAotEager => "step3-compile-aot_eager",
            Step::ForceEager => "step4-npugraph_ex-force_eager",
            Step::NpugraphEx => "step5-npugraph_ex",
        }
    }

    /// 1–5.
    pub fn number(self) -> usize {
        self as usize + 1
    }

    pub fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|s| s.name() == name)
    }

    pub fn script_name(self) -> String {
        format!("{}.py", self.name())
    }

    /// What the step does, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Step::Eager => "pure eager, no torch.compile",
            Step::CompileEager => "torch.compile(backend=\"eager\")",
            Step::CompileAotEager => "torch.compile(backend=\"aot_eager\")",
            Step::ForceEager => "npugraph_ex with options force_eager=True",
            Step::NpugraphEx => "the original npugraph_ex call",
        }
    }

    /// The edit of the compile call for this step.
    pub fn edit(self) -> StepEdit {
        match self {
            Step::Eager => StepEdit::Eager,
            Step::CompileEager => StepEdit::Backend("eager"),
            Step::CompileAotEager => StepEdit::Backend("aot_eager"),
            Step::ForceEager => StepEdit::ForceEager,
            Step::NpugraphEx => StepEdit::Original,
        }
    }

    /// Steps 4 and 5 write TORCH_COMPILE_DEBUG artifacts.
    pub fn has_debug_dir(self) -> bool {
        matches!(self, Step::ForceEager | Step::NpugraphEx)
    }

    /// The variables set on this step's child process (and only there), by `convention`.
    ///
    /// [`Convention::Npgx`] (`triage run`, `bisect`): steps 1–3 `TORCH_LOGS=+all`; steps 4–5
    /// `TORCH_COMPILE_DEBUG=1` with `TORCH_COMPILE_DEBUG_DIR=<step dir>`, so PyTorch writes
    /// `<step dir>/torch_compile_debug/run_*` (run_triage.sh points it at
    /// `<step dir>/torch_compile_debug` and gets a doubled level). All steps: plogs into
    /// `<step dir>/ascend_plog` at INFO, not echoed to stdout; `PYTHONUNBUFFERED=1` so stdout and
    /// stderr reach the log in the order they were written.
    ///
    /// [`Convention::RunTriageSh`] (`triage steps`): run_triage.sh's variables and nothing else —
    /// `TORCH_COMPILE_DEBUG_DIR=<step dir>/torch_compile_debug` (the doubled level included) and
    /// no `PYTHONUNBUFFERED`.
    pub fn env(self, step_dir: &Path, convention: Convention) -> Vec<(String, String)> {
        let mut env = Vec::new();
        if self.has_debug_dir() {
            let debug_dir = match convention {
                Convention::Npgx => step_dir.to_path_buf(),
                Convention::RunTriageSh => step_dir.join(DEBUG_DIR),
            };
            env.push(("TORCH_COMPILE_DEBUG".into(), "1".into()));
            env.push((
                "TORCH_COMPILE_DEBUG_DIR".into(),
                debug_dir.display().to_string(),
            ));
        } else {
            env.push(("TORCH_LOGS".into(), "+all".into()));
        }
        env.push((
            "ASCEND_PROCESS_LOG_PATH".into(),
            step_dir.join(PLOG_DIR).display().to_string(),
        ));
        env.push(("ASCEND_GLOBAL_LOG_LEVEL".into(), "1".into()));
        env.push(("ASCEND_SLOG_PRINT_TO_STDOUT".into(), "0".into()));
        if convention == Convention::Npgx {
            env.push(("PYTHONUNBUFFERED".into(), "1".into()));
        }
        env
    }
}

/// Whose rules a step's process and the tree follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Convention {
    /// `triage run` and `bisect`: npgx wrote the step scripts; one `torch_compile_debug` level,
    /// unbuffered Python.
    Npgx,
    /// `triage steps`: the agent wrote the step scripts and npgx takes the place of the
    /// cannbot-skills triage skill's `run_triage.sh` — the same variables, files and exit codes.
    RunTriageSh,
}
