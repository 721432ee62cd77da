//! The first causal error: the one engine behind `npgx plog`, `npgx aicore`, `npgx triage
//! classify|analyze` and the repro source lookup.
//!
//! A failing run prints the same failure many times, loudest last: a device reports a task
//! failure, the runtime forwards it, every stream synchronisation fails, ACL and the framework
//! fail in turn, a Python exception wraps it, a watchdog gives up. Users who `tail -1` pick the
//! propagation. This module reads the text the way a careful reader would:
//!
//! 1. **Normalise** each line ([`normalise`]): paste decorations (Markdown quotes and fences, the
//!    paste's common indentation, excerpt-gap markers) and logger prefixes (vLLM, `[rankN]:`,
//!    glog, c10, old TORCH_LOGS, plog console prefixes) come off; line numbers never change.
//! 2. **Collect candidates** ([`collect`]): Python exceptions (wrappers unwrapped), CANN error
//!    reports (root message first), torch_npu hints and `ERRxxxxx` summaries, plog ERROR records,
//!    kernel assertions, c10 / logging / protobuf errors, graph-break reasons, recompile reasons.
//!    Each has a [`Shape`], a [`Tier`] and a [`CauseRank`].
//! 3. **Rank** them: lowest tier, then lowest rank, then earliest line. Tiers: *strong* (an error
//!    that states a cause), *signal* (graph-break and recompile reasons: not a crash, but the
//!    reason a compile went wrong), *cascade* (an error that only says something else failed:
//!    wrappers, summaries, watchdogs, aborts), *soft* (debug chatter, a bare `raise`). Ranks
//!    refine strong errors the way a plog reader does: device faults before error reports
//!    before task errors before other ERROR records before framework lines.
//!
//! Every decision carries its [`Evidence`]: the rule id, the line numbers, the wrapper skipped.
//!
//! Memory: [`CausalScanner`] takes lines one at a time and analyses them in windows of at most
//! [`WINDOW_LINES`] lines / [`WINDOW_BYTES`] bytes (cut at a blank line when one is near), so a
//! multi-GB input costs the same as a small one. Callers cap single lines ([`MAX_LINE`]).
//!
//! Speed: most lines of a plog are records below ERROR ([`is_quiet_record`]). Such a record is
//! never a candidate; it only ends whatever block came before it, and a run of them ends it no
//! more than one does. So the scanner keeps the first line of each run and drops the rest before
//! any per-line work: windows count the lines kept (their line numbers have gaps), and a caller
//! may drop those lines itself (`npgx plog` does, on its worker threads) with the same result.
//!
//! What it is not for: reading files (the application streams them) and routing (the triage
//! engine decides a route from the [`CausalError`]'s shape and scope).

pub mod across;
pub mod collect;
pub mod cut;
pub mod normalise;
pub mod phase;
pub mod rank;
pub mod remedy;
pub mod volatile;

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::plog::header::PlogTime;
pub use collect::cited_line;
use collect::{collect, floor_char, Candidate, WinLine};
pub use normalise::{common_indent, normalise, Normalised};
pub use phase::PhaseEvidence;
pub use rank::{rank_plog_error, CauseRank};
pub use remedy::{
    check_command, kernel_assert_remedy, named_library, plogs_instead, reads_device_records,
    remedies, remedies_with_assert, route_remedy, table_remedy, Remedy,
};

/// Longest line the engine looks at; callers keep this head and count the rest.
pub const MAX_LINE: usize = 64 * 1024;
/// Most lines analysed together.
pub const WINDOW_LINES: usize = 20_000;
/// Most bytes analysed together.
pub const WINDOW_BYTES: usize = 16 * 1024 * 1024;
/// Most skipped-cascade line numbers kept.
const MAX_SKIPPED: usize = 64;
/// Most ranked candidates kept (the first causal error and its runners-up).
pub const MAX_RANKED: usize = 6;
/// Lines around an error whose other candidates are its context.
const CONTEXT_LINES: usize = 40;

/// How strongly a candidate states a cause; lower is stronger.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Tier {
    Strong,
    Signal,
    Cascade,
    Soft,
}

/// What the causal error looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    PythonException,
    /// An exception found inside another exception's message or after a wrapper line.
    WrappedException,
    CannReport,
    TorchNpuHint,
    TorchNpuErrorCode,
    PlogRecord,
    /// MindSpore's own error lines.
    FrameworkError,
    C10Error,
    LoggingError,
    ProtobufError,
    ProcessAbort,
    /// An AscendC kernel assertion printed by the device.
    KernelAssert,
    /// A compiler's diagnostic (`loc("k.mlir":3:3): error: …`, `k.cpp:24:10: error: …`, a TBE
    /// `errCode` dict): a kernel or operator compiled at run time did not compile.
    CompilerDiagnostic,
    /// A graph-break reason (`torch._dynamo.explain()`, TORCH_LOGS=graph_breaks).
    GraphBreak,
    /// A recompilation and its guard failure.
    Recompile,
    TracebackRaise,
    /// A traceback pasted without its exception line: its innermost frame.
    TracebackFrames,
    /// A line that states a broken environment on its own (a loader failure, a missing module,
    /// a build without a component), outside any exception.
    EnvironmentLine,
    /// A line that holds a known cause phrase of the knowledge table (`NPU out of memory. Tried
    /// to allocate …`), outside any exception or report.
    KnownPhrase,
}

/// Why a candidate was chosen: the rule, the lines it read, what was skipped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Evidence {
    /// The recognising rule (`cann.report`, `python.exception`, `graph-break.reason`, …).
    pub rule: Cow<'static, str>,
    /// Lines of the error itself (its message continuation, its CANN block), 1-based.
    pub lines: Vec<u64>,
    /// The wrapper exception this error was found under (a Python exception that only says
    /// which C++ file raised it), 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrapper_line: Option<u64>,
}

/// The first causal error of a text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CausalError {
    /// 1-based physical line of the quoted line.
    pub line: u64,
    /// The line as it appears (trailing whitespace trimmed, long lines cut, a terminal's escape
    /// sequences removed).
    pub text: String,
    /// The error itself: prefixes peeled, wrappers unwrapped, CANN location tails removed.
    pub message: String,
    pub shape: Shape,
    pub tier: Tier,
    pub rank: CauseRank,
    /// The Python exception type, when the error is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception_type: Option<String>,
    /// A second line that holds the root when it differs from the quoted one, 1-based.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_line: Option<u64>,
    /// Earlier error-looking lines skipped as cascades, 1-based (at most 64).
    pub skipped_cascades: Vec<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i64>,
    /// The plog time stamp, when the error is a plog record.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<PlogTime>,
    pub evidence: Evidence,
    /// Where in the run the error happened, and why we think so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase: Option<PhaseEvidence>,
    /// Lines of the same failure around the error (its wrapper, neighbouring error lines) that
    /// routing may read when the error itself says nothing of its phase.
    #[serde(skip)]
    pub context: Vec<(u64, String)>,
    /// The error's lines (line number, normalised text) that routing reads.
    #[serde(skip)]
    pub scope: Vec<(u64, String)>,
    /// Traceback frames (line number, `file function`) above the error or its wrapper.
    #[serde(skip)]
    pub frames: Vec<(u64, String)>,
    /// The innermost frame of that traceback in the user's code (outside torch, torch_npu,
    /// torchair and installed packages): the line of the model that made the failing call. Absent
    /// without a traceback or when every frame is a library's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_frame: Option<UserFrame>,
}

/// A traceback frame in the user's code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UserFrame {
    pub file: String,
    /// The line in that file.
    pub line: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub function: Option<String>,
    /// The 1-based line of the log that holds the frame.
    pub log_line: u64,
}

impl CausalError {
    /// The ordering key: tier, rank, line.
    pub fn key(&self) -> (Tier, CauseRank, u64) {
        (self.tier, self.rank, self.line)
    }

    /// The scope as one text (for keyword rules).
    pub fn scope_text(&self) -> String {
        let mut s = String::new();
        for (_, l) in &self.scope {
            s.push_str(l);
            s.push('\n');
        }
        s
    }
}

/// Streams lines in, keeps the best candidate; memory bounded by the window size.
#[derive(Debug, Default)]
pub struct CausalScanner {
    /// The window's text, lines back to back (one buffer, reused).
    text: String,
    /// Per line of the window: its number and its byte range in `text`.
    spans: Vec<(u64, usize, usize)>,
    best: Option<CausalError>,
    /// The best candidates of every window so far, best first (at most [`MAX_RANKED`]).
    ranked: Vec<CausalError>,
    skipped: Vec<u64>,
    /// Kernel assertions seen (candidates of [`Shape::KernelAssert`], ranked or not).
    kernel_asserts: u64,
    /// Whether the last line kept was a [quiet record](is_quiet_record).
    quiet: bool,
    /// Only the first causal error is asked for ([`CausalScanner::first_only`]).
    first_only: bool,
    /// The number of the last line pushed.
    last_no: u64,
}

/// A plog record below ERROR (the line starts with its header): never a causal error. The
/// scanner drops such a line when the line kept before it was one too (see the module's
/// comment); a caller that drops them first must use this test on the same bytes.
pub fn is_quiet_record(line: &[u8]) -> bool {
    let head = &line[..line.len().min(MAX_LINE)];
    head.first() == Some(&b'[')
        && crate::plog::header::parse_header(head)
            .is_some_and(|(h, _)| h.level != crate::plog::header::Level::Error)
}

impl CausalScanner {
    pub fn new() -> Self {
        Self::default()
    }

    /// A scanner asked only for the first causal error ([`Self::finish`]) and whether a kernel
    /// assertion was seen ([`Self::saw_kernel_assert`]): once both are [decided](Self::decided)
    /// it takes no more lines (they are ignored), since later windows would only rank
    /// runners-up ([`Self::finish_ranked`] then gives those of the windows read). A crash's log
    /// decides them in its first window and goes on for millions of lines. Its lines must come
    /// with increasing numbers, as [`Self::push`] asks of every caller: the decision rests on
    /// every later line coming after the error.
    pub fn first_only() -> Self {
        CausalScanner {
            first_only: true,
            ..Self::default()
        }
    }

