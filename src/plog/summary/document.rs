//! The `npgx.plog` document: what a summary holds — per process, per file, the first ERROR and
//! the first causal error, CANN error reports and torch_npu lines.

use std::collections::BTreeMap;
use std::path::PathBuf;

use npgx_parsers::aicore::{Fact, KernelAssert};
use npgx_parsers::cann_error::torch_npu::TorchNpuError;
use npgx_parsers::cann_error::CannErrorReport;
use npgx_parsers::causal::{remedies_with_assert, CausalError, CauseRank, Remedy, Shape, Tier};
use npgx_parsers::plog::path::LogFileKind;
use npgx_parsers::plog::{Level, PlogTime};
use npgx_parsers::versions::Framework;
use serde::{Deserialize, Serialize};

use crate::plog::Warning;

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
    /// A file's first causal error, with its remedies (`assert`: the kernel assertion that
    /// belongs to it, by `aicore`'s grouping) for a program on `framework` (read from the file's
    /// head as `triage classify` reads it).
    pub(super) fn new(
        file: &std::path::Path,
        e: CausalError,
        assert: Option<&Fact<KernelAssert>>,
        framework: Framework,
    ) -> CausalRef {
        let remedy = remedies_with_assert(
            &e,
            assert.map(|a| (a.line, &a.value)),
            file.to_str(),
            framework,
        );
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
    /// The line `triage classify` cites when this report is the error: the TraceBack item its
    /// failure came from, an external code's head, or `causal_line`.
    pub cited_line: u64,
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
