//! `npgx plog`: per-process summaries and filtered record lists, streamed.
//!
//! The hot loop parses only the header of each physical line; the content prefix, codes and
//! causal rank are computed for ERROR records only. With `--grep`, a record whose header line
//! does not match is held (its bytes, in one reused buffer) until a continuation line matches or
//! the next header arrives.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io;
use std::path::PathBuf;

use memchr::memmem;
use npgx_parsers::aicore::kv::KvBag;
use npgx_parsers::cann_error::torch_npu::{parse_torch_npu_line, TorchNpuError};
use npgx_parsers::cann_error::{codes_in, CannErrorReport, ReportAssembler};
use npgx_parsers::causal::{rank_plog_error, CausalError, CausalScanner, CauseRank, Shape, Tier};
use npgx_parsers::line_prefix::strip_prefixes;
use npgx_parsers::plog::content::parse_content;
use npgx_parsers::plog::path::LogFileKind;
use npgx_parsers::plog::record::{lossy, RecordAssembler, TRUNCATION_LENGTH};
use npgx_parsers::plog::{parse_header, Level, PlogHeader, PlogRecord, PlogTime};
use serde::Serialize;

use super::reader::for_each_line;
use super::{Filters, LogInput, Warning};

/// Most warnings kept per file; the rest are counted in one last warning.
const WARNINGS_PER_FILE: usize = 20;

/// A record cited by a summary (first ERROR, first causal error).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
}

impl CausalRef {
    fn new(file: &std::path::Path, e: CausalError) -> CausalRef {
        CausalRef {
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
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub file: PathBuf,
    #[serde(flatten)]
    pub report: CannErrorReport,
}

/// A torch_npu `ERRxxxxx` line found in an input, with its file.
#[derive(Debug, Clone, Serialize)]
pub struct FileTorchNpuError {
    pub file: PathBuf,
    #[serde(flatten)]
    pub error: TorchNpuError,
}

/// Everything counted for one process (pid).
#[derive(Debug, Clone, Serialize)]
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
    /// out), in time order.
    pub timeline: Vec<TimelinePoint>,
}

/// ERROR and WARNING records of one process in one second (`time` has zero fractions).
#[derive(Debug, Clone, Serialize)]
pub struct TimelinePoint {
    pub time: PlogTime,
    pub error: u64,
    pub warning: u64,
}

/// One file read.
#[derive(Debug, Clone, Serialize)]
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

/// The result of `npgx plog`.
#[derive(Debug, Clone, Serialize)]
pub struct PlogSummary {
    pub files: Vec<FileSummary>,
    /// Records that passed the filters, over all files.
    pub records: u64,
    pub processes: Vec<ProcessSummary>,
    /// Earliest ERROR record by time over all processes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_error: Option<RecordRef>,
    /// The first causal error over all files (the causal engine's ordering per file; between
    /// files the lower tier and rank, then the earlier time when both have one, then the
    /// earlier file). Computed over whole files: the record filters do not apply to it.
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

#[derive(Default)]
struct Summarizer {
    reports: Vec<(usize, CannErrorReport)>,
    torch_npu: Vec<FileTorchNpuError>,
    causal: Vec<(usize, CausalRef)>,
    accs: Vec<Acc>,
    by_pid: HashMap<i64, usize>,
    last: Option<(i64, usize)>,
    files: Vec<FileSummary>,
}

enum State {
    None,
    Skipped,
    Counted(usize),
    Pending,
}

impl Summarizer {
    fn acc(&mut self, h: &PlogHeader<'_>, file: usize) -> usize {
        let idx = match self.last {
            Some((pid, i)) if pid == h.pid => i,
            _ => {
                let i = match self.by_pid.get(&h.pid) {
                    Some(&i) => i,
                    None => {
                        self.accs.push(Acc {
                            pid: h.pid,
                            pname: h.pname.to_string(),
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
                        });
                        self.by_pid.insert(h.pid, self.accs.len() - 1);
                        self.accs.len() - 1
                    }
                };
                self.last = Some((h.pid, i));
                i
            }
        };
        let acc = &mut self.accs[idx];
        if acc.files.last() != Some(&file) {
            acc.files.push(file);
        }
        idx
    }

