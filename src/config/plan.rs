//! `dump-config plan`: the next `dump_config.json`, planned from what a first pass found.
//!
//! A full dump is huge and slow, so a first pass dumps statistics, overflow or one step, and a
//! second pass dumps narrowly where the first pointed. This module reads the saved JSON documents
//! of the first pass (`dump-scan`, `dump-compare`, `merge`) and writes that second pass:
//!
//! * an **overwrite** (dump-scan's address links, `groups[].addresses.overwrites`) → the watcher
//!   scene: `watcher_nodes` = the producer P, `layer` = the operators run between P and the
//!   consumer C (those whose outputs overlap the range first), `dump_mode: output`;
//! * an anomaly **born** in an operator, an anomaly that entered from no dumped output, or a
//!   **divergence origin** → a model dump narrowed to that operator and its producers up to N hops
//!   (the GE graph's edges when given, else the address links), `dump_mode: all`, `dump_step` =
//!   that step;
//! * a **statistics** or **overflow** first pass where nothing was born → a wider statistics dump
//!   (inputs and outputs) of the operators before the first anomaly, for that step.
//!
//! One plan per rank; ranks whose plans differ get one file each. Each plan carries an estimate
//! of the bytes it writes per step next to what a full dump writes, and every plan passes the
//! `dump-config check` rules before it is written.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use npgx_parsers::dump::dtype::DType;
use npgx_parsers::ge_graph::{GeModel, OpIndex};
use serde::{Deserialize as _, Serialize};

use super::preset::{self, DumpMode, Preset, PresetOptions};
use crate::compare::records::CompareDocument;
use crate::envelope::{Readers, SCHEMA_PREFIX};
use crate::merge::MergeReport;
use crate::scan::address::{Addresses, Overwrite};
use crate::scan::document::{ScanAnomaly, ScanDocument, ScanTensor};
use crate::scan::records::Source;

/// How many producer hops a narrowed dump reaches by default.
pub const DEFAULT_HOPS: usize = 2;

/// How to plan.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// Producer hops of a narrowed dump.
    pub hops: usize,
    /// `dump_path` of the plan (default `./`).
    pub dump_path: Option<String>,
}

/// Which kind of second pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Scene {
    /// Memory overwrite: the watcher scene.
    Watcher,
    /// A model dump of one operator and its producers.
    Narrowed,
    /// A statistics dump of the operators before the first anomaly.
    WiderStats,
}

/// Bytes per step: the plan's and a full dump's, and how they were estimated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Estimate {
    pub plan_bytes: Option<u64>,
    pub full_bytes: Option<u64>,
    pub basis: String,
    /// Free space under a local `dump_path` (statvfs), when it could be examined.
    pub free_bytes: Option<u64>,
}

impl Estimate {
    /// Whether the plan writes more per step than the free space of the local `dump_path`.
    pub fn exceeds_free(&self) -> bool {
        matches!((self.plan_bytes, self.free_bytes), (Some(p), Some(f)) if p > f)
    }
}

/// One planned config.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct PlannedDump {
    pub scene: Scene,
    pub rank: Option<u32>,
    pub model: Option<String>,
    pub step: Option<u64>,
    /// The document it was planned from.
    pub from: String,
    /// What the first pass found, in one line.
    pub why: String,
    pub config: serde_json::Value,
    /// The `dump_config.json` text.
    #[serde(skip)]
    pub text: String,
    /// Where it was written.
    pub written: Option<String>,
    pub estimate: Estimate,
    pub warnings: Vec<String>,
    pub notes: Vec<String>,
}

/// Everything `plan` decided.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Plan {
    pub dumps: Vec<PlannedDump>,
    pub notes: Vec<String>,
}

/// Its bytes, from its element count and data type.
fn tensor_bytes(t: &ScanTensor) -> Option<u64> {
    let size = DType::from_name(&t.dtype)?.element()?.size()? as u64;
    t.elements.checked_mul(size)
}

// --- what the documents point at ---------------------------------------------------------------

/// Where the second pass should look, from one group of a document.
struct Target {
    from: String,
    rank: Option<u32>,
    /// The model's real name (`None` when unknown, or a `merge` model key).
    model: Option<String>,
    step: Option<u64>,
    what: What,
    why: String,
    /// Tensor bytes the first pass read for this group (a full dump's size), when known.
    full_bytes: Option<u64>,
    files: u64,
}

