#!/usr/bin/env bash
# Builds the npgx wheel with maturin (release build), installs it into a fresh venv and runs
# `npgx --version` and one scan of testdata/dump-example from it (docs/cluster.md).
#
#   scripts/check_wheel.sh            (honours CARGO_TARGET_DIR; wheels go to $target/wheels)
#
# A release build of polars takes ~20 min on 2 cores: this is not part of .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
py="${PYTHON:-python3}"
work="$target/wheel-check"
rm -rf "$work" && mkdir -p "$work"

echo "== maturin (build venv $work/build)"
"$py" -m venv "$work/build"
"$work/build/bin/pip" install --quiet --disable-pip-version-check "maturin>=1.5,<2"
rm -f "$target"/wheels/npgx-*.whl
CARGO_TARGET_DIR="$target" "$work/build/bin/maturin" build --release --locked --out "$target/wheels"
wheel=$(ls "$target"/wheels/npgx-*.whl | head -n 1)
echo "== wheel: $wheel ($(du -h "$wheel" | cut -f1))"

echo "== fresh venv $work/venv"
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
npgx="$work/venv/bin/npgx"
[ -x "$npgx" ] || { echo "the wheel did not install bin/npgx" >&2; exit 1; }
"$npgx" --version

echo "== npgx dump-scan testdata/dump-example (from the venv)"
set +e
"$npgx" dump-scan testdata/dump-example --format json --no-progress > "$work/scan.json"
code=$?
set -e
# The example holds anomalies: exit 1 is the expected answer.
[ "$code" = 1 ] || { echo "dump-scan exit $code, expected 1" >&2; exit 1; }
"$work/venv/bin/python" - "$work/scan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "npgx.dump-scan", d["schema"]
s = d["summary"]
assert s["tensors"] > 0 and s["anomalous_tensors"] > 0, s
print(f"scan from the wheel: {s['tensors']} tensors, {s['anomalous_tensors']} anomalous — OK")
PY
echo "wheel OK: $wheel"
