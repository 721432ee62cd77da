//! `triage bisect` / `triage run --bisect`: when only the full npugraph_ex path fails (step 4
//! passes, step 5 fails — or, with `--compare-outputs`, step 5's numbers differ from step 4's),
//! find the `CompilerConfig` option that does it.
//!
//! Each variant is step 5's script with one option flipped away from the value in force (the
//! same syntax-aware edit of the compile call; only `options` changes), run like step 5 into
//! `bisect/<variant>/`. The verdict per variant: the failure disappears, stays, or changes (a
//! different first causal error, from the shared causal engine) — or, on the accuracy path, the
//! outputs match step 4 or not. When no single flip helps, pairs of the flips that changed
//! something are tried; then "not isolated by options". Keys the installed npugraph_ex does not
//! have (its `CompilerConfig` attributes, probed into `env.txt`) are never passed.
//!
//! "The same failure" is judged on what is stable ([`SameFailure`]): both first causal errors
//! with their volatile tokens replaced (object addresses, process and thread ids, time stamps,
//! temp paths, the run's own directory: `npgx_parsers::causal::volatile`), since every process
//! prints its own. When they still differ, both compared texts are kept (`difference`).
//!
//! When the options isolate nothing — no flip or pair helps, or `--max-runs` ends the option
//! search first — the FX node search ([`super::nodes`]) runs with its own budget.

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::pyedit::{CompileCall, Script};
use serde::{Deserialize, Serialize};

use super::analyze::{StepStatus, TriageAnalysis};
use super::compare::{self, Closeness, CAPTURE_MODULE, CAPTURE_SOURCE, OUTPUTS_DIR};
use super::dumps::{self, DumpComparison};
use super::judge::{judge, run_like_step5, Judged, SameFailure};
pub use super::judge::{Difference, Launch, Mode, Verdict};
use super::layout::{Convention, Step, BISECT_DIR};
use super::nodes::{self, NodeSearch};
use super::route::Route;
use super::runner::{Extra, Progress, StepEnd};
use super::scripts;
use options::{dir_name, knob, plan_flips, InForce};

mod options;

/// Default `--max-runs`.
pub const DEFAULT_MAX_RUNS: usize = 16;

/// What the bisection may spend.
#[derive(Debug, Clone, Copy)]
pub struct BisectConfig {
    /// Processes started for variants and dumps, at most (and, separately, for the node search).
    pub max_runs: usize,
    /// `--nodes`: search the FX nodes after the option search whatever it found.
    pub nodes: bool,
}

/// One option set by a variant.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Flip {
    pub key: String,
    /// The value the variant sets (Python literal).
    pub value: String,
    /// The value in force in step 5 (the script's literal, or npugraph_ex's default).
    pub in_force: String,
}

impl Flip {
    fn label(&self) -> String {
        format!("{}={}", self.key, self.value.trim_matches('"'))
    }
}

/// One variant run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Variant {
    /// The directory name under `bisect/` (`inplace_pass-False`, pairs joined by `+`).
    pub name: String,
    pub flips: Vec<Flip>,
    pub dir: PathBuf,
    pub command: String,
    pub end: StepEnd,
    pub seconds: f64,
    pub verdict: Verdict,
    /// The first causal error of the variant's log, when it failed.
    pub first_causal_error: Option<String>,
    /// `changes`: the two errors as compared, volatile tokens replaced.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<Difference>,
    /// Accuracy path: the variant's outputs against step 4's.
    pub outputs: Option<Closeness>,
    /// Something differs from step 5 (another error, other numbers): a candidate for pairs.
    pub changed: bool,
}

impl Variant {
    /// Its flips' labels joined by `sep`.
    fn label(&self, sep: &str) -> String {
        self.flips
            .iter()
            .map(Flip::label)
            .collect::<Vec<_>>()
            .join(sep)
    }
}

/// A variant that was not run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Skipped {
    pub key: String,
    pub reason: String,
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// One flip (or one pair) removes the symptom.
    Isolated,
    /// No single flip and no pair of the flips that changed something helps.
    NotIsolated,
    /// `--max-runs` was used up first.
    BudgetExhausted,
    Interrupted,
    /// The ladder did not end with a step-5-only failure or difference: nothing to bisect.
    NotApplicable,
}

