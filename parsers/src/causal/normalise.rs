//! Line normalisation: what a pasted log line says once the paste's decorations and the
//! loggers' prefixes are taken off.
//!
//! Grammar of one physical line, left to right:
//!
//! ```text
//! line     = marker | fence | quote* prefix* indent rest
//! marker   = "[... excerpt gap" …                    (a joint between two pasted windows)
//! fence    = ("```" | "~~~") info-string              (Markdown code fence)
//! quote    = ">" [" "]                                (Markdown block quote; lazy continuation
//!                                                      lines carry no marker and need nothing)
//! prefix   = the launcher and logger prefixes of `torch_logs::prefix` (vLLM process and
//!            logger, `[rankN]:`, glog, c10, old TORCH_LOGS) and the plog console prefixes
//! indent   = the paste's common indentation (computed over a window by [`common_indent`]:
//!            a tracker or an editor that indents every line by the same amount)
//! ```
//!
//! What it is not for: deciding what the remaining text is (the candidates in
//! [`super::collect`]). Line numbers never change: a marker or a fence is reported as
//! [`Normalised::skip`] so the caller keeps counting physical lines.

use crate::line_prefix::{strip_prefixes, LinePrefix};
use crate::plog::header::parse_header;

/// One line with its decorations and prefixes removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalised<'a> {
    /// Not log output: an excerpt-gap marker or a Markdown fence.
    pub skip: bool,
    /// The prefixes peeled off (logger level, glog header, …).
    pub prefixes: Vec<LinePrefix<'a>>,
    /// The text after the prefixes, indentation kept (see [`common_indent`]).
    pub rest: &'a str,
}

impl Normalised<'_> {
    /// The glog level letter (`V I W E C`) when the line had a TORCH_LOGS header or the
    /// pre-2.2 `logger: [LEVEL]` tag, mapped to the same letters.
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

/// Normalises one line (trailing `\r` dropped).
pub fn normalise(line: &str) -> Normalised<'_> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if is_excerpt_marker(line) || is_fence(line) {
        return Normalised {
            skip: true,
            prefixes: Vec::new(),
            rest: "",
        };
    }
    // A plog record line has no prefix to peel: the common case of a big plog stays cheap.
    if line.starts_with("[") && parse_header(line.as_bytes()).is_some() {
        return Normalised {
            skip: false,
            prefixes: Vec::new(),
            rest: line,
        };
    }
    let unquoted = strip_quote(line);
    let s = strip_prefixes(unquoted);
    Normalised {
        skip: false,
        prefixes: s.prefixes,
        rest: s.rest,
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
    fn paste_indentation() {
        assert_eq!(common_indent([" a", "  b", " ", ""]), 1);
        assert_eq!(common_indent(["a", "  b"]), 0);
        assert_eq!(common_indent(Vec::<&str>::new()), 0);
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
