//! Per-tensor statistics accumulated over raw little-endian bytes, chunk by chunk.
//!
//! Every element type is widened block-wise into a small f32 (or f64) buffer and run through one
//! branch-free kernel that keeps eight independent lanes, so the compiler vectorises the common
//! case (all values finite) and the rare non-finite values are classified in a second pass over
//! the same block only when the first pass saw one. Saturation (overflow) is counted on the raw
//! bit patterns: a finite value at the largest magnitude of its type. Block sums are combined
//! with Neumaier's compensated summation, and a block holding huge magnitudes is summed with it
//! too, so a tensor holding ±3.4e38 next to small values still gets a correct mean.

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::scalar;

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
        for &x in tail {
            mn[0] = if x < mn[0] { x } else { mn[0] };
            mx[0] = if x > mx[0] { x } else { mx[0] };
            sum[0] += x.into();
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for l in 0..LANES {
            lo = lo.min(mn[l].into());
            hi = hi.max(mx[l].into());
        }
        let clean = sum.iter().all(|v| v.is_finite()) && lo > -HUGE && hi < HUGE;
        if !clean {
            self.floats_careful(xs, pairs);
            return;
        }
        self.elements += xs.len() as u64;
        self.finite += xs.len() as u64;
        self.min = self.min.min(lo);
        self.max = self.max.max(hi);
        for v in sum {
            neumaier(&mut self.sum, &mut self.comp, v);
        }
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
        super::simd::dispatch(Update {
            acc: self,
            el,
            bytes,
        });
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
                let (decode, max): (fn(u8) -> f32, u8) = if el == Element::F8E4m3fn {
                    (scalar::e4m3fn_to_f32, 0x7E)
                } else {
                    (scalar::e5m2_to_f32, 0x7B)
                };
                let table = scalar::table(decode);
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

/// [`Acc::update`] as a [`super::simd::Kernel`].
struct Update<'a> {
    acc: &'a mut Acc,
    el: Element,
    bytes: &'a [u8],
}

impl super::simd::Kernel for Update<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        self.acc.update_any(self.el, self.bytes);
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
        if !super::super::simd::vector_path_or_skip("stats: dispatched kernel") {
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
            super::super::simd::on_vector_path(|| b.update(el, &bytes));
            assert_eq!(a, b, "{el:?}");
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
