#!/usr/bin/env bash
# The slow checks that scripts/test.sh (cold CI, 30-minute budget on 2 cores) leaves out, run on
# their own when time allows; their last result is in docs/performance.md ("The test suite").
#
#   scripts/test_slow.sh              the FX node search tests (tests/it/triage_nodes.rs): five
#                                     node searches with real PyTorch on CPU and the labelled
#                                     npugraph_ex test double, about 75 Python processes
#
# Also separate, each with its own script: scripts/check_aarch64.sh (qemu), scripts/check_wheel.sh
# (manylinux wheels), scripts/fuzz.sh (long fuzzing), the benchmarks scripts/bench_*.sh.
# The main suite keeps one node search (tests/it/triage.rs, the accuracy bisect that names the FX
# node) and the skills' node-search blocks, so the search is never untested in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/test_venv.sh
. scripts/test_venv.sh

echo "== cargo test --test it triage_nodes:: (the FX node search, real PyTorch on CPU)"
start=$(date +%s)
cargo test --locked --test it triage_nodes:: -- --include-ignored
echo "== slow checks passed in $(( $(date +%s) - start )) s"
