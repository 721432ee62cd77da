//! Every tensor of a scan in execution order (`--all`, Parquet shards), in memory that does not
//! grow with the number of tensors.
//!
//! Execution order is known only when the whole tree has been read, and tensors arrive in the
//! order the parallel readers finish, so this is an external merge sort. Tensors go into a batch
//! (a compact [`TensorStore`] of at most [`BATCH`] rows); a full batch is sorted and appended to
//! a scratch file as one sorted run, and a new batch begins; so does the last batch, unless it is
//! the only one (then it is sorted in memory and nothing is written). Reading merges the runs:
//! one record per run in a heap, each run read through its own [`BUFFER`]-byte buffer. Past [`FAN_IN`] runs, the oldest are first merged into one longer
//! run, so that reading never holds more than that many buffers. Ties keep the order the
//! tensors came in (runs are merged oldest first), as the in-memory sort did.
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
use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::{Layout, Location};

use super::analysis::{order_cmp, tensor_order, Placer};
use super::records::{OpRef, Place, Source, TensorRecord};
use super::store::TensorStore;

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
                let oldest: Vec<Run> = s.runs.drain(..self.fan_in).collect();
                let runs = oldest.iter().map(|r| s.at(r));
                match merge(runs, None).and_then(|m| write_run(&s.file, s.end, m)) {
                    Ok(run) => s.push(run),
                    Err(e) => {
                        self.failed = Some(format!("{e:#}"));
                        break;
                    }
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

    /// Every tensor in execution order, with its group and position; each call reads the
    /// runs again. Fails when a run could not be written or read back.
    pub fn iter(
        &self,
    ) -> anyhow::Result<impl Iterator<Item = anyhow::Result<(Place, TensorRecord)>> + '_> {
        if let Some(e) = &self.failed {
            anyhow::bail!("cannot keep every tensor for sorting: {e}");
        }
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

    fn push(&mut self, run: Run) {
        self.end = run.end;
        self.runs.push(run);
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
    for t in records {
        bytes.clear();
        encode(&t?, &mut bytes);
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
    Run(BufReader<At<'a>>, Vec<u8>),
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
            Input::Run(r, bytes) => match r.fill_buf() {
                Ok([]) => None,
                Ok(_) => Some(read_record(r, bytes)),
                Err(e) => Some(Err(e.into())),
            },
        }
    }
}

fn read_record(r: &mut impl Read, bytes: &mut Vec<u8>) -> anyhow::Result<TensorRecord> {
    let damaged = "the scratch file of sorted tensors is damaged";
    let mut len = [0u8; 4];
    r.read_exact(&mut len).context(damaged)?;
    bytes.resize(u32::from_le_bytes(len) as usize, 0);
    r.read_exact(bytes).context(damaged)?;
    decode(bytes).context(damaged)
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
        .map(|at| Input::Run(BufReader::with_capacity(BUFFER, at), Vec::new()))
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

/// A record in a run: fixed-width little-endian numbers, `Option`s as a 0/1 byte then the value,
/// strings and shapes as a length then their bytes or dimensions.
fn encode(t: &TensorRecord, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    let l = &t.op.location;
    e.opt_u64(l.world_size.map(u64::from));
    e.opt_u64(l.rank.map(u64::from));
    e.opt_str(l.time.as_deref());
    e.opt_u64(l.device.map(u64::from));
    e.opt_str(l.model.as_deref());
    e.opt_u64(l.model_id);
    e.opt_u64(l.step);
    e.byte(layout_code(t.op.layout));
    e.str(&t.op.op_name);
    e.opt_str(t.op.op_type.as_deref());
    for v in [t.op.task_id, t.op.stream_id, t.op.timestamp, t.op.counter] {
        e.opt_u64(v);
    }
    e.str(&t.op.path);
    e.byte(io_code(t.io));
    e.u64(t.index as u64);
    e.str(&t.dtype);
    e.opt_str(t.format.as_deref());
    e.u64(t.shape.len() as u64);
    for &d in &t.shape {
        e.u64(d);
    }
    for v in [t.elements, t.nan, t.pos_inf, t.neg_inf] {
        e.u64(v);
    }
    e.opt_u64(t.overflow);
    for v in [t.min, t.max, t.mean] {
        e.opt_u64(v.map(f64::to_bits));
    }
    e.byte(source_code(t.source));
    e.opt_str(t.slot.as_deref());
}

/// [`encode`]'s record back; `None` when the bytes do not hold one.
fn decode(bytes: &[u8]) -> Option<TensorRecord> {
    let mut d = Dec(bytes);
    let u32_of = |v: Option<u64>| v.map(u32::try_from).transpose().ok();
    let location = Location {
        world_size: u32_of(d.opt_u64()?)?,
        rank: u32_of(d.opt_u64()?)?,
        time: d.opt_str()?,
        device: u32_of(d.opt_u64()?)?,
        model: d.opt_str()?,
        model_id: d.opt_u64()?,
        step: d.opt_u64()?,
    };
    let op = OpRef {
        location,
        layout: layout_of(d.byte()?)?,
        op_name: d.str()?,
        op_type: d.opt_str()?,
        task_id: d.opt_u64()?,
        stream_id: d.opt_u64()?,
        timestamp: d.opt_u64()?,
        counter: d.opt_u64()?,
        path: d.str()?,
    };
    let io = io_of(d.byte()?)?;
    let index = usize::try_from(d.u64()?).ok()?;
    let dtype = d.str()?;
    let format = d.opt_str()?;
    let dims = usize::try_from(d.u64()?).ok()?;
    // Each dimension takes 8 bytes: a count past what is left is not one.
    if dims > d.0.len() / 8 {
        return None;
    }
    let shape = (0..dims).map(|_| d.u64()).collect::<Option<Vec<u64>>>()?;
    let t = TensorRecord {
        op,
        io,
        index,
        dtype,
        format,
        shape,
        elements: d.u64()?,
        nan: d.u64()?,
        pos_inf: d.u64()?,
        neg_inf: d.u64()?,
        overflow: d.opt_u64()?,
        min: d.opt_u64()?.map(f64::from_bits),
        max: d.opt_u64()?.map(f64::from_bits),
        mean: d.opt_u64()?.map(f64::from_bits),
        source: source_of(d.byte()?)?,
        slot: d.opt_str()?,
    };
    d.0.is_empty().then_some(t)
}

struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }

    fn opt_u64(&mut self, v: Option<u64>) {
        self.byte(u8::from(v.is_some()));
        if let Some(v) = v {
            self.u64(v);
        }
    }

    fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.0.extend_from_slice(s.as_bytes());
    }

    fn opt_str(&mut self, s: Option<&str>) {
        self.byte(u8::from(s.is_some()));
        if let Some(s) = s {
            self.str(s);
        }
    }
}

