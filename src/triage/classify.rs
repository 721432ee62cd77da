//! `npgx triage classify`: first causal error plus route for any captured output, without a
//! step tree (so without the step-based pre-classification).
//!
//! The file is streamed ([`crate::plog::reader`]) into the causal engine
//! ([`npgx_parsers::causal::CausalScanner`]); only its first
//! [`HEAD`](crate::plog::reader::HEAD) bytes are kept, for the accuracy / performance wording
//! of reports that hold no error and for the versions and framework the text names.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::causal::normalise::{has_lost_reset, strip_escapes};
use npgx_parsers::causal::{
    remedies_with_assert, route_remedy, table_remedy, CausalError, CausalScanner, Remedy, Shape,
    Tier,
};
use npgx_parsers::knowledge::{CauseKind, Phase};
use npgx_parsers::versions::{self, Framework};
use serde::{Deserialize, Serialize};

use super::rank_view::RankView;
use super::route::{
    route_error, route_prose, tolerance_below_precision, Confidence, Route, Routing,
};
use crate::plog::aicore::{assertion_for, point_device_readers};
use crate::plog::reader::{for_each_line_in, for_each_line_while, push_head, ReadStats};
use npgx_parsers::aicore::{Fact, KernelAssert};

/// Name of the document of `triage classify` ([`ClassifyDocument`], schema
/// `npgx.triage-classify`).
pub const SCHEMA_NAME: &str = "triage-classify";
/// Version of the `npgx.triage-classify` document (2: the envelope of `docs/json.md`, the shared
/// causal engine's fields, the `environment` route; 3: `phase`, `confidence`, `why`,
/// `candidates[]`, `settle`, and the error's `phase` evidence; within 3, the optional `ranks[]`
/// of a directory of rank logs, absent when no directory was given).
pub const SCHEMA_VERSION: u32 = 3;

/// A file `triage classify` could not read.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileError {
    pub file: PathBuf,
    pub message: String,
}

/// The fields of the `npgx.triage-classify` document (inside the envelope of docs/json.md):
/// what `--format json` writes and what the HTML report reads back.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ClassifyDocument<'a> {
    pub items: Cow<'a, [Classification]>,
    /// Files that could not be read.
    pub errors: Cow<'a, [FileError]>,
    /// Per directory given: its rank logs' first causal errors in one order (the first rank and
    /// the ranks it cascaded to, [`super::ranks`]). Absent when only files were given.
    #[serde(default, skip_serializing_if = "no_ranks")]
    pub ranks: Cow<'a, [RankView]>,
}

fn no_ranks(r: &[RankView]) -> bool {
    r.is_empty()
}

/// The classification of one captured log.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Classification {
    pub file: PathBuf,
    pub route: Route,
    pub sub_skill: Option<Cow<'static, str>>,
    pub rule: String,
    /// The keyword, code or phrase that fired.
    pub matched: Option<String>,
    /// The 1-based line the matched token is on.
    pub matched_line: Option<u64>,
    /// For the environment route: the package or component to fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The phase the route was read from (`capture`, `execution`, …), when one was.
    pub phase: Option<Phase>,
    /// The kind of the cause — what the user has to fix (`environment`, `resource`,
    /// `device-fault`, …) — when the evidence says (absent in documents before version 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<CauseKind>,
    /// How much the route is trusted (`high`: the error's own text decided; `medium`: its
    /// frames, its context, a keyword or a report's wording; `low`: the no-token fallback).
    /// Documents before version 3 do not state it (read as `low`).
    #[serde(default)]
    pub confidence: Confidence,
    /// One sentence: what decided the route (empty in documents before version 3).
    #[serde(default)]
    pub why: String,
    /// The first causal error, when the log has one.
    pub first_causal_error: Option<CausalError>,
    /// The ranked candidates (the first causal error first), each with its phase and route
    /// (none in documents before version 3).
    #[serde(default)]
    pub candidates: Vec<Candidate>,
    /// When the route is `undetermined` or `low`: what would settle it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settle: Option<String>,
    /// What to check or change for the first causal error (or the report's route), each with
    /// its source: the CANN report's own `Solution:` / `Possible Cause:` lines, quoted with their
    /// line, then the remedy table's row, then the report's stock lines that name nothing to check
    /// (absent in documents before it was added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy: Vec<Remedy>,
    /// The versions the text does not state, of `torch`, `torch_npu`, `CANN` and `chip` — for a
    /// program on another framework, that framework's instead of torch's (`MindSpore`,
    /// `PaddlePaddle`, `llama.cpp build`, `onnxruntime`; none for a program on CANN alone;
    /// `framework` when the text names none), a PyTorch program's engine the text shows
    /// (`vllm-ascend`, `sglang`, `dlinfer-ascend`, `deepspeed`), and
    /// `triton-ascend` where a Triton
    /// kernel was compiled: what to ask the author of a paste for (absent when it states them
    /// all, and in documents before it was added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
    /// The framework the text's program runs on, read from the names it prints (`pytorch`,
    /// `mindspore`, `paddlepaddle`, `llama.cpp`, `onnxruntime`, `opencv`, `cann`: ATC, pyACL or an
    /// AscendCL application; `unknown` when it names none): what `missing` asks
    /// for and the remedies' words follow it (absent from `triage analyze`, whose runs are
    /// PyTorch's, and in documents before it was added).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framework: Option<Framework>,
    /// For reports without an error (rules 3 and 4): the line that carries the symptom.
    pub evidence_line: Option<u64>,
    pub evidence_text: Option<String>,
    pub notes: Vec<String>,
}

