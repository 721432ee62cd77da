//! The validator: adump's `DumpConfigConverter::Convert` rules in adump's order
//! (`dump-data.md` §4.2), reporting every problem instead of the first.
//!
//! Order: JSON parse (EP0004) → `"dump"` is an object → field types (EP0001) → enumeration
//! values (EP0001 empty / EP0002) → constraints: scene rules, `dump_path`, `dump_debug`,
//! `dump_step`, `dump_list` items, `dump_stats` (EP0001/EP0003/EP0005). npgx's own warnings
//! (unknown keys) come last.

use std::collections::HashSet;
use std::path::Path;

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
    let map = super::locate::locate(bytes);
    for p in problems.iter_mut().filter(|p| p.line.is_none()) {
        if let Some((line, column)) = super::locate::position(&map, &p.path) {
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

    // ---- 1. types -------------------------------------------------------------------------

    fn field_types(&mut self) {
        for key in [
            "dump_path",
            "dump_mode",
            "dump_op_switch",
            "dump_level",
            "dump_scene",
            "dump_data",
            "dump_debug",
            "dump_kernel_data",
            "dump_step",
        ] {
            self.string_field(self.dump, key, "");
        }
        if let Some(stats) = self.dump.get("dump_stats") {
            self.array_of(stats, "dump_stats", true);
        }
        if let Some(list) = self.dump.get("dump_list") {
            let Some(items) = list.as_array() else {
                self.ep0001(
                    "dump_list",
                    "CheckDumpListFieldTypes",
                    cann::MUST_BE_ARRAY,
                    "make dump_list an array of objects: \"dump_list\": [{\"model_name\": \"…\"}]"
                        .into(),
                );
                return;
            };
            for (i, item) in items.iter().enumerate() {
                let path = index("dump_list", i);
                let Some(obj) = item.as_object() else {
                    self.ep0001(
                        &path,
                        "CheckDumpListFieldTypes",
                        cann::MUST_BE_OBJECT,
                        format!("make {path} an object such as {{\"model_name\": \"…\", \"layer\": [\"…\"]}}"),
                    );
                    continue;
                };
                self.string_field(obj, "model_name", &path);
                for key in ["layer", "watcher_nodes"] {
                    if let Some(v) = obj.get(key) {
                        self.array_of(v, &member(&path, key), true);
                    }
                }
                for key in ["optype_blacklist", "opname_blacklist"] {
                    if let Some(v) = obj.get(key) {
                        let p = member(&path, key);
                        if self.array_of(v, &p, false) {
                            for (j, entry) in v.as_array().into_iter().flatten().enumerate() {
                                let ep = index(&p, j);
                                if let Some(e) = entry.as_object() {
                                    self.string_field(e, "name", &ep);
                                    if let Some(pos) = e.get("pos") {
                                        self.array_of(pos, &member(&ep, "pos"), true);
                                    }
                                }
                            }
                        }
                    }
                }
                if let Some(v) = obj.get("opname_range") {
                    let p = member(&path, "opname_range");
                    if self.array_of(v, &p, false) {
                        for (j, entry) in v.as_array().into_iter().flatten().enumerate() {
                            if let Some(e) = entry.as_object() {
                                let ep = index(&p, j);
                                self.string_field(e, "begin", &ep);
                                self.string_field(e, "end", &ep);
                            }
                        }
                    }
                }
            }
        }
    }

    /// adump `CheckStringField`: present ⇒ string.
    fn string_field(&mut self, obj: &Map<String, Value>, key: &str, base: &str) {
        match obj.get(key) {
            None | Some(Value::String(_)) => {}
            Some(other) => {
                let path = member(base, key);
                let fix = format!(
                    "write {path} as a JSON string, e.g. \"{key}\": \"{}\" (it is {})",
                    example(key),
                    json_kind(other)
                );
                self.ep0001(&path, "CheckFieldValue", cann::MUST_BE_STRING, fix);
            }
        }
    }

    /// adump `CheckArrayOfType`: an array whose members are all strings (or all objects).
    /// Returns whether the container itself is an array.
    fn array_of(&mut self, v: &Value, path: &str, strings: bool) -> bool {
        let Some(items) = v.as_array() else {
            let fix = if strings {
                format!(
                    "make {path} an array of strings, e.g. [\"{}\"] (it is {})",
                    example(leaf(path)),
                    json_kind(v)
                )
            } else {
                format!("make {path} an array of objects (it is {})", json_kind(v))
            };
            self.ep0001(path, "CheckArrayOfType", cann::MUST_BE_ARRAY, fix);
            return false;
        };
        for (i, item) in items.iter().enumerate() {
            let ok = if strings {
                item.is_string()
            } else {
                item.is_object()
            };
            if !ok {
                let p = index(path, i);
                let (reason, fix) = if strings {
                    (
                        cann::MEMBER_MUST_BE_STRING,
                        format!(
                            "quote {p}: every member of {path} must be a string (it is {})",
                            json_kind(item)
                        ),
                    )
                } else {
                    (
                        cann::MEMBER_MUST_BE_OBJECT,
                        format!("make {p} an object (it is {})", json_kind(item)),
                    )
                };
                self.ep0001(&p, "CheckArrayOfType", reason, fix);
                // The container is unusable for the later rules too.
                self.bad.insert(path.to_string());
            }
        }
        true
    }

    // ---- 2. values ------------------------------------------------------------------------

    fn field_values(&mut self) {
        for (key, allowed) in [
            ("dump_mode", DUMP_MODES),
            ("dump_data", DUMP_DATA),
            ("dump_op_switch", SWITCH),
            ("dump_level", DUMP_LEVELS),
            ("dump_debug", SWITCH),
            ("dump_scene", DUMP_SCENES),
        ] {
            if let Val::Str(v) = self.val(key) {
                self.enum_value(key, key, v, allowed);
            }
        }
        if let Val::Str(v) = self.val("dump_kernel_data") {
            // adump splits on ',' and checks each item, reporting under the key itself.
            for item in v.split(',') {
                self.enum_value("dump_kernel_data", "dump_kernel_data", item, KERNEL_DATA);
            }
        }
        if !self.bad.contains("dump_stats") {
            if let Some(Value::Array(stats)) = self.dump.get("dump_stats") {
                for (i, s) in stats.iter().enumerate() {
                    if let Some(s) = s.as_str() {
                        let path = index("dump_stats", i);
                        if !self.enum_value("dump_stats", &path, s, DUMP_STATS) {
                            self.bad.insert("dump_stats".into());
                        }
                    }
                }
            }
        }
    }

    /// adump `IsValueValid`: empty ⇒ EP0001, not allowed ⇒ EP0002.
    fn enum_value(&mut self, key: &str, path: &str, value: &str, allowed: &[&str]) -> bool {
        if value.is_empty() {
            let fix = format!("set {path} to one of {} or remove it", allowed.join(", "));
            self.ep0001(path, "CheckItemValue", cann::VALUE_EMPTY, fix);
            self.bad.insert(key.to_string());
            return false;
        }
        if allowed.contains(&value) {
            return true;
        }
        let message = cann::ep0002(value, path, self.file, allowed);
        let fix = match closest(value, allowed) {
            Some(s) => format!(
                "replace \"{value}\" with \"{s}\" (allowed: {})",
                allowed.join(", ")
            ),
            None => format!("use one of: {}", allowed.join(", ")),
        };
        self.report(Code::EP0002, path, "CheckItemValue", message, fix);
        self.bad.insert(key.to_string());
        self.bad.insert(path.to_string());
        false
    }

    // ---- 3. constraints -------------------------------------------------------------------

    fn constraints(&mut self) {
        let scene = self.val("dump_scene");
        match scene {
            Val::Bad => {
                self.notes.push(
                    "dump_scene is invalid, so the rules that depend on it (scene conflicts, dump_path, dump_debug, dump_step, dump_list, dump_stats) were not checked".into(),
                );
                return;
            }
            Val::Str("watcher") => self.watcher_scene(),
            Val::Str(exception) => {
                self.exception_scene(exception);
                self.notes.push(format!(
                    "dump_scene is {exception}: like CANN, npgx skips the dump_path, dump_debug, dump_step, dump_list and dump_stats checks (dump_path is optional; ASCEND_DUMP_PATH, then ASCEND_WORK_PATH, override it)"
                ));
                return;
            }
            Val::Absent => {}
        }
        self.dump_path();
        match self.val("dump_debug") {
            Val::Str("on") => {
                self.dump_debug_on();
                self.notes.push(
                    "dump_debug is on: like CANN, npgx skips the dump_step, dump_list and dump_stats checks (CANN forces dump_mode all for overflow dumps)".into(),
                );
                return;
            }
            Val::Bad => {
                self.notes.push(
                    "dump_debug is invalid, so the dump_step, dump_list and dump_stats checks (which CANN skips when dump_debug is on) were not run".into(),
                );
                return;
            }
            _ => {}
        }
        self.dump_step();
        self.dump_list();
        self.dump_stats();
    }

    fn watcher_scene(&mut self) {
        const F: &str = "CheckWatcherDumpScene";
        for key in ["dump_debug", "dump_op_switch"] {
            if self.is(key, "on") {
                let m = cann::ep0005_value_conflict(key, "on", "dump_scene", "watcher");
                self.ep0005(key, F, m, format!("remove {key} (or set it to off): the watcher scene cannot be combined with it"));
            }
        }
        match self.val("dump_mode") {
            Val::Str(mode) if mode != "output" => {
                let m = cann::ep0005_value_conflict("dump_mode", mode, "dump_scene", "watcher");
                self.ep0005(
                    "dump_mode",
                    F,
                    m,
                    "set dump_mode to \"output\" (or remove it: output is the default)".into(),
                );
            }
            _ => {}
        }
        for key in [
            "dump_level",
            "dump_data",
            "dump_kernel_data",
            "dump_step",
            "dump_stats",
        ] {
            if self.dump.contains_key(key) {
                let m = cann::ep0005_cannot_set_when(key, "dump_scene", "watcher");
                self.ep0005(
                    key,
                    F,
                    m,
                    format!("remove {key}: the watcher scene does not take it"),
                );
            }
        }
    }

    fn exception_scene(&mut self, scene: &str) {
        for key in [
            "dump_mode",
            "dump_level",
            "dump_data",
            "dump_debug",
            "dump_op_switch",
            "dump_kernel_data",
            "dump_step",
            "dump_stats",
            "dump_list",
        ] {
            if self.dump.contains_key(key) {
                let m = cann::ep0005_cannot_set_when(key, "dump_scene", scene);
                self.ep0005(
                    key,
                    "CheckExceptionDumpScene",
                    m,
                    format!("remove {key}: exception scenes take only dump_scene and, optionally, dump_path"),
                );
            }
        }
    }

    fn dump_path(&mut self) {
        const F: &str = "CheckDumpPath";
        let path = match self.val("dump_path") {
            Val::Bad => return,
            Val::Absent => {
                self.ep0001(
                    "dump_path",
                    F,
                    cann::NOT_FOUND,
                    "add \"dump_path\": \"/absolute/existing/dir\" to the \"dump\" object".into(),
                );
                return;
            }
            Val::Str("") => {
                self.ep0001(
                    "dump_path",
                    F,
                    cann::VALUE_EMPTY,
                    "set dump_path to an existing directory".into(),
                );
                return;
            }
            Val::Str(p) => p,
        };
        if path.len() > MAX_DUMP_PATH_LENGTH {
            self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_TOO_LONG,
                format!(
                    "shorten dump_path to at most 512 characters (it has {})",
                    path.len()
                ),
            );
            return;
        }
        let remote = match path.find(':') {
            None => None,
            Some(colon) if colon + 1 == path.len() => {
                // adump reports this, then still treats the value as a local path.
                self.ep0003(
                    path,
                    "dump_path",
                    "CheckIpAddress",
                    cann::PATH_INVALID,
                    "write a remote dump path as IPv4:/path (nothing follows the colon), or drop the colon".into(),
                );
                None
            }
            Some(colon) => is_ipv4(&path[..colon]).then(|| &path[colon + 1..]),
        };
        if let Some(after) = remote {
            if !after.bytes().all(valid_dir_char) {
                self.ep0003(
                    after,
                    "dump_path",
                    F,
                    cann::INVALID_CHARS,
                    "use only letters, digits and -=[];\\,./!@#$%^&*()_+{}:? in the path after the IP address".into(),
                );
            }
            self.notes.push(format!(
                "dump_path is remote ({path}): only its syntax was checked"
            ));
            return;
        }
        if !self.options.filesystem {
            self.notes.push(
                "filesystem checks skipped (--no-fs-check): dump_path was not checked for existence, type or permissions; check again on the machine that will run the model".into(),
            );
            return;
        }
        self.filesystem_checked = true;
        if Path::new(path).is_relative() {
            self.notes.push(format!(
                "dump_path {path} is relative: it was checked against the current directory; CANN resolves it against the working directory of the process that runs the model"
            ));
        }
        match std::fs::canonicalize(path) {
            Err(_) => self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_NOT_EXIST,
                format!("create it first (mkdir -p {path}): CANN does not create dump_path"),
            ),
            Ok(real) if !real.is_dir() => self.ep0003(
                path,
                "dump_path",
                F,
                cann::PATH_NOT_DIRECTORY,
                "point dump_path at a directory, not a file".into(),
            ),
            Ok(real) => {
                if !readable_and_writable(&real) {
                    self.ep0003(
                        path,
                        "dump_path",
                        F,
                        cann::PATH_NO_PERMISSION,
                        format!("give the user that runs the model read and write access (chmod u+rw {path}) or choose another directory"),
                    );
                }
            }
        }
    }

    fn dump_debug_on(&mut self) {
        const F: &str = "CheckDumpDebug";
        if self.is("dump_op_switch", "on") {
            let m = cann::ep0005_value_conflict("dump_op_switch", "on", "dump_debug", "on");
            self.ep0005(
                "dump_op_switch",
                F,
                m,
                "remove dump_op_switch (overflow detection covers single ops too) or turn dump_debug off".into(),
            );
        }
        if self.dump.contains_key("dump_list") {
            let m = cann::ep0005_cannot_set_when("dump_list", "dump_debug", "on");
            self.ep0005(
                "dump_list",
                F,
                m,
                "remove the dump_list key entirely (even an empty list is rejected) for an overflow dump".into(),
            );
        }
    }

    fn dump_step(&mut self) {
        const F: &str = "CheckDumpStep";
        let Val::Str(step) = self.val("dump_step") else {
            return;
        };
        if step.is_empty() {
            return;
        }
        // std::getline splitting plus adump's extra empty item after a trailing delimiter is
        // exactly Rust's `split`.
        let groups: Vec<&str> = step.split('|').collect();
        if groups.len() > MAX_STEP_INTERVALS {
            self.ep0003(
                step,
                "dump_step",
                F,
                cann::STEP_TOO_MANY,
                format!("use at most 100 '|'-separated items (there are {}); merge consecutive steps into ranges like 5-10", groups.len()),
            );
            return;
        }
        for (i, group) in groups.iter().enumerate() {
            let path = index("dump_step", i);
            let parts: Vec<&str> = group.split('-').collect();
            if parts.len() > 2 {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_INVALID_FORMAT,
                    format!("write item {i} (\"{group}\") as one step N or one range A-B"),
                );
                continue;
            }
            if !parts
                .iter()
                .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
            {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_NOT_DIGIT,
                    format!("write item {i} (\"{group}\") with digits only, e.g. 3 or 5-10 (no spaces, no empty items)"),
                );
                continue;
            }
            // strtol saturates on overflow.
            let num = |s: &str| s.parse::<i64>().unwrap_or(i64::MAX);
            if num(parts[0]) > num(parts[parts.len() - 1]) {
                self.ep0003(
                    group,
                    &path,
                    F,
                    cann::STEP_INVALID_RANGE,
                    format!("swap the ends: {}-{}", parts[1], parts[0]),
                );
            }
        }
    }

    fn dump_list(&mut self) {
        const F: &str = "CheckDumpList";
        if self.bad.contains("dump_list") {
            return;
        }
        let Some(Value::Array(items)) = self.dump.get("dump_list") else {
            return;
        };
        if items.is_empty() {
            return;
        }
        let switch_off = match self.val("dump_op_switch") {
            Val::Absent | Val::Str("off") => Some(true),
            Val::Str(_) => Some(false),
            Val::Bad => None,
        };
        let scene_watcher = self.is("dump_scene", "watcher");
        let level = match self.val("dump_level") {
            Val::Absent => Some("all"),
            Val::Str(l) => Some(l),
            Val::Bad => None,
        };
        if switch_off.is_none() {
            self.notes.push("dump_op_switch is invalid: the model_name / layer emptiness rule (applied when it is off) was not checked".into());
        }
        if level.is_none() {
            self.notes.push("dump_level is invalid: the blacklist and opname_range rules (which need dump_level op) were not checked against it".into());
        }
        for (i, item) in items.iter().enumerate() {
            let base = index("dump_list", i);
            let Some(obj) = item.as_object() else {
                continue;
            };
            let str_of = |k: &str| obj.get(k).and_then(Value::as_str);
            let list_len = |k: &str| obj.get(k).and_then(Value::as_array).map(Vec::len);
            let model_name_path = member(&base, "model_name");
            let model_name_ok = !self.bad.contains(&model_name_path);
            if switch_off == Some(true) {
                if model_name_ok && str_of("model_name") == Some("") {
                    self.ep0001(&model_name_path, F, cann::VALUE_EMPTY, format!("set {model_name_path} to the model (graph) name or remove the key to dump every model"));
                }
                let p = member(&base, "layer");
                if !self.bad.contains(&p) && list_len("layer") == Some(0) {
                    self.ep0001(
                        &p,
                        F,
                        cann::VALUE_EMPTY,
                        format!("list op names in {p} or remove the key to dump every op"),
                    );
                }
            }
            let wp = member(&base, "watcher_nodes");
            if !self.bad.contains(&wp) {
                let watcher_nodes = list_len("watcher_nodes").unwrap_or(0);
                if scene_watcher {
                    if watcher_nodes == 0 {
                        self.ep0001(&wp, F, cann::VALUE_EMPTY, format!("list in {wp} the op(s) whose output gets overwritten (the victims)"));
                    }
                    if model_name_ok && str_of("model_name").is_some_and(|s| !s.is_empty()) {
                        let m =
                            cann::ep0005_cannot_set_when(&model_name_path, "dump_scene", "watcher");
                        self.ep0005(&model_name_path, F, m, format!("remove {model_name_path}: watcher items take only layer and watcher_nodes"));
                    }
                } else if watcher_nodes > 0 {
                    let m = cann::ep0005_cannot_set_unless(&wp, "dump_scene", "watcher");
                    self.ep0005(&wp, F, m, format!("add \"dump_scene\": \"watcher\" (with dump_mode output) or remove {wp}"));
                }
            }
            for key in ["optype_blacklist", "opname_blacklist"] {
                let p = member(&base, key);
                if self.bad.contains(&p) {
                    continue;
                }
                let Some(entries) = obj.get(key).and_then(Value::as_array) else {
                    continue;
                };
                if entries.len() > MAX_BLACKLIST {
                    self.ep0003(
                        &entries.len().to_string(),
                        &p,
                        F,
                        cann::BLACKLIST_TOO_LONG,
                        format!("keep at most 100 entries in {p} (it has {})", entries.len()),
                    );
                }
                if entries.is_empty() {
                    continue;
                }
                if level.is_some_and(|l| l != "op") {
                    let m = cann::ep0005_cannot_set_unless(&p, "dump_level", "op");
                    self.ep0005(
                        &p,
                        F,
                        m,
                        format!("set \"dump_level\": \"op\" or remove {p}"),
                    );
                }
                for (j, entry) in entries.iter().enumerate() {
                    let Some(pos) = entry.get("pos").and_then(Value::as_array) else {
                        continue;
                    };
                    for (k, v) in pos.iter().enumerate() {
                        let Some(v) = v.as_str().filter(|v| !v.is_empty()) else {
                            continue;
                        };
                        let pp = index(&member(&index(&p, j), "pos"), k);
                        self.blacklist_pos(v, &pp);
                    }
                }
            }
            let rp = member(&base, "opname_range");
            if !self.bad.contains(&rp) {
                if let Some(ranges) = obj
                    .get("opname_range")
                    .and_then(Value::as_array)
                    .filter(|r| !r.is_empty())
                {
                    if level.is_some_and(|l| l != "op") {
                        let m = cann::ep0005_cannot_set_unless(&rp, "dump_level", "op");
                        self.ep0005(
                            &rp,
                            F,
                            m,
                            format!("set \"dump_level\": \"op\" or remove {rp}"),
                        );
                    }
                    if model_name_ok {
                        match str_of("model_name") {
                            None => self.ep0001(
                                &model_name_path,
                                F,
                                cann::NOT_FOUND,
                                format!("add {model_name_path}: opname_range needs the model name"),
                            ),
                            Some("") => self.ep0001(
                                &model_name_path,
                                F,
                                cann::VALUE_EMPTY,
                                format!("set {model_name_path}: opname_range needs the model name"),
                            ),
                            Some(_) => {}
                        }
                    }
                    for (j, r) in ranges.iter().enumerate() {
                        let ip = index(&rp, j);
                        let typed_wrong = ["begin", "end"]
                            .iter()
                            .any(|k| self.bad.contains(&member(&ip, k)));
                        let Some(r) = r.as_object().filter(|_| !typed_wrong) else {
                            continue;
                        };
                        let b = r.get("begin").and_then(Value::as_str).unwrap_or("");
                        let e = r.get("end").and_then(Value::as_str).unwrap_or("");
                        if b.is_empty() || e.is_empty() {
                            self.ep0003(
                                &format!("begin={b}, end={e}"),
                                &ip,
                                F,
                                cann::RANGE_INCOMPLETE,
                                format!("give {ip} both \"begin\" and \"end\" op names"),
                            );
                        }
                    }
                }
            }
        }
    }

    /// adump checks the `input` prefix, then the `output` prefix; a known prefix with a
    /// non-digit index is reported, and then — as both prefix checks failed — the prefix error
    /// is reported as well. npgx reports both lines, as CANN logs them.
    fn blacklist_pos(&mut self, value: &str, path: &str) {
        const F: &str = "CheckDumpList";
        let mut known_prefix = false;
        for prefix in ["input", "output"] {
            if let Some(idx) = value.strip_prefix(prefix).filter(|i| !i.is_empty()) {
                if idx.bytes().all(|b| b.is_ascii_digit()) {
                    return;
                }
                known_prefix = true;
                self.ep0003(
                    value,
                    path,
                    F,
                    cann::POS_INDEX_NOT_DIGIT,
                    format!("write {path} as {prefix}<N> with a decimal index, e.g. {prefix}0"),
                );
            }
        }
        let fix = if known_prefix {
            format!("(reported by CANN together with the line above) write {path} as input<N> or output<N>")
        } else {
            format!("write {path} as input<N> or output<N>, e.g. input0")
        };
        self.ep0003(value, path, F, cann::POS_INVALID_PREFIX, fix);
    }

    fn dump_stats(&mut self) {
        const F: &str = "CheckDumpStats";
        if self.bad.contains("dump_stats") {
            return;
        }
        let Some(Value::Array(stats)) = self.dump.get("dump_stats") else {
            return;
        };
        if stats.is_empty() {
            self.ep0001(
                "dump_stats",
                F,
                cann::VALUE_EMPTY,
                format!("list the statistics to dump, e.g. [\"{}\"], or remove dump_stats (the default is the first six)", DUMP_STATS[..6].join("\", \"")),
            );
            return;
        }
        match self.val("dump_data") {
            Val::Absent | Val::Str("tensor") => {
                let m = cann::ep0005_cannot_set_when("dump_stats", "dump_data", "tensor");
                let fix = if self.dump.contains_key("dump_data") {
                    "set \"dump_data\": \"stats\" (dump_stats only applies to statistics dumps) or remove dump_stats"
                } else {
                    "add \"dump_data\": \"stats\" (the default is tensor) or remove dump_stats"
                };
                self.ep0005("dump_stats", F, m, fix.into());
            }
            _ => {}
        }
    }

    // ---- npgx extras -----------------------------------------------------------------------

    fn unknown_keys(&mut self) {
        let mut found = Vec::new();
        for key in self.dump.keys() {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                found.push((key.clone(), closest(key, KNOWN_KEYS)));
            }
        }
        // Keys of an object in the dump_list tree that CANN does not read.
        let mut unknown_in = |obj: &Value, base: &str, known: &[&'static str]| {
            for key in obj.as_object().into_iter().flat_map(Map::keys) {
                if !known.contains(&key.as_str()) {
                    found.push((member(base, key), closest(key, known)));
                }
            }
        };
        if let Some(Value::Array(items)) = self.dump.get("dump_list") {
            for (i, item) in items.iter().enumerate() {
                let base = index("dump_list", i);
                unknown_in(item, &base, KNOWN_ITEM_KEYS);
                for (key, known) in [
                    ("optype_blacklist", &["name", "pos"][..]),
                    ("opname_blacklist", &["name", "pos"][..]),
                    ("opname_range", &["begin", "end"][..]),
                ] {
                    let p = member(&base, key);
                    for (j, entry) in item
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .enumerate()
                    {
                        unknown_in(entry, &index(&p, j), known);
                    }
                }
            }
        }
        for (path, suggestion) in found {
            let fix = match suggestion {
                Some(s) => format!("did you mean \"{s}\"? rename the key"),
                None => "remove it or check the spelling against the acl.json documentation".into(),
            };
            self.problems.push(Problem {
                severity: Severity::Warning,
                source: Source::Npgx,
                code: "unknown-key".into(),
                message: format!("{path} is not a dump configuration key; CANN ignores it"),
                path,
                function: None,
                fix,
                line: None,
                column: None,
            });
        }
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

