#!/usr/bin/env bash
# The run_triage.sh contract, transcribed from the text of issue 32 only (not from npgx's Rust):
# the independent reference `npgx triage steps` is tested against (tests/it/triage_steps.rs).
#
#   run_triage_contract.sh ROOT CMD_TEMPLATE
#
# ROOT must exist and hold scripts/ with the agent's step scripts step1-eager.py,
# step2-compile-eager.py, step3-compile-aot_eager.py, step4-npugraph_ex-force_eager.py,
# step5-npugraph_ex.py (a missing one is skipped, not a failure). CMD_TEMPLATE must contain
# {SCRIPT}, replaced by the step script's path; the command runs under `bash -c`, stdout and
# stderr into one file. Every step gets ASCEND_PROCESS_LOG_PATH=<step>/ascend_plog,
# ASCEND_GLOBAL_LOG_LEVEL=1, ASCEND_SLOG_PRINT_TO_STDOUT=0; steps 1-3 also TORCH_LOGS=+all;
# steps 4-5 TORCH_COMPILE_DEBUG=1 and TORCH_COMPILE_DEBUG_DIR=<step>/torch_compile_debug.
# Writes env.txt (torch, torch_npu, torchair versions, CANN's version.cfg), per step
# <step>/stdout_stderr.log, <step>/ascend_plog/, <step>/torch_compile_debug/ (steps 4-5),
# <step>/SUCCESS, first_failure.txt ("<step> exit_code=<n>"), warnings.txt (missing or empty log
# or plog dir); stops at the first failure. Exit: 0 all passed or all missing, 1-5 the first
# failing step, 64 bad arguments.
set -u

usage() {
    echo "usage: $0 ROOT CMD_TEMPLATE" >&2
    exit 64
}

[ "$#" -eq 2 ] || usage
root=$1
template=$2
[ -d "$root" ] || { echo "$0: ROOT $root does not exist" >&2; exit 64; }
[ -d "$root/scripts" ] || { echo "$0: $root/scripts/ does not exist" >&2; exit 64; }
case $template in
    *'{SCRIPT}'*) ;;
    *) echo "$0: CMD_TEMPLATE lacks {SCRIPT}" >&2; exit 64 ;;
esac

python=${PYTHON:-python3}
{
    for mod in torch torch_npu torchair; do
        "$python" -c "import $mod; print('$mod', $mod.__version__)" 2>&1 || true
    done
    cfg=/usr/local/Ascend/ascend-toolkit/latest/version.cfg
    if [ -f "$cfg" ]; then cat "$cfg"; else echo "CANN version.cfg not found: $cfg"; fi
} > "$root/env.txt"

number=0
for step in step1-eager step2-compile-eager step3-compile-aot_eager \
            step4-npugraph_ex-force_eager step5-npugraph_ex; do
    number=$((number + 1))
    script=$root/scripts/$step.py
    [ -f "$script" ] || continue
    dir=$root/$step
    mkdir -p "$dir/ascend_plog"
    cmd=${template//'{SCRIPT}'/$script}
    if [ "$number" -le 3 ]; then
        TORCH_LOGS=+all \
        ASCEND_PROCESS_LOG_PATH=$dir/ascend_plog ASCEND_GLOBAL_LOG_LEVEL=1 \
        ASCEND_SLOG_PRINT_TO_STDOUT=0 \
            bash -c "$cmd" > "$dir/stdout_stderr.log" 2>&1
    else
        mkdir -p "$dir/torch_compile_debug"
        TORCH_COMPILE_DEBUG=1 TORCH_COMPILE_DEBUG_DIR=$dir/torch_compile_debug \
        ASCEND_PROCESS_LOG_PATH=$dir/ascend_plog ASCEND_GLOBAL_LOG_LEVEL=1 \
        ASCEND_SLOG_PRINT_TO_STDOUT=0 \
            bash -c "$cmd" > "$dir/stdout_stderr.log" 2>&1
    fi
    code=$?
    [ -s "$dir/stdout_stderr.log" ] || echo "$step stdout_stderr.log missing or empty" >> "$root/warnings.txt"
    if [ -z "$(ls -A "$dir/ascend_plog" 2>/dev/null)" ]; then
        echo "$step ascend_plog missing or empty" >> "$root/warnings.txt"
    fi
    if [ "$code" -eq 0 ]; then
        touch "$dir/SUCCESS"
    else
        echo "$step exit_code=$code" > "$root/first_failure.txt"
        exit "$number"
    fi
done
exit 0
