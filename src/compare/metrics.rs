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
use crate::dump::simd::{self, Kernel};
use crate::dump::values::decode_to;

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
    dot: f64,
    gg: f64,
    tt: f64,
    max_abs: f64,
    sum_abs: f64,
    sum_sq: f64,
    max_rel: f64,
    sum_rel: f64,
    sum_ag: f64,
    sum_at: f64,
    kl: f64,
    kl_undefined: bool,
    gt_0_001: u64,
    gt_0_005: u64,
    mean_g: f64,
    m2_g: f64,
    mean_t: f64,
    m2_t: f64,
    fin_g: Vec<f64>,
    fin_t: Vec<f64>,
}

/// Sums over one chunk of pairs.
#[derive(Default)]
struct Part {
    dot: f64,
    gg: f64,
    tt: f64,
    max_abs: f64,
    sum_abs: f64,
    sum_sq: f64,
    max_rel: f64,
    sum_rel: f64,
    sum_ag: f64,
    sum_at: f64,
    kl: f64,
    kl_undefined: bool,
    gt_0_001: u64,
    gt_0_005: u64,
    /// Σ(x − k) and Σ(x − k)² with k the chunk's first value (shifted moments: no
    /// cancellation as long as k is within a few standard deviations of the mean).
    k_g: f64,
    k_t: f64,
    s1_g: f64,
    s2_g: f64,
    s1_t: f64,
    s2_t: f64,
}

/// Independent accumulators per lane, so the compiler can keep them in SIMD registers (f64
/// addition is not associative, so a single accumulator forbids vectorising the loop).
const LANES: usize = 4;
const _: () = assert!(LANES == 4, "part() steps the lanes one by one");

#[derive(Default)]
struct Lanes {
    dot: [f64; LANES],
    gg: [f64; LANES],
    tt: [f64; LANES],
    max_abs: [f64; LANES],
    sum_abs: [f64; LANES],
    sum_sq: [f64; LANES],
    max_rel: [f64; LANES],
    sum_rel: [f64; LANES],
    sum_ag: [f64; LANES],
    sum_at: [f64; LANES],
    /// Counts kept as f64 (exact below 2^53; a block holds [`BLOCK`] values) so the loop
    /// vectorises.
    gt_0_001: [f64; LANES],
    gt_0_005: [f64; LANES],
    s1_g: [f64; LANES],
    s2_g: [f64; LANES],
    s1_t: [f64; LANES],
    s2_t: [f64; LANES],
}

impl Lanes {
    #[inline(always)]
    fn step(&mut self, l: usize, g: f64, t: f64, k_g: f64, k_t: f64) {
        let d = t - g;
        let ad = d.abs();
        let ag = g.abs();
        self.dot[l] += g * t;
        self.gg[l] += g * g;
        self.tt[l] += t * t;
        self.max_abs[l] = if ad > self.max_abs[l] {
            ad
        } else {
            self.max_abs[l]
        };
        self.sum_abs[l] += ad;
        self.sum_sq[l] += d * d;
        let rel = ad / (ag + EPS);
        self.max_rel[l] = if rel > self.max_rel[l] {
            rel
        } else {
            self.max_rel[l]
        };
        self.sum_rel[l] += rel;
        self.gt_0_001[l] += if rel > 0.001 { 1.0 } else { 0.0 };
        self.gt_0_005[l] += if rel > 0.005 { 1.0 } else { 0.0 };
        self.sum_ag[l] += ag;
        self.sum_at[l] += t.abs();
        let (dg, dt) = (g - k_g, t - k_t);
        self.s1_g[l] += dg;
        self.s2_g[l] += dg * dg;
        self.s1_t[l] += dt;
        self.s2_t[l] += dt * dt;
    }
}

