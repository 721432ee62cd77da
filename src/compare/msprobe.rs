//! msprobe compare's six real-data metrics, as msprobe computes them, for pairs of msprobe
//! tensor dumps (`docs/dump-compare.md`, "msprobe dumps").
//!
//! msprobe loads both tensors (bf16 and fp8 widened to float32, other types kept), squeezes
//! size-1 dimensions, and refuses a pair whose dtypes differ (unless both are floats: fp16,
//! bf16, fp32, fp64) or whose NaN / Inf positions differ; where they agree, those elements count
//! as 0 on both sides. Then, over all elements:
//!
//! * `Cosine` = g·t / (‖g‖·‖t‖) in float64 (both norms ≤ f64 epsilon → 1; one → no value),
//!   printed with 12 decimals and, above 0.9999, rounded to 6;
//! * `EucDist` = ‖t − g‖₂ in float64;
//! * `MaxAbsErr` = max |t − g| in float64, 12 decimals;
//! * `MaxRelativeErr` = max |(t − g) / g| in the common float type of the pair and float32
//!   (float32 for 16- and 32-bit floats, float64 for float64 and integers), the type's epsilon
//!   added to t and g where g is 0; 12 decimals;
//! * `One Thousandth` / `Five Thousandths Err Ratio` = the share of elements whose relative error
//!   (as above) is below 0.001 / 0.005; 12 decimals.
//!
//! A 0-d tensor has no Cosine, EucDist or ratios ("unsupported"); its MaxAbsErr and
//! MaxRelativeErr are taken from the raw values (a NaN gives "Nan"). This accumulator runs beside
//! npgx's own ([`super::metrics::Acc`]) on the same decoded blocks, in the same SIMD kernel
//! ([`super::metrics::AlsoBlocks`]); it keeps what is msprobe's own (the count, the relative
//! errors, the NaN / Inf positions) and takes the products and squares from npgx's
//! ([`Products`]).

use std::borrow::Cow;

use npgx_parsers::dump::dtype::Element;

use super::metrics::Products;
use super::records::{MsprobeMetrics, MsprobeSummary as Summary, MsprobeValue as Value};

const UNSUPPORTED: Value = Value::Text(Cow::Borrowed("unsupported"));
const NA: Value = Value::Text(Cow::Borrowed("N/A"));
/// msprobe's value of a metric that came out NaN or could not divide by a zero norm.
const NAN: Value = Value::Text(Cow::Borrowed("Nan"));

impl MsprobeMetrics {
    /// Every column `value`, with `message`.
    fn all(value: Value, message: &str) -> MsprobeMetrics {
        MsprobeMetrics {
            cosine: value.clone(),
            euc_dist: value.clone(),
            max_abs_err: value.clone(),
            max_relative_err: value.clone(),
            one_thousandth_err_ratio: value.clone(),
            five_thousandths_err_ratio: value,
            message: message.to_string(),
        }
    }
}

/// The type msprobe compares a tensor in: bf16 and fp8 are widened to float32 when loaded.
fn loaded(el: Element) -> Element {
    match el {
        Element::Bf16 | Element::F8E4m3fn | Element::F8E5m2 => Element::F32,
        other => other,
    }
}

/// Running sums over the pairs of values seen.
#[derive(Debug)]
pub struct Acc {
    /// Relative errors in float64 (float64 or integer data), else in float32.
    wide: bool,
    n: u64,
    max_rel: f64,
    rel_nan: bool,
    below_0_001: u64,
    below_0_005: u64,
    /// A NaN or Inf on one side where the other has none (or the other kind).
    specials_differ: bool,
    /// The first pair of values as read (a 0-d tensor's only one).
    first: Option<(f64, f64)>,
}

/// msprobe's relative error of one element (see the module's comment).
#[inline(always)]
fn relative(wide: bool, g: f64, t: f64) -> f64 {
    if wide {
        relative_of::<true>(g, t)
    } else {
        relative_of::<false>(g, t)
    }
}