    fn count(
        &mut self,
        h: &PlogHeader<'_>,
        rest: &[u8],
        line_len: usize,
        file: usize,
        line: u64,
        device: Option<u32>,
    ) -> usize {
        let idx = self.acc(h, file);
        self.files[file].records += 1;
        let path = &self.files[file].path;
        let acc = &mut self.accs[idx];
        acc.records += 1;
        if let Some(d) = device {
            acc.devices.insert(u64::from(d));
        }
        if line_len >= TRUNCATION_LENGTH {
            acc.truncated += 1;
        }
        match acc.levels.iter_mut().find(|(l, _)| *l == h.level) {
            Some((_, n)) => *n += 1,
            None => acc.levels.push((h.level, 1)),
        }
        match acc.modules.iter_mut().find(|(m, _)| m == h.module) {
            Some((_, n)) => *n += 1,
            None => acc.modules.push((h.module.to_owned(), 1)),
        }
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
                file: path.clone(),
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

    fn finish(self, warnings: Vec<Warning>) -> PlogSummary {
        let files = self.files;
        let mut processes: Vec<ProcessSummary> = self
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
        let first_causal = self
            .causal
            .into_iter()
            .min_by(|(fa, a), (fb, b)| {
                (a.tier, a.rank)
                    .cmp(&(b.tier, b.rank))
                    .then_with(|| match (a.time, b.time) {
                        (Some(x), Some(y)) if fa != fb => x.cmp(&y),
                        _ => (fa, a.line).cmp(&(fb, b.line)),
                    })
            })
            .map(|(_, c)| c);
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

/// A header on this line, directly or behind console prefixes (`[rank1]:`, `(Worker pid=…)`).
fn header_or_peeled<R>(line: &[u8], f: impl FnOnce(Option<(PlogHeader<'_>, &[u8])>) -> R) -> R {
    if let Some(x) = parse_header(line) {
        return f(Some(x));
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
            return f(parse_header(p.rest.as_bytes()));
        }
    }
    f(None)
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

/// Summarises `inputs` (see [`super::discover`]) under `filters`. Unreadable files and
/// unparsable lines become warnings; the scan goes on.
pub fn summarize(
    inputs: &[LogInput],
    filters: &Filters,
    mut warnings: Vec<Warning>,
) -> PlogSummary {
    let mut s = Summarizer::default();
    let grep = filters
        .grep
        .as_deref()
        .map(|g| memmem::Finder::new(g.as_bytes()).into_owned());
    let mut pending: Vec<u8> = Vec::new();
    let mut pending_line = 0u64;
    for input in inputs {
        let file = s.files.len();
        s.files.push(FileSummary {
            path: input.path.clone(),
            kind: input.info.as_ref().map(|i| i.kind),
            lines: 0,
            records: 0,
            read: false,
        });
        let device = input.info.as_ref().and_then(|i| i.device_id);
        let is_log = input.info.is_some();
        let mut state = State::None;
        let mut lines = 0u64;
        let mut any_record = false;
        let mut reports = ReportAssembler::default();
        let mut scanner = CausalScanner::new();
        let mut torch_npu: Vec<FileTorchNpuError> = Vec::new();
        let mut fw = FileWarnings {
            out: &mut warnings,
            path: input.path.clone(),
            count: 0,
        };
        let res = for_each_line(&input.path, |no, line| {
            lines = no;
            scanner.push(no, line);
            let handled = header_or_peeled(line, |hdr| {
                let (h, rest) = hdr?;
                any_record = true;
                state = if !filters.accepts_header(&h) {
                    State::Skipped
                } else if grep.as_ref().is_none_or(|g| g.find(line).is_some()) {
                    State::Counted(s.count(&h, rest, line.len(), file, no, device))
                } else {
                    pending.clear();
                    pending.extend_from_slice(line);
                    pending_line = no;
                    State::Pending
                };
                Some(())
            });
            if handled.is_some() {
                reports.interrupt();
                return;
            }
            reports.push(no, line);
            if matches!(line.first(), Some(b'[') | Some(b'(')) {
                if let Some(error) = torch_npu_line(no, line) {
                    torch_npu.push(FileTorchNpuError {
                        file: input.path.clone(),
                        error,
                    });
                }
            }
            match state {
                State::Counted(i) => s.accs[i].cont += 1,
                State::Pending => {
                    if grep.as_ref().is_some_and(|g| g.find(line).is_some()) {
                        let idx = header_or_peeled(&pending, |hdr| {
                            hdr.map(|(h, rest)| {
                                s.count(&h, rest, pending.len(), file, pending_line, device)
                            })
                        });
                        if let Some(i) = idx {
                            s.accs[i].cont += 1;
                            state = State::Counted(i);
                        }
                    }
                }
                State::Skipped => {}
                State::None => {}
            }
            if is_log && looks_like_header(line) {
                fw.push(
                    no,
                    "starts like a plog header but does not parse; kept as a continuation line",
                );
            } else if is_log && matches!(state, State::None) && !line.is_empty() {
                fw.push(no, "text before the first plog header");
            }
        });
        match res {
            Err(e) => fw
                .out
                .push(Warning::io(&input.path, &format!("cannot read: {e}"))),
            Ok(stats) => {
                s.files[file].read = true;
                if !any_record {
                    fw.out
                        .push(Warning::io(&input.path, "no plog records in this file"));
                }
                if stats.long_lines > 0 {
                    fw.out.push(Warning::io(
                        &input.path,
                        &format!(
                            "{} line(s) longer than {} bytes: only their head was read",
                            stats.long_lines,
                            super::reader::MAX_LINE
                        ),
                    ));
                }
                if let Some(c) = scanner.finish() {
                    s.causal.push((file, CausalRef::new(&input.path, c)));
                }
            }
        }
        fw.close();
        s.files[file].lines = lines;
        s.reports
            .extend(reports.finish().into_iter().map(|r| (file, r)));
        s.torch_npu.extend(torch_npu);
    }
    s.finish(warnings)
}

/// One record as listed by `npgx plog --records`.
#[derive(Debug, Clone, Serialize)]
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
            pname: std::borrow::Cow::Borrowed(&r.pname),
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
