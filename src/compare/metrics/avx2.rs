//! [`super::Portable`]'s lane loops with AVX2 vectors (x86-64): `impl LaneSums for
//! simd::x86::Features` and its loops, one function each (moments, errors, KL terms; the last
//! two only over the vectors with a pair that differs). Every function is `#[inline(always)]`,
//! so they compile into the AVX2 kernel that calls [`LaneSums::lanes`]. A vector of four f64
//! holds half of the [`LANES`] ([`HALF`]): each loop runs once per half. The same operations per
//! lane in the same order as the portable loop, so the lanes are its own bit for bit; a fused
//! multiply-add only for the moments' products of values that multiply exactly (`EXACT`), where
//! it rounds as the multiplication and the addition do.

use std::arch::x86_64::*;

use npgx_parsers::dump::dtype::Element;

use super::{
    put, vector_lanes, Differ, LaneSums, Lanes, VectorLoops, ATANH_SERIES, CLOSE_TERMS, EPS, HALF,
    LANES, LN2_HI, LN2_LO, LN_SERIES_INVERSE_LIMIT, MANTISSA, ONE,
};
use crate::dump::values::decode_to_x86;
use crate::simd::x86::Features;

/// The lanes of a vector.
#[inline(always)]
unsafe fn out(v: __m256d) -> [f64; HALF] {
    let mut a = [0f64; HALF];
    _mm256_storeu_pd(a.as_mut_ptr(), v);
    a
}
/// Integer counts as `f64` lanes.
#[inline(always)]
unsafe fn count(v: __m256i) -> [f64; HALF] {
    let mut a = [0i64; HALF];
    _mm256_storeu_si256(a.as_mut_ptr().cast(), v);
    a.map(|c| c as f64)
}

/// `HALF` golden and target values at `i`.
///
/// # Safety
/// AVX2, and `i + HALF` within both slices.
#[inline(always)]
unsafe fn load(g: &[f64], t: &[f64], i: usize) -> (__m256d, __m256d) {
    (
        _mm256_loadu_pd(g.as_ptr().add(i)),
        _mm256_loadu_pd(t.as_ptr().add(i)),
    )
}

/// [`super::ln_normal`] in four lanes, the same operations in the same order.
///
/// # Safety
/// AVX2; every lane a normal finite number > 0 (other lanes give garbage, not UB).
#[inline(always)]
unsafe fn ln_normal(x: __m256d) -> __m256d {
    let set = _mm256_set1_pd;
    let bits = _mm256_castpd_si256(x);
    // The biased exponent as f64, exactly: put it in the mantissa of 2⁵² and subtract 2⁵².
    let two52 = set(4_503_599_627_370_496.0);
    let biased = _mm256_castsi256_pd(_mm256_or_si256(
        _mm256_srli_epi64::<52>(bits),
        _mm256_castpd_si256(two52),
    ));
    let e = _mm256_sub_pd(_mm256_sub_pd(biased, two52), set(1023.0));
    let m = _mm256_castsi256_pd(_mm256_or_si256(
        _mm256_and_si256(bits, _mm256_set1_epi64x(MANTISSA as i64)),
        _mm256_set1_epi64x(ONE as i64),
    ));
    let big = _mm256_cmp_pd::<_CMP_GT_OQ>(m, set(std::f64::consts::SQRT_2));
    let m = _mm256_blendv_pd(m, _mm256_mul_pd(m, set(0.5)), big);
    let e = _mm256_add_pd(e, _mm256_and_pd(big, set(1.0)));
    let f = _mm256_sub_pd(m, set(1.0));
    let s = _mm256_div_pd(f, _mm256_add_pd(set(2.0), f));
    let z = _mm256_mul_pd(s, s);
    let mut p = set(ATANH_SERIES[ATANH_SERIES.len() - 1]);
    for &c in ATANH_SERIES[..ATANH_SERIES.len() - 1].iter().rev() {
        p = _mm256_add_pd(set(c), _mm256_mul_pd(z, p));
    }
    let tail = _mm256_add_pd(
        _mm256_mul_pd(_mm256_mul_pd(set(2.0), s), p),
        _mm256_mul_pd(e, set(LN2_LO)),
    );
    _mm256_add_pd(_mm256_mul_pd(e, set(LN2_HI)), tail)
}

/// [`super::Portable`]'s loops written with AVX2 vectors of four `f64` (half the lanes):
/// the same operations per lane in the same order, no fused multiply-add, so the sums are
/// bit-identical. Differences from the compiler's version: no blends or shuffles; three loops
/// over the (L1-resident) chunk instead of one, so that each loop's accumulators and constants
/// fit the 16 vector registers (one loop spilled accumulators to the stack); the counts as
/// integers; the errors and KL loops only over the vectors where a pair differs ([`Differ`]:
/// after a low-precision round trip most pairs are equal); the KL terms without branches per
/// pair, only per vector: the close series where a lane has a close ratio, `ln_normal` where a
/// lane has a far one.
impl LaneSums for Features {
    #[inline(always)]
    fn decode(self, el: Element, bytes: &[u8], out: &mut [f64]) -> usize {
        decode_to_x86(self, el, bytes, out)
    }

