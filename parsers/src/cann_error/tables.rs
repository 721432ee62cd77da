//! Code tables (spec §2.6, §3.1): what a code means. Unknown values give `None`; callers keep
//! the raw value. CANN families, code titles and runtime numbers live in [`crate::knowledge`].

use crate::knowledge;

/// TS retCode (device task status) → text printed by the runtime.
pub fn ts_ret_code(code: u64) -> Option<&'static str> {
    Some(match code {
        0x25 => "aicore timeout",
        0x26 => "aicore exception",
        0x27 => "aicore trap exception",
        0x28 => "aicpu timeout",
        0x2a => "aicpu exception",
        0x2f => "aicore overflow",
        0x30 => "vector core timeout",
        0x31 => "vector core exception",
        0x32 => "vector core trap exception",
        0x58 => "aicore mte error",
        0x5d => "link error",
        0x91 => "the model stream execute failed",
        0x105 => "task timeout",
        0x10f => "fftsplus task exception",
        _ => return None,
    })
}

/// ACL / runtime external error code (`ErrCode=507035`, `runtime result = 507035`) → meaning,
/// from the knowledge table ([`crate::knowledge`]): a known number, or the 107xxx range.
pub fn acl_code(code: u64) -> Option<&'static str> {
    knowledge::runtime_code(code)
        .filter(|f| !f.key.ends_with('*') || f.key == "107*")
        .map(|f| f.meaning)
}

/// `report error module_type=N` → the inner code the runtime forwards.
pub fn module_type_code(module_type: u64) -> Option<&'static str> {
    Some(match module_type {
        0 => "E39999",
        1 => "EL9999",
        2 => "EI9999",
        3 => "EE8888",
        4 => "EK9999",
        5 => "EZ9999",
        6 | 7 => "EE9999",
        8 => "E29999",
        9 => "E30008",
        10 => "EE1001",
        _ => return None,
    })
}

/// Second character of a CANN error code → component (the knowledge table's family rows).
pub fn module_letter(c: char) -> Option<&'static str> {
    let mut buf = [0u8; 4];
    let code = format!("E{}", c.encode_utf8(&mut buf));
    knowledge::code_family(&code).map(|f| f.meaning)
}

/// Known titles of CANN error codes (the knowledge table's code rows).
pub fn code_title(code: &str) -> Option<&'static str> {
    knowledge::cann_code(code).map(|f| f.meaning)
}

/// HCCL's `HcclResult` value → its name (after `HCCL_E_`) and meaning, as hccl_types.h comments
/// them (hicann/hccl docs/api/context/HcclResult.md; OPRETRY_FAIL and OOM in later releases).
pub fn hccl_result(v: u64) -> Option<(&'static str, &'static str)> {
    const RESULTS: [(&str, &str); 25] = [
        ("SUCCESS", "success"),
        ("PARA", "parameter error"),
        ("PTR", "empty pointer"),
        ("MEMORY", "memory error"),
        ("INTERNAL", "internal error"),
        ("NOT_SUPPORT", "feature not supported"),
        ("NOT_FOUND", "a specific resource not found"),
        ("UNAVAIL", "resource unavailable"),
        ("SYSCALL", "a system call failed"),
        ("TIMEOUT", "timeout"),
        ("OPEN_FILE_FAILURE", "a file could not be opened"),
        ("TCP_CONNECT", "TCP connection failed"),
        ("ROCE_CONNECT", "RoCE connection failed"),
        ("TCP_TRANSFER", "TCP transfer failed"),
        ("ROCE_TRANSFER", "RoCE transfer failed"),
        ("RUNTIME", "a runtime API call failed"),
        ("DRV", "a driver API call failed"),
        ("PROFILING", "a profiling API call failed"),
        ("CCE", "a CCE API call failed"),
        ("NETWORK", "a network API call failed"),
        ("AGAIN", "try again"),
        ("REMOTE", "error completion from the remote end (CQE)"),
        ("SUSPENDING", "the communicator is suspending"),
        ("OPRETRY_FAIL", "a retry constraint"),
        ("OOM", "out of memory"),
    ];
    RESULTS.get(usize::try_from(v).ok()?).copied()
}

