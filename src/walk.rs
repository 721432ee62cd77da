//! The one directory walker of npgx: `walkdir` configured once, for every command that looks
//! through a directory (the dump-tree walk of [`crate::dump::walk`], plog discovery, repro's
//! search for graphs, kernels and dumps, the triage's step directories, merge's shard
//! directories).
//!
//! One rule for links and for problems everywhere: symbolic links are followed (dump trees and
//! log collections are often assembled from links to per-rank storage), a link back to an
//! enclosing directory is reported as a loop and not followed, and every entry that cannot be
//! read (an unreadable directory, a dangling link, a loop) is handed to the caller with its
//! path — none is dropped here. A caller without a channel for warnings says so where it calls.

use std::path::{Path, PathBuf};

/// `walkdir` over `root` with the rule above, entries in file-name order (a sorted walk reads a
/// whole directory before it yields the directory's first entry).
pub fn sorted(root: &Path) -> walkdir::WalkDir {
    streaming(root).sort_by_file_name()
}

/// The same walk in the order the file system lists entries: each entry as soon as it is read,
/// for walks that hand directories to workers while they go on.
pub fn streaming(root: &Path) -> walkdir::WalkDir {
    walkdir::WalkDir::new(root).follow_links(true)
}

/// A walk entry that could not be read: the path it concerns and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unreadable {
    pub path: PathBuf,
    pub message: String,
}

impl Unreadable {
    /// The problem of a walk error (its path, or `root` when it names none).
    pub fn of(root: &Path, err: &walkdir::Error) -> Unreadable {
        let path = err.path().unwrap_or(root).to_path_buf();
        let message = match (err.loop_ancestor(), err.io_error()) {
            (Some(_), _) => {
                "symbolic link loop back to an enclosing directory: not followed".to_string()
            }
            (None, Some(io)) => format!("cannot read: {io}"),
            (None, None) => format!("cannot read: {err}"),
        };
        Unreadable { path, message }
    }
}

/// Regular files (through links) below `root`, at most `max_depth` directory levels down
/// (`usize::MAX`: no limit), in file-name order; a `root` that is a file is itself. Every
/// unreadable entry goes to `problem`.
pub fn files<'a>(
    root: &'a Path,
    max_depth: usize,
    problem: impl FnMut(Unreadable) + 'a,
) -> impl Iterator<Item = PathBuf> + 'a {
    entries(root, max_depth.saturating_add(1), problem)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
}

/// Directories (through links) below `root`, `root` included, at most `max_depth` levels down,
/// in file-name order. Every unreadable entry goes to `problem`.
pub fn dirs<'a>(
    root: &'a Path,
    max_depth: usize,
    problem: impl FnMut(Unreadable) + 'a,
) -> impl Iterator<Item = PathBuf> + 'a {
    entries(root, max_depth, problem)
        .filter(|e| e.file_type().is_dir())
        .map(walkdir::DirEntry::into_path)
}

fn entries<'a>(
    root: &'a Path,
    max_depth: usize,
    mut problem: impl FnMut(Unreadable) + 'a,
) -> impl Iterator<Item = walkdir::DirEntry> + 'a {
    sorted(root)
        .max_depth(max_depth)
        .into_iter()
        .filter_map(move |e| match e {
            Ok(e) => Some(e),
            Err(err) => {
                problem(Unreadable::of(root, &err));
                None
            }
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("npgx-walk-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("scratch dir");
        d
    }

    #[test]
    fn files_follow_links_in_name_order_and_report_loops_and_dangling_links() {
        let d = scratch("files");
        let real = d.join("real");
        std::fs::create_dir_all(real.join("sub")).expect("mkdir");
        std::fs::write(real.join("b.log"), "b").expect("write");
        std::fs::write(real.join("sub/a.log"), "a").expect("write");
        let root = d.join("root");
        std::fs::create_dir_all(&root).expect("mkdir");
        std::os::unix::fs::symlink(&real, root.join("linked")).expect("symlink");
        std::os::unix::fs::symlink(&root, root.join("loop")).expect("symlink");
        std::os::unix::fs::symlink(d.join("gone"), root.join("dangling")).expect("symlink");
        let mut problems = Vec::new();
        let found: Vec<PathBuf> = files(&root, usize::MAX, |p| problems.push(p)).collect();
        assert_eq!(
            found,
            vec![root.join("linked/b.log"), root.join("linked/sub/a.log")]
        );
        problems.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(problems.len(), 2, "{problems:?}");
        assert_eq!(problems[0].path, root.join("dangling"));
        assert!(
            problems[0].message.starts_with("cannot read: "),
            "{problems:?}"
        );
        assert_eq!(problems[1].path, root.join("loop"));
        assert!(problems[1].message.contains("loop"), "{problems:?}");
        // Depth: only the root's own level.
        let shallow: Vec<PathBuf> = files(&real, 0, |_| {}).collect();
        assert_eq!(shallow, vec![real.join("b.log")]);
        let dirs_found: Vec<PathBuf> = dirs(&real, 1, |_| {}).collect();
        assert_eq!(dirs_found, vec![real.clone(), real.join("sub")]);
        let _ = std::fs::remove_dir_all(&d);
    }
}
