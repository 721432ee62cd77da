//! The way back from the user's line to the operators to dump (issue 43): `dump-config new
//! model --graphs PATH --line FILE:LINE` (or `--fx-node NAME`) finds the FX nodes of that line in
//! the graph texts ([`crate::source_map`]) and the GE operators each became, per torchair graph
//! (`graph_<N>`: the GE model name of its dumps).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::source_map::{NodeAtLine, SourceMap};

/// What to select: a source line or an FX node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Selector {
    /// A file (its name, or a path's tail) and a 1-based line.
    Line {
        file: String,
        line: u32,
    },
    FxNode(String),
}

impl Selector {
    /// `model.py:12` → a line; an error for anything else.
    pub fn parse_line(s: &str) -> anyhow::Result<Selector> {
        let (file, line) = s
            .rsplit_once(':')
            .filter(|(f, _)| !f.is_empty())
            .ok_or_else(|| anyhow::anyhow!("--line {s}: expected FILE:LINE (model.py:12)"))?;
        let line = line
            .parse::<u32>()
            .ok()
            .filter(|&l| l > 0)
            .ok_or_else(|| anyhow::anyhow!("--line {s}: {line:?} is not a line number"))?;
        Ok(Selector::Line {
            file: file.to_string(),
            line,
        })
    }

    fn label(&self) -> String {
        match self {
            Selector::Line { file, line } => format!("{file}:{line}"),
            Selector::FxNode(n) => format!("FX node {n}"),
        }
    }
}

/// One FX node selected, with the GE operators it became.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SelectedNode {
    /// torchair's graph (`graph_1`).
    pub graph: Option<String>,
    pub rank: Option<u32>,
    pub fx_node: String,
    pub ge_ops: Vec<String>,
    /// The graph dump it was read from.
    pub file: String,
}

/// What `--line` / `--fx-node` selected (the `fx` field of the `npgx.dump-config-new` document).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Selection {
    /// `model.py:12` or `FX node addmm_1`.
    pub selected: String,
    /// The nodes whose operators the config dumps.
    pub nodes: Vec<SelectedNode>,
    /// Nodes whose line torchair printed earlier in its `.py` dump (once per file) and that no
    /// readable FX text places: they may come from the line too, and are not in the config
    /// (give TORCH_COMPILE_DEBUG's texts to `--graphs` to decide them).
    pub unsure: Vec<SelectedNode>,
    /// The graph texts read.
    pub graph_files: Vec<String>,
    /// The files under `--graphs` that could not be read.
    pub unreadable: Vec<crate::dump::records::FileProblem>,
    /// torchair's FX data dump of the same selection (`config.debug.data_dump.filter`: a
    /// function of a torch.fx Node returning it or None), one Python line: for `--line`, the
    /// nodes whose innermost stack frame is that line; for `--fx-node`, the nodes of that name.
    pub fx_dump_filter: String,
}

