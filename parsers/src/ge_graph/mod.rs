//! GE graph dumps: the `ge_proto_*.txt` files CANN's Graph Engine writes with `DUMP_GE_GRAPH`
//! (and always as `ge_proto_<seq>_Build.txt`), in protobuf text format.
//!
//! # What a dump looks like
//!
//! ```text
//! graph {                                  a ModelDef; newer dumps may start with `name:`
//!   name: "ge_default_20230713074125_11"
//!   op {
//!     name: "GatherV2"                     node name (what `[AIC_INFO] node_name:` prints)
//!     type: "GatherV2"
//!     input: "Unique:0"                    "<src op>:<output index>", ":-1" = control edge
//!     attr { key: "_kernelname" value { s: "te_gatherv2_…_1__kernel0" } }
//!     attr { key: "_datadump_original_op_names" value { list { s: "a" s: "b" } } }
//!     input_desc { dtype: DT_FLOAT shape { dim: -1 } layout: "ND"
//!                  attr { key: "origin_format" value { s: "ND" } } … }
//!     output_desc { … }
//!   }
//! }
//! graph { … }                              partitioned subgraphs follow the root graph
//! attr { key: "memory_size" value { i: 0 } }
//! ```
//!
//! Sources: `ge_ir.proto` (Ascend/torchair, package `ge.proto`) and the real dumps described
//! in `dump-data.md` §8. The parser is generic: it reads the protobuf text grammar (module
//! [`text`]) without looking at indentation or at whether a model header is present, then maps
//! known fields onto typed records (module [`model`]) and skips unknown ones.
//!
//! # Using it
//!
//! ```
//! use npgx_parsers::ge_graph;
//! let dump = br#"graph { name: "g" op { name: "add_1" type: "Add"
//!     attr { key: "_kernelname" value { s: "te_add_1234__kernel0" } } } }"#;
//! let model = ge_graph::parse(dump).unwrap();
//! let op = model.find_op("add_1").unwrap().op;
//! assert_eq!(op.op_type, "Add");
//! let hit = &model.find_kernel("te_add_1234__kernel0")[0];
//! assert_eq!(hit.op.name, "add_1");
//! ```
//!
//! [`GeModel::find_kernel`] implements the kernel-name recipe of `dump-data.md` §8.4; read its
//! documentation for the exact matching rules. For many lookups build an [`OpIndex`] once.
//!
//! # For a single-operator repro
//!
//! Everything a test case needs is on the [`Op`] found: [`Op::op_type`]; per input and output a
//! [`TensorDesc`] with the runtime `dtype`, `shape` and `layout` (format) and the framework view
//! [`TensorDesc::origin_format`] / [`TensorDesc::origin_shape`]; the IR name of each tensor
//! ([`Op::input_ir_names`], [`Op::output_ir_names`]); the IR attributes with their values
//! ([`Op::ir_attrs`]); [`Op::kernel_name`] and [`Op::block_dim`] for the compiled kernel. Skip
//! control edges and unconnected optional inputs with [`Op::data_inputs`]; `is_input_const`
//! marks constant inputs, whose values are in the producer's `value` attribute
//! ([`AttrValue::T`]) when the graph was dumped with `DUMP_GE_GRAPH=1`.

pub mod model;
pub mod text;

use std::collections::HashMap;

pub use model::{
    dtype_code, AttrList, AttrValue, Attrs, GeModel, Graph, NamedAttrs, Op, OpInput, Tensor,
    TensorDesc,
};

/// Why a dump could not be read: a syntax error or a field with a value of the wrong kind.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct GraphError {
    /// Byte offset in the input.
    pub offset: usize,
    /// 1-based line of `offset`.
    pub line: usize,
    pub message: String,
}

/// Parses a GE graph dump. Never panics; any input that is not protobuf text, or whose known
/// fields hold values of the wrong kind (a string where an integer belongs), gives an error with
/// its line.
pub fn parse(input: &[u8]) -> Result<GeModel, GraphError> {
    let builder = model::Builder::new(input);
    let fields = text::parse_document(input).map_err(|e| GraphError {
        offset: e.offset,
        line: builder.line(e.offset),
        message: format!("syntax error: expected {}", e.expected),
    })?;
    builder.model(fields)
}

