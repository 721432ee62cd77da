//! Mapped reads of dump files and plogs, guarded against SIGBUS: the only `unsafe` of the read
//! path.
//!
//! A dump's tensor bytes and a plog's lines are read where the page cache holds them, through a
//! read-only private mapping of the file, instead of being copied into a buffer first (the copy
//! was the limit of dump-scan and dump-compare, and a sixth of plog's work, see
//! docs/performance.md). The price of a mapping is that a file
//! truncated while it is mapped turns every access past its new end into a SIGBUS, which by
//! default kills the process. The guard turns that into an error of the one read:
//!
//! * [`Mapping::read`] registers the range it hands out in a per-thread table (up to
//!   [`DEPTH`] nested reads: dump-compare reads a golden and a target block at once), calls the
//!   consumer, and unregisters the range;
//! * a process-wide SIGBUS handler, installed once, looks the faulting address up in the
//!   *current thread's* table. Inside a registered range it poisons the range's mapping, maps an
//!   anonymous zero page over the faulting page (`MAP_FIXED`), marks that read as failed and
//!   returns: the faulting load runs again, reads zeros, and the consumer finishes on bytes that
//!   are then thrown away ([`Vanished`]: the caller reports the file as changed while it was
//!   read). Every read of the mapping that ends after that — on any thread, which may have read
//!   the zero page without a fault of its own — is [`Vanished`] too. Any other SIGBUS
//!   — another thread's, an address outside every range, one sent by `kill` — goes to the
//!   action that was there before (Rust's runtime handler, or the default: the process dies as
//!   it would have without npgx's handler).
//!
//! # Soundness
//!
//! * **Signal safety.** The handler reads the faulting address from `siginfo_t`, reads the
//!   current thread's table (atomics in a `const`-initialised `thread_local!` without
//!   destructor: on Linux a plain access to the thread's static TLS block, no allocation, no
//!   lock, no lazy initialisation), stores to an atomic flag, and calls `mmap` (one system call;
//!   glibc's wrapper takes no lock), `sigaction` and `raise` (async-signal-safe), or the previous
//!   handler. It allocates nothing and takes no lock.
//! * **Threads.** A SIGBUS from a memory access is delivered to the thread that made it, so a
//!   thread only ever sees its own table. Another thread's fault in the same file falls into
//!   that thread's own registration or none. A zero page is the whole process's: the handler
//!   sets the mapping's `poisoned` flag (an atomic, reached through the registration) before it
//!   maps one, and [`Mapping::read`] looks at the flag again after its consumer returns, so a
//!   read that came to another thread's zero page is discarded as well.
//! * **Ordering.** The table is written and read by the same thread (the handler interrupts
//!   it): a compiler fence after registering and before unregistering keeps the stores where
//!   they are relative to the consumer's loads.
//! * **Aliasing.** The mapping is held as a raw pointer. A `&[u8]` over it exists only inside
//!   [`Mapping::read`], while its range is registered, and cannot outlive the call (the
//!   consumer's result cannot borrow it); it is never held across an unguarded call. During the
//!   call every byte of it stays readable: a file page, or our zero page after a fault. Its
//!   contents may change under the reference (the zero page, or another process writing the
//!   file, as with any file mapping): `u8` has no invalid values, and the consumers are safe
//!   Rust over the slice — they branch on the bytes (a NaN test, a maximum) and may index by
//!   them, bounds-checked, but every pointer they form comes from the slice and its length — so
//!   a changed byte can change a statistic, never reach memory outside the slice. After a fault
//!   that result is discarded and the mapping is poisoned (later reads are [`Vanished`] without
//!   touching it); a change without a fault (a writer rewriting the file in place) is what a
//!   `pread` would have seen too.
//! * **No guard, no mapping.** If the handler cannot be installed, [`Mapping::new`] maps
//!   nothing and the caller reads with `pread`.
//! * **Lifetime.** The mapping is unmapped on drop, zero pages included (they lie inside it).
//!
//! Whether a file is mapped is the call's [`Mode`]: by default ([`Mode::Resident`]) a file
//! is mapped only when the page cache holds every page of it (`mincore`), and read with `pread`
//! otherwise. Measured (docs/performance.md, "Mapped reads and the cold cache"): over pages in
//! the cache the mapping, with the kernels' software prefetch, beats the copy; over pages still
//! on disk, faults wait for the disk a read-ahead window at a time and `pread` is faster.

