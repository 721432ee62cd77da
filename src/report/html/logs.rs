//! The Logs sections: `npgx.plog` (per process an ERROR/WARNING timeline, the first causal
//! error in context, CANN error reports with decoded codes) and `npgx.aicore` (one card per
//! AI Core error, each field with its evidence line), read through the engine's documents
//! ([`PlogSummary`], [`AicoreDocument`]).

use std::collections::BTreeMap;

use maud::{html, Markup};
use npgx_parsers::aicore::{AicoreError, Fact};
use npgx_parsers::cann_error::tables;
use plotters::style::RGBColor;

use super::plot::{Chart, Line};
use super::{excerpt, figure, or_dash, other_fields, unreadable, what_to_do, Row, Section, Status};
use crate::incident::{Input, Typed};
use crate::plog::summary::ProcessSummary;
use crate::report::enum_name;

const RED: RGBColor = RGBColor(200, 30, 30);
const ORANGE: RGBColor = RGBColor(230, 140, 0);
/// Timeline buckets per process.
const TIME_BUCKETS: i64 = 120;
/// At most this many processes, reports and cards are drawn.
const MAX_ITEMS: usize = 64;

/// What a code means, from the parsers' code tables: `EZ9999` → component and title,
/// `ACL 507035` / `retCode 0x31` → the runtime's text.
pub(super) fn decode(code: &str) -> Option<String> {
    if let Some(n) = code.strip_prefix("ACL ") {
        return tables::acl_code(n.trim().parse().ok()?).map(str::to_string);
    }
    if let Some(h) = code.strip_prefix("retCode ") {
        let v = u64::from_str_radix(h.trim().trim_start_matches("0x"), 16).ok()?;
        return tables::ts_ret_code(v).map(str::to_string);
    }
    let mut chars = code.chars();
    if chars.next() != Some('E') {
        return None;
    }
    let component = chars.next().and_then(tables::module_letter);
    let title = tables::code_title(code);
    let inner = npgx_parsers::cann_error::is_inner_code(code).then_some("inner error");
    let parts: Vec<&str> = [component, title, inner].into_iter().flatten().collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// ERROR and WARNING counts per bucket of a process's `timeline`.
fn timeline(p: &ProcessSummary, pid: &str, caption_index: usize) -> Markup {
    let points: Vec<(i64, u64, u64)> = p
        .timeline
        .iter()
        .filter_map(|t| Some((crate::plog::seconds(&t.time)?, t.error, t.warning)))
        .collect();
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return html! { p.muted { "No ERROR or WARNING records with a time (or no timeline in this document)." } };
    };
    let start = first.0;
    let width = ((last.0 - start) / TIME_BUCKETS + 1).max(1);
    let n = ((last.0 - start) / width + 1) as usize;
    let mut errors = vec![0u64; n];
    let mut warnings = vec![0u64; n];
    for (t, e, w) in &points {
        let b = usize::try_from((t - start) / width).unwrap_or(0).min(n - 1);
        errors[b] += e;
        warnings[b] += w;
    }
    let x = |b: usize| (b as i64 * width) as f64;
    let top = errors.iter().chain(&warnings).copied().max().unwrap_or(1) as f64;
    let chart = Chart {
        caption: format!(
            "pid {pid}: ERROR / WARNING records per {width} s from {}",
            or_dash(p.first_time)
        ),
        x_label: "seconds since the first ERROR/WARNING".into(),
        y_label: "records".into(),
        x_max: x(n - 1),
        y_range: (0.0, top * 1.1 + 1.0),
        log_y: false,
        lines: vec![
            Line {
                name: "ERROR".into(),
                color: RED,
                points: errors
                    .iter()
                    .enumerate()
                    .map(|(b, &c)| (x(b), c as f64))
                    .collect(),
            },
            Line {
                name: "WARNING".into(),
                color: ORANGE,
                points: warnings
                    .iter()
                    .enumerate()
                    .map(|(b, &c)| (x(b), c as f64))
                    .collect(),
            },
        ],
        marks: vec![],
        rules: vec![],
        thresholds: vec![],
    };
    figure(&chart, &format!("timeline plot-t{caption_index}"))
}

