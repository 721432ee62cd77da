//! `npgx triage analyze DIR`: completeness checks, first failing step, first causal error,
//! route and handoff for a five-step tree (made by `triage run`, `run_triage.sh`, or by hand).

use std::borrow::Cow;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use serde::{Deserialize, Serialize};

use npgx_parsers::causal::{CausalError, CausalScanner};
use npgx_parsers::versions::Framework;

use super::classify::{classify_causal, classify_file, device_readers_to_plogs, Classification};
use super::compare::{self, Comparison};
use super::layout::{
    Step, DEBUG_DIR, ENV_FILE, FIRST_FAILURE_FILE, LOG_FILE, PLOG_DIR, SCRIPTS_DIR, SUCCESS_MARKER,
    WARNINGS_FILE,
};
use super::route::{environment_problem, route_error, Route};
use crate::plog::aicore::assertion_for;
use crate::plog::reader::{for_each_line, for_each_line_while};

/// What was found for one step.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepRecord {
    pub step: Step,
    pub number: usize,
    /// `passed`, `failed`, `not_run`, or `unknown` (directory without marker or failure record).
    pub status: StepStatus,
    pub dir: Option<PathBuf>,
    pub log: Option<LogFile>,
    /// Files under `ascend_plog/`, recursively.
    pub plog_files: Vec<PathBuf>,
    /// `run_*` directories under `torch_compile_debug/`, recursively.
    pub debug_runs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepStatus {
    Passed,
    Failed,
    NotRun,
    Unknown,
}

#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogFile {
    pub path: PathBuf,
    pub bytes: u64,
    pub lines: u64,
}

/// `first_failure.txt`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FirstFailure {
    pub step: Step,
    pub exit_code: i32,
    /// `timeout after …` / `interrupted`, when npgx recorded one.
    pub reason: Option<String>,
}

/// Versions read back from `env.txt`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Versions {
    pub python: Option<String>,
    pub torch: Option<String>,
    pub torch_npu: Option<String>,
    pub torchair: Option<String>,
    pub npugraph_ex: Option<String>,
    pub cann: Option<String>,
    /// The attributes of the installed npugraph_ex's `CompilerConfig` (the `options` keys it
    /// accepts); `None` when npugraph_ex could not be imported.
    pub npugraph_ex_options: Option<Vec<String>>,
    /// The seed the steps started from.
    pub seed: Option<u64>,
}

/// Name of the document of a [`TriageAnalysis`] (schema `npgx.triage-analyze`).
pub const SCHEMA_NAME: &str = "triage-analyze";
/// Version of the `npgx.triage-analyze` document of a [`TriageAnalysis`].
pub const SCHEMA_VERSION: u32 = 1;

/// The analysis of one tree: everything the handoff needs.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TriageAnalysis {
    pub root: PathBuf,
    pub complete: bool,
    /// Why the tree is incomplete or inconsistent (missing logs, steps out of order, …).
    pub problems: Vec<String>,
    /// Lines of `warnings.txt`.
    pub warnings: Vec<String>,
    pub versions: Versions,
    pub steps: Vec<StepRecord>,
    pub first_failure: Option<FirstFailure>,
    pub route: Route,
    pub sub_skill: Option<Cow<'static, str>>,
    /// The rule that fired (`step.pre-classification`, `keyword.runtime`, …).
    pub rule: String,
    pub matched: Option<String>,
    /// One sentence: what decided the route (empty in documents before it was added).
    #[serde(default)]
    pub why: String,
    /// The log the evidence comes from, and the classification of it.
    pub evidence: Option<Classification>,
    pub notes: Vec<String>,
    /// `run_*` directories the sub-skill needs (step 4 and step 5).
    pub handoff_paths: Vec<PathBuf>,
    /// What is still missing for the sub-skill.
    pub missing: Vec<String>,
    /// Outputs and timings of steps 1, 4 and 5 (`--compare-outputs`).
    pub comparison: Option<Comparison>,
    /// On the accuracy route: step 4's data dumps against step 5's (`dump-compare`), when both
    /// steps left npugraph_ex data dumps.
    pub dump_comparison: Option<super::dumps::DumpComparison>,
}