    /// Feeds one physical line (1-based number, bytes without the terminator; invalid UTF-8 is
    /// replaced, NUL bytes become spaces, a line longer than [`MAX_LINE`] is cut).
    pub fn push(&mut self, no: u64, line: &[u8]) {
        debug_assert!(
            no > self.last_no,
            "line {no} pushed after line {}",
            self.last_no
        );
        self.last_no = no;
        if self.first_only && self.decided().is_some() {
            return;
        }
        let quiet = is_quiet_record(line);
        if quiet && self.quiet {
            return;
        }
        self.quiet = quiet;
        let head = &line[..line.len().min(MAX_LINE)];
        let start = self.text.len();
        match std::str::from_utf8(head) {
            Ok(t) => self.text.push_str(t),
            Err(_) => self.text.push_str(&String::from_utf8_lossy(head)),
        }
        if self.text[start..].contains('\0') {
            let cleaned = self.text[start..].replace('\0', " ");
            self.text.truncate(start);
            self.text.push_str(&cleaned);
        }
        // A logger's colours (`ESC[32mINFO ESC[0m`) are no text: every rule reads the line
        // without them, and the line is cited without them.
        if let Some(plain) = normalise::strip_escapes(&self.text[start..]) {
            self.text.truncate(start);
            self.text.push_str(&plain);
        }
        let blank = self.text[start..].trim().is_empty();
        self.spans.push((no, start, self.text.len()));
        let full = self.spans.len() >= WINDOW_LINES || self.text.len() >= WINDOW_BYTES;
        let near_full =
            self.spans.len() >= WINDOW_LINES * 9 / 10 || self.text.len() >= WINDOW_BYTES * 9 / 10;
        if full || (near_full && blank) {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if self.spans.is_empty() {
            return;
        }
        let window: Vec<(u64, &str)> = self
            .spans
            .iter()
            .map(|(no, a, b)| (*no, &self.text[*a..*b]))
            .collect();
        let (ranked, skipped, asserts) = analyse(&window);
        self.kernel_asserts += asserts;
        let best = ranked.first().cloned();
        self.spans.clear();
        self.text.clear();
        self.ranked.extend(ranked);
        self.ranked.sort_by_key(CausalError::key);
        self.ranked.truncate(MAX_RANKED);
        if let Some(c) = best {
            if self.best.as_ref().is_none_or(|b| c.key() < b.key()) {
                let mut c = c;
                // Cascades skipped in earlier windows still count.
                let mut all: Vec<u64> = self
                    .skipped
                    .iter()
                    .copied()
                    .chain(skipped.iter().copied())
                    .filter(|l| *l < c.line)
                    .collect();
                all.truncate(MAX_SKIPPED);
                c.skipped_cascades = all;
                self.best = Some(c);
            }
        }
        if self.skipped.len() < MAX_SKIPPED {
            self.skipped.extend(skipped);
            self.skipped.truncate(MAX_SKIPPED);
        }
    }

    /// Whether a kernel assertion (Ascend C's `[ASSERT]` line) may be among the lines pushed so
    /// far: a candidate of an analysed window, or the tag in the window not yet analysed. Which of
    /// a log's device errors it belongs to is for `aicore`'s grouping to say.
    pub fn saw_kernel_assert(&self) -> bool {
        self.kernel_asserts > 0 || crate::kernel_assert::is_kernel_assert(&self.text)
    }

    /// The first causal error and a kernel assertion among the lines, before [`Self::finish`],
    /// when the windows analysed so far decide both for good: their best is a strong device
    /// fault, before which no tier or rank comes, and every line still to come lies after it (no
    /// later window replaces it: `finish` returns it as it is); and one of them held an
    /// assertion ([`Self::saw_kernel_assert`] stays true). Work that needs only these can start
    /// before the text ends.
    pub fn decided(&self) -> Option<&CausalError> {
        self.best
            .as_ref()
            .filter(|b| b.tier == Tier::Strong && b.rank == CauseRank::DeviceFault)
            .filter(|_| self.kernel_asserts > 0)
    }

    /// The first causal error, or `None` when the text holds no error at all.
    pub fn finish(self) -> Option<CausalError> {
        self.finish_ranked().into_iter().next()
    }

    /// The first causal error and its runners-up, best first (at most [`MAX_RANKED`]; the
    /// first is what [`Self::finish`] returns).
    pub fn finish_ranked(mut self) -> Vec<CausalError> {
        self.flush();
        let Some(best) = self.best else {
            return Vec::new();
        };
        let line = best.line;
        let mut out = vec![best];
        out.extend(
            self.ranked
                .into_iter()
                .filter(|c| c.line != line)
                .take(MAX_RANKED - 1),
        );
        out
    }
}

/// Analyses one window: its best candidates (best first) and the cascade lines skipped before
/// the best.
fn analyse(window: &[(u64, &str)]) -> (Vec<CausalError>, Vec<u64>, u64) {
    // A `grep -n` or editor gutter on most lines comes off before anything else.
    let gutter = normalise::window_has_gutter(window.iter().map(|(_, l)| *l));
    let norms: Vec<Normalised<'_>> = window
        .iter()
        .map(|(_, l)| {
            let g = if gutter { normalise::gutter_len(l) } else { 0 };
            normalise(l.get(g..).unwrap_or(l))
        })
        .collect();
    let indent = common_indent(norms.iter().filter(|n| !n.skip).map(|n| n.rest));
    let lines: Vec<WinLine<'_>> = window
        .iter()
        .zip(norms)
        .map(|((no, raw), norm)| {
            let rest = if norm.rest.len() >= indent && norm.rest.is_char_boundary(indent) {
                &norm.rest[indent..]
            } else {
                norm.rest.trim_start()
            };
            WinLine::new(*no, raw, norm, rest)
        })
        .collect();
    let cands = collect(&lines);
    let asserts = cands
        .iter()
        .filter(|c| c.shape == Shape::KernelAssert)
        .count() as u64;
    let mut order: Vec<usize> = (0..cands.len()).collect();
    order.sort_by_key(|&k| (cands[k].tier, cands[k].rank, cands[k].index));
    restated_title(&lines, &cands, &mut order);
    let Some(&best) = order.first() else {
        return (Vec::new(), Vec::new(), asserts);
    };
    let best_index = cands[best].index;
    let skipped: Vec<u64> = cands
        .iter()
        .filter(|c| c.tier == Tier::Cascade && c.index < best_index)
        .map(|c| lines[c.index].no)
        .take(MAX_SKIPPED)
        .collect();
    let ranked = order
        .iter()
        .take(MAX_RANKED)
        .map(|&k| {
            let mut e = to_error(&lines, cands[k].clone());
            e.context = context(&lines, &cands, k);
            e.phase = phase::infer(&e);
            e
        })
        .collect();
    (ranked, skipped, asserts)
}

/// An issue page pasted whole: its title, a Markdown heading (`# …`), often restates the error
/// its body shows as printed (`# … 报错libraries: libc_sec.so: cannot open shared object file:
/// …` over `npu-smi: error while loading shared libraries: libc_sec.so: cannot open shared
/// object file: …`). When the best candidate is such a title and one of the next
/// [`RESTATED_CANDIDATES`] candidates, below it and of a tier no weaker, says the same
/// ([`restates`]), the body's line goes first: it is what the program printed. A title whose
/// body says nothing like it stays first (the body cut before its error).
fn restated_title(lines: &[WinLine<'_>], cands: &[Candidate], order: &mut [usize]) {
    let Some(&best) = order.first() else { return };
    let line = lines[cands[best].index].raw.trim_start();
    let title = crate::line_prefix::heading_marker(line);
    if title.len() == line.len() {
        return;
    }
    let title = title.trim().to_lowercase();
    let body = order.iter().take(RESTATED_CANDIDATES).position(|&k| {
        let c = &cands[k];
        c.index > cands[best].index
            && c.tier <= cands[best].tier
            && restates(&title, &lines[c.index].rest.trim().to_lowercase())
    });
    if let Some(at) = body {
        order[..=at].rotate_right(1);
    }
}

/// How many candidates after a title [`restated_title`] compares with it.
const RESTATED_CANDIDATES: usize = 64;

/// Bytes of text a title and a body line share for the one to restate the other.
const RESTATED: usize = 32;

/// Whether `said` restates `title` (both lower case, cut to 1 KiB): they share a run of
/// [`RESTATED`] bytes that holds words (two spaces or a non-ASCII character: not a path or a URL
/// alone), or the shorter of the two, shorter than that (at least 8 bytes), stands whole in the
/// other.
fn restates(title: &str, said: &str) -> bool {
    let (title, said) = (cut(title), cut(said));
    let (t, s) = (title.as_bytes(), said.as_bytes());
    if t.len().min(s.len()) < RESTATED {
        let (short, long) = if t.len() < s.len() {
            (title, said)
        } else {
            (said, title)
        };
        return short.len() >= 8 && long.contains(short);
    }
    let worded =
        |w: &[u8]| w.iter().filter(|&&b| b == b' ').count() >= 2 || w.iter().any(|b| !b.is_ascii());
    let runs: std::collections::HashSet<&[u8]> =
        t.windows(RESTATED).filter(|w| worded(w)).collect();
    s.windows(RESTATED).any(|w| runs.contains(w))
}

/// `s` cut to at most 1 KiB, at a character boundary.
fn cut(s: &str) -> &str {
    &s[..floor_char(s, 1024)]
}

/// The context of candidate `k`: the line of the wrapper it was found under and the first line
/// of every other candidate within [`CONTEXT_LINES`] lines of it.
fn context(lines: &[WinLine<'_>], cands: &[Candidate], k: usize) -> Vec<(u64, String)> {
    let me = &cands[k];
    let mut out: Vec<(u64, String)> = Vec::new();
    if let Some(wl) = me.wrapper_line {
        // Line numbers may have gaps (quiet plog records are dropped): find it by number.
        if let Some(l) = lines.get(lines.partition_point(|l| l.no < wl)) {
            if l.no == wl {
                out.push((wl, l.rest.trim().to_string()));
            }
        }
    }
    for (j, c) in cands.iter().enumerate() {
        if j == k || c.index.abs_diff(me.index) > CONTEXT_LINES {
            continue;
        }
        let no = lines[c.index].no;
        if out.iter().any(|(n, _)| *n == no) {
            continue;
        }
        let text = c
            .scope
            .first()
            .map_or(c.message.as_str(), |(_, t)| t.as_ref());
        out.push((no, text[..floor_char(text, 1024)].to_string()));
    }
    out
}

/// Lines after an exception in which Dynamo's `from user code:` list is looked for.
const USER_CODE_REACH: usize = 64;

/// The user's frame of the error at window index `at`: the innermost frame in the user's code
/// of Dynamo's `from user code:` list below the exception (the code it was tracing), else of the
/// traceback frames above it (`frames`: log line numbers into `lines`).
fn user_frame(lines: &[WinLine<'_>], at: usize, frames: &[(u64, String)]) -> Option<UserFrame> {
    let user = |no: u64, text: &str| {
        let f = crate::torch_logs::python::frame_line(text)?;
        // IPython 7 and a function in an 8.0 cell: the line is on the arrow under the frame,
        // before the next blank line or frame.
        let line = match f.line {
            0 => {
                let i = lines.binary_search_by_key(&no, |l| l.no).ok()?;
                lines
                    .get(i + 1..)?
                    .iter()
                    .take(64)
                    .take_while(|l| {
                        !l.rest.trim().is_empty()
                            && crate::torch_logs::python::frame_line(l.rest).is_none()
                    })
                    .find_map(|l| crate::torch_logs::python::arrow_line(l.rest))?
            }
            n => n,
        };
        (!f.is_library()).then_some(UserFrame {
            file: f.file,
            line,
            function: f.function,
            log_line: no,
        })
    };
    let below = lines.get(at + 1..).unwrap_or_default();
    let listed = below
        .iter()
        .take(USER_CODE_REACH)
        .position(|l| l.rest.trim() == "from user code:")
        .map(|p| {
            // The frames and their code lines, up to the first line that is neither.
            let mut found = None;
            for l in &below[p + 1..] {
                let t = l.rest.trim_start();
                if t.starts_with("File \"") {
                    if let Some(u) = user(l.no, l.rest) {
                        found = Some(u);
                    }
                } else if t.is_empty() || l.rest.len() == t.len() {
                    break;
                }
            }
            found
        });
    listed.flatten().or_else(|| {
        frames.iter().rev().find_map(|(no, _)| {
            let i = lines.binary_search_by_key(no, |l| l.no).ok()?;
            user(*no, lines[i].rest)
        })
    })
}

fn to_error(lines: &[WinLine<'_>], c: Candidate) -> CausalError {
    let raw = lines[c.index].raw.trim_end();
    let text = raw[..floor_char(raw, 4096)].to_string();
    let mut ev_lines: Vec<u64> = c.scope.iter().map(|(n, _)| *n).collect();
    ev_lines.dedup();
    let user_frame = user_frame(lines, c.index, &c.frames);
    CausalError {
        line: lines[c.index].no,
        text,
        message: c.message,
        shape: c.shape,
        tier: c.tier,
        rank: c.rank,
        exception_type: c.exception_type,
        root_line: c.root_index.and_then(|i| lines.get(i)).map(|l| l.no),
        skipped_cascades: Vec::new(),
        pid: c.pid,
        time: c.time,
        evidence: Evidence {
            rule: Cow::Borrowed(c.rule),
            lines: ev_lines,
            wrapper_line: c.wrapper_line,
        },
        phase: None,
        context: Vec::new(),
        user_frame,
        scope: c
            .scope
            .into_iter()
            .map(|(no, t)| (no, t.into_owned()))
            .collect(),
        frames: c.frames,
    }
}

/// The first causal error of a whole text (lines split on `\n`). Never panics.
///
/// ```
/// use npgx_parsers::causal::{first_causal_error, Shape};
/// let text = b"[rank6]: [ERROR] (PID:360123, Device:6, RankID:6) ERR01100 OPS call acl api failed.\n[rank6]: AclNN_Runtime_Error(EZ9903): InitTilingParseCtx failed\n";
/// let c = first_causal_error(text).unwrap();
/// assert_eq!((c.line, c.shape), (2, Shape::CannReport));
/// ```
pub fn first_causal_error(text: &[u8]) -> Option<CausalError> {
    let mut s = CausalScanner::new();
    let mut no = 0u64;
    let mut rest = text;
    while !rest.is_empty() {
        let end = memchr::memchr(b'\n', rest).unwrap_or(rest.len());
        no += 1;
        let line = &rest[..end];
        s.push(no, line.strip_suffix(b"\r").unwrap_or(line));
        rest = rest.get(end + 1..).unwrap_or(&[]);
    }
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::{CauseKind, Phase};

    fn first(text: &str) -> CausalError {
        first_causal_error(text.as_bytes()).expect("a causal error")
    }

    // A C or C++ program's failed assertion (glibc's `__assert_fail`, ggml's `ggml_abort`
    // formats) is what the abort after it reports; the words alone are not one.
    #[test]
    fn a_failed_c_assertion_is_the_cause_of_the_abort() {
        for text in [
            "loading\nmain: src/model.c:42: load_model: Assertion `n > 0' failed.\nAborted (core dumped)\n",
            "loading\nmain: model.c:42: load: Assertion 'n > 0' failed.\nAborted (core dumped)\n",
            "warming up\n/src/ggml-cann/aclnn_ops.cpp:3007: GGML_ASSERT(n_dims == src0->ne[0]) failed\nAborted (core dumped)\n",
        ] {
            let c = first(text);
            assert_eq!((c.line, c.tier, c.rank), (2, Tier::Strong, CauseRank::ErrorReport), "{text}");
            assert_eq!(&*c.evidence.rule, "process.assertion-failed");
        }
        for text in [
            "x\nthe Assertion `n' failed on input\nAborted (core dumped)\n",
            "x\nGGML_ASSERT(n) failed\nAborted (core dumped)\n",
            "x\nmain: m.c:4: f: Assertion `n > 0' failed; retrying\nAborted (core dumped)\n",
        ] {
            assert_ne!(
                &*first(text).evidence.rule,
                "process.assertion-failed",
                "{text}"
            );
        }
    }

    // Wider-world batch 37: a long function signature wraps glibc's message (`PROGRAM: FILE:LINE:
    // FUNCTION: Assertion …`), and `Assertion `expr' failed.` stands on its own line under the
    // head that names the source; a compiler's source (MLIR's, LLVM's) places the assertion in a
    // compilation, other sources do not.
    #[test]
    fn a_wrapped_assertion_is_read_with_the_source_its_head_names() {
        for (head, token) in [
            ("python3: /root/llvm-project/mlir/include/mlir/IR/UseDefLists.h:198: mlir::IRObjectWithUseList<OperandType>::~IRObjectWithUseList()", "include/mlir/"),
            (".../mlir/IR/UseDefLists.h:198: mlir::IRObjectWithUseList<OperandType>::~IRObjectWithUseList()", "mlir/ir/"),
        ] {
            let wrapped = format!("2. stderr:\n{head}\n  [with OperandType = mlir::BlockOperand]:\n  Assertion `use_empty() && \"Cannot destroy a value that still has uses!\"' failed.\nnote: Pipeline failed while executing\n");
            let c = first(&wrapped);
            assert_eq!((c.line, &*c.evidence.rule), (4, "process.assertion-failed"));
            assert_eq!(c.evidence.lines, vec![2, 3, 4]);
            let p = c.phase.expect("a phase");
            assert_eq!(
                (p.phase, &*p.rule, p.token.as_str()),
                (Phase::Compile, "phase.assert-source", token)
            );
        }
        // LLVM's cast check on one line.
        let cast = "python3: /src/llvm-project/llvm/include/llvm/Support/Casting.h:566: decltype(auto) llvm::cast(From&): Assertion `isa<To>(Val) && \"cast<Ty>() argument of incompatible type!\"' failed.\n";
        let p = first(cast).phase.expect("a phase");
        assert_eq!(
            (p.phase, p.token.as_str()),
            (Phase::Compile, "include/llvm/")
        );
        // Under a compiler's wrapper exception with an empty message, the wrapped assertion is
        // the error, read with its head; the wrapper its evidence.
        let under = "triton.compiler.errors.MLIRCompilationError: \npython3: /x/mlir/lib/IR/Block.cpp:9: void f():\n  Assertion `ok' failed.\n";
        let c = first(under);
        assert_eq!((c.line, c.evidence.wrapper_line), (3, Some(1)));
        assert_eq!(c.phase.map(|p| p.token), Some("mlir/lib/".to_string()));
        // A program's own source (a folder that happens to be called llvm included) says no
        // phase; a head more than three lines up, across a blank line, or above a line that does
        // not end as the function does (`:`), is not read.
        for text in [
            "main: src/model.c:42: load_model: Assertion `n > 0' failed.\n",
            "main: /home/alice/llvm/toy/src/model.c:42: load: Assertion `n > 0' failed.\n",
            "/x/mlir/lib/a.h:9: f():\n\n  Assertion `n' failed.\n",
            "/x/mlir/lib/a.h:9: f()\na\nb\nc:\n  Assertion `n' failed.\n",
            "/x/mlir/lib/a.h:9: f():\nother text\n  Assertion `n' failed.\n",
        ] {
            let c = first(text);
            assert_eq!(&*c.evidence.rule, "process.assertion-failed", "{text}");
            assert!(
                c.phase.is_none_or(|p| &*p.rule != "phase.assert-source"),
                "{text}"
            );
        }
    }

    // Wider-world batch 37: a compiler's wrapper exception printed with an empty message has its
    // message on the next line (`MLIRCompilationError: ` over its stage's line): that line is
    // cited. A banner is skipped; a diagnostic in the block still wins; other exceptions keep
    // their own line (a bare type name has no message at all).
    #[test]
    fn an_exception_with_an_empty_message_cites_its_next_line() {
        let stage = "Traceback (most recent call last):\n  File \"a.py\", line 3, in <module>\ntriton.compiler.errors.MLIRCompilationError:\n[ConvertTritonIRToLinalgIR] encounters error: PassManager::run failed\n";
        let c = first(stage);
        assert_eq!(c.line, 4);
        assert!(
            c.message
                .starts_with("triton.compiler.errors.MLIRCompilationError: [Convert"),
            "{}",
            c.message
        );
        let banner = "triton.compiler.errors.MLIRCompilationError: \n///------------------[ERROR][Triton][BEG]------------------\n[ConvertLinalgIRToBinary] encounters error: PassManager::run failed\n";
        assert_eq!(first(banner).line, 3);
        let diagnostic = "triton.compiler.errors.MLIRCompilationError: \n[ConvertLinalgIRToBinary] encounters error:\nloc(\"k.mlir\":3:3): error: ub overflow, requires 2097152 bits\n";
        assert_eq!(first(diagnostic).line, 3);
        for text in [
            "ValueError: bad\nmore about it\n",
            "AssertionError\nException raised from ProcessGroupHCCL destructor, terminating with 3 pending work items\n",
            "RuntimeError: \n[W compiler_depend.ts:133] Warning: something (function f)\n",
            "KeyboardInterrupt\nException ignored in: <module 'threading'>\n",
        ] {
            assert_eq!(first(text).line, 1, "{text}");
        }
    }

    // Wider-world batch 38: an issue's title (a Markdown heading) that restates the error its body
    // shows as printed gives way to the body's line; a title the body does not restate stays.
    #[test]
    fn a_title_that_restates_the_body_gives_way_to_it() {
        let loader = "# hami 适配 Ascend 910B 进容器执行 npu-smi 报错libraries: libc_sec.so: cannot open shared object file: No such file or directory\n\n运行了demo-nginx，进容器执行npu-smi info\n报错\nnpu-smi: error while loading shared libraries: libc_sec.so: cannot open shared object file: No such file or directory\n";
        assert_eq!(first(loader).line, 5);
        let dcmi = "# Huawei Ascend910B4 vnpu: “DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3) dcmi module initialize failed. ret is -8005”\n\nIn the vnpu instance, the following error occurred: \"DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi module initialize failed. ret is -8005\".\n";
        assert_eq!(first(dcmi).line, 4);
        // The body's traceback cut before its exception: the title stays.
        let cut = "# [Bug]: RuntimeError: HCCL function error: HcclCommInitRootInfo(numRanks, &rootInfo)\n\nTraceback (most recent call last):\n  File \"/w/grpo.py\", line 198, in main\n";
        assert_eq!(first(cut).line, 1);
        // A short title restated whole; a cascade below the title, or a line that shares only
        // a path with it, does not take its place.
        let short =
            "# NPU out of memory\n\nRuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\n";
        assert_eq!(first(short).line, 3);
        let path = "# 编译报错 libc_sec.so: cannot open shared object file，路径 /usr/local/Ascend/ascend-toolkit/latest/lib64\n\nmake[2]: *** [CMakeFiles/app.dir/build.make:97: /usr/local/Ascend/ascend-toolkit/latest/lib64/app] Error 1\n";
        assert_eq!(first(path).line, 1);
        assert!(restates(
            "npu-smi fails: the library libc_sec.so cannot be opened at all",
            "error: the library libc_sec.so cannot be opened at all (errno 2)"
        ));
        assert!(!restates(
            "see /usr/local/ascend/ascend-toolkit/latest/lib64 now",
            "at /usr/local/ascend/ascend-toolkit/latest/lib64/x"
        ));
        assert!(!restates("title", "short"));
    }

    // Wider-world batch 38: GNU ld's warning that a needed library was not found is the cause of
    // the undefined references after it; alone, it is a warning.
    #[test]
    fn a_needed_library_not_found_is_why_the_references_are_undefined() {
        let link = "[100%] Linking CXX executable main\n/usr/bin/ld: warning: libdevmm.so, needed by /usr/local/Ascend/acllib/lib64/libruntime.so, not found (try using -rpath or -rpath-link)\n/usr/local/Ascend/acllib/lib64/libascendcl.so: undefined reference to `ProfMgrStop(void*)'\ncollect2: error: ld returned 1 exit status\n";
        let c = first(link);
        assert_eq!((c.line, &*c.evidence.rule), (2, "linker.error"));
        // Parallel make jobs interleave: the references first, the warning after them.
        let interleaved = "/x/libascendcl.so: undefined reference to `ProfMgrStop(void*)'\ncollect2: error: ld returned 1 exit status\nmake[2]: *** [app] Error 1\n/usr/bin/ld: warning: libdevmm.so, needed by /x/libruntime.so, not found (try using -rpath or -rpath-link)\n/x/libruntime.so: undefined reference to `drvStreamIdAlloc'\n";
        let c = first(interleaved);
        assert_eq!((c.line, &*c.evidence.rule), (4, "linker.error"));
        // A reference from the program's own object, or another link error, is not the missing
        // library's: it stays the cause.
        let own = "/usr/bin/ld: warning: libascend_hal.so, needed by /x/libruntime.so, not found (try using -rpath or -rpath-link)\nmain.cpp:(.text+0x1c): undefined reference to `aclnnMyCustomOp'\n";
        assert_eq!(first(own).line, 2);
        let lib = "/usr/bin/ld: warning: libascend_hal.so, needed by /x/libruntime.so, not found (try using -rpath or -rpath-link)\n/usr/bin/ld: cannot find -lcust_opapi\n";
        assert_eq!(first(lib).line, 2);
        let alone = "/usr/bin/ld: warning: libdevmm.so, needed by libruntime.so, not found (try using -rpath or -rpath-link)\n[100%] Built target main\n";
        assert!(first_causal_error(alone.as_bytes())
            .is_none_or(|c| c.line != 1 || c.tier != Tier::Strong));
    }

    // Wider-world batch 38: a worker that died unexpectedly after a segfault handler's banner
    // (tvm-ffi's under vLLM) died of that segfault: the banner is cited; without one, the death.
    #[test]
    fn a_worker_that_died_after_a_segfault_died_of_it() {
        let text = "[Worker_TP2 pid=492] [2026-09-15 10:08:00] [WARNING] [492] profiler.py: Stop profiler while current state is RECORD\n!!!!!!! Segfault encountered !!!!!!!!!\n\n(EngineCore pid=457) ERROR 09-15 10:08:03 [multiproc_executor.py:284] Worker proc VllmWorker-0 died unexpectedly (exit code: None), shutting down executor.\n";
        assert_eq!(first(text).line, 2);
        let alone = "(EngineCore pid=457) ERROR 09-15 10:08:03 [multiproc_executor.py:284] Worker proc VllmWorker-0 died unexpectedly (exit code: None), shutting down executor.\n";
        assert_eq!(first(alone).line, 1);
        // An abort far above it, or a worker killed (-9: nothing printed in the worker), is not
        // its cause.
        let far = format!(
            "$ npu-smi info\nSegmentation fault (core dumped)\n{}{alone}",
            "INFO serving\n".repeat(45)
        );
        assert_eq!(first(&far).line, 48);
        let killed = "Segmentation fault (core dumped)\n(EngineCore pid=457) ERROR 09-15 10:08:03 [multiproc_executor.py:284] Worker proc VllmWorker-2 died unexpectedly (exit code: -9), shutting down executor.\n";
        assert_eq!(first(killed).line, 2);
    }

    // Wider-world batch 38: a case llama.cpp's operator test failed is the first failing case's
    // line; an `OK` case, or the words elsewhere, are not.
    #[test]
    fn a_failed_operator_test_case_is_cited() {
        let text = "  MUL_MAT(type_a=f16,type_b=f16,m=16,n=16,k=256,bs=[10,10],nr=[2,2]): OK\n  MUL_MAT(type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[1,1],nr=[1,1]): [MUL_MAT] NMSE = 0.000952909 > 0.000500000 FAIL\n  MUL_MAT(type_a=q8_0,type_b=f32,m=16,n=1,k=256,bs=[10,1],nr=[1,1]): [MUL_MAT] NMSE = 0.001953495 > 0.000500000 FAIL\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (2, "test.backend-ops-failed"));
        let coloured = "  MUL_MAT(type_a=q8_0,type_b=f32): [MUL_MAT] NMSE = 0.000952909 > 0.000500000 \x1b[1;31mFAIL\x1b[0m\n";
        assert_eq!(&*first(coloured).evidence.rule, "test.backend-ops-failed");
        for not in [
            "  ADD(type=f32): OK\n",
            "the test said NMSE = 0.1 > 0.01 FAIL once\n",
            "[MUL_MAT] NMSE = 0.0001 < 0.0005 FAIL\n",
        ] {
            assert!(
                first_causal_error(not.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "test.backend-ops-failed"),
                "{not}"
            );
        }
    }

    // Wider-world batch 37: an installer that found no release (pip's two lines, uv's resolver
    // report) is an environment fault; uv's explanation, wrapped, is the line cited and its whole
    // sentence the message; one in which a package states a requirement is a conflict.
    #[test]
    fn an_installer_that_found_no_release_is_an_environment_fault() {
        let uv = "pip install triton-ascend\n  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of triton-ascend==3.2.1 and you require triton-ascend==3.2.1, we can\n      conclude that your requirements are unsatisfiable.\n\nnext\n";
        let c = first(uv);
        assert_eq!((c.line, &*c.evidence.rule), (3, "installer.unresolved"));
        assert_eq!(c.evidence.lines, vec![2, 3, 4]);
        assert!(
            c.message
                .contains("we can conclude that your requirements are unsatisfiable."),
            "{}",
            c.message
        );
        let p = c.phase.expect("a phase");
        assert_eq!(
            (p.phase, p.token.as_str()),
            (Phase::Environment, "installer.unresolved")
        );
        let conflict = "  × No solution found when resolving dependencies:\n  ╰─▶ Because torch-npu==2.5.1 depends on torch==2.5.1 and you require torch==2.6.0, we can\n      conclude that your requirements are unsatisfiable.\n";
        let c = first(conflict);
        assert_eq!((c.line, &*c.evidence.rule), (2, "pip.conflict"));
        let pip = "Looking in indexes: https://pypi.org/simple\nERROR: Could not find a version that satisfies the requirement torch-npu==9.9 (from versions: 2.1.0)\nERROR: No matching distribution found for torch-npu==9.9\n";
        let c = first(pip);
        assert_eq!((c.line, &*c.evidence.rule), (2, "installer.unresolved"));
        assert_eq!(c.evidence.lines, vec![2, 3]);
        let alone = "ERROR: No matching distribution found for torch-npu==9.9\n";
        assert_eq!(&*first(alone).evidence.rule, "installer.unresolved");
        let old_uv = "error: Because there are no versions of x and you require x, we can conclude that the requirements are unsatisfiable.\n";
        assert_eq!(&*first(old_uv).evidence.rule, "installer.unresolved");
        // The header alone is cited; the explanation's words without uv's header or pip's prefix
        // are no installer's report.
        assert_eq!(
            first("× No solution found when resolving dependencies:\n").line,
            1
        );
        for text in [
            "Because there is no version of x, we can conclude that it fails.\n",
            "note: Could not find a version that satisfies the requirement x\n",
        ] {
            assert!(
                first_causal_error(text.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "installer.unresolved"),
                "{text}"
            );
        }
    }

    // LLVM's fatal error (`report_fatal_error`: `LLVM ERROR: <reason>`) is the compiler's own
    // reason, on its own or in the message of the exception raised around it; the words
    // elsewhere in a line, or with no reason, are not.
    #[test]
    fn an_llvm_fatal_error_is_the_reason_under_its_wrapper() {
        let alone = "compiling kernel\nLLVM ERROR: Cannot select: intrinsic %llvm.x\nAborted (core dumped)\n";
        let c = first(alone);
        assert_eq!(
            (c.line, c.tier, c.rank),
            (2, Tier::Strong, CauseRank::ErrorReport)
        );
        assert_eq!(&*c.evidence.rule, "process.llvm-fatal-error");
        let wrapped = "triton.compiler.errors.MLIRCompilationError:\n[ConvertLinalgRToBinary] encounters error:\nLLVM ERROR: The buffer memory has been released and cannot be used again!\n";
        let c = first(wrapped);
        assert_eq!((c.line, &*c.evidence.rule), (3, "process.llvm-fatal-error"));
        assert_eq!(c.evidence.wrapper_line, Some(1));
        let assertion = "triton.compiler.errors.MLIRCompilationError:\nbishengir: a.cc:4: f: Assertion `n > 0' failed.\n";
        let c = first(assertion);
        assert_eq!((c.line, &*c.evidence.rule), (2, "process.assertion-failed"));
        for text in [
            "x\nLLVM ERROR:\nAborted (core dumped)\n",
            "x\nLLVM ERROR:   \nAborted (core dumped)\n",
            "x\nthe log said LLVM ERROR: out of memory once\nAborted (core dumped)\n",
        ] {
            assert!(
                first_causal_error(text.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "process.llvm-fatal-error"),
                "{text}"
            );
        }
    }

    // MindSpore prints what failed in a section under its exception: the section's line is the
    // error, the exception its summary; another section (the C++ call stack) changes nothing.
    #[test]
    fn a_mindspore_exception_over_the_section_that_says_what_failed() {
        let ruler = "----------------------------------------------------";
        let exception = "RuntimeError: Unsupported device target Ascend. This process only supports one of the ['CPU']. Please check whether the Ascend environment is installed.\n\n";
        let load = format!("{ruler}\n- Device load error message:\n{ruler}\nLoad dynamic library: libmindspore_ascend.so.2 failed. libge_runner.so: cannot open shared object file: No such file or directory\n\n");
        let stack = format!("{ruler}\n- C++ Call Stack: (For framework developers)\n{ruler}\nmindspore/core/utils/ms_context.cc:327 SetDeviceTargetFromInner\n");
        let c = first(&format!("{exception}{load}{stack}"));
        assert_eq!((c.line, &*c.evidence.rule), (6, "environment.line"));
        let c = first(&format!("{exception}{stack}"));
        assert_eq!((c.line, &*c.evidence.rule), (1, "python.exception"));
        let report = format!("{ruler}\n- Ascend Error Message:\n{ruler}\nEL0004: [PID: 7] 2025-02-14-20:17:36.716.067 Failed to allocate memory.\n        Possible Cause: Available memory is insufficient.\n");
        let c = first(&format!(
            "RuntimeError: The pointer[device_address] is null.\n\n{report}"
        ));
        assert_eq!((c.line, &*c.evidence.rule), (6, "cann.report"));
    }

    // A report's message broken after a comma is cited on its next line, and a location alone
    // under it is no item of its own: the message is the report's (wider-world batch 24).
    #[test]
    fn a_report_message_broken_after_a_comma() {
        let c = first("RuntimeError: call aclnnRotaryPositionEmbedding failed, error code is 561002\nE89999: Inner Error!\nE89999[PID: 1] 2026-04-01-13:43:00.810.813 (E89999):  op[RotaryPositionEmbedding],\nwhen input is BNSD layout, please do not use RotaryPositionEmbedding fusion operator.\n[FUNC:DoRotateHalfTiling][FILE:rope_rotate_half_tiling.cpp][LINE:498]\n");
        assert_eq!((c.line, &*c.evidence.rule), (4, "cann.report"));
        assert!(
            c.message
                .starts_with("E89999: op[RotaryPositionEmbedding],"),
            "{}",
            c.message
        );
        assert!(c.message.ends_with("fusion operator."), "{}", c.message);
    }

    // Under an external code whose message says only that something failed, the TraceBack item
    // that states why is cited (wider-world batch 25); a message that says why keeps its head.
    #[test]
    fn a_head_that_only_says_it_failed() {
        let report = |head: &str| {
            format!("RuntimeError: call aclnnPromptFlashAttentionV3 failed, detail:EZ1001: [PID: 3] 2025-02-11-11:32:58.201.638 {head}\n        TraceBack (most recent call last):\n        Cannot find bin of op PromptFlashAttention, integral key 0/1/|bf16/ND/.\n        Kernel GetWorkspace failed. opType: 5\n")
        };
        let c = first(&report("PromptFlashAttention LaunchAicore failed."));
        assert_eq!((c.line, &*c.evidence.rule), (3, "cann.report"));
        let c = first(&report(
            "PromptFlashAttention LaunchAicore failed, the shape [2, 3] is invalid.",
        ));
        assert_eq!((c.line, &*c.evidence.rule), (1, "cann.report"));
    }

    // A TraceBack that shows the tiling failed: the tiling function's refusal is cited over the
    // head's blockDim 0, which launching an untiled kernel gives (wider-world batch 26).
    #[test]
    fn a_tiling_refusal_under_a_launch_error() {
        let text = "[PID: 312701] 2026-07-04-17:27:10.618.062 Invalid_Argument(EE1003): LaunchKernelV2 failed because value 0 for parameter blockDim is invalid. Expected value: not equal to 0.\n        Solution: 1.Check the input parameter range of the function.\n        TraceBack (most recent call last):\n        unsupported inputLayout , expect BSND/TND/BNSD/NTD[FUNC:CausalConv1dBwdTilingFunc][FILE:causal_conv1d_bwd_tiling.cpp][LINE:100]\n        CausalConv1dBwd do tiling failed, ret is -1.\n        Check NnopbaseExecutorDoTiling(executor) failed\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (4, "cann.report"));
        // A head about something else keeps its line (EL0004's allocation failure).
        let alloc = text.replace("LaunchKernelV2 failed because value 0 for parameter blockDim is invalid. Expected value: not equal to 0.", "Memory_Allocation_Failure(EL0004): Failed to allocate memory.").replace("Invalid_Argument(EE1003): ", "");
        assert_eq!(first(&alloc).line, 1);
        // Without the tiling's failure, the head that states its cause stays cited.
        let c = first(
            &text
                .replace("        CausalConv1dBwd do tiling failed, ret is -1.\n", "")
                .replace("TilingFunc", "Func"),
        );
        assert_eq!(c.line, 1);
    }

    // A CMake error that says a git step failed, after git's `fatal:` line: git's line is cited;
    // git's complaints before an error about something else are not (wider-world batch 26).
    #[test]
    fn git_fatal_before_a_cmake_submodule_error() {
        let text = "-- Run 'git submodule update --init Paddle' in /x/PaddleCustomDevice-develop\nfatal: not a git repository (or any parent up to mount point /home/ma-user)\nStopping at filesystem boundary (GIT_DISCOVERY_ACROSS_FILESYSTEM not set).\nCMake Error at cmake/paddle.cmake:72 (message):\n  Failed to get submodule Paddle', please check your network !\nCall Stack (most recent call first):\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (2, "cmake.error"));
        assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
        let other = text.replace(
            "Failed to get submodule Paddle', please check your network !",
            "Could not find a package configuration file provided by \"ascendc\"",
        );
        assert_eq!(first(&other).line, 5);
        // `gitee` is not git; a `fatal:` more than ten lines above is another step's.
        let gitee = text.replace(
            "Failed to get submodule Paddle', please check your network !",
            "Failed to download https://gitee.com/mirrors/json/x.tar.gz",
        );
        assert_eq!(first(&gitee).line, 5);
        let far = text.replace(
            "Stopping at",
            &format!("{}Stopping at", "-- step\n".repeat(10)),
        );
        assert_eq!(
            (first(&far).line, &*first(&far).evidence.rule),
            (15, "cmake.error")
        );
        // The header keeps the phase's token; the cited line comes first in the evidence.
        assert_eq!(c.phase.as_ref().map(|p| p.line), Some(4));
        assert_eq!(c.evidence.lines.first(), Some(&2));
    }

    // torch_npu's hint and the CANN report after it are one failure even where the paste lost
    // the hint's indented second line; the report is cited when its TraceBack states the device
    // fault (a launch `return: 507015` over `The error from device(…) … aivector error`), the
    // hint when the report only says the launch failed.
    #[test]
    fn a_hint_over_a_report_whose_traceback_states_the_device_fault() {
        let report = "[PID: 47745] 2026-07-21-14:15:02.161.605 AclNN_Runtime_Error(EZ9903): aclrtLaunchKernelWithHostArgs failed, return: 507015\nSolution: In this scenario, collect the plog.\nTraceBack (most recent call last):\n";
        let device = "The error from device(chipId:3, dieId:1), serial number is 3, there is an exception of fftsplus aivector error, core id is 0, error code = 0x800000[FUNC:PrintCoreInfo][FILE:device_error_core_proc.cc][LINE:645]\n";
        let launch = "rtKernelLaunch failed[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]\n";
        let hint = "[ERROR] 2026-07-21-14:15:02 (PID:47745, Device:7, RankID:-1) ERR00100 PTA call acl api failed\n[Error]: The aicore execution is abnormal.\n";
        for second in [
            "Rectify the fault based on the error information in the ascend log.\n",
            "        Rectify the fault based on the error information in the ascend log.\n",
        ] {
            let c = first(&format!("{hint}{second}{report}{device}"));
            assert_eq!((c.line, c.rank), (4, CauseRank::DeviceFault), "{second}");
            let c = first(&format!("{hint}{second}{report}{launch}"));
            assert_eq!(
                (c.line, &*c.evidence.rule),
                (2, "torch-npu.hint+cann.report")
            );
        }
        // A wait on the device in the TraceBack is no fault of the device's (a peer stalled).
        let wait = "The error from device(chipId:5, dieId:0), serial number is 4, event wait timeout occurred during task execution, stream_id:6[FUNC:F][FILE:f.cc][LINE:1]\n";
        let notify = "Notify wait execute failed, device_id=1, stream_id=14[FUNC:GetError][FILE:stream.cc][LINE:921]\n";
        for item in [wait, notify] {
            let c = first(&format!("{report}{item}"));
            assert_eq!((c.line, c.rank), (1, CauseRank::ErrorReport), "{item}");
        }
        let c = first(&format!("{report}{device}"));
        assert_eq!((c.line, c.rank), (1, CauseRank::DeviceFault));
    }

    // A runtime error number names a failure whatever prints it: a glog `E` record opening with
    // it in brackets (the MindX SDK), a program's own `… ret 107000` at no level (before the
    // error records without a number that follow). `ret 0`, a number out of the runtime's
    // ranges or an INFO record are no candidates.
    #[test]
    fn runtime_error_numbers_in_glog_records_and_bare_returns() {
        let glog = "I20231116 09:50:40.316920  2326 FileUtils.cpp:330] The input file is empty\nE20231116 09:50:41.157967  2326 MxOmModelDesc.cpp:855] [507011][Error code unknown] Failed to model infer execute, details seen in CANN document.\nE20231116 09:50:41.158447  2326 MxOmModelDesc.cpp:129] Model Infer failed.\n";
        let c = first(glog);
        assert_eq!((c.line, c.rank), (2, CauseRank::ErrorReport));
        assert_eq!(&*c.evidence.rule, "logger.error-record");
        // The glog form as TORCH_LOGS writes it, at an error level, is an error record too.
        let torch_logs = "E0101 10:00:00.000000 123 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 5) of binary: /usr/bin/python\n";
        assert_eq!(&*first(torch_logs).evidence.rule, "logger.error-record");
        let ret = "LaunchKernel aiv ret 107000\n\n[FATAL]  Acl return error a/attention.cc:140, with ERROR 561103\n";
        let c = first(ret);
        assert_eq!(
            (c.line, c.tier, c.rank),
            (1, Tier::Cascade, CauseRank::ErrorReport)
        );
        assert_eq!(&*c.evidence.rule, "runtime.error-number");
        // Registering a kernel binary that the runtime refuses is an environment line
        // (wider-world batches 26 and 27: a build for another chip or CANN release).
        let c = first(&ret.replace("LaunchKernel", "RegisterAscendBinary"));
        assert_eq!((c.line, &*c.evidence.rule), (1, "environment.line"));
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // Each before the same later record: the record, not the line, is cited.
        for line in [
            "RegisterAscendBinary aiv ret 0",
            "RegisterAscendBinary aiv ret 123456",
            "INFO 01-01 10:00:00 [a.py:1] retry 1 of 3, ret 207001",
            "[2025-01-01 10:00:00,000] x.runtime: [INFO] retry 1 of 3, ret 207001",
            "I20231116 09:50:40.316920  2326 a.cpp:1] [507011] seen before, retrying",
            "[W1216 15:09:53.857638449 compiler_depend.ts:526] Warning: NPU warning, error code is 507015[Error]: ",
            "W NPUStream.cpp:409] Warning: NPU warning, error code is 507046[Error]:",
            "[W1216 15:09:53.857638449 a.cpp:1] aclrtFree ret 507015",
            "[2025-01-01 10:00:00,000] x.runtime: [WARNING] retry, ret 207001",
            "[WARN]  x ret 207001",
            "[INFO]  aclrtMalloc ret 207001, retrying with a smaller pool",
            "[107001] loss 2.3",
            "    check(acl_call(), ret 107000)",
        ] {
            let text = format!("{line}\n[FATAL]  Acl return error a.cc:1, with ERROR 561103\n");
            assert_eq!(first(&text).line, 2, "{text}");
        }
    }

    // A CANN runtime's device-fault message printed without its plog header, with its item
    // suffix, is the device's fault; a bare item that says something else is not picked up.
    #[test]
    fn a_bare_runtime_item_naming_a_device_fault_is_one() {
        let text = "Launch kernel failed: Bprop/Reshape-op1\n\nThe error from device(chipId:0, dieId:0), serial number is 3, an exception occurred during AICPU execution, stream_id:2, task_id:9, errcode:21008, msg:inner error.[FUNC:ProcessStarsAicpuErrorInfo][FILE:device_error_proc.cc][LINE:1232]\n\nkernel_actor.cc:917 ExecuteLaunchKernelTask\n";
        let c = first(text);
        assert_eq!(
            (c.line, c.tier, c.rank),
            (3, Tier::Strong, CauseRank::DeviceFault)
        );
        assert_eq!(&*c.evidence.rule, "cann.device-item");
        assert!(!c.message.contains("[FUNC:"), "{}", c.message);
        let other = "x\nSome step failed.[FUNC:Run][FILE:a.cc][LINE:9]\n";
        assert!(first_causal_error(other.as_bytes())
            .is_none_or(|c| &*c.evidence.rule != "cann.device-item"));
    }

    #[test]
    fn the_user_frame_is_the_innermost_frame_outside_the_libraries() {
        // Above the exception: the model's line, under torch's module machinery.
        let above = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 40, in <module>\n    out = compiled(x)\n  File \"/home/u/model.py\", line 12, in forward\n    h = torch.relu(self.lin(x))\n  File \"/usr/lib/python3.11/site-packages/torch/nn/modules/module.py\", line 1773, in _call_impl\n    return forward_call(*args, **kwargs)\nRuntimeError: shape mismatch\n";
        let f = first(above).user_frame.expect("a user frame");
        assert_eq!(
            (f.file.as_str(), f.line, f.function.as_deref(), f.log_line),
            ("/home/u/model.py", 12, Some("forward"), 4)
        );
        // Dynamo's `from user code:` below the exception wins over the frames above it.
        let dynamo = "Traceback (most recent call last):\n  File \"/home/u/train.py\", line 40, in <module>\n    out = compiled(x)\n  File \"/opt/py/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py\", line 659, in _fn\n    raise e.with_traceback(None) from None\ntorch._dynamo.exc.Unsupported: Operator does not support running with fake tensors\n\nfrom user code:\n   File \"/home/u/model.py\", line 21, in forward\n    q = torch.ops._C.rotary_embedding(q, k)\n";
        let c = first(dynamo);
        assert_eq!(c.line, 6);
        let f = c.user_frame.expect("the user code frame");
        assert_eq!(
            (f.file.as_str(), f.line, f.log_line),
            ("/home/u/model.py", 21, 9)
        );
        // Only library frames: none.
        let lib = "Traceback (most recent call last):\n  File \"/x/site-packages/torch/a.py\", line 1, in f\n    g()\nValueError: bad\n";
        assert_eq!(first(lib).user_frame, None);
    }

    // Class 1: decorated pastes — quotes (with lazy continuation), fences, a paste indented as
    // a whole, excerpt-gap markers and logger prefixes leave the line numbers and the error alone.
    #[test]
    fn decorated_pastes() {
        let plain = "Traceback (most recent call last):\n  File \"m.py\", line 3, in f\n    g()\nValueError: bad value\n";
        assert_eq!(first(plain).line, 4);
        let quoted = "> Traceback (most recent call last):\n  File \"m.py\", line 3, in f\n    g()\nValueError: bad value\n";
        assert_eq!(first(quoted).line, 4);
        let fenced = format!("```\n{plain}```\n");
        assert_eq!(first(&fenced).line, 5);
        let indented: String = plain.lines().map(|l| format!("  {l}\n")).collect();
        let c = first(&indented);
        assert_eq!((c.line, c.shape), (4, Shape::PythonException));
        let gap = "[... excerpt gap ...]\nERROR 01-02 03:04:05 [core.py:9] ValueError: bad value\n";
        let c = first(gap);
        assert_eq!((c.line, c.message.as_str()), (2, "ValueError: bad value"));
        let vllm = "(Worker pid=7) ERROR 01-02 03:04:05 [x.py:1] RuntimeError: y\n";
        assert_eq!(first(vllm).exception_type.as_deref(), Some("RuntimeError"));
    }

    // Class 2: graph-break reports. The first break reason is the cause.
    #[test]
    fn graph_break_reports() {
        let explain = "Graph Count: 3\nGraph Break Count: 2\nOp Count: 5\nBreak Reasons:\n  Break Reason 1:\n    Reason: first reason\n    User Stack:\n  Break Reason 2:\n    Reason: second reason\n";
        let c = first(explain);
        assert_eq!(
            (c.line, c.shape, c.tier),
            (6, Shape::GraphBreak, Tier::Signal)
        );
        assert_eq!(c.message, "first reason");
        let logs = "V0101 00:00:00.000000 1 torch/_dynamo/symbolic_convert.py:1] [0/0] [__graph_breaks] Graph break in user code at a.py:3\nV0101 00:00:00.000000 1 torch/_dynamo/symbolic_convert.py:1] [0/0] [__graph_breaks] Reason: Unsupported: builtin x\n";
        let c = first(logs);
        assert_eq!((c.line, &*c.evidence.rule), (2, "graph-break.reason"));
    }

    // Recompilations: the first guard failure, the header when failures are grouped per cache
    // entry, the `last reason` of a recompile-limit warning (its exception is a consequence).
    #[test]
    fn recompile_reasons() {
        let flat = "Recompiling function f in a.py:1\n    triggered by the following guard failure(s):\n    - x.size()[0] == 2\n";
        assert_eq!(first(flat).line, 3);
        let grouped = "Recompiling function f in a.py:1\n    triggered by the following guard failure(s):\n    guard 0 failures:\n    - x.size()[0] == 2\n";
        assert_eq!(first(grouped).line, 1);
        let limit = "W0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1] [0/8] torch._dynamo hit config.recompile_limit (8)\nW0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1] [0/8]    last reason: 0/7: x changed\n\ntorch._dynamo.exc.FailOnRecompileLimitHit: recompile_limit reached\n";
        let c = first(limit);
        assert_eq!((c.line, c.shape), (2, Shape::Recompile));
    }

    // Class 3: a glog W/E line carrying a traceback: the exception inside is the error.
    #[test]
    fn glog_warning_with_traceback() {
        let text = "W0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1] WON'T CONVERT f a.py line 3\nW0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1] Traceback (most recent call last):\nW0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1]   File \"a.py\", line 3, in f\nW0101 00:00:00.000000 1 torch/_dynamo/convert_frame.py:1] torch._dynamo.exc.Unsupported: call_method x\n";
        let c = first(text);
        assert_eq!((c.line, c.tier), (4, Tier::Strong));
        assert_eq!(
            c.exception_type.as_deref(),
            Some("torch._dynamo.exc.Unsupported")
        );
        // The same exception at debug level stays soft.
        let debug = text.replace("W0101", "V0101");
        assert_eq!(first(&debug).tier, Tier::Soft);
    }

    // Class 5: a Python exception that only names the C++ file, a torch_npu summary, then the
    // CANN report: the report is the cause and the wrapper is its evidence.
    #[test]
    fn wrapper_exception_then_cann_report() {
        let text = "RuntimeError: f():a/b.cpp:10 NPU function error: aclrtX, error code is 507035\n[ERROR] 2026-01-01-00:00:00 (PID:1, Device:0, RankID:-1) ERR00100 PTA call acl api failed.\nEE9999: Inner Error!\nEE9999[PID: 1] 2026-01-01-00:00:00.000.000 (EE9999):  the device failed[FUNC:F][FILE:f.cc][LINE:1]\n        TraceBack (most recent call last):\n        x failed[FUNC:G][FILE:g.cc][LINE:2]\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (4, Shape::CannReport));
        assert_eq!(c.evidence.wrapper_line, Some(1));
        assert_eq!(c.skipped_cascades, vec![1, 2]);
    }

    // An exception that raises what an error record just above it said: the record said it
    // first (OpenCV's logger, then `cv2.error`); an exception that says something else stays.
    #[test]
    fn an_error_record_the_exception_raises_is_the_error() {
        let text = "[ERROR:0@2.5] global net_x.cpp:9 compileGraph Graph check failed, ret = 7\nTraceback (most recent call last):\n  File \"b.py\", line 3, in <module>\n    net.forward()\ncv2.error: OpenCV(4.9.0) net_x.cpp:9: error: (-2:Unspecified error) Graph check failed in function 'compileGraph'\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (1, Shape::LoggingError));
        assert_eq!(c.evidence.wrapper_line, Some(5));
        let other = text.replace("Graph check failed in", "Model load failed in");
        assert_eq!(first(&other).shape, Shape::PythonException);
        // Two words at least: a one-word record is no clause to find, however long.
        let one_word = "[ERROR:0] global a.cpp:1 f Initialization_failed, ret = 1\nRuntimeError: Initialization_failed in f\n";
        assert_eq!(first(one_word).shape, Shape::PythonException);
        // A record the exception quotes whole says nothing more: the exception, with its detail.
        let quoted = "ERROR 05-01 10:00:00 [train.py:20] Model loading failed on rank 0\nRuntimeError: Model loading failed on rank 0: could not open /d/c.pt, file is truncated\n";
        assert_eq!(first(quoted).shape, Shape::PythonException);
        // Words, not a prefix of a longer word; a record that sends the reader elsewhere.
        let prefix = "[ERROR:0] global a.cpp:1 f Load failed on rank 1, ret = 3\nRuntimeError: Load failed on rank 12 in f\n";
        assert_eq!(first(prefix).shape, Shape::PythonException);
        let inside = "[ERROR:0] global a.cpp:1 f graph check failed, ret = 3\nRuntimeError: subgraph check failed in f\n";
        assert_eq!(first(inside).shape, Shape::PythonException);
        let elsewhere = "[ERROR:0] global a.cpp:1 f Worker failed; see above for the root cause\nRuntimeError: Worker failed with error 'x'\n";
        assert_eq!(first(elsewhere).shape, Shape::PythonException);
    }

    // Lines that state their cause by the knowledge table's rows, with nothing else to cite:
    // MindSpore's kernel selection, a missing npu-smi (a device plug-in's words, Go's exec).
    #[test]
    fn stated_causes_of_other_programs() {
        for (text, rule) in [
            ("CompileGraph failed: Can not find any available kernel info for: HSwish. Maybe the operator is not supported on Ascend platform.\n", "phrase.line"),
            ("npu-smi set device-share -i 1 -c 0 -d 1: npu-smi not found in [/usr/local/bin/npu-smi]\n", "environment.line"),
            ("failed to run: exec: \"npu-smi\": executable file not found in $PATH\n", "environment.line"),
            // Wider-world batch 31: a flag two builds define, a model type the installed
            // library lacks, a Ray worker that died.
            ("paddle flags error: illegal RegisterFlag, flag \"devices\" has been defined in /p/paddle/fluid/inference/io.cc (at /p/paddle/utils/flags_native.cc:301)\n", "environment.line"),
            ("ERROR: flag 'v' was defined more than once (in files 'a.cc' and 'b.cc').\n", "environment.line"),
            ("    The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits with a connection error code 2.\n", "phrase.line"),
            // Batch 36: more NPUs asked for than a node makes visible, quoted in a report.
            ("报错：please ensure that world_size (8) is less than than max local Ascend npu count (4)\n", "phrase.line"),
        ] {
            let c = first(text);
            assert_eq!((c.line, &*c.evidence.rule), (1, rule), "{text}");
        }
        // At INFO in Python logging's basic format, a probe's words are no cause: the error
        // below is the one.
        let probe = "INFO:root:libascend_hal.so: cannot open shared object file: No such file or directory\nRuntimeError: x.cpp:1 NPU function error: c10_npu::SetDevice(device), error code is 507033\n";
        assert_eq!(first(probe).line, 2);
        let error = probe.replacen("INFO:root:", "ERROR:root:", 1);
        assert_eq!(first(&error).line, 1);
    }

    // ONNX Runtime: the execution provider's record of the ACL call that failed, with its
    // number, over the Python exception that relays the node's failed status.
    #[test]
    fn an_execution_providers_failed_call_over_the_relayed_status() {
        let text = "2025-01-01 00:00:00.1 [E:onnxruntime:Default, cann_call.cc:1 CannCall] CANN failure 507011: ACL_ERROR_RT_X ; NPU=0 ; hostname=h ; expr=aclopCompileAndExecute(\"Add\", 2);\nTraceback (most recent call last):\n  File \"t.py\", line 5, in <module>\n    s.run(None, feeds)\nonnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : Non-zero status code returned while running Add node. Name:'a' Status Message: failed\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (1, Shape::LoggingError));
        assert_eq!(c.skipped_cascades, Vec::<u64>::new());
        // The relay alone stays what it is: the cited line, a cascade.
        let relay = text.lines().skip(1).collect::<Vec<_>>().join("\n");
        let c = first(&relay);
        assert_eq!((c.line, c.tier), (4, Tier::Cascade));
    }

    // Class 6: a kernel assertion printed before the host error report is the cause.
    #[test]
    fn kernel_assert_before_host_error() {
        let text = "[ERROR] IDEDD(1,p):2025-01-01-00:00:00.000.000 [dump_printf.cpp:1][tid:1] [ASSERT] k.h:3: Assertion `i < n' out of range\n[ERROR] RUNTIME(1,p):2025-01-01-00:00:00.000.100 [stream.cc:1]1 GetError:Stream Synchronize failed, stream_id=2, retCode=0x31, [vector core exception].\n";
        let c = first(text);
        assert_eq!(
            (c.line, c.shape, c.rank),
            (1, Shape::KernelAssert, CauseRank::DeviceFault)
        );
    }

    // Plog ranking inside the one ordering: a device fault beats an earlier plain error.
    #[test]
    fn device_fault_beats_earlier_error_record() {
        let text = "[ERROR] GE(1,p):2021-09-14-09:26:01.014.300 [a.cc:1]1 F:something failed\n[ERROR] RUNTIME(1,p):2021-09-14-09:26:01.014.355 [engine.cc:914]1 ReportExceptProc:Task exception! device_id=0\n";
        assert_eq!(first(text).line, 2);
    }

    // Issue 41, class 1: a compiler's error diagnostic is the cause; the lines that say a
    // pipeline, a stage or a tool failed are wrappers, printed before or after it. Lines written
    // from the formats (MLIR, clang, Triton-Ascend's error block), not copied from a sample.
    #[test]
    fn compiler_diagnostics_are_the_cause() {
        let triton = "Traceback (most recent call last):\n  File \"/x/triton/compiler/compiler.py\", line 297, in compile\n    raise MLIRCompilationError(stage_name, error_detail)\ntriton.compiler.errors.MLIRCompilationError: \n///------------------[ERROR][Triton][BEG]------------------\n[ConvertLinalgIRToBinary] encounters error:\nloc(\"/tmp/t/kernel.ttadapter.mlir\":3:3): error: ub overflow, requires 2097152 bits while 1572864 bits available!\nloc(\"/tmp/t/kernel.ttadapter.mlir\":1:1): error: Failed to run BiShengHIR pipeline\n///------------------[ERROR][Triton][END]------------------\n";
        let c = first(triton);
        assert_eq!(
            (c.line, c.shape, c.tier),
            (7, Shape::CompilerDiagnostic, Tier::Strong)
        );
        let p = c.phase.expect("a phase");
        assert_eq!(
            (p.phase, &*p.rule),
            (
                crate::knowledge::Phase::Compile,
                "shape.compiler-diagnostic"
            )
        );
        // The wrapper printed first, the diagnostic after it.
        let before = "[ERROR] Failed to run BiShengIR pipeline\nRuntimeError: Triton compilation failed: triton_k_0\n/src/k.cpp:24:10: error: use of undeclared identifier 'x'\n    y = x + 1;\n        ^\n1 error generated.\n";
        let c = first(before);
        assert_eq!((c.line, c.shape), (3, Shape::CompilerDiagnostic));
        assert_eq!(c.evidence.lines, vec![3, 4, 5]);
        // Warnings and notes are context, never the cause.
        let notes = "k.py:3:1: warning: unused\nk.py:4:2: note: see current operation\nValueError: bad block size\n";
        assert_eq!(first(notes).line, 3);
        // A subprocess that failed is a wrapper of what it printed.
        let sub = "subprocess.CalledProcessError: Command '['bishengir-compile', 'k.mlir']' returned non-zero exit status 1.\nloc(\"k.mlir\":9:2): error: 'hivm.load' op illegal\n";
        assert_eq!(first(sub).line, 2);
        // A tool's own error (LLVM's `<program>: error:` and option errors) inside the block of
        // an MLIRCompilationError with an empty message; an unknown --target value is a chip the
        // toolchain does not support.
        let tool = "triton.compiler.errors.MLIRCompilationError: \n///------------------[ERROR][Triton][BEG]------------------\n[ConvertLinalgIRToBinary] encounters error:\nbishengir-compile: for the --target option: Cannot find option named 'AscendX1'!\n///------------------[ERROR][Triton][END]------------------\n";
        let c = first(tool);
        assert_eq!((c.line, c.shape), (4, Shape::CompilerDiagnostic));
        let p = c.phase.expect("a phase");
        assert_eq!(p.kind, Some(crate::knowledge::CauseKind::Environment));
        let driver = "RuntimeError: Triton compilation failed: k\nclang: error: unsupported option '-mfoo'\n";
        assert_eq!(first(driver).line, 2);
        // Only frames inside a compiler: compile-phase evidence although the message is cut off.
        let frames = "Traceback (most recent call last):\n  File \"/x/triton/runtime/jit.py\", line 5, in run\n    kernel = self.compile(src)\n  File \"/x/triton/compiler/compiler.py\", line 297, in compile\n    next_module = compile_ir(module, metadata)\n";
        let p = first(frames).phase.expect("a phase");
        assert_eq!(
            (p.phase, &*p.rule),
            (crate::knowledge::Phase::Compile, "phase.frames")
        );
    }

    // A record a logger wrote at an error level names a line when nothing else does (a
    // serving framework's own words), and loses to any exception, report or wrapper. Lines
    // written from the loggers' formats (MindIE's documented LLM log format, vLLM's logger,
    // Ray's bracketed glog fields, absl's failure signal handler).
    #[test]
    fn error_records_of_service_loggers() {
        let mindie = "[2025-01-01 10:00:00.000001] [7] [8] [llm] [INFO] [a.cpp:1] started\n[2025-01-01 10:00:01.000001] [7] [8] [llm] [ERROR] [b.cpp:9] Failed to load the model config\n";
        let c = first(mindie);
        assert_eq!((c.line, &*c.evidence.rule), (2, "logger.error-record"));
        let vllm = "ERROR 01-01 10:00:00 [core.py:1] EngineCore failed to start.\nERROR 01-01 10:00:00 [core.py:1] Traceback (most recent call last):\nERROR 01-01 10:00:00 [core.py:1]   File \"x.py\", line 1, in f\nERROR 01-01 10:00:00 [core.py:1]     g()\nERROR 01-01 10:00:00 [core.py:1] ValueError: bad value\n";
        assert_eq!(first(vllm).line, 5);
        let info = "[2025-01-01 10:00:00,000] [7] [8] [llm] [INFO] [a.py-1] : Failed attempt 1, retrying\n";
        assert!(first_causal_error(info.as_bytes()).is_none());
        // A bare level tag with an error number ranks as a report: it beats the wrapper
        // exception that only restates the number; without one it is the last candidate.
        let bare = "[ERROR] [Bisheng] Kernel binary register failure! ret 107000\nTraceback (most recent call last):\n  File \"e.py\", line 1, in <module>\n    f()\nRuntimeError: f:x.cpp:1 NPU function error: g(), error code is 107000\n";
        let c = first(bare);
        assert_eq!(c.line, 1);
        // The binary the runtime refused to register: an environment line (batches 26, 27).
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        let acl = "[INFO]  acl init success\n[ERROR]  acl set device 0 failed, errorCode = 507033\n[ERROR]  sample init resource failed\n";
        let c = first(acl);
        assert_eq!(
            (c.line, c.message.as_str()),
            (2, "acl set device 0 failed, errorCode = 507033")
        );
        // A CMake header without its indented message is no CMake candidate.
        let bare_cmake = "CMake Error at a.cmake:1 (message):\nCall Stack (most recent call first):\n  b.cmake:2 (include)\n";
        assert!(first_causal_error(bare_cmake.as_bytes())
            .is_none_or(|c| &*c.evidence.rule != "cmake.error"));
        let ray = "(Actor pid=1)     @     0xffd0         96  f() [repeated 7x across cluster]\n(Actor pid=1) [2026-01-01 00:00:00,188 E 1 1] logging.cc:501: *** SIGSEGV received at time=1 on cpu 3 ***\n";
        let c = first(ray);
        assert_eq!((c.line, &*c.evidence.rule), (2, "process.abort"));
    }

    // A build's own errors: CMake's `CMake Error at …:` with its message on the indented lines
    // below (a `-- Warning: … faster …` status line above is no report), and pytest's `E` marker
    // in front of a compiler's diagnostic.
    #[test]
    fn build_and_test_runner_errors() {
        let cmake = "-- Warning: ccache not found - consider installing it for faster compilation\nCMake Error at /x/host_config.cmake:20 (message):\n  SOC_VERSION ascendx does not support, the support list is\n  ascend910b1;ascend910b2\nCall Stack (most recent call first):\n  /x/ascendc.cmake:3 (include)\n";
        let c = first(cmake);
        assert_eq!((c.line, &*c.evidence.rule), (3, "cmake.error"));
        // Batch 35: make's report that a recipe failed is the build's error when nothing above it
        // says more (a warning does not), a cascade under the compiler's error; LLVM's crash
        // report names the tool that crashed.
        let make = "x.cpp:64:56: warning: conversion from 'double' to 'float' changes value\n  make[3]: *** [CMakeFiles/g.dir/build.make:77: /b/autogen/p.cpp] Error 1\n  make[2]: *** [CMakeFiles/Makefile2:804: CMakeFiles/g.dir/all] Error 2\n  make[2]: *** Waiting for unfinished jobs....\n";
        let c = first(make);
        assert_eq!(
            (c.line, &*c.evidence.rule, c.tier),
            (2, "make.error", Tier::Cascade)
        );
        let p = c.phase.expect("a phase");
        assert_eq!((p.phase, &*p.rule), (Phase::Compile, "shape.build-failed"));
        // A target that is no build step (a test, a run) places no phase.
        let run = first("make: *** [test] Error 1\n");
        assert_eq!(
            (&*run.evidence.rule, run.phase.map(|p| p.phase)),
            ("make.error", None)
        );
        let under =
            "k.cc:3:5: error: 'x' was not declared in this scope\nmake: *** [all] Error 2\n";
        assert_eq!(first(under).line, 1);
        for not in [
            "make[2]: *** Waiting for unfinished jobs....",
            "remake: *** [x] Error 1",
            "make[x]: *** [y] Error 1",
            "make: *** [y] Error",
        ] {
            assert!(
                first_causal_error(not.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "make.error"),
                "{not}"
            );
        }
        let crash = "PLEASE submit a bug report\nStack dump:\n0.\tProgram arguments: /usr/local/Ascend/bin/bishengir-compile /tmp/k.mlir -o /tmp/k\n1.\tRunning pass 'x'\n";
        let c = first(crash);
        assert_eq!((c.line, &*c.evidence.rule), (3, "compiler.crash"));
        let p = c.phase.expect("a phase");
        assert_eq!(
            (p.phase, &*p.rule),
            (Phase::Compile, "shape.compiler-crash")
        );
        // The assertion that aborted it, above, is the cause; no arguments, no item.
        let assertion = format!("bishengir-compile: /src/Pass.cpp:12: void f(): Assertion `x && \"y\"' failed.\n{crash}");
        assert_eq!(first(&assertion).line, 1);
        for not in [
            "0.Program arguments:",
            "10.\tProgram arguments: x",
            "0. program arguments: x",
        ] {
            assert!(
                first_causal_error(not.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "compiler.crash"),
                "{not}"
            );
        }
        let pytest = "  subprocess.CalledProcessError: Command '['bishengir-compile', 'k.mlir']' returned non-zero exit status 1.\nE        loc(\"/tmp/m.mlir\":126:16): error: 'tensor.empty' op Unsupported op for finding the root alloc.\n";
        assert_eq!(first(pytest).line, 2);
    }

    // A build that stops before compiling: CMake's parse error (`at <file>:<line>:`, no
    // command) and GNU ld's own lines are the build environment's causes; the compiler driver's
    // `collect2: error: ld returned 1 exit status` only wraps the linker's.
    #[test]
    fn a_builds_configuration_and_link() {
        fn env(c: &CausalError) -> Option<(Phase, &str)> {
            c.phase.as_ref().map(|p| (p.phase, &*p.rule))
        }
        let parse = "-- Found X: /opt/x\nCMake Error at cmake/generic.cmake:1:\n  Parse error.  Expected a command name, got unquoted argument with text\n  \"../x.cmake\".\nCall Stack (most recent call first):\n  CMakeLists.txt:8 (include)\n\n-- Configuring incomplete, errors occurred!\n";
        let c = first(parse);
        assert_eq!((c.line, &*c.evidence.rule), (3, "cmake.error"));
        // The path CMake quotes after a blank line is in the message's scope.
        let include = "CMake Error at /a/ASCConfig.cmake:20 (include):\n  include could not find requested file:\n\n    /b/FindASC.cmake\nCall Stack (most recent call first):\n  CMakeLists.txt:3 (find_package)\n";
        let c = first(include);
        assert_eq!(c.line, 2);
        assert!(
            c.scope
                .iter()
                .any(|(n, t)| *n == 4 && t == "/b/FindASC.cmake"),
            "{:?}",
            c.scope
        );
        assert!(
            c.scope.iter().all(|(_, t)| !t.starts_with("Call Stack")),
            "{:?}",
            c.scope
        );
        assert_eq!(
            env(&c),
            Some((Phase::Environment, "shape.build-configuration"))
        );
        for (text, line) in [
            ("[ 50%] Linking CXX shared library libx.so\n/usr/bin/ld: cannot find -lhccl_x\ncollect2: error: ld returned 1 exit status\nmake[2]: *** [x.so] Error 1\n", 2),
            ("/usr/bin/ld: op.o: in function `run':\nop.cc:(.text+0x1a): undefined reference to `aclInit'\ncollect2: error: ld returned 1 exit status\n", 2),
        ] {
            let c = first(text);
            assert_eq!((c.line, &*c.evidence.rule, c.tier), (line, "linker.error", Tier::Strong), "{text}");
            assert_eq!(env(&c).map(|e| e.0), Some(Phase::Environment), "{text}");
        }
        // The driver's link line alone routes with the linker's, as a wrapper.
        let c = first("[ 50%] Linking CXX shared library libx.so\ncollect2: error: ld returned 1 exit status\nmake[2]: *** [x.so] Error 1\n");
        assert_eq!(
            (c.line, &*c.evidence.rule, c.tier),
            (2, "linker.error", Tier::Cascade)
        );
        assert_eq!(env(&c).map(|e| e.0), Some(Phase::Environment));
        // A compiler's own error stays a compile error.
        let c = first("k.cc:3:5: error: 'x' was not declared in this scope\ncollect2: error: ld returned 1 exit status\n");
        assert_eq!((c.line, env(&c).map(|e| e.0)), (1, Some(Phase::Compile)));
        // Wider-world batch 29: ld's line with its program cut from the paste; a toolkit's
        // header not found is the environment, the project's own stays the code's; clang's
        // syntax errors on the line of an unknown name follow from it.
        let c = first("cannot find -lnpu_hccl\ncollect2: error: ld returned 1 exit status\n");
        assert_eq!((c.line, &*c.evidence.rule), (1, "linker.error"));
        let c = first("/a/ops/k_tiling.h:16:10: fatal error: register/tilingdata_base.h: No such file or directory\n   16 | #include \"register/tilingdata_base.h\"\ncompilation terminated.\n");
        assert_eq!(env(&c), Some((Phase::Environment, "shape.missing-header")));
        let c = first("ort/core/providers/cann/f.h:7:10: fatal error: core/framework/fence.h: No such file or directory\n");
        assert_eq!(env(&c).map(|e| e.0), Some(Phase::Compile));
        let stumbled = "/tmp/k.cpp:111:41: error: unexpected type name 'half': expected expression\n    f::copy<half>(x);\n           ^\n/tmp/k.cpp:111:27: error: no member named 'copy' in namespace 'f'\n    f::copy<half>(x);\n    ~~~^\n";
        assert_eq!(first(stumbled).line, 4);
        // On another line, the first error stays the cause.
        let apart = stumbled.replace("k.cpp:111:27", "k.cpp:112:27");
        assert_eq!(first(&apart).line, 1);
    }

    // Wider-world batch 30: a TraceBack item that states an environment fault (no operator
    // information library supports the operator) is the cause under an inner report's head that
    // only says the graph's build failed.
    #[test]
    fn an_environment_item_under_a_failed_build() {
        let text = "E19999: Inner Error!\nE19999: [PID: 1] 2026-01-01-00:00:00.000.000 build graph failed, graph id:0, ret:-1[FUNC:BuildModelWithGraphId][FILE:ge_generator.cc][LINE:1615]\n        TraceBack (most recent call last):\n        No supported Ops kernel and engine are found for [Conv3D1], optype [Conv3D].\n";
        let c = first(text);
        assert_eq!(c.line, 4);
        assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
    }

    // Wider-world batch 29 (and batch 4's leftover): the driver's console print of a device
    // exception (`EXCEPTION STREAM:` … `Message info[0]:RTS_HWTS: aicore exception …`) is the
    // device fault the later `The Inner error is reported as above.` only says was raised.
    #[test]
    fn the_drivers_exception_stream_print() {
        let text = "DEVICE[0] PID[358]: \nEXCEPTION STREAM:\n  Exception info:TGID=1, model id=65535, stream id=3, stream phase=3\n  Message info[0]:RTS_HWTS: aicore exception, slot_id=31, stream_id=3\n    Other info[0]:time=2024-05-10-10:44:52.267.860, function=int_process_hwts_task_exception, line=296, error code=0x26\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    train()\nRuntimeError: The Inner error is reported as above.\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (4, "cann.exception-stream"));
        assert_eq!(
            c.phase.as_ref().and_then(|p| p.kind),
            Some(CauseKind::DeviceFault)
        );
        // The `EXCEPTION TASK:` print: its `Exception info:` names the task type that faulted
        // (an AICPU kernel), its `Message info[0]:` only fields.
        let task = "DEVICE[0] PID[44207]: \nEXCEPTION TASK:\n  Exception info:TGID=1134286, model id=65535, stream id=21, stream phase=SCHEDULE, task id=3377, task type=aicpu kernel, recently received task id=3377, recently send task id=3376, task phase=RUN\n  Message info[0]:aicpu=0,slot_id=0,report_mailbox_flag=0x5a5a5a5a,state=0x5210\n    Other info[0]:time=2024-06-19-23:19:23.004.854, function=proc_aicpu_task_done, line=970, error code=0x2a\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    main()\n";
        let c = first(task);
        assert_eq!((c.line, &*c.evidence.rule), (3, "cann.exception-task"));
        assert_eq!(
            c.phase.as_ref().and_then(|p| p.kind),
            Some(CauseKind::DeviceFault)
        );
        // Without a task type, a task type that is a number, or not the driver's fields, no item.
        let bare = "Exception info:TGID=1, model id=65535, stream id=3, stream phase=3\nException info: task type=aicpu kernel\nException info:TGID=1, stream id=3, task type=0x2, task phase=RUN\n";
        assert!(first_causal_error(bare.as_bytes()).is_none());
        // Not any `Message info[…]` a program logs.
        let other = "Message info[0]:  nothing here\nMessage info[x]:RTS_HWTS: y\n";
        assert!(first_causal_error(other.as_bytes()).is_none_or(|c| c.line != 1 && c.line != 2));
    }

    // ACL's own return codes (1000xx usage, 2000xx resource, … as torch_npu's AclErrorCode table
    // lists them) name the failed call as the runtime's do; a CANN title with its code and no
    // message (`Communication_Error_Get_Socket(EI0006)`) is that code's report.
    #[test]
    fn acl_return_codes_and_a_titled_code_alone() {
        let text = "om_backend.cc(174)::InitResource\tacl init failed, errorCode = 100002\nom_backend.cc(57)::Init\texecute InitResource failed, errorCode = 0\n[ERROR] runtime.cc(409)::CreateBackend\tFailed to initialize the backend.\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (1, "runtime.error-number"));
        let c = first("Communication_Error_Get_Socket(EI0006)\n");
        assert_eq!(
            (c.line, c.message.as_str()),
            (1, "EI0006: Communication_Error_Get_Socket")
        );
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Collective));
        // A call with a code-like argument is no report.
        assert!(first_causal_error(b"parse_args(EI0006)\n").is_none());
    }

    // A check that reads a library is given the library the error names.
    #[test]
    fn the_library_a_loader_names_is_the_one_to_check() {
        let checks = |text: &str| -> Vec<String> {
            let c = first(text);
            crate::causal::remedies(&c, None, crate::versions::Framework::Unknown)
                .into_iter()
                .flat_map(|r| r.check)
                .collect()
        };
        let k = checks("OSError: /x/ext.so: undefined symbol: _ZN3foo3barEv\n");
        assert!(k.iter().any(|k| k == "ldd -r /x/ext.so"), "{k:?}");
        // Quoted as one word; the other checks of a row untouched.
        let k = checks("OSError: /tmp/x`id`.so: undefined symbol: f\n");
        assert!(k.iter().any(|k| k == "ldd -r '/tmp/x`id`.so'"), "{k:?}");
        let k = checks(
            "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n",
        );
        assert!(k.iter().any(|k| k == "echo $LD_LIBRARY_PATH"), "{k:?}");
        assert_eq!(
            named_library("libhccl.so: cannot open shared object file: No such file or directory"),
            Some(("libhccl.so", "cannot open shared object file"))
        );
        assert_eq!(named_library("the docs mention an undefined symbol"), None);
    }

    // A line that says what is not supported in its own words is a signal: cited when nothing
    // stronger is in the text, never when it is hedged, worked around or a warning.
    #[test]
    fn a_stated_unsupported_configuration() {
        let bare = "[2025-03-24 06:12:35,567] [INFO] [engine_v2.py:82:__init__] Building model...\nConfig max_tokens=8 type='rms_norm' eps=1e-05 is not supported by <class 'x.cuda_pre_rms.DSPreRMSCUDAModule'>\n";
        let c = first(bare);
        assert_eq!(
            (c.line, &*c.evidence.rule, c.tier),
            (2, "phrase.not-supported", Tier::Soft)
        );
        // A stronger error elsewhere wins.
        let both = format!("{bare}ValueError: expected a 2-D weight, got a 3-D one\n");
        assert_eq!(first(&both).line, 3);
        // Any other candidate wins, a cascade included; a cut traceback keeps its own fallback.
        let cascade = "Flash attention is not supported on this device\nRuntimeError: NPU function error: aclrtSynchronizeDevice, error code is 507035\n";
        assert_eq!(first(cascade).line, 2);
        let cut = "Flash attention is not supported on this device\nError in request: boom\nTraceback (most recent call last):\n  File \"/x/torch/_dynamo/a.py\", line 1, in f\n    g()\n";
        assert_eq!(&*first(cut).evidence.rule, "logger.exception-record");
        for quiet in [
            "[W] fused attention is not supported on this chip, falling back to the math path\n",
            "INFO 01-01 00:00:00 [a.py:1] bf16 is not supported by this op\n",
            "check whether the dtype is not supported by the kernel\n",
            "WARNING: flash attention is not supported, using eager\n",
            "flash attention is not supported on this device, use default attention\n",
            "Why the op aclnnFoo is not supported?\n",
            "loading the model\n    dtype bf16 is not supported by this op\n",
            "bf16 is not supported\n",
        ] {
            assert!(
                first_causal_error(quiet.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "phrase.not-supported"),
                "{quiet}"
            );
        }
    }

    // The line a program logs for an exception it caught, just above the traceback: cited when
    // the paste is cut inside the traceback, never over the exception that ends a whole one, and
    // never CPython's own header for a thread's exception.
    #[test]
    fn a_logged_exception_above_its_traceback() {
        let cut = "[2026-01-01 00:00:00] Error in request: f() missing 1 required positional argument: 'x'\nTraceback (most recent call last):\n  File \"/srv/a.py\", line 9, in handle\n    return g()\n";
        let c = first(cut);
        assert_eq!(
            (c.line, &*c.evidence.rule, c.tier),
            (1, "logger.exception-record", Tier::Soft)
        );
        assert_eq!(c.frames.len(), 1, "the traceback's frames go with it");
        let whole = format!("{cut}  File \"/srv/b.py\", line 3, in g\n    f()\nTypeError: f() missing 1 required positional argument: 'x'\n");
        assert_eq!(first(&whole).line, 7);
        // A wrapper exception (a cascade) that ends the traceback still wins over the record.
        let wrapped = "Error during inference\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    y = model(x)\nRuntimeError: NPU function error: aclrtSynchronizeStream, error code is 507015\n";
        assert_eq!(first(wrapped).line, 5);
        // The frames decide the phase as they would without the record.
        let compile = "Error in request: boom\nTraceback (most recent call last):\n  File \"/x/tbe/common/a.py\", line 1, in build\n    run()\n";
        let c = first(compile);
        assert_eq!(c.line, 1);
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Compile));
        for not_said in [
            "Running test_error_handling",
            "Exception ignored in: <function Pool.__del__ at 0x7f>",
            "Epoch 3: loss=0.12, errors=0",
        ] {
            let text = format!("{not_said}\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n    g()\n");
            assert!(
                first_causal_error(text.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "logger.exception-record"),
                "{not_said}"
            );
        }
        let thread = "Exception in thread Thread-3 (run):\nTraceback (most recent call last):\n  File \"/x/threading.py\", line 1, in run\n";
        assert!(first_causal_error(thread.as_bytes())
            .is_none_or(|c| &*c.evidence.rule != "logger.exception-record"));
        let info = "INFO:root:retrying after an error\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n";
        assert!(first_causal_error(info.as_bytes())
            .is_none_or(|c| &*c.evidence.rule != "logger.exception-record"));
    }

    // A paste's first line that picked up a space is still an exception line (its capture
    // evidence counts); deeper in the text an indented exception-like line is not one.
    #[test]
    fn a_paste_whose_first_line_is_indented() {
        let text = " RuntimeError: Worker failed: capture_begin:NPUGraph.cpp:1 NPU function error: AclmdlRICaptureBegin(s, m), error code is 207005\nEE9999: Inner Error!\nEE9999[PID: 1] 2026-01-01-00:00:00.000.000 (EE9999):  [SqCqManage]Alloc sq cq fail, stream_id=1984, retCode=0x7020023.[FUNC:Setup][FILE:stream.cc][LINE:1]\n";
        let c = first(text);
        assert_eq!(c.line, 3);
        let p = c.phase.expect("a phase");
        assert_eq!(
            (p.phase, &*p.rule),
            (crate::knowledge::Phase::Capture, "capture.context")
        );
        let later = "x\n RuntimeError: not at the start\n";
        assert!(first_causal_error(later.as_bytes()).is_none());
    }

    // Wider-world batch 13, glog-form fatal records: glog's and Paddle-Lite's `F` record (a
    // `CHECK` that failed) is why the process aborts; the `what():` that only titles the
    // exception (`Paddle-Lite C++ Exception:`) and the record it repeats under it are not.
    #[test]
    fn fatal_records_of_glog_form_loggers() {
        let lite = "[I  1/ 2 03:04:05.006 lite/core/optimizer.cc:9 Run] start\n[F  1/ 2 03:04:05.007 ...ite/kernels/nnadapter/engine.cc:294 Engine] Check failed: (n > 0): 0!>0 No device.\nterminate called after throwing an instance of 'paddle::lite::PaddleLiteException'\n  what():  Paddle-Lite C++ Exception: \n[F  1/ 2 03:04:05.007 ...ite/kernels/nnadapter/engine.cc:294 Engine] Check failed: (n > 0): 0!>0 No device.\n";
        let c = first(lite);
        assert_eq!(
            (c.line, c.tier, &*c.evidence.rule),
            (2, Tier::Strong, "logger.fatal-record")
        );
        // GE's graph build API names the phase (`aclgrphBuildModel`: an offline model's build).
        let build = "[F  1/ 2 03:04:05.007 ...er/huawei_ascend_npu/utility.cc:221 BuildOMModelToBuffer] Check failed: (aclgrphBuildModel(g, o, b) == ge::GRAPH_SUCCESS): 1!==0\n";
        assert_eq!(first(build).phase.map(|p| p.phase), Some(Phase::Compile));
        let glog = "I0209 15:51:16.910123  1234 main.cc:10] start\nF0209 15:51:16.910123  1234 main.cc:12] Check failed: n > 0 (0 vs. 0)\n*** Check failure stack trace: ***\nAborted (core dumped)\n";
        assert_eq!(first(glog).line, 2);
        // A fatal record that says why in its own words is still the fatal record.
        let why =
            "F0209 15:51:16.910123  1234 main.cc:12] load failed because the file is missing\n";
        assert_eq!(&*first(why).evidence.rule, "logger.fatal-record");
        // The `what():` that only titles its exception is a wrapper.
        let title = "terminate called after throwing an instance of 'paddle::lite::PaddleLiteException'\n  what():  Paddle-Lite C++ Exception: \n";
        assert_eq!(first(title).tier, Tier::Cascade);
        // At the error level a record stays a cascade.
        let error =
            "E0209 15:51:16.910123  1234 main.cc:12] could not open x\nRuntimeError: open failed\n";
        assert_eq!(first(error).line, 2);
    }

    // Wider-world batch 13: Triton's `CompilationError: at L:C:` shows the source and a caret,
    // then the error it wraps — that line is the error, in the wrapper's compile phase. Without
    // an error after the caret the exception stays the error.
    #[test]
    fn the_error_under_a_located_compilation_error() {
        let text = "triton.compiler.errors.CompilationError: at 3:8:\ndef kernel(x_ptr):\n    pid = tl.program_id(0)\n    v = tl.load(x_ptr, other=0)\n        ^\nValueError('`other` cannot be provided without `mask`')\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (6, "triton.located-error"));
        assert_eq!(c.exception_type.as_deref(), Some("ValueError"));
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Compile));
        let bare =
            "triton.compiler.errors.CompilationError: at 3:8:\ndef kernel(x_ptr):\n        ^\n";
        assert_eq!(first(bare).line, 1);
    }

    // Wider-world batches 12 and 13: torch_npu's hint, then a report whose only reason is that
    // the runtime could not fetch the device's message (`rtGetDevMsg`, no context): the hint
    // is the error, and the report's code does not decide its phase.
    #[test]
    fn a_hint_over_the_report_of_a_failed_error_query() {
        let text = "RuntimeError: allocate:torch_npu/csrc/core/npu/NPUCachingAllocator.cpp:2050 NPU error, error code is 107002\n[Error]: The context is empty.\n        Check whether acl.rt.set_context or acl.rt.set_device is called.\nEE1001: The argument is invalid.Reason: rtGetDevMsg execute failed, reason=[context pointer null]\n        Solution: 1.Check the input parameter range of the function.\n        TraceBack (most recent call last):\n        ctx is NULL![FUNC:GetDevErrMsg][FILE:api_impl.cc][LINE:1]\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (2, Shape::TorchNpuHint));
        assert_ne!(c.phase.map(|p| p.token), Some("EE1001".to_string()));
        // A report with a reason of its own is still cited over the hint.
        let own = text.replace(
            "rtGetDevMsg execute failed, reason=[context pointer null]",
            "set ASCEND_RT_VISIBLE_DEVICES:4 error",
        );
        assert_eq!(first(&own).line, 4);
    }

    // Wider-world batch 13: the old inner layout's message line that repeats the code, as
    // torch_npu prints it (no `[FUNC:…]` suffix), is the report's message and its cited line.
    #[test]
    fn the_old_inner_layout_without_its_location_suffix() {
        let text = "RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!\nEZ9999  Cannot parse json for config file [/usr/local/Ascend/ascend-toolkit/latest/opp/built-in/op_impl/ai_core/tbe//kernel/config/ascend910/cast.json].\n        TraceBack (most recent call last):\n        Op Cast does not has any binary.\n";
        let c = first(text);
        assert_eq!(c.line, 2);
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
    }

    // Wider-world batch 13: a warning that states a cause loses to an error that states one;
    // a line that says what failed and why in its own words is a cause.
    #[test]
    fn warnings_after_errors_and_failures_that_say_why() {
        let text = "Warning : ASCEND_HOME_PATH environment variable is not set.\nmodel is loaded\nOCR init failed: Unsupported soc version: Ascend310\n";
        assert_eq!(first(text).line, 3);
        let alone = "Warning : ASCEND_HOME_PATH environment variable is not set.\nok\n";
        assert_eq!(first(alone).line, 1);
        let because = "loader: step 3 failed. (code=3)\nweights load failed, because the shard file is truncated. ret is -5\n";
        let c = first(because);
        assert_eq!((c.line, &*c.evidence.rule), (2, "phrase.failed-because"));
        // DCMI's failure is an environment row (the driver's device management).
        let dcmi = "DrvMngGetConsoleLogLevel failed. (g_conLogLevel=3)\ndcmi model initialized failed, because the device is used. ret is -8020\n";
        let c = first(dcmi);
        assert_eq!(c.line, 2);
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // A reason given elsewhere is none.
        let elsewhere = "x failed because of the following error (look up to see its traceback):\n";
        assert!(first_causal_error(elsewhere.as_bytes())
            .is_none_or(|c| c.evidence.rule != "phrase.failed-because"));
    }

    // Wider-world batch 19: a shell's `not found` for a driver tool the script runs, its
    // fallback failing quietly, and the lookup that then finds nothing: the missing command is
    // the cause, the `KeyError` its consequence, with the command's remedy and package.
    #[test]
    fn a_command_the_shell_did_not_find_under_a_lookup_that_missed() {
        let text = "device_num_list: [0, 1, 2, 3]\n/bin/sh: 1: hccn_tool: not found\nFailed to call hccn_tool, try to read /etc/hccn.conf instead\nTraceback (most recent call last):\n  File \"hccl_tools.py\", line 137, in main\n    device_ip = device_ips[device_id]\nKeyError: '0'\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (2, Shape::EnvironmentLine));
        assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::Unknown);
        assert_eq!(r[0].matched, "key:command not found");
        // A warning's missing module is a probe, not what the lookup missed.
        let probe = "WARNING 08-06 10:40:29 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError(\"No module named 'vllm._C'\")\nTraceback (most recent call last):\n  File \"serve.py\", line 10, in <module>\nKeyError: 'model.embed_tokens.weight'\n";
        assert_eq!(first(probe).line, 4);
        // A library line keeps its environment phase (not HCCL's, whose name it holds).
        let lib = first("libhccl.so: cannot open shared object file: No such file or directory\n");
        assert_eq!(lib.phase.map(|p| p.phase), Some(Phase::Environment));
        // The lookup alone is the error; an error that states its own cause is not a miss.
        let alone = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: '0'\n";
        assert_eq!(first(alone).line, 3);
        let stated = text.replace("KeyError: '0'", "ValueError: device 0 has no IP address");
        assert_eq!(first(&stated).line, 7);
    }

    // Wider-world batch 20: a line that says in the active voice what is not supported (CANN's
    // graph optimiser's), under its `[GraphOpt]` tags: the compile phase.
    #[test]
    fn what_the_graph_optimiser_does_not_support() {
        let text = "\"[GraphOpt][Trans][InsertTransByConcec] We do not support trans from NC1HWC0 to ND between Transpose_in_0 and Transpose.\"\n";
        let c = first(text);
        assert_eq!(
            (c.line, c.evidence.rule.as_ref()),
            (1, "phrase.not-supported")
        );
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Compile));
        // AscendC's own warning that an API does not exist on the chip, the only hint a cut
        // build log holds.
        let api = "/x/inner_kernel_operator_data_copy_intf.cppm:947:9: warning: 'DataCopyPadUB2GMImpl<float>' is deprecated: NOTICE: DataCopyPad is not deprecated. Currently, DataCopyPad is an unsupported API on current device. Please check your code! [-Wdeprecated-declarations]\n";
        let c = first(api);
        assert_eq!(
            (c.line, c.evidence.rule.as_ref()),
            (1, "phrase.not-supported")
        );
        // Hedged, or worked around: no.
        for not in [
            "if we do not support trans from NC1HWC0 to ND the graph fails\n",
            "The backend does not support bf16, using fp16 instead\n",
        ] {
            assert!(
                first_causal_error(not.as_bytes())
                    .is_none_or(|c| c.evidence.rule != "phrase.not-supported"),
                "{not}"
            );
        }
    }

    // Wider-world batch 36: the phase each new knowledge row places, on the line that states it;
    // ATC's operator check of a model (its report's failed object) and ld's unreadable input.
    #[test]
    fn batch_36_causes_and_their_phases() {
        let at = |text: &str| {
            let c = first(text);
            (c.line, c.phase.map(|p| p.phase))
        };
        for (text, line, phase) in [
            ("(EngineCore_DP0 pid=1) ERROR 09-23 03:01:22 [core.py:718] ValueError: Current node has no NPU available. current_node_resource={'memory': 2}\n", 1, Phase::Environment),
            ("[F 12/ 1 14:47:20.689 ...le-Lite/lite/kernels/nnadapter/engine.cc:294 Engine] Check failed: (device_names.size() > 0): 0!>0 No device specified.\n", 1, Phase::Environment),
            ("[ERROR] fastdeploy/fastdeploy_model.cc(385)::CreateASCENDBackend\tThere's no valid ascend backends for model: yolov5\n", 1, Phase::Environment),
            ("[rank0]: AssertionError: Error in memory profiling. Initial free memory 58247258112, current free memory 58247516160.\n", 1, Phase::Execution),
            ("(EngineCore_DP0 pid=1) ERROR 09-23 19:25:52 [core.py:790] Invocation of collective_rpc method failed\n", 1, Phase::Execution),
            ("x\n.[rank0]:[E903 07:21:23.263967696 compiler_depend.ts:429] RopeOperation setup failed!\nException raised from OperationSetup at build/op_plugin_atb.dir/compiler_depend.ts:151 (most recent call first):\n", 2, Phase::Execution),
            ("[ERROR] FE(7924,demo):2023-04-05-07:55:43.928.710 [plugin_manager.cc:62]7924 OpenPlugin:\"[FEInit][OpPluginSo] Fail to load so file /usr/local/Ascend/opp/fusion_pass/built_in/libops_fusion_pass_aicore.so, error message is (null).\"\n", 1, Phase::Environment),
        ] {
            assert_eq!(at(text), (line, Some(phase)), "{text}");
        }
        let check = "转换，结果异常停止\nlog显示\n   {\n      \"cause\": [\n        {\n          \"code\": 1,\n          \"message\": \"The type is not supported.\"\n        }\n      ],\n      \"name\": \"Resize_117\",\n      \"result\": \"failed\",\n      \"type\": \"ai.onnx::13::Resize\"\n    },\n";
        let c = first(check);
        assert_eq!((c.line, &*c.evidence.rule), (7, "atc.op-check"));
        let p = c.phase.expect("a phase");
        assert_eq!(
            (p.phase, &*p.rule),
            (Phase::Compile, "shape.op-check-failed")
        );
        // A passed check's message, a message outside a cause list, a cause that is no list, a
        // passed object beside a failed one, a message at the object's own level: no cause.
        let beside = "[\n  {\n    \"name\": \"Add_1\",\n    \"result\": \"success\",\n    \"cause\": [\n      {\n        \"message\": \"ok\"\n      }\n    ]\n  },\n  {\n    \"name\": \"Resize_117\",\n    \"result\": \"failed\"\n  }\n]\n";
        let flat = "{\n  \"result\": \"failed\",\n  \"cause\": \"timeout\",\n  \"message\": \"job 7 timed out\"\n}\n";
        for not in [
            check.replace("\"failed\"", "\"success\""),
            check.replace("\"cause\": [", "\"notes\": ["),
            beside.to_string(),
            flat.to_string(),
        ] {
            assert!(
                first_causal_error(not.as_bytes())
                    .is_none_or(|c| &*c.evidence.rule != "atc.op-check"),
                "{not}"
            );
        }
    }

    // Grading of batch 21: what the runtime and aclnn say about the set-up routes environment
    // (a device index outside ASCEND_RT_VISIBLE_DEVICES, no kernels package, a thread without a
    // device context); GE's EZ3002 is raised while the graph is built.
    #[test]
    fn set_up_faults_the_runtime_names() {
        let phase = |text: &str| first(text).phase.map(|p| p.phase);
        assert_eq!(
            phase("EE1001: [PID: 42] 2025-11-10-16:26:28.542.748 The argument is invalid.Reason: Set visible device failed, invalid device=6, input visible devices:6\n"),
            Some(Phase::Environment)
        );
        assert_eq!(
            phase("call aclnnSwiGlu failed, detail:EZ1001: [PID: 426] 2025-04-18-08:22:17.195.330 Get path and read binary_info_config.json failed, please check if the opp_kernel package is installed!\n"),
            Some(Phase::Environment)
        );
        assert_eq!(
            phase("RuntimeError: allocate:NPUCachingAllocator.cpp:1406 NPU error, error code is 107002\n[Error]: The context is empty.\n"),
            Some(Phase::Execution)
        );
        assert_eq!(
            phase("EZ3002: Optype [Conv2D] of Ops kernel [AIcoreEngine] is unsupported. Reason: Dynamic shape is not supported on this chip!.\n"),
            Some(Phase::Compile)
        );
    }

    // Grading of batch 20: a server that could not listen on its address and port is an
    // environment fault with its own remedy (the address this host has, the port free).
    #[test]
    fn a_server_that_could_not_listen() {
        let text = "[2025-12-15 15:19:22.681+08:00] [38] [452] [server] [ERROR] [http_server.cpp:163] : [MIE04E02041C] [endpoint] Failed to listen 172.17.0.3:40032, please check if business ip and port are legal.\n";
        let c = first(text);
        assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::MindIe);
        assert_eq!(r[0].matched, "key:failed to listen");
        let c = first("OSError: [Errno 98] Address already in use\n");
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::Torch);
        assert_eq!(r[0].matched, "key:address already in use");
    }

    // Grading of batch 19: the source file a glog-form header names is read as a frame is — a
    // Paddle-Lite NNAdapter converter's check runs while the device's model is built (compile);
    // the runtime's `driver error:feature not support` is a chip's or driver's missing feature.
    #[test]
    fn where_the_logger_logged_and_what_the_driver_lacks() {
        let converter = "[F  1/ 3  9: 8:29.634 ...river/huawei_ascend_npu/converter/pad.cc:33 ConvertPad] Check failed: (std::abs(value) < 1e-6): 14!<1e-06 only support constant_values=0 right now\n";
        let p = first(converter).phase.expect("a phase");
        assert_eq!(
            (p.phase, p.rule.as_ref(), p.token.as_str()),
            (Phase::Compile, "phase.log-source", "/converter/")
        );
        let feature = "EL0014: The operation is unsupported.\n        TraceBack (most recent call last):\n        rtMemcpy2d execute failed, reason=[driver error:feature not support][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:50]\n";
        let c = first(feature);
        let p = c.phase.as_ref().expect("a phase");
        assert_eq!(
            (c.line, p.phase, p.token.as_str()),
            (1, Phase::Environment, "driver error:feature not support")
        );
    }

    // Wider-world batch 19: OpenCV's exception in its multi-line form says where and the code's
    // name on its first line (`(-2:Unspecified error) in function 'f'`); the CANN report on the
    // lines after it says what failed.
    #[test]
    fn an_opencv_exception_over_the_cann_report_it_carries() {
        let text = "terminate called after throwing an instance of 'cv::Exception'\n  what():  OpenCV(4.10.0) /x/cannops/src/cann_call.cpp:97: error: (-2:Unspecified error) in function 'aclrtMemcpy2dWarpper'\nEL0014: The operation is unsupported.\n        TraceBack (most recent call last):\n        rtMemcpy2d execute failed, reason=[driver error:feature not support][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:50]\nAborted (core dumped)\n";
        assert_eq!(first(text).line, 3);
        // The one-line form carries its text: it is the error.
        let one = "  what():  OpenCV(4.5.4) /x/color.cpp:182: error: (-215:Assertion failed) !_src.empty() in function 'cvtColor'\nAborted (core dumped)\n";
        assert_eq!(first(one).line, 1);
        assert!(collect::is_cascade_text(
            "OpenCV(4.10.0) /x/a.cpp:9: error: (-2:Unspecified error) in function 'f'"
        ));
        assert!(!collect::is_cascade_text(
            "cv2.error: OpenCV(4.8.0) /x/color.cpp:182: error: (-215:Assertion failed) !_src.empty() in function 'cvtColor'"
        ));
        for not in [
            "error: (x:y) in function 'f'",
            "OpenCV(4.10.0) /x/a.cpp:9: error: (-2:Unspecified error) in function ''",
            "a.cpp:9: error: (-2:Unspecified error) in function 'f' and more",
        ] {
            assert!(!collect::is_cascade_text(not), "{not}");
        }
    }

    // Wider-world batch 13: pip's resolver lists what cannot all hold; a package's requirement
    // is the cause, an environment fault.
    #[test]
    fn a_pip_dependency_conflict() {
        let text = "ERROR: Cannot install a and b==1.0 because these package versions have conflicting dependencies.\n\nThe conflict is caused by:\n    The user requested torch==2.9.0\n    torch-npu 2.9.0 depends on torch==2.9.0+cpu\n\nTo fix this you could try to:\n1. loosen the range of package versions you've specified\n";
        let c = first(text);
        assert_eq!((c.line, c.shape), (5, Shape::EnvironmentLine));
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::Torch);
        assert_eq!(r[0].matched, "key:pip.conflict");
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // Under BuildKit (wider-world batch 25): every line carries the step's seconds; of the
        // packages' requirements, the one the user did not ask for is the contradiction.
        let docker = "ERROR: Cannot install torch-npu==2.3.1, torch==2.3.1 and torchvision==0.18.1 because these package versions have conflicting dependencies.\n341.8\n341.8 The conflict is caused by:\n341.8     The user requested torch==2.3.1\n341.8     torchvision 0.18.1 depends on torch==2.3.1\n341.8     torch-npu 2.3.1 depends on torch==2.3.1+cpu\n341.8\n341.8 To fix this you could try to:\n";
        let c = first(docker);
        assert_eq!((c.line, c.shape), (6, Shape::EnvironmentLine));
        assert!(
            c.message.starts_with("torch-npu 2.3.1 depends on"),
            "{}",
            c.message
        );
        // Each line its own seconds, and a constraint the user gave.
        let docker = "5.123 The conflict is caused by:\n5.124     The user requested (constraint) torch==2.3.1\n5.124     torchvision 0.18.1 depends on torch==2.3.1\n5.13     torch-npu 2.3.1 depends on torch==2.3.1+cpu\n5.13\n";
        let c = first(docker);
        assert_eq!((c.line, &*c.evidence.rule), (4, "pip.conflict"));
        // Another number before the header is no step's seconds.
        assert!(
            first_causal_error(b"see 12 The conflict is caused by:\n12     x depends on y\n")
                .is_none_or(|c| c.evidence.rule != "pip.conflict")
        );
        // Wider-world batch 39: two packages pin torch apart; the Ascend adapter's pin is cited
        // wherever it stands, and without one the first package's.
        let pins = "The conflict is caused by:\n   vllm 0.13.0 depends on torch==2.9.0\n   vllm-ascend 0.13.0 depends on torch==2.8.0\n\nTo fix this you could try to:\n";
        assert_eq!(first(pins).line, 3);
        assert_eq!(first(&pins.replace("vllm-ascend", "vllm-extra")).line, 2);
        // A name holding the letters only is no Ascend package (`pynput`).
        assert_eq!(first(&pins.replace("vllm-ascend", "pynput")).line, 2);
    }

    // Wider-world batch 41: a program's argument parser refused its command line (argparse's
    // `<prog>: error: <message>`): an environment fault with its own remedy; a compiler's own
    // `error:` about its options stays a compiler's.
    #[test]
    fn a_command_line_the_program_refused() {
        for text in [
            "usage: train.py [-h] [--lr LR]\ntrain.py: error: unrecognized arguments: --foo\n",
            "llamafactory-cli: error: ambiguous option: --split could match --split_special_tokens, --split-special-tokens\n",
            "vllm: error: argument --dtype: invalid choice: 'x'\n",
            // The user's words before the program on its line.
            "报错：vllm: error: argument --dtype: invalid choice: 'x'\n",
            "then I got train.py: error: the following arguments are required: --model\n",
            "报错:`vllm: error: argument --dtype: invalid choice: 'x'`\n",
        ] {
            let c = first(text);
            assert_eq!(c.shape, Shape::EnvironmentLine, "{text}");
            assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
            let r = crate::causal::remedies(&c, None, crate::versions::Framework::Torch);
            assert_eq!(r[0].matched, "key:argparse.usage");
        }
        let gcc = first("gcc: error: unrecognized command-line option '-mfoo'\n");
        assert_ne!(gcc.shape, Shape::EnvironmentLine);
        for other in [
            "ValueError: error: argument x\n",
            "Error at Run: error: argument x\n",
            "RuntimeError: forward failed: error: argument 'input' (position 1) must be Tensor\n",
        ] {
            assert!(
                crate::compiler_diag::argparse_error(other.trim_end()).is_none(),
                "{other}"
            );
        }
    }

    // Wider-world batch 43: a shell's report of a job killed by a signal is the process's abort;
    // the MindX SDK's exception raises the code its first record printed; a lookup on an empty
    // result under a record with a runtime code is that record's consequence.
    #[test]
    fn older_stacks_report_their_failures() {
        let bash = "loading\nrun_om.sh: line 7: 257060 Segmentation fault      (core dumped) python3 ./cli_chat.py\n";
        let c = first(bash);
        assert_eq!((c.line, c.shape), (2, Shape::ProcessAbort));
        assert_eq!(
            first("[1]+  Aborted (core dumped)  ./app\n").shape,
            Shape::ProcessAbort
        );
        // The host's out-of-memory killer's SIGKILL.
        assert_eq!(
            first("run.sh: line 7: 257060 Killed                  python train.py\n").shape,
            Shape::ProcessAbort
        );
        for not in [
            "see line 7: 3 Segmentation faults were fixed",
            "[x] Aborted by user",
            "script.sh: line 3: 12 apples",
        ] {
            assert!(!collect::shell_job_signal(not), "{not}");
        }
        let mindx = "E1122 10:02:57.047970 28 ImageProcessorDptr.hpp:819] Failed to recognize Ascend chip. (Code = -1, Message = \"ACL: general failure\")\nE1122 10:02:57.048184 28 ImageProcessorDptr.hpp:879] Get predict size failed. (Code = -1, Message = \"ACL: general failure\")\nTraceback (most recent call last):\n  File \"/app/main.py\", line 21, in <module>\n    decoded = p.decode(path)\nRuntimeError: [-1][ACL: general failure]\n";
        let c = first(mindx);
        assert_eq!(c.line, 1);
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // Another code in the exception: the exception stays.
        assert_eq!(first(&mindx.replace("[-1][", "[-2][")).line, 6);
        let infer = "E1116 09:50:41.157967  2326 MxOmModelDesc.cpp:855] [507011][Error code unknown] Failed to model infer execute, details seen in CANN document.\nE1116 09:50:41.158447  2326 MxOmModelDesc.cpp:129] Model Infer failed.\nTraceback (most recent call last):\n  File \"predict.py\", line 116, in detect\n    out = network.infer(img)[0]\nIndexError: list index out of range\n";
        assert_eq!(first(infer).line, 1);
        // Without the record's code, the lookup is the error.
        assert_eq!(
            first(&infer.replace("[507011][Error code unknown] ", "")).line,
            6
        );
    }

    // Wider-world batch 42: a process's abort under glibc's backtrace and nothing else: the
    // innermost frame outside the abort's own path is cited, the abort in its scope.
    #[test]
    fn an_abort_under_its_native_backtrace() {
        let text = "/lib/libc.so.6(gsignal+0x10)[0xffff0001]\n/x/libggml-base.so(ggml_abort+0x13c)[0xffff0002]\n/x/libllama.so(_ZN13llama_context13graph_reserveEj+0x148)[0xffffa3f198dc]\nllama-server(+0x17cfc8)[0xaaaad02ecfc8]\n/lib/libc.so.6(__libc_start_main+0x98)[0xffffa39274cc]\nAborted (core dumped)\n";
        let c = first(text);
        assert_eq!((c.line, &*c.evidence.rule), (3, "process.backtrace"));
        // One frame is no backtrace; an abort alone stays the abort.
        let one = "llama-server(+0x17cfc8)[0xaaaad02ecfc8]\nAborted (core dumped)\n";
        assert_eq!(first(one).line, 2);
        // The abort's path (glibc 2.34's pthread_kill) and the runtime's frames are skipped; a
        // stripped binary's frames without symbols leave the abort cited.
        let stripped = "/lib/libc.so.6(+0x42520)[0x1]\n/lib/libc.so.6(pthread_kill+0x12c)[0x2]\n/lib/libc.so.6(abort+0xd3)[0x4]\n./srv(+0x1234)[0x5]\n/lib/libc.so.6(__libc_start_main+0x80)[0x6]\nAborted (core dumped)\n";
        assert_eq!(first(stripped).line, 6);
        // A statically linked interpreter's frames are the runtime's too.
        let python = "/x/libtorch_npu.so(+0x1b2c3d)[0x1]\npython3(PyObject_Call+0x5e)[0x2]\npython3(_PyEval_EvalFrameDefault+0x9)[0x3]\nAborted (core dumped)\n";
        assert_eq!(first(python).line, 4);
        // A shell's report of the signal reads the frames the same.
        let shell = text.replace(
            "Aborted (core dumped)",
            "run.sh: line 7: 123 Aborted (core dumped) ./llama-server",
        );
        assert_eq!(first(&shell).line, 3);
        // C++'s terminate names what was thrown: it stays.
        let thrown = "/usr/lib/libstdc++.so.6(_ZSt9terminatev+0x16)[0x1]\n/x/libggml.so(ggml_compute+0x10)[0x2]\nterminate called after throwing an instance of 'std::runtime_error'\n";
        assert_eq!(first(thrown).line, 3);
        for not in ["x(+0x1)[0xzz]", "a b(f+0x1)[0x1]", "x(f+1)[0x1]", "x[0x1]"] {
            assert_eq!(collect::glibc_frame(not), None, "{not}");
        }
    }

    // Wider-world batch 42: torch_npu 2.5 and later end the exception's first line at the source
    // location and go on below it; the aclnn parameter check under it is the cause, as it is
    // under the one-line form.
    #[test]
    fn an_exception_whose_message_starts_below_its_location() {
        let text = "RuntimeError: matmul_implement_npu: MatmulKernelNpuOpApi.cpp:92\nNPU function error: call aclnnMatmul failed, error code is 161002\nAclNN_Parameter_Error(EZ1001): Tensor matB not implemented for DT_INT8,\nshould be in dtype support list [DT_FLOAT, DT_FLOAT16, DT_BFLOAT16].\n";
        assert_eq!(first(text).line, 3);
        // Under the backend compiler's wrapper too.
        let wrapped = format!(
            "torch._dynamo.exc.BackendCompilerFailed: backend='npugraph_ex' raised:\n{text}"
        );
        assert_eq!(first(&wrapped).line, 4);
        // A location-like first line of another message is the message.
        let own = "RuntimeError: step: a.cpp:92\nthe tensor has 3 dims\n";
        assert_eq!(first(own).line, 1);
        for (m, located) in [
            ("matmul_implement_npu: MatmulKernelNpuOpApi.cpp:92", true),
            (
                "addmm:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:112",
                true,
            ),
            ("the op: a.cpp:x", false),
            ("f: a.py:3", false),
            ("f:", false),
        ] {
            assert_eq!(collect::located_only(m), located, "{m}");
        }
    }

    // Wider-world batch 39: a lookup that found nothing, translated by the exception chained
    // after it into what the caller asked for (torch_npu's lazy exports: `raise AttributeError(…)
    // from` the `KeyError`), is that exception's cascade.
    #[test]
    fn a_lookup_miss_translated_by_its_chained_exception() {
        let text = "Traceback (most recent call last):\n  File \"/x/torch_npu/_init/core/_exports.py\", line 76, in _lazy_import_api\n    import_path, attr_name = _LAZY_PYTHON_SYMBOLS[name]\nKeyError: 'ops'\n\nThe above exception was the direct cause of the following exception:\n\nTraceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n  File \"/x/torch_npu/_init/core/_exports.py\", line 78, in _lazy_import_api\n    raise AttributeError(\nAttributeError: module 'torch_npu' has no attribute 'ops'. Did you mean: 'os'?\n";
        let c = first(text);
        assert_eq!(c.line, 12, "{}", c.text);
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // Also while handling it (`During handling of the above exception, …`).
        let handling = text.replace(
            "The above exception was the direct cause of the following exception:",
            "During handling of the above exception, another exception occurred:",
        );
        assert_eq!(first(&handling).line, 12);
        // A chained exception that does not name the key is another failure: the miss stays.
        let other = text.replace("has no attribute 'ops'", "has no attribute 'npu'");
        assert_eq!(first(&other).line, 4);
        // A one-letter key may stand in any message.
        let short = text.replace("'ops'", "'o'");
        assert_eq!(first(&short).line, 4);
        // Without a chain the lookup is the error.
        let alone = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'ops'\nAttributeError: module 'torch_npu' has no attribute 'ops'\n";
        assert_eq!(first(alone).line, 3);
    }

    // A notebook's traceback (IPython 8: a header with the exception's type, `Cell In[3], line 1`,
    // `File <path>.py:<line>, in <function>(<args>)`): its frames are read, the user's found.
    #[test]
    fn an_ipython_traceback_has_its_frames_read() {
        let text = "---------------------------------------------------------------------------\nNotImplementedError                       Traceback (most recent call last)\nCell In[3], line 1\n----> 1 out = attn(q, k, v)\n\nFile ~/work/xformers/ops/fmha.py:1159, in memory_efficient_attention(query, key, value)\n   1157     attn_bias=attn_bias,\n-> 1159     op=op,\n\nNotImplementedError: No operator found for this attention: AttentionOpDispatch(device=device(type='npu', index=0))\n";
        let c = first(text);
        assert_eq!(c.line, 10);
        let u = c.user_frame.expect("the user's frame");
        assert_eq!(
            (u.file.as_str(), u.line, u.function.as_deref()),
            (
                "~/work/xformers/ops/fmha.py",
                1159,
                Some("memory_efficient_attention")
            )
        );
        // IPython 7 (batch 42): the frame's line is on its arrow; a frame without an arrow
        // (blank lines collapsed) takes none of the next frame's.
        let seven = "RuntimeError                              Traceback (most recent call last)\n<ipython-input-3-2f0d1e8a9b1c> in <module>\n      1 import torch\n----> 2 y = model(x)\n\n~/work/net.py in forward(self, x)\n     10     def forward(self, x):\n---> 11         return self.conv(x)\n\n/usr/lib/python3.7/site-packages/torch/nn/modules/module.py in _call_impl(self, *input)\n-> 1102             return forward_call(*input)\n\nRuntimeError: boom\n";
        let u = first(seven).user_frame.expect("the user's frame");
        assert_eq!((u.file.as_str(), u.line), ("~/work/net.py", 11));
        let collapsed = seven.replace("---> 11         return self.conv(x)\n\n", "");
        let u = first(&collapsed).user_frame.expect("the user's frame");
        assert_eq!(u.file.as_str(), "<ipython-input-3-2f0d1e8a9b1c>");
    }

    // A logger's colours kept in a file: its level is read through them (a coloured WARNING is
    // below the error), and the line is cited without them.
    #[test]
    fn a_coloured_logger_is_read_through_its_colours() {
        let text = "\x1b[33mWARNING\x1b[0m 08-06 10:40:29 [_custom_ops.py:20] Failed to import from vllm._C with ModuleNotFoundError\nloading model\n\x1b[31mERROR\x1b[0m 08-06 10:40:31 [core.py:700] EngineCore failed to start: invalid value for --max-model-len\n";
        let c = first(text);
        assert_eq!(c.line, 3);
        assert!(!c.text.contains('\x1b'), "{:?}", c.text);
        assert!(c.text.starts_with("ERROR 08-06"), "{:?}", c.text);
    }

    // Wider-world batch 39: wrappers that send the reader to another report — MindSpore's `The
    // details refer to 'Ascend Error Message'`, torch's backend autoload over the import's error.
    #[test]
    fn wrappers_that_point_at_the_error_they_raise() {
        let loader = "libascend_hal.so: cannot open shared object file: No such file or directory\nRuntimeError: Failed to load the backend extension: torch_npu. You can disable extension auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0.\n";
        let c = first(loader);
        assert_eq!(c.line, 1);
        assert_eq!(c.phase.as_ref().map(|p| p.phase), Some(Phase::Environment));
        // The driver's library, not the toolkit's: its own remedy.
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::Torch);
        assert_eq!(
            r[0].matched,
            "key:libascend_hal.so: cannot open shared object file"
        );
        // PaddlePaddle's notice before the import's error it re-raises (wider-world batch 41).
        let paddle = "Error: Can not import paddle core while this file exists: /usr/local/lib/python3.9/dist-packages/paddle/base/libpaddle.so\nTraceback (most recent call last):\n  File \"/usr/local/lib/python3.9/dist-packages/paddle/base/core.py\", line 267, in <module>\n    from . import libpaddle\nImportError: /lib/aarch64-linux-gnu/libgomp.so.1: cannot allocate memory in static TLS block\n";
        assert_eq!(first(paddle).line, 5);
        let ms = "RuntimeError: Run task for graph:kernel_graph_37 error! The details refer to 'Ascend Error Message'.\n\nlog:\n[ERROR] DEVICE(17532,fffe74f491e0,python):2023-03-09-20:18:50.318.418 [mindspore/ccsrc/plugin/device/ascend/hal/device/ascend_kernel_runtime.cc:745] DumpTaskExceptionInfo] Task fail infos task_id: 2, stream_id: 1060, tid: 17532, device_id: 0, retcode: 507011 ( model execute failed)\n";
        assert_eq!(first(ms).line, 4);
        assert_eq!(first(ms).phase.map(|p| p.phase), Some(Phase::Execution));
    }

    // Wider-world batch 39: the phrases of an operator without an NPU implementation and of
    // versions that do not match.
    #[test]
    fn unsupported_on_the_npu_and_incompatible_versions() {
        for (text, phase) in [
            ("NotImplementedError: Could not run 'aten::foo' with arguments from the 'PrivateUse1' backend.\n", Phase::Execution),
            ("NotImplementedError: No operator found for this attention: AttentionOpDispatch(dtype=torch.float32, device=device(type='npu', index=0), k=64)\n", Phase::Execution),
            ("RuntimeError: Couldn't load custom C++ ops. This can happen if your PyTorch and torchvision versions are incompatible, or if you had errors while compiling torchvision from source.\n", Phase::Environment),
            ("2026-02-13T05:15:39.398506742Z RuntimeError: Execute fail, enable log: export ASCEND_GLOBAL_LOG_LEVEL=3, export ASCEND_SLOG_PRINT_TO_STDOUT=1 to find the first error.\n", Phase::Execution),
            ("UnimplementedError: Place Place(npu:0) is not supported. Please check that your paddle compiles with WITH_GPU, WITH_XPU, WITH_IPU, WITH_MLU or WITH_ASCEND_CL option (at /p/device_context.cc:146)\n", Phase::Environment),
        ] {
            assert_eq!(first(text).phase.map(|p| p.phase), Some(phase), "{text}");
        }
        // xformers' later form: the devices its kernels support, each on a line of its own.
        let listed = "NotImplementedError: No operator found for `memory_efficient_attention_forward` with inputs:\n     query       : shape=(1, 1025, 16, 64) (torch.float32)\n`cutlassF-pt` is not supported because:\n    device=npu (supported: {'cuda'})\n";
        assert_eq!(first(listed).phase.map(|p| p.phase), Some(Phase::Execution));
        // The dispatcher's error for another backend is no NPU's missing kernel (torchvision's
        // ops built for another torch, inputs left on the CPU).
        let cpu = "NotImplementedError: Could not run 'torchvision::nms' with arguments from the 'CPU' backend.\n";
        assert_ne!(first(cpu).phase.map(|p| p.phase), Some(Phase::Execution));
        // Another device's NotImplementedError names no NPU.
        let cpu = "NotImplementedError: No operator found for this attention: AttentionOpDispatch(dtype=torch.float32, device=device(type='cpu'), k=64)\n";
        assert_ne!(first(cpu).phase.map(|p| p.phase), Some(Phase::Execution));
    }

    // Wider-world batch 13: Docker's daemon error, with the runtime hook's stderr going on over
    // the next lines up to containerd's `: unknown`: the first of them that says what failed
    // is the cause, an environment fault with its own remedy; a chain that ends on its line
    // is cited there.
    #[test]
    fn a_container_the_daemon_could_not_start() {
        let hook = "$ docker compose up -d\nError response from daemon: failed to create task for container: OCI runtime create failed: runc create failed: unable to start container process: error during container init: error running prestart hook #0: exit status 255, stdout: , stderr: hook start ...\nfailed to mount src: /usr/local/bin/npu-smi.failed to setup container.: unknown\n$\n";
        let c = first(hook);
        assert_eq!((c.line, c.shape), (3, Shape::EnvironmentLine));
        let p = c.phase.as_ref().expect("a phase");
        assert_eq!(
            (p.phase, p.token.as_str()),
            (Phase::Environment, "container.daemon-error")
        );
        let r = crate::causal::remedies(&c, None, crate::versions::Framework::Torch);
        assert_eq!(r[0].matched, "key:container.daemon-error");
        let one = "docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]].\n";
        assert_eq!(first(one).line, 1);
        // Interleaved services do not continue each other's messages; one service does.
        let other = "app-1  | ValueError: could not load the checkpoint:\ndb-1   | Failed to open the data directory /var/lib/postgresql/data\n";
        assert_eq!(first(other).line, 1);
        let same = "app-1  | ValueError: could not load the checkpoint:\napp-1  | Failed to open the data directory /var/lib/postgresql/data\n";
        assert_eq!(first(same).line, 2);
        // Behind a log collector's time on every line (`docker logs -t`): the same reading.
        let timed: String = hook
            .lines()
            .map(|l| format!("2026-02-13T05:15:39.398506742Z {l}\n"))
            .collect();
        assert_eq!(first(&timed).line, 3);
        // Batch 17: containerd's `OCI runtime create failed:` relayed inside a program's error
        // record (a Python logging record, the cookbook's format) reads the same way.
        let relayed = "2026-01-01 10:00:00,001 - app.worker - ERROR - Failed to create workload w: Docker Server Error: failed to create task for container: failed to create shim task: OCI runtime create failed: runc create failed: error running prestart hook #0: exit status 255, stdout: , stderr: hook start ...\nfailed to mount src: /usr/local/bin/npu-smi.failed to setup container.: unknown\n";
        let c = first(relayed);
        assert_eq!((c.line, &*c.evidence.rule), (2, "container.daemon-error"));
        // One that closes its chain on the line (the Docker SDK's exception quotes it whole)
        // is cited there; the line after it is not read.
        let whole = "docker.errors.APIError: 500 Server Error: Internal Server Error (\"OCI runtime create failed: runc create failed: stderr: x: unknown\")\nfailed to remove the scratch folder\n";
        assert_eq!(first(whole).line, 1);
        // A relayed chain at a warning level (a retry) is no cause; `docker exec`'s is no
        // container that could not start.
        let retried = "2026-01-01 10:00:00,001 - app - WARNING - retry 1/3: OCI runtime create failed: runc create failed: x: unknown\n";
        assert!(first_causal_error(retried.as_bytes())
            .is_none_or(|c| c.evidence.rule != "container.daemon-error"));
        let exec = "2026-01-01 10:00:00,001 - app - ERROR - probe: OCI runtime exec failed: exec failed: x: unknown\n";
        assert_ne!(first(exec).evidence.rule, "container.daemon-error");
    }

    // Batch 17: an error whose message runs on over the lines below it (a terminal or a web
    // page wrapped it; PaddlePaddle's `Fail to open library:` over the loader's message) gives
    // the line that states the innermost cause, the first line its wrapper; an error record's
    // continuation that opens with a failure is cited over the record, as a signal.
    #[test]
    fn a_message_that_runs_on_over_the_next_lines() {
        let wrapped = "ValueError: (InvalidArgument) Fail to open library: \n/opt/lib/libplugin.so \nwith error: /opt/lib/libdep.so: \nundefined symbol: _ZN3foo3barEv\n";
        let c = first(wrapped);
        assert_eq!(
            (c.line, c.tier, &*c.evidence.rule),
            (4, Tier::Strong, "message.continued-cause")
        );
        assert_eq!(c.evidence.wrapper_line, Some(1));
        assert_eq!(c.phase.map(|p| p.phase), Some(Phase::Environment));
        // Without the exception, the loader's wrapper line gives way the same; cut after it,
        // it is the cause (wider-world batch 43).
        let bare = "Fail to open library: \n/opt/lib/libplugin.so \nwith error: /opt/lib/libdep.so: \nundefined symbol: _ZN3foo3barEv\n";
        assert_eq!(first(bare).line, 4);
        let cut = first("ValueError: (InvalidArgument) Fail to open library: /usr\n");
        assert_eq!(cut.phase.map(|p| p.phase), Some(Phase::Environment));
        // An indented continuation is the exception's detail, not a cause of its own; a
        // continuation that states nothing leaves the exception; a blank line ends it.
        for (text, line) in [
            ("RuntimeError: load failed:\n  cannot open the file\n", 1),
            ("ValueError: bad config:\nthe value of x is 3\n", 1),
            ("ValueError: bad config:\n\ncannot open the file\n", 1),
            // A message that ends its sentence is not run on: the next line is prose or another
            // process's; a message that states a cause keeps it.
            ("RuntimeError: NPU out of memory. Tried to allocate 2.00 GiB\nCannot figure out why, any help appreciated.\n", 1),
            ("ImportError: libatb.so: cannot open shared object file: No such file or directory:\nFailed to load ATB, falling back\n", 1),
        ] {
            assert_eq!(first(text).line, line, "{text}");
        }
        let record = "2026-01-01 10:00:00,001 - app - ERROR - provisioning failed: the hook said:\nfailed to mount /dev/davinci0\n";
        let c = first(record);
        assert_eq!(
            (c.line, c.tier, &*c.evidence.rule),
            (2, Tier::Signal, "message.continued-cause")
        );
        // A real exception elsewhere still wins over it.
        let with_exception = format!("{record}RuntimeError: device 0 is not present\n");
        assert_eq!(first(&with_exception).line, 3);
    }

    // Batch 18: an exception whose message is only a title that says its text follows
    // (`NNAdapter C++ Exception: `), with nothing after it, wraps what was said before it
    // (Paddle-Lite's fatal record); with its text under it, it is the error as before. An HCCP
    // error comes before the HCCL records that report it, and is cited.
    #[test]
    fn an_untitled_exception_and_the_hccp_error_under_hccl() {
        let lite = "[F 10/28 12:31:52. 73 ...nadapter/src/runtime/device.cc:529 Find] Failed to load the device HAL library from libx.so, libascendcl.so: cannot open shared object file: No such file or directory\n\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    m.predict(x)\nRuntimeError: NNAdapter C++ Exception: \n";
        assert_eq!(first(lite).line, 1);
        // Fenced, or with the process's abort after it, the same.
        let fenced = format!("```\n{lite}```\nAborted (core dumped)\n");
        assert_eq!(first(&fenced).line, 2);
        // The title over a copy of the record (cut, in markdown's bold): the same.
        let copied = format!(
            "{lite}**[F 10/28 12:31:52. 73 ...nadapter/src/runtime/device.cc:529 Find] Failed to load the device\n"
        );
        assert_eq!(first(&copied).line, 1);
        // A line of its own under the title is its text: the exception is the error.
        let own = format!("{lite}  the device HAL library is not built for this CANN\n");
        assert_eq!(first(&own).line, 6);
        // With nothing said above it, the exception is the error.
        let alone = "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    m.predict(x)\nRuntimeError: NNAdapter C++ Exception: \n";
        assert_eq!(first(alone).tier, Tier::Strong);
        let titled = "RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: \"w\".\n";
        assert_eq!(first(titled).line, 1);
        assert_eq!(first(titled).tier, Tier::Strong);
        let hccp = "[ERROR] HCCP(7,python):2025-07-15-12:45:32.997.682 [ra_hdc_rdma.c:1199]tid:7,ra_hdc_rdev_init(1199) : [init][ra_hdc_rdev]ra hdc message process failed ret(-67) phy_id(0)\n[ERROR] HCCL(7,python):2025-07-15-12:45:32.997.778 [adapter_hccp.cc:647] [7][Init][RaRdma]errNo[0x0000000005000013] rdma init fail. return: ret[328004]\n";
        assert_eq!(first(hccp).line, 1);
    }

    // Batch 34: aten's device check — an operator called with tensors on two devices — is an
    // operator's contract broken while the program runs.
    #[test]
    fn tensors_on_two_devices() {
        let text = "Computing reference log probs:   0%| 0/2 [00:00<?, ?it/s]\nRuntimeError: Expected all tensors to be on the same device, but got indices is on npu:0,\ndifferent from other tensors on cpu (when checking argument in method wrapper_NPU__embedding)\n";
        let c = first(text);
        let p = c.phase.expect("a phase");
        assert_eq!(
            (c.line, p.phase, p.nature),
            (
                2,
                Phase::Execution,
                Some(crate::knowledge::Nature::Parameter)
            )
        );
    }

    // Batch 18's grading: MindSpore's allocator message is a memory fault; Python's `cannot
    // import name … (unknown location)` (a folder shadowing the package) an environment one.
    #[test]
    fn mindspore_memory_and_a_shadowed_package() {
        let oom = "[ERROR] PRE_ACT(1,f,python):2024-10-22-11:24:55.301.443 [mindspore/ccsrc/backend/common/mem_reuse/mem_dynamic_allocator.cc:392] AddMemBlock] TotalUsedMemStatistics : 29356337664 plus alloc size : 301990400 is more than total mem size : 29464985600.\n";
        let p = first(oom).phase.expect("a phase");
        assert_eq!(p.nature, Some(crate::knowledge::Nature::Memory));
        let shadowed =
            "ImportError: cannot import name '__version__' from 'vllm' (unknown location)\n";
        let p = first(shadowed).phase.expect("a phase");
        assert_eq!(p.phase, Phase::Environment);
        let plain =
            "ImportError: cannot import name 'f' from 'x' (/usr/lib/python3/x/__init__.py)\n";
        assert_ne!(
            first(plain).phase.map(|p| p.token),
            Some("cannot import name&(unknown location)".into())
        );
    }

    // Batch 17: a C++ abort whose `what()` only names the standard library routine that threw
    // (libstdc++'s `_Map_base::at`) is the cascade of the error record the program logged just
    // above it; a `what()` in the program's own words, `std::bad_alloc`, or a record far above
    // leave the abort the cause.
    #[test]
    fn a_library_throw_under_the_record_that_explains_it() {
        let record = "[2025-01-01 10:00:00.000001] [7] [8] [llm] [ERROR] [exec.cpp:6] Invalid DP number per node: 0\n";
        let abort = |what: &str| {
            format!("{record}terminate called after throwing an instance of 'std::out_of_range'\n  what():  {what}\nAborted (core dumped)\n")
        };
        let c = first(&abort("_Map_base::at"));
        assert_eq!((c.line, c.tier), (1, Tier::Strong));
        assert_eq!(c.evidence.wrapper_line, None);
        assert_eq!(
            first(&abort(
                "vector::_M_range_check: __n (which is 5) >= this->size() (which is 3)"
            ))
            .line,
            1
        );
        for what in ["std::bad_alloc", "Model config missing: ./config.json"] {
            assert_eq!(first(&abort(what)).line, 3, "{what}");
        }
        let far = format!("{record}{}terminate called after throwing an instance of 'std::out_of_range'\n  what():  map::at\n", "step\n".repeat(8));
        assert_eq!(first(&far).line, 11);
    }

    // Issue 41, class 3: `terminate called after throwing …` wraps; `what():` is the cause.
    #[test]
    fn what_line_under_terminate() {
        let text = "terminate called after throwing an instance of 'c10::Error'\n  what():  Only a single TORCH_LIBRARY can be used to register the namespace triton; please put all of your definitions in a single TORCH_LIBRARY block.\nException raised from registerLibrary at ../aten/src/ATen/core/dispatch/Dispatcher.cpp:242 (most recent call first):\nAborted (core dumped)\n";
        let c = first(text);
        assert_eq!(
            (c.line, c.tier, &*c.evidence.rule),
            (2, Tier::Strong, "c10.what")
        );
        assert!(c.message.starts_with("Only a single TORCH_LIBRARY"));
        assert_eq!(c.skipped_cascades, vec![1]);
    }

    // Issue 41, class 6: a torch_npu hint before the CANN report that states the failure — with
    // torch_npu's `ERRxxxxx` summary between them — is context; the report is cited. A hint that
    // names a timeout over a report that only says a launch failed with its code stays cited.
    // And the pre-2024 inner report cites the line that repeats the code with its message, not
    // the `Inner Error!` header.
    #[test]
    fn named_report_after_a_hint_and_the_old_inner_layout() {
        let named = "RuntimeError: f():x.cpp:1 NPU function error: call aclnnX failed, error code is 161002\n[Error]: Invalid device ID.\n[ERROR] 2026-01-01-00:00:00 (PID:7, Device:0, RankID:-1) ERR00100 PTA call acl api failed.\n[PID: 7] 2026-01-01-00:00:00.000.000 AclNN_Parameter_Error(EZ1001): The k-axis of the two inputs are different.\n        Solution: Check the shapes.\n";
        let c = first(named);
        assert_eq!((c.line, c.shape), (4, Shape::CannReport));
        let timeout = "[Error]: The aicore execution times out.\n        Rectify the fault based on the error information in the ascend log.\n[PID: 7] 2026-01-01-00:00:00.000.000 AclNN_Runtime_Error(EZ9903): rtKernelLaunchWithHandleV2 failed: 507014\n";
        assert_eq!(first(timeout).line, 1);
        let old = "EH9999: Inner Error!\nEH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n        TraceBack (most recent call last):\n        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n";
        let c = first(old);
        assert_eq!(c.line, 2);
        assert!(c.message.contains("init env failed"), "{}", c.message);
    }

    // Batch 6 of the wider NPU world (docs/triage.md), each from its format's grammar: a device
    // hint over a report that gives its own reason; a synchronisation failure that names the
    // device's fault by number; a wrapper that sends the reader elsewhere for the root cause; a
    // native component's `[ERROR][Tag]` message over a cut traceback; a stage tag in front of
    // vLLM's logger header.
    #[test]
    fn reasons_numbers_pointers_tags_and_stages() {
        let reason = "[Error]: The device is unavailable.\n        Check whether the device is running properly.\nEE1001: [PID: 7] 2026-01-01-00:00:00.000.000 The argument is invalid.Reason: set ASCEND_RT_VISIBLE_DEVICES:6 error, input data rang[0-1)\n        Solution: 1.Check the input parameter range of the function.\n";
        assert_eq!(
            (first(reason).line, first(reason).shape),
            (3, Shape::CannReport)
        );
        // Without a reason the hint that names the fault stays cited (as above).
        let bare = "[Error]: The device is unavailable.\nEE1001: [PID: 7] 2026-01-01-00:00:00.000.000 The argument is invalid.\n";
        assert_eq!(first(bare).line, 1);
        let sync = "ERROR 01-01 00:00:00 [core.py:1]     y = x.tolist()\nERROR 01-01 00:00:00 [core.py:1] RuntimeError: ACL stream synchronize failed, error code:507015\nERROR 01-01 00:00:01 [async_llm.py:2] vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n";
        let c = first(sync);
        assert_eq!((c.line, c.tier), (2, Tier::Strong));
        // Without a device-side number it is a cascade, as before.
        let plain = "RuntimeError: ACL stream synchronize failed, error code:107003\n";
        assert_eq!(first(plain).tier, Tier::Cascade);
        let pointer = "EngineDeadError: EngineCore encountered an issue. See stack trace (above) for the root cause.\n";
        assert_eq!(first(pointer).tier, Tier::Cascade);
        let tags = "[ERROR][FusedKernel] batchSize(bs) must <= 128.\n[ERROR][FusedKernel] CheckData failed.\nScheduler hit an exception: Traceback (most recent call last):\n  File \"/x/scheduler.py\", line 9, in run\n    loop()\n...\n";
        let c = first(tags);
        assert_eq!(
            (c.line, c.message.as_str()),
            (1, "batchSize(bs) must <= 128.")
        );
        let stage = "(Worker pid=9) [Stage-2] ERROR 01-01 00:00:00 [multiproc_executor.py:1] torch._dynamo.exc.Unsupported: Attempted to call function marked as skipped\n";
        assert_eq!(first(stage).line, 1);
    }

    // Bad input: garbage, NUL bytes and invalid UTF-8 give no error and never panic.
    #[test]
    fn garbage_is_no_error() {
        let mut junk: Vec<u8> = (0..=255u8).cycle().take(70_000).collect();
        junk.extend_from_slice(b"\n\0\0\0\n\xff\xfe\n");
        assert!(first_causal_error(&junk).is_none());
        assert!(first_causal_error(b"").is_none());
    }

    // A run of plog records below ERROR is kept as its first line, so a long plog is one window;
    // dropping the rest before the scanner (as `npgx plog` does) gives the same error, with the
    // file's line numbers.
    #[test]
    fn quiet_records_after_the_first_are_dropped() {
        let info = "[INFO] GE(1,p):2025-01-01-00:00:00.000.000 [a.cc:1]1 ok\n";
        let block = "EE9999: Inner Error!\nEE9999[PID: 1] 2026-01-01-00:00:00.000.000 (EE9999):  the device failed[FUNC:F][FILE:f.cc][LINE:1]\n        TraceBack (most recent call last):\n        x failed[FUNC:G][FILE:g.cc][LINE:2]\n";
        let mut text = info.repeat(25_001);
        text.push_str(block);
        text.push_str(&info.repeat(3));
        text.push_str("[ERROR] RUNTIME(1,p):2025-01-01-00:00:01.000.000 [s.cc:1]1 GetError: Stream Synchronize failed\n");
        text.push_str(&info.repeat(10_000));
        let full = first(&text);
        assert_eq!((full.line, full.shape), (25_003, Shape::CannReport));
        assert_eq!(full.evidence.lines.first(), Some(&25_002));
        let mut s = CausalScanner::new();
        let mut previous = false;
        for (i, line) in text.lines().enumerate() {
            let quiet = is_quiet_record(line.as_bytes());
            if !(quiet && previous) {
                s.push(i as u64 + 1, line.as_bytes());
            }
            previous = quiet;
        }
        assert_eq!(s.finish(), Some(full));
        assert!(!is_quiet_record(
            b"[ERROR] GE(1,p):2025-01-01-00:00:00.000.000 x"
        ));
        assert!(!is_quiet_record(
            b" [INFO] GE(1,p):2025-01-01-00:00:00.000.000 x"
        ));
    }

    // Windows: a candidate in a later window still loses to a stronger one in an earlier window,
    // and line numbers run on across windows.
    #[test]
    fn windows_keep_the_ordering() {
        let mut s = CausalScanner::new();
        s.push(1, b"RuntimeError: first");
        for no in 2..=(WINDOW_LINES as u64 + 10) {
            s.push(no, b"");
        }
        s.push(WINDOW_LINES as u64 + 11, b"ValueError: later");
        let c = s.finish().unwrap();
        assert_eq!(c.line, 1);
        let mut s = CausalScanner::new();
        for no in 1..=(WINDOW_LINES as u64 + 10) {
            s.push(no, b"x");
        }
        s.push(WINDOW_LINES as u64 + 11, b"ValueError: later");
        assert_eq!(s.finish().unwrap().line, WINDOW_LINES as u64 + 11);
    }

    /// The lines of a plog over three windows: a device fault (and a kernel assertion after it
    /// when `assert`) in the first, errors in every window.
    fn long_plog(assert: bool) -> Vec<String> {
        let header = |level: &str, module: &str, s: usize| {
            format!(
                "[{level}] {module}(7,p):2025-01-01-00:00:{:02}.000.000 [a.cc:1]7 ",
                s % 60
            )
        };
        let mut lines = vec![format!(
            "{}Task run failed, device_id=0",
            header("ERROR", "RUNTIME", 0)
        )];
        if assert {
            lines.push(format!(
                "{}[ASSERT] [CANN_VERSION : 8.0][TimeStamp : 0] /x/k.h:9: Assertion `i < n' failed.",
                header("ERROR", "IDEDD", 0)
            ));
        }
        for k in 1..3 * WINDOW_LINES {
            let l = match k % 5 {
                0 => format!("{}Stream Synchronize failed", header("ERROR", "RUNTIME", k)),
                1 => format!(
                    "{}report error module_type=5",
                    header("ERROR", "RUNTIME", k)
                ),
                2 => "RuntimeError: later".to_string(),
                _ => format!("{}step", header("INFO", "GE", k)),
            };
            lines.push(l);
        }
        lines
    }

    // A scanner asked for the first error only stops reading once the error and an assertion
    // are decided, with the answers of one that reads everything; without an assertion it reads
    // on.
    #[test]
    fn first_only_gives_the_answers_of_a_full_scan() {
        for assert in [true, false] {
            let lines = long_plog(assert);
            let (mut all, mut first) = (CausalScanner::new(), CausalScanner::first_only());
            let mut decided_at = None;
            for (i, l) in lines.iter().enumerate() {
                all.push(i as u64 + 1, l.as_bytes());
                first.push(i as u64 + 1, l.as_bytes());
                if decided_at.is_none() && first.decided().is_some() {
                    decided_at = Some(i);
                }
            }
            // Decided once the first window (of kept lines: one INFO line in two is dropped)
            // was analysed, when it holds the assertion.
            assert_eq!(decided_at.is_some(), assert);
            assert!(decided_at.is_none_or(|i| i < WINDOW_LINES * 5 / 4 + 1));
            assert_eq!(
                first.text.is_empty(),
                assert,
                "lines after the decision are not kept"
            );
            assert_eq!(first.saw_kernel_assert(), all.saw_kernel_assert());
            let (all, first) = (all.finish(), first.finish());
            assert_eq!(first, all);
            assert_eq!(
                first.map(|c| (c.line, c.rank)),
                Some((1, CauseRank::DeviceFault))
            );
        }
    }
}
