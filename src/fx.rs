//! An FX graph node as npgx's wrapper backend records it (`triage/node_backend.py`): written
//! by triage's node search, read by repro's single-op scripts and by the renderers.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One tensor input (or output) of an FX node, from its `example_value` meta.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TensorMeta {
    /// Sizes; a symbolic size is kept as its expression (`s0`).
    pub shape: Vec<Dim>,
    pub dtype: String,
    pub stride: Option<Vec<i64>>,
    /// The FX node that produces it (inputs only).
    #[serde(default)]
    pub producer: Option<String>,
    /// A dumped `.pt` of its value (`--dump-tensors`), when one was found.
    #[serde(default)]
    pub dump: Option<PathBuf>,
}

/// A size: a number, or a symbol of a dynamic shape.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(untagged)]
pub enum Dim {
    Size(i64),
    Symbol(String),
}

/// Where the user's code made the node: the innermost frame of its stack trace outside torch.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SourceLine {
    /// The file: the user's own script when the frame was in a triage run's copy of it.
    pub file: PathBuf,
    pub line: u64,
    pub function: String,
    pub code: String,
    /// The same line in the triage tree's byte copy of the user's script
    /// (`scripts/original.py`), when `file` was moved from a run's script to the user's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copy: Option<PathBuf>,
}

/// One FX node as the wrapper recorded it.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FxNode {
    /// The graph id: the order in which npugraph_ex received the graph (0, 1, …).
    #[serde(default)]
    pub graph: usize,
    /// Position among the graph's computing nodes.
    pub index: usize,
    pub name: String,
    /// `call_function`, `call_method` or `call_module`.
    pub op: String,
    /// The qualified target (`torch.sigmoid`, `_operator.mul`, `Tensor.view`).
    pub target: String,
    pub inputs: Vec<TensorMeta>,
    pub output: Option<TensorMeta>,
    pub source: Option<SourceLine>,
    /// The call as a Python expression over `F` (the target) and `T[i]` (the tensor inputs).
    pub call: String,
    /// False when an argument or the target cannot be rebuilt outside the model.
    pub rebuildable: bool,
}

impl FxNode {
    /// `g1:sigmoid (torch.sigmoid)`.
    pub fn label(&self) -> String {
        format!("g{}:{} ({})", self.graph, self.name, self.target)
    }
}
