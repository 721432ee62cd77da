//! Line-level recognisers: what one message says about a device error (spec §2.1–§2.5, §2.7).
//!
//! Each recogniser takes one message (plog content after its prefix, a CANN error-report item,
//! or a bare console line) and returns an [`Evidence`] with the fields that message holds.
//! Matching is case-insensitive and order-free (the key/value bag of [`super::kv`]), so wording
//! drift between eras (six device-error header variants, five kernel-line variants) is covered
//! by keywords, not by one regex per era.

use super::ErrorKind;
use crate::knowledge::{HCCL_TIMEOUT, WAIT_TIMEOUT};
use crate::kv::{parse_int, KvBag};

/// One register or extended-info value from a device-error header (`pc start`, `vec error info`).
pub type Register = (String, String);

/// A device-error header (`The error from device(…)`, `An error occurs on the device(…)`, the
/// 2021 `The device(N), core list[…]` line, or the 2023 `The extend info from device(…)` line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HeaderEvidence {
    pub kind: Option<ErrorKind>,
    pub device: Option<u64>,
    pub chip_id: Option<u64>,
    pub die_id: Option<u64>,
    pub serial: Option<u64>,
    pub core_id: Option<u64>,
    /// 2021 `core list[a-b]`.
    pub core_list: Option<String>,
    pub error_code: Option<String>,
    pub error_str: Option<String>,
    pub stream: Option<u64>,
    pub task: Option<u64>,
    /// AICPU `errcode:21008` / HCCL `timeout:1836` and similar extras.
    pub extra: Vec<Register>,
    pub registers: Vec<Register>,
}

/// `The extend info: errcode:(a, b, c) errorStr: … subErrType:…` (2024+).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExtendEvidence {
    /// 2023 form only: the serial number and core the extend info belongs to.
    pub serial: Option<u64>,
    pub core_id: Option<u64>,
    pub errcode: Vec<String>,
    pub error_str: Option<String>,
    pub sub_err_type: Option<String>,
    pub blk: Option<u64>,
    pub registers: Vec<Register>,
}

/// A kernel identification line (`Aicore kernel execute failed, …`, FFTS+, AI CPU).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KernelEvidence {
    pub kind: ErrorKind,
    pub device: Option<u64>,
    pub stream: Option<u64>,
    pub report_stream: Option<u64>,
    pub task: Option<u64>,
    pub task_pos: Option<u64>,
    pub flip_num: Option<u64>,
    pub kernel_name: Option<String>,
    pub func_name: Option<String>,
    pub kernel_info_ext: Option<String>,
    pub program_id: Option<u64>,
    pub hash: Option<String>,
    pub block_dim: Option<u64>,
    pub context_id: Option<u64>,
    pub thread_id: Option<u64>,
    pub err_type: Option<String>,
    pub error_code: Option<String>,
    pub pc_start: Option<String>,
    pub so_name: Option<String>,
    pub op_name: Option<String>,
}

/// A GE `[AIC_INFO]` tensor line: `input:0;shape:[64];format:ND;dtype:DT_FLOAT;addr:0x…`.
#[derive(
    Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub struct TensorDesc {
    /// `input` or `output`.
    pub io: String,
    pub index: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shape: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dtype: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub addr: Option<String>,
}

