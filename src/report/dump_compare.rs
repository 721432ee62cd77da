//! Rendering a [`CompareReport`]: a human summary, the JSON document of
//! `docs/dump-compare.md`, and the one-row-per-pair table (CSV, Parquet) built with polars.

use std::fmt::Write as _;
use std::io::Write;

#[cfg(feature = "tables")]
use anyhow::Context as _;
#[cfg(feature = "tables")]
use polars::prelude::{Column, DataFrame, PlSmallStr};

use crate::compare::convert::ConvertReport;
#[cfg(feature = "tables")]
use crate::compare::Metrics;
use crate::compare::{CompareReport, GroupReport, Pair};

/// The JSON document (schema `npgx.dump-compare`, version 1).
pub fn json(report: &CompareReport) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&value(report)?)?)
}

/// [`json`] as a value, for `--html`. Every number of the records is an integer or an f64, so
/// the value equals the printed document read back and the page is the one `npgx report` makes
/// of the saved document.
pub fn value(report: &CompareReport) -> anyhow::Result<serde_json::Value> {
    Ok(super::document(
        crate::compare::SCHEMA_NAME,
        report.schema_version,
        &report.document(),
    )?)
}

/// One row per pair, columns in the order of `docs/dump-compare.md`.
#[cfg(feature = "tables")]
pub fn table(report: &CompareReport) -> anyhow::Result<DataFrame> {
    let rows = &report.pairs;
    let at = |p: &Pair| {
        report
            .groups
            .get(p.group)
            .map_or((0, None), |g| g.collectives_at(p.order))
    };
    let side = |p: &Pair| report.groups.get(p.group).map(|g| &g.target);
    let col = |name: &str| PlSmallStr::from(name);
    let text = |name: &str, f: &dyn Fn(&Pair) -> String| {
        Column::new(col(name), rows.iter().map(f).collect::<Vec<_>>())
    };
    let opt_text = |name: &str, f: &dyn Fn(&Pair) -> Option<String>| {
        Column::new(col(name), rows.iter().map(f).collect::<Vec<_>>())
    };
    let int = |name: &str, f: &dyn Fn(&Pair) -> u64| {
        Column::new(col(name), rows.iter().map(f).collect::<Vec<_>>())
    };
    let metric = |name: &str, f: fn(&Metrics) -> Option<f64>| {
        Column::new(
            col(name),
            rows.iter()
                .map(|p| p.metrics.as_ref().and_then(f))
                .collect::<Vec<_>>(),
        )
    };
    let count = |name: &str, f: fn(&Metrics) -> u64| {
        Column::new(
            col(name),
            rows.iter()
                .map(|p| p.metrics.as_ref().map(f))
                .collect::<Vec<_>>(),
        )
    };
    let opt_int = |name: &str, f: &dyn Fn(&Pair) -> Option<u64>| {
        Column::new(col(name), rows.iter().map(f).collect::<Vec<_>>())
    };
    let columns = vec![
        int("group", &|p| p.group as u64),
        int("order", &|p| p.order as u64),
        text("op_name", &|p| p.op_name.clone()),
        opt_text("op_type", &|p| p.op_type.clone()),
        text("golden_op_name", &|p| p.golden_op_name.clone()),
        text("io", &|p| p.io.to_string()),
        int("index", &|p| p.index as u64),
        text("matched_by", &|p| super::enum_name(&p.matched_by)),
        text("golden_dtype", &|p| p.golden_dtype.clone()),
        text("target_dtype", &|p| p.target_dtype.clone()),
        text("shape", &|p| {
            p.shape
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join("x")
        }),
        int("elements", &|p| p.elements),
        metric("cosine", |m| m.cosine),
        metric("max_abs", |m| m.max_abs),
        metric("max_rel", |m| m.max_rel),
        metric("mean_rel", |m| m.mean_rel),
        metric("mean_abs", |m| m.mean_abs),
        metric("rmse", |m| m.rmse),
        metric("acc_rel", |m| m.acc_rel),
        metric("rel_euclidean", |m| m.rel_euclidean),
        metric("kl_div", |m| m.kl_div),
        metric("std_ratio", |m| m.std_ratio),
        metric("rel_gt_0_001", |m| m.rel_gt_0_001),
        metric("rel_gt_0_005", |m| m.rel_gt_0_005),
        count("golden_nan", |m| m.golden_nan),
        count("golden_inf", |m| m.golden_inf),
        count("target_nan", |m| m.target_nan),
        count("target_inf", |m| m.target_inf),
        count("nan_inf_one_side", |m| m.nan_inf_one_side),
        Column::new(
            col("passed"),
            rows.iter().map(|p| p.passed).collect::<Vec<_>>(),
        ),
        opt_text("error", &|p| p.error.clone()),
        text("golden_file", &|p| p.golden_file.clone()),
        text("target_file", &|p| p.target_file.clone()),
        opt_int("rank", &|p| side(p).and_then(|s| s.rank).map(u64::from)),
        opt_int("world_size", &|p| {
            side(p).and_then(|s| s.world_size).map(u64::from)
        }),
        opt_int("device", &|p| side(p).and_then(|s| s.device).map(u64::from)),
        opt_text("model", &|p| side(p).and_then(|s| s.model.clone())),
        opt_text("model_key", &|p| {
            side(p).and_then(|s| s.model.as_deref().map(crate::dump::order::model_key))
        }),
        opt_int("step", &|p| side(p).and_then(|s| s.step)),
        int("collectives_before", &|p| at(p).0 as u64),
        opt_int("collective", &|p| at(p).1.map(|k| k as u64)),
    ];
    DataFrame::new(rows.len(), columns).context("cannot assemble the pair table")
}

