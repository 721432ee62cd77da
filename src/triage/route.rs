//! Routing: which diagnosis sub-skill a failure goes to (spec `triage-and-repro.md` §1.1
//! "Step 2 — routing", documented in `docs/triage.md`).
//!
//! Order, first match wins:
//! 1. **capture context** — the error, its CANN block or the frames above it say an ACL graph
//!    was being captured (`captur…`, runtime code 107030): compile-error, even when the first
//!    line is a memory, resource or stream failure (capture succeeded and only replay fails →
//!    runtime-error);
//! 2. **step pre-classification** (only with a step tree, in [`super::analyze`]);
//! 3. **the causal error's own shape** — an environment problem (undefined symbol in a vendor
//!    library, a missing CANN Python module, an attribute the installed torch_npu lacks, an
//!    unknown backend or option), a graph-break or recompile reason, a Dynamo / FakeTensor /
//!    Inductor exception class, a kernel assertion, the CANN error-code family, a runtime error
//!    number (107xxx / 207xxx / 507xxx), a plog record;
//! 4. **keywords** — compile words, then runtime words (the seed's rules 1–2);
//! 5. **fallback** — a crash with none of them → compile-error (rule 1's last bullet). It is
//!    never reached when a runtime code was seen (step 3 routes those).
//!
//! Without an error: report tables and wording — accuracy (scores, graph vs eager mismatch),
//! then performance (throughput / latency, slowness).

use serde::Serialize;

use npgx_parsers::cann_error::find_code;
use npgx_parsers::causal::{CausalError, Shape};

/// The route a failure takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
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
            // An all-caps abbreviation (`OOM`) matches only in capitals.
            let caps = w.len() <= 3 && w.bytes().all(|b| b.is_ascii_uppercase());
            find_token(hay, w, *whole) && (!caps || hay.contains(*w))
        })
        .map(|(w, _)| *w)
}

/// The first (line, text) of the error's scope or frames where `f` finds a token.
fn first_in(
    err: &CausalError,
    mut f: impl FnMut(&str) -> Option<&'static str>,
) -> Option<(u64, &'static str)> {
    err.scope
        .iter()
        .chain(err.frames.iter())
        .find_map(|(no, text)| f(text).map(|t| (*no, t)))
}

/// ACL-graph capture evidence in one line: `captur…`, or runtime code 107030 (the current
/// capture mode does not support this operation).
fn capture_token(line: &str) -> Option<&'static str> {
    let l = line.to_ascii_lowercase();
    if l.contains("capture mode does not support") || l.contains("107030") {
        return Some("107030 capture mode");
    }
    if l.contains("captur") {
        return Some("captur");
    }
    None
}

/// Step 1: capture context.
fn capture_context(err: &CausalError) -> Option<Routing> {
    let (line, token) = first_in(err, capture_token)?;
    let text = format!("{}\n{}", err.scope_text(), err.message).to_ascii_lowercase();
    let replay_only = text.contains("replay")
        && !text.contains("capture fail")
        && !text.contains("capture stream fail");
    if replay_only {
        return None;
    }
    let mut r = Routing::new(Route::CompileError, "capture.context", Some(token)).at(Some(line));
    r.notes.push(format!(
        "ACL graph capture was active (line {line}): compile-error even though the error reads like a runtime or resource failure"
    ));
    Some(r)
}

/// An environment problem named by the error itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvironmentProblem {
    pub package: String,
    pub why: String,
    pub token: String,
}

/// Python modules that come with CANN, torch_npu or the graph backends.
const ASCEND_MODULES: &[&str] = &[
    "torch_npu",
    "torchair",
    "npugraph_ex",
    "te",
    "tbe",
    "acl",
    "hccl",
    "atb",
    "op_gen",
    "op_compile_tool",
    "auto_tune",
    "schedule_search",
    "ascendebug",
    "mindie_llm",
];

