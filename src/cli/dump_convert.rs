use std::path::PathBuf;
use std::process::ExitCode;

use crate::compare::convert;
use crate::report::dump_compare as render;

/// Output formats of `npgx dump-convert`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Human summary: files written, problems.
    Table,
    /// Every file written and every problem (schema npgx.dump-convert, version 1).
    Json,
}

/// Write every tensor of every dump under TREE as an ND .npy file, as msaccucmp convert does.
///
/// Device formats (NC1HWC0, NDC1HWC0, FRACTAL_Z, FRACTAL_Z_3D, FRACTAL_NZ) are brought back to
/// the original shape; bf16 and fp8 are written as float32 (exact), other types as they are.
/// Files are named {dump file name}.{input|output}.{i}.npy in the dump's relative directory
/// under DIR; npugraph_ex .pt files are converted the same way. The dumps are never modified.
///
/// Exit status: 0 everything converted, 1 some files or tensors failed (listed), 2 could not run.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx dump-convert /home/dump -o /tmp/npy\n  npgx dump-compare /tmp/npy /home/dump2\n\nDetails: docs/dump-compare.md"
)]
pub struct Args {
    /// Dump directory (any level of the tree) or a single dump file.
    pub tree: PathBuf,
    /// Output directory (created when missing).
    #[arg(short, long, value_name = "DIR")]
    pub output: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
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
    /// Worker threads (default: one per core).
    #[arg(short = 'j', long, value_name = "N")]
    pub threads: Option<usize>,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let report = convert::convert(
        &args.tree,
        &args.output,
        args.threads,
        crate::dump::mapped::Mode::from_flags(args.mmap, args.no_mmap),
    )?;
    match args.format {
        Format::Table => super::print(&render::convert_text(&report))?,
        Format::Json => super::print(&(render::convert_json(&report)? + "\n"))?,
    }
    Ok(ExitCode::from(u8::from(!report.errors.is_empty())))
}
