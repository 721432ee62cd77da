//! CANN error reports (`EZ9999: Inner Error!` … `TraceBack` …), torch_npu `ERRxxxxx` lines and
//! the code tables (spec §3).
//!
//! Block grammar, all eras (§3.2, §3.3):
//!
//! ```text
//! start    = CODE ": " ("Inner" | "Internal") " " ("E"|"e") "rror!"          (inner first error)
//!          | "[PID: " n "] " ts " " title "(" CODE "): " msg               (external, 2026)
//!          | CODE "[PID: " n "] " ts " " title? "(" CODE "):  " msg        (code line, 2026)
//!          | CODE ": [PID: " n "] " ts " " msg                            (code line, 2025)
//!          | CODE ":[PID:" n "] " ts " " msg                              (GE, glued)
//!          | CODE ": " ts "  " msg                                        (code line, 2024)
//!          | title "(" CODE "): " msg                                     (aclnn, no PID)
//!          | CODE ": " msg                                                (2022, embedded)
//! body     = ( indented-line | "TraceBack (most recent call last):" | "Possible Cause: " text
//!            | "Solution: " text | code-line | line ending in [FUNC:…][FILE:…][LINE:…] )*
//! item     = text ("[FUNC:" f "][FILE:" f "][LINE:" n "]")? ("[THREAD:" n "]")?
//! CODE     = [EWI] [0-9A-Z] [0-9]{4}
//! ```
//!
//! The start may sit at the end of another line (`Warning: EZ9999: Inner Error!`,
//! `RecentErrMsg: …`, `detail:EZ9999: …`, `Ascend Error Message:EI0002: …`). A block ends at an
//! empty line unless the next line is an item, or at any other line. Unindented lines right after
//! a code line continue its message (2022 multi-line messages); when the code line's message
//! stops at a comma, its words are on the next line, which is then the one to cite.
//!
//! The **root message** is the message on the code line, or the first item when no code line has
//! one; TraceBack items go outward, toward the API that reported the error.
//!
//! ```
//! use npgx_parsers::cann_error::parse_reports;
//! let text = b"EI0002: [PID: 198748] 2025-03-26-13:49:01.670.614 The wait execution of the Notify register times out.\n        Possible Cause: 1. An exception\n        TraceBack (most recent call last):\n        The 0 stuck notify wait context info:(context_id=13, notify_id=17).[FUNC:P][FILE:device_error_proc.cc][LINE:1664]\n";
//! let r = &parse_reports(text)[0];
//! assert_eq!(r.code.as_deref(), Some("EI0002"));
//! assert_eq!(r.pid, Some(198748));
//! assert_eq!(r.message.as_ref().map(|m| m.line), Some(1));
//! assert_eq!(r.traceback[0].func.as_deref(), Some("P"));
//! ```

pub mod tables;
pub mod torch_npu;

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::line_prefix::strip_prefixes;
use crate::needles::{self, Needles};
use crate::plog::header::{timestamp, HeaderCache, PlogTime};
use crate::plog::record::{lines, lossy, lossy_cow};

/// A text and the 1-based line it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LineText {
    pub line: u64,
    pub text: String,
}

/// One item of a report: a message with its optional source location.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ReportItem {
    pub line: u64,
    pub text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub func: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread: Option<u64>,
}

/// One CANN error report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CannErrorReport {
    /// Line of the block start.
    pub line: u64,
    pub end_line: u64,
    /// The first code (`EZ9999`). `None` for a fragment: report items found without a block
    /// start (a log excerpt that begins inside a TraceBack).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// Every distinct code of the block, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub codes: Vec<String>,
    /// All codes end in 9999 / 8888 (an internal error).
    pub inner: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<PlogTime>,
    /// Root message (the message on the code line, or the first item).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<LineText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub possible_cause: Option<LineText>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub solution: Option<LineText>,
    /// Items printed before the TraceBack line (inner 8888 items, 2021 detail lines).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<ReportItem>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub traceback: Vec<ReportItem>,
    /// The line to cite as the first causal error of this report: a bare `CODE: Inner Error!`
    /// start line, else the root message's line.
    pub causal_line: u64,
}

impl CannErrorReport {
    fn add_code(&mut self, code: &str) {
        if self.code.is_none() {
            self.code = Some(code.to_owned());
        }
        if !self.codes.iter().any(|c| c == code) {
            self.codes.push(code.to_owned());
        }
        self.inner = self.codes.iter().all(|c| is_inner_code(c));
    }
}

/// `…9999` and `…8888` are inner codes.
pub fn is_inner_code(code: &str) -> bool {
    code.ends_with("9999") || code.ends_with("8888")
}

fn is_code(b: &[u8]) -> bool {
    b.len() == 6
        && matches!(b[0], b'E' | b'W' | b'I')
        && (b[1].is_ascii_digit() || b[1].is_ascii_uppercase())
        && b[2..].iter().all(u8::is_ascii_digit)
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Byte offsets of the code tokens (`[EWI][0-9A-Z][0-9]{4}`) in `s` that are not glued to a
/// preceding word character.
fn code_tokens(s: &str) -> impl Iterator<Item = usize> + '_ {
    let b = s.as_bytes();
    // A token starts with `E`, `W` or `I`: only those bytes are looked at (every ERROR record's
    // message is searched for codes).
    memchr::memchr3_iter(b'E', b'W', b'I', &b[..b.len().saturating_sub(5)])
        .filter(move |&i| is_code(&b[i..i + 6]) && (i == 0 || !is_word(b[i - 1])))
}

