//! The records a dump scan produces. Renderers in `report::dump_scan` turn them into text,
//! JSON, CSV or Parquet; the JSON field names are the stable schema of `docs/dump-scan.md`.

use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::{Layout, Location};
use serde::{Deserialize, Serialize};

/// What a tensor verdict was read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Dump,
    Stats,
    Npy,
    Pt,
}

/// The anomaly classes, most severe first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Nan,
    Inf,
    Overflow,
}

/// Which operator execution a tensor belongs to, and where it sits in execution order.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct OpRef {
    #[serde(flatten)]
    pub location: Location,
    #[serde(skip)]
    pub layout: Layout,
    pub op_name: String,
    pub op_type: Option<String>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub timestamp: Option<u64>,
    /// Order key for files without a timestamp (the `.pt` call counter).
    #[serde(skip)]
    pub counter: Option<u64>,
    /// File path relative to the scan root, `/`-separated.
    pub path: String,
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

/// A file (or part of one) that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScanError {
    pub path: String,
    pub message: String,
    pub offset: Option<u64>,
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

/// One group of files: a (rank, time, device, model, model id, step) of the tree.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Group {
    #[serde(flatten)]
    pub location: Location,
    pub layout: Layout,
    /// Where `rank` and `world_size` came from: `path` (the torchair `worldsize{W}_global_rank{R}`
    /// directory), `option` (`--rank`/`--world-size`), `env:RANK` (the launcher variable read
    /// with `--rank-from-env`, e.g. `env:SLURM_PROCID`); `None` when the rank is unknown.
    pub rank_source: Option<String>,
    pub files: u64,
    pub tensors: u64,
    pub bytes: u64,
    pub anomalous_tensors: u64,
    pub first_anomaly: Option<Anomaly>,
    pub first_born: Option<Anomaly>,
    /// Per operator execution, in execution order: the largest finite magnitude over its
    /// tensors (`max(|min|, |max|)`, as f32 capped at `f32::MAX`), `None` when no tensor had a
    /// finite value.
    pub magnitudes: Vec<Option<f32>>,
    /// Positions in execution order of the collective communication operators (HCCL: `Hcom*`
    /// op types), ascending: the k-th entry is the group's collective number k (0-based).
    pub collectives: Vec<usize>,
    /// Producers of the inputs of anomalous operators, and overwrites, from device addresses.
    pub addresses: super::address::Addresses,
}

impl Group {
    /// How many collectives executed strictly before the operator execution at `order`, and the
    /// ordinal of that execution if it is a collective itself.
    pub fn collectives_at(&self, order: usize) -> (usize, Option<usize>) {
        super::analysis::collectives_at(&self.collectives, order)
    }
}

/// Totals over the whole scan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub files_seen: u64,
    pub dump_files: u64,
    pub tensors: u64,
    pub bytes: u64,
    pub anomalous_tensors: u64,
    pub groups: u64,
    pub errors: u64,
}

/// What to run after a scan that found anomalies: plan the next, narrower dump from its saved
/// JSON document (`npgx dump-config plan`, docs/dump-config.md).
pub const NEXT_PLAN: &str = "npgx dump-config plan scan.json -o dump_config.json";

impl ScanReport {
    /// [`NEXT_PLAN`] when a plan applies: some tensor was anomalous.
    pub fn next(&self) -> Option<&'static str> {
        (self.summary.anomalous_tensors > 0).then_some(NEXT_PLAN)
    }

    /// Whether the scan checked nothing at all: not one tensor and not one Opdebug payload was
    /// read (no dump file was found, or none decoded). Exit code 2, not "clean".
    pub fn nothing_checked(&self) -> bool {
        self.summary.tensors == 0 && self.opdebug.is_empty()
    }
}

/// Everything a scan found.
#[derive(Debug, Serialize)]
pub struct ScanReport {
    /// Rendered as the envelope's `schema_version` (`docs/json.md`).
    #[serde(skip)]
    pub schema_version: u32,
    pub root: String,
    pub summary: Summary,
    pub groups: Vec<Group>,
    pub anomalies: Vec<Anomaly>,
    pub opdebug: Vec<OpdebugRecord>,
    /// Statistics that overflowed by themselves (msprobe dumps), in execution order.
    pub notes: Vec<StatsNote>,
    pub errors: Vec<ScanError>,
    /// Every checked tensor with its place, in execution order; kept and rendered only on
    /// request (`--all`, shards).
    #[serde(skip)]
    pub tensors: super::sorted::TensorsInOrder,
}