use std::cell::Cell;
use std::fs::File;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::sync::atomic::{compiler_fence, AtomicBool, AtomicPtr, AtomicUsize, Ordering};
use std::sync::Once;

/// Nested guarded reads a thread may have at once.
pub const DEPTH: usize = 4;

/// Pages of a file looked up to judge whether the page cache holds it ([`Mode::Resident`]).
const PROBES: usize = 4;

/// A file mapped read-only, whole.
pub struct Mapping {
    base: NonNull<u8>,
    len: usize,
    /// A page of it vanished under a read: every later read is [`Vanished`] too (the zero
    /// pages the handler put there are never read as the file's bytes).
    poisoned: AtomicBool,
    /// The page cache was judged to hold it when it was mapped ([`Mode::Resident`]; judged by
    /// the sampled pages of [`probe_resident`], never under [`Mode::Always`]): read-ahead advice
    /// would only walk the cache's index for pages already there.
    cached: bool,
}

// SAFETY: a `Mapping` is a read-only mapping and an atomic flag. `read` from any thread
// registers its range in that thread's own table (a fault is delivered to the thread that made
// it); `release` only drops page-table entries of a mapping no one writes, so a reader on
// another thread faults the same bytes in again; `Drop` runs once no reference is left.
unsafe impl Send for Mapping {}
// SAFETY: as for `Send`.
unsafe impl Sync for Mapping {}

/// The pages under a guarded read vanished (the file was truncated while it was read): what
/// was computed from them is not to be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Vanished;

/// When files are mapped: chosen per call (each engine's options carry it; [`Mode::chosen`] is
/// the rule of the CLI and `npgx mcp`), never a process-wide setting.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Mode {
    /// Never: every file is read with `pread` (`--no-mmap`, `NPGX_MMAP=0`).
    Never = 0,
    /// When the page cache holds every page of the file (the default).
    #[default]
    Resident = 1,
    /// Always, where the file can be mapped (`--mmap`, `NPGX_MMAP=1`).
    Always = 2,
}

/// The environment variable that maps every file, as `--mmap` does (`1`), or none, as
/// `--no-mmap` does (`0`).
pub const MMAP_ENV: &str = "NPGX_MMAP";
/// The environment variable that maps no file whatever [`MMAP_ENV`] says.
pub const NO_MMAP_ENV: &str = "NPGX_NO_MMAP";

impl Mode {
    /// The mode the flags and the environment (`var`) ask for, one rule for the CLI and `npgx
    /// mcp`: `--mmap` always, `--no-mmap` never; without either, [`NO_MMAP_ENV`] set (not empty,
    /// not `0`) never, [`MMAP_ENV`] `0` never and any other non-empty value always; otherwise
    /// files the page cache holds whole (the default). A flag beats the environment.
    pub fn chosen(
        mmap: bool,
        no_mmap: bool,
        var: impl Fn(&str) -> Option<std::ffi::OsString>,
    ) -> Mode {
        let var = |name: &str| var(name).filter(|v| !v.is_empty());
        if mmap {
            Mode::Always
        } else if no_mmap || var(NO_MMAP_ENV).is_some_and(|v| v != "0") {
            Mode::Never
        } else {
            match var(MMAP_ENV) {
                Some(v) if v == "0" => Mode::Never,
                Some(_) => Mode::Always,
                None => Mode::Resident,
            }
        }
    }

    /// [`Mode::chosen`] with the process's environment: what every front end (the CLI, `npgx
    /// mcp`, the Python module) gives an engine call.
    pub fn from_flags(mmap: bool, no_mmap: bool) -> Mode {
        Mode::chosen(mmap, no_mmap, |k| std::env::var_os(k))
    }
}

