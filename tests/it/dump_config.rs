//! `npgx dump-config`: one failing and one passing config per CANN rule (code, JSON path and
//! CANN's exact message), the skip rules, `--graph`, exit codes, and the preset round trip
//! (every preset with every combination of its options passes `check`).

use std::path::{Path, PathBuf};

use npgx::config::check::{check, CheckOptions};
use npgx::config::preset::{self, DumpLevel, DumpMode, Preset, PresetOptions};
use serde_json::{json, Value};

use crate::common::{npgx, npgx_json, sample};

/// A fresh directory under the system temp dir for one test.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("npgx-it-dump-config-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// An existing, writable directory for `dump_path`.
fn dump_dir() -> String {
    std::env::temp_dir().display().to_string()
}

/// Writes `config` to a file named `cfg.json` and runs `check --format json` on it.
fn run_check(name: &str, config: &str, extra: &[&str], code: i32) -> (Value, String) {
    let dir = scratch(name);
    let file = dir.join("cfg.json");
    std::fs::write(&file, config).expect("write config");
    let shown = file.display().to_string();
    let mut args = vec!["dump-config", "check", shown.as_str(), "--format", "json"];
    args.extend_from_slice(extra);
    (npgx_json(&args, code), shown)
}

/// The problems of a report as (code, path, message).
fn problems(report: &Value) -> Vec<(String, String, String)> {
    report["problems"]
        .as_array()
        .expect("problems array")
        .iter()
        .map(|p| {
            (
                p["code"].as_str().unwrap_or_default().to_string(),
                p["path"].as_str().unwrap_or_default().to_string(),
                p["message"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// Asserts the config fails with exactly these (code, path, message-with-{file}) problems.
fn assert_fails(name: &str, config: Value, expected: &[(&str, &str, &str)]) {
    let (report, file) = run_check(name, &config.to_string(), &[], 1);
    let want: Vec<(String, String, String)> = expected
        .iter()
        .map(|(c, p, m)| (c.to_string(), p.to_string(), m.replace("{file}", &file)))
        .collect();
    assert_eq!(problems(&report), want, "{name}: {report:#}");
    assert_eq!(report["valid"], false);
    assert_eq!(report["errors"], expected.len());
}

/// Asserts the config passes with no problem at all.
fn assert_passes(name: &str, config: Value) -> Value {
    let (report, _) = run_check(name, &config.to_string(), &[], 0);
    assert_eq!(problems(&report), vec![], "{name}: {report:#}");
    assert_eq!(report["valid"], true);
    report
}

fn ep1(reason: &str, item: &str) -> String {
    format!("The content of configuration item {item} in config file {{file}} is invalid. Reason: {reason}")
}

fn ep3(value: &str, item: &str, reason: &str) -> String {
    format!(
        "Value {value} for parameter {item} in config file {{file}} is invalid. Reason: {reason}"
    )
}

// ---- EP0004 / top level --------------------------------------------------------------------

#[test]
fn malformed_json_gets_ep0004_with_line_and_column() {
    let (report, _) = run_check(
        "ep0004",
        "{\n  \"dump\": {\n    \"dump_path\": \"/tmp\",\n  }\n}\n",
        &[],
        1,
    );
    let p = &report["problems"][0];
    assert_eq!(p["code"], "EP0004");
    assert_eq!(p["function"], "Convert");
    assert_eq!(
        (p["line"].as_u64(), p["column"].as_u64()),
        (Some(4), Some(3))
    );
    assert_eq!(
        p["message"],
        "Parse failed: trailing comma at line 4 column 3"
    );
    assert_eq!(
        p["log_line"],
        "[Convert] Parse failed: trailing comma at line 4 column 3"
    );
    assert!(p["fix"]
        .as_str()
        .is_some_and(|f| f.contains("line 4 column 3")));
    assert_passes(
        "ep0004-ok",
        json!({"dump": {"dump_path": dump_dir(), "dump_list": []}}),
    );
}

#[test]
fn dump_must_be_an_object_and_may_be_absent() {
    assert_fails(
        "dump-array",
        json!({"dump": []}),
        &[(
            "EP0001",
            "dump",
            &ep1("This configuration item must be of the object type", "dump"),
        )],
    );
    let (r, _) = run_check("dump-array-at", "{\n  \"dump\": [1]\n}\n", &[], 1);
    assert_eq!(
        (
            r["problems"][0]["line"].as_u64(),
            r["problems"][0]["column"].as_u64()
        ),
        (Some(2), Some(11))
    );
    let r = assert_passes("no-dump", json!({"profiler": {}}));
    assert_eq!(r["dump_enabled"], false);
    let r = assert_passes("empty-dump", json!({"dump": {}}));
    assert_eq!(r["dump_enabled"], false);
}

// ---- 1. types ------------------------------------------------------------------------------

#[test]
fn string_keys_must_be_strings() {
    for key in [
        "dump_path",
        "dump_mode",
        "dump_op_switch",
        "dump_level",
        "dump_scene",
        "dump_data",
        "dump_debug",
        "dump_kernel_data",
        "dump_step",
    ] {
        let mut dump = json!({"dump_path": dump_dir()});
        dump[key] = json!(1);
        let (report, file) = run_check(
            &format!("type-{key}"),
            &json!({"dump": dump}).to_string(),
            &[],
            1,
        );
        let first = &report["problems"][0];
        assert_eq!(first["code"], "EP0001", "{key}");
        assert_eq!(first["path"], key);
        assert_eq!(first["function"], "CheckFieldValue");
        assert_eq!(
            first["message"],
            ep1("This configuration item must be of the string type", key).replace("{file}", &file)
        );
    }
    assert_passes(
        "type-ok",
        json!({"dump": {"dump_path": dump_dir(), "dump_mode": "all", "dump_level": "op", "dump_data": "tensor", "dump_debug": "off", "dump_op_switch": "off", "dump_kernel_data": "all", "dump_step": "1"}}),
    );
}

#[test]
fn arrays_and_their_members() {
    let d = dump_dir();
    assert_fails(
        "stats-not-array",
        json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_stats": "Max"}}),
        &[(
            "EP0001",
            "dump_stats",
            &ep1(
                "This configuration item must be of the array type",
                "dump_stats",
            ),
        )],
    );
    assert_fails(
        "stats-member",
        json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_stats": ["Max", 3]}}),
        &[(
            "EP0001",
            "dump_stats[1]",
            &ep1(
                "The member type of this configuration item must be string",
                "dump_stats[1]",
            ),
        )],
    );
    assert_fails(
        "list-not-array",
        json!({"dump": {"dump_path": d, "dump_list": {}}}),
        &[(
            "EP0001",
            "dump_list",
            &ep1(
                "This configuration item must be of the array type",
                "dump_list",
            ),
        )],
    );
    assert_fails(
        "list-item",
        json!({"dump": {"dump_path": d, "dump_list": ["m"]}}),
        &[(
            "EP0001",
            "dump_list[0]",
            &ep1(
                "This configuration item must be of the object type",
                "dump_list[0]",
            ),
        )],
    );
    assert_fails(
        "item-fields",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": 1, "layer": "a", "watcher_nodes": [1],
            "optype_blacklist": ["x"], "opname_blacklist": [{"name": 2, "pos": "input0"}], "opname_range": [{"begin": 1, "end": "b"}]}]}}),
        &[
            (
                "EP0001",
                "dump_list[0].model_name",
                &ep1(
                    "This configuration item must be of the string type",
                    "dump_list[0].model_name",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].layer",
                &ep1(
                    "This configuration item must be of the array type",
                    "dump_list[0].layer",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].watcher_nodes[0]",
                &ep1(
                    "The member type of this configuration item must be string",
                    "dump_list[0].watcher_nodes[0]",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].optype_blacklist[0]",
                &ep1(
                    "The member type of this configuration item must be object",
                    "dump_list[0].optype_blacklist[0]",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].opname_blacklist[0].name",
                &ep1(
                    "This configuration item must be of the string type",
                    "dump_list[0].opname_blacklist[0].name",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].opname_blacklist[0].pos",
                &ep1(
                    "This configuration item must be of the array type",
                    "dump_list[0].opname_blacklist[0].pos",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].opname_range[0].begin",
                &ep1(
                    "This configuration item must be of the string type",
                    "dump_list[0].opname_range[0].begin",
                ),
            ),
        ],
    );
    assert_passes(
        "arrays-ok",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_data": "stats", "dump_stats": ["Max"],
        "dump_list": [{"model_name": "m", "layer": ["a"], "optype_blacklist": [{"name": "Add", "pos": ["input0", "output1"]}],
                       "opname_range": [{"begin": "a", "end": "b"}]}]}}),
    );
}

