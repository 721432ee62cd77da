//! The one run-time dispatch to wider vectors (AVX2, FMA and F16C on x86-64, and AVX-512 for the
//! kernels that have loops for it; NEON on AArch64), for the hot loops of `dump-scan`
//! (statistics, [`crate::scan::stats`]) and `dump-compare` (metrics).
//!
//! A hot loop is written once, portably, as a [`Kernel`] whose [`Kernel::run`] is
//! `#[inline(always)]`. [`dispatch`] runs it inlined into a function compiled with the target
//! features when the CPU has them, and as is otherwise. One list of features per level feeds
//! both the `#[target_feature]` attributes and the run-time check, so the check cannot miss
//! one. FMA is not in it: Rust never fuses a multiply and an add on its own, so it would buy
//! nothing (and results stay bit-identical to the portable build).
//!
//! Where the compiler's vectoriser falls short (it turns lane-wise f64 code into blends and
//! shuffles), a kernel can also provide [`Kernel::run_x86`] or [`Kernel::run_neon`], the same
//! loop written with `std::arch` vectors, and on x86-64 `run_x86_512` with AVX-512 vectors
//! (when the compiler has them: `cfg(npgx_avx512)`, Rust 1.89 or later, `build.rs`). It is
//! called only from the feature-enabled function, with a `Features` token ([`x86::Features`],
//! `x86::avx512::Features`, [`aarch64::Features`]) as proof that the CPU has the features, and
//! must give the portable `run`'s result bit for bit (same operations per lane, same order;
//! tested per kernel, the AArch64 ones under qemu by `scripts/check_aarch64.sh`).
//!
//! [`SIMD_ENV`] caps the widest level used (`portable`, `avx2` or `neon`, `avx512`: the
//! default, the widest the CPU has), so one binary can measure each level on one CPU
//! (`scripts/bench_dump_compare.sh` does); the answer is the same at every level. It is read
//! once when the process starts (`crate::process::cap_vectors`, [`set_cap`]), never by an
//! engine.

use std::sync::atomic::{AtomicU8, Ordering};

/// A hot loop. `run` must be `#[inline(always)]` (and everything it calls in the loop too), so
/// that it is compiled into the feature-enabled caller.
pub trait Kernel: Sized {
    type Output;
    fn run(self) -> Self::Output;

    /// The loop with explicit vectors, `#[inline(always)]` too; by default `run`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn run_x86(self, _: x86::Features) -> Self::Output {
        self.run()
    }

    /// Whether [`dispatch`] runs `run_x86_512` on a CPU with AVX-512 (a kernel with AVX-512
    /// loops says so; the others stay on AVX2, measured as fast for them).
    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    const AVX512: bool = false;

    /// The loop with AVX-512 vectors, `#[inline(always)]` too. Called only for a kernel with
    /// [`Kernel::AVX512`]; by default its `run_x86`, compiled with AVX-512 enabled (a kernel may
    /// want that for the compiler's own vectorisation without loops of its own).
    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    #[inline(always)]
    fn run_x86_512(self, f: x86::avx512::Features) -> Self::Output {
        self.run_x86(f.avx2())
    }

    /// The loop with NEON vectors, `#[inline(always)]` too; by default `run`.
    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn run_neon(self, _: aarch64::Features) -> Self::Output {
        self.run()
    }
}

/// How far ahead of its loads a kernel asks for data (software prefetch), in bytes. The hardware
/// prefetchers stop at each 4 KiB page, so a kernel reading a mapping straight from the page
/// cache stalls on every page's first lines; asking one page ahead, a line per 64 bytes read,
/// keeps the loads in cache (docs/performance.md, "software prefetch": 1 KiB to 16 KiB
/// measured, 4 KiB best). Harmless on data already in cache.
pub const AHEAD: usize = 4096;

/// The address [`AHEAD`] bytes past `at` in `bytes`, or of its last byte when that is past the
/// end (`None` for no bytes): a prefetch stays inside the caller's slice.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn ahead(bytes: &[u8], at: usize) -> Option<*const u8> {
    let last = bytes.len().checked_sub(1)?;
    Some(bytes[at.saturating_add(AHEAD).min(last)..].as_ptr())
}