/// torch_npu `ERR«SS»«EEE»`: sub-module `SS`.
pub fn torch_npu_submodule(ss: u32) -> Option<&'static str> {
    Some(match ss {
        0 => "PTA",
        1 => "OPS",
        2 => "DIST",
        3 => "GRAPH",
        4 => "PROF",
        _ => return None,
    })
}

/// torch_npu `ERR«SS»«EEE»`: error type `EEE`.
pub fn torch_npu_error_type(eee: u32) -> Option<&'static str> {
    Some(match eee {
        100 => "call acl api failed",
        200 => "call hccl api failed",
        300 => "call ge api failed",
        1 => "parameter invalid",
        2 => "type invalid",
        3 => "value invalid",
        4 => "pointer invalid",
        5 => "internal error",
        6 => "memory error",
        7 => "feature not supported",
        8 => "resource not found",
        9 => "resource unavailable",
        10 => "system call failed",
        11 => "timeout",
        12 => "permission error",
        _ => return None,
    })
}

/// Selected AIC_ERROR bits (old msaicerr dictionary; bit index over the 192-bit
/// `errcode:(a, b, c)` = `a | b << 64 | c << 128`).
const AIC_ERROR_BITS: &[(u32, &str)] = &[
    (0, "biu_l2_read_oob"),
    (1, "biu_l2_write_oob"),
    (2, "ccu_call_depth_overflow"),
    (3, "ccu_div0"),
    (
        4,
        "ccu_illegal_instr (bad binary or unaligned instruction address)",
    ),
    (5, "ccu_loop_cnt_err"),
    (6, "ccu_loop_err"),
    (9, "cube_invld_input (NaN/Inf input)"),
    (17, "cube_l0c_rdwr_cflt (L0C read/write conflict)"),
    (20, "ifu_bus_err"),
    (23, "mte_biu_rdwr_resp (MTE DDR address out of range)"),
    (33, "mte_gdma_write_overflow (DMA write out of bounds)"),
    (52, "vec_div0"),
    (53, "vec_illegal_mask (MASK all zero)"),
    (54, "vec_inf_nan"),
    (62, "vec_ub_wrap_around (UB address out of bounds)"),
    (63, "biu_dfx_err"),
    (64 + 12, "vec_instr_illegal_cfg"),
    (64 + 15, "ccu_bus_err (D-cache <-> UB bus error)"),
    (64 + 31, "dcache 2-bit ECC (hardware fault)"),
];

/// Names of the set bits of an AI Core error code given as its 64-bit words (`error code = X`
/// gives one word; `errcode:(a, b, c)` three). Bits without a name are reported as `bit N`.
/// Returns an empty list for an all-zero code (timeout or trap).
pub fn aic_error_bits(words: &[u64]) -> Vec<String> {
    let mut out = Vec::new();
    for (w, word) in words.iter().enumerate().take(3) {
        for b in 0..64u32 {
            if word >> b & 1 == 1 {
                let bit = w as u32 * 64 + b;
                match AIC_ERROR_BITS.iter().find(|(n, _)| *n == bit) {
                    Some((_, name)) => out.push((*name).to_owned()),
                    None => out.push(format!("bit {bit}")),
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(ts_ret_code(0x31), Some("vector core exception"));
        assert_eq!(ts_ret_code(0x1), None);
        assert_eq!(acl_code(507035), Some("vector core exception"));
        assert_eq!(module_type_code(5), Some("EZ9999"));
        assert_eq!(module_letter('I'), Some("HCCL"));
        assert_eq!(hccl_result(11).map(|r| r.0), Some("TCP_CONNECT"));
        assert_eq!(hccl_result(99), None);
        assert_eq!(torch_npu_submodule(2), Some("DIST"));
    }

    #[test]
    fn bits() {
        assert_eq!(
            aic_error_bits(&[0x10]),
            ["ccu_illegal_instr (bad binary or unaligned instruction address)"]
        );
        assert_eq!(
            aic_error_bits(&[0, 0x8000, 0]),
            ["ccu_bus_err (D-cache <-> UB bus error)"]
        );
        assert_eq!(aic_error_bits(&[0x800000]).len(), 1);
        assert!(aic_error_bits(&[0, 0, 0]).is_empty());
        assert_eq!(aic_error_bits(&[1 << 7]), ["bit 7"]);
    }
}