/// The bisection of one run.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Bisection {
    pub mode: Option<Mode>,
    /// Step 5's first causal error (failure path).
    pub baseline_error: Option<String>,
    /// Step 5's outputs against step 4's (accuracy path).
    pub baseline_outputs: Option<Closeness>,
    pub variants: Vec<Variant>,
    pub skipped: Vec<Skipped>,
    /// Processes started (variants and dumps).
    pub runs: usize,
    pub max_runs: usize,
    pub outcome: Outcome,
    /// The flips that remove the symptom (one entry per isolating variant).
    pub implicated: Vec<String>,
    /// One line with the evidence.
    pub conclusion: String,
    pub sub_skill: Option<Cow<'static, str>>,
    /// The failing and the passing run directories for the sub-skill.
    pub evidence_dirs: Vec<PathBuf>,
    /// Accuracy path: the failing and the passing variant's data dumps compared.
    pub dump_comparison: Option<DumpComparison>,
    pub notes: Vec<String>,
    /// The FX node search (`--nodes`, or when the options isolated nothing: `not_isolated`,
    /// `budget_exhausted`).
    pub nodes: Option<NodeSearch>,
}

impl Bisection {
    fn not_applicable(why: &str) -> Bisection {
        Bisection {
            mode: None,
            baseline_error: None,
            baseline_outputs: None,
            variants: Vec::new(),
            skipped: Vec::new(),
            runs: 0,
            max_runs: 0,
            outcome: Outcome::NotApplicable,
            implicated: Vec::new(),
            conclusion: format!("nothing to bisect: {why}"),
            sub_skill: None,
            evidence_dirs: Vec::new(),
            dump_comparison: None,
            notes: Vec::new(),
            nodes: None,
        }
    }
}

/// What the ladder leaves to bisect.
enum ToBisect {
    /// Bisect in `mode`, from step 5's first causal error (failure path) or its outputs
    /// against step 4's (accuracy path).
    Bisect {
        mode: Mode,
        error: Option<String>,
        outputs: Option<Closeness>,
    },
    /// Nothing, and why.
    Nothing(String),
}

/// What the ladder of `analysis` leaves to bisect: a failure of step 5 alone (step 4
/// passing), or — every step passing, outputs compared — step 5's outputs (under `step5_dir`)
/// differing from step 4's (under `step4_dir`), compared here.
fn what_to_bisect(
    analysis: &TriageAnalysis,
    step4_dir: &Path,
    step5_dir: &Path,
) -> anyhow::Result<ToBisect> {
    let status = |s: Step| analysis.steps[s.number() - 1].status;
    let step4_ok = status(Step::ForceEager) == StepStatus::Passed;
    let step5_failed = analysis
        .first_failure
        .as_ref()
        .is_some_and(|f| f.step == Step::NpugraphEx);
    if step5_failed && step4_ok {
        let err = analysis
            .evidence
            .as_ref()
            .and_then(|c| c.first_causal_error.as_ref())
            .map(|e| e.message.clone());
        return Ok(ToBisect::Bisect {
            mode: Mode::Failure,
            error: err,
            outputs: None,
        });
    }
    if !analysis
        .steps
        .iter()
        .all(|s| s.status == StepStatus::Passed)
    {
        let why = match &analysis.first_failure {
            Some(f) => format!(
                "{} failed first: only a failure of step 5 alone (step 4 passing) is bisected",
                f.step.name()
            ),
            None => "the ladder did not complete".into(),
        };
        return Ok(ToBisect::Nothing(why));
    }
    let Some(cmp) = &analysis.comparison else {
        return Ok(ToBisect::Nothing(
            "all five steps passed (add --compare-outputs to bisect an output difference)".into(),
        ));
    };
    if cmp.eager_repeat.as_ref().is_some_and(|n| !n.allclose) {
        return Ok(ToBisect::Nothing(
            "nondeterministic even in eager: output differences say nothing about the options"
                .into(),
        ));
    }
    let base = compare::compare_dirs(&step4_dir.join(OUTPUTS_DIR), &step5_dir.join(OUTPUTS_DIR))?;
    if base.allclose {
        return Ok(ToBisect::Nothing("step 5's outputs match step 4's".into()));
    }
    Ok(ToBisect::Bisect {
        mode: Mode::Accuracy,
        error: None,
        outputs: Some(base),
    })
}

