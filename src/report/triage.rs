//! Renders triage records: the terminal summary, `--format json`, and `triage_report.md`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::path::Path;

use npgx_parsers::versions::Framework;

use super::bisect_rows::rel;
use crate::triage::analyze::{
    TriageAnalysis, SCHEMA_NAME as ANALYZE_SCHEMA_NAME, SCHEMA_VERSION as ANALYZE_SCHEMA_VERSION,
};
use crate::triage::bisect::{Bisection, Outcome};
use crate::triage::classify::{
    Classification, ClassifyDocument, FileError, SCHEMA_NAME as CLASSIFY_SCHEMA_NAME,
    SCHEMA_VERSION as CLASSIFY_SCHEMA_VERSION,
};
use crate::triage::ranks::{RankLog, RankView};
use crate::triage::scripts::{self, ScriptPlan};
use crate::triage::{TriageRun, RUN_SCHEMA_NAME, RUN_SCHEMA_VERSION};
use npgx_parsers::causal::Remedy;

/// The JSON document of `triage classify`: one item per file read, and the files that could not
/// be read.
pub fn classify_json(
    items: &[Classification],
    errors: &[FileError],
    ranks: &[RankView],
) -> serde_json::Result<String> {
    let body = ClassifyDocument {
        items: Cow::Borrowed(items),
        errors: Cow::Borrowed(errors),
        ranks: Cow::Borrowed(ranks),
    };
    serde_json::to_string_pretty(&super::Envelope::new(
        CLASSIFY_SCHEMA_NAME,
        CLASSIFY_SCHEMA_VERSION,
        &body,
    ))
}

/// The `npgx.triage-classify` document of one classification as a value (what `npgx mcp`'s
/// `triage_classify` returns).
pub fn classify_value(item: &Classification) -> serde_json::Result<serde_json::Value> {
    let body = ClassifyDocument {
        items: Cow::Borrowed(std::slice::from_ref(item)),
        errors: Cow::Borrowed(&[]),
        ranks: Cow::Borrowed(&[]),
    };
    serde_json::to_value(super::Envelope::new(
        CLASSIFY_SCHEMA_NAME,
        CLASSIFY_SCHEMA_VERSION,
        &body,
    ))
}

/// The JSON document of `triage run` and `triage bisect` (schema `npgx.triage-run` for both):
/// `run` (scripts and steps), `analysis`, and `bisect` when it ran.
pub fn run_json(run: &TriageRun) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&super::Envelope::new(
        RUN_SCHEMA_NAME,
        RUN_SCHEMA_VERSION,
        run,
    ))
}

/// [`run_json`] as a value, for `--html`, serialised straight from the records. Every number of
/// the records is an integer or an f64, so the value equals the printed document read back and
/// the page is the one `npgx report` makes of the saved document.
pub fn run_value(run: &TriageRun) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(super::Envelope::new(
        RUN_SCHEMA_NAME,
        RUN_SCHEMA_VERSION,
        run,
    ))
}

/// [`analyze_json`] as a value, for `--html` (as [`run_value`]).
pub fn analyze_value(a: &TriageAnalysis) -> serde_json::Result<serde_json::Value> {
    serde_json::to_value(super::Envelope::new(
        ANALYZE_SCHEMA_NAME,
        ANALYZE_SCHEMA_VERSION,
        a,
    ))
}

/// The JSON document of `triage analyze`: the analysis' fields.
pub fn analyze_json(a: &TriageAnalysis) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&super::Envelope::new(
        ANALYZE_SCHEMA_NAME,
        ANALYZE_SCHEMA_VERSION,
        a,
    ))
}

/// The hand-off of a run, rendered: `triage_report.md` and, after an FX node search,
/// `bisect/nodes.json` ([`TriageRun::write_handoff`] puts them in its tree).
pub fn run_handoff(run: &TriageRun) -> anyhow::Result<(String, Option<String>)> {
    let mut text = handoff_markdown(&run.analysis, Some(&run.run.plan));
    let mut nodes = None;
    if let Some(b) = &run.bisect {
        text.push_str(&bisect_markdown(b, &run.run.root));
        if let Some(n) = &b.nodes {
            text.push_str(&super::nodes::markdown(n, &run.run.root));
            nodes = Some(super::nodes::json(n)?);
        }
    }
    Ok((text, nodes))
}

