//! `npgx repro`: a single-operator repro case from the artifacts a failing run left behind.
//!
//! The engine finds the operator (from an AI Core error, an op name or a kernel name), looks it
//! up in the GE graph dump, finds its kernel `.o` / `.json`, decodes its dump file to `.npy`,
//! and writes a case directory: `case.json` (the facts, schema in `docs/repro.md`),
//! `README.md`, the data, and the scripts of the chosen path — an OpUT case plus a run
//! configuration for the runtime path, a torch_npu script with a CPU golden for the accuracy
//! path. What could not be found is listed, never guessed.
//!
//! Data flows one way: [`aicore`] (plog scanner) → [`graph`] (GE graph parser) → [`kernel`] →
//! [`dumpdata`] (dump decoder) → [`Case`] → writers ([`oput`], [`accuracy`]; `README.md` and `case.json` are rendered by `report::repro`).

pub mod accuracy;
pub mod aicore;
pub mod anomaly;
pub mod case;
pub mod dumpdata;
pub mod fx_node;
pub mod graph;
pub mod io;
pub mod kernel;
pub mod oput;
pub mod pyquote;

use std::path::{Path, PathBuf};

use anyhow::Context;

pub use case::{Case, ReproPath};
use case::{GeneratedFile, KernelFacts, Target, SCHEMA_VERSION};

/// What the user asked for.
#[derive(Clone, Debug, Default)]
pub struct Request {
    /// A plog file or a collection directory with an AI Core error.
    pub from_aicore: Option<PathBuf>,
    /// Which operator-naming device error of the logs (1-based).
    pub error_number: usize,
    pub op: Option<String>,
    pub kernel: Option<String>,
    pub graph: Option<PathBuf>,
    pub kernel_meta: Option<PathBuf>,
    pub dump: Option<PathBuf>,
    /// `None`: runtime for an AI Core error, accuracy otherwise.
    pub path: Option<ReproPath>,
    pub out: PathBuf,
    /// Write into a non-empty output directory (files npgx writes are replaced).
    pub force: bool,
}

fn push_unique(v: &mut Vec<String>, s: Option<&str>) {
    if let Some(s) = s.map(str::trim).filter(|s| !s.is_empty()) {
        if !v.iter().any(|x| x == s) {
            v.push(s.to_string());
        }
    }
}

/// A directory given with `--from-aicore`, where graphs, kernels and dumps are also looked for.
fn collection_dir(req: &Request) -> Option<&Path> {
    req.from_aicore.as_deref().filter(|p| p.is_dir())
}

pub(crate) fn check_out_dir(out: &Path, force: bool) -> anyhow::Result<()> {
    if out.is_file() {
        anyhow::bail!(
            "{}: exists and is a file; -o needs a directory",
            out.display()
        );
    }
    if out.is_dir() && !force {
        let non_empty = std::fs::read_dir(out)
            .with_context(|| crate::error::CannotRead::new(out))?
            .next()
            .is_some();
        if non_empty {
            anyhow::bail!(
                "{}: directory is not empty; choose a new one or add --force to replace the files npgx writes there",
                out.display()
            );
        }
    }
    Ok(())
}

/// What the case lacks ([`Case::missing`]) and what its reader should know ([`Case::notes`]),
/// gathered in the order the steps of [`build`] run.
#[derive(Default)]
struct Findings {
    missing: Vec<String>,
    notes: Vec<String>,
}

/// Collects the facts and writes the case directory. `Err` when the request cannot be carried
/// out at all (no target, unreadable log, output directory in the way); anything the case lacks
/// is listed in [`Case::missing`].
pub fn build(req: &Request) -> anyhow::Result<Case> {
    if req.from_aicore.is_none() && req.op.is_none() && req.kernel.is_none() {
        anyhow::bail!("nothing names the operator: give --from-aicore, --op or --kernel");
    }
    check_out_dir(&req.out, req.force)?;
    let mut found = Findings::default();
    let (from_error, target) = resolve_target(req, &mut found)?;
    let op = locate_op(req, &target, &mut found);
    let (kernel, kernel_missing) = find_kernel(req, op.as_ref(), &from_error, &target)?;
    let (dump, out_files) = find_dump(req, op.as_ref(), &target, &from_error, &mut found);
    if let (Some(op), Some(d)) = (&op, &dump) {
        found.notes.extend(cross_check(op, d));
    }
    let path = req.path.unwrap_or(if req.from_aicore.is_some() {
        ReproPath::Runtime
    } else {
        ReproPath::Accuracy
    });
    path_gaps(path, op.as_ref(), dump.as_ref(), kernel_missing, &mut found);

    let mut case = Case {
        schema_version: SCHEMA_VERSION,
        path,
        target,
        op,
        kernel,
        dump,
        out_dir: req.out.display().to_string(),
        files: Vec::new(),
        missing: found.missing,
        notes: found.notes,
    };
    write_case(&mut case, &out_files, &from_error)?;
    Ok(case)
}

