//! The one run-time dispatch to wider vectors (AVX2 and F16C on x86-64), for the hot loops of
//! `dump-scan` (statistics, [`super::stats`]) and `dump-compare` (metrics).
//!
//! A hot loop is written once, portably, as a [`Kernel`] whose [`Kernel::run`] is
//! `#[inline(always)]`. [`dispatch`] runs it inlined into a function compiled with the target
//! features when the CPU has them, and as is otherwise. One list of features feeds both the
//! `#[target_feature]` attributes and the run-time check, so the check cannot miss one. FMA is
//! not in it: Rust never fuses a multiply and an add on its own, so it would buy nothing (and
//! results stay bit-identical to the portable build).
//!
//! Where the compiler's vectoriser falls short (it turns lane-wise f64 code into blends and
//! shuffles), a kernel can also provide [`Kernel::run_x86`], the same loop written with
//! `std::arch` vectors. It is called only from the feature-enabled function, with a
//! [`x86::Features`] token as proof that the CPU has the features, and must give the portable
//! `run`'s result bit for bit (same operations per lane, same order; tested per kernel).

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
}

/// Runs `k` with the widest vectors this CPU has.
pub fn dispatch<K: Kernel>(k: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        #[cfg(test)]
        VECTOR_RUNS.with(|n| n.set(n.get() + 1));
        // SAFETY: the CPU has every feature `run_simd` is compiled for (`available` and the
        // `target_feature` attributes come from the same list).
        return unsafe { x86::run_simd(k) };
    }
    k.run()
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
    use std::io::Write as _;
    let _ = writeln!(
        std::io::stderr(),
        "{test}: SKIPPED, this CPU has no vector path (AVX2 and F16C); only the portable one runs"
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

#[cfg(target_arch = "x86_64")]
pub mod x86 {
    use super::Kernel;

    /// Proof that the CPU has every feature of [`run_simd`]: only [`run_simd`] makes one, so code
    /// holding it may call the `std::arch` intrinsics of those features.
    #[derive(Clone, Copy)]
    pub struct Features(());

    macro_rules! features {
        ($($feature:tt),+) => {
            /// The target features of [`run_simd`].
            #[cfg(test)]
            pub const FEATURES: &[&str] = &[$($feature),+];

            /// Whether this CPU has every feature in the list.
            pub fn available() -> bool {
                $(std::is_x86_feature_detected!($feature))&&+
            }

            /// `k.run_x86()` (inlined), compiled for these features.
            ///
            /// # Safety
            /// Only when [`available`] returned true.
            $(#[target_feature(enable = $feature)])+
            pub unsafe fn run_simd<K: Kernel>(k: K) -> K::Output {
                k.run_x86(Features(()))
            }
        };
    }

    features!("avx2", "f16c");

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn every_enabled_target_feature_is_checked_at_run_time() {
            // The attributes and the check are generated from `FEATURES`; no feature may be
            // enabled anywhere else in the crate's hot loops.
            for src in [
                include_str!("simd.rs"),
                include_str!("stats.rs"),
                include_str!("values.rs"),
                include_str!("../compare/metrics.rs"),
            ] {
                assert_eq!(src.matches(concat!("enable", " = \"")).count(), 0);
            }
            assert_eq!(
                include_str!("simd.rs")
                    .matches(concat!("features!", "(\""))
                    .count(),
                1
            );
            assert_eq!(FEATURES, ["avx2", "f16c"]);
            let detected = [
                std::is_x86_feature_detected!("avx2"),
                std::is_x86_feature_detected!("f16c"),
            ];
            assert_eq!(available(), detected.iter().all(|&d| d));
        }
    }
}
