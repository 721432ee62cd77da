//! The first causal error of a captured log (spec `triage-and-repro.md` §1.1 "first causal
//! error", §4).
//!
//! Every line is first stripped of launcher and logger prefixes, then read as one of the error
//! shapes below. Each shape has a strength:
//!
//! * **strong** — a Python exception (wrappers unwrapped), a CANN error report (its root
//!   message), a torch_npu `[Error]:` hint, a plog ERROR record, a c10 error, a `logging` ERROR
//!   line, a protobuf ERROR/FATAL line;
//! * **cascade** — symptoms of an error reported elsewhere: torch_npu `ERRxxxxx` summaries,
//!   watchdog terminations, `terminate called …`, stream-synchronize / event-query failures,
//!   `NPU function error: …` and `call aclnnX failed` wrappers, "The Inner error is reported as
//!   above", `Aborted`, segfault banners;
//! * **soft** — not an error by itself: TORCH_LOGS debug lines (recompiles, guard failures,
//!   graph breaks), a `raise` in a traceback excerpt with no exception line.
//!
//! The first causal error is the earliest strong error; if there is none, the earliest cascade
//! line (nothing explains it); then the earliest soft signal. A torch_npu hint directly followed
//! by a CANN report is one error: the report's code line is quoted when its code is external,
//! the hint when the code is inner (`…9999`: the hint is the only user-facing wording).

use serde::Serialize;

use std::collections::HashMap;

use npgx_parsers::cann_error::{find_code, parse_reports, torch_npu, CannErrorReport};
use npgx_parsers::plog::header::{parse_header, Level};
use npgx_parsers::torch_logs::{
    aclnn_call_failed, backend_compiler_failed, embedded_error, exception_line, frame_line,
    is_traceback_start, logging_line, strip_prefixes, Stripped,
};

/// What shape the causal error has.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorShape {
    PythonException,
    /// An exception found inside another exception's message or after a wrapper line.
    WrappedException,
    CannReport,
    TorchNpuHint,
    TorchNpuErrorCode,
    PlogRecord,
    C10Error,
    LoggingError,
    ProtobufError,
    ProcessAbort,
    TorchLogsSignal,
    TracebackRaise,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Strength {
    Strong,
    Cascade,
    Soft,
}

/// The first causal error of one log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CausalError {
    /// 1-based line number of the quoted line.
    pub line: usize,
    /// The line as it appears in the log (trailing whitespace trimmed).
    pub text: String,
    /// The error itself: prefixes peeled, wrappers unwrapped, CANN location tails removed.
    pub message: String,
    pub shape: ErrorShape,
    /// A second line that holds the root when it differs from the quoted one (a CANN root
    /// message under a torch_npu hint), 1-based.
    pub root_line: Option<usize>,
    /// Earlier error-looking lines that were skipped as cascades, 1-based.
    pub skipped_cascades: Vec<usize>,
    /// The text the keyword rules read: the error, its message continuation, its CANN block.
    #[serde(skip)]
    pub scope: String,
    /// Traceback frame locations above a Python exception (for compile-error keywords).
    #[serde(skip)]
    pub frames: String,
}

#[derive(Debug, Clone)]
struct Candidate {
    index: usize,
    strength: Strength,
    shape: ErrorShape,
    message: String,
    scope: String,
    frames: String,
    root_index: Option<usize>,
}

/// Lines that mark an excerpt gap in the developer samples are not log output.
fn is_excerpt_marker(s: &str) -> bool {
    s.starts_with("[... excerpt gap")
}

/// Wording of errors that only report that something else failed.
const CASCADE_WORDS: &[&str] = &[
    "the inner error is reported as above",
    "npu function error:",
    "function error:",
    "synchronize stream failed",
    "stream synchronize failed",
    "synchronize failed",
    "event query",
    "queryevent",
    "aclqueryeventrecordedstatus",
    "watchdog thread terminated",
    "terminate called after throwing",
    "find exception when",
    "replay failed",
    "task failed",
];

fn is_cascade_text(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    CASCADE_WORDS.iter().any(|w| l.contains(w)) || aclnn_call_failed(s).is_some()
}

