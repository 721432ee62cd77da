//! `npgx plog --records`: every record that passes the filters, streamed in file and line order.

use std::io;
use std::ops::ControlFlow;
use std::path::PathBuf;

use npgx_parsers::plog::record::{lossy, RecordAssembler};
use npgx_parsers::plog::{Level, PlogHeader, PlogRecord, PlogTime};
use serde::Serialize;

use crate::dump::mapped::Mode;
use crate::plog::reader::{map_chunks_within, ChunkLines, CHUNK};
use crate::plog::{Filters, LogInput, Warning};

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
/// Each file is read in chunks on all cores ([`map_chunks_within`], through a mapping when `map`
/// says so, a few chunks in flight per core), its records built and filtered there and handed to
/// `sink` in order on this thread; the records do not depend on the chunk size or the way the
/// file is read. An error from `sink` (a closed pipe) stops the output and is returned.
pub fn for_each_record(
    inputs: &[LogInput],
    filters: &Filters,
    map: Mode,
    warnings: &mut Vec<Warning>,
    sink: impl FnMut(&RecordOut) -> io::Result<()>,
) -> io::Result<()> {
    records_in_chunks(inputs, filters, (CHUNK, map), warnings, sink)
}

/// One chunk's records: the lines before its first header line (the record the chunk before it
/// left open goes on in them; kept as bytes, `lead_ends` where each ends, and decoded only if
/// that record was kept), the records that end inside it and pass the filters, and the one still
/// open at its end.
struct ChunkRecords {
    lead: Vec<u8>,
    lead_ends: Vec<usize>,
    started: bool,
    done: Vec<PlogRecord>,
    open: Option<PlogRecord>,
    lines: u64,
}

