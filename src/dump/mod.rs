//! Dump scanning: walk a dump tree, decode every file, find NaN / Inf / overflow, and tell which
//! operator was first — in execution order, per rank and step.
//!
//! The scan is a pipeline in one direction: [`walk`] lists and classifies files, [`read`] turns
//! each file into tensor records (in parallel, one file per task, each streaming through a
//! per-thread buffer), [`analysis`] groups and orders them. Nothing here prints: progress is
//! reported through a callback and the [`ScanReport`] goes to a renderer.

pub mod analysis;
mod pt;
pub mod read;
pub mod records;
pub mod stats;
pub mod walk;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Context;
use rayon::prelude::*;

pub use records::{Anomaly, Group, Kind, ScanError, ScanReport, Source, Summary, TensorRecord};

/// Version of the JSON schema in `docs/dump-scan.md`.
pub const SCHEMA_VERSION: u32 = 1;

/// How to scan.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
}

/// Progress events, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// The walk finished and found this many candidate files.
    Found(u64),
    /// One more file was read.
    FileDone,
}

/// Scans `root` (a directory or one file). Fails only when the root itself cannot be read;
/// every problem with a file inside becomes a [`ScanError`] and the scan goes on.
pub fn scan(
    root: &Path,
    opts: &ScanOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> anyhow::Result<ScanReport> {
    std::fs::metadata(root).with_context(|| format!("cannot read {}", root.display()))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let walked = pool.install(|| walk::walk(root));
    progress(Progress::Found(walked.candidates.len() as u64));
    let outcomes: Vec<(walk::Candidate, read::FileOutcome)> = pool.install(|| {
        walked
            .candidates
            .into_par_iter()
            .map(|c| {
                let o = read::read(&c);
                progress(Progress::FileDone);
                (c, o)
            })
            .collect()
    });

    let mut errors = walked.errors;
    let mut tensors = Vec::new();
    let mut opdebug = Vec::new();
    let mut files: BTreeMap<analysis::GroupKey, (u64, u64)> = BTreeMap::new();
    let mut summary = Summary {
        files_seen: walked.files_seen,
        ..Summary::default()
    };
    for (c, o) in outcomes {
        if o.decoded {
            summary.dump_files += 1;
            let e = files.entry((c.location, c.layout)).or_default();
            e.0 += 1;
            e.1 += o.bytes;
        }
        summary.bytes += o.bytes;
        errors.extend(o.errors);
        tensors.extend(o.tensors);
        opdebug.extend(o.opdebug);
    }
    let analysed = analysis::analyse(tensors, &files);
    analysis::pair_opdebug(&mut opdebug, &analysed.tensors);
    let anomalies: Vec<Anomaly> = analysed.tensors.iter().filter_map(Anomaly::of).collect();
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    summary.tensors = analysed.tensors.len() as u64;
    summary.anomalous_tensors = anomalies.len() as u64;
    summary.groups = analysed.groups.len() as u64;
    summary.errors = errors.len() as u64;
    Ok(ScanReport {
        schema_version: SCHEMA_VERSION,
        root: root.display().to_string(),
        summary,
        groups: analysed.groups,
        anomalies,
        opdebug,
        errors,
        tensors: analysed.tensors,
    })
}
