//! torch_npu / npugraph_ex error-code lines (spec §3.4):
//!
//! ```text
//! line = "[ERROR] " (date "-" time " ")? "(PID:" pid ", Device:" dev ", RankID:" rank ") "
//!        "ERR" SS EEE " " SUBMODULE " " text
//! ```
//!
//! `SS` is the sub-module (00 PTA, 01 OPS, 02 DIST, 03 GRAPH, 04 PROF), `EEE` the error type
//! (100 call acl api failed, 005 internal error, …). `RankID` may be `-1`; the timestamp may be
//! missing. Call on a line with external prefixes already peeled ([`crate::line_prefix::strip_prefixes`]).

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use super::tables;

/// One torch_npu `ERRxxxxx` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TorchNpuError {
    /// 1-based line number (set by the caller; 0 from [`parse_torch_npu_line`]).
    pub line: u64,
    /// `YYYY-MM-DD-hh:mm:ss` as printed, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    pub pid: u64,
    pub device: i64,
    pub rank: i64,
    /// `ERR01100`.
    pub code: String,
    /// `OPS` as printed.
    pub submodule: String,
    /// The error type's meaning from the torch_npu table, if known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_type: Option<Cow<'static, str>>,
    pub text: String,
}

/// Parses one torch_npu error-code line; `None` for anything else.
///
/// ```
/// use npgx_parsers::cann_error::torch_npu::parse_torch_npu_line;
/// let e = parse_torch_npu_line("[ERROR] 2026-05-08-03:20:32 (PID:920, Device:12, RankID:-1) ERR02005 DIST internal error").unwrap();
/// assert_eq!((e.pid, e.device, e.rank, e.code.as_str(), e.submodule.as_str()), (920, 12, -1, "ERR02005", "DIST"));
/// assert_eq!(e.time.as_deref(), Some("2026-05-08-03:20:32"));
/// ```
pub fn parse_torch_npu_line(line: &str) -> Option<TorchNpuError> {
    let r = line.strip_prefix("[ERROR] ")?;
    let (time, r) = match crate::needles::find(r, " (PID:") {
        Some(0) => (None, r),
        Some(p) if r.starts_with(|c: char| c.is_ascii_digit()) => {
            (Some(r[..p].to_owned()), &r[p + 1..])
        }
        _ => (None, r),
    };
    let r = r.strip_prefix("(PID:")?;
    let (pid, r) = r.split_once(", Device:")?;
    let (dev, r) = r.split_once(", RankID:")?;
    let (rank, r) = r.split_once(") ")?;
    let r = r.strip_prefix("ERR")?;
    if r.len() < 5 || !r.as_bytes()[..5].iter().all(u8::is_ascii_digit) {
        return None;
    }
    let digits = &r[..5];
    let r = r[5..].strip_prefix(' ')?;
    let (sub, text) = r.split_once(' ').unwrap_or((r, ""));
    let eee: u32 = digits[2..].parse().ok()?;
    Some(TorchNpuError {
        line: 0,
        time,
        pid: pid.trim().parse().ok()?,
        device: dev.trim().parse().ok()?,
        rank: rank.trim().parse().ok()?,
        code: format!("ERR{digits}"),
        submodule: sub.to_owned(),
        error_type: tables::torch_npu_error_type(eee).map(Cow::Borrowed),
        text: text.trim_end().to_owned(),
    })
}

/// The `HcclResult` value torch_npu prints for an HCCL call that failed (`HCCL function error:
/// HcclGetRootInfo(&hcclID), error code is 11`, its HCCL_CHECK_ERROR wording): the number, for
/// [`super::tables::hccl_result`] to name.
pub fn hccl_call_result(line: &str) -> Option<u64> {
    const WORDING: &str = "HCCL function error: ";
    const LEAD: &str = ", error code is ";
    let call = &line[line.find(WORDING)? + WORDING.len()..];
    let value = &call[call.rfind(LEAD)? + LEAD.len()..];
    let digits = value.bytes().take_while(u8::is_ascii_digit).count();
    if value[digits..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
        return None;
    }
    value.get(..digits)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_timestamp() {
        let e = parse_torch_npu_line(
            "[ERROR] (PID:360123, Device:6, RankID:6) ERR01100 OPS call acl api failed.",
        )
        .unwrap();
        assert_eq!(
            (e.time, e.rank, e.error_type.as_deref()),
            (None, 6, Some("call acl api failed"))
        );
        assert_eq!(e.text, "call acl api failed.");
    }

    #[test]
    fn rejects_others() {
        assert!(
            parse_torch_npu_line("[ERROR] RUNTIME(1,p):2025-01-01-00:00:00.000.000 x").is_none()
        );
        assert!(parse_torch_npu_line("[ERROR] (PID:1, Device:2, RankID:3) ERR1 X").is_none());
        assert!(parse_torch_npu_line("").is_none());
    }

    #[test]
    fn an_hccl_calls_result() {
        assert_eq!(
            hccl_call_result("RuntimeError: f:x.ts:1 HCCL function error: HcclGetRootInfo(&id), error code is 11"),
            Some(11)
        );
        for none in [
            "HCCL function error: f(), error code is 7x",
            "NPU function error: f(), error code is 7",
            "ProcessGroupHCCL.cpp:12 error code is 4",
            "HCCL function error: f(), error code is ",
        ] {
            assert_eq!(hccl_call_result(none), None, "{none}");
        }
    }
}
