//! The dump tensor lister: the one place that turns a file of a dump tree into its tensors.
//!
//! [`decode_header`] reads the header of a binary dump (v2, v1, TLV); [`list_file`] turns any
//! file that holds tensors — binary dumps, `.npy`, npugraph_ex `.pt` (and, through
//! [`tensor_file_slot`], the tensor files msprobe's `dump.json` names) — into [`TensorSlot`]s:
//! where each tensor's bytes lie and in which order its elements come, without reading any
//! tensor data. Every consumer starts here: dump-scan's statistics stream a slot's bytes in any
//! order ([`crate::scan::read`]); dump-compare, dump-convert and repro read its elements in logical
//! order through [`super::values::ValueReader`], and so take [`list`], which keeps only the
//! slots whose order is known.
//!
//! One rule for a block the file does not hold whole (truncated at the end, or a header that
//! declares more than the file has): the tensor is an error entry naming the file, the tensor
//! and the block's offset, and no slot — never a tensor made of the bytes that happen to be
//! there. A block whose bytes are all there but whose element order npgx cannot give (a device
//! shape that does not fill the block, a padded device format without a known view, a
//! Fortran-order `.npy`) is a slot with [`TensorSlot::unordered`] set: statistics over its
//! elements hold whatever their order, values cannot be paired.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use npgx_parsers::dump::dtype::{DType, Element};
use npgx_parsers::dump::format::Format;
use npgx_parsers::dump::header::{self, DumpHeader, Io, Probe, TensorDesc};
use npgx_parsers::dump::layout::PaddedView;
use npgx_parsers::dump::name::{FileName, OpDumpName};

use super::records::{FileProblem, OpRef};
use super::walk::Candidate;

pub mod msprobe;

/// Whole-file v1 protobufs larger than this are refused.
pub const MAX_V1_LEN: u64 = 256 << 20;

/// Why a header could not be read, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderError {
    pub message: String,
    pub offset: Option<u64>,
}

/// Tensor bytes held inline by a v1 file, in header order.
pub type InlineData = Vec<Vec<u8>>;

/// Reads `len` bytes at `offset` (the caller has checked `len` against the file size).
pub fn read_exact(file: &File, offset: u64, len: u64) -> Result<Vec<u8>, String> {
    let n = usize::try_from(len).map_err(|_| format!("{len} bytes do not fit in memory"))?;
    let mut v = vec![0u8; n];
    file.read_exact_at(&mut v, offset)
        .map_err(|e| format!("read of {len} bytes at offset {offset} failed: {e}"))?;
    Ok(v)
}

/// Reads and decodes the header of a binary dump of `len` bytes; for v1 files also the inline
/// tensor data (v1 files are refused above [`MAX_V1_LEN`]). Every length is checked against the
/// file size by the parsers before anything is allocated.
pub fn decode_header(
    file: &File,
    len: u64,
) -> Result<(DumpHeader, Option<InlineData>), HeaderError> {
    let err = |message: String, offset: Option<u64>| HeaderError { message, offset };
    let mut prefix = [0u8; header::PROBE_LEN];
    let n = (header::PROBE_LEN as u64).min(len) as usize;
    file.read_exact_at(&mut prefix[..n], 0)
        .map_err(|e| err(format!("cannot read: {e}"), Some(0)))?;
    let probe = header::probe(&prefix[..n], len).map_err(|e| err(e.to_string(), Some(0)))?;
    match probe {
        Probe::V2 { header_len } => {
            let bytes = read_exact(file, 8, header_len).map_err(|e| err(e, Some(8)))?;
            let h = header::decode_v2(&bytes).map_err(|e| err(e.to_string(), Some(8)))?;
            Ok((h, None))
        }
        Probe::Tlv { head_len } => {
            let bytes = read_exact(file, 8, head_len).map_err(|e| err(e, Some(8)))?;
            let h = header::decode_tlv(&bytes).map_err(|e| err(e.to_string(), Some(8)))?;
            Ok((h, None))
        }
        Probe::V1Candidate { claimed_header_len } => {
            if len > MAX_V1_LEN {
                return Err(err(
                    format!("header length {claimed_header_len} at offset 0 is larger than the file ({len} bytes)"),
                    Some(0),
                ));
            }
            let bytes = read_exact(file, 0, len).map_err(|e| err(e, Some(0)))?;
            let v1 = header::decode_v1(&bytes, claimed_header_len)
                .map_err(|e| err(e.to_string(), Some(0)))?;
            Ok((v1.header, Some(v1.data)))
        }
    }
}

