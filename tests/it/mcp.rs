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
