//! `triage bisect --nodes` (and after an option search that ends `not_isolated`): which FX
//! node(s), compiled by npugraph_ex, make step 5 fail or compute wrong numbers.
//!
//! Step 5's script runs with a wrapper backend (`node_backend.py`, written as `npgx_nodes.py`
//! next to each run's script and installed by one prelude line): every FX graph Dynamo hands to
//! `npugraph_ex` is split at node boundaries, the chosen nodes are compiled by the real backend
//! with the call's own options and the rest runs eagerly. The first run compiles nothing and
//! records every graph's nodes (target, input shapes / dtypes / strides from the node meta,
//! the user's source line from the node's stack trace); it must not show the symptom. The
//! items searched are the computing nodes of all graphs in execution order (graph id, then
//! node order); the whole set is step 5 itself. [`node_search::search`] then finds a minimal
//! set that still shows the symptom: the same first causal error as step 5 (the shared causal
//! engine, compared on its stable tokens: [`SameFailure`]), or outputs that differ from step 4's
//! beyond the tolerance of `--compare-outputs`. A found node's source line names the user's own
//! script (the run scripts are copies of it with a prelude on top), and the tree's byte copy
//! `scripts/original.py` beside it.
//!
//! The node names are Dynamo's (torch-level) FX nodes: the real backend compiles a chosen
//! node's forward and, through AOTAutograd, its backward, so a fault in a backward kernel is
//! found at the forward node it belongs to.
//!
//! Runs go to `bisect/nodes/run<k>/` (script, `npgx_nodes_plan.json`, `npgx_nodes_graphs.json`,
//! log, outputs); the single-op repro of each node found to `bisect/repro_g<graph>_<node>.py`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::pyedit::{CompileCall, Extras, OptionsSource, Script, StepEdit};
use serde::{Deserialize, Serialize};

use super::compare::{self, Closeness, CAPTURE_MODULE, CAPTURE_SOURCE, OUTPUTS_DIR};
use super::dumps;
use super::judge::{judge, run_like_step5, Difference, Judged, Launch, Mode, SameFailure, Verdict};
use super::layout::{Convention, Step, BISECT_DIR, ORIGINAL_SCRIPT, SCRIPTS_DIR};
use super::node_search::{self, Answer, End};
use super::runner::{Extra, Progress, StepEnd};
use super::scripts;
use crate::fx::{FxNode, SourceLine};
use crate::repro::fx_node;

/// The wrapper backend's module name and source.
pub const BACKEND_MODULE: &str = "npgx_nodes.py";
const BACKEND_SOURCE: &str = include_str!("node_backend.py");
/// The plan and the graph table next to a run's script (names fixed in `node_backend.py`).
const PLAN_FILE: &str = "npgx_nodes_plan.json";
const GRAPHS_FILE: &str = "npgx_nodes_graphs.json";
/// Under `bisect/`.
pub const NODES_DIR: &str = "nodes";
/// The line that installs the wrapper, after the seed prelude.
const INSTALL: &str = "import npgx_nodes as _npgx_nodes; _npgx_nodes.install()\n";

#[derive(Deserialize)]
struct GraphsFile {
    graphs: Vec<GraphTable>,
}

#[derive(Deserialize)]
struct GraphTable {
    graph: usize,
    nodes: Vec<FxNode>,
}

/// The documents a saved node search is read from: a `npgx.triage-run` document
/// (`bisect.nodes`) or a `npgx.triage-nodes` one (`bisect/nodes.json`).
const READERS: crate::envelope::Readers<'static> = crate::envelope::Readers {
    reader: "npgx repro --fx-node reads (triage bisect --format json, or bisect/nodes.json)",
    what: "an npgx JSON document",
    documents: &[
        (super::RUN_SCHEMA_NAME, super::RUN_SCHEMA_VERSION),
        (SCHEMA_NAME, SCHEMA_VERSION),
    ],
};

