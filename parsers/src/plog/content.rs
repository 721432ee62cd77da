//! What follows the header: module-specific content prefixes (spec §1.2, §1.5).
//!
//! ```text
//! content  = kv* (tsch | src prefix (" "* src "[" tag "]")*)? message
//! kv       = "[" key ":" value "] "            value not all digits, e.g. "[status:init] "
//! src      = "[" file ":" digits "]"
//! prefix   = "[tid:" digits "] "?                                     IDEDD
//!          | " "? ("[" digits "]")+ ("[" tag "]")*                      HCCL (old: [pid][tid], new: [tid])
//!          | " "? digits " " func ":" " "? stage*                       RUNTIME, GE, ASCENDCL, …
//!          | digits " "                                                 APP (no function name)
//! stage    = "[" ("INIT"|"COMP"|"LOAD"|"EXEC"|"FINAL"|"PARSER"|…) "]"
//! tsch     = digits " (cpuid:" digits ") " path ":" digits " " func ": "   device firmware
//! ```
//!
//! Every part is optional: when a prefix does not fit, the rest is kept as the message, so no
//! record is lost because its content has an unexpected shape.

use nom::bytes::complete::{tag, take_while, take_while1};
use nom::character::complete::char;
use nom::combinator::opt;
use nom::{IResult, Parser};

/// The error-manager stage names that can appear as `[STAGE1][STAGE2]` after `Func:`.
pub const STAGES: &[&str] = &[
    "INIT",
    "COMP",
    "LOAD",
    "EXEC",
    "FINAL",
    "PARSER",
    "OPS_PRO",
    "SYS",
    "ENGINE",
    "OPS_KER",
    "OPS_KER_BLD",
    "PRE_OPT",
    "ORI_OPT",
    "SUB_OPT",
    "MERGE_OPT",
    "PRE_BLD",
    "STM_ALLOC",
    "MEM_ALLOC",
    "TASK_GEN",
    "DEFAULT",
];

/// The structured prefix of a record's content and the free-text message after it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Content<'a> {
    /// `[key:value] ` pairs right after the header (HCCL `[status:init]`).
    pub kv: Vec<(&'a str, &'a str)>,
    /// `__FILE__` of the log call (`stars_engine.cc`, `tf_adapter/…`, a firmware path).
    pub src_file: Option<&'a str>,
    pub src_line: Option<u32>,
    /// Old HCCL `[pid][tid]` form: the pid inside the content.
    pub inner_pid: Option<u64>,
    pub tid: Option<u64>,
    /// Device firmware `(cpuid:N)`.
    pub cpu_id: Option<u32>,
    /// Logging function (`ProcLogicCqReport`, `aclrtSynchronizeStream`).
    pub func: Option<&'a str>,
    /// Error-manager stage tags (`INIT`, `DEFAULT`).
    pub stages: Vec<&'a str>,
    /// HCCL bracket tags (`Wait`, `AllClientSocketEstab`).
    pub tags: Vec<&'a str>,
    /// The remaining text.
    pub message: &'a str,
}

