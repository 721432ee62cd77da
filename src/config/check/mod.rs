//! The validator: adump's `DumpConfigConverter::Convert` rules in adump's order
//! (`dump-data.md` §4.2), reporting every problem instead of the first.
//!
//! Order: JSON parse (EP0004) → `"dump"` is an object → field types (EP0001) → enumeration
//! values (EP0001 empty / EP0002) → constraints: scene rules, `dump_path`, `dump_debug`,
//! `dump_step`, `dump_list` items, `dump_stats` (EP0001/EP0003/EP0005). npgx's own warnings
//! (unknown keys) come last.
//!
//! One `Checker` walks a config; its steps are in files of their own: `types`, `values`,
//! `constraints` (with `path` and `list`), `extras`.

mod constraints;
mod extras;
mod list;
mod path;
mod types;
mod values;

use std::collections::HashSet;

use npgx_parsers::dump_config;
use serde_json::{Map, Value};

use super::cann::{self, Code};
use super::{CheckReport, DumpType, OperatorDump, Problem, Severity, Source};

/// Allowed values per enumerated key (adump `dumpValidOptions`).
pub const DUMP_MODES: &[&str] = &["input", "output", "all"];
pub const DUMP_DATA: &[&str] = &["tensor", "stats"];
pub const SWITCH: &[&str] = &["on", "off"];
pub const DUMP_LEVELS: &[&str] = &["op", "kernel", "all"];
pub const EXCEPTION_SCENES: &[&str] = &[
    "lite_exception",
    "aic_err_brief_dump",
    "aic_err_norm_dump",
    "aic_err_detail_dump",
];
pub const DUMP_SCENES: &[&str] = &[
    "lite_exception",
    "aic_err_brief_dump",
    "aic_err_norm_dump",
    "aic_err_detail_dump",
    "watcher",
];
/// CANN's statistics when `dump_stats` is not given: the first six of [`DUMP_STATS`].
pub fn default_dump_stats() -> Vec<String> {
    DUMP_STATS[..6].iter().map(|s| s.to_string()).collect()
}
pub const KERNEL_DATA: &[&str] = &["all", "printf", "tensor", "assert", "timestamp"];
pub const DUMP_STATS: &[&str] = &[
    "Max",
    "Min",
    "Avg",
    "Nan",
    "Negative Inf",
    "Positive Inf",
    "L2norm",
];

/// Keys adump and GE read in the `"dump"` object (anything else is ignored by CANN).
const KNOWN_KEYS: &[&str] = &[
    "dump_path",
    "dump_mode",
    "dump_op_switch",
    "dump_list",
    "dump_data",
    "dump_stats",
    "dump_level",
    "dump_debug",
    "dump_scene",
    "dump_step",
    "dump_kernel_data",
    "dump_status",
];
const KNOWN_ITEM_KEYS: &[&str] = &[
    "model_name",
    "layer",
    "watcher_nodes",
    "optype_blacklist",
    "opname_blacklist",
    "opname_range",
];

const MAX_DUMP_PATH_LENGTH: usize = 512;
const MAX_STEP_INTERVALS: usize = 100;
const MAX_BLACKLIST: usize = 100;

/// Options of a check.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// Check that a local `dump_path` exists, is a directory and is readable and writable here.
    /// Turn off when the config is validated on another machine than the one that runs.
    pub filesystem: bool,
}

