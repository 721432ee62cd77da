//! Line prefixes that launchers and loggers put in front of the text that matters: the one
//! prefix grammar of npgx, used on plogs, console captures and pasted output alike (plog
//! records behind `[rankN]:`, CANN reports behind c10 warnings, TORCH_LOGS lines, vLLM workers).
//!
//! Nothing is allocated: every field borrows from the line, so the plog hot path can peel each
//! line that starts with `[` or `(` without cost beyond the parse.
//!
//! Grammar (spec `triage-and-repro.md` §3.2 and §4), peeled left to right, any number, any order:
//!
//! ```text
//! vllm_process  = "(" name [" rank=" n] " pid=" n ")" " "                 (VllmWorker rank=3 pid=1564)
//! vllm_logger   = LEVEL " " MM "-" DD " " hh:mm:ss " " ( "[" file ":" n "]" | file ":" n "]" ) [" "]
//!               | LEVEL " [" file ".py:" n "] "        (the date and time left out of the paste)
//! vllm_tail     = "[" file ".py:" n "]" " "          (only the tail of vllm_logger was pasted)
//! rank          = "[rank" n "]:" [" "]
//! glog          = L [YYYY]MMDD " " hh:mm:ss.uuuuuu " "+ n " " path ":" n "]" [" [" trace_id "]"] [" [__" artifact "]"] [" "]
//! c10           = "[" L MDD|MMDD " " hh:mm:ss.n+ " " file ":" n "]" [" "] ["Warning: "]
//! old_torch_logs= "[" YYYY-MM-DD " " hh:mm:ss "," mmm "]" [" [" trace_id "]"] [" "]
//! old_logger    = dotted_logger ": [" LEVEL "]" [" "]                    torch._dynamo.guards.__recompiles: [DEBUG]
//! elided_glog   = ("..." | "…") path ":" n "]" [" [" trace_id "]"] [" [__" artifact "]"] [" "]
//! lite_log      = "[" (L | digits) " " w2 "/" w2 " " w2 ":" w2 ":" w2 "." w3 " " ( "..." path ":" n " " function | path " " function ":" n ) "]" [" "]
//! ort_log       = [YYYY-MM-DD " " hh:mm:ss ["." frac] " "] "[" ("V"|"I"|"W"|"E"|"F") ":" category ":" logger_id ", " location "]" [" "]
//! opencv_log    = "[" ("FATAL"|"ERROR"|" WARN"|" INFO"|"DEBUG") ":" n ["@" n "." n] "] " [tag " " ([drive] path ":" n | path " (" n ")") " " function " "]
//! compose       = service " "+ "|" [" "]                                  web-1    | (docker compose)
//! build_step    = ["#" n " "] n "." d{2,3} " "   (alone only before "/" or a "word:")  #12 27.81 (BuildKit)
//! pytest_error  = "E" " "{2,}                                             E       AssertionError: …
//! issue_title   = "[" Kind "]" [":"] " "   (first on the line; Kind an issue form's)  [Bug]: RuntimeError: …
//! bracket_logger= "[" YYYY-MM-DD (" "|"T") hh:mm:ss [("."|",") frac] [zone] ( " " L " " ids "]" [" " path ":" n ": "]
//!                 | "] " L " "                       (llama.cpp's server log: `[…] I load_tensors: …`)
//!                 | "]" (" "? "[" field "]"){0..8} with one field a LEVEL word [" "? ": "] ) [" "]
//! bar_logger    = "[" LEVEL "|" field "] " text{0,96} " >> "            [INFO|trainer.py:641] 2024-05-24 17:16:11,641 >>
//! collector_time= YYYY-MM-DD "T" hh:mm:ss ["." frac] zone " "              2026-02-13T05:15:39.398506742Z (docker logs -t)
//! separated_logger = ((YYYY-MM-DD | MM/DD/YYYY) (" "|"T") hh:mm:ss [("."|",") frac] [zone] sep | "- ")
//!                 (field sep){0..4} " "* LEVEL " "* sep [tail]      sep = " - " | " | "
//!                 tail = name ":" function ":" n " - "   (after " | ": loguru's location)
//!                      | logger " - "                    (after " - ", the level first: its name)
//! ```
//!
//! `bracket_logger` is the bracketed record header of C++ and Python service loggers: Ray's
//! `[2026-08-05 07:11:08,188 E 3848117 3848117] logging.cc:501: `, MindIE's
//! `[2025-04-15 16:40:05.552024] [17310] [281473799454720] [llm] [ERROR] [model_deploy_config.cpp:159] `
//! and `[2025-11-25 17:23:11,888] [249] [281471718846752] [llm] [ERROR] [logging.py-348] : `
//! (its server's time with an ISO 8601 offset, `zone` = `Z` | ("+"|"-") hh [":"] mm:
//! `[2025-12-15 15:19:22.681+08:00] [38] [452] [server] [ERROR] [http_server.cpp:163] : `),
//! spdlog's `[2025-01-01 12:00:00.123] [name] [error] `. Without a level it is not one (the
//! pre-2.2 TORCH_LOGS form has none there).
//!
//! `separated_logger` is the record header of Python's `logging` in the cookbook's format
//! (`%(asctime)s - %(name)s - %(levelname)s - %(message)s`: `2026-01-19 10:06:44,248 -
//! gpustack.worker.serve_manager - ERROR - `, with any fields between the time and the level,
//! a process id among them) and of loguru's default (`2024-05-01 12:00:00.123 | ERROR    |
//! pkg.module:function:12 - `), and Hugging Face's examples' `10/28/2024 12:00:00 - ERROR -
//! __main__ - ` (the level first, then the logger): the time first, then fields up to a LEVEL
//! word in capitals (padded, as `%(levelname)-8s` and loguru pad it), each field shorter than 65
//! bytes. A paste that cut the time keeps the separator after it first on the line (`-
//! gpustack.cmd.start - CRITICAL - `, wider-world batch 24): that `- ` stands for the time.
//!
//! `spaced_logger` is a header of fields between single spaces after an ISO time: the level word
//! in any case, then a thread id and `pid[N]`, or a bracketed module and source, one of the two
//! at least (Ascend MemFabric's hybm and smem logs: `2025-09-22 20:20:40.102319 error 12789
//! pid[12789] [BM devmm_ioctl.cpp:122] `).
//!
//! `bracketed_level_logger` is a header of an ISO time, then the level and the process id each
//! in brackets and the Python file that logged (torch_npu's profiler logger: `2025-06-13
//! 10:13:28 [ERROR] [911684] profiler.py: `).
//!
//! `elided_glog` is a glog header whose head a user cut to `...` when pasting; its level is
//! unknown and reported as `?`. So is `vllm_tail`'s (a `VllmLogger` with level `?`): the user kept
//! only `[multiproc_executor.py:654] ` of the logger's prefix.
//!
//! `lite_log` is the header of Paddle-Lite's and NNAdapter's glog-like logger (`lite/utils/log`:
//! `gen_log`): `[F  2/ 9 15:51:16.910 ...er/huawei_ascend_npu/utility.cc:221 BuildOMModelToBuffer] `
//! — the level (`I`, `W`, `F`; a number for `VLOG`), the month, day, hour, minute and second
//! each `setw(2)` (`w2`: two columns, a space before one digit — `15: 1: 6`), the milliseconds
//! `setw(3)` (`w3`), then a source longer than 40 characters as its last 40 after `...`, its
//! line and the function, a shorter one whole, the function and the line
//! (`lite/api/light_api.cc Build:42]`). It is reported as a glog header (`VLOG` levels as `V`).
//!
//! `ort_log` is ONNX Runtime's default sink (`OStreamSink`, `core/common/logging`): the time, then
//! `[E:onnxruntime:Default, cann_call.cc:139 CannCall] ` — severity letter, category, logger id
//! (empty for the Python API's default logger: `[E:onnxruntime:, sequential_executor.cc:369
//! Execute] `) and the code location. `opencv_log` is OpenCV's (`cv::utils::logging`,
//! `writeLogMessage`): the level in five columns, the thread, from 4.6 `@` and the seconds since
//! start (`[ WARN:0@0.014] `), then for a tagged record the tag (`global` for none), the source
//! and the function before the message. Both are reported as glog headers with the level's
//! letter (`DEBUG` as `V`); their text is npgx's own reading of the two projects' sources, not
//! the spec's.
//!
//! `issue_title` is npgx's own, not the spec's: the kind an issue form writes before a title the
//! user pasted as the first line of the output (`[Question]: RuntimeError: …`, the wider-world
//! batch 11 of docs/triage.md), from a closed list of the forms' kinds.
//!
//! `L` is one of `V I W E C F` (glog) or `V I W E F` (c10). The glog form is TORCH_LOGS' and the
//! glog library's own (which writes the year when `log_year_in_prefix` is on, its default since
//! 0.6, and pads the thread id to five columns). The numeric column after the glog time is opaque
//! (pid in new PyTorch, thread id in older releases and in glog); a `trace_id` holds a `/`.

use nom::branch::alt;
use nom::bytes::complete::{tag, take_till, take_while, take_while1, take_while_m_n};
use nom::character::complete::{char, digit1, one_of};
use nom::combinator::{opt, recognize, verify};
use nom::sequence::{delimited, preceded};
use nom::{IResult, Parser};
use serde::Serialize;

