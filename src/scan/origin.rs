//! Every anomaly, first anomaly and birth of a scan traced to its FX node and the user's line
//! (issue 43): through [`crate::source_map`] for GE dumps (by GE operator) and FX-named dumps
//! (torchair's eager FX `.npy` dump, npugraph_ex's `.pt` dump, by FX node). msprobe's dumps have
//! their user's line from `stack.json` already ([`super::msprobe::attach_stacks`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use npgx_parsers::dump::path::Layout;

use super::records::{Source, TensorRecord};
use super::scan_report::ScanReport;
use crate::source_map::{self, FxOrigin, SourceMap};

/// An operator: rank, GE model, name and the directory of its files.
type OpKey = (Option<u32>, Option<String>, String, String);

/// Reads the graph texts of `graphs` and those beside `root`, and gives every finding of the
/// report its origin. Without any graph text and without `graphs`, the findings keep `fx: null`;
/// a graph text that cannot be read is an error entry.
pub fn attach(root: &Path, graphs: &[PathBuf], report: &mut ScanReport) {
    let mut seen = BTreeSet::new();
    let graphs: Vec<PathBuf> = graphs
        .iter()
        .filter(|p| seen.insert((*p).clone()))
        .cloned()
        .collect();
    let mut map = SourceMap::load(&graphs);
    map.add_near(root);
    report.errors.append(&mut map.problems);
    if map.is_empty() && graphs.is_empty() {
        return;
    }
    // One origin per operator, shared by its tensors (a NaN run taints thousands).
    let mut cache: HashMap<OpKey, Arc<FxOrigin>> = HashMap::new();
    for a in report.findings_mut() {
        let t = &a.tensor;
        if t.op.layout == Layout::Msprobe {
            continue;
        }
        let key = (
            t.op.location.rank,
            t.op.location.model.clone(),
            t.op.op_name.clone(),
            t.op.path
                .rsplit_once('/')
                .map_or("", |(d, _)| d)
                .to_string(),
        );
        let origin = cache
            .entry(key)
            .or_insert_with(|| Arc::new(origin_of(&map, t)))
            .clone();
        a.fx = Some(origin);
    }
}

/// The origin of one tensor's operator.
fn origin_of(map: &SourceMap, t: &TensorRecord) -> FxOrigin {
    let op = &t.op;
    let rank = op.location.rank;
    match t.source {
        Source::Dump | Source::Stats => map.of_ge_op(
            rank,
            op.location.model.as_deref(),
            &op.op_name,
            None,
            op.op_type.as_deref(),
        ),
        // `{node}-{target}` (torchair's eager FX dump).
        Source::Npy => match op.op_name.split_once('-') {
            Some((node, target)) => map.of_fx_node(
                rank,
                source_map::graph_id_of_path(&op.path),
                node,
                Some(target),
            ),
            None => FxOrigin::unknown(format!(
                "{}: a .npy dump not named after an FX node",
                op.op_name
            )),
        },
        // npugraph_ex: `{node}_device_{d}_{k}.pt`.
        Source::Pt => map.of_fx_node(
            rank,
            source_map::graph_id_of_path(&op.path),
            &op.op_name,
            None,
        ),
    }
}
