//! The phase of a causal error: where in a `torch.compile` run it happened — environment,
//! Dynamo tracing, AOT / backend compile, ACL graph capture, execution, collective, host — and
//! what kind of failure it is, read from the error's own text first and from what surrounds it
//! second. Every fact comes from [`crate::knowledge`]; this module only orders the evidence.
//!
//! Evidence, strongest first (the first that speaks decides):
//! 0. **kind before phase** — the error's own text states a cause whose kind settles the route
//!    whatever the phase it surfaced in: a broken environment (a missing module, library or CANN
//!    function, an initialisation the installed stack cannot do) or exhausted memory. Users fix
//!    these by installing, upgrading or freeing memory, never by changing the model, so capture
//!    frames or compile frames around them do not count;
//! 1. **capture** — an ACL graph capture API or message in the error, its frames or the wrapper
//!    it was found under, unless the error itself is a collective failure (a remote rank that
//!    does not answer is not a capture problem) or capture had finished and only replay fails;
//! 2. **the error itself** — an environment message, its shape (graph break, recompile, kernel
//!    assertion, environment line), a compile-stack exception class, a CANN code (known code,
//!    else its module family; an operator check takes the phase of its caller: execution under
//!    an aclnn call — its name or one of its return codes in the error —, compile elsewhere; an
//!    inner code's line that names GE's compile stage in brackets outside an aclnn call,
//!    `[InferShape]`, is that stage's), a runtime error number, a torch_npu hint, an API name;
//!    last, the backend compiler's wrapper it was raised under (`BackendCompilerFailed:
//!    backend='atbgraph' raised:` over a `TypeError` that says nothing of a phase: the compile,
//!    rule 1's keyword — before its frames and context);
//! 3. **its frames** — the innermost frame whose module has a known phase;
//! 4. **its context** — the codes, numbers and hints of the wrapper and the neighbouring error
//!    lines of the same failure (a device hint printed next to a generic wrapper).
//!
//! Keywords and the no-token fallback are the router's, after all of these: a fallback never
//! outranks evidence.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use super::{CausalError, Shape};
use crate::cann_error::find_code;
use crate::knowledge::{self, CauseKind, Nature, Phase};
use crate::line_prefix::{strip_prefixes, LinePrefix};
use crate::needles::Needles;

/// Where the phase was read, which decides how much it is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// The error's own text.
    Error,
    /// The error's traceback frames.
    Frames,
    /// The wrapper or neighbouring error lines of the same failure.
    Context,
}

/// The phase of one error and the evidence for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PhaseEvidence {
    pub phase: Phase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nature: Option<Nature>,
    /// The rule that read it (`capture.context`, `shape.cann-code-family`, …).
    pub rule: Cow<'static, str>,
    /// The token, code or phrase.
    pub token: String,
    /// The 1-based line the token is on.
    pub line: u64,
    pub source: Source,
    /// The knowledge row's meaning and source, when a row decided.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fact: Option<String>,
    /// What the user has to fix, beside where it surfaced (absent when neither the nature nor
    /// the phase says; documents before it was added read as absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<CauseKind>,
}

impl PhaseEvidence {
    /// Whether the kind of the cause settles the route whatever the phase: a broken
    /// environment, or exhausted memory (`memory` nature: device or host memory, not stream or
    /// event slots, which fail because a capture needs them).
    pub fn settled_by_kind(&self) -> bool {
        self.kind == Some(CauseKind::Environment) || self.nature == Some(Nature::Memory)
    }

    /// Whether the error is a collective's failure a peer may have caused (a wait or a timeout
    /// on another rank, a lost link), which cross-rank readings put behind the other ranks'
    /// errors: the collective phase, except a local resource or memory the collective could not
    /// get, this host's own set-up (a port this host could not bind, EJ0003; an HCCP another
    /// process still holds, EJ0001: nature `environment`) or what this rank asked of the call (a
    /// parameter, a dtype or reduction it does not support).
    pub fn waits_on_peers(&self) -> bool {
        self.phase == Phase::Collective
            && !matches!(
                self.nature,
                Some(
                    Nature::Resource
                        | Nature::Memory
                        | Nature::Environment
                        | Nature::Parameter
                        | Nature::Unsupported
                )
            )
    }
}

fn ev(
    phase: Phase,
    nature: Option<Nature>,
    rule: &'static str,
    token: impl Into<String>,
    line: u64,
    source: Source,
) -> PhaseEvidence {
    PhaseEvidence {
        phase,
        nature,
        rule: Cow::Borrowed(rule),
        token: token.into(),
        line,
        source,
        fact: None,
        kind: CauseKind::of(phase, nature),
    }
}

fn with_fact(mut e: PhaseEvidence, f: &knowledge::Fact) -> PhaseEvidence {
    e.fact = Some(format!("{} [{}]", f.meaning, f.source));
    e
}

