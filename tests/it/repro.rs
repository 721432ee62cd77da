//! `npgx repro` end to end: the real CANN collections (kernel name → GE node → kernel JSON) and
//! the fixtures of `scripts/gen_repro_fixtures.py` (dump → .npy, generated scripts run for real).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};

use crate::common::{self, fixture, npgx, sample};

const GATHER_BIN: &str =
    "te_gatherv2_657cb48fa1743a43209d7bc779fe8c294760a5b09b3079a3323fdf18376fc408_1";
const TRANSDATA_BIN: &str = "te_transdata_a603142389973648_c50cf465894adb0d_1";
const GATHERV3_BIN: &str = "GatherV3_9e31943a1a48bf81ddff1fc6379e0be3_high_performance";

/// A fresh, empty output directory for one test.
fn out_dir(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("npgx-it-repro-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    p
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

/// Runs `npgx repro … -o out`, checks the exit code and returns case.json.
fn repro(args: &[&str], out: &Path, code: i32) -> Value {
    let mut all: Vec<String> = vec!["repro".into()];
    all.extend(args.iter().map(|s| s.to_string()));
    all.extend(["-o".to_string(), path_arg(out)]);
    let o = npgx(&all);
    assert_eq!(
        o.status.code(),
        Some(code),
        "stdout:\n{}\nstderr:\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let text = std::fs::read_to_string(out.join("case.json")).expect("case.json written");
    serde_json::from_str(&text).expect("case.json is JSON")
}

/// Every generated .py in `dir` compiles.
fn compile_scripts(dir: &Path) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "py") {
            let o = Command::new(crate::common::test_python())
                .args(["-m", "py_compile"])
                .arg(&p)
                .output()
                .expect("python runs");
            assert!(
                o.status.success(),
                "{} does not compile:\n{}",
                p.display(),
                String::from_utf8_lossy(&o.stderr)
            );
            n += 1;
        }
    }
    n
}