/// One pass over a chunk. With non-finite values the sums come out non-finite, which is how
/// [`Acc::update`] knows to filter.
#[inline(always)]
fn part(g: &[f64], t: &[f64]) -> Part {
    let (k_g, k_t) = (
        g.first().copied().unwrap_or(0.0),
        t.first().copied().unwrap_or(0.0),
    );
    let mut x = Lanes::default();
    let n = g.len().min(t.len());
    let whole = n / LANES * LANES;
    for (gc, tc) in g[..whole]
        .chunks_exact(LANES)
        .zip(t[..whole].chunks_exact(LANES))
    {
        // Written out lane by lane (not a loop over `l`), so the four steps sit side by side and
        // are vectorised together, the accumulators kept in registers.
        x.step(0, gc[0], tc[0], k_g, k_t);
        x.step(1, gc[1], tc[1], k_g, k_t);
        x.step(2, gc[2], tc[2], k_g, k_t);
        x.step(3, gc[3], tc[3], k_g, k_t);
    }
    for i in whole..n {
        x.step(0, g[i], t[i], k_g, k_t);
    }
    let sum = |a: [f64; LANES]| (a[0] + a[1]) + (a[2] + a[3]);
    let max = |a: [f64; LANES]| a.iter().fold(0.0f64, |m, &v| m.max(v));
    let mut p = Part {
        dot: sum(x.dot),
        gg: sum(x.gg),
        tt: sum(x.tt),
        max_abs: max(x.max_abs),
        sum_abs: sum(x.sum_abs),
        sum_sq: sum(x.sum_sq),
        max_rel: max(x.max_rel),
        sum_rel: sum(x.sum_rel),
        sum_ag: sum(x.sum_ag),
        sum_at: sum(x.sum_at),
        gt_0_001: sum(x.gt_0_001) as u64,
        gt_0_005: sum(x.gt_0_005) as u64,
        k_g,
        k_t,
        s1_g: sum(x.s1_g),
        s2_g: sum(x.s2_g),
        s1_t: sum(x.s1_t),
        s2_t: sum(x.s2_t),
        ..Part::default()
    };
    // KL terms: zero where |g| = |t| (common after a low-precision round trip), so a branchy
    // loop of its own keeps the main loop free of branches.
    let mut kl = [0.0f64; LANES];
    for (i, (&g, &t)) in g.iter().zip(t).enumerate() {
        let (ag, at) = (g.abs(), t.abs());
        if ag > 0.0 && ag != at {
            if at == 0.0 {
                p.kl_undefined = true;
            } else {
                kl[i % LANES] += ag * ln_ratio(ag, at);
            }
        }
    }
    p.kl = sum(kl);
    p
}

/// ln(a / b) for a, b > 0. Close ratios (the common case: a low-precision target against its
/// golden) take ln(1 + r) from its series with r = (a − b) / b, which is exact to rounding (a − b
/// is exact there) and avoids a `ln` call per element; others call `ln`.
#[inline(always)]
fn ln_ratio(a: f64, b: f64) -> f64 {
    let r = (a - b) / b;
    if r.abs() < 1e-3 {
        // r − r²/2 + r³/3 − r⁴/4 + r⁵/5 − r⁶/6; the next term is below 1.5e-19·|r|.
        r * (1.0 - r * (0.5 - r * (1.0 / 3.0 - r * (0.25 - r * (0.2 - r * (1.0 / 6.0))))))
    } else {
        (a / b).ln()
    }
}

/// Values decoded per block by [`Acc::update_raw`]: both f64 blocks stay in the L1 cache.
pub const BLOCK: usize = 2048;

/// [`Acc::update_raw`] as a [`Kernel`]: decoding and the metric loop compiled together.
struct UpdateRaw<'a> {
    acc: &'a mut Acc,
    golden: (Element, &'a [u8]),
    target: (Element, &'a [u8]),
}

impl Kernel for UpdateRaw<'_> {
    type Output = ();
    #[inline(always)]
    fn run(self) {
        let (ge, gb) = self.golden;
        let (te, tb) = self.target;
        let (gs, ts) = (ge.size().unwrap_or(1), te.size().unwrap_or(1));
        let mut g = [0f64; BLOCK];
        let mut t = [0f64; BLOCK];
        for (gc, tc) in gb.chunks(BLOCK * gs).zip(tb.chunks(BLOCK * ts)) {
            let n = decode_to(ge, gc, &mut g).min(decode_to(te, tc, &mut t));
            self.acc.update(&g[..n], &t[..n]);
        }
    }
}

