//! `npgx plog` on every log sample and on the real CANN collections: the first causal error
//! (README "first" column), pids, process names, codes, records, filters, formats.

use serde_json::Value;

use crate::common::{all_expectations, npgx, npgx_json, npgx_peak_rss, sample, sparse_file};

fn summary(rel: &str) -> Value {
    npgx_json(
        [
            "plog".as_ref(),
            sample(rel).as_os_str(),
            "--format".as_ref(),
            "json".as_ref(),
        ],
        0,
    )
}

fn records(rel: &str, extra: &[&str]) -> Vec<Value> {
    let p = sample(rel);
    let mut args = vec!["plog", p.to_str().unwrap(), "--records", "--format", "json"];
    args.extend_from_slice(extra);
    let v = npgx_json(args, 0);
    // Its own document: the summary's `records` is a count, this one's a list.
    assert_eq!(v["schema"], "npgx.plog-records");
    assert_eq!(v["schema_version"], 1);
    v["records"].as_array().expect("records").clone()
}

/// Asserts the first causal error: its line and a substring of its text.
fn first(rel: &str, line: u64, text: &str) -> Value {
    let s = summary(rel);
    assert_eq!(s["schema"], "npgx.plog");
    assert_eq!(s["schema_version"], 2);
    let c = &s["first_causal"];
    assert_eq!(c["line"], line, "{rel}: {c}");
    let t = c["text"].as_str().unwrap();
    assert!(t.contains(text), "{rel}: {t:?} lacks {text:?}");
    s
}

fn process(s: &Value, pid: i64) -> &Value {
    s["processes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("no pid {pid} in {s}"))
}

fn report<'a>(s: &'a Value, code: &str) -> &'a Value {
    s["error_reports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["code"] == code)
        .unwrap_or_else(|| panic!("no report {code}"))
}

#[test]
fn s01_gatherv3_task_run_failed() {
    let s = first(
        "logs/01-plog-raw-aivec-gatherv3-assert-2025.log",
        1,
        "Task run failed, device_id=0, stream_id=2, task_id=1",
    );
    assert_eq!(s["first_causal"]["rank"], "device_fault");
    assert_eq!(s["first_causal"]["shape"], "plog_record");
    assert_eq!(s["first_causal"]["evidence"]["rule"], "plog.error-record");
    let p = process(&s, 155320);
    assert_eq!(p["pname"], "python3");
    assert_eq!(p["records"], 46);
    assert_eq!(p["levels"]["ERROR"], 46);
    assert_eq!(p["modules"]["IDEDD"], 17);
    assert_eq!(p["modules"]["ASCENDCL"], 1);
    assert_eq!(
        p["continuation_lines"], 1,
        "L35 is an empty continuation line"
    );
    assert_eq!(p["device_ids"], serde_json::json!([0]));
    for code in [
        "EZ9999",
        "EE8888",
        "ACL 507035",
        "inner 0x715005e",
        "retCode 0x31",
    ] {
        assert!(p["error_codes"][code].as_u64().unwrap() >= 1, "{code}");
    }
    let recs = records("logs/01-plog-raw-aivec-gatherv3-assert-2025.log", &[]);
    assert_eq!(recs[0]["func"], "ProcLogicCqReport");
    assert_eq!(recs[0]["stages"], serde_json::json!(["INIT", "DEFAULT"]));
    assert_eq!(recs[0]["tid"], 155320);
    assert_eq!(recs[0]["src_file"], "stars_engine.cc");
    assert_eq!(recs[0]["src_line"], 1553);
    let assert_rec = recs.iter().find(|r| r["line"] == 34).unwrap();
    assert_eq!(assert_rec["continuation"], serde_json::json!([""]));
    assert!(assert_rec["message"]
        .as_str()
        .unwrap()
        .contains("Index 100000000 out of range[0 655360)!"));
    let idedd = recs.iter().find(|r| r["line"] == 18).unwrap();
    assert_eq!(idedd["tid"], 155320);
    assert_eq!(
        idedd["message"],
        "[Dump][Exception] begin to load input tensor, index:0"
    );
    let acl = recs.iter().find(|r| r["line"] == 46).unwrap();
    assert_eq!(
        (acl["module"].as_str(), acl["func"].as_str()),
        (Some("ASCENDCL"), Some("aclrtSynchronizeStream"))
    );
    assert_eq!(acl["stages"], serde_json::json!(["INIT", "DEFAULT"]));
}

