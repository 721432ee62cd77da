//! Comparing two dump runs tensor by tensor: where they first diverge, and which operator
//! started it (`npgx dump-compare`, `docs/dump-compare.md`).
//!
//! The pipeline: both trees are walked and every file's tensors listed with the dump-scan
//! machinery ([`crate::dump::walk`], [`crate::dump::values`]) — no tensor data is read yet —
//! and grouped and ordered as dump-scan groups and orders them. Groups of the two runs are
//! paired ([`matching`]), tensors matched within each pair of groups, and then the pairs are
//! compared in parallel, each streaming both tensors chunk by chunk through one
//! [`metrics::Acc`]; only the per-pair rows are kept. Nothing here prints.

pub mod convert;
pub mod matching;
pub mod metrics;
pub mod msprobe;
pub mod records;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::dump::header::Io;
use rayon::prelude::*;

use crate::dump::list::{self, Listed, TensorSlot};
use crate::dump::mapped;
use crate::dump::order::{exec_key, OpKey};
use crate::dump::records::GroupKey;
use crate::dump::records::OpRef;
use crate::dump::values::{ValueReader, CHUNK};
use crate::dump::walk;
use matching::{FxGraphs, GoldenIndex, GraphIndex, TargetTensor};
use npgx_parsers::dump::name::FxGraphName;
pub use records::{
    CompareError, CompareReport, Evidence, GroupReport, MatchedBy, Metrics, Origin, Pair, Side,
    Summary, Threshold, Thresholds, Unmatched, UnmatchedTensor, Worst,
};

/// Name of the JSON document of `docs/dump-compare.md` (schema `npgx.dump-compare`).
pub const SCHEMA_NAME: &str = "dump-compare";
/// Version of the JSON schema in `docs/dump-compare.md`.
pub const SCHEMA_VERSION: u32 = 1;

/// Largest `--mapping` CSV or `--graph` dump read.
const MAX_SIDE_FILE: u64 = 256 << 20;

/// How to compare.
#[derive(Clone, Debug)]
pub struct CompareOptions {
    pub cosine: f64,
    pub max_rel: f64,
    /// Overrides by target dtype name (`float16`, …).
    pub per_dtype: BTreeMap<String, Threshold>,
    /// Length of each `worst` list.
    pub top: usize,
    /// Worker threads; `None` (or 0) = one per core, and for the pairs that stream, when the
    /// trees are read from disk, four per core (at most 64; one per core beyond that).
    pub threads: Option<usize>,
    /// A GE graph dump (`ge_proto_*.txt`) for fused-op names and producers.
    pub graph: Option<PathBuf>,
    /// A `golden_name,target_name` CSV.
    pub mapping: Option<PathBuf>,
    /// Explicit group pairs: (golden directory, target directory).
    pub groups: Vec<(PathBuf, PathBuf)>,
    /// Graph texts that trace each divergence to its FX node and source line (`--graphs`),
    /// besides those in and beside the two trees ([`crate::source_map`]).
    pub graphs: Vec<PathBuf>,
    /// When tensor data is read through a mapping ([`crate::dump::mapped::Mode::chosen`]).
    pub map: crate::dump::mapped::Mode,
    /// Stops the comparison before its end (a cancelled `npgx mcp` call): no pair is compared
    /// once it is set, and the comparison returns an error.
    pub cancel: crate::cancel::Cancel,
}

impl Default for CompareOptions {
    fn default() -> Self {
        CompareOptions {
            cosine: 0.99,
            max_rel: 0.01,
            per_dtype: BTreeMap::new(),
            top: 5,
            threads: None,
            graph: None,
            mapping: None,
            groups: Vec::new(),
            graphs: Vec::new(),
            map: crate::dump::mapped::Mode::default(),
            cancel: crate::cancel::Cancel::default(),
        }
    }
}

/// Progress events, for a progress bar.
#[derive(Clone, Copy, Debug)]
pub enum Progress {
    /// Matching finished with this many pairs to compare.
    Pairs(u64),
    /// One more pair was compared.
    PairDone,
}

/// One operator execution of a side: its files' tensors, in a group.
struct Exec {
    op: OpRef,
    match_name: String,
    /// (listed file, slot) of every tensor, inputs first, then by index.
    slots: Vec<(usize, usize)>,
}

/// One side, listed and grouped.
struct SideData {
    root: PathBuf,
    listed: Vec<Listed>,
    groups: BTreeMap<GroupKey, Vec<Exec>>,
    /// torchair graph dumps found in the tree.
    fx_graphs: Vec<(PathBuf, FxGraphName)>,
}

impl SideData {
    fn slot(&self, (l, s): (usize, usize)) -> (&Listed, &TensorSlot) {
        let listed = &self.listed[l];
        (listed, &listed.tensors[s])
    }
}

