//! What the source map says of one dumped operator or FX node: the records every anomaly, birth
//! and divergence carries as its `fx` field (docs/dump-scan.md, docs/dump-compare.md, "From the
//! operator to the user's line").

use serde::{Deserialize, Serialize};

/// A line of Python source as a graph text records it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceFrame {
    /// The file as the model's process saw it.
    pub file: String,
    pub line: u32,
    pub function: Option<String>,
    /// The line's code, trimmed, as the text quotes it.
    pub code: Option<String>,
}

impl SourceFrame {
    /// Whether the frame is a library's (torch, torch_npu, torchair, installed packages) rather
    /// than the user's ([`npgx_parsers::torch_logs::python::Frame::is_library`]).
    pub fn is_library(&self) -> bool {
        npgx_parsers::torch_logs::python::Frame {
            file: self.file.clone(),
            line: self.line,
            function: None,
        }
        .is_library()
    }

    /// `/home/u/model.py:12 in forward: h = torch.relu(x)`.
    pub fn label(&self) -> String {
        let mut s = format!("{}:{}", self.file, self.line);
        if let Some(f) = &self.function {
            s.push_str(" in ");
            s.push_str(f);
        }
        if let Some(c) = &self.code {
            s.push_str(": ");
            s.push_str(c);
        }
        s
    }
}

/// Where a dumped operator (or FX node) came from: its torchair graph, its FX node, the source
/// line that made the node and the user's line. Every field may be null; `missing` says why
/// each unknown one is unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FxOrigin {
    /// torchair's graph (`graph_1`): the GE model its operators ran in.
    pub graph: Option<String>,
    /// The FX node the operator was converted from (`addmm_1`).
    pub fx_node: Option<String>,
    /// The node's call target (`aten.addmm.default`).
    pub fx_target: Option<String>,
    /// The innermost frame of the node's stack trace, as the graph text records it: for a
    /// layer of torch (`nn.Linear`) that is torch's own file.
    pub source: Option<SourceFrame>,
    /// The user's line: `source` when it lies outside torch, torch_npu, torchair and
    /// site-packages.
    pub user_line: Option<SourceFrame>,
    /// The module path of the node (`layers.0.mlp`), from torchair's `nn_module_stack`.
    pub module: Option<String>,
    /// How the link was made, one step each: the graph files read, `fused: resolved through
    /// original_op <name>`.
    pub via: Vec<String>,
    /// Why a field is null (`GE-inserted: no FX origin`, `no graph dump for graph_2`).
    pub missing: Vec<String>,
}

impl FxOrigin {
    /// Nothing known, for `why`.
    pub fn unknown(why: impl Into<String>) -> FxOrigin {
        FxOrigin {
            missing: vec![why.into()],
            ..FxOrigin::default()
        }
    }

    /// The one line a text report prints: the user's line, else the node and why there is no
    /// line.
    pub fn summary(&self) -> String {
        let node = match (&self.fx_node, &self.graph) {
            (Some(n), Some(g)) => format!("FX node {n} of {g}"),
            (Some(n), None) => format!("FX node {n}"),
            _ => String::new(),
        };
        if let Some(u) = &self.user_line {
            return if node.is_empty() {
                u.label()
            } else {
                format!("{} ({node})", u.label())
            };
        }
        let why = self.missing.join("; ");
        match (node.is_empty(), &self.source) {
            (false, Some(s)) => format!("{node}, at {} — {why}", s.label()),
            (false, None) => format!("{node} — {why}"),
            (true, _) => why,
        }
    }
}
