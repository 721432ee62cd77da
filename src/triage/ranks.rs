//! `npgx triage classify DIR`: the logs of a job's ranks (workers) side by side — which rank
//! failed first, and which ranks the failure cascaded to.
//!
//! A distributed job fails on one rank; the others then wait in a collective until HCCL gives up
//! and print timeouts, watchdog terminations and lost peers, each in its own log. Read one log
//! at a time and every rank looks like the culprit. Here each file under DIR is classified as
//! `triage classify FILE` does (the shared causal engine names its first causal error), then the
//! files' errors are ordered with the one cross-source ordering `npgx plog` uses
//! ([`npgx_parsers::causal::across`]): tier, collective-communication errors last, cause rank,
//! then the earlier time stamp, then the lower rank. The least is the origin; every other rank
//! with an error is one it cascaded to, with its delay after the origin when both have a time.
//!
//! A file's rank is read from its path (`rank3.log`, `worker_3/`, torchelastic's `…/attempt_0/3/`),
//! else from its error line's prefix (`[rank3]:`, `(Worker_TP3 pid=…)`, `RankID:3`), else from
//! the first such prefix in the log before the error; otherwise the file stands for itself.
//! A file's time is its error line's own stamp (glog, c10, vLLM, plog, CANN, torch_npu, Python
//! logging: `npgx_parsers::line_origin`), else the last stamp printed before the error line (the
//! error happened no earlier). Stamps are compared at the precision all of them share (a log
//! without years, or without dates, lowers it for all, with a note). With no stamp anywhere the
//! ordering is by strength alone, then the lowest rank — a note says so.
//!
//! Memory: each file is streamed twice at most (the classification, then — only when the error
//! line has no stamp or no rank — up to the error line), nothing is kept but the results.

use std::path::{Path, PathBuf};

use npgx_parsers::causal::across::{self, Contender};
use npgx_parsers::causal::PhaseEvidence;
use npgx_parsers::line_origin::{line_rank, line_time, path_rank, LogTime, Precision};

use super::classify::{classify_file, Classification, FileError};
pub use super::rank_view::{RankFrom, RankLog, RankView};
use crate::plog::discover::files_under;
use crate::plog::reader::for_each_line;

/// Classifies every file under `dir` and names the first rank: the files' classifications (in
/// rank order), the files that could not be read, and the rank view.
pub fn classify_dir(dir: &Path) -> (Vec<Classification>, Vec<FileError>, RankView) {
    let mut warnings = Vec::new();
    let files = files_under(dir, &mut warnings);
    let mut errors: Vec<FileError> = warnings
        .into_iter()
        .map(|w| FileError {
            file: w.file,
            message: w.message,
        })
        .collect();
    let mut read: Vec<(Classification, RankLog)> = Vec::new();
    for f in files {
        let c = match classify_file(&f) {
            Ok(c) => c,
            Err(e) => {
                errors.push(FileError {
                    file: f.clone(),
                    message: format!("{e:#}"),
                });
                continue;
            }
        };
        match rank_log(dir, &c) {
            Ok(r) => read.push((c, r)),
            Err(e) => errors.push(FileError {
                file: f.clone(),
                message: format!("{e:#}"),
            }),
        }
    }
    read.sort_by_key(|(_, a)| rank_order(a));
    let (items, logs): (Vec<Classification>, Vec<RankLog>) = read.into_iter().unzip();
    let view = order(dir, &items, logs);
    (items, errors, view)
}

/// Numeric ranks in number order, then named ones, then files without a rank; then the path.
fn rank_order(r: &RankLog) -> (u8, u64, String, PathBuf) {
    match &r.rank {
        Some(n) if n.parse::<u64>().is_ok() => {
            (0, n.parse().unwrap_or(0), String::new(), r.file.clone())
        }
        Some(n) => (1, 0, n.clone(), r.file.clone()),
        None => (2, 0, String::new(), r.file.clone()),
    }
}

