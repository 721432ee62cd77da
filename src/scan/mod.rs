//! The scan engine (`dump-scan`): decode every file of a dump tree, find NaN / Inf / overflow,
//! and tell which operator was first — in execution order, per rank and step.
//!
//! The scan is a pipeline in one direction: [`crate::dump::walk`] lists and classifies files
//! (the dump-tree I/O every engine shares is [`crate::dump`]), [`read`] turns
//! each file into tensor records (in parallel, one file per task, each streaming through a
//! per-thread buffer), [`analysis`] groups and orders them. Nothing here prints: progress is
//! reported through a callback and the [`ScanReport`] goes to a renderer.

pub mod address;
pub mod analysis;
pub mod document;
pub mod msprobe;
pub mod order;
pub mod origin;
pub mod read;
pub mod records;
pub mod scan_report;
pub mod sorted;
pub mod stats;
pub mod store;

use std::path::Path;
use std::sync::{Mutex, MutexGuard};

use anyhow::Context;
use npgx_parsers::dump::name::FileName;
use rayon::prelude::*;

use crate::dump::walk::{Candidate, DirFiles, WalkSummary};
use crate::dump::{walk, FileProblem};

pub use records::{Anomaly, Kind, Place, Source, StatsNote, TensorRecord};
pub use scan_report::{Group, ScanReport, Summary};

/// Name of the JSON document of `docs/dump-scan.md` (its envelope's schema is `npgx.dump-scan`).
pub const SCHEMA_NAME: &str = "dump-scan";
/// Version of the JSON schema in `docs/dump-scan.md` (2: groups carry `addresses`).
pub const SCHEMA_VERSION: u32 = 2;

/// How to scan.
#[derive(Clone, Debug, Default)]
pub struct ScanOptions {
    /// Worker threads; `None` = one per core.
    pub threads: Option<usize>,
    /// Keep every tensor record, not only anomalous ones (`--all`, shards).
    pub keep_all: bool,
    /// Rank and world size for files whose path does not give them (no torchair
    /// `worldsize{W}_global_rank{R}` level).
    pub rank: Option<RankInfo>,
    /// Graph texts to trace anomalies to their FX nodes and source lines (`--graphs`; files or
    /// folders), besides those in and beside the tree ([`crate::source_map`]).
    pub graphs: Vec<std::path::PathBuf>,
    /// When tensor data is read through a mapping (`--mmap`, `--no-mmap`, the environment:
    /// [`crate::dump::mapped::Mode::chosen`]).
    pub map: crate::dump::mapped::Mode,
    /// Stops the scan before its end (a cancelled `npgx mcp` call): no file is read once it is
    /// set, and the scan returns an error.
    pub cancel: crate::cancel::Cancel,
    /// Only this step (`--step`): a file whose path names another step is not read, and a
    /// record of another step is dropped (statistics files that hold many steps).
    pub step: Option<u64>,
}

/// Whether `location` is of another step than the one the scan is limited to.
fn other_step(step: Option<u64>, location: &npgx_parsers::dump::path::Location) -> bool {
    matches!((step, location.step), (Some(want), Some(s)) if s != want)
}

/// A rank given from outside the tree: by option or from the launcher's environment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankInfo {
    pub rank: u32,
    pub world_size: u32,
    /// `option`, or `env:<VARIABLE>` (the group's `rank_source`).
    pub source: String,
}

