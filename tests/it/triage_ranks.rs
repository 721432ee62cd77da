//! `npgx triage classify DIR` on a job's rank logs: the first rank and the ranks its failure
//! cascaded to. The logs are built here line by line from the grammars of the shared samples
//! (torchrun `[rankN]:` with c10 headers as in `triage/21-…` and `triage/65-…`, a CANN report
//! with its `[PID: n]` stamp as in `triage/29-…`, torch_npu and vLLM prefixes), with one job's
//! times.

use std::fs;
use std::path::Path;

use serde_json::Value;

use crate::common::npgx;
use crate::triage::scratch;

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

fn classify(args: &[&str]) -> (i32, Value) {
    let mut all = vec!["triage", "classify", "--format", "json"];
    all.extend_from_slice(args);
    let o = npgx(&all);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    (o.status.code().unwrap_or(-1), v)
}

/// Rank 3 hits an AI Vector error at 10:00:05; rank 4 fails after it, rank 1 and rank 0 time
/// out in the collective 30 minutes later; rank 2 prints nothing wrong.
fn job(dir: &Path) {
    write(
        &dir.join("rank0.log"),
        "[rank0]:[I1127 09:59:58.100000000 ProcessGroupHCCL.cpp:100] [Rank 0] HCCL communicator ready\n\
         [rank0]:[E1127 10:30:25.428029551 compiler_depend.ts:574] [Rank 0] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800185 milliseconds before timing out.\n\
         [rank0]:[E1127 10:30:25.429344265 compiler_depend.ts:1020] [Rank 0] HCCL watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800185 milliseconds before timing out.\n\
         terminate called after throwing an instance of 'std::runtime_error'\n",
    );
    // The rank is in the directory name, the time in the CANN report's own line.
    write(
        &dir.join("worker_1/stderr.log"),
        "EI0002: [PID: 198748] 2026-11-27-10:30:05.670.614 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [3]. base information: [streamID:[293579240], taskID[9865], tag[AllReduce_10.0.0.1%eth0_60000_0_1], AlgType(level 0-1-2):[fullmesh-H-D-ring].]. task information: []. group information: [group:[10.0.0.1%eth0_60000_0_1], user define information[], rankSize[8], rankId[1].]\n\
         \x20       Possible Cause: 1. An exception occurs during the execution on some NPUs in the cluster. As a result, collective communication operation failed.\n",
    );
    write(
        &dir.join("rank2.log"),
        "[rank2]:[I1127 10:00:00.000000000 train.py:10] step 10 done\n",
    );
    write(
        &dir.join("rank3.log"),
        "[rank3]:[I1127 09:59:58.000000000 train.py:10] step 10 done\n\
         [rank3]:[W1127 10:00:05.462407611 compiler_depend.ts:57] Warning: EZ9999: Inner Error!\n\
         EZ9999: [PID: 14897] 2026-11-27-10:00:05.381.401 The error from device(chipId:3, dieId:0), serial number is 2, there is an aivec error exception, core id is 5, error code = 0, dump info: pc start: 0x1240441f2000, current: 0x1240441f29f8.[FUNC:ProcessStarsCoreErrorInfo][FILE:device_error_proc.cc][LINE:1434]\n\
         \x20       TraceBack (most recent call last):\n",
    );
    // The error line has no stamp: the last stamp before it dates it.
    write(
        &dir.join("rank4.log"),
        "[rank4]:[W1127 10:00:09.000000000 train.py:12] Warning: slow step\n\
         [rank4]: Traceback (most recent call last):\n\
         [rank4]:   File \"train.py\", line 3, in <module>\n\
         [rank4]:     step()\n\
         [rank4]: ValueError: loss is nan at step 11\n",
    );
}

