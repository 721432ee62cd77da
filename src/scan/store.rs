//! Tensors kept compactly in memory: a scan's anomalies, and each batch of every tensor sorted
//! for `--all` and Parquet shards (`super::sorted`).
//!
//! A [`TensorRecord`] with its eight strings costs about 1 KiB; here a tensor is one fixed-size
//! [`Row`] (144 bytes): group, op name, op type, dtype, format and shape are indices into tables
//! that hold each distinct value once, and file paths are stored once per file in one string.
//! Records are rebuilt one at a time when they are read ([`TensorStore::get`]).

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::hash::Hash;

use indexmap::IndexSet;
use npgx_parsers::dump::header::Io;

use super::records::{Source, TensorRecord};
use crate::dump::records::GroupKey;
use crate::dump::records::OpRef;

/// Distinct values, each stored once, by index (also the op names and paths of the analysis's
/// order keys).
pub(super) struct Table<T>(IndexSet<T>);

impl<T> Default for Table<T> {
    fn default() -> Self {
        Table(IndexSet::new())
    }
}

impl<T: Eq + Hash> Table<T> {
    /// The index of `v`, added when new.
    pub(super) fn id<Q>(&mut self, v: &Q) -> u32
    where
        Q: ?Sized + Hash + Eq + ToOwned<Owned = T>,
        T: Borrow<Q>,
    {
        // More than 4 G distinct values cannot come from files of a tree this process can hold.
        let id = |i: usize| u32::try_from(i).unwrap_or(u32::MAX);
        match self.0.get_index_of(v) {
            Some(i) => id(i),
            None => id(self.0.insert_full(v.to_owned()).0),
        }
    }

    /// The index of `v`, when kept.
    pub(super) fn find<Q>(&self, v: &Q) -> Option<u32>
    where
        Q: ?Sized + Hash + Eq,
        T: Borrow<Q>,
    {
        u32::try_from(self.0.get_index_of(v)?).ok()
    }

    pub(super) fn get(&self, i: u32) -> Option<&T> {
        self.0.get_index(i as usize)
    }

    pub(super) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Bits of [`Row::present`]: which optional fields hold a value.
const TASK: u16 = 1;
const STREAM: u16 = 1 << 1;
const TIMESTAMP: u16 = 1 << 2;
const COUNTER: u16 = 1 << 3;
const OVERFLOW: u16 = 1 << 4;
const MIN: u16 = 1 << 5;
const MAX: u16 = 1 << 6;
const MEAN: u16 = 1 << 7;
const OP_TYPE: u16 = 1 << 8;
const FORMAT: u16 = 1 << 9;
const SLOT: u16 = 1 << 10;

/// One tensor.
struct Row {
    group: u32,
    op_name: u32,
    op_type: u32,
    dtype: u32,
    format: u32,
    shape: u32,
    slot: u32,
    /// `paths[path_start .. path_start + path_len]`.
    path_start: u64,
    path_len: u32,
    index: u64,
    task_id: u64,
    stream_id: u64,
    timestamp: u64,
    counter: u64,
    elements: u64,
    nan: u64,
    pos_inf: u64,
    neg_inf: u64,
    overflow: u64,
    min: f64,
    max: f64,
    mean: f64,
    present: u16,
    io: Io,
    source: Source,
}

impl Row {
    fn opt(&self, bit: u16, v: u64) -> Option<u64> {
        (self.present & bit != 0).then_some(v)
    }

    fn opt_f(&self, bit: u16, v: f64) -> Option<f64> {
        (self.present & bit != 0).then_some(v)
    }
}

/// A list kept in blocks of [`BLOCK`] items: growing never copies the items already kept (a
/// doubling `Vec` holds the old and the new buffer at once, and up to as much again unused), so
/// it costs at most half a block more than its items. Rows here; the analysis's operator
/// executions and address ranges.
pub(super) struct Blocks<T> {
    blocks: Vec<Vec<T>>,
    len: usize,
}

impl<T> Default for Blocks<T> {
    fn default() -> Self {
        Blocks {
            blocks: Vec::new(),
            len: 0,
        }
    }
}

const BLOCK: usize = 1 << 16;

impl<T> Blocks<T> {
    pub(super) fn push(&mut self, v: T) {
        match self.blocks.last_mut() {
            Some(b) if b.len() < BLOCK => b.push(v),
            _ => self.blocks.push(vec![v]),
        }
        self.len += 1;
    }

