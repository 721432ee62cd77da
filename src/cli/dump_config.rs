use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;

use crate::config::check::{self, CheckOptions};
use crate::config::preset::{self, DumpLevel, DumpMode, Preset, PresetOptions};
use crate::config::{graph, GraphSummary};
use crate::report::config as render;

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
}

#[derive(Debug, clap::Args)]
pub struct NewArgs {
    /// The dump scenario.
    #[arg(value_enum)]
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
    /// Watcher: op(s) whose output gets overwritten. Repeat or separate with commas.
    #[arg(long, value_name = "NAME", value_delimiter = ',')]
    pub watch: Vec<String>,
    /// Which tensors to dump (default output).
    #[arg(long, value_enum)]
    pub dump_mode: Option<DumpMode>,
    /// Steps to dump, e.g. "0|5-10" (default all steps).
    #[arg(long, value_name = "STEPS")]
    pub dump_step: Option<String>,
    /// op, kernel or all (default all).
    #[arg(long, value_enum)]
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
    /// with -o, else to stderr so stdout stays pure JSON).
    #[arg(long)]
    pub torchair: bool,
}

/// Output formats of `check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
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
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Sub::New(a) => new(a),
        Sub::Check(a) => check_file(a),
    }
}

fn new(a: NewArgs) -> anyhow::Result<ExitCode> {
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
    };
    let text = preset::render(a.preset, &options)?;
    // Never write a file CANN would reject (a bad --dump-step, say).
    let verdict = check::check(
        text.as_bytes(),
        "<generated>",
        &CheckOptions { filesystem: false },
    );
    if !verdict.valid {
        let reasons: Vec<String> = verdict
            .problems
            .iter()
            .map(|p| format!("{} {}: {}", p.code, p.path, p.message))
            .collect();
        anyhow::bail!(
            "these options give a config CANN rejects:\n  {}",
            reasons.join("\n  ")
        );
    }
    match &a.output {
        Some(path) => {
            write_new_file(path, &text, a.force)?;
            eprintln!("wrote {} ({} preset)", path.display(), a.preset.name());
            if a.torchair {
                print!("{}", preset::torchair_lines(&absolute(path)));
            }
        }
        None => {
            print!("{text}");
            if a.torchair {
                eprint!(
                    "# save the JSON above, then:\n{}",
                    preset::torchair_lines("dump_config.json")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn write_new_file(path: &Path, text: &str, force: bool) -> anyhow::Result<()> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    if force {
        open.create(true).truncate(true);
    } else {
        open.create_new(true);
    }
    let mut f = open.open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::AlreadyExists {
            anyhow::anyhow!("{} exists; pass --force to overwrite it", path.display())
        } else {
            anyhow::anyhow!("cannot create {}: {e}", path.display())
        }
    })?;
    f.write_all(text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))
}

fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

fn check_file(a: CheckArgs) -> anyhow::Result<ExitCode> {
    let bytes =
        std::fs::read(&a.file).with_context(|| format!("cannot read {}", a.file.display()))?;
    let shown = a.file.display().to_string();
    let mut report = check::check(
        &bytes,
        &shown,
        &CheckOptions {
            filesystem: !a.no_fs_check,
        },
    );
    if !a.graph.is_empty() {
        let mut models = Vec::new();
        for g in &a.graph {
            let text = std::fs::read(g).with_context(|| format!("cannot read {}", g.display()))?;
            let model = npgx_parsers::ge_graph::parse(&text)
                .with_context(|| format!("{} is not a readable GE graph dump", g.display()))?;
            report.graphs.push(GraphSummary {
                file: g.display().to_string(),
                graphs: model.graphs.len(),
                ops: model.ops().count(),
            });
            models.push(model);
        }
        report.problems.extend(graph::check_names(&bytes, &models));
        check::locate_problems(&mut report.problems, &bytes);
        report = report.finish();
    }
    let rendered = match a.format {
        Format::Text => render::text(&report),
        Format::Json => render::json(&report)? + "\n",
    };
    print!("{rendered}");
    Ok(if report.valid {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