/// Step 1, the target: the `--error`th operator-naming device error of the `--from-aicore`
/// logs (its target taken out of the returned error), else a target named by `--op` /
/// `--kernel`, which also override the error's names.
fn resolve_target(
    req: &Request,
    found: &mut Findings,
) -> anyhow::Result<(aicore::FromError, Target)> {
    let mut from_error = match &req.from_aicore {
        Some(p) => aicore::target(p, req.error_number.max(1))?,
        None => aicore::FromError::default(),
    };
    if from_error.errors_found > 1 {
        found.notes.push(format!(
            "the logs hold {} device errors that name an operator; this case is for number {} (--error N picks another; the first by log order is usually the cause)",
            from_error.errors_found,
            req.error_number.max(1)
        ));
    }
    let mut target = if req.from_aicore.is_some() {
        std::mem::take(&mut from_error.target)
    } else {
        Target {
            source: if req.op.is_some() { "op" } else { "kernel" }.to_string(),
            ..Target::default()
        }
    };
    if let Some(op) = &req.op {
        target.op_name = Some(op.clone());
    }
    if let Some(k) = &req.kernel {
        target.kernel_name = Some(k.clone());
    }
    Ok((from_error, target))
}

/// Step 2, the op in the GE graph dump (`--graph`, else the collection directory): its type,
/// tensor descriptors and attributes. `None`, with the reason in `missing`, when there is no
/// graph or the op is not in it.
fn locate_op(req: &Request, target: &Target, found: &mut Findings) -> Option<case::OpFacts> {
    let graph_root = req
        .graph
        .clone()
        .or_else(|| collection_dir(req).map(Path::to_path_buf));
    let Some(root) = &graph_root else {
        found.missing.push(
            "no GE graph given (--graph ge_proto_*_Build.txt or its directory): op type, tensor descriptors and attributes are unknown"
                .to_string(),
        );
        return None;
    };
    let files = graph::candidates(root);
    if files.is_empty() {
        found.missing.push(format!(
            "no GE graph dump (ge_proto_*_Build.txt, *_PreRunAfterBuild.txt) under {}",
            root.display()
        ));
        return None;
    }
    match graph::locate(
        &files,
        target.op_name.as_deref(),
        target.kernel_name.as_deref(),
    ) {
        Ok(located) => {
            found.notes.extend(located.notes);
            Some(located.op)
        }
        Err(why) => {
            found.missing.push(format!(
                "operator not found in the GE graph: {}",
                why.join("; ")
            ));
            None
        }
    }
}

/// The directories kernel files are looked for under: `--kernel-meta` (which must be a
/// directory), else the collection directory and the directory of `--graph`.
fn kernel_roots(req: &Request) -> anyhow::Result<Vec<PathBuf>> {
    let mut roots: Vec<PathBuf> = Vec::new();
    match &req.kernel_meta {
        Some(k) => {
            if !k.is_dir() {
                anyhow::bail!("{}: --kernel-meta must be a directory", k.display());
            }
            roots.push(k.clone());
        }
        None => {
            if let Some(c) = collection_dir(req) {
                roots.push(c.to_path_buf());
            }
            if let Some(g) = &req.graph {
                let dir = if g.is_dir() {
                    Some(g.as_path())
                } else {
                    g.parent()
                };
                if let Some(d) = dir {
                    roots.push(if d.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        d.to_path_buf()
                    });
                }
            }
        }
    }
    Ok(roots)
}