/// One peeled prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinePrefix<'a> {
    /// `(VllmWorker rank=3 pid=1564) `: the process label of a vLLM worker.
    VllmProcess { label: &'a str },
    /// `ERROR 08-06 10:40:29 [multiproc_executor.py:546] `.
    VllmLogger { level: &'a str, source: &'a str },
    /// `[rank1]:` from torchrun / torch.distributed.
    Rank { rank: u32 },
    /// A glog-form header (TORCH_LOGS, the glog library; Paddle-Lite's, ONNX Runtime's and
    /// OpenCV's loggers, read with the same level letters).
    Glog(GlogHeader<'a>),
    /// A c10 (`TORCH_WARN` / `LOG(ERROR)`) header: `[E324 13:00:25.428029551 compiler_depend.ts:574] `.
    C10 { level: char, source: &'a str },
    /// The pre-2.2 TORCH_LOGS form `[2024-04-30 17:13:04,191] [0/0] `.
    OldTorchLogs { trace_id: Option<&'a str> },
    /// The pre-2.2 logger tag `torch._dynamo.guards.__recompiles: [DEBUG] `.
    OldLogger { logger: &'a str, level: &'a str },
    /// `docker compose` / `docker-compose` service column: `vllm-1  | `.
    Compose { service: &'a str },
    /// BuildKit's plain progress (`docker build --progress=plain`): the step's number and the
    /// seconds since it started (`#12 27.81 `), or the seconds alone, as the summary of a failed
    /// step prints its last lines (`27.81 /app/x.cpp:1230:19: error: …`).
    BuildStep { seconds: &'a str },
    /// A service logger's record header with its level as printed (`ERROR`, `error`, `E`):
    /// bracketed fields (`bracket_logger`) or fields between separators (`separated_logger`).
    ServiceLogger { level: &'a str },
    /// pytest's marker of the lines that explain a failure (`E       …`).
    PytestError,
    /// A bracketed stage or component tag in front of another prefix: vllm-omni's `[Stage-1] `
    /// before vLLM's logger header; or progress dots a process printed without a newline, glued
    /// to the next record (`.[rank0]:[E903 …] `).
    Tag { tag: &'a str },
    /// The kind an issue form puts in front of a title (`[Bug]: `, `[Question]: `, `[Usage]: `),
    /// pasted with the title as its first line.
    IssueTitle { title_kind: &'a str },
    /// The time a log collector put in front of each line it relays (`docker logs
    /// --timestamps`, `kubectl logs --timestamps`: RFC 3339 with its zone,
    /// `2026-02-13T05:15:39.398506742Z `); no level of its own.
    CollectorTime { time: &'a str },
}

/// How grave a record is, by the level its logger printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// A header whose level the user cut off when pasting (`?`).
    Elided,
    Debug,
    Info,
    Warning,
    Error,
}

impl Severity {
    /// The severity a level word or letter names, in any case (`ERROR`, `error`, `E`, `WARN`,
    /// glog's `V`); `?` is an elided level. Anything else names none.
    pub fn named(level: &str) -> Option<Severity> {
        use Severity::*;
        const NAMES: &[(&str, Severity)] = &[
            ("?", Elided),
            ("TRACE", Debug),
            ("DEBUG", Debug),
            ("V", Debug),
            ("D", Debug),
            ("INFO", Info),
            ("I", Info),
            ("WARN", Warning),
            ("WARNING", Warning),
            ("W", Warning),
            ("ERROR", Error),
            ("CRITICAL", Error),
            ("FATAL", Error),
            ("E", Error),
            ("C", Error),
            ("F", Error),
        ];
        NAMES
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case(level))
            .map(|&(_, s)| s)
    }

    /// A known level below an error's: chatter or a warning (an elided level is neither).
    pub fn below_error(self) -> bool {
        matches!(self, Severity::Debug | Severity::Info | Severity::Warning)
    }

    /// Debug or INFO chatter.
    pub fn chatter(self) -> bool {
        matches!(self, Severity::Debug | Severity::Info)
    }
}

impl LinePrefix<'_> {
    /// The level this prefix states (a logger's, glog's or c10's), if it states one.
    pub fn severity(&self) -> Option<Severity> {
        match self {
            LinePrefix::VllmLogger { level, .. }
            | LinePrefix::OldLogger { level, .. }
            | LinePrefix::ServiceLogger { level } => Severity::named(level),
            LinePrefix::Glog(GlogHeader { level, .. }) | LinePrefix::C10 { level, .. } => {
                Severity::named(level.encode_utf8(&mut [0; 4]))
            }
            _ => None,
        }
    }

    /// Whether the prefix is a relay's, put in front of every line a process printed (a log
    /// collector's time, docker compose's service, torchrun's rank, a vLLM worker's label,
    /// BuildKit's step): a line behind it alone may go on with the line above.
    pub fn is_relay(&self) -> bool {
        matches!(
            self,
            LinePrefix::CollectorTime { .. }
                | LinePrefix::Compose { .. }
                | LinePrefix::Rank { .. }
                | LinePrefix::VllmProcess { .. }
                | LinePrefix::BuildStep { .. }
        )
    }
}

/// The level a line's prefixes state: the innermost that states one (the record's own, under a
/// relaying process's), a known level before an elided one.
pub fn record_severity(prefixes: &[LinePrefix<'_>]) -> Option<Severity> {
    let mut levels = prefixes.iter().rev().filter_map(LinePrefix::severity);
    let first = levels.next()?;
    Some(match first {
        Severity::Elided => levels.find(|s| *s != Severity::Elided).unwrap_or(first),
        known => known,
    })
}

/// The bare bracketed level tag `t` opens with (`[ERROR]  acl set device 0 failed`, `[WARN]
/// …`, `[INFO] …`: the Ascend samples' and many C++ tools' macros; CANN's `[EVENT]` is
/// INFO): its level, and the text after it. The word is in capitals and longer than a letter.
pub fn bare_level_tag(t: &str) -> Option<(Severity, &str)> {
    let (word, rest) = t.strip_prefix('[')?.split_once(']')?;
    if word.len() < 2 || word.bytes().any(|b| !b.is_ascii_uppercase()) {
        return None;
    }
    let level = if word == "EVENT" {
        Severity::Info
    } else {
        Severity::named(word)?
    };
    Some((level, rest))
}

/// The level a line states: its prefixes' ([`record_severity`]), else a bare level tag at the
/// start of `rest`, the text after them (`[WARN] …`, [`bare_level_tag`]), or Python logging's
/// basic form (`WARNING:root:…`). The one reader of a line's level.
pub fn line_severity(prefixes: &[LinePrefix<'_>], rest: &str) -> Option<Severity> {
    record_severity(prefixes)
        .or_else(|| bare_level_tag(rest).map(|(level, _)| level))
        .or_else(|| {
            crate::torch_logs::python::logging_line(rest).and_then(|l| Severity::named(l.level))
        })
}

/// The parsed glog-form header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GlogHeader<'a> {
    /// `V` (debug), `I`, `W`, `E`, `C`, `F`; `?` for an elided header.
    pub level: char,
    /// `torch/_dynamo/guards.py:2609`.
    pub source: &'a str,
    /// `0/7`, `1/0_1`, `!0/0/0`.
    pub trace_id: Option<&'a str>,
    /// `recompiles_verbose` for `[__recompiles_verbose]`.
    pub artifact: Option<&'a str>,
}

/// A line with its prefixes peeled off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stripped<'a> {
    pub prefixes: Vec<LinePrefix<'a>>,
    /// The text after the last prefix, verbatim (leading indentation kept).
    pub rest: &'a str,
}

impl<'a> Stripped<'a> {
    /// The TORCH_LOGS header, if the line had one.
    pub fn glog(&self) -> Option<&GlogHeader<'a>> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::Glog(g) => Some(g),
            _ => None,
        })
    }

    /// The c10 level letter, if the line had a c10 header.
    pub fn c10_level(&self) -> Option<char> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::C10 { level, .. } => Some(*level),
            _ => None,
        })
    }

    /// The torchrun rank, from `[rankN]:`.
    pub fn rank(&self) -> Option<u32> {
        self.prefixes.iter().find_map(|p| match p {
            LinePrefix::Rank { rank } => Some(*rank),
            _ => None,
        })
    }

    /// The innermost vLLM process label as name and pid: `(Worker_TP3 pid=2)` → `("Worker_TP3", 2)`;
    /// a `rank=` field between them is not part of the name.
    pub fn process(&self) -> Option<(&'a str, u64)> {
        self.prefixes.iter().rev().find_map(|p| match p {
            LinePrefix::VllmProcess { label } => {
                let (head, pid) = label.rsplit_once(" pid=")?;
                let name = head.split_once(" rank=").map_or(head, |(n, _)| n);
                Some((name, pid.parse().ok()?))
            }
            _ => None,
        })
    }
}

/// Peels every known prefix off `line`. Never fails: a line without prefixes comes back as is.
///
/// ```
/// use npgx_parsers::line_prefix::strip_prefixes;
/// let p = strip_prefixes("(Worker_DP0_TP6_EP6 pid=363) ERROR 12-12 12:10:10 [multiproc_executor.py:822] WorkerProc hit");
/// assert_eq!(p.process(), Some(("Worker_DP0_TP6_EP6", 363)));
/// assert_eq!(p.rest, "WorkerProc hit");
/// let p = strip_prefixes("[rank6]: [ERROR] (PID:360123, Device:6, RankID:6) ERR01100 OPS call acl api failed.");
/// assert_eq!((p.rank(), p.rest.starts_with("[ERROR] (PID")), (Some(6), true));
/// ```
pub fn strip_prefixes(line: &str) -> Stripped<'_> {
    let mut rest = line;
    let mut prefixes = Vec::new();
    if let Ok((after, title)) = issue_title(rest) {
        prefixes.push(title);
        rest = after;
    }
    loop {
        // Two groups: nom's `alt` takes at most 21 choices.
        let parsed = alt((
            alt((
                vllm_process,
                vllm_logger,
                // Before `vllm_tail`, which would read `[INFO|trainer.py:641]` as a source.
                bar_logger,
                vllm_tail,
                rank,
                glog,
                elided_glog,
                c10,
                lite_log,
                ort_log,
                opencv_log,
            )),
            bracket_logger,
            separated_logger,
            spaced_logger,
            bracketed_level_logger,
            collector_time,
            pytest_error,
            old_torch_logs,
            old_logger,
            compose,
            build_step,
            tag_before_prefix,
            dots_before_prefix,
        ))
        .parse(rest);
        match parsed {
            Ok((after, prefix)) if after.len() < rest.len() => {
                prefixes.push(prefix);
                rest = after;
            }
            _ => break,
        }
    }
    Stripped { prefixes, rest }
}

