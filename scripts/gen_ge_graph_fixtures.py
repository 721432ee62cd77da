#!/usr/bin/env python3
"""GE graph dump fixtures written by protobuf's own text printer (independent of npgx).

The `ge.proto` messages (ModelDef, GraphDef, OpDef, AttrDef, TensorDescriptor, …) are typed in
from torchair's `proto/ge_ir.proto` as a descriptor, filled with every construct the parser must
read (every AttrDef kind, control edges, unconnected inputs, escaped bytes, unknown enum values,
fields the reader does not know), and printed with `google.protobuf.text_format` — the same
printer family GE uses (C++ `DebugString`). Expected values are taken from the message objects,
not from the text.

    gen_ge_graph_fixtures.py --out DIR

writes DIR/pretty.txt (2-space indent, like GE), DIR/one_line.txt (everything on one line),
DIR/expected.json.
"""

import argparse
import json
import math
import struct
from pathlib import Path

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory, text_format

PKG = "ge.proto"
_F = descriptor_pb2.FieldDescriptorProto
OPT, REP = _F.LABEL_OPTIONAL, _F.LABEL_REPEATED
T = {
    "string": _F.TYPE_STRING, "bytes": _F.TYPE_BYTES, "int64": _F.TYPE_INT64, "uint32": _F.TYPE_UINT32,
    "int32": _F.TYPE_INT32, "float": _F.TYPE_FLOAT, "bool": _F.TYPE_BOOL, "msg": _F.TYPE_MESSAGE,
    "enum": _F.TYPE_ENUM,
}

DATA_TYPES = ["DT_UNDEFINED", "DT_FLOAT", "DT_FLOAT16", "DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16",
              "DT_INT32", "DT_INT64", "DT_UINT32", "DT_UINT64", "DT_BOOL", "DT_DOUBLE", "DT_STRING",
              "DT_DUAL_SUB_INT8", "DT_DUAL_SUB_UINT8", "DT_COMPLEX64", "DT_COMPLEX128", "DT_QINT8",
              "DT_QINT16", "DT_QINT32", "DT_QUINT8", "DT_QUINT16", "DT_RESOURCE", "DT_STRING_REF",
              "DT_DUAL", "DT_VARIANT", "DT_BF16"]
VT = ["VT_LIST_NONE", "VT_LIST_STRING", "VT_LIST_INT", "VT_LIST_FLOAT", "VT_LIST_BOOL", "VT_LIST_BYTES",
      "VT_LIST_TENSOR_DESC", "VT_LIST_TENSOR", "VT_LIST_GRAPH", "VT_LIST_NAMED_ATTRS", "VT_LIST_DATA_TYPE"]


