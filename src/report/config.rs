//! Rendering a [`CheckReport`] of `npgx dump-config check`: a human summary and the JSON
//! document described in `docs/dump-config.md`.

use std::fmt::Write as _;

use crate::config::plan::{Plan, Scene};
use crate::config::{CheckReport, DumpType, NewConfig, OperatorDump, Severity};

/// The JSON document of `check` (`npgx.dump-config`, docs/dump-config.md). Each problem also
/// carries `log_line`, the line CANN writes to its log ([`crate::config::ProblemOut`]).
pub fn json(report: &CheckReport) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&value(report)?)?)
}

/// The `npgx.dump-config` document of a check, new config or plan as a value (what the
/// renderers here print, and what `npgx mcp`'s dump_config tools return).
pub fn value<T: serde::Serialize + ?Sized>(body: &T) -> serde_json::Result<serde_json::Value> {
    super::document(
        crate::config::SCHEMA_NAME,
        crate::config::SCHEMA_VERSION,
        body,
    )
}

/// The JSON document of `new --format json` (`npgx.dump-config`).
pub fn new_json(made: &NewConfig) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&value(made)?)?)
}

/// What `new` prints by default: the config on stdout (unless it was written to a file) and
/// a note on stderr; with its torchair lines (`--torchair`), the Python lines that point a
/// CompilerConfig at it (on stdout with a file, else on stderr so stdout stays pure JSON).
/// Returns (stdout, stderr). The JSON document carries them as `torchair`.
pub fn new_text(made: &NewConfig) -> (String, String) {
    let torchair = made.torchair.clone().unwrap_or_default();
    let (out, mut err) = match &made.written {
        Some(path) => (torchair, format!("wrote {path} ({} preset)\n", made.preset)),
        None if torchair.is_empty() => (made.text.clone(), String::new()),
        None => (
            made.text.clone(),
            format!("# save the JSON above, then:\n{torchair}"),
        ),
    };
    if let Some(sel) = &made.fx {
        err.insert_str(0, &selection_text(sel));
    }
    (out, err)
}

/// What `--line` / `--fx-node` selected, for stderr.
fn selection_text(sel: &crate::config::line::Selection) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "{}: {} FX node(s) in {} graph text(s)",
        sel.selected,
        sel.nodes.len(),
        sel.graph_files.len()
    );
    for n in &sel.nodes {
        let _ = writeln!(
            o,
            "  {} {}: {}",
            n.graph.as_deref().unwrap_or("?"),
            n.fx_node,
            n.ge_ops.join(", ")
        );
    }
    if !sel.unsure.is_empty() {
        let names: Vec<String> = sel
            .unsure
            .iter()
            .map(|n| format!("{} {}", n.graph.as_deref().unwrap_or("?"), n.fx_node))
            .collect();
        let _ = writeln!(
            o,
            "  not included — no recorded line, may come from it too (torchair prints each line \
             once per file; add TORCH_COMPILE_DEBUG's texts to --graphs): {}",
            names.join(", ")
        );
    }
    let _ = writeln!(
        o,
        "  torchair's FX data dump of these nodes (config.debug.data_dump.type = \"npy\"):\n    {}",
        sel.fx_dump_filter
    );
    o
}