/// How the option search stopped short of trying everything.
#[derive(Default)]
struct Stopped {
    /// A variant run was interrupted.
    interrupted: bool,
    /// `--max-runs` was used up.
    exhausted: bool,
}

/// Runs the bisection after the ladder of `analysis` (tree at `root`, original `source`).
#[allow(clippy::too_many_arguments)]
pub fn run(
    root: &Path,
    source: &str,
    call: &CompileCall,
    analysis: &TriageAnalysis,
    launch: &Launch<'_>,
    cfg: BisectConfig,
    progress: &mut dyn Progress,
) -> anyhow::Result<Bisection> {
    let step4_dir = root.join(Step::ForceEager.name());
    let step5_dir = root.join(Step::NpugraphEx.name());
    let (mode, baseline_error, baseline_outputs) =
        match what_to_bisect(analysis, &step4_dir, &step5_dir)? {
            ToBisect::Bisect {
                mode,
                error,
                outputs,
            } => (mode, error, outputs),
            ToBisect::Nothing(why) => return Ok(Bisection::not_applicable(&why)),
        };

    let script = Script::parse(source).map_err(|e| anyhow::anyhow!("{e}"))?;
    let in_force = InForce::of(script.options_of(call));
    let supported = analysis.versions.npugraph_ex_options.as_deref();
    let (flips, skipped) = plan_flips(mode, &in_force, supported);
    let mut b = Bisection {
        mode: Some(mode),
        baseline_error,
        baseline_outputs,
        variants: Vec::new(),
        skipped,
        runs: 0,
        max_runs: cfg.max_runs,
        outcome: Outcome::NotIsolated,
        implicated: Vec::new(),
        conclusion: String::new(),
        sub_skill: None,
        evidence_dirs: Vec::new(),
        dump_comparison: None,
        notes: Vec::new(),
        nodes: None,
    };
    if in_force.partial {
        b.notes.push(
            "the script's options are (partly) an expression: values in force assumed to be npugraph_ex's defaults where not written literally".into(),
        );
    }
    if supported.is_none() {
        b.notes.push(
            "npugraph_ex could not be imported by the probe: the options it accepts are unknown, a rejected option shows as `option rejected`".into(),
        );
    }
    let ctx = Ctx {
        root,
        source,
        call,
        launch,
        mode,
        supported,
        step4_outputs: step4_dir.join(OUTPUTS_DIR),
        step5_outputs: step5_dir.join(OUTPUTS_DIR),
        same: SameFailure::new(b.baseline_error.as_ref(), root),
    };

    let (winner, stopped) =
        search_options(&flips, &mut b, &mut |f: &[Flip]| ctx.variant(f, progress))?;
    b.outcome = outcome(&winner, &stopped);
    b.implicated = winner.iter().map(|i| b.variants[*i].label(" + ")).collect();

    if let Some(&first) = winner.first() {
        let passing = b.variants[first].clone();
        b.evidence_dirs = vec![step5_dir.clone(), passing.dir.clone()];
        if mode == Mode::Accuracy {
            ctx.dumps(&passing, &mut b, progress)?;
        }
    } else {
        b.evidence_dirs = vec![step4_dir, step5_dir];
    }
    conclude(&mut b, &winner);
    let isolated_nothing = matches!(b.outcome, Outcome::NotIsolated | Outcome::BudgetExhausted);
    if (cfg.nodes && !stopped.interrupted) || isolated_nothing {
        let inputs = nodes::Inputs {
            root,
            source,
            call,
            launch,
            mode,
            same: &ctx.same,
            max_runs: cfg.max_runs,
        };
        b.nodes = Some(nodes::search(&inputs, progress)?);
    }
    Ok(b)
}

struct Ctx<'a> {
    root: &'a Path,
    source: &'a str,
    call: &'a CompileCall,
    launch: &'a Launch<'a>,
    mode: Mode,
    supported: Option<&'a [String]>,
    step4_outputs: PathBuf,
    step5_outputs: PathBuf,
    same: SameFailure,
}

/// Starts one variant (a set of flips) and judges it.
type RunVariant<'a> = dyn FnMut(&[Flip]) -> anyhow::Result<Variant> + 'a;

