//! Rendering a [`MergeReport`]: a human summary, the `npgx.merge` JSON document
//! (docs/cluster.md) and a table of anomalous ranks per step (CSV, Parquet).

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Context as _;
use polars::prelude::{Column, DataFrame, PlSmallStr};

use crate::merge::{
    Evidence, MergeReport, Point, RankFinding, StepReport, SCHEMA_NAME, SCHEMA_VERSION,
};

/// The JSON document (`npgx.merge`).
pub fn json(out: &mut dyn Write, report: &MergeReport) -> anyhow::Result<()> {
    serde_json::to_writer_pretty(
        &mut *out,
        &super::Envelope::new(SCHEMA_NAME, SCHEMA_VERSION, report),
    )?;
    writeln!(out)?;
    Ok(())
}

/// The `npgx.merge` document as a value (what `npgx mcp`'s `merge` returns).
pub fn value(report: &MergeReport) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(super::Envelope::new(SCHEMA_NAME, SCHEMA_VERSION, report))
}

/// Each step's role of a rank: `origin` (through a collective), `earliest` (by execution
/// position, when no collective links the ranks), `received` or `ambiguous` (one of several
/// candidates).
fn role(step: &StepReport, rank: u64) -> (&'static str, Option<u64>) {
    let Some(v) = &step.verdict else {
        return ("", None);
    };
    if v.origin.contains(&rank) {
        let r = match v.evidence {
            Evidence::Ambiguous => "ambiguous",
            Evidence::ExecutionPosition => "earliest",
            Evidence::CollectiveOrdinal => "origin",
        };
        return (r, None);
    }
    v.received
        .iter()
        .find(|r| r.rank == rank)
        .map_or(("", None), |r| ("received", r.after_collective))
}

/// One row per anomalous rank of each step.
pub fn table(report: &MergeReport) -> anyhow::Result<DataFrame> {
    let rows: Vec<(&StepReport, &RankFinding)> = report
        .steps
        .iter()
        .flat_map(|s| s.findings.iter().map(move |f| (s, f)))
        .collect();
    let col = |name: &str| PlSmallStr::from(name);
    let point = |prefix: &str, pick: fn(&RankFinding) -> Option<&Point>| -> Vec<Column> {
        let get = |f: fn(&Point) -> Option<u64>| -> Vec<Option<u64>> {
            rows.iter().map(|(_, r)| pick(r).and_then(f)).collect()
        };
        let text = |f: fn(&Point) -> Option<&String>| -> Vec<Option<String>> {
            rows.iter()
                .map(|(_, r)| pick(r).and_then(f).cloned())
                .collect()
        };
        vec![
            Column::new(col(&format!("{prefix}position")), get(|p| Some(p.position))),
            Column::new(
                col(&format!("{prefix}collectives_before")),
                get(|p| Some(p.collectives_before)),
            ),
            Column::new(col(&format!("{prefix}collective")), get(|p| p.collective)),
            Column::new(
                col(&format!("{prefix}op_name")),
                text(|p| p.op_name.as_ref()),
            ),
            Column::new(
                col(&format!("{prefix}op_type")),
                text(|p| p.op_type.as_ref()),
            ),
            Column::new(col(&format!("{prefix}io")), text(|p| p.io.as_ref())),
            Column::new(col(&format!("{prefix}index")), get(|p| p.index)),
            Column::new(col(&format!("{prefix}kind")), text(|p| p.kind.as_ref())),
        ]
    };
    let mut columns = vec![
        Column::new(
            col("world_size"),
            rows.iter().map(|(s, _)| s.world_size).collect::<Vec<_>>(),
        ),
        Column::new(
            col("model"),
            rows.iter()
                .map(|(s, _)| s.model.clone())
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("step"),
            rows.iter().map(|(s, _)| s.step).collect::<Vec<_>>(),
        ),
        Column::new(
            col("rank"),
            rows.iter().map(|(_, f)| f.rank).collect::<Vec<_>>(),
        ),
        Column::new(
            col("role"),
            rows.iter()
                .map(|(s, f)| role(s, f.rank).0)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("after_collective"),
            rows.iter()
                .map(|(s, f)| role(s, f.rank).1)
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("evidence"),
            rows.iter()
                .map(|(s, _)| s.verdict.as_ref().map(|v| super::enum_name(&v.evidence)))
                .collect::<Vec<_>>(),
        ),
        Column::new(
            col("tensors"),
            rows.iter().map(|(_, f)| f.tensors).collect::<Vec<_>>(),
        ),
        Column::new(
            col("anomalous_tensors"),
            rows.iter()
                .map(|(_, f)| f.anomalous_tensors)
                .collect::<Vec<_>>(),
        ),
    ];
    columns.extend(point("first_", |f| f.first_anomaly.as_ref()));
    columns.extend(point("born_", |f| f.first_born.as_ref()));
    DataFrame::new(rows.len(), columns).context("cannot assemble the merge table")
}

/// Writes the table as CSV.
pub fn csv(report: &MergeReport, out: &mut dyn Write) -> anyhow::Result<()> {
    super::write_csv(table(report)?, out)
}

/// Writes the table as Parquet (schema `npgx.merge.table` in its metadata).
pub fn parquet(report: &MergeReport, out: std::fs::File) -> anyhow::Result<()> {
    let mut df = table(report)?;
    super::write_shard(&mut df, crate::shard::MERGE_TABLE, out)
}