/// The launchers' variables, first match wins: torchrun, Slurm, Open MPI, PMI (MPICH, Intel MPI).
pub const RANK_ENV: [(&str, &str); 4] = [
    ("RANK", "WORLD_SIZE"),
    ("SLURM_PROCID", "SLURM_NTASKS"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
    ("PMI_RANK", "PMI_SIZE"),
];

impl RankInfo {
    /// The rank and world size from the first launcher whose two variables are both set
    /// ([`RANK_ENV`]), through `get` (the process environment in the CLI).
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> anyhow::Result<RankInfo> {
        for (rank, size) in RANK_ENV {
            let (Some(r), Some(w)) = (get(rank), get(size)) else {
                continue;
            };
            let num = |name: &str, v: &str| {
                v.trim()
                    .parse::<u32>()
                    .with_context(|| format!("{name}={v:?} is not a rank number"))
            };
            let (r, w) = (num(rank, &r)?, num(size, &w)?);
            return RankInfo::new(r, w, format!("env:{rank}"));
        }
        let names: Vec<String> = RANK_ENV.iter().map(|(r, w)| format!("{r}/{w}")).collect();
        anyhow::bail!(
            "--rank-from-env: none of the launcher variables is set ({})",
            names.join(", ")
        )
    }

    /// Checks `rank < world_size`.
    pub fn new(rank: u32, world_size: u32, source: String) -> anyhow::Result<RankInfo> {
        anyhow::ensure!(
            rank < world_size,
            "rank {rank} is not below world size {world_size} ({source})"
        );
        Ok(RankInfo {
            rank,
            world_size,
            source,
        })
    }

    /// Gives `location` this rank when its path gave none; returns whether it did.
    fn fill(&self, location: &mut npgx_parsers::dump::path::Location) -> bool {
        if location.rank.is_some() {
            return false;
        }
        location.rank = Some(self.rank);
        location.world_size = Some(self.world_size);
        true
    }
}

/// Progress events, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// The walk found this many more candidate files (one event per directory).
    Found(u64),
    /// One more file was read.
    FileDone,
}

/// Hands the pages of memory freed by the scan back to the system (glibc keeps freed small
/// blocks in its arenas: the scan's per-file and per-execution state, freed by
/// [`analysis::Collector::finish`], would stay in the process's RSS while the report is built).
/// It sets nothing: the allocator's settings are made once, at the process's start
/// ([`crate::process::tune_allocator`]).
fn release_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages of the allocator's arenas; it takes no pointer.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Locks `m`, taking the data of a poisoned lock as it is (a worker that panicked has already
/// failed the scan).
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the workers fold the files they read into, under one lock, as the files finish.
struct Folded {
    collector: analysis::Collector,
    errors: Vec<FileProblem>,
    opdebug: Vec<records::OpdebugRecord>,
    dump_files: u64,
    bytes: u64,
    /// Group locations whose rank came from `opts.rank`.
    ranked: std::collections::BTreeSet<npgx_parsers::dump::path::Location>,
    /// torchair graph dumps found in the tree.
    graph_files: Vec<std::path::PathBuf>,
}

impl Folded {
    /// Folds in what was read from file `c` (its Opdebug record, if any, already taken for
    /// pairing): a decoded file's group and count, its bytes, errors, Opdebug records, notes,
    /// address ranges and tensors — each given the rank of `rank` where its path gave none.
    fn add_file(&mut self, c: &Candidate, mut o: read::FileOutcome, opts: &ScanOptions) {
        let rank = opts.rank.as_ref();
        if opts.step.is_some() {
            let before = o.tensors.len();
            o.tensors.retain(|t| !other_step(opts.step, &t.op.location));
            o.notes.retain(|n| !other_step(opts.step, &n.op.location));
            if o.tensors.len() != before {
                // A file's addresses are its one operator's, whose records were dropped.
                o.addresses.clear();
            }
        }
        if o.decoded {
            self.dump_files += 1;
            let mut location = c.location.clone();
            if let Some(r) = rank {
                if r.fill(&mut location) && !self.ranked.contains(&location) {
                    self.ranked.insert(location.clone());
                }
            }
            self.collector.add_file((location, c.layout), o.bytes);
        }
        self.bytes += o.bytes;
        self.errors.extend(o.errors);
        self.opdebug.extend(o.opdebug);
        for mut n in o.notes {
            if let Some(r) = rank {
                r.fill(&mut n.op.location);
            }
            self.collector.add_note(n);
        }
        if let Some(r) = rank {
            for t in &mut o.tensors {
                r.fill(&mut t.op.location);
            }
        }
        self.collector.add_addresses(&o.tensors, &o.addresses);
        for t in o.tensors {
            self.collector.add(t);
        }
    }
}

