//! Files written under a name the user chose: there whole, or not there at all.
//!
//! Every such file (`-o`, shards, HTML pages, dump-convert's `.npy`, repro and triage files) is
//! written by [`write_with`]: into a temporary file in the destination's directory, renamed over
//! the destination once complete (rename(2) replaces a name atomically within a file system, so
//! a reader — `npgx merge` on shared storage, a launcher collecting shards — sees the old file
//! or the whole new one). The temporary file is removed when writing fails (`Drop`) and when
//! the process is stopped by SIGINT or SIGTERM: a thread of [`signal-hook`](signal_hook) removes
//! every temporary file in flight, then the process dies of the signal as it would have. After
//! SIGKILL a temporary file may stay behind, but nothing sits at the destination, and its name
//! (`.NAME.PID-N.npgx-tmp`, see [`is_temp`]) is one the dump walker and `npgx merge` skip.
//!
//! Hand-written rather than the `tempfile` crate: the temporary names must be recognisable by
//! the walkers, the files keep the permissions the umask gives (not 0600), and the signal
//! cleanup needs the list of files in flight anyway.
//!
//! A destination that exists and is not a regular file (`-o /dev/stdout`, a FIFO) is written in
//! place: there is nothing to replace.

use std::ffi::OsStr;
use std::fs::File;
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use anyhow::Context as _;

/// The suffix of a temporary file (after a leading `.`).
pub const TEMP_SUFFIX: &str = ".npgx-tmp";

/// Bytes of the destination's name kept in the temporary name (names stay under NAME_MAX).
const NAME_KEPT: usize = 200;

/// Whether a file name is one of npgx's temporary files (`.NAME.PID-N.npgx-tmp`).
pub fn is_temp(name: &OsStr) -> bool {
    let b = name.as_bytes();
    b.starts_with(b".") && b.ends_with(TEMP_SUFFIX.as_bytes())
}

/// Temporary files being written, removed by the signal thread.
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// Set when the process handles SIGINT/SIGTERM itself ([`interrupt_flag`]).
static DEFERRED: OnceLock<Arc<AtomicBool>> = OnceLock::new();
static HANDLER: OnceLock<Result<(), String>> = OnceLock::new();

fn in_flight() -> MutexGuard<'static, Vec<PathBuf>> {
    IN_FLIGHT.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts, once, the thread that receives SIGINT and SIGTERM.
fn install() -> anyhow::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    HANDLER
        .get_or_init(|| {
            let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])
                .map_err(|e| e.to_string())?;
            std::thread::Builder::new()
                .name("npgx-signals".into())
                .spawn(move || {
                    for sig in signals.forever() {
                        if let Some(flag) = DEFERRED.get() {
                            // The caller stops on its own; its files finish or are dropped.
                            flag.store(true, Ordering::SeqCst);
                            continue;
                        }
                        // Held until the process is gone: no file is renamed or created after.
                        let files = in_flight();
                        for f in files.iter() {
                            let _ = std::fs::remove_file(f);
                        }
                        let _ = signal_hook::low_level::emulate_default_handler(sig);
                        std::process::exit(128 + sig);
                    }
                })
                .map(drop)
                .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| anyhow::anyhow!("cannot install the SIGINT/SIGTERM handler: {e}"))
}

/// For a command that stops gracefully on Ctrl-C or SIGTERM (`triage run`): the flag those
/// signals set instead of ending the process.
pub fn interrupt_flag() -> anyhow::Result<Arc<AtomicBool>> {
    let flag = Arc::clone(DEFERRED.get_or_init(|| Arc::new(AtomicBool::new(false))));
    install()?;
    Ok(flag)
}

/// A temporary file being written; removed on drop unless renamed.
struct Temp {
    path: PathBuf,
    done: bool,
}

/// Numbers the temporary names of this process.
static NEXT: AtomicU64 = AtomicU64::new(0);

impl Temp {
    fn create(dest: &Path) -> anyhow::Result<(Self, File)> {
        install()?;
        let name = dest
            .file_name()
            .with_context(|| format!("{} does not name a file", dest.display()))?
            .as_bytes();
        let mut temp = b".".to_vec();
        temp.extend_from_slice(&name[..name.len().min(NAME_KEPT)]);
        temp.extend_from_slice(
            format!(
                ".{}-{}{TEMP_SUFFIX}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            )
            .as_bytes(),
        );
        let path = dest.with_file_name(OsStr::from_bytes(&temp));
        let mut files = in_flight();
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&path)
            .with_context(|| format!("cannot create {}", dest.display()))?;
        files.push(path.clone());
        Ok((Self { path, done: false }, file))
    }

    /// Gives the temporary file the destination's name (`new`: only if none exists).
    fn finish(mut self, dest: &Path, new: bool) -> anyhow::Result<()> {
        let mut files = in_flight();
        let result = if new {
            link_new(&self.path, dest)
        } else {
            std::fs::rename(&self.path, dest)
                .with_context(|| format!("cannot write {}", dest.display()))
        };
        if result.is_ok() {
            self.done = true;
            files.retain(|f| f != &self.path);
        }
        result
    }
}