/// torchair's `data_dump.filter` (a function of a torch.fx Node that returns it or None;
/// torchair's `fx_dumper.py` calls it on every node) keeping what `sel` selected: for a line, the
/// nodes whose innermost frame — the last ` File ` of `n.stack_trace`, the frame torchair's
/// graph dump prints — is that line of the files the graph texts name (in every graph, the
/// nodes whose line torchair printed only once included); for a node name, the nodes of that
/// name (in every graph, as the `dump_list`).
fn fx_dump_filter(sel: &Selector, nodes: &[NodeAtLine]) -> String {
    let quoted = |set: std::collections::BTreeSet<String>| {
        set.iter()
            .map(|s| crate::repro::pyquote::py_str(s))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match sel {
        Selector::Line { line, .. } => {
            let frames = nodes
                .iter()
                .filter_map(|n| n.source_file.as_ref())
                .map(|f| format!("\"{f}\", line {line},"))
                .collect();
            format!(
                "config.debug.data_dump.filter = lambda n: n if (n.stack_trace or \"\")\
                 .split(\" File \")[-1].startswith(({},)) else None",
                quoted(frames)
            )
        }
        Selector::FxNode(_) => {
            let names = nodes.iter().map(|n| n.node.clone()).collect();
            format!(
                "config.debug.data_dump.filter = lambda n: n if n.name in {{{}}} else None",
                quoted(names)
            )
        }
    }
}

/// `dump_list` entries: a model name (`graph_<N>`) and its layers.
pub type Models = Vec<(String, Vec<String>)>;

fn selected(n: NodeAtLine) -> SelectedNode {
    SelectedNode {
        graph: n.graph.map(|g| format!("graph_{g}")),
        rank: n.rank,
        fx_node: n.node,
        ge_ops: n.ge_ops,
        file: n.file,
    }
}

/// Reads the graph texts under `graphs` ([`SourceMap::load`]) and [`select`]s in them; the files
/// that could not be read are the selection's `unreadable`.
pub fn select_in(
    graphs: &[std::path::PathBuf],
    sel: &Selector,
) -> anyhow::Result<(Selection, Models)> {
    let mut map = SourceMap::load(graphs);
    let unreadable = std::mem::take(&mut map.problems);
    let (mut selection, models) = select(&map, sel).map_err(|e| {
        if unreadable.is_empty() {
            return e;
        }
        let files: Vec<String> = unreadable
            .iter()
            .map(|p| format!("{}: {}", p.path, p.message))
            .collect();
        anyhow::anyhow!("{e} (not used: {})", files.join("; "))
    })?;
    selection.unreadable = unreadable;
    Ok((selection, models))
}

/// The FX nodes `sel` names in `map` and the `dump_list` that dumps exactly their GE operators:
/// one entry per graph (`model_name` `graph_<N>`, its operators as `layer`; the ranks of one graph
/// share its operator names). An error when nothing is found, when a node has no GE operator in
/// the texts, or when a graph dump's name gives no graph id (the model name would be unknown).
pub fn select(map: &SourceMap, sel: &Selector) -> anyhow::Result<(Selection, Models)> {
    if map.is_empty() {
        anyhow::bail!(
            "no graph text read from --graphs (torchair graph dumps dynamo_original_graph_*, \
             TORCH_COMPILE_DEBUG's torch_compile_debug/ folder)"
        );
    }
    let mut unsure = Vec::new();
    let nodes = match sel {
        Selector::Line { file, line } => map.nodes_at(file, *line, &mut unsure),
        Selector::FxNode(n) => map.nodes_named(n),
    };
    if nodes.is_empty() {
        anyhow::bail!(
            "no FX node of {} in the {} graph text(s) read{}",
            sel.label(),
            map.files.len(),
            if unsure.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} node(s) have no recorded line (torchair prints each line once per \
                     file): add TORCH_COMPILE_DEBUG's texts to --graphs",
                    unsure.len()
                )
            }
        );
    }
    let mut models: BTreeMap<u64, Vec<String>> = BTreeMap::new();
    for n in &nodes {
        let Some(g) = n.graph else {
            anyhow::bail!(
                "{}: the graph dump's name gives no graph id (torchair before 7.1), so the \
                 model name to dump is unknown; use --model-name and --layer {}",
                n.file,
                n.ge_ops.join(",")
            );
        };
        if n.ge_ops.is_empty() {
            anyhow::bail!(
                "FX node {} of graph_{g} made no GE operator the graph text names",
                n.node
            );
        }
        let layers = models.entry(g).or_default();
        for op in &n.ge_ops {
            if !layers.contains(op) {
                layers.push(op.clone());
            }
        }
    }
    // A node already selected in another rank's dump of the same graph is not unsure.
    unsure.retain(|u| !nodes.iter().any(|n| n.graph == u.graph && n.node == u.node));
    let fx_dump_filter = fx_dump_filter(sel, &nodes);
    let selection = Selection {
        fx_dump_filter,
        selected: sel.label(),
        nodes: nodes.into_iter().map(selected).collect(),
        unsure: unsure.into_iter().map(selected).collect(),
        graph_files: map.files.clone(),
        unreadable: Vec::new(),
    };
    let models = models
        .into_iter()
        .map(|(g, layers)| (format!("graph_{g}"), layers))
        .collect();
    Ok((selection, models))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_selectors() {
        assert_eq!(
            Selector::parse_line("model.py:12").unwrap(),
            Selector::Line {
                file: "model.py".into(),
                line: 12
            }
        );
        assert_eq!(
            Selector::parse_line("C:/m/model.py:3").unwrap(),
            Selector::Line {
                file: "C:/m/model.py".into(),
                line: 3
            }
        );
        for bad in ["model.py", "model.py:0", ":3", "model.py:x"] {
            assert!(Selector::parse_line(bad).is_err(), "{bad}");
        }
    }
}