/// How the search ended, from the variants that remove the symptom and how it stopped.
fn outcome(winner: &[usize], stopped: &Stopped) -> Outcome {
    if !winner.is_empty() {
        Outcome::Isolated
    } else if stopped.interrupted {
        Outcome::Interrupted
    } else if stopped.exhausted {
        Outcome::BudgetExhausted
    } else {
        Outcome::NotIsolated
    }
}

/// The option search: a variant per single flip of `flips`, then — when none removes the
/// symptom and the search was not stopped — pairs of the flips that changed something.
/// Returns the variants (indices into `b.variants`) that remove the symptom and how the search
/// stopped short.
fn search_options(
    flips: &[Flip],
    b: &mut Bisection,
    run: &mut RunVariant<'_>,
) -> anyhow::Result<(Vec<usize>, Stopped)> {
    let mut stopped = single_flips(flips, b, run)?;
    let fixed: Vec<usize> = (0..b.variants.len())
        .filter(|i| b.variants[*i].verdict.fixed())
        .collect();
    if !fixed.is_empty() || stopped.interrupted || stopped.exhausted {
        return Ok((fixed, stopped));
    }
    let pair = flip_pairs(b, &mut stopped, run)?;
    Ok((pair.into_iter().collect(), stopped))
}

/// Runs a variant per flip, in order, until one is interrupted or `--max-runs` is used up.
fn single_flips(
    flips: &[Flip],
    b: &mut Bisection,
    run: &mut RunVariant<'_>,
) -> anyhow::Result<Stopped> {
    let mut stopped = Stopped::default();
    for f in flips {
        if b.runs >= b.max_runs {
            stopped.exhausted = true;
            break;
        }
        let v = run(std::slice::from_ref(f))?;
        b.runs += 1;
        stopped.interrupted = v.verdict == Verdict::Interrupted;
        b.variants.push(v);
        if stopped.interrupted {
            break;
        }
    }
    Ok(stopped)
}

/// Runs a variant per pair of the single flips that changed something, until one removes the
/// symptom (its index into `b.variants`), one is interrupted or `--max-runs` is used up.
fn flip_pairs(
    b: &mut Bisection,
    stopped: &mut Stopped,
    run: &mut RunVariant<'_>,
) -> anyhow::Result<Option<usize>> {
    let changed: Vec<Flip> = b
        .variants
        .iter()
        .filter(|v| v.changed)
        .map(|v| v.flips[0].clone())
        .collect();
    for i in 0..changed.len() {
        for j in i + 1..changed.len() {
            if b.runs >= b.max_runs {
                stopped.exhausted = true;
                return Ok(None);
            }
            let pair = [changed[i].clone(), changed[j].clone()];
            let v = run(&pair)?;
            b.runs += 1;
            let verdict = v.verdict;
            b.variants.push(v);
            if verdict == Verdict::Interrupted {
                stopped.interrupted = true;
                return Ok(None);
            }
            if verdict.fixed() {
                return Ok(Some(b.variants.len() - 1));
            }
        }
    }
    Ok(None)
}