/// [`relative`] with its type fixed at compile time, written without branches (selects) so a
/// loop over it vectorises.
#[inline(always)]
fn relative_of<const WIDE: bool>(g: f64, t: f64) -> f64 {
    if WIDE {
        let zero = g == 0.0;
        let gd = if zero { f64::EPSILON } else { g };
        let td = if zero { t + f64::EPSILON } else { t };
        ((td - gd) / gd).abs()
    } else {
        let (g, t) = (g as f32, t as f32);
        let zero = g == 0.0;
        let gd = if zero { f32::EPSILON } else { g };
        let td = if zero { t + f32::EPSILON } else { t };
        f64::from(((td - gd) / gd).abs())
    }
}

/// Independent accumulators of [`Acc::update_block`] (f64 addition is not associative: one
/// accumulator would forbid vectorising the loop).
const LANES: usize = 4;
/// Relative errors formed at a time by [`Acc::update_block`] (a multiple of [`LANES`]; 2 KiB,
/// beside the blocks in the L1 cache).
const REL_CHUNK: usize = 256;

/// A value printed with 12 decimals and read back, as msprobe's `format_value`; NaN is "Nan".
fn twelve(v: f64) -> Value {
    match format!("{v:.12}").parse::<f64>() {
        Ok(x) if !v.is_nan() => Value::Number(x),
        _ => NAN,
    }
}

impl Acc {
    pub fn new(golden: Element, target: Element) -> Acc {
        let float = |e| matches!(loaded(e), Element::F16 | Element::F32);
        Acc {
            wide: !(float(golden) && float(target)),
            n: 0,
            max_rel: 0.0,
            rel_nan: false,
            below_0_001: 0,
            below_0_005: 0,
            specials_differ: false,
            first: None,
        }
    }

    /// Adds a block of pairs (golden, target), decoded exactly to f64, in the common case —
    /// every value finite — in [`LANES`] independent lanes the compiler vectorises (inlined
    /// into the caller's SIMD kernel, [`super::metrics::Acc::update_raw_with`]); a block with a
    /// NaN or an infinity (or relative errors too large to sum) goes through [`Acc::update`]'s
    /// element rules instead. The answer is [`Acc::update`]'s.
    #[inline(always)]
    pub fn update_block(&mut self, golden: &[f64], target: &[f64]) {
        if self.wide {
            self.lanes::<true>(golden, target);
        } else {
            self.lanes::<false>(golden, target);
        }
    }

    #[inline(always)]
    fn lanes<const WIDE: bool>(&mut self, golden: &[f64], target: &[f64]) {
        let n = golden.len().min(target.len());
        let whole = n / LANES * LANES;
        let mut x = [[0f64; LANES]; 4];
        let [sum_rel, max_rel, below_0_001, below_0_005] = &mut x;
        // The relative errors first, in a loop of their own with no sums (a map, which the
        // compiler vectorises with its type conversions and selects), then the sums in lanes.
        let mut rel = [0f64; REL_CHUNK];
        for (gs, ts) in golden[..whole]
            .chunks(REL_CHUNK)
            .zip(target[..whole].chunks(REL_CHUNK))
        {
            for ((r, &g), &t) in rel.iter_mut().zip(gs).zip(ts) {
                *r = relative_of::<WIDE>(g, t);
            }
            for rc in rel[..gs.len()].chunks_exact(LANES) {
                for l in 0..LANES {
                    let rel = rc[l];
                    sum_rel[l] += rel;
                    max_rel[l] = if rel > max_rel[l] { rel } else { max_rel[l] };
                    below_0_001[l] += if rel < 0.001 { 1.0 } else { 0.0 };
                    below_0_005[l] += if rel < 0.005 { 1.0 } else { 0.0 };
                }
            }
        }
        let sum = |a: &[f64; LANES]| a.iter().sum::<f64>();
        // A NaN or an infinity among the values makes a relative error, and so their sum, not
        // finite (finite values give finite ones): such a block takes the element rules.
        if !sum(sum_rel).is_finite() {
            self.update(golden, target);
            return;
        }
        if whole > 0 {
            self.first.get_or_insert((golden[0], target[0]));
        }
        self.n += whole as u64;
        self.max_rel = self
            .max_rel
            .max(max_rel.iter().fold(0f64, |m, &v| m.max(v)));
        self.below_0_001 += sum(below_0_001) as u64;
        self.below_0_005 += sum(below_0_005) as u64;
        self.update(&golden[whole..n], &target[whole..n]);
    }

