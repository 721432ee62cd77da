//! AI Core / AI Vector / FFTS+ / AI CPU device errors: from log messages to one record per
//! failure, with the line of every field's evidence (spec §2).
//!
//! A failure is reported over many lines, in an order that changed with every CANN era: a
//! `Task run failed` line, one or more device-error headers (one per faulting core), the extend
//! info, retCode lines, the kernel identification line, GE's `[AIC_INFO]` block, dump file
//! names, ACL codes. [`evidence::classify`] recognises each line; [`AicoreAssembler`] groups the
//! pieces into [`AicoreError`] records:
//!
//! * a kernel line (`Aicore kernel execute failed`, FFTS+, AI CPU) or a header that names its own
//!   stream and task (HCCL FFTS+ timeout, STARS AI CPU) is an *anchor*; anchors with the same
//!   stream and task (and a compatible pid) are one record — repeats merge;
//! * headers, task failures, retCodes and other lines seen before an anchor wait and join the
//!   next anchor; after an anchor they join the most recent record;
//! * headers never followed by an anchor become a record of their own at the end;
//! * a value is taken from the first line that states it; a task-failure line whose stream or
//!   task differs from the kernel's (a model task in 2021 logs) is not merged.
//!
//! Fields that no line states stay `None`: nothing is inferred.
//!
//! ```
//! use npgx_parsers::aicore::scan_text;
//! let text = b"[ERROR] RUNTIME(9,p):2026-09-10-08:52:41.377.821 [stream.cc:1743]9 GetError:Stream Synchronize failed, stream_id=47, retCode=0x26, [aicore exception].\n\
//! [ERROR] RUNTIME(9,p):2026-09-10-08:52:41.377.875 [stream.cc:1746]9 GetError:[DFX_INFO]AI Core kernel execution failed, device_id=9, stream_id=47, report_stream_id=47, task_id=23064, flip_num=1564, fault kernel_name=MlaPrologV3_18fe_1836449, fault kernel info ext=none, program id=\n";
//! let errs = scan_text(text);
//! assert_eq!(errs.len(), 1);
//! let e = &errs[0];
//! assert_eq!(e.stream_id.as_ref().map(|f| (f.value, f.line)), Some((47, 2)));
//! assert_eq!(e.ret_code.as_ref().map(|f| (f.value.as_str(), f.line)), Some(("0x26", 1)));
//! assert!(e.hash.is_none());
//! ```

mod apply;
pub mod evidence;

use serde::{Deserialize, Serialize};

use crate::cann_error::tables;
pub use crate::kernel_assert::KernelAssert;
use crate::kv::parse_int;
use crate::plog::content::parse_content;
use crate::plog::header::parse_header;
use crate::plog::record::{lines, lossy};
use apply::{
    apply_extend, apply_misc, attach_core, core_from_header, firmware_field, merge_kernel, set,
};
use evidence::{classify, Evidence, HeaderEvidence, TensorDesc};

/// What failed.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    #[default]
    Aicore,
    Aivec,
    FftsplusAicore,
    FftsplusAivector,
    /// FFTS+ SDMA / DSA / unknown context type.
    FftsplusOther,
    Aicpu,
    HcclFftsplusTimeout,
    /// A task that waits for an event or a notify ran past its timeout (`event wait timeout`,
    /// `notify wait timeout`, the newer chips' `wait timeout … occurred during task execution`):
    /// the stream or rank it waits on stalled or failed first.
    WaitTimeout,
    /// Device firmware (TSCH) `<exception_print>` report.
    Firmware,
}

/// A value and the 1-based line it was read from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Fact<T> {
    pub value: T,
    pub line: u64,
}

/// A named register or extended-info value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Register {
    pub name: String,
    pub value: String,
    pub line: u64,
}

/// One faulting core: a device-error header plus its extend info.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CoreError {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_id: Option<Fact<u64>>,
    /// 2021 `core list[a-b]` / firmware `core_list=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_list: Option<Fact<String>>,
    /// Old `device(N)` form: can be the physical id and differ from the kernel line's `device_id`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chip_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die_id: Option<Fact<u64>>,
    /// `error code = …` as printed (hex, or decimal on A5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_str: Option<Fact<String>>,
    /// `errcode:(a, b, c)` words as printed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub errcode: Option<Fact<Vec<String>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sub_err_type: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blk: Option<Fact<u64>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub registers: Vec<Register>,
    /// Names of the set AIC_ERROR bits (from `errcode` when present, else `error_code`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub error_bits: Vec<String>,
}