def build():
    fdp = descriptor_pb2.FileDescriptorProto(name="npgx_fixtures/ge_ir.proto", package=PKG, syntax="proto3")
    e = fdp.enum_type.add(name="DataType")
    for n, name in enumerate(DATA_TYPES):
        e.value.add(name=name, number=n)

    def fields(m, spec):
        for num, name, kind, label, tname in spec:
            f = m.field.add(name=name, number=num, type=T[kind], label=label)
            if tname:
                f.type_name = tname

    def map_entry(m, name, value_type):
        entry = m.nested_type.add(name=name)
        entry.options.map_entry = True
        fields(entry, [(1, "key", "string", OPT, None), (2, "value", "msg", OPT, value_type)])
        return f".{PKG}.{m.name}.{name}"

    attr = fdp.message_type.add(name="AttrDef")
    lv = attr.nested_type.add(name="ListValue")
    vt = lv.enum_type.add(name="ListValueType")
    for n, name in enumerate(VT):
        vt.value.add(name=name, number=n)
    fields(lv, [(2, "s", "bytes", REP, None), (3, "i", "int64", REP, None), (4, "f", "float", REP, None),
                (5, "b", "bool", REP, None), (7, "bt", "bytes", REP, None),
                (8, "td", "msg", REP, f".{PKG}.TensorDescriptor"), (9, "t", "msg", REP, f".{PKG}.TensorDef"),
                (10, "g", "msg", REP, f".{PKG}.GraphDef"), (11, "na", "msg", REP, f".{PKG}.NamedAttrs"),
                (12, "dt", "int64", REP, None)])
    lv.field.add(name="val_type", number=20, type=T["enum"], label=OPT,
                 type_name=f".{PKG}.AttrDef.ListValue.ListValueType")
    lli = attr.nested_type.add(name="ListListInt")
    li = lli.nested_type.add(name="ListInt")
    fields(li, [(1, "list_i", "int64", REP, None)])
    fields(lli, [(1, "list_list_i", "msg", REP, f".{PKG}.AttrDef.ListListInt.ListInt")])
    llf = attr.nested_type.add(name="ListListFloat")
    lf = llf.nested_type.add(name="ListFloat")
    fields(lf, [(1, "list_f", "float", REP, None)])
    fields(llf, [(1, "list_list_f", "msg", REP, f".{PKG}.AttrDef.ListListFloat.ListFloat")])
    attr.oneof_decl.add(name="value")
    oneof = [(2, "s", "bytes", None), (3, "i", "int64", None), (4, "f", "float", None), (5, "b", "bool", None),
             (7, "bt", "bytes", None), (1, "list", "msg", f".{PKG}.AttrDef.ListValue"),
             (10, "func", "msg", f".{PKG}.NamedAttrs"), (11, "td", "msg", f".{PKG}.TensorDescriptor"),
             (12, "t", "msg", f".{PKG}.TensorDef"), (13, "g", "msg", f".{PKG}.GraphDef"),
             (14, "list_list_int", "msg", f".{PKG}.AttrDef.ListListInt"), (15, "dt", "int64", None),
             (16, "list_list_float", "msg", f".{PKG}.AttrDef.ListListFloat"), (17, "expression", "bytes", None)]
    for num, name, kind, tname in oneof:
        f = attr.field.add(name=name, number=num, type=T[kind], label=OPT, oneof_index=0)
        if tname:
            f.type_name = tname

    # A message the reader does not know, to be skipped wherever it appears.
    groups = fdp.message_type.add(name="AttrGroups")
    fields(groups, [(1, "note", "string", OPT, None), (2, "ids", "int64", REP, None)])

    na = fdp.message_type.add(name="NamedAttrs")
    fields(na, [(1, "name", "string", OPT, None)])
    fields(na, [(2, "attr", "msg", REP, map_entry(na, "AttrEntry", f".{PKG}.AttrDef"))])

    shape = fdp.message_type.add(name="ShapeDef")
    fields(shape, [(1, "dim", "int64", REP, None)])

    td = fdp.message_type.add(name="TensorDescriptor")
    fields(td, [(1, "name", "string", OPT, None)])
    td.field.add(name="dtype", number=2, type=T["enum"], label=OPT, type_name=f".{PKG}.DataType")
    fields(td, [(3, "shape", "msg", OPT, f".{PKG}.ShapeDef"), (4, "layout", "string", OPT, None),
                (5, "attr", "msg", REP, map_entry(td, "AttrEntry", f".{PKG}.AttrDef")),
                (6, "attr_groups", "msg", OPT, f".{PKG}.AttrGroups"),
                (9, "has_out_attr", "bool", OPT, None), (10, "size", "int64", OPT, None),
                (14, "device_type", "string", OPT, None), (15, "input_tensor", "bool", OPT, None),
                (13, "output_tensor", "bool", OPT, None), (16, "real_dim_cnt", "int64", OPT, None),
                (18, "data_offset", "int64", OPT, None), (19, "cmps_size", "int64", OPT, None)])

    tdef = fdp.message_type.add(name="TensorDef")
    fields(tdef, [(1, "desc", "msg", OPT, f".{PKG}.TensorDescriptor"), (2, "data", "bytes", OPT, None)])

    op = fdp.message_type.add(name="OpDef")
    fields(op, [(1, "name", "string", OPT, None), (2, "type", "string", OPT, None),
                (5, "input", "string", REP, None),
                (10, "attr", "msg", REP, map_entry(op, "AttrEntry", f".{PKG}.AttrDef")),
                (11, "attr_groups", "msg", OPT, f".{PKG}.AttrGroups"),
                (20, "has_out_attr", "bool", OPT, None), (21, "id", "int64", OPT, None),
                (22, "stream_id", "int64", OPT, None), (23, "input_name", "string", REP, None),
                (24, "src_name", "string", REP, None), (25, "src_index", "int64", REP, None),
                (26, "dst_name", "string", REP, None), (27, "dst_index", "int64", REP, None),
                (28, "input_i", "int64", REP, None), (29, "output_i", "int64", REP, None),
                (30, "workspace", "int64", REP, None), (31, "workspace_bytes", "int64", REP, None),
                (32, "is_input_const", "bool", REP, None),
                (33, "input_desc", "msg", REP, f".{PKG}.TensorDescriptor"),
                (34, "output_desc", "msg", REP, f".{PKG}.TensorDescriptor"),
                (35, "subgraph_name", "string", REP, None)])

    graph = fdp.message_type.add(name="GraphDef")
    fields(graph, [(1, "name", "string", OPT, None), (4, "input", "string", REP, None),
                   (5, "output", "string", REP, None), (6, "op", "msg", REP, f".{PKG}.OpDef"),
                   (11, "attr", "msg", REP, map_entry(graph, "AttrEntry", f".{PKG}.AttrDef")),
                   (12, "attr_groups", "msg", OPT, f".{PKG}.AttrGroups")])

    model = fdp.message_type.add(name="ModelDef")
    fields(model, [(1, "name", "string", OPT, None), (2, "version", "uint32", OPT, None),
                   (3, "custom_version", "string", OPT, None), (7, "graph", "msg", REP, f".{PKG}.GraphDef"),
                   (11, "attr", "msg", REP, map_entry(model, "AttrEntry", f".{PKG}.AttrDef"))])

    pool = descriptor_pool.DescriptorPool()
    pool.Add(fdp)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{PKG}.{name}"))
            for name in ("ModelDef", "GraphDef", "OpDef", "AttrDef", "TensorDescriptor", "NamedAttrs")}


