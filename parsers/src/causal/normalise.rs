//! Line normalisation: what a pasted log line says once the paste's decorations and the
//! loggers' prefixes are taken off.
//!
//! Grammar of one physical line, left to right:
//!
//! ```text
//! line     = marker | fence | gutter? quote* frame? prefix* indent rest frame-end?
//! marker   = "[... excerpt gap" …                    (a joint between two pasted windows)
//! gutter   = " "* digit+ ("\t" | ":")  |  path ":" digit+ ":"
//!                                                     (`grep -n` and editor line numbers; peeled
//!                                                      only when most lines of a window have one,
//!                                                      see [`gutter_len`])
//! fence    = ("```" | "~~~") info-string              (Markdown code fence)
//! quote    = ">" [" "]                                (Markdown block quote; lazy continuation
//!                                                      lines carry no marker and need nothing)
//! frame    = ("│" | "┃" | "║") [" "]                  (a terminal pane's border: k9s, tmux;
//! frame-end= " "+ ("│" | "┃" | "║")                    see [`strip_frame`])
//! prefix   = the launcher and logger prefixes of `torch_logs::prefix` (vLLM process and
//!            logger, `[rankN]:`, glog, c10, old TORCH_LOGS) and the plog console prefixes
//! indent   = the paste's common indentation (computed over a window by [`common_indent`]:
//!            a tracker or an editor that indents every line by the same amount)
//! ```
//!
//! What it is not for: deciding what the remaining text is (the candidates in
//! [`super::collect`]). Line numbers never change: a marker or a fence is reported as
//! [`Normalised::skip`] so the caller keeps counting physical lines.

use crate::line_prefix::{record_severity, strip_prefixes, LinePrefix, Severity};
use crate::plog::header::{parse_header, PlogHeader};

/// One line with its decorations and prefixes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Normalised<'a> {
    /// Not log output: an excerpt-gap marker or a Markdown fence.
    pub skip: bool,
    /// The prefixes peeled off (logger level, glog header, …).
    pub prefixes: Vec<LinePrefix<'a>>,
    /// The text after the prefixes, indentation kept (see [`common_indent`]).
    pub rest: &'a str,
    /// When the line is a plog record: its header and the message after it, parsed once here
    /// for the collection too (`rest` is then the whole line).
    pub header: Option<(PlogHeader<'a>, &'a str)>,
}

impl Normalised<'_> {
    /// Whether a prefix of a record of its own was peeled (a logger's header), not only a
    /// relay's ([`LinePrefix::is_relay`]: `docker logs -t`'s time before every line).
    pub fn record_prefixed(&self) -> bool {
        self.prefixes.iter().any(|p| !p.is_relay())
    }

    /// Whether this line may go on with `above`'s message: no record's prefix of its own, and
    /// the same relays naming a source (compose's service, a rank, a worker's label) as `above`
    /// — interleaved services or ranks do not continue each other; a collector's time and a
    /// build step name none.
    pub fn continues(&self, above: &Normalised<'_>) -> bool {
        fn sources<'s, 'a>(n: &'s Normalised<'a>) -> Vec<&'s LinePrefix<'a>> {
            n.prefixes
                .iter()
                .filter(|p| {
                    p.is_relay()
                        && !matches!(
                            p,
                            LinePrefix::CollectorTime { .. } | LinePrefix::BuildStep { .. }
                        )
                })
                .collect()
        }
        !self.record_prefixed() && sources(self) == sources(above)
    }

    /// The glog level letter (`V I W E C F`, `?` when elided) when the line had a glog-form
    /// header (TORCH_LOGS, the glog library) or the pre-2.2 `logger: [LEVEL]` tag, mapped to the
    /// same letters.
    pub fn glog_level(&self) -> Option<char> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::Glog(g) => Some(g.level),
            LinePrefix::OldLogger { level, .. } => level.chars().next(),
            _ => None,
        })
    }

    /// The TORCH_LOGS artifact (`recompiles`, `graph_breaks`), from a `[__artifact]` tag or an
    /// old-style logger name ending in `.__artifact`.
    pub fn artifact(&self) -> Option<&str> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::Glog(g) => g.artifact,
            LinePrefix::OldLogger { logger, .. } => logger.rsplit_once(".__").map(|(_, a)| a),
            _ => None,
        })
    }

    /// The level the line's prefixes state ([`record_severity`]).
    pub fn severity(&self) -> Option<Severity> {
        record_severity(&self.prefixes)
    }

    /// The c10 level letter, if the line had a c10 header.
    pub fn c10_level(&self) -> Option<char> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::C10 { level, .. } => Some(*level),
            _ => None,
        })
    }
}

