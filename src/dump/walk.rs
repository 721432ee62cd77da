//! Finding the files of a dump tree and what each one is.
//!
//! The walk follows symbolic links (dump trees are often assembled from links to per-rank
//! storage) and visits every real directory once: it goes breadth first, level by level, lists
//! the directories of a level in parallel, and then claims their subdirectories in name order by
//! (device, inode). A directory reached again — a second link to it (a "diamond") — is skipped
//! silently; a link back to one of its own ancestors is reported as a loop. So each directory is
//! scanned under its shallowest path, the first in name order among equals, whatever the thread
//! timing. A symbolic link to a file inside the tree is skipped too (the file is scanned under
//! its real path); hard links are separate files.
//!
//! Hashed file names are resolved through the `mapping.csv` of their own directory before the
//! file is classified. Directories are handed to the caller one at a time with their candidate
//! files ([`for_each_dir`]), so a scan holds the listing of the directories in flight, never a
//! list of every file of the tree.

use std::collections::{HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

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

type Id = (u64, u64);

/// A subdirectory found while listing: its path, its id and the ids above it.
type Found = (PathBuf, Id, Vec<Id>);

/// A directory to list, with the (device, inode) of it and of every directory above it.
struct Pending {
    path: PathBuf,
    ancestors: Vec<Id>,
}

/// One listed directory: its files (sorted) and its subdirectories.
struct Listing {
    path: PathBuf,
    files: Vec<PathBuf>,
    subdirs: Vec<(PathBuf, Id)>,
    ancestors: Vec<Id>,
    errors: Vec<ScanError>,
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

    fn list(&self, p: Pending) -> Listing {
        let mut out = Listing {
            path: p.path,
            files: Vec::new(),
            subdirs: Vec::new(),
            ancestors: p.ancestors,
            errors: Vec::new(),
        };
        let entries = match std::fs::read_dir(&out.path) {
            Ok(e) => e,
            Err(e) => {
                out.errors
                    .push(self.error(&out.path, format!("cannot read directory: {e}")));
                return out;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    out.errors
                        .push(self.error(&out.path, format!("cannot read directory: {e}")));
                    continue;
                }
            };
            let path = entry.path();
            let is_link = entry.file_type().is_ok_and(|t| t.is_symlink());
            // Follows symbolic links; a dangling link is an error, not a file.
            match std::fs::metadata(&path) {
                Ok(m) if m.is_dir() => out.subdirs.push((path, (m.dev(), m.ino()))),
                Ok(m) if m.is_file() => {
                    if !(is_link && self.links_inside(&path)) {
                        out.files.push(path);
                    }
                }
                Ok(_) => {}
                Err(e) => out
                    .errors
                    .push(self.error(&path, format!("cannot read: {e}"))),
            }
        }
        out.files.sort();
        out.subdirs.sort();
        out
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
                if matches!(name, FileName::Other | FileName::Mapping) {
                    return None;
                }
                let mut location = location.clone();
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

/// Walks `root` (a directory or a single file) on the current rayon pool and calls `visit` with
/// each directory's candidates, from pool threads, several directories at a time. Every
/// problem met on the way (unreadable directory, dangling link, loop) is in the returned
/// summary's errors, sorted by path.
pub fn for_each_dir(root: &Path, visit: impl Fn(DirFiles) + Sync) -> WalkSummary {
    let ctx = Ctx {
        root,
        root_name: root.file_name().map(|n| n.to_string_lossy().into_owned()),
        canonical_root: std::fs::canonicalize(root).ok(),
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
    let root_id = (root_meta.dev(), root_meta.ino());
    let mut visited: HashSet<Id> = HashSet::from([root_id]);
    let mut level = vec![Pending {
        path: root.to_path_buf(),
        ancestors: vec![root_id],
    }];
    while !level.is_empty() {
        let results: Vec<(Vec<Found>, u64, Vec<ScanError>)> = level
            .into_par_iter()
            .map(|p| {
                let listing = ctx.list(p);
                let mut errors = listing.errors;
                let seen = listing.files.len() as u64;
                let d = ctx.candidates(&listing.path, &listing.files, &mut errors);
                drop(listing.files);
                visit(d);
                let subdirs = listing
                    .subdirs
                    .into_iter()
                    .map(|(path, id)| (path, id, listing.ancestors.clone()))
                    .collect();
                (subdirs, seen, errors)
            })
            .collect();
        let mut next: Vec<Found> = Vec::new();
        for (subdirs, seen, errors) in results {
            summary.files_seen += seen;
            summary.errors.extend(errors);
            next.extend(subdirs);
        }
        next.sort_by(|a, b| a.0.cmp(&b.0));
        level = Vec::new();
        for (path, id, mut ancestors) in next {
            if ancestors.contains(&id) {
                summary.errors.push(ctx.error(
                    &path,
                    "symbolic link loop back to an enclosing directory: not followed".into(),
                ));
            } else if visited.insert(id) {
                ancestors.push(id);
                level.push(Pending { path, ancestors });
            }
        }
    }
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