M = build()


def desc(d, dtype, shape, layout, origin_format=None, origin_shape=None, **extra):
    if isinstance(dtype, int):
        d.dtype = dtype
    else:
        d.dtype = DATA_TYPES.index(dtype)
    if shape is not None:
        d.shape.SetInParent()
        d.shape.dim.extend(shape)
    d.layout = layout
    if origin_format is not None:
        d.attr["origin_format"].s = origin_format.encode()
    if origin_shape is not None:
        d.attr["origin_shape"].list.i.extend(origin_shape)
        d.attr["origin_shape"].list.val_type = VT.index("VT_LIST_INT")
    for k, v in extra.items():
        setattr(d, k, v)


def make_model():
    m = M["ModelDef"](name="npgx_fixture_model", version=1, custom_version="v0")
    root = m.graph.add(name="root_graph_20250101000000_1", input=["data_0:0"], output=["conv/Conv2D:fused:0"])
    data = root.op.add(name="data_0", type="Data", input=[""], id=0, stream_id=-1)
    data.attr["index"].i = 0
    desc(data.output_desc.add(), "DT_FLOAT16", [2, 3], "ND", "ND", [2, 3], size=12)

    op = root.op.add(name="conv/Conv2D:fused", type="Conv2D")
    op.input.extend(["data_0:0", "weight:0", "ctrl_src:-1", ""])
    a = op.attr
    a["s_text"].s = 'a"b\\c\nd\té'.encode()
    a["s_empty"].s = b""
    a["i_neg"].i = -7
    a["i_max"].i = 2**63 - 1
    a["f_half"].f = 0.5
    a["f_ninf"].f = float("-inf")
    a["b_true"].b = True
    a["bt_all"].bt = bytes(range(256))
    lst = a["list_all"].list
    lst.s.extend([b"x", b"y z"])
    lst.i.extend([1, -2])
    lst.f.extend([0.25, 1.5])
    lst.b.extend([True, False])
    lst.bt.extend([b"\x00\x01\xff"])
    lst.dt.extend([1, 27])
    desc(lst.td.add(), "DT_INT32", [5], "NCHW")
    lst.na.add(name="na0").attr["k"].i = 3
    lst.g.add(name="list_graph").op.add(name="lg_op", type="Identity")
    lst.val_type = VT.index("VT_LIST_INT")
    a["list_empty"].list.val_type = VT.index("VT_LIST_STRING")
    func = a["func_opts"].func
    func.name = "GraphOptions"
    func.attr["ge.exec.overflow"].s = b"1"
    func.attr["nested"].func.name = "deeper"
    desc(a["td_nz"].td, "DT_BF16", [1, 1, 16, 16], "FRACTAL_NZ", "ND", [16, 16])
    t = a["t_value"].t
    desc(t.desc, "DT_FLOAT", [2], "ND")
    t.data = struct.pack("<2f", 1.0, 2.0)
    body = a["g_body"].g
    body.name = "body"
    body.op.add(name="inner_relu", type="Relu", input=["body_in:0"])
    lli = a["lli"].list_list_int
    lli.list_list_i.add().list_i.extend([0, 64])
    lli.list_list_i.add()
    llf = a["llf"].list_list_float
    llf.list_list_f.add().list_f.extend([0.5])
    llf.list_list_f.add().list_f.extend([1.25, -2.0])
    a["dt_bf16"].dt = 27
    a["expr"].expression = b"s0 * 2"
    a["unset"].SetInParent()
    a["_kernelname"].s = b"te_conv2d_0123abcd_1__kernel0"
    a["_datadump_original_op_names"].list.s.extend([b"conv", b"bn", b"relu"])
    a["_ir_attr_names"].list.s.extend([b"i_neg", b"b_true", b"not_set"])
    op.attr_groups.note = "unknown to the reader"
    op.attr_groups.ids.extend([1, 2])
    op.has_out_attr = True
    op.id = 7
    op.stream_id = 3
    op.input_name.extend(["x", "filter"])
    op.src_name.extend(["data_0", "weight"])
    op.src_index.extend([0, 0])
    op.dst_name.append("allreduce_1")
    op.dst_index.append(0)
    op.input_i.extend([1024, 62277027328])
    op.output_i.append(4096)
    op.workspace.append(8192)
    op.workspace_bytes.append(238)
    op.is_input_const.extend([False, True])
    op.subgraph_name.append("body")
    desc(op.input_desc.add(), "DT_FLOAT16", [1, 1, 224, 224, 16], "NC1HWC0", "NCHW", [1, 3, 224, 224],
         size=1605664, input_tensor=True, real_dim_cnt=5, data_offset=64)
    desc(op.input_desc.add(), 99, [-1, 3], "FRACTAL_Z", "NCHW", [-1, 3])
    scalar = op.output_desc.add()
    desc(scalar, "DT_INT64", [], "ND", "ND", [])
    scalar.attr_groups.note = "skip me"
    scalar.attr["_datadump_origin_name"].s = b"relu"
    no_shape = op.output_desc.add()
    no_shape.dtype = DATA_TYPES.index("DT_BOOL")

    hcom = root.op.add(name="allreduce_1", type="HcomAllReduce", input=["conv/Conv2D:fused:0"])
    hcom.attr["group"].s = b"hccl_world_group"
    root.attr["_session_graph_id"].s = b"0_1"
    root.attr_groups.note = "graph-level unknown"

    sub = m.graph.add(name="sub_graph_1")
    sub.op.add(name="sub_op", type="Add", input=["a:0", "b:1"])
    m.attr["memory_size"].i = 123456
    m.attr["target_type"].s = b"MINI"
    return m


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def jfloat(x):
    x = f32(x)
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def dtype_name(n):
    return DATA_TYPES[n] if 0 <= n < len(DATA_TYPES) else str(n)