/// Per directory holding Opdebug payloads: the dumps they may pair with, and the payloads.
type Pairing = (Vec<analysis::DumpIndexEntry>, Vec<records::OpdebugRecord>);

/// Reads the files of one directory in parallel, folding each into `folded` as it finishes,
/// then pairs the directory's Opdebug payloads with its dumps.
fn scan_dir(
    mut d: DirFiles,
    folded: &Mutex<Folded>,
    opts: &ScanOptions,
    progress: &(dyn Fn(Progress) + Sync),
) {
    if opts.cancel.is_set() {
        return;
    }
    if opts.step.is_some() {
        d.candidates.retain(|c| !other_step(opts.step, &c.location));
    }
    progress(Progress::Found(d.candidates.len() as u64));
    if !d.fx_graphs.is_empty() {
        lock(folded)
            .graph_files
            .extend(d.fx_graphs.into_iter().map(|(p, _)| p));
    }
    // Per directory, and only where Opdebug payloads are: the dumps they may pair with.
    let pairing: Mutex<Pairing> = Mutex::new((Vec::new(), Vec::new()));
    let has_opdebug = d.has_opdebug;
    d.candidates.into_par_iter().for_each(|c| {
        if opts.cancel.is_set() {
            return;
        }
        let pairing = has_opdebug.then_some(&pairing);
        scan_file(&c, pairing, folded, opts, progress);
    });
    let (dumps, mut opdebug) = pairing
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !opdebug.is_empty() {
        analysis::pair_opdebug(&mut opdebug, &dumps);
        lock(folded).opdebug.extend(opdebug);
    }
}

/// Reads file `c` and folds it into `folded`; with a `pairing` (its directory holds Opdebug
/// payloads), a decoded dump's ids and the file's Opdebug payload go there first.
fn scan_file(
    c: &Candidate,
    pairing: Option<&Mutex<Pairing>>,
    folded: &Mutex<Folded>,
    opts: &ScanOptions,
    progress: &(dyn Fn(Progress) + Sync),
) {
    // Files of many operators (msprobe) hand their records over in batches.
    let mut sink = |batch: Vec<records::TensorRecord>| {
        let mut f = lock(folded);
        for mut t in batch {
            if other_step(opts.step, &t.op.location) {
                continue;
            }
            if let Some(r) = &opts.rank {
                r.fill(&mut t.op.location);
            }
            f.collector.add(t);
        }
    };
    let mut o = match c.name {
        // Files of many operators hand their records over in batches.
        FileName::MsprobeDump => msprobe::read(c, opts.map, &mut sink),
        _ => read::read(c, opts.map),
    };
    progress(Progress::FileDone);
    if let Some(pairing) = pairing {
        let mut p = lock(pairing);
        if let (Some(task_id), Some(stream_id)) = (o.task_id, o.stream_id) {
            p.0.push(analysis::DumpIndexEntry {
                dir: c.dir.clone(),
                task_id,
                stream_id,
                timestamp: o.timestamp,
                path: c.rel.clone(),
            });
        }
        p.1.extend(o.opdebug.take());
    }
    lock(folded).add_file(c, o, opts);
}