/// adump `CheckIpAddress`: four dot-separated parts, each read like `std::stoi` (optional
/// leading space and sign, then digits; trailing text ignored) within 0..=255.
fn is_ipv4(s: &str) -> bool {
    let parts: Vec<&str> = s.split('.').collect();
    parts.len() == 4
        && parts.iter().all(|p| {
            let t = p.trim_start();
            let (neg, body) = match t.as_bytes().first() {
                Some(b'-') => (true, &t[1..]),
                Some(b'+') => (false, &t[1..]),
                _ => (false, t),
            };
            let digits: String = body.chars().take_while(char::is_ascii_digit).collect();
            match digits.parse::<i64>() {
                Ok(v) => {
                    let v = if neg { -v } else { v };
                    (0..=255).contains(&v)
                }
                Err(_) => false,
            }
        })
}

/// adump `FileUtils::IsValidDirChar`.
fn valid_dir_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"-=[];\\,./!@#$%^&*()_+{}:?".contains(&c)
}

/// `access(path, R_OK | W_OK)` — asks the kernel, so ACLs, read-only mounts and root are all
/// handled as CANN sees them. Nothing is created or modified.
fn readable_and_writable(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `c` is a valid NUL-terminated string that outlives the call; access() only reads it.
    unsafe { libc::access(c.as_ptr(), libc::R_OK | libc::W_OK) == 0 }
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
    fn ipv4_like_stoi() {
        assert!(is_ipv4("127.0.0.1"));
        assert!(!is_ipv4("256.1.1.1"));
        assert!(!is_ipv4("127.0.0.1.1"));
        assert!(!is_ipv4("a.b.c.d"));
        assert!(is_ipv4("1.2.3.4x"));
    }

    #[test]
    fn suggestions() {
        assert_eq!(closest("outptu", DUMP_MODES), Some("output"));
        assert_eq!(closest("dump_steps", KNOWN_KEYS), Some("dump_step"));
        assert_eq!(closest("zzzzzz", DUMP_MODES), None);
    }
}
