#!/usr/bin/env python3
"""Python + numpy baseline for `scripts/bench_dump_scan.sh`: what a user writes today.

For every v2 dump file under ROOT: read the file, parse the u64 header length and the protobuf
`DumpData` header (official protobuf runtime, same descriptor as the fixture writer), then for
each input and output block `np.frombuffer` it and count NaN, +Inf, -Inf and (fp16) |x| >= 65504.
Prints one JSON line with the totals, so the benchmark can check it agrees with npgx.

Usage: baseline_dump_scan.py ROOT
"""

import json
import os
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_dump_fixtures import MSG, NP_TYPES  # noqa: E402  (the same schema, typed in from the spec)

DumpData = MSG["packed"]["DumpData"]


def scan(root: str) -> dict:
    totals = {"files": 0, "tensors": 0, "bytes": 0, "anomalous_tensors": 0, "nan": 0, "inf": 0,
              "overflow": 0}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith((".json", ".csv", ".npy", ".pt", ".txt")):
                continue
            with open(os.path.join(dirpath, name), "rb") as f:
                data = f.read()
            (hlen,) = struct.unpack_from("<Q", data, 0)
            dd = DumpData()
            dd.ParseFromString(data[8:8 + hlen])
            off = 8 + hlen
            totals["files"] += 1
            for t in list(dd.input) + list(dd.output):
                dtype = NP_TYPES[t.data_type]
                a = np.frombuffer(data, dtype, t.size // dtype.itemsize, off)
                off += t.size
                nan = int(np.isnan(a).sum())
                inf = int(np.isinf(a).sum())
                ovf = int((np.abs(a[np.isfinite(a)]) >= 65504).sum()) if t.data_type == 2 else 0
                totals["tensors"] += 1
                totals["bytes"] += t.size
                totals["nan"] += nan
                totals["inf"] += inf
                totals["overflow"] += ovf
                totals["anomalous_tensors"] += bool(nan or inf or ovf)
    return totals


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    print(json.dumps(scan(sys.argv[1])))
