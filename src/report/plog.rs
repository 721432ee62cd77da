//! Rendering for `npgx plog`: summary table / JSON / CSV and record listings.

use std::io::{self, Write};

use crate::envelope::SCHEMA_PREFIX;
use crate::plog::summary::{
    RecordOut, RECORDS_SCHEMA_NAME, RECORDS_SCHEMA_VERSION, SCHEMA_NAME as SUMMARY_SCHEMA_NAME,
    SCHEMA_VERSION as SUMMARY_SCHEMA_VERSION,
};
use crate::plog::{CausalRef, PlogSummary, RecordRef, Warning};

/// Prints warnings to stderr as `npgx: warning: FILE[:LINE]: message`.
pub fn print_warnings(warnings: &[Warning]) {
    let stderr = io::stderr();
    let mut err = stderr.lock();
    for w in warnings {
        let _ = match w.line {
            Some(l) => writeln!(
                err,
                "npgx: warning: {}:{l}: {}",
                w.file.display(),
                w.message
            ),
            None => writeln!(err, "npgx: warning: {}: {}", w.file.display(), w.message),
        };
    }
}

/// Writes one CSV row (RFC 4180 quoting by the `csv` crate) straight to `out`, so rows can be
/// streamed one at a time.
pub fn csv_row<W: Write, S: AsRef<[u8]>>(out: &mut W, fields: &[S]) -> io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .buffer_capacity(1024)
        .from_writer(out);
    w.write_record(fields)?;
    w.flush()
}

