//! One row per operator input or output, merged from the graph descriptor and the dump: what
//! both script writers need.

use npgx_parsers::dump::dtype::DType;

use super::case::{Case, DumpTensorFacts, RuntimeTensor, TensorFacts};

/// One input or output of the op.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IoRow {
    /// The graph's descriptor completed from the run: dynamic (-1) shapes from the runtime's
    /// `[AIC_INFO]`, the data type from the dump when dumped, everything from the dump when the
    /// graph has no such tensor.
    pub tensor: TensorFacts,
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
    let mut t = g.cloned().unwrap_or_else(|| TensorFacts {
        index,
        ..TensorFacts::default()
    });
    let (mut npy, mut device_npy) = (None, None);
    // The runtime's [AIC_INFO] shape replaces dynamic (-1) graph dimensions.
    if let Some(rt) = rt.filter(|rt| rt.shape.is_some()) {
        if is_dynamic(&t.shape) {
            t.shape = rt.shape.clone();
            t.format = t.format.take().or_else(|| rt.format.clone());
        }
        if is_dynamic(&t.ori_shape) && t.ori_format == t.format {
            t.ori_shape = rt.shape.clone();
        }
        if t.dtype.is_none() {
            t.dtype = rt.dtype.clone();
        }
    }
    if let Some(d) = d {
        t.dtype = Some(d.dtype.clone());
        if g.is_none() {
            t.shape = Some(to_i64(&d.device_shape));
            t.format = Some(d.format.clone());
            if !d.original_shape.is_empty() {
                t.ori_shape = Some(to_i64(&d.original_shape));
            }
        }
        match d.layout.as_str() {
            "logical" => {
                npy = d.npy.clone();
                device_npy = d.device_npy.clone().or_else(|| d.npy.clone());
            }
            "device" => device_npy = d.npy.clone(),
            _ => {}
        }
    }
    IoRow {
        tensor: t,
        npy,
        device_npy,
    }
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
        self.tensor
            .ori_shape
            .as_deref()
            .or(self.tensor.shape.as_deref())
    }
}

/// NumPy / TBE dtype name for a GE or dump data type name (`DT_FLOAT16` → `float16`): the dump
/// type's own NumPy name, else the name without `DT_` in lower case (`DT_QINT8` → `qint8`).
pub fn np_dtype(dt: &str) -> String {
    match DType::from_name(dt).and_then(DType::numpy_name) {
        Some(name) => name.to_string(),
        None => dt.strip_prefix("DT_").unwrap_or(dt).to_ascii_lowercase(),
    }
}

#[cfg(test)]
mod tests {
    use super::np_dtype;

    #[test]
    fn numpy_names_of_dump_types() {
        for (dt, np) in [
            ("DT_FLOAT", "float32"),
            ("FLOAT", "float32"),
            ("DT_FLOAT16", "float16"),
            ("DT_DOUBLE", "float64"),
            ("DT_BF16", "bfloat16"),
            ("DT_INT4", "int4"),
            ("DT_UINT64", "uint64"),
            ("DT_FLOAT8_E4M3FN", "float8_e4m3fn"),
            ("DT_QINT8", "qint8"),
            ("DT_HIFLOAT8", "hifloat8"),
            ("DT_STRING", "string"),
            ("float16", "float16"),
            ("Weird", "weird"),
        ] {
            assert_eq!(np_dtype(dt), np, "{dt}");
        }
    }
}
