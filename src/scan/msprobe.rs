//! msprobe framework dumps in a scan: one `dump.json` is many calls, each call one operator
//! execution in the order of the file ([`npgx_parsers::msprobe`] has the grammar).
//!
//! A tensor is judged from its file in `dump_tensor_data/` when the dump names one that is there
//! (task `tensor`: exact counts, through the one `.pt` and `.npy` readers of the scan), else from
//! the statistics msprobe wrote (Max, Min, Mean, Norm). From statistics, a non-finite Max or Min
//! proves a NaN or an infinity in the tensor; a non-finite Mean or Norm while Max and Min are
//! finite proves only that the statistic itself overflowed (the sum of squares of an fp16
//! tensor passes 65504 long before any element does), so that is a [`StatsNote`], not an
//! anomaly. Records are handed to the caller in batches while the file is read, so a dump.json
//! of any size costs one call's tree and one batch of records.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use npgx_parsers::dump::dtype::DType;
use npgx_parsers::msprobe::{self as grammar, Leaf};

use super::read::{check_slot, proven, FileOutcome};
use super::records::{Source, StatsNote, TensorRecord};
use super::scan_report::ScanReport;
use crate::dump::blocks::{Blocks, ReadError};
use crate::dump::list::msprobe::{call_op, indexed, tensor_file};
use crate::dump::list::tensor_file_slot;
use crate::dump::mapped::Mode;
use crate::dump::records::{FileProblem, OpRef};
use crate::dump::walk::{Candidate, TENSOR_DIR};

/// Records handed out at a time.
const BATCH: usize = 4096;

/// Reads one dump.json; tensor records go to `sink` in batches (the outcome keeps the rest).
pub fn read(c: &Candidate, map: Mode, sink: &mut dyn FnMut(Vec<TensorRecord>)) -> FileOutcome {
    let file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => {
            return FileOutcome {
                errors: vec![FileProblem {
                    path: c.rel.clone(),
                    message: format!("cannot open: {e}"),
                    offset: None,
                }],
                ..FileOutcome::default()
            }
        }
    };
    let mut out = FileOutcome {
        decoded: true,
        ..FileOutcome::default()
    };
    let data_dir = c.path.parent().map(|d| d.join(TENSOR_DIR));
    let data_rel = match c.rel.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/{TENSOR_DIR}"),
        None => TENSOR_DIR.to_string(),
    };
    let mut counter = 0u64;
    let mut missing = (0u64, None::<String>);
    let mut unchecked = 0u64;
    let mut on_call = |call: grammar::Call| {
        let op = call_op(c, call.name, &mut counter);
        for (leaf, index) in indexed(call.leaves) {
            if !leaf.is_tensor() {
                continue;
            }
            if let (Some(name), Some(dir)) = (&leaf.data_name, &data_dir) {
                match tensor_file(dir, name) {
                    Some(path) => match check_file(&path, &op, &leaf, index, map) {
                        Ok((r, bytes)) => {
                            out.bytes += bytes;
                            out.notes.extend(note(&op, &leaf, index, &r.dtype));
                            out.tensors.push(r);
                            continue;
                        }
                        Err(m) => out.errors.push(FileProblem {
                            path: format!("{data_rel}/{name}"),
                            message: format!(
                                "{m}; the statistics in dump.json were checked instead"
                            ),
                            offset: None,
                        }),
                    },
                    None => {
                        missing.0 += 1;
                        missing.1.get_or_insert_with(|| name.clone());
                    }
                }
            }
            match from_statistics(&op, &leaf, index) {
                Some((r, note)) => {
                    out.notes.extend(note);
                    out.tensors.push(r);
                }
                None => unchecked += 1,
            }
        }
        if out.tensors.len() >= BATCH {
            sink(std::mem::take(&mut out.tensors));
        }
    };
    let meta = grammar::read_dump(BufReader::with_capacity(1 << 20, &file), &mut on_call);
    let mut error = |message: String| {
        out.errors.push(FileProblem {
            path: c.rel.clone(),
            message,
            offset: None,
        })
    };
    match meta {
        Ok(_) => {}
        Err(e) => error(format!(
            "not a readable msprobe dump.json: {e}; the calls before that point were checked"
        )),
    }
    if let (n @ 1.., Some(first)) = missing {
        error(format!(
            "{n} tensor files named by data_name are not in {data_rel} (first: {first}); their statistics were checked instead"
        ));
    }
    if unchecked > 0 {
        error(format!(
            "{unchecked} tensors have neither a tensor file nor statistics (Max, Min, Mean, Norm): not checked"
        ));
    }
    out
}

