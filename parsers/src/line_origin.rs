//! Where and when a log line was written: the worker rank it names and its time stamp, for
//! putting the logs of several ranks of one job on one time line.
//!
//! Time stamps, the first one in the line (launchers and loggers put theirs in front):
//!
//! ```text
//! stamp = date_time | glog | month_day | clock
//! date_time = yyyy "-" mm "-" dd ("-" | "T" | " ") clock [zone]
//!                 plog `2021-09-14-09:26:01.014.300`, CANN `[PID: n] 2025-07-23-10:35:42.381.401`,
//!                 torch_npu `[ERROR] 2025-11-29-10:54:13 (PID:…)`, Python logging
//!                 `2025-07-23 10:35:42,123`, ISO 8601
//! glog      = L mmdd " " clock [" "+ digits]          glog `E1129 10:54:13.679153 123`, c10
//!                                                      `[E324 13:00:25.428029551 …]` (m or mm)
//! month_day = mm "-" dd " " clock                      vLLM `ERROR 07-23 10:35:57 [core.py:586]`
//! clock     = h?h ":" mm ":" ss (("." | "," | ":") digits)*
//!                 fractions: `,191` ms; `.014.300` ms.us; `.679153` µs; `.428029551` ns
//! ```
//!
//! A stamp keeps only what the line says: glog, c10 and vLLM print no year, a bare clock no date.
//! [`Precision`] says what a set of stamps has in common, and [`LogTime::key`] compares stamps at
//! that precision (a year-less stamp is never compared with a dated one as if it were older).
//!
//! Ranks, from a line's prefixes or text: `[rankN]:` (torchrun), `(VllmWorker rank=3 pid=…)` and
//! `(Worker_TP3 pid=…)` (vLLM: the rank field, else the process name), `RankID:N` (torch_npu and
//! CANN, `-1` is none); and from a file path: a component holding `rank`, `worker` or `tp`
//! followed by a number (`rank3.log`, `worker_3/stderr.log`, `log_tp3.txt`), or the numeric
//! directory torchelastic writes per local rank (`attempt_0/3/stderr.log`).
//!
//! Pure and total: any text in, never a panic.

use std::sync::LazyLock;

use regex::Regex;
use serde::{Deserialize, Serialize};

use crate::line_prefix::{strip_prefixes, LinePrefix};

/// The time-stamp grammar above, as a pattern (free-spacing mode, no capture groups): shared
/// with the volatile-token grammar of `causal::volatile`.
pub(crate) const STAMP: &str = r"(?:
      \b[0-9]{4}-[0-9]{2}-[0-9]{2}[-T\x20][0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,:][0-9]+)*(?:Z|[+-][0-9]{2}:?[0-9]{2})?
    | \b[VIWEFC][0-9]{3,4}\x20[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:\x20+[0-9]+\b)?
    | \b[0-9]{2}-[0-9]{2}\x20[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)?
    | \b[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]+)*\b
  )";

static STAMP_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!("(?x){STAMP}")).expect("the time-stamp grammar is a valid pattern")
});

static RANK_ID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\bRankID:\s*([0-9]{1,6})\b").expect("the RankID pattern is valid")
});

static PATH_RANK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:^|[^a-z])(?:rank|worker|tp)[_\-=]?([0-9]{1,6})(?:[^0-9]|$)")
        .expect("the path-rank pattern is valid")
});

/// Bytes of a line searched for its time stamp: stamps are prefixes, and a long line's tail
/// is message text.
const STAMP_HEAD: usize = 160;

/// One time stamp, with only the fields the line stated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogTime {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub year: Option<u16>,
    /// Month and day, when the stamp has a date.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<(u8, u8)>,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    /// Fraction of the second in nanoseconds (0 when the stamp has none).
    pub nanos: u32,
}

/// What a set of stamps has in common.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Precision {
    /// Time of day only: some stamp has no date (ordering across midnight is wrong).
    TimeOfDay,
    /// Month, day and time: some stamp has no year (ordering across new year is wrong).
    MonthDay,
    /// Full date and time.
    Full,
}

impl LogTime {
    /// What this stamp states.
    pub fn precision(&self) -> Precision {
        match (self.year, self.date) {
            (Some(_), Some(_)) => Precision::Full,
            (None, Some(_)) => Precision::MonthDay,
            _ => Precision::TimeOfDay,
        }
    }