/// One ranked candidate for the first causal error.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Candidate {
    pub line: u64,
    pub text: String,
    pub shape: Shape,
    pub tier: Tier,
    pub phase: Option<Phase>,
    /// The kind of the cause, when the evidence says (absent before version 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<CauseKind>,
    pub route: Route,
    pub rule: String,
    pub why: String,
}

impl Classification {
    /// Whether a causal error or a route was found (exit code 1 of `classify`): an error whose
    /// route the text cannot settle is still a finding.
    pub fn found(&self) -> bool {
        self.route != Route::Undetermined || self.first_causal_error.is_some()
    }
}

/// The classification a routing gives; CANNBot's sub-skills diagnose PyTorch programs on
/// torch.compile, so a program on another `framework` is named none.
fn from_routing(file: &Path, routing: Routing, framework: Framework) -> Classification {
    let Routing {
        route,
        rule,
        matched,
        matched_line,
        package,
        notes,
        phase,
        kind,
        confidence,
        why,
    } = routing;
    Classification {
        file: file.to_path_buf(),
        route,
        sub_skill: route
            .sub_skill()
            .filter(|_| framework == Framework::Torch)
            .map(Cow::Borrowed),
        rule,
        matched,
        matched_line,
        package,
        phase,
        kind,
        confidence,
        why,
        first_causal_error: None,
        candidates: Vec::new(),
        settle: None,
        remedy: Vec::new(),
        missing: Vec::new(),
        framework: None,
        evidence_line: None,
        evidence_text: None,
        notes,
    }
}

fn candidate(err: &CausalError) -> Candidate {
    let r = route_error(err);
    Candidate {
        line: err.line,
        text: err.text.chars().take(240).collect(),
        shape: err.shape,
        tier: err.tier,
        phase: r.phase,
        kind: r.kind,
        route: r.route,
        rule: r.rule,
        why: r.why,
    }
}

/// What settles a low-confidence route read from what a run printed, by its rule: the
/// comparison the text lacks.
fn evidence_settle(rule: &str) -> Option<&'static str> {
    match rule {
        "metric.speed-only" | "table.performance" => Some("the baseline the text lacks: what the speed should be (the same run on another device, with an earlier release, in eager mode, or the framework's published figure for this model and chip); with it, a profile of the slow run (msprof; on PyTorch, the Ascend PyTorch Profiler) shows where the time goes"),
        "metric.degenerate-text" => Some("the same prompt with the same sampling settings on a reference run (the CPU, a GPU or eager mode): text that degenerates there too comes from the settings, the chat template or the weights, not from the device's numbers"),
        "metric.half-saturated" => Some("the same computation in float32 (or on the CPU): a value that is really that large there is no overflow"),
        _ => None,
    }
}

/// What settles a route the text alone cannot, for a torch.compile run: the step results.
const SETTLE: &str = "run the layered triage (`npgx triage run SCRIPT`): the first failing step decides compile-error (steps 1–4) against the keyword rules (step 5), and its plogs hold the CANN detail";

/// The same for any other job (a server, a trainer): what the text lacks — the Python traceback
/// above an exception that came without one (`bare`), the log, the versions of the program's
/// framework and of the `engines` it shows without theirs (as `missing` names them), and the
/// plogs where the failure reached the device side (`device`: [`shows_device_side`]).
fn settle_logs(framework: Framework, engines: &[&str], bare: bool, device: bool) -> String {
    let versions: Vec<&str> = framework
        .version_names()
        .iter()
        .chain(engines)
        .copied()
        .chain(["CANN", "driver"])
        .collect();
    // The text shows no torch.compile run (that is [`SETTLE`]'s case): the ladder is not named.
    let traceback = if bare {
        "the Python traceback above the exception (its frames name the code and the library that raised it), "
    } else {
        ""
    };
    let versions = versions.join(", ");
    if device {
        format!(
            "read what the text lacks: {traceback}the log from its first error on, the versions ({versions}), and the failing process's plogs ({}) with `npgx plog` (and `npgx aicore` when they hold a device exception)",
            crate::plog::PLOG_LOCATION,
        )
    } else {
        format!("read what the text lacks: {traceback}the log from its first error on and the versions ({versions})")
    }
}

