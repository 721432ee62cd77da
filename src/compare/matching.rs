//! Pairing groups of two runs, and tensors within a pair of groups (`docs/dump-compare.md`,
//! "Matching").

use std::collections::HashMap;

use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::Location;
use npgx_parsers::ge_graph::GeModel;

use super::records::{GroupSide, MatchedBy};
use crate::dump::order::model_key;

/// What decides which groups of two runs pair: rank, device, step and the model name without
/// its run stamp (time directories, model ids and timestamps never do).
pub fn pairing_key(l: &Location) -> (Option<u32>, Option<u32>, Option<String>, Option<u64>) {
    (l.rank, l.device, l.model.as_deref().map(model_key), l.step)
}

pub fn side(l: &Location) -> GroupSide {
    GroupSide {
        rank: l.rank,
        world_size: l.world_size,
        device: l.device,
        model: l.model.clone(),
        step: l.step,
    }
}

/// Parses a `--mapping` CSV: `golden_name,target_name` per line, an optional header line of
/// those two words, blank lines and `#` comments skipped. Returns target name → golden name,
/// or the first bad line.
pub fn parse_mapping(text: &str) -> Result<HashMap<String, String>, String> {
    let mut map = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((g, t)) = line.split_once(',') else {
            return Err(format!("line {}: expected golden_name,target_name", i + 1));
        };
        let (g, t) = (g.trim().trim_matches('"'), t.trim().trim_matches('"'));
        if i == 0 && g == "golden_name" && t == "target_name" {
            continue;
        }
        if g.is_empty() || t.is_empty() || t.contains(',') {
            return Err(format!("line {}: expected golden_name,target_name", i + 1));
        }
        map.insert(t.to_string(), g.to_string());
    }
    Ok(map)
}

/// What the GE graph says about one op: its pre-fusion names and its data inputs.
#[derive(Clone, Debug, Default)]
pub struct GraphOp {
    pub original_names: Vec<String>,
    /// (producer op name, producer output index) per data input.
    pub inputs: Vec<(String, usize)>,
}

/// The GE graph by op name (real and sanitised names both).
pub type GraphIndex = HashMap<String, GraphOp>;

/// Builds the graph index of a parsed GE graph dump.
pub fn graph_index(model: &GeModel) -> GraphIndex {
    let mut idx = GraphIndex::new();
    for r in model.ops() {
        let op = GraphOp {
            original_names: r.op.original_names().map(str::to_string).collect(),
            inputs: r
                .op
                .data_inputs()
                .filter_map(|i| Some((i.src.clone(), usize::try_from(i.index?).ok()?)))
                .collect(),
        };
        let clean = npgx_parsers::dump::name::sanitise(&r.op.name);
        if clean != r.op.name {
            idx.entry(clean).or_insert_with(|| op.clone());
        }
        idx.entry(r.op.name.clone()).or_insert(op);
    }
    idx
}

/// What torchair's graph dump says one GE op was converted from: per GE output, the FX op
/// (`{node}-{target}`) and its output index (`_fx_tensor_name`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FxOp {
    pub outputs: Vec<Option<(String, usize)>>,
}

impl FxOp {
    /// The FX op the GE op's inputs are compared with: that of its first named output.
    fn op(&self) -> Option<&str> {
        self.outputs
            .iter()
            .flatten()
            .map(|(n, _)| n.as_str())
            .next()
    }
}

/// The `dynamo_original_graph_*.txt` dumps of a comparison, each as GE op name → [`FxOp`], in
/// graph-id order, with the rank its file name gives (read by [`crate::source_map`]).
#[derive(Debug, Default)]
pub struct FxGraphs {
    graphs: Vec<FxGraph>,
}

/// One graph dump: graph id and rank from its file name, its ops by GE name.
#[derive(Debug)]
struct FxGraph {
    id: Option<u64>,
    rank: Option<u32>,
    ops: HashMap<String, FxOp>,
}

impl FxGraphs {
    /// The `.txt` graph dumps the source map read.
    pub fn of(map: &crate::source_map::SourceMap) -> FxGraphs {
        let mut graphs: Vec<FxGraph> = map
            .fx_outputs()
            .map(|(id, rank, ops)| FxGraph {
                id,
                rank,
                ops: ops
                    .iter()
                    .map(|(name, outputs)| {
                        (
                            name.clone(),
                            FxOp {
                                outputs: outputs.clone(),
                            },
                        )
                    })
                    .collect(),
            })
            .collect();
        graphs.sort_by_key(|g| g.id);
        FxGraphs { graphs }
    }

    pub fn is_empty(&self) -> bool {
        self.graphs.is_empty()
    }

