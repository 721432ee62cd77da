//! The single-op repro of an FX node found by `triage bisect`'s node search:
//! `repro_g<graph>_<node>.py` builds the node's op with the recorded input shapes, dtypes and
//! strides (seeded data, or the dumped `.pt` values copied next to it), runs it eagerly and
//! through `torch.compile(backend="npugraph_ex", options=…)` and compares. Written by the node
//! search into `bisect/`, and by `npgx repro --fx-node RESULT.json -o DIR` from a saved result.
//!
//! Names reach the script as string literals ([`py_str`]); the call itself is the Python
//! expression npgx's wrapper backend recorded from the graph (`F(T[0], 2.0)`), accepted only
//! when it is one line.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;

use super::accuracy::fill;
use super::pyquote::{comment, file_stem, py_opt_str, py_str};
use crate::fx::{Dim, FxNode};

const TEMPLATE: &str = include_str!("fx_node_template.py");

/// The script's file name for `node`.
pub fn file_name(node: &FxNode) -> String {
    format!("repro_g{}_{}.py", node.graph, file_stem(&node.name))
}

/// The script for `node`; `dumps[i]` is the file name (relative to the script) of input `i`'s
/// dumped value, `expected` the files of the outputs a run dumped for these inputs (`.npy`).
pub fn script(
    node: &FxNode,
    options: &str,
    dumps: &[Option<String>],
    expected: &[String],
) -> String {
    let call_ok = node.rebuildable && !node.call.contains(['\n', '\r']);
    let call = if call_ok {
        node.call.clone()
    } else {
        "None".to_string()
    };
    let mut inputs = String::from("[\n");
    for (i, t) in node.inputs.iter().enumerate() {
        let shape: Vec<String> = t
            .shape
            .iter()
            .map(|d| match d {
                Dim::Size(n) => n.to_string(),
                Dim::Symbol(s) => py_str(s),
            })
            .collect();
        let stride = t.stride.as_ref().map_or("None".to_string(), |s| {
            format!(
                "[{}]",
                s.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        });
        inputs.push_str(&format!(
            "    {{\"shape\": [{}], \"dtype\": {}, \"stride\": {stride}, \"file\": {}}},  # {}\n",
            shape.join(", "),
            py_str(&t.dtype),
            py_opt_str(dumps.get(i).and_then(|d| d.as_deref())),
            comment(t.producer.as_deref().unwrap_or("?")),
        ));
    }
    inputs.push(']');
    let source = node.source.as_ref().map_or("unknown".to_string(), |s| {
        format!(
            "{}:{} in {}(): {}",
            s.file.display(),
            s.line,
            s.function,
            s.code
        )
    });
    fill(
        TEMPLATE,
        &[
            ("@NODE_COMMENT@", comment(&node.name)),
            ("@GRAPH@", node.graph.to_string()),
            ("@OP_COMMENT@", comment(&node.op)),
            ("@TARGET_COMMENT@", comment(&node.target)),
            ("@SOURCE_COMMENT@", comment(&source)),
            ("__NODE__", py_str(&node.label())),
            ("__TARGET__", py_str(&node.target)),
            (
                "__REBUILDABLE__",
                if call_ok { "True" } else { "False" }.to_string(),
            ),
            ("__OPTIONS__", options.to_string()),
            ("__INPUTS__", inputs),
            (
                "__EXPECTED__",
                format!(
                    "[{}]",
                    expected
                        .iter()
                        .map(|e| py_str(e))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ),
            ("__CALL__", call),
        ],
    )
}

/// Writes the repro of `node` into `dir` (and copies its dumped inputs there as
/// `<stem>_input<i>.pt`); returns the script's path.
pub fn write(node: &FxNode, options: &str, dir: &Path) -> anyhow::Result<PathBuf> {
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = file_name(node);
    let stem = name.trim_end_matches(".py");
    let mut dumps = Vec::with_capacity(node.inputs.len());
    for (i, t) in node.inputs.iter().enumerate() {
        dumps.push(match &t.dump {
            Some(src) => {
                let file = format!("{stem}_input{i}.pt");
                fs::copy(src, dir.join(&file)).with_context(|| {
                    format!("cannot copy {} into {}", src.display(), dir.display())
                })?;
                Some(file)
            }
            None => None,
        });
    }
    let path = dir.join(&name);
    crate::output::write(&path, script(node, options, &dumps, &[]).as_bytes())?;
    Ok(path)
}

/// `npgx repro --fx-node FILE -o DIR`: the repro of every node of a saved search
/// ([`crate::triage::nodes::load`]).
pub fn write_all(nodes: &[FxNode], options: &str, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    nodes.iter().map(|n| write(n, options, out)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fx::TensorMeta;

    fn node(call: &str) -> FxNode {
        FxNode {
            graph: 1,
            index: 2,
            name: "t\"x".into(),
            op: "call_function".into(),
            target: "torch.tanh".into(),
            inputs: vec![TensorMeta {
                shape: vec![Dim::Size(4), Dim::Symbol("s0".into())],
                dtype: "float16".into(),
                stride: Some(vec![8, 1]),
                producer: Some("s_1\nx".into()),
                dump: None,
            }],
            output: None,
            source: None,
            call: call.into(),
            rebuildable: true,
        }
    }

    #[test]
    fn every_placeholder_is_filled_and_names_are_quoted() {
        let s = script(&node("F(T[0])"), "{\"inplace_pass\": False}", &[None], &[]);
        for p in [
            "__NODE__",
            "__TARGET__",
            "__CALL__",
            "__INPUTS__",
            "__EXPECTED__",
            "@GRAPH@",
        ] {
            assert!(!s.contains(p), "{p} left in:\n{s}");
        }
        assert!(s.contains("NODE = \"g1:t\\\"x (torch.tanh)\""), "{s}");
        assert!(s.contains("    return F(T[0])\n"), "{s}");
        assert!(s.contains("{\"shape\": [4, \"s0\"], \"dtype\": \"float16\", \"stride\": [8, 1], \"file\": None},  # s_1?x"), "{s}");
        assert!(s.contains("OPTIONS = {\"inplace_pass\": False}"), "{s}");
        assert_eq!(file_name(&node("F()")), "repro_g1_t_x.py");
    }

    #[test]
    fn a_call_on_several_lines_is_not_spliced() {
        let s = script(&node("F(T[0])\nimport os"), "{}", &[None], &[]);
        assert!(s.contains("REBUILDABLE = False"), "{s}");
        assert!(!s.contains("import os\n    "), "{s}");
    }
}