impl Acc {
    /// Adds raw little-endian values of each side (whole elements, the same number on both),
    /// decoded exactly to f64 [`BLOCK`] values at a time, with the widest vectors the CPU has.
    pub fn update_raw(&mut self, golden: (Element, &[u8]), target: (Element, &[u8])) {
        simd::dispatch(UpdateRaw {
            acc: self,
            golden,
            target,
        });
    }

    /// Adds a chunk of golden and target values (same length, logical order).
    #[inline(always)]
    pub fn update(&mut self, g: &[f64], t: &[f64]) {
        if g.is_empty() {
            return;
        }
        let p = part(g, t);
        let clean = [p.gg, p.tt, p.sum_sq, p.s2_g, p.s2_t, p.kl]
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
            let p = part(&fg, &ft);
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
        self.dot += p.dot;
        self.gg += p.gg;
        self.tt += p.tt;
        self.max_abs = self.max_abs.max(p.max_abs);
        self.sum_abs += p.sum_abs;
        self.sum_sq += p.sum_sq;
        self.max_rel = self.max_rel.max(p.max_rel);
        self.sum_rel += p.sum_rel;
        self.sum_ag += p.sum_ag;
        self.sum_at += p.sum_at;
        self.kl += p.kl;
        self.kl_undefined |= p.kl_undefined;
        self.gt_0_001 += p.gt_0_001;
        self.gt_0_005 += p.gt_0_005;
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
        let (ng, nt) = (self.gg.sqrt(), self.tt.sqrt());
        m.cosine = match (ng == 0.0, nt == 0.0) {
            (true, true) => Some(1.0),
            (true, false) | (false, true) => Some(0.0),
            (false, false) => fin(self.dot / (ng * nt)),
        };
        m.max_abs = fin(self.max_abs);
        m.mean_abs = fin(self.sum_abs / n);
        m.rmse = fin((self.sum_sq / n).sqrt());
        m.max_rel = fin(self.max_rel);
        m.mean_rel = fin(self.sum_rel / n);
        m.acc_rel = fin(self.sum_abs / (self.sum_ag + EPS));
        m.rel_euclidean = fin(self.sum_sq.sqrt() / (ng + EPS));
        m.kl_div = if self.kl_undefined || self.sum_ag == 0.0 || self.sum_at == 0.0 {
            None
        } else {
            fin(self.kl / self.sum_ag + (self.sum_at / self.sum_ag).ln())
        };
        let (sg, st) = ((self.m2_g / n).sqrt(), (self.m2_t / n).sqrt());
        m.std_ratio = if sg == 0.0 {
            (st == 0.0).then_some(1.0)
        } else {
            fin(st / sg)
        };
        m.rel_gt_0_001 = Some(self.gt_0_001 as f64 / n);
        m.rel_gt_0_005 = Some(self.gt_0_005 as f64 / n);
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

    #[test]
    fn the_dispatched_kernel_agrees_with_the_portable_one() {
        // On a CPU with AVX2/F16C `update_raw` runs the vector build; its answer must be the
        // portable one, bit for bit, across block boundaries and with non-finite values.
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
            golden: (Element::F32, &g),
            target: (Element::F16, &t),
        }
        .run();
        let mut b = Acc::default();
        b.update_raw((Element::F32, &g), (Element::F16, &t));
        assert_eq!(format!("{:?}", a.finish()), format!("{:?}", b.finish()));
        assert_eq!(a.finish().golden_nan, 6);
        assert!(a.finish().target_nan > 0);
    }
}