/// Hard-links `temp` as `dest`, failing when `dest` exists; then removes `temp`. On a file
/// system without hard links, renames after checking that `dest` does not exist.
fn link_new(temp: &Path, dest: &Path) -> anyhow::Result<()> {
    let exists = || anyhow::anyhow!("{} exists; pass --force to overwrite it", dest.display());
    match std::fs::hard_link(temp, dest) {
        Ok(()) => {
            let _ = std::fs::remove_file(temp);
            Ok(())
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(exists()),
        Err(_) if dest.symlink_metadata().is_ok() => Err(exists()),
        Err(_) => {
            std::fs::rename(temp, dest).with_context(|| format!("cannot write {}", dest.display()))
        }
    }
}

impl Drop for Temp {
    fn drop(&mut self) {
        if !self.done {
            let mut files = in_flight();
            let _ = std::fs::remove_file(&self.path);
            files.retain(|f| f != &self.path);
        }
    }
}

/// A scratch file with no name, for data too large to hold in memory (the tensors of a scan
/// being sorted, `scan::sorted`): created in `dir` under a temporary name ([`is_temp`]) and
/// unlinked at once, so that its space goes back when it is closed, however the process ends.
pub fn scratch_file(dir: &Path, what: &str) -> anyhow::Result<File> {
    let name = format!(
        ".npgx-{what}.{}-{}{TEMP_SUFFIX}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let path = dir.join(name);
    let file = File::options()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    std::fs::remove_file(&path).with_context(|| format!("cannot unlink {}", path.display()))?;
    Ok(file)
}

/// Writes `dest` whole or not at all: `write` fills a temporary file in the same directory,
/// which is renamed over `dest` when `write` succeeds and removed when it fails.
pub fn write_with<T>(
    dest: &Path,
    write: impl FnOnce(&mut File) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    write_file(dest, false, write)
}

/// [`write_with`] for bytes at hand.
pub fn write(dest: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    write_with(dest, |f| Ok(std::io::Write::write_all(f, bytes)?))
        .with_context(|| format!("cannot write {}", dest.display()))
}

/// [`write`], refusing to replace an existing `dest` (checked when the file is complete).
pub fn write_new(dest: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if dest.symlink_metadata().is_ok() {
        anyhow::bail!("{} exists; pass --force to overwrite it", dest.display());
    }
    write_file(dest, true, |f| Ok(std::io::Write::write_all(f, bytes)?))
}

fn write_file<T>(
    dest: &Path,
    new: bool,
    write: impl FnOnce(&mut File) -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if !new && std::fs::metadata(dest).is_ok_and(|m| !m.is_file()) {
        let mut f = File::options()
            .write(true)
            .open(dest)
            .with_context(|| format!("cannot open {}", dest.display()))?;
        return write(&mut f);
    }
    let (temp, mut file) = Temp::create(dest)?;
    let value = write(&mut file)?;
    drop(file);
    temp.finish(dest, new)?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("npgx-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).expect("temp dir");
        d
    }

    fn names(d: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(d)
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    #[test]
    fn a_file_appears_whole_and_a_failed_write_leaves_nothing() {
        let d = dir("whole");
        let dest = d.join("out.parquet");
        std::fs::write(&dest, b"old").expect("old file");
        let seen = write_with(&dest, |f| {
            std::io::Write::write_all(f, b"new")?;
            // While writing: the old file is intact, the temporary file sits beside it.
            Ok(names(&d))
        })
        .expect("written");
        assert_eq!(seen.len(), 2, "{seen:?}");
        assert!(seen.iter().any(|n| is_temp(OsStr::new(n))), "{seen:?}");
        assert_eq!(std::fs::read(&dest).expect("read"), b"new");
        let err = write_with(&dest, |f| -> anyhow::Result<()> {
            std::io::Write::write_all(f, b"half")?;
            anyhow::bail!("renderer failed")
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read(&dest).expect("read"), b"new");
        assert_eq!(names(&d), ["out.parquet"]);
        assert!(write_new(&dest, b"x")
            .expect_err("exists")
            .to_string()
            .contains("exists"));
        write_new(&d.join("fresh.json"), b"{}").expect("new file");
        assert_eq!(names(&d), ["fresh.json", "out.parquet"]);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn temporary_names_are_recognised_and_stay_short() {
        assert!(is_temp(OsStr::new(".node0.parquet.12-0.npgx-tmp")));
        assert!(!is_temp(OsStr::new("node0.parquet")));
        assert!(!is_temp(OsStr::new("x.npgx-tmp")));
        let d = dir("long");
        let dest = d.join("a".repeat(250));
        write(&dest, b"1").expect("a 250-byte name");
        assert_eq!(std::fs::read(&dest).expect("read"), b"1");
        let _ = std::fs::remove_dir_all(&d);
    }
}
