//! From a dumped operator to the model's source line (issue 43, docs/source-map.md): the graph
//! texts torchair and PyTorch leave on disk, read once into one map —
//! (rank, graph, GE operator) → FX node → the source frame that made the node → the user's line.
//!
//! What it reads (the grammars are [`npgx_parsers::fx_graph`] and [`npgx_parsers::ge_graph`]):
//! - torchair's graph dumps `dynamo_original_graph_<N>[_rank_<r>…].{py,txt,pbtxt}`: the `.py`
//!   form ties every GE operator to its FX node and gives the node's frame when torchair printed
//!   it there (once per line per file); the `.txt` and `.pbtxt` forms tie the last GE operator of
//!   each FX node to it (`_fx_tensor_name`) and carry `nn_module_stack` when the user recorded it;
//! - PyTorch's readable FX texts (`print_readable`, TORCH_COMPILE_DEBUG's
//!   `torch_compile_debug/…/*.txt`): a frame for every node, by node name and target.
//!
//! Every frame is the innermost of the node's stack trace (the only one these texts keep): for
//! a layer of torch (`nn.Linear`) it is torch's own file, and the user's line is then unknown —
//! said in `missing`, never guessed.

pub mod records;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use npgx_parsers::dump::name::{parse_fx_graph_name, parse_fx_tensor_name, GraphForm};
use npgx_parsers::fx_graph::{self, NoSource};
use npgx_parsers::torch_logs::python::Frame;

use crate::dump::records::FileProblem;
pub use records::{FxOrigin, SourceFrame};

/// Graph texts larger than this are not read (the largest real graph dumps are tens of MiB).
const MAX_GRAPH_FILE: u64 = 256 << 20;

/// The graph texts of a run, indexed.
#[derive(Debug, Default)]
pub struct SourceMap {
    graphs: Vec<Graph>,
    /// The readable texts' nodes by name.
    readable: HashMap<String, Vec<ReadableNode>>,
    /// Every graph text read, as its path was given or found.
    pub files: Vec<String>,
    /// The files that could not be read.
    pub problems: Vec<FileProblem>,
}

/// One torchair graph dump.
#[derive(Debug)]
struct Graph {
    file: String,
    form: GraphForm,
    id: Option<u64>,
    rank: Option<u32>,
    nodes: Vec<Node>,
    /// GE operator → its node in `nodes`.
    ops: HashMap<String, usize>,
    /// Node name → its index in `nodes`.
    by_name: HashMap<String, usize>,
    /// Every GE operator the text names, tied to a node or not (to split fused names).
    all_ops: std::collections::HashSet<String>,
    /// `.txt` form: per GE operator, the FX output each of its outputs stands for
    /// (`_fx_tensor_name`: `{node}-{target}` and the index), in output order.
    outputs: HashMap<String, FxOutputs>,
}

/// The FX output (`{node}-{target}`, index) each output of a GE operator stands for, in output
/// order; `None` for an output without `_fx_tensor_name`.
pub type FxOutputs = Vec<Option<(String, usize)>>;

/// An FX node as one text shows it.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    /// The target without `torch.ops.` (`aten.add.Tensor`), as the dumps name it.
    target: Option<String>,
    source: Option<SourceFrame>,
    /// torchair printed the node's line earlier in the file (`.py` form).
    printed_earlier: bool,
    module: Option<String>,
    /// The GE operators it created, in order.
    ge_ops: Vec<String>,
    /// Its call as printed: the target (`torch.ops.aten.add.Tensor`) and the argument text.
    call: Option<(String, String)>,
}

/// A node of a readable FX text (`print_readable`) with a frame: its target and frame, and the
/// index of its file in [`SourceMap::files`].
#[derive(Debug)]
struct ReadableNode {
    target: Option<String>,
    source: Option<SourceFrame>,
    file: usize,
    call: Option<(String, String)>,
}

/// A dumped operator as its dump tree names it ([`SourceMap::of_dumped`]).
#[derive(Clone, Copy, Debug)]
pub struct Dumped<'a> {
    pub rank: Option<u32>,
    /// The GE model (`graph_1`, `ge_default_<time>_<n>`).
    pub model: Option<&'a str>,
    pub op_name: &'a str,
    pub op_type: Option<&'a str>,
    /// Its file (any separator).
    pub path: &'a str,
    /// The pre-fusion operator its dump (or the matching) names.
    pub original: Option<&'a str>,
}

/// An FX node's call as a graph text prints it ([`SourceMap::call_of`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FxCallText {
    /// As printed: `torch.ops.aten.mm.default`.
    pub target: String,
    /// The text between the call's parentheses ([`fx_graph::parse_call`] reads it).
    pub args: String,
    /// The GE operators the node became (a torchair `.py` dump only).
    pub ge_ops: Vec<String>,
    /// The text it was read from.
    pub file: String,
    /// Printed by torchair's `.py` graph dump, which writes values with `str()`: a bare name
    /// without meta in a keyword argument is a string there, not a node
    /// ([`fx_graph::parse_call`]).
    pub torchair_py: bool,
}

