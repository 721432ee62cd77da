//! Reading one file of a dump tree into tensor records: the scan's consumer of the lister.
//!
//! Tensor files are listed by [`list::list_file`] (the one lister: which tensors, where their
//! bytes lie, and the one rule for a truncated block); each slot's block is then streamed through
//! a per-thread buffer with positional reads into the statistics, so memory stays flat whatever
//! the file size (v1 whole-file protobufs, old and small, are held whole). Opdebug payloads and
//! statistics CSVs are read here too; msprobe's dump.json in [`super::msprobe`].

use std::cell::RefCell;
use std::fs::File;

use npgx_parsers::dump::dtype::{DType, Element};
use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::layout::PaddedView;
use npgx_parsers::dump::name::{FileName, OpDumpName};
use npgx_parsers::dump::{opdebug, stats_csv};

use super::records::{OpdebugRecord, Source, StatsNote, TensorRecord};
use super::stats::{chunk_unit, Acc};
use crate::dump::blocks::{Blocks, ReadError};
use crate::dump::list::{self, Data, FileTensors, InlineData, TensorSlot};
use crate::dump::mapped::Mode;
use crate::dump::records::{FileProblem, OpRef};
use crate::dump::walk::Candidate;

/// Streaming buffer per worker thread.
const BUF_LEN: usize = 4 << 20;
/// Stats CSVs larger than this are refused (real ones hold a few rows).
const MAX_CSV_LEN: u64 = 64 << 20;

thread_local! {
    static BUF: RefCell<Vec<u8>> = RefCell::new(vec![0; BUF_LEN]);
}

/// What one file yielded.
#[derive(Default)]
pub struct FileOutcome {
    pub tensors: Vec<TensorRecord>,
    pub opdebug: Option<OpdebugRecord>,
    /// Statistics that overflowed by themselves (msprobe dumps).
    pub notes: Vec<StatsNote>,
    pub errors: Vec<FileProblem>,
    /// Tensor bytes read.
    pub bytes: u64,
    /// Whether the file was a dump of some kind (binary, stats, npy, pt) that decoded.
    pub decoded: bool,
    /// Ids of a decoded binary op dump (not Opdebug), for pairing with Opdebug payloads.
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    pub timestamp: Option<u64>,
    /// Device address ranges of the inputs and outputs whose header gave one.
    pub addresses: Vec<super::address::Addressed>,
}

impl FileOutcome {
    fn error(c: &Candidate, message: impl Into<String>, offset: Option<u64>) -> FileOutcome {
        FileOutcome {
            errors: vec![FileProblem {
                path: c.rel.clone(),
                message: message.into(),
                offset,
            }],
            ..FileOutcome::default()
        }
    }

    fn push_error(&mut self, c: &Candidate, message: String, offset: Option<u64>) {
        self.errors.push(FileProblem {
            path: c.rel.clone(),
            message,
            offset,
        });
    }
}

/// Reads one candidate file (not msprobe's dump.json: [`super::msprobe::read`]). Tensor files
/// (binary dumps, `.npy`, `.pt`) go through the one lister ([`list::list_file`]) and their
/// slots are streamed here.
pub fn read(c: &Candidate, map: Mode) -> FileOutcome {
    match &c.name {
        FileName::Dump(name) if name.is_opdebug() => {}
        FileName::Dump(_) | FileName::Hashed | FileName::Npy { .. } | FileName::FxNpy(_) => {
            return read_tensors(c, map)
        }
        FileName::Pt { .. } => return read_tensors(c, map),
        _ => {}
    }
    let file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => return FileOutcome::error(c, format!("cannot open: {e}"), None),
    };
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return FileOutcome::error(c, format!("cannot stat: {e}"), None),
    };
    match &c.name {
        FileName::Dump(name) => read_opdebug(c, &file, len, name),
        FileName::Stats(name) => read_stats(c, &file, len, Some(name)),
        FileName::StatsTable => read_stats(c, &file, len, None),
        _ => FileOutcome::default(),
    }
}