enum What {
    Overwrite(Overwrite),
    /// Narrow to this op; `links` give producers without a graph, `own_bytes` its known size.
    Narrow {
        op: String,
        order: Option<usize>,
        links: Option<Addresses>,
        own_bytes: Option<u64>,
    },
    /// A wider statistics dump before this op.
    Stats {
        op: String,
    },
}

impl What {
    fn rank(&self) -> u8 {
        match self {
            What::Overwrite(_) => 0,
            What::Narrow { .. } => 1,
            What::Stats { .. } => 2,
        }
    }
}

/// `; from <the user's line> — every operator of that line: npgx dump-config new …` when the
/// scan traced the operator to the user's line (docs/source-map.md), else nothing.
fn line_hint(fx: Option<&crate::source_map::FxOrigin>) -> String {
    let Some(fx) = fx else {
        return String::new();
    };
    let Some(u) = &fx.user_line else {
        return format!("; {}", fx.summary());
    };
    let file = u.file.rsplit(['/', '\\']).next().unwrap_or(&u.file);
    let graphs = fx
        .via
        .first()
        .and_then(|f| std::path::Path::new(f).parent())
        .map(|d| d.display().to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| ".".into());
    format!(
        "; from {} — every operator of that line (each layer it built): npgx dump-config new \
         model --graphs {} --line {} -o line_dump_config.json",
        fx.summary(),
        npgx_parsers::shell::word(&graphs),
        npgx_parsers::shell::word(&format!("{file}:{}", u.line))
    )
}

fn scan_targets(from: &str, doc: ScanDocument, out: &mut Vec<Target>) {
    let overflow_pass = !doc.opdebug.is_empty();
    for g in doc.groups {
        let Some(first) = &g.first_anomaly else {
            continue;
        };
        let base = |what, why| Target {
            from: from.to_string(),
            rank: g.rank,
            model: g.model.clone(),
            step: g.step,
            what,
            why,
            full_bytes: (g.bytes > 0).then_some(g.bytes),
            files: g.files,
        };
        if let Some(w) = g.addresses.as_ref().and_then(|a| a.overwrites.first()) {
            let why = format!(
                "input {} of {} (#{}) read anomalous values at 0x{:x} that output {} of {} (#{}) had left clean: overwritten in between",
                w.consumer.index, w.consumer.op_name, w.consumer.order, w.start,
                w.producer.index, w.producer.op_name, w.producer.order
            );
            out.push(base(What::Overwrite(w.clone()), why));
            continue;
        }
        let narrow = |p: &ScanAnomaly| What::Narrow {
            op: p.tensor.op_name.clone(),
            order: Some(p.order),
            links: g.addresses.clone(),
            own_bytes: tensor_bytes(&p.tensor),
        };
        if let Some(b) = &g.first_born {
            let why = format!(
                "{} {} of {} (#{}) is anomalous while its inputs are clean: born there{}",
                b.tensor.io,
                b.tensor.index,
                b.tensor.op_name,
                b.order,
                line_hint(b.fx.as_ref())
            );
            out.push(base(narrow(b), why));
            continue;
        }
        let t = &first.tensor;
        if t.source == Source::Stats || overflow_pass {
            let pass = if overflow_pass {
                "overflow"
            } else {
                "statistics"
            };
            let why = format!(
                "the {pass} pass first saw an anomaly at {} {} of {} (#{}) and no birth",
                t.io, t.index, t.op_name, first.order
            );
            out.push(base(
                What::Stats {
                    op: t.op_name.clone(),
                },
                why,
            ));
            continue;
        }
        let why = format!(
            "the first anomaly, {} {} of {} (#{}), entered through an input: no operator of the dump was born anomalous",
            t.io, t.index, t.op_name, first.order
        );
        out.push(base(narrow(first), why));
    }
}

fn compare_targets(from: &str, doc: CompareDocument<'_>, out: &mut Vec<Target>) {
    for g in &doc.report.groups {
        let (pair, role) = match (&g.origin, &g.first_divergence) {
            (Some(o), _) => (&o.pair, "started the divergence"),
            (None, Some(d)) => (d, "is the first divergence (no origin found)"),
            (None, None) => continue,
        };
        out.push(Target {
            from: from.to_string(),
            rank: g.target.rank,
            model: g.target.model.clone(),
            step: g.target.step,
            why: format!("{} {role}", pair.op_name),
            what: What::Narrow {
                op: pair.op_name.clone(),
                order: None,
                links: None,
                own_bytes: None,
            },
            full_bytes: None,
            files: 0,
        });
    }
}

