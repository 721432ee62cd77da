//! What a build of npgx contains: `--version` names the cargo features, and a build without the
//! `tables` feature (`--no-default-features`, README "Install") refuses the table formats and
//! `npgx merge` up front, naming the feature, with exit 2.
//!
//! A test target of its own, not a module of `tests/it/`: scripts/test.sh runs it on the lean build
//! too (`cargo test --no-default-features --test features`), which then compiles this file rather
//! than the whole integration suite a second time.

use std::process::{Command, Output};

/// Runs the npgx binary of this build with `args`.
fn npgx<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(args)
        .output()
        .expect("the npgx binary runs")
}

#[cfg(feature = "tables")]
const FEATURES: &str = "(features: tables)";
#[cfg(not(feature = "tables"))]
const FEATURES: &str = "(features: none; a lean build: no CSV/Parquet tables, no merge)";

#[test]
fn version_names_the_enabled_features() {
    let want = format!("{} {FEATURES}\n", env!("CARGO_PKG_VERSION"));
    for (args, name) in [
        (&["--version"][..], "npgx"),
        (&["-V"], "npgx"),
        (&["merge", "--version"], "npgx-merge"),
    ] {
        let out = npgx(args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{name} {want}"),
            "{args:?}"
        );
    }
}

/// Runs npgx, expects exit 2 before any output, and returns stderr.
#[cfg(not(feature = "tables"))]
fn refused(args: &[&str]) -> String {
    let out = npgx(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} wrote output");
    err
}

#[cfg(not(feature = "tables"))]
#[test]
fn a_lean_build_names_the_feature_for_tables_and_merge() {
    let example = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/dump-example");
    let example = example.to_str().expect("utf-8 path");
    let dir = std::env::temp_dir().join(format!("npgx-lean-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let shard = dir.join("shard.parquet");
    let shard = shard.to_str().expect("utf-8 path");
    let hint = "needs the `tables` feature (polars), which this build of npgx";
    for (args, what) in [
        (
            vec!["dump-scan", example, "--format", "csv"],
            "--format csv",
        ),
        (
            vec!["dump-scan", example, "--format", "parquet", "-o", shard],
            "--format parquet",
        ),
        (
            vec!["dump-compare", example, example, "--format", "csv"],
            "--format csv",
        ),
        (
            vec!["dump-compare", example, example, "--format", "parquet"],
            "--format parquet",
        ),
        (vec!["merge", shard], "npgx merge"),
    ] {
        let err = refused(&args);
        assert!(
            err.starts_with(&format!("npgx: error: {what} {hint}")),
            "{args:?}: {err}"
        );
        assert!(err.contains("--features tables"), "{args:?}: {err}");
    }
    assert!(!std::path::Path::new(shard).exists(), "no shard is written");
    std::fs::remove_dir_all(&dir).expect("temp dir removed");
    // What does not need polars still works: the scan itself, as JSON.
    let out = npgx(["dump-scan", example, "--format", "json", "--no-progress"]);
    assert_eq!(out.status.code(), Some(1), "the example has anomalies");
}
