//! `npgx repro --from-scan SCAN.json -o DIR`: the single-op repro of a scan's anomaly through
//! its FX node (issue 43, docs/repro.md). The scan's first born anomaly (else its first anomaly)
//! names the FX node ([`crate::source_map`]); the graph texts print the node's call; the dump
//! holds the values that went in. The case is the FX-node repro of [`super::fx_node`] fed with
//! those values, and the dumped outputs beside them so the script also says whether the golden
//! computed from the dumped inputs is what the run wrote.
//!
//! Which values are the node's inputs, by dump form:
//! - torchair's eager FX dump (`<node>-<target>.INPUT.<i>[.<j>].<ts>.npy`): argument `i` (element
//!   `j` of a list argument) of the same call (same timestamp), by name;
//! - a GE dump: the GE operator's inputs, only when the node became that one GE operator and
//!   the operator has one input per argument of the call (else the inputs are seeded and the
//!   case says why);
//! - npugraph_ex's `.pt` dump and statistics: no inputs (said in `missing`).
//!
//! The call's literals reach the script only in a form npgx re-spells (numbers, `None`,
//! booleans, `torch.<name>`, plain strings, lists of them; a `device(…)` becomes the script's
//! device); any other argument text makes the call not rebuildable, never code.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::name::{classify, FileName};
use npgx_parsers::fx_graph::{parse_call, ArgMeta, FxArg, FxCall};
use serde::{Deserialize as _, Serialize};

use super::dumpdata::{self, OutData};
use super::fx_node;
use super::pyquote::{file_stem, py_str};
use crate::envelope::{Readers, SCHEMA_PREFIX};
use crate::fx::{Dim, FxNode, SourceLine, TensorMeta};
use crate::scan::document::{ScanAnomaly, ScanDocument};
use crate::scan::records::{Kind, Source};
use crate::source_map::{graph_id_of_model, FxCallText, SourceFrame, SourceMap};

/// Name of the `npgx.repro-fx` document (`npgx repro --from-scan --format json`, `case.json`).
pub const SCHEMA_NAME: &str = "repro-fx";
pub const SCHEMA_VERSION: u32 = 1;

/// What `npgx repro --from-scan` was asked.
#[derive(Debug, Clone)]
pub struct Request {
    /// A saved `npgx dump-scan --format json` document.
    pub scan: PathBuf,
    /// The dump tree, when not at the scan's `root`.
    pub dump_root: Option<PathBuf>,
    /// Graph texts beyond those beside the dump (`--graphs`).
    pub graphs: Vec<PathBuf>,
    pub out: PathBuf,
    pub force: bool,
}

/// The case written (the `npgx.repro-fx` document).
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct AnomalyRepro {
    /// The scan document read.
    pub scan: String,
    /// The scan record used: `first_born` (an output anomalous from finite inputs) or
    /// `first_anomaly`.
    pub record: String,
    pub rank: Option<u32>,
    /// The dumped operator as the dump names it, and its file under the scan root.
    pub op_name: String,
    pub path: String,
    pub kind: Kind,
    pub graph: Option<String>,
    pub fx_node: String,
    /// The call target as the graph text prints it (`torch.ops.aten.mm.default`).
    pub target: Option<String>,
    /// The call as the script makes it, over `F` (the target) and `T[i]` (the inputs); null
    /// when no graph text read prints the node's call.
    pub call: Option<String>,
    /// False when an argument cannot be rebuilt outside the model (`missing` says which).
    pub rebuildable: bool,
    /// The graph text the call was read from.
    pub call_from: Option<String>,
    pub user_line: Option<SourceFrame>,
    pub inputs: Vec<InputRow>,
    /// The dumped outputs of the same call, copied into the case (relative to it).
    pub dumped_outputs: Vec<String>,
    /// The case directory and the script in it.
    pub out_dir: String,
    pub script: String,
    /// What the case lacks, each with its reason.
    pub missing: Vec<String>,
}

/// One tensor input of the call.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct InputRow {
    /// `T[i]` of the call.
    pub tensor: usize,
    /// Where it goes in the call: `args[0]`, `args[1][2]`, `kwargs.weight`.
    pub argument: String,
    /// The FX node (or graph input) whose value it is.
    pub node: String,
    /// The dumped value copied into the case (relative to it); null: seeded random data of
    /// the graph text's shape and dtype.
    pub file: Option<String>,
    /// The dump file it was copied or converted from.
    pub from: Option<String>,
}

