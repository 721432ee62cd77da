//! Every anomaly, first anomaly and birth of a scan traced to its FX node and the user's line
//! (issue 43): through [`crate::source_map`] for GE dumps (by GE operator) and FX-named dumps
//! (torchair's eager FX `.npy` dump, npugraph_ex's `.pt` dump, by FX node). msprobe's dumps have
//! theirs from `stack.json` ([`super::msprobe::attach_stacks`]).

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use npgx_parsers::dump::path::Layout;

use super::records::TensorRecord;
use crate::dump::records::FileProblem;
use crate::source_map::{self, FxOrigin, SourceMap};

/// An operator: rank, GE model, name and the torchair graph its path names (FX-named dumps) —
/// never the file or its step directory, so the cache holds one entry per operator of the model
/// however many steps and files the tree has.
type OpKey = (Option<u32>, Option<String>, String, Option<u64>);

/// The graph texts of a scan, and the origin of each operator asked for so far (one per
/// operator, shared by its tensors: a NaN run taints thousands, a shard has a row per tensor).
#[derive(Debug)]
pub struct Origins {
    map: SourceMap,
    cache: Mutex<HashMap<OpKey, Arc<FxOrigin>>>,
}

impl Origins {
    /// The origin of a tensor's operator; `None` for msprobe dumps (their line is `stack`).
    pub fn of(&self, t: &TensorRecord) -> Option<Arc<FxOrigin>> {
        if t.op.layout == Layout::Msprobe {
            return None;
        }
        let key = (
            t.op.location.rank,
            t.op.location.model.clone(),
            t.op.op_name.clone(),
            source_map::graph_id_of_path(&t.op.path),
        );
        let mut cache = self
            .cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Some(
            cache
                .entry(key)
                .or_insert_with(|| Arc::new(origin_of(&self.map, t)))
                .clone(),
        )
    }
}

/// Reads the graph texts of `graphs` and those beside `root`: the [`Origins`] to give every
/// finding its `fx` and every table row its columns, with the graph texts that could not be read.
/// No origins without any graph text and without `graphs` (the findings keep `fx: null`).
pub fn read(root: &Path, graphs: &[PathBuf]) -> (Option<Origins>, Vec<FileProblem>) {
    let mut seen = BTreeSet::new();
    let graphs: Vec<PathBuf> = graphs
        .iter()
        .filter(|p| seen.insert((*p).clone()))
        .cloned()
        .collect();
    let mut map = SourceMap::load(&graphs);
    map.add_near(root);
    let problems = std::mem::take(&mut map.problems);
    if map.is_empty() && graphs.is_empty() {
        return (None, problems);
    }
    let origins = Origins {
        map,
        cache: Mutex::new(HashMap::new()),
    };
    (Some(origins), problems)
}

/// The origin of one tensor's operator.
fn origin_of(map: &SourceMap, t: &TensorRecord) -> FxOrigin {
    let op = &t.op;
    map.of_dumped(&source_map::Dumped {
        rank: op.location.rank,
        model: op.location.model.as_deref(),
        op_name: &op.op_name,
        op_type: op.op_type.as_deref(),
        path: &op.path,
        original: None,
    })
}
