//! `npgx dump-scan --format parquet` shards and `npgx merge` on the 64-rank fixture written by
//! scripts/gen_cluster_fixtures.py (docs/cluster.md).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use polars::prelude::{
    Column, DataFrame, KeyValueMetadata, ParquetReader, ParquetWriter, PlSmallStr, SerReader,
};
use serde_json::Value;

use crate::common;

fn expected() -> Value {
    let p = common::fixture("cluster/ranks64/expected.json");
    serde_json::from_str(&std::fs::read_to_string(p).expect("expected.json")).expect("JSON")
}

/// A fresh directory under the system temp dir.
fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("npgx-merge-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Scans `root` into the shard `dest` (exit 1: the fixture ranks are all anomalous).
fn scan(root: &Path, dest: &Path, extra: &[&str], code: i32) {
    let mut args = vec![
        "dump-scan",
        s(root),
        "--format",
        "parquet",
        "-o",
        s(dest),
        "--no-progress",
        "-j",
        "1",
    ];
    args.extend_from_slice(extra);
    let out = common::npgx(&args);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{}: {}",
        root.display(),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every rank of the 64-rank fixture scanned into its own shard, four scans at a time.
fn shards_of_64(dir: &Path) -> Vec<PathBuf> {
    let root = common::fixture("cluster/ranks64/root");
    let next = Mutex::new(0u32);
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| loop {
                let rank = {
                    let mut n = next.lock().expect("lock");
                    let r = *n;
                    *n += 1;
                    r
                };
                if rank >= 64 {
                    break;
                }
                let tree = root.join(format!("worldsize64_global_rank{rank}"));
                scan(&tree, &dir.join(format!("rank{rank}.parquet")), &[], 1);
            });
        }
    });
    (0..64)
        .map(|r| dir.join(format!("rank{r}.parquet")))
        .collect()
}

fn merge_json(inputs: &[&Path], code: i32) -> (Value, String) {
    let mut args: Vec<&str> = vec!["merge", "--format", "json"];
    args.extend(inputs.iter().map(|p| s(p)));
    let out = common::npgx(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "stderr:\n{stderr}");
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{stderr}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    (v, stderr)
}

