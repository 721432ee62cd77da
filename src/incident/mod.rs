//! The inputs of an HTML incident report (`npgx report`, `--html`): npgx JSON documents, checked
//! against the schemas this build reads, plus the log lines they point at (the context of a
//! first causal error, the evidence lines of an AI Core error), read from the logs named in the
//! document. Triage trees are analysed into their `npgx.triage-analyze` document first.
//!
//! Each document is read once, when it is loaded, through its typed view ([`Typed`]); the
//! renderer (`report::html`) works on these inputs only, so a document saved with
//! `--format json` and rendered later gives the same page as `--html` on the same machine.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use serde_json::Value;

use crate::compare::records::CompareDocument;
use crate::plog::aicore::AicoreDocument;
use crate::plog::summary::PlogSummary;
use crate::scan::document::ScanDocument;
use crate::triage::analyze::TriageAnalysis;
use crate::triage::classify::{Classification, ClassifyDocument};
use crate::triage::TriageRun;

/// The documents a report renders (their names: the schema is `npgx.<name>`) and the newest
/// `schema_version` of each this build reads: the name and version each engine defines beside
/// its record.
pub const SCHEMAS: &[(&str, u32)] = &[
    (
        crate::triage::RUN_SCHEMA_NAME,
        crate::triage::RUN_SCHEMA_VERSION,
    ),
    (
        crate::triage::analyze::SCHEMA_NAME,
        crate::triage::analyze::SCHEMA_VERSION,
    ),
    (
        crate::triage::classify::SCHEMA_NAME,
        crate::triage::classify::SCHEMA_VERSION,
    ),
    (crate::scan::SCHEMA_NAME, crate::scan::SCHEMA_VERSION),
    (crate::compare::SCHEMA_NAME, crate::compare::SCHEMA_VERSION),
    (
        crate::plog::summary::SCHEMA_NAME,
        crate::plog::summary::SCHEMA_VERSION,
    ),
    (
        crate::plog::aicore::SCHEMA_NAME,
        crate::plog::aicore::SCHEMA_VERSION,
    ),
];

/// Name of the document `npgx report --format json` prints (schema `npgx.report`).
pub const REPORT_SCHEMA_NAME: &str = "report";
/// Version of the `npgx.report` document `npgx report --format json` prints.
pub const REPORT_SCHEMA_VERSION: u32 = 1;

/// The `npgx.report` document: the page written, its size, and the inputs it renders.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct Written<'a> {
    /// The HTML file written.
    pub output: &'a Path,
    /// Its size in bytes.
    pub bytes: usize,
    /// Every input, in the order of the page's sections.
    pub inputs: Vec<WrittenInput<'a>>,
}

/// One input of a [`Written`] report.
#[derive(Debug, serde::Serialize, schemars::JsonSchema)]
pub struct WrittenInput<'a> {
    /// Where it came from, as given ([`Input::source`]).
    pub source: &'a str,
    /// Its `schema` (`npgx.dump-scan`, …).
    pub schema: &'a str,
    /// Its `schema_version`, as the document gives it.
    pub schema_version: &'a Value,
}

impl<'a> Written<'a> {
    /// The document of a page of `bytes` bytes written to `output` from `inputs`.
    pub fn of(output: &'a Path, bytes: usize, inputs: &'a [Input]) -> Self {
        Written {
            output,
            bytes,
            inputs: inputs
                .iter()
                .map(|i| WrittenInput {
                    source: &i.source,
                    schema: &i.schema,
                    schema_version: &i.doc["schema_version"],
                })
                .collect(),
        }
    }
}

/// Lines of context shown on each side of a causal error line.
pub const CONTEXT: u64 = 10;
/// At most this many log lines are kept per document (bounded page size).
const MAX_LINES: usize = 5_000;
/// A log line longer than this is cut (and marked with `…`).
const MAX_LINE_CHARS: usize = 2_000;

impl Input {
    /// The document's name: its schema without the `npgx.` prefix (`dump-scan`).
    pub fn name(&self) -> &str {
        self.schema
            .strip_prefix(crate::envelope::SCHEMA_PREFIX)
            .unwrap_or_default()
    }
}