fn short(s: &str, n: usize) -> String {
    let t = s.trim();
    if t.chars().count() <= n {
        t.to_owned()
    } else {
        let mut out: String = t.chars().take(n.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

fn cite(r: &RecordRef) -> String {
    format!(
        "{}:{}  [{}] {}({}) {}\n      {}",
        r.file.display(),
        r.line,
        r.level,
        r.module,
        r.pid,
        r.time,
        short(&r.text, 200)
    )
}

fn cite_causal(c: &CausalRef) -> String {
    let mut head = format!("{}:{}  {}", c.file.display(), c.line, c.evidence.rule);
    if let Some(p) = c.pid {
        head.push_str(&format!(" pid {p}"));
    }
    if let Some(t) = c.time {
        head.push_str(&format!(" {t}"));
    }
    format!("{head}\n      {}", short(&c.text, 200))
}

pub fn summary_json(out: &mut impl Write, s: &PlogSummary) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, &summary_value(s)?)?;
    writeln!(out)
}

/// The `npgx.plog` document as a value (what `npgx mcp`'s `plog` returns).
pub fn summary_value(s: &PlogSummary) -> serde_json::Result<serde_json::Value> {
    super::document(SUMMARY_SCHEMA_NAME, SUMMARY_SCHEMA_VERSION, s)
}

pub fn summary_table(out: &mut impl Write, s: &PlogSummary) -> io::Result<()> {
    writeln!(
        out,
        "{} file(s), {} record(s), {} process(es)",
        s.files.len(),
        s.records,
        s.processes.len()
    )?;
    if let Some(c) = &s.first_causal {
        writeln!(
            out,
            "\nfirst causal error ({}, {}):\n  {}",
            c.rank.name(),
            serde_json::to_value(c.tier)
                .ok()
                .and_then(|v| v.as_str().map(str::to_owned))
                .unwrap_or_default(),
            cite_causal(c)
        )?;
        write!(out, "{}", super::triage::remedy_text(&c.remedy, "  "))?;
    }
    if let Some(r) = &s.first_error {
        writeln!(out, "first ERROR:\n  {}", cite(r))?;
    }
    for p in &s.processes {
        writeln!(out)?;
        let span = match (p.first_time, p.last_time) {
            (Some(a), Some(b)) => format!("{a} .. {b}"),
            _ => "-".to_owned(),
        };
        let devs = if p.device_ids.is_empty() {
            String::new()
        } else {
            format!(
                "  device {}",
                p.device_ids
                    .iter()
                    .map(u64::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            )
        };
        writeln!(
            out,
            "pid {} ({}){devs}  {} record(s)  {span}",
            p.pid,
            if p.pname.is_empty() { "-" } else { &p.pname },
            p.records
        )?;
        let levels: Vec<String> = p.levels.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(out, "  levels:  {}", levels.join(", "))?;
        let mut modules: Vec<(&String, &u64)> = p.modules.iter().collect();
        modules.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let modules: Vec<String> = modules.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(out, "  modules: {}", modules.join(", "))?;
        if !p.error_codes.is_empty() {
            let codes: Vec<String> = p
                .error_codes
                .iter()
                .map(|(k, v)| format!("{k} ×{v}"))
                .collect();
            writeln!(out, "  codes:   {}", codes.join(", "))?;
        }
        if p.continuation_lines > 0 || p.truncated_records > 0 {
            writeln!(
                out,
                "  continuation lines {}, records cut at the 1024-byte limit {}",
                p.continuation_lines, p.truncated_records
            )?;
        }
        if let Some(r) = &p.first_causal {
            writeln!(out, "  first causal: {}", cite(r))?;
        }
        if let Some(r) = &p.first_error {
            if Some(r.line) != p.first_causal.as_ref().map(|c| c.line)
                || Some(&r.file) != p.first_causal.as_ref().map(|c| &c.file)
            {
                writeln!(out, "  first ERROR:  {}", cite(r))?;
            }
        }
    }
    if !s.error_reports.is_empty() {
        writeln!(out, "\nCANN error reports:")?;
        for r in &s.error_reports {
            let rep = &r.report;
            let title = rep
                .title
                .as_deref()
                .map(|t| format!(" {t}"))
                .unwrap_or_default();
            // The text of the cited line: a TraceBack item the failure came from, else the
            // report's message.
            let text = rep
                .traceback
                .iter()
                .find(|t| t.line == r.cited_line)
                .map(|t| t.text.as_str())
                .or(rep.message.as_ref().map(|m| m.text.as_str()))
                .unwrap_or("");
            writeln!(
                out,
                "  {}:{}  {}{title}  {}",
                r.file.display(),
                r.cited_line,
                rep.code.as_deref().unwrap_or("(no code)"),
                short(text, 160)
            )?;
        }
    }
    if !s.warnings.is_empty() {
        writeln!(out, "\n{} warning(s) (see stderr)", s.warnings.len())?;
    }
    Ok(())
}

const LEVELS: [&str; 7] = [
    "ERROR", "WARNING", "INFO", "DEBUG", "EVENT", "TRACE", "NULL",
];

const SUMMARY_CSV_HEADER: [&str; 21] = [
    "pid",
    "pname",
    "records",
    "error",
    "warning",
    "info",
    "debug",
    "event",
    "trace",
    "null",
    "other_levels",
    "first_time",
    "last_time",
    "device_ids",
    "error_codes",
    "first_error_file",
    "first_error_line",
    "first_causal_file",
    "first_causal_line",
    "first_causal_rank",
    "first_causal_text",
];

const RECORD_CSV_HEADER: [&str; 13] = [
    "file",
    "line",
    "time",
    "level",
    "module",
    "pid",
    "pname",
    "src_file",
    "src_line",
    "tid",
    "func",
    "message",
    "continuation_lines",
];

pub fn summary_csv(out: &mut impl Write, s: &PlogSummary) -> io::Result<()> {
    csv_row(out, &SUMMARY_CSV_HEADER)?;
    for p in &s.processes {
        let lv = |l: &str| p.levels.get(l).copied().unwrap_or(0);
        let other: u64 = p
            .levels
            .iter()
            .filter(|(k, _)| !LEVELS.contains(&k.as_str()))
            .map(|(_, v)| v)
            .sum();
        let codes: Vec<String> = p
            .error_codes
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let fe = p.first_error.as_ref();
        let fc = p.first_causal.as_ref();
        let fields = [
            p.pid.to_string(),
            p.pname.clone(),
            p.records.to_string(),
            lv("ERROR").to_string(),
            lv("WARNING").to_string(),
            lv("INFO").to_string(),
            lv("DEBUG").to_string(),
            lv("EVENT").to_string(),
            lv("TRACE").to_string(),
            lv("NULL").to_string(),
            other.to_string(),
            p.first_time.map(|t| t.to_string()).unwrap_or_default(),
            p.last_time.map(|t| t.to_string()).unwrap_or_default(),
            p.device_ids
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(";"),
            codes.join(";"),
            fe.map(|r| r.file.display().to_string()).unwrap_or_default(),
            fe.map(|r| r.line.to_string()).unwrap_or_default(),
            fc.map(|r| r.file.display().to_string()).unwrap_or_default(),
            fc.map(|r| r.line.to_string()).unwrap_or_default(),
            fc.and_then(|r| r.rank)
                .map(|k| k.name().to_owned())
                .unwrap_or_default(),
            fc.map(|r| r.text.clone()).unwrap_or_default(),
        ];
        csv_row(out, &fields)?;
    }
    Ok(())
}

/// What [`RecordWriter`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// One line per record.
    Table,
    /// The `npgx.plog-records` envelope with the records under `records`.
    Json,
    /// One CSV row per record.
    Csv,
}

/// Streams `--records` output: a JSON array, CSV rows or plain lines.
pub struct RecordWriter<'a, W: Write> {
    out: &'a mut W,
    format: Format,
    n: u64,
}

