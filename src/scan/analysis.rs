//! From per-file tensor records to groups, execution order, first anomalies and Opdebug pairs.
//!
//! One file is one operator execution (a stats CSV likewise; `.npy` files converted from the same
//! dump are joined back into their operator by the dump name they carry). Execution order is
//! [`super::order`]'s.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use npgx_parsers::dump::header::Io;

use super::address::{Addressed, Book};
use super::order::{op_key, tensor_order, CompactKey, Names, Placer};
use super::records::{Anomaly, OpdebugRecord, StatsNote, TensorRecord};
use super::scan_report::Group;
use super::sorted::{TensorRuns, TensorsInOrder};
use super::store::{Blocks, TensorStore};
use crate::dump::order::{exec_key, is_collective, OpKey};
use crate::dump::records::{GroupKey, OpRef};

/// What is remembered of an operator execution that had an anomaly (clean executions leave
/// nothing behind): indices into [`Collector::anomalies`].
#[derive(Default)]
struct OpState {
    input_anomalous: bool,
    /// The anomalous tensor that comes first within the operator (inputs first, then by index).
    first: Option<usize>,
    /// The first anomalous output.
    first_output: Option<usize>,
}

/// Whether `candidate` comes before the anomalous tensor `current` of the same operator execution
/// (inputs first, then by index, then by file).
fn earlier(anomalies: &TensorStore, current: Option<usize>, candidate: &TensorRecord) -> bool {
    let at = |t: &TensorRecord| (t.io, t.index);
    current
        .and_then(|i| anomalies.get(i))
        .is_none_or(|c| (at(candidate), &candidate.op.path) < (at(&c), &c.op.path))
}

#[derive(Default)]
struct GroupState {
    files: u64,
    bytes: u64,
    tensors: u64,
    anomalous: u64,
    /// Only operators with an anomaly, in execution order.
    ops: BTreeMap<OpKey, OpState>,
    /// Every operator execution as files are read (unordered, consecutive tensors of one
    /// execution merged): its compact key and its largest finite magnitude (NaN: none).
    execs: Blocks<(CompactKey, f32)>,
    /// The same in execution order, one entry per execution, from [`Collector::finish`] on:
    /// keys and magnitudes.
    keys: Vec<CompactKey>,
    magnitudes: Vec<f32>,
    /// From [`Collector::finish`] on: the position in `magnitudes` of each entry of `execs`.
    positions: Vec<u32>,
    /// The collective operator executions ([`is_collective`]); few per step.
    collectives: BTreeSet<OpKey>,
    /// Address ranges of outputs, and of inputs of operators with an anomaly.
    book: Book,
}

impl GroupState {
    /// The index in `execs` of the execution `key` of `op`: the last one when it is the same (a
    /// file's tensors, then the next file of the same execution), else a new one.
    fn exec(&mut self, key: CompactKey, op: &OpRef) -> u32 {
        if self.execs.last().is_none_or(|(k, _)| *k != key) {
            self.execs.push((key, f32::NAN));
            // A new operator execution: the one place to ask whether it is a collective.
            if is_collective(op) {
                self.collectives.insert(exec_key(op));
            }
        }
        u32::try_from(self.execs.len() - 1).unwrap_or(u32::MAX)
    }

    /// Orders the executions ([`GroupState::keys`], equal keys merged) and numbers each
    /// entry of `execs` with its position ([`GroupState::positions`]), sorting them in place.
    fn order(&mut self, names: &Names) {
        let mut execs = std::mem::take(&mut self.execs).into_vec();
        let mut ids: Vec<u32> = (0..execs.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        let key = |i: u32| execs.get(i as usize).map(|(k, _)| k);
        ids.sort_by(|&a, &b| match (key(a), key(b)) {
            (Some(a), Some(b)) => names.cmp(a, b),
            _ => Ordering::Equal,
        });
        let mut positions = vec![0u32; execs.len()];
        let mut at = 0u32;
        for (n, &i) in ids.iter().enumerate() {
            if n > 0 && key(ids[n - 1]) != key(i) {
                at += 1;
            }
            if let Some(p) = positions.get_mut(i as usize) {
                *p = at;
            }
        }
        drop(ids);
        execs.sort_by(|a, b| names.cmp(&a.0, &b.0));
        execs.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                // f32::max ignores a NaN operand.
                kept.1 = kept.1.max(later.1);
            }
            same
        });
        (self.keys, self.magnitudes) = execs.into_iter().unzip();
        self.positions = positions;
    }
}

