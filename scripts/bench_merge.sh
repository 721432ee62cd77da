#!/usr/bin/env bash
# Benchmark `npgx merge` on 1000 shards x 10 000 rows (docs/cluster.md, docs/performance.md).
#
#   scripts/bench_merge.sh [SHARDS] [ROWS]      (default 1000 10000)
#
# 1. Writes SHARDS shards of ROWS rows each with an independent writer (pyarrow, installed into
#    the Python given by $NPGX_PYTHON, default the test venv .venv, for this benchmark only) into
#    ${CARGO_TARGET_DIR:-target}/bench-merge/: one rank per shard, 5 steps, 1000 operator
#    executions of 2 tensors per step, a collective every 100 operators; a NaN is born on one rank
#    in step 3 before collective 4 and every rank receives it through collective 4.
# 2. Measures in the same run (page cache warm): the baseline — pyarrow reading the columns the
#    merge needs from every shard (`pq.read_table(columns=…)`, no analysis) — and
#    `npgx merge --format json`: wall time and peak RSS through /usr/bin/time -v.
# 3. Prints the figures and the ratio to the baseline. Targets: < 10 s and < 1 GB on 2 cores.
#
# The binary: $NPGX_BIN, else target/release/npgx when it exists, else target/debug/npgx (build it
# with `cargo build --config 'profile.dev.package.npgx.opt-level=3'` for meaningful figures).
set -euo pipefail
cd "$(dirname "$0")/.."

shards="${1:-1000}"
rows="${2:-10000}"
target="${CARGO_TARGET_DIR:-target}"
out_dir="$target/bench-merge"
py="${NPGX_PYTHON:-.venv/bin/python}"
if [ ! -x "$py" ]; then
  python3 -m venv .venv
  py=.venv/bin/python
fi
bin="${NPGX_BIN:-}"
if [ -z "$bin" ]; then
  if [ -x "$target/release/npgx" ]; then bin="$target/release/npgx"; else bin="$target/debug/npgx"; fi
