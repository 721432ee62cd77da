//! `npgx triage classify`: first causal error plus route for any captured output, without a
//! step tree (so without the step-based pre-classification).
//!
//! The file is streamed ([`crate::plog::reader`]) into the causal engine
//! ([`npgx_parsers::causal::CausalScanner`]); only its first [`PROSE_HEAD`] bytes are kept, for
//! the accuracy / performance wording of reports that hold no error.

use std::path::{Path, PathBuf};

use anyhow::Context;
use npgx_parsers::causal::{CausalError, CausalScanner};
use serde::Serialize;

use super::route::{route_error, route_prose, Route, Routing};
use crate::plog::reader::for_each_line;

/// Bytes of the input kept for the wording rules (reports without an error are short).
pub const PROSE_HEAD: usize = 256 * 1024;

/// The classification of one captured log.
#[derive(Debug, Clone, Serialize)]
pub struct Classification {
    pub file: PathBuf,
    pub route: Route,
    pub sub_skill: Option<&'static str>,
    pub rule: String,
    /// The keyword, code or phrase that fired.
    pub matched: Option<String>,
    /// The 1-based line the matched token is on.
    pub matched_line: Option<u64>,
    /// For the environment route: the package or component to fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub package: Option<String>,
    /// The first causal error, when the log has one.
    pub first_causal_error: Option<CausalError>,
    /// For reports without an error (rules 3 and 4): the line that carries the symptom.
    pub evidence_line: Option<u64>,
    pub evidence_text: Option<String>,
    pub notes: Vec<String>,
}

impl Classification {
    /// Whether a causal error or a route was found (exit code 1 of `classify`).
    pub fn found(&self) -> bool {
        self.route != Route::Undetermined
    }
}

fn from_routing(file: &Path, routing: Routing) -> Classification {
    let Routing {
        route,
        rule,
        matched,
        matched_line,
        package,
        notes,
    } = routing;
    Classification {
        file: file.to_path_buf(),
        route,
        sub_skill: route.sub_skill(),
        rule,
        matched,
        matched_line,
        package,
        first_causal_error: None,
        evidence_line: None,
        evidence_text: None,
        notes,
    }
}

/// Routes a first causal error found in `file`.
pub fn classify_causal(file: &Path, err: CausalError) -> Classification {
    let mut c = from_routing(file, route_error(&err));
    c.first_causal_error = Some(err);
    c
}

/// Classifies the first causal error (if any) or, without one, the report's wording in `head`.
pub fn classify_found(file: &Path, err: Option<CausalError>, head: &str) -> Classification {
    if let Some(err) = err {
        return classify_causal(file, err);
    }
    match route_prose(head) {
        Some((routing, line, evidence)) => {
            let mut c = from_routing(file, routing);
            c.evidence_line = Some(line as u64);
            c.matched_line = Some(line as u64);
            c.evidence_text = Some(evidence);
            c.notes.push(
                "no error stack: routed by the report's tables or wording (rules 3–4)".into(),
            );
            c
        }
        None => {
            let mut c = from_routing(file, Routing::new(Route::Undetermined, "none", None));
            c.notes
                .push("no error, no accuracy or performance report: nothing to route".into());
            c
        }
    }
}

/// Streams one file through the causal engine and classifies it. Memory is bounded (the
/// engine's window, the reader's buffer and [`PROSE_HEAD`]).
pub fn classify_file(path: &Path) -> anyhow::Result<Classification> {
    let mut scanner = CausalScanner::new();
    let mut head = String::new();
    let mut not_text = 0u64;
    let stats = for_each_line(path, |no, line| {
        scanner.push(no, line);
        let text = std::str::from_utf8(line).ok();
        if text.is_none() || memchr::memchr(0, line).is_some() {
            not_text += 1;
        }
        if head.len() < PROSE_HEAD {
            let s = String::from_utf8_lossy(line);
            let room = PROSE_HEAD - head.len();
            let cut = (0..=room.min(s.len()))
                .rev()
                .find(|i| s.is_char_boundary(*i))
                .unwrap_or(0);
            head.push_str(&s[..cut]);
            head.push('\n');
        }
    })
    .with_context(|| format!("cannot read {}", path.display()))?;
    let mut c = classify_found(path, scanner.finish(), &head);
    if not_text > 0 {
        c.notes.push(format!(
            "{not_text} of {} lines hold NUL bytes or invalid UTF-8 (read with replacement characters)",
            stats.lines
        ));
    }
    if stats.long_lines > 0 {
        c.notes.push(format!(
            "{} line(s) longer than {} bytes: only their head was read ({} bytes skipped)",
            stats.long_lines,
            crate::plog::reader::MAX_LINE,
            stats.dropped_bytes
        ));
    }
    Ok(c)
}
