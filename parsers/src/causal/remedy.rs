//! What to do about a first causal error: `remedy[]`, each item with its source.
//!
//! Two sources, in this order:
//! 1. **The log's own words.** A kernel's failed assertion among the candidates of a device fault
//!    (Ascend C's `[ASSERT]` line, printed after the fault's records) is quoted first, with its
//!    line: the check it names is what the kernel refused ([`remedies_with_assert`]). A CANN error
//!    report prints `Possible Cause:` and `Solution:` lines under its message; when the error's
//!    block holds them they are quoted as they stand, with their line, and their source is the
//!    report itself. Without a `Solution:`, the message's own advice (`Please try …`,
//!    `message.advice`); and a setting the message names as too small or too large
//!    (`HCCL_BUFFSIZE is too SMALL`, `message.setting`). Their source is `the error message`.
//! 2. **The remedy table** (`knowledge/remedy.tsv`): the first row that matches the error, most
//!    specific first — the knowledge row that decided its phase or kind (`key:`), its CANN code,
//!    the rule that read its phase (`rule:`), its runtime error number, then its nature, its kind
//!    and its phase. Each row has its
//!    documented source and the commands that check it; `npgx …` commands get the file the error
//!    was read from, other commands (`npu-smi`, `msprof`) are named for the user to run.
//!
//! A derived fault does not get a remedy of its own: the ranking already cites the root (a device
//! fault before the stream failures it caused, a report before its wrapper), and the remedy is the
//! root's; what cannot be seen from one log (another rank that failed first) is what the
//! collective remedy tells the user to read.
//!
//! What it is not for: deciding the route, or reading files.

use serde::{Deserialize, Serialize};

use super::CausalError;
use crate::cann_error::find_code;
use crate::kernel_assert::KernelAssert;
use crate::knowledge::{self, RemedyRow};
use crate::versions::Framework;

/// Most report lines quoted.
const MAX_QUOTED: usize = 4;

/// One thing to check or change.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Remedy {
    /// What to check or change.
    #[serde(rename = "do")]
    pub action: String,
    /// Where the advice comes from: `CANN report` for the report's own `Solution:` /
    /// `Possible Cause:` text, `kernel assert` for a kernel's failed assertion, `the error
    /// message` for its own advice or the setting it names, else the documented source of the
    /// remedy row.
    pub source: String,
    /// The 1-based line of the quoted text (the report's line, the assertion's line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// Commands that check it: npgx's own with the file filled in, or a vendor's named as text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub check: Vec<String>,
    /// What chose it: `report.solution`, `report.possible-cause`, `kernel.assert`,
    /// `message.advice`, `message.setting`, or the remedy row's match (`key:npu out of memory`, `nature:device-fault`, `kind:environment`, …).
    pub matched: String,
}

impl Remedy {
    /// How a renderer leads the remedy's text: a report's `Possible Cause:` says what may be
    /// wrong, not what to do.
    pub fn lead(&self) -> &'static str {
        if self.matched == "report.possible-cause" {
            "Possible cause: "
        } else {
            ""
        }
    }
}

/// The remedies of a first causal error read from `file` (its path as the user gave it, for
/// the commands; `None` leaves `<LOG_FILE>` for the user to fill), for a program on `framework`
/// (the rows' framework words are its: `framework_words`).
pub fn remedies(err: &CausalError, file: Option<&str>, framework: Framework) -> Vec<Remedy> {
    // A report's stock line that names nothing (`Try again with a valid argument.`) comes after
    // the table's row, which says what to check.
    let (mut out, stock): (Vec<Remedy>, Vec<Remedy>) = quoted(err)
        .into_iter()
        .partition(|r| !knowledge::is_stock(&r.action));
    if let Some(row) = conditions(err)
        .into_iter()
        .chain(matches(err))
        .find_map(|m| row_for(&m, framework))
    {
        let mut r = from_row(row, file, framework);
        // `ldd -r <LIBRARY>`: the library the error names, when it names one, as one shell word.
        if let Some((lib, _)) = named_library(&err.message) {
            for c in &mut r.check {
                *c = fill_word(c, LIBRARY, lib);
            }
        }
        out.push(r);
    }
    out.extend(stock);
    out
}

/// The shared library a loader's message names (`/x/ext.so: undefined symbol: …`,
/// `libhccl.so: cannot open shared object file`), with what the loader said of it
/// (`undefined symbol`, `cannot open shared object file`).
pub fn named_library(message: &str) -> Option<(&str, &'static str)> {
    ["undefined symbol", "cannot open shared object file"]
        .into_iter()
        .find_map(|said| {
            let at = message.find(&format!(": {said}"))?;
            let lib = message[..at]
                .rsplit([' ', '\t', ':'])
                .next()?
                .trim_start_matches(['\'', '`']);
            lib.contains(".so").then_some((lib, said))
        })
}

/// The remedies of a first causal error read from `file` when the log also holds a kernel's failed
/// assertion that belongs to it (`assert`: its log line and what it says; which assertion belongs
/// to which device error is `aicore`'s grouping — the same process, inside the error's record):
/// for a device fault, what the assertion checked comes first ([`kernel_assert_remedy`]), then
/// [`remedies`].
pub fn remedies_with_assert(
    err: &CausalError,
    assert: Option<(u64, &KernelAssert)>,
    file: Option<&str>,
    framework: Framework,
) -> Vec<Remedy> {
    assert
        .filter(|_| err.rank == super::CauseRank::DeviceFault)
        .map(|(line, a)| kernel_assert_remedy(line, a, file))
        .into_iter()
        .chain(remedies(err, file, framework))
        .collect()
}