fn merge_targets(from: &str, doc: MergeReport, out: &mut Vec<Target>) {
    for s in doc.steps {
        let Some(v) = &s.verdict else { continue };
        for f in s.findings.iter().filter(|f| v.origin.contains(&f.rank)) {
            let (point, role) = match (&f.first_born, &f.first_anomaly) {
                (Some(b), _) => (b, "was born"),
                (None, Some(a)) => (a, "first appeared (no birth)"),
                (None, None) => continue,
            };
            // A point without an operator name (a shard row without one) names nothing to dump.
            let Some(op) = &point.op_name else { continue };
            out.push(Target {
                from: from.to_string(),
                rank: u32::try_from(f.rank).ok(),
                // `merge` names models by key, not by the name CANN matches.
                model: None,
                step: s.step,
                why: format!(
                    "rank {} went wrong first: the anomaly {role} in {op}",
                    f.rank
                ),
                what: What::Narrow {
                    op: op.clone(),
                    order: None,
                    links: None,
                    own_bytes: None,
                },
                full_bytes: None,
                files: 0,
            });
        }
    }
}

/// The documents plan reads.
const READERS: Readers<'static> = Readers {
    reader: "dump-config plan reads",
    what: "an npgx JSON document",
    documents: &[
        (crate::scan::SCHEMA_NAME, crate::scan::SCHEMA_VERSION),
        (crate::compare::SCHEMA_NAME, crate::compare::SCHEMA_VERSION),
        (crate::merge::SCHEMA_NAME, crate::merge::SCHEMA_VERSION),
    ],
};

/// Reads one saved document into targets, through the document's typed view.
fn read_document(path: &Path, out: &mut Vec<Target>) -> anyhow::Result<()> {
    let (doc, name) = crate::envelope::read(path, &READERS)?;
    let from = path.display().to_string();
    let bad = |e: serde_json::Error| anyhow::anyhow!("{from}: {SCHEMA_PREFIX}{name} document: {e}");
    match name {
        crate::scan::SCHEMA_NAME => {
            scan_targets(&from, ScanDocument::deserialize(&doc).map_err(bad)?, out)
        }
        crate::compare::SCHEMA_NAME => {
            compare_targets(&from, CompareDocument::deserialize(&doc).map_err(bad)?, out)
        }
        _ => merge_targets(&from, MergeReport::deserialize(&doc).map_err(bad)?, out),
    }
    Ok(())
}

// --- producers and sizes ------------------------------------------------------------------------

/// Bytes of a GE tensor descriptor: its `size`, else shape × element size.
fn desc_bytes(d: &npgx_parsers::ge_graph::model::TensorDesc) -> Option<u64> {
    if let Some(s) = d.size.filter(|&s| s > 0) {
        return u64::try_from(s).ok();
    }
    let el = DType::from_name(d.dtype.as_deref()?)?.element()?.size()? as u64;
    d.shape.as_ref()?.iter().try_fold(el, |a, &x| {
        u64::try_from(x).ok().and_then(|x| a.checked_mul(x))
    })
}

/// An op's input and output bytes from the graph's descriptors.
fn graph_op_bytes(op: &npgx_parsers::ge_graph::model::Op) -> u64 {
    op.input_desc
        .iter()
        .chain(&op.output_desc)
        .filter_map(desc_bytes)
        .sum()
}

/// `op` and its producers up to `hops` edges up the graph, nearest first.
fn graph_producers(index: &OpIndex<'_>, op: &str, hops: usize) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::from([op.to_string()]);
    let mut out = vec![op.to_string()];
    let mut queue = VecDeque::from([(op.to_string(), 0usize)]);
    while let Some((name, depth)) = queue.pop_front() {
        if depth == hops {
            continue;
        }
        let Some(r) = index.get(&name) else { continue };
        for input in r.op.data_inputs() {
            if seen.insert(input.src.clone()) {
                out.push(input.src.clone());
                queue.push_back((input.src.clone(), depth + 1));
            }
        }
    }
    out
}