/// What one message contributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// `Task run failed, …` / `Task exception! …` — the first causal device-side line.
    TaskFailure {
        device: Option<u64>,
        stream: Option<u64>,
        task: Option<u64>,
        ret_code: Option<String>,
    },
    Header(HeaderEvidence),
    Extend(ExtendEvidence),
    /// 2021 per-core line `coreId( 0):        0x800000`.
    CoreCode {
        core_id: u64,
        code: String,
    },
    Kernel(KernelEvidence),
    /// A TS retCode (`retCode=0x31, [vector core exception]`).
    RetCode {
        code: String,
        stream: Option<u64>,
    },
    /// An ACL / runtime external code (`ErrCode=507035`, `runtime result = 507035`).
    AclCode {
        code: u64,
        inner: Option<String>,
    },
    /// An opaque runtime inner code (`retCode=0x7150026`, `InnerCode=0x715005e`).
    InnerCode(String),
    /// `report error module_type=5, module_name=EZ9999`.
    CannCode(String),
    /// `tilingKey = 10330, … blockDim=48`.
    Tiling {
        tiling_key: Option<String>,
        block_dim: Option<u64>,
    },
    /// `[AIC_INFO] node_name:…, node_type:…, stream_id:…, task_id:…`.
    AicNode {
        node_name: String,
        node_type: Option<String>,
        stream: Option<u64>,
        task: Option<u64>,
    },
    /// Other `[AIC_INFO] key:value` lines (`dev_func`, `tiling_key`, `block_dim`, `op_file_path`).
    AicField {
        key: String,
        value: String,
    },
    AicTensor(TensorDesc),
    /// `dump exception to file, file: …`.
    DumpFile(String),
    /// ``[ASSERT] … FILE:LINE: Assertion `CONDITION' MESSAGE`` from the device's printf buffer.
    KernelAssert(crate::kernel_assert::KernelAssert),
    /// Firmware `<exception_print>TIME:…, device_id=…, stream_id=…, task_id=…, exception_code=…`.
    FirmwareTask {
        device: Option<u64>,
        stream: Option<u64>,
        task: Option<u64>,
        exception_code: Option<String>,
    },
    /// Firmware `<exception_print>KEY=VALUE` inside an AI Core info section.
    FirmwareField {
        key: String,
        value: String,
    },
}

/// Recognises one message. `None` when the message says nothing about a device error.
///
/// ```
/// use npgx_parsers::aicore::evidence::{classify, Evidence};
/// let e = classify("Stream Synchronize failed, stream_id=2, retCode=0x31, [vector core exception].").unwrap();
/// assert_eq!(e, Evidence::RetCode { code: "0x31".into(), stream: Some(2) });
/// ```
pub fn classify(message: &str) -> Option<Evidence> {
    let msg = message.trim();
    if let Some(fw) = msg.strip_prefix("<exception_print>") {
        return firmware(fw.trim());
    }
    if msg.len() < 8 {
        return None;
    }
    if let Some(a) = crate::kernel_assert::parse(msg) {
        return Some(Evidence::KernelAssert(a));
    }
    let bag = KvBag::new(msg);
    if bag.contains("task run failed") || bag.contains("task exception!") {
        return Some(Evidence::TaskFailure {
            device: bag.u64("device_id"),
            stream: bag.u64("stream_id"),
            task: bag.u64("task_id"),
            ret_code: bag.token("retcode").map(str::to_owned),
        });
    }
    if let Some(h) = header(&bag) {
        return Some(Evidence::Header(h));
    }
    if bag.contains("the extend info") {
        return Some(extend(&bag));
    }
    if let Some(k) = kernel(&bag) {
        return Some(Evidence::Kernel(k));
    }
    if let Some(at) = bag.find("[aic_info]") {
        return aic_info(msg[at + "[aic_info]".len()..].trim());
    }
    if let Some(c) = core_code(msg) {
        return Some(c);
    }
    if bag.contains("dump exception to file") {
        return bag
            .text("file")
            .map(|f| Evidence::DumpFile(f.trim().to_owned()));
    }
    if bag.contains("report error module_type") {
        return bag
            .token("module_name")
            .map(|c| Evidence::CannCode(c.to_owned()));
    }
    if let Some(code) = bag.token("errcode").and_then(|c| c.parse::<u64>().ok()) {
        return Some(Evidence::AclCode {
            code,
            inner: bag.token("innercode").map(str::to_owned),
        });
    }
    if let Some(at) = bag.find("runtime result = ") {
        let v = &msg[at + "runtime result = ".len()..];
        let n: String = v.chars().take_while(char::is_ascii_digit).collect();
        if let Ok(code) = n.parse() {
            return Some(Evidence::AclCode { code, inner: None });
        }
    }
    if bag.contains("tilingkey") {
        return Some(Evidence::Tiling {
            tiling_key: bag.token("tilingkey").map(str::to_owned),
            block_dim: bag.u64("blockdim"),
        });
    }
    let ret = bag.token("retcode").or_else(|| bag.token("rtcode"))?;
    if !ret.starts_with("0x") {
        // MindSpore `retcode: 507011 ( model execute failed)`; `retCode=0` is success.
        let code: u64 = ret.parse().ok()?;
        return (code >= 100_000).then_some(Evidence::AclCode { code, inner: None });
    }
    if parse_int(ret).is_some_and(|v| v > 0xffff) {
        return Some(Evidence::InnerCode(ret.to_owned()));
    }
    if bag.contains("model") || parse_int(ret) == Some(0) {
        return None;
    }
    Some(Evidence::RetCode {
        code: ret.to_owned(),
        stream: bag.u64("stream_id").or_else(|| bag.u64("stream")),
    })
}

