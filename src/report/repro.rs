//! Renders a repro case: for the terminal (`npgx repro`), as JSON (also the case directory's
//! `case.json`) and as the case directory's `README.md` (what was found and where, how to run,
//! what is missing). The engine writes the data files and scripts; these documents are rendered here.

use std::fmt::Write as _;

use crate::repro::case::{DumpFacts, KernelFacts, OpFacts, ReproPath, Target, TensorFacts};
use crate::repro::Case;

/// The case as pretty JSON (the same document as `case.json`).
pub fn json(case: &Case) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&super::document(
        crate::repro::case::SCHEMA_NAME,
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
    missing_lines(&mut s, &case.missing);
    for n in &case.notes {
        let _ = writeln!(s, "note      : {n}");
    }
    s
}

fn dims(d: Option<&[i64]>) -> String {
    d.map_or_else(
        || "?".to_string(),
        |d| {
            format!(
                "[{}]",
                d.iter().map(i64::to_string).collect::<Vec<_>>().join(", ")
            )
        },
    )
}

fn tensor_line(kind: &str, t: &TensorFacts) -> String {
    format!(
        "| {kind} {} | {} | {} | {} | {} | {} | {} |",
        t.index,
        t.name.as_deref().unwrap_or(""),
        t.dtype.as_deref().unwrap_or("?"),
        dims(t.shape.as_deref()),
        t.format.as_deref().unwrap_or("?"),
        dims(t.ori_shape.as_deref()),
        t.ori_format.as_deref().unwrap_or("?"),
    )
}

/// Markdown text for the case (names appear inside code spans, so markup in them is inert).
pub fn readme(case: &Case) -> String {
    let mut s = String::new();
    let label = case
        .op
        .as_ref()
        .map(|o| o.name.as_str())
        .or(case.target.op_name.as_deref())
        .or(case.target.kernel_name.as_deref())
        .unwrap_or("unknown operator");
    let _ = writeln!(
        s,
        "# npgx repro: `{}` ({} path)\n",
        label.replace('`', "'"),
        case.path
    );
    readme_target(&mut s, &case.target);
    readme_operator(&mut s, case.op.as_ref());
    readme_kernel(&mut s, case.kernel.as_ref());
    readme_data(&mut s, case.dump.as_ref());
    readme_how_to_run(&mut s, case);
    let _ = writeln!(s, "\n## Missing\n");
    if case.missing.is_empty() {
        s.push_str("Nothing.\n");
    }
    for m in &case.missing {
        let _ = writeln!(s, "- {m}");
    }
    if !case.notes.is_empty() {
        let _ = writeln!(s, "\n## Notes\n");
        for n in &case.notes {
            let _ = writeln!(s, "- {n}");
        }
    }
    s
}

/// `## Target`: what named the operator, its names and ids, the log line it came from and the
/// tensors the runtime reported.
fn readme_target(s: &mut String, t: &Target) {
    let _ = writeln!(s, "## Target\n");
    let _ = writeln!(s, "- named by: {}", t.source);
    if let Some(k) = &t.kernel_name {
        let _ = writeln!(s, "- kernel name: `{k}`");
    }
    if let Some(o) = &t.op_name {
        let _ = writeln!(s, "- op name: `{o}`");
    }
    for (k, v) in [
        ("device", t.device_id),
        ("stream", t.stream_id),
        ("task", t.task_id),
    ] {
        if let Some(v) = v {
            let _ = writeln!(s, "- {k} id: {v}");
        }
    }
    if let Some(e) = &t.evidence {
        let _ = writeln!(
            s,
            "- from: `{}`{}",
            e.file,
            e.line.map(|l| format!(" line {l}")).unwrap_or_default()
        );
    }
    for rt in &t.runtime_tensors {
        let _ = writeln!(
            s,
            "- runtime {} {}: {} {} {} (line {})",
            rt.io,
            rt.index,
            rt.dtype.as_deref().unwrap_or("?"),
            rt.format.as_deref().unwrap_or("?"),
            dims(rt.shape.as_deref()),
            rt.line
        );
    }
}