/// Splits record content (the text after the header) into its prefix fields and the message.
/// `module` selects the module-specific forms (`APP`, `HCCL`, `TSCH`); any module name works.
///
/// ```
/// use npgx_parsers::plog::content::parse_content;
/// let c = parse_content("RUNTIME", "[stars_engine.cc:1553]155320 ProcLogicCqReport:[INIT][DEFAULT]Task run failed");
/// assert_eq!(c.src_file, Some("stars_engine.cc"));
/// assert_eq!(c.tid, Some(155320));
/// assert_eq!(c.func, Some("ProcLogicCqReport"));
/// assert_eq!(c.stages, ["INIT", "DEFAULT"]);
/// assert_eq!(c.message, "Task run failed");
/// ```
pub fn parse_content<'a>(module: &str, text: &'a str) -> Content<'a> {
    let mut c = Content {
        message: text,
        ..Content::default()
    };
    let mut rest = text;
    while let Ok((r, (k, v))) = kv_tag(rest) {
        c.kv.push((k, v));
        rest = r;
    }
    if let Ok((r, (file, line))) = src(rest) {
        c.src_file = Some(file);
        c.src_line = Some(line);
        rest = after_src(module, r, &mut c);
        // TBE's Python logger writes its wrapper's location and tag, then the caller's:
        // `[…/repository_manager_log.py:30][log] […/multiprocess_util.py:168][repository_manager]
        // msg`. A location with a tag after the tags is the caller's, and the message follows it.
        while let Ok((r, ((file, line), tag))) = (src, bracket_word).parse(space0(rest).0) {
            c.src_file = Some(file);
            c.src_line = Some(line);
            c.tags.push(tag);
            rest = r.strip_prefix(' ').unwrap_or(r);
        }
    } else if let Ok((r, (cpu, file, line, func))) = tsch(rest) {
        c.cpu_id = Some(cpu);
        c.src_file = Some(file);
        c.src_line = Some(line);
        c.func = Some(func);
        rest = r;
    }
    c.message = rest;
    c
}

fn after_src<'a>(module: &str, r: &'a str, c: &mut Content<'a>) -> &'a str {
    if let Ok((r, tid)) = idedd_tid(r) {
        c.tid = Some(tid);
        return r;
    }
    let (r2, _) = space0(r);
    if r2.starts_with('[') {
        // HCCL: numeric brackets, then tags.
        let mut nums = Vec::new();
        let mut r3 = r2;
        while let Ok((r, n)) = bracket_num(r3) {
            nums.push(n);
            r3 = r;
        }
        match nums.as_slice() {
            [tid] => c.tid = Some(*tid),
            [pid, tid, ..] => {
                c.inner_pid = Some(*pid);
                c.tid = Some(*tid);
            }
            [] => {}
        }
        while let Ok((r, t)) = bracket_word(r3) {
            c.tags.push(t);
            r3 = r;
        }
        return r3;
    }
    if let Ok((r3, tid)) = decimal(r2) {
        c.tid = Some(tid);
        let r3 = r3.strip_prefix(' ').unwrap_or(r3);
        if module == "APP" {
            return r3;
        }
        if let Ok((r4, func)) = func_name(r3) {
            c.func = Some(func);
            let (mut r5, _) = space0(r4);
            while let Ok((r, s)) = stage(r5) {
                c.stages.push(s);
                r5 = r;
            }
            return r5;
        }
        return r3;
    }
    r
}

fn space0(i: &str) -> (&str, &str) {
    let n = i.len() - i.trim_start_matches(' ').len();
    (&i[n..], &i[..n])
}

fn decimal(i: &str) -> IResult<&str, u64> {
    let (r, d) = take_while1(|c: char| c.is_ascii_digit()).parse(i)?;
    match d.parse() {
        Ok(n) => Ok((r, n)),
        Err(_) => Err(fail(i)),
    }
}

fn kv_tag(i: &str) -> IResult<&str, (&str, &str)> {
    let (r, _) = char('[').parse(i)?;
    let (r, k) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(r)?;
    let (r, _) = char(':').parse(r)?;
    let (r, v) = take_while1(|c: char| c != ']' && c != '[').parse(r)?;
    let (r, _) = tag("] ").parse(r)?;
    if v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(i));
    }
    Ok((r, (k, v)))
}

fn src(i: &str) -> IResult<&str, (&str, u32)> {
    let (r, _) = char('[').parse(i)?;
    let (r, file) = take_while1(|c: char| c != ':' && c != ']' && c != '[' && c != ' ').parse(r)?;
    let (r, _) = char(':').parse(r)?;
    let (r, line) = decimal(r)?;
    let (r, _) = char(']').parse(r)?;
    Ok((r, (file, u32::try_from(line).unwrap_or(u32::MAX))))
}

