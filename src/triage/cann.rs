//! Thin adapter: the few facts the triage needs about CANN error-report blocks, torch_npu
//! `ERRxxxxx` lines and plog records printed into a screen log.
//!
//! The full grammars (every block variant, every field) belong to the `cann_error` and `plog`
//! parsers; this adapter only answers "does a block start here, where does it end, what is its
//! root message" (spec `plog-and-errors.md` §3.2–3.5), which is all the first-causal-error
//! search needs. Lines arrive with launcher prefixes already peeled.

/// A CANN error report found in a screen log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// The error code (`EZ9999`), absent when the excerpt starts at `TraceBack`.
    pub code: Option<String>,
    /// Index of the line that holds the root message.
    pub root_line: usize,
    /// The root message without the `[FUNC:…][FILE:…][LINE:…]` tail.
    pub root_message: String,
    /// Index one past the block's last line.
    pub end: usize,
}

impl Block {
    /// Inner codes (`…9999`, `…8888`) carry no user-facing message.
    pub fn is_inner(&self) -> bool {
        self.code
            .as_deref()
            .is_none_or(|c| c.ends_with("9999") || c.ends_with("8888"))
    }
}

/// `[EWI][0-9A-Z][0-9]{4}` at the start of `s`.
fn code_at_start(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.len() < 6 {
        return None;
    }
    let ok = matches!(b[0], b'E' | b'W' | b'I')
        && (b[1].is_ascii_digit() || b[1].is_ascii_uppercase())
        && b[2..6].iter().all(u8::is_ascii_digit);
    ok.then(|| &s[..6])
}

/// Where a block starts on this line, and its code: `CODE: Inner Error!`, `CODE: msg`,
/// `CODE[PID: …`, `CODE:[PID:…`, `Title(CODE): msg`, or `… detail:CODE: …` (torch_npu).
pub fn block_code(line: &str) -> Option<String> {
    let t = line.trim_start();
    if let Some(code) = code_at_start(t) {
        let after = &t[6..];
        if after.starts_with(':') || after.starts_with('[') {
            return Some(code.to_string());
        }
    }
    if let Some(at) = t.find("detail:") {
        let rest = t[at + "detail:".len()..].trim_start();
        if let Some(code) = code_at_start(rest) {
            return Some(code.to_string());
        }
    }
    // `[PID: 1613532] 2026-… Memory_Allocation_Failure(EL0004): Failed to allocate memory.`
    if t.starts_with("[PID:") {
        if let Some(open) = t.find("):") {
            let start = t[..open].rfind('(')?;
            let code = &t[start + 1..open];
            if code_at_start(code).is_some() && code.len() == 6 {
                return Some(code.to_string());
            }
        }
    }
    None
}

/// `TraceBack (most recent call last):` (any indentation).
pub fn is_cann_traceback(line: &str) -> bool {
    line.trim() == "TraceBack (most recent call last):"
}

/// Strips `[FUNC:…][FILE:…][LINE:…]` / `[THREAD:…]` tails.
pub fn strip_location(msg: &str) -> &str {
    let msg = msg.trim();
    match msg.find("[FUNC:") {
        Some(i) => msg[..i].trim_end(),
        None => msg,
    }
}

/// The message part of a code line: after `CODE: `, `CODE[PID: n] ts Title(CODE):  `,
/// `[PID: n] ts Title(CODE): `, or after `detail:CODE: `.
fn code_line_message(line: &str, code: &str) -> String {
    let t = line.trim();
    let tail = match t.find(&format!("({code}):")) {
        Some(i) => &t[i + code.len() + 3..],
        None => match t.find(code) {
            Some(i) => t[i + code.len()..].trim_start_matches(':'),
            None => t,
        },
    };
    let tail = tail.trim();
    // `[PID: 198748] 2025-03-26-13:49:01.670.614 The wait …`: drop the pid and timestamp.
    let tail = match tail.strip_prefix("[PID:") {
        Some(rest) => match rest.find(']') {
            Some(i) => rest[i + 1..].trim_start(),
            None => rest,
        },
        None => tail,
    };
    let tail = skip_timestamp(tail);
    strip_location(tail).to_string()
}

/// Drops a leading `YYYY-MM-DD-hh:mm:ss.mmm.uuu ` timestamp.
fn skip_timestamp(s: &str) -> &str {
    let looks = s.len() > 19
        && s.as_bytes()[..4].iter().all(u8::is_ascii_digit)
        && s.as_bytes().get(4) == Some(&b'-');
    if !looks {
        return s;
    }
    match s.find(' ') {
        Some(i) => s[i + 1..].trim_start(),
        None => s,
    }
}

fn is_inner_header(msg: &str) -> bool {
    let m = msg.trim();
    m.eq_ignore_ascii_case("Inner Error!") || m.eq_ignore_ascii_case("Internal error!")
}

/// Whether `line` can continue a block: indented text, `TraceBack`, `Possible Cause:` /
/// `Solution:`, another code line, or a `[FUNC:`-suffixed line.
fn continues_block(line: &str) -> bool {
    !line.trim().is_empty()
        && (line.starts_with(char::is_whitespace)
            || is_cann_traceback(line)
            || line.contains("[FUNC:")
            || block_code(line).is_some())
}

