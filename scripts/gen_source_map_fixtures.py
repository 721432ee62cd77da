#!/usr/bin/env python3
"""Independent writer of the source-map fixtures (issue 43; docs/source-map.md): dump trees with
an anomaly, and beside them the graph texts torchair and PyTorch leave on disk, with the truth
every npgx command must reach from them (`truth.json`).

The graph texts follow their writers' format strings, never the Rust code under test:
- torchair's `.py` graph dump (`ge/_ge_graph.py` `add_python_code`, `_ge_concrete_graph/
  fx2ge_converter.py` `converter_context`): `# File "<path>", line <n>, in <fn>    <code>` only the
  first time that text appears in the file, `## FX Code: <node>: <dtype>[<shape>]<device> =
  <target>(<args>)`, then `<out> = ge.<Op>(…, node_name="<op>")` per GE operator (several outputs:
  `[X_0, X_1] = ge.Op(…)`, no node_name);
- torchair's `.txt` dump (`str(GraphDef)`, gen_compare_fixtures' writer): `_fx_tensor_name` `<node>-<target>.OUTPUT.<i>` on the
  output descriptors of each FX node's last GE operator, `nn_module_stack` as an operator attribute
  (the Python repr of FX's dict) when the user recorded it;
- PyTorch's `GraphModule.print_readable` (TORCH_COMPILE_DEBUG's
  `torch_compile_debug/run_*/torchair/model__<N>/forward/000_aot_forward_graph.txt`):
  `# File: <path>:<line> in <fn>, code: <code>` above a node whenever it differs from the previous.
The tensors are written with gen_dump_fixtures' protobuf writer and numpy (through
gen_compare_fixtures' Tree).

Route (issue 43 item 5): this independent writer, not torchair's own code. torch_npu's wheel on
PyPI carries torchair (torch_npu 2.14.0: `torch_npu/dynamo/torchair/`), and its graph text is
plain Python (`ge/_ge_graph.py`), but the writer of the `## FX Code` lines
(`_ge_concrete_graph/fx2ge_converter.py`, `converter_context` / `format_node`) imports
`torchair.core._torchair` at its top, a C extension linked against CANN's libge_runner.so,
libascendcl.so, libgraph.so and libhccl.so (`readelf -d`): it does not load without CANN. The
format followed is that file's: a node argument `<name>: <dtype><shape><device>`, keyword
arguments `key=value`, other values by `str()`.

Cases (each a folder of OUT with truth.json):
- `py_layers/`: a GE model dump of torchair graph_1 (two identical layers made by the same source
  line; layer 2's MatMulV2_1 is born NaN, SplitV and the GE-inserted TransData_9 carry it on),
  the `.py` graph dump in the run's working directory (the dump's parent), and a
  torch_compile_debug/ folder whose readable text gives every node its line.
- `py_only/`: the same without torch_compile_debug/: layer 2's line cannot be known.
- `txt_module/`: graph_2 dumped as `.txt` with nn_module_stack; a fused operator
  (`Mul_1Add_2`: GE joined the names) born Inf.
- `pbtxt/`: graph_1 as torchair's `.pbtxt` (each descriptor a `repr(bytes(...))` string) and a
  RealDiv born NaN.
- `fx_eager/`: torchair's eager FX dump (`graph_1/0/<node>-<target>.OUTPUT.0.<ts>.npy`) with the
  NaN output of mm_1, the `.py` graph and the readable text beside it.

Usage: gen_source_map_fixtures.py --out DIR   (deterministic)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gen_compare_fixtures as c  # noqa: E402  (Tree, tensor: the independent dump writer)
import gen_dump_fixtures as g  # noqa: E402

MODEL = "/home/user/llm/model.py"
TORCH_LINEAR = "/usr/lib/python3.11/site-packages/torch/nn/modules/linear.py"
T0 = g.T0

# The FX nodes of graph_1: (node, target, frame (file, line, fn, code), annotation, GE ops).
# mm and mm_1 come from the same line (a layer applied twice), as do mul and mul_1.
GRAPH1 = [
    ("mm", "aten.mm.default", (MODEL, 12, "forward", "h = self.proj(x) @ self.w"),
     "torch.float32[4, 8]npu:0", [("MatMulV2", 1)]),
    ("mul", "aten.mul.Tensor", (MODEL, 13, "forward", "h = h * self.scale"),
     "torch.float32[4, 8]npu:0", [("Mul", 1), ("Cast", 1)]),
    ("mm_1", "aten.mm.default", (MODEL, 12, "forward", "h = self.proj(x) @ self.w"),
     "torch.float32[4, 8]npu:0", [("MatMulV2_1", 1)]),
    ("mul_1", "aten.mul.Tensor", (MODEL, 13, "forward", "h = h * self.scale"),
     "torch.float32[4, 8]npu:0", [("Mul_1", 1)]),
    ("split", "aten.split.Tensor", ("/usr/lib/python3.11/site-packages/torch/functional.py", 222,
                                    "split", "return tensor.split(split_size_or_sections, dim)"),
     None, [("SplitV", 2)]),
]


def torchair_py(nodes) -> str:
    """torchair's `.py` graph dump of `nodes` (the writer's rules in the module docstring)."""
    out = ["# -*- coding: utf-8 -*-", "from torch import tensor",
           "from torchair._ge_concrete_graph import ge_apis as ge",
           "from torchair.ge._ge_graph import get_default_ge_graph", "",
           'arg0_1_0 = ge.Data(index=0, dtype=0, shape=[4, 8], placement="NPU", node_name="arg0_1")',
           'arg1_1_0 = ge.Data(index=1, dtype=0, shape=[8, 8], placement="NPU", node_name="arg1_1")']
    prev = "arg0_1_0"
    # FX Code's arguments are FX node names with their meta (`format_python_code`, as torchair's
    # data_dump.md quotes it: `add_1: … = torch.ops.aten.add.Tensor(add: torch.float32[s0, s0]npu:0,
    # arg2_1: …)`); the GE lines below name the GE variables.
    prev_fx = "arg0_1"
    for node, target, (path, line, fn, code), ann, ops in nodes:
        file_line = f'"{path}", line {line}, in {fn}    {code}'
        text = "\n".join(out)
        if file_line not in text:
            out.append(f"\n# File {file_line}")
        head = f"{node}: {ann}" if ann else node
        out.append(f"## FX Code: {head} = torch.ops.{target}({prev_fx}: torch.float32[4, 8]npu:0, "
                   "arg1_1: torch.float32[8, 8]npu:0)")
        prev_fx = node
        for op, n_out in ops:
            if n_out == 1:
                out.append(f'{op}_0 = ge.{op.split("_")[0]}({prev}, arg1_1_0, node_name="{op}")')
                prev = f"{op}_0"
            else:
                outs = ", ".join(f"{op}_{i}" for i in range(n_out))
                out.append(f"[{outs}] = ge.{op}({prev}, ge.Const([4, 4], dtype=3), 1, num_split={n_out})")
                prev = f"{op}_0"
    out.append(f"\n_ = ge.NetOutput([{prev}], dependencies=[])")
    return "\n".join(out) + "\n"


def readable(nodes) -> str:
    """PyTorch's print_readable of the same FX graph (≥ 2.3 comment form)."""
    out = ["class GraphModule(torch.nn.Module):",
           '    def forward(self, arg0_1: "f32[4, 8]", arg1_1: "f32[8, 8]"):']
    prev, last = "arg0_1", None
    for node, target, (path, line, fn, code), _ann, _ops in nodes:
        summary = f"File: {path}:{line} in {fn}, code: {code}"
        if summary != last:
            out.append(f"         # {summary}")
            last = summary
        out.append(f'        {node}: "f32[4, 8]" = torch.ops.{target}({prev}, arg1_1);  {prev} = None')
        prev = node
    out.append(f"        return ({prev},)")
    return "\n".join(out) + "\n"