// ---- 2. values -----------------------------------------------------------------------------

#[test]
fn enumerations_empty_and_wrong_values() {
    let d = dump_dir();
    let cases: [(&str, &str); 6] = [
        ("dump_mode", "all/input/output"),
        ("dump_data", "stats/tensor"),
        ("dump_op_switch", "off/on"),
        ("dump_level", "all/kernel/op"),
        ("dump_debug", "off/on"),
        (
            "dump_scene",
            "aic_err_brief_dump/aic_err_detail_dump/aic_err_norm_dump/lite_exception/watcher",
        ),
    ];
    for (key, options) in cases {
        let mut dump = json!({"dump_path": d});
        dump[key] = json!("bogus");
        let (report, file) = run_check(
            &format!("value-{key}"),
            &json!({"dump": dump}).to_string(),
            &[],
            1,
        );
        let p = &report["problems"][0];
        assert_eq!(
            (
                p["code"].as_str(),
                p["path"].as_str(),
                p["function"].as_str()
            ),
            (Some("EP0002"), Some(key), Some("CheckItemValue"))
        );
        assert_eq!(
            p["message"],
            format!("Value bogus for configuration item {key} in file {file} is invalid, must be selected from [{options}].")
        );
        dump[key] = json!("");
        let (report, file) = run_check(
            &format!("empty-{key}"),
            &json!({"dump": dump}).to_string(),
            &[],
            1,
        );
        let p = &report["problems"][0];
        assert_eq!(
            (p["code"].as_str(), p["path"].as_str()),
            (Some("EP0001"), Some(key))
        );
        assert_eq!(
            p["message"],
            ep1("The configuration item value is empty", key).replace("{file}", &file)
        );
    }
    assert_fails("kernel-data", json!({"dump": {"dump_path": d, "dump_kernel_data": "printf,tensr"}}), &[("EP0002", "dump_kernel_data",
        "Value tensr for configuration item dump_kernel_data in file {file} is invalid, must be selected from [all/assert/printf/tensor/timestamp].")]);
    assert_fails("stats-value", json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_stats": ["Max", "max"]}}), &[("EP0002", "dump_stats[1]",
        "Value max for configuration item dump_stats[1] in file {file} is invalid, must be selected from [Avg/L2norm/Max/Min/Nan/Negative Inf/Positive Inf].")]);
    assert_passes(
        "values-ok",
        json!({"dump": {"dump_path": d, "dump_kernel_data": "printf,assert,timestamp", "dump_data": "stats",
        "dump_stats": ["Max", "Min", "Avg", "Nan", "Negative Inf", "Positive Inf", "L2norm"]}}),
    );
}

// ---- 3. constraints ------------------------------------------------------------------------