/// GE's `[AIC_INFO]` block for the failing node.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AicInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_name: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_type: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dev_func: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiling_key: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_dim: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_file_path: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_info: Option<Fact<String>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tensors: Vec<Fact<TensorDesc>>,
}

impl AicInfo {
    fn is_empty(&self) -> bool {
        *self == AicInfo::default()
    }
}

/// One device error with every field found and the line that states it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AicoreError {
    pub kind: ErrorKind,
    /// Plog pid of the evidence lines, when they are plog records.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<i64>,
    /// First and last evidence line.
    pub first_line: u64,
    pub last_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chip_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub die_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub report_stream_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_id: Option<Fact<u64>>,
    /// A5 builds print `task_pos=` instead of `task_id=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_pos: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flip_num: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_name: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub func_name: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel_info_ext: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub program_id: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_dim: Option<Fact<u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tiling_key: Option<Fact<String>>,
    /// FFTS+ `err_type=12[fftsplus aivector error]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub err_type: Option<Fact<String>>,
    /// FFTS+ / AI CPU `error_code=` / `errorCode=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_error_code: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub so_name: Option<Fact<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub op_name: Option<Fact<String>>,
    /// TS retCode (`0x31`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ret_code: Option<Fact<String>>,
    /// ACL / runtime external code (`507035`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acl_code: Option<Fact<u64>>,
    /// Runtime inner code (`0x715005e`), opaque.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inner_code: Option<Fact<String>>,
    /// Firmware `exception_code=`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exception_code: Option<Fact<String>>,
    /// Firmware `core_list=` bit mask of the cores that reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_list: Option<Fact<String>>,
    /// CANN codes forwarded for this failure (`report error … module_name=EZ9999`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cann_codes: Vec<Fact<String>>,
    #[serde(default, skip_serializing_if = "AicInfo::is_empty")]
    pub aic_info: AicInfo,
    /// Exception dump files written for this failure.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dump_files: Vec<Fact<String>>,
    /// Assertions of the kernel's code that failed ([`KernelAssert`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asserts: Vec<Fact<KernelAssert>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cores: Vec<CoreError>,
    /// What the codes mean (`retCode 0x31: vector core exception`, `ACL 507035: …`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decoded: Vec<String>,
}

impl AicoreError {
    fn touch(&mut self, line: u64) {
        if self.first_line == 0 || line < self.first_line {
            self.first_line = line;
        }
        self.last_line = self.last_line.max(line);
    }

    fn key(&self) -> (Option<u64>, Option<u64>) {
        (
            self.stream_id.as_ref().map(|f| f.value),
            self.task_id
                .as_ref()
                .or(self.task_pos.as_ref())
                .map(|f| f.value),
        )
    }

    fn decode(&mut self) {
        let mut d = Vec::new();
        if let Some(r) = &self.ret_code {
            if let Some(t) = parse_int(&r.value).and_then(tables::ts_ret_code) {
                d.push(format!("retCode {}: {t}", r.value));
            }
        }
        if let Some(a) = &self.acl_code {
            if let Some(t) = tables::acl_code(a.value) {
                d.push(format!("ACL {}: {t}", a.value));
            }
        }
        for c in &mut self.cores {
            let words: Option<Vec<u64>> = match &c.errcode {
                Some(e) => e.value.iter().map(|w| parse_int(w)).collect(),
                None => c
                    .error_code
                    .as_ref()
                    .and_then(|e| parse_int(&e.value))
                    .map(|v| vec![v]),
            };
            // A5 prints a decimal code that is not a bit mask; do not decode it as one.
            let a5 = c
                .errcode
                .as_ref()
                .is_some_and(|e| e.value.len() == 1 && !e.value[0].starts_with("0x"));
            if let (Some(words), false) = (words, a5) {
                c.error_bits = tables::aic_error_bits(&words);
            }
        }
        self.decoded = d;
    }
}

/// How many lines before a failure's first header or kernel line a waiting piece of evidence
/// (task failure, retCode, dump file) may be and still join it.
const PENDING_WINDOW: u64 = 200;

