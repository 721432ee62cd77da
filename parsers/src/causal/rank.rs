//! How directly one error line explains a failure: the rank part of the causal ordering
//! (spec `plog-and-errors.md` §6.5, §4.5). The engine in [`super`] orders candidates by tier
//! (strong, signal, cascade, soft) and then by this rank, then by line.
//!
//! A failing run prints the same failure many times, loudest last: the device reports a task
//! failure, the runtime forwards it to the error manager, every stream synchronisation fails,
//! ACL and the framework fail in turn, a watchdog gives up. Users who `tail -1` pick the
//! propagation. Here every candidate line gets a [`CauseRank`] and the lowest rank wins, then the
//! earliest line:
//!
//! 1. [`CauseRank::DeviceFault`] — device-side markers: `Task run failed`, `Task exception!`,
//!    device-error headers, HCCL FFTS+ timeout, `Notify wait execute failed`, FFTS+ task failures,
//!    device firmware (TSCH) errors;
//! 2. [`CauseRank::ErrorReport`] — a CANN error report (its root message; within a report the
//!    first message is the causal one);
//! 3. [`CauseRank::TaskError`] — an ERROR record carrying a retCode, an HCCL `errNo`, or a
//!    kernel failure line, and any error of HCCP (the agent HCCL drives for its links) not in
//!    cascade wording;
//! 4. [`CauseRank::Error`] — any other ERROR record;
//! 5. [`CauseRank::Framework`] — torch_npu `ERRxxxxx` lines and MindSpore error lines;
//! 6. [`CauseRank::Cascade`] — propagation: stream synchronisation without a code, dump progress,
//!    `report error module_type=…`, failure-abort, watchdog, `[AIC_INFO]` args, table rulers.

use std::sync::LazyLock;

use serde::{Deserialize, Serialize};

use crate::needles::Needles;

/// How directly a line explains a failure; lower is more causal.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CauseRank {
    DeviceFault,
    ErrorReport,
    TaskError,
    Error,
    Framework,
    Cascade,
}

impl CauseRank {
    /// The snake-case name used in JSON (`device_fault`).
    pub fn name(self) -> &'static str {
        match self {
            CauseRank::DeviceFault => "device_fault",
            CauseRank::ErrorReport => "error_report",
            CauseRank::TaskError => "task_error",
            CauseRank::Error => "error",
            CauseRank::Framework => "framework",
            CauseRank::Cascade => "cascade",
        }
    }
}

const DEVICE_MARKERS: &[&str] = &[
    "task run failed",
    "task exception!",
    "the error from device(",
    "an error occurs on the device(",
    "hccl fftsplus task timeout",
    "notify wait execute failed",
    "fftsplus task execution failed",
    "fftsplus task execute failed",
    // The driver's console print of the exception (`Message info[0]:RTS_HWTS: aicore exception`).
    "]:rts_hwts: ",
];

const CASCADES: &[&str] = &[
    "report error module_type",
    "[dump][exception]",
    "enter failure abort",
    "watchdog",
    "synchronize stream failed",
    "stream synchronize failed",
    "execute failed, reason=",
    "is abort",
    "[aic_info]",
    "print end",
    "taskfailcallback",
    "execute model failed",
    "model synchronize execute failed",
    "fail to synchronize",
    "stop scheduling in abort",
    // CANN's error manager failing to format a message it was handed (error_manager.cc:
    // `FormatErrorMessage failed, ret:-1, pattern:%s[FUNC:%s]…`): about its own formatting,
    // not the failure, which the records after it state.
    "formaterrormessage failed",
];

/// Phrases of a task's own failure report.
const TASK_ERRORS: &[&str] = &[
    "retcode=",
    "errno[",
    "kernel execute failed",
    "kernel execution failed",
    "kernel task happen error",
];

