#!/usr/bin/env bash
# Corpus check: runs `npgx triage classify --format json` over every sample in
# ../shared/samples/triage/ and ../shared/samples/logs/ and compares the route and the first
# causal line with what the samples' READMEs say. Prints the counts and every miss.
#
# The expectations are read from the README tables (and, for the logs set, from the
# `first = line N` notes of its prose sections), so new samples need no change here.
# A sample without an expected route (the logs set gives only first lines) counts for lines only.
#
# Usage: scripts/classify_corpus.sh [--npgx PATH] [--samples DIR]
# Exit: 0 when every expectation holds, 1 when some miss, 2 when the check could not run.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
npgx=""
samples="$here/../shared/samples"
while [ $# -gt 0 ]; do
    case "$1" in
        --npgx) npgx="$2"; shift 2 ;;
        --samples) samples="$2"; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
        *) echo "classify_corpus.sh: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -z "$npgx" ]; then
    (cd "$here" && cargo build --quiet --bin npgx) || exit 2
    npgx="$here/target/debug/npgx"
fi
python="${NPGX_PYTHON:-python3}"

exec "$python" - "$npgx" "$samples" <<'PY'
import json, os, re, subprocess, sys

npgx, samples = sys.argv[1], sys.argv[2]
ROUTES = ("compile-error", "runtime-error", "accuracy", "performance", "environment", "undetermined")


def cells(row):
    return [c.strip() for c in row.strip().strip("|").split("|")]


def quoted(cell):
    """The text between the first pair of backtick runs (`x` or ``x``)."""
    m = re.search(r"(`+)(.+?)\1", cell)
    return m.group(2).strip() if m else None


def line_of(path, quote):
    """First 1-based line containing the longest '...'-free fragment of quote."""
    frags = [f.strip() for f in re.split(r"\.\.\.|…", quote) if f.strip()]
    if not frags:
        return None
    frag = max(frags, key=len)
    with open(path, "rb") as fh:
        for no, raw in enumerate(fh, 1):
            if frag in raw.decode("utf-8", "replace"):
                return no
    return None


def expectations(folder):
    """{file: (route or None, line or None)} from folder/README.md."""
    readme = os.path.join(folder, "README.md")
    files = sorted(f for f in os.listdir(folder) if f != "README.md")
    by_prefix = {}
    for f in files:
        m = re.match(r"(\d+)-", f)
        if m:
            by_prefix.setdefault(m.group(1), f)
    out = {}
    header = None
    text = open(readme, encoding="utf-8").read()
    for raw in text.splitlines():
        if not raw.startswith("|"):
            header = None
            continue
        cs = cells(raw)
        if header is None:
            header = [c.lower() for c in cs]
            continue
        if all(set(c) <= set("-: ") for c in cs):
            continue
        row = dict(zip(header, cs))
        name = row.get("file", "")
        f = name if name in files else by_prefix.get(name)
        if f is None:
            continue
        route = None
        for key in ("category",):
            if key in row:
                route = next((r for r in ROUTES if row[key].lower().startswith(r)), None)
        line = None
        first = next((v for k, v in row.items() if k.startswith("first")), None)
        if first:
            m = re.search(r"\bL(\d+)\b", first)
            if m:
                line = int(m.group(1))
            elif quoted(first):
                line = line_of(os.path.join(folder, f), quoted(first))
        old = out.get(f, (None, None))
        out[f] = (old[0] or route, old[1] or line)
    # Prose notes: `**NN** — … first = line N …` (also `first (CANN) = line N`, `causal record = line N`).
    for para in re.split(r"\n(?=\*\*\d+\*\*)", text):
        m = re.match(r"\*\*(\d+)\*\*", para)
        if not m or m.group(1) not in by_prefix:
            continue
        f = by_prefix[m.group(1)]
        n = re.search(r"\b(?:first(?: \([^)]*\))?|causal record) = line (\d+)", para)
        if n and out.get(f, (None, None))[1] is None:
            out[f] = (out.get(f, (None, None))[0], int(n.group(1)))
    return {f: v for f, v in out.items() if v != (None, None)}


total_r = ok_r = total_l = ok_l = 0
misses = []
for sub in ("triage", "logs"):
    folder = os.path.join(samples, sub)
    exp = expectations(folder)
    paths = [os.path.join(folder, f) for f in sorted(exp)]
    if not paths:
        continue
    res = subprocess.run([npgx, "triage", "classify", "--format", "json", *paths],
                         capture_output=True, text=True)
    if res.returncode not in (0, 1):
        sys.stderr.write(res.stderr)
        sys.exit(2)
    data = json.loads(res.stdout)
    items = data["items"] if isinstance(data, dict) else data
    for f, item in zip(sorted(exp), items):
        route, line = exp[f]
        e = item.get("first_causal_error") or {}
        got_line = e.get("line", item.get("evidence_line"))
        if route is not None:
            total_r += 1
            if item["route"] == route:
                ok_r += 1
            else:
                misses.append(f"{sub}/{f}: route {item['route']} (README: {route})")
        if line is not None:
            total_l += 1
            if got_line == line:
                ok_l += 1
            else:
                misses.append(f"{sub}/{f}: first line {got_line} (README: L{line})")

pct = lambda a, b: 100.0 * a / b if b else 100.0
print(f"routes right:      {ok_r}/{total_r} ({pct(ok_r, total_r):.0f}%)")
print(f"first lines right: {ok_l}/{total_l} ({pct(ok_l, total_l):.0f}%)")
for m in misses:
    print("  miss: " + m)
sys.exit(1 if misses else 0)
PY
