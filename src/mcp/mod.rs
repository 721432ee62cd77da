//! `npgx mcp`: npgx's analysis commands as tools of a Model Context Protocol server on stdio,
//! for agent clients (Claude Code and Desktop, Cursor, CANNBot, any MCP client).
//!
//! The wire. MCP's stdio transport is JSON-RPC 2.0, one message per line in both directions;
//! stdout belongs to the protocol for the life of the command (diagnostics go to stderr). The
//! server speaks the protocol revisions of the `initialize` handshake ([`PROTOCOL_VERSIONS`]):
//! it answers `initialize`, `ping`, `tools/list` and `tools/call`, and takes the notifications
//! `notifications/initialized` and `notifications/cancelled`. Any other method is "method not
//! found" — which is also how a client that first probes the stateless revision's
//! `server/discover` learns to fall back to the handshake.
//!
//! Written here rather than with the official Rust SDK (`rmcp`): rmcp is async on tokio, whose
//! features then change for the whole build (polars also uses tokio, so every polars crate is
//! compiled again), it would bring tokio into the lean build, which has none, and it needs a
//! newer Rust than npgx's floor; the part of the protocol a tool server uses is these six
//! messages, and the Python SDK's client tests them (tests/it/mcp.rs).
//!
//! Threads. One thread reads stdin and hands each line over; this thread (the caller's) parses
//! and answers them and is the only one that writes to stdout. A `tools/call` runs on its own
//! thread, so the server keeps answering (`ping`, other calls, a cancellation) while an engine
//! works; its progress notifications and its result come back here to be written. A
//! cancellation sets the call's flag, which its progress sink hands the engine
//! ([`crate::cancel::Cancel`]: the scan and the comparison stop reading) and which keeps its
//! result from being sent. A panic in an engine is caught at that thread's boundary and becomes
//! an error result.
//!
//! Errors. A bad argument, a missing path, a file that cannot be read: the tool's result is an
//! error result (`isError: true`, `npgx: error: …` naming the file), which the agent reads and
//! can act on; an unknown tool, a malformed request or an unknown method is a JSON-RPC error.
//! Nothing a client sends stops the server: it ends, with exit 0, when the client closes stdin
//! (after the calls still running have answered) or closes stdout.

use crate::tools;

use std::collections::HashMap;
use std::io::{self, BufRead, Read, Write};
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::{json, Map, Value};

use crate::tools::ToolDef;

/// The protocol revisions of the `initialize` handshake the server speaks, oldest first; a
/// client asking for another gets the newest.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// The shortest gap between two progress notifications of one call.
pub const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The longest message read (bytes of one line); a longer one is answered with a parse error
/// and skipped, so a client cannot make the server hold an unbounded line.
pub const MAX_MESSAGE: u64 = 64 << 20;

/// JSON-RPC's error codes.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;

/// What the server tells a client about itself at initialisation.
const INSTRUCTIONS: &str = "npgx diagnoses PyTorch graph-mode (torch.compile, npugraph_ex / \
torchair) failures on Ascend NPUs from what a run left behind. Every tool returns npgx's JSON \
document (`schema`, `schema_version`, …; docs/json.md) as structured content. Start with \
triage_classify on pasted output or triage_analyze on a triage tree; plog / aicore on CANN logs; \
dump_scan / dump_compare on dump trees; dump_config_* to plan the next dump. Paths are read on \
the machine the server runs on; nothing is written unless a tool is given an output path.";

/// What reaches the writing thread.
enum Event {
    /// One line from the client (without its line end), or a line over [`MAX_MESSAGE`].
    Line(Result<Vec<u8>, u64>),
    /// stdin is closed or failed: no more requests.
    End(Option<io::Error>),
    /// A notification a running call sends (progress).
    Notify(Value),
    /// A call's response; `key` is its request id as JSON text.
    Done { key: String, response: Value },
}

