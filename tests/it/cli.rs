//! Command-line behaviour shared by every subcommand: help, usage errors, exit codes.

use crate::common::npgx;

/// Every command and subcommand, as a user types it.
const COMMANDS: &[&[&str]] = &[
    &["dump-scan"],
    &["dump-compare"],
    &["dump-convert"],
    &["dump-config", "new"],
    &["dump-config", "check"],
    &["plog"],
    &["aicore"],
    &["repro"],
    &["triage", "run"],
    &["triage", "bisect"],
    &["triage", "analyze"],
    &["triage", "classify"],
    &["triage", "steps"],
    &["merge"],
    &["report"],
    &["schema"],
];

#[test]
fn help_lists_every_command() {
    let out = npgx(["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let entries: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter(|l| !l.starts_with("   "))
        .collect();
    for e in &entries {
        // Every command says what it does (the first line of its doc comment).
        assert!(
            e.split_whitespace().nth(1).is_some(),
            "no description for `{}`:\n{text}",
            e.trim()
        );
    }
    let listed: Vec<&str> = entries
        .iter()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    let mut want: Vec<&str> = COMMANDS.iter().map(|c| c[0]).collect();
    want.dedup();
    // The MCP server speaks JSON-RPC on stdio: no `--format`, so not in COMMANDS (tests/it/mcp.rs).
    want.push("mcp");
    assert_eq!(listed, want, "{text}");
}

#[test]
fn every_command_has_help_with_a_json_format() {
    for cmd in COMMANDS {
        let mut args = cmd.to_vec();
        args.push("--help");
        let out = npgx(&args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {text}");
        assert!(text.contains("Usage: npgx"), "{cmd:?}: {text}");
        assert!(
            text.contains("--format") && text.contains("json"),
            "{cmd:?} has no --format json:\n{text}"
        );
    }
}

#[test]
fn missing_compare_root_is_a_run_failure() {
    let out = npgx([
        "dump-compare",
        "/nonexistent/npgx-golden",
        "/nonexistent/npgx-target",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/npgx-golden"), "{err}");
    let out = npgx([
        "dump-convert",
        "/nonexistent/npgx-tree",
        "-o",
        "/tmp/npgx-never",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn missing_root_is_a_run_failure() {
    let out = npgx(["dump-scan", "/nonexistent/npgx-test-root"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/npgx-test-root"), "{err}");
}

#[cfg(feature = "tables")]
#[test]
fn parquet_needs_an_output_file() {
    let dir = crate::common::repo().join("testdata");
    let out = npgx([
        "dump-scan".as_ref(),
        dir.as_os_str(),
        "--format".as_ref(),
        "parquet".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("-o FILE"));
}

#[test]
fn unknown_flag_is_a_usage_error() {
    let out = npgx(["dump-scan", "--no-such-flag", "x"]);
    assert_eq!(out.status.code(), Some(2));
}

/// The writing end of a pipe whose reader is already gone: what `npgx … | head` leaves once
/// `head` has exited, so the first write of a process given it as stdout fails with a broken pipe.
///
/// Both ends are opened close-on-exec: the tests run in parallel, and a process another test
/// starts between pipe(2) and the read end's close would otherwise inherit the read end and keep
/// the pipe open for as long as it lives (npgx's writes then succeed into the pipe's buffer and it
/// exits with its findings' code: a CI run saw exactly that). The child's stdout is a dup2 of the
/// write end, which clears the flag on descriptor 1 only.
pub fn closed_pipe() -> std::os::fd::OwnedFd {
    use std::os::fd::{FromRawFd as _, OwnedFd};
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2(2) writes.
    assert_eq!(
        unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) },
        0,
        "pipe2(2)"
    );
    // SAFETY: both descriptors were just opened by pipe2(2) and are owned by nothing else.
    let (read, write) = unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    drop(read);
    write
}

fn npgx_into_closed_pipe(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(args)
        .stdout(closed_pipe())
        .output()
        .expect("the npgx binary runs")
}

/// `npgx … | head`: every command ends quietly with exit 0 when its reader goes away, whatever
/// it found (these inputs all have findings) and however it writes.
#[test]
fn closed_stdout_ends_quietly_with_success() {
    let root = crate::common::repo();
    let dump = root.join("testdata/dump-example");
    let plog = crate::common::sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let config = crate::common::sample("real/acl-json/hicann-ge__testDumpWatcher1.json");
    let triage = crate::common::sample("triage/01-dynamo-unsupported-fake-tensor-custom-op.txt");
    let (dump, plog, config, triage) = (
        dump.to_str().unwrap(),
        plog.to_str().unwrap(),
        config.to_str().unwrap(),
        triage.to_str().unwrap(),
    );
    // A saved scan for `dump-config plan`, and a folder for dump-convert's output.
    let tmp = std::env::temp_dir().join(format!("npgx-closed-pipe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    let scan = tmp.join("scan.json");
    let out = crate::common::npgx([
        "dump-scan",
        dump,
        "--format",
        "json",
        "-o",
        scan.to_str().unwrap(),
    ]);
    assert!(scan.exists(), "{}", String::from_utf8_lossy(&out.stderr));
    let scan = scan.to_str().unwrap();
    let converted = tmp.join("converted");
    let converted = converted.to_str().unwrap();
    let runs: &[&[&str]] = &[
        &["dump-config", "plan", scan],
        &["dump-config", "plan", scan, "--format", "json"],
        &["dump-compare", dump, dump],
        &["dump-compare", dump, dump, "--format", "json"],
        &["dump-convert", dump, "-o", converted],
        &["dump-scan", dump],
        &["dump-scan", dump, "--format", "json"],
        &["plog", plog],
        &["plog", plog, "--records", "--format", "json"],
        &["aicore", plog],
        &["dump-config", "check", config, "--no-fs-check"],
        &["dump-config", "new", "model"],
        &["triage", "classify", triage],
        &["triage", "classify", triage, "--format", "json"],
    ];
    for args in runs {
        let out = npgx_into_closed_pipe(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: stderr:\n{stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("npgx: error"), "{args:?}: {stderr}");
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