    #[inline(always)]
    fn lanes(self, g: &[f64], t: &[f64], k_g: f64, k_t: f64, exact: bool) -> Lanes {
        vector_lanes(self, g, t, (k_g, k_t), exact)
    }
}

/// The loops, one half of the lanes at a time.
impl VectorLoops for Features {
    const PARTS: usize = 2;

    #[inline(always)]
    unsafe fn moments<const EXACT: bool>(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        n: usize,
        k: (f64, f64),
        h: usize,
        differ: &mut Differ,
    ) {
        let (zero, sign) = (_mm256_setzero_pd(), _mm256_set1_pd(-0.0));
        let (kg, kt) = (_mm256_set1_pd(k.0), _mm256_set1_pd(k.1));
        let [mut dot, mut gg, mut tt, mut sum_ag, mut sum_at] = [zero; 5];
        let [mut s1_g, mut s2_g, mut s1_t, mut s2_t] = [zero; 4];
        let vectors = n / LANES;
        for (w, word) in differ.0.iter_mut().enumerate() {
            let mut bits = 0u64;
            for b in 0..vectors.saturating_sub(w * 64).min(64) {
                let (gv, tv) = load(g, t, (w * 64 + b) * LANES + h * HALF);
                if EXACT {
                    // round(a·b + c) = round(round(a·b) + c) when a·b is exact.
                    dot = _mm256_fmadd_pd(gv, tv, dot);
                    gg = _mm256_fmadd_pd(gv, gv, gg);
                    tt = _mm256_fmadd_pd(tv, tv, tt);
                } else {
                    dot = _mm256_add_pd(dot, _mm256_mul_pd(gv, tv));
                    gg = _mm256_add_pd(gg, _mm256_mul_pd(gv, gv));
                    tt = _mm256_add_pd(tt, _mm256_mul_pd(tv, tv));
                }
                sum_ag = _mm256_add_pd(sum_ag, _mm256_andnot_pd(sign, gv));
                sum_at = _mm256_add_pd(sum_at, _mm256_andnot_pd(sign, tv));
                let (dg, dt) = (_mm256_sub_pd(gv, kg), _mm256_sub_pd(tv, kt));
                s1_g = _mm256_add_pd(s1_g, dg);
                s2_g = _mm256_add_pd(s2_g, _mm256_mul_pd(dg, dg));
                s1_t = _mm256_add_pd(s1_t, dt);
                s2_t = _mm256_add_pd(s2_t, _mm256_mul_pd(dt, dt));
                let ne = _mm256_cmp_pd::<_CMP_NEQ_UQ>(_mm256_sub_pd(tv, gv), zero);
                bits |= u64::from(_mm256_movemask_pd(ne) != 0) << b;
            }
            *word |= bits;
        }
        let y = &mut x.sums;
        for (lanes, v) in [
            (&mut y.dot, dot),
            (&mut y.gg, gg),
            (&mut y.tt, tt),
            (&mut y.sum_ag, sum_ag),
            (&mut y.sum_at, sum_at),
            (&mut x.s1_g, s1_g),
            (&mut x.s2_g, s2_g),
            (&mut x.s1_t, s1_t),
            (&mut x.s2_t, s2_t),
        ] {
            put(lanes, h, out(v));
        }
    }