/// Finds a code token (`[EWI][0-9A-Z][0-9]{4}`) not glued to a preceding word character,
/// followed by one of `: `, `[PID`, `)`, `(`. Returns its byte offset.
pub fn find_code(s: &str) -> Option<usize> {
    code_tokens(s).find(|&i| {
        // The token is ASCII: `i + 6` is a char boundary.
        let after = &s[i + 6..];
        after.starts_with(": ")
            || after.starts_with("[PID")
            || after.starts_with(":[PID")
            || after.starts_with(')')
            || after.starts_with('(')
    })
}

/// Splits a `[FUNC:f][FILE:f][LINE:n][THREAD:t]` suffix off an item.
pub fn parse_item(line: u64, text: &str) -> ReportItem {
    let t = text.trim();
    let mut item = ReportItem {
        line,
        text: t.to_owned(),
        func: None,
        file: None,
        src_line: None,
        thread: None,
    };
    if let Some(p) = needles::find(t, "[FUNC:") {
        item.text = t[..p].trim_end().to_owned();
        let mut r = &t[p..];
        while let Some(inner) = r.strip_prefix('[') {
            let Some(end) = inner.find(']') else { break };
            let (k, v) = inner[..end].split_once(':').unwrap_or((&inner[..end], ""));
            match k {
                "FUNC" => item.func = Some(v.to_owned()),
                "FILE" => item.file = Some(v.to_owned()),
                "LINE" => item.src_line = v.parse().ok(),
                "THREAD" => item.thread = v.parse().ok(),
                _ => {}
            }
            r = &inner[end + 1..];
        }
    }
    item
}

/// The code of the old inner layout's message line, `EZ9999  Kernel task happen error…`: an
/// error code (`E…`; a warning's `W…` or an information's `I…` line is no report of a failure)
/// at the start, then two spaces or a tab.
fn headless_code(s: &str) -> Option<&str> {
    s.get(..6)
        .filter(|c| c.starts_with('E') && is_code(c.as_bytes()) && led_by(s, c))
}

/// Whether `s` is the old inner layout's line led by `code`: the code, then two spaces or a tab.
fn led_by(s: &str, code: &str) -> bool {
    s.strip_prefix(code)
        .is_some_and(|r| r.starts_with("  ") || r.starts_with('\t'))
}

/// Whether `s` carries a CANN item's `[FUNC:…][FILE:…][LINE:…]` suffix.
pub(crate) fn has_func_suffix(s: &str) -> bool {
    needles::contains(s, "[FUNC:") && needles::contains(s, "[LINE:")
}

/// What a code line holds: code, pid, time, title, message.
#[derive(Debug, Default, PartialEq, Eq)]
struct CodeLine {
    code: String,
    inner_start: bool,
    pid: Option<u64>,
    time: Option<PlogTime>,
    title: Option<String>,
    message: Option<String>,
}

/// `[PID: n] ts ` → (pid, time, rest). The number may carry a stray bracket of its own
/// (`[PID:  [881460] ts`, as a llama.cpp paste shows it).
fn pid_ts(s: &str) -> Option<(u64, Option<PlogTime>, &str)> {
    let r = s.strip_prefix("[PID:")?;
    let (pid, r) = r.split_once(']')?;
    let pid = pid
        .trim()
        .trim_start_matches('[')
        .trim_start()
        .parse()
        .ok()?;
    let r = r.trim_start();
    match timestamp(r.as_bytes()) {
        Ok((rest, t)) => {
            let off = r.len() - rest.len();
            Some((pid, Some(t), &r[off..]))
        }
        Err(_) => Some((pid, None, r)),
    }
}

/// `Title(CODE): msg` or `(CODE): msg` at the start of `s`.
fn title_code(s: &str) -> Option<(Option<String>, String, &str)> {
    let open = s.find('(')?;
    let title = &s[..open];
    if !title
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
    {
        return None;
    }
    let r = &s[open + 1..];
    if r.len() < 7 || !is_code(&r.as_bytes()[..6]) {
        return None;
    }
    // `Title(CODE): msg`, or the title alone in CANN's `<Category>_Error_<What>` naming
    // (`Communication_Error_Get_Socket(EI0006)`): the title is the message.
    let msg = if let Some(m) = r[6..].strip_prefix("):") {
        m.trim()
    } else if r[6..].trim_end() == ")" && title.contains("_Error_") {
        title
    } else {
        return None;
    };
    let code = r[..6].to_owned();
    let title = (!title.is_empty()).then(|| title.to_owned());
    Some((title, code, msg))
}

