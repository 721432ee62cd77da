//! Finding the files of a dump tree and what each one is.
//!
//! The walk follows symbolic links (dump trees are often assembled from links to per-rank
//! storage) and reports loops and unreadable directories as errors instead of stopping. Hashed
//! file names are resolved through the `mapping.csv` of their own directory before the file is
//! classified.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use npgx_parsers::dump::name::{self, FileName};
use npgx_parsers::dump::path::{self as layout_path, Layout, Location};

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

/// What the walk found.
pub struct Walk {
    pub candidates: Vec<Candidate>,
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

/// Lists the files below `dir` in parallel (one task per directory), following symbolic links.
/// `ancestors` holds the (device, inode) of every directory on the way down, so a link back to
/// one of them is reported as a loop instead of being followed forever.
fn list(root: &Path, dir: &Path, ancestors: &[(u64, u64)]) -> (Vec<PathBuf>, Vec<ScanError>) {
    use rayon::prelude::*;
    use std::os::unix::fs::MetadataExt;

    let error = |p: &Path, message: String| ScanError {
        path: rel_string(root, p),
        message,
        offset: None,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            return (
                Vec::new(),
                vec![error(dir, format!("cannot read directory: {e}"))],
            )
        }
    };
    let mut files = Vec::new();
    let mut errors = Vec::new();
    let mut subdirs = Vec::new();
    for entry in entries {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                errors.push(error(dir, format!("cannot read directory: {e}")));
                continue;
            }
        };
        let path = entry.path();
        // Follows symbolic links; a dangling link is an error, not a file.
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let id = (m.dev(), m.ino());
                if ancestors.contains(&id) {
                    errors.push(error(
                        &path,
                        "symbolic link loop back to an enclosing directory: not followed".into(),
                    ));
                } else {
                    subdirs.push((path, id));
                }
            }
            Ok(m) if m.is_file() => files.push(path),
            Ok(_) => {}
            Err(e) => errors.push(error(&path, format!("cannot read: {e}"))),
        }
    }
    let below: Vec<(Vec<PathBuf>, Vec<ScanError>)> = subdirs
        .par_iter()
        .map(|(p, id)| {
            let mut chain = ancestors.to_vec();
            chain.push(*id);
            list(root, p, &chain)
        })
        .collect();
    for (f, e) in below {
        files.extend(f);
        errors.extend(e);
    }
    (files, errors)
}

/// Walks `root` (a directory or a single file). Runs on the current rayon pool.
pub fn walk(root: &Path) -> Walk {
    use std::os::unix::fs::MetadataExt;

    let (mut files, mut errors) = match std::fs::metadata(root) {
        Ok(m) if m.is_dir() => list(root, root, &[(m.dev(), m.ino())]),
        Ok(_) => (vec![root.to_path_buf()], Vec::new()),
        Err(e) => (
            Vec::new(),
            vec![ScanError {
                path: root.display().to_string(),
                message: format!("cannot read: {e}"),
                offset: None,
            }],
        ),
    };
    files.sort();
    errors.sort_by(|a, b| a.path.cmp(&b.path));
    // mapping.csv per directory
    let mut mappings: HashMap<PathBuf, HashMap<String, String>> = HashMap::new();
    for f in files
        .iter()
        .filter(|f| f.file_name().is_some_and(|n| n == "mapping.csv"))
    {
        let dir = f.parent().map(Path::to_path_buf).unwrap_or_default();
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
            Ok(bytes) => {
                let pairs = npgx_parsers::dump::mapping::parse(&String::from_utf8_lossy(&bytes));
                mappings.entry(dir).or_default().extend(pairs);
            }
            Err(e) => errors.push(ScanError {
                path: rel_string(root, f),
                message: format!("cannot read: {e}"),
                offset: None,
            }),
        }
    }
    let root_name = root.file_name().map(|n| n.to_string_lossy().into_owned());
    let files_seen = files.len() as u64;
    let candidates = files
        .into_iter()
        .filter_map(|path| {
            let file_name = path.file_name()?.to_string_lossy().into_owned();
            let dir_path = path.parent().map(Path::to_path_buf).unwrap_or_default();
            let mut name = name::classify(&file_name);
            let mut mapped_from = None;
            if name == FileName::Hashed {
                if let Some(real) = mappings.get(&dir_path).and_then(|m| m.get(&file_name)) {
                    name = name::classify(real);
                    mapped_from = Some(real.clone());
                }
            }
            if matches!(name, FileName::Other | FileName::Mapping) {
                return None;
            }
            let dir = if path == root {
                String::new()
            } else {
                rel_string(root, &dir_path)
            };
            // Layout components: the root's own name and the directories below it, so the root
            // may be any level of the tree; a single-file root uses its whole directory path.
            let comps: Vec<String> = if path == root {
                dir_path
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect()
            } else {
                root_name
                    .iter()
                    .cloned()
                    .chain(dir.split('/').filter(|s| !s.is_empty()).map(str::to_string))
                    .collect()
            };
            let (layout, mut location) = layout_path::locate(&comps);
            // npugraph_ex names carry the device the directory does not.
            if let FileName::Pt {
                device: Some(d), ..
            } = name
            {
                location.device = location.device.or(Some(d));
            }
            Some(Candidate {
                rel: rel_string(root, &path),
                path,
                dir,
                name,
                mapped_from,
                layout,
                location,
            })
        })
        .collect();
    Walk {
        candidates,
        files_seen,
        errors,
    }
}
