//! `npgx dump-scan` on msprobe dumps and statistics tables: the real files of
//! `../shared/samples/real/msprobe/` and `../shared/samples/real/stats/` (their README says what
//! each holds, read off the files with plain Python).

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common;

/// `dump-scan ROOT --format json`, expecting exit `code`.
fn scan_root(root: &std::path::Path, code: i32) -> Value {
    common::npgx_json(
        [
            "dump-scan",
            &root.display().to_string(),
            "--format",
            "json",
            "--no-progress",
        ],
        code,
    )
}

fn scan(rel: &str, code: i32) -> Value {
    scan_root(&common::sample(rel), code)
}

/// `dump-compare GOLDEN TARGET --format json` of one manifest dump pair.
fn compare_args(dir: &std::path::Path, d: &Value) -> Vec<String> {
    vec![
        "dump-compare".into(),
        dir.join(s(&d["golden_dir"])).display().to_string(),
        dir.join(s(&d["target_dir"])).display().to_string(),
        "--format".into(),
        "json".into(),
        "--no-progress".into(),
    ]
}

fn list<'a>(v: &'a Value, key: &str) -> &'a Vec<Value> {
    v[key]
        .as_array()
        .unwrap_or_else(|| panic!("`{key}` is not an array in {v:#}"))
}

fn call_and_slot(v: &Value) -> (String, String) {
    (
        v["op_name"].as_str().unwrap_or_default().to_string(),
        v["slot"].as_str().unwrap_or_default().to_string(),
    )
}

/// The README: `Infinity` tokens, nine calls (eleven tensors) whose only non-finite figure is an
/// fp16 Norm before the first real overflow. Read with Python's json: the first tensor with a
/// non-finite Max or Min is input 0 of `Tensor.div_.22.forward` (call 3310), and the first call
/// with clean inputs and a non-finite output is `Tensor.__mul__.144.forward` (call 3320:
/// `0.0 * 5.0` recorded as `Infinity`).
#[test]
fn vit_overflow_statistics_notes_apart_and_the_first_real_overflow_named() {
    let v = scan("real/msprobe/ascend-msinsight__vit_overflow_dump", 1);
    assert_eq!(list(&v, "errors").len(), 0, "{:#}", v["errors"]);
    let groups = list(&v, "groups");
    assert_eq!(groups.len(), 1);
    let g = &groups[0];
    assert_eq!(g["layout"], "msprobe");
    assert_eq!((g["rank"].as_u64(), g["step"].as_u64()), (Some(0), None));
    assert_eq!(g["rank_source"], "path");
    assert_eq!(list(g, "magnitudes").len(), 3323, "one entry per call");
    // 34 Distributed calls: all_reduce, reduce, all_gather.
    assert_eq!(list(g, "collectives").len(), 34);
    assert_eq!(g["collectives"][0], 1109);

    let first = &g["first_anomaly"];
    assert_eq!(
        call_and_slot(first),
        ("Tensor.div_.22.forward".into(), "input.0".into())
    );
    assert_eq!(
        (first["order"].as_u64(), first["io"].as_str()),
        (Some(3310), Some("input"))
    );
    assert_eq!(
        (first["kind"].as_str(), first["source"].as_str()),
        (Some("inf"), Some("stats"))
    );
    assert_eq!(first["dtype"], "DT_FLOAT16");
    assert_eq!(first["min"], -546.5);
    let born = &g["first_born"];
    assert_eq!(
        call_and_slot(born),
        ("Tensor.__mul__.144.forward".into(), "output.0".into())
    );
    assert_eq!(born["order"], 3320);

    let notes = list(&v, "notes");
    assert_eq!(notes.len(), 11, "{notes:#?}");
    let calls: BTreeSet<&str> = notes.iter().filter_map(|n| n["op_name"].as_str()).collect();
    let want: BTreeSet<&str> = [
        "Tensor.div_.2.forward",
        "Distributed.all_reduce.3.forward",
        "Distributed.all_reduce.4.forward",
        "Distributed.all_reduce.19.forward",
        "Distributed.all_reduce.20.forward",
        "Distributed.all_reduce.21.forward",
        "Functional.linear.186.backward",
        "Functional.linear.190.backward",
        "Distributed.all_reduce.22.forward",
    ]
    .into_iter()
    .collect();
    assert_eq!(calls, want);
    for n in notes {
        assert_eq!(n["statistics"], serde_json::json!(["Norm"]), "{n:#}");
        assert_eq!(n["dtype"], "DT_FLOAT16");
        assert!(n["order"].as_u64() < first["order"].as_u64(), "{n:#}");
    }
    let n = &notes[0];
    assert_eq!(
        call_and_slot(n),
        ("Tensor.div_.2.forward".into(), "input.0".into())
    );
    assert_eq!(
        (n["max"].as_f64(), n["min"].as_f64()),
        (Some(6912.0), Some(-6804.0))
    );
    // No note is an anomaly, and 14 tensors have a non-finite Max or Min.
    let anomalies = list(&v, "anomalies");
    assert_eq!(anomalies.len(), 14);
    assert_eq!(v["summary"]["anomalous_tensors"], 14);
    let noted: BTreeSet<(String, String)> = notes.iter().map(call_and_slot).collect();
    assert!(anomalies.iter().all(|a| !noted.contains(&call_and_slot(a))));
    // No stack.json in this sample: no line, and nothing to complain about.
    assert!(first["stack"].is_null());
}

