//! `npgx aicore` on every log sample (README "dev / stream / task / kernel / codes" columns) and
//! on the five AI Core / FFTS+ failures of the real CANN collections.

use serde_json::{json, Value};

use crate::common::{npgx, npgx_json, sample};

/// Runs `npgx aicore --format json`; exit 1 when errors are found, 0 when none.
fn errors(rel: &str) -> Vec<Value> {
    let p = sample(rel);
    let out = npgx(["aicore", p.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON document");
    assert_eq!(v["schema"], "npgx.aicore");
    assert_eq!(v["schema_version"], 1);
    let list = v["errors"].as_array().expect("errors").clone();
    assert_eq!(
        out.status.code(),
        Some(if list.is_empty() { 0 } else { 1 }),
        "{rel}"
    );
    list
}

fn one(rel: &str) -> Value {
    let v = errors(rel);
    assert_eq!(v.len(), 1, "{rel}: {v:#?}");
    v.into_iter().next().unwrap()
}

/// `(value, line)` of a field.
fn f(e: &Value, key: &str) -> (Value, u64) {
    let x = &e[key];
    assert!(x.is_object(), "missing {key} in {e}");
    (x["value"].clone(), x["line"].as_u64().unwrap())
}

fn absent(e: &Value, keys: &[&str]) {
    for k in keys {
        assert!(e.get(*k).is_none(), "{k} should be absent: {}", e[*k]);
    }
}

#[test]
fn s01_aivec_gatherv3() {
    let e = one("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    assert_eq!(e["kind"], "aivec");
    assert_eq!(e["pid"], 155320);
    assert_eq!(f(&e, "device_id"), (json!(0), 13));
    assert_eq!(f(&e, "chip_id"), (json!(0), 3));
    assert_eq!(f(&e, "die_id"), (json!(0), 3));
    assert_eq!(f(&e, "stream_id"), (json!(2), 13));
    assert_eq!(f(&e, "report_stream_id"), (json!(2), 13));
    assert_eq!(f(&e, "task_id"), (json!(1), 13));
    assert_eq!(f(&e, "flip_num"), (json!(0), 13));
    assert_eq!(
        f(&e, "kernel_name"),
        (
            json!("GatherV3_9e31943a1a48bf81ddff1fc6379e0be3_high_performance_10330"),
            13
        )
    );
    assert_eq!(f(&e, "kernel_info_ext"), (json!("none"), 13));
    assert_eq!(f(&e, "program_id"), (json!(0), 13));
    assert_eq!(f(&e, "hash"), (json!("9005124917278870274"), 13));
    assert_eq!(f(&e, "tiling_key"), (json!("10330"), 16));
    assert_eq!(f(&e, "block_dim"), (json!(48), 16));
    assert_eq!(f(&e, "ret_code"), (json!("0x31"), 7));
    assert_eq!(f(&e, "acl_code"), (json!(507035), 43));
    assert_eq!(f(&e, "inner_code"), (json!("0x715005e"), 43));
    assert_eq!(
        e["cann_codes"],
        json!([{"value": "EZ9999", "line": 2}, {"value": "EE8888", "line": 44}])
    );
    assert_eq!(e["first_line"], 1, "the Task run failed line is evidence");
    let c = &e["cores"][0];
    assert_eq!(f(c, "serial"), (json!(19), 3));
    assert_eq!(f(c, "core_id"), (json!(0), 3));
    assert_eq!(f(c, "error_code"), (json!("0"), 3));
    assert_eq!(f(c, "errcode"), (json!(["0", "0", "0"]), 5));
    assert_eq!(f(c, "error_str"), (json!("timeout or trap error."), 5));
    assert_eq!(f(c, "sub_err_type"), (json!("2"), 5));
    assert!(
        c.get("error_bits").is_none(),
        "all-zero code: timeout or trap"
    );
    assert_eq!(e["dump_files"][0]["value"], "/opt/twein/msaicerr_dev/aicerror/demo_no_cce/new/extra-info/data-dump/0/aclnnIndexSelect_0_L0.GatherV3AiCore.1.20250508095618530");
    assert_eq!(e["dump_files"][0]["line"], 30);
    assert!(e["decoded"]
        .as_array()
        .unwrap()
        .contains(&json!("retCode 0x31: vector core exception")));
    assert!(e["decoded"]
        .as_array()
        .unwrap()
        .contains(&json!("ACL 507035: vector core exception")));
    // The operator's own check that failed, with its source line: the index input is out of
    // range — what the user needs, before any dump.
    assert_eq!(
        e["asserts"],
        json!([{"value": {
            "source_file": "/home/phisik3/Ascend/CANN-7.8/opp/built-in/op_impl/ai_core/tbe/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h",
            "source_line": 137,
            "condition": "(0 <= val && val < this->gxSize_)",
            "message": "Index 100000000 out of range[0 655360)!"
        }, "line": 34}])
    );
    let p = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let text = String::from_utf8(npgx(["aicore", p.to_str().unwrap()]).stdout).unwrap();
    assert!(
        text.contains("kernel assert: /home/phisik3/Ascend/CANN-7.8/opp/built-in/op_impl/ai_core/tbe/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h:137: `(0 <= val && val < this->gxSize_)` failed: Index 100000000 out of range[0 655360)! (L34)"),
        "{text}"
    );
}

#[test]
fn the_real_plog_of_a_later_cann_names_the_same_check() {
    // CANN 8.2.RC1, the same operator: read without a change for it.
    let e = one("real/plog/hicann-oam-tools__plog-17890_202506017074109552.log");
    assert_eq!(e["asserts"][0]["line"], 396);
    let a = &e["asserts"][0]["value"];
    assert_eq!(
        (a["source_line"].clone(), a["message"].clone()),
        (json!(137), json!("Index 1000001 out of range[0 1)!"))
    );
    assert!(a["source_file"]
        .as_str()
        .unwrap()
        .ends_with("gather_v3/gather_v3_base.h"));
}

#[test]
fn s02_transdata_2021_kernel_and_model_task() {
    let e = one("logs/02-plog-raw-aicore-transdata-model-2021.log");
    assert_eq!(e["kind"], "aicore");
    assert_eq!(f(&e, "device_id"), (json!(0), 9));
    assert_eq!(
        f(&e, "stream_id"),
        (json!(5), 9),
        "the faulting kernel, not the model stream 2"
    );
    assert_eq!(f(&e, "task_id"), (json!(61), 9));
    assert_eq!(
        f(&e, "kernel_name"),
        (json!("-1_0_1_trans_TransData_170"), 9)
    );
    assert_eq!(
        f(&e, "func_name"),
        (
            json!("te_transdata_83d582522809a75b_7b991ec552621cd1_1__kernel0"),
            9
        )
    );
    assert_eq!(f(&e, "acl_code"), (json!(507011), 17));
    assert_eq!(f(&e, "inner_code"), (json!("0x7150050"), 13));
    absent(
        &e,
        &[
            "report_stream_id",
            "flip_num",
            "program_id",
            "hash",
            "ret_code",
        ],
    );
    let c = &e["cores"][0];
    assert_eq!(f(c, "error_code"), (json!("0x20000000000000"), 4));
    assert_eq!(
        f(c, "error_str"),
        (
            json!("VEC instruction error: the MASK instruction is all 0."),
            4
        )
    );
    assert_eq!(c["error_bits"], json!(["vec_illegal_mask (MASK all zero)"]));
    assert_eq!(f(c, "serial"), (json!(18), 4));
}

#[test]
fn s03_firmware_exception_print() {
    let e = one("logs/03-device-fw-tsch-exception-print-2020.log");
    assert_eq!(e["kind"], "firmware");
    assert_eq!(f(&e, "device_id"), (json!(0), 2));
    assert_eq!(f(&e, "stream_id"), (json!(517), 2));
    assert_eq!(f(&e, "task_id"), (json!(3), 2));
    assert_eq!(f(&e, "exception_code"), (json!("0xb4060006"), 2));
    assert_eq!(f(&e, "core_list"), (json!("0x3"), 30));
    let c = &e["cores"][0];
    assert_eq!(f(c, "core_id"), (json!(0), 31));
    assert_eq!(f(c, "error_code"), (json!("0x10"), 32));
    assert_eq!(
        c["registers"][0],
        json!({"name": "PC_START", "value": "0x108080056000", "line": 33})
    );
    absent(&e, &["kernel_name", "ret_code"]);
}

#[test]
fn s04_aic_info_block() {
    let e = one("logs/04-plog-raw-aicore-exec-stage-aic-info-2023.log");
    assert_eq!(f(&e, "device_id"), (json!(0), 19));
    assert_eq!(f(&e, "stream_id"), (json!(2), 19));
    assert_eq!(f(&e, "task_id"), (json!(6), 19));
    assert_eq!(f(&e, "kernel_name"), (json!("2_0_11_GatherV2"), 19));
    assert_eq!(f(&e, "program_id"), (json!(1), 19));
    assert_eq!(f(&e, "hash"), (json!("15656883929986130445"), 19));
    assert_eq!(f(&e, "ret_code"), (json!("0x26"), 1));
    let a = &e["aic_info"];
    assert_eq!(f(a, "node_name"), (json!("GatherV2"), 29));
    assert_eq!(f(a, "dev_func"), (json!("te_gatherv2_657cb48fa1743a43209d7bc779fe8c294760a5b09b3079a3323fdf18376fc408_1__kernel0"), 39));
    assert_eq!(f(a, "tiling_key"), (json!("0"), 42));
    assert_eq!(f(a, "block_dim"), (json!("32"), 34));
    assert_eq!(f(a, "op_file_path"), (json!("/home/liuzhenyu/tf"), 46));
    assert_eq!(
        a["tensors"][1]["value"],
        json!({"io": "input", "index": 1, "shape": "[2]", "format": "ND", "dtype": "DT_INT32", "addr": "0xfff4543037c0"})
    );
    let c = &e["cores"][0];
    assert_eq!(f(c, "serial"), (json!(367), 6));
    assert_eq!(f(c, "error_code"), (json!("0x10"), 6));
    assert_eq!(
        c["error_bits"],
        json!(["ccu_illegal_instr (bad binary or unaligned instruction address)"])
    );
    assert!(
        c["registers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "aicore int" && r["line"] == 9),
        "2023 extend info"
    );
}

#[test]
fn no_device_error_in_hccl_and_framework_only_samples() {
    for rel in [
        "logs/05-plog-raw-hccl-socket-timeout-fixture-2023.log",
        "logs/06-plog-raw-hccl-link-error-table-fixture-2025.log",
        "logs/07-plog-raw-sqe-status-pta-dispatch-timeout-fixture-2025.log",
        "logs/10-mindspore-doc-ei0002-notify-heartbeat-lost-2022.log",
        "logs/23-mindspore-eh9999-memcpy-vector-core-cann80rc2.log",
        "logs/29-hccl-raw-plog-mindie-commrootinfo.log",
        "logs/31-oom-el0004-memory-allocation-failure.log",
        "logs/33-ee1001-invalid-argument-tsdopen-507033.log",
        "logs/35-aclnn-ez9903-runtime-error-multiline.log",
        "logs/39-mindspore-device-format-getnext-507011-2023.log",
    ] {
        assert!(errors(rel).is_empty(), "{rel}");
    }
    // A log that names a device fault's runtime number without its record says where the record
    // is (the text on stderr, the same warning in the JSON); the others name none.
    let rel = "logs/23-mindspore-eh9999-memcpy-vector-core-cann80rc2.log";
    let p = sample(rel);
    let out = npgx(["aicore", p.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(":6: names runtime error 507035 (vector core exception) but no input holds a device-error record"),
        "{stderr}"
    );
    let v = npgx_json(["aicore", p.to_str().unwrap(), "--format", "json"], 0);
    let warned = v["warnings"].as_array().expect("warnings");
    assert!(
        warned.iter().any(|w| w["line"] == 6
            && w["message"]
                .as_str()
                .is_some_and(|m| m.contains("debug/plog"))),
        "{warned:?}"
    );
    let p = sample("logs/31-oom-el0004-memory-allocation-failure.log");
    let out = npgx(["aicore", p.to_str().unwrap()]);
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("names runtime error"),
        "a memory failure is no device fault"
    );
}

#[test]
fn s08_core_list_2021() {
    let e = one("logs/08-mindspore-doc-ez9999-core-list-add-2021.log");
    assert_eq!(f(&e, "device_id"), (json!(0), 12));
    assert_eq!(f(&e, "stream_id"), (json!(14), 12));
    assert_eq!(f(&e, "report_stream_id"), (json!(17), 12));
    assert_eq!(f(&e, "task_id"), (json!(13), 12));
    assert_eq!(
        f(&e, "kernel_name"),
        (json!("add_13570952190744021808_0__kernel0"), 12)
    );
    assert_eq!(
        f(&e, "func_name"),
        (json!("add_13570952190744021808_0__kernel0"), 12)
    );
    assert_eq!(f(&e, "program_id"), (json!(8), 12));
    assert_eq!(f(&e, "hash"), (json!("14046644073217913723"), 12));
    let c = &e["cores"][0];
    assert_eq!(
        f(c, "device"),
        (json!(3), 10),
        "device(3) in the core line: physical id"
    );
    assert_eq!(f(c, "core_list"), (json!("0-0"), 10));
    assert_eq!(f(c, "core_id"), (json!(0), 11));
    assert_eq!(f(c, "error_code"), (json!("0x800000"), 11));
}

#[test]
fn s09_aicpu_getnext() {
    let e = one("logs/09-mindspore-doc-e39999-aicpu-getnext-2021.log");
    assert_eq!(e["kind"], "aicpu");
    assert_eq!(f(&e, "device_id"), (json!(0), 2));
    assert_eq!(f(&e, "stream_id"), (json!(116), 2));
    assert_eq!(f(&e, "task_id"), (json!(2), 2));
    assert_eq!(f(&e, "kernel_name"), (json!("GetNext"), 2));
    assert_eq!(f(&e, "so_name"), (json!("libaicpu_kernels.so"), 2));
    assert_eq!(f(&e, "acl_code"), (json!(507011), 7));
    assert_eq!(
        e["last_line"], 18,
        "the E39999 item repeats the kernel line"
    );
    absent(&e, &["op_name", "ret_code"]);
}

#[test]
fn s11_a5_decimal_error_code() {
    let e = one("logs/11-ptoas-a5-aicore-errcode95-david-507015.log");
    assert_eq!(e["kind"], "aicore");
    assert_eq!(f(&e, "chip_id"), (json!(0), 3));
    assert_eq!(f(&e, "die_id"), (json!(0), 3));
    absent(
        &e,
        &[
            "device_id",
            "stream_id",
            "task_id",
            "kernel_name",
            "ret_code",
        ],
    );
    let c = &e["cores"][0];
    assert_eq!(f(c, "error_code"), (json!("95"), 3));
    assert_eq!(f(c, "errcode"), (json!(["95"]), 5));
    assert_eq!(f(c, "sub_err_type"), (json!("0x4"), 5));
    assert_eq!(
        f(c, "error_str"),
        (
            json!("The DDR address of the MTE instruction is out of range."),
            5
        )
    );
    assert!(
        c.get("error_bits").is_none(),
        "an A5 decimal code is not a bit mask"
    );
    let regs = c["registers"].as_array().unwrap();
    assert!(regs.contains(&json!({"name": "su error info", "value": "0xfefffeec1efe9387,0x7fddfebff8007fff", "line": 3})));
    assert!(regs.contains(&json!({"name": "mte error", "value": "0x80000000", "line": 3})));
}

#[test]
fn s13_aivec_illegal_instruction() {
    let e = one("logs/13-ptoas-aivec-illegal-instr-0x10-507035.log");
    assert_eq!(e["kind"], "aivec");
    assert_eq!(f(&e, "chip_id"), (json!(1), 3));
    assert_eq!(f(&e, "ret_code"), (json!("0x31"), 6));
    let c = &e["cores"][0];
    assert_eq!(f(c, "core_id"), (json!(2), 3));
    assert_eq!(f(c, "serial"), (json!(777), 3));
    assert_eq!(f(c, "error_code"), (json!("0x10"), 3));
    assert_eq!(f(c, "errcode"), (json!(["0x10", "0", "0"]), 5));
    assert_eq!(f(c, "sub_err_type"), (json!("4"), 5));
    absent(&e, &["stream_id", "task_id", "kernel_name"]);
}

#[test]
fn s15_moe_dispatch_timeout() {
    let e = one("logs/15-vllm-aicore-timeout-moedispatch-fault-kernel-507014.log");
    assert_eq!(f(&e, "device_id"), (json!(0), 6));
    assert_eq!(f(&e, "stream_id"), (json!(2), 6));
    assert_eq!(f(&e, "report_stream_id"), (json!(2), 6));
    assert_eq!(f(&e, "task_id"), (json!(7267), 6));
    assert_eq!(
        f(&e, "kernel_name"),
        (
            json!("MoeDistributeDispatchV2_ND_ND_BF16_INT8_high_performance_2000001002"),
            6
        )
    );
    assert_eq!(f(&e, "program_id"), (json!(85), 6));
    assert_eq!(f(&e, "hash"), (json!("6122622606017578243"), 6));
    assert_eq!(f(&e, "ret_code"), (json!("0x25"), 1));
    assert_eq!(f(&e, "acl_code"), (json!(507014), 8));
}

#[test]
fn s17_dcache_ub_bus_error() {
    let e = one("logs/17-torchnpu-ez9999-aivec-dcache-ub-unindented-2025.log");
    assert_eq!(e["kind"], "aivec");
    assert_eq!(f(&e, "chip_id"), (json!(6), 2));
    assert_eq!(f(&e, "ret_code"), (json!("0x31"), 5));
    absent(&e, &["kernel_name", "stream_id", "task_id"]);
    let c = &e["cores"][0];
    assert_eq!(f(c, "core_id"), (json!(40), 2));
    assert_eq!(f(c, "error_code"), (json!("0"), 2));
    assert_eq!(f(c, "errcode"), (json!(["0", "0x8000", "0"]), 4));
    assert_eq!(f(c, "blk"), (json!(3), 4));
    assert_eq!(
        c["error_bits"],
        json!(["ccu_bus_err (D-cache <-> UB bus error)"])
    );
}

#[test]
fn s19_cut_after_program_id() {
    let e = one("logs/19-plog-empty-pname-dfx-info-mlaprolog-cann91.log");
    assert_eq!(f(&e, "device_id"), (json!(9), 7));
    assert_eq!(f(&e, "stream_id"), (json!(47), 7));
    assert_eq!(f(&e, "report_stream_id"), (json!(47), 7));
    assert_eq!(f(&e, "task_id"), (json!(23064), 7));
    assert_eq!(f(&e, "flip_num"), (json!(1564), 7));
    assert_eq!(
        f(&e, "kernel_name"),
        (
            json!("MlaPrologV3_18fe44a5baeea9556147056b8f507600_1836449"),
            7
        )
    );
    assert_eq!(f(&e, "ret_code"), (json!("0x26"), 3));
    absent(&e, &["program_id", "hash"]);
    assert!(e["dump_files"][0]["value"]
        .as_str()
        .unwrap()
        .ends_with("/extra-info/data-dump/1/exception_info.47.102521368.20260910085237489"));
}

#[test]
fn s21_aicpu_stars() {
    let e = one("logs/21-mindspore-e39999-aicpu-exception-thread-2024.log");
    assert_eq!(e["kind"], "aicpu");
    assert_eq!(f(&e, "chip_id"), (json!(0), 9));
    assert_eq!(f(&e, "device_id"), (json!(0), 13));
    assert_eq!(f(&e, "stream_id"), (json!(2), 9));
    assert_eq!(f(&e, "task_id"), (json!(19016), 9));
    assert_eq!(f(&e, "ret_code"), (json!("0x2a"), 11));
    assert_eq!(f(&e, "task_error_code"), (json!("2a"), 13));
    assert!(e["cores"][0]["registers"]
        .as_array()
        .unwrap()
        .contains(&json!({"name": "errcode", "value": "21008", "line": 9})));
    absent(&e, &["kernel_name", "op_name"]);
}

#[test]
fn s25_hccl_fftsplus_timeout_colon_form() {
    let e = one("logs/25-hccl-ei0002-notify-timeout-solution-traceback.log");
    assert_eq!(e["kind"], "hccl_fftsplus_timeout");
    assert_eq!(f(&e, "chip_id"), (json!(5), 5));
    assert_eq!(f(&e, "stream_id"), (json!(7), 5));
    assert_eq!(f(&e, "task_id"), (json!(9865), 5));
    assert_eq!(f(&e["cores"][0], "serial"), (json!(17), 5));
}

#[test]
fn s37_fftsplus_header_cut_mid_value() {
    let e = one("logs/37-el0003-invalid-argument-truncated-fftsplus.log");
    assert_eq!(e["kind"], "fftsplus_aicore");
    assert_eq!(f(&e, "chip_id"), (json!(6), 5));
    let c = &e["cores"][0];
    assert_eq!(f(c, "core_id"), (json!(3), 5));
    assert_eq!(f(c, "error_code"), (json!("0x800000"), 5));
    assert!(c["registers"]
        .as_array()
        .unwrap()
        .contains(&json!({"name": "para base", "value": "0x12c1454f2", "line": 5})));
    absent(&e, &["device_id", "stream_id", "task_id"]);
}

#[test]
fn every_log_sample_is_covered_here() {
    let src = include_str!("aicore.rs");
    for e in std::fs::read_dir(sample("logs")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".log") {
            let prefix = &name[..3];
            assert!(
                src.contains(&name) || src.contains(&format!("fn s{}", &prefix[..2])),
                "{name} has no test"
            );
        }
    }
}

/// The five distinct AI Core / FFTS+ failures of the CANN collections README.
#[test]
fn cann_collections_five_failures() {
    let all = npgx_json(
        [
            "aicore",
            sample("cann").to_str().unwrap(),
            "--format",
            "json",
        ],
        1,
    );
    let all = all["errors"].as_array().unwrap();
    let find = |kernel: &str, file_part: &str| -> &Value {
        all.iter()
            .find(|e| {
                e["kernel_name"]["value"] == kernel
                    && e["file"].as_str().unwrap().contains(file_part)
            })
            .unwrap_or_else(|| panic!("{kernel} in {file_part}"))
    };
    let ids = |e: &Value| {
        (
            e["device_id"]["value"].clone(),
            e["stream_id"]["value"].clone(),
            e["task_id"]["value"].clone(),
        )
    };

    let e = find(
        "2_0_11_GatherV2",
        "asys-20230713-aicore-collection/dfx/log/host/cann/debug/plog/plog-1216_",
    );
    assert_eq!(e["kind"], "fftsplus_aicore");
    assert_eq!(ids(e), (json!(0), json!(2), json!(6)));
    assert_eq!(e["program_id"]["value"], 1);
    assert_eq!(e["aic_info"]["node_name"]["value"], "GatherV2");

    let e = find(
        "FlashAttentionScore_5881aeec01e51adb01fb1db8be1c04f0_10000000000022420943_mix_aic",
        "asys-20240912-ffts-tiling",
    );
    assert_eq!(ids(e), (json!(0), json!(42), json!(1)));

    let e = find(
        "GatherV3_9e31943a1a48bf81ddff1fc6379e0be3_high_performance_10330",
        "asys-20250508-gatherv3-assert",
    );
    assert_eq!(ids(e), (json!(0), json!(2), json!(1)));

    let e = find(
        "-1_0_1_trans_TransData_170",
        "slog-2021-offline-model/slog/plog/plog-10043_",
    );
    assert_eq!(ids(e), (json!(0), json!(5), json!(61)));
    assert_eq!(
        e["func_name"]["value"],
        "te_transdata_83d582522809a75b_7b991ec552621cd1_1__kernel0"
    );
    assert_eq!(e["first_line"], 3519);

    let e = find(
        "-1_0_1_trans_TransData_0",
        "slog-2021-offline-model/slog/plog/plog_2020",
    );
    assert_eq!(ids(e), (json!(1), json!(3), json!(5)));
    assert_eq!(
        e["cores"].as_array().unwrap().len(),
        2,
        "cores 0 and 1 both report"
    );
}

#[test]
fn csv_and_table() {
    let p = sample("logs/15-vllm-aicore-timeout-moedispatch-fault-kernel-507014.log");
    let out = npgx(["aicore", p.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut rows = text.lines();
    let header: Vec<&str> = rows.next().unwrap().split(',').collect();
    let row: Vec<&str> = rows.next().unwrap().split(',').collect();
    let col = |name: &str| row[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!(
        (
            col("stream_id"),
            col("task_id"),
            col("ret_code"),
            col("acl_code")
        ),
        ("2", "7267", "0x25", "507014")
    );
    assert_eq!(col("kernel_asserts"), "");
    // The kernel's failed assertion has a column of its own (the csv crate reads the quoting).
    let assert_log = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let out = npgx(["aicore", assert_log.to_str().unwrap(), "--format", "csv"]);
    let mut r = csv::Reader::from_reader(out.stdout.as_slice());
    let at = r
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "kernel_asserts")
        .unwrap();
    let row = r.records().next().unwrap().unwrap();
    assert_eq!(
        &row[at],
        "/home/phisik3/Ascend/CANN-7.8/opp/built-in/op_impl/ai_core/tbe/impl/dynamic/../ascendc/gather_v3/gather_v3_base.h:137: `(0 <= val && val < this->gxSize_)` failed: Index 100000000 out of range[0 655360)!"
    );
    let out = npgx(["aicore", p.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains(
            "kernel MoeDistributeDispatchV2_ND_ND_BF16_INT8_high_performance_2000001002 (L6)"
        ),
        "{text}"
    );
}

#[test]
fn none_found_is_exit_0_and_missing_path_exit_2() {
    let p = sample("logs/05-plog-raw-hccl-socket-timeout-fixture-2023.log");
    let out = npgx(["aicore", p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    let out = npgx(["aicore", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2));
}

/// `plog`, `aicore` and `triage classify` read the same decorated paste: a sample quoted in
/// Markdown (`> ` on the first line only, lazy continuation after it), inside a code fence, with
/// a vLLM worker prefix on every line. The device error, its fields and the first causal line
/// are those of the plain file, one line further down (the fence).
#[test]
fn decorated_pastes_read_like_the_plain_file() {
    let src = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let plain = std::fs::read_to_string(&src).unwrap();
    let mut pasted = String::from("```\n");
    for (i, line) in plain.lines().enumerate() {
        let quote = if i == 0 { "> " } else { "" };
        pasted.push_str(&format!(
            "{quote}(Worker_TP0 pid=155320) ERROR 05-08 09:56:20 [multiproc_executor.py:671] {line}\n"
        ));
    }
    pasted.push_str("```\n");
    let dir = std::env::temp_dir().join(format!("npgx-pasted-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("pasted.txt");
    std::fs::write(&p, pasted).unwrap();
    let path = p.to_str().unwrap();

    let v = npgx_json(["aicore", path, "--format", "json"], 1);
    let list = v["errors"].as_array().unwrap();
    assert_eq!(list.len(), 1, "{v:#}");
    let e = &list[0];
    assert_eq!(f(e, "task_id"), (json!(1), 14));
    assert_eq!(
        f(e, "kernel_name").0,
        json!("GatherV3_9e31943a1a48bf81ddff1fc6379e0be3_high_performance_10330")
    );

    let s = npgx_json(["plog", path, "--format", "json"], 0);
    assert_eq!(s["first_causal"]["line"], 2, "{:#}", s["first_causal"]);
    assert_eq!(
        s["records"], 46,
        "the plog records behind the prefixes are counted"
    );

    let c = npgx_json(["triage", "classify", "--format", "json", path], 1);
    assert_eq!(c["items"][0]["first_causal_error"]["line"], 2);
    assert_eq!(c["items"][0]["route"], "runtime-error");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// aicore's remedy is the row for what the error is, as `plog` chooses it: an HCCL FFTS+ timeout
/// is a collective's (the root is another rank's: no exception dump, no single-operator case), a
/// kernel that timed out (ACL 507014) a timeout's; and no check reruns `npgx aicore` itself.
#[test]
fn the_remedy_follows_the_kind_of_device_error() {
    let remedy = |rel: &str| {
        let out = npgx(["aicore", sample(rel).to_str().unwrap(), "--format", "json"]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v["remedy"].as_array().cloned().unwrap_or_default()
    };
    let hccl = remedy("logs/25-hccl-ei0002-notify-timeout-solution-traceback.log");
    assert_eq!(hccl[0]["matched"], "kind:collective", "{hccl:?}");
    let timeout = remedy("logs/15-vllm-aicore-timeout-moedispatch-fault-kernel-507014.log");
    assert_eq!(timeout[0]["matched"], "nature:timeout", "{timeout:?}");
    for r in hccl.iter().chain(&timeout) {
        assert!(!r["check"].to_string().contains("npgx aicore"), "{r}");
    }
    assert!(timeout[0]["do"]
        .as_str()
        .is_some_and(|d| d.contains("ASCEND_LAUNCH_BLOCKING=1")));
    // The same records in a MindSpore program's log take MindSpore's switch (the file's head
    // names the framework, as `plog` and `triage classify` read it).
    let dir = crate::triage::scratch("aicore-mindspore-remedy");
    let path = dir.join("ms.log");
    let text = std::fs::read_to_string(sample(
        "logs/15-vllm-aicore-timeout-moedispatch-fault-kernel-507014.log",
    ))
    .unwrap();
    std::fs::write(&path, format!("import mindspore as ms\n{text}")).unwrap();
    let out = npgx(["aicore", path.to_str().unwrap(), "--format", "json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let first = &v["remedy"][0];
    assert_eq!(first["matched"], "nature:timeout", "{first}");
    assert!(
        first["do"]
            .as_str()
            .is_some_and(|d| d.contains("mindspore.runtime.launch_blocking()")),
        "{first}"
    );
}
