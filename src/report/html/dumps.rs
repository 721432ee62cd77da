//! The Dump scan and Dump compare sections: per group a plot along execution order with the
//! first anomaly / divergence marked, tables of anomalous tensors and worst pairs, errors.

use maud::{html, Markup};
use plotters::style::RGBColor;
use serde_json::{json, Value};

use super::plot::{self, Chart, Line, Marks, Rule, Shape, Threshold};
use super::{data_table, figure, list, location, other_fields, short, txt, Row, Section, Status};
use crate::incident::Input;

/// At most this many groups get a plot (the others are listed in the tables).
const MAX_PLOTS: usize = 50;
/// At most this many rows are embedded in a table; the note says where the full list is.
const MAX_ROWS: usize = 20_000;

const BLUE: RGBColor = RGBColor(37, 99, 235);
const GREY: RGBColor = RGBColor(120, 120, 120);
const RED: RGBColor = RGBColor(200, 30, 30);
const ORANGE: RGBColor = RGBColor(230, 120, 0);
const PURPLE: RGBColor = RGBColor(130, 50, 170);
const GREEN: RGBColor = RGBColor(30, 130, 60);

fn tensor(a: &Value) -> String {
    format!("{} {}", txt(&a["io"]), txt(&a["index"]))
}

fn quote(s: &str) -> String {
    shlex::try_quote(s)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| s.to_string())
}

/// `(lo, hi)` around the finite values, padded; `(0, 1)` when there are none.
fn span(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        (0.0, 1.0)
    } else {
        let pad = ((hi - lo) * 0.08).max(0.5);
        (lo - pad, hi + pad)
    }
}

/// `npgx.dump-scan`.
pub(super) fn scan(input: &Input, index: usize) -> Section {
    let doc = &input.doc;
    let root = txt(&doc["root"]);
    let groups = list(&doc["groups"]);
    let anomalies = list(&doc["anomalies"]);
    let s = &doc["summary"];
    let mut summary: Vec<Row> = groups
        .iter()
        .filter(|g| !g["first_anomaly"].is_null())
        .take(MAX_PLOTS)
        .map(|g| {
            let fa = &g["first_anomaly"];
            let born = &g["first_born"];
            let mut first = format!(
                "{} of {} ({}): {}",
                tensor(fa),
                txt(&fa["op_name"]),
                txt(&fa["op_type"]),
                txt(&fa["kind"])
            );
            if !born.is_null() {
                first.push_str(&format!(
                    "; born at {} ({} {})",
                    txt(&born["op_name"]),
                    tensor(born),
                    txt(&born["kind"])
                ));
            }
            let culprit = if born.is_null() { fa } else { born };
            Row {
                what: format!("dump-scan {root}"),
                status: Status::Fail,
                first,
                at: format!(
                    "{} · operator #{} · {}",
                    location(g),
                    txt(&fa["order"]),
                    txt(&fa["path"])
                ),
                next: std::iter::once(format!(
                    "npgx repro --op {} --dump {} -o repro",
                    quote(&txt(&culprit["op_name"])),
                    quote(&format!("{root}/{}", txt(&culprit["path"])))
                ))
                .chain(doc["next"].as_str().map(str::to_string))
                .collect(),
            }
        })
        .collect();
    if summary.is_empty() {
        summary.push(Row {
            what: format!("dump-scan {root}"),
            status: if s["tensors"].as_u64().unwrap_or(0) == 0 {
                Status::Info
            } else {
                Status::Ok
            },
            first: format!(
                "no NaN, Inf or overflow in {} tensors ({} errors)",
                txt(&s["tensors"]),
                txt(&s["errors"])
            ),
            at: "—".into(),
            next: vec![],
        });
    }
    let rows: Vec<Value> = anomalies
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            json!([
                a["group"],
                a["order"],
                a["op_name"],
                a["op_type"],
                tensor(a),
                a["kind"],
                a["dtype"],
                a["shape"]
                    .as_array()
                    .map(|d| d.iter().map(txt).collect::<Vec<_>>().join("x")),
                a["nan"],
                a["pos_inf"],
                a["neg_inf"],
                a["overflow"],
                a["min"],
                a["max"],
                a["mean"],
                a["path"]
            ])
        })
        .collect();
    let note = (anomalies.len() > MAX_ROWS).then(|| {
        format!(
            "The first {MAX_ROWS} of {} anomalous tensors, in execution order; every row: npgx dump-scan {} --format csv",
            anomalies.len(),
            quote(&root)
        )
    });
    let body = html! {
        p { (txt(&s["files_seen"])) " files seen, " (txt(&s["dump_files"])) " dump files, "
            (txt(&s["tensors"])) " tensors, " strong { (txt(&s["anomalous_tensors"])) " anomalous" } ", "
            (txt(&s["groups"])) " groups, " (txt(&s["errors"])) " errors." }
        @for (gi, g) in groups.iter().enumerate().take(MAX_PLOTS) {
            h3 { "Group " (gi) ": " (location(g)) }
            p.muted { (txt(&g["layout"])) " layout, " (txt(&g["files"])) " files, " (txt(&g["tensors"])) " tensors, "
                (txt(&g["anomalous_tensors"])) " anomalous" }
            (scan_plot(g, gi, &anomalies, index))
            (first_pair(g))
            (addresses(g))
        }
        @if groups.len() > MAX_PLOTS { p.muted { "Plots of the first " (MAX_PLOTS) " of " (groups.len()) " groups." } }
        h3 { "Anomalous tensors" }
        (data_table(&format!("anomalies-{index}"),
            &["group", "order", "op", "type", "tensor", "kind", "dtype", "shape", "nan", "+inf", "-inf", "overflow", "min", "max", "mean", "file"],
            &rows, note))
        @if !list(&doc["opdebug"]).is_empty() {
            h3 { "Opdebug overflow payloads" }
            table {
                tr { th { "file" } th { "task" } th { "stream" } th { "units" } th { "paired dump" } }
                @for o in list(&doc["opdebug"]) {
                    tr { td { code { (txt(&o["path"])) } } td { (txt(&o["task_id"])) } td { (txt(&o["stream_id"])) }
                        td { @for u in list(&o["units"]) { (txt(&u["unit"])) ": " (txt(&u["status"])) br; } }
                        td { (txt(&o["paired_dump"])) } }
                }
            }
        }
        (errors(&doc["errors"]))
        (other_fields(doc, &["schema", "schema_version", "root", "summary", "groups", "anomalies", "opdebug", "errors", "tensors", "next"]))
    };
    Section {
        title: "Dump scan".into(),
        summary,
        body,
    }
}