fn read_first_failure(root: &Path) -> anyhow::Result<Option<FirstFailure>> {
    let p = root.join(FIRST_FAILURE_FILE);
    let text = match fs::read_to_string(&p) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| crate::error::CannotRead::new(&p)),
    };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").trim();
    let (name, code) = first.split_once(" exit_code=").with_context(|| {
        format!(
            "{}:1: expected `<step-name> exit_code=<n>`, found `{first}`",
            p.display()
        )
    })?;
    let step = Step::from_name(name.trim())
        .with_context(|| format!("{}:1: unknown step name `{name}`", p.display()))?;
    let exit_code = code
        .trim()
        .parse()
        .with_context(|| format!("{}:1: exit code `{code}` is not a number", p.display()))?;
    let reason = lines
        .find_map(|l| l.strip_prefix("reason="))
        .map(str::to_string);
    Ok(Some(FirstFailure {
        step,
        exit_code,
        reason,
    }))
}

fn read_versions(root: &Path) -> Option<Versions> {
    let text = fs::read_to_string(root.join(ENV_FILE)).ok()?;
    Some(parse_versions(&text))
}

/// Reads the versions out of an `env.txt` in either writer's form.
///
/// npgx's own (`runner::write_env`) writes `key: value` lines and CANN's `version.cfg` indented
/// under `cann_version_cfg: <path>`. CANNBot's `run_triage.sh` prints each package as
/// `torch 2.7.1` (`print('torch', torch.__version__)`; a failed import leaves its traceback
/// instead) and the file under `--- CANN version.cfg ---`. In `version.cfg` the CANN release is
/// `Version=…` in old installs and the part after the colon of
/// `runtime_running_version=[7.3.0.1.231:8.0.RC2]` (and the other `*_running_version` keys) in
/// current ones.
fn parse_versions(text: &str) -> Versions {
    let mut v = Versions::default();
    let mut cann_next = false;
    for line in text.lines() {
        if line.trim() == "--- CANN version.cfg ---" {
            cann_next = true;
            continue;
        }
        if cann_next && v.cann.is_none() {
            v.cann = cann_release(line.trim());
        }
        let Some((k, val)) = line.split_once(": ").or_else(|| run_triage_package(line)) else {
            continue;
        };
        let val = val.trim().to_string();
        match k.trim() {
            "python" => v.python = Some(val),
            "torch" => v.torch = Some(val),
            "torch_npu" => v.torch_npu = Some(val),
            "torchair" => v.torchair = Some(val),
            "npugraph_ex" => v.npugraph_ex = Some(val),
            "npugraph_ex_options" if !val.starts_with("unknown") => {
                v.npugraph_ex_options = Some(
                    val.split(',')
                        .filter(|k| !k.is_empty())
                        .map(str::to_string)
                        .collect(),
                )
            }
            "seed" => v.seed = val.parse().ok(),
            "cann_version_cfg" => cann_next = !val.starts_with("not found"),
            _ => {}
        }
    }
    v
}

/// `torch 2.7.1`: a package run_triage.sh printed, with a version that starts with a digit.
fn run_triage_package(line: &str) -> Option<(&str, &str)> {
    let (name, version) = line.split_once(' ')?;
    let known = matches!(name, "torch" | "torch_npu" | "torchair");
    (known && version.starts_with(|c: char| c.is_ascii_digit())).then_some((name, version))
}

/// The CANN release of one `version.cfg` line, if the line states it.
fn cann_release(line: &str) -> Option<String> {
    if let Some(v) = line
        .strip_prefix("Version=")
        .or_else(|| line.strip_prefix("version="))
    {
        return Some(v.to_string());
    }
    let (key, value) = line.split_once('=')?;
    let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?;
    let release = inner.rsplit_once(':').map_or(inner, |(_, r)| r);
    (key.ends_with("_running_version") && !release.is_empty()).then(|| release.to_string())
}