/// Words of a failure's device side (CANN's runtime and its calls, the collectives, the chip's
/// cores), lower case, besides a CANN error code or a runtime error number: where the error's
/// lines name none, the plogs hold nothing more about it.
const DEVICE_WORDS: &[&str] = &[
    "aclrt",
    "aclnn",
    "aclop",
    "aclmdl",
    "aclinit",
    "acl api",
    "acl error",
    "hccl",
    "hccp",
    "aicore",
    "ai core",
    "aivec",
    "ai vector",
    "aicpu",
    "rtstream",
    "stream synchronize",
    "synchronize stream",
    "error code is",
    "device(chipid",
    "tsch",
    "rtmalloc",
    "drvmem",
    "halmem",
];

/// Whether a text's lines reach the device side: a CANN error code, a runtime error number or a
/// word of [`DEVICE_WORDS`].
fn shows_device_side<'a>(mut text: impl Iterator<Item = &'a str>) -> bool {
    text.any(|t| {
        let l = t.to_ascii_lowercase();
        DEVICE_WORDS.iter().any(|w| l.contains(w))
            || npgx_parsers::cann_error::find_code(t).is_some()
            || npgx_parsers::causal::phase::runtime_number(t).is_some()
    })
}

/// The lines of a first causal error: its message, frames, scope and context.
fn error_lines(e: &CausalError) -> impl Iterator<Item = &str> {
    std::iter::once(e.message.as_str())
        .chain(e.frames.iter().map(|(_, f)| f.as_str()))
        .chain(e.scope.iter().map(|(_, t)| t.as_str()))
        .chain(e.context.iter().map(|(_, t)| t.as_str()))
}

/// Words of a torch.compile run (its frames, its backends, its logs), lower case.
const COMPILE_RUN: &[&str] = &[
    "torch.compile",
    "torch/_dynamo",
    "torch._dynamo",
    "torch/_inductor",
    "torch._inductor",
    "torchair",
    "npugraph_ex",
];

/// How to settle a route for a text: [`SETTLE`] when it shows a torch.compile run, else
/// [`settle_logs`].
fn settle<'a>(text: impl Iterator<Item = &'a str>, framework: Framework, bare: bool) -> String {
    let text: Vec<&str> = text.collect();
    if shows_compile_run(text.iter().copied()) {
        SETTLE.into()
    } else {
        settle_logs(
            framework,
            &[],
            bare,
            shows_device_side(text.iter().copied()),
        )
    }
}

/// Whether a text shows a torch.compile run ([`COMPILE_RUN`]).
fn shows_compile_run<'a>(mut text: impl Iterator<Item = &'a str>) -> bool {
    text.any(|t| {
        let l = t.to_ascii_lowercase();
        COMPILE_RUN.iter().any(|w| l.contains(w))
    })
}

/// The remedies of a text that shows no torch.compile run (a server's, a trainer's, an eager
/// script's log): no check runs a torch.compile script (`<SCRIPT>`: the layered triage, the
/// bisection), a route's remedy that only runs the ladder goes, and an accuracy or performance
/// report gets the remedy of a run without a graph (where the first NaN is born, from an
/// msprobe dump, for the frameworks msprobe dumps — PyTorch and MindSpore —, from llama.cpp's
/// own operator tests and tensor prints for llama.cpp's, its `@llama.cpp` row; where the time
/// goes, from a profile) instead of comparing a graph run with eager, and names no CANNBot
/// sub-skill that compares them, nor its compile-error one for a build's or a kernel's compiler.
fn without_a_graph(c: &mut Classification, file: Option<&str>, framework: Framework) {
    let no_graph = match c.route {
        Route::Accuracy
            if matches!(
                framework,
                Framework::Torch | Framework::MindSpore | Framework::Unknown | Framework::Ggml
            ) =>
        {
            Some(("route:accuracy", "route:accuracy-no-graph"))
        }
        Route::Performance => Some(("route:performance", "route:performance-no-graph")),
        _ => None,
    };
    if let Some((graph, without)) = no_graph {
        let at = c.remedy.iter().position(|r| r.matched == graph);
        if at.is_some() || c.remedy.is_empty() {
            if let Some(n) = table_remedy(without, file, framework) {
                match at {
                    Some(k) => c.remedy[k] = n,
                    None => c.remedy.push(n),
                }
            }
        }
    }
    // Without a graph there is no compile step to tell from a run: an abstention asks what the
    // cited line states instead of when it failed.
    if c.rule == "abstain.no-phase-evidence" {
        c.why = "no phase evidence and no keyword: the text does not place the failure in a phase of the run".into();
        c.notes
            .retain(|n| !n.starts_with("candidates: compile-error"));
        c.notes.push("no torch.compile run in the text: read what the cited line itself states (a setting, a value, an address, a file it names) before asking when it failed".into());
    }
    // CANNBot's accuracy and performance sub-skills compare a graph run with eager; its
    // compile-error sub-skill diagnoses a graph's tracing, compile and capture (an ACL graph's
    // too), not a C++ build's or a kernel's compiler.
    let graph_phase =
        matches!(c.phase, Some(Phase::Tracing | Phase::Capture)) || c.rule == "shape.wrapper-class";
    if matches!(c.route, Route::Accuracy | Route::Performance)
        || (c.route == Route::CompileError && !graph_phase)
    {
        c.sub_skill = None;
    }
    c.remedy.retain(|r| r.matched != "route:compile-error");
    for r in &mut c.remedy {
        r.check.retain(|k| !k.contains("<SCRIPT>"));
    }
}