impl<'a, W: Write> RecordWriter<'a, W> {
    pub fn new(out: &'a mut W, format: Format) -> Self {
        RecordWriter { out, format, n: 0 }
    }

    pub fn begin(&mut self) -> io::Result<()> {
        match self.format {
            // The envelope of docs/json.md, written by hand because the records stream.
            Format::Json => write!(
                self.out,
                "{{\"schema\": \"{SCHEMA_PREFIX}{RECORDS_SCHEMA_NAME}\", \"schema_version\": {RECORDS_SCHEMA_VERSION}, \"records\": ["
            ),
            Format::Csv => csv_row(self.out, &RECORD_CSV_HEADER),
            Format::Table => Ok(()),
        }
    }

    pub fn record(&mut self, r: &RecordOut) -> io::Result<()> {
        match self.format {
            Format::Json => {
                if self.n > 0 {
                    write!(self.out, ",")?;
                }
                writeln!(self.out)?;
                serde_json::to_writer(&mut *self.out, r)?;
            }
            Format::Csv => {
                let fields = [
                    r.file.display().to_string(),
                    r.line.to_string(),
                    r.time.to_string(),
                    r.level.to_string(),
                    r.module.clone(),
                    r.pid.to_string(),
                    r.pname.clone(),
                    r.src_file
                        .as_deref()
                        .map(str::to_string)
                        .unwrap_or_default(),
                    r.src_line.map(|l| l.to_string()).unwrap_or_default(),
                    r.tid.map(|t| t.to_string()).unwrap_or_default(),
                    r.func.as_deref().map(str::to_string).unwrap_or_default(),
                    r.message.clone(),
                    r.continuation.len().to_string(),
                ];
                csv_row(self.out, &fields)?;
            }
            Format::Table => {
                writeln!(
                    self.out,
                    "{}:{}  [{}] {}({},{}) {}  {}",
                    r.file.display(),
                    r.line,
                    r.level,
                    r.module,
                    r.pid,
                    r.pname,
                    r.time,
                    r.message
                )?;
                for c in &r.continuation {
                    writeln!(self.out, "    | {c}")?;
                }
            }
        }
        self.n += 1;
        Ok(())
    }

    pub fn end(&mut self) -> io::Result<()> {
        match self.format {
            Format::Json => writeln!(self.out, "{}]}}", if self.n > 0 { "\n" } else { "" }),
            _ => Ok(()),
        }
    }
}