/// Finds the first causal error in `text`.
pub fn first_causal_error(text: &str) -> Option<CausalError> {
    let raw: Vec<&str> = text.lines().collect();
    let stripped: Vec<Stripped<'_>> = raw.iter().map(|l| strip_prefixes(l)).collect();
    let rest: Vec<&str> = stripped.iter().map(|s| s.rest).collect();
    let reports: HashMap<usize, CannErrorReport> =
        parse_reports(normalise_pid_tags(text).as_bytes())
            .into_iter()
            .map(|r| {
                (
                    usize::try_from(r.line)
                        .unwrap_or(usize::MAX)
                        .saturating_sub(1),
                    r,
                )
            })
            .collect();
    let candidates = collect(&stripped, &rest, &reports);
    let best = [Strength::Strong, Strength::Cascade, Strength::Soft]
        .iter()
        .find_map(|s| candidates.iter().find(|c| c.strength == *s))?;
    let skipped_cascades = candidates
        .iter()
        .filter(|c| c.index < best.index && c.strength == Strength::Cascade)
        .map(|c| c.index + 1)
        .collect();
    Some(CausalError {
        line: best.index + 1,
        text: raw[best.index].trim_end().to_string(),
        message: best.message.clone(),
        shape: best.shape,
        root_line: best.root_index.map(|i| i + 1),
        skipped_cascades,
        scope: best.scope.clone(),
        frames: best.frames.clone(),
    })
}

/// Text lines following an error line that belong to its message (until a blank line or the
/// next recognisable record).
fn continuation(rest: &[&str], from: usize, limit: usize) -> (String, usize) {
    let mut out = String::new();
    let mut i = from;
    while i < rest.len() && i < from + limit {
        let l = rest[i];
        if l.trim().is_empty()
            || is_traceback_start(l)
            || frame_line(l).is_some()
            || (exception_line(l).is_some() && i > from)
            || find_code(l).is_some()
            || is_cann_traceback(l)
        {
            break;
        }
        out.push('\n');
        out.push_str(l);
        i += 1;
    }
    (out, i)
}

