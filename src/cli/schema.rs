//! `npgx schema NAME` and `npgx schema [--list]`: the JSON Schemas of npgx's documents.

use std::process::ExitCode;

use super::TextFormat;
use crate::report::schema as render;
use crate::schema;

/// Print the JSON Schema (draft 2020-12) of an npgx JSON document, or list them all (no NAME).
///
/// Every `--format json` document npgx writes has one, generated from the types that write it:
/// `schema` and `schema_version` are constants, fields every document of the version has are
/// required, and unknown fields are allowed (new fields may appear within a version). The same
/// schemas are committed under `schemas/` in the source tree.
///
/// Exit status: 0 printed, 2 no document of that name (the error lists the names).
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  npgx schema --list\n  npgx schema npgx.dump-scan > dump-scan.schema.json\n  npgx schema --list --format json | jq -r '.schemas[].name'\n\nDocuments and versions: docs/json.md"
)]
pub struct Args {
    /// The document's name, as its `schema` field gives it (`npgx.dump-scan`; `dump-scan` too).
    /// Without it, the list of every document.
    #[arg(value_name = "NAME", conflicts_with = "list")]
    pub name: Option<String>,
    /// List every document with its version and what writes it (what no NAME does too).
    #[arg(long)]
    pub list: bool,
    /// With `--list`: a table, or the `npgx.schema-list` JSON document. A schema itself is always
    /// JSON.
    #[arg(long, value_enum, default_value_t = TextFormat::Text)]
    pub format: TextFormat,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let listing = schema::listing();
    let text = match args.name {
        Some(name) => match schema::document_schema(&name) {
            Some(s) => render::schema_json(&s)?,
            None => anyhow::bail!(
                "no npgx document is named {name:?}; the schemas are:\n{}",
                render::list_text(&listing).trim_end()
            ),
        },
        None => match args.format {
            TextFormat::Text => render::list_text(&listing),
            TextFormat::Json => render::list_json(&listing)?,
        },
    };
    super::print(&text)?;
    Ok(ExitCode::SUCCESS)
}
