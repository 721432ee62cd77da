//! The per-pair metrics of `docs/dump-compare.md`, accumulated chunk by chunk in one pass.
//!
//! Every sum is kept in `f64`. Sums are formed per chunk and then added to the running total,
//! which keeps rounding error near that of NumPy's pairwise summation. The standard deviations
//! use per-chunk moments shifted by the chunk's first value, merged with Chan's formula, so they
//! do not suffer the cancellation of `E[x²] − E[x]²`. KL divergence needs the totals `Σ|g|` and `Σ|t|` before the
//! first term can be formed; it is rewritten so one pass suffices:
//!
//! ```text
//! KL = Σ P·ln(P/Q) = (1/Σ|g|)·Σ_{g≠0} |g|·ln(|g|/|t|) + ln(Σ|t| / Σ|g|)
//! ```

use npgx_parsers::dump::dtype::Element;

use super::records::Metrics;
use crate::dump::values::decode_to;
use crate::simd::{self, Kernel};

#[cfg(target_arch = "x86_64")]
mod avx2;
// Compiled only where the compiler has the AVX-512 intrinsics (`build.rs`: Rust 1.89 or later).
#[cfg(all(target_arch = "x86_64", npgx_avx512))]
#[clippy::msrv = "1.89"]
mod avx512;
#[cfg(target_arch = "aarch64")]
mod neon;

/// f64 machine epsilon, as msprobe.
pub const EPS: f64 = f64::EPSILON;

/// Running state of one pair.
#[derive(Clone, Debug, Default)]
pub struct Acc {
    n: u64,
    golden_nan: u64,
    golden_inf: u64,
    target_nan: u64,
    target_inf: u64,
    one_side: u64,
    sums: Sums<f64>,
    kl_undefined: bool,
    mean_g: f64,
    m2_g: f64,
    mean_t: f64,
    m2_t: f64,
    fin_g: Vec<f64>,
    fin_t: Vec<f64>,
}

/// The sums the metrics come from, in one shape at each stage: per lane (`T = [f64; LANES]`,
/// [`Lanes`]), then per chunk ([`Part`]) and per pair ([`Acc`]) (`T = f64`). The counts of
/// relative errors above 0.001 and 0.005 are f64 too (exact below 2^53), so the lane loop
/// vectorises.
#[derive(Clone, Copy, Debug, Default)]
struct Sums<T> {
    dot: T,
    gg: T,
    tt: T,
    max_abs: T,
    sum_abs: T,
    sum_sq: T,
    max_rel: T,
    sum_rel: T,
    sum_ag: T,
    sum_at: T,
    kl: T,
    gt_0_001: T,
    gt_0_005: T,
}

/// A lane sum folded, pairwise.
#[inline(always)]
fn lane_sum(a: [f64; LANES]) -> f64 {
    ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
}

impl Sums<[f64; LANES]> {
    /// The lanes folded into one: sums added pairwise, maxima kept.
    #[inline(always)]
    fn fold(&self) -> Sums<f64> {
        let sum = lane_sum;
        let max = |a: [f64; LANES]| a.iter().fold(0.0f64, |m, &v| m.max(v));
        Sums {
            dot: sum(self.dot),
            gg: sum(self.gg),
            tt: sum(self.tt),
            max_abs: max(self.max_abs),
            sum_abs: sum(self.sum_abs),
            sum_sq: sum(self.sum_sq),
            max_rel: max(self.max_rel),
            sum_rel: sum(self.sum_rel),
            sum_ag: sum(self.sum_ag),
            sum_at: sum(self.sum_at),
            kl: sum(self.kl),
            gt_0_001: sum(self.gt_0_001),
            gt_0_005: sum(self.gt_0_005),
        }
    }
}

impl Sums<f64> {
    /// Adds the sums of the next chunk.
    #[inline(always)]
    fn add(&mut self, o: &Sums<f64>) {
        self.dot += o.dot;
        self.gg += o.gg;
        self.tt += o.tt;
        self.max_abs = self.max_abs.max(o.max_abs);
        self.sum_abs += o.sum_abs;
        self.sum_sq += o.sum_sq;
        self.max_rel = self.max_rel.max(o.max_rel);
        self.sum_rel += o.sum_rel;
        self.sum_ag += o.sum_ag;
        self.sum_at += o.sum_at;
        self.kl += o.kl;
        self.gt_0_001 += o.gt_0_001;
        self.gt_0_005 += o.gt_0_005;
    }
}

/// Sums over the pairs finite on both sides: Σ g·t, Σ g², Σ t², Σ (t − g)² and max |t − g|
/// ([`Acc::products`], for msprobe's metrics).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Products {
    pub dot: f64,
    pub gg: f64,
    pub tt: f64,
    pub diff2: f64,
    pub max_abs: f64,
}

/// One chunk of pairs: its [`Sums`] and shifted moments.
#[derive(Debug, Default)]
struct Part {
    sums: Sums<f64>,
    kl_undefined: bool,
    /// Σ(x − k) and Σ(x − k)² with k the chunk's first value (shifted moments: no
    /// cancellation as long as k is within a few standard deviations of the mean).
    k_g: f64,
    k_t: f64,
    s1_g: f64,
    s2_g: f64,
    s1_t: f64,
    s2_t: f64,
}

/// Independent accumulators per lane, so the loop can keep them in SIMD registers (f64
/// addition is not associative, so a single accumulator forbids vectorising the loop). Lane `l`
/// sums the elements `i ≡ l (mod LANES)` in order; the tail after the last whole group of
/// [`LANES`] goes to lane 0, except for the KL terms, which stay in lane `i mod LANES`. Eight:
/// one AVX-512 vector of f64, two AVX2 vectors, four NEON ones (those loops take the lanes in
/// halves of four).
const LANES: usize = 8;
const _: () = assert!(LANES == 8, "the loops step the lanes one by one");

