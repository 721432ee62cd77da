//! From per-file tensor records to groups, execution order, first anomalies and Opdebug pairs.
//!
//! One file is one operator execution (a stats CSV likewise; `.npy` files converted from the same
//! dump are joined back into their operator by the dump name they carry). Within a group,
//! operators are ordered by timestamp, then counter, task id and path, which is the device's
//! execution order for model dumps (the timestamp is written when the task completes).

use std::collections::BTreeMap;

use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::{Layout, Location};

use super::records::{Anomaly, Group, OpdebugRecord, TensorRecord};

/// A group: where in the tree, and which layout matched.
pub type GroupKey = (Location, Layout);

/// Sort key of an operator execution within its group.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct OpKey {
    timestamp: Option<u64>,
    counter: Option<u64>,
    task_id: Option<u64>,
    stream_id: Option<u64>,
    op_name: String,
    /// Set for files whose name does not tie them to an op (each is its own execution).
    path: String,
}

fn op_key(t: &TensorRecord) -> OpKey {
    let tied = t.op.task_id.is_some() || t.op.timestamp.is_some();
    OpKey {
        timestamp: t.op.timestamp,
        counter: t.op.counter,
        task_id: t.op.task_id,
        stream_id: t.op.stream_id,
        op_name: t.op.op_name.clone(),
        path: if tied {
            String::new()
        } else {
            t.op.path.clone()
        },
    }
}

/// Tensors of one group, by operator execution in order.
type Ops = BTreeMap<OpKey, Vec<TensorRecord>>;

fn io_rank(io: Io) -> u8 {
    match io {
        Io::Input => 0,
        Io::Output => 1,
        Io::Buffer => 2,
        Io::Workspace => 3,
    }
}

/// The per-group results plus every tensor in execution order.
pub struct Analysis {
    pub groups: Vec<Group>,
    pub tensors: Vec<TensorRecord>,
}

/// Groups tensors, orders them and finds each group's first anomaly and first birth.
/// `files` holds, per group, the number of decoded files and the tensor bytes read from them.
pub fn analyse(tensors: Vec<TensorRecord>, files: &BTreeMap<GroupKey, (u64, u64)>) -> Analysis {
    let mut groups: BTreeMap<GroupKey, Ops> = BTreeMap::new();
    for t in tensors {
        let key = (t.op.location.clone(), t.op.layout);
        groups
            .entry(key)
            .or_default()
            .entry(op_key(&t))
            .or_default()
            .push(t);
    }
    for key in files.keys() {
        groups.entry(key.clone()).or_default();
    }
    let mut out = Analysis {
        groups: Vec::with_capacity(groups.len()),
        tensors: Vec::new(),
    };
    for ((location, layout), ops) in groups {
        let (n_files, bytes) = files
            .get(&(location.clone(), layout))
            .copied()
            .unwrap_or((0, 0));
        let mut g = Group {
            files: n_files,
            location,
            layout,
            tensors: 0,
            bytes,
            anomalous_tensors: 0,
            first_anomaly: None,
            first_born: None,
        };
        for (_, mut op_tensors) in ops {
            op_tensors.sort_by_key(|t| (io_rank(t.io), t.index));
            let mut inputs_clean = true;
            let mut outputs_bad = None;
            for t in &op_tensors {
                g.tensors += 1;
                let a = Anomaly::of(t);
                if let Some(a) = &a {
                    g.anomalous_tensors += 1;
                    if g.first_anomaly.is_none() {
                        g.first_anomaly = Some(a.clone());
                    }
                    match t.io {
                        Io::Input => inputs_clean = false,
                        _ if outputs_bad.is_none() => outputs_bad = Some(a.clone()),
                        _ => {}
                    }
                }
            }
            if g.first_born.is_none() && inputs_clean {
                g.first_born = outputs_bad;
            }
            out.tensors.extend(op_tensors);
        }
        out.groups.push(g);
    }
    out
}

/// Pairs each Opdebug payload with the op dump that overflowed: the dump in the same directory
/// whose task and stream ids are those of a unit the payload reports as overflowed (not the ids
/// of the Opdebug task itself); the earliest such dump wins, as in msaccucmp.
pub fn pair_opdebug(opdebug: &mut [OpdebugRecord], tensors: &[TensorRecord]) {
    for d in opdebug.iter_mut() {
        let dir_prefix = if d.dir.is_empty() {
            String::new()
        } else {
            format!("{}/", d.dir)
        };
        let overflowed: Vec<(u64, u64)> = d
            .units
            .iter()
            .filter(|u| u.status != 0)
            .map(|u| (u.task_id, u.stream_id))
            .collect();
        d.paired_dump = tensors
            .iter()
            .filter(|t| {
                overflowed.iter().any(|&(task, stream)| {
                    t.op.task_id == Some(task) && t.op.stream_id == Some(stream)
                }) && t.op.path.starts_with(&dir_prefix)
                    && !t.op.path[dir_prefix.len()..].contains('/')
                    && t.op.op_type.as_deref() != Some("Opdebug")
            })
            .min_by_key(|t| (t.op.timestamp, t.op.path.clone()))
            .map(|t| t.op.path.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::records::{OpRef, Source};

    fn t(op: &str, ts: u64, io: Io, index: usize, nan: u64) -> TensorRecord {
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
        }
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
        let mut files = BTreeMap::new();
        files.insert((Location::default(), Layout::Model), (3, 60));
        let a = analyse(tensors, &files);
        assert_eq!(a.groups.len(), 1);
        let g = &a.groups[0];
        assert_eq!(
            (g.files, g.tensors, g.anomalous_tensors, g.bytes),
            (3, 5, 3, 60)
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
        let order: Vec<_> = a
            .tensors
            .iter()
            .map(|t| (t.op.op_name.as_str(), t.io))
            .collect();
        assert_eq!(
            order,
            [
                ("A", Io::Output),
                ("B", Io::Input),
                ("B", Io::Output),
                ("C", Io::Input),
                ("C", Io::Output)
            ]
        );
    }

    #[test]
    fn propagated_only_has_no_birth() {
        let tensors = vec![t("C", 3, Io::Input, 0, 1), t("C", 3, Io::Output, 0, 1)];
        let a = analyse(tensors, &BTreeMap::new());
        assert!(a.groups[0].first_anomaly.is_some());
        assert!(a.groups[0].first_born.is_none());
    }
}
