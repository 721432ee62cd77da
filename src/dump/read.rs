//! Reading one file of a dump tree into tensor records.
//!
//! Files are never loaded whole (except v1 whole-file protobufs, which are old and small): the
//! header is read at its offset, then each tensor block is streamed through a per-thread buffer
//! with positional reads, so memory stays flat whatever the file size. Every offset and length
//! comes from [`DumpHeader::blocks`], which has already clipped them to the file size.

use std::cell::RefCell;
use std::fs::File;
use std::os::unix::fs::FileExt;

use npgx_parsers::dump::dtype::{DType, Element};
use npgx_parsers::dump::header::{DumpHeader, Io, TensorDesc};
use npgx_parsers::dump::layout::PaddedView;
use npgx_parsers::dump::name::{FileName, OpDumpName};
use npgx_parsers::dump::{opdebug, stats_csv};

use super::records::{OpRef, OpdebugRecord, ScanError, Source, StatsNote, TensorRecord};
use super::stats::{chunk_unit, Acc};
use super::walk::Candidate;

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
    pub errors: Vec<ScanError>,
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
            errors: vec![ScanError {
                path: c.rel.clone(),
                message: message.into(),
                offset,
            }],
            ..FileOutcome::default()
        }
    }

    fn push_error(&mut self, c: &Candidate, message: String, offset: Option<u64>) {
        self.errors.push(ScanError {
            path: c.rel.clone(),
            message,
            offset,
        });
    }
}

/// Reads one candidate file. Readers of files that hold many operators (msprobe's dump.json)
/// hand tensor records to `sink` in batches as they go; the others return them in the outcome.
pub fn read(c: &Candidate, sink: &mut dyn FnMut(Vec<TensorRecord>)) -> FileOutcome {
    let file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => return FileOutcome::error(c, format!("cannot open: {e}"), None),
    };
    let len = match file.metadata() {
        Ok(m) => m.len(),
        Err(e) => return FileOutcome::error(c, format!("cannot stat: {e}"), None),
    };
    match &c.name {
        FileName::Dump(name) => read_dump(c, &file, len, Some(name)),
        FileName::Hashed => read_dump(c, &file, len, None),
        FileName::Stats(name) => read_stats(c, &file, len, Some(name)),
        FileName::StatsTable => read_stats(c, &file, len, None),
        FileName::MsprobeDump => super::msprobe::read(c, &file, sink),
        FileName::Npy { .. } | FileName::FxNpy(_) => read_npy(c, &file, len),
        FileName::Pt { .. } => super::pt::read(c, &file, len),
        FileName::Mapping | FileName::Other => FileOutcome::default(),
    }
}

/// The operator a file belongs to, from its name and (when decoded) its header.
pub fn op_ref(c: &Candidate, name: Option<&OpDumpName>, header: Option<&DumpHeader>) -> OpRef {
    let fallback = || c.rel.rsplit('/').next().unwrap_or(&c.rel).to_string();
    if let FileName::FxNpy(fx) = &c.name {
        // Every file of one FX node call shares the op name and the call's timestamp.
        return OpRef {
            location: c.location.clone(),
            layout: c.layout,
            op_name: fx.op.clone(),
            op_type: None,
            task_id: None,
            stream_id: None,
            timestamp: Some(fx.timestamp_us),
            counter: None,
            path: c.rel.clone(),
        };
    }
    OpRef {
        location: c.location.clone(),
        layout: c.layout,
        op_name: header
            .and_then(|h| h.op_name.clone())
            .or_else(|| name.map(|n| n.op_name.clone()))
            .unwrap_or_else(fallback),
        op_type: name.map(|n| n.op_type.clone()),
        task_id: name.map(|n| n.task_id),
        stream_id: name.and_then(|n| n.stream_id),
        timestamp: header
            .and_then(|h| h.dump_time)
            .or_else(|| name.map(|n| n.timestamp)),
        counter: None,
        path: c.rel.clone(),
    }
}

use super::values::read_exact;