/// An FX node the map found at a source line ([`SourceMap::nodes_at`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeAtLine {
    /// torchair's graph id (`N` of `graph_<N>`), when its file name gives one.
    pub graph: Option<u64>,
    pub rank: Option<u32>,
    pub node: String,
    pub ge_ops: Vec<String>,
    /// The graph dump it was read from.
    pub file: String,
    /// The source file of its frame, as the graph text spells it (`nodes_at` only).
    pub source_file: Option<String>,
}

fn target_key(t: &str) -> &str {
    t.strip_prefix("torch.ops.").unwrap_or(t)
}

fn frame(f: Frame, code: Option<String>) -> SourceFrame {
    SourceFrame {
        file: f.file,
        line: f.line,
        function: f.function,
        code,
    }
}

fn node_of(n: fx_graph::FxNode) -> Node {
    Node {
        call: n.target.clone().zip(n.args),
        printed_earlier: n.no_source == Some(NoSource::PrintedEarlier),
        source: n.source.map(|f| frame(f, n.code)),
        target: n.target.as_deref().map(|t| target_key(t).to_string()),
        name: n.name,
        module: None,
        ge_ops: n.ge_ops,
    }
}

/// `graph_<N>` (with any suffix GE adds, `graph_1_0`) → N.
pub fn graph_id_of_model(model: &str) -> Option<u64> {
    let rest = model.strip_prefix("graph_")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    rest[..end].parse().ok()
}

/// The graph id of an FX-named dump from its path: the `graph_<N>` directory of torchair's and
/// npugraph_ex's eager FX dumps (`worldsize1_global_rank0/graph_1/0/…`).
pub fn graph_id_of_path(path: &str) -> Option<u64> {
    path.split('/').rev().skip(1).find_map(|d| {
        let rest = d.strip_prefix("graph_")?;
        (!rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()))
            .then(|| rest.parse().ok())
            .flatten()
    })
}

impl SourceMap {
    /// Reads every graph text under `paths` (files or folders; a folder is searched to any
    /// depth). A file named as a torchair graph dump is read by its form; any other `.txt` or
    /// `.py` file is read when it holds a readable FX text (`# File:` comments over `torch.ops`
    /// calls), and a file given by name that is neither is a problem.
    pub fn load(paths: &[PathBuf]) -> SourceMap {
        let mut map = SourceMap::default();
        for p in paths {
            if std::fs::metadata(p).is_ok_and(|m| m.is_dir()) {
                let mut problems = Vec::new();
                let files: Vec<PathBuf> =
                    crate::walk::files(p, usize::MAX, |u| problems.push(u)).collect();
                for f in files {
                    map.add_file(&f, false);
                }
                map.problems
                    .extend(problems.into_iter().map(|u| FileProblem {
                        path: u.path.display().to_string(),
                        message: u.message,
                        offset: None,
                    }));
            } else {
                map.add_file(p, true);
            }
        }
        map
    }