fn first_pair(g: &Value) -> Markup {
    html! {
        ul {
            @for (label, a) in [("first anomaly", &g["first_anomaly"]), ("birth", &g["first_born"])] {
                @if !a.is_null() {
                    li { strong { (label) } ": operator #" (txt(&a["order"])) " " code { (txt(&a["op_name"])) }
                        " (" (txt(&a["op_type"])) "), " (tensor(a)) ", " (txt(&a["kind"])) " — " code { (txt(&a["path"])) } }
                }
            }
        }
    }
}

/// A group's overwrites and the producers of its anomalous inputs (`groups[].addresses`), read
/// into the engine's typed record; nothing for documents older than schema version 2.
fn addresses(g: &Value) -> Markup {
    use crate::dump::address::{AddressStatus, Addresses, Held};
    let Ok(a) = serde_json::from_value::<Addresses>(g["addresses"].clone()) else {
        return html! {};
    };
    if g["anomalous_tensors"].as_u64().unwrap_or(0) == 0 {
        return html! {};
    }
    let hex = |s: u64, e: u64| format!("0x{s:x}–0x{e:x} ({} bytes)", e - s);
    let anomalous: Vec<_> = a
        .links
        .iter()
        .filter(|l| l.held == Held::Anomalous)
        .take(MAX_PLOTS)
        .collect();
    html! {
        @if a.status == AddressStatus::Absent {
            p.muted { "Device addresses: absent in these files (npugraph_ex .pt, .npy, stats CSVs and older dump headers carry none), so producers are not linked." }
        }
        @for w in &a.overwrites {
            p { strong { "Overwritten: " } "input " (w.consumer.index) " of " code { (w.consumer.op_name) } " (#" (w.consumer.order) ") read anomalous values at "
                (hex(w.start, w.end)) " that output " (w.producer.index) " of " code { (w.producer.op_name) } " (#" (w.producer.order) ") had left clean. "
                (w.between_count) " operators ran in between"
                @if !w.between.is_empty() { ": "
                    @for (i, b) in w.between.iter().enumerate() {
                        @if i > 0 { ", " } code { (b.op_name) } " #" (b.order) @if b.overlaps { " (overlaps)" }
                    }
                }
                "." }
        }
        @if !anomalous.is_empty() {
            ul {
                @for l in anomalous {
                    li { "input " (l.consumer.index) " of " code { (l.consumer.op_name) } " (#" (l.consumer.order) ") ← "
                        @match (&l.producer, l.producer_held) {
                            (Some(p), Some(held)) => { "output " (p.index) " of " code { (p.op_name) } " (#" (p.order) ", " (crate::report::enum_name(&held)) ")" }
                            _ => { "no dumped output (graph input, weight or an op not dumped)" }
                        }
                    }
                }
            }
        }
    }
}