fn missing(case: &Value) -> Vec<String> {
    case["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap().to_string())
        .collect()
}

fn ends_with(v: &Value, suffix: &str) -> bool {
    v.as_str().is_some_and(|s| s.ends_with(suffix))
}

#[test]
fn aicore_collection_kernel_to_node_to_kernel_json() {
    let out = out_dir("asys2023");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&sample("cann/asys-20230713-aicore-collection")),
        ],
        &out,
        1,
    );
    assert_eq!(case["schema_version"], 1);
    assert_eq!(case["path"], "runtime");
    let t = &case["target"];
    assert_eq!(t["source"], "aicore");
    assert_eq!(t["kernel_name"], "2_0_11_GatherV2");
    assert_eq!(t["op_name"], "GatherV2");
    assert_eq!(
        (
            t["device_id"].clone(),
            t["stream_id"].clone(),
            t["task_id"].clone()
        ),
        (json!(0), json!(2), json!(6))
    );
    assert_eq!(t["evidence"]["line"], 8381);
    // [AIC_INFO] tensors: the real shapes of the dynamic graph inputs.
    let rt: Vec<(String, Value)> = t["runtime_tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                format!("{}{}", r["io"].as_str().unwrap(), r["index"]),
                r["shape"].clone(),
            )
        })
        .collect();
    assert_eq!(
        rt,
        vec![
            ("input0".to_string(), json!([64])),
            ("input1".to_string(), json!([2])),
            ("input2".to_string(), json!([])),
            ("output0".to_string(), json!([2])),
        ]
    );
    let op = &case["op"];
    assert_eq!(op["name"], "GatherV2");
    assert_eq!(op["op_type"], "GatherV2");
    assert!(
        ends_with(
            &op["graph_file"],
            "dfx/graph/370_0/ge_proto_00000001_Build.txt"
        ),
        "{}",
        op["graph_file"]
    );
    assert_eq!(op["graph_line"], 4955);
    assert_eq!(op["matched_by"], "node_name");
    assert_eq!(op["kernel_name"], format!("{GATHER_BIN}__kernel0"));
    assert_eq!(op["block_dim"], 32);
    assert_eq!(
        op["inputs"][0],
        json!({"index": 0, "name": "x", "dtype": "DT_FLOAT", "shape": [-1], "format": "ND",
               "ori_shape": [-1], "ori_format": "ND", "source": "Unique:0"})
    );
    assert_eq!(op["inputs"][1]["name"], "indices");
    assert_eq!(op["inputs"][2]["name"], "axis");
    assert_eq!(op["outputs"][0]["shape"], json!([2]));
    let attrs: Vec<&str> = op["attrs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert!(attrs.contains(&"batch_dims"), "{attrs:?}");
    assert!(
        !attrs
            .iter()
            .any(|a| a.starts_with('_') || a.ends_with("_kernelname")),
        "{attrs:?}"
    );
    let k = &case["kernel"];
    assert_eq!(k["bin_file_name"], GATHER_BIN);
    assert!(ends_with(
        &k["json_path"],
        &format!("dfx/ops/0/{GATHER_BIN}.json")
    ));
    assert_eq!(k["bin_path"], Value::Null);
    assert_eq!(k["block_dim"], 32);
    assert_eq!(k["core_type"], "AiCore");
    assert_eq!(k["kernel_symbol"], format!("{GATHER_BIN}__kernel0"));
    assert_eq!(case["dump"], Value::Null);
    let m = missing(&case);
    assert!(
        m.iter()
            .any(|m| m == &format!("kernel binary {GATHER_BIN}.o not found")),
        "{m:?}"
    );
    assert!(
        m.iter()
            .any(|m| m.starts_with("no dump file of the operator")),
        "{m:?}"
    );
    // The same failure printed in two plogs is one error.
    assert_eq!(case["notes"], json!([]));
    // The OpUT case takes the runtime shapes; the run config has msaicerr's exact key set.
    assert_eq!(compile_scripts(&out), 1);
    let script = std::fs::read_to_string(out.join("test_GatherV2.py")).unwrap();
    assert!(script.contains(r#"{"shape": (64,), "dtype": "float32", "format": "ND", "ori_shape": (64,), "ori_format": "ND", "param_type": "input"}"#), "{script}");
    assert!(script.contains(r#"ut_case = OpUT("GatherV2", None, None)"#));
    assert!(script.contains("        # Attributes in IR order (the graph's _ir_attr_names):\n        0,  # batch_dims\n        False,  # is_preprocessed\n        False,  # negative_index_support\n"), "{script}");
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run_config.json")).unwrap())
            .unwrap();
    assert_eq!(
        cfg,
        json!({"cce_file": null, "bin_path": null, "json_path": format!("kernel/{GATHER_BIN}.json"),
               "tiling_data": null, "tiling_key": 0, "block_dim": 32,
               "input_file_list": [null, null, null], "output_file_list": ["run_outputs/output_0.bin"],
               "kernel_name": format!("{GATHER_BIN}__kernel0")})
    );
    assert!(out.join(format!("kernel/{GATHER_BIN}.json")).is_file());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ge_task_kernel_name_alone_finds_the_node() {
    let out = out_dir("task-name");
    let root = sample("cann/asys-20230713-aicore-collection/dfx");
    let case = repro(
        &[
            "--kernel",
            "2_0_11_GatherV2",
            "--graph",
            &path_arg(&root.join("graph")),
            "--kernel-meta",
            &path_arg(&root.join("ops")),
            "--path",
            "runtime",
        ],
        &out,
        1,
    );
    assert_eq!(case["target"]["source"], "kernel");
    assert_eq!(case["op"]["name"], "GatherV2");
    assert_eq!(case["op"]["matched_by"], "ge_task_name");
    assert_eq!(case["kernel"]["bin_file_name"], GATHER_BIN);
    assert_eq!(compile_scripts(&out), 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn slog_plog_with_transdata_graph_and_kernel_meta() {
    let out = out_dir("transdata");
    let plog = sample("cann/slog-2021-offline-model/slog/plog/plog_20201224011051563.log");
    let graph = sample("cann/graph-transdata-kernel-meta/ge_proto_00000062_Build.txt");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&plog),
            "--graph",
            &path_arg(&graph),
        ],
        &out,
        1,
    );
    let t = &case["target"];
    assert_eq!(t["kernel_name"], "-1_0_1_trans_TransData_0");
    assert_eq!(
        (
            t["device_id"].clone(),
            t["stream_id"].clone(),
            t["task_id"].clone()
        ),
        (json!(1), json!(3), json!(5))
    );
    assert_eq!(case["op"]["name"], "trans_TransData_0");
    assert_eq!(case["op"]["op_type"], "TransData");
    assert_eq!(case["op"]["matched_by"], "ge_task_name");
    assert_eq!(case["op"]["inputs"][0]["format"], "NCHW");
    assert_eq!(case["op"]["outputs"][0]["format"], "NC1HWC0");
    assert_eq!(
        case["op"]["outputs"][0]["shape"],
        json!([1, 1, 224, 224, 16])
    );
    assert_eq!(
        case["op"]["outputs"][0]["ori_shape"],
        json!([1, 3, 224, 224])
    );
    assert_eq!(case["kernel"]["bin_file_name"], TRANSDATA_BIN);
    assert!(ends_with(
        &case["kernel"]["json_path"],
        &format!("graph-transdata-kernel-meta/kernel_meta/{TRANSDATA_BIN}.json")
    ));
    assert_eq!(case["kernel"]["block_dim"], 2);
    assert_eq!(compile_scripts(&out), 1);
    // A graph and no dump: random inputs of the graph's shapes.
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme
            .contains("runs the kernel on random inputs of the graph's shapes (no dump was given"),
        "{readme}"
    );
    assert!(readme.contains("- blockDim: 2\n"), "{readme}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn ascendc_kernel_name_strips_the_tiling_key() {
    let out = out_dir("gatherv3");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&sample("cann/asys-20250508-gatherv3-assert")),
        ],
        &out,
        1,
    );
    assert_eq!(
        case["target"]["kernel_name"],
        format!("{GATHERV3_BIN}_10330")
    );
    assert_eq!(case["target"]["stream_id"], 2);
    assert_eq!(case["target"]["task_id"], 1);
    let k = &case["kernel"];
    assert_eq!(k["bin_file_name"], GATHERV3_BIN);
    assert_eq!(k["tiling_key"], 10330);
    assert!(ends_with(
        &k["json_path"],
        &format!("dfx/ops/{GATHERV3_BIN}.json")
    ));
    assert_eq!(k["core_type"], "VectorCore");
    assert_eq!(case["op"], Value::Null);
    let m = missing(&case);
    assert!(m.iter().any(|m| m.starts_with("no GE graph dump")), "{m:?}");
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run_config.json")).unwrap())
            .unwrap();
    assert_eq!(cfg["tiling_key"], 10330);
    assert_eq!(
        cfg["block_dim"], 48,
        "the log's blockDim wins over the JSON's -1"
    );
    // No dump and no graph: the README promises no inputs at all, and reads the JSON's -1.
    let readme = std::fs::read_to_string(out.join("README.md")).unwrap();
    assert!(
        readme.contains("cannot run as written: without a GE graph or a dump npgx knows no input"),
        "{readme}"
    );
    assert!(
        readme.contains("- blockDim: -1 in the kernel JSON (the tiling sets it at run time"),
        "{readme}"
    );
    let script = std::fs::read_dir(&out)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.extension().is_some_and(|x| x == "py"))
        .unwrap();
    let script = std::fs::read_to_string(script).unwrap();
    assert!(
        script.contains(&format!(
            "# Kernel: binary not found (its JSON: kernel/{GATHERV3_BIN}.json)"
        )),
        "{script}"
    );
    let notes = case["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap()
            .contains("aclnnIndexSelect_0_L0.GatherV3AiCore.1.20250508095618530")),
        "{notes:?}"
    );
    assert_eq!(compile_scripts(&out), 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn mix_aic_kernel_from_ffts_collection() {
    let out = out_dir("ffts");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&sample("cann/asys-20240912-ffts-tiling")),
        ],
        &out,
        1,
    );
    let t = &case["target"];
    assert_eq!(
        t["kernel_name"],
        "FlashAttentionScore_5881aeec01e51adb01fb1db8be1c04f0_10000000000022420943_mix_aic"
    );
    assert_eq!(
        (
            t["device_id"].clone(),
            t["stream_id"].clone(),
            t["task_id"].clone()
        ),
        (json!(0), json!(42), json!(1))
    );
    assert_eq!(case["kernel"]["bin_file_name"], Value::Null);
    assert_eq!(compile_scripts(&out), 1);
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn kernel_symbol_via_opname_kernelname_attribute() {
    let out = out_dir("gatherv2d");
    let root = sample("cann/graph-gatherv2d-train");
    let case = repro(
        &[
            "--kernel",
            "te_gatherv2d_219e053cbbb768fc0_3cf4deb0daff668d__kernel0",
            "--graph",
            &path_arg(&root),
            "--path",
            "accuracy",
        ],
        &out,
        1,
    );
    let op = &case["op"];
    assert_eq!(op["name"], "GatherV2");
    assert_eq!(op["op_type"], "GatherV2D");
    assert_eq!(op["matched_by"], "kernel_attr:GatherV2_kernelname");
    assert_eq!(
        op["inputs"][0],
        json!({"index": 0, "name": "x", "dtype": "DT_FLOAT", "shape": [32, 32], "format": "NHWC",
               "ori_shape": [32, 32], "ori_format": "NHWC", "source": "_arg_Placeholder_0_0_0_arg:0"})
    );
    assert_eq!(op["inputs"][1]["name"], "indices");
    let axis = op["attrs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "axis")
        .unwrap();
    assert_eq!(axis, &json!({"name": "axis", "kind": "int", "value": 0}));
    assert_eq!(case["kernel"]["block_dim"], 16);
    // The 1-byte placeholder named like an exception dump is not a dump.
    assert_eq!(case["dump"], Value::Null);
    assert_eq!(compile_scripts(&out), 1);
    let _ = std::fs::remove_dir_all(&out);
}

/// Runs a generated accuracy script with `--json` (and `extra`) and returns its exit code and
/// report.
fn run_accuracy(out: &Path, extra: &[&str]) -> (i32, Value) {
    let script = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("repro_")
        })
        .expect("repro_<op>.py written");
    let o = Command::new(crate::common::test_python())
        .arg(&script)
        .arg("--json")
        .args(extra)
        .output()
        .expect("python runs");
    let report: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), report)
}

