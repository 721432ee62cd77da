#!/usr/bin/env python3
"""Drives `npgx mcp` with the official MCP Python SDK (`mcp` on PyPI), the independent client of
tests/it/mcp.rs: initialize, tools/list, every tool called on the bundled example and the shared
samples, each result checked against the tool's output schema with `jsonschema` and against what
the command prints with --format json, errors for bad input, and the server still answering
after each of them.

    mcp_client.py --npgx target/debug/npgx --repo . --samples ../shared/samples --scratch DIR

Prints one line per check and ends with "N passed, M failed"; exits 1 when a check failed.
"""

import argparse
import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

TOOLS = {
    "dump_scan",
    "dump_compare",
    "plog",
    "aicore",
    "triage_classify",
    "triage_analyze",
    "dump_config_check",
    "dump_config_new",
    "dump_config_plan",
    "merge",
    "schema",
}
WRITERS = {"dump_config_new", "dump_config_plan"}


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, ok, what, detail=""):
        if ok:
            self.passed += 1
            print(f"ok   {what}")
        else:
            self.failed += 1
            print(f"FAIL {what} {detail}")
        return ok


def cli_json(npgx, args):
    """What the command prints with --format json (the document the tool must return)."""
    out = subprocess.run([npgx, *args, "--format", "json"], capture_output=True, check=False)
    return json.loads(out.stdout)


def triage_tree(root: Path, log: Path):
    """A hand-made five-step tree that failed at step 5 with `log` as its screen log."""
    (root / "scripts").mkdir(parents=True, exist_ok=True)
    names = [
        "step1-eager",
        "step2-compile-eager",
        "step3-compile-aot_eager",
        "step4-npugraph_ex-force_eager",
        "step5-npugraph_ex",
    ]
    for name in names:
        d = root / name
        (d / "ascend_plog").mkdir(parents=True, exist_ok=True)
        (root / "scripts" / f"{name}.py").write_text("print('step')\n")
        if name == names[-1]:
            (d / "stdout_stderr.log").write_bytes(log.read_bytes())
        else:
            (d / "stdout_stderr.log").write_text("ok\n")
            (d / "SUCCESS").write_text("")
    (root / "first_failure.txt").write_text("step5-npugraph_ex exit_code=1\n")
    (root / "env.txt").write_text("torch: 2.6.0\n")


