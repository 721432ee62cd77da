//! Finding the operator in a GE graph dump and reading its facts (`dump-data.md` §8.4).
//!
//! Given a directory, the candidates are the `ge_proto_<seq>_Build.txt` files, highest sequence
//! first (the post-build graph carries kernel names; msaicerr takes the highest), then the
//! `*_PreRunAfterBuild.txt` stages. A collection can hold the graphs of several models, so the
//! next file is tried when the op is not in the first. Matching (node name, GE task kernel name
//! `«a»_«b»_«c»_«node»`, `_kernelname` / `<op>_kernelname` attributes with `__kernel0`,
//! `_mix_aic/_mix_aiv` and tiling-key suffixes) is the GE graph parser's
//! [`GeModel::find_kernel`].

use std::path::{Path, PathBuf};

use npgx_parsers::ge_graph::{self, AttrValue, GeModel, KernelMatch, Op, TensorDesc};

use super::case::{AttrFacts, OpFacts, TensorFacts};

/// Graph files larger than this are not read.
const MAX_GRAPH_LEN: u64 = 2 << 30;
const MAX_DEPTH: usize = 8;

/// Graph files under `path` in the order they are tried (a file is tried alone).
pub fn candidates(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_path_buf()];
    }
    let found = super::files_under(path, MAX_DEPTH);
    let mut build: Vec<(u64, PathBuf)> = Vec::new();
    let mut after_build: Vec<PathBuf> = Vec::new();
    for p in found {
        let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(seq) = name
            .strip_prefix("ge_proto_")
            .and_then(|s| s.strip_suffix("_Build.txt"))
            .filter(|s| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|s| s.parse::<u64>().ok())
        {
            build.push((seq, p));
        } else if name.starts_with("ge_proto_") && name.ends_with("_PreRunAfterBuild.txt") {
            after_build.push(p);
        }
    }
    build.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    after_build.sort();
    after_build.reverse();
    build
        .into_iter()
        .map(|(_, p)| p)
        .chain(after_build)
        .collect()
}

/// The op found, with what else the user should know.
pub struct Found {
    pub op: OpFacts,
    pub notes: Vec<String>,
}

/// Looks for the op named `op_name` (else the kernel `kernel`) in the graph files, in order.
/// `Err` lists why each file did not give it.
pub fn locate(
    files: &[PathBuf],
    op_name: Option<&str>,
    kernel: Option<&str>,
) -> Result<Found, Vec<String>> {
    let mut why = Vec::new();
    for file in files {
        let shown = file.display().to_string();
        let model = match read(file) {
            Ok(m) => m,
            Err(e) => {
                why.push(format!("{shown}: {e}"));
                continue;
            }
        };
        if let Some(name) = op_name {
            if let Some(r) = model.find_op(name) {
                let mut notes = Vec::new();
                let op = facts(r.op, &r.graph.name, &shown, "node_name");
                if let (Some(k), Some(attr)) = (kernel, r.op.kernel_name()) {
                    let hits = model.find_kernel(k);
                    if !hits.iter().any(|h| h.op.name == r.op.name) {
                        notes.push(format!(
                            "op {name:?} in {shown} has kernel {attr:?}, which does not match the kernel {k:?} of the error"
                        ));
                    }
                }
                return Ok(Found { op, notes });
            }
        }
        if let Some(k) = kernel {
            let hits = model.find_kernel(k);
            if let Some(best) = hits.first() {
                let how = match &best.how {
                    KernelMatch::NodeName => "node_name".to_string(),
                    KernelMatch::GeTaskName => "ge_task_name".to_string(),
                    KernelMatch::Attr { key } => format!("kernel_attr:{key}"),
                    KernelMatch::AttrWithoutTilingKey { key, .. } => {
                        format!("kernel_attr_without_tiling_key:{key}")
                    }
                    KernelMatch::AttrContains { key } => format!("kernel_attr_contains:{key}"),
                };
                let mut notes = Vec::new();
                let same: Vec<&str> = hits
                    .iter()
                    .skip(1)
                    .filter(|h| h.how == best.how)
                    .map(|h| h.op.name.as_str())
                    .collect();
                if !same.is_empty() {
                    notes.push(format!(
                        "kernel {k:?} is shared by {} more op(s) in {shown} ({}); the first, {:?}, was used",
                        same.len(),
                        same.join(", "),
                        best.op.name
                    ));
                }
                return Ok(Found {
                    op: facts(best.op, &best.graph.name, &shown, &how),
                    notes,
                });
            }
        }
        let what = match (op_name, kernel) {
            (Some(o), Some(k)) => format!("no op named {o:?} and none for kernel {k:?}"),
            (Some(o), None) => format!("no op named {o:?}"),
            (None, Some(k)) => format!("no op for kernel {k:?}"),
            (None, None) => "nothing to look for".to_string(),
        };
        why.push(format!("{shown}: {what}"));
    }
    Err(why)
}

fn read(file: &Path) -> Result<GeModel, String> {
    let len = std::fs::metadata(file).map_err(|e| e.to_string())?.len();
    if len > MAX_GRAPH_LEN {
        return Err(format!("{len} bytes, too large for a graph dump"));
    }
    let bytes = std::fs::read(file).map_err(|e| e.to_string())?;
    ge_graph::parse(&bytes).map_err(|e| e.to_string())
}