    /// Adds the graph dumps a dump tree holds or has beside it: torchair writes them to
    /// `graph_dump.path` (the working directory by default) and the tensors to `dump_path`, so
    /// the dump root, its files and its parent's files are looked at (names only; a
    /// `torch_compile_debug` folder there is read whole).
    pub fn add_near(&mut self, dump_root: &Path) {
        let dir = if dump_root.is_dir() {
            dump_root
        } else {
            dump_root.parent().unwrap_or(dump_root)
        };
        let mut dirs = vec![dir.to_path_buf()];
        if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
            dirs.push(parent.to_path_buf());
        }
        let already: BTreeSet<String> = self.files.iter().cloned().collect();
        for d in dirs {
            let Ok(entries) = std::fs::read_dir(&d) else {
                continue;
            };
            let mut found: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
            found.sort();
            for p in found {
                let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
                let Some(name) = name else { continue };
                if already.contains(&p.display().to_string()) {
                    continue;
                }
                if parse_fx_graph_name(&name).is_some() && p.is_file() {
                    self.add_file(&p, true);
                } else if name == "torch_compile_debug" && p.is_dir() {
                    let more = SourceMap::load(std::slice::from_ref(&p));
                    self.merge(more);
                }
            }
        }
    }

    fn merge(&mut self, other: SourceMap) {
        let shift = self.files.len();
        self.graphs.extend(other.graphs);
        for (name, nodes) in other.readable {
            self.readable
                .entry(name)
                .or_default()
                .extend(nodes.into_iter().map(|n| ReadableNode {
                    file: n.file + shift,
                    ..n
                }));
        }
        self.files.extend(other.files);
        self.problems.extend(other.problems);
    }

    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty() && self.readable.is_empty()
    }

    /// The `.txt` graph dumps' FX outputs by GE operator, per graph: (graph id, rank, operators),
    /// for dump-compare's matching of a GE dump with an FX dump.
    pub fn fx_outputs(
        &self,
    ) -> impl Iterator<Item = (Option<u64>, Option<u32>, &HashMap<String, FxOutputs>)> {
        self.graphs
            .iter()
            .filter(|g| !g.outputs.is_empty())
            .map(|g| (g.id, g.rank, &g.outputs))
    }

    fn add_file(&mut self, path: &Path, named: bool) {
        let shown = path.display().to_string();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let graph_name = parse_fx_graph_name(&name);
        let text_like = name.ends_with(".txt") || name.ends_with(".py");
        if graph_name.is_none() && !text_like && !named {
            return;
        }
        let text = match read_text(path) {
            Ok(t) => t,
            Err(message) => {
                // A folder's other files are only looked at; a file it was asked for is read.
                if named || graph_name.is_some() {
                    self.problems.push(FileProblem {
                        path: shown,
                        message,
                        offset: None,
                    });
                }
                return;
            }
        };
        if let Some(g) = graph_name {
            let mut outputs = HashMap::new();
            let (nodes, all_ops): (Vec<Node>, Vec<String>) = match g.form {
                GraphForm::Py => {
                    let py = fx_graph::parse_torchair_py(&text);
                    let mut all = py.inputs.clone();
                    all.extend(py.nodes.iter().flat_map(|n| n.ge_ops.iter().cloned()));
                    (py.nodes.into_iter().map(node_of).collect(), all)
                }
                GraphForm::Txt => match npgx_parsers::ge_graph::parse(text.as_bytes()) {
                    Ok(model) => {
                        outputs = txt_outputs(&model);
                        (
                            txt_nodes(&model),
                            model.ops().map(|r| r.op.name.clone()).collect(),
                        )
                    }
                    Err(e) => {
                        self.problems.push(FileProblem {
                            path: shown,
                            message: format!("not a readable torchair graph dump: {e}"),
                            offset: None,
                        });
                        return;
                    }
                },
                GraphForm::Pbtxt => {
                    let ops = fx_graph::parse_pbtxt(&text);
                    let all = ops.iter().map(|o| o.name.clone()).collect();
                    (pbtxt_nodes(&ops), all)
                }
            };
            if nodes.is_empty() && all_ops.is_empty() {
                // Named as a graph dump, yet not one operator in it: empty, cut, or another
                // file. (Operators without FX nodes are a graph traced without stack traces.)
                self.problems.push(FileProblem {
                    path: shown.clone(),
                    message: "a torchair graph dump by its name, but it holds no operator and \
                              no FX node (empty or cut short?)"
                        .into(),
                    offset: None,
                });
            }
            let (mut ops, mut by_name) = (HashMap::new(), HashMap::new());
            for (i, n) in nodes.iter().enumerate() {
                for op in &n.ge_ops {
                    ops.entry(op.clone()).or_insert(i);
                    // Dump files (and what is matched by them) carry the name sanitised.
                    ops.entry(npgx_parsers::dump::name::sanitise(op))
                        .or_insert(i);
                }
                by_name.entry(n.name.clone()).or_insert(i);
            }
            self.graphs.push(Graph {
                file: shown.clone(),
                form: g.form,
                id: g.graph_id,
                rank: g.rank,
                nodes,
                ops,
                by_name,
                all_ops: all_ops.into_iter().collect(),
                outputs,
            });
            self.files.push(shown);
            return;
        }
        if is_readable(&text) {
            let file = self.files.len();
            for n in fx_graph::parse_readable(&text).into_iter().map(node_of) {
                self.readable.entry(n.name).or_default().push(ReadableNode {
                    target: n.target,
                    source: n.source,
                    file,
                    call: n.call,
                });
            }
            self.files.push(shown);
        } else if named {
            self.problems.push(FileProblem {
                path: shown,
                message: "neither a torchair graph dump (dynamo_original_graph_*.py|txt|pbtxt) \
                          nor a readable FX graph (print_readable with # File: comments)"
                    .into(),
                offset: None,
            });
        }
    }

    /// The graphs an operator of `rank` in GE model `model` may come from: the rank's (and those
    /// whose file names no rank), narrowed to graph `N` when the model is `graph_<N>` and a dump
    /// of that graph was read.
    fn candidates(&self, rank: Option<u32>, graph: Option<u64>) -> Vec<&Graph> {
        let of_rank: Vec<&Graph> = self
            .graphs
            .iter()
            .filter(|g| g.rank.is_none() || rank.is_none() || g.rank == rank)
            .collect();
        match graph {
            Some(n) if of_rank.iter().any(|g| g.id == Some(n)) => {
                of_rank.into_iter().filter(|g| g.id == Some(n)).collect()
            }
            _ => of_rank,
        }
    }

    /// Where GE operator `op` (of `rank`, in GE model `model`; `original` is the pre-fusion name
    /// its dump records, `op_type` its type) came from.
    pub fn of_ge_op(
        &self,
        rank: Option<u32>,
        model: Option<&str>,
        op: &str,
        original: Option<&str>,
        op_type: Option<&str>,
    ) -> FxOrigin {
        if self.graphs.is_empty() {
            return FxOrigin::unknown(
                "no torchair graph dump read (config.debug.graph_dump; --graphs PATH)",
            );
        }
        let wanted = model.and_then(graph_id_of_model);
        if let Some(n) = wanted {
            if !self.graphs.iter().any(|g| g.id == Some(n)) {
                return FxOrigin::unknown(format!("no graph dump for graph_{n}"));
            }
        }
        let graphs = self.candidates(rank, wanted);
        let mut via = Vec::new();
        let mut found = find_op(&graphs, op);
        if found.is_empty() {
            if let Some(orig) = original.filter(|o| *o != op) {
                found = find_op(&graphs, orig);
                if !found.is_empty() {
                    via.push(format!("fused: resolved through original_op {orig}"));
                }
            }
        }
        if found.is_empty() {
            // GE names a fused operator by joining the names of those it fused (msprobe's
            // torchair compare splits them the same way); its outputs are the last one's.
            for g in &graphs {
                if let Some(parts) = split_fused(g, op) {
                    if let Some(last) = parts.last() {
                        found = find_op(&[*g], last);
                        via.push(format!("fused: {op} = {}", parts.join(" + ")));
                        break;
                    }
                }
            }
        }
        let (g, n) = match found.as_slice() {
            [] => {
                let inserted = matches!(
                    op_type.unwrap_or(op.split('_').next().unwrap_or(op)),
                    "Cast" | "TransData" | "TransDataRNN" | "MemSet" | "Identity" | "NetOutput"
                );
                let mut o = FxOrigin::unknown(if inserted {
                    format!("GE-inserted: {op} has no FX origin")
                } else {
                    format!(
                        "{op} is in no graph dump read ({} of them): inserted or renamed by GE's passes",
                        graphs.len()
                    )
                });
                // The graph it ran in is known all the same.
                o.graph = wanted.map(|n| format!("graph_{n}"));
                return o;
            }
            [one] => *one,
            many => {
                let first = many[0];
                let same = many
                    .iter()
                    .all(|(g, n)| g.nodes[*n].name == first.0.nodes[first.1].name);
                if !same {
                    let names: BTreeSet<String> = many.iter().map(|(g, _)| label(g)).collect();
                    return FxOrigin::unknown(format!(
                        "{op} is in {} graphs ({}) and the dump's model name does not say which",
                        names.len(),
                        names.into_iter().collect::<Vec<_>>().join(", ")
                    ));
                }
                first
            }
        };
        via.insert(0, g.file.clone());
        self.resolve(g, &g.nodes[n], via)
    }

    /// Where a dumped operator came from, whichever way its dump names it: by FX node for
    /// torchair's eager FX dump (`{node}-{target}.…npy`) and npugraph_ex's (`{node}_device_….pt`),
    /// by GE operator otherwise (GE dumps, statistics, `.npy` converted from GE dumps). The one
    /// rule of dump-scan and dump-compare.
    pub fn of_dumped(&self, d: &Dumped<'_>) -> FxOrigin {
        let path = d.path.replace('\\', "/");
        let graph = graph_id_of_path(&path);
        if path.ends_with(".npy") {
            if let Some((node, target)) = d.op_name.split_once('-') {
                return self.of_fx_node(d.rank, graph, node, Some(target));
            }
        }
        if path.ends_with(".pt") {
            return self.of_fx_node(d.rank, graph, d.op_name, None);
        }
        self.of_ge_op(d.rank, d.model, d.op_name, d.original, d.op_type)
    }

    /// Where FX node `node` (with `target` when the dump names it) of `rank` came from: an
    /// FX-named dump (torchair's eager FX dump, npugraph_ex's `.pt` dump), in torchair graph
    /// `graph` when its path says.
    pub fn of_fx_node(
        &self,
        rank: Option<u32>,
        graph: Option<u64>,
        node: &str,
        target: Option<&str>,
    ) -> FxOrigin {
        if self.is_empty() {
            return FxOrigin::unknown(
                "no graph text read (torchair graph_dump, TORCH_COMPILE_DEBUG; --graphs PATH)",
            );
        }
        let fits = |n: &Node| {
            n.name == node
                && match (target, &n.target) {
                    (Some(t), Some(nt)) => target_key(t) == nt,
                    _ => true,
                }
        };
        // A node of that name with another target: (its target, the text).
        let mut other_target: Option<(String, String)> = None;
        for g in self.candidates(rank, graph) {
            let Some(n) = g.by_name.get(node).map(|&i| &g.nodes[i]) else {
                continue;
            };
            if fits(n) {
                return self.resolve(g, n, vec![g.file.clone()]);
            }
            if other_target.is_none() {
                other_target = n.target.clone().map(|t| (t, g.file.clone()));
            }
        }
        // No graph dump names it: the readable texts alone.
        let frames = self.readable_frames(node, target.map(target_key));
        let mut o = FxOrigin {
            fx_node: Some(node.to_string()),
            fx_target: target.map(|t| target_key(t).to_string()),
            ..FxOrigin::default()
        };
        match frames.as_slice() {
            [] => o.missing.push(match other_target {
                Some((t, file)) => format!(
                    "{file} names FX node {node} with target {t}, the dump {}: not the same node \
                     (a graph text of another run?)",
                    target.map_or("none", target_key)
                ),
                None => format!("no graph text read names FX node {node}"),
            }),
            [(f, file)] => {
                o.via.push(file.clone());
                o.source = Some(f.clone());
            }
            many => o.missing.push(format!(
                "{} readable FX texts give FX node {node} different lines",
                many.len()
            )),
        }
        finish(o)
    }

    /// The distinct frames the readable texts give a node of that name (and target).
    fn readable_frames(&self, node: &str, target: Option<&str>) -> Vec<(SourceFrame, String)> {
        let mut out: Vec<(SourceFrame, String)> = Vec::new();
        for n in self.readable.get(node).into_iter().flatten() {
            let target_fits = match (target, &n.target) {
                (Some(t), Some(nt)) => t == nt,
                _ => true,
            };
            let Some(source) = n.source.as_ref().filter(|_| target_fits) else {
                continue;
            };
            if !out.iter().any(|(f, _)| f == source) {
                let file = self.files.get(n.file).cloned().unwrap_or_default();
                out.push((source.clone(), file));
            }
        }
        out
    }

    /// The origin of node `n` of graph `g`: its frame from the graph text itself, else from the
    /// other forms of the same graph, else from the readable texts.
    fn resolve(&self, g: &Graph, n: &Node, mut via: Vec<String>) -> FxOrigin {
        let mut o = FxOrigin {
            graph: g.id.map(|i| format!("graph_{i}")),
            fx_node: Some(n.name.clone()),
            fx_target: n.target.clone(),
            module: n.module.clone(),
            ..FxOrigin::default()
        };
        let mut printed_earlier = n.printed_earlier;
        let mut source = n.source.clone();
        // The same graph in another form (`.py` beside `.txt`).
        for other in self
            .graphs
            .iter()
            .filter(|o| !std::ptr::eq(*o, g) && o.id == g.id && o.rank == g.rank)
        {
            if let Some(m) = other.by_name.get(&n.name).map(|&i| &other.nodes[i]) {
                if source.is_none() && m.source.is_some() {
                    source = m.source.clone();
                    via.push(other.file.clone());
                }
                printed_earlier |= m.printed_earlier;
                if o.module.is_none() {
                    o.module = m.module.clone();
                }
                if o.fx_target.is_none() {
                    o.fx_target = m.target.clone();
                }
            }
        }
        if source.is_none() {
            match self
                .readable_frames(&n.name, o.fx_target.as_deref())
                .as_slice()
            {
                [] => o.missing.push(if printed_earlier {
                    format!(
                        "torchair printed {}'s line earlier in {} (once per file), and no \
                         readable FX text names the node (TORCH_COMPILE_DEBUG=1)",
                        n.name, g.file
                    )
                } else if g.form == GraphForm::Py {
                    format!("no graph text read gives {}'s source line", n.name)
                } else {
                    format!(
                        "{} records no source lines (a .{} graph dump): dump the graph as .py \
                         (graph_dump.type = \"py\") or read TORCH_COMPILE_DEBUG=1's texts",
                        g.file,
                        if g.form == GraphForm::Txt {
                            "txt"
                        } else {
                            "pbtxt"
                        }
                    )
                }),
                [(f, file)] => {
                    source = Some(f.clone());
                    via.push(file.clone());
                }
                many => o.missing.push(format!(
                    "{} readable FX texts give {} different lines",
                    many.len(),
                    n.name
                )),
            }
        }
        o.source = source;
        o.via = via;
        finish(o)
    }

    /// FX node `node`'s call as a graph text prints it (for a repro of the node): from the
    /// torchair `.py` dump of its graph, else from the readable texts when they all print it
    /// alike. `None` when no text read prints it.
    pub fn call_of(
        &self,
        rank: Option<u32>,
        graph: Option<u64>,
        node: &str,
        target: Option<&str>,
    ) -> Option<FxCallText> {
        let fits = |t: &Option<String>| match (target.map(target_key), t) {
            (Some(want), Some(have)) => want == have,
            _ => true,
        };
        for g in self.candidates(rank, graph) {
            if let Some(n) = g.by_name.get(node).map(|&i| &g.nodes[i]) {
                if let Some((t, args)) = n.call.as_ref().filter(|_| fits(&n.target)) {
                    return Some(FxCallText {
                        target: t.clone(),
                        args: args.clone(),
                        ge_ops: n.ge_ops.clone(),
                        file: g.file.clone(),
                        torchair_py: g.form == GraphForm::Py,
                    });
                }
            }
        }
        let mut calls = self
            .readable
            .get(node)
            .into_iter()
            .flatten()
            .filter(|n| fits(&n.target))
            .filter_map(|n| n.call.as_ref().map(|c| (c, n.file)));
        let (first, file) = calls.next()?;
        if calls.any(|(c, _)| c != first) {
            return None;
        }
        Some(FxCallText {
            target: first.0.clone(),
            args: first.1.clone(),
            ge_ops: Vec::new(),
            file: self.files.get(file).cloned().unwrap_or_default(),
            torchair_py: false,
        })
    }

    /// The FX nodes whose source is line `line` of a file whose path ends with `file` (a name,
    /// or a path's tail): each with the GE operators it became, in every graph read. `unsure`
    /// gets the nodes whose line torchair printed earlier in the file and that no readable text
    /// places: they may come from that line too.
    pub fn nodes_at(&self, file: &str, line: u32, unsure: &mut Vec<NodeAtLine>) -> Vec<NodeAtLine> {
        let at = |s: &SourceFrame| s.line == line && path_ends_with(&s.file, file);
        let mut out = Vec::new();
        for g in &self.graphs {
            for n in &g.nodes {
                let o = self.resolve(g, n, Vec::new());
                let hit = NodeAtLine {
                    graph: g.id,
                    rank: g.rank,
                    node: n.name.clone(),
                    ge_ops: n.ge_ops.clone(),
                    file: g.file.clone(),
                    source_file: o.source.as_ref().map(|s| s.file.clone()),
                };
                match &o.source {
                    Some(s) if at(s) => out.push(hit),
                    None if n.printed_earlier => unsure.push(hit),
                    _ => {}
                }
            }
        }
        out
    }

    /// The FX nodes named `node`, in every graph dump read.
    pub fn nodes_named(&self, node: &str) -> Vec<NodeAtLine> {
        self.graphs
            .iter()
            .flat_map(|g| {
                g.nodes
                    .iter()
                    .filter(|n| n.name == node)
                    .map(|n| NodeAtLine {
                        graph: g.id,
                        rank: g.rank,
                        node: n.name.clone(),
                        ge_ops: n.ge_ops.clone(),
                        file: g.file.clone(),
                        source_file: None,
                    })
            })
            .collect()
    }
}

