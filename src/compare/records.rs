//! The records a comparison produces. Renderers in `report::dump_compare` turn them into text,
//! JSON, CSV or Parquet; the JSON field names are the stable schema of `docs/dump-compare.md`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use npgx_parsers::dump::header::Io;
use serde::{Deserialize, Serialize};

use crate::dump::FileProblem;

/// Pass thresholds of one dtype (or the defaults).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Threshold {
    pub cosine: f64,
    pub max_rel: f64,
}

/// The thresholds in force, echoed in the output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Thresholds {
    pub cosine: f64,
    pub max_rel: f64,
    /// Overrides by TARGET dtype name (`float16`, …).
    pub per_dtype: BTreeMap<String, Threshold>,
}

impl Thresholds {
    /// The threshold for a pair whose target has dtype `dtype`.
    pub fn for_dtype(&self, dtype: &str) -> Threshold {
        self.per_dtype.get(dtype).copied().unwrap_or(Threshold {
            cosine: self.cosine,
            max_rel: self.max_rel,
        })
    }
}

/// Per-pair metrics; `None` (JSON null) when undefined.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Metrics {
    pub cosine: Option<f64>,
    pub max_abs: Option<f64>,
    pub max_rel: Option<f64>,
    pub mean_rel: Option<f64>,
    pub mean_abs: Option<f64>,
    pub rmse: Option<f64>,
    pub acc_rel: Option<f64>,
    pub rel_euclidean: Option<f64>,
    pub kl_div: Option<f64>,
    pub std_ratio: Option<f64>,
    pub rel_gt_0_001: Option<f64>,
    pub rel_gt_0_005: Option<f64>,
    pub golden_nan: u64,
    pub golden_inf: u64,
    pub target_nan: u64,
    pub target_inf: u64,
    pub nan_inf_one_side: u64,
}

/// How a target tensor found its golden tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MatchedBy {
    /// Same op name, io and index.
    Name,
    /// The dump header's `original_op` of a fused op's output.
    OriginalOp,
    /// `_datadump_original_op_names` of the op in the GE graph (`--graph`).
    Graph,
    /// `--mapping` CSV.
    Mapping,
    /// torchair's `dynamo_original_graph_*.txt`: the GE op's `_fx_tensor_name`.
    FxGraph,
    /// The two files named on the command line, each holding one operator's tensors (two `.npy`
    /// files of other names: the user paired them).
    Files,
}

/// One compared pair of tensors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Pair {
    /// Index into the report's groups.
    pub group: usize,
    /// 0-based position of the target op in its group's execution order.
    pub order: usize,
    pub op_name: String,
    pub op_type: Option<String>,
    pub golden_op_name: String,
    pub io: Io,
    pub index: usize,
    pub matched_by: MatchedBy,
    pub golden_dtype: String,
    pub target_dtype: String,
    /// Logical shape of the target tensor.
    pub shape: Vec<u64>,
    pub elements: u64,
    /// `None` when the pair could not be compared (`error` says why).
    pub metrics: Option<Metrics>,
    pub passed: bool,
    pub error: Option<String>,
    pub golden_file: String,
    pub target_file: String,
    /// msprobe compare's own six metrics (pairs of msprobe dumps only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub msprobe: Option<MsprobeMetrics>,
    /// msprobe's summary mode, for tensors both runs know by their statistics only (then
    /// `metrics` is null).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<MsprobeSummary>,
    /// The target operator's FX node, source line and user's line: on a group's
    /// `first_divergence`, `inputs_differ` and `origin` when graph texts were read (absent
    /// otherwise; docs/source-map.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fx: Option<crate::source_map::FxOrigin>,
}

/// What told the origin apart from operators that only carried an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Evidence {
    /// The op's own inputs were dumped, compared and pass.
    Inputs,
    /// No inputs dumped: the producers' outputs named by the GE graph pass.
    Graph,
    /// The op's inputs pass (or were not dumped) but one of its parameters (msprobe: a module's
    /// weight or bias) differs: the weights differ, not the kernel.
    Parameters,
    /// No input evidence: the origin is the first divergence.
    None,
}

