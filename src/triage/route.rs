//! Routing: which diagnosis sub-skill a failure goes to (spec `triage-and-repro.md` §1.1
//! "Step 2 — routing", documented in `docs/triage.md`).
//!
//! The route is a function of the error's **phase** ([`npgx_parsers::causal::phase`]: where in
//! the run it happened, read from the error, its frames and its context with the facts of
//! [`npgx_parsers::knowledge`]) — environment → environment; tracing, compile and capture →
//! compile-error; execution and collective → runtime-error. Order, first match wins:
//! 1. **step pre-classification** (only with a step tree, in [`super::analyze`]);
//! 2. **the phase** — capture context first (compile-error even when the error reads like a
//!    memory, resource or stream failure; capture succeeded and only replay fails → runtime),
//!    then the error's own evidence, its frames, its context;
//! 3. **keywords** — compile words, then runtime words (the seed's rules 1–2);
//! 4. **fallback** — a crash with none of them → compile-error (rule 1's last bullet), with
//!    `low` confidence. A fallback never outranks evidence; the classifier abstains
//!    (`undetermined`, with its candidates) when the only error is a weak one.
//!
//! Without an error: report tables and wording — accuracy (scores, graph vs eager mismatch),
//! then performance (throughput / latency, slowness); a text that only measures speed
//! (`329.53s/it`, `1.48 请求/秒`) routes performance at low confidence.

use serde::{Deserialize, Serialize};

use npgx_parsers::causal::phase::{quoted_after, Source as PhaseSource};
use npgx_parsers::causal::CausalError;
use npgx_parsers::knowledge::{self, CauseKind, Kind, Phase};
use npgx_parsers::line_prefix::{line_severity, strip_prefixes, Severity};
use npgx_parsers::printed::{
    cpu_fallback, degenerate_text, host_weights, latencies, loss_spike, nan_metric, repeated_lines,
    saturated_half, serving_metric, speed_rates, zero_block,
};

/// The route a failure takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    CompileError,
    RuntimeError,
    Accuracy,
    Performance,
    /// A missing or mismatched package, backend or CANN component: fix the environment first.
    Environment,
    /// Nothing to route: no error and no accuracy/performance wording.
    Undetermined,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::CompileError => "compile-error",
            Route::RuntimeError => "runtime-error",
            Route::Accuracy => "accuracy",
            Route::Performance => "performance",
            Route::Environment => "environment",
            Route::Undetermined => "undetermined",
        }
    }

    /// The npgx skill (`skills/`) that takes this route further: the route's own name after
    /// `npgx-`; none where the route is undetermined.
    pub fn skill(self) -> Option<String> {
        (self != Route::Undetermined).then(|| format!("npgx-{}", self.as_str()))
    }

    /// The cannbot-skills sub-skill to load for this route.
    pub fn sub_skill(self) -> Option<&'static str> {
        match self {
            Route::CompileError => Some("torch-npugraph-ex-compile-error-diagnosis"),
            Route::RuntimeError => Some("torch-npugraph-ex-runtime-error-diagnosis"),
            Route::Accuracy => Some("torch-npugraph-ex-accuracy-diagnosis"),
            Route::Performance => Some("torch-npugraph-ex-performance-diagnosis"),
            Route::Environment | Route::Undetermined => None,
        }
    }
}

/// The routing decision with the rule that fired and its evidence.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Routing {
    pub route: Route,
    /// Identifier of the rule (`capture.context`, `shape.cann-code-family`, `keyword.runtime`,
    /// `fallback.no-runtime-token`, `step.pre-classification`, …).
    pub rule: String,
    /// The token, code or phrase that fired.
    pub matched: Option<String>,
    /// The 1-based line the matched token is on.
    pub matched_line: Option<u64>,
    /// For the environment route: the package or component to fix.
    pub package: Option<String>,
    /// Notes the handoff must carry (step-1 hint, force_eager note, boundary note).
    pub notes: Vec<String>,
    /// The phase the route was read from, when one was.
    pub phase: Option<Phase>,
    /// The kind of the cause (what the user has to fix), when the evidence says.
    pub kind: Option<CauseKind>,
    pub confidence: Confidence,
    /// One sentence: what decided the route.
    pub why: String,
}

impl Routing {
    pub fn new(route: Route, rule: &str, matched: Option<&str>) -> Self {
        Routing {
            route,
            rule: rule.to_string(),
            matched: matched.map(str::to_string),
            matched_line: None,
            package: None,
            notes: Vec::new(),
            phase: None,
            kind: None,
            confidence: Confidence::High,
            why: String::new(),
        }
    }

    fn at(mut self, line: Option<u64>) -> Self {
        self.matched_line = line;
        self
    }
}

/// Whether `hay[at..]` starts a token: start of text, after a non-letter, or at a camel-case
/// boundary (`rtEventQuery`).
fn token_start(hay: &[u8], at: usize) -> bool {
    if at == 0 {
        return true;
    }
    let prev = hay[at - 1];
    let cur = hay[at];
    !prev.is_ascii_alphabetic() || (prev.is_ascii_lowercase() && cur.is_ascii_uppercase())
}

/// Case-insensitive search for `needle` at a token start; `whole` also requires a token end.
fn find_token(hay: &str, needle: &str, whole: bool) -> bool {
    let lower = hay.to_ascii_lowercase();
    let n = needle.to_ascii_lowercase();
    let bytes = hay.as_bytes();
    let mut from = 0;
    while let Some(rel) = lower.get(from..).and_then(|s| s.find(&n)) {
        let at = from + rel;
        let end = at + n.len();
        let end_ok = !whole
            || end >= bytes.len()
            || !bytes[end].is_ascii_alphabetic()
            || (bytes[end - 1].is_ascii_lowercase() && bytes[end].is_ascii_uppercase());
        if token_start(bytes, at) && end_ok {
            return true;
        }
        from = at + 1;
    }
    false
}

/// Compile-error keywords (rule 1), read on the error, its message and its traceback frames.
const COMPILE_WORDS: &[(&str, bool)] = &[
    ("torch._dynamo", false),
    ("torch/_dynamo", false),
    ("Unsupported", false),
    ("BackendCompilerFailed", false),
    ("graph break", false),
    ("failed to compile", false),
    ("compilation failed", false),
    ("compile failed", false),
    ("FakeTensor", false),
    ("fake_tensor", false),
    ("fake tensor", false),
    ("meta", true),
    ("aot_autograd", false),
    ("AOTAutograd", false),
    ("_functorch", false),
    ("npu_fx_compiler", false),
    ("Recompiling function", false),
    ("guard failure", false),
];

/// Runtime-error keywords (rule 2), read on the error, its message and its CANN block.
const RUNTIME_WORDS: &[(&str, bool)] = &[
    ("aclnn", false),
    ("acl", false),
    ("hccl", false),
    ("stream", false),
    ("event", false),
    ("device side assert", false),
    ("device-side assert", false),
    ("segfault", false),
    ("Segmentation fault", false),
    ("OOM", true),
    ("out of memory", false),
    ("Failed to allocate memory", false),
    ("Memory resources are exhausted", false),
];

fn first_word<'w>(hay: &str, words: &'w [(&'w str, bool)]) -> Option<&'w str> {
    words
        .iter()
        .find(|(w, whole)| {
            // A name written as code — an exception class (`Unsupported`, `FakeTensor`), an
            // all-caps abbreviation (`OOM`): one word with a capital first — matches only as
            // written (`unsupported model type` is a framework's own message, not dynamo's
            // exception).
            let name = !w.contains(' ') && w.starts_with(|c: char| c.is_ascii_uppercase());
            find_token(hay, w, *whole) && (!name || hay.contains(*w))
        })
        .map(|(w, _)| *w)
}

/// How much a route is trusted: `high` when the error's own text decided, `medium` when its
/// frames, its context or a keyword did, `low` for the no-token fallback (and the default: a
/// `triage-classify` document before version 3 states none).
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    #[default]
    Low,
    Medium,
    High,
}

/// The route a phase leads to (spec §1.1 step 2): tracing, compile and capture failures are
/// compile-errors (rule 1), execution and collective failures runtime-errors (rule 2), a broken
/// environment is fixed first. Host code has no route of its own.
pub fn route_of_phase(phase: Phase) -> Option<Route> {
    Some(match phase {
        Phase::Environment => Route::Environment,
        Phase::Tracing | Phase::Compile | Phase::Capture => Route::CompileError,
        Phase::Execution | Phase::Collective => Route::RuntimeError,
        Phase::Host => return None,
    })
}

/// An environment problem named by the error itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentProblem {
    /// What to install or fix, when the error names it.
    pub package: Option<String>,
    pub why: String,
    pub token: String,
}

impl EnvironmentProblem {
    /// The package in brackets after a word (` (torch_npu)`), nothing when the error names none.
    pub fn named(&self) -> String {
        self.package
            .as_ref()
            .map_or(String::new(), |p| format!(" ({p})"))
    }
}

/// The package a vendor library path belongs to (`…/nnal/atb/…/libx.so` → `NNAL ATB`), or a
/// library that only NNAL ships, by its exact name (`libatb.so`, `libasdops.so`, `liblcal.so`,
/// with a version after them or not; ATB-Models' `libatb_speed.so` is MindIE's, not NNAL's).
fn package_of_library(path: &str) -> String {
    let l = path.to_ascii_lowercase();
    let file = l.rsplit('/').next().unwrap_or(&l);
    let nnal = ["libatb.so", "libasdops.so", "liblcal.so"]
        .iter()
        .any(|n| file == *n || file.strip_prefix(n).is_some_and(|v| v.starts_with('.')));
    if nnal {
        return "NNAL ATB (Ascend Transformer Boost)".into();
    }
    let known = [
        ("/nnal/atb/", "NNAL ATB (Ascend Transformer Boost)"),
        ("/atb/", "ATB (Ascend Transformer Boost)"),
        ("torch_npu", "torch_npu"),
        ("torchair", "torchair"),
        ("ascend-toolkit", "CANN toolkit"),
        ("/opp/", "CANN operator package (opp)"),
        ("/driver/", "Ascend driver"),
        ("/ascend/", "CANN"),
    ];
    known
        .iter()
        .find(|(k, _)| l.contains(k))
        .map(|(_, p)| (*p).to_string())
        .unwrap_or_else(|| path.rsplit('/').next().unwrap_or(path).to_string())
}

/// The package to fix when the error's phase is the environment: the missing module, the
/// library whose symbols do not match, the module that lacks an attribute, the backend that is
/// not registered — read from the error's message and scope.
pub fn environment_problem(err: &CausalError) -> Option<EnvironmentProblem> {
    let p = err
        .phase
        .as_ref()
        .filter(|p| p.phase == Phase::Environment || p.kind == Some(CauseKind::Environment))?;
    if let Some(build) = build_problem(err, &p.rule) {
        return Some(build);
    }
    let lines =
        std::iter::once(err.message.as_str()).chain(err.scope.iter().map(|(_, t)| t.as_str()));
    let mut fallback = None;
    for m in lines {
        if let Some(name) = quoted_after(m, "No module named ") {
            let top = name.split('.').next().unwrap_or(name);
            return Some(EnvironmentProblem {
                package: Some(
                    npgx_parsers::knowledge::module_package(top)
                        .unwrap_or(top)
                        .to_string(),
                ),
                why: format!("the Python module `{name}` is not installed in this interpreter (or the environment that provides it was not activated)"),
                token: "No module named".into(),
            });
        }
        if let Some((lib, said)) = npgx_parsers::causal::named_library(m) {
            // A missing symbol in torch_npu's namespaces (`_ZN7c10_npu…`, `at_npu`) is one the
            // installed torch_npu does not export: the library was built against another one.
            let symbol = m.split(": undefined symbol").nth(1).unwrap_or("");
            // Mangled (`_ZN7c10_npu…`: the length before the name) or demangled.
            let torch_npu = [
                "7c10_npu",
                "6at_npu",
                "9torch_npu",
                "c10_npu::",
                "at_npu::",
                "torch_npu::",
            ]
            .iter()
            .any(|n| symbol.contains(n));
            let (package, why) = if said == "cannot open shared object file" {
                let package = package_of_library(lib);
                // NNAL is installed apart from the toolkit, with an environment script of its own.
                let script = if package.starts_with("NNAL") {
                    "NNAL's nnal/atb/set_env.sh"
                } else {
                    "CANN's set_env.sh"
                };
                (package, format!("{lib} is not on the loader path: the package that ships it is not installed, or its environment script ({script}) was not sourced"))
            } else if torch_npu {
                ("torch_npu".to_string(), format!("{lib} was built against another torch_npu than the one installed (the missing symbol is in torch_npu's namespace): rebuild it against the installed torch_npu, or install the torch_npu it was built for"))
            } else {
                let package = package_of_library(lib);
                let why = if package.starts_with("CANN") {
                    // CANN's libraries come from one release: a symbol one lacks from another is
                    // most often a second release's libraries found first on the loader path.
                    format!("{lib} (CANN's) needs a symbol the CANN libraries on the loader path do not export: most often two CANN releases mixed (LD_LIBRARY_PATH, or a second install, ahead of this one): source one release's set_env.sh in a fresh shell")
                } else {
                    format!("{lib} was built against other versions of the libraries it loads (ABI / version mismatch): install it and the libraries it loads from matching releases")
                };
                (package, why)
            };
            return Some(EnvironmentProblem {
                package: Some(package),
                why,
                token: said.into(),
            });
        }
        if let Some(module) = quoted_after(m, "module ") {
            if m.contains("has no attribute") {
                let top = module.split('.').next().unwrap_or(module);
                return Some(EnvironmentProblem {
                    package: Some(top.to_string()),
                    why: format!("the installed `{module}` lacks an attribute this code uses (version mismatch)"),
                    token: "has no attribute".into(),
                });
            }
        }
        let lower = m.to_ascii_lowercase();
        if lower.contains("invalid backend") || lower.contains("unknown backend") {
            let name = quoted_after(m, "backend: ")
                .or_else(|| quoted_after(m, "backend "))
                .unwrap_or("the backend");
            return Some(EnvironmentProblem {
                package: Some(name.to_string()),
                why: format!("the backend `{name}` is not registered in this interpreter (torch_npu missing or too old)"),
                token: "invalid backend".into(),
            });
        }
        if fallback.is_none() {
            if let Some(f) = npgx_parsers::knowledge::environment(m) {
                fallback = Some(EnvironmentProblem {
                    package: npgx_parsers::knowledge::package(m).map(str::to_string),
                    why: f.meaning.to_string(),
                    token: f.key.to_string(),
                });
            }
        }
    }
    fallback.or_else(|| {
        // What the lines name as the thing to fix (pip's resolver report, the container runtime).
        let package = std::iter::once(err.message.as_str())
            .chain(err.scope.iter().map(|(_, t)| t.as_str()))
            .find_map(npgx_parsers::knowledge::package);
        Some(EnvironmentProblem {
            package: package.map(str::to_string),
            why: p
                .fact
                .clone()
                .unwrap_or_else(|| "the error names a broken installation".into()),
            token: p.token.clone(),
        })
    })
}

/// What a build that stopped at CMake's configuration or at its link lacks: the package CMake
/// could not find (`Could NOT find Torch_npu (missing: …)`), the library the linker could not
/// (`cannot find -lhccl` → `libhccl`), else the configuration or the link as a whole.
fn build_problem(err: &CausalError, rule: &str) -> Option<EnvironmentProblem> {
    let lines =
        || std::iter::once(err.message.as_str()).chain(err.scope.iter().map(|(_, t)| t.as_str()));
    match rule {
        "shape.build-configuration" => {
            // `Could NOT find Torch_npu (missing: …)`, or the file `include` could not find
            // (CMake quotes it on the line after `include could not find requested file:`).
            // In the scope's order: the header, the message, the lines under it.
            let mut all = err.scope.iter().map(|(_, t)| t.as_str()).peekable();
            let mut found = None;
            while let Some(l) = all.next() {
                if let Some(name) = l.split("Could NOT find ").nth(1) {
                    found = name.split_whitespace().next().map(str::to_string);
                } else if let Some(name) = l
                    .split("Could not find a package configuration file provided by \"")
                    .nth(1)
                {
                    found = name.split('"').next().map(str::to_string);
                } else if l.trim_end().ends_with("could not find requested file:") {
                    found = all.peek().map(|f| f.trim().to_string());
                }
                if found.as_ref().is_some_and(|f| !f.is_empty()) {
                    break;
                }
            }
            let found = found.filter(|f| !f.is_empty());
            Some(EnvironmentProblem {
                why: match &found {
                    Some(name) => format!("CMake could not find {name}, which the build needs (not installed, installed where the build does not look, or from another install than the file that asks for it)"),
                    None => "CMake could not configure the build: a package, file or path it needs is missing or comes from another install".into(),
                },
                package: found,
                token: "CMake Error".into(),
            })
        }
        "shape.link" => {
            let lib = lines().find_map(|l| {
                // GNU ld's `cannot find -lx`, lld's `unable to find library -lx`.
                let name = ["cannot find -l", "unable to find library -l"]
                    .iter()
                    .find_map(|lead| l.split(lead).nth(1))?;
                let name = name.split([':', ' ']).next()?;
                (!name.is_empty()).then(|| format!("lib{name}"))
            });
            Some(EnvironmentProblem {
                why: match &lib {
                    Some(lib) => format!("the link needs {lib}, which no folder on its search path holds: the package that ships it is not installed, or its folder is not passed to the linker"),
                    None => "the link lacks a library or a symbol: a package is missing, or the objects were built against another version of a library".into(),
                },
                package: lib,
                token: "ld".into(),
            })
        }
        _ => None,
    }
}

