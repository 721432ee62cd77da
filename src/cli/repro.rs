use std::path::PathBuf;
use std::process::ExitCode;

use crate::report::repro as render;
use crate::repro::{self, ReproPath, Request};

/// Output formats of `npgx repro` (on stdout; the case itself is always written to OUT_DIR).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human summary: target, op, kernel, data, files, what is missing.
    Table,
    /// The case.json document (docs/repro.md).
    Json,
}

/// `--path`: which repro to write (mapped to the engine's [`ReproPath`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum PathArg {
    /// A crash (AI Core error, aclnn failure): re-run the kernel binary on the dumped inputs.
    Runtime,
    /// Wrong numbers: re-run the operator on the NPU and compare with a CPU golden.
    Accuracy,
}

impl From<PathArg> for ReproPath {
    fn from(p: PathArg) -> Self {
        match p {
            PathArg::Runtime => ReproPath::Runtime,
            PathArg::Accuracy => ReproPath::Accuracy,
        }
    }
}

/// Build a single-operator repro case: find the failing operator, its type, tensors and
/// attributes in the GE graph, its kernel .o/.json, its dumped inputs as .npy, and write a
/// ready-to-run case directory.
///
/// Name the operator with --from-aicore (a plog or an asys collection holding an AI Core
/// error: the `fault kernel_name`, `[AIC_INFO] node_name`, stream and task are used), --op (GE
/// node name) or --kernel (a kernel name from a log: GE task names like 2_0_11_GatherV2, device
/// symbols like te_add_…__kernel0, AscendC names with a tiling key, `_mix_aic/_mix_aiv`).
/// A collection directory given to --from-aicore is also searched for graphs, kernels and dumps.
///
/// --path runtime (default with --from-aicore) writes an OpUT case test_<op>.py for CANN's
/// op_test_frame and run_config.json (msaicerr's single-op run keys). --path accuracy (default
/// otherwise) writes repro_<op>.py: CPU golden, NPU re-run via torch_npu, comparison, verdict.
/// Both write case.json and README.md; what could not be found is listed there, never guessed.
///
/// --fx-node reads a node search of `npgx triage bisect` instead and writes the single-op repro
/// of each FX node it found (exit 0, or 2 when it found none).
///
/// --from-scan reads a saved `npgx dump-scan --format json` and writes the single-op repro of
/// its first born anomaly's FX node (else its first anomaly's): the node's call from the graph
/// texts (torchair's .py graph dump, TORCH_COMPILE_DEBUG's readable text; beside the dump or
/// --graphs), fed with the dumped inputs of that call, and checked against its dumped outputs.
///
/// Exit status: 0 the case is complete, 1 the case was written but something is missing,
/// 2 no case could be written.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx repro --from-aicore asys_output_20230713074104794 -o case_gather\n  npgx repro --kernel 2_0_11_GatherV2 --graph dfx/graph --kernel-meta dfx/ops -o case\n  npgx repro --op layer0/MatMul_3 --graph ge_proto_00000062_Build.txt --dump dump/ --path accuracy -o mm\n  npgx dump-scan dump/ --graphs graphs/ --format json > scan.json && npgx repro --from-scan scan.json -o case_nan\n\ncase.json schema and the generated files: docs/repro.md"
)]
pub struct Args {
    /// A plog / log file or a collection directory with an AI Core error.
    #[arg(long, value_name = "LOG|DIR")]
    pub from_aicore: Option<PathBuf>,
    /// With --from-aicore: which device error to use (1 = the first that names an operator).
    #[arg(
        long = "error",
        value_name = "N",
        default_value_t = 1,
        requires = "from_aicore"
    )]
    pub error_number: usize,
    /// The GE node name of the operator.
    #[arg(long, value_name = "NAME", conflicts_with = "kernel")]
    pub op: Option<String>,
    /// A kernel name from a log or msaicerr's info.txt.
    #[arg(long, value_name = "KERNEL_NAME")]
    pub kernel: Option<String>,
    /// A GE graph dump (ge_proto_*_Build.txt) or a directory holding them (highest sequence first).
    #[arg(long, value_name = "FILE|DIR")]
    pub graph: Option<PathBuf>,
    /// Where the kernel .o/.json are: kernel_meta/ or the ops/ folder of an asys collection
    /// (default: the --from-aicore directory and the graph's directory).
    #[arg(long, value_name = "DIR")]
    pub kernel_meta: Option<PathBuf>,
    /// The operator's dump file, or a dump tree to search by op name and task id (with
    /// --from-scan: the scanned tree, when it is no longer at the scan's root).
    #[arg(long, value_name = "FILE|DIR")]
    pub dump: Option<PathBuf>,
    /// Which repro to write.
    #[arg(long, value_enum)]
    pub path: Option<PathArg>,
    /// The case directory to create (must be new or empty unless --force).
    #[arg(short, long, value_name = "OUT_DIR")]
    pub output: PathBuf,
    /// Write into a non-empty OUT_DIR, replacing the files npgx writes.
    #[arg(long)]
    pub force: bool,
    /// What to print on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// A saved node search (`npgx triage bisect --format json` output, or bisect/nodes.json of
    /// the tree): write repro_g<graph>_<node>.py for each FX node it found into OUT_DIR — the op
    /// alone, eagerly and through npugraph_ex with the triaged call's options.
    #[arg(long, value_name = "RESULT.json", conflicts_with_all = ["from_aicore", "op", "kernel", "graph", "dump", "path"])]
    pub fx_node: Option<PathBuf>,
    /// A saved scan (`npgx dump-scan --format json` output): write the FX-node repro of its
    /// first born anomaly (else its first anomaly), fed with that call's dumped inputs.
    #[arg(long, value_name = "SCAN.json", conflicts_with_all = ["from_aicore", "op", "kernel", "graph", "path", "fx_node"])]
    pub from_scan: Option<PathBuf>,
    /// With --from-scan: a folder or file of graph texts (torchair graph dumps,
    /// torch_compile_debug/) besides those found next to the dump. Repeatable.
    #[arg(long, value_name = "PATH", requires = "from_scan")]
    pub graphs: Vec<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(result) = &args.fx_node {
        let search = crate::triage::nodes::load(result)?;
        let written = repro::fx_node::write_all(&search.found, &search.options, &args.output)?;
        let list: String = written
            .iter()
            .map(|p| format!("{}\n", p.display()))
            .collect();
        super::print(&list)?;
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(scan) = args.from_scan {
        let r = repro::anomaly::build(&repro::anomaly::Request {
            scan,
            dump_root: args.dump,
            graphs: args.graphs,
            out: args.output,
            force: args.force,
        })?;
        let json = render::anomaly_json(&r)?;
        let text = render::anomaly_text(&r);
        repro::anomaly::write_documents(&r, &text, &json)?;
        match args.format {
            Format::Table => super::print(&text)?,
            Format::Json => super::print(&(json + "\n"))?,
        }
        return Ok(ExitCode::from(u8::from(!r.missing.is_empty())));
    }
    let req = Request {
        from_aicore: args.from_aicore,
        error_number: args.error_number,
        op: args.op,
        kernel: args.kernel,
        graph: args.graph,
        kernel_meta: args.kernel_meta,
        dump: args.dump,
        path: args.path.map(ReproPath::from),
        out: args.output,
        force: args.force,
    };
    let case = repro::build(&req)?;
    repro::write_documents(&case, &render::readme(&case), &render::json(&case)?)?;
    match args.format {
        Format::Table => super::print(&render::text(&case))?,
        Format::Json => super::print(&(render::json(&case)? + "\n"))?,
    }
    Ok(ExitCode::from(u8::from(!case.missing.is_empty())))
}
