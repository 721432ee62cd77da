//! One row per operator input or output, merged from the graph descriptor and the dump: what
//! both script writers need.

use super::case::{Case, DumpTensorFacts, RuntimeTensor, TensorFacts};

/// One input or output of the op.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IoRow {
    pub index: usize,
    /// IR argument name, when the graph records it.
    pub name: Option<String>,
    /// Data type name (`DT_FLOAT16`): from the dump when dumped, else from the graph.
    pub dtype: Option<String>,
    /// Runtime (device) shape and format.
    pub shape: Option<Vec<i64>>,
    pub format: Option<String>,
    /// Framework (origin) shape and format.
    pub ori_shape: Option<Vec<i64>>,
    pub ori_format: Option<String>,
    /// The `.npy` in the logical layout (relative to the case directory).
    pub npy: Option<String>,
    /// The `.npy` in the device layout (the kernel's view); the same file when nothing was
    /// converted.
    pub device_npy: Option<String>,
}

fn to_i64(v: &[u64]) -> Vec<i64> {
    v.iter()
        .map(|&d| i64::try_from(d).unwrap_or(i64::MAX))
        .collect()
}

fn is_dynamic(s: &Option<Vec<i64>>) -> bool {
    s.as_ref().is_none_or(|d| d.iter().any(|&x| x < 0))
}

fn row(
    index: usize,
    g: Option<&TensorFacts>,
    d: Option<&DumpTensorFacts>,
    rt: Option<&RuntimeTensor>,
) -> IoRow {
    let mut r = IoRow {
        index,
        name: g.and_then(|g| g.name.clone()),
        dtype: g.and_then(|g| g.dtype.clone()),
        shape: g.and_then(|g| g.shape.clone()),
        format: g.and_then(|g| g.format.clone()),
        ori_shape: g.and_then(|g| g.ori_shape.clone()),
        ori_format: g.and_then(|g| g.ori_format.clone()),
        npy: None,
        device_npy: None,
    };
    // The runtime's [AIC_INFO] shape replaces dynamic (-1) graph dimensions.
    if let Some(rt) = rt.filter(|rt| rt.shape.is_some()) {
        if is_dynamic(&r.shape) {
            r.shape = rt.shape.clone();
            r.format = r.format.take().or_else(|| rt.format.clone());
        }
        if is_dynamic(&r.ori_shape) && r.ori_format == r.format {
            r.ori_shape = rt.shape.clone();
        }
        if r.dtype.is_none() {
            r.dtype = rt.dtype.clone();
        }
    }
    if let Some(d) = d {
        r.dtype = Some(d.dtype.clone());
        if g.is_none() {
            r.shape = Some(to_i64(&d.device_shape));
            r.format = Some(d.format.clone());
            if !d.original_shape.is_empty() {
                r.ori_shape = Some(to_i64(&d.original_shape));
            }
        }
        match d.layout.as_str() {
            "logical" => {
                r.npy = d.npy.clone();
                r.device_npy = d.device_npy.clone().or_else(|| d.npy.clone());
            }
            "device" => r.device_npy = d.npy.clone(),
            _ => {}
        }
    }
    r
}

/// Inputs (`outputs == false`) or outputs of the case, by index: the graph's descriptors
/// merged with the dump's tensors.
pub fn rows(case: &Case, outputs: bool) -> Vec<IoRow> {
    let graph: &[TensorFacts] = match &case.op {
        Some(op) if outputs => &op.outputs,
        Some(op) => &op.inputs,
        None => &[],
    };
    let io = if outputs { "output" } else { "input" };
    let dumped: Vec<&DumpTensorFacts> = case
        .dump
        .iter()
        .flat_map(|d| d.tensors.iter())
        .filter(|t| t.io == io)
        .collect();
    let runtime: Vec<&RuntimeTensor> = case
        .target
        .runtime_tensors
        .iter()
        .filter(|t| t.io == io)
        .collect();
    let n = graph
        .iter()
        .map(|g| g.index + 1)
        .chain(dumped.iter().map(|d| d.index + 1))
        .chain(runtime.iter().map(|t| t.index + 1))
        .max()
        .unwrap_or(0);
    (0..n)
        .filter_map(|i| {
            let g = graph.iter().find(|g| g.index == i);
            let d = dumped.iter().copied().find(|d| d.index == i);
            let rt = runtime.iter().copied().find(|t| t.index == i);
            (g.is_some() || d.is_some() || rt.is_some()).then(|| row(i, g, d, rt))
        })
        .collect()
}

impl IoRow {
    /// The logical shape: the converted `.npy` shape is not known here, so the origin shape,
    /// else the runtime shape.
    pub fn logical_shape(&self) -> Option<&[i64]> {
        self.ori_shape.as_deref().or(self.shape.as_deref())
    }
}

/// NumPy / TBE dtype name for a GE or dump data type name (`DT_FLOAT16` → `float16`).
pub fn np_dtype(dt: &str) -> String {
    let bare = dt.strip_prefix("DT_").unwrap_or(dt);
    match bare {
        "FLOAT" => "float32".to_string(),
        "FLOAT16" => "float16".to_string(),
        "DOUBLE" => "float64".to_string(),
        "BF16" => "bfloat16".to_string(),
        other => other.to_ascii_lowercase(),
    }
}