    /// Adds pairs of values (golden, target), decoded exactly to f64.
    pub fn update(&mut self, golden: &[f64], target: &[f64]) {
        for (&g, &t) in golden.iter().zip(target) {
            self.first.get_or_insert((g, t));
            let (g, t) = if g.is_finite() && t.is_finite() {
                (g, t)
            } else {
                let same = (g.is_nan() == t.is_nan()) && (g.is_infinite() == t.is_infinite());
                self.specials_differ |= !same;
                (0.0, 0.0)
            };
            self.n += 1;
            let rel = relative(self.wide, g, t);
            self.rel_nan |= rel.is_nan();
            self.max_rel = self.max_rel.max(rel);
            self.below_0_001 += u64::from(rel < 0.001);
            self.below_0_005 += u64::from(rel < 0.005);
        }
    }

    /// The metrics of a pair of tensors of these loaded element types and this many
    /// dimensions left after squeezing, with the sums npgx's accumulator formed over the same
    /// values ([`Products`]: msprobe's NaN / Inf positions count as 0 on both sides, which adds
    /// what npgx's leaving them out adds — nothing).
    pub fn finish(
        &self,
        golden: Element,
        target: Element,
        squeezed_dims: usize,
        sums: &Products,
    ) -> MsprobeMetrics {
        if self.n == 0 {
            return MsprobeMetrics::all(UNSUPPORTED, "This is empty data, can not compare.");
        }
        let float = |e| matches!(loaded(e), Element::F16 | Element::F32 | Element::F64);
        if loaded(golden) != loaded(target) && !(float(golden) && float(target)) {
            return MsprobeMetrics::all(NA, "Dtype of NPU and bench Tensor do not match. Skipped.");
        }
        if let (0, Some((g, t))) = (squeezed_dims, self.first) {
            let mut m = MsprobeMetrics::all(UNSUPPORTED, "");
            m.max_abs_err = twelve((t - g).abs());
            m.max_relative_err = twelve(relative(self.wide, g, t));
            return m;
        }
        if self.specials_differ {
            return MsprobeMetrics::all(
                NA,
                "The position of inf or nan in NPU and bench Tensor do not match.",
            );
        }
        let scalar = squeezed_dims == 0;
        let (gn, tn) = (sums.gg.sqrt(), sums.tt.sqrt());
        let cosine = if scalar {
            UNSUPPORTED
        } else if gn <= f64::EPSILON && tn <= f64::EPSILON {
            Value::Number(1.0)
        } else if gn <= f64::EPSILON || tn <= f64::EPSILON {
            NAN
        } else {
            match twelve(sums.dot / (gn * tn)) {
                Value::Number(c) if c > 0.9999 => Value::Number((c * 1e6).round() / 1e6),
                other => other,
            }
        };
        let ratio = |count: u64| {
            if scalar {
                UNSUPPORTED
            } else {
                twelve(count as f64 / self.n as f64)
            }
        };
        MsprobeMetrics {
            cosine,
            euc_dist: if scalar {
                UNSUPPORTED
            } else {
                Value::Number(sums.diff2.sqrt())
            },
            max_abs_err: twelve(sums.max_abs),
            max_relative_err: if self.rel_nan {
                NAN
            } else {
                twelve(self.max_rel)
            },
            one_thousandth_err_ratio: ratio(self.below_0_001),
            five_thousandths_err_ratio: ratio(self.below_0_005),
            message: String::new(),
        }
    }
}

impl super::metrics::AlsoBlocks for Acc {
    #[inline(always)]
    fn block(&mut self, golden: &[f64], target: &[f64]) {
        self.update_block(golden, target);
    }
}

