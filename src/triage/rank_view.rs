//! The rank view of `npgx triage classify DIR` (which rank failed first, which ranks it
//! cascaded to): the record the classify document holds and [`super::ranks`] fills.

use std::path::PathBuf;

use npgx_parsers::line_origin::{LogTime, Precision};
use serde::{Deserialize, Serialize};

use super::route::Route;

/// Where a file's rank was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RankFrom {
    /// The file's path (`rank3.log`, `worker_3/`, `attempt_0/3/`).
    Path,
    /// The error line's prefix or text.
    ErrorLine,
    /// The first rank prefix in the log before the error line.
    Log,
    /// Nowhere: the file stands for its rank.
    None,
}

/// One rank's log and its first causal error.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankLog {
    /// The rank as the log names it (`3`, `Worker_TP3`); `None` when nothing names one.
    pub rank: Option<String>,
    pub rank_from: RankFrom,
    pub file: PathBuf,
    /// The first causal error's line and text (`None`: the log holds no error).
    pub line: Option<u64>,
    pub text: Option<String>,
    pub route: Route,
    /// Read as collective communication (a consequence when another rank failed).
    pub collective: bool,
    /// The time stamp that dates the error, and the line it was read on (the error's own line,
    /// or the last stamped line before it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<LogTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_line: Option<u64>,
    /// Seconds after the origin's time (cascaded ranks, when both have a stamp).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after_origin_s: Option<f64>,
}

impl RankLog {
    /// `rank 3`, or the file name when no rank is named.
    pub fn label(&self) -> String {
        match &self.rank {
            Some(r) if r.bytes().all(|b| b.is_ascii_digit()) => format!("rank {r}"),
            Some(r) => r.clone(),
            None => self.file.file_name().map_or_else(
                || self.file.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            ),
        }
    }
}

/// The ranks of one directory.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RankView {
    pub dir: PathBuf,
    /// The rank whose error came first (`None`: no log holds an error).
    pub origin: Option<RankLog>,
    /// The other ranks with an error, earliest first (those without a stamp last).
    pub cascaded_to: Vec<RankLog>,
    /// Logs without a causal error.
    pub clean: Vec<RankLog>,
    /// The precision the stamps were compared at; `None` when no log had one.
    pub precision: Option<Precision>,
    pub notes: Vec<String>,
}
