//! The HTML incident report (`npgx report`, `--html FILE`): one self-contained page — CSS,
//! script and SVG plots inline, no network request — rendered from npgx's own JSON documents
//! ([`crate::incident::Input`]).
//!
//! Templates are written with **maud**: the markup is Rust code checked at compile time, every
//! interpolated value is HTML-escaped unless wrapped in `PreEscaped`, and there are no template
//! files to keep in step with the code (askama would add a template directory and its own
//! syntax for the same escaping). Plots come from plotters' SVG backend ([`plot`]); tables are
//! sorted, filtered and paged by a small inline script over rows embedded as JSON.
//!
//! Every section renders its document's typed view, read once when the input was loaded
//! ([`crate::incident::Typed`]: the type the JSON writer uses — the engine's records
//! [`crate::triage::TriageRun`], [`crate::triage::analyze::TriageAnalysis`],
//! [`crate::triage::classify::ClassifyDocument`], [`crate::plog::summary::PlogSummary`],
//! [`crate::plog::aicore::AicoreDocument`], [`crate::compare::records::CompareDocument`] — or, for
//! the streamed dump-scan document, its read side [`crate::scan::document::ScanDocument`]). Unknown
//! fields are ignored (docs/json.md; the top-level ones are shown raw by [`other_fields`]); an
//! optional field that is absent shows as a dash; a required field that is missing or of another
//! type makes the section say the document "does not read as" its schema ([`unreadable`]) instead
//! of rendering blank values.

mod dumps;
mod logs;
mod nodes;
pub mod plot;
mod triage;

use maud::{html, Markup, PreEscaped, DOCTYPE};
use serde_json::Value;

use crate::incident::{Input, Typed, CONTEXT};

const CSS: &str = include_str!("page.css");
const JS: &str = include_str!("page.js");

/// The page's Content-Security-Policy: nothing may be fetched; only inline style and script.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'";

/// How a summary row reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Status {
    Fail,
    Ok,
    Info,
}

impl Status {
    fn class(self) -> &'static str {
        match self {
            Status::Fail => "status-fail",
            Status::Ok => "status-ok",
            Status::Info => "status-info",
        }
    }
    fn word(self) -> &'static str {
        match self {
            Status::Fail => "failed",
            Status::Ok => "clean",
            Status::Info => "—",
        }
    }
}

/// One line of the summary at the top: what failed first, where, and what to run next.
struct Row {
    what: String,
    status: Status,
    first: String,
    at: String,
    next: Vec<String>,
}

/// A rendered section and its summary rows.
struct Section {
    title: String,
    summary: Vec<Row>,
    body: Markup,
}

/// Renders the page for these inputs, in order.
pub fn render(inputs: &[Input]) -> String {
    // The page shows only what the documents say (not where they were read from), so a saved
    // document renders to the same page as `--html`.
    let sections: Vec<(String, &Input, Section)> = inputs
        .iter()
        .enumerate()
        .map(|(i, input)| (format!("s{i}"), input, section(input, i)))
        .collect();
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta http-equiv="Content-Security-Policy" content=(CSP);
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "npgx report" }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "npgx incident report" }
                p.muted { "Written by npgx " (env!("CARGO_PKG_VERSION")) " from "
                    (inputs.len()) " input(s). Everything on this page is inline; it works offline." }
                section #summary {
                    h2 { "Summary" }
                    table {
                        thead { tr { th { "input" } th { "status" } th { "what failed first" } th { "where" } th { "next" } } }
                        tbody {
                            @for (id, _, s) in &sections {
                                @for r in &s.summary {
                                    tr {
                                        td { a href={ "#" (id) } { (r.what) } }
                                        td class=(r.status.class()) { (r.status.word()) }
                                        td.first { (r.first) }
                                        td.where { (r.at) }
                                        td.next { @for n in &r.next { code { (n) } } }
                                    }
                                }
                            }
                        }
                    }
                }
                @for (id, input, s) in &sections {
                    section.input id=(id) {
                        h2 { (s.title) }
                        p.source { (input.schema) " v" (txt(&input.doc["schema_version"])) }
                        (s.body)
                    }
                }
                script { (PreEscaped(JS)) }
            }
        }
    };
    page.into_string()
}

/// What `npgx report` prints once the page is written, as a line.
pub fn written_text(output: &std::path::Path, bytes: usize, inputs: &[Input]) -> String {
    format!(
        "npgx report: wrote {} ({bytes} bytes, {} sections)\n",
        output.display(),
        inputs.len()
    )
}

/// What `npgx report --format json` prints once the page is written: the `npgx.report`
/// document (the page, its size, the inputs with their schemas).
pub fn written_json(
    output: &std::path::Path,
    bytes: usize,
    inputs: &[Input],
) -> serde_json::Result<String> {
    let doc = crate::incident::Written::of(output, bytes, inputs);
    serde_json::to_string_pretty(&crate::report::document(
        crate::incident::REPORT_SCHEMA_NAME,
        crate::incident::REPORT_SCHEMA_VERSION,
        &doc,
    )?)
}

fn section(input: &Input, index: usize) -> Section {
    use crate::{compare, plog, scan, triage as engine};
    match input.name() {
        engine::RUN_SCHEMA_NAME => triage::run(input),
        engine::analyze::SCHEMA_NAME => triage::analyze(input),
        engine::classify::SCHEMA_NAME => triage::classify(input),
        scan::SCHEMA_NAME => dumps::scan(input, index),
        compare::SCHEMA_NAME => dumps::compare(input, index),
        plog::summary::SCHEMA_NAME => logs::plog(input, index),
        plog::aicore::SCHEMA_NAME => logs::aicore(input),
        _ => Section {
            title: input.schema.clone(),
            summary: vec![],
            body: html! { pre { (serde_json::to_string_pretty(&input.doc).unwrap_or_default()) } },
        },
    }
}

