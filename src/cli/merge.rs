use std::path::PathBuf;
use std::process::ExitCode;

#[cfg(feature = "tables")]
use crate::merge;
#[cfg(feature = "tables")]
use crate::report::merge as render;

use super::TableFormat as Format;

/// Merge the Parquet shards written by `npgx dump-scan --format parquet` on each node and name,
/// per step, the first anomalous rank — placed by the collective operators (HCCL) each rank had
/// passed, never by wall clocks.
///
/// Shards are read with polars' lazy Parquet scan. A file that is not a shard of this schema
/// version (or not Parquet, or truncated) is skipped with a warning naming it.
///
/// Exit status: 0 no anomaly in any step, every shard read and every rank seen; 1 anomalies
/// found (every rank seen); 2 nothing could be merged; 3 incomplete — a shard was skipped, a
/// shard's scan could not read some files, or a rank below the world size is missing from a step
/// (`complete: false`, `unseen` in JSON), whatever was found in the rest. --exit-zero turns 1
/// and 3 into 0.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx merge /shared/shards/\n  npgx merge rank0.parquet rank1.parquet --format json\n  npgx merge /shared/shards/ --format parquet -o merged.parquet\n\nShard schema, the merge rule and cluster recipes: docs/cluster.md"
)]
pub struct Args {
    /// Shard files, or directories whose `*.parquet` files are shards (not recursive).
    #[arg(required = true, value_name = "SHARD_OR_DIR")]
    pub inputs: Vec<PathBuf>,
    /// Output format (csv/parquet: one row per anomalous rank and step).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output to FILE instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

#[cfg(feature = "tables")]
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    super::check_output(args.format, args.output.as_deref())?;
    let report = merge::merge(&args.inputs)?;
    // The text summary on stdout lists them itself.
    if args.format != Format::Table || args.output.is_some() {
        for s in &report.skipped {
            eprintln!("npgx merge: warning: skipped {}: {}", s.path, s.message);
        }
        for w in &report.warnings {
            eprintln!("npgx merge: warning: {w}");
        }
    }
    super::emit(
        args.output.as_deref(),
        args.format,
        super::Renderers {
            parquet: &|f| render::parquet(&report, f),
            table: &|| render::text(&report),
            json: &|out| render::json(out, &report),
            csv: &|out| render::csv(&report, out),
        },
    )?;
    Ok(ExitCode::from(if !report.complete {
        super::EXIT_INCOMPLETE
    } else {
        u8::from(report.has_findings())
    }))
}

/// A build without the `tables` feature cannot read Parquet.
#[cfg(not(feature = "tables"))]
pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    Err(crate::report::tables_left_out("npgx merge"))
}
