//! Renderers: turn engine records into tables, JSON, CSV. No scanning or analysis here.
//!
//! Every command's JSON document has one envelope, described in `docs/json.md`:
//! `{"schema": "npgx.<command>", "schema_version": N, …fields of that command…}`. Build it with
//! [`document`] ([`crate::envelope`]); never write `schema` or `schema_version` by hand in a
//! renderer.
pub mod aicore;
mod bisect_rows;
pub mod config;
pub mod dump_compare;
pub mod dump_scan;
pub mod html;
#[cfg(feature = "tables")]
pub mod merge;
pub mod nodes;
pub mod plog;
pub mod repro;
pub mod schema;
pub mod triage;

use serde::Serialize;

pub use crate::envelope::{document, Envelope};

/// `n` bytes in binary units: `512 B`, `1.5 KiB`, `3.2 GiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The name serde gives a unit enum variant (`snake_case`, `lowercase`, …): the spelling the JSON
/// documents use, for tables and text.
pub fn enum_name<T: Serialize>(v: &T) -> String {
    serde_json::to_value(v)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// The error of a build without the `tables` feature (`cargo build --no-default-features`) when
/// `what` — a table format, `npgx merge` — needs it: polars is not compiled in.
#[cfg(not(feature = "tables"))]
pub fn tables_left_out(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} needs the `tables` feature (polars), which this build of npgx {} left out: \
         rebuild with default features (`cargo install --path .`) or `--features tables`",
        env!("CARGO_PKG_VERSION")
    )
}

/// Writes a table as CSV.
#[cfg(feature = "tables")]
pub fn write_csv(
    df: polars::prelude::DataFrame,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    write_csv_rows(df, out, true)
}

/// [`write_csv`] of one chunk of a longer table: the header only with the first.
#[cfg(feature = "tables")]
pub fn write_csv_rows(
    mut df: polars::prelude::DataFrame,
    out: &mut dyn std::io::Write,
    header: bool,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use polars::prelude::{CsvWriter, SerWriter};
    CsvWriter::new(out)
        .include_header(header)
        .finish(&mut df)
        .context("cannot write CSV")
}

/// A Parquet writer for a shard written in row groups: `schema`'s name and version and the npgx
/// version in the file's key-value metadata (docs/cluster.md), so `npgx merge` (or anyone) can
/// tell what it holds, then the `extra` pairs. `table` is the polars schema of every batch.
#[cfg(feature = "tables")]
pub fn shard_writer<W: std::io::Write>(
    schema: crate::shard::ShardSchema,
    out: W,
    table: &polars::prelude::Schema,
    extra: &[(&str, String)],
) -> anyhow::Result<polars::io::parquet::write::BatchedWriter<W>> {
    use anyhow::Context as _;
    use polars::prelude::ParquetWriter;
    ParquetWriter::new(out)
        .with_key_value_metadata(Some(shard_metadata(schema, extra)))
        .batched(table)
        .context("cannot write Parquet")
}

/// Writes `df` as a Parquet shard, with [`shard_writer`]'s metadata.
#[cfg(feature = "tables")]
pub fn write_shard(
    df: &mut polars::prelude::DataFrame,
    schema: crate::shard::ShardSchema,
    out: impl std::io::Write,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use polars::prelude::ParquetWriter;
    ParquetWriter::new(out)
        .with_key_value_metadata(Some(shard_metadata(schema, &[])))
        .finish(df)
        .context("cannot write Parquet")?;
    Ok(())
}

#[cfg(feature = "tables")]
fn shard_metadata(
    schema: crate::shard::ShardSchema,
    extra: &[(&str, String)],
) -> polars::prelude::KeyValueMetadata {
    let mut pairs = vec![
        (crate::shard::META_SCHEMA.into(), schema.name.into()),
        (
            crate::shard::META_VERSION.into(),
            schema.version.to_string(),
        ),
        (
            crate::shard::META_WRITER.into(),
            format!("npgx {}", env!("CARGO_PKG_VERSION")),
        ),
    ];
    pairs.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    polars::prelude::KeyValueMetadata::from_static(pairs)
}