#[test]
fn s02_task_exception_2021_no_stages() {
    let s = first(
        "logs/02-plog-raw-aicore-transdata-model-2021.log",
        1,
        "task exception! stream_id=2, task_id=1, type=13, retCode=0x91.",
    );
    let p = process(&s, 10043);
    assert_eq!(p["pname"], "main");
    assert_eq!(p["levels"]["INFO"], 7);
    let recs = records(
        "logs/02-plog-raw-aicore-transdata-model-2021.log",
        &["--level", "info"],
    );
    assert_eq!(recs.len(), 7);
    assert_eq!(
        recs[0]["tid"], 10057,
        "INFO lines of 2021 have no space before the tid"
    );
    assert_eq!(recs[0]["func"], "ProcErrorInfo");
    assert!(recs[0].get("stages").is_none());
}

#[test]
fn s03_device_firmware() {
    let s = first(
        "logs/03-device-fw-tsch-exception-print-2020.log",
        1,
        "slot_id=0, TSC_TERM_CODE=0x1",
    );
    let p = process(&s, -1);
    assert_eq!(p["pname"], "null");
    assert_eq!(p["modules"]["TSCH"], 1);
    assert_eq!(
        p["continuation_lines"], 39,
        "<exception_print> lines continue the record"
    );
    let recs = records("logs/03-device-fw-tsch-exception-print-2020.log", &[]);
    assert_eq!(recs[0]["func"], "bs_done_exception_proc");
    assert_eq!(recs[0]["src_line"], 1193);
    assert_eq!(recs[0]["continuation"][0], "<exception_print>TIME:2020-12-23-17:10:54.083.569, device_id=0, stream_id=517, task_id=3, exception_code=0xb4060006, magic_type=0xaa776");
}

#[test]
fn s04_exec_stage_aic_info_truncated_and_control_bytes() {
    let s = first(
        "logs/04-plog-raw-aicore-exec-stage-aic-info-2023.log",
        1,
        "Task exception! device_id=0, stream_id=2, task_id=6",
    );
    let p = process(&s, 370);
    assert_eq!(
        p["truncated_records"], 1,
        "L43 tiling_data is cut at the 1024-byte limit"
    );
    assert_eq!(p["continuation_lines"], 1);
    let recs = records("logs/04-plog-raw-aicore-exec-stage-aic-info-2023.log", &[]);
    let attrs = recs.iter().find(|r| r["line"] == 37).unwrap();
    assert_eq!(attrs["continuation"], serde_json::json!(["\u{8}*\u{3}"]));
    assert_eq!(
        recs.iter().find(|r| r["line"] == 43).unwrap()["truncated"],
        true
    );
    let l2 = recs.iter().find(|r| r["line"] == 2).unwrap();
    assert_eq!(
        (l2["tid"].as_u64(), l2["func"].as_str()),
        (Some(1432), Some("PrintStreamTimeoutSnapshotInfo"))
    );
    let l6 = recs.iter().find(|r| r["line"] == 6).unwrap();
    assert_eq!(l6["tid"], 1534205);
    assert_eq!(l6["stages"], serde_json::json!(["EXEC", "EXEC"]));
}