/// Writes the table as CSV.
#[cfg(feature = "tables")]
pub fn csv(report: &CompareReport, out: &mut dyn Write) -> anyhow::Result<()> {
    super::write_csv(table(report)?, out)
}

/// The name msprobe gives a pair's tensor: its `data_name` without the extension (the tensor
/// file's stem, for msprobe dumps), else `{op}.{io}.{index}`.
#[cfg(feature = "tables")]
fn msprobe_name(file: &str, op: &str, p: &Pair) -> String {
    let stem = std::path::Path::new(file)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned());
    match (&p.msprobe, stem) {
        (Some(_), Some(stem)) => stem,
        _ => format!("{op}.{}.{}", p.io, p.index),
    }
}

/// The table with msprobe compare's column names (tensor mode), for scripts that read them:
/// `NPU Name` is the target, `Bench Name` the golden side; the six metrics are msprobe's own
/// (`N/A` for pairs that are not msprobe dumps or could not be compared).
#[cfg(feature = "tables")]
pub fn csv_msprobe(report: &CompareReport, out: &mut dyn Write) -> anyhow::Result<()> {
    let rows = &report.pairs;
    let col = |name: &str, f: &dyn Fn(&Pair) -> String| {
        Column::new(
            PlSmallStr::from(name),
            rows.iter().map(f).collect::<Vec<_>>(),
        )
    };
    let shape = |p: &Pair| {
        let dims: Vec<String> = p.shape.iter().map(u64::to_string).collect();
        format!("[{}]", dims.join(", "))
    };
    type Get = fn(&crate::compare::records::MsprobeMetrics) -> String;
    let metric = |name: &str, f: Get| {
        col(name, &|p: &Pair| {
            p.msprobe.as_ref().map_or_else(|| "N/A".to_string(), f)
        })
    };
    let columns = vec![
        col("NPU Name", &|p| msprobe_name(&p.target_file, &p.op_name, p)),
        col("Bench Name", &|p| {
            msprobe_name(&p.golden_file, &p.golden_op_name, p)
        }),
        col("NPU Dtype", &|p| p.target_dtype.clone()),
        col("Bench Dtype", &|p| p.golden_dtype.clone()),
        col("NPU Tensor Shape", &shape),
        col("Bench Tensor Shape", &shape),
        metric("Cosine", |m| m.cosine.to_string()),
        metric("EucDist", |m| m.euc_dist.to_string()),
        metric("MaxAbsErr", |m| m.max_abs_err.to_string()),
        metric("MaxRelativeErr", |m| m.max_relative_err.to_string()),
        metric("One Thousandth Err Ratio", |m| {
            m.one_thousandth_err_ratio.to_string()
        }),
        metric("Five Thousandths Err Ratio", |m| {
            m.five_thousandths_err_ratio.to_string()
        }),
        col("Err_message", &|p| {
            p.msprobe
                .as_ref()
                .map(|m| m.message.clone())
                .filter(|m| !m.is_empty())
                .or_else(|| p.error.clone())
                .unwrap_or_default()
        }),
    ];
    let df = DataFrame::new(rows.len(), columns).context("cannot assemble the pair table")?;
    super::write_csv(df, out)
}