fn codes(m: &BTreeMap<String, u64>) -> Markup {
    html! {
        @if !m.is_empty() {
            table.codes {
                tr { th { "code" } th { "count" } th { "meaning" } }
                @for (c, n) in m { tr { td { code { (c) } } td.num { (n) } td { (decode(c).unwrap_or_else(|| "—".into())) } } }
            }
        }
    }
}

/// A code with its meaning, when the tables know it: `EZ9999 (…)`.
fn with_meaning(c: &str) -> String {
    match decode(c) {
        Some(d) => format!("{c} ({d})"),
        None => c.to_string(),
    }
}

/// `npgx.plog`, read through its typed view ([`PlogSummary`]): a document that does not read
/// as one says so instead of rendering blank fields.
pub(super) fn plog(input: &Input, index: usize) -> Section {
    let Typed::Plog(doc) = &input.typed else {
        return unreadable(input, "Logs: plog");
    };
    let fc = doc.first_causal.as_ref();
    let file = fc.map(|f| f.file.display().to_string()).unwrap_or_default();
    let errors: u64 = doc
        .processes
        .iter()
        .filter_map(|p| p.levels.get("ERROR"))
        .sum();
    let what = match doc.files.as_slice() {
        [f] => format!("plog {}", f.path.display()),
        files => format!("plog ({} files)", files.len()),
    };
    let summary = vec![Row {
        what,
        status: if fc.is_none() && errors == 0 {
            Status::Ok
        } else {
            Status::Fail
        },
        first: match fc {
            None => format!("no causal error ({errors} ERROR records)"),
            Some(fc) => fc.text.clone(),
        },
        at: fc.map_or_else(|| "—".into(), |fc| format!("{file}:{}", fc.line)),
        next: if fc.is_none() {
            vec![]
        } else {
            vec![
                format!("npgx aicore {file}"),
                format!("npgx triage classify {file}"),
            ]
        },
    }];
    let body = html! {
        p { (doc.records) " records in " (doc.files.len()) " files." }
        details { summary { "Files" }
            table { tr { th { "file" } th { "kind" } th { "lines" } th { "records" } }
                @for f in &doc.files { tr { td { code { (f.path.display()) } } td { (or_dash(f.kind.map(|k| enum_name(&k)))) } td.num { (f.lines) } td.num { (f.records) } } } }
        }
        h3 { "First causal error" }
        @match fc {
            None => { p.muted { "None found." } }
            Some(fc) => {
                p { strong { (fc.text) } }
                p.muted { (enum_name(&fc.shape)) ", tier " (enum_name(&fc.tier)) ", rank " (fc.rank.name())
                    ", rule " code { (fc.evidence.rule) } }
                (excerpt(input, &file, fc.line, &fc.evidence.lines))
                (what_to_do(&fc.remedy))
            }
        }
        @for (pi, p) in doc.processes.iter().enumerate().take(MAX_ITEMS) {
            @let pid = p.pid.to_string();
            h3 { "Process " (pid) " " code { (p.pname) } }
            p.muted { (p.records) " records from " (or_dash(p.first_time)) " to " (or_dash(p.last_time))
                "; levels: " @for (k, v) in &p.levels { (k) " " (v) " " }
                "; devices: " (p.device_ids.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")) }
            (timeline(p, &pid, index * 1000 + pi))
            (codes(&p.error_codes))
            @if let Some(pc) = p.first_causal.as_ref().filter(|pc| fc.map(|f| (&f.file, f.line)) != Some((&pc.file, pc.line))) {
                p { "First causal error of this process: " strong { (pc.text) } }
                (excerpt(input, &pc.file.display().to_string(), pc.line, &[]))
            }
        }
        @let reports = &doc.error_reports;
        @if !reports.is_empty() {
            h3 { "CANN error reports (" (reports.len()) ")" }
            @for fr in reports.iter().take(MAX_ITEMS) {
                @let r = &fr.report;
                div.card.report {
                    p { strong { code { (or_dash(r.code.as_ref())) } } " " (or_dash(r.title.as_ref()))
                        " — " (r.code.as_deref().and_then(decode).unwrap_or_else(|| "—".into())) }
                    p.muted { code { (fr.file.display()) } " lines " (r.line) "–" (r.end_line)
                        "; codes " (r.codes.iter().map(|c| with_meaning(c)).collect::<Vec<_>>().join(", ")) }
                    table {
                        @for (t, label) in [(&r.message, "message"), (&r.possible_cause, "possible cause"), (&r.solution, "solution")] {
                            @if let Some(t) = t { tr { th { (label) } td { (t.text) " " span.muted { "(line " (t.line) ")" } } } }
                        }
                    }
                    @if !r.traceback.is_empty() {
                        details { summary { "TraceBack" }
                            ul { @for t in &r.traceback { li { span.muted { (t.line) ": " } (t.text) } } } }
                    }
                }
            }
        }
        @let tn = &doc.torch_npu_errors;
        @if !tn.is_empty() {
            h3 { "torch_npu errors" }
            table { tr { th { "code" } th { "submodule" } th { "type" } th { "line" } th { "text" } }
                @for fe in tn.iter().take(MAX_ITEMS) {
                    @let e = &fe.error;
                    tr { td { code { (e.code) } } td { (e.submodule) }
                    td { (or_dash(e.error_type.as_ref())) } td { code { (fe.file.display()) } ":" (e.line) } td { (e.text) } } } }
        }
        @let warnings = &doc.warnings;
        @if !warnings.is_empty() {
            details { summary { "Reader warnings (" (warnings.len()) ")" }
                ul { @for w in warnings.iter().take(MAX_ITEMS) { li { code { (w.file.display()) } " " (or_dash(w.line)) ": " (w.message) } } } }
        }
        (other_fields(&input.doc, &["schema", "schema_version", "files", "records", "processes", "first_error", "first_causal", "error_reports", "torch_npu_errors", "warnings"]))
    };
    Section {
        title: "Logs: plog".into(),
        summary,
        body,
    }
}

/// A fact's value as text and its evidence line.
fn fact<T: std::fmt::Display>(f: &Option<Fact<T>>) -> Option<(String, u64)> {
    f.as_ref().map(|f| (f.value.to_string(), f.line))
}

/// The card fields: label, value and evidence line.
fn card_fields(e: &AicoreError) -> [(&'static str, Option<(String, u64)>); 14] {
    [
        ("device", fact(&e.device_id)),
        ("chip", fact(&e.chip_id)),
        ("stream", fact(&e.stream_id)),
        ("task", fact(&e.task_id)),
        ("kernel", fact(&e.kernel_name)),
        ("GE node", fact(&e.aic_info.node_name)),
        ("node type", fact(&e.aic_info.node_type)),
        ("op", fact(&e.op_name)),
        ("error type", fact(&e.err_type)),
        ("retCode", fact(&e.ret_code)),
        ("ACL code", fact(&e.acl_code)),
        ("block dim", fact(&e.block_dim)),
        ("tiling key", fact(&e.tiling_key)),
        (
            "kernel assert",
            e.asserts
                .first()
                .map(|a| (crate::report::aicore::kernel_assert_text(&a.value), a.line)),
        ),
    ]
}

/// `npgx.aicore`, read through its typed view ([`AicoreDocument`]): a document that does not
/// read as one says so instead of rendering blank fields.
pub(super) fn aicore(input: &Input) -> Section {
    let Typed::Aicore(doc) = &input.typed else {
        return unreadable(input, "Logs: AI Core errors");
    };
    let errors = &doc.errors[..];
    let value = |f: Option<(String, u64)>| f.map(|x| x.0).unwrap_or_else(|| "—".into());
    let summary: Vec<Row> = errors
        .iter()
        .take(MAX_ITEMS)
        .map(|fe| {
            let e = &fe.error;
            let file = fe.file.display().to_string();
            Row {
                what: format!("aicore {file}"),
                status: Status::Fail,
                first: format!(
                    "{} error: kernel {} (GE node {}) on device {}, stream {}, task {}",
                    enum_name(&e.kind),
                    value(fact(&e.kernel_name)),
                    value(fact(&e.aic_info.node_name)),
                    value(fact(&e.device_id)),
                    value(fact(&e.stream_id)),
                    value(fact(&e.task_id))
                ),
                at: format!("{file}:{}", e.first_line),
                next: vec![format!("npgx repro --from-aicore {file} -o repro")],
            }
        })
        .collect();
    let body = html! {
        @if errors.is_empty() { p.muted { "No AI Core error in these logs." } }
        (what_to_do(&doc.remedy))
        div.cards {
            @for fe in errors.iter().take(MAX_ITEMS) {
                @let e = &fe.error;
                @let file = fe.file.display().to_string();
                @let lines = input.lines.get(&file);
                div.card.aicore {
                    p { strong { (enum_name(&e.kind)) } " — " code { (file) } " lines " (e.first_line) "–" (e.last_line)
                        @if let Some(pid) = e.pid { ", pid " (pid) } }
                    table {
                        tr { th { "field" } th { "value" } th { "evidence" } }
                        @for (label, f) in card_fields(e) {
                            @if let Some((value, l)) = f {
                                tr { th { (label) } td { code { (value) } }
                                    td { span.muted { (l) ": " }
                                        span.mono { (lines.and_then(|m| m.get(&l)).map(String::as_str).unwrap_or("(log not readable)")) } } }
                            }
                        }
                    }
                    @if !e.decoded.is_empty() { p { "Decoded: " (e.decoded.join("; ")) } }
                    @for c in e.cores.iter().take(8) {
                        p.muted { "core " (value(fact(&c.core_id)))
                            ": error " (value(fact(&c.error_code)))
                            " " (c.error_bits.join(", ")) }
                    }
                }
            }
        }
    };
    Section {
        title: "Logs: AI Core errors".into(),
        summary,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_decode_from_the_parsers_tables() {
        assert_eq!(
            decode("ACL 507035").as_deref(),
            Some("vector core exception")
        );
        assert_eq!(
            decode("retCode 0x31").as_deref(),
            Some("vector core exception")
        );
        let ez = decode("EZ9999").unwrap();
        assert!(
            ez.contains("AclNN_Inner_Error") && ez.contains("inner error"),
            "{ez}"
        );
        assert_eq!(decode("inner 0x715005e"), None);
    }

    /// An `npgx.aicore` document as `npgx aicore --format json` writes it, of one error.
    fn aicore_input() -> Input {
        crate::incident::from_document("aicore.json".into(), aicore_doc(), None).unwrap()
    }

    /// An `npgx.aicore` document as `npgx aicore --format json` writes it.
    fn aicore_doc() -> serde_json::Value {
        let text = b"[ERROR] RUNTIME(9,p):2026-09-10-08:52:41.377.821 [stream.cc:1743]9 GetError:Stream Synchronize failed, stream_id=47, retCode=0x26, [aicore exception].\n\
[ERROR] RUNTIME(9,p):2026-09-10-08:52:41.377.875 [stream.cc:1746]9 GetError:[DFX_INFO]AI Core kernel execution failed, device_id=9, stream_id=47, report_stream_id=47, task_id=23064, flip_num=1564, fault kernel_name=MlaPrologV3_18fe_1836449, fault kernel info ext=none, program id=\n";
        let scan = crate::plog::AicoreScan {
            errors: npgx_parsers::aicore::scan_text(text)
                .into_iter()
                .map(|error| crate::plog::FileAicoreError {
                    file: "plog-9.log".into(),
                    error,
                })
                .collect(),
            files: vec![],
            warnings: vec![],
        };
        let mut json = Vec::new();
        crate::report::aicore::json(&mut json, &scan).unwrap();
        serde_json::from_slice(&json).unwrap()
    }

    #[test]
    fn the_aicore_section_reads_what_the_writer_wrote() {
        let s = aicore(&aicore_input());
        assert_eq!(s.summary.len(), 1);
        assert_eq!(
            s.summary[0].first,
            "aicore error: kernel MlaPrologV3_18fe_1836449 (GE node —) on device 9, stream 47, task 23064"
        );
        assert_eq!(s.summary[0].at, "plog-9.log:1");
        let body = s.body.into_string();
        assert!(body.contains("<code>0x26</code>"), "{body}");
    }

    #[test]
    fn a_renamed_aicore_field_is_an_error_not_a_blank_card() {
        let mut doc = aicore_doc();
        let e = &mut doc["errors"][0];
        let kind = e["kind"].take();
        e["error_kind"] = kind;
        e.as_object_mut().unwrap().remove("kind");
        let input = crate::incident::from_document("aicore.json".into(), doc, None).unwrap();
        let s = aicore(&input);
        assert_eq!(s.summary.len(), 1);
        assert!(s.summary[0].status == Status::Fail);
        assert!(
            s.summary[0]
                .first
                .starts_with("does not read as npgx.aicore: missing field `kind`"),
            "{}",
            s.summary[0].first
        );
    }
}