/// The package a vendor library path belongs to (`…/nnal/atb/…/libx.so` → `NNAL ATB`).
fn package_of_library(path: &str) -> String {
    let l = path.to_ascii_lowercase();
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

/// Step 3a: environment problems, from the error's exception class and message.
pub fn environment_problem(err: &CausalError) -> Option<EnvironmentProblem> {
    let m = err.message.as_str();
    let ty = err.exception_type.as_deref().unwrap_or("");
    let short = ty.rsplit('.').next().unwrap_or(ty);
    if let Some(at) = m.find(": undefined symbol") {
        let lib = m[..at]
            .rsplit([' ', '\t'])
            .next()
            .unwrap_or("")
            .trim_start_matches([':', '\'']);
        if lib.contains(".so") {
            return Some(EnvironmentProblem {
                package: package_of_library(lib),
                why: format!("{lib} needs a symbol the installed libraries do not export (ABI / version mismatch between torch_npu, CANN and its add-ons)"),
                token: "undefined symbol".into(),
            });
        }
    }
    if matches!(short, "ModuleNotFoundError" | "ImportError") {
        if let Some(name) = quoted_after(m, "No module named ") {
            let top = name.split('.').next().unwrap_or(name);
            if ASCEND_MODULES.contains(&top) || top.to_ascii_lowercase().starts_with("ascend") {
                return Some(EnvironmentProblem {
                    package: top.to_string(),
                    why: format!("the Python module `{name}` is not installed in this interpreter (or the CANN environment script was not sourced)"),
                    token: "No module named".into(),
                });
            }
        }
    }
    if short == "AttributeError" {
        if let Some(module) = quoted_after(m, "module ") {
            let top = module.split('.').next().unwrap_or(module);
            if ASCEND_MODULES.contains(&top) && m.contains("has no attribute") {
                return Some(EnvironmentProblem {
                    package: top.to_string(),
                    why: format!("the installed `{module}` lacks an attribute this code uses (version mismatch)"),
                    token: "has no attribute".into(),
                });
            }
        }
    }
    let lower = m.to_ascii_lowercase();
    if lower.contains("invalid backend") || lower.contains("unknown backend") {
        let name = quoted_after(m, "backend: ")
            .or_else(|| quoted_after(m, "backend "))
            .unwrap_or("the backend");
        return Some(EnvironmentProblem {
            package: name.to_string(),
            why: format!("the backend `{name}` is not registered in this interpreter (torch_npu missing or too old)"),
            token: "invalid backend".into(),
        });
    }
    let config_frame = err
        .frames
        .iter()
        .any(|(_, f)| f.contains("npugraph_ex") || f.contains("torchair"));
    if config_frame
        && matches!(short, "TypeError" | "ValueError" | "AttributeError")
        && (lower.contains("unexpected keyword argument")
            || lower.contains("unknown option")
            || lower.contains("unsupported option")
            || lower.contains("has no attribute"))
    {
        let package = if err.frames.iter().any(|(_, f)| f.contains("npugraph_ex")) {
            "npugraph_ex"
        } else {
            "torchair"
        };
        return Some(EnvironmentProblem {
            package: package.to_string(),
            why: format!("the installed {package} does not know an option this code passes (version mismatch)"),
            token: "unknown option".into(),
        });
    }
    None
}

/// `'name'` right after `lead` in `m`.
fn quoted_after<'a>(m: &'a str, lead: &str) -> Option<&'a str> {
    let r = &m[m.find(lead)? + lead.len()..];
    let q = r.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let r = &r[1..];
    Some(&r[..r.find(q)?])
}

/// Exception classes raised by the compile stack (Dynamo, FakeTensor, AOTAutograd, Inductor).
const COMPILE_EXCEPTIONS: &[&str] = &[
    "Unsupported",
    "BackendCompilerFailed",
    "TorchRuntimeError",
    "InternalTorchDynamoError",
    "UserError",
    "UncapturedHigherOrderOpError",
    "GuardOnDataDependentSymNode",
    "DataDependentOutputException",
    "DynamicOutputShapeException",
    "UnsupportedOperatorException",
    "FailOnRecompileLimitHit",
    "RecompileLimitExceeded",
    "InductorError",
    "LoweringException",
    "CompilationError",
];

