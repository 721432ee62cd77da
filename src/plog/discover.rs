//! Which files to read: explicit files always, and CANN log files found by name under
//! directories (asys collections, `$ASCEND_PROCESS_LOG_PATH` trees, the old `slog/` layout).

use std::path::{Path, PathBuf};

use npgx_parsers::plog::path::{classify, LogFile};
use serde::Serialize;

use super::Warning;

/// One input file and what its path says about it.
#[derive(Debug, Clone, Serialize)]
pub struct LogInput {
    pub path: PathBuf,
    /// `None` for an explicitly named file whose name is not a CANN log name (a console capture).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub info: Option<LogFile>,
    /// The folder named on the command line the file was found under (`None` for a file named
    /// itself): where a check that reads device-error records is pointed when this file holds
    /// none.
    #[serde(skip)]
    pub folder: Option<PathBuf>,
}

/// Expands `paths` into the files to read, in a stable order: rotated files of one process in
/// writing order (by the 17-digit stamp in the name), explicit non-log files last by path.
/// Directories are walked recursively and only files whose names match the CANN patterns are
/// taken (see `npgx_parsers::plog::path`). Missing paths become warnings.
pub fn discover(paths: &[PathBuf], warnings: &mut Vec<Warning>) -> Vec<LogInput> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            for_each_file(p, warnings, |path| {
                if let Some(info) = classify(&path.to_string_lossy()) {
                    out.push(LogInput {
                        path: path.to_path_buf(),
                        info: Some(info),
                        folder: Some(p.clone()),
                    });
                }
            });
        } else if p.is_file() {
            out.push(LogInput {
                path: p.clone(),
                info: classify(&p.to_string_lossy()),
                folder: None,
            });
        } else {
            warnings.push(Warning::io(p, "no such file or directory"));
        }
    }
    out.sort_by(|a, b| sort_key(a).cmp(&sort_key(b)));
    // A file named itself and found under a named folder too: one input, which keeps the folder.
    out.dedup_by(|later, kept| {
        let same = later.path == kept.path;
        if same && kept.folder.is_none() {
            kept.folder = later.folder.take();
        }
        same
    });
    out
}

/// Every regular file under `dir` (links followed), in file-name order, whatever its name: the
/// logs of a job's workers (`npgx triage classify DIR`). Unreadable entries become warnings.
pub fn files_under(dir: &Path, warnings: &mut Vec<Warning>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for_each_file(dir, warnings, |p| out.push(p.to_path_buf()));
    out
}

/// The one directory walk of the log readers: regular files under `dir`, sorted by name.
fn for_each_file(dir: &Path, warnings: &mut Vec<Warning>, mut f: impl FnMut(&Path)) {
    let mut problems = Vec::new();
    for path in crate::walk::files(dir, usize::MAX, |p| problems.push(p)) {
        f(&path);
    }
    for p in problems {
        warnings.push(Warning::io(&p.path, &p.message));
    }
}

type SortKey<'a> = (
    bool,
    Option<(
        npgx_parsers::plog::path::LogFileKind,
        Option<u32>,
        Option<u64>,
        Option<u64>,
    )>,
    &'a Path,
);

fn sort_key(i: &LogInput) -> SortKey<'_> {
    (
        i.info.is_none(),
        i.info.as_ref().map(LogFile::rotation_key),
        &i.path,
    )
}