struct Dec<'a>(&'a [u8]);

impl Dec<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    /// `Some(None)` for an absent value, `None` for bytes that do not hold one.
    fn opt_u64(&mut self) -> Option<Option<u64>> {
        match self.byte()? {
            0 => Some(None),
            1 => self.u64().map(Some),
            _ => None,
        }
    }

    fn str(&mut self) -> Option<String> {
        let len = usize::try_from(self.u64()?).ok()?;
        String::from_utf8(self.take(len)?.to_vec()).ok()
    }

    fn opt_str(&mut self) -> Option<Option<String>> {
        match self.byte()? {
            0 => Some(None),
            1 => self.str().map(Some),
            _ => None,
        }
    }
}

fn layout_code(l: Layout) -> u8 {
    match l {
        Layout::Model => 0,
        Layout::SingleOp => 1,
        Layout::Exception => 2,
        Layout::NpugraphEx => 3,
        Layout::MindSpore => 4,
        Layout::Msprobe => 5,
        Layout::Other => 6,
    }
}

fn layout_of(b: u8) -> Option<Layout> {
    Some(match b {
        0 => Layout::Model,
        1 => Layout::SingleOp,
        2 => Layout::Exception,
        3 => Layout::NpugraphEx,
        4 => Layout::MindSpore,
        5 => Layout::Msprobe,
        6 => Layout::Other,
        _ => return None,
    })
}

fn io_code(io: Io) -> u8 {
    match io {
        Io::Input => 0,
        Io::Parameter => 1,
        Io::Output => 2,
        Io::Buffer => 3,
        Io::Workspace => 4,
    }
}

fn io_of(b: u8) -> Option<Io> {
    Some(match b {
        0 => Io::Input,
        1 => Io::Parameter,
        2 => Io::Output,
        3 => Io::Buffer,
        4 => Io::Workspace,
        _ => return None,
    })
}

fn source_code(s: Source) -> u8 {
    match s {
        Source::Dump => 0,
        Source::Stats => 1,
        Source::Npy => 2,
        Source::Pt => 3,
    }
}

fn source_of(b: u8) -> Option<Source> {
    Some(match b {
        0 => Source::Dump,
        1 => Source::Stats,
        2 => Source::Npy,
        3 => Source::Pt,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dump::analysis::tests::t;

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
    fn bytes(rows: &[TensorRecord]) -> Vec<Vec<u8>> {
        rows.iter()
            .map(|r| {
                let mut b = Vec::new();
                encode(r, &mut b);
                b
            })
            .collect()
    }

    #[test]
    fn many_small_runs_give_the_rows_of_one_sort() {
        let all = tensors(200);
        let (one, in_memory) = sorted(TensorRuns::new(usize::MAX, FAN_IN), &all);
        assert!(one.scratch.is_none());
        // Runs of 3 tensors merged 4 at a time: 67 runs on disk (the last of 2 tensors), merged
        // down to 4 or fewer, runs of runs among them.
        let (many, spilled) = sorted(TensorRuns::new(3, 4), &all);
        let runs = many.scratch.as_ref().map_or(0, |s| s.runs.len());
        assert!((1..=4).contains(&runs), "{runs} runs");
        assert!(many.tail.is_empty());
        assert_eq!(many.len(), 200);
        assert_eq!(bytes(&spilled), bytes(&in_memory));
        // The order is the analysis's; ties keep the order of arrival (a stable sort).
        let mut want = all;
        want.sort_by(tensor_order);
        assert_eq!(bytes(&spilled), bytes(&want));
        // Read twice, the same rows.
        let again: Vec<TensorRecord> = many
            .iter()
            .expect("readable")
            .map(|r| r.expect("row").1)
            .collect();
        assert_eq!(bytes(&again), bytes(&spilled));
    }

    #[test]
    fn records_survive_encoding_and_damage_is_refused() {
        for r in tensors(40) {
            let mut b = Vec::new();
            encode(&r, &mut b);
            let back = decode(&b).expect("decodes");
            let mut again = Vec::new();
            encode(&back, &mut again);
            assert_eq!(again, b);
            assert_eq!(back.op, r.op);
            assert!((0..b.len()).all(|n| decode(&b[..n]).is_none()));
            b.push(0);
            assert!(decode(&b).is_none(), "trailing bytes");
        }
        // A bad variant byte: the first byte is world_size's presence flag.
        let mut b = Vec::new();
        encode(&tensors(1)[0], &mut b);
        b[0] = 7;
        assert!(decode(&b).is_none());
    }
}