/// `file` is the whole path or its tail at a `/`.
fn path_ends_with(path: &str, file: &str) -> bool {
    let file = file.trim_start_matches("./");
    path == file
        || path
            .strip_suffix(file)
            .is_some_and(|head| head.ends_with('/') || head.ends_with('\\'))
}

/// Sets the user's line from the source frame, or says why there is none.
fn finish(mut o: FxOrigin) -> FxOrigin {
    match &o.source {
        Some(s) => {
            if s.is_library() {
                o.missing.push(format!(
                    "the recorded frame is a library's ({}:{}); graph texts keep the innermost \
                     frame only",
                    s.file, s.line
                ));
            } else {
                o.user_line = Some(s.clone());
            }
        }
        None if o.fx_node.is_some() && o.missing.is_empty() => {
            o.missing
                .push("no source line recorded for the node".into());
        }
        None => {}
    }
    o
}

fn label(g: &Graph) -> String {
    g.id.map_or_else(|| g.file.clone(), |i| format!("graph_{i}"))
}

/// `op` as a concatenation of two or more operator names of `g`, longest name first at each
/// step; `None` when it is not one.
fn split_fused(g: &Graph, op: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut rest = op;
    while !rest.is_empty() {
        let longest = g
            .all_ops
            .iter()
            .filter(|k| !k.is_empty() && k.len() < op.len() && rest.starts_with(k.as_str()))
            .max_by_key(|k| k.len())?;
        parts.push(longest.clone());
        rest = &rest[longest.len()..];
    }
    (parts.len() >= 2).then_some(parts)
}