/// Where a tensor's bytes are.
#[derive(Clone, Debug, PartialEq)]
pub enum Data {
    /// `len` bytes at `offset` of the file, elements in logical C order (unless the slot is
    /// [`TensorSlot::unordered`]).
    Plain { offset: u64, len: u64 },
    /// A padded device layout of `len` bytes at `offset`, brought back through `view`.
    Padded {
        offset: u64,
        len: u64,
        view: PaddedView,
    },
    /// A dense permuted view (a transposed `.pt` tensor): `len` bytes at `offset` hold its
    /// elements, element `idx` of the view at `Σ idx·stride` (in elements).
    Strided {
        offset: u64,
        len: u64,
        stride: Vec<u64>,
    },
    /// Block `block` of a v1 whole-file protobuf (decoded again when read).
    V1 {
        block: usize,
        view: Option<PaddedView>,
    },
    /// No values: only msprobe's statistics of the tensor (Max, Min, Mean, Norm), compared as
    /// msprobe's summary mode does.
    Statistics([Option<f64>; 4]),
}

/// One tensor of a file, ready to be read.
#[derive(Clone, Debug, PartialEq)]
pub struct TensorSlot {
    pub io: Io,
    pub index: usize,
    pub dtype: DType,
    pub element: Element,
    /// Device format (ND for `.npy` / `.pt`).
    pub format: Format,
    /// Logical shape: the values come in C order over it.
    pub shape: Vec<u64>,
    /// `(name, output index)` of the pre-fusion op an output stands for (GE dumps).
    pub original_op: Option<(String, u32)>,
    pub data: Data,
    /// Why the elements cannot be given in logical order, when they cannot: every byte of the
    /// block is there (statistics hold), but values cannot be paired or written as ND.
    pub unordered: Option<String>,
}

impl TensorSlot {
    /// Number of logical elements.
    pub fn elements(&self) -> u64 {
        product(&self.shape).unwrap_or(u64::MAX)
    }
}

/// What one file holds.
#[derive(Clone, Debug)]
pub struct Listed {
    pub path: PathBuf,
    pub op: OpRef,
    /// The op name from the file name (the sanitised name dump files are matched by); the
    /// header's real name otherwise.
    pub match_name: String,
    pub tensors: Vec<TensorSlot>,
    pub errors: Vec<FileProblem>,
    /// For a torchair FX data dump input `INPUT.{i}[.{j}]`: (i, j). GE numbers the inputs of
    /// an op by position, a list argument flattened, so a comparison renumbers by this.
    pub fx_input: Option<(usize, Option<usize>)>,
    /// Whether the file decoded as the kind its name says (its header, `.npy` header or
    /// archive read), whatever became of its single tensors.
    pub decoded: bool,
}

/// A file's listing with what its header gave beside the slots (binary dumps only): the header
/// itself (device addresses, ids) and the inline data of a v1 file.
pub struct FileTensors {
    pub listed: Listed,
    pub header: Option<DumpHeader>,
    pub inline: Option<InlineData>,
    /// The file the slots were listed from and its length then, for reading their bytes from
    /// the same file (not a file renamed over it since); `None` when it could not be opened.
    pub file: Option<(File, u64)>,
}

/// A tensor's slot, or why it has none (and the byte offset that concerns, if one does).
pub type Slot = Result<TensorSlot, (String, Option<u64>)>;

fn product(dims: &[u64]) -> Option<u64> {
    dims.iter().try_fold(1u64, |a, &d| a.checked_mul(d))
}

