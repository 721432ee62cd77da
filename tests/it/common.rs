//! Helpers shared by the integration tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/samples/<rel>` beside the repository.
pub fn sample(rel: &str) -> PathBuf {
    let p = repo().join("../shared/samples").join(rel);
    assert!(p.exists(), "missing shared sample {}", p.display());
    p
}

/// `target/fixtures/<rel>`, written by `scripts/test.sh` through the Python fixture writers.
pub fn fixture(rel: &str) -> PathBuf {
    let p = repo().join("target/fixtures").join(rel);
    assert!(
        p.exists(),
        "missing fixture {} — run scripts/test.sh, which generates the fixtures and runs the \
         tests that need them (#[ignore]d in a bare `cargo test`)",
        p.display()
    );
    p
}

/// Runs the npgx binary with `args` (and keeps the JSON documents it wrote: [`keep_documents`]).
pub fn npgx<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let out = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(&args)
        .output()
        .expect("the npgx binary runs");
    keep_documents(&args, &out.stdout);
    out
}

/// Where [`keep_documents`] puts every npgx JSON document the tests see; `scripts/test.sh`
/// empties it before the tests and validates it after them with `scripts/validate_json.py`
/// against `schemas/`.
pub fn json_corpus() -> PathBuf {
    repo().join("target/json-corpus")
}

/// Copies every npgx JSON document (an object whose `schema` starts with `npgx.`) that a run of
/// npgx with `args` wrote into [`json_corpus`]: its stdout, and the `.json` files under the path
/// given to `-o`, `--output` or `--out` (a file, or a directory searched four levels deep). Each
/// is named by its schema and a hash of its bytes, so the same document kept twice is one file
/// and parallel tests never write the same name with different bytes.
pub fn keep_documents(args: &[std::ffi::OsString], stdout: &[u8]) {
    keep_document(stdout);
    for pair in args.windows(2) {
        if !["-o", "--output", "--out"]
            .iter()
            .any(|flag| pair[0] == std::ffi::OsStr::new(flag))
        {
            continue;
        }
        for entry in walkdir::WalkDir::new(&pair[1])
            .max_depth(4)
            .into_iter()
            .filter_map(Result::ok)
        {
            let path = entry.path();
            if entry.file_type().is_file() && path.extension().is_some_and(|e| e == "json") {
                if let Ok(bytes) = std::fs::read(path) {
                    keep_document(&bytes);
                }
            }
        }
    }
}

fn keep_document(bytes: &[u8]) {
    use std::hash::{Hash as _, Hasher as _};
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return;
    }
    let Ok(serde_json::Value::Object(doc)) = serde_json::from_slice(bytes) else {
        return;
    };
    let Some(schema) = doc
        .get("schema")
        .and_then(|s| s.as_str())
        .filter(|s| s.starts_with("npgx."))
    else {
        return;
    };
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut hasher);
    let dir = json_corpus();
    std::fs::create_dir_all(&dir).expect("create target/json-corpus");
    let name = format!("{schema}-{:016x}.json", hasher.finish());
    // Written under a temporary name and renamed, so the validator never reads half a file.
    // (Tests run on threads of one process and may keep the same document at once.)
    static KEPT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = KEPT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}-{n}", std::process::id()));
    std::fs::write(&tmp, bytes).expect("write a kept document");
    std::fs::rename(&tmp, dir.join(name)).expect("rename a kept document");
}

/// Runs npgx, expects `code`, and parses stdout as JSON.
pub fn npgx_json<I, S>(args: I, code: i32) -> serde_json::Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    let out = npgx(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code; stderr:\n{stderr}"
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}\nstderr:\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// What a samples README expects for one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub file: String,
    /// The route (`category` column), when the README gives one.
    pub route: Option<String>,
    /// The first causal line (1-based), when the README gives one.
    pub line: Option<u64>,
}

const ROUTES: &[&str] = &[
    "compile-error",
    "runtime-error",
    "accuracy",
    "performance",
    "environment",
    "undetermined",
];

