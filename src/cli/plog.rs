use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use npgx_parsers::plog::{BoundEnd, Level, PlogTime};

use crate::plog::{self, Filters};
use crate::report::plog as render;

/// Output formats of `npgx plog`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human summary per process (or one line per record with --records).
    Table,
    /// The JSON document of docs/plog.md (schema npgx.plog, version 2; the records under
    /// `records` with --records).
    Json,
    /// One row per process (per record with --records).
    Csv,
}

impl From<Format> for render::Format {
    fn from(f: Format) -> Self {
        match f {
            Format::Table => render::Format::Table,
            Format::Json => render::Format::Json,
            Format::Csv => render::Format::Csv,
        }
    }
}

/// Summarise CANN plogs and device logs per process, and find the first causal error.
///
/// For every process: records per level and module, the error codes seen, the time span, the
/// first ERROR and the first causal error; also the CANN error reports and torch_npu ERR lines.
///
/// PATH may be plog files, device logs, captured console output, or directories: asys
/// collections (asys_output_*/dfx/log/...), $ASCEND_PROCESS_LOG_PATH trees ({debug,run}/plog,
/// device-N/), the old slog/ layout. Directories are searched for files named like CANN logs
/// (plog-PID_TS.log, device-PID_TS.log, device-app-PID_TS.log, ...); rotated files of one process
/// are read in the order they were written. Files are streamed, never loaded whole.
///
/// The first causal error comes from the engine `npgx triage classify` uses, so both name the
/// same line: strong errors (device faults, CANN error reports, Python exceptions, task errors,
/// other ERROR records) before graph-break / recompile reasons before cascades (wrappers,
/// torch_npu ERRxxxxx summaries, stream synchronise failures, watchdogs) before debug chatter.
/// Pasted console output is accepted (Markdown quotes, fences, vLLM / rank / glog prefixes).
///
/// Exit status: 0 at least one input was read, 2 nothing could be read or bad usage.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx plog ~/ascend/log\n  npgx plog asys_output_20250508095626087 --level error --format json\n  npgx plog plog-155320_20250508095618528.log --records --grep 'fault kernel_name'\n  npgx plog ./log --since 2025-05-08-09:56 --until 2025-05-08-09:57 --module RUNTIME,GE\n\nJSON schema: docs/plog.md"
)]
pub struct Args {
    /// Plog / device log files, console captures, or directories to search.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// List the matching records instead of summarising them.
    #[arg(long)]
    pub records: bool,
    /// Keep only these levels (DEBUG, INFO, WARNING, ERROR, EVENT, TRACE, or a number).
    #[arg(long, value_delimiter = ',', value_name = "LEVEL", value_parser = parse_level)]
    pub level: Vec<Level>,
    /// Keep only these modules (RUNTIME, GE, HCCL, ...; case-insensitive).
    #[arg(long, value_delimiter = ',', value_name = "MODULE")]
    pub module: Vec<String>,
    /// Keep only these process ids.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "PID",
        allow_hyphen_values = true
    )]
    pub pid: Vec<i64>,
    /// Keep records at or after TIME (YYYY-MM-DD-hh:mm:ss.mmm.uuu or a prefix such as 2025-05-08-09:56).
    #[arg(long, value_name = "TIME", value_parser = parse_since)]
    pub since: Option<PlogTime>,
    /// Keep records at or before TIME (same forms as --since; a prefix covers its whole span:
    /// 2025-05-08 keeps all of the 8th).
    #[arg(long, value_name = "TIME", value_parser = parse_until)]
    pub until: Option<PlogTime>,
    /// Keep records whose text (header line or continuation lines) contains TEXT.
    #[arg(long, value_name = "TEXT")]
    pub grep: Option<String>,
    /// Read every file through a mapping (also NPGX_MMAP=1). By default a file is mapped when
    /// the page cache holds it and read with positional reads otherwise, the faster way each
    /// (docs/performance.md); a file truncated while mapped is that file's warning, never a
    /// crash.
    #[arg(long, conflicts_with = "no_mmap")]
    pub mmap: bool,
    /// Never map a file: positional reads only (also NPGX_MMAP=0).
    #[arg(long)]
    pub no_mmap: bool,
}

fn parse_level(s: &str) -> Result<Level, String> {
    Level::from_name(s).ok_or_else(|| {
        format!("unknown level `{s}` (DEBUG, INFO, WARNING, ERROR, EVENT, TRACE or a number)")
    })
}

fn parse_since(s: &str) -> Result<PlogTime, String> {
    parse_time(s, BoundEnd::Lower)
}

fn parse_until(s: &str) -> Result<PlogTime, String> {
    parse_time(s, BoundEnd::Upper)
}

fn parse_time(s: &str, end: BoundEnd) -> Result<PlogTime, String> {
    PlogTime::parse_bound(s, end).ok_or_else(|| {
        format!("cannot read `{s}` as a time; use YYYY-MM-DD-hh:mm:ss.mmm.uuu or a prefix of it")
    })
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filters = Filters {
        levels: args.level,
        modules: args.module.iter().map(|m| m.to_ascii_uppercase()).collect(),
        pids: args.pid,
        since: args.since,
        until: args.until,
        grep: args.grep,
    };
    let mut warnings = Vec::new();
    let inputs = plog::discover(&args.paths, &mut warnings);
    if inputs.is_empty() {
        render::print_warnings(&warnings);
        anyhow::bail!("no log files found under the given paths");
    }
    let mut out = super::stdout();
    let map = crate::dump::mapped::Mode::from_flags(args.mmap, args.no_mmap);
    if args.records {
        let mut writer = render::RecordWriter::new(&mut out, args.format.into());
        let res = writer.begin().and_then(|()| {
            plog::for_each_record(&inputs, &filters, map, &mut warnings, |r| writer.record(r))
        });
        let res = res.and_then(|()| writer.end());
        render::print_warnings(&warnings);
        return finish(res.and_then(|()| out.flush()));
    }
    let summary = plog::summarize(&inputs, &filters, map, warnings);
    render::print_warnings(&summary.warnings);
    if !summary.files.iter().any(|f| f.read) {
        anyhow::bail!(
            "none of the {} input file(s) could be read",
            summary.files.len()
        );
    }
    let res = match args.format {
        Format::Table => render::summary_table(&mut out, &summary),
        Format::Json => render::summary_json(&mut out, &summary),
        Format::Csv => render::summary_csv(&mut out, &summary),
    };
    finish(res.and_then(|()| out.flush()))
}

fn finish(res: io::Result<()>) -> anyhow::Result<ExitCode> {
    res.context("writing the output")?;
    Ok(ExitCode::SUCCESS)
}