/// Maps header wording to a kind: `aivec error`, `fftsplus aicore error`, `hccl fftsplus task
/// timeout`, `an exception occurred during AICPU execution`, …
fn kind_of(bag: &KvBag<'_>) -> Option<ErrorKind> {
    let k = if bag.contains(HCCL_TIMEOUT) {
        ErrorKind::HcclFftsplusTimeout
    } else if bag.contains(WAIT_TIMEOUT) {
        ErrorKind::WaitTimeout
    } else if bag.contains("fftsplus aivector") || bag.contains("fftsplus aivec") {
        ErrorKind::FftsplusAivector
    } else if bag.contains("fftsplus aicore") {
        ErrorKind::FftsplusAicore
    } else if bag.contains("fftsplus aicpu") || bag.contains("during aicpu execution") {
        ErrorKind::Aicpu
    } else if bag.contains("aivec error") || bag.contains("aivector error") {
        ErrorKind::Aivec
    } else if bag.contains("aicore error") {
        ErrorKind::Aicore
    } else if bag.contains("fftsplus") {
        ErrorKind::FftsplusOther
    } else {
        return None;
    };
    Some(k)
}

const REGISTERS: &[&str] = &[
    "pc start",
    "current",
    "sc error info",
    "su error info",
    "mte error info",
    "vec error info",
    "ifu error info",
    "ccu error info",
    "cube error info",
    "biu error info",
    "l1 error info",
    "aic error mask",
    "para base",
    "mte error",
    "aic cond",
];

/// Register values: `name: value` up to `, ` (not a bare `,`: `su error info: a,b`) or the end.
fn registers(msg: &str, lower: &str, names: &[&str]) -> Vec<Register> {
    let mut out = Vec::new();
    for name in names {
        let pat = format!("{name}: ");
        let mut from = 0;
        while let Some(off) = lower[from..].find(&pat) {
            let at = from + off;
            from = at + pat.len();
            let before = lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let r = &msg[at + pat.len()..];
            let end = r.find(", ").unwrap_or(r.len());
            let v = r[..end].trim();
            let v = v.split("[FUNC:").next().unwrap_or(v);
            let v = v.strip_suffix('.').unwrap_or(v);
            if !v.is_empty() {
                out.push(((*name).to_owned(), v.to_owned()));
            }
            break;
        }
    }
    out
}

