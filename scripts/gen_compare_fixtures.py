#!/usr/bin/env python3
"""Independent writer of `npgx dump-compare` / `npgx dump-convert` fixtures and their truth.

Everything here follows the written contract of the command (`docs/dump-compare.md`: matching,
formulas, thresholds) and the dump specification (`shared/specs/dump-data.md`), never the Rust
code under test. Dump bytes are written with the helpers of `gen_dump_fixtures.py` (official
protobuf runtime, numpy, ml_dtypes, torch.save), imported as a module.

For each compare case `OUT/<case>/` holds two trees (`golden/`, `target/`, or other names given in
`truth.json`) and `truth.json`: one entry per command run (`runs`), each with the arguments, the
exit code and every value the engine must report — metrics computed here with numpy in float64
exactly per the contract formulas (sums with `math.fsum`, pairwise for large arrays), matching, first divergence, origin,
unmatched tensors and errors. For each convert case `OUT/convert_<name>/` holds `tree/`,
`expected/` (the `.npy` files dump-convert must write, by `np.save`) and `truth.json`.

Conventions of truth.json: file paths are relative to the tree root the run passes; a key absent
from a record is not checked; `*_any_of` lists the values the contract allows where it does not
decide one.

Usage: gen_compare_fixtures.py --out DIR      (deterministic: fixed seeds, fixed timestamps)
"""

from __future__ import annotations

import argparse
import json
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_dump_fixtures as g  # noqa: E402  (the independent dump writer: reused, not copied)

EPS = 2.220446049250313e-16
assert EPS == np.finfo(np.float64).eps
T0 = g.T0
FMT = g.FMT
DT_NAME = {1: "float32", 2: "float16", 27: "bfloat16", 12: "float64", 3: "int8", 4: "uint8",
           5: "int16", 6: "uint16", 7: "int32", 8: "int64", 9: "uint32", 10: "uint64", 11: "bool",
           34: "float8_e5m2", 35: "float8_e4m3fn"}
NP = g.NP_TYPES
METRICS = ("cosine", "max_abs", "max_rel", "mean_rel", "mean_abs", "rmse", "acc_rel", "rel_euclidean",
           "kl_div", "std_ratio", "rel_gt_0_001", "rel_gt_0_005")
WORST = {"cosine": False, "max_rel": True, "max_abs": True, "rmse": True}   # metric -> larger is worse
DEFAULT_THRESHOLDS = {"cosine": 0.99, "max_rel": 0.01}


# ---------------------------------------------------------------------------------------------
# Metrics (contract "Values and metrics"), float64, exactly rounded sums
# ---------------------------------------------------------------------------------------------

def fsum(a) -> float:
    """Exactly rounded sum (math.fsum); for large arrays numpy's pairwise float64 sum, whose error
    (~1e-16 * log2 n relative to the sum of magnitudes) is far below the 1e-9 the tests allow."""
    a = np.asarray(a, np.float64)
    return math.fsum(a.tolist()) if a.size <= 1 << 16 else float(np.sum(a))


def metrics(gold: np.ndarray, targ: np.ndarray) -> dict:
    gv = np.asarray(gold).astype(np.float64).ravel()
    tv = np.asarray(targ).astype(np.float64).ravel()
    assert gv.size == tv.size
    gnan, tnan = np.isnan(gv), np.isnan(tv)
    ginf, tinf = np.isinf(gv), np.isinf(tv)
    both = np.isfinite(gv) & np.isfinite(tv)
    same_special = (gnan & tnan) | (ginf & tinf & (gv == tv))
    m = {k: None for k in METRICS}
    m.update(golden_nan=int(gnan.sum()), golden_inf=int(ginf.sum()), target_nan=int(tnan.sum()),
             target_inf=int(tinf.sum()), nan_inf_one_side=int((~both & ~same_special).sum()))
    G, T = gv[both], tv[both]
    n = G.size
    if n == 0:
        return m
    d = T - G
    ad = np.abs(d)
    ng, nt = math.sqrt(fsum(G * G)), math.sqrt(fsum(T * T))
    if ng == 0 and nt == 0:
        cos = 1.0
    elif ng == 0 or nt == 0:
        cos = 0.0
    else:
        cos = fsum(G * T) / (ng * nt)
    rel = ad / (np.abs(G) + EPS)
    sg, st = fsum(np.abs(G)), fsum(np.abs(T))
    kl = None
    if sg != 0 and st != 0:
        P, Q = np.abs(G) / sg, np.abs(T) / st
        pos = P > 0
        if not np.any(Q[pos] == 0):
            kl = fsum(P[pos] * np.log(P[pos] / Q[pos]))

    def std(x):
        mean = fsum(x) / x.size
        return math.sqrt(fsum((x - mean) ** 2) / x.size)

    sdg, sdt = std(G), std(T)
    if sdg == 0:
        std_ratio = 1.0 if sdt == 0 else None
    else:
        std_ratio = sdt / sdg
    for thr in (0.001, 0.005):   # a value this close to a cut-off would make the count fragile
        close = rel[(rel > 0) & (np.abs(rel / thr - 1) < 1e-9)]
        assert close.size == 0, f"rel_i {close} too close to {thr}: pick another seed"
    m.update(cosine=cos, max_abs=float(ad.max()), max_rel=float(rel.max()), mean_rel=fsum(rel) / n,
             mean_abs=fsum(ad) / n, rmse=math.sqrt(fsum(d * d) / n), acc_rel=fsum(ad) / (sg + EPS),
             rel_euclidean=math.sqrt(fsum(d * d)) / (ng + EPS), kl_div=kl, std_ratio=std_ratio,
             rel_gt_0_001=int((rel > 0.001).sum()) / n, rel_gt_0_005=int((rel > 0.005).sum()) / n)
    return m


def verdict(m: dict, thr: dict) -> bool:
    for key, ok in (("cosine", lambda v: v >= thr["cosine"]), ("max_rel", lambda v: v < thr["max_rel"])):
        v = m[key]
        if v is not None:
            assert abs(v / thr[key] - 1) > 1e-7, f"{key} {v} too close to the threshold {thr[key]}"
            if not ok(v):
                return False
    return m["nan_inf_one_side"] == 0


# ---------------------------------------------------------------------------------------------
# Trees: what was written, op by op
# ---------------------------------------------------------------------------------------------

@dataclass
class TT:
    """One tensor as written: logical values (storage dtype), dtype code, file holding it."""
    arr: np.ndarray
    dt: int
    file: str


@dataclass
class OpRec:
    name: str                 # the match name: sanitised op name / FX node name / name from .npy
    op_type: str | None
    group: str
    order: tuple
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    count: int | None = None  # npugraph_ex call counter
    orig: list | None = None  # per output: (original op name, output index) or None


def tensor(arr, dt, fmt="ND", c0=None):
    """A g.Tensor holding `arr` (cast to dtype `dt`) on disk in device format `fmt`."""
    a = np.asarray(arr)
    if a.dtype != NP[dt]:
        a = a.astype(NP[dt])
    if fmt == "ND":
        return g.Tensor(a, dt)
    if fmt == "FRACTAL_NZ":
        dev = g.to_fractal_nz(a, c0 or 16)
    elif fmt == "NC1HWC0":
        dev = g.to_nc1hwc0(a, c0 or 16)
    elif fmt == "NDC1HWC0":
        dev = to_ndc1hwc0(a, c0 or 16)
    elif fmt == "FRACTAL_Z":
        dev = to_fractal_z(a, c0 or 16)
    else:
        raise ValueError(fmt)
    return g.Tensor(a, dt, fmt=FMT[fmt], raw=dev.tobytes(), shape=list(dev.shape), orig=list(a.shape))


