//! What npgx knows about Ascend failures, as data: CANN error-code families and titles, runtime
//! error numbers, torch_npu's hint lines and `ERRssEEE` families, messages that mean a broken
//! environment, the phase a traceback frame or an API name belongs to, and the bilingual wording
//! of accuracy and performance reports.
//!
//! Every fact is one row of `knowledge.tsv` (read at compile time), with the source it was taken
//! from; the header of that file documents the columns. Keeping the facts out of the code means a
//! new code or phrase is a reviewed data row, not a new branch in a matcher, and every matcher
//! reads the same table. The table is parsed once, on first use; a unit test checks that every row
//! parses, so a malformed row fails the build's tests rather than being skipped silently.
//!
//! What it is not for: deciding a route. The causal engine ([`crate::causal`]) and the router read
//! these facts and combine them with the text they came from.

use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

use crate::needles::Needles;

/// The table, as compiled in.
const TABLE: &str = include_str!("knowledge.tsv");
/// The remedy table, as compiled in.
const REMEDIES: &str = include_str!("remedy.tsv");

/// One row of the remedy table: what to check or change when a first causal error matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemedyRow {
    /// `key:…`, `code:…`, `runtime:…`, `nature:…`, `kind:…`, `phase:…` or `route:…`.
    pub matches: &'static str,
    pub action: &'static str,
    /// Commands that check it (`;`-separated in the table), none for `-`.
    pub check: Vec<&'static str>,
    pub source: &'static str,
}

/// Parses a remedy table text: the rows, and every row that does not parse.
pub fn parse_remedies(text: &'static str) -> (Vec<RemedyRow>, Vec<BadRow>) {
    const MATCHES: &[&str] = &[
        "oversize:",
        "sync:",
        "queued:",
        "key:",
        "code:",
        "runtime:",
        "rule:",
        "nature:",
        "kind:",
        "phase:",
        "route:",
    ];
    let mut rows = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&'static str> = line.split('\t').collect();
        let [matches, action, check, source] = cells[..] else {
            bad.push(BadRow {
                line: i + 1,
                why: format!("{} cells, 4 expected", cells.len()),
            });
            continue;
        };
        if !MATCHES.iter().any(|m| matches.starts_with(m)) {
            bad.push(BadRow {
                line: i + 1,
                why: format!("unknown match `{matches}`"),
            });
            continue;
        }
        if action.trim().is_empty() || source.trim().is_empty() || check.trim().is_empty() {
            bad.push(BadRow {
                line: i + 1,
                why: "empty action, check or source".to_string(),
            });
            continue;
        }
        let check = if check == "-" {
            Vec::new()
        } else {
            check
                .split(';')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .collect()
        };
        rows.push(RemedyRow {
            matches,
            action,
            check,
            source,
        });
    }
    (rows, bad)
}

/// Every row of the compiled-in remedy table (a unit test guarantees they all parse).
pub fn remedy_rows() -> &'static [RemedyRow] {
    static ROWS: OnceLock<Vec<RemedyRow>> = OnceLock::new();
    ROWS.get_or_init(|| parse_remedies(REMEDIES).0)
}

/// The remedy row for a match (`key:npu out of memory`, `kind:environment`).
pub fn remedy_for(matches: &str) -> Option<&'static RemedyRow> {
    remedy_rows().iter().find(|r| r.matches == matches)
}

/// Where in a torch.compile run an error happens.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Phase {
    /// Import, library load, version and package checks, device initialisation.
    Environment,
    /// Dynamo tracing (bytecode analysis, FakeTensor propagation, guards).
    Tracing,
    /// AOT / backend compile: AOTAutograd, FX passes, converters, GE graph build, operator compile.
    Compile,
    /// ACL graph capture.
    Capture,
    /// Replay or execution of operators on the device.
    Execution,
    /// Collective communication (HCCL).
    Collective,
    /// Python host code outside the compile stack.
    Host,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Environment => "environment",
            Phase::Tracing => "tracing",
            Phase::Compile => "compile",
            Phase::Capture => "capture",
            Phase::Execution => "execution",
            Phase::Collective => "collective",
            Phase::Host => "host",
        }
    }
}

/// What kind of failure a fact describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Nature {
    Environment,
    Compile,
    Resource,
    Memory,
    Parameter,
    DeviceFault,
    Timeout,
    Unsupported,
    Internal,
    /// Says that something failed, not what.
    Generic,
}