/// The files below `dir`, sorted by path. What the triage's own scripts wrote is read as found:
/// an unreadable entry is one the analysis cannot use, as a missing one.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = crate::walk::files(dir, usize::MAX, |_| {}).collect();
    out.sort();
    out
}

/// `run_*` directories anywhere under `dir` (run_triage.sh nests them one level deeper).
fn debug_runs(dir: &Path) -> Vec<PathBuf> {
    crate::walk::dirs(dir, usize::MAX, |_| {})
        .filter(|d| {
            d.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("run_"))
        })
        .collect()
}

fn log_file(path: &Path) -> Option<LogFile> {
    let bytes = fs::metadata(path).ok()?.len();
    let stats = for_each_line(path, |_, _| {}).ok()?;
    Some(LogFile {
        path: path.to_path_buf(),
        bytes,
        lines: stats.lines,
    })
}

/// Analyses the tree at `root`.
pub fn analyze(root: &Path) -> anyhow::Result<TriageAnalysis> {
    if !root.is_dir() {
        bail!("{} is not a directory", root.display());
    }
    let first_failure = read_first_failure(root)?;
    let mut problems = Vec::new();
    let mut steps = Vec::new();
    for step in Step::ALL {
        let dir = root.join(step.name());
        let present = dir.is_dir();
        let success = dir.join(SUCCESS_MARKER).exists();
        let failed_here = first_failure.as_ref().is_some_and(|f| f.step == step);
        let status = match (present, success, failed_here) {
            (false, _, _) => StepStatus::NotRun,
            (true, _, true) => StepStatus::Failed,
            (true, true, false) => StepStatus::Passed,
            (true, false, false) => StepStatus::Unknown,
        };
        let log = present.then(|| log_file(&dir.join(LOG_FILE))).flatten();
        if present {
            match &log {
                None => problems.push(format!(
                    "{}: {LOG_FILE} is missing — re-run this step",
                    step.name()
                )),
                Some(l) if l.bytes == 0 => {
                    problems.push(format!("{}: {LOG_FILE} is empty", step.name()))
                }
                _ => {}
            }
            if !dir.join(PLOG_DIR).is_dir() {
                problems.push(format!(
                    "{}: {PLOG_DIR}/ is missing — re-run this step",
                    step.name()
                ));
            }
        }
        let debug = dir.join(DEBUG_DIR);
        steps.push(StepRecord {
            step,
            number: step.number(),
            status,
            dir: present.then(|| dir.clone()),
            log,
            plog_files: if present {
                files_under(&dir.join(PLOG_DIR))
            } else {
                Vec::new()
            },
            debug_runs: if debug.is_dir() {
                debug_runs(&debug)
            } else {
                Vec::new()
            },
        });
    }
    check_order(&steps, first_failure.as_ref(), &mut problems);
    if !root.join(SCRIPTS_DIR).is_dir() {
        problems.push(format!(
            "{SCRIPTS_DIR}/ is missing: the step scripts cannot be checked"
        ));
    }
    let warnings = fs::read_to_string(root.join(WARNINGS_FILE))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default();
    let versions = read_versions(root);
    let mut missing = Vec::new();
    if versions.is_none() {
        missing.push(format!(
            "{ENV_FILE} (torch / torch_npu / torchair / CANN versions)"
        ));
    }
    let versions = versions.unwrap_or_default();
    let mut a = TriageAnalysis {
        root: root.to_path_buf(),
        complete: problems.is_empty(),
        problems,
        warnings,
        versions,
        steps,
        first_failure,
        route: Route::Undetermined,
        sub_skill: None,
        rule: "none".into(),
        matched: None,
        why: String::new(),
        evidence: None,
        notes: Vec::new(),
        handoff_paths: Vec::new(),
        missing,
        comparison: compare::compare(root)?,
        dump_comparison: None,
    };
    route_tree(&mut a)?;
    if a.why.is_empty() {
        a.why = a.notes.first().cloned().unwrap_or_default();
    }
    if a.route == Route::Accuracy {
        let (step4, step5) = (
            root.join(Step::ForceEager.name()),
            root.join(Step::NpugraphEx.name()),
        );
        match super::dumps::compare_steps(&step4, &step5) {
            Ok(found) => a.dump_comparison = found,
            Err(e) => a.notes.push(format!(
                "the step 4 / step 5 data dumps could not be compared: {e:#}"
            )),
        }
    }
    collect_missing(&mut a);
    Ok(a)
}