/// Adapter for the `cann_error` grammar: GE prints the code glued to the PID tag
/// (`E89999:[PID:260559] …`, sample triage/36), which the grammar reads only as
/// `E89999: [PID: 260559] …`. Line numbers are unchanged.
fn normalise_pid_tags(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(":[PID:") {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut rest = text;
    while let Some(at) = rest.find(":[PID:") {
        let glued_code = at >= 6 && {
            let code = &rest.as_bytes()[at - 6..at];
            matches!(code[0], b'E' | b'W' | b'I')
                && (code[1].is_ascii_digit() || code[1].is_ascii_uppercase())
                && code[2..].iter().all(u8::is_ascii_digit)
        };
        out.push_str(&rest[..at]);
        out.push_str(if glued_code { ": [PID: " } else { ":[PID:" });
        rest = &rest[at + ":[PID:".len()..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// CANN's `TraceBack (most recent call last):` header (any indentation).
fn is_cann_traceback(line: &str) -> bool {
    line.trim() == "TraceBack (most recent call last):"
}

/// torch_npu's hint line: `[Error]: The aicore execution times out.`
fn torch_npu_hint(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("[Error]:").map(str::trim)
}

/// Drops a `[FUNC:…][FILE:…][LINE:…]` tail.
fn strip_location(msg: &str) -> &str {
    let msg = msg.trim();
    msg.find("[FUNC:").map_or(msg, |i| msg[..i].trim_end())
}

fn index(line: u64) -> usize {
    usize::try_from(line)
        .unwrap_or(usize::MAX)
        .saturating_sub(1)
}

fn collect(
    stripped: &[Stripped<'_>],
    rest: &[&str],
    reports: &HashMap<usize, CannErrorReport>,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let mut frames = String::new();
    let mut i = 0;
    while i < rest.len() {
        let line = rest[i];
        let glog_debug = stripped[i]
            .glog()
            .is_some_and(|g| matches!(g.level, 'V' | 'I' | 'W'));
        if is_excerpt_marker(line) || line.trim().is_empty() {
            i += 1;
            continue;
        }
        if is_traceback_start(line) {
            frames.clear();
            i += 1;
            continue;
        }
        if let Some(f) = frame_line(line) {
            frames.push_str(&f.file);
            frames.push(' ');
            if let Some(func) = &f.function {
                frames.push_str(func);
            }
            frames.push('\n');
            // A traceback excerpt without its exception: the `raise` is the best we have.
            if let Some(next) = rest.get(i + 1) {
                let src = next.trim_start();
                if src.starts_with("raise ") {
                    out.push(Candidate {
                        index: i + 1,
                        strength: Strength::Soft,
                        shape: ErrorShape::TracebackRaise,
                        message: src.trim_end().to_string(),
                        scope: src.to_string(),
                        frames: frames.clone(),
                        root_index: None,
                    });
                }
            }
            i += 1;
            continue;
        }
        // CANN error reports (parsed by `cann_error`): code line, or a cut excerpt's TraceBack.
        if let Some(report) = reports.get(&i) {
            let end = index(report.end_line)
                .saturating_add(1)
                .max(i + 1)
                .min(rest.len());
            // A `detail:` report that starts on an exception line is read with the exception.
            if exception_line(line).is_none() {
                // The line right after `CODE: Inner Error!` is the root (§3.5); otherwise the
                // message on the code line.
                let (root, root_text) = match (report.inner, report.items.first(), &report.message)
                {
                    (true, Some(item), _) => (index(item.line), item.text.as_str()),
                    (_, _, Some(m)) => (index(m.line), m.text.as_str()),
                    (_, Some(item), None) => (index(item.line), item.text.as_str()),
                    (_, None, None) => (i, ""),
                };
                let root_message = strip_location(root_text).to_string();
                let external = report.code.is_some() && !report.inner;
                let at = if external { i } else { root };
                let cand = Candidate {
                    index: at,
                    strength: if glog_debug {
                        Strength::Soft
                    } else {
                        Strength::Strong
                    },
                    shape: ErrorShape::CannReport,
                    message: match &report.code {
                        Some(c) => format!("{c}: {root_message}"),
                        None => root_message,
                    },
                    scope: rest[i..end].join("\n"),
                    frames: String::new(),
                    root_index: (root != at).then_some(root),
                };
                merge_with_hint(&mut out, cand, rest, report.inner);
                i = end;
                continue;
            }
        }
        if let Some(e) = exception_line(line) {
            let strength_of = |msg: &str| {
                if glog_debug {
                    Strength::Soft
                } else if is_cascade_text(msg) {
                    Strength::Cascade
                } else {
                    Strength::Strong
                }
            };
            // `BackendCompilerFailed: backend='…' raised:` → the next line is the real error.
            if backend_compiler_failed(&e).is_some() {
                let inner = (i + 1..rest.len().min(i + 4))
                    .find(|j| !rest[*j].trim().is_empty())
                    .and_then(|j| exception_line(rest[j]).map(|x| (j, x)));
                if let Some((j, inner)) = inner {
                    let (cont, end) = continuation(rest, j, 40);
                    let message = format!("{}: {}", inner.type_name, inner.message);
                    out.push(Candidate {
                        index: j,
                        strength: strength_of(&message),
                        shape: ErrorShape::WrappedException,
                        scope: format!("{line}\n{message}{cont}"),
                        message,
                        frames: frames.clone(),
                        root_index: None,
                    });
                    i = end.max(j + 1);
                    continue;
                }
            }
            // An exception repr inside the message, with escaped newlines.
            if let Some(inner) = embedded_error(e.message) {
                let first = inner.message.lines().next().unwrap_or("").to_string();
                let message = format!("{}: {first}", inner.type_name);
                out.push(Candidate {
                    index: i,
                    strength: strength_of(&message),
                    shape: ErrorShape::WrappedException,
                    scope: format!("{}\n{}", message, inner.message),
                    message,
                    frames: frames.clone(),
                    root_index: None,
                });
                i += 1;
                continue;
            }
            let (cont, end) = continuation(rest, i + 1, 40);
            let message = format!("{}: {}", e.type_name, e.message)
                .trim_end_matches(": ")
                .to_string();
            out.push(Candidate {
                index: i,
                strength: strength_of(e.message),
                shape: ErrorShape::PythonException,
                scope: format!("{message}{cont}"),
                message,
                frames: frames.clone(),
                root_index: None,
            });
            // A `detail:` CANN report that starts on this exception line follows as items.
            if let Some(report) = reports.get(&i) {
                let block_end = index(report.end_line).saturating_add(1).min(rest.len());
                if let Some(last) = out.last_mut() {
                    last.scope.push('\n');
                    last.scope
                        .push_str(&rest[(i + 1).min(block_end)..block_end].join("\n"));
                }
                i = block_end.max(end);
                continue;
            }
            i = end.max(i + 1);
            continue;
        }
        if let Some(hint) = torch_npu_hint(line) {
            let (cont, _) = continuation(rest, i + 1, 3);
            out.push(Candidate {
                index: i,
                strength: Strength::Strong,
                shape: ErrorShape::TorchNpuHint,
                message: hint.to_string(),
                scope: format!("{hint}{cont}"),
                frames: String::new(),
                root_index: None,
            });
            i += 1;
            continue;
        }
        if let Some(c) = classify_other(line, &stripped[i], glog_debug) {
            let mut scope = line.to_string();
            if c.1 == ErrorShape::PlogRecord {
                // The following plog records of the same burst are the context.
                for l in rest.iter().skip(i + 1).take(12) {
                    if !is_plog_error(l) {
                        break;
                    }
                    scope.push('\n');
                    scope.push_str(l);
                }
            }
            out.push(Candidate {
                index: i,
                strength: c.0,
                shape: c.1,
                message: c.2,
                scope,
                frames: String::new(),
                root_index: None,
            });
        }
        i += 1;
    }
    out
}

/// A CANN report right after a torch_npu hint (only indented advice lines between) is one error.
fn merge_with_hint(out: &mut Vec<Candidate>, block: Candidate, rest: &[&str], inner: bool) {
    if let Some(last) = out.last_mut() {
        let between_ok = last.shape == ErrorShape::TorchNpuHint
            && (last.index + 1..block.index.min(rest.len())).all(|k| {
                let l = rest[k];
                l.starts_with(char::is_whitespace) || find_code(l).is_some() || is_cann_traceback(l)
            });
        if between_ok {
            if inner {
                last.root_index = Some(block.root_index.unwrap_or(block.index));
                last.message = format!("{} ({})", last.message, block.message);
                last.scope = format!("{}\n{}", last.scope, block.scope);
            } else {
                *last = block;
            }
            return;
        }
    }
    out.push(block);
}

/// Error lines that are neither exceptions nor CANN reports.
fn classify_other(
    line: &str,
    stripped: &Stripped<'_>,
    glog_debug: bool,
) -> Option<(Strength, ErrorShape, String)> {
    let t = line.trim();
    if let Some(g) = stripped.glog() {
        let artifact = g.artifact.as_deref().unwrap_or("");
        let lower = t.to_ascii_lowercase();
        if artifact.starts_with("recompiles")
            || artifact == "graph_breaks"
            || lower.starts_with("recompiling function")
            || lower.starts_with("graph break")
        {
            return Some((Strength::Soft, ErrorShape::TorchLogsSignal, t.to_string()));
        }
        if glog_debug {
            return None;
        }
    }
    if torch_npu::parse_torch_npu_line(t).is_some() {
        return Some((
            Strength::Cascade,
            ErrorShape::TorchNpuErrorCode,
            t.to_string(),
        ));
    }
    if is_plog_error(t) {
        return Some((Strength::Strong, ErrorShape::PlogRecord, t.to_string()));
    }
    if let Some(level) = stripped.c10_level() {
        if matches!(level, 'E' | 'F') {
            let strength = if is_cascade_text(t) {
                Strength::Cascade
            } else {
                Strength::Strong
            };
            return Some((strength, ErrorShape::C10Error, t.to_string()));
        }
    }
    if let Some(l) = logging_line(t) {
        if matches!(l.level, "ERROR" | "CRITICAL") {
            let strength = if is_cascade_text(l.message) {
                Strength::Cascade
            } else {
                Strength::Strong
            };
            return Some((strength, ErrorShape::LoggingError, l.message.to_string()));
        }
    }
    if t.starts_with("[libprotobuf ERROR") || t.starts_with("[libprotobuf FATAL") {
        return Some((Strength::Strong, ErrorShape::ProtobufError, t.to_string()));
    }
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("terminate called")
        || lower.starts_with("what():")
        || lower.contains(": [error]")
        || lower.starts_with("aborted (core dumped)")
        || lower.starts_with("segmentation fault")
        || lower.starts_with("fatal python error")
    {
        return Some((Strength::Cascade, ErrorShape::ProcessAbort, t.to_string()));
    }
    None
}

/// A plog record at level ERROR printed into the screen log.
fn is_plog_error(line: &str) -> bool {
    parse_header(line.trim_start().as_bytes()).is_some_and(|(h, _)| h.level == Level::Error)
}
