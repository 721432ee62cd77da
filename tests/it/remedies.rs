//! Every command npgx prints for the user to run — a remedy's `check` lines (the remedy table
//! `parsers/src/knowledge/remedy.tsv`) and `dump-compare`'s `next:` line — runs as printed once
//! the user fills its `<PLACEHOLDERS>`: exit 0, 1 or 3, never 2. The placeholders are filled here
//! with fixtures of what they stand for (a plog folder, rank logs, a new case folder, dump
//! trees). Commands that start a PyTorch run (`triage run <SCRIPT>`, `triage bisect <SCRIPT>`:
//! minutes of PyTorch each, run for real in tests/it/triage.rs) are checked for their arguments:
//! with the script missing, npgx must fail reading that script, not on the command line — so a
//! placeholder standing where npgx expects something else (a tree where it reads a script) fails
//! here.

use std::path::PathBuf;
use std::process::Output;

use npgx_parsers::knowledge::remedy_rows;

use crate::common::{fixture, npgx, sample};
use crate::triage::scratch;

/// The file a pasted error was read from: a plog excerpt with an AI Core error.
fn pasted() -> PathBuf {
    sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log")
}

/// A command line split into words, its placeholders filled; `None` when it starts PyTorch.
fn filled(command: &str, case: usize) -> Option<Vec<String>> {
    let words: Vec<String> = command.split(' ').skip(1).map(str::to_string).collect();
    if words.iter().any(|w| w == "<SCRIPT>") {
        return None;
    }
    Some(
        words
            .into_iter()
            .map(|w| match w.as_str() {
                "FILE" | "<LOG_FILE>" => pasted().display().to_string(),
                "<PLOG_DIR>" => sample("cann/asys-20250508-gatherv3-assert")
                    .display()
                    .to_string(),
                // A folder of logs, one per process (the shared samples' screen logs and plogs).
                "<RANK_LOGS_DIR>" => sample("logs").display().to_string(),
                "<CASE_DIR>" => scratch(&format!("remedy-case-{case}"))
                    .join("case")
                    .display()
                    .to_string(),
                "<GOLDEN_DUMP>" => fixture("compare/chain/golden").display().to_string(),
                "<TARGET_DUMP>" => fixture("compare/chain/target").display().to_string(),
                // One rank's dump tree to scan.
                "<DUMP_DIR>" => fixture("compare/chain/target").display().to_string(),
                _ => {
                    assert!(
                        !(w.starts_with('<') && w.ends_with('>')),
                        "placeholder {w} has no fixture here: add one"
                    );
                    w
                }
            })
            .collect(),
    )
}

