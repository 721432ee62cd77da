//! The facts of a repro case: what `case.json` holds (schema in `docs/repro.md`).
//!
//! Every field that npgx could not establish is `null` (or an empty list) and the reason is in
//! [`Case::missing`]; nothing is guessed.

use serde::Serialize;

/// Name of the `npgx.repro` document (`case.json` and `npgx repro --format json`).
pub const SCHEMA_NAME: &str = "repro";
/// Version of the `case.json` schema; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Which repro the case is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ReproPath {
    /// A crash (AI Core error, aclnn failure): re-run the kernel binary on the dumped inputs.
    Runtime,
    /// Wrong numbers: re-run the operator on the NPU and compare with a CPU golden.
    Accuracy,
}

impl std::fmt::Display for ReproPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ReproPath::Runtime => "runtime",
            ReproPath::Accuracy => "accuracy",
        })
    }
}

/// Where a fact was read: a file and, for text files, a 1-based line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Evidence {
    pub file: String,
    pub line: Option<u64>,
}

/// The operator the user asked about, and how it was named.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Target {
    /// `aicore` (from an AI Core error), `op` (`--op`) or `kernel` (`--kernel`).
    pub source: String,
    pub op_name: Option<String>,
    pub kernel_name: Option<String>,
    pub device_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub task_id: Option<u64>,
    /// The AI Core error line the target came from.
    pub evidence: Option<Evidence>,
    /// The tensors as the runtime launched them (`[AIC_INFO] input:0;shape:[64];…`): the real
    /// shapes where the graph has dynamic (-1) dimensions.
    pub runtime_tensors: Vec<RuntimeTensor>,
}

/// One `[AIC_INFO] input:` / `output:` line.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct RuntimeTensor {
    /// `input` or `output`.
    pub io: String,
    pub index: usize,
    pub shape: Option<Vec<i64>>,
    pub format: Option<String>,
    pub dtype: Option<String>,
    pub line: u64,
}

/// One input or output tensor as the GE graph describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct TensorFacts {
    pub index: usize,
    /// The IR name of the argument (`x`, `indices`) where the graph records it.
    pub name: Option<String>,
    /// GE data type name, e.g. `DT_FLOAT16`.
    pub dtype: Option<String>,
    /// Runtime (device) shape.
    pub shape: Option<Vec<i64>>,
    /// Runtime format (`layout`), e.g. `NC1HWC0`.
    pub format: Option<String>,
    /// Framework (origin) shape.
    pub ori_shape: Option<Vec<i64>>,
    pub ori_format: Option<String>,
    /// For inputs: the producing op and output index, `"<op>:<index>"`.
    pub source: Option<String>,
}

/// One non-private op attribute.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct AttrFacts {
    pub name: String,
    /// `int`, `float`, `bool`, `str`, `dtype`, `list_int`, `list_float`, `list_bool`,
    /// `list_str`, `list_dtype`, `list_list_int`, or `unset` (an IR attribute the op does not
    /// carry: the IR default applies).
    pub kind: String,
    pub value: serde_json::Value,
}

/// The op as found in a GE graph dump.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct OpFacts {
    pub name: String,
    pub op_type: String,
    pub graph_file: String,
    /// Line of the `op {` block.
    pub graph_line: u64,
    /// Name of the graph inside the file.
    pub graph_name: String,
    /// How the target was matched: `node_name`, `ge_task_name`, `kernel_attr:<key>`,
    /// `kernel_attr_without_tiling_key:<key>`, `kernel_attr_contains:<key>`.
    pub matched_by: String,
    /// The compiled kernel symbol from the op's `_kernelname` / `<op>_kernelname` attribute.
    pub kernel_name: Option<String>,
    /// `tvm_blockdim`.
    pub block_dim: Option<i64>,
    pub inputs: Vec<TensorFacts>,
    pub outputs: Vec<TensorFacts>,
    /// `ir`: `attrs` are the IR attributes in IR order (the dump's `_ir_attr_names`);
    /// `graph`: the dump does not list them, so `attrs` are the non-bookkeeping attributes in
    /// the order the graph lists them.
    pub attrs_order: String,
    pub attrs: Vec<AttrFacts>,
}

/// The compiled kernel and its files.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct KernelFacts {
    /// The kernel name npgx searched for.
    pub kernel_name: String,
    /// Base name of the `.o` / `.json` (`binFileName`).
    pub bin_file_name: Option<String>,
    /// Tiling key: the numeric suffix stripped from an AscendC kernel name, or from the log.
    pub tiling_key: Option<u64>,
    /// The kernel JSON found, as the user's path.
    pub json_path: Option<String>,
    /// The kernel `.o` found, as the user's path.
    pub bin_path: Option<String>,
    /// The `.cce` source, when present.
    pub cce_path: Option<String>,
    /// `blockDim` of the kernel JSON.
    pub block_dim: Option<i64>,
    /// `kernelName` of the kernel JSON (the device symbol).
    pub kernel_symbol: Option<String>,
    /// `coreType` / `core_type` of the kernel JSON.
    pub core_type: Option<String>,
    /// `magic` of the kernel JSON.
    pub magic: Option<String>,
    /// Directories searched, in order.
    pub searched: Vec<String>,
}

/// One tensor of the dump file, and what was written for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DumpTensorFacts {
    /// `input` or `output`.
    pub io: String,
    pub index: usize,
    /// Dump data type name, e.g. `DT_BF16`.
    pub dtype: String,
    pub format: String,
    pub device_shape: Vec<u64>,
    pub original_shape: Vec<u64>,
    /// The `.npy` written, relative to the case directory.
    pub npy: Option<String>,
    /// For converted tensors: the same data in the device layout (what the kernel reads).
    pub device_npy: Option<String>,
    /// NumPy dtype of the `.npy` (`float32` for bf16 and fp8, `int8` for int4).
    pub npy_dtype: Option<String>,
    pub npy_shape: Option<Vec<u64>>,
    /// `logical` (converted back to the original shape), `device` (device layout kept) or
    /// `none` (no file written).
    pub layout: String,
    /// Why the layout was kept or the tensor skipped, and any widening.
    pub note: Option<String>,
}

/// The operator dump file used for the data.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct DumpFacts {
    pub file: String,
    /// `v2`, `v1`, `tlv`, or `npy` (msaccucmp-converted files).
    pub framing: String,
    /// The real op name from the header (else the sanitised one from the file name).
    pub op_name: Option<String>,
    pub op_type: Option<String>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub timestamp: Option<u64>,
    /// How many dump files matched; the one used is named in `file`.
    pub candidates: usize,
    pub tensors: Vec<DumpTensorFacts>,
    /// The exception dump's tiling data (input type 7), written to this file.
    pub tiling_data: Option<String>,
}

/// A generated file of the case directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GeneratedFile {
    /// Path relative to the case directory.
    pub path: String,
    /// `case`, `readme`, `oput`, `run_config`, `accuracy_script`, `input`, `dumped_output`,
    /// `tiling_data`, `kernel_bin`, `kernel_json`, `kernel_cce`.
    pub kind: String,
}

/// Everything `npgx repro` established about one operator.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Case {
    pub schema_version: u32,
    pub path: ReproPath,
    pub target: Target,
    pub op: Option<OpFacts>,
    pub kernel: Option<KernelFacts>,
    pub dump: Option<DumpFacts>,
    /// The case directory.
    pub out_dir: String,
    pub files: Vec<GeneratedFile>,
    /// What could not be found, one sentence each.
    pub missing: Vec<String>,
    /// Other things the user should know (widened dtypes, ambiguous matches, …).
    pub notes: Vec<String>,
}