/// A file's rank and the time of its first causal error.
fn rank_log(dir: &Path, c: &Classification) -> anyhow::Result<RankLog> {
    let rel = c.file.strip_prefix(dir).unwrap_or(&c.file);
    let components: Vec<String> = rel
        .components()
        .map(|p| p.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = components.iter().map(String::as_str).collect();
    let mut log = RankLog {
        rank: path_rank(&parts),
        rank_from: RankFrom::Path,
        file: c.file.clone(),
        line: None,
        text: None,
        route: c.route,
        collective: false,
        time: None,
        time_line: None,
        after_origin_s: None,
    };
    let Some(e) = &c.first_causal_error else {
        if log.rank.is_none() {
            log.rank_from = RankFrom::None;
        }
        return Ok(log);
    };
    log.line = Some(e.line);
    log.text = Some(e.message.clone());
    log.collective = e.phase.as_ref().is_some_and(PhaseEvidence::waits_on_peers);
    if log.rank.is_none() {
        log.rank = line_rank(&e.text);
        log.rank_from = RankFrom::ErrorLine;
    }
    let own = line_time(&e.text)
        .or_else(|| e.time.map(LogTime::from))
        .or_else(|| e.scope.iter().find_map(|(_, l)| line_time(l)));
    if let Some(t) = own {
        log.time = Some(t);
        log.time_line = Some(e.line);
    }
    if log.rank.is_none() || log.time.is_none() {
        let (time, rank) = before(&c.file, e.line)?;
        if log.time.is_none() {
            if let Some((no, t)) = time {
                log.time = Some(t);
                log.time_line = Some(no);
            }
        }
        if log.rank.is_none() {
            log.rank = rank;
            log.rank_from = if log.rank.is_some() {
                RankFrom::Log
            } else {
                RankFrom::None
            };
        }
    }
    Ok(log)
}

/// What a log says before its error: the last time stamp (its line and time) and the first rank
/// a line names.
type Before = (Option<(u64, LogTime)>, Option<String>);

/// Streams `file` up to line `until` (see [`Before`]).
fn before(file: &Path, until: u64) -> anyhow::Result<Before> {
    let mut time = None;
    let mut rank = None;
    for_each_line(file, |no, line| {
        if no > until {
            return;
        }
        let text = String::from_utf8_lossy(&line[..line.len().min(1024)]);
        if let Some(t) = line_time(&text) {
            time = Some((no, t));
        }
        if rank.is_none() {
            rank = line_rank(&text);
        }
    })
    .map_err(|e| anyhow::Error::new(e).context(crate::error::CannotRead::new(file)))?;
    Ok((time, rank))
}

/// Orders the logs' errors (`logs[i]` is `items[i]`'s) and builds the view.
fn order(dir: &Path, items: &[Classification], logs: Vec<RankLog>) -> RankView {
    let mut notes = Vec::new();
    let precision = logs
        .iter()
        .filter(|l| l.line.is_some())
        .filter_map(|l| l.time.map(|t| t.precision()))
        .min();
    let contenders: Vec<Contender<(u16, u8, u8, u64)>> = items
        .iter()
        .zip(&logs)
        .enumerate()
        .filter_map(|(i, (c, l))| {
            let e = c.first_causal_error.as_ref()?;
            Some(Contender {
                tier: e.tier,
                collective: l.collective,
                rank: e.rank,
                time: l.time.zip(precision).map(|(t, p)| t.key(p)),
                source: i,
                line: e.line,
            })
        })
        .collect();
    let first = across::first(&contenders).map(|k| contenders[k].source);
    let mut origin = None;
    let mut cascaded = Vec::new();
    let mut clean = Vec::new();
    for (i, l) in logs.into_iter().enumerate() {
        if Some(i) == first {
            origin = Some(l);
        } else if l.line.is_some() {
            cascaded.push(l);
        } else {
            clean.push(l);
        }
    }
    let with_errors = cascaded.len() + usize::from(origin.is_some());
    match precision {
        None if with_errors > 1 => notes.push(
            "no log has a time stamp: the first rank is the one with the strongest error (tier, collective-communication errors last, cause rank), then the lowest rank — not a time order".into(),
        ),
        Some(Precision::TimeOfDay) => notes.push(
            "some logs' stamps have no date: times compared as times of day (wrong across midnight)".into(),
        ),
        Some(Precision::MonthDay) => notes.push(
            "some logs' stamps have no year: times compared by month, day and time".into(),
        ),
        _ => {}
    }
    if let Some(o) = origin.as_ref().filter(|o| o.collective) {
        // Collective errors rank last, so every error read is one.
        let read = with_errors + clean.len();
        notes.push(format!(
            "every error read is collective communication (what a rank prints when another stops \
             answering): the rank that failed first may not be among the {read} log(s) read; {} is \
             only the first of these",
            o.label()
        ));
    }
    if let Some(o) = &origin {
        let undated: Vec<String> = cascaded
            .iter()
            .filter(|l| l.time.is_none())
            .map(RankLog::label)
            .collect();
        if precision.is_some() && (o.time.is_none() || !undated.is_empty()) {
            let mut names = undated;
            if o.time.is_none() {
                names.insert(0, o.label());
            }
            notes.push(format!(
                "no time stamp in the log of {} up to its error: compared by the error's strength only",
                names.join(", ")
            ));
        }
        if let (Some(ot), Some(p)) = (o.time, precision) {
            for l in &mut cascaded {
                if let Some(t) = l.time {
                    l.after_origin_s = Some(t.seconds_since(&ot, p));
                }
            }
            let earlier: Vec<String> = cascaded
                .iter()
                .filter(|l| l.after_origin_s.is_some_and(|s| s < 0.0))
                .map(|l| {
                    let why = if l.collective && !o.collective {
                        "a collective-communication error, what a rank prints when another stops answering"
                    } else {
                        "a weaker error"
                    };
                    format!("{} ({why})", l.label())
                })
                .collect();
            if !earlier.is_empty() {
                notes.push(format!(
                    "stamped before {}'s error but not first: {}",
                    o.label(),
                    earlier.join(", ")
                ));
            }
        }
    }
    cascaded.sort_by(|a, b| match (a.after_origin_s, b.after_origin_s) {
        (Some(x), Some(y)) => x.total_cmp(&y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    RankView {
        dir: dir.to_path_buf(),
        origin,
        cascaded_to: cascaded,
        clean,
        precision,
        notes,
    }
}
