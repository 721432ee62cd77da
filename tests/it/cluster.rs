//! Cluster runs under launchers (docs/cluster.md): symbolic links as roots, `--exit-zero`, no
//! all-clear that cannot be known (exit 3), shards whole or absent under real signals, and the
//! recipes run for real with torchrun and mpirun on the fixture of scripts/gen_launch_fixtures.py.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

/// A fresh directory under `target/test-cluster/`.
fn scratch(name: &str) -> PathBuf {
    let d = common::repo().join("target/test-cluster").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// `npgx ARGS --format json`: the exit code and the document without the keys naming the roots,
/// with the file paths under `link` written under `real`.
fn json_without(args: &[&str], roots: &[&str], link: &Path, real: &Path) -> (Option<i32>, Value) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let out = common::npgx(&all);
    let text = String::from_utf8_lossy(&out.stdout).replace(s(link), s(real));
    let mut v: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
        panic!(
            "{args:?}: not JSON ({e}); stderr:\n{}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    for k in roots {
        v.as_object_mut().expect("object").remove(*k);
    }
    (out.status.code(), v)
}

#[test]
fn a_root_given_as_a_symbolic_link_is_walked_as_its_target() {
    let real = common::repo().join("testdata/dump-example/worldsize1_global_rank0");
    let d = scratch("symlink-root");
    // `/home/dump -> /data/dump`: the link's own name carries no rank level; the target's does.
    let link = d.join("home-dump");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    let (code, direct) = json_without(
        &["dump-scan", s(&real), "--no-progress"],
        &["root"],
        &link,
        &real,
    );
    assert_eq!(code, Some(1), "the example has anomalies");
    assert_eq!(direct["summary"]["tensors"], 14);
    assert_eq!(direct["groups"][0]["rank"], 0);
    let (code, linked) = json_without(
        &["dump-scan", s(&link), "--no-progress"],
        &["root"],
        &link,
        &real,
    );
    assert_eq!(code, Some(1));
    assert_eq!(linked, direct);
    // dump-compare: the link on one side, the real path on the other, pairs every tensor.
    let keys = ["golden", "target"];
    let (code, both_real) =
        json_without(&["dump-compare", s(&real), s(&real)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(both_real["summary"]["pairs"], 14);
    let (code, one_link) = json_without(&["dump-compare", s(&link), s(&real)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(one_link, both_real);
    let (code, two_links) =
        json_without(&["dump-compare", s(&link), s(&link)], &keys, &link, &real);
    assert_eq!(code, Some(0));
    assert_eq!(two_links, both_real);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn exit_zero_keeps_the_output_and_only_changes_1_and_3() {
    let example = common::repo().join("testdata/dump-example");
    let plain = common::npgx([
        "dump-scan",
        s(&example),
        "--format",
        "json",
        "--no-progress",
    ]);
    assert_eq!(plain.status.code(), Some(1));
    for args in [
        vec![
            "dump-scan",
            s(&example),
            "--format",
            "json",
            "--no-progress",
            "--exit-zero",
        ],
        vec![
            "--exit-zero",
            "dump-scan",
            s(&example),
            "--format",
            "json",
            "--no-progress",
        ],
    ] {
        let out = common::npgx(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        assert_eq!(out.stdout, plain.stdout, "{args:?}: the same report");
    }
    // Could not run: still 2.
    let missing = common::npgx(["dump-scan", "/nonexistent/npgx-dump", "--exit-zero"]);
    assert_eq!(missing.status.code(), Some(2));
    // Other commands that exit 1 for findings take it the same way.
    let log = common::sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    for args in [vec!["aicore", s(&log)], vec!["triage", "classify", s(&log)]] {
        assert_eq!(common::npgx(&args).status.code(), Some(1), "{args:?}");
        let mut zero = args.clone();
        zero.push("--exit-zero");
        assert_eq!(common::npgx(&zero).status.code(), Some(0), "{zero:?}");
    }
}

/// Copies the tree `from` into `to` (files only; what the tests below then break or remove).
fn copy_tree(from: &Path, to: &Path) {
    for e in walkdir::WalkDir::new(from) {
        let e = e.expect("entry");
        let dest = to.join(e.path().strip_prefix(from).expect("below"));
        if e.file_type().is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
        } else {
            std::fs::copy(e.path(), &dest).expect("copy");
        }
    }
}

/// Scans `root` as `rank` of a world of 2 into `dest`, expecting `code`.
fn shard(root: &Path, dest: &Path, rank: u32, code: i32) {
    let r = rank.to_string();
    let out = common::npgx([
        "dump-scan",
        s(root),
        "--rank",
        &r,
        "--world-size",
        "2",
        "--format",
        "parquet",
        "-o",
        s(dest),
        "--no-progress",
    ]);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn merge(dir: &Path, code: i32) -> Value {
    common::npgx_json(["merge", s(dir), "--format", "json"], code)
}

#[test]
fn merge_gives_no_all_clear_when_a_shard_a_rank_or_a_step_is_unseen() {
    let example =
        common::repo().join("testdata/dump-example/worldsize1_global_rank0/20241121120000");
    let d = scratch("unseen");
    // Rank 1 of 2 saw only step 0; rank 0 saw steps 0 and 1.
    let partial = d.join("rank1/20241121120000");
    copy_tree(&example, &partial);
    std::fs::remove_dir_all(partial.join("0/ge_default_20241121120000_1/1/1")).expect("rm step 1");
    let shards = d.join("shards");
    std::fs::create_dir_all(&shards).expect("mkdir");
    shard(&example, &shards.join("rank0.parquet"), 0, 1);
    // Rank 1 alone missing from a world of 2: exit 3, not 1.
    let v = merge(&shards, 3);
    assert_eq!(v["complete"], false);
    assert_eq!(
        v["unseen"],
        serde_json::json!({"shards": [], "unread": [], "ranks": [{"world_size": 2, "ranks": [1]}], "steps": []})
    );
    assert!(v["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .all(|st| st["complete"] == false));
    let text = common::npgx(["merge", s(&shards)]);
    assert_eq!(text.status.code(), Some(3));
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("INCOMPLETE: rank 1 of world size 2 not seen"),
        "{text}"
    );
    assert_eq!(
        common::npgx(["merge", s(&shards), "--exit-zero"])
            .status
            .code(),
        Some(0)
    );
    // Rank 1 present, but without step 1.
    shard(&partial, &shards.join("rank1.parquet"), 1, 1);
    let v = merge(&shards, 3);
    assert_eq!(
        v["unseen"],
        serde_json::json!({"shards": [], "unread": [], "ranks": [],
                           "steps": [{"world_size": 2, "model": "1", "step": 1, "ranks": [1]}]})
    );
    let steps = v["steps"].as_array().expect("steps");
    assert_eq!(steps[0]["complete"], true);
    assert_eq!(steps[1]["complete"], false);
    assert_eq!(steps[1]["missing_ranks"], serde_json::json!([1]));
    // Complete: every rank of every step. Anomalies: 1.
    std::fs::remove_file(shards.join("rank1.parquet")).expect("rm");
    shard(&example, &shards.join("rank1.parquet"), 1, 1);
    let v = merge(&shards, 1);
    assert_eq!(v["complete"], true);
    // A truncated shard beside them: skipped, and the merge is incomplete.
    let whole = std::fs::read(shards.join("rank1.parquet")).expect("shard");
    std::fs::write(shards.join("rank2.parquet"), &whole[..whole.len() / 2]).expect("write");
    let v = merge(&shards, 3);
    assert_eq!(v["complete"], false);
    let skipped = v["unseen"]["shards"][0].as_str().expect("a path");
    assert!(skipped.ends_with("rank2.parquet"), "{skipped}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn scan_and_compare_with_unreadable_files_are_incomplete() {
    let example = common::repo().join("testdata/dump-example");
    let d = scratch("unreadable");
    let broken = d.join("tree");
    copy_tree(&example, &broken);
    let step =
        broken.join("worldsize1_global_rank0/20241121120000/0/ge_default_20241121120000_1/1/0");
    let good = std::fs::read(step.join("Add.model_layer0_Add.6.2.1732190400000300")).expect("dump");
    std::fs::write(
        step.join("Mul.model_layer0_Mul.7.2.1732190400000400"),
        &good[..12],
    )
    .expect("a truncated dump");
    let v = common::npgx_json(
        ["dump-scan", s(&broken), "--format", "json", "--no-progress"],
        3,
    );
    assert_eq!(v["complete"], false);
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(
        v["summary"]["anomalous_tensors"], 4,
        "what was read is still reported"
    );
    let text = common::npgx(["dump-scan", s(&broken), "--no-progress"]);
    assert_eq!(text.status.code(), Some(3));
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("INCOMPLETE: 1 problem(s) reading files")
    );
    let clean = common::npgx_json(
        [
            "dump-scan",
            s(&example),
            "--format",
            "json",
            "--no-progress",
        ],
        1,
    );
    assert_eq!(clean["complete"], true);
    // Under a launcher the scan exits 0 (--exit-zero), and its shard tells merge what it missed.
    let shards = d.join("shards");
    std::fs::create_dir_all(&shards).expect("mkdir");
    let shard = shards.join("node0.parquet");
    let out = common::npgx([
        "dump-scan",
        s(&broken),
        "--exit-zero",
        "--format",
        "parquet",
        "-o",
        s(&shard),
        "--no-progress",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v = merge(&shards, 3);
    assert_eq!(
        v["unseen"]["unread"],
        serde_json::json!([{"shard": s(&shard), "files": 1}])
    );
    let text = String::from_utf8_lossy(&common::npgx(["merge", s(&shards)]).stdout).into_owned();
    assert!(text.contains("could not read 1 file(s)"), "{text}");
    let v = common::npgx_json(
        ["dump-compare", s(&example), s(&broken), "--format", "json"],
        3,
    );
    assert_eq!(
        (v["complete"].clone(), v["summary"]["errors"].clone()),
        (Value::Bool(false), 1.into())
    );
    assert_eq!(v["summary"]["failed"], 0);
    assert_eq!(
        common::npgx(["dump-compare", s(&example), s(&broken), "--exit-zero"])
            .status
            .code(),
        Some(0)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `target/fixtures/launch` (scripts/gen_launch_fixtures.py): the two ranks' trees and the truth.
fn launch() -> (PathBuf, Value) {
    let dir = common::fixture("launch");
    let exp = std::fs::read_to_string(dir.join("expected.json")).expect("expected.json");
    (dir.join("ranks"), serde_json::from_str(&exp).expect("JSON"))
}

/// The temporary file of `dest` in its directory, if one is there (`.NAME.PID-N.npgx-tmp`).
fn temp_of(dest: &Path) -> Option<PathBuf> {
    let name = dest.file_name().expect("a file name").to_string_lossy();
    let prefix = format!(".{name}.");
    std::fs::read_dir(dest.parent().expect("a directory"))
        .expect("list")
        .map(|e| e.expect("entry").path())
        .find(|p| {
            let n = p.file_name().expect("name").to_string_lossy();
            n.starts_with(&prefix) && n.ends_with(".npgx-tmp")
        })
}

fn send(child: &std::process::Child, sig: i32) {
    let pid = libc::pid_t::try_from(child.id()).expect("a pid");
    // SAFETY: kill(2) on the pid of a child this test started and has not yet waited for.
    assert_eq!(unsafe { libc::kill(pid, sig) }, 0, "kill {sig}");
}

/// Starts a shard scan of rank 1's tree (60 009 dumps) into `dest`.
fn start_scan(tree: &Path, dest: &Path) -> std::process::Child {
    std::process::Command::new(env!("CARGO_BIN_EXE_npgx"))
        .args(["dump-scan", s(tree), "--rank", "1", "--world-size", "2"])
        .args(["--format", "parquet", "-o", s(dest), "--no-progress"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("npgx starts")
}

/// Starts a scan and stops it (SIGSTOP) as soon as its shard's temporary file appears: frozen
/// while writing, the temporary file there and nothing at `dest`. Returns the child and the
/// temporary file. A few tries, in case a write finishes between two looks.
fn frozen_while_writing(tree: &Path, dest: &Path) -> (std::process::Child, PathBuf) {
    for _ in 0..3 {
        let mut child = start_scan(tree, dest);
        let started = std::time::Instant::now();
        while temp_of(dest).is_none() && child.try_wait().expect("wait").is_none() {
            assert!(started.elapsed().as_secs() < 300, "no shard written");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        send(&child, libc::SIGSTOP);
        match temp_of(dest) {
            Some(temp) if !dest.exists() => return (child, temp),
            _ => {
                send(&child, libc::SIGKILL);
                let _ = child.wait();
                let _ = std::fs::remove_file(dest);
            }
        }
    }
    panic!(
        "the shard was written faster than it could be caught: grow the launch fixture's --filler"
    )
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_shard_killed_by_a_signal_is_never_left_at_its_name() {
    use std::os::unix::process::ExitStatusExt as _;
    let (ranks, _) = launch();
    let tree = ranks.join("1");
    let d = scratch("kill");
    let dest = d.join("node1.parquet");
    // While scanning (the shard not opened yet): nothing is written.
    for sig in [libc::SIGTERM, libc::SIGKILL] {
        let mut child = start_scan(&tree, &dest);
        std::thread::sleep(std::time::Duration::from_millis(300));
        send(&child, sig);
        let status = child.wait().expect("wait");
        assert_eq!(status.signal(), Some(sig), "still scanning when signalled");
        assert!(!dest.exists() && temp_of(&dest).is_none(), "signal {sig}");
    }
    // SIGTERM while writing: the temporary file is removed and the process dies of the signal.
    let (mut child, temp) = frozen_while_writing(&tree, &dest);
    send(&child, libc::SIGTERM);
    send(&child, libc::SIGCONT);
    assert_eq!(child.wait().expect("wait").signal(), Some(libc::SIGTERM));
    assert!(!dest.exists(), "no shard after SIGTERM");
    assert!(!temp.exists(), "{} removed after SIGTERM", temp.display());
    // SIGKILL while writing: the temporary file stays, nothing at the shard's name…
    let (mut child, temp) = frozen_while_writing(&tree, &dest);
    send(&child, libc::SIGKILL);
    assert_eq!(child.wait().expect("wait").signal(), Some(libc::SIGKILL));
    assert!(!dest.exists() && temp.exists());
    // …and merge and dump-scan do not see it.
    shard(&ranks.join("0"), &d.join("node0.parquet"), 0, 1);
    let v = merge(&d, 3);
    assert_eq!(v["summary"]["shards"], 1);
    assert_eq!(v["skipped"], serde_json::json!([]));
    assert_eq!(
        v["unseen"]["ranks"],
        serde_json::json!([{"world_size": 2, "ranks": [1]}])
    );
    let scan = common::npgx_json(["dump-scan", s(&d), "--format", "json", "--no-progress"], 2);
    assert_eq!(
        scan["summary"]["files_seen"], 1,
        "the shard, not the leftover"
    );
    assert_eq!(scan["summary"]["errors"], 0);
    let _ = std::fs::remove_dir_all(&d);
}

// ---------------------------------------------------------------------------------------------
// The recipes of docs/cluster.md, run on this machine.

/// The `sh` block of docs/cluster.md whose command starts with `launcher`: its launcher command
/// (continuation lines joined) and its merge command, as written.
fn recipe(launcher: &str) -> (String, String) {
    let doc = std::fs::read_to_string(common::repo().join("docs/cluster.md")).expect("cluster.md");
    let block = doc
        .split("```sh\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .find(|b| b.starts_with(launcher))
        .unwrap_or_else(|| panic!("docs/cluster.md has no ```sh block starting with {launcher}"));
    let joined = block.replace("\\\n", " ");
    let lines: Vec<&str> = joined
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        lines.len(),
        2,
        "{launcher}: a launcher line and a merge line: {lines:?}"
    );
    assert!(
        lines[1].starts_with("npgx merge /shared/shards/"),
        "{lines:?}"
    );
    (lines[0].to_string(), lines[1].to_string())
}

/// A recipe's command on one machine: each rank scans `dumps/<its rank>` (the rank variable the
/// recipe names its shard by) instead of every node's `/local/dump`, and the shards go to
/// `shards/`.
fn on_this_machine(cmd: &str, dumps: &Path, shards: &Path) -> String {
    let var = cmd
        .split("/shared/shards/node$")
        .nth(1)
        .and_then(|r| r.split(".parquet").next())
        .unwrap_or(cmd);
    cmd.replace("/local/dump", &format!("{}/${var}", s(dumps)))
        .replace("/shared/shards/", &format!("{}/", s(shards)))
}

/// Runs `cmd` with bash, `npgx` and `extra_path` first on PATH; kills it after five minutes.
fn run_sh(cmd: &str, extra_path: &[PathBuf], env: &[(&str, String)]) -> std::process::Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_npgx"))
        .parent()
        .expect("bin dir");
    let path = std::env::join_paths(
        [bin.to_path_buf()]
            .into_iter()
            .chain(extra_path.iter().cloned())
            .chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )),
    )
    .expect("PATH");
    let mut child = std::process::Command::new("bash")
        .args(["-c", cmd])
        .env("PATH", path)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("bash runs");
    let started = std::time::Instant::now();
    while child.try_wait().expect("wait").is_none() {
        if started.elapsed().as_secs() > 300 {
            let _ = child.kill();
            panic!("{cmd}: still running after 300 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    child.wait_with_output().expect("output")
}

/// Runs a recipe's launcher line for two ranks — rank 0 finds a NaN at once, rank 1 scans for
/// seconds — then its merge line: the launcher exits 0, both shards are whole, the merge names
/// rank 0. Then the same line without `--exit-zero`: the launcher stops rank 1 when rank 0 exits
/// 1, and rank 1's shard is missing (what the option is for).
fn run_recipe(name: &str, cmd: &str, merge_line: &str, path: &[PathBuf], env: &[(&str, String)]) {
    let (ranks, exp) = launch();
    let d = scratch(name);
    let shards = d.join("shards");
    std::fs::create_dir_all(&shards).expect("mkdir");
    let launch = on_this_machine(cmd, &ranks, &shards);
    assert!(launch.contains("--exit-zero"), "{launch}");
    let out = run_sh(&launch, path, env);
    let log = format!(
        "{launch}\nstdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{log}");
    let merge_cmd = on_this_machine(merge_line, &ranks, &shards);
    let out = run_sh(&format!("{merge_cmd} --format json"), &[], &[]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{log}\nmerge: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: Value = serde_json::from_slice(&out.stdout).expect("merge JSON");
    assert_eq!(v["complete"], true, "{v:#}");
    assert_eq!(v["summary"]["shards"], 2);
    let step = &v["steps"][0];
    assert_eq!(step["world_size"], exp["world_size"]);
    assert_eq!(
        step["verdict"]["origin"],
        serde_json::json!([exp["origin"]])
    );
    assert_eq!(step["verdict"]["evidence"], "collective_ordinal");
    assert_eq!(
        step["verdict"]["before_collective"],
        exp["before_collective"]
    );
    assert_eq!(
        step["verdict"]["received"],
        serde_json::json!([{"rank": 1, "after_collective": exp["before_collective"]}])
    );
    let origin = &step["findings"][0];
    assert_eq!(origin["tensors"], exp["tensors"]["0"]);
    assert_eq!(
        origin["first_anomaly"]["op_name"],
        exp["origin_first"]["op_name"]
    );
    assert_eq!(
        step["findings"][1]["tensors"], exp["tensors"]["1"],
        "rank 1's shard is whole"
    );
    // The failure the option prevents.
    std::fs::remove_dir_all(&shards).expect("rm");
    std::fs::create_dir_all(&shards).expect("mkdir");
    let out = run_sh(&launch.replace(" --exit-zero", ""), path, env);
    assert_ne!(
        out.status.code(),
        Some(0),
        "without --exit-zero the launcher fails"
    );
    assert!(shards.join("node0.parquet").exists());
    assert!(
        !shards.join("node1.parquet").exists(),
        "rank 1 was stopped before writing"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A TCP port free on this machine now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

#[test]
#[ignore = "needs torch (torchrun); run by scripts/test.sh"]
fn the_torchrun_recipe_runs_two_ranks_to_a_merge_naming_the_origin() {
    let venv_bin = std::env::var_os("NPGX_PYTHON")
        .map(PathBuf::from)
        .and_then(|p| p.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| common::repo().join(".venv/bin"));
    assert!(
        venv_bin.join("torchrun").exists(),
        "no torchrun in {}",
        venv_bin.display()
    );
    let (cmd, merge_line) = recipe("torchrun");
    // Two processes on this one node; a port no other test holds.
    let cmd = cmd
        .replace("--nproc-per-node=1", "--nproc-per-node=2")
        .replace(
            "--master-port=29500",
            &format!("--master-port={}", free_port()),
        );
    let env = [
        ("NNODES", "1".to_string()),
        ("NODE_RANK", "0".to_string()),
        ("MASTER", "127.0.0.1".to_string()),
    ];
    run_recipe("torchrun", &cmd, &merge_line, &[venv_bin], &env);
}

#[test]
#[ignore = "needs mpirun (Debian openmpi-bin); run by scripts/test.sh"]
fn the_mpirun_recipe_runs_two_ranks_to_a_merge_naming_the_origin() {
    let (cmd, merge_line) = recipe("mpirun");
    // Two processes on this one node (the recipe places one per node).
    let cmd = cmd.replace("--map-by ppr:1:node", "--oversubscribe");
    let env = [
        ("NNODES", "2".to_string()),
        // Test machines often run as root, which Open MPI refuses unless told.
        ("OMPI_ALLOW_RUN_AS_ROOT", "1".to_string()),
        ("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1".to_string()),
    ];
    run_recipe("mpirun", &cmd, &merge_line, &[], &env);
}