/// An op together with the graph that holds it.
#[derive(Debug, Clone, Copy)]
pub struct OpRef<'a> {
    pub graph: &'a Graph,
    pub op: &'a Op,
}

/// How [`GeModel::find_kernel`] tied a kernel name to an op, strongest first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum KernelMatch {
    /// The name given is the op's node name.
    NodeName,
    /// GE's task kernel name `«a»_«b»_«c»_«node name»` (e.g. `2_0_11_GatherV2`,
    /// `-1_0_1_trans_TransData_0`): the node name after three numeric prefixes.
    GeTaskName,
    /// A kernel-name attribute (`_kernelname`, `<opname>_kernelname`, `_tbe_kernel_name`, …)
    /// holds the kernel, compared after removing `__kernel0` and `_mix_aic` / `_mix_aiv`.
    Attr { key: String },
    /// As [`KernelMatch::Attr`] once the trailing `_«tiling key»` of an AscendC kernel name is
    /// removed (`GatherV3_…_high_performance_10330` → `GatherV3_…_high_performance`).
    AttrWithoutTilingKey { key: String, tiling_key: u64 },
    /// The weakest rule, msaicerr's: a kernel-name attribute *contains* the name given (at
    /// least 8 characters), e.g. a hash prefix copied from a log line cut short.
    AttrContains { key: String },
}

/// One op found by [`GeModel::find_kernel`].
#[derive(Debug, Clone)]
pub struct KernelHit<'a> {
    pub graph: &'a Graph,
    pub op: &'a Op,
    pub how: KernelMatch,
}

impl GeModel {
    /// Every op of every top-level graph, in file order.
    pub fn ops(&self) -> impl Iterator<Item = OpRef<'_>> {
        self.graphs
            .iter()
            .flat_map(|graph| graph.ops.iter().map(move |op| OpRef { graph, op }))
    }

    /// The first op named `name` (node names are unique within a graph; the same name in two
    /// graphs is rare and the first is returned).
    pub fn find_op(&self, name: &str) -> Option<OpRef<'_>> {
        self.ops().find(|r| r.op.name == name)
    }

    /// Maps a kernel name from a log to the op(s) that ran it. Accepted forms (`dump-data.md`
    /// §8.4, `plog-and-errors.md` §5):
    ///
    /// * a node name (`[AIC_INFO] node_name:`);
    /// * GE's task kernel name from `fault kernel_name=` on TBE builds, `«a»_«b»_«c»_«node»`;
    /// * a compiled kernel symbol (`dev_func:`, `func_name=`, msaicerr's `kernel name :`), e.g.
    ///   `te_transdata_…_1__kernel0`, compared with the values of the attributes `_kernelname`,
    ///   `<opname>_kernelname`, `_atomic_kernelname`, `_tbe_kernel_name` and
    ///   `_tbe_kernel_name_for_load`; both sides lose a trailing `__kernel<N>` and `_mix_aic` /
    ///   `_mix_aiv` first;
    /// * an AscendC kernel name with its tiling key, `«binFileName»_«tilingKey»`;
    /// * failing all of these, a fragment of at least 8 characters contained in one of those
    ///   attribute values (msaicerr's substring search).
    ///
    /// Returns every op that matches, strongest match first (a compiled kernel can be shared by
    /// several ops); an op appears once, with its strongest match.
    pub fn find_kernel(&self, kernel: &str) -> Vec<KernelHit<'_>> {
        let kernel = kernel.trim();
        let stem = kernel_stem(kernel);
        let task_node = ge_task_node_name(kernel).map(kernel_stem);
        let untiled = strip_tiling_key(stem);
        let mut hits: Vec<KernelHit<'_>> = Vec::new();
        for OpRef { graph, op } in self.ops() {
            let how = if op.name == kernel || op.name == stem {
                Some(KernelMatch::NodeName)
            } else if task_node == Some(op.name.as_str()) {
                Some(KernelMatch::GeTaskName)
            } else {
                kernel_attr_match(op, stem, untiled)
            };
            if let Some(how) = how {
                hits.push(KernelHit { graph, op, how });
            }
        }
        hits.sort_by(|a, b| a.how.cmp(&b.how));
        hits
    }

    /// Builds a name index for many lookups (the `dump-config check --graph` path).
    pub fn index(&self) -> OpIndex<'_> {
        let mut by_name = HashMap::new();
        let mut fused = HashMap::<&str, Vec<OpRef<'_>>>::new();
        for r in self.ops() {
            by_name.entry(r.op.name.as_str()).or_insert(r);
            let mut seen = std::collections::HashSet::new();
            for original in r.op.original_names() {
                if original != r.op.name && seen.insert(original) {
                    fused.entry(original).or_default().push(r);
                }
            }
        }
        OpIndex { by_name, fused }
    }
}

