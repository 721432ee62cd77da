//! Per-tensor statistics accumulated over raw little-endian bytes, chunk by chunk.
//!
//! Every element type is widened block-wise into a small f32 (or f64) buffer and run through one
//! branch-free kernel that keeps eight independent lanes, so the compiler vectorises the common
//! case (all values finite) and the rare non-finite values are classified in a second pass over
//! the same block only when the first pass saw one. Saturation (overflow) is counted on the raw
//! bit patterns: a finite value at the largest magnitude of its type. Block sums are combined
//! with Neumaier's compensated summation, and a block holding huge magnitudes is summed with it
//! too, so a tensor holding ±3.4e38 next to small values still gets a correct mean.
//!
//! fp16 and fp32, the bulk of real dumps, also have the loop written with AVX2 vectors
//! ([`crate::simd::Kernel::run_x86`]): the same lanes and the same answer bit for bit (tested at
//! every length around the vector and block sizes), about twice as fast — fp16 decoded with
//! F16C and its saturation counted in the same pass, its lane sums split over four
//! accumulators (exact for fp16, see `Acc::f16_x86`); fp32 read straight from the bytes. On
//! AArch64 the same loops are written with NEON vectors (`neon.rs`), under the same tests.

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::scalar;

#[cfg(target_arch = "aarch64")]
mod neon;

/// Running verdict for one tensor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Acc {
    pub elements: u64,
    pub nan: u64,
    pub pos_inf: u64,
    pub neg_inf: u64,
    pub overflow: u64,
    finite: u64,
    sum: f64,
    /// Neumaier compensation of `sum`.
    comp: f64,
    min: f64,
    max: f64,
}

impl Default for Acc {
    fn default() -> Self {
        Acc {
            elements: 0,
            nan: 0,
            pos_inf: 0,
            neg_inf: 0,
            overflow: 0,
            finite: 0,
            sum: 0.0,
            comp: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }
}

const BLOCK: usize = 2048;

/// The element types without a vector kernel of their own take several passes over their
/// bytes (the saturation count, then the widening): they get them in pieces of this many bytes,
/// which stay in the core's cache between the passes. A multiple of every block's byte length
/// (`BLOCK` elements of at most 8 bytes; `BLOCK / 2` bytes of `I4`), so the blocks, and the
/// answer, are the same as in one piece.
const PIECE: usize = 64 << 10;
const _: () = assert!(PIECE % (BLOCK * 8) == 0 && PIECE % (BLOCK / 2) == 0);

/// The fp8 decoders as tables, built once.
static E4M3FN: std::sync::LazyLock<[f32; 256]> =
    std::sync::LazyLock::new(|| scalar::table(scalar::e4m3fn_to_f32));
static E5M2: std::sync::LazyLock<[f32; 256]> =
    std::sync::LazyLock::new(|| scalar::table(scalar::e5m2_to_f32));

/// One step of Neumaier's compensated summation.
#[inline(always)]
fn neumaier(sum: &mut f64, comp: &mut f64, v: f64) {
    let t = *sum + v;
    *comp += if sum.abs() >= v.abs() {
        (*sum - t) + v
    } else {
        (v - t) + *sum
    };
    *sum = t;
}
const LANES: usize = 8;
/// Magnitude from which a block is re-summed with compensation (2^40).
const HUGE: f64 = 1_099_511_627_776.0;

trait Lane: Copy + PartialOrd + Into<f64> {
    const ZERO: Self;
    const POS: Self;
    const NEG: Self;
}

impl Lane for f32 {
    const ZERO: Self = 0.0;
    const POS: Self = f32::INFINITY;
    const NEG: Self = f32::NEG_INFINITY;
}

impl Lane for f64 {
    const ZERO: Self = 0.0;
    const POS: Self = f64::INFINITY;
    const NEG: Self = f64::NEG_INFINITY;
}

/// A block's lanes after its whole vectors: the values past them (`tail`) go to lane 0, as in
/// the portable loop; returns the least and greatest lane value and the lane sums.
#[inline(always)]
fn close_lanes<T: Lane>(
    mut mn: [T; LANES],
    mut mx: [T; LANES],
    mut sum: [f64; LANES],
    tail: impl Iterator<Item = T>,
) -> ((f64, f64), [f64; LANES]) {
    for x in tail {
        mn[0] = if x < mn[0] { x } else { mn[0] };
        mx[0] = if x > mx[0] { x } else { mx[0] };
        sum[0] += x.into();
    }
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for l in 0..LANES {
        lo = lo.min(mn[l].into());
        hi = hi.max(mx[l].into());
    }
    ((lo, hi), sum)
}

impl Acc {
    /// Minimum over finite values, if any.
    pub fn min(&self) -> Option<f64> {
        (self.finite > 0).then_some(self.min)
    }
    pub fn max(&self) -> Option<f64> {
        (self.finite > 0).then_some(self.max)
    }
    /// Mean over finite values, if any.
    pub fn mean(&self) -> Option<f64> {
        (self.finite > 0).then(|| (self.sum + self.comp) / self.finite as f64)
    }