fn u64s(v: &Value) -> Vec<u64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_u64().expect("number"))
        .collect()
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn sixty_four_ranks_name_the_origin_by_collectives_not_clocks() {
    let exp = expected();
    let dir = temp_dir("64");
    shards_of_64(&dir);
    let (v, _) = merge_json(&[&dir], 1);
    assert_eq!(v["schema"], "npgx.merge");
    assert_eq!(v["schema_version"], 1);
    assert_eq!(v["summary"]["shards"], 64);
    assert_eq!(v["summary"]["skipped"], 0);
    assert_eq!(v["summary"]["steps"], 2);
    assert_eq!(v["summary"]["anomalous_steps"], 1);
    let per = exp["tensors_per_rank_step"].as_u64().expect("n");
    assert_eq!(v["summary"]["tensors"], 64 * 2 * per);
    let steps = v["steps"].as_array().expect("steps");
    let (bad, clean) = (&steps[0], &steps[1]);
    assert_eq!(
        (&bad["world_size"], &bad["model"], &bad["step"]),
        (&Value::from(64), &Value::from("1"), &Value::from(0))
    );
    assert_eq!(bad["ranks"], 64);
    assert_eq!(bad["missing_ranks"], serde_json::json!([]));
    assert_eq!(bad["collectives"], exp["collectives"]);
    assert_eq!(u64s(&bad["anomalous_ranks"]), (0..64).collect::<Vec<_>>());
    let verdict = &bad["verdict"];
    assert_eq!(
        u64s(&verdict["origin"]),
        [exp["origin"].as_u64().expect("origin")]
    );
    assert_eq!(verdict["evidence"], "collective_ordinal");
    assert_eq!(verdict["origin_received"], false);
    assert_eq!(verdict["before_collective"], exp["before_collective"]);
    let received: Vec<(u64, u64)> = verdict["received"]
        .as_array()
        .expect("received")
        .iter()
        .map(|r| {
            (
                r["rank"].as_u64().expect("rank"),
                r["after_collective"].as_u64().expect("after"),
            )
        })
        .collect();
    let via = exp["received_after_collective"].as_u64().expect("k");
    let want: Vec<(u64, u64)> = u64s(&exp["received"])
        .into_iter()
        .map(|r| (r, via))
        .collect();
    assert_eq!(received, want);
    // The skewed rank's dumps are minutes earlier than everyone's: it is only a receiver.
    let skewed = exp["skewed_rank"].as_u64().expect("skewed");
    assert!(!u64s(&verdict["origin"]).contains(&skewed));
    // First anomaly and birth of the origin; first anomaly of a receiver.
    let finding = |rank: u64| {
        bad["findings"]
            .as_array()
            .expect("findings")
            .iter()
            .find(|f| f["rank"] == rank)
            .expect("rank finding")
            .clone()
    };
    let o = finding(exp["origin"].as_u64().expect("origin"));
    let of = &exp["origin_first"];
    for k in ["position", "op_name", "io", "index", "kind"] {
        assert_eq!(o["first_anomaly"][k], of[k], "origin first_anomaly.{k}");
        assert_eq!(o["first_born"][k], of[k], "origin first_born.{k}");
    }
    assert_eq!(o["first_anomaly"]["collectives_before"], 1);
    let r = finding(skewed);
    let rf = &exp["received_first"];
    for k in ["position", "op_name", "io", "collective"] {
        assert_eq!(r["first_anomaly"][k], rf[k], "receiver first_anomaly.{k}");
    }
    assert_eq!(r["first_anomaly"]["input_anomalous"], false);
    assert_eq!(
        (&clean["step"], &clean["verdict"], &clean["anomalous_ranks"]),
        (&Value::from(1), &Value::Null, &serde_json::json!([]))
    );
    // The human summary says the same.
    let out = common::npgx(["merge", s(&dir)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(
            "origin        : rank 37, before collective 1 [evidence: collective_ordinal]"
        ),
        "{text}"
    );
    assert!(
        text.contains("received after collective 1: rank 0-36, 38-63"),
        "{text}"
    );
    // The table: one row per anomalous rank, in Parquet with its schema in the metadata.
    let table = dir.join("merged.parquet");
    let out = common::npgx(["merge", s(&dir), "--format", "parquet", "-o", s(&table)]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        shard_metadata(&table).contains(&("npgx.schema".into(), Some("npgx.merge.table".into())))
    );
    let df = ParquetReader::new(std::fs::File::open(&table).expect("table"))
        .finish()
        .expect("reads");
    assert_eq!(df.height(), 64);
    let rank = df.column("rank").expect("rank").u64().expect("u64");
    let role = df.column("role").expect("role").str().expect("str");
    let after = df
        .column("after_collective")
        .expect("after")
        .u64()
        .expect("u64");
    let rows: Vec<(Option<u64>, Option<&str>, Option<u64>)> = (0..df.height())
        .map(|i| (rank.get(i), role.get(i), after.get(i)))
        .filter(|r| r.0 == Some(37) || r.0 == Some(skewed))
        .collect();
    assert_eq!(
        rows,
        [
            (Some(skewed), Some("received"), Some(1)),
            (Some(37), Some("origin"), None)
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads a shard's key-value metadata and the named columns of its first rows.
fn shard_metadata(p: &Path) -> Vec<(String, Option<String>)> {
    let mut r = ParquetReader::new(std::fs::File::open(p).expect("shard"));
    let md = r.get_metadata().expect("metadata");
    md.key_value_metadata()
        .clone()
        .unwrap_or_default()
        .into_iter()
        .map(|kv| (kv.key, kv.value))
        .collect()
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_shard_has_every_tensor_positions_collectives_and_its_schema() {
    let root = common::fixture("cluster/ranks64/root/worldsize64_global_rank37");
    let dir = temp_dir("shard");
    let dest = dir.join("r37.parquet");
    scan(&root, &dest, &[], 1);
    let md = shard_metadata(&dest);
    assert!(md.contains(&("npgx.schema".into(), Some("npgx.dump-scan.shard".into()))));
    assert!(md.contains(&("npgx.schema_version".into(), Some("1".into()))));
    let df = ParquetReader::new(std::fs::File::open(&dest).expect("shard"))
        .finish()
        .expect("reads");
    assert_eq!(df.height(), 2 * 27, "every tensor of two steps");
    let text = |c: &str, i: usize| -> Option<String> {
        df.column(c)
            .expect(c)
            .str()
            .expect("str")
            .get(i)
            .map(str::to_string)
    };
    let num =
        |c: &str, i: usize| -> Option<u64> { df.column(c).expect(c).u64().expect("u64").get(i) };
    // Rows in execution order: step 0 first; RealDiv output (row 14) is born before collective 1.
    for (i, op, pos, before, coll) in [
        (0, "model/layer0/MatMul", 0, 0, None),
        (6, "hcom_allreduce_0", 2, 0, Some(0)),
        (14, "model/layer1/RealDiv", 4, 1, None),
        (17, "hcom_allreduce_1", 5, 1, Some(1)),
        (26, "model/layer2/Cast", 8, 3, None),
    ] {
        assert_eq!(text("op_name", i).as_deref(), Some(op), "row {i}");
        assert_eq!(num("position", i), Some(pos), "row {i} position");
        assert_eq!(num("collectives_before", i), Some(before), "row {i}");
        assert_eq!(num("collective", i), coll, "row {i} collective");
        assert_eq!(num("rank", i), Some(37));
        assert_eq!(num("world_size", i), Some(64));
        assert_eq!(text("rank_source", i).as_deref(), Some("path"));
        assert_eq!(text("model_key", i).as_deref(), Some("1"));
    }
    let anomalous = df
        .column("anomalous")
        .expect("anomalous")
        .bool()
        .expect("bool");
    assert_eq!(anomalous.get(13), Some(false), "RealDiv input 1 clean");
    assert_eq!(anomalous.get(14), Some(true), "RealDiv output NaN");
    assert_eq!(
        anomalous.sum(),
        Some(9),
        "RealDiv out, AllReduce 1 in+out, 3 × 2 after"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn the_rank_comes_from_options_or_the_launchers_environment() {
    // A single-op tree has no rank level: the rank comes from outside.
    let root = common::fixture("dump/torchair/root/worldsize2_global_rank1");
    let tree = common::fixture("dump/example/root");
    let dir = temp_dir("rank");
    let a = dir.join("a.parquet");
    scan(&root, &a, &["--rank", "5", "--world-size", "8"], 1);
    let df = |p: &Path| {
        ParquetReader::new(std::fs::File::open(p).expect("shard"))
            .finish()
            .expect("reads")
    };
    // The path's own rank wins over the option.
    let got = df(&a);
    assert_eq!(first_u64(&got, "rank"), Some(1));
    assert_eq!(first_str(&got, "rank_source").as_deref(), Some("path"));
    // A tree without a rank level below the worldsize directory: the option gives it.
    let inner = tree.join("worldsize1_global_rank0");
    let time = std::fs::read_dir(&inner)
        .expect("time dir")
        .next()
        .expect("one entry")
        .expect("entry")
        .path();
    let b = dir.join("b.parquet");
    scan(&time, &b, &["--rank", "5", "--world-size", "8"], 1);
    let got = df(&b);
    assert_eq!(first_u64(&got, "rank"), Some(5));
    assert_eq!(first_u64(&got, "world_size"), Some(8));
    assert_eq!(first_str(&got, "rank_source").as_deref(), Some("option"));
    // From Slurm's variables (torchrun's absent).
    let c = dir.join("c.parquet");
    let with_env = |set: &[(&str, &str)]| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_npgx"));
        cmd.args([
            "dump-scan",
            s(&time),
            "--rank-from-env",
            "--format",
            "parquet",
        ])
        .args(["-o", s(&c)]);
        for (name, _) in npgx::scan::RANK_ENV {
            cmd.env_remove(name);
        }
        for (k, v) in set {
            cmd.env(k, v);
        }
        cmd.output().expect("runs")
    };
    let out = with_env(&[("SLURM_PROCID", "3"), ("SLURM_NTASKS", "4")]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got = df(&c);
    assert_eq!(first_u64(&got, "rank"), Some(3));
    assert_eq!(
        first_str(&got, "rank_source").as_deref(),
        Some("env:SLURM_PROCID")
    );
    // No launcher variable at all: exit 2 with the list of variables.
    let out = with_env(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLURM_PROCID/SLURM_NTASKS"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Row 0 of column `c`, as u64 and as text.
fn first_u64(df: &DataFrame, c: &str) -> Option<u64> {
    df.column(c).expect(c).u64().expect("u64 column").get(0)
}

fn first_str(df: &DataFrame, c: &str) -> Option<String> {
    df.column(c)
        .expect(c)
        .str()
        .expect("string column")
        .get(0)
        .map(str::to_string)
}

/// A Parquet file written by polars (not npgx), with `meta` as its key-value metadata.
fn foreign_parquet(p: &Path, meta: Option<Vec<(String, String)>>) {
    let mut df =
        DataFrame::new(1, vec![Column::new(PlSmallStr::from("rank"), vec![0u64])]).expect("frame");
    ParquetWriter::new(std::fs::File::create(p).expect("create"))
        .with_key_value_metadata(meta.map(KeyValueMetadata::from_static))
        .finish(&mut df)
        .expect("written");
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn bad_shards_are_skipped_by_name_and_mixed_jobs_kept_apart() {
    let dir = temp_dir("bad");
    let root = common::fixture("cluster/ranks64/root");
    for r in [36u32, 37] {
        let tree = root.join(format!("worldsize64_global_rank{r}"));
        scan(&tree, &dir.join(format!("rank{r}.parquet")), &[], 1);
    }
    // Another job (world size 2) in the same directory.
    scan(
        &common::fixture("dump/torchair/root"),
        &dir.join("other-job.parquet"),
        &[],
        1,
    );
    // Rank 36 scanned twice; a tree without any rank.
    std::fs::copy(dir.join("rank36.parquet"), dir.join("rank36-again.parquet")).expect("copy");
    let example = common::fixture("dump/example/root/worldsize1_global_rank0");
    let time = std::fs::read_dir(&example)
        .expect("time dir")
        .next()
        .expect("one entry")
        .expect("entry")
        .path();
    scan(&time, &dir.join("no-rank.parquet"), &[], 1);
    // Truncated: half of a real shard.
    let whole = std::fs::read(dir.join("rank36.parquet")).expect("shard");
    std::fs::write(dir.join("truncated.parquet"), &whole[..whole.len() / 2]).expect("write");
    // Corrupt data pages behind an intact footer: polars fails, the file is found and skipped.
    let mut bad = whole.clone();
    let quarter = bad.len() / 4;
    bad[8..quarter].fill(0xFF);
    std::fs::write(dir.join("corrupt.parquet"), &bad).expect("write");
    foreign_parquet(&dir.join("plain.parquet"), None);
    foreign_parquet(
        &dir.join("future.parquet"),
        Some(vec![
            ("npgx.schema".into(), "npgx.dump-scan.shard".into()),
            ("npgx.schema_version".into(), "99".into()),
        ]),
    );
    // Skipped shards and missing ranks: incomplete (exit 3), whatever was found.
    let (v, stderr) = merge_json(&[&dir], 3);
    assert_eq!(v["complete"], false);
    assert_eq!(v["unseen"]["shards"].as_array().expect("shards").len(), 4);
    let skipped: Vec<(String, String)> = v["skipped"]
        .as_array()
        .expect("skipped")
        .iter()
        .map(|x| {
            let p = x["path"].as_str().expect("path");
            let name = Path::new(p)
                .file_name()
                .expect("name")
                .to_string_lossy()
                .into_owned();
            (name, x["message"].as_str().expect("message").to_string())
        })
        .collect();
    let names: Vec<&str> = skipped.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "future.parquet",
            "plain.parquet",
            "truncated.parquet",
            "corrupt.parquet"
        ]
    );
    assert!(skipped[0].1.contains("version \"99\""), "{}", skipped[0].1);
    assert!(
        skipped[1].1.contains("not an npgx shard"),
        "{}",
        skipped[1].1
    );
    assert!(skipped[2].1.contains("truncated"), "{}", skipped[2].1);
    assert!(
        skipped[3].1.contains("data cannot be read"),
        "{}",
        skipped[3].1
    );
    for n in &names {
        assert!(stderr.contains(n), "warning names {n}:\n{stderr}");
    }
    assert_eq!(v["summary"]["shards"], 5);
    let warnings: Vec<&str> = v["warnings"]
        .as_array()
        .expect("warnings")
        .iter()
        .map(|w| w.as_str().expect("text"))
        .collect();
    let has = |text: &str| warnings.iter().filter(|w| w.contains(text)).count();
    assert_eq!(has("world sizes 2, 64"), 1, "{warnings:#?}");
    assert_eq!(
        has("rank 36 of world size 64, model 1, step"),
        2,
        "{warnings:#?}"
    );
    assert_eq!(has("rank36.parquet"), 2, "{warnings:#?}");
    assert_eq!(has("have no rank"), 2, "{warnings:#?}");
    assert_eq!(warnings.len(), 5, "{warnings:#?}");
    // The 64-rank steps keep their own verdict: rank 37 over 36, 62 ranks missing.
    let steps = v["steps"].as_array().expect("steps");
    let big: Vec<&Value> = steps.iter().filter(|s| s["world_size"] == 64).collect();
    assert_eq!(big.len(), 2);
    assert_eq!(u64s(&big[0]["verdict"]["origin"]), [37]);
    assert_eq!(big[0]["missing_ranks"].as_array().expect("m").len(), 62);
    assert!(steps.iter().any(|s| s["world_size"] == 2));
    // Nothing left to merge: exit 2 naming the file.
    let out = common::npgx(["merge", s(&dir.join("plain.parquet"))]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("plain.parquet: not an npgx shard"));
    let _ = std::fs::remove_dir_all(&dir);
}
