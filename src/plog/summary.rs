//! `npgx plog`: per-process summaries and filtered record lists, streamed.
//!
//! A file is read in chunks on all cores ([`map_chunks`]): each chunk's records are counted per
//! process on a worker thread, and the results are folded together in file order, so they do not
//! depend on the chunk size. The hot loop parses only the header of each physical line; the
//! content prefix, codes and causal rank are computed for ERROR records only. What needs every
//! line in order — the record a continuation line belongs to, CANN report assembly, the causal
//! engine — runs on the folding thread over the lines a worker kept: all but the quiet records
//! that follow a quiet record (most of a plog, and lines the causal engine drops anyway). With
//! `--grep`, a record whose header line does not match is held (its bytes) until a continuation
//! line matches or the next header arrives.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::{Path, PathBuf};

use memchr::memmem;
use npgx_parsers::cann_error::torch_npu::{parse_torch_npu_line, TorchNpuError};
use npgx_parsers::cann_error::{codes_in, CannErrorReport, ReportAssembler};
use npgx_parsers::causal::across::{self, Contender};
use npgx_parsers::causal::{
    is_quiet_record, rank_plog_error, remedies, CausalError, CausalScanner, CauseRank, Remedy,
    Shape, Tier,
};
use npgx_parsers::knowledge::Phase;
use npgx_parsers::kv::KvBag;
use npgx_parsers::line_prefix::strip_prefixes;
use npgx_parsers::plog::content::parse_content;
use npgx_parsers::plog::path::LogFileKind;
use npgx_parsers::plog::record::{lossy, RecordAssembler, TRUNCATION_LENGTH};
use npgx_parsers::plog::{
    parse_header, Cached, HeaderCache, Level, PlogHeader, PlogRecord, PlogTime, CACHED_PREFIXES,
};
use serde::{Deserialize, Serialize};

use super::reader::{for_each_line, map_chunks, ChunkLines, ReadStats, CHUNK, MAX_LINE};
use super::{Filters, LogInput, Warning};

/// Most warnings kept per file; the rest are counted in one last warning.
const WARNINGS_PER_FILE: usize = 20;

/// A record cited by a summary (first ERROR, first causal error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RecordRef {
    pub file: PathBuf,
    pub line: u64,
    pub time: PlogTime,
    pub level: Level,
    pub module: String,
    pub pid: i64,
    /// The message after the content prefix.
    pub text: String,
    /// Causal rank (first causal error only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<CauseRank>,
}

/// The first causal error over all inputs, by the shared causal engine
/// ([`npgx_parsers::causal`]): the same line `npgx triage classify` names for each file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CausalRef {
    pub file: PathBuf,
    pub line: u64,
    pub tier: Tier,
    pub rank: CauseRank,
    pub shape: Shape,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<PlogTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i64>,
    /// The error itself (prefixes peeled, CANN location tails removed).
    pub text: String,
    /// The line as it appears in the file.
    pub quote: String,
    /// The recognising rule and the lines it read.
    pub evidence: npgx_parsers::causal::Evidence,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_line: Option<u64>,
    /// What to check or change, each with its source (docs/triage.md, "What to do").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy: Vec<Remedy>,
}

impl CausalRef {
    fn new(file: &std::path::Path, e: CausalError) -> CausalRef {
        let remedy = remedies(&e, file.to_str());
        CausalRef {
            remedy,
            file: file.to_path_buf(),
            line: e.line,
            tier: e.tier,
            rank: e.rank,
            shape: e.shape,
            time: e.time,
            pid: e.pid,
            text: e.message,
            quote: e.text,
            evidence: e.evidence,
            root_line: e.root_line,
        }
    }
}

/// A CANN error report found in an input, with its file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileReport {
    pub file: PathBuf,
    #[serde(flatten)]
    pub report: CannErrorReport,
}

/// A torch_npu `ERRxxxxx` line found in an input, with its file.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileTorchNpuError {
    pub file: PathBuf,
    #[serde(flatten)]
    pub error: TorchNpuError,
}

/// Everything counted for one process (pid).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ProcessSummary {
    pub pid: i64,
    pub pname: String,
    pub files: Vec<PathBuf>,
    /// Device ids from `device-«id»` folders and `device_id=` in ERROR records.
    pub device_ids: Vec<u64>,
    pub records: u64,
    pub continuation_lines: u64,
    pub truncated_records: u64,
    pub levels: BTreeMap<String, u64>,
    pub modules: BTreeMap<String, u64>,
    /// Codes mentioned in ERROR records, with counts (`EZ9999`, `ACL 507035`, `retCode 0x31`).
    pub error_codes: BTreeMap<String, u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_time: Option<PlogTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_time: Option<PlogTime>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<RecordRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_causal: Option<RecordRef>,
    /// ERROR and WARNING records per second of plog time (seconds without either are left
    /// out), in time order. Added within version 2: absent from older documents.
    #[serde(default)]
    pub timeline: Vec<TimelinePoint>,
}

/// ERROR and WARNING records of one process in one second (`time` has zero fractions).
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TimelinePoint {
    pub time: PlogTime,
    pub error: u64,
    pub warning: u64,
}