/// Name lookups over a whole model, built once by [`GeModel::index`].
#[derive(Debug)]
pub struct OpIndex<'a> {
    by_name: HashMap<&'a str, OpRef<'a>>,
    fused: HashMap<&'a str, Vec<OpRef<'a>>>,
}

impl<'a> OpIndex<'a> {
    /// The op with this node name.
    pub fn get(&self, name: &str) -> Option<OpRef<'a>> {
        self.by_name.get(name).copied()
    }

    /// The ops that list `name` among their pre-fusion names ([`Op::original_names`]): where a
    /// name that is no longer a node went.
    pub fn fused_into(&self, name: &str) -> &[OpRef<'a>] {
        self.fused.get(name).map_or(&[], Vec::as_slice)
    }
}

impl Op {
    /// The names this node had before graph fusion: the list attr
    /// `_datadump_original_op_names`, plus `_datadump_origin_name` of its output descriptors.
    /// Empty for nodes that were never fused.
    pub fn original_names(&self) -> impl Iterator<Item = &str> {
        let listed = match self.attrs.get("_datadump_original_op_names") {
            Some(AttrValue::List(l)) => l.s.as_slice(),
            _ => &[],
        };
        listed.iter().map(String::as_str).chain(
            self.output_desc
                .iter()
                .filter_map(|d| d.attrs.get_str("_datadump_origin_name"))
                .filter(|s| !s.is_empty()),
        )
    }

    /// The compiled kernel symbol: `_kernelname`, else `<opname>_kernelname` (older builds).
    pub fn kernel_name(&self) -> Option<&str> {
        self.attrs.get_str("_kernelname").or_else(|| {
            self.attrs
                .iter()
                .find(|(k, _)| k.strip_suffix("_kernelname") == Some(self.name.as_str()))
                .and_then(|(_, v)| v.as_str())
        })
    }

    /// Block dim the kernel was compiled for (`tvm_blockdim`).
    pub fn block_dim(&self) -> Option<i64> {
        self.attrs.get_int("tvm_blockdim")
    }

    /// Data inputs only: control edges (`:-1`) and unconnected optional inputs removed.
    pub fn data_inputs(&self) -> impl Iterator<Item = &OpInput> {
        self.inputs
            .iter()
            .filter(|i| !i.is_control() && !i.is_unconnected())
    }