/// Reads the block that starts at `lines[start]` (a code line or a bare `TraceBack` header).
pub fn read_block(lines: &[&str], start: usize) -> Option<Block> {
    let first = *lines.get(start)?;
    let code = block_code(first);
    if code.is_none() && !is_cann_traceback(first) {
        return None;
    }
    let mut end = start + 1;
    while end < lines.len() && continues_block(lines[end]) {
        end += 1;
    }
    let (root_line, root_message) = match &code {
        Some(c) => {
            let msg = code_line_message(first, c);
            if is_inner_header(&msg) || msg.is_empty() {
                // The root is the first later line with a message: a `CODE[PID…]` line or an item.
                (start + 1..end)
                    .find_map(|i| {
                        let l = lines[i];
                        if is_cann_traceback(l) {
                            return None;
                        }
                        let m = match block_code(l) {
                            Some(c2) => code_line_message(l, &c2),
                            None => strip_location(l).to_string(),
                        };
                        (!m.is_empty()).then_some((i, m))
                    })
                    .unwrap_or((start, msg))
            } else {
                (start, msg)
            }
        }
        None => (start + 1..end)
            .map(|i| (i, strip_location(lines[i]).to_string()))
            .find(|(_, m)| !m.is_empty())
            .unwrap_or((start, String::new())),
    };
    Some(Block {
        code,
        root_line,
        root_message,
        end,
    })
}

/// A torch_npu error-code line: `[ERROR] «ts»? (PID:«p», Device:«d», RankID:«r») ERR«SS»«EEE» …`.
/// These are summaries of an error reported elsewhere.
pub fn is_torch_npu_err_line(line: &str) -> bool {
    let t = line.trim_start();
    if !t.starts_with("[ERROR]") || !t.contains("(PID:") {
        return false;
    }
    t.split_whitespace()
        .any(|w| w.len() == 8 && w.starts_with("ERR") && w[3..].bytes().all(|b| b.is_ascii_digit()))
}

/// A plog record header at level ERROR: `[ERROR] MODULE(pid,pname):YYYY-…`.
pub fn is_plog_error(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix("[ERROR] ") else {
        return false;
    };
    let module_end = rest
        .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(0);
    module_end > 0 && rest[module_end..].starts_with('(') && rest.contains("):")
}

/// torch_npu's hint line: `[Error]: The aicore execution times out.`
pub fn torch_npu_hint(line: &str) -> Option<&str> {
    line.trim_start().strip_prefix("[Error]:").map(str::trim)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inner_block_root_is_the_next_line() {
        let lines = [
            "EH9999: Inner Error!",
            "        rtEventQueryStatus execute failed, reason=[aicore timeout][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]",
            "EH9999[PID: 285] 2025-12-12-12:10:10.639.672 (EH9999):  [Query][Status]query event recorded status failed[FUNC:ReportCallError]",
            "        TraceBack (most recent call last):",
            "done",
        ];
        let b = read_block(&lines, 0).unwrap();
        assert_eq!(b.code.as_deref(), Some("EH9999"));
        assert!(b.is_inner());
        assert_eq!(b.root_line, 1);
        assert_eq!(
            b.root_message,
            "rtEventQueryStatus execute failed, reason=[aicore timeout]"
        );
        assert_eq!(b.end, 4);
    }

    #[test]
    fn external_code_line_holds_the_root() {
        let lines = [
            "EL0004: [PID: 316198] 2025-09-28-07:22:29.827.496 Failed to allocate memory.",
            "        Possible Cause: Available memory is insufficient.",
        ];
        let b = read_block(&lines, 0).unwrap();
        assert_eq!(b.root_line, 0);
        assert_eq!(b.root_message, "Failed to allocate memory.");
        assert!(!b.is_inner());
        let lines = ["E89999:[PID:260559] 2024-11-06-15:44:43.218.474 op[FloorDiv_1] op dtype is not same, type1:DT_FLOAT, type2:DT_INT64[FUNC:CheckTwoInputDtypeSame]"];
        let b = read_block(&lines, 0).unwrap();
        assert_eq!(
            b.root_message,
            "op[FloorDiv_1] op dtype is not same, type1:DT_FLOAT, type2:DT_INT64"
        );
        let lines = ["[PID: 1613532] 2026-03-24-10:00:00.000.000 Memory_Allocation_Failure(EL0004): Failed to allocate memory."];
        assert_eq!(
            read_block(&lines, 0).unwrap().root_message,
            "Failed to allocate memory."
        );
    }

    #[test]
    fn headerless_traceback_root_is_first_item() {
        let lines = [
            "        TraceBack (most recent call last):",
            "       New capture stream failed, stream_id=1987.[FUNC:GetCaptureStream][FILE:capture_model_utils.cc][LINE:92]",
        ];
        let b = read_block(&lines, 0).unwrap();
        assert_eq!(b.code, None);
        assert_eq!(b.root_line, 1);
        assert_eq!(b.root_message, "New capture stream failed, stream_id=1987.");
    }

    #[test]
    fn line_kinds() {
        assert!(is_torch_npu_err_line("[ERROR] 2025-12-12-12:10:10 (PID:402, Device:7, RankID:-1) ERR02005 DIST internal error"));
        assert!(!is_torch_npu_err_line(
            "[ERROR] RUNTIME(809924,4):2026-07-11 x"
        ));
        assert!(is_plog_error(
            "[ERROR] RUNTIME(809924,4):2026-07-11-15:11:05.293.967 [api_c.cc:1081]809924 rtMemcpy"
        ));
        assert!(!is_plog_error(
            "[ERROR] 2025-12-12-12:10:10 (PID:402, Device:7, RankID:-1) ERR02005"
        ));
        assert_eq!(
            torch_npu_hint("[Error]: Failed to apply for memory."),
            Some("Failed to apply for memory.")
        );
        assert_eq!(
            block_code("RuntimeError: call aclnnX failed, detail:EZ9999: Inner Error!").as_deref(),
            Some("EZ9999")
        );
        assert_eq!(block_code("ERR00100 PTA call acl api failed"), None);
        assert_eq!(block_code("EXAMPLE: text"), None);
    }
}