#[derive(Default)]
struct Lanes {
    sums: Sums<[f64; LANES]>,
    s1_g: [f64; LANES],
    s2_g: [f64; LANES],
    s1_t: [f64; LANES],
    s2_t: [f64; LANES],
    kl_undefined: bool,
}

impl Lanes {
    #[inline(always)]
    fn step(&mut self, l: usize, g: f64, t: f64, k_g: f64, k_t: f64) {
        let d = t - g;
        let ad = d.abs();
        let ag = g.abs();
        self.sums.dot[l] += g * t;
        self.sums.gg[l] += g * g;
        self.sums.tt[l] += t * t;
        self.sums.max_abs[l] = if ad > self.sums.max_abs[l] {
            ad
        } else {
            self.sums.max_abs[l]
        };
        self.sums.sum_abs[l] += ad;
        self.sums.sum_sq[l] += d * d;
        let rel = ad / (ag + EPS);
        self.sums.max_rel[l] = if rel > self.sums.max_rel[l] {
            rel
        } else {
            self.sums.max_rel[l]
        };
        self.sums.sum_rel[l] += rel;
        self.sums.gt_0_001[l] += if rel > 0.001 { 1.0 } else { 0.0 };
        self.sums.gt_0_005[l] += if rel > 0.005 { 1.0 } else { 0.0 };
        self.sums.sum_ag[l] += ag;
        self.sums.sum_at[l] += t.abs();
        let (dg, dt) = (g - k_g, t - k_t);
        self.s1_g[l] += dg;
        self.s2_g[l] += dg * dg;
        self.s1_t[l] += dt;
        self.s2_t[l] += dt * dt;
    }

    /// The KL term of one pair: zero where |g| = |t| (common after a low-precision round
    /// trip), undefined where t = 0 and g is not.
    #[inline(always)]
    fn kl_step(&mut self, l: usize, g: f64, t: f64) {
        let (ag, at) = (g.abs(), t.abs());
        if ag > 0.0 && ag != at {
            if at == 0.0 {
                self.kl_undefined = true;
            } else {
                self.sums.kl[l] += ag * ln_ratio(ag, at);
            }
        }
    }

    /// The pairs from `from` on, scalar (see [`Lanes`] for where they go).
    #[inline(always)]
    fn tail(&mut self, g: &[f64], t: &[f64], from: usize, k_g: f64, k_t: f64) {
        for i in from..g.len().min(t.len()) {
            self.step(0, g[i], t[i], k_g, k_t);
            self.kl_step(i % LANES, g[i], t[i]);
        }
    }
}

/// How a block is decoded and the lanes of a chunk summed: [`Portable`], or explicit vectors on
/// x86-64 (AVX2, `metrics/avx2.rs`; AVX-512, `metrics/avx512.rs`) and AArch64 (NEON,
/// `metrics/neon.rs`). All give the same values and [`Lanes`] bit for bit.
trait LaneSums: Copy {
    fn decode(self, el: Element, bytes: &[u8], out: &mut [f64]) -> usize;
    /// `exact`: every product of two values is exact in f64 ([`exact_products`]), so a fused
    /// multiply-add may take them.
    fn lanes(self, g: &[f64], t: &[f64], k_g: f64, k_t: f64, exact: bool) -> Lanes;
}

/// The three loops of a vector path (AVX2, AVX-512, NEON) over a chunk of whole vectors, each
/// run once per part of the [`LANES`] its vectors hold ([`VectorLoops::PARTS`]: one AVX-512
/// vector holds them all, AVX2 and NEON take them in two halves of [`HALF`]); [`vector_lanes`]
/// drives them.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
trait VectorLoops: Copy {
    const PARTS: usize;
    /// Products and moments of part `part` of the first `n` pairs (a multiple of `LANES`, at
    /// most [`BLOCK`]); marks in `differ` the vectors of [`LANES`] pairs whose part holds a
    /// pair that differs (t − g not zero: unequal or not finite). `EXACT`: the products g·t, g²
    /// and t² are exact in f64, so a fused multiply-add gives the sums of a multiplication and an
    /// addition bit for bit (the AVX2 and AVX-512 loops take it then; NEON does not).
    ///
    /// # Safety
    /// `self` is its path's `Features` token; `n` within both slices.
    unsafe fn moments<const EXACT: bool>(
        self,
        x: &mut Lanes,
        pairs: (&[f64], &[f64]),
        n: usize,
        k: (f64, f64),
        part: usize,
        differ: &mut Differ,
    );
    /// Absolute and relative errors of part `part` of the vectors starting at `starts`.
    ///
    /// # Safety
    /// `self` is its path's `Features` token; every `start + LANES` within both slices.
    unsafe fn errors(
        self,
        x: &mut Lanes,
        pairs: (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        part: usize,
    );
    /// KL terms of part `part` of the vectors starting at `starts`, as `kl_step` and
    /// `ln_ratio`: where |g| > 0 and |g| != |t| (NaN counts as different, as with Rust's `!=`);
    /// t = 0 there makes KL undefined.
    ///
    /// # Safety
    /// As [`VectorLoops::errors`].
    unsafe fn kl_terms(
        self,
        x: &mut Lanes,
        pairs: (&[f64], &[f64]),
        starts: impl Iterator<Item = usize>,
        part: usize,
    );
}

/// The lanes of a chunk by a vector path's loops: its whole vectors (the errors and KL loops
/// only over the vectors with a pair that differs, [`Differ`]), then the tail as the portable
/// loop takes it; past a block, the portable lanes.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn vector_lanes<H: VectorLoops>(
    how: H,
    g: &[f64],
    t: &[f64],
    (k_g, k_t): (f64, f64),
    exact: bool,
) -> Lanes {
    let whole = g.len().min(t.len()) / LANES * LANES;
    if whole > BLOCK {
        // Not reached from `update_raw` (its chunks are blocks); the same lanes either way.
        return Portable.lanes(g, t, k_g, k_t, exact);
    }
    let mut x = Lanes::default();
    // SAFETY: `how` is a `Features` token, which only its path's `run_simd` makes (proof that
    // the CPU has the features); `whole` is within both slices and at most `BLOCK`, so
    // `moments` marks vectors whose `LANES` pairs are within both slices, and `Differ` has a
    // bit for each.
    unsafe {
        let mut differ = Differ::default();
        for part in 0..H::PARTS {
            let (pairs, k) = ((g, t), (k_g, k_t));
            if exact {
                how.moments::<true>(&mut x, pairs, whole, k, part, &mut differ);
            } else {
                how.moments::<false>(&mut x, pairs, whole, k, part, &mut differ);
            }
        }
        for part in 0..H::PARTS {
            how.errors(&mut x, (g, t), differ.starts(), part);
        }
        for part in 0..H::PARTS {
            how.kl_terms(&mut x, (g, t), differ.starts(), part);
        }
    }
    x.tail(g, t, whole, k_g, k_t);
    x
}