    /// A key that orders stamps at precision `p` (the lowest precision of the set compared).
    pub fn key(&self, p: Precision) -> (u16, u8, u8, u64) {
        let nanos_of_day = ((u64::from(self.hour) * 60 + u64::from(self.minute)) * 60
            + u64::from(self.second))
            * 1_000_000_000
            + u64::from(self.nanos);
        let (month, day) = if p >= Precision::MonthDay {
            self.date.unwrap_or((0, 0))
        } else {
            (0, 0)
        };
        let year = if p == Precision::Full {
            self.year.unwrap_or(0)
        } else {
            0
        };
        (year, month, day, nanos_of_day)
    }

    /// Seconds from `earlier` to `self` at precision `p` (negative when `self` is earlier).
    pub fn seconds_since(&self, earlier: &LogTime, p: Precision) -> f64 {
        let (a, b) = (self.key(p), earlier.key(p));
        let days = |k: (u16, u8, u8, u64)| {
            // Good enough for differences within a job: months of 31 days, years of 372.
            (i64::from(k.0) * 372 + i64::from(k.1) * 31 + i64::from(k.2)) as f64
        };
        (days(a) - days(b)) * 86_400.0 + (a.3 as f64 - b.3 as f64) / 1e9
    }
}

impl From<crate::plog::PlogTime> for LogTime {
    fn from(t: crate::plog::PlogTime) -> LogTime {
        LogTime {
            year: Some(t.year),
            date: Some((t.month, t.day)),
            hour: t.hour,
            minute: t.minute,
            second: t.second,
            nanos: u32::from(t.milli) * 1_000_000 + u32::from(t.micro) * 1_000,
        }
    }
}

impl std::fmt::Display for LogTime {
    /// `2025-07-23 10:35:42.381401`, `07-23 10:35:57`, `10:35:57.5`: what the stamp stated.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(y) = self.year {
            write!(f, "{y:04}-")?;
        }
        if let Some((m, d)) = self.date {
            write!(f, "{m:02}-{d:02} ")?;
        }
        write!(f, "{:02}:{:02}:{:02}", self.hour, self.minute, self.second)?;
        if self.nanos > 0 {
            let frac = format!("{:09}", self.nanos);
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        Ok(())
    }
}

/// The first time stamp in `line` (searched in its first 160 bytes), if any.
///
/// ```
/// use npgx_parsers::line_origin::line_time;
/// let t = line_time("[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] x").unwrap();
/// assert_eq!((t.date, t.hour, t.nanos), (Some((3, 24)), 13, 428_029_551));
/// let t = line_time("EZ9999: [PID: 14897] 2025-07-23-10:35:42.381.401 The error").unwrap();
/// assert_eq!((t.year, t.second, t.nanos), (Some(2025), 42, 381_401_000));
/// ```
pub fn line_time(line: &str) -> Option<LogTime> {
    let mut end = line.len().min(STAMP_HEAD);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    let m = STAMP_RE.find(&line[..end])?;
    parse_stamp(m.as_str())
}

