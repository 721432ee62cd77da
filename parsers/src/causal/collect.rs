//! Candidates: every line of a window that could be the first causal error, with its shape,
//! tier, rank and the rule that recognised it.
//!
//! Works on one window of normalised lines (see [`super::normalise`]); the scanner in
//! [`super`] cuts the input into windows so memory stays bounded.

use std::borrow::Cow;
use std::sync::LazyLock;

use crate::cann_error::{
    find_code, has_func_suffix, torch_npu, CannErrorReport, ReportAssembler, ReportItem,
};
use crate::compiler_diag::{self, parse_diagnostic, Form};
use crate::kernel_assert::is_kernel_assert;
use crate::knowledge;
use crate::line_prefix::{bare_level_tag, line_severity, Severity};
use crate::needles::{self, Needles};
use crate::plog::content::parse_content;
use crate::plog::header::{parse_header, Level, PlogHeader, PlogTime};
use crate::torch_logs::{
    aclnn_call_failed, backend_compiler_failed, embedded_error, exception_line, frame_line,
    is_chain_separator, is_traceback_start, logging_line, ExceptionLine,
};

use super::normalise::Normalised;
use super::rank::{is_framework_error_line, rank_plog_error, CauseRank};
use super::{Shape, Tier};

/// Most bytes of message text kept with one candidate (its scope).
const SCOPE_BYTES: usize = 16 * 1024;

/// One window line: the physical line number, the raw text and the normalised text.
pub(super) struct WinLine<'a> {
    pub no: u64,
    pub raw: &'a str,
    pub norm: Normalised<'a>,
    /// `norm.rest` with the window's common indentation removed.
    pub rest: &'a str,
    /// The plog header at the start of `rest.trim_start()` and the message after it, parsed
    /// once for the collection, which asks about it several times per line.
    pub plog: Option<(PlogHeader<'a>, &'a str)>,
}

impl<'a> WinLine<'a> {
    pub fn new(no: u64, raw: &'a str, norm: Normalised<'a>, rest: &'a str) -> WinLine<'a> {
        let t = rest.trim_start();
        // The normaliser's header when `rest` is its line (no indentation came off), else
        // parsed here. The message starts after the timestamp (ASCII), so at a char boundary.
        let plog = match &norm.header {
            Some(h) if t.len() == norm.rest.len() => Some(h.clone()),
            _ => parse_header(t.as_bytes())
                .and_then(|(h, msg)| Some((h, t.get(t.len() - msg.len()..)?))),
        };
        WinLine {
            no,
            raw,
            norm,
            rest,
            plog,
        }
    }

    /// [`WinLine::plog`] when `rest` itself starts with the header (no indentation before it).
    fn plog_at_start(&self) -> Option<&(PlogHeader<'a>, &'a str)> {
        self.plog.as_ref().filter(|_| self.rest.starts_with('['))
    }
}

/// Lines that belong to an error, by line number: borrowed from the window where they are its
/// text (most candidates are dropped; only the ranked ones are copied out).
pub(super) type Scope<'w> = Vec<(u64, Cow<'w, str>)>;

/// A candidate first causal error.
#[derive(Debug, Clone)]
pub(super) struct Candidate<'w> {
    pub index: usize,
    pub tier: Tier,
    pub rank: CauseRank,
    pub shape: Shape,
    pub rule: &'static str,
    pub message: String,
    /// Lines that belong to the error: its message continuation, its CANN block.
    pub scope: Scope<'w>,
    /// Traceback frames above a Python exception (or above the wrapper of a CANN report).
    pub frames: Vec<(u64, String)>,
    pub root_index: Option<usize>,
    pub exception_type: Option<String>,
    /// The wrapper exception this candidate was unwrapped from (1-based line).
    pub wrapper_line: Option<u64>,
    pub pid: Option<i64>,
    pub time: Option<PlogTime>,
}

impl Candidate<'_> {
    fn new(index: usize, tier: Tier, rank: CauseRank, shape: Shape, rule: &'static str) -> Self {
        Candidate {
            index,
            tier,
            rank,
            shape,
            rule,
            message: String::new(),
            scope: Vec::new(),
            frames: Vec::new(),
            root_index: None,
            exception_type: None,
            wrapper_line: None,
            pid: None,
            time: None,
        }
    }
}

/// Wording of errors that only report that something else failed.
const CASCADE_WORDS: &[&str] = &[
    "the inner error is reported as above",
    "npu function error:",
    "function error:",
    "event query",
    "queryevent",
    "aclqueryeventrecordedstatus",
    "watchdog thread terminated",
    "terminate called after throwing",
    "find exception when",
    "replay failed",
    "task failed",
    // A tool run as a subprocess (`subprocess.CalledProcessError`): its own output says why.
    "returned non-zero exit status",
    // A wrapper that sends the reader elsewhere (vLLM's `EngineDeadError: … See stack trace
    // (above) for the root cause.`, `Worker failed with error '…', please check the stack trace
    // above for the root cause`).
    "for the root cause",
    // vLLM's `RuntimeError: Engine core initialization failed. See root cause above.` and its
    // engine core's `… See stack trace for root cause.`
    "see root cause above",
    "for root cause",
    // torch's and torch_npu's process groups after the watchdog caught an error: `Some HCCL
    // operations have failed or timed out. …`, `To avoid data inconsistency, we are taking the
    // entire process down.`
    "operations have failed or timed out",
    "taking the entire process down",
    // Ray Train's `TrainingFailedError: The Ray Train run failed. Please inspect the previous
    // error messages for a cause.`
    "inspect the previous error messages",
    // MindSpore's `RuntimeError: Run task for graph:kernel_graph_37 error! The details refer to
    // 'Ascend Error Message'.`: the report it names, or the device's records, say why.
    "the details refer to 'ascend error message'",
    // PaddlePaddle's `core.py` before it re-raises the import's error (`Error: Can not import
    // paddle core while this file exists: …/libpaddle.so`): the ImportError below says why.
    // (before 2.5 `Can not import avx core …` or `… noavx core …`)
    "core while this file exists",
    // torch's autoload of an out-of-tree backend (`torch/__init__.py`, `_import_device_backends`:
    // `RuntimeError: Failed to load the backend extension: torch_npu. You can disable extension
    // auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0.`), raised from the import's own error.
    "failed to load the backend extension",
    // ONNX Runtime's relay of a node's failed status (`Non-zero status code returned while
    // running Conv node. Name:'…' Status Message: …`): the kernel's own record says why.
    "non-zero status code",
];

/// Wording of a failed synchronisation: a cascade of whatever failed on the stream, unless the
/// message names the device's fault by its runtime error number
/// (`ACL stream synchronize failed, error code:507035`): then it is that fault's first report.
/// Plog records are ranked by [`rank_plog_error`], which keeps them a cascade: in a plog the
/// device's own records of the fault come before the synchronisation that reports it.
const SYNC_WORDS: &[&str] = &[
    "synchronize stream failed",
    "stream synchronize failed",
    "synchronize failed",
];

/// Whether an error message only reports that something else failed.
pub fn is_cascade_text(s: &str) -> bool {
    static CASCADE: LazyLock<Needles> =
        LazyLock::new(|| Needles::new(CASCADE_WORDS.iter().copied()));
    static SYNC: LazyLock<Needles> = LazyLock::new(|| Needles::new(SYNC_WORDS.iter().copied()));
    let lower = s.to_ascii_lowercase();
    CASCADE.any_in(&lower)
        || (SYNC.any_in(&lower) && !names_device_fault(s))
        || compiler_diag::is_compile_wrapper(s)
        || aclnn_call_failed(s).is_some()
        || only_says_where(s)
        || only_inner_header(s)
        || opencv_title(s)
}

/// The first line of OpenCV's exception message in its multi-line form
/// (`cv::Exception::formatMessage` when the error's text spans lines, as the CANN report
/// OpenCV's cannops module appends does): `OpenCV(<version>) <file>:<line>: error: (<code>:<code
/// name>) in function '<function>'`, the text on the lines after it. That first line says
/// where and the code's name only; the one-line form puts the text between the code and ` in
/// function` and is not one.
fn opencv_title(s: &str) -> bool {
    const ERROR: &str = ": error: (";
    let Some(at) = needles::find(s, ERROR) else {
        return false;
    };
    let Some((code, function)) = s[at + ERROR.len()..].split_once(") in function '") else {
        return false;
    };
    // `-2:Unspecified error`: a number and a code's name, no text of the error's own (the
    // one-line form's text may end in `)` before ` in function`: `!_src.empty()`).
    let numbered = code.split_once(':').is_some_and(|(n, name)| {
        n.strip_prefix('-').unwrap_or(n).parse::<u32>().is_ok() && !name.contains(['(', ')'])
    });
    numbered
        && function
            .trim_end()
            .strip_suffix('\'')
            .is_some_and(|f| !f.is_empty() && !f.contains('\''))
}

/// A message that is only a CANN inner-code header (`E89999: Inner Error!`, `EZ9999: Internal
/// Error!`): the report's next line carries the message.
fn only_inner_header(msg: &str) -> bool {
    let t = msg.trim();
    let rest = match find_code(t) {
        Some(0) => t
            .get(6..)
            .unwrap_or("")
            .trim_start_matches(':')
            .trim_start(),
        _ => t,
    };
    // The header and nothing after it.
    crate::cann_error::inner_header(rest) && rest.trim_end().ends_with('!') && rest.len() <= 16
}

/// Words that say that an error happened, not what it was.
const WHERE_WORDS: &[&str] = &[
    "error",
    "errors",
    "failed",
    "fail",
    "failure",
    "exception",
    "in",
    "at",
    "from",
    "on",
    "the",
    "an",
    "a",
    "occurred",
    "occurs",
    "raised",
    "code",
    "is",
    "function",
    "call",
    "calling",
];

/// Whether a message only says where an error passed — a component, "error in" and a source
/// location (`[ERROR] HCCL error in: …/ProcessGroupHCCL.cpp:1234`, `NPU error at foo.cc:12,
/// error code is 4`) — and nothing of what failed. Such a line is a wrapper wherever it comes
/// from: the report after it states the cause. A message with any other word (an API name, a
/// description) is not.
pub fn only_says_where(msg: &str) -> bool {
    let mut located = false;
    for raw in msg.split_whitespace() {
        let t = raw.trim_matches(|c: char| "[](){}<>,;:.'\"`!".contains(c));
        if t.is_empty() || t.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        if is_source_location(t) {
            located = true;
            continue;
        }
        let lower = t.to_ascii_lowercase();
        if WHERE_WORDS.contains(&lower.as_str()) {
            continue;
        }
        // A component name in capitals (`HCCL`, `NPU`, `ACL`, `ERROR`, `DIST`).
        if t.len() <= 6 && t.bytes().all(|b| b.is_ascii_uppercase()) {
            continue;
        }
        return false;
    }
    located
}

/// A path or `file.ext:line` token of a C++ / Python source (`…/ProcessGroupHCCL.cpp:1234`,
/// `compiler_depend.ts:48`).
fn is_source_location(t: &str) -> bool {
    let file = t.rsplit('/').next().unwrap_or(t);
    let file = file.split(':').next().unwrap_or(file);
    let Some((stem, ext)) = file.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty() && matches!(ext, "cpp" | "cc" | "cxx" | "c" | "h" | "hpp" | "py" | "ts")
}

/// Exceptions Dynamo raises *because* of recompilations that were reported before them.
const CONSEQUENCE_EXCEPTIONS: &[&str] = &[
    "FailOnRecompileLimitHit",
    "RecompileLimitExceeded",
    "CacheLimitExceeded",
];

/// CANN's `TraceBack (most recent call last):` header (any indentation).
pub(crate) fn is_cann_traceback(line: &str) -> bool {
    line.trim() == "TraceBack (most recent call last):"
}

/// Whether the lines from window index `from` open one of MindSpore's error sections that
/// states the failure an exception above it summarises: a `- Device load error message:` section
/// whose first line states a broken environment (`Load dynamic library: libmindspore_ascend.so.2
/// failed. libge_runner.so: cannot open shared object file …`), or an `- Ascend Error Message:`
/// section that holds a CANN report. Each section is a title between two rulers of dashes, after
/// blank lines.
fn mindspore_detail(w: &[WinLine<'_>], from: usize) -> bool {
    let mut lines = w
        .iter()
        .skip(from)
        .filter(|l| !l.norm.skip)
        .map(|l| l.rest.trim())
        .skip_while(|t| t.is_empty())
        .take(8);
    let ruler = |t: Option<&str>| t.is_some_and(|t| t.len() >= 20 && t.bytes().all(|b| b == b'-'));
    if !ruler(lines.next()) {
        return false;
    }
    let title = lines.next().unwrap_or("");
    if !ruler(lines.next()) {
        return false;
    }
    let Some(first) = lines.find(|t| !t.is_empty()) else {
        return false;
    };
    match title {
        "- Device load error message:" => {
            knowledge::stated_cause(first).is_some_and(|f| f.kind == knowledge::Kind::Environment)
        }
        "- Ascend Error Message:" => find_code(first) == Some(0),
        _ => false,
    }
}

/// torch_npu's hint line: `[Error]: The aicore execution times out.`
fn torch_npu_hint(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("[Error]:").map(str::trim)
}

/// Drops a `[FUNC:…][FILE:…][LINE:…]` tail.
fn strip_location(msg: &str) -> &str {
    let msg = msg.trim();
    needles::find(msg, "[FUNC:").map_or(msg, |i| msg[..i].trim_end())
}

fn push_scope<'w>(scope: &mut Scope<'w>, no: u64, text: &'w str) {
    if let Some(cut) = scope_room(scope, text) {
        scope.push((no, Cow::Borrowed(&text[..cut])));
    }
}

/// [`push_scope`] of a text that does not live in the window.
fn push_scope_copy(scope: &mut Scope<'_>, no: u64, text: &str) {
    if let Some(cut) = scope_room(scope, text) {
        scope.push((no, Cow::Owned(text[..cut].to_string())));
    }
}

/// How much of `text` fits in the scope's byte budget (cut at a char boundary); `None` when the
/// budget is spent.
fn scope_room(scope: &Scope<'_>, text: &str) -> Option<usize> {
    let used: usize = scope.iter().map(|(_, s)| s.len()).sum();
    (used < SCOPE_BYTES).then(|| floor_char(text, SCOPE_BYTES - used))
}

/// The largest char boundary ≤ `at`.
pub(super) fn floor_char(s: &str, at: usize) -> usize {
    if at >= s.len() {
        return s.len();
    }
    let mut i = at;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// Lines following an error line that continue its message (until a blank line or the next
/// recognisable record), at most `limit`.
fn continuation<'w>(w: &[WinLine<'w>], from: usize, limit: usize, scope: &mut Scope<'w>) -> usize {
    let mut i = from;
    while i < w.len() && i < from + limit {
        let l = w[i].rest;
        if w[i].norm.skip {
            i += 1;
            continue;
        }
        if l.trim().is_empty() || (exception_line(l).is_some() && i > from) || starts_its_own(&w[i])
        {
            break;
        }
        push_scope(scope, w[i].no, l);
        i += 1;
    }
    i
}

/// Whether a line starts a record of its own, so it continues no message above it: a traceback
/// or its frame, a compiler's diagnostic, a CANN code or `TraceBack`, a torch_npu line or hint,
/// a plog record.
fn starts_its_own(l: &WinLine<'_>) -> bool {
    let t = l.rest;
    is_traceback_start(t)
        || error_diagnostic(t).is_some()
        || frame_line(t).is_some()
        || find_code(t).is_some()
        || is_cann_traceback(t)
        || torch_npu::parse_torch_npu_line(t.trim()).is_some()
        || torch_npu_hint(t).is_some()
        || l.plog_at_start().is_some()
}

/// Parses the window's CANN error reports, keyed by window index of their start line.
fn reports(w: &[WinLine<'_>]) -> Vec<(usize, CannErrorReport)> {
    let mut asm = ReportAssembler::default();
    // CANN blocks are indentation-sensitive: they get the lines as printed (prefixes peeled,
    // the paste's common indentation kept).
    for l in w.iter().filter(|l| !l.norm.skip) {
        asm.push(l.no, l.norm.rest.as_bytes());
    }
    asm.finish()
        .into_iter()
        .filter_map(|r| {
            let i = index_of(w, r.line);
            (w.get(i)?.no == r.line).then_some((i, r))
        })
        .collect()
}

/// The window index of physical line `line` (line numbers have gaps where the scanner dropped
/// quiet records), or of the first line after it.
fn index_of(w: &[WinLine<'_>], line: u64) -> usize {
    w.partition_point(|l| l.no < line)
}

/// The level a normalised line states ([`line_severity`]): [`below_error`], [`chatter`] and
/// [`warning_level`] ask it.
fn line_level(n: &Normalised<'_>, t: &str) -> Option<Severity> {
    line_severity(&n.prefixes, t)
}

/// Debug or INFO chatter by its level ([`line_level`]).
fn chatter(n: &Normalised<'_>, t: &str) -> bool {
    line_level(n, t).is_some_and(Severity::chatter)
}

/// A line below an error's level: chatter, a warning ([`warning_level`]), or a glog header the
/// user cut to `...` (TORCH_LOGS chatter, whatever its lost level).
fn below_error(n: &Normalised<'_>, t: &str) -> bool {
    line_level(n, t).is_some_and(Severity::below_error)
        || n.glog_level() == Some('?')
        || worded_warning(t)
}

/// Every candidate of the window, in line order.
pub(super) fn collect<'w>(w: &[WinLine<'w>]) -> Vec<Candidate<'w>> {
    let mut c = Collector {
        w,
        reports: reports(w),
        out: Vec::new(),
        frames: Vec::new(),
        wrapper: None,
        break_reasons: false,
        frame_indent: None,
        first_text: w
            .iter()
            .position(|l| !l.rest.trim().is_empty())
            .filter(|_| w.first().is_some_and(|l| l.no == 1)),
    };
    let mut i = 0;
    while i < w.len() {
        i = c.line(i);
    }
    c.finish()
}

/// What [`collect`] carries from one line of the window to the next.
struct Collector<'a, 'w> {
    w: &'a [WinLine<'w>],
    /// The window's CANN reports, in line order, by the window index of their start line.
    reports: Vec<(usize, CannErrorReport)>,
    out: Vec<Candidate<'w>>,
    /// The frames of the traceback being read.
    frames: Vec<(u64, String)>,
    /// The last wrapper exception (cascade tier) and its frames, for a CANN report that follows.
    wrapper: Option<(u64, Vec<(u64, String)>)>,
    /// Inside `torch._dynamo.explain()`'s `Break Reasons:` list.
    break_reasons: bool,
    /// Indentation of the last traceback frame: an exception line sits two columns left of it
    /// (a paste that indents a traceback indents its exception too).
    frame_indent: Option<usize>,
    /// The window index of its first line with text, when the window starts the text.
    first_text: Option<usize>,
}