fn find_op<'a>(graphs: &[&'a Graph], op: &str) -> Vec<(&'a Graph, usize)> {
    graphs
        .iter()
        .filter_map(|g| g.ops.get(op).map(|&n| (*g, n)))
        .collect()
}

/// The FX nodes of a `.txt` graph dump: one per `_fx_tensor_name` prefix, with the GE operators
/// that carry it and the `nn_module_stack` of those operators.
fn txt_nodes(model: &npgx_parsers::ge_graph::GeModel) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for r in model.ops() {
        let module =
            r.op.attrs
                .get_str("nn_module_stack")
                .and_then(fx_graph::module_path);
        let fx: Vec<&str> =
            r.op.output_desc
                .iter()
                .filter_map(|d| d.attrs.get_str("_fx_tensor_name"))
                .collect();
        link(&mut nodes, &mut by_name, &r.op.name, &fx, module);
    }
    nodes
}

/// Per GE operator of a `.txt` graph dump with any `_fx_tensor_name`, the FX output of each of
/// its outputs.
fn txt_outputs(model: &npgx_parsers::ge_graph::GeModel) -> HashMap<String, FxOutputs> {
    let mut out = HashMap::new();
    for r in model.ops() {
        let outputs: FxOutputs =
            r.op.output_desc
                .iter()
                .map(|d| d.fx_tensor().map(|(n, i)| (n.to_string(), i)))
                .collect();
        if outputs.iter().any(Option::is_some) {
            out.entry(r.op.name.clone()).or_insert(outputs);
        }
    }
    out
}