/// The environment variable that caps the vectors [`dispatch`] uses (see the module's text).
pub const SIMD_ENV: &str = "NPGX_SIMD";

/// The widest level [`dispatch`] may use (see [`SIMD_ENV`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Cap {
    /// The portable loops only.
    Portable,
    /// AVX2, FMA and F16C, or NEON.
    Vectors,
    /// The widest the CPU has (AVX-512 for the kernels with such loops).
    Widest,
}

impl Cap {
    /// The cap a value of [`SIMD_ENV`] names, ignoring case and surrounding spaces (`None`
    /// for another value).
    pub fn named(value: &str) -> Option<Cap> {
        let v = value.trim().to_ascii_lowercase();
        match v.as_str() {
            "portable" => Some(Cap::Portable),
            "avx2" | "neon" => Some(Cap::Vectors),
            "avx512" | "widest" => Some(Cap::Widest),
            _ => None,
        }
    }
}

/// The cap [`set_cap`] made ([`Cap`] as its `u8`): the widest until then.
static CAP: AtomicU8 = AtomicU8::new(Cap::Widest as u8);

/// Caps the vectors of every later [`dispatch`]: once, when the process starts.
pub fn set_cap(cap: Cap) {
    CAP.store(cap as u8, Ordering::Relaxed);
}

fn cap() -> Cap {
    match CAP.load(Ordering::Relaxed) {
        0 => Cap::Portable,
        1 => Cap::Vectors,
        _ => Cap::Widest,
    }
}

/// Runs `k` with the widest vectors this CPU has (up to the [`set_cap`] cap).
pub fn dispatch<K: Kernel>(k: K) -> K::Output {
    let cap = cap();
    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    if K::AVX512 && cap == Cap::Widest && x86::avx512::available() {
        #[cfg(test)]
        VECTOR_RUNS.with(|n| n.set(n.get() + 1));
        // SAFETY: the CPU has every feature `avx512::run_simd` is compiled for.
        return unsafe { x86::avx512::run_simd(k) };
    }
    #[cfg(target_arch = "x86_64")]
    if cap >= Cap::Vectors && x86::available() {
        #[cfg(test)]
        VECTOR_RUNS.with(|n| n.set(n.get() + 1));
        // SAFETY: the CPU has every feature `run_simd` is compiled for (`available` and the
        // `target_feature` attributes come from the same list).
        return unsafe { x86::run_simd(k) };
    }
    #[cfg(target_arch = "aarch64")]
    if cap >= Cap::Vectors && aarch64::available() {
        #[cfg(test)]
        VECTOR_RUNS.with(|n| n.set(n.get() + 1));
        // SAFETY: as above, for `aarch64::run_simd`.
        return unsafe { aarch64::run_simd(k) };
    }
    k.run()
}

/// Test support: `k` run on every vector path this CPU has, each named (AVX2, and AVX-512 for a
/// kernel with such loops; NEON), whatever [`SIMD_ENV`] says: what the equality tests compare
/// with the portable path.
#[cfg(test)]
pub fn on_each_vector_path<K: Kernel + Clone>(k: K) -> Vec<(&'static str, K::Output)> {
    let mut out = Vec::new();
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: checked just above.
        out.push(("avx2", unsafe { x86::run_simd(k.clone()) }));
    }
    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    if K::AVX512 && x86::avx512::available() {
        // SAFETY: checked just above.
        out.push(("avx512", unsafe { x86::avx512::run_simd(k.clone()) }));
    }
    #[cfg(target_arch = "aarch64")]
    if aarch64::available() {
        // SAFETY: checked just above.
        out.push(("neon", unsafe { aarch64::run_simd(k.clone()) }));
    }
    let _ = k;
    out
}

#[cfg(test)]
thread_local! {
    /// How many kernels [`dispatch`] ran on the vector path in this thread.
    static VECTOR_RUNS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Test support for the equality tests of the kernels (vector path against portable path):
/// whether this CPU runs the vector path. Where it does not, such a test would compare the
/// portable path with itself, so it is skipped, and says so on the test's stderr past libtest's
/// capture (the note shows in every `cargo test` run).
#[cfg(test)]
pub fn vector_path_or_skip(test: &str) -> bool {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if aarch64::available() {
        return true;
    }
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "{test}: SKIPPED, this CPU has no vector path (AVX2, FMA and F16C, or little-endian NEON); \
         only the portable one runs"
    );
    false
}