/// CANN error-code family (second character) → the layer it belongs to.
fn code_family_route(code: &str) -> Option<Route> {
    let c = code.as_bytes().get(1).copied().map(char::from)?;
    Some(match c {
        // GE, FE, TEFusion, operator checks, TBE compilation, tuning, fusion, AMCT.
        '1' | '2' | '4'..='9' | 'A' | 'B' | 'C' | 'D' | 'F' | 'G' | 'O' => Route::CompileError,
        // AI CPU, runtime, ACL, HCCL, HCCP, profiling, driver, queues, DVPP, dump, aclnn.
        '3' | 'E' | 'H' | 'I' | 'J' | 'K' | 'L' | 'M' | 'N' | 'P' | 'Z' => Route::RuntimeError,
        _ => return None,
    })
}

/// A runtime error number (107xxx parameter/usage, 207xxx resource, 507xxx execution) after
/// one of the phrases CANN and torch_npu print it with.
fn runtime_code(line: &str) -> Option<u64> {
    const LEADS: &[&str] = &[
        "error code is ",
        "errcode=",
        "runtime result = ",
        "runtime result=",
        "retcode: ",
        "error code: ",
        "ret=",
        "ret = ",
    ];
    let l = line.to_ascii_lowercase();
    LEADS.iter().find_map(|lead| {
        let mut from = 0;
        while let Some(at) = l[from..].find(lead) {
            let r = &l[from + at + lead.len()..];
            let end = r.find(|c: char| !c.is_ascii_digit()).unwrap_or(r.len());
            if let Ok(n) = r[..end].parse::<u64>() {
                if matches!(n, 107_000..=107_999 | 207_000..=207_999 | 507_000..=507_999) {
                    return Some(n);
                }
            }
            from += at + lead.len();
        }
        None
    })
}

/// Step 3: the causal error's own shape.
fn by_shape(err: &CausalError) -> Option<Routing> {
    if let Some(env) = environment_problem(err) {
        let mut r = Routing::new(Route::Environment, "shape.environment", Some(&env.token))
            .at(Some(err.line));
        r.package = Some(env.package.clone());
        r.notes.push(format!(
            "{}: fix the environment ({}) first, then re-run",
            env.why, env.package
        ));
        return Some(r);
    }
    match err.shape {
        Shape::GraphBreak => {
            return Some(
                Routing::new(
                    Route::CompileError,
                    "shape.graph-break",
                    Some("graph break reason"),
                )
                .at(Some(err.line)),
            )
        }
        Shape::Recompile => {
            return Some(
                Routing::new(
                    Route::CompileError,
                    "shape.recompile",
                    Some("recompilation"),
                )
                .at(Some(err.line)),
            )
        }
        Shape::KernelAssert => {
            return Some(
                Routing::new(Route::RuntimeError, "shape.kernel-assert", Some("[ASSERT]"))
                    .at(Some(err.line)),
            )
        }
        _ => {}
    }
    if let Some(ty) = err.exception_type.as_deref() {
        let short = ty.rsplit('.').next().unwrap_or(ty);
        let compile_module = [
            "torch._dynamo",
            "torch._subclasses",
            "torch._inductor",
            "torch.fx",
            "torch._functorch",
        ]
        .iter()
        .any(|m| ty.starts_with(m));
        if compile_module || COMPILE_EXCEPTIONS.contains(&short) {
            return Some(
                Routing::new(Route::CompileError, "shape.exception-class", Some(ty))
                    .at(Some(err.line)),
            );
        }
    }
    if let Some(at) = find_code(&err.message) {
        let code = &err.message[at..at + 6];
        if let Some(route) = code_family_route(code) {
            return Some(
                Routing::new(route, "shape.cann-code-family", Some(code)).at(Some(err.line)),
            );
        }
    }
    if let Some((line, n)) = err
        .scope
        .iter()
        .find_map(|(no, t)| runtime_code(t).map(|n| (*no, n)))
    {
        let code = n.to_string();
        let mut r =
            Routing::new(Route::RuntimeError, "shape.runtime-code", Some(&code)).at(Some(line));
        if let Some(meaning) = npgx_parsers::cann_error::tables::acl_code(n) {
            r.notes.push(format!("runtime error {n}: {meaning}"));
        }
        return Some(r);
    }
    if let Some(code) = err
        .scope
        .iter()
        .find_map(|(no, t)| find_code(t).map(|at| (*no, t[at..at + 6].to_string())))
    {
        if let Some(route) = code_family_route(&code.1) {
            return Some(
                Routing::new(route, "shape.cann-code-family", Some(&code.1)).at(Some(code.0)),
            );
        }
    }
    if matches!(err.shape, Shape::PlogRecord | Shape::FrameworkError) {
        // Rule 2 names "CANN plog" itself as a runtime-error keyword.
        return Some(
            Routing::new(Route::RuntimeError, "shape.plog-record", Some("CANN plog"))
                .at(Some(err.line)),
        );
    }
    None
}