/// Walks and lists one side; file problems go to `errors`.
fn load(root: &Path, side: Side, errors: &mut Vec<CompareError>) -> SideData {
    let walked = walk::walk(root);
    let root_is_file = root.is_file();
    for e in walked.errors {
        // The walk's paths are relative to the root: shown under it, as the listings' are.
        let problem = if root_is_file
            || Path::new(&e.path).is_absolute()
            || e.path == root.display().to_string()
        {
            e
        } else {
            let path = root.join(&e.path).display().to_string();
            e.at(path)
        };
        errors.push(CompareError { side, problem });
    }
    let fx_graphs = walked.fx_graphs;
    let listed: Vec<Listed> = walked
        .candidates
        .par_iter()
        .flat_map(list::list_all)
        .collect();
    let mut by_group: BTreeMap<GroupKey, BTreeMap<OpKey, Exec>> = BTreeMap::new();
    for (li, l) in listed.iter().enumerate() {
        for e in &l.errors {
            errors.push(CompareError {
                side,
                problem: e.clone().at(l.path.display().to_string()),
            });
        }
        if l.tensors.is_empty() {
            continue;
        }
        let exec = by_group
            .entry((l.op.location.clone(), l.op.layout))
            .or_default()
            .entry(exec_key(&l.op))
            .or_insert_with(|| Exec {
                op: l.op.clone(),
                match_name: l.match_name.clone(),
                slots: Vec::new(),
            });
        exec.slots.extend((0..l.tensors.len()).map(|s| (li, s)));
    }
    let groups = by_group
        .into_iter()
        .map(|(k, execs)| {
            let mut execs: Vec<Exec> = execs.into_values().collect();
            for e in &mut execs {
                e.slots.sort_by_key(|&(l, s)| {
                    let t = &listed[l].tensors[s];
                    (t.io, t.index, listed[l].fx_input, l)
                });
            }
            (k, execs)
        })
        .collect();
    let mut side = SideData {
        root: root.to_path_buf(),
        listed,
        groups,
        fx_graphs,
    };
    number_fx_inputs(&mut side);
    side
}

/// Numbers the inputs of each FX data-dump call by position, a list argument's elements in
/// turn (`INPUT.0.0`, `INPUT.0.1`, `INPUT.1` → 0, 1, 2), as GE numbers the inputs of an op
/// and as msprobe pairs them.
fn number_fx_inputs(side: &mut SideData) {
    let listed = &mut side.listed;
    for e in side.groups.values().flatten() {
        let mut position = 0;
        for &(l, s) in &e.slots {
            if listed[l].fx_input.is_some() {
                listed[l].tensors[s].index = position;
                position += 1;
            }
        }
    }
}

fn read_side_file(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    let len = std::fs::metadata(path)
        .with_context(|| crate::error::CannotRead::with_role(what, path))?
        .len();
    if len > MAX_SIDE_FILE {
        anyhow::bail!("{what} {} is {len} bytes, too large", path.display());
    }
    std::fs::read(path).with_context(|| crate::error::CannotRead::with_role(what, path))
}

/// Whether any file of the group lies under `dir` (as given, or relative to the side's root).
fn group_under(side: &SideData, execs: &[Exec], dir: &Path) -> bool {
    let joined = side.root.join(dir);
    execs.iter().any(|e| {
        e.slots.iter().any(|&(l, _)| {
            let p = &side.listed[l].path;
            p.starts_with(dir) || p.starts_with(&joined)
        })
    })
}

/// Pairs the groups of the two sides: `--group` first, then "only group" when each side has
/// exactly one, then by rank, device, model (run stamp removed) and step.
fn pair_groups(
    golden: &SideData,
    target: &SideData,
    explicit: &[(PathBuf, PathBuf)],
) -> anyhow::Result<Vec<(GroupKey, GroupKey, &'static str)>> {
    let mut g_left: Vec<&GroupKey> = golden.groups.keys().collect();
    let mut t_left: Vec<&GroupKey> = target.groups.keys().collect();
    let mut out = Vec::new();
    for (gd, td) in explicit {
        let gs: Vec<&GroupKey> = g_left
            .iter()
            .copied()
            .filter(|k| group_under(golden, &golden.groups[*k], gd))
            .collect();
        let ts: Vec<&GroupKey> = t_left
            .iter()
            .copied()
            .filter(|k| group_under(target, &target.groups[*k], td))
            .collect();
        for (found, side, dir) in [(&gs, "golden", gd), (&ts, "target", td)] {
            if found.is_empty() {
                anyhow::bail!(
                    "--group {}={}: no unpaired group of the {side} run lies under {}",
                    gd.display(),
                    td.display(),
                    dir.display()
                );
            }
        }
        let pairs: Vec<(&GroupKey, &GroupKey)> = if gs.len() == 1 && ts.len() == 1 {
            vec![(gs[0], ts[0])]
        } else {
            by_key(&gs, &ts)
        };
        for (g, t) in pairs {
            g_left.retain(|k| *k != g);
            t_left.retain(|k| *k != t);
            out.push((g.clone(), t.clone(), "--group"));
        }
    }
    if explicit.is_empty() && g_left.len() == 1 && t_left.len() == 1 {
        out.push((g_left[0].clone(), t_left[0].clone(), "only group"));
        return Ok(out);
    }
    for (g, t) in by_key(&g_left, &t_left) {
        out.push((g.clone(), t.clone(), "rank/device/model/step"));
    }
    Ok(out)
}

/// Pairs groups with equal pairing keys, k-th with k-th when a key repeats.
fn by_key<'a>(gs: &[&'a GroupKey], ts: &[&'a GroupKey]) -> Vec<(&'a GroupKey, &'a GroupKey)> {
    let mut golden: HashMap<_, Vec<&GroupKey>> = HashMap::new();
    for g in gs {
        golden
            .entry(matching::pairing_key(&g.0))
            .or_default()
            .push(*g);
    }
    let mut used: HashMap<_, usize> = HashMap::new();
    let mut out = Vec::new();
    for t in ts {
        let key = matching::pairing_key(&t.0);
        let k = used.entry(key.clone()).or_default();
        if let Some(g) = golden.get(&key).and_then(|v| v.get(*k)) {
            *k += 1;
            out.push((*g, *t));
        }
    }
    out
}

