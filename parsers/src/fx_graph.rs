//! The FX graph texts torch.compile and torchair leave on disk, read back to FX nodes, the GE
//! operators each FX node became, and the source line that made it.
//!
//! Two grammars (issue 43's readers; the formats of the writers' source win over any summary):
//!
//! - **torchair's `.py` graph dump** (`config.debug.graph_dump.type = "py"`,
//!   `dynamo_original_graph_<N>_rank_<r>_pid_<p>_ts_<t>.py`; torchair `ge/_ge_graph.py`
//!   `add_python_code`, `_ge_concrete_graph/fx2ge_converter.py` `converter_context`). Per FX node
//!   with a stack trace: `# File "<path>", line <n>, in <fn>    <code>` (the innermost frame),
//!   `## FX Code: <node>[: <dtype>[<shape>]<device>] = <target>(<args>)`, then the GE operators
//!   it created: `X_0 = ge.Op(…, node_name="X")`, or `[X_0, X_1] = ge.Op(…)` for an operator with
//!   several outputs (no `node_name`; `X` is the first output's name without its `_<index>`).
//!   torchair writes a `# File` line only the first time its text appears anywhere in the file,
//!   so a node whose line was printed before (layer 2 of a stack of identical layers) has no
//!   `# File` line of its own, and the nearest one above it belongs to another node: a node's
//!   source is the `# File` line right before its `## FX Code` line, or unknown here.
//! - **PyTorch's readable FX text** (`GraphModule.print_readable`, TORCH_COMPILE_DEBUG's
//!   `torchair/model__<N>/{forward,backward}/*.txt`, `dynamo_out_graph.txt`): a comment
//!   `# File: <path>:<line> in <fn>, code: <code>` (PyTorch ≥ 2.3; `# File: <path>:<line>, code:
//!   <code>` before) above a node, written only when it differs from the previous node's, so a
//!   node without one has the previous node's; node lines `<node>: "<type>" = <target>(…)` or
//!   `<node> = <target>(…)`.
//!
//! Both give the innermost frame only: for an `nn.Linear` that is torch's own `linear.py`, not
//! the user's model. [`Frame::is_library`] tells them apart.

use serde::Serialize;

use crate::dump::name::is_digits;
use crate::torch_logs::python::{frame_line, Frame};

/// Why an FX node has no source frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoSource {
    /// torchair printed the node's line earlier in the file (it prints each line once).
    PrintedEarlier,
    /// The text gives no frame for the node (no stack trace, or no comment above it yet).
    NotRecorded,
}

/// One FX node as a graph text shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FxNode {
    pub name: String,
    /// The call target as printed (`torch.ops.aten.add.Tensor`).
    pub target: Option<String>,
    pub source: Option<Frame>,
    /// The source line's code, trimmed (as the text quotes it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Why `source` is absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_source: Option<NoSource>,
    /// The 1-based line of the node in the text.
    pub line: usize,
    /// The GE operators it created, in the order written (torchair's `.py` form only).
    pub ge_ops: Vec<String>,
    /// The call's argument text between its parentheses, as printed (read it with
    /// [`parse_call`]); `None` when the line is cut before the closing parenthesis.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<String>,
}

/// A torchair `.py` graph dump read back.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TorchairPyGraph {
    pub nodes: Vec<FxNode>,
    /// GE operators written before any FX node: the graph inputs (`ge.Data`, named after the
    /// FX placeholders).
    pub inputs: Vec<String>,
}

impl TorchairPyGraph {
    /// The FX node that created GE operator `op`.
    pub fn node_of(&self, op: &str) -> Option<&FxNode> {
        self.nodes.iter().find(|n| n.ge_ops.iter().any(|o| o == op))
    }
}