/// A saved node search (`npgx triage bisect --format json` output or `bisect/nodes.json`), for
/// `npgx repro --fx-node`; an error when it found no node.
pub fn load(file: &Path) -> anyhow::Result<NodeSearch> {
    let (doc, name) = crate::envelope::read(file, &READERS)?;
    let search = if name == SCHEMA_NAME {
        NodeSearch::deserialize(&doc)
            .with_context(|| format!("{}: not a node search result", file.display()))?
    } else {
        super::TriageRun::deserialize(&doc)
            .with_context(|| format!("{}: not a triage run document", file.display()))?
            .bisect
            .and_then(|b| b.nodes)
            .with_context(|| {
                format!(
                    "{}: the bisection made no node search (run `npgx triage bisect --nodes`)",
                    file.display()
                )
            })?
    };
    if search.found.is_empty() {
        anyhow::bail!(
            "{}: the node search found no node ({})",
            file.display(),
            search.conclusion
        );
    }
    Ok(search)
}

/// A graph the wrapper saw.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GraphSummary {
    pub graph: usize,
    /// Computing nodes.
    pub nodes: usize,
}

/// One run of the node search.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeRun {
    /// `run<k>`, the directory under `bisect/nodes/`.
    pub name: String,
    pub dir: PathBuf,
    /// The nodes compiled, per graph: `g0[0-2] g1[3]` (`none` for the recording run).
    pub compiled: String,
    /// How many nodes were compiled.
    pub nodes: usize,
    pub end: StepEnd,
    pub seconds: f64,
    pub verdict: Verdict,
    pub first_causal_error: Option<String>,
    /// `changes`: step 5's error and this run's as compared (volatile tokens replaced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difference: Option<Difference>,
    pub outputs: Option<Closeness>,
}

/// How the node search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeOutcome {
    /// A minimal set of nodes (one, a pair, …) shows the symptom.
    Isolated,
    /// Only the whole graph compiled as one shows it: no node is to blame on its own.
    WholeGraph,
    /// The symptom is there with no node compiled (or the recording run failed otherwise).
    NotReproduced,
    /// No FX graph reached npugraph_ex.
    NoGraphs,
    /// `--max-runs` ran out first: `found` shows the symptom but may not be minimal.
    BudgetExhausted,
    /// Ctrl-C: `found` shows the symptom but may not be minimal.
    Interrupted,
}

impl NodeOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeOutcome::Isolated => "isolated",
            NodeOutcome::WholeGraph => "whole_graph",
            NodeOutcome::NotReproduced => "not_reproduced",
            NodeOutcome::NoGraphs => "no_graphs",
            NodeOutcome::BudgetExhausted => "budget_exhausted",
            NodeOutcome::Interrupted => "interrupted",
        }
    }
}

/// Name of the document of a [`NodeSearch`] (`bisect/nodes.json`, schema `npgx.triage-nodes`).
pub const SCHEMA_NAME: &str = "triage-nodes";
/// Version of the `npgx.triage-nodes` document of a [`NodeSearch`] (`bisect/nodes.json`).
pub const SCHEMA_VERSION: u32 = 1;

/// The node search of one bisection.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct NodeSearch {
    pub mode: Mode,
    pub outcome: NodeOutcome,
    pub graphs: Vec<GraphSummary>,
    pub runs: Vec<NodeRun>,
    pub max_runs: usize,
    /// The nodes found (the smallest set that shows the symptom).
    pub found: Vec<FxNode>,
    /// `whole_graph`: the graph id.
    pub whole_graph: Option<usize>,
    /// The compile call's options as a Python dict literal (literal entries only), for the repro.
    pub options: String,
    /// The single-op repro scripts written.
    pub repro: Vec<PathBuf>,
    pub conclusion: String,
    pub notes: Vec<String>,
}

/// What the node search needs from the bisection.
pub struct Inputs<'a> {
    pub root: &'a Path,
    pub source: &'a str,
    pub call: &'a CompileCall,
    pub launch: &'a Launch<'a>,
    pub mode: Mode,
    /// Step 5's failure, as runs are compared with it.
    pub same: &'a SameFailure,
    pub max_runs: usize,
}