impl Ctx<'_> {
    /// Writes the variant's script into `bisect/<name>/` and runs it like step 5.
    fn start(
        &self,
        name: &str,
        options: &[(String, String)],
        capture: bool,
        dumps: bool,
        progress: &mut dyn Progress,
    ) -> anyhow::Result<(PathBuf, PathBuf, String, StepEnd, f64)> {
        let dir = self.root.join(BISECT_DIR).join(name);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let text = scripts::variant(self.source, self.call, options, capture, self.launch.seed)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let script = dir.join(format!("{name}.py"));
        crate::output::write(&script, text.as_bytes())?;
        if capture {
            let helper = dir.join(CAPTURE_MODULE);
            crate::output::write(&helper, CAPTURE_SOURCE.as_bytes())?;
        }
        let label = format!("{BISECT_DIR}/{name}");
        let (command, end, seconds) = run_like_step5(
            self.launch,
            &dir,
            &script,
            &label,
            Extra {
                capture,
                dumps,
                convention: Convention::Npgx,
            },
            progress,
        )?;
        Ok((dir, script, command, end, seconds))
    }

    fn variant(&self, flips: &[Flip], progress: &mut dyn Progress) -> anyhow::Result<Variant> {
        let name = dir_name(flips);
        let options: Vec<(String, String)> = flips
            .iter()
            .map(|f| (f.key.clone(), f.value.clone()))
            .collect();
        let capture = self.mode == Mode::Accuracy && self.launch.capture;
        let (dir, script, command, end, seconds) =
            self.start(&name, &options, capture, false, progress)?;
        let Judged {
            mut verdict,
            error,
            difference,
            outputs,
        } = judge(
            self.mode,
            end,
            (&dir, &script),
            &self.same,
            &self.step4_outputs,
        )?;
        let rejected = error.as_ref().is_some_and(|e| {
            flips.iter().any(|f| {
                let needle = format!("Invalid option '{}'", f.key);
                e.message.contains(&needle) || e.text.contains(&needle)
            })
        });
        let difference = if rejected {
            verdict = Verdict::Rejected;
            None
        } else {
            difference
        };
        let error = error.map(|e| e.message);
        let changed = match verdict {
            Verdict::Changes | Verdict::Fails | Verdict::TimedOut => true,
            Verdict::Differs => {
                !compare::compare_dirs(&self.step5_outputs, &dir.join(OUTPUTS_DIR))?.allclose
            }
            _ => false,
        };
        Ok(Variant {
            name,
            flips: flips.to_vec(),
            dir,
            command,
            end,
            seconds,
            verdict,
            first_causal_error: error,
            difference,
            outputs,
            changed,
        })
    }

    /// Accuracy: step 5 and the passing variant with `dump_tensor_data=True` into two
    /// directories, compared by dump-compare. Step 5's own dumps are used when it has them.
    fn dumps(
        &self,
        passing: &Variant,
        b: &mut Bisection,
        progress: &mut dyn Progress,
    ) -> anyhow::Result<()> {
        let step5 = self.root.join(Step::NpugraphEx.name());
        let failing_has = dumps::find_data_dump(&step5).is_some();
        let needed = if failing_has { 1 } else { 2 };
        if let Some(list) = self.supported {
            if !["dump_tensor_data", "data_dump_dir"]
                .iter()
                .all(|k| list.iter().any(|s| s == k))
            {
                b.notes.push(
                    "no data dumps: the installed npugraph_ex has no dump_tensor_data / data_dump_dir option".into(),
                );
                return Ok(());
            }
        }
        if b.runs + needed > b.max_runs {
            b.notes.push(format!(
                "no data dumps: {needed} more run(s) would exceed --max-runs {}",
                b.max_runs
            ));
            return Ok(());
        }
        let flips: Vec<(String, String)> = passing
            .flips
            .iter()
            .map(|f| (f.key.clone(), f.value.clone()))
            .collect();
        let name = format!("dump-{}", passing.name);
        let what = "the passing variant";
        let Some(good) = self.dump_run(&name, flips, what, b, progress)? else {
            return Ok(());
        };
        let bad = if failing_has {
            step5
        } else {
            match self.dump_run("dump-step5", Vec::new(), "step 5", b, progress)? {
                Some(bad) => bad,
                None => return Ok(()),
            }
        };
        match dumps::compare_steps(&good, &bad) {
            Ok(Some(d)) => b.dump_comparison = Some(d),
            Ok(None) => b.notes.push(
                "the dump runs left no npugraph_ex data dumps (worldsize*_global_rank*/*.pt)"
                    .into(),
            ),
            Err(e) => b
                .notes
                .push(format!("the data dumps could not be compared: {e:#}")),
        }
        Ok(())
    }

    /// Runs step 5 with `options` and data dumps into `name`: its directory, or `None` (and a
    /// note naming `what`) when it did not pass.
    fn dump_run(
        &self,
        name: &str,
        mut options: Vec<(String, String)>,
        what: &str,
        b: &mut Bisection,
        progress: &mut dyn Progress,
    ) -> anyhow::Result<Option<PathBuf>> {
        options.extend(scripts::dump_options());
        let (dir, _, _, end, _) = self.start(name, &options, false, true, progress)?;
        b.runs += 1;
        if end != StepEnd::Passed {
            b.notes.push(format!(
                "{what} with data dumps failed ({}): no dump comparison",
                dir.display()
            ));
            return Ok(None);
        }
        Ok(Some(dir))
    }
}