fn pbtxt_nodes(ops: &[fx_graph::PbtxtOp]) -> Vec<Node> {
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_name: HashMap<String, usize> = HashMap::new();
    for op in ops {
        let fx: Vec<&str> = op.fx_tensors.iter().map(String::as_str).collect();
        link(&mut nodes, &mut by_name, &op.name, &fx, op.module.clone());
    }
    nodes
}

/// Ties GE operator `op` to the FX node(s) its `_fx_tensor_name` values name.
fn link(
    nodes: &mut Vec<Node>,
    by_name: &mut HashMap<String, usize>,
    op: &str,
    fx_tensors: &[&str],
    module: Option<String>,
) {
    for t in fx_tensors {
        let Some((fx_op, _)) = parse_fx_tensor_name(t) else {
            continue;
        };
        let (name, target) = match fx_op.split_once('-') {
            Some((n, t)) => (n, Some(t.to_string())),
            None => (fx_op, None),
        };
        let i = *by_name.entry(name.to_string()).or_insert_with(|| {
            nodes.push(Node {
                call: None,
                name: name.to_string(),
                target,
                source: None,
                printed_earlier: false,
                module: None,
                ge_ops: Vec::new(),
            });
            nodes.len() - 1
        });
        let n = &mut nodes[i];
        if !n.ge_ops.iter().any(|o| o == op) {
            n.ge_ops.push(op.to_string());
        }
        if n.module.is_none() {
            n.module = module.clone();
        }
    }
}