#[test]
fn s05_hccl_trace_and_errno() {
    let s = first(
        "logs/05-plog-raw-hccl-socket-timeout-fixture-2023.log",
        2,
        "[Wait][AllClientSocketEstab]errNo[0x000000000500000b]"
            .trim_start_matches("[Wait][AllClientSocketEstab]"),
    );
    let p = process(&s, 10972);
    assert_eq!(p["levels"]["TRACE"], 2);
    assert_eq!(p["error_codes"]["errNo 0x000000000500000b"], 1);
    let recs = records(
        "logs/05-plog-raw-hccl-socket-timeout-fixture-2023.log",
        &["--level", "error"],
    );
    assert_eq!(recs[0]["tid"], 21499);
    assert_eq!(recs.len(), 2);
}

#[test]
fn s06_hccl_table_title_is_not_causal() {
    let s = first(
        "logs/06-plog-raw-hccl-link-error-table-fixture-2025.log",
        2,
        "comm error, device[0] num[1]",
    );
    assert_eq!(s["first_error"]["line"], 1);
    let recs = records(
        "logs/06-plog-raw-hccl-link-error-table-fixture-2025.log",
        &[],
    );
    assert!(recs.iter().all(|r| r["tid"] == 107626));
    assert_eq!(
        recs[7]["message"],
        "tag[HcomAllGather_5871863451775290338_0], created commHD fail"
    );
}

#[test]
fn s07_sqe_status() {
    let s = first("logs/07-plog-raw-sqe-status-pta-dispatch-timeout-fixture-2025.log", 1, "Task run failed, device_id=3, stream_id=2, task_id=8885, sqe_type=3(place holder), errType=0x20(sq sw status error), sqSwStatus=0x105");
    let p = process(&s, 1365);
    assert_eq!(p["pname"], "python3.8");
    assert_eq!(p["device_ids"], serde_json::json!([3]));
    let recs = records(
        "logs/07-plog-raw-sqe-status-pta-dispatch-timeout-fixture-2025.log",
        &[],
    );
    assert_eq!(recs[0]["tid"], 6219);
    assert_eq!(recs[0]["stages"], serde_json::json!(["FINAL", "FINAL"]));
    assert_eq!(recs[1]["module"], "APP");
    assert_eq!(recs[1]["tid"], 6124);
    assert!(recs[1].get("func").is_none());
    assert!(recs[1]["message"].as_str().unwrap().contains(
        "\"[PTA]:\"Process group work REDUCE_SCATTER, seq_num 32716847 dispatch timeout. device 3"
    ));
}

#[test]
fn s08_ez9999_core_list_2021() {
    let s = first(
        "logs/08-mindspore-doc-ez9999-core-list-add-2021.log",
        9,
        "The device(3), core list[0-0], error code is:",
    );
    assert_eq!(s["first_causal"]["shape"], "cann_report");
    assert!(
        s["processes"].as_array().unwrap().is_empty(),
        "MindSpore lines are not plog records"
    );
    let r = report(&s, "EZ9999");
    assert_eq!(r["inner"], true);
    assert_eq!(r["items"].as_array().unwrap().len(), 5);
    assert_eq!(r["items"][0]["func"], "ProcessCoreErrorInfo");
    assert_eq!(r["items"][0]["src_line"], 461);
    assert!(r.get("traceback").is_none());
}

#[test]
fn s09_e39999_aicpu_getnext() {
    let s = first(
        "logs/09-mindspore-doc-e39999-aicpu-getnext-2021.log",
        1,
        "Task exception! device_id=0, stream_id=117, task_id=23, type=13, retCode=0x91.",
    );
    let p = process(&s, 150840);
    assert_eq!(p["pname"], "python");
    assert_eq!(p["records"], 8, "the MindSpore lines are not plog records");
    assert_eq!(p["error_codes"]["ACL 507011"], 1);
    assert_eq!(p["error_codes"]["inner 0x7150050"], 1);
    let r = report(&s, "E39999");
    assert_eq!(
        (r["line"].as_u64(), r["end_line"].as_u64()),
        (Some(17), Some(20))
    );
    assert_eq!(r["message"]["line"], 18);
}