const READERS: Readers<'static> = Readers {
    reader: "npgx repro --from-scan reads",
    what: "a dump-scan JSON document",
    documents: &[(crate::scan::SCHEMA_NAME, crate::scan::SCHEMA_VERSION)],
};

/// Builds and writes the case. `Err` when it cannot be written at all: the scan names no
/// anomaly with an FX node, the dump tree is not found, the output directory is in the way.
pub fn build(req: &Request) -> anyhow::Result<AnomalyRepro> {
    super::check_out_dir(&req.out, req.force)?;
    let (doc, _) = crate::envelope::read(&req.scan, &READERS)?;
    let shown = req.scan.display().to_string();
    let doc = ScanDocument::deserialize(&doc)
        .map_err(|e| anyhow::anyhow!("{shown}: {SCHEMA_PREFIX}dump-scan document: {e}"))?;
    let (record, a) = pick(&doc, &shown)?;
    let fx = a.fx.clone().unwrap_or_default();
    let node_name = fx.fx_node.clone().unwrap_or_default();
    let root = dump_root(req, &doc.root)?;
    let mut map = SourceMap::load(&req.graphs);
    map.add_near(&root);
    let graph_id = fx.graph.as_deref().and_then(graph_id_of_model);
    let call_text = map.call_of(a.tensor.rank, graph_id, &node_name, fx.fx_target.as_deref());
    let mut missing = Vec::new();
    let rebuilt = match &call_text {
        Some(c) => rebuild(&parse_call(&c.args), c.torchair_py),
        None => {
            missing.push(format!(
                "no graph text read prints FX node {node_name}'s call (a torchair .py graph \
                 dump or TORCH_COMPILE_DEBUG=1's readable text; --graphs PATH)"
            ));
            Rebuilt::default()
        }
    };
    if let Some(p) = &rebuilt.problem {
        missing.push(p.clone());
    }
    let dumped_file = root.join(&a.tensor.path);
    let values = dumped_values(a, &dumped_file, call_text.as_ref(), &rebuilt, &mut missing);

    std::fs::create_dir_all(&req.out)
        .with_context(|| format!("cannot create {}", req.out.display()))?;
    let stem = file_stem(&node_name);
    let mut inputs = Vec::new();
    let mut metas = Vec::new();
    let mut dumps = Vec::new();
    for (t, slot) in rebuilt.inputs.iter().enumerate() {
        let value = slot.key.and_then(|k| values.inputs.get(&k));
        let file = match value {
            Some(v) => {
                let rel = format!("{stem}_input{t}.npy");
                put(&req.out, &rel, &v.data)?;
                Some(rel)
            }
            None => None,
        };
        metas.push(tensor_meta(slot, value.and_then(|v| v.meta.clone())));
        inputs.push(InputRow {
            tensor: t,
            argument: slot.argument.clone(),
            node: slot.node.clone(),
            from: value.map(|v| v.from.clone()),
            file: file.clone(),
        });
        dumps.push(file);
    }
    if values.fed {
        for i in inputs.iter().filter(|i| i.file.is_none()) {
            missing.push(format!(
                "T[{}] ({} = {}) has no dumped value: the script seeds random data",
                i.tensor, i.argument, i.node
            ));
        }
    }
    let mut dumped_outputs = Vec::new();
    for (i, v) in values.outputs.iter().enumerate() {
        let rel = format!("{stem}_dumped_output{i}.npy");
        put(&req.out, &rel, &v.data)?;
        dumped_outputs.push(rel);
    }
    let target = call_text.as_ref().map(|c| c.target.clone());
    let rebuildable = call_text.is_some() && rebuilt.problem.is_none();
    let node = FxNode {
        graph: graph_id.and_then(|g| usize::try_from(g).ok()).unwrap_or(0),
        index: 0,
        name: node_name.clone(),
        op: "call_function".into(),
        target: target.clone().unwrap_or_else(|| {
            fx.fx_target
                .as_deref()
                .map_or_else(String::new, |t| format!("torch.ops.{t}"))
        }),
        inputs: metas,
        output: None,
        source: fx.source.as_ref().map(|s| SourceLine {
            file: PathBuf::from(&s.file),
            line: u64::from(s.line),
            function: s.function.clone().unwrap_or_default(),
            code: s.code.clone().unwrap_or_default(),
            copy: None,
        }),
        call: rebuilt.call.clone(),
        rebuildable,
    };
    let script_name = fx_node::file_name(&node);
    let script = fx_node::script(&node, "{}", &dumps, &dumped_outputs);
    crate::output::write(&req.out.join(&script_name), script.as_bytes())?;
    Ok(AnomalyRepro {
        scan: shown,
        record: record.to_string(),
        rank: a.tensor.rank,
        op_name: a.tensor.op_name.clone(),
        path: a.tensor.path.clone(),
        kind: a.kind,
        graph: fx.graph.clone(),
        fx_node: node_name,
        target,
        call: rebuildable.then(|| rebuilt.call.clone()),
        rebuildable,
        call_from: call_text.map(|c| c.file),
        user_line: fx.user_line.clone(),
        inputs,
        dumped_outputs,
        out_dir: req.out.display().to_string(),
        script: script_name,
        missing,
    })
}

