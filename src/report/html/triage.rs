//! The Triage section: the five-step ladder, the route and its evidence, the first causal error
//! in its log context, versions, what is missing and the hand-off.

use maud::html;
use serde_json::Value;

use super::{excerpt, file_link, list, other_fields, txt, Row, Section, Status};
use crate::incident::Input;

/// Fields of `npgx.triage-analyze` rendered below.
const KNOWN: &[&str] = &[
    "schema",
    "schema_version",
    "root",
    "complete",
    "problems",
    "warnings",
    "versions",
    "steps",
    "first_failure",
    "route",
    "sub_skill",
    "rule",
    "matched",
    "evidence",
    "notes",
    "handoff_paths",
    "missing",
    "comparison",
    "dump_comparison",
];

/// `npgx.triage-run`: the run's timings and exit codes joined to its analysis.
pub(super) fn run(input: &Input) -> Section {
    let mut section = analyze_with(
        input,
        &input.doc["analysis"],
        list(&input.doc["run"]["steps"]),
    );
    let (bisect, rows) = super::nodes::bisect(&input.doc["bisect"]);
    let body = section.body;
    section.body = html! { (body) (bisect) };
    section.summary.extend(rows);
    section
}

/// `npgx.triage-analyze` (also a triage tree given to `npgx report`).
pub(super) fn analyze(input: &Input, a: &Value) -> Section {
    analyze_with(input, a, Vec::new())
}

/// The commands to run next, from the analysis.
fn next_commands(a: &Value) -> Vec<String> {
    let mut next: Vec<String> = list(&a["dump_comparison"]["next"])
        .into_iter()
        .map(txt)
        .collect();
    let failed = a["first_failure"]["step"].as_str();
    for s in list(&a["steps"]) {
        if s["step"].as_str() == failed && !list(&s["plog_files"]).is_empty() {
            let dir = format!("{}/ascend_plog", txt(&s["dir"]));
            next.push(format!("npgx plog {dir}"));
            if a["route"] == "runtime-error" {
                next.push(format!("npgx aicore {dir}"));
            }
        }
    }
    if let Some(skill) = a["sub_skill"].as_str() {
        next.push(format!("load skill {skill}"));
    }
    next
}

