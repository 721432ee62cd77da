#!/usr/bin/env python3
"""Independent writer of triage trees as `run_triage.sh` leaves them, for the skills' commands.

Written from the contract of CANNBot's `run_triage.sh` (shared/specs/triage-and-repro.md §1.1,
§1.2), never from the Rust code under test: `env.txt`, `scripts/`, one directory per step that
ran with `stdout_stderr.log` and `ascend_plog/` (steps 4-5 also `torch_compile_debug/`), a
`SUCCESS` marker per passing step, `first_failure.txt` (`<step> exit_code=<n>`) and
`warnings.txt` (`<step> ascend_plog missing or empty`). The failing step's screen log is a
verbatim sample from ../shared/samples/triage/ (read at generation time, never committed).

Trees (under OUT/):
  step5-runtime/   steps 1-4 passed, step 5 failed with sample 23 (an AI Core execution timeout):
                   a runtime error that appears only with force_eager=False;
  step2-compile/   step 1 passed, step 2 (backend="eager") failed with sample 01 (Dynamo
                   Unsupported): a compile error;
  incomplete/      as step5-runtime, but step 3 lost its ascend_plog/ and step 4 its
                   stdout_stderr.log: evidence that is not complete (re-run those steps).
and OUT/weak-evidence.txt: pasted output whose only error is a traceback without its exception
line and without frames of a known phase — too weak to route.

Usage: gen_triage_trees_fixtures.py --out DIR
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent.parent.parent / "shared" / "samples" / "triage"
STEPS = [
    "step1-eager",
    "step2-compile-eager",
    "step3-compile-aot_eager",
    "step4-npugraph_ex-force_eager",
    "step5-npugraph_ex",
]
# run_triage.sh's env.txt: `print('torch', torch.__version__)` per package (a failed import
# leaves its traceback), then CANN's version.cfg under a header.
ENV = (
    "torch 2.7.1\n"
    "torch_npu 2.7.1.post2\n"
    "Traceback (most recent call last):\n"
    '  File "<string>", line 1, in <module>\n'
    "ModuleNotFoundError: No module named 'torchair'\n"
    "--- CANN version.cfg ---\n"
    "runtime_running_version=[7.3.0.1.231:8.0.RC2]\n"
    "compiler_running_version=[7.3.0.1.231:8.0.RC2]\n"
    "toolkit_running_version=[7.3.0.1.231:8.0.RC2]\n"
)


def tree(root: Path, failing: int, log: str) -> None:
    """Steps 1..failing ran; the ones before `failing` passed, `failing` failed with `log`."""
    (root / "scripts").mkdir(parents=True)
    (root / "env.txt").write_text(ENV, encoding="utf-8")
    warnings = []
    for n, step in enumerate(STEPS[:failing], 1):
        (root / "scripts" / f"{step}.py").write_text("# step script\n", encoding="utf-8")
        d = root / step
        (d / "ascend_plog").mkdir(parents=True)
        warnings.append(f"{step} ascend_plog missing or empty")
        if n >= 4:
            run = d / "torch_compile_debug" / "torch_compile_debug" / f"run_2026_01_01_00_00_0{n}_000000-pid_{100 + n}"
            (run / "npugraph_ex").mkdir(parents=True)
        if n < failing:
            (d / "stdout_stderr.log").write_text(f"{step}: ok\n", encoding="utf-8")
            (d / "SUCCESS").write_text("", encoding="utf-8")
        else:
            (d / "stdout_stderr.log").write_text(log, encoding="utf-8")
            (root / "first_failure.txt").write_text(f"{step} exit_code=1\n", encoding="utf-8")
    (root / "warnings.txt").write_text("".join(w + "\n" for w in warnings), encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    out = ap.parse_args().out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    runtime = (SAMPLES / "23-aicore-execution-timeout-event-query.txt").read_text(encoding="utf-8")
    compile_ = (SAMPLES / "01-dynamo-unsupported-fake-tensor-custom-op.txt").read_text(encoding="utf-8")
    tree(out / "step5-runtime", 5, runtime)
    tree(out / "step2-compile", 2, compile_)
    tree(out / "incomplete", 5, runtime)
    shutil.rmtree(out / "incomplete" / "step3-compile-aot_eager" / "ascend_plog")
    (out / "incomplete" / "step4-npugraph_ex-force_eager" / "stdout_stderr.log").unlink()
    with (out / "incomplete" / "warnings.txt").open("a", encoding="utf-8") as w:
        w.write("step4-npugraph_ex-force_eager stdout_stderr.log missing or empty\n")
    (out / "weak-evidence.txt").write_text(
        "Traceback (most recent call last):\n"
        '  File "/home/user/serve.py", line 88, in <module>\n'
        "    main()\n"
        '  File "/home/user/serve.py", line 61, in main\n'
        "    raise\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
