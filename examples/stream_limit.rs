//! The stream-only limit of the read path (issue 44 item 6): every byte of the files under the
//! given paths read the way `npgx dump-scan` and `dump-compare` read them — [`Blocks`] (mapped
//! when the page cache holds the whole file, `pread` into a reused 4 MiB buffer otherwise; files
//! under 1 MiB always `pread`), one file at a time per thread on all cores, the one-page-ahead
//! prefetch of the kernels — through a kernel that only loads each byte once (an XOR of 8-byte
//! words, so the loads are not optimised away). A kernel that computes statistics or metrics
//! over the same bytes cannot beat it: where it is below a target, the CPU (or the VM) is, not
//! the kernels. `scripts/bench_dump_scan.sh` and `scripts/bench_dump_compare.sh` print it beside
//! the read limit.
//!
//! ```sh
//! cargo run --release --example stream_limit -- [--runs N] [--mmap | --no-mmap] PATH...
//! ```
//!
//! Prints the best wall time of N runs (default 3) in seconds, timed from the first open to the
//! last byte, then the bytes read and their XOR.

use std::fs::File;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use npgx::dump::blocks::Blocks;
use npgx::dump::mapped::Mode;
use npgx::simd::Kernel;

/// The pieces a file read with `pread` is read in (the scan's per-thread buffer).
const PIECE: u64 = 4 << 20;

/// Loads every byte of a slice once.
struct Stream<'a>(&'a [u8]);

impl Kernel for Stream<'_> {
    type Output = u64;

    #[inline(always)]
    fn run(self) -> u64 {
        let mut words = self.0.chunks_exact(8);
        let mut x = 0u64;
        for w in &mut words {
            x ^= u64::from_le_bytes(w.try_into().unwrap_or_default());
        }
        words.remainder().iter().fold(x, |x, b| x ^ u64::from(*b))
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn run_x86(self, f: npgx::simd::x86::Features) -> u64 {
        by_lines(self.0, |at| f.prefetch(self.0, at))
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn run_neon(self, f: npgx::simd::aarch64::Features) -> u64 {
        by_lines(self.0, |at| f.prefetch(self.0, at))
    }
}

/// The vector paths' loop: 64-byte lines in eight lanes, `prefetch` asked for each line's
/// offset (it looks a page ahead, as the kernels do).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn by_lines(bytes: &[u8], prefetch: impl Fn(usize)) -> u64 {
    let mut x = [0u64; 8];
    let mut lines = bytes.chunks_exact(64);
    for (k, line) in (&mut lines).enumerate() {
        prefetch(k * 64);
        for (acc, w) in x.iter_mut().zip(line.chunks_exact(8)) {
            *acc ^= u64::from_le_bytes(w.try_into().unwrap_or_default());
        }
    }
    x.iter().fold(Stream(lines.remainder()).run(), |a, b| a ^ b)
}

/// Every byte of one file, as the scan reads it: (bytes, their XOR).
fn stream_file(path: &PathBuf, mode: Mode) -> Result<(u64, u64)> {
    let file = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let len = file.metadata()?.len();
    let blocks = Blocks::new(file, len, mode);
    let mut buf = Vec::new();
    let mut x = 0u64;
    let piece = if blocks.is_mapped() {
        len.max(1)
    } else {
        PIECE
    };
    let mut at = 0;
    while at < len {
        let n = piece.min(len - at);
        blocks.will_read(at, n);
        x ^= blocks
            .with_range(at, n, &mut buf, |b| npgx::simd::dispatch(Stream(b)))
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        at += n;
    }
    Ok((len, x))
}

fn main() -> Result<()> {
    let mut runs = 3usize;
    let mut mode = Mode::Resident;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().context("--runs needs N")?.parse()?,
            "--mmap" => mode = Mode::Always,
            "--no-mmap" => mode = Mode::Never,
            _ => roots.push(PathBuf::from(a)),
        }
    }
    if roots.is_empty() {
        bail!("usage: stream_limit [--runs N] [--mmap | --no-mmap] PATH...");
    }
    let files: Vec<PathBuf> = roots
        .iter()
        .flat_map(walkdir::WalkDir::new)
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(walkdir::DirEntry::into_path)
        .collect();
    let mut best = f64::INFINITY;
    let mut total = (0, 0);
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        total = files
            .par_iter()
            .map(|p| stream_file(p, mode))
            .try_reduce(|| (0, 0), |a, b| Ok((a.0 + b.0, a.1 ^ b.1)))?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    println!("{best:.4}");
    println!("{} bytes, xor {:016x}", total.0, total.1);
    Ok(())
}