/// One file read.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileSummary {
    pub path: PathBuf,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<LogFileKind>,
    pub lines: u64,
    /// Records that passed the filters.
    pub records: u64,
    /// Whether the file could be read.
    #[serde(skip)]
    pub read: bool,
}

/// Name of the document of a [`PlogSummary`] (schema `npgx.plog`).
pub const SCHEMA_NAME: &str = "plog";
/// Version of the `npgx.plog` document of a [`PlogSummary`] (2: the envelope of `docs/json.md`,
/// and `first_causal` from the shared causal engine with tier, shape and evidence).
pub const SCHEMA_VERSION: u32 = 2;

/// The result of `npgx plog`.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlogSummary {
    pub files: Vec<FileSummary>,
    /// Records that passed the filters, over all files.
    pub records: u64,
    pub processes: Vec<ProcessSummary>,
    /// Earliest ERROR record by time over all processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<RecordRef>,
    /// The first causal error over all files (the causal engine's ordering per file; between
    /// files `npgx_parsers::causal::across`: the lower tier, collective-communication errors
    /// last, the lower rank, then the earlier time when both have one, then the earlier file).
    /// Computed over whole files: the record filters do not apply to it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_causal: Option<CausalRef>,
    /// CANN error reports (`EZ9999: Inner Error!` …) found in the inputs.
    pub error_reports: Vec<FileReport>,
    /// torch_npu `ERRxxxxx` lines found in the inputs.
    pub torch_npu_errors: Vec<FileTorchNpuError>,
    pub warnings: Vec<Warning>,
}

struct Acc {
    pid: i64,
    pname: String,
    files: Vec<usize>,
    devices: BTreeSet<u64>,
    records: u64,
    cont: u64,
    truncated: u64,
    levels: Vec<(Level, u64)>,
    /// Few distinct modules per process: a vector beats hashing every record's module name.
    modules: Vec<(String, u64)>,
    codes: HashMap<String, u64>,
    first_time: Option<PlogTime>,
    last_time: Option<PlogTime>,
    first_error: Option<(PlogTime, usize, u64, RecordRef)>,
    first_causal: Option<(CauseRank, PlogTime, usize, u64, RecordRef)>,
    /// Per second: (errors, warnings).
    timeline: BTreeMap<PlogTime, (u64, u64)>,
}

impl Acc {
    fn new(pid: i64, pname: String) -> Acc {
        Acc {
            pid,
            pname,
            files: Vec::new(),
            devices: BTreeSet::new(),
            records: 0,
            cont: 0,
            truncated: 0,
            levels: Vec::new(),
            modules: Vec::new(),
            codes: HashMap::new(),
            first_time: None,
            last_time: None,
            first_error: None,
            first_causal: None,
            timeline: BTreeMap::new(),
        }
    }

    /// Adds the counts of `o` (the same process, read later in the scan) whose line numbers
    /// start after `offset` lines.
    fn absorb(&mut self, o: Acc, offset: u64) {
        for f in o.files {
            if self.files.last() != Some(&f) {
                self.files.push(f);
            }
        }
        self.devices.extend(o.devices);
        self.records += o.records;
        self.cont += o.cont;
        self.truncated += o.truncated;
        for (level, n) in o.levels {
            match self.levels.iter_mut().find(|(l, _)| *l == level) {
                Some((_, m)) => *m += n,
                None => self.levels.push((level, n)),
            }
        }
        for (module, n) in o.modules {
            match self.modules.iter_mut().find(|(m, _)| *m == module) {
                Some((_, m)) => *m += n,
                None => self.modules.push((module, n)),
            }
        }
        for (code, n) in o.codes {
            *self.codes.entry(code).or_insert(0) += n;
        }
        self.first_time = self.first_time.into_iter().chain(o.first_time).min();
        self.last_time = self.last_time.into_iter().chain(o.last_time).max();
        if let Some((t, f, l, mut r)) = o.first_error {
            let l = l + offset;
            r.line = l;
            if self
                .first_error
                .as_ref()
                .is_none_or(|(t0, f0, l0, _)| (t, f, l) < (*t0, *f0, *l0))
            {
                self.first_error = Some((t, f, l, r));
            }
        }
        if let Some((k, t, f, l, mut r)) = o.first_causal {
            let l = l + offset;
            r.line = l;
            if self
                .first_causal
                .as_ref()
                .is_none_or(|(k0, t0, f0, l0, _)| (k, t, f, l) < (*k0, *t0, *f0, *l0))
            {
                self.first_causal = Some((k, t, f, l, r));
            }
        }
        for (second, (e, w)) in o.timeline {
            let (e0, w0) = self.timeline.entry(second).or_default();
            *e0 += e;
            *w0 += w;
        }
    }
}

/// Counts per process: one for the whole scan, and one per chunk of a file on the worker threads
/// (folded into the first in file order, [`Processes::absorb`]).
#[derive(Default)]
struct Processes {
    accs: Vec<Acc>,
    by_pid: HashMap<i64, usize>,
    last: Option<(i64, usize)>,
    /// Per entry of the chunk's [`HeaderCache`]: where records with that entry's prefix are
    /// counted, once one was.
    repeat: [Option<Slots>; CACHED_PREFIXES],
}

