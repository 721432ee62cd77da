#!/usr/bin/env bash
# `npgx report` on a large scan (issue 12): a tree of N dump files with two tensors each
# (default 50 000 files = 100 000 tensors, scripts/gen_dump_fixtures.py --bench-files, hard links,
# 1 file in 16 holds a NaN), scanned to JSON once, then rendered; prints the page size, the render
# time and Chromium's load time (navigation to the load event, scripts/browser_check.py).
# Then the worst case for the page: a synthetic npgx.dump-scan document (written here by Python)
# with one group of 100 000 operators, every output anomalous (100 000 anomalies).
# Targets: page < 10 MB, opens in < 2 s.
# Usage: scripts/bench_report.sh [FILES]
# Env:   NPGX_PYTHON (default .venv/bin/python), NPGX_BIN (default target/debug/npgx, built).
set -euo pipefail
cd "$(dirname "$0")/.."
files="${1:-50000}"
py="${NPGX_PYTHON:-.venv/bin/python}"
if [ -z "${NPGX_BIN:-}" ]; then
  cargo build --quiet
fi
bin="${NPGX_BIN:-${CARGO_TARGET_DIR:-target}/debug/npgx}"
dir="target/bench/report-${files}"
if [ ! -e "$dir/BENCH_TREE.json" ]; then
  "$py" scripts/gen_dump_fixtures.py --out "$dir" --bench-files "$files"
fi
"$bin" dump-scan "$dir/root" --no-progress --format json -o "$dir/scan.json" || [ $? = 1 ]
start=$(date +%s.%N)
"$bin" report "$dir/scan.json" -o "$dir/report.html"
end=$(date +%s.%N)
"$py" - "$dir/scan.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
print(f"scan: {s['tensors']} tensors, {s['anomalous_tensors']} anomalous, {s['groups']} groups")
PY
echo "json:   $(stat -c %s "$dir/scan.json") bytes"
echo "page:   $(stat -c %s "$dir/report.html") bytes"
echo "render: $(echo "$end - $start" | bc) s"
for i in 1 2 3; do
  "$py" scripts/browser_check.py "$dir/report.html" \
    --eval 'plots=document.querySelectorAll("figure.plot svg").length' \
    --eval 'rows=document.querySelector(".datatable .info").textContent'
done

"$py" - "$dir/worst.json" <<'PY'
import json, math, sys
n = 100_000
def anomaly(i):
    kind = ("nan", "inf", "overflow")[i % 3]
    return {"group": 0, "order": i, "rank": 0, "world_size": 1, "time": "20240101120000", "device": 0,
            "model": "ge_default_bench", "model_id": 1, "step": 0, "op_name": f"layer{i // 100}/op_{i}",
            "op_type": "Add", "task_id": i, "stream_id": 1, "timestamp": 1700000000000000 + i,
            "io": "output", "index": 0, "kind": kind, "kinds": [kind], "dtype": "DT_FLOAT16",
            "format": "ND", "shape": [16], "elements": 16, "nan": int(kind == "nan"),
            "pos_inf": int(kind == "inf"), "neg_inf": 0, "overflow": int(kind == "overflow"),
            "min": -1.0, "max": 1.0 + i, "mean": 0.5, "source": "dump",
            "path": f"worldsize1_global_rank0/20240101120000/0/ge_default_bench/1/0/Add.layer_op_{i}.{i}.1.{1700000000000000 + i}"}
anoms = [anomaly(i) for i in range(n)]
doc = {"schema": "npgx.dump-scan", "schema_version": 1, "root": "bench",
       "summary": {"files_seen": n, "dump_files": n, "tensors": 2 * n, "bytes": 0, "anomalous_tensors": n,
                   "groups": 1, "errors": 0},
       "groups": [{"rank": 0, "world_size": 1, "time": "20240101120000", "device": 0, "model": "ge_default_bench",
                   "model_id": 1, "step": 0, "layout": "model", "files": n, "tensors": 2 * n, "bytes": 0,
                   "anomalous_tensors": n, "first_anomaly": anoms[0], "first_born": anoms[0],
                   "magnitudes": [1.0 + i + 1e4 * math.sin(i) ** 40 for i in range(n)]}],
       "anomalies": anoms, "opdebug": [], "errors": []}
json.dump(doc, open(sys.argv[1], "w"))
PY
start=$(date +%s.%N)
"$bin" report "$dir/worst.json" -o "$dir/worst.html"
end=$(date +%s.%N)
echo "worst case: json $(stat -c %s "$dir/worst.json") bytes, page $(stat -c %s "$dir/worst.html") bytes, render $(echo "$end - $start" | bc) s"
for i in 1 2 3; do
  "$py" scripts/browser_check.py "$dir/worst.html" \
    --eval 'rows=document.querySelector(".datatable .info").textContent'
done