#[test]
fn s10_ei0002_embedded_in_mindspore_critical() {
    let s = first(
        "logs/10-mindspore-doc-ei0002-notify-heartbeat-lost-2022.log",
        3,
        "The wait execution of the Notify register times out.",
    );
    assert_eq!(
        s["first_error"]["line"], 1,
        "the first [ERROR] is the ASCENDCL side effect"
    );
    let r = report(&s, "EI0002");
    assert!(r["message"]["text"]
        .as_str()
        .unwrap()
        .contains("Heartbeat Lost Occurred"));
    assert_eq!(r["possible_cause"]["line"], 7);
    assert_eq!(r["solution"]["line"], 8);
    assert_eq!(r["traceback"][0]["text"], "Notify wait execute failed, device_id=1, stream_id=14, task_id=4, flip_num=0, notify_id=11");
}

#[test]
fn s11_a5_code_line_after_harness() {
    let s = first(
        "logs/11-ptoas-a5-aicore-errcode95-david-507015.log",
        3,
        "The error from device(chipId:0, dieId:0)",
    );
    let r = report(&s, "EZ9999");
    assert_eq!(r["pid"], 91583);
    assert_eq!(r["time"], "2026-04-15-11:09:31.973.508");
    assert!(r.get("title").is_none(), "the title is empty in this era");
    assert_eq!(r["traceback"][0]["func"], "ProcessDavidStarsCoreErrorInfo");
}

#[test]
fn s13_aivec_illegal_instruction() {
    let s = first(
        "logs/13-ptoas-aivec-illegal-instr-0x10-507035.log",
        3,
        "there is an exception of aivec error",
    );
    let r = report(&s, "EZ9999");
    assert_eq!(r["pid"], 1970830);
    assert_eq!(r["traceback"].as_array().unwrap().len(), 3);
}

#[test]
fn s15_fragment_inside_traceback() {
    let s = first(
        "logs/15-vllm-aicore-timeout-moedispatch-fault-kernel-507014.log",
        1,
        "AICORE Kernel task happen error, retCode=0x25.",
    );
    let r = &s["error_reports"][0];
    assert!(
        r.get("code").is_none(),
        "the excerpt starts inside a TraceBack"
    );
}

#[test]
fn s17_unindented_traceback() {
    let s = first(
        "logs/17-torchnpu-ez9999-aivec-dcache-ub-unindented-2025.log",
        2,
        "The error from device(chipId:6, dieId:0)",
    );
    let r = report(&s, "EZ9999");
    assert_eq!(r["pid"], 838);
    assert_eq!(r["line"], 1, "the block starts in the c10 warning");
    assert_eq!(r["traceback"].as_array().unwrap().len(), 4);
}

#[test]
fn s19_empty_pname_stream_sync_with_retcode() {
    let s = first(
        "logs/19-plog-empty-pname-dfx-info-mlaprolog-cann91.log",
        3,
        "Stream Synchronize failed, stream_id=47, retCode=0x26, [aicore exception].",
    );
    let p = process(&s, 289610);
    assert_eq!(p["pname"], "");
    assert_eq!(p["device_ids"], serde_json::json!([9]));
    assert_eq!(s["first_error"]["line"], 1);
}

#[test]
fn s21_e39999_thread_suffix() {
    let s = first(
        "logs/21-mindspore-e39999-aicpu-exception-thread-2024.log",
        8,
        "an exception occurred during AICPU execution, stream_id:2, task_id:19016",
    );
    let r = report(&s, "E39999");
    assert_eq!(r["time"], "2024-10-20-22:34:40.965.193");
    assert!(r.get("pid").is_none());
    assert_eq!(r["traceback"][0]["thread"], 123358);
    assert_eq!(
        r["traceback"][3]["text"],
        "Aicpu kernel execute failed, device_id=0, stream_id=2, task_id=19016, fault op_name="
    );
}

