//! `npgx aicore`: every AI Core / AI Vector / FFTS+ / AI CPU device error in plogs, device logs
//! or captured console output, one record per failure, each field with the line that states it.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::LazyLock;

use npgx_parsers::aicore::evidence::classify;
use npgx_parsers::aicore::{
    line_message, AicoreAssembler, AicoreError, ErrorKind, Fact, KernelAssert,
};
use npgx_parsers::causal::phase::runtime_number;
use npgx_parsers::causal::{
    kernel_assert_remedy, plogs_instead, reads_device_records, table_remedy, CausalError,
    CauseRank, Remedy,
};
use npgx_parsers::knowledge;
use npgx_parsers::needles::Needles;
use serde::{Deserialize, Serialize};

use super::reader::for_each_line;
use super::{LogInput, Warning};

/// One device error and the file its evidence lines are in.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct FileAicoreError {
    pub file: PathBuf,
    #[serde(flatten)]
    pub error: AicoreError,
}

/// Name of the document of an [`AicoreScan`] (schema `npgx.aicore`).
pub const SCHEMA_NAME: &str = "aicore";
/// Version of the `npgx.aicore` document of an [`AicoreScan`].
pub const SCHEMA_VERSION: u32 = 1;

/// The fields of the `npgx.aicore` document (inside the envelope of docs/json.md): what
/// `--format json` writes and what the HTML report reads back.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AicoreDocument<'a> {
    pub errors: Cow<'a, [FileAicoreError]>,
    /// What to check or change for the first device error (a device fault: its kernel, its
    /// inputs), with its source; empty without errors (absent in documents before it was added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub remedy: Vec<Remedy>,
    /// What could not be read or parsed, and a log that names a device fault's runtime error
    /// without its record (where the record is); what the command prints on stderr (absent when
    /// there is none, and in documents before it was added).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<Warning>,
}

/// The result of `npgx aicore`.
#[derive(Debug, Clone, Serialize)]
pub struct AicoreScan {
    pub errors: Vec<FileAicoreError>,
    pub files: Vec<PathBuf>,
    pub warnings: Vec<Warning>,
}

impl FileAicoreError {
    /// The evidence line of every fact of the error, its cores' (registers included) and its
    /// AIC_INFO's: the lines a report quotes beside the facts.
    pub fn evidence_lines(&self) -> Vec<u64> {
        fn at<T>(f: &Option<Fact<T>>) -> Option<u64> {
            f.as_ref().map(|f| f.line)
        }
        let e = &self.error;
        let a = &e.aic_info;
        let mut lines: Vec<u64> = [
            at(&e.device_id),
            at(&e.chip_id),
            at(&e.die_id),
            at(&e.stream_id),
            at(&e.report_stream_id),
            at(&e.task_id),
            at(&e.task_pos),
            at(&e.flip_num),
            at(&e.context_id),
            at(&e.thread_id),
            at(&e.kernel_name),
            at(&e.func_name),
            at(&e.kernel_info_ext),
            at(&e.program_id),
            at(&e.hash),
            at(&e.block_dim),
            at(&e.tiling_key),
            at(&e.err_type),
            at(&e.task_error_code),
            at(&e.so_name),
            at(&e.op_name),
            at(&e.ret_code),
            at(&e.acl_code),
            at(&e.inner_code),
            at(&e.exception_code),
            at(&e.core_list),
            at(&a.node_name),
            at(&a.node_type),
            at(&a.dev_func),
            at(&a.tiling_key),
            at(&a.block_dim),
            at(&a.op_file_path),
            at(&a.kernel_info),
        ]
        .into_iter()
        .flatten()
        .collect();
        lines.extend(e.cann_codes.iter().map(|f| f.line));
        lines.extend(e.dump_files.iter().map(|f| f.line));
        lines.extend(e.asserts.iter().map(|f| f.line));
        lines.extend(a.tensors.iter().map(|f| f.line));
        for c in &e.cores {
            lines.extend(
                [
                    at(&c.serial),
                    at(&c.core_id),
                    at(&c.core_list),
                    at(&c.device),
                    at(&c.chip_id),
                    at(&c.die_id),
                    at(&c.error_code),
                    at(&c.error_str),
                    at(&c.errcode),
                    at(&c.sub_err_type),
                    at(&c.blk),
                ]
                .into_iter()
                .flatten(),
            );
            lines.extend(c.registers.iter().map(|r| r.line));
        }
        lines
    }
}

