//! Renders a repro case for the terminal (`npgx repro`); the case directory itself is written
//! by the engine.

use std::fmt::Write as _;

use crate::repro::Case;

/// The case as pretty JSON (the same document as `case.json`).
pub fn json(case: &Case) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&super::document(
        "repro",
        case.schema_version,
        case,
    )?)?)
}

/// A short human summary.
pub fn text(case: &Case) -> String {
    let mut s = String::new();
    let t = &case.target;
    let _ = writeln!(
        s,
        "repro case ({} path) written to {}",
        case.path, case.out_dir
    );
    let source = match t.source.as_str() {
        "aicore" => "AI Core error",
        "op" => "--op",
        "kernel" => "--kernel",
        other => other,
    };
    let _ = writeln!(
        s,
        "target    : {source}{}{}",
        t.op_name
            .as_deref()
            .map(|o| format!(" op {o}"))
            .unwrap_or_default(),
        t.kernel_name
            .as_deref()
            .map(|k| format!(" kernel {k}"))
            .unwrap_or_default()
    );
    if let Some(e) = &t.evidence {
        let _ = writeln!(
            s,
            "            {}{}",
            e.file,
            e.line.map(|l| format!(":{l}")).unwrap_or_default()
        );
    }
    match &case.op {
        Some(op) => {
            let _ = writeln!(
                s,
                "op        : {} (type {}), {} input(s), {} output(s), {} attr(s)\n            {}:{} ({})",
                op.name,
                op.op_type,
                op.inputs.len(),
                op.outputs.len(),
                op.attrs.len(),
                op.graph_file,
                op.graph_line,
                op.matched_by
            );
        }
        None => s.push_str("op        : not found in a GE graph\n"),
    }
    match case.kernel.as_ref().filter(|k| k.bin_file_name.is_some()) {
        Some(k) => {
            let _ = writeln!(
                s,
                "kernel    : json {}, bin {}",
                k.json_path.as_deref().unwrap_or("not found"),
                k.bin_path.as_deref().unwrap_or("not found")
            );
        }
        None => s.push_str("kernel    : not found\n"),
    }
    match &case.dump {
        Some(d) => {
            let written = d.tensors.iter().filter(|t| t.npy.is_some()).count();
            let _ = writeln!(
                s,
                "data      : {} ({written}/{} tensors written as .npy)",
                d.file,
                d.tensors.len()
            );
        }
        None => s.push_str("data      : no dump\n"),
    }
    let _ = writeln!(
        s,
        "files     : {}",
        case.files
            .iter()
            .map(|f| f.path.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if case.missing.is_empty() {
        s.push_str("missing   : nothing\n");
    } else {
        s.push_str("missing   :\n");
        for m in &case.missing {
            let _ = writeln!(s, "  - {m}");
        }
    }
    for n in &case.notes {
        let _ = writeln!(s, "note      : {n}");
    }
    s
}
