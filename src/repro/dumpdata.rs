//! The failing operator's dump file: finding it in a dump tree and turning each input and
//! output into a `.npy` in the logical (original) shape.
//!
//! Decoding goes through the one dump-header reader and the one tensor lister of npgx,
//! [`list::decode_header`] and [`list::header_slots`] (which also decides a truncated block: an
//! error, never a short tensor); each block is read as the device holds it, and
//! [`PaddedView::gather`] — the code `dump-compare` and `dump-convert` use too — brings a
//! padded device layout (NC1HWC0, FRACTAL_Z, FRACTAL_NZ, …) back to the logical tensor. Formats
//! without a view keep the device layout, and the case says so. Converted `.npy` files are
//! copied as they are, never read whole.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use npgx_parsers::dump::dtype::DType;
use npgx_parsers::dump::header::{self, Io};
use npgx_parsers::dump::layout::PaddedView;
use npgx_parsers::dump::name::{self, FileName, OpDumpName};

use super::case::{DumpFacts, DumpTensorFacts};
use crate::dump::list::{self, TensorSlot};
use crate::dump::npy;
use crate::dump::values;

/// How deep a dump tree is searched.
const MAX_DEPTH: usize = 16;

/// What identifies the operator's dump file.
#[derive(Clone, Debug, Default)]
pub struct DumpQuery {
    pub op_name: Option<String>,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
}

/// A dump that matched the query, with its score (higher is better).
#[derive(Clone, Debug)]
pub struct Candidate {
    /// The binary dump file; for converted `.npy` files, the first of them.
    pub path: PathBuf,
    /// The parsed file name; `None` for a file given directly whose name is not a dump name.
    pub name: Option<OpDumpName>,
    /// msaccucmp `convert` output (`«dump name».input.0.npy`, …) instead of a binary dump:
    /// each tensor's io, index and file.
    pub npy: Vec<(Io, usize, PathBuf)>,
    score: u8,
}

fn score(q: &DumpQuery, wanted: Option<&str>, d: &OpDumpName) -> u8 {
    let name_hit = wanted == Some(d.op_name.as_str());
    let task_hit = q.task_id.is_some() && q.task_id == Some(d.task_id);
    let stream_ok = match (q.stream_id, d.stream_id) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    match (name_hit, task_hit && stream_ok) {
        (true, true) => 3,
        (true, false) => 2,
        (false, true) if q.stream_id.is_some() || d.stream_id.is_none() => 1,
        _ => 0,
    }
}

/// Finds the dump files of the operator under `root` (or `root` itself when it is a file).
/// The best match comes first: name and task id, then name only, then (for exception dumps,
/// whose op name can differ from the graph node) task and stream id; newest first within a tier.
pub fn find(root: &Path, q: &DumpQuery) -> Vec<Candidate> {
    if root.is_file() {
        // A file named by the user is used whatever its name.
        let name = root
            .file_name()
            .and_then(|n| match name::classify(&n.to_string_lossy()) {
                FileName::Dump(d) => Some(d),
                _ => None,
            });
        return vec![Candidate {
            path: root.to_path_buf(),
            name,
            npy: Vec::new(),
            score: 0,
        }];
    }
    let files = super::files_under(root, MAX_DEPTH);
    let wanted = q.op_name.as_deref().map(name::sanitise);
    let mut out: Vec<Candidate> = Vec::new();
    // Converted .npy files of one dump, keyed by directory and dump name.
    let mut groups: BTreeMap<(PathBuf, String), Candidate> = BTreeMap::new();
    for path in files {
        let Some(file_name) = path.file_name().map(|n| n.to_string_lossy().into_owned()) else {
            continue;
        };
        match name::classify(&file_name) {
            FileName::Dump(d) if !d.is_opdebug() => {
                let score = score(q, wanted.as_deref(), &d);
                if score > 0 {
                    out.push(Candidate {
                        path,
                        name: Some(d),
                        npy: Vec::new(),
                        score,
                    });
                }
            }
            FileName::Npy {
                origin: Some(d),
                io: Some(io),
                index: Some(index),
            } if matches!(io, Io::Input | Io::Output) => {
                let score = score(q, wanted.as_deref(), &d);
                if score == 0 {
                    continue;
                }
                let prefix = file_name
                    .rsplit_once(if io == Io::Input {
                        ".input."
                    } else {
                        ".output."
                    })
                    .map_or_else(|| file_name.clone(), |(p, _)| p.to_string());
                let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
                let g = groups.entry((dir, prefix)).or_insert_with(|| Candidate {
                    path: path.clone(),
                    name: Some(d),
                    npy: Vec::new(),
                    score,
                });
                g.npy.push((io, index, path));
            }
            _ => {}
        }
    }
    for mut g in groups.into_values() {
        g.npy.sort();
        g.npy.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        g.path = g.npy[0].2.clone();
        out.push(g);
    }
    // Best score first; a binary dump before converted .npy files of the same dump.
    out.sort_by(|a, b| {
        b.score
            .cmp(&a.score)
            .then(a.npy.is_empty().cmp(&b.npy.is_empty()).reverse())
            .then(stamp(b).cmp(&stamp(a)))
            .then(a.path.cmp(&b.path))
    });
    if let Some(best) = out.first().map(|c| c.score) {
        out.retain(|c| c.score == best);
    }
    out
}

