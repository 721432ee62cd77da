#!/usr/bin/env bash
# Benchmark of device-layout conversion (issue 34 item 3): `npgx dump-convert` and `npgx
# dump-compare` of device-format tensors, the npgx under test against a baseline npgx (another
# build, e.g. main before a change) measured in the same run, on a warm page cache.
#
# Trees, written once by numpy (gen_compare_fixtures.py to_layout) and cached under
# target/bench-layout/<MiB>mib/: `dev/` holds fp16 tensors in NC1HWC0, NDC1HWC0, FRACTAL_Z,
# FRACTAL_Z_3D and FRACTAL_NZ with padding (C, N, rows and columns not multiples of 16); `nd/`
# the same tensors, values perturbed by ~1e-3, as ND dumps; `z/` the NC1HWC0 and FRACTAL_Z tensors
# of `dev/` in the other of the two layouts; `pt/` npugraph_ex `.pt` files of strided views (a
# transposed fp16 matrix, a permuted fp32 3-D tensor; torch.save, 1/4 of MiB). Timed, best of
# NPGX_BENCH_RUNS (default 3):
#   convert   dump-convert dev/ -o OUT         every tensor brought back to its logical order
#   nd-dev    dump-compare nd/ dev/             the ND side laid out in the device side's order
#   dev-dev   dump-compare dev/ dev/            the same layout: both streamed row by row
#   mixed     dump-compare dev/ z/              two layouts: both brought back to logical order
#   pt-conv   dump-convert pt/ -o OUT           strided views put in C order
#   pt-pt     dump-compare pt/ pt/              strided views put in C order chunk by chunk
# Each line gives both times and base / new (above 1: the new build is faster); the outputs of the
# two builds must agree (the same .npy bytes, the same pairs, verdicts and metrics).
#
# Usage: scripts/bench_layout.sh [MiB]   (default 128: device bytes of dev/)
# Env:   NPGX_PYTHON (default .venv/bin/python; numpy, protobuf, torch), NPGX_BIN (default: cargo build --release,
#        ${CARGO_TARGET_DIR:-target}/release/npgx), NPGX_BASE_BIN (the baseline npgx; without it
#        only the new build is timed), NPGX_BENCH_RUNS.
set -euo pipefail
cd "$(dirname "$0")/.."

mib="${1:-128}"
runs="${NPGX_BENCH_RUNS:-3}"
py="${NPGX_PYTHON:-.venv/bin/python}"
bin="${NPGX_BIN:-${CARGO_TARGET_DIR:-target}/release/npgx}"
base_bin="${NPGX_BASE_BIN:-}"
base="target/bench-layout/${mib}mib"

if [ ! -x "$py" ]; then
  echo "bench: no Python at $py (set NPGX_PYTHON; needs numpy and protobuf)" >&2
  exit 2
fi
if [ -z "${NPGX_BIN:-}" ]; then
  echo "== cargo build --release"
  cargo build --release --locked --quiet
fi

if [ ! -f "$base/BENCH_LAYOUT.json" ]; then
  echo "== writing the layout trees (${mib} MiB of device data) to $base (once)"
  rm -rf "$base"
  mkdir -p "$base"
  "$py" - "$base" "$mib" <<'PY'
import json, sys
from pathlib import Path
import numpy as np
sys.path.insert(0, "scripts")
import gen_dump_fixtures as g
from gen_compare_fixtures import to_layout

base, mib = Path(sys.argv[1]), float(sys.argv[2])
SHAPES = [  # (format, logical axis order, logical shape): padding on C, N, rows or columns
    ("NC1HWC0", "NCHW", (8, 20, 56, 56)),
    ("NDC1HWC0", "NCDHW", (2, 20, 8, 28, 28)),
    ("FRACTAL_Z", "NCHW", (250, 100, 3, 3)),
    ("FRACTAL_Z_3D", "NCDHW", (120, 40, 3, 3, 3)),
    ("FRACTAL_NZ", None, (1000, 1000)),
    ("FRACTAL_NZ", None, (4, 300, 500)),
]
OTHER = {"NC1HWC0": ("FRACTAL_Z", "NCHW"), "FRACTAL_Z": ("NC1HWC0", "NCHW")}
rng = np.random.default_rng(17)
written = files = 0
limit = int(mib * (1 << 20))


def dump(tree, name, ts, t):
    d = base / tree / "20241121120000" / "0"
    d.mkdir(parents=True, exist_ok=True)
    dd = g.dump_header(f"bench/{name}", ts, [], [t], original_names=False)
    (d / f"TransData.{name}.1.1.{ts}").write_bytes(g.v2_bytes(dd, [], [t]))