/// Recognises a block start or code line anywhere in `s` (already peeled).
fn code_line(s: &str) -> Option<CodeLine> {
    // External form without a leading code: `[PID: n] ts Title(CODE): msg`.
    if let Some(p) = needles::find(s, "[PID: ") {
        let before = &s[..p];
        if before.is_empty() || before.ends_with(' ') {
            if let Some((pid, time, rest)) = pid_ts(&s[p..]) {
                if let Some((title, code, msg)) = title_code(rest.trim_start()) {
                    return Some(CodeLine {
                        code,
                        pid: Some(pid),
                        time,
                        title,
                        message: Some(msg.to_owned()),
                        inner_start: false,
                    });
                }
            }
        }
    }
    let at = find_code(s)?;
    let code = s[at..at + 6].to_owned();
    let after = &s[at + 6..];
    let mut cl = CodeLine {
        code: code.clone(),
        ..CodeLine::default()
    };
    if let Some(r) = after.strip_prefix(": ") {
        let rl = r.trim_start();
        if inner_header(rl) {
            cl.inner_start = true;
            return Some(cl);
        }
        if let Some((pid, time, rest)) = pid_ts(rl) {
            cl.pid = Some(pid);
            cl.time = time;
            cl.message = Some(rest.trim().to_owned());
            return Some(cl);
        }
        if let Ok((rest, t)) = timestamp(rl.as_bytes()) {
            cl.time = Some(t);
            cl.message = Some(String::from_utf8_lossy(rest).trim().to_owned());
            return Some(cl);
        }
        cl.message = Some(r.trim().to_owned());
        return Some(cl);
    }
    // GE glues the PID tag to the code: `E89999:[PID:260559] ts msg`.
    if let Some(r) = after
        .strip_prefix("[PID")
        .or_else(|| after.strip_prefix(":[PID"))
    {
        let r = format!("[PID{r}");
        let (pid, time, rest) = pid_ts(&r)?;
        cl.pid = Some(pid);
        cl.time = time;
        let (title, _c, msg) = title_code(rest.trim_start()).unwrap_or((None, code, rest.trim()));
        cl.title = title;
        cl.message = Some(msg.to_owned());
        return Some(cl);
    }
    // `Title(CODE): msg` — the code was found after '('.
    let open = s[..at].rfind('(')?;
    if open + 1 != at {
        return None;
    }
    let start = s[..open]
        .char_indices()
        .rev()
        .find(|(_, c)| !(c.is_ascii_alphanumeric() || *c == '_'))
        .map_or(0, |(p, c)| p + c.len_utf8());
    let (title, code, msg) = title_code(&s[start..])?;
    Some(CodeLine {
        code,
        title,
        message: Some(msg.to_owned()),
        ..CodeLine::default()
    })
}

#[derive(Debug, PartialEq, Eq, Clone, Copy)]
enum Section {
    Items,
    TraceBack,
}

/// Assembles CANN error reports from physical lines pushed in order.
#[derive(Debug, Default)]
pub struct ReportAssembler {
    open: Option<(CannErrorReport, Section, bool)>,
    gap: bool,
    /// Message still open for unindented continuation lines (2022 form).
    msg_open: bool,
    done: Vec<CannErrorReport>,
    /// Every line is asked whether it is a plog record: the lines of a log repeat a few header
    /// prefixes.
    headers: HeaderCache,
    /// The open report's `CODE: Inner Error!` header came after another program's words
    /// (llama.cpp's `CANN error: `): a message line of the same code below it is cited instead.
    quoted_header: bool,
}

