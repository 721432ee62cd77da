"""Independent writer of the launcher fixtures: two ranks' dump trees for the cluster recipes of
docs/cluster.md run for real (tests/it/cluster.rs), and a tree large enough to be killed while
it is scanned.

Writes, without any `worldsize{W}_global_rank{R}` level (the rank comes from the launcher):

    OUT/ranks/0/{time}/0/ge_default_{time}_1/1/0/   rank 0: the program of gen_cluster_fixtures.py,
        a NaN born in RealDiv before collective 1 — scanned in a blink;
    OUT/ranks/1/{time}/1/ge_default_{time}_1/1/0/   rank 1: the same program, the NaN received
        through collective 1, then FILLER clean operators (hard links to one dump) — seconds of
        scanning;
    OUT/expected.json                               the truth the tests assert.

GE v2 dumps written with the helpers of gen_dump_fixtures.py (spec `shared/specs/dump-data.md`),
never by the Rust code under test.

Usage:
    gen_launch_fixtures.py --out DIR [--filler N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_cluster_fixtures import BORN_AT, PROGRAM, THROUGH, tensor  # noqa: E402
from gen_dump_fixtures import T0, dump_header, sanitise, t, v2_bytes, vals  # noqa: E402

WORLD = 2
ORIGIN = 0
FILLER = 60_000
FP16 = 2


def write_rank(root: Path, templates: Path, rank: int, filler: int) -> Path:
    time = f"2024112112000{rank}"
    d = root / str(rank) / time / str(rank) / f"ge_default_{time}_1" / "1" / "0"
    d.mkdir(parents=True)
    base = T0 + rank * 1_000
    for pos, (op_type, op_name, _) in enumerate(PROGRAM):
        seed = rank * 100 + pos
        bad = pos > BORN_AT or (rank == ORIGIN and pos == BORN_AT)
        bad_in = pos > BORN_AT + 1 or (rank == ORIGIN and pos == BORN_AT + 1)
        inputs = [tensor(seed, bad_in), tensor(seed + 50, False)]
        outputs = [tensor(seed + 70, bad)]
        ts = base + 100 * (pos + 1)
        name = f"{op_type}.{sanitise(op_name)}.{pos + 10}.2.{ts}"
        (d / name).write_bytes(v2_bytes(dump_header(op_name, ts, inputs, outputs), inputs, outputs))
    if filler:
        ins, outs = [t(vals(16, dt=FP16, seed=7), FP16)], [t(vals(16, dt=FP16, seed=8), FP16)]
        src = templates / f"filler{rank}"
        src.write_bytes(v2_bytes(dump_header("model/tail/Add", T0, ins, outs), ins, outs))
        first = base + 100 * (len(PROGRAM) + 1)
        for k in range(filler):
            os.link(src, d / f"Add.model_tail_Add_{k}.{k + 100}.2.{first + k}")
    return d


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--filler", type=int, default=FILLER, help="clean operators after rank 1's program")
    args = ap.parse_args(argv)
    if args.out.exists():
        shutil.rmtree(args.out)
    templates = args.out / "templates"
    templates.mkdir(parents=True)
    for rank in range(WORLD):
        write_rank(args.out / "ranks", templates, rank, args.filler if rank == 1 else 0)
    expected = {
        "world_size": WORLD,
        "origin": ORIGIN,
        "before_collective": THROUGH,
        "received": [r for r in range(WORLD) if r != ORIGIN],
        "origin_first": {"position": BORN_AT, "op_name": PROGRAM[BORN_AT][1]},
        "tensors": {"0": 3 * len(PROGRAM), "1": 3 * len(PROGRAM) + 2 * args.filler},
    }
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True) + "\n")
    print(f"launch: rank 0 {len(PROGRAM)} dumps, rank 1 {len(PROGRAM) + args.filler} under {args.out / 'ranks'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