/// A pair of tensors to compare.
struct Job {
    group: usize,
    order: usize,
    target: (usize, usize),
    golden: (usize, usize),
    matched_by: MatchedBy,
    golden_op_name: String,
    op_name: String,
    op_type: Option<String>,
}

fn unmatched_entry(side: &SideData, at: (usize, usize), name: &str) -> UnmatchedTensor {
    let (l, t) = side.slot(at);
    UnmatchedTensor {
        op_name: name.to_string(),
        io: t.io,
        index: t.index,
        file: l.path.display().to_string(),
    }
}

fn fmt_shape(s: &[u64]) -> String {
    let dims: Vec<String> = s.iter().map(u64::to_string).collect();
    format!("[{}]", dims.join(","))
}

/// Shapes agree when they are equal once size-1 dimensions are dropped (a torch scalar and a
/// GE `[1]`, a squeezed batch dimension).
fn same_shape(a: &[u64], b: &[u64]) -> bool {
    let squeeze = |s: &[u64]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    squeeze(a) == squeeze(b)
}

/// Streams both tensors, chunk by chunk as raw bytes, through npgx's metrics and, for msprobe
/// pairs, msprobe's (fed the same decoded blocks).
fn compare_values(
    golden: (&Path, &TensorSlot),
    target: (&Path, &TensorSlot),
    with_msprobe: bool,
    map: crate::dump::mapped::Mode,
) -> Result<(metrics::Acc, Option<msprobe::Acc>), String> {
    let (mut g, mut t) = ValueReader::pair(golden, target, map)?;
    let (ge, te) = (g.element(), t.element());
    let (gs, ts) = (ge.size().unwrap_or(1), te.size().unwrap_or(1));
    let mut acc = metrics::Acc::default();
    let mut ms = with_msprobe.then(|| msprobe::Acc::new(ge, te));
    loop {
        // Both chunks exist only inside the readers' calls (mapped pages, under the guard).
        let mut step = |gb: &[u8], tb: &[u8]| {
            let (ng, nt) = (gb.len() / gs, tb.len() / ts);
            if ng != nt {
                return Err(format!(
                    "golden and target data end at different places ({ng} vs {nt} values in the last chunk)"
                ));
            }
            if ng > 0 {
                acc.update_raw_with((ge, gb), (te, tb), &mut ms);
            }
            Ok(ng == 0)
        };
        let done = g
            .next_with(CHUNK, |gb| {
                t.next_with(CHUNK, |tb| step(gb, tb))
                    .map_err(|e| format!("target: {e}"))
            })
            .map_err(|e| format!("golden: {e}"))???;
        if done {
            g.finish().map_err(|e| format!("golden: {e}"))?;
            t.finish().map_err(|e| format!("target: {e}"))?;
            return Ok((acc, ms));
        }
    }
}

fn run_job(
    j: &Job,
    golden: &SideData,
    target: &SideData,
    th: &Thresholds,
    map: crate::dump::mapped::Mode,
) -> Pair {
    let (gl, gs) = golden.slot(j.golden);
    let (tl, ts) = target.slot(j.target);
    let target_dtype = ts.element.numpy_name().to_string();
    let mut pair = Pair {
        group: j.group,
        order: j.order,
        op_name: j.op_name.clone(),
        op_type: j.op_type.clone(),
        golden_op_name: j.golden_op_name.clone(),
        io: ts.io,
        index: ts.index,
        matched_by: j.matched_by,
        golden_dtype: gs.element.numpy_name().to_string(),
        target_dtype,
        shape: ts.shape.clone(),
        elements: ts.elements(),
        metrics: None,
        passed: false,
        error: None,
        golden_file: gl.path.display().to_string(),
        target_file: tl.path.display().to_string(),
        msprobe: None,
        summary: None,
        fx: None,
    };
    if !same_shape(&gs.shape, &ts.shape) || gs.elements() != ts.elements() {
        pair.error = Some(format!(
            "shape mismatch: golden {} vs target {}",
            fmt_shape(&gs.shape),
            fmt_shape(&ts.shape)
        ));
        return pair;
    }
    // msprobe's summary mode: one side known by its statistics only.
    if let (list::Data::Statistics(g), list::Data::Statistics(t)) = (&gs.data, &ts.data) {
        let summary = records::MsprobeSummary::of(*g, *t);
        pair.passed = summary.passes(th.for_dtype(&pair.target_dtype).max_rel);
        pair.summary = Some(summary);
        return pair;
    }
    if matches!(gs.data, list::Data::Statistics(_)) || matches!(ts.data, list::Data::Statistics(_))
    {
        pair.error = Some("one run holds values, the other statistics only: not compared".into());
        return pair;
    }
    let with_msprobe = tl.op.layout == npgx_parsers::dump::path::Layout::Msprobe;
    match compare_values(
        (gl.path.as_path(), gs),
        (tl.path.as_path(), ts),
        with_msprobe,
        map,
    ) {
        Ok((acc, ms)) => {
            let dims = msprobe::squeezed_dims(&ts.shape);
            pair.msprobe = ms.map(|m| m.finish(gs.element, ts.element, dims, &acc.products()));
            let m = acc.finish();
            let t = th.for_dtype(&pair.target_dtype);
            pair.passed = m.nan_inf_one_side == 0
                && m.cosine.is_none_or(|c| c >= t.cosine)
                && m.max_rel.is_none_or(|r| r < t.max_rel);
            pair.metrics = Some(m);
        }
        Err(e) => pair.error = Some(e),
    }
    pair
}

