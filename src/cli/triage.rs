//! `npgx triage run|analyze|classify`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Subcommand, ValueEnum};

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};

use crate::report;
use crate::triage::layout::{Step, REPORT_FILE};
use crate::triage::runner::{self, Progress, RunConfig, StepEnd, StepRun};
use crate::triage::{analyze, classify};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human summary.
    Text,
    /// JSON on stdout (schema in docs/triage.md).
    Json,
}

/// Arguments of `npgx triage`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Layered triage of torch.compile failures on Ascend (npugraph_ex)",
    long_about = "Layered triage of torch.compile failures on Ascend (npugraph_ex backend).\n\n\
The ladder: 1 eager → 2 backend=\"eager\" → 3 backend=\"aot_eager\" → 4 npugraph_ex with \
force_eager=True → 5 the original npugraph_ex call. The first failing step and the first causal \
error decide the route: compile-error, runtime-error, accuracy or performance.\n\n\
  npgx triage classify stderr.log         route any captured output\n\
  npgx triage analyze torch-npugraph-ex-triage-logs/20260101-120000-pid42\n\
  npgx triage run repro.py --cmd 'torchrun --nproc_per_node=8 {script} --cfg x'"
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
Routing order (docs/triage.md): capture context → the causal error's shape (environment \
problem, graph-break / recompile reason, exception class, kernel assertion, CANN code family, \
runtime error number) → keywords → fallback. Routes: compile-error, runtime-error, accuracy, \
performance, environment, undetermined. Without a step tree there is no step-based \
pre-classification. Files are streamed (bounded memory; lines longer than 1 MiB are cut).\n\n\
Exit code: 0 nothing to route (every file undetermined), 1 a causal error or a route was found \
in at least one file, 2 a file could not be read (the others are still classified) or bad usage."
    )]
    Classify(ClassifyArgs),
}

#[derive(Debug, clap::Args)]
pub struct ClassifyArgs {
    /// Files to classify.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the HTML report of the run to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Wrap the compiled callable to save the outputs of its first calls (.npy) and per-call wall
    /// times; when all steps pass, compare steps 1, 4, 5 and route to accuracy or performance.
    #[arg(long)]
    pub compare_outputs: bool,
    /// Arguments passed to the script.
    #[arg(last = true)]
    pub args: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct AnalyzeArgs {
    /// The tree: torch-npugraph-ex-triage-logs/<YYYYMMDD-HHMMSS>-pid<PID>/.
    pub dir: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Also write the HTML report of the analysis to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        TriageCommand::Run(a) => run_run(a),
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
    fn step_started(&mut self, step: Step, command: &str) {
        if self.terminal {
            let bar = ProgressBar::new_spinner();
            bar.set_style(
                ProgressStyle::with_template("{spinner} {prefix:.bold} {elapsed:>4} {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.set_prefix(step.name());
            bar.enable_steady_tick(Duration::from_millis(120));
            self.bar = Some(bar);
        } else {
            eprintln!("npgx triage: {} started: {command}", step.name());
        }
    }

    fn step_tick(&mut self, _: Step, _: Duration, bytes: u64, last_line: &str) {
        if let Some(bar) = &self.bar {
            let line: String = last_line.chars().take(80).collect();
            bar.set_message(format!("{:>7} KiB | {line}", bytes / 1024));
        }
    }

    fn step_finished(&mut self, step: Step, run: &StepRun) {
        let verdict = match run.end {
            StepEnd::Passed => "passed".to_string(),
            StepEnd::Failed { exit_code } => format!("FAILED exit_code={exit_code}"),
            StepEnd::TimedOut { after_secs, .. } => format!("TIMED OUT after {after_secs}s"),
            StepEnd::Interrupted { .. } => "INTERRUPTED".to_string(),
        };
        let line = format!("{} {verdict} ({:.1}s)", step.name(), run.seconds);
        match self.bar.take() {
            Some(bar) => bar.finish_with_message(verdict),
            None => eprintln!("npgx triage: {line}"),
        }
    }
}

fn run_run(args: RunArgs) -> anyhow::Result<ExitCode> {
    let cfg = RunConfig {
        script: args.script,
        template: args.cmd,
        args: args.args,
        out: args.out,
        call: args.call,
        timeout: args.timeout.map(Duration::from_secs),
        compare_outputs: args.compare_outputs,
    };
    let mut progress = StepProgress {
        bar: None,
        terminal: std::io::stderr().is_terminal(),
    };
    let summary = runner::run(&cfg, &mut progress)?;
    let analysis = analyze::analyze(&summary.root)?;
    let handoff = report::triage::handoff_markdown(&analysis, Some(&summary.plan));
    let path = summary.root.join(REPORT_FILE);
    std::fs::write(&path, &handoff)
        .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    let doc = report::document(
        "triage-run",
        1,
        &serde_json::json!({"run": summary, "analysis": analysis}),
    )?;
    if let Some(path) = &args.html {
        let source = format!("npgx triage run {}", summary.root.display());
        super::report::write_html(path, source, doc.clone())?;
    }
    match args.format {
        Format::Text => print!("{}", report::triage::analysis_text(&analysis)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&doc)?),
    }
    let code = if summary.interrupted {
        130
    } else if summary.steps.iter().any(|s| s.end != StepEnd::Passed) {
        1
    } else {
        0
    };
    Ok(ExitCode::from(code))
}

fn run_analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let analysis = analyze::analyze(&args.dir)?;
    let doc = report::document("triage-analyze", 1, &analysis)?;
    if let Some(path) = &args.html {
        let source = format!("npgx triage analyze {}", args.dir.display());
        super::report::write_html(path, source, doc.clone())?;
    }
    match args.format {
        Format::Text => print!("{}", report::triage::handoff_markdown(&analysis, None)),
        Format::Json => println!("{}", serde_json::to_string_pretty(&doc)?),
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
    for f in &args.files {
        match classify::classify_file(f) {
            Ok(c) => items.push(c),
            Err(e) => {
                eprintln!("npgx: error: {e:#}");
                errors.push((f.clone(), format!("{e:#}")));
            }
        }
    }
    match args.format {
        Format::Text => print!("{}", report::triage::classifications_text(&items)),
        Format::Json => println!(
            "{}",
            serde_json::to_string_pretty(&report::triage::classify_json(&items, &errors)?)?
        ),
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
