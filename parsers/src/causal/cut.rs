//! Where a pasted text was cut: what its end, or a marker inside it, says is missing.
//!
//! A paste is often a piece of a log. Three cuts can be read from the text itself:
//!
//! ```text
//! python-tail := "Traceback (most recent call last):" (frame | source | caret)* END
//!                (CPython prints the exception line after the frames: a text that ends
//!                on a frame, its source line or its carets has lost it)
//! cann-tail   := "TraceBack (most recent call last):" END
//!                (a CANN report lists its call stack after that header)
//! elision     := a line that is only "...", "…", "[...]", "(...)", "<snip>", "[snip]",
//!                "[truncated]" or "... N lines omitted" (someone left lines out)
//! ```
//!
//! Lines are read after their logger and worker prefixes ([`crate::line_prefix`]), so a Ray
//! worker's `(Worker pid=1)` traceback is read as any other. What it is not for: deciding the
//! first causal error (that is [`crate::causal`]); the cut only says what the text cannot show.

use crate::line_prefix::strip_prefixes;

/// What a text's end or a marker in it says was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The text ends inside the Python traceback that starts at `from`: its exception line is
    /// not in it.
    PythonTraceback { from: u64, last: u64 },
    /// The text ends at a CANN report's `TraceBack (most recent call last):` header (`line`).
    CannTraceBack { line: u64 },
    /// Line `line` only marks lines left out.
    Elided { line: u64 },
}

impl Cut {
    /// One sentence for a reader: what is missing and what to ask for.
    pub fn sentence(&self) -> String {
        match self {
            Cut::PythonTraceback { from, last } => format!(
                "the text stops inside the Python traceback of line {from} (its last line, {last}, is a frame): the exception that ends it is not in the text — ask for the rest of the output"
            ),
            Cut::CannTraceBack { line } => format!(
                "the CANN report stops at its `TraceBack` header (line {line}): the lines after it, or the failing process's plog, say where it failed — ask for the rest of the output or the plogs"
            ),
            Cut::Elided { line } => format!(
                "line {line} marks lines left out: the cause may be in what was left out — ask for the whole output"
            ),
        }
    }
}

/// Reads a text line by line and says where it was cut.
#[derive(Debug, Default)]
pub struct CutReader {
    /// The open Python traceback's first line, while only frames have followed it.
    traceback: Option<u64>,
    /// A CANN `TraceBack` header with nothing after it yet.
    cann: Option<u64>,
    elided: Option<u64>,
    last: u64,
}

impl CutReader {
    pub fn new() -> CutReader {
        CutReader::default()
    }

    /// One line (1-based number, text without terminator).
    pub fn push(&mut self, no: u64, line: &str) {
        let peeled = strip_prefixes(line).rest;
        let t = peeled.trim();
        if t.is_empty() {
            return;
        }
        if self.elided.is_none() && is_elision(t) {
            self.elided = Some(no);
        }
        self.cann = (t == "TraceBack (most recent call last):").then_some(no);
        if t == "Traceback (most recent call last):" {
            self.traceback = Some(no);
        } else if self.traceback.is_some() {
            // CPython indents the frames and their source lines; the exception line is not.
            let frame = peeled.starts_with([' ', '\t']) || t.starts_with("File \"");
            if !frame {
                self.traceback = None;
            }
        }
        self.last = no;
    }

    /// The cuts seen, the text's end first.
    pub fn finish(self) -> Vec<Cut> {
        let mut cuts = Vec::new();
        if let Some(from) = self.traceback {
            if from < self.last {
                cuts.push(Cut::PythonTraceback {
                    from,
                    last: self.last,
                });
            }
        }
        if let Some(line) = self.cann {
            cuts.push(Cut::CannTraceBack { line });
        }
        if let Some(line) = self.elided {
            cuts.push(Cut::Elided { line });
        }
        cuts
    }
}

/// A line that only marks lines left out.
fn is_elision(t: &str) -> bool {
    const MARKS: &[&str] = &[
        "...",
        "…",
        "……",
        "[...]",
        "(...)",
        "<...>",
        "<snip>",
        "<snipped>",
        "[snip]",
        "[snipped]",
        "[truncated]",
        "(truncated)",
        "<truncated>",
    ];
    if MARKS.contains(&t) {
        return true;
    }
    // `... 120 lines omitted ...`, `[... 3 more lines]`, `(42 lines skipped)`.
    let words: Vec<&str> = t
        .trim_matches(|c: char| matches!(c, '.' | '…' | '[' | ']' | '(' | ')' | '<' | '>' | ' '))
        .split_whitespace()
        .collect();
    let counted = words
        .first()
        .is_some_and(|w| w.bytes().all(|b| b.is_ascii_digit()));
    let said = words.iter().any(|w| {
        matches!(
            *w,
            "omitted" | "skipped" | "truncated" | "elided" | "removed"
        )
    });
    let lines = words
        .iter()
        .any(|w| matches!(*w, "lines" | "line" | "more"));
    counted && said && lines && words.len() <= 5
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cuts(text: &str) -> Vec<Cut> {
        let mut r = CutReader::new();
        for (i, l) in text.lines().enumerate() {
            r.push(i as u64 + 1, l);
        }
        r.finish()
    }

    #[test]
    fn a_traceback_without_its_exception() {
        let cut = "Error in request: f() missing 1 required positional argument: 'x'\nTraceback (most recent call last):\n  File \"a.py\", line 1, in g\n    f()\n    ^^^\n";
        assert_eq!(cuts(cut), [Cut::PythonTraceback { from: 2, last: 5 }]);
        let whole = format!("{cut}TypeError: f() missing 1 required positional argument: 'x'\n");
        assert_eq!(cuts(&whole), []);
        // A worker's prefixed traceback, cut.
        let ray = "(Worker pid=7) Traceback (most recent call last):\n(Worker pid=7)   File \"w.py\", line 3, in run\n";
        assert_eq!(cuts(ray), [Cut::PythonTraceback { from: 1, last: 2 }]);
        // The header alone says nothing was cut after it yet.
        assert_eq!(cuts("Traceback (most recent call last):\n"), []);
    }

    #[test]
    fn a_cann_report_cut_at_its_traceback_header() {
        let text = "EE1001: [PID: 1] 2025-01-01-00:00:00.000.000 The argument is invalid.\n        TraceBack (most recent call last):\n";
        assert_eq!(cuts(text), [Cut::CannTraceBack { line: 2 }]);
        let whole = format!("{text}        Op build failed[FUNC:f][FILE:a.cc][LINE:1]\n");
        assert_eq!(cuts(&whole), []);
    }

    #[test]
    fn elision_markers() {
        for mark in [
            "...",
            "…",
            "[...]",
            "<snip>",
            "... 120 lines omitted ...",
            "[3 more lines truncated]",
        ] {
            assert_eq!(
                cuts(&format!("a\n{mark}\nb\n")),
                [Cut::Elided { line: 2 }],
                "{mark}"
            );
        }
        for text in [
            "Loading...",
            "... done",
            "1 2 3",
            "300 lines written",
            "....",
        ] {
            assert_eq!(cuts(&format!("a\n{text}\nb\n")), [], "{text}");
        }
    }

    // The worst text in the world: long lines of markers, no panic.
    #[test]
    fn hostile_lines() {
        let long = format!("{} lines omitted", "9".repeat(100_000));
        assert_eq!(cuts(&long), [Cut::Elided { line: 1 }]);
        assert_eq!(cuts(&"…".repeat(50_000)), []);
    }
}