    /// What the graphs of `rank` (and those whose file name gives no rank) say about a GE op.
    fn lookup(&self, rank: Option<u32>, ge_name: &str) -> Vec<&FxOp> {
        self.graphs
            .iter()
            .filter(|g| g.rank.is_none() || rank.is_none() || g.rank == rank)
            .filter_map(|g| g.ops.get(ge_name))
            .collect()
    }

    /// The golden keys a target tensor of GE op `ge_name` may stand for: output k → the FX
    /// output its `_fx_tensor_name` names, input k → input k of the FX op. Each FX op name is
    /// tried whole (`add_1-aten.add.Tensor`, FX `.npy` dumps) and as its node name (`add_1`,
    /// npugraph_ex `.pt` dumps).
    fn keys(&self, rank: Option<u32>, ge_name: &str, io: Io, index: usize) -> Vec<Key> {
        let mut out = Vec::new();
        for op in self.lookup(rank, ge_name) {
            let (fx, k) = match io {
                Io::Output => match op.outputs.get(index) {
                    Some(Some((n, k))) => (n.as_str(), *k),
                    _ => continue,
                },
                _ => match op.op() {
                    Some(n) => (n, index),
                    None => continue,
                },
            };
            out.push((fx.to_string(), io, k));
            if let Some((node, _)) = fx.split_once('-') {
                out.push((node.to_string(), io, k));
            }
        }
        out
    }
}

/// A tensor key within a group: (op match name, io, index).
pub type Key = (String, Io, usize);

/// The golden tensors of a group by key, each in execution order, with how many a target
/// tensor has claimed so far (k-th occurrence matches k-th).
#[derive(Default)]
pub struct GoldenIndex<T> {
    by_key: HashMap<Key, (Vec<T>, usize)>,
}

impl<T: Copy> GoldenIndex<T> {
    pub fn push(&mut self, key: Key, item: T) {
        self.by_key.entry(key).or_default().0.push(item);
    }

    fn has(&self, key: &Key) -> bool {
        self.by_key
            .get(key)
            .is_some_and(|(items, used)| *used < items.len())
    }

    fn take(&mut self, key: &Key) -> Option<T> {
        let (items, used) = self.by_key.get_mut(key)?;
        let item = items.get(*used).copied()?;
        *used += 1;
        Some(item)
    }

    /// Claims the golden tensor for a target tensor, trying the rules in order: `--mapping`,
    /// torchair's graph dumps (the op, else the original op the dump or the GE graph names),
    /// the same name, the dump's `original_op`, the GE graph's pre-fusion names.
    pub fn claim(&mut self, t: &TargetTensor<'_>) -> Option<(T, MatchedBy, String)> {
        let mut tries: Vec<(Key, MatchedBy)> = Vec::new();
        if let Some(g) = t.mapped {
            tries.push(((g.to_string(), t.io, t.index), MatchedBy::Mapping));
        }
        if let Some((fx, rank)) = t.fx {
            let mut ge: Vec<(&str, usize)> = vec![(t.name, t.index)];
            if let Some((name, k)) = t.original_op {
                ge.push((name, k as usize));
            }
            if let Some(op) = t.graph {
                let names = op.original_names.iter();
                match t.io {
                    Io::Output => ge.extend(names.rev().map(|n| (n.as_str(), t.index))),
                    _ => ge.extend(names.map(|n| (n.as_str(), t.index))),
                }
            }
            for (name, index) in ge {
                tries.extend(
                    fx.keys(rank, name, t.io, index)
                        .into_iter()
                        .map(|k| (k, MatchedBy::FxGraph)),
                );
            }
        }
        tries.push(((t.name.to_string(), t.io, t.index), MatchedBy::Name));
        if let Some((name, k)) = t.original_op {
            let k = k as usize;
            tries.push(((name.to_string(), Io::Output, k), MatchedBy::OriginalOp));
            let clean = npgx_parsers::dump::name::sanitise(name);
            tries.push(((clean, Io::Output, k), MatchedBy::OriginalOp));
        }
        if let Some(op) = t.graph {
            // A fused op's output stands for the last listed original op's output; its inputs
            // are the first listed op's inputs.
            let names: Vec<&String> = match t.io {
                Io::Output => op.original_names.iter().rev().collect(),
                _ => op.original_names.iter().collect(),
            };
            for n in names {
                tries.push(((n.clone(), t.io, t.index), MatchedBy::Graph));
                let clean = npgx_parsers::dump::name::sanitise(n);
                tries.push(((clean, t.io, t.index), MatchedBy::Graph));
            }
        }
        // Last: the two files the command line paired, when no rule above pairs their names.
        if let Some(g) = t.files {
            tries.push(((g.to_string(), t.io, t.index), MatchedBy::Files));
        }
        let (key, how) = tries.into_iter().find(|(k, _)| self.has(k))?;
        let item = self.take(&key)?;
        Some((item, how, key.0))
    }