fn stamp(c: &Candidate) -> Option<u64> {
    c.name.as_ref().map(|n| n.timestamp)
}

/// The contents of a file to write into the case directory.
pub enum OutData {
    Bytes(Vec<u8>),
    /// A file copied as it is (streamed, never read whole).
    Copy(PathBuf),
}

/// A `.npy` (or raw tiling file) to write into the case directory.
pub struct OutFile {
    /// Path relative to the case directory.
    pub rel: String,
    pub data: OutData,
    /// `input`, `dumped_output` or `tiling_data`.
    pub kind: &'static str,
}

/// Reads a candidate: a binary dump through [`decode`], converted `.npy` files through
/// [`copy_npy`].
pub fn read(c: &Candidate, candidates: usize) -> Result<(DumpFacts, Vec<OutFile>), String> {
    if c.npy.is_empty() {
        decode(&c.path, c.name.as_ref(), candidates)
    } else {
        copy_npy(c, candidates)
    }
}

/// Takes msaccucmp-converted `.npy` files as they are (they are already in the logical
/// layout), after checking their headers.
pub fn copy_npy(c: &Candidate, candidates: usize) -> Result<(DumpFacts, Vec<OutFile>), String> {
    let mut facts = DumpFacts {
        file: c.path.display().to_string(),
        framing: "npy".to_string(),
        op_name: c.name.as_ref().map(|d| d.op_name.clone()),
        op_type: c.name.as_ref().map(|d| d.op_type.clone()),
        task_id: c.name.as_ref().map(|d| d.task_id),
        stream_id: c.name.as_ref().and_then(|d| d.stream_id),
        timestamp: c.name.as_ref().map(|d| d.timestamp),
        candidates,
        tensors: Vec::new(),
        tiling_data: None,
    };
    let mut files = Vec::new();
    for (io, index, path) in &c.npy {
        let io_name = if *io == Io::Input { "input" } else { "output" };
        let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let len = file
            .metadata()
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len();
        let header =
            npy::read_header(&file, len).map_err(|e| format!("{}: {e}", path.display()))?;
        let Some(ts) = &header.type_str else {
            return Err(format!(
                "{}: structured .npy arrays are not tensors",
                path.display()
            ));
        };
        let dt = header.element().map(|el| el.dtype().name());
        let shape = header.shape.clone();
        let dir = if *io == Io::Input {
            "inputs"
        } else {
            "outputs"
        };
        let rel = format!("{dir}/{io_name}_{index}.npy");
        facts.tensors.push(DumpTensorFacts {
            io: io_name.to_string(),
            index: *index,
            dtype: dt.unwrap_or("DT_UNDEFINED").to_string(),
            format: "ND".to_string(),
            device_shape: shape.clone(),
            original_shape: shape.clone(),
            npy: Some(rel.clone()),
            device_npy: None,
            npy_dtype: Some(dt.map_or_else(|| ts.to_string(), super::io::np_dtype)),
            npy_shape: Some(shape),
            layout: "logical".to_string(),
            note: Some(format!(
                "msaccucmp-converted {}{}",
                path.display(),
                if dt.is_none() {
                    format!(" (NumPy type {ts}: data type unknown)")
                } else {
                    String::new()
                }
            )),
        });
        files.push(OutFile {
            rel,
            data: OutData::Copy(path.clone()),
            kind: if *io == Io::Input {
                "input"
            } else {
                "dumped_output"
            },
        });
    }
    Ok((facts, files))
}