/// `op` (at `order`) and its producers up to `hops` address links up, nearest first, with the
/// bytes the links show (the inputs read and the outputs written).
fn linked_producers(links: &Addresses, op: &str, order: usize, hops: usize) -> (Vec<String>, u64) {
    let mut names = vec![op.to_string()];
    let mut bytes = 0u64;
    let mut seen = HashSet::from([order]);
    let mut written = HashSet::new();
    let mut queue = VecDeque::from([(order, 0usize)]);
    while let Some((at, depth)) = queue.pop_front() {
        for l in links.links.iter().filter(|l| l.consumer.order == at) {
            bytes = bytes.saturating_add(l.consumer.bytes);
            let Some(p) = &l.producer else { continue };
            if depth < hops && written.insert((p.order, p.index)) {
                bytes = bytes.saturating_add(p.bytes);
            }
            if depth < hops && seen.insert(p.order) {
                if !names.contains(&p.op_name) {
                    names.push(p.op_name.clone());
                }
                queue.push_back((p.order, depth + 1));
            }
        }
    }
    (names, bytes)
}

/// Free bytes for an unprivileged writer on the filesystem holding `dir` (statvfs), or `None`
/// when `dir` cannot be examined.
fn free_space(dir: &Path) -> Option<u64> {
    let s = rustix::fs::statvfs(dir).ok()?;
    s.f_bavail.checked_mul(s.f_frsize)
}

/// Whether `dump_path` names a remote target (`IPv4:path`), which has no local free space.
fn is_remote(path: &str) -> bool {
    path.split_once(':')
        .is_some_and(|(ip, _)| ip.parse::<std::net::Ipv4Addr>().is_ok())
}

// --- planning ------------------------------------------------------------------------------------

/// Plans the next dump from the saved documents at `inputs` (and the GE graphs at `graphs`).
/// Nothing is written here; [`write`] does that.
pub fn plan(inputs: &[PathBuf], graphs: &[PathBuf], options: &PlanOptions) -> anyhow::Result<Plan> {
    let mut targets = Vec::new();
    for p in inputs {
        read_document(p, &mut targets)?;
    }
    let mut models = Vec::with_capacity(graphs.len());
    for g in graphs {
        let text = std::fs::read(g).with_context(|| crate::error::CannotRead::new(g))?;
        models.push(
            npgx_parsers::ge_graph::parse(&text)
                .with_context(|| format!("{} is not a readable GE graph dump", g.display()))?,
        );
    }
    let indexes: Vec<OpIndex<'_>> = models.iter().map(GeModel::index).collect();
    // Per rank the most telling target: an overwrite, else a narrowing, else a wider pass; the
    // first group in document order among equals.
    let mut chosen: BTreeMap<Option<u32>, Target> = BTreeMap::new();
    for t in targets {
        match chosen.get(&t.rank) {
            Some(c) if c.what.rank() <= t.what.rank() => {}
            _ => {
                chosen.insert(t.rank, t);
            }
        }
    }
    let mut notes = Vec::new();
    if chosen.is_empty() {
        notes.push(
            "nothing to plan: no document holds an anomaly, a divergence or an overwrite".into(),
        );
    }
    let mut dumps = Vec::new();
    for t in chosen.into_values() {
        dumps.push(plan_one(t, &models, &indexes, options)?);
    }
    Ok(Plan { dumps, notes })
}

/// What the plan of one target is made with: the GE graphs (parsed and indexed) and the
/// options, and the notes and warnings gathered while it is made.
struct Planner<'a, 'g> {
    models: &'a [GeModel],
    indexes: &'a [OpIndex<'g>],
    options: &'a PlanOptions,
    /// The bytes of every op of the graphs (what a full dump writes), when graphs were given.
    graph_full: Option<u64>,
    notes: Vec<String>,
    warnings: Vec<String>,
}