async def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--npgx", required=True)
    ap.add_argument("--repo", required=True, type=Path)
    ap.add_argument("--samples", required=True, type=Path)
    ap.add_argument("--scratch", required=True, type=Path)
    a = ap.parse_args()
    c = Checks()
    npgx = a.npgx
    dump = a.repo / "testdata/dump-example"
    plog = a.samples / "logs/01-plog-raw-aivec-gatherv3-assert-2025.log"
    pasted = a.samples / "triage/03-dynamo-observed-exception-wrapped-engine-dead.txt"
    acl = a.samples / "real/acl-json/hicann-ge__testDump1.json"
    missing = str(a.scratch / "does-not-exist")
    tree = a.scratch / "tree"
    triage_tree(tree, pasted)

    server = StdioServerParameters(command=npgx, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            c.check(init.server_info.name == "npgx", "initialize: server npgx", init.server_info)
            c.check(init.capabilities.tools is not None, "initialize: tools capability")

            listed = (await s.list_tools()).tools
            by_name = {t.name: t for t in listed}
            c.check(set(by_name) == TOOLS, "tools/list: every tool", sorted(by_name))
            for t in listed:
                c.check(
                    t.input_schema.get("type") == "object" and bool(t.description),
                    f"tools/list: {t.name} has an input schema and a description",
                )
                if t.name != "schema":  # returns a JSON Schema, or the list of them
                    c.check(
                        isinstance(t.output_schema, dict) and t.output_schema.get("type") == "object",
                        f"tools/list: {t.name} has an output schema",
                    )
                read_only = t.annotations is not None and t.annotations.read_only_hint
                c.check(
                    bool(read_only) == (t.name not in WRITERS),
                    f"tools/list: {t.name} read-only hint",
                )

            async def call(name, args, progress=None):
                return await s.call_tool(name, args, progress_callback=progress)

            async def good(name, args, schema, cli=None, progress=None):
                """A call that must succeed, return `schema`, validate, and equal the CLI's."""
                r = await call(name, args, progress)
                doc = r.structured_content
                if not c.check(not r.is_error and isinstance(doc, dict), f"{name}: result", r.content):
                    return None
                c.check(doc.get("schema") == schema, f"{name}: document {schema}", doc.get("schema"))
                try:
                    jsonschema.Draft202012Validator(by_name[name].output_schema).validate(doc)
                    c.check(True, f"{name}: valid against its output schema")
                except jsonschema.ValidationError as e:
                    c.check(False, f"{name}: valid against its output schema", e.message)
                text = json.loads(r.content[0].text) if r.content else None
                c.check(text == doc, f"{name}: text content is the same document")
                if cli is not None:
                    c.check(cli_json(npgx, cli) == doc, f"{name}: same document as `npgx {' '.join(cli[:2])}`")
                return doc

            async def bad(name, args, why):
                r = await call(name, args)
                c.check(r.is_error, f"{name}: error result for {why}", r.structured_content)
                text = r.content[0].text if r.content else ""
                c.check("npgx: error" in text, f"{name}: the error says what is wrong", text)
                # Still answering.
                again = await s.list_tools()
                c.check(len(again.tools) == len(TOOLS), f"after {name} ({why}): still answering")

            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total))

            scan = await good("dump_scan", {"path": str(dump)}, "npgx.dump-scan",
                              ["dump-scan", str(dump)], progress=on_progress)
            c.check(bool(seen) and seen[-1][1] is not None and seen[-1][0] == seen[-1][1],
                    "dump_scan: progress notifications up to the total", seen)
            await good("dump_compare", {"golden": str(dump), "target": str(dump)}, "npgx.dump-compare",
                       ["dump-compare", str(dump), str(dump)])
            await good("plog", {"paths": [str(plog)]}, "npgx.plog", ["plog", str(plog)])
            await good("aicore", {"paths": [str(plog)]}, "npgx.aicore", ["aicore", str(plog)])
            from_file = await good("triage_classify", {"file": str(pasted)}, "npgx.triage-classify",
                                   ["triage", "classify", str(pasted)])
            from_text = await good("triage_classify", {"text": pasted.read_text()}, "npgx.triage-classify")
            if from_file and from_text:
                f, t = from_file["items"][0], from_text["items"][0]
                c.check(
                    (f["route"], f["first_causal_error"]) == (t["route"], t["first_causal_error"]),
                    "triage_classify: pasted text reads as the file does",
                )
            await good("triage_analyze", {"dir": str(tree)}, "npgx.triage-analyze",
                       ["triage", "analyze", str(tree)])
            await good("dump_config_check", {"file": str(acl), "no_fs_check": True}, "npgx.dump-config",
                       ["dump-config", "check", str(acl), "--no-fs-check"])
            await good("dump_config_new", {"preset": "overflow", "dump_path": "/tmp"}, "npgx.dump-config",
                       ["dump-config", "new", "overflow", "--dump-path", "/tmp"])
            # merge: a shard of the example written by the command (merge's own engine is tested
            # on the independent cluster fixtures in tests/it/merge.rs; here, the tool's plumbing).
            shards = a.scratch / "shards"
            shards.mkdir(parents=True, exist_ok=True)
            subprocess.run([npgx, "dump-scan", str(dump), "--format", "parquet", "--rank", "0", "--world-size", "1",
                            "-o", str(shards / "rank0.parquet")], check=False, capture_output=True)
            c.check((shards / "rank0.parquet").is_file(), "merge: the shard to merge was written")
            await good("merge", {"shards": [str(shards)]}, "npgx.merge", ["merge", str(shards)])
            await bad("merge", {"shards": [missing]}, "a missing shard directory")
            r = await call("schema", {"name": "npgx.dump-scan"})
            c.check(not r.is_error and r.structured_content == by_name["dump_scan"].output_schema,
                    "schema: npgx.dump-scan is dump_scan's output schema")
            r = await call("schema", {})
            listing = r.structured_content or {}
            names = {e.get("name") for e in listing.get("schemas", [])}
            c.check(listing.get("schema") == "npgx.schema-list" and {
                "npgx.dump-scan", "npgx.dump-compare", "npgx.plog", "npgx.aicore",
                "npgx.triage-classify", "npgx.triage-analyze", "npgx.dump-config", "npgx.merge"} <= names,
                "schema: the list names every tool's document", sorted(names))

            # Writing: only with an output path, never over a file without force.
            out = a.scratch / "dump_config.json"
            await good("dump_config_new", {"preset": "overflow", "dump_path": "/tmp", "output": str(out)},
                       "npgx.dump-config")
            c.check(out.is_file(), "dump_config_new: wrote the output file")
            before = out.read_bytes()
            await bad("dump_config_new", {"preset": "overflow", "dump_path": "/data", "output": str(out)},
                      "an existing output without force")
            c.check(out.read_bytes() == before, "dump_config_new: the existing file is untouched")
            await good("dump_config_new",
                       {"preset": "overflow", "dump_path": "/data", "output": str(out), "force": True},
                       "npgx.dump-config")
            c.check(out.read_bytes() != before, "dump_config_new: force overwrote it")
            if scan:
                saved = a.scratch / "scan.json"
                saved.write_text(json.dumps(scan))
                plan_out = a.scratch / "planned.json"
                await good("dump_config_plan", {"reports": [str(saved)], "output": str(plan_out)},
                           "npgx.dump-config")
                c.check(plan_out.is_file(), "dump_config_plan: wrote the output file")
                await bad("dump_config_plan", {"reports": [str(saved)], "output": str(plan_out)},
                          "an existing output without force")

            # Bad input: error results, never a crash.
            await bad("dump_scan", {"path": missing}, "a missing path")
            await bad("dump_scan", {"path": 5}, "a path of the wrong type")
            await bad("dump_scan", {}, "a missing argument")
            await bad("dump_compare", {"golden": missing, "target": str(dump)}, "a missing golden")
            await bad("plog", {"paths": []}, "no paths")
            await bad("aicore", {"paths": [missing]}, "a missing log")
            await bad("triage_classify", {}, "neither text nor file")
            await bad("triage_classify", {"text": "x", "file": str(pasted)}, "both text and file")
            await bad("triage_classify", {"text": "x", "colour": "red"}, "an unknown argument")
            await bad("triage_analyze", {"dir": missing}, "a missing tree")
            # A file that is not JSON is a finding of the check (CANN's EP0004), not a tool error.
            not_json = await good("dump_config_check", {"file": str(plog), "no_fs_check": True},
                                  "npgx.dump-config",
                                  ["dump-config", "check", str(plog), "--no-fs-check"])
            if not_json:
                c.check(not_json.get("valid") is False
                        and [p.get("code") for p in not_json.get("problems", [])] == ["EP0004"],
                        "dump_config_check: a file that is not JSON is EP0004", not_json.get("problems"))
            await bad("dump_config_check", {"file": missing}, "a missing file")
            await bad("dump_config_new", {"preset": "nonsense"}, "an unknown preset")
            await bad("dump_config_new", {"preset": "overflow", "force": True}, "force without output")
            await bad("schema", {"name": "npgx.nonsense"}, "an unknown document")
            try:
                await call("no_such_tool", {})
                c.check(False, "unknown tool: a protocol error")
            except MCPError:
                c.check(True, "unknown tool: a protocol error")
            await good("plog", {"paths": [str(plog)]}, "npgx.plog")

    print(f"{c.passed} passed, {c.failed} failed")
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
