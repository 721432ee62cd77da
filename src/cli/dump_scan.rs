use std::path::PathBuf;
use std::process::ExitCode;

use crate::report::dump_scan as render;
use crate::scan::{self, Progress, ScanOptions};

use super::TableFormat as Format;

/// Scan a dump tree for NaN, Inf and low-precision overflow, and name the first operator that
/// went wrong — in execution order, per rank, device, model and step.
///
/// Reads CANN binary dumps (v2 protobuf header, v1, TLV), stats CSVs, Opdebug overflow payloads,
/// .npy files and npugraph_ex .pt files, in torchair, GE model, single-op and exception layouts.
/// Files that cannot be read are listed and the scan goes on.
///
/// Exit status: 0 no anomaly and every file read, 1 anomalies found (every file read), 2 the
/// scan could not run or checked nothing: not one tensor (and no Opdebug payload) could be read
/// — no dump file found, or none decoded; 3 incomplete: some files could not be read (listed in
/// `errors`, `complete: false`), whatever was found in the rest. The report is still written.
/// --exit-zero turns 1 and 3 into 0 (for launchers).
///
/// `--format parquet` writes the shard of docs/cluster.md: one row per tensor (every tensor,
/// `--all` or not) with rank, step, execution position and collective ordinals, for `npgx merge`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx dump-scan /home/dump\n  npgx dump-scan /home/dump --format json > scan.json\n  npgx dump-scan /home/dump --format csv --all -o tensors.csv\n  npgx dump-scan /local/dump --rank-from-env --format parquet -o /shared/shards/rank$RANK.parquet\n  npgx dump-scan /home/dump --graphs ./graphs --graphs torch_compile_debug\n  npgx dump-scan /home/dump --step 3\n\nJSON schema and layouts: docs/dump-scan.md; shards and merging: docs/cluster.md"
)]
pub struct Args {
    /// Dump directory (any level of the tree) or a single dump file.
    pub path: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// List every tensor, not only anomalous ones (json: a `tensors` array; csv/parquet: all rows).
    #[arg(long)]
    pub all: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
    /// Rank of this process's files when the path has no `worldsize{W}_global_rank{R}` level
    /// (needs --world-size).
    #[arg(
        long,
        value_name = "N",
        requires = "world_size",
        conflicts_with = "rank_from_env"
    )]
    pub rank: Option<u32>,
    /// World size, with --rank.
    #[arg(long, value_name = "W", requires = "rank")]
    pub world_size: Option<u32>,
    /// Take --rank and --world-size from the launcher's environment: torchrun RANK/WORLD_SIZE,
    /// Slurm SLURM_PROCID/SLURM_NTASKS, Open MPI OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE,
    /// PMI_RANK/PMI_SIZE (first pair set wins). Paths with a rank level keep theirs.
    #[arg(long)]
    pub rank_from_env: bool,
    /// Map every file of 1 MiB or more (also NPGX_MMAP=1). By default such a file is mapped
    /// when the page cache holds all of it and read with positional reads otherwise, the faster
    /// way each (docs/performance.md); a file truncated while mapped is that file's error,
    /// never a crash.
    #[arg(long, conflicts_with = "no_mmap")]
    pub mmap: bool,
    /// Never map a file: positional reads only (also NPGX_MMAP=0), for file systems where
    /// mapping is slow.
    #[arg(long)]
    pub no_mmap: bool,
    /// Do not draw a progress bar on stderr.
    #[arg(long)]
    pub no_progress: bool,
    /// Also write the HTML report of this scan to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Graph texts that trace every anomaly to its FX node and the model's source line
    /// (`fx`): torchair graph dumps (dynamo_original_graph_*.py|txt|pbtxt), a
    /// torch_compile_debug/ folder, print_readable output. A file or a folder; repeatable. Graph
    /// dumps in the tree and beside it are read without it (docs/source-map.md).
    #[arg(long, value_name = "PATH")]
    pub graphs: Vec<PathBuf>,
    /// Only step N (a model dump's iteration, msprobe's step{N}, torchair's step folder): files
    /// whose path names another step are not read, so a scan of the newest step of a growing
    /// tree costs that step.
    #[arg(long, value_name = "N")]
    pub step: Option<u64>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::check_output(args.format, args.output.as_deref())?;
    let bar = super::progress_bar(!args.no_progress, "files");
    let on_progress = |p: Progress| {
        if let Some(b) = &bar {
            match p {
                Progress::Found(n) => b.inc_length(n),
                Progress::FileDone => b.inc(1),
            }
        }
    };
    let rank = match (args.rank, args.world_size, args.rank_from_env) {
        (Some(r), Some(w), _) => Some(scan::RankInfo::new(r, w, "option".into())?),
        (_, _, true) => Some(scan::RankInfo::from_env(|k| std::env::var(k).ok())?),
        _ => None,
    };
    if let Some(r) = &rank {
        eprintln!(
            "npgx dump-scan: rank {} of world size {} ({}) for files whose path has no rank level",
            r.rank, r.world_size, r.source
        );
    }
    let opts = ScanOptions {
        threads: args.threads,
        // A shard holds every tensor.
        keep_all: args.all || args.format == Format::Parquet,
        rank,
        graphs: args.graphs,
        map: crate::dump::mapped::Mode::from_flags(args.mmap, args.no_mmap),
        cancel: Default::default(),
        step: args.step,
    };
    let report = scan::scan(&args.path, &opts, &on_progress)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    super::emit(
        args.output.as_deref(),
        args.format,
        super::Renderers {
            parquet: &|f| render::parquet(&report, f),
            table: &|| render::text(&report),
            json: &|out| render::json(out, &report, args.all),
            csv: &|out| render::csv(&report, args.all, out),
        },
    )?;
    if let Some(path) = &args.html {
        let doc = render::value(&report, args.all)?;
        super::report::write_html(path, format!("npgx dump-scan {}", args.path.display()), doc)?;
    }
    if report.nothing_checked() {
        let of_step = args
            .step
            .map(|s| format!(" of step {s}"))
            .unwrap_or_default();
        eprintln!(
            "npgx dump-scan: not one tensor{of_step} could be checked under {} ({} files seen, {} dump files decoded, {} errors){}",
            args.path.display(),
            report.summary.files_seen,
            report.summary.dump_files,
            report.summary.errors,
            if report.summary.errors > 0 { "; see `errors`" } else { "" }
        );
        return Ok(ExitCode::from(2));
    }
    if !report.errors.is_empty() {
        eprintln!(
            "npgx dump-scan: incomplete: {} problem(s) reading files under {}; see `errors`",
            report.errors.len(),
            args.path.display()
        );
        return Ok(ExitCode::from(super::EXIT_INCOMPLETE));
    }
    Ok(ExitCode::from(u8::from(
        report.summary.anomalous_tensors > 0,
    )))
}