/// Plain Rust, vectorised by the compiler as far as it can.
#[derive(Clone, Copy)]
struct Portable;

impl LaneSums for Portable {
    #[inline(always)]
    fn decode(self, el: Element, bytes: &[u8], out: &mut [f64]) -> usize {
        decode_to(el, bytes, out)
    }

    #[inline(always)]
    fn lanes(self, g: &[f64], t: &[f64], k_g: f64, k_t: f64, _: bool) -> Lanes {
        let mut x = Lanes::default();
        let whole = g.len().min(t.len()) / LANES * LANES;
        for (gc, tc) in g[..whole]
            .chunks_exact(LANES)
            .zip(t[..whole].chunks_exact(LANES))
        {
            // Written out lane by lane (not a loop over `l`), so the steps sit side by side
            // and are vectorised together, the accumulators kept in registers.
            x.step(0, gc[0], tc[0], k_g, k_t);
            x.step(1, gc[1], tc[1], k_g, k_t);
            x.step(2, gc[2], tc[2], k_g, k_t);
            x.step(3, gc[3], tc[3], k_g, k_t);
            x.step(4, gc[4], tc[4], k_g, k_t);
            x.step(5, gc[5], tc[5], k_g, k_t);
            x.step(6, gc[6], tc[6], k_g, k_t);
            x.step(7, gc[7], tc[7], k_g, k_t);
        }
        // KL terms in a branchy loop of their own, which keeps the main loop free of branches.
        for (i, (&g, &t)) in g[..whole].iter().zip(&t[..whole]).enumerate() {
            x.kl_step(i % LANES, g, t);
        }
        x.tail(g, t, whole, k_g, k_t);
        x
    }
}

/// One pass over a chunk. With non-finite values the sums come out non-finite, which is how
/// [`Acc::update`] knows to filter.
#[inline(always)]
fn part(how: impl LaneSums, g: &[f64], t: &[f64], exact: bool) -> Part {
    let (k_g, k_t) = (
        g.first().copied().unwrap_or(0.0),
        t.first().copied().unwrap_or(0.0),
    );
    let x = how.lanes(g, t, k_g, k_t, exact);
    Part {
        sums: x.sums.fold(),
        kl_undefined: x.kl_undefined,
        k_g,
        k_t,
        s1_g: lane_sum(x.s1_g),
        s2_g: lane_sum(x.s2_g),
        s1_t: lane_sum(x.s1_t),
        s2_t: lane_sum(x.s2_t),
    }
}

/// ln(a / b) for a, b > 0. Close ratios (the common case: a low-precision target against its
/// golden — one bf16 ulp is a ratio of 1 ± 2⁻⁸ … 2⁻⁷), |a − b| < b/32, take
/// ln(a / b) = 2·atanh(u), u = (a − b)/(a + b) (a − b is exact there, |u| < 1/63), from the
/// first [`CLOSE_TERMS`] terms of its series; others [`ln_positive`]. The test needs no
/// division: the vector loop forms u only where a lane uses it.
#[inline(always)]
fn ln_ratio(a: f64, b: f64) -> f64 {
    let d = a - b;
    if d.abs() * LN_SERIES_INVERSE_LIMIT < b {
        let u = d / (a + b);
        let z = u * u;
        let mut p = ATANH_SERIES[CLOSE_TERMS - 1];
        for &c in ATANH_SERIES[..CLOSE_TERMS - 1].iter().rev() {
            p = c + z * p;
        }
        2.0 * u * p
    } else {
        ln_positive(a / b)
    }
}

/// ln(x) for x > 0: [`ln_normal`] for normal finite x, the library `ln` for the rest (subnormal
/// or infinite ratios, which are rare).
#[inline(always)]
fn ln_positive(x: f64) -> f64 {
    if (f64::MIN_POSITIVE..=f64::MAX).contains(&x) {
        ln_normal(x)
    } else {
        x.ln()
    }
}

/// ln(x) for a normal finite x > 0 in plain IEEE operations (no table, no library call), so that
/// the vector loops can take the same steps a vector of lanes at a time and match it bit for bit. With
/// x = 2ᵉ·m, m in [√½, √2): ln x = e·ln 2 + 2·atanh(s), s = (m − 1)/(m + 1), |s| < 0.172; the
/// atanh series in s² to s²⁰ leaves out less than 2⁻⁵⁵ of the result; ln 2 is split in a high
/// part with trailing zeros (e·LN2_HI is exact) and the rest. Within 2 ulps of the library's
/// `ln` (tested).
#[inline(always)]
fn ln_normal(x: f64) -> f64 {
    let bits = x.to_bits();
    let mut e = ((bits >> 52) as f64) - 1023.0;
    let mut m = f64::from_bits((bits & MANTISSA) | ONE);
    if m > std::f64::consts::SQRT_2 {
        m *= 0.5;
        e += 1.0;
    }
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let mut p = ATANH_SERIES[ATANH_SERIES.len() - 1];
    for &c in ATANH_SERIES[..ATANH_SERIES.len() - 1].iter().rev() {
        p = c + z * p;
    }
    e * LN2_HI + (2.0 * s * p + e * LN2_LO)
}

