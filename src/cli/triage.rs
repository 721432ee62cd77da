//! `npgx triage run|bisect|steps|analyze|classify`.

use super::TextFormat;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::report;
use crate::triage::bisect::{BisectConfig, DEFAULT_MAX_RUNS};
use crate::triage::classify::FileError;
use crate::triage::runner::{Progress, RunConfig, StepEnd};
use crate::triage::steps::{self, BadArguments, StepsConfig, EXIT_BAD_ARGUMENTS};
use crate::triage::{self as engine, analyze, classify};

/// Arguments of `npgx triage`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Layered triage of torch.compile failures on Ascend (npugraph_ex)",
    long_about = "Layered triage of torch.compile failures on Ascend (npugraph_ex backend).\n\n\
The ladder: 1 eager → 2 backend=\"eager\" → 3 backend=\"aot_eager\" → 4 npugraph_ex with \
force_eager=True → 5 the original npugraph_ex call. The first failing step and the first causal \
error decide the route: compile-error, runtime-error, accuracy or performance.\n\n\
  npgx triage classify stderr.log         route any captured output\n\
  npgx triage classify logs/              the first rank of a job's rank logs, and its cascade\n\
  npgx triage analyze torch-npugraph-ex-triage-logs/20260101-120000-pid42\n\
  npgx triage run repro.py --cmd 'torchrun --nproc_per_node=8 {script} --cfg x'\n\
  npgx triage steps triage-root 'python {SCRIPT}'   (run_triage.sh's contract)\n\
  npgx triage bisect repro.py --compare-outputs"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: TriageCommand,
}