impl Mapping {
    /// Maps the first `len` bytes of `file` (its length when it was opened). `None` when
    /// `mode` says not to (never, or the page cache does not hold all of the file), `len` is
    /// 0 or does not fit, or the file cannot be mapped (the caller reads it with `pread`
    /// instead).
    pub fn new(file: &File, len: u64, mode: Mode) -> Option<Mapping> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        // Without the guard a truncated file would kill the process: `pread` instead.
        if mode == Mode::Never || !install() {
            return None;
        }
        let mut mapping = Mapping::whole(file, len)?;
        // (Dropping it unmaps it.)
        mapping.cached = mode == Mode::Resident && mapping.resident();
        (mode == Mode::Always || mapping.cached).then_some(mapping)
    }

    /// A read-only private mapping of the first `len` (> 0) bytes of `file`, unguarded: only
    /// [`Mapping::new`] reads through one, once the handler is in place.
    fn whole(file: &File, len: usize) -> Option<Mapping> {
        // SAFETY: a fresh read-only private mapping at an address the kernel chooses; it
        // aliases no Rust object. The file descriptor is valid for the call (borrowed `file`);
        // the mapping stays valid after the file is closed.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Mapping {
            base: NonNull::new(p.cast::<u8>())?,
            len,
            poisoned: AtomicBool::new(false),
            cached: false,
        })
    }

    /// Whether the page cache holds the mapping's pages ([`probe_resident`]).
    fn resident(&self) -> bool {
        // SAFETY: `base` and `len` are this mapping's own.
        unsafe { probe_resident(self.base.as_ptr(), self.len) }
    }

    /// Tells the kernel the range will be read soon, front to back: sequential faults, and
    /// read-ahead unless the cache was judged to hold the file when it was mapped (measured on
    /// a warm tree, `MADV_WILLNEED` over cached pages cost 7–12 % of a scan's time: the kernel
    /// looks every page up; a page missing after all is still read ahead by the sequential
    /// fault path).
    pub fn will_read(&self, offset: u64, len: u64) {
        let Some((start, end)) = self.range(offset, len) else {
            return;
        };
        let page = page_size();
        let from = start / page * page;
        // SAFETY: advice only, on pages inside our own mapping; it changes no content.
        unsafe {
            let at = self.base.as_ptr().add(from).cast();
            libc::madvise(at, end - from, libc::MADV_SEQUENTIAL);
            if !self.cached {
                libc::madvise(at, end - from, libc::MADV_WILLNEED);
            }
        }
    }

    /// Drops the pages that hold a byte of `[offset, offset + len)` from this process's memory
    /// once a consumer is done with them (the page cache keeps them; a later read faults them in
    /// again, with the same bytes), so that reading a file front to back through one mapping
    /// keeps the resident set flat in its size. Pages shared with a neighbouring range go too,
    /// and whatever the kernel mapped with them (a huge page is mapped whole): a reader of the
    /// neighbour faults them in again.
    pub fn release(&self, offset: u64, len: u64) {
        let Some((start, end)) = self.range(offset, len) else {
            return;
        };
        let page = page_size();
        let from = start / page * page;
        if from < end {
            // SAFETY: advice on pages inside our own read-only private mapping (`madvise` takes
            // the last partial page whole, and the mapping holds it), never written, so no
            // private copy is lost: a later access maps the file's page again, and a slice
            // another thread holds over these pages stays readable with the same bytes, as after
            // an eviction.
            unsafe {
                libc::madvise(
                    self.base.as_ptr().add(from).cast(),
                    end - from,
                    libc::MADV_DONTNEED,
                );
            }
        }
    }

    /// `[offset, offset + len)` as a range of the mapping, if it lies inside.
    fn range(&self, offset: u64, len: u64) -> Option<(usize, usize)> {
        let start = usize::try_from(offset).ok()?;
        let end = start.checked_add(usize::try_from(len).ok()?)?;
        (end <= self.len).then_some((start, end))
    }

    /// Calls `f` with the bytes `[offset, offset + len)` of the file under the SIGBUS guard:
    /// `Ok(Ok(_))` with its result when every page stayed there, `Ok(Err(Vanished))` when some
    /// vanished while `f` ran (its result is dropped) or under an earlier read of this mapping
    /// (`f` is not called: the mapping is poisoned). `f` comes back uncalled (`Err(f)`) when
    /// the range is not inside the mapping or the thread already has [`DEPTH`] guarded reads
    /// open.
    pub fn read<R, F>(&self, offset: u64, len: u64, f: F) -> Result<Result<R, Vanished>, F>
    where
        F: for<'a> FnOnce(&'a [u8]) -> R,
    {
        let Some((start, end)) = self.range(offset, len) else {
            return Err(f);
        };
        if self.poisoned.load(Ordering::SeqCst) {
            return Ok(Err(Vanished));
        }
        // SAFETY: `start <= end <= self.len`, inside the mapping.
        let at = unsafe { self.base.as_ptr().add(start) };
        let Some(guard) = Registered::new(at as usize, end - start, &self.poisoned) else {
            return Err(f);
        };
        // SAFETY: see the module's soundness argument: the range is mapped readable for the
        // whole call (file pages, or zero pages put there by the handler), registered with the
        // guard, and the slice cannot outlive `f`.
        let r = f(unsafe { std::slice::from_raw_parts(at, end - start) });
        // A fault of this read, or of another thread's read of this mapping (whose zero pages
        // this one may have read without faulting: they are mapped for the whole process): the
        // handler poisons the mapping before it maps a zero page.
        if guard.finish() || self.poisoned.load(Ordering::SeqCst) {
            self.poisoned.store(true, Ordering::SeqCst);
            Ok(Err(Vanished))
        } else {
            Ok(Ok(r))
        }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new` (zero pages put over parts of it
        // lie inside it); no slice into it outlives `read`.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}

/// The guarded ranges of one thread: start, length, whether a page of it vanished, and the
/// poisoned flag of the mapping it lies in. A length of 0 marks a free entry.
struct Table {
    start: [AtomicUsize; DEPTH],
    len: [AtomicUsize; DEPTH],
    faulted: [AtomicBool; DEPTH],
    poisoned: [AtomicPtr<AtomicBool>; DEPTH],
}

thread_local! {
    static TABLE: Table = const {
        Table {
            start: [const { AtomicUsize::new(0) }; DEPTH],
            len: [const { AtomicUsize::new(0) }; DEPTH],
            faulted: [const { AtomicBool::new(false) }; DEPTH],
            poisoned: [const { AtomicPtr::new(std::ptr::null_mut()) }; DEPTH],
        }
    };
    /// Entries of [`TABLE`] in use, innermost last (only the thread itself writes it).
    static USED: Cell<usize> = const { Cell::new(0) };
}

/// One registered range; [`Registered::finish`] (or drop, on a panic) frees it.
struct Registered {
    slot: usize,
    done: bool,
}

impl Registered {
    /// Registers `[start, start + len)`, a range of the mapping whose flag is `poisoned` (which
    /// outlives the registration: the mapping is borrowed for the whole read).
    fn new(start: usize, len: usize, poisoned: &AtomicBool) -> Option<Registered> {
        let slot = USED.with(Cell::get);
        if slot >= DEPTH || len == 0 {
            return None;
        }
        TABLE.with(|t| {
            t.faulted[slot].store(false, Ordering::Relaxed);
            t.poisoned[slot].store(std::ptr::from_ref(poisoned).cast_mut(), Ordering::Relaxed);
            t.start[slot].store(start, Ordering::Relaxed);
            t.len[slot].store(len, Ordering::Relaxed);
        });
        USED.with(|u| u.set(slot + 1));
        compiler_fence(Ordering::SeqCst);
        Some(Registered { slot, done: false })
    }

    /// Frees the entry; whether a page of its range vanished.
    fn finish(mut self) -> bool {
        self.done = true;
        self.free()
    }

    fn free(&self) -> bool {
        compiler_fence(Ordering::SeqCst);
        let faulted = TABLE.with(|t| {
            t.len[self.slot].store(0, Ordering::Relaxed);
            t.faulted[self.slot].load(Ordering::Relaxed)
        });
        USED.with(|u| u.set(self.slot));
        faulted
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        if !self.done {
            self.free();
        }
    }
}

static INSTALL: Once = Once::new();
/// Whether [`install`] put the handler in place.
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The SIGBUS action before ours (written once, before our handler is installed).
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(std::ptr::null_mut());
/// The page size, 0 until [`page_size`] first reads it.
static PAGE: AtomicUsize = AtomicUsize::new(0);

/// Whether the page cache holds the `len` mapped bytes at `base`, judged by [`PROBES`] of their
/// pages spread evenly from the first to the last (`mincore` on each: the kernel looks the page
/// up, none is read or faulted in). A file is mostly cached whole or evicted whole; looking every
/// page up cost more than the mapping saved on a tree of 6 MiB files. An error answers no.
///
/// # Safety
/// `base` starts a mapping of at least `len` bytes, on a page boundary. ([`page_size`] is the
/// kernel's, so each probe covers one page and needs one flag byte.)
unsafe fn probe_resident(base: *mut u8, len: usize) -> bool {
    let page = page_size();
    let pages = len.div_ceil(page);
    let probes = pages.min(PROBES);
    (0..probes).all(|k| {
        // Page `k · (pages - 1) / (probes - 1)`: the first, the last and evenly between.
        let at = if probes > 1 {
            k * (pages - 1) / (probes - 1)
        } else {
            0
        };
        let mut flag = 0u8;
        // SAFETY: page `at` (`at < pages`) lies inside the mapping (the caller's promise) and
        // starts on a page boundary; one page needs one flag byte. mincore only looks it up.
        let r = unsafe {
            libc::mincore(
                base.add(at * page).cast(),
                page.min(len - at * page),
                &mut flag,
            )
        };
        r == 0 && flag & 1 == 1
    })
}

/// Whether the page cache holds the file at `path`, judged as [`Mode::Resident`] judges a file
/// before mapping it (no page is read). An empty file is held; a file that cannot be opened or
/// mapped is not.
pub fn cached(path: &std::path::Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let Some(len) = file
        .metadata()
        .ok()
        .and_then(|m| usize::try_from(m.len()).ok())
    else {
        return false;
    };
    if len == 0 {
        return true;
    }
    // Looked up with mincore only (no page of it is read), and unmapped when dropped.
    Mapping::whole(&file, len).is_some_and(|m| m.resident())
}

/// The kernel's page size (`sysconf`; 4 KiB if it gives no power of two), read on first use —
/// by [`install`] before the handler can run, so the handler only loads it.
fn page_size() -> usize {
    match PAGE.load(Ordering::Relaxed) {
        0 => {
            // SAFETY: sysconf has no preconditions.
            let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
            let page = usize::try_from(page)
                .ok()
                .filter(|p| p.is_power_of_two())
                .unwrap_or(4096);
            PAGE.store(page, Ordering::Relaxed);
            page
        }
        page => page,
    }
}

/// Installs the handler once per process; whether it is in place (no mapping is made
/// without it).
fn install() -> bool {
    INSTALL.call_once(|| {
        // Read before the handler is in place, which uses it.
        page_size();
        // SAFETY: zeroed `sigaction` structs are valid (empty masks, no flags); the previous
        // action is read into a leaked box that lives as long as the process, published before
        // the new handler can run. `on_sigbus` has the SA_SIGINFO signature.
        unsafe {
            let previous: &'static mut libc::sigaction = Box::leak(Box::new(std::mem::zeroed()));
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), previous) != 0 {
                return;
            }
            PREVIOUS.store(previous, Ordering::Release);
            if libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0 {
                INSTALLED.store(true, Ordering::Release);
            }
        }
    });
    INSTALLED.load(Ordering::Acquire)
}

extern "C" fn on_sigbus(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` to an SA_SIGINFO handler.
    let (addr, code) = unsafe { ((*info).si_addr() as usize, (*info).si_code) };
    // Only faults the kernel raised for an access (si_code > 0), not a `kill`.
    if code > 0 && guard_fault(addr) {
        return;
    }
    pass_on(sig, info, ctx);
}

