#!/usr/bin/env python3
"""Independent writer of `npgx repro` fixtures.

Written from the specifications only (`shared/specs/dump-data.md` §1, §6, §8;
`shared/specs/plog-and-errors.md` §2, §5; `shared/specs/triage-and-repro.md` §5), never from
the Rust code under test. Dump files are made with the dump fixture writer's protobuf messages
(`gen_dump_fixtures.py`: Python's official protobuf runtime, field numbers typed in from the
spec) and numpy / ml_dtypes; GE graphs are protobuf text written here; each case has an
`expected.json` with the facts and numbers a correct case directory must show, computed from
the numpy arrays written.

Cases (under OUT/):
  accuracy/  a GE graph with two ops and a model-dump tree:
             * `blk.0/attn"q"/Add_1` (Add, float16 [3, 5]) whose dumped output has one planted
               error of +0.5 at [1, 2] -> the CPU golden comparison must FAIL;
             * `MatMul_7` (MatMulV2, bfloat16 x1 stored FRACTAL_NZ, x2 ND, float32 output) whose
               output is exact -> PASS; x1 must come back in its logical [20, 18] shape;
             * `Mul_9` (Mul) whose dumped inputs ([3, 5] and [4, 7]) do not fit the operator ->
               no CPU golden can be computed: the script reports why and exits 3.
  runtime/   an AscendC-style kernel (`…_high_performance_10330_mix_aiv`) with its .o (an ELF
             stub) and .json in kernel_meta/, a GE graph whose op carries `_kernelname`, an
             exception dump (task 6, no stream id) with a tiling-data input, and a plog with the
             AI Core error and GE's [AIC_INFO] block.

Usage: gen_repro_fixtures.py --out DIR
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from gen_dump_fixtures import DT, FMT, Tensor, dump_header, sanitise, to_fractal_nz, v2_bytes  # noqa: E402


def tensor_desc(dtype: str, shape, layout: str, ori_shape=None, ori_format=None, indent="    ") -> str:
    """A GE TensorDescriptor body (dump-data.md §8.3)."""
    i = indent
    dims = "".join(f"{i}    dim: {d}\n" for d in shape)
    ori_shape = shape if ori_shape is None else ori_shape
    ori_format = layout if ori_format is None else ori_format
    ori_dims = "".join(f"{i}          i: {d}\n" for d in ori_shape)
    return (
        f"{i}  dtype: {dtype}\n"
        f"{i}  shape {{\n{dims}{i}  }}\n"
        f"{i}  layout: \"{layout}\"\n"
        f"{i}  attr {{\n{i}    key: \"origin_format\"\n{i}    value {{\n{i}      s: \"{ori_format}\"\n{i}    }}\n{i}  }}\n"
        f"{i}  attr {{\n{i}    key: \"origin_shape\"\n{i}    value {{\n{i}      list {{\n{ori_dims}"
        f"{i}          val_type: VT_LIST_INT\n{i}      }}\n{i}    }}\n{i}  }}\n"
    )


def pb_str(s: str) -> str:
    """A protobuf text string literal."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def op_block(name, op_type, inputs, attrs, in_descs, out_descs, in_names=None, out_names=None) -> str:
    out = f"  op {{\n    name: {pb_str(name)}\n    type: {pb_str(op_type)}\n"
    for src in inputs:
        out += f"    input: {pb_str(src)}\n"
    for key, kind, value in attrs:
        if kind == "list_i":
            body = "        list {\n" + "".join(f"          i: {v}\n" for v in value) + "          val_type: VT_LIST_INT\n        }\n"
        elif kind == "list_s":
            body = "        list {\n" + "".join(f"          s: {pb_str(v)}\n" for v in value) + "        }\n"
        elif kind == "s":
            body = f"        s: {pb_str(value)}\n"
        elif kind == "b":
            body = f"        b: {'true' if value else 'false'}\n"
        else:
            body = f"        {kind}: {value}\n"
        out += f"    attr {{\n      key: {pb_str(key)}\n      value {{\n{body}      }}\n    }}\n"
    if in_names:
        out += (f"    attr {{\n      key: \"_input_name_key\"\n      value {{\n        list {{\n"
                + "".join(f"          s: {pb_str(n)}\n" for n in in_names)
                + "        }\n      }\n    }\n"
                + "    attr {\n      key: \"_input_name_value\"\n      value {\n        list {\n"
                + "".join(f"          i: {k}\n" for k in range(len(in_names)))
                + "        }\n      }\n    }\n")
    for d in in_descs:
        out += "    input_desc {\n" + d + "    }\n"
    for d in out_descs:
        out += "    output_desc {\n" + d + "    }\n"
    return out + "  }\n"