/// Dimensions left after dropping the size-1 ones (numpy's `squeeze`).
pub fn squeezed_dims(shape: &[u64]) -> usize {
    shape.iter().filter(|&&d| d != 1).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// msprobe's metrics of the pair (golden `ge`, target `te`), with npgx's sums beside.
    fn pair(g: &[f64], t: &[f64], ge: Element, te: Element, dims: usize) -> MsprobeMetrics {
        let mut a = Acc::new(ge, te);
        a.update(g, t);
        let mut sums = super::super::metrics::Acc::default();
        sums.update(g, t);
        a.finish(ge, te, dims, &sums.products())
    }

    fn run(g: &[f64], t: &[f64], el: Element, dims: usize) -> MsprobeMetrics {
        pair(g, t, el, el, dims)
    }

    #[test]
    fn the_six_metrics_by_msprobe_rules() {
        let m = run(
            &[1.0, 2.0, 0.0, 4.0],
            &[1.0, 2.002, 1e-8, 3.0],
            Element::F32,
            1,
        );
        assert_eq!(m.max_abs_err, Value::Number(1.0));
        let euc = (0.002f64.powi(2) + 1e-16 + 1.0).sqrt();
        assert!((m.euc_dist.number().unwrap() - euc).abs() < 1e-15);
        // numpy, float32: relative errors [0, 0.00100005, 0.08388603, 0.25].
        assert_eq!(m.max_relative_err, Value::Number(0.25));
        assert_eq!(m.one_thousandth_err_ratio, Value::Number(0.25));
        assert_eq!(m.five_thousandths_err_ratio, Value::Number(0.5));
        assert!(m.message.is_empty());
    }

    #[test]
    fn blocks_in_lanes_give_the_element_rules_answer() {
        let g: Vec<f64> = (0..103).map(|i| (f64::from(i) * 0.37).sin()).collect();
        let mut t: Vec<f64> = g.iter().map(|v| v * 1.002 + 1e-4).collect();
        t[7] = 0.0;
        let mut zeros = g.clone();
        zeros[3] = 0.0;
        let mut nan = g.clone();
        nan[50] = f64::NAN;
        for el in [Element::F16, Element::F64] {
            for golden in [&g, &zeros, &nan] {
                let (mut a, mut b) = (Acc::new(el, el), Acc::new(el, el));
                a.update(golden, &t);
                for (gc, tc) in golden.chunks(40).zip(t.chunks(40)) {
                    b.update_block(gc, tc);
                }
                let mut sums = super::super::metrics::Acc::default();
                sums.update(golden, &t);
                let sums = sums.products();
                let (a, b) = (a.finish(el, el, 1, &sums), b.finish(el, el, 1, &sums));
                assert_eq!(a.message, b.message);
                for (x, y) in [
                    (&a.cosine, &b.cosine),
                    (&a.euc_dist, &b.euc_dist),
                    (&a.max_abs_err, &b.max_abs_err),
                    (&a.max_relative_err, &b.max_relative_err),
                    (&a.one_thousandth_err_ratio, &b.one_thousandth_err_ratio),
                    (&a.five_thousandths_err_ratio, &b.five_thousandths_err_ratio),
                ] {
                    match (x.number(), y.number()) {
                        (Some(x), Some(y)) => assert!((x - y).abs() <= 1e-14 * x.abs(), "{x} {y}"),
                        _ => assert_eq!(x, y),
                    }
                }
            }
        }
    }

    #[test]
    fn refusals_and_scalars() {
        let m = run(&[1.0, f64::NAN], &[1.0, 2.0], Element::F32, 1);
        assert_eq!(m.cosine, NA);
        assert!(m.message.starts_with("The position of inf or nan"));
        // Agreeing NaN positions count as 0 on both sides.
        let m = run(&[1.0, f64::NAN], &[1.0, f64::NAN], Element::F32, 1);
        assert_eq!(m.cosine, Value::Number(1.0));
        let m = run(&[3.0], &[2.0], Element::F32, 0);
        assert_eq!((m.cosine, m.max_abs_err), (UNSUPPORTED, Value::Number(1.0)));
        let m = run(&[3.0], &[f64::NAN], Element::F32, 0);
        assert_eq!((m.cosine, m.max_abs_err), (UNSUPPORTED, NAN));
        let same = |ge, te| pair(&[1.0, 2.0], &[1.0, 2.0], ge, te, 1).cosine;
        assert_eq!(same(Element::F16, Element::F32), Value::Number(1.0));
        assert_eq!(same(Element::I32, Element::F32), NA);
        assert_eq!(same(Element::Bf16, Element::F32), Value::Number(1.0));
        assert_eq!(squeezed_dims(&[1, 3, 1]), 1);
    }
}