/// Keyword rules on a causal error, after its phase (spec §1.1 step 2).
pub fn route_error(err: &CausalError) -> Routing {
    if let Some(p) = &err.phase {
        // Kind before phase: a broken environment or exhausted memory settles the route
        // whatever the phase it surfaced in (docs/triage.md, "Kind before phase").
        let by_kind = p.settled_by_kind().then(|| {
            if p.kind == Some(CauseKind::Environment) {
                Route::Environment
            } else {
                Route::RuntimeError
            }
        });
        if let Some(route) = by_kind.or_else(|| route_of_phase(p.phase)) {
            let mut r = Routing::new(route, &p.rule, Some(&p.token)).at(Some(p.line));
            r.phase = Some(p.phase);
            r.kind = p.kind;
            // A fact that only says something failed (ACL's 500001 "internal error") places the
            // phase by its code's default, not by what went wrong: medium, as frames are.
            let generic = by_kind.is_none() && p.nature == Some(knowledge::Nature::Generic);
            r.confidence = match p.source {
                PhaseSource::Error if !generic => Confidence::High,
                _ => Confidence::Medium,
            };
            let whence = match p.source {
                PhaseSource::Error => "the error",
                PhaseSource::Frames => "its traceback frames",
                PhaseSource::Context => "the lines around it",
            };
            // The token in backticks when the text shows it (`EZ9999`, `failed to compile op`);
            // a rule's own label (`device fault`, `compiler diagnostic`) is no quote.
            let lower = p.token.to_ascii_lowercase();
            let quoted = std::iter::once(err.message.as_str())
                .chain(err.scope.iter().map(|(_, t)| t.as_str()))
                .any(|t| t.to_ascii_lowercase().contains(&lower));
            let token = if quoted {
                format!("`{}`", p.token)
            } else {
                p.token.clone()
            };
            r.why = match (by_kind, p.kind) {
                (Some(_), Some(kind)) => format!(
                    "kind before phase: the cause is of kind {}, read from {whence} ({token}, line {}), which settles the route whatever the phase",
                    kind.name(),
                    p.line
                ),
                (None, Some(kind)) => format!(
                    "{} phase ({} cause), read from {whence} ({token}, line {})",
                    p.phase.name(),
                    kind.name(),
                    p.line
                ),
                _ => format!(
                    "{} phase, read from {whence} ({token}, line {})",
                    p.phase.name(),
                    p.line
                ),
            };
            if let Some(f) = &p.fact {
                r.why.push_str(&format!(": {f}"));
            }
            match p.phase {
                _ if by_kind.is_some() && p.kind != Some(CauseKind::Environment) => {}
                Phase::Capture => r.notes.push(format!(
                    "ACL graph capture was active (line {}): compile-error even though the error reads like a runtime or resource failure",
                    p.line
                )),
                _ if route == Route::Environment => {
                    if let Some(env) = environment_problem(err) {
                        r.notes.push(format!(
                            "{}: fix the environment{} first, then re-run",
                            env.why,
                            env.named()
                        ));
                        r.package = env.package;
                    }
                }
                _ => {}
            }
            if let Some(n) = p
                .token
                .parse::<u64>()
                .ok()
                .filter(|_| p.rule == "shape.runtime-code")
            {
                if let Some(f) = npgx_parsers::knowledge::runtime_code(n) {
                    r.notes.push(format!("runtime error {n}: {}", f.meaning));
                }
            }
            if route == Route::RuntimeError
                && format!("{}\n{}", err.message, err.scope_text())
                    .to_ascii_lowercase()
                    .contains("replay")
            {
                r.notes.push(
                    "capture succeeded and replay fails: runtime-error by default; if evidence is thin, also consult compile-error"
                        .into(),
                );
            }
            return r;
        }
    }
    if let Some(r) = comparison_failure(err) {
        return r;
    }
    let scope = err.scope_text();
    let frames: String = err.frames.iter().map(|(_, f)| format!("{f}\n")).collect();
    let compile_hay = format!("{}\n{scope}\n{frames}", err.message);
    if let Some(w) = first_word(&compile_hay, COMPILE_WORDS) {
        let line = err
            .scope
            .iter()
            .chain(err.frames.iter())
            .find(|(_, t)| first_word(t, COMPILE_WORDS).is_some())
            .map(|x| x.0);
        let mut r = Routing::new(Route::CompileError, "keyword.compile", Some(w))
            .at(line.or(Some(err.line)));
        r.confidence = Confidence::Medium;
        r.why = format!("no phase evidence; compile keyword `{w}` (rule 1)");
        return r;
    }
    // A runtime word inside a path or a source file's name (`ggml-cann/aclnn_ops.cpp`) names a
    // file, not a call.
    let runtime_hay =
        knowledge::without_paths(&format!("{}\n{scope}", err.message).to_ascii_lowercase());
    if let Some(w) = first_word(&runtime_hay, RUNTIME_WORDS) {
        let line = err
            .scope
            .iter()
            .find(|(_, t)| first_word(t, RUNTIME_WORDS).is_some())
            .map(|(n, _)| *n);
        let mut r = Routing::new(Route::RuntimeError, "keyword.runtime", Some(w))
            .at(line.or(Some(err.line)));
        r.confidence = Confidence::Medium;
        r.why = format!("no phase evidence; runtime keyword `{w}` (rule 2)");
        if runtime_hay.to_ascii_lowercase().contains("replay") {
            r.notes.push(
                "capture succeeded and replay fails: runtime-error by default; if evidence is thin, also consult compile-error"
                    .into(),
            );
        }
        return r;
    }
    // Rule 1's last bullet is "crashes on the first call and the causal error has no aclnn /
    // ACL / HCCL / stream / event keyword": without evidence of the first call it does not apply,
    // and the classifier abstains rather than send the engineer to the wrong sub-skill.
    let Some((line, token)) = first_call_evidence(err) else {
        let mut r =
            Routing::new(Route::Undetermined, "abstain.no-phase-evidence", None).at(Some(err.line));
        r.confidence = Confidence::Low;
        r.why = "no phase evidence, no keyword and nothing that shows the first call: compile-error if it fails on the first call, runtime-error if steps ran before it".into();
        r.notes.push(
            "candidates: compile-error (if it failed on the first call, before any step ran) or runtime-error (if steps ran before it); the text does not say which".into(),
        );
        return r;
    };
    let mut r = Routing::new(
        Route::CompileError,
        "fallback.no-runtime-token",
        Some(token),
    )
    .at(Some(line));
    r.confidence = Confidence::Low;
    r.why = format!("no phase evidence and no keyword: a crash on the first call (`{token}`, line {line}) without an aclnn / ACL / HCCL / stream / event token: a compile error");
    r.notes.push(
        "no runtime code and no aclnn / ACL / HCCL / stream / event token in the first causal error: a crash on the first call without one is a compile error".into(),
    );
    r
}

/// What a test prints when values it computed differ from the values it expected (lower case):
/// torch.testing's `assert_close` (`Tensor-likes are not close!`, `Scalars are not equal!` with
/// zero tolerances, `Mismatched elements: 12 / 64 (18.8%)`), numpy.testing's (`Not equal to
/// tolerance rtol=1e-05`, `Arrays are not almost equal`), Paddle's operator
/// tests (`Output (Out) has diff at Place(npu:0)`), llama.cpp's `test-backend-ops` (`[MUL_MAT]
/// NMSE = 0.000952909 > 0.000500000 FAIL`).
const COMPARISON_FAILURES: &[&str] = &[
    "mismatched elements:",
    "tensor-likes are not close",
    "tensor-likes are not equal",
    "scalars are not close",
    "scalars are not equal",
    "not equal to tolerance",
    "arrays are not almost equal",
    "arrays are not equal",
    "has diff at place(",
    // llama.cpp's operator test: `[MUL_MAT] NMSE = 0.000952909 > 0.000500000 FAIL`.
    "] nmse = ",
];

/// An operator or kernel test against its golden data (`Output 'c' does not match golden`):
/// a comparison of values only with a tolerance or a count beside it ([`GOLDEN_FIGURES`]) — a
/// golden file's test of text or HTML says the same words.
const GOLDEN_FAILURES: &[&str] = &[
    "does not match golden",
    "do not match golden",
    "does not match the golden",
];

/// What makes a golden mismatch a comparison of numbers (lower case).
const GOLDEN_FIGURES: &[&str] = &["mismatch", "rtol", "atol", "tolerance", "max diff", "%"];

/// An error without phase evidence that is a failed comparison of computed values with expected
/// ones ([`COMPARISON_FAILURES`], or [`GOLDEN_FAILURES`] with a figure) in its lines: the numbers
/// are wrong, an accuracy question, whatever exception carried it (an `AssertionError` has no
/// phase). Not when the shapes differ (numpy's `(shapes (3,), (4,) mismatch)`: no values were
/// compared). The line is the comparison's first that carries a figure (`Not equal to tolerance
/// rtol=1e-05`), else its first; the words are quoted as the text writes them.
fn comparison_failure(err: &CausalError) -> Option<Routing> {
    let lines: Vec<(u64, &str)> = if err.scope.is_empty() {
        vec![(err.line, err.message.as_str())]
    } else {
        err.scope.iter().map(|(n, t)| (*n, t.as_str())).collect()
    };
    let lower: Vec<String> = lines.iter().map(|(_, t)| t.to_ascii_lowercase()).collect();
    if lower
        .iter()
        .any(|l| l.contains("(shapes (") && l.contains("mismatch)"))
    {
        return None;
    }
    let figures = lower
        .iter()
        .any(|l| GOLDEN_FIGURES.iter().any(|w| l.contains(w)));
    let said: Vec<(u64, &str, &str)> = lines
        .iter()
        .zip(&lower)
        .filter_map(|(&(n, t), l)| {
            let golden = GOLDEN_FAILURES.iter().filter(|_| figures);
            let at = COMPARISON_FAILURES
                .iter()
                .chain(golden)
                .find_map(|w| l.find(w).map(|k| (k, w.len())))?;
            // `to_ascii_lowercase` keeps byte offsets: the words as the text writes them.
            Some((n, t, &t[at.0..at.0 + at.1]))
        })
        .collect();
    let &(line, _, w) = said
        .iter()
        .find(|(_, t, _)| carries_figure(t))
        .or(said.first())?;
    let mut r = Routing::new(Route::Accuracy, "shape.comparison-failed", Some(w)).at(Some(line));
    r.confidence = Confidence::Medium;
    r.why = format!("a comparison of computed values with expected ones failed (`{w}`, line {line}): the numbers are wrong, whatever exception carried the failure");
    Some(r)
}

/// The relative rounding error of the 16-bit floating types (half the spacing of values at 1.0:
/// 2⁻¹¹ for float16, 2⁻⁸ for bfloat16) with the names a text gives them, and torch.testing's
/// default `rtol` for each (its `assert_close` documentation).
const HALF_TYPES: &[(&[&str], f64, &str)] = &[
    (&["bfloat16", "bf16"], 0.00390625, "1.6e-2"),
    (&["float16", "fp16"], 0.00048828125, "1e-3"),
];

/// A note when a failed comparison's relative tolerance (`rtol=1e-05`, `rtol: 1e-05`) is finer
/// than the precision of the 16-bit type the text names: a correctly rounded result can fail it,
/// so the comparison alone does not show the numbers are wrong.
pub fn tolerance_below_precision(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let rtol: f64 = lower.match_indices("rtol").find_map(|(at, _)| {
        let rest = lower[at + 4..].trim_start_matches([' ', '=', ':']);
        let end = rest
            .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | 'e' | '-' | '+')))
            .unwrap_or(rest.len());
        rest[..end].parse().ok()
    })?;
    let word = |w: &str| {
        lower.match_indices(w).any(|(at, _)| {
            let before = lower[..at].chars().next_back();
            let after = lower[at + w.len()..].chars().next();
            !before.is_some_and(|c| c.is_ascii_alphanumeric())
                && !after.is_some_and(|c| c.is_ascii_alphanumeric())
        })
    };
    let (names, precision, default) = HALF_TYPES
        .iter()
        .find(|(names, _, _)| names.iter().any(|n| word(n)))?;
    (rtol < *precision).then(|| format!(
        "the comparison's tolerance (rtol {rtol:e}) is finer than {}'s rounding ({precision:e} relative): a correctly rounded {} result can fail it, so judge by the size of the differences (torch.testing's default rtol for {} is {default})",
        names[0], names[0], names[0]
    ))
}

/// Words that place a failure on the first call of a compiled model: a warm-up, a profile or
/// dummy run at start-up, a compile (lower case, matched inside a line).
const FIRST_CALL_WORDS: &[&str] = &[
    "first call",
    "first step",
    "first iteration",
    "first forward",
    "warmup",
    "warm_up",
    "warm up",
    "dummy_run",
    "profile_run",
    "compil",
];

/// The first line of the error, its frames or its context that shows the first call. A
/// benchmark client's warm-up sends requests to a server (AISBench's `warmup failed. Exit task
/// because all warmup requests failed`): its line shows the server's first answers failing, not a
/// model's first call compiling, so no warm-up of the error (its frames' `warm_up` included) is
/// evidence once one of its own lines names warm-up requests.
fn first_call_evidence(err: &CausalError) -> Option<(u64, &'static str)> {
    let lines = || {
        std::iter::once((err.line, err.message.as_str()))
            .chain(err.scope.iter().map(|(n, t)| (*n, t.as_str())))
            .chain(err.frames.iter().map(|(n, t)| (*n, t.as_str())))
            .chain(err.context.iter().map(|(n, t)| (*n, t.as_str())))
    };
    let warm = |l: &str| l.contains("warmup") || l.contains("warm_up") || l.contains("warm up");
    // The error's own lines (not its neighbours') name warm-up requests.
    let client = std::iter::once(err.message.as_str())
        .chain(err.scope.iter().map(|(_, t)| t.as_str()))
        .chain(err.frames.iter().map(|(_, t)| t.as_str()))
        .any(|t| {
            let l = t.to_ascii_lowercase();
            [
                "warmup request",
                "warm-up request",
                "warm up request",
                "warmup_request",
            ]
            .iter()
            .any(|p| l.contains(p))
        });
    lines().find_map(|(no, t)| {
        let l = t.to_ascii_lowercase();
        FIRST_CALL_WORDS
            .iter()
            .find(|w| l.contains(*w) && !(client && warm(w)))
            .map(|w| (no, *w))
    })
}

/// Column headers of an accuracy report table.
const ACCURACY_COLUMNS: &[&str] = &[
    "accuracy",
    "acc",
    "score",
    "exact_match",
    "em",
    "f1",
    "bleu",
    "rouge",
    "ppl",
    "perplexity",
    "gsm8k",
    "mmlu",
    "ceval",
    "humaneval",
    "pass@1",
    "精度",
    "得分",
];

/// Column headers of a performance report table.
const PERFORMANCE_COLUMNS: &[&str] = &[
    "throughput",
    "latency",
    "tokens/s",
    "tok/s",
    "token/s",
    "tps",
    "tpot",
    "ttft",
    "qps",
    "samples/s",
    "it/s",
    "time",
    "ms",
    "speed",
    "speedup",
    "improvement",
    "吞吐",
    "时延",
    "耗时",
];

/// The cells of a Markdown / ASCII table row (`| a | b |`), or `None` for other lines.
fn table_cells(line: &str) -> Option<Vec<String>> {
    let t = line.trim();
    if !t.starts_with('|') || t.matches('|').count() < 3 {
        return None;
    }
    Some(
        t.trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_lowercase())
            .collect(),
    )
}

/// Header words of a column whose value is better the higher it is, by its own name: a negative
/// value there is a regression whatever the metric beside it measures.
const IMPROVEMENT_COLUMNS: &[&str] = &["improvement", "gain", "speedup", "提升", "改善"];

