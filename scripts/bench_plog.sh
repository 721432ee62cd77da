#!/usr/bin/env bash
# Benchmark `npgx plog` against grep (and ripgrep when installed) on >= 1 GiB of plog text.
#
#   scripts/bench_plog.sh [SIZE_MIB]      (default 1024)
#
# 1. Builds the plog corpus from the real samples in ../shared/samples (the raw plogs of logs/ and
#    the multi-MB plogs of the CANN collections), repeated with varied pids and increasing
#    timestamps, into target/bench-plog/ (never into the repository), plus a quarter-size copy
#    (once: delete them to rebuild).
# 2. Measures in the same run, page cache warm, best of $NPGX_BENCH_RUNS (default 3): the read
#    limit (bench_lib.sh: every byte into a reused buffer, on all cores), `grep -c '^\[ERROR\]'`
#    (its output to a file: GNU grep stops at the first match when writing to /dev/null), `rg -c`
#    if present, and `npgx plog --format json` (release build); peak RSS via /usr/bin/time.
# 3. Prints the ratios and the load. Targets: npgx <= 1.0x grep's time; peak RSS flat in the
#    input size.
# Env: NPGX_BIN (use this npgx binary instead of building target/release/npgx).
set -euo pipefail
cd "$(dirname "$0")/.."

size_mib="${1:-1024}"
out_dir="${CARGO_TARGET_DIR:-target}/bench-plog"
bin="${NPGX_BIN:-${CARGO_TARGET_DIR:-target}/release/npgx}"
runs="${NPGX_BENCH_RUNS:-3}"
samples="../shared/samples"
mkdir -p "$out_dir"

if [ -z "${NPGX_BIN:-}" ]; then
  echo "== cargo build --release"
  cargo build --release --locked --quiet
fi

big="$out_dir/plog-bench-${size_mib}m.log"
quarter="$out_dir/plog-bench-$((size_mib / 4))m.log"
[ -s "$big" ] && [ -s "$quarter" ] || python3 - "$samples" "$big" "$size_mib" "$quarter" <<'PY'
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

# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

cat "$big" "$quarter" > /dev/null   # warm the page cache
echo "== $(du -h "$big" | cut -f1) $big"
echo "ERROR lines (grep): $(grep -c '^\[ERROR\]' "$big")"
echo "== best of $runs each (the read limit, grep, npgx and npgx --no-mmap in turn, one of each per round), $(load)"
# The read limit, grep, npgx mapped and copied in turn, one of each per round (`in_turn`); rg apart.
turn_read() { local runs=1; read_limit "$big"; }
turn_grep() { once grep -c '^\[ERROR\]' "$big"; }
turn_npgx() { once "$bin" plog "$big" --format json; }
# Copied into buffers (`pread`) where the default maps a cached file: what the mapping saves.
turn_copied() { once "$bin" plog "$big" --format json --no-mmap; }
read -r t_read t_grep t_npgx t_copied < <(in_turn turn_read turn_grep turn_npgx turn_copied)
if command -v rg > /dev/null; then
  t_rg=$(best rg -c '^\[ERROR\]' "$big")
fi
t_quarter=$(best "$bin" plog "$quarter" --format json)
t_records=$(best "$bin" plog "$big" --level error --records --format json)
rss=$(peak_rss_kib "$bin" plog "$big" --format json) || true
rss_quarter=$(peak_rss_kib "$bin" plog "$quarter" --format json) || true

row() { awk -v l="$1" -v t="$2" -v s="$3" 'BEGIN { printf "%-38s %8.3f s %8.0f MiB/s\n", l, t, s / t }'; }
echo
row "read limit ($(nproc) threads)" "$t_read" "$size_mib"
row "grep -c '^\[ERROR\]'" "$t_grep" "$size_mib"
[ -n "${t_rg:-}" ] && row "rg -c '^\[ERROR\]'" "$t_rg" "$size_mib"
row "npgx plog --format json" "$t_npgx" "$size_mib"
row "npgx plog --format json --no-mmap" "$t_copied" "$size_mib"
row "npgx plog --format json (1/4 size)" "$t_quarter" "$((size_mib / 4))"
row "npgx plog --level error --records" "$t_records" "$size_mib"
echo
awk -v n="$t_npgx" -v g="$t_grep" 'BEGIN { printf "npgx / grep time ratio:  %.2f (target <= 1.0)\n", n / g }'
if [ -n "${t_rg:-}" ]; then
  awk -v n="$t_npgx" -v r="$t_rg" 'BEGIN { printf "npgx / rg time ratio:    %.2f\n", n / r }'
fi
awk -v n="$t_npgx" -v r="$t_read" 'BEGIN { printf "npgx / read limit:       %.2fx of its throughput\n", r / n }'
awk -v a="$rss" -v b="$rss_quarter" 'BEGIN { printf "peak RSS full / quarter: %d / %d KiB (flat if ~1)\n", a, b }'
echo "$(load) at the end"
cpu