/// Runs the node search.
pub fn search(inp: &Inputs<'_>, progress: &mut dyn Progress) -> anyhow::Result<NodeSearch> {
    let (options, mut notes) = options_literal(inp.source, inp.call)?;
    let mut s = NodeSearch {
        mode: inp.mode,
        outcome: NodeOutcome::NotReproduced,
        graphs: Vec::new(),
        runs: Vec::new(),
        max_runs: inp.max_runs,
        found: Vec::new(),
        whole_graph: None,
        options,
        repro: Vec::new(),
        conclusion: String::new(),
        notes: Vec::new(),
    };
    s.notes.append(&mut notes);
    let runner = Runner::new(inp)?;

    // Run 0: nothing compiled, every graph recorded.
    let first = runner.run(0, &BTreeMap::new(), &[], progress)?;
    let verdict = first.verdict;
    s.runs.push(first);
    if verdict == Verdict::Interrupted {
        s.outcome = NodeOutcome::Interrupted;
        s.conclusion = "interrupted in the recording run: no node searched".into();
        return Ok(s);
    }
    let tables = read_graphs(&runner.dir_of(0))?;
    s.graphs = tables
        .iter()
        .map(|g| GraphSummary {
            graph: g.graph,
            nodes: g.nodes.len(),
        })
        .collect();
    let symptom_free = matches!(verdict, Verdict::Disappears | Verdict::Matches);
    if !symptom_free {
        s.outcome = NodeOutcome::NotReproduced;
        s.conclusion = format!(
            "with no FX node compiled by npugraph_ex the run still ends with `{}` — the symptom does not come from the nodes npugraph_ex compiles (look at what runs outside them, or at npugraph_ex's own setup)",
            verdict.as_str()
        );
        return Ok(s);
    }
    let items: Vec<(usize, usize)> = tables
        .iter()
        .flat_map(|g| (0..g.nodes.len()).map(move |i| (g.graph, i)))
        .collect();
    if items.is_empty() {
        s.outcome = NodeOutcome::NoGraphs;
        s.conclusion =
            "no FX graph with a computing node reached npugraph_ex: nothing to search".into();
        return Ok(s);
    }

    let budget = inp.max_runs.saturating_sub(1);
    let mut runs = Vec::new();
    let found = {
        let mut test = |set: &[usize]| -> anyhow::Result<Answer> {
            let mut select: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
            for &i in set {
                let (g, n) = items[i];
                select.entry(g).or_default().push(n);
            }
            let r = runner.run(runs.len() + 1, &select, set, progress)?;
            let answer = match r.verdict {
                Verdict::Stays | Verdict::Differs => Answer::Reproduces,
                Verdict::Interrupted => Answer::Stop,
                _ => Answer::Gone,
            };
            runs.push(r);
            Ok(answer)
        };
        node_search::search(items.len(), budget, &mut test)?
    };
    s.runs.extend(runs);
    let node_of = |i: usize| -> Option<FxNode> {
        let (g, n) = items[i];
        let table = tables.iter().find(|t| t.graph == g)?;
        let mut node = table.nodes.get(n)?.clone();
        node.graph = g;
        Some(node)
    };
    s.found = found.set.iter().filter_map(|&i| node_of(i)).collect();
    let copy = inp.root.join(SCRIPTS_DIR).join(ORIGINAL_SCRIPT);
    let user = std::path::absolute(inp.launch.script).unwrap_or_else(|_| copy.clone());
    for n in &mut s.found {
        if let Some(src) = &mut n.source {
            relocate(src, &runner.scripts, inp.source, (&user, &copy));
        }
    }
    let whole = tables.iter().find(|t| {
        t.nodes.len() >= 2
            && s.found.len() == t.nodes.len()
            && s.found.iter().all(|n| n.graph == t.graph)
    });
    s.outcome = match (found.end, whole) {
        (End::Budget, _) => NodeOutcome::BudgetExhausted,
        (End::Stopped, _) => NodeOutcome::Interrupted,
        (End::Minimal, Some(t)) => {
            s.whole_graph = Some(t.graph);
            NodeOutcome::WholeGraph
        }
        (End::Minimal, None) => NodeOutcome::Isolated,
    };
    if s.outcome == NodeOutcome::Isolated {
        attach_dumps(&mut s.found, inp.root);
        for n in &s.found {
            let path = fx_node::write(n, &s.options, &inp.root.join(BISECT_DIR))?;
            s.repro.push(path);
        }
        if s.found.len() > 1 {
            s.notes.push(
                "the nodes fail only together: each single-op repro runs one of them alone and may pass".into(),
            );
        }
    }
    s.conclusion = conclusion(&s, inp.max_runs);
    Ok(s)
}