/// Decodes `path` into per-tensor `.npy` files. Problems with single tensors are notes in the
/// facts; an unreadable file is an `Err` naming it.
pub fn decode(
    path: &Path,
    dump_name: Option<&OpDumpName>,
    candidates: usize,
) -> Result<(DumpFacts, Vec<OutFile>), String> {
    let shown = path.display();
    let file = File::open(path).map_err(|e| format!("{shown}: {e}"))?;
    let len = file.metadata().map_err(|e| format!("{shown}: {e}"))?.len();
    let (h, inline) =
        list::decode_header(&file, len).map_err(|e| format!("{shown}: {}", e.message))?;
    let blocks = h.blocks(len);
    // The tensors' bytes as the lister places them (one rule for a truncated block).
    let mut slots: BTreeMap<usize, Result<TensorSlot, String>> =
        list::header_slots(&h, inline.as_ref(), len)
            .into_iter()
            .map(|(i, slot)| (i, slot.map_err(|(m, _)| m)))
            .collect();
    let mut facts = DumpFacts {
        file: shown.to_string(),
        framing: h.framing.to_string(),
        op_name: h
            .op_name
            .clone()
            .or_else(|| dump_name.map(|d| d.op_name.clone())),
        op_type: dump_name.map(|d| d.op_type.clone()),
        task_id: dump_name.map(|d| d.task_id),
        stream_id: dump_name.and_then(|d| d.stream_id),
        timestamp: dump_name.map(|d| d.timestamp),
        candidates,
        tensors: Vec::new(),
        tiling_data: None,
    };
    let mut files = Vec::new();
    for (i, (t, span)) in h.tensors.iter().zip(&blocks).enumerate() {
        let io = match t.io {
            Io::Input => "input",
            Io::Output => "output",
            Io::Buffer | Io::Workspace | Io::Parameter => continue,
        };
        if t.io == Io::Input && t.is_tiling_data() {
            // Tiling data is no tensor: its block is copied as it is.
            let tiling = match &inline {
                Some(d) => Ok(d.get(i).cloned().unwrap_or_default()),
                None if span.available < span.size => Err(format!(
                    "{io} {} declares {} bytes at offset {} but the file holds {}: truncated block",
                    t.index, span.size, span.offset, span.available
                )),
                None => list::read_exact(&file, span.offset, span.size),
            };
            match tiling {
                Ok(b) => {
                    let rel = "tiling_data.bin".to_string();
                    facts.tiling_data = Some(rel.clone());
                    files.push(OutFile {
                        rel,
                        data: OutData::Bytes(b),
                        kind: "tiling_data",
                    });
                }
                Err(e) => facts.tiling_data = Some(format!("unreadable: {e}")),
            }
            continue;
        }
        let mut tf = DumpTensorFacts {
            io: io.to_string(),
            index: t.index,
            dtype: t.dtype.name().to_string(),
            format: t.format.name(),
            device_shape: t.shape.clone(),
            original_shape: t.original_shape.clone(),
            npy: None,
            device_npy: None,
            npy_dtype: None,
            npy_shape: None,
            layout: "none".to_string(),
            note: None,
        };
        let slot = slots.remove(&i);
        let bytes = || match slot {
            Some(Ok(slot)) => values::device_block(&file, inline.as_ref(), &slot),
            Some(Err(m)) => Err(m),
            None => Err("not tensor data".to_string()),
        };
        let converted = tensor_npy(t, bytes).and_then(|c| {
            let main = npy::encode(c.ty.descr, &c.shape, &c.data).map_err(|e| e.to_string())?;
            let device = match &c.device {
                Some(d) => Some(npy::encode(c.ty.descr, &t.shape, d).map_err(|e| e.to_string())?),
                None => None,
            };
            Ok((c, main, device))
        });
        match converted {
            Ok((c, main, device)) => {
                let dir = if t.io == Io::Input {
                    "inputs"
                } else {
                    "outputs"
                };
                let kind = if t.io == Io::Input {
                    "input"
                } else {
                    "dumped_output"
                };
                let rel = format!("{dir}/{io}_{}.npy", t.index);
                tf.npy = Some(rel.clone());
                tf.npy_dtype = Some(c.ty.name.to_string());
                tf.npy_shape = Some(c.shape.clone());
                tf.layout = c.layout.to_string();
                tf.note = c.note;
                files.push(OutFile {
                    rel,
                    data: OutData::Bytes(main),
                    kind,
                });
                if let Some(device) = device {
                    let rel = format!("{dir}/{io}_{}.device.npy", t.index);
                    tf.device_npy = Some(rel.clone());
                    files.push(OutFile {
                        rel,
                        data: OutData::Bytes(device),
                        kind,
                    });
                }
            }
            Err(e) => tf.note = Some(e),
        }
        facts.tensors.push(tf);
    }
    Ok((facts, files))
}