/// `## Operator (GE graph)`: where the graph has the op, its tensors and its attributes.
fn readme_operator(s: &mut String, op: Option<&OpFacts>) {
    let _ = writeln!(s, "\n## Operator (GE graph)\n");
    let Some(op) = op else {
        s.push_str("Not found — see *Missing*.\n");
        return;
    };
    let _ = writeln!(s, "- `{}`, type `{}`", op.name, op.op_type);
    let _ = writeln!(
        s,
        "- in `{}` line {} (graph `{}`), matched by {}",
        op.graph_file, op.graph_line, op.graph_name, op.matched_by
    );
    if let Some(k) = &op.kernel_name {
        let _ = writeln!(s, "- kernel attribute: `{k}`");
    }
    s.push_str("\n| tensor | name | dtype | shape | format | ori_shape | ori_format |\n|---|---|---|---|---|---|---|\n");
    for t in &op.inputs {
        let _ = writeln!(s, "{}", tensor_line("input", t));
    }
    for t in &op.outputs {
        let _ = writeln!(s, "{}", tensor_line("output", t));
    }
    if !op.attrs.is_empty() {
        s.push_str(if op.attrs_order == "ir" {
            "\nAttributes in IR order:\n\n"
        } else {
            "\nAttributes in the order the graph lists them (this dump does not record the IR order):\n\n"
        });
        for a in &op.attrs {
            let _ = writeln!(s, "- `{}` ({}): `{}`", a.name, a.kind, a.value);
        }
    }
}

/// `## Kernel`: the kernel files found, its blockDim and tiling key.
fn readme_kernel(s: &mut String, kernel: Option<&KernelFacts>) {
    let _ = writeln!(s, "\n## Kernel\n");
    match kernel {
        Some(k) if k.bin_file_name.is_some() => {
            let _ = writeln!(
                s,
                "- base name: `{}`",
                k.bin_file_name.as_deref().unwrap_or_default()
            );
            for (what, v) in [
                ("JSON", &k.json_path),
                ("binary", &k.bin_path),
                ("CCE source", &k.cce_path),
            ] {
                let _ = writeln!(
                    s,
                    "- {what}: {}",
                    v.as_deref()
                        .map_or("not found".to_string(), |p| format!("`{p}`"))
                );
            }
            match k.block_dim {
                Some(-1) => s.push_str(
                    "- blockDim: -1 in the kernel JSON (the tiling sets it at run time; \
                     `run_config.json` has the launch's value when the log states it)\n",
                ),
                Some(b) => {
                    let _ = writeln!(s, "- blockDim: {b}");
                }
                None => {}
            }
            if let Some(t) = k.tiling_key {
                let _ = writeln!(s, "- tiling key: {t}");
            }
        }
        _ => s.push_str("Not found — see *Missing*.\n"),
    }
}

/// `## Data`: the dump file the data came from and where each tensor was written.
fn readme_data(s: &mut String, dump: Option<&DumpFacts>) {
    let _ = writeln!(s, "\n## Data\n");
    let Some(d) = dump else {
        s.push_str("No dump — see *Missing*.\n");
        return;
    };
    let _ = writeln!(s, "From `{}` ({} framing).\n", d.file, d.framing);
    if let Some(tiling) = &d.tiling_data {
        let _ = writeln!(s, "- tiling data → `{tiling}`");
    }
    for t in &d.tensors {
        let _ = writeln!(
            s,
            "- {} {}: {} {} {:?} → {}{}",
            t.io,
            t.index,
            t.dtype,
            t.format,
            t.device_shape,
            t.npy
                .as_deref()
                .map_or("not written".to_string(), |p| format!(
                    "`{p}` ({} layout)",
                    t.layout
                )),
            t.note
                .as_deref()
                .map(|n| format!(" — {n}"))
                .unwrap_or_default()
        );
    }
}

