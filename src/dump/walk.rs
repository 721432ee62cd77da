//! Finding the files of a dump tree and what each one is.
//!
//! The one directory walker of npgx is `walkdir`: [`tree`] lists in file-name order (repro finds
//! graphs, kernels and dumps through it, merge its shards); the dump walk below is unsorted, as a
//! sorted walkdir reads a whole directory into memory before handing out its first entry. It
//! follows symbolic links (dump trees are
//! often assembled from links to per-rank storage) and visits every real directory once. The
//! root itself is followed when it is a symbolic link (`/home/dump -> /data/dump`), as `find -H`
//! and ripgrep follow command-line paths. Below it, a
//! symbolic link to a directory or file *inside* the tree is skipped (the directory or file is
//! walked under its real path), a directory reached again through links from outside the tree
//! (a "diamond") is skipped silently by its (device, inode), and a link back to one of its own
//! ancestors is reported as a loop. Hard links are separate files. npgx's own temporary files
//! (an output being written, or left by a killed npgx: [`crate::output::is_temp`]) are not seen.
//!
//! Hashed file names are resolved through the `mapping.csv` of their own directory, read when the
//! directory is entered, before any of its files is classified. Files are handed to the caller in
//! batches of at most [`BATCH`] files of one directory, classified when the batch is handed out
//! ([`for_each_dir`]), on the rayon pool while the walk goes on, so a scan holds the batches in
//! flight, never the listing of a whole directory or tree. A directory holding Opdebug overflow
//! payloads (found by a first pass over its names) is handed out whole: pairing a payload with
//! its dump needs all the dumps of its directory at once. Which files come first is not defined
//! (the file system's order): a caller sorts what it reports.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use npgx_parsers::dump::name::{self, FileName, FxGraphName};
use npgx_parsers::dump::path::{self as layout_path, Layout, Location};
use rayon::prelude::*;

use super::records::FileProblem;
use crate::walk::Unreadable;

/// The directory msprobe writes tensor files to, beside dump.json: its files are read through
/// the dump.json, not as files of the tree.
pub const TENSOR_DIR: &str = "dump_tensor_data";

/// A file to read, with everything its name and place in the tree say.
#[derive(Clone, Debug)]
pub struct Candidate {
    pub path: PathBuf,
    /// Path relative to the scan root, `/`-separated.
    pub rel: String,
    /// Relative directory, `/`-separated (pairing Opdebug files works per directory).
    pub dir: String,
    pub name: FileName,
    /// Set when a hashed name was resolved through `mapping.csv`.
    pub mapped_from: Option<String>,
    pub layout: Layout,
    pub location: Location,
}

impl Candidate {
    /// Whether this is an Opdebug overflow payload.
    pub fn is_opdebug(&self) -> bool {
        matches!(&self.name, FileName::Dump(n) if n.is_opdebug())
    }
}

/// Candidate files of one directory: all of them when it holds an Opdebug payload, else one batch.
pub struct DirFiles {
    /// Relative directory, `/`-separated (empty for the root).
    pub dir: String,
    pub candidates: Vec<Candidate>,
    /// Whether any candidate is an Opdebug payload (only then does pairing need an index, and
    /// `candidates` is the whole directory).
    pub has_opdebug: bool,
    /// torchair graph dumps `dynamo_original_graph_*.txt` (GE op → FX node names).
    pub fx_graphs: Vec<(PathBuf, FxGraphName)>,
}

/// What a whole walk found, besides the files handed out.
#[derive(Default)]
pub struct WalkSummary {
    /// Regular files seen (candidates or not).
    pub files_seen: u64,
    pub errors: Vec<FileProblem>,
}

/// What the walk found, all at once ([`walk`]).
pub struct Walk {
    pub candidates: Vec<Candidate>,
    /// torchair graph dumps, sorted by path.
    pub fx_graphs: Vec<(PathBuf, FxGraphName)>,
    pub files_seen: u64,
    pub errors: Vec<FileProblem>,
}

const MAX_MAPPING_BYTES: u64 = 64 << 20;

/// Most files of a directory handed out at once.
pub const BATCH: usize = 256;

