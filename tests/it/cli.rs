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
    &["merge"],
    &["report"],
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
