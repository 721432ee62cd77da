//! Command-line behaviour shared by every subcommand: help, usage errors, exit codes.

use crate::common::npgx;

#[test]
fn help_lists_the_commands() {
    let out = npgx(["--help"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("dump-scan"), "{text}");
}

#[test]
fn missing_root_is_a_run_failure() {
    let out = npgx(["dump-scan", "/nonexistent/npgx-test-root"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("/nonexistent/npgx-test-root"), "{err}");
}

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
