//! [`super::Portable`]'s decoding and lane loops with NEON vectors (AArch64): the AVX2 loops of
//! `impl LaneSums for simd::x86::Features` with 128-bit vectors, bit-identical to the portable
//! ones (the same operations per lane in the same order, no fused multiply-add).
//!
//! A four-lane AVX2 vector is a pair of two-lane NEON vectors here ([`F4`], masks [`M4`]), half
//! of the [`LANES`] ([`HALF`]; each loop runs once per half), so the loops read as the AVX2
//! ones do: loops over the (L1-resident) chunk, the counts as
//! integers, the KL terms branching per vector only, and the errors and KL loops only over the
//! vectors with a differing pair ([`super::Differ`]). A maximum is a compare and a bit select,
//! as the portable `if a > m { a } else { m }` (FMAX would return a NaN). fp16 is decoded by the
//! hardware (FCVTL, [`Features::f16_to_f32`]).

use std::arch::aarch64::*;

use npgx_parsers::dump::dtype::Element;

use super::{
    put, vector_lanes, Differ, LaneSums, Lanes, VectorLoops, ATANH_SERIES, CLOSE_TERMS, EPS, HALF,
    LANES, LN2_HI, LN2_LO, LN_SERIES_INVERSE_LIMIT, MANTISSA, ONE,
};
use crate::dump::values::decode_to;
use crate::simd::aarch64::Features;

/// Four f64 lanes: lanes 0–1 and 2–3.
#[derive(Clone, Copy)]
struct F4(float64x2_t, float64x2_t);

/// Four lane masks, all ones where true: lanes 0–1 and 2–3.
#[derive(Clone, Copy)]
struct M4(uint64x2_t, uint64x2_t);

/// Four integer lane counts.
#[derive(Clone, Copy)]
struct C4(int64x2_t, int64x2_t);