/// One report input: its document, read through its typed view, and the log lines it refers to.
#[derive(Debug, Clone)]
pub struct Input {
    /// Where it came from, as given (a JSON file, a triage tree, or the command that made it).
    pub source: String,
    /// The document as read, envelope included: what the page shows raw (fields a view does
    /// not know, a document kind without a section of its own).
    pub doc: Value,
    /// The document read once, when it was loaded, through the type its writer uses (the
    /// records the schemas are generated from): the sections render from this, so a field
    /// renamed in a record fails to compile, not to render.
    pub typed: Typed,
    /// The document's schema (`npgx.dump-scan`, …).
    pub schema: String,
    /// Log lines by file (as named in the document) and 1-based line number.
    pub lines: BTreeMap<String, BTreeMap<u64, String>>,
}

/// A report input's document through its typed view: the engines' records
/// ([`TriageRun`], [`TriageAnalysis`], [`ClassifyDocument`], [`PlogSummary`],
/// [`AicoreDocument`], [`CompareDocument`]) or, for the streamed dump-scan document, its read
/// side [`ScanDocument`].
#[derive(Debug, Clone)]
pub enum Typed {
    TriageRun(Box<TriageRun>),
    TriageAnalysis(Box<TriageAnalysis>),
    Classify(Box<ClassifyDocument<'static>>),
    Scan(Box<ScanDocument>),
    Compare(Box<CompareDocument<'static>>),
    Plog(Box<PlogSummary>),
    Aicore(Box<AicoreDocument<'static>>),
    /// It passed the envelope check but does not read as its view (a required field missing
    /// or of another type): the error, which its section shows instead of blank fields.
    Unreadable(String),
}

impl Typed {
    /// Reads document `name` (checked by the envelope) through its view: the one place a
    /// report's document kinds are told apart.
    fn read(name: &str, doc: &Value) -> Typed {
        fn view<T: serde::de::DeserializeOwned>(
            doc: &Value,
            wrap: impl FnOnce(Box<T>) -> Typed,
        ) -> Typed {
            match T::deserialize(doc) {
                Ok(t) => wrap(Box::new(t)),
                Err(e) => Typed::Unreadable(e.to_string()),
            }
        }
        match name {
            crate::triage::RUN_SCHEMA_NAME => view(doc, Typed::TriageRun),
            crate::triage::analyze::SCHEMA_NAME => view(doc, Typed::TriageAnalysis),
            crate::triage::classify::SCHEMA_NAME => view(doc, Typed::Classify),
            crate::scan::SCHEMA_NAME => view(doc, Typed::Scan),
            crate::compare::SCHEMA_NAME => view(doc, Typed::Compare),
            crate::plog::summary::SCHEMA_NAME => view(doc, Typed::Plog),
            crate::plog::aicore::SCHEMA_NAME => view(doc, Typed::Aicore),
            other => Typed::Unreadable(format!("no view of npgx.{other} in this build")),
        }
    }
}

/// What `npgx report` reads.
pub const READERS: crate::envelope::Readers<'static> = crate::envelope::Readers {
    reader: "npgx report renders",
    what: "a triage tree or an npgx JSON document",
    documents: SCHEMAS,
};

/// Reads one INPUT of `npgx report`: a directory is a triage tree (analysed), anything else a
/// saved npgx JSON document.
pub fn load(path: &Path) -> anyhow::Result<Input> {
    if path.is_dir() {
        let analysis = crate::triage::analyze::analyze(path)
            .with_context(|| format!("{}: cannot analyse the triage tree", path.display()))?;
        let doc = crate::envelope::document(
            crate::triage::analyze::SCHEMA_NAME,
            crate::triage::analyze::SCHEMA_VERSION,
            &analysis,
        )?;
        return from_document(path.display().to_string(), doc, None);
    }
    let (doc, name) = crate::envelope::read(path, &READERS)?;
    Ok(with_lines(
        path.display().to_string(),
        doc,
        name,
        path.parent(),
    ))
}

/// Checks the envelope of `doc` and reads the log lines it points at. Relative log paths are
/// tried as given and then under `base` (the directory of the JSON file).
pub fn from_document(source: String, doc: Value, base: Option<&Path>) -> anyhow::Result<Input> {
    let name = crate::envelope::check(&source, &doc, &READERS)?;
    Ok(with_lines(source, doc, name, base))
}

/// The input of a checked document `name`, with the log lines it points at.
fn with_lines(source: String, doc: Value, name: &str, base: Option<&Path>) -> Input {
    let typed = Typed::read(name, &doc);
    let mut wanted: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    wanted_lines(&typed, &mut wanted);
    let lines = read_lines(&wanted, base);
    Input {
        source,
        schema: format!("{}{name}", crate::envelope::SCHEMA_PREFIX),
        doc,
        typed,
        lines,
    }
}

fn around(set: &mut BTreeSet<u64>, line: u64) {
    set.extend(line.saturating_sub(CONTEXT).max(1)..=line.saturating_add(CONTEXT));
}

/// The log lines a document's report shows: ±[`CONTEXT`] around causal errors, every evidence
/// line of AI Core errors. A document that does not read as its view wants none (its section
/// says why).
fn wanted_lines(typed: &Typed, wanted: &mut BTreeMap<String, BTreeSet<u64>>) {
    let mut causal = |file: &Path, line: Option<u64>| {
        if let Some(l) = line {
            around(wanted.entry(file.display().to_string()).or_default(), l);
        }
    };
    let classified = |c: &Classification| {
        c.first_causal_error
            .as_ref()
            .map(|e| e.line)
            .or(c.evidence_line)
    };
    match typed {
        Typed::TriageRun(run) => {
            if let Some(c) = &run.analysis.evidence {
                causal(&c.file, classified(c));
            }
        }
        Typed::TriageAnalysis(a) => {
            if let Some(c) = &a.evidence {
                causal(&c.file, classified(c));
            }
        }
        Typed::Classify(d) => {
            for c in d.items.iter() {
                causal(&c.file, classified(c));
            }
        }
        Typed::Plog(p) => {
            if let Some(fc) = &p.first_causal {
                causal(&fc.file, Some(fc.line));
            }
            for fc in p
                .processes
                .iter()
                .take(64)
                .filter_map(|p| p.first_causal.as_ref())
            {
                causal(&fc.file, Some(fc.line));
            }
        }
        Typed::Aicore(d) => {
            for e in d.errors.iter() {
                let set = wanted.entry(e.file.display().to_string()).or_default();
                set.extend(e.evidence_lines());
            }
        }
        Typed::Scan(_) | Typed::Compare(_) | Typed::Unreadable(_) => {}
    }
}

fn resolve(file: &str, base: Option<&Path>) -> Option<PathBuf> {
    let p = PathBuf::from(file);
    if p.is_file() {
        return Some(p);
    }
    base.map(|b| b.join(&p)).filter(|p| p.is_file())
}

/// Reads the wanted lines, streaming each file once; unreadable files are skipped (the report
/// says the lines are not available). At most [`MAX_LINES`] lines in all.
fn read_lines(
    wanted: &BTreeMap<String, BTreeSet<u64>>,
    base: Option<&Path>,
) -> BTreeMap<String, BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    let mut budget = MAX_LINES;
    for (file, lines) in wanted {
        let Some(last) = lines.last().copied() else {
            continue;
        };
        let Some(path) = resolve(file, base) else {
            continue;
        };
        let Ok(f) = std::fs::File::open(&path) else {
            continue;
        };
        let mut got = BTreeMap::new();
        let mut reader = std::io::BufReader::new(f);
        let mut buf = Vec::new();
        let mut n = 0u64;
        while n < last && budget > 0 {
            buf.clear();
            match reader.read_until(b'\n', &mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            n += 1;
            if lines.contains(&n) {
                let text = String::from_utf8_lossy(&buf);
                let text = text.trim_end_matches(['\n', '\r']);
                let mut line: String = text.chars().take(MAX_LINE_CHARS).collect();
                if line.len() < text.len() {
                    line.push('…');
                }
                got.insert(n, line);
                budget -= 1;
            }
        }
        out.insert(file.clone(), got);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn other_tools_and_newer_versions_are_refused_with_the_expected_schema() {
        let e = from_document("x.json".into(), json!({"a": 1}), None).unwrap_err();
        assert!(
            e.to_string().contains("x.json: not an npgx JSON document"),
            "{e}"
        );
        assert!(e.to_string().contains("npgx.dump-scan v2"), "{e}");
        let e = from_document(
            "y.json".into(),
            json!({"schema": "npgx.dump-scan", "schema_version": 9}),
            None,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("y.json: npgx.dump-scan schema_version 9"),
            "{e}"
        );
        assert!(e.to_string().contains("expected npgx.dump-scan v2"), "{e}");
    }
}