def data_op(name: str, dtype: str, shape, layout="ND") -> str:
    return op_block(name, "Data", [], [], [], [tensor_desc(dtype, shape, layout)])


def write(path: Path, data: bytes | str):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)


def stats(actual: np.ndarray, golden: np.ndarray, tol: float) -> dict:
    """The numbers the generated script must print, computed independently here."""
    a = actual.astype(np.float64).ravel()
    r = golden.astype(np.float64).ravel()
    err = np.abs(a - r)
    scale = np.maximum(np.abs(r), 1.0)
    rel = np.where(np.abs(r) > 0, err / np.where(np.abs(r) > 0, np.abs(r), 1.0), 0.0)
    cos = float(np.dot(a, r) / (np.linalg.norm(a) * np.linalg.norm(r)))
    within = float(np.mean(err <= tol * scale))
    return {
        "max_abs_error": float(err.max()),
        "max_rel_error": float(rel.max()),
        "cosine": cos,
        "thousandth": float(np.mean(err <= 1e-3 * scale)),
        "within_tolerance": within,
        "ok": bool(within >= 0.999 and cos >= 0.999),
    }


def case_accuracy(out: Path) -> dict:
    rng = np.random.default_rng(7)
    add_name = 'blk.0/attn"q"/Add_1'
    x1 = rng.uniform(-2, 2, (3, 5)).astype(np.float16)
    x2 = rng.uniform(-2, 2, (3, 5)).astype(np.float16)
    y_true = (x1.astype(np.float32) + x2.astype(np.float32)).astype(np.float16)
    y = y_true.copy()
    y[1, 2] = np.float16(float(y[1, 2]) + 0.5)  # the planted difference
    golden_add = x1.astype(np.float64) + x2.astype(np.float64)

    bf16 = ml_dtypes.bfloat16
    a = rng.uniform(-1, 1, (20, 18)).astype(bf16)
    b = rng.uniform(-1, 1, (18, 24)).astype(bf16)
    golden_mm = a.astype(np.float64) @ b.astype(np.float64)
    c = golden_mm.astype(np.float32)
    a_nz = to_fractal_nz(a, 16)  # bf16: 2-byte dtype, C0 = 16 (dump-data.md §6)

    graph = "graph {\n  name: \"ge_default_20250101_1\"\n"
    graph += data_op("x_a", "DT_FLOAT16", [3, 5]) + data_op("x_b", "DT_FLOAT16", [3, 5])
    graph += op_block(add_name, "Add", ["x_a:0", "x_b:0", "x_a:-1"],
                      [("_kernelname", "s", "te_add_0011aabb_1__kernel0"), ("tvm_blockdim", "i", 2),
                       ("is_first_node", "b", True)],
                      [tensor_desc("DT_FLOAT16", [3, 5], "ND")] * 2, [tensor_desc("DT_FLOAT16", [3, 5], "ND")],
                      in_names=["x1", "x2"])
    graph += op_block("MatMul_7", "MatMulV2", [f"{add_name}:0", "w:0"],
                      [("transpose_x1", "b", False), ("transpose_x2", "b", False), ("offset_x", "i", 0),
                       ("MatMul_7_kernelname", "s", "te_matmulv2_99_1__kernel0")],
                      [tensor_desc("DT_BF16", list(a_nz.shape), "FRACTAL_NZ", [20, 18], "ND"),
                       tensor_desc("DT_BF16", [18, 24], "ND")],
                      [tensor_desc("DT_FLOAT", [20, 24], "ND")], in_names=["x1", "x2"])
    # Mul_9: the graph says [3, 5] * [3, 5]; the dump holds [3, 5] and [4, 7] (inputs that do not
    # fit the operator) -> the CPU golden cannot be computed, the script must exit 3, not 1.
    graph += op_block("Mul_9", "Mul", ["x_a:0", "x_b:0"], [],
                      [tensor_desc("DT_FLOAT16", [3, 5], "ND")] * 2, [tensor_desc("DT_FLOAT16", [3, 5], "ND")],
                      in_names=["x1", "x2"])
    graph += "}\n"
    root = out / "accuracy"
    write(root / "graph" / "ge_proto_00000003_Build.txt", graph)
    # An older build of the same graph without the ops: must not be preferred.
    write(root / "graph" / "ge_proto_00000001_Build.txt", "graph {\n  name: \"old\"\n}\n")

    # msaccucmp `convert` output of the same Add dump (dump-data.md §1.6 "npy" names).
    npy_dir = root / "npy"
    npy_dir.mkdir(parents=True, exist_ok=True)
    stem = f"Add.{sanitise(add_name)}.12.3.1735732800000123"
    np.save(npy_dir / f"{stem}.input.0.npy", x1)
    np.save(npy_dir / f"{stem}.input.1.npy", x2)
    np.save(npy_dir / f"{stem}.output.0.npy", y)
    np.save(npy_dir / "unrelated.npy", y)

    dump_dir = root / "dump" / "20250101120000" / "0" / "ge_default_20250101_1" / "1" / "0"
    ins = [Tensor(x1, DT["DT_FLOAT16"]), Tensor(x2, DT["DT_FLOAT16"])]
    outs = [Tensor(y, DT["DT_FLOAT16"])]
    dd = dump_header(add_name, 1735732800000123, ins, outs)
    write(dump_dir / f"Add.{sanitise(add_name)}.12.3.1735732800000123", v2_bytes(dd, ins, outs))
    ins = [Tensor(a, DT["DT_BF16"], fmt=FMT["FRACTAL_NZ"], raw=a_nz.tobytes(), shape=list(a_nz.shape), orig=[20, 18]),
           Tensor(b, DT["DT_BF16"])]
    outs = [Tensor(c, DT["DT_FLOAT"])]
    dd = dump_header("MatMul_7", 1735732800000456, ins, outs)
    write(dump_dir / "MatMulV2.MatMul_7.13.3.1735732800000456", v2_bytes(dd, ins, outs))
    misfit = rng.uniform(-2, 2, (4, 7)).astype(np.float16)
    ins = [Tensor(x1, DT["DT_FLOAT16"]), Tensor(misfit, DT["DT_FLOAT16"])]
    outs = [Tensor(y_true, DT["DT_FLOAT16"])]
    dd = dump_header("Mul_9", 1735732800000789, ins, outs)
    write(dump_dir / "Mul.Mul_9.14.3.1735732800000789", v2_bytes(dd, ins, outs))

    return {
        "add": {
            "op_name": add_name,
            "dump_file": f"Add.{sanitise(add_name)}.12.3.1735732800000123",
            "inputs": {"x1": x1.tolist(), "x2": x2.tolist()},
            "output": y.tolist(),
            "dump_vs_golden": stats(y, golden_add, 1e-3),
            "verdict": "FAIL",
        },
        "mul_misfit": {
            "op_name": "Mul_9",
            "input_shapes": [[3, 5], [4, 7]],
            "verdict": "INCOMPLETE",
            "exit_code": 3,
        },
        "matmul": {
            "op_name": "MatMul_7",
            "x1_device_shape": list(a_nz.shape),
            "x1_logical": a.astype(np.float32).tolist(),
            "dump_vs_golden": stats(c, golden_mm, 1e-3),
            "verdict": "PASS",
        },
    }