/// Keyword rules on a causal error, in the documented order.
pub fn route_error(err: &CausalError) -> Routing {
    if let Some(r) = capture_context(err) {
        return r;
    }
    if let Some(r) = by_shape(err) {
        return r;
    }
    let scope = err.scope_text();
    let frames: String = err.frames.iter().map(|(_, f)| format!("{f}\n")).collect();
    let compile_hay = format!("{}\n{scope}\n{frames}", err.message);
    if let Some(w) = first_word(&compile_hay, COMPILE_WORDS) {
        let line = first_in(err, |t| first_word(t, COMPILE_WORDS).map(|_| "")).map(|x| x.0);
        return Routing::new(Route::CompileError, "keyword.compile", Some(w))
            .at(line.or(Some(err.line)));
    }
    let runtime_hay = format!("{}\n{scope}", err.message);
    if let Some(w) = first_word(&runtime_hay, RUNTIME_WORDS) {
        let line = err
            .scope
            .iter()
            .find(|(_, t)| first_word(t, RUNTIME_WORDS).is_some())
            .map(|(n, _)| *n);
        let mut r = Routing::new(Route::RuntimeError, "keyword.runtime", Some(w))
            .at(line.or(Some(err.line)));
        if runtime_hay.to_ascii_lowercase().contains("replay") {
            r.notes.push(
                "capture succeeded and replay fails: runtime-error by default; if evidence is thin, also consult compile-error"
                    .into(),
            );
        }
        return r;
    }
    let mut r =
        Routing::new(Route::CompileError, "fallback.no-runtime-token", None).at(Some(err.line));
    r.notes.push(
        "no runtime code and no aclnn / ACL / HCCL / stream / event token in the first causal error (rule 1, last bullet)".into(),
    );
    r
}

/// Accuracy wording in a report without a stack (rule 3).
const ACCURACY_WORDS: &[&str] = &[
    "accuracy",
    "precision",
    "mismatch",
    "misalign",
    "discrepan",
    "not equal",
    "allclose",
    "wrong result",
    "wrong output",
    "incorrect",
    "differ",
    "diverge",
    "score",
    "nan",
    "精度",
    "不一致",
    "误差",
];

/// Performance wording in a report without a stack (rule 4).
const PERFORMANCE_WORDS: &[&str] = &[
    "slow",
    "latency",
    "throughput",
    "performance",
    "tokens/s",
    "faster",
    "speedup",
    "性能",
    "耗时",
    "慢",
];

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