/// Whether a first causal error is a Python exception that came without its traceback.
fn bare_exception(err: Option<&CausalError>) -> bool {
    err.is_some_and(|e| e.exception_type.is_some() && e.frames.is_empty())
}

/// How pasted text (`npgx mcp`'s and the Python module's `text`) is named in a classification's
/// `file`.
pub const PASTED: &str = "<text>";

/// The file a remedy's commands are written for: none for pasted text, whose commands keep the
/// `<LOG_FILE>` placeholder (a command on `<text>` could not run).
fn commands_file(file: &Path) -> Option<&str> {
    file.to_str().filter(|f| *f != PASTED)
}

/// Routes a first causal error found in `file` (`assert`: the kernel assertion that belongs to
/// it, by `aicore`'s grouping) of a program on `framework` (its remedies name that framework's
/// switches).
pub fn classify_causal(
    file: &Path,
    err: CausalError,
    assert: Option<Fact<KernelAssert>>,
    framework: Framework,
) -> Classification {
    classify_ranked(file, vec![err], assert, framework)
}

/// Routes the first of `ranked` (best first), keeping the others as candidates. Abstains —
/// `undetermined`, with the candidates and what would settle it — when the only evidence is a
/// weak line (a traceback without its exception, a bare `raise`) that says nothing of its
/// phase: the fallback never outranks evidence, and a guess would send the engineer to the
/// wrong sub-skill.
pub fn classify_ranked(
    file: &Path,
    ranked: Vec<CausalError>,
    assert: Option<Fact<KernelAssert>>,
    framework: Framework,
) -> Classification {
    let Some(err) = ranked.first().cloned() else {
        return classify_found(file, None, "");
    };
    let routing = route_error(&err);
    let weak = err.tier == Tier::Soft && err.phase.is_none();
    let mut c = if weak && routing.confidence == Confidence::Low {
        let mut c = from_routing(
            file,
            Routing::new(Route::Undetermined, "abstain.weak-evidence", None),
            framework,
        );
        c.confidence = Confidence::Low;
        c.why = format!(
            "the only error is a weak line ({}) with no phase evidence: not enough to route",
            err.evidence.rule
        );
        c
    } else {
        from_routing(file, routing, framework)
    };
    // A cause a warning states (a signal, [`Tier::Signal`], of the environment's or the
    // knowledge's rows) may not be what stopped the run: no more than medium, and the note says
    // what to ask for.
    let warned = err.tier == Tier::Signal
        && matches!(&*err.evidence.rule, "environment.line" | "phrase.line");
    if warned && c.confidence == Confidence::High {
        c.confidence = Confidence::Medium;
        c.notes.push("the cited line is a warning: if the run failed later, ask for the output up to its failure".into());
    }
    if c.route == Route::Undetermined || c.confidence == Confidence::Low {
        // A Python exception that came without its traceback: the frames say more than logs.
        let bare = bare_exception(Some(&err));
        c.settle = Some(settle(error_lines(&err), framework, bare));
    }
    c.candidates = ranked.iter().map(candidate).collect();
    if c.route != Route::Undetermined {
        c.remedy = remedies_with_assert(
            &err,
            assert.as_ref().map(|a| (a.line, &a.value)),
            commands_file(file),
            framework,
        );
        if c.remedy.is_empty() {
            c.remedy = route_remedy(c.route.as_str(), commands_file(file), framework)
                .into_iter()
                .collect();
        }
        // A rule the router read from an error without phase evidence (a failed comparison of
        // values) has its remedy first; a phase's rules are `remedies`' own, in its order.
        if err.phase.is_none() {
            if let Some(own) =
                table_remedy(&format!("rule:{}", c.rule), commands_file(file), framework)
            {
                if !c.remedy.iter().any(|r| r.matched == own.matched) {
                    c.remedy.insert(0, own);
                }
            }
        }
    }
    c.first_causal_error = Some(err);
    c
}

