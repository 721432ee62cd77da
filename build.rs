//! Build-time probe: whether this compiler has the AVX-512 intrinsics and `target_feature`
//! (stable since Rust 1.89; the crate's `rust-version` is older). With them, `cfg(npgx_avx512)`
//! compiles dump-compare's AVX-512 kernels (`src/simd.rs`, `src/compare/metrics/avx512.rs`);
//! without them the AVX2 kernels are the widest, and every metric is the same bit for bit.

fn main() {
    println!("cargo:rustc-check-cfg=cfg(npgx_avx512)");
    let ac = autocfg::new();
    if ac.probe_rustc_version(1, 89) {
        println!("cargo:rustc-cfg=npgx_avx512");
    }
    autocfg::rerun_path("build.rs");
}