/// Validates a config file's bytes. `file` is the name used in CANN's messages.
pub fn check(bytes: &[u8], file: &str, options: &CheckOptions) -> CheckReport {
    let mut report = CheckReport {
        file: file.to_string(),
        valid: true,
        errors: 0,
        warnings: 0,
        dump_enabled: None,
        dump_type: None,
        operator_dump: None,
        filesystem_checked: false,
        graphs: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
    };
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let root: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(e) => {
            let reason = e.to_string();
            report.problems.push(Problem {
                severity: Severity::Error,
                source: Source::Cann,
                code: Code::EP0004.as_str().into(),
                path: String::new(),
                function: Some("Convert"),
                message: cann::ep0004(&reason),
                fix: format!(
                    "fix the JSON syntax at line {} column {} ({})",
                    e.line(),
                    e.column(),
                    json_error_hint(&e)
                ),
                line: Some(e.line()),
                column: Some(e.column()),
            });
            return report.finish();
        }
    };
    let Some(dump) = root.as_object().and_then(|o| o.get("dump")) else {
        report.notes.push(
            "no \"dump\" key at the top level: CANN accepts the file and dumps nothing".into(),
        );
        report.dump_enabled = Some(false);
        return report.finish();
    };
    let Some(dump) = dump.as_object() else {
        report.problems.push(Problem::cann(
            Code::EP0001,
            "dump",
            "Convert",
            cann::ep0001("dump", file, cann::MUST_BE_OBJECT),
            "make \"dump\" a JSON object: {\"dump\": {\"dump_path\": \"…\", …}}",
        ));
        locate_problems(&mut report.problems, bytes);
        return report.finish();
    };
    if dump.is_empty() {
        report
            .notes
            .push("the \"dump\" object is empty: CANN accepts it and dumps nothing".into());
        report.dump_enabled = Some(false);
        return report.finish();
    }
    let mut c = Checker {
        dump,
        file,
        options,
        bad: HashSet::new(),
        problems: Vec::new(),
        notes: Vec::new(),
        filesystem_checked: false,
    };
    c.field_types();
    c.field_values();
    c.constraints();
    c.unknown_keys();
    report.problems = c.problems;
    report.notes = c.notes;
    report.filesystem_checked = c.filesystem_checked;
    locate_problems(&mut report.problems, bytes);
    let (enabled, kind) = need_dump(dump);
    report.dump_enabled = Some(enabled);
    report.dump_type = enabled.then_some(kind);
    report.operator_dump = (enabled && kind == DumpType::Operator).then(|| operator_dump(dump));
    if !enabled {
        report.notes.push(
            "nothing enables a dump (empty or missing dump_list, dump_op_switch off, dump_debug off, no dump_scene): CANN accepts the file and dumps nothing".into(),
        );
    }
    report.finish()
}

/// Fills in the line and column of problems that have none, from their JSON paths.
pub fn locate_problems(problems: &mut [Problem], bytes: &[u8]) {
    if problems.iter().all(|p| p.line.is_some()) {
        return;
    }
    let map = dump_config::locate(bytes);
    for p in problems.iter_mut().filter(|p| p.line.is_none()) {
        if let Some((line, column)) = dump_config::position(&map, &p.path) {
            p.line = Some(line);
            p.column = Some(column);
        }
    }
}

impl Problem {
    fn cann(code: Code, path: &str, function: &'static str, message: String, fix: &str) -> Self {
        Problem {
            severity: Severity::Error,
            source: Source::Cann,
            code: code.as_str().into(),
            path: path.into(),
            function: Some(function),
            message,
            fix: fix.into(),
            line: None,
            column: None,
        }
    }
}

fn json_error_hint(e: &serde_json::Error) -> &'static str {
    match e.classify() {
        serde_json::error::Category::Eof => "the file ends early: a bracket or quote is not closed",
        serde_json::error::Category::Syntax => {
            "look for a missing or extra comma, a missing quote, or a comment (JSON has none)"
        }
        serde_json::error::Category::Data | serde_json::error::Category::Io => "invalid data",
    }
}

/// A key's value as the constraint rules see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Val<'a> {
    Absent,
    /// Present but already reported (wrong type or value): rules depending on it are skipped.
    Bad,
    Str(&'a str),
}

struct Checker<'a> {
    dump: &'a Map<String, Value>,
    file: &'a str,
    options: &'a CheckOptions,
    /// JSON paths already reported as having a wrong type or value.
    bad: HashSet<String>,
    problems: Vec<Problem>,
    notes: Vec<String>,
    filesystem_checked: bool,
}

fn index(base: &str, i: usize) -> String {
    format!("{base}[{i}]")
}

fn member(base: &str, key: &str) -> String {
    if base.is_empty() {
        key.to_string()
    } else {
        format!("{base}.{key}")
    }
}

impl<'a> Checker<'a> {
    fn report(
        &mut self,
        code: Code,
        path: &str,
        function: &'static str,
        message: String,
        fix: String,
    ) {
        self.problems
            .push(Problem::cann(code, path, function, message, &fix));
    }