impl<'g> Planner<'_, 'g> {
    /// The op named `name` in the first graph that has it.
    fn graph_op(&self, name: &str) -> Option<npgx_parsers::ge_graph::OpRef<'g>> {
        self.indexes.iter().find_map(|i| i.get(name))
    }

    /// The watcher scene for an overwrite: the producer watched, the operators run between it
    /// and the consumer as its layer (every operator when none is known).
    fn watcher(&mut self, w: &Overwrite, t: &Target, o: &mut PresetOptions) -> Estimate {
        o.watch = vec![w.producer.op_name.clone()];
        let mut layer: Vec<String> = Vec::new();
        for b in &w.between {
            if !layer.contains(&b.op_name) && b.op_name != w.producer.op_name {
                layer.push(b.op_name.clone());
            }
        }
        if w.between_count > w.between.len() {
            self.notes.push(format!(
                "{} operators ran between {} and {}; layer lists the first {} (overlapping outputs first)",
                w.between_count,
                w.producer.op_name,
                w.consumer.op_name,
                w.between.len()
            ));
        }
        if layer.is_empty() {
            self.notes.push(format!(
                "no dumped operator ran between {} and {}: layer is left out, so the watcher checks after every operator (the writer may be on another stream, or not dumped)",
                w.producer.op_name, w.consumer.op_name
            ));
        }
        self.notes.push(
            "the watcher scene takes no dump_step and no model_name (CANN rejects them, EP0005): it watches every step; stop the run after the step that failed"
                .into(),
        );
        let checks = if layer.is_empty() {
            t.files
        } else {
            layer.len() as u64
        };
        let estimate = Estimate {
            plan_bytes: Some(checks.saturating_mul(w.producer.bytes)),
            full_bytes: t.full_bytes.or(self.graph_full),
            basis: format!(
                "the watched output ({} bytes) dumped once after each of {checks} operators",
                w.producer.bytes
            ),
            free_bytes: None,
        };
        o.layers = layer;
        estimate
    }

    /// The layer of a dump narrowed to `op` (at `order`): `op` and its producers up to
    /// `--hops` — the graphs' edges when graphs were given, else the document's address
    /// `links`, else `op` alone — with its bytes per step (`own_bytes`: `op`'s own, when known)
    /// and what that figure is based on.
    fn narrow_layer(
        &mut self,
        op: &str,
        order: Option<usize>,
        links: Option<&Addresses>,
        own_bytes: Option<u64>,
    ) -> (Vec<String>, Option<u64>, String) {
        if !self.indexes.is_empty() {
            if self.graph_op(op).is_none() {
                self.warnings.push(format!(
                    "{op} is no op of the given graph(s): its producers are not known"
                ));
            }
            let layer: Vec<String> = self
                .indexes
                .iter()
                .find(|i| i.get(op).is_some())
                .map_or_else(
                    || vec![op.to_string()],
                    |i| graph_producers(i, op, self.options.hops),
                );
            let bytes: u64 = layer
                .iter()
                .filter_map(|n| self.graph_op(n))
                .map(|r| graph_op_bytes(r.op))
                .sum();
            return (
                layer,
                Some(bytes),
                "the GE graph's tensor descriptors".to_string(),
            );
        }
        match (links, order) {
            (Some(a), Some(order)) if !a.links.is_empty() => {
                let (layer, bytes) = linked_producers(a, op, order, self.options.hops);
                let bytes = bytes.saturating_add(own_bytes.unwrap_or(0));
                (
                    layer,
                    Some(bytes),
                    "tensor sizes seen in the first pass (the producers' own inputs not seen: at least this)"
                        .to_string(),
                )
            }
            _ => {
                self.notes.push(format!(
                    "no GE graph given and no address links in the document: the dump is narrowed to {op} alone (pass --graph for its producers)"
                ));
                let basis = match own_bytes {
                    Some(_) => "the anomalous tensor seen in the first pass (at least this)",
                    None => {
                        "no tensor size in the document (pass --graph for the graph's descriptors)"
                    }
                };
                (vec![op.to_string()], own_bytes, basis.to_string())
            }
        }
    }

    /// The narrowed scene: a model dump of `op`'s layer ([`Planner::narrow_layer`]), inputs and
    /// outputs, for the target's step and model.
    fn narrowed(
        &mut self,
        t: &Target,
        (op, order): (&str, Option<usize>),
        links: Option<&Addresses>,
        own_bytes: Option<u64>,
        o: &mut PresetOptions,
    ) -> Estimate {
        let (layer, plan_bytes, basis) = self.narrow_layer(op, order, links, own_bytes);
        o.layers = layer;
        o.dump_mode = Some(DumpMode::All);
        o.dump_step = t.step.map(|s| s.to_string());
        o.model_name = t.model.clone();
        Estimate {
            plan_bytes,
            full_bytes: t.full_bytes.or(self.graph_full),
            basis,
            free_bytes: None,
        }
    }

    /// The wider statistics scene: a statistics dump of `op`'s producers when a graph names
    /// `op`, else of every operator, for the target's step and model.
    fn wider_stats(&mut self, t: &Target, op: &str, o: &mut PresetOptions) -> Estimate {
        let layer = match self.indexes.iter().find(|i| i.get(op).is_some()) {
            Some(i) => graph_producers(i, op, self.options.hops),
            None => {
                self.notes.push(format!(
                    "no GE graph names {op}: the statistics dump covers every operator of the step (pass --graph to narrow it to {op}'s producers)"
                ));
                Vec::new()
            }
        };
        o.layers = layer;
        o.dump_mode = Some(DumpMode::All);
        o.dump_step = t.step.map(|s| s.to_string());
        o.model_name = t.model.clone();
        Estimate {
            plan_bytes: None,
            full_bytes: self.graph_full,
            basis: "statistics: one CSV row per tensor, not the tensors".to_string(),
            free_bytes: None,
        }
    }
}

