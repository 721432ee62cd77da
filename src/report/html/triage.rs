//! The Triage section: the five-step ladder, the route and its evidence, the first causal error
//! in its log context, versions, what is missing and the hand-off. Each document is read
//! through the engine's own record ([`TriageRun`], [`TriageAnalysis`], [`ClassifyDocument`]).

use maud::html;
use serde_json::Value;

use super::{
    excerpt, file_link, or_dash, other_fields, txt, unreadable, what_to_do, Row, Section, Status,
};
use crate::incident::{Input, Typed};
use crate::report::enum_name;
use crate::triage::analyze::TriageAnalysis;
use crate::triage::route::Route;
use crate::triage::runner::StepRun;

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
    let Typed::TriageRun(doc) = &input.typed else {
        return unreadable(input, "Triage");
    };
    let mut section = analyze_with(input, &doc.analysis, &input.doc["analysis"], &doc.run.steps);
    let (bisect, rows) = super::nodes::bisect(doc.bisect.as_ref());
    let body = section.body;
    section.body = html! { (body) (bisect) };
    section.summary.extend(rows);
    section
}

/// `npgx.triage-analyze` (also a triage tree given to `npgx report`).
pub(super) fn analyze(input: &Input) -> Section {
    match &input.typed {
        Typed::TriageAnalysis(a) => analyze_with(input, a, &input.doc, &[]),
        _ => unreadable(input, "Triage"),
    }
}

/// The commands to run next, from the analysis.
fn next_commands(a: &TriageAnalysis) -> Vec<String> {
    let mut next: Vec<String> = a
        .dump_comparison
        .iter()
        .flat_map(|d| d.next.iter().cloned())
        .collect();
    let failed = a.first_failure.as_ref().map(|f| f.step);
    for s in &a.steps {
        if Some(s.step) == failed && !s.plog_files.is_empty() {
            let dir = format!(
                "{}/ascend_plog",
                or_dash(s.dir.as_ref().map(|d| d.display()))
            );
            next.push(format!("npgx plog {dir}"));
            if a.route == Route::RuntimeError {
                next.push(format!("npgx aicore {dir}"));
            }
        }
    }
    next.extend(load_skills(a.route, a.sub_skill.as_deref()));
    next
}

/// The skills to load next: npgx's own for the route, then the CANNBot sub-skill it names.
fn load_skills(route: Route, sub_skill: Option<&str>) -> Vec<String> {
    route
        .skill()
        .map(|own| format!("load skill {own}"))
        .into_iter()
        .chain(sub_skill.map(|s| format!("or CANNBot's {s}")))
        .collect()
}

