#!/usr/bin/env bash
# Screenshots of `npgx report` pages of the bundled examples, written to docs/img/ (PNG, through
# headless Chromium and scripts/browser_check.py, which also fails on console errors):
#   docs/img/report-dump-example.png    npgx dump-scan testdata/dump-example --html …
#   docs/img/report-triage-example.png  npgx triage run testdata/triage/double_model.py --html …
#                                       (the CPU test double of testdata/triage/README.md, failing
#                                       at step 5 without force_eager; needs PyTorch)
# Env: NPGX_PYTHON (default .venv/bin/python, with torch).
set -euo pipefail
cd "$(dirname "$0")/.."
py="${NPGX_PYTHON:-.venv/bin/python}"
cargo build --quiet
bin="${CARGO_TARGET_DIR:-target}/debug/npgx"
out=target/screenshots
rm -rf "$out"
mkdir -p "$out" docs/img

# exit 1 = findings: expected for both examples.
"$bin" dump-scan testdata/dump-example --no-progress --html "$out/dump-example.html" >/dev/null || [ $? = 1 ]
PYTHONPATH=testdata/triage/npugraph_ex_double NPGX_TEST_DOUBLE=fail_without_force_eager \
  "$bin" triage run testdata/triage/double_model.py --cmd "$py {script}" --out "$out" \
  --html "$out/triage-example.html" >/dev/null || [ $? = 1 ]

check() {
  local page=$1 png=$2
  local r
  r=$("$py" scripts/browser_check.py "$page" --screenshot "$png" --max-height 2000)
  case "$r" in
    *'"console_errors": [], "exceptions": [], "requests": []'*) echo "$png: $r" ;;
    *) echo "browser problems on $page: $r" >&2; exit 1 ;;
  esac
}
check "$out/dump-example.html" docs/img/report-dump-example.png
check "$out/triage-example.html" docs/img/report-triage-example.png
