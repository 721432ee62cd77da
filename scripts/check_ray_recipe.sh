#!/usr/bin/env bash
# Runs the Ray recipe of docs/cluster.md for real on this machine (a local Ray cluster of one
# node): the ```python block after "**Ray**" as written, with /local/dump replaced by the bundled
# example tree and /shared/shards/ by a scratch directory. Checks that the task's scan exited 0
# (--exit-zero), that its shard is there and that `npgx merge` names rank 0 (exit 1: the example
# has anomalies). Installing Ray costs minutes and hundreds of MB, so this is not part of
# scripts/test.sh; the last result is recorded in docs/cluster.md.
#
# Usage: scripts/check_ray_recipe.sh
# Env:   NPGX_BIN (default: cargo build, target/debug/npgx), RAY_VENV (default target/ray-venv),
#        RAY_SPEC (default "ray", the pip requirement).
set -euo pipefail
cd "$(dirname "$0")/.."

venv="${RAY_VENV:-target/ray-venv}"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "${RAY_SPEC:-ray}"
if [ -z "${NPGX_BIN:-}" ]; then
  cargo build --locked --quiet
  NPGX_BIN="${CARGO_TARGET_DIR:-target}/debug/npgx"
fi
bin_dir="$(cd "$(dirname "$NPGX_BIN")" && pwd)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/shards"
dump="$PWD/testdata/dump-example"

# The block, as the docs have it.
awk '/^\*\*Ray\*\*/ {ray = 1} ray && /^```python$/ {on = 1; next} on && /^```$/ {exit} on {print}' \
  docs/cluster.md > "$work/recipe.py"
grep -q 'ray.init()' "$work/recipe.py" || { echo "check_ray_recipe: no Ray block found" >&2; exit 2; }
sed -i "s|/local/dump|$dump|; s|/shared/shards/|$work/shards/|g" "$work/recipe.py"
# Report the scans' exit codes (the recipe keeps them in `codes`).
echo 'print("codes", codes)' >> "$work/recipe.py"

echo "== $("$venv/bin/python" -c 'import ray; print("ray", ray.__version__)'), $("$NPGX_BIN" --version)"
out="$(PATH="$bin_dir:$PATH" "$venv/bin/python" "$work/recipe.py" 2>"$work/stderr")" || {
  cat "$work/stderr" >&2
  echo "check_ray_recipe: the recipe failed" >&2
  exit 1
}
echo "$out"
echo "$out" | grep -q '^codes \[0\]$' || { echo "check_ray_recipe: a scan did not exit 0" >&2; exit 1; }
[ -s "$work/shards/node0.parquet" ] || { echo "check_ray_recipe: no shard" >&2; exit 1; }
code=0
"$NPGX_BIN" merge "$work/shards/" --format json > "$work/merge.json" || code=$?
[ "$code" = 1 ] || { echo "check_ray_recipe: merge exited $code, expected 1" >&2; exit 1; }
"$venv/bin/python" - "$work/merge.json" <<'EOF'
import json, sys
v = json.load(open(sys.argv[1]))
assert v["complete"] is True, v["unseen"]
step = next(s for s in v["steps"] if s["verdict"])
assert step["verdict"]["origin"] == [0], step["verdict"]
print(f"merge: origin rank 0, step {step['step']}, {v['summary']['tensors']} tensors: OK")
EOF
echo "check_ray_recipe: OK"