/// Checks a tensor from its `.pt` (PyTorch) or `.npy` (MindSpore) file, listed by the lister.
fn check_file(
    path: &Path,
    op: &OpRef,
    leaf: &Leaf,
    index: usize,
    map: Mode,
) -> Result<(TensorRecord, u64), String> {
    let file = File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let len = file
        .metadata()
        .map_err(|e| format!("cannot stat: {e}"))?
        .len();
    let slot = tensor_file_slot(&file, len, path, leaf.io, index).map_err(|(m, _)| m)?;
    let source = if path.extension().is_some_and(|e| e == "npy") {
        Source::Npy
    } else {
        Source::Pt
    };
    let blocks = Blocks::new(file, len, map);
    let (mut r, bytes) =
        check_slot(&blocks, None, op, &slot, source).map_err(|(e, _)| e.to_string())?;
    if !blocks.still_whole() {
        return Err(ReadError::Changed { offset: len }.to_string());
    }
    r.slot = Some(leaf.slot.clone());
    Ok((r, bytes))
}

/// The verdict on a tensor from its statistics, and a note when a statistic overflowed by
/// itself; `None` when the leaf has no statistics at all.
fn from_statistics(
    op: &OpRef,
    leaf: &Leaf,
    index: usize,
) -> Option<(TensorRecord, Option<StatsNote>)> {
    if [leaf.max, leaf.min, leaf.mean, leaf.norm]
        .iter()
        .all(Option::is_none)
    {
        return None;
    }
    let dtype = leaf.dtype.as_deref().and_then(DType::from_framework_name);
    // With Max and Min known, they alone say whether an element is NaN or infinite.
    let judged = if leaf.max.is_some() && leaf.min.is_some() {
        [leaf.max, leaf.min, None]
    } else {
        [leaf.max, leaf.min, leaf.mean]
    };
    let p = proven(dtype, leaf.max, leaf.min, &judged);
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let elements = leaf
        .shape
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .unwrap_or(0);
    let r = TensorRecord {
        op: op.clone(),
        io: leaf.io,
        index,
        dtype: dtype.map_or_else(|| leaf.dtype.clone().unwrap_or_default(), |d| d.to_string()),
        format: None,
        shape: leaf.shape.clone(),
        elements,
        nan: p.nan,
        pos_inf: p.pos_inf,
        neg_inf: p.neg_inf,
        overflow: p.overflow,
        min: finite(leaf.min).or(finite(leaf.min_finite)),
        max: finite(leaf.max).or(finite(leaf.max_finite)),
        mean: finite(leaf.mean),
        source: Source::Stats,
        slot: Some(leaf.slot.clone()),
    };
    let note = note(op, leaf, index, &r.dtype);
    Some((r, note))
}

/// The note on a statistic of `leaf` that overflowed by itself: Mean or Norm not finite while
/// Max and Min are.
fn note(op: &OpRef, leaf: &Leaf, index: usize, dtype: &str) -> Option<StatsNote> {
    let extremes_finite = [leaf.max, leaf.min]
        .iter()
        .all(|v| v.is_some_and(f64::is_finite));
    let statistics: Vec<&'static str> = [("Mean", leaf.mean), ("Norm", leaf.norm)]
        .into_iter()
        .filter(|(_, v)| v.is_some_and(|x| !x.is_finite()))
        .map(|(name, _)| name)
        .collect();
    (extremes_finite && !statistics.is_empty()).then(|| StatsNote {
        group: 0,
        order: 0,
        op_name: op.op_name.clone(),
        io: leaf.io,
        index,
        slot: Some(leaf.slot.clone()),
        dtype: dtype.to_string(),
        shape: leaf.shape.clone(),
        statistics,
        max: leaf.max,
        min: leaf.min,
        mean: leaf.mean,
        norm: leaf.norm,
        path: op.path.clone(),
        stack: None,
        op: op.clone(),
    })
}