/// Ranks an ERROR plog record's message. `module` matters for device firmware (`TSCH`) and for
/// HCCP, the agent HCCL drives for its RDMA and socket links: an HCCP error is the failure the
/// HCCL records after it report with their `errNo[…]` (`ra hdc message process failed ret(-67)`
/// before `[RaRdma]errNo[0x…] rdma init fail`), so it ranks with them and, first, is cited.
///
/// ```
/// use npgx_parsers::causal::rank::{rank_plog_error, CauseRank};
/// assert_eq!(rank_plog_error("RUNTIME", "Task run failed, device_id=0"), CauseRank::DeviceFault);
/// assert_eq!(rank_plog_error("RUNTIME", "Stream Synchronize failed, stream_id=47, retCode=0x26, [aicore exception]."), CauseRank::TaskError);
/// assert_eq!(rank_plog_error("RUNTIME", "Stream synchronize failed, stream_id=2, timeout=-1ms."), CauseRank::Cascade);
/// assert_eq!(rank_plog_error("IDEDD", "[Dump][Exception] end to load tiling data, index:30"), CauseRank::Cascade);
/// assert_eq!(rank_plog_error("HCCP", "[init][ra_hdc_rdev]ra hdc message process failed ret(-67) phy_id(0)"), CauseRank::TaskError);
/// assert_eq!(rank_plog_error("HCCP", "thread is abort"), CauseRank::Cascade);
/// ```
pub fn rank_plog_error(module: &str, message: &str) -> CauseRank {
    // Every ERROR record of a plog is ranked: the phrase lists' searchers are built once.
    static DEVICE: LazyLock<Needles> =
        LazyLock::new(|| Needles::new(DEVICE_MARKERS.iter().copied()));
    static REPORTS: LazyLock<Needles> =
        LazyLock::new(|| Needles::new(["report error module_type", "[dump]"]));
    static TASK: LazyLock<Needles> = LazyLock::new(|| Needles::new(TASK_ERRORS.iter().copied()));
    static CASCADE: LazyLock<Needles> = LazyLock::new(|| Needles::new(CASCADES.iter().copied()));
    let lower = message.to_ascii_lowercase();
    if module == "TSCH" || DEVICE.any_in(&lower) {
        return CauseRank::DeviceFault;
    }
    if is_ruler(message) || REPORTS.any_in(&lower) {
        return CauseRank::Cascade;
    }
    if TASK.any_in(&lower) {
        return CauseRank::TaskError;
    }
    if CASCADE.any_in(&lower) {
        return CauseRank::Cascade;
    }
    if module == "HCCP" {
        return CauseRank::TaskError;
    }
    CauseRank::Error
}

/// HCCL table rulers and titles: `____LINK_ERROR_INFO____`, `|-----|`.
fn is_ruler(message: &str) -> bool {
    let t = message.trim();
    t.starts_with(['_', '|', '-'])
        && !t
            .chars()
            .filter(|c| !matches!(c, '_' | '|' | '-' | ' '))
            .any(|c| c.is_ascii_lowercase())
}

/// MindSpore's own logger: `[ERROR] MODULE(pid,tid,pname):ts [path:line] Func] msg`, levels
/// `ERROR`, `EXCEPTION`, `CRITICAL`.
pub fn is_framework_error_line(line: &str) -> bool {
    let Some(r) = ["[ERROR] ", "[EXCEPTION] ", "[CRITICAL] "]
        .iter()
        .find_map(|p| line.strip_prefix(p))
    else {
        return false;
    };
    let Some(open) = r.find('(') else {
        return false;
    };
    let Some(close) = r[open..].find("):") else {
        return false;
    };
    r[open..open + close].matches(',').count() == 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rulers_are_cascade_but_table_rows_are_not() {
        assert_eq!(
            rank_plog_error("HCCL", "  ______LINK_ERROR_INFO______"),
            CauseRank::Cascade
        );
        assert_eq!(
            rank_plog_error("HCCL", "  |  comm error, device[0] num[1] "),
            CauseRank::Error
        );
        assert_eq!(rank_plog_error("TSCH", "slot_id=0"), CauseRank::DeviceFault);
    }

    // The plog summary ranks every ERROR record here too (src/plog/summary): the error manager's
    // failure to format a message is a cascade there as in a paste.
    #[test]
    fn the_error_managers_own_formatting_failure_is_a_cascade() {
        assert_eq!(
            rank_plog_error("GE", "FormatErrorMessage: [INIT][OPS_KER][Check][Param] FormatErrorMessage failed, ret:-1, pattern:%s[FUNC:%s][FILE:%s][LINE:%d]"),
            CauseRank::Cascade
        );
        assert_ne!(
            rank_plog_error("FE", "OpenPlugin:\"[FEInit][OpPluginSo] Fail to load so file /x/libops_fusion_pass_aicore.so, error message is (null).\""),
            CauseRank::Cascade
        );
    }

    #[test]
    fn mindspore_lines() {
        assert!(is_framework_error_line("[ERROR] DEVICE(2420702,fffe06ffd1e0,python):2023-11-20-15:34:32.886.561 [a.cc:761] F] m"));
        assert!(!is_framework_error_line(
            "[ERROR] RUNTIME(1,p):2023-11-20-15:34:32.886.561 x"
        ));
    }
}