fn header(bag: &KvBag<'_>) -> Option<HeaderEvidence> {
    let msg = bag.text_all();
    let lower = msg.to_ascii_lowercase();
    let at = [
        "the error from device(",
        "an error occurs on the device(",
        "the device(",
    ]
    .iter()
    .find_map(|p| lower.find(p).map(|i| i + p.len()))?;
    let core_list = lower.contains("core list[");
    let mut h = HeaderEvidence::default();
    let inner = &msg[at..];
    let close = inner.find(')')?;
    let dev = &inner[..close];
    if let Ok(n) = dev.trim().parse() {
        h.device = Some(n);
    } else {
        let b = KvBag::new(dev);
        h.chip_id = b.u64("chipid");
        h.die_id = b.u64("dieid");
        if h.chip_id.is_none() && h.die_id.is_none() {
            return None;
        }
    }
    h.kind = kind_of(bag);
    if h.kind.is_none() && !core_list {
        return None;
    }
    h.serial = bag.after("serial number is ").and_then(|s| s.parse().ok());
    h.core_id = bag.after("core id is ").and_then(|s| s.parse().ok());
    if core_list {
        let s = &lower[lower.find("core list[")? + "core list[".len()..];
        h.core_list = s.split(']').next().map(str::to_owned);
    }
    h.error_code = bag.after("error code = ").map(str::to_owned);
    if let Some(p) = lower.find("error string = ") {
        let r = &msg[p + "error string = ".len()..];
        let end = r.find(" dump info:").unwrap_or(r.len());
        h.error_str = Some(r[..end].trim().to_owned());
    } else if let Some(p) = lower.find("errorstr: ") {
        let r = &msg[p + "errorstr: ".len()..];
        let end = r.find("[FUNC:").unwrap_or(r.len());
        h.error_str = Some(r[..end].trim().to_owned());
    }
    if matches!(
        h.kind,
        Some(ErrorKind::HcclFftsplusTimeout | ErrorKind::WaitTimeout | ErrorKind::Aicpu)
    ) {
        h.stream = bag.u64("stream_id");
        // The newer chips' wait timeout names the task's position in its queue.
        h.task = bag.u64("task_id").or_else(|| bag.u64("task_pos"));
        for key in [
            "sq_id",
            "event_id",
            "notify_id",
            "stuck notify num",
            "timeout",
            "errcode",
            "msg",
        ] {
            if let Some(v) = bag.text(key) {
                h.extra.push((key.to_owned(), v.to_owned()));
            }
        }
    }
    h.registers = registers(msg, &lower, REGISTERS);
    Some(h)
}

/// `name: value, name: value` pairs after a point in the message (2023 extend info).
fn generic_pairs(msg: &str) -> Vec<Register> {
    msg.split(", ")
        .skip(1)
        .filter_map(|p| {
            let (k, v) = p.split_once(": ")?;
            let v = v.split("[FUNC:").next().unwrap_or(v).trim();
            let v = v.strip_suffix('.').unwrap_or(v);
            Some((k.trim().to_owned(), v.to_owned()))
        })
        .collect()
}

fn extend(bag: &KvBag<'_>) -> Evidence {
    let msg = bag.text_all();
    let lower = msg.to_ascii_lowercase();
    let mut e = ExtendEvidence::default();
    if lower.contains("the extend info from device(") {
        // 2023: `The extend info from device(0), serial number is 367, there is aicore error,
        // core id is 0, aicore int: 0x1, …`
        e.serial = bag.after("serial number is ").and_then(|s| s.parse().ok());
        e.core_id = bag.after("core id is ").and_then(|s| s.parse().ok());
        let start = lower.find("core id is ").unwrap_or(0);
        e.registers = generic_pairs(&msg[start..]);
        return Evidence::Extend(e);
    }
    if let Some(p) = lower.find("errcode:(") {
        let r = &msg[p + "errcode:(".len()..];
        if let Some(end) = r.find(')') {
            e.errcode = r[..end].split(',').map(|s| s.trim().to_owned()).collect();
        }
    }
    if let Some(p) = lower.find("errorstr: ") {
        let r = &msg[p + "errorstr: ".len()..];
        let rl = &lower[p + "errorstr: ".len()..];
        let end = [" fixp_error0", " subErrType", " suberrtype", "[FUNC:"]
            .iter()
            .filter_map(|m| rl.find(&m.to_ascii_lowercase()))
            .min()
            .unwrap_or(r.len());
        e.error_str = Some(r[..end].trim().to_owned());
    }
    e.sub_err_type = bag.token("suberrtype").map(str::to_owned);
    e.blk = bag.u64("blk");
    for key in [
        "fixp_error0 info",
        "fixp_error1 info",
        "fsmid",
        "tslot",
        "thread",
        "ctxid",
        "sublk",
    ] {
        if let Some(v) = bag.token(key) {
            e.registers.push((key.to_owned(), v.to_owned()));
        }
    }
    Evidence::Extend(e)
}