/// Where a record is counted: its process, and the slots of its level and module there.
#[derive(Clone, Copy)]
struct Slots {
    process: usize,
    level: usize,
    module: usize,
}

/// How a header was read: at the start of its line (with where the [`HeaderCache`] kept its
/// prefix), or behind console prefixes, or parsed again later (a `--grep` match on a
/// continuation line).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Prefix {
    Direct(Cached),
    Peeled,
}

impl Processes {
    fn index(&mut self, pid: i64, pname: impl FnOnce() -> String) -> usize {
        match self.last {
            Some((p, i)) if p == pid => i,
            _ => {
                let i = match self.by_pid.get(&pid) {
                    Some(&i) => i,
                    None => {
                        self.accs.push(Acc::new(pid, pname()));
                        self.by_pid.insert(pid, self.accs.len() - 1);
                        self.accs.len() - 1
                    }
                };
                self.last = Some((pid, i));
                i
            }
        }
    }

    /// A header was read: a prefix that replaced a cache entry voids that entry's slots.
    fn note(&mut self, prefix: Prefix) {
        if let Prefix::Direct(Cached::New(k)) = prefix {
            self.repeat[k] = None;
        }
    }

    /// Counts one record that passed the filters; returns its process's index.
    #[allow(clippy::too_many_arguments)]
    fn count(
        &mut self,
        h: &PlogHeader<'_>,
        prefix: Prefix,
        rest: &[u8],
        line_len: usize,
        file: usize,
        path: &Path,
        line: u64,
        device: Option<u32>,
    ) -> usize {
        let entry = match prefix {
            Prefix::Direct(Cached::Hit(k) | Cached::New(k)) => Some(k),
            Prefix::Direct(Cached::Uncached) | Prefix::Peeled => None,
        };
        let reused = entry.and_then(|k| self.repeat[k]);
        let slots = match reused {
            Some(slots) => slots,
            None => {
                let process = self.index(h.pid, || h.pname().into_owned());
                let acc = &mut self.accs[process];
                if acc.files.last() != Some(&file) {
                    acc.files.push(file);
                }
                if let Some(d) = device {
                    acc.devices.insert(u64::from(d));
                }
                let level = match acc.levels.iter().position(|(l, _)| *l == h.level) {
                    Some(k) => k,
                    None => {
                        acc.levels.push((h.level, 0));
                        acc.levels.len() - 1
                    }
                };
                let module = match acc.modules.iter().position(|(m, _)| m == h.module) {
                    Some(k) => k,
                    None => {
                        acc.modules.push((h.module.to_owned(), 0));
                        acc.modules.len() - 1
                    }
                };
                Slots {
                    process,
                    level,
                    module,
                }
            }
        };
        if let Some(k) = entry {
            self.repeat[k] = Some(slots);
        }
        let idx = slots.process;
        let acc = &mut self.accs[idx];
        acc.records += 1;
        if line_len >= TRUNCATION_LENGTH {
            acc.truncated += 1;
        }
        acc.levels[slots.level].1 += 1;
        acc.modules[slots.module].1 += 1;
        if acc.first_time.is_none_or(|t| h.time < t) {
            acc.first_time = Some(h.time);
        }
        if acc.last_time.is_none_or(|t| h.time > t) {
            acc.last_time = Some(h.time);
        }
        if matches!(h.level, Level::Error | Level::Warning) {
            let second = PlogTime {
                milli: 0,
                micro: 0,
                ..h.time
            };
            let (e, w) = acc.timeline.entry(second).or_default();
            if h.level == Level::Error {
                *e += 1;
            } else {
                *w += 1;
            }
        }
        if h.level == Level::Error {
            let text = lossy(rest);
            let content = parse_content(h.module, &text);
            let msg = content.message;
            for c in codes_in(msg) {
                *acc.codes.entry(c).or_insert(0) += 1;
            }
            if let Some(d) = KvBag::new(msg).u64("device_id") {
                acc.devices.insert(d);
            }
            let rr = |rank| RecordRef {
                file: path.to_path_buf(),
                line,
                time: h.time,
                level: h.level,
                module: h.module.to_owned(),
                pid: h.pid,
                text: msg.to_owned(),
                rank,
            };
            if acc
                .first_error
                .as_ref()
                .is_none_or(|(t, f, l, _)| (h.time, file, line) < (*t, *f, *l))
            {
                acc.first_error = Some((h.time, file, line, rr(None)));
            }
            let rank = rank_plog_error(h.module, msg);
            if acc
                .first_causal
                .as_ref()
                .is_none_or(|(r, t, f, l, _)| (rank, h.time, file, line) < (*r, *t, *f, *l))
            {
                acc.first_causal = Some((rank, h.time, file, line, rr(Some(rank))));
            }
        }
        idx
    }

    /// Adds the counts of a later chunk whose line numbers start after `offset` lines; returns
    /// where each of its processes went.
    fn absorb(&mut self, other: Processes, offset: u64) -> Vec<usize> {
        other
            .accs
            .into_iter()
            .map(|a| {
                let i = self.index(a.pid, || a.pname.clone());
                self.accs[i].absorb(a, offset);
                i
            })
            .collect()
    }
}

