//! Rendering a [`ScanReport`]: a human summary, the JSON document of `docs/dump-scan.md`, and
//! one-row-per-tensor tables (CSV, Parquet) assembled with polars.

use std::fmt::Write as _;
use std::io::Write;

#[cfg(feature = "tables")]
use anyhow::Context as _;
#[cfg(feature = "tables")]
use npgx_parsers::dump::path::Location;
#[cfg(feature = "tables")]
use polars::prelude::{Column, DataFrame, PlSmallStr};

use crate::scan::address::{AddressStatus, Addresses, Held, Link, TensorAt};
use crate::scan::sorted::TensorsInOrder;
use crate::scan::{Anomaly, Group, ScanReport};
#[cfg(feature = "tables")]
use crate::scan::{Place, TensorRecord};

/// The JSON document (`npgx.dump-scan`, docs/dump-scan.md). With `all`, a `tensors` array lists
/// every tensor.
///
/// Serialised straight from the records (no intermediate JSON tree), so a scan with a million
/// anomalies costs the text and not several times more.
pub fn json(out: &mut dyn Write, report: &ScanReport, all: bool) -> anyhow::Result<()> {
    // Streamed into `out`: a million-operator document is never held as one string.
    with_document(report, all, |doc| {
        serde_json::to_writer_pretty(&mut *out, doc)
    })?;
    writeln!(out)?;
    Ok(())
}

/// The JSON document as a value (what `--html` renders: the same document `json` prints),
/// serialised straight from the records, equal to the document read back from its text so that
/// the page is the one `npgx report saved.json` makes. One field needs care: the magnitudes are
/// f32, which the text writes as their shortest f32 decimal (0.99) and a reader reads as the f64
/// of that decimal, while `to_value` would widen the f32 itself (0.9900000095367432). So each
/// magnitude is put in as the number its written decimal reads as ([`as_read`]).
pub fn value(report: &ScanReport, all: bool) -> serde_json::Result<serde_json::Value> {
    let mut doc = with_document(report, all, |d| serde_json::to_value(d))?;
    if let Some(groups) = doc
        .get_mut("groups")
        .and_then(serde_json::Value::as_array_mut)
    {
        for (written, g) in groups.iter_mut().zip(&report.groups) {
            let read = g
                .magnitudes
                .iter()
                .map(|m| m.map_or(Ok(serde_json::Value::Null), as_read))
                .collect::<serde_json::Result<_>>()?;
            written["magnitudes"] = serde_json::Value::Array(read);
        }
    }
    Ok(doc)
}

/// The number a reader of the document's text sees for the f32 `x`: its written decimal (the
/// JSON writer's shortest f32 form, not `Display`'s, which breaks ties the other way:
/// 3.31640625f32 is written 3.3164062, displayed 3.3164063), read as JSON reads it.
fn as_read(x: f32) -> serde_json::Result<serde_json::Value> {
    serde_json::from_str(&serde_json::to_string(&x)?)
}

#[derive(serde::Serialize)]
struct Document<'a> {
    /// Whether the scan covers the tree: every file found could be read (`errors` is empty) and
    /// something was checked (a scan that found no dump file checked nothing: exit 2, no
    /// all-clear).
    complete: bool,
    #[serde(flatten)]
    report: &'a ScanReport,
    /// The command that plans the next dump (`null` when nothing was anomalous).
    next: Option<&'static str>,
    /// The command that writes the repro of the anomaly's FX node (`null` when no anomaly was
    /// traced to one).
    next_repro: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tensors: Option<Tensors<'a>>,
}

/// Every tensor as a JSON array, each record read back in order as it is written.
struct Tensors<'a>(&'a TensorsInOrder);

impl serde::Serialize for Tensors<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{Error as _, SerializeSeq as _};
        let rows = self.0.iter().map_err(S::Error::custom)?;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for row in rows {
            let (_, t) = row.map_err(S::Error::custom)?;
            seq.serialize_element(&t)?;
        }
        seq.end()
    }
}

