//! Finding the files of a dump tree and what each one is.
//!
//! The one directory walker of npgx is `walkdir`, configured by [`tree`] (repro finds graphs,
//! kernels and dumps through it too). The dump walk follows symbolic links (dump trees are
//! often assembled from links to per-rank storage) and visits every real directory once. The
//! root itself is followed when it is a symbolic link (`/home/dump -> /data/dump`), as `find -H`
//! and ripgrep follow command-line paths. Below it, a
//! symbolic link to a directory or file *inside* the tree is skipped (the directory or file is
//! walked under its real path), a directory reached again through links from outside the tree
//! (a "diamond") is skipped silently by its (device, inode), and a link back to one of its own
//! ancestors is reported as a loop. Hard links are separate files. npgx's own temporary files
//! (an output being written, or left by a killed npgx: [`crate::output::is_temp`]) are not seen.
//!
//! Hashed file names are resolved through the `mapping.csv` of their own directory before the
//! file is classified. Directories are handed to the caller one at a time with their candidate
//! files ([`for_each_dir`]), on the rayon pool while the walk goes on, so a scan holds the
//! listing of the directories in flight, never a list of every file of the tree.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use npgx_parsers::dump::name::{self, FileName, FxGraphName};
use npgx_parsers::dump::path::{self as layout_path, Layout, Location};
use rayon::prelude::*;

use super::records::ScanError;

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

/// One directory's candidate files.
pub struct DirFiles {
    /// Relative directory, `/`-separated (empty for the root).
    pub dir: String,
    pub candidates: Vec<Candidate>,
    /// Whether any candidate is an Opdebug payload (only then does pairing need an index).
    pub has_opdebug: bool,
    /// torchair graph dumps `dynamo_original_graph_*.txt` (GE op → FX node names).
    pub fx_graphs: Vec<(PathBuf, FxGraphName)>,
}

/// What a whole walk found, besides the files handed out.
#[derive(Default)]
pub struct WalkSummary {
    /// Regular files seen (candidates or not).
    pub files_seen: u64,
    pub errors: Vec<ScanError>,
}

/// What the walk found, all at once ([`walk`]).
pub struct Walk {
    pub candidates: Vec<Candidate>,
    /// torchair graph dumps, sorted by path.
    pub fx_graphs: Vec<(PathBuf, FxGraphName)>,
    pub files_seen: u64,
    pub errors: Vec<ScanError>,
}

const MAX_MAPPING_BYTES: u64 = 64 << 20;

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
    fn error(&self, p: &Path, message: String) -> ScanError {
        ScanError {
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

    /// The candidates of one listed directory.
    fn candidates(
        &self,
        dir_path: &Path,
        files: &[PathBuf],
        errors: &mut Vec<ScanError>,
    ) -> DirFiles {
        let mut mapping: HashMap<String, String> = HashMap::new();
        for f in files
            .iter()
            .filter(|f| f.file_name().is_some_and(|n| n == "mapping.csv"))
        {
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
                Ok(bytes) => mapping.extend(npgx_parsers::dump::mapping::parse(
                    &String::from_utf8_lossy(&bytes),
                )),
                Err(e) => errors.push(self.error(f, format!("cannot read: {e}"))),
            }
        }
        let single = files.len() == 1 && files[0] == self.root;
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
        let msprobe_data = dir_path
            .file_name()
            .is_some_and(|n| n == super::msprobe::TENSOR_DIR)
            && dir_path
                .parent()
                .is_some_and(|p| p.join("dump.json").is_file());
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
                    if let Some(real) = mapping.get(&file_name) {
                        name = name::classify(real);
                        mapped_from = Some(real.clone());
                    }
                }
                if matches!(name, FileName::Other | FileName::Mapping) || msprobe_data {
                    return None;
                }
                let mut location = location.clone();
                let mut layout = layout;
                if name == FileName::MsprobeDump {
                    // The whole path: the step directory may lie above the scan root.
                    let dirs: Vec<String> = dir_path
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
                    dir: dir.clone(),
                    name,
                    mapped_from,
                    layout,
                    location,
                })
            })
            .collect();
        DirFiles {
            has_opdebug: candidates.iter().any(Candidate::is_opdebug),
            dir,
            candidates,
            fx_graphs,
        }
    }
}

/// The one directory walker: `walkdir` over `root`, entries in file-name order.
pub fn tree(root: &Path) -> walkdir::WalkDir {
    walkdir::WalkDir::new(root).sort_by_file_name()
}

/// One directory being walked: its depth and the files found in it so far.
struct Open {
    depth: usize,
    path: PathBuf,
    files: Vec<PathBuf>,
}

/// The directories of a tree with their files, each handed out once complete (walkdir goes depth
/// first and may list a directory's files after some of its subdirectories).
struct Dirs<'a> {
    ctx: &'a Ctx<'a>,
    it: walkdir::IntoIter,
    /// An entry read while a finished directory was handed out, to be taken next.
    pending: Option<walkdir::DirEntry>,
    open: Vec<Open>,
    visited: HashSet<(u64, u64)>,
    files_seen: &'a AtomicU64,
    errors: &'a Mutex<Vec<ScanError>>,
}

impl Dirs<'_> {
    fn push_error(&self, err: ScanError) {
        self.errors
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(err);
    }

    fn walk_error(&self, e: &walkdir::Error) {
        let path = e.path().map(Path::to_path_buf).unwrap_or_default();
        let message = match (e.loop_ancestor(), e.io_error()) {
            (Some(_), _) => {
                "symbolic link loop back to an enclosing directory: not followed".to_string()
            }
            (None, Some(io)) => format!("cannot read: {io}"),
            (None, None) => format!("cannot read: {e}"),
        };
        self.push_error(self.ctx.error(&path, message));
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
            self.open.push(Open {
                depth: entry.depth(),
                path: entry.into_path(),
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
    type Item = (PathBuf, Vec<PathBuf>);

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let entry = match self.pending.take().map(Ok).or_else(|| self.it.next()) {
                None => return self.open.pop().map(|o| (o.path, o.files)),
                Some(Err(e)) => {
                    self.walk_error(&e);
                    continue;
                }
                Some(Ok(entry)) => entry,
            };
            // Directories at this depth or deeper are complete: hand out the deepest first.
            if self.open.last().is_some_and(|o| o.depth >= entry.depth()) {
                self.pending = Some(entry);
                return self.open.pop().map(|o| (o.path, o.files));
            }
            self.take(entry);
        }
    }
}

/// Walks `root` (a directory or a single file) and calls `visit` with each directory's
/// candidates from the current rayon pool's threads, several directories at a time, while the
/// walk goes on. Every problem met on the way (unreadable directory, dangling link, loop) is in
/// the returned summary's errors, sorted by path.
pub fn for_each_dir(root: &Path, visit: impl Fn(DirFiles) + Sync) -> WalkSummary {
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
            summary.errors.push(ScanError {
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
        let d = ctx.candidates(&dir_path, &files, &mut summary.errors);
        visit(d);
        return summary;
    }
    let errors = Mutex::new(Vec::new());
    let files_seen = AtomicU64::new(0);
    let dirs = Dirs {
        ctx: &ctx,
        it: tree(root).follow_links(true).into_iter(),
        pending: None,
        open: Vec::new(),
        visited: HashSet::new(),
        files_seen: &files_seen,
        errors: &errors,
    };
    dirs.par_bridge().for_each(|(path, files)| {
        let mut errs = Vec::new();
        let d = ctx.candidates(&path, &files, &mut errs);
        drop(files);
        visit(d);
        if !errs.is_empty() {
            errors
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .extend(errs);
        }
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