#[derive(Default)]
struct Summarizer {
    reports: Vec<(usize, CannErrorReport)>,
    torch_npu: Vec<FileTorchNpuError>,
    /// Per file read: its index, whether its error reads as collective communication, the error.
    causal: Vec<(usize, bool, CausalRef)>,
    procs: Processes,
    files: Vec<FileSummary>,
}

/// The record the lines being read belong to.
enum State<P> {
    None,
    Skipped,
    Counted(usize),
    /// A record that did not match `--grep` (yet): its line number and bytes.
    Pending(u64, P),
}

impl Summarizer {
    fn finish(self, warnings: Vec<Warning>) -> PlogSummary {
        let files = self.files;
        let mut processes: Vec<ProcessSummary> = self
            .procs
            .accs
            .into_iter()
            .map(|a| ProcessSummary {
                pid: a.pid,
                pname: a.pname,
                files: a.files.iter().map(|&f| files[f].path.clone()).collect(),
                device_ids: a.devices.into_iter().collect(),
                records: a.records,
                continuation_lines: a.cont,
                truncated_records: a.truncated,
                levels: a
                    .levels
                    .iter()
                    .map(|(l, n)| (l.name().into_owned(), *n))
                    .collect(),
                modules: a.modules.into_iter().collect(),
                error_codes: a.codes.into_iter().collect(),
                first_time: a.first_time,
                last_time: a.last_time,
                first_error: a.first_error.map(|x| x.3),
                first_causal: a.first_causal.map(|x| x.4),
                timeline: a
                    .timeline
                    .into_iter()
                    .map(|(time, (error, warning))| TimelinePoint {
                        time,
                        error,
                        warning,
                    })
                    .collect(),
            })
            .collect();
        processes.sort_by_key(|p| (p.first_time, p.pid));
        let first_error = processes
            .iter()
            .filter_map(|p| p.first_error.clone())
            .min_by_key(|r| (r.time, r.file.clone(), r.line));
        let contenders: Vec<Contender<PlogTime>> = self
            .causal
            .iter()
            .map(|(file, collective, c)| Contender {
                tier: c.tier,
                collective: *collective,
                rank: c.rank,
                time: c.time,
                source: *file,
                line: c.line,
            })
            .collect();
        let first_causal =
            across::first(&contenders).and_then(|i| self.causal.into_iter().nth(i).map(|x| x.2));
        let error_reports = self
            .reports
            .into_iter()
            .map(|(f, report)| FileReport {
                file: files[f].path.clone(),
                report,
            })
            .collect();
        PlogSummary {
            records: files.iter().map(|f| f.records).sum(),
            files,
            processes,
            first_error,
            first_causal,
            error_reports,
            torch_npu_errors: self.torch_npu,
            warnings,
        }
    }
}

/// A header on this line, directly or behind console prefixes (`[rank1]:`, `(Worker pid=…)`);
/// how it was read ([`Prefix`]; `Peeled` when there is none). `cache` keeps the recent direct
/// headers' prefixes (the lines of a chunk are read through one).
fn header_or_peeled<R>(
    cache: &mut HeaderCache,
    line: &[u8],
    f: impl FnOnce(Option<(PlogHeader<'_>, &[u8])>, Prefix) -> R,
) -> R {
    if let Some((h, rest, cached)) = cache.parse(line) {
        return f(Some((h, rest)), Prefix::Direct(cached));
    }
    // Console and pasted output: the causal engine's normalisation (Markdown quotes, launcher and
    // logger prefixes), then the same prefixes once more behind indentation.
    let indented_header =
        line.first() == Some(&b' ') && line.iter().find(|b| **b != b' ') == Some(&b'[');
    let pasted = indented_header
        || [&b"[rank"[..], b"(", b">", b"ERROR ", b"WARNING ", b"INFO "]
            .iter()
            .any(|p| line.starts_with(p));
    if pasted {
        let text = lossy(line);
        let n = npgx_parsers::causal::normalise(&text);
        let p = strip_prefixes(n.rest.trim_start());
        if p.rest.len() != text.len() {
            return f(parse_header(p.rest.as_bytes()), Prefix::Peeled);
        }
    }
    f(None, Prefix::Peeled)
}

/// A torch_npu `ERRxxxxx` line, behind console prefixes.
fn torch_npu_line(no: u64, line: &[u8]) -> Option<TorchNpuError> {
    let text = lossy(line);
    let mut t = parse_torch_npu_line(strip_prefixes(&text).rest)?;
    t.line = no;
    Some(t)
}

fn looks_like_header(line: &[u8]) -> bool {
    [
        &b"[ERROR] "[..],
        b"[INFO] ",
        b"[WARNING] ",
        b"[DEBUG] ",
        b"[EVENT] ",
        b"[TRACE] ",
    ]
    .iter()
    .any(|p| line.starts_with(p))
}

const WARN_UNPARSED: &str =
    "starts like a plog header but does not parse; kept as a continuation line";
const WARN_BEFORE_FIRST: &str = "text before the first plog header";

struct FileWarnings<'a> {
    out: &'a mut Vec<Warning>,
    path: PathBuf,
    count: usize,
}

impl FileWarnings<'_> {
    fn push(&mut self, line: u64, message: &str) {
        self.count += 1;
        if self.count <= WARNINGS_PER_FILE {
            self.out.push(Warning {
                file: self.path.clone(),
                line: Some(line),
                message: message.to_owned(),
            });
        }
    }

    fn close(self) {
        if self.count > WARNINGS_PER_FILE {
            self.out.push(Warning {
                file: self.path,
                line: None,
                message: format!("{} more warnings not shown", self.count - WARNINGS_PER_FILE),
            });
        }
    }
}