/// Reads the expectations of `../shared/samples/<dir>/README.md`: every table row whose first
/// cell names a file of the folder (by name or by its `NN` number) — the `category` column for
/// the route, the `first…` column for the line (`L<n>`, or the quoted text looked up in the
/// file) — and the prose notes `**NN** — … first = line N` (also `first (CANN) = line N`,
/// `causal record = line N`). Table values win over prose.
pub fn readme_expectations(dir: &str) -> Vec<Expected> {
    let folder = sample(dir);
    let text = std::fs::read_to_string(folder.join("README.md")).expect("README.md");
    let mut files: Vec<String> = std::fs::read_dir(&folder)
        .expect("sample folder")
        .map(|e| {
            e.expect("dir entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|n| n != "README.md")
        .collect();
    files.sort();
    let by_number = |n: &str| {
        files
            .iter()
            .find(|f| f.split('-').next() == Some(n))
            .cloned()
    };
    let resolve = |name: &str| {
        if files.iter().any(|f| f == name) {
            Some(name.to_string())
        } else {
            by_number(name)
        }
    };
    let mut out: Vec<Expected> = Vec::new();
    let mut upsert = |file: String, route: Option<String>, line: Option<u64>| match out
        .iter_mut()
        .find(|e| e.file == file)
    {
        Some(e) => {
            e.route = e.route.take().or(route);
            e.line = e.line.or(line);
        }
        None => out.push(Expected { file, route, line }),
    };
    let mut header: Option<Vec<String>> = None;
    for raw in text.lines() {
        if !raw.starts_with('|') {
            header = None;
            continue;
        }
        let cells: Vec<String> = raw
            .trim()
            .trim_matches('|')
            .split('|')
            .map(|c| c.trim().to_string())
            .collect();
        let Some(h) = &header else {
            header = Some(cells.iter().map(|c| c.to_lowercase()).collect());
            continue;
        };
        if cells.iter().all(|c| c.chars().all(|ch| "-: ".contains(ch))) {
            continue;
        }
        let Some(file) = cells.first().and_then(|c| resolve(c)) else {
            continue;
        };
        let cell = |pred: &dyn Fn(&str) -> bool| {
            h.iter()
                .position(|k| pred(k))
                .and_then(|i| cells.get(i))
                .cloned()
        };
        let route = cell(&|k| k == "category").and_then(|c| {
            ROUTES
                .iter()
                .find(|r| c.to_lowercase().starts_with(*r))
                .map(|r| r.to_string())
        });
        let line = cell(&|k| k.starts_with("first")).and_then(|c| {
            l_number(&c).or_else(|| quoted(&c).and_then(|q| line_of(&folder.join(&file), &q)))
        });
        if route.is_some() || line.is_some() {
            upsert(file, route, line);
        }
    }
    for para in text.split("\n**").skip(1) {
        let Some((num, body)) = para.split_once("**") else {
            continue;
        };
        let Some(file) = by_number(num) else { continue };
        if let Some(n) = prose_first_line(body) {
            upsert(file, None, Some(n));
        }
    }
    out
}

/// `L12` anywhere in a cell.
fn l_number(cell: &str) -> Option<u64> {
    let b = cell.as_bytes();
    (0..b.len()).find_map(|i| {
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        if b[i] != b'L' || !word_start {
            return None;
        }
        let digits: String = cell[i + 1..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let after = cell[i + 1 + digits.len()..].chars().next();
        (!digits.is_empty() && !after.is_some_and(|c| c.is_ascii_alphanumeric()))
            .then(|| digits.parse().ok())
            .flatten()
    })
}

/// The text between the first pair of backtick runs.
fn quoted(cell: &str) -> Option<String> {
    let start = cell.find('`')?;
    let ticks = cell[start..].chars().take_while(|c| *c == '`').count();
    let fence = "`".repeat(ticks);
    let body = &cell[start + ticks..];
    Some(body[..body.find(&fence)?].trim().to_string())
}

/// The first 1-based line of `path` containing the longest `...`-free fragment of `quote`.
fn line_of(path: &Path, quote: &str) -> Option<u64> {
    let frag = quote
        .split("...")
        .flat_map(|p| p.split('…'))
        .map(str::trim)
        .max_by_key(|p| p.len())?;
    let bytes = std::fs::read(path).ok()?;
    String::from_utf8_lossy(&bytes)
        .split('\n')
        .position(|l| l.contains(frag))
        .map(|i| i as u64 + 1)
}

/// `first = line N`, `first (CANN) = line N` or `causal record = line N` in a prose note.
fn prose_first_line(body: &str) -> Option<u64> {
    let mut rest = body;
    while let Some(at) = rest.find(" = line ") {
        let before = &rest[..at];
        let ok = before.ends_with("causal record")
            || before.ends_with("first")
            || (before.ends_with(')')
                && before
                    .rfind('(')
                    .is_some_and(|p| before[..p].ends_with("first ")));
        let digits: String = rest[at + 8..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if ok {
            if let Ok(n) = digits.parse() {
                return Some(n);
            }
        }
        rest = &rest[at + 8..];
    }
    None
}

/// Every expectation of both sample READMEs, as (folder, expectation).
pub fn all_expectations() -> Vec<(&'static str, Expected)> {
    ["triage", "logs"]
        .into_iter()
        .flat_map(|d| readme_expectations(d).into_iter().map(move |e| (d, e)))
        .collect()
}

/// Runs npgx with `args` and returns (exit code, stdout, peak resident set size in KiB), the
/// peak being the largest `VmHWM` (the high-water mark of the child's own address space, so not
/// inflated by this test process) read from `/proc/<pid>/status` every few milliseconds while
/// the child runs.
pub fn npgx_peak_rss<I, S>(args: I) -> (Option<i32>, Vec<u8>, u64)
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    use std::io::Read;
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(&args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("the npgx binary runs");
    let mut pipe = child.stdout.take().expect("piped stdout");
    let reader = std::thread::spawn(move || {
        let mut out = Vec::new();
        pipe.read_to_end(&mut out).expect("read stdout");
        out
    });
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0u64;
    let mut samples = 0u32;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kib);
                samples += 1;
            }
        }
        if let Some(st) = child.try_wait().expect("try_wait") {
            break st;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    };
    assert!(samples > 0, "no VmHWM sample of the npgx child");
    let stdout = reader.join().expect("stdout reader");
    keep_documents(&args, &stdout);
    (status.code(), stdout, peak)
}

/// A sparse file of `len` bytes of zeros (no newline) followed by `tail`.
pub fn sparse_file(path: &Path, len: u64, tail: &[u8]) {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::File::create(path).expect("create sparse file");
    f.set_len(len).expect("set_len");
    f.seek(SeekFrom::End(0)).expect("seek");
    f.write_all(tail).expect("write tail");
}

/// Runs npgx as a user without root's override of file permissions, so that tests of unreadable
/// and unwritable files test what they say whoever runs them. As root this needs the account named
/// by `NPGX_TEST_USER` (scripts/test.sh creates one); the tests that use it are `#[ignore]`d with
/// that reason and run by scripts/test.sh with `--include-ignored`.
pub fn npgx_unprivileged<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return npgx(args);
    }
    let user = std::env::var("NPGX_TEST_USER").expect(
        "running as root: set NPGX_TEST_USER to an unprivileged account (scripts/test.sh does)",
    );
    let args: Vec<std::ffi::OsString> = args.into_iter().map(|a| a.as_ref().into()).collect();
    let out = Command::new("setpriv")
        .arg(format!("--reuid={user}"))
        .arg(format!("--regid={user}"))
        .arg("--clear-groups")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_npgx"))
        .args(&args)
        .output()
        .expect("setpriv runs npgx");
    keep_documents(&args, &out.stdout);
    out
}

