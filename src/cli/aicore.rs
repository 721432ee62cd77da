use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::plog;
use crate::report::aicore as render;
use crate::report::plog::print_warnings;

/// Output formats of `npgx aicore`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// One block per error, every field with the line it comes from.
    Table,
    /// The `npgx.aicore` JSON document (docs/aicore.md), the errors under `errors`.
    Json,
    /// One row per error.
    Csv,
}

/// List every AI Core / AI Vector / FFTS+ / AI CPU device error, each field with its evidence line.
///
/// For each error: device, stream, task, kernel, function and GE node names, error codes with
/// their meaning, core registers and dump files — each with the file and line it was read from.
///
/// PATH may be plogs, device logs (including firmware <exception_print> reports), captured
/// stdout/stderr with CANN error reports (EZ9999 ... TraceBack), or directories to search for
/// CANN log files. All eras of the runtime's wording are recognised (2020 firmware to 2026
/// [DFX_INFO] lines). A field that is not in the text is left out, never guessed.
///
/// Exit status: 0 no device error found, 1 device errors found, 2 nothing could be read or bad
/// usage.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx aicore ~/ascend/log\n  npgx aicore stderr.txt --format json | jq '.errors[0].kernel_name.value'\n  npgx aicore asys_output_20250508095626087 --format csv\n\nJSON schema: docs/aicore.md"
)]
pub struct Args {
    /// Log files, console captures, or directories to search.
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut warnings = Vec::new();
    let inputs = plog::discover(&args.paths, &mut warnings);
    if inputs.is_empty() {
        print_warnings(&warnings);
        anyhow::bail!("no log files found under the given paths");
    }
    let scan = plog::scan_aicore(&inputs, warnings);
    print_warnings(&scan.warnings);
    if scan.files.is_empty() {
        anyhow::bail!("none of the inputs could be read");
    }
    let mut out = super::stdout();
    let res = match args.format {
        Format::Table => render::table(&mut out, &scan),
        Format::Json => render::json(&mut out, &scan),
        Format::Csv => render::csv(&mut out, &scan),
    }
    .and_then(|()| out.flush());
    res.context("writing the output")?;
    Ok(if scan.errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