/// The first row under the header at line `header` (its `cells`) whose improvement column
/// ([`IMPROVEMENT_COLUMNS`]) holds a negative percentage (`-53.73%`): the row that shows what the
/// report is about (wider-world batches 23 and 26 cited the header). Its line index and text.
fn regressed_row<'t>(text: &'t str, header: usize, cells: &[String]) -> Option<(usize, &'t str)> {
    row_where(text, header, cells, IMPROVEMENT_COLUMNS, |v| {
        v.strip_prefix('-')
            .and_then(|n| n.strip_suffix('%'))
            .is_some_and(|n| n.trim().parse::<f64>().is_ok_and(|x| x > 0.0))
    })
}

/// The row under the header at line `header` (its `cells`) whose score column
/// ([`ACCURACY_COLUMNS`]) holds the score the report is about: the one score of the first such
/// column that stands below the rest ([`low_score_row`]: `fullgraph (chunked) | 56.71` under
/// `eager | 96.13` and `fullgraph(no chunked) | 95.68`, wider-world batch 37), else the first row
/// with a number (`0.5333`, `79.46%`; batch 30 cited the header). Its line index and text.
fn scored_row<'t>(text: &'t str, header: usize, cells: &[String]) -> Option<(usize, &'t str)> {
    let first = row_where(text, header, cells, ACCURACY_COLUMNS, |v| {
        score_of(v).is_some()
    })?;
    Some(low_score_row(text, header, cells).unwrap_or(first))
}

/// The score a cell holds: a number (`79.46%`, `0.5333`), or one after its count
/// (`932/1197 = 77.86%`, wider-world batch 42).
fn score_of(cell: &str) -> Option<f64> {
    let number = |s: &str| s.trim().trim_end_matches('%').trim().parse::<f64>().ok();
    number(cell).or_else(|| number(cell.rsplit_once(" = ")?.1))
}

/// Labels of a table's rows that summarise the others rather than report a run.
const SUMMARY_ROWS: &[&str] = &[
    "diff", "delta", "gap", "avg", "average", "mean", "差值", "平均",
];

/// The row whose score stands below the rest of the first score column ([`outlier`]), where the
/// rows are runs of one task: no row named after a dataset (a benchmark scores lower than
/// another by nature), summary rows (`diff`, `mean`) left out, a score that is higher when
/// better (not a perplexity), every value written alike (with `%` or without).
fn low_score_row<'t>(text: &'t str, header: usize, cells: &[String]) -> Option<(usize, &'t str)> {
    let (column, word) = cells
        .iter()
        .enumerate()
        .find_map(|(k, c)| header_has(std::slice::from_ref(c), ACCURACY_COLUMNS).map(|w| (k, w)))?;
    if ["ppl", "perplexity"].contains(&word) {
        return None;
    }
    let mut rows: Vec<(usize, &str, f64)> = Vec::new();
    let mut percent = Vec::new();
    for (at, l) in table_rows(text, header) {
        let Some(row) = table_cells(l) else { continue };
        let Some(v) = row.get(column) else { continue };
        let Some(x) = score_of(v) else {
            continue;
        };
        let label = &row[..1];
        if header_has(label, ACCURACY_COLUMNS).is_some() {
            return None;
        }
        if SUMMARY_ROWS.contains(&label[0].as_str()) {
            continue;
        }
        percent.push(v.ends_with('%'));
        rows.push((at, l, x));
    }
    if percent.windows(2).any(|p| p[0] != p[1]) {
        return None;
    }
    let values: Vec<f64> = rows.iter().map(|r| r.2).collect();
    outlier(&values).map(|k| (rows[k].0, rows[k].1))
}

/// The index of the one value of at least three that stands apart below the others: more than a
/// tenth of the median under it, and at least four times as far from it as any other value. A
/// column of like scores, of two that differ (which is the baseline?), or with one value above
/// the rest (which side is wrong?) has none.
fn outlier(values: &[f64]) -> Option<usize> {
    if values.len() < 3 || values.iter().any(|v| !v.is_finite()) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let far: Vec<f64> = values.iter().map(|v| (v - median).abs()).collect();
    let (k, &most) = far.iter().enumerate().max_by(|a, b| a.1.total_cmp(b.1))?;
    let next = far
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != k)
        .map(|(_, d)| *d)
        .fold(0.0, f64::max);
    (values[k] < median && most > median.abs() / 10.0 && most >= 4.0 * next).then_some(k)
}

/// The first row of the table under the header at line `header` (its `cells`; the table goes
/// on across ASCII rulers) whose value `holds` in a column whose header names one of `words`.
fn row_where<'t>(
    text: &'t str,
    header: usize,
    cells: &[String],
    words: &[&'static str],
    holds: impl Fn(&str) -> bool,
) -> Option<(usize, &'t str)> {
    let columns: Vec<usize> = cells
        .iter()
        .enumerate()
        .filter(|(_, c)| header_has(std::slice::from_ref(c), words).is_some())
        .map(|(k, _)| k)
        .collect();
    if columns.is_empty() {
        return None;
    }
    table_rows(text, header).find(|(_, l)| {
        table_cells(l).is_some_and(|row| {
            columns
                .iter()
                .any(|&k| row.get(k).is_some_and(|v| holds(v)))
        })
    })
}

/// The lines of the table under the header at line `header`, with their indices: up to the
/// first line that is neither a row nor an ASCII ruler (`+-----+`) between rows.
fn table_rows(text: &str, header: usize) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .skip(header + 1)
        .take_while(|(_, l)| table_ruler(l) || table_cells(l).is_some())
}

/// Whether a line is an ASCII table's ruler (`+-----+`, `+=====+`) between its rows.
fn table_ruler(line: &str) -> bool {
    let t = line.trim();
    t.starts_with('+') && t.chars().all(|c| matches!(c, '+' | '-' | '=' | ':'))
}

/// Key words of a throughput, the figure a performance summary is read by.
const THROUGHPUT_KEYS: &[&str] = &[
    "throughput",
    "tokens/s",
    "tok/s",
    "token/s",
    "tps",
    "qps",
    "吞吐",
];

/// A key-value table's row (`| Key | Value |`: two cells, a number in the second) at line
/// `first` is a summary of many figures, as a benchmark prints it (evalscope's `Benchmarking
/// summary`): the first of its rows whose key names a throughput ([`THROUGHPUT_KEYS`]) shows
/// what the report measures, over a duration or a count above it (wider-world batch 29). The
/// table goes on across ASCII rulers (`+----+`, `+====+`). Its line index and text.
fn throughput_row(text: &str, first: usize) -> Option<(usize, &str)> {
    let key_value = |l: &str| {
        table_cells(l)
            .filter(|c| c.len() == 2 && c[1].parse::<f64>().is_ok())
            .map(|c| c[0].clone())
    };
    let lines: Vec<&str> = text.lines().collect();
    key_value(lines.get(first)?)?;
    lines
        .iter()
        .enumerate()
        .skip(first)
        .take_while(|(_, l)| table_ruler(l) || table_cells(l).is_some())
        .find(|(_, l)| key_value(l).is_some_and(|k| header_has(&[k], THROUGHPUT_KEYS).is_some()))
        .map(|(k, l)| (k, *l))
}

/// Whether a header cell names one of `words` (a whole word; units in brackets allowed; a
/// Chinese word anywhere in the cell, which has no spaces between words).
fn header_has(cells: &[String], words: &[&'static str]) -> Option<&'static str> {
    cells.iter().find_map(|c| {
        c.split(|ch: char| ch.is_whitespace() || "()[],".contains(ch))
            .find_map(|part| {
                words
                    .iter()
                    .copied()
                    .find(|w| part == *w || (!w.is_ascii() && part.contains(w)))
            })
    })
}

/// Whether the rows of a table (`rows`: the lines after its header) hold a data type in column
/// `col` in every row that has it (`fp16`, `bf16`, `int8`, `w8a8`), one row at least.
fn dtype_column(rows: &[&str], col: usize) -> bool {
    const DTYPES: [&str; 12] = [
        "fp16", "bf16", "fp32", "fp8", "float16", "bfloat16", "float32", "int8", "int4", "w8a8",
        "w8a16", "w4a16",
    ];
    let mut seen = 0;
    for row in rows.iter().map_while(|l| table_cells(l)) {
        let Some(cell) = row.get(col) else { continue };
        let v = cell
            .trim_matches(|c: char| c == '*' || c.is_whitespace())
            .to_ascii_lowercase();
        if v.is_empty() || v.bytes().all(|b| b == b'-' || b == b':') {
            continue;
        }
        if !DTYPES.contains(&v.as_str()) {
            return false;
        }
        seen += 1;
    }
    seen > 0
}

/// Class 9: a report given as a table. A header with score columns → accuracy; a header with
/// throughput / latency columns → performance.
fn route_table(text: &str) -> Option<(Routing, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let Some(cells) = table_cells(line) else {
            continue;
        };
        // Rows that name their metric say what each measures, whatever the header's words.
        if let Some(found) = metric_rows(text, i, &cells) {
            return Some(found);
        }
        let found = [
            (ACCURACY_COLUMNS, Route::Accuracy, "table.accuracy", "score"),
            (
                PERFORMANCE_COLUMNS,
                Route::Performance,
                "table.performance",
                "throughput / latency",
            ),
        ]
        .into_iter()
        .find_map(|(columns, route, rule, what)| {
            // A score column whose rows hold data types is the run's precision, not a score
            // (`| 线程数 | 精度 | … | 速度 (Tokens/s) |` over `| 24 | fp16 | 1 | 3.12 |`); the
            // table's other score columns still are.
            let score = |(col, cell): (usize, &String)| {
                let w = header_has(std::slice::from_ref(cell), columns)?;
                (route != Route::Accuracy || !dtype_column(&lines[i + 1..], col)).then_some(w)
            };
            cells
                .iter()
                .enumerate()
                .find_map(score)
                .map(|w| (route, rule, what, w))
        });
        if let Some((route, rule, what, w)) = found {
            let mut r = Routing::new(route, rule, Some(w));
            r.why = format!(
                "no error; a report table whose header has a {what} column (`{w}`, line {}): {} {} report",
                i + 1,
                if route == Route::Accuracy { "an" } else { "a" },
                route.as_str()
            );
            if let Some(row) = regressed_row(text, i, &cells) {
                return Some((r, row.0 + 1, row.1.trim_end().to_string()));
            }
            // An accuracy report's symptom is its first score: the first row under the header
            // with a number in a score column (evalscope's report table, batch 30).
            if let Some((at, row)) = (route == Route::Accuracy)
                .then(|| scored_row(text, i, &cells))
                .flatten()
            {
                return Some((r, at + 1, row.trim_end().to_string()));
            }
            // A benchmark's summary of one run measures, and says nothing of a baseline: its
            // throughput row is cited, at low confidence (the verdict is the user's).
            let summary = (route == Route::Performance)
                .then(|| throughput_row(text, i))
                .flatten();
            if let Some((at, row)) = summary {
                r.confidence = Confidence::Low;
                r.why = format!(
                    "no error; a benchmark's key-value summary (line {}) whose throughput row is \
                     line {}: it measures one run and states no baseline — a performance question \
                     whose verdict (slower than what?) the user has to give",
                    i + 1,
                    at + 1
                );
                r.matched_line = Some(at as u64 + 1);
                return Some((r, at + 1, row.trim_end().to_string()));
            }
            return Some((r, i + 1, line.trim_end().to_string()));
        }
    }
    None
}

/// A table of measurements against a baseline whose rows name their metric (a CI's regression
/// report: `| … | Metric | Current | Baseline | Change | Status |` over `| … | mean_ttft_ms |
/// 9578.79 | 3352.75 | -185.70% | fail |`, wider-world batch 42): the route of the first row
/// whose metric's name has a score or a throughput / latency word — among the rows whose status
/// says they failed (`fail`, `❌ FAIL`, `regressed`) when any did, else among all —, that row
/// cited.
fn metric_rows(text: &str, header: usize, cells: &[String]) -> Option<(Routing, usize, String)> {
    let column = |names: &[&str]| cells.iter().position(|c| names.contains(&c.as_str()));
    let metric = column(&["metric", "metrics", "指标"])?;
    column(&["baseline", "基线"])?;
    let status = column(&["status", "result", "状态", "结果"]);
    let routed = |row: &[String]| {
        let name = row.get(metric)?.replace(['_', '-'], " ");
        let words = std::slice::from_ref(&name);
        header_has(words, PERFORMANCE_COLUMNS)
            .map(|w| (Route::Performance, "table.performance", w))
            .or_else(|| {
                header_has(words, ACCURACY_COLUMNS).map(|w| (Route::Accuracy, "table.accuracy", w))
            })
            .map(|found| (row[metric].clone(), found))
    };
    let failed = |row: &[String]| {
        status.is_some_and(|k| {
            row.get(k).is_some_and(|v| {
                // A word of failure (`fail…`, `regress…`) that none of the two words before it
                // negates (`pass (no regression)`, `0 fail`), nor a count after it (`failed:
                // 0`); `失败` without `未` / `无` / `没` before it; a cross mark.
                let words: Vec<&str> = v
                    .split(|c: char| !c.is_alphanumeric())
                    .filter(|w| !w.is_empty())
                    .collect();
                let said = words.iter().enumerate().any(|(i, w)| {
                    let failure = w.starts_with("fail") || w.starts_with("regress");
                    let negated = words[i.saturating_sub(2)..i]
                        .iter()
                        .any(|n| ["no", "not", "0", "none", "without"].contains(n));
                    let none_after = words.get(i + 1) == Some(&"0");
                    failure && !negated && !none_after
                });
                let zh = v
                    .match_indices("失败")
                    .any(|(at, _)| !v[..at].ends_with(['未', '无', '没']));
                said || zh || v.contains('❌')
            })
        })
    };
    let rows: Vec<(usize, &str, Vec<String>)> = table_rows(text, header)
        .filter_map(|(at, l)| Some((at, l, table_cells(l)?)))
        .collect();
    let any_failed = rows.iter().any(|(_, _, row)| failed(row));
    let (at, line, (name, (route, rule, w))) = rows
        .iter()
        .filter(|(_, _, row)| !any_failed || failed(row))
        .find_map(|(at, l, row)| Some((*at, *l, routed(row)?)))?;
    let mut r = Routing::new(route, rule, Some(w));
    r.why = format!(
        "no error; a table of measurements against a baseline (header line {}) whose row on line {} measures `{name}`: {} {} report",
        header + 1,
        at + 1,
        if route == Route::Accuracy { "an" } else { "a" },
        route.as_str()
    );
    Some((r, at + 1, line.trim_end().to_string()))
}

/// `异常` right before a verb of stopping is the compound "ended abnormally" (`结果异常停止`: "and
/// then it stopped abnormally"), not an abnormal result.
const ABNORMAL_END: [&str; 5] = ["停止", "退出", "终止", "中断", "结束"];

/// Words right before a report's word that say its check passed (`has passed the accuracy
/// test`, then `However, the running performance is much lower`): no complaint of it.
const PASSED: [&str; 3] = ["passed the ", "passes the ", "pass the "];

/// Words that turn a pass into a failure when they stand just before it (`has not passed the
/// accuracy test`, `cannot pass the`, `failed to pass the`, `never passes the`).
const NOT_PASSED: [&str; 6] = ["not", "n't", "never", "cannot", "failed to", "unable to"];

/// Whether the text before a report's word (`before`, lower-case) ends in a check it passed
/// ([`PASSED`], `pass` a word of its own: not `bypass the`, `surpass the`) that no word of
/// [`NOT_PASSED`] in the 16 bytes before it denies.
fn passed_before(before: &str) -> bool {
    PASSED.iter().any(|p| {
        before.strip_suffix(p).is_some_and(|head| {
            let word = head.is_empty() || head.ends_with([' ', '(', ',', ';']);
            let from = (head.len().saturating_sub(16)..=head.len())
                .find(|&k| head.is_char_boundary(k))
                .unwrap_or(head.len());
            let near = &head[from..];
            word && !NOT_PASSED.iter().any(|n| near.contains(n))
        })
    })
}

/// Where `word` (lower-case) occurs in `line` (lower-case) and is not negated right after it
/// (`精度正常`, `accuracy is fine`) or passed right before it (`passed the accuracy test`):
/// ASCII words at word starts (`nan` only as a whole word), others anywhere.
fn lexicon_hit(line: &str, word: &str) -> bool {
    if let Some(unit) = word.strip_prefix('0') {
        return unit_after_number(line, unit);
    }
    let mut from = 0;
    while let Some(rel) = line.get(from..).and_then(|l| l.find(word)) {
        let at = from + rel;
        let end = at + word.len();
        let bytes = line.as_bytes();
        let boundary = !word.is_ascii()
            || (token_start(bytes, at)
                && (word != "nan" || end >= bytes.len() || !bytes[end].is_ascii_alphabetic()));
        // `有没有提升` asks ("is there any improvement?"): `没有…` after `有` is no verdict
        // (nor `有没对齐`).
        let asked = word.starts_with('没') && line[..at].ends_with('有');
        if boundary && !asked {
            let after: String = line[end..].chars().take(12).collect();
            let negated = knowledge::lexicon(Kind::Negation).any(|n| after.contains(n.key))
                || (word.ends_with("异常") && ABNORMAL_END.iter().any(|v| after.starts_with(v)))
                || passed_before(&line[..at]);
            if !negated {
                return true;
            }
        }
        from = end;
    }
    false
}

/// Whether an ASCII `word` occurs in `line` (lower-case) as a whole word (`vs`, `than`: not
/// inside `canvas` or `thank`); other words count anywhere.
fn whole_ascii_word(line: &str, word: &str) -> bool {
    if !word.is_ascii() || word.len() > 4 {
        return true;
    }
    let bytes = line.as_bytes();
    line.match_indices(word).any(|(at, _)| {
        let end = at + word.len();
        (at == 0 || !bytes[at - 1].is_ascii_alphanumeric())
            && (end >= bytes.len() || !bytes[end].is_ascii_alphanumeric())
    })
}

/// Whether `unit` follows a number in `line` (`1520 ms`, `830ms`), and no letter follows it.
fn unit_after_number(line: &str, unit: &str) -> bool {
    let mut from = 0;
    while let Some(rel) = line.get(from..).and_then(|l| l.find(unit)) {
        let at = from + rel;
        let end = at + unit.len();
        let before = line[..at].strip_suffix(' ').unwrap_or(&line[..at]);
        let after_ok = !line[end..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic());
        if before.ends_with(|c: char| c.is_ascii_digit()) && after_ok {
            return true;
        }
        from = end;
    }
    false
}

/// The lowest scale a dynamic loss scaler says it lowered to, when it is
/// [`COLLAPSED_LOSS_SCALE`] or less: apex's and Ascend's apex port's `Gradient overflow.  Skipping
/// step, loss scaler 0 reducing loss scale to 4.0` (LLaMA-Factory's copy: `Loss scaler reducing
/// loss scale to 4.0`), DeepSpeed's `OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 8,
/// reducing to 4` (an INFO record: read whatever its level). Every fp16 run starts with a few
/// overflows while the scaler searches down from 2^16 (its first lines are no evidence); a
/// scale driven to single digits is gradients out of range step after step. The line and the
/// scale (its first line at that scale).
fn loss_scale_collapse(lines: &[&str]) -> Option<(usize, f64)> {
    const LOWERED: [&str; 2] = ["reducing loss scale to ", ", reducing to "];
    let mut low: Option<(usize, f64)> = None;
    for (i, line) in lines.iter().enumerate() {
        let l = line.to_ascii_lowercase();
        if !l.contains("loss scale") {
            continue;
        }
        let scale = LOWERED.iter().find_map(|w| {
            let (_, after) = l.split_once(w)?;
            let n: String = after
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            n.trim_end_matches('.').parse::<f64>().ok()
        });
        if let Some(s) = scale.filter(|s| low.is_none_or(|(_, m)| *s < m)) {
            low = Some((i, s));
        }
    }
    low.filter(|&(_, s)| s <= COLLAPSED_LOSS_SCALE)
}

/// The loss scale at or below which a scaler's search is over: half-precision gradients overflow
/// whatever it scales them by (apex and DeepSpeed start at 2^16; DeepSpeed stops at 1 by default).
const COLLAPSED_LOSS_SCALE: f64 = 16.0;

/// A training log that reports a loss or a gradient norm as `nan` / `inf`, else a float16
/// value printed at float16's largest magnitude (an overflow saturated): accuracy evidence from
/// the run itself, before any wording (a log of progress bars and metrics is not a report of
/// slowness).
fn route_metrics(text: &str) -> Option<(Routing, usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    // A value printed is the evidence; one a sentence asks about (`grad_norm = inf?`) only when
    // no line prints one.
    let found = |asked: bool| {
        lines.iter().enumerate().find_map(|(i, line)| {
            let m = if asked {
                nan_metric(&line.replace(['?', '？'], " "))
            } else {
                nan_metric(line)
            }?;
            let mut r = Routing::new(Route::Accuracy, "metric.nan", Some(&m));
            r.confidence = Confidence::Medium;
            r.why = if asked {
                format!(
                    "no error stack; the text asks about `{m}` (line {}), and no line prints such a value",
                    i + 1
                )
            } else {
                format!(
                    "no error stack; the training log reports `{m}` (line {}): the numbers went wrong",
                    i + 1
                )
            };
            Some((r, i))
        })
    };
    let nan = found(false).or_else(|| found(true));
    let spike = || {
        let (i, low, high) = loss_spike(&lines)?;
        let mut r = Routing::new(Route::Accuracy, "metric.loss-spike", Some("loss"));
        r.confidence = Confidence::Medium;
        r.why = format!(
            "no error stack; the training loss jumps to {high} at line {} from {low} logged \
             before, a hundredfold or more: training diverged",
            i + 1
        );
        Some((r, i))
    };
    let collapsed = || {
        let (i, scale) = loss_scale_collapse(&lines)?;
        let mut r = Routing::new(Route::Accuracy, "metric.loss-scale", Some("loss scale"));
        r.confidence = Confidence::Medium;
        r.why = format!(
            "no error stack; the dynamic loss scaler lowered its scale to {scale} (line {}): \
             half-precision gradients overflow step after step",
            i + 1
        );
        Some((r, i))
    };
    let (mut r, i) = nan.or_else(spike).or_else(collapsed).or_else(|| {
        let i = (0..lines.len()).find(|&i| saturated_half(&lines, i))?;
        let mut r = Routing::new(Route::Accuracy, "metric.half-saturated", Some("65504"));
        // A sign, not a proof: float16 rounds values just above 65504 to it too.
        r.confidence = Confidence::Low;
        r.why = format!(
            "no error stack; line {} prints a float16 tensor holding ±65504, float16's largest \
             value: an overflow the saturation mode stores as that value, unless the value is \
             really that large — compare with float32",
            i + 1
        );
        Some((r, i))
    })?;
    r.matched_line = Some(i as u64 + 1);
    Some((r, i + 1, lines[i].trim_end().to_string()))
}

/// The level a program logged a line at ([`line_severity`]), if it states one.
fn logged_level(line: &str) -> Option<npgx_parsers::line_prefix::Severity> {
    let s = strip_prefixes(npgx_parsers::causal::normalise::strip_decorations(line));
    line_severity(&s.prefixes, s.rest.trim())
}

/// Whether a line is a program's INFO or DEBUG record.
fn chatter(line: &str) -> bool {
    logged_level(line).is_some_and(|s| s.chatter())
}

/// A program's own record below the error level: [`chatter`], or a warning (`[WARNING] [56707]
/// profiler.py: Incorrect schedule: … may result in incomplete parsed data`) — the program's
/// words about itself, no report's.
fn own_record(line: &str) -> bool {
    logged_level(line)
        .is_some_and(|s| s.chatter() || s == npgx_parsers::line_prefix::Severity::Warning)
}

/// The function whose name leads a line as a C program logs it, llama.cpp's and ggml's
/// `__func__` (`load_tensors: offloading 32 repeating layers to GPU`, `print_info: EOS token =
/// 128001`): a line at no level, `name: words…` with `name` lower case and an underscore in it,
/// more than one word after it (`eval_accuracy: 0.5` is a metric), none of failure.
fn function_record(line: &str) -> Option<&str> {
    let s = strip_prefixes(npgx_parsers::causal::normalise::strip_decorations(line));
    if line_severity(&s.prefixes, s.rest.trim()).is_some() {
        return None;
    }
    let (name, said) = line.trim().split_once(": ")?;
    let function = name.contains('_')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    let l = said.to_ascii_lowercase();
    let failed = ["error", "fail", "abort", "unable", "cannot", "warn"]
        .iter()
        .any(|w| l.contains(w));
    (function && said.split_whitespace().count() > 1 && !failed).then_some(name)
}

/// The functions that lead at least two lines of a text ([`function_record`]): a C program logs
/// several lines from each of its functions, a user's own label (`my_eval: accuracy dropped`)
/// rarely repeats.
fn logging_functions<'t>(lines: &[&'t str]) -> std::collections::HashSet<&'t str> {
    let mut seen = std::collections::HashMap::<&str, usize>::new();
    for l in lines {
        if let Some(name) = function_record(l) {
            *seen.entry(name).or_default() += 1;
        }
    }
    seen.into_iter()
        .filter(|&(_, n)| n >= 2)
        .map(|(name, _)| name)
        .collect()
}