/// A tensor ready for `.npy`.
struct Converted {
    /// Data and shape of the main file.
    data: Vec<u8>,
    shape: Vec<u64>,
    /// The device-layout data when `data` was converted from it.
    device: Option<Vec<u8>>,
    ty: npy::NpyType,
    /// `logical` or `device`.
    layout: &'static str,
    note: Option<String>,
}

fn tensor_npy(
    t: &header::TensorDesc,
    bytes: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<Converted, String> {
    if t.dtype == DType::Undefined {
        return Err("data type DT_UNDEFINED: not written".to_string());
    }
    let Some(el) = t.dtype.element() else {
        return Err(format!(
            "data type {} is not decoded by npgx: not written",
            t.dtype.name()
        ));
    };
    let count = t
        .shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .and_then(|c| usize::try_from(c).ok())
        .ok_or_else(|| format!("device shape {:?} overflows", t.shape))?;
    let needed = match el.size() {
        Some(s) => count.checked_mul(s),
        None => Some(count.div_ceil(2)),
    }
    .ok_or_else(|| format!("device shape {:?} overflows", t.shape))?;
    let raw = bytes()?;
    if raw.len() != needed {
        return Err(format!(
            "block holds {} bytes but device shape {:?} of {} needs {needed}: not written",
            raw.len(),
            t.shape,
            t.dtype.name()
        ));
    }
    let ty = npy::npy_type(el);
    let data = npy::convert(el, &raw, count);
    let widen_note = ty.widened.then(|| {
        format!(
            "{} values written as {} (exact; NumPy has no such type)",
            t.dtype.name(),
            ty.name
        )
    });
    let elem = data.len().checked_div(count).unwrap_or(1).max(1);
    if t.format.is_padded_device_format() {
        if let Some(view) = PaddedView::new(t.format, &t.shape, &t.original_shape) {
            if let Some(g) = view.gather(&data, elem) {
                return Ok(Converted {
                    data: g,
                    shape: view.logical_shape.clone(),
                    device: Some(data),
                    ty,
                    layout: "logical",
                    note: widen_note,
                });
            }
        }
        let why = format!(
            "format {} with original shape {:?}: no conversion to the logical layout, device layout kept",
            t.format.name(),
            t.original_shape
        );
        let note = match widen_note {
            Some(w) => format!("{why}; {w}"),
            None => why,
        };
        return Ok(Converted {
            data,
            shape: t.shape.clone(),
            device: None,
            ty,
            layout: "device",
            note: Some(note),
        });
    }
    Ok(Converted {
        data,
        shape: t.shape.clone(),
        device: None,
        ty,
        layout: "logical",
        note: widen_note,
    })
}
