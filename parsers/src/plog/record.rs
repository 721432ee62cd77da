//! Records, not lines: a header line plus every following line that has no header (spec §1.4).
//!
//! Two ways in:
//! * [`parse_records`] for a whole text in memory (captured stdout/stderr, a test sample);
//! * [`RecordAssembler`] for streams: push physical lines one at a time, get each record back as
//!   soon as the next header (or the end) shows it is complete. The file engine uses this so a
//!   multi-GB plog is never held in memory.
//!
//! Lines are split on `\n`; a trailing `\r` is dropped; NUL bytes are removed; text is lossy UTF-8.
//! A physical line of 1022 bytes or more was probably cut by the logger's 1024-byte record limit
//! ([`PlogRecord::truncated`]).

use std::borrow::Cow;

use serde::Serialize;

use super::content::{parse_content, Content};
use super::header::{parse_header, Level, PlogHeader, PlogTime};
use crate::line_prefix::strip_prefixes;

/// Physical line length (without `\n`) from which a record counts as cut by the logger.
pub const TRUNCATION_LENGTH: usize = 1022;

/// One plog record with its header fields, its content and its continuation lines.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PlogRecord {
    /// 1-based physical line number of the header line.
    pub line: u64,
    pub level: Level,
    pub module: String,
    pub pid: i64,
    pub pname: String,
    pub time: PlogTime,
    /// Text after the header on the header line (prefix included; see [`PlogRecord::content`]).
    pub text: String,
    /// Header-less physical lines that continue this record, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub continuation: Vec<String>,
    /// The header line reached the logger's record limit and was probably cut.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// `[rankN]:` prefix in front of the header in console captures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<u32>,
}

impl PlogRecord {
    /// Builds a record from one physical line if it carries a plog header (possibly behind
    /// torchrun / vLLM / c10 prefixes). `line_no` is 1-based.
    pub fn from_line(line_no: u64, line: &[u8]) -> Option<PlogRecord> {
        Self::header_line(line_no, line, |_| true).flatten()
    }

    /// Whether `line` carries a plog header (`None` when it does not), and the record built from
    /// it when `keep` accepts the header; a record `keep` refuses is not built (its text is not
    /// decoded).
    fn header_line(
        line_no: u64,
        line: &[u8],
        keep: impl Fn(&PlogHeader<'_>) -> bool,
    ) -> Option<Option<PlogRecord>> {
        let truncated = line.len() >= TRUNCATION_LENGTH;
        let build = |h: PlogHeader<'_>, rest: &[u8], rank: Option<u32>| {
            keep(&h).then(|| Self::build(line_no, h, rest, rank, truncated))
        };
        if let Some((h, rest)) = parse_header(line) {
            return Some(build(h, rest, None));
        }
        if !matches!(line.first(), Some(b'[') | Some(b'(')) {
            return None;
        }
        let text = String::from_utf8_lossy(line);
        let p = strip_prefixes(&text);
        if p.rest.len() == text.len() {
            return None;
        }
        let (h, rest) = parse_header(p.rest.as_bytes())?;
        Some(build(h, rest, p.rank()))
    }

    fn build(
        line_no: u64,
        h: PlogHeader<'_>,
        rest: &[u8],
        rank: Option<u32>,
        truncated: bool,
    ) -> PlogRecord {
        PlogRecord {
            line: line_no,
            level: h.level,
            module: h.module.to_owned(),
            pid: h.pid,
            pname: h.pname().into_owned(),
            time: h.time,
            text: lossy(rest),
            continuation: Vec::new(),
            truncated,
            rank,
        }
    }

    /// The content prefix (source file, tid, function, stages) and the message.
    pub fn content(&self) -> Content<'_> {
        parse_content(&self.module, &self.text)
    }

    /// The message with its continuation lines joined by `\n`.
    pub fn full_message(&self) -> String {
        let mut s = self.content().message.to_owned();
        for c in &self.continuation {
            s.push('\n');
            s.push_str(c);
        }
        s
    }
}

/// `bytes` as text, each invalid UTF-8 sequence replaced by U+FFFD, borrowed when valid: what
/// `String::from_utf8_lossy` returns, with `str::from_utf8`'s check first, which reads ASCII a
/// word at a time where `from_utf8_lossy` goes byte by byte (a plog's every ERROR record is
/// converted, on the workers and in the causal engine).
pub fn utf8_lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// Lossy UTF-8 with NUL bytes removed, borrowed when there is nothing to remove or replace.
pub fn lossy_cow(bytes: &[u8]) -> Cow<'_, str> {
    if memchr::memchr(0, bytes).is_some() {
        let clean: Vec<u8> = bytes.iter().copied().filter(|&b| b != 0).collect();
        Cow::Owned(utf8_lossy(&clean).into_owned())
    } else {
        utf8_lossy(bytes)
    }
}

/// Lossy UTF-8 with NUL bytes removed.
pub fn lossy(bytes: &[u8]) -> String {
    lossy_cow(bytes).into_owned()
}

/// Iterates over the physical lines of `text` as `(1-based line number, bytes)` without the line
/// terminator (`\n` or `\r\n`). A final line without `\n` is included.
pub fn lines(text: &[u8]) -> impl Iterator<Item = (u64, &[u8])> {
    let mut rest = text;
    let mut no = 0u64;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        no += 1;
        let (line, next) = match memchr::memchr(b'\n', rest) {
            Some(p) => (&rest[..p], &rest[p + 1..]),
            None => (rest, &rest[rest.len()..]),
        };
        rest = next;
        Some((no, line.strip_suffix(b"\r").unwrap_or(line)))
    })
}

