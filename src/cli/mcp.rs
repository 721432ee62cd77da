//! `npgx mcp`: the MCP server on stdio ([`crate::mcp`]).

use std::process::ExitCode;

/// Arguments of `npgx mcp` (none: the client speaks on stdin).
#[derive(Debug, clap::Args)]
#[command(
    about = "Serve npgx's analysis commands as MCP tools on stdin/stdout (for agent clients)",
    long_about = "Serve npgx's analysis commands as tools of a Model Context Protocol server \
on stdin/stdout, for agent clients: dump_scan, dump_compare, plog, aicore, triage_classify, \
triage_analyze, dump_config_check, dump_config_new, dump_config_plan, merge (not in a lean \
build) and schema. Each tool \
returns the JSON document the command prints with --format json (its structured content, checked \
against the document's JSON Schema, which the tool publishes as its output schema). Tools only \
read, except dump_config_new and dump_config_plan when given an `output` path (an existing file \
only with `force: true`). A bad path or argument is a tool error result; the server keeps \
answering. Long calls (dump_scan, dump_compare) send progress notifications when the client gives \
a progress token. Protocol revisions 2024-11-05 to 2025-11-25 (the initialize handshake).\n\n\
The client starts the server itself; register it, e.g. in .mcp.json or \
claude_desktop_config.json:\n\n\
  {\"mcpServers\": {\"npgx\": {\"command\": \"npgx\", \"args\": [\"mcp\"]}}}\n\n\
stdout carries the protocol only; diagnostics go to stderr. The server ends with exit 0 when \
the client closes stdin (or stdout). docs/agents.md"
)]
pub struct Args {}

pub fn run(_: Args) -> anyhow::Result<ExitCode> {
    let input = Box::new(std::io::BufReader::new(std::io::stdin()));
    crate::mcp::serve(input, &mut super::stdout())?;
    Ok(ExitCode::SUCCESS)
}