fn close(a: &Value, b: &Value) -> bool {
    (a.as_f64().unwrap() - b.as_f64().unwrap()).abs() <= 1e-9
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("repro/expected.json")).unwrap()).unwrap()
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn accuracy_script_finds_the_planted_difference() {
    let exp = &expected()["accuracy"]["add"];
    let root = fixture("repro/accuracy");
    let out = out_dir("acc-add");
    let name = exp["op_name"].as_str().unwrap();
    let case = repro(
        &[
            "--op",
            name,
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&root.join("dump")),
        ],
        &out,
        0,
    );
    assert_eq!(case["path"], "accuracy");
    assert_eq!(case["op"]["name"], name);
    assert_eq!(case["op"]["op_type"], "Add");
    assert!(ends_with(
        &case["op"]["graph_file"],
        "ge_proto_00000003_Build.txt"
    ));
    assert_eq!(
        case["op"]["inputs"].as_array().unwrap().len(),
        2,
        "the control edge is not an input"
    );
    assert_eq!(case["op"]["inputs"][0]["source"], "x_a:0");
    let d = &case["dump"];
    assert!(ends_with(&d["file"], exp["dump_file"].as_str().unwrap()));
    assert_eq!(d["op_name"], name);
    assert_eq!(
        (d["task_id"].clone(), d["stream_id"].clone()),
        (json!(12), json!(3))
    );
    let npys: Vec<&Value> = d["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| &t["npy"])
        .collect();
    assert_eq!(
        npys,
        vec![
            "inputs/input_0.npy",
            "inputs/input_1.npy",
            "outputs/output_0.npy"
        ]
    );
    // Kernel files are not needed for the accuracy path: a note, not a missing item.
    assert_eq!(missing(&case), Vec::<String>::new());
    assert_eq!(compile_scripts(&out), 1);
    let (code, report) = run_accuracy(&out, &[]);
    assert_eq!(code, 1, "{report}");
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(report["op_name"], name);
    assert_eq!(report["npu_ran"], false);
    assert!(
        report["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("NPU part SKIPPED")),
        "{report}"
    );
    let r = &report["results"][0];
    assert_eq!(r["comparison"], "dump_vs_golden");
    assert_eq!(r["ok"], false);
    for k in [
        "max_abs_error",
        "max_rel_error",
        "cosine",
        "thousandth",
        "within_tolerance",
    ] {
        assert!(
            close(&r[k], &exp["dump_vs_golden"][k]),
            "{k}: {} vs {}",
            r[k],
            exp["dump_vs_golden"][k]
        );
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn accuracy_script_passes_on_a_fractal_nz_bf16_matmul() {
    let exp = &expected()["accuracy"]["matmul"];
    let root = fixture("repro/accuracy");
    let out = out_dir("acc-mm");
    let case = repro(
        &[
            "--kernel",
            "te_matmulv2_99_1__kernel0",
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&root.join("dump")),
        ],
        &out,
        0,
    );
    assert_eq!(case["op"]["name"], "MatMul_7");
    assert_eq!(case["op"]["matched_by"], "kernel_attr:MatMul_7_kernelname");
    let x1 = &case["dump"]["tensors"][0];
    assert_eq!(x1["format"], "FRACTAL_NZ");
    assert_eq!(x1["device_shape"], exp["x1_device_shape"]);
    assert_eq!(x1["npy_shape"], json!([20, 18]));
    assert_eq!(x1["layout"], "logical");
    assert_eq!(x1["npy_dtype"], "float32");
    assert_eq!(x1["device_npy"], "inputs/input_0.device.npy");
    assert!(x1["note"]
        .as_str()
        .unwrap()
        .starts_with("DT_BF16 values written as float32"));
    // The logical x1 equals what the writer put in, element for element.
    let check = Command::new(crate::common::test_python())
        .arg("-c")
        .arg("import json,sys,numpy as np; a=np.load(sys.argv[1]); e=np.array(json.load(open(sys.argv[2]))['accuracy']['matmul']['x1_logical'],dtype=np.float32); sys.exit(0 if a.dtype==np.float32 and a.shape==e.shape and np.array_equal(a,e) else 1)")
        .arg(out.join("inputs/input_0.npy"))
        .arg(fixture("repro/expected.json"))
        .status()
        .unwrap();
    assert!(
        check.success(),
        "inputs/input_0.npy differs from the logical tensor"
    );
    let (code, report) = run_accuracy(&out, &["--skip-npu"]);
    assert_eq!(code, 0, "{report}");
    assert_eq!(report["verdict"], "PASS");
    let r = &report["results"][0];
    assert_eq!(r["ok"], true);
    assert!(close(&r["cosine"], &exp["dump_vs_golden"]["cosine"]));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn runtime_case_from_plog_with_dump_kernel_and_tiling() {
    let exp = &expected()["runtime"];
    let root = fixture("repro/runtime");
    let out = out_dir("runtime");
    let plog = root.join("log/debug/plog/plog-4242_20250101120000001.log");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&plog),
            "--graph",
            &path_arg(&root.join("graph")),
            "--kernel-meta",
            &path_arg(&root.join("kernel_meta")),
            "--dump",
            &path_arg(&root),
        ],
        &out,
        0,
    );
    let base = exp["bin_file_name"].as_str().unwrap();
    assert_eq!(case["target"]["kernel_name"], exp["kernel_name"]);
    assert_eq!(case["target"]["op_name"], exp["node"]);
    assert_eq!(case["target"]["evidence"]["line"], exp["plog_line"]);
    assert_eq!(case["op"]["name"], exp["node"]);
    assert_eq!(case["op"]["op_type"], "AddCustom");
    let k = &case["kernel"];
    assert_eq!(k["bin_file_name"], base);
    assert_eq!(k["tiling_key"], exp["tiling_key"]);
    assert!(ends_with(&k["bin_path"], &format!("kernel_meta/{base}.o")));
    assert_eq!(k["magic"], "RT_DEV_BINARY_MAGIC_ELF_AIVEC");
    assert!(ends_with(
        &case["dump"]["file"],
        exp["dump_file"].as_str().unwrap()
    ));
    assert_eq!(case["dump"]["stream_id"], Value::Null);
    assert_eq!(case["dump"]["tiling_data"], "tiling_data.bin");
    assert_eq!(missing(&case), Vec::<String>::new());
    let tiling: Vec<u8> = exp["tiling_data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap() as u8)
        .collect();
    assert_eq!(std::fs::read(out.join("tiling_data.bin")).unwrap(), tiling);
    let cfg: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("run_config.json")).unwrap())
            .unwrap();
    assert_eq!(
        cfg,
        json!({"cce_file": null, "bin_path": format!("kernel/{base}.o"), "json_path": format!("kernel/{base}.json"),
               "tiling_data": "tiling_data.bin", "tiling_key": 10330, "block_dim": 8,
               "input_file_list": ["inputs/input_0.npy", "inputs/input_1.npy"],
               "output_file_list": ["run_outputs/output_0.bin"], "kernel_name": format!("{base}_mix_aiv")})
    );
    assert_eq!(
        std::fs::read(out.join(format!("kernel/{base}.o"))).unwrap()[..4],
        *b"\x7fELF"
    );
    assert_eq!(compile_scripts(&out), 1);
    let script = std::fs::read_to_string(out.join("test_blk_1_AddCustom_2.py")).unwrap();
    // Dynamic graph dims (-1) are replaced by the [AIC_INFO] runtime shape; quotes are escaped.
    assert!(script.contains(r#"{"shape": (4, 16), "dtype": "float16", "format": "ND", "ori_shape": (4, 16), "ori_format": "ND", "param_type": "input", "value": value("inputs/input_0.npy")},  # input x"#), "{script}");
    assert!(script.contains(r#""fast \"v2\"",  # mode"#), "{script}");
    assert!(script.contains(&format!(
        r#""bin_path": os.path.join(HERE, "kernel/{base}.o"),"#
    )));
    // The OpUT case fails cleanly where op_test_frame is absent.
    let o = Command::new(crate::common::test_python())
        .arg(out.join("test_blk_1_AddCustom_2.py"))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("op_test_frame cannot be imported"));
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn placeholder_kernel_binary_is_reported_unusable() {
    let out = out_dir("placeholder");
    let meta = fixture("repro/runtime/kernel_meta");
    let case = repro(
        &[
            "--kernel",
            "te_placeholder_1__kernel0",
            "--kernel-meta",
            &path_arg(&meta),
            "--path",
            "runtime",
        ],
        &out,
        1,
    );
    assert_eq!(case["kernel"]["bin_path"], Value::Null);
    assert_eq!(case["kernel"]["block_dim"], 1);
    let m = missing(&case);
    assert!(
        m.iter().any(|m| m.ends_with(
            "te_placeholder_1.o: not an ELF object (a placeholder?), kernel binary unusable"
        )),
        "{m:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn refuses_without_a_target_or_into_a_used_directory() {
    let out = out_dir("refuse");
    let o = npgx(["repro", "-o", &path_arg(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("give --from-aicore, --op or --kernel"));
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("mine.txt"), "user data").unwrap();
    let o = npgx(["repro", "--op", "x", "-o", &path_arg(&out)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("directory is not empty"));
    let o = npgx(["repro", "--op", "x", "--force", "-o", &path_arg(&out)]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        std::fs::read_to_string(out.join("mine.txt")).unwrap(),
        "user data"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn hostile_op_names_stay_inert_and_unmapped_types_get_placeholders() {
    let out = out_dir("hostile");
    let name = "a\"b'c\\d\ne/f.g\u{e9}";
    let case = repro(&["--op", name, "--path", "accuracy"], &out, 1);
    assert_eq!(case["target"]["op_name"], name);
    let m = missing(&case);
    assert!(
        m.iter().any(|m| m.starts_with("no GE graph given")),
        "{m:?}"
    );
    assert!(m.iter().any(|m| m.starts_with("no dump given")), "{m:?}");
    assert_eq!(compile_scripts(&out), 1);
    let (code, report) = run_accuracy(&out, &["--skip-npu"]);
    assert_eq!(code, 3, "{report}");
    assert_eq!(report["op_name"], name);
    assert_eq!(report["verdict"], "INCOMPLETE");
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("CPU golden skipped: no CPU golden for op type")),
        "{notes:?}"
    );
    assert!(
        notes.iter().any(|n| n.starts_with("NPU part SKIPPED: ")),
        "{notes:?}"
    );
    // --format json prints the case.json document.
    let out2 = out_dir("hostile-json");
    let o = npgx([
        "repro",
        "--op",
        name,
        "--format",
        "json",
        "-o",
        &path_arg(&out2),
    ]);
    let printed: Value = serde_json::from_slice(&o.stdout).unwrap();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(out2.join("case.json")).unwrap()).unwrap();
    assert_eq!(printed, written);
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_dir_all(&out2);
}

#[test]
fn second_error_of_a_collection() {
    let out = out_dir("second");
    let case = repro(
        &[
            "--from-aicore",
            &path_arg(&sample("cann/slog-2021-offline-model")),
            "--error",
            "2",
        ],
        &out,
        1,
    );
    let t = &case["target"];
    assert_eq!(t["kernel_name"], "-1_0_1_trans_TransData_170");
    assert_eq!(
        (
            t["device_id"].clone(),
            t["stream_id"].clone(),
            t["task_id"].clone()
        ),
        (json!(0), json!(5), json!(61))
    );
    assert!(ends_with(
        &t["evidence"]["file"],
        "plog-10043_20210331185941176.log"
    ));
    let o = npgx([
        "repro",
        "--from-aicore",
        &path_arg(&sample("cann/slog-2021-offline-model")),
        "--error",
        "3",
        "-o",
        &path_arg(&out_dir("third")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr)
        .contains("2 device error(s) name an operator, so there is no error number 3"));
    let _ = std::fs::remove_dir_all(&out);
    // A collective timeout the device reports names no operator: nothing to rerun, and the
    // message says where to look instead (lines written from the runtime's format).
    let log = out_dir("hccl-timeout").with_extension("log");
    std::fs::write(
        &log,
        "EI9999: [PID: 1] 2025-01-01-00:00:00.000.000 The error from device(chipId:5, dieId:0), serial number is 3, hccl fftsplus task timeout occurred during task execution, stream_id:7, sq_id:7, task_id:5990, stuck notify num:1, timeout:1836.\n",
    )
    .unwrap();
    let o = npgx([
        "repro",
        "--from-aicore",
        &path_arg(&log),
        "-o",
        &path_arg(&out_dir("hccl")),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("none of its 1 device error(s) names an operator")
            && stderr.contains("read every rank's logs"),
        "{stderr}"
    );
    let _ = std::fs::remove_file(&log);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_dump_file_given_directly_is_used_and_checked() {
    let exp = &expected()["accuracy"]["add"];
    let root = fixture("repro/accuracy");
    let file = root
        .join("dump/20250101120000/0/ge_default_20250101_1/1/0")
        .join(exp["dump_file"].as_str().unwrap());
    let out = out_dir("direct");
    let case = repro(
        &[
            "--op",
            "MatMul_7",
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&file),
        ],
        &out,
        0,
    );
    assert_eq!(case["dump"]["op_name"], exp["op_name"]);
    let notes = case["notes"].as_array().unwrap();
    assert!(
        notes
            .iter()
            .any(|n| n.as_str().unwrap().starts_with(&format!(
                "the dump header names op {:?}, not \"MatMul_7\"",
                exp["op_name"].as_str().unwrap()
            ))),
        "{notes:?}"
    );
    assert!(
        notes.contains(&json!(
            "input 0: the graph says DT_BF16, the dump DT_FLOAT16"
        )),
        "{notes:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn msaccucmp_converted_npy_files_are_taken_as_they_are() {
    let exp = &expected()["accuracy"]["add"];
    let root = fixture("repro/accuracy");
    let out = out_dir("npy");
    let name = exp["op_name"].as_str().unwrap();
    let case = repro(
        &[
            "--op",
            name,
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&root.join("npy")),
        ],
        &out,
        0,
    );
    let d = &case["dump"];
    assert_eq!(d["framing"], "npy");
    assert_eq!(d["task_id"], 12);
    let t: Vec<(Value, Value, Value)> = d["tensors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["npy"].clone(), t["dtype"].clone(), t["npy_shape"].clone()))
        .collect();
    assert_eq!(
        t,
        vec![
            (
                json!("inputs/input_0.npy"),
                json!("DT_FLOAT16"),
                json!([3, 5])
            ),
            (
                json!("inputs/input_1.npy"),
                json!("DT_FLOAT16"),
                json!([3, 5])
            ),
            (
                json!("outputs/output_0.npy"),
                json!("DT_FLOAT16"),
                json!([3, 5])
            ),
        ]
    );
    let (code, report) = run_accuracy(&out, &["--skip-npu"]);
    assert_eq!(code, 1, "{report}");
    assert!(close(
        &report["results"][0]["max_abs_error"],
        &exp["dump_vs_golden"]["max_abs_error"]
    ));
    let _ = std::fs::remove_dir_all(&out);
}

/// A test-only stand-in for torch_npu that runs "NPU" tensors on the CPU, so the NPU branch of
/// the generated script (table call, comparisons, verdict) is exercised without an NPU.
const CPU_STAND_IN: &str = "import types, torch\n\
torch.npu = types.SimpleNamespace(is_available=lambda: True, set_device=lambda d: None, synchronize=lambda: None)\n\
torch.Tensor.npu = lambda self: self\n";

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn accuracy_script_npu_branch_with_a_cpu_stand_in() {
    let has_torch = Command::new(crate::common::test_python())
        .args(["-c", "import torch"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        has_torch,
        "the test venv has torch (scripts/requirements-test.txt)"
    );
    let exp = &expected()["accuracy"]["add"];
    let root = fixture("repro/accuracy");
    let out = out_dir("standin");
    let name = exp["op_name"].as_str().unwrap();
    repro(
        &[
            "--op",
            name,
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&root.join("dump")),
        ],
        &out,
        0,
    );
    let stub = out.join("stub");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(stub.join("torch_npu.py"), CPU_STAND_IN).unwrap();
    let script = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("repro_")
        })
        .unwrap();
    let o = Command::new(crate::common::test_python())
        .arg(&script)
        .arg("--json")
        .env("PYTHONPATH", &stub)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    assert_eq!(report["npu_ran"], true, "{report}");
    let verdicts: Vec<(Value, Value)> = report["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["comparison"].clone(), r["ok"].clone()))
        .collect();
    // The single op agrees with the golden; the graph's dumped output (planted error) does not.
    assert_eq!(
        verdicts,
        vec![
            (json!("dump_vs_golden"), json!(false)),
            (json!("npu_vs_golden"), json!(true)),
            (json!("npu_vs_dump"), json!(false)),
        ]
    );
    assert_eq!(report["verdict"], "FAIL");
    assert_eq!(o.status.code(), Some(1));
    // An operator that raises on the "NPU" is a failed comparison, not a crash.
    std::fs::write(
        stub.join("torch_npu.py"),
        format!("{CPU_STAND_IN}torch.add = None\n"),
    )
    .unwrap();
    let o = Command::new(crate::common::test_python())
        .arg(&script)
        .arg("--json")
        .env("PYTHONPATH", &stub)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&o.stdout).unwrap();
    let last = report["results"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["comparison"], "npu_run");
    assert_eq!(last["ok"], false);
    assert!(
        report["notes"][0]
            .as_str()
            .unwrap()
            .starts_with("NPU run FAILED: TypeError"),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Dumped inputs that do not fit the operator ([3, 5] * [4, 7]): the CPU golden cannot be
/// computed, and the script says why and exits 3 ("nothing could be compared") instead of
/// dying with a traceback and exit 1 ("a comparison failed").
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn accuracy_script_exits_3_when_the_golden_cannot_be_computed() {
    let exp = &expected()["accuracy"]["mul_misfit"];
    let root = fixture("repro/accuracy");
    let out = out_dir("acc-mul-misfit");
    let case = repro(
        &[
            "--op",
            exp["op_name"].as_str().unwrap(),
            "--graph",
            &path_arg(&root.join("graph")),
            "--dump",
            &path_arg(&root.join("dump")),
        ],
        &out,
        0,
    );
    assert_eq!(case["op"]["op_type"], "Mul");
    let (code, report) = run_accuracy(&out, &["--skip-npu"]);
    assert_eq!(code, exp["exit_code"].as_i64().unwrap() as i32, "{report}");
    assert_eq!(report["verdict"], exp["verdict"]);
    assert_eq!(report["results"], json!([]));
    let notes: Vec<&str> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.starts_with("CPU golden could not be computed")
                && n.contains("[3, 5]")
                && n.contains("[4, 7]")),
        "{notes:?}"
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// The accuracy template is a real Python file that compiles as it is (compiled in memory: no
/// `__pycache__` is written into the source tree).
#[test]
fn accuracy_template_compiles_on_its_own() {
    let o = Command::new(crate::common::test_python())
        .args([
            "-c",
            "import sys; compile(open(sys.argv[1], encoding='utf-8').read(), sys.argv[1], 'exec')",
        ])
        .arg(common::repo().join("src/repro/accuracy_template.py"))
        .output()
        .expect("python runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
