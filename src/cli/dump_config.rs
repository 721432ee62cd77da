use super::TextFormat;
use std::path::PathBuf;
use std::process::ExitCode;

use crate::config::check::CheckOptions;
use crate::config::preset::{DumpLevel, DumpMode, Preset, PresetOptions};
use crate::report::config as render;

use super::named;

/// Arguments of `npgx dump-config`.
#[derive(Debug, clap::Args)]
#[command(
    about = "Write dump_config.json files from presets, and check existing ones with CANN's own rules",
    long_about = "Write dump_config.json (the \"dump\" object of acl.json) from presets, and check \
existing files with the rules, order, error codes (EP0001–EP0005) and message texts of CANN's adump, \
reporting every problem at once with its JSON path and a one-line fix.\n\nJSON schema of \
`check --format json`: docs/dump-config.md"
)]
pub struct Args {
    #[command(subcommand)]
    pub command: Sub,
}

#[derive(Debug, clap::Subcommand)]
pub enum Sub {
    /// Write a dump_config.json for a dump scenario.
    #[command(after_help = "Presets and the options they take:\n  \
model      --dump-path --model-name --layer --dump-mode --dump-step --dump-level\n  \
op         --dump-path --dump-mode --dump-step --dump-level      (single-op / aclnn)\n  \
overflow   --dump-path                                           (dump_debug on)\n  \
watcher    --dump-path --layer (suspected writers) --watch (victims, required)\n  \
stats      --dump-path --model-name --layer --dump-mode --dump-step --dump-level --stats --single-op\n  \
lite_exception, aic_err_brief_dump, aic_err_norm_dump, aic_err_detail_dump   --dump-path (optional)\n\n\
Examples:\n  \
npgx dump-config new model --model-name my_graph --layer Add_1,MatMul_3 --dump-step 0 -o dump_config.json\n  \
npgx dump-config new watcher --layer MatMul_3 --watch Add_1 --dump-path /data/dump -o watcher.json --torchair\n  \
npgx dump-config new overflow --dump-path /data/dump\n\n\
The file is checked with `dump-config check` rules before it is written (dump_path existence \
is not checked: create the directory on the machine that runs the model).")]
    New(NewArgs),
    /// Check a dump_config.json with CANN's rules; exit 0 valid, 1 invalid, 2 unreadable.
    #[command(after_help = "Examples:\n  \
npgx dump-config check dump_config.json\n  \
npgx dump-config check dump_config.json --graph ge_proto_00000062_Build.txt\n  \
npgx dump-config check acl.json --no-fs-check --format json\n\n\
JSON schema: docs/dump-config.md")]
    Check(CheckArgs),
    /// Plan the next, narrower dump from saved dump-scan, dump-compare or merge JSON documents.
    #[command(after_help = "What is planned, per rank:\n  \
an overwrite (dump-scan's address links)   the watcher scene: watcher_nodes = the producer, layer = the ops run in between\n  \
an anomaly born in an op, a divergence      a model dump of that op and its producers (--hops), dump_mode all, that step\n  \
a stats or overflow pass, nothing born     a statistics dump of the ops before the first anomaly, inputs and outputs\n\n\
Examples:\n  \
npgx dump-scan /home/dump --format json -o scan.json\n  \
npgx dump-config plan scan.json -o dump_config.json\n  \
npgx dump-config plan compare.json --graph ge_proto_00000062_Build.txt --dump-path /data/dump2 -o dump_config.json\n\n\
Every plan passes the `dump-config check` rules before it is written. docs/dump-config.md")]
    Plan(PlanArgs),
}

#[derive(Debug, clap::Args)]
pub struct PlanArgs {
    /// Saved JSON documents of the first pass (npgx dump-scan, dump-compare or merge --format json).
    #[arg(required = true, value_name = "REPORT.json")]
    pub reports: Vec<PathBuf>,
    /// GE graph dump(s) of the model (ge_proto_*_Build.txt): producers and tensor sizes from the
    /// graph, and the planned names checked against it.
    #[arg(long, value_name = "GE_GRAPH")]
    pub graph: Vec<PathBuf>,
    /// How many producer hops a narrowed dump reaches.
    #[arg(long, value_name = "N", default_value_t = crate::config::plan::DEFAULT_HOPS)]
    pub hops: usize,
    /// Directory CANN writes the next dump under (default "./"); its free space is compared
    /// with the plan's estimate when it is local.
    #[arg(long, value_name = "DIR")]
    pub dump_path: Option<String>,
    /// Write the config here (per rank FILE's stem + .rank<R>.json when ranks need different
    /// plans) instead of printing it.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// `json`: print the plan document (what was planned, why, estimates) instead of the config.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The dump scenario.
    #[arg(value_parser = named(&Preset::ALL, Preset::name, Some(Preset::about)))]
    pub preset: Preset,
    /// Directory CANN writes the dump under (must exist when the model runs). Default "./";
    /// for the exception scenes it is omitted unless given.
    #[arg(long, value_name = "DIR")]
    pub dump_path: Option<String>,
    /// Model (graph) name to dump; without it every model is dumped.
    #[arg(long, value_name = "NAME")]
    pub model_name: Option<String>,
    /// Op names to dump (watcher: the suspected writers). Repeat or separate with commas.
    #[arg(long = "layer", value_name = "NAME", value_delimiter = ',')]
    pub layers: Vec<String>,
    /// Dump exactly the GE operators made from this line of the model (FILE: a name or a
    /// path's tail), in every graph of --graphs: one dump_list entry per graph_<N>
    /// (docs/source-map.md).
    #[arg(
        long,
        value_name = "FILE:LINE",
        requires = "graphs",
        conflicts_with_all = ["model_name", "layers", "fx_node"]
    )]
    pub line: Option<String>,
    /// Dump exactly the GE operators made from this FX node (`addmm_1`), in every graph of
    /// --graphs that has it.
    #[arg(
        long,
        value_name = "NAME",
        requires = "graphs",
        conflicts_with_all = ["model_name", "layers"]
    )]
    pub fx_node: Option<String>,
    /// Graph texts for --line / --fx-node: torchair graph dumps (dynamo_original_graph_*), a
    /// torch_compile_debug/ folder, print_readable output. A file or a folder; repeatable.
    #[arg(long, value_name = "PATH")]
    pub graphs: Vec<PathBuf>,
    /// Watcher: op(s) whose output gets overwritten. Repeat or separate with commas.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub watch: Vec<String>,
    /// Which tensors to dump (default output).
    #[arg(long, value_parser = named(&DumpMode::ALL, DumpMode::name, None))]
    pub dump_mode: Option<DumpMode>,
    /// Steps to dump, e.g. "0|5-10" (default all steps).
    #[arg(long, value_name = "STEPS")]
    pub dump_step: Option<String>,
    /// op, kernel or all (default all).
    #[arg(long, value_parser = named(&DumpLevel::ALL, DumpLevel::name, None))]
    pub dump_level: Option<DumpLevel>,
    /// Stats preset: statistics to dump, comma-separated (default Max,Min,Avg,Nan,Negative Inf,Positive Inf).
    #[arg(long, value_name = "STAT", value_delimiter = ',')]
    pub stats: Vec<String>,
    /// Stats preset: dump single ops (dump_op_switch on) instead of a model.
    #[arg(long)]
    pub single_op: bool,
    /// Write the file here instead of printing it.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite FILE if it exists.
    #[arg(long, requires = "output")]
    pub force: bool,
    /// Also print the Python lines that point a torchair CompilerConfig at the file (to stdout
    /// with -o, else to stderr so stdout stays pure JSON; in the JSON document as `torchair`).
    #[arg(long)]
    pub torchair: bool,
    /// `json`: print the npgx document (preset, where it was written, the config) instead of
    /// the bare config.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The dump_config.json (or acl.json) to check.
    pub file: PathBuf,
    /// GE graph dump(s) (ge_proto_*_Build.txt) of the run: check that every layer and
    /// watcher_nodes name is an op there. Repeat for several graphs.
    #[arg(long, value_name = "GE_PROTO_TXT")]
    pub graph: Vec<PathBuf>,
    /// Do not look at dump_path on this machine (the config will run elsewhere).
    #[arg(long)]
    pub no_fs_check: bool,
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Sub::New(a) => new(a),
        Sub::Check(a) => check(a),
        Sub::Plan(a) => plan(a),
    }
}