/// Writes the table as Parquet: the compare shard (`npgx.dump-compare.shard` in its metadata).
#[cfg(feature = "tables")]
pub fn parquet(report: &CompareReport, out: impl Write) -> anyhow::Result<()> {
    let mut df = table(report)?;
    super::write_shard(&mut df, crate::shard::COMPARE_SHARD, out)
}

/// A build without the `tables` feature writes no table (the CLI refuses the format before it
/// compares).
#[cfg(not(feature = "tables"))]
pub fn csv(_: &CompareReport, _: &mut dyn Write) -> anyhow::Result<()> {
    Err(super::tables_left_out("--format csv"))
}

/// See the lean [`csv`].
#[cfg(not(feature = "tables"))]
pub fn csv_msprobe(_: &CompareReport, _: &mut dyn Write) -> anyhow::Result<()> {
    Err(super::tables_left_out("--format csv"))
}

/// See the lean [`csv`].
#[cfg(not(feature = "tables"))]
pub fn parquet(_: &CompareReport, _: impl Write) -> anyhow::Result<()> {
    Err(super::tables_left_out("--format parquet"))
}

fn num(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.6}"))
}

fn side_title(s: &crate::compare::records::GroupSide) -> String {
    let mut parts = Vec::new();
    if let Some(r) = s.rank {
        parts.push(format!("rank {r}"));
    }
    if let Some(d) = s.device {
        parts.push(format!("device {d}"));
    }
    if let Some(m) = &s.model {
        parts.push(format!("model {m}"));
    }
    if let Some(st) = s.step {
        parts.push(format!("step {st}"));
    }
    if parts.is_empty() {
        "(no layout)".to_string()
    } else {
        parts.join(" · ")
    }
}

fn describe(p: &Pair) -> String {
    let metrics = match (&p.metrics, &p.error) {
        (_, Some(e)) => e.clone(),
        (Some(m), None) => {
            let mut s = format!(
                "cosine {} max_rel {} max_abs {}",
                num(m.cosine),
                num(m.max_rel),
                num(m.max_abs)
            );
            if m.nan_inf_one_side > 0 {
                let _ = write!(s, ", {} NaN/Inf on one side only", m.nan_inf_one_side);
            }
            s
        }
        (None, None) => match &p.summary {
            Some(s) => format!(
                "statistics only (msprobe summary mode): Max {}%, Min {}%, Mean {}%, Norm {}% relative difference",
                s.max_rel_err, s.min_rel_err, s.mean_rel_err, s.norm_rel_err
            ),
            None => String::new(),
        },
    };
    format!(
        "#{} {}{} {} {} ({} vs {}) — {}",
        p.order,
        p.op_name,
        p.op_type
            .as_ref()
            .map_or(String::new(), |t| format!(" ({t})")),
        p.io,
        p.index,
        p.golden_dtype,
        p.target_dtype,
        metrics
    )
}

fn group_text(o: &mut String, i: usize, g: &GroupReport) {
    let _ = writeln!(
        o,
        "\ngroup {i}: golden {} ↔ target {}  [paired by {}]",
        side_title(&g.golden),
        side_title(&g.target),
        g.paired_by
    );
    let _ = writeln!(o, "  {} pairs, {} failed", g.pairs, g.failed);
    match &g.first_divergence {
        Some(p) => {
            let _ = writeln!(o, "  first divergence : {}", describe(p));
            if let Some(fx) = &p.fx {
                let _ = writeln!(o, "  from             : {}", fx.summary());
            }
            if let Some(i) = &g.inputs_differ {
                let _ = writeln!(
                    o,
                    "  note             : its inputs already differ ({} {}) — the difference came in \
                     before this operator (a graph input, or an operator not compared): it is not \
                     shown to be at fault",
                    i.io, i.index
                );
            }
        }
        None => {
            let _ = writeln!(o, "  first divergence : none");
        }
    }
    if let Some(origin) = &g.origin {
        let how = match origin.evidence {
            crate::compare::Evidence::Inputs => "its inputs match the golden run",
            crate::compare::Evidence::Graph => "its producers' outputs (GE graph) match",
            crate::compare::Evidence::Parameters => {
                "its inputs match but a parameter differs: the weights differ, not the kernel"
            }
            crate::compare::Evidence::None => "no input evidence: the first divergence",
        };
        let _ = writeln!(o, "  origin           : {} [{how}]", describe(&origin.pair));
        if let Some(fx) = &origin.pair.fx {
            let _ = writeln!(o, "  from             : {}", fx.summary());
        }
    }
    if g.failed > 0 && !g.worst.cosine.is_empty() {
        let _ = writeln!(o, "  worst by cosine:");
        for p in &g.worst.cosine {
            let _ = writeln!(o, "    {}", describe(p));
        }
    }
}