/// Line warnings of one chunk: the first [`WARNINGS_PER_FILE`] of each kind and the counts (a
/// file shows its first ones only). "Before the first header" applies only to the lines before
/// the chunk's first record, and only if no record came before the chunk.
#[derive(Default)]
struct ChunkWarnings {
    unparsed: Vec<u64>,
    unparsed_count: usize,
    before_first: Vec<u64>,
    before_first_count: usize,
}

impl ChunkWarnings {
    fn note(list: &mut Vec<u64>, count: &mut usize, line: u64) {
        *count += 1;
        if list.len() < WARNINGS_PER_FILE {
            list.push(line);
        }
    }

    /// Passes the warnings on to the file's, lines shifted by `offset`.
    fn apply(self, fw: &mut FileWarnings<'_>, offset: u64, before_first: bool) {
        let (early, early_count) = if before_first {
            (self.before_first, self.before_first_count)
        } else {
            (Vec::new(), 0)
        };
        let mut a = self.unparsed.iter().peekable();
        let mut b = early.iter().peekable();
        let mut shown = 0;
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x < y,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (line, message) = if take_a {
                (a.next(), WARN_UNPARSED)
            } else {
                (b.next(), WARN_BEFORE_FIRST)
            };
            if let Some(l) = line {
                fw.push(l + offset, message);
                shown += 1;
            }
        }
        fw.count += self.unparsed_count + early_count - shown;
    }
}

/// What one chunk of a file gives (line numbers from 1 within the chunk): records counted per
/// process, and what the file-level state machines need — the state the chunk ends in and the
/// lines the CANN report assembly and the causal engine read.
#[derive(Default)]
struct ChunkScan {
    stats: ReadStats,
    procs: Processes,
    records: u64,
    any_record: bool,
    /// Lines before the chunk's first record: continuation lines of the record the chunk
    /// before ended in.
    lead: u64,
    /// The first of those (1-based) that matches `--grep`.
    lead_grep: Option<u64>,
    /// The state after the chunk's last record (`None`: the chunk holds no record).
    end: Option<State<Vec<u8>>>,
    /// Every line but a quiet record after a quiet record ([`is_quiet_record`], which the causal
    /// engine drops as well): (line, whether it is a record, its bytes in `text`).
    kept: Vec<(u64, bool, usize, usize)>,
    text: Vec<u8>,
    torch_npu: Vec<TorchNpuError>,
    warnings: ChunkWarnings,
}

/// The per-file constants a chunk is read with.
struct FileCtx<'a> {
    file: usize,
    path: &'a Path,
    device: Option<u32>,
    is_log: bool,
    filters: &'a Filters,
    grep: Option<&'a memmem::Finder<'a>>,
}

/// Reads one chunk's lines (on a worker thread).
fn scan_chunk(lines: ChunkLines<'_>, cx: &FileCtx<'_>) -> ChunkScan {
    let mut c = ChunkScan::default();
    let mut state: Option<State<Vec<u8>>> = None;
    let mut prev_quiet = false;
    let mut headers = HeaderCache::new();
    let stats = lines.for_each(|no, line| {
        let handled = header_or_peeled(&mut headers, line, |hdr, prefix| {
            let (h, rest) = hdr?;
            c.procs.note(prefix);
            if state.is_none() {
                c.lead = no - 1;
            }
            c.any_record = true;
            state = Some(if !cx.filters.accepts_header(&h) {
                State::Skipped
            } else if cx.grep.is_none_or(|g| g.find(line).is_some()) {
                c.records += 1;
                State::Counted(c.procs.count(
                    &h,
                    prefix,
                    rest,
                    line.len(),
                    cx.file,
                    cx.path,
                    no,
                    cx.device,
                ))
            } else {
                State::Pending(no, line.to_vec())
            });
            // The causal engine's own test, unless the line is cut for it.
            Some(
                prefix != Prefix::Peeled
                    && h.level != Level::Error
                    && (line.len() <= npgx_parsers::causal::MAX_LINE || is_quiet_record(line)),
            )
        });
        let quiet = handled == Some(true);
        if !(quiet && prev_quiet) {
            let start = c.text.len();
            c.text.extend_from_slice(line);
            c.kept.push((no, handled.is_some(), start, c.text.len()));
        }
        prev_quiet = quiet;
        if handled.is_some() {
            return;
        }
        if matches!(line.first(), Some(b'[') | Some(b'(')) {
            if let Some(error) = torch_npu_line(no, line) {
                c.torch_npu.push(error);
            }
        }
        let matches = || cx.grep.is_some_and(|g| g.find(line).is_some());
        match &mut state {
            None => {
                if c.lead_grep.is_none() && matches() {
                    c.lead_grep = Some(no);
                }
            }
            Some(State::Counted(i)) => c.procs.accs[*i].cont += 1,
            Some(State::Pending(at, pending)) => {
                if matches() {
                    let at = *at;
                    let idx = header_or_peeled(&mut HeaderCache::new(), pending, |hdr, _| {
                        hdr.map(|(h, rest)| {
                            c.procs.count(
                                &h,
                                Prefix::Peeled,
                                rest,
                                pending.len(),
                                cx.file,
                                cx.path,
                                at,
                                cx.device,
                            )
                        })
                    });
                    if let Some(i) = idx {
                        c.records += 1;
                        c.procs.accs[i].cont += 1;
                        state = Some(State::Counted(i));
                    }
                }
            }
            Some(State::Skipped | State::None) => {}
        }
        let w = &mut c.warnings;
        if cx.is_log && looks_like_header(line) {
            ChunkWarnings::note(&mut w.unparsed, &mut w.unparsed_count, no);
        } else if cx.is_log && state.is_none() && !line.is_empty() {
            ChunkWarnings::note(&mut w.before_first, &mut w.before_first_count, no);
        }
    });
    c.stats = stats;
    if state.is_none() {
        c.lead = stats.lines;
    }
    c.end = state;
    c
}

