//! `npgx dump-convert`: every tensor of every dump under a tree written as an ND `.npy`, as
//! msaccucmp `convert` does — device formats brought back to the original shape, bf16 and fp8
//! widened to float32 (exact), other types kept — named `{dump file}.{input|output}.{i}.npy`
//! in the dump's relative directory under the output directory. Tensors are streamed from the
//! dump to the `.npy` chunk by chunk; user files are never written to.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::dump::name::FileName;
use rayon::prelude::*;
use serde::Serialize;

use crate::dump::list::{self, Listed, TensorSlot};
use crate::dump::mapped::Mode;
use crate::dump::npy;
use crate::dump::values::{ValueReader, CHUNK};
use crate::dump::walk::{self, Candidate};
use crate::dump::FileProblem;

/// Name of the `npgx.dump-convert` JSON document (the envelope of docs/json.md).
pub const SCHEMA_NAME: &str = "dump-convert";
/// Version of the `dump-convert` JSON document.
pub const SCHEMA_VERSION: u32 = 1;

/// One `.npy` written.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Written {
    pub source: String,
    pub file: String,
    pub dtype: String,
    pub shape: Vec<u64>,
}

/// What a conversion did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ConvertReport {
    pub schema_version: u32,
    pub tree: String,
    pub out_dir: String,
    /// Dump files read.
    pub dumps: u64,
    pub written: Vec<Written>,
    /// Files and tensors that could not be converted.
    pub errors: Vec<FileProblem>,
}

fn dump_file_name(c: &Candidate) -> String {
    c.mapped_from.clone().unwrap_or_else(|| {
        c.path
            .file_name()
            .map_or_else(|| c.rel.clone(), |n| n.to_string_lossy().into_owned())
    })
}

fn write_one(path: &Path, slot: &TensorSlot, dest: &Path, map: Mode) -> Result<String, String> {
    let ty = npy::npy_type(slot.element);
    let mut reader = ValueReader::open(path, slot, map)?;
    crate::output::write_with(dest, |file| {
        let mut w = npy::write_header(std::io::BufWriter::new(file), ty.descr, &slot.shape)
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dest.display()))?;
        loop {
            let out = reader
                .next_with(CHUNK, |bytes| {
                    npy::convert(slot.element, bytes, bytes.len())
                })
                .map_err(anyhow::Error::msg)?;
            if out.is_empty() {
                break;
            }
            w.write_all(&out)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dest.display()))?;
        }
        reader.finish().map_err(anyhow::Error::msg)?;
        w.flush()
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", dest.display()))
    })
    .map_err(|e| format!("{e:#}"))?;
    Ok(ty.name.to_string())
}

fn convert_file(
    c: &Candidate,
    l: &Listed,
    out_dir: &Path,
    map: Mode,
) -> (Vec<Written>, Vec<FileProblem>) {
    let mut written = Vec::new();
    let mut errors: Vec<FileProblem> = l
        .errors
        .iter()
        .map(|e| e.clone().at(l.path.display().to_string()))
        .collect();
    let dir: PathBuf = out_dir.join(&c.dir);
    if let Err(e) = std::fs::create_dir_all(&dir) {
        errors.push(FileProblem {
            path: dir.display().to_string(),
            message: format!("cannot create directory: {e}"),
            offset: None,
        });
        return (written, errors);
    }
    let stem = dump_file_name(c);
    for slot in &l.tensors {
        let dest = dir.join(format!("{stem}.{}.{}.npy", slot.io, slot.index));
        match write_one(&l.path, slot, &dest, map) {
            Ok(dtype) => written.push(Written {
                source: l.path.display().to_string(),
                file: dest.display().to_string(),
                dtype,
                shape: slot.shape.clone(),
            }),
            Err(message) => {
                // A failed file is not left behind (crate::output).
                errors.push(FileProblem {
                    path: l.path.display().to_string(),
                    message: format!("{} {}: {message}", slot.io, slot.index),
                    offset: None,
                });
            }
        }
    }
    (written, errors)
}

/// Converts every dump under `tree` into `.npy` files under `out_dir` (tensor data mapped as
/// `map` says). Fails only when the tree cannot be read or the output directory cannot be
/// created.
pub fn convert(
    tree: &Path,
    out_dir: &Path,
    threads: Option<usize>,
    map: Mode,
) -> anyhow::Result<ConvertReport> {
    std::fs::metadata(tree).with_context(|| crate::error::CannotRead::new(tree))?;
    std::fs::create_dir_all(out_dir)
        .with_context(|| format!("cannot create {}", out_dir.display()))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let walked = pool.install(|| walk::walk(tree));
    let dumps: Vec<&Candidate> = walked
        .candidates
        .iter()
        .filter(|c| match &c.name {
            FileName::Dump(n) => !n.is_opdebug(),
            FileName::Hashed | FileName::Pt { .. } => true,
            _ => false,
        })
        .collect();
    let results: Vec<(Vec<Written>, Vec<FileProblem>)> = pool.install(|| {
        dumps
            .par_iter()
            .filter_map(|c| list::list(c).map(|l| convert_file(c, &l, out_dir, map)))
            .collect()
    });
    let mut written = Vec::new();
    let mut errors = walked.errors;
    for (w, e) in results {
        written.extend(w);
        errors.extend(e);
    }
    written.sort_by(|a, b| a.file.cmp(&b.file));
    errors.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    Ok(ConvertReport {
        schema_version: SCHEMA_VERSION,
        tree: tree.display().to_string(),
        out_dir: out_dir.display().to_string(),
        dumps: dumps.len() as u64,
        written,
        errors,
    })
}
