//! [`super::Portable`]'s lane loops with AVX-512 vectors (x86-64, `cfg(npgx_avx512)`):
//! `impl LaneSums for simd::x86::avx512::Features`, the loops of `metrics/avx2.rs` with one
//! vector of eight f64 for all [`LANES`] (AVX2 takes them in two halves), comparisons into mask
//! registers. The same operations per lane in the same order, so the lanes are the portable ones
//! bit for bit; a fused multiply-add only where it rounds as the portable multiplication and
//! addition do (the moments' products of values that multiply exactly, `EXACT`: fp16, bf16,
//! fp32 and the narrower types; 8–12 % of the compute-only pass, docs/performance.md). Decoding sixteen values a step
//! (`decode_to_x86_512`).
//!
//! Twice the lanes per instruction matter where the FP units are 512 bits wide: on the Ice
//! Lake Xeon of docs/performance.md two 512-bit adds retire per cycle, as two 256-bit ones do,
//! so the moments loop (every pair, twenty additions and multiplications per vector) takes half
//! the instructions.

use std::arch::x86_64::*;

use npgx_parsers::dump::dtype::Element;

use super::{
    vector_lanes, Differ, LaneSums, Lanes, VectorLoops, ATANH_SERIES, CLOSE_TERMS, EPS, LANES,
    LN2_HI, LN2_LO, LN_SERIES_INVERSE_LIMIT, MANTISSA, ONE,
};
use crate::dump::values::decode_to_x86_512;
use crate::simd::x86::avx512::Features;

/// The lanes of a vector.
///
/// # Safety
/// AVX-512F.
#[inline(always)]
unsafe fn out(v: __m512d) -> [f64; LANES] {
    let mut a = [0f64; LANES];
    _mm512_storeu_pd(a.as_mut_ptr(), v);
    a
}

/// Integer counts as `f64` lanes.
///
/// # Safety
/// AVX-512F.
#[inline(always)]
unsafe fn count(v: __m512i) -> [f64; LANES] {
    let mut a = [0i64; LANES];
    _mm512_storeu_si512(a.as_mut_ptr().cast(), v);
    a.map(|c| c as f64)
}

/// `LANES` golden and target values at `i`.
///
/// # Safety
/// AVX-512F, and `i + LANES` within both slices.
#[inline(always)]
unsafe fn load(g: &[f64], t: &[f64], i: usize) -> (__m512d, __m512d) {
    (
        _mm512_loadu_pd(g.as_ptr().add(i)),
        _mm512_loadu_pd(t.as_ptr().add(i)),
    )
}

/// The sign bit cleared, as `f64::abs` (NaN too).
///
/// # Safety
/// AVX-512F.
#[inline(always)]
unsafe fn abs(v: __m512d) -> __m512d {
    _mm512_abs_pd(v)
}

/// [`super::ln_normal`] in eight lanes, the same operations in the same order.
///
/// # Safety
/// AVX-512F; every lane a normal finite number > 0 (other lanes give garbage, not UB).
#[inline(always)]
unsafe fn ln_normal(x: __m512d) -> __m512d {
    let set = _mm512_set1_pd;
    let bits = _mm512_castpd_si512(x);
    // The biased exponent as f64, exactly: put it in the mantissa of 2⁵² and subtract 2⁵².
    let two52 = set(4_503_599_627_370_496.0);
    let biased = _mm512_castsi512_pd(_mm512_or_si512(
        _mm512_srli_epi64::<52>(bits),
        _mm512_castpd_si512(two52),
    ));
    let e = _mm512_sub_pd(_mm512_sub_pd(biased, two52), set(1023.0));
    let m = _mm512_castsi512_pd(_mm512_or_si512(
        _mm512_and_si512(bits, _mm512_set1_epi64(MANTISSA as i64)),
        _mm512_set1_epi64(ONE as i64),
    ));
    let big = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(m, set(std::f64::consts::SQRT_2));
    let m = _mm512_mask_blend_pd(big, m, _mm512_mul_pd(m, set(0.5)));
    // + 1.0 where big, + 0.0 elsewhere (as AVX2's masked add).
    let e = _mm512_add_pd(e, _mm512_maskz_mov_pd(big, set(1.0)));
    let f = _mm512_sub_pd(m, set(1.0));
    let s = _mm512_div_pd(f, _mm512_add_pd(set(2.0), f));
    let z = _mm512_mul_pd(s, s);
    let mut p = set(ATANH_SERIES[ATANH_SERIES.len() - 1]);
    for &c in ATANH_SERIES[..ATANH_SERIES.len() - 1].iter().rev() {
        p = _mm512_add_pd(set(c), _mm512_mul_pd(z, p));
    }
    let tail = _mm512_add_pd(
        _mm512_mul_pd(_mm512_mul_pd(set(2.0), s), p),
        _mm512_mul_pd(e, set(LN2_LO)),
    );
    _mm512_add_pd(_mm512_mul_pd(e, set(LN2_HI)), tail)
}