/// Writes the case's `README.md` and `case.json` (the `npgx.repro-fx` document), rendered by
/// the caller (`report::repro`).
pub fn write_documents(r: &AnomalyRepro, readme: &str, json: &str) -> anyhow::Result<()> {
    let out = Path::new(&r.out_dir);
    crate::output::write(&out.join("README.md"), readme.as_bytes())?;
    crate::output::write(&out.join("case.json"), format!("{json}\n").as_bytes())
}

/// The record to repro: the first group's born anomaly with an FX node, else its first anomaly
/// with one, in the scan's group order.
fn pick<'a>(doc: &'a ScanDocument, shown: &str) -> anyhow::Result<(&'static str, &'a ScanAnomaly)> {
    let has_node = |a: &&ScanAnomaly| a.fx.as_ref().is_some_and(|f| f.fx_node.is_some());
    for g in &doc.groups {
        if let Some(a) = g.first_born.as_ref().filter(has_node) {
            return Ok(("first_born", a));
        }
        if let Some(a) = g.first_anomaly.as_ref().filter(has_node) {
            return Ok(("first_anomaly", a));
        }
    }
    let first = doc
        .groups
        .iter()
        .find_map(|g| g.first_born.as_ref().or(g.first_anomaly.as_ref()));
    match first {
        None => anyhow::bail!("{shown}: the scan found no anomaly, so there is nothing to repro"),
        Some(a) => {
            let why =
                a.fx.as_ref()
                    .map(|f| f.missing.join("; "))
                    .filter(|m| !m.is_empty())
                    .unwrap_or_else(|| "the scan read no graph text".into());
            anyhow::bail!(
                "{shown}: the first anomaly ({} in {}) has no FX node: {why}. Scan again with \
                 --graphs PATH (torchair's graph dump or TORCH_COMPILE_DEBUG's texts), or build \
                 a GE-operator repro with npgx repro --op {} --dump DIR",
                a.tensor.op_name,
                a.tensor.path,
                a.tensor.op_name
            )
        }
    }
}

/// The dump tree: `--dump`, else the scan's root as recorded, else that root beside the scan.
fn dump_root(req: &Request, recorded: &str) -> anyhow::Result<PathBuf> {
    if let Some(d) = &req.dump_root {
        anyhow::ensure!(d.is_dir(), "{}: no such dump directory", d.display());
        return Ok(d.clone());
    }
    let as_is = PathBuf::from(recorded);
    if as_is.is_dir() {
        return Ok(as_is);
    }
    if let Some(beside) = req
        .scan
        .parent()
        .map(|p| p.join(recorded))
        .filter(|p| p.is_dir())
    {
        return Ok(beside);
    }
    anyhow::bail!(
        "{}: the scan's dump root {recorded:?} is not found from here; give it with --dump DIR",
        req.scan.display()
    )
}

/// One tensor input slot of the rebuilt call.
#[derive(Debug, Clone)]
struct Slot {
    argument: String,
    node: String,
    meta: Option<ArgMeta>,
    /// (argument position, list element) for a positional argument: the FX dump's
    /// `INPUT.<i>[.<j>]`.
    key: Option<(usize, Option<usize>)>,
}

/// The call as a Python expression over `F` and `T[i]`, with its tensor slots.
#[derive(Debug, Default)]
struct Rebuilt {
    call: String,
    inputs: Vec<Slot>,
    /// Why the call cannot be rebuilt (an argument npgx does not re-spell).
    problem: Option<String>,
    /// Positional arguments in all.
    args: usize,
}