/// Accumulates tensor records as files are read, keeping memory proportional to the number of
/// groups, anomalies and operator executions (32 bytes each: its place in execution order and its
/// largest finite magnitude, for `order` and `magnitudes`) — not tensors or files — unless every
/// tensor is asked for.
pub struct Collector {
    groups: BTreeMap<GroupKey, GroupState>,
    names: Names,
    /// The anomalous tensors, compactly until [`Collector::finish`] (an [`Anomaly`] holds ten
    /// strings).
    anomalies: TensorStore,
    notes: Vec<StatsNote>,
    /// Every tensor, in sorted runs (`--all`, shards).
    all: Option<TensorRuns>,
}

/// The result: groups with their first anomaly and first birth, anomalies and (on request) all
/// tensors, both in execution order.
pub struct Analysis {
    pub groups: Vec<Group>,
    pub anomalies: Vec<Anomaly>,
    /// Statistics notes, in execution order.
    pub notes: Vec<StatsNote>,
    /// Every tensor with its place, read back in execution order (empty unless kept).
    pub tensors: TensorsInOrder,
    pub tensor_count: u64,
}

impl Collector {
    /// `keep_all`: also keep every clean tensor (for `--all`).
    pub fn new(keep_all: bool) -> Collector {
        Collector {
            groups: BTreeMap::new(),
            names: Names::default(),
            anomalies: TensorStore::default(),
            notes: Vec::new(),
            all: keep_all.then(TensorRuns::default),
        }
    }

    /// Counts one decoded file of a group and the tensor bytes read from it.
    pub fn add_file(&mut self, key: GroupKey, bytes: u64) {
        let g = self.groups.entry(key).or_default();
        g.files += 1;
        g.bytes += bytes;
    }

    /// Takes in the device addresses of one file's tensors (`tensors`: the verdicts read from
    /// it, all of one operator execution), before the tensors themselves are added.
    pub fn add_addresses(&mut self, tensors: &[TensorRecord], addresses: &[Addressed]) {
        let Some(first) = tensors.first() else {
            return;
        };
        let g = self
            .groups
            .entry((first.op.location.clone(), first.op.layout))
            .or_default();
        let key = self.names.key(&op_key(first));
        let exec = g.exec(key, &first.op);
        g.book
            .add(&mut self.names, exec, &first.op, tensors, addresses);
    }

    /// Keeps a statistics note (its tensor is added with [`Collector::add`] as well).
    pub fn add_note(&mut self, n: StatsNote) {
        self.notes.push(n);
    }

    pub fn add(&mut self, t: TensorRecord) {
        let g = self
            .groups
            .entry((t.op.location.clone(), t.op.layout))
            .or_default();
        g.tensors += 1;
        let magnitude = t
            .min
            .into_iter()
            .chain(t.max)
            .map(f64::abs)
            .reduce(f64::max)
            .map_or(f32::NAN, |m| (m as f32).min(f32::MAX));
        let key = self.names.key(&op_key(&t));
        g.exec(key, &t.op);
        if let Some((_, m)) = g.execs.last_mut() {
            // f32::max ignores a NaN operand.
            *m = m.max(magnitude);
        }
        if t.is_anomalous() {
            g.anomalous += 1;
            let i = self.anomalies.len();
            let op = g.ops.entry(op_key(&t)).or_default();
            if matches!(t.io, Io::Input | Io::Parameter) {
                op.input_anomalous = true;
            } else if earlier(&self.anomalies, op.first_output, &t) {
                op.first_output = Some(i);
            }
            if earlier(&self.anomalies, op.first, &t) {
                op.first = Some(i);
            }
            match &mut self.all {
                Some(all) => {
                    self.anomalies.push(t.clone());
                    all.push(t);
                }
                None => self.anomalies.push(t),
            }
        } else if let Some(all) = &mut self.all {
            all.push(t);
        }
    }