/// Reads a torchair `.py` graph dump. Lines of any other shape are skipped; never fails.
pub fn parse_torchair_py(text: &str) -> TorchairPyGraph {
    let mut g = TorchairPyGraph::default();
    // The `# File` line waiting for its `## FX Code` line (only blank lines may come between).
    let mut pending: Option<(Frame, Option<String>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with("# File \"") {
            pending = torchair_frame(&line[2..]);
            continue;
        }
        if let Some(rest) = line.strip_prefix("## FX Code:") {
            let (name, target, args) = fx_code(rest);
            let (source, code) = pending.take().unzip();
            if name.is_empty() {
                continue;
            }
            g.nodes.push(FxNode {
                no_source: source.is_none().then_some(NoSource::PrintedEarlier),
                name,
                target,
                source,
                code: code.flatten(),
                line: i + 1,
                ge_ops: Vec::new(),
                args,
            });
            continue;
        }
        pending = None;
        if let Some(op) = ge_op(line) {
            match g.nodes.last_mut() {
                Some(n) => n.ge_ops.push(op),
                None => g.inputs.push(op),
            }
        }
    }
    g
}

/// `File "<path>", line <n>, in <fn>    <code>`: a traceback frame and its code glued onto one
/// line (torchair's `# File` line without its `# `).
fn torchair_frame(s: &str) -> Option<(Frame, Option<String>)> {
    let mut f = frame_line(s)?;
    let (function, code) = match f.function.take() {
        Some(rest) => match rest.split_once(char::is_whitespace) {
            Some((fun, code)) => (non_empty(fun), non_empty(code)),
            None => (non_empty(&rest), None),
        },
        None => (None, None),
    };
    f.function = function;
    Some((f, code))
}

fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_string())
}

/// The node name, target and argument text of an `## FX Code:` line's rest:
/// `<node>[: <annotation>] = <target>(<args>)`.
fn fx_code(rest: &str) -> (String, Option<String>, Option<String>) {
    let rest = rest.trim_start();
    let end = rest
        .find(|c: char| c == ':' || c == '=' || c.is_whitespace())
        .unwrap_or(rest.len());
    let name = rest[..end].to_string();
    // The annotation holds no ` = ` (shapes and devices only); the target follows the first.
    let call = rest.split_once(" = ").map(|(_, r)| r);
    (
        name,
        call.and_then(call_target),
        call.and_then(call_args).map(str::to_string),
    )
}

/// `torch.ops.aten.add.Tensor(…)` → `torch.ops.aten.add.Tensor`.
fn call_target(s: &str) -> Option<String> {
    let t = s.split('(').next()?.trim();
    (!t.is_empty()).then(|| t.to_string())
}

/// The text between a call's parentheses: `f(a, [b, c]);  a = None` → `a, [b, c]`. `None`
/// without an opening parenthesis or when the text ends before its match.
fn call_args(s: &str) -> Option<&str> {
    let open = s.find('(')?;
    let inner = &s[open + 1..];
    let end = scan_top_level(inner, |c| c == ')')?;
    Some(&inner[..end])
}

/// The byte offset of the first character of `s` outside brackets and string literals for which
/// `stop` holds; `None` when there is none or a bracket closes that was not opened here.
fn scan_top_level(s: &str, stop: impl Fn(char) -> bool) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in s.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        if depth == 0 && stop(c) {
            return Some(i);
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.checked_sub(1)?,
            _ => {}
        }
    }
    None
}

/// The items of `s` split at its top-level commas, trimmed, empty items dropped (a trailing
/// comma).
fn split_top_level(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s;
    loop {
        match scan_top_level(rest, |c| c == ',') {
            Some(at) => {
                out.push(rest[..at].trim());
                rest = &rest[at + 1..];
            }
            None => {
                out.push(rest.trim());
                break;
            }
        }
    }
    out.retain(|a| !a.is_empty());
    out
}

/// A tensor's meta as torchair's `## FX Code` line annotates an argument:
/// `torch.float32[s0, 8]npu:0` → dtype `float32`, shape `["s0", "8"]`, device `npu:0`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ArgMeta {
    pub dtype: String,
    /// Sizes as printed: a number or a symbol (`s0`).
    pub shape: Vec<String>,
    pub device: Option<String>,
}