/// A runtime error number (107xxx parameter/usage, 207xxx resource, 507xxx execution, 500xxx
/// internal) after one of the phrases CANN and torch_npu print it with (the phrase starting a
/// word: `interpret 200000` has none), or in brackets with the bracketed description after it
/// at the start of a message (the MindX SDK's `[507011][Error code unknown] Failed to model
/// infer execute`); ACL's own return codes (100xxx and 148xxx usage, 200xxx resource, 300xxx
/// storage: round numbers that counts and timeouts are too) and aclnn's (161001 and 161002
/// parameter, 361001 runtime, 561000–561003 and 561101–561112 inner) only after a phrase that
/// calls the
/// number an error or return code (`errorCode = 100002`, `ret = 200000`, an operator's `errno:`;
/// not `ret 100000 samples` or `failed: 300000 ms`). The Ascend samples' `error:507011` counts
/// with the number right after its own word (not an exception's payload, `KeyError: 107002`).
pub fn runtime_number(line: &str) -> Option<u64> {
    // The phrases that call the number an error code or a call's return code, then the ones
    // that may name any number (`ret 100000 samples`, `failed: 300000 ms`).
    const CODE_LEADS: usize = 16;
    const LEADS: &[&str] = &[
        // dicp's and other native wrappers' `failed with return code 161002`.
        "return code ",
        "return code: ",
        "error code is ",
        "error code:",
        "errcode=",
        "runtime result = ",
        "runtime result=",
        "retcode: ",
        "retcode is ",
        "error code: ",
        "errorcode = ",
        "errorcode=",
        // An operator's launch failure (`launch failed for Range, errno:561103.`).
        "errno:",
        "errno=",
        "ret=",
        "ret = ",
        "ret ",
        "failed: ",
        // The Ascend samples' `Execute model(…) error:507011`.
        BARE_ERROR_LEAD,
        // ONNX Runtime's execution providers: `CANN failure 500002: ACL_ERROR_GE_FAILURE ; …`
        // (the number then a colon, below: `node failure 107312 ms ago` is none).
        FAILURE_LEAD,
    ];
    // Asked of every line the causal engine reads: the leads' searchers are built once.
    static LEAD: LazyLock<Needles> = LazyLock::new(|| Needles::new(LEADS.iter().copied()));
    // The runtime's (107xxx, 207xxx, 507xxx) and ACL's (500xxx) return codes, and ACL's own
    // usage, resource and storage codes, as torch_npu's AclErrorCode table lists them, and
    // aclnn's return codes.
    let in_range = |n: u64| {
        matches!(
            n,
            107_000..=107_999 | 207_000..=207_999 | 500_000..=500_999 | 507_000..=507_999
        )
    };
    let code_only = |n: u64| {
        matches!(
            n,
            100_000..=100_999
                | 148_000..=148_999
                | 200_000..=200_999
                | 300_000..=300_999
        ) || aclnn_return_code(n)
    };
    // `[507011][…`: a bracketed number alone (`[107001] loss 2.3`, a step or a pid) is none.
    let bracketed = line
        .trim_start()
        .strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .filter(|(n, after)| n.bytes().all(|b| b.is_ascii_digit()) && after.starts_with('['))
        .and_then(|(n, _)| n.parse::<u64>().ok())
        .filter(|&n| in_range(n));
    if bracketed.is_some() {
        return bracketed;
    }
    let l = line.to_ascii_lowercase();
    let number = LEAD.matches(l.as_bytes()).find_map(|(at, after)| {
        // A lead starts a word, or a word's capitalised part (`aclRet = 507018`, `rtRet=507000`):
        // `interpret 200000` has none. (Lower-casing keeps the bytes' places.)
        let (b, first) = (line.as_bytes(), line.as_bytes().get(at).copied());
        let word = at.checked_sub(1).map(|k| b[k]).is_none_or(|prev| {
            !prev.is_ascii_alphanumeric()
                || prev.is_ascii_lowercase() && first.is_some_and(|c| c.is_ascii_uppercase())
        });
        let lead = l.get(at..after)?;
        if lead == BARE_ERROR_LEAD {
            let own_word = at
                .checked_sub(1)
                .is_none_or(|k| !b[k].is_ascii_alphanumeric());
            if !own_word || !b.get(after).is_some_and(u8::is_ascii_digit) {
                return None;
            }
        }
        let r = l.get(after..)?.trim_start();
        let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
        let n = r[..end].parse::<u64>().ok()?;
        let colon = lead != FAILURE_LEAD || r[end..].starts_with(':');
        let code = LEADS[..CODE_LEADS].contains(&lead);
        (word && colon && (in_range(n) || code && code_only(n))).then_some(n)
    });
    number
}

/// One of aclnn's return codes (the ACLNN-RC rows: parameter, runtime and inner errors).
fn aclnn_return_code(n: u64) -> bool {
    matches!(
        n,
        161_001 | 161_002 | 361_001 | 561_000..=561_003 | 561_101..=561_112
    )
}

/// The Ascend samples' lead of a runtime number (`error:507011`).
const BARE_ERROR_LEAD: &str = "error:";

/// The lead of ONNX Runtime's execution-provider failures (`CANN failure 500002: …`).
const FAILURE_LEAD: &str = "failure ";

/// Exception classes raised by the compile stack (Dynamo, FakeTensor, AOTAutograd, Inductor),
/// with the phase each belongs to.
const COMPILE_EXCEPTIONS: &[(&str, Phase)] = &[
    ("Unsupported", Phase::Tracing),
    ("BackendCompilerFailed", Phase::Compile),
    ("TorchRuntimeError", Phase::Tracing),
    ("InternalTorchDynamoError", Phase::Tracing),
    ("UserError", Phase::Tracing),
    ("UncapturedHigherOrderOpError", Phase::Tracing),
    ("GuardOnDataDependentSymNode", Phase::Tracing),
    ("DataDependentOutputException", Phase::Tracing),
    ("DynamicOutputShapeException", Phase::Tracing),
    ("UnsupportedOperatorException", Phase::Tracing),
    ("FailOnRecompileLimitHit", Phase::Tracing),
    ("RecompileLimitExceeded", Phase::Tracing),
    ("InductorError", Phase::Compile),
    ("LoweringException", Phase::Compile),
    ("CompilationError", Phase::Compile),
];

/// Modules whose exceptions are compile-stack exceptions.
const COMPILE_MODULES: &[(&str, Phase)] = &[
    ("torch._dynamo", Phase::Tracing),
    ("torch._subclasses", Phase::Tracing),
    ("torch._inductor", Phase::Compile),
    ("torch.fx", Phase::Compile),
    ("torch._functorch", Phase::Compile),
];

/// `'name'` right after `lead` in `m`.
pub fn quoted_after<'a>(m: &'a str, lead: &str) -> Option<&'a str> {
    let r = &m[m.find(lead)? + lead.len()..];
    let q = r.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let r = &r[1..];
    Some(&r[..r.find(q)?])
}

/// Capture evidence in one line.
fn capture_in(text: &str) -> Option<(&'static str, Option<&'static knowledge::Fact>)> {
    if let Some(n) = runtime_number(text) {
        if let Some(f) = knowledge::runtime_code(n) {
            if f.phase_or(Phase::Execution) == Some(Phase::Capture) {
                return Some((f.key, Some(f)));
            }
        }
    }
    if let Some(f) = knowledge::api(text) {
        if f.phase_or(Phase::Execution) == Some(Phase::Capture) {
            return Some((f.key, Some(f)));
        }
    }
    // `captur` anywhere else, except inside the name of an API that runs on a graph already
    // captured (`AclmdlRICaptureTaskUpdateEnd`: a knowledge row with another phase).
    let mut lower = text.to_ascii_lowercase();
    for f in knowledge::apis_named_like("captur") {
        if f.phase_or(Phase::Execution) != Some(Phase::Capture) {
            lower = lower.replace(f.key, " ");
        }
    }
    lower.contains("captur").then_some(("captur", None))
}