fn analyze_with(input: &Input, a: &Value, run_steps: Vec<&Value>) -> Section {
    let root = txt(&a["root"]);
    let ff = &a["first_failure"];
    let ev = &a["evidence"];
    let fce = &ev["first_causal_error"];
    let file = ev["file"].as_str().unwrap_or("");
    let line = fce["line"].as_u64().or(ev["evidence_line"].as_u64());
    let failed = !ff.is_null();
    let first = match (failed, fce.is_null()) {
        (true, false) => format!(
            "{} failed (exit {}): {}",
            txt(&ff["step"]),
            txt(&ff["exit_code"]),
            txt(&fce["message"])
        ),
        (true, true) => format!(
            "{} failed (exit {}); no causal error found in its log",
            txt(&ff["step"]),
            txt(&ff["exit_code"])
        ),
        (false, _) => "no step failed".into(),
    };
    let at = match line {
        Some(l) if !file.is_empty() => format!("{file}:{l}"),
        _ => "—".into(),
    };
    let route = format!("route {} (rule {})", txt(&a["route"]), txt(&a["rule"]));
    let summary = vec![Row {
        what: format!("triage {root}"),
        status: if failed { Status::Fail } else { Status::Ok },
        first: format!("{first} — {route}"),
        at,
        next: next_commands(a),
    }];
    let evidence_lines: Vec<u64> = list(&fce["evidence"]["lines"])
        .into_iter()
        .filter_map(Value::as_u64)
        .collect();
    let timing = |step: &str| run_steps.iter().find(|s| s["step"] == step).copied();
    let body = html! {
        p { "Tree " code { (root) } " — " @if a["complete"] == true { "complete" } @else { span.bad { "incomplete" } } }
        h3 { "Ladder" }
        table.ladder {
            thead { tr { th { "#" } th { "step" } th { "status" } th { "time" } th { "exit code" } th { "log" } } }
            tbody {
                @for s in list(&a["steps"]) {
                    @let name = s["step"].as_str().unwrap_or("");
                    @let r = timing(name);
                    @let status = r.and_then(|r| r["end"]["status"].as_str()).or(s["status"].as_str()).unwrap_or("unknown");
                    @let exit = r.map(|r| &r["end"]["exit_code"]).filter(|v| !v.is_null())
                        .or_else(|| (ff["step"] == name).then_some(&ff["exit_code"]));
                    tr data-step=(name) {
                        td { (txt(&s["number"])) }
                        td { code { (name) } }
                        td class={ "status-" (status) } { (status) }
                        td.num { @if let Some(r) = r { (format!("{:.1} s", r["seconds"].as_f64().unwrap_or(0.0))) } @else { "—" } }
                        td.num { (exit.map(txt).unwrap_or_else(|| "—".into())) }
                        td { @match s["log"]["path"].as_str() {
                            Some(p) => { (file_link(p)) " (" (txt(&s["log"]["lines"])) " lines)" }
                            None => "—",
                        } }
                    }
                }
            }
        }
        @if !ff["reason"].is_null() { p { "Reason: " (txt(&ff["reason"])) } }
        h3 { "Route" }
        table {
            tr { th { "route" } td.route { (txt(&a["route"])) } }
            tr { th { "sub-skill" } td { (txt(&a["sub_skill"])) } }
            tr { th { "rule" } td { code { (txt(&a["rule"])) } } }
            tr { th { "matched" } td { code { (txt(&a["matched"])) } @if let Some(l) = ev["matched_line"].as_u64() { " on line " (l) } } }
            tr { th { "evidence rule" } td { code { (txt(&fce["evidence"]["rule"])) } " lines " (evidence_lines.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")) } }
        }
        h3 { "First causal error" }
        @if fce.is_null() && ev["evidence_line"].is_null() {
            p.muted { "No causal error was found." }
        } @else {
            p.causal-message { strong { (txt(&fce["message"])) } }
            p.muted { (txt(&fce["shape"])) ", tier " (txt(&fce["tier"])) ", rank " (txt(&fce["rank"])) " — "
                code { (file) } ":" (line.map(|l| l.to_string()).unwrap_or_default()) }
            @if let Some(l) = line { (excerpt(input, file, l, &evidence_lines)) }
        }
        @for n in list(&a["notes"]) { p.note { (txt(n)) } }
        h3 { "Versions" }
        table {
            @if let Some(m) = a["versions"].as_object() {
                @for (k, v) in m { tr { th { (k) } td { (txt(v)) } } }
            }
        }
        @if !list(&a["missing"]).is_empty() {
            h3 { "Missing" }
            ul { @for m in list(&a["missing"]) { li { (txt(m)) } } }
        }
        @if !list(&a["problems"]).is_empty() || !list(&a["warnings"]).is_empty() {
            h3 { "Problems and warnings" }
            ul {
                @for m in list(&a["problems"]) { li.bad { (txt(m)) } }
                @for m in list(&a["warnings"]) { li { (txt(m)) } }
            }
        }
        h3 { "Hand-off" }
        ul.handoff {
            @for c in next_commands(a) { li { code { (c) } } }
            @for p in list(&a["handoff_paths"]) { li { "look at " (file_link(&txt(p))) } }
        }
        @if !a["dump_comparison"].is_null() || !a["comparison"].is_null() {
            details { summary { "Output and dump comparisons" }
                pre { (serde_json::to_string_pretty(&serde_json::json!({
                    "comparison": a["comparison"], "dump_comparison": a["dump_comparison"]})).unwrap_or_default()) } }
        }
        (other_fields(a, KNOWN))
    };
    Section {
        title: "Triage".into(),
        summary,
        body,
    }
}

/// `npgx.triage-classify`: per file, the first causal error in context and its route.
pub(super) fn classify(input: &Input) -> Section {
    let items = list(&input.doc["items"]);
    let summary = items
        .iter()
        .map(|c| {
            let fce = &c["first_causal_error"];
            let found = !fce.is_null() || c["route"] != "undetermined";
            Row {
                what: format!("classify {}", txt(&c["file"])),
                status: if found { Status::Fail } else { Status::Ok },
                first: format!(
                    "{} — route {} (rule {})",
                    if fce.is_null() {
                        "no causal error".into()
                    } else {
                        txt(&fce["message"])
                    },
                    txt(&c["route"]),
                    txt(&c["rule"])
                ),
                at: fce["line"]
                    .as_u64()
                    .map(|l| format!("{}:{l}", txt(&c["file"])))
                    .unwrap_or_else(|| "—".into()),
                next: c["sub_skill"]
                    .as_str()
                    .map(|s| vec![format!("load skill {s}")])
                    .unwrap_or_default(),
            }
        })
        .collect();
    let body = html! {
        @for c in &items {
            @let fce = &c["first_causal_error"];
            @let file = c["file"].as_str().unwrap_or("");
            h3 { code { (file) } }
            p { "Route " strong { (txt(&c["route"])) } ", rule " code { (txt(&c["rule"])) } ", matched " code { (txt(&c["matched"])) } }
            @if let Some(l) = fce["line"].as_u64().or(c["evidence_line"].as_u64()) {
                p { strong { (txt(&fce["message"])) } }
                @let ev: Vec<u64> = list(&fce["evidence"]["lines"]).into_iter().filter_map(Value::as_u64).collect();
                (excerpt(input, file, l, &ev))
            }
        }
        @for e in list(&input.doc["errors"]) { p.bad { (txt(&e["file"])) ": " (txt(&e["message"])) } }
    };
    Section {
        title: "Triage: classified logs".into(),
        summary,
        body,
    }
}