fn errors(errors: &Value) -> Markup {
    let errors = list(errors);
    html! {
        @if !errors.is_empty() {
            h3 { "Errors (" (errors.len()) ")" }
            ul.errors {
                @for e in errors.iter().take(MAX_ROWS) {
                    li { @if let Some(side) = e["side"].as_str() { (side) ": " }
                        code { (txt(&e["path"])) } ": " (txt(&e["message"]))
                        @if !e["offset"].is_null() { " (offset " (txt(&e["offset"])) ")" } }
                }
            }
        }
    }
}

/// log10 of a positive finite magnitude.
fn log_mag(v: &Value) -> Option<f64> {
    v.as_f64()
        .filter(|m| *m > 0.0 && m.is_finite())
        .map(f64::log10)
}

fn scan_plot(g: &Value, gi: usize, anomalies: &[&Value], index: usize) -> Markup {
    let Some(mags) = g["magnitudes"].as_array() else {
        return html! { p.muted { "No per-operator magnitudes in this document (written by an older npgx): no plot." } };
    };
    let n = mags.len();
    let x_max = n.saturating_sub(1) as f64;
    let logs: Vec<Option<f64>> = mags.iter().map(log_mag).collect();
    let (y0, y1) = span(logs.iter().flatten().copied());
    let at = |order: usize| {
        logs.get(order)
            .copied()
            .flatten()
            .unwrap_or(y1 - (y1 - y0) * 0.03)
    };
    let mine: Vec<&&Value> = anomalies
        .iter()
        .filter(|a| a["group"].as_u64() == Some(gi as u64))
        .collect();
    let kind_marks = |kind: &str, name: &str, color, shape| Marks {
        name: name.into(),
        color,
        shape,
        points: plot::thin(
            mine.iter()
                .filter(|a| a["kind"] == kind)
                .filter_map(|a| a["order"].as_u64())
                .map(|o| (o as f64, at(o as usize))),
            x_max,
        ),
    };
    let mut rules = Vec::new();
    for (label, a, color) in [
        ("first anomaly", &g["first_anomaly"], RED),
        ("birth", &g["first_born"], PURPLE),
    ] {
        if let Some(o) = a["order"].as_u64() {
            rules.push(Rule {
                x: o as f64,
                label: format!("{label}: {}", txt(&a["op_name"])),
                color,
            });
        }
    }
    let chart = Chart {
        caption: format!("largest finite magnitude per operator — group {gi}"),
        x_label: "operator, in execution order".into(),
        y_label: "max |x| (log scale)".into(),
        x_max,
        y_range: (y0, y1),
        log_y: true,
        lines: vec![Line {
            name: "max |finite value|".into(),
            color: BLUE,
            points: plot::decimate(
                logs.iter()
                    .enumerate()
                    .filter_map(|(i, l)| l.map(|l| (i as f64, l))),
                x_max,
            ),
        }],
        marks: vec![
            kind_marks("nan", "NaN", RED, Shape::Circle),
            kind_marks("inf", "Inf", ORANGE, Shape::Triangle),
            kind_marks("overflow", "overflow", PURPLE, Shape::Cross),
        ]
        .into_iter()
        .filter(|m| !m.points.is_empty())
        .collect(),
        rules,
        thresholds: vec![],
    };
    figure(&chart, &format!("scan-plot plot-{index}-{gi}"))
}