fn rel_string(root: &Path, p: &Path) -> String {
    let rel = p.strip_prefix(root).unwrap_or(p);
    let s: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if s.is_empty() {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    } else {
        s.join("/")
    }
}

struct Ctx<'a> {
    root: &'a Path,
    root_name: Option<String>,
    /// The canonical root, to tell links to files inside the tree from links out of it.
    canonical_root: Option<PathBuf>,
}

impl Ctx<'_> {
    fn error(&self, p: &Path, message: String) -> FileProblem {
        FileProblem {
            path: rel_string(self.root, p),
            message,
            offset: None,
        }
    }

    /// Whether `link` (a symbolic link to a file) points into the tree, where the walk reaches
    /// the file under its real path.
    fn links_inside(&self, link: &Path) -> bool {
        let (Some(root), Ok(target)) = (&self.canonical_root, std::fs::canonicalize(link)) else {
            return false;
        };
        target.starts_with(root)
    }

    /// A directory's `mapping.csv` (hashed file name → dump name); a problem with it is an error
    /// in `errors`.
    fn mapping(&self, f: &Path, errors: &mut Vec<FileProblem>) -> HashMap<String, String> {
        let text = std::fs::metadata(f)
            .map_err(|e| e.to_string())
            .and_then(|m| {
                if m.len() > MAX_MAPPING_BYTES {
                    Err(format!("{} bytes is too large for a mapping.csv", m.len()))
                } else {
                    std::fs::read(f).map_err(|e| e.to_string())
                }
            });
        match text {
            Ok(bytes) => npgx_parsers::dump::mapping::parse(&String::from_utf8_lossy(&bytes))
                .into_iter()
                .collect(),
            Err(e) => {
                errors.push(self.error(f, format!("cannot read: {e}")));
                HashMap::new()
            }
        }
    }

    /// What a directory's place in the tree and its `mapping.csv` say about all its files, read
    /// when the walk enters it. `single`: the root is one file, in `dir_path`.
    fn dir_info(&self, dir_path: &Path, single: bool, errors: &mut Vec<FileProblem>) -> DirInfo {
        // The walk's rule for files: a regular file (through links), not a link to a file the
        // walk reaches under its real path.
        let listed = |f: &Path| {
            std::fs::metadata(f).is_ok_and(|m| m.is_file())
                && !(f.is_symlink() && self.links_inside(f))
        };
        let mapping_csv = if single {
            Some(self.root.to_path_buf())
                .filter(|f| f.file_name().is_some_and(|n| n == "mapping.csv"))
        } else {
            Some(dir_path.join("mapping.csv")).filter(|f| listed(f))
        };
        let mapping = mapping_csv.map_or_else(HashMap::new, |f| self.mapping(&f, errors));
        let dir = if single || dir_path == self.root {
            String::new()
        } else {
            rel_string(self.root, dir_path)
        };
        // Layout components: the root's own name and the directories below it, so the root may
        // be any level of the tree; a single-file root uses its whole directory path.
        let comps: Vec<String> = if single {
            dir_path
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect()
        } else {
            self.root_name
                .iter()
                .cloned()
                .chain(dir.split('/').filter(|s| !s.is_empty()).map(str::to_string))
                .collect()
        };
        let (layout, location) = layout_path::locate(&comps);
        // msprobe's tensor files are read through the dump.json beside their directory.
        let msprobe_data = dir_path.file_name().is_some_and(|n| n == TENSOR_DIR)
            && dir_path
                .parent()
                .is_some_and(|p| p.join("dump.json").is_file());
        // A first pass over the names alone (no file is opened): does any look like a payload?
        let has_opdebug = !single
            && !msprobe_data
            && std::fs::read_dir(dir_path).is_ok_and(|entries| {
                entries.flatten().any(|e| {
                    let name = e.file_name();
                    let name = name.to_string_lossy();
                    let name = mapping
                        .get(name.as_ref())
                        .map_or(name.as_ref(), String::as_str);
                    name.starts_with("Opdebug.")
                        && matches!(name::classify(name), FileName::Dump(n) if n.is_opdebug())
                })
            });
        DirInfo {
            path: dir_path.to_path_buf(),
            dir,
            mapping,
            layout,
            location,
            msprobe_data,
            has_opdebug,
        }
    }

    /// The candidates among `files` of the directory `info`.
    fn candidates(&self, info: &DirInfo, files: &[PathBuf]) -> DirFiles {
        let fx_graphs = files
            .iter()
            .filter_map(|path| {
                let n = name::parse_fx_graph_name(&path.file_name()?.to_string_lossy())?;
                Some((path.clone(), n))
            })
            .collect();
        let candidates: Vec<Candidate> = files
            .iter()
            .filter_map(|path| {
                let file_name = path.file_name()?.to_string_lossy().into_owned();
                let mut name = name::classify(&file_name);
                let mut mapped_from = None;
                if name == FileName::Hashed {
                    if let Some(real) = info.mapping.get(&file_name) {
                        name = name::classify(real);
                        mapped_from = Some(real.clone());
                    }
                }
                if matches!(name, FileName::Other | FileName::Mapping) || info.msprobe_data {
                    return None;
                }
                let mut location = info.location.clone();
                let mut layout = info.layout;
                if name == FileName::MsprobeDump {
                    // The whole path: the step directory may lie above the scan root.
                    let dirs: Vec<String> = info
                        .path
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    let (rank, step) = npgx_parsers::msprobe::locate(&dirs);
                    layout = Layout::Msprobe;
                    location = Location {
                        rank,
                        step,
                        ..Location::default()
                    };
                }
                // npugraph_ex names carry the device the directory does not.
                if let FileName::Pt {
                    device: Some(d), ..
                } = name
                {
                    location.device = location.device.or(Some(d));
                }
                Some(Candidate {
                    rel: rel_string(self.root, path),
                    path: path.clone(),
                    dir: info.dir.clone(),
                    name,
                    mapped_from,
                    layout,
                    location,
                })
            })
            .collect();
        DirFiles {
            has_opdebug: candidates.iter().any(Candidate::is_opdebug),
            dir: info.dir.clone(),
            candidates,
            fx_graphs,
        }
    }
}