#[derive(Debug, Subcommand)]
pub enum TriageCommand {
    /// Generate the five step scripts from SCRIPT, run them in order, analyse, print the handoff.
    #[command(
        long_about = "Generate scripts/original.py and the five step scripts from SCRIPT by \
minimal syntax-aware edits of the selected torch.compile call, run them in order (stop at the \
first failure) with each step's environment (steps 1-3: TORCH_LOGS=+all; steps 4-5: \
TORCH_COMPILE_DEBUG=1; all: ASCEND_PROCESS_LOG_PATH=<step>/ascend_plog), then analyse the tree \
and write triage_report.md.\n\nThe tree is torch-npugraph-ex-triage-logs/<YYYYMMDD-HHMMSS>-pid<PID>/ \
under --out. Exit code: 0 all steps passed, 1 a step failed (see the report), 2 npgx could not \
run, 130 interrupted (Ctrl-C stops the step's whole process group; what was collected is kept)."
    )]
    Run(RunArgs),
    /// Run the ladder, then find the npugraph_ex option behind a step-5-only failure or difference.
    #[command(
        long_about = "Run the ladder as `triage run` does, then — when step 4 (force_eager) passes \
and step 5 fails, or with --compare-outputs step 5's outputs differ from step 4's — run variants \
of step 5 that each flip one npugraph_ex CompilerConfig option away from the value in force \
(force_recapture, clone_output, clone_input, reuse_graph_pool_in_same_fx, remove_noop_ops, \
remove_cat_ops, inplace_pass, input_inplace_pass, pattern_fusion_pass, frozen_parameter and \
static_kernel_compile back to default when the script set them, capture_error_mode=\"relaxed\" \
for failures). Options the installed npugraph_ex rejects are skipped. When no single flip helps, \
pairs of the flips that changed something are tried. Each variant runs into \
bisect/<variant>/ of the tree; triage_report.md gets the table and one conclusion line. On the \
accuracy path the failing and the passing variant are run again with data dumps and compared \
(dump-compare). Same as `triage run --bisect`.\n\nExit code: as `triage run` (0 all ladder \
steps passed, 1 a step failed, 2 npgx could not run, 130 interrupted).\n\n\
When no option isolates the symptom (or with --nodes), the FX nodes are searched: step 5's \
script runs with a wrapper backend that splits every FX graph handed to npugraph_ex at node \
boundaries, compiles a chosen set of nodes with npugraph_ex (the call's options) and runs the \
rest eagerly; a binary search along execution order, then delta debugging, finds the smallest \
set that still shows the symptom (into bisect/nodes/), and bisect/repro_g<graph>_<node>.py \
re-runs that node's op alone, eagerly and through npugraph_ex."
    )]
    Bisect(RunArgs),
    /// Run step scripts you wrote in ROOT/scripts/ as run_triage.sh does, then analyse the tree.
    #[command(
        long_about = "Take the place of the triage skill's scripts/run_triage.sh ROOT CMD_TEMPLATE \
(cannbot-skills, torch-npugraph-ex-dfx-triage): same arguments, same tree, same files, same exit \
codes, then npgx's analysis on top.\n\n\
ROOT must exist and hold scripts/ with the step scripts step1-eager.py, step2-compile-eager.py, \
step3-compile-aot_eager.py, step4-npugraph_ex-force_eager.py, step5-npugraph_ex.py (a missing one \
is skipped, not a failure). CMD_TEMPLATE must contain {SCRIPT}, which is replaced by the step \
script's path; the command runs under bash -c with stdout and stderr into \
ROOT/<step>/stdout_stderr.log. Every step gets ASCEND_PROCESS_LOG_PATH=ROOT/<step>/ascend_plog, \
ASCEND_GLOBAL_LOG_LEVEL=1 and ASCEND_SLOG_PRINT_TO_STDOUT=0; steps 1-3 also TORCH_LOGS=+all; steps \
4-5 TORCH_COMPILE_DEBUG=1 and TORCH_COMPILE_DEBUG_DIR=ROOT/<step>/torch_compile_debug (PyTorch \
then writes .../torch_compile_debug/torch_compile_debug/run_*). Written: ROOT/env.txt, per step \
stdout_stderr.log, ascend_plog/, torch_compile_debug/ (steps 4-5) and SUCCESS when it passed, \
ROOT/first_failure.txt ('<step> exit_code=<n>'; an earlier one is kept), ROOT/warnings.txt (a \
missing or empty log or plog directory). Stops at the first failing step. Then the tree is \
analysed as `triage analyze` does: ROOT/triage_report.md, and the handoff (or with --format json \
the npgx.triage-analyze document) on stdout.\n\n\
Exit code: 0 every step passed or was missing, 1-5 the first failing step, 64 bad arguments \
(wrong number, ROOT or ROOT/scripts/ missing, no {SCRIPT} in the template), 130 interrupted \
(Ctrl-C stops the step's process group), 2 npgx itself could not go on (an error on stderr; \
first_failure.txt then says nothing new)."
    )]
    Steps(StepsArgs),
    /// Analyse an existing five-step tree (does not re-run anything).
    #[command(
        long_about = "Analyse a torch-npugraph-ex-triage-logs/<run>/ tree made by `npgx triage run` \
or run_triage.sh: completeness first (missing logs or step directories, steps out of order), \
then the first failing step (from first_failure.txt), the first causal error of its log (its \
plogs when the log has none), the route and the handoff. Prints the handoff (Markdown) or JSON; \
the tree is not modified. Exit code: 0 complete tree, 1 incomplete tree (analysis still printed)."
    )]
    Analyze(AnalyzeArgs),
    /// Classify captured output (stdout/stderr, a plog, a pasted log): first causal error + route.
    #[command(
        long_about = "Classify captured output without a step tree: the first causal error and its \
route. Pasted output is accepted as is: Markdown quotes and fences, a paste indented as a whole, \
excerpt-gap markers, vLLM / [rankN]: / glog / c10 / old TORCH_LOGS prefixes. Wrappers \
(BackendCompilerFailed, escaped embedded errors, a Python exception that only names the C++ \
file ahead of a CANN report) are unwrapped, CANN error reports are read root-first and cascades \
are skipped; `npgx plog` names the same line.\n\n\
A directory is a job's rank (worker) logs: every file under it is classified, each file's rank \
read from its path (rank3.log, worker_3/, attempt_0/3/) or its lines ([rank3]:, (Worker_TP3 \
pid=…), RankID:3), each error dated by its line's time stamp (or the last one before it), and \
the ranks put in the order `npgx plog` uses across files: the first rank, then the ranks it \
cascaded to with their delay; without time stamps, by the errors' strength (said in a note).\n\n\
Routing order (docs/triage.md): capture context → the causal error's shape (environment \
problem, graph-break / recompile reason, exception class, kernel assertion, CANN code family, \
runtime error number) → keywords → fallback. Routes: compile-error, runtime-error, accuracy, \
performance, environment, undetermined. Without a step tree there is no step-based \
pre-classification. Files are streamed (bounded memory; lines longer than 1 MiB are cut).\n\n\
Exit code: 0 nothing found (no file holds a causal error, none routes), 1 a causal error or a \
route was found in at least one file (an undetermined file with a causal error counts), 2 a \
file could not be read (the others are still classified) or bad usage."
    )]
    Classify(ClassifyArgs),
}

