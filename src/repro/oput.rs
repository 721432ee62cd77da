//! The runtime-path files: an OpUT case `test_<op>.py` in CANN's `op_test_frame` seed format
//! and a run configuration in the shape msaicerr generates (`triage-and-repro.md` §5.1).
//!
//! Tensor params carry the graph's runtime `shape` / `format` and framework `ori_shape` /
//! `ori_format`; their `value` is the dumped data in the device layout, which is what the
//! kernel binary reads. Non-tensor attributes follow the tensors in graph order: GE dumps store
//! attributes sorted by name and do not record the IR order, so the script says to check it.

use std::fmt::Write as _;

use serde::Serialize;
use serde_json::Value;

use super::case::Case;
use super::io::{np_dtype, rows, IoRow};
use super::pyquote::{comment, py_opt_str, py_str};

/// Kernel and tiling files as placed in the case directory (relative paths).
#[derive(Clone, Debug, Default)]
pub struct RuntimeFiles {
    pub bin: Option<String>,
    pub json: Option<String>,
    pub cce: Option<String>,
    pub tiling_data: Option<String>,
    pub block_dim: Option<i64>,
    pub tiling_key: Option<u64>,
    pub kernel_name: Option<String>,
}

/// A JSON value as a Python literal.
pub fn py_value(v: &Value) -> String {
    match v {
        Value::Null => "None".to_string(),
        Value::Bool(true) => "True".to_string(),
        Value::Bool(false) => "False".to_string(),
        Value::Number(n) => {
            let s = n.to_string();
            match n.as_f64() {
                Some(f) if f.is_nan() => "float(\"nan\")".to_string(),
                Some(f) if f.is_infinite() && f > 0.0 => "float(\"inf\")".to_string(),
                Some(f) if f.is_infinite() => "float(\"-inf\")".to_string(),
                _ => s,
            }
        }
        Value::String(s) => py_str(s),
        Value::Array(a) => format!(
            "[{}]",
            a.iter().map(py_value).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(o) => format!(
            "{{{}}}",
            o.iter()
                .map(|(k, v)| format!("{}: {}", py_str(k), py_value(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn tuple(s: Option<&[i64]>) -> String {
    match s {
        None => "None".to_string(),
        Some([d]) => format!("({d},)"),
        Some(d) => format!(
            "({})",
            d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
        ),
    }
}

fn tensor_param(r: &IoRow, param_type: &str, with_value: bool) -> String {
    let mut s = format!(
        "        {{\"shape\": {}, \"dtype\": {}, \"format\": {}, \"ori_shape\": {}, \"ori_format\": {}, \"param_type\": {}",
        tuple(r.tensor.shape.as_deref()),
        py_opt_str(r.tensor.dtype.as_deref().map(np_dtype).as_deref()),
        py_opt_str(r.tensor.format.as_deref()),
        tuple(r.tensor.ori_shape.as_deref().or(r.tensor.shape.as_deref())),
        py_opt_str(r.tensor.ori_format.as_deref().or(r.tensor.format.as_deref())),
        py_str(param_type),
    );
    let label = comment(
        r.tensor
            .name
            .as_deref()
            .unwrap_or(&r.tensor.index.to_string()),
    );
    match (&r.device_npy, with_value) {
        (Some(f), true) => {
            let _ = write!(
                s,
                ", \"value\": value({})}},  # {param_type} {label}",
                py_str(f)
            );
        }
        (None, true) => {
            let _ = write!(
                s,
                "}},  # {param_type} {label}: not dumped, op_test_frame fills random data"
            );
        }
        _ => {
            let _ = write!(s, "}},  # {param_type} {label}");
        }
    }
    s
}

/// Writes `test_<op>.py`.
pub fn test_script(case: &Case, files: &RuntimeFiles, case_name: &str) -> String {
    let op_type = case.op.as_ref().map(|o| o.op_type.as_str());
    let mut params = String::new();
    for r in rows(case, false) {
        let _ = writeln!(params, "{}", tensor_param(&r, "input", true));
    }
    for r in rows(case, true) {
        let _ = writeln!(params, "{}", tensor_param(&r, "output", false));
    }
    if let Some(op) = &case.op {
        if !op.attrs.is_empty() {
            params.push_str(if op.attrs_order == "ir" {
                "        # Attributes in IR order (the graph's _ir_attr_names):\n"
            } else {
                "        # Attributes in the order the graph lists them (this dump does not record the IR order):\n\
                 \x20       # reorder them to the op's IR definition before running.\n"
            });
        }
        for a in &op.attrs {
            if a.kind == "unset" {
                let _ = writeln!(
                    params,
                    "        None,  # {}: not set in the graph, the IR default applies",
                    comment(&a.name)
                );
                continue;
            }
            if a.kind == "dtype" || a.kind == "list_dtype" {
                let _ = writeln!(
                    params,
                    "        # {} omitted: a framework type parameter, not an operator attribute",
                    comment(&a.name)
                );
                continue;
            }
            let _ = writeln!(
                params,
                "        {},  # {}",
                py_value(&a.value),
                comment(&a.name)
            );
        }
    }
    let bin = match &files.bin {
        Some(b) => format!("os.path.join(HERE, {}),", py_str(b)),
        None => "None,  # kernel .o not found: without bin_path op_test_frame compiles the op"
            .to_string(),
    };
    let mut missing = String::new();
    for m in &case.missing {
        let _ = writeln!(missing, "#   - {}", comment(m));
    }
    if missing.is_empty() {
        missing.push_str("#   (nothing)\n");
    }
    let op_label = case
        .op
        .as_ref()
        .map(|o| o.name.clone())
        .or_else(|| case.target.op_name.clone())
        .or_else(|| case.target.kernel_name.clone())
        .unwrap_or_default();
    format!(
        r#"#!/usr/bin/env python3
# Generated by `npgx repro --path runtime`: single-operator OpUT case for CANN's op_test_frame.
#
# Operator: {op_comment} (GE type {type_comment})
# Kernel: {bin_comment} (op_test_frame finds the kernel JSON by swapping .o for .json)
# What npgx could not find (see README.md):
{missing}#
# Run where CANN and an NPU are present:  python3 {script_hint}
# The same kernel can also be launched with the run configuration in run_config.json.
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    from op_test_frame.ut import OpUT
except ImportError as exc:
    sys.exit("op_test_frame cannot be imported (%s): run this case where CANN's op test frame is installed" % exc)


def value(rel):
    return np.load(os.path.join(HERE, rel))


ut_case = OpUT({op_type}, None, None)

case = {{
    "params": [
{params}    ],
    "case_name": {case_name},
    "expect": "success",
    "bin_path": {bin}
}}
ut_case.add_direct_case(case)

if __name__ == "__main__":
    ut_case.run("all")
"#,
        op_comment = comment(&op_label),
        type_comment = comment(op_type.unwrap_or("unknown")),
        bin_comment = comment(&match (&files.bin, &files.json) {
            (Some(bin), _) => bin.clone(),
            (None, Some(json)) => format!("binary not found (its JSON: {json})"),
            (None, None) => "not found".to_string(),
        }),
        missing = missing,
        script_hint = comment(&format!("test_{case_name}.py")),
        op_type = py_opt_str(op_type),
        params = params,
        case_name = py_str(case_name),
        bin = bin,
    )
}

/// The run configuration: the key set msaicerr generates for its single-op runner. Paths are
/// relative to the case directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    pub cce_file: Option<String>,
    pub bin_path: Option<String>,
    pub json_path: Option<String>,
    pub tiling_data: Option<String>,
    pub tiling_key: Option<u64>,
    pub block_dim: Option<i64>,
    pub input_file_list: Vec<Option<String>>,
    pub output_file_list: Vec<String>,
    pub kernel_name: Option<String>,
}

/// Builds `run_config.json`.
pub fn run_config(case: &Case, files: &RuntimeFiles) -> RunConfig {
    RunConfig {
        cce_file: files.cce.clone(),
        bin_path: files.bin.clone(),
        json_path: files.json.clone(),
        tiling_data: files.tiling_data.clone(),
        tiling_key: files.tiling_key,
        block_dim: files.block_dim,
        input_file_list: rows(case, false)
            .into_iter()
            .map(|r| r.device_npy)
            .collect(),
        output_file_list: rows(case, true)
            .iter()
            .map(|r| format!("run_outputs/output_{}.bin", r.tensor.index))
            .collect(),
        kernel_name: files.kernel_name.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_values_become_python_literals() {
        let v = serde_json::json!([1, -2.5, true, false, null, "a\"b", {"k": [0]}]);
        assert_eq!(
            py_value(&v),
            r#"[1, -2.5, True, False, None, "a\"b", {"k": [0]}]"#
        );
        assert_eq!(tuple(Some(&[3])), "(3,)");
        assert_eq!(tuple(Some(&[])), "()");
        assert_eq!(tuple(None), "None");
    }
}