const MANTISSA: u64 = (1 << 52) - 1;
/// The bits of 1.0 (a biased exponent of 1023, no mantissa).
const ONE: u64 = 1023 << 52;
/// ln 2 = LN2_HI + LN2_LO, LN2_HI with 21 trailing zero bits (fdlibm's split).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);

/// atanh(s)/s = Σ s²ᵏ/(2k + 1), k = 0 … 9: (s²)¹⁰/21 < 2.3e-17 for |s| < 0.172.
const ATANH_SERIES: [f64; 10] = [
    1.0,
    1.0 / 3.0,
    1.0 / 5.0,
    1.0 / 7.0,
    1.0 / 9.0,
    1.0 / 11.0,
    1.0 / 13.0,
    1.0 / 15.0,
    1.0 / 17.0,
    1.0 / 19.0,
];

/// 1/|r|, r = (a − b)/b, above which ln(a / b) is taken from the close series (|r| < 2⁻⁵: up to
/// 4 bf16 ulps, 32 fp16 ulps).
const LN_SERIES_INVERSE_LIMIT: f64 = 32.0;

/// Terms of the atanh series for close ratios: with |u| < 1/63, (u²)⁵/11 < 1e-19, far below an
/// ulp.
const CLOSE_TERMS: usize = 5;

/// The lanes of an AVX2 vector (two NEON vectors): the AVX2 and NEON loops take the [`LANES`]
/// in two halves of this many, each loop once per half `h`, over the pairs `i` with
/// `i mod LANES` in `HALF·h … HALF·h + HALF − 1`, so that each lane still takes its pairs in
/// order.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const HALF: usize = 4;
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const _: () = assert!(LANES == 2 * HALF, "two halves hold the lanes");

/// Sets half `h` of the lanes.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[inline(always)]
fn put(lanes: &mut [f64; LANES], h: usize, v: [f64; HALF]) {
    lanes[h * HALF..(h + 1) * HALF].copy_from_slice(&v);
}

/// Which vectors of a block hold a pair whose t − g is not zero, one bit per vector. The errors
/// and KL loops visit only those: a pair with t − g = 0 adds exactly +0 to each sum of `errors`
/// (|t − g| = 0, +0 / (|g| + ε) = +0, no count) and no KL term (|g| = |t|), and every lane keeps
/// its pairs in order, so the lanes come out as over all pairs, bit for bit. The loop that
/// fills it gathers a word's bits in a register (a bit set in memory per vector would chain
/// every step to the last one's store), and is written out in each vector module: a closure
/// would not inherit their target features.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
#[derive(Default)]
struct Differ([u64; BLOCK / LANES / 64]);

/// A bit for every vector of a block: the words hold them all.
const _: () = assert!(BLOCK % (LANES * 64) == 0, "Differ's words cover the block");

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
impl Differ {
    /// The index of the first pair of each marked vector, in order.
    #[inline(always)]
    fn starts(&self) -> impl Iterator<Item = usize> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut bits = bits;
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    (w * 64 + b) * LANES
                })
            })
        })
    }
}

/// Values decoded per block by [`Acc::update_raw`]: both f64 blocks stay in the L1 cache.
pub const BLOCK: usize = 2048;

/// Another accumulator fed the decoded blocks of [`Acc::update_raw_with`], inside the same SIMD
/// kernel (its `block` is inlined there, so the compiler vectorises it with the kernel's
/// instruction set).
pub trait AlsoBlocks {
    /// Adds a block of golden and target values (same length, logical order).
    fn block(&mut self, golden: &[f64], target: &[f64]);
}

/// Nothing else to feed.
impl AlsoBlocks for () {
    #[inline(always)]
    fn block(&mut self, _: &[f64], _: &[f64]) {}
}

impl<T: AlsoBlocks> AlsoBlocks for Option<T> {
    #[inline(always)]
    fn block(&mut self, golden: &[f64], target: &[f64]) {
        if let Some(a) = self {
            a.block(golden, target);
        }
    }
}

/// Whether every product of a golden value of `g` and a target value of `t`, and of two values
/// of one side, is exact in f64: their significant bits add up to 53 or fewer.
fn exact_products(g: Element, t: Element) -> bool {
    let (a, b) = (g.significant_bits(), t.significant_bits());
    a.max(b) * 2 <= 53
}

/// [`Acc::update_raw_with`] as a [`Kernel`]: decoding and the metric loops compiled together.
struct UpdateRaw<'a, A: AlsoBlocks> {
    acc: &'a mut Acc,
    also: &'a mut A,
    golden: (Element, &'a [u8]),
    target: (Element, &'a [u8]),
}

impl<A: AlsoBlocks> UpdateRaw<'_, A> {
    #[inline(always)]
    fn blocks(self, how: impl LaneSums) {
        let (ge, gb) = self.golden;
        let (te, tb) = self.target;
        let (gs, ts) = (ge.size().unwrap_or(1), te.size().unwrap_or(1));
        let exact = exact_products(ge, te);
        let mut g = [0f64; BLOCK];
        let mut t = [0f64; BLOCK];
        // Block by block; each decoder is handed the rest of its side (it decodes at most
        // `BLOCK` values), so that its prefetch reaches into the next block.
        let (mut go, mut to) = (0, 0);
        while go < gb.len() && to < tb.len() {
            let n = how
                .decode(ge, &gb[go..], &mut g)
                .min(how.decode(te, &tb[to..], &mut t));
            self.also.block(&g[..n], &t[..n]);
            self.acc.update_with(how, &g[..n], &t[..n], exact);
            (go, to) = (go + BLOCK * gs, to + BLOCK * ts);
        }
    }
}

impl<A: AlsoBlocks> Kernel for UpdateRaw<'_, A> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        self.blocks(Portable);
    }

    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn run_x86(self, f: simd::x86::Features) {
        self.blocks(f);
    }

    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    const AVX512: bool = true;

    #[cfg(all(target_arch = "x86_64", npgx_avx512))]
    #[inline(always)]
    fn run_x86_512(self, f: simd::x86::avx512::Features) {
        self.blocks(f);
    }

    #[cfg(target_arch = "aarch64")]
    #[inline(always)]
    fn run_neon(self, f: simd::aarch64::Features) {
        self.blocks(f);
    }
}