/// Serves MCP on `input` and `output` until the client closes `input` or `output`.
pub fn serve(input: Box<dyn BufRead + Send>, output: &mut dyn Write) -> io::Result<()> {
    let tools: Arc<Vec<ToolDef>> = Arc::new(tools::all());
    let (tx, rx) = channel::<Event>();
    let reader_tx = tx.clone();
    std::thread::Builder::new()
        .name("npgx-mcp-stdin".into())
        .spawn(move || read_lines(input, MAX_MESSAGE, &reader_tx))?;
    let mut server = Server {
        tools,
        tx,
        running: HashMap::new(),
        ended: false,
    };
    let mut out = Wire(output);
    while let Ok(event) = rx.recv() {
        match event {
            Event::Line(Ok(line)) => {
                if let Some(reply) = server.handle(&line) {
                    out.send(&reply)?;
                }
            }
            Event::Line(Err(len)) => out.send(&error(
                Value::Null,
                PARSE_ERROR,
                &format!("a message of {len} bytes, over the limit of {MAX_MESSAGE}: skipped"),
            ))?,
            Event::End(err) => {
                if let Some(e) = err {
                    eprintln!("npgx mcp: reading stdin failed: {e}");
                }
                server.ended = true;
            }
            Event::Notify(message) => out.send(&message)?,
            Event::Done { key, response } => {
                let cancelled = server
                    .running
                    .remove(&key)
                    .is_some_and(|c| c.load(Ordering::Relaxed));
                // A cancelled request gets no response (the protocol's rule).
                if !cancelled {
                    out.send(&response)?;
                }
            }
        }
        if server.ended && server.running.is_empty() {
            break;
        }
    }
    Ok(())
}

/// Reads `input` line by line into `tx` until it ends; a line of over `limit` bytes is skipped
/// and reported by its length.
fn read_lines(mut input: Box<dyn BufRead + Send>, limit: u64, tx: &Sender<Event>) {
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = Read::take(&mut *input, limit + 1).read_until(b'\n', &mut line);
        let event = match read {
            Ok(0) => Event::End(None),
            Ok(_) if line.last() != Some(&b'\n') && line.len() as u64 > limit => {
                let mut rest = 0u64;
                match skip_line(&mut input, &mut rest) {
                    Ok(()) => Event::Line(Err(limit + 1 + rest)),
                    Err(e) => Event::End(Some(e)),
                }
            }
            Ok(_) => {
                while matches!(line.last(), Some(b'\n' | b'\r')) {
                    line.pop();
                }
                Event::Line(Ok(std::mem::take(&mut line)))
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Event::End(Some(e)),
        };
        let end = matches!(event, Event::End(_));
        if tx.send(event).is_err() || end {
            return;
        }
    }
}

/// Skips `input` up to and including the next line end, counting the bytes in `skipped`.
fn skip_line(input: &mut dyn BufRead, skipped: &mut u64) -> io::Result<()> {
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        match memchr::memchr(b'\n', buf) {
            Some(i) => {
                *skipped += i as u64;
                input.consume(i + 1);
                return Ok(());
            }
            None => {
                let n = buf.len();
                *skipped += n as u64;
                input.consume(n);
            }
        }
    }
}

/// stdout, one message per line, flushed after each.
struct Wire<'a>(&'a mut dyn Write);

impl Wire<'_> {
    fn send(&mut self, message: &Value) -> io::Result<()> {
        // serde_json escapes line ends inside strings: a message is always one line.
        let mut text = message.to_string();
        text.push('\n');
        self.0.write_all(text.as_bytes())?;
        self.0.flush()
    }
}

/// The server's state on the writing thread.
struct Server {
    tools: Arc<Vec<ToolDef>>,
    tx: Sender<Event>,
    /// Calls running, by request id (JSON text), with their cancellation flag.
    running: HashMap<String, Arc<AtomicBool>>,
    /// stdin has ended: stop once the running calls have answered.
    ended: bool,
}