def device_tensor(a, fmt, order):
    dev = to_layout(a, fmt, order, 16)
    return g.Tensor(a, 2, fmt=g.FMT[fmt], raw=dev.tobytes(), shape=list(dev.shape), orig=list(a.shape))


while written < limit:
    fmt, order, shape = SHAPES[files % len(SHAPES)]
    a = rng.uniform(-2, 2, shape).astype(np.float16)
    b = (a.astype(np.float64) * (1 + 1e-3 * rng.standard_normal(shape))).astype(np.float16)
    name, ts = f"op_{files}", g.T0 + files * 100
    t = device_tensor(a, fmt, order)
    dump("dev", name, ts, t)
    dump("nd", name, ts, g.Tensor(b, 2))
    if fmt in OTHER:
        dump("z", name, ts, device_tensor(b, *OTHER[fmt]))
    written += len(t.raw)
    files += 1
import torch
torch.manual_seed(5)
pt_bytes = i = 0
(base / "pt").mkdir()
while pt_bytes < limit // 4:
    x = torch.randn(1024, 2048, dtype=torch.float16).t() if i % 2 == 0 else \
        torch.randn(32, 128, 256, dtype=torch.float32).permute(2, 0, 1)
    torch.save(x, base / "pt" / f"view_{i}_device_0_{i}.pt")
    pt_bytes += x.numel() * x.element_size()
    i += 1
(base / "BENCH_LAYOUT.json").write_text(json.dumps({"mib": mib, "files": files, "pt_files": i}) + "\n")
print(f"layout trees: {files} files, {written / (1 << 20):.0f} MiB of device data")
PY
fi
dev="$base/dev"
nd="$base/nd"
z="$base/z"
pt="$base/pt"
echo "trees: $(find "$dev" -type f | wc -l) device-format dumps, $(du -sm "$dev" | cut -f1) MiB"

# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh
warm "$dev" "$nd" "$z" "$pt"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch" "$bench_out"' EXIT

convert() { rm -rf "$scratch/$2"; "$1" dump-convert "${3:-$dev}" -o "$scratch/$2" --format json; }
compare() { "$1" dump-compare "$2" "$3" --format json --no-progress; }
summary() { # pairs, failed, sum of cosines and of max_abs of a dump-compare JSON on stdin
  "$py" -c '
import json, sys
r = json.load(sys.stdin)
ok = [p for p in r["pairs"] if p["metrics"]]
print(r["summary"]["pairs"], r["summary"]["failed"], len(ok),
      "%.12f" % sum(p["metrics"]["cosine"] for p in ok), "%.9f" % sum(p["metrics"]["max_abs"] for p in ok))'
}

agree="yes"
printf "\n%-8s %10s %10s %10s   %s\n" "" "base s" "new s" "base/new" "($(load))"
for what in convert nd-dev dev-dev mixed pt-conv pt-pt; do
  case "$what" in
    convert) cmd=(convert "" "$dev") ;;
    nd-dev) cmd=(compare "" "$nd" "$dev") ;;
    dev-dev) cmd=(compare "" "$dev" "$dev") ;;
    mixed) cmd=(compare "" "$dev" "$z") ;;
    pt-conv) cmd=(convert "" "$pt") ;;
    pt-pt) cmd=(compare "" "$pt" "$pt") ;;
  esac
  run_new() { if [ "${cmd[0]}" = convert ]; then convert "$bin" new "${cmd[2]}"; else compare "$bin" "${cmd[2]}" "${cmd[3]}"; fi; }
  run_base() { if [ "${cmd[0]}" = convert ]; then convert "$base_bin" base "${cmd[2]}"; else compare "$base_bin" "${cmd[2]}" "${cmd[3]}"; fi; }
  t_new=$(best run_new)
  if [ -n "$base_bin" ]; then
    t_base=$(best run_base)
    ratio=$(awk -v b="$t_base" -v n="$t_new" 'BEGIN {printf "%.2fx", b / n}')
    if [ "${cmd[0]}" = convert ]; then
      run_new > /dev/null 2>&1 || true
      run_base > /dev/null 2>&1 || true
      diff -r -q "$scratch/new" "$scratch/base" > /dev/null || { agree="no ($what)"; }
    else
      a=$(run_new 2> /dev/null | summary || true)
      b=$(run_base 2> /dev/null | summary || true)
      [ "$a" = "$b" ] || agree="no ($what: $a vs $b)"
    fi
  else
    t_base="-"
    ratio="-"
  fi
  printf "%-8s %10s %10s %10s\n" "$what" "$t_base" "$t_new" "$ratio"
done
[ -n "$base_bin" ] && echo "outputs of both builds agree: $agree"
echo "$(load) at the end"
cpu