/// `## How to run`: what each script of the case does and needs.
fn readme_how_to_run(s: &mut String, case: &Case) {
    let _ = writeln!(s, "\n## How to run\n");
    for f in &case.files {
        match f.kind.as_str() {
            "oput" => {
                let on = "on a machine with CANN's op_test_frame and an NPU";
                let runs = if case.dump.is_some() {
                    format!("{on} runs the kernel on the dumped inputs")
                } else if case.op.is_some() {
                    format!("{on} runs the kernel on random inputs of the graph's shapes (no dump was given: see *Missing*)")
                } else {
                    "cannot run as written: without a GE graph or a dump npgx knows no input of the operator (see *Missing*); give either and generate the case again".to_string()
                };
                let _ = writeln!(
                    s,
                    "- `python3 {}` {runs}.\n- `run_config.json` holds the same kernel launch for msaicerr-style single-op runners (paths relative to this directory; inputs in the device layout).",
                    f.path
                );
            }
            "accuracy_script" => {
                let _ = writeln!(
                    s,
                    "- `python3 {}` compares the dumped outputs with a CPU golden and, where torch_npu and an NPU are present, re-runs the op on the NPU (`--json` for machine-readable results, `--skip-npu` to skip that step). Without an NPU it says that the NPU part was skipped.",
                    f.path
                );
            }
            _ => {}
        }
    }
    if case.path == ReproPath::Runtime {
        s.push_str("- Set `ASCEND_LAUNCH_BLOCKING=1` to get synchronous errors.\n");
    }
}

/// `npgx repro --from-scan --format json` and the case's `case.json`: the `npgx.repro-fx`
/// document.
pub fn anomaly_json(r: &crate::repro::anomaly::AnomalyRepro) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(&super::document(
        crate::repro::anomaly::SCHEMA_NAME,
        crate::repro::anomaly::SCHEMA_VERSION,
        r,
    )?)?)
}

/// `npgx repro --from-scan`: what was built, from where, how to run it, what it lacks (also the
/// case's `README.md`).
pub fn anomaly_text(r: &crate::repro::anomaly::AnomalyRepro) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "FX-node repro of the scan's {} written to {}",
        r.record.replace('_', " "),
        r.out_dir
    );
    let _ = writeln!(
        s,
        "anomaly   : {} of {} ({}{})",
        super::enum_name(&r.kind),
        r.op_name,
        r.path,
        r.rank.map(|k| format!(", rank {k}")).unwrap_or_default()
    );
    let _ = writeln!(
        s,
        "FX node   : {}{} = {}",
        r.graph
            .as_deref()
            .map(|g| format!("{g}:"))
            .unwrap_or_default(),
        r.fx_node,
        r.call
            .as_deref()
            .map_or("(call not rebuilt)".to_string(), |c| c.replacen(
                'F',
                r.target.as_deref().unwrap_or("F"),
                1
            ))
    );
    if let Some(u) = &r.user_line {
        let _ = writeln!(s, "made at   : {}", u.label());
    }
    for i in &r.inputs {
        let _ = writeln!(
            s,
            "T[{}]      : {} = {} ← {}",
            i.tensor,
            i.argument,
            i.node,
            i.from.as_deref().unwrap_or("seeded random data")
        );
    }
    if !r.dumped_outputs.is_empty() {
        let _ = writeln!(s, "dumped    : {}", r.dumped_outputs.join(", "));
    }
    let _ = writeln!(
        s,
        "run       : python3 {}/{}   (--device cpu for the golden alone; exit 0 match, 1 differs, 3 incomplete)",
        r.out_dir, r.script
    );
    missing_lines(&mut s, &r.missing);
    s
}

/// The summary's `missing` block: `nothing`, or one line per item.
fn missing_lines(s: &mut String, missing: &[String]) {
    if missing.is_empty() {
        s.push_str("missing   : nothing\n");
        return;
    }
    s.push_str("missing   :\n");
    for m in missing {
        let _ = writeln!(s, "  - {m}");
    }
}