/// The phase an error's own lines (message, scope) state, without capture.
fn own(err: &CausalError, under: Phase) -> Option<PhaseEvidence> {
    let at = err.line;
    // An environment problem named by the error: its lines as printed.
    let env_text = std::iter::once((at, err.message.as_str()))
        .chain(err.scope.iter().map(|(n, t)| (*n, t.as_str())));
    for (no, t) in env_text {
        // An environment problem stated by the line: a knowledge row (`No module named`, a
        // loader failure, an attribute the installed torch_npu lacks, an unregistered backend).
        if let Some(f) = knowledge::environment(t) {
            let e = ev(
                Phase::Environment,
                Some(Nature::Environment),
                "shape.environment",
                f.key,
                no,
                Source::Error,
            );
            return Some(with_fact(e, f));
        }
    }
    match err.shape {
        Shape::GraphBreak => {
            return Some(ev(
                Phase::Tracing,
                None,
                "shape.graph-break",
                "graph break reason",
                at,
                Source::Error,
            ))
        }
        Shape::Recompile => {
            return Some(ev(
                Phase::Tracing,
                None,
                "shape.recompile",
                "recompilation",
                at,
                Source::Error,
            ))
        }
        // A build that stopped before compiling anything (CMake's configuration) or at its
        // link: a package, library or path it needs is missing or comes from another install.
        // The build's environment, not a kernel's source.
        Shape::CompilerDiagnostic if err.evidence.rule == "cmake.error" => {
            // The token stands on the header (`CMake Error at …`), in the error's scope.
            let header = err
                .scope
                .iter()
                .find(|(_, t)| t.starts_with("CMake Error"))
                .map_or(at, |(no, _)| *no);
            return Some(ev(
                Phase::Environment,
                Some(Nature::Environment),
                "shape.build-configuration",
                "CMake Error",
                header,
                Source::Error,
            ));
        }
        // make's report that a recipe failed says only that the build stopped (the recipe's own
        // error is above it when the text has it); an LLVM-based compiler's crash report says
        // the compiler itself failed on its input.
        Shape::CompilerDiagnostic if err.evidence.rule == "make.error" => {
            // Only a build step's target says the build stopped (`…/build.make:77: x.cpp`,
            // `x.o`, `all`); `[test] Error 1` is a recipe that ran something.
            let target = err.message.split_once("*** [").map_or("", |(_, t)| t);
            let target = target
                .rsplit_once("] Error ")
                .map_or(target, |(t, _)| t)
                .to_ascii_lowercase();
            // The target's file, after its recipe's location (`build.make:77: /b/x.cpp`).
            let file = target.rsplit(['/', ' ']).next().unwrap_or("");
            let ext = file.rsplit_once('.').map_or("", |(_, e)| e);
            let build = target == "all"
                || ["build.make", "makefile", "cmakefiles"]
                    .iter()
                    .any(|s| target.contains(s))
                || matches!(ext, "o" | "obj" | "c" | "cc" | "cpp" | "cxx" | "so" | "a");
            if !build {
                return None;
            }
            return Some(ev(
                Phase::Compile,
                Some(Nature::Generic),
                "shape.build-failed",
                "***",
                at,
                Source::Error,
            ));
        }
        Shape::CompilerDiagnostic if err.evidence.rule == "atc.op-check" => {
            return Some(ev(
                Phase::Compile,
                Some(Nature::Unsupported),
                "shape.op-check-failed",
                "\"message\"",
                at,
                Source::Error,
            ));
        }
        Shape::CompilerDiagnostic if err.evidence.rule == "compiler.crash" => {
            return Some(ev(
                Phase::Compile,
                Some(Nature::Internal),
                "shape.compiler-crash",
                "Program arguments",
                at,
                Source::Error,
            ));
        }
        Shape::CompilerDiagnostic if err.evidence.rule == "linker.error" => {
            // What the linker said (or the driver, when the linker's own line is not in the text).
            let token = [
                "cannot find",
                "cannot open",
                "unable to find library",
                "undefined reference to",
                "undefined symbol",
                "multiple definition of",
                "ld returned",
                "linker command failed",
            ]
            .into_iter()
            .find(|t| err.message.contains(t))
            .unwrap_or("ld");
            return Some(ev(
                Phase::Environment,
                Some(Nature::Environment),
                "shape.link",
                token,
                at,
                Source::Error,
            ));
        }
        // A header from outside the project the compiler cannot find is missing from the install
        // the build reads (a toolkit without it, another release, an include path not set): the
        // environment.
        Shape::CompilerDiagnostic if crate::compiler_diag::foreign_header(&err.message) => {
            return Some(ev(
                Phase::Environment,
                Some(Nature::Environment),
                "shape.missing-header",
                "header not found",
                at,
                Source::Error,
            ))
        }
        Shape::CompilerDiagnostic => {
            return Some(ev(
                Phase::Compile,
                Some(Nature::Compile),
                "shape.compiler-diagnostic",
                "compiler diagnostic",
                at,
                Source::Error,
            ))
        }
        Shape::KernelAssert => {
            return Some(ev(
                Phase::Execution,
                Some(Nature::DeviceFault),
                "shape.kernel-assert",
                "[ASSERT]",
                at,
                Source::Error,
            ))
        }
        // ggml's assertion in its CANN backend's operator implementations and their tensors
        // (`ggml-cann/aclnn_ops.cpp:3007: GGML_ASSERT(n_dims == src0->ne[0]) failed`,
        // `acl_tensor.cpp`'s broadcast checks): the
        // backend executes each operator through aclnn (by default without graphs), and this one
        // was given inputs its implementation does not take. The backend's other assertions (its
        // memory pool's, its device count's) are no operator's.
        Shape::ProcessAbort
            if err.evidence.rule == "process.assertion-failed"
                && err.message.contains("GGML_ASSERT(")
                && ["ggml-cann/aclnn_ops.cpp", "ggml-cann/acl_tensor.cpp"]
                    .iter()
                    .any(|f| err.message.contains(f)) =>
        {
            return Some(ev(
                Phase::Execution,
                Some(Nature::Parameter),
                "shape.backend-assert",
                "GGML_ASSERT",
                at,
                Source::Error,
            ))
        }
        // An assertion names the source file of its check (`…/mlir/IR/UseDefLists.h:198:`,
        // before `Assertion` on its line or on the head above it): read as a frame is, a
        // compiler's source (MLIR's, LLVM's) places it in a compilation — the compiler's own
        // check, which its remedy says. Other frames' phases are not read from it.
        Shape::ProcessAbort if err.evidence.rule == "process.assertion-failed" => {
            let head = std::iter::once((at, err.message.as_str()))
                .chain(err.scope.iter().map(|(n, t)| (*n, t.as_str())))
                .map(|(n, t)| (n, t.split("Assertion ").next().unwrap_or(t)));
            for (no, t) in head {
                let fact = knowledge::frame(t)
                    .filter(|f| f.phase == Some(knowledge::PhaseCell::Known(Phase::Compile)));
                if let Some(fact) = fact {
                    let e = ev(
                        Phase::Compile,
                        None,
                        "phase.assert-source",
                        fact.key,
                        no,
                        Source::Error,
                    );
                    return Some(with_fact(e, fact));
                }
            }
        }
        _ => {}
    }
    // The error a compiler's located exception wraps (Triton's `CompilationError: at 2:8:` over
    // `ValueError(…)`, the wrapper first in its scope) is in the wrapper's phase.
    let located = (err.shape == Shape::WrappedException)
        .then(|| err.scope.first())
        .flatten()
        .and_then(|(no, t)| Some((crate::torch_logs::python::exception_line(t)?.type_name, *no)))
        .filter(|(t, _)| crate::compiler_diag::is_located_compile_error(t));
    let classes = err
        .exception_type
        .as_deref()
        .map(|t| (t, at, "shape.exception-class"))
        .into_iter()
        .chain(located.map(|(t, no)| (t, no, "shape.located-error")));
    for (ty, at, rule) in classes {
        let short = ty.rsplit('.').next().unwrap_or(ty);
        let phase = COMPILE_MODULES
            .iter()
            .find(|(m, _)| ty.starts_with(m))
            .map(|(_, p)| *p)
            .or_else(|| {
                COMPILE_EXCEPTIONS
                    .iter()
                    .find(|(x, _)| *x == short)
                    .map(|(_, p)| *p)
            })
            // A located compilation error is a kernel's compilation, whatever its class.
            .or((rule == "shape.located-error").then_some(Phase::Compile));
        if let Some(phase) = phase {
            return Some(ev(
                phase,
                Some(Nature::Compile),
                rule,
                ty,
                at,
                Source::Error,
            ));
        }
    }
    from_codes(
        std::iter::once((at, err.message.as_str()))
            .chain(err.scope.iter().map(|(n, t)| (*n, t.as_str()))),
        under,
        Source::Error,
    )
    .or_else(|| {
        matches!(err.shape, Shape::PlogRecord | Shape::FrameworkError).then(|| {
            // Rule 2 names "CANN plog" itself as a runtime-error keyword.
            ev(
                Phase::Execution,
                None,
                "shape.plog-record",
                "CANN plog",
                at,
                Source::Error,
            )
        })
    })
    .or_else(|| {
        // An error without evidence of its own that the backend compiler raised (`BackendCompilerFailed:
        // backend='atbgraph' raised:` over `TypeError: …`) failed in the compile.
        let (no, wrapper) = (err.shape == Shape::WrappedException)
            .then(|| err.scope.first())
            .flatten()?;
        let wrapper = crate::torch_logs::python::exception_line(wrapper)?;
        crate::torch_logs::python::backend_compiler_failed(&wrapper)?;
        Some(ev(
            Phase::Compile,
            Some(Nature::Compile),
            "shape.wrapper-class",
            wrapper.short_type(),
            *no,
            Source::Error,
        ))
    })
}