/// The human summary: verdict, then one block per problem (code, path, CANN's message, fix),
/// then notes on what was skipped.
pub fn text(report: &CheckReport) -> String {
    let mut out = String::new();
    let verdict = if report.valid { "valid" } else { "INVALID" };
    let _ = write!(out, "{}: {verdict}", report.file);
    let _ = match (report.errors, report.warnings) {
        (0, 0) => writeln!(out),
        (e, w) => writeln!(out, " — {e} error(s), {w} warning(s)"),
    };
    if report.errors > 1 {
        let _ = writeln!(
            out,
            "(CANN stops at the first error; npgx lists all of them in CANN's order)"
        );
    }
    for p in &report.problems {
        let severity = match p.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let location = match (p.line, p.column) {
            (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
            _ => String::new(),
        };
        let path = if p.path.is_empty() { "-" } else { &p.path };
        let _ = writeln!(out, "\n{severity} {} {path}{location}", p.code);
        match p.log_line() {
            Some(line) => {
                let _ = writeln!(out, "  {line}");
            }
            None => {
                let _ = writeln!(out, "  {}", p.message);
            }
        }
        let _ = writeln!(out, "  fix: {}", p.fix);
    }
    if report.valid {
        let what = match (report.dump_enabled, report.dump_type, &report.operator_dump) {
            (Some(true), Some(DumpType::Operator), Some(dump)) => {
                format!("CANN will run: {}", describe_operator(dump))
            }
            (Some(true), Some(kind), _) => format!("CANN will run: {}", describe(kind)),
            _ => "CANN will accept it but dump nothing".to_string(),
        };
        let _ = writeln!(out, "\n{what}");
    }
    for g in &report.graphs {
        let _ = writeln!(
            out,
            "graph {}: {} graph(s), {} op(s) checked against dump_list names",
            g.file, g.graphs, g.ops
        );
    }
    for n in &report.notes {
        let _ = writeln!(out, "note: {n}");
    }
    out
}

/// The three things adump's one `OPERATOR` type can mean.
fn describe_operator(dump: &OperatorDump) -> String {
    let which = |mode: &str| match mode {
        "input" => "input",
        "all" => "input and output",
        _ => "output",
    };
    match dump {
        OperatorDump::Tensors { mode } => {
            format!("an operator tensor dump of the {} tensors (OPERATOR)", which(mode))
        }
        OperatorDump::Stats { mode, stats } => format!(
            "a statistics dump: for each op execution a CSV row per {} tensor with {}, instead of the tensor data (OPERATOR, dump_data stats)",
            which(mode),
            stats.join(", ")
        ),
        OperatorDump::Watcher => "a watcher dump: after each op in layer, the outputs of the watcher_nodes, to find the op that overwrites them (OPERATOR, dump_scene watcher)".to_string(),
    }
}

fn describe(kind: DumpType) -> &'static str {
    match kind {
        DumpType::Operator => "an operator tensor dump (OPERATOR)",
        DumpType::OpOverflow => {
            "an overflow dump: overflowing ops plus Opdebug files (OP_OVERFLOW)"
        }
        DumpType::ArgsException => {
            "an exception dump of the failing kernel's arguments (ARGS_EXCEPTION)"
        }
        DumpType::Exception => {
            "an exception dump of the failing operator's inputs and outputs (EXCEPTION)"
        }
        DumpType::AicErrDetailDump => {
            "an AI Core error detail dump with coredump (AIC_ERR_DETAIL_DUMP)"
        }
    }
}

/// The JSON document of `plan --format json` (`npgx.dump-config`, docs/dump-config.md).
pub fn plan_json(plan: &Plan) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&value(plan)?)?)
}

fn bytes(n: Option<u64>) -> String {
    n.map_or_else(|| "unknown".to_string(), super::human_bytes)
}

/// What `plan` prints: the config on stdout when it was not written to a file (one config), and
/// per plan what it dumps, why, its estimate, warnings and notes on stderr. Returns (stdout,
/// stderr).
pub fn plan_text(plan: &Plan) -> (String, String) {
    let mut err = String::new();
    let mut out = String::new();
    for n in &plan.notes {
        let _ = writeln!(err, "note: {n}");
    }
    for (i, d) in plan.dumps.iter().enumerate() {
        let scene = match d.scene {
            Scene::Watcher => "watcher scene (memory overwrite)",
            Scene::Narrowed => "narrowed model dump",
            Scene::WiderStats => "wider statistics dump",
        };
        let mut place = Vec::new();
        if let Some(r) = d.rank {
            place.push(format!("rank {r}"));
        }
        if let Some(m) = &d.model {
            place.push(format!("model {m}"));
        }
        if let Some(s) = d.step {
            place.push(format!("step {s}"));
        }
        let _ = writeln!(
            err,
            "{}{scene}{}{}",
            if i > 0 { "\n" } else { "" },
            if place.is_empty() {
                String::new()
            } else {
                format!(" for {}", place.join(", "))
            },
            d.written
                .as_ref()
                .map_or(String::new(), |w| format!(": wrote {w}"))
        );
        let _ = writeln!(err, "  why      : {} ({})", d.why, d.from);
        let _ = writeln!(
            err,
            "  estimate : {} per step (a full dump: {}) — {}",
            bytes(d.estimate.plan_bytes),
            bytes(d.estimate.full_bytes),
            d.estimate.basis
        );
        if d.estimate.exceeds_free() {
            let _ = writeln!(
                err,
                "  warning  : that is more than the {} free under dump_path ({})",
                bytes(d.estimate.free_bytes),
                d.config["dump"]["dump_path"].as_str().unwrap_or("")
            );
        }
        for w in &d.warnings {
            let _ = writeln!(err, "  warning  : {w}");
        }
        for n in &d.notes {
            let _ = writeln!(err, "  note     : {n}");
        }
        if d.written.is_none() && i == 0 {
            out.push_str(&d.text);
        }
    }
    (out, err)
}
