#!/usr/bin/env python3
"""Independent writer of CANN dump fixtures for `npgx dump-scan`.

Everything here comes from the written specification (`shared/specs/dump-data.md`) and the output
contract (`docs/dump-scan.md`), never from the Rust code under test:

* the `toolkit.dumpdata.DumpData` message classes are built at run time with Python's official
  protobuf runtime from a `FileDescriptorProto` whose field numbers are typed in from spec §1.4;
* tensors are written with numpy and ml_dtypes (bf16, fp8 e4m3fn / e5m2), `.pt` files with
  `torch.save`;
* each fixture tree `OUT/<case>/root/` has an `OUT/<case>/expected.json` beside it whose numbers
  are computed from the numpy arrays written — never by running npgx.

Usage:
    gen_dump_fixtures.py --out DIR              all fixture trees (needs torch for the .pt case)
    gen_dump_fixtures.py --out DIR --example    only the small example tree, written into DIR itself
    gen_dump_fixtures.py --out DIR --bench-gib N  a >= N GiB tree of fp16/fp32 dumps for the benchmark
    gen_dump_fixtures.py --out DIR --bench-files N [--per-dir M]  N small dumps (hard links) for the
                                                    file-count benchmark, M per step directory

Output is deterministic: fixed seeds, fixed timestamps, sorted JSON.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import shutil
import stat
import struct
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import ml_dtypes
import numpy as np
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# ---------------------------------------------------------------------------------------------
# Schema (spec §1.4). Field numbers are the contract; names only help readability.
# ---------------------------------------------------------------------------------------------

DT_NAMES = {
    0: "DT_UNDEFINED", 1: "DT_FLOAT", 2: "DT_FLOAT16", 3: "DT_INT8", 4: "DT_UINT8", 5: "DT_INT16",
    6: "DT_UINT16", 7: "DT_INT32", 8: "DT_INT64", 9: "DT_UINT32", 10: "DT_UINT64", 11: "DT_BOOL",
    12: "DT_DOUBLE", 13: "DT_STRING", 14: "DT_DUAL_SUB_INT8", 15: "DT_DUAL_SUB_UINT8",
    16: "DT_COMPLEX64", 17: "DT_COMPLEX128", 18: "DT_QINT8", 19: "DT_QINT16", 20: "DT_QINT32",
    21: "DT_QUINT8", 22: "DT_QUINT16", 23: "DT_RESOURCE", 24: "DT_STRING_REF", 25: "DT_DUAL",
    26: "DT_VARIANT", 27: "DT_BF16", 28: "DT_INT4", 29: "DT_UINT1", 30: "DT_INT2", 31: "DT_UINT2",
    32: "DT_COMPLEX32", 33: "DT_HIFLOAT8", 34: "DT_FLOAT8_E5M2", 35: "DT_FLOAT8_E4M3FN",
    36: "DT_FLOAT8_E8M0", 37: "DT_FLOAT6_E3M2", 38: "DT_FLOAT6_E2M3", 39: "DT_FLOAT4_E2M1",
    40: "DT_FLOAT4_E1M2", 41: "DT_HIFLOAT4", 42: "DT_HIFLOAT4_SCALE",
}
DT = {v: k for k, v in DT_NAMES.items()}

FORMAT_NAMES = {
    0: "NCHW", 1: "NHWC", 2: "ND", 3: "NC1HWC0", 4: "FRACTAL_Z", 5: "NC1C0HWPAD", 6: "NHWC1C0",
    7: "FSR_NCHW", 8: "FRACTAL_DECONV", 9: "C1HWNC0", 10: "FRACTAL_DECONV_TRANSPOSE",
    11: "FRACTAL_DECONV_SP_STRIDE_TRANS", 12: "NC1HWC0_C04", 13: "FRACTAL_Z_C04", 14: "CHWN",
    15: "FRACTAL_DECONV_SP_STRIDE8_TRANS", 16: "HWCN", 17: "NC1KHKWHWC0", 18: "BN_WEIGHT",
    19: "FILTER_HWCK", 20: "HASHTABLE_LOOKUP_LOOKUPS", 21: "HASHTABLE_LOOKUP_KEYS",
    22: "HASHTABLE_LOOKUP_VALUE", 23: "HASHTABLE_LOOKUP_OUTPUT", 24: "HASHTABLE_LOOKUP_HITS",
    25: "C1HWNCoC0", 26: "MD", 27: "NDHWC", 28: "FRACTAL_ZZ", 29: "FRACTAL_NZ", 30: "NCDHW",
    31: "DHWCN", 32: "NDC1HWC0", 33: "FRACTAL_Z_3D", 34: "CN", 35: "NC", 36: "DHWNC",
    37: "FRACTAL_Z_3D_TRANSPOSE", 38: "FRACTAL_ZN_LSTM", 39: "FRACTAL_Z_G", 40: "RESERVED",
    41: "ALL", 42: "NULL", 43: "ND_RNN_BIAS", 44: "FRACTAL_ZN_RNN", 45: "YUV", 46: "YUV_A",
    47: "NCL", 48: "FRACTAL_Z_WINO", 49: "C1HWC0", 255: "FORMAT_MAX",
}
FMT = {v: k for k, v in FORMAT_NAMES.items()}

# ge::DataType (spec §1.4.3) -> proto OutputDataType, for TLV files.
GE_TO_PROTO = {0: 1, 1: 2, 2: 3, 3: 7, 4: 4, 6: 5, 7: 6, 8: 9, 9: 8, 10: 10, 11: 12, 12: 11,
               27: 27, 35: 34, 36: 35}
PROTO_TO_GE = {v: k for k, v in GE_TO_PROTO.items()}

# numpy storage type per proto dtype, and the saturation limit of the low-precision floats
# (docs/dump-scan.md: "65504 for fp16, 448 for fp8 e4m3fn, 57344 for fp8 e5m2, 3.3895e38 for bf16").
NP_TYPES = {
    1: np.dtype(np.float32), 2: np.dtype(np.float16), 3: np.dtype(np.int8), 4: np.dtype(np.uint8),
    5: np.dtype(np.int16), 6: np.dtype(np.uint16), 7: np.dtype(np.int32), 8: np.dtype(np.int64),
    9: np.dtype(np.uint32), 10: np.dtype(np.uint64), 11: np.dtype(np.bool_),
    12: np.dtype(np.float64), 27: np.dtype(ml_dtypes.bfloat16),
    34: np.dtype(ml_dtypes.float8_e5m2), 35: np.dtype(ml_dtypes.float8_e4m3fn),
    16: np.dtype(np.complex64), 17: np.dtype(np.complex128),
}
LIMITS = {
    2: 65504.0,
    27: float(ml_dtypes.finfo(ml_dtypes.bfloat16).max),
    34: 57344.0,
    35: 448.0,
}
FLOAT_DTS = {1, 2, 12, 27, 34, 35}

_F = descriptor_pb2.FieldDescriptorProto
T_DOUBLE, T_UINT64, T_INT32, T_FIXED64, T_FIXED32 = _F.TYPE_DOUBLE, _F.TYPE_UINT64, _F.TYPE_INT32, _F.TYPE_FIXED64, _F.TYPE_FIXED32
T_STRING, T_MESSAGE, T_BYTES, T_UINT32, T_ENUM, T_SINT64 = _F.TYPE_STRING, _F.TYPE_MESSAGE, _F.TYPE_BYTES, _F.TYPE_UINT32, _F.TYPE_ENUM, _F.TYPE_SINT64
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
PKG = "toolkit.dumpdata"


def build_messages(variant: str = "packed"):
    """DumpData & co. from a descriptor typed in from spec §1.4.

    variant: "packed" (proto3 default), "unpacked" (`Shape.dim` written one tag per value), or
    "future" (packed, plus fields of every wire type that the reader has never heard of).
    Returns a dict name -> message class.
    """
    fdp = descriptor_pb2.FileDescriptorProto(
        name=f"npgx_fixtures/{variant}/dump_data.proto", package=PKG, syntax="proto3")

    def enum(name, values):
        e = fdp.enum_type.add(name=name)
        for num, vname in sorted(values.items()):
            e.value.add(name=vname, number=num)

    enum("OutputDataType", DT_NAMES)
    enum("OutputFormat", {k: "FORMAT_" + v if not v.startswith("FORMAT_") else v
                          for k, v in FORMAT_NAMES.items()})
    enum("BufferType", {0: "L1"})
    enum("SpaceType", {0: "LOG"})

    def message(name, fields):
        m = fdp.message_type.add(name=name)
        for num, fname, ftype, label, tname in fields:
            f = m.field.add(name=fname, number=num, type=ftype, label=label)
            if tname:
                f.type_name = f".{PKG}.{tname}"
            if name == "Shape" and fname == "dim" and variant == "unpacked":
                f.options.packed = False
        return m

    message("Shape", [(1, "dim", T_UINT64, REP, None)]
            + ([(2, "future_rank_hint", T_UINT32, OPT, None)] if variant == "future" else []))
    message("OriginalOp", [
        (1, "name", T_STRING, OPT, None), (2, "output_index", T_UINT32, OPT, None),
        (3, "data_type", T_ENUM, OPT, "OutputDataType"), (4, "format", T_ENUM, OPT, "OutputFormat")])
    message("DimRange", [(1, "dim_start", T_UINT64, OPT, None), (2, "dim_end", T_UINT64, OPT, None)])
    message("FutureInfo", [(1, "note", T_STRING, OPT, None), (2, "value", T_UINT64, OPT, None)])
    out_fields = [
        (1, "data_type", T_ENUM, OPT, "OutputDataType"), (2, "format", T_ENUM, OPT, "OutputFormat"),
        (3, "shape", T_MESSAGE, OPT, "Shape"), (4, "original_op", T_MESSAGE, OPT, "OriginalOp"),
        (5, "data", T_BYTES, OPT, None), (6, "size", T_UINT64, OPT, None),
        (7, "original_shape", T_MESSAGE, OPT, "Shape"), (8, "sub_format", T_INT32, OPT, None),
        (9, "address", T_UINT64, OPT, None), (10, "dim_range", T_MESSAGE, REP, "DimRange"),
        (11, "offset", T_UINT64, OPT, None), (12, "arg_index", T_UINT32, OPT, None)]
    in_fields = [
        (1, "data_type", T_ENUM, OPT, "OutputDataType"), (2, "format", T_ENUM, OPT, "OutputFormat"),
        (3, "shape", T_MESSAGE, OPT, "Shape"), (4, "data", T_BYTES, OPT, None),
        (5, "size", T_UINT64, OPT, None), (6, "original_shape", T_MESSAGE, OPT, "Shape"),
        (7, "sub_format", T_INT32, OPT, None), (8, "address", T_UINT64, OPT, None),
        (9, "offset", T_UINT64, OPT, None), (10, "arg_index", T_UINT32, OPT, None),
        (11, "input_type", T_UINT32, OPT, None)]
    dump_fields = [
        (1, "version", T_STRING, OPT, None), (2, "dump_time", T_UINT64, OPT, None),
        (3, "output", T_MESSAGE, REP, "OpOutput"), (4, "input", T_MESSAGE, REP, "OpInput"),
        (5, "buffer", T_MESSAGE, REP, "OpBuffer"), (6, "op_name", T_STRING, OPT, None),
        (7, "attr", T_MESSAGE, REP, "OpAttr"), (8, "space", T_MESSAGE, REP, "Workspace"),
        (9, "dfx_message", T_STRING, OPT, None)]
    if variant == "future":
        out_fields += [(30, "future_out_note", T_STRING, OPT, None),
                       (31, "future_out_fixed", T_FIXED64, OPT, None)]
        in_fields += [(30, "future_in_count", T_UINT64, OPT, None),
                      (31, "future_in_fixed32", T_FIXED32, OPT, None)]
        dump_fields += [(20, "future_fixed32", T_FIXED32, OPT, None),
                        (21, "future_fixed64", T_FIXED64, OPT, None),
                        (22, "future_info", T_MESSAGE, OPT, "FutureInfo"),
                        (23, "future_sints", T_SINT64, REP, None),
                        (24, "future_double", T_DOUBLE, OPT, None),
                        (1000, "future_far_field", T_STRING, OPT, None)]
    message("OpOutput", out_fields)
    message("OpInput", in_fields)
    message("OpBuffer", [(1, "buffer_type", T_ENUM, OPT, "BufferType"), (2, "data", T_BYTES, OPT, None),
                         (3, "size", T_UINT64, OPT, None)])
    message("OpAttr", [(1, "name", T_STRING, OPT, None), (2, "value", T_STRING, OPT, None)])
    message("Workspace", [(1, "type", T_ENUM, OPT, "SpaceType"), (2, "data", T_BYTES, OPT, None),
                          (3, "size", T_UINT64, OPT, None), (4, "arg_index", T_UINT32, OPT, None)])
    message("DumpData", dump_fields)

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {m.name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PKG}.{m.name}"))
            for m in fdp.message_type}


MSG = {v: build_messages(v) for v in ("packed", "unpacked", "future")}

# ---------------------------------------------------------------------------------------------
# Tensors and their expected verdicts
# ---------------------------------------------------------------------------------------------


@dataclass
class Tensor:
    """One dumped tensor: `logical` holds what the scanner must check; `raw` what is on disk."""
    logical: np.ndarray
    dt: int                      # proto OutputDataType code (may be unknown)
    fmt: int = FMT["ND"]         # raw value written into the header's format field
    raw: bytes | None = None     # device bytes; default = logical.tobytes()
    shape: list | None = None    # device shape; default = logical.shape
    orig: list | None = None     # original_shape, written when set
    size: int | None = None      # header size; default = len(raw)
    report_shape: list | None = None   # the logical shape the report must show
    elements_override: int | None = None
    optional: bool = False       # the scanner may leave it out of `tensors`; if listed, it must be right
    address: int | None = None   # device address in the header; None: 0x12C0_0000_0000 + size; 0: absent

    def __post_init__(self):
        if self.raw is None:
            self.raw = np.ascontiguousarray(self.logical).tobytes()
        if self.shape is None:
            self.shape = list(self.logical.shape)
        if self.size is None:
            self.size = len(self.raw)
        if self.report_shape is None:
            self.report_shape = list(self.orig) if self.orig is not None else list(self.shape)


def t(values, dt, **kw) -> Tensor:
    """A plain ND tensor of proto dtype `dt` from a list or array."""
    arr = np.asarray(values)
    if arr.dtype != NP_TYPES[dt]:
        arr = arr.astype(NP_TYPES[dt])
    return Tensor(arr, dt, **kw)


def verdict(arr: np.ndarray, dt: int) -> dict:
    """Counts and finite min/max/mean as docs/dump-scan.md defines them, in float64.

    Complex numbers are counted per element: NaN when either part is NaN, otherwise +Inf/-Inf by
    the sign of the first infinite part (real, then imaginary); min/max/mean take every finite part."""
    if np.iscomplexobj(arr):
        re = arr.real.astype(np.float64).ravel()
        im = arr.imag.astype(np.float64).ravel()
        isnan = np.isnan(re) | np.isnan(im)
        first_inf = np.where(np.isinf(re), re, np.where(np.isinf(im), im, 0.0))
        nan = int(isnan.sum())
        pos = int((~isnan & (first_inf > 0)).sum())
        neg = int((~isnan & (first_inf < 0)).sum())
        w = np.stack([re, im], axis=1).ravel()
    else:
        w = arr.astype(np.float64).ravel()
        nan = int(np.isnan(w).sum())
        pos = int(np.isposinf(w).sum())
        neg = int(np.isneginf(w).sum())
    fin = w[np.isfinite(w)]
    limit = LIMITS.get(dt)
    ovf = int((np.abs(fin) >= limit).sum()) if limit is not None else 0
    if arr.dtype in (np.dtype(np.int64), np.dtype(np.uint64)):
        # exact integer sum, then one division, so the expected mean carries no rounding drift
        ints = arr.ravel().astype(object)
        mean = float(sum(int(x) for x in ints) / len(ints)) if len(ints) else None
    else:
        mean = math.fsum(fin.tolist()) / len(fin) if len(fin) else None
    return {
        "elements": int(arr.size), "nan": nan, "pos_inf": pos, "neg_inf": neg, "overflow": ovf,
        "min": float(fin.min()) if len(fin) else None,
        "max": float(fin.max()) if len(fin) else None,
        "mean": mean,
    }


def kinds_of(v: dict) -> list:
    ks = []
    if v["nan"]:
        ks.append("nan")
    if v["pos_inf"] or v["neg_inf"]:
        ks.append("inf")
    if v.get("overflow"):
        ks.append("overflow")
    return ks


# ---------------------------------------------------------------------------------------------
# Device formats (spec §6)
# ---------------------------------------------------------------------------------------------


def to_nc1hwc0(a: np.ndarray, c0: int) -> np.ndarray:
    n, c, h, w = a.shape
    c1 = -(-c // c0)
    p = np.zeros((n, c1 * c0, h, w), a.dtype)
    p[:, :c] = a
    return np.ascontiguousarray(p.reshape(n, c1, c0, h, w).transpose(0, 1, 3, 4, 2))


def to_fractal_nz(a: np.ndarray, w0: int) -> np.ndarray:
    """ND [..batch.., R, Cc] -> [..batch.., W1, H1, 16, W0]; a 1-D [Cc] is treated as (1, 1, Cc)."""
    if a.ndim == 1:
        a = a.reshape(1, a.shape[0])
        batch = ()
    else:
        batch = a.shape[:-2]
    r, cc = a.shape[-2:]
    h1, w1 = -(-r // 16), -(-cc // w0)
    p = np.zeros(batch + (h1 * 16, w1 * w0), a.dtype)
    p[..., :r, :cc] = a
    p = p.reshape(batch + (h1 * 16, w1, w0))
    nb = len(batch)
    p = p.transpose(tuple(range(nb)) + (nb + 1, nb, nb + 2))
    return np.ascontiguousarray(p.reshape(batch + (w1, h1, 16, w0)))


def from_fractal_nz(d: np.ndarray, logical_shape) -> np.ndarray:
    """Inverse of `to_fractal_nz`, used by the self-check only."""
    w1, h1, h0, w0 = d.shape[-4:]
    batch = d.shape[:-4]
    nb = len(batch)
    x = d.reshape(batch + (w1, h1 * h0, w0)).transpose(tuple(range(nb)) + (nb + 1, nb, nb + 2))
    x = x.reshape(batch + (h1 * h0, w1 * w0))
    if len(logical_shape) == 1:
        return x.reshape(-1, w1 * w0)[0, :logical_shape[0]]
    return x[..., :logical_shape[-2], :logical_shape[-1]]


# ---------------------------------------------------------------------------------------------
# File writers (spec §1.1–1.3, §3.4)
# ---------------------------------------------------------------------------------------------


def _fill_tensor(msg, tensor: Tensor, inline: bool, variant: str):
    msg.data_type = tensor.dt
    msg.format = tensor.fmt
    msg.shape.dim.extend(int(d) for d in tensor.shape)
    if tensor.orig is not None:
        msg.original_shape.dim.extend(int(d) for d in tensor.orig)
    msg.size = tensor.size
    # proto3: an address of 0 is not written at all (a header without the field)
    msg.address = 0x12C0_0000_0000 + tensor.size if tensor.address is None else tensor.address
    if inline:
        msg.data = tensor.raw
    if variant == "future":
        if hasattr(msg, "future_out_note"):
            msg.future_out_note = "a field from a later CANN"
            msg.future_out_fixed = 0x5A5A5A5A5A5A5A5A
        else:
            msg.future_in_count = 77
            msg.future_in_fixed32 = 0xDEADBEEF


def dump_header(op_name, dump_time, inputs, outputs, *, variant="packed", inline=False,
                version="2.0", buffers=(), spaces=(), attrs=(), dfx=None, original_names=True):
    m = MSG[variant]
    dd = m["DumpData"]()
    if version is not None:
        dd.version = version
    dd.dump_time = dump_time
    if op_name is not None:
        dd.op_name = op_name
    for i, ten in enumerate(outputs):
        o = dd.output.add()
        _fill_tensor(o, ten, inline, variant)
        if original_names:
            o.original_op.name = op_name or ""
            o.original_op.output_index = i
            o.original_op.data_type = ten.dt
            o.original_op.format = ten.fmt & 0xFF
    for ten in inputs:
        _fill_tensor(dd.input.add(), ten, inline, variant)
    for raw in buffers:
        b = dd.buffer.add()
        b.buffer_type = 0
        b.size = len(raw)
        if inline:
            b.data = raw
    for raw in spaces:
        s = dd.space.add()
        s.type = 0
        s.size = len(raw)
        if inline:
            s.data = raw
    for name, value in attrs:
        dd.attr.add(name=name, value=value)
    if dfx is not None:
        dd.dfx_message = dfx
    if variant == "future":
        dd.future_fixed32 = 0xCAFEBABE
        dd.future_fixed64 = 0x0123456789ABCDEF
        dd.future_info.note = "nested message the reader does not know"
        dd.future_info.value = 1 << 40
        dd.future_sints.extend([-1, 5, -300000])
        dd.future_double = 2.5
        dd.future_far_field = "field number 1000"
    return dd


def v2_bytes(dd, inputs, outputs, buffers=(), spaces=()) -> bytes:
    hdr = dd.SerializeToString(deterministic=True)
    blocks = [x.raw for x in inputs] + [x.raw for x in outputs] + list(buffers) + list(spaces)
    return struct.pack("<Q", len(hdr)) + hdr + b"".join(blocks)


def tlv(tag: int, payload: bytes) -> bytes:
    return struct.pack("<II", tag, len(payload)) + payload


def tlv_bytes(inputs, outputs, out_names) -> bytes:
    """The 0x5A5A5A5A ('nano') framing of spec §1.3 with ge::DataType numbering."""
    def dims(d):
        return b"".join(struct.pack("<Q", int(x)) for x in d)

    ins = []
    for ten in inputs:
        nested = tlv(0, dims(ten.shape)) + (tlv(1, dims(ten.orig)) if ten.orig is not None else b"")
        ins.append(struct.pack("<iiiQQQI", PROTO_TO_GE[ten.dt], ten.fmt, 0,
                               0x1000 if ten.address is None else ten.address, 0, ten.size,
                               len(nested)) + nested)
    outs = []
    for i, ten in enumerate(outputs):
        nested = (tlv(0, dims(ten.shape)) + (tlv(1, dims(ten.orig)) if ten.orig is not None else b"")
                  + tlv(2, out_names[i].encode()))
        outs.append(struct.pack("<iiiiiiQQQI", PROTO_TO_GE[ten.dt], ten.fmt, 0, i,
                                PROTO_TO_GE[ten.dt], ten.fmt, 0x2000 if ten.address is None else ten.address,
                                0, ten.size, len(nested)) + nested)
    in_tlv = tlv(4, struct.pack("<I", len(ins)) + b"".join(ins))
    out_tlv = tlv(5, struct.pack("<I", len(outs)) + b"".join(outs))
    head_len = len(in_tlv) + len(out_tlv) + 8
    body = struct.pack("<QII", head_len, 0x5A5A5A5A, 0) + in_tlv + out_tlv
    data = b"".join(x.raw for x in inputs) + b"".join(x.raw for x in outputs)
    out = body + data
    assert head_len + len(data) + 8 == len(out)
    return out


def opdebug_old(units: dict) -> bytes:
    """Old 2048-byte payload; units: name -> (model_id, stream_id, task_id, status)."""
    buf = bytearray(2048)
    info_off = {"DHA Atomic Add": 0, "L2 Atomic Add": 128, "AI Core": 256}
    status_off = {"DHA Atomic Add": 512, "L2 Atomic Add": 768, "AI Core": 1024}
    for name, (model_id, stream_id, task_id, st) in units.items():
        struct.pack_into("<6Q", buf, info_off[name], model_id, stream_id, task_id, 0, 0x1240_0000, 0x1280_0000)
        if name == "AI Core":
            struct.pack_into("<3Q", buf, status_off[name], 0xABCD, 3, st)
        else:
            struct.pack_into("<Q", buf, status_off[name], st)
    return bytes(buf)


ACC = {"AIC": 0, "AIV": 1, "AICPU": 2, "SDMA": 3}


def opdebug_new(acc: str, model_id, stream_id, task_id, st) -> bytes:
    if acc in ("AIC", "AIV"):
        data = [model_id, stream_id, task_id, 0, 65535, 65535, 0x1240_0000, 0x1280_0000, 7, 2, st]
    elif acc == "SDMA":
        data = [model_id, stream_id, task_id, 0, 65535, 65535, 0x10, 0x20, 1, st]
    else:
        data = [model_id, stream_id, task_id, 0, 65535, 3, 65535, st]
    payload = struct.pack("<6I", 0x5A5A5A5A, 0, 1, ACC[acc], 0, len(data) * 8)
    payload += struct.pack(f"<{len(data)}Q", *data)
    return payload + bytes(2048 - len(payload))


def sanitise(name: str) -> str:
    for ch in " ./\\":
        name = name.replace(ch, "_")
    return name


# ---------------------------------------------------------------------------------------------
# A fixture case: a tree plus the records its expected.json is computed from
# ---------------------------------------------------------------------------------------------

GROUP_FIELDS = ("rank", "world_size", "time", "device", "model", "model_id", "step")


@dataclass
class Op:
    path: str
    group: dict
    order: tuple
    meta: dict
    inputs: list = field(default_factory=list)    # list of tensor records (dict)
    outputs: list = field(default_factory=list)


class Case:
    def __init__(self, out: Path, name: str, description: str, root_dir: Path | None = None):
        self.name = name
        self.description = description
        self.case_dir = out / name
        self.root = root_dir if root_dir is not None else self.case_dir / "root"
        if self.root.exists() or self.root.is_symlink():
            _rmtree(self.root)
        self.root.mkdir(parents=True)
        self.ops: list[Op] = []
        self.errors: list[dict] = []
        self.optional_error_paths: list[str] = []
        self.optional_tensor_paths: list[str] = []
        self.opdebug: list[dict] = []
        self.checks: dict = {}
        self.written: list[tuple] = []   # (path, framing, inputs, outputs) for the self-check
        self.unchecked_group_tensors: set = set()

    # -- writing -----------------------------------------------------------------------------

    def write(self, rel: str, data: bytes) -> Path:
        p = self.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        return p

    def dump(self, rel_dir: str, group: dict, *, op_type: str, op_name: str, task: int, stream: int | None,
             ts: int, inputs=(), outputs=(), framing="v2", variant="packed", file_name=None,
             real_name=True, buffers=(), spaces=(), attrs=(), dfx=None, report_ts=True,
             report_type=True, dump_time=None, tensor_overrides=None):
        """Writes one operator dump and records what the scanner must report for it."""
        inputs, outputs = list(inputs), list(outputs)
        fname = file_name or f"{op_type}.{sanitise(op_name)}.{task}.{stream}.{ts}"
        rel = f"{rel_dir}/{fname}" if rel_dir else fname
        dump_time = ts if dump_time is None else dump_time
        if framing == "v2":
            dd = dump_header(op_name if real_name else None, dump_time, inputs, outputs,
                             variant=variant, buffers=buffers, spaces=spaces, attrs=attrs, dfx=dfx)
            data = v2_bytes(dd, inputs, outputs, buffers, spaces)
        elif framing == "v2_reordered":
            # inputs serialised before outputs on the wire: a valid protobuf in a non-canonical order
            dd_in = dump_header(None, dump_time, inputs, [], variant=variant, version=None)
            dd_rest = dump_header(op_name, dump_time, [], outputs, variant=variant)
            hdr = dd_in.SerializeToString(deterministic=True) + dd_rest.SerializeToString(deterministic=True)
            data = struct.pack("<Q", len(hdr)) + hdr + b"".join(x.raw for x in inputs + outputs)
        elif framing == "v1":
            dd = dump_header(op_name, dump_time, inputs, outputs, variant=variant, inline=True, version=None)
            data = dd.SerializeToString(deterministic=True)
        elif framing == "tlv":
            data = tlv_bytes(inputs, outputs, [op_name] * len(outputs))
        else:
            raise ValueError(framing)
        self.write(rel, data)
        self.written.append((rel, framing, variant, inputs, outputs))
        # a key absent from a record means "not checked"; a None value means "must be null"
        meta = {"op_name": op_name, "op_type": op_type, "task_id": task, "stream_id": stream,
                "timestamp": dump_time}
        if not report_ts:
            del meta["timestamp"]
        if not report_type:
            del meta["op_type"]
        if framing == "tlv" or not real_name:
            # no header op_name: the report shows the (sanitised) name from the file name
            meta["op_name"] = sanitise(op_name)
        op = Op(rel, group, (dump_time, task, rel), meta)
        op.inputs = [self._record(op, "input", i, x, "dump", tensor_overrides) for i, x in enumerate(inputs)]
        op.outputs = [self._record(op, "output", i, x, "dump", tensor_overrides) for i, x in enumerate(outputs)]
        self.ops.append(op)
        return op

    def _record(self, op: Op, io: str, index: int, x: Tensor, source: str, overrides=None) -> dict | None:
        if x.dt not in NP_TYPES:
            return None  # unknown dtype: an error entry, not a verdict
        v = verdict(x.logical, x.dt)
        if x.elements_override is not None:
            v["elements"] = x.elements_override
        rec = {"path": op.path, "io": io, "index": index, "source": source,
               "dtype": DT_NAMES[x.dt], "format": FORMAT_NAMES.get(x.fmt & 0xFF),
               "shape": [int(d) for d in x.report_shape], **v}
        rec.update(op.meta)
        rec.update({k: v for k, v in op.group.items() if k != "layout"})  # layout: a group field only
        if overrides and (io, index) in overrides:
            rec.update(overrides[(io, index)])
        if x.optional:
            rec["optional"] = True
        ks = kinds_of(rec)
        rec["kinds"] = ks
        rec["kind"] = ks[0] if ks else None
        return rec

    def add_op(self, op: Op):
        self.ops.append(op)

    def error(self, rel: str, any_of: list[str], note: str):
        self.errors.append({"path": rel, "any_of": any_of, "note": note})

    # -- expected.json -----------------------------------------------------------------------

    def expected(self) -> dict:
        tensors = []
        groups: dict = {}
        for op in self.ops:
            key = json.dumps({k: op.group.get(k, "*") for k in GROUP_FIELDS + ("layout",)}, sort_keys=True)
            groups.setdefault(key, []).append(op)
            tensors += [r for r in op.inputs + op.outputs if r is not None]
        exp_groups = []
        for key, ops in groups.items():
            ops = sorted(ops, key=lambda o: o.order)
            first_anomaly = first_born = None
            for op in ops:
                ins = [r for r in op.inputs if r is not None]
                outs = [r for r in op.outputs if r is not None]
                anom_in = [r for r in ins if r["kind"]]
                anom_out = [r for r in outs if r["kind"]]
                if first_anomaly is None and (anom_in or anom_out):
                    first_anomaly = (anom_in + anom_out)[0]
                if first_born is None and anom_out and not anom_in:
                    first_born = anom_out[0]
            g = json.loads(key)
            every = [r for op in ops for r in op.inputs + op.outputs if r is not None]
            recs = [r for r in every if not r.get("optional")]
            unchecked = key in self.unchecked_group_tensors or bool(self.optional_tensor_paths)
            exp_groups.append({
                "key": {k: v for k, v in g.items() if v != "*"},
                "tensors": None if unchecked else len(recs),
                "tensors_optional": len(every) - len(recs),
                "anomalous_tensors": sum(1 for r in recs if r["kind"]),
                "first_anomaly": _pick(first_anomaly),
                "first_born": _pick(first_born),
                "order": [op.path for op in ops],
            })
        exp_groups.sort(key=lambda g: json.dumps(g["key"], sort_keys=True))
        tensors.sort(key=lambda r: (r["path"], r["io"], r["index"]))
        anomalous = [r for r in tensors if r["kind"]]
        n_optional = sum(1 for r in tensors if r.get("optional"))
        return {
            "case": self.name,
            "description": self.description,
            "root": os.path.relpath(self.root, self.case_dir),
            # 3: files could not be read (incomplete), whatever was found in the rest
            "exit_code": 3 if self.errors else 1 if anomalous else 0,
            "summary": {
                "groups": len(exp_groups),
                "anomalous_tensors": len(anomalous),
                "tensors": None if self.optional_tensor_paths else len(tensors) - n_optional,
                "errors": None if self.optional_error_paths else len(self.errors),
            },
            "groups": exp_groups,
            "tensors": tensors,
            "tensors_optional": n_optional,
            "optional_tensor_paths": sorted(self.optional_tensor_paths),
            "errors": sorted(self.errors, key=lambda e: e["path"]),
            "optional_error_paths": sorted(self.optional_error_paths),
            "opdebug": self.opdebug,
            **self.checks,
        }

    def finish(self):
        exp = self.expected()
        self.self_check()
        self.case_dir.mkdir(parents=True, exist_ok=True)
        (self.case_dir / "expected.json").write_text(json.dumps(exp, indent=1, sort_keys=True) + "\n")
        return exp

    # -- self-check: re-read what was written with the official protobuf runtime --------------

    def self_check(self):
        for rel, framing, variant, inputs, outputs in self.written:
            data = (self.root / rel).read_bytes()
            if framing in ("v2", "v2_reordered"):
                (hlen,) = struct.unpack_from("<Q", data, 0)
                dd = MSG["packed"]["DumpData"]()
                consumed = dd.ParseFromString(data[8:8 + hlen])
                assert consumed == hlen, rel
                assert data[8] != 0x5A, rel
                ins = [(x.size, x.data_type) for x in dd.input]
                outs = [(x.size, x.data_type) for x in dd.output]
                assert ins == [(x.size, x.dt) for x in inputs], rel
                assert outs == [(x.size, x.dt) for x in outputs], rel
                off = 8 + hlen
                for x in inputs + outputs:
                    assert data[off:off + x.size] == x.raw, rel
                    off += x.size
                extra = sum(b.size for b in dd.buffer) + sum(s.size for s in dd.space)
                assert off + extra == len(data), rel
                for x, m in zip(inputs + outputs, list(dd.input) + list(dd.output)):
                    assert list(m.shape.dim) == [int(d) for d in x.shape], rel
                    if x.address is not None:
                        assert m.address == x.address, rel
                    _check_logical(x, rel)
            elif framing == "v1":
                (hlen,) = struct.unpack_from("<Q", data, 0)
                assert hlen > len(data) - 8, f"{rel}: a v1 file must not look like v2"
                dd = MSG["packed"]["DumpData"]()
                assert dd.ParseFromString(data) == len(data)
                assert [m.data for m in dd.input] == [x.raw for x in inputs]
                assert [m.data for m in dd.output] == [x.raw for x in outputs]
            elif framing == "tlv":
                head_len, magic = struct.unpack_from("<QI", data, 0)
                assert magic == 0x5A5A5A5A
                assert head_len + 8 + sum(x.size for x in inputs + outputs) == len(data)


def _check_logical(x: Tensor, rel: str):
    """The logical values can be recovered from the device bytes (formats self-check)."""
    if x.dt not in NP_TYPES or x.size != len(x.raw):
        return
    dev = np.frombuffer(x.raw, NP_TYPES[x.dt])
    name = FORMAT_NAMES.get(x.fmt & 0xFF)
    if x.orig is None:
        got = dev.reshape(x.shape) if x.shape else dev
    elif name == "FRACTAL_NZ":
        got = from_fractal_nz(dev.reshape(x.shape), x.orig)
    elif name == "NC1HWC0":
        n, c1, h, w, c0 = x.shape
        got = dev.reshape(x.shape).transpose(0, 1, 4, 2, 3).reshape(n, c1 * c0, h, w)[:, :x.orig[1]]
    else:
        got = dev.reshape(x.orig)
    a, b = np.asarray(got).ravel(), x.logical.ravel()
    if not np.iscomplexobj(a):
        a, b = a.astype(np.float64), b.astype(np.float64)
    assert a.shape == b.shape and np.array_equal(a, b, equal_nan=True), rel


def _replace_generated_dir(out: Path, marker: str):
    """Removes `out` only when it is empty or was written by this script (holds `marker`)."""
    if out.exists():
        entries = list(out.iterdir())
        if entries and not (out / marker).exists():
            sys.exit(f"gen_dump_fixtures.py: refusing to replace {out}: it is not empty and has no {marker}")
        _rmtree(out)


def _pick(rec):
    if rec is None:
        return None
    return {k: rec[k] for k in ("path", "io", "index", "kind", "op_name") if k in rec}


def _rmtree(p: Path):
    def onerror(func, path, _exc):
        os.chmod(path, 0o700)
        func(path)
    if p.is_symlink() or p.is_file():
        p.unlink()
        return
    for dirpath, dirnames, _files in os.walk(p):
        for d in dirnames:
            dp = os.path.join(dirpath, d)
            if not os.path.islink(dp):
                os.chmod(dp, 0o700)
    shutil.rmtree(p, onerror=onerror)


# ---------------------------------------------------------------------------------------------
# Value builders
# ---------------------------------------------------------------------------------------------

RNG = np.random.default_rng(20241121)


def vals(n, lo=-1.0, hi=1.0, dt=2, plant=None, seed=None):
    """n finite values in [lo, hi) of proto dtype dt, with {index: value} planted."""
    rng = np.random.default_rng(seed) if seed is not None else RNG
    a = rng.uniform(lo, hi, n).astype(np.float64)
    a = a.astype(NP_TYPES[dt])
    for i, v in (plant or {}).items():
        a[i] = v
    return a


NAN, INF = float("nan"), float("inf")


def model_group(rank, ws, time, device, model, model_id, step):
    return {"rank": rank, "world_size": ws, "time": time, "device": device, "model": model,
            "model_id": model_id, "step": step, "layout": "model"}


def single_group(time, device):
    return {"rank": None, "world_size": None, "time": time, "device": device, "model": None,
            "model_id": None, "step": None, "layout": "single_op"}


T0 = 1732190400000000  # 2024-11-21T12:00:00Z in µs


# ---------------------------------------------------------------------------------------------
# The cases
# ---------------------------------------------------------------------------------------------


def case_torchair(out: Path) -> Case:
    c = Case(out, "torchair", "torchair worldsize{W}_global_rank{R}/{time14}/{device}/{model}/{model_id}/{index}/: "
             "2 ranks x 2 steps, v2 packed dims; NaN born in RealDiv (clean inputs) propagates to Add and "
             "Softmax; first anomaly is an fp16 overflow input of Cast; timestamp ties broken by task id; "
             "unsanitised real op names; fp32/bf16 values >= 65504 that are not overflow")
    ws = 2
    for rank, time, dev in ((0, "20241121120000", 0), (1, "20241121120003", 1)):
        model = f"ge_default_{time}_{rank + 1}"
        for step in (0, 1):
            d = f"worldsize{ws}_global_rank{rank}/{time}/{dev}/{model}/1/{step}"
            g = model_group(rank, ws, time, dev, model, 1, step)
            base = T0 + rank * 10_000_000 + step * 1_000_000
            s = rank * 100 + step * 10
            if (rank, step) == (0, 0):
                c.dump(d, g, op_type="TransData", op_name="trans_TransData_0", task=11, stream=2, ts=base + 100,
                       inputs=[t(vals(16, seed=s + 1).reshape(2, 8), 2)],
                       outputs=[t(vals(16, seed=s + 2).reshape(2, 8), 2)])
                c.dump(d, g, op_type="Cast", op_name="Cast_1", task=12, stream=2, ts=base + 200,
                       inputs=[t(vals(16, plant={3: 65504.0}, seed=s + 3), 2)],
                       outputs=[t(vals(16, seed=s + 4, dt=1), 1)])
                c.dump(d, g, op_type="Mul", op_name="layer1/Mul", task=14, stream=2, ts=base + 300,
                       inputs=[t(vals(24, plant={0: -65504.0}, seed=s + 5), 2), t(vals(24, seed=s + 6), 2)],
                       outputs=[t(vals(24, plant={4: -INF, 9: -INF}, seed=s + 7), 2)])
                c.dump(d, g, op_type="RealDiv", op_name="layer1/attn/RealDiv", task=9, stream=2, ts=base + 400,
                       inputs=[t(vals(32, 0.5, 1.0, dt=1, plant={1: 0.0, 5: 0.0}, seed=s + 8), 1),
                               t(vals(32, 0.5, 1.0, dt=1, plant={1: 0.0, 5: 0.0}, seed=s + 9), 1)],
                       outputs=[t(vals(32, dt=1, plant={1: NAN, 5: NAN}, seed=s + 10), 1)])
                c.dump(d, g, op_type="Add", op_name="layer1/Add", task=15, stream=2, ts=base + 400,
                       inputs=[t(vals(32, dt=1, plant={1: NAN, 5: NAN}, seed=s + 11), 1),
                               t(vals(32, dt=1, seed=s + 12), 1)],
                       outputs=[t(vals(32, dt=1, plant={1: NAN, 5: NAN}, seed=s + 13), 1)])
                c.dump(d, g, op_type="Softmax", op_name="layer1/Softmax", task=16, stream=2, ts=base + 500,
                       inputs=[t(vals(32, dt=1, plant={1: NAN, 5: NAN}, seed=s + 14), 1)],
                       outputs=[t(vals(32, dt=1, plant={0: NAN, 1: NAN, 2: NAN}, seed=s + 15), 1)],
                       buffers=[np.full(64, np.nan, np.float32).tobytes()],
                       spaces=[np.full(16, np.inf, np.float32).tobytes()])
                # sorts first by name, is born (no inputs) — but runs last
                c.dump(d, g, op_type="Abs", op_name="Abs_7", task=17, stream=2, ts=base + 600,
                       outputs=[t(vals(8, dt=1, plant={2: INF}, seed=s + 16), 1)])
            elif (rank, step) == (0, 1):
                c.dump(d, g, op_type="TransData", op_name="trans_TransData_0", task=11, stream=2, ts=base + 100,
                       inputs=[t(vals(16, seed=s + 1), 2)], outputs=[t(vals(16, seed=s + 2), 2)])
                c.dump(d, g, op_type="Cast", op_name="Cast_1", task=12, stream=2, ts=base + 200,
                       inputs=[t(vals(16, seed=s + 3, plant={0: 65472.0, 1: -65472.0}), 2)],
                       outputs=[t(vals(16, dt=1, plant={0: 65504.0, 1: 70000.0, 2: 1e30}, seed=s + 4), 1)])
                c.dump(d, g, op_type="MatMul", op_name="layer1/MatMul", task=13, stream=2, ts=base + 300,
                       inputs=[t(vals(16, dt=27, plant={0: 65504.0, 1: -1e30}, seed=s + 5), 27)],
                       outputs=[t(vals(16, dt=12, plant={0: 1e300}, seed=s + 6), 12)])
            elif (rank, step) == (1, 0):
                c.dump(d, g, op_type="Relu", op_name="relu_1", task=3, stream=5, ts=base + 50,
                       inputs=[t(vals(16, seed=s + 1), 2)], outputs=[t(vals(16, 0.0, 1.0, seed=s + 2), 2)])
                c.dump(d, g, op_type="Exp", op_name="exp_2", task=8, stream=5, ts=base + 60,
                       inputs=[t(vals(16, seed=s + 3), 2)],
                       outputs=[t(vals(16, 0.1, 2.0, plant={7: INF}, seed=s + 4), 2)])
                c.dump(d, g, op_type="Log", op_name="log_3", task=4, stream=5, ts=base + 60,
                       inputs=[t(vals(16, 0.1, 2.0, plant={2: 0.0}, seed=s + 5), 2)],
                       outputs=[t(vals(16, plant={2: -INF}, seed=s + 6), 2)])
            else:
                c.dump(d, g, op_type="Gelu", op_name="gelu", task=21, stream=5, ts=base + 900,
                       inputs=[t(vals(64, seed=s + 1), 2)],
                       outputs=[t(vals(64, plant={10: 65504.0, 20: 65504.0, 30: -65504.0}, seed=s + 2), 2)])
                c.dump(d, g, op_type="ReduceSum", op_name="sum", task=22, stream=5, ts=base + 950,
                       inputs=[t(vals(64, plant={10: 65504.0}, seed=s + 3), 2)],
                       outputs=[t(vals(4, plant={0: INF}, seed=s + 4), 2)])
    return c


def case_model_plain(out: Path) -> Case:
    c = Case(out, "model_plain", "plain acl.json model dump {time}/{device}/{model}/{model_id}/{index}/ "
             "without worldsize (rank null); v2 UNPACKED dims and v2 with unknown fields of every wire "
             "type; hashed all-digit file names resolved through mapping.csv; a README.txt that must be "
             "skipped silently")
    time = "20241121130000"
    d = f"{time}/0/resnet50/3/0"
    g = model_group(None, None, time, 0, "resnet50", 3, 0)
    base = T0 + 3_600_000_000
    c.dump(d, g, op_type="Conv2D", op_name="conv1", task=2, stream=1, ts=base + 10, variant="unpacked",
           inputs=[t(vals(2 * 3 * 4 * 4, dt=1, seed=201).reshape(2, 3, 4, 4), 1, fmt=FMT["NCHW"])],
           outputs=[t(vals(2 * 8 * 2 * 2, dt=1, seed=202).reshape(2, 8, 2, 2), 1, fmt=FMT["NCHW"])])
    long_name = "resnet50/layer4/block2/bn_with_a_very_long_name_that_hits_ENAMETOOLONG/BatchNorm"
    h1 = "1234567890123456789"
    orig1 = f"BatchNorm.{sanitise(long_name)}.3.1.{base + 20}"
    op = c.dump(d, g, op_type="BatchNorm", op_name=long_name, task=3, stream=1, ts=base + 20, variant="future",
                file_name=h1,
                inputs=[t(vals(32, dt=1, seed=203), 1)],
                outputs=[t(vals(32, dt=1, plant={0: NAN, 31: NAN, 7: INF}, seed=204), 1)])
    assert op.path.endswith(h1)
    h2 = "987654321098765432"
    orig2 = f"Relu.{sanitise('resnet50/layer4/relu')}.4.1.{base + 30}"
    c.dump(d, g, op_type="Relu", op_name="resnet50/layer4/relu", task=4, stream=1, ts=base + 30, variant="unpacked",
           file_name=h2,
           inputs=[t(vals(32, dt=1, plant={0: NAN, 31: NAN, 7: INF}, seed=205), 1)],
           outputs=[t(vals(32, 0.0, 1.0, dt=1, plant={0: NAN, 31: NAN, 7: INF}, seed=206), 1)])
    c.dump(d, g, op_type="Add", op_name="add_out", task=5, stream=1, ts=base + 40, variant="future",
           inputs=[t(vals(8, dt=1, seed=207), 1)], outputs=[t(vals(8, dt=1, seed=208), 1)])
    c.write(f"{d}/mapping.csv", f"{h1},{orig1}\n{h2},{orig2}\n55555,Gone.gone.1.1.{base}\n".encode())
    c.write(f"{time}/README.txt", b"notes about this dump, not a dump\n")
    return c


def case_msprobe(out: Path) -> Case:
    c = Case(out, "msprobe", "msprobe's msprobe_ge_dump/ prefix, once with worldsize2_global_rank1 and once "
             "without a worldsize level (TorchNPU < 7.1.0)")
    base = T0 + 7_200_000_000
    t1 = "20241121140000"
    d1 = f"msprobe_ge_dump/worldsize2_global_rank1/{t1}/1/ge_default_20241121140000_5/5/3"
    g1 = model_group(1, 2, t1, 1, "ge_default_20241121140000_5", 5, 3)
    c.dump(d1, g1, op_type="LayerNorm", op_name="ln_f", task=30, stream=7, ts=base + 1,
           inputs=[t(vals(48, seed=301), 2)], outputs=[t(vals(48, plant={47: NAN}, seed=302), 2)])
    c.dump(d1, g1, op_type="MatMul", op_name="lm_head", task=31, stream=7, ts=base + 2,
           inputs=[t(vals(48, plant={47: NAN}, seed=303), 2)], outputs=[t(vals(12, plant={0: NAN}, seed=304), 2)])
    t2 = "20241121140500"
    d2 = f"msprobe_ge_dump/{t2}/0/ge_default_20241121140500_2/2/0"
    g2 = model_group(None, None, t2, 0, "ge_default_20241121140500_2", 2, 0)
    c.dump(d2, g2, op_type="Add", op_name="add", task=1, stream=1, ts=base + 300_000_000,
           inputs=[t(vals(8, seed=305), 2)], outputs=[t(vals(8, seed=306), 2)])
    return c


def case_framings(out: Path) -> Case:
    c = Case(out, "framings", "single-op {time}/{device}/ layout; every framing: v2 packed, v2 unpacked, "
             "v2 with unknown fields, v2 with inputs serialised before outputs on the wire, v2 with "
             "buffer and workspace blocks, v1 whole-file protobuf with inline data, TLV 0x5A5A5A5A "
             "with ge::DataType numbering")
    time = "20241121150000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 10_800_000_000
    io = lambda seed, plant=None: (  # noqa: E731
        [t(vals(12, dt=1, seed=seed), 1), t(vals(20, seed=seed + 1), 2)],
        [t(vals(30, dt=1, plant=plant, seed=seed + 2), 1)])
    ins, outs = io(401, {4: NAN})
    c.dump(d, g, op_type="Add", op_name="add_v2_packed", task=1, stream=1, ts=base + 1, inputs=ins, outputs=outs)
    ins, outs = io(411, {5: INF, 6: -INF})
    c.dump(d, g, op_type="Add", op_name="add_v2_unpacked", task=2, stream=1, ts=base + 2, variant="unpacked",
           inputs=ins, outputs=outs)
    ins, outs = io(421, {0: NAN})
    c.dump(d, g, op_type="Add", op_name="add_v2_future", task=3, stream=1, ts=base + 3, variant="future",
           inputs=ins, outputs=outs)
    ins, outs = io(431, {29: NAN})
    c.dump(d, g, op_type="Add", op_name="add_v2_reordered", task=4, stream=1, ts=base + 4, framing="v2_reordered",
           inputs=ins, outputs=outs)
    ins, outs = io(441, {1: -INF})
    c.dump(d, g, op_type="Conv2D", op_name="conv_with_buffers", task=5, stream=1, ts=base + 5,
           inputs=ins, outputs=outs,
           buffers=[np.full(40, np.nan, np.float32).tobytes()], spaces=[np.full(24, np.inf, np.float16).tobytes()])
    c.dump(d, g, op_type="Mul", op_name="mul_v1", task=6, stream=1, ts=base + 6, framing="v1",
           inputs=[t(vals(10, dt=1, seed=451), 1)],
           outputs=[t(vals(10, dt=1, plant={9: NAN, 8: NAN}, seed=452), 1), t(vals(6, seed=453, plant={0: 65504.0}), 2)])
    c.dump(d, g, op_type="Sub", op_name="sub_tlv", task=7, stream=1, ts=base + 7, framing="tlv", report_ts=True,
           inputs=[t(vals(16, seed=461, plant={3: -INF}), 2), t(np.arange(-5, 7, dtype=np.int32), 7)],
           outputs=[t(vals(9, dt=1, plant={8: NAN}, seed=462), 1),
                    t(vals(10, dt=27, seed=463, plant={0: INF}), 27),
                    t(vals(4, dt=35, seed=464, plant={1: 448.0}), 35)])
    return c


def case_dtypes(out: Path) -> Case:
    c = Case(out, "dtypes", "every supported dtype with NaN/+Inf/-Inf/saturation values planted at known "
             "positions (fp32, fp16, bf16, fp64, fp8 e4m3fn, fp8 e5m2, int8..uint64, bool, complex64 and "
             "complex128 counted per element), an empty "
             "tensor, a 0-d scalar, an unknown dtype value 99 and DT_HIFLOAT8 (both errors, the other "
             "tensor of the same file still scanned)")
    time = "20241121160000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 14_400_000_000
    seq = [0]

    def one(name, arr, dt, **kw):
        seq[0] += 1
        return c.dump(d, g, op_type="Cast", op_name=f"cast_{name}", task=seq[0], stream=1, ts=base + seq[0] * 10,
                      outputs=[t(arr, dt)], **kw)

    one("fp32", vals(64, dt=1, plant={3: NAN, 17: NAN, 5: INF, 40: -INF, 41: -INF, 50: 1e30}, seed=501), 1)
    one("fp16", vals(128, plant={0: NAN, 127: INF, 10: 65504.0, 11: -65504.0, 12: 65504.0, 13: 65472.0}, seed=502), 2)
    bfmax = LIMITS[27]
    one("bf16", vals(32, dt=27, plant={4: NAN, 6: -INF, 7: bfmax, 9: 65504.0}, seed=503), 27)
    one("bf16_neg", vals(32, dt=27, plant={3: -bfmax}, seed=509), 27)
    one("fp64", vals(16, dt=12, plant={2: NAN, 3: INF, 4: 1e300}, seed=504), 12)
    e4 = vals(32, dt=35, seed=505, plant={3: 448.0, 4: -448.0, 5: 240.0})
    e4v = e4.view(np.uint8)
    e4v[1] = 0x7F      # NaN
    e4v[2] = 0xFF      # -NaN
    one("fp8_e4m3fn", e4, 35)
    e5 = vals(32, dt=34, seed=506, plant={3: 57344.0, 4: -57344.0, 5: 49152.0})
    e5v = e5.view(np.uint8)
    e5v[0] = 0x7C      # +Inf
    e5v[1] = 0xFC      # -Inf
    e5v[2] = 0x7E      # NaN
    one("fp8_e5m2", e5, 34)
    ints = {
        3: np.array([-128, 127, 0, -1, 5, 100, -100, 42] * 3, np.int8),
        4: np.array([0, 255, 1, 128, 77, 200] * 4, np.uint8),
        5: np.array([-32768, 32767, 0, 1, -2, 1000] * 3, np.int16),
        6: np.array([0, 65535, 1, 4000, 60000] * 3, np.uint16),
        7: np.array([-2147483648, 2147483647, 0, 7, -9, 123456] * 2, np.int32),
        8: np.array([-(1 << 40), 1 << 40, 3, -3, 1 << 52, -(1 << 52)], np.int64),
        9: np.array([0, 4000000000, 17, 1 << 31], np.uint32),
        10: np.array([0, 1 << 53, 12345, 1 << 40], np.uint64),
        11: np.array([True, False, True, True, False, True, False, False, True, True]),
    }
    for dt, arr in ints.items():
        one(DT_NAMES[dt][3:].lower(), arr, dt)
    # complex: NaN/Inf per element, not per part (the old per-part count gave nan 4 > elements 3
    # for the first three here)
    for dt, np_t in ((16, np.complex64), (17, np.complex128)):
        z = (vals(16, seed=510 + dt, dt=1).astype(np.float64)
             + 1j * vals(16, seed=520 + dt, dt=1).astype(np.float64)).astype(np_t)
        for i, v in enumerate([complex(NAN, NAN), complex(NAN, 1.0), complex(INF, NAN),
                               complex(1.0, -INF), complex(-INF, INF), complex(INF, 0.0)]):
            z[i] = v
        one(DT_NAMES[dt][3:].lower(), z, dt)
    # empty tensor (size 0) and a 0-d scalar in one file
    seq[0] += 1
    c.dump(d, g, op_type="Reshape", op_name="reshape_empty_and_scalar", task=seq[0], stream=1, ts=base + seq[0] * 10,
           inputs=[t(np.zeros((0,), np.float32), 1, optional=True)],
           outputs=[Tensor(np.array(2.5, np.float32), 1, shape=[], report_shape=None)])
    # unknown dtype 99 next to a good tensor
    seq[0] += 1
    op = c.dump(d, g, op_type="Custom", op_name="custom_unknown_dtype", task=seq[0], stream=1, ts=base + seq[0] * 10,
                outputs=[t(vals(8, dt=1, plant={2: NAN}, seed=507), 1),
                         Tensor(np.zeros(8, np.uint8), 99, raw=bytes(range(8)), shape=[8])])
    c.error(op.path, ["99"], "output 1 has OutputDataType 99, which no schema defines: reported, not guessed")
    seq[0] += 1
    op = c.dump(d, g, op_type="Cast", op_name="cast_hifloat8", task=seq[0], stream=1, ts=base + seq[0] * 10,
                inputs=[t(vals(8, dt=1, seed=508), 1)],
                outputs=[Tensor(np.zeros(16, np.uint8), DT["DT_HIFLOAT8"], raw=bytes([0x80] * 16), shape=[16])])
    c.error(op.path, ["HIFLOAT8"], "DT_HIFLOAT8 has no verified encoding: reported with the type name")
    return c


def case_exception(out: Path) -> Case:
    c = Case(out, "exception", "exception dump extra-info/data-dump/{device}/ with 17-digit local-time names "
             "and no stream id; dfx_message field; an input whose raw format carries C0 bits "
             "(FRACTAL_NZ | C0 code 5 << 24) with padding and original shape")
    d = "extra-info/data-dump/3"
    g = {"rank": None, "world_size": None, "time": None, "device": 3, "model": None, "model_id": None,
         "step": None, "layout": "exception"}
    base = 1746668178530000
    x = vals(80, 1.0, 2.0, seed=601).reshape(5, 16)
    nz = to_fractal_nz(x, 16)
    c.dump(d, g, op_type="MatMulV3", op_name="matmul_fwd", task=12, stream=None, ts=None, dump_time=base,
           file_name="MatMulV3.matmul_fwd.12.20250508095618530", report_ts=False,
           dfx="[AIC_INFO] after execute:args print result\nblock_dim=8",
           inputs=[Tensor(x, 2, fmt=29 | (5 << 24), raw=nz.tobytes(), shape=list(nz.shape), orig=[5, 16]),
                   t(vals(16, seed=602), 2)],
           outputs=[t(vals(16, seed=603, plant={3: NAN, 4: NAN}), 2)])
    c.dump(d, g, op_type="Add", op_name="add_after", task=13, stream=None, ts=None, dump_time=base + 70_000,
           file_name="Add.add_after.13.20250508095618600", report_ts=False,
           inputs=[t(vals(16, seed=604, plant={3: NAN}), 2)], outputs=[t(vals(16, seed=605, plant={3: NAN}), 2)])
    # kernel binaries written beside exception dumps (spec §3.3): not dumps, skipped silently
    c.write(f"{d}/te_matmulv3_1a2b3c4d_10001_host.o", b"\x7fELF" + bytes(60))
    c.write(f"{d}/te_matmulv3_1a2b3c4d.o", b"\x7fELF" + bytes(60))
    c.write(f"{d}/te_matmulv3_1a2b3c4d.json", b'{"kernelName": "te_matmulv3_1a2b3c4d", "blockDim": 8}\n')
    return c


def case_large(out: Path) -> Case:
    c = Case(out, "large", "multi-MiB blocks at unaligned file offsets with NaN/Inf/overflow planted on "
             "the elements that straddle common read-chunk boundaries (64 KiB, 1, 4, 8 MiB), on the first "
             "and on the last element: a streaming reader must neither lose nor double-count them")
    time = "20241121220000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 36_000_000_000
    n_in, n_out = 1_000_001, 3_000_000
    a_in = vals(n_in, 0.5, 1.5, seed=1401)
    a_out = vals(n_out, 0.5, 1.5, dt=1, seed=1402)
    # pick a dfx_message length that puts the data at an odd offset: every block is then unaligned
    # and every even chunk boundary cuts an element in two
    for dfx in ("pad", "pads"):
        data_off = 8 + dump_header("large", base, [t(a_in, 2)], [t(a_out, 1)], dfx=dfx).ByteSize()
        if data_off % 2 == 1:
            break
    assert data_off % 2 == 1
    kinds = [NAN, INF, -INF]
    for j, boundary in enumerate((1 << 16, 1 << 20, 1 << 22, 1 << 23)):
        # the fp16 input spans [data_off, data_off + 2 n_in); the fp32 output follows it
        rel = boundary - data_off
        if 0 < rel < 2 * n_in:
            a_in[rel // 2] = 65504.0 if j % 2 else kinds[j % 3]
        rel = boundary - (data_off + 2 * n_in)
        if 0 < rel < 4 * n_out:
            a_out[rel // 4] = kinds[j % 3]
            a_out[rel // 4 + 1] = kinds[(j + 1) % 3]
    a_in[0], a_in[-1] = NAN, -65504.0
    a_out[0], a_out[-1] = -INF, NAN
    op = c.dump(d, g, op_type="MatMul", op_name="large", task=1, stream=1, ts=base, inputs=[t(a_in, 2)],
                outputs=[t(a_out, 1)], dfx=dfx)
    (hlen,) = struct.unpack_from("<Q", (c.root / op.path).read_bytes()[:8])
    assert 8 + hlen == data_off
    return c


def case_ffts(out: Path) -> Case:
    c = Case(out, "ffts", "FFTS+ names {type}.{name}.{task}.{stream}.{ts}.4.{ctx}.{thread}.{device} with the "
             "attr[0] slice JSON (task/stream are tokens 2 and 3, not the trailing ones); a manual-FFTS "
             "_lxslice name")
    time = "20241121210000"
    d = f"{time}/0/ge_default_ffts/1/0"
    g = model_group(None, None, time, 0, "ge_default_ffts", 1, 0)
    ts = 1673383728093446
    name = "partition0_rank1_new_sub_graph1_sgt_graph_0_Add"
    attr = json.dumps({"threadMode": 1, "slice_instance_num": 2, "outputCutList": [[0]],
                       "input_tensor_slice": [[[{"lower": 0, "higher": 4}, {"lower": 0, "higher": 8}]],
                                              [[{"lower": 4, "higher": 8}, {"lower": 0, "higher": 8}]]],
                       "output_tensor_slice": [[[{"lower": 0, "higher": 4}, {"lower": 0, "higher": 8}]],
                                               [[{"lower": 4, "higher": 8}, {"lower": 0, "higher": 8}]]]})
    c.dump(d, g, op_type="Conv2D", op_name="conv_lxslice0", task=1, stream=3, ts=ts - 50,
           inputs=[t(vals(16, seed=701), 2)], outputs=[t(vals(16, seed=702), 2)])
    for thread in (0, 1):
        plant = {5: NAN, 6: NAN, 7: NAN} if thread == 1 else None
        c.dump(d, g, op_type="Add", op_name=name, task=0, stream=3, ts=ts,
               file_name=f"Add.{name}.0.3.{ts}.4.1.{thread}.0", attrs=[("ffts_slice", attr)],
               inputs=[t(vals(32, seed=703 + thread).reshape(4, 8), 2)],
               outputs=[t(vals(32, seed=705 + thread, plant=plant).reshape(4, 8), 2)])
    return c


def case_formats(out: Path) -> Case:
    c = Case(out, "formats", "device formats with padding and original_shape: NC1HWC0 fp16 (C0 16) and int8 "
             "(C0 32), FRACTAL_NZ fp16 with batch, FRACTAL_NZ fp32 with W0 = 8 (C0 from the device "
             "shape, not the dtype), 1-D FRACTAL_NZ, and FRACTAL_NZ without original_shape (whole "
             "buffer). Logical values are >= 0.5 so min/mean over padding zeros would be wrong")
    time = "20241121190000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 25_200_000_000
    x = vals(2 * 3 * 4 * 5, 1.0, 2.0, seed=801).reshape(2, 3, 4, 5)
    y = x.copy()
    y[1, 2, 3, 4] = np.nan
    dev = to_nc1hwc0(y, 16)
    c.dump(d, g, op_type="TransData", op_name="to_nc1hwc0_fp16", task=1, stream=1, ts=base + 1,
           inputs=[t(x, 2, fmt=FMT["NCHW"])],
           outputs=[Tensor(y, 2, fmt=FMT["NC1HWC0"], raw=dev.tobytes(), shape=list(dev.shape), orig=[2, 3, 4, 5])])
    xi = np.arange(1, 1 + 40 * 2 * 2, dtype=np.int64).reshape(1, 40, 2, 2)
    xi = (xi % 100 + 1).astype(np.int8)
    dev = to_nc1hwc0(xi, 32)
    c.dump(d, g, op_type="TransData", op_name="to_nc1hwc0_int8", task=2, stream=1, ts=base + 2,
           outputs=[Tensor(xi, 3, fmt=FMT["NC1HWC0"], raw=dev.tobytes(), shape=list(dev.shape), orig=[1, 40, 2, 2])])
    z = vals(2 * 20 * 35, 0.5, 3.0, seed=802).reshape(2, 20, 35)
    z[1, 19, 34] = np.inf
    dev = to_fractal_nz(z, 16)
    assert list(dev.shape) == [2, 3, 2, 16, 16]
    c.dump(d, g, op_type="MatMul", op_name="nz_fp16_batch", task=3, stream=1, ts=base + 3,
           outputs=[Tensor(z, 2, fmt=FMT["FRACTAL_NZ"], raw=dev.tobytes(), shape=list(dev.shape), orig=[2, 20, 35])])
    f = vals(5 * 10, 0.5, 3.0, dt=1, seed=803).reshape(5, 10)
    dev = to_fractal_nz(f, 8)
    assert list(dev.shape) == [2, 1, 16, 8]
    c.dump(d, g, op_type="MatMul", op_name="nz_fp32_w0_8", task=4, stream=1, ts=base + 4,
           outputs=[Tensor(f, 1, fmt=FMT["FRACTAL_NZ"], raw=dev.tobytes(), shape=list(dev.shape), orig=[5, 10])])
    v = vals(20, 0.5, 3.0, seed=804)
    dev = to_fractal_nz(v, 16)
    assert list(dev.shape) == [2, 1, 16, 16]
    c.dump(d, g, op_type="Conv2D", op_name="nz_1d", task=5, stream=1, ts=base + 5,
           outputs=[Tensor(v, 2, fmt=FMT["FRACTAL_NZ"], raw=dev.tobytes(), shape=list(dev.shape), orig=[20])])
    w = vals(10 * 12, 0.5, 3.0, seed=805).reshape(10, 12)
    dev = to_fractal_nz(w, 16)
    c.dump(d, g, op_type="MatMul", op_name="nz_without_original_shape", task=6, stream=1, ts=base + 6,
           outputs=[Tensor(dev, 2, fmt=FMT["FRACTAL_NZ"], raw=dev.tobytes(), shape=list(dev.shape))])
    return c


def case_npugraph_ex(out: Path) -> Case:
    try:
        import torch
    except ImportError as e:  # the brief: never skip silently
        sys.exit(f"gen_dump_fixtures.py: the npugraph_ex case needs torch (torch.save), but "
                 f"`import torch` failed: {e}. Install it into the test venv (scripts/requirements-test.txt).")
    c = Case(out, "npugraph_ex", "npugraph_ex worldsize{W}_global_rank{R}/<fxnode>_device_<dev>_<count>.pt "
             "(torch.save zip archives): fp32/fp16/bf16; a transposed (non-contiguous) tensor; a view "
             "whose storage holds a NaN OUTSIDE the view (must not be counted); ordered by counter")

    def save(rank, fx, dev, count, tensor):
        rel = f"worldsize2_global_rank{rank}/{fx}_device_{dev}_{count}.pt"
        p = c.root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        torch.save(tensor, p)
        return rel

    def rec(rel, rank, fx, count, arr, dt, shape):
        g = {"rank": rank, "world_size": 2, "time": None, "model": None, "model_id": None, "step": None,
             "layout": "npugraph_ex"}
        op = Op(rel, g, (count, rel), {"op_name": fx})
        x = Tensor(arr, dt, report_shape=shape)
        r = c._record(op, "output", 0, x, "pt")
        r["format"] = None
        op.outputs = [r]
        c.add_op(op)

    g = torch.Generator().manual_seed(901)
    # rank 0
    a = torch.rand(3, 4, generator=g, dtype=torch.float32)
    rec(save(0, "arg0_1", 0, 0, a), 0, "arg0_1", 0, a.numpy(), 1, [3, 4])
    mm = (torch.rand(4, 4, generator=g) * 100).to(torch.float16)
    mm[1, 1] = 65504.0
    rec(save(0, "permute", 0, 9, mm), 0, "permute", 9, mm.numpy(), 2, [4, 4])
    rn = torch.rand(2, 8, generator=g).to(torch.bfloat16)
    rn[0, 3] = float("nan")
    rn[1, 7] = float("nan")
    rec(save(0, "npu_rms_norm", 0, 10, rn), 0, "npu_rms_norm", 10,
        rn.to(torch.float32).numpy().astype(ml_dtypes.bfloat16), 27, [2, 8])
    base = torch.rand(4, 6, generator=g, dtype=torch.float32)
    base[2, 1] = float("inf")
    tr = base.t()                      # (6, 4), strides (1, 6): non-contiguous
    assert not tr.is_contiguous()
    rec(save(0, "transpose", 0, 11, tr), 0, "transpose", 11, tr.contiguous().numpy(), 1, [6, 4])
    big = torch.rand(8, 3, generator=g, dtype=torch.float32)
    big[0, 0] = float("nan")           # outside the view below
    big[7, 2] = float("-inf")          # outside the view below
    view = big[2:5]                    # storage_offset 6, the NaN/-Inf are in the saved storage
    assert view.storage_offset() == 6
    rec(save(0, "slice_1", 0, 12, view), 0, "slice_1", 12, view.contiguous().numpy(), 1, [3, 3])
    # rank 1
    b = torch.rand(5, generator=g, dtype=torch.float32)
    rec(save(1, "arg0_1", 1, 0, b), 1, "arg0_1", 0, b.numpy(), 1, [5])
    add = torch.rand(2, 3, generator=g, dtype=torch.float32)
    add[1, 0] = float("-inf")
    rec(save(1, "add", 1, 1, add), 1, "add", 1, add.numpy(), 1, [2, 3])
    return c


def case_npy(out: Path) -> Case:
    c = Case(out, "npy", "NumPy files named like msaccucmp convert output {dump}.{input|output}.{i}.npy, "
             "one in Fortran order, one in format 2.0, one with bytes after its data, one cut short (an "
             "error), in a directory without a known layout")
    g = {"rank": None, "world_size": None, "time": None, "device": None, "model": None, "model_id": None,
         "step": None, "layout": "other"}

    def npy(name, arr, dt, io, index, fortran=False, version=None, trailing=b""):
        p = c.root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        with open(p, "wb") as f:
            np.lib.format.write_array(f, np.asfortranarray(arr) if fortran else arr, version=version)
            f.write(trailing)
        op = Op(name, g, (0, name), {})
        r = c._record(op, io, index, Tensor(arr, dt), "npy")
        r["format"] = None
        op.outputs = [r]
        c.add_op(op)

    ts = T0 + 50
    npy(f"Add.add.1.2.{ts}.input.0.npy", vals(12, dt=1, seed=1001).reshape(3, 4), 1, "input", 0)
    npy(f"Add.add.1.2.{ts}.output.0.npy", vals(12, dt=1, seed=1002, plant={7: NAN}).reshape(3, 4), 1, "output", 0)
    npy(f"Cast.cast.3.2.{ts + 10}.output.0.npy",
        vals(24, seed=1003, plant={0: 65504.0, 23: -INF}).reshape(4, 6), 2, "output", 0, fortran=True)
    # format version 2.0: a u32 header length
    npy(f"Mul.mul.4.2.{ts + 20}.output.0.npy", vals(10, dt=1, seed=1004, plant={2: INF}), 1, "output", 0,
        version=(2, 0))
    # bytes after the data (numpy.load ignores them): the data starts after the header, it is not
    # "the last N bytes of the file" — those would include the two NaNs appended here
    npy(f"Sub.sub.5.2.{ts + 30}.output.0.npy", vals(8, dt=1, seed=1005), 1, "output", 0,
        trailing=np.array([NAN, NAN], np.float32).tobytes())
    # cut: the header declares 16 float32, 8 bytes are missing
    rel = f"Div.div.6.2.{ts + 40}.output.0.npy"
    buf = io.BytesIO()
    np.save(buf, vals(16, dt=1, seed=1006))
    c.write(rel, buf.getvalue()[:-8])
    c.error(rel, ["truncat", "more than", "bytes"], "16 float32 declared, the last 8 bytes are missing")
    c.checks["unchecked_first_born"] = True
    return c


def case_stats(out: Path) -> Case:
    c = Case(out, "stats", "stats CSVs (dump_data: stats) in a model tree: the 13-column header and the "
             "KFC '…,Shape,Count,<selected items>' header with l2norm; glibc nan/-nan/inf/-inf; "
             "NA and UNKNOW rows, '-' dtype with empty stats; fp16 max 65504 proves overflow "
             "(count unknown: null)")
    time = "20241121170000"
    d = f"{time}/0/bert/1/0"
    g = model_group(None, None, time, 0, "bert", 1, 0)
    base = T0 + 18_000_000_000
    h13 = ("Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,Count,"
           "Nan Count,Negative Inf Count,Positive Inf Count")
    hkfc = ("Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,Min Value,Nan Count,"
            "Negative Inf Count,Positive Inf Count,l2norm")

    def stats_file(op_type, op_name, task, ts, header, rows, records):
        rel = f"{d}/{op_type}.{op_name}.{task}.1.{ts}.csv"
        c.write(rel, (header + "\n" + "".join(r + "\n" for r in rows)).encode())
        op = Op(rel, g, (ts, task, rel), {"op_name": op_name, "op_type": op_type, "task_id": task,
                                          "stream_id": 1, "timestamp": ts})
        for io, index, rec in records:
            r = {"path": rel, "io": io, "index": index, "source": "stats", **op.meta,
                 **{k: v for k, v in g.items() if k != "layout"}, **rec}
            ks = kinds_of({"nan": rec["nan"], "pos_inf": rec["pos_inf"], "neg_inf": rec["neg_inf"],
                           "overflow": rec.get("overflow_proved", 0)})
            r.pop("overflow_proved", None)
            r["kinds"], r["kind"] = ks, (ks[0] if ks else None)
            (op.inputs if io == "input" else op.outputs).append(r)
        c.add_op(op)
        return rel

    def row(dtype, fmt, shape, elements, nan=0, pos=0, neg=0, mn=None, mx=None, mean=None, ovf=0):
        r = {"dtype": dtype, "format": fmt, "elements": elements, "nan": nan,
             "pos_inf": pos, "neg_inf": neg, "overflow_proved": ovf}
        if shape is not None:
            r["shape"] = shape
        if ovf:
            r["overflow"] = None
        for k, v in (("min", mn), ("max", mx), ("mean", mean)):
            if v is not None:
                r[k] = v
        return r

    stats_file("MatMul", "bert_matmul", 3, base + 1, h13, [
        "Input,0,2048,DT_FLOAT16,ND,32x32,1.99999,-1,0.5,1024,0,0,0",
        "Input,1,2048,DT_FLOAT16,FRACTAL_NZ,2x2x16x16,65504,-3.5,12.25,1024,0,0,0",
        "Output,0,2048,DT_FLOAT16,ND,32x32,65504,-65504,0.666667,1024,0,0,0",
    ], [("input", 0, row("DT_FLOAT16", "ND", [32, 32], 1024, mn=-1.0, mx=1.99999, mean=0.5)),
        ("input", 1, row("DT_FLOAT16", "FRACTAL_NZ", [2, 2, 16, 16], 1024, ovf=1)),
        ("output", 0, row("DT_FLOAT16", "ND", [32, 32], 1024, ovf=1))])
    stats_file("Softmax", "bert_softmax", 4, base + 2, h13, [
        "Input,0,2048,DT_FLOAT,NHWC,4x8x4x4,65504,-2,1.4013e-43,512,0,0,0",
        "Output,0,2048,DT_FLOAT,NHWC,4x8x4x4,nan,nan,-nan,512,3,0,0",
        "Output,1,1024,DT_FLOAT16,ND,512,inf,-inf,-nan,512,0,1,2",
        "Output,2,1024,-,ND,512,,,,,,,",
    ], [("input", 0, row("DT_FLOAT", "NHWC", [4, 8, 4, 4], 512, mn=-2.0, mx=65504.0, mean=1.4013e-43)),
        ("output", 0, row("DT_FLOAT", "NHWC", [4, 8, 4, 4], 512, nan=3)),
        ("output", 1, row("DT_FLOAT16", "ND", [512], 512, pos=2, neg=1))])
    rel = stats_file("Add", "bert_add", 5, base + 3, hkfc, [
        "Input,0,64,DT_BF16,ND,-,32,3.5,-0.25,0,0,0,10.5",
        "Input,1,64,DT_FLOAT,ND,16,NA,NA,NA,NA,NA,NA,NA",
        "Input,2,64,UNKNOW,UNKNOW,4x4,16,1,0,0,0,0,2",
        "Output,0,128,DT_FLOAT,ND,2x16,32,inf,-7,0,0,4,inf",
        "Output,1,64,DT_FLOAT16,ND,32,32,12,-65504,0,0,0,100.5",
    ], [("input", 0, row("DT_BF16", "ND", None, 32, mn=-0.25, mx=3.5)),
        ("output", 0, row("DT_FLOAT", "ND", [2, 16], 32, pos=4)),
        ("output", 1, row("DT_FLOAT16", "ND", [32], 32, ovf=1))])
    # rows whose verdict cannot be read: may be reported as errors or silently carry no verdict
    c.optional_error_paths += [rel, f"{d}/Softmax.bert_softmax.4.1.{base + 2}.csv"]
    c.optional_tensor_paths += [rel, f"{d}/Softmax.bert_softmax.4.1.{base + 2}.csv"]
    return c


def case_opdebug(out: Path) -> Case:
    c = Case(out, "opdebug", "Opdebug.Node_OpDebug files (old 2048-byte and new 0x5A5A5A5A layouts) paired "
             "with the op dump of the same task/stream (from the payload, not the Opdebug file name) in "
             "the same directory, the earliest timestamp winning; a decoy with the same task/stream in "
             "another directory; a new-layout AICPU payload with no partner")
    time = "20241121180000"
    base = T0 + 21_600_000_000
    model = "ge_default_overflow"
    d0 = f"{time}/0/{model}/1/0"
    d1 = f"{time}/0/{model}/1/1"
    g0 = model_group(None, None, time, 0, model, 1, 0)
    g1 = model_group(None, None, time, 0, model, 1, 1)
    add1 = c.dump(d0, g0, op_type="Add", op_name="add_ovf", task=7, stream=2, ts=base + 10,
                  inputs=[t(vals(16, seed=1101), 2)], outputs=[t(vals(16, seed=1102, plant={2: 65504.0}), 2)])
    c.dump(d0, g0, op_type="Add", op_name="add_ovf", task=7, stream=2, ts=base + 30,
           inputs=[t(vals(16, seed=1103), 2)], outputs=[t(vals(16, seed=1104), 2)])
    mul = c.dump(d0, g0, op_type="Mul", op_name="mul_ovf", task=8, stream=3, ts=base + 20,
                 inputs=[t(vals(16, dt=1, seed=1105), 1)], outputs=[t(vals(16, dt=1, seed=1106, plant={0: INF}), 1)])
    c.dump(d1, g1, op_type="Add", op_name="add_ovf", task=7, stream=2, ts=base + 5,
           inputs=[t(vals(16, seed=1107), 2)], outputs=[t(vals(16, seed=1108), 2)])

    def opdebug(rel_dir, g, task, stream, ts, payload, layout, units, paired):
        op = c.dump(rel_dir, g, op_type="Opdebug", op_name="Node_OpDebug", task=task, stream=stream, ts=ts,
                    outputs=[Tensor(np.frombuffer(payload, np.uint8), 4, raw=payload, shape=[2048])])
        c.optional_tensor_paths.append(op.path)
        c.ops.remove(op)   # the 2048-byte uint8 payload is not an operator in execution order
        c.opdebug.append({"path": op.path, "layout": layout, "task_id": task, "stream_id": stream,
                          "units_nonzero": units, "paired_dump": paired})

    opdebug(d0, g0, 59, 2, base + 11,
            opdebug_old({"AI Core": (1, 2, 7, 0x4), "DHA Atomic Add": (0, 0, 0, 0), "L2 Atomic Add": (0, 0, 0, 0)}),
            "old", [{"unit": "AI Core", "status": 4, "task_id": 7, "stream_id": 2, "model_id": 1}], add1.path)
    opdebug(d0, g0, 60, 2, base + 21, opdebug_new("AIV", 1, 3, 8, 0x10), "new",
            [{"unit": "AIV", "status": 16, "task_id": 8, "stream_id": 3, "model_id": 1}], mul.path)
    opdebug(d0, g0, 61, 2, base + 41, opdebug_new("AICPU", 1, 9, 99, 1), "new",
            [{"unit": "AICPU", "status": 1, "task_id": 99, "stream_id": 9, "model_id": 1}], None)
    return c


# ---------------------------------------------------------------------------------------------
# Hand-assembled torch.save archives (pickle opcodes from the `pickle` module's documentation,
# `pickletools`); used for the malformed `.pt` cases, where torch.save cannot write the bytes.
# ---------------------------------------------------------------------------------------------

def pk_str(s: str) -> bytes:
    b = s.encode()
    return b"X" + struct.pack("<I", len(b)) + b          # BINUNICODE


def pk_int(n: int) -> bytes:
    return b"J" + struct.pack("<i", n)                   # BININT


def pk_ints(xs) -> bytes:
    return b"(" + b"".join(pk_int(x) for x in xs) + b"t"  # MARK … TUPLE


def pt_tensor_pickle(storage: str, key: str, numel: int, offset: int, size, stride) -> bytes:
    """data.pkl of torch.save(t): torch._utils._rebuild_tensor_v2(persistent_load(('storage',
    torch.<storage>, key, 'cpu', numel)), offset, size, stride, False, OrderedDict()), protocol 2."""
    pid = b"(" + pk_str("storage") + f"ctorch\n{storage}\n".encode() + pk_str(key) + pk_str("cpu") \
        + pk_int(numel) + b"t"
    return (b"\x80\x02" + b"ctorch._utils\n_rebuild_tensor_v2\n" + b"(" + pid + b"Q" + pk_int(offset)
            + pk_ints(size) + pk_ints(stride) + b"\x89" + b"ccollections\nOrderedDict\n)R" + b"tR.")


def pt_archive(pkl: bytes, records: dict) -> bytes:
    """A torch.save-style zip: archive/data.pkl and archive/data/<key>, all stored uncompressed."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/byteorder", b"little")
        for key, data in records.items():
            z.writestr(f"archive/data/{key}", data)
        z.writestr("archive/version", b"3\n")
    return buf.getvalue()