impl Nature {
    /// The name the tables and the JSON use.
    pub fn name(self) -> &'static str {
        match self {
            Nature::Environment => "environment",
            Nature::Compile => "compile",
            Nature::Resource => "resource",
            Nature::Memory => "memory",
            Nature::Parameter => "parameter",
            Nature::DeviceFault => "device-fault",
            Nature::Timeout => "timeout",
            Nature::Unsupported => "unsupported",
            Nature::Internal => "internal",
            Nature::Generic => "generic",
        }
    }
}

/// A phase as the table writes it: a phase, or `op-check` (an operator parameter / tiling check
/// whose phase is the caller's: compile under GE, execution under an aclnn call).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseCell {
    Known(Phase),
    OperatorCheck,
}

/// The kinds of rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Family,
    Code,
    Runtime,
    Hint,
    Generic,
    PtaModule,
    PtaType,
    Environment,
    EnvironmentMessage,
    /// The package or component an environment fault names (meaning: what to fix).
    Package,
    Frame,
    Api,
    /// A message that states a cause on its own, wherever it stands.
    Phrase,
    NoiseModule,
    Accuracy,
    Performance,
    /// A performance report's verdict word (a comparison with a baseline).
    Verdict,
    Negation,
}

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    pub kind: Kind,
    pub key: &'static str,
    pub phase: Option<PhaseCell>,
    pub nature: Option<Nature>,
    pub meaning: &'static str,
    pub source: &'static str,
}

impl Fact {
    /// The phase, when the row names one (an operator check resolves to `under`).
    pub fn phase_or(&self, under: Phase) -> Option<Phase> {
        match self.phase? {
            PhaseCell::Known(p) => Some(p),
            PhaseCell::OperatorCheck => Some(under),
        }
    }

    /// Whether the row's nature is a fault or a timeout on the device.
    pub fn is_device_side(&self) -> bool {
        matches!(self.nature, Some(Nature::DeviceFault | Nature::Timeout))
    }
}

/// Whether a runtime error number is a fault or a timeout on the device, by its row's nature
/// (`507035`, the `507*` range; not `507011` or `507033`, whose rows say otherwise).
pub fn is_device_side(n: u64) -> bool {
    runtime_code(n).is_some_and(Fact::is_device_side)
}

/// A row that does not parse: its 1-based line and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadRow {
    pub line: usize,
    pub why: String,
}

fn kind(s: &str) -> Option<Kind> {
    Some(match s {
        "family" => Kind::Family,
        "code" => Kind::Code,
        "runtime" => Kind::Runtime,
        "hint" => Kind::Hint,
        "generic" => Kind::Generic,
        "pta-module" => Kind::PtaModule,
        "pta-type" => Kind::PtaType,
        "environment" => Kind::Environment,
        "environment-message" => Kind::EnvironmentMessage,
        "package" => Kind::Package,
        "frame" => Kind::Frame,
        "api" => Kind::Api,
        "phrase" => Kind::Phrase,
        "noise-module" => Kind::NoiseModule,
        "accuracy" => Kind::Accuracy,
        "performance" => Kind::Performance,
        "verdict" => Kind::Verdict,
        "negation" => Kind::Negation,
        _ => return None,
    })
}

fn phase_cell(s: &str) -> Result<Option<PhaseCell>, String> {
    Ok(Some(PhaseCell::Known(match s {
        "-" => return Ok(None),
        "op-check" => return Ok(Some(PhaseCell::OperatorCheck)),
        "environment" => Phase::Environment,
        "tracing" => Phase::Tracing,
        "compile" => Phase::Compile,
        "capture" => Phase::Capture,
        "execution" => Phase::Execution,
        "collective" => Phase::Collective,
        "host" => Phase::Host,
        other => return Err(format!("unknown phase `{other}`")),
    })))
}

fn nature(s: &str) -> Result<Option<Nature>, String> {
    Ok(Some(match s {
        "-" => return Ok(None),
        "environment" => Nature::Environment,
        "compile" => Nature::Compile,
        "resource" => Nature::Resource,
        "memory" => Nature::Memory,
        "parameter" => Nature::Parameter,
        "device-fault" => Nature::DeviceFault,
        "timeout" => Nature::Timeout,
        "unsupported" => Nature::Unsupported,
        "internal" => Nature::Internal,
        "generic" => Nature::Generic,
        other => return Err(format!("unknown nature `{other}`")),
    }))
}