/// The conclusion line of the node search.
fn conclusion(s: &NodeSearch, max_runs: usize) -> String {
    let symptom = match s.mode {
        Mode::Failure => "step 5's failure",
        Mode::Accuracy => "step 5's wrong numbers",
    };
    let names = || {
        s.found
            .iter()
            .map(|n| {
                let at = n.source.as_ref().map_or(String::new(), |src| {
                    format!(" at {}:{} `{}`", src.file.display(), src.line, src.code)
                });
                format!("`{}`{at}", n.label())
            })
            .collect::<Vec<_>>()
            .join(" together with ")
    };
    match s.outcome {
        NodeOutcome::Isolated if s.found.len() == 1 => format!(
            "{symptom} comes from one FX node compiled by npugraph_ex: {}; single-op repro: {}",
            names(),
            s.repro
                .iter()
                .map(|p| format!("`{}`", p.display()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        NodeOutcome::Isolated => format!(
            "{symptom} needs these {} FX nodes compiled together (no smaller set shows it): {}",
            s.found.len(),
            names()
        ),
        NodeOutcome::WholeGraph => format!(
            "{symptom} shows only when graph {} is compiled whole ({} nodes): no node or smaller set of its nodes shows it — a whole-graph problem (capture, memory, graph size), not one operator",
            s.whole_graph.unwrap_or_default(),
            s.found.len()
        ),
        NodeOutcome::BudgetExhausted => format!(
            "not narrowed down within --max-runs {max_runs}: these {} nodes show {symptom} but may not all be needed; raise --max-runs to continue",
            s.found.len()
        ),
        NodeOutcome::Interrupted => format!(
            "interrupted: these {} nodes show {symptom} but may not all be needed",
            s.found.len()
        ),
        NodeOutcome::NotReproduced | NodeOutcome::NoGraphs => s.conclusion.clone(),
    }
}

/// The call's literal options as a dict literal; entries whose value is not a plain literal are
/// left out (with a note).
fn options_literal(source: &str, call: &CompileCall) -> anyhow::Result<(String, Vec<String>)> {
    let script = Script::parse(source).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut notes = Vec::new();
    let entries = match script.options_of(call) {
        OptionsSource::Absent => Vec::new(),
        OptionsSource::Literal { entries, splat } => {
            if splat {
                notes.push("the options spread another mapping (`**`): the repro uses the literal keys only".into());
            }
            entries
        }
        OptionsSource::Expression(e) => {
            notes.push(format!(
                "the options are an expression (`{e}`): the repro passes no options"
            ));
            Vec::new()
        }
    };
    let mut kept = Vec::new();
    for (k, v) in entries {
        if is_plain_literal(v.trim()) {
            kept.push(format!(
                "{}: {}",
                crate::repro::pyquote::py_str(&k),
                v.trim()
            ));
        } else {
            notes.push(format!(
                "option `{k}` is set to an expression (`{}`): left out of the repro",
                v.trim()
            ));
        }
    }
    Ok((format!("{{{}}}", kept.join(", ")), notes))
}

/// `True`, `False`, `None`, a number, or a simple quoted string.
fn is_plain_literal(v: &str) -> bool {
    matches!(v, "True" | "False" | "None")
        || v.parse::<f64>().is_ok()
        || ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')))
            && v.len() >= 2
            && !v[1..v.len() - 1].contains(['"', '\'', '\\', '\n'])
}

/// A node's frame in a run's script points at the user's script instead (`user`, and its byte
/// copy `copy` in the tree): the run's script is the original with the prelude on top, so the
/// line is found by its text near the shifted number.
fn relocate(
    src: &mut SourceLine,
    scripts: &Path,
    original_text: &str,
    (user, copy): (&Path, &Path),
) {
    if !src.file.starts_with(scripts) {
        return;
    }
    let code = src.code.trim();
    let matching: Vec<u64> = original_text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim() == code)
        .map(|(i, _)| i as u64 + 1)
        .collect();
    let best = matching
        .iter()
        .copied()
        .filter(|&l| l <= src.line)
        .max()
        .or_else(|| {
            matching
                .iter()
                .copied()
                .min_by_key(|l| l.abs_diff(src.line))
        });
    if let Some(line) = best {
        src.line = line;
        src.file = user.to_path_buf();
        src.copy = Some(copy.to_path_buf());
    }
}

/// With `--dump-tensors`, the inputs' values dumped by step 4 (the golden run), else step 5:
/// `<producer>_device_<d>_0.pt` of the first call.
fn attach_dumps(found: &mut [FxNode], root: &Path) {
    let dirs: Vec<PathBuf> = [Step::ForceEager, Step::NpugraphEx]
        .iter()
        .filter_map(|s| dumps::find_data_dump(&root.join(s.name())))
        .collect();
    for n in found {
        for t in &mut n.inputs {
            let Some(producer) = &t.producer else {
                continue;
            };
            t.dump = dirs.iter().find_map(|d| first_dump(d, producer));
        }
    }
}

fn first_dump(dir: &Path, node: &str) -> Option<PathBuf> {
    let prefix = format!("{node}_device_");
    let mut hits: Vec<PathBuf> = fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix(&prefix))
                .is_some_and(|rest| {
                    rest.ends_with("_0.pt")
                        && rest[..rest.len() - 5].chars().all(|c| c.is_ascii_digit())
                })
        })
        .collect();
    hits.sort();
    hits.into_iter().next()
}