impl Acc {
    /// Adds raw little-endian values of each side (whole elements, the same number on both),
    /// decoded exactly to f64 [`BLOCK`] values at a time, with the widest vectors the CPU has.
    pub fn update_raw(&mut self, golden: (Element, &[u8]), target: (Element, &[u8])) {
        self.update_raw_with(golden, target, &mut ());
    }

    /// [`Acc::update_raw`], feeding `also` the same decoded blocks.
    pub fn update_raw_with(
        &mut self,
        golden: (Element, &[u8]),
        target: (Element, &[u8]),
        also: &mut impl AlsoBlocks,
    ) {
        simd::dispatch(UpdateRaw {
            acc: self,
            also,
            golden,
            target,
        });
    }

    /// Adds a chunk of golden and target values (same length, logical order).
    pub fn update(&mut self, g: &[f64], t: &[f64]) {
        self.update_with(Portable, g, t, false);
    }

    #[inline(always)]
    fn update_with(&mut self, how: impl LaneSums, g: &[f64], t: &[f64], exact: bool) {
        if g.is_empty() {
            return;
        }
        let p = part(how, g, t, exact);
        let clean = [
            p.sums.gg,
            p.sums.tt,
            p.sums.sum_sq,
            p.s2_g,
            p.s2_t,
            p.sums.kl,
        ]
        .iter()
        .all(|v| v.is_finite());
        if clean {
            self.add(&p, g.len());
            return;
        }
        // Non-finite values (or sums overflowing f64): keep only the pairs finite on both sides.
        let mut fg = std::mem::take(&mut self.fin_g);
        let mut ft = std::mem::take(&mut self.fin_t);
        fg.clear();
        ft.clear();
        for (&a, &b) in g.iter().zip(t) {
            self.golden_nan += u64::from(a.is_nan());
            self.golden_inf += u64::from(a.is_infinite());
            self.target_nan += u64::from(b.is_nan());
            self.target_inf += u64::from(b.is_infinite());
            if a.is_finite() && b.is_finite() {
                fg.push(a);
                ft.push(b);
            } else {
                let same = (a.is_nan() && b.is_nan()) || (a.is_infinite() && a == b);
                self.one_side += u64::from(!same);
            }
        }
        if !fg.is_empty() {
            let p = part(how, &fg, &ft, exact);
            self.add(&p, fg.len());
        }
        self.fin_g = fg;
        self.fin_t = ft;
    }

    #[inline(always)]
    fn add(&mut self, p: &Part, len: usize) {
        let nb = len as f64;
        let (mean_gb, m2_gb) = (p.k_g + p.s1_g / nb, p.s2_g - p.s1_g * p.s1_g / nb);
        let (mean_tb, m2_tb) = (p.k_t + p.s1_t / nb, p.s2_t - p.s1_t * p.s1_t / nb);
        let na = self.n as f64;
        let n = na + nb;
        let merge = |mean_a: f64, m2_a: f64, mean_b: f64, m2_b: f64| {
            let delta = mean_b - mean_a;
            (
                mean_a + delta * nb / n,
                m2_a + m2_b.max(0.0) + delta * delta * na * nb / n,
            )
        };
        (self.mean_g, self.m2_g) = merge(self.mean_g, self.m2_g, mean_gb, m2_gb);
        (self.mean_t, self.m2_t) = merge(self.mean_t, self.m2_t, mean_tb, m2_tb);
        self.n += len as u64;
        self.sums.add(&p.sums);
        self.kl_undefined |= p.kl_undefined;
    }

    /// The sums msprobe's metrics share with npgx's.
    pub fn products(&self) -> Products {
        let s = &self.sums;
        Products {
            dot: s.dot,
            gg: s.gg,
            tt: s.tt,
            diff2: s.sum_sq,
            max_abs: s.max_abs,
        }
    }

    /// The metrics; non-finite results (overflowing sums) become `None`.
    pub fn finish(&self) -> Metrics {
        let fin = |x: f64| x.is_finite().then_some(x);
        let mut m = Metrics {
            golden_nan: self.golden_nan,
            golden_inf: self.golden_inf,
            target_nan: self.target_nan,
            target_inf: self.target_inf,
            nan_inf_one_side: self.one_side,
            ..Metrics::default()
        };
        if self.n == 0 {
            return m;
        }
        let n = self.n as f64;
        let s = &self.sums;
        let (ng, nt) = (s.gg.sqrt(), s.tt.sqrt());
        m.cosine = match (ng == 0.0, nt == 0.0) {
            (true, true) => Some(1.0),
            (true, false) | (false, true) => Some(0.0),
            (false, false) => fin(s.dot / (ng * nt)),
        };
        m.max_abs = fin(s.max_abs);
        m.mean_abs = fin(s.sum_abs / n);
        m.rmse = fin((s.sum_sq / n).sqrt());
        m.max_rel = fin(s.max_rel);
        m.mean_rel = fin(s.sum_rel / n);
        m.acc_rel = fin(s.sum_abs / (s.sum_ag + EPS));
        m.rel_euclidean = fin(s.sum_sq.sqrt() / (ng + EPS));
        m.kl_div = if self.kl_undefined || s.sum_ag == 0.0 || s.sum_at == 0.0 {
            None
        } else {
            fin(s.kl / s.sum_ag + (s.sum_at / s.sum_ag).ln())
        };
        let (sg, st) = ((self.m2_g / n).sqrt(), (self.m2_t / n).sqrt());
        m.std_ratio = if sg == 0.0 {
            (st == 0.0).then_some(1.0)
        } else {
            fin(st / sg)
        };
        m.rel_gt_0_001 = Some(s.gt_0_001 / n);
        m.rel_gt_0_005 = Some(s.gt_0_005 / n);
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("metric is null");
        assert!((a - b).abs() <= 1e-12 * b.abs().max(1e-300), "{a} != {b}");
    }