    pub(super) fn get(&self, i: usize) -> Option<&T> {
        self.blocks.get(i / BLOCK)?.get(i % BLOCK)
    }

    pub(super) fn last(&self) -> Option<&T> {
        self.blocks.last()?.last()
    }

    pub(super) fn last_mut(&mut self) -> Option<&mut T> {
        self.blocks.last_mut()?.last_mut()
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// One `Vec` of every item, each block freed as soon as it is moved.
    pub(super) fn into_vec(self) -> Vec<T> {
        let mut all = Vec::with_capacity(self.len);
        for b in self.blocks {
            all.extend(b);
        }
        all
    }
}

/// Every tensor pushed, compactly (see the module's comment).
#[derive(Default)]
pub struct TensorStore {
    groups: Table<GroupKey>,
    strings: Table<String>,
    shapes: Table<Vec<u64>>,
    paths: String,
    rows: Blocks<Row>,
    /// After [`TensorStore::sort_by`]: the rows in order (sorting these 4-byte indices, not the
    /// rows, keeps the sort's scratch space small).
    order: Option<Vec<u32>>,
}

impl std::fmt::Debug for TensorStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorStore")
            .field("tensors", &self.rows.len())
            .finish_non_exhaustive()
    }
}

impl TensorStore {
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Keeps `t`, after the tensors already kept (and unsorts the store). Tensors of one file
    /// come one after another, so a path equal to the previous row's is not stored again.
    pub fn push(&mut self, t: TensorRecord) {
        self.order = None;
        let TensorRecord {
            op,
            io,
            index,
            dtype,
            format,
            shape,
            elements,
            nan,
            pos_inf,
            neg_inf,
            overflow,
            min,
            max,
            mean,
            source,
            slot,
        } = t;
        let mut present = 0;
        let mut opt = |bit: u16, v: Option<u64>| {
            present |= if v.is_some() { bit } else { 0 };
            v.unwrap_or(0)
        };
        let (task_id, stream_id, timestamp, counter, overflow) = (
            opt(TASK, op.task_id),
            opt(STREAM, op.stream_id),
            opt(TIMESTAMP, op.timestamp),
            opt(COUNTER, op.counter),
            opt(OVERFLOW, overflow),
        );
        let mut opt_f = |bit: u16, v: Option<f64>| {
            present |= if v.is_some() { bit } else { 0 };
            v.unwrap_or(0.0)
        };
        let (min, max, mean) = (opt_f(MIN, min), opt_f(MAX, max), opt_f(MEAN, mean));
        let op_type = match &op.op_type {
            Some(ty) => {
                present |= OP_TYPE;
                self.strings.id(ty.as_str())
            }
            None => 0,
        };
        let format = match &format {
            Some(f) => {
                present |= FORMAT;
                self.strings.id(f.as_str())
            }
            None => 0,
        };
        let slot = match &slot {
            Some(name) => {
                present |= SLOT;
                self.strings.id(name.as_str())
            }
            None => 0,
        };
        let (path_start, path_len) = match self.rows.last() {
            Some(r) if self.path(r) == op.path => (r.path_start, r.path_len),
            _ => {
                let start = self.paths.len() as u64;
                self.paths.push_str(&op.path);
                (start, u32::try_from(op.path.len()).unwrap_or(u32::MAX))
            }
        };
        let row = Row {
            group: self.groups.id(&(op.location, op.layout)),
            op_name: self.strings.id(op.op_name.as_str()),
            op_type,
            dtype: self.strings.id(dtype.as_str()),
            format,
            shape: self.shapes.id(shape.as_slice()),
            slot,
            path_start,
            path_len,
            index: index as u64,
            task_id,
            stream_id,
            timestamp,
            counter,
            elements,
            nan,
            pos_inf,
            neg_inf,
            overflow,
            min,
            max,
            mean,
            present,
            io,
            source,
        };
        self.rows.push(row);
    }

