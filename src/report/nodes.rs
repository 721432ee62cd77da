//! Renders the FX node search of `triage bisect`: its section of `triage_report.md`, the
//! terminal lines, and `bisect/nodes.json` (schema `npgx.triage-nodes`, read back by
//! `npgx repro --fx-node`).

use std::fmt::Write as _;
use std::path::Path;

use super::bisect_rows::rel;
use crate::fx::{Dim, FxNode, TensorMeta};
use crate::triage::nodes::{NodeSearch, SCHEMA_NAME, SCHEMA_VERSION};

/// `float32[4, 8] stride (8, 1)`.
pub fn tensor_text(t: &TensorMeta) -> String {
    let dims: Vec<String> = t
        .shape
        .iter()
        .map(|d| match d {
            Dim::Size(n) => n.to_string(),
            Dim::Symbol(s) => s.clone(),
        })
        .collect();
    let stride = t.stride.as_ref().map_or(String::new(), |s| {
        format!(
            " stride ({})",
            s.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        )
    });
    format!("{}[{}]{stride}", t.dtype, dims.join(", "))
}

/// The inputs of a node, one per producer: `linear: float32[4, 8] stride (8, 1)`.
pub fn inputs_text(n: &FxNode) -> String {
    n.inputs
        .iter()
        .map(|t| {
            format!(
                "{}{}",
                t.producer
                    .as_deref()
                    .map_or(String::new(), |p| format!("{p}: ")),
                tensor_text(t)
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The `### FX nodes` part of the bisect section.
pub fn markdown(s: &NodeSearch, root: &Path) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Bisect (FX nodes)\n");
    let graphs: Vec<String> = s
        .graphs
        .iter()
        .map(|g| format!("graph {} ({} nodes)", g.graph, g.nodes))
        .collect();
    if !graphs.is_empty() {
        let _ = writeln!(
            out,
            "Graphs handed to npugraph_ex, in order: {}.\n",
            graphs.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "| run | nodes compiled by npugraph_ex | nodes | result | first causal error | seconds |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|---|");
    for r in &s.runs {
        let (result, error) = super::bisect_rows::result_cells(
            r.verdict,
            r.outputs.as_ref(),
            r.first_causal_error.as_deref(),
        );
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {result} | {error} | {:.1} |",
            rel(root, &r.dir),
            r.compiled,
            r.nodes,
            r.seconds
        );
    }
    out.push('\n');
    super::bisect_rows::differences_markdown(
        &mut out,
        root,
        s.runs
            .iter()
            .map(|r| (r.dir.as_path(), r.difference.as_ref())),
    );
    if !s.found.is_empty() {
        let _ = writeln!(
            out,
            "| graph | node | target | inputs (dtype[shape] stride) | source line |"
        );
        let _ = writeln!(out, "|---|---|---|---|---|");
        for n in &s.found {
            let source = n.source.as_ref().map_or("—".to_string(), |src| {
                format!(
                    "`{}:{}` `{}`",
                    rel(root, &src.file),
                    src.line,
                    src.code.replace('|', "\\|")
                )
            });
            let _ = writeln!(
                out,
                "| {} | `{}` | `{}` | {} | {source} |",
                n.graph,
                n.name,
                n.target,
                inputs_text(n)
            );
        }
        out.push('\n');
    }
    for p in &s.repro {
        let _ = writeln!(out, "- single-op repro: `python {}`", rel(root, p));
    }
    for n in &s.notes {
        let _ = writeln!(out, "- note: {n}");
    }
    let _ = writeln!(
        out,
        "\nRuns: {} of --max-runs {}.\n\n**Conclusion:** {}\n",
        s.runs.len(),
        s.max_runs,
        s.conclusion
    );
    out
}

/// Terminal lines.
pub fn text(s: &NodeSearch) -> String {
    let mut out = String::new();
    for r in &s.runs {
        let _ = writeln!(
            out,
            "  bisect/nodes/{:<6} {:<24} {}",
            r.name,
            r.compiled,
            r.verdict.as_str()
        );
    }
    let _ = writeln!(out, "nodes: {}", s.conclusion);
    out
}

/// The `bisect/nodes.json` document (schema `npgx.triage-nodes`).
pub fn json(s: &NodeSearch) -> anyhow::Result<String> {
    let doc = super::document(SCHEMA_NAME, SCHEMA_VERSION, s)?;
    Ok(serde_json::to_string_pretty(&doc)?)
}