#[test]
fn s23_eh9999_8888_item_then_code_line() {
    let s = first(
        "logs/23-mindspore-eh9999-memcpy-vector-core-cann80rc2.log",
        4,
        // The root of an inner report is the line after `Inner Error!` (spec §3.5).
        "rtMemcpyAsync execute failed, reason=[vector core exception]",
    );
    let r = report(&s, "EH9999");
    assert_eq!(r["pid"], 154523);
    assert_eq!(r["message"]["line"], 6);
    assert_eq!(
        r["items"][0]["text"],
        "rtMemcpyAsync execute failed, reason=[vector core exception]"
    );
}

#[test]
fn s25_ei0002_possible_cause_solution() {
    let s = first(
        "logs/25-hccl-ei0002-notify-timeout-solution-traceback.log",
        1,
        "The wait execution of the Notify register times out.",
    );
    let r = report(&s, "EI0002");
    assert_eq!(r["pid"], 198748);
    assert!(r["possible_cause"]["text"]
        .as_str()
        .unwrap()
        .starts_with("1. An exception occurs"));
    assert!(r["solution"]["text"]
        .as_str()
        .unwrap()
        .ends_with("For details:https://www.hiascend.com/document"));
    assert_eq!(r["traceback"].as_array().unwrap().len(), 2);
    assert_eq!(r["inner"], false);
}

#[test]
fn s29_hccl_long_pname() {
    let s = first(
        "logs/29-hccl-raw-plog-mindie-commrootinfo.log",
        1,
        "errNo[0x0000000005000002]HcclCommInitRootInfo failed.",
    );
    let p = process(&s, 36035);
    assert_eq!(p["pname"], "mindie_llm_backend_connector");
    assert_eq!(p["records"], 1, "MindIE lines are not plog");
}

#[test]
fn s31_external_el0004() {
    let s = first(
        "logs/31-oom-el0004-memory-allocation-failure.log",
        2,
        "Failed to allocate memory.",
    );
    let r = report(&s, "EL0004");
    assert_eq!(r["title"], "Memory_Allocation_Failure");
    assert_eq!(
        r["traceback"][1]["text"],
        "Fail to init MemoryPoolManager, retCode=0x711000e."
    );
    assert_eq!(
        r["traceback"][7]["text"],
        "open device 2 failed, runtime result = 507033."
    );
}

#[test]
fn s33_external_ee1001_solution_only() {
    let s = first(
        "logs/33-ee1001-invalid-argument-tsdopen-507033.log",
        2,
        "The argument is invalid.Reason: rtGetDevMsg execution failed",
    );
    let r = report(&s, "EE1001");
    assert_eq!(r["title"], "Invalid_Argument");
    assert!(r.get("possible_cause").is_none());
    assert_eq!(
        r["traceback"][0]["text"],
        "TsdOpen failed. devId=2, tdt error=34"
    );
}

#[test]
fn s35_aclnn_title_form_under_rank_prefix() {
    let s = first(
        "logs/35-aclnn-ez9903-runtime-error-multiline.log",
        3,
        "InitTilingParseCtx failed",
    );
    let r = report(&s, "EZ9903");
    assert_eq!(r["title"], "AclNN_Runtime_Error");
    let t = &s["torch_npu_errors"][0];
    assert_eq!(
        (
            t["line"].as_u64(),
            t["code"].as_str(),
            t["device"].as_i64(),
            t["rank"].as_i64()
        ),
        (Some(2), Some("ERR01100"), Some(6), Some(6))
    );
    assert!(t.get("time").is_none());
}

#[test]
fn s37_el0003_and_torch_npu_rank_minus_one() {
    let s = first(
        "logs/37-el0003-invalid-argument-truncated-fftsplus.log",
        2,
        "The argument is invalid.",
    );
    let r = report(&s, "EL0003");
    assert_eq!(r["pid"], 920);
    assert_eq!(r["end_line"], 5);
    let t = s["torch_npu_errors"].as_array().unwrap();
    assert_eq!(t.len(), 2);
    assert_eq!(
        (t[0]["line"].as_u64(), t[1]["line"].as_u64()),
        (Some(7), Some(10))
    );
    assert_eq!(
        (
            t[0]["rank"].as_i64(),
            t[0]["device"].as_i64(),
            t[0]["submodule"].as_str()
        ),
        (Some(-1), Some(12), Some("DIST"))
    );
    assert_eq!(t[0]["time"], "2026-05-08-03:20:32");
}