impl Server {
    /// Answers one line: the response to write now, if any (a call answers later).
    fn handle(&mut self, line: &[u8]) -> Option<Value> {
        if line.iter().all(u8::is_ascii_whitespace) {
            return None;
        }
        let message: Value = match serde_json::from_slice(line) {
            Ok(v) => v,
            Err(e) => return Some(error(Value::Null, PARSE_ERROR, &format!("not JSON: {e}"))),
        };
        let Value::Object(message) = message else {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "a message must be one JSON-RPC object (batches are not part of MCP since \
                 2025-06-18)",
            ));
        };
        let id = message.get("id").cloned();
        let Some(method) = message.get("method").and_then(Value::as_str) else {
            // A response to a request of ours (we send none), or nonsense: nothing to answer
            // unless it carries an id.
            return match id {
                Some(id) if !message.contains_key("result") && !message.contains_key("error") => {
                    Some(error(id, INVALID_REQUEST, "a request needs a `method`"))
                }
                _ => None,
            };
        };
        if message.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return id.map(|id| error(id, INVALID_REQUEST, "`jsonrpc` must be \"2.0\""));
        }
        let params = message.get("params").cloned().unwrap_or(Value::Null);
        let Some(id) = id else {
            self.notification(method, &params);
            return None;
        };
        if !(id.is_string() || id.is_i64() || id.is_u64()) {
            return Some(error(
                Value::Null,
                INVALID_REQUEST,
                "a request id must be a string or an integer",
            ));
        }
        match method {
            "initialize" => Some(reply(id, initialize(&params))),
            "ping" => Some(reply(id, json!({}))),
            "tools/list" => Some(reply(id, json!({ "tools": self.listed() }))),
            "tools/call" => self.call(id, &params),
            _ => Some(error(
                id,
                METHOD_NOT_FOUND,
                &format!("method not found: {method}"),
            )),
        }
    }

    fn notification(&mut self, method: &str, params: &Value) {
        if method == "notifications/cancelled" {
            if let Some(id) = params.get("requestId") {
                if let Some(flag) = self.running.get(&id.to_string()) {
                    flag.store(true, Ordering::Relaxed);
                }
            }
        }
        // notifications/initialized and any other notification: nothing to do.
    }

    /// The tools as `tools/list` shows them.
    fn listed(&self) -> Vec<Value> {
        self.tools.iter().map(describe).collect()
    }

    /// Starts a `tools/call` on its own thread; an error to answer now when it cannot start.
    fn call(&mut self, id: Value, params: &Value) -> Option<Value> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Some(error(id, INVALID_PARAMS, "tools/call needs a tool `name`"));
        };
        let Some(index) = self.tools.iter().position(|t| t.name == name) else {
            return Some(error(id, INVALID_PARAMS, &format!("unknown tool: {name}")));
        };
        let arguments = match params.get("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(a)) => a.clone(),
            Some(_) => {
                return Some(error(
                    id,
                    INVALID_PARAMS,
                    "tools/call `arguments` must be an object",
                ))
            }
        };
        let token = params
            .get("_meta")
            .and_then(|m| m.get("progressToken"))
            .filter(|t| t.is_string() || t.is_i64() || t.is_u64())
            .cloned();
        let key = id.to_string();
        let cancelled = Arc::new(AtomicBool::new(false));
        self.running.insert(key.clone(), Arc::clone(&cancelled));
        let flag = Arc::clone(&cancelled);
        let tools = Arc::clone(&self.tools);
        let tx = self.tx.clone();
        let (own_key, own_id) = (key.clone(), id.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("npgx-mcp-{name}"))
            .spawn(move || {
                let tool = &tools[index];
                let sink = Throttled::new(tx.clone(), token, flag);
                let outcome =
                    std::panic::catch_unwind(AssertUnwindSafe(|| (tool.call)(arguments, &sink)));
                sink.flush();
                let result = match outcome {
                    Ok(Ok(document)) => json!({
                        "content": [{"type": "text", "text": document.to_string()}],
                        "structuredContent": document,
                        "isError": false,
                    }),
                    Ok(Err(e)) => failed(&format!("npgx: error: {e:#}")),
                    Err(panic) => failed(&format!(
                        "npgx: internal error in {}: {}",
                        tool.name,
                        panic_text(panic.as_ref())
                    )),
                };
                let _ = tx.send(Event::Done {
                    key,
                    response: reply(id, result),
                });
            });
        match spawned {
            Ok(_) => None,
            Err(e) => {
                self.running.remove(&own_key);
                Some(reply(
                    own_id,
                    failed(&format!("npgx: error: cannot start the call: {e}")),
                ))
            }
        }
    }
}

/// `initialize`'s result: the client's revision when the server speaks it, else the newest.
fn initialize(params: &Value) -> Value {
    let asked = params.get("protocolVersion").and_then(Value::as_str);
    let version = asked
        .filter(|v| PROTOCOL_VERSIONS.contains(v))
        .unwrap_or(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]);
    json!({
        "protocolVersion": version,
        "capabilities": {"tools": {"listChanged": false}},
        "serverInfo": {
            "name": "npgx",
            "title": "npgx: Ascend graph-mode triage",
            "version": env!("CARGO_PKG_VERSION"),
        },
        "instructions": INSTRUCTIONS,
    })
}

/// A tool's MCP description: its input schema, its output schema when npgx publishes one for
/// its document, and whether it may write.
fn describe(def: &ToolDef) -> Value {
    let mut tool = json!({
        "name": def.name,
        "title": def.title,
        "description": def.description,
        "inputSchema": (def.input_schema)(),
        "annotations": {
            "title": def.title,
            "readOnlyHint": !def.writes,
            "destructiveHint": false,
            "openWorldHint": false,
        },
    });
    if let Some(schema) = def.document.and_then(crate::schema::document_schema) {
        tool["outputSchema"] = schema;
    }
    tool
}

