//! npugraph_ex `.pt` dumps (`dump-data.md` §7): `torch.save` zip archives.
//!
//! ```text
//! <archive>/data.pkl   pickle naming each tensor's storage record, offset, size and stride
//! <archive>/data/<key> raw little-endian storage bytes (stored, not compressed)
//! ```
//!
//! This module does the archive I/O only: it reads `data.pkl` (bounded), hands it to the pure
//! [`npgx_parsers::dump::pt::saved_tensors`] (a restricted pickle reader that never runs code),
//! and locates each tensor's bytes inside its storage record; the lister ([`super::list`]) makes
//! them slots like any dump block.

use std::fs::File;
use std::io::Read;

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::pt::saved_tensors;

/// The largest `data.pkl` read (real ones are a few hundred bytes per tensor); the same as the
/// pickle reader's input limit.
const MAX_PICKLE: u64 = 16 << 20;

/// One saved tensor's bytes inside the archive file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PtBlock {
    pub element: Element,
    pub shape: Vec<u64>,
    /// Element strides of the view (dense: contiguous or a permutation of contiguous).
    pub stride: Vec<u64>,
    /// Absolute offset of the first element in the `.pt` file.
    pub offset: u64,
    pub nbytes: u64,
}

impl PtBlock {
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

/// Opens a `.pt` archive and locates every saved tensor: `Err` when the archive or its
/// `data.pkl` cannot be read, otherwise one entry per tensor in document order, each either
/// where its bytes lie or why it cannot be checked.
pub fn blocks(file: &File, len: u64) -> Result<Vec<Result<PtBlock, String>>, String> {
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| format!("not a torch.save zip archive: {e}"))?;
    let pkl_name = zip
        .file_names()
        .find(|n| n.ends_with("/data.pkl") || *n == "data.pkl")
        .map(str::to_string)
        .ok_or("torch.save archive has no data.pkl")?;
    let prefix = pkl_name.trim_end_matches("data.pkl").to_string();
    let pickle = {
        let f = zip
            .by_name(&pkl_name)
            .map_err(|e| format!("cannot read data.pkl: {e}"))?;
        if f.size() > MAX_PICKLE {
            return Err(format!("data.pkl is {} bytes, too large", f.size()));
        }
        let mut buf = Vec::new();
        f.take(MAX_PICKLE)
            .read_to_end(&mut buf)
            .map_err(|e| format!("cannot read data.pkl: {e}"))?;
        buf
    };
    let tensors = saved_tensors(&pickle).map_err(|e| format!("data.pkl: {e}"))?;
    if tensors.is_empty() {
        return Err("data.pkl holds no tensor".into());
    }
    let mut out = Vec::with_capacity(tensors.len());
    for t in tensors {
        let located = (|| {
            let Some(element) = t.element else {
                return Err(format!("storage type {} is not checked", t.storage_type));
            };
            if !t.dense() {
                return Err(format!(
                    "strided view with gaps or overlaps (size {:?}, stride {:?}) is not checked",
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
            let span = t
                .byte_span(record_len)
                .filter(|_| start.checked_add(record_len).is_some_and(|e| e <= len));
            let Some((off, nbytes)) = span else {
                return Err(format!(
                    "size {:?} at storage offset {} does not fit the {record_len}-byte storage record",
                    t.size, t.offset
                ));
            };
            Ok(PtBlock {
                element,
                shape: t.size.clone(),
                stride: t.stride.clone(),
                offset: start + off,
                nbytes,
            })
        })();
        out.push(located);
    }
    Ok(out)
}