#[derive(Debug, Default)]
struct Group {
    pid: Option<i64>,
    pending_cores: Vec<CoreError>,
    pending: Vec<(u64, Evidence)>,
    last: Option<usize>,
    last_aic: Option<usize>,
    firmware: Option<usize>,
}

/// Groups evidence lines into [`AicoreError`] records. Push messages in line order, then call
/// [`AicoreAssembler::finish`].
#[derive(Debug, Default)]
pub struct AicoreAssembler {
    records: Vec<AicoreError>,
    groups: Vec<Group>,
}

fn pid_compatible(a: Option<i64>, b: Option<i64>) -> bool {
    a.is_none() || b.is_none() || a == b
}

impl AicoreAssembler {
    /// Feeds one message: plog content after its prefix, a CANN report item, a continuation line
    /// or a bare console line. `line` is its 1-based line number; `pid` the plog pid if known.
    pub fn push(&mut self, line: u64, pid: Option<i64>, message: &str) {
        if let Some(ev) = classify(message) {
            self.apply(line, pid, ev);
        }
    }

    /// Whether the messages pushed so far hold a device error ([`Self::finish`] would return
    /// one): a reader that only asks whether a log holds one can stop here.
    pub fn holds_record(&self) -> bool {
        !self.records.is_empty() || self.groups.iter().any(|g| !g.pending_cores.is_empty())
    }

    fn group(&mut self, pid: Option<i64>) -> usize {
        match self.groups.iter().position(|g| g.pid == pid) {
            Some(i) => i,
            None => {
                self.groups.push(Group {
                    pid,
                    ..Group::default()
                });
                self.groups.len() - 1
            }
        }
    }

    fn find(&self, pid: Option<i64>, stream: Option<u64>, task: Option<u64>) -> Option<usize> {
        let (Some(_), Some(_)) = (stream, task) else {
            return None;
        };
        self.records
            .iter()
            .rposition(|r| pid_compatible(r.pid, pid) && r.key() == (stream, task))
    }

    fn new_record(&mut self, kind: ErrorKind, pid: Option<i64>, line: u64) -> usize {
        let mut r = AicoreError {
            kind,
            pid,
            ..AicoreError::default()
        };
        r.touch(line);
        self.records.push(r);
        self.records.len() - 1
    }