def j_desc(d):
    out = {
        "dtype": dtype_name(d.dtype),
        "shape": list(d.shape.dim) if d.HasField("shape") else None,
        "layout": d.layout,
        "attrs": {k: j_attr(v) for k, v in d.attr.items()},
    }
    for name in ("size", "real_dim_cnt", "data_offset", "input_tensor"):
        if getattr(d, name):
            out[name] = getattr(d, name)
    return out


def j_graph(g):
    return {
        "name": g.name,
        "inputs": list(g.input),
        "outputs": list(g.output),
        "attrs": {k: j_attr(v) for k, v in g.attr.items()},
        "ops": [j_op(o) for o in g.op],
    }


def j_input(raw):
    src, sep, idx = raw.rpartition(":")
    try:
        return [src, int(idx)] if sep else [raw, None]
    except ValueError:
        return [raw, None]


def j_op(o):
    return {
        "name": o.name, "type": o.type, "inputs": [j_input(i) for i in o.input],
        "id": o.id if o.id else None, "stream_id": o.stream_id if o.stream_id else None,
        "input_name": list(o.input_name), "src_name": list(o.src_name), "src_index": list(o.src_index),
        "dst_name": list(o.dst_name), "dst_index": list(o.dst_index), "input_i": list(o.input_i),
        "output_i": list(o.output_i), "workspace": list(o.workspace),
        "workspace_bytes": list(o.workspace_bytes), "is_input_const": list(o.is_input_const),
        "subgraph_name": list(o.subgraph_name),
        "input_desc": [j_desc(d) for d in o.input_desc], "output_desc": [j_desc(d) for d in o.output_desc],
        "attrs": {k: j_attr(v) for k, v in o.attr.items()},
    }