/// `[... excerpt gap …]`: a marker joining two windows of one thread (not log output).
pub fn is_excerpt_marker(s: &str) -> bool {
    let t = s.trim_start();
    t.starts_with("[... excerpt gap") || t.starts_with("[… excerpt gap")
}

/// A Markdown code fence line.
pub fn is_fence(s: &str) -> bool {
    let t = s.trim();
    (t.starts_with("```") || t.starts_with("~~~")) && !t[3..].contains('`')
}

/// Strips Markdown block-quote markers (`> `, `>> `, `> > `).
pub fn strip_quote(s: &str) -> &str {
    let mut r = s;
    while let Some(after) = r.strip_prefix('>') {
        // `>>>` is a Python prompt, not a quote.
        if after.starts_with(">>") {
            break;
        }
        r = after.strip_prefix(' ').unwrap_or(after);
    }
    r
}

/// `text` without a terminal's escape sequences (a logger's colours kept in a file: `ESC[32mINFO
/// ESC[0m`, llama.cpp's red `FAIL`): control sequences (`ESC [`, parameter and intermediate bytes,
/// a final byte in `@`–`~`), operating-system commands (`ESC ]` to BEL or `ESC \`), and an
/// escape's short forms (`ESC (B`, `ESC 7`). `None` when there is none to remove. Of a control
/// sequence cut before its final byte only the escape and its bracket go (the text after them may
/// be the line's); an operating-system command never ended takes the rest of the line.
///
/// A web page drops the escape byte and keeps the rest (`[32mINFO[0m`, vLLM's `[1;36m(VllmWorker
/// pid=7)[0;0m`), or shows it as `␛`, `^[`, `�` or a string's `\u001b`: on a line that holds
/// such a reset and a setting that text follows ([`has_lost_reset`]) its colour settings (`[`
/// digits and semicolons `m`) go too — without them, `[10m` is the text's own.
pub fn strip_escapes(text: &str) -> Option<String> {
    let plain = strip_escape_bytes(text);
    let rest = plain.as_deref().unwrap_or(text);
    if !has_lost_reset(rest.as_bytes()) {
        return plain;
    }
    let mut out = String::with_capacity(rest.len());
    let mut from = 0;
    for at in memchr::memchr_iter(b'[', rest.as_bytes()) {
        let Some(len) = lost_colour(&rest.as_bytes()[at..]) else {
            continue;
        };
        let kept = &rest[from..at];
        let kept = SHOWN_ESCAPES
            .iter()
            .find_map(|shown| kept.strip_suffix(shown))
            .unwrap_or(kept);
        out.push_str(kept);
        from = at + len;
    }
    out.push_str(&rest[from..]);
    Some(out)
}

/// How an escape byte shows where a page or a program printed it instead of sending it: the
/// control picture, caret notation, the replacement character, and as a JSON, Python or shell
/// string writes it.
const SHOWN_ESCAPES: [&str; 6] = ["␛", "^[", "\u{fffd}", "\\u001b", "\\x1b", "\\033"];

/// Whether a line holds a colour reset whose escape byte was lost (`[0m`, `[0;0m`, [`lost_colour`])
/// and a setting that text follows (`[31mERROR`): the sign that its `[…m` are colours
/// ([`strip_escapes`]), not minutes in brackets (`waited [0m], retry in [12m]`). Cheap enough
/// for every line of a log.
pub fn has_lost_reset(line: &[u8]) -> bool {
    // Most lines (a plog's `[ERROR] GE(…)` and `[file.cc:12]`) hold no reset: one pass of byte
    // compares tells, before any setting is read.
    let resets = |at: usize| {
        let s = &line[at..];
        s.starts_with(b"[0m") || s.starts_with(b"[0;0m")
    };
    if !memchr::memchr_iter(b'[', line).any(resets) {
        return false;
    }
    let mut reset = false;
    let mut colours_text = false;
    for at in memchr::memchr_iter(b'[', line) {
        let s = &line[at..];
        let Some(len) = lost_colour(s) else { continue };
        reset |= s.starts_with(b"[0m") || s.starts_with(b"[0;0m");
        // A setting that text follows (`[31mERROR`): brackets that only close (`[0m]`, `[12m]`)
        // may be minutes.
        colours_text |= s.get(len).is_some_and(|b| *b != b']');
        if reset && colours_text {
            return true;
        }
    }
    false
}