type R<'a, T> = IResult<&'a str, T>;

fn digits(n: usize) -> impl Fn(&str) -> R<'_, &str> {
    move |i| take_while_m_n(n, n, |c: char| c.is_ascii_digit())(i)
}

/// `hh:mm:ss`
fn hms(i: &str) -> R<'_, &str> {
    recognize((digits(2), char(':'), digits(2), char(':'), digits(2))).parse(i)
}

fn opt_space(i: &str) -> R<'_, Option<char>> {
    opt(char(' ')).parse(i)
}

/// `[Stage-1] `: a bracketed word (letters, digits, `-_.`, at most 32) and a space, taken only
/// where another prefix follows it, so a message that starts with a bracketed word keeps it.
fn tag_before_prefix(i: &str) -> R<'_, LinePrefix<'_>> {
    let word = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let (after, t) = delimited(char('['), take_while_m_n(1, 32, word), tag("] ")).parse(i)?;
    alt((vllm_process, vllm_logger, rank, glog, c10, bracket_logger)).parse(after)?;
    Ok((after, LinePrefix::Tag { tag: t }))
}

/// `.[rank0]:[E903 …] `: progress dots (a loader's or a warm-up's, printed without a newline)
/// glued to the record that followed them, taken only where another prefix follows, so a
/// message that starts with dots keeps them.
fn dots_before_prefix(i: &str) -> R<'_, LinePrefix<'_>> {
    let (after, dots) = take_while_m_n(1, 64, |c: char| c == '.')(i)?;
    alt((vllm_process, vllm_logger, rank, glog, c10, bracket_logger)).parse(after)?;
    Ok((after, LinePrefix::Tag { tag: dots }))
}

/// The marker of a Markdown heading (`# `, up to `###### `) before an issue title: an issue
/// page pasted whole starts with its title as a heading. `i` after it, or `i` itself.
pub(crate) fn heading_marker(i: &str) -> &str {
    let hashes = i.len() - i.trim_start_matches('#').len();
    match i[hashes..].strip_prefix(' ') {
        Some(after) if (1..=6).contains(&hashes) => after,
        _ => i,
    }
}

/// `[Bug]: `: the kind an issue form puts in front of a title, as the forms of vLLM,
/// vLLM-Ascend, SGLang (`[Bug] `, no colon) and other projects write it — a closed list, so a
/// logger's bracketed tag (`[Trainer]: `, `[ERR]: `, torch_npu's `[Error]: `) is left alone.
fn issue_title(i: &str) -> R<'_, LinePrefix<'_>> {
    let i = heading_marker(i);
    let (after, kind) = delimited(
        char('['),
        verify(take_till(|c| c == ']' || c == '['), |w: &str| {
            ISSUE_KINDS.iter().any(|k| w.eq_ignore_ascii_case(k))
        }),
        char(']'),
    )
    .parse(i)?;
    let after = after.strip_prefix(':').unwrap_or(after);
    let after = after
        .strip_prefix(' ')
        .filter(|r| r.starts_with(|c: char| !c.is_whitespace()));
    let Some(after) = after else {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    };
    Ok((after, LinePrefix::IssueTitle { title_kind: kind }))
}

/// The kinds issue forms put before a title (vLLM's and vLLM-Ascend's `.github/ISSUE_TEMPLATE`
/// forms, SGLang's, and the common GitHub ones).
const ISSUE_KINDS: [&str; 19] = [
    "Bug",
    "Usage",
    "Question",
    "Feature",
    "Feature Request",
    "RFC",
    "Installation",
    "Performance",
    "Misc",
    "Doc",
    "Docs",
    "Documentation",
    "Help",
    "New Model",
    "CI Failure",
    "Model",
    "Hardware",
    "Enhancement",
    "Help Wanted",
];

fn vllm_process(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, label) =
        delimited(char('('), take_till(|c| c == ')' || c == '('), char(')')).parse(i)?;
    if !label.contains("pid=") {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    let (i, _) = char(' ').parse(i)?;
    Ok((i, LinePrefix::VllmProcess { label }))
}

fn vllm_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, level) = alt((
        tag("ERROR"),
        tag("WARNING"),
        tag("INFO"),
        tag("DEBUG"),
        tag("CRITICAL"),
    ))
    .parse(i)?;
    let dated = (
        char(' '),
        digits(2),
        char('-'),
        digits(2),
        char(' '),
        hms,
        char(' '),
    )
        .parse(i);
    let (i, source) = match dated {
        Ok((i, _)) => alt((
            delimited(char('['), source_loc, tag("]")),
            (source_loc, tag("]")).map(|(s, _)| s),
        ))
        .parse(i)?,
        // `ERROR [multiproc_executor.py:800] `: the date and time left out (a paste that cut
        // them): a Python source in brackets, as the logger prints it, then a space.
        Err(_) => {
            let (r, source) =
                preceded(char(' '), delimited(char('['), source_loc, char(']'))).parse(i)?;
            if !is_python_source(source) || !r.starts_with(' ') {
                return Err(nom::Err::Error(nom::error::Error::new(
                    i,
                    nom::error::ErrorKind::Verify,
                )));
            }
            (r, source)
        }
    };
    let (i, _) = opt_space(i)?;
    Ok((i, LinePrefix::VllmLogger { level, source }))
}

/// `multiproc_executor.py:654`: a Python source and its line.
fn is_python_source(source: &str) -> bool {
    source
        .rsplit_once(':')
        .is_some_and(|(file, _)| file.ends_with(".py"))
}

/// `[multiproc_executor.py:654] `: the tail of a vLLM logger prefix whose head was not pasted.
/// Only a Python source and a line number in brackets, then a space.
fn vllm_tail(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, source) = delimited(char('['), source_loc, char(']')).parse(i)?;
    let (r, _) = char(' ').parse(r)?;
    if !is_python_source(source) {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((r, LinePrefix::VllmLogger { level: "?", source }))
}

/// `file.py:546`
fn source_loc(i: &str) -> R<'_, &str> {
    recognize((
        take_while1(|c: char| c != ':' && c != ']' && c != ' ' && c != '['),
        char(':'),
        digit1,
    ))
    .parse(i)
}

/// `vllm-1  | `: a service name (letters, digits, `_.-`), at least one space, a bar. Only at
/// the start of a line (compose prints it first).
fn compose(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, service) = recognize((
        take_while_m_n(1, 1, |c: char| c.is_ascii_alphanumeric()),
        take_while(|c: char| c.is_ascii_alphanumeric() || "_.-".contains(c)),
    ))
    .parse(i)?;
    let (r, _) = (take_while1(|c| c == ' '), char('|'), opt_space).parse(r)?;
    Ok((r, LinePrefix::Compose { service }))
}

/// A step's seconds are a prefix after the step's number (`#12 27.81 `); alone, only before what a
/// build prints — a path or a `tool:` word (`27.81 /app/x.cpp:1:2: error: …`, `27.85 gmake[3]:
/// ***`) — so a line of figures (`12.34 ms per step`, `0.95 0.93`) keeps its number.
fn build_step(i: &str) -> R<'_, LinePrefix<'_>> {
    let not_one = || nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify));
    let (step, seconds, after) = build_seconds(i).ok_or_else(not_one)?;
    // Alone on an empty output line, or with one decimal (`3.1 loss`), the figure is the line's.
    let decimals = seconds.split_once('.').map_or(0, |(_, d)| d.len());
    let r = after
        .strip_prefix(' ')
        .filter(|_| decimals >= 2)
        .ok_or_else(not_one)?;
    let word = r.split(' ').next().unwrap_or("");
    let built = word.starts_with('/')
        || word.contains(':') && !word.starts_with(|c: char| c.is_ascii_digit());
    if !step && !built {
        return Err(not_one());
    }
    Ok((r, LinePrefix::BuildStep { seconds }))
}

/// BuildKit's seconds at the start of a step's output line, as a token: `[#n ]n.d[d[d]]`, then a
/// space or the line's end (an empty output line). Whether a step number led them, the seconds,
/// and what follows them (the space, then the output with its own indentation); `None` without
/// them.
/// Alone they may be a line's own figure: [`build_step`] peels them only before a path or a
/// `tool:` word, a reader that knows the block is BuildKit's (pip's report) everywhere.
pub fn build_seconds(s: &str) -> Option<(bool, &str, &str)> {
    let numbered = s
        .strip_prefix('#')
        .and_then(|r| r.split_once(' '))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    let body = numbered.map_or(s, |(_, r)| r);
    let (secs, rest) = body.split_at(body.find(' ').unwrap_or(body.len()));
    let seconds = secs.split_once('.').is_some_and(|(a, b)| {
        !a.is_empty()
            && a.bytes().all(|c| c.is_ascii_digit())
            && (1..=3).contains(&b.len())
            && b.bytes().all(|c| c.is_ascii_digit())
    });
    seconds.then_some((numbered.is_some(), secs, rest))
}

fn rank(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, n) = delimited(tag("[rank"), digit1, tag("]:")).parse(i)?;
    let (i, _) = opt_space(i)?;
    Ok((
        i,
        LinePrefix::Rank {
            rank: n.parse().unwrap_or(u32::MAX),
        },
    ))
}