/// One file's scan in file order: the chunks' results folded in, and the state machines that
/// need every line in order (record state, CANN reports, the causal engine).
struct FileScan<'a> {
    file: usize,
    path: &'a Path,
    device: Option<u32>,
    state: State<Vec<u8>>,
    lines: u64,
    long_lines: u64,
    any_record: bool,
    reports: ReportAssembler,
    scanner: CausalScanner,
    warnings: FileWarnings<'a>,
}

impl FileScan<'_> {
    fn absorb(&mut self, s: &mut Summarizer, c: ChunkScan) {
        let offset = self.lines;
        // The lines before the chunk's first record continue the record read last.
        match &self.state {
            State::Counted(i) => s.procs.accs[*i].cont += c.lead,
            State::Pending(at, pending) => {
                if let Some(j) = c.lead_grep {
                    let (file, path, device, at) = (self.file, self.path, self.device, *at);
                    let idx = header_or_peeled(&mut HeaderCache::new(), pending, |hdr, _| {
                        hdr.map(|(h, rest)| {
                            s.procs.count(
                                &h,
                                Prefix::Peeled,
                                rest,
                                pending.len(),
                                file,
                                path,
                                at,
                                device,
                            )
                        })
                    });
                    if let Some(i) = idx {
                        s.files[file].records += 1;
                        s.procs.accs[i].cont += c.lead - j + 1;
                        self.state = State::Counted(i);
                    }
                }
            }
            State::Skipped | State::None => {}
        }
        c.warnings.apply(
            &mut self.warnings,
            offset,
            matches!(self.state, State::None),
        );
        let map = s.procs.absorb(c.procs, offset);
        s.files[self.file].records += c.records;
        match c.end {
            Some(State::Counted(i)) => self.state = State::Counted(map[i]),
            Some(State::Pending(at, p)) => self.state = State::Pending(at + offset, p),
            Some(State::Skipped) => self.state = State::Skipped,
            Some(State::None) | None => {}
        }
        for &(no, record, a, b) in &c.kept {
            let line = &c.text[a..b];
            self.scanner.push(no + offset, line);
            if record {
                self.reports.interrupt();
            } else {
                self.reports.push(no + offset, line);
            }
        }
        s.torch_npu.extend(c.torch_npu.into_iter().map(|mut error| {
            error.line += offset;
            FileTorchNpuError {
                file: self.path.to_path_buf(),
                error,
            }
        }));
        self.any_record |= c.any_record;
        self.lines += c.stats.lines;
        self.long_lines += c.stats.long_lines;
    }
}

/// Summarises `inputs` (see [`super::discover`]) under `filters`. Unreadable files and
/// unparsable lines become warnings; the scan goes on. Each file is read in chunks on all cores
/// ([`map_chunks`]); the result does not depend on the chunk size or the number of threads.
pub fn summarize(inputs: &[LogInput], filters: &Filters, warnings: Vec<Warning>) -> PlogSummary {
    summarize_in_chunks(inputs, filters, warnings, CHUNK)
}

