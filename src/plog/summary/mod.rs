//! `npgx plog`: per-process summaries and filtered record lists, streamed.
//!
//! A file is read in chunks on all cores ([`map_chunks`]): each chunk's records are counted per
//! process on a worker thread, and the results are folded together in file order, so they do not
//! depend on the chunk size. The hot loop parses only the header of each physical line; the
//! content prefix, codes and causal rank are computed for ERROR records only. What needs every
//! line in order — the record a continuation line belongs to, CANN report assembly, the causal
//! engine — runs in file order over the lines a worker kept: all but the quiet records that
//! follow a quiet record (most of a plog, and lines the causal engine drops anyway); the causal
//! engine of a file of several chunks on a thread of its own ([`Causal`]). With
//! `--grep`, a record whose header line does not match is held (its bytes) until a continuation
//! line matches or the next header arrives.
//!
//! The pieces: [`document`] the summary's records (the `npgx.plog` document), [`process`] the
//! counts per process, [`chunk`] one chunk read on a worker thread, [`warnings`] the warnings of a
//! file's lines, [`records`] `--records`; this file folds the chunks of each file in order.

mod chunk;
mod document;
mod process;
mod records;
mod warnings;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{Scope, ScopedJoinHandle};

use memchr::memmem;
use npgx_parsers::aicore::{Fact, KernelAssert};
use npgx_parsers::cann_error::{CannErrorReport, ReportAssembler};
use npgx_parsers::causal::across::{self, Contender};
use npgx_parsers::causal::CausalScanner;
use npgx_parsers::causal::PhaseEvidence;
use npgx_parsers::plog::{HeaderCache, PlogTime};

use crate::dump::mapped::Mode;
use crate::plog::aicore::{assertion_for, point_device_readers};
use crate::plog::reader::{for_each_line_while, framework_of, map_chunks, CHUNK, MAX_LINE};
use crate::plog::{seconds, Filters, LogInput, Warning};

pub use document::{
    CausalRef, FileReport, FileSummary, FileTorchNpuError, PlogSummary, ProcessSummary, RecordRef,
    TimelinePoint, SCHEMA_NAME, SCHEMA_VERSION,
};
pub use records::{
    for_each_record, RecordOut, RecordsDocument, RECORDS_SCHEMA_NAME, RECORDS_SCHEMA_VERSION,
};

use chunk::{header_or_peeled, scan_chunk, ChunkScan, FileCtx, State};
use process::{Prefix, Processes};
use warnings::FileWarnings;