#[test]
fn the_first_rank_and_the_ranks_it_cascaded_to() {
    let dir = scratch("ranks-job");
    job(&dir);
    let (code, v) = classify(&[dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{v:#}");
    assert_eq!(v["schema_version"], 3);
    // Every file is still classified on its own, in rank order.
    let files: Vec<String> = v["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            Path::new(i["file"].as_str().unwrap())
                .strip_prefix(&dir)
                .unwrap()
                .display()
                .to_string()
        })
        .collect();
    assert_eq!(
        files,
        [
            "rank0.log",
            "worker_1/stderr.log",
            "rank2.log",
            "rank3.log",
            "rank4.log"
        ]
    );
    let r = &v["ranks"][0];
    assert_eq!(r["dir"], dir.to_str().unwrap());
    let o = &r["origin"];
    assert_eq!(o["rank"], "3", "{r:#}");
    assert_eq!(o["rank_from"], "path");
    assert!(o["file"].as_str().unwrap().ends_with("rank3.log"));
    assert_eq!(o["time"]["date"], serde_json::json!([11, 27]));
    assert_eq!(o["time"]["minute"], 0);
    assert_eq!(o["time"]["second"], 5);
    // The c10 headers have no year: all stamps are compared by month, day and time.
    assert_eq!(r["precision"], "month_day");
    let cascaded: Vec<(String, String, i64)> = r["cascaded_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["rank"].as_str().unwrap().to_string(),
                c["rank_from"].as_str().unwrap().to_string(),
                c["after_origin_s"].as_f64().unwrap().round() as i64,
            )
        })
        .collect();
    assert_eq!(
        cascaded,
        [
            ("4".to_string(), "path".to_string(), 4),
            ("1".into(), "path".into(), 1800),
            ("0".into(), "path".into(), 1820),
        ],
        "{r:#}"
    );
    let rank4 = &r["cascaded_to"][0];
    assert_eq!(rank4["line"], 5);
    assert_eq!(rank4["time_line"], 1, "dated by the stamp before the error");
    assert_eq!(rank4["text"], "ValueError: loss is nan at step 11");
    assert_eq!(r["clean"][0]["rank"], "2");
    // Rank 3's error is no collective one: nothing says the first rank may be missing.
    assert!(!r["notes"].to_string().contains("collective"), "{r:#}");
    assert!(
        r["notes"][0]
            .as_str()
            .unwrap()
            .contains("no year: times compared by month, day and time"),
        "{r:#}"
    );

    // The same in text.
    let out = npgx(["triage", "classify", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("ranks of {}", dir.display())),
        "{text}"
    );
    assert!(text.contains("  first:        rank 3 ("), "{text}");
    assert!(text.contains("11-27 10:00:05."), "{text}");
    assert!(
        text.contains("  cascaded to:\n    rank 4 +3.619 s ("),
        "{text}"
    );
    assert!(text.contains("  no error:     rank 2"), "{text}");
}

#[test]
fn without_time_stamps_the_order_is_by_strength_and_says_so() {
    let dir = scratch("ranks-untimed");
    write(
        &dir.join("a.log"),
        "[rank5]: Traceback (most recent call last):\n[rank5]:   File \"m.py\", line 3, in f\n[rank5]:     g()\n[rank5]: RuntimeError: shape '[2, 3]' is invalid for input of size 7\n",
    );
    write(
        &dir.join("b.log"),
        "Traceback (most recent call last):\n  File \"m.py\", line 3, in f\n    g()\nValueError: bad value\n",
    );
    write(
        &dir.join("c.log"),
        "[ERROR] (PID:7, Device:2, RankID:2) ERR99999 UNKNOWN applicaiton exception\n",
    );
    let (code, v) = classify(&[dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{v:#}");
    let r = &v["ranks"][0];
    assert!(r["precision"].is_null(), "{r:#}");
    let o = &r["origin"];
    assert_eq!(
        (&o["rank"], &o["rank_from"]),
        (&Value::from("5"), &Value::from("error_line")),
        "{r:#}"
    );
    let others: Vec<(Value, Value)> = r["cascaded_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["rank"].clone(), c["rank_from"].clone()))
        .collect();
    assert!(
        others.contains(&(Value::from("2"), Value::from("error_line"))),
        "{r:#}"
    );
    assert!(
        others.contains(&(Value::Null, Value::from("none"))),
        "{r:#}"
    );
    assert!(
        r["notes"][0].as_str().unwrap().starts_with(
            "no log has a time stamp: the first rank is the one with the strongest error"
        ),
        "{r:#}"
    );
    // A file and a directory together: the file is classified, the view covers the directory.
    let extra = dir.parent().unwrap().join("ranks-untimed-single.log");
    fs::write(&extra, "ValueError: alone\n").unwrap();
    let (code, v) = classify(&[extra.to_str().unwrap(), dir.to_str().unwrap()]);
    assert_eq!(code, 1);
    assert_eq!(v["items"].as_array().unwrap().len(), 4);
    assert_eq!(v["ranks"].as_array().unwrap().len(), 1);
    // Files only: no `ranks` at all (documents stay as before).
    let (_, v) = classify(&[extra.to_str().unwrap()]);
    assert!(v.get("ranks").is_none(), "{v:#}");
}

/// One rank's log whose only error is a notify-wait timeout (a rank waiting on another): the
/// rank view names it first, and says that every error read is collective, so the rank that
/// failed first may be one whose log is not there.
#[test]
fn a_collective_error_alone_says_the_first_rank_may_be_missing() {
    let dir = scratch("ranks-collective-only");
    write(
        &dir.join("rank6.log"),
        "EI0002: [PID: 198748] 2025-03-26-13:49:01.670.614 The wait execution of the Notify register times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown]. group information: [group:[g], rankSize[8], rankId[6].]\n",
    );
    write(&dir.join("rank5.log"), "step 10 done\n");
    let (code, v) = classify(&[dir.to_str().unwrap()]);
    assert_eq!(code, 1, "{v:#}");
    let r = &v["ranks"][0];
    assert_eq!(r["origin"]["rank"], "6", "{r:#}");
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().is_some_and(|n| n
                .starts_with("every error read is collective communication")
                && n.contains("among the 2 log(s) read"))),
        "{r:#}"
    );
}