/// Plans the dump of one target: the scene its finding calls for, rendered to a config that
/// passes the `dump-config check` rules, its names checked against the graphs, and its
/// estimate with the free space under a local `dump_path`.
fn plan_one(
    t: Target,
    models: &[GeModel],
    indexes: &[OpIndex<'_>],
    options: &PlanOptions,
) -> anyhow::Result<PlannedDump> {
    let dump_path = options
        .dump_path
        .clone()
        .unwrap_or_else(|| preset::DEFAULT_DUMP_PATH.to_string());
    let mut p = Planner {
        models,
        indexes,
        options,
        graph_full: (!models.is_empty()).then(|| {
            models
                .iter()
                .flat_map(GeModel::ops)
                .map(|r| graph_op_bytes(r.op))
                .sum()
        }),
        notes: Vec::new(),
        warnings: Vec::new(),
    };
    let mut o = PresetOptions {
        dump_path: Some(dump_path.clone()),
        ..PresetOptions::default()
    };
    let (scene, preset, mut estimate) = match &t.what {
        What::Overwrite(w) => (Scene::Watcher, Preset::Watcher, p.watcher(w, &t, &mut o)),
        What::Narrow {
            op,
            order,
            links,
            own_bytes,
        } => {
            let e = p.narrowed(&t, (op, *order), links.as_ref(), *own_bytes, &mut o);
            (Scene::Narrowed, Preset::Model, e)
        }
        What::Stats { op } => {
            let e = p.wider_stats(&t, op, &mut o);
            (Scene::WiderStats, Preset::Stats, e)
        }
    };
    // torchair's `graph_<N>` names are the same in every run; GE's own `ge_default_<time>_<n>`
    // are not.
    if o.model_name
        .as_deref()
        .is_some_and(|m| crate::source_map::graph_id_of_model(m).is_none())
    {
        p.notes.push(
            "model_name is this run's graph name; GE names graphs ge_default_<time>_<n>, which change between runs: check it with `dump-config check --graph` on the next run's graph"
                .into(),
        );
    }
    let text = preset::render(preset, &o)?;
    super::ensure_valid(&text)?;
    if !p.models.is_empty() {
        for c in super::graph::check_names(text.as_bytes(), p.models) {
            p.warnings
                .push(format!("{} {}: {}", c.code, c.path, c.message));
        }
    }
    if !is_remote(&dump_path) {
        estimate.free_bytes = free_space(Path::new(&dump_path));
        if estimate.free_bytes.is_none() {
            p.notes.push(format!(
                "{dump_path} cannot be examined here: free space not checked"
            ));
        }
    }
    Ok(PlannedDump {
        scene,
        rank: t.rank,
        model: t.model,
        step: t.step,
        from: t.from,
        why: t.why,
        config: serde_json::from_str(&text)?,
        text,
        written: None,
        estimate,
        warnings: p.warnings,
        notes: p.notes,
    })
}

/// Where a plan goes, the one rule of the CLI and `npgx mcp`: written to `output` ([`write`]),
/// or left for the caller to print — which only one config can be: per-rank plans that differ
/// need `output` (each is written as its stem + `.rank<R>.json`), and `force` without `output`
/// is an error.
pub fn deliver(plan: &mut Plan, output: Option<&Path>, force: bool) -> anyhow::Result<()> {
    match output {
        Some(path) => write(plan, path, force),
        None if force => anyhow::bail!("force needs an output file"),
        None if plan.dumps.windows(2).any(|w| w[0].text != w[1].text) => anyhow::bail!(
            "the ranks need {} different plans: pass -o FILE (each is written as FILE's stem + \
             .rank<R>.json)",
            plan.dumps.len()
        ),
        None => Ok(()),
    }
}

/// Writes the plans: one file at `output` when every plan is the same config, else one per
/// rank (`<stem>.rank<R>.<ext>`). An existing file is replaced only with `force`.
pub fn write(plan: &mut Plan, output: &Path, force: bool) -> anyhow::Result<()> {
    let same = plan.dumps.windows(2).all(|w| w[0].text == w[1].text);
    let paths: Vec<PathBuf> = if same {
        plan.dumps.iter().map(|_| output.to_path_buf()).collect()
    } else {
        plan.dumps
            .iter()
            .map(|d| {
                let stem = output
                    .file_stem()
                    .map_or("dump_config".into(), |s| s.to_string_lossy().into_owned());
                let ext = output
                    .extension()
                    .map_or("json".into(), |s| s.to_string_lossy().into_owned());
                let rank = d.rank.map_or("unknown".to_string(), |r| r.to_string());
                output.with_file_name(format!("{stem}.rank{rank}.{ext}"))
            })
            .collect()
    };
    let mut done = HashSet::new();
    for (d, path) in plan.dumps.iter_mut().zip(paths) {
        if done.insert(path.clone()) {
            super::write_new_file(&path, &d.text, force)?;
        }
        d.written = Some(
            std::path::absolute(&path)
                .unwrap_or(path)
                .display()
                .to_string(),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statistics_pass_with_nothing_born_plans_a_wider_statistics_dump() {
        let first = serde_json::json!({"group": 0, "order": 1, "kind": "overflow",
            "kinds": ["overflow"], "op_name": "bert_gelu", "path": "x.csv", "io": "input",
            "index": 0, "dtype": "DT_FLOAT16", "shape": [8], "elements": 8, "nan": 0,
            "pos_inf": 0, "neg_inf": 0, "source": "stats"});
        let doc = ScanDocument::deserialize(serde_json::json!({
        "root": "/d", "anomalies": [first], "opdebug": [], "errors": [], "next": null,
        "summary": {"files_seen": 2, "dump_files": 2, "tensors": 8, "bytes": 0,
                    "anomalous_tensors": 1, "groups": 1, "errors": 0},
        "groups": [{
            "rank": 1, "model": "bert", "step": 3, "layout": "model", "files": 2,
            "tensors": 8, "bytes": 0, "anomalous_tensors": 1, "first_anomaly": first,
            "first_born": null
        }]}))
        .expect("a scan document");
        let mut targets = Vec::new();
        scan_targets("s.json", doc, &mut targets);
        assert_eq!(targets.len(), 1);
        let t = targets.remove(0);
        let d = plan_one(t, &[], &[], &PlanOptions::default()).expect("planned");
        assert_eq!(d.scene, Scene::WiderStats);
        let dump = &d.config["dump"];
        assert_eq!(dump["dump_data"], "stats");
        assert_eq!(dump["dump_mode"], "all");
        assert_eq!(dump["dump_step"], "3");
        // Without a graph, every op of the step: no layer.
        assert_eq!(
            dump["dump_list"],
            serde_json::json!([{"model_name": "bert"}])
        );
        assert_eq!(d.estimate.plan_bytes, None);
        assert!(
            d.why.starts_with("the statistics pass first saw"),
            "{}",
            d.why
        );
    }

    #[test]
    fn remote_paths_are_ipv4_prefixed() {
        assert!(is_remote("10.1.2.3:/data/dump"));
        assert!(!is_remote("/data/dump"));
        assert!(!is_remote("./"));
        assert!(!is_remote("host:/x"));
    }

    #[test]
    fn free_space_of_the_current_directory_is_known() {
        assert!(free_space(Path::new(".")).is_some());
        assert!(free_space(Path::new("/no/such/dir/npgx")).is_none());
    }

    #[test]
    fn free_space_is_none_where_nothing_can_be_written_or_asked() {
        // procfs has no blocks to give; a path with a NUL cannot be passed to the kernel.
        assert_eq!(free_space(Path::new("/proc")), Some(0));
        assert_eq!(free_space(Path::new("dump\0path")), None);
    }
}
