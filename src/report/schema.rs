//! Rendering for `npgx schema`: a JSON Schema, and the list of them as a table or the
//! `npgx.schema-list` document.

use std::fmt::Write as _;

use crate::schema::{Listing, LIST_SCHEMA_NAME, LIST_SCHEMA_VERSION};

/// A schema as pretty JSON with a final newline (the form of the copies under `schemas/`).
pub fn schema_json(schema: &serde_json::Value) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(schema)? + "\n")
}

/// One line per document: name, version, what writes it.
pub fn list_text(listing: &Listing) -> String {
    let width = listing
        .schemas
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for s in &listing.schemas {
        let _ = writeln!(out, "{:width$}  v{}  {}", s.name, s.version, s.written_by);
    }
    out
}

/// The `npgx.schema-list` document.
/// The `npgx.schema-list` document as a value (what `npgx mcp`'s `schema` returns without a
/// name).
pub fn list_value(listing: &Listing) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(super::Envelope::new(
        LIST_SCHEMA_NAME,
        LIST_SCHEMA_VERSION,
        listing,
    ))
}

pub fn list_json(listing: &Listing) -> serde_json::Result<String> {
    Ok(serde_json::to_string_pretty(&super::Envelope::new(
        LIST_SCHEMA_NAME,
        LIST_SCHEMA_VERSION,
        listing,
    ))? + "\n")
}