def to_ndc1hwc0(a: np.ndarray, c0: int) -> np.ndarray:
    """NCDHW -> (N, D, C1, H, W, C0), spec §6."""
    n, c, d, h, w = a.shape
    c1 = -(-c // c0)
    p = np.zeros((n, c1 * c0, d, h, w), a.dtype)
    p[:, :c] = a
    return np.ascontiguousarray(p.reshape(n, c1, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))


def to_fractal_z(a: np.ndarray, c0: int) -> np.ndarray:
    """NCHW weights (groups 1) -> (C1*H*W, N1, 16, C0), spec §6:
    off = ((c/C0)*H*W + h*W + w)*(N1*16*C0) + n*C0 + c%C0."""
    n, c, h, w = a.shape
    c1, n1 = -(-c // c0), -(-n // 16)
    p = np.zeros((n1 * 16, c1 * c0, h, w), a.dtype)
    p[:n, :c] = a
    dev = p.reshape(n1 * 16, c1, c0, h, w).transpose(1, 3, 4, 0, 2)   # (C1, H, W, Np, C0)
    dev = np.ascontiguousarray(dev).reshape(c1 * h * w, n1, 16, c0)
    # spot-check the spec's index formula on a few elements
    flat = dev.ravel()
    for (nn, cc, hh, ww) in ((0, 0, 0, 0), (n - 1, c - 1, h - 1, w - 1), (n // 2, c // 2, h // 2, 0)):
        off = ((cc // c0) * h * w + hh * w + ww) * (n1 * 16 * c0) + nn * c0 + cc % c0
        assert flat[off] == a[nn, cc, hh, ww]
    return dev


def to_fractal_z_groups(a: np.ndarray, groups: int, k: int) -> np.ndarray:
    """NCHW weights of a grouped convolution (N = groups * cout) -> grouped FRACTAL_Z, spec §6
    (msaccucmp's convert_NCHW_to_FRACTAL_Z): cin = C, cout = N / groups,
    e = min(lcm(lcm(cin, K)/cin, lcm(cout, 16)/cout), groups), cin_opt = align(e*cin, K),
    cout_opt = align(e*cout, 16), c1 = cin_opt / K; device (ceil(groups/e)*c1*H*W, cout_opt/16, 16, K);
    NCHW (g*cout + n, c, h, w) at ci = (g % e)*cin + c, co = (g % e)*cout + n of block g // e.
    Element by element, straight from the formula."""
    n, cin, h, w = a.shape
    cout = n // groups
    assert cout * groups == n
    e = min(math.lcm(math.lcm(cin, k) // cin, math.lcm(cout, 16) // cout), groups)
    cin_opt = -(-(e * cin) // k) * k
    cout_opt = -(-(e * cout) // 16) * 16
    c1 = cin_opt // k
    g1 = -(-groups // e)
    dev = np.zeros(g1 * c1 * h * w * cout_opt * k, a.dtype)
    for g in range(groups):
        ev, blk = g % e, g // e
        for nn in range(cout):
            for c in range(cin):
                ci, co = ev * cin + c, ev * cout + nn
                for hh in range(h):
                    for ww in range(w):
                        off = ((((blk * c1 + ci // k) * h + hh) * w + ww) * cout_opt + co) * k + ci % k
                        assert dev[off] == 0
                        dev[off] = a[g * cout + nn, c, hh, ww]
    return dev.reshape(g1 * c1 * h * w, cout_opt // 16, 16, k)


# Every device format npgx converts, written from a logical tensor whose axes are in any order GE
# takes (spec §6): transpose to the format's canonical order, pad the padded axes with zeros, reshape
# and transpose — numpy only, the spec's index formulas checked on every element by
# check_device_offsets when the dump is written.

LAYOUT_ORDERS = {  # format -> the logical axis orders GE converts from, canonical first
    "NC1HWC0": ("NCHW", "NHWC", "HWCN"), "NC1HWC0_C04": ("NCHW", "NHWC", "HWCN"),
    "NDC1HWC0": ("NCDHW", "NDHWC", "DHWCN"), "FRACTAL_Z": ("NCHW", "NHWC", "HWCN"),
    "FRACTAL_Z_3D": ("NCDHW", "NDHWC", "DHWCN"), "C1HWNCoC0": ("NCHW", "NHWC", "HWCN"),
}


def _pad(a, axis, block):
    """`a` with axis `axis` padded with zeros to a multiple of `block`."""
    width = [(0, 0)] * a.ndim
    width[axis] = (0, -a.shape[axis] % block)
    return np.pad(a, width)


def to_layout(a: np.ndarray, fmt: str, order: str | None, c0: int) -> np.ndarray:
    """The device array of logical `a` (axes named by `order`) in `fmt` with C0 (FRACTAL_NZ: W0)
    `c0`; N0 and H0 are 16."""
    if fmt == "FRACTAL_NZ":
        return g.to_fractal_nz(a, c0)
    canonical = LAYOUT_ORDERS[fmt][0]
    x = a.transpose([order.index(ch) for ch in canonical])
    if fmt in ("NC1HWC0", "NC1HWC0_C04"):
        x = _pad(x, 1, c0)
        n, cp, h, w = x.shape
        return np.ascontiguousarray(x.reshape(n, cp // c0, c0, h, w).transpose(0, 1, 3, 4, 2))
    if fmt == "NDC1HWC0":
        x = _pad(x, 1, c0)
        n, cp, d, h, w = x.shape
        return np.ascontiguousarray(x.reshape(n, cp // c0, c0, d, h, w).transpose(0, 3, 1, 4, 5, 2))
    if fmt == "FRACTAL_Z":          # (C1*H*W, N1, 16, C0)
        x = _pad(_pad(x, 0, 16), 1, c0)
        npad, cp, h, w = x.shape
        dev = x.reshape(npad // 16, 16, cp // c0, c0, h, w).transpose(2, 4, 5, 0, 1, 3)
        return np.ascontiguousarray(dev).reshape(cp // c0 * h * w, npad // 16, 16, c0)
    if fmt == "FRACTAL_Z_3D":       # (D*C1*H*W, N1, 16, C0)
        x = _pad(_pad(x, 0, 16), 1, c0)
        npad, cp, d, h, w = x.shape
        dev = x.reshape(npad // 16, 16, cp // c0, c0, d, h, w).transpose(4, 2, 5, 6, 0, 1, 3)
        return np.ascontiguousarray(dev).reshape(d * (cp // c0) * h * w, npad // 16, 16, c0)
    if fmt == "C1HWNCoC0":          # (C1, H, W, N, Co, C0), Co = C0, values on the diagonal
        x = _pad(x, 1, c0)
        n, cp, h, w = x.shape
        blocks = x.reshape(n, cp // c0, c0, h, w).transpose(1, 3, 4, 0, 2)   # (C1, H, W, N, C0)
        dev = np.zeros(blocks.shape + (c0,), a.dtype)
        k = np.arange(c0)
        dev[..., k, k] = blocks
        return dev
    raise ValueError(fmt)


def layout_tensor(a: np.ndarray, dt: int, fmt: str, order: str | None, c0: int) -> g.Tensor:
    """A g.Tensor holding `a` in `fmt`, original_shape = a.shape. The shape must name one axis
    order only: no other order GE takes gives the same device shape."""
    dev = to_layout(a, fmt, order, c0)
    for other in LAYOUT_ORDERS.get(fmt, ()):
        if other != order:
            assert to_layout(np.zeros(a.shape, np.int8), fmt, other, c0).shape != dev.shape, \
                f"{fmt} {a.shape}: {order} and {other} give the same device shape"
    t = g.Tensor(a, dt, fmt=FMT[fmt], raw=dev.tobytes(), shape=list(dev.shape), orig=list(a.shape))
    t.order = order
    return t


LAYOUTS = [  # (format, logical axis order, logical shape): several per format, odd sizes included
    ("NC1HWC0", "NCHW", (2, 20, 3, 5)), ("NC1HWC0", "NHWC", (1, 4, 3, 17)),
    ("NC1HWC0", "HWCN", (3, 2, 33, 5)), ("NC1HWC0", "NCHW", (2, 32, 1, 1)),
    ("NC1HWC0_C04", "NCHW", (2, 3, 4, 6)),
    ("NDC1HWC0", "NCDHW", (1, 18, 2, 3, 3)), ("NDC1HWC0", "NDHWC", (2, 2, 3, 1, 7)),
    ("NDC1HWC0", "DHWCN", (2, 1, 2, 40, 3)),
    ("FRACTAL_Z", "NCHW", (20, 18, 3, 3)), ("FRACTAL_Z", "NHWC", (33, 2, 2, 5)),
    ("FRACTAL_Z", "HWCN", (1, 3, 17, 7)), ("FRACTAL_Z", "NCHW", (16, 64, 1, 1)),
    ("FRACTAL_Z_3D", "NCDHW", (18, 20, 2, 1, 3)), ("FRACTAL_Z_3D", "DHWCN", (2, 2, 1, 5, 33)),
    ("FRACTAL_Z_3D", "NDHWC", (3, 1, 2, 2, 17)),
    ("FRACTAL_NZ", None, (20, 35)), ("FRACTAL_NZ", None, (2, 17, 40)), ("FRACTAL_NZ", None, (2, 3, 5, 33)),
    ("FRACTAL_NZ", None, (37,)), ("FRACTAL_NZ", None, (32, 64)), ("FRACTAL_NZ", None, (1, 100)),
    ("C1HWNCoC0", "HWCN", (2, 3, 5, 2)), ("C1HWNCoC0", "NCHW", (3, 20, 2, 1)),
    ("C1HWNCoC0", "NHWC", (2, 1, 3, 17)),
]
LAYOUT_DTYPES = (2, 1, 3)   # fp16, fp32, int8


def layout_c0(fmt: str, dt: int) -> int:
    """GE's cube size: C0 (FRACTAL_NZ: W0) 16 for 2- and 4-byte types, 32 for int8; 4 for _C04."""
    return 4 if fmt == "NC1HWC0_C04" else 32 if NP[dt].itemsize == 1 else 16


def layout_values(r, shape, dt):
    """Random logical values: floats in [-2, 2), int8 in [-90, 90] (no max_rel of exactly 1e-2)."""
    if dt == 3:
        return r.integers(-90, 91, shape).astype(np.int8)
    return r.uniform(-2, 2, shape).astype(NP[dt])


def layout_perturb(a, r):
    """`a` with a relative difference of 1e-3 to 4e-3 (int8: -1, 0 or +1); an element whose relative
    difference lands on a cut-off of the metrics or the default threshold (1e-3, 5e-3, 1e-2) after
    rounding to the dtype is left equal, so no count or verdict is fragile."""
    if a.dtype == np.int8:
        return np.clip(a.astype(np.int16) + r.integers(-1, 2, a.shape), -90, 90).astype(np.int8)
    b = perturb(a, r, rel=2.5e-3, lo=0.4, hi=1.6)
    g64, t64 = a.astype(np.float64), b.astype(np.float64)
    rel = np.abs(t64 - g64) / (np.abs(g64) + EPS)
    fragile = np.zeros(a.shape, bool)
    for cut in (0.001, 0.005, 0.01):
        fragile |= np.abs(rel / cut - 1) < 1e-6
    b[fragile] = a[fragile]
    return b


def layout_name(fmt, order, shape, dt):
    return f"{fmt}_{order or 'ND'}_{'x'.join(map(str, shape))}_{DT_NAME[dt]}"


class Tree:
    def __init__(self, root: Path):
        self.root = root
        if root.exists():
            g._rmtree(root)
        root.mkdir(parents=True)
        self.ops: list[OpRec] = []
        self.errors: list[dict] = []

    def write(self, rel: str, data: bytes):
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)

    def ge(self, rel_dir, group, op_type, op_name, task, ts, ins=(), outs=(), framing="v2", orig=None,
           stream=1, dfx=None):
        """One GE/adump dump file; `orig` overrides the outputs' original_op (name, index)."""
        ins, outs = list(ins), list(outs)
        rel = f"{rel_dir}/{op_type}.{g.sanitise(op_name)}.{task}.{stream}.{ts}" if rel_dir else \
            f"{op_type}.{g.sanitise(op_name)}.{task}.{stream}.{ts}"
        if framing in ("v2", "v1"):
            dd = g.dump_header(op_name, ts, ins, outs, inline=framing == "v1",
                               version="2.0" if framing == "v2" else None, dfx=dfx)
            for i, o in enumerate(orig or []):
                if o is not None:
                    dd.output[i].original_op.name = o[0]
                    dd.output[i].original_op.output_index = o[1]
            data = g.v2_bytes(dd, ins, outs) if framing == "v2" else dd.SerializeToString(deterministic=True)
            if framing == "v2":
                self_check_v2(data, ins, outs)
        elif framing == "tlv":
            assert orig is None
            data = g.tlv_bytes(ins, outs, [op_name] * len(outs))
        else:
            raise ValueError(framing)
        self.write(rel, data)
        op = OpRec(g.sanitise(op_name), op_type, group, (ts, task, rel),
                   [TT(x.logical, x.dt, rel) for x in ins], [TT(x.logical, x.dt, rel) for x in outs],
                   orig=[None if o is None else (g.sanitise(o[0]), o[1]) for o in orig] if orig else None)
        self.ops.append(op)
        return op

    def pt(self, rel_dir, group, fx, dev, count, value):
        """One npugraph_ex `<fx>_device_<dev>_<count>.pt` (torch.save of a tensor or a tuple)."""
        import torch
        rel = f"{rel_dir}/{fx}_device_{dev}_{count}.pt"
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        torch.save(value, p)
        items = list(value) if isinstance(value, (tuple, list)) else [value]
        outs = []
        for x in items:
            dt = {torch.float32: 1, torch.float16: 2, torch.bfloat16: 27}[x.dtype]
            arr = x.float().contiguous().numpy().astype(NP[dt]) if dt == 27 else x.contiguous().numpy()
            outs.append(TT(arr, dt, rel))
        op = OpRec(fx, None, group, (count, rel), [], outs, count=count)
        self.ops.append(op)
        return op

    def npy_op(self, rel_dir, group, dump_name, ins=(), outs=()):
        """msaccucmp `convert` output: one `{dump}.{input|output}.{i}.npy` per tensor (ND)."""
        op_name = dump_name.split(".")[1]
        op = OpRec(op_name, dump_name.split(".")[0], group, (0, dump_name))
        for io, arrs, lst in (("input", ins, op.inputs), ("output", outs, op.outputs)):
            for i, (arr, dt) in enumerate(arrs):
                a = np.asarray(arr).astype(NP[dt])
                rel = f"{rel_dir}/{dump_name}.{io}.{i}.npy" if rel_dir else f"{dump_name}.{io}.{i}.npy"
                (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
                np.save(self.root / rel, a)
                lst.append(TT(a, dt, rel))
        self.ops.append(op)
        return op

    def npy_file(self, rel, group, arr, dt):
        """A bare `.npy` file (np.save of one array, a kernel test's golden or output): the
        output 0 of an op named by the file's stem."""
        a = np.asarray(arr).astype(NP[dt])
        (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
        np.save(self.root / rel, a)
        stem = Path(rel).name[: -len(".npy")]
        op = OpRec(stem, None, group, (0, stem))
        op.outputs.append(TT(a, dt, rel))
        self.ops.append(op)
        return op

    def fx_npy(self, rel_dir, group, node, target, stamp, ins=(), outs=()):
        """One torchair FX data dump call (`debug.data_dump.type = "npy"`, torchair fx_dumper.py):
        `{node}-{target}.INPUT.{i}[.{j}].{stamp}.npy` per argument (a list argument one file per
        element j), `{node}-{target}.OUTPUT.{i}.{stamp}.npy` per result; stamp = the call's
        %Y%m%d%H%M%S%f. The OpRec lists the inputs flattened in (i, j) order."""
        name = f"{node}-{target}"
        op = OpRec(name, None, group, (stamp, name))
        for io, arrs, lst in (("INPUT", ins, op.inputs), ("OUTPUT", outs, op.outputs)):
            for i, item in enumerate(arrs):
                parts = [(f"{i}.{j}", x) for j, x in enumerate(item)] if isinstance(item, list) else [(str(i), item)]
                for idx, (arr, dt) in parts:
                    a = np.asarray(arr).astype(NP[dt])
                    rel = f"{rel_dir}/{name}.{io}.{idx}.{stamp}.npy"
                    (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
                    np.save(self.root / rel, a)
                    lst.append(TT(a, dt, rel))
        self.ops.append(op)
        return op

    def error(self, rel, data: bytes, any_of: list[str], note: str):
        self.write(rel, data)
        self.errors.append({"path": rel, "any_of": any_of, "note": note})


def self_check_v2(data: bytes, ins, outs):
    (hlen,) = struct.unpack_from("<Q", data, 0)
    dd = g.MSG["packed"]["DumpData"]()
    assert dd.ParseFromString(data[8:8 + hlen]) == hlen
    off = 8 + hlen
    for x in ins + outs:
        assert data[off:off + x.size] == x.raw
        check_device_offsets(x)
        off += x.size
    assert off == len(data)


def check_device_offsets(x: g.Tensor):
    """Every logical element sits at the device offset the spec's §6 formula names (grouped
    FRACTAL_Z, sub-format > 1, is written by to_fractal_z_groups from that formula itself)."""
    if x.fmt >> 8:
        return
    dev = np.frombuffer(x.raw, NP[x.dt])
    name = g.FORMAT_NAMES.get(x.fmt & 0xFF)
    a = np.asarray(x.logical)
    if x.orig is None:
        assert np.array_equal(dev, a.ravel(), equal_nan=True)
        return
    idx = np.indices(a.shape).reshape(a.ndim, -1)
    order = getattr(x, "order", None)   # the logical axis order (to_layout); default NCHW / NCDHW

    def named(letters):
        o = order or letters
        return [idx[o.index(ch)] for ch in letters], [a.shape[o.index(ch)] for ch in letters]

    if name in ("NC1HWC0", "NC1HWC0_C04"):
        _, c1, h_, w_, c0 = x.shape
        (n, c, h, w), _ = named("NCHW")
        off = n * c1 * h_ * w_ * c0 + (c // c0) * h_ * w_ * c0 + h * w_ * c0 + w * c0 + c % c0
    elif name == "NDC1HWC0":
        _, d_, c1, h_, w_, c0 = x.shape
        (n, c, d, h, w), _ = named("NCDHW")
        off = (n * d_ * c1 * h_ * w_ * c0 + d * c1 * h_ * w_ * c0 + (c // c0) * h_ * w_ * c0 + h * w_ * c0
               + w * c0 + c % c0)
    elif name == "FRACTAL_Z":
        _, n1, n0, c0 = x.shape
        (n, c, h, w), (_, _, h_, w_) = named("NCHW")
        off = ((c // c0) * h_ * w_ + h * w_ + w) * (n1 * n0 * c0) + n * c0 + c % c0
    elif name == "FRACTAL_Z_3D":
        # GE format_transfer_dhwcn_fractal_z_3D.cc: d, c1, h, w, (n1 n0), c0
        _, n1, n0, c0 = x.shape
        (n, c, d, h, w), (_, c_, _, h_, w_) = named("NCDHW")
        c1, nc = -(-c_ // c0), n1 * n0 * c0
        off = d * c1 * h_ * w_ * nc + (c // c0) * h_ * w_ * nc + h * w_ * nc + w * nc + n * c0 + c % c0
    elif name == "C1HWNCoC0":
        # spec §6 (GE format_transfer_c1hwncoc0_hwcn.cc): the diagonal Co = C0 = c % C0
        _, h_, w_, n_, co, c0 = x.shape
        (n, c, h, w), _ = named("NCHW")
        off = ((c // c0) * h_ * w_ * n_ * co * c0 + h * w_ * n_ * co * c0 + w * n_ * co * c0 + n * co * c0
               + (c % c0) * c0 + c % c0)
    elif name == "FRACTAL_NZ":
        w1, h1, h0, w0 = x.shape[-4:]
        hp = h1 * h0
        if a.ndim == 1:
            b, r, cc = np.zeros_like(idx[0]), np.zeros_like(idx[0]), idx[0]
        else:
            r, cc = idx[-2], idx[-1]
            b = np.ravel_multi_index(tuple(idx[:-2]), a.shape[:-2]) if a.ndim > 2 else np.zeros_like(r)
        off = b * (w1 * hp * w0) + (cc // w0) * hp * w0 + r * w0 + cc % w0
    else:
        raise ValueError(name)
    assert np.array_equal(dev[off], a.ravel(), equal_nan=True), name
    pad = np.ones(dev.size, bool)
    pad[off] = False
    assert not np.any(dev[pad]), f"{name}: padding must be zero"


# ---------------------------------------------------------------------------------------------
# Truth: matching, pairs, first divergence, origin (contract "Matching", "Order")
# ---------------------------------------------------------------------------------------------

def shape_str(s):
    return "[" + ",".join(str(int(d)) for d in s) + "]"


class Compare:
    """A compare case: two trees and how their groups pair (declared by the case)."""

    def __init__(self, out: Path, name: str, description: str, golden_dir="golden", target_dir="target"):
        self.name = name
        self.description = description
        self.dir = out / name
        if self.dir.exists():
            g._rmtree(self.dir)
        self.dir.mkdir(parents=True)
        self.golden = Tree(self.dir / golden_dir)
        self.target = Tree(self.dir / target_dir)
        self.group_pairs: list[tuple] = []   # (golden group, target group, paired_by any_of)
        self.group_keys: dict = {}           # (side, group) -> {field: any_of list}
        self.runs: list[dict] = []
        self.checks: dict = {}

    def key(self, side, group, rank, device, model, step):
        """Declares what the JSON must say about a group: every field a list of allowed values."""
        as_list = (lambda v: v if isinstance(v, list) else [v])
        self.group_keys[(side, group)] = {"rank": as_list(rank), "device": as_list(device),
                                         "model": as_list(model), "step": as_list(step)}

    def pair_groups(self, ggroup, tgroup, paired_by):
        self.group_pairs.append((ggroup, tgroup, paired_by if isinstance(paired_by, list) else [paired_by]))

    def single_op_groups(self):
        """Groups "g" / "t" in the single-op layout {time}/0/ (only the device is known)."""
        self.key("golden", "g", None, 0, None, None)
        self.key("target", "t", None, 0, None, None)
        self.pair_groups("g", "t", ["rank/device/model/step", "only group"])

    # -- the expected answer for one run -------------------------------------------------------

    def run(self, name, args=(), thresholds=None, per_dtype=None, mapping=None, top=5, exit_code=None,
            golden_arg=None, target_arg=None, fx=None, files=None):
        """`fx`: target op name -> golden FX op name, as the case's torchair graph dump says
        (same io and index; matched_by "fx_graph"). `files`: the golden op's name when the two
        roots are files of one op each whose names no other rule pairs (matched_by "files")."""
        thr = dict(DEFAULT_THRESHOLDS, **(thresholds or {}))
        per_dtype = per_dtype or {}
        groups, pairs, unmatched = [], [], {"golden": [], "target": []}
        used_g, used_t = set(), set()
        for gi, (gg, tg, paired_by) in enumerate(self.group_pairs):
            gops = sorted([o for o in self.golden.ops if o.group == gg], key=lambda o: o.order)
            tops = sorted([o for o in self.target.ops if o.group == tg], key=lambda o: o.order)
            by_name: dict = {}
            for o in gops:
                by_name.setdefault(o.name, []).append(o)
            seen: dict = {}
            gpairs = []
            for pos, top_ in enumerate(tops):
                k = seen.get(top_.name, 0)
                seen[top_.name] = k + 1
                if mapping and top_.name in mapping:
                    gname, how = mapping[top_.name], "mapping"
                elif fx and top_.name in fx:
                    gname, how = fx[top_.name], "fx_graph"
                elif files and top_.name not in by_name:
                    gname, how = files, "files"
                else:
                    gname, how = top_.name, "name"
                if top_.count is not None:   # npugraph_ex: (node, count)
                    cands = [o for o in by_name.get(gname, []) if o.count == top_.count]
                    gop = cands[0] if cands else None
                else:
                    lst = by_name.get(gname, [])
                    gop = lst[k] if k < len(lst) else None
                for io in ("input", "output"):
                    for i, tt in enumerate(getattr(top_, io + "s")):
                        gt, gop_used, by = None, gop, how
                        orig = top_.orig[i] if (io == "output" and top_.orig) else None
                        if orig is not None and orig[0] != top_.name and how != "mapping":
                            lst = by_name.get(orig[0], [])
                            gop_used, by = (lst[0] if lst else None), "original_op"
                            idx = orig[1]
                        else:
                            idx = i
                        if gop_used is not None:
                            cand = getattr(gop_used, io + "s")
                            if idx < len(cand) and (id(gop_used), io, idx) not in used_g:
                                gt = cand[idx]
                        if gt is None:
                            unmatched["target"].append({"op_name": top_.name, "io": io, "index": i, "file": tt.file})
                            continue
                        used_g.add((id(gop_used), io, idx))
                        used_t.add((id(top_), io, i))
                        gpairs.append(self._pair(gi, pos, top_, gop_used, io, i, tt, gt, by, thr, per_dtype))
            # first divergence and origin, in target execution order
            first_div = origin = None
            for pos in range(len(tops)):
                ops_pairs = [p for p in gpairs if p["order"] == pos]
                outs_failed = sorted([p for p in ops_pairs if p["io"] == "output" and not p["passed"]],
                                     key=lambda p: p["index"])
                ins = [p for p in ops_pairs if p["io"] == "input"]
                if outs_failed and first_div is None:
                    first_div = outs_failed[0]
                if outs_failed and origin is None and all(p["passed"] for p in ins):
                    origin = dict(outs_failed[0], evidence="inputs" if ins else "none")
            # `worst` ranks pairs; whether input pairs (copies of producers' outputs) take part is
            # not fixed by the contract, so both rankings are given and the test accepts either
            worst, worst_out = {}, {}
            for met, larger_worse in WORST.items():
                for dest, pool in ((worst, gpairs), (worst_out, [p for p in gpairs if p["io"] == "output"])):
                    vals = [p for p in pool if p["metrics"] and p["metrics"][met] is not None]
                    vals.sort(key=lambda p: -p["metrics"][met] if larger_worse else p["metrics"][met])
                    dest[met] = [p["metrics"][met] for p in vals[:top]]
            groups.append({
                "golden": self.group_keys[("golden", gg)], "target": self.group_keys[("target", tg)],
                "paired_by_any_of": paired_by, "pairs": len(gpairs),
                "failed": sum(1 for p in gpairs if not p["passed"]),
                "first_divergence": _ident(first_div), "origin": _ident(origin, evidence=True),
                "worst_values_any_of": [worst, worst_out],
            })
            pairs += gpairs
        # everything not paired is listed as unmatched
        for o in self.golden.ops:
            for io in ("input", "output"):
                for i, tt in enumerate(getattr(o, io + "s")):
                    if (id(o), io, i) not in used_g:
                        unmatched["golden"].append({"op_name": o.name, "io": io, "index": i, "file": tt.file})
        paired_target_groups = {tg for _, tg, _ in self.group_pairs}
        for o in self.target.ops:
            if o.group not in paired_target_groups:
                for io in ("input", "output"):
                    for i, tt in enumerate(getattr(o, io + "s")):
                        unmatched["target"].append({"op_name": o.name, "io": io, "index": i, "file": tt.file})
        errors = ([dict(e, side="golden") for e in self.golden.errors]
                  + [dict(e, side="target") for e in self.target.errors])
        failed = sum(1 for p in pairs if not p["passed"])
        # 3: files could not be read (incomplete), whatever the pairs say
        code = (3 if errors else 1 if failed else 0) if pairs else 2
        if exit_code is not None:
            assert code == exit_code, f"{self.name}/{name}: exit {code}, the case says {exit_code}"
        self.runs.append({
            "name": name, "args": list(args), "top": top,
            "golden": golden_arg or self.golden.root.name, "target": target_arg or self.target.root.name,
            "exit_code": code,
            "thresholds": {"cosine": thr["cosine"], "max_rel": thr["max_rel"],
                           "per_dtype": {k: {"cosine": v[0], "max_rel": v[1]} for k, v in per_dtype.items()}},
            "summary": {"pairs": len(pairs), "passed": len(pairs) - failed, "failed": failed,
                        "unmatched_golden": len(unmatched["golden"]), "unmatched_target": len(unmatched["target"]),
                        "groups": len(groups), "errors": len(errors)},
            "groups": groups, "pairs": pairs, "unmatched": unmatched, "errors": errors,
        })
        return self.runs[-1]

    def _pair(self, gi, pos, top_, gop, io, i, tt, gt, by, thr, per_dtype):
        rec = {"group": gi, "order": pos, "op_name": top_.name, "op_type": top_.op_type,
               "golden_op_name": gop.name, "io": io, "index": i, "matched_by": by,
               "golden_dtype": DT_NAME[gt.dt], "target_dtype": DT_NAME[tt.dt],
               "golden_file": gt.file, "target_file": tt.file}
        if tuple(gt.arr.shape) != tuple(tt.arr.shape):
            rec.update(metrics=None, passed=False,
                       error=f"shape mismatch: golden {shape_str(gt.arr.shape)} vs target {shape_str(tt.arr.shape)}")
            return rec
        t_thr = per_dtype.get(DT_NAME[tt.dt])
        t_thr = {"cosine": t_thr[0], "max_rel": t_thr[1]} if t_thr else thr
        m = metrics(gt.arr, tt.arr)
        rec.update(shape=[int(d) for d in tt.arr.shape], elements=int(tt.arr.size), metrics=m,
                   passed=verdict(m, t_thr), error=None)
        return rec

    # -- output --------------------------------------------------------------------------------

    def finish(self):
        truth = {"case": self.name, "description": self.description, "runs": self.runs, **self.checks}
        (self.dir / "truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True, allow_nan=False) + "\n")
        return truth


def _ident(p, evidence=False):
    if p is None:
        return None
    out = {k: p[k] for k in ("op_name", "io", "index", "target_file", "golden_file", "golden_op_name")}
    if evidence:
        out["evidence"] = p["evidence"]
    return out


# ---------------------------------------------------------------------------------------------
# Value helpers
# ---------------------------------------------------------------------------------------------

def rng(seed):
    return np.random.default_rng(seed)


def perturb(a, r, rel=1e-2, lo=0.5, hi=1.5):
    """a * (1 + rel * s) with |s| in [lo, hi) and a random sign, in a's dtype."""
    a = np.asarray(a)
    s = r.uniform(lo, hi, a.shape) * r.choice([-1.0, 1.0], a.shape)
    return (a.astype(np.float64) * (1 + rel * s)).astype(a.dtype)


def jitter(a, r, rel=1e-7):
    """An fp32 run-to-run difference of about one ulp."""
    a = np.asarray(a)
    return (a.astype(np.float64) * (1 + rel * r.standard_normal(a.shape))).astype(a.dtype)


def torchair_dir(time, model_n, model_id, step, rank=0, device=0, ws=1):
    return f"worldsize{ws}_global_rank{rank}/{time}/{device}/ge_default_{time}_{model_n}/{model_id}/{step}"


def softmax(x):
    x = x.astype(np.float32)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


# ---------------------------------------------------------------------------------------------
# a. a chain with a branch, one op perturbed; and its variants
# ---------------------------------------------------------------------------------------------

CHAIN = [  # (op_type, op_name)
    ("MatMul", "layer0/MatMul"), ("Add", "layer0/Add"), ("Relu", "layer0/Relu"), ("Cast", "layer0/Cast"),
    ("MatMul", "layer1/MatMul"), ("Mul", "layer1/Mul"), ("Add", "layer1/Add"), ("Softmax", "layer1/Softmax"),
]


def chain_run(seed, perturb_at=None, x_rel=None, noise_seed=None):
    """Runs the chain in numpy; returns [(inputs, outputs)] per CHAIN op as (array, dtype code).

    perturb_at: op index whose output is multiplied by 1 + 1e-2 s; x_rel: the graph input x itself
    differs by that relative amount; noise_seed: fp32 ops get ~1 ulp run-to-run jitter."""
    r = rng(seed)
    x = r.uniform(-1, 1, (8, 16)).astype(np.float32)
    w0 = r.uniform(-0.5, 0.5, (16, 16)).astype(np.float32)
    b0 = r.uniform(-0.2, 0.2, (16,)).astype(np.float32)
    w1 = r.uniform(-0.5, 0.5, (16, 16)).astype(np.float16)
    s = r.uniform(0.5, 1.5, (16,)).astype(np.float16)
    pr = rng(seed + 1000)
    nz = rng(noise_seed) if noise_seed is not None else None
    if x_rel is not None:
        x = perturb(x, pr, rel=x_rel)

    def post(i, y):
        if nz is not None and y.dtype == np.float32:
            y = jitter(y, nz)
        if i == perturb_at:
            y = perturb(y, pr)
        return y

    ops = []
    h0 = post(0, (x @ w0).astype(np.float32))
    ops.append(([(x, 1), (w0, 1)], [(h0, 1)]))
    h1 = post(1, (h0 + b0).astype(np.float32))
    ops.append(([(h0, 1), (b0, 1)], [(h1, 1)]))
    h2 = post(2, np.maximum(h1, 0).astype(np.float32))
    ops.append(([(h1, 1)], [(h2, 1)]))
    h3 = post(3, h2.astype(np.float16))
    ops.append(([(h2, 1)], [(h3, 2)]))
    h4 = post(4, (h3.astype(np.float32) @ w1.astype(np.float32)).astype(np.float16))
    ops.append(([(h3, 2), (w1, 2)], [(h4, 2)]))
    h5 = post(5, (h3.astype(np.float32) * s.astype(np.float32)).astype(np.float16))
    ops.append(([(h3, 2), (s, 2)], [(h5, 2)]))
    h6 = post(6, (h4.astype(np.float32) + h5.astype(np.float32)).astype(np.float16))
    ops.append(([(h4, 2), (h5, 2)], [(h6, 2)]))
    h7 = post(7, softmax(h6).astype(np.float16))
    ops.append(([(h6, 2)], [(h7, 2)]))
    return ops


def write_chain(tree: Tree, rel_dir, group, values, ts0, task0, swap_branches=False, only=None):
    n = len(values)
    times = list(range(n))
    if swap_branches:       # the two branch ops ran the other way round
        times[4], times[5] = times[5], times[4]
    for i, ((op_type, op_name), (ins, outs)) in enumerate(zip(CHAIN, values)):
        if only is not None and i not in only:
            continue
        tree.ge(rel_dir, group, op_type, op_name, task0 + i, ts0 + 100 * times[i] + 7,
                ins=[tensor(a, dt) for a, dt in ins], outs=[tensor(a, dt) for a, dt in outs])


def case_chain(out: Path) -> Compare:
    c = Compare(out, "chain", "GE torchair trees, 2 steps each: step 0 is an 8-op chain with a branch "
                "(MatMul, Add, Relu, Cast fp32->fp16, MatMul | Mul, Add, Softmax), every op dumping inputs "
                "and outputs; the target's Relu output is perturbed by relative 1e-2 and the error "
                "propagates. fp32 ops carry ~1 ulp jitter. Time directories, run stamps "
                "ge_default_<time>_<n>, model ids and timestamps differ between the runs; the golden "
                "ran the two branch ops in the other order. Step 1 is a clean 2-op chain.")
    gt, tt = "20241121120000", "20241122093015"
    gold0, targ0 = chain_run(11), chain_run(11, perturb_at=2, noise_seed=12)
    gold1, targ1 = chain_run(21), chain_run(21, noise_seed=22)
    for step, gv, tv in ((0, gold0, targ0), (1, gold1, targ1)):
        only = None if step == 0 else {0, 1}
        write_chain(c.golden, torchair_dir(gt, 1, 1, step), f"g{step}", gv, T0 + step * 10_000_000, 40,
                    swap_branches=True, only=only)
        write_chain(c.target, torchair_dir(tt, 1, 4, step), f"t{step}", tv,
                    T0 + 86_400_000_000 + step * 10_000_000, 3, only=only)
        c.key("golden", f"g{step}", 0, 0, [f"ge_default_{gt}_1", "1"], step)
        c.key("target", f"t{step}", 0, 0, [f"ge_default_{tt}_1", "1"], step)
        c.pair_groups(f"g{step}", f"t{step}", "rank/device/model/step")
    r = c.run("default", exit_code=1)
    g0 = r["groups"][0]
    assert g0["first_divergence"]["op_name"] == "layer0_Relu" and g0["origin"]["op_name"] == "layer0_Relu"
    assert g0["origin"]["evidence"] == "inputs"
    later_failed = {p["op_name"] for p in r["pairs"] if p["group"] == 0 and p["order"] > 2
                    and p["io"] == "output" and not p["passed"]}
    assert len(later_failed) >= 3, later_failed
    assert r["groups"][1]["failed"] == 0
    c.checks["later_failing_ops"] = sorted(later_failed)
    c.run("top2", ["--top", "2"], top=2, exit_code=1)
    return c


def case_chain_input(out: Path) -> Compare:
    c = Compare(out, "chain_input", "the same chain, but the graph input x of the first op (MatMul) "
                "already differs by relative 2e-2 and no op adds an error of its own: every failing op "
                "has a failing input, so first_divergence is layer0/MatMul and origin is null")
    gt, tt = "20241121120000", "20241122093015"
    write_chain(c.golden, torchair_dir(gt, 1, 1, 0), "g", chain_run(33), T0, 40)
    write_chain(c.target, torchair_dir(tt, 1, 2, 0), "t", chain_run(33, x_rel=2e-2, noise_seed=32),
                T0 + 86_400_000_000, 3)
    c.key("golden", "g", 0, 0, [f"ge_default_{gt}_1", "1"], 0)
    c.key("target", "t", 0, 0, [f"ge_default_{tt}_1", "1"], 0)
    c.pair_groups("g", "t", ["rank/device/model/step", "only group"])
    r = c.run("default", exit_code=1)
    assert r["groups"][0]["first_divergence"]["op_name"] == "layer0_MatMul"
    assert r["groups"][0]["origin"] is None
    return c


def case_chain_side(out: Path) -> Compare:
    c = Compare(out, "chain_side", "a side op embed/Cast runs first and receives a differing graph "
                "input (its input and output fail); the main chain's Relu output is perturbed with "
                "clean inputs: first_divergence is embed/Cast, origin is layer0/Relu (evidence inputs). "
                "Single-op layout {time}/{device}/ on both sides")
    r = rng(41)
    e = r.uniform(-2, 2, (4, 8)).astype(np.float32)
    e_t = perturb(e, rng(42), rel=3e-2)
    for tree, grp, time, base, vals, ev in ((c.golden, "g", "20241121120000", T0, chain_run(43), e),
                                           (c.target, "t", "20241122093015", T0 + 86_400_000_000,
                                            chain_run(43, perturb_at=2, noise_seed=44), e_t)):
        d = f"{time}/0"
        tree.ge(d, grp, "Cast", "embed/Cast", 2, base + 1, ins=[tensor(ev, 1)], outs=[tensor(ev, 2)])
        write_chain(tree, d, grp, vals, base + 1000, 10)
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    assert res["groups"][0]["first_divergence"]["op_name"] == "embed_Cast"
    assert res["groups"][0]["origin"]["op_name"] == "layer0_Relu"
    return c


# ---------------------------------------------------------------------------------------------
# b. NaN / Inf on one side, zero norms, no finite elements
# ---------------------------------------------------------------------------------------------

def case_nan(out: Path) -> Compare:
    c = Compare(out, "nan_one_side", "non-finite handling: an all-NaN output on both sides (n = 0, "
                "passes, metrics null), all-zero tensors on both sides (cosine 1, kl null, std_ratio 1), "
                "Sqrt output with NaN on the target only (plus NaN/NaN and +inf/+inf that are the same), "
                "Mul carrying it with +inf vs -inf and golden NaN vs target finite, and a Sub whose "
                "golden output is all zero while the target's is not (cosine 0, kl null, std_ratio null)")
    r = rng(51)
    a = r.uniform(0.5, 2, (6, 5)).astype(np.float32)
    b = r.uniform(0.5, 2, (6, 5)).astype(np.float32)
    z = np.zeros((6, 5), np.float32)
    nan = np.full((6, 5), np.nan, np.float32)
    sq = np.sqrt(a).astype(np.float32)
    sq_g = sq.copy()
    sq_g[0, 0] = np.nan     # NaN on both sides: the same special value
    sq_g[1, 1] = np.inf     # +inf on both sides
    sq_t = jitter(sq_g, rng(52))
    sq_t[0, 0], sq_t[1, 1] = np.nan, np.inf
    sq_t[2, 2], sq_t[3, 4] = np.nan, np.nan     # one side only
    mul_g = (sq_g * b).astype(np.float32)
    mul_g[4, 0] = np.inf
    mul_g[5, 3] = np.nan
    mul_t = (sq_t * b).astype(np.float32)
    mul_t[4, 0] = -np.inf   # +inf vs -inf: differ
    mul_t[5, 3] = 1.5       # golden NaN vs target finite
    sub_t = (r.uniform(-1e-3, 1e-3, (6, 5))).astype(np.float32)
    ops = [("Add", "add_0", [a, b], [a + b], [a, b], [jitter(a + b, rng(53))]),
           ("RealDiv", "div_all_nan", [z, z], [nan], [z, z], [nan]),
           ("ZerosLike", "zeros_like_1", [a], [z], [a], [z]),
           ("Sqrt", "sqrt_2", [a], [sq_g], [a], [sq_t]),
           ("Mul", "mul_3", [sq_g, b], [mul_g], [sq_t, b], [mul_t]),
           ("Sub", "sub_4", [a, a], [z], [a, a], [sub_t])]
    for tree, grp, base in ((c.golden, "g", T0), (c.target, "t", T0 + 5_000_000)):
        for i, (ty, name, gi, go, ti, to) in enumerate(ops):
            ins, outs = (gi, go) if tree is c.golden else (ti, to)
            tree.ge("20241121120000/0" if tree is c.golden else "20241122120000/0", grp, ty, name, i + 1,
                    base + 10 * (i + 1), ins=[tensor(x, 1) for x in ins], outs=[tensor(x, 1) for x in outs])
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    by = {(p["op_name"], p["io"], p["index"]): p for p in res["pairs"]}
    assert by[("div_all_nan", "output", 0)]["metrics"]["cosine"] is None and by[("div_all_nan", "output", 0)]["passed"]
    assert by[("div_all_nan", "input", 0)]["metrics"]["cosine"] == 1.0
    assert by[("sqrt_2", "output", 0)]["metrics"]["nan_inf_one_side"] == 2
    assert by[("mul_3", "output", 0)]["metrics"]["nan_inf_one_side"] == 4
    assert by[("sub_4", "output", 0)]["metrics"]["cosine"] == 0.0
    assert by[("sub_4", "output", 0)]["metrics"]["std_ratio"] is None
    assert res["groups"][0]["origin"]["op_name"] == "sqrt_2"
    return c


# ---------------------------------------------------------------------------------------------
# c. fused target op whose outputs name their original ops
# ---------------------------------------------------------------------------------------------

def case_fused(out: Path) -> Compare:
    c = Compare(out, "fused", "golden runs layer0/MatMul, layer0/Add, layer0/Relu; the target fused "
                "MatMul+Add into one op fused/MatMulAdd whose output 0 carries original_op "
                "(layer0/MatMul, 0) and output 1 (layer0/Add, 0) — real, unsanitised names in the dump "
                "header. Output 1 is perturbed: first_divergence = origin = the fused op with evidence "
                "none (its inputs have no golden counterpart); layer0/Relu carries the error")
    r = rng(61)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    b = r.uniform(-1, 1, (8,)).astype(np.float32)
    mm = (x @ w).astype(np.float32)
    add = (mm + b).astype(np.float32)
    add_t = perturb(add, rng(62))
    gd, td = torchair_dir("20241121120000", 3, 1, 0), torchair_dir("20241122120000", 3, 1, 0)
    c.golden.ge(gd, "g", "MatMul", "layer0/MatMul", 1, T0 + 10, ins=[tensor(x, 1), tensor(w, 1)], outs=[tensor(mm, 1)])
    c.golden.ge(gd, "g", "Add", "layer0/Add", 2, T0 + 20, ins=[tensor(mm, 1), tensor(b, 1)], outs=[tensor(add, 1)])
    c.golden.ge(gd, "g", "Relu", "layer0/Relu", 3, T0 + 30, ins=[tensor(add, 1)],
                outs=[tensor(np.maximum(add, 0), 1)])
    tb = T0 + 9_000_000
    c.target.ge(td, "t", "MatMulV3", "fused/MatMulAdd", 7, tb + 10, ins=[tensor(x, 1), tensor(w, 1), tensor(b, 1)],
                outs=[tensor(jitter(mm, rng(63)), 1), tensor(add_t, 1)],
                orig=[("layer0/MatMul", 0), ("layer0/Add", 0)])
    c.target.ge(td, "t", "Relu", "layer0/Relu", 8, tb + 20, ins=[tensor(add_t, 1)],
                outs=[tensor(np.maximum(add_t, 0), 1)])
    c.key("golden", "g", 0, 0, ["ge_default_20241121120000_3", "3"], 0)
    c.key("target", "t", 0, 0, ["ge_default_20241122120000_3", "3"], 0)
    c.pair_groups("g", "t", ["rank/device/model/step", "only group"])
    res = c.run("default", exit_code=1)
    o = res["groups"][0]["origin"]
    assert o["op_name"] == "fused_MatMulAdd" and o["index"] == 1 and o["evidence"] == "none"
    assert {p["matched_by"] for p in res["pairs"] if p["op_name"] == "fused_MatMulAdd"} == {"original_op"}
    return c


# ---------------------------------------------------------------------------------------------
# d. device formats in the target against ND golden tensors
# ---------------------------------------------------------------------------------------------

def formats_tensors(seed):
    r = rng(seed)
    return [  # (op_type, op_name, golden array, golden dt, target array, target dt, target fmt, c0)
        ("MatMul", "mm_nz_fp16", r.uniform(-2, 2, (20, 35)), 2, None, 2, "FRACTAL_NZ", 16),
        ("BatchMatMul", "bmm_nz_batch", r.uniform(-2, 2, (2, 17, 20)), 2, None, 2, "FRACTAL_NZ", 16),
        ("Conv2D", "conv_nc1hwc0", r.uniform(-2, 2, (2, 20, 3, 3)), 1, "cast", 2, "NC1HWC0", 16),
        ("Conv3D", "conv3d_ndc1hwc0", r.uniform(-2, 2, (1, 18, 2, 3, 3)), 2, None, 2, "NDC1HWC0", 16),
        ("TransData", "weight_fractal_z", r.uniform(-2, 2, (20, 18, 3, 3)), 2, None, 2, "FRACTAL_Z", 16),
        ("MatMul", "mm_nz_fp32_perturbed", r.uniform(-2, 2, (33, 40)), 1, "perturb", 1, "FRACTAL_NZ", 8),
    ]


def case_formats(out: Path) -> Compare:
    c = Compare(out, "formats", "target outputs in device formats (FRACTAL_NZ fp16 2-D and batched, "
                "NC1HWC0 fp16 against an fp32 NCHW golden, NDC1HWC0, FRACTAL_Z NCHW weights, FRACTAL_NZ "
                "fp32 with C0 8) with padding and original_shape, against ND golden dumps of the same "
                "logical values: all pass except the perturbed fp32 NZ tensor")
    for i, (ty, name, ga, gdt, mode, tdt, fmt, c0) in enumerate(formats_tensors(71)):
        garr = ga.astype(NP[gdt])
        if mode == "perturb":
            tarr = perturb(garr, rng(72), rel=2e-2)
        else:
            tarr = garr.astype(NP[tdt])
        c.golden.ge("20241121120000/0", "g", ty, name, i + 1, T0 + 10 * (i + 1), outs=[tensor(garr, gdt)])
        c.target.ge("20241122120000/0", "t", ty, name, i + 1, T0 + 7_000_000 + 10 * (i + 1),
                    outs=[tensor(tarr, tdt, fmt, c0)])
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    assert [p["op_name"] for p in res["pairs"] if not p["passed"]] == ["mm_nz_fp32_perturbed"]
    return c


def case_formats_both(out: Path) -> Compare:
    c = Compare(out, "formats_both", "golden and target both in device formats: the same layout on both "
                "sides (FRACTAL_NZ fp16 2-D, batched and 600x300 = several read chunks; NC1HWC0, NDC1HWC0, "
                "FRACTAL_Z), and a different one (NC1HWC0 fp32 with C0 8 against fp16 with C0 16); "
                "perturbed: the large NZ tensor and the mixed-C0 one")
    r = rng(91)
    cases = [  # (op_type, op_name, array, golden dt, target dt, golden fmt/c0, target fmt/c0, perturb)
        ("MatMul", "mm_nz_fp16", r.uniform(-2, 2, (20, 35)), 2, 2, ("FRACTAL_NZ", 16), ("FRACTAL_NZ", 16), False),
        ("BatchMatMul", "bmm_nz_batch", r.uniform(-2, 2, (2, 17, 20)), 2, 2, ("FRACTAL_NZ", 16),
         ("FRACTAL_NZ", 16), False),
        ("MatMul", "mm_nz_large", r.uniform(-2, 2, (600, 300)), 2, 2, ("FRACTAL_NZ", 16), ("FRACTAL_NZ", 16), True),
        ("Conv2D", "conv_nc1hwc0", r.uniform(-2, 2, (2, 20, 3, 3)), 2, 2, ("NC1HWC0", 16), ("NC1HWC0", 16), False),
        ("Conv3D", "conv3d_ndc1hwc0", r.uniform(-2, 2, (1, 18, 2, 3, 3)), 2, 2, ("NDC1HWC0", 16),
         ("NDC1HWC0", 16), False),
        ("TransData", "weight_fractal_z", r.uniform(-2, 2, (20, 18, 3, 3)), 2, 2, ("FRACTAL_Z", 16),
         ("FRACTAL_Z", 16), False),
        ("Conv2D", "conv_c0_8_vs_16", r.uniform(-2, 2, (2, 20, 3, 3)), 1, 2, ("NC1HWC0", 8), ("NC1HWC0", 16), True),
    ]
    for i, (ty, name, a, gdt, tdt, (gfmt, gc0), (tfmt, tc0), bad) in enumerate(cases):
        garr = a.astype(NP[gdt])
        tarr = perturb(garr, rng(92 + i), rel=2e-2).astype(NP[tdt]) if bad else garr.astype(NP[tdt])
        c.golden.ge("20241121120000/0", "g", ty, name, i + 1, T0 + 10 * (i + 1), outs=[tensor(garr, gdt, gfmt, gc0)])
        c.target.ge("20241122120000/0", "t", ty, name, i + 1, T0 + 7_000_000 + 10 * (i + 1),
                    outs=[tensor(tarr, tdt, tfmt, tc0)])
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    assert [p["op_name"] for p in res["pairs"] if not p["passed"]] == ["mm_nz_large", "conv_c0_8_vs_16"]
    return c


def case_layouts(out: Path) -> Compare:
    c = Compare(out, "layouts", "every device format npgx converts (NC1HWC0 and _C04, NDC1HWC0, FRACTAL_Z, "
                "FRACTAL_Z_3D, FRACTAL_NZ, C1HWNCoC0), logical axes in NCHW/NHWC/HWCN order (NCDHW/NDHWC/DHWCN), "
                "odd sizes, fp16/fp32/int8 (C0 16/16/32), written by numpy: ND golden against the perturbed "
                "target in the device format; the same layout on both sides; and two different layouts of one "
                "tensor. Pairs fail or pass as numpy's metrics on the logical tensors say")
    r = rng(301)
    i = 0

    def pair(ty, name, garr, gt, tarr, tt):
        nonlocal i
        i += 1
        c.golden.ge("20241121120000/0", "g", ty, name, i, T0 + 10 * i, outs=[gt(garr)])
        c.target.ge("20241122120000/0", "t", ty, name, i, T0 + 7_000_000 + 10 * i, outs=[tt(tarr)])

    for fmt, order, shape in LAYOUTS:
        for dt in LAYOUT_DTYPES:
            a = layout_values(r, shape, dt)
            b = layout_perturb(a, rng(302 + i))
            c0 = layout_c0(fmt, dt)
            # ND golden, device target: the golden is taken in the target's device order
            pair("TransData", "nd_vs_" + layout_name(fmt, order, shape, dt), a, lambda x: tensor(x, dt),
                 b, lambda x: layout_tensor(x, dt, fmt, order, c0))
            if dt == 2:   # the same layout on both sides: both streamed in device order
                pair("TransData", "same_" + layout_name(fmt, order, shape, dt),
                     a, lambda x: layout_tensor(x, dt, fmt, order, c0),
                     b, lambda x: layout_tensor(x, dt, fmt, order, c0))
    # two layouts of one logical tensor: both brought back to the logical order
    for (f1, o1), (f2, o2), shape in ((("NC1HWC0", "NCHW"), ("FRACTAL_Z", "NCHW"), (20, 18, 3, 3)),
                                      (("C1HWNCoC0", "HWCN"), ("NC1HWC0", "HWCN"), (3, 2, 33, 5)),
                                      (("FRACTAL_Z_3D", "DHWCN"), ("NDC1HWC0", "DHWCN"), (2, 1, 2, 40, 3))):
        a = layout_values(r, shape, 1)
        b = layout_perturb(a, rng(302 + i))
        pair("TransData", f"{f1}_vs_{f2}", a, lambda x: layout_tensor(x, 1, f1, o1, 16),
             b, lambda x: layout_tensor(x, 1, f2, o2, 16))
    c.single_op_groups()
    c.run("default")
    return c


# ---------------------------------------------------------------------------------------------
# e. missing and extra operators; f. shape mismatch
# ---------------------------------------------------------------------------------------------

def case_missing_extra(out: Path) -> Compare:
    c = Compare(out, "missing_extra", "golden has pool1 that the target lacks; the target has an extra "
                "cast_extra (in the middle of the execution order) and fc1 has a third input the golden "
                "does not: those tensors are listed as unmatched, everything matched passes, exit 0. "
                "Framings mixed: golden conv1 is a v1 file, target relu1 a TLV file")
    r = rng(81)
    x = r.uniform(-1, 1, (2, 4, 3, 3)).astype(np.float32)
    y = r.uniform(-1, 1, (2, 8, 1, 1)).astype(np.float32)
    yr = np.maximum(y, 0)
    p = r.uniform(-1, 1, (2, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 4)).astype(np.float32)
    bias = r.uniform(-1, 1, (4,)).astype(np.float32)
    fc = (p @ w).astype(np.float32)
    gd, td = "20241121120000/0", "20241122120000/0"
    c.golden.ge(gd, "g", "Conv2D", "conv1", 1, T0 + 10, ins=[tensor(x, 1)], outs=[tensor(y, 1)], framing="v1")
    c.golden.ge(gd, "g", "Relu", "relu1", 2, T0 + 20, ins=[tensor(y, 1)], outs=[tensor(yr, 1)])
    c.golden.ge(gd, "g", "MaxPool", "pool1", 3, T0 + 30, ins=[tensor(yr, 1)], outs=[tensor(p, 1)])
    c.golden.ge(gd, "g", "MatMul", "fc1", 4, T0 + 40, ins=[tensor(p, 1), tensor(w, 1)], outs=[tensor(fc, 1)])
    tb = T0 + 3_000_000
    c.target.ge(td, "t", "Conv2D", "conv1", 1, tb + 10, ins=[tensor(x, 1)], outs=[tensor(jitter(y, rng(82)), 1)])
    c.target.ge(td, "t", "Relu", "relu1", 2, tb + 20, ins=[tensor(y, 1)], outs=[tensor(yr, 1)], framing="tlv")
    c.target.ge(td, "t", "Cast", "cast_extra", 3, tb + 30, ins=[tensor(p, 1)], outs=[tensor(p, 2)])
    c.target.ge(td, "t", "MatMulV2", "fc1", 4, tb + 40, ins=[tensor(p, 1), tensor(w, 1), tensor(bias, 1)],
                outs=[tensor(jitter(fc, rng(83)), 1)])
    c.single_op_groups()
    res = c.run("default", exit_code=0)
    assert len(res["unmatched"]["golden"]) == 2 and len(res["unmatched"]["target"]) == 3
    return c


def case_shape(out: Path) -> Compare:
    c = Compare(out, "shape_mismatch", "reshape_1's output is [2,3] in the golden and [3,2] in the target "
                "(same element count), matmul_2's output [4,4] vs [4,5]: two pair errors naming both "
                "shapes, passed false, metrics null, exit 1; their inputs still compare and pass")
    r = rng(91)
    a = r.uniform(-1, 1, (6,)).astype(np.float32)
    m = r.uniform(-1, 1, (4, 4)).astype(np.float32)
    m5 = r.uniform(-1, 1, (4, 5)).astype(np.float32)
    for tree, grp, d, base in ((c.golden, "g", "20241121120000/0", T0), (c.target, "t", "20241122120000/0", T0 + 50)):
        tgt = tree is c.target
        tree.ge(d, grp, "Reshape", "reshape_1", 1, base + 10, ins=[tensor(a, 1)],
                outs=[tensor(a.reshape(3, 2) if tgt else a.reshape(2, 3), 1)])
        tree.ge(d, grp, "MatMul", "matmul_2", 2, base + 20, ins=[tensor(m, 1)], outs=[tensor(m5 if tgt else m, 1)])
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    errs = [p["error"] for p in res["pairs"] if p["error"]]
    assert errs == ["shape mismatch: golden [2,3] vs target [3,2]", "shape mismatch: golden [4,4] vs target [4,5]"]
    return c


# ---------------------------------------------------------------------------------------------
# g. npugraph_ex .pt against .pt (triage step 4 vs step 5)
# ---------------------------------------------------------------------------------------------

def case_pt(out: Path) -> Compare:
    import torch
    c = Compare(out, "pt_steps", "npugraph_ex data dumps worldsize1_global_rank0/<fxnode>_device_0_<count>.pt, "
                "step4 (force_eager) as golden vs step5 as target, torch.save: fp32, bf16, a tuple output "
                "(outputs 0 and 1), a transposed (non-contiguous) tensor; mm perturbed by 1e-2 and the "
                "error carried on: first_divergence = origin = mm, evidence none (no inputs in .pt dumps)",
                golden_dir="step4", target_dir="step5")
    gen = torch.Generator().manual_seed(101)
    a = torch.rand(4, 8, generator=gen) - 0.5
    b = torch.rand(8, 8, generator=gen) - 0.5
    mm = a @ b
    pr = rng(102)
    mm_t = torch.from_numpy(perturb(mm.numpy(), pr))

    def rms(x):
        y = x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6)
        return y.to(torch.float16), torch.sqrt((x * x).mean(dim=-1, keepdim=True))

    for tree, m in ((c.golden, mm), (c.target, mm_t)):
        d = "worldsize1_global_rank0"
        bf = (a * 3).to(torch.bfloat16)
        tree.pt(d, "p", "arg0_1", 0, 0, a)
        tree.pt(d, "p", "arg1_1", 0, 1, b)
        tree.pt(d, "p", "to_bf16", 0, 2, bf)
        tree.pt(d, "p", "mm", 0, 3, m)
        tree.pt(d, "p", "npu_rms_norm", 0, 4, rms(m))
        tree.pt(d, "p", "permute", 0, 5, m.t())
    # dump-scan reads the triage step directories as the step: 4 and 5 differ, so the groups pair
    # only because each side has exactly one
    c.key("golden", "p", 0, [0, None], None, 4)
    c.key("target", "p", 0, [0, None], None, 5)
    c.pair_groups("p", "p", "only group")
    res = c.run("default", exit_code=1)
    o = res["groups"][0]["origin"]
    assert o["op_name"] == "mm" and o["evidence"] == "none"
    assert res["groups"][0]["first_divergence"]["op_name"] == "mm"
    return c


# ---------------------------------------------------------------------------------------------
# h. .npy golden (msaccucmp convert naming) against a GE dump target
# ---------------------------------------------------------------------------------------------

def case_npy_vs_ge(out: Path) -> Compare:
    c = Compare(out, "npy_vs_ge", "golden: msaccucmp convert output {dump file}.{input|output}.{i}.npy "
                "(fp32, an eager run: other task ids and timestamps in the names); target: a GE torchair "
                "dump with fp16 outputs; cast_3's output perturbed by 2e-2")
    r = rng(111)
    x = r.uniform(-1, 1, (3, 8)).astype(np.float32)
    y = r.uniform(-1, 1, (3, 8)).astype(np.float32)
    add = x + y
    relu = np.maximum(add, 0)
    cast = relu * 2
    c.golden.npy_op("", "g", f"Add.add_1.5.1.{T0 + 100}", ins=[(x, 1), (y, 1)], outs=[(add, 1)])
    c.golden.npy_op("", "g", f"Relu.relu_2.6.1.{T0 + 200}", ins=[(add, 1)], outs=[(relu, 1)])
    c.golden.npy_op("", "g", f"Cast.cast_3.7.1.{T0 + 300}", ins=[(relu, 1)], outs=[(cast, 1)])
    td = torchair_dir("20241122120000", 1, 1, 0)
    tb = T0 + 77_000_000
    c.target.ge(td, "t", "Add", "add_1", 21, tb + 10, ins=[tensor(x, 1), tensor(y, 1)], outs=[tensor(add, 2)])
    c.target.ge(td, "t", "Relu", "relu_2", 22, tb + 20, ins=[tensor(add.astype(np.float16), 2)],
                outs=[tensor(relu, 2)])
    c.target.ge(td, "t", "Cast", "cast_3", 23, tb + 30, ins=[tensor(relu.astype(np.float16), 2)],
                outs=[tensor(perturb(cast, rng(112), rel=2e-2), 2)])
    c.key("golden", "g", None, None, None, None)
    c.key("target", "t", 0, 0, ["ge_default_20241122120000_1", "1"], 0)
    c.pair_groups("g", "t", "only group")
    res = c.run("default", exit_code=1)
    assert res["groups"][0]["origin"]["op_name"] == "cast_3"
    return c


# ---------------------------------------------------------------------------------------------
# i. corrupt files on both sides
# ---------------------------------------------------------------------------------------------

def case_corrupt(out: Path) -> Compare:
    c = Compare(out, "corrupt", "golden op_b is a dump whose header is cut short (u64 header length "
                "beyond the end of the file); target op_c is a text file named like a dump (garbage "
                "header). Each is one `errors` entry with its side; the other side's op_b / op_c tensors "
                "are unmatched; the comparison goes on and finds op_d perturbed (exit 1)")
    r = rng(121)
    vals = {k: r.uniform(-1, 1, (16,)).astype(np.float32) for k in "abcd"}
    outs = {k: np.tanh(v).astype(np.float32) for k, v in vals.items()}
    gd, td = "20241121120000/0", "20241122120000/0"
    tb = T0 + 4_000_000
    for i, k in enumerate("abcd"):
        if k != "b":
            c.golden.ge(gd, "g", "Tanh", f"op_{k}", i + 1, T0 + 10 * (i + 1), ins=[tensor(vals[k], 1)],
                        outs=[tensor(outs[k], 1)])
        if k != "c":
            o = perturb(outs[k], rng(122)) if k == "d" else outs[k]
            c.target.ge(td, "t", "Tanh", f"op_{k}", i + 1, tb + 10 * (i + 1), ins=[tensor(vals[k], 1)],
                        outs=[tensor(o, 1)])
    ins, os_ = [tensor(vals["b"], 1)], [tensor(outs["b"], 1)]
    full = g.v2_bytes(g.dump_header("op_b", T0 + 20, ins, os_), ins, os_)
    (hlen,) = struct.unpack_from("<Q", full, 0)
    cut = full[:8 + hlen // 2]
    c.golden.error(f"{gd}/Tanh.op_b.2.1.{T0 + 20}", cut,
                   ["header", "length", "truncat", "exceed", "beyond", "short", "end of file", "eof",
                    "protobuf", "decode", "invalid"],
                   f"u64 header length {hlen}, only {hlen // 2} header bytes present")
    # after every valid target op in time, so it cannot shift anyone's `order`
    c.target.error(f"{td}/Tanh.op_c.3.1.{tb + 90}", b"this is not a dump file, only text that looks like one\n" * 3,
                   ["header", "length", "protobuf", "decode", "not a dump", "invalid", "unrecognised",
                    "unrecognized", "unknown", "exceed", "larger", "truncat"], "ASCII text")
    c.single_op_groups()
    # 3: files could not be read — incomplete, whatever the failing pair says
    res = c.run("default", exit_code=3)
    assert len(res["unmatched"]["golden"]) == 2 and len(res["unmatched"]["target"]) == 2
    return c


# ---------------------------------------------------------------------------------------------
# j. thresholds; k. --mapping; l. exit codes
# ---------------------------------------------------------------------------------------------

def case_thresholds(out: Path) -> Compare:
    c = Compare(out, "thresholds", "matmul_fp32 (max_rel < 0.01, cosine just below 1), cast_fp16 "
                "(max_rel ~0.02), add_fp32 (max_rel ~0.03), each with one clean input; the same trees "
                "run with defaults, --cosine/--max-rel, and --dtype-threshold float16=…: the thresholds "
                "are echoed and verdicts change")
    r = rng(131)
    x = r.uniform(0.5, 2, (64,)).astype(np.float32)
    mm = r.uniform(-2, 2, (64,)).astype(np.float32)
    ca = r.uniform(-2, 2, (64,)).astype(np.float16)
    ad = r.uniform(-2, 2, (64,)).astype(np.float32)
    tvals = {"matmul_fp32": perturb(mm, rng(132), rel=6e-3, lo=0.2, hi=1.2),
             "cast_fp16": perturb(ca, rng(133), rel=2e-2, lo=0.3, hi=1.0),
             "add_fp32": perturb(ad, rng(134), rel=3e-2, lo=0.3, hi=1.0)}
    gvals = {"matmul_fp32": (mm, 1), "cast_fp16": (ca, 2), "add_fp32": (ad, 1)}
    for tree, grp, d, base in ((c.golden, "g", "20241121120000/0", T0), (c.target, "t", "20241122120000/0", T0 + 99)):
        for i, (name, (gv, dt)) in enumerate(gvals.items()):
            ty = {"matmul_fp32": "MatMul", "cast_fp16": "Cast", "add_fp32": "Add"}[name]
            v = gv if tree is c.golden else tvals[name]
            tree.ge(d, grp, ty, name, i + 1, base + 10 * (i + 1), ins=[tensor(x, 1)], outs=[tensor(v, dt)])
    c.single_op_groups()
    m = metrics(mm, tvals["matmul_fp32"])
    assert m["max_rel"] < 0.01 and m["cosine"] > 0.99
    strict_cos = 1 - (1 - m["cosine"]) / 4          # matmul_fp32 fails it, by a wide margin
    cos_arg = f"{strict_cos:.12f}"
    strict_cos = float(cos_arg)
    r1 = c.run("default", exit_code=1)
    assert [p["passed"] for p in r1["pairs"] if p["io"] == "output"] == [True, False, False]
    outs = lambda run: [p["passed"] for p in run["pairs"] if p["io"] == "output"]  # noqa: E731
    r2 = c.run("cosine", ["--cosine", cos_arg], thresholds={"cosine": strict_cos}, exit_code=1)
    assert outs(r2) == [False, False, False]
    r3 = c.run("max_rel", ["--max-rel", "0.05"], thresholds={"max_rel": 0.05}, exit_code=0)
    assert outs(r3) == [True, True, True]
    r4 = c.run("dtype_tight", ["--max-rel", "0.05", "--dtype-threshold", "float16=0.98,0.015"],
               thresholds={"max_rel": 0.05}, per_dtype={"float16": (0.98, 0.015)}, exit_code=1)
    assert outs(r4) == [True, False, True]
    r5 = c.run("cosine_dtype_loose", ["--cosine", cos_arg, "--dtype-threshold", "float16=0.98,0.05"],
               thresholds={"cosine": strict_cos}, per_dtype={"float16": (0.98, 0.05)}, exit_code=1)
    assert outs(r5) == [False, True, False]
    c.checks["cosine_arg"] = cos_arg
    return c


def case_mapping(out: Path) -> Compare:
    c = Compare(out, "mapping", "golden attn_qkv_MatMul is the target's MatMulV2_17 (renamed by the "
                "compiler): with --mapping mapping.csv (header line + one row) it is compared io by io "
                "(matched_by mapping); attn_Softmax matches by name. Without the mapping the two "
                "MatMul ops are unmatched. Everything compared passes: exit 0")
    r = rng(141)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 12)).astype(np.float32)
    q = (x @ w).astype(np.float32)
    s = softmax(q).astype(np.float32)
    for tree, grp, d, base, mname in ((c.golden, "g", "20241121120000/0", T0, "attn_qkv_MatMul"),
                                      (c.target, "t", "20241122120000/0", T0 + 77, "MatMulV2_17")):
        jit = tree is c.target
        tree.ge(d, grp, "MatMul", mname, 1, base + 10, ins=[tensor(x, 1), tensor(w, 1)],
                outs=[tensor(jitter(q, rng(142)) if jit else q, 1)])
        tree.ge(d, grp, "Softmax", "attn_Softmax", 2, base + 20, ins=[tensor(q, 1)],
                outs=[tensor(jitter(s, rng(143)) if jit else s, 1)])
    (c.dir / "mapping.csv").write_text("golden_name,target_name\nattn_qkv_MatMul,MatMulV2_17\n")
    c.single_op_groups()
    res = c.run("mapped", ["--mapping", "{case}/mapping.csv"], mapping={"MatMulV2_17": "attn_qkv_MatMul"},
                exit_code=0)
    assert {p["matched_by"] for p in res["pairs"] if p["op_name"] == "MatMulV2_17"} == {"mapping"}
    res = c.run("unmapped", exit_code=0)
    assert len(res["unmatched"]["golden"]) == 3 and len(res["unmatched"]["target"]) == 3
    return c


def case_single_files(out: Path) -> Compare:
    c = Compare(out, "single_files", "GOLDEN and TARGET given as single dump files (v2 golden, v1 target "
                "with inline data): one group each, all pass, exit 0")
    r = rng(151)
    x = r.uniform(-1, 1, (5, 3)).astype(np.float32)
    o = np.exp(x).astype(np.float32)
    go = c.golden.ge("", "g", "Exp", "exp_1", 1, T0 + 10, ins=[tensor(x, 1)], outs=[tensor(o, 1)])
    to = c.target.ge("", "t", "Exp", "exp_1", 9, T0 + 900, ins=[tensor(x, 1)],
                     outs=[tensor(jitter(o, rng(152)), 1)], framing="v1")
    c.key("golden", "g", "*", "*", "*", "*")   # a single file shows no directory layout
    c.key("target", "t", "*", "*", "*", "*")
    c.pair_groups("g", "t", ["only group", "rank/device/model/step"])
    # single-file roots: the files in JSON are the paths as given, i.e. the roots themselves
    run = c.run("default", exit_code=0, golden_arg=f"golden/{go.order[2]}", target_arg=f"target/{to.order[2]}")
    for p in run["pairs"]:
        p["golden_file"], p["target_file"] = "", ""
    return c


def case_npy_files(out: Path) -> Compare:
    c = Compare(out, "npy_files", "GOLDEN and TARGET given as two bare .npy files of other names (a "
                "kernel test's golden_c.npy and its out_c.npy, by np.save): the command line pairs them "
                "(matched_by files); the float16 output perturbed by 5e-2: exit 1")
    r = rng(161)
    gold = r.uniform(-1, 1, (8, 8)).astype(np.float16)
    c.golden.npy_file("golden_c.npy", "g", gold, 2)
    c.target.npy_file("out_c.npy", "t", perturb(gold.astype(np.float32), rng(162), rel=5e-2), 2)
    c.key("golden", "g", "*", "*", "*", "*")   # a single file shows no directory layout
    c.key("target", "t", "*", "*", "*", "*")
    c.pair_groups("g", "t", ["only group", "rank/device/model/step"])
    run = c.run("default", exit_code=1, golden_arg="golden/golden_c.npy", target_arg="target/out_c.npy",
                files="golden_c")
    assert [p["matched_by"] for p in run["pairs"]] == ["files"]
    # single-file roots: the files in JSON are the roots themselves
    for p in run["pairs"] + [g[k] for g in run["groups"] for k in ("first_divergence", "origin") if g[k]]:
        if "golden_file" in p:
            p["golden_file"], p["target_file"] = "", ""
    return c


def ge_graph_text(name, ops) -> str:
    """A GE graph dump (`ge_proto_*_Build.txt`, protobuf text of ge.proto GraphDef, spec §8.3):
    ops = [(name, type, [input "src:index", ...])]."""
    lines = ["graph {", f'  name: "{name}"']
    for op_name, op_type, inputs in ops:
        lines += ["  op {", f'    name: "{op_name}"', f'    type: "{op_type}"']
        lines += [f'    input: "{i}"' for i in inputs]
        lines += ["    output_desc {", "      dtype: DT_FLOAT", '      layout: "ND"', "    }", "  }"]
    return "\n".join(lines + ["}"]) + "\n"


def case_graph(out: Path) -> Compare:
    c = Compare(out, "graph_evidence", "dump_mode output: neither run dumped inputs. Relu_3's output is "
                "perturbed. Without --graph the origin is Relu_3 with evidence none; with --graph "
                "ge_proto_00000099_Build.txt (Relu_3 <- Add_2:0, whose output pair passes) the origin "
                "is Relu_3 with evidence graph")
    r = rng(201)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    b = r.uniform(-1, 1, (8,)).astype(np.float32)
    mm = (x @ w).astype(np.float32)
    add = (mm + b).astype(np.float32)
    relu = np.maximum(add, 0)
    mul = (relu * 1.5).astype(np.float32)
    relu_t = perturb(relu, rng(202))
    mul_t = (relu_t * 1.5).astype(np.float32)
    for tree, grp, time, base, vals in ((c.golden, "g", "20241121120000", T0, (mm, add, relu, mul)),
                                        (c.target, "t", "20241122120000", T0 + 5_000,
                                         (jitter(mm, rng(203)), jitter(add, rng(204)), relu_t, mul_t))):
        d = torchair_dir(time, 2, 1, 0)
        for i, (ty, name) in enumerate((("MatMul", "MatMul_1"), ("Add", "Add_2"), ("Relu", "Relu_3"),
                                        ("Mul", "Mul_4"))):
            tree.ge(d, grp, ty, name, i + 1, base + 10 * (i + 1), outs=[tensor(vals[i], 1)])
    (c.dir / "ge_proto_00000099_Build.txt").write_text(ge_graph_text("ge_default_20241122120000_2", [
        ("x", "Data", []), ("w", "Const", []), ("b", "Const", []), ("s", "Const", []),
        ("MatMul_1", "MatMul", ["x:0", "w:0"]), ("Add_2", "Add", ["MatMul_1:0", "b:0"]),
        ("Relu_3", "Relu", ["Add_2:0", "MatMul_1:-1"]), ("Mul_4", "Mul", ["Relu_3:0", "s:0"])]))
    c.key("golden", "g", 0, 0, ["ge_default_20241121120000_2", "2"], 0)
    c.key("target", "t", 0, 0, ["ge_default_20241122120000_2", "2"], 0)
    c.pair_groups("g", "t", ["rank/device/model/step", "only group"])
    res = c.run("no_graph", exit_code=1)
    assert res["groups"][0]["origin"]["op_name"] == "Relu_3" and res["groups"][0]["origin"]["evidence"] == "none"
    res = c.run("graph", ["--graph", "{case}/ge_proto_00000099_Build.txt"], exit_code=1)
    res["groups"][0]["origin"]["evidence"] = "graph"   # Add_2:0, the producer, passes
    return c


def fx_graph_text(ops, graph="graph_1", modules=None) -> str:
    """torchair's `dynamo_original_graph_*.txt` (debug.graph_dump.type = "txt"): the GE GraphDef
    converted from the FX graph in protobuf text, ops at the top level (msprobe's torchair
    compare reads `op { name … output_desc { attr { key: "_fx_tensor_name" value { s: … } } } }`).
    ops = [(name, type, [inputs], [fx tensor name per output or None])]; modules = {op name: the
    `nn_module_stack` attribute torchair sets on the op (the Python repr of FX's dict)}."""
    lines = [f'name: "{graph}"']
    for op_name, op_type, inputs, fx_names in ops:
        lines += ["op {", f'  name: "{op_name}"', f'  type: "{op_type}"']
        lines += [f'  input: "{i}"' for i in inputs]
        module = (modules or {}).get(op_name)
        if module is not None:
            esc = module.replace("\\", "\\\\").replace('"', '\\"')
            lines += ["  attr {", '    key: "nn_module_stack"', "    value {", f'      s: "{esc}"', "    }", "  }"]
        for fx in fx_names:
            lines += ["  output_desc {", '    name: "y"', "    dtype: DT_FLOAT16", '    layout: "ND"']
            if fx is not None:
                lines += ["    attr {", '      key: "_fx_tensor_name"', "      value {", f'        s: "{fx}"',
                          "      }", "    }"]
            lines += ["  }"]
        lines += ["}"]
    return "\n".join(lines) + "\n"


def case_fx_graph(out: Path) -> Compare:
    c = Compare(out, "fx_graph", "golden: a torchair FX data dump (data_dump/1/gm_<time>_dump/"
                "{node}-{target}.{INPUT|OUTPUT}.{i}[.{j}].{stamp}.npy, fp32, cat's list argument one file "
                "per element); target: a GE dump (fp16) whose op names (MatMul_1, Add_2, ConcatD_3, Relu_4) "
                "are GE names, tied to the FX nodes only by the target tree's "
                "dynamo_original_graph_1_rank_0_pid_4242_ts_<stamp>.txt (_fx_tensor_name on each output). "
                "Add_2's output perturbed by 1e-2: origin Add_2 (its inputs pass), carried on through "
                "ConcatD_3 and Relu_4. The GE op Cast_9 has no FX name and no golden: unmatched")
    r = rng(301)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    b = r.uniform(-1, 1, (8,)).astype(np.float32)
    y = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    mm = (x @ w).astype(np.float32)
    add = (mm + b).astype(np.float32)
    cat = np.concatenate([add, y], axis=1)
    relu = np.maximum(cat, 0)
    gd = "data_dump/1/gm_20241122115959000000_dump"
    st = ["20241122120000000001", "20241122120000000002", "20241122120000000003", "20241122120000000004"]
    c.golden.fx_npy(gd, "g", "mm", "aten.mm.default", st[0], ins=[(x, 1), (w, 1)], outs=[(mm, 1)])
    c.golden.fx_npy(gd, "g", "add", "aten.add.Tensor", st[1], ins=[(mm, 1), (b, 1)], outs=[(add, 1)])
    c.golden.fx_npy(gd, "g", "cat", "aten.cat.default", st[2], ins=[[(add, 1), (y, 1)]], outs=[(cat, 1)])
    c.golden.fx_npy(gd, "g", "relu", "aten.relu.default", st[3], ins=[(cat, 1)], outs=[(relu, 1)])
    add_t = perturb(add, rng(302)).astype(np.float16)
    cat_t = np.concatenate([add_t, y.astype(np.float16)], axis=1)
    relu_t = np.maximum(cat_t, 0)
    td = torchair_dir("20241122120000", 1, 1, 0)
    tb = T0 + 9_000_000
    h = lambda a: tensor(a, 2)
    c.target.ge(td, "t", "MatMul", "MatMul_1", 1, tb + 10, ins=[h(x), h(w)], outs=[h(mm)])
    c.target.ge(td, "t", "Add", "Add_2", 2, tb + 20, ins=[h(mm), h(b)], outs=[h(add_t)])
    c.target.ge(td, "t", "ConcatD", "ConcatD_3", 3, tb + 30, ins=[h(add_t), h(y)], outs=[h(cat_t)])
    c.target.ge(td, "t", "Relu", "Relu_4", 4, tb + 40, ins=[h(cat_t)], outs=[h(relu_t)])
    c.target.ge(td, "t", "Cast", "Cast_9", 5, tb + 50, ins=[h(relu_t)], outs=[tensor(relu_t, 1)])
    c.target.write("dynamo_original_graph_1_rank_0_pid_4242_ts_20241122115958123456.txt", fx_graph_text([
        ("arg0_1", "Data", [], [None]), ("arg1_1", "Data", [], [None]),
        ("MatMul_1", "MatMul", ["arg0_1:0", "arg1_1:0"], ["mm-aten.mm.default.OUTPUT.0"]),
        ("Add_2", "Add", ["MatMul_1:0", "arg2_1:0"], ["add-aten.add.Tensor.OUTPUT.0"]),
        ("ConcatD_3", "ConcatD", ["Add_2:0", "arg3_1:0"], ["cat-aten.cat.default.OUTPUT.0"]),
        ("Relu_4", "Relu", ["ConcatD_3:0"], ["relu-aten.relu.default.OUTPUT.0"]),
        ("NetOutput", "NetOutput", ["Relu_4:0"], [])]).encode())
    c.key("golden", "g", None, None, None, None)
    c.key("target", "t", 0, 0, ["ge_default_20241122120000_1", "1"], 0)
    c.pair_groups("g", "t", "only group")
    fx = {"MatMul_1": "mm-aten.mm.default", "Add_2": "add-aten.add.Tensor",
          "ConcatD_3": "cat-aten.cat.default", "Relu_4": "relu-aten.relu.default"}
    res = c.run("default", exit_code=1, fx=fx)
    grp = res["groups"][0]
    assert grp["origin"]["op_name"] == "Add_2" and grp["origin"]["evidence"] == "inputs"
    assert grp["first_divergence"]["op_name"] == "Add_2"
    assert [u["op_name"] for u in res["unmatched"]["target"]] == ["Cast_9", "Cast_9"]
    return c


def case_ranks_loops(out: Path) -> Compare:
    c = Compare(out, "ranks_loops", "torchair worldsize2: rank 0 on device 0 and rank 1 on device 1 in each "
                "run (each rank with its own time directory, different between the runs); in every group "
                "Add_1 runs three times in a loop between Mul_2 calls: the k-th Add_1 of the target is "
                "compared with the k-th of the golden. Rank 1's second Add_1 output is perturbed")
    for tree, side, times, base in ((c.golden, "golden", ("20241121120000", "20241121120002"), T0),
                                    (c.target, "target", ("20241122080000", "20241122080001"), T0 + 60_000_000)):
        for rank in (0, 1):
            r = rng(300 + rank)
            grp = f"{side[0]}{rank}"
            d = torchair_dir(times[rank], 1, 1 + rank, 0, rank=rank, device=rank, ws=2)
            h = r.uniform(-1, 1, (3, 4)).astype(np.float32)
            for k in range(3):
                y = r.uniform(-1, 1, (3, 4)).astype(np.float32)
                out_ = (h + y).astype(np.float32)
                if tree is c.target:
                    out_ = perturb(out_, rng(310 + k)) if (rank, k) == (1, 1) else jitter(out_, rng(320 + k))
                tree.ge(d, grp, "Add", "Add_1", 10 + 2 * k, base + rank * 1000 + 20 * k + 1,
                        ins=[tensor(h, 1), tensor(y, 1)], outs=[tensor(out_, 1)])
                h = (out_ * 0.5).astype(np.float32)
                tree.ge(d, grp, "Mul", "Mul_2", 11 + 2 * k, base + rank * 1000 + 20 * k + 11,
                        ins=[tensor(out_, 1)], outs=[tensor(h, 1)])
            c.key(side, grp, rank, rank, [f"ge_default_{times[rank]}_1", "1"], 0)
    for rank in (0, 1):
        c.pair_groups(f"g{rank}", f"t{rank}", "rank/device/model/step")
    res = c.run("default", exit_code=1)
    fd = res["groups"][1]["first_divergence"]
    assert fd["op_name"] == "Add_1" and res["groups"][0]["failed"] == 0
    assert fd["target_file"].split(".")[-3] == "12", fd   # the second Add_1 (task 12)
    return c


def case_explicit_groups(out: Path) -> Compare:
    c = Compare(out, "explicit_groups", "two models per run whose graph indices differ between the runs "
                "(golden ge_default_*_1 / _2, target ge_default_*_5 / _6): no group pairs by key and no "
                "side has a single group, so nothing pairs (exit 2) until --group GOLDEN_DIR=TARGET_DIR "
                "pairs golden _1 with target _6 and golden _2 with target _5 (paired_by --group)")
    gt, tt = "20241121120000", "20241122120000"
    r = rng(401)
    a = r.uniform(-1, 1, (6,)).astype(np.float32)
    b = r.uniform(-1, 1, (6,)).astype(np.float32)
    dirs = {}
    for tree, side, time, base, models in ((c.golden, "golden", gt, T0, ((1, "conv_a"), (2, "fc_b"))),
                                           (c.target, "target", tt, T0 + 900, ((6, "conv_a"), (5, "fc_b")))):
        for n, (graph, name) in enumerate(models):
            d = f"{time}/0/ge_default_{time}_{graph}/{graph}/0"
            grp = f"{side[0]}{graph}"
            v = a if name == "conv_a" else b
            tree.ge(d, grp, "Conv2D" if name == "conv_a" else "MatMul", name, n + 1, base + 10 * (n + 1),
                    ins=[tensor(v, 1)], outs=[tensor(np.tanh(v), 1)])
            c.key(side, grp, None, 0, [f"ge_default_{time}_{graph}", str(graph)], 0)
            dirs[grp] = d
    c.run("no_group", exit_code=2)
    c.pair_groups("g1", "t6", "--group")
    c.pair_groups("g2", "t5", "--group")
    args = []
    for gg, tg in (("g1", "t6"), ("g2", "t5")):
        args += ["--group", f"{{case}}/golden/{dirs[gg]}={{case}}/target/{dirs[tg]}"]
    c.run("group", args, exit_code=0)
    return c


def case_large(out: Path) -> Compare:
    c = Compare(out, "large", "size matters: a 4.4M-element fp16 target output against an fp32 golden, at an "
                "odd file offset, with NaN/+inf planted on the target only on the elements that straddle "
                "the 64 KiB, 1, 4 and 8 MiB read-chunk boundaries (and NaN on both sides at the first "
                "element), plus a 1000x1000 FRACTAL_NZ fp16 output with one perturbed row: a streaming "
                "comparison must neither lose nor double-count elements")
    r = rng(501)
    g0 = r.uniform(-2, 2, (4400, 1000)).astype(np.float32)
    g0[0, 0] = np.nan
    t0 = g0.astype(np.float16)
    g1 = r.uniform(-2, 2, (1000, 1000)).astype(np.float32)
    t1 = g1.astype(np.float16)
    t1[517] = perturb(t1[517], rng(502), rel=2e-2)
    outs = [tensor(t0, 2), tensor(t1, 2, "FRACTAL_NZ", 16)]
    for dfx in ("pad", "pads"):
        data_off = 8 + g.dump_header("large", T0, [], outs, dfx=dfx).ByteSize()
        if data_off % 2 == 1:
            break
    assert data_off % 2 == 1
    flat = t0.reshape(-1)
    planted = []
    for j, boundary in enumerate((1 << 16, 1 << 20, 1 << 22, 1 << 23)):
        i = (boundary - data_off) // 2
        flat[i] = np.nan if j % 2 == 0 else np.inf
        planted.append(i)
    outs[0] = tensor(t0, 2)
    c.golden.ge("20241121120000/0", "g", "MatMul", "large", 1, T0 + 10, outs=[tensor(g0, 1), tensor(g1, 1)])
    op = c.target.ge("20241122120000/0", "t", "MatMul", "large", 1, T0 + 20, outs=outs, dfx=dfx)
    (hlen,) = struct.unpack_from("<Q", (c.target.root / op.order[2]).read_bytes()[:8])
    assert 8 + hlen == data_off
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    assert res["pairs"][0]["metrics"]["nan_inf_one_side"] == 4 and not res["pairs"][1]["passed"]
    c.checks["planted"] = planted
    return c


def case_dtypes(out: Path) -> Compare:
    c = Compare(out, "dtypes", "mixed dtypes with the same shape are compared in float64 after exact "
                "decoding: bf16 golden vs fp16 target, fp32 vs fp8 e4m3fn, int32 vs int32 (one element "
                "off), int8 vs int32, uint8 vs uint8, bool vs bool, fp64 vs fp32; TLV and v1 framings")
    r = rng(601)
    f = r.uniform(-3, 3, (5, 7))
    i32 = r.integers(-1000, 1000, (24,)).astype(np.int32)
    i32_t = i32.copy()
    i32_t[5] += 1
    i8 = r.integers(-100, 100, (4, 4)).astype(np.int8)
    u8 = r.integers(1, 255, (10,)).astype(np.uint8)
    bl = r.integers(0, 2, (9,)).astype(bool)
    cases = [("Cast", "cast_bf16_fp16", (f, 27), (f, 2), "v2"), ("Cast", "cast_fp8", (f, 1), (f, 35), "tlv"),
             ("Gather", "gather_i32", (i32, 7), (i32_t, 7), "v2"), ("Cast", "cast_i8_i32", (i8, 3), (i8, 7), "v1"),
             ("Add", "add_u8", (u8, 4), (u8, 4), "v2"), ("Equal", "equal_bool", (bl, 11), (bl, 11), "tlv"),
             ("Cast", "cast_f64", (f, 12), (f, 1), "v2")]
    for tree, grp, d, base in ((c.golden, "g", "20241121120000/0", T0), (c.target, "t", "20241122120000/0", T0 + 3)):
        for i, (ty, name, gv, tv, framing) in enumerate(cases):
            a, dt = gv if tree is c.golden else tv
            tree.ge(d, grp, ty, name, i + 1, base + 10 * (i + 1), outs=[tensor(a, dt)],
                    framing=framing if tree is c.target else "v2")
    c.single_op_groups()
    res = c.run("default", exit_code=1)
    failed = [p["op_name"] for p in res["pairs"] if not p["passed"]]
    assert failed == ["cast_fp8"], failed    # fp8 e4m3fn keeps 3 mantissa bits: max_rel ~6%
    return c


def case_no_pairs(out: Path) -> Compare:
    c = Compare(out, "no_pairs", "no tensor of the target matches any of the golden: no pairs can be "
                "formed, exit 2")
    r = rng(161)
    x = r.uniform(-1, 1, (4,)).astype(np.float32)
    c.golden.ge("20241121120000/0", "g", "Abs", "abs_golden_only", 1, T0 + 1, ins=[tensor(x, 1)], outs=[tensor(x, 1)])
    c.target.ge("20241122120000/0", "t", "Neg", "neg_target_only", 1, T0 + 2, ins=[tensor(x, 1)], outs=[tensor(-x, 1)])
    c.single_op_groups()
    c.run("default", exit_code=2)
    return c


# ---------------------------------------------------------------------------------------------
# dump-convert
# ---------------------------------------------------------------------------------------------

class Convert:
    def __init__(self, out: Path, name: str, description: str):
        self.name, self.description = name, description
        self.dir = out / f"convert_{name}"
        if self.dir.exists():
            g._rmtree(self.dir)
        self.tree = Tree(self.dir / "tree")
        self.expected = self.dir / "expected"
        self.expected.mkdir(parents=True)
        self.files: list[dict] = []
        self.failed: list[dict] = []

    def expect(self, op: OpRec):
        for io in ("input", "output"):
            for i, tt in enumerate(getattr(op, io + "s")):
                a = tt.arr
                if tt.dt in (27, 34, 35):   # bf16 / fp8 written as float32, like msaccucmp
                    a = a.astype(np.float32)
                rel = f"{tt.file}.{io}.{i}.npy"
                p = self.expected / rel
                p.parent.mkdir(parents=True, exist_ok=True)
                np.save(p, a.copy(order="C"))   # (np.ascontiguousarray would make a 0-d array 1-d)
                self.files.append({"npy": rel, "descr": a.dtype.str, "shape": list(a.shape)})

    def finish(self, exit_code):
        truth = {"case": self.name, "description": self.description, "exit_code": exit_code,
                 "files": sorted(self.files, key=lambda f: f["npy"]), "failed": self.tree.errors}
        (self.dir / "truth.json").write_text(json.dumps(truth, indent=1, sort_keys=True) + "\n")


def convert_formats(out: Path):
    c = Convert(out, "formats", "the device-format tensors of the `formats` compare case (FRACTAL_NZ, "
                "NC1HWC0, NDC1HWC0, FRACTAL_Z, padding sliced off) plus ND inputs, in a torchair tree")
    d = torchair_dir("20241122120000", 1, 1, 0)
    for i, (ty, name, ga, gdt, mode, tdt, fmt, c0) in enumerate(formats_tensors(171)):
        a = ga.astype(NP[tdt])
        op = c.tree.ge(d, "t", ty, name, i + 1, T0 + 10 * (i + 1), ins=[tensor(a.ravel()[:7], tdt)],
                       outs=[tensor(a, tdt, fmt, c0)])
        c.expect(op)
    c.finish(0)


def convert_groups(out: Path):
    c = Convert(out, "groups", "grouped convolution weights in FRACTAL_Z (sub-format = groups, in the format "
                "value's bits 8-23): depthwise, channels straddling a C0 block, several shared blocks, a last "
                "block with fewer groups; fp16 (C0 16), fp32 (C0 16) and int8 (C0 32), written element by "
                "element from the spec's formula; each .npy must hold the NCHW weights byte for byte")
    r = rng(321)
    d = torchair_dir("20241122120000", 1, 1, 0)
    task = 0
    for groups, cin, cout, h, w in ((4, 1, 1, 3, 3), (3, 5, 2, 1, 2), (8, 3, 6, 2, 1), (2, 20, 16, 1, 1)):
        for dt, k in ((2, 16), (1, 16), (3, 32)):
            task += 1
            a = r.uniform(-100, 100, (groups * cout, cin, h, w)).astype(NP[dt])
            if dt != 3:
                a = a / 37
            a = a.astype(NP[dt])
            dev = to_fractal_z_groups(a, groups, k)
            t = g.Tensor(a, dt, fmt=FMT["FRACTAL_Z"] | (groups << 8), raw=dev.tobytes(), shape=list(dev.shape),
                         orig=list(a.shape))
            op = c.tree.ge(d, "t", "Conv2D", f"conv_g{groups}_c{cin}_o{cout}_{DT_NAME[dt]}", task,
                           T0 + 10 * task, outs=[t])
            c.expect(op)
    c.finish(0)


def convert_layouts(out: Path):
    c = Convert(out, "layouts", "every device format npgx converts (LAYOUTS: NC1HWC0 and _C04, NDC1HWC0, "
                "FRACTAL_Z, FRACTAL_Z_3D, FRACTAL_NZ, C1HWNCoC0; logical axes in each order GE takes; odd "
                "sizes) in fp16, fp32 and int8, written by numpy; some as v1 files; each .npy must hold "
                "numpy's logical tensor byte for byte")
    r = rng(311)
    d = torchair_dir("20241122120000", 1, 1, 0)
    task = 0
    for fmt, order, shape in LAYOUTS:
        for dt in LAYOUT_DTYPES:
            task += 1
            a = layout_values(r, shape, dt)
            op = c.tree.ge(d, "t", "TransData", layout_name(fmt, order, shape, dt), task, T0 + 10 * task,
                           outs=[layout_tensor(a, dt, fmt, order, layout_c0(fmt, dt))],
                           framing="v1" if task % 5 == 0 else "v2")
            c.expect(op)
    c.finish(0)


def convert_dtypes(out: Path):
    c = Convert(out, "dtypes", "bf16 and fp8 e4m3fn written as float32; fp16, fp32, int32, int8, bool kept; "
                "v1 and TLV framings; a 0-d scalar; two directories mirrored under -o")
    r = rng(181)
    d1, d2 = "20241122120000/0", "20241122120000/1"
    ops = [
        c.tree.ge(d1, "t", "Cast", "cast_bf16", 1, T0 + 10, ins=[tensor(r.uniform(-3, 3, (4, 6)), 1)],
                  outs=[tensor(r.uniform(-3, 3, (4, 6)), 27)]),
        c.tree.ge(d1, "t", "Cast", "cast_fp8", 2, T0 + 20, ins=[tensor(r.uniform(-3, 3, (9,)), 2)],
                  outs=[tensor(r.uniform(-3, 3, (9,)), 35)]),
        c.tree.ge(d1, "t", "Gather", "gather_int", 3, T0 + 30,
                  ins=[tensor(r.uniform(-3, 3, (5, 2)), 1), tensor(np.arange(-3, 3, dtype=np.int32), 7)],
                  outs=[tensor(np.array([-128, 0, 5, 127], np.int8), 3), tensor(np.array([True, False, True]), 11)]),
        c.tree.ge(d2, "t", "Mul", "mul_v1", 4, T0 + 40, ins=[tensor(r.uniform(-3, 3, (3, 3)), 2)],
                  outs=[tensor(r.uniform(-3, 3, (3, 3)), 1)], framing="v1"),
        c.tree.ge(d2, "t", "Sub", "sub_tlv", 5, T0 + 50, ins=[tensor(r.uniform(-3, 3, (2, 2)), 1)],
                  outs=[tensor(r.uniform(-3, 3, (2, 5)), 27), tensor(np.array(2.5, np.float32), 1)], framing="tlv"),
    ]
    for op in ops:
        c.expect(op)
    c.finish(0)


def convert_bad(out: Path):
    c = Convert(out, "bad", "one good dump and one garbage file named like a dump: the good one is "
                "converted, the bad one is listed, exit 1")
    r = rng(191)
    op = c.tree.ge("20241122120000/0", "t", "Add", "add_good", 1, T0 + 10,
                   ins=[tensor(r.uniform(-1, 1, (3,)), 1)], outs=[tensor(r.uniform(-1, 1, (3,)), 2)])
    c.expect(op)
    c.tree.error(f"20241122120000/0/Add.add_bad.2.1.{T0 + 20}", struct.pack("<Q", 1 << 40) + b"junk" * 8,
                 ["header", "length", "exceed", "larger", "beyond", "truncat"], "header length 2^40")
    c.finish(1)


# ---------------------------------------------------------------------------------------------

COMPARE_CASES = [case_chain, case_chain_input, case_chain_side, case_nan, case_fused, case_formats,
                 case_formats_both, case_layouts,
                 case_missing_extra, case_shape, case_pt, case_npy_vs_ge, case_corrupt, case_thresholds,
                 case_mapping, case_single_files, case_npy_files, case_graph, case_fx_graph, case_ranks_loops, case_explicit_groups, case_large, case_dtypes,
                 case_no_pairs]
CONVERT_CASES = [convert_formats, convert_layouts, convert_groups, convert_dtypes, convert_bad]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    args = ap.parse_args(argv)
    out = args.out
    marker = "GENERATED_BY_gen_compare_fixtures"
    if out.exists() and any(out.iterdir()) and not (out / marker).exists():
        sys.exit(f"gen_compare_fixtures.py: refusing to replace {out}: not empty and has no {marker}")
    if out.exists():
        g._rmtree(out)
    out.mkdir(parents=True)
    (out / marker).write_text("")
    lines = []
    for make in COMPARE_CASES:
        c = make(out)
        truth = c.finish()
        r0 = truth["runs"][0]
        lines.append(f"{c.name}: {r0['summary']['pairs']} pairs, {r0['summary']['failed']} failed, "
                     f"{len(truth['runs'])} runs, exit {r0['exit_code']}")
    for make in CONVERT_CASES:
        make(out)
        lines.append(f"convert: {make.__name__}")
    (out / "CASES.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