fn reply(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

fn error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// A tool's error result.
fn failed(text: &str) -> Value {
    json!({"content": [{"type": "text", "text": text}], "isError": true})
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// The [`tools::Progress`] sink of one call: with the client's progress token, passes on at
/// most one update per [`PROGRESS_EVERY`] and the last one at [`Throttled::flush`], each with
/// more work done than the one before (the protocol wants progress to increase).
struct Throttled {
    tx: Sender<Event>,
    token: Option<Value>,
    state: Mutex<ThrottleState>,
    /// The call's cancellation flag (set by `notifications/cancelled`).
    cancelled: Arc<AtomicBool>,
}

#[derive(Default)]
struct ThrottleState {
    last_sent: Option<Instant>,
    sent: Option<u64>,
    pending: Option<(u64, Option<u64>)>,
}

impl Throttled {
    fn new(tx: Sender<Event>, token: Option<Value>, cancelled: Arc<AtomicBool>) -> Throttled {
        Throttled {
            tx,
            token,
            state: Mutex::new(ThrottleState::default()),
            cancelled,
        }
    }

    fn send(&self, state: &mut ThrottleState, done: u64, total: Option<u64>) {
        let Some(token) = &self.token else { return };
        if state.sent.is_some_and(|s| done <= s) {
            return;
        }
        state.sent = Some(done);
        state.last_sent = Some(Instant::now());
        state.pending = None;
        let mut params = json!({"progressToken": token, "progress": done});
        if let Some(total) = total {
            params["total"] = json!(total);
        }
        let _ = self.tx.send(Event::Notify(json!({
            "jsonrpc": "2.0",
            "method": "notifications/progress",
            "params": params,
        })));
    }

    fn flush(&self) {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some((done, total)) = state.pending.take() {
            self.send(&mut state, done, total);
        }
    }
}

impl tools::Progress for Throttled {
    fn cancel(&self) -> crate::cancel::Cancel {
        crate::cancel::Cancel::of(Arc::clone(&self.cancelled))
    }

    fn advance(&self, done: u64, total: Option<u64>) {
        if self.token.is_none() {
            return;
        }
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state
            .last_sent
            .is_none_or(|t| t.elapsed() >= PROGRESS_EVERY)
        {
            self.send(&mut state, done, total);
        } else {
            state.pending = Some((done, total));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server's answers to `lines`, one JSON value per line it wrote.
    fn session(lines: &[Value]) -> Vec<Value> {
        let mut text = String::new();
        for l in lines {
            text.push_str(&l.to_string());
            text.push('\n');
        }
        let mut out = Vec::new();
        serve(Box::new(io::Cursor::new(text.into_bytes())), &mut out).expect("served");
        String::from_utf8(out)
            .expect("UTF-8")
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON message per line"))
            .collect()
    }

    fn request(id: i64, method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    }

    fn by_id(answers: &[Value], id: i64) -> &Value {
        answers
            .iter()
            .find(|a| a["id"] == json!(id))
            .unwrap_or_else(|| panic!("no answer to {id} in {answers:#?}"))
    }

    #[test]
    fn handshake_list_and_protocol_errors() {
        let answers = session(&[
            request(1, "initialize", json!({"protocolVersion": "2025-06-18"})),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            request(2, "initialize", json!({"protocolVersion": "2099-01-01"})),
            request(3, "ping", Value::Null),
            request(4, "tools/list", json!({})),
            request(5, "server/discover", json!({})),
            request(6, "tools/call", json!({"name": "rm_rf", "arguments": {}})),
            request(7, "tools/call", json!({"name": "plog", "arguments": [1]})),
            json!({"id": 8, "method": "ping"}),
            json!([request(9, "ping", Value::Null)]),
            json!({"jsonrpc": "2.0", "id": null, "method": "ping"}),
        ]);
        assert_eq!(
            by_id(&answers, 1)["result"]["protocolVersion"],
            "2025-06-18"
        );
        assert_eq!(by_id(&answers, 1)["result"]["serverInfo"]["name"], "npgx");
        assert_eq!(
            by_id(&answers, 2)["result"]["protocolVersion"],
            "2025-11-25"
        );
        assert_eq!(by_id(&answers, 3)["result"], json!({}));
        let tools = by_id(&answers, 4)["result"]["tools"].as_array().unwrap();
        assert!(tools.len() >= 10, "{tools:#?}");
        for t in tools {
            assert_eq!(t["inputSchema"]["type"], "object", "{t:#}");
            if t["name"] != "schema" {
                assert_eq!(t["outputSchema"]["type"], "object", "{t:#}");
            }
        }
        assert_eq!(by_id(&answers, 5)["error"]["code"], METHOD_NOT_FOUND);
        assert_eq!(by_id(&answers, 6)["error"]["code"], INVALID_PARAMS);
        assert_eq!(by_id(&answers, 7)["error"]["code"], INVALID_PARAMS);
        assert_eq!(by_id(&answers, 8)["error"]["code"], INVALID_REQUEST);
        let nulls: Vec<&Value> = answers.iter().filter(|a| a["id"].is_null()).collect();
        assert_eq!(nulls.len(), 2, "{answers:#?}");
        assert!(nulls.iter().all(|a| a["error"]["code"] == INVALID_REQUEST));
        // The notification got no answer: one answer per request.
        assert_eq!(answers.len(), 10, "{answers:#?}");
    }

    #[test]
    fn a_tool_error_is_a_result_and_the_server_goes_on() {
        let answers = session(&[
            request(
                1,
                "tools/call",
                json!({"name": "triage_analyze", "arguments": {"dir": "/nonexistent/npgx-tree"}}),
            ),
            request(
                2,
                "tools/call",
                json!({"name": "triage_classify", "arguments": {}}),
            ),
            request(
                3,
                "tools/call",
                json!({"name": "triage_classify", "arguments": {
                    "text": "RuntimeError: call aclnnAdd failed, error code is 507011\n"}}),
            ),
            request(4, "ping", Value::Null),
        ]);
        let missing = &by_id(&answers, 1)["result"];
        assert_eq!(missing["isError"], true);
        let text = missing["content"][0]["text"].as_str().unwrap();
        assert!(text.starts_with("npgx: error: ") && text.contains("/nonexistent/npgx-tree"));
        assert_eq!(by_id(&answers, 2)["result"]["isError"], true);
        let ok = &by_id(&answers, 3)["result"];
        assert_eq!(ok["isError"], false);
        assert_eq!(ok["structuredContent"]["schema"], "npgx.triage-classify");
        let text: Value = serde_json::from_str(ok["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, ok["structuredContent"]);
        assert_eq!(by_id(&answers, 4)["result"], json!({}));
    }

    #[test]
    fn an_over_long_line_is_skipped_and_the_next_one_read() {
        let (tx, rx) = channel();
        let input = b"0123456789abcdef\n{\"a\":1}\r\nxyz".to_vec();
        read_lines(Box::new(io::Cursor::new(input)), 8, &tx);
        let got: Vec<Event> = rx.try_iter().collect();
        assert!(matches!(got[0], Event::Line(Err(16))));
        assert!(matches!(&got[1], Event::Line(Ok(l)) if l == b"{\"a\":1}"));
        assert!(matches!(&got[2], Event::Line(Ok(l)) if l == b"xyz"));
        assert!(matches!(got[3], Event::End(None)));
        assert_eq!(got.len(), 4);
    }

    #[test]
    fn a_cancelled_call_is_flagged() {
        let (tx, _rx) = channel();
        let mut server = Server {
            tools: Arc::new(Vec::new()),
            tx,
            running: HashMap::new(),
            ended: false,
        };
        let flag = Arc::new(AtomicBool::new(false));
        server.running.insert("\"abc\"".into(), Arc::clone(&flag));
        let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                            "params": {"requestId": "abc"}});
        assert!(server.handle(cancel.to_string().as_bytes()).is_none());
        assert!(flag.load(Ordering::Relaxed));
    }

    #[test]
    fn progress_only_increases_and_the_last_update_is_sent() {
        use tools::Progress as _;
        let (tx, rx) = channel();
        let sink = Throttled::new(tx, Some(json!("tok")), Default::default());
        sink.advance(0, Some(4));
        sink.advance(0, Some(5)); // not more work done: never sent
        sink.advance(1, Some(5)); // within PROGRESS_EVERY: pending
        sink.advance(5, Some(5)); // replaces it
        sink.flush();
        sink.flush();
        let sent: Vec<(u64, u64)> = rx
            .try_iter()
            .map(|e| match e {
                Event::Notify(v) => (
                    v["params"]["progress"].as_u64().unwrap(),
                    v["params"]["total"].as_u64().unwrap(),
                ),
                _ => panic!("not a notification"),
            })
            .collect();
        assert_eq!(sent, [(0, 4), (5, 5)]);
        let (tx, rx) = channel();
        let silent = Throttled::new(tx, None, Default::default());
        silent.advance(1, None);
        silent.flush();
        assert_eq!(rx.try_iter().count(), 0);
    }
}
