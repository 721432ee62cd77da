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
        "missing fixture {} — run scripts/test.sh, which generates the fixtures",
        p.display()
    );
    p
}

/// Runs the npgx binary with `args`.
pub fn npgx<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(args)
        .output()
        .expect("the npgx binary runs")
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
    Command::new("setpriv")
        .arg(format!("--reuid={user}"))
        .arg(format!("--regid={user}"))
        .arg("--clear-groups")
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_npgx"))
        .args(args)
        .output()
        .expect("setpriv runs npgx")
}