/// The section of a document that passed the envelope check but does not read as its typed
/// view (a field renamed or of another type): the error, never a page of blank fields.
fn unreadable(input: &Input, title: &str) -> Section {
    let e = match &input.typed {
        Typed::Unreadable(e) => e.as_str(),
        _ => "another document kind",
    };
    let first = format!("does not read as {}: {e}", input.schema);
    Section {
        title: title.into(),
        summary: vec![Row {
            what: input.source.clone(),
            status: Status::Fail,
            first: first.clone(),
            at: "—".into(),
            next: vec![],
        }],
        body: html! { p.status-fail { (input.source) ": " (first) } },
    }
}

/// A JSON scalar as text: strings as they are, null as a dash.
fn txt(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        Value::Number(n) => match n.as_f64() {
            Some(f) if !n.is_i64() && !n.is_u64() => short(f),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// The "What to do" card of a first causal error: each remedy with its source (and the quoted
/// report line), then the commands that check it.
pub(super) fn what_to_do(remedy: &[npgx_parsers::causal::Remedy]) -> maud::Markup {
    maud::html! {
        @if !remedy.is_empty() {
            div.card.remedy {
                h4 { "What to do" }
                ul {
                    @for r in remedy {
                        li { (r.lead()) (r.action) " " span.muted { "[" (r.source) @if let Some(l) = r.line { ", line " (l) } "]" }
                            @for c in &r.check { br; code { (c) } } }
                    }
                }
            }
        }
    }
}

/// An optional value as text, a dash when absent (as [`txt`] shows a JSON null).
fn or_dash(v: Option<impl std::fmt::Display>) -> String {
    v.map_or_else(|| "—".into(), |v| v.to_string())
}

/// A float with six significant digits.
fn short(f: f64) -> String {
    if f == 0.0 || (1e-4..1e6).contains(&f.abs()) {
        let s = format!("{f:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    } else {
        format!("{f:.5e}")
    }
}

/// `rank 0 · device 1 · model m · step 3` from whichever location fields are set.
fn location(parts: &[(&str, Option<String>)]) -> String {
    let parts: Vec<String> = parts
        .iter()
        .filter_map(|(k, v)| Some(format!("{k} {}", v.as_ref()?)))
        .collect();
    if parts.is_empty() {
        "the only group".into()
    } else {
        parts.join(" · ")
    }
}

/// A link to a local file (logs next to the report); the text is the path.
fn file_link(path: &str) -> Markup {
    let href = if path.starts_with('/') {
        format!("file://{path}")
    } else {
        path.to_string()
    };
    html! { a href=(href) { code { (path) } } }
}

/// ±[`CONTEXT`] lines of `file` around `line`, numbered, `line` highlighted as the causal line
/// and `evidence` lines marked; a note when the log could not be read.
fn excerpt(input: &Input, file: &str, line: u64, evidence: &[u64]) -> Markup {
    let Some(lines) = input.lines.get(file).filter(|l| l.contains_key(&line)) else {
        return html! { p.muted { "The log " code { (file) } " is not readable from here: no context lines." } };
    };
    let lo = line.saturating_sub(CONTEXT);
    let hi = line.saturating_add(CONTEXT);
    html! {
        div.log {
            @for (n, text) in lines.range(lo..=hi) {
                @let class = if *n == line { "causal" } else if evidence.contains(n) { "evidence" } else { "" };
                div class=(class) data-line=(n) { span.ln { (n) } (text) }
            }
        }
    }
}

/// A sortable, filterable, paged table whose rows (JSON arrays, one value per column) are
/// embedded in the page and drawn by the inline script.
fn data_table(id: &str, heads: &[&str], rows: &[Value], note: Option<String>) -> Markup {
    html! {
        div.datatable id=(id) {
            div.controls {
                input type="search" placeholder="filter rows" aria-label="filter rows";
                button.prev type="button" { "◀" }
                button.next type="button" { "▶" }
                span.info.muted {}
            }
            @if let Some(n) = note { p.muted { (n) } }
            table { thead { tr { @for h in heads { th { (h) } } } } tbody {} }
            script.rows type="application/json" { (PreEscaped(script_json(rows))) }
        }
    }
}

/// JSON safe inside a `<script>` element: `<`, `>` and `&` written as `\u003c`… (they can only
/// occur inside JSON strings, where the escape means the same character).
fn script_json(rows: &[Value]) -> String {
    serde_json::to_string(rows)
        .unwrap_or_else(|_| "[]".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// An inline SVG plot, or a note when it could not be drawn.
fn figure(chart: &plot::Chart, class: &str) -> Markup {
    match plot::svg(chart) {
        Ok(svg) => html! { figure class={ "plot " (class) } { (PreEscaped(svg)) } },
        Err(e) => html! { p.bad { (e) } },
    }
}

/// Fields of an object that a section did not render, shown raw (newer npgx may add fields).
fn other_fields(v: &Value, known: &[&str]) -> Markup {
    let rest: serde_json::Map<String, Value> = v
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| !known.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    html! {
        @if !rest.is_empty() {
            details { summary { "Other fields" } pre { (serde_json::to_string_pretty(&rest).unwrap_or_default()) } }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn script_json_cannot_close_the_script_element() {
        let s = script_json(&[json!(["</script><script>alert(1)</script>", "a&b"])]);
        assert!(!s.contains("</"), "{s}");
        let back: Value = serde_json::from_str(&s).unwrap();
        assert_eq!(back[0][0], "</script><script>alert(1)</script>");
    }

    #[test]
    fn floats_are_short() {
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(65504.0), "65504");
        assert_eq!(short(1.5e-7), "1.50000e-7");
    }
}
