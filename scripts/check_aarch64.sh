#!/usr/bin/env bash
# Lints the lean aarch64 build with clippy (-D warnings), cross-builds npgx's unit tests for aarch64
# (lean, --no-default-features: polars is not cross-compiled) and runs the vector kernels' tests
# under qemu-user: the statistics of dump-scan
# (src/scan/stats.rs, stats/neon.rs), the metrics of dump-compare (src/compare/metrics.rs,
# metrics/neon.rs), the dispatch (src/simd.rs) and the decoders (src/dump/values.rs). Each
# NEON kernel is compared bit for bit with the portable one at every length around the vector
# width and the block, with NaN, infinities, saturated values, subnormals and zeros of both
# signs. qemu's default CPU has NEON, so every such test must take the vector path: a test that
# reports SKIPPED fails this script.
#
#   scripts/check_aarch64.sh        (honours CARGO_TARGET_DIR; builds in $target/aarch64-qemu)
#
# Toolchain and packages: scripts/aarch64_env.sh (installs them with apt-get when missing). Not
# part of .ci/run (its time and last result: docs/performance.md, "aarch64").
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/aarch64_env.sh
source scripts/aarch64_env.sh
aarch64_setup

target="${CARGO_TARGET_DIR:-target}"
case "$target" in /*) ;; *) target="$PWD/$target" ;; esac
log="$target/aarch64-qemu/test.log"
mkdir -p "$target/aarch64-qemu"
started=$(date +%s)

# The code behind cfg(target_arch = "aarch64") is linted only here (CI's clippy is x86_64's).
echo "== cargo clippy --lib --tests --no-default-features --target $AARCH64_TRIPLE"
PATH="/usr/bin:$PATH" CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$target/aarch64-qemu" \
  "$AARCH64_CARGO" clippy --locked --lib --tests --no-default-features --target "$AARCH64_TRIPLE" \
  -- -D warnings

echo "== cargo test --lib --no-default-features --target $AARCH64_TRIPLE (under qemu-aarch64)"
set +e
CARGO_INCREMENTAL=0 CARGO_TARGET_DIR="$target/aarch64-qemu" \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER="$AARCH64_LINKER" \
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$AARCH64_RUNNER" \
  "$AARCH64_CARGO" test --locked --lib \
  --no-default-features --target "$AARCH64_TRIPLE" \
  -- simd::tests scan::stats dump::values compare::metrics 2>&1 | tee "$log"
code=${PIPESTATUS[0]}
set -e
[ "$code" = 0 ] || { echo "check_aarch64: the tests failed (exit $code)" >&2; exit 1; }
if grep -q 'SKIPPED' "$log"; then
  echo "check_aarch64: a kernel test found no vector path under qemu:" >&2
  grep 'SKIPPED' "$log" >&2
  exit 1
fi
grep -q '^test .*vector.* \.\.\. ok$' "$log" || {
  echo "check_aarch64: no vector kernel test ran" >&2
  exit 1
}
echo "check_aarch64: OK in $(($(date +%s) - started)) s"
