//! The accuracy-path script `repro_<op>.py`: load the inputs, run the op on the NPU through
//! torch_npu, run a CPU golden in float64, compare (max abs / rel error, cosine, the thousandth
//! criterion) and print a verdict.
//!
//! The script imports only NumPy at the top. torch and torch_npu are imported inside the NPU
//! step, so on a machine without an NPU the loading, golden and comparison still run and the
//! script says plainly that the NPU part was skipped. Every name from the case reaches the
//! script through [`py_str`]; the op-specific code comes from the fixed table [`OP_TABLE`].

use std::fmt::Write as _;

use super::case::Case;
use super::io::{np_dtype, rows, IoRow};
use super::pyquote::{comment, py_opt_str, py_str};

/// How one GE op type maps to a torch / torch_npu call and a NumPy golden. In both
/// expressions `x` is the list of inputs (torch tensors on the NPU / float64-or-integer NumPy
/// arrays), `A` the op's attributes and `OUT_SHAPES` the graph's logical output shapes; the
/// expression yields one array or a list of them.
pub struct OpMapping {
    pub types: &'static [&'static str],
    pub torch: &'static str,
    pub golden: &'static str,
}

/// The common GE op types. Attribute names are GE's IR names.
pub const OP_TABLE: &[OpMapping] = &[
    OpMapping { types: &["Add", "AddV2"], torch: "torch.add(x[0], x[1])", golden: "x[0] + x[1]" },
    OpMapping { types: &["Sub"], torch: "torch.sub(x[0], x[1])", golden: "x[0] - x[1]" },
    OpMapping { types: &["Mul"], torch: "torch.mul(x[0], x[1])", golden: "x[0] * x[1]" },
    OpMapping { types: &["RealDiv", "Div"], torch: "torch.div(x[0], x[1])", golden: "x[0] / x[1]" },
    OpMapping { types: &["Maximum"], torch: "torch.maximum(x[0], x[1])", golden: "np.maximum(x[0], x[1])" },
    OpMapping { types: &["Minimum"], torch: "torch.minimum(x[0], x[1])", golden: "np.minimum(x[0], x[1])" },
    OpMapping { types: &["Pow"], torch: "torch.pow(x[0], x[1])", golden: "np.power(x[0], x[1])" },
    OpMapping { types: &["Relu"], torch: "torch.relu(x[0])", golden: "np.maximum(x[0], 0)" },
    OpMapping { types: &["Sigmoid"], torch: "torch.sigmoid(x[0])", golden: "1.0 / (1.0 + np.exp(-x[0]))" },
    OpMapping { types: &["Tanh"], torch: "torch.tanh(x[0])", golden: "np.tanh(x[0])" },
    OpMapping { types: &["Exp"], torch: "torch.exp(x[0])", golden: "np.exp(x[0])" },
    OpMapping { types: &["Log"], torch: "torch.log(x[0])", golden: "np.log(x[0])" },
    OpMapping { types: &["Sqrt"], torch: "torch.sqrt(x[0])", golden: "np.sqrt(x[0])" },
    OpMapping { types: &["Rsqrt"], torch: "torch.rsqrt(x[0])", golden: "1.0 / np.sqrt(x[0])" },
    OpMapping { types: &["Abs"], torch: "torch.abs(x[0])", golden: "np.abs(x[0])" },
    OpMapping { types: &["Neg"], torch: "torch.neg(x[0])", golden: "-x[0]" },
    OpMapping { types: &["Square"], torch: "torch.square(x[0])", golden: "np.square(x[0])" },
    OpMapping { types: &["Reciprocal"], torch: "torch.reciprocal(x[0])", golden: "1.0 / x[0]" },
    OpMapping { types: &["Equal"], torch: "torch.eq(x[0], x[1])", golden: "np.equal(x[0], x[1])" },
    OpMapping { types: &["Cast"], torch: "x[0].to(torch_dtype(OUT_DTYPES[0]))", golden: "x[0].astype(np_dtype(OUT_DTYPES[0]))" },
    OpMapping {
        types: &["MatMul", "MatMulV2"],
        torch: "mm(torch.matmul(tr(x[0], A.get(\"transpose_x1\", False)), tr(x[1], A.get(\"transpose_x2\", False))), x[2] if len(x) > 2 else None)",
        golden: "mm(np.matmul(tr(x[0], A.get(\"transpose_x1\", False)), tr(x[1], A.get(\"transpose_x2\", False))), x[2] if len(x) > 2 else None)",
    },
    OpMapping {
        types: &["BatchMatMul", "BatchMatMulV2"],
        torch: "mm(torch.matmul(tr(x[0], A.get(\"adj_x1\", False)), tr(x[1], A.get(\"adj_x2\", False))), x[2] if len(x) > 2 else None)",
        golden: "mm(np.matmul(tr(x[0], A.get(\"adj_x1\", False)), tr(x[1], A.get(\"adj_x2\", False))), x[2] if len(x) > 2 else None)",
    },
    OpMapping {
        types: &["SoftmaxV2", "Softmax"],
        torch: "torch.softmax(x[0], dim=list(A.get(\"axes\", [-1]))[0])",
        golden: "softmax(x[0], tuple(A.get(\"axes\", [-1])))",
    },
    OpMapping {
        types: &["ReduceSumD", "ReduceSum"],
        torch: "torch.sum(x[0], dim=axes_of(x), keepdim=bool(A.get(\"keep_dims\", False)))",
        golden: "np.sum(x[0], axis=axes_of(x), keepdims=bool(A.get(\"keep_dims\", False)))",
    },
    OpMapping {
        types: &["ReduceMeanD", "ReduceMean"],
        torch: "torch.mean(x[0], dim=axes_of(x), keepdim=bool(A.get(\"keep_dims\", False)))",
        golden: "np.mean(x[0], axis=axes_of(x), keepdims=bool(A.get(\"keep_dims\", False)))",
    },
    OpMapping {
        types: &["ReduceMaxD", "ReduceMax"],
        torch: "torch.amax(x[0], dim=axes_of(x), keepdim=bool(A.get(\"keep_dims\", False)))",
        golden: "np.max(x[0], axis=axes_of(x), keepdims=bool(A.get(\"keep_dims\", False)))",
    },
    OpMapping {
        types: &["GatherV2D", "GatherV2"],
        torch: "gather_v2_torch(x[0], x[1], axis_of(x, 2))",
        golden: "np.take(x[0], x[1].astype(np.int64), axis=axis_of(x, 2))",
    },
    OpMapping {
        types: &["TransposeD", "Transpose"],
        torch: "x[0].permute(*perm_of(x))",
        golden: "np.transpose(x[0], perm_of(x))",
    },
    OpMapping {
        types: &["ConcatD", "ConcatV2D"],
        torch: "torch.cat(list(x), dim=int(A.get(\"concat_dim\", 0)))",
        golden: "np.concatenate(x, axis=int(A.get(\"concat_dim\", 0)))",
    },
    OpMapping {
        types: &["Reshape"],
        torch: "torch.reshape(x[0], OUT_SHAPES[0])",
        golden: "np.reshape(x[0], OUT_SHAPES[0])",
    },
];