fn summarize_in_chunks(
    inputs: &[LogInput],
    filters: &Filters,
    mut warnings: Vec<Warning>,
    chunk: u64,
) -> PlogSummary {
    let mut s = Summarizer::default();
    let grep = filters
        .grep
        .as_deref()
        .map(|g| memmem::Finder::new(g.as_bytes()));
    for input in inputs {
        let file = s.files.len();
        s.files.push(FileSummary {
            path: input.path.clone(),
            kind: input.info.as_ref().map(|i| i.kind),
            lines: 0,
            records: 0,
            read: false,
        });
        let cx = FileCtx {
            file,
            path: &input.path,
            device: input.info.as_ref().and_then(|i| i.device_id),
            is_log: input.info.is_some(),
            filters,
            grep: grep.as_ref(),
        };
        let mut f = FileScan {
            file,
            path: &input.path,
            device: cx.device,
            state: State::None,
            lines: 0,
            long_lines: 0,
            any_record: false,
            reports: ReportAssembler::default(),
            scanner: CausalScanner::new(),
            warnings: FileWarnings {
                out: &mut warnings,
                path: input.path.clone(),
                count: 0,
            },
        };
        let res = map_chunks(
            &input.path,
            chunk,
            |lines| scan_chunk(lines, &cx),
            |c| f.absorb(&mut s, c),
        );
        let FileScan {
            lines,
            long_lines,
            any_record,
            reports,
            scanner,
            warnings: fw,
            ..
        } = f;
        match res {
            Err(e) => fw
                .out
                .push(Warning::io(&input.path, &format!("cannot read: {e}"))),
            Ok(()) => {
                s.files[file].read = true;
                if !any_record {
                    fw.out
                        .push(Warning::io(&input.path, "no plog records in this file"));
                }
                if long_lines > 0 {
                    fw.out.push(Warning::io(
                        &input.path,
                        &format!(
                            "{long_lines} line(s) longer than {MAX_LINE} bytes: only their head was read"
                        ),
                    ));
                }
                if let Some(c) = scanner.finish() {
                    let collective = c
                        .phase
                        .as_ref()
                        .is_some_and(|p| p.phase == Phase::Collective);
                    s.causal
                        .push((file, collective, CausalRef::new(&input.path, c)));
                }
            }
        }
        fw.close();
        s.files[file].lines = lines;
        s.reports
            .extend(reports.finish().into_iter().map(|r| (file, r)));
    }
    s.finish(warnings)
}

/// Name of the `npgx plog --records --format json` document (schema `npgx.plog-records`): not
/// the summary's name, whose `records` is a count where this one's is a list.
pub const RECORDS_SCHEMA_NAME: &str = "plog-records";
/// Version of the `npgx.plog-records` document (1: its own name; under `npgx.plog` v2 before).
pub const RECORDS_SCHEMA_VERSION: u32 = 1;

/// The fields of the `npgx plog --records --format json` document: the records under
/// `records`. The document is streamed a record at a time (`report::plog::RecordWriter`, which
/// writes the envelope and this one field by hand), so this type is its schema's source rather
/// than its writer; the suite validates the streamed output against that schema.
#[derive(schemars::JsonSchema)]
pub struct RecordsDocument {
    pub records: Vec<RecordOut>,
}

/// One record as listed by `npgx plog --records`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct RecordOut {
    pub file: PathBuf,
    pub line: u64,
    pub time: PlogTime,
    pub level: Level,
    pub module: String,
    pub pid: i64,
    pub pname: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub src_line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tid: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub func: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stages: Vec<String>,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub continuation: Vec<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
}

impl RecordOut {
    fn new(path: &std::path::Path, r: PlogRecord) -> RecordOut {
        let c = r.content();
        RecordOut {
            file: path.to_path_buf(),
            line: r.line,
            time: r.time,
            level: r.level,
            module: r.module.clone(),
            pid: r.pid,
            pname: r.pname.clone(),
            src_file: c.src_file.map(str::to_owned),
            src_line: c.src_line,
            tid: c.tid,
            func: c.func.map(str::to_owned),
            stages: c.stages.iter().map(|s| (*s).to_owned()).collect(),
            message: c.message.to_owned(),
            continuation: r.continuation.clone(),
            truncated: r.truncated,
        }
    }
}