/// Whether the values of an element type can be compared as real numbers.
pub fn is_real(el: Element) -> bool {
    el.size().is_some() && !matches!(el, Element::C64 | Element::C128)
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

/// The one lister: the tensors of a file found by the walk. Files that hold no tensors (stats
/// CSVs, Opdebug payloads, msprobe's `dump.json` itself) give `None`.
pub fn list_file(c: &Candidate) -> Option<FileTensors> {
    let error = |message: String, offset: Option<u64>| FileProblem {
        path: c.rel.clone(),
        message,
        offset,
    };
    let listing = |op: OpRef, match_name: String, fx_input| Listed {
        path: c.path.clone(),
        op,
        match_name,
        tensors: Vec::new(),
        errors: Vec::new(),
        fx_input,
        decoded: false,
    };
    let plain = |listed, file| FileTensors {
        listed,
        header: None,
        inline: None,
        file,
    };
    match &c.name {
        FileName::Dump(name) if name.is_opdebug() => return None,
        FileName::Stats(_)
        | FileName::StatsTable
        | FileName::MsprobeDump
        | FileName::Mapping
        | FileName::Other => return None,
        _ => {}
    }
    let opened = File::open(&c.path)
        .map_err(|e| format!("cannot open: {e}"))
        .and_then(|f| match f.metadata() {
            Ok(m) => Ok((f, m.len())),
            Err(e) => Err(format!("cannot stat: {e}")),
        });
    let (file, len) = match opened {
        Ok(x) => x,
        Err(e) => {
            let op = op_ref(c, None, None);
            let mut l = listing(op.clone(), op.op_name, None);
            l.errors.push(error(e, None));
            return Some(plain(l, None));
        }
    };
    Some(match &c.name {
        FileName::Dump(name) => list_dump(c, file, len, Some(name)),
        FileName::Npy { origin, io, index } => {
            let match_name = origin
                .as_ref()
                .map_or_else(|| npy_stem(&c.rel).to_string(), |o| o.op_name.clone());
            let mut l = listing(op_ref(c, origin.as_ref(), None), match_name, None);
            match npy_slot(&file, len, io.unwrap_or(Io::Output), index.unwrap_or(0)) {
                Ok(t) => l.tensors.push(t),
                Err((m, off)) => l.errors.push(error(m, off)),
            }
            l.decoded = l.errors.is_empty();
            plain(l, Some((file, len)))
        }
        FileName::FxNpy(fx) => {
            let fx_input = (fx.io == Io::Input).then_some((fx.index, fx.part));
            let mut l = listing(op_ref(c, None, None), fx.op.clone(), fx_input);
            match npy_slot(&file, len, fx.io, fx.index) {
                Ok(t) => l.tensors.push(t),
                Err((m, off)) => l.errors.push(error(m, off)),
            }
            l.decoded = l.errors.is_empty();
            plain(l, Some((file, len)))
        }
        FileName::Pt { fx_node, count, .. } => {
            let mut op = op_ref(c, None, None);
            op.op_name = fx_node.clone();
            op.counter = *count;
            let mut l = listing(op, fx_node.clone(), None);
            match super::pt::blocks(&file, len) {
                Ok(tensors) => {
                    l.decoded = true;
                    for (index, t) in tensors.into_iter().enumerate() {
                        match t.map(|raw| pt_slot(raw, Io::Output, index)) {
                            Ok(slot) => l.tensors.push(slot),
                            Err(m) => l.errors.push(error(format!("tensor {index}: {m}"), None)),
                        }
                    }
                }
                Err(m) => l.errors.push(error(m, None)),
            }
            plain(l, Some((file, len)))
        }
        // `Hashed` and anything else the walk hands over as a candidate binary dump.
        _ => list_dump(c, file, len, None),
    })
}

/// The listing of readers that need the elements in logical order (dump-compare,
/// dump-convert): [`list_file`] with every slot whose values cannot be read in order turned
/// into an error entry of the file.
pub fn list(c: &Candidate) -> Option<Listed> {
    list_file(c).map(|f| ordered(f.listed))
}

/// Moves the slots of `l` whose values cannot be read in logical order (complex and
/// sub-byte types, [`TensorSlot::unordered`]) to its errors.
pub fn ordered(mut l: Listed) -> Listed {
    let slots = std::mem::take(&mut l.tensors);
    for s in slots {
        match ordered_slot(s) {
            Ok(s) => l.tensors.push(s),
            Err((message, offset)) => l.errors.push(FileProblem {
                path: l.op.path.clone(),
                message,
                offset,
            }),
        }
    }
    l
}

/// A slot whose values can be read in logical order, or why they cannot (and where).
pub fn ordered_slot(s: TensorSlot) -> Slot {
    if !is_real(s.element) {
        return Err((
            format!(
                "{} {} has data type {}, whose values are not read",
                s.io, s.index, s.dtype
            ),
            None,
        ));
    }
    match &s.unordered {
        Some(why) => Err((why.clone(), data_offset(&s.data))),
        None => Ok(s),
    }
}

/// Where a slot's block starts in its file (not for v1 inline blocks and statistics).
fn data_offset(d: &Data) -> Option<u64> {
    match d {
        Data::Plain { offset, .. } | Data::Padded { offset, .. } | Data::Strided { offset, .. } => {
            Some(*offset)
        }
        Data::V1 { .. } | Data::Statistics(_) => None,
    }
}

/// A tensor of a `.pt` archive as a slot.
pub fn pt_slot(raw: super::pt::PtBlock, io: Io, index: usize) -> TensorSlot {
    TensorSlot {
        io,
        index,
        dtype: raw.element.dtype(),
        element: raw.element,
        format: Format::primary(Format::ND),
        data: if raw.is_contiguous() {
            Data::Plain {
                offset: raw.offset,
                len: raw.nbytes,
            }
        } else {
            Data::Strided {
                offset: raw.offset,
                len: raw.nbytes,
                stride: raw.stride,
            }
        },
        shape: raw.shape,
        original_op: None,
        unordered: None,
    }
}

/// Every file's listing for readers in logical order: one per file, except msprobe's
/// dump.json, which lists one per tensor file of each call ([`msprobe::list`]).
pub fn list_all(c: &Candidate) -> Vec<Listed> {
    match c.name {
        FileName::MsprobeDump => msprobe::list(c),
        _ => list(c).into_iter().collect(),
    }
}

/// The slot of a tensor file msprobe's dump.json names (`path`): the first tensor of a `.pt`
/// archive, or a `.npy` (MindSpore).
pub fn tensor_file_slot(file: &File, len: u64, path: &Path, io: Io, index: usize) -> Slot {
    if path.extension().is_some_and(|e| e == "npy") {
        return npy_slot(file, len, io, index);
    }
    let first = super::pt::blocks(file, len)
        .map_err(|m| (m, None))?
        .into_iter()
        .next()
        .ok_or(("the archive holds no tensor".to_string(), None))?
        .map_err(|m| (m, None))?;
    Ok(pt_slot(first, io, index))
}

/// The stem of a `.npy` file name without msaccucmp naming (`x.npy` → `x`).
fn npy_stem(rel: &str) -> &str {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    name.strip_suffix(".npy").unwrap_or(name)
}

/// A `.npy` file as a tensor slot: header parsed from its first bytes, data after it. The
/// error carries the byte offset it concerns.
pub fn npy_slot(file: &File, len: u64, io: Io, index: usize) -> Slot {
    let header = super::npy::read_header(file, len).map_err(|e| (e, Some(0)))?;
    let Some(ts) = &header.type_str else {
        return Err(("structured .npy arrays are not read".into(), Some(0)));
    };
    let el = header.element().ok_or_else(|| {
        (
            format!("npy dtype '{ts}' is not read (bf16/fp8 saved as raw void or big-endian data cannot be told apart)"),
            Some(0),
        )
    })?;
    let offset = header.data_offset;
    let Some(nbytes) = header.nbytes_within(len) else {
        return Err((
            format!(
                "npy header declares shape {:?} of {ts}, more than the {} bytes after the {offset}-byte header: truncated block",
                header.shape,
                len.saturating_sub(offset)
            ),
            Some(offset),
        ));
    };
    Ok(TensorSlot {
        io,
        index,
        dtype: el.dtype(),
        element: el,
        format: Format::primary(Format::ND),
        shape: header.shape,
        original_op: None,
        data: Data::Plain {
            offset,
            len: nbytes,
        },
        // Statistics do not depend on the element order; a comparison would pair the wrong
        // elements of a column-major array.
        unordered: header
            .fortran
            .then(|| "Fortran-order .npy arrays are not read in order".to_string()),
    })
}

/// The slot of one header entry (`available`: the bytes of its block the file holds), or why
/// it has none: a type npgx does not decode, or a block the file does not hold whole.
pub fn dump_slot(t: &TensorDesc, available: u64, offset: u64, block: Option<usize>) -> Slot {
    let what = format!("{} {}", t.io, t.index);
    let el = t.dtype.element().ok_or_else(|| {
        (
            format!(
                "{what} has data type {}, which npgx does not decode",
                t.dtype
            ),
            None,
        )
    })?;
    if available < t.size {
        return Err((
            format!(
                "{what} declares {} bytes at offset {offset} but the file holds {available}: truncated block",
                t.size
            ),
            Some(offset),
        ));
    }
    let es = el.size().unwrap_or(1) as u64;
    let device_bytes = product(&t.shape).and_then(|n| n.checked_mul(es));
    let fills_shape = device_bytes == Some(t.size);
    let view = if fills_shape {
        PaddedView::new(t.format, &t.shape, &t.original_shape)
    } else {
        None
    };
    let unordered = if !fills_shape {
        Some(format!(
            "{what}: shape {:?} of {} needs {} bytes but the block declares {}",
            t.shape,
            t.dtype,
            device_bytes.map_or_else(|| "too many".to_string(), |b| b.to_string()),
            t.size
        ))
    } else if view.is_none() && t.format.is_padded_device_format() {
        Some(format!(
            "{what}: format {} with device shape {:?} and original shape {:?} cannot be brought back to ND",
            t.format, t.shape, t.original_shape
        ))
    } else {
        None
    };
    let shape = match &view {
        Some(v) => v.logical_shape.clone(),
        None if !t.original_shape.is_empty()
            && (unordered.is_some() || product(&t.original_shape) == product(&t.shape)) =>
        {
            t.original_shape.clone()
        }
        None => t.shape.clone(),
    };
    let data = match (block, view) {
        (Some(block), view) => Data::V1 { block, view },
        (None, Some(view)) => Data::Padded {
            offset,
            len: t.size,
            view,
        },
        (None, None) => Data::Plain {
            offset,
            len: t.size,
        },
    };
    Ok(TensorSlot {
        io: t.io,
        index: t.index,
        dtype: t.dtype,
        element: el,
        format: t.format,
        shape,
        original_op: t
            .original_name
            .clone()
            .zip(t.original_output_index)
            .filter(|_| t.io == Io::Output),
        data,
        unordered,
    })
}

/// The slot (or why there is none) of every tensor-data entry of a binary dump's header, with
/// the entry's index in `h.tensors`; `inline`: the data of a v1 file, `len`: the file's length.
pub fn header_slots(h: &DumpHeader, inline: Option<&InlineData>, len: u64) -> Vec<(usize, Slot)> {
    h.tensors
        .iter()
        .zip(h.blocks(len))
        .enumerate()
        .filter(|(_, (t, _))| t.is_tensor_data())
        .map(|(i, (t, span))| {
            let (available, block) = match inline {
                Some(d) => (d.get(i).map_or(0, |b| b.len() as u64), Some(i)),
                None => (span.available, None),
            };
            (i, dump_slot(t, available, span.offset, block))
        })
        .collect()
}

fn list_dump(c: &Candidate, file: File, len: u64, name: Option<&OpDumpName>) -> FileTensors {
    let error = |message: String, offset: Option<u64>| FileProblem {
        path: c.rel.clone(),
        message,
        offset,
    };
    let listing = |op: OpRef| Listed {
        path: c.path.clone(),
        match_name: name.map_or_else(|| op.op_name.clone(), |n| n.op_name.clone()),
        op,
        tensors: Vec::new(),
        errors: Vec::new(),
        fx_input: None,
        decoded: false,
    };
    let (h, inline) = match decode_header(&file, len) {
        Ok(x) => x,
        Err(e) => {
            let mut l = listing(op_ref(c, name, None));
            l.errors.push(error(e.message, e.offset));
            return FileTensors {
                listed: l,
                header: None,
                inline: None,
                file: Some((file, len)),
            };
        }
    };
    let mut l = listing(op_ref(c, name, Some(&h)));
    if !h
        .tensors
        .iter()
        .any(|t| matches!(t.io, Io::Input | Io::Output))
    {
        l.errors.push(error(
            format!(
                "the {} header declares no inputs or outputs (not a dump file?)",
                h.framing
            ),
            Some(8),
        ));
        return FileTensors {
            listed: l,
            header: None,
            inline: None,
            file: Some((file, len)),
        };
    }
    l.decoded = true;
    for (_, slot) in header_slots(&h, inline.as_ref(), len) {
        match slot {
            Ok(s) => l.tensors.push(s),
            Err((m, off)) => l.errors.push(error(m, off)),
        }
    }
    FileTensors {
        listed: l,
        header: Some(h),
        inline,
        file: Some((file, len)),
    }
}