/// The origin pair and the evidence used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Origin {
    #[serde(flatten)]
    pub pair: Pair,
    pub evidence: Evidence,
}

/// Where a group lies, as far as pairing is concerned.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupSide {
    pub rank: Option<u32>,
    pub world_size: Option<u32>,
    pub device: Option<u32>,
    pub model: Option<String>,
    pub step: Option<u64>,
}

/// The worst pairs by each metric.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Worst {
    pub cosine: Vec<Pair>,
    pub max_rel: Vec<Pair>,
    pub max_abs: Vec<Pair>,
    pub rmse: Vec<Pair>,
}

/// A golden group compared with a target group.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GroupReport {
    pub golden: GroupSide,
    pub target: GroupSide,
    /// `rank/device/model/step`, `only group` or `--group`.
    pub paired_by: String,
    pub pairs: u64,
    pub failed: u64,
    pub first_divergence: Option<Pair>,
    /// When the first divergent operator's inputs already differ: its first failing input (the
    /// difference came in before that operator — a graph input, or an operator not compared —
    /// so the operator itself is not shown to be at fault). Absent otherwise, and in documents
    /// before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_differ: Option<Pair>,
    pub origin: Option<Origin>,
    pub worst: Worst,
    /// Ascending positions of the group's compared collective operators (for the shard columns).
    #[serde(skip)]
    pub collectives: Vec<usize>,
}

impl GroupReport {
    /// How many compared collectives executed strictly before the operator execution at `order`,
    /// and its own collective ordinal if it is one.
    pub fn collectives_at(&self, order: usize) -> (usize, Option<usize>) {
        crate::dump::order::collectives_at(&self.collectives, order)
    }
}

/// A tensor with no counterpart on the other side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnmatchedTensor {
    pub op_name: String,
    pub io: Io,
    pub index: usize,
    pub file: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unmatched {
    pub golden: Vec<UnmatchedTensor>,
    pub target: Vec<UnmatchedTensor>,
}

/// Which tree a problem was found in.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Golden,
    Target,
    /// The graph texts of the comparison (`--graphs`, the graph dumps in and beside the trees),
    /// which belong to neither run. Added within version 1 of the document.
    Graphs,
}

/// A file (or part of one) that could not be read, and in which tree: the problem's fields sit
/// beside `side` in the document.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareError {
    pub side: Side,
    #[serde(flatten)]
    pub problem: FileProblem,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub pairs: u64,
    pub passed: u64,
    pub failed: u64,
    pub unmatched_golden: u64,
    pub unmatched_target: u64,
    pub groups: u64,
    pub errors: u64,
}

/// Everything a comparison found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareReport {
    pub schema_version: u32,
    pub golden: String,
    pub target: String,
    pub thresholds: Thresholds,
    pub summary: Summary,
    pub groups: Vec<GroupReport>,
    /// Every pair, in group order then execution order.
    pub pairs: Vec<Pair>,
    pub unmatched: Unmatched,
    pub errors: Vec<CompareError>,
}

/// The fields of the `npgx.dump-compare` document (inside the envelope of docs/json.md): what
/// `--format json` writes and what the HTML report reads back.
#[derive(Clone, Debug, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CompareDocument<'a> {
    /// Whether every file could be read. Always written; `None` only when reading a document of
    /// an npgx from before the field (added within version 1).
    pub complete: Option<bool>,
    #[serde(flatten)]
    pub report: Cow<'a, CompareReport>,
}

impl CompareReport {
    /// The operators of one side (`golden` or the target) that have unmatched tensors and no
    /// paired one, sorted and distinct: operators the other run does not have.
    pub fn one_side_ops(&self, golden: bool) -> Vec<&str> {
        let (list, paired): (&[UnmatchedTensor], std::collections::HashSet<&str>) = if golden {
            (
                &self.unmatched.golden,
                self.pairs
                    .iter()
                    .map(|p| p.golden_op_name.as_str())
                    .collect(),
            )
        } else {
            (
                &self.unmatched.target,
                self.pairs.iter().map(|p| p.op_name.as_str()).collect(),
            )
        };
        let mut ops: Vec<&str> = list
            .iter()
            .map(|u| u.op_name.as_str())
            .filter(|n| !paired.contains(n))
            .collect();
        ops.sort_unstable();
        ops.dedup();
        ops
    }