#[test]
fn watcher_scene_conflicts() {
    let d = dump_dir();
    let ok = json!({"dump": {"dump_path": d, "dump_scene": "watcher", "dump_mode": "output", "dump_list": [{"layer": ["A", "B"], "watcher_nodes": ["C", "D"]}]}});
    let r = assert_passes("watcher-ok", ok);
    assert_eq!(r["dump_type"], "OPERATOR");
    assert_fails(
        "watcher-bad",
        json!({"dump": {"dump_path": d, "dump_scene": "watcher", "dump_debug": "on", "dump_op_switch": "on", "dump_mode": "all",
               "dump_level": "op", "dump_data": "tensor", "dump_kernel_data": "all", "dump_step": "1", "dump_stats": ["Max"],
               "dump_list": [{"layer": ["A"], "watcher_nodes": ["C"]}]}}),
        &[
            ("EP0005", "dump_debug", "When configuration item dump_scene is set to watcher, configuration item dump_debug cannot be set to on"),
            ("EP0005", "dump_op_switch", "When configuration item dump_scene is set to watcher, configuration item dump_op_switch cannot be set to on"),
            ("EP0005", "dump_mode", "When configuration item dump_scene is set to watcher, configuration item dump_mode cannot be set to all"),
            ("EP0005", "dump_level", "When configuration item dump_scene is set to watcher, configuration item dump_level cannot be configured"),
            ("EP0005", "dump_data", "When configuration item dump_scene is set to watcher, configuration item dump_data cannot be configured"),
            ("EP0005", "dump_kernel_data", "When configuration item dump_scene is set to watcher, configuration item dump_kernel_data cannot be configured"),
            ("EP0005", "dump_step", "When configuration item dump_scene is set to watcher, configuration item dump_step cannot be configured"),
            ("EP0005", "dump_stats", "When configuration item dump_scene is set to watcher, configuration item dump_stats cannot be configured"),
            // The watcher rules do not stop the later ones: dump_debug on ends the checks after the path.
            ("EP0005", "dump_op_switch", "When configuration item dump_debug is set to on, configuration item dump_op_switch cannot be set to on"),
            ("EP0005", "dump_list", "When configuration item dump_debug is set to on, configuration item dump_list cannot be configured"),
        ],
    );
    assert_fails(
        "watcher-items",
        json!({"dump": {"dump_path": d, "dump_scene": "watcher", "dump_list": [{"layer": ["A"]}, {"model_name": "m", "watcher_nodes": ["C"]}]}}),
        &[
            ("EP0001", "dump_list[0].watcher_nodes", &ep1("The configuration item value is empty", "dump_list[0].watcher_nodes")),
            ("EP0005", "dump_list[1].model_name", "When configuration item dump_scene is set to watcher, configuration item dump_list[1].model_name cannot be configured"),
        ],
    );
}

#[test]
fn exception_scenes_take_only_the_path() {
    for scene in [
        "lite_exception",
        "aic_err_brief_dump",
        "aic_err_norm_dump",
        "aic_err_detail_dump",
    ] {
        let r = assert_passes(
            &format!("{scene}-ok"),
            json!({"dump": {"dump_scene": scene}}),
        );
        let kind = match scene {
            "aic_err_norm_dump" => "EXCEPTION",
            "aic_err_detail_dump" => "AIC_ERR_DETAIL_DUMP",
            _ => "ARGS_EXCEPTION",
        };
        assert_eq!(r["dump_type"], kind);
        let mut dump = json!({"dump_scene": scene, "dump_path": "/does/not/matter"});
        let forbidden = [
            ("dump_mode", json!("all")),
            ("dump_level", json!("op")),
            ("dump_data", json!("tensor")),
            ("dump_debug", json!("off")),
            ("dump_op_switch", json!("off")),
            ("dump_kernel_data", json!("all")),
            ("dump_step", json!("1")),
            ("dump_stats", json!(["Max"])),
            ("dump_list", json!([])),
        ];
        for (k, v) in &forbidden {
            dump[*k] = v.clone();
        }
        let expected: Vec<(&str, &str, String)> = forbidden
            .iter()
            .map(|(k, _)| ("EP0005", *k, format!("When configuration item dump_scene is set to {scene}, configuration item {k} cannot be configured")))
            .collect();
        let expected: Vec<(&str, &str, &str)> = expected
            .iter()
            .map(|(c, p, m)| (*c, *p, m.as_str()))
            .collect();
        // A missing dump_path directory is not checked in exception scenes, like in CANN.
        assert_fails(&format!("{scene}-bad"), json!({"dump": dump}), &expected);
    }
}

#[test]
fn dump_path_rules() {
    let d = dump_dir();
    assert_fails(
        "path-missing",
        json!({"dump": {"dump_list": []}}),
        &[(
            "EP0001",
            "dump_path",
            &ep1("The configuration item is not found", "dump_path"),
        )],
    );
    assert_fails(
        "path-empty",
        json!({"dump": {"dump_path": ""}}),
        &[(
            "EP0001",
            "dump_path",
            &ep1("The configuration item value is empty", "dump_path"),
        )],
    );
    let long = format!("/{}", "a".repeat(512));
    assert_fails(
        "path-long",
        json!({"dump": {"dump_path": long}}),
        &[(
            "EP0003",
            "dump_path",
            &ep3(
                &long,
                "dump_path",
                "The path length exceeds the maximum limit of 512 characters",
            ),
        )],
    );
    assert_fails(
        "path-remote-chars",
        json!({"dump": {"dump_path": "10.0.0.1:/home/du mp"}}),
        &[(
            "EP0003",
            "dump_path",
            &ep3(
                "/home/du mp",
                "dump_path",
                "The value contains invalid characters",
            ),
        )],
    );
    let r = assert_passes(
        "path-remote",
        json!({"dump": {"dump_path": "10.0.0.1:/home/dump"}}),
    );
    assert!(r["notes"].to_string().contains("remote"));
    assert_fails(
        "path-colon-end",
        json!({"dump": {"dump_path": "10.0.0.1:"}}),
        &[
            (
                "EP0003",
                "dump_path",
                &ep3("10.0.0.1:", "dump_path", "The value is an invalid path"),
            ),
            (
                "EP0003",
                "dump_path",
                &ep3("10.0.0.1:", "dump_path", "The path does not exist"),
            ),
        ],
    );
    let missing = "/nonexistent/npgx/dump";
    assert_fails(
        "path-missing-dir",
        json!({"dump": {"dump_path": missing}}),
        &[(
            "EP0003",
            "dump_path",
            &ep3(missing, "dump_path", "The path does not exist"),
        )],
    );
    let dir = scratch("path-file");
    let file = dir.join("plain.txt");
    std::fs::write(&file, "x").expect("write");
    let f = file.display().to_string();
    assert_fails(
        "path-not-dir",
        json!({"dump": {"dump_path": f}}),
        &[(
            "EP0003",
            "dump_path",
            &ep3(&f, "dump_path", "The path is not a directory path"),
        )],
    );
    let r = assert_passes("path-ok", json!({"dump": {"dump_path": d}}));
    assert_eq!(r["filesystem_checked"], true);
}

