//! `--compare-outputs`: the step scripts wrap the selected callable with `npgx_capture.wrap`,
//! which saves the outputs of its first calls as `<step>/outputs/call<k>_out<i>.npy` (float32)
//! and every call's wall time in `<step>/outputs/timings.json`. When all steps pass, step 1
//! (eager) is the reference for steps 4 and 5, and step 4 for step 5.

use std::fs;
use std::os::unix::fs::FileExt;
use std::path::Path;

use anyhow::Context;
use npgx_parsers::dump::dtype::Element;

use crate::compare::metrics::Acc;
use serde::{Deserialize, Serialize};

use super::layout::{Step, EAGER_REPEAT_DIR};

/// Directory under a step directory that holds the captured outputs.
pub const OUTPUTS_DIR: &str = "outputs";

/// The helper module written next to the step scripts.
pub const CAPTURE_MODULE: &str = "npgx_capture.py";

/// The expression the step scripts wrap the callable with.
pub const CAPTURE_WRAPPER: &str = "__import__(\"npgx_capture\").wrap";

/// Source of `scripts/npgx_capture.py`.
pub const CAPTURE_SOURCE: &str = r#""""Written by `npgx triage run --compare-outputs`.

Wraps the compiled callable: saves the outputs of its first calls as .npy (float32) and the wall
time of every call into $NPGX_CAPTURE_DIR. Attribute access is forwarded to the wrapped object.
"""
import json
import os
import time

_DIR = os.environ.get("NPGX_CAPTURE_DIR")
_SAVED_CALLS = 3


def _sync():
    try:
        import torch

        npu = getattr(torch, "npu", None)
        if npu is not None and npu.is_available():
            npu.synchronize()
    except Exception:
        pass


def _tensors(out):
    import torch

    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for k in sorted(out, key=str) for t in _tensors(out[k])]
    return []


class _Captured:
    def __init__(self, fn):
        self._npgx_fn = fn
        self._npgx_calls = 0
        self._npgx_times = []

    def __getattr__(self, name):
        return getattr(self._npgx_fn, name)

    def __call__(self, *args, **kwargs):
        _sync()
        start = time.perf_counter()
        out = self._npgx_fn(*args, **kwargs)
        _sync()
        self._npgx_times.append(time.perf_counter() - start)
        if _DIR:
            os.makedirs(_DIR, exist_ok=True)
            if self._npgx_calls < _SAVED_CALLS:
                import numpy

                for i, t in enumerate(_tensors(out)):
                    name = "call%d_out%d.npy" % (self._npgx_calls, i)
                    numpy.save(os.path.join(_DIR, name), t.detach().float().cpu().numpy())
            with open(os.path.join(_DIR, "timings.json"), "w") as f:
                json.dump({"seconds": self._npgx_times}, f)
        self._npgx_calls += 1
        return out


def wrap(fn):
    return _Captured(fn)
"#;

/// Relative tolerance of the output comparison.
pub const RTOL: f64 = 1e-3;
/// Absolute tolerance of the output comparison.
pub const ATOL: f64 = 1e-5;

/// Step `candidate` against step `reference`, over all saved outputs.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutputComparison {
    pub reference: Step,
    pub candidate: Step,
    pub tensors: usize,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Lowest cosine similarity over the tensors.
    pub min_cosine: f64,
    /// `|c - r| <= ATOL + RTOL * |r|` everywhere, and the same tensors with the same shapes.
    pub allclose: bool,
    pub problems: Vec<String>,
}

/// Wall times of one step's calls.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Timing {
    pub step: Step,
    pub calls: usize,
    pub first_call_seconds: f64,
    /// Median of the calls after the first (the first includes compilation); the first call when
    /// there is only one.
    pub median_seconds: f64,
    /// Fastest of the calls after the first (the first call when there is only one): what the
    /// speed verdict reads, since a busy machine only ever adds time to a call.
    pub fastest_seconds: f64,
}

/// Everything `--compare-outputs` measured.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Comparison {
    pub outputs: Vec<OutputComparison>,
    pub timings: Vec<Timing>,
    /// Step 1 against its second run from the same seed (`step1-eager-repeat/`): the noise
    /// floor. Not `allclose` → the script is nondeterministic even in eager.
    pub eager_repeat: Option<OutputComparison>,
}

/// The numbers of one comparison, without the step names (bisect variants).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Closeness {
    pub tensors: usize,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    pub min_cosine: f64,
    pub allclose: bool,
}

impl OutputComparison {
    pub fn closeness(&self) -> Closeness {
        Closeness {
            tensors: self.tensors,
            max_abs_error: self.max_abs_error,
            max_rel_error: self.max_rel_error,
            min_cosine: self.min_cosine,
            allclose: self.allclose,
        }
    }
}

/// Compares the outputs saved in `candidate` (an `outputs/` directory) with those in
/// `reference`; a directory that does not exist holds no outputs.
pub fn compare_dirs(reference: &Path, candidate: &Path) -> anyhow::Result<Closeness> {
    let read = |d: &Path| {
        if d.is_dir() {
            read_outputs(d)
        } else {
            Ok(Vec::new())
        }
    };
    let (r, c) = (read(reference)?, read(candidate)?);
    let mut cmp = compare_pair(Step::ForceEager, &r, Step::NpugraphEx, &c);
    if r.is_empty() {
        cmp.allclose = false;
    }
    Ok(cmp.closeness())
}

struct Saved {
    name: String,
    shape: Vec<u64>,
    data: Vec<f32>,
}

fn read_outputs(dir: &Path) -> anyhow::Result<Vec<Saved>> {
    let mut out = Vec::new();
    let mut names: Vec<String> = fs::read_dir(dir)
        .with_context(|| crate::error::CannotRead::new(dir))?
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".npy"))
        .collect();
    names.sort();
    for name in names {
        let p = dir.join(&name);
        let file = fs::File::open(&p).with_context(|| crate::error::CannotRead::new(&p))?;
        let len = file
            .metadata()
            .with_context(|| crate::error::CannotRead::new(&p))?
            .len();
        let header = crate::dump::npy::read_header(&file, len)
            .map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        if header.element() != Some(Element::F32) {
            anyhow::bail!("{}: expected float32 data", p.display());
        }
        let nbytes = header.nbytes_within(len).with_context(|| {
            format!(
                "{}: the header declares shape {:?}, more than the file holds",
                p.display(),
                header.shape
            )
        })?;
        let mut raw = vec![0u8; usize::try_from(nbytes)?];
        file.read_exact_at(&mut raw, header.data_offset)
            .with_context(|| crate::error::CannotRead::new(&p))?;
        let data = raw
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect();
        let shape = header.shape;
        out.push(Saved { name, shape, data });
    }
    Ok(out)
}

fn compare_pair(reference: Step, r: &[Saved], candidate: Step, c: &[Saved]) -> OutputComparison {
    let mut cmp = OutputComparison {
        reference,
        candidate,
        tensors: 0,
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        min_cosine: 1.0,
        allclose: true,
        problems: Vec::new(),
    };
    for rt in r {
        let Some(ct) = c.iter().find(|t| t.name == rt.name) else {
            cmp.allclose = false;
            cmp.problems
                .push(format!("{} has no {}", candidate.name(), rt.name));
            continue;
        };
        if rt.shape != ct.shape {
            cmp.allclose = false;
            cmp.problems.push(format!(
                "{}: shape {:?} in {} vs {:?} in {}",
                rt.name,
                rt.shape,
                reference.name(),
                ct.shape,
                candidate.name()
            ));
            continue;
        }
        cmp.tensors += 1;
        // Closeness is torch.allclose's test; the metrics are dump-compare's (one metric set:
        // an all-zero side has cosine 0, not NaN read as a match).
        let (g, t): (Vec<f64>, Vec<f64>) = rt
            .data
            .iter()
            .zip(&ct.data)
            .map(|(a, b)| (f64::from(*a), f64::from(*b)))
            .unzip();
        if g.iter().zip(&t).any(|(a, b)| {
            let d = (a - b).abs();
            d.is_nan() || d > ATOL + RTOL * a.abs()
        }) {
            cmp.allclose = false;
        }
        let mut acc = Acc::default();
        acc.update(&g, &t);
        let m = acc.finish();
        cmp.max_abs_error = cmp.max_abs_error.max(m.max_abs.unwrap_or(f64::INFINITY));
        cmp.max_rel_error = cmp.max_rel_error.max(m.max_rel.unwrap_or(f64::INFINITY));
        // A cosine that cannot be formed (non-finite values) is no match, and stays NaN.
        cmp.min_cosine = match m.cosine {
            Some(c) if !cmp.min_cosine.is_nan() => cmp.min_cosine.min(c),
            _ => f64::NAN,
        };
    }
    cmp
}

fn read_timing(step: Step, dir: &Path) -> Option<Timing> {
    let text = fs::read_to_string(dir.join("timings.json")).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    let secs: Vec<f64> = v["seconds"]
        .as_array()?
        .iter()
        .filter_map(|x| x.as_f64())
        .collect();
    let first = *secs.first()?;
    let mut later: Vec<f64> = secs[1..].to_vec();
    later.sort_by(f64::total_cmp);
    let (median, fastest) = match later.first() {
        None => (first, first),
        Some(&fastest) => (later[later.len() / 2], fastest),
    };
    Some(Timing {
        step,
        calls: secs.len(),
        first_call_seconds: first,
        median_seconds: median,
        fastest_seconds: fastest,
    })
}

/// Compares steps 1, 4 and 5 of the tree at `root`; `None` when no step captured anything.
pub fn compare(root: &Path) -> anyhow::Result<Option<Comparison>> {
    let steps = [Step::Eager, Step::ForceEager, Step::NpugraphEx];
    let dirs: Vec<_> = steps
        .iter()
        .map(|s| root.join(s.name()).join(OUTPUTS_DIR))
        .collect();
    if dirs.iter().all(|d| !d.is_dir()) {
        return Ok(None);
    }
    let mut saved = Vec::new();
    for d in &dirs {
        saved.push(if d.is_dir() {
            read_outputs(d)?
        } else {
            Vec::new()
        });
    }
    let outputs = vec![
        compare_pair(Step::Eager, &saved[0], Step::ForceEager, &saved[1]),
        compare_pair(Step::Eager, &saved[0], Step::NpugraphEx, &saved[2]),
        compare_pair(Step::ForceEager, &saved[1], Step::NpugraphEx, &saved[2]),
    ];
    let timings = steps
        .iter()
        .zip(&dirs)
        .filter_map(|(s, d)| read_timing(*s, d))
        .collect();
    let repeat = root.join(EAGER_REPEAT_DIR).join(OUTPUTS_DIR);
    let eager_repeat = if repeat.is_dir() {
        Some(compare_pair(
            Step::Eager,
            &saved[0],
            Step::Eager,
            &read_outputs(&repeat)?,
        ))
    } else {
        None
    };
    Ok(Some(Comparison {
        outputs,
        timings,
        eager_repeat,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn saved(data: &[f32]) -> Vec<Saved> {
        vec![Saved {
            name: "out0.npy".into(),
            shape: vec![data.len() as u64],
            data: data.to_vec(),
        }]
    }

    // One metric set (issue 34 item 4): an all-zero side is no match (cosine 0, as dump-compare
    // gives), never a NaN that `min` drops to leave a perfect score.
    #[test]
    fn an_all_zero_side_is_a_mismatch() {
        let c = compare_pair(
            Step::ForceEager,
            &saved(&[1.0, 2.0, 3.0]),
            Step::NpugraphEx,
            &saved(&[0.0, 0.0, 0.0]),
        );
        assert!(!c.allclose);
        assert_eq!(c.min_cosine, 0.0);
        assert_eq!(c.max_abs_error, 3.0);
        let same = compare_pair(
            Step::ForceEager,
            &saved(&[0.0, 0.0]),
            Step::NpugraphEx,
            &saved(&[0.0, 0.0]),
        );
        assert!(same.allclose);
        assert_eq!(same.min_cosine, 1.0);
        let nan = compare_pair(
            Step::ForceEager,
            &saved(&[1.0, f32::NAN]),
            Step::NpugraphEx,
            &saved(&[1.0, 1.0]),
        );
        // A NaN fails closeness; the cosine is dump-compare's, over the finite pairs.
        assert!(!nan.allclose);
        assert_eq!(nan.min_cosine, 1.0);
    }
}