fn idedd_tid(i: &str) -> IResult<&str, u64> {
    let (r, _) = tag("[tid:").parse(i)?;
    let (r, n) = decimal(r)?;
    let (r, _) = char(']').parse(r)?;
    let (r, _) = opt(char(' ')).parse(r)?;
    Ok((r, n))
}

fn bracket_num(i: &str) -> IResult<&str, u64> {
    let (r, _) = char('[').parse(i)?;
    let (r, n) = decimal(r)?;
    let (r, _) = char(']').parse(r)?;
    Ok((r, n))
}

fn bracket_word(i: &str) -> IResult<&str, &str> {
    let (r, _) = char('[').parse(i)?;
    let (r, w) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(r)?;
    let (r, _) = char(']').parse(r)?;
    if w.bytes().all(|b| b.is_ascii_digit()) {
        return Err(fail(i));
    }
    Ok((r, w))
}

/// `Func:` — an identifier (C++ `::` allowed) followed by a single `:`.
fn func_name(i: &str) -> IResult<&str, &str> {
    let b = i.as_bytes();
    let mut p = 0;
    while p < b.len() {
        let c = b[p];
        if c.is_ascii_alphanumeric() || c == b'_' || c == b'~' {
            p += 1;
        } else if c == b':' && b.get(p + 1) == Some(&b':') {
            p += 2;
        } else {
            break;
        }
    }
    if p == 0 || b.get(p) != Some(&b':') || b[0].is_ascii_digit() {
        return Err(fail(i));
    }
    Ok((&i[p + 1..], &i[..p]))
}

fn stage(i: &str) -> IResult<&str, &str> {
    let (r, _) = char('[').parse(i)?;
    let (r, w) = take_while1(|c: char| c.is_ascii_uppercase() || c == '_').parse(r)?;
    let (r, _) = char(']').parse(r)?;
    if STAGES.contains(&w) {
        Ok((r, w))
    } else {
        Err(fail(i))
    }
}

/// Device firmware: `17 (cpuid:0) ../tsch/…/ai_core_dispatcher.c:1193 bs_done_exception_proc: `.
fn tsch(i: &str) -> IResult<&str, (u32, &str, u32, &str)> {
    let (r, _) = decimal(i)?;
    let (r, _) = tag(" (cpuid:").parse(r)?;
    let (r, cpu) = decimal(r)?;
    let (r, _) = tag(") ").parse(r)?;
    let (r, path) = take_while1(|c: char| c != ' ').parse(r)?;
    let (file, line) = match path.rsplit_once(':') {
        Some((f, l)) => match l.parse::<u32>() {
            Ok(n) => (f, n),
            Err(_) => return Err(fail(i)),
        },
        None => return Err(fail(i)),
    };
    let (r, _) = char(' ').parse(r)?;
    let (r, func) = take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_').parse(r)?;
    let (r, _) = char(':').parse(r)?;
    let (r, _) = take_while(|c: char| c == ' ').parse(r)?;
    Ok((
        r,
        (u32::try_from(cpu).unwrap_or(u32::MAX), file, line, func),
    ))
}