/// First divergence, origin and worst lists of one group's pairs (in execution order).
fn conclude(
    pairs: &[Pair],
    top: usize,
    graph: Option<&GraphIndex>,
    exec_names: &[(String, String)],
) -> (Option<Pair>, Option<Origin>, Worst) {
    let failing_output = |p: &&Pair| p.io == Io::Output && !p.passed;
    let first_divergence = pairs.iter().find(failing_output).cloned();
    let mut origin = None;
    let mut by_order: BTreeMap<usize, Vec<&Pair>> = BTreeMap::new();
    for p in pairs {
        by_order.entry(p.order).or_default().push(p);
    }
    for (&order, ops) in &by_order {
        let Some(failed) = ops.iter().copied().find(failing_output) else {
            continue;
        };
        let compared = |io: Io| -> Vec<&&Pair> {
            ops.iter()
                .filter(|p| p.io == io && p.error.is_none())
                .collect()
        };
        let (inputs, parameters) = (compared(Io::Input), compared(Io::Parameter));
        // msprobe module calls: a failing parameter with passing inputs is the weights'.
        let weights_differ = parameters.iter().any(|p| !p.passed);
        let evidence = if !inputs.is_empty() {
            match (inputs.iter().all(|p| p.passed), weights_differ) {
                (true, false) => Some(Evidence::Inputs),
                (true, true) => Some(Evidence::Parameters),
                (false, _) => None,
            }
        } else if weights_differ {
            Some(Evidence::Parameters)
        } else {
            let producers = graph_producers(pairs, order, graph, exec_names);
            match producers {
                Some(ps) if !ps.is_empty() => {
                    ps.iter().all(|p| p.passed).then_some(Evidence::Graph)
                }
                _ => Some(Evidence::None),
            }
        };
        if let Some(evidence) = evidence {
            origin = Some(Origin {
                pair: failed.clone(),
                evidence,
            });
            break;
        }
    }
    let pick = |key: fn(&Metrics) -> Option<f64>, ascending: bool| {
        let mut v: Vec<(&Pair, f64)> = pairs
            .iter()
            .filter_map(|p| Some((p, key(p.metrics.as_ref()?)?)))
            .collect();
        v.sort_by(|a, b| {
            let o = a.1.total_cmp(&b.1);
            if ascending {
                o
            } else {
                o.reverse()
            }
        });
        v.into_iter()
            .take(top)
            .map(|(p, _)| p.clone())
            .collect::<Vec<Pair>>()
    };
    let worst = Worst {
        cosine: pick(|m| m.cosine, true),
        max_rel: pick(|m| m.max_rel, false),
        max_abs: pick(|m| m.max_abs, false),
        rmse: pick(|m| m.rmse, false),
    };
    (first_divergence, origin, worst)
}

/// The output pairs of the producers the GE graph names for the op at `order` (the latest
/// execution of each producer before it); `None` without a graph entry for the op.
fn graph_producers<'a>(
    pairs: &'a [Pair],
    order: usize,
    graph: Option<&GraphIndex>,
    exec_names: &[(String, String)],
) -> Option<Vec<&'a Pair>> {
    let (real, matched) = exec_names.get(order)?;
    let op = graph?.get(real).or_else(|| graph?.get(matched))?;
    let mut out = Vec::new();
    for (src, idx) in &op.inputs {
        let clean = npgx_parsers::dump::name::sanitise(src);
        let found = pairs.iter().rev().find(|p| {
            p.order < order
                && p.io == Io::Output
                && p.index == *idx
                && (p.op_name == *src || p.op_name == clean)
        });
        out.extend(found);
    }
    Some(out)
}

/// The graph texts of a comparison (docs/source-map.md): `--graphs`, the torchair graph dumps
/// found in either tree and those beside them, read once — for matching a GE dump with an FX dump
/// (`_fx_tensor_name`) and for the origins of the divergences. An unreadable one is an error
/// entry.
fn source_map(
    opts: &CompareOptions,
    (golden, target): (&SideData, &SideData),
    roots: (&Path, &Path),
    errors: &mut Vec<CompareError>,
) -> crate::source_map::SourceMap {
    let mut paths = opts.graphs.clone();
    for data in [target, golden] {
        paths.extend(data.fx_graphs.iter().map(|(p, _)| p.clone()));
    }
    let mut seen = std::collections::BTreeSet::new();
    paths.retain(|p| seen.insert(p.clone()));
    let mut map = crate::source_map::SourceMap::load(&paths);
    map.add_near(roots.1);
    map.add_near(roots.0);
    errors.extend(map.problems.drain(..).map(|problem| CompareError {
        side: Side::Graphs,
        problem,
    }));
    map
}

/// Gives each group's first divergence, its failing input and its origin the FX node and source
/// line of their target operator (issue 43). Nothing without any graph text and without
/// `--graphs`.
fn origins(opts: &CompareOptions, map: &crate::source_map::SourceMap, groups: &mut [GroupReport]) {
    if map.is_empty() && opts.graphs.is_empty() {
        return;
    }
    for gr in groups.iter_mut() {
        let (rank, model) = (gr.target.rank, gr.target.model.clone());
        let pairs = gr
            .first_divergence
            .iter_mut()
            .chain(gr.inputs_differ.iter_mut())
            .chain(gr.origin.iter_mut().map(|o| &mut o.pair));
        for p in pairs {
            p.fx = Some(pair_origin(map, rank, model.as_deref(), p));
        }
    }
}