/// Step 3, the kernel `.o` / `.json` by the names the graph, the error and `--kernel` give.
/// Returns the facts found and what was not found: kernel files only matter for the runtime
/// path, so the caller counts a miss as missing there and as a note on the accuracy path.
fn find_kernel(
    req: &Request,
    op: Option<&case::OpFacts>,
    from_error: &aicore::FromError,
    target: &Target,
) -> anyhow::Result<(Option<KernelFacts>, Vec<String>)> {
    let mut names = Vec::new();
    push_unique(&mut names, op.and_then(|o| o.kernel_name.as_deref()));
    push_unique(&mut names, from_error.device_symbol.as_deref());
    push_unique(&mut names, target.kernel_name.as_deref());
    let roots = kernel_roots(req)?;
    let mut kernel_missing = Vec::new();
    let kernel = if names.is_empty() {
        kernel_missing.push("no kernel name is known (no AI Core error, no _kernelname attribute, no --kernel): kernel files not looked for".to_string());
        None
    } else if roots.is_empty() {
        kernel_missing.push(
            "no kernel directory given (--kernel-meta DIR): kernel .o and .json not looked for"
                .to_string(),
        );
        None
    } else {
        let idx = kernel::KernelIndex::build(&roots);
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (mut facts, problems) = idx.lookup(&refs, from_error.tiling_key);
        if facts.bin_file_name.is_none() {
            kernel_missing.push(format!(
                "kernel files for {} not found under {}",
                names.join(" / "),
                facts.searched.join(", ")
            ));
        }
        kernel_missing.extend(problems);
        if facts.tiling_key.is_none() {
            facts.tiling_key = from_error.tiling_key;
        }
        Some(facts)
    };
    Ok((kernel, kernel_missing))
}

/// A note per exception dump file the logs name, for when no usable dump was given.
fn point_to_exception_dumps(from_error: &aicore::FromError, found: &mut Findings) {
    for f in &from_error.dump_files {
        found.notes.push(format!(
            "the logs say an exception dump was written to {f}: pass it with --dump"
        ));
    }
}

/// Step 4, the operator's dump file (`--dump`, else the collection directory), found by op
/// name and task / stream id: its facts and the data files to write, or `None` with the reason
/// in `missing`.
fn find_dump(
    req: &Request,
    op: Option<&case::OpFacts>,
    target: &Target,
    from_error: &aicore::FromError,
    found: &mut Findings,
) -> (Option<case::DumpFacts>, Vec<dumpdata::OutFile>) {
    let dump_root = req
        .dump
        .clone()
        .or_else(|| collection_dir(req).map(Path::to_path_buf));
    let wanted_name = op
        .map(|o| o.name.clone())
        .or_else(|| target.op_name.clone());
    let Some(root) = &dump_root else {
        found.missing.push(
            "no dump given (--dump FILE|DIR): no input data; the scripts use random data"
                .to_string(),
        );
        point_to_exception_dumps(from_error, found);
        return (None, Vec::new());
    };
    let q = dumpdata::DumpQuery {
        op_name: wanted_name.clone(),
        task_id: target.task_id,
        stream_id: target.stream_id,
    };
    let candidates = dumpdata::find(root, &q);
    let Some(best) = candidates.first() else {
        let mut looked = Vec::new();
        if let Some(n) = &q.op_name {
            looked.push(format!("op name {}", npgx_parsers::dump::name::sanitise(n)));
        }
        if let Some(t) = q.task_id {
            looked.push(format!("task id {t}"));
        }
        found.missing.push(format!(
            "no dump file of the operator under {} (looked for {}): no input data",
            root.display(),
            if looked.is_empty() {
                "nothing: no op name or task id known".to_string()
            } else {
                looked.join(", ")
            }
        ));
        point_to_exception_dumps(from_error, found);
        return (None, Vec::new());
    };
    read_dump(best, candidates.len(), wanted_name.as_deref(), found)
}