/// The CANN report starting at window index `i` (`reports` is in line order).
fn report_at(reports: &[(usize, CannErrorReport)], i: usize) -> Option<&CannErrorReport> {
    reports
        .binary_search_by_key(&i, |(at, _)| *at)
        .ok()
        .map(|k| &reports[k].1)
}

/// What an exception's message says: its first line, and the line below it when the first is
/// only where it was raised (torch_npu 2.5 and later end it at the source location —
/// `RuntimeError: matmul_implement_npu: MatmulKernelNpuOpApi.cpp:92` — and go on below it).
fn said_below(message: &str, next: Option<&(u64, Cow<'_, str>)>) -> String {
    match next {
        Some((_, next)) if located_only(message) => format!("{message}\n{next}"),
        _ => message.to_string(),
    }
}

/// An exception's message that is only where it was raised: a function and a C++ source's line
/// (`matmul_implement_npu: MatmulKernelNpuOpApi.cpp:92`, `addmm:build/…/compiler_depend.ts:112`).
pub(super) fn located_only(message: &str) -> bool {
    let t = message.trim();
    let Some((function, source)) = t.split_once(':') else {
        return false;
    };
    let (file, line) = source.trim_start().rsplit_once(':').unwrap_or(("", ""));
    let function = function.trim();
    !function.is_empty()
        && function
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_')
        && [".cpp", ".cc", ".cxx", ".c", ".h", ".hpp", ".cu", ".ts"]
            .iter()
            .any(|x| file.ends_with(x))
        && !file.contains(' ')
        && !line.is_empty()
        && line.bytes().all(|b| b.is_ascii_digit())
}

/// The tier of a Python exception: soft under a debug-level prefix, a cascade when it only
/// reports that something else failed, else strong.
fn exception_tier(soft: bool, message: &str, type_name: &str) -> Tier {
    if soft {
        Tier::Soft
    } else if is_cascade_text(message)
        || CONSEQUENCE_EXCEPTIONS
            .iter()
            .any(|x| type_name.ends_with(x))
        || compiler_diag::is_wrapper_exception(type_name)
    {
        Tier::Cascade
    } else {
        Tier::Strong
    }
}

impl<'w> Collector<'_, 'w> {
    /// Reads window line `i` and returns the index of the next line to read.
    fn line(&mut self, i: usize) -> usize {
        let w = self.w;
        let mut line = w[i].rest;
        let indent = line.len() - line.trim_start_matches(' ').len();
        // An exception two columns left of its frames (a paste that indents a traceback indents
        // its exception too), or a paste's first line that picked up a space or two.
        let under_frames = self.frame_indent.is_some_and(|f| f >= 2 && indent == f - 2);
        let paste_start = self.first_text == Some(i) && indent <= 3;
        if indent > 0
            && (under_frames || paste_start)
            && exception_line(line.trim_start()).is_some()
        {
            line = line.trim_start();
        }
        let n = &w[i].norm;
        if n.skip || line.trim().is_empty() {
            return i + 1;
        }
        // The bulk of a plog: records below ERROR are never candidates (a header line also
        // ends any CANN block, so skipping them loses nothing).
        // (`line` is `rest` or `rest.trim_start()`: starting with `[`, it is the text `plog` was
        // read from.)
        if line.starts_with('[')
            && w[i]
                .plog
                .as_ref()
                .is_some_and(|(h, _)| h.level != Level::Error)
        {
            return i + 1;
        }
        let soft = chatter(n, line.trim()) || n.glog_level() == Some('?');
        if is_traceback_start(line) {
            self.frames.clear();
            return i + 1;
        }
        if let Some(f) = frame_line(line) {
            self.frame(i, indent, &f.file, f.function.as_deref());
            return i + 1;
        }
        let t = line.trim();
        if let Some(next) = self.graph_break(i, t) {
            return next;
        }
        if let Some(next) = self.recompile(i, t) {
            return next;
        }
        // CANN error reports: code line, or a cut excerpt's TraceBack.
        if let Some(report) = report_at(&self.reports, i) {
            if exception_line(line).is_none() {
                let (mut c, end) = report_candidate(w, i, report, soft);
                if let Some((wl, wf)) = self.wrapper.take() {
                    c.wrapper_line = Some(wl);
                    c.frames = wf;
                }
                merge_with_hint(&mut self.out, c, w);
                return end;
            }
        }
        if let Some(next) = self.diagnostic(i, t, soft) {
            return next;
        }
        if let Some(next) = self.cmake(i, t, soft) {
            return next;
        }
        if let Some(next) = self.pip_conflict(i, t, soft) {
            return next;
        }
        if let Some(next) = self.argparse_usage(i, t, soft) {
            return next;
        }
        if let Some(next) = self.installer_unresolved(i, t, soft) {
            return next;
        }
        if let Some(next) = self.container_daemon(i, t, soft) {
            return next;
        }
        if let Some(next) = self.kubernetes_event(i, t, soft) {
            return next;
        }
        if let Some(e) = exception_line(line) {
            return self.exception(i, line, &e, soft);
        }
        if let Some(hint) = torch_npu_hint(line) {
            self.hint(i, hint);
            return i + 1;
        }
        if let Some(mut c) = classify_other(w, i, soft) {
            if c.shape == Shape::PlogRecord {
                for k in (i + 1..w.len()).take(12) {
                    // A run of ERROR plog records is every one's scope.
                    if !is_plog_error(&w[k]) {
                        break;
                    }
                    push_scope(&mut c.scope, w[k].no, w[k].rest);
                }
            }
            self.out.push(c);
        }
        i + 1
    }

    /// A compiler's error diagnostic at window index `i` (trimmed text `t`): a candidate with the
    /// lines that show where (the source line and its caret); the next index when it was one. A
    /// diagnostic that only says a pipeline failed is a wrapper (cascade).
    fn diagnostic(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        let w = self.w;
        if let Some(next) = self.needed_library(i, t, soft) {
            return Some(next);
        }
        let d = error_diagnostic(t)?;
        // A syntax error on a line where a later diagnostic says a name is unknown (clang's
        // `unexpected type name 'half'` before `no member named 'copy_gm_to_ub'` on the same
        // line: the parser stumbled on the unknown template) follows from that name.
        let stumbled = d.is_syntax()
            && (i + 1..w.len().min(i + 40)).any(|k| {
                // The unknown name stands before where the parser stumbled (`int x = y z;`:
                // `expected ';'` at `z` is the cause, whatever `z` is).
                error_diagnostic(w[k].norm.rest.trim()).is_some_and(|e| {
                    e.is_name_lookup()
                        && e.file == d.file
                        && e.line == d.line
                        && d.line.is_some()
                        && e.column < d.column
                })
            });
        let tier = if soft {
            Tier::Soft
        } else if compiler_diag::is_compile_wrapper(d.message) || stumbled {
            Tier::Cascade
        } else {
            Tier::Strong
        };
        let rule = if d.form == Form::Linker || compiler_diag::is_link_wrapper(t) {
            "linker.error"
        } else {
            "compiler.diagnostic"
        };
        let mut c = Candidate::new(
            i,
            tier,
            CauseRank::ErrorReport,
            Shape::CompilerDiagnostic,
            rule,
        );
        c.message = t.to_string();
        c.scope.push((w[i].no, t.into()));
        // clang prints the source line and a caret under the column; a linker's line (and
        // `collect2`'s) goes on with lld's `>>> referenced by` lines or binutils' `first defined
        // here`, never into a line of its own (another reference, ld's warning).
        let end = if rule == "linker.error" {
            let mut k = i + 1;
            while k < w.len().min(i + 3) {
                let l = w[k].rest.trim();
                if l.is_empty() || parse_diagnostic(l).is_some() || starts_its_own(&w[k]) {
                    break;
                }
                push_scope(&mut c.scope, w[k].no, l);
                k += 1;
            }
            k
        } else {
            continuation(w, i + 1, 2, &mut c.scope)
        };
        c.frames = self.frames.clone();
        self.out.push(c);
        Some(end.max(i + 1))
    }

    /// GNU ld's warning that a library another one needs was not found (`/usr/bin/ld: warning:
    /// libdevmm.so, needed by /usr/local/Ascend/acllib/lib64/libruntime.so, not found (try using
    /// -rpath or -rpath-link)`) at window index `i`, with an undefined reference made by a shared
    /// library ([`library_reference`]) within [`NEEDED_NEAR`] lines of it (after it, or before it
    /// where parallel make jobs interleave their output): those references are symbols the
    /// missing library would have brought, so the warning is the cause (`linker.error`;
    /// [`needed_library_explains`] makes them its cascades). A reference from the program's own
    /// objects, another link error, or none near it: the warning stays a warning. The next
    /// index.
    fn needed_library(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        let w = self.w;
        if !t.contains(", needed by ") {
            return None;
        }
        let d = parse_diagnostic(t)
            .filter(|d| d.form == Form::Linker && d.severity == compiler_diag::Severity::Warning)?;
        let (_, needer) = d.message.split_once(", needed by ")?;
        if !needer.contains(", not found") {
            return None;
        }
        let failed = (i.saturating_sub(NEEDED_NEAR)..w.len().min(i + NEEDED_NEAR + 1))
            .any(|k| k != i && library_reference(w[k].norm.rest.trim()));
        if !failed {
            return None;
        }
        let mut c = Candidate::new(
            i,
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::ErrorReport,
            Shape::CompilerDiagnostic,
            "linker.error",
        );
        c.message = t.to_string();
        c.scope.push((w[i].no, t.into()));
        c.frames = self.frames.clone();
        self.out.push(c);
        Some(i + 1)
    }

    /// pip's resolver at window index `i` (trimmed text `t`): under `The conflict is caused
    /// by:` it lists the requirements that cannot all hold (`The user requested torch==2.9.0`,
    /// `torch-npu 2.9.0 depends on torch==2.9.0+cpu`), indented, up to a blank line; the first
    /// a package states (`… depends on …`) is the cause (a requirement the user asked for is what
    /// it contradicts), else the first listed. An environment fault; the next index.
    ///
    /// Under BuildKit every line of the step carries the seconds it was printed at (`341.8
    /// The user requested torch==2.3.1`, each line its own): they are peeled from every line.
    /// Of the packages' requirements, the first that the user did not ask for in those words
    /// (`torch-npu 2.3.1 depends on torch==2.3.1+cpu` beside `The user requested torch==2.3.1`)
    /// is the one that contradicts the others.
    fn pip_conflict(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        const HEADER: &str = "The conflict is caused by:";
        let w = self.w;
        if after_build_seconds(t) != HEADER {
            return None;
        }
        let listed_text = |k: usize| after_build_seconds(w[k].rest);
        let end = (i + 1..w.len().min(i + 33))
            .find(|&k| {
                let r = listed_text(k);
                r.trim().is_empty() || !r.starts_with([' ', '\t'])
            })
            .unwrap_or(w.len().min(i + 33));
        let listed = i + 1..end;
        // `The user requested torch==2.3.1`, also `… requested (constraint) torch==2.3.1`.
        let requested: Vec<&str> = listed
            .clone()
            .filter_map(|k| {
                let r = listed_text(k).trim().strip_prefix("The user requested ")?;
                Some(r.strip_prefix("(constraint) ").unwrap_or(r))
            })
            .collect();
        let depends = |k: &usize| {
            listed_text(*k)
                .split_once(" depends on ")
                .map(|(_, req)| req.trim())
        };
        // Of the packages' own requirements, an Ascend adapter's (`vllm-ascend 0.13.0 depends on
        // torch==2.8.0` beside `vllm 0.13.0 depends on torch==2.9.0`, `torch-npu 2.6.0 depends on
        // torch==2.6.0+cpu`): its release notes pin what it was built against, so the choice of
        // versions starts there.
        let ascend = |k: &usize| {
            listed_text(*k)
                .split_once(" depends on ")
                .is_some_and(|(p, _)| {
                    let name = p.split_whitespace().next().unwrap_or("");
                    name.split(['-', '_', '.'])
                        .any(|w| w.eq_ignore_ascii_case("npu") || w.eq_ignore_ascii_case("ascend"))
                })
        };
        let own = |k: &usize| depends(k).is_some_and(|r| !requested.contains(&r));
        let at = listed
            .clone()
            .find(|k| own(k) && ascend(k))
            .or_else(|| listed.clone().find(own))
            .or_else(|| listed.clone().find(|k| depends(k).is_some()))
            .or_else(|| listed.clone().next())?;
        let mut c = Candidate::new(
            at,
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::Framework,
            Shape::EnvironmentLine,
            PIP_CONFLICT,
        );
        let said = listed_text(at).trim();
        c.message = format!("{said} (pip found no set of versions that meets every requirement)");
        c.scope.push((w[i].no, t.into()));
        for k in listed {
            push_scope(&mut c.scope, w[k].no, w[k].rest.trim());
        }
        self.out.push(c);
        Some(end)
    }

    /// A program's argument parser refusing its command line at window index `i` (trimmed text
    /// `t`: [`compiler_diag::argparse_error`]): an environment fault ([`ARGPARSE_USAGE`]); the
    /// next index.
    fn argparse_usage(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        compiler_diag::argparse_error(t)?;
        let tier = if soft { Tier::Soft } else { Tier::Strong };
        let mut c = Candidate::new(
            i,
            tier,
            CauseRank::Framework,
            Shape::EnvironmentLine,
            ARGPARSE_USAGE,
        );
        c.message = t.to_string();
        c.scope.push((self.w[i].no, t.into()));
        self.out.push(c);
        Some(i + 1)
    }

    /// A package installer that found no release to install, at window index `i` (trimmed text
    /// `t`): pip's `ERROR: Could not find a version that satisfies the requirement X (from
    /// versions: …)` (with the `ERROR: No matching distribution found for X` after it) or the
    /// latter alone; uv's resolver, `× No solution found when resolving dependencies:` over its
    /// explanation (`╰─▶ Because there is no version of X==1 and you require X==1, we can
    /// conclude that your requirements are unsatisfiable.`, the line cited, with the indented
    /// lines that go on with it), or that explanation after `error: ` in uv's first releases. An
    /// explanation in which a package states a requirement (`… depends on …`) is a conflict
    /// between requirements, read as pip's ([`PIP_CONFLICT`]). An environment fault; the next
    /// index.
    fn installer_unresolved(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        const PIP: [&str; 2] = [
            "ERROR: Could not find a version that satisfies the requirement ",
            "ERROR: No matching distribution found for ",
        ];
        const UV: &str = "No solution found when resolving dependencies";
        let w = self.w;
        let t = after_build_seconds(t);
        let uv_header = t
            .strip_prefix('×')
            .is_some_and(|h| h.trim_start().starts_with(UV));
        let said = |k: usize| w[k].rest.trim();
        let (at, end) = if t.starts_with(PIP[0]) {
            // pip's second line says the same of the same requirement.
            let next = w.get(i + 1).map(|l| after_build_seconds(l.rest.trim()));
            (
                i,
                i + 1 + usize::from(next.is_some_and(|n| n.starts_with(PIP[1]))),
            )
        } else if t.starts_with(PIP[1])
            || t.strip_prefix("error: Because ")
                .is_some_and(|e| e.contains("we can conclude that"))
        {
            (i, i + 1)
        } else if uv_header {
            let at = (i + 1..w.len().min(i + 3))
                .find(|&k| !said(k).is_empty())
                .filter(|&k| said(k).starts_with("╰─▶"))
                .unwrap_or(i);
            // The explanation goes on, indented, up to a blank line.
            let end = (at + 1..w.len().min(at + 40))
                .find(|&k| said(k).is_empty() || !w[k].rest.starts_with(char::is_whitespace))
                .unwrap_or(w.len().min(at + 40));
            (at, end.max(at + 1))
        } else {
            return None;
        };
        // The explanation as one sentence (uv wraps it); a requirement a package states
        // (`torch-npu==2.5.1 depends on torch==2.5.1`) against another makes it pip's
        // conflict, not a missing release.
        let explained = if uv_header {
            w[at..end]
                .iter()
                .map(|l| {
                    after_build_seconds(l.rest.trim())
                        .trim_start_matches("╰─▶")
                        .trim()
                })
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            said(at).to_string()
        };
        let conflict = uv_header && explained.contains(" depends on ");
        let mut c = Candidate::new(
            at,
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::Framework,
            Shape::EnvironmentLine,
            if conflict {
                PIP_CONFLICT
            } else {
                INSTALLER_UNRESOLVED
            },
        );
        let first: String = explained.chars().take(400).collect();
        c.message = if conflict {
            format!("{first} (the resolver found no set of versions that meets every requirement)")
        } else {
            format!("{first} (the installer found no release to install)")
        };
        for l in &w[i..end] {
            push_scope(&mut c.scope, l.no, l.rest.trim());
        }
        self.out.push(c);
        Some(end)
    }

    /// Docker's `Error response from daemon: …` at window index `i` (trimmed text `t`; `docker
    /// run` prints it after `docker: `), or containerd's `OCI runtime create failed: …` (or
    /// `start`) anywhere in a line that relays it at an error level (a program's error record or
    /// exception: `Failed to create workload x: Docker Server Error: failed to create task for
    /// container: failed to create shim task: OCI runtime create failed: …`): the container could
    /// not be created or started, and the chain of causes runs left to right, the last one first
    /// to fail. When the chain ends with a hook's or runtime's own output (`… error running
    /// prestart hook #0: exit status 255, stdout: , stderr: <text>`) that goes on over the next
    /// lines (none behind a logger prefix), up to the one that closes with containerd's status
    /// (`…: unknown`, [`closes_chain`]), the first of those lines that says something failed is
    /// the cause; otherwise the line itself. An environment fault; the next index.
    fn container_daemon(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        let w = self.w;
        let daemon = t
            .strip_prefix("docker: ")
            .unwrap_or(t)
            .strip_prefix("Error response from daemon:");
        let relayed = || {
            let n = &w[i].norm;
            if below_error(n, t) {
                return None;
            }
            ["OCI runtime create failed:", "OCI runtime start failed:"]
                .iter()
                .find_map(|n| needles::find(t, n).map(|at| &t[at + n.len()..]))
        };
        let message = daemon.or_else(relayed)?;
        let stderr_goes_on = message
            .rsplit_once("stderr: ")
            .is_some_and(|(_, said)| !closes_chain(said));
        let mut end = i + 1;
        let mut at = i;
        if stderr_goes_on {
            while end < w.len().min(i + 16)
                && !w[end].rest.trim().is_empty()
                && w[end].norm.continues(&w[i].norm)
            {
                let l = w[end].rest.trim();
                if at == i && l.to_ascii_lowercase().contains("fail") {
                    at = end;
                }
                end += 1;
                if closes_chain(l) {
                    break;
                }
            }
        }
        let mut c = Candidate::new(
            at,
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::Framework,
            Shape::EnvironmentLine,
            CONTAINER_DAEMON,
        );
        let said = w[at].rest.trim();
        c.message = format!("{said} (the container could not be created or started)");
        c.scope.push((w[i].no, t.into()));
        for l in &w[i + 1..end] {
            push_scope(&mut c.scope, l.no, l.rest.trim());
        }
        self.out.push(c);
        Some(end)
    }

    /// A row of Kubernetes' events table (`kubectl describe`: type, reason, age, from, message
    /// between runs of spaces) that reports a failure: a `Warning` row, or a row pasted without
    /// its type whose reason says it failed (`Failed…`, `…Error`). The cluster refused the pod
    /// (no node with the NPU resource free, a device plug-in that could not allocate): the next
    /// index.
    fn kubernetes_event(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        let (reason, message) = kubernetes_warning(t)?;
        let mut c = Candidate::new(
            i,
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::Framework,
            Shape::EnvironmentLine,
            KUBERNETES_EVENT,
        );
        c.message = format!("{message} (Kubernetes event {reason})");
        c.scope.push((self.w[i].no, t.into()));
        self.out.push(c);
        Some(i + 1)
    }

    /// A CMake error at window index `i` (trimmed text `t`): its message — on the line, or the
    /// indented lines under `CMake Error at <file>:<line> (<command>):` up to the call stack or
    /// an unindented line (across a blank line followed by more of them) — is a build's cause,
    /// like a compiler's diagnostic; the next index.
    fn cmake(&mut self, i: usize, t: &'w str, soft: bool) -> Option<usize> {
        let w = self.w;
        let inline = compiler_diag::cmake_error(t)?;
        let (at, message) = if inline.is_empty() {
            // CMake indents the message under its header; the call stack is not one.
            let j = i + 1;
            let next = w.get(j)?.rest;
            if !next.starts_with(' ') || next.trim().is_empty() {
                return None;
            }
            (j, next.trim())
        } else {
            (i, inline)
        };
        let tier = if soft { Tier::Soft } else { Tier::Strong };
        let mut c = Candidate::new(
            at,
            tier,
            CauseRank::ErrorReport,
            Shape::CompilerDiagnostic,
            "cmake.error",
        );
        c.message = message.to_string();
        c.scope.push((w[i].no, t.into()));
        let mut end = at + 1;
        if at > i {
            push_scope(&mut c.scope, w[at].no, w[at].rest.trim());
            // The message's indented lines, across the blank line CMake puts before a quoted
            // path (`include could not find requested file:`, blank, the path).
            while end < w.len().min(at + 12) {
                let next = w[end].rest;
                let indented = |l: &str| l.starts_with(' ') && !l.trim().is_empty();
                if next.trim().is_empty() && w.get(end + 1).is_some_and(|l| indented(l.rest)) {
                    end += 1;
                    continue;
                }
                if !indented(next) {
                    break;
                }
                push_scope(&mut c.scope, w[end].no, next.trim());
                end += 1;
            }
        }
        // A CMake error that says a git step failed (`Failed to get submodule Paddle`), after
        // git's own `fatal: ` line (`fatal: not a git repository …`): git's line says why, and is
        // the one cited (wider-world batch 26). Not any `fatal:` above any error: builds print
        // git's complaints about version look-ups as noise.
        // The words `git` and `submodule`, whole, in any line of the message (not `gitee`).
        let about_git = c.scope.iter().any(|(_, l)| {
            l.to_ascii_lowercase()
                .split(|ch: char| !ch.is_ascii_alphanumeric())
                .any(|word| word == "git" || word.starts_with("submodule"))
        });
        // git's `die()` prefix, in English or in its Simplified Chinese translation.
        let git_said = (i.saturating_sub(10)..i).rev().find(|&k| {
            let l = w[k].rest.trim_start();
            l.starts_with("fatal: ") || l.starts_with("致命错误：")
        });
        if let (true, Some(k)) = (about_git, git_said) {
            let said = w[k].rest.trim();
            c.index = k;
            c.message = said.to_string();
            // The cited line first, as for every candidate; the CMake header stays in scope.
            c.scope.insert(0, (w[k].no, said.into()));
        }
        c.frames = self.frames.clone();
        self.out.push(c);
        Some(end)
    }

    /// A traceback frame at window index `i`: kept for the exception below it; when the next
    /// line is a `raise` (an excerpt without its exception), that line is a candidate.
    fn frame(&mut self, i: usize, indent: usize, file: &str, function: Option<&str>) {
        let w = self.w;
        self.frame_indent = Some(indent);
        if self.frames.len() < 256 {
            self.frames
                .push((w[i].no, format!("{} {}", file, function.unwrap_or(""))));
        }
        // A traceback excerpt without its exception: the `raise` is the best we have.
        if let Some(next) = w.get(i + 1) {
            let src = next.rest.trim_start();
            if src.starts_with("raise ") {
                let mut c = Candidate::new(
                    i + 1,
                    Tier::Soft,
                    CauseRank::Error,
                    Shape::TracebackRaise,
                    "traceback.raise",
                );
                c.message = src.trim_end().to_string();
                c.scope.push((next.no, src.into()));
                c.frames = self.frames.clone();
                self.out.push(c);
            }
        }
    }

    /// Graph-break reports (`torch._dynamo.explain()` and TORCH_LOGS=graph_breaks) at window
    /// index `i` (trimmed text `t`): the next index when the line was one.
    fn graph_break(&mut self, i: usize, t: &'w str) -> Option<usize> {
        let w = self.w;
        let n = &w[i].norm;
        if t.eq_ignore_ascii_case("Break Reasons:") {
            self.break_reasons = true;
            return Some(i + 1);
        }
        // `torch._dynamo.explain()` before 2.1 numbers its reasons: `1. generic_jump …`.
        let numbered = self
            .break_reasons
            .then(|| numbered_item(t))
            .flatten()
            .filter(|r| !r.is_empty());
        if let Some(reason) = t.strip_prefix("Reason:").or(numbered) {
            if self.break_reasons || n.artifact() == Some("graph_breaks") {
                let mut c = Candidate::new(
                    i,
                    Tier::Signal,
                    CauseRank::Error,
                    Shape::GraphBreak,
                    "graph-break.reason",
                );
                c.message = reason.trim().to_string();
                c.scope.push((w[i].no, t.into()));
                self.out.push(c);
                self.break_reasons = false;
                return Some(i + 1);
            }
        }
        if n.artifact() == Some("graph_breaks")
            || t.starts_with("Graph break")
            || is_explain_summary(t)
        {
            let mut c = Candidate::new(
                i,
                Tier::Soft,
                CauseRank::Error,
                Shape::GraphBreak,
                "graph-break.header",
            );
            c.message = t.to_string();
            c.scope.push((w[i].no, t.into()));
            self.out.push(c);
            return Some(i + 1);
        }
        None
    }

    /// Recompilations at window index `i` (trimmed text `t`): the first guard failure, or the
    /// header when failures are grouped per cache entry (`guard N failures:`,
    /// TORCH_LOGS=recompiles_verbose); the next index when the line was one.
    fn recompile(&mut self, i: usize, t: &'w str) -> Option<usize> {
        let w = self.w;
        if t.starts_with("Recompiling function") {
            let at = w[i + 1..(i + 4).min(w.len())]
                .iter()
                .position(|l| {
                    l.rest
                        .trim()
                        .starts_with("triggered by the following guard failure")
                })
                .map(|p| i + 1 + p);
            let reason = at
                .and_then(|j| w.get(j + 1))
                .filter(|l| l.rest.trim().starts_with("- "))
                .map(|_| at.map_or(i, |j| j + 1));
            let k = reason.unwrap_or(i);
            let mut c = Candidate::new(
                k,
                Tier::Signal,
                CauseRank::Error,
                Shape::Recompile,
                if reason.is_some() {
                    "recompile.guard-failure"
                } else {
                    "recompile.header"
                },
            );
            c.message = w[k].rest.trim().to_string();
            c.scope.push((w[i].no, t.into()));
            if k != i {
                c.scope.push((w[k].no, w[k].rest.trim().into()));
            }
            self.out.push(c);
            return Some(k + 1);
        }
        if let Some(r) = t.strip_prefix("last reason:") {
            let mut c = Candidate::new(
                i,
                Tier::Signal,
                CauseRank::Error,
                Shape::Recompile,
                "recompile.limit-reason",
            );
            c.message = r.trim().to_string();
            c.scope.push((w[i].no, t.into()));
            self.out.push(c);
            return Some(i + 1);
        }
        None
    }

    /// The candidates found within [`RAISED_RECORD_LINES`] above window index `i`, nearest first.
    fn above(&self, i: usize) -> impl Iterator<Item = &Candidate<'w>> {
        self.out
            .iter()
            .rev()
            .take_while(move |c| c.index + RAISED_RECORD_LINES >= i)
    }

    /// A Python exception line at window index `i`; returns the next index.
    fn exception(&mut self, i: usize, line: &'w str, e: &ExceptionLine<'w>, soft: bool) -> usize {
        if let Some(next) = self.wrapped(i, line, e, soft) {
            return next;
        }
        if let Some(next) = self.triton_located(i, line, e, soft) {
            return next;
        }
        let w = self.w;
        // An exception repr inside the message, with escaped newlines.
        if let Some(inner) = embedded_error(e.message) {
            let first = inner.message.lines().next().unwrap_or("").to_string();
            let message = format!("{}: {first}", inner.type_name);
            let mut c = Candidate::new(
                i,
                exception_tier(soft, &message, &inner.type_name),
                CauseRank::ErrorReport,
                Shape::WrappedException,
                "python.embedded",
            );
            c.exception_type = Some(inner.type_name.clone());
            c.scope.push((w[i].no, Cow::Owned(message.clone())));
            for l in inner.message.lines().take(64) {
                push_scope_copy(&mut c.scope, w[i].no, l);
            }
            c.message = message;
            c.frames = self.frames.clone();
            self.out.push(c);
            return i + 1;
        }
        let message = format!("{}: {}", e.type_name, e.message)
            .trim_end_matches(": ")
            .to_string();
        let mut scope: Scope<'w> = vec![(w[i].no, Cow::Owned(message.clone()))];
        let end = continuation(w, i + 1, 40, &mut scope);
        // MindSpore's exception over a section that says what failed below it: a summary. A
        // title that says its text follows (`RuntimeError: NNAdapter C++ Exception: `) with none
        // after it (a fence, a process's abort or a copy of a line above it at most) under an
        // error of the 40 lines above it: the text was said there (Paddle-Lite's fatal record).
        let untitled = e.message.trim_end().ends_with(':')
            && (i + 1..end.min(w.len())).all(|k| {
                w[k].norm.skip || is_process_abort(w[k].rest.trim()) || repeats_above(w, k, i)
            })
            && self.above(i).any(|c| c.tier != Tier::Cascade);
        // A lookup that found nothing (`KeyError: '0'`) names the key, not why it is missing:
        // under an error of the 40 lines above its traceback that says what the program needed
        // and did not find (a command, a library: [`says_not_found`]), it is that error's
        // consequence; so is one under an error record with a runtime code (MindX SDK's
        // `[507011][Error code unknown] Failed to model infer execute`, then the script's
        // `IndexError: list index out of range` on the empty result: wider-world batch 43).
        // A warning's (a probe for an optional module) is not such an error.
        let from = (0..i)
            .rev()
            .take(MAX_TRACEBACK_LINES)
            .find(|&k| is_traceback_start(w[k].rest.trim()))
            .unwrap_or(i);
        let missed = lookup_miss(e)
            && self.above(from).any(|c| {
                (c.tier == Tier::Strong && says_not_found(c))
                    || (matches!(c.tier, Tier::Strong | Tier::Cascade)
                        && c.index + RECORD_RUN_LINES >= from
                        && super::phase::runtime_number(&c.message).is_some())
            });
        let said = said_below(e.message, scope.get(1));
        let tier = if !soft
            && (mindspore_detail(w, end) || untitled || missed || translated_below(w, end, e))
        {
            Tier::Cascade
        } else {
            exception_tier(soft, &said, e.type_name)
        };
        let mut c = Candidate::new(
            i,
            tier,
            CauseRank::ErrorReport,
            Shape::PythonException,
            "python.exception",
        );
        c.exception_type = Some(e.type_name.to_string());
        c.scope = scope;
        // torch_npu's `ERRxxxxx` summaries right after the exception describe the same error
        // (its sub-module and error type): they join its scope, and stay candidates.
        for l in w[end.min(w.len())..].iter().take(4) {
            if torch_npu::parse_torch_npu_line(l.rest.trim()).is_none() {
                break;
            }
            push_scope(&mut c.scope, l.no, l.rest.trim());
        }
        c.message = message;
        c.frames = self.frames.clone();
        if tier == Tier::Cascade {
            self.wrapper = Some((w[i].no, self.frames.clone()));
        }
        // A wrapper's message lines may hold the native abort that raised it (`LLVM ERROR: …`
        // under `MLIRCompilationError:`): that line is the error, the wrapper its evidence.
        let fatal = (tier == Tier::Cascade)
            .then(|| {
                (i + 1..end.min(w.len())).find_map(|k| {
                    let t = w[k].rest.trim();
                    OtherLine {
                        i: k,
                        no: w[k].no,
                        t,
                    }
                    .native_abort()
                    .map(|f| with_assertion_head(w, f))
                })
            })
            .flatten();
        // A compiler's wrapper exception printed with an empty message (`MLIRCompilationError: `
        // over its stage's `[ConvertTritonIRToLinalgIR] encounters error: PassManager::run
        // failed`: Triton-Ascend's message starts with a newline): its message starts on the next
        // line, the line to cite when no native abort below says more. A bare type name
        // (`AssertionError`, no colon) has no message at all.
        let printed_colon = line.trim_end().ends_with(':');
        if fatal.is_none()
            && printed_colon
            && e.message.trim().is_empty()
            && compiler_diag::is_wrapper_exception(e.type_name)
        {
            if let Some(k) = (i + 1..end.min(w.len())).find(|&k| {
                let t = w[k].rest.trim();
                let letters = t.chars().filter(|c| c.is_alphanumeric()).count();
                !w[k].norm.skip && letters * 2 > t.chars().count()
            }) {
                c.index = k;
                c.message = format!("{}: {}", e.type_name, w[k].rest.trim());
            }
        }
        self.out.push(c);
        if let Some(mut f) = fatal {
            f.wrapper_line = Some(w[i].no);
            f.frames = self.frames.clone();
            self.out.push(f);
        }
        match self.detail_report(i, tier, soft) {
            Some(block_end) => block_end.max(end),
            None => end.max(i + 1),
        }
    }

    /// `BackendCompilerFailed: backend='…' raised:` at window index `i`: the next line is the
    /// real error, the candidate; the next index when it was found.
    fn wrapped(
        &mut self,
        i: usize,
        line: &'w str,
        e: &ExceptionLine<'w>,
        soft: bool,
    ) -> Option<usize> {
        let w = self.w;
        backend_compiler_failed(e)?;
        let (j, inner) = (i + 1..w.len().min(i + 4))
            .find(|j| !w[*j].rest.trim().is_empty())
            .and_then(|j| exception_line(w[j].rest).map(|x| (j, x)))?;
        let message = format!("{}: {}", inner.type_name, inner.message);
        let mut c = Candidate::new(
            j,
            Tier::Strong,
            CauseRank::ErrorReport,
            Shape::WrappedException,
            "python.wrapped",
        );
        c.exception_type = Some(inner.type_name.to_string());
        c.scope.push((w[i].no, line.into()));
        c.scope.push((w[j].no, Cow::Owned(message.clone())));
        let end = continuation(w, j + 1, 40, &mut c.scope);
        c.tier = exception_tier(
            soft,
            &said_below(inner.message, c.scope.get(2)),
            inner.type_name,
        );
        c.message = message;
        c.frames = self.frames.clone();
        c.wrapper_line = Some(w[i].no);
        self.out.push(c);
        Some(end.max(j + 1))
    }

    /// Triton's `CompilationError: at L:C:` at window index `i` (`triton/compiler/errors.py`:
    /// up to twelve lines of the kernel's source, a line with a caret under the column, then the
    /// error it wraps, `repr(e)`: `ValueError('`other` cannot be provided without `mask`')`):
    /// the line after the caret is the error, the exception its wrapper. The next index when it
    /// was one with an error after its caret (without one the exception is read as any other).
    fn triton_located(
        &mut self,
        i: usize,
        line: &'w str,
        e: &ExceptionLine<'w>,
        soft: bool,
    ) -> Option<usize> {
        let w = self.w;
        if !compiler_diag::is_located_compile_error(e.type_name) || !is_triton_location(e.message) {
            return None;
        }
        // The caret follows at most twelve source lines (`source_line_count_max_in_message`).
        let caret = (i + 1..w.len().min(i + 14)).find(|&k| {
            let t = w[k].rest.trim();
            !t.is_empty() && t.bytes().all(|b| b == b'^')
        })?;
        // The wrapped error is the next line, joined with one newline; an error raised without
        // one (a nested `@jit` call, `static_assert` with no message) ends at the caret.
        let j = caret + 1;
        let text = w.get(j)?.rest.trim();
        if text.is_empty()
            || is_traceback_start(text)
            || text.starts_with("The above exception")
            || text.starts_with("During handling of the above exception")
        {
            return None;
        }
        let type_name = text
            .split_once('(')
            .map(|(t, _)| t)
            .filter(|t| exception_line(&format!("{t}: x")).is_some());
        let mut c = Candidate::new(
            j,
            exception_tier(soft, text, type_name.unwrap_or("")),
            CauseRank::ErrorReport,
            Shape::WrappedException,
            "triton.located-error",
        );
        c.exception_type = type_name.map(str::to_string);
        c.scope.push((w[i].no, line.trim().into()));
        c.scope.push((w[j].no, text.into()));
        c.message = text.to_string();
        c.frames = self.frames.clone();
        c.wrapper_line = Some(w[i].no);
        self.out.push(c);
        Some(j + 1)
    }

    /// A `detail:` CANN report that starts on the exception line at window index `i` (the last
    /// candidate): under a wrapper that only says a call failed (`call aclnnX failed,
    /// detail:…`) the report is the error and the wrapper its evidence; under any other
    /// exception it is the exception's detail. The index after the report's block, if any.
    fn detail_report(&mut self, i: usize, tier: Tier, soft: bool) -> Option<usize> {
        let w = self.w;
        let report = report_at(&self.reports, i)?;
        let block_end = index_of(w, report.end_line).saturating_add(1).min(w.len());
        if tier == Tier::Cascade && !soft {
            let (mut c, _) = report_candidate(w, i, report, soft);
            // The wrapper's line holds only the report's header (`detail:EZ9999: Inner
            // Error!`): the root message below it is the error.
            if c.index == i && report.inner {
                if let Some(root) = c.root_index.take() {
                    c.index = root;
                }
            }
            c.wrapper_line = Some(w[i].no);
            c.frames = self.frames.clone();
            self.wrapper = None;
            self.out.push(c);
        } else if let Some(last) = self.out.last_mut() {
            for l in &w[(i + 1).min(block_end)..block_end] {
                push_scope(&mut last.scope, l.no, l.rest);
            }
        }
        Some(block_end)
    }

    /// A torch_npu hint at window index `i`.
    fn hint(&mut self, i: usize, hint: &'w str) {
        let w = self.w;
        // A hint that only says that something failed (`Failed to apply for memory.`, `A GE
        // error occurs in the system.`) is a summary: the lines around it say what failed.
        let tier = if knowledge::is_generic(hint) {
            Tier::Cascade
        } else {
            Tier::Strong
        };
        let mut c = Candidate::new(
            i,
            tier,
            CauseRank::ErrorReport,
            Shape::TorchNpuHint,
            "torch-npu.hint",
        );
        c.message = hint.to_string();
        c.scope.push((w[i].no, hint.into()));
        continuation(w, i + 1, 3, &mut c.scope);
        if let Some((wl, wf)) = self.wrapper.take() {
            c.wrapper_line = Some(wl);
            c.frames = wf;
        }
        self.out.push(c);
    }

    /// The candidates; a traceback pasted without its exception (and without a `raise` line)
    /// gives the line a program logged for it just above it ([`logged_exception`]), else its
    /// innermost frame, the best line to cite (the frames say which phase failed, and go with
    /// either); a text with neither gives the first line that says what is not supported
    /// ([`stated_unsupported`]).
    fn finish(mut self) -> Vec<Candidate<'w>> {
        raised_records(self.w, &mut self.out);
        library_throws(&mut self.out);
        needed_library_explains(self.w, &mut self.out);
        deaths_explained(&mut self.out);
        continued_messages(self.w, &mut self.out);
        if !self.out.is_empty() {
            return self.out;
        }
        let w = self.w;
        // The last resorts, Soft: the line itself is the message.
        let last_resort = |k: usize, shape: Shape, rule: &'static str| {
            let mut c = Candidate::new(k, Tier::Soft, CauseRank::Error, shape, rule);
            c.message = w[k].rest.trim().to_string();
            c.scope.push((w[k].no, w[k].rest.trim().into()));
            c
        };
        if let Some(&(no, ref text)) = self.frames.last() {
            if let Some(k) = w.iter().position(|l| l.no == no) {
                let mut c = match logged_exception(w, k) {
                    Some(r) => last_resort(r, Shape::LoggingError, "logger.exception-record"),
                    None => {
                        let mut c = last_resort(k, Shape::TracebackFrames, "traceback.frames-only");
                        c.message =
                            format!("traceback without its exception, innermost frame: {text}");
                        c
                    }
                };
                c.frames = self.frames.clone();
                self.out.push(c);
            }
        } else if let Some(k) = stated_unsupported(w) {
            self.out
                .push(last_resort(k, Shape::KnownPhrase, "phrase.not-supported"));
        }
        self.out
    }
}