/// Streams `len` bytes at `offset` in element-aligned chunks; `f` gets the byte position of the
/// chunk within the block and the chunk.
fn stream(
    file: &File,
    offset: u64,
    len: u64,
    unit: usize,
    mut f: impl FnMut(u64, &[u8]),
) -> Result<(), String> {
    BUF.with(|buf| {
        let mut buf = buf.borrow_mut();
        let cap = (BUF_LEN / unit * unit) as u64;
        let mut done = 0u64;
        while done < len {
            let want = (len - done).min(cap) as usize;
            let chunk = &mut buf[..want];
            file.read_exact_at(chunk, offset + done)
                .map_err(|e| format!("read at offset {} failed: {e}", offset + done))?;
            f(done, chunk);
            done += want as u64;
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

fn describe(t: &TensorDesc) -> Described {
    Described {
        io: t.io,
        index: t.index,
        dtype: t.dtype.to_string(),
        format: Some(t.format.name()),
        shape: if t.original_shape.is_empty() {
            t.shape.clone()
        } else {
            t.original_shape.clone()
        },
    }
}

use super::values::InlineData;

enum Data<'a> {
    File(&'a File),
    Inline(&'a [Vec<u8>]),
}

fn decode_header(
    c: &Candidate,
    file: &File,
    len: u64,
) -> Result<(DumpHeader, Option<InlineData>), ScanError> {
    super::values::decode_header(file, len).map_err(|e| ScanError {
        path: c.rel.clone(),
        message: e.message,
        offset: e.offset,
    })
}

fn read_dump(c: &Candidate, file: &File, len: u64, name: Option<&OpDumpName>) -> FileOutcome {
    let (h, inline) = match decode_header(c, file, len) {
        Ok(x) => x,
        Err(e) => {
            return FileOutcome {
                errors: vec![e],
                ..FileOutcome::default()
            }
        }
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
    let op = op_ref(c, name, Some(&h));
    if name.is_some_and(OpDumpName::is_opdebug) {
        return read_opdebug(c, file, len, &h, &op);
    }
    let data = match &inline {
        Some(d) => Data::Inline(d),
        None => Data::File(file),
    };
    let blocks = h.blocks(len);
    let mut out = FileOutcome {
        decoded: true,
        task_id: op.task_id,
        stream_id: op.stream_id,
        timestamp: op.timestamp,
        ..FileOutcome::default()
    };
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
    for (i, (t, span)) in h.tensors.iter().zip(&blocks).enumerate() {
        if !t.is_tensor_data() {
            continue;
        }
        let Some(el) = t.dtype.element() else {
            out.push_error(
                c,
                format!(
                    "{} {} has data type {}, which npgx does not decode: not checked",
                    t.io, t.index, t.dtype
                ),
                None,
            );
            continue;
        };
        let (offset, available) = match data {
            Data::File(_) => (span.offset, span.available),
            Data::Inline(d) => (0, d.get(i).map_or(0, |b| b.len() as u64)),
        };
        if available < t.size {
            out.push_error(
                c,
                format!(
                    "{} {} declares {} bytes at offset {} but the file holds {}: truncated block",
                    t.io, t.index, t.size, span.offset, available
                ),
                Some(span.offset),
            );
        }
        let unit = chunk_unit(el) as u64;
        let usable = available / unit * unit;
        if usable == 0 && t.size > 0 {
            continue;
        }
        // Skip padding only when the block is whole and exactly fills the device shape.
        let fills_shape = el.size().is_some_and(|es| {
            t.shape.iter().try_fold(es as u64, |a, &d| a.checked_mul(d)) == Some(t.size)
        });
        let view = if available == t.size && fills_shape {
            PaddedView::new(t.format, &t.shape, &t.original_shape)
        } else {
            None
        };
        let mut acc = Acc::default();
        let result = match data {
            Data::File(f) => stream(f, offset, usable, unit as usize, |pos, chunk| {
                accumulate(el, view.as_ref(), &mut acc, pos, chunk)
            }),
            Data::Inline(d) => {
                let bytes = d.get(i).map_or(&[][..], |b| &b[..usable as usize]);
                accumulate(el, view.as_ref(), &mut acc, 0, bytes);
                Ok(())
            }
        };
        if let Err(e) = result {
            out.push_error(c, e, Some(offset));
            continue;
        }
        out.bytes += usable;
        out.tensors
            .push(verdict(&op, describe(t), acc, el, Source::Dump));
    }
    out
}

fn read_opdebug(c: &Candidate, file: &File, len: u64, h: &DumpHeader, op: &OpRef) -> FileOutcome {
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
    let bytes = match read_exact(file, span.offset, span.available) {
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
    let text = match read_exact(file, 0, len) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => return FileOutcome::error(c, e, None),
    };
    let csv = match stats_csv::parse(&text) {
        Ok(csv) => csv,
        Err(e) => return FileOutcome::error(c, format!("not a stats CSV: {e}"), None),
    };
    let file_op = op_ref(c, name, None);
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

/// A tensor stored as raw little-endian elements at a known place in a file (`.npy`, `.pt`).
pub struct RawTensor {
    pub io: Io,
    pub index: usize,
    pub element: Element,
    pub shape: Vec<u64>,
    pub offset: u64,
    pub nbytes: u64,
}

/// Checks a [`RawTensor`].
pub fn check_raw(
    file: &File,
    op: &OpRef,
    t: RawTensor,
    source: Source,
) -> Result<TensorRecord, String> {
    let el = t.element;
    let mut acc = Acc::default();
    stream(file, t.offset, t.nbytes, chunk_unit(el), |_, chunk| {
        acc.update(el, chunk)
    })?;
    let d = Described {
        io: t.io,
        index: t.index,
        dtype: el.dtype().to_string(),
        format: None,
        shape: t.shape,
    };
    Ok(verdict(op, d, acc, el, source))
}

/// Where the array of an `.npy` file lies, as a [`RawTensor`] of the given io and index; the error
/// carries the byte offset it concerns. Statistics do not depend on the element order:
/// Fortran-order arrays are checked too.
pub fn npy_raw(file: &File, len: u64, io: Io, index: usize) -> Result<RawTensor, (String, u64)> {
    let header = super::npy::read_header(file, len).map_err(|e| (e, 0))?;
    let Some(ts) = &header.type_str else {
        return Err(("structured .npy arrays are not checked".into(), 0));
    };
    let Some(el) = header.element() else {
        return Err((
            format!("npy dtype '{ts}' is not checked (bf16/fp8 saved as raw void or big-endian data cannot be told apart)"),
            0,
        ));
    };
    let offset = header.data_offset;
    let Some(nbytes) = header.nbytes_within(len) else {
        return Err((
            format!(
                "npy header declares shape {:?} of {ts}, more than the {} bytes after the {offset}-byte header (file truncated?)",
                header.shape,
                len - offset
            ),
            offset,
        ));
    };
    Ok(RawTensor {
        io,
        index,
        element: el,
        shape: header.shape,
        offset,
        nbytes,
    })
}

fn read_npy(c: &Candidate, file: &File, len: u64) -> FileOutcome {
    let (origin, io, index) = match &c.name {
        FileName::Npy { origin, io, index } => (origin.as_ref(), *io, *index),
        FileName::FxNpy(fx) => (None, Some(fx.io), Some(fx.index)),
        _ => (None, None, None),
    };
    let raw = match npy_raw(file, len, io.unwrap_or(Io::Output), index.unwrap_or(0)) {
        Ok(r) => r,
        Err((m, offset)) => return FileOutcome::error(c, m, Some(offset)),
    };
    let op = op_ref(c, origin, None);
    let nbytes = raw.nbytes;
    match check_raw(file, &op, raw, Source::Npy) {
        Ok(t) => FileOutcome {
            bytes: nbytes,
            tensors: vec![t],
            decoded: true,
            ..FileOutcome::default()
        },
        Err(e) => FileOutcome::error(c, e, None),
    }
}