    /// The kernel, for one block of at most [`BLOCK`] values. The fast pass has no masks at
    /// all, so it vectorises to plain min/max/convert/add: a NaN never wins a `<` comparison,
    /// and any NaN or infinity makes its lane sum non-finite, which sends the block to
    /// [`Acc::floats_careful`]. So do blocks holding magnitudes of [`HUGE`] or more, where
    /// plain summation could let values that cancel (±3.4e38) swallow the small ones.
    #[inline(always)]
    fn floats<T: Lane>(&mut self, xs: &[T], pairs: bool) {
        let mut mn = [T::POS; LANES];
        let mut mx = [T::NEG; LANES];
        let mut sum = [0f64; LANES];
        let chunks = xs.chunks_exact(LANES);
        let tail = chunks.remainder();
        for c in chunks {
            for l in 0..LANES {
                let x = c[l];
                mn[l] = if x < mn[l] { x } else { mn[l] };
                mx[l] = if x > mx[l] { x } else { mx[l] };
                sum[l] += x.into();
            }
        }
        let (range, sum) = close_lanes(mn, mx, sum, tail.iter().copied());
        self.fold_block(xs.len(), range, sum, |acc| acc.floats_careful(xs, pairs));
    }

    /// Adds a block of `n` values by its lanes (its least and greatest lane values, its lane
    /// sums), or runs `careful` (the block through [`Acc::floats_careful`]) when they show a
    /// non-finite or huge value.
    #[inline(always)]
    fn fold_block(
        &mut self,
        n: usize,
        (lo, hi): (f64, f64),
        sum: [f64; LANES],
        careful: impl FnOnce(&mut Acc),
    ) {
        let clean = sum.iter().all(|v| v.is_finite()) && lo > -HUGE && hi < HUGE;
        if !clean {
            careful(self);
            return;
        }
        self.elements += n as u64;
        self.finite += n as u64;
        self.min = self.min.min(lo);
        self.max = self.max.max(hi);
        for v in sum {
            neumaier(&mut self.sum, &mut self.comp, v);
        }
    }