/// Streams `len` bytes at `offset` of `blocks` in element-aligned chunks; `f` gets the byte
/// position of the chunk within the block and the chunk. A mapped file gives the whole block
/// as one chunk; otherwise chunks of the per-thread buffer are read in turn.
fn stream(
    blocks: &Blocks,
    offset: u64,
    len: u64,
    unit: usize,
    mut f: impl FnMut(u64, &[u8]),
) -> Result<(), ReadError> {
    BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        if blocks.is_mapped() {
            blocks.will_read(offset, len);
            return blocks.with_range(offset, len, &mut buf, |b| f(0, b));
        }
        let cap = (BUF_LEN / unit * unit) as u64;
        let mut done = 0u64;
        while done < len {
            let want = (len - done).min(cap);
            blocks.with_range(offset + done, want, &mut buf, |chunk| f(done, chunk))?;
            done += want;
        }
        Ok(())
    })
}

/// Feeds a block's bytes to an accumulator, skipping device padding when a view is known.
fn accumulate(el: Element, view: Option<&PaddedView>, acc: &mut Acc, pos: u64, chunk: &[u8]) {
    let Some(view) = view else {
        acc.update(el, chunk);
        return;
    };
    let size = el.size().unwrap_or(1) as u64;
    let first = pos / size;
    let count = chunk.len() as u64 / size;
    let mut e = first;
    while e < first + count {
        let row = e / view.row_len;
        let row_end = (row + 1) * view.row_len;
        // Real elements of this row end here; the rest of the row is padding.
        let stop = (row * view.row_len + view.real_in_row(row)).min(first + count);
        if e < stop {
            let a = ((e - first) * size) as usize;
            let b = ((stop - first) * size) as usize;
            acc.update(el, &chunk[a..b]);
        }
        e = row_end.min(first + count).max(e + 1);
    }
}

/// What a tensor is, apart from its verdict.
struct Described {
    io: Io,
    index: usize,
    dtype: String,
    format: Option<String>,
    shape: Vec<u64>,
}

/// A tensor record from a finished accumulator.
fn verdict(op: &OpRef, d: Described, acc: Acc, el: Element, source: Source) -> TensorRecord {
    let acc = acc.finish(el);
    TensorRecord {
        op: op.clone(),
        io: d.io,
        index: d.index,
        dtype: d.dtype,
        format: d.format,
        shape: d.shape,
        elements: acc.elements,
        nan: acc.nan,
        pos_inf: acc.pos_inf,
        neg_inf: acc.neg_inf,
        overflow: Some(acc.overflow),
        min: acc.min(),
        max: acc.max(),
        mean: acc.mean(),
        source,
        slot: None,
    }
}

/// The statistics of one listed tensor and the bytes read, or why they could not be read
/// (and where). `inline`: the data of a v1 file.
pub fn check_slot(
    blocks: &Blocks,
    inline: Option<&InlineData>,
    op: &OpRef,
    slot: &TensorSlot,
    source: Source,
) -> Result<(TensorRecord, u64), (ReadError, Option<u64>)> {
    let el = slot.element;
    let unit = chunk_unit(el) as u64;
    let mut acc = Acc::default();
    let bytes = match &slot.data {
        // Statistics do not depend on the order of the elements: a strided view's storage and
        // a block of unknown order are read as they lie.
        Data::Plain { offset, len } | Data::Strided { offset, len, .. } => {
            let usable = len / unit * unit;
            stream(blocks, *offset, usable, unit as usize, |_, chunk| {
                acc.update(el, chunk)
            })
            .map_err(|e| (e, Some(*offset)))?;
            usable
        }
        Data::Padded { offset, len, view } => {
            let usable = len / unit * unit;
            stream(blocks, *offset, usable, unit as usize, |pos, chunk| {
                accumulate(el, Some(view), &mut acc, pos, chunk)
            })
            .map_err(|e| (e, Some(*offset)))?;
            usable
        }
        Data::V1 { block, view } => {
            let bytes = inline
                .and_then(|d| d.get(*block))
                .ok_or((ReadError::Io("v1 data block missing".to_string()), None))?;
            let usable = bytes.len() as u64 / unit * unit;
            accumulate(el, view.as_ref(), &mut acc, 0, &bytes[..usable as usize]);
            usable
        }
        Data::Statistics(_) => {
            return Err((
                ReadError::Io("statistics only: the dump holds no values".to_string()),
                None,
            ))
        }
    };
    let d = Described {
        io: slot.io,
        index: slot.index,
        dtype: slot.dtype.to_string(),
        format: (source == Source::Dump).then(|| slot.format.name()),
        shape: slot.shape.clone(),
    };
    Ok((verdict(op, d, acc, el, source), bytes))
}

