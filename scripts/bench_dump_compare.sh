#!/usr/bin/env bash
# Benchmark of `npgx dump-compare` (issue 9), measured in one run on a warm page cache against
#   - the read limit of this machine: every byte of both trees read into one reused buffer per
#     thread on all cores (bench_lib.sh, read_limit),
#   - scripts/baseline_dump_compare.py: Python + numpy computing the same metrics the way users
#     write it today (read file, parse header, frombuffer → float64, numpy formulas).
#   Beside them, what bounds npgx on this CPU: the stream-only pass (examples/stream_limit.rs: the
#   reader with a kernel that only loads) and the compute-only pass (examples/metric_limit.rs: the
#   metric kernels with no reading).
# Targets: npgx >= 0.8x the read limit of both trees, >= 10x Python, peak RSS < 300 MB; cold
# cache (issue 35): >= 0.9x the cold read limit (bench_dump_scan.sh says how).
#
# Usage: scripts/bench_dump_compare.sh [GiB]   (default 1: each tree is >= GiB; both are written
#        once by the Python below, with numpy, and cached under target/bench-compare/)
# Env:   NPGX_PYTHON (default .venv/bin/python), CARGO_TARGET_DIR, NPGX_BENCH_RUNS (default 3),
#        NPGX_BIN (use this npgx binary instead of building target/release/npgx),
#        NPGX_STREAM_BIN / NPGX_METRIC_BIN (the two examples, built if unset).
set -euo pipefail
cd "$(dirname "$0")/.."

gib="${1:-1}"
runs="${NPGX_BENCH_RUNS:-3}"
py="${NPGX_PYTHON:-.venv/bin/python}"
bin="${NPGX_BIN:-${CARGO_TARGET_DIR:-target}/release/npgx}"
base="target/bench-compare/${gib}gib"
golden="$base/golden"
target="$base/target"

if [ ! -x "$py" ]; then
  echo "bench: no Python at $py (set NPGX_PYTHON; needs numpy and protobuf)" >&2
  exit 2
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench: /usr/bin/time (GNU time) is needed for peak RSS: apt-get install time" >&2
  exit 2
fi
if [ -z "${NPGX_BIN:-}" ]; then
  echo "== cargo build --release"
  cargo build --release --locked --quiet
fi

if [ ! -f "$base/BENCH_TREES.json" ]; then
  echo "== writing two ${gib} GiB trees (fp16 and fp32 GE dumps) to $base (once)"
  rm -rf "$base"
  mkdir -p "$base"
  "$py" - "$base" "$gib" <<'PY'
# Golden: GE v2 dumps in a torchair layout, 2 of 3 files fp16, 1 of 3 fp32, one input and one
# output of 0.5-4 MiB each. Target: the same ops in another run (other time directory and run
# stamp), values = golden + relative noise of 1e-4 (fp16) / 1e-6 (fp32); from op 40 on, every
# 10th op's output is perturbed by 1e-2 so the comparison finds divergences.
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "scripts")
from gen_dump_fixtures import Tensor, dump_header, v2_bytes, NP_TYPES, T0

base, gib = Path(sys.argv[1]), float(sys.argv[2])
limit = int(gib * (1 << 30))
rng = np.random.default_rng(11)
pool = {1: rng.standard_normal(4 << 20).astype(np.float32),
        2: rng.standard_normal(8 << 20).astype(np.float16)}