/// Decodes `best`, the newest of `matches` dump files: notes when several match or its header
/// names another op than `wanted_name`, a missing entry per tensor not written; `None` with
/// the reason in `missing` when the file cannot be read.
fn read_dump(
    best: &dumpdata::Candidate,
    matches: usize,
    wanted_name: Option<&str>,
    found: &mut Findings,
) -> (Option<case::DumpFacts>, Vec<dumpdata::OutFile>) {
    match dumpdata::read(best, matches) {
        Ok((facts, files)) => {
            if matches > 1 {
                found.notes.push(format!(
                    "{} dump files match; the newest was used ({}); pass one with --dump FILE to choose",
                    matches,
                    best.path.display()
                ));
            }
            if let (Some(w), Some(h)) = (wanted_name, &facts.op_name) {
                if w != h {
                    found.notes.push(format!(
                        "the dump header names op {h:?}, not {w:?}: check that {} is the right file",
                        best.path.display()
                    ));
                }
            }
            for t in &facts.tensors {
                if t.npy.is_none() {
                    found.missing.push(format!(
                        "{} {}: {}",
                        t.io,
                        t.index,
                        t.note.as_deref().unwrap_or("not written")
                    ));
                }
            }
            (Some(facts), files)
        }
        Err(e) => {
            found.missing.push(format!("dump file unreadable: {e}"));
            (None, Vec::new())
        }
    }
}

/// Step 5, what the chosen path lacks: the kernel misses count as missing on the runtime path
/// and as notes on the accuracy path, which also lacks data held only in a device layout and
/// a torch_npu mapping of an op type npgx does not know.
fn path_gaps(
    path: ReproPath,
    op: Option<&case::OpFacts>,
    dump: Option<&case::DumpFacts>,
    kernel_missing: Vec<String>,
    found: &mut Findings,
) {
    match path {
        ReproPath::Runtime => found.missing.extend(kernel_missing),
        ReproPath::Accuracy => found.notes.extend(kernel_missing),
    }
    if path == ReproPath::Accuracy {
        for t in dump
            .iter()
            .flat_map(|d| &d.tensors)
            .filter(|t| t.layout == "device")
        {
            found.missing.push(format!(
                "{} {} is only available in its device layout ({}): the accuracy script uses random data for it",
                t.io, t.index, t.format
            ));
        }
        if let Some(t) = op.map(|o| o.op_type.as_str()) {
            if accuracy::mapping(t).is_none() {
                found.missing.push(format!(
                    "GE op type {t} has no torch_npu mapping or CPU golden in npgx: fill in the placeholders of the script"
                ));
            }
        }
    }
}

/// Where the graph and the dump disagree: tensor counts (exception dumps leave out tensors
/// whose address is null, which shifts indices) and data types.
fn cross_check(op: &case::OpFacts, d: &case::DumpFacts) -> Vec<String> {
    let mut notes = Vec::new();
    for (io, graph) in [("input", &op.inputs), ("output", &op.outputs)] {
        let dumped: Vec<&case::DumpTensorFacts> = d.tensors.iter().filter(|t| t.io == io).collect();
        if dumped.len() != graph.len() {
            notes.push(format!(
                "the graph gives {} {io}(s) but the dump holds {}: a dump leaves out tensors with no address, so {io} indices may not line up",
                graph.len(),
                dumped.len()
            ));
            continue;
        }
        for (g, t) in graph.iter().zip(dumped) {
            if let Some(gd) = &g.dtype {
                if *gd != t.dtype {
                    notes.push(format!(
                        "{io} {}: the graph says {gd}, the dump {}",
                        t.index, t.dtype
                    ));
                }
            }
        }
    }
    notes
}

fn write(out: &Path, rel: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let p = out.join(rel);
    if let Some(parent) = p.parent() {
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
    }
    crate::output::write(&p, bytes)
}

fn copy_kernel(
    out: &Path,
    src: Option<&str>,
    files: &mut Vec<GeneratedFile>,
    kind: &str,
) -> anyhow::Result<Option<String>> {
    let Some(src) = src else { return Ok(None) };
    let src = Path::new(src);
    let Some(name) = src.file_name() else {
        return Ok(None);
    };
    let rel = format!("kernel/{}", name.to_string_lossy());
    let bytes = std::fs::read(src).with_context(|| crate::error::CannotRead::new(src))?;
    write(out, &rel, &bytes)?;
    files.push(GeneratedFile {
        path: rel.clone(),
        kind: kind.to_string(),
    });
    Ok(Some(rel))
}