/// The report of the scan of `root`: the collector's analysis (ranks told by where they came
/// from), the Opdebug records and every problem sorted, the summary counted, msprobe call
/// stacks attached.
fn report(
    root: &Path,
    opts: &ScanOptions,
    walked: WalkSummary,
    mut f: Folded,
) -> anyhow::Result<ScanReport> {
    let mut analysed = f.collector.finish();
    release_freed();
    analysed.tensors.check()?;
    for g in &mut analysed.groups {
        g.rank_source = match &opts.rank {
            Some(r) if f.ranked.contains(&g.location) => Some(r.source.clone()),
            _ => g.location.rank.map(|_| "path".to_string()),
        };
    }
    f.opdebug.sort_by(|a, b| a.path.cmp(&b.path));
    let mut errors = walked.errors;
    errors.extend(f.errors);
    errors.sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    let summary = Summary {
        files_seen: walked.files_seen,
        dump_files: f.dump_files,
        tensors: analysed.tensor_count,
        bytes: f.bytes,
        anomalous_tensors: analysed.anomalies.len() as u64,
        groups: analysed.groups.len() as u64,
        errors: errors.len() as u64,
    };
    let mut report = ScanReport {
        schema_version: SCHEMA_VERSION,
        root: root.display().to_string(),
        summary,
        groups: analysed.groups,
        anomalies: analysed.anomalies,
        opdebug: f.opdebug,
        notes: analysed.notes,
        errors,
        tensors: analysed.tensors,
        origins: None,
    };
    // Paths are relative to the root, or to its directory when the root is one file.
    let base = if std::fs::metadata(root).is_ok_and(|m| m.is_dir()) {
        root
    } else {
        root.parent().unwrap_or(root)
    };
    msprobe::attach_stacks(base, &mut report);
    let mut graphs = opts.graphs.clone();
    f.graph_files.sort();
    graphs.extend(f.graph_files);
    let (origins, problems) = origin::read(root, &graphs);
    report.errors.extend(problems);
    if let Some(o) = &origins {
        for a in report.findings_mut() {
            // msprobe's calls keep the origin their stack.json gave.
            if let Some(fx) = o.of(&a.tensor) {
                a.fx = Some(fx);
            }
        }
    }
    report.origins = origins;
    let errors = report.errors.len() as u64;
    report.summary.errors = errors;
    report
        .errors
        .sort_by(|a, b| (&a.path, &a.message).cmp(&(&b.path, &b.message)));
    Ok(report)
}