/// [`for_each_record`] in chunks of `chunk` bytes (the tests' smaller ones too).
fn records_in_chunks(
    inputs: &[LogInput],
    filters: &Filters,
    (chunk, map): (u64, Mode),
    warnings: &mut Vec<Warning>,
    mut sink: impl FnMut(&RecordOut) -> io::Result<()>,
) -> io::Result<()> {
    // The header filters choose the records the assembler builds; the text filter reads them.
    let keep = |h: &PlogHeader<'_>| filters.accepts_header(h);
    let grep = filters.grep.as_deref();
    let accept = |r: &PlogRecord| {
        grep.is_none_or(|g| r.text.contains(g) || r.continuation.iter().any(|c| c.contains(g)))
    };
    let scan = |lines: ChunkLines<'_>| {
        let mut asm = RecordAssembler::default();
        let (mut lead, mut lead_ends, mut done) = (Vec::new(), Vec::new(), Vec::new());
        let stats = lines.for_each(|no, line| {
            if let Some(r) = asm.push_kept(no, line, keep) {
                if accept(&r) {
                    done.push(r);
                }
            }
            if !asm.started() {
                lead.extend_from_slice(line);
                lead_ends.push(lead.len());
            }
        });
        ChunkRecords {
            lead,
            lead_ends,
            started: asm.started(),
            done,
            open: asm.finish(),
            lines: stats.lines,
        }
    };
    // A chunk's records take about three times its bytes, and one thread writes them: the
    // summary's chunks in flight per core, but at most 16 whatever the core count.
    let window = (4 * rayon::current_num_threads()).clamp(4, 16);
    for input in inputs {
        let mut failed: io::Result<()> = Ok(());
        let (mut base, mut pending) = (0u64, None::<PlogRecord>);
        let mut put = |r: PlogRecord, failed: &mut io::Result<()>| {
            if failed.is_ok() {
                *failed = sink(&RecordOut::new(&input.path, r));
            }
        };
        let res = map_chunks_within(&input.path, (chunk, map, window), scan, |c| {
            if let Some(p) = pending.as_mut() {
                let mut from = 0;
                for &end in &c.lead_ends {
                    p.continuation.push(lossy(&c.lead[from..end]));
                    from = end;
                }
            }
            if c.started {
                if let Some(p) = pending.take().filter(|p| accept(p)) {
                    put(p, &mut failed);
                }
                for mut r in c.done {
                    r.line += base;
                    put(r, &mut failed);
                }
                pending = c.open.map(|mut r| {
                    r.line += base;
                    r
                });
            }
            base += c.lines;
            // Nothing more is read once the output is gone.
            if failed.is_ok() {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        });
        failed?;
        if let Err(e) = res {
            warnings.push(Warning::io(&input.path, &format!("cannot read: {e}")));
            continue;
        }
        if let Some(p) = pending.filter(|p| accept(p)) {
            sink(&RecordOut::new(&input.path, p))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use npgx_parsers::plog::Level;
    use std::path::Path;

    /// The records of `inputs` read in chunks of `chunk` bytes, as JSON lines.
    fn records(inputs: &[LogInput], filters: &Filters, chunk: (u64, Mode)) -> Vec<String> {
        let (mut out, mut warnings) = (Vec::new(), Vec::new());
        records_in_chunks(inputs, filters, chunk, &mut warnings, |r| {
            out.push(serde_json::to_string(r).expect("a record serialises"));
            Ok(())
        })
        .expect("the samples read");
        assert!(warnings.is_empty(), "{warnings:?}");
        out
    }

    // Lines before the first header, a kept record whose only match is a continuation line, a
    // refused record with continuations, CRLF, a `[rankN]:` header: at every chunk size, the
    // parser's assembly of the whole text, filtered.
    #[test]
    fn records_across_every_chunk_boundary_are_the_filtered_whole_pass() {
        let text: &[u8] = b"not a plog line\nanother preamble line\n\
[ERROR] RUNTIME(7,python3):2025-05-08-09:56:20.763.494 [a.cc:1]7 first error\n\
  cont 1 of first\n  cont 2 has the needle\n\
[INFO] GE(7,python3):2025-05-08-09:56:20.763.495 [b.cc:2]7 an info\n  info cont with needle\r\n\
[ERROR] HCCL(8,python3):2025-05-08-09:56:20.763.496 [c.cc:3]8 second error\r\n\r\n\
[rank3]:[ERROR] RUNTIME(9,python3):2025-05-08-09:56:20.763.497 [d.cc:4]9 needle in a ranked header\n  tail\n";
        let path = std::env::temp_dir().join(format!("npgx-records-{}.log", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let inputs = [LogInput {
            path: path.clone(),
            info: None,
            folder: None,
        }];
        let all = npgx_parsers::plog::record::parse_records(text);
        assert_eq!(all.len(), 4);
        let errors = Filters {
            levels: vec![Level::Error],
            grep: Some("needle".into()),
            ..Filters::default()
        };
        let any = |_: &PlogRecord| true;
        let needle = |r: &PlogRecord| {
            r.level == Level::Error
                && (r.text.contains("needle")
                    || r.continuation.iter().any(|c| c.contains("needle")))
        };
        type Keep<'a> = &'a dyn Fn(&PlogRecord) -> bool;
        let cases: [(Filters, Keep<'_>); 2] = [(Filters::default(), &any), (errors, &needle)];
        for (filters, keep) in cases {
            let want: Vec<String> = all
                .iter()
                .filter(|r| keep(r))
                .map(|r| serde_json::to_string(&RecordOut::new(&path, r.clone())).unwrap())
                .collect();
            assert!(!want.is_empty());
            let chunks = (1..=text.len() as u64).map(|c| (c, Mode::Never));
            for chunk in chunks.chain([(4096, Mode::Always)]) {
                assert_eq!(records(&inputs, &filters, chunk), want, "chunk {chunk:?}");
            }
        }
        // A sink that fails (a closed pipe) at the third record: two written, then its error.
        let mut n = 0;
        let res = records_in_chunks(
            &inputs,
            &Filters::default(),
            (7, Mode::Never),
            &mut Vec::new(),
            |_| {
                n += 1;
                if n > 2 {
                    Err(io::Error::from(io::ErrorKind::BrokenPipe))
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(
            (res.map_err(|e| e.kind()), n),
            (Err(io::ErrorKind::BrokenPipe), 3)
        );
        std::fs::remove_file(&path).unwrap();
    }

    // The records do not depend on the chunk size or the way a file is read (records whose
    // continuation lines run into the next chunk, chunks with no header line), and in one chunk
    // they are the parser's own assembly of the whole file.
    #[test]
    fn chunked_records_of_the_samples_equal_one_pass() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples");
        let mut warnings = Vec::new();
        let mut inputs = crate::plog::discover(&[root.join("cann")], &mut warnings);
        // The console captures too, named explicitly (their names are not CANN log names).
        let mut logs: Vec<std::path::PathBuf> = std::fs::read_dir(root.join("logs"))
            .expect("the shared log samples")
            .filter_map(|e| Some(e.ok()?.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "log"))
            .collect();
        logs.sort();
        let consoles = crate::plog::discover(&logs, &mut warnings);
        inputs.extend(consoles.iter().cloned());
        assert!(inputs.len() > 60, "{} inputs", inputs.len());
        assert!(warnings.is_empty(), "{warnings:?}");
        let errors = Filters {
            levels: vec![Level::Error],
            grep: Some("rror".into()),
            ..Filters::default()
        };
        // Chunks shorter than most lines on the console captures only (every chunk size of a
        // crafted text is the test above); page-sized and larger ones over every sample.
        let tiny = [(53, Mode::Never)];
        let larger = [
            (4096, Mode::Never),
            (4096, Mode::Always),
            (1 << 20, Mode::Always),
        ];
        for filters in [&Filters::default(), &errors] {
            for (inputs, chunks, least) in [(&inputs, &larger[..], 200), (&consoles, &tiny[..], 20)]
            {
                let whole = records(inputs, filters, (1 << 40, Mode::Never));
                assert!(whole.len() > least, "{} records", whole.len());
                for &chunk in chunks {
                    let got = records(inputs, filters, chunk);
                    assert_eq!(got.len(), whole.len(), "chunk {chunk:?}");
                    if let Some(at) = got.iter().zip(&whole).position(|(a, b)| a != b) {
                        panic!("chunk {chunk:?}, record {at}: {} vs {}", got[at], whole[at]);
                    }
                }
            }
        }
        let mut lines = Vec::new();
        for input in &inputs {
            let bytes = std::fs::read(&input.path).expect("a sample reads");
            lines.extend(
                npgx_parsers::plog::record::parse_records(&bytes)
                    .into_iter()
                    .map(|r| (r.line, r.continuation.len())),
            );
        }
        let whole = records(&inputs, &Filters::default(), (1 << 40, Mode::Never));
        let got: Vec<(u64, usize)> = whole
            .iter()
            .map(|j| {
                let v: serde_json::Value = serde_json::from_str(j).expect("JSON");
                let n = v["continuation"].as_array().map_or(0, Vec::len);
                (v["line"].as_u64().expect("a line"), n)
            })
            .collect();
        assert_eq!(got, lines);
    }
}