/// The length of a colour setting without its escape at the start of `s` (`[1;36m`: a bracket,
/// one to 16 digits and semicolons, `m`; `[m` is too often the text's own: `[multiproc_…]`). Not
/// a duration in brackets (`[0ms]`, `[12min]`, `[3mm]`): `m` and up to three lower-case letters
/// that close the bracket.
fn lost_colour(s: &[u8]) -> Option<usize> {
    let params = s
        .get(1..)?
        .iter()
        .take(17)
        .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
    let end = params + 2;
    if !(1..=16).contains(&params) || s.get(end - 1) != Some(&b'm') {
        return None;
    }
    let unit = s[end..]
        .iter()
        .take(4)
        .take_while(|b| b.is_ascii_lowercase())
        .count();
    (!(1..=3).contains(&unit) || s.get(end + unit) != Some(&b']')).then_some(end)
}

/// `text` without the escape sequences that keep their escape byte ([`strip_escapes`]).
fn strip_escape_bytes(text: &str) -> Option<String> {
    if !text.contains('\x1b') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(esc) = rest.find('\x1b') {
        out.push_str(&rest[..esc]);
        let after = &rest[esc + 1..];
        rest = if let Some(csi) = after.strip_prefix('[') {
            match csi.find(|c: char| ('@'..='~').contains(&c)) {
                Some(end) if csi[..end].bytes().all(|b| (0x20..=0x3f).contains(&b)) => {
                    &csi[end + 1..]
                }
                _ => csi,
            }
        } else if let Some(osc) = after.strip_prefix(']') {
            match osc.find(['\x07', '\x1b']) {
                Some(end) => {
                    let tail = &osc[end..];
                    tail.strip_prefix('\x07')
                        .or_else(|| tail.strip_prefix("\x1b\\"))
                        .unwrap_or(tail)
                }
                None => "",
            }
        } else {
            // `ESC (B`, `ESC #8`, `ESC 7`: intermediate bytes (` `–`/`), then the final one.
            let body = after.trim_start_matches(|c: char| (' '..='/').contains(&c));
            let mut chars = body.chars();
            chars.next();
            chars.as_str()
        };
    }
    out.push_str(rest);
    Some(out)
}

/// A line without the paste's decorations before its prefixes: Markdown quotes and a terminal
/// pane's frame ([`strip_quote`], [`strip_frame`]). Whatever re-reads a line's prefixes from its
/// text reads them through this.
pub fn strip_decorations(line: &str) -> &str {
    strip_frame(strip_quote(line))
}

/// Strips a terminal pane's frame around a line (`│ I0228 07:57:06.396673 1 main.go:117] …  │`,
/// as k9s and tmux draw it): a box-drawing vertical bar (`│`, `┃`, `║`) and a space at its start,
/// and at its end one after spaces, or a bar alone on the line. ASCII `|` is no frame (docker
/// compose's service column); a bar right after a word (`x│`) is kept.
pub fn strip_frame(s: &str) -> &str {
    const BARS: [char; 3] = ['│', '┃', '║'];
    let s = match s.strip_prefix(BARS) {
        Some(after) => after.strip_prefix(' ').unwrap_or(after),
        None => s,
    };
    match s.trim_end().strip_suffix(BARS) {
        Some(before) if before.ends_with(' ') || before.is_empty() => before.trim_end(),
        _ => s,
    }
}

