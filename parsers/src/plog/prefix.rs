//! External per-line prefixes that wrap log content in captured console output (spec §1.5, §6.2).
//!
//! ```text
//! line    = (rank | proc | c10)* rest
//! rank    = "[rank" digits "]:" " "?                                   torchrun
//! proc    = "(" name " pid=" digits ") " (lvl " " mm-dd " " hh:mm:ss " [" file ":" digits "] ")?   vLLM
//! c10     = "[" [WEI] digits " " hh:mm:ss.frac " " file ":" digits "] " ("Warning: ")?   PyTorch c10
//! ```
//!
//! Peeling is repeated, so nested prefixes (`(vLLMHttpServer pid=1) (Worker_TP3 pid=2) ERROR …`)
//! come off one by one. What remains is classified again (plog header, CANN block, …).

/// The prefixes taken off one line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Peeled<'a> {
    /// `[rankN]:` from torchrun.
    pub rank: Option<u32>,
    /// Innermost vLLM process tag: name and pid.
    pub process: Option<(&'a str, u64)>,
    /// The text after all prefixes.
    pub rest: &'a str,
}

/// Removes torchrun, vLLM and c10 prefixes from the start of `line`.
///
/// ```
/// use npgx_parsers::plog::prefix::peel;
/// let p = peel("(Worker_DP0_TP6_EP6 pid=363) ERROR 12-12 12:10:10 [multiproc_executor.py:822] WorkerProc hit");
/// assert_eq!(p.process, Some(("Worker_DP0_TP6_EP6", 363)));
/// assert_eq!(p.rest, "WorkerProc hit");
/// let p = peel("[rank6]: [ERROR] (PID:360123, Device:6, RankID:6) ERR01100 OPS call acl api failed.");
/// assert_eq!((p.rank, p.rest.starts_with("[ERROR] (PID")), (Some(6), true));
/// ```
pub fn peel(line: &str) -> Peeled<'_> {
    let mut p = Peeled {
        rest: line,
        ..Peeled::default()
    };
    loop {
        if let Some((rank, r)) = rank(p.rest) {
            p.rank = Some(rank);
            p.rest = r;
        } else if let Some((name, pid, r)) = process(p.rest) {
            p.process = Some((name, pid));
            p.rest = r;
        } else if let Some(r) = c10(p.rest) {
            p.rest = r;
        } else {
            return p;
        }
    }
}

fn digits(s: &str) -> (&str, &str) {
    let n = s.bytes().take_while(u8::is_ascii_digit).count();
    (&s[..n], &s[n..])
}

fn rank(s: &str) -> Option<(u32, &str)> {
    let r = s.strip_prefix("[rank")?;
    let (d, r) = digits(r);
    let r = r.strip_prefix("]:")?;
    Some((d.parse().ok()?, r.strip_prefix(' ').unwrap_or(r)))
}

fn process(s: &str) -> Option<(&str, u64, &str)> {
    let r = s.strip_prefix('(')?;
    let close = r.find(") ")?;
    let inner = &r[..close];
    let (name, pid) = inner.rsplit_once(" pid=")?;
    if name.is_empty() || name.contains(['(', ')']) {
        return None;
    }
    let pid = pid.parse().ok()?;
    let r = &r[close + 2..];
    Some((name, pid, vllm_level(r).unwrap_or(r)))
}

/// `ERROR 12-12 12:10:10 [multiproc_executor.py:822] `
fn vllm_level(s: &str) -> Option<&str> {
    let (lvl, r) = s.split_once(' ')?;
    if !matches!(lvl, "DEBUG" | "INFO" | "WARNING" | "ERROR" | "CRITICAL") {
        return None;
    }
    let (date, r) = r.split_once(' ')?;
    let (time, r) = r.split_once(' ')?;
    let ok = |t: &str, sep: char| {
        t.split(sep)
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    if !ok(date, '-') || !ok(time, ':') {
        return None;
    }
    let r = r.strip_prefix('[')?;
    let end = r.find("] ")?;
    if !r[..end].contains(':') {
        return None;
    }
    Some(&r[end + 2..])
}

/// `[W904 09:50:12.024496247 compiler_depend.ts:57] Warning: `
fn c10(s: &str) -> Option<&str> {
    let r = s.strip_prefix('[')?;
    let mut b = r.bytes();
    if !matches!(b.next()?, b'W' | b'E' | b'I') || !b.next()?.is_ascii_digit() {
        return None;
    }
    let end = r.find("] ")?;
    let inner = &r[..end];
    if !inner.contains(' ') || !inner.contains(':') {
        return None;
    }
    let r = &r[end + 2..];
    Some(r.strip_prefix("Warning: ").unwrap_or(r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c10_warning_under_rank() {
        let p = peel(
            "[rank0]:[W904 09:50:12.024496247 compiler_depend.ts:57] Warning: EZ9999: Inner Error!",
        );
        assert_eq!(p.rank, Some(0));
        assert_eq!(p.rest, "EZ9999: Inner Error!");
    }

    #[test]
    fn nested_vllm() {
        let p = peel("(vLLMHttpServer pid=1) (Worker_TP3 pid=2) ERROR 01-02 03:04:05 [a.py:9] x");
        assert_eq!(p.process, Some(("Worker_TP3", 2)));
        assert_eq!(p.rest, "x");
    }

    #[test]
    fn leaves_plain_lines_alone() {
        for s in [
            "[ERROR] RUNTIME(1,p):x",
            "(function copy_between_host_and_device_opapi)",
            "",
            "[rank",
        ] {
            assert_eq!(peel(s).rest, s);
        }
    }
}