    fn ep0001(&mut self, path: &str, function: &'static str, reason: &str, fix: String) {
        let message = cann::ep0001(path, self.file, reason);
        self.report(Code::EP0001, path, function, message, fix);
        self.bad.insert(path.to_string());
    }

    fn ep0003(
        &mut self,
        value: &str,
        path: &str,
        function: &'static str,
        reason: &str,
        fix: String,
    ) {
        let message = cann::ep0003(value, path, self.file, reason);
        self.report(Code::EP0003, path, function, message, fix);
    }

    fn ep0005(&mut self, path: &str, function: &'static str, message: String, fix: String) {
        self.report(Code::EP0005, path, function, message, fix);
    }

    fn val(&self, key: &str) -> Val<'a> {
        match self.dump.get(key) {
            None => Val::Absent,
            Some(_) if self.bad.contains(key) => Val::Bad,
            Some(Value::String(s)) => Val::Str(s),
            Some(_) => Val::Bad,
        }
    }

    /// adump `ConflictWith`: the key is present and equals `value`.
    fn is(&self, key: &str, value: &str) -> bool {
        self.val(key) == Val::Str(value)
    }
}

/// adump `NeedDump` and `ConvertDumpType`, for a config that passed.
/// What an `OPERATOR` dump of this (valid) config writes: the watcher scene, statistics or
/// tensors, with `dump_mode`'s default `output` and `dump_stats`' default first six items.
fn operator_dump(dump: &Map<String, Value>) -> OperatorDump {
    let s = |k: &str| dump.get(k).and_then(Value::as_str);
    if s("dump_scene") == Some("watcher") {
        return OperatorDump::Watcher;
    }
    let mode = s("dump_mode").unwrap_or("output").to_string();
    if s("dump_data") != Some("stats") {
        return OperatorDump::Tensors { mode };
    }
    let stats = match dump.get("dump_stats").and_then(Value::as_array) {
        Some(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        None => default_dump_stats(),
    };
    OperatorDump::Stats { mode, stats }
}

fn need_dump(dump: &Map<String, Value>) -> (bool, DumpType) {
    let s = |k: &str| dump.get(k).and_then(Value::as_str);
    let list = dump
        .get("dump_list")
        .and_then(Value::as_array)
        .is_some_and(|l| !l.is_empty());
    let scene = s("dump_scene").filter(|x| !x.is_empty());
    let enabled = list
        || s("dump_op_switch") == Some("on")
        || s("dump_debug") == Some("on")
        || scene.is_some();
    let kind = match scene {
        Some("aic_err_brief_dump" | "lite_exception") => DumpType::ArgsException,
        Some("aic_err_norm_dump") => DumpType::Exception,
        Some("aic_err_detail_dump") => DumpType::AicErrDetailDump,
        _ if s("dump_debug") == Some("on") => DumpType::OpOverflow,
        _ => DumpType::Operator,
    };
    (enabled, kind)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn leaf(path: &str) -> &str {
    path.rsplit('.').next().unwrap_or(path)
}

fn example(key: &str) -> &'static str {
    match key {
        "dump_path" => "/home/dump",
        "dump_mode" => "output",
        "dump_op_switch" | "dump_debug" => "off",
        "dump_level" => "all",
        "dump_scene" => "watcher",
        "dump_data" => "tensor",
        "dump_kernel_data" => "all",
        "dump_step" => "0|5-10",
        "dump_stats" => "Max",
        "model_name" => "my_model",
        "begin" | "end" | "name" | "layer" | "watcher_nodes" => "OpName",
        "pos" => "input0",
        _ => "…",
    }
}

/// The allowed value closest to `value` (case-insensitive edit distance ≤ 2).
fn closest<'s>(value: &str, allowed: &[&'s str]) -> Option<&'s str> {
    let v = value.to_ascii_lowercase();
    allowed
        .iter()
        .map(|a| (edit_distance(&v, &a.to_ascii_lowercase()), *a))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

/// Levenshtein distance over chars.
pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggestions() {
        assert_eq!(closest("outptu", DUMP_MODES), Some("output"));
        assert_eq!(closest("dump_steps", KNOWN_KEYS), Some("dump_step"));
        assert_eq!(closest("zzzzzz", DUMP_MODES), None);
    }
}