fn exit_ok(out: &Output, what: &str) {
    assert!(
        matches!(out.status.code(), Some(0 | 1 | 3)),
        "`{what}` exited {:?}:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn every_remedy_check_runs_as_printed() {
    let mut ran = 0;
    let mut parsed = 0;
    // Rows share commands (`npgx plog <PLOG_DIR>` under several errors): each runs once.
    let mut seen = std::collections::BTreeSet::new();
    for (k, row) in remedy_rows().iter().enumerate() {
        for (j, command) in row.check.iter().enumerate() {
            if !command.starts_with("npgx ") || !seen.insert(*command) {
                continue;
            }
            assert!(
                !command.split(' ').any(|w| w == "DIR" || w == "ROOT"),
                "{}: `{command}` guesses a folder",
                row.matches
            );
            match filled(command, k * 10 + j) {
                Some(args) => {
                    let out = npgx(&args);
                    exit_ok(&out, command);
                    ran += 1;
                }
                None => {
                    // The arguments parse and the script stands where npgx reads one: with a
                    // directory in its place npgx refuses to read it, with it missing npgx names
                    // it (exit 2 from the run, not a usage error).
                    let with = |script: &str| -> String {
                        let args: Vec<String> = command
                            .split(' ')
                            .skip(1)
                            .map(|w| match w {
                                "<SCRIPT>" => script.to_string(),
                                w => {
                                    assert!(!w.starts_with('<'), "{command}: {w} has no fixture");
                                    w.to_string()
                                }
                            })
                            .collect();
                        String::from_utf8_lossy(&npgx(&args).stderr).into_owned()
                    };
                    let err = with("/nonexistent/model.py");
                    assert!(
                        !err.contains("Usage:")
                            && err.contains("cannot read /nonexistent/model.py"),
                        "`{command}` does not parse as printed: {err}"
                    );
                    let dir = scratch(&format!("remedy-not-a-script-{k}-{j}"));
                    let err = with(dir.to_str().unwrap());
                    assert!(
                        err.contains("Is a directory"),
                        "`{command}`: <SCRIPT> is not read as a script: {err}"
                    );
                    parsed += 1;
                }
            }
        }
    }
    assert!(
        ran >= 7 && parsed >= 4,
        "distinct commands: ran {ran}, parsed {parsed}"
    );
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_next_command_of_dump_compare_runs_as_printed() {
    let out = npgx([
        "dump-compare",
        fixture("compare/chain/golden").to_str().unwrap(),
        fixture("compare/chain/target").to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    let next = text
        .lines()
        .find_map(|l| l.strip_prefix("next: "))
        .unwrap_or_else(|| panic!("no next: line in\n{text}"));
    let case = scratch("remedy-next").join("case");
    let args: Vec<String> = shlex::split(next)
        .expect("a shell command line")
        .into_iter()
        .skip(1)
        .map(|w| {
            if w == "<CASE_DIR>" {
                case.display().to_string()
            } else {
                w
            }
        })
        .collect();
    let out = npgx(&args);
    exit_ok(&out, next);
    assert!(case.is_dir(), "{next}: no case folder written");
}

/// The `check` commands of `triage classify FILE --format json` (exit 1: an error found).
fn checks_of(file: &std::path::Path) -> Vec<String> {
    let doc = crate::common::npgx_json(
        [
            "triage",
            "classify",
            file.to_str().unwrap(),
            "--format",
            "json",
        ],
        1,
    );
    doc["items"][0]["remedy"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|r| r["check"].as_array().into_iter().flatten())
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect()
}

/// `npgx plog DIR` on a file under the folder the user named that names a device fault without
/// holding its records: the checks that read device records read that folder (it holds the
/// other processes' plogs), and run as printed; `npgx plog FILE` leaves `<PLOG_DIR>`.
#[test]
fn plog_points_device_readers_at_the_folder_it_was_given() {
    let dir = scratch("plog-folder-readers");
    let plogs = dir.join("debug").join("plog");
    std::fs::create_dir_all(&plogs).unwrap();
    let file = plogs.join("plog-100_20250101000000000.log");
    std::fs::copy(
        sample("triage/23-aicore-execution-timeout-event-query.txt"),
        &file,
    )
    .unwrap();
    let checks = |args: &[&std::path::Path]| -> Vec<String> {
        let mut argv = vec!["plog", "--format", "json"];
        argv.extend(args.iter().map(|a| a.to_str().unwrap()));
        let out = npgx(argv);
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("plog's JSON");
        let mut all = Vec::new();
        let mut stack = vec![doc];
        while let Some(v) = stack.pop() {
            match v {
                serde_json::Value::Object(m) => {
                    for (k, v) in m {
                        match (k.as_str(), v) {
                            ("check", serde_json::Value::Array(cs)) => all.extend(
                                cs.into_iter()
                                    .filter_map(|c| c.as_str().map(str::to_string)),
                            ),
                            (_, v) => stack.push(v),
                        }
                    }
                }
                serde_json::Value::Array(vs) => stack.extend(vs),
                _ => {}
            }
        }
        all
    };
    let aicore = format!("npgx aicore {}", dir.display());
    // The folder, alone or with the file named too, in either order.
    for args in [vec![&dir], vec![&dir, &file], vec![&file, &dir]] {
        let found = checks(&args.iter().map(|p| p.as_path()).collect::<Vec<_>>());
        assert!(found.contains(&aicore), "{args:?}: {found:?}");
    }
    exit_ok(&npgx(["aicore", dir.to_str().unwrap()]), &aicore);
    let single = checks(&[&file]);
    assert!(
        single.contains(&"npgx aicore <PLOG_DIR>".to_string()),
        "{single:?}"
    );
}

/// A paste that names a device fault whose records it does not hold (torch_npu's `aicore
/// timeout` report): the commands that read device records read the plogs, where CANN wrote
/// them, and run as printed; a log with the records keeps its own path.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn device_readers_read_the_plogs_when_the_paste_holds_no_record() {
    let paste = sample("triage/23-aicore-execution-timeout-event-query.txt");
    let checks = checks_of(&paste);
    assert!(
        checks.contains(&"npgx aicore <PLOG_DIR>".to_string())
            && checks.contains(&"npgx repro --from-aicore <PLOG_DIR> -o <CASE_DIR>".to_string()),
        "{checks:?}"
    );
    for (k, c) in checks.iter().filter(|c| c.starts_with("npgx ")).enumerate() {
        assert!(!c.contains(paste.to_str().unwrap()), "{c}");
        let args = filled(c, 900 + k).expect("no PyTorch run");
        exit_ok(&npgx(&args), c);
    }
    let with_records = checks_of(&pasted());
    assert!(
        with_records.contains(&format!("npgx aicore {}", pasted().display())),
        "{with_records:?}"
    );
}