/// `torchair_py`: the call as torchair's `.py` dump prints it, where a string keyword argument
/// has no quotes (`rounding_mode=floor`): a bare name without meta there is a string.
fn rebuild(call: &FxCall, torchair_py: bool) -> Rebuilt {
    let mut r = Rebuilt {
        args: call.args.len(),
        ..Rebuilt::default()
    };
    let mut parts = Vec::new();
    for (i, a) in call.args.iter().enumerate() {
        parts.push(expr(a, &format!("args[{i}]"), Some((i, None)), &mut r));
    }
    for (k, a) in &call.kwargs {
        let value = match a {
            FxArg::Node { name, meta: None } if torchair_py => py_str(name),
            _ => expr(a, &format!("kwargs.{k}"), None, &mut r),
        };
        parts.push(format!("{k}={value}"));
    }
    r.call = format!("F({})", parts.join(", "));
    r
}

fn expr(a: &FxArg, argument: &str, key: Option<(usize, Option<usize>)>, r: &mut Rebuilt) -> String {
    match a {
        FxArg::Node { name, meta } => {
            r.inputs.push(Slot {
                argument: argument.to_string(),
                node: name.clone(),
                meta: meta.clone(),
                key,
            });
            format!("T[{}]", r.inputs.len() - 1)
        }
        FxArg::List { items, tuple } => {
            let inner: Vec<String> = items
                .iter()
                .enumerate()
                .map(|(j, item)| {
                    // Only a list argument's own elements are dumped as `INPUT.<i>.<j>`.
                    let k = match key {
                        Some((i, None)) => Some((i, Some(j))),
                        _ => None,
                    };
                    expr(item, &format!("{argument}[{j}]"), k, r)
                })
                .collect();
            enclose(&inner, *tuple)
        }
        FxArg::Literal(s) => safe_literal(s).unwrap_or_else(|| {
            if r.problem.is_none() {
                r.problem = Some(format!(
                    "{argument} ({s:?}) is not a literal npgx re-spells into the script: the \
                     call is not rebuilt"
                ));
            }
            "None".into()
        }),
    }
}

fn enclose(items: &[String], tuple: bool) -> String {
    match (tuple, items.len()) {
        (true, 1) => format!("({},)", items[0]),
        (true, _) => format!("({})", items.join(", ")),
        (false, _) => format!("[{}]", items.join(", ")),
    }
}

/// The literal re-spelt for the script, or `None` when it is not one npgx reads.
fn safe_literal(s: &str) -> Option<String> {
    let s = s.trim();
    match s {
        "None" | "True" | "False" => return Some(s.to_string()),
        "inf" => return Some("float(\"inf\")".into()),
        "-inf" => return Some("float(\"-inf\")".into()),
        "nan" => return Some("float(\"nan\")".into()),
        _ => {}
    }
    let numeric = s
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.' | b'e' | b'E'))
        && s.bytes().any(|b| b.is_ascii_digit())
        && s.parse::<f64>().is_ok();
    if numeric {
        return Some(s.to_string());
    }
    if let Some(name) = s.strip_prefix("torch.") {
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        return ident.then(|| s.to_string());
    }
    // `device(type='npu', index=0)` (repr) or `npu:0` (torchair's str()): the script's device.
    let device_str = s.split_once(':').map_or(s, |(d, i)| {
        if i.bytes().all(|b| b.is_ascii_digit()) && !i.is_empty() {
            d
        } else {
            ""
        }
    });
    if (s.starts_with("device(") && s.ends_with(')'))
        || (s.contains(':') && matches!(device_str, "cpu" | "npu" | "cuda"))
    {
        return Some("DEVICE".into());
    }
    for q in ['\'', '"'] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            let inner = &s[1..s.len() - 1];
            return (!inner.contains([q, '\\'])).then(|| py_str(inner));
        }
    }
    let tuple = match (s.chars().next(), s.chars().last()) {
        (Some('['), Some(']')) => false,
        (Some('('), Some(')')) => true,
        _ => return None,
    };
    let inner = parse_call(&s[1..s.len() - 1]);
    if !inner.kwargs.is_empty() {
        return None;
    }
    let items = inner
        .args
        .iter()
        .map(|a| match a {
            FxArg::Literal(l) => safe_literal(l),
            _ => None,
        })
        .collect::<Option<Vec<String>>>()?;
    Some(enclose(&items, tuple))
}

