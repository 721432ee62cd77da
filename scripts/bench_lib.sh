# Shared by the benchmark scripts (sourced, not run): wall-clock timing of a command, the read
# limit of the machine, peak RSS, the load. Needs $runs set by the caller.
#
# Every timed command writes its standard output to a file, never to /dev/null: GNU grep (and
# other tools) notice /dev/null and stop at the first match.

now() { date +%s.%N; }

bench_out="$(mktemp)"
trap 'rm -f "$bench_out"' EXIT

once() { # wall time (s) of one run of "$@", stdout to a scratch file
  local s e
  s=$(now); "$@" > "$bench_out" 2> /dev/null || true; e=$(now)
  : > "$bench_out"
  awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", e - s}'
}

faster() { # whether time $1 beats $2, the best so far (none yet: it does)
  [ -z "$2" ] || awk -v t="$1" -v b="$2" 'BEGIN {exit !(t < b)}'
}

best() { # best wall time (s) of $runs runs of "$@", stdout to a scratch file
  local b="" t
  for _ in $(seq "$runs"); do
    t=$(once "$@")
    if faster "$t" "$b"; then b=$t; fi
  done
  echo "$b"
}

in_turn() { # the best time of each measurement named in "$@" (a function printing one time in
  # seconds), taken in turn for $runs rounds, one of each per round: a slow spell of a shared
  # machine then falls on the baseline and on npgx alike, where one measurement after the other
  # put it on whichever ran then (on a 2-core VM the same ratio moved from 0.67x to 0.80x
  # minutes apart). Prints the best times on one line, in the order named.
  local -A b=()
  local f t
  for _ in $(seq "$runs"); do
    for f in "$@"; do
      # (run under `< <(in_turn …)`: a failed or silent measurement ends the input, and the
      # caller's `read` stops the bench, with the measurement named here)
      t=$("$f") || { echo "in_turn: $f failed" >&2; exit 1; }
      [ -n "$t" ] || { echo "in_turn: $f printed no time" >&2; exit 1; }
      if faster "$t" "${b[$f]:-}"; then b[$f]=$t; fi
    done
  done
  for f in "$@"; do printf '%s ' "${b[$f]}"; done
  echo
}

read_limit() { # best wall time (s) of $runs reads of every byte of PATH… (files or directories)
  # into one reused buffer per thread, on $NPGX_READ_THREADS threads (default: the CPUs this
  # process may use), by scripts/read_limit.py (stdlib only; $NPGX_READ_PYTHON, default python3).
  # Timed inside Python, from the first open to the last read.
  "${NPGX_READ_PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/read_limit.py" \
    --runs "$runs" --threads "${NPGX_READ_THREADS:-$(nproc)}" "$@"
}

warm() { # reads every byte of PATH… once into the page cache (read_limit.py, one pass): not
  # `cat > /dev/null`, which may splice without reading
  read_limit --runs 1 "$@" > /dev/null
}

load() { # the 1-minute load average and the core count, for the line printed next to a figure
  echo "load $(cut -d' ' -f1 /proc/loadavg) on $(nproc) cores"
}

peak_rss_kib() { # peak RSS (KiB) of one run of "$@", its stdout to $PEAK_OUT (default a scratch
  # file); returns the command's exit status. Needs GNU time at /usr/bin/time.
  local log code=0
  log=$(mktemp)
  /usr/bin/time -v -o "$log" "$@" > "${PEAK_OUT:-$bench_out}" || code=$?
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log"
  rm -f "$log"
  return "$code"
}

evict() { # drops the page-cache pages of every file under PATH… (read_limit.py --evict)
  "${NPGX_READ_PYTHON:-python3}" "$(dirname "${BASH_SOURCE[0]}")/read_limit.py" --evict "$@"
}

resident_bytes() { # bytes of the files under PATH… that the page cache holds (util-linux fincore)
  find "$@" -type f -print0 | xargs -0 fincore --bytes --noheadings --output RES \
    | awk '{s += $1} END {print s + 0}'
}

