use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::compare::{self, CompareOptions, Progress, Threshold};
use crate::report::dump_compare as render;

use super::TableFormat as Format;

/// Compare two dump runs tensor by tensor and name the first operator where they diverge and
/// the operator that started it.
///
/// GOLDEN and TARGET are dump trees (any level) or single files of any kind dump-scan reads: GE
/// binary dumps (v2, v1, TLV), npugraph_ex .pt data dumps, .npy files (msaccucmp convert or
/// npgx dump-convert output); mixed pairs are fine. Device formats are brought back to ND and
/// values compared in f64. Groups pair by rank, device, model (run stamp removed) and step;
/// tensors by op name, input/output and index (fused ops through their dump's original_op,
/// --graph or --mapping). A pair passes when no NaN/Inf sits on one side only, cosine ≥
/// --cosine and max relative error < --max-rel.
///
/// Exit status: 0 every pair passes (every file read), 1 a pair fails or its shapes differ, 2
/// could not run (missing root, bad option, no pair formed), 3 incomplete: some files could not
/// be read (`errors`, `complete: false`), whatever the pairs say. --exit-zero turns 1 and 3
/// into 0.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx dump-compare eager_dump/ graph_dump/\n  npgx dump-compare step4/ step5/ --format json > compare.json\n  npgx dump-compare golden/ target/ --dtype-threshold float16=0.98,0.05 --format csv -o pairs.csv\n\nFormulas, matching rules and the JSON schema: docs/dump-compare.md"
)]
pub struct Args {
    /// The reference run (dump tree or file).
    pub golden: PathBuf,
    /// The run under test (dump tree or file).
    pub target: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// With --format csv: msprobe compare's column names and metrics (NPU Name, Bench Name, …,
    /// Cosine, EucDist, MaxAbsErr, MaxRelativeErr, One Thousandth Err Ratio, …), for scripts
    /// that read msprobe's CSV.
    #[arg(long)]
    pub msprobe_columns: bool,
    /// Write the output to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// A GE graph dump (ge_proto_*.txt): fused ops' _datadump_original_op_names and producers.
    #[arg(long, value_name = "GE_GRAPH_DUMP")]
    pub graph: Option<PathBuf>,
    /// CSV of golden_name,target_name lines for ops whose names differ.
    #[arg(long, value_name = "CSV")]
    pub mapping: Option<PathBuf>,
    /// Graph texts that trace the first divergence and the origin to their FX node and the
    /// model's source line (`fx`): torchair graph dumps (dynamo_original_graph_*.py|txt|pbtxt),
    /// a torch_compile_debug/ folder, print_readable output. A file or a folder; repeatable.
    /// Graph dumps in and beside the two trees are read without it (docs/source-map.md).
    #[arg(long, value_name = "PATH")]
    pub graphs: Vec<PathBuf>,
    /// Pair the group under GOLDEN_DIR with the group under TARGET_DIR (repeatable).
    #[arg(long = "group", value_name = "GOLDEN_DIR=TARGET_DIR", value_parser = compare::parse_group)]
    pub groups: Vec<(PathBuf, PathBuf)>,
    /// Smallest passing cosine similarity.
    #[arg(long, value_name = "X", default_value_t = 0.99)]
    pub cosine: f64,
    /// Largest relative error a passing pair stays below.
    #[arg(long, value_name = "X", default_value_t = 0.01)]
    pub max_rel: f64,
    /// Thresholds for pairs whose target has this dtype, e.g. float16=0.98,0.05 (repeatable).
    #[arg(long = "dtype-threshold", value_name = "DTYPE=COSINE,MAX_REL", value_parser = compare::parse_dtype_threshold)]
    pub dtype_thresholds: Vec<(String, Threshold)>,
    /// Length of each worst-operators list.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub top: usize,
    /// Worker threads (default: one per core; four per core for the streamed pairs of trees
    /// read from disk).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
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
    /// Also write the HTML report of this comparison to FILE (docs/report.md).
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::check_output(args.format, args.output.as_deref())?;
    if args.msprobe_columns && args.format != Format::Csv {
        anyhow::bail!("--msprobe-columns needs --format csv");
    }
    for (name, v) in [("--cosine", args.cosine), ("--max-rel", args.max_rel)] {
        if !v.is_finite() {
            anyhow::bail!("{name} must be a finite number");
        }
    }
    let bar = super::progress_bar(!args.no_progress, "pairs");
    let on_progress = |p: Progress| {
        if let Some(b) = &bar {
            match p {
                Progress::Pairs(n) => b.set_length(n),
                Progress::PairDone => b.inc(1),
            }
        }
    };
    let opts = CompareOptions {
        cosine: args.cosine,
        max_rel: args.max_rel,
        per_dtype: args
            .dtype_thresholds
            .into_iter()
            .collect::<BTreeMap<_, _>>(),
        top: args.top,
        threads: args.threads,
        graph: args.graph,
        mapping: args.mapping,
        groups: args.groups,
        graphs: args.graphs,
        map: crate::dump::mapped::Mode::from_flags(args.mmap, args.no_mmap),
        cancel: Default::default(),
    };
    let report = compare::compare(&args.golden, &args.target, &opts, &on_progress)?;
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    super::emit(
        args.output.as_deref(),
        args.format,
        super::Renderers {
            parquet: &|f| render::parquet(&report, f),
            table: &|| render::text(&report),
            json: &|out| Ok(writeln!(out, "{}", render::json(&report)?)?),
            csv: &|out| {
                if args.msprobe_columns {
                    render::csv_msprobe(&report, out)
                } else {
                    render::csv(&report, out)
                }
            },
        },
    )?;
    if let Some(path) = &args.html {
        let doc = render::value(&report)?;
        let source = format!(
            "npgx dump-compare {} {}",
            args.golden.display(),
            args.target.display()
        );
        super::report::write_html(path, source, doc)?;
    }
    let s = &report.summary;
    Ok(ExitCode::from(if s.pairs == 0 {
        eprintln!("npgx: error: no tensor pairs could be formed between the two runs");
        super::EXIT_FAILURE
    } else if s.errors > 0 {
        eprintln!(
            "npgx dump-compare: incomplete: {} problem(s) reading files; see `errors`",
            s.errors
        );
        super::EXIT_INCOMPLETE
    } else {
        u8::from(s.failed > 0)
    }))
}