#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    /// Files to classify, or directories of a job's rank (worker) logs: every file under a
    /// directory is classified and the ranks are put in one order (the first rank, the ranks
    /// it cascaded to).
    #[arg(required = true, value_name = "FILE|DIR")]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// The user's repro script (the one with the npugraph_ex torch.compile call).
    pub script: PathBuf,
    /// Launcher template with {script}, e.g. 'torchrun --nproc_per_node=8 {script} --cfg x'.
    /// Default: 'python {script}'.
    #[arg(long = "cmd", value_name = "TEMPLATE")]
    pub cmd: Option<String>,
    /// Directory under which torch-npugraph-ex-triage-logs/ is created.
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    /// Which compile call to edit (1-based, in source order) when the choice is ambiguous.
    #[arg(long = "call", value_name = "N")]
    pub call: Option<usize>,
    /// Per-step timeout in seconds (the step's process group is stopped).
    #[arg(long, value_name = "S")]
    pub timeout: Option<u64>,
    /// Output format of the handoff on stdout.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
    /// Also write the HTML report of the run to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Wrap the compiled callable to save the outputs of its first calls (.npy) and per-call wall
    /// times; when all steps pass, compare steps 1, 4, 5 and route to accuracy or performance.
    #[arg(long)]
    pub compare_outputs: bool,
    /// Steps 4 and 5 write npugraph_ex data dumps (dump_tensor_data=True, data_dump_dir = the
    /// step directory); on the accuracy route they are compared with dump-compare.
    #[arg(long)]
    pub dump_tensors: bool,
    /// The seed of Python's random, numpy and torch (CPU and NPU) at the top of every step script.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// After a step-5-only failure (or difference, with --compare-outputs), bisect the
    /// npugraph_ex options (as `triage bisect`).
    #[arg(long)]
    pub bisect: bool,
    /// Bisect budget: processes started for variants and dumps, at most (the FX node search has
    /// the same budget of its own).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_RUNS)]
    pub max_runs: usize,
    /// After the option search, find the FX node(s) behind the failure or difference whatever
    /// the options showed (implies --bisect); without it the node search runs only when no
    /// option isolates the symptom.
    #[arg(long)]
    pub nodes: bool,
    /// Arguments passed to the script.
    #[arg(last = true)]
    pub args: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct StepsArgs {
    /// The triage root, made beforehand, with the step scripts in ROOT/scripts/.
    pub root: PathBuf,
    /// The launch command with {SCRIPT}, e.g. 'python {SCRIPT}' or
    /// 'torchrun --nproc_per_node=8 {SCRIPT} --config cfg.yaml'.
    #[arg(value_name = "CMD_TEMPLATE")]
    pub template: String,
    /// Output format of the analysis on stdout.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
    /// Per-step timeout in seconds (the step's process group is stopped; npgx's addition).
    #[arg(long, value_name = "S")]
    pub timeout: Option<u64>,
    /// Also write the HTML report of the analysis to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

/// Whether the command line asks for `triage steps`, whose bad arguments exit 64
/// (run_triage.sh's contract) instead of clap's 2.
pub fn is_steps(argv: &[std::ffi::OsString]) -> bool {
    let words: Vec<&std::ffi::OsStr> = argv
        .iter()
        .skip(1)
        .map(|a| a.as_os_str())
        .take_while(|a| *a != "--")
        .filter(|a| !a.to_string_lossy().starts_with('-'))
        .collect();
    words.starts_with(&[
        std::ffi::OsStr::new("triage"),
        std::ffi::OsStr::new("steps"),
    ])
}

/// Exit codes of `triage steps` that report a failing step (1–5), which `--exit-zero` turns to 0.
pub const STEPS_FINDINGS: [u8; 5] = [1, 2, 3, 4, 5];

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// The tree: torch-npugraph-ex-triage-logs/<YYYYMMDD-HHMMSS>-pid<PID>/.
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
    /// Also write the HTML report of the analysis to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        TriageCommand::Run(a) => run_run(a, false),
        TriageCommand::Bisect(a) => run_run(a, true),
        TriageCommand::Steps(a) => run_steps(a),
        TriageCommand::Analyze(a) => run_analyze(a),
        TriageCommand::Classify(a) => run_classify(a),
    }
}