/// Scans `root` (a directory or one file). Fails only when the root itself cannot be read, or
/// when every tensor is to be kept and the scratch file cannot hold them; every problem with a
/// file inside becomes a [`FileProblem`] and the scan goes on.
///
/// What stays in memory: per group a few counters and the operators that had an anomaly, every
/// anomaly, errors and Opdebug records. A clean file leaves only fixed-size entries behind (its
/// order key and magnitude, and the address range of each addressed output, [`address`]), never
/// its tensors; with `--all` (and for shards) every tensor goes to sorted runs in a scratch
/// file, one batch of them in memory at a time ([`sorted`]). Directories are
/// scanned as the walk lists them, so no list of all files is built either; Opdebug payloads are
/// paired with the dumps of their own directory as soon as that directory is done, and only
/// directories holding Opdebug payloads index their dumps at all.
pub fn scan(
    root: &Path,
    opts: &ScanOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> anyhow::Result<ScanReport> {
    std::fs::metadata(root).with_context(|| crate::error::CannotRead::new(root))?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    // Files are read in parallel and folded into the collector as they finish.
    let folded = Mutex::new(Folded {
        collector: analysis::Collector::new(opts.keep_all),
        errors: Vec::new(),
        opdebug: Vec::new(),
        dump_files: 0,
        bytes: 0,
        ranked: std::collections::BTreeSet::new(),
        graph_files: Vec::new(),
    });
    let walked =
        pool.install(|| walk::for_each_dir(root, |d| scan_dir(d, &folded, opts, progress)));
    opts.cancel.check()?;
    let f = folded
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    report(root, opts, walked, f)
}

/// The steps the paths under `root` name (a model dump's iteration, msprobe's `step{N}`,
/// torchair's step folder), ascending: a walk that reads no file, for choosing the newest step
/// of a tree that grows while a job runs ([`ScanOptions::step`]).
pub fn steps(root: &Path) -> anyhow::Result<Vec<u64>> {
    std::fs::metadata(root).with_context(|| crate::error::CannotRead::new(root))?;
    let found = Mutex::new(std::collections::BTreeSet::new());
    walk::for_each_dir(root, |d| {
        let steps = d.candidates.iter().filter_map(|c| c.location.step);
        lock(&found).extend(steps);
    });
    let found = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    Ok(found.into_iter().collect())
}

#[cfg(test)]
mod tests {
    use super::RankInfo;

    /// A tree of `n` `.npy` files that are not (one byte each: every one a file problem).
    fn junk_tree(name: &str, n: usize) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("npgx-scan-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in 0..n.div_ceil(100) {
            let sub = dir.join(format!("d{d}"));
            std::fs::create_dir_all(&sub).unwrap();
            for f in 0..100.min(n - d * 100) {
                std::fs::write(sub.join(format!("t{f}.npy")), b"x").unwrap();
            }
        }
        dir
    }

    #[test]
    fn a_cancelled_scan_stops_reading_and_reports_nothing() {
        use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
        use std::sync::Arc;
        let root = junk_tree("cancel", 2000);
        let flag = Arc::new(AtomicBool::new(false));
        let opts = super::ScanOptions {
            threads: Some(2),
            cancel: crate::cancel::Cancel::of(Arc::clone(&flag)),
            ..Default::default()
        };
        // Cancelled after the tenth file: the workers read at most the files they had started.
        let done = AtomicUsize::new(0);
        let r = super::scan(&root, &opts, &|p| {
            if let super::Progress::FileDone = p {
                if done.fetch_add(1, Ordering::Relaxed) + 1 == 10 {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        });
        let Err(e) = r else {
            panic!("a cancelled scan is an error");
        };
        assert!(e.to_string().starts_with("cancelled"), "{e}");
        let read = done.load(Ordering::Relaxed);
        assert!((10..=12).contains(&read), "{read} files read of 2000");
        // Cancelled before it starts: not one file.
        done.store(0, Ordering::Relaxed);
        let r = super::scan(&root, &opts, &|p| {
            if let super::Progress::FileDone = p {
                done.fetch_add(1, Ordering::Relaxed);
            }
        });
        assert!(r.is_err());
        assert_eq!(done.load(Ordering::Relaxed), 0);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn a_scan_of_one_step_reads_only_the_files_of_that_step() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/dump-example");
        assert_eq!(super::steps(&root).unwrap(), vec![0, 1]);
        let opts = super::ScanOptions {
            threads: Some(1),
            step: Some(1),
            ..Default::default()
        };
        let r = super::scan(&root, &opts, &|_| {}).unwrap();
        assert_eq!((r.summary.dump_files, r.summary.tensors), (2, 5));
        assert!(r.groups.iter().all(|g| g.location.step == Some(1)));
        let none = super::ScanOptions {
            step: Some(9),
            ..opts
        };
        let r = super::scan(&root, &none, &|_| {}).unwrap();
        assert!(r.nothing_checked());
    }

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_first_launcher_with_both_variables_wins() {
        let r = RankInfo::from_env(env(&[
            ("RANK", "7"),
            ("SLURM_PROCID", "3"),
            ("SLURM_NTASKS", "4"),
        ]))
        .expect("slurm");
        assert_eq!(
            (r.rank, r.world_size, r.source.as_str()),
            (3, 4, "env:SLURM_PROCID")
        );
        let r = RankInfo::from_env(env(&[("PMI_RANK", "1"), ("PMI_SIZE", "2")])).expect("pmi");
        assert_eq!(r.source, "env:PMI_RANK");
    }

    #[test]
    fn bad_or_missing_ranks_are_errors() {
        let e = RankInfo::from_env(env(&[("RANK", "x"), ("WORLD_SIZE", "2")])).unwrap_err();
        assert!(e.to_string().contains("RANK=\"x\""), "{e}");
        let e = RankInfo::from_env(env(&[("RANK", "2"), ("WORLD_SIZE", "2")])).unwrap_err();
        assert!(e.to_string().contains("not below world size 2"), "{e}");
        let e = RankInfo::from_env(env(&[])).unwrap_err();
        assert!(e.to_string().contains("OMPI_COMM_WORLD_RANK"), "{e}");
    }
}