    fn apply(&mut self, line: u64, pid: Option<i64>, ev: Evidence) {
        let g = self.group(pid);
        match ev {
            Evidence::Header(h) if h.stream.is_some() && h.task.is_some() => {
                let idx = match self.find(pid, h.stream, h.task) {
                    Some(i) => i,
                    None => self.new_record(h.kind.unwrap_or_default(), pid, line),
                };
                let rec = &mut self.records[idx];
                set(&mut rec.stream_id, h.stream, line);
                set(&mut rec.task_id, h.task, line);
                attach_core(rec, core_from_header(&h, line));
                rec.touch(line);
                self.anchor(g, idx);
            }
            Evidence::Header(h) => {
                let core = core_from_header(&h, line);
                let grp = &mut self.groups[g];
                if let Some(k) = h.kind {
                    // A kind-less 2021 core-list line cannot name the kind; the next header can.
                    grp.pending.push((
                        line,
                        Evidence::Header(HeaderEvidence {
                            kind: Some(k),
                            ..HeaderEvidence::default()
                        }),
                    ));
                }
                grp.pending_cores.push(core);
            }
            Evidence::Extend(e) => {
                let grp = &mut self.groups[g];
                let target = match e.serial {
                    Some(s) => grp
                        .pending_cores
                        .iter_mut()
                        .rev()
                        .find(|c| c.serial.as_ref().map(|f| f.value) == Some(s)),
                    None => grp.pending_cores.last_mut(),
                };
                let target = match target {
                    Some(c) => Some(c),
                    None => grp
                        .last
                        .and_then(|i| self.records.get_mut(i))
                        .and_then(|r| {
                            r.touch(line);
                            r.cores.last_mut()
                        }),
                };
                if let Some(c) = target {
                    apply_extend(c, e, line);
                }
            }
            Evidence::CoreCode { core_id, code } => {
                let grp = &mut self.groups[g];
                if let Some(last) = grp.pending_cores.last_mut() {
                    if last.core_id.is_none() {
                        last.core_id = Some(Fact {
                            value: core_id,
                            line,
                        });
                        last.error_code = Some(Fact { value: code, line });
                    } else {
                        let mut c = CoreError {
                            device: last.device.clone(),
                            core_list: last.core_list.clone(),
                            ..CoreError::default()
                        };
                        c.core_id = Some(Fact {
                            value: core_id,
                            line,
                        });
                        c.error_code = Some(Fact { value: code, line });
                        grp.pending_cores.push(c);
                    }
                }
            }
            Evidence::Kernel(k) => {
                let task = k.task.or(k.task_pos);
                let idx = match self.find(pid, k.stream, task) {
                    Some(i) => i,
                    None => self.new_record(k.kind, pid, line),
                };
                merge_kernel(&mut self.records[idx], k, line);
                self.anchor(g, idx);
            }
            Evidence::TaskFailure { stream, task, .. } => match self.find(pid, stream, task) {
                Some(idx) => apply_misc(&mut self.records[idx], line, ev, true),
                None => self.groups[g].pending.push((line, ev)),
            },
            Evidence::AicNode { stream, task, .. } => {
                let idx = self.find(pid, stream, task).or(self.groups[g].last);
                match idx {
                    Some(i) if self.groups[g].pending_cores.is_empty() => {
                        apply_misc(&mut self.records[i], line, ev, false);
                        self.groups[g].last_aic = Some(i);
                    }
                    _ => self.groups[g].pending.push((line, ev)),
                }
            }
            Evidence::FirmwareTask { .. } => {
                let idx = self.new_record(ErrorKind::Firmware, pid, line);
                apply_misc(&mut self.records[idx], line, ev, false);
                let grp = &mut self.groups[g];
                grp.firmware = Some(idx);
                grp.last = Some(idx);
            }
            Evidence::FirmwareField { key, value } => {
                if let Some(i) = self.groups[g].firmware {
                    firmware_field(&mut self.records[i], &key, value, line);
                }
            }
            other => {
                let grp = &self.groups[g];
                let target = match other {
                    Evidence::AicField { .. } | Evidence::AicTensor(_) => grp.last_aic.or(grp.last),
                    _ => grp.last,
                };
                match target {
                    Some(i) if grp.pending_cores.is_empty() && grp.pending.is_empty() => {
                        apply_misc(&mut self.records[i], line, other, false);
                    }
                    _ => self.groups[g].pending.push((line, other)),
                }
            }
        }
    }

    /// Attaches what group `g` holds pending to record `idx` and makes it the group's latest.
    fn anchor(&mut self, g: usize, idx: usize) {
        let grp = &mut self.groups[g];
        let cores = std::mem::take(&mut grp.pending_cores);
        let mut pending = std::mem::take(&mut grp.pending);
        // Lines far before the first core header / the anchor belong to something else.
        let anchor_line = self.records[idx].first_line;
        let start = cores
            .iter()
            .filter_map(|c| {
                c.serial
                    .as_ref()
                    .or(c.core_id.as_ref())
                    .or(c.device.as_ref())
                    .or(c.chip_id.as_ref())
            })
            .map(|f| f.line)
            .min()
            .unwrap_or(anchor_line)
            .min(anchor_line);
        pending.retain(|(line, _)| line + PENDING_WINDOW >= start);
        grp.last = Some(idx);
        let rec = &mut self.records[idx];
        for c in cores {
            attach_core(rec, c);
        }
        let mut aic = false;
        for (line, ev) in pending {
            aic |= matches!(ev, Evidence::AicNode { .. });
            apply_misc(rec, line, ev, true);
        }
        if aic {
            grp.last_aic = Some(idx);
        }
    }

    /// Ends input: headers that no kernel line followed become records of their own. Returns
    /// the records in order of their first evidence line, with codes decoded.
    pub fn finish(mut self) -> Vec<AicoreError> {
        for g in 0..self.groups.len() {
            if self.groups[g].pending_cores.is_empty() {
                continue;
            }
            let line = self.groups[g]
                .pending_cores
                .iter()
                .filter_map(|c| c.serial.as_ref().or(c.core_id.as_ref()).map(|f| f.line))
                .chain(
                    self.groups[g]
                        .pending_cores
                        .iter()
                        .filter_map(|c| c.device.as_ref().or(c.chip_id.as_ref()).map(|f| f.line)),
                )
                .min()
                .unwrap_or(0);
            let pid = self.groups[g].pid;
            let idx = self.new_record(ErrorKind::Aicore, pid, line);
            self.anchor(g, idx);
        }
        for r in &mut self.records {
            r.decode();
        }
        self.records.sort_by_key(|r| r.first_line);
        self.records
    }
}