    /// fp32 with AVX2 vectors: the portable path's loop (one accumulator per lane, the same
    /// additions in the same order, so the same bits), without the blends and shuffles the
    /// compiler makes of it. A block is copied out only when it needs the careful pass.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn f32_x86(&mut self, f: crate::simd::x86::Features, bytes: &[u8]) {
        use std::arch::x86_64::*;
        let n_all = bytes.len() / 4;
        for (b, block) in bytes[..4 * n_all].chunks(4 * BLOCK).enumerate() {
            let start = b * 4 * BLOCK;
            let n = block.len() / 4;
            let whole = n / LANES * LANES;
            let (mut a, mut b) = ([0f32; LANES], [0f32; LANES]);
            let (mut l4, mut h4) = ([0f64; 4], [0f64; 4]);
            // SAFETY: the `Features` token proves the CPU has AVX2. Each step reads 32 bytes at
            // `4·i` with `i + 8 <= whole <= n = block.len() / 4`. x86-64 is little-endian, as
            // the dump's bytes.
            unsafe {
                let mut mn = _mm256_set1_ps(f32::INFINITY);
                let mut mx = _mm256_set1_ps(f32::NEG_INFINITY);
                let (mut low, mut high) = (_mm256_setzero_pd(), _mm256_setzero_pd());
                for i in (0..whole).step_by(LANES) {
                    // A line ahead per 64 bytes read.
                    if i % 16 == 0 {
                        f.prefetch(bytes, start + 4 * i);
                    }
                    let x = _mm256_loadu_ps(block.as_ptr().add(4 * i).cast());
                    // As the portable `if x < m { x } else { m }`: a NaN never wins.
                    mn = _mm256_min_ps(x, mn);
                    mx = _mm256_max_ps(x, mx);
                    low = _mm256_add_pd(low, _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
                    high = _mm256_add_pd(high, _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)));
                }
                _mm256_storeu_ps(a.as_mut_ptr(), mn);
                _mm256_storeu_ps(b.as_mut_ptr(), mx);
                _mm256_storeu_pd(l4.as_mut_ptr(), low);
                _mm256_storeu_pd(h4.as_mut_ptr(), high);
            }
            let sum = [l4[0], l4[1], l4[2], l4[3], h4[0], h4[1], h4[2], h4[3]];
            self.f32_block_end(block, whole, (a, b, sum));
        }
    }

    /// The end of an fp32 block (`block.len() / 4` values) after a vector loop over its first
    /// `whole`, which left the least, greatest and summed value of each lane: the values past
    /// them, then the block folded in (or copied out for the careful pass).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(always)]
    fn f32_block_end(
        &mut self,
        block: &[u8],
        whole: usize,
        (mn, mx, sum): ([f32; LANES], [f32; LANES], [f64; LANES]),
    ) {
        let n = block.len() / 4;
        let tail = block[4 * whole..4 * n]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]));
        let (range, sum) = close_lanes(mn, mx, sum, tail);
        self.fold_block(n, range, sum, |acc| {
            let mut buf = [0f32; BLOCK];
            for (dst, c) in buf.iter_mut().zip(block.chunks_exact(4)) {
                *dst = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
            acc.floats_careful(&buf[..n], false);
        });
    }

    /// fp16 with F16C and AVX2 vectors: the portable path's answer bit for bit, in fewer
    /// instructions and shorter chains. The lane sums are split over four accumulators per lane
    /// and added back per lane; that is exact, so the lane sums are the portable ones: an fp16
    /// value is a multiple of 2⁻²⁴ below 2¹⁶, so any sum of at most [`BLOCK`] of them needs at
    /// most 51 significant bits of an f64's 53. The least and greatest values are kept in two
    /// accumulators per lane (even and odd steps), merged by [`Acc::f16_block_end`]. Saturation
    /// is counted there, only in the blocks whose range reaches the largest finite magnitude,
    /// and values are decoded into a buffer only for a block that needs the careful pass.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn f16_x86(&mut self, f: crate::simd::x86::Features, bytes: &[u8]) {
        use std::arch::x86_64::*;
        let n_all = bytes.len() / 2;
        for (b, block) in bytes[..2 * n_all].chunks(2 * BLOCK).enumerate() {
            let start = b * 2 * BLOCK;
            let n = block.len() / 2;
            let whole = n / LANES * LANES;
            let mut sum = [0f64; LANES];
            let mut mins = [[0f32; LANES]; 2];
            let mut maxes = [[0f32; LANES]; 2];
            // SAFETY: the `Features` token proves the CPU has F16C and AVX2. Each step reads 16
            // bytes at `2·i` with `i + 8 <= whole <= n = block.len() / 2`. x86-64 is
            // little-endian, as the dump's bytes.
            unsafe {
                let mut mn = [_mm256_set1_ps(f32::INFINITY); 2];
                let mut mx = [_mm256_set1_ps(f32::NEG_INFINITY); 2];
                // Four accumulators of lanes 0–3 and four of lanes 4–7.
                let mut low = [_mm256_setzero_pd(); 4];
                let mut high = [_mm256_setzero_pd(); 4];
                // Step `i / 8`: its sums go to accumulator `k`, its least and greatest values
                // to those of its parity.
                let mut step = |i: usize, k: usize| {
                    let x = _mm256_cvtph_ps(_mm_loadu_si128(block.as_ptr().add(2 * i).cast()));
                    let p = (i / LANES) % 2;
                    // As the portable `if x < m { x } else { m }`: a NaN never wins.
                    mn[p] = _mm256_min_ps(x, mn[p]);
                    mx[p] = _mm256_max_ps(x, mx[p]);
                    low[k] = _mm256_add_pd(low[k], _mm256_cvtps_pd(_mm256_castps256_ps128(x)));
                    high[k] =
                        _mm256_add_pd(high[k], _mm256_cvtps_pd(_mm256_extractf128_ps::<1>(x)));
                };
                let mut i = 0;
                while i + 4 * LANES <= whole {
                    // A line ahead per 64 bytes read.
                    f.prefetch(bytes, start + 2 * i);
                    for k in 0..4 {
                        step(i + k * LANES, k);
                    }
                    i += 4 * LANES;
                }
                while i < whole {
                    step(i, 0);
                    i += LANES;
                }
                for p in 0..2 {
                    _mm256_storeu_ps(mins[p].as_mut_ptr(), mn[p]);
                    _mm256_storeu_ps(maxes[p].as_mut_ptr(), mx[p]);
                }
                let (mut l4, mut h4) = ([0f64; 4], [0f64; 4]);
                for k in 0..4 {
                    _mm256_storeu_pd(l4.as_mut_ptr(), low[k]);
                    _mm256_storeu_pd(h4.as_mut_ptr(), high[k]);
                    for l in 0..4 {
                        sum[l] += l4[l];
                        sum[l + 4] += h4[l];
                    }
                }
            }
            self.f16_block_end(block, whole, (mins, maxes, sum));
        }
    }

    /// The end of an fp16 block (`block.len() / 2` values) after a vector loop over its first
    /// `whole`, which left each lane's least and greatest value of its even steps and of its
    /// odd steps, and its sum: the lanes merged, the values past them, the saturation count,
    /// then the block folded in (or decoded for the careful pass).
    ///
    /// Merging is exact: of two different values the lesser is the one the portable loop keeps
    /// (it keeps the first of equal values, and equal values differ only as +0 and -0). When a
    /// lane's two halves hold +0 and -0, which came first decides, and the block's lanes are
    /// taken again in the portable order (a block of zeros of both signs, rare).
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    #[inline(always)]
    fn f16_block_end(
        &mut self,
        block: &[u8],
        whole: usize,
        (mins, maxes, sum): ([[f32; LANES]; 2], [[f32; LANES]; 2], [f64; LANES]),
    ) {
        let decode = |c: &[u8]| scalar::f16_to_f32(u16::from_le_bytes([c[0], c[1]]));
        let n = block.len() / 2;
        let merge = |halves: [[f32; LANES]; 2], first: fn(f32, f32) -> bool| {
            let mut out = [0f32; LANES];
            for l in 0..LANES {
                let (a, b) = (halves[0][l], halves[1][l]);
                if a == b && a.to_bits() != b.to_bits() {
                    return None;
                }
                out[l] = if first(b, a) { b } else { a };
            }
            Some(out)
        };
        let merged = merge(mins, |x, m| x < m).zip(merge(maxes, |x, m| x > m));
        let (mn, mx) = merged.unwrap_or_else(|| {
            let mut mn = [f32::INFINITY; LANES];
            let mut mx = [f32::NEG_INFINITY; LANES];
            for (j, c) in block[..2 * whole].chunks_exact(2).enumerate() {
                let (x, l) = (decode(c), j % LANES);
                mn[l] = if x < mn[l] { x } else { mn[l] };
                mx[l] = if x > mx[l] { x } else { mx[l] };
            }
            (mn, mx)
        });
        let tail = block[2 * whole..2 * n].chunks_exact(2).map(decode);
        let ((lo, hi), sum) = close_lanes(mn, mx, sum, tail);
        // A saturated value is ±65504, the largest finite magnitude: only a block whose range
        // reaches it can hold one (NaN never sets the range; ±Inf does, and is no match).
        const LARGEST: f64 = 65504.0;
        if hi >= LARGEST || lo <= -LARGEST {
            self.count_saturated_u16(&block[..2 * n], 0x7BFF);
        }
        self.fold_block(n, (lo, hi), sum, |acc| {
            let mut buf = [0f32; BLOCK];
            for (dst, c) in buf.iter_mut().zip(block.chunks_exact(2)) {
                *dst = decode(c);
            }
            acc.floats_careful(&buf[..n], false);
        });
    }

    /// Value by value: classifies NaN and infinities, and sums the finite values with
    /// compensation. Only for blocks the fast pass found non-finite or huge values in.
    ///
    /// With `pairs`, `xs` holds complex numbers as (real, imaginary) and NaN / Inf are counted
    /// per number: NaN when either part is NaN, otherwise +Inf or -Inf by the sign of the first
    /// infinite part. Min, max and mean still take every finite part.
    #[cold]
    fn floats_careful<T: Lane>(&mut self, xs: &[T], pairs: bool) {
        let (mut s, mut c) = (0f64, 0f64);
        let mut finite = |v: f64| {
            self.finite += 1;
            self.min = self.min.min(v);
            self.max = self.max.max(v);
            neumaier(&mut s, &mut c, v);
        };
        let (mut nan, mut pos, mut neg) = (0u64, 0u64, 0u64);
        let mut classify = |vs: &[f64]| {
            if vs.iter().any(|v| v.is_nan()) {
                nan += 1;
            } else if let Some(v) = vs.iter().find(|v| v.is_infinite()) {
                if *v > 0.0 {
                    pos += 1;
                } else {
                    neg += 1;
                }
            }
        };
        let width = if pairs { 2 } else { 1 };
        for group in xs.chunks(width) {
            let mut vs = [0f64; 2];
            for (v, &x) in vs.iter_mut().zip(group) {
                *v = x.into();
                if v.is_finite() {
                    finite(*v);
                }
            }
            classify(&vs[..group.len()]);
        }
        self.nan += nan;
        self.pos_inf += pos;
        self.neg_inf += neg;
        self.elements += xs.len() as u64;
        neumaier(&mut self.sum, &mut self.comp, s);
        neumaier(&mut self.sum, &mut self.comp, c);
    }

    /// Decodes `W`-byte elements block by block into lanes of `T` and runs the kernel.
    #[inline(always)]
    /// With `pairs` the values are complex parts, two per element ([`BLOCK`] is even and callers
    /// pass whole elements, so a pair never straddles two blocks).
    fn widen<const W: usize, T: Lane>(
        &mut self,
        bytes: &[u8],
        pairs: bool,
        f: impl Fn([u8; W]) -> T,
    ) {
        let mut buf = [T::ZERO; BLOCK];
        for block in bytes.chunks(BLOCK * W) {
            let n = block.len() / W;
            for (dst, src) in buf.iter_mut().zip(block.chunks_exact(W)) {
                let mut a = [0u8; W];
                a.copy_from_slice(src);
                *dst = f(a);
            }
            self.floats(&buf[..n], pairs);
        }
    }

    #[inline(always)]
    fn count_saturated_u16(&mut self, bytes: &[u8], pattern: u16) {
        self.overflow += bytes
            .chunks_exact(2)
            .filter(|c| u16::from_le_bytes([c[0], c[1]]) & 0x7FFF == pattern)
            .count() as u64;
    }

    /// Adds whole elements of type `el` from `bytes` (a trailing partial element is ignored;
    /// callers pass element-aligned chunks). For `I4` every byte holds two elements.
    pub fn update(&mut self, el: Element, bytes: &[u8]) {
        crate::simd::dispatch(Update {
            acc: self,
            el,
            bytes,
        });
    }

    /// [`Acc::update_any`] piece by piece ([`PIECE`]).
    #[inline(always)]
    fn update_pieces(&mut self, el: Element, bytes: &[u8]) {
        for piece in bytes.chunks(PIECE) {
            self.update_any(el, piece);
        }
    }

    #[inline(always)]
    fn update_any(&mut self, el: Element, bytes: &[u8]) {
        match el {
            Element::F32 => self.widen::<4, f32>(bytes, false, f32::from_le_bytes),
            Element::C64 => self.widen::<4, f32>(bytes, true, f32::from_le_bytes),
            Element::F64 => self.widen::<8, _>(bytes, false, f64::from_le_bytes),
            Element::C128 => self.widen::<8, _>(bytes, true, f64::from_le_bytes),
            Element::F16 => {
                self.count_saturated_u16(bytes, 0x7BFF);
                self.widen::<2, _>(bytes, false, |b| scalar::f16_to_f32(u16::from_le_bytes(b)));
            }
            Element::Bf16 => {
                self.count_saturated_u16(bytes, 0x7F7F);
                self.widen::<2, _>(bytes, false, |b| scalar::bf16_to_f32(u16::from_le_bytes(b)));
            }
            Element::F8E4m3fn | Element::F8E5m2 => {
                let (table, max): (&[f32; 256], u8) = if el == Element::F8E4m3fn {
                    (&E4M3FN, 0x7E)
                } else {
                    (&E5M2, 0x7B)
                };
                self.overflow += bytes.iter().filter(|&&b| b & 0x7F == max).count() as u64;
                self.widen::<1, _>(bytes, false, |[b]| table[usize::from(b)]);
            }
            Element::I8 => self.widen::<1, _>(bytes, false, |b| f64::from(i8::from_le_bytes(b))),
            Element::U8 => self.widen::<1, _>(bytes, false, |[b]| f64::from(b)),
            Element::Bool => self.widen::<1, _>(bytes, false, |[b]| f64::from(u8::from(b != 0))),
            Element::I16 => self.widen::<2, _>(bytes, false, |b| f64::from(i16::from_le_bytes(b))),
            Element::U16 => self.widen::<2, _>(bytes, false, |b| f64::from(u16::from_le_bytes(b))),
            Element::I32 => self.widen::<4, _>(bytes, false, |b| f64::from(i32::from_le_bytes(b))),
            Element::U32 => self.widen::<4, _>(bytes, false, |b| f64::from(u32::from_le_bytes(b))),
            Element::I64 => self.widen::<8, _>(bytes, false, |b| i64::from_le_bytes(b) as f64),
            Element::U64 => self.widen::<8, _>(bytes, false, |b| u64::from_le_bytes(b) as f64),
            Element::I4 => {
                let mut buf = [0f64; BLOCK];
                for block in bytes.chunks(BLOCK / 2) {
                    for (i, &b) in block.iter().enumerate() {
                        // low nibble first, sign-extended
                        buf[2 * i] = f64::from(((b << 4) as i8) >> 4);
                        buf[2 * i + 1] = f64::from((b as i8) >> 4);
                    }
                    self.floats(&buf[..block.len() * 2], false);
                }
            }
        }
    }

    /// Folds complex parts back into element counts: each complex number is two parts (NaN and
    /// Inf are already counted per number).
    pub fn finish(mut self, el: Element) -> Acc {
        if matches!(el, Element::C64 | Element::C128) {
            self.elements /= 2;
        }
        self
    }
}