/// Streams every record of `inputs` that passes `filters` into `sink`, in file and line order.
/// An error from `sink` (a closed pipe) stops the scan and is returned.
pub fn for_each_record(
    inputs: &[LogInput],
    filters: &Filters,
    warnings: &mut Vec<Warning>,
    mut sink: impl FnMut(&RecordOut) -> io::Result<()>,
) -> io::Result<()> {
    let grep = filters.grep.as_deref();
    let accept = |r: &PlogRecord| {
        let h = PlogHeader {
            level: r.level,
            module: &r.module,
            pid: r.pid,
            pname_bytes: r.pname.as_bytes(),
            time: r.time,
        };
        filters.accepts_header(&h)
            && grep
                .is_none_or(|g| r.text.contains(g) || r.continuation.iter().any(|c| c.contains(g)))
    };
    for input in inputs {
        let mut asm = RecordAssembler::default();
        let mut failed: io::Result<()> = Ok(());
        let res = for_each_line(&input.path, |no, line| {
            if failed.is_err() {
                return;
            }
            if let Some(r) = asm.push(no, line) {
                if accept(&r) {
                    failed = sink(&RecordOut::new(&input.path, r));
                }
            }
        });
        failed?;
        if let Err(e) = res {
            warnings.push(Warning::io(&input.path, &format!("cannot read: {e}")));
            continue;
        }
        if let Some(r) = asm.finish() {
            if accept(&r) {
                sink(&RecordOut::new(&input.path, r))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    fn json(s: &PlogSummary) -> String {
        serde_json::to_string_pretty(s).expect("a summary serialises")
    }

    /// The summaries of `inputs` read in chunks of each size equal the one of a single chunk.
    fn same_for_every_chunk(inputs: &[LogInput], filters: &Filters, chunks: &[u64]) {
        let whole = json(&summarize_in_chunks(inputs, filters, Vec::new(), 1 << 40));
        for &chunk in chunks {
            let got = json(&summarize_in_chunks(inputs, filters, Vec::new(), chunk));
            if got != whole {
                let at = got
                    .lines()
                    .zip(whole.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "chunk {chunk}: summary differs at JSON line {at}: {:?} vs {:?}",
                    got.lines().nth(at),
                    whole.lines().nth(at)
                );
            }
        }
    }

    fn filters(levels: &[Level], grep: Option<&str>) -> Filters {
        Filters {
            levels: levels.to_vec(),
            grep: grep.map(str::to_owned),
            ..Filters::default()
        }
    }

    #[test]
    fn chunked_summaries_of_the_samples_equal_one_pass() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
        let mut warnings = Vec::new();
        let inputs = super::super::discover(&[root.join("logs"), root.join("cann")], &mut warnings);
        assert!(inputs.len() > 40, "{} inputs", inputs.len());
        // Explicit files are read even when their names are not CANN log names.
        let mut explicit: Vec<LogInput> = std::fs::read_dir(root.join("logs"))
            .expect("the shared log samples")
            .filter_map(|e| {
                let path = e.ok()?.path();
                (path.extension()? == "log").then_some(LogInput { path, info: None })
            })
            .collect();
        explicit.sort_by(|a, b| a.path.cmp(&b.path));
        for inputs in [&inputs, &explicit] {
            same_for_every_chunk(inputs, &Filters::default(), &[53, 4096, 1 << 20]);
            same_for_every_chunk(inputs, &filters(&[Level::Error], Some("rror")), &[211]);
        }
    }

    /// A plog of every kind of line, written here: records of three processes at every level,
    /// continuation lines, CANN error reports, torch_npu lines, look-alike headers, blank lines,
    /// CRLF, text before the first header and a line longer than the reader keeps.
    fn corpus() -> Vec<u8> {
        let mut s = String::from("text before the first header\n[ERROR] not a header\n\n");
        let levels = ["INFO", "DEBUG", "WARNING", "ERROR", "EVENT"];
        for i in 0..6000u32 {
            let pid = 100 + i % 3;
            let level = levels[(i * 7 % 11 % 5) as usize];
            let _ = write!(
                s,
                "[{level}] {}({pid},python):2025-05-08-09:{:02}:{:02}.{:03}.000 [f.cc:{i}]{pid} F:",
                ["GE", "RUNTIME", "HCCL"][(i % 3) as usize],
                i / 3600 % 60,
                i / 60 % 60,
                i % 1000
            );
            match i % 97 {
                5 => s.push_str("Task exception! device_id=1, stream_id=2, retCode=0x31\n"),
                11 => s.push_str("rtStreamSynchronize:ErrCode=507035, desc=[vector core exception]\n"),
                23 => s.push_str("call failed\nEZ9999: Inner Error!\nEZ9999[PID: 101] 2025-05-08-09:00:00.000.000 (EZ9999):  The device failed[FUNC:F][FILE:f.cc][LINE:1]\n        TraceBack (most recent call last):\n        x failed[FUNC:G][FILE:g.cc][LINE:2]\n"),
                31 => s.push_str("x\r\n  continuation retCode=0x7\r\n\n"),
                47 => s.push_str("y\n[ERROR] 2025-05-08-09:00:00 (PID:101, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"),
                59 => s.push_str("z\n[INFO] GE(1,p):garbled\n"),
                _ => s.push_str("plain message\n"),
            }
            if i == 4000 {
                s.push_str(&"w".repeat(MAX_LINE + 100));
                s.push('\n');
            }
        }
        s.push_str("[ERROR] GE(100,python):2025-05-08-10:00:00.000.000 last record, no newline");
        s.into_bytes()
    }

    #[test]
    fn chunked_summaries_of_a_generated_plog_equal_one_pass() {
        let path = std::env::temp_dir().join(format!(
            "npgx-summary-chunks-{}/plog-101_20250508090000000.log",
            std::process::id()
        ));
        let dir = path.parent().expect("a directory");
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(&path, corpus()).unwrap();
        let inputs = super::super::discover(&[dir.to_path_buf()], &mut Vec::new());
        assert_eq!(inputs.len(), 1);
        let whole = summarize_in_chunks(&inputs, &Filters::default(), Vec::new(), 1 << 40);
        // The corpus exercises what chunks must carry over.
        assert!(whole.error_reports.len() > 50);
        assert_eq!(whole.torch_npu_errors.len(), 62);
        assert!(whole.processes.iter().all(|p| p.continuation_lines > 0));
        assert!(whole.first_causal.is_some());
        assert!(whole.warnings.len() > 3);
        for f in [
            Filters::default(),
            filters(&[Level::Error, Level::Warning], None),
            filters(&[], Some("continuation")),
            filters(&[], Some("EZ9999")),
        ] {
            same_for_every_chunk(&inputs, &f, &[37, 4096, 100_000]);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