/// The table entry for a GE op type.
pub fn mapping(op_type: &str) -> Option<&'static OpMapping> {
    OP_TABLE.iter().find(|m| m.types.contains(&op_type))
}

fn py_shape(s: Option<&[i64]>) -> String {
    match s {
        None => "None".to_string(),
        Some([d]) => format!("({d},)"),
        Some(dims) => format!(
            "({})",
            dims.iter()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn io_entries(rows: &[IoRow], with_files: bool) -> String {
    let mut s = String::from("[\n");
    for r in rows {
        let dtype = r.tensor.dtype.as_deref().map(np_dtype);
        let file = if with_files { r.npy.as_deref() } else { None };
        let _ = writeln!(
            s,
            "    {{\"index\": {}, \"name\": {}, \"file\": {}, \"dtype\": {}, \"shape\": {}}},",
            r.tensor.index,
            py_opt_str(r.tensor.name.as_deref()),
            py_opt_str(file),
            py_opt_str(dtype.as_deref()),
            py_shape(r.logical_shape()),
        );
    }
    s.push(']');
    s
}

/// Writes `repro_<op>.py` for the case.
pub fn script(case: &Case) -> String {
    let inputs = rows(case, false);
    let outputs = rows(case, true);
    let op_name = case
        .op
        .as_ref()
        .map(|o| o.name.as_str())
        .or(case.target.op_name.as_deref())
        .or(case.target.kernel_name.as_deref())
        .unwrap_or("unknown");
    let op_type = case
        .op
        .as_ref()
        .map(|o| o.op_type.clone())
        .or_else(|| case.dump.as_ref().and_then(|d| d.op_type.clone()));
    let attrs = case.op.as_ref().map_or_else(
        || "{}".to_string(),
        |op| {
            let mut s = String::from("{\n");
            for a in &op.attrs {
                let _ = writeln!(
                    s,
                    "    {}: json.loads({}),",
                    py_str(&a.name),
                    py_str(&a.value.to_string())
                );
            }
            s.push('}');
            s
        },
    );
    let out_dtypes: Vec<String> = outputs
        .iter()
        .map(|r| py_opt_str(r.tensor.dtype.as_deref().map(np_dtype).as_deref()))
        .collect();
    let out_shapes: Vec<String> = outputs
        .iter()
        .map(|r| py_shape(r.logical_shape()))
        .collect();
    let mapped = op_type.as_deref().and_then(mapping);
    let signature = inputs
        .iter()
        .map(|r| {
            format!(
                "#   input {} {}: {} {}",
                r.tensor.index,
                comment(r.tensor.name.as_deref().unwrap_or("?")),
                r.tensor
                    .dtype
                    .as_deref()
                    .map_or_else(|| "?".to_string(), np_dtype),
                py_shape(r.logical_shape())
            )
        })
        .chain(case.op.iter().flat_map(|op| {
            op.attrs.iter().map(|a| {
                format!(
                    "#   attr {} ({}) = {}",
                    comment(&a.name),
                    a.kind,
                    comment(&a.value.to_string())
                )
            })
        }))
        .chain(outputs.iter().map(|r| {
            format!(
                "#   output {}: {} {}",
                r.tensor.index,
                r.tensor
                    .dtype
                    .as_deref()
                    .map_or_else(|| "?".to_string(), np_dtype),
                py_shape(r.logical_shape())
            )
        }))
        .collect::<Vec<_>>()
        .join("\n");
    let (npu_body, golden_body) = match mapped {
        Some(m) => (
            format!("    return {}", m.torch),
            format!("    return {}", m.golden),
        ),
        None => (
            format!(
                "    # PLACEHOLDER: npgx has no torch_npu mapping for GE op type {}.\n\
                 # Write the torch / torch_npu call for this signature:\n{signature}\n\
                 \x20   raise NotImplementedError(\"no torch_npu call for op type \" + repr(OP_TYPE))",
                comment(op_type.as_deref().unwrap_or("unknown"))
            ),
            format!(
                "    # PLACEHOLDER: npgx has no CPU golden for GE op type {}.\n\
                 # Write it in NumPy (float64) for this signature:\n{signature}\n\
                 \x20   raise NotImplementedError(\"no CPU golden for op type \" + repr(OP_TYPE))",
                comment(op_type.as_deref().unwrap_or("unknown"))
            ),
        ),
    };
    let mut missing = String::new();
    for m in &case.missing {
        let _ = writeln!(missing, "#   - {}", comment(m));
    }
    if missing.is_empty() {
        missing.push_str("#   (nothing)\n");
    }
    let mapped = if mapped.is_some() { "True" } else { "False" };
    fill(
        TEMPLATE,
        &[
            ("@OP_NAME_COMMENT@", comment(op_name)),
            (
                "@OP_TYPE_COMMENT@",
                comment(op_type.as_deref().unwrap_or("unknown")),
            ),
            ("# @MISSING@\n", missing),
            ("__OP_NAME__", py_str(op_name)),
            ("__OP_TYPE__", py_opt_str(op_type.as_deref())),
            ("__MAPPED__", mapped.to_string()),
            ("__INPUTS__", io_entries(&inputs, true)),
            ("__OUTPUTS__", io_entries(&outputs, true)),
            ("__ATTRS__", attrs),
            ("__OUT_DTYPES__", format!("[{}]", out_dtypes.join(", "))),
            ("__OUT_SHAPES__", format!("[{}]", out_shapes.join(", "))),
            ("    __NPU_BODY__", npu_body),
            ("    __GOLDEN_BODY__", golden_body),
        ],
    )
}

/// Replaces each placeholder of `template` by its value in one pass, so a value that happens to
/// contain a placeholder's text (an op name from a graph file) is never substituted again.
pub(crate) fn fill(template: &str, values: &[(&str, String)]) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    loop {
        let next = values
            .iter()
            .filter_map(|(k, v)| rest.find(k).map(|i| (i, *k, v)))
            .min_by_key(|&(i, k, _)| (i, std::cmp::Reverse(k.len())));
        let Some((i, k, v)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i]);
        out.push_str(v);
        rest = &rest[i + k.len()..];
    }
}

/// The script, a real Python file so it can be read, linted and compiled on its own. Values
/// go in through [`fill`]: `__NAME__` placeholders stand where Python expects an expression or a
/// statement (so the template compiles as it is), `@NAME@` ones inside comments.
const TEMPLATE: &str = include_str!("accuracy_template.py");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_once() {
        let got = fill(
            "a = __A__\nb = __B__  # @C@\n",
            &[
                ("__A__", "'__B__'".into()),
                ("__B__", "2".into()),
                ("@C@", "@C@!".into()),
            ],
        );
        assert_eq!(got, "a = '__B__'\nb = 2  # @C@!\n");
    }

    #[test]
    fn every_placeholder_of_the_template_is_filled() {
        for p in [
            "@OP_NAME_COMMENT@",
            "@OP_TYPE_COMMENT@",
            "# @MISSING@\n",
            "__OP_NAME__",
            "__OP_TYPE__",
            "__MAPPED__",
            "__INPUTS__",
            "__OUTPUTS__",
            "__ATTRS__",
            "__OUT_DTYPES__",
            "__OUT_SHAPES__",
            "    __NPU_BODY__",
            "    __GOLDEN_BODY__",
        ] {
            assert_eq!(TEMPLATE.matches(p).count(), 1, "{p}");
        }
    }

    #[test]
    fn every_type_maps_once() {
        let mut seen = std::collections::HashSet::new();
        for m in OP_TABLE {
            for t in m.types {
                assert!(seen.insert(*t), "{t} listed twice");
            }
        }
        assert_eq!(
            mapping("AddV2").map(|m| m.torch),
            Some("torch.add(x[0], x[1])")
        );
        assert!(mapping("FlashAttentionScore").is_none());
    }
}