/// Whether a line is led by one of a text's logging `functions`.
fn own_function_line(line: &str, functions: &std::collections::HashSet<&str>) -> bool {
    function_record(line).is_some_and(|name| functions.contains(name))
}

/// A log that shows the work going to the host, without an error and without a report's
/// wording: an operator falling back to the CPU (PyTorch's warning), or llama.cpp's weights
/// left in host memory — performance evidence from the run itself.
fn route_host(lines: &[&str]) -> Option<(Routing, usize, String)> {
    let (i, rule, why) = match lines.iter().position(|l| cpu_fallback(l)) {
        Some(i) => (
            i,
            "metric.cpu-fallback",
            "an operator has no kernel on the device and runs on the CPU: every call goes to the host and back",
        ),
        None => (
            host_weights(lines)?,
            "metric.host-weights",
            "the model's weights stayed in host memory although its layers were offloaded: it computes on the CPU",
        ),
    };
    // The operator the fallback warning names (`The operator 'torchvision::nms' is …`) is the
    // token the rule fired on.
    let op = (rule == "metric.cpu-fallback")
        .then(|| {
            lines[i]
                .split_once("operator '")?
                .1
                .split_once('\'')
                .map(|(op, _)| op)
        })
        .flatten();
    let mut r = Routing::new(Route::Performance, rule, op);
    r.confidence = Confidence::Medium;
    r.why = format!("no error stack; line {}: {why}", i + 1);
    r.matched_line = Some(i as u64 + 1);
    Some((r, i + 1, lines[i].trim_end().to_string()))
}

/// A text whose only evidence is a speed it measures ([`speed_rates`]: a progress bar's
/// `329.53s/it`, a serving log's `1.48 请求/秒`; [`serving_metric`]: a server's per-request
/// `tpot: 822.96ms`; [`latencies`]: a demo's `Prediction time: avg 11429.317000 ms`): no error,
/// no report's words, nothing sent to the host. The only question such a paste can answer is a performance one, so it routes there
/// — at low confidence, because the verdict (slower than what?) is the user's, not the text's.
///
/// Not every speed is the run's: a set-up step's progress bar (`Loading checkpoint shards …
/// 1.10it/s`, `Map: … examples/s`, a download) and a zero rate (a stalled server's `0.0 tokens/s`)
/// are none. And a text that holds more than speeds — a warning or error record, a training
/// metric (`'loss': 2.34`: the question may be the loss) — is not routed by them.
fn route_speed(lines: &[&str]) -> Option<(Routing, usize, String)> {
    let more = lines.iter().any(|l| {
        let s = strip_prefixes(npgx_parsers::causal::normalise::strip_decorations(l));
        let level = line_severity(&s.prefixes, s.rest.trim());
        matches!(level, Some(Severity::Warning | Severity::Error)) || training_metric(l)
    });
    if more {
        return None;
    }
    // The first measurement of a line that is not zero (vLLM's engine line opens with the
    // prompt's `0.0 tokens/s` while it decodes): a speed or a server's metric anywhere in the
    // text first, a duration only without one (a rate says more than a total time).
    type Measures = for<'a> fn(&'a str) -> Vec<(&'a str, &'a str)>;
    let speeds: Measures = |l| {
        speed_rates(l)
            .map(|r| (r, r))
            .chain(serving_metric(l))
            .collect()
    };
    let first = |measures: Measures| {
        lines.iter().enumerate().find_map(|(i, l)| {
            let (rate, _) = measures(l).into_iter().find(|(_, value)| {
                value
                    .bytes()
                    .skip_while(|b| !b.is_ascii_digit())
                    .take_while(|b| b.is_ascii_digit() || b".,".contains(b))
                    .any(|b| (b'1'..=b'9').contains(&b))
            })?;
            let at = l.find(rate).unwrap_or(0);
            (!setting_up(&l[..at])).then_some((i, rate))
        })
    };
    // Durations: the longest (the slow step is the question, not the set-up around it), outside
    // set-up.
    let longest = || {
        lines
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                latencies(l)
                    .into_iter()
                    .filter(move |(d, ..)| !setting_up(&l[..l.find(d).unwrap_or(0)]))
                    .map(move |(d, _, s)| (i, d, s))
            })
            .filter(|(.., s)| *s > 0.0)
            .max_by(|a, b| a.2.total_cmp(&b.2))
            .map(|(i, d, _)| (i, d))
    };
    let (i, rate) = first(speeds).or_else(longest)?;
    let mut r = Routing::new(Route::Performance, "metric.speed-only", Some(rate));
    r.confidence = Confidence::Low;
    r.why = format!(
        "no error stack and no report's wording; line {} measures a speed or a latency (`{rate}`) and the \
         text states nothing else: a performance question, whose verdict (slower than what: \
         another device, an earlier release, eager mode?) the user has to give",
        i + 1
    );
    r.matched_line = Some(i as u64 + 1);
    Some((r, i + 1, lines[i].trim_end().to_string()))
}

/// Generated text that degenerated into repetition (line `i`, [`degenerate_text`]), in a text
/// with no error and no report's wording: accuracy, at low confidence — a model whose numbers
/// are wrong writes it, and so does one with wrong sampling settings or chat template.
fn route_degenerate(lines: &[&str], i: usize) -> (Routing, usize, String) {
    let mut r = Routing::new(
        Route::Accuracy,
        "metric.degenerate-text",
        Some("repetition"),
    );
    r.confidence = Confidence::Low;
    r.why = format!(
        "no error stack; line {} is generated text that degenerated into repetition (one unit \
         over and over, a few words making most of the line, or lines the output repeats): wrong numbers in the model's \
         computation write it — and so do sampling settings or a chat template that do not fit \
         the model",
        i + 1
    );
    r.matched_line = Some(i as u64 + 1);
    (r, i + 1, lines[i].trim_end().to_string())
}

/// Words of a set-up step's progress bar, before its rate (lower case, at a word's start):
/// loading weights, downloading, preprocessing a dataset, capturing graphs, compiling.
const SETUP_WORDS: &[&str] = &[
    "load",
    "fetch",
    "download",
    "map",
    "tokeniz",
    "preprocess",
    "captur",
    "convert",
    "generating",
    "filter",
    "saving",
    "extract",
    "compil",
    "warm",
];

/// Whether the text before a rate names a set-up step ([`SETUP_WORDS`]).
fn setting_up(before: &str) -> bool {
    let l = before.to_lowercase();
    SETUP_WORDS.iter().any(|w| {
        l.match_indices(w)
            .any(|(at, _)| token_start(l.as_bytes(), at))
    })
}

/// Whether a line logs a training metric (`'loss': 2.34`, `loss: 2.1`, `loss=2.1`, MindSpore's
/// `loss is 1.45`, `grad_norm`).
fn training_metric(line: &str) -> bool {
    let l = line.to_ascii_lowercase();
    ["loss", "grad_norm", "grad norm"].iter().any(|m| {
        l.match_indices(m).any(|(at, _)| {
            let after = l[at + m.len()..].trim_start_matches(['\'', '"', ' ']);
            token_start(l.as_bytes(), at)
                && (after.starts_with([':', '='])
                    || after.strip_prefix("is ").is_some_and(|v| {
                        v.trim_start()
                            .starts_with(|c: char| c.is_ascii_digit() || c == '-')
                    }))
        })
    })
}

/// Performance words that only measure (a unit, a metric's name): a line of them is a
/// measurement, not a report that something is slow.
const MEASUREMENT_WORDS: &[&str] = &[
    "latency",
    "throughput",
    "tokens/s",
    "tok/s",
    "token/s",
    "ttft",
    "tpot",
    "0ms",
    "0毫秒",
    "耗时",
    "吞吐",
    "时延",
    "延迟",
];

/// Whether a line carries a figure of its own — a number standing as a word (`0.1000%`, `is 79.46`,
/// `-3.2`), not digits inside a name (`dpn92`, `Ascend910`, `Qwen3`): a measurement, the line an
/// accuracy report's evidence is.
fn carries_figure(line: &str) -> bool {
    line.split(|c: char| c.is_whitespace() || "()[]{},:;=|".contains(c))
        .any(|w| {
            let w = w
                .trim_end_matches(['%', '.'])
                .trim_start_matches(['-', '+']);
            !w.is_empty() && w.parse::<f64>().is_ok()
        })
}

/// Words of a time or a cost, beside which `高于` (higher than) says slower: a throughput or a
/// score higher than the baseline's is good news.
const COST_WORDS: &[&str] = &["耗时", "时延", "延迟", "时间", "latency", "time"];