/// The analysis section; `raw` is the same analysis as JSON, for the fields this npgx does not
/// know (a newer npgx's).
fn analyze_with(input: &Input, a: &TriageAnalysis, raw: &Value, run_steps: &[StepRun]) -> Section {
    let root = a.root.display().to_string();
    let ff = a.first_failure.as_ref();
    let ev = a.evidence.as_ref();
    let fce = ev.and_then(|e| e.first_causal_error.as_ref());
    let file = ev.map(|e| e.file.display().to_string()).unwrap_or_default();
    let evidence_line = ev.and_then(|e| e.evidence_line);
    let line = fce.map(|f| f.line).or(evidence_line);
    let message = or_dash(fce.map(|f| &f.message));
    let first = match (ff, fce) {
        (Some(ff), Some(_)) => format!(
            "{} failed (exit {}): {message}",
            ff.step.name(),
            ff.exit_code,
        ),
        (Some(ff), None) => format!(
            "{} failed (exit {}); no causal error found in its log",
            ff.step.name(),
            ff.exit_code
        ),
        (None, _) => "no step failed".into(),
    };
    let at = match line {
        Some(l) if !file.is_empty() => format!("{file}:{l}"),
        _ => "—".into(),
    };
    let route = format!("route {} (rule {})", a.route.as_str(), a.rule);
    let summary = vec![Row {
        what: format!("triage {root}"),
        status: if ff.is_some() {
            Status::Fail
        } else {
            Status::Ok
        },
        first: format!("{first} — {route}"),
        at,
        next: next_commands(a),
    }];
    let evidence_lines: Vec<u64> = fce.map(|f| f.evidence.lines.clone()).unwrap_or_default();
    let timing = |step| run_steps.iter().find(|s| s.step == step);
    let versions = serde_json::to_value(&a.versions).unwrap_or_default();
    let body = html! {
        p { "Tree " code { (root) } " — " @if a.complete { "complete" } @else { span.bad { "incomplete" } } }
        h3 { "Ladder" }
        table.ladder {
            thead { tr { th { "#" } th { "step" } th { "status" } th { "time" } th { "exit code" } th { "log" } } }
            tbody {
                @for s in &a.steps {
                    @let name = s.step.name();
                    @let r = timing(s.step);
                    @let status = r.map_or_else(|| enum_name(&s.status), |r| r.end.status().into());
                    @let exit = r.and_then(|r| r.end.failed_code())
                        .or_else(|| ff.filter(|f| f.step == s.step).map(|f| f.exit_code));
                    tr data-step=(name) {
                        td { (s.number) }
                        td { code { (name) } }
                        td class={ "status-" (status) } { (status) }
                        td.num { @if let Some(r) = r { (format!("{:.1} s", r.seconds)) } @else { "—" } }
                        td.num { (or_dash(exit)) }
                        td { @match &s.log {
                            Some(l) => { (file_link(&l.path.display().to_string())) " (" (l.lines) " lines)" }
                            None => "—",
                        } }
                    }
                }
            }
        }
        @if let Some(reason) = ff.and_then(|f| f.reason.as_ref()) { p { "Reason: " (reason) } }
        h3 { "Route" }
        table {
            tr { th { "route" } td.route { (a.route.as_str()) } }
            tr { th { "sub-skill" } td { (or_dash(a.sub_skill.as_ref())) } }
            tr { th { "rule" } td { code { (a.rule) } } }
            tr { th { "matched" } td { code { (or_dash(a.matched.as_ref())) } @if let Some(l) = ev.and_then(|e| e.matched_line) { " on line " (l) } } }
            tr { th { "evidence rule" } td { code { (or_dash(fce.map(|f| &f.evidence.rule))) } " lines " (evidence_lines.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")) } }
        }
        h3 { "First causal error" }
        @if fce.is_none() && evidence_line.is_none() {
            p.muted { "No causal error was found." }
        } @else {
            p.causal-message { strong { (message) } }
            p.muted { (or_dash(fce.map(|f| enum_name(&f.shape)))) ", tier " (or_dash(fce.map(|f| enum_name(&f.tier))))
                ", rank " (or_dash(fce.map(|f| f.rank.name()))) " — "
                code { (file) } ":" (line.map(|l| l.to_string()).unwrap_or_default()) }
            @if let Some(l) = line { (excerpt(input, &file, l, &evidence_lines)) }
            @if let Some(e) = ev { (what_to_do(&e.remedy)) }
        }
        @for n in &a.notes { p.note { (n) } }
        h3 { "Versions" }
        table {
            @if let Some(m) = versions.as_object() {
                @for (k, v) in m { tr { th { (k) } td { (txt(v)) } } }
            }
        }
        @if !a.missing.is_empty() {
            h3 { "Missing" }
            ul { @for m in &a.missing { li { (m) } } }
        }
        @if !a.problems.is_empty() || !a.warnings.is_empty() {
            h3 { "Problems and warnings" }
            ul {
                @for m in &a.problems { li.bad { (m) } }
                @for m in &a.warnings { li { (m) } }
            }
        }
        h3 { "Hand-off" }
        ul.handoff {
            @for c in next_commands(a) { li { code { (c) } } }
            @for p in &a.handoff_paths { li { "look at " (file_link(&p.display().to_string())) } }
        }
        @if a.dump_comparison.is_some() || a.comparison.is_some() {
            details { summary { "Output and dump comparisons" }
                pre { (serde_json::to_string_pretty(&serde_json::json!({
                    "comparison": a.comparison, "dump_comparison": a.dump_comparison})).unwrap_or_default()) } }
        }
        (other_fields(raw, KNOWN))
    };
    Section {
        title: "Triage".into(),
        summary,
        body,
    }
}

/// `npgx.triage-classify`: per file, the first causal error in context and its route.
pub(super) fn classify(input: &Input) -> Section {
    let Typed::Classify(doc) = &input.typed else {
        return unreadable(input, "Triage: classified logs");
    };
    let summary = doc
        .items
        .iter()
        .map(|c| {
            let fce = c.first_causal_error.as_ref();
            let file = c.file.display();
            Row {
                what: format!("classify {file}"),
                status: if fce.is_some() || c.route != Route::Undetermined {
                    Status::Fail
                } else {
                    Status::Ok
                },
                first: format!(
                    "{} — route {} (rule {})",
                    fce.map_or("no causal error", |f| &f.message),
                    c.route.as_str(),
                    c.rule
                ),
                at: fce.map_or_else(|| "—".into(), |f| format!("{file}:{}", f.line)),
                next: load_skills(c.route, c.sub_skill.as_deref()),
            }
        })
        .collect();
    let body = html! {
        @for c in doc.items.iter() {
            @let fce = c.first_causal_error.as_ref();
            @let file = c.file.display().to_string();
            h3 { code { (file) } }
            p { "Route " strong { (c.route.as_str()) } ", rule " code { (c.rule) } ", matched " code { (or_dash(c.matched.as_ref())) } }
            @if let Some(l) = fce.map(|f| f.line).or(c.evidence_line) {
                p { strong { (or_dash(fce.map(|f| &f.message))) } }
                @let ev: Vec<u64> = fce.map(|f| f.evidence.lines.clone()).unwrap_or_default();
                (excerpt(input, &file, l, &ev))
            }
            (what_to_do(&c.remedy))
        }
        @for e in doc.errors.iter() { p.bad { (e.file.display()) ": " (e.message) } }
    };
    Section {
        title: "Triage: classified logs".into(),
        summary,
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::triage::classify::{classify_found, FileError};
    use crate::triage::runner::StepEnd;

    /// An `npgx.triage-classify` document as `triage classify --format json` writes it.
    fn classify_input() -> Input {
        crate::incident::from_document("classify.json".into(), classify_doc(), None).unwrap()
    }

    fn classify_doc() -> serde_json::Value {
        let text = "start\ntorch._inductor.exc.InductorError: the lowering is gone\n";
        let err = npgx_parsers::causal::first_causal_error(text.as_bytes());
        let item = classify_found(std::path::Path::new("run.log"), err, text);
        let errors = [FileError {
            file: "gone.log".into(),
            message: "cannot open".into(),
        }];
        let json = crate::report::triage::classify_json(&[item], &errors, &[]).unwrap();
        serde_json::from_str(&json).unwrap()
    }

    #[test]
    fn the_classify_section_reads_what_the_writer_wrote() {
        let s = classify(&classify_input());
        assert_eq!(s.summary.len(), 1);
        assert_eq!(
            s.summary[0].first,
            "torch._inductor.exc.InductorError: the lowering is gone — route compile-error (rule shape.exception-class)"
        );
        assert_eq!(s.summary[0].at, "run.log:2");
        let body = s.body.into_string();
        assert!(body.contains("gone.log: cannot open"), "{body}");
        // The classification's remedy[] is its "What to do" card, each item with its source.
        assert!(body.contains("What to do"), "{body}");
        assert!(body.contains("[CB-SUB (compile-error)]"), "{body}");
    }

    #[test]
    fn a_renamed_classify_field_is_an_error_not_a_blank_section() {
        let mut doc = classify_doc();
        let item = doc["items"][0].as_object_mut().unwrap();
        let route = item.remove("route").unwrap();
        item.insert("routing".into(), route);
        let input = crate::incident::from_document("classify.json".into(), doc, None).unwrap();
        let s = classify(&input);
        assert_eq!(s.summary.len(), 1);
        assert!(s.summary[0].status == Status::Fail);
        assert!(
            s.summary[0]
                .first
                .starts_with("does not read as npgx.triage-classify: missing field `route`"),
            "{}",
            s.summary[0].first
        );
    }

    #[test]
    fn a_step_ends_status_is_its_json_tag() {
        for end in [
            StepEnd::Passed,
            StepEnd::Failed { exit_code: 1 },
            StepEnd::TimedOut {
                exit_code: 124,
                after_secs: 9,
            },
            StepEnd::Interrupted { exit_code: 130 },
        ] {
            let v = serde_json::to_value(end).unwrap();
            assert_eq!(v["status"], end.status());
            assert_eq!(v["exit_code"].as_i64(), end.failed_code().map(i64::from));
        }
    }
}