/// Steps must have run in order: passed steps before the failure, nothing after it.
fn check_order(steps: &[StepRecord], ff: Option<&FirstFailure>, problems: &mut Vec<String>) {
    let limit = ff.map_or(6, |f| f.step.number());
    for s in steps {
        if s.number < limit && s.status != StepStatus::Passed {
            let why = match s.status {
                StepStatus::NotRun => "has no directory",
                _ => "has no SUCCESS marker",
            };
            let tail = match ff {
                Some(f) => format!("but the first failure is {}", f.step.name()),
                None => "and first_failure.txt is absent (run incomplete or interrupted?)".into(),
            };
            problems.push(format!("{} {why}, {tail}", s.step.name()));
        }
        if s.number > limit && s.status != StepStatus::NotRun {
            problems.push(format!(
                "steps out of order: {} has output after the first failure ({})",
                s.step.name(),
                ff.map_or("", |f| f.step.name())
            ));
        }
    }
    if let Some(f) = ff {
        if steps[f.step.number() - 1].status == StepStatus::NotRun {
            problems.push(format!(
                "first_failure.txt names {} but its directory is missing",
                f.step.name()
            ));
        }
    }
}

/// Classifies the failing step's log (falling back to its plogs) and applies the step-based
/// pre-classification.
fn route_tree(a: &mut TriageAnalysis) -> anyhow::Result<()> {
    let Some(ff) = a.first_failure.clone() else {
        if a.steps.iter().all(|s| s.status == StepStatus::Passed) {
            route_passed(a);
        }
        return Ok(());
    };
    let rec = &a.steps[ff.step.number() - 1];
    let mut evidence = None;
    if let Some(log) = &rec.log {
        let c = classify_file(&log.path)?;
        if c.first_causal_error.is_some() {
            evidence = Some(c);
        }
    }
    if evidence.is_none() {
        evidence = plog_evidence(&rec.plog_files);
    }
    // A step log states no versions; the tree's env.txt does (`versions`, and `missing` of the
    // analysis says what the tree lacks), so the log's own `missing` would mislead.
    if let Some(e) = evidence.as_mut() {
        e.missing.clear();
    }
    if let Some(reason) = &ff.reason {
        a.notes
            .push(format!("{} did not finish: {reason}", ff.step.name()));
    }
    let causal = evidence.as_ref().and_then(|c| c.first_causal_error.clone());
    if let Some(err) = &causal {
        if let Some(env) = environment_problem(err) {
            a.route = Route::Environment;
            a.rule = "shape.environment".into();
            a.matched = Some(env.token.clone());
            a.why = format!(
                "{} failed with an environment problem named by its error (`{}`): {}",
                ff.step.name(),
                env.token,
                env.why
            );
            a.notes.push(format!(
                "{}: this is an environment problem{}, not a compile error — fix it, then re-run",
                env.why,
                env.named()
            ));
            a.evidence = evidence;
            return Ok(());
        }
    }
    match ff.step {
        Step::Eager | Step::CompileEager | Step::CompileAotEager | Step::ForceEager => {
            a.route = Route::CompileError;
            a.rule = "step.pre-classification".into();
            a.matched = Some(format!("{} failed", ff.step.name()));
            a.why = format!(
                "step {} ({}) failed → compile-error (steps 1–4 fail before the full npugraph_ex path)",
                ff.step.number(),
                ff.step.describe()
            );
            a.notes.push(a.why.clone());
            if ff.step == Step::Eager {
                a.notes.push(
                    "eager already crashes — probably not npugraph_ex; check model / data / environment first".into(),
                );
            }
            if ff.step == Step::ForceEager {
                a.handoff_paths = handoff_runs(&a.steps, &[Step::ForceEager]);
            }
        }
        Step::NpugraphEx => {
            match &causal {
                Some(err) => {
                    let r = route_error(err);
                    a.route = r.route;
                    a.rule = r.rule;
                    a.matched = r.matched;
                    a.why = format!("{} failed; {}", ff.step.name(), r.why);
                    a.notes.extend(r.notes);
                }
                None => {
                    a.route = Route::Undetermined;
                    a.rule = "no-causal-error".into();
                    a.notes.push(
                        "step 5 failed but neither its log nor its plogs hold a recognisable error"
                            .into(),
                    );
                }
            }
            if a.steps[Step::ForceEager.number() - 1].status == StepStatus::Passed {
                a.notes.push(
                    "the problem appears only with force_eager=False: suspect the full compile / optimisation path (ACL graph capture / replay)".into(),
                );
            }
            a.handoff_paths = handoff_runs(&a.steps, &[Step::ForceEager, Step::NpugraphEx]);
        }
    }
    a.sub_skill = a.route.sub_skill().map(Cow::Borrowed);
    a.evidence = evidence;
    Ok(())
}