    /// Orders everything and picks, per group, the first anomaly and the first birth; numbers
    /// each anomaly with its group and its operator's position in execution order.
    pub fn finish(mut self) -> Analysis {
        let names = &self.names;
        for g in self.groups.values_mut() {
            g.order(names);
        }
        let addresses: Vec<_> = self
            .groups
            .values_mut()
            .map(|g| {
                let book = std::mem::take(&mut g.book);
                let addresses = super::address::link(book, names, &g.keys, &g.positions);
                g.positions = Vec::new();
                addresses
            })
            .collect();
        // The links were the last use of the files' names.
        self.names.forget_files();
        let placer = Placer {
            groups: self.groups.keys().cloned().collect(),
            execs: self
                .groups
                .values_mut()
                .map(|g| std::mem::take(&mut g.keys))
                .collect(),
            names: self.names,
        };
        // Rebuilt once the address books are gone, so that the two are never held at once.
        let mut anomalies: Vec<Anomaly> = self
            .anomalies
            .iter()
            .filter_map(|t| Anomaly::of(&t))
            .collect();
        drop(self.anomalies);
        for a in &mut anomalies {
            let p = placer.place(&a.tensor.op);
            (a.group, a.order) = (p.group, p.order);
        }
        let mut notes = self.notes;
        for n in &mut notes {
            let p = placer.place(&n.op);
            (n.group, n.order) = (p.group, p.order);
        }
        notes.sort_by(|a, b| {
            let key = |n: &StatsNote| (n.group, n.order, n.io, n.index);
            key(a).cmp(&key(b)).then_with(|| a.path.cmp(&b.path))
        });
        let collectives: Vec<Vec<usize>> = self
            .groups
            .values()
            .enumerate()
            .map(|(group, g)| {
                let mut at: Vec<usize> = g
                    .collectives
                    .iter()
                    .map(|k| placer.order_of(group, k))
                    .collect();
                at.sort_unstable();
                at.dedup();
                at
            })
            .collect();
        // The placer stays only to place every tensor as it is read back.
        let tensors = match self.all {
            Some(all) => all.finish(placer),
            None => TensorsInOrder::default(),
        };
        let pick = |i: Option<usize>| i.and_then(|i| anomalies.get(i)).cloned();
        let mut tensor_count = 0;
        let groups: Vec<Group> = self
            .groups
            .into_iter()
            .zip(collectives)
            .zip(addresses)
            .map(|((((location, layout), g), collectives), addresses)| {
                tensor_count += g.tensors;
                let first_anomaly = pick(g.ops.values().find_map(|o| o.first));
                let first_born = pick(
                    g.ops
                        .values()
                        .find(|o| !o.input_anomalous && o.first_output.is_some())
                        .and_then(|o| o.first_output),
                );
                Group {
                    location,
                    layout,
                    rank_source: None,
                    files: g.files,
                    tensors: g.tensors,
                    bytes: g.bytes,
                    anomalous_tensors: g.anomalous,
                    first_anomaly,
                    first_born,
                    magnitudes: g
                        .magnitudes
                        .into_iter()
                        .map(|m| (!m.is_nan()).then_some(m))
                        .collect(),
                    collectives,
                    addresses,
                }
            })
            .collect();
        anomalies.sort_by(|a, b| tensor_order(&a.tensor, &b.tensor));
        Analysis {
            groups,
            anomalies,
            notes,
            tensors,
            tensor_count,
        }
    }
}

/// Where an op dump lies, for pairing with Opdebug payloads.
#[derive(Clone, Debug)]
pub struct DumpIndexEntry {
    pub dir: String,
    pub task_id: u64,
    pub stream_id: u64,
    pub timestamp: Option<u64>,
    pub path: String,
}

