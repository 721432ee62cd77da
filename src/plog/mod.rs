//! The plog engine: find CANN log files, stream them, and produce per-process summaries,
//! filtered record lists and AI Core error records.
//!
//! Files are read through [`reader::for_each_line`] (one fixed buffer, no whole-file reads), so a
//! multi-GB plog costs the same memory as a small one. Grammars come from
//! [`npgx_parsers::plog`], [`npgx_parsers::aicore`] and [`npgx_parsers::cann_error`]; this module
//! only adds files, filters and aggregation. Nothing here prints: results are values that
//! `report::plog` and `report::aicore` render.
//!
//! Entry points:
//! * [`summarize`] — `npgx plog`: counts by level and module per process, error codes, time span,
//!   the first ERROR and the first causal error;
//! * [`for_each_record`] — `npgx plog --records`: every record that passes the filters;
//! * [`scan_aicore`] — `npgx aicore`: device errors with per-field evidence lines.

pub mod aicore;
pub mod discover;
pub mod reader;
pub mod summary;

/// Where a process's plogs are, for messages that send the user to them.
pub const PLOG_LOCATION: &str =
    "$ASCEND_PROCESS_LOG_PATH/debug/plog, by default ~/ascend/log/debug/plog, or an asys collection";

use std::path::{Path, PathBuf};

use npgx_parsers::plog::{Level, PlogHeader, PlogTime};
use serde::{Deserialize, Serialize};

pub use aicore::{scan_aicore, AicoreScan, FileAicoreError};
pub use discover::{discover, LogInput};
pub use summary::{
    for_each_record, summarize, CausalRef, FileReport, PlogSummary, ProcessSummary, RecordRef,
};

/// Something that could not be read or parsed; the scan went on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warning {
    pub file: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub message: String,
}

impl Warning {
    pub fn io(path: &Path, message: &str) -> Warning {
        Warning {
            file: path.to_path_buf(),
            line: None,
            message: message.to_owned(),
        }
    }
}

/// Whole seconds since 1970-01-01 of a plog time stamp read as UTC (its writer's clock: only
/// differences between stamps mean anything); `None` for a date that does not exist.
pub fn seconds(t: &PlogTime) -> Option<i64> {
    let dt = jiff::civil::DateTime::new(
        i16::try_from(t.year).ok()?,
        i8::try_from(t.month).ok()?,
        i8::try_from(t.day).ok()?,
        i8::try_from(t.hour).ok()?,
        i8::try_from(t.minute).ok()?,
        i8::try_from(t.second).ok()?,
        0,
    )
    .ok()?;
    let epoch = jiff::civil::date(1970, 1, 1).at(0, 0, 0, 0);
    Some(dt.duration_since(epoch).as_secs())
}

/// Record filters (`--level --module --pid --since --until --grep`). Empty lists accept all.
#[derive(Debug, Clone, Default)]
pub struct Filters {
    pub levels: Vec<Level>,
    /// Upper-case module names.
    pub modules: Vec<String>,
    pub pids: Vec<i64>,
    pub since: Option<PlogTime>,
    pub until: Option<PlogTime>,
    /// Substring searched in the record's text (header line and continuation lines).
    pub grep: Option<String>,
}

impl Filters {
    /// Whether a record with this header is one of those the filters select — its process,
    /// module and time; not its level (a verbosity choice) nor `grep`. The causal engine and the
    /// CANN report assembly read only these records (and the lines of no record).
    pub fn selects_record(&self, h: &PlogHeader<'_>) -> bool {
        (self.modules.is_empty() || self.modules.iter().any(|m| m == h.module))
            && (self.pids.is_empty() || self.pids.contains(&h.pid))
            && self.since.is_none_or(|t| h.time >= t)
            && self.until.is_none_or(|t| h.time <= t)
    }

    /// Whether no filter chooses records ([`Filters::selects_record`] accepts every header).
    pub fn selects_every_record(&self) -> bool {
        self.modules.is_empty()
            && self.pids.is_empty()
            && self.since.is_none()
            && self.until.is_none()
    }

    /// Whether a record with this header passes every filter except `grep`.
    pub fn accepts_header(&self, h: &PlogHeader<'_>) -> bool {
        (self.levels.is_empty() || self.levels.contains(&h.level)) && self.selects_record(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plog_times_become_seconds() {
        let a = seconds(&PlogTime::parse("2025-05-08-09:56:18.522.534").unwrap()).unwrap();
        let b = seconds(&PlogTime::parse("2025-05-08-09:57:19.000.000").unwrap()).unwrap();
        assert_eq!(b - a, 61);
        let c = seconds(&PlogTime::parse("2025-05-09-00:00:00.000.000").unwrap()).unwrap();
        assert_eq!(c - a, 14 * 3600 + 3 * 60 + 42);
        assert_eq!(
            seconds(&PlogTime::parse("2025-02-30-00:00:00.000.000").unwrap()),
            None
        );
    }
}