/// `npgx.dump-compare`.
pub(super) fn compare(input: &Input, index: usize) -> Section {
    let doc = &input.doc;
    let (golden, target) = (txt(&doc["golden"]), txt(&doc["target"]));
    let groups = list(&doc["groups"]);
    let pairs = list(&doc["pairs"]);
    let s = &doc["summary"];
    let th = &doc["thresholds"];
    let mut summary: Vec<Row> = groups
        .iter()
        .filter(|g| !g["first_divergence"].is_null())
        .take(MAX_PLOTS)
        .map(|g| {
            let fd = &g["first_divergence"];
            let origin = &g["origin"];
            let mut first = format!(
                "{} of {}: cosine {}, max rel {}",
                tensor(fd),
                txt(&fd["op_name"]),
                txt(&fd["metrics"]["cosine"]),
                txt(&fd["metrics"]["max_rel"])
            );
            if !fd["error"].is_null() {
                first = format!(
                    "{} of {}: {}",
                    tensor(fd),
                    txt(&fd["op_name"]),
                    txt(&fd["error"])
                );
            }
            let mut next = Vec::new();
            if !origin.is_null() {
                first.push_str(&format!(
                    "; origin {} ({} evidence)",
                    txt(&origin["op_name"]),
                    txt(&origin["evidence"])
                ));
                next.push(format!(
                    "npgx repro --path accuracy --op {} --dump {} -o repro",
                    quote(&txt(&origin["op_name"])),
                    quote(&txt(&origin["target_file"]))
                ));
            }
            Row {
                what: format!("dump-compare {golden} vs {target}"),
                status: Status::Fail,
                first,
                at: format!("{} · order {}", location(&g["target"]), txt(&fd["order"])),
                next,
            }
        })
        .collect();
    if summary.is_empty() {
        summary.push(Row {
            what: format!("dump-compare {golden} vs {target}"),
            status: if s["pairs"].as_u64().unwrap_or(0) == 0 {
                Status::Info
            } else {
                Status::Ok
            },
            first: format!("all {} pairs pass", txt(&s["pairs"])),
            at: "—".into(),
            next: vec![],
        });
    }
    let mut worst: Vec<&Value> = Vec::new();
    for g in &groups {
        for k in ["cosine", "max_rel", "max_abs", "rmse"] {
            for p in list(&g["worst"][k]) {
                let same = |q: &&Value| {
                    q["group"] == p["group"]
                        && q["order"] == p["order"]
                        && q["io"] == p["io"]
                        && q["index"] == p["index"]
                        && q["op_name"] == p["op_name"]
                };
                if !worst.iter().any(same) {
                    worst.push(p);
                }
            }
        }
    }
    let rows: Vec<Value> = worst
        .iter()
        .map(|p| {
            let m = &p["metrics"];
            json!([
                p["group"],
                p["order"],
                p["op_name"],
                p["op_type"],
                tensor(p),
                p["target_dtype"],
                m["cosine"],
                m["max_rel"],
                m["max_abs"],
                m["rmse"],
                m["nan_inf_one_side"],
                p["passed"],
                p["error"],
                p["target_file"]
            ])
        })
        .collect();
    let body = html! {
        p { (txt(&s["pairs"])) " pairs, " strong { (txt(&s["failed"])) " failed" } ", "
            (txt(&s["unmatched_golden"])) " golden and " (txt(&s["unmatched_target"])) " target tensors unmatched, "
            (txt(&s["errors"])) " errors. Thresholds: cosine ≥ " (txt(&th["cosine"])) ", max relative error < " (txt(&th["max_rel"]))
            @if let Some(m) = th["per_dtype"].as_object() { @for (d, t) in m { "; " (d) ": " (txt(&t["cosine"])) ", " (txt(&t["max_rel"])) } } "." }
        p.muted { "golden " code { (golden) } " · target " code { (target) } }
        @for (gi, g) in groups.iter().enumerate().take(MAX_PLOTS) {
            h3 { "Group " (gi) ": " (location(&g["target"])) }
            p.muted { "paired by " (txt(&g["paired_by"])) ", " (txt(&g["pairs"])) " pairs, " (txt(&g["failed"])) " failed" }
            (compare_plots(g, gi, &pairs, th, index))
            ul {
                @for (label, p) in [("first divergence", &g["first_divergence"]), ("origin", &g["origin"])] {
                    @if !p.is_null() {
                        li { strong { (label) } ": order " (txt(&p["order"])) " " code { (txt(&p["op_name"])) } " " (tensor(p))
                            ", cosine " (txt(&p["metrics"]["cosine"])) ", max rel " (txt(&p["metrics"]["max_rel"]))
                            @if !p["evidence"].is_null() { " (evidence: " (txt(&p["evidence"])) ")" } }
                    }
                }
            }
        }
        h3 { "Worst pairs" }
        (data_table(&format!("worst-{index}"),
            &["group", "order", "op", "type", "tensor", "dtype", "cosine", "max rel", "max abs", "rmse", "NaN/Inf one side", "passed", "error", "target file"],
            &rows, None))
        (errors(&doc["errors"]))
        (other_fields(doc, &["schema", "schema_version", "golden", "target", "thresholds", "summary", "groups", "pairs", "unmatched", "errors"]))
    };
    Section {
        title: "Dump compare".into(),
        summary,
        body,
    }
}