/// The remedy a kernel's failed assertion (log line `line`) gives, quoting it: the check it
/// names is the most specific evidence of what the kernel was given, so it comes before the
/// table's "dump the inputs" advice.
pub fn kernel_assert_remedy(line: u64, a: &KernelAssert, file: Option<&str>) -> Remedy {
    let at = match (&a.source_file, a.source_line) {
        (Some(f), Some(l)) => format!(" at {f}:{l}"),
        _ => String::new(),
    };
    let said = if a.message.is_empty() {
        String::new()
    } else {
        format!(" ({})", a.message)
    };
    let checked = a
        .condition
        .as_ref()
        .map_or(String::new(), |c| format!(" `{c}`"));
    Remedy {
        action: format!(
            "The kernel's own check{checked}{at} failed{said}. Find which input, shape or tiling \
             value the check tests, and where it comes from, before dumping the inputs"
        ),
        source: "kernel assert".to_string(),
        line: Some(line),
        check: vec![check_command("npgx aicore FILE", file)],
        matched: "kernel.assert".to_string(),
    }
}

/// The error's text: its message, its lines and the lines around it, lower case.
fn all_text(err: &CausalError) -> String {
    let mut t = err.message.to_ascii_lowercase();
    for (_, l) in err.scope.iter().chain(&err.context) {
        t.push('\n');
        t.push_str(&l.to_ascii_lowercase());
    }
    t
}

/// Facts of this error that change what to do, before the table's usual order:
/// `oversize:npu out of memory` — one request larger than the whole device (no allocator
/// setting helps: the size is wrong or the work must be split); `sync:aclnn` — an aclnn call that
/// failed where it was made (the error is synchronous: `ASCEND_LAUNCH_BLOCKING` changes
/// nothing); `queued:aclnn` — an aclnn call that failed inside the lambda torch_npu's task queue
/// runs (`operator():`): unless launches were blocking, the traceback is not the call's.
fn conditions(err: &CausalError) -> Vec<String> {
    let text = all_text(err);
    let mut out = Vec::new();
    if text.contains("npu out of memory") && request_exceeds_device(&text) {
        out.push("oversize:npu out of memory".to_string());
    }
    // (`operator():` is the lambda op-plugin's EXEC_NPU_CMD hands to torch_npu's OpCommand,
    // which its task queue runs on another thread than the op's call unless launches block.)
    let asynchronous = [
        "is reported as above",
        "asynchronous",
        "synchroniz",
        "task failed",
        "operator():",
    ]
    .iter()
    .any(|w| text.contains(w));
    let at_the_call = (text.contains("call aclnn") && text.contains("failed"))
        || text.contains("getworkspacesize");
    // A broken installation (`Op Cast does not has any binary.` under `call aclnnCast failed`)
    // is not fixed in the call's arguments: the table's row for it.
    let installation = err
        .phase
        .as_ref()
        .is_some_and(|p| p.nature == Some(knowledge::Nature::Environment));
    let device = err.rank == super::CauseRank::DeviceFault;
    if at_the_call && !asynchronous && !installation && !device {
        out.push("sync:aclnn".to_string());
    }
    if at_the_call && text.contains("operator():") && !installation && !device {
        out.push("queued:aclnn".to_string());
    }
    out
}

/// Bytes of a size written as torch_npu's allocator writes it (`30.00 MiB`, `1EB`).
fn bytes_of(number: &str, unit: &str) -> Option<f64> {
    let n: f64 = number.parse().ok()?;
    let scale = match unit {
        "b" | "bytes" => 1.0,
        "kib" | "kb" => 1024.0,
        "mib" | "mb" => 1024f64.powi(2),
        "gib" | "gb" => 1024f64.powi(3),
        "tib" | "tb" => 1024f64.powi(4),
        "pib" | "pb" => 1024f64.powi(5),
        "eib" | "eb" => 1024f64.powi(6),
        _ => return None,
    };
    Some(n * scale)
}

/// The first `<number> <unit>` (or `<number><unit>`) in `s`.
fn first_size(s: &str) -> Option<f64> {
    let start = s.find(|c: char| c.is_ascii_digit())?;
    let r = &s[start..];
    let end = r
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(r.len());
    let unit: String = r[end..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_alphabetic)
        .collect();
    bytes_of(&r[..end], &unit)
}

/// Whether an out-of-memory message asks for more than the whole device holds: `Tried to
/// allocate X (NPU n; Y total capacity; …)` with X > Y, or a request of an exabyte or more
/// (`Tried to allocate more than 1EB memory`), which no device holds.
fn request_exceeds_device(text: &str) -> bool {
    let Some(at) = text.find("tried to allocate") else {
        return false;
    };
    let rest = &text[at + "tried to allocate".len()..];
    let line = rest.lines().next().unwrap_or("");
    let Some(request) = first_size(line) else {
        return false;
    };
    if request >= 1024f64.powi(6) {
        return true;
    }
    line.find("total capacity")
        .and_then(|cap| {
            let before = &line[..cap];
            let from = before.rfind([';', '(']).map_or(0, |i| i + 1);
            first_size(&before[from..])
        })
        .is_some_and(|capacity| request > capacity)
}