#[test]
fn dump_path_permissions_follow_access() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("path-perm").join("locked");
    std::fs::create_dir(&dir).expect("mkdir");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).expect("chmod");
    let p = dir.display().to_string();
    // Root passes access(R_OK|W_OK) whatever the mode bits — and so does CANN running as root.
    let writable_anyway = std::fs::File::create(dir.join("probe")).is_ok();
    if writable_anyway {
        assert_passes("path-perm-root", json!({"dump": {"dump_path": p}}));
    } else {
        assert_fails(
            "path-perm",
            json!({"dump": {"dump_path": p}}),
            &[(
                "EP0003",
                "dump_path",
                &ep3(
                    &p,
                    "dump_path",
                    "The value is a path without read and write permissions",
                ),
            )],
        );
    }
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).expect("chmod back");
}

/// The unwritable branch, whoever runs the suite: npgx runs as an unprivileged user, for whom
/// `access(R_OK|W_OK)` fails on a 0500 directory owned by someone else.
#[test]
#[ignore = "needs an unprivileged account when run as root; scripts/test.sh runs it"]
fn dump_path_without_write_permission_is_ep0003() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch("path-perm-unprivileged");
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o500)).expect("chmod");
    let file = dir.join("cfg.json");
    let p = locked.display().to_string();
    std::fs::write(&file, json!({"dump": {"dump_path": p}}).to_string()).expect("write config");
    let shown = file.display().to_string();
    let out =
        crate::common::npgx_unprivileged(["dump-config", "check", &shown, "--format", "json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let want = vec![(
        "EP0003".to_string(),
        "dump_path".to_string(),
        ep3(
            &p,
            "dump_path",
            "The value is a path without read and write permissions",
        )
        .replace("{file}", &shown),
    )];
    assert_eq!(problems(&report), want, "{report:#}");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).expect("chmod back");
}