/// A dumped value to put into the case.
struct Value {
    data: OutData,
    from: String,
    /// (dtype, shape) from its header.
    meta: Option<(String, Vec<u64>)>,
}

/// The dumped values of the call: its inputs by (argument, element) and its outputs in order.
#[derive(Default)]
struct Values {
    inputs: BTreeMap<(usize, Option<usize>), Value>,
    outputs: Vec<Value>,
    /// Whether the dump's inputs are the call's (else `missing` already says why not).
    fed: bool,
}

fn dumped_values(
    a: &ScanAnomaly,
    file: &Path,
    call: Option<&FxCallText>,
    rebuilt: &Rebuilt,
    missing: &mut Vec<String>,
) -> Values {
    match a.tensor.source {
        Source::Npy => fx_npy_values(file, missing),
        Source::Dump => ge_values(a, file, call, rebuilt, missing),
        Source::Pt | Source::Stats => {
            missing.push(format!(
                "{} holds {} only, no inputs of the call: the script seeds random data",
                a.tensor.path,
                if a.tensor.source == Source::Pt {
                    "one tensor"
                } else {
                    "statistics"
                }
            ));
            Values::default()
        }
    }
}

/// torchair's eager FX dump: the files of the same call beside the anomalous one.
fn fx_npy_values(file: &Path, missing: &mut Vec<String>) -> Values {
    let mut v = Values::default();
    let name = file.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(FileName::FxNpy(me)) = name.as_deref().map(classify) else {
        missing.push(format!(
            "{} is not named as torchair's FX dump names a tensor: its call's inputs are not known",
            file.display()
        ));
        return v;
    };
    let dir = file.parent().unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(dir) else {
        missing.push(format!("cannot list {}", dir.display()));
        return v;
    };
    v.fed = true;
    let mut outputs = BTreeMap::new();
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let FileName::FxNpy(f) = classify(&n) else {
            continue;
        };
        if f.op != me.op || f.timestamp_us != me.timestamp_us {
            continue;
        }
        let path = e.path();
        let value = Value {
            meta: npy_meta(&path),
            from: path.display().to_string(),
            data: OutData::Copy(path),
        };
        match f.io {
            Io::Input => {
                v.inputs.insert((f.index, f.part), value);
            }
            _ => {
                outputs.insert((f.index, f.part), value);
            }
        }
    }
    v.outputs = outputs.into_values().collect();
    v
}

fn npy_meta(path: &Path) -> Option<(String, Vec<u64>)> {
    let file = File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    let h = crate::dump::npy::read_header(&file, len).ok()?;
    let dtype = h.element().map(|e| e.dtype().name().to_string())?;
    Some((dtype, h.shape.clone()))
}

/// A GE dump: the operator's inputs are the node's only when the node became that one
/// operator and the operator has one input per argument.
fn ge_values(
    a: &ScanAnomaly,
    file: &Path,
    call: Option<&FxCallText>,
    rebuilt: &Rebuilt,
    missing: &mut Vec<String>,
) -> Values {
    let mut v = Values::default();
    let (facts, files) = match dumpdata::decode(file, None, 1) {
        Ok(d) => d,
        Err(e) => {
            missing.push(format!("the dump could not be decoded: {e}"));
            return v;
        }
    };
    let n_inputs = facts.tensors.iter().filter(|t| t.io == "input").count();
    let op = &a.tensor.op_name;
    let one_op = call.is_some_and(|c| c.ge_ops.len() == 1);
    let fits = one_op && n_inputs == rebuilt.args;
    v.fed = fits;
    if !fits {
        let why = match call {
            Some(c) if c.ge_ops.len() > 1 => format!(
                "the FX node became {} GE operators ({})",
                c.ge_ops.len(),
                c.ge_ops.join(", ")
            ),
            Some(c) if c.ge_ops.is_empty() => {
                "no torchair .py graph dump says which GE operators the FX node became".into()
            }
            Some(_) => format!(
                "{op} has {n_inputs} inputs and the call {} arguments",
                rebuilt.args
            ),
            None => "the node's call is not known".into(),
        };
        missing.push(format!(
            "{op}'s dumped inputs are not fed to the FX node: {why}; the script seeds random data"
        ));
    }
    let mut by_rel: BTreeMap<String, dumpdata::OutFile> =
        files.into_iter().map(|f| (f.rel.clone(), f)).collect();
    for t in &facts.tensors {
        let Some(f) = t.npy.as_ref().and_then(|rel| by_rel.remove(rel)) else {
            continue;
        };
        let value = Value {
            meta: Some((t.dtype.clone(), t.original_shape.clone())),
            from: format!("{} ({} {})", file.display(), t.io, t.index),
            data: f.data,
        };
        match t.io.as_str() {
            "input" if fits => {
                v.inputs.insert((t.index, None), value);
            }
            "output" => v.outputs.push(value),
            _ => {}
        }
    }
    v
}