/// Classifies the first causal error (if any) or, without one, the report's wording in `head`.
pub fn classify_found(file: &Path, err: Option<CausalError>, head: &str) -> Classification {
    let framework = versions::stated(head).framework;
    if let Some(err) = err {
        return classify_causal(file, err, None, framework);
    }
    match route_prose(head) {
        Some((routing, line, evidence)) => {
            // The rule's own remedy (a saturated float16 value) before the route's.
            let own = table_remedy(
                &format!("rule:{}", routing.rule),
                commands_file(file),
                framework,
            );
            let mut c = from_routing(file, routing, framework);
            c.evidence_line = Some(line as u64);
            c.matched_line = Some(line as u64);
            c.evidence_text = Some(evidence);
            c.notes.push(
                match c.rule.as_str() {
                    "metric.degenerate-text" => "no error stack: routed by the text the model generated",
                    "metric.speed-only" => {
                        "no error stack: routed by the speeds or durations the run printed"
                    }
                    "metric.cpu-fallback" | "metric.host-weights" => {
                        "no error stack: routed by where the run computed"
                    }
                    r if r.starts_with("metric.") => {
                        "no error stack: routed by the numbers the run printed (its losses, norms, values)"
                    }
                    _ => "no error stack: routed by the report's tables or wording (rules 3–4)",
                }
                .into(),
            );
            c.remedy = own
                .into_iter()
                .chain(route_remedy(
                    c.route.as_str(),
                    commands_file(file),
                    framework,
                ))
                .collect();
            // A low answer says what would settle it (its rule's comparison: [`evidence_settle`],
            // chosen where every answer's `settle` is finished).
            if c.confidence == Confidence::Low {
                c.settle = Some(settle(head.lines(), framework, false));
            }
            c
        }
        None => {
            let mut c = from_routing(
                file,
                Routing::new(Route::Undetermined, "none", None),
                framework,
            );
            c.confidence = Confidence::Low;
            c.why = "no error, no accuracy or performance report".into();
            c.notes
                .push("no error, no accuracy or performance report: nothing to route".into());
            c.settle = Some(settle(head.lines(), framework, false));
            c
        }
    }
}

/// Streams one file through the causal engine and classifies it. Memory is bounded (the
/// engine's window, the reader's buffer and [`HEAD`](crate::plog::reader::HEAD)).
pub fn classify_file(path: &Path) -> anyhow::Result<Classification> {
    classify_lines(path, |f| for_each_line_while(path, f))
        .with_context(|| crate::error::CannotRead::new(path))
}

/// Points the remedies' `npgx aicore` / `npgx repro --from-aicore` checks at the failing
/// process's plogs (`plogs`, else `<PLOG_DIR>`) when the text (`read` hands its lines over
/// again) holds no device-error record ([`point_device_readers`]).
pub(super) fn device_readers_to_plogs(
    c: &mut Classification,
    plogs: Option<&str>,
    read: impl FnOnce(&mut dyn FnMut(u64, &[u8]) -> bool) -> std::io::Result<ReadStats>,
) {
    let file = commands_file(&c.file).map(str::to_string);
    point_device_readers(&mut c.remedy, file.as_deref(), plogs, read);
}

/// Classifies pasted text as [`classify_file`] would a file holding it; `label` names it in the
/// classification (`file`).
pub fn classify_text(label: &Path, text: &str) -> anyhow::Result<Classification> {
    classify_lines(label, |f| {
        for_each_line_in(text.as_bytes(), |no, line| {
            f(no, line);
        })
    })
    .with_context(|| crate::error::CannotRead::new(label))
}

