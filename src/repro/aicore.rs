//! The target from an AI Core error: the plog scanner's records (`npgx aicore`), of which the
//! chosen one names the kernel (`fault kernel_name`), the GE node (`[AIC_INFO] node_name`), the
//! device symbol (`dev_func` / `func_name`), stream, task, block dim, tiling key and tiling data.

use std::path::Path;

use npgx_parsers::aicore::AicoreError;

use crate::plog::aicore::{scan_aicore, FileAicoreError};
use crate::plog::discover;

use super::case::{Evidence, RuntimeTensor, Target};

/// What the error gives beyond the target.
#[derive(Clone, Debug, Default)]
pub struct FromError {
    pub target: Target,
    /// `[AIC_INFO] dev_func` or `func_name`: the device symbol of the kernel binary.
    pub device_symbol: Option<String>,
    pub block_dim: Option<i64>,
    pub tiling_key: Option<u64>,
    /// How many device errors the logs hold (the case is for one).
    pub errors_found: usize,
    /// Exception dump files the logs say were written for this error.
    pub dump_files: Vec<String>,
}

/// Whether a record names an operator at all.
fn names_op(e: &AicoreError) -> bool {
    e.kernel_name.is_some() || e.aic_info.node_name.is_some() || e.aic_info.dev_func.is_some()
}

fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// Scans `path` (a log file or a collection directory) and takes the `nth` (1-based) device
/// error that names an operator, in the scanner's order (files in writing order, then lines).
pub fn target(path: &Path, nth: usize) -> anyhow::Result<FromError> {
    let mut warnings = Vec::new();
    let inputs = discover::discover(&[path.to_path_buf()], &mut warnings);
    if inputs.is_empty() {
        anyhow::bail!(
            "{}: no CANN log files found (plog-*.log, device-*.log, or a file given directly)",
            path.display()
        );
    }
    let scan = scan_aicore(&inputs, warnings);
    // The same failure is often logged in several files (rotated or per-process plogs): keep
    // the first record of each (device, stream, task, kernel, node).
    let mut seen = std::collections::HashSet::new();
    let named: Vec<&FileAicoreError> = scan
        .errors
        .iter()
        .filter(|e| names_op(&e.error))
        .filter(|e| seen.insert(identity(&e.error)))
        .collect();
    let Some(chosen) = named.get(nth.saturating_sub(1)) else {
        if scan.errors.is_empty() {
            // What the scan noticed (a traceback that names a device fault's number says where
            // the record is) belongs in the message: the command stops here.
            let noticed: String = scan
                .warnings
                .iter()
                .map(|w| format!("; {}: {}", w.file.display(), w.message))
                .collect();
            anyhow::bail!(
                "{}: no device error found ({} log file(s) read): repro --from-aicore needs an AI \
                 Core / AI Vector / FFTS+ exception that names its kernel or node{noticed}",
                path.display(),
                scan.files.len()
            );
        }
        if named.is_empty() {
            anyhow::bail!(
                "{}: none of its {} device error(s) names an operator (kernel or node), so there \
                 is nothing to rerun ({} log file(s) read; an HCCL or wait timeout names none: \
                 read every rank's logs instead)",
                path.display(),
                scan.errors.len(),
                scan.files.len()
            );
        }
        anyhow::bail!(
            "{}: {} device error(s) name an operator, so there is no error number {nth} ({} log file(s) read)",
            path.display(),
            named.len(),
            scan.files.len()
        );
    };
    Ok(from_record(&chosen.file, &chosen.error, named.len()))
}

type Identity = (
    Option<u64>,
    Option<u64>,
    Option<u64>,
    Option<String>,
    Option<String>,
);

fn identity(e: &AicoreError) -> Identity {
    (
        e.device_id.as_ref().map(|f| f.value),
        e.stream_id.as_ref().map(|f| f.value),
        e.task_id.as_ref().or(e.task_pos.as_ref()).map(|f| f.value),
        e.kernel_name.as_ref().map(|f| f.value.clone()),
        e.aic_info.node_name.as_ref().map(|f| f.value.clone()),
    )
}

/// `[64]`, `[2, 3]`, `[]` → dims.
fn parse_shape(s: &str) -> Option<Vec<i64>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?.trim();
    if inner.is_empty() {
        return Some(Vec::new());
    }
    inner.split(',').map(|d| d.trim().parse().ok()).collect()
}

fn from_record(file: &Path, e: &AicoreError, errors_found: usize) -> FromError {
    let evidence_line = e
        .kernel_name
        .as_ref()
        .map(|f| f.line)
        .or(e.aic_info.node_name.as_ref().map(|f| f.line))
        .unwrap_or(e.first_line);
    let target = Target {
        source: "aicore".to_string(),
        op_name: e.aic_info.node_name.as_ref().map(|f| f.value.clone()),
        kernel_name: e.kernel_name.as_ref().map(|f| f.value.clone()),
        device_id: e.device_id.as_ref().map(|f| f.value),
        stream_id: e.stream_id.as_ref().map(|f| f.value),
        task_id: e.task_id.as_ref().or(e.task_pos.as_ref()).map(|f| f.value),
        evidence: Some(Evidence {
            file: file.display().to_string(),
            line: Some(evidence_line),
        }),
        runtime_tensors: e
            .aic_info
            .tensors
            .iter()
            .filter_map(|f| {
                Some(RuntimeTensor {
                    io: f.value.io.clone(),
                    index: usize::try_from(f.value.index).ok()?,
                    shape: f.value.shape.as_deref().and_then(parse_shape),
                    format: f.value.format.clone(),
                    dtype: f.value.dtype.clone(),
                    line: f.line,
                })
            })
            .collect(),
    };
    FromError {
        target,
        device_symbol: e
            .aic_info
            .dev_func
            .as_ref()
            .or(e.func_name.as_ref())
            .map(|f| f.value.clone()),
        block_dim: e
            .block_dim
            .as_ref()
            .map(|f| f.value)
            .or_else(|| {
                e.aic_info
                    .block_dim
                    .as_ref()
                    .and_then(|f| parse_u64(&f.value))
            })
            .and_then(|v| i64::try_from(v).ok()),
        tiling_key: e
            .tiling_key
            .as_ref()
            .or(e.aic_info.tiling_key.as_ref())
            .and_then(|f| parse_u64(&f.value)),
        errors_found,
        dump_files: e.dump_files.iter().map(|f| f.value.clone()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        assert_eq!(parse_shape("[64]"), Some(vec![64]));
        assert_eq!(parse_shape("[2, 3]"), Some(vec![2, 3]));
        assert_eq!(parse_shape("[]"), Some(vec![]));
        assert_eq!(parse_shape("64"), None);
        assert_eq!(parse_u64("0x10"), Some(16));
    }
}