/// The human summary, ending with the command to run next when an origin was found.
pub fn text(report: &CompareReport) -> String {
    let s = &report.summary;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "dump-compare {} (golden) vs {} (target)",
        report.golden, report.target
    );
    let _ = writeln!(
        o,
        "  thresholds: cosine ≥ {}, max_rel < {}{}",
        report.thresholds.cosine,
        report.thresholds.max_rel,
        report
            .thresholds
            .per_dtype
            .iter()
            .map(|(d, t)| format!("; {d}: cosine ≥ {}, max_rel < {}", t.cosine, t.max_rel))
            .collect::<String>()
    );
    let _ = writeln!(
        o,
        "  {} pairs in {} groups: {} passed, {} failed; unmatched: {} golden, {} target; {} problems reading files",
        s.pairs, s.groups, s.passed, s.failed, s.unmatched_golden, s.unmatched_target, s.errors
    );
    if s.errors > 0 {
        let _ = writeln!(
            o,
            "  INCOMPLETE: files could not be read (listed below) — pairs that pass are not an \
             all-clear"
        );
    }
    for (i, g) in report.groups.iter().enumerate() {
        group_text(&mut o, i, g);
    }
    one_side_ops(&mut o, report);
    for (what, list) in [
        ("golden", &report.unmatched.golden),
        ("target", &report.unmatched.target),
    ] {
        if list.is_empty() {
            continue;
        }
        let _ = writeln!(o, "\nunmatched {what} tensors ({}):", list.len());
        for u in list.iter().take(20) {
            let _ = writeln!(o, "  {} {} {} — {}", u.op_name, u.io, u.index, u.file);
        }
        if list.len() > 20 {
            let _ = writeln!(o, "  … {} more (--format json lists all)", list.len() - 20);
        }
    }
    if !report.errors.is_empty() {
        let _ = writeln!(o, "\nproblems:");
        for e in &report.errors {
            let _ = writeln!(
                o,
                "  {}: {}: {}",
                super::enum_name(&e.side),
                e.problem.path,
                e.problem.message
            );
        }
    }
    if s.pairs == 0 {
        let _ = writeln!(
            o,
            "\nno tensor pairs could be formed: check the two roots, or pair groups with --group and names with --mapping"
        );
    }
    // A bare array (an `.npy` of no dump's name, no op type) names no operator a repro case
    // could be built for.
    if let Some(origin) = report
        .groups
        .iter()
        .find_map(|g| g.origin.as_ref())
        .filter(|o| o.pair.op_type.is_some())
    {
        let _ = writeln!(
            o,
            "\nnext: npgx repro --path accuracy --op {} --dump {} -o <CASE_DIR>",
            npgx_parsers::shell::word(&origin.pair.op_name),
            npgx_parsers::shell::word(&report.target)
        );
    }
    o
}

/// The operators present on one side only ([`CompareReport::one_side_ops`]): the two runs'
/// graphs differ there, which no pair's metrics show.
fn one_side_ops(o: &mut String, report: &CompareReport) {
    for (what, ops) in [
        ("golden", report.one_side_ops(true)),
        ("target", report.one_side_ops(false)),
    ] {
        if ops.is_empty() {
            continue;
        }
        let shown: Vec<&str> = ops.iter().copied().take(10).collect();
        let _ = writeln!(
            o,
            "\nthe graphs differ: {} operator(s) only in the {what} run: {}{}",
            ops.len(),
            shown.join(", "),
            if ops.len() > 10 { ", …" } else { "" }
        );
    }
}

/// The human summary of a `dump-convert` run.
pub fn convert_text(report: &ConvertReport) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "dump-convert {} → {}: {} files written from {} dumps, {} problems",
        report.tree,
        report.out_dir,
        report.written.len(),
        report.dumps,
        report.errors.len()
    );
    for e in &report.errors {
        let _ = writeln!(o, "  {}: {}", e.path, e.message);
    }
    o
}

/// The JSON document of a `dump-convert` run.
pub fn convert_json(report: &ConvertReport) -> anyhow::Result<String> {
    let doc = super::document(
        crate::compare::convert::SCHEMA_NAME,
        report.schema_version,
        report,
    )?;
    Ok(serde_json::to_string_pretty(&doc)?)
}