/// Whether a text is PyTorch's readable FX form: a `# File:` comment and a `torch.ops` call.
fn is_readable(text: &str) -> bool {
    text.contains("# File: ") && text.contains("torch.ops.")
}

fn read_text(path: &Path) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("cannot read: {e}"))?
        .len();
    if len > MAX_GRAPH_FILE {
        return Err(format!(
            "{len} bytes: larger than a graph text ({MAX_GRAPH_FILE} at most), not read"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    Ok(match String::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_and_path_graph_ids() {
        assert_eq!(graph_id_of_model("graph_1"), Some(1));
        assert_eq!(graph_id_of_model("graph_12_0"), Some(12));
        assert_eq!(graph_id_of_model("ge_default_20240101_1"), None);
        assert_eq!(graph_id_of_model("graph_"), None);
        assert_eq!(
            graph_id_of_path(
                "worldsize1_global_rank0/graph_3/0/add-aten.add.Tensor.OUTPUT.0.1.npy"
            ),
            Some(3)
        );
        assert_eq!(graph_id_of_path("graph_3"), None);
        assert_eq!(graph_id_of_path("a/graph_x/f.npy"), None);
    }

    /// A graph dump in a scratch folder, read back.
    fn map_of(name: &str, text: &str) -> SourceMap {
        let dir = std::env::temp_dir().join(format!(
            "npgx-source-map-{}-{}",
            std::process::id(),
            name.len()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), text).unwrap();
        let map = SourceMap::load(std::slice::from_ref(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        map
    }

    #[test]
    fn fused_and_inserted_operators() {
        let map = map_of(
            "dynamo_original_graph_3_rank_0_pid_1_ts_20250101000000000000.txt",
            r#"name: "graph_3"
op { name: "layer0/MatMul" type: "MatMul"
  output_desc { attr { key: "_fx_tensor_name" value { s: "mm-aten.mm.default.OUTPUT.0" } } } }
op { name: "layer0/Add" type: "Add"
  output_desc { attr { key: "_fx_tensor_name" value { s: "add-aten.add.Tensor.OUTPUT.0" } } } }
op { name: "Mul_1" type: "Mul" }
op { name: "Add_2" type: "Add"
  output_desc { attr { key: "_fx_tensor_name" value { s: "add_1-aten.add.Tensor.OUTPUT.0" } } } }
"#,
        );
        assert!(map.problems.is_empty(), "{:?}", map.problems);
        // Through the dump's original_op (its name as dump files carry it).
        let o = map.of_ge_op(
            Some(0),
            Some("graph_3"),
            "fused_MatMulAdd",
            Some("layer0_Add"),
            Some("MatMulV3"),
        );
        assert_eq!(o.fx_node.as_deref(), Some("add"), "{o:?}");
        assert!(
            o.via.iter().any(|v| v.contains("original_op layer0_Add")),
            "{o:?}"
        );
        // By name: GE joined the names of what it fused; the outputs are the last one's.
        let o = map.of_ge_op(Some(0), Some("graph_3"), "Mul_1Add_2", None, None);
        assert_eq!(o.fx_node.as_deref(), Some("add_1"), "{o:?}");
        assert!(
            o.via
                .iter()
                .any(|v| v == "fused: Mul_1Add_2 = Mul_1 + Add_2"),
            "{o:?}"
        );
        // GE's own operators, and a graph that was not dumped.
        let o = map.of_ge_op(
            Some(0),
            Some("graph_3"),
            "trans_TransData_7",
            None,
            Some("TransData"),
        );
        assert!(o.missing[0].starts_with("GE-inserted"), "{o:?}");
        assert_eq!(o.graph.as_deref(), Some("graph_3"), "the graph it ran in");
        let o = map.of_ge_op(Some(0), Some("graph_4"), "Add_2", None, None);
        assert_eq!(o.missing, ["no graph dump for graph_4"]);
        // .txt dumps keep no lines: said, not guessed.
        let o = map.of_ge_op(Some(0), Some("graph_3_0"), "Add_2", None, None);
        assert!(
            o.source.is_none() && o.missing[0].contains("records no source lines"),
            "{o:?}"
        );
    }

    #[test]
    fn a_node_of_another_target_is_not_taken_and_said() {
        let map = map_of(
            "dynamo_original_graph_1_rank_0_pid_1_ts_20250101000000000000.py",
            "# File \"/m.py\", line 3, in forward    y = x @ w\n\
             ## FX Code: mm_1: torch.float32[2, 2]npu:0 = torch.ops.aten.bmm.default(x: torch.float32[2, 2]npu:0, w)\n\
             BatchMatMul_0 = ge.BatchMatMul(x_0, w_0, node_name=\"BatchMatMul\")\n",
        );
        let o = map.of_fx_node(Some(0), Some(1), "mm_1", Some("aten.mm.default"));
        assert_eq!(o.source, None);
        assert!(
            o.missing[0].contains("with target aten.bmm.default, the dump aten.mm.default"),
            "{o:?}"
        );
        let call = map
            .call_of(Some(0), Some(1), "mm_1", Some("aten.bmm.default"))
            .expect("the call");
        assert_eq!(
            (call.target.as_str(), call.torchair_py, call.ge_ops.len()),
            ("torch.ops.aten.bmm.default", true, 1)
        );
        assert_eq!(
            map.call_of(Some(0), Some(1), "mm_1", Some("aten.mm.default")),
            None
        );
    }

    #[test]
    fn two_graphs_with_the_same_operator_name() {
        let dir = std::env::temp_dir().join(format!("npgx-source-map-two-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (g, node, line) in [(1, "mm", 12), (2, "bmm", 30)] {
            std::fs::write(
                dir.join(format!("dynamo_original_graph_{g}_rank_0_pid_1_ts_1.py")),
                format!(
                    "# File \"/m.py\", line {line}, in forward    y = f(x)\n\
                     ## FX Code: {node}: torch.float32[2]npu:0 = torch.ops.aten.{node}.default(x)\n\
                     MatMulV2_0 = ge.MatMulV2(x_0, x_0, node_name=\"MatMulV2\")\n"
                ),
            )
            .unwrap();
        }
        let map = SourceMap::load(std::slice::from_ref(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        // The dump's model names the graph.
        let o = map.of_ge_op(Some(0), Some("graph_2"), "MatMulV2", None, None);
        assert_eq!(
            (
                o.fx_node.as_deref(),
                o.graph.as_deref(),
                o.source.map(|s| s.line)
            ),
            (Some("bmm"), Some("graph_2"), Some(30))
        );
        // A model name without a graph id: not guessed.
        let o = map.of_ge_op(Some(0), Some("ge_default_1"), "MatMulV2", None, None);
        assert_eq!(o.fx_node, None);
        assert!(o.missing[0].contains("is in 2 graphs"), "{o:?}");
    }

    #[test]
    fn an_empty_graph_dump_is_a_problem_named_by_its_file() {
        let map = map_of("dynamo_original_graph_7_rank_0_pid_1_ts_1.py", "");
        assert_eq!(map.problems.len(), 1, "{:?}", map.problems);
        assert!(
            map.problems[0]
                .path
                .ends_with("dynamo_original_graph_7_rank_0_pid_1_ts_1.py")
                && map.problems[0].message.contains("no FX node"),
            "{:?}",
            map.problems
        );
    }

    #[test]
    fn path_tails() {
        assert!(path_ends_with("/home/u/model.py", "model.py"));
        assert!(path_ends_with("/home/u/model.py", "u/model.py"));
        assert!(path_ends_with("/home/u/model.py", "/home/u/model.py"));
        assert!(!path_ends_with("/home/u/mymodel.py", "model.py"));
    }
}