fn compare_plots(g: &Value, gi: usize, pairs: &[&Value], th: &Value, index: usize) -> Markup {
    let mine: Vec<&&Value> = pairs
        .iter()
        .filter(|p| p["group"].as_u64() == Some(gi as u64))
        .collect();
    let x_max = mine
        .iter()
        .filter_map(|p| p["order"].as_u64())
        .max()
        .unwrap_or(0) as f64;
    let metric = |p: &Value, k: &str, log: bool| -> Option<f64> {
        let v = p["metrics"][k].as_f64()?;
        if log {
            (v > 0.0 && v.is_finite()).then(|| v.log10())
        } else {
            v.is_finite().then_some(v)
        }
    };
    let mut charts = Vec::new();
    for (key, label, log, limit) in [
        ("cosine", "cosine similarity", false, th["cosine"].as_f64()),
        (
            "max_rel",
            "max relative error (log scale)",
            true,
            th["max_rel"].as_f64(),
        ),
    ] {
        let pts: Vec<(f64, f64)> = mine
            .iter()
            .filter_map(|p| Some((p["order"].as_u64()? as f64, metric(p, key, log)?)))
            .collect();
        let limit = limit.and_then(|t| {
            if log {
                (t > 0.0).then(|| t.log10())
            } else {
                Some(t)
            }
        });
        let (y0, y1) = span(pts.iter().map(|p| p.1).chain(limit));
        let failed = plot::thin(
            mine.iter()
                .filter(|p| p["passed"] == false)
                .filter_map(|p| Some((p["order"].as_u64()? as f64, metric(p, key, log)?))),
            x_max,
        );
        let mut rules = Vec::new();
        for (name, p, color) in [
            ("first divergence", &g["first_divergence"], RED),
            ("origin", &g["origin"], PURPLE),
        ] {
            if let Some(o) = p["order"].as_u64() {
                rules.push(Rule {
                    x: o as f64,
                    label: format!("{name}: {}", txt(&p["op_name"])),
                    color,
                });
            }
        }
        charts.push((
            key,
            Chart {
                caption: format!("{label} — group {gi}"),
                x_label: "tensor pair, in execution order".into(),
                y_label: label.into(),
                x_max,
                y_range: (y0, y1),
                log_y: log,
                lines: vec![Line {
                    name: key.into(),
                    color: BLUE,
                    points: plot::decimate(pts, x_max),
                }],
                marks: if failed.is_empty() {
                    vec![]
                } else {
                    vec![Marks {
                        name: "failed pair".into(),
                        color: ORANGE,
                        shape: Shape::Cross,
                        points: failed,
                    }]
                },
                rules,
                thresholds: limit
                    .map(|y| Threshold {
                        y,
                        name: format!("threshold {}", short(if log { 10f64.powf(y) } else { y })),
                        color: if log { GREY } else { GREEN },
                    })
                    .into_iter()
                    .collect(),
            },
        ));
    }
    html! {
        @for (key, c) in &charts { (figure(c, &format!("compare-plot {key} plot-{index}-{gi}"))) }
    }
}