/// The test Python: `NPGX_PYTHON` (scripts/test.sh sets it to its venv), else the repo's .venv,
/// else `python3` from PATH.
pub fn test_python() -> String {
    if let Ok(p) = std::env::var("NPGX_PYTHON") {
        return p;
    }
    let venv = repo().join(".venv/bin/python");
    if venv.exists() {
        venv.display().to_string()
    } else {
        "python3".to_string()
    }
}

/// The Python for step scripts that use the standard library only: `python3` from PATH. npgx's
/// seeding preamble and version probe import torch where the interpreter has it (seconds per
/// process); the system Python of the test machines has none, so these runs take milliseconds.
/// Any Python 3 gives the same results.
pub fn plain_python() -> String {
    "python3".to_string()
}

/// The first of `NPGX_PYTHON` and the repo's .venv that imports `modules` (`"torch"`, `"mcp,
/// jsonschema"`). The tests that need one are `#[ignore]`d with the reason and fail — never skip
/// — without it; scripts/test.sh installs the modules and runs them with `--include-ignored`.
pub fn python_with(modules: &str) -> String {
    // Asked by every PyTorch test: importing torch takes seconds, so each answer is kept.
    static FOUND: std::sync::Mutex<Vec<(String, String)>> = std::sync::Mutex::new(Vec::new());
    let mut found = FOUND
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some((_, py)) = found.iter().find(|(m, _)| m == modules) {
        return py.clone();
    }
    let py = find_python_with(modules);
    found.push((modules.to_string(), py.clone()));
    py
}

fn find_python_with(modules: &str) -> String {
    let candidates: Vec<String> = std::env::var("NPGX_PYTHON")
        .ok()
        .into_iter()
        .chain([repo().join(".venv/bin/python").display().to_string()])
        .collect();
    for py in &candidates {
        let ok = Command::new(py)
            .args(["-c", &format!("import {modules}")])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return py.clone();
        }
    }
    panic!("no Python with {modules} among {candidates:?}: run scripts/test.sh, which installs it")
}