// Every method: `# Safety` NEON (the callers hold a `Features` token).
impl F4 {
    #[inline(always)]
    unsafe fn splat(v: f64) -> F4 {
        F4(vdupq_n_f64(v), vdupq_n_f64(v))
    }
    /// The four values at `i`; `i + HALF` within `s`.
    #[inline(always)]
    unsafe fn load(s: &[f64], i: usize) -> F4 {
        let p = s.as_ptr().add(i);
        F4(vld1q_f64(p), vld1q_f64(p.add(2)))
    }
    #[inline(always)]
    unsafe fn lanes(self) -> [f64; HALF] {
        let mut a = [0f64; HALF];
        vst1q_f64(a.as_mut_ptr(), self.0);
        vst1q_f64(a.as_mut_ptr().add(2), self.1);
        a
    }
    #[inline(always)]
    unsafe fn add(self, o: F4) -> F4 {
        F4(vaddq_f64(self.0, o.0), vaddq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn sub(self, o: F4) -> F4 {
        F4(vsubq_f64(self.0, o.0), vsubq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn mul(self, o: F4) -> F4 {
        F4(vmulq_f64(self.0, o.0), vmulq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn div(self, o: F4) -> F4 {
        F4(vdivq_f64(self.0, o.0), vdivq_f64(self.1, o.1))
    }
    /// The sign bit cleared, as `f64::abs` (NaN too).
    #[inline(always)]
    unsafe fn abs(self) -> F4 {
        F4(vabsq_f64(self.0), vabsq_f64(self.1))
    }
    /// `self > o`, false where either is NaN (as Rust's `>`).
    #[inline(always)]
    unsafe fn gt(self, o: F4) -> M4 {
        M4(vcgtq_f64(self.0, o.0), vcgtq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn lt(self, o: F4) -> M4 {
        M4(vcltq_f64(self.0, o.0), vcltq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn ge(self, o: F4) -> M4 {
        M4(vcgeq_f64(self.0, o.0), vcgeq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn le(self, o: F4) -> M4 {
        M4(vcleq_f64(self.0, o.0), vcleq_f64(self.1, o.1))
    }
    #[inline(always)]
    unsafe fn eq(self, o: F4) -> M4 {
        M4(vceqq_f64(self.0, o.0), vceqq_f64(self.1, o.1))
    }
    /// `self != o`, true where either is NaN (as Rust's `!=`).
    #[inline(always)]
    unsafe fn ne(self, o: F4) -> M4 {
        let eq = self.eq(o);
        let not = |m: uint64x2_t| vreinterpretq_u64_u32(vmvnq_u32(vreinterpretq_u32_u64(m)));
        M4(not(eq.0), not(eq.1))
    }
    /// `if m { a } else { b }` per lane.
    #[inline(always)]
    unsafe fn select(m: M4, a: F4, b: F4) -> F4 {
        F4(vbslq_f64(m.0, a.0, b.0), vbslq_f64(m.1, a.1, b.1))
    }
    /// The value where `m`, +0.0 elsewhere.
    #[inline(always)]
    unsafe fn only(self, m: M4) -> F4 {
        let and = |v: float64x2_t, m: uint64x2_t| {
            vreinterpretq_f64_u64(vandq_u64(vreinterpretq_u64_f64(v), m))
        };
        F4(and(self.0, m.0), and(self.1, m.1))
    }
    /// [`super::ln_normal`] in four lanes, the same operations in the same order; lanes that
    /// are not normal finite numbers > 0 give garbage.
    #[inline(always)]
    unsafe fn ln_normal(self) -> F4 {
        F4(ln_normal2(self.0), ln_normal2(self.1))
    }
}

/// [`super::ln_normal`] in two lanes (see [`F4::ln_normal`]).
///
/// # Safety
/// NEON.
#[inline(always)]
unsafe fn ln_normal2(x: float64x2_t) -> float64x2_t {
    let set = vdupq_n_f64;
    let bits = vreinterpretq_u64_f64(x);
    // The biased exponent, converted exactly, as `(bits >> 52) as f64`.
    let e = vsubq_f64(vcvtq_f64_u64(vshrq_n_u64::<52>(bits)), set(1023.0));
    let m = vreinterpretq_f64_u64(vorrq_u64(
        vandq_u64(bits, vdupq_n_u64(MANTISSA)),
        vdupq_n_u64(ONE),
    ));
    let big = vcgtq_f64(m, set(std::f64::consts::SQRT_2));
    let m = vbslq_f64(big, vmulq_f64(m, set(0.5)), m);
    let e = vbslq_f64(big, vaddq_f64(e, set(1.0)), e);
    let f = vsubq_f64(m, set(1.0));
    let s = vdivq_f64(f, vaddq_f64(set(2.0), f));
    let z = vmulq_f64(s, s);
    let mut p = set(ATANH_SERIES[ATANH_SERIES.len() - 1]);
    for &c in ATANH_SERIES[..ATANH_SERIES.len() - 1].iter().rev() {
        p = vaddq_f64(set(c), vmulq_f64(z, p));
    }
    let tail = vaddq_f64(
        vmulq_f64(vmulq_f64(set(2.0), s), p),
        vmulq_f64(e, set(LN2_LO)),
    );
    vaddq_f64(vmulq_f64(e, set(LN2_HI)), tail)
}

impl M4 {
    #[inline(always)]
    unsafe fn and(self, o: M4) -> M4 {
        M4(vandq_u64(self.0, o.0), vandq_u64(self.1, o.1))
    }
    /// `self` and not `o`.
    #[inline(always)]
    unsafe fn and_not(self, o: M4) -> M4 {
        M4(vbicq_u64(self.0, o.0), vbicq_u64(self.1, o.1))
    }
    /// Whether any lane is true.
    #[inline(always)]
    unsafe fn any(self) -> bool {
        vmaxvq_u32(vreinterpretq_u32_u64(vorrq_u64(self.0, self.1))) != 0
    }
    /// Bit `l` set where lane `l` is true.
    #[inline(always)]
    unsafe fn bits(self) -> u32 {
        let b = |v: u64, l: u32| ((v & 1) as u32) << l;
        b(vgetq_lane_u64::<0>(self.0), 0)
            | b(vgetq_lane_u64::<1>(self.0), 1)
            | b(vgetq_lane_u64::<0>(self.1), 2)
            | b(vgetq_lane_u64::<1>(self.1), 3)
    }
}

impl C4 {
    #[inline(always)]
    unsafe fn zero() -> C4 {
        C4(vdupq_n_s64(0), vdupq_n_s64(0))
    }
    /// Counts the true lanes of `m` (all ones is -1 as an integer: subtracted).
    #[inline(always)]
    unsafe fn count(self, m: M4) -> C4 {
        C4(
            vsubq_s64(self.0, vreinterpretq_s64_u64(m.0)),
            vsubq_s64(self.1, vreinterpretq_s64_u64(m.1)),
        )
    }
    #[inline(always)]
    unsafe fn lanes(self) -> [i64; HALF] {
        let mut a = [0i64; HALF];
        vst1q_s64(a.as_mut_ptr(), self.0);
        vst1q_s64(a.as_mut_ptr().add(2), self.1);
        a
    }
}

impl LaneSums for Features {
    /// fp16 by FCVTL, bf16 by a shift and fp32 as they are (exact, as the portable decoders:
    /// the same `f64` values, NaN payloads aside for fp16), asking for the bytes a page ahead
    /// ([`crate::simd::AHEAD`]); other types as [`decode_to`].
    #[inline(always)]
    fn decode(self, el: Element, bytes: &[u8], out: &mut [f64]) -> usize {
        /// Eight values at a time, `load` turning `8·size` bytes into two vectors of four f32
        /// (one loop per type, so no branch on the type per step), the values past the last
        /// eight by [`decode_to`].
        #[inline(always)]
        fn eights(
            f: Features,
            (el, size): (Element, usize),
            bytes: &[u8],
            out: &mut [f64],
            load: impl Fn(*const u8) -> (float32x4_t, float32x4_t),
        ) -> usize {
            let n = out.len().min(bytes.len() / size);
            let whole = n / 8 * 8;
            // SAFETY: `f` proves NEON, on little-endian AArch64 (the dump's byte order); each
            // step reads `8·size` bytes at `size·i` with `i + 8 <= n <= bytes.len() / size`
            // (what `load` is given) and writes 8 values at `i`, `i + 8 <= n <= out.len()`.
            unsafe {
                for i in (0..whole).step_by(8) {
                    // A line ahead per 64 bytes read.
                    if (size * i) % 64 == 0 {
                        f.prefetch(bytes, size * i);
                    }
                    let (low, high) = load(bytes.as_ptr().add(size * i));
                    let o = out.as_mut_ptr().add(i);
                    vst1q_f64(o, vcvt_f64_f32(vget_low_f32(low)));
                    vst1q_f64(o.add(2), vcvt_high_f64_f32(low));
                    vst1q_f64(o.add(4), vcvt_f64_f32(vget_low_f32(high)));
                    vst1q_f64(o.add(6), vcvt_high_f64_f32(high));
                }
            }
            whole + decode_to(el, &bytes[size * whole..size * n], &mut out[whole..n])
        }
        // SAFETY (of each `load`): it reads the `8·size` bytes at `p` that `eights` hands it.
        match el {
            Element::F16 => eights(self, (el, 2), bytes, out, |p| unsafe {
                self.f16_to_f32(vreinterpretq_u16_u8(vld1q_u8(p)))
            }),
            Element::Bf16 => eights(self, (el, 2), bytes, out, |p| unsafe {
                let h = vreinterpretq_u16_u8(vld1q_u8(p));
                (
                    vreinterpretq_f32_u32(vshll_n_u16::<16>(vget_low_u16(h))),
                    vreinterpretq_f32_u32(vshll_high_n_u16::<16>(h)),
                )
            }),
            Element::F32 => eights(self, (el, 4), bytes, out, |p| unsafe {
                (
                    vreinterpretq_f32_u8(vld1q_u8(p)),
                    vreinterpretq_f32_u8(vld1q_u8(p.add(16))),
                )
            }),
            _ => decode_to(el, bytes, out),
        }
    }

    #[inline(always)]
    fn lanes(self, g: &[f64], t: &[f64], k_g: f64, k_t: f64, exact: bool) -> Lanes {
        vector_lanes(self, g, t, (k_g, k_t), exact)
    }
}

/// The loops, one half of the lanes at a time.
impl VectorLoops for Features {
    const PARTS: usize = 2;

    /// Two loops: the products and sums of magnitudes, then the shifted moments, so that each
    /// loop's accumulators (two registers per vector of four lanes) and temporaries fit the 32
    /// NEON registers (in one loop, LLVM rotated them through 32 register moves and the stack
    /// every step).
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
        let zero = F4::splat(0.0);
        let [mut dot, mut gg, mut tt, mut sum_ag, mut sum_at] = [zero; 5];
        let vectors = n / LANES;
        for (w, word) in differ.0.iter_mut().enumerate() {
            let mut bits = 0u64;
            for b in 0..vectors.saturating_sub(w * 64).min(64) {
                let i = (w * 64 + b) * LANES + h * HALF;
                let (gv, tv) = (F4::load(g, i), F4::load(t, i));
                dot = dot.add(gv.mul(tv));
                gg = gg.add(gv.mul(gv));
                tt = tt.add(tv.mul(tv));
                sum_ag = sum_ag.add(gv.abs());
                sum_at = sum_at.add(tv.abs());
                bits |= u64::from(tv.sub(gv).ne(zero).any()) << b;
            }
            *word |= bits;
        }
        let (kg, kt) = (F4::splat(k.0), F4::splat(k.1));
        let [mut s1_g, mut s2_g, mut s1_t, mut s2_t] = [zero; 4];
        for i in (h * HALF..n).step_by(LANES) {
            let (gv, tv) = (F4::load(g, i), F4::load(t, i));
            let (dg, dt) = (gv.sub(kg), tv.sub(kt));
            s1_g = s1_g.add(dg);
            s2_g = s2_g.add(dg.mul(dg));
            s1_t = s1_t.add(dt);
            s2_t = s2_t.add(dt.mul(dt));
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
            put(lanes, h, v.lanes());
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
        let zero = F4::splat(0.0);
        let eps = F4::splat(EPS);
        let (p001, p005) = (F4::splat(0.001), F4::splat(0.005));
        let [mut max_abs, mut sum_abs, mut sum_sq, mut max_rel, mut sum_rel] = [zero; 5];
        let (mut n001, mut n005) = (C4::zero(), C4::zero());
        for i in starts.map(|s| s + h * HALF) {
            let (gv, tv) = (F4::load(g, i), F4::load(t, i));
            let d = tv.sub(gv);
            let ad = d.abs();
            max_abs = F4::select(ad.gt(max_abs), ad, max_abs);
            sum_abs = sum_abs.add(ad);
            sum_sq = sum_sq.add(d.mul(d));
            let rel = ad.div(gv.abs().add(eps));
            max_rel = F4::select(rel.gt(max_rel), rel, max_rel);
            sum_rel = sum_rel.add(rel);
            n001 = n001.count(rel.gt(p001));
            n005 = n005.count(rel.gt(p005));
        }
        let y = &mut x.sums;
        for (lanes, v) in [
            (&mut y.max_abs, max_abs),
            (&mut y.sum_abs, sum_abs),
            (&mut y.sum_sq, sum_sq),
            (&mut y.max_rel, max_rel),
            (&mut y.sum_rel, sum_rel),
        ] {
            put(lanes, h, v.lanes());
        }
        put(&mut y.gt_0_001, h, n001.lanes().map(|c| c as f64));
        put(&mut y.gt_0_005, h, n005.lanes().map(|c| c as f64));
    }

    #[inline(always)]
    unsafe fn kl_terms(
        self,
        x: &mut Lanes,
        (g, t): (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        h: usize,
    ) {
        let zero = F4::splat(0.0);
        let inverse_limit = F4::splat(LN_SERIES_INVERSE_LIMIT);
        let c: [F4; CLOSE_TERMS] = std::array::from_fn(|i| F4::splat(ATANH_SERIES[i]));
        let mut kl = zero;
        let mut undefined = false;
        for i in starts.map(|s| s + h * HALF) {
            let (ag, at) = (F4::load(g, i).abs(), F4::load(t, i).abs());
            let active = ag.gt(zero).and(ag.ne(at));
            let t_zero = at.eq(zero);
            undefined |= active.and(t_zero).any();
            let used = active.and_not(t_zero);
            if !used.any() {
                continue;
            }
            // As `ln_ratio`: the series where 32·|a − b| < b, else `ln_positive(a / b)`; each only
            // when a lane needs it.
            let diff = ag.sub(at);
            let close = diff.abs().mul(inverse_limit).lt(at);
            let mut ln = zero;
            if close.and(used).any() {
                let u = diff.div(ag.add(at));
                let z = u.mul(u);
                let mut p = c[c.len() - 1];
                for &k in c[..c.len() - 1].iter().rev() {
                    p = k.add(z.mul(p));
                }
                ln = F4::splat(2.0).mul(u).mul(p);
            }
            let far = used.and_not(close);
            if far.any() {
                // `ln_normal` in all four lanes, then the library's `ln` for the rare ratios that
                // are not normal finite numbers.
                let ratio = ag.div(at);
                ln = F4::select(far, ratio.ln_normal(), ln);
                let normal = ratio
                    .ge(F4::splat(f64::MIN_POSITIVE))
                    .and(ratio.le(F4::splat(f64::MAX)));
                let odd = far.and_not(normal).bits();
                if odd != 0 {
                    let (mut lanes, r) = (ln.lanes(), ratio.lanes());
                    for (l, v) in lanes.iter_mut().enumerate() {
                        if odd & (1 << l) != 0 {
                            *v = r[l].ln();
                        }
                    }
                    ln = F4::load(&lanes, 0);
                }
            }
            // Unused lanes add +0.0, which leaves every sum but -0.0 unchanged (and a lane sum
            // starting at +0.0 never becomes -0.0).
            kl = kl.add(ag.mul(ln).only(used));
        }
        put(&mut x.sums.kl, h, kl.lanes());
        x.kl_undefined |= undefined;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simd::{self, Kernel};

    #[test]
    fn vector_decoding_agrees_with_the_portable_one() {
        if !simd::vector_path_or_skip("metrics: NEON decoding") {
            return;
        }
        /// `decode` with NEON when the CPU has it (`None` otherwise).
        struct Vector<'a>(Element, &'a [u8], usize);
        impl Kernel for Vector<'_> {
            type Output = Option<Vec<f64>>;
            fn run(self) -> Option<Vec<f64>> {
                None
            }
            fn run_neon(self, f: Features) -> Option<Vec<f64>> {
                let mut out = vec![0.0; self.2];
                let n = f.decode(self.0, self.1, &mut out);
                out.truncate(n);
                Some(out)
            }
        }
        crate::dump::values::agrees_with_decode_to(|el, bytes, room| {
            simd::dispatch(Vector(el, bytes, room))
        });
    }
}
