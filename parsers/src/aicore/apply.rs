//! How each kind of evidence line fills an [`AicoreError`]: the field appliers the assembler
//! in the parent module calls once it knows which record a line belongs to.

use super::evidence::{self, Evidence, HeaderEvidence, KernelEvidence};
use super::{AicoreError, CoreError, ErrorKind, Fact, Register};

pub(super) fn set<T>(slot: &mut Option<Fact<T>>, value: Option<T>, line: u64) {
    if slot.is_none() {
        if let Some(value) = value {
            *slot = Some(Fact { value, line });
        }
    }
}

/// Adds a core to a record; the first core with a chip id gives the record's chip and die.
pub(super) fn attach_core(rec: &mut AicoreError, c: CoreError) {
    for f in [&c.serial, &c.core_id, &c.device, &c.chip_id]
        .into_iter()
        .flatten()
    {
        rec.touch(f.line);
    }
    if let Some(f) = &c.error_code {
        rec.touch(f.line);
    }
    if rec.chip_id.is_none() {
        rec.chip_id = c.chip_id.clone();
        rec.die_id = c.die_id.clone();
    }
    rec.cores.push(c);
}

pub(super) fn core_from_header(h: &HeaderEvidence, line: u64) -> CoreError {
    let f = |v: Option<u64>| v.map(|value| Fact { value, line });
    let s = |v: &Option<String>| v.clone().map(|value| Fact { value, line });
    let mut regs: Vec<Register> = h
        .registers
        .iter()
        .map(|(n, v)| Register {
            name: n.clone(),
            value: v.clone(),
            line,
        })
        .collect();
    regs.extend(h.extra.iter().map(|(n, v)| Register {
        name: n.clone(),
        value: v.clone(),
        line,
    }));
    CoreError {
        serial: f(h.serial),
        core_id: f(h.core_id),
        core_list: s(&h.core_list),
        device: f(h.device),
        chip_id: f(h.chip_id),
        die_id: f(h.die_id),
        error_code: s(&h.error_code),
        error_str: s(&h.error_str),
        registers: regs,
        ..CoreError::default()
    }
}

pub(super) fn apply_extend(c: &mut CoreError, e: evidence::ExtendEvidence, line: u64) {
    if !e.errcode.is_empty() {
        set(&mut c.errcode, Some(e.errcode), line);
    }
    set(&mut c.error_str, e.error_str, line);
    set(&mut c.sub_err_type, e.sub_err_type, line);
    set(&mut c.blk, e.blk, line);
    c.registers.extend(
        e.registers
            .into_iter()
            .map(|(name, value)| Register { name, value, line }),
    );
}

/// Combines what two lines say about the kind: an FFTS+ kernel line plus an `aicore error`
/// header is an FFTS+ AI Core error; a specific kind beats the generic `aicore`.
pub(super) fn refine(current: ErrorKind, new: ErrorKind) -> ErrorKind {
    use ErrorKind::*;
    match (current, new) {
        (FftsplusOther, Aicore) | (Aicore, FftsplusOther) => FftsplusAicore,
        (FftsplusOther, Aivec) | (Aivec, FftsplusOther) => FftsplusAivector,
        (Aicore, k) | (FftsplusOther, k) => k,
        (c, _) => c,
    }
}

pub(super) fn merge_kernel(r: &mut AicoreError, k: KernelEvidence, line: u64) {
    r.touch(line);
    r.kind = refine(r.kind, k.kind);
    set(&mut r.device_id, k.device, line);
    set(&mut r.stream_id, k.stream, line);
    set(&mut r.report_stream_id, k.report_stream, line);
    set(&mut r.task_id, k.task, line);
    set(&mut r.task_pos, k.task_pos, line);
    set(&mut r.flip_num, k.flip_num, line);
    set(&mut r.kernel_name, k.kernel_name, line);
    set(&mut r.func_name, k.func_name, line);
    set(&mut r.kernel_info_ext, k.kernel_info_ext, line);
    set(&mut r.program_id, k.program_id, line);
    set(&mut r.hash, k.hash, line);
    set(&mut r.block_dim, k.block_dim, line);
    set(&mut r.context_id, k.context_id, line);
    set(&mut r.thread_id, k.thread_id, line);
    set(&mut r.err_type, k.err_type, line);
    set(&mut r.task_error_code, k.error_code, line);
    set(&mut r.so_name, k.so_name, line);
    set(&mut r.op_name, k.op_name, line);
}

