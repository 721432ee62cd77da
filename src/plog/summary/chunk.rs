//! One chunk of a file, read on a worker thread: its lines' headers (direct or behind console
//! prefixes), its records counted per process, and what the file-order pass needs from it.

use std::path::Path;

use memchr::memmem;
use npgx_parsers::cann_error::torch_npu::{parse_torch_npu_line, TorchNpuError};
use npgx_parsers::causal::is_quiet_record;
use npgx_parsers::line_prefix::strip_prefixes;
use npgx_parsers::plog::record::lossy;
use npgx_parsers::plog::{parse_header, HeaderCache, Level, PlogHeader};

use crate::plog::reader::{ChunkLines, ReadStats};
use crate::plog::Filters;

use super::process::{Prefix, Processes};
use super::warnings::ChunkWarnings;

/// The record the lines being read belong to.
pub(super) enum State<P> {
    None,
    Skipped,
    Counted(usize),
    /// A record that did not match `--grep` (yet): its line number and bytes.
    Pending(u64, P),
}

/// A header on this line, directly or behind console prefixes (`[rank1]:`, `(Worker pid=…)`);
/// how it was read ([`Prefix`]; `Peeled` when there is none). `cache` keeps the recent direct
/// headers' prefixes (the lines of a chunk are read through one).
pub(super) fn header_or_peeled<R>(
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
pub(super) fn torch_npu_line(no: u64, line: &[u8]) -> Option<TorchNpuError> {
    let text = lossy(line);
    let mut t = parse_torch_npu_line(strip_prefixes(&text).rest)?;
    t.line = no;
    Some(t)
}

pub(super) fn looks_like_header(line: &[u8]) -> bool {
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

/// What one chunk of a file gives (line numbers from 1 within the chunk): records counted per
/// process, and what the file-level state machines need — the state the chunk ends in and the
/// lines the CANN report assembly and the causal engine read.
#[derive(Default)]
pub(super) struct ChunkScan {
    pub(super) stats: ReadStats,
    pub(super) procs: Processes,
    pub(super) records: u64,
    pub(super) any_record: bool,
    /// Lines before the chunk's first record: continuation lines of the record the chunk
    /// before ended in.
    pub(super) lead: u64,
    /// The first of those (1-based) that matches `--grep`.
    pub(super) lead_grep: Option<u64>,
    /// The state after the chunk's last record (`None`: the chunk holds no record).
    pub(super) end: Option<State<Vec<u8>>>,
    /// Whether the chunk's last record is one the filters leave out ([`Filters::selects_record`];
    /// `None`: the chunk holds no record). Its lines, and those of every such record, are not
    /// in `kept`; the lead lines are, for the file-order pass to decide.
    pub(super) end_left_out: Option<bool>,
    /// Every line but a quiet record after a quiet record ([`is_quiet_record`], which the causal
    /// engine drops as well): (line, whether it is a record, its bytes in `text`).
    pub(super) kept: Vec<(u64, bool, usize, usize)>,
    pub(super) text: Vec<u8>,
    pub(super) torch_npu: Vec<TorchNpuError>,
    pub(super) warnings: ChunkWarnings,
}

/// The per-file constants a chunk is read with.
pub(super) struct FileCtx<'a> {
    pub(super) file: usize,
    pub(super) path: &'a Path,
    pub(super) device: Option<u32>,
    pub(super) is_log: bool,
    pub(super) filters: &'a Filters,
    /// No filter that chooses records is set ([`Filters::selects_record`] is true for all):
    /// decided once, not per header (the tests per header were 2.7 % of plog's samples).
    pub(super) every_record: bool,
    pub(super) grep: Option<&'a memmem::Finder<'a>>,
}

/// Reads one chunk's lines (on a worker thread).
pub(super) fn scan_chunk(lines: ChunkLines<'_>, cx: &FileCtx<'_>) -> ChunkScan {
    let mut c = ChunkScan::default();
    let mut state: Option<State<Vec<u8>>> = None;
    let mut prev_quiet = false;
    let mut left_out = None;
    let mut headers = HeaderCache::new();
    let stats = lines.for_each(|no, line| {
        let handled = header_or_peeled(&mut headers, line, |hdr, prefix| {
            let (h, rest) = hdr?;
            left_out = Some(!cx.every_record && !cx.filters.selects_record(&h));
            c.procs.note(prefix);
            if state.is_none() {
                c.lead = no - 1;
            }
            c.any_record = true;
            let every = cx.every_record && cx.filters.levels.is_empty();
            state = Some(if !every && !cx.filters.accepts_header(&h) {
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
        // A record the filters leave out is not read at all (nor counted as the quiet line
        // before the next one: the causal engine does not see it).
        if left_out != Some(true) {
            if !(quiet && prev_quiet) {
                let start = c.text.len();
                c.text.extend_from_slice(line);
                c.kept.push((no, handled.is_some(), start, c.text.len()));
            }
            prev_quiet = quiet;
        }
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
    c.end_left_out = left_out;
    if state.is_none() {
        c.lead = stats.lines;
    }
    c.end = state;
    c
}