#[test]
fn s39_mindspore_task_fail_infos() {
    let s = first("logs/39-mindspore-device-format-getnext-507011-2023.log", 1, "Task fail infos task_id: 2, stream_id: 45, tid: 2420702, device_id: 0, retcode: 507011 ( model execute failed)");
    assert_eq!(s["first_causal"]["shape"], "framework_error");
}

/// Every sample either README lists: `npgx plog` names the README's first causal line (the
/// expectations are read from the README tables, so new samples need no change here).
#[test]
fn first_causal_line_matches_the_readmes_for_every_sample() {
    let mut misses = Vec::new();
    for (dir, e) in all_expectations() {
        let Some(line) = e.line else { continue };
        let p = sample(&format!("{dir}/{}", e.file));
        let out = npgx(["plog", p.to_str().unwrap(), "--format", "json"]);
        assert_eq!(out.status.code(), Some(0), "{}", p.display());
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let got = v["first_causal"]["line"].as_u64();
        if e.route
            .as_deref()
            .is_some_and(|r| r == "accuracy" || r == "performance")
        {
            // Reports without an error: there is no causal error to name.
            if got.is_some() {
                misses.push(format!(
                    "{dir}/{}: line {got:?} for a report without an error",
                    e.file
                ));
            }
        } else if got != Some(line) {
            misses.push(format!("{dir}/{}: line {got:?} (README L{line})", e.file));
        }
    }
    assert!(misses.is_empty(), "misses:\n{}", misses.join("\n"));
}