/// The remedy of a route without a first causal error to read (a report's `accuracy` or
/// `performance`), with the file for its commands.
pub fn route_remedy(route: &str, file: Option<&str>, framework: Framework) -> Option<Remedy> {
    table_remedy(&format!("route:{route}"), file, framework)
}

/// The remedy row of one match (`nature:device-fault`), with the file for its commands.
pub fn table_remedy(matches: &str, file: Option<&str>, framework: Framework) -> Option<Remedy> {
    row_for(matches, framework).map(|r| from_row(r, file, framework))
}

/// The remedy row of one match for a program on `framework`: the framework's own row
/// (`<match>@<framework>`: llama.cpp's tools where msprobe cannot dump its tensors) before the
/// common one; a row whose check runs the user's torch.compile script (`<SCRIPT>`: the layered
/// triage, the bisection) is PyTorch's only — for another framework there is no such script,
/// and the row is passed over; a text that names no framework keeps the row's advice without
/// those checks ([`from_row`]): the framework is asked first.
fn row_for(matches: &str, framework: Framework) -> Option<&'static RemedyRow> {
    let runs = |r: &&RemedyRow| {
        matches!(framework, Framework::Torch | Framework::Unknown)
            || !r.check.iter().any(|c| c.contains("<SCRIPT>"))
    };
    knowledge::remedy_for(&format!("{matches}@{}", framework.name()))
        .filter(runs)
        .or_else(|| knowledge::remedy_for(matches).filter(runs))
}

/// Whether a report's solution only sends the reader to support (`Please contact support
/// engineer.`, CANN's answer for an inner error): no step the user can take.
fn only_contact(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    l.len() < 80 && l.contains("contact") && (l.contains("support") || l.contains("engineer"))
}

/// The report's own `Possible Cause:` and `Solution:` lines in the error's block.
fn quoted(err: &CausalError) -> Vec<Remedy> {
    let mut out = Vec::new();
    for (no, text) in &err.scope {
        let t = text.trim();
        let found = [
            ("Solution:", "report.solution"),
            ("Possible Cause:", "report.possible-cause"),
        ]
        .into_iter()
        .find_map(|(lead, rule)| t.strip_prefix(lead).map(|rest| (rest.trim(), rule)));
        if let Some((rest, rule)) = found {
            if !rest.is_empty()
                && !only_contact(rest)
                && !out.iter().any(|r: &Remedy| r.line == Some(*no))
            {
                out.push(Remedy {
                    action: rest.to_string(),
                    source: "CANN report".to_string(),
                    line: Some(*no),
                    check: Vec::new(),
                    matched: rule.to_string(),
                });
            }
        }
        if out.len() >= MAX_QUOTED {
            break;
        }
    }
    // The message's own advice (`Please try to decrease maxPrefillTokens …`, Triton-Ascend's
    // `You can try "export …" to avoid this problem.`), when no report says what to do.
    let message = || {
        std::iter::once((None, err.message.as_str()))
            .chain(err.scope.iter().map(|(no, t)| (Some(*no), t.as_str())))
    };
    if !out.iter().any(|r| r.matched == "report.solution") {
        if let Some((no, a)) = message()
            .filter_map(|(no, t)| advice(t).map(|a| (no, a)))
            .next()
        {
            out.push(Remedy {
                action: a.to_string(),
                source: "the error message".to_string(),
                line: no.or(Some(err.line)),
                check: Vec::new(),
                matched: "message.advice".to_string(),
            });
        }
    }
    // A setting the message names as too small or too large (`HCCL_BUFFSIZE is too SMALL, …
    // NEEDED_HCCL_BUFFSIZE … = 609MB, HCCL_BUFFSIZE=200MB`): the setting to change.
    if let Some((no, (name, small))) = message()
        .filter_map(|(no, t)| setting_out_of_range(t).map(|s| (no, s)))
        .next()
    {
        let (change, way) = if small {
            ("Raise", "small")
        } else {
            ("Lower", "large")
        };
        out.push(Remedy {
            action: format!(
                "{change} {name} in the environment of every process that runs the job: the message says it is too {way} (and may print the value it needs)"
            ),
            source: "the error message".to_string(),
            line: no.or(Some(err.line)),
            check: vec![format!("echo \"${name}\"")],
            matched: "message.setting".to_string(),
        });
    }
    // Solutions first: they say what to do, causes say why.
    out.sort_by_key(|r| {
        !matches!(
            r.matched.as_str(),
            "report.solution" | "message.advice" | "message.setting"
        )
    });
    out
}