/// Whether a header cell names one of `words` (a whole word; units in brackets allowed).
fn header_has(cells: &[String], words: &[&'static str]) -> Option<&'static str> {
    cells.iter().find_map(|c| {
        c.split(|ch: char| ch.is_whitespace() || "()[],".contains(ch))
            .find_map(|part| words.iter().copied().find(|w| part == *w))
    })
}

/// Class 9: a report given as a table. A header with score columns → accuracy; a header with
/// throughput / latency columns → performance.
fn route_table(text: &str) -> Option<(Routing, usize, String)> {
    for (i, line) in text.lines().enumerate() {
        let Some(cells) = table_cells(line) else {
            continue;
        };
        if let Some(w) = header_has(&cells, ACCURACY_COLUMNS) {
            return Some((
                Routing::new(Route::Accuracy, "table.accuracy", Some(w)),
                i + 1,
                line.trim_end().to_string(),
            ));
        }
        if let Some(w) = header_has(&cells, PERFORMANCE_COLUMNS) {
            return Some((
                Routing::new(Route::Performance, "table.performance", Some(w)),
                i + 1,
                line.trim_end().to_string(),
            ));
        }
    }
    None
}

/// Rules 3 and 4 on text without an error: a report table, else the first line with accuracy
/// or performance wording.
pub fn route_prose(text: &str) -> Option<(Routing, usize, String)> {
    if let Some(t) = route_table(text) {
        return Some(t);
    }
    for (route, words, rule) in [
        (Route::Accuracy, ACCURACY_WORDS, "keyword.accuracy"),
        (Route::Performance, PERFORMANCE_WORDS, "keyword.performance"),
    ] {
        for (i, line) in text.lines().enumerate() {
            let l = line.to_lowercase();
            if let Some(w) = words.iter().copied().find(|&w| {
                if w.is_ascii() {
                    // `nan` only as a word (not `nano…`); the others also as word starts.
                    find_token(&l, w, w == "nan")
                } else {
                    l.contains(w)
                }
            }) {
                return Some((
                    Routing::new(route, rule, Some(w)),
                    i + 1,
                    line.trim_end().to_string(),
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    use npgx_parsers::causal::first_causal_error;

    fn route_of(text: &str) -> Routing {
        route_error(&first_causal_error(text.as_bytes()).expect("a causal error"))
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

    // Class 7: capture context beats memory / resource / stream wording.
    #[test]
    fn capture_context_is_compile_error() {
        let r = route_of("Traceback (most recent call last):\n  File \"r.py\", line 9, in capture_model\n    run()\nRuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n");
        assert_eq!(
            (r.route, r.rule.as_str()),
            (Route::CompileError, "capture.context")
        );
        assert_eq!(r.matched_line, Some(2));
        let r = route_of("RuntimeError: stream sync failed while capturing the graph\n");
        assert_eq!(r.route, Route::CompileError);
        // Capture succeeded and replay fails: runtime-error.
        let r = route_of("RuntimeError: graph replay failed on stream 3 after capture\n");
        assert_eq!(r.route, Route::RuntimeError);
    }

    // Class 8: environment problems name the package.
    #[test]
    fn environment_problems() {
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
        // A module that is not part of the Ascend stack is not an environment route.
        let r = route_of("ModuleNotFoundError: No module named 'mylib'\n");
        assert_ne!(r.route, Route::Environment);
    }

    // Class 9: report tables.
    #[test]
    fn report_tables() {
        let perf = "| model | bs | throughput (tok/s) before | after | change |\n|---|---|---|---|---|\n| m | 8 | 1200 | 950 | -20.8% |\n";
        let (r, line, _) = route_prose(perf).unwrap();
        assert_eq!((r.route, line), (Route::Performance, 1));
        let acc = "| task | eager | graph |\n|---|---|---|\n| gsm8k | 0.81 | 0.62 |\n";
        let (r, _, _) = route_prose(acc).unwrap();
        assert_eq!(r.route, Route::Accuracy);
        let acc = "| dataset | score (eager) | score (graph) |\n|---|---|---|\n";
        assert_eq!(route_prose(acc).unwrap().0.route, Route::Accuracy);
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