/// All five steps passed: accuracy or performance from the captured outputs and timings.
fn route_passed(a: &mut TriageAnalysis) {
    a.rule = "all-steps-passed".into();
    let Some(cmp) = &a.comparison else {
        a.notes.push(
            "all five steps passed: a result mismatch → accuracy, slowness → performance (re-run with --compare-outputs to measure both)"
                .into(),
        );
        a.handoff_paths = handoff_runs(&a.steps, &[Step::ForceEager, Step::NpugraphEx]);
        return;
    };
    if let Some(noise) = cmp.eager_repeat.as_ref().filter(|n| !n.allclose) {
        a.rule = "compare.eager-nondeterministic".into();
        a.matched = Some(format!(
            "step1 vs its repeat from the same seed: max abs error {:.3e}, min cosine {:.6}",
            noise.max_abs_error, noise.min_cosine
        ));
        a.notes.push(
            "nondeterministic even in eager: two eager runs from the same seed differ, so output differences between steps say nothing about npugraph_ex — make the script deterministic (fixed inputs, no time- or OS-seeded randomness) and re-run".into(),
        );
        return;
    }
    let mismatch = cmp
        .outputs
        .iter()
        .filter(|o| o.reference == Step::Eager)
        .find(|o| !o.allclose);
    if let Some(m) = mismatch {
        a.route = Route::Accuracy;
        a.rule = "compare.outputs".into();
        a.matched = Some(format!(
            "{} vs {}: max abs error {:.3e}, max rel error {:.3e}, min cosine {:.6}",
            m.candidate.name(),
            m.reference.name(),
            m.max_abs_error,
            m.max_rel_error,
            m.min_cosine
        ));
        let force_eager_ok = cmp
            .outputs
            .iter()
            .any(|o| o.reference == Step::Eager && o.candidate == Step::ForceEager && o.allclose);
        if m.candidate == Step::NpugraphEx && force_eager_ok {
            a.notes.push(
                "step 4 (force_eager) matches eager, step 5 does not: the difference comes from ACL graph capture / replay".into(),
            );
        }
        a.notes.extend(m.problems.iter().cloned());
        a.handoff_paths = handoff_runs(&a.steps, &[Step::ForceEager, Step::NpugraphEx]);
    } else {
        let timing = |s: Step| cmp.timings.iter().find(|t| t.step == s);
        match (timing(Step::Eager), timing(Step::NpugraphEx)) {
            (Some(eager), Some(graph)) if eager.calls.min(graph.calls) <= MIN_TIMED_CALLS => {
                a.notes.push(format!(
                    "all five steps passed and outputs match eager; speed not judged: steps 1 and 5 made {} and {} calls after the first (compiling) one, at least {MIN_TIMED_CALLS} each are needed — call the model more often",
                    eager.calls.saturating_sub(1),
                    graph.calls.saturating_sub(1)
                ));
            }
            (Some(eager), Some(graph))
                if graph.fastest_seconds > eager.fastest_seconds * SLOWER_FACTOR
                    && graph.fastest_seconds - eager.fastest_seconds > SLOWER_MIN_SECONDS =>
            {
                a.route = Route::Performance;
                a.rule = "compare.timings".into();
                a.matched = Some(format!(
                    "step5 fastest call {:.3} ms vs step1 (eager) {:.3} ms ({:.1}x)",
                    graph.fastest_seconds * 1e3,
                    eager.fastest_seconds * 1e3,
                    graph.fastest_seconds / eager.fastest_seconds
                ));
                a.handoff_paths = handoff_runs(&a.steps, &[Step::NpugraphEx]);
            }
            _ => a.notes.push(
                "all five steps passed, outputs match eager and step 5 is not slower: nothing to route".into(),
            ),
        }
    }
    a.sub_skill = a.route.sub_skill().map(Cow::Borrowed);
}