/// Reads a text the grammar matched. `None` when a field is out of range (`25:61:99`).
fn parse_stamp(s: &str) -> Option<LogTime> {
    let b = s.as_bytes();
    let runs: Vec<(usize, &str)> = digit_runs(s);
    let (mut year, mut date) = (None, None);
    let clock_at;
    if b.first().is_some_and(u8::is_ascii_alphabetic) {
        // glog / c10: L mmdd or L mdd.
        let md = runs.first()?.1;
        let (m, d) = md.split_at(md.len().checked_sub(2)?);
        date = Some((m.parse().ok()?, d.parse().ok()?));
        clock_at = 1;
    } else if runs.first().is_some_and(|r| r.1.len() == 4) && b.get(4) == Some(&b'-') {
        year = Some(runs.first()?.1.parse().ok()?);
        date = Some((runs.get(1)?.1.parse().ok()?, runs.get(2)?.1.parse().ok()?));
        clock_at = 3;
    } else if b.get(2) == Some(&b'-') {
        date = Some((runs.first()?.1.parse().ok()?, runs.get(1)?.1.parse().ok()?));
        clock_at = 2;
    } else {
        clock_at = 0;
    }
    let hour: u8 = runs.get(clock_at)?.1.parse().ok()?;
    let minute: u8 = runs.get(clock_at + 1)?.1.parse().ok()?;
    let (sec_at, sec) = *runs.get(clock_at + 2)?;
    let second: u8 = sec.parse().ok()?;
    // Fraction runs follow the seconds, each joined by `.`, `,` or `:`; a run after a space is
    // glog's pid column, and a zone is not a fraction.
    let mut nanos: u64 = 0;
    let mut scale: u64 = 1_000_000_000;
    let mut at = sec_at + sec.len();
    for &(start, digits) in runs.iter().skip(clock_at + 3) {
        if start != at + 1 || !matches!(b.get(at), Some(b'.' | b',' | b':')) {
            break;
        }
        // `.014.300`: milliseconds then microseconds, each group a fixed number of digits.
        for c in digits.bytes() {
            scale /= 10;
            nanos += u64::from(c - b'0') * scale;
        }
        at = start + digits.len();
    }
    let valid = hour < 24
        && minute < 60
        && second < 61
        && date.is_none_or(|(m, d)| (1..=12).contains(&m) && (1..=31).contains(&d));
    valid.then_some(LogTime {
        year,
        date,
        hour,
        minute,
        second,
        nanos: u32::try_from(nanos).unwrap_or(0),
    })
}

/// The runs of ASCII digits in `s`, with their byte offsets.
fn digit_runs(s: &str) -> Vec<(usize, &str)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            out.push((start, &s[start..i]));
        } else {
            i += 1;
        }
    }
    out
}

/// The rank a line names: `[rankN]:`, a vLLM process label (its `rank=` field, else its name,
/// `Worker_TP3`), or `RankID:N` in its text.
///
/// ```
/// use npgx_parsers::line_origin::line_rank;
/// assert_eq!(line_rank("[rank6]: RuntimeError: x").as_deref(), Some("6"));
/// assert_eq!(line_rank("(Worker_TP3 pid=2) ERROR 07-23 10:35:57 [a.py:1] x").as_deref(), Some("Worker_TP3"));
/// assert_eq!(line_rank("(VllmWorker rank=3 pid=1564) x").as_deref(), Some("3"));
/// assert_eq!(line_rank("[ERROR] 2025-11-29-10:54:13 (PID:1, Device:3, RankID:5) ERR00100").as_deref(), Some("5"));
/// assert_eq!(line_rank("[ERROR] (PID:1, Device:3, RankID:-1) ERR00100"), None);
/// ```
pub fn line_rank(line: &str) -> Option<String> {
    let s = strip_prefixes(line);
    if let Some(r) = s.rank() {
        return Some(r.to_string());
    }
    // The innermost vLLM label: its rank field, else the process name.
    let label = s.prefixes.iter().rev().find_map(|p| match p {
        LinePrefix::VllmProcess { label } => Some(*label),
        _ => None,
    });
    if let Some(label) = label {
        let head = label.rsplit_once(" pid=").map_or(label, |(h, _)| h);
        if let Some((_, r)) = head.split_once(" rank=") {
            if r.bytes().all(|c| c.is_ascii_digit()) && !r.is_empty() {
                return Some(r.to_string());
            }
        }
        let name = head.split_once(" rank=").map_or(head, |(n, _)| n);
        // A process that is not a worker (the engine core, the API server) names no rank.
        let lower = name.to_ascii_lowercase();
        if lower.contains("worker") && name.bytes().any(|c| c.is_ascii_digit()) {
            return Some(name.to_string());
        }
    }
    RANK_ID.captures(line).map(|c| c[1].to_string())
}

