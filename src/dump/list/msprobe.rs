//! msprobe framework dumps listed: one `dump.json` is many calls, each call one operator
//! execution in the order of the file ([`npgx_parsers::msprobe`] has the grammar). The calls,
//! their tensors and the tensor files the dump names in `dump_tensor_data/` are listed here for
//! every reader; dump-scan's verdicts from a dump.json are [`crate::scan::msprobe`]'s.

use std::collections::HashMap;
use std::fs::File;
use std::io::BufReader;
use std::path::Path;

use npgx_parsers::dump::dtype::DType;
use npgx_parsers::dump::header::Io;
use npgx_parsers::msprobe::{self as grammar, Leaf};

use super::{ordered_slot, tensor_file_slot, Listed, TensorSlot};
use crate::dump::records::{FileProblem, OpRef};
use crate::dump::walk::{Candidate, TENSOR_DIR};

/// The operator execution of the next call of a dump.json (`counter`: its place in the file).
pub fn call_op(c: &Candidate, name: String, counter: &mut u64) -> OpRef {
    let op = OpRef {
        location: c.location.clone(),
        layout: c.layout,
        op_type: grammar::call_name(&name).map(|n| n.op),
        op_name: name,
        task_id: None,
        stream_id: None,
        timestamp: None,
        counter: Some(*counter),
        path: c.rel.clone(),
    };
    *counter += 1;
    op
}

/// The leaves of a call with their index: the count of the leaves of the same io before them
/// (non-tensor leaves take a position too).
pub fn indexed(leaves: Vec<Leaf>) -> impl Iterator<Item = (Leaf, usize)> {
    let mut next = HashMap::<Io, usize>::new();
    leaves.into_iter().map(move |leaf| {
        let n = next.entry(leaf.io).or_default();
        *n += 1;
        let index = *n - 1;
        (leaf, index)
    })
}

/// Lists the tensors of a dump.json for dump-compare: one [`Listed`] per tensor file of each
/// call (task `tensor`), the call's name to match by. Statistics hold no values to compare.
pub fn list(c: &Candidate) -> Vec<Listed> {
    let mut out = Vec::new();
    let error = |message: String| FileProblem {
        path: c.rel.clone(),
        message,
        offset: None,
    };
    let file = match File::open(&c.path) {
        Ok(f) => f,
        Err(e) => {
            return vec![empty_listing(c, vec![error(format!("cannot open: {e}"))])];
        }
    };
    let data_dir = c.path.parent().map(|d| d.join(TENSOR_DIR));
    let mut counter = 0u64;
    let (mut missing, mut unchecked) = (0u64, 0u64);
    let mut errors = Vec::new();
    let mut on_call = |call: grammar::Call| {
        let op = call_op(c, call.name, &mut counter);
        for (leaf, index) in indexed(call.leaves) {
            if !leaf.is_tensor() {
                continue;
            }
            let file = leaf
                .data_name
                .as_deref()
                .and_then(|name| data_dir.as_deref().and_then(|d| tensor_file(d, name)));
            let Some(path) = file else {
                missing += u64::from(leaf.data_name.is_some());
                match statistics_slot(&leaf, index) {
                    Some(slot) => out.push(Listed {
                        path: c.path.clone(),
                        op: op.clone(),
                        match_name: op.op_name.clone(),
                        tensors: vec![slot],
                        errors: Vec::new(),
                        fx_input: None,
                        decoded: true,
                    }),
                    None => unchecked += 1,
                }
                continue;
            };
            let slot = File::open(&path)
                .and_then(|f| f.metadata().map(|m| (f, m.len())))
                .map_err(|e| (format!("cannot open: {e}"), None))
                .and_then(|(f, len)| tensor_file_slot(&f, len, &path, leaf.io, index))
                .and_then(ordered_slot);
            let mut l = Listed {
                path: path.clone(),
                op: op.clone(),
                match_name: op.op_name.clone(),
                tensors: Vec::new(),
                errors: Vec::new(),
                fx_input: None,
                decoded: true,
            };
            match slot {
                Ok(s) => l.tensors.push(s),
                Err((m, offset)) => l.errors.push(FileProblem {
                    path: path.display().to_string(),
                    message: m,
                    offset,
                }),
            }
            out.push(l);
        }
    };
    if let Err(e) = grammar::read_dump(BufReader::with_capacity(1 << 20, &file), &mut on_call) {
        errors.push(error(format!(
            "not a readable msprobe dump.json: {e}; the calls before that point are compared"
        )));
    }
    if missing > 0 {
        errors.push(error(format!(
            "{missing} tensor files named by data_name are not in its {TENSOR_DIR}: their statistics are compared instead (summary)"
        )));
    }
    if unchecked > 0 {
        errors.push(error(format!(
            "{unchecked} tensors have neither a tensor file nor statistics (Max, Min, Mean, Norm): not compared"
        )));
    }
    if !errors.is_empty() {
        out.push(empty_listing(c, errors));
    }
    out
}

fn empty_listing(c: &Candidate, errors: Vec<FileProblem>) -> Listed {
    Listed {
        path: c.path.clone(),
        op: super::op_ref(c, None, None),
        match_name: String::new(),
        tensors: Vec::new(),
        errors,
        fx_input: None,
        decoded: false,
    }
}

/// A tensor known by its statistics only, as a slot compared in summary mode; `None` without
/// statistics or a dtype npgx knows.
pub fn statistics_slot(leaf: &Leaf, index: usize) -> Option<TensorSlot> {
    let stats = [leaf.max, leaf.min, leaf.mean, leaf.norm];
    if stats.iter().all(Option::is_none) {
        return None;
    }
    let dtype = leaf.dtype.as_deref().and_then(DType::from_framework_name)?;
    Some(TensorSlot {
        io: leaf.io,
        index,
        dtype,
        element: dtype.element()?,
        format: npgx_parsers::dump::format::Format::primary(npgx_parsers::dump::format::Format::ND),
        shape: leaf.shape.clone(),
        original_op: None,
        data: super::Data::Statistics(stats),
        unordered: None,
    })
}

/// `dir/name` when `name` is a plain file name and the file is there.
pub fn tensor_file(dir: &Path, name: &str) -> Option<std::path::PathBuf> {
    let plain = Path::new(name).file_name().is_some_and(|n| n == name);
    let path = dir.join(name);
    (plain && path.is_file()).then_some(path)
}
