"""Independent writer of the cluster fixtures for `npgx merge` (docs/cluster.md).

Writes OUT/ranks64/root/worldsize64_global_rank{r}/{time}/{device}/{model}/1/{step}/ for 64 ranks:
GE v2 dumps written with the helpers of gen_dump_fixtures.py (spec `shared/specs/dump-data.md`,
never the Rust code under test). Every rank runs the same program per step:

    MatMul, Add, HcomAllReduce (collective 0), Mul, RealDiv, HcomAllReduce (collective 1),
    Softmax, HcomAllReduce (collective 2), Cast

In step 0 a NaN is born on rank ORIGIN in RealDiv (clean inputs), before collective 1; collective
1 hands it to every rank (clean inputs, NaN outputs), and everything after it is NaN everywhere.
Rank SKEWED's clock runs minutes behind: its dump timestamps are SKEW_US earlier, so ordering the
ranks' first anomalies by wall clock would name it instead of ORIGIN. Step 1 is clean.

OUT/ranks64/expected.json holds the truth the test asserts.

Usage:
    gen_cluster_fixtures.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_dump_fixtures import NAN, T0, dump_header, sanitise, t, v2_bytes, vals  # noqa: E402

WORLD = 64
ORIGIN = 37
SKEWED = 5
SKEW_US = 5 * 60 * 1_000_000   # five minutes
MODEL = "ge_default_{time}_1"   # the default GE graph name carries the process start time
FP32 = 1

# (op_type, op_name, is_collective)
PROGRAM = [
    ("MatMul", "model/layer0/MatMul", False),
    ("Add", "model/layer0/Add", False),
    ("HcomAllReduce", "hcom_allreduce_0", True),
    ("Mul", "model/layer1/Mul", False),
    ("RealDiv", "model/layer1/RealDiv", False),
    ("HcomAllReduce", "hcom_allreduce_1", True),
    ("Softmax", "model/layer1/Softmax", False),
    ("HcomAllReduce", "hcom_allreduce_2", True),
    ("Cast", "model/layer2/Cast", False),
]
BORN_AT = 4          # RealDiv on ORIGIN
THROUGH = 1          # the collective that carries it to every rank


def tensor(seed: int, nan: bool):
    return t(vals(8, dt=FP32, seed=seed, plant={3: NAN} if nan else None), FP32)


def write_rank(root: Path, rank: int) -> None:
    time = f"2024112112{rank // 60:02d}{rank % 60:02d}"   # each process starts a second apart
    model = sanitise(MODEL.format(time=time))
    skew = SKEW_US if rank == SKEWED else 0
    for step in (0, 1):
        d = root / f"worldsize{WORLD}_global_rank{rank}" / time / str(rank % 8) / model / "1" / str(step)
        d.mkdir(parents=True, exist_ok=True)
        # ranks start 1 ms apart; the skewed rank's clock is minutes behind
        base = T0 + step * 10_000_000 + rank * 1_000 - skew
        for pos, (op_type, op_name, _) in enumerate(PROGRAM):
            seed = (rank * 2 + step) * 100 + pos
            # outputs: NaN from the birth on the origin, from collective THROUGH on every rank;
            # inputs: NaN after the birth on the origin, after collective THROUGH everywhere
            bad = step == 0 and (pos > BORN_AT or (rank == ORIGIN and pos == BORN_AT))
            bad_in = step == 0 and (pos > BORN_AT + 1 or (rank == ORIGIN and pos == BORN_AT + 1))
            inputs = [tensor(seed, bad_in), tensor(seed + 50, False)]
            outputs = [tensor(seed + 70, bad)]
            ts = base + 100 * (pos + 1)
            dd = dump_header(op_name, ts, inputs, outputs)
            name = f"{op_type}.{sanitise(op_name)}.{pos + 10}.2.{ts}"
            (d / name).write_bytes(v2_bytes(dd, inputs, outputs))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    args = ap.parse_args(argv)
    case = args.out / "ranks64"
    if case.exists():
        shutil.rmtree(case)
    root = case / "root"
    for rank in range(WORLD):
        write_rank(root, rank)
    collectives_before = sum(1 for _, _, c in PROGRAM[:BORN_AT] if c)
    expected = {
        "world_size": WORLD,
        "steps": [0, 1],
        "anomalous_step": 0,
        "origin": ORIGIN,
        "skewed_rank": SKEWED,
        "before_collective": collectives_before,
        "received_after_collective": THROUGH,
        "received": [r for r in range(WORLD) if r != ORIGIN],
        "collectives": sum(1 for _, _, c in PROGRAM if c),
        "origin_first": {"position": BORN_AT, "op_name": PROGRAM[BORN_AT][1], "io": "output",
                         "index": 0, "kind": "nan"},
        "received_first": {"position": BORN_AT + 1, "op_name": PROGRAM[BORN_AT + 1][1],
                           "io": "output", "collective": THROUGH},
        "tensors_per_rank_step": 3 * len(PROGRAM),
    }
    assert expected["before_collective"] == THROUGH
    (case / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"ranks64: {WORLD} ranks x 2 steps x {len(PROGRAM)} dumps under {root}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
