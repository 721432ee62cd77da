//! `npgx report INPUT... -o FILE`, and the `--html FILE` of other commands.

use super::TextFormat;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use crate::incident;
use crate::report::html;

/// Write one self-contained HTML incident report: a summary of what failed first, where, and
/// what to run next, then a section per input.
///
/// INPUT is a triage log tree (torch-npugraph-ex-triage-logs/<run>/, analysed as `npgx triage
/// analyze` does) or a JSON document saved with `--format json` from `triage run|analyze|classify`,
/// `dump-scan`, `dump-compare`, `plog` or `aicore`. The page has its CSS, script and SVG plots
/// inline and makes no network request. Log lines shown as context are read from the logs the
/// documents name.
///
/// Exit status: 0 the page was written, 2 an input could not be read or is not a document npgx
/// reads (another tool's JSON, a newer schema version: the error names the file and the schema
/// expected).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx report torch-npugraph-ex-triage-logs/20260101-120000-pid42 -o report.html\n  npgx dump-scan /home/dump --format json > scan.json; npgx report scan.json plog.json -o report.html\n\nSections and inputs: docs/report.md"
)]
pub struct Args {
    /// Triage trees and saved npgx JSON documents, one section each, in this order.
    #[arg(required = true, value_name = "INPUT")]
    pub inputs: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// What to print once the page is written: a line, or a JSON document (`npgx.report`: the
    /// page, its size and the inputs with their schemas).
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let inputs = args
        .inputs
        .iter()
        .map(|p| incident::load(p))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let bytes = write(&args.output, &inputs)?;
    match args.format {
        TextFormat::Text => super::print(&html::written_text(&args.output, bytes, &inputs))?,
        TextFormat::Json => {
            super::print(&(html::written_json(&args.output, bytes, &inputs)? + "\n"))?
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes the page; returns its size in bytes.
fn write(path: &Path, inputs: &[incident::Input]) -> anyhow::Result<usize> {
    let page = html::render(inputs);
    crate::output::write(path, page.as_bytes())?;
    Ok(page.len())
}

/// `--html FILE` of a command: the page for the JSON document the command prints with
/// `--format json` (`source` says where it came from).
pub fn write_html(path: &Path, source: String, doc: serde_json::Value) -> anyhow::Result<()> {
    let input = incident::from_document(source, doc, None)?;
    write(path, &[input]).map(drop)
}