/// One argument of an FX node's call, as a graph text prints it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FxArg {
    /// Another node or a graph input, by name (torchair adds its meta: `add: torch.float32[4]npu:0`).
    Node { name: String, meta: Option<ArgMeta> },
    /// A list or tuple holding nodes (`[cat, mm_1]`); `tuple` for parentheses.
    List { items: Vec<FxArg>, tuple: bool },
    /// Anything else, as printed: numbers, `None`, `torch.float16`, `[1, 0]`, strings.
    Literal(String),
}

/// An FX node's call arguments ([`parse_call`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FxCall {
    pub args: Vec<FxArg>,
    pub kwargs: Vec<(String, FxArg)>,
}

/// Lists nested deeper than this are kept as literals.
const MAX_ARG_DEPTH: usize = 16;

/// Reads the argument text of an FX node's call ([`FxNode::args`]): positional arguments, then
/// `key=value` or FX's `key = value` keyword arguments. A name alone (a Python identifier that is
/// not a constant) is a node; torch's dotted constants, numbers, strings and lists of them are
/// literals. Never fails.
///
/// torchair's `## FX Code` line (`fx2ge_converter.py` `converter_context`, `format_node`) prints
/// a node argument as `<name>: <dtype><shape><device>` (`add: torch.float32[s0, 8]npu:0`), a
/// symbolic size as `<name>: "Sym(<expr>)"`, a node without meta by its name, every other
/// value with `str()` — so a string argument is printed without quotes (`rounding_mode=floor`)
/// and reads here as a node without meta; keyword arguments as `key=value`. PyTorch's readable
/// text prints node names bare and other values with `repr()`.
pub fn parse_call(args: &str) -> FxCall {
    let mut call = FxCall::default();
    for item in split_top_level(args) {
        let kw = scan_top_level(item, |c| c == '=')
            .filter(|&at| !item[at + 1..].starts_with('=') && at > 0)
            .map(|at| (item[..at].trim(), item[at + 1..].trim()))
            .filter(|(k, _)| is_identifier(k));
        match kw {
            Some((k, v)) => call.kwargs.push((k.to_string(), arg(v, 0))),
            None => call.args.push(arg(item, 0)),
        }
    }
    call
}