/// Live progress on stderr: a spinner per step on a terminal, one line per step otherwise.
struct StepProgress {
    bar: Option<ProgressBar>,
    terminal: bool,
}

impl Progress for StepProgress {
    fn step_started(&mut self, label: &str, command: &str) {
        if self.terminal {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(label.to_string());
            bar.enable_steady_tick(Duration::from_millis(120));
            self.bar = Some(bar);
        } else {
            eprintln!("npgx triage: {label} started: {command}");
        }
    }

    fn step_tick(&mut self, _: &str, _: Duration, bytes: u64, last_line: &str) {
        if let Some(bar) = &self.bar {
            let line: String = last_line.chars().take(80).collect();
            bar.set_message(format!("{:>7} KiB | {line}", bytes / 1024));
        }
    }

    fn step_skipped(&mut self, label: &str, script: &std::path::Path) {
        eprintln!(
            "npgx triage: {label} skipped: {} does not exist",
            script.display()
        );
    }

    fn step_finished(&mut self, label: &str, end: StepEnd, seconds: f64) {
        let verdict = match end {
            StepEnd::Passed => "passed".to_string(),
            StepEnd::Failed { exit_code } => format!("FAILED exit_code={exit_code}"),
            StepEnd::TimedOut { after_secs, .. } => format!("TIMED OUT after {after_secs}s"),
            StepEnd::Interrupted { .. } => "INTERRUPTED".to_string(),
        };
        let line = format!("{label} {verdict} ({seconds:.1}s)");
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(verdict),
            None => eprintln!("npgx triage: {line}"),
        }
    }
}