/// `«L»«MMDD» «hh:mm:ss.uuuuuu» «thread» «path»:«line»] `, as `TORCH_LOGS` writes it, and as
/// the glog library itself does (`LogMessage::Init`): the year before the month when
/// `log_year_in_prefix` is on (its default since glog 0.6: `E20231116 09:50:41.157967`), the
/// thread id padded to five columns (`  2326`), `F` for FATAL.
fn glog(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, level) = one_of("VIWECF").parse(i)?;
    let (i, _) = (
        alt((digits(8), digits(4))),
        char(' '),
        hms,
        char('.'),
        digits(6),
        take_while1(|c| c == ' '),
        digit1,
        char(' '),
    )
        .parse(i)?;
    let (i, source) = source_loc(i)?;
    let (i, _) = char(']').parse(i)?;
    let (i, (trace_id, artifact)) = glog_tail(i)?;
    Ok((
        i,
        LinePrefix::Glog(GlogHeader {
            level,
            source,
            trace_id,
            artifact,
        }),
    ))
}

/// ` [0/7]`, ` [1/0_1]`, ` [!0/0/0]`: a compile trace id (frame and compile ids, so a `/`
/// always; a bracketed number, such as an error code opening the message, is not one).
fn trace_id(i: &str) -> R<'_, &str> {
    preceded(
        char(' '),
        delimited(
            char('['),
            verify(
                take_while1(|c: char| c.is_ascii_digit() || "/_!".contains(c)),
                |id: &str| id.contains('/'),
            ),
            char(']'),
        ),
    )
    .parse(i)
}

/// The part of a glog header after the source location: trace id and artifact tags.
fn glog_tail(i: &str) -> R<'_, (Option<&str>, Option<&str>)> {
    let (i, trace_id) = opt(trace_id).parse(i)?;
    let (i, artifact) = opt(preceded(
        char(' '),
        delimited(
            tag("[__"),
            take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_'),
            char(']'),
        ),
    ))
    .parse(i)?;
    let (i, _) = opt_space(i)?;
    Ok((i, (trace_id, artifact)))
}

fn elided_glog(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, _) = alt((tag("..."), tag("\u{2026}"))).parse(i)?;
    let (i, source) = source_loc(i)?;
    let (i, _) = char(']').parse(i)?;
    let (i, (trace_id, artifact)) = glog_tail(i)?;
    Ok((
        i,
        LinePrefix::Glog(GlogHeader {
            level: '?',
            source,
            trace_id,
            artifact,
        }),
    ))
}

fn old_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, logger) =
        take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.').parse(i)?;
    if !logger.contains('.') {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    let (i, level) = delimited(
        tag(": ["),
        alt((
            tag("DEBUG"),
            tag("INFO"),
            tag("WARNING"),
            tag("ERROR"),
            tag("CRITICAL"),
        )),
        char(']'),
    )
    .parse(i)?;
    let (i, _) = opt_space(i)?;
    Ok((i, LinePrefix::OldLogger { logger, level }))
}

fn c10(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, _) = char('[').parse(i)?;
    let (i, level) = one_of("VIWEF").parse(i)?;
    // c10 prints the month without zero padding: `E324` is March 24th.
    let (i, _) = (
        take_while_m_n(3, 4, |c: char| c.is_ascii_digit()),
        char(' '),
        hms,
        char('.'),
        digit1,
        char(' '),
    )
        .parse(i)?;
    let (i, source) = source_loc(i)?;
    let (i, _) = char(']').parse(i)?;
    let (i, _) = opt_space(i)?;
    // TORCH_WARN's own word, not the message: `[W904 …] Warning: EZ9999: Inner Error!`.
    let (i, _) = opt(tag("Warning: ")).parse(i)?;
    Ok((i, LinePrefix::C10 { level, source }))
}

/// A number `setw(n)` printed, no fill character: `n` columns, spaces before its digits (`12`,
/// ` 2`; `910`, ` 91`, `  9`).
fn padded(n: usize) -> impl Fn(&str) -> R<'_, &str> {
    move |i| {
        let (r, field) = take_while_m_n(n, n, |c: char| c == ' ' || c.is_ascii_digit())(i)?;
        let digits = field.trim_start_matches(' ');
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(nom::Err::Error(nom::error::Error::new(
                i,
                nom::error::ErrorKind::Digit,
            )));
        }
        Ok((r, field))
    }
}

/// Paddle-Lite's logger header (see the module's text).
fn lite_log(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, _) = char('[').parse(i)?;
    let (i, level) = alt((
        one_of("IWEF"),
        take_while_m_n(1, 2, |c: char| c.is_ascii_digit()).map(|_| 'V'),
    ))
    .parse(i)?;
    let (i, _) = (
        char(' '),
        padded(2),
        char('/'),
        padded(2),
        char(' '),
        padded(2),
        char(':'),
        padded(2),
        char(':'),
        padded(2),
        char('.'),
        padded(3),
        char(' '),
    )
        .parse(i)?;
    let function = || take_while1(|c: char| c != ']' && c != ':' && c != ' ');
    // A long source: `...` and its last 40 characters, `:line`, the function.
    let long = preceded(tag("..."), (source_loc, char(' '), function())).map(|(s, _, _)| s);
    // A short one: the source, the function, `:line` (the source without its line).
    let short = (
        take_while1(|c: char| c != ' ' && c != ']' && c != '['),
        char(' '),
        function(),
        char(':'),
        digit1,
    )
        .map(|(s, _, _, _, _)| s);
    let (i, source) = alt((long, short)).parse(i)?;
    let (i, _) = (char(']'), opt_space).parse(i)?;
    Ok((i, plain_glog(level, source)))
}

/// A glog-form header of another logger: its level letter and source, no trace id or artifact.
fn plain_glog(level: char, source: &str) -> LinePrefix<'_> {
    LinePrefix::Glog(GlogHeader {
        level,
        source,
        trace_id: None,
        artifact: None,
    })
}

/// ONNX Runtime's logger header (its `OStreamSink`): an optional time
/// (`2025-09-29 06:21:38.967642262 `), then `[`, the severity letter (`V I W E F`), `:`, the
/// category, `:`, the logger id (often empty), `, `, the location (`cann_call.cc:139 CannCall`)
/// and `] `. Read as a glog-form header: the same letters, the location's `file:line` as source.
fn ort_log(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, _) = opt((
        iso_date,
        char(' '),
        hms,
        opt((char('.'), fraction)),
        char(' '),
    ))
    .parse(i)?;
    let (i, (_, level, _, _, _, _, _)) = (
        char('['),
        one_of("VIWEF"),
        char(':'),
        take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '.'),
        char(':'),
        take_while_m_n(0, 64, |c: char| c != ',' && c != ']' && c != '['),
        tag(", "),
    )
        .parse(i)?;
    let (i, location) = take_while_m_n(1, 256, |c: char| c != ']' && c != '[').parse(i)?;
    let (i, _) = (char(']'), opt_space).parse(i)?;
    let source = location.split(' ').next().unwrap_or(location);
    Ok((i, plain_glog(level, source)))
}

/// OpenCV's logger header (`cv::utils::logging`): `[`, the level padded to five (`FATAL`,
/// `ERROR`, ` WARN`, ` INFO`, `DEBUG`), `:`, the thread number, from 4.6 `@` and the seconds
/// since start, `] `; then, for a tagged record, the tag (`global` when none), the source as
/// `net_cann.cpp:291` or `cap_v4l.cpp (902)` (both are printed, by release) and the function.
/// Read as a glog-form header with the level's letter (`DEBUG` as `V`).
fn opencv_log(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, (_, level, _, _, _, _)) = (
        char('['),
        alt((
            tag("FATAL").map(|_| 'F'),
            tag("ERROR").map(|_| 'E'),
            tag(" WARN").map(|_| 'W'),
            tag(" INFO").map(|_| 'I'),
            tag("DEBUG").map(|_| 'V'),
        )),
        char(':'),
        digit1,
        opt((char('@'), digit1, char('.'), digit1)),
        tag("] "),
    )
        .parse(i)?;
    let word = || take_while1(|c: char| c != ' ' && c != '[' && c != ']');
    // A Windows path's drive (`C:\opencv\…`) before the path's own colon-free rest.
    let drive = || {
        opt((
            take_while_m_n(1, 1, |c: char| c.is_ascii_alphabetic()),
            tag(":\\"),
        ))
    };
    let located = alt((
        recognize((
            drive(),
            take_while1(|c: char| c != ' ' && c != ':'),
            char(':'),
            digit1,
        )),
        recognize((word(), tag(" ("), digit1, char(')'))),
    ));
    let (i, source) = opt((word(), char(' '), located, char(' '), word(), char(' ')))
        .map(|t| t.map_or("", |(_, _, src, _, _, _)| src))
        .parse(i)?;
    Ok((i, plain_glog(level, source)))
}

/// `[YYYY-MM-DD`: the opening of a bracketed date-time.
fn bracket_date(i: &str) -> R<'_, &str> {
    recognize((char('['), iso_date)).parse(i)
}

/// `YYYY-MM-DD`.
fn iso_date(i: &str) -> R<'_, &str> {
    recognize((digits(4), char('-'), digits(2), char('-'), digits(2))).parse(i)
}

/// A second's fraction: one to nine digits.
fn fraction(i: &str) -> R<'_, &str> {
    take_while_m_n(1, 9, |c: char| c.is_ascii_digit())(i)
}

fn old_torch_logs(i: &str) -> R<'_, LinePrefix<'_>> {
    let (i, _) = (
        bracket_date,
        char(' '),
        hms,
        char(','),
        digits(3),
        char(']'),
    )
        .parse(i)?;
    let (i, trace_id) = opt(trace_id).parse(i)?;
    let (i, _) = opt_space(i)?;
    Ok((i, LinePrefix::OldTorchLogs { trace_id }))
}