/// Test support: runs `f` and asserts that it ran at least one kernel on the vector path of
/// [`dispatch`] (call it after [`vector_path_or_skip`]).
#[cfg(test)]
pub fn on_vector_path<T>(f: impl FnOnce() -> T) -> T {
    let before = VECTOR_RUNS.with(std::cell::Cell::get);
    let out = f();
    assert!(
        VECTOR_RUNS.with(std::cell::Cell::get) > before,
        "the vector path did not run"
    );
    out
}

/// The feature-enabled entry of one architecture: its `Features` token, `FEATURES`,
/// `available()` (the run-time check, through `std::arch::$detect!`, and `$extra`, a condition
/// known at compile time) and `run_simd` (`Kernel::$run` inlined under those features).
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
macro_rules! features {
    ($detect:ident, $extra:expr, $run:ident: $($feature:tt),+) => {
        /// Proof that the CPU has every feature of [`run_simd`]: only [`run_simd`] makes one, so
        /// code holding it may call the `std::arch` intrinsics of those features.
        #[derive(Clone, Copy)]
        pub struct Features(());

        /// The target features of [`run_simd`].
        #[cfg(test)]
        pub const FEATURES: &[&str] = &[$($feature),+];

        /// Whether this CPU has every feature in the list.
        pub fn available() -> bool {
            $extra && $(std::arch::$detect!($feature))&&+
        }

        /// `k.run_…()` (inlined), compiled for these features.
        ///
        /// # Safety
        /// Only when [`available`] returned true.
        $(#[target_feature(enable = $feature)])+
        pub unsafe fn run_simd<K: Kernel>(k: K) -> K::Output {
            k.$run(Features(()))
        }
    };
}

#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::Kernel;

    features!(is_x86_feature_detected, true, run_x86: "avx2", "fma", "f16c");

    /// The AVX-512 level: AVX2, FMA and F16C (the level below, whose loops it may call) and
    /// AVX-512F.
    #[cfg(npgx_avx512)]
    #[clippy::msrv = "1.89"]
    pub mod avx512 {
        use super::super::Kernel;

        features!(is_x86_feature_detected, super::available(), run_x86_512: "avx2", "fma", "f16c", "avx512f");

        impl Features {
            /// The AVX2 token: this level includes that one's features.
            #[inline(always)]
            pub fn avx2(self) -> super::Features {
                super::Features(())
            }
        }
    }

    impl Features {
        /// Asks for the cache line [`super::AHEAD`] bytes past `at` in `bytes` (software
        /// prefetch; see [`super::ahead`]).
        #[inline(always)]
        pub fn prefetch(self, bytes: &[u8], at: usize) {
            if let Some(p) = super::ahead(bytes, at) {
                // SAFETY: `p` points into `bytes`; a prefetch only hints the cache and never
                // faults (SSE, part of every x86-64).
                unsafe {
                    std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast())
                };
            }
        }
    }
}

#[cfg(target_arch = "aarch64")]
pub mod aarch64 {
    use super::Kernel;
    use std::arch::aarch64::{float32x4_t, uint16x8_t};

    // The kernels read the dump's little-endian bytes straight into vectors: on a big-endian
    // AArch64 they stay off and the portable loops run.
    features!(is_aarch64_feature_detected, cfg!(target_endian = "little"), run_neon: "neon");

    impl Features {
        /// Asks for the cache line [`super::AHEAD`] bytes past `at` in `bytes` (software
        /// prefetch, `PRFM PLDL1KEEP`; see [`super::ahead`]).
        #[inline(always)]
        pub fn prefetch(self, bytes: &[u8], at: usize) {
            if let Some(p) = super::ahead(bytes, at) {
                // SAFETY: `p` points into `bytes`; PRFM only hints the cache, never faults and
                // writes no register or memory.
                unsafe {
                    std::arch::asm!(
                        "prfm pldl1keep, [{p}]",
                        p = in(reg) p,
                        options(readonly, nostack, preserves_flags),
                    );
                }
            }
        }

