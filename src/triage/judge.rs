//! One run of step 5's script and its verdict, shared by the option search ([`super::bisect`])
//! and the FX node search ([`super::nodes`]): how a variant is launched like step 5, which
//! symptom is bisected, and whether a run shows step 5's failure ([`SameFailure`]), another, or
//! none — or, on the accuracy path, outputs that match step 4's.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use npgx_parsers::causal::volatile::stable_with;
use npgx_parsers::causal::CausalError;
use serde::{Deserialize, Serialize};

use super::classify::classify_file;
use super::compare::{self, Closeness, OUTPUTS_DIR};
use super::layout::{Step, EXIT_CODE_FILE, LOG_FILE};
use super::runner::{self, build_command, Extra, Progress, StepEnd};

/// What the launcher needs to start a variant (from the run's configuration).
pub struct Launch<'a> {
    /// The user's script as given on the command line (node answers name it).
    pub script: &'a Path,
    pub template: &'a str,
    pub args: &'a [String],
    pub timeout: Option<Duration>,
    pub seed: u64,
    pub capture: bool,
    pub stop: &'a AtomicBool,
}

/// Which symptom is bisected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Step 4 passed, step 5 failed.
    Failure,
    /// All steps passed; step 5's outputs differ from step 4's (`--compare-outputs`).
    Accuracy,
}

/// The result of one variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Failure path: the variant passes.
    Disappears,
    /// Failure path: the same first causal error.
    Stays,
    /// Failure path: a different first causal error.
    Changes,
    /// Accuracy path: the outputs match step 4 within tolerance.
    Matches,
    /// Accuracy path: the outputs still differ from step 4.
    Differs,
    /// Accuracy path: the variant failed.
    Fails,
    TimedOut,
    /// The installed npugraph_ex rejected the key after all (`Invalid option`).
    Rejected,
    Interrupted,
}

impl Verdict {
    /// The symptom is gone.
    pub fn fixed(self) -> bool {
        matches!(self, Verdict::Disappears | Verdict::Matches)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Disappears => "failure disappears",
            Verdict::Stays => "failure stays",
            Verdict::Changes => "failure changes",
            Verdict::Matches => "outputs match step 4",
            Verdict::Differs => "outputs differ from step 4",
            Verdict::Fails => "fails",
            Verdict::TimedOut => "timed out",
            Verdict::Rejected => "option rejected",
            Verdict::Interrupted => "interrupted",
        }
    }
}

/// Why a failing run's error is not step 5's: both texts as they were compared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Difference {
    /// Step 5's first causal error, volatile tokens replaced.
    pub step5: String,
    /// This run's, likewise.
    pub run: String,
}

/// Step 5's first causal error as runs are compared with it: its message with the volatile
/// tokens (`npgx_parsers::causal::volatile`) and step 5's own directories replaced. Another run
/// shows "the same failure" when its first causal error reads the same after the same
/// replacement with its own directory.
pub struct SameFailure {
    step5: Option<String>,
}

impl SameFailure {
    /// From step 5's first causal error (`message`) in the tree at `root`.
    pub(super) fn new(message: Option<&String>, root: &Path) -> SameFailure {
        let dir = root.join(Step::NpugraphEx.name());
        let script = root
            .join(super::layout::SCRIPTS_DIR)
            .join(Step::NpugraphEx.script_name());
        SameFailure {
            step5: message.map(|m| stable_in(m, &dir, &script)),
        }
    }

    /// `None` when `error` (found in a run in `dir`, its script `script`) is step 5's failure,
    /// else both compared texts.
    fn differs(&self, error: &CausalError, dir: &Path, script: &Path) -> Option<Difference> {
        let run = stable_in(&error.message, dir, script);
        match &self.step5 {
            Some(step5) if *step5 == run => None,
            step5 => Some(Difference {
                step5: step5.clone().unwrap_or_default(),
                run,
            }),
        }
    }
}

fn stable_in(message: &str, dir: &Path, script: &Path) -> String {
    let (dir, script) = (dir.to_string_lossy(), script.to_string_lossy());
    stable_with(message, &[&dir, &script])
}

/// Runs `script` (a variant of step 5's) in `dir` like step 5, under `label`; a run that did
/// not pass leaves its exit code in `dir/exit_code`. Returns the command, the end and the time.
pub(super) fn run_like_step5(
    launch: &Launch<'_>,
    dir: &Path,
    script: &Path,
    label: &str,
    extra: Extra,
    progress: &mut dyn Progress,
) -> anyhow::Result<(String, StepEnd, f64)> {
    let command = build_command(launch.template, script, launch.args)?;
    let (end, seconds) = runner::run_process(
        label,
        Step::NpugraphEx,
        dir,
        &command,
        extra,
        launch.timeout,
        launch.stop,
        progress,
    )?;
    if end != StepEnd::Passed {
        let p = dir.join(EXIT_CODE_FILE);
        crate::output::write(&p, format!("{}\n", end.exit_code()).as_bytes())?;
    }
    Ok((command, end, seconds))
}

/// What [`judge`] says of one run.
pub struct Judged {
    pub verdict: Verdict,
    /// The run's first causal error, when it failed.
    pub error: Option<CausalError>,
    /// `changes`: step 5's error and this one as compared.
    pub difference: Option<Difference>,
    /// Accuracy path: the run's outputs against step 4's.
    pub outputs: Option<Closeness>,
}

/// The verdict of a finished run of step 5's script (an option variant or a node run, in `dir`
/// with its script `script`): on the failure path the same first causal error as step 5 or not
/// ([`SameFailure`]); on the accuracy path its outputs against step 4's.
pub(super) fn judge(
    mode: Mode,
    end: StepEnd,
    (dir, script): (&Path, &Path),
    same: &SameFailure,
    step4_outputs: &Path,
) -> anyhow::Result<Judged> {
    let judged = |verdict, error, difference, outputs| Judged {
        verdict,
        error,
        difference,
        outputs,
    };
    Ok(match end {
        StepEnd::Interrupted { .. } => judged(Verdict::Interrupted, None, None, None),
        StepEnd::TimedOut { .. } => judged(Verdict::TimedOut, None, None, None),
        StepEnd::Failed { .. } => {
            let error = classify_file(&dir.join(LOG_FILE))?.first_causal_error;
            if mode == Mode::Accuracy {
                return Ok(judged(Verdict::Fails, error, None, None));
            }
            let difference = match &error {
                Some(e) => same.differs(e, dir, script),
                None => Some(Difference {
                    step5: same.step5.clone().unwrap_or_default(),
                    run: String::new(),
                }),
            };
            let verdict = if difference.is_none() {
                Verdict::Stays
            } else {
                Verdict::Changes
            };
            judged(verdict, error, difference, None)
        }
        StepEnd::Passed => match mode {
            Mode::Failure => judged(Verdict::Disappears, None, None, None),
            Mode::Accuracy => {
                let c = compare::compare_dirs(step4_outputs, &dir.join(OUTPUTS_DIR))?;
                let verdict = if c.allclose {
                    Verdict::Matches
                } else {
                    Verdict::Differs
                };
                judged(verdict, None, None, Some(c))
            }
        },
    })
}
