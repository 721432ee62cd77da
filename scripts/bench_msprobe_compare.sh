#!/usr/bin/env bash
# Benchmark `npgx dump-compare` against `msprobe compare` on msprobe's own data (issue 20,
# docs/performance.md).
#
#   scripts/bench_msprobe_compare.sh [--npgx PATH] [--mb N] [--dir DIR] [--keep]
#
# 1. Writes, with msprobe itself (scripts/gen_msprobe_fixtures.py --bench-pair: mindstudio-probe's
#    PrecisionDebugger on CPU, task tensor, level L1, a 12-layer model, one training step), a golden
#    and a target dump of >= N MB each (default 200) into DIR (default a fresh temporary directory,
#    removed at the end unless --keep); the target's torch.relu call 5 is perturbed.
# 2. Measures in the same run, page cache warm, through /usr/bin/time -v (wall time and peak RSS):
#    `msprobe compare -tp TARGET/dump.json -gp GOLDEN/dump.json` (one run: it takes seconds) and
#    `npgx dump-compare GOLDEN TARGET --format json` (best wall time of $NPGX_BENCH_RUNS, default 3;
#    peak RSS of one more run).
# 3. Prints both, the ratios (speed-up, memory ratio; targets >= 50x and <= 1/20) and whether the
#    metrics npgx reports for msprobe's row names equal msprobe's (scripts/bench_msprobe_check.py).
#    npgx's exit code and output size are printed whatever they are: a failing npgx does not stop
#    the msprobe half of the benchmark.
#
# Python: $NPGX_PYTHON (default .venv/bin/python) with torch and mindstudio-probe
# (scripts/requirements-test.txt); msprobe is that venv's bin/msprobe.
set -euo pipefail
cd "$(dirname "$0")/.."

bin="${CARGO_TARGET_DIR:-target}/release/npgx"
mb=200
dir=""
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    --npgx) bin="$2"; shift 2 ;;
    --mb) mb="$2"; shift 2 ;;
    --dir) dir="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "bench: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
runs="${NPGX_BENCH_RUNS:-3}"
py="${NPGX_PYTHON:-.venv/bin/python}"
msprobe="$(dirname "$py")/msprobe"

[ -x "$py" ] || { echo "bench: no Python at $py (set NPGX_PYTHON; needs torch and mindstudio-probe)" >&2; exit 2; }
[ -x "$msprobe" ] || { echo "bench: no msprobe at $msprobe (pip install -r scripts/requirements-test.txt)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time (GNU time) is needed: apt-get install time" >&2; exit 2; }
if [ -z "$dir" ]; then
  dir="$(mktemp -d "${TMPDIR:-/tmp}/npgx-bench-msprobe.XXXXXX")"
fi
if [ "$keep" = 0 ]; then
  trap 'rm -rf "$dir"' EXIT
fi

# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

echo "== msprobe writes the pair (tensor task, L1, 12 layers, >= $mb MB a side) into $dir"
"$py" scripts/gen_msprobe_fixtures.py --bench-pair "$dir/pair" --bench-mb "$mb"
golden="$dir/pair/golden"
target="$dir/pair/target"
read -r golden_json target_json g_bytes t_bytes g_files < <("$py" -c '
import json, sys
b = json.load(open(sys.argv[1]))
print(b["dump_json"]["golden"], b["dump_json"]["target"], b["bytes"]["golden"], b["bytes"]["target"], b["files"]["golden"])' \
  "$dir/pair/BENCH_PAIR.json")
echo "golden $golden ($g_bytes bytes, $g_files tensor files), target $target ($t_bytes bytes)"

warm "$golden" "$target"  # warm the page cache

echo "== msprobe compare (1 run)"
ms_code=0
s=$(now)
# its log and progress bars (stderr too, through sh's exec: still the one msprobe process) to msprobe.log
ms_rss=$(PEAK_OUT="$dir/msprobe.log" peak_rss_kib sh -c 'exec "$@" 2>&1' sh "$msprobe" compare \
  -tp "$target_json" -gp "$golden_json" -o "$dir/msprobe-out") || ms_code=$?
e=$(now)
ms_wall=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.2f", e - s}')
ms_csv=$(find "$dir/msprobe-out" -name 'compare_result_*.csv' 2>/dev/null | head -1)
ms_rows=0
[ -n "$ms_csv" ] && ms_rows=$("$py" -c 'import csv, sys; print(sum(1 for _ in csv.DictReader(open(sys.argv[1]))))' "$ms_csv")
echo "msprobe: exit $ms_code, ${ms_wall} s, peak RSS $((ms_rss / 1024)) MiB, $ms_rows rows in ${ms_csv:-<no csv>}"
if [ "$ms_code" != 0 ] || [ -z "$ms_csv" ]; then
  tail -20 "$dir/msprobe.log" >&2
fi

npgx_json="$dir/npgx.json"
if [ -x "$bin" ]; then
  npgx_compare() { "$bin" dump-compare "$golden" "$target" --format json --no-progress; }
  echo "== npgx dump-compare (best of $runs)"
  np_wall=$(best npgx_compare)
  np_code=0
  np_rss=$(PEAK_OUT="$npgx_json" peak_rss_kib "$bin" dump-compare "$golden" "$target" --format json --no-progress) \
    || np_code=$?
  np_size=$(wc -c < "$npgx_json")
  echo "npgx: exit $np_code (0 nothing found, 1 divergences, 2 could not run), ${np_wall} s, peak RSS $((np_rss / 1024)) MiB, output $np_size bytes"
  if [ "$np_code" = 2 ]; then
    head -c 600 "$npgx_json" >&2
    echo >&2
  fi
else
  echo "npgx: no binary at $bin (--npgx PATH, or cargo build --release): only msprobe measured"
  np_code="" np_wall="" np_rss=""
fi

echo
awk -v gb="$g_bytes" -v tb="$t_bytes" -v mw="$ms_wall" -v mr="$ms_rss" -v nw="$np_wall" -v nr="$np_rss" -v nc="$np_code" 'BEGIN {
  printf "%-22s %10s %14s\n", "pair", "golden MB", "target MB"
  printf "%-22s %10.0f %14.0f\n", "msprobe tensor L1", gb / 1e6, tb / 1e6
  printf "\n%-22s %10s %14s\n", "", "seconds", "peak RSS MiB"
  printf "%-22s %10.2f %14.0f\n", "msprobe compare", mw, mr / 1024
  if (nw != "") {
    printf "%-22s %10.3f %14.0f   (exit %s)\n", "npgx dump-compare", nw, nr / 1024, nc
    note = (nc == 2 ? "   <-- npgx could not run: not a measurement" : "")
    printf "\nspeed-up     = %.1fx  (target >= 50x)%s\n", mw / nw, note
    printf "memory ratio = 1/%.1f (target <= 1/20)%s\n", mr / nr, note
  }
}'
if [ -n "$np_wall" ] && [ -n "$ms_csv" ]; then
  "$py" scripts/bench_msprobe_check.py "$ms_csv" "$npgx_json"
fi
if [ "$keep" = 1 ]; then
  echo "kept: $dir"
fi
