//! Every tensor of a scan in execution order (`--all`, Parquet shards), in memory that does not
//! grow with the number of tensors.
//!
//! Execution order is known only when the whole tree has been read, and tensors arrive in the
//! order the parallel readers finish, so this is an external merge sort. Tensors go into a batch
//! (a compact [`TensorStore`] of at most [`BATCH`] rows); a full batch is sorted and appended to
//! a scratch file as one sorted run, and a new batch begins; so does the last batch, unless it is
//! the only one (then it is sorted in memory and nothing is written). Reading merges the runs:
//! one record per run in a heap, each run read through its own [`BUFFER`]-byte buffer. Past
//! [`FAN_IN`] runs, neighbouring runs are first merged [`FAN_IN`] at a time into longer ones, so
//! that reading never holds more buffers than that. Ties keep the order the tensors came in (runs
//! stay in that order, and a tie goes to the older run), as an in-memory stable sort would.
//!
//! The scratch file has no name: it is created in the temporary directory (`$TMPDIR`, else
//! `/tmp`) and unlinked at once, so its space goes back when the process ends, however it ends
//! (SIGKILL included), and nothing is ever written beside the user's files. A scan of fewer
//! than [`BATCH`] tensors writes none.
//!
//! Not polars: its streaming engine (0.55) sorts in memory (the sort node collects the whole
//! frame, then sorts it), which is the peak this module removes.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::FileExt as _;

use anyhow::Context as _;

use super::order::{order_cmp, tensor_order, Placer};
use super::records::{Place, TensorRecord};
use super::store::TensorStore;

mod codec;

/// Tensors sorted in memory at once: ≈ 250 bytes each with their strings, ≈ 16 MiB a batch.
const BATCH: usize = 1 << 16;
/// Runs merged at once.
const FAN_IN: usize = 64;
/// Bytes read ahead per run, and written at once.
const BUFFER: usize = 64 << 10;

/// Every tensor pushed so far: sorted runs in the scratch file, and the batch being filled.
pub(super) struct TensorRuns {
    batch: TensorStore,
    batch_rows: usize,
    fan_in: usize,
    scratch: Option<Scratch>,
    /// Why a run could not be written: the tensors are lost, and reading says why.
    failed: Option<String>,
    len: usize,
}

impl Default for TensorRuns {
    fn default() -> Self {
        TensorRuns::new(BATCH, FAN_IN)
    }
}

impl TensorRuns {
    fn new(batch_rows: usize, fan_in: usize) -> TensorRuns {
        TensorRuns {
            batch: TensorStore::default(),
            batch_rows: batch_rows.max(1),
            fan_in: fan_in.max(2),
            scratch: None,
            failed: None,
            len: 0,
        }
    }

    /// Keeps `t`; a full batch becomes a run.
    pub(super) fn push(&mut self, t: TensorRecord) {
        self.len += 1;
        if self.failed.is_some() {
            return;
        }
        self.batch.push(t);
        if self.batch.len() >= self.batch_rows {
            if let Err(e) = self.spill() {
                self.failed = Some(format!("{e:#}"));
                self.batch = TensorStore::default();
            }
        }
    }

    fn spill(&mut self) -> anyhow::Result<()> {
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort_by(order_cmp);
        let scratch = match &mut self.scratch {
            Some(s) => s,
            None => self.scratch.insert(Scratch::create()?),
        };
        let run = write_run(&scratch.file, scratch.end, batch.iter().map(Ok))?;
        scratch.push(run);
        Ok(())
    }

    /// Sorts the last batch (a run too, unless it is the only one) and merges runs down to the
    /// fan-in; `placer` places each tensor as it is read back.
    pub(super) fn finish(mut self, placer: Placer) -> TensorsInOrder {
        if self.scratch.is_some() && self.failed.is_none() && !self.batch.is_empty() {
            if let Err(e) = self.spill() {
                self.failed = Some(format!("{e:#}"));
            }
        }
        self.batch.sort_by(order_cmp);
        if let (Some(s), None) = (&mut self.scratch, &self.failed) {
            while s.runs.len() > self.fan_in {
                if let Err(e) = s.merge_neighbours(self.fan_in) {
                    self.failed = Some(format!("{e:#}"));
                    break;
                }
            }
        }
        TensorsInOrder {
            scratch: self.scratch,
            tail: self.batch,
            failed: self.failed,
            len: self.len,
            placer,
        }
    }
}

