//! `dump-config check --graph`: are the op names in `layer` and `watcher_nodes` nodes of the
//! GE graph that will run, and is `model_name` one of its graphs?
//!
//! A name that is not a node is silently ignored by CANN, so the dump comes back empty. Findings:
//! the name is in no graph (error, with the nearest node name as the fix); it is a pre-fusion
//! name that graph fusion folded into another node (warning: CANN dumps the fused node, whose
//! tensors differ); in the watcher scene it is an Hcom (collective communication) op, whose buffers
//! HCCL writes, while the watcher is meant for compute operators (warning); a `model_name` that names no
//! graph (warning: GE graph names carry a timestamp and change between runs).

use npgx_parsers::ge_graph::{GeModel, OpIndex};
use serde_json::Value;

use super::check::edit_distance;
use super::{Problem, Severity, Source};

/// Checks the dump_list names of the config in `bytes` against the graphs. Returns nothing when
/// the config has no usable dump_list (its own problems are reported by the CANN rules).
pub fn check_names(bytes: &[u8], models: &[GeModel]) -> Vec<Problem> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let Ok(root) = serde_json::from_slice::<Value>(bytes) else {
        return Vec::new();
    };
    let dump = root.get("dump");
    let watcher = dump
        .and_then(|d| d.get("dump_scene"))
        .and_then(Value::as_str)
        == Some("watcher");
    let Some(items) = dump
        .and_then(|d| d.get("dump_list"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    let indexes: Vec<OpIndex<'_>> = models.iter().map(GeModel::index).collect();
    let mut out = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if let Some(model) = item.get("model_name").and_then(Value::as_str) {
            if let Some(p) = model_problem(model, &format!("dump_list[{i}].model_name"), models) {
                out.push(p);
            }
        }
        for key in ["layer", "watcher_nodes"] {
            let Some(names) = item.get(key).and_then(Value::as_array) else {
                continue;
            };
            for (j, name) in names.iter().enumerate() {
                let Some(name) = name.as_str() else { continue };
                let path = format!("dump_list[{i}].{key}[{j}]");
                if let Some(p) = name_problem(name, &path, key, watcher, &indexes, models) {
                    out.push(p);
                }
            }
        }
    }
    out
}

/// GE names a model after its root graph (the first graph of a dump, e.g.
/// `ge_default_20230713074125_11`); the name carries a timestamp, so a `model_name` copied from an
/// older run matches nothing and CANN dumps nothing.
fn model_problem(model: &str, path: &str, models: &[GeModel]) -> Option<Problem> {
    if model.is_empty()
        || models
            .iter()
            .flat_map(|m| &m.graphs)
            .any(|g| g.name == model)
    {
        return None;
    }
    let roots: Vec<&str> = models
        .iter()
        .filter_map(|m| m.graphs.first())
        .map(|g| g.name.as_str())
        .collect();
    Some(Problem {
        severity: Severity::Warning,
        source: Source::Npgx,
        code: "model-not-in-graph".into(),
        path: path.into(),
        function: None,
        message: format!(
            "{model} is not the name of a graph in the given dump(s) (root graph(s): {})",
            roots.join(", ")
        ),
        fix: "use the root graph name of the run that will be dumped; GE graph names carry a timestamp and change from run to run".into(),
        line: None,
        column: None,
    })
}

fn name_problem(
    name: &str,
    path: &str,
    key: &str,
    watcher: bool,
    indexes: &[OpIndex<'_>],
    models: &[GeModel],
) -> Option<Problem> {
    let problem = |severity, code: &str, message: String, fix: String| Problem {
        severity,
        source: Source::Npgx,
        code: code.into(),
        path: path.into(),
        function: None,
        message,
        fix,
        line: None,
        column: None,
    };
    if let Some(found) = indexes.iter().find_map(|ix| ix.get(name)) {
        if watcher && found.op.is_hcom() {
            return Some(problem(
                Severity::Warning,
                "hcom-in-watcher",
                format!(
                    "{name} is an Hcom (collective communication) op (type {}, graph {}): HCCL, not an AI Core kernel, writes its buffers, and the watcher scene is meant for compute operators",
                    found.op.op_type, found.graph.name
                ),
                format!("check that this is intended; to find who overwrites memory, put the compute ops that produce or consume {name}'s buffers in {key}"),
            ));
        }
        return None;
    }
    let fused: Vec<String> = indexes
        .iter()
        .flat_map(|ix| ix.fused_into(name))
        .map(|r| format!("{} ({})", r.op.name, r.op.op_type))
        .collect();
    if !fused.is_empty() {
        return Some(problem(
            Severity::Warning,
            "fused-op-name",
            format!(
                "{name} is a pre-fusion name: graph fusion folded it into {}",
                fused.join(", ")
            ),
            format!(
                "use the fused node name in {key} ({}) — its tensors are those of the fused op",
                fused
                    .iter()
                    .map(|f| f.split(' ').next().unwrap_or(f))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let fix = match closest_op(name, models) {
        Some(near) => format!("did you mean \"{near}\"? node names are case-sensitive"),
        None => "copy the node name from the graph dump (op { name: \"…\" }) of the run that will be dumped".into(),
    };
    Some(problem(
        Severity::Error,
        "op-not-in-graph",
        format!("{name} is not an op of the given graph dump(s); CANN would dump nothing for it"),
        fix,
    ))
}

/// The op name nearest to `name` (edit distance at most a third of its length, ≤ 4).
fn closest_op<'m>(name: &str, models: &'m [GeModel]) -> Option<&'m str> {
    let limit = (name.chars().count() / 3).clamp(1, 4);
    models
        .iter()
        .flat_map(GeModel::ops)
        .map(|r| r.op.name.as_str())
        .filter(|n| n.len().abs_diff(name.len()) <= limit)
        .map(|n| (edit_distance(n, name), n))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}