/// Pairs each Opdebug payload with the op dump that overflowed: the dump in the same directory
/// whose task and stream ids are those of a unit the payload reports as overflowed (not the ids
/// of the Opdebug task itself); the earliest such dump wins, as in msaccucmp.
pub fn pair_opdebug(opdebug: &mut [OpdebugRecord], dumps: &[DumpIndexEntry]) {
    for d in opdebug.iter_mut() {
        let overflowed: Vec<(u64, u64)> = d
            .units
            .iter()
            .filter(|u| u.status != 0)
            .map(|u| (u.task_id, u.stream_id))
            .collect();
        d.paired_dump = dumps
            .iter()
            .filter(|e| e.dir == d.dir && overflowed.contains(&(e.task_id, e.stream_id)))
            .min_by_key(|e| (e.timestamp, e.path.as_str()))
            .map(|e| e.path.clone());
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::scan::records::{Place, Source};
    use npgx_parsers::dump::path::{Layout, Location};

    /// A tensor of 4 fp32 elements of operator `op` run at `ts`, with `nan` NaNs.
    pub(in crate::scan) fn t(op: &str, ts: u64, io: Io, index: usize, nan: u64) -> TensorRecord {
        TensorRecord {
            op: OpRef {
                location: Location::default(),
                layout: Layout::Model,
                op_name: op.into(),
                op_type: Some("T".into()),
                task_id: Some(ts),
                stream_id: Some(1),
                timestamp: Some(ts),
                counter: None,
                path: format!("{op}.{ts}"),
            },
            io,
            index,
            dtype: "DT_FLOAT".into(),
            format: None,
            shape: vec![4],
            elements: 4,
            nan,
            pos_inf: 0,
            neg_inf: 0,
            overflow: Some(0),
            min: None,
            max: None,
            mean: None,
            source: Source::Dump,
            slot: None,
        }
    }

    /// Where a tensor sits in execution order, spelled out: group, operator, inputs before
    /// outputs, index, then its file.
    fn order_key(t: &TensorRecord) -> (GroupKey, OpKey, Io, usize, String) {
        (
            (t.op.location.clone(), t.op.layout),
            op_key(t),
            t.io,
            t.index,
            t.op.path.clone(),
        )
    }

    /// Every kept tensor, read back.
    pub(in crate::scan) fn kept(a: &Analysis) -> Vec<(Place, TensorRecord)> {
        let rows = a.tensors.iter().expect("runs readable");
        rows.collect::<anyhow::Result<_>>().expect("runs readable")
    }

    fn run(tensors: Vec<TensorRecord>, keep_all: bool) -> Analysis {
        let mut c = Collector::new(keep_all);
        c.add_file((Location::default(), Layout::Model), 60);
        for t in tensors {
            c.add(t);
        }
        c.finish()
    }

    #[test]
    fn magnitudes_follow_execution_order_and_merge_an_operators_tensors() {
        let with = |mut r: TensorRecord, min: f64, max: f64| {
            r.min = Some(min);
            r.max = Some(max);
            r
        };
        // Arrival out of order, one operator's tensors split (as .npy files are).
        let a = run(
            vec![
                with(t("c", 30, Io::Output, 0, 1), -1.0, 2.0),
                with(t("a", 10, Io::Input, 0, 0), -5.0, 1.0),
                t("b", 20, Io::Output, 0, 0),
                with(t("a", 10, Io::Output, 0, 0), 0.0, 7.0),
                with(t("c", 30, Io::Input, 0, 0), -3.0, 0.5),
            ],
            false,
        );
        assert_eq!(a.groups[0].magnitudes, vec![Some(7.0f32), None, Some(3.0)]);
        assert_eq!((a.anomalies[0].group, a.anomalies[0].order), (0, 2));
        assert_eq!(a.groups[0].first_anomaly.as_ref().map(|x| x.order), Some(2));
    }

    #[test]
    fn first_anomaly_follows_time_and_birth_needs_clean_inputs() {
        // C (t=3) has a NaN input and output; B (t=2) is born with clean inputs; A (t=1) clean.
        // Records arrive out of order, as they do from parallel readers.
        let tensors = vec![
            t("C", 3, Io::Output, 0, 1),
            t("C", 3, Io::Input, 0, 1),
            t("B", 2, Io::Output, 1, 2),
            t("B", 2, Io::Input, 0, 0),
            t("A", 1, Io::Output, 0, 0),
        ];
        let a = run(tensors, true);
        assert_eq!(a.groups.len(), 1);
        let g = &a.groups[0];
        assert_eq!(
            (g.files, g.tensors, g.anomalous_tensors, g.bytes),
            (1, 5, 3, 60)
        );
        let first = g.first_anomaly.as_ref().unwrap();
        assert_eq!(
            (
                first.tensor.op.op_name.as_str(),
                first.tensor.io,
                first.tensor.index
            ),
            ("B", Io::Output, 1)
        );
        let born = g.first_born.as_ref().unwrap();
        assert_eq!(born.tensor.op.op_name, "B");
        let order: Vec<_> = kept(&a)
            .into_iter()
            .map(|(_, t)| (t.op.op_name, t.io))
            .collect();
        assert_eq!(
            order,
            [
                ("A".to_string(), Io::Output),
                ("B".to_string(), Io::Input),
                ("B".to_string(), Io::Output),
                ("C".to_string(), Io::Input),
                ("C".to_string(), Io::Output)
            ]
        );
        let anomalous: Vec<_> = a
            .anomalies
            .iter()
            .map(|x| (x.tensor.op.op_name.as_str(), x.tensor.io))
            .collect();
        assert_eq!(
            anomalous,
            [("B", Io::Output), ("C", Io::Input), ("C", Io::Output)]
        );
        assert_eq!(a.tensor_count, 5);
    }

    #[test]
    fn kept_tensors_are_in_order_key_order() {
        // Two groups, tied and untied files (no task id or timestamp: the path orders them),
        // counters, equal timestamps broken by op name, inputs before outputs.
        let mut all = Vec::new();
        for (i, (op, ts, counter, group)) in [
            ("B", Some(5), None, 0),
            ("A", Some(5), None, 0),
            ("x", None, Some(2), 1),
            ("x", None, Some(1), 1),
            ("C", Some(3), None, 1),
            ("y", None, None, 0),
            ("y", None, None, 1),
            ("y", None, None, 0),
        ]
        .into_iter()
        .enumerate()
        {
            for (io, index) in [
                (Io::Output, 1),
                (Io::Input, 1),
                (Io::Output, 0),
                (Io::Input, 0),
            ] {
                let mut r = t(op, ts.unwrap_or(0), io, index, 0);
                r.op.timestamp = ts;
                r.op.task_id = ts;
                r.op.counter = counter;
                r.op.path = format!("d{}/f{}", i % 3, 9 - i);
                r.op.location.step = Some(group);
                all.push(r);
            }
        }
        let mut c = Collector::new(true);
        for r in all.clone() {
            c.add(r);
        }
        let a = c.finish();
        let mut want = all;
        want.sort_by_cached_key(order_key);
        let (places, got): (Vec<Place>, Vec<TensorRecord>) = kept(&a).into_iter().unzip();
        assert_eq!(got, want);
        // Two groups (steps 0 and 1); positions count the operator executions of each.
        let at = |p: &Place| (p.group, p.order);
        assert_eq!(places.first().map(at), Some((0, 0)));
        assert_eq!(places.last().map(at), Some((1, 3)));
        assert!(places.windows(2).all(|w| at(&w[0]) <= at(&w[1])));
    }

    #[test]
    fn propagated_only_has_no_birth_and_clean_tensors_are_not_kept() {
        let tensors = vec![
            t("C", 3, Io::Input, 0, 1),
            t("C", 3, Io::Output, 0, 1),
            t("D", 4, Io::Output, 0, 0),
        ];
        let a = run(tensors, false);
        assert!(a.groups[0].first_anomaly.is_some());
        assert!(a.groups[0].first_born.is_none());
        assert!(a.tensors.is_empty());
        assert_eq!((a.tensor_count, a.anomalies.len()), (3, 2));
    }
}