cold_best() { # best wall time (s) of $runs runs of "$@", the files under $cold_tree evicted
  # before each run (stdout to a scratch file)
  local b="" t
  for _ in $(seq "$runs"); do
    evict "$cold_tree"
    t=$(once "$@")
    if faster "$t" "$b"; then b=$t; fi
  done
  echo "$b"
}

peak_rss_split() { # "anon file" peak KiB of one run of "$@" (RssAnon: the process's own memory;
  # RssFile: mapped file pages, the page cache's), sampled from /proc every 5 ms
  "$@" > "$bench_out" 2> /dev/null &
  local pid=$! anon=0 file=0 a f
  while kill -0 "$pid" 2> /dev/null; do
    read -r a f < <(awk '/^RssAnon/ {a = $2} /^RssFile/ {f = $2} END {print a + 0, f + 0}' \
      "/proc/$pid/status" 2> /dev/null || echo "0 0")
    [ "${a:-0}" -gt "$anon" ] && anon=$a
    [ "${f:-0}" -gt "$file" ] && file=$f
    sleep 0.005
  done
  wait "$pid" || true
  echo "$anon $file"
}

cpu() { # the CPU a ratio was measured on, printed beside it (issue 44 item 6): model, the vector
  # extensions the kernels choose from, the caches of one core (sysfs) and the core count
  local model ext caches="" idx level type size
  # (every reader reads its whole input, and a probe that finds nothing leaves its fallback:
  # the benches run under `set -euo pipefail`)
  model=$(LC_ALL=C lscpu 2>/dev/null | awk -F': *' '/^Model name/ && m == "" {m = $2} END {print m}') || true
  # x86 flags / AArch64 features of the first CPU, kept to the vector ones
  ext=$(awk -F': *' '/^(flags|Features)/ && f == "" {f = $2} END {print f}' /proc/cpuinfo | tr ' ' '\n' \
    | grep -xE 'sse4_2|avx|avx2|fma|f16c|avx512(f|bw|vl|dq|_fp16|_bf16|vnni)|asimd|asimdhp|fphp|sve2?|bf16' \
    | paste -sd' ' -) || true
  for idx in /sys/devices/system/cpu/cpu0/cache/index*; do
    [ -r "$idx/size" ] || continue
    level=$(cat "$idx/level"); type=$(cat "$idx/type"); size=$(cat "$idx/size")
    [ "$type" = Instruction ] && continue
    caches="$caches L$level $size"
  done
  echo "cpu: ${model:-unknown} ($(nproc) cores; ${ext:-no vector extensions listed};${caches:- caches unknown})"
}

stream_bin() { # builds the stream-only example once, unless $NPGX_STREAM_BIN names it, and
  # exports NPGX_STREAM_BIN (call it before measuring stream_limit in turn: once per bench)
  if [ -z "${NPGX_STREAM_BIN:-}" ]; then
    cargo build --release --locked --quiet --example stream_limit >&2
    export NPGX_STREAM_BIN="${CARGO_TARGET_DIR:-target}/release/examples/stream_limit"
  fi
}

stream_limit() { # best wall time (s) of $runs passes over every byte of PATH… read the way npgx
  # reads dumps (its Blocks reader, mapped when cached, all cores, the page-ahead prefetch) by a
  # kernel that only loads them (examples/stream_limit.rs): what no kernel reading through that
  # reader can beat on this CPU. Built with the release profile unless $NPGX_STREAM_BIN names the
  # example's binary.
  local ex="${NPGX_STREAM_BIN:-}"
  if [ -z "$ex" ]; then
    cargo build --release --locked --quiet --example stream_limit >&2
    ex="${CARGO_TARGET_DIR:-target}/release/examples/stream_limit"
  fi
  "$ex" --runs "$runs" "$@" | sed -n 1p
}
