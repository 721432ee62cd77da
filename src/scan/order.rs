//! Execution order within a scan: the key of an operator execution ([`OpKey`], and compactly
//! with its names interned, [`CompactKey`] and [`Names`]), the order of two tensors
//! ([`order_cmp`], [`tensor_order`]), and where a tensor sits once every group's order is known
//! ([`Placer`]). Within a group, operators are ordered by timestamp, then counter, task id and
//! path, which is the device's execution order for model dumps (the timestamp is written when
//! the task completes). Shared by the collector ([`super::analysis`]), the sorted runs
//! ([`super::sorted`]) and the address book ([`super::address`]).

use std::cmp::Ordering;

use super::records::{Place, TensorRecord};
use super::store::{RowView, Table};
use crate::dump::order::{exec_key, OpKey};
use crate::dump::records::{GroupKey, OpRef};

pub(super) fn op_key(t: &TensorRecord) -> OpKey {
    exec_key(&t.op)
}

impl OpKey {
    /// The key as a [`CompactKey`], with its interned op name and path.
    fn compact(&self, op_name: u32, path: u32) -> CompactKey {
        let n = |v: Option<u64>| v.map_or(0, |v| v.saturating_add(1));
        let n32 = |v: Option<u64>| u32::try_from(n(v)).unwrap_or(u32::MAX);
        let t = n(self.timestamp);
        CompactKey {
            timestamp: [(t >> 32) as u32, t as u32],
            counter: n32(self.counter),
            task_id: n32(self.task_id),
            stream_id: n32(self.stream_id),
            op_name,
            path,
        }
    }
}

/// Where two tensors of one group sit in execution order: operator execution (timestamp, counter,
/// task id, stream id, op name, and the path of files not tied to an op), inputs before outputs,
/// index, then file (for equal keys).
pub(super) fn order_cmp(a: &RowView, b: &RowView) -> Ordering {
    // The path takes part only for files not tied to an op by task id or timestamp (`exec_key`).
    fn key_path<'a>(r: &RowView<'a>) -> &'a str {
        if r.task_id.is_some() || r.timestamp.is_some() {
            ""
        } else {
            r.path
        }
    }
    (a.group, a.timestamp, a.counter, a.task_id, a.stream_id)
        .cmp(&(b.group, b.timestamp, b.counter, b.task_id, b.stream_id))
        .then_with(|| a.op_name.cmp(b.op_name))
        .then_with(|| key_path(a).cmp(key_path(b)))
        .then_with(|| (a.io, a.index).cmp(&(b.io, b.index)))
        // Files with equal keys (one exec's tensors in two files): the walk's order is not defined.
        .then_with(|| a.path.cmp(b.path))
}

/// Execution order of any two tensors: by group (key order), then [`order_cmp`].
pub(super) fn tensor_order(a: &TensorRecord, b: &TensorRecord) -> Ordering {
    (&a.op.location, a.op.layout)
        .cmp(&(&b.op.location, b.op.layout))
        .then_with(|| order_cmp(&RowView::of(a, 0), &RowView::of(b, 0)))
}

/// [`OpKey`] in 28 bytes (4-byte aligned), for the one entry every operator execution keeps: `None` is 0 and
/// `Some(v)` is `v + 1`; names are ids into [`Names`]. Ordered through [`Names::cmp`], which gives
/// the order of the full keys. The call counter and the task and stream ids are 32-bit here (GE
/// task and stream ids are 32-bit in the dump; npugraph_ex counters count calls): a larger value
/// saturates, which can only merge two executions' magnitudes, never reorder anomalies (those keep
/// their full [`OpKey`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct CompactKey {
    /// High and low halves, so that the key aligns to 4 bytes and a (key, f32) entry is 32.
    timestamp: [u32; 2],
    counter: u32,
    task_id: u32,
    stream_id: u32,
    pub(super) op_name: u32,
    path: u32,
}

/// Interned op names and paths of [`CompactKey`]s (names repeat across steps and groups), and
/// the paths of dump files ([`PathRef`]).
#[derive(Default)]
pub(super) struct Names {
    table: Table<String>,
    /// File names of [`PathRef`]s, one after the other (each file is added once), in chunks of
    /// [`FILES_CHUNK`] bytes that are never reallocated.
    files: Vec<String>,
}

const FILES_CHUNK: usize = 1 << 20;

/// A file's path, relative to the scan root: its directory (up to the last `/`) interned, its
/// file name in [`Names::files`], ended by a `/` (which no file name holds); every file has its
/// own name, so interning it would only add a hash table entry per file. Past 4 GiB of names, a
/// path is interned whole (`start` is then `u32::MAX`).
#[derive(Clone, Copy)]
pub(super) struct PathRef {
    dir: u32,
    start: u32,
}