#[test]
fn vit_overflow_table_names_the_call_the_slot_and_the_notes() {
    let root = common::sample("real/msprobe/ascend-msinsight__vit_overflow_dump");
    let out = common::npgx(["dump-scan", &root.display().to_string(), "--no-progress"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("first anomaly : input.0 of Tensor.div_.22.forward (Tensor.div_)"),
        "{text}"
    );
    assert!(
        text.contains("born at       : output.0 of Tensor.__mul__.144.forward"),
        "{text}"
    );
    assert!(text.contains("statistics notes"), "{text}");
    assert!(
        text.contains("output.0 of Distributed.all_reduce.3.forward — DT_FLOAT16 Norm not finite"),
        "{text}"
    );
}

/// Two steps of a non-distributed run (`proc2016`), statistics only, clean: every tensor read.
#[test]
fn gpu_dump_two_steps_clean_and_every_tensor_read() {
    let v = scan("real/msprobe/ascend-msprobe__gpu_dump", 0);
    assert_eq!(list(&v, "errors").len(), 0, "{:#}", v["errors"]);
    let steps: Vec<(Option<u64>, Option<u64>, u64)> = list(&v, "groups")
        .iter()
        .map(|g| {
            (
                g["rank"].as_u64(),
                g["step"].as_u64(),
                g["tensors"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(steps, [(None, Some(0), 2071), (None, Some(1), 2071)]);
    assert_eq!(v["summary"]["dump_files"], 2);
    assert_eq!(list(&v, "notes").len(), 0);
}

/// MindSpore L1 dump in a `rank` directory (single card): step 2, no rank; 31 tensors.
#[test]
fn mindspore_l1_single_card_rank_directory() {
    let v = scan(
        "real/msprobe/ascend-msinsight__L1_task_statistics_step_2_rank_all_scope_all_list_all_data_mode_input",
        0,
    );
    let g = &list(&v, "groups")[0];
    assert_eq!((g["rank"].as_u64(), g["step"].as_u64()), (None, Some(2)));
    assert_eq!(g["tensors"], 31);
    assert_eq!(list(g, "magnitudes").len(), 13);
}

/// Tensor tasks whose `dump_tensor_data` was not committed: one error per dump.json naming the
/// count and the first missing file; the statistics are checked instead.
#[test]
fn tensor_task_with_missing_tensor_files_is_one_error_and_the_statistics_are_read() {
    for (rel, n, first) in [
        (
            "real/msprobe/ascend-msinsight__llama2_tensor_dump",
            240,
            "Module.module.module.language_model.embedding.word_embeddings.VocabParallelEmbedding.forward.0.input.0.pt",
        ),
        (
            "real/msprobe/ascend-msinsight__ms_tensor_dump",
            1151,
            "Cell.conv1.Conv2d.forward.0.input.0.npy",
        ),
    ] {
        // The missing files are an error entry: the scan is incomplete (exit 3, issue 27).
        let v = scan(rel, 3);
        assert_eq!(v["complete"], false);
        let errors = list(&v, "errors");
        assert_eq!(errors.len(), 1, "{errors:#?}");
        let m = errors[0]["message"].as_str().unwrap_or_default();
        assert!(
            m.starts_with(&format!("{n} tensor files named by data_name are not in ")),
            "{m}"
        );
        assert!(m.contains(first), "{m}");
        assert_eq!(v["summary"]["tensors"], n);
    }
}

/// The MindSpore kernel-by-kernel statistics tree: 246 files, 238 `statistic.csv` (IO, Slot,
/// quoted shapes, a trailing comma on every row), 24 320 rows, one group per graph and
/// iteration; graph 0 iteration 0 holds 77 op executions.
#[test]
fn mindspore_statistic_csv_tree_reads_fully() {
    for run in ["dump_data0", "dump_data1"] {
        let v = scan(
            &format!("real/stats/ascend-msinsight__ms_graph_statistic_compare_data/{run}"),
            0,
        );
        let s = &v["summary"];
        assert_eq!(list(&v, "errors").len(), 0, "{:#}", v["errors"]);
        assert_eq!(
            (
                s["files_seen"].as_u64(),
                s["dump_files"].as_u64(),
                s["tensors"].as_u64()
            ),
            (Some(246), Some(238), Some(24_320))
        );
        let groups = list(&v, "groups");
        assert_eq!(groups.len(), 238);
        let g = &groups[0];
        assert_eq!(g["layout"], "mindspore");
        assert_eq!(
            (
                g["rank"].as_u64(),
                g["model"].as_str(),
                g["model_id"].as_u64(),
                g["step"].as_u64()
            ),
            (Some(0), Some("mnist"), Some(0), Some(0))
        );
        assert_eq!(g["tensors"], 247);
        assert_eq!(list(g, "magnitudes").len(), 77);
    }
}

/// An unknown header is one error naming the file and the columns found.
#[test]
fn an_unknown_statistics_header_is_one_error_naming_the_columns() {
    let dir = std::env::temp_dir().join(format!("npgx-msprobe-header-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("statistic.csv"), "Name,Value\na,1\n").expect("write");
    let v = common::npgx_json(
        [
            "dump-scan",
            &dir.display().to_string(),
            "--format",
            "json",
            "--no-progress",
        ],
        2,
    );
    let errors = list(&v, "errors");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0]["path"], "statistic.csv");
    assert!(
        errors[0]["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("the columns found are: Name, Value")),
        "{errors:#?}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `target/fixtures/msprobe/MANIFEST.json`, written with the dumps by msprobe itself
/// (`scripts/gen_msprobe_fixtures.py`).
fn manifest() -> (std::path::PathBuf, Value) {
    let dir = common::fixture("msprobe");
    let text = std::fs::read_to_string(dir.join("MANIFEST.json")).expect("MANIFEST.json");
    (
        dir,
        serde_json::from_str(&text).expect("MANIFEST.json is JSON"),
    )
}

fn s(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Every msprobe-written dump: the first anomaly, the birth and the statistics notes the
/// manifest computed from the dumps (xor dumps hold no statistics: nothing checked, exit 2).
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn fixtures_first_anomaly_birth_and_notes_per_manifest() {
    let (dir, m) = manifest();
    let mut checked = 0;
    for run in list(&m, "runs") {
        for d in list(run, "dumps") {
            let (ta, tb) = (&d["first_anomaly"], &d["birth"]);
            let code = match (ta.is_null(), s(&run["summary_mode"])) {
                (false, _) => 1,
                (true, "xor") => 2,
                (true, _) => 0,
            };
            let v = scan_root(&dir.join(s(&d["dir"])), code);
            let what = format!("{} {}", s(&run["name"]), s(&d["dir"]));
            let g = &list(&v, "groups")[0];
            assert_eq!(g["layout"], "msprobe", "{what}");
            assert_eq!(g["step"], d["step"], "{what}");
            assert_eq!(g["rank"], d["rank"], "{what}");
            let fa = &g["first_anomaly"];
            let fb = &g["first_born"];
            if ta.is_null() {
                assert!(fa.is_null(), "{what}: {fa:#}");
            } else {
                assert_eq!(
                    (s(&fa["op_name"]), s(&fa["slot"]), s(&fa["io"])),
                    (s(&ta["call"]), s(&ta["slot"]), s(&ta["io"])),
                    "{what}"
                );
            }
            // stack.json is beside every fixture dump: the user's line of the call.
            if s(&ta["call"]) == "Torch.log.0.forward" {
                assert!(
                    s(&fa["stack"]).ends_with(
                        "in forward: return torch.log(torch.softmax(self.head(h), dim=-1))"
                    ),
                    "{what}: {fa:#}"
                );
                // The same frame as the finding's origin (docs/source-map.md): no FX node.
                let fx = &fa["fx"];
                assert_eq!(fx["fx_node"], serde_json::Value::Null, "{what}: {fx:#}");
                assert_eq!(fx["user_line"]["function"], "forward", "{what}: {fx:#}");
                assert_eq!(
                    fx["user_line"]["code"],
                    "return torch.log(torch.softmax(self.head(h), dim=-1))",
                    "{what}: {fx:#}"
                );
                assert!(s(&fx["via"][0]).ends_with("stack.json"), "{what}: {fx:#}");
            }
            if tb.is_null() {
                assert!(fb.is_null(), "{what}: {fb:#}");
            } else {
                assert_eq!(s(&fb["op_name"]), s(&tb["call"]), "{what}");
                assert_eq!(fb["slot"], tb["anomalous_outputs"][0], "{what}");
            }
            let notes: Vec<(&str, &str)> = list(&v, "notes")
                .iter()
                .map(|n| (s(&n["op_name"]), s(&n["slot"])))
                .collect();
            let want: Vec<(&str, &str)> = list(d, "stat_notes")
                .iter()
                .map(|n| (s(&n["call"]), s(&n["slot"])))
                .collect();
            assert_eq!(notes, want, "{what}");
            checked += 1;
        }
    }
    assert!(checked >= 30, "{checked} dumps");
}

/// msprobe compare's output for one manifest dump pair (`compare_result.json`).
fn msprobe_compare(dir: &std::path::Path, d: &Value) -> Value {
    let text = std::fs::read_to_string(dir.join(s(&d["compare_json"]))).expect("compare json");
    serde_json::from_str(&text).expect("compare json is JSON")
}

/// The rows of msprobe's output by their `NPU Name`.
fn by_npu_name(truth: &Value) -> std::collections::HashMap<&str, &Value> {
    list(truth, "rows")
        .iter()
        .map(|r| (s(&r["NPU Name"]), r))
        .collect()
}

/// One of msprobe's metric cells against npgx's: numbers within 1e-6, words (`unsupported`,
/// `Nan`, `N/A`) equal.
fn same_cell(got: &Value, want: &str) -> bool {
    match (got.as_f64(), want.trim().parse::<f64>()) {
        (Some(a), Ok(b)) => (a - b).abs() <= 1e-6 || (a.is_infinite() && a == b),
        _ => got.as_str().is_some_and(|g| g == want.trim()),
    }
}

/// Every tensor-task pair of the manifest: npgx's `msprobe` figures of each pair equal the row
/// of msprobe compare's own output for that tensor, and every tensor row msprobe compared with a
/// bench tensor is a pair of npgx's.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn fixtures_compare_metrics_equal_msprobe_compare() {
    const COLUMNS: [(&str, &str); 6] = [
        ("cosine", "Cosine"),
        ("euc_dist", "EucDist"),
        ("max_abs_err", "MaxAbsErr"),
        ("max_relative_err", "MaxRelativeErr"),
        ("one_thousandth_err_ratio", "One Thousandth Err Ratio"),
        ("five_thousandths_err_ratio", "Five Thousandths Err Ratio"),
    ];
    let (dir, m) = manifest();
    let mut cells = 0;
    for p in list(&m, "pairs").iter().filter(|p| p["task"] == "tensor") {
        for d in list(p, "dumps") {
            let what = format!("{} step {} rank {}", s(&p["name"]), d["step"], d["rank"]);
            let truth = msprobe_compare(&dir, d);
            let rows = by_npu_name(&truth);
            let out = common::npgx(compare_args(&dir, d));
            let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
            let mut names = BTreeSet::new();
            for pair in list(&v, "pairs") {
                let file = std::path::Path::new(s(&pair["target_file"]));
                let name = file
                    .file_stem()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let row = rows
                    .get(name.as_str())
                    .unwrap_or_else(|| panic!("{what}: {name} is not a row of msprobe's"));
                for (key, column) in COLUMNS {
                    let got = &pair["msprobe"][key];
                    let want = s(&row[column]);
                    assert!(
                        same_cell(got, want),
                        "{what}: {name} {column}: npgx {got}, msprobe {want}"
                    );
                    cells += 1;
                }
                names.insert(name);
            }
            for (name, row) in &rows {
                let tensor = s(&row["NPU Dtype"]).starts_with("torch.");
                if tensor && row["Bench Name"] != "N/A" {
                    assert!(
                        names.contains(*name),
                        "{what}: msprobe row {name} is no npgx pair"
                    );
                }
            }
        }
    }
    assert!(cells > 5_000, "{cells} cells compared");
}

/// Where the manifest names an origin (the first forward call whose inputs match and output
/// differs, or whose parameter differs), npgx names the same first divergence and origin with
/// the same evidence.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn fixtures_compare_origin_and_evidence_per_manifest() {
    let (dir, m) = manifest();
    let mut checked = 0;
    for p in list(&m, "pairs").iter().filter(|p| p["task"] == "tensor") {
        for d in list(p, "dumps").iter().filter(|d| !d["origin"].is_null()) {
            let what = format!("{} step {} rank {}", s(&p["name"]), d["step"], d["rank"]);
            let v = common::npgx_json(compare_args(&dir, d), 1);
            let g = &list(&v, "groups")[0];
            assert_eq!(
                s(&g["first_divergence"]["op_name"]),
                s(&d["first_divergent"]["call"]),
                "{what}"
            );
            let evidence = match s(&d["origin"]["evidence"]) {
                "a parameter differs" => "parameters",
                "inputs match, output differs" => "inputs",
                other => panic!("{what}: evidence {other}"),
            };
            assert_eq!(
                (s(&g["origin"]["op_name"]), s(&g["origin"]["evidence"])),
                (s(&d["origin"]["call"]), evidence),
                "{what}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 8, "{checked} pairs");
}

/// `--msprobe-columns`: msprobe's header, its row names and its figures.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn msprobe_columns_csv() {
    let (dir, _) = manifest();
    let out = common::npgx([
        "dump-compare",
        &dir.join("tensor_L1/golden").display().to_string(),
        &dir.join("tensor_L1/kernel").display().to_string(),
        "--format",
        "csv",
        "--msprobe-columns",
        "--no-progress",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("NPU Name,Bench Name,NPU Dtype,Bench Dtype,NPU Tensor Shape,Bench Tensor Shape,Cosine,EucDist,MaxAbsErr,MaxRelativeErr,One Thousandth Err Ratio,Five Thousandths Err Ratio,Err_message")
    );
    assert_eq!(
        lines.next(),
        Some("Functional.linear.0.forward.input.0,Functional.linear.0.forward.input.0,float32,float32,\"[4, 8]\",\"[4, 8]\",1,0,0,0,1,1,\"\"")
    );
    let out = common::npgx([
        "dump-compare",
        &dir.join("tensor_L1/golden").display().to_string(),
        &dir.join("tensor_L1/kernel").display().to_string(),
        "--msprobe-columns",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// Shards of msprobe dumps merge: the rank from `rank{R}`, the collectives the 16
/// `Distributed.all_reduce` calls each rank's dump.json lists (read with Python's json).
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn msprobe_shards_merge_by_rank_and_distributed_calls() {
    let (dir, _) = manifest();
    let out_dir = std::env::temp_dir().join(format!("npgx-msprobe-shards-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).expect("temp dir");
    for rank in 0..2 {
        let root = dir.join(format!("ranks_statistics_mix/target/step0/rank{rank}"));
        let shard = out_dir.join(format!("rank{rank}.parquet"));
        let out = common::npgx([
            "dump-scan",
            &root.display().to_string(),
            "--format",
            "parquet",
            "-o",
            &shard.display().to_string(),
            "--no-progress",
        ]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v = common::npgx_json(
        ["merge", &out_dir.display().to_string(), "--format", "json"],
        0,
    );
    assert_eq!(v["summary"]["shards"], 2);
    let step = &list(&v, "steps")[0];
    assert_eq!(
        (step["step"].as_u64(), step["ranks"].as_u64()),
        (Some(0), Some(2))
    );
    assert_eq!(step["collectives"], 16);
    let _ = std::fs::remove_dir_all(&out_dir);
}

/// Statistics-only pairs in msprobe's summary mode: each statistic's difference and relative
/// difference (percent) equal msprobe compare's `Max diff` … `NormRelativeErr` for every row of
/// a plain argument or output (`{call}.{input|output}.{i}`), and the kernel and NaN faults at L1
/// and mix give the manifest's first divergence and origin.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn fixtures_statistics_pairs_in_summary_mode() {
    const COLUMNS: [(&str, &str); 8] = [
        ("max_diff", "Max diff"),
        ("min_diff", "Min diff"),
        ("mean_diff", "Mean diff"),
        ("norm_diff", "L2norm diff"),
        ("max_rel_err", "MaxRelativeErr"),
        ("min_rel_err", "MinRelativeErr"),
        ("mean_rel_err", "MeanRelativeErr"),
        ("norm_rel_err", "NormRelativeErr"),
    ];
    let (dir, m) = manifest();
    let mut cells = 0;
    let mut origins = 0;
    for p in list(&m, "pairs") {
        if p["task"] == "tensor" || p["summary_mode"] == "xor" {
            continue;
        }
        for d in list(p, "dumps") {
            let what = format!("{} step {} rank {}", s(&p["name"]), d["step"], d["rank"]);
            let truth = msprobe_compare(&dir, d);
            let rows = by_npu_name(&truth);
            let v = common::npgx_json(compare_args(&dir, d), 1);
            for pair in list(&v, "pairs") {
                let io = match s(&pair["io"]) {
                    "parameter" => "parameters",
                    other => other,
                };
                let name = format!("{}.{io}.{}", s(&pair["op_name"]), pair["index"]);
                let Some(row) = rows.get(name.as_str()) else {
                    continue;
                };
                // md5 runs: msprobe writes checksums, not these columns.
                for (key, column) in COLUMNS.iter().filter(|(_, c)| !row[*c].is_null()) {
                    let got = &pair["summary"][key];
                    let want = s(&row[*column]).trim_end_matches('%');
                    assert!(
                        same_cell(got, want),
                        "{what}: {name} {column}: npgx {got}, msprobe {want}"
                    );
                    cells += 1;
                }
            }
            let fault = s(&p["injected"]["kind"]);
            // Rank 0 of the two-rank run receives rank 1's fault through all_reduce, and in
            // step 1 every weight differs; at L0 the faulty call is inside a module whose input
            // statistics differ: all below the thresholds, where msprobe's bit-equality sees them.
            let direct = d["rank"] != 0 && d["step"] == 0 && p["level"] != "L0";
            if direct && (fault == "kernel_noise" || fault == "nan_birth") {
                let g = &list(&v, "groups")[0];
                assert_eq!(
                    s(&g["first_divergence"]["op_name"]),
                    s(&d["first_divergent"]["call"]),
                    "{what}"
                );
                assert_eq!(
                    s(&g["origin"]["op_name"]),
                    s(&d["origin"]["call"]),
                    "{what}"
                );
                origins += 1;
            }
        }
    }
    assert!(cells > 2_000, "{cells} cells");
    assert!(origins >= 4, "{origins} origins");
}