/// Speed is judged only when steps 1 and 5 each made at least this many calls after the first …
const MIN_TIMED_CALLS: usize = 2;
/// … from their fastest later calls: step 5 counts as slower than eager beyond this factor …
const SLOWER_FACTOR: f64 = 1.5;
/// … and this absolute difference per call.
const SLOWER_MIN_SECONDS: f64 = 1e-3;

/// The screen log holds no error: the most causal error of the step's plogs, by the causal
/// engine's ordering (tier, rank), then the earliest file. Files are streamed.
fn plog_evidence(files: &[PathBuf]) -> Option<Classification> {
    let mut best: Option<(&PathBuf, CausalError, bool)> = None;
    for p in files {
        let mut scanner = CausalScanner::first_only();
        if for_each_line(p, |no, line| scanner.push(no, line)).is_err() {
            continue;
        }
        let saw_assert = scanner.saw_kernel_assert();
        let Some(c) = scanner.finish() else {
            continue;
        };
        if best
            .as_ref()
            .is_some_and(|(_, b, _)| (b.tier, b.rank) <= (c.tier, c.rank))
        {
            continue;
        }
        best = Some((p, c, saw_assert));
    }
    best.map(|(p, err, saw_assert)| {
        let assert = assertion_for(&err, saw_assert, |f| for_each_line_while(p, f));
        // A triage tree is a PyTorch run (run_triage.sh's steps).
        let mut c = classify_causal(p, err, assert, Framework::Torch);
        // The step's plog folder holds every process's records: the aicore checks read it.
        let plogs = p
            .ancestors()
            .find(|a| a.file_name().is_some_and(|n| n == PLOG_DIR))
            .and_then(Path::to_str);
        device_readers_to_plogs(&mut c, plogs, |f| for_each_line_while(p, f));
        c
    })
}

fn handoff_runs(steps: &[StepRecord], which: &[Step]) -> Vec<PathBuf> {
    steps
        .iter()
        .filter(|s| which.contains(&s.step))
        .flat_map(|s| s.debug_runs.iter().cloned())
        .collect()
}