const INF: Value = Value::Text(Cow::Borrowed("inf"));
const NEG_INF: Value = Value::Text(Cow::Borrowed("-inf"));

/// One statistic's difference and relative difference (percent), msprobe's way.
fn stat_diff(golden: Option<f64>, target: Option<f64>) -> (Value, Value) {
    let (g, t) = match (golden, target) {
        (Some(g), Some(t)) => (g, t),
        // msprobe compares the printed values: two absent ones are equal.
        (None, None) => return (Value::Number(0.0), Value::Number(0.0)),
        _ => return (NA, NA),
    };
    if g == t || (g.is_nan() && t.is_nan()) {
        return (Value::Number(0.0), Value::Number(0.0));
    }
    if g.is_nan() || t.is_nan() {
        return (NAN, NAN);
    }
    let d = t - g;
    let word = |v: f64| match v {
        v if v.is_nan() => NAN,
        v if v == f64::INFINITY => INF,
        v if v == f64::NEG_INFINITY => NEG_INF,
        v => Value::Number(v),
    };
    let rel = if g == 0.0 {
        INF
    } else {
        word((d / g * 100.0).abs())
    };
    (word(d), rel)
}

impl Summary {
    /// Compares the statistics (Max, Min, Mean, Norm) of a golden and a target tensor.
    pub fn of(golden: [Option<f64>; 4], target: [Option<f64>; 4]) -> Summary {
        let [max, min, mean, norm] = [0, 1, 2, 3].map(|i| {
            stat_diff(
                golden.get(i).copied().flatten(),
                target.get(i).copied().flatten(),
            )
        });
        Summary {
            max_diff: max.0,
            min_diff: min.0,
            mean_diff: mean.0,
            norm_diff: norm.0,
            max_rel_err: max.1,
            min_rel_err: min.1,
            mean_rel_err: mean.1,
            norm_rel_err: norm.1,
        }
    }

    /// Whether every statistic agrees within `max_rel` (a fraction): no NaN or infinity on one
    /// side only and every relative difference below it.
    pub fn passes(&self, max_rel: f64) -> bool {
        [
            &self.max_rel_err,
            &self.min_rel_err,
            &self.mean_rel_err,
            &self.norm_rel_err,
        ]
        .iter()
        .all(|v| match v {
            Value::Number(p) => p / 100.0 < max_rel,
            Value::Text(t) => t == "N/A",
        })
    }
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    #[test]
    fn differences_and_relative_differences_in_percent() {
        let s = Summary::of(
            [Some(2.0), Some(0.0), Some(f64::NAN), None],
            [Some(2.5), Some(1.0), Some(1.0), Some(3.0)],
        );
        assert_eq!(
            (s.max_diff.clone(), s.max_rel_err.clone()),
            (Value::Number(0.5), Value::Number(25.0))
        );
        assert_eq!(
            (s.min_diff.clone(), s.min_rel_err.clone()),
            (Value::Number(1.0), INF)
        );
        assert_eq!((s.mean_diff.clone(), s.norm_rel_err.clone()), (NAN, NA));
        let none = Summary::of([None; 4], [None; 4]);
        assert_eq!(none.max_diff, Value::Number(0.0));
        assert!(!s.passes(0.01));
        let same = Summary::of([Some(1.0); 4], [Some(1.0); 4]);
        assert!(same.passes(0.01));
    }
}