/// Rules 3 and 4 on text without an error: a report table, else the report's wording (the
/// bilingual lexicon of [`npgx_parsers::knowledge`]). The route with more lines of its wording
/// wins (accuracy on a tie, the rules' order); the evidence is its first line that carries a
/// figure (a measurement), else its first line.
pub fn route_prose(text: &str) -> Option<(Routing, usize, String)> {
    if let Some(t) = route_metrics(text) {
        return Some(t);
    }
    if let Some(t) = route_table(text) {
        return Some(t);
    }
    let lines: Vec<&str> = text.lines().collect();
    if let Some(t) = route_zeros(&lines) {
        return Some(t);
    }
    let functions = logging_functions(&lines);
    let own: Vec<bool> = lines.iter().map(|l| own_record(l)).collect();
    // A performance report's symptom is its verdict (a latency alone is neither slow nor
    // fast): the first line that compares, even one whose metric name is misspelt.
    let verdict = lines.iter().enumerate().find_map(|(i, line)| {
        // A program's own record is no verdict on it (`- INFO - … - Using torch SDPA for faster
        // training and inference.`).
        if own[i] {
            return None;
        }
        let l = line.to_lowercase();
        knowledge::lexicon(Kind::Verdict)
            .find(|w| {
                lexicon_hit(&l, w.key)
                    && whole_ascii_word(&l, w.key)
                    && (w.key != "高于" || COST_WORDS.iter().any(|c| l.contains(c)))
            })
            .map(|w| (i, w.key))
    });
    // (route, rule, lines with its wording as (line index, word)).
    type Hits = (Route, &'static str, Vec<(usize, &'static str)>);
    let mut best: Option<Hits> = None;
    for (route, kind, rule) in [
        (Route::Accuracy, Kind::Accuracy, "keyword.accuracy"),
        (Route::Performance, Kind::Performance, "keyword.performance"),
    ] {
        let hits: Vec<(usize, &'static str)> = lines
            .iter()
            .enumerate()
            .filter_map(|(i, line)| {
                // A program's own INFO or DEBUG record, or its function-led line, is no report's
                // wording (llama.cpp's `I load_tensors: offloading 36 repeating layers`, `using
                // mixed precision`).
                if route == Route::Accuracy && (own[i] || own_function_line(line, &functions)) {
                    return None;
                }
                // PyTorch's fallback warning's own words (`This may have performance
                // implications`) are no report: the fallback is host evidence (`route_host`).
                if route == Route::Performance && cpu_fallback(line) {
                    return None;
                }
                // A program's own record may measure (a serving log's `Avg generation throughput:
                // 1.6 tokens/s`), but its words of speed are about itself, no report's.
                let logged = route == Route::Performance && own[i];
                let l = line.to_lowercase();
                knowledge::lexicon(kind)
                    .find(|w| {
                        lexicon_hit(&l, w.key) && (!logged || MEASUREMENT_WORDS.contains(&w.key))
                    })
                    .map(|w| (i, w.key))
            })
            .collect();
        // Measurements alone (a serving log's throughput lines, a trainer's step times) are
        // not a report of slowness: performance needs a verdict or a word of slowness.
        let reported = route != Route::Performance
            || verdict.is_some()
            || hits.iter().any(|(i, _)| {
                // (A program's own record measures at most: its words of speed are its own.)
                if own[*i] {
                    return false;
                }
                let l = lines[*i].to_lowercase();
                knowledge::lexicon(kind)
                    .any(|w| !MEASUREMENT_WORDS.contains(&w.key) && lexicon_hit(&l, w.key))
            });
        if reported && !hits.is_empty() && best.as_ref().is_none_or(|b| hits.len() > b.2.len()) {
            best = Some((route, rule, hits));
        }
    }
    // Generated text that degenerated into repetition: the symptom of an accuracy report.
    let degenerate = lines
        .iter()
        .position(|l| degenerate_text(l))
        .or_else(|| repeated_lines(&lines));
    let Some((route, rule, hits)) = best else {
        return route_host(&lines)
            .or_else(|| degenerate.map(|i| route_degenerate(&lines, i)))
            .or_else(|| route_speed(&lines));
    };
    // An accuracy report's symptom is the degenerate text it shows (the rule is then that
    // text's, at medium: the words agree with it, and its remedy is the reference run), else its
    // first score.
    if let (Route::Accuracy, Some(i), Some(&(said, w))) = (route, degenerate, hits.first()) {
        let (mut r, at, cited) = route_degenerate(&lines, i);
        r.confidence = Confidence::Medium;
        r.why = format!(
            "{}; the report's words say so too (`{w}`, line {})",
            r.why,
            said + 1
        );
        return Some((r, at, cited));
    }
    let (i, w) = verdict
        .filter(|_| route == Route::Performance)
        .or_else(|| {
            hits.iter()
                .copied()
                .find(|(i, _)| carries_figure(lines[*i]))
        })
        .or_else(|| hits.first().copied())?;
    let mut r = Routing::new(route, rule, Some(w));
    r.confidence = Confidence::Medium;
    r.why = format!(
        "no error stack; {} line(s) of {} wording (rules 3–4)",
        hits.len(),
        route.as_str()
    );
    Some((r, i + 1, lines[i].trim_end().to_string()))
}

/// Words of a report that its output is zeros (`返回结果全零`, `the output is all zeros`).
const ZERO_WORDS: &[&str] = &[
    "全零",
    "全0",
    "全为0",
    "全是0",
    "全为零",
    "全是零",
    "all zeros",
    "all zero",
];

/// Words just before them that deny it (`不是全零`, `不全是0`, `no longer all zeros`); `是不是`
/// asks, it does not deny.
const ZERO_NEGATIONS: &[&str] = &[
    "不是",
    "并非",
    "不再",
    "不",
    "没有",
    "没",
    "not",
    "no longer",
    "n't",
    "n’t",
];