/// The origin of a pair's target operator.
fn pair_origin(
    map: &crate::source_map::SourceMap,
    rank: Option<u32>,
    model: Option<&str>,
    p: &Pair,
) -> crate::source_map::FxOrigin {
    map.of_dumped(&crate::source_map::Dumped {
        rank,
        model,
        op_name: &p.op_name,
        op_type: p.op_type.as_deref(),
        path: &p.target_file,
        // A fused operator matched through its dump's original_op: the golden name is that op.
        original: (p.matched_by == MatchedBy::OriginalOp).then_some(p.golden_op_name.as_str()),
    })
}

/// Reads the `--mapping` CSV (golden name by target name); empty without one.
fn read_mapping(opts: &CompareOptions) -> anyhow::Result<HashMap<String, String>> {
    Ok(match &opts.mapping {
        Some(p) => {
            let text = read_side_file(p, "mapping")?;
            matching::parse_mapping(&String::from_utf8_lossy(&text))
                .map_err(|e| anyhow::anyhow!("mapping {}: {e}", p.display()))?
        }
        None => HashMap::new(),
    })
}

/// Reads and indexes the `--graph` GE graph dump, if given.
fn read_graph(opts: &CompareOptions) -> anyhow::Result<Option<GraphIndex>> {
    Ok(match &opts.graph {
        Some(p) => {
            let text = read_side_file(p, "GE graph")?;
            let model = npgx_parsers::ge_graph::parse(&text)
                .map_err(|e| anyhow::anyhow!("GE graph {}: {e}", p.display()))?;
            Some(matching::graph_index(&model))
        }
        None => None,
    })
}

/// What target tensors are matched with besides their names: the `--mapping` names, the GE
/// graph and the torchair graph dumps.
struct MatchContext<'a> {
    mapping: &'a HashMap<String, String>,
    /// The golden operator's name when both roots are files of one operator each: the user
    /// named the pair.
    files: Option<&'a str>,
    graph: Option<&'a GraphIndex>,
    fx: &'a FxGraphs,
}

/// The tensors of the paired groups, matched.
#[derive(Default)]
struct Matched {
    /// A pair of tensors to compare per match.
    jobs: Vec<Job>,
    /// The tensors that matched nothing, in the paired groups and in the unpaired ones.
    unmatched: Unmatched,
    /// A report per pair of groups, its pairs and conclusions not filled in yet.
    groups: Vec<GroupReport>,
    /// Per pair of groups, the (op name, match name) of each target execution, in order.
    exec_names: Vec<Vec<(String, String)>>,
}

