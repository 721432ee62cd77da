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