/// Parses a table text: the rows, and every row that does not parse.
pub fn parse_table(text: &'static str) -> (Vec<Fact>, Vec<BadRow>) {
    let mut facts = Vec::new();
    let mut bad = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let cells: Vec<&'static str> = line.split('\t').collect();
        let row = (|| {
            let [k, key, phase, nat, meaning, source] = cells[..] else {
                return Err(format!("{} cells, 6 expected", cells.len()));
            };
            let kind = kind(k).ok_or_else(|| format!("unknown kind `{k}`"))?;
            if key.is_empty() || meaning.is_empty() || source.is_empty() {
                return Err("empty key, meaning or source".to_string());
            }
            if key != key.trim() {
                return Err("key has surrounding spaces".to_string());
            }
            Ok(Fact {
                kind,
                key,
                phase: phase_cell(phase)?,
                nature: nature(nat)?,
                meaning,
                source,
            })
        })();
        match row {
            Ok(f) => facts.push(f),
            Err(why) => bad.push(BadRow { line: i + 1, why }),
        }
    }
    (facts, bad)
}

/// Every fact of the compiled-in table (rows that do not parse are left out; a unit test
/// guarantees there are none).
pub fn facts() -> &'static [Fact] {
    static FACTS: OnceLock<Vec<Fact>> = OnceLock::new();
    FACTS.get_or_init(|| parse_table(TABLE).0)
}

fn of_kind(kind: Kind) -> impl Iterator<Item = &'static Fact> {
    keyed(kind).iter().map(|row| row.fact)
}

/// The component row of a CANN error code (`EZ9999` → the `Z` family).
pub fn code_family(code: &str) -> Option<&'static Fact> {
    let c = code.get(1..2)?;
    of_kind(Kind::Family).find(|f| f.key == c)
}

/// The row of a CANN code with a known title.
pub fn cann_code(code: &str) -> Option<&'static Fact> {
    of_kind(Kind::Code).find(|f| f.key == code)
}

/// The row of a runtime error number: the number itself, else its range (`507*`).
pub fn runtime_code(n: u64) -> Option<&'static Fact> {
    let s = n.to_string();
    of_kind(Kind::Runtime).find(|f| f.key == s).or_else(|| {
        of_kind(Kind::Runtime).find(|f| {
            f.key
                .strip_suffix('*')
                .is_some_and(|p| s.len() == 6 && s.starts_with(p))
        })
    })
}

/// A row with its key as searchers, one per `&`-separated part, built once: a line is asked
/// about every row of a kind, and `str::contains` would build each part's searcher per call.
struct Keyed {
    fact: &'static Fact,
    parts: Needles,
}

/// The rows of `kind` with their searchers, in table order.
fn keyed(kind: Kind) -> &'static [Keyed] {
    static KEYED: OnceLock<Vec<(Kind, Vec<Keyed>)>> = OnceLock::new();
    let all = KEYED.get_or_init(|| {
        let mut all: Vec<(Kind, Vec<Keyed>)> = Vec::new();
        for fact in facts() {
            let parts = Needles::new(fact.key.split('&'));
            let row = Keyed { fact, parts };
            match all.iter_mut().find(|(k, _)| *k == fact.kind) {
                Some((_, rows)) => rows.push(row),
                None => all.push((fact.kind, vec![row])),
            }
        }
        all
    });
    all.iter()
        .find(|(k, _)| *k == kind)
        .map_or(&[], |(_, rows)| rows.as_slice())
}

/// The first row of `kind` whose key occurs in `lower` (already lower-case): every
/// `&`-separated part of it.
fn phrase(kind: Kind, lower: &str) -> Option<&'static Fact> {
    keyed(kind)
        .iter()
        .find(|row| row.parts.all_in(lower))
        .map(|row| row.fact)
}

/// The row of a torch_npu hint text (`The aicore execution times out.`).
pub fn hint(text: &str) -> Option<&'static Fact> {
    phrase(Kind::Hint, &text.to_ascii_lowercase())
}

/// Whether a message only says that something failed (an `Inner Error!` header, a torch_npu
/// hint with a generic meaning, a `reported as above` wrapper).
pub fn is_generic(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    phrase(Kind::Generic, &lower).is_some()
        || phrase(Kind::Hint, &lower).is_some_and(|f| f.nature == Some(Nature::Generic))
}