impl Matched {
    /// Matches the tensors of every pair of groups (`paired`, from [`pair_groups`]), then lists
    /// the tensors of the groups left unpaired as unmatched.
    fn match_all(
        g: &SideData,
        t: &SideData,
        paired: &[(GroupKey, GroupKey, &'static str)],
        cx: &MatchContext<'_>,
    ) -> Matched {
        let mut m = Matched::default();
        let mut paired_g = std::collections::HashSet::new();
        let mut paired_t = std::collections::HashSet::new();
        for (gi, (gk, tk, how)) in paired.iter().enumerate() {
            paired_g.insert(gk.clone());
            paired_t.insert(tk.clone());
            m.match_group(gi, (g, gk), (t, tk), cx);
            m.groups.push(GroupReport {
                golden: matching::side(&gk.0),
                target: matching::side(&tk.0),
                paired_by: (*how).to_string(),
                pairs: 0,
                failed: 0,
                first_divergence: None,
                inputs_differ: None,
                origin: None,
                worst: Worst::default(),
                collectives: Vec::new(),
            });
        }
        for (side, data, paired_keys) in [
            (&mut m.unmatched.golden, g, &paired_g),
            (&mut m.unmatched.target, t, &paired_t),
        ] {
            for (k, execs) in &data.groups {
                if paired_keys.contains(k) {
                    continue;
                }
                for e in execs {
                    for &s in &e.slots {
                        side.push(unmatched_entry(data, s, &e.match_name));
                    }
                }
            }
        }
        m
    }

    /// Matches each tensor of the target group `tk` (the `gi`-th pair) with one of the golden
    /// group `gk`: a job per match; the target tensors that match none, then the golden ones
    /// left, go to `unmatched`.
    fn match_group(
        &mut self,
        gi: usize,
        (g, gk): (&SideData, &GroupKey),
        (t, tk): (&SideData, &GroupKey),
        cx: &MatchContext<'_>,
    ) {
        let mut index: GoldenIndex<(usize, usize, usize)> = GoldenIndex::default();
        for (ei, e) in g.groups[gk].iter().enumerate() {
            for &s in &e.slots {
                let (_, slot) = g.slot(s);
                index.push((e.match_name.clone(), slot.io, slot.index), (s.0, s.1, ei));
            }
        }
        let mut names = Vec::new();
        for (order, e) in t.groups[tk].iter().enumerate() {
            names.push((e.op.op_name.clone(), e.match_name.clone()));
            let graph_op = cx
                .graph
                .and_then(|gr| gr.get(&e.op.op_name).or_else(|| gr.get(&e.match_name)));
            for &s in &e.slots {
                let (_, slot) = t.slot(s);
                let tt = TargetTensor {
                    name: &e.match_name,
                    io: slot.io,
                    index: slot.index,
                    mapped: cx
                        .mapping
                        .get(&e.match_name)
                        .or_else(|| cx.mapping.get(&e.op.op_name))
                        .map(String::as_str),
                    files: cx.files,
                    original_op: slot.original_op.as_ref().map(|(n, k)| (n.as_str(), *k)),
                    graph: graph_op,
                    fx: (!cx.fx.is_empty()).then_some((cx.fx, tk.0.rank)),
                };
                match index.claim(&tt) {
                    Some(((l, si, _), by, golden_name)) => self.jobs.push(Job {
                        group: gi,
                        order,
                        target: s,
                        golden: (l, si),
                        matched_by: by,
                        golden_op_name: golden_name,
                        op_name: e.match_name.clone(),
                        op_type: e.op.op_type.clone(),
                    }),
                    None => self
                        .unmatched
                        .target
                        .push(unmatched_entry(t, s, &e.match_name)),
                }
            }
        }
        let execs = &g.groups[gk];
        for (l, s, ei) in index.unclaimed() {
            self.unmatched
                .golden
                .push(unmatched_entry(g, (l, s), &execs[ei].match_name));
        }
        self.exec_names.push(names);
    }
}

/// The largest pairs whose files are looked up in the page cache ([`mapped::cached`]) to tell
/// trees read from disk.
const DISK_PROBES: usize = 4;
/// Workers per core for pairs read from disk: a worker waits for its reads, so more of them keep
/// the disk's queue full while the cores compute (2 cores, the 0.25 GiB bench trees cold: 0.65–0.91
/// s with 2 workers, 0.46–0.53 s with 8, the cold read limit 0.50–0.79 s on 16 threads in the same
/// runs; docs/performance.md).
const DISK_WORKERS_PER_CORE: usize = 4;
/// At most this many workers for pairs read from disk (more cores keep one each).
const DISK_WORKERS_MAX: usize = 64;

/// Workers for pairs read from disk on `cores` cores.
fn disk_workers(cores: usize) -> usize {
    (cores * DISK_WORKERS_PER_CORE)
        .min(DISK_WORKERS_MAX)
        .max(cores)
}

/// Whether the files of the largest pairs (`jobs` largest first) are read from disk: one of
/// them is not held by the page cache (each file looked up once).
fn from_disk(jobs: &[Job], (g, t): (&SideData, &SideData)) -> bool {
    let mut seen: Vec<&Path> = Vec::with_capacity(2 * DISK_PROBES);
    jobs.iter()
        .take(DISK_PROBES)
        .flat_map(|j| {
            [
                g.slot(j.golden).0.path.as_path(),
                t.slot(j.target).0.path.as_path(),
            ]
        })
        .any(|path| {
            if seen.contains(&path) {
                return false;
            }
            seen.push(path);
            !mapped::cached(path)
        })
}

/// Compares the pairs of `jobs` in parallel on `pool`, reporting each to `progress`; returns
/// them in execution order (group, order, io, index). When `threads` leaves the choice to npgx
/// (`None` or 0) and the trees are read from disk, the pairs that stream run on more workers
/// ([`disk_workers`]) beside the others, which hold a whole tensor each and keep `pool`.
fn run_jobs(
    pool: &rayon::ThreadPool,
    mut jobs: Vec<Job>,
    (g, t): (&SideData, &SideData),
    thresholds: &Thresholds,
    (map, cancel): (crate::dump::mapped::Mode, &crate::cancel::Cancel),
    threads: Option<usize>,
    progress: &(dyn Fn(Progress) + Sync),
) -> Vec<Pair> {
    // The largest pairs first, so that the last to finish are small ones and every worker stays
    // busy to the end (the pairs are put back in execution order below).
    jobs.sort_by_key(|j| std::cmp::Reverse(t.slot(j.target).1.elements()));
    let on = |pool: &rayon::ThreadPool, jobs: &[Job]| -> Vec<Pair> {
        pool.install(|| {
            jobs.par_iter()
                .filter_map(|j| {
                    // A cancelled call compares nothing more (the caller reports no pair).
                    if cancel.is_set() {
                        return None;
                    }
                    let p = run_job(j, g, t, thresholds, map);
                    progress(Progress::PairDone);
                    Some(p)
                })
                .collect()
        })
    };
    let chosen = threads.is_none_or(|n| n == 0);
    let (streamed, held): (Vec<Job>, Vec<Job>) = if chosen && from_disk(&jobs, (g, t)) {
        jobs.into_iter()
            .partition(|j| ValueReader::streams(g.slot(j.golden).1, t.slot(j.target).1))
    } else {
        (Vec::new(), jobs)
    };
    let disk = (!streamed.is_empty())
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(disk_workers(pool.current_num_threads()))
                .build()
                .ok()
        })
        .flatten();
    let mut pairs = match &disk {
        Some(disk) => std::thread::scope(|scope| {
            let others = scope.spawn(|| on(pool, &held));
            let mut pairs = on(disk, &streamed);
            // A panic of a worker is the comparison's own: passed on as it is.
            pairs.extend(
                others
                    .join()
                    .unwrap_or_else(|p| std::panic::resume_unwind(p)),
            );
            pairs
        }),
        None => {
            let mut pairs = on(pool, &streamed);
            pairs.extend(on(pool, &held));
            pairs
        }
    };
    pairs.sort_by_key(|p| (p.group, p.order, p.io, p.index));
    pairs
}

