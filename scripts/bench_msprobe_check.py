#!/usr/bin/env python3
"""Set npgx dump-compare's JSON beside msprobe compare's CSV on the same pair (standard library only).

    bench_msprobe_check.py MSPROBE_CSV NPGX_JSON

Prints one line per metric: how many of msprobe's rows npgx paired under the same name and the
largest difference between the two figures, then `metrics: equal` when every paired figure is
within 1e-6 (relative to max(1, |msprobe|)), `metrics: DIFFER` otherwise, `metrics: not compared`
when npgx's output could not be read or names no pair as msprobe does. Exit 0 unless the inputs
cannot be read at all.

msprobe names a row `{call}.{io}.{slot}` (`Torch.relu.1.forward.output.0`); an npgx pair is
looked up by its `msprobe_name` field when it has one, else by `{op_name}.{io}.{index}`. Metric
values are looked up in the pair's `msprobe` object (npgx's figures computed msprobe's way), else
its `metrics` object, under msprobe's column name or one of the names below; msprobe's
non-numeric cells (`unsupported`, `N/A`, `Nan`) are skipped.
"""

import csv
import json
import math
import sys

METRICS = {
    "Cosine": ("cosine",),
    "EucDist": ("euc_dist", "eucdist", "euclidean"),
    "MaxAbsErr": ("max_abs_err", "max_abs"),
    "MaxRelativeErr": ("max_relative_err", "max_rel"),
    "One Thousandth Err Ratio": ("one_thousandth_err_ratio", "rel_lt_0_001", "within_0_001"),
    "Five Thousandths Err Ratio": ("five_thousandths_err_ratio", "rel_lt_0_005", "within_0_005"),
}
IO_SPELLINGS = {"parameter": "parameters", "param": "parameters", "inputs": "input", "outputs": "output"}


def number(cell):
    try:
        v = float(str(cell).strip())
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def npgx_names(pair):
    if pair.get("msprobe_name"):
        yield pair["msprobe_name"]
    op, io, index = pair.get("op_name"), pair.get("io"), pair.get("index")
    if op is not None and io is not None and index is not None:
        yield f"{op}.{io}.{index}"
        yield f"{op}.{IO_SPELLINGS.get(io, io)}.{index}"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1], newline="") as f:
        rows = {r["NPU Name"]: r for r in csv.DictReader(f)}
    try:
        with open(argv[2]) as f:
            doc = json.load(f)
        pairs = doc.get("pairs") or []
    except (OSError, ValueError, AttributeError) as e:
        print(f"metrics: not compared (npgx output unreadable: {e})")
        return 0
    by_name = {}
    for p in pairs:
        for n in npgx_names(p):
            if n in rows:
                by_name[n] = p
                break
    tensor_rows = sum(1 for r in rows.values() if number(r.get("Cosine")) is not None
                      or number(r.get("MaxAbsErr")) is not None)
    print(f"msprobe rows {len(rows)} ({tensor_rows} with numeric metrics), npgx pairs {len(pairs)}, "
          f"paired by name {len(by_name)}")
    if not by_name:
        print("metrics: not compared (no npgx pair carries msprobe's row names)")
        return 0
    differ = compared = 0
    for col, keys in METRICS.items():
        n = worst = 0
        missing = 0
        for name, p in by_name.items():
            want = number(rows[name].get(col))
            if want is None:
                continue
            got = None
            for metrics in (p.get("msprobe") or {}, p.get("metrics") or {}):
                key = next((k for k in (col,) + keys if k in metrics), None)
                if key:
                    got = number(metrics[key])
                    break
            if got is None:
                missing += 1
                continue
            n += 1
            err = abs(got - want) / max(1.0, abs(want))
            worst = max(worst, err)
            if err > 1e-6:
                differ += 1
        compared += n
        print(f"  {col:28s} compared {n:6d}  missing in npgx {missing:6d}  max rel. difference {worst:.3g}")
    if compared == 0:
        print("metrics: not compared (npgx's pairs carry none of msprobe's metrics)")
    else:
        print("metrics: equal" if differ == 0 else f"metrics: DIFFER ({differ} figures beyond 1e-6)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