/// Whether a report's `Solution:` or `Possible Cause:` text is a stock line that names nothing to
/// check (`Try again with a valid argument.`): a generic row's phrase (not a torch_npu hint's).
pub fn is_stock(text: &str) -> bool {
    phrase(Kind::Generic, &text.to_ascii_lowercase()).is_some()
}

/// Whether a message is only a generic row's phrase — a code's title and nothing after it
/// (EL0003's `The argument is invalid.`, not EE1001's `The argument is invalid.Reason: …`).
pub fn is_generic_title(text: &str) -> bool {
    let lower = text
        .trim()
        .trim_end_matches(['.', '!'])
        .to_ascii_lowercase();
    of_kind(Kind::Generic).any(|f| f.key.trim_end_matches(['.', '!']) == lower)
}

/// The environment row whose phrase an error's message contains.
pub fn environment(text: &str) -> Option<&'static Fact> {
    let lower = text.to_ascii_lowercase();
    environment_row(text, &lower).or_else(|| phrase(Kind::EnvironmentMessage, &lower))
}

/// The `environment` row a line states (`lower`: the line in lower case): its phrase, or a
/// shell's `not found` in dash's words ([`shell_not_found`]) as the `command not found` row.
fn environment_row(text: &str, lower: &str) -> Option<&'static Fact> {
    if shell_not_found(text.trim()) {
        return of_kind(Kind::Environment).find(|f| f.key == "command not found");
    }
    if import_from_installed(lower) {
        return of_kind(Kind::Environment)
            .find(|f| f.key == "cannot import name from an installed package");
    }
    phrase(Kind::Environment, lower)
}

/// Python's `cannot import name 'X' from 'pkg' (<path>)` where the path is an installed
/// package's (`site-packages`, `dist-packages`): the installed release lacks the name another
/// module imports — a version mismatch. A module of the user's own, `(unknown location)` (a
/// row of its own) and a circular import (`partially initialized module`) are not this.
fn import_from_installed(lower: &str) -> bool {
    let Some(at) = lower.find("cannot import name '") else {
        return false;
    };
    let rest = &lower[at..];
    let Some(from) = rest.find("' from '") else {
        return false;
    };
    let after = &rest[from + "' from '".len()..];
    let Some((module, path)) = after.split_once("' (") else {
        return false;
    };
    let installed = ["site-packages", "dist-packages"]
        .iter()
        .any(|d| path.contains(&format!("/{d}/")) || path.contains(&format!("\\{d}\\")));
    // A library's sub-package from a source checkout or an editable install
    // (`mindspeed.features_manager` from `/MindSpeed-LLM-New/mindspeed/features_manager/
    // __init__.py`): the checkout is another release than the code importing it expects.
    let checkout = module.contains('.')
        && (path.starts_with("/") || path.contains(":\\"))
        && path.trim_end_matches(')').ends_with("__init__.py");
    (installed || checkout)
        && !lower.contains("circular import")
        && !lower.contains("partially initialized")
}

/// The package or component an environment fault's text names (`… not in libopapi.so` → CANN's
/// op-API library): the first `package` row whose phrase it contains.
pub fn package(text: &str) -> Option<&'static str> {
    phrase(Kind::Package, &text.to_ascii_lowercase()).map(|f| f.meaning)
}

/// The pip package that provides a missing Python module, by the module's top-level name
/// (`dlinfer` → dlinfer-ascend), where its name differs from the module's or it comes from
/// elsewhere: the `package` row keyed `no module named '<module>'`.
pub fn module_package(module: &str) -> Option<&'static str> {
    let key = format!("no module named '{}'", module.to_ascii_lowercase());
    of_kind(Kind::Package)
        .find(|f| f.key == key)
        .map(|f| f.meaning)
}

/// The environment row of an installation fault named anywhere in a line (`Op Cast does not has
/// any binary.`); the environment-message rows, which count only inside an error's own message
/// (`is not compatible with`), are not read.
pub fn installation(text: &str) -> Option<&'static Fact> {
    phrase(Kind::Environment, &text.to_ascii_lowercase())
}

/// The row of a message that states a cause on its own (`NPU out of memory`, `Ascend op
/// converter is not implemented`).
pub fn phrase_fact(text: &str) -> Option<&'static Fact> {
    phrase(Kind::Phrase, &text.to_ascii_lowercase())
}