/// Fills in each group's report from its pairs (`pairs` in execution order): the counts, the
/// first divergence, the origin, the worst pairs and the positions of the collectives.
fn conclude_groups(
    groups: &mut [GroupReport],
    pairs: &[Pair],
    top: usize,
    graph: Option<&GraphIndex>,
    exec_names: &[Vec<(String, String)>],
) {
    for (gi, gr) in groups.iter_mut().enumerate() {
        let start = pairs.partition_point(|p| p.group < gi);
        let end = pairs.partition_point(|p| p.group <= gi);
        let own = &pairs[start..end];
        gr.pairs = own.len() as u64;
        gr.failed = own.iter().filter(|p| !p.passed).count() as u64;
        let (fd, origin, worst) = conclude(own, top, graph, &exec_names[gi]);
        // The first divergent operator's own inputs, compared: the first that fails.
        gr.inputs_differ = fd.as_ref().and_then(|d| {
            own.iter()
                .find(|p| p.order == d.order && p.io == Io::Input && !p.passed)
                .cloned()
        });
        gr.first_divergence = fd;
        gr.origin = origin;
        gr.worst = worst;
        // `own` is in execution order: the positions come out ascending.
        gr.collectives = own
            .iter()
            .filter(|p| crate::dump::order::is_collective_op(&p.op_name, p.op_type.as_deref()))
            .map(|p| p.order)
            .collect();
        gr.collectives.dedup();
    }
}

/// Sorts the unmatched tensors (by file, io, index) and the errors (by side, path, message).
fn sort_leftovers(unmatched: &mut Unmatched, errors: &mut [CompareError]) {
    let sort_unmatched = |v: &mut Vec<UnmatchedTensor>| {
        v.sort_by(|a, b| (&a.file, a.io, a.index).cmp(&(&b.file, b.io, b.index)));
    };
    sort_unmatched(&mut unmatched.golden);
    sort_unmatched(&mut unmatched.target);
    errors.sort_by(|a, b| {
        (a.side, &a.problem.path, &a.problem.message).cmp(&(
            b.side,
            &b.problem.path,
            &b.problem.message,
        ))
    });
}

/// A `GOLDEN_DIR=TARGET_DIR` pair of directories to compare with each other (`--group`).
pub fn parse_group(s: &str) -> Result<(PathBuf, PathBuf), String> {
    let (g, t) = s
        .split_once('=')
        .filter(|(g, t)| !g.is_empty() && !t.is_empty())
        .ok_or("expected GOLDEN_DIR=TARGET_DIR")?;
    Ok((PathBuf::from(g), PathBuf::from(t)))
}

/// Dtype names as the output prints them; DT_ names are accepted too.
fn dtype_name(s: &str) -> Result<String, String> {
    npgx_parsers::dump::dtype::Element::from_user_name(s)
        .map(|e| e.numpy_name().to_string())
        .ok_or_else(|| format!("unknown dtype {s:?} (use float16, bfloat16, float32, …)"))
}

/// A `DTYPE=COSINE,MAX_REL` threshold (`--dtype-threshold`), e.g. `float16=0.98,0.05`.
pub fn parse_dtype_threshold(s: &str) -> Result<(String, Threshold), String> {
    let err = || "expected DTYPE=COSINE,MAX_REL, e.g. float16=0.98,0.05".to_string();
    let (d, v) = s.split_once('=').ok_or_else(err)?;
    let (c, r) = v.split_once(',').ok_or_else(err)?;
    let cosine: f64 = c.trim().parse().map_err(|_| err())?;
    let max_rel: f64 = r.trim().parse().map_err(|_| err())?;
    Ok((dtype_name(d.trim())?, Threshold { cosine, max_rel }))
}

/// The golden operator's name when `golden` and `target` are both files, each of one
/// operator (`npgx dump-compare golden_c.npy out_c.npy`): the command line pairs them whatever
/// their names.
fn files_pair<'a>(
    golden: &Path,
    target: &Path,
    (g, t): (&'a SideData, &SideData),
) -> Option<&'a str> {
    (golden.is_file() && target.is_file() && only_exec(t).is_some())
        .then(|| only_exec(g))
        .flatten()
}

/// The name of a side's only operator execution, if it has one only.
fn only_exec(side: &SideData) -> Option<&str> {
    let mut execs = side.groups.values().flatten();
    match (execs.next(), execs.next()) {
        (Some(e), None) => Some(e.match_name.as_str()),
        _ => None,
    }
}