/// The AVX2 loops of `metrics/avx2.rs` with one vector for all eight lanes (see the module's
/// text); the same lanes bit for bit.
impl LaneSums for Features {
    #[inline(always)]
    fn decode(self, el: Element, bytes: &[u8], out: &mut [f64]) -> usize {
        decode_to_x86_512(self, el, bytes, out)
    }

    #[inline(always)]
    fn lanes(self, g: &[f64], t: &[f64], k_g: f64, k_t: f64, exact: bool) -> Lanes {
        vector_lanes(self, g, t, (k_g, k_t), exact)
    }
}

/// The loops, all the lanes in one vector.
impl VectorLoops for Features {
    const PARTS: usize = 1;

    #[inline(always)]
    unsafe fn moments<const EXACT: bool>(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        n: usize,
        k: (f64, f64),
        _: usize,
        differ: &mut Differ,
    ) {
        let zero = _mm512_setzero_pd();
        let (kg, kt) = (_mm512_set1_pd(k.0), _mm512_set1_pd(k.1));
        let [mut dot, mut gg, mut tt, mut sum_ag, mut sum_at] = [zero; 5];
        let [mut s1_g, mut s2_g, mut s1_t, mut s2_t] = [zero; 4];
        let vectors = n / LANES;
        for (w, word) in differ.0.iter_mut().enumerate() {
            let mut bits = 0u64;
            for b in 0..vectors.saturating_sub(w * 64).min(64) {
                let (gv, tv) = load(g, t, (w * 64 + b) * LANES);
                if EXACT {
                    // round(a·b + c) = round(round(a·b) + c) when a·b is exact.
                    dot = _mm512_fmadd_pd(gv, tv, dot);
                    gg = _mm512_fmadd_pd(gv, gv, gg);
                    tt = _mm512_fmadd_pd(tv, tv, tt);
                } else {
                    dot = _mm512_add_pd(dot, _mm512_mul_pd(gv, tv));
                    gg = _mm512_add_pd(gg, _mm512_mul_pd(gv, gv));
                    tt = _mm512_add_pd(tt, _mm512_mul_pd(tv, tv));
                }
                sum_ag = _mm512_add_pd(sum_ag, abs(gv));
                sum_at = _mm512_add_pd(sum_at, abs(tv));
                let (dg, dt) = (_mm512_sub_pd(gv, kg), _mm512_sub_pd(tv, kt));
                s1_g = _mm512_add_pd(s1_g, dg);
                s2_g = _mm512_add_pd(s2_g, _mm512_mul_pd(dg, dg));
                s1_t = _mm512_add_pd(s1_t, dt);
                s2_t = _mm512_add_pd(s2_t, _mm512_mul_pd(dt, dt));
                let ne = _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(_mm512_sub_pd(tv, gv), zero);
                bits |= u64::from(ne != 0) << b;
            }
            *word |= bits;
        }
        let y = &mut x.sums;
        (y.dot, y.gg, y.tt, y.sum_ag, y.sum_at) =
            (out(dot), out(gg), out(tt), out(sum_ag), out(sum_at));
        (x.s1_g, x.s2_g, x.s1_t, x.s2_t) = (out(s1_g), out(s2_g), out(s1_t), out(s2_t));
    }