/// An environment setting `text` names as out of range, and whether too small: a name in
/// capitals with an underscore (`HCCL_BUFFSIZE`, quoted or not) followed by `is too small` or `is
/// too large` / `is too big` in any case, where the text shows it is an environment variable —
/// it prints its value (`HCCL_BUFFSIZE=200MB`) or the name is one of CANN's, HCCL's or
/// torch_npu's (`HCCL_`, `HCCP_`, `ACL_`, `ASCEND_`, `PYTORCH_NPU_`, `TORCH_NPU_`, `NPU_`). A
/// kernel's constant (`BLOCK_SIZE is too large`) or a macro is not one.
fn setting_out_of_range(text: &str) -> Option<(&str, bool)> {
    const PREFIXES: &[&str] = &[
        "HCCL_",
        "HCCP_",
        "ACL_",
        "ASCEND_",
        "PYTORCH_NPU_",
        "TORCH_NPU_",
        "NPU_",
    ];
    let lower = text.to_ascii_lowercase();
    [
        (" is too small", true),
        (" is too large", false),
        (" is too big", false),
    ]
    .into_iter()
    .flat_map(|(says, small)| lower.match_indices(says).map(move |(at, _)| (at, small)))
    .find_map(|(at, small)| {
        let before = text[..at].trim_end_matches(['`', '\'', '"']);
        let name = before
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .next()?;
        let named = name.len() >= 5
            && name.contains('_')
            && name.starts_with(|c: char| c.is_ascii_uppercase())
            && !name.bytes().any(|b| b.is_ascii_lowercase());
        let variable =
            PREFIXES.iter().any(|p| name.starts_with(p)) || text.contains(&format!("{name}="));
        (named && variable).then_some((name, small))
    })
}

/// A sentence of `text` that advises what to do, whole: one that starts with `Please try`, `You
/// can try`, `Try to`, `Consider` or a change it prescribes (`Please modify`, `set`, `install`,
/// `upgrade`, `reinstall`, `rebuild`), or says it after a condition (torch_npu's `If you need this
/// call to be captured, please try to set torch.npu.config.allow_internal_format = False.`).
fn advice(text: &str) -> Option<&str> {
    const LEADS: &[&str] = &[
        "Please try",
        "You can try",
        "Try to ",
        "Consider ",
        // A change the message prescribes (`Please modify default socversion in run.sh or
        // execute run.sh with socversion parameter.`), not `Please check …`.
        "Please modify ",
        "Please set ",
        "Please install ",
        "Please upgrade ",
        "Please reinstall ",
        "Please rebuild ",
    ];
    const AFTER_A_CONDITION: &[&str] = &[", please try ", ", you can try ", ", try to "];
    let mut starts: Vec<usize> = std::iter::once(0)
        .chain(
            text.match_indices(". ")
                .chain(text.match_indices("! "))
                .map(|(at, _)| at + 2),
        )
        .collect();
    starts.sort_unstable();
    starts.into_iter().find_map(|at| {
        let rest = text[at..].trim_start();
        let sentence = rest[..rest.find(". ").map_or(rest.len(), |e| e + 1)].trim();
        let conditional = || {
            let lower = sentence.to_ascii_lowercase();
            AFTER_A_CONDITION.iter().any(|c| lower.contains(c))
        };
        (LEADS.iter().any(|l| sentence.starts_with(l)) || conditional()).then_some(sentence)
    })
}

/// The remedy-table matches of an error, most specific first.
fn matches(err: &CausalError) -> impl Iterator<Item = String> + '_ {
    let p = err.phase.as_ref();
    let stated_fact = knowledge::stated_cause(&err.message);
    let stated = stated_fact.map(|f| format!("key:{}", f.key));
    // The nature the message states (a hint naming a timeout) before the one its code's title
    // gives.
    let stated_nature = stated_fact
        .and_then(|f| f.nature)
        .map(|n| format!("nature:{}", n.name()));
    let token = p.map(|p| match &*p.rule {
        "shape.cann-code-family" => format!("code:{}", p.token),
        "shape.runtime-code" => format!("runtime:{}", p.token),
        _ => format!("key:{}", p.token),
    });
    let code = find_code(&err.message)
        .and_then(|at| err.message.get(at..at + 6).map(|c| format!("code:{c}")));
    let rule = p.map(|p| format!("rule:{}", p.rule));
    let nature = p
        .and_then(|p| p.nature)
        .map(|n| format!("nature:{}", n.name()));
    let kind = p.and_then(|p| p.kind).map(|k| format!("kind:{}", k.name()));
    let phase = p.map(|p| format!("phase:{}", p.phase.name()));
    // A report whose root states a device fault ranks as one, whatever its code's title says —
    // unless the device record is a wait (an HCCL FFTS+ timeout, an event or notify wait): the
    // side waited on is the fault, so the collective's remedy below applies.
    let wait = crate::knowledge::is_device_wait(&err.message.to_ascii_lowercase());
    let fault =
        (err.rank == super::CauseRank::DeviceFault && !wait).then(|| "nature:device-fault".into());
    // A collective failure's remedy is the other ranks' (a timeout there is a derived fault).
    let collective = kind.clone().filter(|k| k == "kind:collective");
    [
        token,
        stated,
        code,
        rule,
        fault,
        collective,
        stated_nature,
        nature,
        kind,
        phase,
    ]
    .into_iter()
    .flatten()
}

/// A row as the remedy of a program on `framework`: its checks with the file filled in (those
/// that run the user's torch.compile script, `<SCRIPT>`, only for PyTorch), its words the
/// framework's.
fn from_row(row: &RemedyRow, file: Option<&str>, framework: Framework) -> Remedy {
    let check = row
        .check
        .iter()
        .filter(|c| framework == Framework::Torch || !c.contains("<SCRIPT>"))
        .map(|c| check_command(c, file))
        .collect();
    Remedy {
        action: framework_words(row.action, framework),
        source: row.source.to_string(),
        line: None,
        check,
        matched: row.matches.to_string(),
    }
}

