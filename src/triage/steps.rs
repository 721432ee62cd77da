//! `npgx triage steps ROOT CMD_TEMPLATE`: the contract of the cannbot-skills triage skill's
//! `scripts/run_triage.sh`, kept to the letter, with npgx's analysis on top.
//!
//! The agent (or the user) has written the step scripts itself into `ROOT/scripts/`; npgx runs
//! whichever of the five exist, in order, exactly as run_triage.sh does — the same arguments,
//! the same variables on each step's process ([`Convention::RunTriageSh`]), the same files
//! (`env.txt`, `<step>/stdout_stderr.log`, `<step>/ascend_plog/`, `<step>/torch_compile_debug/`
//! for steps 4–5, `<step>/SUCCESS`, `first_failure.txt`, `warnings.txt`), the same stop at the
//! first failure and the same exit codes: 0 when every step passed or was missing, 1–5 the
//! first failing step, 64 bad arguments ([`BadArguments`]). Then the tree is analysed as
//! `triage analyze` does and `triage_report.md` is written beside the rest.
//!
//! The ladder itself is [`runner::run_ladder`], the one `triage run` uses.

use std::path::PathBuf;
use std::time::Duration;

use super::analyze::{self, TriageAnalysis};
use super::layout::{Convention, Step, REPORT_FILE, SCRIPTS_DIR};
use super::runner::{self, Extra, Ladder, LadderRun, Progress, StepEnd};

/// run_triage.sh's exit code for bad arguments (BSD's `EX_USAGE`), which `triage steps` keeps.
pub const EXIT_BAD_ARGUMENTS: u8 = 64;

/// The placeholder the command template must hold (run_triage.sh accepts no other spelling).
pub const PLACEHOLDER: &str = "{SCRIPT}";

/// What `triage steps` needs.
#[derive(Debug, Clone)]
pub struct StepsConfig {
    /// The tree, made beforehand, with the step scripts in `scripts/`.
    pub root: PathBuf,
    /// The launch command with `{SCRIPT}`, run under `bash -c`.
    pub template: String,
    /// Per-step timeout (npgx's addition; run_triage.sh has none).
    pub timeout: Option<Duration>,
}

/// Arguments run_triage.sh refuses with exit code 64, before anything is written.
#[derive(Debug, thiserror::Error)]
pub enum BadArguments {
    #[error("ROOT {0} is not a directory (make it and put the step scripts into ROOT/scripts/)")]
    NoRoot(PathBuf),
    #[error("{0} is not a directory: put the step scripts there first ({names})", names = step_scripts())]
    NoScripts(PathBuf),
    #[error("the command template must contain {PLACEHOLDER}: {0}")]
    NoPlaceholder(String),
}

fn step_scripts() -> String {
    Step::ALL
        .iter()
        .map(|s| s.script_name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// What `triage steps` did: the ladder and the analysis of the tree afterwards.
#[derive(Debug, Clone)]
pub struct TriageSteps {
    pub root: PathBuf,
    pub ladder: LadderRun,
    pub analysis: TriageAnalysis,
}

impl TriageSteps {
    /// run_triage.sh's exit code: the number of the first step that did not pass (1–5), 0 when
    /// every step passed or was skipped; 130 when interrupted (npgx's, as `triage run`).
    pub fn exit_code(&self) -> u8 {
        if self.ladder.interrupted {
            return 130;
        }
        self.ladder
            .steps
            .iter()
            .find(|s| s.end != StepEnd::Passed)
            .and_then(|s| u8::try_from(s.step.number()).ok())
            .unwrap_or(0)
    }

    /// Where `triage_report.md` goes.
    pub fn report_path(&self) -> PathBuf {
        self.root.join(REPORT_FILE)
    }
}

/// Checks the arguments as run_triage.sh does, in its order.
pub fn check(cfg: &StepsConfig) -> Result<(), BadArguments> {
    if !cfg.root.is_dir() {
        return Err(BadArguments::NoRoot(cfg.root.clone()));
    }
    let scripts = cfg.root.join(SCRIPTS_DIR);
    if !scripts.is_dir() {
        return Err(BadArguments::NoScripts(scripts));
    }
    if !cfg.template.contains(PLACEHOLDER) {
        return Err(BadArguments::NoPlaceholder(cfg.template.clone()));
    }
    Ok(())
}

/// Checks the arguments ([`BadArguments`] inside the error when they are wrong), writes
/// `env.txt`, runs the ladder and analyses the tree. `triage_report.md` is the caller's to write
/// (the rendering lives in `report::triage`).
pub fn run(cfg: &StepsConfig, progress: &mut dyn Progress) -> anyhow::Result<TriageSteps> {
    check(cfg)?;
    let stop = runner::interrupt_flag()?;
    let root = cfg.root.as_path();
    let step1 = root.join(SCRIPTS_DIR).join(Step::Eager.script_name());
    let example = runner::build_command(&cfg.template, &step1, &[])?;
    runner::write_env(root, &cfg.template, &example, None, Convention::RunTriageSh)?;
    let ladder = Ladder {
        root,
        template: &cfg.template,
        args: &[],
        timeout: cfg.timeout,
        extra: Extra {
            capture: false,
            dumps: false,
            convention: Convention::RunTriageSh,
        },
    };
    let ladder = runner::run_ladder(&ladder, &stop, progress)?;
    let analysis = analyze::analyze(root)?;
    Ok(TriageSteps {
        root: cfg.root.clone(),
        ladder,
        analysis,
    })
}