#[derive(Default)]
struct Summarizer {
    reports: Vec<(usize, CannErrorReport)>,
    torch_npu: Vec<FileTorchNpuError>,
    /// Per file read: its index, whether its error reads as collective communication, the error.
    causal: Vec<(usize, bool, CausalRef)>,
    procs: Processes,
    files: Vec<FileSummary>,
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
        let mut warnings = warnings;
        let first_causal = across::first(&contenders).and_then(|i| {
            warnings.extend(far_apart(&self.causal, i));
            self.causal.into_iter().nth(i).map(|x| x.2)
        });
        let error_reports = self
            .reports
            .into_iter()
            .map(|(f, report)| FileReport {
                file: files[f].path.clone(),
                cited_line: npgx_parsers::causal::cited_line(&report),
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

/// More than this between the chosen first causal error and another file's: not one failure.
/// A failure's errors follow its root within seconds to minutes (HCCL's default execution
/// timeout, the longest wait, is about half an hour).
const ONE_RUN_SECONDS: i64 = 3600;

/// A warning when the first causal error chosen across files (`causal[chosen]`) is more than
/// [`ONE_RUN_SECONDS`] before the latest first causal error of another file: the files may hold
/// several runs (a device log spans every process on the device), or clocks that differ (host
/// and device), and the earliest error need not be the failure the user asks about.
fn far_apart(causal: &[(usize, bool, CausalRef)], chosen: usize) -> Option<Warning> {
    let c = &causal.get(chosen)?.2;
    let at = seconds(&c.time?)?;
    let (latest, other) = causal
        .iter()
        .filter(|(f, _, o)| *f != causal[chosen].0 && o.time.is_some())
        .filter_map(|(_, _, o)| Some((seconds(&o.time?)?, o)))
        .max_by_key(|(t, _)| *t)?;
    let gap = latest - at;
    (gap > ONE_RUN_SECONDS).then(|| Warning {
        file: c.file.clone(),
        line: Some(c.line),
        message: format!(
            "the first causal error ({}) is {} h {:02} min before {} line {} ({}): these files may \
             hold more than one run, or clocks that differ (host and device); --since, --until or \
             --pid choose the run",
            c.time.map(|t| t.to_string()).unwrap_or_default(),
            gap / 3600,
            gap % 3600 / 60,
            other.file.display(),
            other.line,
            other.time.map(|t| t.to_string()).unwrap_or_default(),
        ),
    })
}

/// The causal engine of one file, fed the kept lines in file order. Its windows' analysis takes
/// tens of milliseconds each (20 000 kept lines); run where the chunks are folded, it held up the
/// fold, and the workers stopped once their chunks in flight were read (the 512 MiB bench
/// showed both workers idle for 50 ms at each window). So for a file of several chunks it runs
/// on a thread of its own, fed a chunk's kept lines at a time through a queue bounded in bytes
/// ([`CAUSAL_QUEUE_BYTES`]); the lines and their order are the same, so is the answer.
enum Causal<'s> {
    Here(Box<CausalScanner>),
    Beside {
        feed: Sender<Kept>,
        queued: Arc<Queued>,
        engine: ScopedJoinHandle<'s, (CausalScanner, Option<Early>)>,
    },
}

/// The kernel assertion of a first causal error the engine decided before the file ended
/// ([`CausalScanner::decided`]), read on its thread then: the error's line, and the assertion.
type Early = (u64, Option<Fact<KernelAssert>>);

/// A chunk's kept lines for the causal engine: `(line, start, end)` in `text`, line numbers of
/// the file.
struct Kept {
    lines: Vec<(u64, usize, usize)>,
    text: Vec<u8>,
}

impl Kept {
    /// The memory it holds (its buffers' capacity: they grew line by line).
    fn bytes(&self) -> usize {
        self.text.capacity() + self.lines.capacity() * std::mem::size_of::<(u64, usize, usize)>()
    }
}

/// Bytes of kept lines queued for a [`Causal::Beside`] engine before the fold waits for it. A
/// chunk's kept lines are a few percent of it in a plog (its ERROR records and the first quiet
/// record of each run), so the fold goes on while the engine analyses a window; a queue of
/// eight chunks filled within one window, and the workers then stopped for want of chunks in
/// flight (40 ms at a time in the 512 MiB bench). In a file of nothing but errors a chunk keeps
/// all of itself ([`CHUNK`], 4 MiB): the bound is what keeps memory flat there.
const CAUSAL_QUEUE_BYTES: usize = 32 << 20;

/// The bytes queued for a [`Causal::Beside`] engine, and whether it has stopped taking any.
#[derive(Default)]
struct Queued {
    state: Mutex<(usize, bool)>,
    freed: Condvar,
}

impl Queued {
    fn state(&self) -> MutexGuard<'_, (usize, bool)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `n` more bytes, once they fit (one batch always does when nothing is queued), or
    /// at once when the engine has stopped.
    fn add(&self, n: usize) {
        let mut s = self.state();
        while s.0 > 0 && s.0.saturating_add(n) > CAUSAL_QUEUE_BYTES && !s.1 {
            s = self.freed.wait(s).unwrap_or_else(PoisonError::into_inner);
        }
        s.0 = s.0.saturating_add(n);
    }

    /// `n` bytes were taken off the queue.
    fn remove(&self, n: usize) {
        let mut s = self.state();
        s.0 = s.0.saturating_sub(n);
        self.freed.notify_one();
    }
}

/// Marks the engine stopped when its thread ends, however it ends, so the fold never waits for
/// it in vain.
struct Stops<'q>(&'q Queued);

impl Drop for Stops<'_> {
    fn drop(&mut self) {
        self.0.state().1 = true;
        self.0.freed.notify_all();
    }
}