/// The wording of a device record that is a wait, not a kernel's fault (lower case): an HCCL
/// FFTS+ task timeout and the runtime's event / notify wait timeouts.
pub const HCCL_TIMEOUT: &str = "hccl fftsplus";
pub const WAIT_TIMEOUT: &str = "wait timeout occurred during task execution";

/// Whether a device record's text (lower case) is a wait that timed out — the side waited on
/// stalled — rather than a fault of a kernel.
pub fn is_device_wait(lower: &str) -> bool {
    lower.contains(HCCL_TIMEOUT) || lower.contains(WAIT_TIMEOUT)
}

/// The row a line states a cause with wherever it stands — bare, fenced, quoted or after any
/// prefix, outside an exception or a CANN report: an environment message, a cause phrase, or a
/// torch_npu hint that names the fault (a hint that only says something failed does not).
pub fn stated_cause(text: &str) -> Option<&'static Fact> {
    let lower = text.to_ascii_lowercase();
    environment_row(text, &lower)
        .or_else(|| phrase(Kind::Phrase, &lower))
        .or_else(|| {
            phrase(Kind::Hint, &lower).filter(|f| !matches!(f.nature, None | Some(Nature::Generic)))
        })
}

/// A POSIX shell's report that a command it was to run does not exist, in dash's and BusyBox
/// sh's words: `<shell>: <line>: <name>: not found` (`/bin/sh: 1: hccn_tool: not found`), the
/// script's name in the shell's place when it runs one (`run.sh: 3: hccn_tool: not found`),
/// BusyBox's `line 3`, the line number left out by an interactive shell (`sh: hccn_tool: not
/// found`). The shell is named by its path or name (`sh`, `dash`, `ash`, `ksh`). bash's and
/// zsh's own words, `command not found`, are the row's phrase.
fn shell_not_found(t: &str) -> bool {
    let Some(rest) = t.strip_suffix(": not found") else {
        return false;
    };
    let mut fields = rest.split(": ");
    let shell = fields.next().unwrap_or("");
    let name = shell.rsplit('/').next().unwrap_or(shell);
    let known = ["sh", "dash", "ash", "ksh"].contains(&name) || name.ends_with(".sh");
    let rest: Vec<&str> = fields.collect();
    let numbered = |line: &str| {
        let n = line.strip_prefix("line ").unwrap_or(line);
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit())
    };
    let command = match rest.as_slice() {
        [line, command] if numbered(line) => command,
        [command] => command,
        _ => return false,
    };
    known && !command.is_empty() && !command.contains(char::is_whitespace)
}

/// The kind of a cause — what the user has to fix — beside the phase it surfaced in. Where the
/// kind alone settles the route (a broken environment, exhausted memory) it is decided before
/// the phase; elsewhere the phase decides (docs/triage.md, "Kind before phase").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CauseKind {
    /// Install, version, library, driver or chip support.
    Environment,
    /// Device or host memory, workspace, stream and event slots.
    Resource,
    /// A fault raised by the device (AI Core / vector core / AI CPU exceptions, timeouts).
    DeviceFault,
    /// Collective communication (HCCL, HCCP).
    Collective,
    /// An operator's contract: shapes, dtypes, formats, attributes.
    OperatorContract,
    /// Dynamo tracing, AOT / backend compile, converters, GE build, ACL graph capture.
    GraphCompile,
    /// Wrong numbers without an error.
    Accuracy,
    /// Slowness without an error.
    Performance,
}

impl CauseKind {
    pub fn name(self) -> &'static str {
        match self {
            CauseKind::Environment => "environment",
            CauseKind::Resource => "resource",
            CauseKind::DeviceFault => "device-fault",
            CauseKind::Collective => "collective",
            CauseKind::OperatorContract => "operator-contract",
            CauseKind::GraphCompile => "graph-compile",
            CauseKind::Accuracy => "accuracy",
            CauseKind::Performance => "performance",
        }
    }

    /// The kind a phase and a nature describe: the nature first (it says what failed), the
    /// phase where the nature is silent or only says that something failed.
    pub fn of(phase: Phase, nature: Option<Nature>) -> Option<CauseKind> {
        Some(match (nature, phase) {
            (Some(Nature::Environment), _) | (_, Phase::Environment) => CauseKind::Environment,
            (Some(Nature::Memory | Nature::Resource), _) => CauseKind::Resource,
            (_, Phase::Collective) => CauseKind::Collective,
            (Some(Nature::DeviceFault | Nature::Timeout), _) => CauseKind::DeviceFault,
            (Some(Nature::Parameter), _) => CauseKind::OperatorContract,
            (_, Phase::Tracing | Phase::Compile | Phase::Capture) => CauseKind::GraphCompile,
            (Some(Nature::Compile), _) => CauseKind::GraphCompile,
            _ => return None,
        })
    }
}

