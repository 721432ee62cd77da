//! The Dump scan and Dump compare sections: per group a plot along execution order with the
//! first anomaly / divergence marked, tables of anomalous tensors and worst pairs, errors. The
//! documents are read through their typed views ([`ScanDocument`], [`CompareDocument`]).

use maud::{html, Markup};
use npgx_parsers::dump::path::Location;
use plotters::style::RGBColor;
use serde_json::{json, Value};

use super::plot::{self, Chart, Line, Marks, Rule, Shape, Threshold};
use super::{
    data_table, figure, location, or_dash, other_fields, short, unreadable, Row, Section, Status,
};
use crate::compare::records::{GroupSide, Thresholds};
use crate::compare::{GroupReport, Metrics, Pair};
use crate::dump::records::FileProblem;
use crate::incident::{Input, Typed};
use crate::report::enum_name;
use crate::scan::document::{ScanAnomaly, ScanGroup, ScanTensor};
use crate::scan::records::Kind;

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

fn tensor(t: &ScanTensor) -> String {
    format!("{} {}", t.io, t.index)
}

/// Where a scanned group lies: `rank 0 · device 1 · model m · step 3`.
fn scan_location(l: &Location) -> String {
    location(&[
        ("rank", l.rank.map(|v| v.to_string())),
        ("device", l.device.map(|v| v.to_string())),
        ("model", l.model.clone()),
        ("model id", l.model_id.map(|v| v.to_string())),
        ("step", l.step.map(|v| v.to_string())),
    ])
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

/// `npgx.dump-scan`, read through its typed view ([`ScanDocument`]): a document that does not
/// read as one says so instead of rendering blank fields.
pub(super) fn scan(input: &Input, index: usize) -> Section {
    let Typed::Scan(doc) = &input.typed else {
        return unreadable(input, "Dump scan");
    };
    let root = &doc.root;
    let anomalies = &doc.anomalies;
    let s = &doc.summary;
    let mut summary: Vec<Row> = doc
        .groups
        .iter()
        .filter_map(|g| Some((g, g.first_anomaly.as_ref()?)))
        .take(MAX_PLOTS)
        .map(|(g, fa)| {
            let born = g.first_born.as_ref();
            let t = &fa.tensor;
            let mut first = format!(
                "{} of {} ({}): {}",
                tensor(t),
                t.op_name,
                or_dash(t.op_type.as_ref()),
                enum_name(&fa.kind)
            );
            if let Some(born) = born {
                first.push_str(&format!(
                    "; born at {} ({} {})",
                    born.tensor.op_name,
                    tensor(&born.tensor),
                    enum_name(&born.kind)
                ));
            }
            if let Some(fx) = &born.unwrap_or(fa).fx {
                first.push_str(&format!("; from {}", fx.summary()));
            }
            let culprit = &born.unwrap_or(fa).tensor;
            Row {
                what: format!("dump-scan {root}"),
                status: Status::Fail,
                first,
                at: format!(
                    "{} · operator #{} · {}",
                    scan_location(&g.location()),
                    fa.order,
                    t.path
                ),
                next: std::iter::once(format!(
                    "npgx repro --op {} --dump {} -o repro",
                    npgx_parsers::shell::word(&culprit.op_name),
                    npgx_parsers::shell::word(&format!("{root}/{}", culprit.path))
                ))
                .chain(doc.next.clone())
                .collect(),
            }
        })
        .collect();
    if summary.is_empty() {
        summary.push(Row {
            what: format!("dump-scan {root}"),
            status: if s.tensors == 0 {
                Status::Info
            } else {
                Status::Ok
            },
            first: format!(
                "no NaN, Inf or overflow in {} tensors ({} errors)",
                s.tensors, s.errors
            ),
            at: "—".into(),
            next: vec![],
        });
    }
    let rows: Vec<Value> = anomalies
        .iter()
        .take(MAX_ROWS)
        .map(|a| {
            let t = &a.tensor;
            json!([
                a.group,
                a.order,
                t.op_name,
                t.op_type,
                tensor(t),
                a.kind,
                t.dtype,
                t.shape
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join("x"),
                t.nan,
                t.pos_inf,
                t.neg_inf,
                t.overflow,
                t.min,
                t.max,
                t.mean,
                t.path
            ])
        })
        .collect();
    let note = (anomalies.len() > MAX_ROWS).then(|| {
        format!(
            "The first {MAX_ROWS} of {} anomalous tensors, in execution order; every row: npgx dump-scan {} --format csv",
            anomalies.len(),
            npgx_parsers::shell::word(root)
        )
    });
    let errors = doc.errors.iter().map(|problem| ErrorLine {
        side: None,
        problem,
    });
    let body = html! {
        p { (s.files_seen) " files seen, " (s.dump_files) " dump files, "
            (s.tensors) " tensors, " strong { (s.anomalous_tensors) " anomalous" } ", "
            (s.groups) " groups, " (s.errors) " errors." }
        @for (gi, g) in doc.groups.iter().enumerate().take(MAX_PLOTS) {
            h3 { "Group " (gi) ": " (scan_location(&g.location())) }
            p.muted { (enum_name(&g.layout)) " layout, " (g.files) " files, " (g.tensors) " tensors, "
                (g.anomalous_tensors) " anomalous" }
            (scan_plot(g, gi, anomalies, index))
            (first_pair(g))
            (addresses(g))
        }
        @if doc.groups.len() > MAX_PLOTS { p.muted { "Plots of the first " (MAX_PLOTS) " of " (doc.groups.len()) " groups." } }
        h3 { "Anomalous tensors" }
        (data_table(&format!("anomalies-{index}"),
            &["group", "order", "op", "type", "tensor", "kind", "dtype", "shape", "nan", "+inf", "-inf", "overflow", "min", "max", "mean", "file"],
            &rows, note))
        @if !doc.opdebug.is_empty() {
            h3 { "Opdebug overflow payloads" }
            table {
                tr { th { "file" } th { "task" } th { "stream" } th { "units" } th { "paired dump" } }
                @for o in &doc.opdebug {
                    tr { td { code { (o.path) } } td { (or_dash(o.task_id)) } td { (or_dash(o.stream_id)) }
                        td { @for u in &o.units { (u.unit) ": " (u.status) br; } }
                        td { (or_dash(o.paired_dump.as_ref())) } }
                }
            }
        }
        (error_list(errors))
        (other_fields(&input.doc, &["schema", "schema_version", "root", "summary", "groups", "anomalies", "opdebug", "errors", "tensors", "next"]))
    };
    Section {
        title: "Dump scan".into(),
        summary,
        body,
    }
}

fn first_pair(g: &ScanGroup) -> Markup {
    html! {
        ul {
            @for (label, a) in [("first anomaly", &g.first_anomaly), ("birth", &g.first_born)] {
                @if let Some(a) = a {
                    @let t = &a.tensor;
                    li { strong { (label) } ": operator #" (a.order) " " code { (t.op_name) }
                        " (" (or_dash(t.op_type.as_ref())) "), " (tensor(t)) ", " (enum_name(&a.kind)) " — " code { (t.path) }
                        @if let Some(fx) = &a.fx { br; "from " code { (fx.summary()) } } }
                }
            }
        }
    }
}

/// A group's overwrites and the producers of its anomalous inputs (`groups[].addresses`);
/// nothing for documents older than schema version 2.
fn addresses(g: &ScanGroup) -> Markup {
    use crate::scan::address::{AddressStatus, Held};
    let Some(a) = &g.addresses else {
        return html! {};
    };
    if g.anomalous_tensors == 0 {
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

/// One unreadable file (or part of one), as the errors list shows it.
struct ErrorLine<'a> {
    /// `golden` / `target` (dump-compare).
    side: Option<String>,
    problem: &'a FileProblem,
}

fn error_list<'a>(errors: impl ExactSizeIterator<Item = ErrorLine<'a>>) -> Markup {
    let n = errors.len();
    html! {
        @if n > 0 {
            h3 { "Errors (" (n) ")" }
            ul.errors {
                @for e in errors.take(MAX_ROWS) {
                    li { @if let Some(side) = &e.side { (side) ": " }
                        code { (e.problem.path) } ": " (e.problem.message)
                        @if let Some(o) = e.problem.offset { " (offset " (o) ")" } }
                }
            }
        }
    }
}

/// log10 of a positive finite magnitude.
fn log_mag(v: &Option<f64>) -> Option<f64> {
    v.filter(|m| *m > 0.0 && m.is_finite()).map(f64::log10)
}

fn scan_plot(g: &ScanGroup, gi: usize, anomalies: &[ScanAnomaly], index: usize) -> Markup {
    let Some(mags) = &g.magnitudes else {
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
    let mine: Vec<&ScanAnomaly> = anomalies.iter().filter(|a| a.group == gi).collect();
    let kind_marks = |kind: Kind, name: &str, color, shape| Marks {
        name: name.into(),
        color,
        shape,
        points: plot::thin(
            mine.iter()
                .filter(|a| a.kind == kind)
                .map(|a| (a.order as f64, at(a.order))),
            x_max,
        ),
    };
    let mut rules = Vec::new();
    for (label, a, color) in [
        ("first anomaly", &g.first_anomaly, RED),
        ("birth", &g.first_born, PURPLE),
    ] {
        if let Some(a) = a {
            rules.push(Rule {
                x: a.order as f64,
                label: format!("{label}: {}", a.tensor.op_name),
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
            kind_marks(Kind::Nan, "NaN", RED, Shape::Circle),
            kind_marks(Kind::Inf, "Inf", ORANGE, Shape::Triangle),
            kind_marks(Kind::Overflow, "overflow", PURPLE, Shape::Cross),
        ]
        .into_iter()
        .filter(|m| !m.points.is_empty())
        .collect(),
        rules,
        thresholds: vec![],
    };
    figure(&chart, &format!("scan-plot plot-{index}-{gi}"))
}

/// `tensor` of a pair: `output 0`.
fn pair_tensor(p: &Pair) -> String {
    format!("{} {}", p.io, p.index)
}

/// Where a compared group lies: `rank 0 · device 1 · model m · step 3`.
fn side_location(s: &GroupSide) -> String {
    location(&[
        ("rank", s.rank.map(|v| v.to_string())),
        ("device", s.device.map(|v| v.to_string())),
        ("model", s.model.clone()),
        ("step", s.step.map(|v| v.to_string())),
    ])
}

/// A metric as text: six significant digits, a dash when undefined.
fn metric_text(m: Option<&Metrics>, f: impl Fn(&Metrics) -> Option<f64>) -> String {
    or_dash(m.and_then(f).map(short))
}

/// `npgx.dump-compare`, read through its typed view ([`CompareDocument`]): a document that
/// does not read as one says so instead of rendering blank fields.
pub(super) fn compare(input: &Input, index: usize) -> Section {
    let Typed::Compare(doc) = &input.typed else {
        return unreadable(input, "Dump compare");
    };
    let r = &*doc.report;
    let (golden, target) = (&r.golden, &r.target);
    let s = &r.summary;
    let th = &r.thresholds;
    let mut summary: Vec<Row> = r
        .groups
        .iter()
        .filter_map(|g| Some((g, g.first_divergence.as_ref()?)))
        .take(MAX_PLOTS)
        .map(|(g, fd)| {
            let m = fd.metrics.as_ref();
            let mut first = match &fd.error {
                Some(e) => format!("{} of {}: {e}", pair_tensor(fd), fd.op_name),
                None => format!(
                    "{} of {}: cosine {}, max rel {}",
                    pair_tensor(fd),
                    fd.op_name,
                    metric_text(m, |m| m.cosine),
                    metric_text(m, |m| m.max_rel)
                ),
            };
            let mut next = Vec::new();
            if let Some(origin) = &g.origin {
                first.push_str(&format!(
                    "; origin {} ({} evidence)",
                    origin.pair.op_name,
                    enum_name(&origin.evidence)
                ));
                if let Some(fx) = &origin.pair.fx {
                    first.push_str(&format!("; from {}", fx.summary()));
                }
                if origin.pair.op_type.is_some() {
                    next.push(format!(
                        "npgx repro --path accuracy --op {} --dump {} -o repro",
                        npgx_parsers::shell::word(&origin.pair.op_name),
                        npgx_parsers::shell::word(&origin.pair.target_file)
                    ));
                }
            }
            Row {
                what: format!("dump-compare {golden} vs {target}"),
                status: Status::Fail,
                first,
                at: format!("{} · order {}", side_location(&g.target), fd.order),
                next,
            }
        })
        .collect();
    if summary.is_empty() {
        summary.push(Row {
            what: format!("dump-compare {golden} vs {target}"),
            status: if s.pairs == 0 {
                Status::Info
            } else {
                Status::Ok
            },
            first: format!("all {} pairs pass", s.pairs),
            at: "—".into(),
            next: vec![],
        });
    }
    let mut worst: Vec<&Pair> = Vec::new();
    for g in &r.groups {
        let w = &g.worst;
        for p in w
            .cosine
            .iter()
            .chain(&w.max_rel)
            .chain(&w.max_abs)
            .chain(&w.rmse)
        {
            let same = |q: &&Pair| {
                (q.group, q.order, q.io, q.index, &q.op_name)
                    == (p.group, p.order, p.io, p.index, &p.op_name)
            };
            if !worst.iter().any(same) {
                worst.push(p);
            }
        }
    }
    let rows: Vec<Value> = worst
        .iter()
        .map(|p| {
            let m = p.metrics.as_ref();
            json!([
                p.group,
                p.order,
                p.op_name,
                p.op_type,
                pair_tensor(p),
                p.target_dtype,
                m.and_then(|m| m.cosine),
                m.and_then(|m| m.max_rel),
                m.and_then(|m| m.max_abs),
                m.and_then(|m| m.rmse),
                m.map(|m| m.nan_inf_one_side),
                p.passed,
                p.error,
                p.target_file
            ])
        })
        .collect();
    let errors = r.errors.iter().map(|e| ErrorLine {
        side: Some(enum_name(&e.side)),
        problem: &e.problem,
    });
    let body = html! {
        p { (s.pairs) " pairs, " strong { (s.failed) " failed" } ", "
            (s.unmatched_golden) " golden and " (s.unmatched_target) " target tensors unmatched, "
            (s.errors) " errors. Thresholds: cosine ≥ " (short(th.cosine)) ", max relative error < " (short(th.max_rel))
            @for (d, t) in &th.per_dtype { "; " (d) ": " (short(t.cosine)) ", " (short(t.max_rel)) } "." }
        p.muted { "golden " code { (golden) } " · target " code { (target) } }
        @for (gi, g) in r.groups.iter().enumerate().take(MAX_PLOTS) {
            h3 { "Group " (gi) ": " (side_location(&g.target)) }
            p.muted { "paired by " (g.paired_by) ", " (g.pairs) " pairs, " (g.failed) " failed" }
            (compare_plots(g, gi, &r.pairs, th, index))
            ul {
                @for (label, p, evidence) in [("first divergence", g.first_divergence.as_ref(), None),
                        ("origin", g.origin.as_ref().map(|o| &o.pair), g.origin.as_ref().map(|o| o.evidence))] {
                    @if let Some(p) = p {
                        li { strong { (label) } ": order " (p.order) " " code { (p.op_name) } " " (pair_tensor(p))
                            ", cosine " (metric_text(p.metrics.as_ref(), |m| m.cosine)) ", max rel " (metric_text(p.metrics.as_ref(), |m| m.max_rel))
                            @if let Some(e) = evidence { " (evidence: " (enum_name(&e)) ")" }
                            @if let Some(fx) = &p.fx { br; "from " code { (fx.summary()) } } }
                    }
                }
            }
        }
        h3 { "Worst pairs" }
        (data_table(&format!("worst-{index}"),
            &["group", "order", "op", "type", "tensor", "dtype", "cosine", "max rel", "max abs", "rmse", "NaN/Inf one side", "passed", "error", "target file"],
            &rows, None))
        (error_list(errors))
        (other_fields(&input.doc, &["schema", "schema_version", "golden", "target", "thresholds", "summary", "groups", "pairs", "unmatched", "errors"]))
    };
    Section {
        title: "Dump compare".into(),
        summary,
        body,
    }
}

fn compare_plots(
    g: &GroupReport,
    gi: usize,
    pairs: &[Pair],
    th: &Thresholds,
    index: usize,
) -> Markup {
    let mine: Vec<&Pair> = pairs.iter().filter(|p| p.group == gi).collect();
    let x_max = mine.iter().map(|p| p.order).max().unwrap_or(0) as f64;
    let metric = |p: &Pair, key: fn(&Metrics) -> Option<f64>, log: bool| -> Option<f64> {
        let v = key(p.metrics.as_ref()?)?;
        if log {
            (v > 0.0 && v.is_finite()).then(|| v.log10())
        } else {
            v.is_finite().then_some(v)
        }
    };
    let mut charts = Vec::new();
    let cosine: fn(&Metrics) -> Option<f64> = |m| m.cosine;
    let max_rel: fn(&Metrics) -> Option<f64> = |m| m.max_rel;
    for (key, get, label, log, limit) in [
        ("cosine", cosine, "cosine similarity", false, th.cosine),
        (
            "max_rel",
            max_rel,
            "max relative error (log scale)",
            true,
            th.max_rel,
        ),
    ] {
        let pts: Vec<(f64, f64)> = mine
            .iter()
            .filter_map(|p| Some((p.order as f64, metric(p, get, log)?)))
            .collect();
        let limit = if log {
            (limit > 0.0).then(|| limit.log10())
        } else {
            Some(limit)
        };
        let (y0, y1) = span(pts.iter().map(|p| p.1).chain(limit));
        let failed = plot::thin(
            mine.iter()
                .filter(|p| !p.passed)
                .filter_map(|p| Some((p.order as f64, metric(p, get, log)?))),
            x_max,
        );
        let mut rules = Vec::new();
        for (name, p, color) in [
            ("first divergence", g.first_divergence.as_ref(), RED),
            ("origin", g.origin.as_ref().map(|o| &o.pair), PURPLE),
        ] {
            if let Some(p) = p {
                rules.push(Rule {
                    x: p.order as f64,
                    label: format!("{name}: {}", p.op_name),
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