fn with_document<R>(
    report: &ScanReport,
    all: bool,
    f: impl FnOnce(&super::Envelope<'_, Document<'_>>) -> R,
) -> R {
    let doc = Document {
        complete: report.errors.is_empty() && !report.nothing_checked(),
        report,
        next: report.next(),
        next_repro: report.next_repro(),
        tensors: all.then_some(Tensors(&report.tensors)),
    };
    f(&super::Envelope::new(
        crate::scan::SCHEMA_NAME,
        report.schema_version,
        &doc,
    ))
}

/// Rows per table chunk (a Parquet row group) when every tensor is written: the frame of one
/// chunk at a time, whatever the number of tensors.
#[cfg(feature = "tables")]
const CHUNK: usize = 1 << 16;

/// Records rebuilt at once: a chunk is assembled from frames of at most this many rows, so that
/// its columns are held whole but never all of its records (≈ 700 bytes each with their strings,
/// 45 MB for a chunk).
#[cfg(feature = "tables")]
const PIECE: usize = 1 << 13;

/// The table in chunks of at most `chunk` rows, each handed to `f` as one frame of one piece per
/// column: the anomalous tensors, or with `all` every tensor, in execution order, rebuilt
/// `piece` at a time. At least one chunk (maybe empty), so that an empty table still has its
/// columns.
#[cfg(feature = "tables")]
fn for_each_chunk(
    report: &ScanReport,
    all: bool,
    (chunk, piece): (usize, usize),
    mut f: impl FnMut(DataFrame) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if !all {
        let rows: Vec<(Place, &TensorRecord)> = report
            .anomalies
            .iter()
            .map(|a| {
                let place = Place {
                    group: a.group,
                    order: a.order,
                };
                (place, &a.tensor)
            })
            .collect();
        return f(frame(report, &rows)?);
    }
    let chunk = chunk.max(1);
    let piece = piece.clamp(1, chunk);
    let mut tensors = report.tensors.iter()?.peekable();
    // The next `n` rows as a frame, and whether more follow.
    let mut next = |n: usize| -> anyhow::Result<(DataFrame, bool)> {
        let records = tensors
            .by_ref()
            .take(n)
            .collect::<anyhow::Result<Vec<(Place, TensorRecord)>>>()?;
        let rows: Vec<(Place, &TensorRecord)> = records.iter().map(|(p, t)| (*p, t)).collect();
        Ok((frame(report, &rows)?, tensors.peek().is_some()))
    };
    loop {
        let (mut df, mut more) = next(piece)?;
        while more && df.height() < chunk {
            let part;
            (part, more) = next(piece.min(chunk - df.height()))?;
            df.vstack_mut_owned(part)
                .context("cannot assemble the tensor table")?;
        }
        // One piece per column: one Parquet row group.
        df.rechunk_mut();
        f(df)?;
        if !more {
            return Ok(());
        }
    }
}

/// One row per given tensor: the columns of the shard schema (docs/cluster.md), in its order.
#[cfg(feature = "tables")]
fn frame(report: &ScanReport, rows: &[(Place, &TensorRecord)]) -> anyhow::Result<DataFrame> {
    let mut columns = location_columns(report, rows);
    columns.extend(op_columns(report, rows));
    columns.extend(tensor_columns(rows));
    columns.extend(stat_columns(rows));
    columns.extend(fx_columns(report, rows));
    DataFrame::new(rows.len(), columns).context("cannot assemble the tensor table")
}

/// The columns of a tensor's FX origin (docs/source-map.md): graph, FX node and target, the
/// user's file and line, the module; null where unknown or when no graph text was read.
#[cfg(feature = "tables")]
fn fx_columns(report: &ScanReport, rows: &[(Place, &TensorRecord)]) -> Vec<Column> {
    let col = |name: &str| PlSmallStr::from(name);
    let origins: Vec<Option<std::sync::Arc<crate::source_map::FxOrigin>>> = rows
        .iter()
        .map(|(_, t)| report.origins.as_ref().and_then(|o| o.of(t)))
        .collect();
    let text = |f: fn(&crate::source_map::FxOrigin) -> Option<String>| -> Vec<Option<String>> {
        origins.iter().map(|o| o.as_deref().and_then(f)).collect()
    };
    vec![
        Column::new(col("fx_graph"), text(|o| o.graph.clone())),
        Column::new(col("fx_node"), text(|o| o.fx_node.clone())),
        Column::new(col("fx_target"), text(|o| o.fx_target.clone())),
        Column::new(
            col("user_file"),
            text(|o| o.user_line.as_ref().map(|u| u.file.clone())),
        ),
        Column::new(
            col("user_line"),
            origins
                .iter()
                .map(|o| {
                    o.as_deref()
                        .and_then(|o| o.user_line.as_ref())
                        .map(|u| u64::from(u.line))
                })
                .collect::<Vec<_>>(),
        ),
        Column::new(col("module"), text(|o| o.module.clone())),
    ]
}