/// Where a remedy row names the framework's switch that launches operators synchronously (each
/// error then reports where it happens): [`Framework::launch_blocking`] fills it in.
pub const LAUNCH_BLOCKING: &str = "{launch-blocking}";
/// Where a remedy row names what must match the installed CANN:
/// [`Framework::matching_versions`].
pub const VERSIONS: &str = "{versions}";
/// Where a remedy row may name the allocator's setting against fragmentation:
/// [`Framework::allocator_clause`].
pub const ALLOCATOR: &str = "{allocator}";

/// A remedy row's text with the framework's words in place of its tokens.
fn framework_words(text: &str, framework: Framework) -> String {
    [
        (LAUNCH_BLOCKING, framework.launch_blocking()),
        (VERSIONS, framework.matching_versions()),
        (ALLOCATOR, framework.allocator_clause()),
    ]
    .iter()
    .fold(text.to_string(), |t, (token, words)| {
        t.replace(token, words)
    })
}

/// A check command as a remedy shows it: an `npgx …` command with `FILE` filled in ([`fill`]; `None`
/// leaves `<LOG_FILE>`), another tool's command as it stands.
pub fn check_command(command: &str, file: Option<&str>) -> String {
    match file {
        Some(f) if command.starts_with("npgx ") => fill(command, f),
        None if command.starts_with("npgx ") => fill(command, "<LOG_FILE>"),
        _ => command.to_string(),
    }
}

/// The npgx commands that read a log's device-error records, as remedy rows write them.
const DEVICE_READERS: [&str; 2] = ["npgx aicore FILE", "npgx repro --from-aicore FILE"];

/// The reader of [`DEVICE_READERS`] a check is, filled for `file`, with the rest of the check.
fn device_reader<'c>(check: &'c str, file: Option<&str>) -> Option<(&'static str, &'c str)> {
    DEVICE_READERS.iter().find_map(|reader| {
        let filled = check_command(reader, file);
        let rest = check.strip_prefix(filled.as_str())?;
        (rest.is_empty() || rest.starts_with(' ')).then_some((*reader, rest))
    })
}

/// Whether one of the remedy's checks reads the device-error records of `file` (the file the
/// error was read from, as the checks were filled for it).
pub fn reads_device_records(r: &Remedy, file: Option<&str>) -> bool {
    r.check.iter().any(|c| device_reader(c, file).is_some())
}

/// For a `file` that holds no device-error record — a traceback or a paste that names a device
/// fault whose records CANN wrote to the failing process's plogs —: the checks that would read
/// its records read the plogs instead (a command on the paste itself finds nothing): `plogs`,
/// a folder the caller knows holds them, else `<PLOG_DIR>` for the user to fill.
pub fn plogs_instead(r: &mut Remedy, file: Option<&str>, plogs: Option<&str>) {
    let dir = plogs.map_or_else(|| "<PLOG_DIR>".to_string(), crate::shell::word);
    for c in &mut r.check {
        if let Some((reader, rest)) = device_reader(c, file) {
            *c = format!("{}{rest}", reader.replace("FILE", &dir));
        }
    }
}

/// An npgx command with `FILE` replaced by the file the error was read from, quoted for a POSIX
/// shell when it needs it. Nothing else is guessed: the folder the file sits in may hold other
/// people's logs, so inputs only the user has stay `<PLACEHOLDERS>` for the user to fill.
fn fill(command: &str, file: &str) -> String {
    fill_word(command, "FILE", file)
}

/// Where a remedy row's check names the library an error names (`ldd -r <LIBRARY>`).
const LIBRARY: &str = "<LIBRARY>";