noise = rng.standard_normal(4 << 20)
written = files = 0
while written < limit:
    step = files // 64
    dt = 2 if files % 3 else 1
    item = NP_TYPES[dt].itemsize
    n = ((1 + (files * 7) % 8) << 19) // item
    src = pool[dt]
    off = (files * 4099) % (len(src) - n)
    a_in, a_out = src[off:off + n // 2], src[off:off + n]
    scale = 1e-4 if dt == 2 else 1e-6
    if files >= 40 and files % 10 == 0:
        scale = 1e-2
    t_out = (a_out.astype(np.float64) * (1 + scale * noise[:n])).astype(a_out.dtype)
    ts = T0 + files * 100
    name = f"MatMul.bench_op_{files}.{files}.1.{ts}"
    for side, stamp, out in (("golden", "20241121120000", a_out), ("target", "20241122130000", t_out)):
        d = base / side / f"worldsize1_global_rank0/{stamp}/0/ge_default_{stamp}_1/1/{step}"
        d.mkdir(parents=True, exist_ok=True)
        ins = [Tensor(a_in, dt, raw=a_in.tobytes())]
        outs = [Tensor(out, dt, raw=out.tobytes())]
        dd = dump_header(f"bench/op_{files}", ts, ins, outs, original_names=False)
        (d / name).write_bytes(v2_bytes(dd, ins, outs))
    written += a_in.nbytes + a_out.nbytes
    files += 1
(base / "BENCH_TREES.json").write_text(json.dumps({"gib": gib, "files_per_tree": files}) + "\n")
print(f"bench trees: {files} files each, {written / (1 << 30):.2f} GiB of tensor data each")
PY
fi
bytes=$(find "$golden" "$target" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
files=$(find "$golden" "$target" -type f | wc -l)
echo "trees: $golden + $target, $files files, $bytes bytes"

# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh
# Both examples are built before the trees are warmed (a build would evict their pages).
stream_bin
# The compute-only limit (examples/metric_limit.rs): the metric kernels alone over the pairs'
# bytes, read into memory before its clock starts (no reading, no page faults, no listing): the
# time npgx's arithmetic takes on this CPU whatever its reader does. It holds both trees in
# memory: the RAM it needs is their size, beside the page cache that holds them. $NPGX_METRIC_BIN
# names a built example.
if [ -z "${NPGX_METRIC_BIN:-}" ]; then
  cargo build --release --locked --quiet --example metric_limit >&2
  NPGX_METRIC_BIN="${CARGO_TARGET_DIR:-target}/release/examples/metric_limit"
fi
# warm the page cache (both trees must fit in RAM for the comparison to mean anything)
warm "$golden" "$target"

npgx_compare() { "$bin" dump-compare "$golden" "$target" --format json --no-progress; }

npgx_compare_mapped() { "$bin" dump-compare "$golden" "$target" --format json --no-progress --mmap; }
npgx_compare_pread() { "$bin" dump-compare "$golden" "$target" --format json --no-progress --no-mmap; }
# The same binary capped at its AVX2 loops (src/simd.rs, NPGX_SIMD): whether the AVX-512 ones win
# on this CPU, measured (on a CPU without AVX-512 both are the AVX2 loops).
npgx_compare_avx2() { NPGX_SIMD=avx2 "$bin" dump-compare "$golden" "$target" --format json --no-progress; }
warm_read() { local runs=1; read_limit "$golden" "$target"; }
warm_stream() { local runs=1; stream_limit "$golden" "$target"; }
warm_metric() { "$NPGX_METRIC_BIN" --runs 1 "$golden" "$target" | sed -n 1p; }
warm_npgx() { once npgx_compare; }
warm_mapped() { once npgx_compare_mapped; }
warm_pread() { once npgx_compare_pread; }
warm_avx2() { once npgx_compare_avx2; }
echo "== in turn, best of $runs rounds ($(load)): the read limit; stream-only (npgx's reader and a"
echo "   kernel that only loads); compute-only (the metric kernels over the pairs in memory); npgx"
echo "   dump-compare; --mmap; --no-mmap; NPGX_SIMD=avx2"
read -r t_cat t_stream t_metric t_npgx t_mapped t_pread t_avx2 < <(in_turn warm_read warm_stream warm_metric warm_npgx warm_mapped warm_pread warm_avx2)
# A VM may page out page-cache pages it deems cold (DAMON's `pageout` scheme): a file not wholly
# resident is read with pread and partly from disk, so the warm figures hold only if this stays
# near the total.
echo "== resident after the warm runs: $(resident_bytes "$golden" "$target") of $bytes bytes"
read -r anon_kb file_kb < <(peak_rss_split "$bin" dump-compare "$golden" "$target" --format json --no-progress)

# Cold cache (issue 35 item 4), as in bench_dump_scan.sh: both trees evicted before each run.
cold_tree="$base"
evict "$golden" "$target"
left=$(resident_bytes "$golden" "$target")
echo "== cold: $left of $bytes bytes still cached after eviction ($(load))"
t_cold_limit=$(read_limit --cold --threads "${NPGX_COLD_THREADS:-16}" "$golden" "$target")
t_cold=$(cold_best npgx_compare)
t_cold_mapped=$(cold_best npgx_compare_mapped)
t_cold_pread=$(cold_best npgx_compare_pread)
warm "$golden" "$target"  # warm again
echo "== python baseline (1 run)"
s=$(now)
py_out=$("$py" scripts/baseline_dump_compare.py "$golden" "$target")
e=$(now)
t_py=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", e - s}')

# peak RSS of one more run; exit code 1 (divergences found) is expected on these trees
out=$(mktemp)
rss_kb=$(PEAK_OUT="$out" peak_rss_kib "$bin" dump-compare "$golden" "$target" --format json --no-progress) || true
read -r npgx_pairs npgx_failed npgx_cos < <("$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))
print(r["summary"]["pairs"], r["summary"]["failed"], sum(p["metrics"]["cosine"] for p in r["pairs"]))' "$out")
read -r py_pairs py_failed py_cos < <("$py" -c '
import json, sys
r = json.loads(sys.argv[1]); print(r["pairs"], r["failed"], r["cosine_sum"])' "$py_out")
rm -f "$out"

awk -v b="$bytes" -v c="$t_cat" -v n="$t_npgx" -v p="$t_py" -v r="$rss_kb" \
    -v pr="$t_mapped" -v cl="$t_cold_limit" -v cn="$t_cold" -v cp="$t_cold_mapped" -v an="$anon_kb" -v fi="$file_kb" \
    -v pd="$t_pread" -v cr="$t_cold_pread" -v st="$t_stream" -v a2="$t_avx2" -v cm="$t_metric" \
    -v w512="$(grep -qw avx512f /proc/cpuinfo && echo 1 || echo 0)" \
    -v np_="$npgx_pairs" -v nf="$npgx_failed" -v nc="$npgx_cos" -v pp="$py_pairs" -v pf="$py_failed" -v pc="$py_cos" 'BEGIN {
  mib = b / 1048576
  printf "\n%-28s %10s %12s\n", "", "seconds", "MiB/s"
  printf "%-28s %10.3f %12.0f\n", "read limit (both trees)", c, mib / c
  printf "%-28s %10.3f %12.0f\n", "stream-only (no kernel)", st, mib / st
  printf "%-28s %10.3f %12.0f\n", "compute-only (no reading)", cm, mib / cm
  printf "%-28s %10.3f %12.0f\n", "npgx dump-compare", n, mib / n
  printf "%-28s %10.3f %12.0f\n", "npgx dump-compare --mmap", pr, mib / pr
  printf "%-28s %10.3f %12.0f\n", "npgx dump-compare --no-mmap", pd, mib / pd
  printf "%-28s %10.3f %12.0f\n", "npgx, NPGX_SIMD=avx2", a2, mib / a2
  printf "%-28s %10.3f %12.0f\n", "cold read limit", cl, mib / cl
  printf "%-28s %10.3f %12.0f\n", "npgx dump-compare, cold", cn, mib / cn
  printf "%-28s %10.3f %12.0f\n", "npgx --mmap, cold", cp, mib / cp
  printf "%-28s %10.3f %12.0f\n", "npgx --no-mmap, cold", cr, mib / cr
  printf "%-28s %10.3f %12.0f\n", "python + numpy baseline", p, mib / p
  printf "\nnpgx / read   = %.2fx   (target >= 0.8x; --mmap %.2fx, --no-mmap %.2fx)\n", c / n, c / pr, c / pd
  if (w512) printf "widest loops / AVX2 loops = %.2fx   (NPGX_SIMD=avx2 time / default time: above 1, the AVX-512 loops win on this CPU)\n", a2 / n
  else printf "widest loops / AVX2 loops = %.2fx   (no AVX-512 on this CPU: both runs take the same loops, so this is the noise of one run)\n", a2 / n
  printf "stream-only / read = %.2fx   (a kernel that only loads, through the same reader: no kernel with it does better here)\n", c / st
  printf "compute-only / read = %.2fx   (the metric kernels alone, no reading: above this npgx cannot go on this CPU%s)\n", c / cm, (c / cm < 0.8 ? "; below the 0.8x target" : "")
  printf "cold: npgx / cold read = %.2fx   (target >= 0.9x; --mmap %.2fx, --no-mmap %.2fx)\n", cl / cn, cl / cp, cl / cr
  printf "peak RssAnon %.1f MiB, peak RssFile (mapped page-cache pages) %.1f MiB\n", an / 1024, fi / 1024
  printf "npgx / python = %.1fx   (target >= 10x)\n", p / n
  printf "npgx peak RSS = %.1f MiB (target < 300 MB)\n", r / 1024
  agree = (np_ == pp && nf == pf && (nc - pc) * (nc - pc) < 1e-12 * np_ * np_)
  printf "pairs %s / %s, failed %s / %s, sum of cosines %.12f / %.12f (npgx / python)%s\n", np_, pp, nf, pf, nc, pc, (agree ? "" : "   <-- DISAGREE")
}'
# The compute-only pass must do the comparison's work: the same pairs, the same cosines.
read -r m_pairs _ _ _ _ _ _ m_cos < <("$NPGX_METRIC_BIN" --runs 1 "$golden" "$target" | sed -n 2p)
awk -v mp="$m_pairs" -v mc="$m_cos" -v np_="$npgx_pairs" -v nc="$npgx_cos" 'BEGIN {
  agree = (mp == np_ && (mc - nc) * (mc - nc) < 1e-20 * np_ * np_)
  printf "compute-only pass: pairs %s / %s, sum of cosines %.12f / %.12f (metric_limit / npgx)%s\n", mp, np_, mc, nc, (agree ? "" : "   <-- DISAGREE")
}'
echo "$(load) at the end"
cpu