/// The columns that place a tensor's group: rank, world size, time, device, model (and its
/// key), model id, step, and where the rank came from.
#[cfg(feature = "tables")]
fn location_columns(report: &ScanReport, rows: &[(Place, &TensorRecord)]) -> Vec<Column> {
    let group = |p: &Place| report.groups.get(p.group);
    let col = |name: &str| PlSmallStr::from(name);
    let loc = |f: fn(&Location) -> Option<u64>| -> Vec<Option<u64>> {
        rows.iter().map(|(_, t)| f(&t.op.location)).collect()
    };
    vec![
        Column::new(col("rank"), loc(|l| l.rank.map(u64::from))),
        Column::new(col("world_size"), loc(|l| l.world_size.map(u64::from))),
        Column::new(
            col("time"),
            rows.iter()
                .map(|(_, t)| t.op.location.time.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(col("device"), loc(|l| l.device.map(u64::from))),
        Column::new(
            col("model"),
            rows.iter()
                .map(|(_, t)| t.op.location.model.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("model_key"),
            rows.iter()
                .map(|(_, t)| {
                    t.op.location
                        .model
                        .as_deref()
                        .map(crate::dump::order::model_key)
                })
                .collect::<Vec<_>>(),
        ),
        Column::new(col("model_id"), loc(|l| l.model_id)),
        Column::new(col("step"), loc(|l| l.step)),
        Column::new(
            col("rank_source"),
            rows.iter()
                .map(|(p, _)| group(p).and_then(|g| g.rank_source.clone()))
                .collect::<Vec<_>>(),
        ),
    ]
}

/// The columns of a tensor's operator: name, type, task, stream and time stamp, its position
/// in execution order and the collectives before it (and its own ordinal, for a collective).
#[cfg(feature = "tables")]
fn op_columns(report: &ScanReport, rows: &[(Place, &TensorRecord)]) -> Vec<Column> {
    let group = |p: &Place| report.groups.get(p.group);
    let collectives: Vec<(Option<usize>, Option<usize>)> = rows
        .iter()
        .map(|(p, _)| {
            group(p).map_or((None, None), |g| {
                let (before, own) = g.collectives_at(p.order);
                (Some(before), own)
            })
        })
        .collect();
    let col = |name: &str| PlSmallStr::from(name);
    vec![
        Column::new(
            col("op_name"),
            rows.iter()
                .map(|(_, t)| t.op.op_name.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("op_type"),
            rows.iter()
                .map(|(_, t)| t.op.op_type.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("task_id"),
            rows.iter().map(|(_, t)| t.op.task_id).collect::<Vec<_>>(),
        ),
        Column::new(
            col("stream_id"),
            rows.iter().map(|(_, t)| t.op.stream_id).collect::<Vec<_>>(),
        ),
        Column::new(
            col("timestamp"),
            rows.iter().map(|(_, t)| t.op.timestamp).collect::<Vec<_>>(),
        ),
        Column::new(
            col("position"),
            rows.iter().map(|(p, _)| p.order as u64).collect::<Vec<_>>(),
        ),
        Column::new(
            col("collectives_before"),
            collectives
                .iter()
                .map(|c| c.0.map(|n| n as u64))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("collective"),
            collectives
                .iter()
                .map(|c| c.1.map(|n| n as u64))
                .collect::<Vec<_>>(),
        ),
    ]
}

/// The columns that describe a tensor: io and index, its anomaly kinds, dtype, format, shape
/// and element count.
#[cfg(feature = "tables")]
fn tensor_columns(rows: &[(Place, &TensorRecord)]) -> Vec<Column> {
    let col = |name: &str| PlSmallStr::from(name);
    let kinds = |t: &TensorRecord| t.kinds().iter().map(super::enum_name).collect::<Vec<_>>();
    vec![
        Column::new(
            col("io"),
            rows.iter()
                .map(|(_, t)| t.io.to_string())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("index"),
            rows.iter().map(|(_, t)| t.index as u64).collect::<Vec<_>>(),
        ),
        Column::new(
            col("kind"),
            rows.iter()
                .map(|(_, t)| kinds(t).first().cloned())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("kinds"),
            rows.iter()
                .map(|(_, t)| kinds(t).join("|"))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("anomalous"),
            rows.iter()
                .map(|(_, t)| t.is_anomalous())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("dtype"),
            rows.iter()
                .map(|(_, t)| t.dtype.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("format"),
            rows.iter()
                .map(|(_, t)| t.format.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("shape"),
            rows.iter()
                .map(|(_, t)| {
                    t.shape
                        .iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join("x")
                })
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("elements"),
            rows.iter().map(|(_, t)| t.elements).collect::<Vec<_>>(),
        ),
    ]
}

/// The columns of a tensor's statistics — NaN, ±Inf and overflow counts, min, max, mean —
/// and of where they were read: their source, the file and the slot.
#[cfg(feature = "tables")]
fn stat_columns(rows: &[(Place, &TensorRecord)]) -> Vec<Column> {
    let col = |name: &str| PlSmallStr::from(name);
    vec![
        Column::new(
            col("nan"),
            rows.iter().map(|(_, t)| t.nan).collect::<Vec<_>>(),
        ),
        Column::new(
            col("pos_inf"),
            rows.iter().map(|(_, t)| t.pos_inf).collect::<Vec<_>>(),
        ),
        Column::new(
            col("neg_inf"),
            rows.iter().map(|(_, t)| t.neg_inf).collect::<Vec<_>>(),
        ),
        Column::new(
            col("overflow"),
            rows.iter().map(|(_, t)| t.overflow).collect::<Vec<_>>(),
        ),
        Column::new(
            col("min"),
            rows.iter().map(|(_, t)| t.min).collect::<Vec<_>>(),
        ),
        Column::new(
            col("max"),
            rows.iter().map(|(_, t)| t.max).collect::<Vec<_>>(),
        ),
        Column::new(
            col("mean"),
            rows.iter().map(|(_, t)| t.mean).collect::<Vec<_>>(),
        ),
        Column::new(
            col("source"),
            rows.iter()
                .map(|(_, t)| {
                    serde_json::to_value(t.source)
                        .ok()
                        .and_then(|v| v.as_str().map(str::to_string))
                        .unwrap_or_default()
                })
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("path"),
            rows.iter()
                .map(|(_, t)| t.op.path.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("slot"),
            rows.iter().map(|(_, t)| t.slot.clone()).collect::<Vec<_>>(),
        ),
    ]
}

/// Writes the table as CSV, chunk by chunk (one header).
#[cfg(feature = "tables")]
pub fn csv(report: &ScanReport, all: bool, out: &mut dyn Write) -> anyhow::Result<()> {
    // CSV is the same text whatever the chunks: one piece each.
    csv_in_chunks(report, all, (PIECE, PIECE), out)
}

#[cfg(feature = "tables")]
fn csv_in_chunks(
    report: &ScanReport,
    all: bool,
    chunk: (usize, usize),
    out: &mut dyn Write,
) -> anyhow::Result<()> {
    let mut header = true;
    for_each_chunk(report, all, chunk, |df| {
        super::write_csv_rows(df, &mut *out, std::mem::take(&mut header))
    })
}

/// Writes the shard: every tensor as Parquet, one row group per chunk, with the shard schema's
/// name and version in the file's key-value metadata (docs/cluster.md). The report must keep
/// every tensor.
#[cfg(feature = "tables")]
pub fn parquet(report: &ScanReport, out: impl Write) -> anyhow::Result<()> {
    parquet_in_chunks(report, (CHUNK, PIECE), out)
}

#[cfg(feature = "tables")]
fn parquet_in_chunks(
    report: &ScanReport,
    chunk: (usize, usize),
    out: impl Write,
) -> anyhow::Result<()> {
    let mut out = Some(out);
    let mut writer = None;
    for_each_chunk(report, true, chunk, |df| {
        let w = match (&mut writer, out.take()) {
            (Some(w), _) => w,
            (None, Some(file)) => writer.insert(super::shard_writer(
                crate::shard::SCAN_SHARD,
                file,
                df.schema(),
                // What the scan could not read, so that `npgx merge` does not call it complete.
                &[(
                    crate::shard::META_UNREADABLE,
                    report.errors.len().to_string(),
                )],
            )?),
            (None, None) => anyhow::bail!("the Parquet writer was not opened"),
        };
        w.write_batch(&df).context("cannot write Parquet")
    })?;
    if let Some(w) = writer {
        w.finish().context("cannot write Parquet")?;
    }
    Ok(())
}

/// A build without the `tables` feature writes no table (the CLI refuses the format before it
/// scans).
#[cfg(not(feature = "tables"))]
pub fn csv(_: &ScanReport, _: bool, _: &mut dyn Write) -> anyhow::Result<()> {
    Err(super::tables_left_out("--format csv"))
}

/// See the lean [`csv`].
#[cfg(not(feature = "tables"))]
pub fn parquet(_: &ScanReport, _: impl Write) -> anyhow::Result<()> {
    Err(super::tables_left_out("--format parquet"))
}

fn group_title(g: &Group) -> String {
    let l = &g.location;
    let mut parts = Vec::new();
    if let Some(r) = l.rank {
        match g.rank_source.as_deref() {
            Some(source) if source != "path" => parts.push(format!("rank {r} ({source})")),
            _ => parts.push(format!("rank {r}")),
        }
    }
    if let Some(t) = &l.time {
        parts.push(t.clone());
    }
    if let Some(d) = l.device {
        parts.push(format!("device {d}"));
    }
    if let Some(m) = &l.model {
        parts.push(format!("model {m}"));
    }
    if let Some(i) = l.model_id {
        parts.push(format!("id {i}"));
    }
    if let Some(s) = l.step {
        parts.push(format!("step {s}"));
    }
    if parts.is_empty() {
        parts.push("(no layout)".into());
    }
    let layout = serde_json::to_value(g.layout)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    format!("{}  [{layout}]", parts.join(" · "))
}

fn describe(a: &Anomaly) -> String {
    let t = &a.tensor;
    let mut ids = String::new();
    if let Some(task) = t.op.task_id {
        let _ = write!(ids, " task {task}");
    }
    if let Some(s) = t.op.stream_id {
        let _ = write!(ids, " stream {s}");
    }
    let mut counts = Vec::new();
    if t.nan > 0 {
        counts.push(format!("{} NaN", t.nan));
    }
    if t.pos_inf > 0 {
        counts.push(format!("{} +Inf", t.pos_inf));
    }
    if t.neg_inf > 0 {
        counts.push(format!("{} -Inf", t.neg_inf));
    }
    match t.overflow {
        Some(0) => {}
        Some(n) => counts.push(format!("{n} saturated")),
        None => counts.push("saturated".into()),
    }
    let place = match &t.slot {
        Some(slot) => slot.clone(),
        None => format!("{} {}", t.io, t.index),
    };
    let mut stack = a
        .stack
        .as_ref()
        .map_or(String::new(), |s| format!("\n                  at {s}"));
    if let Some(fx) = &a.fx {
        let _ = write!(stack, "\n                  from {}", fx.summary());
    }
    format!(
        "{} of {}{}{} — {} of {} {} — {}{stack}",
        place,
        t.op.op_name,
        t.op.op_type
            .as_ref()
            .map_or(String::new(), |ty| format!(" ({ty})")),
        ids,
        counts.join(", "),
        t.elements,
        t.dtype,
        t.op.path
    )
}

/// The human summary.
pub fn text(report: &ScanReport) -> String {
    let s = &report.summary;
    let mut o = String::new();
    let _ = writeln!(o, "dump-scan {}", report.root);
    let _ = writeln!(
        o,
        "  {} files seen, {} read as dumps, {} tensors, {} checked, {} groups",
        s.files_seen,
        s.dump_files,
        s.tensors,
        super::human_bytes(s.bytes),
        s.groups
    );
    let _ = writeln!(
        o,
        "  {} anomalous tensors, {} problems reading files",
        s.anomalous_tensors, s.errors
    );
    if s.errors > 0 {
        let _ = writeln!(
            o,
            "  INCOMPLETE: {} problem(s) reading files (listed below) — no anomaly in what was \
             read is not an all-clear",
            s.errors
        );
    }
    for g in &report.groups {
        let _ = writeln!(o, "\n{}", group_title(g));
        let _ = writeln!(
            o,
            "  {} files, {} tensors, {} anomalous",
            g.files, g.tensors, g.anomalous_tensors
        );
        if let Some(a) = &g.first_anomaly {
            let _ = writeln!(o, "  first anomaly : {}", describe(a));
        }
        if let Some(a) = &g.first_born {
            let _ = writeln!(o, "  born at       : {}", describe(a));
        } else if g.first_anomaly.is_some() {
            let _ = writeln!(
                o,
                "  born at       : not found (every anomalous output has an anomalous input)"
            );
        }
        if g.anomalous_tensors > 0 {
            addresses_text(&mut o, &g.addresses);
        }
    }
    if !report.notes.is_empty() {
        let _ = writeln!(
            o,
            "\nstatistics notes — a statistic overflowed by itself (Max and Min finite), not an anomaly of the tensor:"
        );
        for n in &report.notes {
            let slot = n
                .slot
                .clone()
                .unwrap_or_else(|| format!("{} {}", n.io, n.index));
            let _ = writeln!(
                o,
                "  {} of {} — {} {} not finite (Max {}, Min {}) — {}",
                slot,
                n.op_name,
                n.dtype,
                n.statistics.join(" and "),
                n.max.map_or("-".into(), |v| v.to_string()),
                n.min.map_or("-".into(), |v| v.to_string()),
                n.path
            );
        }
    }
    let overflowed: Vec<_> = report
        .opdebug
        .iter()
        .filter(|d| d.units.iter().any(|u| u.status != 0))
        .collect();
    if !overflowed.is_empty() {
        let _ = writeln!(o, "\noverflow reports (Opdebug):");
        for d in overflowed {
            for u in d.units.iter().filter(|u| u.status != 0) {
                let _ = writeln!(
                    o,
                    "  {} task {} stream {} status 0x{:x} — {} → {}",
                    u.unit,
                    u.task_id,
                    u.stream_id,
                    u.status,
                    d.path,
                    d.paired_dump
                        .as_deref()
                        .unwrap_or("(no op dump with that task/stream)")
                );
            }
        }
    }
    if !report.errors.is_empty() {
        let _ = writeln!(o, "\nproblems:");
        for e in &report.errors {
            let _ = writeln!(o, "  {}: {}", e.path, e.message);
        }
    }
    if let Some(next) = report.next() {
        let _ = writeln!(
            o,
            "\nnext: {next}\n      (scan.json: this scan saved with --format json -o scan.json)"
        );
        if let Some(repro) = report.next_repro() {
            let _ = writeln!(
                o,
                "      {repro}   (the FX node's call on its dumped inputs)"
            );
        }
    }
    o
}

/// At most this many producer links are listed per group in the text (JSON has them all).
const MAX_TEXT_LINKS: usize = 10;

/// `0x…–0x… (N B)`.
fn range(start: u64, end: u64) -> String {
    format!(
        "0x{start:x}–0x{end:x} ({})",
        super::human_bytes(end - start)
    )
}

fn op_at(t: &TensorAt) -> String {
    let ty = t
        .op_type
        .as_ref()
        .map_or(String::new(), |ty| format!(" ({ty})"));
    format!("{}{ty} #{}", t.op_name, t.order)
}

/// Producers of anomalous inputs and overwrites of one group with anomalies.
fn addresses_text(o: &mut String, a: &Addresses) {
    if a.status == AddressStatus::Absent {
        let _ = writeln!(
            o,
            "  addresses     : absent in these files (npugraph_ex .pt, .npy, stats CSVs and older dump headers carry none): producers not linked"
        );
        return;
    }
    if a.status == AddressStatus::Partial {
        let _ = writeln!(
            o,
            "  addresses     : {} tensors without an address are not linked",
            a.without_address
        );
    }
    for w in &a.overwrites {
        let _ = writeln!(
            o,
            "  OVERWRITTEN   : input {} of {} read anomalous values at {}; its producer {} left output {} clean — overwritten between them",
            w.consumer.index,
            op_at(&w.consumer),
            range(w.start, w.end),
            op_at(&w.producer),
            w.producer.index
        );
        let listed: Vec<String> = w
            .between
            .iter()
            .map(|b| {
                let overlap = if b.overlaps { " (overlaps)" } else { "" };
                format!("{} #{}{overlap}", b.op_name, b.order)
            })
            .collect();
        let more = w.between_count.saturating_sub(listed.len());
        let _ = writeln!(
            o,
            "    in between  : {}{}",
            if listed.is_empty() {
                "nothing (adjacent in execution order)".to_string()
            } else {
                listed.join(", ")
            },
            if more > 0 {
                format!(", … {more} more")
            } else {
                String::new()
            }
        );
    }
    let anomalous: Vec<&Link> = a
        .links
        .iter()
        .filter(|l| l.held == Held::Anomalous)
        .collect();
    for l in anomalous.iter().take(MAX_TEXT_LINKS) {
        let from = match (&l.producer, l.producer_held) {
            (Some(p), Some(held)) => format!(
                "output {} of {} ({})",
                p.index,
                op_at(p),
                super::enum_name(&held)
            ),
            _ => "no dumped output (graph input, weight or an op not dumped)".to_string(),
        };
        let _ = writeln!(
            o,
            "  producer      : input {} of {} ← {from}",
            l.consumer.index,
            op_at(&l.consumer)
        );
    }
    if anomalous.len() > MAX_TEXT_LINKS {
        let _ = writeln!(
            o,
            "  producer      : … {} more anomalous inputs (groups[].addresses.links in JSON)",
            anomalous.len() - MAX_TEXT_LINKS
        );
    }
}

#[cfg(all(test, feature = "tables"))]
mod tests {
    use super::{csv_in_chunks, parquet_in_chunks};
    use crate::dump::records::OpRef;
    use crate::scan::analysis::Collector;
    use crate::scan::records::{Source, TensorRecord};
    use crate::scan::scan_report::Summary;
    use crate::scan::ScanReport;
    use npgx_parsers::dump::header::Io;
    use npgx_parsers::dump::path::{Layout, Location};
    use polars::prelude::{ParquetReader, SerReader};

    fn report(tensors: usize) -> ScanReport {
        let mut c = Collector::new(true);
        for i in 0..tensors {
            let op = (tensors - i) / 2; // pushed against execution order
            c.add(TensorRecord {
                op: OpRef {
                    location: Location {
                        step: Some((op % 2) as u64),
                        ..Location::default()
                    },
                    layout: Layout::Model,
                    op_name: format!("op{op}"),
                    op_type: Some(if op % 5 == 0 { "HcomAllReduce" } else { "Add" }.into()),
                    task_id: Some(op as u64),
                    stream_id: Some(1),
                    timestamp: Some(1000 + op as u64),
                    counter: None,
                    path: format!("d/op{op}"),
                },
                io: if i % 2 == 0 { Io::Input } else { Io::Output },
                index: 0,
                dtype: "DT_FLOAT16".into(),
                format: (i % 3 == 0).then(|| "ND".into()),
                shape: vec![2, i as u64],
                elements: 2 * i as u64,
                nan: (i % 7 == 0) as u64,
                pos_inf: 0,
                neg_inf: 0,
                overflow: Some(0),
                min: Some(-(i as f64)),
                max: (i % 4 != 0).then_some(i as f64),
                mean: None,
                source: Source::Dump,
                slot: None,
            });
        }
        let a = c.finish();
        ScanReport {
            schema_version: 1,
            root: "r".into(),
            summary: Summary::default(),
            groups: a.groups,
            anomalies: a.anomalies,
            opdebug: Vec::new(),
            notes: a.notes,
            errors: Vec::new(),
            tensors: a.tensors,
            origins: None,
        }
    }

    #[test]
    fn tables_written_in_chunks_equal_one_chunk() {
        let r = report(23);
        for all in [true, false] {
            let (mut one, mut many) = (Vec::new(), Vec::new());
            csv_in_chunks(&r, all, (usize::MAX, usize::MAX), &mut one).unwrap();
            csv_in_chunks(&r, all, (4, 3), &mut many).unwrap();
            assert_eq!(
                String::from_utf8_lossy(&many),
                String::from_utf8_lossy(&one)
            );
            let lines = String::from_utf8_lossy(&one).lines().count();
            assert_eq!(lines, 1 + if all { 23 } else { r.anomalies.len() });
        }
        let dir = std::env::temp_dir().join(format!("npgx-chunks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let write = |chunk: (usize, usize)| {
            let p = dir.join(format!("{}-{}.parquet", chunk.0, chunk.1));
            parquet_in_chunks(&r, chunk, std::fs::File::create(&p).unwrap()).unwrap();
            p
        };
        let read = |p: &std::path::Path| {
            ParquetReader::new(std::fs::File::open(p).unwrap())
                .finish()
                .unwrap()
        };
        let whole = write((usize::MAX, usize::MAX));
        let bytes = std::fs::read(&whole).unwrap();
        // A chunk assembled from pieces is the same row group, byte for byte; an exact number
        // of chunks is not followed by an empty one.
        for chunk in [(usize::MAX, 3), (23, 4)] {
            assert_eq!(std::fs::read(write(chunk)).unwrap(), bytes, "{chunk:?}");
        }
        // 23 rows in chunks of 5 (pieces of 2, 2, 1): other row groups, the same rows.
        let (one, many) = (read(&whole), read(&write((5, 2))));
        assert_eq!(many.height(), 23);
        assert!(one.equals_missing(&many));
        // An empty scan still writes a shard with every column.
        let empty = report(0);
        let p = dir.join("empty.parquet");
        parquet_in_chunks(&empty, (5, 2), std::fs::File::create(&p).unwrap()).unwrap();
        let df = read(&p);
        assert_eq!((df.height(), df.width()), (0, one.width()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[cfg(test)]
mod value_tests {
    use std::path::Path;

    use crate::scan::{scan, ScanOptions};

    #[test]
    #[ignore = "needs target/fixtures (scripts/test.sh writes them and runs it with --include-ignored)"]
    fn the_value_is_the_printed_document_read_back() {
        // Magnitudes of every dtype (4.5035996e+15 as f32, 3.31640625 written 3.3164062), every
        // tensor, msprobe notes.
        for (rel, all) in [
            ("dtypes/root", true),
            ("torchair/root", false),
            ("msprobe/root", true),
        ] {
            let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("target/fixtures/dump")
                .join(rel);
            assert!(
                root.exists(),
                "missing fixture {} — run scripts/test.sh",
                root.display()
            );
            let opts = ScanOptions {
                threads: Some(1),
                keep_all: all,
                ..Default::default()
            };
            let report = scan(&root, &opts, &|_| {}).unwrap();
            let mut text = Vec::new();
            super::json(&mut text, &report, all).unwrap();
            let read: serde_json::Value = serde_json::from_slice(&text).unwrap();
            let value = super::value(&report, all).unwrap();
            assert!(
                report
                    .groups
                    .iter()
                    .any(|g| g.magnitudes.iter().flatten().any(|&m| {
                        f64::from(m) != serde_json::from_str::<f64>(&m.to_string()).unwrap()
                    })),
                "{rel}: no magnitude that widening would change"
            );
            assert_eq!(value, read, "{rel}");
        }
    }

    #[test]
    fn a_magnitude_reads_as_its_written_decimal_not_its_widened_f32() {
        assert_eq!(super::as_read(0.99).unwrap(), serde_json::json!(0.99));
        assert_eq!(
            super::as_read(3.316_406_2).unwrap(),
            serde_json::json!(3.3164062)
        );
        assert_ne!(serde_json::json!(0.99f32), serde_json::json!(0.99));
    }
}