impl ReportAssembler {
    /// Feeds one physical line (1-based number, raw bytes without terminator).
    pub fn push(&mut self, line_no: u64, raw: &[u8]) {
        if self.headers.parse(raw).is_some() {
            self.close();
            return;
        }
        let text = lossy_cow(raw);
        let peeled = strip_prefixes(&text).rest;
        let trimmed = peeled.trim();
        if trimmed.is_empty() {
            if self.open.is_some() {
                self.gap = true;
                self.msg_open = false;
            }
            return;
        }
        let indented = peeled.starts_with([' ', '\t']);
        let bare = peeled.len() == text.len();
        if let Some(cl) = code_line(if indented { trimmed } else { peeled }) {
            // A header that opens its line (`EZ9999: Inner Error!`) is the cited line; one after
            // another program's words (llama.cpp's `CANN error: EZ9999: Inner Error!`) is that
            // program's quote of it: a message line of its code below it is cited, if one comes.
            let opens = bare && !indented && trimmed.starts_with(cl.code.as_str());
            self.code_line(line_no, cl, opens);
            return;
        }
        let Some((rep, section, _)) = self.open.as_mut() else {
            // The old inner layout's message line without the `CODE: Inner Error!` header
            // before it — cut from the paste, or glued to another tool's line (ONNX Runtime's
            // `Status Message: CANN errorEE9999: Inner Error!`): the code, two spaces, the
            // message and its `[FUNC:…]` suffix say it is a report's message on their own.
            let headless = (!indented && has_func_suffix(trimmed))
                .then(|| headless_code(trimmed))
                .flatten();
            if let Some(code) = headless {
                let mut rep = CannErrorReport {
                    line: line_no,
                    causal_line: line_no,
                    ..CannErrorReport::default()
                };
                rep.add_code(code);
                let item = parse_item(line_no, &trimmed[code.len()..]);
                rep.message = Some(LineText {
                    line: line_no,
                    text: item.text.clone(),
                });
                rep.items.push(item);
                rep.end_line = line_no;
                self.open = Some((rep, Section::Items, true));
            } else if indented && has_func_suffix(trimmed) {
                let mut rep = CannErrorReport {
                    line: line_no,
                    causal_line: line_no,
                    ..CannErrorReport::default()
                };
                rep.traceback.push(parse_item(line_no, trimmed));
                rep.message = Some(LineText {
                    line: line_no,
                    text: rep.traceback[0].text.clone(),
                });
                rep.end_line = line_no;
                self.open = Some((rep, Section::TraceBack, false));
            }
            return;
        };
        // Before 2024 the message line after `CODE: Inner Error!` repeats the code and two
        // spaces (`EH9999  [Init][Env]init env failed![FUNC:…]`; torch_npu prints it without the
        // `[FUNC:…]` suffix, `EZ9999  Cannot parse json for config file […]`): it carries the
        // message and is the one to cite, as the `CODE[PID: n] ts …` line of later layouts.
        let code_len = rep
            .code
            .as_deref()
            .filter(|c| led_by(trimmed, c))
            .map(str::len);
        let code_led = code_len.is_some();
        if trimmed.starts_with("TraceBack (most recent call last):") {
            *section = Section::TraceBack;
        } else if let Some(c) = trimmed.strip_prefix("Possible Cause:") {
            rep.possible_cause = Some(LineText {
                line: line_no,
                text: c.trim().to_owned(),
            });
        } else if let Some(c) = trimmed.strip_prefix("Solution:") {
            rep.solution = Some(LineText {
                line: line_no,
                text: c.trim().to_owned(),
            });
        } else if code_led || indented || has_func_suffix(trimmed) {
            if self.gap && !has_func_suffix(trimmed) {
                self.close();
                return;
            }
            let item = parse_item(line_no, code_len.map_or(trimmed, |n| &trimmed[n..]));
            // A message wrapped by the terminal or the paste: its last piece brings the
            // `[FUNC:…]` suffix on a line of its own, unindented and without the code (`EZ9999:
            // [PID: 218] … The error from device(…) … current: ` / `0x12c2…, vec error info: …`
            // / `0140080.[FUNC:ProcessStarsCoreErrorInfo]…`): it ends the message. (A suffix
            // alone on its line is the location of the message above: an empty item, as before.)
            let wrapped_end = self.msg_open
                && !indented
                && !code_led
                && has_func_suffix(trimmed)
                && !item.text.trim().is_empty();
            if self.msg_open
                && (!has_func_suffix(trimmed) || wrapped_end)
                && *section == Section::Items
                && rep.items.is_empty()
            {
                if wrapped_end {
                    self.msg_open = false;
                }
                if let Some(m) = rep.message.as_mut() {
                    m.text.push('\n');
                    m.text
                        .push_str(if wrapped_end { &item.text } else { trimmed });
                }
            } else {
                self.msg_open = false;
                if rep.message.is_none() {
                    rep.message = Some(LineText {
                        line: line_no,
                        text: item.text.clone(),
                    });
                    // A CANN item below a quoted header says more than the quote (llama.cpp's
                    // own lines after it, `  current device: 0, in function …`, are not items);
                    // so does an operator's own check under a bare `CODE: Inner Error!` in the
                    // layout without a code-led message line (ATC's 2022 reports: `        op[Concat_243],
                    // the input shape dims should be equal …[FUNC:…]`, its callers below it).
                    // Other first items stay under the header: the runtime's relay of a fault
                    // (`rtMemcpyAsync execute failed, reason=[vector core exception]`) or a
                    // lead-in (`The device(3), core list[0-0], error code is:`).
                    let op_check =
                        indented && *section == Section::Items && trimmed.starts_with("op[");
                    let quoted_item = (self.quoted_header || op_check) && has_func_suffix(trimmed);
                    if rep.causal_line == 0
                        || ((code_led || quoted_item) && rep.causal_line == rep.line)
                    {
                        rep.causal_line = line_no;
                    }
                }
                match section {
                    Section::Items => rep.items.push(item),
                    Section::TraceBack => rep.traceback.push(item),
                }
            }
        } else if self.msg_open && !self.gap {
            if let Some(m) = rep.message.as_mut() {
                // A message broken after a comma (`op[RotaryPositionEmbedding],` / `when input is
                // BNSD layout …, please do not use …`): its words are on the line that goes on,
                // which is the one to cite.
                // Only a line of the message's own (no logger or c10 prefix peeled from it, no
                // traceback of Python's).
                if rep.causal_line == m.line
                    && !m.text.contains('\n')
                    && m.text.ends_with(',')
                    && bare
                    && !trimmed.starts_with("Traceback")
                {
                    rep.causal_line = line_no;
                }
                m.text.push('\n');
                m.text.push_str(trimmed);
            }
        } else {
            self.close();
            return;
        }
        if let Some((rep, _, _)) = self.open.as_mut() {
            rep.end_line = line_no;
        }
        self.gap = false;
    }