/// Every tensor of a scan, read back in execution order with its place ([`TensorsInOrder::iter`]).
#[derive(Default)]
pub struct TensorsInOrder {
    scratch: Option<Scratch>,
    /// The only batch, sorted, when no run was written.
    tail: TensorStore,
    failed: Option<String>,
    len: usize,
    placer: Placer,
}

impl std::fmt::Debug for TensorsInOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TensorsInOrder")
            .field("tensors", &self.len)
            .field("runs", &self.scratch.as_ref().map_or(0, |s| s.runs.len()))
            .finish_non_exhaustive()
    }
}

impl TensorsInOrder {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Fails when the tensors could not all be kept (a run could not be written).
    pub fn check(&self) -> anyhow::Result<()> {
        match &self.failed {
            Some(e) => anyhow::bail!("cannot keep every tensor for sorting: {e}"),
            None => Ok(()),
        }
    }

    /// Every tensor in execution order, with its group and position; each call reads the
    /// runs again. Fails when a run could not be written or read back.
    pub fn iter(
        &self,
    ) -> anyhow::Result<impl Iterator<Item = anyhow::Result<(Place, TensorRecord)>> + '_> {
        self.check()?;
        let runs = self
            .scratch
            .iter()
            .flat_map(|s| s.runs.iter().map(|r| s.at(r)));
        let merged = merge(runs, Some(&self.tail))?;
        Ok(merged.map(|t| t.map(|t| (self.placer.place(&t.op), t))))
    }
}

/// The scratch file and the runs written to it, one after the other.
struct Scratch {
    file: File,
    runs: Vec<Run>,
    end: u64,
}

/// Byte range of one sorted run in the scratch file.
#[derive(Clone, Copy)]
struct Run {
    start: u64,
    end: u64,
}

impl Scratch {
    fn create() -> anyhow::Result<Scratch> {
        let dir = std::env::temp_dir();
        let file = crate::output::scratch_file(&dir, "sort").with_context(|| {
            format!(
                "cannot create a scratch file in {} to sort the tensors (set TMPDIR)",
                dir.display()
            )
        })?;
        Ok(Scratch {
            file,
            runs: Vec::new(),
            end: 0,
        })
    }

    /// The run `r`, for reading.
    fn at(&self, r: &Run) -> At<'_> {
        At {
            file: &self.file,
            pos: r.start,
            end: r.end,
        }
    }

    /// Adds `run` after the others (it may have been written before some of them).
    fn push(&mut self, run: Run) {
        self.end = self.end.max(run.end);
        self.runs.push(run);
    }

    /// Replaces every `fan_in` neighbouring runs by their merge (written at the end of the
    /// file), keeping the runs in order.
    fn merge_neighbours(&mut self, fan_in: usize) -> anyhow::Result<()> {
        let runs = std::mem::take(&mut self.runs);
        for group in runs.chunks(fan_in) {
            let merged = match group {
                [one] => *one,
                _ => {
                    let merged = merge(group.iter().map(|r| self.at(r)), None)?;
                    write_run(&self.file, self.end, merged)?
                }
            };
            self.push(merged);
        }
        Ok(())
    }
}

/// Writes `records` (sorted) as a run from byte `start` of `file`.
fn write_run(
    file: &File,
    start: u64,
    records: impl Iterator<Item = anyhow::Result<TensorRecord>>,
) -> anyhow::Result<Run> {
    let failed = |e: std::io::Error| {
        anyhow::Error::new(e).context("cannot write the scratch file of sorted tensors")
    };
    let at = At {
        file,
        pos: start,
        end: u64::MAX,
    };
    let mut out = BufWriter::with_capacity(BUFFER, at);
    let mut bytes = Vec::new();
    let mut cx = codec::Context::default();
    for t in records {
        bytes.clear();
        codec::encode(&t?, &mut cx, &mut bytes);
        let len = u32::try_from(bytes.len()).context("a tensor record past 4 GiB")?;
        out.write_all(&len.to_le_bytes()).map_err(failed)?;
        out.write_all(&bytes).map_err(failed)?;
    }
    let end = out.into_inner().map_err(|e| failed(e.into_error()))?.pos;
    Ok(Run { start, end })
}

/// A byte range of a file read or written at its own offsets (several at once share the file).
struct At<'a> {
    file: &'a File,
    pos: u64,
    end: u64,
}