/// The phase a traceback frame (`file function`) runs in.
pub fn frame(frame: &str) -> Option<&'static Fact> {
    phrase(Kind::Frame, &frame.to_ascii_lowercase())
}

/// The API-name or phrase row a line contains, outside its paths and source file names (an
/// `aclnn` in `ggml-cann/aclnn_ops.cpp:3007` or `[FILE:hccl_comm.cc]` names a file, not a call:
/// [`without_paths`]).
pub fn api(text: &str) -> Option<&'static Fact> {
    phrase(Kind::Api, &without_paths(&text.to_ascii_lowercase()))
}

/// `lower` with its paths and source file names blanked: the words between spaces, brackets,
/// parentheses, quotes and commas that hold a `/` or end in a source or library file's extension
/// (`aclnn_ops.cpp`, `x.py:12`, `libhccl.so`).
pub fn without_paths(lower: &str) -> String {
    const EXTENSIONS: &[&str] = &["c", "cc", "cpp", "cxx", "h", "hpp", "py", "cu", "ts", "so"];
    let delimiter = |c: char| c.is_whitespace() || "[](),'\"".contains(c);
    let mut out = String::with_capacity(lower.len());
    let mut rest = lower;
    while !rest.is_empty() {
        let end = rest.find(delimiter).unwrap_or(rest.len());
        let (word, after) = rest.split_at(end);
        let file = word.trim_end_matches(|c: char| c.is_ascii_digit() || c == ':');
        let path = word.contains('/')
            || file
                .rsplit_once('.')
                .is_some_and(|(stem, ext)| !stem.is_empty() && EXTENSIONS.contains(&ext));
        if path {
            out.extend(std::iter::repeat_n(' ', word.len()));
        } else {
            out.push_str(word);
        }
        let Some(d) = after.chars().next() else {
            break;
        };
        out.push(d);
        rest = &after[d.len_utf8()..];
    }
    out
}

