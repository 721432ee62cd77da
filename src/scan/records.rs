//! The records a dump scan produces (the operator reference and the file problem are the tree
//! lister's, [`crate::dump::records`]). Renderers in `report::dump_scan` turn them into text,
//! JSON, CSV or Parquet; the JSON field names are the stable schema of `docs/dump-scan.md`.

use npgx_parsers::dump::header::Io;

use crate::dump::records::OpRef;
use serde::{Deserialize, Serialize};

/// What a tensor verdict was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Dump,
    Stats,
    Npy,
    Pt,
}

/// The anomaly classes, most severe first.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Nan,
    Inf,
    Overflow,
}

/// One checked tensor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TensorRecord {
    #[serde(flatten)]
    pub op: OpRef,
    pub io: Io,
    pub index: usize,
    pub dtype: String,
    pub format: Option<String>,
    pub shape: Vec<u64>,
    pub elements: u64,
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    /// `None` when only a stats max/min proves saturation (the count is unknown).
    pub overflow: Option<u64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub mean: Option<f64>,
    pub source: Source,
    /// msprobe's name of the tensor within its call (`input.0`, `input.2.1`,
    /// `parameters.weight`); `None` for other dumps.
    pub slot: Option<String>,
}

impl TensorRecord {
    /// All anomaly kinds present, most severe first.
    pub fn kinds(&self) -> Vec<Kind> {
        let mut k = Vec::new();
        if self.nan > 0 {
            k.push(Kind::Nan);
        }
        if self.pos_inf > 0 || self.neg_inf > 0 {
            k.push(Kind::Inf);
        }
        if self.overflow != Some(0) {
            k.push(Kind::Overflow);
        }
        k
    }

    pub fn is_anomalous(&self) -> bool {
        !self.kinds().is_empty()
    }
}

/// A tensor with at least one anomaly, as reported.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Anomaly {
    /// Index of its group in the report's `groups`.
    pub group: usize,
    /// Position of its operator execution in the group's execution order (0-based; the index
    /// into the group's `magnitudes`).
    pub order: usize,
    pub kind: Kind,
    pub kinds: Vec<Kind>,
    #[serde(flatten)]
    pub tensor: TensorRecord,
    /// The user's line of the call's stack (msprobe `stack.json`), when known.
    pub stack: Option<String>,
    /// Its FX node, source line and user's line, when graph texts were read (`null`
    /// otherwise; shared by the tensors of one operator).
    pub fx: Option<std::sync::Arc<crate::source_map::FxOrigin>>,
}

impl Anomaly {
    /// `None` when the tensor is clean.
    pub fn of(tensor: &TensorRecord) -> Option<Anomaly> {
        let kinds = tensor.kinds();
        Some(Anomaly {
            group: 0,
            order: 0,
            kind: *kinds.first()?,
            kinds,
            tensor: tensor.clone(),
            stack: None,
            fx: None,
        })
    }
}

/// A statistic that overflowed by itself: msprobe's Mean or Norm of a tensor is not finite while
/// its Max and Min are (so no element is NaN or infinite — the sum of squares or the sum ran
/// past the largest value of the type the statistic was computed in). Reported apart, never as
/// an anomaly of the tensor.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsNote {
    /// Index of its group in the report's `groups` and position of its call in execution order.
    pub group: usize,
    pub order: usize,
    /// The call (`Distributed.all_reduce.3.forward`).
    pub op_name: String,
    pub io: Io,
    pub index: usize,
    pub slot: Option<String>,
    pub dtype: String,
    pub shape: Vec<u64>,
    /// The statistics that are not finite (`Mean`, `Norm`).
    pub statistics: Vec<&'static str>,
    pub max: Option<f64>,
    pub min: Option<f64>,
    /// As written; JSON prints a non-finite value as null, so `statistics` names them.
    pub mean: Option<f64>,
    pub norm: Option<f64>,
    pub path: String,
    pub stack: Option<String>,
    #[serde(skip)]
    pub op: OpRef,
}

/// Where a tensor sits: the index of its group in the report's `groups` and the position of its
/// operator execution in the group's execution order.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Place {
    pub group: usize,
    pub order: usize,
}

/// A decoded `Opdebug.Node_OpDebug.*` overflow payload and the op dump it belongs to.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpdebugRecord {
    pub path: String,
    pub layout: &'static str,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub units: Vec<npgx_parsers::dump::opdebug::OverflowUnit>,
    pub paired_dump: Option<String>,
    #[serde(skip)]
    pub dir: String,
}