fn arg(s: &str, depth: usize) -> FxArg {
    let s = s.trim();
    let bracket = match (s.chars().next(), s.chars().last()) {
        (Some('['), Some(']')) => Some(false),
        (Some('('), Some(')')) => Some(true),
        _ => None,
    };
    if let Some(tuple) = bracket.filter(|_| depth < MAX_ARG_DEPTH) {
        // Brackets that enclose one list, not `(a)[0]`: the first one closes at the end.
        let body = &s[1..];
        let close = if tuple { ')' } else { ']' };
        if scan_top_level(body, |c| c == close) == Some(body.len() - 1) {
            let items: Vec<FxArg> = split_top_level(&body[..body.len() - 1])
                .into_iter()
                .map(|i| arg(i, depth + 1))
                .collect();
            if items.iter().any(|i| !matches!(i, FxArg::Literal(_))) {
                return FxArg::List { items, tuple };
            }
        }
        return FxArg::Literal(s.to_string());
    }
    let (name, meta) = match s.split_once(": ") {
        // A symbolic size (`sym_size: "Sym(s0)"`): its value is in no text.
        Some((_, m)) if m.trim_start().starts_with('"') => return FxArg::Literal(s.to_string()),
        Some((n, m)) => (n.trim(), arg_meta(m)),
        None => (s, None),
    };
    if is_identifier(name) && !matches!(name, "None" | "True" | "False" | "inf" | "nan") {
        return FxArg::Node {
            name: name.to_string(),
            meta,
        };
    }
    FxArg::Literal(s.to_string())
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `torch.float32[4, 8]npu:0` (or `torch.float32[]cpu`) → its meta; `None` for another shape.
fn arg_meta(s: &str) -> Option<ArgMeta> {
    let s = s.trim();
    let (dtype, rest) = s.split_once('[')?;
    let (shape, device) = rest.split_once(']')?;
    let dtype = dtype.strip_prefix("torch.").unwrap_or(dtype);
    if !is_identifier(dtype) {
        return None;
    }
    let shape = shape
        .split(',')
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect();
    let device = device.trim();
    Some(ArgMeta {
        dtype: dtype.to_string(),
        shape,
        device: (!device.is_empty()).then(|| device.to_string()),
    })
}

/// The GE operator a `.py` line creates: `node_name="X"` when written, else the first output
/// variable of `[X_0, X_1] = ge.Op(…)` without its `_<index>`. `None` for other lines and for
/// operators without outputs (`_ = ge.NetOutput(…)`).
fn ge_op(line: &str) -> Option<String> {
    let (outs, call) = line.split_once(" = ")?;
    call.trim_start().strip_prefix("ge.")?;
    if let Some(at) = call.rfind("node_name=\"") {
        let name = &call[at + "node_name=\"".len()..];
        let name = &name[..name.find('"')?];
        return (!name.is_empty()).then(|| name.to_string());
    }
    let first = outs
        .trim()
        .trim_start_matches('[')
        .split([',', ']'])
        .next()?
        .trim();
    let (op, index) = first.rsplit_once('_')?;
    (!op.is_empty() && is_digits(index)).then(|| op.to_string())
}

/// Reads PyTorch's readable FX text: every node line, each with the frame of the `# File:`
/// comment above it or, without one, the previous node's. Never fails.
pub fn parse_readable(text: &str) -> Vec<FxNode> {
    let mut nodes = Vec::new();
    let mut current: Option<(Frame, Option<String>)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if let Some(rest) = line.strip_prefix("# File: ") {
            current = parse_readable_frame(rest);
            continue;
        }
        if line.starts_with('#') || line.starts_with("def ") || line.starts_with("class ") {
            continue;
        }
        let Some((lhs, rhs)) = line.split_once(" = ") else {
            continue;
        };
        let name = lhs.split(':').next().unwrap_or("").trim();
        if name.is_empty() || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let Some(target) = call_target(rhs) else {
            continue;
        };
        let (source, code) = current.clone().unzip();
        nodes.push(FxNode {
            name: name.to_string(),
            target: Some(target),
            no_source: source.is_none().then_some(NoSource::NotRecorded),
            source,
            code: code.flatten(),
            line: i + 1,
            ge_ops: Vec::new(),
            args: call_args(rhs).map(str::to_string),
        });
    }
    nodes
}

/// `<path>:<line> in <fn>, code: <code>` or `<path>:<line>, code: <code>`.
fn parse_readable_frame(rest: &str) -> Option<(Frame, Option<String>)> {
    let (head, code) = match rest.split_once(", code: ") {
        Some((h, c)) => (h, non_empty(c)),
        None => (rest, None),
    };
    // ` in <fn>` only after `:<line>` (a folder may be named `my in dir`).
    let (location, function) = match head.rsplit_once(" in ") {
        Some((l, f)) if l.rsplit_once(':').is_some_and(|(_, n)| is_digits(n)) => (l, non_empty(f)),
        _ => (head, None),
    };
    let (file, line) = location.rsplit_once(':')?;
    let frame = Frame {
        file: file.to_string(),
        line: line.trim().parse().ok()?,
        function,
    };
    Some((frame, code))
}

/// What torchair's `.pbtxt` graph dump says of one GE operator (`_GraphPbtxt.add_op`:
/// `node { name: "<op>" op: "<type>" … attr { key: "[o]<output>" value { s: "<the output
/// descriptor's protobuf text, escaped>" } } }`): the `_fx_tensor_name` values inside its output
/// descriptors, and its `nn_module_stack` attribute when the user recorded one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PbtxtOp {
    pub name: String,
    /// The raw `_fx_tensor_name` values (`add_1-aten.add.Tensor.OUTPUT.0`), in written order.
    pub fx_tensors: Vec<String>,
    /// The innermost module of `nn_module_stack` ([`module_path`]).
    pub module: Option<String>,
}