fn run_run(args: RunArgs, bisect_command: bool) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig {
        script: args.script,
        template: args.cmd,
        args: args.args,
        out: args.out,
        call: args.call,
        timeout: args.timeout.map(Duration::from_secs),
        compare_outputs: args.compare_outputs,
        dump_tensors: args.dump_tensors,
        seed: args.seed,
    };
    let bisect = (bisect_command || args.bisect || args.nodes).then_some(BisectConfig {
        max_runs: args.max_runs,
        nodes: args.nodes,
    });
    let mut progress = StepProgress {
        bar: None,
        terminal: std::io::stderr().is_terminal(),
    };
    let outcome = engine::run(&cfg, bisect, &mut progress)?;
    let (handoff, nodes) = report::triage::run_handoff(&outcome)?;
    outcome.write_handoff(&handoff, nodes.as_deref())?;
    if let Some(path) = &args.html {
        let source = format!("npgx triage run {}", outcome.run.root.display());
        super::report::write_html(path, source, report::triage::run_value(&outcome)?)?;
    }
    match args.format {
        TextFormat::Text => super::print(&report::triage::run_text(&outcome))?,
        TextFormat::Json => super::print(&(report::triage::run_json(&outcome)? + "\n"))?,
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

fn run_steps(args: StepsArgs) -> anyhow::Result<ExitCode> {
    let cfg = StepsConfig {
        root: args.root,
        template: args.template,
        timeout: args.timeout.map(Duration::from_secs),
    };
    let mut progress = StepProgress {
        bar: None,
        terminal: std::io::stderr().is_terminal(),
    };
    let outcome = match steps::run(&cfg, &mut progress) {
        Ok(o) => o,
        Err(e) => {
            return match e.downcast_ref::<BadArguments>() {
                Some(bad) => {
                    eprintln!("npgx: error: {bad}\n\nUsage: {STEPS_USAGE}");
                    Ok(ExitCode::from(EXIT_BAD_ARGUMENTS))
                }
                None => Err(e),
            }
        }
    };
    let handoff = report::triage::handoff_markdown(&outcome.analysis, None);
    crate::output::write(&outcome.report_path(), handoff.as_bytes())?;
    if let Some(path) = &args.html {
        let source = format!("npgx triage steps {}", outcome.root.display());
        super::report::write_html(
            path,
            source,
            report::triage::analyze_value(&outcome.analysis)?,
        )?;
    }
    match args.format {
        TextFormat::Text => super::print(&handoff)?,
        TextFormat::Json => {
            super::print(&(report::triage::analyze_json(&outcome.analysis)? + "\n"))?
        }
    }
    Ok(ExitCode::from(outcome.exit_code()))
}

/// The usage line printed with a bad-arguments error of `triage steps`.
pub const STEPS_USAGE: &str =
    "npgx triage steps [--format text|json] [--timeout S] [--html FILE] ROOT CMD_TEMPLATE";

fn run_analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let analysis = analyze::analyze(&args.dir)?;
    if let Some(path) = &args.html {
        let source = format!("npgx triage analyze {}", args.dir.display());
        super::report::write_html(path, source, report::triage::analyze_value(&analysis)?)?;
    }
    match args.format {
        TextFormat::Text => super::print(&report::triage::handoff_markdown(&analysis, None))?,
        TextFormat::Json => super::print(&(report::triage::analyze_json(&analysis)? + "\n"))?,
    }
    Ok(if analysis.complete {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn run_classify(args: ClassifyArgs) -> anyhow::Result<ExitCode> {
    let mut items = Vec::with_capacity(args.files.len());
    let mut errors = Vec::new();
    let mut ranks = Vec::new();
    for f in &args.files {
        if f.is_dir() {
            let (found, unread, view) = engine::ranks::classify_dir(f);
            for e in &unread {
                eprintln!("npgx: error: {}: {}", e.file.display(), e.message);
            }
            items.extend(found);
            errors.extend(unread);
            ranks.push(view);
            continue;
        }
        match classify::classify_file(f) {
            Ok(c) => items.push(c),
            Err(e) => {
                eprintln!("npgx: error: {e:#}");
                errors.push(FileError {
                    file: f.clone(),
                    message: format!("{e:#}"),
                });
            }
        }
    }
    match args.format {
        TextFormat::Text => super::print(
            &(report::triage::classifications_text(&items) + &report::triage::ranks_text(&ranks)),
        )?,
        TextFormat::Json => {
            super::print(&(report::triage::classify_json(&items, &errors, &ranks)? + "\n"))?
        }
    }
    let code = if !errors.is_empty() {
        2
    } else if items.iter().any(|c| c.found()) {
        1
    } else {
        0
    };
    Ok(ExitCode::from(code))
}