/// The rank view of `triage classify DIR`, after the per-file summaries: the first rank, the
/// ranks it cascaded to (with their delay), the clean ones and the notes.
pub fn ranks_text(views: &[RankView]) -> String {
    let mut out = String::new();
    for v in views {
        let _ = writeln!(out, "ranks of {}", v.dir.display());
        let at = |l: &RankLog| {
            let line = l.line.map_or(String::new(), |n| format!(":{n}"));
            let time = l.time.map_or(String::new(), |t| format!(", {t}"));
            format!("{}{line}{time}", l.file.display())
        };
        match &v.origin {
            Some(o) => {
                let _ = writeln!(
                    out,
                    "  first:        {} ({}): {}",
                    o.label(),
                    at(o),
                    o.text.as_deref().unwrap_or_default()
                );
            }
            None => {
                let _ = writeln!(out, "  first:        none (no log holds a causal error)");
            }
        }
        if !v.cascaded_to.is_empty() {
            let _ = writeln!(out, "  cascaded to:");
            for l in &v.cascaded_to {
                let after = l
                    .after_origin_s
                    .map_or(String::new(), |s| format!(" {s:+.3} s"));
                let _ = writeln!(
                    out,
                    "    {}{after} ({}): {}",
                    l.label(),
                    at(l),
                    l.text.as_deref().unwrap_or_default()
                );
            }
        }
        if !v.clean.is_empty() {
            let clean: Vec<String> = v.clean.iter().map(RankLog::label).collect();
            let _ = writeln!(out, "  no error:     {}", clean.join(", "));
        }
        for n in &v.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    out
}

/// The skills a route hands over to, after the route: npgx's own (`skills/`), then the
/// CANNBot sub-skill the `sub_skill` field names.
fn skills(route: crate::triage::route::Route, sub_skill: Option<&str>) -> String {
    match (route.skill(), sub_skill) {
        (Some(own), Some(cannbot)) => format!("  (skill {own}; CANNBot: {cannbot})"),
        (Some(own), None) => format!("  (skill {own})"),
        (None, _) => String::new(),
    }
}

/// Human summary of `triage classify` results.
pub fn classifications_text(items: &[Classification]) -> String {
    let mut out = String::new();
    for c in items {
        let _ = writeln!(out, "{}", c.file.display());
        let _ = writeln!(
            out,
            "  route:       {}{}",
            c.route.as_str(),
            skills(c.route, c.sub_skill.as_deref())
        );
        let matched = c
            .matched
            .as_deref()
            .map(|m| format!(" on \"{m}\""))
            .unwrap_or_default();
        let at = c
            .matched_line
            .map(|l| format!(" (line {l})"))
            .unwrap_or_default();
        let _ = writeln!(out, "  rule:        {}{matched}{at}", c.rule);
        let phase = c
            .phase
            .map(|p| format!(", phase {}", p.name()))
            .unwrap_or_default();
        let conf = match c.confidence {
            crate::triage::route::Confidence::High => "high",
            crate::triage::route::Confidence::Medium => "medium",
            crate::triage::route::Confidence::Low => "low",
        };
        let kind = c
            .kind
            .map(|k| format!(", kind {}", k.name()))
            .unwrap_or_default();
        let _ = writeln!(out, "  confidence:  {conf}{phase}{kind}");
        if !c.why.is_empty() {
            let _ = writeln!(out, "  why:         {}", c.why);
        }
        if let Some(p) = &c.package {
            let _ = writeln!(out, "  package:     {p}");
        }
        if let Some(e) = &c.first_causal_error {
            // A message of several lines (a CANN report's `Reason:` line) keeps the layout's
            // indentation on each.
            let message = e.message.replace('\n', "\n    ");
            let _ = writeln!(out, "  first causal error (line {}): {message}", e.line);
            let _ = writeln!(out, "    | {}", e.text);
            let _ = writeln!(out, "    found by {}", e.evidence.rule);
            if let Some(w) = e.evidence.wrapper_line {
                let _ = writeln!(out, "    under the wrapper on line {w}");
            }
            if let Some(root) = e.root_line {
                let _ = writeln!(out, "    root message on line {root}");
            }
            if !e.skipped_cascades.is_empty() {
                let lines: Vec<String> = e.skipped_cascades.iter().map(|l| l.to_string()).collect();
                let _ = writeln!(out, "    skipped as cascades: lines {}", lines.join(", "));
            }
        } else if let (Some(l), Some(t)) = (c.evidence_line, &c.evidence_text) {
            let _ = writeln!(out, "  evidence (line {l}): {t}");
        }
        out.push_str(&remedy_text(&c.remedy, "  "));
        let doubtful = c.route == crate::triage::route::Route::Undetermined
            || c.confidence == crate::triage::route::Confidence::Low;
        if doubtful && !c.candidates.is_empty() {
            let _ = writeln!(out, "  candidates:");
            for k in &c.candidates {
                let phase = k.phase.map_or("?", |p| p.name());
                let _ = writeln!(
                    out,
                    "    line {:>5}  {:<13} phase {:<11} {}",
                    k.line,
                    k.route.as_str(),
                    phase,
                    k.why
                );
            }
        }
        match c.framework {
            // PyTorch, npgx's own users' framework, goes unsaid.
            Some(Framework::Torch) | None => {}
            Some(Framework::Unknown) => {
                let _ = writeln!(
                    out,
                    "  framework:   unknown (the text names none: ask which)"
                );
            }
            Some(f) => {
                let _ = writeln!(
                    out,
                    "  framework:   {} (by the names the text prints)",
                    f.name()
                );
            }
        }
        if !c.missing.is_empty() {
            let _ = writeln!(
                out,
                "  versions not stated: {} (ask for them where they decide)",
                c.missing.join(", ")
            );
        }
        if let Some(s) = &c.settle {
            let _ = writeln!(out, "  to settle it: {s}");
        }
        for n in &c.notes {
            let _ = writeln!(out, "  note: {n}");
        }
    }
    out
}

/// The `do:` block of a first causal error's remedies: each action with its source (and the
/// quoted line), then the commands that check it.
pub fn remedy_text(remedy: &[Remedy], indent: &str) -> String {
    let mut out = String::new();
    if remedy.is_empty() {
        return out;
    }
    let _ = writeln!(out, "{indent}do:");
    for r in remedy {
        let at = r.line.map(|l| format!(", line {l}")).unwrap_or_default();
        let _ = writeln!(
            out,
            "{indent}  - {}{} [{}{at}]",
            r.lead(),
            r.action,
            r.source
        );
        for c in &r.check {
            let _ = writeln!(out, "{indent}      check: {c}");
        }
    }
    out
}

/// The `## Bisect` section of `triage_report.md`: one row per variant and the conclusion.
pub fn bisect_markdown(b: &Bisection, root: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Bisect (npugraph_ex options)\n");
    if b.outcome == Outcome::NotApplicable {
        let _ = writeln!(out, "{}\n", b.conclusion);
        return out;
    }
    match (&b.baseline_error, &b.baseline_outputs) {
        (Some(e), _) => {
            let _ = writeln!(out, "Step 5's first causal error: `{e}`\n");
        }
        (None, Some(c)) => {
            let _ = writeln!(
                out,
                "Step 5 vs step 4: max abs error {:.3e}, min cosine {:.6}\n",
                c.max_abs_error, c.min_cosine
            );
        }
        _ => {}
    }
    let _ = writeln!(
        out,
        "| variant | option changed | result | first causal error | seconds |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for v in &b.variants {
        let changed = v
            .flips
            .iter()
            .map(|f| format!("{}: {} → {}", f.key, f.in_force, f.value))
            .collect::<Vec<_>>()
            .join(", ");
        let (result, error) = super::bisect_rows::result_cells(
            v.verdict,
            v.outputs.as_ref(),
            v.first_causal_error.as_deref(),
        );
        let _ = writeln!(
            out,
            "| `{}` | {changed} | {result} | {error} | {:.1} |",
            rel(root, &v.dir),
            v.seconds
        );
    }
    out.push('\n');
    super::bisect_rows::differences_markdown(
        &mut out,
        root,
        b.variants
            .iter()
            .map(|v| (v.dir.as_path(), v.difference.as_ref())),
    );
    for s in &b.skipped {
        let _ = writeln!(out, "- skipped `{}`: {}", s.key, s.reason);
    }
    for n in &b.notes {
        let _ = writeln!(out, "- note: {n}");
    }
    if !b.skipped.is_empty() || !b.notes.is_empty() {
        out.push('\n');
    }
    if let Some(d) = &b.dump_comparison {
        let node =
            |n: &crate::triage::dumps::DivergentNode| format!("`{}` ({})", n.op_name, n.tensor);
        let _ = writeln!(
            out,
            "Data dumps `{}` (passing) vs `{}` (failing): {} tensor pairs, {} differ; first divergence {}; origin {}\n",
            rel(root, &d.golden),
            rel(root, &d.target),
            d.pairs,
            d.failed,
            d.first_divergence.as_ref().map_or("none".into(), node),
            d.origin.as_ref().map_or("none".into(), node),
        );
    }
    let _ = writeln!(
        out,
        "Runs: {} of --max-runs {}.\n\n**Conclusion:** {}\n",
        b.runs, b.max_runs, b.conclusion
    );
    out
}

/// The generated scripts and what happened to `options` in each (run mode only).
pub fn plan_markdown(plan: &ScriptPlan) -> String {
    let mut out = String::new();
    let c = &plan.call;
    let _ = writeln!(out, "## Compile call\n");
    let _ = writeln!(
        out,
        "Call {} at line {} ({:?}{}): `{}`\n",
        c.ordinal,
        c.line,
        c.form,
        c.enclosing_function
            .as_deref()
            .map(|f| format!(", in `{f}()`"))
            .unwrap_or_default(),
        c.text.lines().next().unwrap_or("")
    );
    for s in &plan.steps {
        let _ = writeln!(
            out,
            "- `scripts/{}`: {}",
            s.file,
            scripts::options_summary(s.step, &s.options, plan.dump_tensors)
        );
    }
    out.push('\n');
    out
}

/// `triage_report.md`: the handoff.
pub fn handoff_markdown(a: &TriageAnalysis, plan: Option<&ScriptPlan>) -> String {
    let mut out = String::new();
    let root = a.root.as_path();
    handoff_head(&mut out, a);
    if let Some(ev) = &a.evidence {
        handoff_evidence(&mut out, root, ev);
    }
    if !a.notes.is_empty() {
        let _ = writeln!(out, "## Notes\n");
        for n in &a.notes {
            let _ = writeln!(out, "- {n}");
        }
        out.push('\n');
    }
    handoff_logs(&mut out, a);
    if let Some(p) = plan {
        out.push_str(&plan_markdown(p));
    }
    let v = &a.versions;
    let _ = writeln!(out, "## Versions (env.txt)\n");
    for (k, val) in [
        ("python", &v.python),
        ("torch", &v.torch),
        ("torch_npu", &v.torch_npu),
        ("torchair", &v.torchair),
        ("npugraph_ex", &v.npugraph_ex),
        ("CANN", &v.cann),
    ] {
        let _ = writeln!(out, "- {k}: {}", val.as_deref().unwrap_or("unknown"));
    }
    out.push('\n');
    if let Some(cmp) = &a.comparison {
        handoff_comparison(&mut out, cmp);
    }
    if let Some(d) = &a.dump_comparison {
        handoff_dump_comparison(&mut out, root, d);
    }
    handoff_tail(&mut out, a);
    out
}

/// The handoff's title and its list of facts: tree, route, rule, first failing step,
/// completeness.
fn handoff_head(out: &mut String, a: &TriageAnalysis) {
    let _ = writeln!(out, "# npugraph_ex layered triage — handoff\n");
    let _ = writeln!(out, "- Tree: `{}`", a.root.display());
    let _ = writeln!(
        out,
        "- Route: **{}**{}",
        a.route.as_str(),
        match (a.route.skill(), a.sub_skill.as_deref()) {
            (Some(own), Some(cannbot)) => format!(" → skill `{own}` (CANNBot: `{cannbot}`)"),
            (Some(own), None) => format!(" → skill `{own}`"),
            (None, _) => String::new(),
        }
    );
    let matched = a
        .matched
        .as_deref()
        .map(|m| format!(" (matched `{m}`)"))
        .unwrap_or_default();
    let _ = writeln!(out, "- Rule: `{}`{matched}", a.rule);
    match &a.first_failure {
        Some(f) => {
            let _ = writeln!(
                out,
                "- First failing step: `{}` (exit_code={}){}",
                f.step.name(),
                f.exit_code,
                f.reason
                    .as_deref()
                    .map(|r| format!(", {r}"))
                    .unwrap_or_default()
            );
        }
        None => {
            let _ = writeln!(out, "- First failing step: none recorded");
        }
    }
    let _ = writeln!(
        out,
        "- Tree complete: {}\n",
        if a.complete { "yes" } else { "no" }
    );
}

/// `## Evidence`: the first causal error of the classification `ev`, with its root message
/// and the cascades skipped.
fn handoff_evidence(out: &mut String, root: &Path, ev: &Classification) {
    let _ = writeln!(out, "## Evidence\n");
    if let Some(e) = &ev.first_causal_error {
        let _ = writeln!(
            out,
            "First causal error at `{}:{}`:\n\n```\n{}\n```\n",
            rel(root, &ev.file),
            e.line,
            e.text
        );
        // A message of several lines stays one paragraph of the Markdown.
        let _ = writeln!(out, "Error: {}\n", e.message.replace('\n', "  \n"));
        if let Some(r) = e.root_line {
            let _ = writeln!(out, "Root message on line {r}.\n");
        }
        if !e.skipped_cascades.is_empty() {
            let lines: Vec<String> = e.skipped_cascades.iter().map(|l| l.to_string()).collect();
            let _ = writeln!(out, "Skipped as cascades: lines {}.\n", lines.join(", "));
        }
    }
}

/// `## Logs collected`: per step its status, log, plog files and `run_*` directories.
fn handoff_logs(out: &mut String, a: &TriageAnalysis) {
    let root = a.root.as_path();
    let _ = writeln!(out, "## Logs collected\n");
    let _ = writeln!(
        out,
        "| step | status | stdout_stderr.log | plog files | run_* dirs |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for s in &a.steps {
        let log = s
            .log
            .as_ref()
            .map(|l| format!("`{}` ({} lines)", rel(root, &l.path), l.lines))
            .unwrap_or_else(|| "—".into());
        let _ = writeln!(
            out,
            "| {} | {:?} | {} | {} | {} |",
            s.step.name(),
            s.status,
            log,
            s.plog_files.len(),
            s.debug_runs.len()
        );
    }
    out.push('\n');
}

/// `## Output comparison`: the outputs of each step against its reference, then the timings.
fn handoff_comparison(out: &mut String, cmp: &crate::triage::compare::Comparison) {
    let _ = writeln!(out, "## Output comparison (--compare-outputs)\n");
    let _ = writeln!(
        out,
        "| reference | candidate | tensors | max abs error | max rel error | min cosine | allclose (rtol {:e}, atol {:e}) |",
        crate::triage::compare::RTOL,
        crate::triage::compare::ATOL
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|---|");
    let repeat = cmp.eager_repeat.iter().map(|o| (o, "step1-eager-repeat"));
    for (o, candidate) in cmp
        .outputs
        .iter()
        .map(|o| (o, o.candidate.name()))
        .chain(repeat)
    {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {:.3e} | {:.3e} | {:.6} | {} |",
            o.reference.name(),
            candidate,
            o.tensors,
            o.max_abs_error,
            o.max_rel_error,
            o.min_cosine,
            if o.allclose { "yes" } else { "no" }
        );
    }
    let _ = writeln!(
        out,
        "\n| step | calls | first call (ms) | median of later calls (ms) | fastest later call (ms) |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for t in &cmp.timings {
        let _ = writeln!(
            out,
            "| {} | {} | {:.3} | {:.3} | {:.3} |",
            t.step.name(),
            t.calls,
            t.first_call_seconds * 1e3,
            t.median_seconds * 1e3,
            t.fastest_seconds * 1e3
        );
    }
    out.push('\n');
}

/// `## Data dumps`: step 4's and step 5's dumps compared — counts, first divergence, origin
/// and the next commands.
fn handoff_dump_comparison(
    out: &mut String,
    root: &Path,
    d: &crate::triage::dumps::DumpComparison,
) {
    let _ = writeln!(out, "## Data dumps: step 4 (golden) vs step 5 (target)\n");
    let _ = writeln!(
        out,
        "- `{}` vs `{}`: {} tensor pairs, {} differ; {} unmatched, {} unreadable",
        rel(root, &d.golden),
        rel(root, &d.target),
        d.pairs,
        d.failed,
        d.unmatched,
        d.errors
    );
    let node = |n: &crate::triage::dumps::DivergentNode| {
        let num = |v: Option<f64>| v.map_or("—".to_string(), |v| format!("{v:.6}"));
        format!(
            "`{}` ({}; cosine {}, max rel error {})",
            n.op_name,
            n.tensor,
            num(n.cosine),
            num(n.max_rel)
        )
    };
    match &d.first_divergence {
        Some(n) => {
            let _ = writeln!(out, "- First divergence: {}", node(n));
        }
        None => {
            let _ = writeln!(out, "- No tensor differs beyond the thresholds");
        }
    }
    if let Some(n) = &d.origin {
        let _ = writeln!(
            out,
            "- **Origin** (first node whose output differs while its inputs match; evidence: {}): {}",
            d.origin_evidence.as_deref().unwrap_or("none"),
            node(n)
        );
    }
    let _ = writeln!(out, "\nNext:\n");
    for cmd in &d.next {
        let _ = writeln!(out, "    {cmd}");
    }
    out.push('\n');
}

/// The handoff's last sections: the paths for the sub-skill, what is still missing, the
/// completeness problems and `warnings.txt`.
fn handoff_tail(out: &mut String, a: &TriageAnalysis) {
    let root = a.root.as_path();
    if !a.handoff_paths.is_empty() {
        let _ = writeln!(out, "## Paths for the sub-skill\n");
        for p in &a.handoff_paths {
            let _ = writeln!(out, "- `{}`", rel(root, p));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "## Still missing\n");
    for m in &a.missing {
        let _ = writeln!(out, "- {m}");
    }
    if !a.problems.is_empty() {
        let _ = writeln!(out, "\n## Completeness problems\n");
        for p in &a.problems {
            let _ = writeln!(out, "- {p}");
        }
    }
    if !a.warnings.is_empty() {
        let _ = writeln!(out, "\n## warnings.txt\n");
        for w in &a.warnings {
            let _ = writeln!(out, "- {w}");
        }
    }
}

/// Terminal summary of `triage run` / `triage bisect`.
pub fn run_text(run: &TriageRun) -> String {
    let mut out = analysis_text(&run.analysis);
    if let Some(b) = &run.bisect {
        for v in &b.variants {
            let _ = writeln!(out, "  bisect/{:<40} {}", v.name, v.verdict.as_str());
        }
        for s in &b.skipped {
            let _ = writeln!(out, "  skipped {}: {}", s.key, s.reason);
        }
        let _ = writeln!(out, "bisect: {}", b.conclusion);
        if let Some(n) = &b.nodes {
            out.push_str(&super::nodes::text(n));
        }
    }
    out
}

/// Short terminal summary of an analysis.
pub fn analysis_text(a: &TriageAnalysis) -> String {
    let mut out = String::new();
    let root = a.root.as_path();
    let _ = writeln!(out, "triage tree: {}", root.display());
    for s in &a.steps {
        let _ = writeln!(out, "  {:<32} {:?}", s.step.name(), s.status);
    }
    let _ = writeln!(
        out,
        "route: {}{}",
        a.route.as_str(),
        skills(a.route, a.sub_skill.as_deref())
    );
    let matched = a
        .matched
        .as_deref()
        .map(|m| format!(" ({m})"))
        .unwrap_or_default();
    let _ = writeln!(out, "rule: {}{matched}", a.rule);
    if let Some(ev) = &a.evidence {
        if let Some(e) = &ev.first_causal_error {
            let _ = writeln!(
                out,
                "first causal error: {}:{}: {}",
                rel(root, &ev.file),
                e.line,
                e.message.replace('\n', "\n  ")
            );
        }
    }
    for n in &a.notes {
        let _ = writeln!(out, "note: {n}");
    }
    for p in &a.problems {
        let _ = writeln!(out, "incomplete: {p}");
    }
    for m in &a.missing {
        let _ = writeln!(out, "missing: {m}");
    }
    let _ = writeln!(
        out,
        "handoff: {}",
        root.join(crate::triage::layout::REPORT_FILE).display()
    );
    out
}
