#!/usr/bin/env python3
"""Checks the agent skills under skills/ so that they cannot rot.

A skill (the Agent Skills layout CANNBot loads) is a folder `skills/<name>/` with `SKILL.md`
(YAML frontmatter `name` and `description`, then the body an agent reads when the skill is
activated), `references/*.md` that SKILL.md links and the agent opens on demand, and
`evals/evals.json` (cases for agent evaluation runs). Two kinds of check:

1. **Form** (no binary needed): the frontmatter rules (`name` = the folder name, lowercase letters,
   digits and single hyphens, at most 64 characters; `description` 1-1024 characters; only the
   keys the format defines), the body under 5 000 words, every relative link resolving, every
   reference linked from SKILL.md, every backticked `npgx-…` skill name naming a skill that
   exists, evals.json against EVALS_SCHEMA, and — statically, for the blocks of 2 — every
   `--format json` command's document known (DOCUMENTS) and every optional field a `Read:` path
   passes through described (`May be null:`, below).

2. **Commands** (with the built binary): every fenced `sh` / `bash` / `console` block of every
   SKILL.md and reference is extracted. Each command in it must start with `npgx ` and end with
   the exit codes the skill tells the agent to expect, `# exit 0|1` (free text may follow the
   codes). Its `<PLACEHOLDERS>` are filled from FIXTURES, the one table of fixtures (generated
   ones under target/fixtures/, testdata/, the shared samples; a row may be scoped to the skill
   whose scenario needs it, such as a script that fails only in step 5); a placeholder the table
   does not fill fails. The block runs once per combination of the fixture values its
   placeholders take (a placeholder with three fixtures runs three times), each time in a fresh
   working directory (so a block may write a file and read it back: `> scan.json`, then
   `plan scan.json`), with `npgx` and the test Python (`python`, for the triage steps) first on
   PATH. Every run's exit code must be one of the expected codes.

   The paragraph right after a block may start with `Read:` and name, in backticks, the JSON
   field paths the agent is told to read from the block's last `--format json` command (its
   stdout, or the file it is redirected to; an earlier one saves a document a later command
   reads, `> scan.json` then `repro --from-scan scan.json`): `.route`, `.evidence.first_causal_error.line`,
   `.items[].settle` (`[]` walks every element of a list). Each path must be present in that
   command's output for at least one of its fixtures (the key present; its value may be null) —
   so the table must hold a fixture that exercises every field a skill relies on — and, when the
   repository has `schemas/`, in the JSON Schema of the document (`schemas/<schema>.schema.json`,
   `<schema>` the document's own `schema` field).

   A field a path passes through may be optional in that schema: its key not `required` in its
   parent object, or its value allowed to be null. Every such prefix of a `Read:` path (`.bisect`
   and `.bisect.nodes` of `.bisect.nodes.found[].name`) must be listed in the paragraph right
   after `Read:`, which starts `May be null:` (or `May be absent:`), as a code span followed by a
   parenthetical saying when: `May be null: `.first_failure` (every step passed).`. A listed
   field that is no optional prefix of a `Read:` path is stale. The schema is the one DOCUMENTS
   names for the command's subcommand, so this needs no run (`--form-only` checks it too).

Usage: check_skills.py --npgx PATH [--skills DIR] [--schemas DIR] [--form-only]
       check_skills.py --npgx PATH --self-test   (the checker against skills that have rotted)
Exit: 0 every check passed, 1 some failed (each printed), 2 the check could not run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import jsonschema
import yaml
from markdown_it import MarkdownIt

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO.parent / "shared" / "samples"
FIXTURES_DIR = REPO / "target" / "fixtures"
TESTDATA = REPO / "testdata"

# ---------------------------------------------------------------------------------------------
# The one table of fixtures. Each entry fills one placeholder, or several that belong together
# (a golden and a target run); each value is one fixture: the text that replaces the
# placeholders (paths absolute, shell-quoted when filled in) and the environment it needs.
# `None` as a path means a fresh name inside the run's working directory (an output).


@dataclass
class Fill:
    # A Path is a fixture (it must exist), a str literal text, None a fresh output name.
    values: dict[str, Path | str | None]
    env: dict[str, str] = field(default_factory=dict)
    # What the scenario must make npgx say: a field path (`.analysis.route`) of the block's
    # `--format json` document → the value it must hold, or a test of that value (a callable).
    # A block run on this fixture fails when the document says otherwise: the scenario's
    # verdict is checked where the skill's command runs, not again by a test of its own.
    expect: dict = field(default_factory=dict)


@dataclass
class Row:
    """Fixtures for one placeholder, or several filled together; `skill` scopes a row to the
    skill whose scenario needs that fixture (a script that fails only in step 5 for
    npgx-compile-error), over the rows every skill shares."""

    fills: list[Fill]
    skill: str | None = None

    @property
    def keys(self) -> frozenset[str]:
        return frozenset(self.fills[0].values)


DOUBLE = TESTDATA / "triage" / "npugraph_ex_double"
# The TEST DOUBLE (testdata/triage/README.md) stands in for npugraph_ex here, as in the triage
# tests: a CPU backend registered as `npugraph_ex` when NPGX_TEST_DOUBLE is set. Rejecting every
# option key leaves the option search nothing to flip, so `bisect` goes straight to the nodes.
NO_KNOBS = (
    "force_recapture,clone_output,clone_input,reuse_graph_pool_in_same_fx,remove_noop_ops,"
    "remove_cat_ops,inplace_pass,input_inplace_pass,pattern_fusion_pass,capture_error_mode"
)


def double(mode: str, **extra: str) -> dict[str, str]:
    return {"PYTHONPATH": str(DOUBLE), "NPGX_TEST_DOUBLE": mode, **extra}


def script(name: str, env: dict[str, str] | None = None, expect: dict | None = None) -> Fill:
    return Fill({"<SCRIPT>": TESTDATA / "triage" / name}, env or {}, expect or {})


def at_least_the_doubles_sleep(seconds) -> bool:
    """at least the 0.05 s the slow double sleeps per call"""
    return isinstance(seconds, (int, float)) and seconds >= 0.05


def each(key: str, *paths: Path | None) -> Row:
    return Row([Fill({key: p}) for p in paths])


def repro_op() -> str:
    """The op of the single-op accuracy case, as its writer recorded it (target/fixtures/repro/
    expected.json); a placeholder name when the fixtures are not generated yet (the block then
    fails on the missing fixture directories)."""
    try:
        return json.loads((FIXTURES_DIR / "repro" / "expected.json").read_text(encoding="utf-8"))["accuracy"]["add"]["op_name"]
    except (OSError, ValueError, KeyError):
        return "(fixtures not generated)"


TRIAGE_TREES = FIXTURES_DIR / "triage_trees"
FIXTURES: list[Row] = [
    # The user's repro script. Shared: one that fails already in eager (one process).
    Row([script("eager_break.py")]),
    # Step 4 passes, step 5 fails to compile the graph that holds `tanh` (a converter error).
    Row([script("nodes_model.py", double("options", NPGX_TEST_DOUBLE_REFUSE="tanh", NPGX_TEST_DOUBLE_REJECT=NO_KNOBS))], "npgx-compile-error"),
    # Every step passes; npugraph_ex's `tanh` is off by 1 % (outputs and dumps differ).
    Row([script("nodes_model.py", double("options", NPGX_TEST_DOUBLE_MISCOMPILE="tanh", NPGX_TEST_DOUBLE_REJECT=NO_KNOBS))], "npgx-accuracy"),
    # Every step passes; npugraph_ex is slow (step 5 calls take longer than eager's): npgx routes
    # it to performance by the timings (the end-to-end check of that route: no triage test runs
    # this ladder again).
    Row(
        [
            script(
                "double_model.py",
                double("slow"),
                expect={
                    ".analysis.route": "performance",
                    ".analysis.rule": "compare.timings",
                    ".analysis.comparison.timings[2].fastest_seconds": at_least_the_doubles_sleep,
                },
            )
        ],
        "npgx-performance",
    ),
    # Triage trees as run_triage.sh leaves them (gen_triage_trees_fixtures.py).
    each("<TRIAGE_DIR>", *(TRIAGE_TREES / n for n in ("step5-runtime", "step2-compile", "incomplete"))),
    # Pasted output: screen logs, a report without an error, a paste too weak to route.
    each(
        "<PASTED_OUTPUT>",
        *(
            SAMPLES / "triage" / n
            for n in (
                "23-aicore-execution-timeout-event-query.txt",
                "01-dynamo-unsupported-fake-tensor-custom-op.txt",
                "31-accuracy-graph-mode-enabled-vs-disabled-scores.txt",
                "33-performance-aclgraph-decode-slower-than-torchair.txt",
                "48-env-atb-undefined-symbol-leading-space.txt",
            )
        ),
        TRIAGE_TREES / "weak-evidence.txt",
    ),
    # Pasted output of environment failures: a library and a module that do not load.
    Row(
        [
            Fill({"<PASTED_OUTPUT>": SAMPLES / "triage" / n})
            for n in ("48-env-atb-undefined-symbol-leading-space.txt", "69-env-torchair-ge-converter-module-not-found.txt")
        ],
        "npgx-environment",
    ),
    # plogs: a torch_npu screen log with a CANN report and an AI Vector exception, and a whole asys
    # collection (plogs, device logs, kernels).
    each("<PLOG>", SAMPLES / "logs" / "17-torchnpu-ez9999-aivec-dcache-ub-unindented-2025.log", SAMPLES / "cann" / "asys-20250508-gatherv3-assert"),
    # Dump trees (gen_dump_fixtures.py): a NaN born in the tree, and an overwrite by address.
    each("<DUMP_DIR>", FIXTURES_DIR / "dump" / "example" / "root", FIXTURES_DIR / "dump" / "addr_born" / "root"),
    # A torchair run's dump and the graph texts beside it (gen_source_map_fixtures.py): layer 2's
    # operator born NaN, traced to the model's line; the graph texts alone for `--line`.
    Row([Fill({"<DUMP_DIR>": FIXTURES_DIR / "source_map" / "py_layers" / "dump",
               "<GRAPH_DIR>": FIXTURES_DIR / "source_map" / "py_layers"})]),
    each("<GRAPH_DIR>", FIXTURES_DIR / "source_map" / "py_layers"),
    # Two runs to compare: a GE chain with a planted divergence (gen_compare_fixtures.py).
    Row([Fill({"<GOLDEN>": FIXTURES_DIR / "compare" / "chain" / "golden", "<TARGET>": FIXTURES_DIR / "compare" / "chain" / "target"})]),
    # A single-op accuracy case (gen_repro_fixtures.py): the op, its GE graph and its dump.
    Row(
        [
            Fill(
                {
                    "<OP>": repro_op(),
                    "<GE_GRAPH>": FIXTURES_DIR / "repro" / "accuracy" / "graph",
                    "<DUMP_DIR>": FIXTURES_DIR / "repro" / "accuracy" / "dump",
                }
            )
        ]
    ),
    # Outputs: a fresh name in the run's working directory.
    each("<OUT_DIR>", None),
]

PLACEHOLDER = re.compile(r"<[A-Z][A-Z0-9_]*>")
EXIT_COMMENT = re.compile(r"#\s*exit\s+(\d+(?:\s*\|\s*\d+)*)\b")
FIELD_PATH = re.compile(r"^(\.[A-Za-z_][A-Za-z0-9_]*(\[\])?)+$")
SHELL_INFOS = {"sh", "bash", "console", "shell"}
COMMAND_TIMEOUT = 900

# ---------------------------------------------------------------------------------------------
# evals/evals.json: the shape of CANNBot's evaluation cases.

EXPECTATION_TYPES = ["contains", "not_contains", "file_exists", "file_contains", "skill_activated"]
EVALS_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["skill_name", "evals"],
    "properties": {
        "skill_name": {"type": "string"},
        "eval_mode": {"type": "string"},
        "evals": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "title", "prompt", "expected_output", "files", "expectations"],
                "properties": {
                    "id": {"type": "integer", "minimum": 1},
                    "title": {"type": "string", "minLength": 1},
                    "prompt": {"type": "string", "minLength": 1},
                    "expected_output": {"type": "string", "minLength": 1},
                    "files": {"type": "array", "items": {"type": "string"}},
                    "config": {"type": "object"},
                    "expectations": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["type"],
                            "properties": {
                                "type": {"enum": EXPECTATION_TYPES},
                                "pattern": {"type": "string", "minLength": 1},
                                "path": {"type": "string", "minLength": 1},
                                "description": {"type": "string"},
                            },
                            "allOf": [
                                {
                                    "if": {"properties": {"type": {"enum": ["contains", "not_contains", "skill_activated"]}}},
                                    "then": {"required": ["pattern"]},
                                },
                                {"if": {"properties": {"type": {"const": "file_exists"}}}, "then": {"required": ["path"]}},
                                {
                                    "if": {"properties": {"type": {"const": "file_contains"}}},
                                    "then": {"required": ["path", "pattern"]},
                                },
                            ],
                            "additionalProperties": False,
                        },
                    },
                },
                "additionalProperties": False,
            },
        },
    },
    "additionalProperties": False,
}

FRONTMATTER_KEYS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_BODY_WORDS = 5000


class Problems(list):
    def add(self, where: Path | str, message: str) -> None:
        where = Path(where)
        try:
            where = where.relative_to(REPO)
        except ValueError:
            pass
        self.append(f"{where}: {message}")


# ---------------------------------------------------------------------------------------------
# Form.


def split_frontmatter(text: str) -> tuple[str | None, str]:
    if not text.startswith("---\n"):
        return None, text
    end = text.find("\n---\n", 4)
    if end < 0:
        return None, text
    return text[4 : end + 1], text[end + 5 :]


def check_form(skills: Path, problems: Problems) -> list[Path]:
    names = sorted(p.name for p in skills.iterdir() if p.is_dir())
    if not names:
        problems.add(skills, "no skill folders")
    docs: list[Path] = []
    for name in names:
        folder = skills / name
        skill_md = folder / "SKILL.md"
        if not skill_md.is_file():
            problems.add(folder, "no SKILL.md")
            continue
        text = skill_md.read_text(encoding="utf-8")
        raw, body = split_frontmatter(text)
        if raw is None:
            problems.add(skill_md, "no YAML frontmatter between two `---` lines at the top")
            continue
        try:
            meta = yaml.safe_load(raw)
        except yaml.YAMLError as e:
            problems.add(skill_md, f"frontmatter is not YAML: {e}")
            continue
        if not isinstance(meta, dict):
            problems.add(skill_md, "frontmatter is not a mapping")
            continue
        for key in sorted(set(meta) - FRONTMATTER_KEYS):
            problems.add(skill_md, f"frontmatter key `{key}` is not one of {sorted(FRONTMATTER_KEYS)}")
        fm_name = meta.get("name")
        if fm_name != name:
            problems.add(skill_md, f"name `{fm_name}` is not the folder name `{name}`")
        if not isinstance(fm_name, str) or not NAME.match(fm_name) or len(fm_name) > 64:
            problems.add(skill_md, f"name `{fm_name}`: lowercase letters, digits and single hyphens, at most 64")
        if not name.startswith("npgx-"):
            problems.add(folder, "skill names start with `npgx-` (no collision with cannbot-skills' own)")
        desc = meta.get("description")
        if not isinstance(desc, str) or not desc.strip():
            problems.add(skill_md, "description missing or empty")
        elif len(desc) > 1024:
            problems.add(skill_md, f"description has {len(desc)} characters (at most 1024)")
        words = len(body.split())
        if words >= MAX_BODY_WORDS:
            problems.add(skill_md, f"body has {words} words (under {MAX_BODY_WORDS})")

        refs = sorted((folder / "references").glob("*.md")) if (folder / "references").is_dir() else []
        skill_docs = [skill_md, *refs]
        docs.extend(skill_docs)
        linked: set[Path] = set()
        for doc in skill_docs:
            linked |= check_links(doc, names, problems)
        for ref in refs:
            if ref.resolve() not in linked:
                problems.add(ref, "not linked from SKILL.md or another reference (the agent would never load it)")
        check_evals(folder, names, problems)
    return docs


LINK = re.compile(r"\]\(([^)\s]+)\)")
SKILL_MENTION = re.compile(r"`(npgx-[a-z0-9-]+)`")


def check_links(doc: Path, names: list[str], problems: Problems) -> set[Path]:
    text = doc.read_text(encoding="utf-8")
    found = set()
    for target in LINK.findall(text):
        if re.match(r"^[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#", 1)[0]).resolve()
        if not path.exists():
            problems.add(doc, f"link `{target}` does not resolve")
        found.add(path)
    for mention in SKILL_MENTION.findall(text):
        if mention not in names:
            problems.add(doc, f"`{mention}` names no skill under skills/")
    return found


def check_evals(folder: Path, names: list[str], problems: Problems) -> None:
    path = folder / "evals" / "evals.json"
    if not path.is_file():
        problems.add(folder, "no evals/evals.json")
        return
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        problems.add(path, f"not JSON: {e}")
        return
    for err in sorted(jsonschema.Draft202012Validator(EVALS_SCHEMA).iter_errors(doc), key=str):
        loc = "/".join(str(p) for p in err.absolute_path)
        problems.add(path, f"{loc or '(root)'}: {err.message}")
    if not isinstance(doc, dict):
        return
    if doc.get("skill_name") != folder.name:
        problems.add(path, f"skill_name `{doc.get('skill_name')}` is not `{folder.name}`")
    evals = doc.get("evals") if isinstance(doc.get("evals"), list) else []
    ids = [e.get("id") for e in evals if isinstance(e, dict)]
    if len(ids) != len(set(map(str, ids))):
        problems.add(path, f"ids are not unique: {ids}")
    for e in evals:
        if not isinstance(e, dict):
            continue
        for f in e.get("files") or []:
            if isinstance(f, str) and not (folder / f).exists():
                problems.add(path, f"eval {e.get('id')}: file `{f}` does not exist (relative to the skill)")
        for x in e.get("expectations") or []:
            if isinstance(x, dict) and x.get("type") == "skill_activated" and x.get("pattern") not in names:
                problems.add(path, f"eval {e.get('id')}: skill_activated `{x.get('pattern')}` names no skill")


# ---------------------------------------------------------------------------------------------
# Commands.


@dataclass
class Command:
    text: str
    codes: set[int]
    line: int


@dataclass
class Block:
    doc: Path
    line: int
    commands: list[Command]
    reads: list[str]
    # The `May be null:` paragraph after `Read:`: each field it lists, with the parenthetical
    # saying when (None: there is none).
    optional: dict[str, str | None] = field(default_factory=dict)


def extract_blocks(doc: Path, problems: Problems) -> list[Block]:
    tokens = MarkdownIt("commonmark").parse(doc.read_text(encoding="utf-8"))
    blocks, placed = [], set()
    for i, tok in enumerate(tokens):
        if tok.type != "fence" or tok.info.strip().split(" ")[0] not in SHELL_INFOS:
            continue
        start = tok.map[0] + 1 if tok.map else 0
        console = tok.info.strip().startswith("console")
        commands = []
        pending = ""
        for n, raw in enumerate(tok.content.splitlines(), start + 1):
            line = raw.rstrip()
            if console:
                if not line.startswith("$ ") and not pending:
                    continue  # output shown under a prompt line
                line = line[2:] if line.startswith("$ ") and not pending else line
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            full = (pending + line).strip()
            pending = ""
            commands.append(parse_command(full, doc, n, problems))
        reads = []
        # The paragraph right after the fence: `Read:` and the field paths in backticks.
        if i + 2 < len(tokens) and tokens[i + 1].type == "paragraph_open":
            inline = tokens[i + 2]
            if inline.type == "inline" and re.match(r"^\**Read\**:", inline.content.strip()):
                for child in inline.children or []:
                    if child.type == "code_inline" and child.content.startswith("."):
                        if FIELD_PATH.match(child.content):
                            reads.append(child.content)
                        else:
                            problems.add(doc, f"line {start}: `{child.content}` is not a field path (.a.b, .list[].c)")
        optional = {}
        # The paragraph after `Read:`: `May be null:` and the optional fields, each saying when.
        if reads and i + 5 < len(tokens) and tokens[i + 4].type == "paragraph_open":
            inline = tokens[i + 5]
            if inline.type == "inline" and MAY_BE.match(inline.content.strip()):
                optional = described(inline.content)
                placed.add(i + 5)
        blocks.append(Block(doc, start, [c for c in commands if c], reads, optional))
    for i, tok in enumerate(tokens):
        if tok.type == "inline" and i not in placed and MAY_BE.match(tok.content.strip()):
            line = tok.map[0] + 1 if tok.map else 0
            problems.add(doc, f"line {line}: a `May be null:` paragraph belongs right after a block's `Read:` paragraph")
    return blocks


MAY_BE = re.compile(r"^\**May be (null|absent)( or (null|absent))?\**:")
SPAN_OR_PAREN = re.compile(r"`([^`]*)`|[()]")


def described(text: str) -> dict[str, str | None]:
    """The field paths a `May be null:` paragraph lists (code spans outside parentheses), each
    with the text of the parenthetical right after it (None when there is none)."""
    fields: dict[str, str | None] = {}
    depth, last, owner, opened = 0, None, None, 0
    for m in SPAN_OR_PAREN.finditer(text):
        if m.group(1) is not None:
            if depth == 0 and m.group(1).startswith("."):
                last = (m.group(1), m.end())
                fields[m.group(1)] = None
            continue
        if m.group(0) == "(":
            if depth == 0:
                follows = last is not None and not text[last[1] : m.start()].strip()
                owner, opened = (last[0] if follows else None), m.end()
                last = None
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0 and owner is not None:
                fields[owner] = text[opened : m.start()].strip() or None
    return fields


def parse_command(full: str, doc: Path, line: int, problems: Problems) -> Command | None:
    m = EXIT_COMMENT.search(full)
    cmd = full.split("#", 1)[0].strip() if "#" in full else full
    if not cmd.startswith("npgx "):
        problems.add(doc, f"line {line}: `{cmd}`: a skill's commands run npgx (`npgx …`)")
        return None
    if not m:
        problems.add(doc, f"line {line}: `{cmd}`: no `# exit N|M` comment naming the exit codes to expect")
        return None
    return Command(cmd, {int(c) for c in re.split(r"\s*\|\s*", m.group(1))}, line)


REDIRECT = re.compile(r">\s*(\S+)\s*$")


def json_command(block: Block) -> Command | None:
    """The block's last `--format json` command, whose document the `Read:` paths are read from
    (its stdout, or the file it is redirected to with `> FILE`); earlier ones save documents
    that later commands read."""
    candidates = [c for c in block.commands if "--format json" in c.text]
    return candidates[-1] if candidates else None


def fillings(skill: str, placeholders: set[str]) -> tuple[list[list[Fill]], set[str]]:
    """The fixture lists to combine for these placeholders, and the placeholders no row fills.
    Rows scoped to the skill come first, then larger rows (placeholders filled together)."""
    rows = [r for r in FIXTURES if r.keys <= placeholders and r.skill in (None, skill)]
    rows.sort(key=lambda r: (r.skill is None, -len(r.keys)))
    groups, covered = [], set()
    for r in rows:
        if not (r.keys & covered):
            groups.append(r.fills)
            covered |= r.keys
    return groups, placeholders - covered


def fill(text: str, combo: tuple[Fill, ...]) -> str:
    values: dict[str, str] = {}
    for f in combo:
        for key, value in f.values.items():
            values[key] = shlex.quote(str(value)) if value is not None else key.strip("<>").lower()
    return PLACEHOLDER.sub(lambda m: values.get(m.group(0), m.group(0)), text)


def values_at(doc, path: str) -> list:
    """Every value `path` (`.a[].b`, `.a[2].b`) reaches in `doc`."""
    frontier = [doc]
    for key, index in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)(\[\d*\])?", path):
        frontier = [n[key] for n in frontier if isinstance(n, dict) and key in n]
        if index == "[]":
            frontier = [x for v in frontier if isinstance(v, list) for x in v]
        elif index:
            i = int(index[1:-1])
            frontier = [v[i] for v in frontier if isinstance(v, list) and len(v) > i]
    return frontier


def unmet(doc, expect: dict) -> list[str]:
    """The expectations `doc` does not meet, each said with what it holds."""
    out = []
    for path, want in expect.items():
        got = values_at(doc, path)
        ok = bool(got) and all(want(v) if callable(want) else v == want for v in got)
        if not ok:
            out.append(f"`{path}` is {got!r}, the scenario expects {getattr(want, '__doc__', None) or repr(want)}")
    return out


def walk(doc, path: str) -> bool:
    """Whether `path` (`.a[].b`) reaches a present key somewhere in `doc` (its value may be
    null or an empty list: the field is there)."""
    frontier = [doc]
    for key, each in re.findall(r"\.([A-Za-z_][A-Za-z0-9_]*)(\[\])?", path):
        holders = [n for n in frontier if isinstance(n, dict) and key in n]
        if not holders:
            return False
        values = [n[key] for n in holders]
        frontier = [x for v in values if isinstance(v, list) for x in v] if each else values
    return True


def resolve(schema: dict, ref) -> dict | None:
    """The node a local `$ref` (`#/$defs/X`) points to, or None."""
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    target = schema
    for part in ref[2:].split("/"):
        target = target.get(part, {}) if isinstance(target, dict) else {}
    return target


def expand(schema: dict, node, seen=()) -> list[dict]:
    """`node` and every node it stands for: its `$ref` target, its allOf/anyOf/oneOf members."""
    if not isinstance(node, dict):
        return []
    out = [node]
    ref = node.get("$ref")
    if resolve(schema, ref) is not None and ref not in seen:
        out += expand(schema, resolve(schema, ref), (*seen, ref))
    for k in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(k, []):
            out += expand(schema, sub, seen)
    return out


STEP = re.compile(r"\.([A-Za-z_][A-Za-z0-9_]*)(\[\])?")


def schema_has(schema: dict, path: str) -> bool:
    """Whether the JSON Schema lets `path` exist: properties, items, $ref, allOf/anyOf/oneOf."""
    frontier = expand(schema, schema)
    for key, each in STEP.findall(path):
        nxt = []
        for node in frontier:
            prop = node.get("properties", {}).get(key)
            if prop is None:
                continue
            for p in expand(schema, prop):
                if each:
                    items = p.get("items")
                    if items is not None:
                        nxt += expand(schema, items)
                else:
                    nxt.append(p)
        if not nxt:
            return False
        frontier = nxt
    return True


# ---------------------------------------------------------------------------------------------
# Optional fields: every one a `Read:` path passes through is described (`May be null:`).

# The document each command writes with `--format json`, decided from its subcommand (the words
# after `npgx`, and a flag that changes the document), as src/schema.rs's `written_by` lists
# them: its schema under schemas/ and, for a schema of several bodies (`npgx.dump-config`: an
# anyOf), the body ($defs) that subcommand writes. The first match counts.
DOCUMENTS = [
    ("triage analyze", "npgx.triage-analyze", None),
    ("triage steps", "npgx.triage-analyze", None),
    ("triage run", "npgx.triage-run", None),
    ("triage bisect", "npgx.triage-run", None),
    ("triage classify", "npgx.triage-classify", None),
    ("dump-scan", "npgx.dump-scan", None),
    ("dump-compare", "npgx.dump-compare", None),
    ("dump-convert", "npgx.dump-convert", None),
    ("dump-config check", "npgx.dump-config", "CheckReport"),
    ("dump-config new", "npgx.dump-config", "NewConfig"),
    ("dump-config plan", "npgx.dump-config", "Plan"),
    ("merge", "npgx.merge", None),
    ("plog --records", "npgx.plog-records", None),
    ("plog", "npgx.plog", None),
    ("aicore", "npgx.aicore", None),
    ("repro --from-scan", "npgx.repro-fx", None),
    ("repro", "npgx.repro", None),
    ("report", "npgx.report", None),
    ("schema --list", "npgx.schema-list", None),
]


def document_of(command: str) -> tuple[str, str | None] | None:
    """The schema name (and body) of the document `npgx …` writes, from DOCUMENTS; None when
    the table has no row for it."""
    words = command.split()[1:]
    for key, name, body in DOCUMENTS:
        sub = [w for w in key.split() if not w.startswith("-")]
        flags = [w for w in key.split() if w.startswith("-")]
        if words[: len(sub)] == sub and all(f in words for f in flags):
            return name, body
    return None


def present(schema: dict, node, key: str) -> bool:
    """Whether every object `node` may be holds `key`: in its `required` (or an allOf member's;
    every non-null anyOf/oneOf branch's). A property with a `default` counts as present:
    schemars drops `#[serde(default)]` fields from `required` (older documents of the version
    may lack them), but the writer always serialises them. schemars writes no `default` for a
    field that also has `skip_serializing_if` (Classification's `remedy`, `missing`, `kind`), and
    every field with one in schemas/ was checked to be written always (ScanGroup, ProcessSummary,
    Classification, TriageAnalysis, FxNode, TensorMeta). A null default still counts as null."""
    if not isinstance(node, dict):
        return False
    if key in node.get("required", []) or "default" in node.get("properties", {}).get(key, {}):
        return True
    target = resolve(schema, node.get("$ref"))
    if target is not None and present(schema, target, key):
        return True
    if any(present(schema, sub, key) for sub in node.get("allOf", [])):
        return True
    branches = [b for k in ("anyOf", "oneOf") for b in node.get(k, []) if not allows_null(schema, b)]
    return bool(branches) and all(present(schema, b, key) for b in branches)


def allows_null(schema: dict, node) -> bool:
    """Whether `node` lets the value be null: `type` null (or a list holding it), also through
    $ref, allOf/anyOf/oneOf."""
    for n in expand(schema, node):
        t = n.get("type")
        if t == "null" or (isinstance(t, list) and "null" in t):
            return True
    return False


def optional_prefixes(schema: dict, root: dict, path: str) -> dict[str, str]:
    """The prefixes of `path` (`.a.b[].c`) that end at an optional step, each with how:
    `absent` (its parent object does not require the key), `null` (its schema allows null), or
    `null elements` (`.b[]`: the list's items allow null)."""
    values, prefix, found = [root], "", {}
    for key, each in STEP.findall(path):
        prefix += f".{key}"
        holders = [v for v in values if any(key in n.get("properties", {}) for n in expand(schema, v))]
        props = [n["properties"][key] for v in holders for n in expand(schema, v) if key in n.get("properties", {})]
        if not props:
            break  # not in the schema: check_schemas reports it
        hows = [] if all(present(schema, v, key) for v in holders) else ["absent"]
        hows += ["null"] if any(allows_null(schema, p) for p in props) else []
        if hows:
            found[prefix] = " or ".join(hows)
        values = props
        if each:
            values = [n["items"] for p in props for n in expand(schema, p) if isinstance(n.get("items"), dict)]
            if any(allows_null(schema, i) for i in values):
                found[prefix + "[]"] = "null elements"
            prefix += "[]"
    return found


def check_described(block: Block, schemas: Path | None, problems: Problems) -> None:
    """Each `--format json` command has a row in DOCUMENTS, and every optional field a `Read:`
    path passes through (not required in its parent, or nullable, in the document's schema) is
    listed under `May be null:` with when it is null or absent; a listed field that is not one
    of them is stale."""
    at = f"line {block.line}:"
    reader = json_command(block)
    if block.reads and reader is None:
        problems.add(block.doc, f"{at} `Read:` needs a `--format json` command in the block")
    for cmd in block.commands:
        if "--format json" in cmd.text and document_of(cmd.text) is None:
            problems.add(block.doc, f"line {cmd.line}: `{cmd.text}`: no schema in the table of documents (check_skills.py DOCUMENTS)")
    if schemas is None or reader is None or document_of(reader.text) is None:
        return
    name, body = document_of(reader.text)
    sfile = schemas / f"{name}.schema.json"
    if not sfile.is_file():
        problems.add(block.doc, f"{at} no schema {sfile}")
        return
    schema = json.loads(sfile.read_text(encoding="utf-8"))
    root = {"$ref": f"#/$defs/{body}"} if body else schema
    needed = {}
    for path in block.reads:
        for prefix, how in optional_prefixes(schema, root, path).items():
            needed.setdefault(prefix, how)
    for prefix, how in needed.items():
        if prefix not in block.optional:
            problems.add(block.doc, f"{at} `{prefix}` may be {how} ({sfile.name}): list it under `May be null:` after `Read:`, saying when")
    for span, when in block.optional.items():
        if span not in needed:
            problems.add(block.doc, f"{at} `{span}` under `May be null:` is no optional field of a `Read:` path in {sfile.name}")
        if not when:
            problems.add(block.doc, f"{at} `{span}` under `May be null:` does not say when, in parentheses after it")


def skill_of(doc: Path) -> str:
    return doc.parent.parent.name if doc.parent.name == "references" else doc.parent.name


def run_block(block: Block, npgx: Path, python: str, work: Path, schemas: Path | None) -> tuple[Problems, int]:
    """Runs the block once per combination of its fixtures; returns its problems and the
    number of commands run."""
    problems = Problems()
    placeholders = {p for c in block.commands for p in PLACEHOLDER.findall(c.text)}
    groups, missing = fillings(skill_of(block.doc), placeholders)
    at = f"line {block.line}:"
    for p in sorted(missing):
        problems.add(block.doc, f"{at} placeholder {p} is not in the fixture table (scripts/check_skills.py FIXTURES)")
    absent = {str(v) for g in groups for f in g for v in f.values.values() if isinstance(v, Path) and not v.exists()}
    for v in sorted(absent):
        problems.add(block.doc, f"{at} fixture {v} is missing (scripts/test.sh generates target/fixtures/)")
    if missing or absent:
        return problems, 0
    reader = json_command(block)
    documents = []
    runs = 0
    started = time.monotonic()
    for n, combo in enumerate(itertools.product(*groups)):
        cwd = work / f"{skill_of(block.doc)}-{block.doc.stem}-{block.line}-{n}"
        cwd.mkdir(parents=True)
        env = dict(os.environ)
        env["PATH"] = os.pathsep.join([str(npgx.parent), str(Path(python).parent), env.get("PATH", "")])
        for f in combo:
            env.update(f.env)
        label = ", ".join(f"{k}={v if v is not None else '(output)'}" for f in combo for k, v in f.values.items())
        for cmd in block.commands:
            text = fill(cmd.text, combo)
            try:
                out = subprocess.run(["bash", "-c", text], cwd=cwd, env=env, capture_output=True, timeout=COMMAND_TIMEOUT)
            except subprocess.TimeoutExpired:
                problems.add(block.doc, f"line {cmd.line}: `{text}` ran over {COMMAND_TIMEOUT} s [{label}]")
                break
            runs += 1
            if out.returncode not in cmd.codes:
                problems.add(
                    block.doc,
                    f"line {cmd.line}: `{text}` exited {out.returncode}, the skill expects {sorted(cmd.codes)} [{label}]\n"
                    f"    stderr: {out.stderr.decode('utf-8', 'replace')[-600:]}",
                )
            if cmd is reader and out.returncode != 2:  # exit 2: the command could not run, no document
                redirect = REDIRECT.search(cmd.text)
                raw = (cwd / redirect.group(1)).read_bytes() if redirect and (cwd / redirect.group(1)).is_file() else out.stdout
                try:
                    documents.append(json.loads(raw))
                except json.JSONDecodeError as e:
                    problems.add(block.doc, f"line {cmd.line}: `{text}` wrote no JSON document ({e}) [{label}]")
                else:
                    for f in combo:
                        for miss in unmet(documents[-1], f.expect):
                            problems.add(block.doc, f"line {cmd.line}: `{text}`: {miss} [{label}]")
    print(f"{skill_of(block.doc)}/{block.doc.name}:{block.line}: {runs} runs, {time.monotonic() - started:.1f} s", flush=True)
    if block.commands and not runs and not problems:
        problems.add(block.doc, f"{at} no command of the block ran")
    for path in block.reads:
        if not any(walk(d, path) for d in documents):
            problems.add(block.doc, f"{at} `{path}` is in no output of `{reader.text if reader else '?'}` over its fixtures")
    if schemas is not None:
        check_schemas(block, documents, schemas, problems)
    return problems, runs


def check_schemas(block: Block, documents: list, schemas: Path, problems: Problems) -> None:
    """Each document validates against its committed schema (and is the document, and body, that
    DOCUMENTS names for its command), and every `Read:` path is one the schema defines (a field
    the agent relies on is part of the published contract)."""
    at = f"line {block.line}:"
    reader = json_command(block)
    table = document_of(reader.text) if reader else None
    for doc in documents:
        name = doc.get("schema") if isinstance(doc, dict) else None
        sfile = schemas / f"{name}.schema.json"
        if not isinstance(name, str) or not sfile.is_file():
            problems.add(block.doc, f"{at} no schema under schemas/ for the document `{name}`")
            continue
        schema = json.loads(sfile.read_text(encoding="utf-8"))
        for err in jsonschema.Draft202012Validator(schema).iter_errors(doc):
            loc = "/".join(str(p) for p in err.absolute_path)
            problems.add(block.doc, f"{at} the `{name}` document does not validate at {loc or '(root)'}: {err.message[:200]}")
        if table and table[0] != name:
            problems.add(block.doc, f"{at} the document is `{name}`, DOCUMENTS says `{table[0]}`")
        elif table and table[1]:
            body = {"$defs": schema.get("$defs", {}), "$ref": f"#/$defs/{table[1]}"}
            if not jsonschema.Draft202012Validator(body).is_valid(doc):
                problems.add(block.doc, f"{at} the `{name}` document is not the body `{table[1]}` DOCUMENTS names")
        for path in block.reads:
            if not schema_has(schema, path):
                problems.add(block.doc, f"{at} `{path}` is not in {sfile}")


def check(skills: Path, npgx: Path | None, python: str, problems: Problems, schemas: Path = REPO / "schemas") -> tuple[int, int]:
    docs = check_form(skills, problems)
    blocks = [b for d in docs for b in extract_blocks(d, problems)]
    for b in blocks:
        check_described(b, schemas if schemas.is_dir() else None, problems)
    if npgx is None:
        return len(blocks), 0
    with tempfile.TemporaryDirectory(prefix="npgx-skills-") as tmp:
        # Two blocks at a time: most of the time goes to PyTorch starting in the triage steps.
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(
                pool.map(lambda b: run_block(b, npgx, python, Path(tmp), schemas if schemas.is_dir() else None), blocks)
            )
    for block_problems, _ in results:
        problems.extend(block_problems)
    return len(blocks), sum(runs for _, runs in results)


# ---------------------------------------------------------------------------------------------
# Self-test: skills that have rotted must fail, each for its own reason.

ROTTEN = {
    "npgx-rotten": (
        "---\nname: npgx-rotten\ndescription: a skill whose commands and fields have rotted\n---\n\n"
        "See [the detail](references/detail.md) and `npgx-nowhere`.\n\n"
        "```sh\nnpgx triage classify <PASTED_OUTPUT> --format json   # exit 0\n```\n\n"
        "Read: `.items[].route`, `.items[].no_such_field`, `.items[].settle`.\n\n"
        "```sh\nnpgx plog <NO_SUCH_FIXTURE> --format json   # exit 0\n```\n\n"
        "Read: `.first_causal.line`.\n\n"
        "May be absent: `.warnings` (never), `.first_causal`.\n\n"
        "```sh\nnpgx triage classify <PASTED_OUTPUT>\ngrep ERROR <PLOG>   # exit 0\n```\n\n"
        "```sh\nnpgx schema npgx.plog --format json   # exit 0\n```\n\n"
        "May be null: `.stray` (after no `Read:`).\n"
    ),
    "Bad_Name": "---\nname: bad-name\ndescription: ''\n---\n\nbody\n",
}
EXPECTED_ROT = [
    "exited 1, the skill expects [0]",
    "`.items[].no_such_field` is in no output",
    "placeholder <NO_SUCH_FIXTURE> is not in the fixture table",
    "no `# exit N|M` comment",
    "a skill's commands run npgx",
    "`npgx-nowhere` names no skill",
    "not linked from SKILL.md",
    "link `references/detail.md` does not resolve",
    "name `bad-name` is not the folder name `Bad_Name`",
    "description missing or empty",
    "no evals/evals.json",
    "skill_activated `npgx-gone` names no skill",
    "evals/0: 'expected_output' is a required property",
    "`.items[].settle` may be absent",
    "`.warnings` under `May be null:` is no optional field",
    "`.first_causal` under `May be null:` does not say when",
    "`npgx schema npgx.plog --format json`: no schema in the table of documents",
    "a `May be null:` paragraph belongs right after a block's `Read:` paragraph",
]


def self_test(npgx: Path, python: str) -> int:
    with tempfile.TemporaryDirectory(prefix="npgx-rotten-") as tmp:
        skills = Path(tmp) / "skills"
        for name, text in ROTTEN.items():
            (skills / name).mkdir(parents=True)
            (skills / name / "SKILL.md").write_text(text, encoding="utf-8")
        refs = skills / "npgx-rotten" / "references"
        refs.mkdir()
        (refs / "orphan.md").write_text("never linked\n", encoding="utf-8")
        (skills / "npgx-rotten" / "evals").mkdir()
        (skills / "npgx-rotten" / "evals" / "evals.json").write_text(
            json.dumps(
                {
                    "skill_name": "npgx-rotten",
                    "evals": [
                        {"id": 1, "title": "t", "prompt": "p", "files": [],
                         "expectations": [{"type": "skill_activated", "pattern": "npgx-gone"}]}
                    ],
                }
            ),
            encoding="utf-8",
        )
        problems = Problems()
        check(skills, npgx, python, problems)
    text = "\n".join(problems)
    missed = [e for e in EXPECTED_ROT if e not in text]
    # The schema walk: through $ref, anyOf and items, and not past what the schema defines.
    schema = {
        "type": "object",
        "properties": {"items": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
        "$defs": {"item": {"anyOf": [{"type": "null"}, {"type": "object", "properties": {"route": {"type": "string"}}}]}},
    }
    for path, want in ((".items[].route", True), (".items[].settle", False), (".items.route", False)):
        if schema_has(schema, path) != want:
            missed.append(f"schema_has({path}) should be {want}")
    # Optional steps: not required (a `default` counts as present), nullable, through $ref and anyOf.
    schema = {
        "type": "object",
        "required": ["run"],
        "properties": {
            "run": {"$ref": "#/$defs/run"},
            "why": {"type": "string", "default": ""},
            "items": {"type": "array", "items": {"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}},
        },
        "$defs": {
            "run": {
                "type": "object",
                "required": ["root", "plan"],
                "properties": {"root": {"type": "string"}, "plan": {"anyOf": [{"$ref": "#/$defs/plan"}, {"type": "null"}]}},
            },
            "plan": {"type": "object", "required": ["call"], "properties": {"call": {"type": ["string", "null"]}}},
        },
    }
    for path, want in (
        (".run.root", {}),
        (".run.plan.call", {".run.plan": "null", ".run.plan.call": "null"}),
        (".why", {}),
        (".items[].a", {".items": "absent"}),
    ):
        if optional_prefixes(schema, schema, path) != want:
            missed.append(f"optional_prefixes({path}) should be {want}, is {optional_prefixes(schema, schema, path)}")
    # The fields a `May be null:` paragraph lists, each with its parenthetical (a nested one whole).
    got = described("May be null: `.a` (when `x` (or y)), `.b`, `.c`\n(z) and `d`.")
    if got != {".a": "when `x` (or y)", ".b": None, ".c": "z"}:
        missed.append(f"described(…) gave {got}")
    # The document walk: a present key counts even when null; a missing one or a wrong shape does not.
    doc = {"items": [{"route": None}, {"x": 1}], "run": {"root": "r"}}
    for path, want in ((".items[].route", True), (".items[].why", False), (".run.root", True), (".run[].root", False)):
        if walk(doc, path) != want:
            missed.append(f"walk({path}) should be {want}")
    # A scenario's expected verdict: met, unmet (a value, a test), and a field that is not there.
    doc = {"analysis": {"route": "accuracy", "timings": [{"s": 0.01}, {"s": 0.2}]}}
    for expect, want in (
        ({".analysis.route": "accuracy", ".analysis.timings[1].s": at_least_the_doubles_sleep}, 0),
        ({".analysis.route": "performance"}, 1),
        ({".analysis.timings[0].s": at_least_the_doubles_sleep}, 1),
        ({".analysis.timings[]s": 1, ".analysis.rule": "x"}, 2),
    ):
        if len(unmet(doc, expect)) != want:
            missed.append(f"unmet({expect}) should list {want}, lists {unmet(doc, expect)}")
    for m in missed:
        print(f"self-test: the checker did not report: {m}")
    if missed:
        print("what it reported:\n" + text)
        return 1
    print(f"self-test: every one of the {len(EXPECTED_ROT)} kinds of rot was reported")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--npgx", type=Path, help="the npgx binary (target/debug/npgx)")
    ap.add_argument("--skills", type=Path, default=REPO / "skills")
    ap.add_argument("--schemas", type=Path, default=REPO / "schemas", help="the JSON Schemas (default: schemas/, when it exists)")
    ap.add_argument("--form-only", action="store_true", help="form checks only: no command runs")
    ap.add_argument("--self-test", action="store_true")
    args = ap.parse_args()
    python = os.environ.get("NPGX_PYTHON") or sys.executable
    npgx = args.npgx.resolve() if args.npgx else None
    if not args.form_only and (npgx is None or not npgx.is_file()):
        print(f"check_skills.py: the npgx binary {npgx} does not exist (--npgx)", file=sys.stderr)
        return 2
    if args.self_test:
        return self_test(npgx, python)
    problems = Problems()
    blocks, runs = check(args.skills, None if args.form_only else npgx, python, problems, args.schemas)
    for p in problems:
        print(p)
    skills = sorted(p.name for p in args.skills.iterdir() if p.is_dir())
    print(f"skills: {len(skills)} checked, {blocks} command blocks, {runs} command runs, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