/// Compares the dump trees (or files) `golden` and `target`. Fails only when a root, the
/// mapping or the graph cannot be read, or a `--group` names no group; problems with files
/// inside become `errors`.
pub fn compare(
    golden: &Path,
    target: &Path,
    opts: &CompareOptions,
    progress: &(dyn Fn(Progress) + Sync),
) -> anyhow::Result<CompareReport> {
    for (root, what) in [(golden, "golden"), (target, "target")] {
        std::fs::metadata(root)
            .with_context(|| crate::error::CannotRead::with_role(format!("the {what}"), root))?;
    }
    let mapping = read_mapping(opts)?;
    let graph = read_graph(opts)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(opts.threads.unwrap_or(0))
        .build()
        .context("cannot start worker threads")?;
    let mut errors = Vec::new();
    let (g, t) = pool.install(|| {
        let g = load(golden, Side::Golden, &mut errors);
        let t = load(target, Side::Target, &mut errors);
        (g, t)
    });
    let map = source_map(opts, (&g, &t), (golden, target), &mut errors);
    let fx = FxGraphs::of(&map);
    let paired = pair_groups(&g, &t, &opts.groups)?;
    let cx = MatchContext {
        mapping: &mapping,
        files: files_pair(golden, target, (&g, &t)),
        graph: graph.as_ref(),
        fx: &fx,
    };
    let Matched {
        jobs,
        mut unmatched,
        mut groups,
        exec_names,
    } = Matched::match_all(&g, &t, &paired, &cx);
    progress(Progress::Pairs(jobs.len() as u64));
    let thresholds = Thresholds {
        cosine: opts.cosine,
        max_rel: opts.max_rel,
        per_dtype: opts.per_dtype.clone(),
    };
    let pairs = run_jobs(
        &pool,
        jobs,
        (&g, &t),
        &thresholds,
        (opts.map, &opts.cancel),
        opts.threads,
        progress,
    );
    opts.cancel.check()?;
    conclude_groups(&mut groups, &pairs, opts.top, graph.as_ref(), &exec_names);
    origins(opts, &map, &mut groups);
    sort_leftovers(&mut unmatched, &mut errors);
    let passed = pairs.iter().filter(|p| p.passed).count() as u64;
    let summary = Summary {
        pairs: pairs.len() as u64,
        passed,
        failed: pairs.len() as u64 - passed,
        unmatched_golden: unmatched.golden.len() as u64,
        unmatched_target: unmatched.target.len() as u64,
        groups: groups.len() as u64,
        errors: errors.len() as u64,
    };
    Ok(CompareReport {
        schema_version: SCHEMA_VERSION,
        golden: golden.display().to_string(),
        target: target.display().to_string(),
        thresholds,
        summary,
        groups,
        pairs,
        unmatched,
        errors,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_workers_per_core_from_disk_at_most_64_and_never_fewer_than_cores() {
        let got: Vec<usize> = [1, 2, 16, 17, 64, 128].map(disk_workers).to_vec();
        assert_eq!(got, [4, 8, 64, 64, 64, 128]);
    }

    fn pair(order: usize, name: &str, io: Io, passed: bool) -> Pair {
        Pair {
            group: 0,
            order,
            op_name: name.into(),
            op_type: None,
            golden_op_name: name.into(),
            io,
            index: 0,
            matched_by: MatchedBy::Name,
            golden_dtype: "float32".into(),
            target_dtype: "float16".into(),
            shape: vec![2],
            elements: 2,
            metrics: Some(Metrics {
                cosine: Some(if passed { 1.0 } else { 0.5 }),
                ..Metrics::default()
            }),
            passed,
            error: None,
            golden_file: String::new(),
            target_file: String::new(),
            msprobe: None,
            summary: None,
            fx: None,
        }
    }

    #[test]
    fn a_failing_parameter_with_passing_inputs_is_the_weights() {
        let pairs = vec![
            pair(0, "a", Io::Input, true),
            pair(0, "a", Io::Parameter, false),
            pair(0, "a", Io::Output, false),
            pair(1, "b", Io::Input, false),
            pair(1, "b", Io::Output, false),
        ];
        let (_, origin, _) = conclude(&pairs, 2, None, &[]);
        let o = origin.unwrap();
        assert_eq!(
            (o.pair.op_name.as_str(), o.evidence),
            ("a", Evidence::Parameters)
        );
    }

    #[test]
    fn origin_is_the_first_failing_op_with_passing_inputs() {
        // a (no inputs) passes; b's input passes, its output fails (origin); c carries it.
        let pairs = vec![
            pair(0, "a", Io::Output, true),
            pair(1, "b", Io::Input, true),
            pair(1, "b", Io::Output, false),
            pair(2, "c", Io::Input, false),
            pair(2, "c", Io::Output, false),
        ];
        let (fd, origin, worst) = conclude(&pairs, 2, None, &[]);
        assert_eq!(fd.map(|p| p.op_name), Some("b".to_string()));
        let o = origin.unwrap();
        assert_eq!(
            (o.pair.op_name.as_str(), o.evidence),
            ("b", Evidence::Inputs)
        );
        assert_eq!(worst.cosine.len(), 2);
        assert_eq!(worst.cosine[0].metrics.as_ref().unwrap().cosine, Some(0.5));

        // Divergence inherited through a failing input: the first divergence is not the origin.
        let pairs = vec![
            pair(0, "a", Io::Input, false),
            pair(0, "a", Io::Output, false),
            pair(1, "b", Io::Input, true),
            pair(1, "b", Io::Output, false),
        ];
        let (fd, origin, _) = conclude(&pairs, 5, None, &[]);
        assert_eq!(fd.map(|p| p.op_name), Some("a".to_string()));
        assert_eq!(origin.map(|o| o.pair.op_name), Some("b".to_string()));

        // No inputs dumped: the first divergence, evidence none; with a graph, the producers.
        let pairs = vec![
            pair(0, "a", Io::Output, false),
            pair(1, "b", Io::Output, false),
        ];
        let (_, origin, _) = conclude(&pairs, 5, None, &[]);
        assert_eq!(origin.map(|o| o.evidence), Some(Evidence::None));
        let mut graph = GraphIndex::new();
        graph.insert(
            "b".into(),
            matching::GraphOp {
                original_names: Vec::new(),
                inputs: vec![("a".into(), 0)],
            },
        );
        let names = vec![
            ("a".to_string(), "a".to_string()),
            ("b".to_string(), "b".to_string()),
        ];
        let pairs = vec![
            pair(0, "a", Io::Output, true),
            pair(1, "b", Io::Output, false),
        ];
        let (_, origin, _) = conclude(&pairs, 5, Some(&graph), &names);
        let o = origin.unwrap();
        assert_eq!(
            (o.pair.op_name.as_str(), o.evidence),
            ("b", Evidence::Graph)
        );
    }

    #[test]
    fn shapes_agree_up_to_size_one_dims() {
        assert!(same_shape(&[], &[1]));
        assert!(same_shape(&[1, 2, 3], &[2, 3]));
        assert!(!same_shape(&[2, 3], &[3, 2]));
        assert!(!same_shape(&[6], &[2, 3]));
    }
}