impl<'s> Causal<'s> {
    /// On a thread of `scope` for a file of at least two chunks, here otherwise (and where the
    /// system refuses a thread).
    fn new<'e>(scope: &'s Scope<'s, 'e>, path: &'s Path, file_len: u64, chunk: u64) -> Causal<'s> {
        if file_len < chunk.saturating_mul(2) {
            return Causal::Here(Box::new(CausalScanner::first_only()));
        }
        let (feed, queue) = mpsc::channel::<Kept>();
        let queued = Arc::new(Queued::default());
        let taken = Arc::clone(&queued);
        let engine = std::thread::Builder::new()
            .name("npgx-causal".into())
            .spawn_scoped(scope, move || {
                let _stops = Stops(&taken);
                let mut scanner = CausalScanner::first_only();
                let mut early = None;
                for kept in queue {
                    for &(no, a, b) in &kept.lines {
                        scanner.push(no, &kept.text[a..b]);
                    }
                    taken.remove(kept.bytes());
                    // Decided: the scanner takes no more lines, and the assertion is read now,
                    // beside the workers, rather than after the last chunk.
                    if early.is_none() {
                        early = scanner.decided().map(|e| {
                            let read = |f: &mut dyn FnMut(u64, &[u8]) -> bool| {
                                for_each_line_while(path, f)
                            };
                            (e.line, assertion_for(e, true, read))
                        });
                    }
                }
                (scanner, early)
            });
        match engine {
            Ok(engine) => Causal::Beside {
                feed,
                queued,
                engine,
            },
            Err(_) => Causal::Here(Box::new(CausalScanner::first_only())),
        }
    }

    fn push(&mut self, kept: Kept) {
        match self {
            Causal::Here(scanner) => {
                for &(no, a, b) in &kept.lines {
                    scanner.push(no, &kept.text[a..b]);
                }
            }
            // A send fails only when the engine's thread has ended, which `finish` reports.
            Causal::Beside { feed, queued, .. } => {
                queued.add(kept.bytes());
                drop(feed.send(kept));
            }
        }
    }

    /// The engine, every line fed (a `first_only` engine ignores those after its decision), and
    /// the kernel assertion it read when it decided early. That read happens while the file is
    /// still being scanned: the same answer as a read after the last chunk for a file that does
    /// not change while it is read, which the whole summary assumes.
    fn finish(self) -> (CausalScanner, Option<Early>) {
        match self {
            Causal::Here(scanner) => (*scanner, None),
            Causal::Beside { feed, engine, .. } => {
                drop(feed);
                engine
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            }
        }
    }
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
    causal: Causal<'a>,
    warnings: FileWarnings<'a>,
    /// Whether the record read last is one the filters leave out ([`ChunkScan::end_left_out`]).
    left_out: bool,
}