    #[inline(always)]
    unsafe fn errors(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        _: usize,
    ) {
        let zero = _mm512_setzero_pd();
        let eps = _mm512_set1_pd(EPS);
        let (p001, p005) = (_mm512_set1_pd(0.001), _mm512_set1_pd(0.005));
        let [mut max_abs, mut sum_abs, mut sum_sq, mut max_rel, mut sum_rel] = [zero; 5];
        let (mut n001, mut n005) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        let one = _mm512_set1_epi64(1);
        for i in starts {
            let (gv, tv) = load(g, t, i);
            let d = _mm512_sub_pd(tv, gv);
            let ad = abs(d);
            // max(a, b) is `a > b ? a : b`, as `step` (a NaN `ad` keeps the maximum).
            max_abs = _mm512_max_pd(ad, max_abs);
            sum_abs = _mm512_add_pd(sum_abs, ad);
            sum_sq = _mm512_add_pd(sum_sq, _mm512_mul_pd(d, d));
            let rel = _mm512_div_pd(ad, _mm512_add_pd(abs(gv), eps));
            max_rel = _mm512_max_pd(rel, max_rel);
            sum_rel = _mm512_add_pd(sum_rel, rel);
            let gt = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(rel, p001);
            n001 = _mm512_mask_add_epi64(n001, gt, n001, one);
            let gt = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(rel, p005);
            n005 = _mm512_mask_add_epi64(n005, gt, n005, one);
        }
        let y = &mut x.sums;
        (y.max_abs, y.sum_abs, y.sum_sq, y.max_rel, y.sum_rel) = (
            out(max_abs),
            out(sum_abs),
            out(sum_sq),
            out(max_rel),
            out(sum_rel),
        );
        (y.gt_0_001, y.gt_0_005) = (count(n001), count(n005));
    }

    #[inline(always)]
    unsafe fn kl_terms(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        _: usize,
    ) {
        let zero = _mm512_setzero_pd();
        let inverse_limit = _mm512_set1_pd(LN_SERIES_INVERSE_LIMIT);
        let c: [__m512d; CLOSE_TERMS] = std::array::from_fn(|i| _mm512_set1_pd(ATANH_SERIES[i]));
        let mut kl = zero;
        let mut undefined: __mmask8 = 0;
        for i in starts {
            let (gv, tv) = load(g, t, i);
            let (ag, at) = (abs(gv), abs(tv));
            let active = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(ag, zero)
                & _mm512_cmp_pd_mask::<_CMP_NEQ_UQ>(ag, at);
            let t_zero = _mm512_cmp_pd_mask::<_CMP_EQ_OQ>(at, zero);
            undefined |= active & t_zero;
            let used = active & !t_zero;
            if used == 0 {
                continue;
            }
            // As `ln_ratio`: the series where 32·|a − b| < b, else `ln_positive(a / b)`;
            // each only when a lane needs it.
            let diff = _mm512_sub_pd(ag, at);
            let close =
                _mm512_cmp_pd_mask::<_CMP_LT_OQ>(_mm512_mul_pd(abs(diff), inverse_limit), at);
            let mut ln = zero;
            if close & used != 0 {
                let u = _mm512_div_pd(diff, _mm512_add_pd(ag, at));
                let z = _mm512_mul_pd(u, u);
                let mut p = c[c.len() - 1];
                for &k in c[..c.len() - 1].iter().rev() {
                    p = _mm512_add_pd(k, _mm512_mul_pd(z, p));
                }
                ln = _mm512_mul_pd(_mm512_mul_pd(_mm512_set1_pd(2.0), u), p);
            }
            let far = used & !close;
            if far != 0 {
                // `ln_normal` in all eight lanes, then the library's `ln` for the rare
                // ratios that are not normal finite numbers.
                let ratio = _mm512_div_pd(ag, at);
                ln = _mm512_mask_blend_pd(far, ln, ln_normal(ratio));
                let normal =
                    _mm512_cmp_pd_mask::<_CMP_GE_OQ>(ratio, _mm512_set1_pd(f64::MIN_POSITIVE))
                        & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(ratio, _mm512_set1_pd(f64::MAX));
                let odd = far & !normal;
                if odd != 0 {
                    let (mut lanes, r) = (out(ln), out(ratio));
                    for (l, v) in lanes.iter_mut().enumerate() {
                        if odd & (1 << l) != 0 {
                            *v = r[l].ln();
                        }
                    }
                    ln = _mm512_loadu_pd(lanes.as_ptr());
                }
            }
            // Unused lanes add +0.0, which leaves every sum but -0.0 unchanged (and a lane
            // sum starting at +0.0 never becomes -0.0).
            kl = _mm512_add_pd(kl, _mm512_maskz_mov_pd(used, _mm512_mul_pd(ag, ln)));
        }
        x.sums.kl = out(kl);
        x.kl_undefined |= undefined != 0;
    }
}