fn write_case(
    case: &mut Case,
    data: &[dumpdata::OutFile],
    from_error: &aicore::FromError,
) -> anyhow::Result<()> {
    let out = PathBuf::from(&case.out_dir);
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut files = Vec::new();
    for f in data {
        match &f.data {
            dumpdata::OutData::Bytes(b) => write(&out, &f.rel, b)?,
            dumpdata::OutData::Copy(src) => {
                let p = out.join(&f.rel);
                if let Some(parent) = p.parent() {
                    std::fs::create_dir_all(parent)
                        .with_context(|| format!("cannot create {}", parent.display()))?;
                }
                crate::output::write_with(&p, |f| {
                    let mut from = std::fs::File::open(src)?;
                    Ok(std::io::copy(&mut from, f)?)
                })
                .with_context(|| format!("cannot copy {} to {}", src.display(), p.display()))?;
            }
        }
        files.push(GeneratedFile {
            path: f.rel.clone(),
            kind: f.kind.to_string(),
        });
    }
    let label = case
        .op
        .as_ref()
        .map(|o| o.name.clone())
        .or_else(|| case.target.op_name.clone())
        .or_else(|| case.target.kernel_name.clone())
        .unwrap_or_else(|| "op".to_string());
    let stem = pyquote::file_stem(&label);
    match case.path {
        ReproPath::Runtime => {
            let k = case.kernel.clone().unwrap_or_default();
            let rt = oput::RuntimeFiles {
                bin: copy_kernel(&out, k.bin_path.as_deref(), &mut files, "kernel_bin")?,
                json: copy_kernel(&out, k.json_path.as_deref(), &mut files, "kernel_json")?,
                cce: copy_kernel(&out, k.cce_path.as_deref(), &mut files, "kernel_cce")?,
                tiling_data: case
                    .dump
                    .as_ref()
                    .and_then(|d| d.tiling_data.clone())
                    .filter(|t| !t.starts_with("unreadable")),
                block_dim: from_error
                    .block_dim
                    .or(k.block_dim)
                    .or_else(|| case.op.as_ref().and_then(|o| o.block_dim)),
                tiling_key: k.tiling_key.or(from_error.tiling_key),
                kernel_name: kernel_symbol(&k, from_error),
            };
            let script = format!("test_{stem}.py");
            write(
                &out,
                &script,
                oput::test_script(case, &rt, &stem).as_bytes(),
            )?;
            files.push(GeneratedFile {
                path: script,
                kind: "oput".to_string(),
            });
            let cfg = serde_json::to_string_pretty(&oput::run_config(case, &rt))?;
            write(&out, "run_config.json", format!("{cfg}\n").as_bytes())?;
            files.push(GeneratedFile {
                path: "run_config.json".to_string(),
                kind: "run_config".to_string(),
            });
        }
        ReproPath::Accuracy => {
            let script = format!("repro_{stem}.py");
            write(&out, &script, accuracy::script(case).as_bytes())?;
            files.push(GeneratedFile {
                path: script,
                kind: "accuracy_script".to_string(),
            });
        }
    }
    files.push(GeneratedFile {
        path: "README.md".to_string(),
        kind: "readme".to_string(),
    });
    files.push(GeneratedFile {
        path: "case.json".to_string(),
        kind: "case".to_string(),
    });
    case.files = files;
    Ok(())
}

/// Writes the case's two documents, rendered by the caller (`report::repro`): `README.md` and
/// `case.json` (the document `npgx repro --format json` prints, envelope included). Both are
/// already listed in [`Case::files`] by [`build`].
pub fn write_documents(case: &Case, readme: &str, json: &str) -> anyhow::Result<()> {
    let out = Path::new(&case.out_dir);
    write(out, "README.md", readme.as_bytes())?;
    write(out, "case.json", format!("{json}\n").as_bytes())
}

/// The device symbol the runner launches: the kernel JSON's `kernelName`, else the log's.
fn kernel_symbol(k: &KernelFacts, e: &aicore::FromError) -> Option<String> {
    k.kernel_symbol
        .clone()
        .or_else(|| e.device_symbol.clone())
        .or_else(|| (!k.kernel_name.is_empty()).then(|| k.kernel_name.clone()))
}

/// Every regular file below `root`, at most `max_depth` directory levels down, in file-name order
/// (depth first, as listed), links followed. The one directory walk of repro (graphs, kernels and
/// dumps are all found through it), on npgx's one walker [`crate::walk`]. Repro searches for
/// the inputs it can use: an unreadable directory is skipped, as an absent one is.
pub(crate) fn files_under(root: &Path, max_depth: usize) -> impl Iterator<Item = PathBuf> + '_ {
    crate::walk::files(root, max_depth, |_| {})
}