impl Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let room = usize::try_from(self.end.saturating_sub(self.pos)).unwrap_or(usize::MAX);
        let n = buf.len().min(room);
        let got = self.file.read_at(&mut buf[..n], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

impl Write for At<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.file.write_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Where a merge reads sorted records from.
enum Input<'a> {
    Run(Box<RunReader<'a>>),
    Tail(&'a TensorStore, usize),
}

impl Input<'_> {
    fn next(&mut self) -> Option<anyhow::Result<TensorRecord>> {
        match self {
            Input::Tail(store, i) => {
                let t = store.get(*i)?;
                *i += 1;
                Some(Ok(t))
            }
            Input::Run(r) => r.next(),
        }
    }
}

/// One run, read record by record.
struct RunReader<'a> {
    read: BufReader<At<'a>>,
    /// The record being read.
    bytes: Vec<u8>,
    cx: codec::Context,
}

impl RunReader<'_> {
    fn next(&mut self) -> Option<anyhow::Result<TensorRecord>> {
        match self.read.fill_buf() {
            Ok([]) => None,
            Ok(_) => Some(self.record()),
            Err(e) => Some(Err(e.into())),
        }
    }

    fn record(&mut self) -> anyhow::Result<TensorRecord> {
        let damaged = "the scratch file of sorted tensors is damaged";
        let mut len = [0u8; 4];
        self.read.read_exact(&mut len).context(damaged)?;
        self.bytes.resize(u32::from_le_bytes(len) as usize, 0);
        self.read.read_exact(&mut self.bytes).context(damaged)?;
        codec::decode(&self.bytes, &mut self.cx).context(damaged)
    }
}

/// The next record of one input.
struct Head {
    t: TensorRecord,
    input: usize,
}

impl Ord for Head {
    /// Reversed, so that the max-heap pops the first record; ties go to the older input.
    fn cmp(&self, other: &Self) -> Ordering {
        tensor_order(&other.t, &self.t).then_with(|| other.input.cmp(&self.input))
    }
}

impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Head {}

/// Sorted inputs merged into one sorted sequence.
struct Merge<'a> {
    inputs: Vec<Input<'a>>,
    heap: BinaryHeap<Head>,
}

fn merge<'a>(
    runs: impl Iterator<Item = At<'a>>,
    tail: Option<&'a TensorStore>,
) -> anyhow::Result<Merge<'a>> {
    let mut inputs: Vec<Input<'a>> = runs
        .map(|at| {
            Input::Run(Box::new(RunReader {
                read: BufReader::with_capacity(BUFFER, at),
                bytes: Vec::new(),
                cx: codec::Context::default(),
            }))
        })
        .collect();
    inputs.extend(tail.map(|t| Input::Tail(t, 0)));
    let mut heap = BinaryHeap::with_capacity(inputs.len());
    for (i, input) in inputs.iter_mut().enumerate() {
        if let Some(t) = input.next() {
            heap.push(Head { t: t?, input: i });
        }
    }
    Ok(Merge { inputs, heap })
}