fn kernel(bag: &KvBag<'_>) -> Option<KernelEvidence> {
    let kind = if bag.contains("aicore kernel execute failed")
        || bag.contains("ai core kernel execution failed")
    {
        ErrorKind::Aicore
    } else if bag.contains("fftsplus task execute failed")
        || bag.contains("fftsplus task execution failed")
    {
        match bag.raw("err_type") {
            Some(t) if t.contains("aivector") => ErrorKind::FftsplusAivector,
            Some(t) if t.contains("aicore") => ErrorKind::FftsplusAicore,
            _ => ErrorKind::FftsplusOther,
        }
    } else if bag.contains("aicpu kernel execute failed")
        || bag.contains("ai cpu kernel execution failed")
    {
        ErrorKind::Aicpu
    } else {
        return None;
    };
    let s = |k: &str| bag.text(k).map(str::to_owned);
    Some(KernelEvidence {
        kind,
        device: bag.u64("device_id").or_else(|| bag.u64("dev_id")),
        stream: bag.u64("stream_id"),
        report_stream: bag.u64("report_stream_id"),
        task: bag.u64("task_id"),
        task_pos: bag.u64("task_pos"),
        flip_num: bag.u64("flip_num"),
        kernel_name: s("fault kernel_name").or_else(|| s("kernelname")),
        func_name: s("func_name").or_else(|| s("funcname")),
        kernel_info_ext: s("fault kernel info ext"),
        program_id: bag.u64("program id"),
        hash: bag.token("hash").map(str::to_owned).or_else(|| {
            bag.text("hash")
                .filter(|h| h.starts_with('('))
                .map(str::to_owned)
        }),
        block_dim: bag.u64("blockdim"),
        context_id: bag.u64("context_id"),
        thread_id: bag.u64("thread_id"),
        err_type: s("err_type"),
        error_code: bag
            .token("error_code")
            .or_else(|| bag.token("errorcode"))
            .map(str::to_owned),
        pc_start: bag.token("pc start").map(str::to_owned),
        so_name: s("fault so_name").or_else(|| s("soname")),
        op_name: s("fault op_name"),
    })
}

fn aic_info(rest: &str) -> Option<Evidence> {
    let bag = KvBag::new(rest);
    if let Some(name) = bag.text("node_name") {
        return Some(Evidence::AicNode {
            node_name: name.to_owned(),
            node_type: bag.text("node_type").map(str::to_owned),
            stream: bag.u64("stream_id"),
            task: bag.u64("task_id"),
        });
    }
    for io in ["input", "output"] {
        if let Some(r) = rest.strip_prefix(io).and_then(|r| r.strip_prefix(':')) {
            let mut parts = r.split(';');
            let index = parts.next()?.trim().parse().ok()?;
            let mut t = TensorDesc {
                io: io.to_owned(),
                index,
                ..TensorDesc::default()
            };
            for p in parts {
                let Some((k, v)) = p.split_once(':') else {
                    continue;
                };
                let v = Some(v.trim().to_owned());
                match k.trim() {
                    "shape" => t.shape = v,
                    "format" => t.format = v,
                    "dtype" => t.dtype = v,
                    "addr" => t.addr = v,
                    _ => {}
                }
            }
            return Some(Evidence::AicTensor(t));
        }
    }
    let (key, value) = rest.split_once(':')?;
    let key = key.trim();
    if !matches!(
        key,
        "dev_func" | "tiling_key" | "block_dim" | "op_file_path" | "kernel_info" | "tvm_magic"
    ) {
        return None;
    }
    let value = value.split("[FUNC:").next().unwrap_or(value).trim();
    Some(Evidence::AicField {
        key: key.to_owned(),
        value: value.to_owned(),
    })
}

