//! The one run-time dispatch to wider vectors (AVX2 and F16C on x86-64), for the hot loops of
//! `dump-scan` (statistics, [`super::stats`]) and `dump-compare` (metrics).
//!
//! A hot loop is written once, portably, as a [`Kernel`] whose [`Kernel::run`] is
//! `#[inline(always)]`. [`dispatch`] runs it inlined into a function compiled with the target
//! features when the CPU has them, and as is otherwise. One list of features feeds both the
//! `#[target_feature]` attributes and the run-time check, so the check cannot miss one. FMA is
//! not in it: Rust never fuses a multiply and an add on its own, so it would buy nothing (and
//! results stay bit-identical to the portable build).

/// A hot loop. `run` must be `#[inline(always)]` (and everything it calls in the loop too), so
/// that it is compiled into the feature-enabled caller.
pub trait Kernel {
    type Output;
    fn run(self) -> Self::Output;
}

/// Runs `k` with the widest vectors this CPU has.
pub fn dispatch<K: Kernel>(k: K) -> K::Output {
    #[cfg(target_arch = "x86_64")]
    if x86::available() {
        // SAFETY: the CPU has every feature `run_simd` is compiled for (`available` and the
        // `target_feature` attributes come from the same list).
        return unsafe { x86::run_simd(k) };
    }
    k.run()
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::Kernel;

    macro_rules! features {
        ($($feature:tt),+) => {
            /// The target features of [`run_simd`].
            #[cfg(test)]
            pub const FEATURES: &[&str] = &[$($feature),+];

            /// Whether this CPU has every feature in the list.
            pub fn available() -> bool {
                $(std::is_x86_feature_detected!($feature))&&+
            }

            /// `k.run()` (inlined), compiled for these features.
            ///
            /// # Safety
            /// Only when [`available`] returned true.
            $(#[target_feature(enable = $feature)])+
            pub unsafe fn run_simd<K: Kernel>(k: K) -> K::Output {
                k.run()
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
