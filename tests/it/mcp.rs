//! `npgx mcp`: the official MCP Python SDK as the independent client (`scripts/mcp_client.py`),
//! and the protocol's own rules checked on raw JSON-RPC lines.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{json, Value};

use crate::common::repo;
use crate::triage::scratch;

#[test]
#[ignore = "needs the MCP Python SDK (scripts/test.sh provides it)"]
fn the_python_sdk_calls_every_tool() {
    let py = crate::common::python_with("mcp, jsonschema");
    let dir = scratch("mcp-client");
    let out = Command::new(py)
        .arg(repo().join("scripts/mcp_client.py"))
        .arg("--npgx")
        .arg(env!("CARGO_BIN_EXE_npgx"))
        .arg("--repo")
        .arg(repo())
        .arg("--samples")
        .arg(repo().join("../shared/samples"))
        .arg("--scratch")
        .arg(&dir)
        .output()
        .expect("the MCP client runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(text.contains(" passed, 0 failed"), "{text}");
    assert!(!text.contains("FAIL"), "{text}");
}

/// A raw JSON-RPC session with `npgx mcp`: one message per line, as the stdio transport frames
/// them.
struct Raw {
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl Raw {
    fn send(&mut self, message: Value) {
        self.stdin
            .write_all(format!("{message}\n").as_bytes())
            .unwrap();
        self.stdin.flush().unwrap();
    }

    fn ask(&mut self, request: Value) -> Value {
        self.send(request);
        let mut text = String::new();
        self.stdout.read_line(&mut text).unwrap();
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text:?}"))
    }
}

#[test]
fn raw_json_rpc_initialize_list_and_a_bad_call_then_a_quiet_exit() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("npgx mcp starts");
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
    };
    let init = raw.ask(json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "npgx-test", "version": "0"}
        }
    }));
    assert_eq!(init["result"]["serverInfo"]["name"], "npgx", "{init:#}");
    assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init:#}");
    raw.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let list = raw.ask(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
    let tools = list["result"]["tools"].as_array().expect("tools");
    assert!(
        tools.iter().any(|t| t["name"] == "triage_classify"),
        "{list:#}"
    );
    let bad = raw.ask(json!({
        "jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "triage_analyze", "arguments": {"dir": "/nonexistent/tree"}}
    }));
    assert_eq!(bad["result"]["isError"], true, "{bad:#}");
    let text = bad["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("/nonexistent/tree"), "{text}");
    let unknown = raw.ask(json!({
        "jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "rm_rf", "arguments": {}}
    }));
    assert!(unknown["error"]["code"].is_i64(), "{unknown:#}");
    let classified = raw.ask(json!({
        "jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "triage_classify", "arguments": {
            "text": "RuntimeError: NPU function error: call aclnnAdd failed, error code is 507011\n"
        }}
    }));
    let doc = &classified["result"]["structuredContent"];
    assert_eq!(doc["schema"], "npgx.triage-classify", "{classified:#}");
    assert_eq!(doc["items"][0]["file"], "<text>", "{classified:#}");
    // The client goes away: the server ends quietly.
    drop(raw);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// `npgx mcp` whose client stopped reading: the first answer finds stdout closed, and the server
/// ends quietly with 0, as every command does (tests/it/cli.rs).
#[test]
fn a_closed_stdout_ends_the_server_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .arg("mcp")
        .stdin(Stdio::piped())
        .stdout(crate::cli::closed_pipe())
        .stderr(Stdio::piped())
        .spawn()
        .expect("npgx mcp starts");
    let mut stdin = child.stdin.take().unwrap();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                      "params": {"protocolVersion": "2025-11-25"}});
    // The server may already be gone when the second line is written.
    let _ = stdin.write_all(format!("{init}\n{init}\n").as_bytes());
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
}

/// The CPU seconds process `pid` has used (user + system, from /proc/<pid>/stat).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc stat");
    // After the `(comm)` field: state is field 3, utime 14, stime 15.
    let rest = &stat[stat.rfind(')').expect("comm") + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
    // SAFETY: sysconf has no preconditions.
    ticks / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
}

/// A `dump_scan` of a large tree cancelled by the client stops working: within a second of the
/// cancellation the server uses no more CPU, sends no result for the call, and answers the next
/// request.
#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn a_cancelled_scan_frees_its_cores_within_a_second() {
    // 4 000 links to a 6 MiB dump (the truncation tree's largest): 23 GiB to read whole (99 s
    // for the debug build uncancelled).
    let big = std::fs::read_dir(crate::common::fixture(
        "truncation/worldsize1_global_rank0/20241121120000/0/ge_default_bench/1/0",
    ))
    .unwrap()
    .flatten()
    .map(|e| e.path())
    .max_by_key(|p| p.metadata().map(|m| m.len()).unwrap_or(0))
    .expect("a dump");
    let name = big.file_name().unwrap().to_string_lossy().into_owned();
    let tree = scratch("mcp-cancel");
    for d in 0..40 {
        let dir = tree.join(format!("worldsize1_global_rank0/20241121120000/0/m{d}/1/0"));
        std::fs::create_dir_all(&dir).unwrap();
        for k in 0..100 {
            std::os::unix::fs::symlink(&big, dir.join(format!("{k}_{name}"))).unwrap();
        }
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_npgx"))
        .arg("mcp")
        .env("NPGX_MMAP", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("npgx mcp starts");
    let pid = child.id();
    let mut raw = Raw {
        stdin: child.stdin.take().unwrap(),
        stdout: BufReader::new(child.stdout.take().unwrap()),
    };
    raw.ask(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18"}}));
    raw.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                    "params": {"name": "dump_scan", "arguments": {"path": tree}}}));
    // Working: both cores busy.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let busy = cpu_seconds(pid);
    assert!(busy > 0.5, "the scan had not started working: {busy} CPU s");
    raw.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                    "params": {"requestId": 2, "reason": "test"}}),
    );
    std::thread::sleep(std::time::Duration::from_secs(1));
    let at_one = cpu_seconds(pid);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let after = cpu_seconds(pid) - at_one;
    assert!(
        after < 0.2,
        "{after} CPU s used in the 2 s after the first second"
    );
    // No result for the cancelled call: the next line answers the next request.
    let pong = raw.ask(json!({"jsonrpc": "2.0", "id": 3, "method": "ping"}));
    assert_eq!(pong["id"], 3, "{pong:#}");
    drop(raw);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let _ = std::fs::remove_dir_all(&tree);
}