/// What the sub-skill will still need.
fn collect_missing(a: &mut TriageAnalysis) {
    let v = a.versions.clone();
    // A step that passed imported torch (every step script does): the interpreter has it, only
    // env.txt does not say which.
    let torch_ran = a.steps.iter().any(|s| s.status == StepStatus::Passed);
    let mut not_importable = Vec::new();
    for (name, val) in [
        ("torch_npu", &v.torch_npu),
        ("torchair", &v.torchair),
        ("torch", &v.torch),
    ] {
        match val.as_deref() {
            Some(s) if !s.starts_with("not available") => {}
            _ if name == "torch" && torch_ran => a
                .missing
                .push("torch version (not recorded in env.txt; the steps imported torch)".into()),
            Some(_) => {
                not_importable.push(name);
                a.missing.push(format!(
                    "{name} version (not importable in the step interpreter)"
                ));
            }
            None => a
                .missing
                .push(format!("{name} version (not recorded in env.txt)")),
        }
    }
    let npu_stack: Vec<&str> = not_importable
        .iter()
        .copied()
        .filter(|n| matches!(*n, "torch_npu" | "torchair"))
        .collect();
    if !npu_stack.is_empty() {
        a.notes.push(format!(
            "env.txt: the step interpreter cannot import {}: steps 4–5 did not run npugraph_ex on an NPU with it, so their results say nothing about npugraph_ex",
            npu_stack.join(" or ")
        ));
    }
    if v.cann.is_none() {
        a.missing
            .push("CANN version (version.cfg not found)".into());
    }
    if let Some(ff) = &a.first_failure {
        let rec = &a.steps[ff.step.number() - 1];
        if rec.plog_files.is_empty() && matches!(a.route, Route::RuntimeError) {
            a.missing.push(format!(
                "CANN plogs of {} ({PLOG_DIR}/ is empty): re-run on the NPU host",
                ff.step.name()
            ));
        }
    }
    let need_runs: &[Step] = match a.route {
        Route::Accuracy => &[Step::ForceEager, Step::NpugraphEx],
        Route::Performance => &[Step::NpugraphEx],
        _ => &[],
    };
    for s in need_runs {
        if a.steps[s.number() - 1].debug_runs.is_empty() {
            a.missing.push(format!(
                "{}/{DEBUG_DIR}/run_* (TORCH_COMPILE_DEBUG output)",
                s.name()
            ));
        }
    }
    a.missing.push(
        "not derivable from logs: whether input shapes are fixed; multi-stream, custom ops or in-place ops involved".into(),
    );
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::triage::compare::{Comparison, OutputComparison, Timing};

    /// All five steps passed with outputs equal to eager's, and `calls` calls per step.
    pub(crate) fn passed(calls: usize) -> TriageAnalysis {
        let same = |candidate| OutputComparison {
            reference: Step::Eager,
            candidate,
            tensors: calls,
            max_abs_error: 0.0,
            max_rel_error: 0.0,
            min_cosine: 1.0,
            allclose: true,
            problems: Vec::new(),
        };
        let timing = |step, fastest_seconds| Timing {
            step,
            calls,
            first_call_seconds: 1.0,
            median_seconds: fastest_seconds,
            fastest_seconds,
        };
        TriageAnalysis {
            root: PathBuf::from("tree"),
            complete: true,
            problems: Vec::new(),
            warnings: Vec::new(),
            versions: Versions::default(),
            steps: Step::ALL
                .iter()
                .map(|&step| StepRecord {
                    step,
                    number: step.number(),
                    status: StepStatus::Passed,
                    dir: None,
                    log: None,
                    plog_files: Vec::new(),
                    debug_runs: Vec::new(),
                })
                .collect(),
            first_failure: None,
            route: Route::Undetermined,
            sub_skill: None,
            rule: String::new(),
            matched: None,
            why: String::new(),
            evidence: None,
            notes: Vec::new(),
            handoff_paths: Vec::new(),
            missing: Vec::new(),
            comparison: Some(Comparison {
                outputs: vec![same(Step::ForceEager), same(Step::NpugraphEx)],
                // Step 5 ten times slower than eager: slow enough to route, when judged.
                timings: vec![timing(Step::Eager, 0.01), timing(Step::NpugraphEx, 0.1)],
                eager_repeat: Some(same(Step::Eager)),
            }),
            dump_comparison: None,
        }
    }

    #[test]
    fn two_calls_are_too_few_to_judge_speed_three_are_enough() {
        let mut a = passed(2);
        route_passed(&mut a);
        assert_eq!(a.route, Route::Undetermined);
        assert_eq!(a.rule, "all-steps-passed");
        assert!(
            a.notes.iter().any(|n| n
                .contains("speed not judged: steps 1 and 5 made 1 and 1 calls after the first")),
            "{:?}",
            a.notes
        );
        let mut a = passed(3);
        route_passed(&mut a);
        assert_eq!(a.route, Route::Performance);
        assert_eq!(a.rule, "compare.timings");
    }

    /// Two eager runs from the same seed that differ make every other output difference
    /// meaningless: no accuracy route, whatever step 5 computed (the end-to-end case, a script
    /// that reseeds itself from the OS, is tests/it/triage_slow.rs).
    #[test]
    fn eager_differing_from_its_repeat_is_nondeterminism_not_accuracy() {
        let mut a = passed(3);
        let cmp = a.comparison.as_mut().expect("compared");
        for o in cmp.outputs.iter_mut().chain(cmp.eager_repeat.as_mut()) {
            o.allclose = false;
            o.max_abs_error = 0.5;
        }
        route_passed(&mut a);
        assert_eq!(a.route, Route::Undetermined);
        assert_eq!(a.rule, "compare.eager-nondeterministic");
        assert!(
            a.notes
                .iter()
                .any(|n| n.starts_with("nondeterministic even in eager")),
            "{:?}",
            a.notes
        );
        assert!(a.matched.as_deref().is_some_and(|m| m.contains("5.000e-1")));
    }

    #[test]
    fn versions_from_npgx_env_txt() {
        let v = parse_versions(
            "# npgx triage environment\nseed: 3\npython: 3.11.2\ntorch: 2.7.1\ntorch_npu: 2.7.1.post2\ntorchair: not available: No module named 'torchair'\nnpugraph_ex_options: clone_input,force_eager\ncann_version_cfg: /usr/local/Ascend/ascend-toolkit/latest/version.cfg\n  runtime_running_version=[7.3.0.1.231:8.0.RC2]\n  toolkit_running_version=[7.3.0.1.231:8.0.RC2]\n",
        );
        assert_eq!(v.seed, Some(3));
        assert_eq!(v.torch.as_deref(), Some("2.7.1"));
        assert_eq!(v.torch_npu.as_deref(), Some("2.7.1.post2"));
        assert!(v.torchair.is_some_and(|t| t.starts_with("not available")));
        assert_eq!(v.cann.as_deref(), Some("8.0.RC2"));
        assert_eq!(
            v.npugraph_ex_options,
            Some(vec!["clone_input".to_string(), "force_eager".to_string()])
        );
        let old = parse_versions("cann_version_cfg: /opt/version.cfg\n  Version=5.1.RC2\n");
        assert_eq!(old.cann.as_deref(), Some("5.1.RC2"));
        let none = parse_versions("cann_version_cfg: not found (/usr/local/Ascend)\n");
        assert_eq!(none.cann, None);
    }

    #[test]
    fn versions_from_run_triage_sh_env_txt() {
        // run_triage.sh: `print('torch', torch.__version__)` per package, a failed import's
        // traceback, then version.cfg under its header.
        let v = parse_versions(
            "torch 2.7.1\ntorch_npu 2.7.1.post2\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\nModuleNotFoundError: No module named 'torchair'\n--- CANN version.cfg ---\nruntime_running_version=[7.3.0.1.231:8.0.RC2]\n",
        );
        assert_eq!(v.torch.as_deref(), Some("2.7.1"));
        assert_eq!(v.torch_npu.as_deref(), Some("2.7.1.post2"));
        assert_eq!(v.torchair, None);
        assert_eq!(v.cann.as_deref(), Some("8.0.RC2"));
        let missing = parse_versions(
            "torch 2.7.1\nCANN version.cfg not found at /usr/local/Ascend/ascend-toolkit/latest/\n",
        );
        assert_eq!(missing.cann, None);
    }
}