/// What is common to the files of one directory.
struct DirInfo {
    path: PathBuf,
    /// Relative directory, `/`-separated (empty for the root).
    dir: String,
    /// Its `mapping.csv`: hashed file name → dump name.
    mapping: HashMap<String, String>,
    layout: Layout,
    location: Location,
    /// Tensor files of an msprobe dump, read through the `dump.json` beside the directory.
    msprobe_data: bool,
    /// Whether a file name is an Opdebug payload's: the directory is then handed out whole.
    has_opdebug: bool,
}

/// One directory being walked: its depth and the files found in it and not yet handed out.
struct Open {
    depth: usize,
    info: Arc<DirInfo>,
    files: Vec<PathBuf>,
}

/// The directories of a tree with their files, in batches of [`BATCH`] files, the last batch of
/// a directory once it is complete (walkdir goes depth first and may list a directory's files
/// after some of its subdirectories); a directory with an Opdebug payload in one batch.
struct Dirs<'a> {
    ctx: &'a Ctx<'a>,
    it: walkdir::IntoIter,
    /// An entry read while a finished directory was handed out, to be taken next.
    pending: Option<walkdir::DirEntry>,
    open: Vec<Open>,
    /// Files per batch.
    batch: usize,
    visited: HashSet<(u64, u64)>,
    files_seen: &'a AtomicU64,
    errors: &'a Mutex<Vec<FileProblem>>,
}