#[test]
fn nothing_readable_is_exit_2() {
    // A regular file that opens but cannot be read (offset 0 of a process's memory is unmapped).
    let out = npgx(["plog", "/proc/self/mem"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("/proc/self/mem: cannot read"), "{err}");
    assert!(
        err.contains("none of the 1 input file(s) could be read"),
        "{err}"
    );
}

#[test]
fn a_huge_file_without_newlines_is_read_in_bounded_memory() {
    let dir = std::env::temp_dir().join(format!("npgx-plog-huge-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("plog-7_20250101000000000.log");
    sparse_file(
        &big,
        2_200_000_000,
        b"\n[ERROR] RUNTIME(7,p):2025-01-01-00:00:00.000.000 [a.cc:1]7 F:Task run failed, device_id=0\n",
    );
    let (code, stdout, peak_kib) =
        npgx_peak_rss(["plog", big.to_str().unwrap(), "--format", "json"]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, Some(0));
    let v: Value = serde_json::from_slice(&stdout).unwrap();
    assert_eq!(v["first_causal"]["line"], 2);
    assert!(peak_kib < 64 * 1024, "peak RSS {peak_kib} KiB");
}

#[test]
fn slog_2021_layout_discovery_and_rotation() {
    let s = summary("cann/slog-2021-offline-model");
    let files: Vec<&str> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(files.len(), 5, "{files:?}");
    assert!(files.iter().all(|f| !f.ends_with("history.log")));
    let kinds: Vec<&str> = s["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "host_plog",
            "host_plog",
            "device_app",
            "device_firmware",
            "device_os"
        ]
    );
    let p = process(&s, 10043);
    assert_eq!(
        p["first_causal"]["line"], 3516,
        "README 02: lines 3516–3536 of this plog"
    );
    assert_eq!(p["files"].as_array().unwrap().len(), 1);
    let dev = process(&s, 22345);
    assert_eq!(dev["pname"], "aicpu_scheduler");
    assert_eq!(
        dev["device_ids"],
        serde_json::json!([0]),
        "from the device-0 folder"
    );
}

#[test]
fn asys_layout_and_filters() {
    let dir = "cann/asys-20250508-gatherv3-assert";
    let s = summary(dir);
    let files = s["files"].as_array().unwrap();
    assert_eq!(files.len(), 12);
    let p = process(&s, 155320);
    assert_eq!(p["first_causal"]["line"], 1);
    assert_eq!(
        p["first_causal"]["text"]
            .as_str()
            .unwrap()
            .split(',')
            .next(),
        Some("Task run failed")
    );
    let recs = records(
        dir,
        &[
            "--pid",
            "155320",
            "--level",
            "error",
            "--module",
            "ascendcl",
            "--grep",
            "runtime result",
        ],
    );
    assert_eq!(recs.len(), 5);
    assert_eq!(recs[0]["line"], 46);
    assert_eq!(
        recs[0]["message"],
        "synchronize stream failed, runtime result = 507035"
    );
    let recs = records(
        dir,
        &[
            "--pid",
            "155320",
            "--since",
            "2025-05-08-09:56:20.764",
            "--until",
            "2025-05-08-09:56:20.764",
        ],
    );
    assert!(!recs.is_empty());
    assert!(recs.iter().all(|r| r["time"]
        .as_str()
        .unwrap()
        .starts_with("2025-05-08-09:56:20.764")));
}

/// An upper bound given as a prefix covers its whole span: every record of process 155320 is
/// written during 09:56 on 2025-05-08, so `--until` the day or the minute keeps all of them.
#[test]
fn until_prefix_covers_its_whole_span() {
    let dir = "cann/asys-20250508-gatherv3-assert";
    let all = records(dir, &["--pid", "155320"]);
    assert!(all.len() > 400, "{}", all.len());
    for until in ["2025-05-08", "2025-05-08-09:56", "2025-05-08 09"] {
        let kept = records(dir, &["--pid", "155320", "--until", until]);
        assert_eq!(kept.len(), all.len(), "--until {until}");
    }
    let second = records(
        dir,
        &[
            "--pid",
            "155320",
            "--since",
            "2025-05-08-09:56:20",
            "--until",
            "2025-05-08-09:56:20",
        ],
    );
    assert!(!second.is_empty());
    assert!(second.iter().all(|r| r["time"]
        .as_str()
        .unwrap()
        .starts_with("2025-05-08-09:56:20.")));
    let before = records(dir, &["--pid", "155320", "--until", "2025-05-07"]);
    assert!(before.is_empty());
}

#[test]
fn multi_mb_collection_counts_all_records() {
    let s = summary("cann/asys-20230713-aicore-collection");
    assert_eq!(s["files"].as_array().unwrap().len(), 28);
    let p = process(&s, 370);
    assert!(p["records"].as_u64().unwrap() > 8000);
    assert_eq!(p["first_causal"]["rank"], "device_fault");
    assert!(p["first_causal"]["text"]
        .as_str()
        .unwrap()
        .starts_with("Task exception! device_id=0, stream_id=2, task_id=6"));
}

#[test]
fn csv_and_table_formats() {
    let p = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let out = npgx(["plog", p.to_str().unwrap(), "--format", "csv"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut lines = text.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("pid,pname,records,error,"));
    assert!(lines.next().unwrap().starts_with("155320,python3,46,46,0,"));
    let out = npgx(["plog", p.to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("first causal error (device_fault, strong)"),
        "{text}"
    );
    assert!(text.contains("pid 155320 (python3)"));
}

#[test]
fn missing_input_is_exit_2_and_bad_level_is_usage_error() {
    let out = npgx(["plog", "/nonexistent/plog-1_1.log"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no such file"));
    let p = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let out = npgx(["plog", p.to_str().unwrap(), "--level", "loud"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn non_plog_text_gets_a_warning_and_the_scan_goes_on() {
    let a = sample("logs/31-oom-el0004-memory-allocation-failure.log");
    let b = sample("logs/01-plog-raw-aivec-gatherv3-assert-2025.log");
    let out = npgx([
        "plog",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("31-oom-el0004-memory-allocation-failure.log: no plog records"),
        "{err}"
    );
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        s["first_causal"]["line"], 1,
        "a device-side marker beats an error report"
    );
    assert!(s["warnings"].as_array().unwrap().len() == 1);
}

/// An asys collection holds a device log that spans earlier runs: its first causal error (a
/// firmware record at 02:28) is hours before the failing process's (09:56). The summary warns
/// that the files may hold more than one run; `--pid` and `--since` choose the records the causal
/// engine reads, so they choose the run.
#[test]
fn filters_choose_the_run_the_first_causal_error_is_read_from() {
    let dir = sample("cann/asys-20250508-gatherv3-assert");
    let run = |extra: &[&str]| {
        let mut args = vec!["plog", dir.to_str().unwrap(), "--format", "json"];
        args.extend_from_slice(extra);
        npgx_json(args, 0)
    };
    let v = run(&[]);
    let c = &v["first_causal"];
    assert!(
        c["file"].as_str().is_some_and(|f| f.contains("device-0_")),
        "{c:#}"
    );
    let warned: Vec<&Value> = v["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|w| {
            w["message"]
                .as_str()
                .is_some_and(|m| m.contains("7 h 28 min before") && m.contains("more than one run"))
        })
        .collect();
    assert_eq!(warned.len(), 1, "{:#}", v["warnings"]);
    assert_eq!(warned[0]["line"], c["line"]);
    for filter in [&["--pid", "155320"][..], &["--since", "2025-05-08-09:56"]] {
        let v = run(filter);
        let c = &v["first_causal"];
        assert!(
            c["file"]
                .as_str()
                .is_some_and(|f| f.ends_with("plog-155320_20250508095618528.log")),
            "{filter:?}: {c:#}"
        );
        assert_eq!(c["line"], 1, "{filter:?}");
        assert_eq!(c["remedy"][0]["matched"], "kernel.assert", "{filter:?}");
        assert!(
            !v["warnings"].to_string().contains("more than one run"),
            "{filter:?}"
        );
    }
}

/// A report is listed at the line `triage classify` cites in it: under EL0003's bare title, the
/// TraceBack item that states what failed (llama.cpp's CANN backend on a 310P, as pasted).
#[test]
fn a_report_is_listed_at_the_line_classify_cites() {
    let dir = std::env::temp_dir().join(format!("npgx-it-plog-cited-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("console.log");
    std::fs::write(
        &path,
        "/model/llama.cpp-b6765/ggml/src/ggml-cann/ggml-cann.cpp:69: CANN error\n\
         CANN error: EL0003: [PID: 1445] 2025-10-21-03:40:09.141.920 The argument is invalid.\n\
         \x20       Solution: Try again with a valid argument.\n\
         \x20       TraceBack (most recent call last):\n\
         \x20       Convert memory address from virtual to dma physical failed, retCode=0x7020014.[FUNC:MemcpyAsyncTaskInitV3][FILE:memory_task.cc][LINE:694]\n\
         \x20       rtMemcpyAsync execute failed, reason=[driver error:invalid handle][FUNC:FuncErrorReason][FILE:error_message_manage.cc][LINE:53]\n",
    )
    .unwrap();
    let p = path.to_str().unwrap();
    let out = npgx(["plog", p, "--format", "json"]);
    let s: Value = serde_json::from_slice(&out.stdout).unwrap();
    let r = report(&s, "EL0003");
    assert_eq!(
        (r["line"].as_u64(), r["cited_line"].as_u64()),
        (Some(2), Some(5))
    );
    let classify = npgx(["triage", "classify", p, "--format", "json"]);
    let c: Value = serde_json::from_slice(&classify.stdout).unwrap();
    assert_eq!(c["items"][0]["first_causal_error"]["line"], 5);
    let text = npgx(["plog", p]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("console.log:5  EL0003  Convert memory address from virtual to dma"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