/// Sets the conclusion line, the sub-skill and the outcome's wording.
fn conclude(b: &mut Bisection, winner: &[usize]) {
    let mode = b.mode.unwrap_or(Mode::Failure);
    let symptom_gone = match mode {
        Mode::Failure => "passes",
        Mode::Accuracy => "matches step 4",
    };
    let dirs = b
        .evidence_dirs
        .iter()
        .map(|d| format!("`{}`", d.display()))
        .collect::<Vec<_>>()
        .join(" and ");
    match b.outcome {
        Outcome::Isolated => {
            let whats: Vec<String> = winner
                .iter()
                .map(|i| b.variants[*i].label(" and "))
                .collect();
            let first = &b.variants[winner[0]];
            let mechanisms: Vec<&str> = first
                .flips
                .iter()
                .filter_map(|f| knob(&f.key).map(|k| k.mechanism))
                .collect();
            let route = match mode {
                Mode::Accuracy => Route::Accuracy,
                Mode::Failure => first
                    .flips
                    .first()
                    .and_then(|f| knob(&f.key))
                    .map_or(Route::RuntimeError, |k| k.route),
            };
            b.sub_skill = route.sub_skill().map(Cow::Borrowed);
            let together = if first.flips.len() > 1 {
                " together"
            } else {
                ""
            };
            let only = if whats.len() == 1 { " only" } else { "" };
            let mut line = format!(
                "{symptom_gone}{only} with {}{together} → {}; hand off to {} with these two run directories: {dirs}",
                whats.join(", or with "),
                mechanisms.join(" and "),
                b.sub_skill.as_deref().unwrap_or("the sub-skill"),
            );
            if let Some(d) = &b.dump_comparison {
                if let Some(n) = d.origin.as_ref().or(d.first_divergence.as_ref()) {
                    line.push_str(&format!(
                        "; their data dumps diverge first at FX node `{}`",
                        n.op_name
                    ));
                }
            }
            b.conclusion = line;
        }
        Outcome::NotIsolated => {
            let singles = b.variants.iter().filter(|v| v.flips.len() == 1).count();
            let pairs = b.variants.len() - singles;
            b.sub_skill = match mode {
                Mode::Accuracy => Route::Accuracy,
                Mode::Failure => Route::RuntimeError,
            }
            .sub_skill()
            .map(Cow::Borrowed);
            b.conclusion = format!(
                "not isolated by options: no single flip ({singles} run) and no pair of the flips that changed something ({pairs} run) removes the symptom — the cause lies in aclgraph capture / replay itself or outside npugraph_ex's options; hand off to {} with {dirs}",
                b.sub_skill.as_deref().unwrap_or("the sub-skill")
            );
        }
        Outcome::BudgetExhausted => {
            b.conclusion = format!(
                "not isolated by options within --max-runs {} ({} runs): raise --max-runs to continue",
                b.max_runs, b.runs
            );
        }
        Outcome::Interrupted => {
            b.conclusion = format!(
                "interrupted after {} runs: not isolated so far (what was collected is kept)",
                b.runs
            );
        }
        Outcome::NotApplicable => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use npgx_parsers::pyedit::OptionsSource;

    fn literal(entries: &[(&str, &str)]) -> InForce {
        InForce::of(OptionsSource::Literal {
            entries: entries
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            splat: false,
        })
    }

    /// Eager differing from its own repeat leaves nothing to bisect: no variant could be judged
    /// against step 4 (the end-to-end case is tests/it/triage_slow.rs).
    #[test]
    fn a_nondeterministic_eager_is_not_bisected() {
        let mut a = crate::triage::analyze::tests::passed(3);
        let repeat = a.comparison.as_mut().and_then(|c| c.eager_repeat.as_mut());
        repeat.expect("the eager repeat compared").allclose = false;
        let missing = Path::new("/nonexistent");
        match what_to_bisect(&a, missing, missing).expect("decided before any file is read") {
            ToBisect::Nothing(why) => {
                assert!(why.starts_with("nondeterministic even in eager"), "{why}")
            }
            ToBisect::Bisect { .. } => panic!("bisected a nondeterministic eager"),
        }
    }

    #[test]
    fn flips_go_away_from_the_value_in_force() {
        let (flips, skipped) = plan_flips(
            Mode::Failure,
            &literal(&[("inplace_pass", "False"), ("frozen_parameter", "True")]),
            None,
        );
        let got: Vec<String> = flips.iter().map(Flip::label).collect();
        assert_eq!(
            got,
            [
                "force_recapture=True",
                "clone_output=True",
                "clone_input=False",
                "reuse_graph_pool_in_same_fx=False",
                "remove_noop_ops=False",
                "remove_cat_ops=False",
                "inplace_pass=True",
                "input_inplace_pass=False",
                "pattern_fusion_pass=False",
                "frozen_parameter=False",
                "capture_error_mode=relaxed",
            ]
        );
        assert!(skipped.is_empty());
        // Accuracy: no capture_error_mode; static_kernel_compile only when set.
        let (flips, _) = plan_flips(Mode::Accuracy, &literal(&[]), None);
        assert_eq!(flips.len(), 9);
    }

    #[test]
    fn unsupported_and_non_literal_keys_are_skipped_with_a_reason() {
        let supported: Vec<String> = ["force_recapture", "clone_output"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (flips, skipped) = plan_flips(
            Mode::Accuracy,
            &literal(&[("force_recapture", "cfg.recapture")]),
            Some(&supported),
        );
        assert_eq!(flips.len(), 1);
        assert_eq!(flips[0].key, "clone_output");
        assert_eq!(skipped[0].key, "force_recapture");
        assert!(skipped[0].reason.contains("cfg.recapture"));
        assert!(skipped[1].reason.contains("rejects"));
        assert_eq!(dir_name(&flips), "clone_output-True");
    }

    // The option search with a fake runner: each variant's verdict is looked up by its directory
    // name and nothing is started. `run` drives the same search with real processes (the
    // integration tests in tests/it/triage.rs, on the test double).

    /// A variant as the judge returns it, `changed` as `Ctx::variant` sets it for its verdict.
    fn judged(flips: &[Flip], verdict: Verdict) -> Variant {
        let name = dir_name(flips);
        Variant {
            dir: PathBuf::from(BISECT_DIR).join(&name),
            name,
            flips: flips.to_vec(),
            command: String::new(),
            end: StepEnd::Failed { exit_code: 1 },
            seconds: 0.0,
            verdict,
            first_causal_error: None,
            difference: None,
            outputs: None,
            changed: matches!(verdict, Verdict::Changes | Verdict::Fails),
        }
    }

    /// Searches the catalogue's flips (the script sets `inplace_pass=False`) with the verdict
    /// `verdicts` gives a variant name (`otherwise` for the rest); returns the concluded
    /// bisection and the variants in the order they were started.
    fn search(
        mode: Mode,
        max_runs: usize,
        verdicts: &[(&str, Verdict)],
        otherwise: Verdict,
    ) -> (Bisection, Vec<String>) {
        let (flips, _) = plan_flips(mode, &literal(&[("inplace_pass", "False")]), None);
        let mut b = Bisection::not_applicable("");
        b.mode = Some(mode);
        b.max_runs = max_runs;
        let mut started = Vec::new();
        let mut run = |f: &[Flip]| -> anyhow::Result<Variant> {
            let name = dir_name(f);
            let verdict = verdicts
                .iter()
                .find(|(n, _)| *n == name)
                .map_or(otherwise, |(_, v)| *v);
            started.push(name);
            Ok(judged(f, verdict))
        };
        let (winner, stopped) = search_options(&flips, &mut b, &mut run).unwrap();
        b.outcome = outcome(&winner, &stopped);
        b.implicated = winner.iter().map(|i| b.variants[*i].label(" + ")).collect();
        conclude(&mut b, &winner);
        (b, started)
    }

    #[test]
    fn every_single_flip_runs_and_the_one_that_removes_the_failure_is_implicated() {
        let (b, started) = search(
            Mode::Failure,
            16,
            &[("remove_noop_ops-False", Verdict::Disappears)],
            Verdict::Stays,
        );
        assert_eq!(started.len(), 10, "{started:?}");
        assert_eq!(b.runs, 10);
        assert_eq!(b.outcome, Outcome::Isolated);
        assert_eq!(b.implicated, ["remove_noop_ops=False"]);
        assert!(
            b.conclusion.starts_with(
                "passes only with remove_noop_ops=False → the no-op removal pass is implicated"
            ),
            "{}",
            b.conclusion
        );
    }

    #[test]
    fn pairs_of_the_flips_that_changed_the_failure_run_in_order_until_one_removes_it() {
        let (b, started) = search(
            Mode::Failure,
            16,
            &[
                ("remove_cat_ops-False", Verdict::Changes),
                ("inplace_pass-True", Verdict::Changes),
                ("pattern_fusion_pass-False", Verdict::Changes),
                (
                    "inplace_pass-True+pattern_fusion_pass-False",
                    Verdict::Disappears,
                ),
            ],
            Verdict::Stays,
        );
        // Ten single flips, then the pairs of the three that changed the failure in catalogue
        // order, up to the first that removes it.
        assert_eq!(
            &started[10..],
            [
                "remove_cat_ops-False+inplace_pass-True",
                "remove_cat_ops-False+pattern_fusion_pass-False",
                "inplace_pass-True+pattern_fusion_pass-False",
            ]
        );
        assert_eq!(b.outcome, Outcome::Isolated);
        assert_eq!(
            b.implicated,
            ["inplace_pass=True + pattern_fusion_pass=False"]
        );
        assert!(
            b.conclusion.starts_with(
                "passes only with inplace_pass=True and pattern_fusion_pass=False together → "
            ),
            "{}",
            b.conclusion
        );
    }

    #[test]
    fn no_flip_and_no_pair_that_helps_is_not_isolated() {
        let (b, started) = search(
            Mode::Failure,
            16,
            &[
                ("force_recapture-True", Verdict::Changes),
                ("clone_output-True", Verdict::Changes),
            ],
            Verdict::Stays,
        );
        assert_eq!(started.len(), 11, "one pair: {started:?}");
        assert_eq!(b.outcome, Outcome::NotIsolated);
        assert!(b.implicated.is_empty());
        assert!(
            b.conclusion.starts_with("not isolated by options: no single flip (10 run) and no pair of the flips that changed something (1 run) removes the symptom"),
            "{}",
            b.conclusion
        );
        // Nothing changed the failure: no pair is tried at all.
        let (b, started) = search(Mode::Failure, 16, &[], Verdict::Stays);
        assert_eq!((started.len(), b.outcome), (10, Outcome::NotIsolated));
    }

    #[test]
    fn the_budget_and_an_interruption_end_the_search_early() {
        let (b, started) = search(Mode::Failure, 3, &[], Verdict::Stays);
        assert_eq!(started.len(), 3);
        assert_eq!(b.outcome, Outcome::BudgetExhausted);
        assert_eq!(
            b.conclusion,
            "not isolated by options within --max-runs 3 (3 runs): raise --max-runs to continue"
        );
        // The budget ends the pairs too: ten singles and one pair of three candidates.
        let changes = [
            ("force_recapture-True", Verdict::Changes),
            ("clone_output-True", Verdict::Changes),
            ("remove_cat_ops-False", Verdict::Changes),
        ];
        let (b, started) = search(Mode::Failure, 11, &changes, Verdict::Stays);
        assert_eq!((started.len(), b.outcome), (11, Outcome::BudgetExhausted));

        let (b, started) = search(
            Mode::Failure,
            16,
            &[("clone_output-True", Verdict::Interrupted)],
            Verdict::Stays,
        );
        assert_eq!(started, ["force_recapture-True", "clone_output-True"]);
        assert_eq!(b.outcome, Outcome::Interrupted);
        assert_eq!(
            b.conclusion,
            "interrupted after 2 runs: not isolated so far (what was collected is kept)"
        );
    }

    #[test]
    fn on_the_accuracy_path_a_flip_whose_outputs_match_step_4_is_implicated() {
        let (b, started) = search(
            Mode::Accuracy,
            16,
            &[("clone_output-True", Verdict::Matches)],
            Verdict::Differs,
        );
        assert_eq!(started.len(), 9);
        assert_eq!(b.outcome, Outcome::Isolated);
        assert!(
            b.conclusion.starts_with(
                "matches step 4 only with clone_output=True → outputs are overwritten by a later replay"
            ),
            "{}",
            b.conclusion
        );
        assert_eq!(b.sub_skill.as_deref(), Route::Accuracy.sub_skill());
    }
}
