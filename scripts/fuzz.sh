#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a fixed time budget each, outside CI.
#
# Usage: scripts/fuzz.sh [TARGET...]        (default: every target `cargo fuzz list` prints)
# Env:   FUZZ_SECONDS   budget per target in seconds (default 600 = 10 minutes)
#        FUZZ_TOOLCHAIN toolchain for cargo-fuzz's sanitizer flags (default nightly)
#
# Needs: `cargo install cargo-fuzz` and a nightly toolchain. Each target starts from the
# committed seeds in fuzz/seeds/<target>/ plus its working corpus fuzz/corpus/<target>/ (not
# committed; it grows across runs). Crashes land in fuzz/artifacts/<target>/; reproduce one with
#   cd fuzz && cargo +nightly fuzz run <target> artifacts/<target>/<file>
# and add the input as a regression unit test beside the parser. Per target the script prints
# the executions, coverage, corpus size and crash count; it exits 1 when any target crashed.
set -uo pipefail
cd "$(dirname "$0")/../fuzz"

secs="${FUZZ_SECONDS:-600}"
tc="${FUZZ_TOOLCHAIN:-nightly}"
if ! cargo fuzz --version > /dev/null 2>&1; then
  echo "fuzz.sh: cargo-fuzz is not installed: cargo install cargo-fuzz" >&2
  exit 2
fi
if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(cargo "+$tc" fuzz list)
fi

mkdir -p logs
status=0
summary=()
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t" "seeds/$t"
  log="logs/$t.log"
  echo "== $t: ${secs}s"
  cargo "+$tc" fuzz run "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$secs" -print_final_stats=1 > "$log" 2>&1
  rc=$?
  done_line=$(grep -E '^#[0-9]+ +DONE' "$log" | tail -1)
  [ -n "$done_line" ] || done_line=$(grep -E '^#[0-9]+' "$log" | tail -1)
  execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log" | tail -1)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<< "$done_line")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<< "$done_line")
  crashes=$(find "artifacts/$t" -type f 2> /dev/null | wc -l)
  corpus=$(find "corpus/$t" -type f | wc -l)
  line=$(printf '%-16s exit %-3s execs %-10s cov %-6s ft %-6s corpus %-6s crashes %s' \
    "$t" "$rc" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$crashes")
  echo "$line"
  summary+=("$line")
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    status=1
    grep -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written' "$log" | head -5
  fi
done

echo
echo "== summary (${secs}s per target, logs in fuzz/logs/)"
printf '%s\n' "${summary[@]}"
exit "$status"