/// Whether the zeros word `w` at byte `at` of the lower-case line `l` says the output is zeros:
/// a word of its own (`all zero-shot`, `overall zero` are none), not a setting's value (`全为0.1`),
/// not zero-copy (`全零拷贝`), not denied just before it.
fn says_zeros(l: &str, at: usize, w: &str) -> bool {
    let after = &l[at + w.len()..];
    let before = l[..at].trim_end();
    let ascii = w.is_ascii();
    let bounded = !ascii
        || (!l[..at].ends_with(|c: char| c.is_alphanumeric())
            && !after.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_'));
    let mut chars = after.chars();
    let setting = match chars.next() {
        Some(c) if c.is_ascii_digit() || c == '拷' => true,
        Some('.') => chars.next().is_some_and(|c| c.is_ascii_digit()),
        _ => false,
    };
    let denied = !before.ends_with("是不是") && ZERO_NEGATIONS.iter().any(|n| before.ends_with(n));
    bounded && !setting && !denied
}

/// A report that its output is zeros ([`says_zeros`]; a program's own INFO or DEBUG record is
/// no report) and the tensor or array of zeros it prints nearest after its words, else before
/// them ([`zero_block`]: on one line or over the rows torch and numpy print): accuracy, the
/// zeros cited. Without such a tensor, nothing (the words alone are no evidence of wrong
/// numbers).
fn route_zeros(lines: &[&str]) -> Option<(Routing, usize, String)> {
    let (said, word) = lines.iter().enumerate().find_map(|(i, line)| {
        if chatter(line) {
            return None;
        }
        let l = line.to_lowercase();
        ZERO_WORDS.iter().find_map(|w| {
            l.match_indices(w)
                .any(|(at, _)| says_zeros(&l, at, w))
                .then_some((i, *w))
        })
    })?;
    let z = (said..lines.len())
        .find(|&k| zero_block(lines, k).is_some())
        .or_else(|| (0..said).rev().find(|&k| zero_block(lines, k).is_some()))?;
    let mut r = Routing::new(Route::Accuracy, "metric.zero-output", Some(word));
    r.confidence = Confidence::Medium;
    r.why = format!(
        "no error stack; the report says its output is zeros (`{word}`, line {}) and prints them (line {})",
        said + 1,
        z + 1
    );
    Some((r, z + 1, lines[z].trim_end().to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    use npgx_parsers::causal::first_causal_error;

    fn route_of(text: &str) -> Routing {
        route_error(&first_causal_error(text.as_bytes()).expect("a causal error"))
    }

    #[test]
    fn every_routes_skill_is_shipped() {
        for route in [
            Route::CompileError,
            Route::RuntimeError,
            Route::Accuracy,
            Route::Performance,
            Route::Environment,
        ] {
            let skill = route.skill().expect("a skill");
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("skills")
                .join(&skill)
                .join("SKILL.md");
            assert!(path.is_file(), "{}", path.display());
        }
        assert_eq!(Route::Undetermined.skill(), None);
    }

    // Wider-world batch 31: a test's failed comparison of computed values with expected ones is
    // an accuracy question whatever exception carried it; other assertions and mismatches keep
    // their routes.
    #[test]
    fn a_failed_comparison_of_values_is_accuracy() {
        for (text, word, line) in [
            ("AssertionError: Output 'c' does not match golden.\n  Mismatched elements: 4096/4096\n  rtol=1e-05, atol=1e-05\n", "does not match golden", 1),
            ("Traceback (most recent call last):\n  File \"t.py\", line 3, in <module>\n    torch.testing.assert_close(out, ref)\nAssertionError: Tensor-likes are not close!\n\nMismatched elements: 12 / 64 (18.8%)\nGreatest absolute difference: 0.5 at index (0, 1) (up to 1e-05 allowed)\n", "Tensor-likes are not close", 4),
            ("AssertionError: \nNot equal to tolerance rtol=1e-07, atol=0\n\nMismatched elements: 3 / 8 (37.5%)\n", "Not equal to tolerance", 2),
            ("AssertionError: Scalars are not equal!\n\nExpected 3 but got 4.\n", "Scalars are not equal", 1),
            ("AssertionError: Output 'c' does not match golden (max diff 0.5, rtol 1e-3)\n", "does not match golden", 1),
            // llama.cpp's operator test (wider-world batch 38).
            ("  MUL_MAT(type_a=f16,type_b=f16,m=16,n=16,k=256,bs=[10,10],nr=[2,2]): OK\n  MUL_MAT(type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1]): [MUL_MAT] NMSE = 0.000952909 > 0.000500000 FAIL\n", "] NMSE = ", 2),
        ] {
            let r = route_of(text);
            assert_eq!(
                (r.route, r.rule.as_str(), r.matched.as_deref(), r.matched_line),
                (Route::Accuracy, "shape.comparison-failed", Some(word), Some(line)),
                "{text}"
            );
        }
        for text in [
            "AssertionError: expected 3 arguments\n",
            "RuntimeError: shape mismatch: value tensor of shape [2] cannot be broadcast to indexing result of shape [3]\n",
            "EZ9999: Inner Error!\nEZ9999[PID: 1] 2026-01-01-00:00:00.000.000 (EZ9999): output does not match golden in the self-check[FUNC:f][FILE:f.cc][LINE:1]\n",
            // The review's: shapes that differ (no values compared), a golden file of text.
            "AssertionError: Not equal to tolerance rtol=1e-07, atol=0\n(shapes (3,), (4,) mismatch)\n x: array([1, 2, 3])\n",
            "AssertionError: Rendered HTML does not match golden testdata/page.golden\n",
        ] {
            assert_ne!(route_of(text).rule, "shape.comparison-failed", "{text}");
        }
    }

    // Wider-world batch 31: a model the installed release does not implement is the environment
    // (MindIE's ATB models, vLLM's registry, transformers' AutoConfig); a Ray worker that died is
    // cited under Ray Train's wrapper, which sends the reader to the messages before it.
    #[test]
    fn models_the_release_lacks_and_workers_that_died() {
        for text in [
            "[2025-04-15 16:40:05.552024] [17310] [281473799454720] [llm] [ERROR] [model_deploy_config.cpp:159] Failed to get vocab size from tokenizer wrapper with exception: NotImplementedError: unsupported model type: falcon_mamba；请确认atb_llm.models路径下是否存在名为falcon_mamba的文件夹。\n",
            "(APIServer pid=1) ValueError: Model architectures ['DeepseekOCRForCausalLM'] are not supported for now. Supported architectures: dict_keys(['ApertusForCausalLM'])\n",
            "ValueError: The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not recognize this architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.\n",
            // An operator the installed packages hold no tiling function of (batch 30).
            "EZ9999: Inner Error!\nEZ9999[PID: 1] 2026-06-26-09:26:34.358.686 AclNN_Inner_Error(EZ9999):  Do not find tiling func of RotaryPositionEmbedding!\n        TraceBack (most recent call last):\n       Check NnopbaseExecutorDoTiling(executor) failed\n",
        ] {
            assert_eq!(route_of(text).route, Route::Environment, "{text}");
        }
        // Dynamo's note under its own exception, the exception cut (batch 33): tracing.
        let dynamo = "(EngineCore pid=229) ERROR 04-14 10:51:23 [core.py:1099]     os.environ[\"TRITON_ALL_BLOCKS_PARALLEL\"] = \"1\"\n(EngineCore pid=229) ERROR 04-14 10:51:23 [core.py:1099]   File \"<frozen os>\", line 685, in __setitem__\n(EngineCore pid=229) ERROR 04-14 10:51:23 [core.py:1099]\n(EngineCore pid=229) ERROR 04-14 10:51:23 [core.py:1099] Set TORCHDYNAMO_VERBOSE=1\n";
        assert_eq!(route_of(dynamo).route, Route::CompileError);
        // A script's own refusal of a model type is no release's (the review's).
        assert_ne!(
            route_of("ValueError: Unsupported model type: resnet51\n").route,
            Route::Environment
        );
        let ray = "Traceback (most recent call last):\n  File \"/d/train1.py\", line 156, in <module>\n    result = ray_trainer.fit()\n  File \"/e/ray/train/base_trainer.py\", line 638, in fit\n    raise TrainingFailedError(\nray.train.base_trainer.TrainingFailedError: The Ray Train run failed. Please inspect the previous error messages for a cause.\n[ERROR] 2025-02-05-07:50:38 (PID:39837, Device:-1, RankID:-1) ERR99999 UNKNOWN application exception\n    The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR\n";
        let e = first_causal_error(ray.as_bytes()).unwrap();
        assert_eq!(e.line, 8);
        assert_eq!(route_error(&e).route, Route::RuntimeError);
    }

    // Wider-world batch 32: a stream the driver cannot create with the framework's flags is the
    // environment (a `feature not support` when the runtime only fetched the device's messages
    // after another failure is not); wrappers that send the reader to the error before them.
    #[test]
    fn stream_flags_the_driver_lacks_and_wrappers_that_point_back() {
        let flags = "MindSpore running check failed.\nAscend kernel runtime initialization failed.\n\nEE8888: Inner Error!\n        Unsupport flags, flags=4[FUNC:StreamCreate][FILE:api_error.cc][LINE:300]\n        rtStreamCreateWithFlags execute failed, reason=[feature not support][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:49]\n";
        assert_eq!(route_of(flags).route, Route::Environment);
        let fetch = "EE9999: Inner Error!\nEE9999  get device msg feature can not support offline mode.[FUNC:GetDevMsg][FILE:api_impl.cc][LINE:3483]\nrtGetDevMsg execute failed, reason=[feature not support][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:49]\n";
        assert_ne!(route_of(fetch).route, Route::Environment);
        let vllm = "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}\nEZ9999: Inner Error!\nEZ9999[PID: 1] 2025-11-26-11:11:13.907.262 AclNN_Inner_Error(EZ9999):  Op Pack does not has any binary.\n";
        let e = first_causal_error(vllm.as_bytes()).unwrap();
        assert_eq!((e.line, route_error(&e).route), (3, Route::Environment));
        // torch_npu's process group before the watchdog's error (the review's).
        let group = "[rank0]:[E1 00:00:00.000 compiler_depend.ts:1] Some HCCL operations have failed or timed out. Due to the asynchronous nature of ASCEND kernels, subsequent NPU operations might run on corrupted/incomplete data.\n[rank0]:[E1 00:00:00.000 compiler_depend.ts:2] To avoid data inconsistency, we are taking the entire process down.\n[rank0]:[E1 00:00:00.000 compiler_depend.ts:3] [Rank 0] HCCL watchdog thread terminated with exception: EI0006: [PID: 1] 2026-01-01-00:00:00.000.000 Getting socket times out.\n";
        assert_eq!(first_causal_error(group.as_bytes()).unwrap().line, 3);
        // Ray's memory monitor's words on the dead worker's line: its own row (the review's).
        let ray = "The actor is dead because its worker process has died. Worker exit type: USER_ERROR Worker exit detail: Task was killed due to the node running low on memory.\n";
        assert_eq!(
            route_of(ray).matched.as_deref(),
            Some("killed due to the node running low on memory")
        );
        let watchdog = "[rank11]:[E313 06:55:06.502205450 compiler_depend.ts:1795] To avoid data inconsistency, we are taking the entire process down.\n[rank11]:[E313 06:55:06.502248200 compiler_depend.ts:1693] [Rank 1] HCCL watchdog thread terminated with exception: [PID: 335] 2026-03-13-06:55:06.896.485 Execution_Error_ROCE_CQE(EI0013): An error CQE occurred during operator execution.\n";
        assert_eq!(first_causal_error(watchdog.as_bytes()).unwrap().line, 2);
    }

    // Class 4: the CANN code family decides the layer, before any keyword or the fallback.
    #[test]
    fn cann_code_family_decides_the_layer() {
        let r =
            route_of("EI0006: [PID: 1] 2025-01-01-00:00:00.000.000 Getting socket times out.\n");
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::RuntimeError, "shape.cann-code-family")
        );
        let r =
            route_of("E19014: [PID: 1] 2025-01-01-00:00:00.000.000 Value of attr x is invalid.\n");
        assert_eq!(r.route, Route::CompileError);
        let r = route_of("EZ9999: Inner Error!\n        The error from device(chipId:0, dieId:0), core 1 failed[FUNC:F][FILE:f.cc][LINE:1]\n");
        assert_eq!(r.route, Route::RuntimeError);
        // A runtime error number wins over the no-token fallback.
        let r = route_of("RuntimeError: f():x.cpp:3 could not run, error code is 507015\n");
        assert_eq!(
            (r.route, r.matched.as_deref()),
            (Route::RuntimeError, Some("507015"))
        );
    }

    // Class 7: capture context beats resource and stream wording — but not exhausted memory,
    // whose kind settles the route (kind before phase).
    #[test]
    fn capture_context_is_compile_error() {
        let r = route_of("Traceback (most recent call last):\n  File \"r.py\", line 9, in capture_model\n    run()\nRuntimeError: capture_begin failed, error code is 207005\n");
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::CompileError, "capture.context")
        );
        let r = route_of("Traceback (most recent call last):\n  File \"r.py\", line 9, in capture_model\n    run()\nRuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n");
        assert_eq!(
            (r.route, r.rule.as_str(), r.kind),
            (
                Route::RuntimeError,
                "shape.phrase",
                Some(CauseKind::Resource)
            )
        );
        assert!(r.why.starts_with("kind before phase"), "{}", r.why);
        assert_eq!(r.matched_line, Some(4));
        // A CANN function missing from the installed library is the environment, even inside
        // capture_begin.
        let r = route_of("  File \"g.py\", line 96, in capture_begin\n    super().capture_begin(pool=pool)\nRuntimeError: Failed to find function aclmdlRICaptureBegin\n");
        assert_eq!(
            (r.route, r.package.as_deref()),
            (Route::Environment, Some("CANN (AscendCL runtime library)"))
        );
        // An API that updates a graph already captured runs at replay: runtime-error.
        let r = route_of("RuntimeError: graph_task_update_end:x.ts:48 NPU function error: c10_npu::acl::AclmdlRICaptureTaskUpdateEnd(stream), error code is 507000\n");
        assert_eq!(r.route, Route::RuntimeError);
        let r = route_of("RuntimeError: stream sync failed while capturing the graph\n");
        assert_eq!(r.route, Route::CompileError);
        // Capture succeeded and replay fails: runtime-error.
        let r = route_of("RuntimeError: graph replay failed on stream 3 after capture\n");
        assert_eq!(r.route, Route::RuntimeError);
    }

    // Class 8: environment problems name the package.
    #[test]
    fn environment_problems() {
        // A library only NNAL ships, named without its path, and NNAL's own script.
        let r = route_of("ValueError: Fail to open library: /x/libplugin.so with error: libatb.so: cannot open shared object file: No such file or directory\n");
        assert_eq!(
            r.package.as_deref(),
            Some("NNAL ATB (Ascend Transformer Boost)")
        );
        assert!(
            r.notes
                .iter()
                .any(|n| n.contains("NNAL's nnal/atb/set_env.sh")),
            "{:?}",
            r.notes
        );
        // A CANN library without a CANN symbol: two releases mixed.
        let mixed = route_of("ValueError: /usr/local/Ascend/ascend-toolkit/latest/lib64/libruntime.so: undefined symbol: _ZN12ErrorManager19ATCReportErrMessageE\n");
        assert_eq!(mixed.package.as_deref(), Some("CANN toolkit"));
        assert!(
            mixed
                .notes
                .iter()
                .any(|n| n.contains("two CANN releases mixed")),
            "{:?}",
            mixed.notes
        );
        // ATB-Models' own library is not NNAL's.
        let speed = route_of(
            "OSError: libatb_speed_torch.so: cannot open shared object file: No such file or directory\n",
        );
        assert_eq!(speed.package.as_deref(), Some("libatb_speed_torch.so"));
        let r = route_of(
            "OSError: /opt/Ascend/nnal/atb/latest/lib/libatb.so: undefined symbol: _ZN1x\n",
        );
        assert_eq!(
            (r.route, r.package.as_deref()),
            (
                Route::Environment,
                Some("NNAL ATB (Ascend Transformer Boost)")
            )
        );
        let r = route_of("ModuleNotFoundError: No module named 'tbe.common'\n");
        assert_eq!(
            (r.route, r.package.as_deref()),
            (Route::Environment, Some("tbe"))
        );
        let r = route_of("AttributeError: module 'torch_npu.npu' has no attribute 'graph_mode'\n");
        assert_eq!(
            (r.route, r.package.as_deref()),
            (Route::Environment, Some("torch_npu"))
        );
        let r = route_of("torch._dynamo.exc.InvalidBackend: Invalid backend: 'npugraph_ex', see `torch._dynamo.list_backends()`\n");
        assert_eq!(
            (r.route, r.package.as_deref()),
            (Route::Environment, Some("npugraph_ex"))
        );
        // Any missing module is an installation problem, Ascend's or not.
        let r = route_of("ModuleNotFoundError: No module named 'mylib'\n");
        assert_eq!(
            (r.route, r.package.as_deref()),
            (Route::Environment, Some("mylib"))
        );
    }

    // What a build, a device's start-up and an extension built against another torch_npu lack,
    // as the environment route names it; nothing when the error names nothing.
    #[test]
    fn builds_devices_and_extensions_name_what_to_fix() {
        let cases = [
            ("CMake Error at /a/ASCConfig.cmake:20 (include):\n  include could not find requested file:\n\n    /b/FindASC.cmake\nCall Stack (most recent call first):\n", Some("/b/FindASC.cmake")),
            ("CMake Error at /usr/share/cmake/FindPackageHandleStandardArgs.cmake:230 (message):\n  Could NOT find Torch_npu (missing: TORCH_NPU_INCLUDE_DIRS)\nCall Stack (most recent call first):\n", Some("Torch_npu")),
            ("CMake Error at cmake/generic.cmake:1:\n  Parse error.  Expected a command name\n", None),
            ("/usr/bin/ld: cannot find -lnpu_hccl: No such file or directory\ncollect2: error: ld returned 1 exit status\n", Some("libnpu_hccl")),
            ("OSError: /x/ext.so: undefined symbol: _ZN7c10_npu3acl20AclrtPeekAtLastErrorE\n", Some("torch_npu")),
            ("ImportError: /x/libmy.so: undefined symbol: _ZN5mylib10concat_npuEv\n", Some("libmy.so")),
            ("ld.lld: error: unable to find library -lhccl\n", Some("libhccl")),
            ("CMake Error at CMakeLists.txt:3 (find_package):\n  Could not find a package configuration file provided by \"Torch_npu\" with any\n  of the following names:\n", Some("Torch_npu")),
            ("om_backend.cc(174)::InitResource\tacl init failed, errorCode = 100002\n", None),
            ("EL0002: 2024-10-22-11:56:14.885.664 The device ID is invalid.\n", None),
        ];
        for (text, package) in cases {
            let r = route_of(text);
            assert_eq!(
                (r.route, r.package.as_deref()),
                (Route::Environment, package),
                "{text}"
            );
        }
    }

    // The held-back classes of issue 19, one synthetic case each (the shapes, not the samples).
    #[test]
    fn frames_only_glog_traceback_is_compile() {
        let p = "W0430 10:16:12.733000 2814 torch/_dynamo/convert_frame.py:1009]";
        let text = format!(
            "{p} WON'T CONVERT forward m.py line 12\n{p} Traceback (most recent call last):\n{p}   File \"/x/torch/_dynamo/convert_frame.py\", line 986, in __call__\n{p}     result = self._inner(frame)\n{p}   File \"/x/torch/_functorch/aot_autograd.py\", line 1, in aot_module\n{p}     g()\n{p}   File \"/x/torchair/npu_fx_compiler.py\", line 2, in compile\n{p}     h()\n"
        );
        let r = route_of(&text);
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::CompileError, "phase.frames")
        );
        assert_eq!(r.confidence, Confidence::Medium);
    }

    #[test]
    fn capture_behind_a_generic_hint() {
        let text = "RuntimeError: capture_begin:NPUGraph.cpp:230 NPU function error: c10_npu::acl::AclmdlRICaptureBegin(s, m), error code is 207005\n[ERROR] 2025-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n[Error]: Failed to apply for memory.\n        Check the remaining storage space in the hardware environment.\nEE9999: Inner Error!\nEE9999[PID: 1] 2025-01-01-00:00:00.000.000 (EE9999):  Failed to alloc 64 streams, resource exhausted[FUNC:F][FILE:f.cc][LINE:1]\n";
        let e = first_causal_error(text.as_bytes()).unwrap();
        // The CANN line with the detail, not the generic hint, is cited; capture decides.
        assert_eq!(e.line, 6);
        let r = route_error(&e);
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::CompileError, "capture.context")
        );
        let text = "RuntimeError: Cannot run aclop operators during NPU graph capture. Current working aclop is MatMul.\n";
        assert_eq!(route_of(text).route, Route::CompileError);
    }

    #[test]
    fn device_hint_is_runtime_not_fallback() {
        let text = "RuntimeError: synchronize:NPUStream.cpp:1 NPU function error: AclrtSynchronizeStreamWithTimeout, error code is 507035\n[Error]: The vector core execution is abnormal.\n        Rectify the fault based on the error information in the ascend log.\n";
        let r = route_of(text);
        assert_eq!(r.route, Route::RuntimeError);
        assert_eq!(first_causal_error(text.as_bytes()).unwrap().line, 2);
    }

    #[test]
    fn environment_behind_other_shapes() {
        for text in [
            "[ERROR] TBE(9,python):2025-01-01-00:00:00.000.000 [x.cc:1]9 Run: ModuleNotFoundError: No module named 'attr'\n",
            "torch._inductor.exc.InductorError: ModuleNotFoundError: No module named 'triton'\n",
            "AttributeError: module 'torch_npu' has no attribute 'npu_fused_infer_attention_score'\n",
            "RuntimeError: aclnnFooGetWorkspaceSize or aclnnFoo not in libopapi.so, or libopapi.so not found.\n",
            "RuntimeError: SetDevice:NPUFunctions.cpp:1 NPU function error: aclrtSetDevice, error code is 507033\nE30006: [PID: 1] 2025-01-01-00:00:00.000.000 The signature verification of the OPP package failed.\n",
        ] {
            assert_eq!(route_of(text).route, Route::Environment, "{text}");
        }
    }

    #[test]
    fn explain_2022_format() {
        let text = "Dynamo produced 12 graphs with 11 graph breaks and 40 ops\n Break reasons: \n\n1. generic_jump TensorVariable()\n  File \"m.py\", line 3, in forward\n\n2. call_function BuiltinVariable(print)\n";
        let e = first_causal_error(text.as_bytes()).unwrap();
        assert_eq!(
            (e.line, e.message.as_str()),
            (4, "generic_jump TensorVariable()")
        );
        assert_eq!(route_error(&e).route, Route::CompileError);
    }

    #[test]
    fn line_gutters_compose_prefixes_and_noise() {
        let text = "101:[ERROR] ATRACE(1,python):2025-01-01-00:00:00.000.000 [t.c:1]1 TraceSubmit: failed to write trace\n102:Traceback (most recent call last):\n103:  File \"m.py\", line 1, in f\n104:RuntimeError: call aclnnAdd failed, detail:EZ1001: [PID: 1] 2025-01-01-00:00:00.000.000 add: shape mismatch\n";
        let e = first_causal_error(text.as_bytes()).unwrap();
        assert_eq!(e.line, 4);
        assert_eq!(route_error(&e).route, Route::RuntimeError);
        let text = "api-1  | Traceback (most recent call last):\napi-1  |   File \"m.py\", line 1, in f\napi-1  | torch._dynamo.exc.Unsupported: call_method x\n";
        let e = first_causal_error(text.as_bytes()).unwrap();
        assert_eq!((e.line, route_error(&e).route), (3, Route::CompileError));
    }

    #[test]
    fn a_device_fault_report_outranks_an_argument_header() {
        let text = "[PID: 1] 2025-01-01-00:00:00.000.000 Invalid_Argument(EL0003): The argument is invalid.\n        Solution: Try again with a valid argument.\n\nEZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:0, dieId:0), serial number is 1, there is an aivec error exception, core id is 3, task timeout\n";
        assert_eq!(first_causal_error(text.as_bytes()).unwrap().line, 4);
    }

    #[test]
    fn chinese_reports() {
        let (r, line, _) =
            route_prose("问题描述：\n开图 1520 ms，关图 830 ms，开图更慢\n").unwrap();
        assert_eq!((r.route, line), (Route::Performance, 2));
        let (r, _, _) = route_prose("图模式下一直重复输出同一个token，eager正常\n").unwrap();
        assert_eq!(r.route, Route::Accuracy);
        let (r, _, _) =
            route_prose("graph mode repeats one token forever; eager is fine\n").unwrap();
        assert_eq!(r.route, Route::Accuracy);
        // 精度正常 says accuracy is fine: the report is about speed.
        let (r, _, _) = route_prose("精度正常，但是性能下降 30%\n").unwrap();
        assert_eq!(r.route, Route::Performance);
        // 结果异常停止 ("and then it stopped abnormally") is no abnormal result; 结果异常 is one.
        assert!(route_prose("使用ATC命令进行转换，结果异常停止\n").is_none());
        assert!(route_prose("程序运行结果异常退出了\n").is_none());
        let (r, _, _) = route_prose("转换后推理结果异常，和onnx对不上\n").unwrap();
        assert_eq!(r.route, Route::Accuracy);
        // Paddle's notice that an operator falls back to the CPU (wider-world batch 36).
        let (r, line, _) = route_prose("设置GLOG_v=4，在日志中发现 missing NPU kernel: lookup_table, expected_kernel_key:data_type[float]\n").unwrap();
        assert_eq!((r.route, line), (Route::Performance, 1));
        // 没有收益 ("gains nothing") is a verdict over a TPOT (wider-world batch 37); without
        // a word of performance it is none.
        let gain = "长序列场景开启图模式没有收益，图模式TPOT与输入长度呈线性增长\n开图：191ms\n";
        let (r, line, _) = route_prose(gain).unwrap();
        assert_eq!((r.route, line), (Route::Performance, 1));
        assert!(route_prose("这样改没有收益\n").is_none());
        // A program's warning record is not the report's wording (wider-world batch 38: the
        // profiler's `Incorrect schedule … incomplete parsed data`).
        let warning = "(Worker_TP6_EP6 pid=56707) [2026-08-31 09:07:38] [WARNING] [56707] profiler.py: Incorrect schedule: Stop profiler while current state is RECORD which may result in incomplete parsed data.\n";
        assert!(route_prose(warning).is_none_or(|(r, _, _)| r.route != Route::Accuracy));
        // `有没有提升` asks; `吞吐几乎无提升` says (wider-world batch 38).
        let asked = route_prose("请问开启 aclgraph 之后吞吐有没有提升？应该怎么测 TPOT？\n");
        assert!(
            asked
                .as_ref()
                .is_none_or(|(r, _, _)| r.route != Route::Performance),
            "{asked:?}"
        );
        let (r, line, _) =
            route_prose("单轮耗时随 BatchSize 近似线性增长，吞吐几乎无提升：\n").unwrap();
        assert_eq!((r.route, line), (Route::Performance, 1));
        // A check that passed is no complaint of it (wider-world batch 39): the report is of
        // the speed.
        let passed = "The embedding operator has passed the accuracy test. However, the running performance is much lower than that of Hugging Face.\n";
        let (r, _, _) = route_prose(passed).unwrap();
        assert_eq!(r.route, Route::Performance);
        for failed in [
            "The model did not pass the accuracy test on the NPU.\n",
            "It has not passed the accuracy check.\n",
            "It cannot pass the accuracy test.\n",
            "It failed to pass the precision test.\n",
            "We bypass the accuracy check here.\n",
        ] {
            let (r, _, _) = route_prose(failed).unwrap();
            assert_eq!(r.route, Route::Accuracy, "{failed}");
        }
        // 没有对齐 ("not aligned") with the reference run's numbers (wider-world batch 39); 对齐了
        // says they are.
        let (r, _, _) =
            route_prose("npu eager和cuda都对齐了，但npu graph还没有对齐，输出的pred都是 0.001\n")
                .unwrap();
        assert_eq!(r.route, Route::Accuracy);
        assert!(route_prose("npu eager和cuda都对齐了\n").is_none());
        assert!(route_prose("请问npu graph和eager有没对齐？\n").is_none());
        // A loss scaler driven to single digits (wider-world batch 40), in apex's, LLaMA-Factory's
        // and DeepSpeed's words (DeepSpeed's an INFO record); its first search is no evidence.
        let (r, line, _) = route_prose("Loss scaler reducing loss scale to 512.0\nGradient overflow. Skipping step\nLoss scaler reducing loss scale to 8.0\nLoss scaler reducing loss scale to 4.0\n").unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Accuracy, "metric.loss-scale", 4)
        );
        let apex = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 2.0\n";
        assert_eq!(
            route_prose(apex).map(|(r, _, _)| r.rule),
            Some("metric.loss-scale".into())
        );
        let ds = "[2023-08-02 00:41:17,526] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 2, reducing to 1\n";
        assert_eq!(
            route_prose(ds).map(|(r, _, _)| r.rule),
            Some("metric.loss-scale".into())
        );
        let search = "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 32768.0\nGradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0\n";
        assert!(route_prose(search).is_none(), "{:?}", route_prose(search));
        // A program's own INFO record is no verdict on its speed (LLaMA-Factory's `Using torch
        // SDPA for faster training`); its measurements still are measurements.
        let info = "05/24/2024 17:16:11 - INFO - llamafactory.model.utils.attention - Using torch SDPA for faster training and inference.\n";
        assert!(route_prose(info).is_none(), "{:?}", route_prose(info));
        for logged in [
            "05/24/2024 17:16:11 - INFO - bench - this path is 2x slower than eager\n",
            "05/24/2024 17:16:11 - INFO - bench - throughput 850 tokens/s, slow\n",
            "05/24/2024 17:16:11 - INFO - bench - this path is 2x slower than eager\n推理耗时 120ms\n",
        ] {
            assert!(
                route_prose(logged).is_none_or(|(r, _, _)| r.rule != "keyword.performance"),
                "{logged}"
            );
        }
    }

    // Class 9: report tables.
    #[test]
    fn report_tables() {
        // A `精度` (precision) column of data types beside a speed (wider-world batch 41).
        let dtypes = "| 线程数 | 精度 | Batch size | 速度 (Tokens/s)  |\n| ------- | ------- | ---------- | -------: |\n| 24      | fp16    | 1          | 3.120885 |\n| **64**      | **fp16**    | **1**          | **4.509292** |\n";
        let (r, _, _) = route_table(dtypes).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::Performance, "table.performance")
        );
        let scores = dtypes.replace("fp16", "0.71");
        let (r, _, _) = route_table(&scores).unwrap();
        assert_eq!(r.route, Route::Accuracy);
        // A precision column beside real scores: the scores route it.
        let beside =
            "| 模型 | 精度 | MMLU | GSM8K |\n|---|---|---|---|\n| qwen | bf16 | 71.2 | 55.0 |\n";
        let (r, _, _) = route_table(beside).unwrap();
        assert_eq!(
            (r.route, r.matched.as_deref()),
            (Route::Accuracy, Some("mmlu"))
        );
        let perf = "| model | bs | throughput (tok/s) before | after | change |\n|---|---|---|---|---|\n| m | 8 | 1200 | 950 | -20.8% |\n";
        let (r, line, _) = route_prose(perf).unwrap();
        assert_eq!((r.route, line), (Route::Performance, 1));
        let acc = "| task | eager | graph |\n|---|---|---|\n| gsm8k | 0.81 | 0.62 |\n";
        let (r, _, _) = route_prose(acc).unwrap();
        assert_eq!(r.route, Route::Accuracy);
        let acc = "| dataset | score (eager) | score (graph) |\n|---|---|---|\n";
        assert_eq!(route_prose(acc).unwrap().0.route, Route::Accuracy);
        // An improvement column's first negative row is cited (wider-world batch 26); a `change`
        // column says nothing of better or worse by its name (the header stays cited above).
        let improvement = "| image | TTFT | Improvement | TPOT | Improvement |\n|---|---|---|---|---|\n| v1 | 51.9 | - | 20.2 | - |\n| v2 | 52.0 | +0.2% | 20.1 | +0.5% |\n| v3 | 79.8 | -53.73% | 22.6 | -11.50% |\n| v4 | 80.1 | -54.1% | 22.7 | -12.0% |\n";
        let (r, line, cited) = route_prose(improvement).unwrap();
        assert_eq!((r.route, line), (Route::Performance, 5));
        assert!(cited.contains("-53.73%"));
        // The one score of a column that stands apart from the others is the row cited
        // (wider-world batch 37); like scores, or two that differ, cite the first.
        let modes = "| Mode      | Accuracy |\n|-----------|----------|\n| eager     | 96.13       |\n| fullgraph(no chunked) | 95.68 |\n| fullgraph (chunked) |  56.71 |\n";
        let (r, line, cited) = route_prose(modes).unwrap();
        assert_eq!((r.route, line), (Route::Accuracy, 5));
        assert!(cited.contains("56.71"));
        let second = "| mode | accuracy |\n|---|---|\n| a | 96.1 |\n| b | 56.7 |\n| c | 95.9 |\n| d | 96.0 |\n";
        assert_eq!(route_prose(second).unwrap().1, 4);
        for (why, table) in [
            ("two rows", "| mode | accuracy |\n|---|---|\n| eager | 96.1 |\n| graph | 56.7 |\n"),
            ("like scores", "| mode | accuracy |\n|---|---|\n| a | 96.1 |\n| b | 95.7 |\n| c | 94.9 |\n"),
            ("one above the rest", "| mode | accuracy |\n|---|---|\n| npugraph_ex | 56.7 |\n| eager | 96.1 |\n| aclgraph | 55.9 |\n"),
            ("datasets", "| task | score |\n|---|---|\n| gsm8k | 82.1 |\n| mmlu | 79.4 |\n| humaneval | 35.2 |\n"),
            ("lower is better", "| mode | ppl |\n|---|---|\n| a | 5.1 |\n| b | 5.2 |\n| c | 1.2 |\n"),
            ("percent and fractions", "| mode | acc |\n|---|---|\n| a | 96.13% |\n| b | 0.9568 |\n| c | 95.1% |\n"),
        ] {
            assert_eq!(route_prose(table).unwrap().1, 3, "{why}");
        }
        // A summary row is left out of the column.
        let diff = "| mode | acc |\n|---|---|\n| a | 96.1 |\n| b | 95.9 |\n| c | 56.7 |\n| diff | -0.2 |\n";
        assert_eq!(route_prose(diff).unwrap().1, 5);
        assert_eq!(outlier(&[0.0, 0.0, 0.0]), None);
        assert_eq!(outlier(&[1.0, f64::NAN, 9.0]), None);
        assert_eq!(outlier(&[0.65, 0.12, 0.70, 0.66]), Some(1));
        assert_eq!(outlier(&[0.65, 0.99, 0.70, 0.66]), None);
        // `gain` inside `against` names no improvement column.
        let against =
            "| case | TTFT (ms) | diff against v0.9 |\n|---|---|---|\n| a | 40 | -12% |\n";
        assert_eq!(route_prose(against).unwrap().1, 1);
    }

    // Issue 41, class 2: environment causes named by their wording, whatever code or phase
    // they surface with (lines written from CANN's, torch's and torch_npu's documented wording).
    #[test]
    fn environment_kinds_by_wording() {
        for (text, package) in [
            ("RuntimeError: Unsupported soc version: Ascend910 9391\n", None),
            ("EZ9999: Inner Error!\nEZ9999: [PID: 7] 2025-02-01-00:00:00.000.000 Cannot find bin of op Range, integral key 0/1/|int64/ND/int64/ND/.[FUNC:GetBin][FILE:op_kernel.cpp][LINE:1]\n        TraceBack (most recent call last):\n        Cannot find binary for op Range.[FUNC:F][FILE:f.cc][LINE:2]\n", Some("the CANN kernels package of this chip")),
            ("[ERROR] HCCL(7,python3):2025-01-01-00:00:00.000.000 [adapter_hccp.cc:1] [8]this package does not support hrtRaAiQpCreate for device, please change new package\n", Some("the Ascend driver and firmware")),
            ("[PID: 1] 2026-01-01-00:00:00.000.000 Invalid_Argument(EE1001): The argument is invalid.Reason: rtGetDevMsg execution failed, the feature is not supported.\n", None),
            ("EH9999: [PID: 1] 2025-01-01-00:00:00.000.000 Call fe::PlatformInfoManager::InitializePlatformInfo function failed[FUNC:F][FILE:f.cc][LINE:1]\n", None),
            ("RuntimeError: Only a single TORCH_LIBRARY can be used to register the namespace triton; please put all of your definitions in a single TORCH_LIBRARY block.\n", None),
            ("EZ3003: [PID: 3] 2025-01-01-00:00:00.000.000 No supported Ops kernel and engine are found for [Foo1], optype [Foo].\n", None),
            ("EH9999: Inner Error!\nEH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n        TraceBack (most recent call last):\n        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n", Some("CANN and the Ascend driver")),
            ("RuntimeError: Cannot re-initialize NPU in forked subprocess. To use NPU with multiprocessing, you must use the 'spawn' start method\n", Some("how the worker processes are started")),
            ("bishengir-compile: for the --target option: Cannot find option named 'AscendX1'!\n", Some("the kernel compiler (CANN's BiSheng, Triton-Ascend)")),
            ("RuntimeError: Distributed package doesn't have NCCL built in\n", Some("the distributed backend (HCCL on an NPU, not NCCL)")),
        ] {
            let r = route_of(text);
            assert_eq!(r.route, Route::Environment, "{text}: {r:?}");
            if let Some(p) = package {
                assert_eq!(r.package.as_deref(), Some(p));
            }
        }
    }

    // A framework's own `unsupported …` is not dynamo's exception class `Unsupported` (MindIE's
    // model loader, in the fifth blind batch of docs/triage.md); the class itself still is.
    #[test]
    fn class_name_keywords_match_as_written() {
        let r = route_of("NotImplementedError: unsupported model type: falcon_mamba\n");
        assert_ne!(r.route, Route::CompileError, "{r:?}");
        let r = route_of("RuntimeError: Unsupported: call_method UserDefinedObjectVariable\n");
        assert_eq!(r.route, Route::CompileError, "{r:?}");
    }

    // Issue 41, class 1: a compiler diagnostic routes compile-error from its own text.
    #[test]
    fn compiler_diagnostics_route_compile_error() {
        let r = route_of("loc(\"/tmp/k.mlir\":3:3): error: ub overflow, requires 2097152 bits while 1572864 bits available!\n");
        assert_eq!(
            (r.route, r.confidence, r.rule.as_str()),
            (
                Route::CompileError,
                Confidence::High,
                "shape.compiler-diagnostic"
            )
        );
        let r = route_of("RuntimeError: ({'errCode': 'E90003', 'detailed_cause': 'bfloat16 of tbe.dsl.transdata is not supported'}, 'Compile operator failed, cause: Template constraint')\n");
        assert_eq!(r.route, Route::CompileError);
    }

    // Issue 41, class 4: the no-token fallback needs evidence of the first call.
    #[test]
    fn fallback_needs_the_first_call() {
        let r = route_of("RuntimeError: the worker exited unexpectedly\n");
        assert_eq!(
            (r.route, r.rule.as_str(), r.confidence),
            (
                Route::Undetermined,
                "abstain.no-phase-evidence",
                Confidence::Low
            )
        );
        let r = route_of("Traceback (most recent call last):\n  File \"w.py\", line 9, in profile_run\n    self._dummy_run(n)\nRuntimeError: the worker exited unexpectedly\n");
        assert_eq!(
            (r.route, r.rule.as_str(), r.matched_line),
            (Route::CompileError, "fallback.no-runtime-token", Some(2))
        );
        // A benchmark client's warm-up requests (wider-world batch 41): the server's answers
        // failed, no model's first call, its frame `warm_up` included; a warm-up without
        // requests still counts.
        let client = "Traceback (most recent call last):\n  File \"a.py\", line 467, in warm_up\n    raise AISBenchRuntimeError(\nais_bench.AISBenchRuntimeError: [TINFER-RUNTIME-001]warmup failed. Exit task because all warmup requests failed\n";
        let r = route_of(client);
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::Undetermined, "abstain.no-phase-evidence")
        );
        let r = route_of(&client.replace("all warmup requests failed", "the model raised"));
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::CompileError, "fallback.no-runtime-token")
        );
    }

    // Wider-world batch 20: a log that shows the work going to the host — PyTorch's CPU fallback
    // warning, llama.cpp's weights left in host memory — is performance evidence; a program's
    // INFO record is no accuracy wording (`offloading 36 repeating layers`).
    #[test]
    fn work_that_went_to_the_host() {
        let fallback = "The operator 'aten::isin.Tensor_Tensor_out' is not currently supported on the NPU backend and will fall back to run on CPU\n";
        let (r, line, _) = route_prose(fallback).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Performance, "metric.cpu-fallback", 1)
        );
        assert_eq!(r.matched.as_deref(), Some("aten::isin.Tensor_Tensor_out"));
        // Hard-wrapped at 100 columns (wider-world batch 39): the warning's first half is cited,
        // and the second half's `performance implications` is no report's word.
        let wrapped = "Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and w\nill fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)\n";
        let (r, line, _) = route_prose(wrapped).unwrap();
        assert_eq!(
            (r.rule.as_str(), line, r.matched.as_deref()),
            ("metric.cpu-fallback", 1, Some("torchvision::nms"))
        );
        let llama = "[2025-07-21 10:37:49.269985] I load_tensors: offloading 36 repeating layers to GPU\n[2025-07-21 10:37:49.269985] I load_tensors: offloaded 37/37 layers to GPU\n[2025-07-21 10:37:49.269985] I load_tensors:          CPU model buffer size = 15622.00 MiB\n[2025-07-21 10:37:49.269985] I load_tensors:        CANN0 model buffer size =     1.18 MiB\n";
        let (r, line, _) = route_prose(llama).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Performance, "metric.host-weights", 3)
        );
        // The same log without its server's header (llama-cli, wider-world batch 27): its
        // `load_tensors: … repeating layers` is the program's own line, no report's wording.
        let bare: String = llama
            .lines()
            .map(|l| format!("{}\n", l.split_once("] I ").map_or(l, |(_, r)| r)))
            .collect();
        let (r, line, _) = route_prose(&bare).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Performance, "metric.host-weights", 3)
        );
        assert_eq!(
            function_record("print_info: EOS token = 128001"),
            Some("print_info")
        );
        for not in [
            "eval_accuracy: 0.5",
            "llama_model_load: error loading model: x",
            "Note: the output is repeating",
            "[W101 10:00:00.000000000 x.ts:1] Warning: npu_fusion_attention: precision may differ",
        ] {
            assert_eq!(function_record(not), None, "{not}");
        }
        // A user's own label, once, is no program's line: its wording counts.
        let label = "my_eval: accuracy dropped to 0.3 after the update\n";
        assert_eq!(route_prose(label).unwrap().0.route, Route::Accuracy);
        // A user's own words still route: the wording comes before the host's evidence.
        let said = format!("the answers are garbled\n{fallback}");
        assert_eq!(route_prose(&said).unwrap().0.route, Route::Accuracy);
        // The warning's own words (`performance implications`, wider-world batch 22) are no
        // report: the fallback it states is the evidence; a report of slowness stays one.
        let warned = "[W compiler_depend.ts:51] Warning: CAUTION: The operator 'torchvision::nms' is not currently supported on the NPU backend and will fall back to run on the CPU. This may have performance implications. (function npu_cpu_fallback)\n";
        let (r, line, _) = route_prose(warned).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Performance, "metric.cpu-fallback", 1)
        );
        let two = format!("the generated boxes are garbled\n{warned}{warned}");
        assert_eq!(route_prose(&two).unwrap().0.route, Route::Accuracy);
        let slow = format!("inference got very slow after the upgrade\n{warned}");
        assert_eq!(
            route_prose(&slow).unwrap().0.rule.as_str(),
            "keyword.performance"
        );
        assert!(route_prose("INFO 08-06 10:40:29 [config.py:1] using mixed precision\n").is_none());
        assert!(route_prose("INFO:root:using mixed precision\n").is_none());
    }

    // Wider-world batch 19: a float16 value printed at ±65504 is an overflow the saturation
    // mode stored as float16's largest value: accuracy evidence, cited on its line, after a
    // metric logged as nan where both are printed.
    #[test]
    fn a_saturated_float16_value() {
        let text = ">>> torch.exp(torch.tensor([12], dtype=torch.float16).npu())\ntensor([65504.], device='npu:0', dtype=torch.float16)\n";
        let (r, line, evidence) = route_prose(text).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line),
            (Route::Accuracy, "metric.half-saturated", 2)
        );
        assert!(evidence.starts_with("tensor([65504.]"));
        let both = format!("{text}{{'loss': nan, 'epoch': 0.1}}\n");
        assert_eq!(route_prose(&both).unwrap().0.rule, "metric.nan");
        assert!(route_prose("tensor([65504.])\n").is_none());
    }

    // Issue 41, class 5: a training log's nan / inf loss or gradient norm is accuracy evidence;
    // progress bars and throughput lines alone are not a report of slowness.
    #[test]
    fn training_metrics_and_progress_bars() {
        let hf = "Train:  10%|█         | 10/100 [00:20<03:00,  2.01s/it]\nTrain:  11%|█         | 11/100 [00:22<02:58,  1.99s/it]\n{'loss': nan, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 0.1}\nTrain:  12%|█▏        | 12/100 [00:24<02:56,  1.98s/it]\n";
        let (r, line, _) = route_prose(hf).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), line, r.matched.as_deref()),
            (Route::Accuracy, "metric.nan", 3, Some("loss: nan"))
        );
        // One metric per line (verl): any metric that is nan, the first one cited.
        let rl = "step:1\nactor/entropy:0.83\ntraining/rollout_probs_diff_max:nan\nrollout_corr/kl:nan\n";
        let (r, line, _) = route_prose(rl).unwrap();
        assert_eq!(
            (r.route, line, r.matched.as_deref()),
            (
                Route::Accuracy,
                3,
                Some("training/rollout_probs_diff_max: nan")
            )
        );
        let megatron = " [2026-01-01 00:00:00.000000] iteration       20/    1000 | consumed samples:          640 | elapsed time per iteration (ms): 812.3 | learning rate: 1.000000E-05 | global batch size:    32 | loss scale: 1.0 | grad norm: nan | number of skipped iterations:   0 | number of nan iterations:   1 |\n";
        let (r, _, _) = route_prose(megatron).unwrap();
        assert_eq!(
            (r.route, r.matched.as_deref()),
            (Route::Accuracy, Some("grad norm: nan"))
        );
        let swift = "{'loss': '2.3', 'grad_norm': 'inf', 'train_speed(s/it)': 1.99}\n";
        assert_eq!(route_prose(swift).unwrap().0.route, Route::Accuracy);
        // Speeds alone are no report's wording, and route performance at low confidence only
        // (wider-world batch 25): the verdict is the user's.
        for (speeds, line, rate) in [
            ("Train:  42%|████▏     | 42/100 [01:23<01:55,  1.99s/it]\nTrain:  43%|████▎     | 43/100 [01:25<01:53, 1.98s/it]\n", 1, "1.99s/it"),
            ("INFO 01-01 00:00:00 [loggers.py:1] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 35.2 tokens/s\nINFO 01-01 00:00:10 [loggers.py:1] Avg prompt throughput: 12.5 tokens/s\n", 1, "35.2 tokens/s"),
            ("2025-06-25 16:47:28,987 - INFO - 总耗时: 135.42 秒\n2025-06-25 16:47:28,987 - INFO - 平均吞吐量: 1.48 请求/秒\n", 2, "1.48 请求/秒"),
            // A server's per-request latencies (batch 28): measurements of the same kind.
            ("1.02.003.100 I srv  log_server_request: rid 7 | POST /v1/completions\n2.10.004.200 I srv  completions_res: rid 7 | prompt_tokens: 8, ttft: 912.50ms, tpot: 640.10ms\n", 2, "ttft: 912.50ms"),
            // A demo's durations (batch 32: Paddle-Lite on an Ascend 310): the longest.
            ("[0] Preprocess time: 66.098000 ms Prediction time: 11423.041000 ms Postprocess time: 60.360000 ms\nPrediction time: avg 11429.317000 ms, max 11447.121000 ms, min 11417.789000 ms\n", 2, "Prediction time: avg 11429.317000 ms"),
        ] {
            let (r, at, _) = route_prose(speeds).unwrap();
            assert_eq!(
                (r.route, r.rule.as_str(), r.confidence, at, r.matched.as_deref()),
                (Route::Performance, "metric.speed-only", Confidence::Low, line, Some(rate)),
                "{speeds}"
            );
        }
        for quiet in [
            "{'loss': 2.1, 'grad_norm': 0.9, 'epoch': 0.5}\nthe infinite loop of nano steps\n",
            "Downloading torch-2.3.1.whl (1.2 MB)\n   1.2/1.2 MB 3.4 MB/s eta 0:00:00\n",
            // Set-up bars, a stalled server's zero rates, a loss beside the bar, a warning.
            "Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.10it/s]\n",
            "Map: 100%|██████████| 1000/1000 [00:00<00:00, 12345.67 examples/s]\n",
            "INFO 01-01 00:00:00 [loggers.py:1] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 0.0 tokens/s\n",
            "{'loss': 2.34, 'grad_norm': 1.2, 'epoch': 0.1}\nTrain:  1%|          | 10/900 [00:20<30:00,  2.01s/it]\n",
            "[WARNING] something odd\nTrain:  1%|          | 10/900 [00:20<30:00,  2.01s/it]\n",
            "srv completions_res: rid 7 | ttft: 0.00ms, tpot: 0ms\n",
            // A training log's losses beside its step times (MindSpore's `loss is`), settings.
            "epoch: 1 step: 1562, loss is 1.45\nTrain epoch time: 101539.306 ms, per step time: 65.006 ms\n",
            "HCCL_EXEC_TIMEOUT: wait time: 1800 s\n",
        ] {
            assert!(route_prose(quiet).is_none(), "{quiet}");
        }
        // Batch 33: a baseline not met, answers of poor quality, a loss grown large (Chinese),
        // a model's output that loops over two lines, one digit generated over and over.
        for (text, route) in [
            ("[Description]\nThe tpot of Qwen3-VL-8B is not meet the baseline.\n2026-03-19 20:42:17,548 - INFO - Mean TPOT (ms):  61.2\n", Route::Performance),
            ("在npu上进行qwen2-vl-7b推理时，模型的回答质量差。例如：\n", Route::Accuracy),
            ("你好，我在npu上训练单卡单类别，训着训着就变成的lcls loss很大\n", Route::Accuracy),
            (&format!("```text\n{}", "    Wait, I'll output the answer now.\n    Okay, I'll output the answer.\n".repeat(6)), Route::Accuracy),
            ("DP rank 0, Prompt: 'Hello, my name is', Generated text: ' 777777777777777'\n", Route::Accuracy),
        ] {
            assert_eq!(route_prose(text).map(|(r, ..)| r.route), Some(route), "{text}");
        }
        // Batch 34: a report of zeros cites the tensor of zeros it prints nearest after its
        // words, not its sentence nor the input printed before it (nor a zero mask before the
        // words when one follows them); not a setting's value, zero-copy, words that deny it, a
        // matrix whose first row is zeros, or words without a tensor of zeros.
        let zeros = "返回结果全零，执行目录下main.so存在\ntensor([ 0.7859, -2.5347,  ...,  1.0604],\n       device='npu:0')\ntensor([0., 0., 0.,  ..., 0., 0., 0.], device='npu:0')\n";
        let (r, at, _) = route_prose(zeros).unwrap();
        assert_eq!(
            (r.route, at, &*r.rule, r.matched.as_deref()),
            (Route::Accuracy, 4, "metric.zero-output", Some("全零"))
        );
        assert!(
            r.why.contains("(`全零`, line 1) and prints them (line 4)"),
            "{}",
            r.why
        );
        let mask = format!("tensor([0, 0, 0, 0])\n{zeros}");
        assert_eq!(route_prose(&mask).unwrap().1, 5);
        let english = "Output:\n[0. 0. 0. 0.]\nThe NPU output is all zeros, the CPU one is not.\n";
        assert_eq!(route_prose(english).unwrap().1, 2);
        // A sentence's full stop, a question, a matrix printed a row per line.
        for (text, at) in [
            ("The output is all zeros.\ntensor([0., 0., 0.])\n", 2),
            ("输出是不是全零？\ntensor([0., 0., 0.])\n", 2),
            (
                "输出全0.\ntensor([[0., 0., 0.],\n        [0., 0., 0.]], device='npu:0')\n",
                2,
            ),
        ] {
            let (r, got, _) = route_prose(text).unwrap();
            assert_eq!((&*r.rule, got), ("metric.zero-output", at), "{text}");
        }
        for not in [
            "dropout全为0.1\ntensor([0., 0., 0.])\n",
            "实现全零拷贝\ntensor([0., 0., 0.])\n",
            "输出不是全零了\ntensor([0., 0., 0.])\n",
            "the output is no longer all zeros\ntensor([0., 0., 0.])\n",
            "输出全零\ntensor([[0., 0., 0.],\n        [1., 2., 3.]])\n",
            "输出全零\n[[1. 2. 3.]\n [0. 0. 0.]]\n",
            "the output is all zeros\n",
            "输出不全是0\ntensor([0., 0., 0.])\n",
            "我们测了 all zero-shot tasks\ntensor([0., 0., 0.])\n",
            "INFO 01-01 00:00:00 [init.py:1] bias initialized to all zeros\ntensor([0., 0., 0.])\n",
        ] {
            assert!(
                route_prose(not).is_none_or(|(r, ..)| r.rule != "metric.zero-output"),
                "{not}"
            );
        }
        // A metric asked about is cited only when no line prints one.
        let asked = "为什么 grad_norm = inf？\n    grad_norm = Inf\n";
        assert_eq!(
            route_prose(asked).map(|(r, at, _)| (r.rule, at)),
            Some(("metric.nan".into(), 2))
        );
        let only = "为什么 loss = nan？\n";
        let (r, at, _) = route_prose(only).unwrap();
        assert_eq!((&*r.rule, at), ("metric.nan", 1));
        assert!(
            r.why.contains("the text asks about `loss: nan`"),
            "{}",
            r.why
        );
        // A verdict makes measurements a report.
        let (r, _, _) =
            route_prose("decode throughput 73.3 tok/s vs 500.2 tok/s before\n").unwrap();
        assert_eq!(r.route, Route::Performance);
    }

    // Wider-world batch 28: generated text that degenerated into repetition is an accuracy
    // report's symptom — alone (low confidence), or cited over the report's words.
    // Wider-world batch 29: a benchmark's key-value summary is read by its throughput; a loss
    // that jumps a hundredfold is accuracy; 耗时…高于 (a time above the baseline's) is a verdict.
    #[test]
    fn summaries_spikes_and_verdicts() {
        let summary = "Benchmarking summary:\n+------------------------------+---------+\n| Key                          |   Value |\n+==============================+=========+\n| Time taken for tests (s)     | 1026.99 |\n+------------------------------+---------+\n| Total requests               |  200    |\n+------------------------------+---------+\n| Output token throughput (tok/s) | 51.7432 |\n+------------------------------+---------+\n";
        let (r, at, cited) = route_prose(summary).unwrap();
        assert_eq!((r.route, at), (Route::Performance, 9), "{cited}");
        // A header row, not a key-value row: the header is cited as before.
        let table = "| model | throughput (tok/s) |\n|---|---|\n| a | 10.5 |\n";
        assert_eq!(route_prose(table).unwrap().1, 1);
        // Batch 30: an accuracy table's first score, across ASCII rulers; an accuracy report's
        // figure is a number of its own, not the digits in a model's name.
        let scores = "+-------+---------+\n| Model | Score   |\n+=======+=========+\n| a     | 0.5333  |\n+-------+---------+\n";
        let (r, at, _) = route_prose(scores).unwrap();
        assert_eq!((r.route, at), (Route::Accuracy, 4));
        // Batch 42: a CI's regression table routed by its failed row's metric; a score after
        // its count.
        let ci = "| Model | Metric | Current | Baseline | Change | Status |\n|---|---|---|---|---|---|\n| m | mean_audio_rtf | 2.41 | 1.57 | -53.45% | pass |\n| m | mean_ttft_ms | 9578.79 | 3352.75 | -185.70% | fail |\n";
        let (r, at, _) = route_prose(ci).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), at),
            (Route::Performance, "table.performance", 4)
        );
        let scores = ci.replace("mean_ttft_ms", "gsm8k_accuracy");
        assert_eq!(route_prose(&scores).unwrap().0.route, Route::Accuracy);
        // The header's own words do not decide (`Improvement`); a rate keeps its unit; only
        // failed rows count when one did.
        let header_words = ci
            .replace("| Change |", "| Improvement |")
            .replace("mean_ttft_ms", "gsm8k_accuracy");
        assert_eq!(route_prose(&header_words).unwrap().0.route, Route::Accuracy);
        let rate = ci
            .replace("mean_ttft_ms", "output_tokens/s")
            .replace("| fail |", "| ❌ FAIL |");
        assert_eq!(route_prose(&rate).unwrap().1, 4);
        for pass in [
            "| ✅ no regression |",
            "| pass (no regression) |",
            "| failed: 0 |",
            "| 未失败 |",
        ] {
            let negated = ci.replace("| pass |", pass);
            assert_eq!(route_prose(&negated).unwrap().1, 4, "{pass}");
        }
        let regressed = ci
            .replace("| fail |", "| REGRESSED |")
            .replace("| pass |", "| ok |");
        assert_eq!(route_prose(&regressed).unwrap().1, 4);
        let unroutable = ci
            .replace("mean_ttft_ms", "rtf_p99")
            .replace("mean_audio_rtf", "gsm8k_accuracy");
        assert!(route_prose(&unroutable).is_none_or(|(r, _, _)| !r.rule.starts_with("table.")));
        // Without a baseline column, a metric column is no such table.
        let plain = ci.replace("Baseline", "Other");
        assert!(route_prose(&plain).is_none_or(|(r, _, _)| !r.rule.starts_with("table.")));
        let counted = "| run | accuracy |\n|---|---|\n| repro #1 | 932/1197 = 77.86% |\n";
        assert_eq!(route_prose(counted).unwrap().1, 3);
        assert_eq!(score_of("932/1197 = 77.86%"), Some(77.86));
        assert_eq!(score_of("a = b"), None);
        let title = "# [dpn92] [Ascend910] Unable to reproduce precision\nThe best validation Top_1_Accuracy is: 0.1000% at epoch 158.\n";
        assert_eq!(route_prose(title).unwrap().1, 2);
        let spike = "step 1, loss: 11.67\nstep 2, loss: 8.85\nstep 3, loss: 8712.59\n";
        let (r, at, _) = route_prose(spike).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), at),
            (Route::Accuracy, "metric.loss-spike", 3)
        );
        let (r, _, _) = route_prose("在 910B 上的训练耗时明显高于 A100\n").unwrap();
        assert_eq!(r.route, Route::Performance);
        // A throughput higher than the baseline's is no complaint: measurements alone.
        assert!(route_prose("吞吐 35 tokens/s，高于 A100\n")
            .is_none_or(|(r, _, _)| r.rule != "keyword.performance"));
    }

    #[test]
    fn degenerate_generation_is_accuracy_evidence() {
        let salad = "> hello there\nthe of of the and the of and a of the and of the the of and a and of\nllama_perf_context_print:        eval time =  3120.00 ms /    20 runs   (  156.00 ms per token,     6.41 tokens per second)\n";
        let (r, at, _) = route_prose(salad).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), r.confidence, at),
            (
                Route::Accuracy,
                "metric.degenerate-text",
                Confidence::Low,
                2
            )
        );
        let said = "{\"choices\":[{\"text\":\"好的，，，，，，，，，，，，我我我我我我我我我\"}]}\n输出结果异常\n";
        let (r, at, _) = route_prose(said).unwrap();
        assert_eq!(
            (r.route, r.rule.as_str(), r.confidence, at),
            (
                Route::Accuracy,
                "metric.degenerate-text",
                Confidence::Medium,
                1
            )
        );
        assert!(r.why.contains("line 2"), "{}", r.why);
        // Said slow: the speed is the report, whatever the text repeats.
        let slow = format!(
            "the server is slow\n{}",
            salad.lines().nth(1).unwrap_or_default()
        );
        assert_eq!(route_prose(&slow).unwrap().0.route, Route::Performance);
    }

    #[test]
    fn tokens_respect_boundaries() {
        assert!(find_token("rtEventQueryStatus", "event", false));
        assert!(!find_token("prevent this", "event", false));
        assert!(!find_token("upstream", "stream", false));
        assert!(find_token("stream_id=5", "stream", false));
        assert!(find_token("call acl api failed", "acl", false));
        assert!(!find_token("ROOM", "OOM", true));
        assert!(find_token("NPU OOM!", "OOM", true));
    }
}
