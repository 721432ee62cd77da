//! Process-wide settings, made once when the process starts (`cli::run`, which `npgx mcp`'s
//! server runs under too) and never by an engine call: an engine may run many times, at once,
//! inside a long-lived server, where a setting made by one call would change the others.

/// Tunes glibc's malloc for npgx's worker pools, before any starts: at most one arena per core
/// (glibc's default adds more, and one for the idle main thread), and blocks of 64 KiB and more
/// mapped on their own (glibc raises that threshold as big blocks are freed). What a scan keeps
/// is allocated by whichever worker holds the collector, among that worker's short-lived
/// records; with more arenas and big blocks carved from them, the holes they leave held
/// 1 000 000 files at 251 MiB, 163 MiB tuned (docs/performance.md, "dump-scan"). One arena for
/// all workers holds as little but costs up to a third of the speed. (dump-compare's extra
/// workers for trees read from disk share these arenas; they hold two chunks per pair.)
pub fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // SAFETY: mallopt only sets allocator parameters; it takes no pointer.
        unsafe {
            libc::mallopt(
                libc::M_ARENA_MAX,
                libc::c_int::try_from(cores.max(1)).unwrap_or(libc::c_int::MAX),
            );
            libc::mallopt(libc::M_MMAP_THRESHOLD, 64 << 10);
        }
    }
}

/// Caps the vectors of the hot loops at [`crate::simd::SIMD_ENV`]'s level when it is set (for
/// measuring one level against another on one CPU); a value it does not name is said on stderr
/// and the widest vectors stay.
pub fn cap_vectors() {
    let Some(value) = std::env::var_os(crate::simd::SIMD_ENV) else {
        return;
    };
    let value = value.to_string_lossy();
    if value.trim().is_empty() {
        return;
    }
    match crate::simd::Cap::named(&value) {
        Some(cap) => crate::simd::set_cap(cap),
        None => eprintln!(
            "npgx: warning: {}={value:?} is not one of portable, avx2, neon, avx512: the widest vectors are used",
            crate::simd::SIMD_ENV
        ),
    }
}