impl AicoreScan {
    /// The scan's `npgx.aicore` document.
    pub fn document(&self) -> AicoreDocument<'_> {
        AicoreDocument {
            errors: Cow::Borrowed(&self.errors),
            remedy: self.remedy(),
            warnings: self.warnings.clone(),
        }
    }

    /// The remedy of the first device error, as `triage classify` and `plog` give it, for the
    /// program its file's head names (`framework_of`; a plog names none, so PyTorch's words,
    /// the default): the kernel's own failed
    /// assertion first, when the error has one; then the table's row for what the error is — a
    /// collective's timeout or a wait for an event or notify that timed out (`kind:collective`:
    /// the root is the rank or stream waited on), the nature of its runtime error number
    /// (`507014` is a timeout), else a device fault. Checks that rerun `npgx aicore`, the command
    /// that printed them, are left out.
    pub fn remedy(&self) -> Vec<Remedy> {
        let Some(e) = self.errors.first() else {
            return Vec::new();
        };
        let file = e.file.to_str();
        let framework = super::reader::framework_of(&e.file);
        let row = if matches!(
            e.error.kind,
            ErrorKind::HcclFftsplusTimeout | ErrorKind::WaitTimeout
        ) {
            table_remedy("kind:collective", file, framework)
        } else {
            e.error
                .acl_code
                .as_ref()
                .and_then(|c| knowledge::runtime_code(c.value))
                .and_then(|f| f.nature)
                .and_then(|n| table_remedy(&format!("nature:{}", n.name()), file, framework))
                .or_else(|| table_remedy("nature:device-fault", file, framework))
        };
        e.error
            .asserts
            .first()
            .map(|a| kernel_assert_remedy(a.line, &a.value, file))
            .into_iter()
            .chain(row)
            .map(|mut r| {
                r.check.retain(|c| !c.starts_with("npgx aicore "));
                r
            })
            .collect()
    }
}

/// Words that every line carrying device-error evidence contains (case-insensitive check on
/// ASCII lower-case bytes); lines without any are skipped cheaply.
const HINTS: &[&[u8]] = &[
    b"fail",
    b"error",
    b"exception",
    b"retcode",
    b"aic_info",
    b"tilingkey",
    b"errcode",
    b"result",
    b"dump",
    b"coreid(",
    b"core list",
    b"extend info",
    b"core_id",
    b"pc_start",
    b"para_base",
    b"core_list",
    b"rtcode",
];

fn may_carry_evidence(line: &[u8], lower: &mut Vec<u8>) -> bool {
    static ANY: LazyLock<Needles> = LazyLock::new(|| Needles::new(HINTS.iter().copied()));
    lower.clear();
    lower.extend(line.iter().map(u8::to_ascii_lowercase));
    ANY.any_in(lower)
}

/// Phrases that only device-error lines contain.
fn looks_like_evidence(msg: &str) -> bool {
    static ANY: LazyLock<Needles> = LazyLock::new(|| {
        Needles::new([
            "fault kernel_name",
            "the error from device",
            "an error occurs on the device",
        ])
    });
    ANY.any_in(msg.to_ascii_lowercase())
}

/// One log's lines into device-error records: the lines that may carry evidence go to the
/// assembler; the first [`MAX_UNPARSED`] that look like evidence and parse as none are kept.
#[derive(Default)]
struct DeviceErrors {
    asm: AicoreAssembler,
    scratch: Vec<u8>,
    unparsed: Vec<u64>,
    /// The first runtime error number of a device fault or timeout the log names (`error code is
    /// 507035`), with its line: what to say when the log holds no device record.
    named: Option<(u64, u64)>,
    /// The first line of the driver's console print of a device exception (`Message
    /// info[0]:RTS_HWTS: aicore exception, slot_id=31, stream_id=3`): a fault whose records are
    /// in the plogs, not here.
    printed: Option<u64>,
}

/// Lines that look like device-error evidence but parse as none, warned about per file.
const MAX_UNPARSED: usize = 20;

impl DeviceErrors {
    fn push(&mut self, no: u64, line: &[u8]) {
        if self.printed.is_none() && memchr::memmem::find(line, b"]:RTS_HWTS: ").is_some() {
            self.printed = Some(no);
        }
        if may_carry_evidence(line, &mut self.scratch) {
            let (pid, msg) = line_message(line);
            let may_name = || device_side_leads().any_in(&self.scratch);
            if self.named.is_none() && may_name() {
                self.named = runtime_number(&msg)
                    .filter(|&n| knowledge::is_device_side(n))
                    .map(|n| (no, n));
            }
            if looks_like_evidence(&msg)
                && classify(&msg).is_none()
                && self.unparsed.len() < MAX_UNPARSED
            {
                self.unparsed.push(no);
            }
            self.asm.push(no, pid, &msg);
        }
    }
}