fn fail(i: &str) -> nom::Err<nom::error::Error<&str>> {
    nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtime_info_has_space_before_tid_and_no_stages() {
        let c = parse_content(
            "RUNTIME",
            "[device_error_proc.cc:947] 1432 PrintStreamTimeoutSnapshotInfo: get stream",
        );
        assert_eq!(c.tid, Some(1432));
        assert_eq!(c.func, Some("PrintStreamTimeoutSnapshotInfo"));
        assert!(c.stages.is_empty());
        assert_eq!(c.message, "get stream");
    }

    #[test]
    fn runtime_2021_no_space_no_stages() {
        let c = parse_content(
            "RUNTIME",
            "[engine.cc:910]10057 ReportExceptProc:task exception! stream_id=2",
        );
        assert_eq!((c.tid, c.func), (Some(10057), Some("ReportExceptProc")));
        assert_eq!(c.message, "task exception! stream_id=2");
    }

    #[test]
    fn ascendcl_space_after_colon_and_aic_info_not_a_stage() {
        let c = parse_content(
            "ASCENDCL",
            "[stream.cpp:120]155320 aclrtSynchronizeStream: [INIT][DEFAULT]synchronize stream failed",
        );
        assert_eq!(c.func, Some("aclrtSynchronizeStream"));
        assert_eq!(c.stages, ["INIT", "DEFAULT"]);
        let c = parse_content(
            "RUNTIME",
            "[d.cc:1318]1 GetArgsInfo:[INIT][DEFAULT][AIC_INFO] args",
        );
        assert_eq!(c.message, "[AIC_INFO] args");
    }

    #[test]
    fn idedd_tid_form() {
        let c = parse_content(
            "IDEDD",
            "[dump_operator.cpp:400][tid:155320] [Dump][Exception] begin",
        );
        assert_eq!(c.tid, Some(155320));
        assert_eq!(c.message, "[Dump][Exception] begin");
    }

    #[test]
    fn hccl_old_and_new_and_trace() {
        let c = parse_content(
            "HCCL",
            "[exchanger_network.cc:237][10972][21499][Wait][AllClientSocketEstab]errNo[0x5] client",
        );
        assert_eq!((c.inner_pid, c.tid), (Some(10972), Some(21499)));
        assert_eq!(c.tags, ["Wait", "AllClientSocketEstab"]);
        assert_eq!(c.message, "errNo[0x5] client");
        let c = parse_content("HCCL", "[comm_base.cc:967] [107626][Tag]msg");
        assert_eq!((c.tid, c.message), (Some(107626), "msg"));
        let c = parse_content(
            "HCCL",
            "[status:init] [hcom.cc:196][hccl-10972-0-1675133310-hccl_world_group][3]hcom init",
        );
        assert_eq!(c.kv, [("status", "init")]);
        assert_eq!(c.src_file, Some("hcom.cc"));
    }

    #[test]
    fn app_has_no_function() {
        let c = parse_content(
            "APP",
            "[log_inner.cpp:76]6124 build/CMakeFiles/x.ts:checkDispatch:685: \"[PTA]:\"Process",
        );
        assert_eq!((c.tid, c.func), (Some(6124), None));
        assert!(c.message.starts_with("build/"));
        let c = parse_content("APP", "[log_inner.cpp:76]aclAppLog call vsnprintf_s failed");
        assert_eq!(
            (c.tid, c.message),
            (None, "aclAppLog call vsnprintf_s failed")
        );
    }

    #[test]
    fn tsch_firmware() {
        let c = parse_content(
            "TSCH",
            "17 (cpuid:0) ../../tsch/ai_core_dispatcher.c:1193 bs_done_exception_proc: slot_id=0",
        );
        assert_eq!(c.cpu_id, Some(0));
        assert_eq!(c.src_line, Some(1193));
        assert_eq!(c.func, Some("bs_done_exception_proc"));
        assert_eq!(c.message, "slot_id=0");
    }

    // TBE's Python records: the logger wrapper's location, then the caller's (wider-world batch
    // 25's grading: the caller's location was left in the message).
    #[test]
    fn tbe_wrapper_then_caller_location() {
        let c = parse_content("TBE", "[../x/repository_manager_log.py:30][log] [../x/multiprocess_util.py:168][repository_manager] msg_mgr_dump raise error[[Errno 28] No space left on device]");
        assert_eq!(
            (c.src_file, c.src_line),
            (Some("../x/multiprocess_util.py"), Some(168))
        );
        assert_eq!(c.tags, ["log", "repository_manager"]);
        assert_eq!(
            c.message,
            "msg_mgr_dump raise error[[Errno 28] No space left on device]"
        );
        // A location without a tag after it stays the message's.
        let c = parse_content("TBE", "[a.py:1][log] [b.py:2] text");
        assert_eq!(c.message, " [b.py:2] text");
    }

    #[test]
    fn plain_text_survives() {
        let c = parse_content("X", "no prefix at all [1:");
        assert_eq!(c.message, "no prefix at all [1:");
    }
}
