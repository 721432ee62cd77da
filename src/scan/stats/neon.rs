//! fp32 and fp16 statistics with NEON vectors (AArch64): the loops of `Acc::f32_x86` and
//! `Acc::f16_x86` with 128-bit vectors, and the same answer as the portable kernel bit for bit.
//!
//! The portable kernel's eight lanes are two vectors of four f32 (least and greatest value)
//! and four vectors of two f64 (sums, widened with FCVTL and FCVTL2); each lane takes the same
//! values in the same order. The least and greatest values are a compare and a bit select, as
//! the portable `if x < m { x } else { m }`: NEON's FMIN and FMINNM would differ from it on a
//! NaN or on zeros of both signs. fp16 is decoded by the hardware (FCVTL, see
//! [`Features::f16_to_f32`]) and its saturation counted in the same pass.

use std::arch::aarch64::*;

use super::{Acc, BLOCK, LANES};
use crate::simd::aarch64::Features;

/// The least and greatest value of four lanes after `x`, as the portable kernel's step.
///
/// # Safety
/// NEON.
#[inline(always)]
unsafe fn min_max(x: float32x4_t, mn: &mut float32x4_t, mx: &mut float32x4_t) {
    *mn = vbslq_f32(vcltq_f32(x, *mn), x, *mn);
    *mx = vbslq_f32(vcgtq_f32(x, *mx), x, *mx);
}

/// Adds the four values of `x`, widened to f64, to the lane sums `sum` (two vectors).
///
/// # Safety
/// NEON.
#[inline(always)]
unsafe fn add_widened(sum: &mut [float64x2_t; 2], x: float32x4_t) {
    sum[0] = vaddq_f64(sum[0], vcvt_f64_f32(vget_low_f32(x)));
    sum[1] = vaddq_f64(sum[1], vcvt_high_f64_f32(x));
}

/// The lanes of two f32 vectors.
///
/// # Safety
/// NEON.
#[inline(always)]
unsafe fn lanes32(v: [float32x4_t; 2]) -> [f32; LANES] {
    let mut a = [0f32; LANES];
    vst1q_f32(a.as_mut_ptr(), v[0]);
    vst1q_f32(a.as_mut_ptr().add(4), v[1]);
    a
}

/// The lanes of four f64 vectors.
///
/// # Safety
/// NEON.
#[inline(always)]
unsafe fn lanes64(v: [[float64x2_t; 2]; 2]) -> [f64; LANES] {
    let mut a = [0f64; LANES];
    for (k, pair) in v.iter().enumerate() {
        vst1q_f64(a.as_mut_ptr().add(4 * k), pair[0]);
        vst1q_f64(a.as_mut_ptr().add(4 * k + 2), pair[1]);
    }
    a
}

const _: () = assert!(
    LANES == 8,
    "the loops hold the lanes in two vectors of four"
);

impl Acc {
    /// fp32 with NEON vectors: one accumulator per lane, as the portable loop. A block is
    /// copied out only when it needs the careful pass.
    #[inline(always)]
    pub(super) fn f32_neon(&mut self, f: Features, bytes: &[u8]) {
        let n_all = bytes.len() / 4;
        for (b, block) in bytes[..4 * n_all].chunks(4 * BLOCK).enumerate() {
            let start = b * 4 * BLOCK;
            let n = block.len() / 4;
            let whole = n / LANES * LANES;
            // SAFETY: the `Features` token proves NEON. Each step reads 32 bytes at `4·i` with
            // `i + 8 <= whole <= n = block.len() / 4`; byte loads need no alignment. The
            // token exists only on little-endian AArch64, the byte order of the dump.
            let lanes = unsafe {
                let mut mn = [vdupq_n_f32(f32::INFINITY); 2];
                let mut mx = [vdupq_n_f32(f32::NEG_INFINITY); 2];
                let mut sum = [[vdupq_n_f64(0.0); 2]; 2];
                for i in (0..whole).step_by(LANES) {
                    // A line ahead per 64 bytes read.
                    if i % 16 == 0 {
                        f.prefetch(bytes, start + 4 * i);
                    }
                    let p = block.as_ptr().add(4 * i);
                    for k in 0..2 {
                        let x = vreinterpretq_f32_u8(vld1q_u8(p.add(16 * k)));
                        min_max(x, &mut mn[k], &mut mx[k]);
                        add_widened(&mut sum[k], x);
                    }
                }
                (lanes32(mn), lanes32(mx), lanes64(sum))
            };
            self.f32_block_end(block, whole, lanes);
        }
    }

    /// fp16 with NEON vectors: decoded by FCVTL, the lane sums split over two accumulators per
    /// lane and added back per lane, the least and greatest values over two per lane (even and
    /// odd steps): as `Acc::f16_x86`, whose notes on exactness hold here too; the lanes are
    /// merged, saturation counted and the careful pass decoded by `Acc::f16_block_end`.
    #[inline(always)]
    pub(super) fn f16_neon(&mut self, f: Features, bytes: &[u8]) {
        let n_all = bytes.len() / 2;
        for (b, block) in bytes[..2 * n_all].chunks(2 * BLOCK).enumerate() {
            let start = b * 2 * BLOCK;
            let n = block.len() / 2;
            let whole = n / LANES * LANES;
            let mut sum = [0f64; LANES];
            // SAFETY: the `Features` token proves NEON. Each step reads 16 bytes at `2·i` with
            // `i + 8 <= whole <= n = block.len() / 2`. The token exists only on little-endian
            // AArch64, as the dump's bytes.
            let (mins, maxes) = unsafe {
                // Per parity of the step, lanes 0–3 and 4–7.
                let mut mn = [[vdupq_n_f32(f32::INFINITY); 2]; 2];
                let mut mx = [[vdupq_n_f32(f32::NEG_INFINITY); 2]; 2];
                let mut step = |i: usize, s: &mut [[float64x2_t; 2]; 2]| {
                    let h = vreinterpretq_u16_u8(vld1q_u8(block.as_ptr().add(2 * i)));
                    let x = f.f16_to_f32(h);
                    let x = [x.0, x.1];
                    let p = (i / LANES) % 2;
                    for k in 0..2 {
                        min_max(x[k], &mut mn[p][k], &mut mx[p][k]);
                        add_widened(&mut s[k], x[k]);
                    }
                };
                let mut even = [[vdupq_n_f64(0.0); 2]; 2];
                let mut odd = even;
                let mut i = 0;
                while i + 2 * LANES <= whole {
                    // A line ahead per 64 bytes read (two steps of 16 bytes here).
                    if i % 32 == 0 {
                        f.prefetch(bytes, start + 2 * i);
                    }
                    step(i, &mut even);
                    step(i + LANES, &mut odd);
                    i += 2 * LANES;
                }
                if i < whole {
                    step(i, &mut even);
                }
                for part in [lanes64(even), lanes64(odd)] {
                    for (s, p) in sum.iter_mut().zip(part) {
                        *s += p;
                    }
                }
                (
                    [lanes32(mn[0]), lanes32(mn[1])],
                    [lanes32(mx[0]), lanes32(mx[1])],
                )
            };
            self.f16_block_end(block, whole, (mins, maxes, sum));
        }
    }
}