/// Maps a zero page over `addr` if it lies in one of this thread's guarded ranges, and marks
/// the range; whether it did.
fn guard_fault(addr: usize) -> bool {
    let page = page_size();
    let used = USED.try_with(Cell::get).unwrap_or(0).min(DEPTH);
    TABLE
        .try_with(|t| {
            for slot in (0..used).rev() {
                let start = t.start[slot].load(Ordering::Relaxed);
                let len = t.len[slot].load(Ordering::Relaxed);
                if len == 0 || addr < start || addr - start >= len {
                    continue;
                }
                let at = (addr / page * page) as *mut libc::c_void;
                // The whole mapping first: the zero page is there for every thread, and a read
                // on another thread that comes to it without a fault must not take it for the
                // file's bytes.
                let poisoned = t.poisoned[slot].load(Ordering::Relaxed);
                // SAFETY: set by `Registered::new` from the `&AtomicBool` of the mapping being
                // read, which outlives the registration (this handler runs inside it).
                if let Some(flag) = unsafe { poisoned.as_ref() } {
                    flag.store(true, Ordering::SeqCst);
                }
                // SAFETY: `at` is the page of a faulting address inside a range this thread
                // registered, so inside a live mapping of ours; replacing it with a private
                // zero page changes only bytes the guarded reads will discard.
                let p = unsafe {
                    libc::mmap(
                        at,
                        page,
                        libc::PROT_READ,
                        libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                        -1,
                        0,
                    )
                };
                if p == libc::MAP_FAILED {
                    return false;
                }
                t.faulted[slot].store(true, Ordering::Relaxed);
                return true;
            }
            false
        })
        .unwrap_or(false)
}