    fn code_line(&mut self, line_no: u64, cl: CodeLine, bare_start: bool) {
        let continues = match &self.open {
            Some((rep, _, has_code_msg)) => {
                !cl.inner_start && !*has_code_msg && rep.code.as_deref() == Some(cl.code.as_str())
            }
            None => false,
        };
        if continues && cl.pid.is_some() && cl.message.is_some() {
            if let Some((rep, _, _)) = self.open.as_mut() {
                // 2025+ layout: `CODE: Inner Error!` is only a header; the `CODE[PID: n] ts …`
                // line after it carries the message and is the one to cite.
                if rep.causal_line == rep.line && rep.message.is_none() {
                    rep.causal_line = 0;
                }
            }
        }
        if !continues {
            self.close();
            let rep = CannErrorReport {
                line: line_no,
                end_line: line_no,
                causal_line: if cl.inner_start { line_no } else { 0 },
                ..CannErrorReport::default()
            };
            self.quoted_header = cl.inner_start && !bare_start;
            self.open = Some((rep, Section::Items, false));
        }
        let Some((rep, _, has_code_msg)) = self.open.as_mut() else {
            return;
        };
        rep.add_code(&cl.code);
        rep.end_line = line_no;
        if rep.pid.is_none() {
            rep.pid = cl.pid;
        }
        if rep.time.is_none() {
            rep.time = cl.time;
        }
        if rep.title.is_none() {
            rep.title = cl.title;
        }
        if let Some(m) = cl.message {
            let item = parse_item(line_no, &m);
            rep.message = Some(LineText {
                line: line_no,
                text: item.text,
            });
            *has_code_msg = true;
            if rep.causal_line == 0 || (self.quoted_header && rep.causal_line == rep.line) {
                rep.causal_line = line_no;
            }
            // A message that ends with its `[FUNC:…]` suffix is whole: lines after it are no
            // pieces of it.
            self.msg_open = !has_func_suffix(&m);
        }
        self.gap = false;
    }

    /// Ends the open report because a line that cannot belong to it arrived (the caller saw a
    /// plog header and did not push it).
    pub fn interrupt(&mut self) {
        self.close();
    }

    fn close(&mut self) {
        // The flag belongs to the report it closes.
        self.quoted_header = false;
        if let Some((mut rep, _, _)) = self.open.take() {
            if rep.causal_line == 0 {
                rep.causal_line = rep.line;
            }
            self.done.push(rep);
        }
        self.gap = false;
        self.msg_open = false;
    }

    /// Reports completed so far (taken out of the assembler).
    pub fn take_done(&mut self) -> Vec<CannErrorReport> {
        std::mem::take(&mut self.done)
    }

    /// Closes the open report and returns all remaining ones.
    pub fn finish(mut self) -> Vec<CannErrorReport> {
        self.close();
        self.done
    }
}

/// Whether a code line's text (after `CODE: `) starts with the inner-code header that says the
/// next line carries the message (`Inner Error!`, `Internal error!`).
pub fn inner_header(text: &str) -> bool {
    [
        "Inner Error!",
        "Internal error!",
        "Inner error!",
        "Internal Error!",
    ]
    .iter()
    .any(|h| text.starts_with(h))
}

/// The codes a log message mentions, normalised for counting: CANN codes (`EZ9999`), ACL codes
/// (`ACL 507035` from `ErrCode=` / `runtime result = `), TS retCodes (`retCode 0x31`), runtime
/// inner codes (`inner 0x715005e`) and HCCL error numbers (`errNo 0x…`).
///
/// ```
/// use npgx_parsers::cann_error::codes_in;
/// assert_eq!(codes_in("rtStreamSynchronize:ErrCode=507035, desc=[vector core exception], InnerCode=0x715005e"),
///            ["ACL 507035", "inner 0x715005e"]);
/// assert_eq!(codes_in("report error module_type=5, module_name=EZ9999"), ["EZ9999"]);
/// ```
pub fn codes_in(text: &str) -> Vec<String> {
    codes_in_bag(&crate::kv::KvBag::new(text))
}