/// The message a physical line carries for the recognisers: plog content after its prefix
/// (with the record's pid), or the line with console prefixes and CANN code prefixes peeled.
pub fn line_message(line: &[u8]) -> (Option<i64>, String) {
    if let Some((h, rest)) = parse_header(line) {
        let text = lossy(rest);
        let msg = parse_content(h.module, &text).message.to_owned();
        return (Some(h.pid), msg);
    }
    let text = lossy(line);
    // Pasted console output: the causal engine's normalisation (Markdown quotes, then every
    // launcher and logger prefix of `line_prefix`).
    let p = crate::causal::normalise(&text);
    if let Some((h, rest)) = parse_header(p.rest.as_bytes()) {
        let text = lossy(rest);
        let msg = parse_content(h.module, &text).message.to_owned();
        return (Some(h.pid), msg);
    }
    (None, p.rest.trim().to_owned())
}

/// Every device error in a text (a plog, a device log or captured console output).
pub fn scan_text(text: &[u8]) -> Vec<AicoreError> {
    let mut asm = AicoreAssembler::default();
    for (no, line) in lines(text) {
        let (pid, msg) = line_message(line);
        asm.push(no, pid, &msg);
    }
    asm.finish()
}

#[cfg(test)]
mod tests {
    use super::apply::refine;
    use super::*;

    const HEADER: &str = "The error from device(chipId:0, dieId:0), serial number is 19, there is an aivec error exception, core id is 0, error code = 0, dump info: pc start: 0x12c100014f8c.";
    const KERNEL: &str = "Aicore kernel execute failed, device_id=0, stream_id=2, report_stream_id=2, task_id=1, flip_num=0, fault kernel_name=GatherV3_high_performance_10330, fault kernel info ext=none, program id=0, hash=9005124917278870274.";
    const RET_CODE: &str =
        "Stream Synchronize failed, stream_id=2, retCode=0x31, [vector core exception].";

    /// Feeds `(line, pid, message)` in order and finishes.
    fn assemble(lines: &[(u64, Option<i64>, &str)]) -> Vec<AicoreError> {
        let mut asm = AicoreAssembler::default();
        for &(line, pid, msg) in lines {
            asm.push(line, pid, msg);
        }
        asm.finish()
    }

    fn at<T: Clone>(f: &Option<Fact<T>>) -> Option<(T, u64)> {
        f.as_ref().map(|f| (f.value.clone(), f.line))
    }

    #[test]
    fn a_header_joins_the_next_kernel_line_and_repeats_merge() {
        let repeat = KERNEL.replace("hash=9005124917278870274", "hash=1");
        let errs = assemble(&[
            (1, Some(7), HEADER),
            (2, Some(7), KERNEL),
            (5, Some(7), &repeat),
        ]);
        assert_eq!(errs.len(), 1, "{errs:#?}");
        let e = &errs[0];
        // The header names the kind; the kernel line's generic `Aicore` does not override it.
        assert_eq!(e.kind, ErrorKind::Aivec);
        assert_eq!((e.first_line, e.last_line), (1, 5));
        assert_eq!(at(&e.stream_id), Some((2, 2)));
        assert_eq!(at(&e.task_id), Some((1, 2)));
        // A value comes from the first line that states it.
        assert_eq!(at(&e.hash), Some(("9005124917278870274".into(), 2)));
        assert_eq!(e.cores.len(), 1);
        assert_eq!(at(&e.cores[0].serial), Some((19, 1)));
        assert_eq!(at(&e.cores[0].core_id), Some((0, 1)));
        assert_eq!(
            (at(&e.chip_id), at(&e.die_id)),
            (Some((0, 1)), Some((0, 1)))
        );
    }

