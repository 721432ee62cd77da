//! The accuracy hand-off to `dump-compare`.
//!
//! When a tree is routed to accuracy and step 4 (`force_eager`, the golden run) and step 5
//! (npugraph_ex, the target) each hold npugraph_ex data dumps — `dump_tensor_data=True` with
//! `data_dump_dir` inside the step directory leaves `worldsize<N>_global_rank<r>/<fxnode>_device_<d>_<count>.pt`
//! there — the two are compared with the dump-compare engine, and the analysis names the operator
//! where step 5 first diverges and the one that started it. Nothing is written into the tree.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::compare::{self, CompareOptions, Pair};

/// How deep below a step directory a data dump tree is looked for.
const SEARCH_DEPTH: usize = 4;

/// What the comparison of the two steps' data dumps found.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DumpComparison {
    /// Step 4's data dump (golden): its `worldsize*` directory, or their parent for several ranks.
    pub golden: PathBuf,
    /// The same for step 5 (target).
    pub target: PathBuf,
    pub pairs: u64,
    pub failed: u64,
    pub unmatched: u64,
    pub errors: u64,
    /// The first FX node (in step 5's order) whose output differs from step 4.
    pub first_divergence: Option<DivergentNode>,
    /// The first FX node whose output differs while all its compared inputs match.
    pub origin: Option<DivergentNode>,
    /// How the origin was decided (`inputs`, `graph`, `none`).
    pub origin_evidence: Option<String>,
    /// The command to run next (`npgx repro --path accuracy --op …`) or to see every pair.
    pub next: Vec<String>,
}

/// One operator of the comparison.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct DivergentNode {
    pub op_name: String,
    pub tensor: String,
    pub cosine: Option<f64>,
    pub max_rel: Option<f64>,
}

impl DivergentNode {
    fn of(p: &Pair) -> DivergentNode {
        DivergentNode {
            op_name: p.op_name.clone(),
            tensor: format!("{} {}", p.io, p.index),
            cosine: p.metrics.as_ref().and_then(|m| m.cosine),
            max_rel: p.metrics.as_ref().and_then(|m| m.max_rel),
        }
    }
}

/// What to compare below `step_dir`: its npugraph_ex data dump. One `worldsize*_global_rank*`
/// directory is compared on its own (so that nothing else in the step directory — captured
/// outputs, say — joins the comparison); several ranks are compared through their common parent.
pub fn find_data_dump(step_dir: &Path) -> Option<PathBuf> {
    let ranks: Vec<PathBuf> = crate::walk::dirs(step_dir, SEARCH_DEPTH, |_| {})
        .filter(|d| {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            name.starts_with("worldsize")
                && name.contains("_global_rank")
                && std::fs::read_dir(d).is_ok_and(|mut it| {
                    it.any(|f| f.is_ok_and(|f| f.file_name().to_string_lossy().ends_with(".pt")))
                })
        })
        .collect();
    match ranks.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [first, ..] => first.parent().map(Path::to_path_buf),
    }
}

/// Compares step 4's data dumps (golden) with step 5's (target). `Ok(None)` when either step has
/// none.
pub fn compare_steps(step4: &Path, step5: &Path) -> anyhow::Result<Option<DumpComparison>> {
    let (Some(golden), Some(target)) = (find_data_dump(step4), find_data_dump(step5)) else {
        return Ok(None);
    };
    let report = compare::compare(&golden, &target, &CompareOptions::default(), &|_| {})?;
    let first = report
        .groups
        .iter()
        .find_map(|g| g.first_divergence.as_ref());
    let origin = report.groups.iter().find_map(|g| g.origin.as_ref());
    let mut next = Vec::new();
    if let Some(o) = origin {
        next.push(format!(
            "npgx repro --path accuracy --op {}",
            o.pair.op_name
        ));
    }
    next.push(format!(
        "npgx dump-compare {} {}",
        golden.display(),
        target.display()
    ));
    Ok(Some(DumpComparison {
        pairs: report.summary.pairs,
        failed: report.summary.failed,
        unmatched: report.summary.unmatched_golden + report.summary.unmatched_target,
        errors: report.summary.errors,
        first_divergence: first.map(DivergentNode::of),
        origin: origin.map(|o| DivergentNode::of(&o.pair)),
        origin_evidence: origin.map(|o| {
            serde_json::to_value(o.evidence)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default()
        }),
        next,
        golden,
        target,
    }))
}