/// A SIGBUS that is not ours: the action that was there before.
fn pass_on(sig: libc::c_int, info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    let previous = PREVIOUS.load(Ordering::Acquire);
    // SAFETY: `previous` is null or the leaked action read at install, never written since.
    let previous = unsafe { previous.as_ref() };
    let handler = previous.map_or(libc::SIG_DFL, |p| p.sa_sigaction);
    if handler != libc::SIG_DFL && handler != libc::SIG_IGN {
        // SAFETY: the previous action's handler, called with the arguments the kernel gave
        // us, as it would have been called without us (its flags say which signature it has).
        unsafe {
            if previous.is_some_and(|p| p.sa_flags & libc::SA_SIGINFO != 0) {
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    std::mem::transmute(handler);
                f(sig, info, ctx);
            } else {
                let f: extern "C" fn(libc::c_int) = std::mem::transmute(handler);
                f(sig);
            }
        }
        return;
    }
    // The default action: restore it and let the signal come again — a faulting access runs
    // again and faults, a sent signal is raised again (pending until this handler returns).
    // SAFETY: sigaction and raise are async-signal-safe; a zeroed action is SIG_DFL.
    unsafe {
        let mut dfl: libc::sigaction = std::mem::zeroed();
        dfl.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &dfl, std::ptr::null_mut());
        // SAFETY: reading `si_code` of the valid siginfo the kernel passed.
        if (*info).si_code <= 0 {
            libc::raise(libc::SIGBUS);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn flags_beat_the_environment() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert_eq!(Mode::chosen(false, false, env(&[])), Mode::Resident);
        assert_eq!(
            Mode::chosen(false, false, env(&[(MMAP_ENV, "1")])),
            Mode::Always
        );
        assert_eq!(
            Mode::chosen(false, false, env(&[(MMAP_ENV, "0")])),
            Mode::Never
        );
        assert_eq!(
            Mode::chosen(false, false, env(&[(MMAP_ENV, "")])),
            Mode::Resident
        );
        assert_eq!(
            Mode::chosen(false, false, env(&[(MMAP_ENV, "1"), (NO_MMAP_ENV, "1")])),
            Mode::Never
        );
        assert_eq!(
            Mode::chosen(false, false, env(&[(NO_MMAP_ENV, "0")])),
            Mode::Resident
        );
        assert_eq!(
            Mode::chosen(true, false, env(&[(MMAP_ENV, "0")])),
            Mode::Always
        );
        assert_eq!(
            Mode::chosen(false, true, env(&[(MMAP_ENV, "1")])),
            Mode::Never
        );
    }

    /// Cuts the file at `path` to `len` bytes, as another process would under a mapping.
    fn truncate(path: &std::path::Path, len: u64) {
        std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(len))
            .unwrap();
    }

    /// A file of `len` bytes of `fill`, open for reading, and its path.
    fn file_of(name: &str, len: usize, fill: u8) -> (File, std::path::PathBuf) {
        let path = std::env::temp_dir().join(format!("npgx-mapped-{name}-{}", std::process::id()));
        std::fs::File::create(&path)
            .and_then(|mut f| f.write_all(&vec![fill; len]))
            .unwrap();
        (File::open(&path).unwrap(), path)
    }

    #[test]
    fn a_file_truncated_under_a_guarded_read_is_vanished_not_a_signal() {
        // Files are mapped only when cached by default (`--mmap`: always).
        let len = 64 << 10;
        let (file, path) = file_of("truncated", len, 3);
        let (other, other_path) = file_of("whole", len, 5);
        let m = Mapping::new(&file, len as u64, Mode::Always).expect("the file maps");
        let whole = Mapping::new(&other, len as u64, Mode::Always).expect("the file maps");
        let sum = |b: &[u8]| b.iter().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(m.read(0, len as u64, sum).ok(), Some(Ok(3 * len as u64)));
        // Past the mapping: the consumer comes back uncalled.
        assert!(m.read(1, len as u64, sum).is_err());
        truncate(&path, 4096);
        // A read of the vanished pages, nested in a read of another file that stays whole:
        // the inner read fails, the outer one does not, and nothing dies.
        let outer = whole.read(0, len as u64, |b| {
            let inner = m.read(0, len as u64, sum).ok();
            (sum(b), inner)
        });
        let (outer_sum, inner) = outer
            .ok()
            .and_then(Result::ok)
            .expect("the outer read holds");
        assert_eq!(outer_sum, 5 * len as u64);
        assert_eq!(inner, Some(Err(Vanished)));
        // The mapping is poisoned: no later read of it hands out bytes, the first page's
        // included (the zero pages are never taken for the file's).
        assert_eq!(m.read(0, 4096, sum).ok(), Some(Err(Vanished)));
        assert_eq!(m.read(0, len as u64, sum).ok(), Some(Err(Vanished)));
        assert_eq!(whole.read(0, 4096, sum).ok(), Some(Ok(5 * 4096)));
        std::fs::remove_file(&path).unwrap();
        std::fs::remove_file(&other_path).unwrap();
    }

    /// The bytes of this process's memory that the mapping at `base` has in it (its `Rss:` line
    /// of `/proc/self/smaps`; other tests' mappings are elsewhere).
    fn resident_bytes(base: usize) -> u64 {
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut lines = smaps.lines();
        lines
            .by_ref()
            .find(|l| l.starts_with(&format!("{base:x}-")))
            .expect("the mapping is listed");
        let rss = lines
            .find_map(|l| l.strip_prefix("Rss:"))
            .expect("an Rss line");
        rss.trim().trim_end_matches(" kB").parse::<u64>().unwrap() * 1024
    }

    #[test]
    fn released_pages_leave_the_resident_set_and_read_the_same() {
        let len = 1 << 20;
        let (file, path) = file_of("released", len, 9);
        let m = Mapping::new(&file, len as u64, Mode::Always).expect("the file maps");
        let base = m.base.as_ptr() as usize;
        let sum = |b: &[u8]| b.iter().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(m.read(0, len as u64, sum).ok(), Some(Ok(9 * len as u64)));
        assert!(resident_bytes(base) >= len as u64 / 2);
        // A range that starts and ends inside pages takes those pages whole.
        m.release(100, len as u64 - 200);
        assert_eq!(resident_bytes(base), 0);
        assert_eq!(m.read(0, len as u64, sum).ok(), Some(Ok(9 * len as u64)));
        std::fs::remove_file(&path).unwrap();
    }

    // Zero pages are the whole process's: a read that comes to one another read's fault put
    // there reads zeros without a fault of its own, and must not hand them out as the file's.
    // (Here the other read is nested on the same thread, which makes the order certain; a read
    // on another thread takes the same path.)
    #[test]
    fn a_read_over_another_reads_zero_pages_is_vanished_too() {
        let len = 64 << 10;
        let (file, path) = file_of("zero-pages", len, 3);
        let m = Mapping::new(&file, len as u64, Mode::Always).expect("the file maps");
        let sum = |b: &[u8]| b.iter().map(|&x| u64::from(x)).sum::<u64>();
        truncate(&path, 4096);
        let outer = m.read(0, len as u64, |b| {
            // The inner read faults on every page past the new end and maps zero pages there;
            // then the outer one reads them, no fault.
            let inner = m.read(0, len as u64, sum).ok();
            (inner, sum(b))
        });
        assert_eq!(outer.ok(), Some(Err(Vanished)));
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn a_file_is_resident_when_the_page_cache_holds_its_pages() {
        // (`Mapping::new`'s judgement and `cached`'s are one probe.)
        let path = std::env::temp_dir().join(format!("npgx-mapped-sparse-{}", std::process::id()));
        let len = 1 << 20;
        // A hole: no page of it is in the cache (on any file system) until it is written.
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        file.set_len(len).unwrap();
        let m = Mapping::new(&file, len, Mode::Always).expect("the file maps");
        assert!(!m.resident() && !cached(&path));
        use std::os::unix::fs::FileExt;
        // (Pages of 4 KiB here, 64 KiB on many AArch64 kernels.)
        let page = page_size() as u64;
        file.write_all_at(&vec![7u8; (len - page) as usize], 0)
            .unwrap();
        assert!(!m.resident(), "the last page is still a hole");
        file.write_all_at(&vec![7u8; page as usize], len - page)
            .unwrap();
        assert!(m.resident() && cached(&path));
        // Read-ahead is left out only where the file was found cached when it was mapped.
        assert!(!m.cached);
        let held = Mapping::new(&file, len, Mode::Resident).expect("a cached file maps");
        assert!(held.cached);
        drop(held);
        // An empty file is held; one that cannot be opened is not.
        file.set_len(0).unwrap();
        assert!(cached(&path));
        std::fs::remove_file(&path).unwrap();
        assert!(!cached(&path));
    }

    /// Outside a guarded read, a SIGBUS keeps its action: the process dies of it (checked in a
    /// child process: this test runs itself with `NPGX_SIGBUS_CHILD`).
    #[test]
    fn an_unguarded_fault_still_kills() {
        if std::env::var_os("NPGX_SIGBUS_CHILD").is_some() {
            let (file, path) = file_of("unguarded", 8192, 1);
            let m = Mapping::new(&file, 8192, Mode::Always).expect("the file maps");
            std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_len(0))
                .unwrap();
            std::fs::remove_file(&path).unwrap();
            // SAFETY: a load from our own mapping; the page is gone, so this raises SIGBUS
            // outside any guarded range — which is what the parent checks.
            let byte = unsafe { std::ptr::read_volatile(m.base.as_ptr().add(4096)) };
            println!("read {byte} from a truncated page without a signal");
            return;
        }
        use std::os::unix::process::ExitStatusExt;
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "dump::mapped::tests::an_unguarded_fault_still_kills",
            ])
            .args(["--include-ignored", "--nocapture", "--test-threads=1"])
            .env("NPGX_SIGBUS_CHILD", "1")
            .output()
            .unwrap();
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGBUS),
            "child: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout)
        );
    }
}