impl Iterator for Merge<'_> {
    type Item = anyhow::Result<TensorRecord>;

    fn next(&mut self) -> Option<Self::Item> {
        let Head { t, input } = self.heap.pop()?;
        match self.inputs.get_mut(input).and_then(Input::next) {
            Some(Ok(next)) => self.heap.push(Head { t: next, input }),
            Some(Err(e)) => {
                self.heap.clear();
                return Some(Err(e));
            }
            None => {}
        }
        Some(Ok(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::analysis::tests::t;
    use crate::scan::records::Source;
    use npgx_parsers::dump::header::Io;
    use npgx_parsers::dump::path::Layout;

    /// Tensors of two groups, pushed against execution order, with every optional field both
    /// set and unset and a tie (two files of one operator with equal keys).
    fn tensors(n: usize) -> Vec<TensorRecord> {
        (0..n)
            .map(|i| {
                let op = (n - i) / 3;
                let mut r = t(&format!("op{}", op % 7), op as u64, Io::Output, i % 3, 0);
                r.op.location.step = Some((op % 2) as u64);
                r.op.location.time = (i % 2 == 0).then(|| "20241121120000".into());
                r.op.layout = if i % 5 == 0 {
                    Layout::Msprobe
                } else {
                    Layout::Model
                };
                if i % 4 == 0 {
                    (r.op.timestamp, r.op.task_id, r.op.counter) = (None, None, Some(op as u64));
                }
                r.io = [
                    Io::Input,
                    Io::Parameter,
                    Io::Output,
                    Io::Buffer,
                    Io::Workspace,
                ][i % 5];
                r.format = (i % 3 == 0).then(|| "FRACTAL_NZ".into());
                r.shape = vec![i as u64; i % 4];
                r.min = (i % 2 == 1).then_some(-0.0);
                r.max = Some(f64::MAX);
                r.mean = (i % 6 == 0).then_some(f64::NAN);
                r.overflow = (i % 9 != 0).then_some(i as u64);
                r.source = [Source::Dump, Source::Stats, Source::Npy, Source::Pt][i % 4];
                r.slot = (i % 7 == 0).then(|| format!("input.{i}"));
                r.op.path = if i % 10 == 3 {
                    "tied".into()
                } else {
                    format!("d/{op}/f{}", i % 2)
                };
                r
            })
            .collect()
    }

    fn sorted(runs: TensorRuns, all: &[TensorRecord]) -> (TensorsInOrder, Vec<TensorRecord>) {
        let mut runs = runs;
        for r in all {
            runs.push(r.clone());
        }
        let done = runs.finish(Placer::default());
        let rows: Vec<TensorRecord> = done
            .iter()
            .expect("readable")
            .map(|r| r.expect("readable").1)
            .collect();
        (done, rows)
    }

    /// NaN-proof equality: records compared through their encoding.
    fn bytes(rows: &[TensorRecord]) -> Vec<u8> {
        let mut b = Vec::new();
        let mut cx = codec::Context::default();
        for r in rows {
            codec::encode(r, &mut cx, &mut b);
        }
        b
    }

    #[test]
    fn many_small_runs_give_the_rows_of_one_sort() {
        let mut all = tensors(200);
        // Ties: copies with equal order fields, told apart by their element count, pushed
        // later; each must come right after its original.
        for k in 0..40 {
            let mut copy = all[k * 5].clone();
            copy.elements = 1_000 + k as u64;
            all.push(copy);
        }
        let (one, in_memory) = sorted(TensorRuns::new(usize::MAX, FAN_IN), &all);
        assert!(one.scratch.is_none());
        // The order is the analysis's; ties keep the order of arrival (a stable sort).
        let mut want = all.clone();
        want.sort_by(tensor_order);
        assert_eq!(bytes(&in_memory), bytes(&want));
        // Runs of 3 tensors merged 4 at a time: 80 runs on disk, merged down to 2; merged 2 at
        // a time, a run left alone at the end of a pass (80 → 40 → 20 → 10 → 5 → 3 → 2); runs
        // of 7 merged 3 at a time (35 → 12 → 4 → 2).
        for (batch, fan_in) in [(3, 4), (3, 2), (7, 3)] {
            let (many, spilled) = sorted(TensorRuns::new(batch, fan_in), &all);
            let runs = many.scratch.as_ref().map_or(0, |s| s.runs.len());
            assert!((2..=fan_in).contains(&runs), "{runs} runs");
            assert!(many.tail.is_empty());
            assert_eq!(many.len(), 240);
            assert_eq!(
                bytes(&spilled),
                bytes(&want),
                "runs of {batch}, {fan_in} at a time"
            );
            // Read twice, the same rows.
            let again: Vec<TensorRecord> = many
                .iter()
                .expect("readable")
                .map(|r| r.expect("row").1)
                .collect();
            assert_eq!(bytes(&again), bytes(&spilled));
        }
    }

    #[test]
    fn records_survive_encoding_and_damage_is_refused() {
        let all = tensors(60);
        let (mut write, mut read) = (codec::Context::default(), codec::Context::default());
        let mut total = 0;
        for r in &all {
            let mut b = Vec::new();
            codec::encode(r, &mut write, &mut b);
            total += b.len();
            // Every shorter prefix, and one byte more, is refused, and leaves the context as
            // it was for the whole record.
            for n in 0..b.len() {
                assert!(codec::decode(&b[..n], &mut read).is_none());
            }
            let mut longer = b.clone();
            longer.push(0);
            assert!(codec::decode(&longer, &mut read).is_none());
            let back = codec::decode(&b, &mut read).expect("decodes");
            assert_eq!(
                bytes(std::slice::from_ref(&back)),
                bytes(std::slice::from_ref(r))
            );
            assert_eq!(back.op, r.op);
        }
        // Neighbours share their group and most of their names.
        assert!(total < 100 * all.len(), "{total} bytes");
        // A bad first byte (the group flag).
        let mut b = Vec::new();
        codec::encode(&all[0], &mut codec::Context::default(), &mut b);
        b[0] = 7;
        assert!(codec::decode(&b, &mut codec::Context::default()).is_none());
    }
}
