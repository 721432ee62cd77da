#!/usr/bin/env bash
# GE graph dump parsing speed: npgx-parsers' ge_graph::parse + find_kernel against baselines
# measured in the same run on the same file:
#   - msaicerr's way (hicann/oam-tools): a dot-all regex over the whole text for one op block,
#   - `grep -c` (a lower bound for any tool that reads every byte).
# Usage: scripts/bench_ge_graph.sh [FILE] (default: the 3.5 MB ResNet-50 graph of the samples)
set -euo pipefail
cd "$(dirname "$0")/.."
file="${1:-../shared/samples/cann/graph-transdata-kernel-meta/ge_proto_00000062_Build.txt}"
# The last compute op of the graph: a regex has to read nearly the whole file, as it does for
# most ops of a real model.
node="trans_Cast_170"
kernel="te_cast_5676ecdc50141188_c50cf465894adb0d_1__kernel0"
repeat=20

cargo build --quiet --release -p npgx-parsers --example ge_graph_parse
bin="${CARGO_TARGET_DIR:-target}/release/examples/ge_graph_parse"

now() { date +%s.%N; }
t0=$(now); for _ in $(seq $repeat); do grep -c 'op {' "$file" >/dev/null; done; t1=$(now)
grep_ms=$(echo "($t1 - $t0) * 1000 / $repeat" | bc -l)

py_ms=$(python3 - "$file" "$node" "$kernel" "$repeat" <<'PY'
import re, sys, time
path, node, kernel, repeat = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
text = open(path, encoding="utf-8", errors="replace").read()
pat = re.compile(r'op\s+\{\s+name:\s+"%s".+?%s.+?\}\s+op\s+\{' % (re.escape(node), re.escape(kernel)), re.M | re.S)
t = time.perf_counter()
for _ in range(repeat):
    assert pat.search(text)
print((time.perf_counter() - t) * 1000 / repeat)
PY
)

out=$("$bin" --repeat $repeat --kernel "$kernel" "$file")
echo "$out"
npgx_ms=$(echo "$out" | sed -E 's/.* ([0-9.]+) ms per parse.*/\1/')
printf 'file: %s (%s bytes)\n' "$file" "$(stat -c %s "$file")"
printf 'npgx parse + find_kernel : %8.2f ms (typed model of every op)\n' "$npgx_ms"
printf 'msaicerr regex (python)  : %8.2f ms (one op block, untyped)   ratio npgx/regex = %.2f\n' "$py_ms" "$(echo "$npgx_ms / $py_ms" | bc -l)"
printf 'grep -c (process incl.)  : %8.2f ms                            ratio npgx/grep  = %.2f\n' "$grep_ms" "$(echo "$npgx_ms / $grep_ms" | bc -l)"