fn read_graphs(dir: &Path) -> anyhow::Result<Vec<GraphTable>> {
    let p = dir.join(GRAPHS_FILE);
    if !p.exists() {
        return Ok(Vec::new());
    }
    let text = fs::read_to_string(&p).with_context(|| crate::error::CannotRead::new(&p))?;
    let g: GraphsFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not the node table npgx's wrapper writes", p.display()))?;
    Ok(g.graphs)
}

/// `g0[0-2] g1[1,3]`.
fn describe(select: &BTreeMap<usize, Vec<usize>>) -> String {
    if select.is_empty() {
        return "none".into();
    }
    select
        .iter()
        .map(|(g, nodes)| {
            let mut parts: Vec<String> = Vec::new();
            let mut i = 0;
            while i < nodes.len() {
                let mut j = i;
                while j + 1 < nodes.len() && nodes[j + 1] == nodes[j] + 1 {
                    j += 1;
                }
                parts.push(if j > i {
                    format!("{}-{}", nodes[i], nodes[j])
                } else {
                    nodes[i].to_string()
                });
                i = j + 1;
            }
            format!("g{g}[{}]", parts.join(","))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Starts node runs: step 5's script with the wrapper installed.
struct Runner<'a> {
    inp: &'a Inputs<'a>,
    text: String,
    base: PathBuf,
    /// Where the runs' scripts live (their frames are relocated to the original script).
    scripts: PathBuf,
    step4_outputs: PathBuf,
}

impl<'a> Runner<'a> {
    fn new(inp: &'a Inputs<'a>) -> anyhow::Result<Runner<'a>> {
        let capture = inp.mode == Mode::Accuracy && inp.launch.capture;
        let prelude = format!("{}{INSTALL}", scripts::seed_prelude(inp.launch.seed));
        let script = Script::parse(inp.source).map_err(|e| anyhow::anyhow!("{e}"))?;
        let extras = Extras {
            wrapper: capture.then_some(compare::CAPTURE_WRAPPER),
            options: &[],
            prelude: Some(&prelude),
        };
        let text = script
            .rewrite_with(inp.call, StepEdit::Original, extras)
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .text;
        let base = inp.root.join(BISECT_DIR).join(NODES_DIR);
        Ok(Runner {
            inp,
            text,
            scripts: base.clone(),
            base,
            step4_outputs: inp.root.join(Step::ForceEager.name()).join(OUTPUTS_DIR),
        })
    }

    fn dir_of(&self, k: usize) -> PathBuf {
        self.base.join(format!("run{k:02}"))
    }

    fn run(
        &self,
        k: usize,
        select: &BTreeMap<usize, Vec<usize>>,
        set: &[usize],
        progress: &mut dyn Progress,
    ) -> anyhow::Result<NodeRun> {
        let name = format!("run{k:02}");
        let dir = self.dir_of(k);
        fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let capture = self.inp.mode == Mode::Accuracy && self.inp.launch.capture;
        let plan = serde_json::json!({ "select": select
            .iter()
            .map(|(g, n)| (g.to_string(), n.clone()))
            .collect::<BTreeMap<String, Vec<usize>>>() });
        let mut files = vec![
            (format!("{name}.py"), self.text.clone()),
            (BACKEND_MODULE.to_string(), BACKEND_SOURCE.to_string()),
            (PLAN_FILE.to_string(), plan.to_string()),
        ];
        if capture {
            files.push((CAPTURE_MODULE.to_string(), CAPTURE_SOURCE.to_string()));
        }
        for (f, text) in &files {
            let p = dir.join(f);
            crate::output::write(&p, text.as_bytes())?;
        }
        let label = format!("{BISECT_DIR}/{NODES_DIR}/{name}");
        let extra = Extra {
            capture,
            dumps: false,
            convention: Convention::Npgx,
        };
        let script = dir.join(format!("{name}.py"));
        let (_, end, seconds) =
            run_like_step5(self.inp.launch, &dir, &script, &label, extra, progress)?;
        let Judged {
            verdict,
            error,
            difference,
            outputs,
        } = judge(
            self.inp.mode,
            end,
            (&dir, &script),
            self.inp.same,
            &self.step4_outputs,
        )?;
        Ok(NodeRun {
            name,
            dir,
            compiled: describe(select),
            nodes: set.len(),
            end,
            seconds,
            verdict,
            first_causal_error: error.map(|e| e.message),
            difference,
            outputs,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selections_are_described_as_ranges_per_graph() {
        let mut s = BTreeMap::new();
        assert_eq!(describe(&s), "none");
        s.insert(0, vec![0, 1, 2, 5]);
        s.insert(2, vec![3]);
        assert_eq!(describe(&s), "g0[0-2,5] g2[3]");
    }

    #[test]
    fn only_plain_literals_reach_the_repro_options() {
        for v in ["True", "None", "64", "1e-3", "\"relaxed\"", "'global'"] {
            assert!(is_plain_literal(v), "{v}");
        }
        for v in [
            "cfg.x",
            "os.environ['A']",
            "\"a\" + b",
            "[1]",
            "'",
            "\"a\\\"\"",
        ] {
            assert!(!is_plain_literal(v), "{v}");
        }
    }

    #[test]
    fn a_frame_in_a_run_script_points_at_the_original_line() {
        let original = "import torch\n\ndef f(x):\n    y = x + 1\n    return y\n";
        let mut src = SourceLine {
            file: PathBuf::from("/t/bisect/nodes/run03/run03.py"),
            line: 18,
            function: "f".into(),
            code: "y = x + 1".into(),
            copy: None,
        };
        let to = (
            Path::new("/home/u/victim.py"),
            Path::new("/t/scripts/original.py"),
        );
        relocate(&mut src, Path::new("/t/bisect/nodes"), original, to);
        assert_eq!(src.line, 4);
        assert_eq!(src.file, PathBuf::from("/home/u/victim.py"));
        assert_eq!(src.copy, Some(PathBuf::from("/t/scripts/original.py")));
        // A frame in another file stays where it is.
        let mut other = SourceLine {
            file: PathBuf::from("/home/u/model.py"),
            line: 7,
            function: "g".into(),
            code: "y = x + 1".into(),
            copy: None,
        };
        relocate(&mut other, Path::new("/t/bisect/nodes"), original, to);
        assert_eq!(other.line, 7);
        assert_eq!(other.copy, None);
    }

    #[test]
    fn the_first_call_dump_of_a_producer_is_found() {
        let d = std::env::temp_dir().join(format!("npgx-nodes-dumps-{}", std::process::id()));
        fs::create_dir_all(&d).unwrap();
        for f in [
            "s_1_device_0_0.pt",
            "s_1_device_0_1.pt",
            "s_device_0_0.pt",
            "s_10_device_0_0.pt",
        ] {
            fs::write(d.join(f), b"x").unwrap();
        }
        assert_eq!(first_dump(&d, "s_1"), Some(d.join("s_1_device_0_0.pt")));
        assert_eq!(first_dump(&d, "s"), Some(d.join("s_device_0_0.pt")));
        assert_eq!(first_dump(&d, "t"), None);
        fs::remove_dir_all(&d).unwrap();
    }
}