/// [`codes_in`] of a message already wrapped in a [`crate::kv::KvBag`] (a caller that reads
/// other keys of it lower-cases it once).
pub fn codes_in_bag(bag: &crate::kv::KvBag<'_>) -> Vec<String> {
    let text = bag.text_all();
    let mut out: Vec<String> = Vec::new();
    let mut push = |c: String| {
        if !out.contains(&c) {
            out.push(c);
        }
    };
    let b = text.as_bytes();
    for i in code_tokens(text).filter(|&i| !b.get(i + 6).copied().is_some_and(is_word)) {
        push(text[i..i + 6].to_owned());
    }
    if let Some(c) = bag
        .token("errcode")
        .filter(|c| c.bytes().all(|b| b.is_ascii_digit()))
    {
        push(format!("ACL {c}"));
    }
    if let Some(p) = bag.find("runtime result = ") {
        let n: String = text[p + 17..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if !n.is_empty() {
            push(format!("ACL {n}"));
        }
    }
    if let Some(r) = bag.token("retcode").filter(|r| r.starts_with("0x")) {
        match crate::kv::parse_int(r) {
            Some(v) if v > 0xffff => push(format!("inner {r}")),
            Some(_) => push(format!("retCode {r}")),
            None => {}
        }
    }
    if let Some(c) = bag.token("innercode") {
        push(format!("inner {c}"));
    }
    if let Some(p) = needles::find(text, "errNo[") {
        if let Some(end) = text[p + 6..].find(']') {
            push(format!("errNo {}", &text[p + 6..p + 6 + end]));
        }
    }
    out
}

/// Every CANN error report in `text`. Never panics.
pub fn parse_reports(text: &[u8]) -> Vec<CannErrorReport> {
    let mut asm = ReportAssembler::default();
    for (no, line) in lines(text) {
        asm.push(no, line);
    }
    asm.finish()
}

/// Every torch_npu `ERRxxxxx` line in `text`, with line numbers.
pub fn parse_torch_npu_lines(text: &[u8]) -> Vec<torch_npu::TorchNpuError> {
    let mut out = Vec::new();
    for (no, line) in lines(text) {
        static ERR: LazyLock<Needles> = LazyLock::new(|| Needles::new(["ERR"]));
        if !ERR.any_in(line) {
            continue;
        }
        let s = lossy(line);
        if let Some(mut e) = torch_npu::parse_torch_npu_line(strip_prefixes(&s).rest) {
            e.line = no;
            out.push(e);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(text: &str) -> CannErrorReport {
        let v = parse_reports(text.as_bytes());
        assert_eq!(v.len(), 1, "{v:#?}");
        v.into_iter().next().unwrap()
    }

    #[test]
    fn inner_2021_no_traceback() {
        let r = one("E39999: Inner Error!\n        Aicpu kernel execute failed, device_id=0[FUNC:GetError][FILE:stream.cc][LINE:701]\n        Stream synchronize failed[FUNC:ReportError][FILE:logger.cc][LINE:566]\n\nTraceback (most recent call last):\n");
        assert_eq!(r.code.as_deref(), Some("E39999"));
        assert!(r.inner);
        assert_eq!(r.message.as_ref().unwrap().line, 2);
        assert_eq!(r.items.len(), 2);
        assert_eq!(r.items[0].src_line, Some(701));
        assert_eq!((r.line, r.causal_line, r.end_line), (1, 1, 3));
    }

    // Wider-world batch 39: ATC's report of an operator's own check, under the bare header, is
    // the line cited; the callers below it stay items.
    #[test]
    fn an_operator_check_under_a_bare_header_is_cited() {
        let r = one("E89999: Inner Error!\n        op[Concat_243], the input shape dims should be equal except merge axis[FUNC:ConcatInferShapeCommon][FILE:split_combination_ops.cc][LINE:789]\n        Call InferShapeAndType for node:Concat_243(ConcatD) failed[FUNC:Infer][FILE:infershape_pass.cc][LINE:117]\n");
        assert_eq!((r.causal_line, r.items.len()), (2, 2));
        // In the TraceBack it is a caller's item: the header stays.
        let r = one("E89999: Inner Error!\n        TraceBack (most recent call last):\n        op[Concat_243], bad[FUNC:F][FILE:f.cc][LINE:1]\n");
        assert_eq!(r.causal_line, 1);
    }

    #[test]
    fn code_line_2026_two_spaces_and_7_space_items() {
        let r = one("[ERROR] RecentErrMsg: EZ9999: Inner Error!\nEZ9999[PID: 91583] 2026-04-15-11:09:31.973.508 (EZ9999):  The error from device[FUNC:P][FILE:f.cc][LINE:580]\n        TraceBack (most recent call last):\n       The extend info: errcode:(95)[FUNC:P][FILE:f.cc][LINE:583]\n");
        assert_eq!(r.pid, Some(91583));
        assert_eq!(r.title, None);
        assert_eq!(
            r.message.as_ref().map(|m| (m.line, m.text.as_str())),
            Some((2, "The error from device"))
        );
        assert_eq!(r.traceback.len(), 1);
        assert_eq!(r.causal_line, 2);
    }

    #[test]
    fn a_header_quoted_by_another_program_is_not_the_cited_line() {
        // llama.cpp prints `CANN error: ` and the runtime's recent message: the header there is
        // its quote, and the message line below it is cited; a header that opens its line is.
        let quoted = one("CANN error: EZ9999: Inner Error!\nEZ9999: 2024-10-31-12:08:42.276.420  The error from device(0), serial number is 3[FUNC:F][FILE:a.cc][LINE:1]\n");
        assert_eq!(quoted.causal_line, 2);
        let opens = one("EZ9999: Inner Error!\nEZ9999: 2024-10-31-12:08:42.276.420  The error from device(0), serial number is 3[FUNC:F][FILE:a.cc][LINE:1]\n");
        assert_eq!(opens.causal_line, 1);
        // With no message line of its code below it, the quoted header stays the cited line
        // (not llama.cpp's location line after it).
        let alone = one("CANN error: EZ9999: Inner Error!\n  current device: 0, in function init at ggml-cann.cpp:1\n");
        assert_eq!(alone.causal_line, 1);
        let item = one("CANN error: EZ9999: Inner Error!\n        the copy failed[FUNC:F][FILE:a.cc][LINE:1]\n");
        assert_eq!(item.causal_line, 2);
    }

    #[test]
    fn the_code_led_message_line_without_its_header() {
        // The header cut from the paste, or glued to another tool's line before it: the code,
        // two spaces and a `[FUNC:…]` suffix start the report at the message line.
        for text in [
            "EE9999  the query failed.[FUNC:F][FILE:a.cc][LINE:3]\nnext item[FUNC:G][FILE:b.cc][LINE:4]\n",
            "[E:x:, y.cc:1 Run] Status Message: CANN errorEE9999: Inner Error!\nEE9999  the query failed.[FUNC:F][FILE:a.cc][LINE:3]\nnext item[FUNC:G][FILE:b.cc][LINE:4]\n",
        ] {
            let reports = parse_reports(text.as_bytes());
            assert_eq!(reports.len(), 1, "{text}");
            let r = &reports[0];
            let at = if text.starts_with('[') { 2 } else { 1 };
            assert_eq!((r.causal_line, r.code.as_deref()), (at, Some("EE9999")));
            assert_eq!(r.message.as_ref().unwrap().text, "the query failed.");
            assert_eq!(r.items.len(), 2);
        }
        // Without the suffix, one space, or indented: no report of its own.
        for text in [
            "EE9999  the query failed.\n",
            "EE9999 the query failed.[FUNC:F][FILE:a.cc][LINE:3]\n",
            "XE9999  the query failed.[FUNC:F][FILE:a.cc][LINE:3]\n",
            "W11001  Op [Cast] does not hit the library.[FUNC:C][FILE:a.cc][LINE:3]\n",
            "I39999  device 0 opened.[FUNC:O][FILE:a.cc][LINE:3]\n",
        ] {
            assert!(parse_reports(text.as_bytes()).is_empty(), "{text}");
        }
    }

    #[test]
    fn code_colon_timestamp_2024_and_thread() {
        let r = one("E39999: Inner Error!\nE39999: 2024-10-20-22:34:40.965.193  The error from device(chipId:0, dieId:0)[FUNC:F][FILE:d.cc][LINE:1232][THREAD:123358]\n        TraceBack (most recent call last):\n        Kernel task happen error[FUNC:P][FILE:t.cc][LINE:1776][THREAD:123358]\n");
        assert_eq!(
            r.time.map(|t| t.to_string()).as_deref(),
            Some("2024-10-20-22:34:40.965.193")
        );
        assert_eq!(r.traceback[0].thread, Some(123358));
        assert_eq!(r.causal_line, 1);
    }

    #[test]
    fn external_pid_title_form_after_harness() {
        let r = one("[ERROR] RecentErrMsg: [PID: 1613532] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n        Possible Cause: Available memory is insufficient.\n        Solution: Close applications not in use.\n        TraceBack (most recent call last):\n        allocate device memory failed.[FUNC:Init][FILE:memory_pool_manager.cc][LINE:50]\n");
        assert_eq!(r.code.as_deref(), Some("EL0004"));
        assert_eq!(r.title.as_deref(), Some("Memory_Allocation_Failure"));
        assert!(!r.inner);
        assert_eq!(
            r.possible_cause.as_ref().unwrap().text,
            "Available memory is insufficient."
        );
        assert_eq!(r.solution.as_ref().unwrap().line, 3);
    }

    // The pre-2024 message line that repeats the code, with or without its `[FUNC:…]` suffix
    // (torch_npu prints the report without it), continues the report and is its message.
    #[test]
    fn the_code_led_message_line_with_and_without_its_location() {
        for second in [
            "EZ9999  Cannot parse json for config file [/x/kernel/config/ascend910/cast.json].",
            "EZ9999  Cannot parse json for config file [/x/cast.json].[FUNC:F][FILE:f.cc][LINE:1]",
        ] {
            let r = one(&format!(
                "RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!\n{second}\n        TraceBack (most recent call last):\n        Op Cast does not has any binary.\n"
            ));
            assert_eq!((r.causal_line, r.end_line), (2, 4), "{second}");
            assert!(r
                .message
                .as_ref()
                .is_some_and(|m| m.text.starts_with("Cannot parse json")));
        }
        // Another code at the start of a line is no part of it.
        let r = one("EZ9999: Inner Error!\nEH9999  something else\n");
        assert_eq!(r.end_line, 1);
    }

    // A message broken after a comma goes on on the next line, which holds its words and is cited
    // (wider-world batch 24); one broken elsewhere keeps its code line.
    #[test]
    fn a_message_broken_after_a_comma_cites_its_next_line() {
        let r = one("E89999: Inner Error!\nE89999[PID: 183646] 2026-04-01-13:43:00.810.813 (E89999):  op[RotaryPositionEmbedding],\nwhen input is BNSD layout, please do not use RotaryPositionEmbedding fusion operator.\n[FUNC:DoRotateHalfTiling][FILE:rope_rotate_half_tiling.cpp][LINE:498]\n");
        assert_eq!((r.causal_line, r.end_line), (3, 4));
        assert!(r
            .message
            .as_ref()
            .is_some_and(|m| m.line == 2 && m.text.ends_with("fusion operator.")));
        let r = one("E89999: Inner Error!\nE89999[PID: 1] 2026-04-01-13:43:00.810.813 (E89999):  op[X] failed\nbecause of y\n");
        assert_eq!(r.causal_line, 2);
        // A line with a prefix peeled is not the message's own.
        let r = one("E89999: Inner Error!\nE89999[PID: 1] 2026-04-01-13:43:00.810.813 (E89999):  op[X],\n[W101 10:00:00.000000000 compiler_depend.ts:57] Warning: other\n");
        assert_eq!(r.causal_line, 2);
    }

    // Wider-world batch 40: a device's report wrapped by the terminal, its `[FUNC:…]` suffix on
    // the wrapped message's last piece: that piece ends the message, no item of its own.
    #[test]
    fn a_wrapped_message_ends_at_its_suffix() {
        let r = one("EZ9999: Inner Error!\nEZ9999: [PID: 218] 2025-10-09-08:44:29.193.168 The error from device(chipId:6, dieId:0), there is an exception of fftsplus aivector error, pc start: 0x12c20007f958, current: \n0x12c200080908, vec error info: 0x100000081, para base: 0x12c24\n0140080.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:329]\n        TraceBack (most recent call last):\n       The extend info: errcode:(0, 0x1000, 0)[FUNC:P][FILE:d.cc][LINE:1]\n");
        assert!(r.items.is_empty(), "{:?}", r.items);
        assert_eq!((r.causal_line, r.traceback.len()), (2, 1));
        assert!(r.message.as_ref().is_some_and(
            |m| m.text.starts_with("The error from device") && m.text.ends_with("0140080.")
        ));
        // In two pieces.
        let r = one("EZ9999: Inner Error!\nEZ9999: [PID: 218] 2025-10-09-08:44:29.193.168 The error from device(chipId:6, dieId:0), current: \n0x12c200080908, para base: 0x12c240140080.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_core_proc.cc][LINE:329]\n");
        assert!(r.items.is_empty(), "{:?}", r.items);
        assert_eq!(r.causal_line, 2);
        // A message whole with its suffix takes no unindented line after it.
        let r = one("EZ9999: Inner Error!\nEZ9999: [PID: 1] 2025-10-09-08:44:29.193.168 The error from device(chipId:6).[FUNC:P][FILE:f.cc][LINE:1]\nsome words\nx failed[FUNC:Q][FILE:g.cc][LINE:2]\n");
        assert!(
            r.message
                .as_ref()
                .is_some_and(|m| !m.text.contains("some words")),
            "{:?}",
            r.message
        );
    }

    #[test]
    fn a_stray_bracket_in_the_pid() {
        let r = one("CANN error: EE9999: Inner Error!\nEE9999: [PID:  [881460] 2025-10-15-14:43:16.351.702 Not allow to synchronize captured stream stream_id=2.[FUNC:StreamSynchronize][FILE:api_error.cc][LINE:884]\nTraceBack (most recent call last):\n");
        assert_eq!((r.pid, r.causal_line), (Some(881_460), 2));
    }

    #[test]
    fn unindented_traceback_2025() {
        let r = one("[rank0]:[W904 09:50:12.024496247 compiler_depend.ts:57] Warning: EZ9999: Inner Error!\nEZ9999: [PID: 838] 2025-09-04-09:50:11.954.378 The error from device(chipId:6, dieId:0)[FUNC:P][FILE:d.cc][LINE:303]\nTraceBack (most recent call last):\nThe extend info: errcode:(0, 0x8000, 0)[FUNC:P][FILE:d.cc][LINE:322]\nsomething else\n");
        assert_eq!(r.traceback.len(), 1);
        assert_eq!(r.causal_line, 2);
        assert_eq!(r.end_line, 4);
    }

    #[test]
    fn aclnn_title_without_pid_and_gap() {
        let r = one("[rank6]: AclNN_Runtime_Error(EZ9903): InitTilingParseCtx failed\n\nop[RecomputeWUFwd], compile info not contain [_pattern][FUNC:ParseAutoTilingRun][FILE:auto_tiling_rt2.cc][LINE:120]\nOp [RecomputeWUFwd] tiling compile info parse failed\n");
        assert_eq!(r.code.as_deref(), Some("EZ9903"));
        assert_eq!(r.title.as_deref(), Some("AclNN_Runtime_Error"));
        assert_eq!(
            r.message.as_ref().unwrap().text,
            "InitTilingParseCtx failed"
        );
        assert_eq!(r.items.len(), 1);
    }

    #[test]
    fn embedded_2022_multiline_message() {
        let r = one("[CRITICAL] DEVICE(1,f,python):2022-12-01-00:26:58.399.787 [a.cc:240] RunGraph] x.Ascend Error Message:EI0002: The wait times out.\nthere are(is) 1 abnormal device(s):\n        serverId[10], deviceId[0]\n]\n        Possible Cause: 1. An exception\n        TraceBack (most recent call last):\n        Notify wait execute failed, device_id=1[FUNC:GetError][FILE:stream.cc][LINE:921]\n\n(Please search\n");
        let m = r.message.unwrap();
        assert_eq!(m.line, 1);
        assert!(m.text.contains("abnormal device"));
        assert!(m.text.contains("deviceId[0]"));
        assert_eq!(r.traceback.len(), 1);
    }

    #[test]
    fn fragment_without_start() {
        let r = one("        AICORE Kernel task happen error, retCode=0x25.[FUNC:GetError][FILE:stream.cc][LINE:1191]\n        The argument is invalid.\n(Worker pid=1) ERROR x\n");
        assert_eq!(r.code, None);
        assert_eq!(r.traceback.len(), 2);
        assert_eq!(r.causal_line, 1);
    }

    #[test]
    fn codes_found_only_in_context() {
        assert_eq!(find_code("module_name=EZ9999"), None);
        assert_eq!(find_code("x EZ9999: y"), Some(2));
        assert_eq!(find_code("Title(EL0004): m"), Some(6));
        assert_eq!(find_code("XEZ9999: y"), None);
    }
}