/// Reads the tensors of a binary dump, `.npy` or `.pt` file: the lister's slots, each streamed
/// through the statistics.
fn read_tensors(c: &Candidate, map: Mode) -> FileOutcome {
    let Some(listing) = list::list_file(c) else {
        return FileOutcome::default();
    };
    let FileTensors {
        listed,
        header,
        inline,
        file,
    } = listing;
    let source = match c.name {
        FileName::Npy { .. } | FileName::FxNpy(_) => Source::Npy,
        FileName::Pt { .. } => Source::Pt,
        _ => Source::Dump,
    };
    let op = listed.op;
    let mut out = FileOutcome {
        decoded: listed.decoded,
        errors: listed.errors,
        ..FileOutcome::default()
    };
    if let Some(h) = &header {
        out.task_id = op.task_id;
        out.stream_id = op.stream_id;
        out.timestamp = op.timestamp;
        out.addresses = h
            .tensors
            .iter()
            .filter(|t| matches!(t.io, Io::Input | Io::Output) && t.input_type != Some(7))
            .filter_map(|t| {
                Some(super::address::Addressed {
                    io: t.io,
                    index: t.index,
                    address: t.address?,
                    size: t.size,
                })
            })
            .collect();
    }
    let Some((file, len)) = file else {
        return out;
    };
    let blocks = Blocks::new(file, len, map);
    let mut changed = None;
    for slot in &listed.tensors {
        match check_slot(&blocks, inline.as_ref(), &op, slot, source) {
            Ok((r, bytes)) => {
                out.bytes += bytes;
                out.tensors.push(r);
            }
            Err((ReadError::Changed { offset }, _)) => {
                changed = Some(offset);
                break;
            }
            Err((ReadError::Io(m), offset)) => {
                let m = match source {
                    Source::Pt => format!("tensor {}: {m}", slot.index),
                    _ => m,
                };
                out.push_error(c, m, offset);
            }
        }
    }
    // A file that lost bytes while it was read reports nothing read from it.
    if changed.is_some() || !blocks.still_whole() {
        let offset = changed.unwrap_or(len);
        out.tensors.clear();
        out.bytes = 0;
        out.push_error(c, ReadError::Changed { offset }.to_string(), Some(offset));
    }
    out
}

/// An Opdebug payload (the overflow status of an op's execution), paired with the dumps of
/// its directory later.
fn read_opdebug(c: &Candidate, file: &File, len: u64, name: &OpDumpName) -> FileOutcome {
    let h = match list::decode_header(file, len) {
        Ok((h, _)) => h,
        Err(e) => return FileOutcome::error(c, e.message, e.offset),
    };
    if !h
        .tensors
        .iter()
        .any(|t| matches!(t.io, Io::Input | Io::Output))
    {
        return FileOutcome::error(
            c,
            format!(
                "the {} header declares no inputs or outputs (not a dump file?)",
                h.framing
            ),
            Some(8),
        );
    }
    let op = list::op_ref(c, Some(name), Some(&h));
    let blocks = h.blocks(len);
    let Some((t, span)) = h
        .tensors
        .iter()
        .zip(&blocks)
        .find(|(t, _)| t.io == Io::Output)
    else {
        return FileOutcome::error(c, "Opdebug file has no output payload", None);
    };
    if span.available < t.size || t.size > 1 << 20 {
        return FileOutcome::error(
            c,
            format!(
                "Opdebug payload declares {} bytes, the file holds {}",
                t.size, span.available
            ),
            Some(span.offset),
        );
    }
    let bytes = match list::read_exact(file, span.offset, span.available) {
        Ok(b) => b,
        Err(e) => return FileOutcome::error(c, e, Some(span.offset)),
    };
    match opdebug::parse(&bytes) {
        Ok(d) => FileOutcome {
            opdebug: Some(OpdebugRecord {
                path: c.rel.clone(),
                layout: d.layout,
                task_id: op.task_id,
                stream_id: op.stream_id,
                units: d.units,
                paired_dump: None,
                dir: c.dir.clone(),
            }),
            decoded: true,
            ..FileOutcome::default()
        },
        Err(e) => FileOutcome::error(c, format!("Opdebug payload: {e}"), Some(span.offset)),
    }
}