/// `command` with every word that is `placeholder` replaced by `value`, quoted as one shell word.
fn fill_word(command: &str, placeholder: &str, value: &str) -> String {
    command
        .split(' ')
        .map(|w| {
            if w == placeholder {
                crate::shell::word(value)
            } else {
                w.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::causal::first_causal_error;

    fn of(text: &str) -> Vec<Remedy> {
        remedies(
            &first_causal_error(text.as_bytes()).expect("an error"),
            Some("logs/run 1.log"),
            Framework::Torch,
        )
    }

    // A report's solution that only sends the reader to support is no step (batch 32's grading).
    #[test]
    fn a_solution_that_only_says_contact_support_is_not_quoted() {
        let r = of("EE8888: Inner Error!\n        Unsupport flags, flags=4[FUNC:StreamCreate][FILE:api_error.cc][LINE:300]\n        Solution: Please contact support engineer.\n");
        assert!(r.iter().all(|r| r.source != "CANN report"), "{r:?}");
        assert!(!only_contact("Close applications not in use."));
    }

    #[test]
    fn the_synchronous_switch_is_the_programs_frameworks() {
        let execution = |f| {
            table_remedy("phase:execution", None, f)
                .expect("the execution row")
                .action
        };
        assert!(execution(Framework::Torch).contains("Rerun with ASCEND_LAUNCH_BLOCKING=1 so"));
        assert!(execution(Framework::MindSpore).contains("mindspore.runtime.launch_blocking()"));
        let llama = execution(Framework::Ggml);
        assert!(!llama.contains("ASCEND_LAUNCH_BLOCKING") && !llama.contains('{'));
        let row = |m: &str, f| table_remedy(m, None, f).expect("the row").action;
        assert!(row("kind:environment", Framework::Torch).contains("torch_npu's version table"));
        assert!(row("kind:environment", Framework::MindSpore)
            .contains("MindSpore and CANN as MindSpore's installation guide"));
        assert!(row("nature:memory", Framework::Torch).contains("PYTORCH_NPU_ALLOC_CONF"));
        assert!(row("nature:memory", Framework::Ggml).ends_with("fewer processes on the device"));
        // A framework's own row before the common one (batch 31: msprobe does not dump
        // llama.cpp's tensors), the common one for the others.
        let ggml =
            table_remedy("rule:metric.degenerate-text", None, Framework::Ggml).expect("a row");
        assert_eq!(ggml.matched, "rule:metric.degenerate-text@llama.cpp");
        assert!(ggml.action.contains("test-backend-ops") && !ggml.action.contains("msprobe"));
        assert_eq!(
            table_remedy("rule:metric.degenerate-text", None, Framework::Torch)
                .expect("a row")
                .matched,
            "rule:metric.degenerate-text"
        );
        // Every framework-qualified row names a framework and a common row it stands for.
        for r in knowledge::remedy_rows() {
            if let Some((common, f)) = r.matches.split_once('@') {
                assert!(knowledge::remedy_for(common).is_some(), "{}", r.matches);
                assert!(
                    [
                        Framework::Torch,
                        Framework::MindSpore,
                        Framework::Paddle,
                        Framework::Ggml,
                        Framework::OnnxRuntime,
                        Framework::OpenCv,
                        Framework::MindIe,
                        Framework::Cann
                    ]
                    .iter()
                    .any(|k| k.name() == f),
                    "{}",
                    r.matches
                );
            }
        }
        assert!(execution(Framework::Cann)
            .contains("Rerun with each launch followed by aclrtSynchronizeStream so"));
        // Every row's text is whole once filled: no other token.
        for row in knowledge::remedy_rows() {
            let filled = from_row(row, None, Framework::Paddle).action;
            assert!(
                !filled.contains('{') && !filled.contains('}'),
                "{}",
                row.matches
            );
        }
    }

    #[test]
    fn the_reports_own_solution_comes_first_with_its_line() {
        let r = of("[ERROR] RecentErrMsg: [PID: 1] 2026-03-24-12:14:45.885.234 Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n        Possible Cause: Available memory is insufficient.\n        Solution: Close applications not in use.\n        TraceBack (most recent call last):\n        allocate device memory failed.[FUNC:Init][FILE:m.cc][LINE:50]\n");
        assert_eq!(
            (r[0].action.as_str(), r[0].line, r[0].source.as_str()),
            ("Close applications not in use.", Some(3), "CANN report")
        );
        assert_eq!(r[1].line, Some(2));
        // Then the table's row for exhausted memory, with its documented source.
        assert_eq!(r[2].matched, "nature:memory");
        assert!(r[2].source.contains("EL0004"));
    }

    // Remedies are conditioned on their facts: no allocator tuning for a request larger than the
    // device, no blocking advice for an error raised by the call that failed.
    #[test]
    fn remedies_follow_the_facts() {
        let small = of("RuntimeError: NPU out of memory. Tried to allocate 30.00 MiB (NPU 3; 60.96 GiB total capacity; 58.10 GiB already allocated)\n");
        assert_eq!(small[0].matched, "key:npu out of memory");
        let big = of("RuntimeError: NPU out of memory. Tried to allocate 80.00 GiB (NPU 3; 60.96 GiB total capacity; 1.10 GiB already allocated)\n");
        assert_eq!(big[0].matched, "oversize:npu out of memory");
        assert!(!big[0].action.contains("smaller batch"));
        let absurd = of("NPU out of memory. Tried to allocate more than 1EB memory\n");
        assert_eq!(absurd[0].matched, "oversize:npu out of memory");
        let sync = of("RuntimeError: addmm:x.cpp:1 NPU function error: call aclnnAddmm failed, error code is 161002\n");
        assert_eq!(sync[0].matched, "sync:aclnn");
        assert!(sync[0].action.contains("changes nothing"));
        let asynchronous = of("RuntimeError: The Inner error is reported as above. The process exits for this inner error, and the current working operator name is SelfAttentionOperation.\n");
        assert!(asynchronous.iter().all(|r| r.matched != "sync:aclnn"));
        // The launch inside torch_npu's lambda (`operator()`), which the task queue runs on its
        // own thread: launching synchronously shows the call (wider-world batch 22's grading).
        let queued = of("[rank0]:[E126 03:28:29.988683190 compiler_depend.ts:444] operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:88 NPU function error: call aclnnInplaceCopy failed, error code is 107000\n");
        assert_eq!(queued[0].matched, "queued:aclnn");
        assert!(queued[0].action.contains("ASCEND_LAUNCH_BLOCKING=1"));
        // A missing kernel package under the call's failure: its row, not the call's arguments.
        let installation = of("RuntimeError: call aclnnCast failed, detail:EZ9999: Inner Error!\nEZ9999: 2024-01-01-00:00:00.000.000  Parse dynamic kernel config fail.\n        TraceBack (most recent call last):\n        Op Cast does not has any binary.\n");
        assert_eq!(installation[0].matched, "key:does not has any binary");
        // A CMake parse error (wider-world batches 26 and 28: a symbolic link checked out as a
        // file holding its target): its own row over the configuration's generic one.
        let parse = of("CMake Error at cmake/generic.cmake:1:\n  Parse error.  Expected a command name, got unquoted argument with text\n  \"../../../x/cmake/generic.cmake\".\n");
        assert_eq!(
            parse[0].matched,
            "key:expected a command name, got unquoted argument"
        );
        assert!(parse[0].action.contains("core.symlinks"));
        assert!((bytes_of("1", "eb").unwrap() - 1024f64.powi(6)).abs() < 1.0);
        assert_eq!(
            first_size(" 60.96 gib total"),
            Some(60.96 * 1024f64.powi(3))
        );
    }

    #[test]
    fn the_most_specific_row_wins_and_npgx_commands_get_the_file() {
        let r = of("RuntimeError: Failed to find function aclmdlRICaptureBegin\n");
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].matched, "key:failed to find function");
        let r = of("EZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:0, dieId:0), serial number is 2, there is an aivec error exception, core id is 5\n");
        assert_eq!(r[0].matched, "nature:device-fault");
        assert!(r[0]
            .check
            .contains(&"npgx aicore 'logs/run 1.log'".to_string()));
        // A collective timeout names the other ranks' logs: a folder only the user knows (the
        // pasted file's folder may hold anything), a placeholder to fill.
        let r = of("EI0002: [PID: 1] 2025-03-26-13:49:01.670.614 The wait execution of the Notify register times out.\n");
        assert_eq!(r[0].matched, "kind:collective");
        assert!(r[0]
            .check
            .contains(&"npgx triage classify <RANK_LOGS_DIR>".to_string()));
        assert!(
            r[0].check.iter().all(|c| !c.contains(" logs")),
            "{:?}",
            r[0].check
        );
        // Also when the device reports it: an HCCL FFTS+ timeout and a wait for a notify or an
        // event are the other side's stall, not a kernel to dump.
        for device in [
            "EI9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:5, dieId:0), serial number is 3, hccl fftsplus task timeout occurred during task execution, stream_id:7, sq_id:7, task_id:5990, stuck notify num:1, timeout:1836.\n",
            "[ERROR] RUNTIME(1,p):2025-01-01-00:00:00.000.000 [device_error_proc.cc:1]1 F:The error from device(chipId:6, dieId:0), serial number is 1, event wait timeout occurred during task execution, stream_id:19, sq_id:19, task_id:16, event_id=73, timeout=1866s.\n",
        ] {
            assert_eq!(of(device)[0].matched, "kind:collective", "{device}");
        }
        // An error message's own advice comes first when no report says what to do.
        let r = of("RuntimeError: grid should be less than 65536! You can try \"export TRITON_ALL_BLOCKS_PARALLEL=1\" to avoid this problem.\n");
        assert_eq!(
            (r[0].matched.as_str(), r[0].action.as_str()),
            (
                "message.advice",
                "You can try \"export TRITON_ALL_BLOCKS_PARALLEL=1\" to avoid this problem."
            )
        );
        assert_eq!(r[1].matched, "key:grid should be less than 65536");
        assert_eq!(
            advice("Warmup failed. Please try to decrease `maxPrefillTokens`. Bye."),
            Some("Please try to decrease `maxPrefillTokens`.")
        );
        assert_eq!(advice("Try again later"), None);
        assert_eq!(
            advice("..[ERROR] the socversion Ascend910B1 of bin package does not match the current device socverison Ascend310P3. Please modify default socversion in run.sh or execute run.sh with socversion parameter."),
            Some("Please modify default socversion in run.sh or execute run.sh with socversion parameter.")
        );
        assert_eq!(advice("x failed. Please check the log."), None);
        assert_eq!(
            advice("Cannot run aclop operators during NPU graph capture. Current working aclop is MatMul. If you need this call to be captured, please try to set torch.npu.config.allow_internal_format = False. If still fail, file an issue."),
            Some("If you need this call to be captured, please try to set torch.npu.config.allow_internal_format = False.")
        );
        assert_eq!(advice("It failed, which we try to avoid. Bye."), None);
        // A setting the message names as out of range is the first thing to change.
        let r = of("EZ9999: [PID: 1] 2025-01-01-00:00:00.000.000 HCCL_BUFFSIZE is too SMALL, maxBs = 512, NEEDED_HCCL_BUFFSIZE = 609MB, HCCL_BUFFSIZE=200MB.\n");
        assert_eq!(
            (r[0].matched.as_str(), r[0].check.as_slice()),
            (
                "message.setting",
                ["echo \"$HCCL_BUFFSIZE\"".to_string()].as_slice()
            )
        );
        assert!(r[0].action.starts_with("Raise HCCL_BUFFSIZE"));
        assert_eq!(setting_out_of_range("batch size is too small"), None);
        assert_eq!(setting_out_of_range("the Block_Dim is too large"), None);
        // A kernel's constant or a macro is no environment variable; a value printed makes one.
        assert_eq!(setting_out_of_range("BLOCK_SIZE is too large"), None);
        assert_eq!(
            setting_out_of_range("MAX_JOBS is too big for this host, MAX_JOBS=64"),
            Some(("MAX_JOBS", false))
        );
        assert_eq!(
            setting_out_of_range("window is too small: `HCCL_BUFFSIZE` is too small"),
            Some(("HCCL_BUFFSIZE", true))
        );
        // A kernel's fault under an HCCL code is still a device fault.
        let aivec = "EI9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:0, dieId:0), serial number is 2, there is an aivec error exception, core id is 5\n";
        assert_eq!(of(aivec)[0].matched, "nature:device-fault");
    }

    #[test]
    fn reports_without_an_error() {
        assert!(
            route_remedy("accuracy", None, Framework::Torch).is_some_and(|r| r.check[0]
                .contains("FILE")
                || r.check[0].contains("--compare-outputs"))
        );
        assert!(route_remedy("undetermined", None, Framework::Torch).is_none());
    }

    // A row that runs the user's torch.compile script is PyTorch's only.
    #[test]
    fn script_rows_are_pytorchs() {
        assert!(table_remedy("phase:compile", None, Framework::Torch)
            .is_some_and(|r| r.check.iter().any(|c| c.contains("<SCRIPT>"))));
        for f in [Framework::Paddle, Framework::Cann, Framework::MindSpore] {
            assert!(table_remedy("phase:compile", None, f).is_none(), "{f:?}");
            assert!(route_remedy("compile-error", None, f).is_none(), "{f:?}");
        }
    }

    // A file without device-error records: the checks that read those read the plogs, the
    // others keep the file; a path that only starts like the file's is not taken for it.
    #[test]
    fn device_readers_read_the_plogs_of_a_file_without_records() {
        for file in [Some("logs/run 1.log"), None] {
            let mut r = table_remedy("nature:timeout", file, Framework::Torch).expect("a row");
            assert!(reads_device_records(&r, file));
            plogs_instead(&mut r, file, None);
            assert_eq!(
                r.check,
                [
                    "npgx aicore <PLOG_DIR>",
                    "npgx dump-config new aic_err_norm_dump",
                    "npgx repro --from-aicore <PLOG_DIR> -o <CASE_DIR>"
                ]
            );
            assert!(!reads_device_records(&r, file));
        }
        let mut r =
            table_remedy("phase:execution", Some("run.log"), Framework::Torch).expect("a row");
        assert!(!reads_device_records(&r, Some("run")));
        plogs_instead(&mut r, Some("run"), None);
        assert!(r.check.contains(&"npgx aicore run.log".to_string()));
        let mut r =
            table_remedy("nature:memory", Some("run.log"), Framework::Torch).expect("a row");
        let before = r.check.clone();
        assert!(!reads_device_records(&r, Some("run.log")));
        plogs_instead(&mut r, Some("run.log"), None);
        assert_eq!(r.check, before);
        // A folder the caller knows is named, quoted for the shell.
        let mut r =
            table_remedy("nature:timeout", Some("run.log"), Framework::Torch).expect("a row");
        plogs_instead(&mut r, Some("run.log"), Some("tree/step 5/ascend_plog"));
        assert_eq!(r.check[0], "npgx aicore 'tree/step 5/ascend_plog'");
    }

    // A device fault with the kernel's assertion that belongs to it: the check it names comes
    // first, with its line; the device-fault row after it. Without one, or for an error that is
    // no device fault, the remedies are the error's own.
    #[test]
    fn a_kernel_assertion_comes_first_for_its_device_fault() {
        let fault = first_causal_error(b"[ERROR] RUNTIME(1,python3):2025-05-08-09:56:18.522.534 [stars_engine.cc:1553]1 ProcLogicCqReport:[INIT][DEFAULT]Task run failed, device_id=0, stream_id=2, task_id=1, sqe_type=0(ffts), errType=0x1(task exception), sqSwStatus=0\n").expect("a fault");
        let a = crate::kernel_assert::parse("[ASSERT] [CANN_VERSION : 7.8][TimeStamp : 0] /ops/gather_v3_base.h:137: Assertion `(0 <= val && val < this->gxSize_)' Index 100000000 out of range[0 655360)!").expect("an assertion");
        let r = remedies_with_assert(&fault, Some((34, &a)), Some("run.log"), Framework::Torch);
        assert_eq!(
            (r[0].matched.as_str(), r[0].line, r[0].source.as_str()),
            ("kernel.assert", Some(34), "kernel assert")
        );
        assert!(
            r[0].action.contains("`(0 <= val && val < this->gxSize_)` at /ops/gather_v3_base.h:137 failed (Index 100000000 out of range[0 655360)!)"),
            "{}",
            r[0].action
        );
        assert_eq!(r[0].check, ["npgx aicore run.log"]);
        assert_eq!(r[1].matched, "nature:device-fault");
        let r = remedies_with_assert(&fault, None, Some("run.log"), Framework::Torch);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].matched, "nature:device-fault");
        let oom = first_causal_error(b"RuntimeError: NPU out of memory. Tried to allocate 30.00 MiB (NPU 3; 60.96 GiB total capacity; 58.10 GiB already allocated)\n").expect("an error");
        let r = remedies_with_assert(&oom, Some((34, &a)), Some("run.log"), Framework::Torch);
        assert_eq!(r[0].matched, "key:npu out of memory");
        assert!(r.iter().all(|x| x.matched != "kernel.assert"));
        // The scanner says whether it saw one.
        let mut s = crate::causal::CausalScanner::new();
        s.push(1, b"[ERROR] IDEDD(1,python3):2025-05-08-09:56:20.763.494 [dump_printf.cpp:548][tid:1] [ASSERT] /k.h:9: Assertion `i < n' bad");
        assert!(s.saw_kernel_assert());
    }
}
