//! The bisect part of the Triage section: the option search's conclusion and the FX node
//! search (runs, node ranges, verdicts; the nodes found with their target, inputs and source
//! line; the single-op repro to run). The node search is read back into its typed record.

use maud::{html, Markup};

use super::{file_link, Row, Status};
use crate::report::enum_name;
use crate::report::nodes::{inputs_text, tensor_text};
use crate::triage::bisect::Bisection;
use crate::triage::nodes::NodeOutcome;

/// The body part and the summary row of `bisect` (a `npgx.triage-run` document's field).
pub(super) fn bisect(b: Option<&Bisection>) -> (Markup, Vec<Row>) {
    let Some(b) = b else {
        return (html! {}, Vec::new());
    };
    let nodes = b.nodes.as_ref();
    let mut rows = Vec::new();
    if let Some(s) = nodes {
        let found = matches!(s.outcome, NodeOutcome::Isolated | NodeOutcome::WholeGraph);
        rows.push(Row {
            what: "bisect: FX nodes".into(),
            status: if found { Status::Fail } else { Status::Info },
            first: s.conclusion.clone(),
            at: s
                .found
                .first()
                .and_then(|n| n.source.as_ref())
                .map_or("—".into(), |src| {
                    format!("{}:{}", src.file.display(), src.line)
                }),
            next: s
                .repro
                .iter()
                .map(|p| format!("python {}", p.display()))
                .collect(),
        });
    }
    let body = html! {
        h3 { "Bisect: npugraph_ex options" }
        p { "Outcome " code { (enum_name(&b.outcome)) } " — " (b.conclusion) }
        @if let Some(s) = nodes {
            h3 { "Bisect: FX nodes" }
            p { "Outcome " code { (s.outcome.as_str()) } " — " (s.conclusion) }
            table.nodes-runs {
                thead { tr { th { "run" } th { "nodes compiled by npugraph_ex" } th { "nodes" } th { "result" } th { "first causal error" } th { "time" } } }
                tbody {
                    @for r in &s.runs {
                        tr {
                            td { (file_link(&r.dir.display().to_string())) }
                            td { code { (r.compiled) } }
                            td.num { (r.nodes) }
                            td { (r.verdict.as_str()) }
                            td { (r.first_causal_error.as_deref().unwrap_or("—")) }
                            td.num { (format!("{:.1} s", r.seconds)) }
                        }
                    }
                }
            }
            @if !s.found.is_empty() {
                table.nodes-found {
                    thead { tr { th { "graph" } th { "node" } th { "target" } th { "inputs" } th { "output" } th { "source line" } } }
                    tbody {
                        @for n in &s.found {
                            tr {
                                td.num { (n.graph) }
                                td { code { (n.name) } }
                                td { code { (n.target) } }
                                td { (inputs_text(n)) }
                                td { (n.output.as_ref().map_or("—".into(), tensor_text)) }
                                td { @match &n.source {
                                    Some(src) => { code { (format!("{}:{}", src.file.display(), src.line)) } " " code { (src.code) } },
                                    None => "—",
                                } }
                            }
                        }
                    }
                }
            }
            @if !s.repro.is_empty() {
                ul.handoff { @for p in &s.repro { li { code { "python " (p.display()) } } } }
            }
            @for n in &s.notes { p.note { (n) } }
        }
    };
    (body, rows)
}