def origin(node, target, graph, line=None, module=None, user=True):
    """The expected `fx` record fields (a key absent is not checked)."""
    o = {"fx_node": node, "fx_target": target, "graph": graph}
    if line is not None:
        path, ln, fn, code = line
        o["source"] = {"file": path, "line": ln, "function": fn, "code": code}
        o["user_line"] = o["source"] if user else None
    if module is not None:
        o["module"] = module
    return o


def tensor(a):
    """An fp32 tensor whose header holds no device address (the address analysis is not what these
    cases test: the writer's default addresses would pair unrelated tensors of one size)."""
    t = c.tensor(a, 1)
    t.address = 0
    return t


def graph1_dump(tree: c.Tree, rel_dir: str):
    """graph_1's GE dump: layer 2's MatMulV2_1 born NaN, carried on; a GE-inserted TransData."""
    r = np.random.default_rng(43)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    bad = (x @ w).astype(np.float32)
    bad[1, 2] = np.nan
    h = tensor
    seq = [("MatMulV2", "MatMulV2", [x, w], [x @ w]),
           ("Mul", "Mul", [x @ w, w[:1]], [x]),
           ("Cast", "Cast", [x], [x]),
           ("MatMulV2", "MatMulV2_1", [x, w], [bad]),
           ("Mul", "Mul_1", [bad, w[:1]], [bad]),
           ("SplitV", "SplitV", [bad], [bad[:, :4], bad[:, 4:]]),
           ("TransData", "TransData_9", [bad[:, :4]], [bad[:, :4]])]
    for i, (typ, name, ins, outs) in enumerate(seq):
        tree.ge(rel_dir, "t", typ, name, i + 1, T0 + 10 * (i + 1),
                ins=[h(a) for a in ins], outs=[h(a) for a in outs])


