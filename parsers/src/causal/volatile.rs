//! Volatile tokens: the parts of an error text that change from one process to the next although
//! the failure is the same, so that two runs' first causal errors can be compared on what is
//! stable.
//!
//! A run prints where things were in memory and when: object reprs (`<built-in method sigmoid of
//! type object at 0x7f3a…>`), pointers, process and thread ids, time stamps, elapsed times, temp
//! and run-directory paths. Two runs of the same failing program differ in exactly these tokens.
//! [`stable`] replaces each with a placeholder; everything else — the exception type, the error
//! code, the operator, the node, the shape, an error code written in hex — is kept.
//!
//! Token grammar (each token is found anywhere in the text, the leftmost first, and never
//! overlaps another):
//!
//! ```text
//! repr_addr = "at " "0x" hex+                        → "at 0x…"     (any repr: `<… at 0x…>`)
//! pointer   = "0x" hex{8,}                           → "0x…"        (error codes like 0x31 stay)
//! stamp     = a time stamp of any logger (the grammar of `crate::line_origin`: plog, CANN,
//!             torch_npu, Python logging, ISO 8601, glog, c10, vLLM, a bare clock,
//!             glog's pid column with it)       → "<time>"
//! duration  = number " "? ("ms" | "milliseconds" | "us" | "microseconds" | "s" | "sec" | "secs"
//!             | "seconds")                           → "<n>" unit
//! id        = ("pid" | "ppid" | "tid" | "thread id" | "thread_id" | "process id" | "thread")
//!             (" "* (":" | "=" | "#") " "* | " ") "-"? digit+   (any case) → key sep "<n>"
//! thread    = "Thread-" digit+                       → "Thread-<n>"  (Python thread names)
//! temp_path = ("/tmp" | "/var/tmp" | "/dev/shm" | "/var/folders" | "/private/var/folders")
//!             "/" path-char*                         → "<tmp>"
//! ```
//!
//! The caller adds the run directories it knows (a triage step's and a bisect variant's, whose
//! names differ by design) with [`stable_with`]; each is replaced by `<run>`, the longest first.
//!
//! What it is not for: deciding whether a line is an error (the causal engine) or comparing
//! numbers (an allocation size, a shape or a stream id is kept: a different one is a different
//! failure). Pure and total: any text in, never a panic, linear time (the `regex` crate's
//! guarantee).

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::{Captures, Regex};

use crate::line_origin::STAMP;

/// The placeholder of a run directory given to [`stable_with`].
pub const RUN_PLACEHOLDER: &str = "<run>";

static TOKENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r#"(?x)
          (?P<repr>\bat\x20 0[xX][0-9a-fA-F]+)
        | (?P<pointer>\b0[xX][0-9a-fA-F]{{8,}}\b)
        | (?P<stamp>{STAMP})
        | (?P<duration>\b[0-9]+(?:\.[0-9]+)?)(?P<unit>\x20?(?:milliseconds|microseconds|seconds|secs|sec|ms|us|s))\b
        | (?P<idkey>\b(?i:pid|ppid|tid|thread[\x20_]id|process[\x20_]id|thread)(?:\x20*[:=\#]\x20*|\x20))-?[0-9]+\b
        | (?P<thread>\bThread-)[0-9]+\b
        | (?P<tmp>(?:/private/var/folders|/var/folders|/var/tmp|/dev/shm|/tmp)/[^\s'"`<>()\[\]{{}},;]*)
        "#
    ))
    .expect("the volatile-token grammar is a valid pattern")
});

/// `text` with its volatile tokens replaced (see the module's grammar); borrowed when it has
/// none.
///
/// ```
/// use npgx_parsers::causal::volatile::stable;
/// let a = "RuntimeError: for node gate (<built-in method sigmoid of type object at 0x7f3a2b1c4d50>): EZ3003: x";
/// let b = "RuntimeError: for node gate (<built-in method sigmoid of type object at 0x7f99e0a11d50>): EZ3003: x";
/// assert_eq!(stable(a), stable(b));
/// assert_eq!(stable("retCode=0x31"), "retCode=0x31");
/// ```
pub fn stable(text: &str) -> Cow<'_, str> {
    TOKENS.replace_all(text, |c: &Captures<'_>| replacement(c))
}

/// [`stable`], after replacing each of `runs` (directories or files of this run that another
/// run has under another name) by [`RUN_PLACEHOLDER`], the longest first so that a directory
/// never eats part of a longer path inside it.
pub fn stable_with(text: &str, runs: &[&str]) -> String {
    let mut runs: Vec<&str> = runs.iter().copied().filter(|r| !r.is_empty()).collect();
    runs.sort_by_key(|r| std::cmp::Reverse(r.len()));
    let mut owned = text.to_string();
    for r in runs {
        if owned.contains(r) {
            owned = owned.replace(r, RUN_PLACEHOLDER);
        }
    }
    stable(&owned).into_owned()
}

fn replacement(c: &Captures<'_>) -> String {
    if c.name("repr").is_some() {
        "at 0x…".into()
    } else if c.name("pointer").is_some() {
        "0x…".into()
    } else if c.name("stamp").is_some() {
        "<time>".into()
    } else if let Some(unit) = c.name("unit") {
        format!("<n>{}", unit.as_str())
    } else if let Some(key) = c.name("idkey") {
        format!("{}<n>", key.as_str())
    } else if let Some(key) = c.name("thread") {
        format!("{}<n>", key.as_str())
    } else if c.name("tmp").is_some() {
        "<tmp>".into()
    } else {
        // Unreachable by the grammar (every alternative is named); keep the text as it was.
        c.get(0).map_or(String::new(), |m| m.as_str().to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &str, b: &str) {
        assert_eq!(stable(a), stable(b), "{a:?} vs {b:?}");
    }

    #[test]
    fn object_reprs_and_pointers() {
        same(
            "for node gate (<built-in method sigmoid of type object at 0x7f3a2b1c4d50>): EZ3003",
            "for node gate (<built-in method sigmoid of type object at 0x7fa9e0a11d50>): EZ3003",
        );
        assert_eq!(
            stable("<function f at 0x1f3>"),
            "<function f at 0x…>",
            "a short address inside a repr is still one"
        );
        assert_eq!(stable("pc start: 0x1240441f2000, x"), "pc start: 0x…, x");
        // Error codes written in hex are kept, and so is what differs between failures.
        assert_eq!(stable("retCode=0x31, [aicore]"), "retCode=0x31, [aicore]");
        assert_ne!(
            stable("for node gate (<sigmoid at 0x7f3a2b1c4d50>)"),
            stable("for node up (<mul at 0x7f3a2b1c4d50>)")
        );
    }

    #[test]
    fn time_stamps_of_every_logger() {
        for (a, b) in [
            (
                "[PID: 14897] 2025-07-23-10:35:42.381.401 The error",
                "[PID: 1] 2025-07-24-11:00:00.000.001 The error",
            ),
            (
                "[ERROR] 2025-11-29-10:54:13 (PID:91804, Device:3, RankID:-1) ERR00100",
                "[ERROR] 2025-11-30-01:02:03 (PID:7, Device:3, RankID:-1) ERR00100",
            ),
            ("[2024-04-30 17:13:04,191] x", "[2024-05-01 07:00:00,000] x"),
            (
                "at 2025-07-23T10:35:42.123+08:00 x",
                "at 2026-01-01T00:00:00Z x",
            ),
            (
                "E1129 10:54:13.679153 12345 a.py:1] x",
                "E1130 11:00:00.000001 999 a.py:1] x",
            ),
            (
                "[E324 13:00:25.428029551 compiler_depend.ts:574] x",
                "[E324 13:01:00.000000001 compiler_depend.ts:574] x",
            ),
            (
                "ERROR 07-23 10:35:57 [core.py:586] x",
                "ERROR 07-24 00:00:00 [core.py:586] x",
            ),
            ("at 9:05:01 done", "at 23:59:59.5 done"),
        ] {
            same(a, b);
        }
        assert_eq!(
            stable("ERROR 07-23 10:35:57 [core.py:586] x"),
            "ERROR <time> [core.py:586] x"
        );
    }

    #[test]
    fn process_and_thread_ids() {
        for (a, b) in [
            ("(PID:91804, Device:3)", "(PID:1, Device:3)"),
            ("(Worker_TP3 pid=2) x", "(Worker_TP3 pid=77) x"),
            ("[tid:1] x", "[tid:4242] x"),
            ("thread_id=5 x", "thread_id=6 x"),
            ("Thread 140 x", "thread 7 x"),
            ("in Thread-5 (worker)", "in Thread-12 (worker)"),
            ("process id: 1", "Process ID: 2"),
        ] {
            assert_eq!(
                stable(a).to_lowercase(),
                stable(b).to_lowercase(),
                "{a:?} vs {b:?}"
            );
        }
        // The device is not a process: a different device is a different failure.
        assert_ne!(stable("(PID:1, Device:3)"), stable("(PID:1, Device:4)"));
    }

    #[test]
    fn durations_temp_paths_and_run_directories() {
        same(
            "ran for 3600185 milliseconds before timing out",
            "ran for 3600012 milliseconds before timing out",
        );
        same("took 1.5 s", "took 12 s");
        assert_eq!(stable("Timeout(ms)=3600000"), "Timeout(ms)=3600000");
        same(
            "cannot open /tmp/tmpab12cd_x/k.so: x",
            "cannot open /tmp/tmpzz99yy_q/k.so: x",
        );
        same(
            "File \"/var/folders/q1/xyz/T/a.py\", line 3",
            "File \"/private/var/folders/aa/b/T/a.py\", line 3",
        );
        let a = stable_with(
            "bad script /r/scripts/step5-npugraph_ex.py in /r/step5-npugraph_ex/out",
            &["/r/step5-npugraph_ex", "/r/scripts/step5-npugraph_ex.py"],
        );
        let b = stable_with(
            "bad script /r/bisect/v/v.py in /r/bisect/v/out",
            &["/r/bisect/v", "/r/bisect/v/v.py", ""],
        );
        assert_eq!(a, b);
        assert_eq!(a, "bad script <run> in <run>/out");
    }

    #[test]
    fn text_without_volatile_tokens_is_borrowed_and_garbage_never_panics() {
        assert!(matches!(
            stable("ValueError: bad value"),
            Cow::Borrowed("ValueError: bad value")
        ));
        let junk: String = (0..=0x10FFu32)
            .filter_map(char::from_u32)
            .cycle()
            .take(20_000)
            .collect();
        let _ = stable(&junk);
        let _ = stable_with(&junk, &["\u{300}", "/"]);
        assert_eq!(stable(""), "");
    }
}
