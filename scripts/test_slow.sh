#!/usr/bin/env bash
# The slow checks that scripts/test.sh (cold CI, 30-minute budget on 2 cores) leaves out, run on
# their own when time allows; their last result is in docs/performance.md ("The test suite").
#
#   scripts/test_slow.sh              the FX node search tests (tests/it/triage_nodes.rs): five
#                                     node searches with real PyTorch on CPU and the labelled
#                                     npugraph_ex test double, about 75 Python processes; and
#                                     two option bisects (tests/it/triage_slow.rs: pairs, not
#                                     isolated), about 15 more, and a script nondeterministic in
#                                     eager (6); the search logic and the rules they drive are
#                                     unit tested in CI (src/triage/bisect, src/triage/nodes.rs,
#                                     src/triage/analyze.rs)
#
# Also separate, each with its own script: scripts/check_aarch64.sh (qemu), scripts/check_wheel.sh
# (manylinux wheels), scripts/fuzz.sh (long fuzzing), the benchmarks scripts/bench_*.sh.
# The main suite keeps one node search (tests/it/triage.rs, the accuracy bisect that names the FX
# node) and the skills' node-search blocks, so the search is never untested in CI.
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/test_venv.sh
. scripts/test_venv.sh

echo "== cargo test --test it triage_nodes:: triage_slow:: (the FX node search, two option bisects and eager nondeterminism, real PyTorch on CPU)"
start=$(date +%s)
cargo test --locked --test it -- --include-ignored triage_nodes:: triage_slow::
echo "== slow checks passed in $(( $(date +%s) - start )) s"