impl Dirs<'_> {
    fn push_error(&self, err: FileProblem) {
        self.errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(err);
    }

    fn walk_error(&self, e: &walkdir::Error) {
        let u = Unreadable::of(Path::new(""), e);
        self.push_error(self.ctx.error(&u.path, u.message));
    }

    /// Records one entry: a directory is opened (unless it is reached through a link inside the
    /// tree or was seen before), a file joins its directory.
    fn take(&mut self, entry: walkdir::DirEntry) {
        // The root is walked whatever it is a link to; only links below it can be "inside".
        let link = entry.depth() > 0 && entry.path_is_symlink();
        if entry.file_type().is_dir() {
            let id = match entry.metadata() {
                Ok(m) => (m.dev(), m.ino()),
                Err(e) => {
                    self.walk_error(&e);
                    self.it.skip_current_dir();
                    return;
                }
            };
            if (link && self.ctx.links_inside(entry.path())) || !self.visited.insert(id) {
                self.it.skip_current_dir();
                return;
            }
            let mut errors = Vec::new();
            let info = self.ctx.dir_info(entry.path(), false, &mut errors);
            for e in errors {
                self.push_error(e);
            }
            self.open.push(Open {
                depth: entry.depth(),
                info: Arc::new(info),
                files: Vec::new(),
            });
        } else if entry.file_type().is_file()
            && !(link && self.ctx.links_inside(entry.path()))
            // An npgx output still being written, or left by a killed npgx.
            && !crate::output::is_temp(entry.file_name())
        {
            self.files_seen.fetch_add(1, Ordering::Relaxed);
            if let Some(dir) = self.open.last_mut() {
                dir.files.push(entry.into_path());
            }
        }
    }
}

impl Iterator for Dirs<'_> {
    type Item = (Arc<DirInfo>, Vec<PathBuf>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.pending.take().map(Ok).or_else(|| self.it.next()) {
                None => return self.open.pop().map(|o| (o.info, o.files)),
                Some(Err(e)) => {
                    self.walk_error(&e);
                    continue;
                }
                Some(Ok(entry)) => entry,
            };
            // Directories at this depth or deeper are complete: hand out the deepest first.
            if self.open.last().is_some_and(|o| o.depth >= entry.depth()) {
                self.pending = Some(entry);
                return self.open.pop().map(|o| (o.info, o.files));
            }
            self.take(entry);
            if let Some(o) = self.open.last_mut() {
                if o.files.len() >= self.batch && !o.info.has_opdebug {
                    let files = std::mem::replace(&mut o.files, Vec::with_capacity(self.batch));
                    return Some((o.info.clone(), files));
                }
            }
        }
    }
}

/// Walks `root` (a directory or a single file) and calls `visit` with each directory's
/// candidates from the current rayon pool's threads, several directories at a time, while the
/// walk goes on. Every problem met on the way (unreadable directory, dangling link, loop) is in
/// the returned summary's errors, sorted by path.
pub fn for_each_dir(root: &Path, visit: impl Fn(DirFiles) + Sync) -> WalkSummary {
    for_each_batch(root, BATCH, visit)
}

/// [`for_each_dir`] with at most `batch` files a batch.
fn for_each_batch(root: &Path, batch: usize, visit: impl Fn(DirFiles) + Sync) -> WalkSummary {
    let canonical_root = std::fs::canonicalize(root).ok();
    // A root that is a link is named by its target for the layout (`rank0 ->
    // …/worldsize8_global_rank0` keeps its rank level); paths stay relative to the link.
    let named = match &canonical_root {
        Some(c) if root.is_symlink() => c.as_path(),
        _ => root,
    };
    let ctx = Ctx {
        root,
        root_name: named.file_name().map(|n| n.to_string_lossy().into_owned()),
        canonical_root,
    };
    let mut summary = WalkSummary::default();
    let root_meta = match std::fs::metadata(root) {
        Ok(m) => m,
        Err(e) => {
            summary.errors.push(FileProblem {
                path: root.display().to_string(),
                message: format!("cannot read: {e}"),
                offset: None,
            });
            return summary;
        }
    };
    if !root_meta.is_dir() {
        let dir_path = root.parent().map(Path::to_path_buf).unwrap_or_default();
        let files = [root.to_path_buf()];
        summary.files_seen = 1;
        let info = ctx.dir_info(&dir_path, true, &mut summary.errors);
        visit(ctx.candidates(&info, &files));
        return summary;
    }
    let errors = Mutex::new(Vec::new());
    let files_seen = AtomicU64::new(0);
    let dirs = Dirs {
        ctx: &ctx,
        // Unsorted: a sorted walkdir lists a whole directory before its first entry.
        it: crate::walk::streaming(root).into_iter(),
        pending: None,
        open: Vec::new(),
        batch,
        visited: HashSet::new(),
        files_seen: &files_seen,
        errors: &errors,
    };
    dirs.par_bridge().for_each(|(info, files)| {
        let d = ctx.candidates(&info, &files);
        drop(files);
        visit(d);
    });
    summary.files_seen = files_seen.into_inner();
    summary.errors = errors
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    summary.errors.sort_by(|a, b| a.path.cmp(&b.path));
    summary
}