    /// Every golden tensor no target tensor claimed.
    pub fn unclaimed(self) -> Vec<T> {
        self.by_key
            .into_values()
            .flat_map(|(items, used)| items.into_iter().skip(used))
            .collect()
    }
}

/// What a target tensor offers to the matching rules.
pub struct TargetTensor<'a> {
    pub name: &'a str,
    pub io: Io,
    pub index: usize,
    pub mapped: Option<&'a str>,
    /// The golden name, when the two roots are files of one operator each ([`MatchedBy::Files`]).
    pub files: Option<&'a str>,
    pub original_op: Option<(&'a str, u32)>,
    pub graph: Option<&'a GraphOp>,
    /// torchair graph dumps and the group's rank.
    pub fx: Option<(&'a FxGraphs, Option<u32>)>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_stamps_do_not_decide() {
        assert_eq!(model_key("ge_default_20240101120000_3"), "3");
        assert_eq!(model_key("ge_default_x_3"), "ge_default_x_3");
        assert_eq!(model_key("resnet"), "resnet");
    }

    #[test]
    fn mapping_csv() {
        let m = parse_mapping("golden_name,target_name\nadd_1, Add_fused\n\n# c\n").unwrap();
        assert_eq!(m.get("Add_fused").map(String::as_str), Some("add_1"));
        assert!(parse_mapping("a;b").is_err());
    }

    fn tt<'a>(name: &'a str, io: Io, index: usize) -> TargetTensor<'a> {
        TargetTensor {
            name,
            io,
            index,
            mapped: None,
            files: None,
            original_op: None,
            graph: None,
            fx: None,
        }
    }

    #[test]
    fn occurrences_and_rules() {
        let mut g = GoldenIndex::default();
        g.push(("a".into(), Io::Output, 0), 1);
        g.push(("a".into(), Io::Output, 0), 2);
        g.push(("conv".into(), Io::Output, 1), 3);
        g.push(("b".into(), Io::Input, 0), 4);
        assert_eq!(g.claim(&tt("a", Io::Output, 0)).map(|x| x.0), Some(1));
        assert_eq!(g.claim(&tt("a", Io::Output, 0)).map(|x| x.0), Some(2));
        assert!(g.claim(&tt("a", Io::Output, 0)).is_none());
        let mut fused = tt("conv_bn", Io::Output, 0);
        fused.original_op = Some(("conv", 1));
        assert_eq!(
            g.claim(&fused),
            Some((3, MatchedBy::OriginalOp, "conv".to_string()))
        );
        assert_eq!(g.unclaimed(), vec![4]);
    }

    #[test]
    fn fx_graph_names() {
        let text = br#"name: "g"
            op { name: "Add_2" type: "Add"
                 output_desc { attr { key: "_fx_tensor_name" value { s: "add_1-aten.add.Tensor.OUTPUT.0" } } } }
            op { name: "Split" type: "SplitD"
                 output_desc { attr { key: "_fx_tensor_name" value { s: "split-aten.split.Tensor.OUTPUT.0" } } }
                 output_desc { attr { key: "_fx_tensor_name" value { s: "split-aten.split.Tensor.OUTPUT.1" } } } }"#;
        let dir = std::env::temp_dir().join(format!("npgx-fx-graphs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("dynamo_original_graph_1_rank_0.txt"), text).unwrap();
        let map = crate::source_map::SourceMap::load(std::slice::from_ref(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
        let fx = FxGraphs::of(&map);
        let mut g = GoldenIndex::default();
        g.push(("add_1-aten.add.Tensor".into(), Io::Input, 1), 1);
        g.push(("add_1-aten.add.Tensor".into(), Io::Output, 0), 2);
        g.push(("split".into(), Io::Output, 1), 3);
        let mut t = tt("Add_2", Io::Input, 1);
        t.fx = Some((&fx, Some(0)));
        assert_eq!(
            g.claim(&t),
            Some((1, MatchedBy::FxGraph, "add_1-aten.add.Tensor".to_string()))
        );
        t.io = Io::Output;
        t.index = 0;
        assert_eq!(g.claim(&t).map(|x| x.0), Some(2));
        // A fused op's output through its original op; a `.pt` golden by FX node name.
        let mut fused = tt("Split_fused", Io::Output, 0);
        fused.original_op = Some(("Split", 1));
        fused.fx = Some((&fx, None));
        assert_eq!(
            g.claim(&fused),
            Some((3, MatchedBy::FxGraph, "split".to_string()))
        );
        // Another rank's graph says nothing.
        g.push(("add_1-aten.add.Tensor".into(), Io::Output, 0), 4);
        let mut other = tt("Add_2", Io::Output, 0);
        other.fx = Some((&fx, Some(3)));
        assert!(g.claim(&other).is_none());
    }
}
