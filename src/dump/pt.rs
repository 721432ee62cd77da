//! npugraph_ex `.pt` dumps (`dump-data.md` §7): `torch.save` zip archives.
//!
//! The archive's `data.pkl` is read by the restricted pickle machine of the parsers crate
//! ([`npgx_parsers::dump::pt::saved_tensors`]: no Python object is built, no code is run); this
//! module opens the archive, finds each tensor's storage record and hands the tensors to the
//! dump-scan checker or, as [`PtTensor`]s, to the value reader of `dump-compare`.

use std::fs::File;

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::name::FileName;
use npgx_parsers::dump::pt::saved_tensors;

use super::read::{check_raw, op_ref, FileOutcome, RawTensor};
use super::records::{ScanError, Source};
use super::walk::Candidate;

/// The largest `data.pkl` read (real ones are a few hundred bytes per tensor).
const MAX_PICKLE: u64 = 16 << 20;

/// A tensor of a `.pt` archive: its type, view and where its first element lies in the file.
pub struct PtTensor {
    pub element: Element,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
    /// File offset of the view's first element.
    pub offset: u64,
    /// Bytes from `offset` the view spans (`numel × element size` for dense views).
    pub nbytes: u64,
}

impl PtTensor {
    /// Whether the view is C-contiguous (its elements lie in logical order).
    pub fn is_contiguous(&self) -> bool {
        let mut expect = 1u64;
        for (&n, &st) in self.shape.iter().zip(&self.stride).rev() {
            if n != 1 && st != expect {
                return false;
            }
            expect = expect.saturating_mul(n);
        }
        self.shape.len() == self.stride.len()
    }
}

/// Lists the tensors saved in a `.pt` archive of `len` bytes, in the order of the saved object
/// (a tensor; tensors in tuples, lists and dicts). Only dense views (contiguous or permuted)
/// are listed; every other tensor is an `Err` with the reason. Nothing but `data.pkl` is read.
pub fn list(file: &File, len: u64) -> Result<Vec<Result<PtTensor, String>>, String> {
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| format!("not a torch.save zip archive: {e}"))?;
    let pkl_name = zip
        .file_names()
        .find(|n| n.ends_with("/data.pkl") || *n == "data.pkl")
        .map(str::to_string)
        .ok_or("torch.save archive has no data.pkl")?;
    let prefix = pkl_name.trim_end_matches("data.pkl").to_string();
    let pickle = match zip.by_name(&pkl_name) {
        Ok(f) if f.size() <= MAX_PICKLE => {
            let mut buf = Vec::with_capacity(f.size() as usize);
            std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_PICKLE), &mut buf)
                .map_err(|e| format!("cannot read data.pkl: {e}"))?;
            buf
        }
        Ok(f) => return Err(format!("data.pkl is {} bytes, too large", f.size())),
        Err(e) => return Err(format!("cannot read data.pkl: {e}")),
    };
    let tensors = saved_tensors(&pickle).map_err(|e| format!("data.pkl: {e}"))?;
    if tensors.is_empty() {
        return Err("data.pkl holds no tensor".into());
    }
    Ok(tensors
        .into_iter()
        .map(|t| {
            let el = t
                .element
                .ok_or_else(|| format!("storage type {} is not read", t.storage_type))?;
            if !t.dense() {
                return Err(format!(
                    "strided view with gaps or overlaps (size {:?}, stride {:?}) is not read",
                    t.size, t.stride
                ));
            }
            let (start, record_len) = match zip.by_name(&format!("{prefix}data/{}", t.key)) {
                Ok(f) if f.compression() == zip::CompressionMethod::Stored => f
                    .data_start()
                    .map(|start| (start, f.size()))
                    .ok_or_else(|| format!("storage record {} has no data offset", t.key))?,
                Ok(_) => return Err(format!("storage record {} is compressed", t.key)),
                Err(e) => return Err(format!("storage record {}: {e}", t.key)),
            };
            let (off, nbytes) = t
                .byte_span(record_len)
                .filter(|_| start.checked_add(record_len).is_some_and(|e| e <= len))
                .ok_or_else(|| {
                    format!(
                        "size {:?} at storage offset {} does not fit the {record_len}-byte storage record",
                        t.size, t.offset
                    )
                })?;
            Ok(PtTensor {
                element: el,
                shape: t.size,
                stride: t.stride,
                offset: start + off,
                nbytes,
            })
        })
        .collect())
}

/// Reads one `.pt` file.
pub fn read(c: &Candidate, file: &File, len: u64) -> FileOutcome {
    let err = |message: String| FileOutcome {
        errors: vec![ScanError {
            path: c.rel.clone(),
            message,
            offset: None,
        }],
        ..FileOutcome::default()
    };
    let tensors = match list(file, len) {
        Ok(t) => t,
        Err(e) => return err(e),
    };
    let (fx_node, counter) = match &c.name {
        FileName::Pt { fx_node, count, .. } => (fx_node.clone(), *count),
        _ => (c.rel.clone(), None),
    };
    let mut op = op_ref(c, None, None);
    op.op_name = fx_node;
    op.counter = counter;
    let mut out = FileOutcome {
        decoded: true,
        ..FileOutcome::default()
    };
    for (index, t) in tensors.into_iter().enumerate() {
        let checked = t.and_then(|t| {
            let raw = RawTensor {
                io: Io::Output,
                index,
                element: t.element,
                shape: t.shape,
                offset: t.offset,
                nbytes: t.nbytes,
            };
            check_raw(file, &op, raw, Source::Pt).map(|r| (r, t.nbytes))
        });
        match checked {
            Ok((r, nbytes)) => {
                out.bytes += nbytes;
                out.tensors.push(r);
            }
            Err(m) => out.errors.push(ScanError {
                path: c.rel.clone(),
                message: format!("tensor {index}: {m}"),
                offset: None,
            }),
        }
    }
    out
}
