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

/// Walks `root` (a directory or a single file).
pub fn walk(root: &Path) -> Walk {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for entry in walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
    {
        match entry {
            Ok(e) if e.file_type().is_file() => files.push(e.into_path()),
            Ok(_) => {}
            Err(err) => {
                let path = err.path().map(|p| rel_string(root, p)).unwrap_or_default();
                let message = match err.loop_ancestor() {
                    Some(a) => format!(
                        "symbolic link loop back to {} — not followed",
                        rel_string(root, a)
                    ),
                    None => err
                        .io_error()
                        .map_or_else(|| err.to_string(), |io| format!("cannot read: {io}")),
                };
                errors.push(ScanError {
                    path,
                    message,
                    offset: None,
                });
            }
        }
    }
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