/// Reads a torchair `.pbtxt` graph dump: each top-level `node { … }` block with its name and
/// the FX links inside its escaped descriptor strings. Line-based (the writer puts each field on
/// its own line and each escaped descriptor on one); other lines are skipped, never fails.
pub fn parse_pbtxt(text: &str) -> Vec<PbtxtOp> {
    let mut ops: Vec<PbtxtOp> = Vec::new();
    let mut in_node = false;
    let mut named = false;
    // `key: "nn_module_stack"` seen, its `s:` value not yet.
    let mut module_pending = false;
    for raw in text.lines() {
        let line = raw.trim();
        if line == "node {" {
            ops.push(PbtxtOp::default());
            (in_node, named, module_pending) = (true, false, false);
            continue;
        }
        let Some(op) = ops.last_mut().filter(|_| in_node) else {
            continue;
        };
        if !named {
            if let Some(rest) = line.strip_prefix("name: \"") {
                op.name = rest.split('"').next().unwrap_or("").to_string();
                named = true;
                continue;
            }
        }
        let mut rest = line;
        while let Some(at) = rest.find("_fx_tensor_name") {
            rest = &rest[at + "_fx_tensor_name".len()..];
            if let Some(v) = quoted_after(rest, "s: ") {
                op.fx_tensors.push(v.to_string());
            }
        }
        if line.contains("key: \"nn_module_stack\"") {
            module_pending = true;
        }
        if module_pending {
            if let Some(at) = line.find("s: \"") {
                op.module = module_path(&line[at + 4..]);
                module_pending = false;
            }
        }
    }
    ops.retain(|o| !o.name.is_empty());
    ops
}

/// The text after the first `key` in `s`, between the quotes that open it (`"` or `\"`) and the
/// next quote or backslash.
fn quoted_after<'a>(s: &'a str, key: &str) -> Option<&'a str> {
    let rest = &s[s.find(key)? + key.len()..];
    let rest = rest.strip_prefix('\\').unwrap_or(rest).strip_prefix('"')?;
    let end = rest.find(['"', '\\']).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