    /// The report's `npgx.dump-compare` document.
    pub fn document(&self) -> CompareDocument<'_> {
        CompareDocument {
            complete: Some(self.errors.is_empty()),
            report: Cow::Borrowed(self),
        }
    }
}

// msprobe's metrics as records (computed by super::msprobe).

/// One msprobe metric: a number, or msprobe's word for its absence (`unsupported`, `N/A`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
#[schemars(rename = "MsprobeValue")]
pub enum MsprobeValue {
    Number(f64),
    Text(Cow<'static, str>),
}

impl MsprobeValue {
    pub fn number(&self) -> Option<f64> {
        match self {
            MsprobeValue::Number(v) => Some(*v),
            MsprobeValue::Text(_) => None,
        }
    }
}

impl std::fmt::Display for MsprobeValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MsprobeValue::Number(v) => write!(f, "{v}"),
            MsprobeValue::Text(t) => f.write_str(t),
        }
    }
}

/// The six columns of msprobe compare's tensor mode, and its message when it gives none.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MsprobeMetrics {
    pub cosine: MsprobeValue,
    pub euc_dist: MsprobeValue,
    pub max_abs_err: MsprobeValue,
    pub max_relative_err: MsprobeValue,
    pub one_thousandth_err_ratio: MsprobeValue,
    pub five_thousandths_err_ratio: MsprobeValue,
    /// msprobe's `Err_message` for a refused pair or metric (empty otherwise).
    pub message: String,
}

/// msprobe's summary mode: how the statistics of two tensors known only by them differ. Each
/// `*_diff` is target − golden; each `*_rel_err` is |diff / golden| in percent, as msprobe
/// writes its `MaxRelativeErr` … `NormRelativeErr` columns. Equal statistics (two absent ones
/// too) give 0; a NaN on
/// either side gives `Nan`, an infinite difference `inf` / `-inf`, a golden 0 a relative `inf`,
/// an absent statistic `N/A`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[schemars(rename = "Summary2")]
pub struct MsprobeSummary {
    pub max_diff: MsprobeValue,
    pub min_diff: MsprobeValue,
    pub mean_diff: MsprobeValue,
    pub norm_diff: MsprobeValue,
    pub max_rel_err: MsprobeValue,
    pub min_rel_err: MsprobeValue,
    pub mean_rel_err: MsprobeValue,
    pub norm_rel_err: MsprobeValue,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry is written flat, `side` first and then the problem's fields, as before the
    /// problem became a type of its own; a document with `offset` null or absent reads back.
    #[test]
    fn a_compare_error_is_its_side_beside_the_problem() {
        let e = CompareError {
            side: Side::Target,
            problem: FileProblem {
                path: "0/Add.a.1.1.1".into(),
                message: "truncated block".into(),
                offset: Some(395),
            },
        };
        let text = serde_json::to_string(&e).expect("serialise");
        assert_eq!(
            text,
            r#"{"side":"target","path":"0/Add.a.1.1.1","message":"truncated block","offset":395}"#
        );
        assert_eq!(
            serde_json::from_str::<CompareError>(&text).expect("read back"),
            e
        );
        let value = serde_json::to_value(&e).expect("as a value");
        assert_eq!(
            value,
            serde_json::json!({"side": "target", "path": "0/Add.a.1.1.1",
                "message": "truncated block", "offset": 395})
        );
        for text in [
            r#"{"side":"golden","path":"p","message":"m","offset":null}"#,
            r#"{"side":"golden","path":"p","message":"m"}"#,
        ] {
            let read: CompareError = serde_json::from_str(text).expect("read");
            assert_eq!(read.side, Side::Golden);
            assert_eq!(read.problem.offset, None);
        }
        assert!(
            serde_json::from_str::<CompareError>(r#"{"side":"golden","message":"m"}"#).is_err(),
            "path is required"
        );
    }
}