/// Applies a non-anchor piece of evidence to a record. `checked`: a task-failure line only
/// joins when its stream and task agree with the record's.
pub(super) fn apply_misc(r: &mut AicoreError, line: u64, ev: Evidence, checked: bool) {
    match ev {
        Evidence::TaskFailure {
            device,
            stream,
            task,
            ret_code,
        } => {
            let (rs, rt) = r.key();
            let agrees = |a: Option<u64>, b: Option<u64>| a.is_none() || b.is_none() || a == b;
            if checked && !(agrees(rs, stream) && agrees(rt, task)) {
                return;
            }
            r.touch(line);
            set(&mut r.device_id, device, line);
            set(&mut r.stream_id, stream, line);
            set(&mut r.task_id, task, line);
            set(&mut r.ret_code, ret_code, line);
        }
        Evidence::Header(h) => {
            if let Some(k) = h.kind {
                r.kind = refine(r.kind, k);
            }
        }
        Evidence::RetCode { code, stream } => {
            let rs = r.stream_id.as_ref().map(|f| f.value);
            if stream.is_some() && rs.is_some() && stream != rs {
                return;
            }
            r.touch(line);
            set(&mut r.ret_code, Some(code), line);
        }
        Evidence::AclCode { code, inner } => {
            r.touch(line);
            set(&mut r.acl_code, Some(code), line);
            set(&mut r.inner_code, inner, line);
        }
        Evidence::InnerCode(c) => {
            r.touch(line);
            set(&mut r.inner_code, Some(c), line);
        }
        Evidence::CannCode(c) => {
            if !r.cann_codes.iter().any(|f| f.value == c) {
                r.cann_codes.push(Fact { value: c, line });
            }
        }
        Evidence::Tiling {
            tiling_key,
            block_dim,
        } => {
            r.touch(line);
            set(&mut r.tiling_key, tiling_key, line);
            set(&mut r.block_dim, block_dim, line);
        }
        Evidence::AicNode {
            node_name,
            node_type,
            stream,
            task,
        } => {
            let (rs, rt) = r.key();
            if (stream.is_some() && rs.is_some() && stream != rs)
                || (task.is_some() && rt.is_some() && task != rt)
            {
                return;
            }
            r.touch(line);
            set(&mut r.aic_info.node_name, Some(node_name), line);
            set(&mut r.aic_info.node_type, node_type, line);
        }
        Evidence::AicField { key, value } => {
            r.touch(line);
            let a = &mut r.aic_info;
            let slot = match key.as_str() {
                "dev_func" => &mut a.dev_func,
                "tiling_key" => &mut a.tiling_key,
                "block_dim" => &mut a.block_dim,
                "op_file_path" => &mut a.op_file_path,
                "kernel_info" => &mut a.kernel_info,
                _ => return,
            };
            set(slot, Some(value), line);
        }
        Evidence::AicTensor(t) => {
            r.touch(line);
            r.aic_info.tensors.push(Fact { value: t, line });
        }
        Evidence::DumpFile(f) => {
            if !f.is_empty() {
                r.touch(line);
                r.dump_files.push(Fact { value: f, line });
            }
        }
        Evidence::KernelAssert(a) => {
            r.touch(line);
            r.asserts.push(Fact { value: a, line });
        }
        Evidence::FirmwareTask {
            device,
            stream,
            task,
            exception_code,
        } => {
            r.touch(line);
            set(&mut r.device_id, device, line);
            set(&mut r.stream_id, stream, line);
            set(&mut r.task_id, task, line);
            set(&mut r.exception_code, exception_code, line);
        }
        Evidence::Extend(_)
        | Evidence::CoreCode { .. }
        | Evidence::Kernel(_)
        | Evidence::FirmwareField { .. } => {}
    }
}

pub(super) fn firmware_field(r: &mut AicoreError, key: &str, value: String, line: u64) {
    r.touch(line);
    match key {
        "core_id" => r.cores.push(CoreError {
            core_id: value.parse().ok().map(|v| Fact { value: v, line }),
            ..CoreError::default()
        }),
        "core_list" => set(&mut r.core_list, Some(value), line),
        "AIC_ERROR" => {
            if let Some(c) = r.cores.last_mut() {
                set(&mut c.error_code, Some(value), line);
            }
        }
        _ => {
            if let Some(c) = r.cores.last_mut() {
                if c.core_id.is_some() && !c.registers.iter().any(|x| x.name == key) {
                    c.registers.push(Register {
                        name: key.to_owned(),
                        value,
                        line,
                    });
                }
            }
        }
    }
}
