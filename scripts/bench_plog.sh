#!/usr/bin/env bash
# Benchmark `npgx plog` against grep (and ripgrep when installed) on >= 1 GiB of plog text.
#
#   scripts/bench_plog.sh [SIZE_MIB]      (default 1024)
#
# 1. Builds the plog corpus from the real samples in ../shared/samples (the raw plogs of logs/ and
#    the multi-MB plogs of the CANN collections), repeated with varied pids and increasing
#    timestamps, into target/bench-plog/ (never into the repository), plus a quarter-size copy.
# 2. Measures in the same run, page cache warm: `grep -c '^\[ERROR\]'`, `rg -c` if present, and
#    `npgx plog --format json` (release build): wall time via /usr/bin/time, peak RSS.
# 3. Prints the ratios. Targets: npgx within 2x of grep; peak RSS flat in the input size.
set -euo pipefail
cd "$(dirname "$0")/.."

size_mib="${1:-1024}"
out_dir="${CARGO_TARGET_DIR:-target}/bench-plog"
bin="${CARGO_TARGET_DIR:-target}/release/npgx"
samples="../shared/samples"
mkdir -p "$out_dir"

echo "== cargo build --release"
cargo build --release --locked --quiet

big="$out_dir/plog-bench-${size_mib}m.log"
quarter="$out_dir/plog-bench-$((size_mib / 4))m.log"
python3 - "$samples" "$big" "$size_mib" "$quarter" <<'PY'
import os, re, sys, glob
samples, out, size_mib, quarter = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
srcs = sorted(glob.glob(os.path.join(samples, "logs", "0[124567]-plog-*.log"))) + \
       [os.path.join(samples, "logs", n) for n in ("19-plog-empty-pname-dfx-info-mlaprolog-cann91.log",
                                                  "29-hccl-raw-plog-mindie-commrootinfo.log")] + \
       sorted(glob.glob(os.path.join(samples, "cann", "*", "**", "plog-*.log"), recursive=True))
head = re.compile(rb"^\[([A-Z0-9]+)\] ([A-Z0-9_]+)\((-?\d+),([^)]*)\):\d{4}-\d\d-\d\d-\d\d:\d\d:\d\d\.\d{3}\.\d{3}( ?)(.*)$", re.S)
template = []  # (is_header, level, module, pname, sep+rest) or (False, raw)
for path in srcs:
    with open(path, "rb") as f:
        for line in f.read().split(b"\n"):
            m = head.match(line)
            if m:
                template.append((True, m.group(1), m.group(2), m.group(4), m.group(5) + m.group(6)))
            elif line:
                template.append((False, line))
target = size_mib << 20
def stamp(us):
    s, us = divmod(us, 1_000_000)
    m, s = divmod(s, 60)
    h, m = divmod(m, 60)
    d, h = divmod(h, 24)
    return b"2025-%02d-%02d-%02d:%02d:%02d.%03d.%03d" % (5 + d // 28, 1 + d % 28, h, m, s, us // 1000, us % 1000)
written, block, us = 0, 0, 0
q_target, q_done = target // 4, False
with open(out, "wb") as f, open(quarter, "wb") as q:
    while written < target:
        pid = b"%d" % (100000 + block * 37 % 900000)
        chunk = []
        for t in template:
            if t[0]:
                us += 97
                chunk.append(b"[%s] %s(%s,%s):%s%s\n" % (t[1], t[2], pid, t[3], stamp(us), t[4]))
            else:
                chunk.append(t[1] + b"\n")
        data = b"".join(chunk)
        f.write(data)
        if not q_done:
            q.write(data)
            q_done = written + len(data) >= q_target
        written += len(data)
        block += 1
print(f"corpus: {written / (1 << 20):.0f} MiB in {block} repetitions of {len(template)} lines from {len(srcs)} files")
PY

measure() { # label, command... -> prints wall seconds and peak RSS (KiB)
  local label="$1"; shift
  local log; log="$(mktemp)"
  /usr/bin/time -f "%e %M" -o "$log" "$@" > /dev/null 2>&1 || true
  local wall rss
  read -r wall rss < "$log"
  rm -f "$log"
  printf '%-34s %8.2f s  %8d KiB peak RSS\n' "$label" "$wall" "$rss" >&2
  echo "$wall $rss"
}

cat "$big" "$quarter" > /dev/null   # warm the page cache
echo "== $(du -h "$big" | cut -f1) $big"
echo "ERROR lines (grep): $(grep -c '^\[ERROR\]' "$big")"
read -r g_wall g_rss < <(measure "grep -c '^\\[ERROR\\]'" grep -c '^\[ERROR\]' "$big")
if command -v rg > /dev/null; then
  read -r r_wall _ < <(measure "rg -c '^\\[ERROR\\]'" rg -c '^\[ERROR\]' "$big")
fi
read -r n_wall n_rss < <(measure "npgx plog --format json" "$bin" plog "$big" --format json)
read -r q_wall q_rss < <(measure "npgx plog --format json (1/4 size)" "$bin" plog "$quarter" --format json)
read -r e_wall _ < <(measure "npgx plog --level error --records" "$bin" plog "$big" --level error --records --format json)

echo
awk -v n="$n_wall" -v g="$g_wall" 'BEGIN { printf "npgx / grep time ratio: %.2f (target <= 2)\n", n / g }'
if [ -n "${r_wall:-}" ]; then
  awk -v n="$n_wall" -v r="$r_wall" 'BEGIN { printf "npgx / rg time ratio:   %.2f\n", n / r }'
fi
awk -v n="$n_wall" -v s="$size_mib" 'BEGIN { printf "npgx throughput:        %.0f MiB/s\n", s / n }'
awk -v a="$n_rss" -v b="$q_rss" 'BEGIN { printf "peak RSS full / quarter: %d / %d KiB (flat if ~1)\n", a, b }'