/// Length of a line-number gutter at the start of `line`: an editor's or `cat -n`'s
/// `   1145<TAB>`, `grep -n`'s `1145:` or `file.log:1145:`. A colon right before a digit is a
/// clock (`10:35`), not a gutter. Zero when there is none. A window strips gutters only when most
/// of its lines have one ([`window_has_gutter`]): `507014: The aicore execution times out` alone
/// is a message, not a line number.
pub fn gutter_len(line: &str) -> usize {
    let b = line.as_bytes();
    // Neither form starts with `[` (a plog record, the bulk of a plog's window): a path before
    // the first colon holds no `[`.
    if b.first() == Some(&b'[') {
        return 0;
    }
    let mut i = b.iter().take_while(|c| **c == b' ').count();
    let start_digits = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i > start_digits && i - start_digits <= 9 {
        match b.get(i) {
            Some(b'\t') => return i + 1,
            Some(b':') if !b.get(i + 1).is_some_and(u8::is_ascii_digit) => return i + 1,
            _ => {}
        }
    }
    // `path:NNN:` (grep -n over several files): a path without spaces, then the number.
    if let Some(colon) = line.find(':') {
        let path = &line[..colon];
        let is_path = !path.is_empty()
            && (path.contains('/') || path.contains('.'))
            && !path.contains([' ', '\t', '[', '(', '\'', '"']);
        if is_path {
            let rest = &b[colon + 1..];
            let n = rest.iter().take_while(|c| c.is_ascii_digit()).count();
            if n > 0 && rest.get(n) == Some(&b':') {
                return colon + 1 + n + 1;
            }
        }
    }
    0
}

/// Whether a window's lines carry a gutter: at least two lines, and at least two thirds of the
/// non-blank ones.
pub fn window_has_gutter<'a>(lines: impl IntoIterator<Item = &'a str>) -> bool {
    let (mut with, mut total) = (0usize, 0usize);
    for l in lines {
        if l.trim().is_empty() {
            continue;
        }
        total += 1;
        if gutter_len(l) > 0 {
            with += 1;
        }
    }
    with >= 2 && with * 3 >= total * 2
}

/// Normalises one line (trailing `\r` dropped).
pub fn normalise(line: &str) -> Normalised<'_> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if is_excerpt_marker(line) || is_fence(line) {
        return Normalised {
            skip: true,
            prefixes: Vec::new(),
            rest: "",
            header: None,
        };
    }
    // A plog record line has no prefix to peel: the common case of a big plog stays cheap.
    if line.starts_with('[') {
        if let Some((h, msg)) = parse_header(line.as_bytes()) {
            return Normalised {
                skip: false,
                prefixes: Vec::new(),
                rest: line,
                // The message starts after the timestamp (ASCII), so at a char boundary.
                header: line.get(line.len() - msg.len()..).map(|msg| (h, msg)),
            };
        }
    }
    let s = strip_prefixes(strip_decorations(line));
    Normalised {
        skip: false,
        prefixes: s.prefixes,
        rest: s.rest,
        header: None,
    }
}

