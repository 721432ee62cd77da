//! Merging shards: per-node `dump-scan` results (one Parquet row per tensor, docs/cluster.md)
//! read together with polars' lazy Parquet scan, and the first anomalous rank of each step
//! named without trusting wall clocks.
//!
//! polars does the table work (scan with projection and predicate pushdown, group-bys, joins);
//! what comes back is one row per (step, rank), from which [`decide`] places each rank's first
//! anomaly by the collective operators it had passed.
//!
//! This module holds the `npgx.merge` document, written by `npgx merge` and read back by
//! `dump-config plan` (in every build); the merge itself (`run`) needs polars, the `tables`
//! feature.

#[cfg(feature = "tables")]
mod run;

use serde::{Deserialize, Serialize};

#[cfg(feature = "tables")]
pub use run::{check_shard, decide, merge, shard_files};

/// Name of the `npgx.merge` JSON document.
pub const SCHEMA_NAME: &str = "merge";
/// Version of the `npgx.merge` JSON document (docs/cluster.md).
pub const SCHEMA_VERSION: u32 = 1;

/// A file that was not merged, and why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Skipped {
    pub path: String,
    pub message: String,
}

/// Which evidence decided a step's origin.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The origin's first anomaly came before collective k while every other rank was clean up
    /// to k.
    CollectiveOrdinal,
    /// The step has no collective operator: execution positions were compared.
    ExecutionPosition,
    /// Several ranks went wrong between the same two collectives (or at the same position).
    Ambiguous,
}

/// Where a rank's first anomalous (or first born) tensor is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Point {
    /// Position of its operator execution in the rank's execution order.
    pub position: u64,
    /// Collectives of the step the rank had passed before that operator.
    pub collectives_before: u64,
    /// The operator's own collective ordinal, when it is a collective.
    pub collective: Option<u64>,
    pub op_name: Option<String>,
    pub op_type: Option<String>,
    pub io: Option<String>,
    pub index: Option<u64>,
    pub kind: Option<String>,
    /// Whether the operator had an anomalous input.
    pub input_anomalous: bool,
}

/// One rank of a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankFinding {
    pub rank: u64,
    pub tensors: u64,
    pub anomalous_tensors: u64,
    /// Collective operators this rank executed in the step.
    pub collectives: u64,
    pub first_anomaly: Option<Point>,
    pub first_born: Option<Point>,
}

/// A rank whose first anomaly appeared after the origin's, and the collective it came through.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Received {
    pub rank: u64,
    /// The last collective the rank passed before its first anomaly (`null` without collectives).
    pub after_collective: Option<u64>,
}

/// The first anomalous rank of a step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Verdict {
    /// The origin rank; several when ambiguous.
    pub origin: Vec<u64>,
    pub evidence: Evidence,
    /// The origin's anomaly existed before this collective (0-based ordinal in the step), through
    /// which it reached the others; `null` without collectives or after the last one.
    pub before_collective: Option<u64>,
    pub received: Vec<Received>,
    /// Every origin rank's first anomaly is the output of a collective whose inputs were clean:
    /// it came from another rank — one without a shard (`missing_ranks`) or whose dump lacks
    /// the operators where it was born.
    pub origin_received: bool,
}

/// One step of one job: (world size, model, step).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepReport {
    pub world_size: Option<u64>,
    /// The model key: the model name without torchair's run stamp
    /// ([`crate::dump::order::model_key`]).
    pub model: Option<String>,
    pub step: Option<u64>,
    pub ranks: u64,
    /// Whether every rank of the world size has rows in this step (`missing_ranks` is empty).
    pub complete: bool,
    /// Ranks below the world size with no rows in any shard: an origin among them cannot be seen.
    pub missing_ranks: Vec<u64>,
    /// The most collectives any rank executed in the step.
    pub collectives: u64,
    pub anomalous_ranks: Vec<u64>,
    pub verdict: Option<Verdict>,
    /// The anomalous ranks, by rank.
    pub findings: Vec<RankFinding>,
}

/// Totals.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Summary {
    pub shards: u64,
    pub skipped: u64,
    pub tensors: u64,
    pub steps: u64,
    pub anomalous_steps: u64,
}

/// Ranks of a job (a world size) with no row in any step: no shard, or a skipped one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MissingRanks {
    pub world_size: u64,
    pub ranks: Vec<u64>,
}

/// A step that ranks seen in other steps of the job lack.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MissingInStep {
    pub world_size: u64,
    pub model: Option<String>,
    pub step: Option<u64>,
    pub ranks: Vec<u64>,
}

/// A shard whose scan could not read some files of its tree.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unread {
    pub shard: String,
    /// Files of the scanned tree the scan could not read (its `errors`).
    pub files: u64,
}

/// What a merge could not see: a verdict over the rest is not an all-clear.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Unseen {
    /// Shard files skipped (paths; the reasons are in `skipped`).
    pub shards: Vec<String>,
    /// Shards whose scan could not read some files (`dump-scan --exit-zero` exits 0 for them).
    pub unread: Vec<Unread>,
    /// Ranks below the world size without a row in any step of their job.
    pub ranks: Vec<MissingRanks>,
    /// Steps that ranks seen elsewhere in their job lack.
    pub steps: Vec<MissingInStep>,
}

impl Unseen {
    pub fn is_empty(&self) -> bool {
        self.shards.is_empty()
            && self.unread.is_empty()
            && self.ranks.is_empty()
            && self.steps.is_empty()
    }
}

/// Everything a merge found.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MergeReport {
    /// Whether every shard was read and every rank of every step seen (`unseen` is empty), and
    /// there was a step to see (shards without a tensor row are never complete).
    pub complete: bool,
    pub unseen: Unseen,
    pub summary: Summary,
    pub steps: Vec<StepReport>,
    pub skipped: Vec<Skipped>,
    pub warnings: Vec<String>,
}

impl MergeReport {
    /// Whether any step has an anomalous rank.
    pub fn has_findings(&self) -> bool {
        self.summary.anomalous_steps > 0
    }
}
