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
        let dtype = r.dtype.as_deref().map(np_dtype);
        let file = if with_files { r.npy.as_deref() } else { None };
        let _ = writeln!(
            s,
            "    {{\"index\": {}, \"name\": {}, \"file\": {}, \"dtype\": {}, \"shape\": {}}},",
            r.index,
            py_opt_str(r.name.as_deref()),
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
        .map(|r| py_opt_str(r.dtype.as_deref().map(np_dtype).as_deref()))
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
                r.index,
                comment(r.name.as_deref().unwrap_or("?")),
                r.dtype.as_deref().map_or_else(|| "?".to_string(), np_dtype),
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
                r.index,
                r.dtype.as_deref().map_or_else(|| "?".to_string(), np_dtype),
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
    TEMPLATE
        .replace("@OP_NAME_COMMENT@", &comment(op_name))
        .replace(
            "@OP_TYPE_COMMENT@",
            &comment(op_type.as_deref().unwrap_or("unknown")),
        )
        .replace("@MISSING@", missing.trim_end())
        .replace("@OP_NAME@", &py_str(op_name))
        .replace("@OP_TYPE@", &py_opt_str(op_type.as_deref()))
        .replace("@MAPPED@", if mapped.is_some() { "True" } else { "False" })
        .replace("@INPUTS@", &io_entries(&inputs, true))
        .replace("@OUTPUTS@", &io_entries(&outputs, true))
        .replace("@ATTRS@", &attrs)
        .replace("@OUT_DTYPES@", &format!("[{}]", out_dtypes.join(", ")))
        .replace("@OUT_SHAPES@", &format!("[{}]", out_shapes.join(", ")))
        .replace("@NPU_BODY@", &npu_body)
        .replace("@GOLDEN_BODY@", &golden_body)
}

const TEMPLATE: &str = r#"#!/usr/bin/env python3
# Generated by `npgx repro --path accuracy`: single-operator accuracy check.
#
# Operator: @OP_NAME_COMMENT@ (GE type @OP_TYPE_COMMENT@)
# What npgx could not find (see README.md):
@MISSING@
#
# Steps: load the inputs (inputs/*.npy, dumped by the graph run), compute a CPU golden in
# float64, compare the dumped outputs (outputs/*.npy) with it, run the operator alone on the
# NPU through torch_npu and compare that too. Without torch_npu or an NPU the NPU step is
# skipped and the script says so.
#
# Usage: python3 repro_<op>.py [--json] [--skip-npu] [--device N]
# Exit status: 0 every comparison passed, 1 a comparison failed, 3 nothing could be compared.
#
# Criteria (per output): max abs error, max rel error, cosine similarity and the thousandth
# criterion (share of elements whose error is within 0.001 of max(|golden|, 1)). An output
# passes when at least 99.9 % of its elements are within the tolerance (0.001; 0.004 for
# bfloat16, whose rounding alone exceeds 0.001), the cosine is at least 0.999 and NaN / Inf
# positions agree. Integer and bool outputs must be equal.
import argparse
import json
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OP_NAME = @OP_NAME@
OP_TYPE = @OP_TYPE@
MAPPED = @MAPPED@
# file: .npy relative to this script (None: not dumped); dtype: the operator's dtype
# (bfloat16 data is stored as float32 in .npy); shape: logical shape from the graph.
INPUTS = @INPUTS@
OUTPUTS = @OUTPUTS@
A = @ATTRS@
OUT_DTYPES = @OUT_DTYPES@
OUT_SHAPES = @OUT_SHAPES@
THOUSANDTH = 1e-3
PASS_SHARE = 0.999
MIN_COSINE = 0.999


def np_dtype(name):
    if name in (None, "bfloat16"):
        return np.float32
    return np.dtype(name)


def torch_dtype(name):
    import torch

    return {
        "float16": torch.float16,
        "float32": torch.float32,
        "float64": torch.float64,
        "bfloat16": torch.bfloat16,
        "int8": torch.int8,
        "uint8": torch.uint8,
        "int16": torch.int16,
        "int32": torch.int32,
        "int64": torch.int64,
        "bool": torch.bool,
    }[name]


def tr(a, flag):
    if not flag:
        return a
    if isinstance(a, np.ndarray):
        return np.swapaxes(a, -1, -2)
    return a.transpose(-1, -2)


def mm(product, bias):
    return product if bias is None else product + bias