/// GE bookkeeping attributes that are not operator attributes.
fn is_internal_attr(op: &Op, key: &str) -> bool {
    const INTERNAL: &[&str] = &[
        "INPUT_IS_VAR",
        "OUTPUT_IS_VAR",
        "OwnerGraphIsUnknown",
        "LxFusionOptimized",
        "is_input_const",
        "imply_type",
        "op_para_size",
        "fusion_scope",
        "is_end_of_inputmem_lifecycle",
        "pass_name",
        "infer_reshape_type",
        "is_first_node",
        "is_last_node",
        "need_update_dtype_when_op_checksupport",
        "ub_atomic_params",
        "continuous_input",
        "continuous_output",
        "op_def",
        "compile_info_key",
        "compile_info_json",
        "output_memsize_vector",
        "output_alignment_vector",
        "refresh_int64_flag",
        "isCheckSupported",
        "framework_type",
        "t_in_datatype",
        "t_out_datatype",
        "workspace_reuse_flag",
        "core_type_value",
        "support_dynamicshape",
        "ref_var_src_var_name",
        "input_para_type_list",
        "optionalInputMode",
        "wspMode",
    ];
    key.starts_with('_')
        || key.starts_with("ge.")
        || key.starts_with("tvm_")
        || key.starts_with("tbe_op_")
        || key.starts_with("globalworkspace_")
        || key.ends_with("_kernelname")
        || key
            .strip_prefix(op.name.as_str())
            .is_some_and(|rest| rest.starts_with('_'))
        || INTERNAL.contains(&key)
}

fn attr_value(v: &AttrValue) -> Option<(&'static str, serde_json::Value)> {
    use serde_json::{json, Value};
    Some(match v {
        AttrValue::I(i) => ("int", json!(i)),
        AttrValue::F(f) => (
            "float",
            serde_json::Number::from_f64(*f).map_or(Value::Null, Value::Number),
        ),
        AttrValue::B(b) => ("bool", json!(b)),
        AttrValue::S(s) => ("str", json!(s)),
        AttrValue::Dt(d) => ("dtype", json!(d)),
        AttrValue::ListListInt(l) => ("list_list_int", json!(l)),
        AttrValue::List(l) => {
            if !l.i.is_empty() {
                ("list_int", json!(l.i))
            } else if !l.f.is_empty() {
                ("list_float", json!(l.f))
            } else if !l.b.is_empty() {
                ("list_bool", json!(l.b))
            } else if !l.s.is_empty() {
                ("list_str", json!(l.s))
            } else if !l.dt.is_empty() {
                ("list_dtype", json!(l.dt))
            } else {
                match l.val_type.as_deref() {
                    Some("VT_LIST_FLOAT") => ("list_float", json!([])),
                    Some("VT_LIST_BOOL") => ("list_bool", json!([])),
                    Some("VT_LIST_STRING") => ("list_str", json!([])),
                    _ => ("list_int", json!([])),
                }
            }
        }
        _ => return None,
    })
}

fn tensor(
    index: usize,
    d: &TensorDesc,
    names: &[Option<&str>],
    source: Option<String>,
) -> TensorFacts {
    TensorFacts {
        index,
        name: names
            .get(index)
            .copied()
            .flatten()
            .map(str::to_string)
            .or_else(|| d.name.clone().filter(|n| !n.is_empty())),
        dtype: d.dtype.clone(),
        shape: d.shape.clone(),
        format: d.layout.clone(),
        ori_shape: d.origin_shape().map(<[i64]>::to_vec),
        ori_format: d.origin_format().map(str::to_string),
        source,
    }
}

/// An attribute's facts; `None` for value kinds a test case cannot use (tensors, graphs).
/// An IR attribute the op does not carry has kind `unset` and a null value.
fn attr_facts(name: &str, v: Option<&AttrValue>) -> Option<AttrFacts> {
    let (kind, value) = match v {
        None | Some(AttrValue::Unset) => ("unset", serde_json::Value::Null),
        Some(v) => attr_value(v)?,
    };
    Some(AttrFacts {
        name: name.to_string(),
        kind: kind.to_string(),
        value,
    })
}

/// The facts of one op. Attributes: the IR attributes in IR order when the dump lists them
/// (`_ir_attr_names`, newer CANN), else every attribute that is not GE bookkeeping, in the
/// order the graph lists them.
pub fn facts(op: &Op, graph_name: &str, file: &str, matched_by: &str) -> OpFacts {
    let ir_attrs = op.ir_attrs();
    let in_names = op.input_ir_names();
    let out_names = op.output_ir_names();
    // Descriptor i belongs to the i-th non-control input; unconnected optional inputs keep
    // their place.
    let sources: Vec<Option<String>> = op
        .inputs
        .iter()
        .filter(|i| !i.is_control())
        .map(|i| {
            (!i.is_unconnected()).then(|| match i.index {
                Some(n) => format!("{}:{n}", i.src),
                None => i.src.clone(),
            })
        })
        .collect();
    OpFacts {
        name: op.name.clone(),
        op_type: op.op_type.clone(),
        graph_file: file.to_string(),
        graph_line: op.line as u64,
        graph_name: graph_name.to_string(),
        matched_by: matched_by.to_string(),
        kernel_name: op.kernel_name().map(str::to_string),
        block_dim: op.block_dim(),
        inputs: op
            .input_desc
            .iter()
            .enumerate()
            .map(|(i, d)| tensor(i, d, &in_names, sources.get(i).cloned().flatten()))
            .collect(),
        outputs: op
            .output_desc
            .iter()
            .enumerate()
            .map(|(i, d)| tensor(i, d, &out_names, None))
            .collect(),
        attrs_order: if ir_attrs.is_empty() { "graph" } else { "ir" }.to_string(),
        attrs: if ir_attrs.is_empty() {
            op.attrs
                .iter()
                .filter(|(k, _)| !is_internal_attr(op, k))
                .filter_map(|(k, v)| attr_facts(k, Some(v)))
                .collect()
        } else {
            ir_attrs
                .iter()
                .filter_map(|(k, v)| attr_facts(k, *v))
                .collect()
        },
    }
}
