//! What a scan found, as the report renders it: per group ([`Group`]), in sum ([`Summary`]) and
//! whole ([`ScanReport`]), above the per-tensor records ([`super::records`]).

use npgx_parsers::dump::path::{Layout, Location};
use serde::{Deserialize, Serialize};

use super::records::{Anomaly, OpdebugRecord, StatsNote};
use crate::dump::order::collectives_at;
use crate::dump::records::FileProblem;

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
        collectives_at(&self.collectives, order)
    }
}

/// Totals over the whole scan.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
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
/// The command that writes the single-op repro of the anomaly's FX node from the saved scan
/// (`npgx repro --from-scan`, docs/repro.md).
pub const NEXT_REPRO: &str = "npgx repro --from-scan scan.json -o repro_anomaly";

impl ScanReport {
    /// Every anomaly record of the report: the anomalies, then each group's first anomaly and
    /// birth (copies of anomalies, kept apart in the document).
    pub fn findings_mut(&mut self) -> impl Iterator<Item = &mut Anomaly> {
        self.anomalies.iter_mut().chain(
            self.groups
                .iter_mut()
                .flat_map(|g| g.first_anomaly.iter_mut().chain(g.first_born.iter_mut())),
        )
    }

    /// [`NEXT_REPRO`] when a group's first born anomaly (or first anomaly) was traced to an FX
    /// node: `npgx repro --from-scan` rebuilds that node's call.
    pub fn next_repro(&self) -> Option<&'static str> {
        let traced = |a: &Option<Anomaly>| {
            a.as_ref()
                .and_then(|a| a.fx.as_ref())
                .is_some_and(|f| f.fx_node.is_some())
        };
        self.groups
            .iter()
            .any(|g| traced(&g.first_born) || traced(&g.first_anomaly))
            .then_some(NEXT_REPRO)
    }

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
    pub errors: Vec<FileProblem>,
    /// Every checked tensor with its place, in execution order; kept and rendered only on
    /// request (`--all`, shards).
    #[serde(skip)]
    pub tensors: super::sorted::TensorsInOrder,
    /// The graph texts read and each operator's FX origin, when there were any
    /// ([`super::origin`]; the tables' `fx_*` columns).
    #[serde(skip)]
    pub origins: Option<super::origin::Origins>,
}