impl Names {
    pub(super) fn id(&mut self, s: &str) -> u32 {
        self.table.id(s)
    }

    /// Keeps the path of one file.
    pub(super) fn path(&mut self, p: &str) -> PathRef {
        let (dir, file) = p.split_at(p.rfind('/').map_or(0, |i| i + 1));
        let room = |c: &String| c.len() + file.len() < FILES_CHUNK;
        if !self.files.last().is_some_and(room) {
            self.files.push(String::with_capacity(FILES_CHUNK));
        }
        let chunk = self.files.len() - 1;
        let start = self.files.last().map_or(0, String::len);
        match u32::try_from(chunk * FILES_CHUNK + start) {
            Ok(start) if start < u32::MAX && file.len() < FILES_CHUNK => {
                if let Some(c) = self.files.last_mut() {
                    c.push_str(file);
                    c.push('/');
                }
                PathRef {
                    dir: self.id(dir),
                    start,
                }
            }
            _ => PathRef {
                dir: self.id(p),
                start: u32::MAX,
            },
        }
    }

    /// Drops the file names of the [`PathRef`]s (their last use is over).
    pub(super) fn forget_files(&mut self) {
        self.files = Vec::new();
    }

    /// The path kept by [`Names::path`].
    pub(super) fn path_text(&self, r: PathRef) -> String {
        let start = r.start as usize;
        let file = self
            .files
            .get(start / FILES_CHUNK)
            .and_then(|c| c.get(start % FILES_CHUNK..))
            .and_then(|rest| rest.split('/').next())
            .unwrap_or("");
        [self.text(r.dir), file].concat()
    }

    pub(super) fn key(&mut self, k: &OpKey) -> CompactKey {
        let (op_name, path) = (self.id(&k.op_name), self.id(&k.path));
        k.compact(op_name, path)
    }

    /// [`Names::key`] of a key whose names are kept; `None` when one is not.
    fn find_key(&self, k: &OpKey) -> Option<CompactKey> {
        let op_name = self.table.find(k.op_name.as_str())?;
        Some(k.compact(op_name, self.table.find(k.path.as_str())?))
    }

    pub(super) fn text(&self, id: u32) -> &str {
        self.table.get(id).map_or("", String::as_str)
    }

    pub(super) fn cmp(&self, a: &CompactKey, b: &CompactKey) -> Ordering {
        (a.timestamp, a.counter, a.task_id, a.stream_id)
            .cmp(&(b.timestamp, b.counter, b.task_id, b.stream_id))
            .then_with(|| self.text(a.op_name).cmp(self.text(b.op_name)))
            .then_with(|| self.text(a.path).cmp(self.text(b.path)))
    }
}

/// Where a tensor sits ([`Place`]), once the groups' execution orders are known: the groups'
/// keys, in order, and each group's operator executions in execution order (28 bytes each).
#[derive(Default)]
pub(super) struct Placer {
    pub(super) groups: Vec<GroupKey>,
    pub(super) execs: Vec<Vec<CompactKey>>,
    pub(super) names: Names,
}

impl Placer {
    /// Position of an operator execution in its group's execution order (0 when not found).
    pub(super) fn order_of(&self, group: usize, op: &OpKey) -> usize {
        let Some(op) = self.names.find_key(op) else {
            return 0;
        };
        self.execs
            .get(group)
            .and_then(|keys| keys.binary_search_by(|k| self.names.cmp(k, &op)).ok())
            .unwrap_or(0)
    }

    pub(super) fn place(&self, op: &OpRef) -> Place {
        let key = (&op.location, op.layout);
        match self.groups.binary_search_by(|g| (&g.0, g.1).cmp(&key)) {
            Ok(group) => Place {
                group,
                order: self.order_of(group, &exec_key(op)),
            },
            Err(_) => Place::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operator_execution_costs_32_bytes() {
        assert_eq!(std::mem::size_of::<(CompactKey, f32)>(), 32);
    }

    #[test]
    fn paths_are_kept_whole() {
        let mut names = Names::default();
        let paths = [
            "a/b/Add.x.1.2.3",
            "top",
            "a/b/Add.y.1.2.3",
            "/abs/f",
            "d/",
            "",
        ];
        let refs: Vec<PathRef> = paths.iter().map(|p| names.path(p)).collect();
        let back: Vec<String> = refs.into_iter().map(|r| names.path_text(r)).collect();
        assert_eq!(back, paths);
        let z = names.path("a/b/z");
        assert_eq!(names.text(z.dir), "a/b/");
    }
}
