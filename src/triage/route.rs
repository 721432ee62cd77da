//! Routing: which diagnosis sub-skill a failure goes to (spec `triage-and-repro.md` §1.1
//! "Step 2 — routing").
//!
//! Order: environment problems (torch_npu / npugraph_ex missing) are named as such; then
//! step-based pre-classification (steps 1–4 → compile-error); then the keyword rules on the first
//! causal error, in the spec's order: ACL-graph capture and compile keywords → compile-error;
//! runtime keywords → runtime-error; a crash with none of them → compile-error (rule 1's last
//! bullet). Without an error: graph-vs-eager mismatch wording → accuracy; slowness wording →
//! performance.

use serde::Serialize;

use super::evidence::{CausalError, ErrorShape};

/// The route a failure takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Route {
    CompileError,
    RuntimeError,
    Accuracy,
    Performance,
    /// torch_npu or the npugraph_ex backend is not installed: fix the environment first.
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
    /// Short identifier of the rule (`keyword.compile`, `step.pre-classification`, …).
    pub rule: String,
    /// The keyword or phrase that fired, when a keyword rule fired.
    pub matched: Option<String>,
    /// Notes the handoff must carry (step-1 hint, force_eager note, boundary note).
    pub notes: Vec<String>,
}

impl Routing {
    fn new(route: Route, rule: &str, matched: Option<&str>) -> Self {
        Routing {
            route,
            rule: rule.to_string(),
            matched: matched.map(str::to_string),
            notes: Vec::new(),
        }
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

/// ACL-graph capture signatures (§4): `captur…` in the error or its CANN traceback, the
/// `Capturing ACL graphs` progress text, or runtime code 107030.
fn capture_signature(scope: &str) -> Option<&'static str> {
    let l = scope.to_ascii_lowercase();
    if l.contains("capture mode does not support") || l.contains("107030") {
        return Some("107030 capture mode");
    }
    if l.contains("captur") {
        return Some("captur");
    }
    None
}

/// Missing torch_npu / npugraph_ex: an environment problem, not a compile error.
pub fn environment_problem(err: &CausalError) -> Option<String> {
    let m = &err.scope;
    let checks = [
        (
            "Invalid backend: 'npugraph_ex'",
            "the npugraph_ex backend is not registered (torch_npu missing or too old)",
        ),
        (
            "No module named 'torch_npu'",
            "torch_npu is not installed in this interpreter",
        ),
        (
            "No module named 'npugraph_ex'",
            "npugraph_ex is not installed in this interpreter",
        ),
        (
            "No module named 'torchair'",
            "torchair is not installed in this interpreter",
        ),
    ];
    checks
        .iter()
        .find(|(needle, _)| m.contains(needle))
        .map(|(_, why)| why.to_string())
}

/// Keyword rules on a causal error (rules 1–2 and rule 1's last bullet).
pub fn route_error(err: &CausalError) -> Routing {
    if let Some(why) = environment_problem(err) {
        let mut r = Routing::new(Route::Environment, "environment.backend-missing", None);
        r.notes.push(format!(
            "{why}: this is an environment problem, not a compile error — install or fix torch_npu / npugraph_ex and re-run"
        ));
        return r;
    }
    if let Some(sig) = capture_signature(&err.scope) {
        let replay_only = {
            let l = err.scope.to_ascii_lowercase();
            l.contains("replay")
                && !l.contains("capture fail")
                && !l.contains("capture stream fail")
        };
        if !replay_only {
            let mut r = Routing::new(Route::CompileError, "keyword.capture", Some(sig));
            r.notes.push(
                "ACL-graph capture failure: compile-error despite runtime-looking words".into(),
            );
            return r;
        }
    }
    let compile_hay = format!("{}\n{}", err.scope, err.frames);
    if let Some(w) = first_word(&compile_hay, COMPILE_WORDS) {
        return Routing::new(Route::CompileError, "keyword.compile", Some(w));
    }
    if err.shape == ErrorShape::PlogRecord {
        // Rule 2 names "CANN plog" itself as a runtime-error keyword.
        return Routing::new(Route::RuntimeError, "keyword.runtime", Some("CANN plog"));
    }
    if let Some(w) = first_word(&err.scope, RUNTIME_WORDS) {
        let mut r = Routing::new(Route::RuntimeError, "keyword.runtime", Some(w));
        if err.scope.to_ascii_lowercase().contains("replay") {
            r.notes.push(
                "capture succeeded and replay fails: runtime-error by default; if evidence is thin, also consult compile-error"
                    .into(),
            );
        }
        return r;
    }
    let mut r = Routing::new(
        Route::CompileError,
        "keyword.compile.no-runtime-token",
        None,
    );
    r.notes.push(
        "no aclnn / ACL / HCCL / stream / event token in the first causal error (rule 1, last bullet)".into(),
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

/// Rules 3 and 4 on text without an error: the first line with accuracy or performance wording.
pub fn route_prose(text: &str) -> Option<(Routing, usize, String)> {
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