fn plan(a: PlanArgs) -> anyhow::Result<ExitCode> {
    let options = crate::config::plan::PlanOptions {
        hops: a.hops,
        dump_path: a.dump_path,
    };
    let mut made = crate::config::plan::plan(&a.reports, &a.graph, &options)?;
    crate::config::plan::deliver(&mut made, a.output.as_deref(), a.force)?;
    let (stdout, stderr) = match a.format {
        TextFormat::Json => (render::plan_json(&made)? + "\n", String::new()),
        TextFormat::Text => render::plan_text(&made),
    };
    super::print(&stdout)?;
    eprint!("{stderr}");
    Ok(ExitCode::SUCCESS)
}

fn new(a: NewArgs) -> anyhow::Result<ExitCode> {
    let selector = match (&a.line, &a.fx_node) {
        (Some(l), _) => Some(crate::config::line::Selector::parse_line(l)?),
        (None, Some(n)) => Some(crate::config::line::Selector::FxNode(n.clone())),
        (None, None) => None,
    };
    if selector.is_none() && !a.graphs.is_empty() {
        anyhow::bail!("--graphs is read for --line or --fx-node; give one of them");
    }
    let options = PresetOptions {
        dump_path: a.dump_path,
        model_name: a.model_name,
        layers: a.layers,
        watch: a.watch,
        dump_mode: a.dump_mode,
        dump_step: a.dump_step,
        dump_level: a.dump_level,
        stats: a.stats,
        single_op: a.single_op,
        models: Vec::new(),
    };
    let from = selector.as_ref().map(|sel| (a.graphs.as_slice(), sel));
    let made =
        crate::config::new_config_from(a.preset, options, from, a.output.as_deref(), a.force)?;
    if let Some(sel) = &made.fx {
        for p in &sel.unreadable {
            eprintln!("npgx dump-config: {}: {}", p.path, p.message);
        }
    }
    let made = if a.torchair {
        made.with_torchair()
    } else {
        made
    };
    let (stdout, stderr) = match a.format {
        TextFormat::Json => (render::new_json(&made)? + "\n", String::new()),
        TextFormat::Text => render::new_text(&made),
    };
    super::print(&stdout)?;
    eprint!("{stderr}");
    Ok(ExitCode::SUCCESS)
}

fn check(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let options = CheckOptions {
        filesystem: !a.no_fs_check,
    };
    let report = crate::config::check_file(&a.file, &a.graph, &options)?;
    let rendered = match a.format {
        TextFormat::Text => render::text(&report),
        TextFormat::Json => render::json(&report)? + "\n",
    };
    super::print(&rendered)?;
    Ok(if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
