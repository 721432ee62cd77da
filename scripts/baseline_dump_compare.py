#!/usr/bin/env python3
"""Python + numpy baseline for `scripts/bench_dump_compare.sh`: the comparison as users write it.

Walks GOLDEN and TARGET (GE v2 dumps in a torchair layout), pairs files by their path below the
model directory with the run stamp dropped and the op name from the file name, reads each file,
parses the u64 header length and the protobuf `DumpData` header (official protobuf runtime, the
fixture writer's schema), `np.frombuffer`s every input and output into float64 and computes the
metrics of docs/dump-compare.md with numpy: cosine, max/mean abs, max/mean rel, RMSE, accumulated
relative error, relative Euclidean distance, KL divergence, std ratio, share of rel > 1e-3 / 5e-3
and NaN/Inf on one side. Prints one JSON line with the pair count, failures and the sum of cosines
so the benchmark can check it agrees with npgx.

Usage: baseline_dump_compare.py GOLDEN TARGET
"""

import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dump_fixtures import MSG, NP_TYPES  # noqa: E402  (the same schema, typed in from the spec)

DumpData = MSG["packed"]["DumpData"]
EPS = np.finfo(np.float64).eps


def tensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (hlen,) = struct.unpack_from("<Q", data, 0)
    dd = DumpData()
    dd.ParseFromString(data[8:8 + hlen])
    off = 8 + hlen
    out = {}
    for io, lst in (("input", dd.input), ("output", dd.output)):
        for i, t in enumerate(lst):
            dtype = NP_TYPES[t.data_type]
            out[(io, i)] = np.frombuffer(data, dtype, t.size // dtype.itemsize, off).astype(np.float64)
            off += t.size
    return out


def metrics(g, t):
    both = np.isfinite(g) & np.isfinite(t)
    same = (np.isnan(g) & np.isnan(t)) | (np.isinf(g) & (g == t))
    one_side = int((~both & ~same).sum())
    g, t = g[both], t[both]
    d = np.abs(t - g)
    rel = d / (np.abs(g) + EPS)
    ng, nt = np.linalg.norm(g), np.linalg.norm(t)
    cos = 1.0 if ng == 0 and nt == 0 else 0.0 if ng == 0 or nt == 0 else float(np.dot(g, t) / (ng * nt))
    sg, st = np.abs(g).sum(), np.abs(t).sum()
    p, q = np.abs(g) / sg, np.abs(t) / st
    m = p > 0
    kl = float(np.sum(p[m] * np.log(p[m] / q[m]))) if np.all(q[m] > 0) else None
    return {
        "cosine": cos, "max_abs": float(d.max()), "mean_abs": float(d.mean()),
        "rmse": float(np.sqrt(np.mean(d * d))), "max_rel": float(rel.max()), "mean_rel": float(rel.mean()),
        "acc_rel": float(d.sum() / (sg + EPS)), "rel_euclidean": float(np.sqrt((d * d).sum()) / (ng + EPS)),
        "kl_div": kl, "std_ratio": float(t.std() / g.std()) if g.std() > 0 else None,
        "rel_gt_0_001": float((rel > 1e-3).mean()), "rel_gt_0_005": float((rel > 5e-3).mean()),
        "nan_inf_one_side": one_side,
    }


def key(root, path):
    rel = os.path.relpath(path, root).split(os.sep)
    # drop the time directory and the run stamp of ge_default_<stamp>_<n>; the op name from the file
    model = rel[-4].rsplit("_", 1)[-1] if rel[-4].startswith("ge_default_") else rel[-4]
    op = rel[-1].split(".")[1]
    return (model, rel[-2], op)


def files(root):
    for dirpath, _dirs, names in os.walk(root):
        for name in names:
            if not name.endswith((".json", ".csv", ".npy", ".pt", ".txt")):
                yield os.path.join(dirpath, name)


def compare(golden, target):
    gmap = {key(golden, p): p for p in files(golden)}
    res = {"pairs": 0, "failed": 0, "cosine_sum": 0.0}
    for p in sorted(files(target)):
        k = key(target, p)
        if k not in gmap:
            continue
        gt, tt = tensors(gmap[k]), tensors(p)
        for tk, tv in tt.items():
            if tk not in gt:
                continue
            m = metrics(gt[tk], tv)
            res["pairs"] += 1
            res["cosine_sum"] += m["cosine"]
            res["failed"] += not (m["nan_inf_one_side"] == 0 and m["cosine"] >= 0.99 and m["max_rel"] < 0.01)
    return res


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    print(json.dumps(compare(sys.argv[1], sys.argv[2])))