    /// Reference values computed by hand from the formulas for g = [1, 2, 4], t = [1, 2.5, 3].
    #[test]
    fn formulas_on_a_small_pair() {
        let g = [1.0, 2.0, 4.0];
        let t = [1.0, 2.5, 3.0];
        let mut acc = Acc::default();
        // Two chunks, to exercise the merging.
        acc.update(&g[..1], &t[..1]);
        acc.update(&g[1..], &t[1..]);
        let m = acc.finish();
        let dot = 1.0 + 5.0 + 12.0;
        let (ng, nt) = (21f64.sqrt(), (1.0f64 + 6.25 + 9.0).sqrt());
        close(m.cosine, dot / (ng * nt));
        close(m.max_abs, 1.0);
        close(m.mean_abs, 1.5 / 3.0);
        close(m.rmse, (1.25f64 / 3.0).sqrt());
        close(m.max_rel, 1.0 / (4.0 + EPS));
        close(m.mean_rel, (0.5 / (2.0 + EPS) + 1.0 / (4.0 + EPS)) / 3.0);
        close(m.acc_rel, 1.5 / (7.0 + EPS));
        close(m.rel_euclidean, 1.25f64.sqrt() / (ng + EPS));
        let (p, q) = (
            [1.0f64 / 7.0, 2.0 / 7.0, 4.0 / 7.0],
            [1.0f64 / 6.5, 2.5 / 6.5, 3.0 / 6.5],
        );
        let kl: f64 = p.iter().zip(q).map(|(p, q)| p * (p / q).ln()).sum();
        close(m.kl_div, kl);
        let std = |x: &[f64]| {
            let mu = x.iter().sum::<f64>() / 3.0;
            (x.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / 3.0).sqrt()
        };
        close(m.std_ratio, std(&t) / std(&g));
        close(m.rel_gt_0_001, 2.0 / 3.0);
        close(m.rel_gt_0_005, 2.0 / 3.0);
    }