def check_pt_with_torch(data: bytes, want: np.ndarray):
    """The hand-assembled archive is what torch.save would write: torch.load reads it back."""
    import torch
    got = torch.load(io.BytesIO(data), weights_only=True)
    assert np.array_equal(got.numpy(), want), (got, want)


def case_bad(out: Path) -> Case:
    c = Case(out, "bad", "bad inputs next to clean dumps, each one error entry, scan goes on, exit 0: "
             "truncated data block (the complete input before it is still scanned, the cut output is an "
             "error entry and no tensor), header length "
             "larger than the file, absurdly large header length, undecodable protobuf, a text file "
             "named like a dump, an empty file, an unreadable file (chmod 000; readable anyway when "
             "run as root), a symlink loop; malformed .pt archives: 100 000-deep nested tuples, a memo "
             "bomb (a list doubled 64 times through the memo), a cut zip, a size and an offset past "
             "the storage record, a missing storage record")
    time = "20241121200000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 28_800_000_000
    c.dump(d, g, op_type="Add", op_name="good_clean", task=1, stream=1, ts=base + 1,
           inputs=[t(vals(8, dt=1, seed=1201), 1)], outputs=[t(vals(8, dt=1, seed=1202), 1)])

    # truncated: output 0 declares 4096 bytes, 1000 are present
    ins = [t(vals(16, dt=1, seed=1203), 1)]
    full = t(vals(1024, dt=1, seed=1204), 1)
    dd = dump_header("truncated", base + 2, ins, [full])
    data = v2_bytes(dd, ins, [full])
    rel = f"{d}/Add.truncated.2.1.{base + 2}"
    c.write(rel, data[:len(data) - 4096 + 1000])
    op = Op(rel, g, (base + 2, 2, rel), {"op_name": "truncated", "op_type": "Add", "task_id": 2, "stream_id": 1,
                                         "timestamp": base + 2})
    op.inputs = [c._record(op, "input", 0, ins[0], "dump")]
    # one rule for a truncated block: an error naming the file and offset, never a tensor made
    # of the 250 elements that happen to be there
    op.outputs = []
    c.add_op(op)
    c.error(rel, ["truncat", "short", "exceed", "beyond", "past", "end of file", "eof", "missing", "bytes"],
            "output 0 declares 4096 bytes, only 1000 present; input 0 (complete) is still scanned")

    rel = f"{d}/Add.hdr_len_gt_file.3.1.{base + 3}"
    hdr = dump_header("hdr_len_gt_file", base + 3, [], [t(vals(4, dt=1, seed=1205), 1)]).SerializeToString()
    c.write(rel, struct.pack("<Q", len(hdr) + 500) + hdr)
    c.error(rel, ["header", "length", "exceed", "larger", "beyond", "truncat"], "u64 header length = file size + 500 - 8")

    rel = f"{d}/Add.hdr_len_huge.4.1.{base + 4}"
    c.write(rel, struct.pack("<Q", 0x7FFF_FFFF_FFFF_FFF8) + hdr + bytes(64))
    c.error(rel, ["header", "length", "exceed", "larger", "beyond", "truncat"], "u64 header length = 2^63 - 8")

    rel = f"{d}/Add.bad_protobuf.5.1.{base + 5}"
    junk = bytes([0x0A, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x12, 0x07, 0xFF, 0xFF, 0xFF, 0xFF])
    c.write(rel, struct.pack("<Q", len(junk)) + junk + bytes(32))
    c.error(rel, ["protobuf", "decode", "header", "invalid", "malformed"], "12-byte header that is not protobuf")

    rel = f"{d}/Add.not_a_dump.6.1.{base + 6}"
    c.write(rel, b"this is a text file that happens to be named like a dump file\n" * 4)
    c.error(rel, ["header", "length", "protobuf", "decode", "not a dump", "invalid", "unrecognised",
                  "unrecognized", "unknown", "exceed", "larger"], "ASCII text")

    rel = f"{d}/Add.empty.7.1.{base + 7}"
    c.write(rel, b"")
    c.error(rel, ["empty", "short", "small", "truncat", "header", "bytes", "eof", "end of file"], "zero bytes")

    # unreadable file: a valid, clean dump with mode 000
    rel = f"{d}/Add.unreadable.8.1.{base + 8}"
    ins, outs = [t(vals(8, dt=1, seed=1206), 1)], [t(vals(8, dt=1, seed=1207), 1)]
    op = c.dump(d, g, op_type="Add", op_name="unreadable", task=8, stream=1, ts=base + 8, inputs=ins, outputs=outs)
    c.written = [w for w in c.written if w[0] != rel]
    p = c.root / rel
    os.chmod(p, 0)
    try:
        with open(p, "rb"):
            readable = True
    except PermissionError:
        readable = False
    if readable:
        note = "running as root: chmod 000 does not block reads, so the file is scanned like any other"
    else:
        c.ops.remove(op)
        c.error(rel, ["permission", "denied", "os error 13", "eacces", "unreadable"], "mode 000")
        note = "not root: the file cannot be read and must be one error entry"
    c.checks["unreadable"] = {"path": rel, "readable_when_generated": readable, "note": note,
                              "tensors": [r for r in op.inputs + op.outputs],
                              "any_of": ["permission", "denied", "os error 13", "eacces", "unreadable"]}
    # the Rust test re-checks readability itself at run time and adjusts
    c.checks["summary_depends_on_unreadable"] = True

    loop = c.root / d / "loop"
    os.symlink("..", loop)   # {time}/0/loop -> {time}: an ancestor, an endless walk
    c.error(f"{d}/loop", ["loop", "cycle", "recurs", "symlink", "symbolic"], "symlink to its own ancestor")

    # --- malformed .pt archives: each one error entry, never an abort -------------------------
    six = np.arange(6, dtype=np.float32)
    good = pt_archive(pt_tensor_pickle("FloatStorage", "0", 6, 0, [2, 3], [3, 1]), {"0": six.tobytes()})
    check_pt_with_torch(good, six.reshape(2, 3))

    rel = f"{d}/deep_device_0_1.pt"
    deep = b"\x80\x02)" + b"\x85" * 100_000 + b"."    # EMPTY_TUPLE, then TUPLE1 100 000 times
    c.write(rel, pt_archive(deep, {}))
    c.error(rel, ["deep", "nest", "depth", "level"], "tuples nested 100 000 levels (Python's pickler "
            "stops at ~1000)")

    rel = f"{d}/memo_bomb_device_0_2.pt"
    bomb = b"\x80\x02]\x94"                             # EMPTY_LIST, MEMOIZE (memo 0)
    for k in range(64):                                # memo k+1 = [memo k, memo k]
        bomb += b"(h" + bytes([k]) + b"h" + bytes([k]) + b"l\x94"
    c.write(rel, pt_archive(bomb + b".", {}))
    c.error(rel, ["no tensor"], "a list of 2^64 empty lists described in ~470 bytes; holds no tensor")

    rel = f"{d}/cut_zip_device_0_3.pt"
    c.write(rel, good[:len(good) // 2])
    c.error(rel, ["zip", "archive"], "the first half of a valid archive: no central directory")

    rel = f"{d}/size_past_record_device_0_4.pt"
    c.write(rel, pt_archive(pt_tensor_pickle("FloatStorage", "0", 1000, 0, [1000], [1]),
                            {"0": six.tobytes()}))
    c.error(rel, ["does not fit", "storage record"], "1000 float32 elements in a 24-byte record")

    rel = f"{d}/offset_past_record_device_0_5.pt"
    c.write(rel, pt_archive(pt_tensor_pickle("FloatStorage", "0", 6, 100, [2], [1]),
                            {"0": six.tobytes()}))
    c.error(rel, ["does not fit", "storage record"], "storage offset 100 in a 6-element record")

    rel = f"{d}/missing_record_device_0_6.pt"
    c.write(rel, pt_archive(pt_tensor_pickle("FloatStorage", "7", 6, 0, [6], [1]), {"0": six.tobytes()}))
    c.error(rel, ["storage record", "not found"], "data.pkl names storage record 7; the archive has only 0")
    return c


def case_symlinks(out: Path) -> Case:
    c = Case(out, "symlinks", "a symlink diamond: links/one and links/two both point at {time}, and "
             "links/file_link at a dump inside the tree; every real directory and file is scanned "
             "once, under its real path, with no error")
    time = "20241121230000"
    d = f"{time}/0"
    g = single_group(time, 0)
    base = T0 + 100_000_000_000
    op = c.dump(d, g, op_type="Add", op_name="diamond_target", task=1, stream=1, ts=base + 1,
                inputs=[t(vals(8, dt=1, seed=1401), 1)],
                outputs=[t(vals(8, dt=1, seed=1402, plant={3: NAN}), 1)])
    c.dump(d, g, op_type="Mul", op_name="diamond_clean", task=2, stream=1, ts=base + 2,
           inputs=[t(vals(8, dt=1, seed=1403), 1)], outputs=[t(vals(8, dt=1, seed=1404), 1)])
    links = c.root / "links"
    links.mkdir()
    os.symlink(f"../{time}", links / "one")
    os.symlink(f"../{time}", links / "two")
    os.symlink(f"../{op.path}", links / Path(op.path).name)
    return c


def case_no_dumps(out: Path) -> Case:
    c = Case(out, "no_dumps", "a directory with no dump file at all (a README and an unrelated CSV): "
             "nothing could be checked, exit 2")
    c.write("README.txt", b"dump tree goes here\n")
    c.write("sub/metrics.csv", b"step,loss\n0,1.5\n")
    c.checks["exit_code"] = 2
    return c


def case_nothing_decoded(out: Path) -> Case:
    c = Case(out, "nothing_decoded", "only files named like dumps that do not decode (text, empty): "
             "each one error, not one tensor checked, exit 2 (not 'clean')")
    ts = T0 + 90_000_000_000
    rel = f"20241121210000/0/Add.text.1.1.{ts}"
    c.write(rel, b"this is not a dump, only named like one\n" * 3)
    c.error(rel, ["header", "length", "protobuf", "decode", "not a dump", "invalid", "exceed", "larger"],
            "ASCII text")
    rel = f"20241121210000/0/Mul.empty.2.1.{ts + 1}"
    c.write(rel, b"")
    c.error(rel, ["empty", "short", "small", "truncat", "bytes"], "zero bytes")
    c.checks["exit_code"] = 2
    return c


def case_example(out: Path, root_dir: Path | None = None, name="example") -> Case:
    c = Case(out, name, "the small bundled example (testdata/dump-example): one torchair rank, two "
             "steps; NaN born in Div propagates through Add; step 1 has an fp16 overflow",
             root_dir=root_dir)
    time = "20241121120000"
    model = "ge_default_20241121120000_1"
    base = T0
    for step in (0, 1):
        d = f"worldsize1_global_rank0/{time}/0/{model}/1/{step}"
        g = model_group(0, 1, time, 0, model, 1, step)
        b = base + step * 1_000_000
        s = 1300 + step * 20
        c.dump(d, g, op_type="MatMul", op_name="model/layer0/MatMul", task=4, stream=2, ts=b + 100,
               inputs=[t(vals(64, seed=s + 1).reshape(8, 8), 2), t(vals(64, seed=s + 2).reshape(8, 8), 2)],
               outputs=[t(vals(64, seed=s + 3).reshape(8, 8), 2)])
        if step == 0:
            c.dump(d, g, op_type="RealDiv", op_name="model/layer0/attn/RealDiv", task=5, stream=2, ts=b + 200,
                   inputs=[t(vals(64, 0.0, 1.0, dt=1, seed=s + 4, plant={9: 0.0}).reshape(8, 8), 1),
                           t(vals(64, 0.5, 1.0, dt=1, seed=s + 5, plant={9: 0.0}).reshape(8, 8), 1)],
                   outputs=[t(vals(64, dt=1, seed=s + 6, plant={9: NAN}).reshape(8, 8), 1)])
            c.dump(d, g, op_type="Add", op_name="model/layer0/Add", task=6, stream=2, ts=b + 300,
                   inputs=[t(vals(64, dt=1, seed=s + 7, plant={9: NAN}).reshape(8, 8), 1),
                           t(vals(64, dt=1, seed=s + 8).reshape(8, 8), 1)],
                   outputs=[t(vals(64, dt=1, seed=s + 9, plant={9: NAN}).reshape(8, 8), 1)])
        else:
            c.dump(d, g, op_type="Cast", op_name="model/layer0/Cast", task=5, stream=2, ts=b + 200,
                   inputs=[t(vals(64, dt=1, seed=s + 4, plant={3: 70000.0}), 1)],
                   outputs=[t(vals(64, seed=s + 5, plant={3: 65504.0}), 2)])
    return c


# ---------------------------------------------------------------------------------------------
# Benchmark tree
# ---------------------------------------------------------------------------------------------


def bench_tree(out: Path, gib: float):
    """>= gib GiB of fp16/fp32 v2 dumps in a torchair layout, 0.75–6 MiB per file; 1 in 16 files
    has planted NaN/Inf. Data is generated once per dtype and sliced, so writing is I/O bound."""
    _replace_generated_dir(out, "BENCH_TREE.json")
    target = int(gib * (1 << 30))
    rng = np.random.default_rng(7)
    pool = {1: rng.standard_normal(2 << 20).astype(np.float32),
            2: rng.standard_normal(4 << 20).astype(np.float16)}
    written = files = 0
    step = 0
    time = "20241121120000"
    while written < target:
        d = out / f"worldsize1_global_rank0/{time}/0/ge_default_bench/1/{step}"
        d.mkdir(parents=True, exist_ok=True)
        for i in range(64):
            if written >= target:
                break
            dt = 2 if files % 3 else 1
            item = NP_TYPES[dt].itemsize
            n_out = ((1 + (files * 7) % 8) << 20) // item // 2
            n_in = n_out // 2
            src = pool[dt]
            off = (files * 4099) % (len(src) - n_out)
            a_in = src[off:off + n_in]
            a_out = src[off:off + n_out]
            if files % 16 == 5:
                a_out = a_out.copy()
                a_out[files % n_out] = np.nan
                a_out[(files * 31) % n_out] = np.inf
            ins = [Tensor(a_in, dt, raw=a_in.tobytes())]
            outs = [Tensor(a_out, dt, raw=a_out.tobytes())]
            ts = T0 + files * 100
            dd = dump_header(f"bench/op_{files}", ts, ins, outs, original_names=False)
            (d / f"MatMul.bench_op_{files}.{files}.1.{ts}").write_bytes(v2_bytes(dd, ins, outs))
            written += 8 + dd.ByteSize() + len(ins[0].raw) + len(outs[0].raw)
            files += 1
        step += 1
    (out / "BENCH_TREE.json").write_text(json.dumps({"gib": gib, "bytes": written, "files": files}) + "\n")
    print(f"bench tree: {files} files, {written / (1 << 30):.2f} GiB under {out}")


def bench_files_tree(out: Path, n: int, per_dir: int = 1000):
    """n small dumps (two 16-element fp16 tensors each) in a torchair layout, per_dir files per
    step directory. 64 distinct dumps are written once (1 in 16 holds a NaN) and every file of
    the tree is a hard link to one of them under its own name: the tree costs inodes, not data,
    and the scan still opens, decodes and checks every file."""
    _replace_generated_dir(out, "BENCH_TREE.json")
    time = "20241121120000"
    templates = out / "templates"
    templates.mkdir(parents=True)
    srcs = []
    for i in range(64):
        a = np.linspace(-1.0, 1.0, 16, dtype=np.float16)
        b = a.copy()
        if i % 16 == 5:
            b[i % 16] = np.nan
        ins, outs = [Tensor(a, 2)], [Tensor(b, 2)]
        dd = dump_header(f"bench/op_{i}", T0 + i, ins, outs, original_names=False)
        p = templates / f"t{i}"
        p.write_bytes(v2_bytes(dd, ins, outs))
        srcs.append(p)
    root = out / "root"
    d = None
    for k in range(n):
        if k % per_dir == 0:
            d = root / f"worldsize1_global_rank0/{time}/0/ge_default_bench/1/{k // per_dir}"
            d.mkdir(parents=True)
        os.link(srcs[k % 64], d / f"Add.bench_op_{k}.{k}.1.{T0 + k}")
    (out / "BENCH_TREE.json").write_text(json.dumps({"files": n, "per_dir": per_dir}) + "\n")
    print(f"bench files tree: {n} files (hard links to 64 dumps) under {root}")


# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# Device addresses (spec §1.4: OpInput.address = field 8, OpOutput.address = field 9)
# ---------------------------------------------------------------------------------------------
#
# Each case writes a small model dump whose headers carry explicit device addresses, and states
# in `expected.json` ("addresses", per group key) what the address analysis must find — written
# down from the scenario, not computed by any linking code: the producer of each anomalous input
# and each overwrite (producer, consumer, range, operators in between, overlapping ones first).

MODEL_A = "ge_default_20241121120000_1"


def _addr_op(c, d, g, ts, task, op_type, name, ins, outs):
    """ins / outs: (values, address) pairs of 64 fp32 values (256 bytes) each."""
    return c.dump(d, g, op_type=op_type, op_name=name, task=task, stream=2, ts=ts,
                  inputs=[t(v, 1, address=a) for v, a in ins],
                  outputs=[t(v, 1, address=a) for v, a in outs])


def _addr_group(rank, ws=1, step=0, time="20241121120000"):
    d = f"worldsize{ws}_global_rank{rank}/{time}/0/{MODEL_A}/1/{step}"
    return d, model_group(rank, ws, time, 0, MODEL_A, 1, step)


def _clean(seed):
    return vals(64, dt=1, seed=seed)


def _nan(seed):
    return vals(64, dt=1, seed=seed, plant={3: NAN})


def case_addr_overwrite(out: Path) -> Case:
    c = Case(out, "addr_overwrite", "memory overwrite: model/A writes clean values to 0x20000000; "
             "model/B (output at 0x20000080, overlapping) and model/Other run; model/C reads NaN "
             "from 0x20000000. Every dumped output is clean, nothing is born")
    d, g = _addr_group(0)
    b = T0 + 5_000_000
    _addr_op(c, d, g, b + 100, 1, "Mul", "model/A", [(_clean(1), 0x1000_0000)], [(_clean(2), 0x2000_0000)])
    _addr_op(c, d, g, b + 200, 2, "Add", "model/B", [(_clean(3), 0x3000_0000)], [(_clean(4), 0x2000_0080)])
    _addr_op(c, d, g, b + 300, 3, "Relu", "model/Other", [(_clean(5), 0x4000_0000)], [(_clean(6), 0x5000_0000)])
    _addr_op(c, d, g, b + 400, 4, "MatMul", "model/C", [(_nan(7), 0x2000_0000), (_clean(8), 0x6000_0000)],
             [(_nan(9), 0x7000_0000)])
    c.checks["addresses"] = {
        "status": "linked",
        "links": [
            {"consumer": ["model/C", 3, 0], "held": "anomalous", "start": 0x2000_0000, "end": 0x2000_0100,
             "producer": ["model/A", 0, 0], "producer_held": "clean"},
            {"consumer": ["model/C", 3, 1], "held": "clean", "start": 0x6000_0000, "end": 0x6000_0100,
             "producer": None, "producer_held": None},
        ],
        "overwrites": [
            {"producer": ["model/A", 0, 0], "consumer": ["model/C", 3, 0], "start": 0x2000_0000,
             "end": 0x2000_0100, "between": [["model/B", 1, True], ["model/Other", 2, False]],
             "between_count": 2},
        ],
    }
    c.checks["plan"] = [{
        "rank": 0, "scene": "watcher",
        "dump": {"dump_path": "./", "dump_scene": "watcher", "dump_mode": "output",
                 "dump_list": [{"layer": ["model/B", "model/Other"], "watcher_nodes": ["model/A"]}]},
        # the watched output (256 bytes) after each of the 2 layer ops
        "plan_bytes": 512,
    }]
    return c


def case_addr_clean(out: Path) -> Case:
    c = Case(out, "addr_clean", "the overwrite tree's operators, all clean: addresses linked, nothing to plan")
    d, g = _addr_group(0)
    b = T0 + 5_000_000
    _addr_op(c, d, g, b + 100, 1, "Mul", "model/A", [(_clean(1), 0x1000_0000)], [(_clean(2), 0x2000_0000)])
    _addr_op(c, d, g, b + 200, 2, "Add", "model/B", [(_clean(3), 0x3000_0000)], [(_clean(4), 0x2000_0080)])
    _addr_op(c, d, g, b + 400, 4, "MatMul", "model/C", [(_clean(7), 0x2000_0000)], [(_clean(9), 0x7000_0000)])
    c.checks["addresses"] = {"status": "linked", "links": [], "overwrites": []}
    c.checks["plan"] = []
    return c


def _born_chain(c, d, g, b, names, absent=False, born=1, seed=11):
    """A chain Mul -> Div -> Add: op i reads 0x{i+1}0000000 and writes 0x{i+2}0000000; the output of
    op `born` holds a NaN (born there), which every later op reads and writes."""
    for i, (ty, name) in enumerate(zip(("Mul", "Div", "Add"), names)):
        src, dst = (0 if absent else (i + 1) << 28), (0 if absent else (i + 2) << 28)
        x = _nan(seed + 2 * i) if i > born else _clean(seed + 2 * i)
        y = _nan(seed + 2 * i + 1) if i >= born else _clean(seed + 2 * i + 1)
        _addr_op(c, d, g, b + 100 * (i + 1), i + 1, ty, name, [(x, src)], [(y, dst)])


def case_addr_born(out: Path) -> Case:
    c = Case(out, "addr_born", "NaN born in model/Div (clean input written by model/Mul), read by model/Add")
    d, g = _addr_group(0)
    _born_chain(c, d, g, T0 + 5_000_000, ["model/Mul", "model/Div", "model/Add"])
    c.checks["addresses"] = {
        "status": "linked",
        "links": [
            {"consumer": ["model/Div", 1, 0], "held": "clean", "start": 0x2000_0000, "end": 0x2000_0100,
             "producer": ["model/Mul", 0, 0], "producer_held": "clean"},
            {"consumer": ["model/Add", 2, 0], "held": "anomalous", "start": 0x3000_0000, "end": 0x3000_0100,
             "producer": ["model/Div", 1, 0], "producer_held": "anomalous"},
        ],
        "overwrites": [],
    }
    c.checks["plan"] = [{
        "rank": 0, "scene": "narrowed",
        "dump": {"dump_path": "./", "dump_mode": "all", "dump_step": "0",
                 "dump_list": [{"model_name": MODEL_A, "layer": ["model/Div", "model/Mul"]}]},
        # Div's input (256) + Mul's output (256) + Div's anomalous output (64 fp32 = 256)
        "plan_bytes": 768,
    }]
    # The GE graph of that model (spec §8.3 text format): x -> model/Mul -> model/Div -> model/Add,
    # every tensor 64 fp32 (shape [64], no `size`: shape x element size).
    desc = 'dtype: DT_FLOAT shape { dim: 64 } layout: "ND"'
    ops = [("x", "Data", None), ("model/Mul", "Mul", "x:0"), ("model/Div", "RealDiv", "model/Mul:0"),
           ("model/Add", "Add", "model/Div:0")]
    lines = [f'graph {{\n  name: "{MODEL_A}"']
    for name, ty, src in ops:
        lines.append(f'  op {{\n    name: "{name}"\n    type: "{ty}"')
        if src:
            lines.append(f'    input: "{src}"\n    input_desc {{ {desc} }}')
        lines.append(f'    output_desc {{ {desc} }}\n  }}')
    lines.append("}")
    (c.case_dir / "ge_proto_00000001_Build.txt").write_text("\n".join(lines) + "\n")
    c.checks["plan_with_graph"] = {
        # --hops 2 from model/Div up the graph's edges: model/Mul, then x
        "layer": ["model/Div", "model/Mul", "x"],
        # Div 256 in + 256 out, Mul 256 + 256, x 256 out
        "plan_bytes": 1280,
    }
    return c


def case_addr_absent(out: Path) -> Case:
    c = Case(out, "addr_absent", "the born chain with no address in any header: nothing linked")
    d, g = _addr_group(0)
    _born_chain(c, d, g, T0 + 5_000_000, ["model/Mul", "model/Div", "model/Add"], absent=True)
    c.checks["addresses"] = {"status": "absent", "links": [], "overwrites": []}
    c.checks["plan"] = [{
        "rank": 0, "scene": "narrowed",
        "dump": {"dump_path": "./", "dump_mode": "all", "dump_step": "0",
                 "dump_list": [{"model_name": MODEL_A, "layer": ["model/Div"]}]},
        "plan_bytes": 256,
    }]
    return c


def case_addr_ranks(out: Path) -> Case:
    c = Case(out, "addr_ranks", "two ranks, step 1: rank 0 is born in model/Div, rank 1 in model/Add2")
    for rank, names in ((0, ["model/Mul", "model/Div", "model/Add"]), (1, ["model/Mul", "model/Div2", "model/Add2"])):
        d, g = _addr_group(rank, ws=2, step=1)
        _born_chain(c, d, g, T0 + 5_000_000 + rank * 1000, names, born=1 + rank, seed=11 + 10 * rank)
    c.checks["plan"] = [
        {"rank": 0, "scene": "narrowed",
         "dump": {"dump_path": "./", "dump_mode": "all", "dump_step": "1",
                  "dump_list": [{"model_name": MODEL_A, "layer": ["model/Div", "model/Mul"]}]},
         "plan_bytes": 768},
        {"rank": 1, "scene": "narrowed",
         "dump": {"dump_path": "./", "dump_mode": "all", "dump_step": "1",
                  "dump_list": [{"model_name": MODEL_A, "layer": ["model/Add2", "model/Div2"]}]},
         "plan_bytes": 768},
    ]
    return c


ADDRESS_CASES = [case_addr_overwrite, case_addr_clean, case_addr_born, case_addr_absent, case_addr_ranks]

ALL_CASES = [case_torchair, case_model_plain, case_msprobe, case_framings, case_dtypes, case_exception,
             case_ffts, case_formats, case_npugraph_ex, case_npy, case_stats, case_opdebug, case_bad,
             case_large, case_symlinks, case_no_dumps, case_nothing_decoded, case_example, *ADDRESS_CASES]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    ap.add_argument("--example", action="store_true",
                    help="write only the small example tree, directly into --out (testdata/dump-example)")
    ap.add_argument("--bench-gib", type=float, metavar="N",
                    help="write a benchmark tree of at least N GiB into --out")
    ap.add_argument("--bench-files", type=int, metavar="N",
                    help="write a benchmark tree of N small dumps (hard links) into --out/root")
    ap.add_argument("--per-dir", type=int, default=1000, metavar="N",
                    help="with --bench-files: N files per step directory (one group each)")
    args = ap.parse_args(argv)
    if args.bench_gib is not None:
        bench_tree(args.out, args.bench_gib)
        return 0
    if args.bench_files is not None:
        bench_files_tree(args.out, args.bench_files, args.per_dir)
        return 0
    if args.example:
        _replace_generated_dir(args.out, "worldsize1_global_rank0")
        c = case_example(args.out.parent, root_dir=args.out)
        c.self_check()
        size = sum(p.stat().st_size for p in args.out.rglob("*") if p.is_file())
        assert size < 200 * 1024, size
        print(f"example tree: {size} bytes under {args.out}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    summary = []
    for make in ALL_CASES:
        c = make(args.out)
        exp = c.finish()
        summary.append(f"{c.name}: {len(exp['tensors'])} tensors, {exp['summary']['anomalous_tensors']} "
                       f"anomalous, {len(exp['groups'])} groups, {len(exp['errors'])} errors")
    (args.out / "CASES.txt").write_text("\n".join(summary) + "\n")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