    #[test]
    fn a_header_no_kernel_line_follows_is_a_record_of_its_own() {
        let errs = assemble(&[(4, None, HEADER)]);
        assert_eq!(errs.len(), 1);
        // The header's own wording names the kind.
        assert_eq!(errs[0].kind, ErrorKind::Aivec);
        assert_eq!(errs[0].first_line, 4);
        assert_eq!(errs[0].cores.len(), 1);
        assert!(errs[0].stream_id.is_none(), "nothing is inferred");
    }

    #[test]
    fn waiting_evidence_joins_only_within_the_window() {
        let near = assemble(&[(100, None, RET_CODE), (300, None, KERNEL)]);
        assert_eq!(at(&near[0].ret_code), Some(("0x31".into(), 100)));
        assert_eq!(near[0].first_line, 100);
        assert!(
            near[0].decoded[0].starts_with("retCode 0x31: "),
            "{:?}",
            near[0].decoded
        );
        let far = assemble(&[(99, None, RET_CODE), (300, None, KERNEL)]);
        assert_eq!(far.len(), 1);
        assert!(far[0].ret_code.is_none());
        assert_eq!(far[0].first_line, 300);
    }

    #[test]
    fn a_task_failure_of_another_task_does_not_join() {
        let other = "Task run failed, device_id=0, stream_id=2, task_id=9, retCode=0x91";
        let same = "Task run failed, device_id=0, stream_id=2, task_id=1, retCode=0x31";
        let errs = assemble(&[(1, None, other), (2, None, KERNEL)]);
        assert_eq!(errs.len(), 1);
        assert_eq!(at(&errs[0].task_id), Some((1, 2)));
        assert!(errs[0].ret_code.is_none());
        let errs = assemble(&[(1, None, same), (2, None, KERNEL)]);
        assert_eq!(at(&errs[0].ret_code), Some(("0x31".into(), 1)));
        assert_eq!(errs[0].first_line, 1);
    }

    #[test]
    fn each_pid_assembles_apart() {
        let errs = assemble(&[(1, Some(1), HEADER), (2, Some(2), KERNEL)]);
        assert_eq!(errs.len(), 2, "{errs:#?}");
        assert_eq!((errs[0].pid, errs[0].first_line), (Some(1), 1));
        assert_eq!(errs[0].cores.len(), 1);
        assert_eq!((errs[1].pid, errs[1].first_line), (Some(2), 2));
        assert!(errs[1].cores.is_empty());
    }

    #[test]
    fn kinds_refine_from_generic_to_specific() {
        use ErrorKind::*;
        assert_eq!(refine(FftsplusOther, Aicore), FftsplusAicore);
        assert_eq!(refine(Aivec, FftsplusOther), FftsplusAivector);
        assert_eq!(refine(Aicore, Aicpu), Aicpu);
        assert_eq!(refine(Aivec, Aicore), Aivec);
        assert_eq!(refine(Firmware, Aivec), Firmware);
    }

    #[test]
    fn an_a5_decimal_code_is_not_read_as_error_bits() {
        let extend = |codes: &str| {
            format!("The extend info: errcode:({codes}) errorStr: x. blk:3, subErrType:4.")
        };
        let (a5, bits) = (extend("95"), extend("0, 0x8000, 0"));
        let errs = assemble(&[(1, None, HEADER), (2, None, &a5), (3, None, KERNEL)]);
        assert_eq!(errs[0].cores[0].errcode.as_ref().map(|f| f.line), Some(2));
        assert!(errs[0].cores[0].error_bits.is_empty());
        let errs = assemble(&[(1, None, HEADER), (2, None, &bits), (3, None, KERNEL)]);
        assert!(!errs[0].cores[0].error_bits.is_empty());
    }

    #[test]
    fn line_message_reads_plog_and_console_lines() {
        let plog = format!("[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.527.785 [davinci_kernel_task.cc:1381]155320 PrintErrorInfoForDavinciTask:{KERNEL}");
        let (pid, msg) = line_message(plog.as_bytes());
        assert_eq!(pid, Some(155320));
        assert!(msg.starts_with("Aicore kernel execute failed"), "{msg}");
        let (pid, msg) = line_message(format!("  {RET_CODE}  ").as_bytes());
        assert_eq!((pid, msg.as_str()), (None, RET_CODE));
        let errs = scan_text(format!("{plog}\nunrelated\n{plog}\n").as_bytes());
        assert_eq!(errs.len(), 1);
        assert_eq!((errs[0].first_line, errs[0].last_line), (1, 3));
    }
}
