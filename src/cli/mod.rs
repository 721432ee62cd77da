//! The command line: argument definitions (clap derive) and dispatch.
//!
//! Each subcommand lives in its own file with its `Args` struct and a `run` function that calls
//! one engine and one renderer. Nothing here computes results.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod aicore;
mod dump_compare;
mod dump_config;
mod dump_convert;
mod dump_scan;
mod mcp;
mod merge;
mod plog;
mod report;
mod repro;
mod schema;
mod triage;

/// Exit code for findings (anomalies, failing pairs, device errors, a failed step, …).
pub const EXIT_FINDINGS: u8 = 1;
/// Exit code for a run that could not be carried out at all (bad usage, unreadable root).
pub const EXIT_FAILURE: u8 = 2;
/// Exit code for a result that cannot be complete: files that could not be read (dump-scan,
/// dump-compare), shards skipped or ranks missing (merge). Whatever was found is reported; a
/// clean result is not an all-clear.
pub const EXIT_INCOMPLETE: u8 = 3;

/// What `npgx --version` prints: the version and the cargo features this binary was built with
/// (docs: README, Install).
#[cfg(feature = "tables")]
const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (features: tables)");
#[cfg(not(feature = "tables"))]
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (features: none; a lean build: no CSV/Parquet tables, no merge)"
);

#[derive(Debug, Parser)]
#[command(
    name = "npgx",
    version = VERSION,
    about = "Triage toolkit for PyTorch graph mode (torch.compile) on Ascend NPUs",
    long_about = "npgx reads what a failing Ascend graph-mode run leaves behind — operator dumps, \
plogs, error reports, GE graphs — and tells you which operator, which step and which error came \
first.\n\nEvery command prints a human summary by default and `--format json` for scripts and agents.",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Exit 0 when the command ran, even with findings (1) or an incomplete result (3); still
    /// 2 when it could not run. The output reports everything as without it. For launchers
    /// (torchrun, mpirun, srun) that stop every rank when one process exits non-zero.
    #[arg(long, global = true)]
    pub exit_zero: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Scan a CANN / torchair / npugraph_ex dump tree for NaN, Inf and low-precision overflow.
    DumpScan(dump_scan::Args),
    /// Compare two dump runs tensor by tensor: first divergence and the operator that started it.
    DumpCompare(dump_compare::Args),
    /// Write every tensor of a dump tree as an ND .npy file.
    DumpConvert(dump_convert::Args),
    /// Write dump_config.json presets and check configs with CANN's rules and messages.
    DumpConfig(dump_config::Args),
    Plog(plog::Args),
    Aicore(aicore::Args),
    /// Build a single-operator repro case (OpUT + run config, or a torch_npu accuracy script).
    Repro(repro::Args),
    /// Layered triage of torch.compile failures: run the five steps, analyse a tree, classify a log.
    Triage(triage::Args),
    /// Merge dump-scan shards of many ranks and name the first anomalous rank of each step.
    Merge(merge::Args),
    /// One self-contained HTML incident report from triage trees and saved npgx JSON documents.
    Report(report::Args),
    Schema(schema::Args),
    Mcp(mcp::Args),
}

/// `--format` of the commands whose output is not a table: a human summary or the command's JSON
/// document (docs/<command>.md, envelope docs/json.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TextFormat {
    /// Human summary.
    Text,
    /// The command's JSON document.
    Json,
}

/// Output formats of the commands whose result is a table of tensors (`dump-scan`,
/// `dump-compare`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    /// Human summary.
    Table,
    /// The command's JSON document (docs/<command>.md, envelope docs/json.md).
    Json,
    /// One row per tensor (dump-scan: per anomalous tensor, every tensor with --all; dump-compare:
    /// per compared pair; merge: per anomalous rank and step).
    Csv,
    /// The same table as Parquet (needs -o); dump-scan: every tensor, the shard that `npgx merge`
    /// reads (docs/cluster.md).
    Parquet,
}

/// A progress bar counting `what` on stderr, or `None` when disabled or stderr is not a terminal.
fn progress_bar(enabled: bool, what: &str) -> Option<indicatif::ProgressBar> {
    use std::io::IsTerminal as _;
    if !enabled || !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "{{spinner}} {{pos}}/{{len}} {what} {{wide_bar}} {{elapsed}}"
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    bar.set_style(style);
    Some(bar)
}

/// Refuses `--format parquet` without `-o FILE` before any work is done (a binary file), and the
/// table formats in a build without the `tables` feature.
fn check_output(format: TableFormat, output: Option<&std::path::Path>) -> anyhow::Result<()> {
    #[cfg(not(feature = "tables"))]
    match format {
        TableFormat::Csv => return Err(crate::report::tables_left_out("--format csv")),
        TableFormat::Parquet => return Err(crate::report::tables_left_out("--format parquet")),
        TableFormat::Table | TableFormat::Json => {}
    }
    if format == TableFormat::Parquet && output.is_none() {
        anyhow::bail!("--format parquet writes a binary file: give it with -o FILE");
    }
    Ok(())
}