/// Walks `root` and returns every candidate at once, sorted by path (for callers that need the
/// whole list; a scan uses [`for_each_dir`]).
pub fn walk(root: &Path) -> Walk {
    let found = std::sync::Mutex::new((Vec::new(), Vec::new()));
    let summary = for_each_dir(root, |d| {
        let mut found = found
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        found.0.extend(d.candidates);
        found.1.extend(d.fx_graphs);
    });
    let (mut candidates, mut fx_graphs) = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    candidates.sort_by(|a, b| a.path.cmp(&b.path));
    fx_graphs.sort_by(|a, b| a.0.cmp(&b.0));
    Walk {
        candidates,
        fx_graphs,
        files_seen: summary.files_seen,
        errors: summary.errors,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory of `n` GE dump names, a hashed name resolved by its `mapping.csv`, and a
    /// directory with an Opdebug payload.
    fn tree(n: usize) -> PathBuf {
        let root = std::env::temp_dir().join(format!("npgx-walk-{}-{n}", std::process::id()));
        let big = root.join("big");
        let over = root.join("over");
        for d in [&big, &over] {
            std::fs::create_dir_all(d).expect("dir");
        }
        for i in 0..n {
            std::fs::write(
                big.join(format!("Add.op_{i}.{i}.1.{}", 1_700_000_000_000_000 + i)),
                b"",
            )
            .expect("file");
        }
        std::fs::write(big.join("12345"), b"").expect("hashed");
        std::fs::write(
            big.join("mapping.csv"),
            b"12345,Mul.mapped.9.1.1700000000000009\n",
        )
        .expect("mapping");
        for i in 0..3 {
            std::fs::write(
                over.join(format!("Add.x_{i}.{i}.1.170000000000000{i}")),
                b"",
            )
            .expect("file");
        }
        std::fs::write(over.join("Opdebug.Node_OpDebug.7.1.1700000000000007"), b"")
            .expect("payload");
        root
    }

    #[test]
    fn directories_come_in_batches_and_payload_directories_whole() {
        let root = tree(7);
        let seen = Mutex::new(Vec::new());
        let summary = for_each_batch(&root, 2, |d| {
            let names: Vec<String> = d.candidates.iter().map(|c| c.rel.clone()).collect();
            let mapped: Vec<Option<String>> =
                d.candidates.iter().map(|c| c.mapped_from.clone()).collect();
            seen.lock()
                .expect("lock")
                .push((d.dir, d.has_opdebug, names, mapped));
        });
        std::fs::remove_dir_all(&root).expect("cleanup");
        let seen = seen.into_inner().expect("lock");
        // big: 7 dumps + the hashed one + mapping.csv = 9 files, at most 2 a batch.
        let big: Vec<_> = seen.iter().filter(|b| b.0 == "big").collect();
        assert!(big.iter().all(|b| b.2.len() <= 2 && !b.1), "{big:?}");
        let mut files: Vec<&String> = big.iter().flat_map(|b| &b.2).collect();
        files.sort();
        files.dedup();
        assert_eq!(files.len(), 8, "{files:?}");
        assert!(big
            .iter()
            .flat_map(|b| &b.3)
            .any(|m| m.as_deref() == Some("Mul.mapped.9.1.1700000000000009")));
        // over: its four files at once, the payload among them.
        let over: Vec<_> = seen
            .iter()
            .filter(|b| b.0 == "over" && !b.2.is_empty())
            .collect();
        assert_eq!(over.len(), 1, "{over:?}");
        assert!(over[0].1);
        assert_eq!(over[0].2.len(), 4);
        assert_eq!(summary.files_seen, 13);
        assert!(summary.errors.is_empty(), "{:?}", summary.errors.len());
    }
}