impl FileScan<'_> {
    fn absorb(&mut self, s: &mut Summarizer, c: ChunkScan) {
        let offset = self.lines;
        // The chunk's lead lines continue the record read last: left out with it.
        let lead_left_out = self.left_out;
        self.left_out = c.end_left_out.unwrap_or(self.left_out);
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
        let mut kept = Vec::with_capacity(c.kept.len());
        for &(no, record, a, b) in &c.kept {
            if lead_left_out && no <= c.lead {
                continue;
            }
            kept.push((no + offset, a, b));
            if record {
                self.reports.interrupt();
            } else {
                self.reports.push(no + offset, &c.text[a..b]);
            }
        }
        self.causal.push(Kept {
            lines: kept,
            text: c.text,
        });
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
/// ([`map_chunks`]), through a mapping when `map` says so; the result does not depend on the
/// chunk size, the number of threads or the way the file is read.
pub fn summarize(
    inputs: &[LogInput],
    filters: &Filters,
    map: Mode,
    warnings: Vec<Warning>,
) -> PlogSummary {
    summarize_in_chunks(inputs, filters, warnings, (CHUNK, map))
}

fn summarize_in_chunks(
    inputs: &[LogInput],
    filters: &Filters,
    mut warnings: Vec<Warning>,
    (chunk, map): (u64, Mode),
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
            every_record: filters.selects_every_record(),
            grep: grep.as_ref(),
        };
        let file_len = std::fs::metadata(&input.path).map_or(0, |m| m.len());
        std::thread::scope(|scope| {
            let mut f = FileScan {
                file,
                path: &input.path,
                device: cx.device,
                state: State::None,
                lines: 0,
                long_lines: 0,
                any_record: false,
                reports: ReportAssembler::default(),
                causal: Causal::new(scope, &input.path, file_len, chunk),
                left_out: false,
                warnings: FileWarnings {
                    out: &mut warnings,
                    path: input.path.clone(),
                    count: 0,
                },
            };
            let res = map_chunks(
                &input.path,
                chunk,
                map,
                |lines| scan_chunk(lines, &cx),
                |c| {
                    f.absorb(&mut s, c);
                    ControlFlow::Continue(())
                },
            );
            let FileScan {
                lines,
                long_lines,
                any_record,
                reports,
                causal,
                warnings: fw,
                ..
            } = f;
            let (scanner, early) = causal.finish();
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
                    let saw_assert = scanner.saw_kernel_assert();
                    if let Some(c) = scanner.finish() {
                        let collective =
                            c.phase.as_ref().is_some_and(PhaseEvidence::waits_on_peers);
                        let assert = match early {
                            Some((line, assert)) => {
                                debug_assert_eq!(line, c.line, "a decided error is the answer");
                                assert
                            }
                            None => assertion_for(&c, saw_assert, |f| {
                                for_each_line_while(&input.path, f)
                            }),
                        };
                        let mut cause = CausalRef::new(
                            &input.path,
                            c,
                            assert.as_ref(),
                            framework_of(&input.path),
                        );
                        // A file found under a folder the user named: the folder holds the
                        // other processes' plogs, and `npgx aicore` reads a folder.
                        let plogs = input.folder.as_deref().and_then(Path::to_str);
                        point_device_readers(&mut cause.remedy, input.path.to_str(), plogs, |f| {
                            for_each_line_while(&input.path, f)
                        });
                        s.causal.push((file, collective, cause));
                    }
                }
            }
            fw.close();
            s.files[file].lines = lines;
            s.reports
                .extend(reports.finish().into_iter().map(|r| (file, r)));
        });
    }
    s.finish(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use npgx_parsers::plog::Level;
    use std::fmt::Write as _;

    /// The file in one chunk, copied.
    const ONE: (u64, Mode) = (1 << 40, Mode::Never);

    fn json(s: &PlogSummary) -> String {
        serde_json::to_string_pretty(s).expect("a summary serialises")
    }

    /// The summaries of `inputs` read in chunks of each size, copied, and mapped where the
    /// chunks are a page or more (a system call releases each chunk's pages: tens of thousands
    /// of tiny chunks would be slow to test and say nothing more), equal the one of a single
    /// copied chunk.
    fn same_for_every_chunk(inputs: &[LogInput], filters: &Filters, chunks: &[u64]) {
        let whole = json(&summarize_in_chunks(inputs, filters, Vec::new(), ONE));
        let modes = |c: u64| {
            [Mode::Never, Mode::Always]
                .into_iter()
                .take(if c < 4096 { 1 } else { 2 })
        };
        for (chunk, map) in chunks.iter().flat_map(|&c| modes(c).map(move |m| (c, m))) {
            let got = json(&summarize_in_chunks(
                inputs,
                filters,
                Vec::new(),
                (chunk, map),
            ));
            if got != whole {
                let at = got
                    .lines()
                    .zip(whole.lines())
                    .position(|(a, b)| a != b)
                    .unwrap_or(0);
                panic!(
                    "chunk {chunk}, {map:?}: summary differs at JSON line {at}: {:?} vs {:?}",
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
                (path.extension()? == "log").then_some(LogInput {
                    path,
                    info: None,
                    folder: None,
                })
            })
            .collect();
        explicit.sort_by(|a, b| a.path.cmp(&b.path));
        // Chunks shorter than most lines on the console captures only: over the 9 MB of CANN
        // samples they took 14 s and add nothing the generated plog below (37-byte chunks, every
        // kind of line) does not check.
        for (inputs, tiny) in [(&inputs, None), (&explicit, Some(53))] {
            let sizes: Vec<u64> = tiny.into_iter().chain([4096, 1 << 20]).collect();
            same_for_every_chunk(inputs, &Filters::default(), &sizes);
            same_for_every_chunk(inputs, &filters(&[Level::Error], Some("rror")), &[211]);
        }
    }

    // A first causal error decided in the first window (a device fault, a kernel assertion
    // after it) has its assertion read on the causal engine's thread while the workers go on;
    // the summary is the one of a single pass, which reads it after the last line.
    #[test]
    fn an_error_decided_early_has_the_summary_of_one_pass() {
        let sample = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../shared/samples/cann/asys-20250508-gatherv3-assert/dfx/log/host/cann/debug/plog/plog-155320_20250508095618528.log",
        );
        let once = std::fs::read(&sample).expect("the gatherv3 sample plog");
        let dir = std::env::temp_dir().join(format!("npgx-summary-early-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("plog-155320_20250508095618528.log");
        // Over one window of kept lines (each copy holds 77 ERROR records).
        let copies = npgx_parsers::causal::WINDOW_LINES / 77 + 40;
        std::fs::write(&path, once.repeat(copies)).unwrap();
        let inputs = super::super::discover(std::slice::from_ref(&dir), &mut Vec::new());
        let whole = json(&summarize_in_chunks(
            &inputs,
            &Filters::default(),
            Vec::new(),
            ONE,
        ));
        assert!(whole.contains("this->gxSize_"), "the assertion is cited");
        same_for_every_chunk(&inputs, &Filters::default(), &[64 << 10]);
        std::fs::remove_dir_all(dir).unwrap();
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
        let whole = summarize_in_chunks(&inputs, &Filters::default(), Vec::new(), ONE);
        // The corpus exercises what chunks must carry over.
        assert!(whole.error_reports.len() > 50);
        assert_eq!(whole.torch_npu_errors.len(), 62);
        assert!(whole.processes.iter().all(|p| p.continuation_lines > 0));
        assert!(whole.first_causal.is_some());
        assert!(whole.warnings.len() > 3);
        // The filters that choose records choose what the causal engine reads: its first error
        // is one of the selected process's, from the selected time on.
        let pid = Filters {
            pids: vec![102],
            ..Filters::default()
        };
        let c = summarize_in_chunks(&inputs, &pid, Vec::new(), ONE).first_causal;
        assert_eq!(c.map(|c| c.pid), Some(Some(102)));
        let since = Filters {
            since: PlogTime::parse("2025-05-08-09:01:00.000.000"),
            ..Filters::default()
        };
        let c = summarize_in_chunks(&inputs, &since, Vec::new(), ONE).first_causal;
        assert!(c.and_then(|c| c.time) >= since.since, "{:?}", since.since);
        // Chunks shorter than a line with the filters that keep records by their continuation
        // lines and by what the causal engine reads; the others at page and larger sizes.
        for (f, tiny) in [
            (Filters::default(), true),
            (filters(&[Level::Error, Level::Warning], None), false),
            (filters(&[], Some("continuation")), true),
            (filters(&[], Some("EZ9999")), false),
            (pid, true),
            (since, false),
        ] {
            let sizes: Vec<u64> = tiny
                .then_some(37)
                .into_iter()
                .chain([4096, 100_000])
                .collect();
            same_for_every_chunk(&inputs, &f, &sizes);
        }
        std::fs::remove_dir_all(dir).unwrap();
    }
}