/// What a failed HCCL call's `HcclResult` says of the cause ([`knowledge::Nature`]): a
/// parameter or pointer the call was given, memory, a resource, a feature the collective does
/// not support, a file this host lacks (its own set-up), a timeout; the rest (a connection, a transfer, an internal
/// error) name no nature of their own.
fn hccl_nature(name: &str) -> Option<Nature> {
    Some(match name {
        "PARA" | "PTR" => Nature::Parameter,
        "MEMORY" | "OOM" => Nature::Memory,
        "UNAVAIL" => Nature::Resource,
        // A dtype or reduction the collective does not support: the caller's, not the install's.
        "NOT_SUPPORT" => Nature::Unsupported,
        "OPEN_FILE_FAILURE" => Nature::Environment,
        "TIMEOUT" => Nature::Timeout,
        _ => return None,
    })
}

/// The first line that states a cause on its own (a phrase row), as phase evidence.
fn stated_phrase(lines: &[(u64, &str)], under: Phase, source: Source) -> Option<PhaseEvidence> {
    lines.iter().find_map(|(no, t)| {
        let f = knowledge::phrase_fact(t)?;
        let phase = f.phase_or(under)?;
        Some(with_fact(
            ev(phase, f.nature, "shape.phrase", f.key, *no, source),
            f,
        ))
    })
}

/// The compile stage an inner code's line names in brackets (`EZ9999  [InferShape] The k-axis
/// …`: GE's shape inference of the operator being built), as an API row — outside an aclnn
/// call only (`under` compile): an aclnn operator's own shape inference logs the same tag.
fn stage_named(no: u64, t: &str, under: Phase, source: Source) -> Option<PhaseEvidence> {
    if under != Phase::Compile {
        return None;
    }
    let f = knowledge::api(t)?;
    let phase = f.phase_or(under).filter(|p| *p == Phase::Compile)?;
    let key = f.key.to_ascii_lowercase();
    let tag = if key.starts_with('[') {
        key
    } else {
        format!("[{key}]")
    };
    let bracketed = t.to_ascii_lowercase().contains(&tag);
    bracketed.then(|| with_fact(ev(phase, f.nature, "phase.api", f.key, no, source), f))
}