/// Groups physical lines into records as they arrive.
///
/// ```
/// use npgx_parsers::plog::record::RecordAssembler;
/// let mut asm = RecordAssembler::default();
/// let mut out = Vec::new();
/// for (no, line) in [
///     (1, &b"[INFO] GE(1,p):2023-07-13-07:42:40.519.806 [e.cc:273]1 F:[AIC_INFO] all attrs:x"[..]),
///     (2, b"\x08*\x03"),
///     (3, b"[INFO] GE(1,p):2023-07-13-07:42:40.520.040 [e.cc:274]1 F:next"),
/// ] {
///     out.extend(asm.push(no, line));
/// }
/// out.extend(asm.finish());
/// assert_eq!(out.len(), 2);
/// assert_eq!(out[0].continuation, ["\u{8}*\u{3}"]);
/// ```
#[derive(Debug, Default)]
pub struct RecordAssembler {
    current: Option<PlogRecord>,
    /// A header line (kept or not) has been pushed.
    started: bool,
}

impl RecordAssembler {
    /// Feeds one physical line (without its terminator). Returns the previous record when this
    /// line starts a new one. Header-less lines before the first record are dropped (they are not
    /// plog; callers that care see them before pushing).
    pub fn push(&mut self, line_no: u64, line: &[u8]) -> Option<PlogRecord> {
        self.push_kept(line_no, line, |_| true)
    }

    /// [`RecordAssembler::push`] for a caller that wants only the records whose header `keep`
    /// accepts (a level or module filter): the others are not built, and their continuation
    /// lines are dropped undecoded.
    pub fn push_kept(
        &mut self,
        line_no: u64,
        line: &[u8],
        keep: impl Fn(&PlogHeader<'_>) -> bool,
    ) -> Option<PlogRecord> {
        match PlogRecord::header_line(line_no, line, keep) {
            Some(next) => {
                self.started = true;
                std::mem::replace(&mut self.current, next)
            }
            None => {
                if let Some(cur) = self.current.as_mut() {
                    cur.continuation.push(lossy(line));
                }
                None
            }
        }
    }

    /// Whether a header line has been pushed: the lines pushed before it belong to no record
    /// (in a piece of a file, to the record the piece before it left open).
    pub fn started(&self) -> bool {
        self.started
    }

    /// The record still open at the end of input.
    pub fn finish(self) -> Option<PlogRecord> {
        self.current
    }
}

/// All plog records in `text`, with continuation lines attached. Never panics.
pub fn parse_records(text: &[u8]) -> Vec<PlogRecord> {
    let mut asm = RecordAssembler::default();
    let mut out = Vec::new();
    for (no, line) in lines(text) {
        out.extend(asm.push(no, line));
    }
    out.extend(asm.finish());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_line_continues_and_crlf_and_nul() {
        let text = b"[ERROR] IDEDD(1,p):2025-05-08-09:56:20.763.494 [d.cpp:548][tid:1] [ASSERT] x\n\n[ERROR] RUNTIME(1,p):2025-05-08-09:56:20.764.545 [s.cc:1]1 F:a\x00b\r\n";
        let recs = parse_records(text);
        assert_eq!(recs.len(), 2);
        assert_eq!(recs[0].continuation, [""]);
        assert_eq!(recs[1].text, "[s.cc:1]1 F:ab");
        assert_eq!(recs[1].line, 3);
    }

    #[test]
    fn prefixed_header_and_truncation() {
        let mut line = b"[rank1]: [ERROR] RUNTIME(2,p):2025-05-08-09:56:20.764.545 x".to_vec();
        let r = PlogRecord::from_line(1, &line).unwrap();
        assert_eq!((r.rank, r.pid, r.truncated), (Some(1), 2, false));
        line.resize(1023, b'a');
        assert!(PlogRecord::from_line(1, &line).unwrap().truncated);
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let r = PlogRecord::from_line(1, b"[INFO] GE(1,p\xff):2023-07-13-07:42:40.519.806 \xfe")
            .unwrap();
        assert_eq!(r.pname, "p\u{fffd}");
        assert_eq!(r.text, "\u{fffd}");
    }

    #[test]
    fn lines_numbering() {
        let v: Vec<_> = lines(b"a\nb\r\n\nc").collect();
        assert_eq!(v, [(1, &b"a"[..]), (2, b"b"), (3, b""), (4, b"c")]);
    }

    #[test]
    fn records_a_filter_refuses_are_not_built_nor_their_lines_kept() {
        let text = b"[INFO] GE(1,p):2025-05-08-09:56:20.763.494 [a.cc:1]1 start\n\
            info continued\n\
            [ERROR] GE(1,p):2025-05-08-09:56:20.763.495 [a.cc:2]1 failed\n\
            error continued\n\
            [rank3]:[ERROR] RUNTIME(1,p):2025-05-08-09:56:20.763.496 [b.cc:3]1 also\n\
            [WARNING] GE(1,p):2025-05-08-09:56:20.763.497 [a.cc:4]1 late\n\
            warning continued\n";
        let errors = |h: &PlogHeader<'_>| h.level == Level::Error;
        let mut asm = RecordAssembler::default();
        let mut kept: Vec<PlogRecord> = lines(text)
            .filter_map(|(no, line)| asm.push_kept(no, line, errors))
            .collect();
        kept.extend(asm.finish());
        let got: Vec<_> = kept
            .iter()
            .map(|r| (r.line, r.module.as_str(), r.continuation.clone(), r.rank))
            .collect();
        assert_eq!(
            got,
            [
                (3, "GE", vec!["error continued".to_string()], None),
                (5, "RUNTIME", vec![], Some(3)),
            ]
        );
        // The same records as the unfiltered assembler's, filtered after.
        let all: Vec<_> = parse_records(text)
            .into_iter()
            .filter(|r| r.level == Level::Error)
            .collect();
        assert_eq!(kept, all);
    }
}