/// A per-op stats CSV (`name`: its op dump name) or a `statistic.csv` table whose rows name
/// their ops.
fn read_stats(c: &Candidate, file: &File, len: u64, name: Option<&OpDumpName>) -> FileOutcome {
    if len > MAX_CSV_LEN {
        return FileOutcome::error(c, format!("{len} bytes is too large for a stats CSV"), None);
    }
    let text = match list::read_exact(file, 0, len) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return FileOutcome::error(c, e, None),
    };
    let csv = match stats_csv::parse(&text) {
        Ok(csv) => csv,
        Err(e) => return FileOutcome::error(c, format!("not a stats CSV: {e}"), None),
    };
    let file_op = list::op_ref(c, name, None);
    let mut out = FileOutcome {
        decoded: true,
        ..FileOutcome::default()
    };
    for (line, problem) in csv.problems {
        out.push_error(c, format!("line {line}: {problem}"), None);
    }
    // A table's execution: consecutive rows of one op, inputs before outputs; every row of it
    // takes the first row's timestamp (MindSpore stamps the input and output rows apart).
    let mut current: Option<(stats_csv::RowOp, Io, OpRef)> = None;
    for r in csv.rows {
        let op = match &r.op {
            None => file_op.clone(),
            Some(row_op) => {
                let same = current.as_ref().is_some_and(|(o, last_io, _)| {
                    (&o.op_name, o.task_id, o.stream_id)
                        == (&row_op.op_name, row_op.task_id, row_op.stream_id)
                        && !(*last_io == Io::Output && r.io == Io::Input)
                });
                if !same {
                    let mut op = file_op.clone();
                    op.op_name = row_op.op_name.clone();
                    op.op_type = Some(row_op.op_type.clone());
                    op.task_id = row_op.task_id;
                    op.stream_id = row_op.stream_id;
                    op.timestamp = row_op.timestamp;
                    current = Some((row_op.clone(), r.io, op));
                }
                match &mut current {
                    Some((_, last_io, op)) => {
                        *last_io = r.io;
                        op.clone()
                    }
                    None => file_op.clone(),
                }
            }
        };
        out.tensors.push(stats_record(&op, r));
    }
    out
}

/// What statistics prove about a tensor: a NaN or infinite value among `values` proves one
/// such element (the count is unknown: 1 stands for "at least one"); a finite `max` or `min`
/// at the saturation limit of a low-precision `dtype` proves an overflow (count unknown: `None`).
pub struct Proven {
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    pub overflow: Option<u64>,
}

pub fn proven(
    dtype: Option<DType>,
    max: Option<f64>,
    min: Option<f64>,
    values: &[Option<f64>],
) -> Proven {
    let limit = dtype
        .and_then(DType::element)
        .and_then(Element::saturation_limit);
    let saturated = limit.is_some_and(|l| {
        [max, min]
            .iter()
            .flatten()
            .any(|v| v.is_finite() && v.abs() >= l)
    });
    let any = |p: fn(f64) -> bool| u64::from(values.iter().flatten().any(|&x| p(x)));
    Proven {
        nan: any(f64::is_nan),
        pos_inf: any(|x| x == f64::INFINITY),
        neg_inf: any(|x| x == f64::NEG_INFINITY),
        overflow: if saturated { None } else { Some(0) },
    }
}

fn stats_record(op: &OpRef, r: stats_csv::StatsRow) -> TensorRecord {
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    // A selection may leave a count column out: a NaN or infinite max/min still proves one.
    let p = proven(r.dtype, r.max, r.min, &[r.max, r.min, r.avg]);
    TensorRecord {
        op: op.clone(),
        io: r.io,
        index: r.index,
        dtype: r
            .dtype
            .map_or_else(|| r.dtype_name.clone(), |d| d.to_string()),
        format: (!r.format.is_empty()).then(|| r.format.clone()),
        shape: r.shape.clone().unwrap_or_default(),
        elements: r
            .count
            .or_else(|| {
                r.shape
                    .as_ref()?
                    .iter()
                    .try_fold(1u64, |a, &d| a.checked_mul(d))
            })
            .unwrap_or(0),
        nan: r.nan.unwrap_or(p.nan),
        pos_inf: r.pos_inf.unwrap_or(p.pos_inf),
        neg_inf: r.neg_inf.unwrap_or(p.neg_inf),
        overflow: p.overflow,
        min: finite(r.min),
        max: finite(r.max),
        mean: finite(r.avg),
        source: Source::Stats,
        slot: None,
    }
}