/// `E` and at least two spaces at the start of a line: pytest's failure explanation.
fn pytest_error(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, _) = (char('E'), tag("  "), take_while(|c| c == ' ')).parse(i)?;
    Ok((r, LinePrefix::PytestError))
}

/// Whether a bracketed field is a log level word.
fn is_level_word(f: &str) -> bool {
    f.len() > 1 && Severity::named(f).is_some()
}

/// An ISO 8601 time-zone designator: `Z`, `+08:00`, `-0500`.
fn zone(i: &str) -> R<'_, &str> {
    recognize(alt((
        recognize(char('Z')),
        recognize((one_of("+-"), digits(2), opt(char(':')), digits(2))),
    )))
    .parse(i)
}

/// An ISO 8601 date and time: the date, a space or `T`, the time, a fraction of a second after
/// `.` or `,`, a zone (`2026-02-13T05:15:39.398506742Z`, `2025-12-15 15:19:22.681+08:00`).
fn iso_datetime(i: &str) -> R<'_, &str> {
    recognize((
        iso_date,
        one_of(" T"),
        hms,
        opt((one_of(".,"), fraction)),
        opt(zone),
    ))
    .parse(i)
}

fn bracket_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, _) = (char('['), iso_datetime).parse(i)?;
    // Ray (glog in brackets): ` E 3848117 3848117] logging.cc:501: `.
    if let Some(after) = r.strip_prefix(' ') {
        let (after, level) = recognize(one_of("DIWEFC")).parse(after)?;
        let (after, _) = (
            char(' '),
            take_while1(|c: char| c.is_ascii_digit() || c == ' '),
            char(']'),
        )
            .parse(after)?;
        let (after, _) = opt((char(' '), source_loc, tag(": "))).parse(after)?;
        let (after, _) = opt_space(after)?;
        return Ok((after, LinePrefix::ServiceLogger { level }));
    }
    let (mut r, _) = char(']').parse(r)?;
    // A level letter after the time (llama.cpp's server log: `[2025-07-21 10:37:49.269985] I
    // load_tensors: …`).
    let letter: R<'_, (char, &str, char)> =
        (char(' '), recognize(one_of("DIWEF")), char(' ')).parse(r);
    if let Ok((after, (_, level, _))) = letter {
        return Ok((after, LinePrefix::ServiceLogger { level }));
    }
    let mut level = None;
    for _ in 0..8 {
        let (after, _) = opt_space(r)?;
        let field: R<'_, &str> =
            delimited(char('['), take_till(|c| c == ']' || c == '['), char(']')).parse(after);
        let Ok((after, field)) = field else {
            break;
        };
        if field.len() > 64 {
            break;
        }
        if level.is_some() {
            // After the level only the source location (`[file.cpp:159]`, `[logging.py-348]`)
            // belongs to the header; a tag after it (`[Config]`) is the message's.
            let source = field.contains('.') && field.ends_with(|c: char| c.is_ascii_digit());
            if source {
                r = after;
            }
            break;
        }
        if is_level_word(field) {
            level = Some(field);
        }
        r = after;
    }
    let level = level
        .ok_or_else(|| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify)))?;
    let (r, _) = opt((opt_space, tag(": "))).parse(r)?;
    let (r, _) = opt_space(r)?;
    Ok((r, LinePrefix::ServiceLogger { level }))
}

/// An ISO date and time (with a fraction of a second or not) and the space after it: the head of
/// `spaced_logger` and `bracketed_level_logger`.
fn spaced_time(i: &str) -> R<'_, &str> {
    recognize((
        iso_date,
        char(' '),
        hms,
        opt((one_of(".,"), fraction)),
        char(' '),
    ))
    .parse(i)
}

/// `spaced_logger` of the grammar (see the module's text).
fn spaced_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, _) = spaced_time(i)?;
    let (r, level) = verify(take_till(|c: char| c == ' '), is_level_word).parse(r)?;
    let (r, _) = char(' ').parse(r)?;
    let (r, ids) = opt((digit1, tag(" pid["), digit1, tag("] "))).parse(r)?;
    // `[BM devmm_ioctl.cpp:122]`: a module, a space, a source and its line.
    let located = |s: &str| {
        s.len() <= 64
            && s.rsplit_once(' ').is_some_and(|(module, loc)| {
                !module.is_empty()
                    && !module.contains(' ')
                    && loc.rsplit_once(':').is_some_and(|(f, n)| {
                        f.contains('.') && !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
                    })
            })
    };
    let (r, source) = opt((
        char('['),
        verify(take_till(|c| c == ']' || c == '['), located),
        tag("] "),
    ))
    .parse(r)?;
    if ids.is_none() && source.is_none() {
        return Err(nom::Err::Error(nom::error::Error::new(
            i,
            nom::error::ErrorKind::Verify,
        )));
    }
    Ok((r, LinePrefix::ServiceLogger { level }))
}

/// `bracketed_level_logger` of the grammar: an ISO time, the level and the process id each in
/// brackets, then the Python file that logged (`2025-06-13 10:13:28 [ERROR] [911684]
/// profiler.py: `, torch_npu's profiler logger, `%(asctime)s [%(levelname)s] [%(process)d]
/// %(filename)s: `).
fn bracketed_level_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, _) = spaced_time(i)?;
    let (r, level) = delimited(
        char('['),
        verify(take_till(|c: char| c == ']' || c == ' '), is_level_word),
        char(']'),
    )
    .parse(r)?;
    let (r, _) = (tag(" ["), digit1, tag("] ")).parse(r)?;
    let python_file =
        |s: &str| s.len() <= 64 && s.ends_with(".py") && !s.contains(char::is_whitespace);
    let (r, _) = opt((
        verify(take_till(|c: char| c == ':'), python_file),
        tag(": "),
    ))
    .parse(r)?;
    Ok((r, LinePrefix::ServiceLogger { level }))
}

/// `bar_logger` of the grammar: the level and a field between `|` in brackets, then the record's
/// fields up to ` >> ` (LLaMA-Factory's loggers: transformers' records as `[INFO|trainer.py:641]
/// 2024-05-24 17:16:11,641 >> `, its own as `[INFO|2024-05-24 17:16:11] llamafactory.data.loader:52
/// >> `).
fn bar_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    let (r, (_, level, _, _, _)) = (
        char('['),
        verify(
            take_while1(|c: char| c.is_ascii_alphabetic()),
            is_level_word,
        ),
        char('|'),
        take_while_m_n(1, 64, |c: char| c != ']' && c != '['),
        tag("] "),
    )
        .parse(i)?;
    let fields = r
        .find(" >> ")
        .filter(|&at| at <= 96 && !r[..at].contains(">>"))
        .ok_or_else(|| nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify)))?;
    Ok((&r[fields + 4..], LinePrefix::ServiceLogger { level }))
}

/// `collector_time` of the grammar: RFC 3339 with its zone and a space (`docker logs -t`).
fn collector_time(i: &str) -> R<'_, LinePrefix<'_>> {
    let rfc3339 = |t: &&str| {
        t.as_bytes().get(10) == Some(&b'T')
            && t.get(19..)
                .is_some_and(|z| z.ends_with('Z') || z.contains(['+', '-']))
    };
    let (r, time) = verify(iso_datetime, rfc3339).parse(i)?;
    let (r, _) = char(' ').parse(r)?;
    Ok((r, LinePrefix::CollectorTime { time }))
}

