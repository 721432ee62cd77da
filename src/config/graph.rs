//! `dump-config check --graph`: are the op names in `layer` and `watcher_nodes` nodes of the
//! GE graph that will run?
//!
//! A name that is not a node is silently ignored by CANN, so the dump comes back empty. Three
//! findings: the name is in no graph (error), it is a pre-fusion name that graph fusion folded
//! into another node (warning: CANN dumps the fused node, whose tensors differ), or — in the
//! watcher scene — it is an Hcom (collective communication) op, which the watcher does not
//! observe the way it does compute ops (warning).

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
                    "{name} is an Hcom op (type {}, graph {}): the watcher scene checks compute ops; a collective's output is written by the communication engine",
                    found.op.op_type, found.graph.name
                ),
                format!("put the compute op that consumes or produces {name}'s buffer in {key} instead"),
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