/// The script's view of slot `s`: the graph text's meta, else the dumped file's.
fn tensor_meta(s: &Slot, dumped: Option<(String, Vec<u64>)>) -> TensorMeta {
    let (dtype, shape) = match (&s.meta, dumped) {
        (Some(m), _) => (
            m.dtype.clone(),
            m.shape
                .iter()
                .map(|d| d.parse().map_or_else(|_| Dim::Symbol(d.clone()), Dim::Size))
                .collect(),
        ),
        (None, Some((dtype, shape))) => (
            dtype,
            shape
                .iter()
                .map(|&d| i64::try_from(d).map_or_else(|_| Dim::Symbol(d.to_string()), Dim::Size))
                .collect(),
        ),
        (None, None) => ("unknown".into(), Vec::new()),
    };
    TensorMeta {
        shape,
        dtype,
        stride: None,
        producer: Some(s.node.clone()),
        dump: None,
    }
}

/// Writes one value into the case directory.
fn put(out: &Path, rel: &str, data: &OutData) -> anyhow::Result<()> {
    let p = out.join(rel);
    match data {
        OutData::Bytes(b) => crate::output::write(&p, b),
        OutData::Copy(src) => crate::output::write_with(&p, |f| {
            let mut from = File::open(src)?;
            Ok(std::io::copy(&mut from, f)?)
        })
        .map(drop)
        .with_context(|| format!("cannot copy {} to {}", src.display(), p.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_rebuilt_over_t_and_literals_are_respelt() {
        let r = rebuild(
            &parse_call(
                "add: torch.float32[4]npu:0, [a, b], -1, dtype = torch.float16, name='x', \
                 device = device(type='npu', index=0), eps=1e-05, dims=(0, 1)",
            ),
            false,
        );
        assert_eq!(
            r.call,
            "F(T[0], [T[1], T[2]], -1, dtype=torch.float16, name=\"x\", device=DEVICE, \
             eps=1e-05, dims=(0, 1))"
        );
        assert_eq!(r.problem, None);
        let keys: Vec<_> = r.inputs.iter().map(|s| s.key).collect();
        assert_eq!(
            keys,
            [Some((0, None)), Some((1, Some(0))), Some((1, Some(1)))]
        );
        assert_eq!(r.inputs[2].argument, "args[1][1]");
        assert_eq!(r.args, 3);
        // What is not a plain literal is never spliced into the script.
        for bad in [
            "__import__('os').system('x')",
            "torch.ops.x()",
            "'a' + 'b'",
            "'it\\'s'",
            "[1, os]",
            "1_0x",
        ] {
            assert_eq!(safe_literal(bad), None, "{bad}");
        }
        let r = rebuild(&parse_call("x, open('f')"), false);
        assert!(r.problem.as_deref().unwrap().contains("args[1]"), "{r:?}");
        // torchair's str() spelling: unquoted strings and devices, symbolic sizes.
        let r = rebuild(
            &parse_call(
                "x: torch.float16[4]npu:0, y: torch.float16[4]npu:0, rounding_mode=floor, \
                 device=npu:0",
            ),
            true,
        );
        assert_eq!(
            r.call,
            "F(T[0], T[1], rounding_mode=\"floor\", device=DEVICE)"
        );
        assert_eq!(r.problem, None);
        let r = rebuild(
            &parse_call("x: torch.float16[s0]npu:0, sym_size: \"Sym(s0)\""),
            true,
        );
        assert!(r.problem.as_deref().unwrap().contains("Sym(s0)"), "{r:?}");
        assert_eq!(safe_literal("inf").as_deref(), Some("float(\"inf\")"));
        assert_eq!(safe_literal("[1, -2.5e3]").as_deref(), Some("[1, -2.5e3]"));
    }
}