/// `separated_logger` of the grammar: Python logging's ` - `-separated record header and
/// loguru's ` | `-separated one.
fn separated_logger(i: &str) -> R<'_, LinePrefix<'_>> {
    // ISO dates, or `logging`'s `datefmt="%m/%d/%Y %H:%M:%S"` (Hugging Face's examples).
    let us_date = recognize((digits(2), char('/'), digits(2), char('/'), digits(4)));
    let dated = (
        alt((iso_date, us_date)),
        one_of(" T"),
        hms,
        opt((one_of(".,"), fraction)),
        opt(zone),
    );
    // The time cut from the paste (or `%(asctime)s` empty) leaves the separator after it first
    // on the line: `- gpustack.cmd.start - CRITICAL - `.
    let (mut r, sep) = alt((
        preceded(dated, alt((tag(" - "), tag(" | ")))),
        tag("- ").map(|_| " - "),
    ))
    .parse(i)?;
    // Without the time, a logger's name beside the level is what makes the line a record and
    // not a list item (`- ERROR - the run stops`).
    let undated = i.starts_with("- ");
    let logger_name = |s: &str| {
        s.len() <= 64
            && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.".contains(c))
    };
    let mut named = false;
    for field_no in 0..5 {
        let Some((field, after)) = r.split_once(sep) else {
            break;
        };
        if field.is_empty() || field.len() > 64 {
            break;
        }
        // `%(levelname)-8s` and loguru pad on the right, `%(levelname)8s` on the left.
        let word = field.trim();
        if is_level_word(word) && !word.bytes().any(|b| b.is_ascii_lowercase()) {
            let (after, name_after) = if sep == " | " {
                // loguru's location after its level: `name:function:line - `.
                opt((
                    verify(take_till(|c: char| c == ' '), |s: &str| {
                        s.matches(':').count() >= 2 && s.ends_with(|c: char| c.is_ascii_digit())
                    }),
                    tag(" - "),
                ))
                .parse(after)?
            } else if field_no == 0 {
                // The logger's name after a leading level (`time - LEVEL - name - message`).
                opt((
                    verify(take_till(|c: char| c == ' '), logger_name),
                    tag(" - "),
                ))
                .parse(after)?
            } else {
                (after, None)
            };
            if undated && !named && name_after.is_none() {
                break;
            }
            return Ok((after, LinePrefix::ServiceLogger { level: word }));
        }
        named = logger_name(field.trim());
        r = after;
    }
    Err(nom::Err::Error(nom::error::Error::new(
        i,
        nom::error::ErrorKind::Verify,
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c10_warning_under_rank() {
        let p = strip_prefixes(
            "[rank0]:[W904 09:50:12.024496247 compiler_depend.ts:57] Warning: EZ9999: Inner Error!",
        );
        assert_eq!(p.rank(), Some(0));
        assert_eq!(p.rest, "EZ9999: Inner Error!");
    }

    // BuildKit's plain progress and the summary of a failed step (wider-world batch 23); a
    // number that is a line's own text keeps it.
    #[test]
    fn build_step_seconds() {
        for (line, rest) in [
            (
                "27.81 /app/ggml/src/ggml-cann.cpp:1230:19: error: 'struct x' has no member named 'get_name'",
                "/app/ggml/src/ggml-cann.cpp:1230:19: error: 'struct x' has no member named 'get_name'",
            ),
            ("#12 27.815 gmake: *** [Makefile:1323: llama-cli] Error 2", "gmake: *** [Makefile:1323: llama-cli] Error 2"),
            ("27.85 gmake[3]: *** [x.o] Error 1", "gmake[3]: *** [x.o] Error 1"),
            ("0.95", "0.95"),
            ("3.1 loss", "3.1 loss"),
            ("12.3456 s per step", "12.3456 s per step"),
            ("12.34 ms per step, was 8.10", "12.34 ms per step, was 8.10"),
            ("0.95 0.93 0.91", "0.95 0.93 0.91"),
            ("1.25 12:00:01 tick", "1.25 12:00:01 tick"),
        ] {
            assert_eq!(strip_prefixes(line).rest, rest, "{line}");
        }
    }

    #[test]
    fn compose_service_column() {
        let p = strip_prefixes("vllm-npu-1  | ERROR 01-02 03:04:05 [a.py:9] RuntimeError: x");
        assert_eq!(p.rest, "RuntimeError: x");
        assert_eq!(
            p.prefixes.first(),
            Some(&LinePrefix::Compose {
                service: "vllm-npu-1"
            })
        );
        // A bar without the padding, or at the line start, is no service column.
        assert_eq!(strip_prefixes("a|b").rest, "a|b");
        assert_eq!(strip_prefixes("| a | b |").rest, "| a | b |");
    }

    #[test]
    fn innermost_vllm_process_wins() {
        let p = strip_prefixes(
            "(vLLMHttpServer pid=1) (Worker_TP3 pid=2) ERROR 01-02 03:04:05 [a.py:9] x",
        );
        assert_eq!(p.process(), Some(("Worker_TP3", 2)));
        assert_eq!(p.rest, "x");
        let p = strip_prefixes("(VllmWorker rank=3 pid=1564) x");
        assert_eq!(p.process(), Some(("VllmWorker", 1564)));
    }

    #[test]
    fn leaves_plain_lines_alone() {
        for s in [
            "[ERROR] RUNTIME(1,p):x",
            "(function copy_between_host_and_device_opapi)",
            "",
            "[rank",
        ] {
            assert_eq!(strip_prefixes(s).rest, s);
        }
    }

    #[test]
    fn nested_vllm_process_and_logger() {
        let s = strip_prefixes("(vLLMHttpServer pid=77054) (Worker_TP3 pid=78100) ERROR 04-20 21:27:00 [multiproc_executor.py:932]         TraceBack (most recent call last):");
        assert_eq!(s.rest, "        TraceBack (most recent call last):");
        assert_eq!(s.prefixes.len(), 3);
        assert_eq!(
            s.prefixes[2],
            LinePrefix::VllmLogger {
                level: "ERROR",
                source: "multiproc_executor.py:932"
            }
        );
    }

    // Batch 35: MemFabric's records, their level in lower case; a time and a word without the
    // ids or the bracketed source are no header.
    #[test]
    fn spaced_logger_headers() {
        let s = strip_prefixes("2025-09-22 20:20:40.102319 error 12789 pid[12789] [BM devmm_ioctl.cpp:122] svm advise failed:-1 : 3 : No such process");
        assert_eq!(s.rest, "svm advise failed:-1 : 3 : No such process");
        assert_eq!(line_severity(&s.prefixes, s.rest), Some(Severity::Error));
        let s = strip_prefixes("2025-09-22 20:20:40.102369 error 12789 pid[12789] [SMEM smem_trans.cpp:44] hybm core init failed: -3");
        assert_eq!(s.rest, "hybm core init failed: -3");
        // torch_npu's profiler logger.
        let s = strip_prefixes("2025-06-13 10:13:28 [ERROR] [911684] profiler.py: Failed to get acl to npu flow events.");
        assert_eq!(s.rest, "Failed to get acl to npu flow events.");
        assert_eq!(line_severity(&s.prefixes, s.rest), Some(Severity::Error));
        let s =
            strip_prefixes("2025-06-13 10:11:38,120 [INFO] [912663] CANN profiling data parsed");
        assert_eq!(s.rest, "CANN profiling data parsed");
        for not in [
            "2025-06-13 10:13:28 [ERROR] profiler.py: no pid",
            "2025-06-13 10:13:28 [Step] [12] x",
            "2025-06-13 10:13:28 [ERROR][12] x",
        ] {
            assert!(strip_prefixes(not).prefixes.is_empty(), "{not}");
        }
        for not in [
            "2025-09-22 20:20:40 error in the run",
            "2025-09-22 20:20:40.1 errors 1 pid[2] x",
            "2025-09-22 20:20:40 info [nospace] x",
            "2024-01-01 10:00:00,123 ERROR [Errno 111] Connection refused",
            "2024-01-01 10:00:00 INFO [Step 10/100] loss 1.2",
        ] {
            assert!(strip_prefixes(not).prefixes.is_empty(), "{not}");
        }
    }

    // Wider-world batch 40: LLaMA-Factory's loggers (`[LEVEL|…] … >> `) and a log collector's
    // RFC 3339 time (`docker logs -t`).
    #[test]
    fn bar_loggers_and_collector_times() {
        let s = strip_prefixes(
            "[INFO|trainer.py:641] 2024-05-24 17:16:11,641 >> Using auto half precision backend",
        );
        assert_eq!(s.rest, "Using auto half precision backend");
        assert_eq!(line_severity(&s.prefixes, s.rest), Some(Severity::Info));
        let s = strip_prefixes(
            "[WARNING|2024-05-24 17:16:11] llamafactory.data.loader:52 >> No eval set",
        );
        assert_eq!(s.rest, "No eval set");
        assert_eq!(line_severity(&s.prefixes, s.rest), Some(Severity::Warning));
        let s =
            strip_prefixes("2026-02-13T05:15:39.398506742Z RuntimeError: Execute fail, enable log");
        assert_eq!(s.rest, "RuntimeError: Execute fail, enable log");
        assert_eq!(line_severity(&s.prefixes, s.rest), None);
        // The message's own text may be wide (CJK after the header).
        let s = strip_prefixes("[INFO|trainer.py:641] 2024-05-24 17:16:11,641 >> 训练开始训练开始训练开始训练开始训练开始训练开始训练开始训练开始");
        assert_eq!(line_severity(&s.prefixes, s.rest), Some(Severity::Info));
        let s = strip_prefixes("2026-02-13T05:15:39+08:00 [rank0]: x");
        assert_eq!(s.rest, "x");
        for not in [
            "[INFO|x] no arrows here",
            "[Step|x] a >> b",
            "2026-02-13T05:15:39.398 no zone",
            "2026-02-13 05:15:39.398Z no T",
        ] {
            assert!(strip_prefixes(not).prefixes.is_empty(), "{not}");
        }
    }

    #[test]
    fn paddle_lite_logger() {
        let s = strip_prefixes("[F  2/ 9 15:51:16.910 ...pter/driver/huawei_ascend_npu/utility.cc:221 BuildOMModelToBuffer] Check failed: x");
        assert_eq!(s.rest, "Check failed: x");
        assert_eq!(
            s.prefixes,
            [LinePrefix::Glog(GlogHeader {
                level: 'F',
                source: "pter/driver/huawei_ascend_npu/utility.cc:221",
                trace_id: None,
                artifact: None
            })]
        );
        let s = strip_prefixes("[5 12/ 1 14:47:20.561 ...me/chao/Paddle-Lite/lite/core/op_lite.cc:75 operator()] pick kernel");
        assert_eq!(
            (s.glog().map(|g| g.level), s.rest),
            (Some('V'), "pick kernel")
        );
        // Minutes, seconds and milliseconds padded with spaces; a short source whole, with the
        // function before its line.
        let s = strip_prefixes("[I 12/31  9: 5: 7. 20 lite/api/light_api.cc Build:42] ok");
        assert_eq!(
            (s.glog().map(|g| (g.level, g.source)), s.rest),
            (Some(('I', "lite/api/light_api.cc")), "ok")
        );
        let s = strip_prefixes(
            "[F  2/ 9 15: 1:16.  9 ...ite/kernels/nnadapter/engine.cc:294 Engine] Check failed: x",
        );
        assert_eq!(s.rest, "Check failed: x");
        // A bracketed word or date that is not the header stays.
        for other in [
            "[F 2/9 15:51:16.910 a.cc:1 f] x",
            "[X  2/ 9 15:51:16.910 a.cc:1 f] x",
            "[F  2/ 9 15:51:16.910 a.cc f] x",
            "[F  2/ 9 15:51:16.9 1 a.cc f:1] x",
            "[F  2/ 9 15:51:16.910 ...a.cc f] x",
            "[I 12/31 09:05:07.002 lite/api/paddle_api.cc:42 Run] ok",
        ] {
            assert!(strip_prefixes(other).prefixes.is_empty(), "{other}");
        }
    }

    #[test]
    fn vllm_logger_tail_alone() {
        let s = strip_prefixes("[multiproc_executor.py:654] RuntimeError: x");
        assert_eq!(s.rest, "RuntimeError: x");
        assert_eq!(
            s.prefixes,
            [LinePrefix::VllmLogger {
                level: "?",
                source: "multiproc_executor.py:654"
            }]
        );
        for other in ["[stream.cc:12] x", "[x.py:1]y", "[a.py:b] c"] {
            assert!(strip_prefixes(other).prefixes.is_empty(), "{other}");
        }
    }

    #[test]
    fn vllm_logger_without_its_date() {
        let s = strip_prefixes(
            "(Worker pid=7) ERROR [multiproc_executor.py:800]         open device 1 failed",
        );
        assert_eq!(s.rest, "        open device 1 failed");
        assert!(s.prefixes.contains(&LinePrefix::VllmLogger {
            level: "ERROR",
            source: "multiproc_executor.py:800"
        }));
        for other in [
            "ERROR [stream.cc:12] x",
            "ERROR [x.py:1]y",
            "ERROR: [a.py:1] c",
        ] {
            assert!(
                !strip_prefixes(other)
                    .prefixes
                    .iter()
                    .any(|p| matches!(p, LinePrefix::VllmLogger { .. })),
                "{other}"
            );
        }
    }

    #[test]
    fn vllm_logger_without_brackets_and_empty_rest() {
        let s = strip_prefixes("ERROR 04-10 11:26:01 engine.py:140] RuntimeError: x");
        assert_eq!(s.rest, "RuntimeError: x");
        let s = strip_prefixes(
            "(VllmWorker rank=3 pid=1564) ERROR 08-06 10:40:29 [multiproc_executor.py:546]",
        );
        assert_eq!(s.rest, "");
        assert_eq!(s.prefixes.len(), 2);
    }

    #[test]
    fn rank_glued_to_glog_with_trace_id_and_artifact() {
        let s = strip_prefixes("[rank0]:V0925 13:34:27.040958 139966991710016 torch/_dynamo/guards.py:2609] [0/7] [__recompiles_verbose] Recompiling function forward");
        assert_eq!(s.rest, "Recompiling function forward");
        assert_eq!(s.prefixes[0], LinePrefix::Rank { rank: 0 });
        assert_eq!(
            s.glog(),
            Some(&GlogHeader {
                level: 'V',
                source: "torch/_dynamo/guards.py:2609",
                trace_id: Some("0/7"),
                artifact: Some("recompiles_verbose"),
            })
        );
    }

    #[test]
    fn glog_keeps_message_indentation() {
        let s = strip_prefixes("V1206 15:20:13.926000 1543231 torch/_dynamo/utils.py:1288]     File \"x.py\", line 3, in f");
        assert_eq!(s.rest, "    File \"x.py\", line 3, in f");
    }

    // The glog library's own header: the year in front of the month, the thread id padded
    // to five columns, FATAL as `F`. A date of another length is no header.
    #[test]
    fn glog_library_header_with_year_and_padded_thread() {
        let s = strip_prefixes("E20231116 09:50:41.157967  2326 MxOmModelDesc.cpp:855] [507011][Error code unknown] Failed");
        assert_eq!(s.rest, "[507011][Error code unknown] Failed");
        assert_eq!(
            s.glog().map(|g| (g.level, g.source)),
            Some(('E', "MxOmModelDesc.cpp:855"))
        );
        let f = strip_prefixes("F0101 00:00:01.000002    17 a.cc:9] Check failed: n > 0");
        assert_eq!(
            (f.rest, f.glog().map(|g| g.level)),
            ("Check failed: n > 0", Some('F'))
        );
        let odd = strip_prefixes("E202311 09:50:41.157967  2326 a.cc:1] x");
        assert!(odd.glog().is_none());
    }

    #[test]
    fn one_severity_for_every_logger_and_the_innermost_wins() {
        use Severity::*;
        let level = |line: &str| record_severity(&strip_prefixes(line).prefixes);
        assert_eq!(
            level("ERROR 08-06 10:40:29 [core.py:546] boom"),
            Some(Error)
        );
        assert_eq!(level("[E324 13:00:25.428029551 a.cpp:574] x"), Some(Error));
        assert_eq!(level("W1201 10:00:00.000000 12 a.cc:3] x"), Some(Warning));
        assert_eq!(
            level("torch._dynamo.guards.__recompiles: [DEBUG] x"),
            Some(Debug)
        );
        assert_eq!(level("plain text"), None);
        // A level letter after a bracketed time (llama.cpp's server log).
        assert_eq!(
            level("[2025-07-21 10:37:49.269985] I load_tensors: offloaded 37/37 layers"),
            Some(Info)
        );
        // A worker's own INFO record relayed by a logger at ERROR is chatter.
        assert_eq!(
            level("ERROR 08-06 10:40:29 [core.py:546] INFO 08-06 10:40:29 [worker.py:1] up"),
            Some(Info)
        );
        for (word, s) in [
            ("fatal", Error),
            ("warn", Warning),
            ("V", Debug),
            ("?", Elided),
        ] {
            assert_eq!(Severity::named(word), Some(s), "{word}");
        }
        assert_eq!(Severity::named("EVENT"), None);
        assert!(Warning.below_error() && !Elided.below_error() && !Error.below_error());
    }

    #[test]
    fn rank_glued_to_c10() {
        let s = strip_prefixes(
            "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught",
        );
        assert_eq!(s.rest, "[Rank 1] Watchdog caught");
        assert_eq!(s.c10_level(), Some('E'));
    }

    #[test]
    fn old_torch_logs_form() {
        let s = strip_prefixes("[2024-04-30 17:13:04,191] [0/0] torch._dynamo.output_graph.__graph_code: [DEBUG] TRACED GRAPH");
        assert_eq!(s.rest, "TRACED GRAPH");
        assert_eq!(
            s.prefixes,
            vec![
                LinePrefix::OldTorchLogs {
                    trace_id: Some("0/0")
                },
                LinePrefix::OldLogger {
                    logger: "torch._dynamo.output_graph.__graph_code",
                    level: "DEBUG"
                }
            ]
        );
    }

    // The formats' own documentation: MindIE's LLM log format line (`[yyyy-mm-dd
    // hh:mm:ss.uuuuuu][processid] [threadid] [llm] [loglevel][file:line] …`), Ray's C++ logger
    // (glog fields in brackets), spdlog's default pattern.
    #[test]
    fn bracketed_service_loggers() {
        for (line, level, rest) in [
            ("[2025-04-15 16:40:05.552024] [17310] [281473799454720] [llm] [ERROR] [model_deploy_config.cpp:159] Failed to get vocab size", "ERROR", "Failed to get vocab size"),
            ("[2025-11-25 17:23:11,888] [249] [281471718846752] [llm] [ERROR] [logging.py-348] : Warmup failed", "ERROR", "Warmup failed"),
            ("[2025-12-15 15:19:22.681+08:00] [38] [452] [server] [ERROR] [http_server.cpp:163] : [MIE04E02041C] [endpoint] Failed to listen", "ERROR", "[MIE04E02041C] [endpoint] Failed to listen"),
            ("[2025-01-01T12:00:00Z] [WARNING] late", "WARNING", "late"),
            ("[2025-01-01 12:00:00.5-0500] [error] x", "error", "x"),
            ("[2026-08-05 07:11:08,188 E 3848117 3848117] logging.cc:501: *** SIGSEGV received at time=1 ***", "E", "*** SIGSEGV received at time=1 ***"),
            ("[2025-01-01 12:00:00.123] [engine] [error] queue full", "error", "queue full"),
            ("[2025-01-01 12:00:00.123] [engine] [error] [Config] bad value", "error", "[Config] bad value"),
            ("[2025-01-01T12:00:00] [INFO] started", "INFO", "started"),
        ] {
            let s = strip_prefixes(line);
            assert_eq!(s.prefixes, vec![LinePrefix::ServiceLogger { level }], "{line}");
            assert_eq!(s.rest, rest, "{line}");
        }
        // No level field: not this grammar (the pre-2.2 TORCH_LOGS form is peeled as before).
        let s = strip_prefixes("[2025-01-01 12:00:00,123] [0/0] text");
        assert!(!s
            .prefixes
            .iter()
            .any(|p| matches!(p, LinePrefix::ServiceLogger { .. })));
    }

    // Python's logging cookbook format (`%(asctime)s - %(name)s - %(levelname)s - %(message)s`)
    // and its variants, and loguru's default format (`{time} | {level: <8} | {name}:{function}:
    // {line} - {message}`).
    #[test]
    fn separated_service_loggers() {
        for (line, level, rest) in [
            ("2005-03-19 15:10:26,618 - simple_example - ERROR - error message", "ERROR", "error message"),
            ("2026-01-19 10:06:44.248620+08:00 - gpustack.worker.serve_manager - ERROR - Error provisioning model instance x: failed", "ERROR", "Error provisioning model instance x: failed"),
            ("2026-01-19 10:06:41.774455+08:00 - 250580 - gpustack_runtime.deployer.docker - WARNING - Mirrored deployment enabled", "WARNING", "Mirrored deployment enabled"),
            ("2024-06-01 08:00:00,001 - INFO - loaded", "INFO", "loaded"),
            ("2024-06-01 08:00:00,001 - root - CRITICAL - ", "CRITICAL", ""),
            ("2024-05-01 12:00:00.123 | ERROR    | mineru.backend.pipeline:doc_analyze:45 - NPU out of memory", "ERROR", "NPU out of memory"),
            ("2024-05-01 12:00:00.123 | WARNING  | __main__:<module>:3 - slow", "WARNING", "slow"),
            ("2024-05-01 12:00:00.123 | INFO     | plain message", "INFO", "plain message"),
            ("10/28/2024 12:00:00 - ERROR - __main__ - Process rank: 0", "ERROR", "Process rank: 0"),
            ("2024-06-01 08:00:00,001 -    ERROR - x.y - msg", "ERROR", "msg"),
            // An address is no location or logger name: it stays in the message.
            ("2024-06-01 08:00:00,001 - ERROR - 10.0.0.5:29500 - connection refused", "ERROR", "10.0.0.5:29500 - connection refused"),
            ("2024-05-01 12:00:00.123 | INFO     | 127.0.0.1:54321 - \"GET / HTTP/1.1\" 200", "INFO", "127.0.0.1:54321 - \"GET / HTTP/1.1\" 200"),
            // A message's own capitalised level word after the header stays the message's.
            ("2024-06-01 08:00:00,001 - app - INFO - ERROR - count 3", "INFO", "ERROR - count 3"),
            // The time cut from the paste: its separator first (wider-world batch 24).
            ("- gpustack.cmd.start - CRITICAL - context has already been set", "CRITICAL", "context has already been set"),
            ("- ERROR - __main__ - Process rank: 0", "ERROR", "Process rank: 0"),
        ] {
            let s = strip_prefixes(line);
            assert_eq!(s.prefixes, vec![LinePrefix::ServiceLogger { level }], "{line}");
            assert_eq!(s.rest, rest, "{line}");
        }
        // No level among the first fields, a level word in lower case (a message's word), a
        // field too long, no time first: not this grammar.
        for line in [
            "2024-06-01 08:00:00 - step 3 - loss 0.5",
            "2024-06-01 08:00:00 - the run - error - x",
            "2024-06-01 08:00:00 | a | b | c | d | e | ERROR | x",
            "loader - ERROR - x",
            "2024-06-01 08:00:00 - ERROR",
            // A list item is no record without a level field.
            "- step 3 - loss 0.5",
            "- fixed the ERROR path",
            "- ERROR",
            "- ERROR - the run stops",
            "- INFO - loaded the model - ok",
            "- step 3 - ERROR - x",
        ] {
            let s = strip_prefixes(line);
            assert!(s.prefixes.is_empty(), "{line}");
            assert_eq!(s.rest, line);
        }
        let long = format!("2024-06-01 08:00:00 - {} - ERROR - x", "n".repeat(65));
        assert!(strip_prefixes(&long).prefixes.is_empty());
    }

    #[test]
    fn pytest_failure_lines() {
        let s = strip_prefixes("E        loc(\"/tmp/m.mlir\":1:2): error: 'tensor.empty' op bad");
        assert_eq!(s.prefixes, vec![LinePrefix::PytestError]);
        assert_eq!(
            s.rest,
            "loc(\"/tmp/m.mlir\":1:2): error: 'tensor.empty' op bad"
        );
        assert!(strip_prefixes("E Only one space").prefixes.is_empty());
        assert!(strip_prefixes("EZ9999: Inner Error!").prefixes.is_empty());
    }

    #[test]
    fn look_alikes_are_left_alone() {
        for line in [
            "[ERROR] RUNTIME(809924,4):2026-07-11-15:11:05.293.967 [api_c.cc:1081]809924 rtMemcpy",
            "[Error]: The aicore execution times out.",
            "(no pid here) text",
            "ERROR:torch_npu._inductor.config:Triton compilation failed",
            "[libprotobuf ERROR descriptor_database.cc:644] File already exists",
            "",
        ] {
            let s = strip_prefixes(line);
            assert_eq!(s.rest, line);
            assert!(s.prefixes.is_empty());
        }
    }

    #[test]
    fn an_issue_title_kind_first_on_the_line() {
        let p = strip_prefixes("[Question]: RuntimeError: aclnnX failed with aclnnStatus=561002.");
        assert_eq!(
            p.prefixes,
            vec![LinePrefix::IssueTitle {
                title_kind: "Question"
            }]
        );
        assert_eq!(
            p.rest,
            "RuntimeError: aclnnX failed with aclnnStatus=561002."
        );
        let p = strip_prefixes("[Bug]: [rank3]: RuntimeError: x");
        assert_eq!((p.rank(), p.rest), (Some(3), "RuntimeError: x"));
        for (line, rest) in [
            ("[Bug] RuntimeError: x", "RuntimeError: x"),
            ("[New Model]: support x", "support x"),
            ("[CI Failure]: test x failed", "test x failed"),
            ("[BUG]: x", "x"),
        ] {
            assert_eq!(strip_prefixes(line).rest, rest, "{line}");
        }
        // A logger's tag, a level (torch_npu's hint), a space or nothing after the kind, or a
        // kind after another prefix: not a title.
        for line in [
            "[Error]: The aicore execution is abnormal.",
            "[ERR]: x",
            "[Trainer]: step 3 failed",
            "[Bug]:  two spaces",
            "[Bug]: ",
            "[Bug]",
            "[Bugs]: x",
        ] {
            assert!(strip_prefixes(line).prefixes.is_empty(), "{line}");
        }
        let p = strip_prefixes("[rank0]: [Bug]: x");
        assert_eq!(p.rest, "[Bug]: x");
    }

    #[test]
    fn onnx_runtime_and_opencv_loggers_read_as_glog_headers() {
        fn glog(line: &str) -> (Option<(char, &str)>, &str) {
            let s = strip_prefixes(line);
            let g = s.glog().map(|g| (g.level, g.source));
            (g, s.rest)
        }
        // ONNX Runtime: with its time, and without a logger id or time.
        assert_eq!(
            glog("2024-01-02 03:04:05.123456789 [E:onnxruntime:Default, cann_call.cc:12 CannCall] CANN failure 507011: x"),
            (Some(('E', "cann_call.cc:12")), "CANN failure 507011: x")
        );
        assert_eq!(
            glog("[W:onnxruntime:, session_state.cc:1 Init] some nodes were not assigned"),
            (
                Some(('W', "session_state.cc:1")),
                "some nodes were not assigned"
            )
        );
        // OpenCV 4.6+ with a tag, source and function; before 4.6 (`file (line)`); untagged.
        assert_eq!(
            glog("[ERROR:0@1.5] global net_x.cpp:9 compileGraph graph check failed, ret = 3"),
            (Some(('E', "net_x.cpp:9")), "graph check failed, ret = 3")
        );
        assert_eq!(
            glog("[ WARN:0] global /src/cap.cpp (120) open backend failed"),
            (Some(('W', "/src/cap.cpp (120)")), "backend failed")
        );
        assert_eq!(
            glog("[ERROR:0@0.1] global C:\\cv\\net_x.cpp:9 cv::dnn::f graph check failed"),
            (Some(('E', "C:\\cv\\net_x.cpp:9")), "graph check failed")
        );
        assert_eq!(
            glog("[ INFO:3@0.25] plain text"),
            (Some(('I', "")), "plain text")
        );
        assert_eq!(glog("[DEBUG:1] x").0, Some(('V', "")));
        // Neither: a bracketed word, an unknown severity, a level without the thread.
        for line in [
            "[E:x] y",
            "[X:onnxruntime:, a.cc:1 f] y",
            "[ERROR] y",
            "[ERROR:] y",
            "[WARN:0] y",
        ] {
            assert!(strip_prefixes(line).glog().is_none(), "{line}");
        }
    }

    #[test]
    fn progress_dots_only_in_front_of_another_prefix() {
        let p = strip_prefixes(
            ".[rank0]:[E903 07:21:23.263967696 compiler_depend.ts:429] RopeOperation setup failed!",
        );
        assert_eq!(p.rest, "RopeOperation setup failed!");
        assert_eq!((p.rank(), p.c10_level()), (Some(0), Some('E')));
        let p = strip_prefixes("...ERROR 01-30 16:09:21 [core.py:9] ValueError: x");
        assert_eq!(p.rest, "ValueError: x");
        // Dots that start a message, an ellipsis before text, a dotted path: kept.
        for line in [
            "...done",
            ". [rank0]: x",
            "..[not a prefix] x",
            ".venv/bin/python: x",
        ] {
            assert_eq!(strip_prefixes(line).rest, line, "{line}");
        }
    }

    #[test]
    fn an_issue_title_as_a_markdown_heading() {
        let p = strip_prefixes(
            "# [Bug]: RuntimeError: HCCL function error: HcclCommInitRootInfo(numRanks)",
        );
        assert_eq!(
            p.rest,
            "RuntimeError: HCCL function error: HcclCommInitRootInfo(numRanks)"
        );
        assert!(matches!(
            p.prefixes[0],
            LinePrefix::IssueTitle { title_kind: "Bug" }
        ));
        assert_eq!(strip_prefixes("### [Usage]: how").rest, "how");
        // Seven hashes are no heading; a heading without an issue's kind, a hash without its
        // space: kept whole.
        for line in [
            "####### [Bug]: x",
            "# Your current environment",
            "#[Bug]: x",
        ] {
            assert_eq!(strip_prefixes(line).rest, line, "{line}");
        }
    }

    #[test]
    fn a_stage_tag_only_in_front_of_another_prefix() {
        let p = strip_prefixes("(Worker pid=9) [Stage-1] ERROR 01-30 16:09:21 [multiproc_executor.py:822] ValueError: x");
        assert_eq!(p.rest, "ValueError: x");
        assert!(p.prefixes.contains(&LinePrefix::Tag { tag: "Stage-1" }));
        // A message that starts with a bracketed word keeps it.
        for line in [
            "[Stage-1] loading weights",
            "[FusedKernel] ERROR in tiling",
            "[a b] ERROR 01-30 16:09:21 [x.py:1] y",
        ] {
            assert_eq!(strip_prefixes(line).rest, line);
        }
    }
}