/// The classification of the lines `read` hands over, one call of its callback per line.
fn classify_lines(
    path: &Path,
    read: impl Fn(&mut dyn FnMut(u64, &[u8]) -> bool) -> std::io::Result<ReadStats>,
) -> std::io::Result<Classification> {
    let mut scanner = CausalScanner::new();
    let mut cut = npgx_parsers::causal::cut::CutReader::new();
    let mut head = String::new();
    let mut not_text = 0u64;
    let stats = read(&mut |no, line| {
        let text = std::str::from_utf8(line).ok();
        if text.is_none() || memchr::memchr(0, line).is_some() {
            not_text += 1;
        }
        // A logger's colours are no text for any reader here (the router's, the cut reader's,
        // the versions'), as they are none for the causal scanner's.
        let plain = (memchr::memchr(0x1b, line).is_some() || has_lost_reset(line))
            .then(|| strip_escapes(&String::from_utf8_lossy(line)))
            .flatten()
            .map(String::into_bytes);
        let line = plain.as_deref().unwrap_or(line);
        scanner.push(no, line);
        cut.push(no, &String::from_utf8_lossy(line));
        push_head(&mut head, line);
        true
    })?;
    let saw_assert = scanner.saw_kernel_assert();
    let ranked = scanner.finish_ranked();
    let stated = versions::stated(&head);
    let mut c = match ranked.first() {
        None => classify_found(path, None, &head),
        Some(first) => {
            let assert = assertion_for(first, saw_assert, &read);
            classify_ranked(path, ranked, assert, stated.framework)
        }
    };
    device_readers_to_plogs(&mut c, None, &read);
    // A failed comparison whose tolerance is finer than the precision of the type it compares.
    if c.rule == "shape.comparison-failed" {
        c.notes.extend(tolerance_below_precision(&head));
    }
    c.missing = stated.missing().into_iter().map(str::to_string).collect();
    c.framework = Some(stated.framework);
    // One answer for the whole text to "is this a torch.compile run?": the head, and the
    // error's own lines wherever in the file they stood. It decides the remedies and `settle`
    // (which then names the engines the text shows without their versions, as `missing` does).
    let own = c.first_causal_error.iter().flat_map(|e| {
        std::iter::once(e.message.as_str()).chain(e.frames.iter().map(|(_, f)| f.as_str()))
    });
    let compiled = shows_compile_run(head.lines().chain(own));
    if !compiled {
        without_a_graph(&mut c, commands_file(path), stated.framework);
    }
    if c.settle.is_some() {
        c.settle = Some(if let Some(own) = evidence_settle(&c.rule) {
            own.into()
        } else if compiled {
            SETTLE.into()
        } else {
            let engines: Vec<&str> = stated.missing_engines().collect();
            // The plogs where the error's lines (the text's, without one) reach the device.
            let device = match &c.first_causal_error {
                Some(e) => shows_device_side(error_lines(e)),
                None => shows_device_side(head.lines()),
            };
            settle_logs(
                stated.framework,
                &engines,
                bare_exception(c.first_causal_error.as_ref()),
                device,
            )
        });
    }
    // What the text cannot show: it was cut inside a traceback or a report, or lines were left
    // out of it.
    c.notes.extend(cut.finish().iter().map(|k| k.sentence()));
    if not_text > 0 {
        c.notes.push(format!(
            "{not_text} of {} lines hold NUL bytes or invalid UTF-8 (read with replacement characters)",
            stats.lines
        ));
    }
    if stats.long_lines > 0 {
        c.notes.push(format!(
            "{} line(s) longer than {} bytes: only their head was read ({} bytes skipped)",
            stats.long_lines,
            crate::plog::reader::MAX_LINE,
            stats.dropped_bytes
        ));
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    // CANNBot's sub-skills are for PyTorch programs: an ONNX Runtime or OpenCV paste on the same
    // route names none.
    #[test]
    fn cannbot_sub_skills_only_for_pytorch() {
        let sub = |text: &str| {
            let c = classify_text(Path::new(PASTED), text).expect("classified");
            (c.route, c.framework, c.sub_skill.map(|s| s.into_owned()))
        };
        let torch = sub("import torch_npu\nRuntimeError: x.cpp:1 NPU function error: aclrtSynchronizeStream, error code is 507015\n[Error]: The aicore execution is abnormal.\n");
        assert_eq!(torch.0, Route::RuntimeError);
        assert_eq!(torch.2.as_deref(), Route::RuntimeError.sub_skill());
        for (text, framework) in [
            ("onnxruntime.capi.onnxruntime_pybind11_state.Fail: x\nRuntimeError: x.cpp:1 NPU function error: aclrtSynchronizeStream, error code is 507015\n[Error]: The aicore execution is abnormal.\n", Framework::OnnxRuntime),
            ("cv2.dnn raised\nRuntimeError: x.cpp:1 NPU function error: aclrtSynchronizeStream, error code is 507015\n[Error]: The aicore execution is abnormal.\n", Framework::OpenCv),
        ] {
            let (route, f, s) = sub(text);
            assert_eq!((route, f, s), (Route::RuntimeError, Some(framework), None), "{text}");
        }
    }

    // A text that names no framework names no CANNBot sub-skill and no check that runs a
    // torch.compile script: the framework is asked first; the same error under PyTorch's names
    // keeps both where the text shows a torch.compile run (CANNBot's compile-error sub-skill
    // diagnoses a graph's tracing, compile and capture, so an eager script's operator compile
    // gets none).
    #[test]
    fn an_unknown_framework_is_asked_before_pytorchs_steps() {
        let error = "RuntimeError: ({'errCode': 'E90003', 'detailed_cause': 'x is not supported'}, 'Compile operator failed, cause: Template constraint')\n";
        let scripts = |c: &Classification| {
            c.remedy
                .iter()
                .flat_map(|r| &r.check)
                .filter(|k| k.contains("<SCRIPT>"))
                .count()
        };
        let bare = classify_text(Path::new(PASTED), error).expect("classified");
        assert_eq!(
            (bare.route, bare.framework, bare.sub_skill.is_none()),
            (Route::CompileError, Some(Framework::Unknown), true)
        );
        assert_eq!(bare.missing, ["framework", "CANN", "chip"]);
        assert_eq!(scripts(&bare), 0);
        // The route's remedy only runs the ladder: without a torch.compile run it goes.
        let ladder =
            |c: &Classification| c.remedy.iter().any(|r| r.matched == "route:compile-error");
        assert!(!ladder(&bare));
        let torch = classify_text(Path::new(PASTED), &format!("import torch\n{error}"))
            .expect("classified");
        assert_eq!(torch.framework, Some(Framework::Torch));
        assert!(torch.sub_skill.is_none());
        // PyTorch's names without a torch.compile run (an eager script, a server): no script to
        // run the ladder on either.
        assert_eq!(scripts(&torch), 0);
        assert!(!ladder(&torch));
        let compiled = classify_text(
            Path::new(PASTED),
            &format!("import torch\nmodel = torch.compile(model)\n{error}"),
        )
        .expect("classified");
        assert!(scripts(&compiled) > 0 && ladder(&compiled));
        assert!(compiled.sub_skill.is_some());
    }

    // Wider-world batch 43's grading: a cause a warning states is no more than medium.
    #[test]
    fn a_warned_cause_is_no_more_than_medium() {
        let warned = "[W  5/ 9 20:23:15.461 .../src/driver/huawei_ascend_npu/utility.cc:57 InitializeAscendCL] CANN version mismatch. The build version is 5.1.0, but the current environment version is 5.1.2.\n[I  5/ 9 20:23:15.495 ...r/src/driver/huawei_ascend_npu/engine.cc:41 Context] properties:\n";
        let c = classify_text(Path::new(PASTED), warned).expect("classified");
        assert_eq!(
            (c.route, c.confidence),
            (Route::Environment, Confidence::Medium)
        );
        assert!(c
            .notes
            .iter()
            .any(|n| n.contains("the cited line is a warning")));
        let stated = warned.replace("[W  5/ 9", "[E  5/ 9");
        let c = classify_text(Path::new(PASTED), &stated).expect("classified");
        assert_eq!(c.confidence, Confidence::High);
    }

    // A paste that names a device fault without its record sends the checks that read device
    // records to the plogs; one that holds the record keeps them on itself.
    #[test]
    fn device_readers_read_the_plogs_of_a_paste_without_records() {
        let checks = |text: &str| -> Vec<String> {
            classify_text(Path::new(PASTED), text)
                .expect("classified")
                .remedy
                .into_iter()
                .flat_map(|r| r.check)
                .filter(|c| c.starts_with("npgx aicore") || c.contains("--from-aicore"))
                .collect()
        };
        let named = "RuntimeError: x.cpp:1 NPU function error: aclrtSynchronizeStream, error code is 507014\n[Error]: The aicore execution times out.\n";
        assert_eq!(
            checks(named),
            [
                "npgx aicore <PLOG_DIR>",
                "npgx repro --from-aicore <PLOG_DIR> -o <CASE_DIR>"
            ]
        );
        let held = "RuntimeError: x.cpp:1 NPU function error: aclrtSynchronizeStream, error code is 507015\n[Error]: The aicore execution is abnormal.\nEZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:0, dieId:0), serial number is 3, there is an aivec error exception, core id is 5, error code = 0x800000.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:1]\n";
        let kept = checks(held);
        assert!(!kept.is_empty(), "{kept:?}");
        assert!(kept.iter().all(|c| !c.contains("<PLOG_DIR>")), "{kept:?}");
    }

    // A report routed by a rule with a remedy of its own (a saturated float16 value) gets that
    // remedy first, then its route's (here without a graph: where the first NaN or Inf is born).
    #[test]
    fn a_report_rules_own_remedy_comes_first() {
        let text = "tensor(65504., device='npu:0', dtype=torch.float16)\n";
        let c = classify_text(Path::new(PASTED), text).expect("classified");
        let matched: Vec<&str> = c.remedy.iter().map(|r| r.matched.as_str()).collect();
        assert_eq!(c.route, Route::Accuracy);
        assert_eq!(
            matched,
            ["rule:metric.half-saturated", "route:accuracy-no-graph"]
        );
        // No graph run to compare with eager: no CANNBot sub-skill that compares them.
        assert!(c.sub_skill.is_none());
        // A coloured INFO record is read through its colours by the router too: its words of
        // speed are the program's own, no report.
        let coloured = "\x1b[32mINFO\x1b[0m 08-06 10:40:29 [attention.py:20] Using FlashAttention for faster inference\n";
        let s = classify_text(Path::new(PASTED), coloured).expect("classified");
        assert_ne!(s.route, Route::Performance, "{:?}", s.rule);
        // A loss scale driven to single digits (wider-world batch 40).
        let scaler = "Gradient overflow. Skipping step\nLoss scaler reducing loss scale to 4.0\n";
        let s = classify_text(Path::new(PASTED), scaler).expect("classified");
        let matched: Vec<&str> = s.remedy.iter().map(|r| r.matched.as_str()).collect();
        assert_eq!(
            matched,
            ["rule:metric.loss-scale", "route:accuracy-no-graph"]
        );
        // A low answer says what would settle it: here the float32 run.
        assert!(c.settle.as_deref().is_some_and(|s| s.contains("float32")));
        // Degenerate generation (batch 28): the reference run settles it, and its own remedy.
        let c = classify_text(
            Path::new(PASTED),
            "> who are you\nthe of of the and the of and a of the and of the the of and a and of\n",
        )
        .expect("classified");
        assert_eq!(
            (
                c.route,
                c.confidence,
                c.remedy.first().map(|r| r.matched.as_str())
            ),
            (
                Route::Accuracy,
                Confidence::Low,
                Some("rule:metric.degenerate-text")
            )
        );
        assert!(c
            .settle
            .as_deref()
            .is_some_and(|s| s.contains("reference run")));
        // A test's failed comparison (batch 31): an error routed by a rule beside its phase has
        // that rule's remedy first.
        let c = classify_text(
            Path::new(PASTED),
            "AssertionError: Output 'c' does not match golden.\n  Mismatched elements: 4096/4096\n",
        )
        .expect("classified");
        assert_eq!(
            (c.route, c.remedy.first().map(|r| r.matched.as_str())),
            (Route::Accuracy, Some("rule:shape.comparison-failed"))
        );
        // A tolerance finer than float16's rounding (batch 31's grading): said, with the type's
        // default; none for float32.
        let fp16 = "Expected: output c (64x64, FP16) matches the golden within rtol=1e-05, atol=1e-05\nAssertionError: Output 'c' does not match golden.\n  Mismatched elements: 4096/4096\n  rtol=1e-05, atol=1e-05\n";
        let c = classify_text(Path::new(PASTED), fp16).expect("classified");
        assert!(
            c.notes
                .iter()
                .any(|n| n.contains("finer than float16's rounding")),
            "{:?}",
            c.notes
        );
        let c =
            classify_text(Path::new(PASTED), &fp16.replace("FP16", "FP32")).expect("classified");
        assert!(
            !c.notes.iter().any(|n| n.contains("tolerance")),
            "{:?}",
            c.notes
        );
        // An accuracy report of llama.cpp: its own tools, not msprobe (which does not dump it).
        let c = classify_text(
            Path::new(PASTED),
            "llama_model_loader: loaded meta data with 30 key-value pairs\nthe answers are wrong, accuracy is far below the CPU's\n",
        )
        .expect("classified");
        assert_eq!(
            (c.route, c.remedy.first().map(|r| r.matched.as_str())),
            (Route::Accuracy, Some("route:accuracy-no-graph@llama.cpp"))
        );
        // Speeds alone: the baseline (batch 25's grading: `settle` was missing).
        let c = classify_text(
            Path::new(PASTED),
            "Train: 1%| | 68/9153 [10:53:27<831:36:06, 329.53s/it]\n",
        )
        .expect("classified");
        assert_eq!(
            (c.route, c.confidence),
            (Route::Performance, Confidence::Low)
        );
        assert!(c
            .settle
            .as_deref()
            .is_some_and(|s| s.starts_with("the baseline")));
    }

    // What settles an undetermined route follows what the text is: the ladder for a
    // torch.compile run, the plogs, the log and the versions for any other job.
    #[test]
    fn settle_names_the_ladder_only_for_a_compile_run() {
        let label = Path::new(PASTED);
        let server = "(Actor pid=1) [2026-01-01 00:00:00,188 E 1 1] logging.cc:501: *** SIGSEGV received at time=1 on cpu 3 ***\n";
        let c = classify_text(label, server).expect("classified");
        assert_eq!(c.route, Route::Undetermined);
        let (torch, unknown) = (Framework::Torch, Framework::Unknown);
        // A text that names no framework asks which, and names no ladder.
        assert_eq!(
            c.settle.as_deref(),
            Some(settle_logs(unknown, &[], false, false).as_str())
        );
        assert!(!settle_logs(torch, &[], false, false).contains("triage run"));
        assert!(
            settle_logs(unknown, &[], false, false).contains("versions (framework, CANN, driver)")
        );
        // The plogs only where the error reaches the device side (a CANN code, a runtime
        // number, an ACL or HCCL call): a converter's own check or a segfault of a Python
        // process leaves nothing in them.
        assert!(!c.settle.as_deref().unwrap_or("").contains("plog"));
        for device in [
            "aclrtSynchronizeStream failed",
            "EZ9999: Inner Error!",
            "ret 107000",
        ] {
            let s = settle([device].into_iter(), unknown, false);
            assert!(s.contains("npgx plog"), "{device}: {s}");
        }
        let frames = ["/x/torch/_dynamo/eval_frame.py _fn", "/x/app.py f"];
        assert_eq!(settle(frames.into_iter(), torch, false), SETTLE);
        assert_eq!(
            settle(["compiled with torchair"].into_iter(), torch, false),
            SETTLE
        );
        assert_eq!(
            settle(["vllm serve"].into_iter(), torch, false),
            settle_logs(torch, &[], false, false)
        );
        let nothing = classify_text(label, "hello\n").expect("classified");
        assert_eq!(
            nothing.settle.as_deref(),
            Some(settle_logs(unknown, &[], false, false).as_str())
        );
        // An exception without its traceback asks for it first, and the versions asked are the
        // program's framework's.
        let paddle = "W0915 11:23:51.373410 26492 custom_operator.cc:969] paddle/phi/core op registered.\nTypeError: __init__() got an unexpected keyword argument 'pad_params'\n";
        let c = classify_text(label, paddle).expect("classified");
        let s = c.settle.expect("a settle");
        assert!(
            s.contains("the Python traceback above the exception"),
            "{s}"
        );
        assert!(s.contains("(PaddlePaddle, CANN, driver)"), "{s}");
        // An engine the text shows without its version is asked in `settle` as in `missing`.
        let sglang = "  File \"/x/site-packages/sglang/srt/utils.py\", line 9, in cast\n    t = torch_npu.f(x)\nNameError: name 'torch_npu' is not defined\n";
        let c = classify_text(label, sglang).expect("classified");
        assert!(c.missing.contains(&"sglang".to_string()), "{:?}", c.missing);
        let s = c.settle.expect("a settle");
        assert!(
            s.contains("(torch, torch_npu, sglang, CANN, driver)"),
            "{s}"
        );
    }
}