def case_py(out: Path, with_debug: bool):
    name = "py_layers" if with_debug else "py_only"
    tree = c.Tree(out / name)
    dump = "dump/worldsize1_global_rank0/20250101120000/0/graph_1/1/0"
    graph1_dump(tree, dump)
    tree.write("dynamo_original_graph_1_rank_0_pid_4242_ts_20250101115958000001.py",
               torchair_py(GRAPH1).encode())
    if with_debug:
        tree.write("torch_compile_debug/run_2025_01_01_11_59_57_000000-pid_4242/torchair/model__0/forward/"
                   "000_aot_forward_graph.txt", readable(GRAPH1).encode())
    mm1_line = GRAPH1[2][2] if with_debug else None
    first = origin("mm_1", "aten.mm.default", "graph_1", mm1_line)
    truth = {
        "description": "graph_1's layer 2 (mm_1 → MatMulV2_1) is born NaN; the .py graph dump prints the "
                       "line of mm and mm_1 once (at mm)" + ("; torch_compile_debug gives mm_1 its line" if with_debug
                                                           else "; nothing else gives mm_1 its line"),
        "scan": {"root": "dump", "first_anomaly": {"op_name": "MatMulV2_1", "fx": first},
                 "anomalies": {
                     "MatMulV2_1": first,
                     "Mul_1": origin("mul_1", "aten.mul.Tensor", "graph_1", GRAPH1[3][2] if with_debug else None),
                     "SplitV": origin("split", "aten.split.Tensor", "graph_1", GRAPH1[4][2], user=False),
                     "TransData_9": {"fx_node": None, "missing_contains": "GE-inserted"}},
                 "mm_1_missing_contains": None if with_debug else "printed mm_1's line earlier"},
        "line": {"select": "model.py:12",
                 "dump_list": [{"model_name": "graph_1",
                                "layer": ["MatMulV2", "MatMulV2_1"] if with_debug else ["MatMulV2"]}],
                 "unsure": [] if with_debug else ["mm_1", "mul_1"]},
        "fx_node": {"select": "mul", "dump_list": [{"model_name": "graph_1", "layer": ["Mul", "Cast"]}]},
    }
    (tree.root / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def case_txt_module(out: Path):
    tree = c.Tree(out / "txt_module")
    r = np.random.default_rng(44)
    x = r.uniform(-1, 1, (2, 4)).astype(np.float32)
    inf = x.copy()
    inf[0, 0] = np.inf
    h = tensor
    dump = "dump/worldsize2_global_rank1/20250101120000/1/graph_2/2/0"
    tree.ge(dump, "t", "Relu", "Relu", 1, T0 + 10, ins=[h(x)], outs=[h(x)])
    # GE fused Mul_1 and Add_2 into one kernel named after both.
    tree.ge(dump, "t", "FusedMulAdd", "Mul_1Add_2", 2, T0 + 20, ins=[h(x)], outs=[h(inf)])
    stack = ("{'L__self___block': ('block', <class 'model.Block'>), "
             "'L__self___block_mlp': (\"L['self'].block.mlp\", <class 'model.Mlp'>)}")
    tree.write("graphs/dynamo_original_graph_2_rank_1_pid_99_ts_20250101115958000002.txt", c.fx_graph_text([
        ("arg0_1", "Data", [], [None]),
        ("Relu", "Relu", ["arg0_1:0"], ["relu-aten.relu.default.OUTPUT.0"]),
        ("Mul_1", "Mul", ["Relu:0"], [None]),
        ("Add_2", "Add", ["Mul_1:0"], ["add-aten.add.Tensor.OUTPUT.0"]),
        ("NetOutput", "NetOutput", ["Add_2:0"], [])], graph="graph_2",
        modules={"Mul_1": stack, "Add_2": stack}).encode())
    truth = {
        "description": "graph_2 of rank 1 as a .txt graph dump in graphs/ (not beside the dump: --graphs "
                       "graphs); the fused Mul_1Add_2 is born Inf: resolved by its name through Add_2 "
                       "(the last fused op, whose output carries add's _fx_tensor_name); .txt dumps carry no "
                       "source lines, nn_module_stack gives the module",
        "scan": {"root": "dump", "graphs": ["graphs"],
                 "first_anomaly": {"op_name": "Mul_1Add_2",
                                   "fx": {"fx_node": "add", "fx_target": "aten.add.Tensor", "graph": "graph_2",
                                          "module": "block.mlp", "source": None, "user_line": None,
                                          "via_contains": "fused"}}},
    }
    (tree.root / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def case_fx_eager(out: Path):
    tree = c.Tree(out / "fx_eager")
    r = np.random.default_rng(45)
    x = r.uniform(-1, 1, (4, 8)).astype(np.float32)
    w = r.uniform(-1, 1, (8, 8)).astype(np.float32)
    h = x @ w
    # mm_1 = mm(mul, arg1_1): the dumped output has a NaN that mul @ w, from the dumped inputs,
    # does not (what `npgx repro --from-scan`'s script must say).
    bad = h @ w
    bad[0, 1] = np.nan
    d = "fx_dump/worldsize1_global_rank0/graph_1/0"
    tree.fx_npy(d, "g", "mm", "aten.mm.default", "20250101120000000001", ins=[(x, 1), (w, 1)], outs=[(h, 1)])
    tree.fx_npy(d, "g", "mm_1", "aten.mm.default", "20250101120000000003", ins=[(h, 1), (w, 1)],
                outs=[(bad, 1)])
    tree.write("dynamo_original_graph_1_rank_0_pid_4242_ts_20250101115958000001.py", torchair_py(GRAPH1).encode())
    tree.write("torch_compile_debug/run_2025_01_01_11_59_57_000000-pid_4242/torchair/model__0/forward/"
               "000_aot_forward_graph.txt", readable(GRAPH1).encode())
    truth = {
        "description": "torchair's eager FX dump (graph_1/0/<node>-<target>.<io>.<i>.<ts>.npy): mm_1's output "
                       "is NaN; the FX node is the file's, its line the readable text's",
        "scan": {"root": "fx_dump", "first_anomaly": {"op_name": "mm_1-aten.mm.default",
                                                      "fx": origin("mm_1", "aten.mm.default", "graph_1",
                                                                   GRAPH1[2][2])}},
        # `npgx repro --from-scan`: mm_1's call rebuilt from the .py dump's FX Code line, fed with
        # its two dumped inputs; the golden from them is finite where the dump holds a NaN.
        "repro": {"fx_node": "mm_1", "target": "torch.ops.aten.mm.default", "call": "F(T[0], T[1])",
                  "inputs": [{"argument": "args[0]", "node": "mul",
                              "from": f"{d}/mm_1-aten.mm.default.INPUT.0.20250101120000000003.npy"},
                             {"argument": "args[1]", "node": "arg1_1",
                              "from": f"{d}/mm_1-aten.mm.default.INPUT.1.20250101120000000003.npy"}],
                  "golden_vs_dumped": "DIFFERS", "nan_dumped": 1},
    }
    (tree.root / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def torchair_pbtxt(ops) -> str:
    """torchair's `.pbtxt` dump (`_ge_concrete_graph/utils.py` `convert_to_pbtxt`: a TensorFlow-like
    GraphDef for Netron): `node { name op input… attr { key: "[o]<output>" value { s: <the output
    descriptor's text as repr(bytes(...))[1:]> } } }`. ops = [(name, type, inputs, [fx tensor per
    output or None])]; the descriptor text is the protobuf text of a GE TensorDescriptor."""
    out = []
    for name, typ, inputs, fx_names in ops:
        out += ["node {", f'  name: "{name}"', f'  op: "{typ}"']
        out += [f'  input: "{i}"' for i in inputs]
        for k, fx in enumerate(fx_names):
            desc = f'name: "y{k}"\ndtype: DT_FLOAT\nlayout: "ND"\n'
            if fx is not None:
                desc += f'attr {{\n  key: "_fx_tensor_name"\n  value {{\n    s: "{fx}"\n  }}\n}}\n'
            value = repr(bytes(desc, "utf-8"))[1:]
            out += ["  attr {", f'    key: "[o]y{k}"', "    value {", f"      s: {value}", "    }", "  }"]
        out += ["}"]
    return "\n".join(out) + "\n"


def case_pbtxt(out: Path):
    tree = c.Tree(out / "pbtxt")
    r = np.random.default_rng(46)
    x = r.uniform(-1, 1, (2, 4)).astype(np.float32)
    bad = x.copy()
    bad[1, 3] = np.nan
    dump = "dump/worldsize1_global_rank0/20250101120000/0/graph_1/1/0"
    tree.ge(dump, "t", "Relu", "Relu", 1, T0 + 10, ins=[tensor(x)], outs=[tensor(x)])
    tree.ge(dump, "t", "Div", "RealDiv", 2, T0 + 20, ins=[tensor(x)], outs=[tensor(bad)])
    tree.write("dynamo_original_graph_1_rank_0_pid_7_ts_20250101115958000003.pbtxt", torchair_pbtxt([
        ("arg0_1", "Data", [], [None]),
        ("Relu", "Relu", ["arg0_1:0"], ["relu-aten.relu.default.OUTPUT.0"]),
        ("RealDiv", "RealDiv", ["Relu:0", "arg0_1:0"], ["div-aten.div.Tensor.OUTPUT.0"]),
    ]).encode())
    truth = {
        "description": "graph_1 dumped as .pbtxt (graph_dump.type = 'pbtxt'): each output descriptor one "
                       "repr(bytes) string; RealDiv is born NaN: FX node div, no line (the .pbtxt form "
                       "records none)",
        "scan": {"root": "dump", "first_anomaly": {"op_name": "RealDiv",
                                                   "fx": {"fx_node": "div", "fx_target": "aten.div.Tensor",
                                                          "graph": "graph_1", "source": None,
                                                          "missing_contains": "records no source lines"}}},
    }
    (tree.root / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    case_py(a.out, True)
    case_py(a.out, False)
    case_txt_module(a.out)
    case_fx_eager(a.out)
    case_pbtxt(a.out)
    (a.out / "GENERATED_BY_gen_source_map_fixtures").write_text("")


if __name__ == "__main__":
    main()