    /// The operator's IR attributes — the ones its prototype declares, as a single-op test case
    /// needs them — in IR order: the names listed in `_ir_attr_names`, each with its value when
    /// the op carries it. Empty when the dump has no `_ir_attr_names` (older CANN); then the
    /// attributes whose key does not start with `_` are the closest substitute.
    pub fn ir_attrs(&self) -> Vec<(&str, Option<&AttrValue>)> {
        match self.attrs.get("_ir_attr_names") {
            Some(AttrValue::List(l)) => {
                l.s.iter()
                    .map(|name| (name.as_str(), self.attrs.get(name)))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    /// IR names of the inputs by position (`_input_name_key` / `_input_name_value`), e.g.
    /// `[x, indices, axis]` for GatherV2; `None` where the dump does not say.
    pub fn input_ir_names(&self) -> Vec<Option<&str>> {
        self.io_names(
            "_input_name_key",
            "_input_name_value",
            self.input_desc.len(),
        )
    }

    /// IR names of the outputs by position (`_output_name_key` / `_output_name_value`).
    pub fn output_ir_names(&self) -> Vec<Option<&str>> {
        self.io_names(
            "_output_name_key",
            "_output_name_value",
            self.output_desc.len(),
        )
    }

    fn io_names(&self, keys: &str, values: &str, count: usize) -> Vec<Option<&str>> {
        let (Some(AttrValue::List(k)), Some(AttrValue::List(v))) =
            (self.attrs.get(keys), self.attrs.get(values))
        else {
            return vec![None; count];
        };
        // One slot per tensor descriptor; without descriptors, one per name.
        let len = if count > 0 { count } else { k.s.len() };
        let mut out = vec![None; len];
        for (name, &index) in k.s.iter().zip(&v.i) {
            if let Some(slot) = usize::try_from(index).ok().and_then(|i| out.get_mut(i)) {
                *slot = Some(name.as_str());
            }
        }
        out
    }

    /// Collective-communication ops (`HcomAllReduce`, `HcomBroadcast`, …).
    pub fn is_hcom(&self) -> bool {
        self.op_type.starts_with("Hcom")
    }
}

/// Whether an attribute key names a kernel symbol.
fn is_kernel_attr(key: &str) -> bool {
    key.ends_with("_kernelname") || key == "_tbe_kernel_name" || key == "_tbe_kernel_name_for_load"
}

fn kernel_attr_match(op: &Op, stem: &str, untiled: Option<(&str, u64)>) -> Option<KernelMatch> {
    let mut weaker: Option<KernelMatch> = None;
    for (key, value) in op.attrs.iter() {
        let Some(v) = value.as_str().filter(|_| is_kernel_attr(key)) else {
            continue;
        };
        let v = kernel_stem(v);
        if v.is_empty() {
            continue;
        }
        if v == stem {
            return Some(KernelMatch::Attr {
                key: key.to_string(),
            });
        }
        let candidate = match untiled {
            Some((base, tiling_key)) if v == base => Some(KernelMatch::AttrWithoutTilingKey {
                key: key.to_string(),
                tiling_key,
            }),
            _ if stem.len() >= MIN_PARTIAL_KERNEL_NAME && v.contains(stem) => {
                Some(KernelMatch::AttrContains {
                    key: key.to_string(),
                })
            }
            _ => None,
        };
        if let Some(c) = candidate {
            if weaker.as_ref().is_none_or(|w| c < *w) {
                weaker = Some(c);
            }
        }
    }
    weaker
}

/// The shortest query [`KernelMatch::AttrContains`] accepts: shorter fragments (`te_`, `1`)
/// would match almost every op.
const MIN_PARTIAL_KERNEL_NAME: usize = 8;

/// Removes a trailing `__kernel<N>` and `_mix_aic` / `_mix_aiv` (in either order).
pub fn kernel_stem(name: &str) -> &str {
    let mut s = name;
    for _ in 0..2 {
        if let Some(pos) = s.rfind("__kernel") {
            let digits = &s[pos + "__kernel".len()..];
            if digits.bytes().all(|b| b.is_ascii_digit()) {
                s = &s[..pos];
            }
        }
        s = s
            .strip_suffix("_mix_aic")
            .or_else(|| s.strip_suffix("_mix_aiv"))
            .unwrap_or(s);
    }
    s
}

/// `«base»_«digits»` → (`base`, tiling key).
fn strip_tiling_key(name: &str) -> Option<(&str, u64)> {
    let (base, key) = name.rsplit_once('_')?;
    if base.is_empty() || key.is_empty() || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((base, key.parse().ok()?))
}

/// GE's TBE task kernel name `«-?n»_«n»_«n»_«node»` → `node`.
fn ge_task_node_name(kernel: &str) -> Option<&str> {
    let mut rest = kernel;
    for i in 0..3 {
        let body = if i == 0 {
            rest.strip_prefix('-').unwrap_or(rest)
        } else {
            rest
        };
        let digits = body.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        rest = body[digits..].strip_prefix('_')?;
    }
    (!rest.is_empty()).then_some(rest)
}

#[cfg(test)]
mod tests;