/// The rank a file's path names (components checked from the file name up): `rank3.log`,
/// `worker_3/`, `log_tp3.txt`, or torchelastic's numeric per-rank directory.
///
/// ```
/// use npgx_parsers::line_origin::path_rank;
/// assert_eq!(path_rank(&["node0", "rank3.log"]).as_deref(), Some("3"));
/// assert_eq!(path_rank(&["attempt_0", "3", "stderr.log"]).as_deref(), Some("3"));
/// assert_eq!(path_rank(&["logs", "run.log"]), None);
/// ```
pub fn path_rank(components: &[&str]) -> Option<String> {
    for (i, c) in components.iter().enumerate().rev() {
        if let Some(m) = PATH_RANK.captures(c) {
            return Some(m[1].trim_start_matches('0').to_string()).map(|r| {
                if r.is_empty() {
                    "0".to_string()
                } else {
                    r
                }
            });
        }
        let is_dir = i + 1 < components.len();
        if is_dir && !c.is_empty() && c.len() <= 6 && c.bytes().all(|b| b.is_ascii_digit()) {
            return Some(c.to_string());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(line: &str) -> LogTime {
        line_time(line).unwrap_or_else(|| panic!("no stamp in {line:?}"))
    }

    #[test]
    fn every_logger_stamp() {
        let plog = t("[ERROR] RUNTIME(1,p):2021-09-14-09:26:01.014.300 [a.cc:1]1 x");
        assert_eq!(plog.to_string(), "2021-09-14 09:26:01.0143");
        assert_eq!(plog.nanos, 14_300_000);
        let npu = t("[ERROR] 2025-11-29-10:54:13 (PID:91804, Device:3, RankID:-1) ERR00100");
        assert_eq!(
            (npu.year, npu.date, npu.nanos),
            (Some(2025), Some((11, 29)), 0)
        );
        let py = t("[2024-04-30 17:13:04,191] [0/0] x");
        assert_eq!((py.second, py.nanos), (4, 191_000_000));
        let iso = t("2025-07-23T10:35:42.5+08:00 x");
        assert_eq!((iso.hour, iso.nanos), (10, 500_000_000));
        let glog = t("E1129 10:54:13.679153 12345 a.py:1] x");
        assert_eq!((glog.date, glog.nanos), (Some((11, 29)), 679_153_000));
        let vllm = t("(Worker_TP3 pid=2) ERROR 07-23 10:35:57 [core.py:586] x");
        assert_eq!(
            (vllm.year, vllm.date, vllm.minute),
            (None, Some((7, 23)), 35)
        );
        assert_eq!(vllm.precision(), Precision::MonthDay);
        let bare = t("10:35:57 INFO x");
        assert_eq!(bare.precision(), Precision::TimeOfDay);
        assert_eq!(line_time("RuntimeError: no time here"), None);
        assert_eq!(line_time("25:61:99 x"), None);
        assert_eq!(line_time("Timeout(ms)=3600000"), None);
    }

    #[test]
    fn stamps_compare_at_their_common_precision() {
        let a = t("2025-07-23-10:35:42.381.401 x");
        let b = t("ERROR 07-23 10:35:57 [core.py:586] x");
        let p = a.precision().min(b.precision());
        assert_eq!(p, Precision::MonthDay);
        assert!(a.key(p) < b.key(p));
        assert!((b.seconds_since(&a, p) - 14.618599).abs() < 1e-6);
        let c = t("00:00:01 x");
        assert!(c.key(Precision::TimeOfDay) < a.key(Precision::TimeOfDay));
    }

    #[test]
    fn ranks_from_lines_and_paths() {
        assert_eq!(
            line_rank("(EngineCore_DP0 pid=1) (RayWorkerWrapper pid=2) [rank1]:[E1129 x] y")
                .as_deref(),
            Some("1")
        );
        assert_eq!(line_rank("(EngineCore_DP0 pid=118283) x"), None);
        assert_eq!(line_rank("plain text"), None);
        assert_eq!(
            path_rank(&["worker_12", "stderr.log"]).as_deref(),
            Some("12")
        );
        assert_eq!(path_rank(&["log_tp03.txt"]).as_deref(), Some("3"));
        assert_eq!(path_rank(&["rank0.txt"]).as_deref(), Some("0"));
        assert_eq!(path_rank(&["strange.log"]), None);
        assert_eq!(path_rank(&["20251129.log"]), None);
    }

    #[test]
    fn garbage_never_panics() {
        let junk: String = (0..=0x2FFu32)
            .filter_map(char::from_u32)
            .cycle()
            .take(5_000)
            .collect();
        let _ = line_time(&junk);
        let _ = line_rank(&junk);
        let _ = path_rank(&[&junk, ""]);
        assert_eq!(line_time("é".repeat(200).as_str()), None);
        let _ = line_time("9999-99-99-99:99:99.999 x");
        let _ = line_time("E9999 23:59:59.9999999999999999999999 x");
    }
}