    fn path(&self, r: &Row) -> &str {
        let start = usize::try_from(r.path_start).unwrap_or(usize::MAX);
        let end = start.saturating_add(r.path_len as usize);
        self.paths.get(start..end).unwrap_or("")
    }

    fn text(&self, id: u32) -> &str {
        self.strings.get(id).map_or("", String::as_str)
    }

    /// The `i`-th tensor, rebuilt.
    pub fn get(&self, i: usize) -> Option<TensorRecord> {
        let i = match &self.order {
            Some(order) => *order.get(i)? as usize,
            None => i,
        };
        let r = self.rows.get(i)?;
        let (location, layout) = self.groups.get(r.group)?.clone();
        Some(TensorRecord {
            op: OpRef {
                location,
                layout,
                op_name: self.text(r.op_name).to_string(),
                op_type: (r.present & OP_TYPE != 0).then(|| self.text(r.op_type).to_string()),
                task_id: r.opt(TASK, r.task_id),
                stream_id: r.opt(STREAM, r.stream_id),
                timestamp: r.opt(TIMESTAMP, r.timestamp),
                counter: r.opt(COUNTER, r.counter),
                path: self.path(r).to_string(),
            },
            io: r.io,
            index: usize::try_from(r.index).unwrap_or(usize::MAX),
            dtype: self.text(r.dtype).to_string(),
            format: (r.present & FORMAT != 0).then(|| self.text(r.format).to_string()),
            shape: self.shapes.get(r.shape).cloned().unwrap_or_default(),
            elements: r.elements,
            nan: r.nan,
            pos_inf: r.pos_inf,
            neg_inf: r.neg_inf,
            overflow: r.opt(OVERFLOW, r.overflow),
            min: r.opt_f(MIN, r.min),
            max: r.opt_f(MAX, r.max),
            mean: r.opt_f(MEAN, r.mean),
            source: r.source,
            slot: (r.present & SLOT != 0).then(|| self.text(r.slot).to_string()),
        })
    }

    /// Every tensor, rebuilt one at a time, in the store's order.
    pub fn iter(&self) -> impl Iterator<Item = TensorRecord> + '_ {
        (0..self.rows.len()).filter_map(|i| self.get(i))
    }

    /// Sorts the tensors (stable) by `cmp` of their order fields.
    pub(super) fn sort_by(&mut self, mut cmp: impl FnMut(&RowView, &RowView) -> Ordering) {
        // Rows are pushed one by one, so there are fewer than 4 G of them on any machine that
        // can hold them at 144 bytes each.
        let mut order: Vec<u32> = (0..self.rows.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        // Groups by their place in key order, so that comparing two rows' groups is comparing
        // two integers, not two locations.
        let mut by_key: Vec<u32> = (0..self.groups.len())
            .map(|i| u32::try_from(i).unwrap_or(u32::MAX))
            .collect();
        by_key.sort_by(|&a, &b| self.groups.get(a).cmp(&self.groups.get(b)));
        let mut group_rank = vec![0u32; by_key.len()];
        for (rank, &g) in by_key.iter().enumerate() {
            if let Some(r) = group_rank.get_mut(g as usize) {
                *r = u32::try_from(rank).unwrap_or(u32::MAX);
            }
        }
        let view = |r: &Row| RowView {
            group: group_rank
                .get(r.group as usize)
                .copied()
                .unwrap_or(u32::MAX),
            timestamp: r.opt(TIMESTAMP, r.timestamp),
            counter: r.opt(COUNTER, r.counter),
            task_id: r.opt(TASK, r.task_id),
            stream_id: r.opt(STREAM, r.stream_id),
            op_name: self.text(r.op_name),
            path: self.path(r),
            io: r.io,
            index: r.index,
        };
        let rows = &self.rows;
        order.sort_by(
            |&a, &b| match (rows.get(a as usize), rows.get(b as usize)) {
                (Some(a), Some(b)) => cmp(&view(a), &view(b)),
                _ => Ordering::Equal,
            },
        );
        self.order = Some(order);
    }
}