/// Codes, runtime numbers, hints and API names in some lines: the first line that holds one
/// decides (a CANN code before a number before a hint before an API name within a line; an
/// inner code yields to its own line's stated cause or bracketed compile stage).
fn from_codes<'a>(
    lines: impl Iterator<Item = (u64, &'a str)>,
    under: Phase,
    source: Source,
) -> Option<PhaseEvidence> {
    let lines: Vec<(u64, &str)> = lines.collect();
    // Known CANN codes and families first, over all lines: a code names its component.
    for (no, t) in &lines {
        if let Some(at) = find_code(t) {
            let code = &t[at..at + 6];
            let fact = knowledge::cann_code(code)
                .filter(|f| f.phase.is_some())
                .or_else(|| knowledge::code_family(code).filter(|f| f.phase.is_some()));
            if let Some(f) = fact {
                if let Some(phase) = f.phase_or(under) {
                    // An inner or unknown-error code (`EE9999`, `EZ9999`) names only its
                    // component: a message on its line that states its cause (a phrase row)
                    // decides instead.
                    // Its line may also name the stage that failed (GE's `[InferShape] …`).
                    if matches!(f.nature, None | Some(Nature::Internal | Nature::Generic)) {
                        if let Some(e) = stated_phrase(&[(*no, t)], under, source) {
                            return Some(e);
                        }
                        if let Some(e) = stage_named(*no, t, under, source) {
                            return Some(e);
                        }
                    }
                    let e = ev(phase, f.nature, "shape.cann-code-family", code, *no, source);
                    return Some(with_fact(e, f));
                }
            }
        }
    }
    for (no, t) in &lines {
        if let Some(n) = runtime_number(t) {
            if let Some(f) = knowledge::runtime_code(n) {
                // A number that says only that something failed inside (`500001`: an internal
                // error, see the CANN log) yields to the call its line names, as an inner code
                // does: torch_npu's `SetPrecisionMode: … AclSetCompileopt(…), error code is
                // 500001` failed while the device was initialised.
                // (Only to a call of another phase: an aclnn call's generic return code keeps its
                // own row, `561103` under `call aclnnInplaceCopy failed`.)
                if matches!(f.nature, None | Some(Nature::Generic | Nature::Internal)) {
                    let called = knowledge::api(t)
                        .and_then(|a| Some((a.phase_or(under)?, a)))
                        .filter(|(phase, _)| Some(*phase) != f.phase_or(under));
                    if let Some((phase, a)) = called {
                        return Some(with_fact(
                            ev(phase, a.nature, "phase.api", a.key, *no, source),
                            a,
                        ));
                    }
                }
                if let Some(phase) = f.phase_or(under) {
                    let e = ev(
                        phase,
                        f.nature,
                        "shape.runtime-code",
                        n.to_string(),
                        *no,
                        source,
                    );
                    return Some(with_fact(e, f));
                }
            }
        }
    }
    // An HCCL call's `HcclResult` (torch_npu's `HCCL function error: HcclGetRootInfo(&id), error
    // code is 11`): a collective, and what went wrong in it (`HCCL_E_TCP_CONNECT`).
    for (no, t) in &lines {
        let result = crate::cann_error::torch_npu::hccl_call_result(t)
            .filter(|&n| n != 0)
            .and_then(crate::cann_error::tables::hccl_result);
        if let Some((name, meaning)) = result {
            // A line of the scope that states the cause with its nature (`NPU out of memory`)
            // says more than the call's result.
            let specific = |e: &PhaseEvidence| {
                e.nature
                    .is_some_and(|n| !matches!(n, Nature::Generic | Nature::Internal))
            };
            if let Some(e) = stated_phrase(&lines, under, source).filter(specific) {
                return Some(e);
            }
            let mut e = ev(
                Phase::Collective,
                hccl_nature(name),
                "shape.hccl-result",
                format!("HCCL_E_{name}"),
                *no,
                source,
            );
            e.fact = Some(format!(
                "the HCCL call returned HCCL_E_{name}: {meaning} [HCCL-API (HcclResult)]"
            ));
            return Some(e);
        }
    }
    // torch_npu `ERRssEEE`: the error type, else the sub-module.
    for (no, t) in &lines {
        if let Some(e) = crate::cann_error::torch_npu::parse_torch_npu_line(t.trim()) {
            let code = e.code.trim_start_matches("ERR");
            let (Some(ss), Some(eee)) = (code.get(..2), code.get(2..5)) else {
                continue;
            };
            let (module, kind) = knowledge::pta_code(ss, eee);
            if let Some(f) = kind.into_iter().chain(module).find(|f| f.phase.is_some()) {
                if let Some(phase) = f.phase_or(under) {
                    let e = ev(
                        phase,
                        f.nature,
                        "shape.torch-npu-code",
                        e.code.clone(),
                        *no,
                        source,
                    );
                    return Some(with_fact(e, f));
                }
            }
        }
    }
    for (no, t) in &lines {
        let hint_text = t.trim_start().strip_prefix("[Error]:").unwrap_or(t);
        if let Some(f) = knowledge::hint(hint_text) {
            if let Some(phase) = f.phase_or(under) {
                let e = ev(phase, f.nature, "shape.hint", f.key, *no, source);
                return Some(with_fact(e, f));
            }
        }
    }
    if let Some(e) = stated_phrase(&lines, under, source) {
        return Some(e);
    }
    for (no, t) in &lines {
        if super::rank::rank_plog_error("", t) == super::rank::CauseRank::DeviceFault {
            return Some(ev(
                Phase::Execution,
                Some(Nature::DeviceFault),
                "shape.device-fault",
                "device fault",
                *no,
                source,
            ));
        }
        if let Some(f) = knowledge::api(t) {
            if let Some(phase) = f.phase_or(under).filter(|p| *p != Phase::Capture) {
                let e = ev(phase, f.nature, "phase.api", f.key, *no, source);
                return Some(with_fact(e, f));
            }
        }
    }
    None
}