/// The `stack.json` beside a `dump.json` (paths relative to the scan root, `/`-separated).
fn stack_json_of(dump_json: &str) -> String {
    match dump_json.rsplit_once('/') {
        Some((dir, _)) => format!("{dir}/stack.json"),
        None => "stack.json".to_string(),
    }
}

/// The origin of an msprobe call from its `stack.json` line (docs/source-map.md): no FX node (an
/// eager API call), the frame, and the user's line when the frame is outside the libraries.
fn stack_origin(line: &str, dump_json: &str) -> crate::source_map::FxOrigin {
    use crate::source_map::{FxOrigin, SourceFrame};
    let stack = stack_json_of(dump_json);
    let Some((file, n, function, code)) = grammar::split_user_frame(line) else {
        return FxOrigin {
            via: vec![stack],
            ..FxOrigin::unknown(format!("stack.json's frame has no line number: {line}"))
        };
    };
    let frame = SourceFrame {
        file: file.to_string(),
        line: n,
        function: function.map(str::to_string),
        code: code.map(str::to_string),
    };
    let library = frame.is_library();
    FxOrigin {
        user_line: (!library).then(|| frame.clone()),
        missing: if library {
            vec![format!(
                "every frame of the call's stack is msprobe's or a library's ({file}:{n})"
            )]
        } else {
            Vec::new()
        },
        source: Some(frame),
        via: vec![stack],
        ..FxOrigin::default()
    }
}

/// Gives every msprobe finding of the report (anomalies, first anomalies and births, notes)
/// the user's line of its call's stack, from the `stack.json` beside its dump.json. Only the
/// calls with findings are kept while a stack.json streams by; a missing or unreadable
/// stack.json leaves the lines empty (and an unreadable one is reported in `errors`).
pub fn attach_stacks(base: &Path, report: &mut ScanReport) {
    let mut wanted: HashMap<String, HashSet<String>> = HashMap::new();
    let mut want = |path: &str, call: &str, layout| {
        if layout == npgx_parsers::dump::path::Layout::Msprobe {
            wanted
                .entry(path.to_string())
                .or_default()
                .insert(call.to_string());
        }
    };
    for a in &report.anomalies {
        want(&a.tensor.op.path, &a.tensor.op.op_name, a.tensor.op.layout);
    }
    for n in &report.notes {
        want(&n.path, &n.op_name, n.op.layout);
    }
    let mut lines: HashMap<(String, String), String> = HashMap::new();
    for (dump_json, calls) in wanted {
        let stack_rel = stack_json_of(&dump_json);
        let Ok(file) = File::open(base.join(&stack_rel)) else {
            continue;
        };
        let read = grammar::read_stacks(
            BufReader::with_capacity(1 << 20, file),
            &mut |call, frames| {
                if calls.contains(call) {
                    if let Some(line) = grammar::user_frame(frames) {
                        lines.insert((dump_json.clone(), call.to_string()), line);
                    }
                }
            },
        );
        if let Err(e) = read {
            report.errors.push(FileProblem {
                path: stack_rel,
                message: format!("not a readable msprobe stack.json: {e}"),
                offset: None,
            });
        }
    }
    let line = |path: &str, call: &str| lines.get(&(path.to_string(), call.to_string())).cloned();
    for a in report.findings_mut() {
        a.stack = line(&a.tensor.op.path, &a.tensor.op.op_name);
        a.fx = a
            .stack
            .as_deref()
            .map(|s| std::sync::Arc::new(stack_origin(s, &a.tensor.op.path)));
    }
    for n in &mut report.notes {
        n.stack = line(&n.path, &n.op_name);
    }
}
