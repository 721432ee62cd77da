#!/usr/bin/env bash
# Benchmark of `npgx dump-scan` (issue 2), measured in one run on a warm page cache against
#   - the read limit of this machine: every byte of the tree read into one reused buffer per
#     thread on all cores (bench_lib.sh, read_limit; `cat > /dev/null` is one thread, or no read),
#   - scripts/baseline_dump_scan.py: Python + numpy doing the same work (header + frombuffer +
#     isnan/isinf), i.e. what users script today.
# Targets: npgx >= 0.9x the read limit, >= 20x Python, peak RSS < 200 MB whatever the tree size;
# cold cache (issue 35): npgx >= 0.9x the cold read limit (pages evicted before every run, checked
# with fincore). Positional reads (the default) and --mmap are both measured; peak RSS is split into the
# process's own memory (RssAnon) and mapped page-cache pages (RssFile).
#
# Usage: scripts/bench_dump_scan.sh [GiB]      (default 1; the tree is built once and cached under
#        target/bench/, by scripts/gen_dump_fixtures.py --bench-gib)
#        scripts/bench_dump_scan.sh --files N[,N…]  file-count curve: for each N a tree of N small
#        dumps (hard links, gen_dump_fixtures.py --bench-files), one scan each; prints seconds,
#        peak RSS and RSS per file. Target: peak RSS < 200 MB at 1 000 000 files.
#        NPGX_BENCH_PER_DIR=M puts M files in each step directory (default 1000; one directory is
#        one group: 150 000 files = 300 000 tensors in one group, target peak RSS <= 50 MB).
#        NPGX_BENCH_FORMAT=json|csv|parquet: what the curve's scans write (default json; csv is
#        `--format csv --all`, parquet the shard of docs/cluster.md, every tensor: target peak
#        RSS <= 300 MB at 1 000 000 files = 2 000 000 tensors). The shard goes to a scratch
#        directory, removed at the end; its size is printed.
# Env:   NPGX_PYTHON (default .venv/bin/python), CARGO_TARGET_DIR, NPGX_BENCH_RUNS (default 3),
#        NPGX_BIN (use this npgx binary instead of building target/release/npgx).
set -euo pipefail
cd "$(dirname "$0")/.."

files_mode=""
if [ "${1:-}" = "--files" ]; then
  files_mode="${2:?--files needs N[,N…]}"
fi
gib="${1:-1}"
runs="${NPGX_BENCH_RUNS:-3}"
py="${NPGX_PYTHON:-.venv/bin/python}"
bin="${NPGX_BIN:-${CARGO_TARGET_DIR:-target}/release/npgx}"
tree="target/bench/dump-${gib}gib"
# shellcheck source=scripts/bench_lib.sh
. scripts/bench_lib.sh

if [ ! -x "$py" ]; then
  python3 -m venv .venv
  .venv/bin/python -m pip install --quiet --disable-pip-version-check numpy protobuf ml_dtypes
  py=.venv/bin/python
fi
if [ ! -x /usr/bin/time ]; then
  echo "bench: /usr/bin/time (GNU time) is needed for peak RSS: apt-get install time" >&2
  exit 2
fi

if [ -z "${NPGX_BIN:-}" ]; then
  echo "== cargo build --release"
  cargo build --release --locked --quiet
fi

if [ -n "$files_mode" ]; then
  format="${NPGX_BENCH_FORMAT:-json}"
  shard_dir=$(mktemp -d)
  trap 'rm -rf "$shard_dir" "$bench_out"' EXIT
  case "$format" in
    json) format_args=(--format json) ;;
    csv) format_args=(--format csv --all) ;;
    parquet) format_args=(--format parquet -o "$shard_dir/shard.parquet") ;;
    *) echo "bench: NPGX_BENCH_FORMAT is json, csv or parquet, not $format" >&2; exit 2 ;;
  esac
  echo "== $(load), dump-scan ${format_args[*]}"
  printf '\n%10s %10s %14s %14s %s\n' files seconds "peak RSS MiB" "bytes/file" "exit"
  IFS=, read -r -a counts <<< "$files_mode"
  for n in "${counts[@]}"; do
    per_dir="${NPGX_BENCH_PER_DIR:-1000}"
    ftree="target/bench/dump-files-$n-per-$per_dir"
    if [ ! -f "$ftree/BENCH_TREE.json" ]; then
      "$py" scripts/gen_dump_fixtures.py --out "$ftree" --bench-files "$n" --per-dir "$per_dir" > /dev/null
    fi
    warm "$ftree/root"  # warm the inode and page cache
    s=$(now)
    code=0
    rss_kb=$(peak_rss_kib "$bin" dump-scan "$ftree/root" "${format_args[@]}" --no-progress) || code=$?
    e=$(now)
    awk -v n="$n" -v s="$s" -v e="$e" -v r="$rss_kb" -v c="$code" 'BEGIN {
      printf "%10d %10.2f %14.1f %14.0f %s\n", n, e - s, r / 1024, r * 1024 / n, c }'
    if [ -f "$shard_dir/shard.parquet" ]; then
      echo "           shard: $(stat -c %s "$shard_dir/shard.parquet") bytes"
      rm -f "$shard_dir/shard.parquet"
    fi
  done
  echo "== $(load) at the end"
  cpu
  exit 0
fi

if [ ! -f "$tree/BENCH_TREE.json" ]; then
  echo "== writing a ${gib} GiB tree to $tree (once)"
  mkdir -p "$(dirname "$tree")"
  "$py" scripts/gen_dump_fixtures.py --out "$tree" --bench-gib "$gib"