        /// The eight fp16 values of `h` (bit patterns) as f32, exactly: FCVTL and FCVTL2, the
        /// hardware conversion of Armv8.0 NEON, in `asm!` because Rust's intrinsic for it
        /// (`vcvt_f32_f16`) is newer than the crate's `rust-version`. Values are the portable
        /// decoder's, NaN payloads aside (a signalling NaN comes back quiet).
        #[inline(always)]
        pub fn f16_to_f32(self, h: uint16x8_t) -> (float32x4_t, float32x4_t) {
            let (low, high);
            // SAFETY: `self` proves NEON; the instructions touch these registers only (and
            // may raise FPSR's cumulative flags, which `asm!` does not promise to keep).
            unsafe {
                std::arch::asm!(
                    "fcvtl {low:v}.4s, {h:v}.4h",
                    "fcvtl2 {high:v}.4s, {h:v}.8h",
                    h = in(vreg) h,
                    low = out(vreg) low,
                    high = out(vreg) high,
                    options(pure, nomem, nostack),
                );
            }
            (low, high)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Cap;

    #[test]
    fn the_cap_is_named_by_the_environment_value() {
        assert_eq!(Cap::named("portable"), Some(Cap::Portable));
        assert_eq!(Cap::named("AVX2"), Some(Cap::Vectors));
        assert_eq!(Cap::named(" neon "), Some(Cap::Vectors));
        assert_eq!(Cap::named("avx512"), Some(Cap::Widest));
        for unknown in ["", "sse9", "avx"] {
            assert_eq!(Cap::named(unknown), None, "{unknown:?}");
        }
    }

    /// The files whose hot loops run under [`super::dispatch`].
    const KERNEL_SOURCES: [&str; 8] = [
        include_str!("simd.rs"),
        include_str!("scan/stats.rs"),
        include_str!("scan/stats/neon.rs"),
        include_str!("dump/values.rs"),
        include_str!("compare/metrics.rs"),
        include_str!("compare/metrics/neon.rs"),
        include_str!("compare/metrics/avx2.rs"),
        include_str!("compare/metrics/avx512.rs"),
    ];

    #[test]
    fn every_enabled_target_feature_is_checked_at_run_time() {
        // The attributes and the check are generated from each architecture's one list; no
        // feature may be enabled anywhere else in the crate's hot loops.
        for src in KERNEL_SOURCES {
            assert_eq!(src.matches(concat!("enable", " = \"")).count(), 0);
        }
        // x86-64: the AVX2 level and the AVX-512 one.
        for (detect, levels) in [
            ("is_x86_feature_detected", 2),
            ("is_aarch64_feature_detected", 1),
        ] {
            let call = format!("{}!({detect},", "features");
            assert_eq!(
                include_str!("simd.rs").matches(&call).count(),
                levels,
                "{detect}"
            );
        }
        #[cfg(target_arch = "x86_64")]
        {
            use super::x86::{available, FEATURES};
            assert_eq!(FEATURES, ["avx2", "fma", "f16c"]);
            let detected = [
                std::is_x86_feature_detected!("avx2"),
                std::is_x86_feature_detected!("fma"),
                std::is_x86_feature_detected!("f16c"),
            ];
            assert_eq!(available(), detected.iter().all(|&d| d));
            #[cfg(npgx_avx512)]
            {
                use super::x86::avx512;
                assert_eq!(avx512::FEATURES, ["avx2", "fma", "f16c", "avx512f"]);
                assert_eq!(
                    avx512::available(),
                    available() && std::is_x86_feature_detected!("avx512f")
                );
            }
        }
        #[cfg(target_arch = "aarch64")]
        {
            use super::aarch64::{available, FEATURES};
            assert_eq!(FEATURES, ["neon"]);
            let detected = std::arch::is_aarch64_feature_detected!("neon");
            assert_eq!(available(), detected && cfg!(target_endian = "little"));
        }
    }
}