    #[test]
    fn ln_ratio_matches_ln() {
        for (a, b) in [
            (1.0005f64, 1.0f64),
            (1.0, 1.0009),
            (3.0, 2.0),
            (1e-30, 3e-30),
            (7.0, 7.0000001),
            // bf16 neighbours (1 and 4 ulps) and both sides of the series limit.
            (1.0078125, 1.0),
            (1.0, 1.03125),
            (1.0 + 1.0 / 32.0 - 1e-12, 1.0),
            (1.0 + 1.0 / 32.0 + 1e-12, 1.0),
            (0.97, 1.0),
        ] {
            let want: f64 = ((a - b) / b).ln_1p();
            let got = ln_ratio(a, b);
            assert!(
                (got - want).abs() <= 1e-12 * want.abs().max(1e-300),
                "{a}/{b}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn ln_positive_is_within_two_ulps_of_ln() {
        let ulps = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs();
        let mut x = f64::MIN_POSITIVE;
        while x < f64::MAX / 1.37 {
            // Some of these are subnormal: `ln_positive` hands them to the library.
            for y in [
                x,
                x * 0.999_999_9,
                x * std::f64::consts::SQRT_2,
                x * std::f64::consts::FRAC_1_SQRT_2,
                1.0 / x,
            ] {
                let (got, want) = (ln_positive(y), y.ln());
                assert!(ulps(got, want) <= 2, "ln({y}): {got} vs {want}");
            }
            x *= 1.37;
        }
        for y in [
            1.0,
            0.5,
            2.0,
            std::f64::consts::SQRT_2,
            1.0 + 1e-15,
            1.0 - 1e-16,
            0.97,
        ] {
            let (got, want) = (ln_normal(y), y.ln());
            assert!(
                ulps(got, want) <= 2 || (got - want).abs() < 1e-300,
                "ln({y}): {got} vs {want}"
            );
        }
        assert_eq!(ln_positive(f64::from_bits(1)), f64::from_bits(1).ln());
        assert_eq!(ln_positive(f64::INFINITY), f64::INFINITY);
    }

    #[test]
    fn non_finite_values_and_zero_rules() {
        let nan = f64::NAN;
        let inf = f64::INFINITY;
        let g = [nan, inf, inf, nan, 1.0, 0.0];
        let t = [nan, inf, -inf, 1.0, 1.0, 0.0];
        let mut acc = Acc::default();
        acc.update(&g, &t);
        let m = acc.finish();
        assert_eq!(
            (m.golden_nan, m.golden_inf, m.target_nan, m.target_inf),
            (2, 2, 1, 2)
        );
        assert_eq!(m.nan_inf_one_side, 2);
        close(m.cosine, 1.0);
        close(m.kl_div, 0.0);
        close(m.std_ratio, 1.0);

        // All zero on both sides: cosine 1, KL undefined, std ratio 1.
        let mut z = Acc::default();
        z.update(&[0.0, 0.0], &[0.0, 0.0]);
        let m = z.finish();
        close(m.cosine, 1.0);
        assert_eq!(m.kl_div, None);
        close(m.std_ratio, 1.0);
        // One side zero: cosine 0; a zero target where golden is not: KL undefined.
        let mut o = Acc::default();
        o.update(&[1.0, 2.0], &[0.0, 0.0]);
        let m = o.finish();
        close(m.cosine, 0.0);
        assert_eq!(m.kl_div, None);
        // Constant golden, varying target: std ratio undefined.
        let mut c = Acc::default();
        c.update(&[1.0, 1.0], &[1.0, 2.0]);
        assert_eq!(c.finish().std_ratio, None);
        // Nothing finite: every metric null.
        let mut e = Acc::default();
        e.update(&[nan], &[1.0]);
        let m = e.finish();
        assert_eq!((m.cosine, m.max_rel, m.nan_inf_one_side), (None, None, 1));
    }

    /// `part` with explicit vectors (`None` on the portable path); whether the products are
    /// exact.
    #[derive(Clone)]
    struct VectorPart<'a>(&'a [f64], &'a [f64], bool);

    impl Kernel for VectorPart<'_> {
        type Output = Option<Part>;
        fn run(self) -> Option<Part> {
            None
        }
        #[cfg(target_arch = "x86_64")]
        fn run_x86(self, f: simd::x86::Features) -> Option<Part> {
            Some(part(f, self.0, self.1, self.2))
        }
        #[cfg(all(target_arch = "x86_64", npgx_avx512))]
        const AVX512: bool = true;
        #[cfg(all(target_arch = "x86_64", npgx_avx512))]
        fn run_x86_512(self, f: simd::x86::avx512::Features) -> Option<Part> {
            Some(part(f, self.0, self.1, self.2))
        }
        #[cfg(target_arch = "aarch64")]
        fn run_neon(self, f: simd::aarch64::Features) -> Option<Part> {
            Some(part(f, self.0, self.1, self.2))
        }
    }

    /// Every vector path this CPU has gives the portable lanes (`exact`: the products of the
    /// values are exact, see [`exact_products`]).
    fn assert_vectors_agree(g: &[f64], t: &[f64], exact: bool) {
        let p = part(Portable, g, t, false);
        let paths = simd::on_each_vector_path(VectorPart(g, t, exact));
        assert!(!paths.is_empty(), "no vector path ran");
        for (path, v) in paths {
            let v = v.expect("the vector path ran");
            // Debug prints the shortest text that reads back to the same f64, so equal text
            // is equal bits (up to NaN payloads, which no metric shows).
            assert_eq!(
                format!("{v:?}"),
                format!("{p:?}"),
                "{path}: g = {g:?}, t = {t:?}"
            );
        }
    }

    #[test]
    fn vector_lanes_agree_with_portable_lanes_on_edge_values() {
        if !simd::vector_path_or_skip("metrics: vector lanes") {
            return;
        }
        let tiny = f64::from_bits(1); // smallest f64 subnormal
        let h_sub = 2f64.powi(-24); // smallest fp16 subnormal
        let edge = [
            0.0,
            -0.0,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            tiny,
            -tiny,
            h_sub,
            3.0 * h_sub,
            65504.0,
            -65504.0,
            f64::from(f32::MAX),
            1e300,
            1.0,
            -1.0,
            1.0005,
            1.0 + 1e-9,
            1.0078125, // one bf16 ulp above 1: the KL series
            1.03,      // still the series against 1.0 …
            1.03125,   // … and ln at the series limit
            3.0,
            -2.5,
            1e-3,
        ];
        // Every (golden, target) combination on its own among finite fillers (a non-finite sum
        // would hide a difference in the others), at every lane and in the scalar tail.
        let mut k = 0;
        for &a in &edge {
            for &b in &edge {
                // Unequal fillers mark every vector; equal ones only the vector with the edge pair, when its
                // two values differ.
                for (len, scale) in [
                    (1, 1.0001),
                    (3, 1.0001),
                    (4, 1.0001),
                    (5, 1.0001),
                    (8, 1.0001),
                    (11, 1.0001),
                    (16, 1.0001),
                    (21, 1.0001),
                    (4, 1.0),
                    (9, 1.0),
                    (16, 1.0),
                    (24, 1.0),
                ] {
                    let mut g: Vec<f64> = (0..len).map(|i| 0.5 + 0.25 * f64::from(i)).collect();
                    // (fp32 fillers: with fp32 edge values, the products are exact.)
                    let mut t: Vec<f64> = g.iter().map(|v| f64::from((v * scale) as f32)).collect();
                    let at = k % len as usize;
                    (g[at], t[at]) = (a, b);
                    assert_vectors_agree(&g, &t, false);
                    // Values that are fp32 (fp16 and bf16 among them) multiply exactly.
                    if g.iter()
                        .chain(&t)
                        .all(|v| f64::from(*v as f32).to_bits() == v.to_bits())
                    {
                        assert_vectors_agree(&g, &t, true);
                    }
                    k += 1;
                }
            }
        }
        // Close values (the KL series), far values (`ln`), and both in one vector; then mostly
        // equal pairs (most vectors skipped by the errors and KL loops), also beyond a block
        // (the portable lanes).
        let g: Vec<f64> = (0..BLOCK + 9)
            .map(|i| (i as f64 * 0.37).sin() * 100.0)
            .collect();
        let t: Vec<f64> = g
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                v * if i % 7 == 0 {
                    1.3
                } else {
                    1.0 + 1e-4 * (i % 5) as f64
                }
            })
            .collect();
        assert_vectors_agree(&g[..1001], &t[..1001], false);
        let t: Vec<f64> = g
            .iter()
            .enumerate()
            .map(|(i, &v)| match i % 13 {
                0 => v * 1.3,
                5 | 6 if i % 3 == 0 => v * (1.0 + 1e-4),
                9 if i > 500 => -v,
                _ => v,
            })
            .collect();
        // Up to a block and its tail on the vector path (a whole block of vectors, then one to
        // seven pairs); past a block the vector path takes the portable lanes.
        for len in [
            17,
            100,
            1001,
            BLOCK - 5,
            BLOCK,
            BLOCK + 1,
            BLOCK + 3,
            BLOCK + 7,
            BLOCK + 9,
        ] {
            assert_vectors_agree(&g[..len], &t[..len], false);
            let (g32, t32): (Vec<f64>, Vec<f64>) = g[..len]
                .iter()
                .zip(&t[..len])
                .map(|(&a, &b)| (f64::from(a as f32), f64::from(b as f32)))
                .unzip();
            assert_vectors_agree(&g32, &t32, true);
        }
    }

    #[test]
    fn the_dispatched_kernel_agrees_with_the_portable_one() {
        // On a CPU with AVX2/FMA/F16C `update_raw` runs the vector build; its answer must be the
        // portable one, bit for bit, across block boundaries and with non-finite values.
        if !simd::vector_path_or_skip("metrics: dispatched kernel") {
            return;
        }
        let g: Vec<u8> = (0..5000)
            .flat_map(|i| {
                let v = if i % 997 == 3 {
                    f32::NAN
                } else {
                    (i as f32).sin()
                };
                v.to_le_bytes()
            })
            .collect();
        let t: Vec<u8> = (0..5000u32)
            .flat_map(|i| ((i * 7919) as u16).to_le_bytes()) // every kind of fp16: NaN, inf, subnormal
            .collect();
        let mut a = Acc::default();
        UpdateRaw {
            acc: &mut a,
            also: &mut (),
            golden: (Element::F32, &g),
            target: (Element::F16, &t),
        }
        .run();
        let mut b = Acc::default();
        simd::on_vector_path(|| b.update_raw((Element::F32, &g), (Element::F16, &t)));
        assert_eq!(format!("{:?}", a.finish()), format!("{:?}", b.finish()));
        assert_eq!(a.finish().golden_nan, 6);
        assert!(a.finish().target_nan > 0);
        // And each vector path on its own (the dispatch takes the widest): products that are
        // exact (fp32 by fp16, a fused multiply-add where the path has one), and f64 and int32
        // values whose products round (a fused multiply-add would round once, not twice).
        let g64: Vec<u8> = (0..5000)
            .flat_map(|i| ((i as f64 * 0.37).sin() * 1e3).to_le_bytes())
            .collect();
        let t64: Vec<u8> = (0..5000)
            .flat_map(|i| {
                ((i as f64 * 0.37).sin() * 1e3 * (1.0 + 1e-7 * f64::from(i % 3))).to_le_bytes()
            })
            .collect();
        let i32s: Vec<u8> = (0..5000i32)
            .flat_map(|i| (i.wrapping_mul(0x3779_B97F) | 1).to_le_bytes())
            .collect();
        for raw in [
            Raw((Element::F32, &g), (Element::F16, &t)),
            Raw((Element::F64, &g64), (Element::F64, &t64)),
            Raw((Element::I32, &i32s), (Element::F32, &g)),
        ] {
            let want = raw.clone().run().finish();
            let paths = simd::on_each_vector_path(raw);
            assert!(!paths.is_empty(), "no vector path ran");
            for (path, c) in paths {
                assert_eq!(format!("{:?}", c.finish()), format!("{want:?}"), "{path}");
            }
        }
        assert_eq!(
            format!(
                "{:?}",
                Raw((Element::F32, &g), (Element::F16, &t)).run().finish()
            ),
            format!("{:?}", a.finish())
        );
    }

    #[test]
    fn significant_bits_bound_every_decoded_value() {
        // The bits of a finite f64's significand, from its leading one to its last one.
        fn bits(v: f64) -> u32 {
            if v == 0.0 || !v.is_finite() {
                return 0;
            }
            let raw = v.to_bits() & MANTISSA;
            let m = if v.abs() >= f64::MIN_POSITIVE {
                raw | (1 << 52)
            } else {
                raw
            };
            64 - m.leading_zeros() - m.trailing_zeros()
        }
        let mut out = vec![0f64; 1 << 16];
        for el in Element::ALL {
            let size = el.size().unwrap_or(1);
            // Every pattern of the narrow types; of the wide ones, patterns with every bit
            // count (a run of ones at each place, all ones, one bit).
            let words: Vec<u64> = if size <= 2 {
                (0..1u64 << (8 * size)).collect()
            } else {
                (0..64)
                    .flat_map(|k| [u64::MAX >> k, (u64::MAX >> k) << (k / 2), 1 << k])
                    .collect()
            };
            let bytes: Vec<u8> = words
                .iter()
                .flat_map(|w| {
                    let b = w.to_le_bytes();
                    (0..size).map(move |i| b[i % 8])
                })
                .collect();
            let n = decode_to(el, &bytes, &mut out);
            if matches!(el, Element::I4 | Element::C64 | Element::C128) {
                // Not decoded here: never the values of a metric block.
                assert_eq!(n, 0, "{el:?}");
                continue;
            }
            let most = out[..n].iter().map(|&v| bits(v)).max().unwrap_or(0);
            assert_eq!(most, el.significant_bits(), "{el:?}");
        }
        assert!(exact_products(Element::F32, Element::F16));
        assert!(!exact_products(Element::F32, Element::I32));
        assert!(!exact_products(Element::F64, Element::F16));
    }

    /// `update_raw` of golden and target bytes of the given elements on one path, as a kernel.
    #[derive(Clone)]
    struct Raw<'a>((Element, &'a [u8]), (Element, &'a [u8]));

    impl<'a> Raw<'a> {
        fn kernel<'b>(&self, acc: &'b mut Acc, also: &'b mut ()) -> UpdateRaw<'b, ()>
        where
            'a: 'b,
        {
            UpdateRaw {
                acc,
                also,
                golden: self.0,
                target: self.1,
            }
        }
    }

    impl Kernel for Raw<'_> {
        type Output = Acc;
        fn run(self) -> Acc {
            let mut acc = Acc::default();
            self.kernel(&mut acc, &mut ()).run();
            acc
        }
        #[cfg(target_arch = "x86_64")]
        fn run_x86(self, f: simd::x86::Features) -> Acc {
            let mut acc = Acc::default();
            self.kernel(&mut acc, &mut ()).run_x86(f);
            acc
        }
        #[cfg(all(target_arch = "x86_64", npgx_avx512))]
        const AVX512: bool = true;
        #[cfg(all(target_arch = "x86_64", npgx_avx512))]
        fn run_x86_512(self, f: simd::x86::avx512::Features) -> Acc {
            let mut acc = Acc::default();
            self.kernel(&mut acc, &mut ()).run_x86_512(f);
            acc
        }
        #[cfg(target_arch = "aarch64")]
        fn run_neon(self, f: simd::aarch64::Features) -> Acc {
            let mut acc = Acc::default();
            self.kernel(&mut acc, &mut ()).run_neon(f);
            acc
        }
    }
}