def softmax(a, axes):
    e = np.exp(a - np.max(a, axis=axes, keepdims=True))
    return e / np.sum(e, axis=axes, keepdims=True)


def as_ints(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    return [int(i) for i in (v if isinstance(v, (list, tuple)) else [v])]


def axes_of(x):
    axes = A["axes"] if "axes" in A else (as_ints(x[1]) if len(x) > 1 else None)
    return None if axes in (None, []) else tuple(as_ints(axes))


def axis_of(x, pos):
    return int(A["axis"]) if "axis" in A else as_ints(x[pos])[0]


def perm_of(x):
    return tuple(as_ints(A["perm"] if "perm" in A else x[1]))


def gather_v2_torch(params, indices, axis):
    import torch

    flat = torch.index_select(params, axis, indices.reshape(-1).long())
    shape = list(params.shape[:axis]) + list(indices.shape) + list(params.shape[axis + 1:])
    return flat.reshape(shape)


def load(entries, what, rng):
    arrays = []
    for e in entries:
        if e["file"] is not None:
            arrays.append(np.load(os.path.join(HERE, e["file"])))
            continue
        if e["shape"] is None or e["dtype"] is None:
            raise SystemExit("%s %d has neither dumped data nor a shape and dtype: cannot build it" % (what, e["index"]))
        dt = np_dtype(e["dtype"])
        if np.issubdtype(dt, np.floating):
            arrays.append(rng.uniform(-1.0, 1.0, size=e["shape"]).astype(dt))
        else:
            arrays.append(np.zeros(e["shape"], dtype=dt))
        print("note: %s %d was not dumped; using %s data of shape %s"
              % (what, e["index"], "random" if np.issubdtype(dt, np.floating) else "zero", e["shape"]))
    return arrays


def npu_call(x):
    import torch  # noqa: F401
@NPU_BODY@


def golden(x):
@GOLDEN_BODY@


def as_list(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def compare(label, index, actual, reference, dtype):
    a = np.asarray(actual)
    r = np.asarray(reference)
    res = {"comparison": label, "output": index, "dtype": dtype}
    if a.shape != r.shape:
        if a.size == r.size:
            a = a.reshape(r.shape)
        else:
            res.update(ok=False, reason="shape %s differs from %s" % (list(a.shape), list(r.shape)))
            return res
    res["elements"] = int(r.size)
    if not (np.issubdtype(r.dtype, np.floating) or np.issubdtype(a.dtype, np.floating)
            or np.issubdtype(r.dtype, np.complexfloating)):
        bad = int(np.count_nonzero(a != r))
        res.update(ok=bad == 0, mismatches=bad)
        return res
    a = a.astype(np.float64)
    r = r.astype(np.float64)
    nan_bad = int(np.count_nonzero(np.isnan(a) != np.isnan(r)))
    inf_bad = int(np.count_nonzero(np.isinf(a) != np.isinf(r))
                  + np.count_nonzero(np.isinf(a) & np.isinf(r) & (np.sign(a) != np.sign(r))))
    fin = np.isfinite(a) & np.isfinite(r)
    af, rf = a[fin], r[fin]
    err = np.abs(af - rf)
    scale = np.maximum(np.abs(rf), 1.0)
    rel = np.divide(err, np.abs(rf), out=np.zeros_like(err), where=np.abs(rf) > 0)
    tol = 4e-3 if dtype == "bfloat16" else THOUSANDTH
    n = max(int(fin.sum()), 1)
    na, nr = float(np.linalg.norm(af)), float(np.linalg.norm(rf))
    if na == 0.0 and nr == 0.0:
        cosine = 1.0
    elif na == 0.0 or nr == 0.0:
        cosine = 0.0
    else:
        cosine = float(np.dot(af, rf) / (na * nr))
    within = float(np.count_nonzero(err <= tol * scale)) / n
    res.update(
        max_abs_error=float(err.max()) if err.size else 0.0,
        max_rel_error=float(rel.max()) if rel.size else 0.0,
        cosine=cosine,
        thousandth=float(np.count_nonzero(err <= THOUSANDTH * scale)) / n,
        tolerance=tol,
        within_tolerance=within,
        nan_mismatches=nan_bad,
        inf_mismatches=inf_bad,
    )
    res["ok"] = within >= PASS_SHARE and cosine >= MIN_COSINE and nan_bad == 0 and inf_bad == 0
    return res


def to_golden_input(a):
    return a.astype(np.float64) if np.issubdtype(a.dtype, np.floating) else a


def run_npu(arrays, device):
    try:
        import torch
        import torch_npu  # noqa: F401
    except Exception as exc:  # ImportError, or a broken CANN install
        return None, "torch_npu cannot be imported (%s: %s)" % (type(exc).__name__, exc)
    if not torch.npu.is_available():
        return None, "torch_npu is installed but no NPU device is available"
    torch.npu.set_device(device)
    x = []
    for e, a in zip(INPUTS, arrays):
        t = torch.from_numpy(np.ascontiguousarray(a))
        if e["dtype"] == "bfloat16":
            t = t.to(torch.bfloat16)
        x.append(t.npu())
    outs = as_list(npu_call(x))
    torch.npu.synchronize()
    result = []
    for o in outs:
        o = o.detach().cpu()
        result.append(o.float().numpy() if o.dtype == torch.bfloat16 else o.numpy())
    return result, None


def main():
    ap = argparse.ArgumentParser(description="Single-operator accuracy check for " + OP_NAME)
    ap.add_argument("--json", action="store_true", help="print the results as one JSON object")
    ap.add_argument("--skip-npu", action="store_true", help="do not try the NPU step")
    ap.add_argument("--device", type=int, default=0, help="NPU device id (default 0)")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    x = load(INPUTS, "input", rng)
    dumped = [np.load(os.path.join(HERE, e["file"])) if e["file"] else None for e in OUTPUTS]
    results = []
    notes = []
    gold = None
    try:
        gold = [np.asarray(g) for g in as_list(golden([to_golden_input(a) for a in x]))]
    except NotImplementedError as exc:
        notes.append("CPU golden skipped: %s (edit golden() in this script)" % exc)
    if gold is not None:
        for i, (e, d) in enumerate(zip(OUTPUTS, dumped)):
            if d is not None and i < len(gold):
                results.append(compare("dump_vs_golden", i, d, gold[i], e["dtype"]))
    npu = None
    if args.skip_npu:
        reason = "--skip-npu given"
    else:
        try:
            npu, reason = run_npu(x, args.device)
        except NotImplementedError as exc:
            npu, reason = None, "%s (edit npu_call() in this script)" % exc
        except Exception as exc:  # the operator itself failed on the NPU: that is a finding
            traceback.print_exc()
            results.append({"comparison": "npu_run", "output": -1, "ok": False,
                            "reason": "the operator raised %s: %s" % (type(exc).__name__, exc)})
            npu, reason = None, None
            notes.append("NPU run FAILED: %s: %s (traceback on stderr)" % (type(exc).__name__, exc))
    if npu is None:
        if reason is not None:
            notes.append("NPU part SKIPPED: " + reason)
    else:
        for i, e in enumerate(OUTPUTS):
            if i >= len(npu):
                break
            if gold is not None and i < len(gold):
                results.append(compare("npu_vs_golden", i, npu[i], gold[i], e["dtype"]))
            if dumped[i] is not None:
                results.append(compare("npu_vs_dump", i, npu[i], dumped[i], e["dtype"]))
    if not results:
        verdict = "INCOMPLETE"
    elif all(r["ok"] for r in results):
        verdict = "PASS"
    else:
        verdict = "FAIL"
    report = {"op_name": OP_NAME, "op_type": OP_TYPE, "npu_ran": npu is not None,
              "results": results, "notes": notes, "verdict": verdict}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print("operator %s (type %s)" % (OP_NAME, OP_TYPE))
        for n in notes:
            print(n)
        for r in results:
            if "reason" in r:
                detail = r["reason"]
            elif "mismatches" in r:
                detail = "%d mismatching elements" % r["mismatches"]
            else:
                detail = ("max_abs=%.6g max_rel=%.6g cosine=%.6f thousandth=%.4f%% within_tol=%.4f%% nan/inf mismatches=%d/%d"
                          % (r["max_abs_error"], r["max_rel_error"], r["cosine"], 100 * r["thousandth"],
                             100 * r["within_tolerance"], r["nan_mismatches"], r["inf_mismatches"]))
            print("%-15s output %d: %s  %s" % (r["comparison"], r["output"], "ok  " if r["ok"] else "FAIL", detail))
        print("verdict: " + verdict)
    return {"PASS": 0, "FAIL": 1}.get(verdict, 3)


if __name__ == "__main__":
    sys.exit(main())
"#;

#[cfg(test)]
mod tests {
    use super::*;

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