def j_attr(a):
    kind = a.WhichOneof("value")
    if kind is None:
        return {"unset": True}
    v = getattr(a, kind)
    if kind in ("s", "expression"):
        return {kind: v.decode("utf-8", "replace")}
    if kind == "bt":
        return {"bt_hex": v.hex()}
    if kind == "f":
        return {"f": jfloat(v)}
    if kind in ("i", "b", "dt"):
        return {kind: v}
    if kind == "list":
        return {"list": {
            "s": [x.decode("utf-8", "replace") for x in v.s], "i": list(v.i), "f": [jfloat(x) for x in v.f],
            "b": list(v.b), "bt_hex": [x.hex() for x in v.bt], "dt": list(v.dt),
            "td": [j_desc(d) for d in v.td], "na": [x.name for x in v.na], "g": [x.name for x in v.g],
            "val_type": VT[v.val_type] if v.val_type < len(VT) else str(v.val_type),
        }}
    if kind == "func":
        return {"func": {"name": v.name, "keys": sorted(v.attr.keys())}}
    if kind == "td":
        return {"td": j_desc(v)}
    if kind == "t":
        return {"t": {"desc": j_desc(v.desc), "data_hex": v.data.hex()}}
    if kind == "g":
        return {"g": j_graph(v)}
    if kind == "list_list_int":
        return {"list_list_int": [list(r.list_i) for r in v.list_list_i]}
    if kind == "list_list_float":
        return {"list_list_float": [[jfloat(x) for x in r.list_f] for r in v.list_list_f]}
    raise ValueError(kind)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="output directory")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    m = make_model()
    pretty = text_format.MessageToString(m)
    one_line = text_format.MessageToString(m, as_one_line=True)
    (args.out / "pretty.txt").write_text(pretty, encoding="utf-8")
    (args.out / "one_line.txt").write_text(one_line, encoding="utf-8")
    expected = {
        "name": m.name, "version": str(m.version),
        "graphs": [j_graph(g) for g in m.graph],
        "attrs": {k: j_attr(v) for k, v in m.attr.items()},
    }
    (args.out / "expected.json").write_text(json.dumps(expected, indent=1, sort_keys=True), encoding="utf-8")
    print(f"ge_graph: {sum(len(g.op) for g in m.graph)} ops, {len(pretty)} bytes pretty, {len(one_line)} one-line")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