fi
[ -x "$bin" ] || { echo "no npgx binary at $bin" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
"$py" -c 'import pyarrow' 2>/dev/null || "$py" -m pip install --quiet --disable-pip-version-check pyarrow

echo "== writing $shards shards x $rows rows into $out_dir"
"$py" - "$out_dir" "$shards" "$rows" <<'PY'
import os, shutil, sys
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

out, shards, rows = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if os.path.isdir(out):
    shutil.rmtree(out)
os.makedirs(out)
steps, per_op, every = 5, 2, 100
ops = rows // (steps * per_op)            # operator executions per step
through = 4                               # the collective that spreads it
origin, bad_step, born = shards * 637 // 1000, 3, through * every + 50
n = steps * ops * per_op
step = np.repeat(np.arange(steps, dtype=np.uint64), ops * per_op)
position = np.tile(np.repeat(np.arange(ops, dtype=np.uint64), per_op), steps)
io = np.tile(np.array(["input", "output"]), steps * ops)
is_coll = (position % every) == every - 1
collective = np.where(is_coll, position // every, 0).astype(np.uint64)
before = (position // every).astype(np.uint64)
op_name = np.where(is_coll, "hcom_allreduce_" + (position // every).astype(str),
                   "layer/op_" + position.astype(str))
op_type = np.where(is_coll, "HcomAllReduce", "MatMul")
schema_meta = {b"npgx.schema": b"npgx.dump-scan.shard", b"npgx.schema_version": b"1",
               b"npgx.writer": b"bench_merge.sh (pyarrow)"}
coll_pos = through * every + every - 1    # position of collective `through`
for r in range(shards):
    late = (step == bad_step) & ((position > coll_pos) | ((position == coll_pos) & (io == "output")))
    if r == origin:
        late |= (step == bad_step) & ((position > born) | ((position == born) & (io == "output")))
    nan = np.where(late, 3, 0).astype(np.uint64)
    t = pa.table({
        "rank": pa.array(np.full(n, r, np.uint64)),
        "world_size": pa.array(np.full(n, shards, np.uint64)),
        "time": pa.array(np.full(n, "20241121120000")),
        "device": pa.array(np.full(n, r % 8, np.uint64)),
        "model": pa.array(np.full(n, "ge_default_20241121120000_1")),
        "model_key": pa.array(np.full(n, "1")),
        "model_id": pa.array(np.full(n, 1, np.uint64)),
        "step": pa.array(step),
        "rank_source": pa.array(np.full(n, "path")),
        "op_name": pa.array(op_name),
        "op_type": pa.array(op_type),
        "task_id": pa.array(position + 10),
        "stream_id": pa.array(np.full(n, 2, np.uint64)),
        "timestamp": pa.array((1732190400000000 + step * 10_000_000 + position * 10).astype(np.uint64)),
        "position": pa.array(position),
        "collectives_before": pa.array(before),
        "collective": pa.array(collective, mask=~is_coll),
        "io": pa.array(io),
        "index": pa.array(np.zeros(n, np.uint64)),
        "kind": pa.array(np.where(late, "nan", ""), mask=~late),
        "kinds": pa.array(np.where(late, "nan", "")),
        "anomalous": pa.array(late),
        "dtype": pa.array(np.full(n, "DT_FLOAT16")),
        "format": pa.array(np.full(n, "ND")),
        "shape": pa.array(np.full(n, "64x64")),
        "elements": pa.array(np.full(n, 4096, np.uint64)),
        "nan": pa.array(nan),
        "pos_inf": pa.array(np.zeros(n, np.uint64)),
        "neg_inf": pa.array(np.zeros(n, np.uint64)),
        "overflow": pa.array(np.zeros(n, np.uint64)),
        "min": pa.array(np.full(n, -1.0)),
        "max": pa.array(np.full(n, 1.0)),
        "mean": pa.array(np.zeros(n)),
        "source": pa.array(np.full(n, "dump")),
        "path": pa.array(np.char.add("step/", op_name.astype(str))),
    })
    t = t.replace_schema_metadata(schema_meta)
    pq.write_table(t, os.path.join(out, f"rank{r:04d}.parquet"))
print(f"origin rank {origin}, step {bad_step}, before collective {through}")
PY
du -sh "$out_dir"

# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh
measure() { # prints "wall_s peak_rss_mib" of one run of "$@"
  local s e kib
  s=$(now)
  kib=$(peak_rss_kib "$@") || true
  e=$(now)
  awk -v s="$s" -v e="$e" -v k="$kib" 'BEGIN {printf "%.2f %.0f\n", e - s, k / 1024}'
}

echo "== baseline: pyarrow reads the merge's columns of every shard"
cat > "$out_dir/baseline.py" <<'PY'
import glob, sys
import pyarrow.parquet as pq
cols = ["world_size", "model_key", "step", "rank", "position", "collectives_before", "collective",
        "op_name", "op_type", "io", "index", "kind", "anomalous"]
n = sum(pq.read_table(f, columns=cols).num_rows for f in sorted(glob.glob(sys.argv[1] + "/*.parquet")))
print(n)
PY
read -r base_s base_mib < <(measure "$py" "$out_dir/baseline.py" "$out_dir")
echo "== npgx merge ($bin)"
"$bin" merge "$out_dir" --format json > "$out_dir/merge.json" || true
read -r npgx_s npgx_mib < <(measure "$bin" merge "$out_dir" --format json)
"$py" - "$out_dir/merge.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [s for s in d["steps"] if s["verdict"]]
v = bad[0]["verdict"]
print(f"merge: {d['summary']['shards']} shards, {d['summary']['tensors']} rows, "
      f"origin {v['origin']} step {bad[0]['step']} before collective {v['before_collective']} "
      f"({v['evidence']}), {len(v['received'])} received")
PY
echo
printf '%-34s %8s %10s\n' "" "wall s" "peak MiB"
printf '%-34s %8s %10s\n' "pyarrow read (baseline)" "$base_s" "$base_mib"
printf '%-34s %8s %10s\n' "npgx merge" "$npgx_s" "$npgx_mib"
awk -v a="$npgx_s" -v b="$base_s" 'BEGIN {printf "ratio npgx / baseline: %.2fx wall time\n", a / b}'
echo "cores: $(nproc); targets: < 10 s, < 1024 MiB"