fi
bytes=$(find "$tree" -type f -printf '%s\n' | awk '{s+=$1} END {print s}')
files=$(find "$tree" -type f | wc -l)
echo "tree: $tree, $files files, $bytes bytes"

# warm the page cache (the tree must fit in RAM for the comparison to mean anything)
warm "$tree"

npgx_scan() { "$bin" dump-scan "$tree" --format json --no-progress; }
npgx_scan_mapped() { "$bin" dump-scan "$tree" --format json --no-progress --mmap; }
npgx_scan_pread() { "$bin" dump-scan "$tree" --format json --no-progress --no-mmap; }

stream_bin
warm_read() { local runs=1; read_limit "$tree"; }
warm_stream() { local runs=1; stream_limit "$tree"; }
warm_npgx() { once npgx_scan; }
warm_mapped() { once npgx_scan_mapped; }
warm_pread() { once npgx_scan_pread; }
echo "== in turn, best of $runs rounds ($(load)): the read limit; stream-only (npgx's reader and a"
echo "   kernel that only loads); npgx dump-scan; --mmap; --no-mmap"
read -r t_cat t_stream t_npgx t_mapped t_pread < <(in_turn warm_read warm_stream warm_npgx warm_mapped warm_pread)
# A VM may page out page-cache pages it deems cold (DAMON's `pageout` scheme): a file not wholly
# resident is read with pread and partly from disk, so the warm figures hold only if this stays
# near the total.
echo "== resident after the warm runs: $(resident_bytes "$tree") of $bytes bytes"
read -r anon_kb file_kb < <(peak_rss_split "$bin" dump-scan "$tree" --format json --no-progress)

# Cold cache (issue 35 item 4): every file's pages dropped before each run (fadvise DONTNEED),
# checked with fincore; the cold read limit reads every file once on NPGX_COLD_THREADS threads
# (default 16: more requests in flight than cores).
cold_tree="$tree"
evict "$tree"
left=$(resident_bytes "$tree")
echo "== cold: $left of $bytes bytes still cached after eviction ($(load))"
t_cold_limit=$(read_limit --cold --threads "${NPGX_COLD_THREADS:-16}" "$tree")
t_cold=$(cold_best npgx_scan)
t_cold_mapped=$(cold_best npgx_scan_mapped)
t_cold_pread=$(cold_best npgx_scan_pread)
warm "$tree"  # warm again for the rest
echo "== python baseline (1 run)"
s=$(now)
py_out=$("$py" scripts/baseline_dump_scan.py "$tree")
e=$(now)
t_py=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", e - s}')

# peak RSS of one more run; exit code 1 (anomalies found) is expected on this tree
out=$(mktemp)
rss_kb=$(PEAK_OUT="$out" peak_rss_kib "$bin" dump-scan "$tree" --format json --no-progress) || true
npgx_anom=$("$py" -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["anomalous_tensors"])' "$out")
rm -f "$out"
py_anom=$("$py" -c 'import json,sys; print(json.loads(sys.argv[1])["anomalous_tensors"])' "$py_out")

awk -v b="$bytes" -v c="$t_cat" -v n="$t_npgx" -v p="$t_py" -v r="$rss_kb" -v na="$npgx_anom" -v pa="$py_anom" \
  -v pr="$t_mapped" -v cl="$t_cold_limit" -v cn="$t_cold" -v cp="$t_cold_mapped" -v an="$anon_kb" -v fi="$file_kb" \
  -v pp="$t_pread" -v cr="$t_cold_pread" -v st="$t_stream" 'BEGIN {
  mib = b / 1048576
  printf "\n%-26s %10s %12s\n", "", "seconds", "MiB/s"
  printf "%-26s %10.3f %12.0f\n", "read limit", c, mib / c
  printf "%-26s %10.3f %12.0f\n", "stream-only (no kernel)", st, mib / st
  printf "%-26s %10.3f %12.0f\n", "npgx dump-scan", n, mib / n
  printf "%-26s %10.3f %12.0f\n", "npgx dump-scan --mmap", pr, mib / pr
  printf "%-26s %10.3f %12.0f\n", "npgx dump-scan --no-mmap", pp, mib / pp
  printf "%-26s %10.3f %12.0f\n", "python + numpy baseline", p, mib / p
  printf "%-26s %10.3f %12.0f\n", "cold read limit", cl, mib / cl
  printf "%-26s %10.3f %12.0f\n", "npgx dump-scan, cold", cn, mib / cn
  printf "%-26s %10.3f %12.0f\n", "npgx --mmap, cold", cp, mib / cp
  printf "%-26s %10.3f %12.0f\n", "npgx --no-mmap, cold", cr, mib / cr
  printf "\nnpgx / read   = %.2fx   (target >= 0.9x; --mmap %.2fx, --no-mmap %.2fx)\n", c / n, c / pr, c / pp
  printf "stream-only / read = %.2fx   (a kernel that only loads, through the same reader: no kernel with it does better here)\n", c / st
  printf "cold: npgx / cold read = %.2fx   (target >= 0.9x; --mmap %.2fx, --no-mmap %.2fx)\n", cl / cn, cl / cp, cl / cr
  printf "peak RssAnon %.1f MiB, peak RssFile (mapped page-cache pages) %.1f MiB\n", an / 1024, fi / 1024
  printf "npgx / python = %.1fx   (target >= 20x)\n", p / n
  printf "npgx peak RSS = %.1f MiB (target < 200 MB)\n", r / 1024
  printf "anomalous tensors: npgx %s, python %s%s\n", na, pa, (na == pa ? "" : "   <-- DISAGREE")
}'
echo "$(load) at the end"
cpu