/// The phase of a causal error (see the module documentation for the order).
pub fn infer(err: &CausalError) -> Option<PhaseEvidence> {
    // An operator check runs under its caller: an aclnn call means execution.
    let all_text = || {
        std::iter::once(err.message.as_str())
            .chain(err.scope.iter().map(|(_, t)| t.as_str()))
            .chain(err.context.iter().map(|(_, t)| t.as_str()))
    };
    // So does one of aclnn's return codes (`launch failed for Range, errno:561103`).
    let aclnn = |t: &str| {
        t.to_ascii_lowercase().contains("aclnn") || runtime_number(t).is_some_and(aclnn_return_code)
    };
    let under = if all_text().any(aclnn) {
        Phase::Execution
    } else {
        Phase::Compile
    };
    let own = own(err, under);
    // 0. Kind before phase: a cause whose kind settles the route.
    if let Some(e) = own.as_ref().filter(|e| e.settled_by_kind()) {
        return Some(e.clone());
    }
    // 1. Capture, unless the error itself is a collective failure or only replay failed.
    let replay_only = {
        let t = all_text()
            .collect::<Vec<_>>()
            .join("\n")
            .to_ascii_lowercase();
        t.contains("replay") && !t.contains("capture fail") && !t.contains("capture stream fail")
    };
    let collective = own.as_ref().is_some_and(|e| e.phase == Phase::Collective);
    if !replay_only && !collective {
        let sources = std::iter::once((err.line, err.message.as_str(), Source::Error))
            .chain(
                err.scope
                    .iter()
                    .map(|(n, t)| (*n, t.as_str(), Source::Error)),
            )
            .chain(
                err.frames
                    .iter()
                    .map(|(n, t)| (*n, t.as_str(), Source::Frames)),
            )
            .chain(
                err.context
                    .iter()
                    .map(|(n, t)| (*n, t.as_str(), Source::Context)),
            );
        for (no, t, source) in sources {
            if let Some((token, fact)) = capture_in(t) {
                let e = ev(
                    Phase::Capture,
                    fact.and_then(|f| f.nature),
                    "capture.context",
                    token,
                    no,
                    source,
                );
                return Some(match fact {
                    Some(f) => with_fact(e, f),
                    None => e,
                });
            }
        }
    }
    // 2. The error itself.
    if let Some(e) = own {
        return Some(e);
    }
    if err.shape == Shape::EnvironmentLine {
        // The rule that read the line names what kind of setup failed (`pip.conflict`,
        // `container.daemon-error`): the remedy table's `key:` for it.
        return Some(ev(
            Phase::Environment,
            Some(Nature::Environment),
            "shape.environment",
            err.evidence.rule.to_string(),
            err.line,
            Source::Error,
        ));
    }
    // 3. Its frames, innermost first.
    for (no, f) in err.frames.iter().rev() {
        if let Some(fact) = knowledge::frame(f) {
            if let Some(phase) = fact.phase_or(Phase::Host) {
                let e = ev(phase, None, "phase.frames", fact.key, *no, Source::Frames);
                return Some(with_fact(e, fact));
            }
        }
    }
    // 4. The native source file the line's logger names (a glog-form header's
    // `…/huawei_ascend_npu/converter/pad.cc:33`, c10's): where the program logged it from, read
    // as a frame is. A Python source's (TORCH_LOGS', torchrun's `torch/distributed/elastic/…`
    // record that a child died) says where the record was written, not what failed.
    let text = super::normalise::strip_decorations(err.text.trim_start());
    let logged_at = strip_prefixes(text)
        .prefixes
        .into_iter()
        .rev()
        .find_map(|p| match p {
            LinePrefix::Glog(g) => Some(g.source),
            LinePrefix::C10 { source, .. } => Some(source),
            _ => None,
        })
        .filter(|source| {
            let file = source.split(':').next().unwrap_or(source);
            !file.ends_with(".py")
        });
    if let Some(fact) = logged_at.and_then(knowledge::frame) {
        if let Some(phase) = fact.phase_or(Phase::Host) {
            let e = ev(
                phase,
                None,
                "phase.log-source",
                fact.key,
                err.line,
                Source::Error,
            );
            return Some(with_fact(e, fact));
        }
    }
    // 5. Its context.
    from_codes(
        err.context.iter().map(|(n, t)| (*n, t.as_str())),
        under,
        Source::Context,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causal::first_causal_error;

    fn phase(text: &str) -> Option<(Phase, String)> {
        let e = first_causal_error(text.as_bytes())?;
        e.phase.as_ref().map(|p| (p.phase, p.rule.to_string()))
    }

    fn from(text: &str) -> PhaseEvidence {
        first_causal_error(text.as_bytes())
            .and_then(|e| e.phase)
            .expect("phase evidence")
    }

    // Wider-world batch 42: an error the backend compiler raised, without evidence of its own,
    // failed in the compile — even with an aclnn call in a later, separate report; one with a
    // code of its own keeps the code's phase.
    #[test]
    fn an_error_the_backend_compiler_raised() {
        let text = "torch._dynamo.exc.BackendCompilerFailed: backend='atbgraph' raised:\nTypeError: AtbOverrides.Zeros() missing 1 required positional argument: 'origin_size'\n\nlater, after a fix:\n\n[2025-05-13 14:04:11.705] [dicp] [error] [acl_nn_operation.cpp:83] Error: SetAclNnWorkspaceExecutor(workspaceSize) failed with return code 161002\n";
        let e = from(text);
        assert_eq!(
            (e.phase, e.rule.as_ref(), e.token.as_str()),
            (
                Phase::Compile,
                "shape.wrapper-class",
                "BackendCompilerFailed"
            )
        );
        let coded = "torch._dynamo.exc.BackendCompilerFailed: backend='npu' raised:\nRuntimeError: call aclnnMatmul failed, error code is 161002\n";
        assert_eq!(from(coded).phase, Phase::Execution);
    }

    // Wider-world batch 40: a generic runtime number yields to the call its line names —
    // torch_npu's device initialisation setting the precision mode; without a known call it
    // stays the number's.
    #[test]
    fn a_generic_number_yields_to_the_call_it_failed_in() {
        let init = "[rank0]: RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:175 NPU function error: at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, precision_mode), error code is 500001\n";
        assert_eq!(
            phase(init),
            Some((Phase::Environment, "phase.api".to_string()))
        );
        let other = "RuntimeError: f:a.ts:1 NPU function error: at_npu::native::SomeCall(x), error code is 500001\n";
        assert_eq!(
            phase(other),
            Some((Phase::Execution, "shape.runtime-code".to_string()))
        );
        // An aclnn call's generic return code keeps its own row (the call is an execution too).
        let aclnn = "RuntimeError: NPU function error: call aclnnInplaceCopy failed, error code is 561103\n";
        assert_eq!(
            phase(aclnn),
            Some((Phase::Execution, "shape.runtime-code".to_string()))
        );
        // A number that names its fault keeps it, whatever call failed.
        let fault = init.replace("500001", "507015");
        assert_eq!(
            phase(&fault),
            Some((Phase::Execution, "shape.runtime-code".to_string()))
        );
    }

    // Wider-world batch 31: ggml's assertion in its CANN backend's operator source is an
    // operator executed outside what its implementation takes; other assertions say no phase.
    #[test]
    fn an_assertion_in_the_cann_backend_of_ggml_is_an_operator_executed() {
        let e = from("common_init_from_params: warming up the model with an empty run\n/x/llama.cpp/ggml/src/ggml-cann/aclnn_ops.cpp:3007: GGML_ASSERT(n_dims == src0->ne[0]) failed\nAborted (core dumped)\n");
        assert_eq!(
            (e.phase, e.nature, &*e.rule, e.line),
            (
                Phase::Execution,
                Some(Nature::Parameter),
                "shape.backend-assert",
                2
            )
        );
        assert_eq!(e.kind, Some(CauseKind::OperatorContract));
        let tensor = from("/x/llama.cpp/ggml/src/ggml-cann/acl_tensor.cpp:60: GGML_ASSERT(ggml_can_repeat(src, dst)) failed\n");
        assert_eq!(&*tensor.rule, "shape.backend-assert");
        for text in [
            "/x/llama.cpp/src/llama-model.cpp:12: GGML_ASSERT(hparams.n_expert <= 64) failed\n",
            "/x/llama.cpp/ggml/src/ggml-cann/ggml-cann.cpp:453: GGML_ASSERT(pool_size + reserve_size <= max_size) failed\n",
            "main: src/model.c:42: load_model: Assertion `n > 0' failed.\n",
        ] {
            assert_ne!(
                phase(text).map(|(_, r)| r).as_deref(),
                Some("shape.backend-assert"),
                "{text}"
            );
        }
    }

    #[test]
    fn a_port_this_host_could_not_bind_waits_on_no_peer() {
        let waits = |text: &str| {
            crate::causal::first_causal_error(text.as_bytes())
                .and_then(|e| e.phase)
                .map(|p| (p.phase, p.waits_on_peers()))
        };
        assert_eq!(
            waits("Communication_Error_Bind_IP_Port(EJ0003): Failed to bind the IP port.\n"),
            Some((Phase::Collective, false))
        );
        assert_eq!(
            waits("EI0002: [PID: 1] 2025-01-01-00:00:00.000.000 The wait execution of the Notify register times out.\n"),
            Some((Phase::Collective, true))
        );
        // An HCCP another process still holds is this host's set-up too.
        assert_eq!(
            waits("EJ0001: [PID: 1] 2025-04-24-16:14:56.975.866 Failed to initialize the HCCP process. Reason: Maybe the last training process is running.\n"),
            Some((Phase::Collective, false))
        );
    }

    #[test]
    fn numbers_after_their_phrases() {
        assert_eq!(runtime_number("x, error code is 507035"), Some(507035));
        // aclnn's return codes after a code phrase only.
        assert_eq!(
            runtime_number("call aclnnMoeDistributeDispatchV3 failed, error code is 561002"),
            Some(561002)
        );
        assert_eq!(runtime_number("error code is 161999"), None);
        assert_eq!(runtime_number("write ret = 361472"), None);
        assert_eq!(runtime_number("ret = 561112"), Some(561112));
        // Batch 42's grading: dicp's wrapper around an aclnn call.
        assert_eq!(
            runtime_number("Error: SetAclNnWorkspaceExecutor(workspaceSize) failed with return code 161002 at /x/a.cpp:83"),
            Some(161002)
        );
        assert_eq!(runtime_number("process exited with return code 1"), None);
        assert_eq!(
            runtime_number("launch failed for Range, errno:561103."),
            Some(561103)
        );
        assert_eq!(runtime_number("open failed, errno: 13"), None);
        assert_eq!(runtime_number("errno=2"), None);
        assert_eq!(
            runtime_number("[ERROR]  Execute model(m.om) error:507011"),
            Some(507011)
        );
        assert_eq!(runtime_number("error: 3 files"), None);
        // An exception's payload is no runtime number, nor is a number after `error: `; ACL's
        // round codes need a code phrase.
        assert_eq!(runtime_number("KeyError: 107002"), None);
        assert_eq!(runtime_number("Error: 507015 rows"), None);
        assert_eq!(runtime_number("x error:200000"), None);
        assert_eq!(
            runtime_number("acl set device 0 failed, errorCode = 507033"),
            Some(507033)
        );
        assert_eq!(runtime_number("register failure! ret 107000"), Some(107000));
        assert_eq!(
            runtime_number("[507011][Error code unknown] Failed to model infer execute"),
            Some(507011)
        );
        assert_eq!(runtime_number(" [207001][x] alloc"), Some(207001));
        assert_eq!(runtime_number("[12345][x] y"), None);
        assert_eq!(runtime_number("[507011 x"), None);
        assert_eq!(runtime_number("a [507011][x] b"), None);
        assert_eq!(runtime_number("[107001] loss 2.3"), None);
        assert_eq!(runtime_number("[+507011][x] y"), None);
        // ONNX Runtime's form: the number and a colon; a duration after `failure` is none.
        assert_eq!(
            runtime_number("CANN failure 500002: ACL_ERROR_GE_FAILURE ; NPU=0"),
            Some(500002)
        );
        assert_eq!(
            runtime_number("node failure 107312 ms ago, restarted"),
            None
        );
        assert_eq!(
            runtime_number("rtMemcpy:ErrCode=107030, desc"),
            Some(107030)
        );
        assert_eq!(runtime_number("failed, error code:507034'"), Some(507034));
        assert_eq!(runtime_number("error code is 1"), None);
        assert_eq!(
            runtime_number("om_backend.cc(174)::InitResource\tacl init failed, errorCode = 100002"),
            Some(100002)
        );
        assert_eq!(runtime_number("error code is 600000"), None);
        assert_eq!(runtime_number("ret = 101000"), None);
        // ACL's round numbers only as an error code; a lead inside a word is none.
        for (text, want) in [
            ("interpret 200000 rows as float", None),
            (
                "aclvencDestroyChannel failed, aclRet = 507018",
                Some(507018),
            ),
            (
                "direct CCU submit failed task=0 ret=-2 rtRet=507000",
                Some(507000),
            ),
            ("DrvRet=507033", Some(507033)),
            ("interpret 507015 rows", None),
            ("warmup rets 200000", None),
            ("Connect to store failed: 300000 ms elapsed", None),
            ("Processed batch, ret 100000 samples", None),
            ("aclInit failed, error code is 100002", Some(100002)),
            ("aclrtMalloc failed, errorCode=200000", Some(200000)),
        ] {
            assert_eq!(runtime_number(text), want, "{text}");
        }
    }

    #[test]
    fn operator_checks_take_their_callers_phase() {
        let under_aclnn = "RuntimeError: call aclnnQuantMatmulV4 failed, detail:E69999: Inner Error!\nE69999[PID: 1] 2026-01-01-00:00:00.000.000 (E69999):  op[QuantBatchMatmulV3], this platform only support x[FUNC:F][FILE:f.cc][LINE:1]\n        TraceBack (most recent call last):\n        y failed[FUNC:G][FILE:g.cc][LINE:2]\n";
        let e = first_causal_error(under_aclnn.as_bytes()).unwrap();
        assert_eq!(e.line, 2);
        assert_eq!(e.phase.map(|p| p.phase), Some(Phase::Execution));
        let under_ge = "E69999: [PID: 1] 2026-01-01-00:00:00.000.000 op[X] tiling failed\n";
        assert_eq!(phase(under_ge).map(|p| p.0), Some(Phase::Compile));
        // aclnn's return code names the caller too (llama.cpp's arange, wider-world batch 22).
        let launched = "E89999: [PID: 1] 2024-11-04-17:38:30.068.533 op[Range], outSize from framework (OFF) is 1, but outSize from tiling (OFT) is 64[FUNC:F][FILE:range.cc][LINE:113]\n        TraceBack (most recent call last):\n       Kernel Run failed. opType: 7, Range\n       launch failed for Range, errno:561103.\n";
        assert_eq!(phase(launched).map(|p| p.0), Some(Phase::Execution));
    }

    #[test]
    fn capture_beats_resource_but_not_collective() {
        let t = "RuntimeError: capture_begin:NPUGraph.cpp:230 NPU function error: AclmdlRICaptureBegin(s, m), error code is 207005\n";
        assert_eq!(phase(t), Some((Phase::Capture, "capture.context".into())));
        let t = "EI0006: [PID: 1] 2025-01-01-00:00:00.000.000 Getting socket times out during capture_model.\n";
        assert_eq!(phase(t).map(|p| p.0), Some(Phase::Collective));
    }

    // An inner code (`EE9999`) names only its component; the message's stated cause decides. A
    // code with a meaning of its own keeps deciding.
    #[test]
    fn an_inner_code_yields_to_a_stated_cause() {
        let sq = "EE9999: [PID: 1] 2026-01-01-00:00:00.000.000 [SqCqManage]Alloc sq cq fail, stream_id=1984, retCode=0x7020023.[FUNC:Setup][FILE:stream.cc][LINE:1]\n";
        assert_eq!(phase(sq), Some((Phase::Execution, "shape.phrase".into())));
        let wait = "EE9999: [PID: 1] 2026-01-01-00:00:00.000.000 The error from device(chipId:6, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:19, sq_id:19, task_id:16, event_id=73, timeout=1866s.\n";
        assert_eq!(
            phase(wait),
            Some((Phase::Collective, "shape.phrase".into()))
        );
        // A framework's own out-of-memory words state a memory cause.
        let oom = "[2025-01-01 00:00:00,000] [1] [2] [llm] [ERROR] [logging.py-1] : Warmup failed, because of multimodal model inference out of memory.\n";
        let e = first_causal_error(oom.as_bytes()).expect("an error");
        assert_eq!(
            e.phase.map(|p| (p.nature, p.kind)),
            Some((Some(Nature::Memory), Some(CauseKind::Resource)))
        );
        let coded = "EL0004: [PID: 1] 2026-01-01-00:00:00.000.000 Failed to allocate memory. Alloc sq cq fail\n";
        assert_eq!(
            phase(coded).map(|p| p.1),
            Some("shape.cann-code-family".into())
        );
        // Only the code's own line: a phrase further down its report does not move the evidence.
        let apart = "EI9999: [PID: 1] 2026-01-01-00:00:00.000.000 The error from device(chipId:5, dieId:0), serial number is 3, hccl fftsplus task timeout occurred during task execution, stream_id:7\n        TraceBack (most recent call last):\n        The error from device(chipId:5, dieId:0), serial number is 4, event wait timeout occurred during task execution, stream_id:6[FUNC:F][FILE:f.cc][LINE:1]\n";
        assert_eq!(
            phase(apart),
            Some((Phase::Collective, "shape.cann-code-family".into()))
        );
        // Or the stage its line names in GE's brackets: shape inference builds the operator.
        let built = "EZ9999  [InferShape] The k-axis of a(64) and b(9216) tensors must be the same[FUNC:InferShape][FILE:matrix_calculation_ops.cc][LINE:1402]\n        TraceBack (most recent call last):\n        build graph failed, graph id:126, ret:1343242270[FUNC:BuildModel][FILE:ge_generator.cc][LINE:1443]\n";
        assert_eq!(phase(built), Some((Phase::Compile, "phase.api".into())));
        // Under an aclnn call the operator's own shape inference logs the same tag: execution.
        let under_aclnn = "RuntimeError: call aclnnTransposeQuantBatchMatMul failed, detail:EZ9999: Inner Error!\nEZ9999: [PID: 1] 2026-01-01-00:00:00.000.000 [InferShape] Failed to transpose shape of y[FUNC:F][FILE:f.cpp][LINE:1]\n";
        assert_eq!(phase(under_aclnn).map(|p| p.0), Some(Phase::Execution));
        let function_only = "EZ9999: [PID: 1] 2026-01-01-00:00:00.000.000 x is null[FUNC:InferShape][FILE:f.cc][LINE:1]\n";
        assert_eq!(
            phase(function_only).map(|p| p.1),
            Some("shape.cann-code-family".into())
        );
        let unbracketed =
            "EZ9999: [PID: 1] 2026-01-01-00:00:00.000.000 x failed in InferShape of y\n";
        assert_eq!(
            phase(unbracketed).map(|p| p.1),
            Some("shape.cann-code-family".into())
        );
    }

    #[test]
    fn hints_and_frames() {
        let t = "[Error]: The vector core execution is abnormal.\n";
        assert_eq!(phase(t), Some((Phase::Execution, "shape.hint".into())));
        let t = "Traceback (most recent call last):\n  File \"/x/torch/_dynamo/convert_frame.py\", line 1, in __call__\n    f()\n  File \"/x/torch/_inductor/compile_fx.py\", line 2, in compile_fx\n    g()\n";
        assert_eq!(phase(t), Some((Phase::Compile, "phase.frames".into())));
    }

    #[test]
    fn environment_in_any_shape() {
        let t = "[ERROR] TBE(1,python):2026-01-01-00:00:00.000.000 [x.cc:1]1 F: ModuleNotFoundError: No module named 'sympy'\n";
        assert_eq!(phase(t).map(|p| p.0), Some(Phase::Environment));
        let t =
            "torch._inductor.exc.InductorError: ModuleNotFoundError: No module named 'triton'\n";
        assert_eq!(phase(t).map(|p| p.0), Some(Phase::Environment));
    }

    // Wider-world batch 28: an HCCL call's HcclResult names what failed in the collective, over
    // torch_npu's ERR02200 (`call hccl api failed`); TBE's `Failed to compile node` record is an
    // operator's compilation.
    #[test]
    fn hccl_results_and_operator_compilation() {
        let t = "RuntimeError: create_config:x.ts:102 HCCL function error: hcclCommInitRootInfoConfig(n, &r), error code is 11\n[ERROR] 2026-01-01-00:00:00 (PID:1, Device:0, RankID:0) ERR02200 DIST call hccl api failed.\n";
        assert_eq!(
            phase(t),
            Some((Phase::Collective, "shape.hccl-result".into()))
        );
        // What the result says of the cause: this rank's memory, not a peer's.
        let memory = t.replace("is 11", "is 3");
        let e = from(&memory);
        assert_eq!(
            (e.token.as_str(), e.nature, e.waits_on_peers()),
            ("HCCL_E_MEMORY", Some(Nature::Memory), false)
        );
        let unsupported = from(&t.replace("is 11", "is 5"));
        assert_eq!(
            (unsupported.nature, unsupported.kind),
            (Some(Nature::Unsupported), Some(CauseKind::Collective))
        );
        assert!(!unsupported.waits_on_peers());
        let file = from(&t.replace("is 11", "is 10"));
        assert_eq!(file.kind, Some(CauseKind::Environment));
        // Success and values HCCL does not define name nothing.
        for none in ["is 0", "is 99"] {
            assert_ne!(from(&t.replace("is 11", none)).rule, "shape.hccl-result");
        }
        // A stated cause with its nature says more.
        let oom = format!("{t}RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n");
        assert_eq!(from(&oom).rule, "shape.phrase");
        let t = "[ERROR] TEFUSION(1,python):2026-01-01-00:00:00.000.000 [fusion_op.cc:1]1 PrintOp Failed to compile node [name Slice, type Slice]. Detailed compilation info is:\n";
        assert_eq!(phase(t).map(|p| p.0), Some(Phase::Compile));
    }
}