/// The first three digits of every device-side runtime error number in the knowledge table
/// (`507`, `107`, `207`), as searchers: a line without any names none, and is not parsed for
/// one.
fn device_side_leads() -> &'static Needles {
    static LEADS: LazyLock<Needles> = LazyLock::new(|| {
        let mut leads: Vec<&str> = knowledge::facts()
            .iter()
            .filter(|f| f.kind == knowledge::Kind::Runtime)
            .filter(|f| f.is_device_side())
            .filter_map(|f| f.key.get(..3))
            .collect();
        leads.sort_unstable();
        leads.dedup();
        Needles::new(leads)
    });
    &LEADS
}

/// Lines read before and after a device error's line for its assertion (its record starts a few
/// lines before the error npgx names; the device prints the assertion after the fault's records).
const ASSERT_BEFORE: u64 = 256;
const ASSERT_AFTER: u64 = 10_000;

/// The kernel's failed assertion that belongs to a first causal error, by aicore's grouping (the
/// record of that process that holds the error's line): what its remedy quotes. Only a device
/// fault has one, and the log is read again (`read` hands over its lines until its callback
/// returns false) only when its causal scan `saw_assert` an `[ASSERT]` line, and then only from
/// [`ASSERT_BEFORE`] lines before the error to [`ASSERT_AFTER`] after it.
pub fn assertion_for(
    err: &CausalError,
    saw_assert: bool,
    read: impl FnOnce(&mut dyn FnMut(u64, &[u8]) -> bool) -> std::io::Result<super::reader::ReadStats>,
) -> Option<Fact<KernelAssert>> {
    if !saw_assert || err.rank != CauseRank::DeviceFault {
        return None;
    }
    let line = err.line;
    let (from, to) = (
        line.saturating_sub(ASSERT_BEFORE),
        line.saturating_add(ASSERT_AFTER),
    );
    let mut d = DeviceErrors::default();
    read(&mut |no, l| {
        if (from..=to).contains(&no) {
            d.push(no, l);
        }
        no < to
    })
    .ok()?;
    d.asm
        .finish()
        .into_iter()
        .find(|e| (e.first_line..=e.last_line).contains(&line))?
        .asserts
        .into_iter()
        .next()
}

/// Whether the lines `read` hands over hold a device-error record, as `npgx aicore` reads them
/// (an unreadable text holds none); the reader is asked to stop at the first.
fn holds_device_record(
    read: impl FnOnce(&mut dyn FnMut(u64, &[u8]) -> bool) -> std::io::Result<super::reader::ReadStats>,
) -> bool {
    let mut d = DeviceErrors::default();
    read(&mut |no, l| {
        d.push(no, l);
        !d.asm.holds_record()
    })
    .is_ok()
        && d.asm.holds_record()
}

/// Points a first causal error's `npgx aicore` / `npgx repro --from-aicore` checks (filled for
/// `file`) at the failing process's plogs when the file holds no device-error record — a
/// traceback or a paste names a device fault whose records CANN wrote there: `plogs` when the
/// caller knows that folder, else `<PLOG_DIR>`. The file (`read` hands its lines over again, up
/// to its first record) is read only when a check would read those records — a device fault's
/// own line does not say the file holds a record aicore reads (`Task run failed … sqe_type=3(place
/// holder)` does not); `triage classify`, `triage analyze` and `plog` all ask here.
pub fn point_device_readers(
    remedy: &mut [Remedy],
    file: Option<&str>,
    plogs: Option<&str>,
    read: impl FnOnce(&mut dyn FnMut(u64, &[u8]) -> bool) -> std::io::Result<super::reader::ReadStats>,
) {
    if remedy.iter().any(|r| reads_device_records(r, file)) && !holds_device_record(read) {
        for r in remedy.iter_mut() {
            plogs_instead(r, file, plogs);
        }
    }
}

