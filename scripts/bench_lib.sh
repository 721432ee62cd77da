# Shared by the benchmark scripts (sourced, not run): wall-clock timing of a command.
# Needs $runs set by the caller.

now() { date +%s.%N; }

best() { # best wall time (s) of $runs runs of "$@"
  local b="" s e t
  for _ in $(seq "$runs"); do
    s=$(now); "$@" > /dev/null 2>&1 || true; e=$(now)
    t=$(awk -v s="$s" -v e="$e" 'BEGIN {printf "%.4f", e - s}')
    if [ -z "$b" ] || awk -v t="$t" -v b="$b" 'BEGIN {exit !(t < b)}'; then b=$t; fi
  done
  echo "$b"
}

peak_rss_kib() { # peak RSS (KiB) of one run of "$@", its stdout to $PEAK_OUT (default /dev/null);
  # returns the command's exit status. Needs GNU time at /usr/bin/time.
  local log code=0
  log=$(mktemp)
  /usr/bin/time -v -o "$log" "$@" > "${PEAK_OUT:-/dev/null}" || code=$?
  awk -F: '/Maximum resident set size/ {gsub(/ /, "", $2); print $2}' "$log"
  rm -f "$log"
  return "$code"
}