fn describe(p: &Point) -> String {
    let mut s = format!(
        "{} {} of {}",
        p.io.as_deref().unwrap_or("?"),
        p.index.map_or("?".into(), |i| i.to_string()),
        p.op_name.as_deref().unwrap_or("?")
    );
    if let Some(t) = &p.op_type {
        let _ = write!(s, " ({t})");
    }
    if let Some(k) = &p.kind {
        let _ = write!(s, " {k}");
    }
    let _ = write!(
        s,
        " — position {}, after {} collective(s)",
        p.position, p.collectives_before
    );
    if let Some(k) = p.collective {
        let _ = write!(s, ", is collective {k}");
    }
    s
}

/// Ranks as ascending ranges: `0-36, 38-63`.
fn ranks(list: &[u64]) -> String {
    let mut sorted = list.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(&start) = sorted.get(i) {
        let mut end = start;
        while sorted.get(i + 1) == Some(&(end + 1)) {
            end += 1;
            i += 1;
        }
        out.push(if end == start {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    out.join(", ")
}

/// The human summary.
pub fn text(report: &MergeReport) -> String {
    let s = &report.summary;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "merge: {} shards ({} skipped), {} tensors, {} steps, {} with anomalies",
        s.shards, s.skipped, s.tensors, s.steps, s.anomalous_steps
    );
    if !report.complete {
        let u = &report.unseen;
        let mut what = Vec::new();
        if !u.shards.is_empty() {
            what.push(format!("{} shard(s) skipped", u.shards.len()));
        }
        for s in &u.unread {
            what.push(format!(
                "the scan of {} could not read {} file(s)",
                s.shard, s.files
            ));
        }
        for m in &u.ranks {
            what.push(format!(
                "rank {} of world size {} not seen",
                ranks(&m.ranks),
                m.world_size
            ));
        }
        for m in &u.steps {
            what.push(format!(
                "step {} of model {} lacks rank {}",
                m.step.map_or("?".into(), |v| v.to_string()),
                m.model.as_deref().unwrap_or("?"),
                ranks(&m.ranks)
            ));
        }
        let _ = writeln!(
            o,
            "INCOMPLETE: {} — the verdicts below cover only what was seen; an origin may be \
             among what was not",
            what.join("; ")
        );
    }
    for st in &report.steps {
        let mut title = Vec::new();
        if let Some(w) = st.world_size {
            title.push(format!("world size {w}"));
        }
        if let Some(m) = &st.model {
            title.push(format!("model {m}"));
        }
        if let Some(n) = st.step {
            title.push(format!("step {n}"));
        }
        let _ = writeln!(
            o,
            "\n{}: {} ranks, {} collectives",
            title.join(" · "),
            st.ranks,
            st.collectives
        );
        if !st.missing_ranks.is_empty() {
            let _ = writeln!(
                o,
                "  missing ranks : {} (an origin among them cannot be seen)",
                ranks(&st.missing_ranks)
            );
        }
        let Some(v) = &st.verdict else {
            let _ = writeln!(
                o,
                "  {}",
                if st.complete && report.complete {
                    "no anomaly"
                } else {
                    "incomplete: no anomaly in the ranks seen"
                }
            );
            continue;
        };
        if !st.complete {
            let _ = writeln!(o, "  verdict       : incomplete (ranks not seen above)");
        }
        let _ = writeln!(o, "  anomalous ranks: {}", ranks(&st.anomalous_ranks));
        let at = v
            .before_collective
            .map_or(String::new(), |k| format!(", before collective {k}"));
        if v.evidence == Evidence::ExecutionPosition {
            let _ = writeln!(
                o,
                "  earliest      : rank {} [evidence: {}] — earliest by position; no collective \
                 links the ranks, so no rank's anomaly is traced to another's",
                ranks(&v.origin),
                super::enum_name(&v.evidence)
            );
        } else {
            let _ = writeln!(
                o,
                "  origin        : rank {}{at} [evidence: {}]",
                ranks(&v.origin),
                super::enum_name(&v.evidence)
            );
        }
        if v.origin_received {
            let _ = writeln!(
                o,
                "  note          : that rank's first anomaly came out of a collective with clean \
                 inputs — it was received from a rank not seen here{}",
                if st.missing_ranks.is_empty() {
                    String::new()
                } else {
                    format!(" (missing: {})", ranks(&st.missing_ranks))
                }
            );
        }
        if !v.received.is_empty() {
            let mut by: std::collections::BTreeMap<Option<u64>, Vec<u64>> = Default::default();
            for r in &v.received {
                by.entry(r.after_collective).or_default().push(r.rank);
            }
            for (k, list) in by {
                let after = k.map_or(String::new(), |k| format!(" after collective {k}"));
                let _ = writeln!(o, "  received{after}: rank {}", ranks(&list));
            }
        }
        for f in st.findings.iter().filter(|f| v.origin.contains(&f.rank)) {
            if let Some(p) = &f.first_anomaly {
                let _ = writeln!(o, "  rank {} first : {}", f.rank, describe(p));
            }
            if let Some(p) = &f.first_born {
                let _ = writeln!(o, "  rank {} born  : {}", f.rank, describe(p));
            }
        }
    }
    for sk in &report.skipped {
        let _ = writeln!(o, "\nskipped {}: {}", sk.path, sk.message);
    }
    for w in &report.warnings {
        let _ = writeln!(o, "\nwarning: {w}");
    }
    o
}

#[cfg(test)]
mod tests {
    #[test]
    fn ranks_are_written_as_ranges() {
        assert_eq!(super::ranks(&[5, 0, 1, 2, 3, 7, 9, 10]), "0-3, 5, 7, 9-10");
        assert_eq!(super::ranks(&[]), "");
    }
}