/// The API rows whose key contains `part`.
pub fn apis_named_like(part: &'static str) -> impl Iterator<Item = &'static Fact> {
    of_kind(Kind::Api).filter(move |f| f.key.contains(part))
}

/// Whether ERROR records of this plog module are tool noise.
pub fn is_noise_module(module: &str) -> bool {
    of_kind(Kind::NoiseModule).any(|f| f.key == module)
}

/// torch_npu `ERRssEEE`: the sub-module and error-type rows.
pub fn pta_code(ss: &str, eee: &str) -> (Option<&'static Fact>, Option<&'static Fact>) {
    (
        of_kind(Kind::PtaModule).find(|f| f.key == ss),
        of_kind(Kind::PtaType).find(|f| f.key == eee),
    )
}

/// The report lexicon of one kind (`Accuracy`, `Performance`, `Verdict`, `Negation`).
pub fn lexicon(kind: Kind) -> impl Iterator<Item = &'static Fact> {
    of_kind(kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    // A missing module's pip package by its top-level name, exactly.
    #[test]
    fn module_packages() {
        assert!(module_package("dlinfer").is_some_and(|p| p.starts_with("dlinfer-ascend")));
        assert!(module_package("acl").is_some_and(|p| p.starts_with("pyACL")));
        assert_eq!(module_package("torch_npu_ext"), None);
        assert_eq!(module_package("numpy"), None);
    }

    #[test]
    fn a_generic_title_is_the_whole_message() {
        assert!(is_generic_title("The argument is invalid."));
        assert!(is_generic_title(" Inner Error! "));
        assert!(!is_generic_title(
            "The argument is invalid.Reason: rtGetDevMsg execute failed"
        ));
        assert!(!is_generic_title(""));
    }

    #[test]
    fn packages_are_named_in_row_order() {
        assert_eq!(
            package("aclnnFoo not in libopapi.so, or libopapi.so not found"),
            Some("CANN (op-API library)")
        );
        assert_eq!(
            package("module 'torch_npu' has no attribute 'npu'"),
            Some("torch_npu")
        );
        assert_eq!(package("something else"), None);
    }

    #[test]
    fn every_row_parses_and_names_its_source() {
        let (facts, bad) = parse_table(TABLE);
        assert!(bad.is_empty(), "bad rows: {bad:?}");
        assert!(facts.len() > 200, "{} rows", facts.len());
        assert!(facts.iter().all(|f| !f.source.trim().is_empty()));
    }

    #[test]
    fn every_remedy_parses_and_names_its_source() {
        let (rows, bad) = parse_remedies(REMEDIES);
        assert!(bad.is_empty(), "bad remedy rows: {bad:?}");
        assert!(rows.len() >= 20, "{} rows", rows.len());
        // Every key a remedy names is a key of the knowledge table, or a rule that reads an
        // environment fault from a tool's own report.
        for r in &rows {
            if let Some(key) = r.matches.strip_prefix("key:") {
                assert!(
                    facts().iter().any(|f| f.key == key)
                        || crate::causal::collect::ENVIRONMENT_RULES.contains(&key),
                    "remedy for unknown key `{key}`"
                );
            }
        }
        let (_, bad) = parse_remedies("kind:x\tdo\t-\n nope\ta\tb\tc\nkey:k\t\t-\ts\n");
        let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![1, 2, 3]);
    }

    #[test]
    fn malformed_rows_are_reported_with_their_line() {
        let (facts, bad) =
            parse_table("# c\nfamily\tZ\texecution\t-\taclnn\tdoc\nnope\tx\t-\t-\tm\ts\nhint\tx\tsoon\t-\tm\ts\nfamily\tY\n");
        assert_eq!(facts.len(), 1);
        let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5]);
    }

    #[test]
    fn lookups() {
        assert_eq!(
            code_family("EZ9999").and_then(|f| f.phase_or(Phase::Compile)),
            Some(Phase::Execution)
        );
        // An operator check takes its caller's phase.
        assert_eq!(
            code_family("E69999").and_then(|f| f.phase_or(Phase::Execution)),
            Some(Phase::Execution)
        );
        assert_eq!(
            runtime_code(507035).map(|f| f.meaning),
            Some("vector core exception")
        );
        assert_eq!(runtime_code(507999).map(|f| f.key), Some("507*"));
        assert_eq!(runtime_code(107030).map(|f| f.key), Some("107030"));
        assert!(runtime_code(42).is_none());
        assert_eq!(
            hint("The vector core execution is abnormal.").map(|f| f.nature),
            Some(Some(Nature::DeviceFault))
        );
        assert!(is_generic("EZ9999: Inner Error!"));
        assert!(is_generic(
            "Failed to apply for memory. Check the remaining storage"
        ));
        assert!(!is_generic("The aicore execution times out."));
        assert!(
            environment("ImportError: libascendcl.so: cannot open shared object file").is_some()
        );
        assert!(stated_cause("E30006: the OPP package verification failed").is_some());
        // `Parameter verification failed` (a hint) names no package.
        assert!(environment("Parameter verification failed.").is_none());
        assert!(stated_cause("torch 2.1 is not installed").is_none());
        // A shell's `not found`, in dash's, BusyBox's and bash's words; not any `: not found`.
        for shell in [
            "/bin/sh: 1: hccn_tool: not found",
            "sh: npu-smi: not found",
            "run.sh: 3: hccn_tool: not found",
            "sh: line 3: hccn_tool: not found",
            "bash: line 1: ascend-dmi: command not found",
            "zsh: command not found: atc",
        ] {
            assert_eq!(
                stated_cause(shell).map(|f| f.key),
                Some("command not found"),
                "{shell}"
            );
        }
        for other in [
            "refresh: 1: key: not found",
            "/bin/sh: 1: two words: not found",
            "sh: : not found",
            "config: model: not found",
        ] {
            assert!(stated_cause(other).is_none(), "{other}");
        }
        assert!(environment("torch 2.1 is not installed").is_some());
        // A name an installed package lacks: a version mismatch; not a module of the user's own,
        // a namespace folder (its own row) or a circular import.
        let installed = "cannot import name from an installed package";
        for miss in [
            "ImportError: cannot import name 'cached_download' from 'huggingface_hub' (/root/env/lib/python3.10/site-packages/huggingface_hub/__init__.py)",
            "ImportError: cannot import name 'x' from 'y.z' (/usr/lib/python3/dist-packages/y/z.py)",
            "ImportError: cannot import name 'x' from 'y' (C:\\Python\\Lib\\site-packages\\y\\__init__.py)",
            // A library's sub-package from a checkout (wider-world batch 30, MindSpeed).
            "ImportError: cannot import name 'HcclOpModeSetFeature' from 'mindspeed.features_manager' (/MindSpeed-LLM-New/mindspeed/features_manager/__init__.py)",
        ] {
            assert_eq!(environment(miss).map(|f| f.key), Some(installed), "{miss}");
        }
        for other in [
            "ImportError: cannot import name 'f' from 'mymodel' (/home/u/proj/mymodel.py)",
            "ImportError: cannot import name 'a' from partially initialized module 'b' (most likely due to a circular import) (/x/site-packages/b/__init__.py)",
            "ImportError: cannot import name 'a' from 'b' (unknown location)",
            "ImportError: cannot import name 'x' from 'site-packages' (/home/u/proj/site_packages_tool.py)",
        ] {
            assert_ne!(environment(other).map(|f| f.key), Some(installed), "{other}");
        }
        assert_eq!(
            environment("EZ9903: [PID: 1] support for Ascend910 is not implemented").map(|f| f.key),
            Some("support for ascend&is not implemented")
        );
        assert_eq!(
            environment("AclNN_Inner_Error(EZ9999):  Op MoeDistributeDispatchV2 not support soc version ascend910b.").map(|f| f.key),
            Some("not support soc version")
        );
        // Wider-world batch 24: the loader's static TLS, an operator namespace without the op,
        // CUDA called on an NPU machine, the npu device before torch_npu is imported.
        for (line, key) in [
            ("ImportError: /x/lib/libgomp.so.1: cannot allocate memory in static TLS block", "cannot allocate memory in static tls block"),
            ("AttributeError: '_OpNamespace' '_C_ascend' object has no attribute 'npu_sparse_flash_attention'", "'_opnamespace'&object has no attribute"),
            ("AssertionError: Torch not compiled with CUDA enabled", "torch not compiled with cuda enabled"),
            ("RuntimeError: Expected one of cpu, cuda, ipu, xpu, privateuseone device type at start of device string: npu", "device type at start of device string: npu"),
            // A second `set_start_method` (batch 24's GPUStack log, its time cut).
            ("RuntimeError: context has already been set", "context has already been set"),
        ] {
            assert_eq!(environment(line).map(|f| f.key), Some(key), "{line}");
        }
        assert!(environment("AttributeError: 'Linear' object has no attribute 'w'").is_none());
        // A mode of an operator the chip lacks reads the same (its meaning says so).
        assert_eq!(
            environment(
                "QuantBatchMatmul support for Ascend910B is not implemented in a4w4 scenario."
            )
            .map(|f| f.key),
            Some("support for ascend&is not implemented")
        );
        assert_eq!(
            frame("/x/torch/_dynamo/convert_frame.py __call__")
                .and_then(|f| f.phase_or(Phase::Host)),
            Some(Phase::Tracing)
        );
        assert_eq!(
            stated_cause("NPU out of memory. Tried to allocate 2.00 GiB").map(|f| f.nature),
            Some(Some(Nature::Memory))
        );
        assert!(
            stated_cause("RuntimeError: Failed to find function aclmdlRICaptureBegin")
                .is_some_and(|f| f.kind == Kind::Environment)
        );
        // A hint that only says that something failed states no cause.
        assert!(stated_cause("[Error]: A GE error occurs in the system.").is_none());
        assert!(stated_cause("[Error]: The aicore execution times out.").is_some());
        assert_eq!(
            CauseKind::of(Phase::Capture, Some(Nature::Memory)),
            Some(CauseKind::Resource)
        );
        assert_eq!(
            CauseKind::of(Phase::Capture, Some(Nature::Unsupported)),
            Some(CauseKind::GraphCompile)
        );
        assert_eq!(CauseKind::of(Phase::Execution, Some(Nature::Generic)), None);
        assert!(is_noise_module("ATRACE"));
        assert!(!is_noise_module("RUNTIME"));
    }
}