def case_runtime(out: Path) -> dict:
    root = out / "runtime"
    base = "AddCustom_0a1b2c3d4e5f_high_performance"
    kernel = f"{base}_10330_mix_aiv"
    node = "blk_1/AddCustom_2"
    meta = root / "kernel_meta"
    write(meta / f"{base}.o", b"\x7fELF" + bytes(60))
    write(meta / f"{base}.json", json.dumps({
        "binFileName": base, "binFileSuffix": ".o", "blockDim": 8, "coreType": "MIX", "core_type": "AIV",
        "kernelName": f"{base}_mix_aiv", "magic": "RT_DEV_BINARY_MAGIC_ELF_AIVEC",
        "kernelList": [{"kernelName": f"{base}_10330"}], "opParaSize": 24,
    }, indent=2))
    write(meta / f"{base}_10330_host.o", b"\x7fELF" + bytes(12))
    write(meta / f"{base}_loc.json", "[]")
    # A placeholder .o like the real collections hold, for a different kernel.
    write(meta / "te_placeholder_1.o", b"\x00")
    write(meta / "te_placeholder_1.json", json.dumps({"binFileName": "te_placeholder_1", "blockDim": 1}))

    graph = "graph {\n  name: \"g_rt\"\n"
    graph += data_op("in0", "DT_FLOAT16", [4, 16]) + data_op("in1", "DT_FLOAT16", [4, 16])
    graph += op_block(node, "AddCustom", ["in0:0", "in1:0"],
                      [("_kernelname", "s", base), ("tvm_blockdim", "i", 8), ("alpha", "f", 1.5),
                       ("mode", "s", 'fast "v2"')],
                      [tensor_desc("DT_FLOAT16", [-1, 16], "ND")] * 2, [tensor_desc("DT_FLOAT16", [-1, 16], "ND")],
                      in_names=["x", "y"])
    graph += "}\n"
    write(root / "graph" / "ge_proto_00000010_Build.txt", graph)

    rng = np.random.default_rng(11)
    x = rng.uniform(-1, 1, (4, 16)).astype(np.float16)
    y = rng.uniform(-1, 1, (4, 16)).astype(np.float16)
    z = np.zeros((4, 16), np.float16)
    tiling = struct.pack("<4I", 4, 16, 64, 10330)
    ins = [Tensor(x, DT["DT_FLOAT16"]), Tensor(y, DT["DT_FLOAT16"]),
           Tensor(np.frombuffer(tiling, np.uint8), DT["DT_UNDEFINED"])]
    outs = [Tensor(z, DT["DT_FLOAT16"])]
    dd = dump_header(node, 0, ins, outs)
    dd.input[2].input_type = 7  # TILING_DATA (dump-data.md §1.1)
    name = f"AddCustom.{sanitise(node)}.6.20250101120000123"
    write(root / "extra-info" / "data-dump" / "0" / name, v2_bytes(dd, ins, outs))

    pre = "[ERROR] RUNTIME(4242,python3):2025-01-01-12:00:00.{ms:03d}.000 [stream.cc:1193]4243 "
    info = "[INFO] GE(4242,python3):2025-01-01-12:00:00.{ms:03d}.000 [exception_dumper.cc:260]4243 LogExceptionTvmOpInfo:"
    lines = [
        pre.format(ms=1) + "ProcLogicCqReport:Task run failed, device_id=0, stream_id=3, task_id=6, sqe_type=0(ffts), errType=0x1(task exception), sqSwStatus=0",
        pre.format(ms=2) + f"PrintErrorInfoForDavinciTask:Aicore kernel execute failed, device_id=0, stream_id=3, report_stream_id=3, task_id=6, flip_num=0, fault kernel_name={kernel}, fault kernel info ext=none, program id=1, hash=42.",
        info.format(ms=3) + f"[AIC_INFO] node_name:{node}, node_type:AddCustom, stream_id:3, task_id:6",
        info.format(ms=4) + "[AIC_INFO] input:0;shape:[4,16];format:ND;dtype:DT_FLOAT16;addr:0x124080044000",
        info.format(ms=5) + "[AIC_INFO] input:1;shape:[4,16];format:ND;dtype:DT_FLOAT16;addr:0x124080045000",
        info.format(ms=6) + "[AIC_INFO] output:0;shape:[4,16];format:ND;dtype:DT_FLOAT16;addr:0x124080046000",
        info.format(ms=7) + "[AIC_INFO] block_dim:8",
        info.format(ms=8) + f"[AIC_INFO] dev_func:{base}_mix_aiv",
        info.format(ms=9) + "[AIC_INFO] tiling_key:10330",
    ]
    write(root / "log" / "debug" / "plog" / "plog-4242_20250101120000001.log", "\n".join(lines) + "\n")
    return {
        "kernel_name": kernel,
        "node": node,
        "bin_file_name": base,
        "tiling_key": 10330,
        "block_dim": 8,
        "dump_file": name,
        "tiling_data": list(tiling),
        "inputs": {"x": x.tolist(), "y": y.tolist()},
        "plog_line": 2,
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, type=Path)
    args = ap.parse_args(argv)
    out: Path = args.out
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    expected = {"accuracy": case_accuracy(out), "runtime": case_runtime(out)}
    (out / "expected.json").write_text(json.dumps(expected, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