#[test]
fn no_fs_check_skips_the_filesystem_and_says_so() {
    let (r, _) = run_check(
        "nofs",
        &json!({"dump": {"dump_path": "/nonexistent/npgx", "dump_list": [{"model_name": "m"}]}})
            .to_string(),
        &["--no-fs-check"],
        0,
    );
    assert_eq!(r["valid"], true);
    assert_eq!(r["filesystem_checked"], false);
    assert!(r["notes"]
        .to_string()
        .contains("filesystem checks skipped (--no-fs-check)"));
    // Text output says it too.
    let dir = scratch("nofs-text");
    let f = dir.join("c.json");
    std::fs::write(
        &f,
        json!({"dump": {"dump_path": "/nonexistent/npgx", "dump_list": []}}).to_string(),
    )
    .expect("write");
    let out = npgx([
        "dump-config",
        "check",
        f.to_str().expect("utf-8"),
        "--no-fs-check",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("note: filesystem checks skipped"), "{text}");
    assert!(!dir.join("nonexistent").exists());
}

#[test]
fn dump_path_is_never_created() {
    let dir = scratch("no-create");
    let target = dir.join("dump-here");
    let (r, _) = run_check(
        "no-create-run",
        &json!({"dump": {"dump_path": target.display().to_string()}}).to_string(),
        &[],
        1,
    );
    assert_eq!(r["problems"][0]["code"], "EP0003");
    assert!(!target.exists(), "check must not create dump_path");
}

#[test]
fn dump_debug_on_rules_and_skips() {
    let d = dump_dir();
    let r = assert_passes(
        "debug-ok",
        json!({"dump": {"dump_path": d, "dump_debug": "on"}}),
    );
    assert_eq!(r["dump_type"], "OP_OVERFLOW");
    // Step, list and stats problems are not reported: CANN never checks them with dump_debug on.
    let (r, file) = run_check(
        "debug-bad",
        &json!({"dump": {"dump_path": d, "dump_debug": "on", "dump_op_switch": "on", "dump_list": [], "dump_step": "9-1", "dump_stats": []}}).to_string(),
        &[],
        1,
    );
    let _ = file;
    assert_eq!(
        problems(&r),
        vec![
            ("EP0005".into(), "dump_op_switch".into(), "When configuration item dump_debug is set to on, configuration item dump_op_switch cannot be set to on".into()),
            ("EP0005".into(), "dump_list".into(), "When configuration item dump_debug is set to on, configuration item dump_list cannot be configured".into()),
        ]
    );
    assert!(r["notes"].to_string().contains(
        "dump_debug is on: like CANN, npgx skips the dump_step, dump_list and dump_stats checks"
    ));
}

#[test]
fn dump_step_grammar() {
    let d = dump_dir();
    assert_passes(
        "step-ok",
        json!({"dump": {"dump_path": d, "dump_step": "0|3|5-10|7-7"}}),
    );
    let many = (0..101)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("|");
    assert_fails(
        "step-many",
        json!({"dump": {"dump_path": d, "dump_step": many}}),
        &[(
            "EP0003",
            "dump_step",
            &ep3(
                &many,
                "dump_step",
                "The value exceeds the maximum limit of 100 intervals",
            ),
        )],
    );
    assert_fails(
        "step-bad",
        json!({"dump": {"dump_path": d, "dump_step": "1-2-3|a|5-|10-2|"}}),
        &[
            ("EP0003", "dump_step[0]", &ep3("1-2-3", "dump_step[0]", "The value has invalid format, expected format: 5-10")),
            ("EP0003", "dump_step[1]", &ep3("a", "dump_step[1]", "The value contains non-digit characters,  expected format: 1 or 5-10")),
            ("EP0003", "dump_step[2]", &ep3("5-", "dump_step[2]", "The value contains non-digit characters,  expected format: 1 or 5-10")),
            ("EP0003", "dump_step[3]", &ep3("10-2", "dump_step[3]", "The value has invalid format, start step must not exceed end step, expected format: 5-10")),
            ("EP0003", "dump_step[4]", &ep3("", "dump_step[4]", "The value contains non-digit characters,  expected format: 1 or 5-10")),
        ],
    );
}

#[test]
fn dump_list_item_rules() {
    let d = dump_dir();
    assert_fails(
        "list-empty-names",
        json!({"dump": {"dump_path": d, "dump_list": [{"model_name": "", "layer": []}]}}),
        &[
            (
                "EP0001",
                "dump_list[0].model_name",
                &ep1(
                    "The configuration item value is empty",
                    "dump_list[0].model_name",
                ),
            ),
            (
                "EP0001",
                "dump_list[0].layer",
                &ep1(
                    "The configuration item value is empty",
                    "dump_list[0].layer",
                ),
            ),
        ],
    );
    // With dump_op_switch on the emptiness rule does not apply.
    assert_passes(
        "list-empty-names-op",
        json!({"dump": {"dump_path": d, "dump_op_switch": "on", "dump_list": [{"layer": []}]}}),
    );
    assert_fails("list-watcher-nodes", json!({"dump": {"dump_path": d, "dump_list": [{"model_name": "m", "watcher_nodes": ["x"]}]}}),
        &[("EP0005", "dump_list[0].watcher_nodes", "When configuration item dump_scene is not set to watcher, configuration item dump_list[0].watcher_nodes cannot be configured")]);
    let entry = json!({"name": "Add", "pos": ["input0"]});
    let many: Vec<Value> = (0..101).map(|_| entry.clone()).collect();
    assert_fails(
        "list-blacklist-size",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": "m", "opname_blacklist": many}]}}),
        &[(
            "EP0003",
            "dump_list[0].opname_blacklist",
            &ep3(
                "101",
                "dump_list[0].opname_blacklist",
                "The value size exceeds the maximum limit of 100",
            ),
        )],
    );
    assert_fails("list-blacklist-level", json!({"dump": {"dump_path": d, "dump_list": [{"model_name": "m", "optype_blacklist": [entry]}]}}),
        &[("EP0005", "dump_list[0].optype_blacklist", "When configuration item dump_level is not set to op, configuration item dump_list[0].optype_blacklist cannot be configured")]);
    assert_fails(
        "list-blacklist-pos",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": "m", "optype_blacklist": [{"name": "Add", "pos": ["input0", "", "inputX", "weight1"]}]}]}}),
        &[
            ("EP0003", "dump_list[0].optype_blacklist[0].pos[2]", &ep3("inputX", "dump_list[0].optype_blacklist[0].pos[2]", "The value has invalid format, the index must be a digit, expected format: input1 or output1")),
            ("EP0003", "dump_list[0].optype_blacklist[0].pos[2]", &ep3("inputX", "dump_list[0].optype_blacklist[0].pos[2]", "The value has invalid format, the prefix must be input or output, expected format: inputn or outputn")),
            ("EP0003", "dump_list[0].optype_blacklist[0].pos[3]", &ep3("weight1", "dump_list[0].optype_blacklist[0].pos[3]", "The value has invalid format, the prefix must be input or output, expected format: inputn or outputn")),
        ],
    );
    assert_passes(
        "list-blacklist-ok",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": "m", "optype_blacklist": [{"name": "Add", "pos": ["input0", "output12"]}]}]}}),
    );
    assert_fails(
        "list-range",
        json!({"dump": {"dump_path": d, "dump_list": [{"opname_range": [{"begin": "a", "end": "b"}, {"begin": "c"}]}]}}),
        &[
            ("EP0005", "dump_list[0].opname_range", "When configuration item dump_level is not set to op, configuration item dump_list[0].opname_range cannot be configured"),
            ("EP0001", "dump_list[0].model_name", &ep1("The configuration item is not found", "dump_list[0].model_name")),
            ("EP0003", "dump_list[0].opname_range[1]", &ep3("begin=c, end=", "dump_list[0].opname_range[1]", "The item is incomplete, begin and end must be configured together and non-empty")),
        ],
    );
    assert_fails(
        "list-range-empty-model",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_op_switch": "on", "dump_list": [{"model_name": "", "opname_range": [{"begin": "a", "end": "b"}]}]}}),
        &[(
            "EP0001",
            "dump_list[0].model_name",
            &ep1(
                "The configuration item value is empty",
                "dump_list[0].model_name",
            ),
        )],
    );
    // Reported once, although two rules (switch off, opname_range) reach the same verdict.
    assert_fails(
        "list-range-empty-model-once",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": "", "opname_range": [{"begin": "a", "end": "b"}]}]}}),
        &[(
            "EP0001",
            "dump_list[0].model_name",
            &ep1(
                "The configuration item value is empty",
                "dump_list[0].model_name",
            ),
        )],
    );
    assert_passes(
        "list-range-ok",
        json!({"dump": {"dump_path": d, "dump_level": "op", "dump_list": [{"model_name": "m", "opname_range": [{"begin": "a", "end": "b"}]}]}}),
    );
}

#[test]
fn dump_stats_rules() {
    let d = dump_dir();
    assert_fails(
        "stats-empty",
        json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_stats": []}}),
        &[(
            "EP0001",
            "dump_stats",
            &ep1("The configuration item value is empty", "dump_stats"),
        )],
    );
    for (name, data) in [
        ("stats-tensor", json!("tensor")),
        ("stats-default", Value::Null),
    ] {
        let mut dump = json!({"dump_path": d, "dump_stats": ["Max"]});
        if !data.is_null() {
            dump["dump_data"] = data;
        }
        assert_fails(name, json!({"dump": dump}), &[("EP0005", "dump_stats", "When configuration item dump_data is set to tensor, configuration item dump_stats cannot be configured")]);
    }
    assert_passes(
        "stats-ok",
        json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_stats": ["Max", "L2norm"]}}),
    );
}

#[test]
fn every_problem_at_once_in_cann_order_with_fixes_and_warnings() {
    let (r, _) = run_check(
        "all-at-once",
        &json!({"dump": {"dump_mode": "outptu", "dump_step": "3-1", "dump_stats": [], "dump_steps": "1", "dump_list": [{"model_name": "", "layers": ["a"]}]}}).to_string(),
        &[],
        1,
    );
    let got: Vec<(String, String)> = problems(&r).into_iter().map(|(c, p, _)| (c, p)).collect();
    assert_eq!(
        got,
        [
            ("EP0002", "dump_mode"),
            ("EP0001", "dump_path"),
            ("EP0003", "dump_step[0]"),
            ("EP0001", "dump_list[0].model_name"),
            ("EP0001", "dump_stats"),
            ("unknown-key", "dump_steps"),
            ("unknown-key", "dump_list[0].layers"),
        ]
        .map(|(c, p)| (c.to_string(), p.to_string()))
        .to_vec()
    );
    assert_eq!(
        (r["errors"].as_u64(), r["warnings"].as_u64()),
        (Some(5), Some(2))
    );
    let fixes: Vec<&str> = r["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["fix"].as_str())
        .collect();
    assert!(fixes.iter().all(|f| !f.is_empty() && !f.contains('\n')));
    assert_eq!(
        fixes[0],
        "replace \"outptu\" with \"output\" (allowed: input, output, all)"
    );
    assert_eq!(fixes[5], "did you mean \"dump_step\"? rename the key");
    assert_eq!(fixes[6], "did you mean \"layer\"? rename the key");
    assert_eq!(
        r["problems"][1]["log_line"],
        format!(
            "[CheckDumpPath] {}",
            r["problems"][1]["message"].as_str().unwrap_or_default()
        )
    );
}

#[test]
fn unknown_keys_in_blacklists_and_ranges() {
    let cfg = json!({"dump": {"dump_path": dump_dir(), "dump_level": "op", "dump_list": [{"model_name": "m",
        "optype_blacklist": [{"name": "Add", "position": ["input0"]}], "opname_range": [{"begin": "a", "end": "b", "stop": "c"}]}]}});
    let (r, _) = run_check("unknown-nested", &cfg.to_string(), &[], 0);
    let got: Vec<(String, String)> = problems(&r).into_iter().map(|(c, p, _)| (c, p)).collect();
    assert_eq!(
        got,
        vec![
            (
                "unknown-key".to_string(),
                "dump_list[0].optype_blacklist[0].position".to_string()
            ),
            (
                "unknown-key".to_string(),
                "dump_list[0].opname_range[0].stop".to_string()
            ),
        ]
    );
    assert_eq!(
        r["problems"][0]["fix"],
        "remove it or check the spelling against the acl.json documentation"
    );
}

#[test]
fn warnings_alone_keep_the_config_valid() {
    let (r, _) = run_check(
        "warn-only",
        &json!({"dump": {"dump_path": dump_dir(), "dump_list": [], "dumpmode": "all"}}).to_string(),
        &[],
        0,
    );
    assert_eq!(
        (r["valid"].as_bool(), r["warnings"].as_u64()),
        (Some(true), Some(1))
    );
    assert_eq!(r["dump_enabled"], false);
}

// ---- --graph -------------------------------------------------------------------------------

const TRANSDATA: &str = "cann/graph-transdata-kernel-meta/ge_proto_00000062_Build.txt";

#[test]
fn graph_names_exist_or_were_fused() {
    let g = sample(TRANSDATA).display().to_string();
    let cfg = json!({"dump": {"dump_path": dump_dir(), "dump_list": [{"model_name": "ResNet-50_0", "layer": ["trans_TransData_0", "conv1", "no_such_op", "trans_transdata_0"]}]}});
    let (r, _) = run_check("graph", &cfg.to_string(), &["--graph", &g], 1);
    assert_eq!(
        problems(&r),
        vec![
            ("fused-op-name".into(), "dump_list[0].layer[1]".into(), "conv1 is a pre-fusion name: graph fusion folded it into conv1conv1_relu (Conv2D)".into()),
            ("op-not-in-graph".into(), "dump_list[0].layer[2]".into(), "no_such_op is not an op of the given graph dump(s); CANN would dump nothing for it".into()),
            ("op-not-in-graph".into(), "dump_list[0].layer[3]".into(), "trans_transdata_0 is not an op of the given graph dump(s); CANN would dump nothing for it".into()),
        ]
    );
    assert_eq!(r["problems"][1]["fix"], "copy the node name from the graph dump (op { name: \"…\" }) of the run that will be dumped");
    assert_eq!(
        r["problems"][2]["fix"],
        "did you mean \"trans_TransData_0\"? node names are case-sensitive"
    );
    assert_eq!(r["problems"][0]["severity"], "warning");
    assert_eq!(r["problems"][1]["severity"], "error");
    assert_eq!(r["graphs"][0]["ops"], 170);
    assert_eq!(r["graphs"][0]["graphs"], 1);
    let ok = json!({"dump": {"dump_path": dump_dir(), "dump_list": [{"layer": ["trans_TransData_0", "conv1conv1_relu"]}]}});
    let stale = json!({"dump": {"dump_path": dump_dir(), "dump_list": [{"model_name": "ge_default_20200101000000_1"}]}});
    let (r, _) = run_check("graph-model", &stale.to_string(), &["--graph", &g], 0);
    assert_eq!(
        problems(&r),
        vec![(
            "model-not-in-graph".into(),
            "dump_list[0].model_name".into(),
            "ge_default_20200101000000_1 is not the name of a graph in the given dump(s) (root graph(s): ResNet-50_0)".into()
        )]
    );
    let (r, _) = run_check("graph-ok", &ok.to_string(), &["--graph", &g], 0);
    assert_eq!(problems(&r), vec![]);
}

#[test]
fn graph_hcom_ops_in_watcher_mode_and_several_graphs() {
    let dir = scratch("hcom");
    let g = dir.join("ge_proto_00000001_Build.txt");
    std::fs::write(
        &g,
        "graph {\n  name: \"g\"\n  op {\n    name: \"allreduce_1\"\n    type: \"HcomAllReduce\"\n  }\n  op {\n    name: \"add_1\"\n    type: \"Add\"\n  }\n}\n",
    )
    .expect("write graph");
    let asys =
        sample("cann/asys-20230713-aicore-collection/dfx/graph/370_0/ge_proto_00000001_Build.txt");
    let cfg = json!({"dump": {"dump_path": dump_dir(), "dump_scene": "watcher", "dump_list": [{"layer": ["add_1", "GatherV2"], "watcher_nodes": ["allreduce_1"]}]}});
    let (r, _) = run_check(
        "hcom-run",
        &cfg.to_string(),
        &[
            "--graph",
            g.to_str().expect("utf-8"),
            "--graph",
            asys.to_str().expect("utf-8"),
        ],
        0,
    );
    assert_eq!(
        problems(&r),
        vec![(
            "hcom-in-watcher".into(),
            "dump_list[0].watcher_nodes[0]".into(),
            "allreduce_1 is an Hcom (collective communication) op (type HcomAllReduce, graph g): HCCL, not an AI Core kernel, writes its buffers, and the watcher scene is meant for compute operators".into()
        )]
    );
    assert_eq!(r["graphs"].as_array().map(Vec::len), Some(2));
}

/// adump's one `OPERATOR` type covers tensors, statistics and the watcher scene: the report says
/// which, in JSON and in the text's last line.
#[test]
fn operator_dump_names_tensors_stats_or_watcher() {
    let d = dump_dir();
    let cases = [
        (
            "what-tensors",
            json!({"dump": {"dump_path": d, "dump_mode": "all", "dump_list": [{"model_name": "m"}]}}),
            json!({"kind": "tensors", "mode": "all"}),
            "CANN will run: an operator tensor dump of the input and output tensors (OPERATOR)",
        ),
        (
            "what-stats",
            json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_list": [{"model_name": "m"}]}}),
            json!({"kind": "stats", "mode": "output",
                   "stats": ["Max", "Min", "Avg", "Nan", "Negative Inf", "Positive Inf"]}),
            "CANN will run: a statistics dump: for each op execution a CSV row per output tensor with Max, Min, Avg, Nan, Negative Inf, Positive Inf, instead of the tensor data (OPERATOR, dump_data stats)",
        ),
        (
            "what-stats-items",
            json!({"dump": {"dump_path": d, "dump_data": "stats", "dump_mode": "input", "dump_stats": ["L2norm", "Nan"], "dump_op_switch": "on"}}),
            json!({"kind": "stats", "mode": "input", "stats": ["L2norm", "Nan"]}),
            "CANN will run: a statistics dump: for each op execution a CSV row per input tensor with L2norm, Nan, instead of the tensor data (OPERATOR, dump_data stats)",
        ),
        (
            "what-watcher",
            json!({"dump": {"dump_path": d, "dump_scene": "watcher", "dump_list": [{"layer": ["A"], "watcher_nodes": ["C"]}]}}),
            json!({"kind": "watcher"}),
            "CANN will run: a watcher dump: after each op in layer, the outputs of the watcher_nodes, to find the op that overwrites them (OPERATOR, dump_scene watcher)",
        ),
    ];
    for (name, config, json_what, text_what) in cases {
        let r = assert_passes(name, config.clone());
        assert_eq!(r["dump_type"], "OPERATOR", "{name}");
        assert_eq!(r["operator_dump"], json_what, "{name}");
        let file = scratch(name).join("cfg.json");
        std::fs::write(&file, config.to_string()).expect("write config");
        let out = npgx(["dump-config", "check", file.to_str().expect("utf-8")]);
        assert_eq!(out.status.code(), Some(0), "{name}");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.lines().any(|l| l == text_what), "{name}: {text}");
    }
    let r = assert_passes(
        "what-overflow",
        json!({"dump": {"dump_path": d, "dump_debug": "on"}}),
    );
    assert_eq!(r["operator_dump"], Value::Null);
}

// ---- exit codes and new --------------------------------------------------------------------

#[test]
fn unreadable_inputs_exit_2() {
    let out = npgx(["dump-config", "check", "/nonexistent/cfg.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read /nonexistent/cfg.json"));
    let dir = scratch("bad-graph");
    let cfg = dir.join("c.json");
    std::fs::write(&cfg, "{\"dump\": {}}").expect("write");
    let bad = dir.join("ge_proto_bad.txt");
    std::fs::write(&bad, "graph {\n  op {\n    id: \"x\"\n  }\n}\n").expect("write");
    let out = npgx([
        "dump-config",
        "check",
        cfg.to_str().expect("utf-8"),
        "--graph",
        bad.to_str().expect("utf-8"),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a readable GE graph dump") && err.contains("line 3"),
        "{err}"
    );
    let out = npgx(["dump-config", "new", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn new_writes_refuses_to_overwrite_and_prints_torchair_lines() {
    let dir = scratch("new");
    let f = dir.join("dump_config.json");
    let fs = f.to_str().expect("utf-8");
    let out = npgx([
        "dump-config",
        "new",
        "watcher",
        "--layer",
        "MatMul_3",
        "--watch",
        "Add_1,Add_2",
        "--dump-path",
        "/data/dump",
        "-o",
        fs,
        "--torchair",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written: Value =
        serde_json::from_slice(&std::fs::read(&f).expect("written")).expect("json");
    assert_eq!(
        written,
        json!({"dump": {"dump_path": "/data/dump", "dump_scene": "watcher", "dump_mode": "output",
                        "dump_list": [{"layer": ["MatMul_3"], "watcher_nodes": ["Add_1", "Add_2"]}]}})
    );
    let py = String::from_utf8_lossy(&out.stdout);
    assert!(py.contains("config = torchair.CompilerConfig()"), "{py}");
    assert!(py.contains("config.dump_config.enable_dump = True"));
    assert!(
        py.contains(&format!("config.dump_config.dump_config_path = \"{fs}\"")),
        "{py}"
    );
    // The same lines in the JSON document, which then is all stdout holds.
    let g = dir.join("json_config.json");
    let gs = g.to_str().expect("utf-8");
    let doc = npgx_json(
        [
            "dump-config",
            "new",
            "stats",
            "-o",
            gs,
            "--torchair",
            "--format",
            "json",
        ],
        0,
    );
    let lines = doc["torchair"].as_str().expect("torchair lines");
    assert!(
        lines.contains(&format!("config.dump_config.dump_config_path = \"{gs}\"")),
        "{lines}"
    );
    let plain = npgx_json(["dump-config", "new", "stats", "--format", "json"], 0);
    assert!(plain.get("torchair").is_none(), "{plain:#}");
    let again = npgx(["dump-config", "new", "overflow", "-o", fs]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists; pass --force to overwrite it"));
    assert_eq!(
        serde_json::from_slice::<Value>(&std::fs::read(&f).expect("kept")).expect("json"),
        written
    );
    let forced = npgx(["dump-config", "new", "overflow", "-o", fs, "--force"]);
    assert_eq!(forced.status.code(), Some(0));
    let over: Value =
        serde_json::from_slice(&std::fs::read(&f).expect("overwritten")).expect("json");
    assert_eq!(
        over,
        json!({"dump": {"dump_path": "./", "dump_debug": "on"}})
    );
}

#[test]
fn new_rejects_options_that_do_not_apply_or_give_an_invalid_config() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["dump-config", "new", "overflow", "--layer", "x"],
            "--layer does not apply to the overflow preset",
        ),
        (
            &["dump-config", "new", "watcher"],
            "needs at least one --watch",
        ),
        (
            &["dump-config", "new", "model", "--dump-step", "5-1"],
            "EP0003 dump_step[0]",
        ),
        (
            &["dump-config", "new", "stats", "--stats", "Median"],
            "--stats Median: not a statistic",
        ),
    ];
    for (args, msg) in cases {
        let out = npgx(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(msg), "{args:?}: {err}");
        assert!(out.stdout.is_empty());
    }
}

/// Every subset of `items`.
fn subsets<T: Clone>(items: &[T]) -> Vec<Vec<T>> {
    (0..1u32 << items.len())
        .map(|mask| {
            items
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, x)| x.clone())
                .collect()
        })
        .collect()
}

/// Sets one option on a [`PresetOptions`].
type Setter = Box<dyn Fn(&mut PresetOptions)>;

/// One concrete value setter per option flag; several values for the enumerations.
fn setters(flag: &str) -> Vec<Setter> {
    match flag {
        "dump-path" => vec![Box::new(|o: &mut PresetOptions| {
            o.dump_path = Some("10.0.0.1:/data/dump".into())
        })],
        "model-name" => vec![Box::new(|o: &mut PresetOptions| {
            o.model_name = Some("ge_default_20230713074125_11".into())
        })],
        "layer" => vec![Box::new(|o: &mut PresetOptions| {
            o.layers = vec!["GatherV2".into(), "trans_TransData_0".into()]
        })],
        "watch" => vec![Box::new(|o: &mut PresetOptions| {
            o.watch = vec!["Add_1".into()]
        })],
        "dump-mode" => [DumpMode::Input, DumpMode::Output, DumpMode::All]
            .into_iter()
            .map(|m| Box::new(move |o: &mut PresetOptions| o.dump_mode = Some(m)) as Setter)
            .collect(),
        "dump-step" => vec![Box::new(|o: &mut PresetOptions| {
            o.dump_step = Some("0|5-10".into())
        })],
        "dump-level" => [DumpLevel::Op, DumpLevel::Kernel, DumpLevel::All]
            .into_iter()
            .map(|l| Box::new(move |o: &mut PresetOptions| o.dump_level = Some(l)) as Setter)
            .collect(),
        "stats" => vec![Box::new(|o: &mut PresetOptions| {
            o.stats = vec!["Max".into(), "L2norm".into()]
        })],
        "single-op" => vec![Box::new(|o: &mut PresetOptions| o.single_op = true)],
        // --line / --fx-node through the graph texts: one entry per graph.
        "line" => vec![Box::new(|o: &mut PresetOptions| {
            o.models = vec![
                (
                    "graph_1".into(),
                    vec!["MatMulV2".into(), "MatMulV2_1".into()],
                ),
                ("graph_2".into(), vec!["Add_2".into()]),
            ]
        })],
        other => panic!("no setter for --{other}"),
    }
}

#[test]
fn round_trip_every_preset_with_every_option_combination_passes_check() {
    let mut checked = 0;
    for preset in Preset::ALL {
        for combo in subsets(preset.options()) {
            // Expand the enumerated options into every value.
            let mut variants: Vec<PresetOptions> = vec![PresetOptions::default()];
            for flag in &combo {
                variants = variants
                    .iter()
                    .flat_map(|base| {
                        setters(flag).into_iter().map(move |set| {
                            let mut o = base.clone();
                            set(&mut o);
                            o
                        })
                    })
                    .collect();
            }
            for options in variants {
                let text = match preset::render(preset, &options) {
                    Ok(t) => t,
                    Err(e) => {
                        // The only refusals are the documented ones.
                        let watcher_without_victim =
                            preset == Preset::Watcher && options.watch.is_empty();
                        let single_op_with_list = options.single_op
                            && (options.model_name.is_some()
                                || !options.layers.is_empty()
                                || !options.models.is_empty());
                        assert!(
                            watcher_without_victim || single_op_with_list,
                            "{preset:?} {options:?}: {e}"
                        );
                        continue;
                    }
                };
                let report = check(
                    text.as_bytes(),
                    "gen.json",
                    &CheckOptions { filesystem: true },
                );
                assert!(
                    report.valid && report.problems.is_empty(),
                    "{preset:?} {options:?}\n{text}\n{:?}",
                    report.problems
                );
                assert_eq!(report.dump_enabled, Some(true), "{preset:?} {options:?}");
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "only {checked} configs generated");
}

#[test]
fn round_trip_through_the_binary_for_each_preset() {
    let dir = scratch("round-trip");
    for preset in Preset::ALL {
        let f = dir.join(format!("{}.json", preset.name()));
        let fs = f.to_str().expect("utf-8");
        let mut args = vec!["dump-config", "new", preset.name(), "-o", fs];
        if preset == Preset::Watcher {
            args.extend(["--watch", "Add_1"]);
        }
        let out = npgx(&args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}: {}",
            preset.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        let r = npgx_json(["dump-config", "check", fs, "--format", "json"], 0);
        assert_eq!(r["problems"], json!([]), "{}", preset.name());
    }
    assert!(Path::new(&dir).join("model.json").exists());
}

#[test]
fn every_problem_carries_its_line_and_column() {
    let text = "{\n  \"dump\": {\n    \"dump_mode\": \"outptu\",\n    \"dump_list\": [\n      {\"model_name\": \"\"}\n    ]\n  }\n}\n";
    let (r, _) = run_check("positions", text, &["--no-fs-check"], 1);
    let at: Vec<(String, Option<u64>, Option<u64>)> = r["problems"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            (
                p["path"].as_str().unwrap_or_default().to_string(),
                p["line"].as_u64(),
                p["column"].as_u64(),
            )
        })
        .collect();
    assert_eq!(
        at,
        vec![
            ("dump_mode".to_string(), Some(3), Some(18)),
            // A missing key points at the object that lacks it.
            ("dump_path".to_string(), Some(2), Some(11)),
            ("dump_list[0].model_name".to_string(), Some(5), Some(22)),
        ]
    );
}