/// [`Acc::update`] as a [`crate::simd::Kernel`].
struct Update<'a> {
    acc: &'a mut Acc,
    el: Element,
    bytes: &'a [u8],
}

impl crate::simd::Kernel for Update<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        self.acc.update_pieces(self.el, self.bytes);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn run_x86(self, f: crate::simd::x86::Features) {
        match self.el {
            Element::F16 => self.acc.f16_x86(f, self.bytes),
            Element::F32 => self.acc.f32_x86(f, self.bytes),
            el => self.acc.update_pieces(el, self.bytes),
        }
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn run_neon(self, f: crate::simd::aarch64::Features) {
        match self.el {
            Element::F16 => self.acc.f16_neon(f, self.bytes),
            Element::F32 => self.acc.f32_neon(f, self.bytes),
            el => self.acc.update_pieces(el, self.bytes),
        }
    }
}

/// Bytes per element for chunk alignment (sub-byte types: 1 byte = 2 elements).
pub fn chunk_unit(el: Element) -> usize {
    el.size().unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn f32_counts_and_finite_stats() {
        let mut v: Vec<f32> = (0..100).map(|i| i as f32).collect();
        v[3] = f32::NAN;
        v[50] = f32::INFINITY;
        v[99] = f32::NEG_INFINITY;
        let mut a = Acc::default();
        a.update(Element::F32, &f32s(&v));
        assert_eq!(
            (a.elements, a.nan, a.pos_inf, a.neg_inf, a.overflow),
            (100, 1, 1, 1, 0)
        );
        assert_eq!(a.min(), Some(0.0));
        assert_eq!(a.max(), Some(98.0));
        let expect = (0..99).filter(|&i| i != 3 && i != 50).sum::<i32>() as f64 / 97.0;
        assert!((a.mean().unwrap() - expect).abs() < 1e-9);
    }

    #[test]
    fn mean_survives_cancelling_extremes() {
        let mut v = vec![1.0f32; 30];
        v[0] = f32::MAX;
        v[17] = -f32::MAX;
        let mut a = Acc::default();
        a.update(Element::F32, &f32s(&v));
        assert_eq!(a.mean(), Some(28.0 / 30.0));
    }

    #[test]
    fn f16_saturation_and_inf() {
        let vals = [0x3C00u16, 0x7BFF, 0xFBFF, 0x7C00, 0x7E00, 0x0000];
        let bytes: Vec<u8> = vals.iter().flat_map(|x| x.to_le_bytes()).collect();
        let mut a = Acc::default();
        a.update(Element::F16, &bytes);
        assert_eq!((a.nan, a.pos_inf, a.neg_inf, a.overflow), (1, 1, 0, 2));
        assert_eq!((a.min(), a.max()), (Some(-65504.0), Some(65504.0)));
    }

    #[test]
    fn int4_and_bool_and_all_nan() {
        let mut a = Acc::default();
        a.update(Element::I4, &[0xF1, 0x7F]); // 1, -1, -1, 7
        assert_eq!((a.elements, a.min(), a.max()), (4, Some(-1.0), Some(7.0)));
        let mut b = Acc::default();
        b.update(Element::Bool, &[0, 2, 1]);
        assert_eq!((b.min(), b.max()), (Some(0.0), Some(1.0)));
        let mut c = Acc::default();
        c.update(Element::F32, &f32s(&[f32::NAN; 20]));
        assert_eq!((c.nan, c.min(), c.mean()), (20, None, None));
    }

    #[test]
    fn the_dispatched_kernel_agrees_with_the_portable_one() {
        // On a CPU with the SIMD features `update` runs the AVX2 build; the answer must be the
        // portable one, bit for bit.
        if !crate::simd::vector_path_or_skip("stats: dispatched kernel") {
            return;
        }
        let v: Vec<f32> = (0..5000)
            .map(|i| {
                if i % 777 == 5 {
                    f32::NAN
                } else {
                    (i as f32).sin() * 1e3
                }
            })
            .collect();
        let bytes = f32s(&v);
        for el in [Element::F32, Element::F16, Element::Bf16, Element::I8] {
            let (mut a, mut b) = (Acc::default(), Acc::default());
            a.update_any(el, &bytes);
            crate::simd::on_vector_path(|| b.update(el, &bytes));
            assert_eq!(a, b, "{el:?}");
        }
    }

    #[test]
    fn the_fp16_vector_kernel_agrees_with_the_portable_one_at_every_length() {
        if !crate::simd::vector_path_or_skip("stats: fp16 vector kernel") {
            return;
        }
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut halves: Vec<u16> = (0..3 * BLOCK + 77)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                // Mostly ordinary values (exponents 1–29), sometimes any bit pattern.
                let bits = (state >> 16) as u16;
                if state % 97 == 0 {
                    bits
                } else {
                    (bits & 0x83FF) | ((1 + (bits >> 10) % 29) << 10)
                }
            })
            .collect();
        // The largest finite values (saturation), subnormals and zeros of both signs.
        for (k, v) in [0x7BFF, 0xFBFF, 0x0001, 0x8001, 0x0000, 0x8000]
            .iter()
            .enumerate()
        {
            halves[100 + 3 * k] = *v;
        }
        let clean: Vec<u16> = halves
            .iter()
            .map(|&h| if h & 0x7C00 == 0x7C00 { 0x3C00 } else { h })
            .collect();
        // Non-negative, with zeros of both signs in one lane in both orders: the least value
        // is a zero, and which zero comes first decides its sign.
        let mut zeros: Vec<u16> = clean.iter().map(|&h| h & 0x7FFF).collect();
        (zeros[16], zeros[24], zeros[BLOCK + 8], zeros[BLOCK + 16]) = (0x8000, 0, 0, 0x8000);
        // Only two zeros, both in lane 0 of the first block, +0 in an odd step before -0 in an
        // even one: the least value is +0 (the first), though the even steps' least is -0.
        // Negated, the same for the greatest value.
        let mut one: Vec<u16> = clean
            .iter()
            .map(|&h| if h & 0x7FFF == 0 { 0x3C00 } else { h & 0x7FFF })
            .collect();
        (one[8], one[16]) = (0, 0x8000);
        let negated: Vec<u16> = one.iter().map(|&h| h ^ 0x8000).collect();
        for data in [&halves, &clean, &zeros, &one, &negated] {
            let bytes: Vec<u8> = data.iter().flat_map(|h| h.to_le_bytes()).collect();
            agree_at_every_length(Element::F16, &bytes);
        }
    }

    #[test]
    fn the_fp32_vector_kernel_agrees_with_the_portable_one_at_every_length() {
        if !crate::simd::vector_path_or_skip("stats: fp32 vector kernel") {
            return;
        }
        // Magnitudes over many binades (so the order of the additions shows in the sums), one
        // block with a NaN, one with an infinity, one with a huge value.
        let mut v: Vec<f32> = (0..3 * BLOCK + 77)
            .map(|i| (i as f32 * 0.37).sin() * 10f32.powi(i as i32 % 13 - 6))
            .collect();
        v[BLOCK + 5] = f32::NAN;
        v[2 * BLOCK + 9] = f32::INFINITY;
        v[40] = 3e38;
        let clean: Vec<f32> = v
            .iter()
            .map(|x| {
                if x.is_finite() && x.abs() < 1e30 {
                    *x
                } else {
                    1.5
                }
            })
            .collect();
        let mut zeros: Vec<f32> = clean.iter().map(|x| x.abs()).collect();
        (zeros[16], zeros[24], zeros[BLOCK + 8], zeros[BLOCK + 16]) = (-0.0, 0.0, 0.0, -0.0);
        for data in [&v, &clean, &zeros] {
            agree_at_every_length(Element::F32, &f32s(data));
        }
    }

    /// The dispatched kernel and the portable one on the first `len` values of `bytes`, for
    /// lengths around the vector width and the block, and a trailing partial element.
    fn agree_at_every_length(el: Element, bytes: &[u8]) {
        let size = el.size().unwrap_or(1);
        let all = bytes.len() / size;
        for len in [0, 1, 7, 8, 9, 31, 33, 40, BLOCK - 1, BLOCK, BLOCK + 9, all] {
            for part in [
                &bytes[..size * len],
                &bytes[..size * len + usize::from(len < all)],
            ] {
                let (mut a, mut b) = (Acc::default(), Acc::default());
                a.update_any(el, part);
                crate::simd::on_vector_path(|| b.update(el, part));
                // Debug shows the sign of a zero, which `==` does not.
                assert_eq!(
                    format!("{a:?}"),
                    format!("{b:?}"),
                    "{el:?}, {} bytes",
                    part.len()
                );
            }
        }
    }

    #[test]
    fn pieces_give_the_answer_of_one_pass() {
        // The types without a kernel of their own go through `update` in PIECE-byte pieces; the
        // answer must be that of one pass over all the bytes (the blocks are the same), with
        // specials and huge values planted on both sides of the piece boundaries.
        let mut bytes: Vec<u8> = (0..3 * PIECE + 1000)
            .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[1])
            .collect();
        for at in [PIECE - 16, PIECE, 2 * PIECE + 8, 3 * PIECE + 16] {
            bytes[at..at + 16].fill(0xFF);
            bytes[at + 16..at + 24].copy_from_slice(&f64::INFINITY.to_le_bytes());
        }
        for el in Element::ALL {
            let mut pieces = Acc::default();
            pieces.update_pieces(el, &bytes);
            let mut whole = Acc::default();
            whole.update_any(el, &bytes);
            // Debug shows the sign of a zero, which `==` does not.
            assert_eq!(format!("{pieces:?}"), format!("{whole:?}"), "{el:?}");
        }
    }

    #[test]
    fn complex_counts_are_per_element() {
        // (NaN, NaN) (NaN, 1) (Inf, NaN) (1, -Inf) (-Inf, Inf) (2, 3)
        let parts = [
            f32::NAN,
            f32::NAN,
            f32::NAN,
            1.0,
            f32::INFINITY,
            f32::NAN,
            1.0,
            f32::NEG_INFINITY,
            f32::NEG_INFINITY,
            f32::INFINITY,
            2.0,
            3.0,
        ];
        let mut a = Acc::default();
        a.update(Element::C64, &f32s(&parts));
        let a = a.finish(Element::C64);
        assert_eq!((a.elements, a.nan, a.pos_inf, a.neg_inf), (6, 3, 0, 2));
        assert_eq!(
            (a.min(), a.max(), a.mean()),
            (Some(1.0), Some(3.0), Some(7.0 / 4.0))
        );
        let bytes: Vec<u8> = [f64::NAN, f64::NAN, 1.0, f64::INFINITY]
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        let mut b = Acc::default();
        b.update(Element::C128, &bytes);
        let b = b.finish(Element::C128);
        assert_eq!((b.elements, b.nan, b.pos_inf), (2, 1, 1));
    }

    #[test]
    fn fp8_and_bf16() {
        let mut a = Acc::default();
        a.update(Element::F8E4m3fn, &[0x7E, 0x7F, 0x38, 0xFE]);
        assert_eq!((a.nan, a.overflow, a.max()), (1, 2, Some(448.0)));
        let mut b = Acc::default();
        b.update(Element::F8E5m2, &[0x7C, 0xFC, 0x7D, 0x7B]);
        assert_eq!((b.pos_inf, b.neg_inf, b.nan, b.overflow), (1, 1, 1, 1));
        let mut c = Acc::default();
        c.update(Element::Bf16, &[0x80, 0x3F, 0x7F, 0x7F, 0x80, 0x7F]);
        assert_eq!((c.overflow, c.pos_inf, c.min()), (1, 1, Some(1.0)));
    }
}