/// Set once a write to stdout found its reader gone (see [`Stdout`]).
static STDOUT_CLOSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Standard output, the one way every command writes to it: buffered, and it notes when the reader
/// has gone away (`npgx … | head`). [`run`] then ends the command quietly with exit 0, whatever
/// the write's error turned into on its way up (the reader took what it wanted; there is nothing to
/// report and no one to report it to). The flag, not the error value, carries this because a
/// renderer may wrap the error (serde_json does) beyond recognition.
struct Stdout(std::io::BufWriter<std::io::StdoutLock<'static>>);

fn stdout() -> Stdout {
    Stdout(std::io::BufWriter::new(std::io::stdout().lock()))
}

/// Passes a write's result through, noting a closed stdout.
fn noted<T>(res: std::io::Result<T>) -> std::io::Result<T> {
    if let Err(e) = &res {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            STDOUT_CLOSED.store(true, std::sync::atomic::Ordering::Relaxed);
        }
    }
    res
}

impl std::io::Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        noted(self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        noted(self.0.flush())
    }
}

/// Prints `text` on stdout (through [`Stdout`]).
fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = stdout();
    out.write_all(text.as_bytes())?;
    Ok(out.flush()?)
}

/// The renderers of a table command's result, one per [`TableFormat`].
struct Renderers<'a> {
    parquet: &'a dyn Fn(std::fs::File) -> anyhow::Result<()>,
    table: &'a dyn Fn() -> String,
    json: &'a dyn Fn(&mut dyn std::io::Write) -> anyhow::Result<()>,
    csv: &'a dyn Fn(&mut dyn std::io::Write) -> anyhow::Result<()>,
}

/// Writes a [`TableFormat`] result with its renderer: Parquet into `output`, every other format
/// into `output` (buffered; whole or not at all, [`crate::output`]) or stdout.
fn emit(
    output: Option<&std::path::Path>,
    format: TableFormat,
    render: Renderers<'_>,
) -> anyhow::Result<()> {
    use std::io::Write as _;
    let text: &dyn Fn(&mut dyn std::io::Write) -> anyhow::Result<()> = match format {
        TableFormat::Parquet => {
            let Some(path) = output else {
                anyhow::bail!("--format parquet needs -o FILE");
            };
            return crate::output::write_with(path, |f| (render.parquet)(f.try_clone()?));
        }
        TableFormat::Table => &|out| Ok(out.write_all((render.table)().as_bytes())?),
        TableFormat::Json => render.json,
        TableFormat::Csv => render.csv,
    };
    match output {
        Some(path) => crate::output::write_with(path, |f| {
            let mut f = std::io::BufWriter::new(f);
            text(&mut f)?;
            Ok(f.flush()?)
        }),
        None => {
            let mut out = stdout();
            text(&mut out)?;
            Ok(out.flush()?)
        }
    }
}

/// A clap value parser for an engine enum that lists its values (`ALL`) and their names, so
/// engine types need no clap derive: the CLI maps names to values at the edge.
fn named<T: Copy + Send + Sync + 'static>(
    all: &'static [T],
    name: fn(T) -> &'static str,
    about: Option<fn(T) -> &'static str>,
) -> impl clap::builder::TypedValueParser<Value = T> {
    use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser as _};
    let values = all.iter().map(move |&v| {
        let p = PossibleValue::new(name(v));
        match about {
            Some(about) => p.help(about(v)),
            None => p,
        }
    });
    PossibleValuesParser::new(values).try_map(move |s: String| {
        all.iter()
            .copied()
            .find(|&v| name(v) == s)
            .ok_or_else(|| format!("unknown value {s}"))
    })
}

/// Parses the command line, exiting as clap does on an error — except for `triage steps`,
/// whose bad arguments exit 64 as run_triage.sh's do (`--help` and `--version` still exit 0).
pub fn parse() -> Cli {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() && triage::is_steps(&argv) => {
            let _ = e.print();
            std::process::exit(i32::from(crate::triage::steps::EXIT_BAD_ARGUMENTS))
        }
        Err(e) => e.exit(),
    }
}

/// Runs the chosen subcommand and maps its outcome to the process exit code.
/// Errors that stop the whole run are printed once, here, and give exit code 2; a closed stdout
/// ends every command with 0 and nothing on stderr (see [`Stdout`]).
pub fn run(cli: Cli) -> ExitCode {
    crate::process::tune_allocator();
    crate::process::cap_vectors();
    let findings: &[u8] = match &cli.command {
        Command::Triage(triage::Args {
            command: triage::TriageCommand::Steps(_),
        }) => &triage::STEPS_FINDINGS,
        _ => &[EXIT_FINDINGS, EXIT_INCOMPLETE],
    };
    let outcome = match cli.command {
        Command::DumpScan(args) => dump_scan::run(args),
        Command::DumpCompare(args) => dump_compare::run(args),
        Command::DumpConvert(args) => dump_convert::run(args),
        Command::DumpConfig(args) => dump_config::run(args),
        Command::Plog(args) => plog::run(args),
        Command::Aicore(args) => aicore::run(args),
        Command::Repro(args) => repro::run(args),
        Command::Triage(args) => triage::run(args),
        Command::Report(args) => report::run(args),
        Command::Merge(args) => merge::run(args),
        Command::Schema(args) => schema::run(args),
        Command::Mcp(args) => mcp::run(args),
    };
    if STDOUT_CLOSED.load(std::sync::atomic::Ordering::Relaxed) {
        return ExitCode::SUCCESS;
    }
    match outcome {
        Ok(code) if cli.exit_zero && findings.iter().any(|&c| code == ExitCode::from(c)) => {
            ExitCode::SUCCESS
        }
        Ok(code) => code,
        Err(err) => {
            eprintln!("npgx: error: {err:#}");
            ExitCode::from(EXIT_FAILURE)
        }
    }
}