/// The indentation every non-blank line of a paste shares (spaces only), so that a paste
/// indented as a whole reads like the original. Zero when any line starts at column 0.
pub fn common_indent<'a>(rests: impl IntoIterator<Item = &'a str>) -> usize {
    rests
        .into_iter()
        .filter(|r| !r.trim().is_empty())
        .map(|r| r.len() - r.trim_start_matches(' ').len())
        .min()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    #[test]
    fn terminal_escapes_are_no_text() {
        use super::strip_escapes;
        assert_eq!(strip_escapes("plain"), None);
        assert_eq!(
            strip_escapes("\x1b[1;31mFAIL\x1b[0m ok").as_deref(),
            Some("FAIL ok")
        );
        assert_eq!(strip_escapes("\x1b[?25lbar\x1b[K").as_deref(), Some("bar"));
        assert_eq!(
            strip_escapes("\x1b]0;title\x07after").as_deref(),
            Some("after")
        );
        assert_eq!(
            strip_escapes("\x1b]8;;http://x\x1b\\link").as_deref(),
            Some("link")
        );
        assert_eq!(strip_escapes("a\x1b(Bb").as_deref(), Some("ab"));
        assert_eq!(strip_escapes("a\x1b#8b\x1b7c").as_deref(), Some("abc"));
        // A cut control sequence loses its escape and bracket only.
        assert_eq!(strip_escapes("a\x1b").as_deref(), Some("a"));
        assert_eq!(strip_escapes("a\x1b[31").as_deref(), Some("a31"));
        assert_eq!(strip_escapes("é\x1b[0mü").as_deref(), Some("éü"));
        // A web page's paste lost the escape byte, or shows it.
        assert_eq!(
            strip_escapes("[32mINFO[0m 12-01 [1;36m(VllmWorker pid=7)[0;0m [multiproc.py:1] boom")
                .as_deref(),
            Some("INFO 12-01 (VllmWorker pid=7) [multiproc.py:1] boom")
        );
        assert_eq!(
            strip_escapes("␛[31mERROR^[[0m x\u{fffd}[1mé[0m").as_deref(),
            Some("ERROR xé")
        );
        // Without a reset on the line, brackets are the text's own; so are durations.
        assert_eq!(strip_escapes("a[10m] b[m"), None);
        assert_eq!(
            strip_escapes("[0ms] load model; [1532ms] first token"),
            None
        );
        assert_eq!(strip_escapes("delay [0min], [0mm] gap"), None);
        assert_eq!(strip_escapes("waited [0m], retry in [12m]"), None);
        // A coloured level inside brackets keeps its reset before `]`.
        assert_eq!(
            strip_escapes("[[31mERROR[0m] acl set device 0 failed").as_deref(),
            Some("[ERROR] acl set device 0 failed")
        );
        assert_eq!(
            strip_escapes("[0ms] x [32mok[0m").as_deref(),
            Some("[0ms] x ok")
        );
        // An escape written as a string writes it.
        assert_eq!(
            strip_escapes("\\u001b[32mINFO\\u001b[0m up").as_deref(),
            Some("INFO up")
        );
        assert_eq!(strip_escapes("x[0"), None);
        // A reset alone, no colour that text follows: the text's own.
        assert_eq!(strip_escapes("[0m"), None);
        assert_eq!(
            strip_escapes("[12345678901234567m [31mx[0m").as_deref(),
            Some("[12345678901234567m x")
        );
    }

    use super::*;

    #[test]
    fn markers_and_fences_are_skipped() {
        assert!(normalise("[... excerpt gap: two comments joined ...]").skip);
        assert!(normalise("```text").skip);
        assert!(normalise("~~~").skip);
        assert!(!normalise("x = '```'").skip);
    }

    #[test]
    fn quotes_then_prefixes() {
        let n = normalise("> ERROR 07-23 07:21:49 [core.py:586] RuntimeError: boom");
        assert_eq!(n.rest, "RuntimeError: boom");
        assert_eq!(normalise(">> > x").rest, "x");
        assert_eq!(normalise(">>> import torch").rest, ">>> import torch");
        assert_eq!(normalise(">").rest, "");
    }

    #[test]
    fn gutters() {
        assert_eq!(gutter_len("  1145\t[rank3]: x"), 7);
        assert_eq!(gutter_len("12:RuntimeError: x"), 3);
        assert_eq!(gutter_len("logs/run.log:88:EZ9999: Inner Error!"), 16);
        assert_eq!(gutter_len("10:35:57 INFO x"), 0);
        assert_eq!(gutter_len("2025-07-23 10:35:42 x"), 0);
        assert_eq!(gutter_len("RuntimeError: x"), 0);
        assert_eq!(gutter_len("    File \"a.py\", line 3"), 0);
        assert!(window_has_gutter(["1:a", "2:b", "", "3:c"]));
        assert!(!window_has_gutter([
            "507014: The aicore execution times out"
        ]));
        assert!(!window_has_gutter(["1:a", "b", "c", "d"]));
    }

    #[test]
    fn paste_indentation() {
        assert_eq!(common_indent([" a", "  b", " ", ""]), 1);
        assert_eq!(common_indent(["a", "  b"]), 0);
        assert_eq!(common_indent(Vec::<&str>::new()), 0);
    }

    #[test]
    fn a_terminal_panes_frame() {
        let n = normalise(
            "│ F0228 07:57:06.699025       1 main.go:133] load config failed, error is x   │",
        );
        assert_eq!(n.glog_level(), Some('F'));
        assert_eq!(n.rest, "load config failed, error is x");
        assert_eq!(strip_frame("vllm-1  | INFO x"), "vllm-1  | INFO x");
        assert_eq!(strip_frame("a │b│"), "a │b│");
    }

    #[test]
    fn old_logger_artifact_and_level() {
        let n = normalise(
            "[2023-11-06 14:54:08,549] torch._dynamo.guards.__recompiles: [DEBUG]     - tensor 'x' size mismatch",
        );
        assert_eq!(n.rest, "    - tensor 'x' size mismatch");
        assert_eq!(n.artifact(), Some("recompiles"));
        assert_eq!(n.glog_level(), Some('D'));
    }

    #[test]
    fn elided_glog_prefix() {
        let n = normalise(".../torch/_dynamo/symbolic_convert.py:443] [26/0] [__graph_breaks] Reason: Unsupported: x");
        assert_eq!(n.rest, "Reason: Unsupported: x");
        assert_eq!(n.artifact(), Some("graph_breaks"));
    }
}