    #[inline(always)]
    unsafe fn errors(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        h: usize,
    ) {
        let (zero, sign) = (_mm256_setzero_pd(), _mm256_set1_pd(-0.0));
        let eps = _mm256_set1_pd(EPS);
        let (p001, p005) = (_mm256_set1_pd(0.001), _mm256_set1_pd(0.005));
        let [mut max_abs, mut sum_abs, mut sum_sq, mut max_rel, mut sum_rel] = [zero; 5];
        let (mut n001, mut n005) = (_mm256_setzero_si256(), _mm256_setzero_si256());
        for i in starts {
            let (gv, tv) = load(g, t, i + h * HALF);
            let d = _mm256_sub_pd(tv, gv);
            let ad = _mm256_andnot_pd(sign, d);
            // max(a, b) is `a > b ? a : b`, as `step` (a NaN `ad` keeps the maximum).
            max_abs = _mm256_max_pd(ad, max_abs);
            sum_abs = _mm256_add_pd(sum_abs, ad);
            sum_sq = _mm256_add_pd(sum_sq, _mm256_mul_pd(d, d));
            let rel = _mm256_div_pd(ad, _mm256_add_pd(_mm256_andnot_pd(sign, gv), eps));
            max_rel = _mm256_max_pd(rel, max_rel);
            sum_rel = _mm256_add_pd(sum_rel, rel);
            // A true comparison is all ones, -1 as an integer.
            let gt = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(rel, p001));
            n001 = _mm256_sub_epi64(n001, gt);
            let gt = _mm256_castpd_si256(_mm256_cmp_pd::<_CMP_GT_OQ>(rel, p005));
            n005 = _mm256_sub_epi64(n005, gt);
        }
        let y = &mut x.sums;
        for (lanes, v) in [
            (&mut y.max_abs, max_abs),
            (&mut y.sum_abs, sum_abs),
            (&mut y.sum_sq, sum_sq),
            (&mut y.max_rel, max_rel),
            (&mut y.sum_rel, sum_rel),
        ] {
            put(lanes, h, out(v));
        }
        put(&mut y.gt_0_001, h, count(n001));
        put(&mut y.gt_0_005, h, count(n005));
    }

    #[inline(always)]
    unsafe fn kl_terms(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        h: usize,
    ) {
        let (zero, sign) = (_mm256_setzero_pd(), _mm256_set1_pd(-0.0));
        let inverse_limit = _mm256_set1_pd(LN_SERIES_INVERSE_LIMIT);
        let c: [__m256d; CLOSE_TERMS] = std::array::from_fn(|i| _mm256_set1_pd(ATANH_SERIES[i]));
        let mut kl = zero;
        let mut undefined = 0;
        for i in starts {
            let (gv, tv) = load(g, t, i + h * HALF);
            let (ag, at) = (_mm256_andnot_pd(sign, gv), _mm256_andnot_pd(sign, tv));
            let active = _mm256_and_pd(
                _mm256_cmp_pd::<_CMP_GT_OQ>(ag, zero),
                _mm256_cmp_pd::<_CMP_NEQ_UQ>(ag, at),
            );
            let t_zero = _mm256_cmp_pd::<_CMP_EQ_OQ>(at, zero);
            undefined |= _mm256_movemask_pd(_mm256_and_pd(active, t_zero));
            let used = _mm256_andnot_pd(t_zero, active);
            if _mm256_movemask_pd(used) == 0 {
                continue;
            }
            // As `ln_ratio`: the series where 32·|a − b| < b, else `ln_positive(a / b)`;
            // each only when a lane needs it.
            let diff = _mm256_sub_pd(ag, at);
            let close = _mm256_cmp_pd::<_CMP_LT_OQ>(
                _mm256_mul_pd(_mm256_andnot_pd(sign, diff), inverse_limit),
                at,
            );
            let mut ln = zero;
            if _mm256_movemask_pd(_mm256_and_pd(close, used)) != 0 {
                let u = _mm256_div_pd(diff, _mm256_add_pd(ag, at));
                let z = _mm256_mul_pd(u, u);
                let mut p = c[c.len() - 1];
                for &k in c[..c.len() - 1].iter().rev() {
                    p = _mm256_add_pd(k, _mm256_mul_pd(z, p));
                }
                ln = _mm256_mul_pd(_mm256_mul_pd(_mm256_set1_pd(2.0), u), p);
            }
            let far = _mm256_andnot_pd(close, used);
            if _mm256_movemask_pd(far) != 0 {
                // `ln_normal` in all four lanes, then the library's `ln` for the rare
                // ratios that are not normal finite numbers.
                let ratio = _mm256_div_pd(ag, at);
                ln = _mm256_blendv_pd(ln, ln_normal(ratio), far);
                let normal = _mm256_and_pd(
                    _mm256_cmp_pd::<_CMP_GE_OQ>(ratio, _mm256_set1_pd(f64::MIN_POSITIVE)),
                    _mm256_cmp_pd::<_CMP_LE_OQ>(ratio, _mm256_set1_pd(f64::MAX)),
                );
                let odd = _mm256_movemask_pd(_mm256_andnot_pd(normal, far));
                if odd != 0 {
                    let (mut lanes, x) = (out(ln), out(ratio));
                    for (l, v) in lanes.iter_mut().enumerate() {
                        if odd & (1 << l) != 0 {
                            *v = x[l].ln();
                        }
                    }
                    ln = _mm256_loadu_pd(lanes.as_ptr());
                }
            }
            // Unused lanes add +0.0, which leaves every sum but -0.0 unchanged (and a lane
            // sum starting at +0.0 never becomes -0.0).
            kl = _mm256_add_pd(kl, _mm256_and_pd(used, _mm256_mul_pd(ag, ln)));
        }
        put(&mut x.sums.kl, h, out(kl));
        x.kl_undefined |= undefined != 0;
    }
}
