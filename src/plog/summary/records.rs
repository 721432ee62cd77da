//! `npgx plog --records`: every record that passes the filters, streamed in file and line order.

use std::io;
use std::path::PathBuf;

use npgx_parsers::plog::record::RecordAssembler;
use npgx_parsers::plog::{Level, PlogHeader, PlogRecord, PlogTime};
use serde::Serialize;

use crate::plog::reader::for_each_line;
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
/// An error from `sink` (a closed pipe) stops the scan and is returned.
pub fn for_each_record(
    inputs: &[LogInput],
    filters: &Filters,
    warnings: &mut Vec<Warning>,
    mut sink: impl FnMut(&RecordOut) -> io::Result<()>,
) -> io::Result<()> {
    // The header filters choose the records the assembler builds; the text filter reads them.
    let keep = |h: &PlogHeader<'_>| filters.accepts_header(h);
    let grep = filters.grep.as_deref();
    let accept = |r: &PlogRecord| {
        grep.is_none_or(|g| r.text.contains(g) || r.continuation.iter().any(|c| c.contains(g)))
    };
    for input in inputs {
        let mut asm = RecordAssembler::default();
        let mut failed: io::Result<()> = Ok(());
        let res = for_each_line(&input.path, |no, line| {
            if failed.is_err() {
                return;
            }
            if let Some(r) = asm.push_kept(no, line, keep) {
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