/// Scans every input; unreadable files become warnings. Errors are grouped per file (evidence
/// never spans files) and returned in input order, then line order.
pub fn scan_aicore(inputs: &[LogInput], mut warnings: Vec<Warning>) -> AicoreScan {
    let mut errors = Vec::new();
    let mut files = Vec::new();
    // The first file that names a device-side runtime error number, its line and the number.
    let mut named: Option<(PathBuf, u64, u64)> = None;
    // The first file with the driver's console print of a device exception, and its line.
    let mut printed: Option<(PathBuf, u64)> = None;
    for input in inputs {
        let mut d = DeviceErrors::default();
        let res = for_each_line(&input.path, |no, line| d.push(no, line));
        if let Err(e) = res {
            warnings.push(Warning::io(&input.path, &format!("cannot read: {e}")));
            continue;
        }
        warnings.extend(d.unparsed.iter().map(|&no| Warning {
            file: input.path.clone(),
            line: Some(no),
            message: "looks like a device-error line but could not be parsed".into(),
        }));
        if let Some((no, n)) = d.named {
            named.get_or_insert((input.path.clone(), no, n));
        }
        if let Some(no) = d.printed {
            printed.get_or_insert((input.path.clone(), no));
        }
        files.push(input.path.clone());
        errors.extend(d.asm.finish().into_iter().map(|error| FileAicoreError {
            file: input.path.clone(),
            error,
        }));
    }
    // A traceback that names a device fault's number without its record: say where it is (only
    // when no input holds a record).
    if let (true, Some((file, no))) = (errors.is_empty(), printed) {
        warnings.push(Warning {
            file,
            line: Some(no),
            message: format!(
                "the driver's console print of a device exception (`EXCEPTION STREAM:`, \
                 `RTS_HWTS`) but no input holds a device-error record: the device's records are \
                 in the failing process's plogs ({})",
                super::PLOG_LOCATION
            ),
        });
    } else if let (true, Some((file, no, n))) = (errors.is_empty(), named) {
        let meaning = knowledge::runtime_code(n).map_or("a device-side error", |f| f.meaning);
        warnings.push(Warning {
            file,
            line: Some(no),
            message: format!(
                "names runtime error {n} ({meaning}) but no input holds a device-error record: the \
                 device's records are in the failing process's plogs ({})",
                super::PLOG_LOCATION
            ),
        });
    }
    AicoreScan {
        errors,
        files,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::FileAicoreError;

    /// Every `line` number in a record's JSON, at any depth.
    fn json_lines(v: &Value, out: &mut BTreeSet<u64>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x.as_u64()) {
                        ("line", Some(l)) => {
                            out.insert(l);
                        }
                        _ => json_lines(x, out),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|x| json_lines(x, out)),
            _ => {}
        }
    }

    #[test]
    fn evidence_lines_are_the_line_of_every_fact() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples/logs");
        let (mut errors, mut with_cores, mut with_aic_info) = (0, 0, 0);
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read(&path).unwrap();
            for error in npgx_parsers::aicore::scan_text(&text) {
                errors += 1;
                with_cores += usize::from(!error.cores.is_empty());
                with_aic_info += usize::from(error.aic_info.node_name.is_some());
                let e = FileAicoreError {
                    file: path.clone(),
                    error,
                };
                let mut want = BTreeSet::new();
                json_lines(&serde_json::to_value(&e).unwrap(), &mut want);
                let got: BTreeSet<u64> = e.evidence_lines().into_iter().collect();
                assert_eq!(got, want, "{}", path.display());
            }
        }
        assert!(
            errors > 10 && with_cores > 0 && with_aic_info > 0,
            "{errors} errors, {with_cores} with cores, {with_aic_info} with AIC_INFO"
        );
    }

    // Wider-world batch 29's grading: the driver's console print of a device exception, pasted
    // without the plogs, says where the records are (it returned nothing and exit 0 before).
    #[test]
    fn a_printed_device_exception_says_where_its_records_are() {
        let dir = std::env::temp_dir().join(format!("npgx-aicore-printed-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("paste.txt");
        std::fs::write(
            &path,
            "EXCEPTION STREAM:\n  Exception info:TGID=1, model id=65535, stream id=3, stream phase=3\n  Message info[0]:RTS_HWTS: aicore exception, slot_id=31, stream_id=3\nRuntimeError: The Inner error is reported as above.\n",
        )
        .unwrap();
        let input = super::LogInput {
            path: path.clone(),
            info: None,
            folder: None,
        };
        let scan = super::scan_aicore(&[input], Vec::new());
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(scan.errors.is_empty());
        assert!(
            scan.warnings
                .iter()
                .any(|w| w.line == Some(3) && w.message.contains("console print")),
            "{:?}",
            scan.warnings.iter().map(|w| &w.message).collect::<Vec<_>>()
        );
    }
}