/// The innermost module of an `nn_module_stack` value as torchair writes it (the Python repr
/// of FX's dict, outermost first: `{'L__self___layer1': ('layer1', <class '…Linear'>)}` or
/// `("L['self'].layer1", …)`): the qualified name of its last entry (`layer1`, `layers.0.mlp`),
/// `None` when there is none.
pub fn module_path(repr: &str) -> Option<String> {
    let mut last = None;
    let mut rest = repr;
    while let Some(at) = rest.find(": (") {
        rest = &rest[at + 3..];
        let r = rest.trim_start_matches('\\');
        let Some(q) = r.chars().next().filter(|c| *c == '\'' || *c == '"') else {
            continue;
        };
        let body = &r[1..];
        // The name ends at its own quote; `L['self'].x` holds the other kind.
        if let Some(end) = body.find([q, '\\']) {
            last = Some(&body[..end]);
        }
    }
    let name = last?;
    let name = name
        .strip_prefix("L['self'].")
        .or_else(|| name.strip_prefix("L[\"self\"]."))
        .unwrap_or(name);
    (!name.is_empty()).then(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Shaped after torchair's documented examples (graph_dump.md, presentation.md): two layers
    /// built from the same source lines, a multi-output operator, graph inputs, NetOutput.
    const PY: &str = r#"# -*- coding: utf-8 -*-
from torch import tensor
from torchair._ge_concrete_graph import ge_apis as ge
from torchair.ge._ge_graph import get_default_ge_graph

arg0_1_0 = ge.Data(index=0, dtype=0, shape=[4, 8], placement="NPU", node_name="arg0_1")
arg1_1_0 = ge.Data(index=1, dtype=0, shape=[8, 8], placement="NPU", node_name="arg1_1")

# File "/home/u/model.py", line 12, in forward    h = torch.relu(self.lin(x))
## FX Code: mm: torch.float32[4, 8]npu:0 = torch.ops.aten.mm.default(arg0_1: torch.float32[4, 8]npu:0, arg1_1: torch.float32[8, 8]npu:0)
MatMulV2_0 = ge.MatMulV2(arg0_1_0, arg1_1_0, None, None, node_name="MatMulV2")

# File "/home/u/model.py", line 13, in forward    h = h * 2.0
## FX Code: mul = torch.ops.aten.mul.Tensor(mm, 2.0)
Mul_0 = ge.Mul(MatMulV2_0, ge.Const(2.0, dtype=0), node_name="Mul")
Cast_0 = ge.Cast(Mul_0, dst_type=1, node_name="Cast")
## FX Code: mm_1: torch.float32[4, 8]npu:0 = torch.ops.aten.mm.default(mul: torch.float32[4, 8]npu:0, arg1_1: torch.float32[8, 8]npu:0)
MatMulV2_1_0 = ge.MatMulV2(Cast_0, arg1_1_0, None, None, node_name="MatMulV2_1")

# File "/usr/lib/python3.11/site-packages/torch/functional.py", line 222, in split    return tensor.split(split_size_or_sections, dim)
## FX Code: split = torch.ops.aten.split.Tensor(mm_1, 4, 1)
[SplitV_0, SplitV_1] = ge.SplitV(MatMulV2_1_0, ge.Const([4, 4], dtype=3), 1, num_split=2)

_ = ge.NetOutput([SplitV_0, SplitV_1], dependencies=[])
"#;

    #[test]
    fn torchair_py_nodes_their_ge_ops_and_lines() {
        let g = parse_torchair_py(PY);
        assert_eq!(g.inputs, ["arg0_1", "arg1_1"]);
        let names: Vec<&str> = g.nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["mm", "mul", "mm_1", "split"]);
        let mm = &g.nodes[0];
        assert_eq!(mm.target.as_deref(), Some("torch.ops.aten.mm.default"));
        assert_eq!(mm.ge_ops, ["MatMulV2"]);
        let src = mm.source.as_ref().unwrap();
        assert_eq!(
            (src.file.as_str(), src.line, src.function.as_deref()),
            ("/home/u/model.py", 12, Some("forward"))
        );
        assert_eq!(mm.code.as_deref(), Some("h = torch.relu(self.lin(x))"));
        assert!(!src.is_library());
        // An FX node that made several GE operators.
        assert_eq!(g.nodes[1].ge_ops, ["Mul", "Cast"]);
        assert_eq!(g.node_of("Cast").map(|n| n.name.as_str()), Some("mul"));
        // The layer-2 node: its line was printed before, and the nearest `# File` above it
        // (line 13, `mul`'s) is not its own.
        let mm1 = &g.nodes[2];
        assert_eq!(mm1.ge_ops, ["MatMulV2_1"]);
        assert_eq!(mm1.source, None);
        assert_eq!(mm1.no_source, Some(NoSource::PrintedEarlier));
        // A multi-output operator without node_name, and a torch frame.
        let split = &g.nodes[3];
        assert_eq!(split.ge_ops, ["SplitV"]);
        assert!(split.source.as_ref().unwrap().is_library());
        assert_eq!(g.node_of("NetOutput"), None);
    }

    #[test]
    fn torchair_py_before_annotations_and_with_one_space() {
        let g = parse_torchair_py(
            "# File \"/npu/test.py\", line 24, in forward x = self.linear1(x)\n\
             ## FX Code: mul = torch.ops.aten.mul.Tensor(select_scatter, 10)\n\
             Mul_0 = ge.Mul(select_scatter_0, ge.Const(10, dtype=9), node_name=\"Mul\")\n",
        );
        let n = &g.nodes[0];
        assert_eq!(n.name, "mul");
        assert_eq!(n.target.as_deref(), Some("torch.ops.aten.mul.Tensor"));
        assert_eq!(n.ge_ops, ["Mul"]);
        assert_eq!(n.code.as_deref(), Some("x = self.linear1(x)"));
        assert_eq!(n.source.as_ref().map(|f| f.line), Some(24));
    }

    const READABLE: &str = r#"class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 4]", primals_2: "f32[8]", primals_3: "f32[2, 4]"):
         # File: /usr/lib/python3/site-packages/torch/nn/modules/linear.py:125 in forward, code: return F.linear(input, self.weight, self.bias)
        permute: "f32[4, 8]" = torch.ops.aten.permute.default(primals_1, [1, 0]);  primals_1 = None
        addmm: "f32[2, 8]" = torch.ops.aten.addmm.default(primals_2, primals_3, permute);  primals_2 = permute = None

         # File: /home/u/model.py:14 in forward, code: return torch.tanh(h) - h
        tanh: "f32[2, 8]" = torch.ops.aten.tanh.default(addmm)
        sub: "f32[2, 8]" = torch.ops.aten.sub.Tensor(tanh, addmm);  tanh = None
        return (sub, addmm)
"#;

    #[test]
    fn readable_nodes_inherit_the_previous_comment() {
        let nodes = parse_readable(READABLE);
        let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
        assert_eq!(names, ["permute", "addmm", "tanh", "sub"]);
        assert!(nodes[1].source.as_ref().unwrap().is_library());
        assert_eq!(nodes[1].source, nodes[0].source);
        let sub = nodes[3].source.as_ref().unwrap();
        assert_eq!(
            (sub.file.as_str(), sub.line, sub.function.as_deref()),
            ("/home/u/model.py", 14, Some("forward"))
        );
        assert_eq!(nodes[3].code.as_deref(), Some("return torch.tanh(h) - h"));
        assert_eq!(
            nodes[3].target.as_deref(),
            Some("torch.ops.aten.sub.Tensor")
        );
        // PyTorch before 2.3: no function.
        let old = parse_readable(
            "# File: /my in dir/m.py:7, code: y = x + 1\nadd = torch.ops.aten.add.Tensor(x, 1)\n",
        );
        let f = old[0].source.as_ref().unwrap();
        assert_eq!(
            (f.file.as_str(), f.line, f.function.as_deref()),
            ("/my in dir/m.py", 7, None)
        );
        assert_eq!(
            parse_readable("x = 1\n")[0].no_source,
            Some(NoSource::NotRecorded)
        );
    }

    #[test]
    fn pbtxt_links_inside_escaped_descriptors() {
        // torchair's `_GraphPbtxt`: every descriptor is one escaped string on one line.
        let text = r#"node {
  name: "arg0_1"
  op: "Data"
}
node {
  name: "Add"
  op: "Add"
  input: "arg0_1:0"
  attr {
    key: "[o]y"
    value {
      s: 'name: "y"\ndtype: DT_FLOAT\nattr {\n  key: "_fx_tensor_name"\n  value {\n    s: "add-aten.add.Tensor.OUTPUT.0"\n  }\n}\n'
    }
  }
  attr {
    key: "nn_module_stack"
    value {
      s: "{'L__self___block': ('block', <class 'm.Block'>), 'L__self___block_fc': ('block.fc', <class 'torch.nn.modules.linear.Linear'>)}"
    }
  }
}
node {
  name: "SplitV"
  attr { key: "[o]y0" value { s: "name: \"y0\"\nattr {\n  key: \"_fx_tensor_name\"\n  value {\n    s: \"split-aten.split.Tensor.OUTPUT.0\"\n  }\n}\n" } }
  attr { key: "[o]y1" value { s: "name: \"y1\"\nattr {\n  key: \"_fx_tensor_name\"\n  value {\n    s: \"split-aten.split.Tensor.OUTPUT.1\"\n  }\n}\n" } }
}
"#;
        let ops = parse_pbtxt(text);
        let names: Vec<&str> = ops.iter().map(|o| o.name.as_str()).collect();
        assert_eq!(names, ["arg0_1", "Add", "SplitV"]);
        assert!(ops[0].fx_tensors.is_empty());
        assert_eq!(ops[1].fx_tensors, ["add-aten.add.Tensor.OUTPUT.0"]);
        assert_eq!(ops[1].module.as_deref(), Some("block.fc"));
        assert_eq!(
            ops[2].fx_tensors,
            [
                "split-aten.split.Tensor.OUTPUT.0",
                "split-aten.split.Tensor.OUTPUT.1"
            ]
        );
    }

    #[test]
    fn module_paths() {
        assert_eq!(
            module_path("{'L__self___l1': (\"L['self'].layers.0.mlp\", 'torch.nn.Linear')}")
                .as_deref(),
            Some("layers.0.mlp")
        );
        assert_eq!(module_path("{}"), None);
        assert_eq!(module_path(": ("), None);
        assert_eq!(module_path("{'a': ('', x)}"), None);
    }

    #[test]
    fn call_arguments_of_both_texts() {
        let g = parse_torchair_py(PY);
        let mm = parse_call(g.nodes[0].args.as_deref().unwrap());
        let meta = |dtype: &str, shape: &[&str]| ArgMeta {
            dtype: dtype.into(),
            shape: shape.iter().map(|d| d.to_string()).collect(),
            device: Some("npu:0".into()),
        };
        assert_eq!(
            mm.args,
            [
                FxArg::Node {
                    name: "arg0_1".into(),
                    meta: Some(meta("float32", &["4", "8"]))
                },
                FxArg::Node {
                    name: "arg1_1".into(),
                    meta: Some(meta("float32", &["8", "8"]))
                },
            ]
        );
        let mul = parse_call(g.nodes[1].args.as_deref().unwrap());
        assert_eq!(
            mul.args,
            [
                FxArg::Node {
                    name: "mm".into(),
                    meta: None
                },
                FxArg::Literal("2.0".into())
            ]
        );
        // The readable text: the call ends before `;  x = None`.
        let nodes = parse_readable(READABLE);
        assert_eq!(nodes[0].args.as_deref(), Some("primals_1, [1, 0]"));
        let permute = parse_call(nodes[0].args.as_deref().unwrap());
        assert_eq!(permute.args[1], FxArg::Literal("[1, 0]".into()));
        // Lists of nodes, keywords in both spellings, torch constants, strings with commas.
        let c = parse_call(
            "[cat: torch.float16[s0, 8]npu:0, mm_1], -1, dtype = torch.float16, \
             name='a, b', eps=1e-05, pin=None, layout=(x, 2)",
        );
        assert_eq!(
            c.args[0],
            FxArg::List {
                items: vec![
                    FxArg::Node {
                        name: "cat".into(),
                        meta: Some(meta("float16", &["s0", "8"]))
                    },
                    FxArg::Node {
                        name: "mm_1".into(),
                        meta: None
                    }
                ],
                tuple: false
            }
        );
        assert_eq!(c.args[1], FxArg::Literal("-1".into()));
        let kw: Vec<&str> = c.kwargs.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(kw, ["dtype", "name", "eps", "pin", "layout"]);
        assert_eq!(c.kwargs[0].1, FxArg::Literal("torch.float16".into()));
        assert_eq!(c.kwargs[1].1, FxArg::Literal("'a, b'".into()));
        assert_eq!(c.kwargs[3].1, FxArg::Literal("None".into()));
        assert!(matches!(c.kwargs[4].1, FxArg::List { tuple: true, .. }));
        // Cut or unbalanced text never panics and keeps what it can.
        assert_eq!(
            parse_torchair_py("## FX Code: a = torch.ops.aten.add.Tensor(x, [y\n").nodes[0].args,
            None
        );
        for s in [
            "",
            ",",
            "[",
            "(]",
            "x == y",
            "'",
            "[[[[",
            "a: ",
            ": b",
            "=x",
            "x: torch.f[",
            "é[ü]",
        ] {
            let _ = parse_call(s);
        }
    }

    #[test]
    fn garbage_and_cut_lines_are_skipped() {
        for text in [
            "# File \"",
            "# File \"a\", line ",
            "## FX Code:",
            "## FX Code: = (",
            "[_0] = ge.X(",
            "x = ge.",
            "# File: :",
            "# File: a:b in , code: ",
            " = f(",
        ] {
            let _ = parse_torchair_py(text);
            let _ = parse_readable(text);
            let _ = parse_pbtxt(text);
            let _ = module_path(text);
        }
        assert!(parse_torchair_py("## FX Code:\n").nodes.is_empty());
    }
}