/// `coreId( 0):        0x800000`
fn core_code(msg: &str) -> Option<Evidence> {
    let r = msg.strip_prefix("coreId(")?;
    let (id, r) = r.split_once("):")?;
    let code = r.split_whitespace().next()?;
    let code = code.split("[FUNC:").next().unwrap_or(code);
    Some(Evidence::CoreCode {
        core_id: id.trim().parse().ok()?,
        code: code.to_owned(),
    })
}

fn firmware(fw: &str) -> Option<Evidence> {
    let bag = KvBag::new(fw);
    if fw.starts_with("TIME:") {
        return Some(Evidence::FirmwareTask {
            device: bag.u64("device_id"),
            stream: bag.u64("stream_id"),
            task: bag.u64("task_id"),
            exception_code: bag.token("exception_code").map(str::to_owned),
        });
    }
    if let Some(r) = fw.strip_prefix("####AICORE_INFO_START:") {
        let b = KvBag::new(r);
        return b.token("core_id").map(|c| Evidence::FirmwareField {
            key: "core_id".into(),
            value: c.to_owned(),
        });
    }
    let (k, v) = fw.split_once('=')?;
    let k = k.trim();
    if !matches!(k, "AIC_ERROR" | "PC_START" | "PARA_BASE" | "core_list") {
        return None;
    }
    Some(Evidence::FirmwareField {
        key: k.to_owned(),
        value: v.trim().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(msg: &str) -> HeaderEvidence {
        match classify(msg) {
            Some(Evidence::Header(h)) => h,
            other => panic!("{other:?}"),
        }
    }

    fn a(msg: &str) -> crate::kernel_assert::KernelAssert {
        match classify(msg) {
            Some(Evidence::KernelAssert(a)) => a,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn ascend_c_assertions_with_their_source_line() {
        // The shape of the real lines (shared samples logs/01 and real/plog), paths shortened.
        let x = a("[dump_printf.cpp:548][tid:155320] [ASSERT] [CANN_VERSION : 7.8][TimeStamp : 0] /opp/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h:137: Assertion `(0 <= val && val < this->gxSize_)' Index 100000000 out of range[0 655360)!");
        assert_eq!(
            x.source_file.as_deref(),
            Some("/opp/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h")
        );
        assert_eq!(x.source_line, Some(137));
        assert_eq!(
            x.condition.as_deref(),
            Some("(0 <= val && val < this->gxSize_)")
        );
        assert_eq!(x.message, "Index 100000000 out of range[0 655360)!");
        // No version groups, a message with an apostrophe, a condition that ends the line.
        let y = a("[ASSERT] k.cpp:9: Assertion `n > 0' can't tile 0 rows");
        assert_eq!(
            (
                y.source_file.as_deref(),
                y.source_line,
                y.condition.as_deref(),
                y.message.as_str()
            ),
            (Some("k.cpp"), Some(9), Some("n > 0"), "can't tile 0 rows")
        );
        let z = a("[ASSERT] C:/src/k.cpp:12: Assertion `ok'");
        assert_eq!(
            (
                z.source_file.as_deref(),
                z.source_line,
                z.condition.as_deref(),
                z.message.as_str()
            ),
            (Some("C:/src/k.cpp"), Some(12), Some("ok"), "")
        );
        // Another shape after the tag: kept whole, nothing invented.
        let w = a("[ASSERT] [CANN_VERSION : 8.2] tiling failed");
        assert_eq!(
            (w.source_file, w.source_line, w.condition),
            (None, None, None)
        );
        assert_eq!(w.message, "tiling failed");
        // Any bracketed group before the place is skipped; a place without a file is no place.
        let v = a("[ASSERT] [block 3][core 1] k.cpp:9: Assertion `ok' no");
        assert_eq!(
            (v.source_file.as_deref(), v.source_line),
            (Some("k.cpp"), Some(9))
        );
        let u = a("[ASSERT] :12: Assertion `ok' no");
        assert_eq!((u.source_file, u.source_line), (None, None));
        assert_eq!(u.message, ":12: Assertion `ok' no");
        // Nothing after the tag: no evidence at all; no closing quote: the place, no condition.
        assert_eq!(classify("[ASSERT]   "), None);
        assert_eq!(classify("x [ASSERT] [CANN_VERSION : 8.2]"), None);
        let t = a("[ASSERT] k.cpp:9: Assertion `i < n");
        assert_eq!(
            (t.source_line, t.condition, t.message.as_str()),
            (Some(9), None, "i < n")
        );
    }

    #[test]
    fn header_2021_a_aicore_with_error_string() {
        let x = h("The error from device(0), serial number is 18, there is a aicore error, core id is 0, error code = 0x20000000000000, error string = VEC instruction error: the MASK instruction is all 0. dump info: pc start: 0x108080110000, current: 0x1080801100e0, para base: 0x108080054000.");
        assert_eq!(
            (x.device, x.serial, x.core_id),
            (Some(0), Some(18), Some(0))
        );
        assert_eq!(x.kind, Some(ErrorKind::Aicore));
        assert_eq!(x.error_code.as_deref(), Some("0x20000000000000"));
        assert_eq!(
            x.error_str.as_deref(),
            Some("VEC instruction error: the MASK instruction is all 0.")
        );
        assert!(x
            .registers
            .contains(&("para base".into(), "0x108080054000".into())));
    }

    #[test]
    fn header_2025_chip_die_and_a5_decimal() {
        let x = h("The error from device(chipId:0, dieId:0), serial number is 8, there is an aicore error exception, core id is 0, error code = 95, dump info: pc start: 0x1, current: 0x2, su error info: 0xfe,0x7f, mte error: 0x80000000.[FUNC:P][FILE:f.cc][LINE:580]");
        assert_eq!((x.chip_id, x.die_id, x.device), (Some(0), Some(0), None));
        assert_eq!(x.error_code.as_deref(), Some("95"));
        assert!(x
            .registers
            .contains(&("su error info".into(), "0xfe,0x7f".into())));
        assert!(x
            .registers
            .contains(&("mte error".into(), "0x80000000".into())));
    }

    #[test]
    fn header_kinds() {
        assert_eq!(h("The error from device(chipId:1, dieId:0), serial number is 777, there is an exception of aivec error, core id is 2").kind, Some(ErrorKind::Aivec));
        assert_eq!(h("The error from device(chipId:6, dieId:0), serial number is 3, there is an exception of fftsplus aicore error, core id is 3").kind, Some(ErrorKind::FftsplusAicore));
        assert_eq!(h("An error occurs on the device(chipId:0, dieId:1), the serial number is 2, the error is aivec error error, core id is 1, error code = 0x10").serial, Some(2));
        let x = h("The error from device(chipId:5, dieId:0), serial number is 17, hccl fftsplus task timeout occurred during task execution, stream_id:7, sq_id:7, task_id:9865, stuck notify num:3, timeout:1836.");
        assert_eq!(
            (x.kind, x.stream, x.task),
            (Some(ErrorKind::HcclFftsplusTimeout), Some(7), Some(9865))
        );
    }

    // The runtime's wait timeouts (device_error_proc.cc, ProcessStarsWaitTimeoutErrorInfo): an
    // event wait, a notify wait, and the newer chips' wait with the task's queue position.
    #[test]
    fn wait_timeouts() {
        let x = h("The error from device(chipId:5, dieId:0), serial number is 4, event wait timeout occurred during task execution, stream_id:6, sq_id:6, task_id:13408, event_id=313, timeout=1868.[FUNC:F][FILE:device_error_proc.cc][LINE:1]");
        assert_eq!(
            (x.kind, x.stream, x.task, x.serial),
            (Some(ErrorKind::WaitTimeout), Some(6), Some(13408), Some(4))
        );
        assert!(x.extra.contains(&("event_id".to_owned(), "313".to_owned())));
        let x = h("The error from device(chipId:0, dieId:0), serial number is 2, notify wait timeout occurred during task execution, stream_id:3, sq_id:3, task_id:9, notify_id=14, timeout=1836s.");
        assert_eq!((x.kind, x.task), (Some(ErrorKind::WaitTimeout), Some(9)));
        assert!(x.extra.contains(&("notify_id".to_owned(), "14".to_owned())));
        let x = h("The error from device(chipId:1, dieId:0), serial number is 7, wait timeout occurred during task execution, stream_id:2, sq_id:2, task_pos:11, id=5, timeout=1800s, cntFlag = 0, subType = 1(x).");
        assert_eq!(
            (x.kind, x.stream, x.task),
            (Some(ErrorKind::WaitTimeout), Some(2), Some(11))
        );
    }

    #[test]
    fn extend_info() {
        match classify("The extend info: errcode:(0, 0x8000, 0) errorStr: When the D-cache reads. fixp_error0 info: 0x60000e6, fsmId:1, blk:3, sublk:0, subErrType:4.[FUNC:x]") {
            Some(Evidence::Extend(e)) => {
                assert_eq!(e.errcode, ["0", "0x8000", "0"]);
                assert_eq!(e.error_str.as_deref(), Some("When the D-cache reads."));
                assert_eq!((e.blk, e.sub_err_type.as_deref()), (Some(3), Some("4")));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn kernel_lines() {
        let Some(Evidence::Kernel(k)) = classify("[DFX_INFO]AI Core kernel execution failed, device_id=9, stream_id=47, report_stream_id=47, task_id=23064, flip_num=1564, fault kernel_name=MlaPrologV3_18fe_1836449, fault kernel info ext=none, program id=") else { panic!() };
        assert_eq!(
            (k.device, k.stream, k.task, k.flip_num),
            (Some(9), Some(47), Some(23064), Some(1564))
        );
        assert_eq!(k.kernel_name.as_deref(), Some("MlaPrologV3_18fe_1836449"));
        assert_eq!((k.program_id, k.hash.as_deref()), (None, None));
        let Some(Evidence::Kernel(k)) = classify("fftsplus task execute failed, dev_id=0, stream_id=4, task_id=0, context_id=0, thread_id=0, err_type=12[fftsplus aivector error], pc start=0x12404280e32c. fault kernel_name=K_mix_aiv, blockDim=20") else { panic!() };
        assert_eq!(
            (k.kind, k.device, k.block_dim),
            (ErrorKind::FftsplusAivector, Some(0), Some(20))
        );
        assert_eq!(k.kernel_name.as_deref(), Some("K_mix_aiv"));
    }

    #[test]
    fn codes() {
        assert_eq!(
            classify("ErrCode=507035, desc=[vector core exception], InnerCode=0x715005e"),
            Some(Evidence::AclCode {
                code: 507035,
                inner: Some("0x715005e".into())
            })
        );
        assert_eq!(
            classify("synchronize stream failed, runtime result = 507035"),
            Some(Evidence::AclCode {
                code: 507035,
                inner: None
            })
        );
        assert_eq!(
            classify(
                "TaskFailCallBack: stream_id=2, task_id=6, retCode=0x7150026,[aicore exception]"
            ),
            Some(Evidence::InnerCode("0x7150026".into()))
        );
        assert_eq!(
            classify("model execute error, retCode=0x91, [the model stream execute failed]."),
            None
        );
        assert_eq!(
            classify("report error module_type=5, module_name=EZ9999"),
            Some(Evidence::CannCode("EZ9999".into()))
        );
    }

    #[test]
    fn firmware_lines() {
        assert!(matches!(classify("<exception_print>TIME:2020-12-23-17:10:54.083.569, device_id=0, stream_id=517, task_id=3, exception_code=0xb4060006, magic_type=0xaa776"), Some(Evidence::FirmwareTask { stream: Some(517), .. })));
        assert_eq!(
            classify("<exception_print>AIC_ERROR=0x10"),
            Some(Evidence::FirmwareField {
                key: "AIC_ERROR".into(),
                value: "0x10".into()
            })
        );
    }
}
