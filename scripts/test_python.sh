#!/usr/bin/env bash
# The Python module's tests (python/tests/, pytest): builds `npgx._npgx` from the tree with cargo
# (the test build's crates: nothing is compiled twice), puts the package python/npgx/ and the
# module together under target/python/, and runs pytest there against target/debug/npgx (the
# tests compare the module's documents and tables with the command's). Run by scripts/test.sh;
# alone: NPGX_PYTHON=.venv/bin/python scripts/test_python.sh [pytest arguments].
set -euo pipefail
cd "$(dirname "$0")/.."
py="${NPGX_PYTHON:-.venv/bin/python}"
target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
# The full command too: the tests compare with it, and the lean build (scripts/test.sh builds it
# just before) leaves its own binary at target/debug/npgx.
cargo build --locked -p npgx -p npgx-python
stage="$target/python"
rm -rf "$stage" && mkdir -p "$stage"
cp -r python/npgx "$stage/"
cp "$target/debug/lib_npgx.so" "$stage/npgx/_npgx.abi3.so"
NPGX_BIN="$target/debug/npgx" NPGX_FIXTURES="$target/fixtures" PYTHONPATH="$stage" \
  "$py" -m pytest -q -p no:cacheprovider python/tests "$@"