/// The fields of a stored tensor that decide its place in execution order, borrowed.
pub(super) struct RowView<'a> {
    /// The group's place in group-key order.
    pub group: u32,
    pub timestamp: Option<u64>,
    pub counter: Option<u64>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub op_name: &'a str,
    pub path: &'a str,
    pub io: Io,
    pub index: u64,
}

impl<'a> RowView<'a> {
    /// The order fields of `t`, in group `group` (a place in group-key order).
    pub(super) fn of(t: &'a TensorRecord, group: u32) -> RowView<'a> {
        RowView {
            group,
            timestamp: t.op.timestamp,
            counter: t.op.counter,
            task_id: t.op.task_id,
            stream_id: t.op.stream_id,
            op_name: &t.op.op_name,
            path: &t.op.path,
            io: t.io,
            index: t.index as u64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::TensorStore;
    use crate::dump::records::OpRef;
    use crate::scan::records::{Source, TensorRecord};
    use npgx_parsers::dump::header::Io;
    use npgx_parsers::dump::path::{Layout, Location};

    fn record(name: &str, path: &str, io: Io, index: usize, some: bool) -> TensorRecord {
        let o = |v: u64| some.then_some(v);
        TensorRecord {
            op: OpRef {
                location: Location {
                    rank: o(3).map(|v| v as u32),
                    time: some.then(|| "20241121120000".to_string()),
                    step: o(7),
                    ..Location::default()
                },
                layout: if some { Layout::Model } else { Layout::Other },
                op_name: name.to_string(),
                op_type: some.then(|| "MatMul".to_string()),
                task_id: o(u64::MAX),
                stream_id: o(0),
                timestamp: o(1_732_190_400_000_200),
                counter: o(9),
                path: path.to_string(),
            },
            io,
            index,
            dtype: "DT_FLOAT16".to_string(),
            format: some.then(|| "FRACTAL_NZ".to_string()),
            shape: if some { vec![2, 8, 16, 16] } else { vec![] },
            elements: 4096,
            nan: 1,
            pos_inf: 2,
            neg_inf: 3,
            overflow: o(0),
            min: some.then_some(-0.0),
            max: some.then_some(f64::MAX),
            mean: some.then_some(f64::MIN_POSITIVE),
            source: if some { Source::Dump } else { Source::Npy },
            slot: some.then(|| "input.2.1".to_string()),
        }
    }

    #[test]
    fn records_come_back_exactly() {
        let records = vec![
            record("a/b", "x/MatMul.a_b.1.2.3", Io::Input, 0, true),
            record("a/b", "x/MatMul.a_b.1.2.3", Io::Output, 1, true),
            record("c", "y/c.npy", Io::Output, usize::MAX >> 1, false),
            record("a/b", "x/MatMul.a_b.1.2.4", Io::Output, 0, true),
        ];
        let mut s = TensorStore::default();
        for r in records.clone() {
            s.push(r);
        }
        assert_eq!(s.len(), 4);
        let back: Vec<TensorRecord> = s.iter().collect();
        assert_eq!(back, records);
        // -0.0 keeps its sign; one path stored per file.
        assert!(back[0].min.is_some_and(|m| m.is_sign_negative()));
        assert_eq!(
            s.paths,
            "x/MatMul.a_b.1.2.3y/c.npyx/MatMul.a_b.1.2.4".to_string()
        );
        assert!(s.get(4).is_none());
    }
}