/// The line a program logged for an exception it caught, right above the exception's traceback
/// (`logger.exception(…)`, `logger.error(…, exc_info=True)`, or a print and then
/// `traceback.print_exc()`: SGLang's `[date] Error in request: <the exception's message>` over
/// `Traceback (most recent call last):`), for a traceback whose frame at window index `frame`
/// is the last: its window index. Asked only when the text holds no candidate — the traceback
/// was cut before its exception —, so it stands in for the exception it lost. The line must
/// say so (`error`, `exception` or `fail…` as a word: not `test_error_handling`), state it (not
/// end in a colon, as CPython's own `Exception in thread Thread-3 (run):` introducing a
/// traceback does; not `Exception ignored in …`), stand unindented, and not be at a debug,
/// INFO or warning level.
fn logged_exception(w: &[WinLine<'_>], frame: usize) -> Option<usize> {
    let header = (frame.saturating_sub(256)..frame)
        .rev()
        .find(|&k| is_traceback_start(w[k].rest.trim()))?;
    let r = header.checked_sub(1)?;
    let (line, n) = (w[r].rest, &w[r].norm);
    let t = line.trim();
    if line.starts_with(char::is_whitespace)
        || t.ends_with(':')
        || t.starts_with("Exception ignored in")
        || t.contains("Warning:")
        || below_error(n, t)
    {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let word = |w: &str| {
        lower
            .match_indices(w)
            .any(|(at, _)| is_word_at(&lower, at, at + w.len()))
    };
    let says =
        word("error") || word("exception") || fail_word(&lower, &["", "s", "ed", "ure"]).is_some();
    says.then_some(r)
}

/// Where `fail` followed by one of `ends` stands as a whole word in `lower` (`failed`, not
/// `test_failed_ops`): its byte offset.
fn fail_word(lower: &str, ends: &[&str]) -> Option<usize> {
    lower.match_indices("fail").map(|(at, _)| at).find(|&at| {
        ends.iter().any(|end| {
            lower[at + 4..].starts_with(end) && is_word_at(lower, at, at + 4 + end.len())
        })
    })
}

/// The first line of a window that says in its own words what is not supported (DeepSpeed's
/// `Config max_tokens=768 type='rms_norm' … is not supported by <class '…DSPreRMSCUDAModule'>`,
/// CANN's graph optimiser's `[GraphOpt][Trans][InsertTransByConcec] We do not support trans from
/// NC1HWC0 to ND …`): `… is not supported`, `… are not supported`, `… is unsupported`, `… do
/// not support …` and its kin, with two words or more before it. Asked only when the text
/// holds no other candidate and no traceback (a program that prints what it cannot do and
/// stops, or goes on without it): a harmless notice
/// must not outrank a real error. Not a question (`?`) or a condition (`if`, `whether`, `may`),
/// not what the program worked around (`falling back`, `skipping`, `ignored`, `using`, `use`,
/// `instead`: as words), not indented (a traceback's source or a message's continuation), not a
/// cascade's wording, not at a debug, INFO or warning level — a logger's; a compiler's
/// `file:line:col: warning:` is read (AscendC states an API it lacks on the chip in one).
fn stated_unsupported(w: &[WinLine<'_>]) -> Option<usize> {
    const SAYS: &[&str] = &[
        " is not supported",
        " are not supported",
        " is unsupported",
        " is an unsupported ",
        " do not support ",
        " does not support ",
        " doesn't support ",
        " don't support ",
        " cannot support ",
    ];
    const HEDGES: &[&str] = &["if", "whether", "may", "might", "when", "unless", "check"];
    const RECOVERED: &[&str] = &[
        "fall back",
        "falling back",
        "fallback",
        "skipping",
        "skipped",
        "ignored",
        "ignoring",
        "using",
        "use",
        "instead",
    ];
    w.iter().position(|l| {
        let (n, t) = (&l.norm, l.rest.trim());
        if l.rest.starts_with(char::is_whitespace)
            || t.contains('?')
            || below_error(n, t)
            || is_cascade_text(t)
        {
            return false;
        }
        let lower = t.to_ascii_lowercase();
        let Some(at) = SAYS.iter().filter_map(|s| needles::find(&lower, s)).min() else {
            return false;
        };
        let subject: Vec<&str> = lower[..at].split_whitespace().collect();
        let hedged = subject.iter().any(|w| HEDGES.contains(w));
        let recovered = RECOVERED.iter().any(|r| {
            lower
                .match_indices(r)
                .any(|(k, _)| is_word_at(&lower, k, k + r.len()))
        });
        subject.len() >= 2 && !hedged && !recovered
    })
}

/// Whether a candidate is an environment line that says something was not found (a command, a
/// library, a tool on the PATH): the knowledge rows a missing piece of the setup states.
fn says_not_found(c: &Candidate<'_>) -> bool {
    const NOT_FOUND: &[&str] = &[
        "command not found",
        "dcmi&library not found",
        "npu-smi not found in",
        "executable file not found in $path",
    ];
    c.shape == Shape::EnvironmentLine
        && c.scope.first().is_some_and(|(_, t)| {
            knowledge::stated_cause(t).is_some_and(|f| NOT_FOUND.contains(&f.key))
        })
}

/// How many lines above an exception its traceback's header may stand.
const MAX_TRACEBACK_LINES: usize = 400;

/// A lookup that found nothing, its message only the key or the index: `KeyError: '0'`,
/// `KeyError: 3`, `IndexError: list index out of range`.
fn lookup_miss(e: &ExceptionLine<'_>) -> bool {
    let m = e.message.trim();
    match e.short_type() {
        "KeyError" => {
            let quoted = ['\'', '"']
                .iter()
                .any(|&q| m.len() >= 2 && m.starts_with(q) && m.ends_with(q));
            quoted || m.parse::<i64>().is_ok()
        }
        "IndexError" => m.ends_with("index out of range"),
        _ => false,
    }
}

/// A lookup that found nothing whose chained exception below it names the key it missed:
/// `KeyError: 'ops'` in a module's `__getattr__`, then `The above exception was the direct cause
/// of the following exception:` and `AttributeError: module 'torch_npu' has no attribute 'ops'`.
/// The later exception translates the miss into what the caller asked for (`raise … from`), so
/// it says what failed and the lookup is its cascade. A chained exception that does not name the
/// key is another failure: the lookup stays.
fn translated_below(w: &[WinLine<'_>], end: usize, e: &ExceptionLine<'_>) -> bool {
    // A key of two characters or more: a one-letter key (`'x'`) may stand in any message.
    let key = e.message.trim();
    if !lookup_miss(e) || !key.starts_with(['\'', '"']) || key.chars().count() < 4 {
        return false;
    }
    let Some(sep) = (end..w.len().min(end + 3)).find(|&k| !w[k].rest.trim().is_empty()) else {
        return false;
    };
    if !is_chain_separator(w[sep].rest.trim()) {
        return false;
    }
    (sep + 1..w.len().min(sep + 1 + MAX_TRACEBACK_LINES))
        .find_map(|k| exception_line(w[k].rest))
        .is_some_and(|outer| outer.message.contains(key))
}

/// How far above a traceback the records of the failure it follows from may stand (MindX SDK's
/// record with its code, then the records that failed after it, then the script's traceback).
const RECORD_RUN_LINES: usize = 8;

/// How far above an exception the error it repeats or follows from may stand (the record it
/// raises, the title it completes, the missing piece its lookup did not find).
const RAISED_RECORD_LINES: usize = 40;

/// An exception that raises what an error record just above it said (OpenCV's `[ERROR:0@22.6]
/// global net_cann.cpp:291 compileCannGraph CANN graph check failed, ret = 1343266818`, then
/// `cv2.error: … CANN graph check failed in function 'compileCannGraph'`): the record said it
/// first and with its own detail, so it takes the exception's tier and the exception, its
/// wrapper, becomes a cascade. The record's first clause (up to a `,`, `;` or ` (`: two words or
/// more, twelve characters or more) must stand in the exception's message as words, and the
/// record must say more than the exception repeats of it (a record the exception quotes whole,
/// `Model loading failed on rank 0` under `RuntimeError: Model loading failed on rank 0: could
/// not open …`, has no detail of its own: the exception stays) and not send the reader elsewhere
/// itself (cascade wording).
fn raised_records(w: &[WinLine<'_>], out: &mut [Candidate<'_>]) {
    for k in 0..out.len() {
        let e = &out[k];
        if e.shape != Shape::PythonException || e.tier != Tier::Strong {
            continue;
        }
        let said = e.message.to_ascii_lowercase();
        let at = e.index;
        let record = record_above(out, k, RAISED_RECORD_LINES, |r| {
            let whole = r.message.trim().to_ascii_lowercase();
            r.shape == Shape::LoggingError
                && first_clause(&r.message).is_some_and(|c| {
                    says_words(&said, &c.to_ascii_lowercase()) && !said.contains(whole.as_str())
                })
        })
        .or_else(|| first_record_of_code(w, out, k));
        let Some(j) = record else { continue };
        let (tier, frames) = (out[k].tier, out[k].frames.clone());
        out[k].tier = Tier::Cascade;
        let r = &mut out[j];
        r.tier = tier;
        r.wrapper_line = Some(w[at].no);
        if r.frames.is_empty() {
            r.frames = frames;
        }
    }
}

/// The MindX SDK's Python binding raises the code and message its C++ records printed
/// (`RuntimeError: [-1][ACL: general failure]` for `E… ImageProcessorDptr.hpp:819] Failed to
/// recognize Ascend chip. (Code = -1, Message = "ACL: general failure")` and the records that
/// failed after it): the first record of [`RAISED_RECORD_LINES`] above candidate `k` that printed
/// that code and message, which said first what failed.
fn first_record_of_code(w: &[WinLine<'_>], out: &[Candidate<'_>], k: usize) -> Option<usize> {
    let message = out[k].message.split_once(": ")?.1.trim();
    let (code, rest) = message.strip_prefix('[')?.split_once("][")?;
    let said = rest.strip_suffix(']')?;
    if code.is_empty() || code.parse::<i64>().is_err() || said.is_empty() {
        return None;
    }
    let printed = format!("Code = {code}, Message = \"{said}\"");
    let at = out[k].index;
    (0..k)
        .rev()
        .take_while(|&j| out[j].index + RAISED_RECORD_LINES >= at)
        .filter(|&j| {
            let r = &out[j];
            r.index < at
                && r.tier != Tier::Soft
                && matches!(
                    r.shape,
                    Shape::LoggingError | Shape::EnvironmentLine | Shape::KnownPhrase
                )
                && w[r.index].rest.contains(&printed)
        })
        .last()
}

/// The error record (`logger.error-record`, not in cascade wording) of at most `lines` lines above
/// candidate `k` that `fits`, the nearest first. The candidates come in line order: only those of
/// the lines just above are read, so a window of many errors and records costs a bounded
/// look-back for each.
fn record_above(
    out: &[Candidate<'_>],
    k: usize,
    lines: usize,
    fits: impl Fn(&Candidate<'_>) -> bool,
) -> Option<usize> {
    let at = out[k].index;
    (0..k)
        .rev()
        .take_while(|&j| out[j].index + lines >= at)
        .find(|&j| {
            let r = &out[j];
            r.index < at
                && r.rule == "logger.error-record"
                && !is_cascade_text(&r.message)
                && fits(r)
        })
}

/// How far above a C++ abort's `what()` line the error record that explains it may stand.
const THROW_RECORD_LINES: usize = 8;

/// A C++ abort whose `what()` only names the standard library routine that threw (libstdc++'s
/// `_Map_base::at` from `unordered_map::at`, `vector::_M_range_check: __n (which is 5) >= …`,
/// `stoi`; [`is_library_throw`]) says where the program stopped, not why: an error record the
/// program logged just above it (MindIE's `[llm] [ERROR] [executor.cpp:646] Invalid DP number
/// per node: 0` before `terminate called after throwing an instance of 'std::out_of_range'`)
/// says why. The record takes the abort's tier, and the abort becomes its cascade (a consequence
/// below it, not a wrapper around it).
fn library_throws(out: &mut [Candidate<'_>]) {
    for k in 0..out.len() {
        let a = &out[k];
        if a.rule != "c10.what" || a.tier != Tier::Strong || !is_library_throw(&a.message) {
            continue;
        }
        let Some(j) = record_above(out, k, THROW_RECORD_LINES, |_| true) else {
            continue;
        };
        out[j].tier = out[k].tier;
        out[k].tier = Tier::Cascade;
    }
}

/// Whether a C++ exception's message is one the standard library writes where it throws, naming
/// only the routine (libstdc++: `_Map_base::at`, `map::at`, `vector::_M_range_check: __n (which
/// is 5) >= this->size() (which is 3)`, `basic_string::_M_construct null not valid`, `stoi`,
/// `bad_function_call`): a qualified name (not in `std::`) alone or with libstdc++'s own check
/// text after it, or one of the fixed messages. `std::bad_alloc` says why (memory) and is not
/// one.
fn is_library_throw(what: &str) -> bool {
    const FIXED: &[&str] = &[
        "stoi",
        "stol",
        "stoul",
        "stoll",
        "stoull",
        "stof",
        "stod",
        "stold",
        "bad_function_call",
        "std::bad_cast",
        "std::bad_typeid",
        "std::exception",
        "bad any_cast",
        "bad optional access",
        "bad variant access",
        "bad_weak_ptr",
        "basic_string: construction from null is not valid",
    ];
    let what = what.trim();
    if FIXED.contains(&what) || what.starts_with("cannot create std::") {
        return true;
    }
    let name_end = what
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(what.len());
    let (name, tail) = what.split_at(name_end);
    // libstdc++ names its throw sites without `std::`; an exception type's own `what()`
    // (`std::bad_alloc`) is in the list above, or says why.
    let qualified = !name.starts_with("std::")
        && name.trim_end_matches(':').split("::").count() >= 2
        && name
            .trim_end_matches(':')
            .split("::")
            .all(|p| p.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'));
    qualified && (tail.is_empty() || tail.starts_with(" __") || tail == " null not valid")
}

/// Environment rows that name a failure whose reason the loader prints after them (`Fail to
/// open library: ` / the library / `with error: …: undefined symbol: …`): on a line that runs on,
/// the reason below is the cause ([`continued_messages`]); alone (a paste cut after them) they
/// are.
const REASON_FOLLOWS: [&str; 3] = [
    "fail to open library",
    "failed to load&library&.so",
    "failed to import torch_npu",
];

/// Lines a message may run on over after its first ([`continued_messages`]).
const CONTINUED_LINES: usize = 8;

/// An error whose message runs on over the lines below it (a terminal or a web page wrapped it,
/// or its text holds newlines: PaddlePaddle's `Fail to open library: ` / the library / `with
/// error: <dependency>: ` / `undefined symbol: …`) and says its innermost cause on one of them:
/// that line is the error, the first line its wrapper. The message runs on only from a line that
/// stops mid-sentence — it ends with `:` (a chain's next link follows) or with the space a
/// wrapped line breaks at — and whose own text states no cause ([`knowledge::stated_cause`]);
/// the lines below continue it while they do the same, none blank, indented, behind a logger
/// prefix, a candidate, or a record of its own ([`starts_its_own`]). The cause is the first of
/// them that states one or opens with a failure ([`opens_failed`]). An exception gives its tier
/// to the line and becomes a cascade; under an error record (a cascade) the line is a signal.
fn continued_messages<'w>(w: &[WinLine<'w>], out: &mut Vec<Candidate<'w>>) {
    let reason_follows =
        |t: &str| knowledge::stated_cause(t).is_some_and(|f| REASON_FOLLOWS.contains(&f.key));
    let wrapper = |c: &Candidate<'_>| {
        let exception = c.rule == "python.exception" && c.tier == Tier::Strong;
        let t = w[c.index].rest;
        runs_on(t)
            && if c.shape == Shape::EnvironmentLine {
                reason_follows(t)
            } else {
                (exception || c.rule == "logger.error-record")
                    && (knowledge::stated_cause(t).is_none() || reason_follows(t))
            }
    };
    // Most windows hold no such error: the candidates' lines are only gathered for one that does.
    if !out.iter().any(wrapper) {
        return;
    }
    let taken: std::collections::HashSet<usize> = out.iter().map(|c| c.index).collect();
    let strong_at: std::collections::HashSet<usize> = out
        .iter()
        .filter(|c| c.tier == Tier::Strong)
        .map(|c| c.index)
        .collect();
    let mut found = Vec::new();
    for c in out.iter_mut() {
        if !wrapper(c) {
            continue;
        }
        // An exception, or an environment row whose reason follows, gives its tier to the line.
        let exception = c.rule == "python.exception" || c.shape == Shape::EnvironmentLine;
        let mut cause = None;
        for (k, l) in w.iter().enumerate().skip(c.index + 1).take(CONTINUED_LINES) {
            let t = l.rest;
            if l.norm.skip
                || t.trim().is_empty()
                || t.starts_with(char::is_whitespace)
                || !l.norm.continues(&w[c.index].norm)
                || l.plog.is_some()
                || exception_line(t).is_some()
                || starts_its_own(l)
            {
                break;
            }
            if taken.contains(&k) {
                // The reason is a strong candidate of its own already (an environment row
                // read on the continued line): it stands, the wrapper gives way.
                let strong = strong_at.contains(&k);
                if exception && strong && knowledge::stated_cause(t.trim()).is_some() {
                    c.tier = Tier::Cascade;
                }
                break;
            }
            if knowledge::stated_cause(t.trim()).is_some() || opens_failed(t.trim()) {
                cause = Some(k);
                break;
            }
            if !runs_on(t) {
                break;
            }
        }
        let Some(k) = cause else { continue };
        let t = w[k].rest.trim();
        let (tier, shape) = if exception {
            (c.tier, Shape::WrappedException)
        } else {
            (Tier::Signal, Shape::LoggingError)
        };
        let mut n = Candidate::new(k, tier, c.rank, shape, "message.continued-cause");
        n.message = t.to_string();
        n.scope.push((w[k].no, t.into()));
        n.scope.push((w[c.index].no, w[c.index].rest.trim().into()));
        n.frames = c.frames.clone();
        n.exception_type = c.exception_type.clone();
        n.wrapper_line = Some(w[c.index].no);
        if exception {
            c.tier = Tier::Cascade;
        }
        found.push(n);
    }
    if !found.is_empty() {
        out.extend(found);
        out.sort_by_key(|c| c.index);
    }
}

/// Whether a line closes a container runtime's chain with containerd's status, `: unknown`
/// (as printed, or inside a quoted repr: `: unknown.`, `: unknown")`).
fn closes_chain(l: &str) -> bool {
    l.trim_end_matches(['.', '"', '\'', ')'])
        .ends_with(": unknown")
}

/// Whether a line stops mid-sentence, so the next line goes on with it: it ends with `:` (a
/// chain's next link follows) or with the space a wrapped line breaks at.
fn runs_on(line: &str) -> bool {
    line.ends_with(' ') || line.trim_end().ends_with(':')
}

/// Whether a line opens with a failure in its own words (`failed to mount src: …`, `cannot
/// allocate …`, `unable to …`, `could not …`, `permission denied`).
fn opens_failed(t: &str) -> bool {
    const OPENINGS: &[&str] = &[
        "failed to ",
        "fail to ",
        "cannot ",
        "can not ",
        "can't ",
        "unable to ",
        "could not ",
        "couldn't ",
        "permission denied",
        "no such file or directory",
    ];
    let head = t.get(..32).unwrap_or(t).to_ascii_lowercase();
    OPENINGS.iter().any(|o| head.starts_with(o))
}

/// Whether `words` occurs in `text` as words (`on rank 1` is not in `on rank 12`, `graph check`
/// not in `subgraph check`); both in lower case.
fn says_words(text: &str, words: &str) -> bool {
    text.match_indices(words)
        .any(|(at, _)| is_word_at(text, at, at + words.len()))
}

/// Whether `text[start..end]` stands as whole words: no letter, digit or `_` right before or
/// after it.
fn is_word_at(text: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    !text[..start].ends_with(word) && !text[end..].starts_with(word)
}

/// A message's first clause: the text before its first `,`, `;` or ` (`, trimmed, when it has
/// at least two words and twelve characters.
fn first_clause(message: &str) -> Option<&str> {
    let end = [",", ";", " ("]
        .iter()
        .filter_map(|p| message.find(p))
        .min()
        .unwrap_or(message.len());
    let c = message[..end].trim();
    (c.len() >= 12 && c.contains(' ')).then_some(c)
}

/// `at 2:8:` (Triton's location of a compilation error; older releases print the source on the
/// same line, `at 2:8:def kernel(…`).
fn is_triton_location(message: &str) -> bool {
    let Some(rest) = message.trim().strip_prefix("at ") else {
        return false;
    };
    let mut parts = rest.splitn(3, ':');
    let number =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    number(parts.next()) && number(parts.next()) && parts.next().is_some()
}

/// The rules that read an environment fault from a tool's own report rather than from a
/// knowledge row: pip's resolver conflict, Docker's daemon error, Kubernetes' warning events and
/// an installer that found no release to install. Each is its error's phase
/// token, so remedy.tsv names it as `key:<rule>`.
pub const PIP_CONFLICT: &str = "pip.conflict";
pub const CONTAINER_DAEMON: &str = "container.daemon-error";
pub const KUBERNETES_EVENT: &str = "kubernetes.event-warning";
pub const INSTALLER_UNRESOLVED: &str = "installer.unresolved";
/// A program's argument parser refused its command line ([`compiler_diag::argparse_error`]).
pub const ARGPARSE_USAGE: &str = "argparse.usage";
pub const ENVIRONMENT_RULES: [&str; 5] = [
    PIP_CONFLICT,
    CONTAINER_DAEMON,
    KUBERNETES_EVENT,
    INSTALLER_UNRESOLVED,
    ARGPARSE_USAGE,
];

/// The reason and message of a failing row of Kubernetes' events table (`Warning
/// FailedScheduling  27s  hami-scheduler  0/1 nodes are available: …`): the columns stand
/// between runs of two or more spaces; the age is `27s`, `3m2s`, `<unknown>` or `2m (x3 over
/// 5m)`. A `Normal` row, or a typeless row whose reason does not say it failed, is none.
fn kubernetes_warning(t: &str) -> Option<(&str, &str)> {
    // The next column; `rest` keeps what follows it (the message, after the fourth).
    let mut rest = t;
    let mut column = || {
        let r = rest.trim_start();
        let (field, after) = r.split_at(r.find("  ").unwrap_or(r.len()));
        rest = after;
        (!field.is_empty()).then_some(field)
    };
    let first = column()?;
    let typed = first == "Warning";
    let reason = if typed { column()? } else { first };
    let camel = reason.starts_with(|c: char| c.is_ascii_uppercase())
        && reason.len() > 3
        && reason.bytes().all(|b| b.is_ascii_alphabetic());
    let failed = reason.starts_with("Failed") || reason.ends_with("Error");
    if !camel || !(typed || failed) {
        return None;
    }
    let age = column()?;
    let span = age.split(' ').next().unwrap_or(age);
    let aged = span == "<unknown>"
        || span.bytes().any(|b| b.is_ascii_digit())
            && span
                .bytes()
                .all(|b| b.is_ascii_digit() || b"smhd".contains(&b));
    column()?; // from
    let message = rest.trim();
    (aged && !message.is_empty()).then_some((reason, message))
}

/// `s` after BuildKit's seconds ([`line_prefix::build_seconds`]), or `s` itself.
fn after_build_seconds(s: &str) -> &str {
    crate::line_prefix::build_seconds(s)
        .map_or(s, |(_, _, rest)| rest.strip_prefix(' ').unwrap_or(rest))
}

/// `1. generic_jump TensorVariable()` → the text after the number.
fn numbered_item(t: &str) -> Option<&str> {
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    (digits > 0)
        .then(|| t[digits..].strip_prefix(". "))
        .flatten()
        .map(str::trim)
}

/// `Dynamo produced 12 graphs with 11 graph breaks and 40 ops` (`torch._dynamo.explain()`
/// before 2.1).
fn is_explain_summary(t: &str) -> bool {
    t.starts_with("Dynamo produced ") && t.contains(" graph break")
}

/// A CANN report right after a torch_npu hint (`[Error]: …`) describes the same failure: one
/// candidate. The hint may stand a few lines above the report, with only what torch_npu prints
/// between them (its `ERRxxxxx` summary, the hint's second line, another hint): then every
/// candidate between the two is a cascade (the hint's own second line too, indented or not). The
/// report is cited when it says more than the hint — the hint is generic or unknown, the report
/// ranks as a device fault (its root or a line of its TraceBack states one), or the report gives
/// its own `Reason:` — and the hint
/// otherwise (a hint that names a device fault or a timeout over a report that only says a
/// launch or a query failed with the hint's code).
fn merge_with_hint<'w>(out: &mut Vec<Candidate<'w>>, block: Candidate<'w>, w: &[WinLine<'w>]) {
    let hint_at = out
        .iter()
        .rposition(|c| c.shape == Shape::TorchNpuHint && c.rule == "torch-npu.hint")
        .filter(|&k| out[k + 1..].iter().all(|c| c.tier == Tier::Cascade));
    if let Some(k) = hint_at {
        let last = &mut out[k];
        let between_ok = (last.index + 1..block.index.min(w.len())).all(|j| {
            let l = w[j].norm.rest;
            w[j].norm.skip
                || l.starts_with(char::is_whitespace)
                // The hint's own second line, whatever indentation the paste kept.
                || last.scope.iter().any(|(no, _)| *no == w[j].no)
                || find_code(l).is_some()
                || is_cann_traceback(l)
                || torch_npu::parse_torch_npu_line(l.trim()).is_some()
                || torch_npu_hint(l).is_some()
        });
        if between_ok {
            // A hint names the fault only when it is a device fault or a timeout (`The aicore
            // execution times out.`); a resource, memory, parameter or generic hint is the
            // code's summary, and the report after it says what exactly.
            let names_fault =
                knowledge::hint(&last.message).is_some_and(knowledge::Fact::is_device_side);
            let device = block.rank == CauseRank::DeviceFault;
            // A report that gives its own reason (`The argument is invalid.Reason: set
            // ASCEND_RT_VISIBLE_DEVICES:4 error`) says why the device failed, where the hint
            // only names the failure. (A call's `reason=aicore exception` repeats the fault the
            // hint names: the samples' readings cite the hint.)
            let why = block.message.split_once("Reason:").map(|(_, why)| why);
            let reason = why.is_some_and(|why| why.bytes().any(|b| b.is_ascii_alphanumeric()));
            // A report whose reason is that the runtime could not fetch the device's error
            // message (`rtGetDevMsg execute failed, reason=[context pointer null]`: torch_npu
            // asks for it after the failure its hint names, and without a context the query
            // fails too) says nothing of that failure: a hint that names one stays the error.
            let query_failed =
                why.is_some_and(|why| why.to_ascii_lowercase().contains("rtgetdevmsg"));
            if query_failed && last.tier != Tier::Cascade && !device {
                // The report is the query's, not the failure's: no candidate, and its lines
                // (its `EE1001`, an invalid argument) stay out of the hint's scope and context.
            } else if !names_fault || device || reason {
                let (wl, wf) = (last.wrapper_line, std::mem::take(&mut last.frames));
                let hint_line = w[last.index].no;
                let hint_scope = std::mem::take(&mut last.scope);
                *last = block;
                if last.wrapper_line.is_none() {
                    last.wrapper_line = wl;
                    last.frames = wf;
                }
                // The hint stays in the error's scope: routing reads what it stands for.
                for (no, t) in hint_scope {
                    if no == hint_line {
                        last.scope.insert(0, (no, t));
                    }
                }
            } else {
                last.root_index = Some(block.root_index.unwrap_or(block.index));
                last.message = format!("{} ({})", last.message, block.message);
                last.scope.extend(block.scope);
                last.rule = "torch-npu.hint+cann.report";
            }
            return;
        }
    }
    out.push(block);
}

/// A line that states a fault on the device (`The error from device(…)`, `Task exception!`).
fn is_device_fault(text: &str) -> bool {
    super::rank::rank_plog_error("", text) == CauseRank::DeviceFault
}

/// The candidate for a CANN report starting at window index `i`, and the index after its block.
///
/// The cited line is [`cited_line`]'s: the TraceBack item the failure came from, else the code
/// line of an external code, else the report's causal line. A report whose root states a device
/// fault ranks as one ([`CauseRank::DeviceFault`]):
/// it outranks an earlier report that only says an argument was invalid — specific over
/// generic, in the ranking.
fn report_candidate<'w>(
    w: &[WinLine<'w>],
    i: usize,
    report: &CannErrorReport,
    soft: bool,
) -> (Candidate<'w>, usize) {
    let end = index_of(w, report.end_line)
        .saturating_add(1)
        .max(i + 1)
        .min(w.len());
    let (root_line, root_text) = report_root(report);
    let root = root_line.map_or(i, |l| index_of(w, l));
    let root_message = strip_location(root_text).to_string();
    let traceback_cause = traceback_cause(report);
    let cited = match traceback_cause {
        Some(t) => index_of(w, t.line).min(w.len() - 1),
        None if is_external(report) => i,
        None => index_of(w, report.causal_line).min(w.len() - 1),
    };
    // A report whose root states a device fault, or whose TraceBack gives the device's own
    // record of an exception on a core (`… return: 507015` over `The error from device(…) …
    // fftsplus aivector error`; a wait on the device — an event or HCCL task timeout — is what
    // a stalled peer causes, and a `Notify wait execute failed` item is no device record).
    let rank = if is_device_fault(&root_message)
        || report.traceback.iter().any(|t| {
            let lower = t.text.to_ascii_lowercase();
            lower.contains("the error from device(") && !knowledge::is_device_wait(&lower)
        }) {
        CauseRank::DeviceFault
    } else {
        CauseRank::ErrorReport
    };
    let mut c = Candidate::new(
        cited,
        if soft { Tier::Soft } else { Tier::Strong },
        rank,
        Shape::CannReport,
        "cann.report",
    );
    let message = traceback_cause.map_or(root_message, |t| strip_location(&t.text).to_string());
    c.message = match &report.code {
        Some(code) => format!("{code}: {message}"),
        None => message,
    };
    for l in &w[i..end] {
        push_scope(&mut c.scope, l.no, l.norm.rest.trim());
    }
    c.root_index = (root != cited && root < w.len()).then_some(root);
    c.pid = report.pid.and_then(|p| i64::try_from(p).ok());
    (c, end)
}

/// A CANN report's root: the first item after an inner-code header, else the message on its code
/// line, else its first item — with that line (`None`: nothing but the report's own line). An
/// item that is only a location (`[FUNC:…][FILE:…][LINE:…]` under a message that runs over
/// lines) is where the message above it was raised, not an item of its own.
fn report_root(report: &CannErrorReport) -> (Option<u64>, &str) {
    let first = report.items.iter().find(|i| !i.text.trim().is_empty());
    match (report.inner, first, &report.message) {
        (true, Some(item), _) => (Some(item.line), item.text.as_str()),
        (_, _, Some(m)) => (Some(m.line), m.text.as_str()),
        (_, Some(item), None) => (Some(item.line), item.text.as_str()),
        (_, None, None) => (None, ""),
    }
}

/// Whether a report carries a code of its own that is not an inner code (its head is cited as it
/// is).
fn is_external(report: &CannErrorReport) -> bool {
    report.code.is_some() && !report.inner
}

/// The TraceBack item a report's failure came from: one that states a cause — an installation
/// fault (`Op Cast does not has any binary.` under `Parse dynamic kernel config fail.`) or a
/// message that says what went wrong on its own (`Convert memory address from virtual to dma
/// physical failed` under EL0003's bare `The argument is invalid.`) — unless the head states a
/// cause of its own; under an external code's head, only when its message is the code's bare
/// title or says only that something failed ([`only_that_it_failed`]).
fn traceback_cause(report: &CannErrorReport) -> Option<&ReportItem> {
    if let Some(t) = tiling_refusal(report) {
        return Some(t);
    }
    let root_message = strip_location(report_root(report).1);
    let head_states_cause =
        knowledge::stated_cause(root_message).is_some() || is_device_fault(root_message);
    let head_open = !is_external(report)
        || knowledge::is_generic_title(root_message)
        || only_that_it_failed(root_message);
    if head_states_cause || !head_open {
        return None;
    }
    // A device record (`The error from device(…)`, even one that names a wait that timed out)
    // states no cause of its own here: the report's rank says what it is (samples logs/37).
    report.traceback.iter().find(|t| {
        !t.text
            .to_ascii_lowercase()
            .contains("the error from device(")
            && (knowledge::installation(&t.text).is_some()
                || knowledge::phrase_fact(&t.text).is_some())
    })
}

/// The item in which an operator's tiling function says why it refused the call, when the
/// TraceBack shows the tiling failed (`CausalConv1dBwd do tiling failed, ret is -1.`, an item
/// raised in a `…Tiling…` function): what the report's head says then (`LaunchKernelV2 failed
/// because value 0 for parameter blockDim is invalid`) is what launching an untiled kernel gives,
/// and the refusal is the cause (wider-world batch 26). Only under a head about the launch
/// (`blockDim`, `launch`); the first such item that says more than that the tiling failed.
fn tiling_refusal(report: &CannErrorReport) -> Option<&ReportItem> {
    // Only under a head about the launch the missing tiling spoiled (not, say, EL0004's own
    // `Failed to allocate memory.`).
    let head = strip_location(report_root(report).1).to_ascii_lowercase();
    if !(head.contains("blockdim") || head.contains("launch")) {
        return None;
    }
    let tiled = |t: &ReportItem| {
        t.func
            .as_deref()
            .is_some_and(|f| f.to_ascii_lowercase().contains("tiling"))
    };
    let failed = report.traceback.iter().any(|t| {
        t.text.to_ascii_lowercase().contains("do tiling failed")
            || (tiled(t) && t.text.to_ascii_lowercase().contains("failed"))
    });
    if !failed {
        return None;
    }
    report.traceback.iter().find(|t| {
        let text = strip_location(&t.text);
        let lower = text.to_ascii_lowercase();
        // The refusal, not the line that reports the failure (`… do tiling failed, ret is -1.`).
        let reports_failure = lower.contains("tiling failed") || lower.contains("ret is");
        tiled(t) && !text.is_empty() && !reports_failure && !only_that_it_failed(text)
    })
}

/// Whether a message says only that something failed, and not why (`PromptFlashAttention
/// LaunchAicore failed.` under EZ1001, wider-world batch 25): at most four words, the last
/// `failed`, nothing that gives a value or a reason (`:`, `=`, `,`, a bracket).
fn only_that_it_failed(message: &str) -> bool {
    let m = message.trim().trim_end_matches(['.', '!']);
    m.split_whitespace().count() <= 4
        && m.to_ascii_lowercase().ends_with(" failed")
        && !m.contains([':', '=', ',', '[', '('])
}

/// The line of a CANN report the first-causal-error ranking cites when the report is the error:
/// the TraceBack item its failure came from (`traceback_cause`), else an external code's head,
/// else the report's causal line. `plog` lists each report at this line.
pub fn cited_line(report: &CannErrorReport) -> u64 {
    match traceback_cause(report) {
        Some(t) => t.line,
        None if is_external(report) => report.line,
        None => report.causal_line,
    }
}

/// The line [`classify_other`] looks at, trimmed: its candidates are made here.
struct OtherLine<'w> {
    /// Its window index.
    i: usize,
    /// Its physical line number.
    no: u64,
    /// Its text (the window's `rest`), trimmed.
    t: &'w str,
}

impl<'w> OtherLine<'w> {
    /// A candidate of this line with message `msg` and the line as its scope.
    fn make(
        &self,
        tier: Tier,
        rank: CauseRank,
        shape: Shape,
        rule: &'static str,
        msg: &str,
    ) -> Candidate<'w> {
        let mut c = Candidate::new(self.i, tier, rank, shape, rule);
        c.message = msg.to_string();
        c.scope.push((self.no, self.t.into()));
        c
    }

    /// A plog record printed into the log (`h` its header, `rest` what follows): a candidate
    /// at level ERROR only — a cascade from a noise module, a kernel assert, else ranked by
    /// its module and message.
    fn plog_record(&self, h: &PlogHeader<'_>, rest: &[u8]) -> Option<Candidate<'w>> {
        if h.level != Level::Error {
            return None;
        }
        let text = crate::plog::record::utf8_lossy(rest);
        let content = parse_content(h.module, &text);
        let msg = content.message;
        let (tier, rank, shape, rule) = if knowledge::is_noise_module(h.module) {
            (
                Tier::Cascade,
                CauseRank::Cascade,
                Shape::PlogRecord,
                "plog.noise-module",
            )
        } else if is_kernel_assert(msg) {
            (
                Tier::Strong,
                CauseRank::DeviceFault,
                Shape::KernelAssert,
                "kernel.assert",
            )
        } else {
            let rank = rank_plog_error(h.module, msg);
            let tier = if rank == CauseRank::Cascade {
                Tier::Cascade
            } else {
                Tier::Strong
            };
            (tier, rank, Shape::PlogRecord, "plog.error-record")
        };
        let mut c = self.make(tier, rank, shape, rule, msg);
        c.pid = Some(h.pid);
        c.time = Some(h.time);
        Some(c)
    }

    /// A line in an error format of its own: a kernel assert, a framework error line, a c10
    /// error (`E` / `F`), Python logging at ERROR or CRITICAL, a protobuf error, torch_npu's
    /// bare asynchronous wrapper.
    fn error_format(&self, n: &Normalised<'_>) -> Option<Candidate<'w>> {
        let t = self.t;
        if is_kernel_assert(t) {
            return Some(self.make(
                Tier::Strong,
                CauseRank::DeviceFault,
                Shape::KernelAssert,
                "kernel.assert",
                t,
            ));
        }
        if is_framework_error_line(t) {
            return Some(self.make(
                Tier::Strong,
                CauseRank::Framework,
                Shape::FrameworkError,
                "framework.error-line",
                t,
            ));
        }
        let cascade_or = |s: &str| {
            if is_cascade_text(s) {
                Tier::Cascade
            } else {
                Tier::Strong
            }
        };
        if let Some(level) = n.c10_level() {
            if matches!(level, 'E' | 'F') {
                return Some(self.make(
                    cascade_or(t),
                    CauseRank::ErrorReport,
                    Shape::C10Error,
                    "c10.error",
                    t,
                ));
            }
        }
        if let Some(l) = logging_line(t) {
            if matches!(l.level, "ERROR" | "CRITICAL") {
                return Some(self.make(
                    cascade_or(l.message),
                    CauseRank::ErrorReport,
                    Shape::LoggingError,
                    "python.logging-error",
                    l.message,
                ));
            }
        }
        if t.starts_with("[libprotobuf ERROR") || t.starts_with("[libprotobuf FATAL") {
            return Some(self.make(
                Tier::Strong,
                CauseRank::ErrorReport,
                Shape::ProtobufError,
                "protobuf.error",
                t,
            ));
        }
        // torch_npu's asynchronous wrapper printed without its exception type: it only says
        // that an error was reported earlier.
        if t.starts_with("The Inner error is reported as above") {
            return Some(self.make(
                Tier::Cascade,
                CauseRank::ErrorReport,
                Shape::TorchNpuHint,
                "torch-npu.async-wrapper",
                t,
            ));
        }
        None
    }

    /// A line that states a cause on its own — a broken environment (`libx.so: undefined
    /// symbol: …`, `… was not compiled with torchair`), a known cause phrase (`NPU out of
    /// memory. Tried to allocate …`), a torch_npu hint that names the fault — outside an
    /// exception or a report (bare, fenced, quoted, after any prefix): the weakest strong rank,
    /// so a real error elsewhere in the text still wins, and INFO / DEBUG chatter is not a
    /// candidate.
    fn stated_cause(&self, n: &Normalised<'_>) -> Option<Candidate<'w>> {
        let t = self.t;
        // Chatter (`INFO:root:libx.so: cannot open …`, a probe for an optional library) states
        // no cause.
        if chatter(n, t) {
            return None;
        }
        let f = knowledge::stated_cause(t)?;
        let (shape, rule) = if f.kind == knowledge::Kind::Environment {
            (Shape::EnvironmentLine, "environment.line")
        } else {
            (Shape::KnownPhrase, "phrase.line")
        };
        // A cause a warning states (`Warning : ASCEND_HOME_PATH environment variable is not
        // set.`) may not be what stopped the program: an error that states one comes first.
        let tier = if warning_level(n, t) {
            Tier::Signal
        } else {
            Tier::Strong
        };
        // The message is the line as printed: the row's meaning is the phase evidence's `fact`,
        // not the error's words.
        Some(self.make(tier, CauseRank::Framework, shape, rule, t))
    }

    /// The line of a process that ends abnormally: `terminate called`, `what():`, an
    /// `: [error]` tag, `Aborted (core dumped)`, `Segmentation fault`, `Fatal Python error`.
    fn what_line(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        // libstdc++'s terminate handler: `terminate called after throwing an instance of 'T'`
        // wraps; the `what():  <message>` line after it is the exception's own message.
        if let Some(what) = t.strip_prefix("what():").map(str::trim) {
            if !what.is_empty() {
                // A message that ends in a colon is a title whose text follows on the next
                // lines (Paddle-Lite's `Paddle-Lite C++ Exception: ` over the fatal record it
                // repeats): the lines it introduces say what failed.
                let tier = if is_cascade_text(what) || what.ends_with(':') {
                    Tier::Cascade
                } else {
                    Tier::Strong
                };
                return Some(self.make(
                    tier,
                    CauseRank::ErrorReport,
                    Shape::C10Error,
                    "c10.what",
                    what,
                ));
            }
        }
        None
    }

    /// The line a native program prints as it aborts on its own check, which says why, as a
    /// c10 `what():` does (the `Aborted (core dumped)` after it is the consequence; an Ascend C
    /// kernel's `[ASSERT]` on the device was read before):
    /// - a failed assertion (`process.assertion-failed`): glibc's `prog: file:line: function:
    ///   Assertion `expr' failed.` (`__assert_fail`; a long function signature wraps it, and
    ///   `Assertion `expr' failed.` stands on a line of its own), ggml's `file:line:
    ///   GGML_ASSERT(expr) failed` (`ggml_abort`, llama.cpp's CANN backend);
    /// - LLVM's `report_fatal_error`, `LLVM ERROR: <reason>` (`process.llvm-fatal-error`), as a
    ///   compiler built on LLVM aborts (Triton-Ascend's and bishengir's passes): the reason the
    ///   compilation stopped, which the exception raised around it (`MLIRCompilationError:` with
    ///   no message of its own) only carries.
    fn native_abort(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        const ASSERTION: &str = ": Assertion ";
        let expr_failed = |e: &str| e.starts_with(['`', '\'']) && e.ends_with("' failed.");
        let glibc = needles::find(t, ASSERTION)
            .is_some_and(|at| expr_failed(&t[at + ASSERTION.len()..]))
            || t.strip_prefix("Assertion ").is_some_and(expr_failed);
        let ggml = t.contains(": GGML_ASSERT(") && t.ends_with(") failed");
        let llvm = t
            .strip_prefix("LLVM ERROR:")
            .is_some_and(|reason| !reason.trim().is_empty());
        let rule = if glibc || ggml {
            "process.assertion-failed"
        } else if llvm {
            "process.llvm-fatal-error"
        } else {
            return None;
        };
        Some(self.make(
            Tier::Strong,
            CauseRank::ErrorReport,
            Shape::ProcessAbort,
            rule,
            t,
        ))
    }

    /// A CANN runtime's report of a device fault printed without its plog header (a framework
    /// prints the runtime's messages as they are: `The error from device(chipId:0, dieId:0),
    /// serial number is 13, an exception occurred during AICPU execution, …
    /// [FUNC:ProcessStarsAicpuErrorInfo][FILE:device_error_proc.cc][LINE:1232]`): the item's
    /// `[FUNC:…][LINE:…]` suffix says it is the runtime's, and its words rank it a device fault
    /// as they would its plog record. Other bare items are left to the lines around them.
    fn runtime_device_item(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        (has_func_suffix(t) && rank_plog_error("", t) == CauseRank::DeviceFault).then(|| {
            self.make(
                Tier::Strong,
                CauseRank::DeviceFault,
                Shape::PlogRecord,
                "cann.device-item",
                strip_location(t),
            )
        })
    }

    /// The driver's print of a device exception to the console, under `DEVICE[0] PID[358]:` and
    /// `EXCEPTION STREAM:` (`Message info[0]:RTS_HWTS: aicore exception, slot_id=31,
    /// stream_id=3`, `… hwts sdma error …`, then `Other info[0]:… error code=0x26`): the fault
    /// the runtime's later reports only say was raised. The message line: `Message info[N]:`,
    /// the reporting module's name in capitals (`RTS_HWTS`), `: ` and what happened.
    fn exception_stream_item(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        let (n, rest) = t.strip_prefix("Message info[")?.split_once("]:")?;
        let (module, what) = rest.split_once(": ")?;
        let named = !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
        let module_ok = module.len() >= 2
            && module
                .bytes()
                .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
        (named && module_ok && what.bytes().any(|b| b.is_ascii_alphabetic())).then(|| {
            self.make(
                Tier::Strong,
                CauseRank::DeviceFault,
                Shape::PlogRecord,
                "cann.exception-stream",
                t,
            )
        })
    }

    /// The driver's `EXCEPTION TASK:` print names the task that faulted on its `Exception info:`
    /// line (`TGID=1134286, model id=65535, stream id=21, …, task type=aicpu kernel, …`); its
    /// `Message info[0]:` holds fields only (`aicpu=0,slot_id=0,…`). Without a task type (the
    /// `EXCEPTION STREAM:` print's) the line says nothing of the fault.
    fn exception_task_item(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        let fields = t.strip_prefix("Exception info:")?;
        let task = fields.starts_with("TGID=")
            && fields.split(", ").any(|f| {
                f.strip_prefix("task type=")
                    .is_some_and(|v| v.starts_with(|c: char| c.is_ascii_alphabetic()))
            });
        task.then(|| {
            self.make(
                Tier::Strong,
                CauseRank::DeviceFault,
                Shape::PlogRecord,
                "cann.exception-task",
                t,
            )
        })
    }

    /// GNU make's report that a recipe failed (`make[3]: *** [CMakeFiles/x.dir/build.make:77:
    /// out.cpp] Error 1`, `make: *** [all] Error 2`): a build stopped. What failed is the
    /// recipe's own output above it, when the text has it: a cascade.
    fn make_error(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        let (head, rest) = t.split_once(": *** ")?;
        let level = head
            .strip_prefix("gmake")
            .or_else(|| head.strip_prefix("make"))?;
        let make = level.is_empty()
            || level
                .strip_prefix('[')
                .and_then(|l| l.strip_suffix(']'))
                .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let failed = rest.starts_with('[')
            && rest.rsplit_once("] Error ").is_some_and(|(_, n)| {
                let n = n.split(' ').next().unwrap_or("");
                !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
            });
        (make && failed).then(|| {
            self.make(
                Tier::Cascade,
                CauseRank::ErrorReport,
                Shape::CompilerDiagnostic,
                "make.error",
                t,
            )
        })
    }

    /// An LLVM-based tool's crash report (`Stack dump:`, then `0.\tProgram arguments:
    /// …/bishengir-compile kernel.mlir …`, as LLVM's PrettyStackTrace prints it): the compiler
    /// crashed on that input.
    fn compiler_crash(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        let args = t
            .strip_prefix("0.")?
            .trim_start()
            .strip_prefix("Program arguments: ")?;
        (!args.trim().is_empty()).then(|| {
            self.make(
                Tier::Strong,
                CauseRank::ErrorReport,
                Shape::CompilerDiagnostic,
                "compiler.crash",
                t,
            )
        })
    }

    fn process_abort(&self) -> Option<Candidate<'w>> {
        let t = self.t;
        is_process_abort(t).then(|| {
            self.make(
                Tier::Cascade,
                CauseRank::ErrorReport,
                Shape::ProcessAbort,
                "process.abort",
                t,
            )
        })
    }
}

impl<'w> OtherLine<'w> {
    /// A line that says what failed and why in its own words (`dcmi model initialized failed,
    /// because the device is used. ret is -8020`): `fail…` and, after it, `because` and a
    /// reason. A signal, ranked `Error`: any strong candidate (an exception, a report, a stated
    /// cause) wins, the cascades that only say something failed lose. Only a failure stated as
    /// one: `failed` / `fails` / `failure` as a word (not `test_failed_ops`), not said of what may
    /// or might happen or did not (`may fail because`), not retried or worked around
    /// (`retrying`, `falling back`), not a cascade's wording, not at a debug, INFO or warning
    /// level.
    fn failed_because(&self, n: &Normalised<'_>) -> Option<Candidate<'w>> {
        const HEDGES: &[&str] = &[
            "may", "might", "could", "would", "can", "will", "should", "not", "never", "to", "if",
            "when", "didn't", "won't", "doesn't", "cannot",
        ];
        const RECOVERED: &[&str] = &["retry", "falling back", "fall back", "skipping"];
        let t = self.t;
        if below_error(n, t) || is_cascade_text(t) {
            return None;
        }
        let lower = t.to_ascii_lowercase();
        let fail = fail_word(&lower, &["ed", "s", "ure"])?;
        let hedged = lower[..fail]
            .split_whitespace()
            .rev()
            .take(2)
            .any(|w| HEDGES.contains(&w));
        let because = fail + lower[fail..].find("because ")?;
        let reason = lower[because + "because ".len()..].trim_end();
        // A reason that points elsewhere (`because of the following error (look up to see its
        // traceback):`) is not given here.
        let here = !reason.starts_with("of the following") && !reason.ends_with(':');
        let recovered = RECOVERED.iter().any(|r| lower.contains(r));
        let stated = !hedged
            && !recovered
            && here
            && reason.bytes().filter(u8::is_ascii_alphabetic).count() >= 3;
        stated.then(|| {
            self.make(
                Tier::Signal,
                CauseRank::Error,
                Shape::KnownPhrase,
                "phrase.failed-because",
                t,
            )
        })
    }

    /// A record a glog-form logger wrote at its fatal level (`F`: glog's `LOG(FATAL)` and the
    /// `CHECK` macros, `Check failed: …`, as glog and Paddle-Lite print them; TORCH_LOGS'
    /// `C`): the process aborts right after it, and the record says why, as a failed assertion
    /// does.
    fn fatal_record(&self, n: &Normalised<'_>) -> Option<Candidate<'w>> {
        let t = self.t;
        (matches!(n.glog_level(), Some('F' | 'C')) && t.bytes().any(|b| b.is_ascii_alphabetic()))
            .then(|| {
                self.make(
                    Tier::Strong,
                    CauseRank::ErrorReport,
                    Shape::ProcessAbort,
                    "logger.fatal-record",
                    t,
                )
            })
    }

    /// A record a logger wrote at an error level (vLLM's `ERROR`, a bracketed service logger's
    /// `[ERROR]` or `E`, a bare `[ERROR]` tag) whose text is none of the shapes above: a cascade
    /// ranked `Error` — `ErrorReport` when it names its error number — so any exception, report
    /// or stated cause wins, a wrapper that restates the number loses to the record that names
    /// it first, and a log of a serving or training framework that says what failed only in its
    /// own words still names a line. The lines of a traceback logged at that level (indented
    /// frames and code, its header) are not candidates.
    fn error_record(&self, n: &Normalised<'_>, rest: &str) -> Option<Candidate<'w>> {
        let t = self.t;
        // A bare level tag (`[ERROR]  acl set device 0 failed`, the Ascend samples' and many C++
        // tools' error macro), possibly with the component's own tags after it
        // (`[ERROR][FusedDeepMoe] batchSize(bs) must <= 256.`); plog records and torch_npu lines
        // were read before.
        let bare = bare_level_tag(t)
            .and_then(|(level, rest)| (level == Severity::Error).then_some(rest))
            .map(component_tags)
            .filter(|r| r.starts_with(char::is_whitespace));
        let error_level = match n.severity() {
            Some(Severity::Elided) | None => bare.is_some(),
            Some(level) => level == Severity::Error,
        };
        let said = bare.unwrap_or(t);
        let message = error_level
            && !rest.starts_with(char::is_whitespace)
            && t != "Traceback (most recent call last):"
            && said.bytes().any(|b| b.is_ascii_alphabetic());
        message.then(|| {
            // A record that names its error number says what failed as much as a report does.
            let rank = if super::phase::runtime_number(t).is_some() {
                CauseRank::ErrorReport
            } else {
                CauseRank::Error
            };
            self.make(
                Tier::Cascade,
                rank,
                Shape::LoggingError,
                "logger.error-record",
                bare.map_or(t, str::trim),
            )
        })
    }

    /// A line printed at no level that gives a runtime error number as what a call returned
    /// (`LaunchKernel aiv ret 507015`, a program's own print of an ACL call): the
    /// numbers of [`super::phase::runtime_number`] are failures whatever prints them. A cascade
    /// ranked `ErrorReport`: any exception, report or stated cause wins, and it wins over the
    /// error records without a number (ranked `Error`), before or after it. A line with a level
    /// (a logger's, c10's or glog's header, a bare `[INFO]` or `[WARN]` tag), one that calls
    /// itself a warning (torch_npu's `W NPUStream.cpp:409] Warning: NPU warning, error code is
    /// 507046`) and an indented one (a traceback's source line) are no candidates for their
    /// number.
    fn runtime_return(&self, n: &Normalised<'_>, rest: &str) -> Option<Candidate<'w>> {
        let t = self.t;
        let unlevelled = n.severity().is_none() && bare_level_tag(t).is_none();
        let failure = unlevelled
            && !rest.starts_with(char::is_whitespace)
            && super::phase::runtime_number(t).is_some()
            && !t.to_ascii_lowercase().contains("warn");
        failure.then(|| {
            self.make(
                Tier::Cascade,
                CauseRank::ErrorReport,
                Shape::LoggingError,
                "runtime.error-number",
                t,
            )
        })
    }
}

/// Whether `s` names a fault or timeout on the device by its runtime error number (a number
/// whose knowledge row is a device fault or a timeout: `507035`).
fn names_device_fault(s: &str) -> bool {
    super::phase::runtime_number(s).is_some_and(knowledge::is_device_side)
}

/// `s` past the bracketed component tags at its start (`[FusedDeepMoe]`, `[Triton][BEG]`: no
/// spaces, at most 64 bytes each, at most four).
fn component_tags(mut s: &str) -> &str {
    for _ in 0..4 {
        let Some(body) = s.strip_prefix('[') else {
            break;
        };
        match body.find(']') {
            Some(end) if end > 0 && end <= 64 && !body[..end].contains(char::is_whitespace) => {
                s = &body[end + 1..];
            }
            _ => break,
        }
    }
    s
}

/// Error lines that are neither exceptions nor CANN reports.
fn classify_other<'w>(w: &[WinLine<'w>], i: usize, soft: bool) -> Option<Candidate<'w>> {
    let n = &w[i].norm;
    let l = OtherLine {
        i,
        no: w[i].no,
        t: w[i].rest.trim(),
    };
    let t = l.t;
    if n.glog_level().is_some() {
        if n.artifact().is_some_and(|a| a.starts_with("recompiles")) {
            return Some(l.make(
                Tier::Soft,
                CauseRank::Error,
                Shape::Recompile,
                "recompile.line",
                t,
            ));
        }
        if soft {
            return None;
        }
    }
    if let Some(e) = torch_npu::parse_torch_npu_line(t) {
        let mut c = l.make(
            Tier::Cascade,
            CauseRank::Framework,
            Shape::TorchNpuErrorCode,
            "torch-npu.err-code",
            t,
        );
        c.pid = i64::try_from(e.pid).ok();
        return Some(c);
    }
    if failed_check_cause(w, i) {
        return Some(l.make(
            Tier::Strong,
            CauseRank::Error,
            Shape::CompilerDiagnostic,
            "atc.op-check",
            t,
        ));
    }
    if backend_ops_failed(t) {
        return Some(l.make(
            if soft { Tier::Soft } else { Tier::Strong },
            CauseRank::ErrorReport,
            Shape::LoggingError,
            "test.backend-ops-failed",
            t,
        ));
    }
    // `t` is `rest` trimmed: the header `plog` was read from, the message trimmed at its end.
    if let Some((h, msg)) = &w[i].plog {
        return l.plog_record(h, msg.trim_end().as_bytes());
    }
    l.error_format(n)
        .or_else(|| l.what_line())
        .or_else(|| l.native_abort().map(|c| with_assertion_head(w, c)))
        .or_else(|| l.runtime_device_item())
        .or_else(|| l.exception_stream_item())
        .or_else(|| l.exception_task_item())
        .or_else(|| l.make_error())
        .or_else(|| l.compiler_crash())
        .or_else(|| l.stated_cause(n))
        .or_else(|| l.fatal_record(n))
        .or_else(|| l.failed_because(n))
        .or_else(|| l.process_abort().map(|c| under_backtrace(w, c)))
        .or_else(|| l.error_record(n, w[i].rest))
        .or_else(|| l.runtime_return(n, w[i].rest))
}

/// A frame of glibc's `backtrace_symbols` (`/x/libllama.so(_ZN13llama_context13graph_reserveEj…+0x148)[0xffffa3f198dc]`,
/// `llama-server(+0x17cfc8)[0xaaaad02ecfc8]`): the object, its symbol if any, the address.
/// `Some(symbol)` (empty when the frame has none).
pub(super) fn glibc_frame(t: &str) -> Option<&str> {
    let (head, address) = t.trim().strip_suffix(']')?.rsplit_once('[')?;
    let hex = address.strip_prefix("0x")?;
    if hex.is_empty() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let (object, inside) = head.strip_suffix(')')?.split_once('(')?;
    let (symbol, offset) = inside.rsplit_once('+')?;
    let offset = offset.strip_prefix("0x")?;
    (!object.is_empty()
        && !object.contains(char::is_whitespace)
        && !offset.is_empty()
        && offset.bytes().all(|b| b.is_ascii_hexdigit()))
    .then_some(symbol)
}

/// Symbols of the abort's own path in a backtrace (the C library's abort and signal delivery,
/// C++'s terminate and unwinding, ggml's and c10's printers of the trace) and of every thread's
/// start: never what failed.
const ABORT_PATH: [&str; 15] = [
    "abort",
    "raise",
    "gsignal",
    "pthread_kill",
    "__pthread_kill",
    "__kernel_rt_sigreturn",
    "__restore_rt",
    "__cxa_throw",
    "__cxa_rethrow",
    "ggml_print_backtrace",
    "ggml_abort",
    "_start",
    "start_thread",
    "clone",
    "clone3",
];

/// Prefixes of the same: mangled C++ names (with their arguments) and families of symbols.
const ABORT_PATH_PREFIXES: [&str; 6] = [
    "_ZSt9terminate",
    "_ZN10__cxxabiv1",
    "_ZN3c106detail14torchCheckFail",
    "_Unwind_",
    "__libc_start",
    "__pthread_kill_",
];

/// Objects whose frames are the runtime's, not the program's: the C and C++ libraries, the
/// unwinder, Python's interpreter.
const RUNTIME_OBJECTS: [&str; 6] = [
    "libc.so",
    "libstdc++.so",
    "libgcc_s.so",
    "libpython",
    "python",
    "ld-linux",
];

/// A process's death by a signal (`Aborted (core dumped)`, `Segmentation fault`) under the
/// native backtrace it printed (glibc's frames, innermost first, right above it), a line with
/// no message of its own: the innermost frame with a symbol, outside the abort's path and the
/// runtime's libraries, is the line to cite (the cut paste of wider-world batch 42 kept only
/// llama.cpp's frames, from `llama_context::graph_reserve` on); the abort stays in its scope. A
/// C++ `terminate called …` line says what was thrown: it stays.
fn under_backtrace<'w>(w: &[WinLine<'w>], mut c: Candidate<'w>) -> Candidate<'w> {
    let i = c.index;
    let t = w[i].rest.trim_start();
    let lower = t.to_ascii_lowercase();
    let signal = [
        "aborted",
        "segmentation fault",
        "bus error",
        "illegal instruction",
    ]
    .iter()
    .any(|s| lower.starts_with(s))
        || shell_job_signal(t);
    if c.shape != Shape::ProcessAbort || !signal {
        return c;
    }
    // Each frame's window index and symbol, read upwards: outermost first.
    let frames: Vec<(usize, &str)> = (0..i)
        .rev()
        .map_while(|k| Some((k, glibc_frame(w[k].rest)?)))
        .collect();
    if frames.len() < 2 {
        return c;
    }
    let program = |k: usize, s: &str| {
        let frame = w[k].rest.trim();
        let object = frame.split('(').next().unwrap_or("");
        let file = object.rsplit('/').next().unwrap_or(object);
        !RUNTIME_OBJECTS.iter().any(|r| file.starts_with(r))
            && !s.is_empty()
            && !ABORT_PATH.contains(&s)
            && !ABORT_PATH_PREFIXES.iter().any(|a| s.starts_with(a))
            // CPython's own functions, in a statically linked interpreter too.
            && !s.starts_with("Py")
            && !s.starts_with("_Py")
    };
    // The innermost is the last read.
    let innermost = frames
        .iter()
        .rev()
        .find(|&&(k, s)| program(k, s))
        .map(|&(k, _)| k);
    if let Some(k) = innermost {
        c.index = k;
        c.message = w[k].rest.trim().to_string();
        c.scope.insert(0, (w[k].no, w[k].rest.trim().into()));
        c.rule = "process.backtrace";
    }
    c
}

/// glibc's assertion message wrapped by a long function signature: `Assertion `expr' failed.` on
/// a line of its own under the head that names the source (`python3: …/mlir/IR/UseDefLists.h:198:
/// mlir::IRObjectWithUseList<…>::~IRObjectWithUseList()` and its `[with OperandType = …]:`
/// line: glibc prints `PROGRAM: FILE:LINE: FUNCTION: Assertion …`). The head's lines join the
/// candidate's scope, so the source file is read with it: at most three above, the line right
/// above ending as the function does before `Assertion` (`:`), up to the one that starts with
/// `FILE:LINE:` (after the program's name or without it).
fn with_assertion_head<'w>(w: &[WinLine<'w>], mut c: Candidate<'w>) -> Candidate<'w> {
    let i = c.index;
    if c.rule != "process.assertion-failed" || !w[i].rest.trim().starts_with("Assertion ") {
        return c;
    }
    if i == 0 || !w[i - 1].rest.trim_end().ends_with(':') {
        return c;
    }
    let file_line = |field: &str| {
        field.rsplit_once(':').is_some_and(|(file, line)| {
            file.contains(['/', '.'])
                && !line.is_empty()
                && line.bytes().all(|b| b.is_ascii_digit())
        })
    };
    let located = |t: &str| t.split(": ").take(2).any(file_line);
    let head = (i.saturating_sub(3)..i)
        .rev()
        .take_while(|&k| !w[k].rest.trim().is_empty())
        .find(|&k| located(w[k].rest.trim()));
    if let Some(k) = head {
        let own = std::mem::take(&mut c.scope);
        for l in &w[k..i] {
            push_scope(&mut c.scope, l.no, l.rest.trim());
        }
        c.scope.extend(own);
    }
    c
}

/// Lines around ld's needed-library warning where the references it explains stand.
const NEEDED_NEAR: usize = 40;

/// An undefined reference made by a shared library (`/usr/local/Ascend/acllib/lib64/
/// libruntime.so: undefined reference to `drvStreamIdFree'`): a symbol one of its own needed
/// libraries was to bring.
fn library_reference(t: &str) -> bool {
    let Some(at) = needles::find(t, ": undefined reference to ") else {
        return false;
    };
    let object = t[..at].rsplit([' ', '/']).next().unwrap_or("");
    object.ends_with(".so")
        || object.rsplit_once(".so.").is_some_and(|(_, v)| {
            !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        })
}

/// The undefined references shared libraries make ([`library_reference`]) within
/// [`NEEDED_NEAR`] lines of ld's (strong) warning that a library another one needs was not found
/// ([`Collector::needed_library`]): symbols that library was to bring, the warning's
/// consequences (cascades), before or after it.
fn needed_library_explains(w: &[WinLine<'_>], out: &mut [Candidate<'_>]) {
    let warnings: Vec<usize> = out
        .iter()
        .filter(|c| {
            c.rule == "linker.error" && c.tier == Tier::Strong && c.message.contains(", needed by ")
        })
        .map(|c| c.index)
        .collect();
    if warnings.is_empty() {
        return;
    }
    for c in out.iter_mut() {
        let near = warnings.iter().any(|&k| k.abs_diff(c.index) <= NEEDED_NEAR);
        if near && c.rule == "linker.error" && library_reference(w[c.index].rest.trim()) {
            c.tier = Tier::Cascade;
        }
    }
}

/// A worker that `died unexpectedly` (the parent's word: no error of the worker's own reached
/// it, knowledge row `died unexpectedly`) within [`DEATH_NEAR`] lines below a process's own
/// abort (a segfault handler's banner, `Segmentation fault`, `Fatal Python error`): the death is
/// that abort's consequence, a cascade; the abort is the worker's own report. Not when the
/// death says the worker was killed (`exit code: -9`, 137, SIGKILL: the host's out-of-memory
/// killer or an operator, which print nothing in the worker).
fn deaths_explained(out: &mut [Candidate<'_>]) {
    let aborts: Vec<usize> = out
        .iter()
        .filter(|c| {
            c.shape == Shape::ProcessAbort
                || c.message
                    .to_ascii_lowercase()
                    .contains("segfault encountered")
        })
        .map(|c| c.index)
        .collect();
    if aborts.is_empty() {
        return;
    }
    for c in out.iter_mut() {
        let said = c.message.to_ascii_lowercase();
        let killed = [
            "exit code: -9",
            "exit code -9",
            "exitcode: -9",
            "137",
            "sigkill",
        ]
        .iter()
        .any(|k| said.contains(k));
        let after_abort = aborts
            .iter()
            .any(|&a| a < c.index && c.index - a <= DEATH_NEAR);
        if after_abort
            && !killed
            && said.contains("died unexpectedly")
            && !aborts.contains(&c.index)
        {
            c.tier = Tier::Cascade;
        }
    }
}

/// Lines below a process's abort within which a worker's death is read as its consequence.
const DEATH_NEAR: usize = 40;

/// A case llama.cpp's operator test failed (`test-backend-ops`: `MUL_MAT(type_a=q8_0,…):
/// [MUL_MAT] NMSE = 0.000952909 > 0.000500000 FAIL`, the `FAIL` printed in red even into a file:
/// the scanner reads lines without their colours): the backend's result differs from the CPU's
/// by more than the case allows, the operator computes wrong numbers on that backend.
fn backend_ops_failed(t: &str) -> bool {
    needles::find(t, "] NMSE = ").is_some_and(|at| {
        let case = &t[at..];
        case.contains(" > ") && case.trim_end().ends_with(" FAIL")
    })
}

/// The cause of a failed check in a pretty-printed JSON report — ATC's operator check of a model
/// (`{"name": "Resize_117", "result": "failed", "type": "ai.onnx::13::Resize", "cause":
/// [{"code": 1, "message": "The type is not supported."}]}`): a `"message"` field nested under a
/// `"cause": [` list opened at most four lines above it, in an object whose own `"result"` (a
/// field at the list's indentation, before that object closes) is `"failed"`.
fn failed_check_cause(w: &[WinLine<'_>], i: usize) -> bool {
    let indent = |raw: &str| raw.len() - raw.trim_start().len();
    if !w[i].raw.trim_start().starts_with("\"message\":") {
        return false;
    }
    // The list that holds the message: its line, and the indentation of the object's fields.
    let Some(list) = (i.saturating_sub(4)..i).rev().find(|&k| {
        let t = w[k].raw.trim();
        t.starts_with("\"cause\":") && t.ends_with('[')
    }) else {
        return false;
    };
    let field = indent(w[list].raw);
    if indent(w[i].raw) <= field {
        return false;
    }
    // The object's fields at that indentation, up and down to where it opens and closes.
    let of_object = |k: usize| {
        let raw = w[k].raw;
        let t = raw.trim();
        (indent(raw) == field && t.starts_with('"')).then_some(t)
    };
    let closes = |k: usize| {
        let t = w[k].raw.trim();
        indent(w[k].raw) < field && (t.starts_with('{') || t.starts_with('}') || t.starts_with('['))
    };
    let up = (list.saturating_sub(12)..list)
        .rev()
        .take_while(|&k| !closes(k));
    let down = (list + 1..(list + 16).min(w.len())).take_while(|&k| !closes(k));
    up.chain(down).filter_map(of_object).any(|t| {
        t.strip_prefix("\"result\":")
            .is_some_and(|v| v.trim_start().starts_with("\"failed\""))
    })
}

/// An MLIR or clang-style diagnostic of severity error in `line` (a TBE dict stands inside the
/// exception that raised it, which is read as an exception).
fn error_diagnostic(line: &str) -> Option<compiler_diag::Diagnostic<'_>> {
    parse_diagnostic(line)
        .or_else(|| compiler_diag::wrapped_diagnostic(line))
        .filter(|d| d.form != Form::TbeDict && d.severity.is_error())
}

/// A line at a warning level ([`line_level`]: vLLM's and Python's `WARNING`, glog's and c10's
/// `W`, a service logger's, a bare `[WARN]` tag), or text that calls itself a warning
/// ([`worded_warning`]).
fn warning_level(n: &Normalised<'_>, t: &str) -> bool {
    line_level(n, t) == Some(Severity::Warning) || worded_warning(t)
}

/// Text that calls itself a warning whatever its prefix says: it opens with the word
/// (`Warning: …`, `WARNING : …`), holds the logging cookbook's level field (`05/22 09:09:35 -
/// mmengine - WARNING - …`), or is Python's `warnings` output.
fn worded_warning(t: &str) -> bool {
    let worded = t
        .get(..7)
        .is_some_and(|w| w.eq_ignore_ascii_case("warning"))
        && t[7..].trim_start().starts_with(':');
    worded || needles::find(t, " - WARNING - ").is_some() || python_warning(t)
}

/// Python's `warnings` output: `file.py:12: UserWarning: …` (or the category first on the line,
/// `DeprecationWarning: …`): a category whose name ends in `Warning`, then `: `.
fn python_warning(t: &str) -> bool {
    t.match_indices("Warning: ").any(|(at, _)| {
        let name_start = t[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |k| k + 1);
        t[name_start..at].starts_with(|c: char| c.is_ascii_uppercase())
            && (name_start == 0 || t[..name_start].ends_with(": "))
    })
}

/// Whether window line `k` only repeats (whole, or cut at its end, in markdown emphasis at
/// most: `**[F 10/28 …] Failed to load the`) a line of the 40 above window index `before`: a
/// copy says nothing new.
fn repeats_above(w: &[WinLine<'_>], k: usize, before: usize) -> bool {
    let copy = w[k].raw.trim().trim_matches('*').trim();
    copy.len() >= 20
        && w[before.saturating_sub(40)..before]
            .iter()
            .any(|l| l.raw.trim().starts_with(copy))
}

/// A process's last words: a C++ `terminate`, a signal, Python's fatal error, a `: [ERROR]` tag.
/// Compared ignoring ASCII case, without a lower-case copy of every line.
fn is_process_abort(t: &str) -> bool {
    let b = t.as_bytes();
    let starts = |p: &str| {
        b.get(..p.len())
            .is_some_and(|h| h.eq_ignore_ascii_case(p.as_bytes()))
    };
    let has = |p: &str| {
        b.windows(p.len())
            .any(|w| w.eq_ignore_ascii_case(p.as_bytes()))
    };
    let error_tag = || {
        memchr::memchr_iter(b':', b).any(|at| {
            b.get(at + 1..at + 9)
                .is_some_and(|h| h.eq_ignore_ascii_case(b" [error]"))
        })
    };
    starts("terminate called")
        || starts("what():")
        || error_tag()
        || starts("aborted (core dumped)")
        || starts("segmentation fault")
        || starts("fatal python error")
        // absl's failure signal handler (Ray, gRPC): `*** SIGSEGV received at time=… ***`.
        || (starts("*** sig") && has(" received at time="))
        // tvm-ffi's segfault handler (under vLLM, FlashInfer): `!!!!!!! Segfault encountered
        // !!!!!!!`, then the native frames.
        || t.trim_matches('!')
            .trim()
            .eq_ignore_ascii_case("segfault encountered")
        || shell_job_signal(t)
}

/// A shell's report that a job it ran died of a signal (bash's `run_om.sh: line 7: 257060
/// Segmentation fault      (core dumped) python3 ./cli_chat.py …`, an interactive shell's
/// `[1]+  Aborted (core dumped)  ./app`): the script and line or the job number, the process id,
/// the signal's description.
pub(super) fn shell_job_signal(t: &str) -> bool {
    const SIGNALS: [&str; 7] = [
        "Segmentation fault",
        "Aborted",
        "Bus error",
        "Illegal instruction",
        "Floating point exception",
        // SIGKILL (the host's out-of-memory killer, most often) and SIGTERM.
        "Killed",
        "Terminated",
    ];
    // `<script>: line <n>: ` before the process id.
    let after_line = t.split_once(": line ").and_then(|(_, r)| {
        let (n, rest) = r.split_once(": ")?;
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())).then_some(rest)
    });
    // `[1]+  ` (a job number) before the description.
    let job = t.strip_prefix('[').and_then(|r| {
        let (n, rest) = r.split_once(']')?;
        (!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .then(|| rest.trim_start_matches(['+', '-']).trim_start())
    });
    fn pid_then(r: &str) -> Option<&str> {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        (digits > 0).then_some(r.get(digits..)?.trim_start())
    }
    after_line
        .and_then(pid_then)
        .or(job)
        .is_some_and(|r| SIGNALS.iter().any(|s| r.starts_with(s)))
}

/// A plog record at level ERROR printed into the screen log.
fn is_plog_error(line: &WinLine<'_>) -> bool {
    line.plog
        .as_ref()
        .is_some_and(|(h, _)| h.level == Level::Error)
}

#[cfg(test)]
mod tests {
    use super::super::normalise::normalise;
    use super::*;

    // Wider-world batch 24: Kubernetes' events table, with and without its type column.
    #[test]
    fn kubernetes_event_rows() {
        assert_eq!(
            kubernetes_warning("Warning  FailedScheduling  27s   hami-scheduler  0/1 nodes are available: 1 Insufficient huawei.com/Ascend910B3-memory."),
            Some(("FailedScheduling", "0/1 nodes are available: 1 Insufficient huawei.com/Ascend910B3-memory."))
        );
        assert_eq!(
            kubernetes_warning("UnexpectedAdmissionError  14m   kubelet         Allocate failed due to rpc error: code = Unknown"),
            Some(("UnexpectedAdmissionError", "Allocate failed due to rpc error: code = Unknown"))
        );
        assert_eq!(
            kubernetes_warning("Warning  BackOff  2m (x3 over 5m)  kubelet, node-1  Back-off restarting failed container"),
            Some(("BackOff", "Back-off restarting failed container"))
        );
        for other in [
            "Normal   Scheduled  30s   default-scheduler  Successfully assigned default/p to n1",
            "Pulled  10s  kubelet  Container image already present",
            "Type     Reason            Age   From            Message",
            "Warning  FailedScheduling",
            "Warning  the config  is old  see docs",
            "FailedMount  soon  kubelet  x",
        ] {
            assert_eq!(kubernetes_warning(other), None, "{other}");
        }
        let text = "Events:\n  Type     Reason            Age   From            Message\n  ----     ------            ----  ----            -------\n  Warning  FailedScheduling  27s   hami-scheduler  0/1 nodes are available: 1 Insufficient huawei.com/Ascend910B3-memory.\n";
        let e = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!((e.line, e.evidence.rule.as_ref()), (4, KUBERNETES_EVENT));
    }

    /// The abort test as it was written first, a lower-case copy searched (the reference).
    fn lower_case_abort(t: &str) -> bool {
        let lower = t.to_ascii_lowercase();
        lower.starts_with("terminate called")
            || lower.starts_with("what():")
            || lower.contains(": [error]")
            || lower.starts_with("aborted (core dumped)")
            || lower.starts_with("segmentation fault")
            || lower.starts_with("fatal python error")
            || (lower.starts_with("*** sig") && lower.contains(" received at time="))
            || lower.trim_matches('!').trim() == "segfault encountered"
    }

    #[test]
    fn process_aborts_ignoring_case() {
        for t in [
            "terminate called after throwing an instance of 'c10::Error'",
            "Terminate Called recursively",
            "what():  NPU error",
            "WHAT(): x",
            "worker: [ERROR] lost",
            "worker: [Error] lost",
            "worker:[ERROR] lost",
            "x: [ERRO",
            "ends with a colon:",
            ":",
            "Aborted (core dumped)",
            "Segmentation fault (core dumped)",
            "Fatal Python error: Segmentation fault",
            "*** SIGSEGV received at time=1717 on cpu 3 ***",
            "*** SIGABRT RECEIVED AT TIME=1 ***",
            "*** SIGSEGV received",
            "*** sig",
            "!!!!!!! Segfault encountered !!!!!!!",
            "!! segfault encountered",
            "Segfault encountered here",
            "é: [error] after a multi-byte char",
            "",
            "an ordinary line",
        ] {
            assert_eq!(is_process_abort(t), lower_case_abort(t), "{t:?}");
        }
        // tvm-ffi's banner, as printed and shortened; the words inside a sentence are not one.
        assert!(is_process_abort("!!!!!!! Segfault encountered !!!!!!!"));
        assert!(is_process_abort("!! segfault encountered"));
        assert!(!is_process_abort("Segfault encountered here"));
    }

    /// Every candidate of `text` (one window, lines numbered from 1) as (line, tier, rule,
    /// message).
    fn candidates(text: &str) -> Vec<(u64, Tier, &'static str, String)> {
        let lines: Vec<WinLine<'_>> = text
            .lines()
            .zip(1..)
            .map(|(raw, no)| {
                let norm = normalise(raw);
                let rest = norm.rest;
                WinLine::new(no, raw, norm, rest)
            })
            .collect();
        collect(&lines)
            .into_iter()
            .map(|c| (lines[c.index].no, c.tier, c.rule, c.message))
            .collect()
    }

    /// The (line, tier, rule) of each candidate.
    fn rules(got: &[(u64, Tier, &'static str, String)]) -> Vec<(u64, Tier, &'static str)> {
        got.iter().map(|(l, t, r, _)| (*l, *t, *r)).collect()
    }

    #[test]
    fn library_throw_messages() {
        for what in [
            "_Map_base::at",
            "map::at",
            "vector::_M_range_check: __n (which is 5) >= this->size() (which is 3)",
            "basic_string::_M_construct null not valid",
            "basic_string::substr: __pos (which is 9) > this->size() (which is 2)",
            "stoi",
            "bad_function_call",
            "cannot create std::vector larger than max_size()",
        ] {
            assert!(is_library_throw(what), "{what}");
        }
        for what in [
            "std::bad_alloc",
            "Invalid DP number per node: 0",
            "c10::Error: boom",
            "Engine::init failed: no devices",
            "::at",
            "",
        ] {
            assert!(!is_library_throw(what), "{what}");
        }
    }

    #[test]
    fn component_tags_after_the_level() {
        assert_eq!(component_tags("[Triton][BEG] x"), " x");
        // At most four tags, each without spaces and at most 64 bytes.
        assert_eq!(component_tags("[A][B][C][D][E] x"), "[E] x");
        let long = format!("[{}] x", "a".repeat(65));
        assert_eq!(component_tags(&long), long);
        assert_eq!(component_tags("[a b] x"), "[a b] x");
        assert_eq!(component_tags("[] x"), "[] x");
        // An error record needs letters in its message, past the tags.
        assert!(candidates("[ERROR][Tag] 123\n").is_empty());
        assert_eq!(
            rules(&candidates("[ERROR][Tag] ring 3 lost\n")),
            [(1, Tier::Cascade, "logger.error-record")]
        );
    }

    #[test]
    fn every_candidate_in_line_order_with_its_tier() {
        let text = "\
Traceback (most recent call last):
  File \"m.py\", line 3, in f
    g()
ValueError: bad value
[INFO] GE(7,python):2025-05-08-09:56:18.526.761 [a.cc:1]7 Run:fine
[ERROR] RUNTIME(7,python):2025-05-08-09:56:18.526.762 [a.cc:1]7 Run:synchronize stream failed, runtime result = 507035
RuntimeError: NPU function error: call aclnnAdd failed
";
        let got = candidates(text);
        let short = rules(&got);
        assert_eq!(
            short,
            [
                (4, Tier::Strong, "python.exception"),
                // INFO records are never candidates; a cascade wording is its own tier.
                (6, Tier::Cascade, "plog.error-record"),
                (7, Tier::Cascade, "python.exception"),
            ],
            "{got:#?}"
        );
        assert_eq!(got[0].3, "ValueError: bad value");
        assert_eq!(
            got[1].3,
            "synchronize stream failed, runtime result = 507035"
        );
    }

    #[test]
    fn a_backend_compiler_failure_is_unwrapped_to_the_line_after_it() {
        let text = "\
torch._dynamo.exc.BackendCompilerFailed: backend='npugraph_ex' raised:
TypeError: unsupported operand
  more detail
";
        let got = candidates(text);
        assert_eq!(
            got,
            [(
                2,
                Tier::Strong,
                "python.wrapped",
                "TypeError: unsupported operand".to_string()
            )]
        );
    }

    #[test]
    fn graph_breaks_and_recompiles_are_signals() {
        let text = "\
Break Reasons:
  Reason: call_function BuiltinVariable(print)
Recompiling function forward in m.py:3
    triggered by the following guard failure(s):
    - 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 3
";
        let got = candidates(text);
        let short = rules(&got);
        assert_eq!(
            short,
            [
                (2, Tier::Signal, "graph-break.reason"),
                (5, Tier::Signal, "recompile.guard-failure"),
            ],
            "{got:#?}"
        );
        assert_eq!(got[0].3, "call_function BuiltinVariable(print)");
    }

    #[test]
    fn a_torch_npu_hint_and_process_aborts() {
        let text = "\
[Error]: The aicore execution times out.
        Rectify the fault based on the error information in the ascend log.
terminate called after throwing an instance of 'c10::Error'
";
        let got = candidates(text);
        let short = rules(&got);
        assert_eq!(
            short,
            [
                (1, Tier::Strong, "torch-npu.hint"),
                (3, Tier::Cascade, "process.abort"),
            ],
            "{got:#?}"
        );
        assert_eq!(got[0].3, "The aicore execution times out.");
    }

    // A wrapper is a property of the line: it only says where an error passed.
    #[test]
    fn a_line_that_only_says_where_is_a_wrapper() {
        assert!(only_says_where(
            "[ERROR] HCCL error in: /usr1/torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:1716"
        ));
        assert!(only_says_where("NPU error at x/y.cc:12, error code is 4"));
        assert!(!only_says_where(
            "HCCL function error: hcclCommInitRootInfoConfig(n, &r), error code is 1"
        ));
        assert!(!only_says_where("[ERROR] HCCL error"));
        assert!(!only_says_where("could not open /data/x.py:3 for writing"));
        let text = "RuntimeError: [ERROR] HCCL error in: /w/torch_npu/csrc/distributed/ProcessGroupHCCL.cpp:1716\n[ERROR] 2025-01-01-00:00:00 (PID:1, Device:0, RankID:0) ERR02200 DIST call hccl api failed.\nEJ0001: [PID: 1] 2025-01-01-00:00:00.000.000 Failed to initialize the HCCP process. Reason: the device network is not configured.\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 3);
    }

    #[test]
    fn a_traceback_item_naming_an_installation_fault_is_the_reports_cause() {
        // The head is the symptom of a missing kernel package, which the TraceBack names.
        let text = "RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!\nEZ9999: 2024-01-01-00:00:00.000.000  Parse dynamic kernel config fail.\n        TraceBack (most recent call last):\n        AclOpKernelInit failed opType\n        Op Cast does not has any binary.\n        launch failed for Cast, errno:561000.\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(
            (c.line, c.message.as_str()),
            (5, "EZ9999: Op Cast does not has any binary.")
        );
        // Without it, the head as before.
        let text = text.replace("Op Cast does not has any binary.", "Kernel Run failed.");
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 2);
        // A head that names a device fault keeps it.
        let text = "EZ9999: Inner Error!\nEZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 Task run failed, the error from device(0).\n        TraceBack (most recent call last):\n        init env failed![FUNC:f][FILE:f.cc][LINE:1]\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 2);
        // Nor does a head that states a cause, or an external code's report.
        let text = "EZ9999: Inner Error!\nEZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 NPU out of memory. Tried to allocate 2.00 GiB\n        TraceBack (most recent call last):\n        init env failed![FUNC:f][FILE:f.cc][LINE:1]\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 2);
        let text = "EL0004: [PID: 1] 2025-01-01-00:00:00.000.000 Failed to allocate memory.\n        TraceBack (most recent call last):\n        Op Cast does not has any binary.[FUNC:f][FILE:f.cc][LINE:1]\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!((c.line, c.message.contains("binary")), (1, false));
    }

    #[test]
    fn a_traceback_item_stating_a_cause_under_a_bare_code_title_is_the_reports_cause() {
        // EL0003's head is only its code's title; the TraceBack's first item says what failed.
        let text = "ggml-cann.cpp:69: CANN error\nCANN error: EL0003: [PID: 1] 2025-10-21-03:40:09.141.920 The argument is invalid.\n        Solution: Try again with a valid argument.\n        TraceBack (most recent call last):\n        Convert memory address from virtual to dma physical failed, retCode=0x7020014.[FUNC:MemcpyAsyncTaskInitV3][FILE:memory_task.cc][LINE:694]\n        rtMemcpyAsync execute failed, reason=[driver error:invalid handle][FUNC:F][FILE:e.cc][LINE:53]\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(
            (c.line, c.message.as_str()),
            (
                5,
                "EL0003: Convert memory address from virtual to dma physical failed, retCode=0x7020014."
            )
        );
        // A head that says more than the title keeps the line; so does a TraceBack item that
        // states nothing on its own (a device record: samples logs/37).
        let more = text.replace(
            "The argument is invalid.\n",
            "The argument is invalid.Reason: rtGetDevMsg execute failed\n",
        );
        let c = crate::causal::first_causal_error(more.as_bytes()).expect("an error");
        assert_eq!(c.line, 2);
        let device = text.replace(
            "Convert memory address from virtual to dma physical failed, retCode=0x7020014.",
            "The error from device(chipId:6, dieId:0), serial number is 3, there is an exception of fftsplus aicore error",
        );
        let c = crate::causal::first_causal_error(device.as_bytes()).expect("an error");
        assert_eq!(c.line, 2);
    }

    #[test]
    fn a_compilers_retry_note_on_a_buffer_overflow_is_the_cause() {
        // BiShengIR says its pipeline failed, and its note says why.
        let text = "[rank43]: [ERROR] Failed to run BiShengIR pipeline\n[rank43]:     scf.if %26 {\n[rank43]: [NOTE] Due to Ub overflow, automatically set enable-code-motion to false, set enable-auto-multi-buffer to false; compilation still failed.\n[rank43]: loc(\"/x/k.py\":49:0): error: Failed to run BiShengHIR pipeline\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 3);
    }

    #[test]
    fn an_operators_check_and_a_model_for_another_chip_state_their_causes() {
        use crate::knowledge::{Nature, Phase};
        let of = |text: &str| {
            crate::causal::first_causal_error(text.as_bytes())
                .and_then(|e| e.phase.map(|p| (e.line, p.phase, p.nature)))
        };
        // A tiling check that names what it accepts and what it got.
        assert_eq!(
            of("[ERROR][MoeDistributeDispatchV2] Attr commAlg is invalid, current only support fullmesh_v1 and fullmesh_v2, but got commAlg = fullmesh.\n"),
            Some((1, Phase::Execution, Some(Nature::Parameter)))
        );
        // An offline model built for another chip.
        assert_eq!(
            of("[ACL ERROR] EE1001: [PID: 106] 2025-10-30-08:21:08.817.477 The argument is invalid.Reason: ModelCheckCompatibility failed, supported socVersion=Ascend910B2, but the model socVersion=Ascend910B\n").map(|(l, p, _)| (l, p)),
            Some((1, Phase::Environment))
        );
    }

    #[test]
    fn an_exception_under_an_issue_titles_kind() {
        // Read as the exception it holds (before the prefix, only its runtime number was).
        let text = "[Question]: RuntimeError: aclnnCausalConv1dGetWorkspaceSize failed with aclnnStatus=561002.\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(
            (c.line, c.exception_type.as_deref()),
            (1, Some("RuntimeError"))
        );
    }

    #[test]
    fn an_issue_title_heading_holds_the_error_the_cut_body_does_not() {
        // An issue page pasted whole: its title a Markdown heading, its traceback cut before
        // the exception.
        let text = "# [Bug]: RuntimeError: create:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:89 HCCL function error: HcclCommInitRootInfo(numRanks, &rootInfo, rank, &(comm->hcclComm_))\n\ngot the following error:\nTraceback (most recent call last):\n  File \"/w/grpo.py\", line 198, in main\n    trainer = GRPOTrainer(\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(
            (c.line, c.exception_type.as_deref()),
            (1, Some("RuntimeError"))
        );
    }

    #[test]
    fn the_error_managers_own_formatting_failure_is_no_cause() {
        let text = "[ERROR] GE(7924,demo):2023-04-05-07:55:43.928.641 [error_manager.cc:91]7924 FormatErrorMessage: [INIT][OPS_KER][Check][Param] FormatErrorMessage failed, ret:-1, pattern:%s[FUNC:%s][FILE:%s][LINE:%d]\n[ERROR] FE(7924,demo):2023-04-05-07:55:43.928.710 [plugin_manager.cc:62]7924 OpenPlugin:\"[FEInit][OpPluginSo] Fail to load so file /usr/local/Ascend/opp/fusion_pass/built_in/libops_fusion_pass_aicore.so, error message is (null).\"\n";
        let c = crate::causal::first_causal_error(text.as_bytes()).expect("an error");
        assert_eq!(c.line, 2, "{c:?}");
    }

    #[test]
    fn text_helpers() {
        assert!(is_cascade_text("Stream Synchronize failed, retCode=0x31"));
        assert!(!is_cascade_text("Tiling failed: x must be positive"));
        assert_eq!(
            strip_location(" bad tiling [FUNC:Tiling][FILE:t.cc][LINE:3] "),
            "bad tiling"
        );
        assert_eq!(strip_location("no location"), "no location");
        assert!(is_kernel_assert("[ASSERT] /k.cpp:9: Assertion `i < n'"));
        assert_eq!(floor_char("aé", 2), 1);
        assert_eq!(floor_char("ab", 9), 2);
    }

    #[test]
    fn a_scope_keeps_at_most_its_byte_budget() {
        let mut scope = Vec::new();
        let long = "é".repeat(SCOPE_BYTES);
        push_scope(&mut scope, 1, &long);
        push_scope(&mut scope, 2, "more");
        assert_eq!(scope.len(), 1);
        assert_eq!(scope[0].1.len(), SCOPE_BYTES);
        let bs = "b".repeat(SCOPE_BYTES);
        let mut scope = Vec::new();
        push_scope(&mut scope, 1, "a");
        push_scope(&mut scope, 2, &bs);
        assert_eq!(scope[1].1.len(), SCOPE_BYTES - 1);
        // A copied text has the same budget.
        push_scope_copy(&mut scope, 3, "c");
        assert_eq!(scope.len(), 2);
        let mut scope = Vec::new();
        push_scope_copy(&mut scope, 1, &long);
        assert_eq!(scope[0].1.len(), SCOPE_BYTES);
    }
}
