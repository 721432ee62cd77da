//! The GE graph parser on every real `ge_proto_*.txt` under `../shared/samples/cann/`, with
//! op types, shapes, dtypes, formats and attrs read from the files by hand.

use std::path::PathBuf;

use npgx_parsers::ge_graph::{self, AttrValue, GeModel, Graph, KernelMatch, Op, TensorDesc};
use serde_json::{json, Map, Value};

use crate::common::sample;

fn load(rel: &str) -> GeModel {
    let bytes = std::fs::read(sample(rel)).expect("sample is readable");
    ge_graph::parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

const ASYS_1: &str =
    "cann/asys-20230713-aicore-collection/dfx/graph/370_0/ge_proto_00000001_Build.txt";
const ASYS_0: &str =
    "cann/asys-20230713-aicore-collection/dfx/graph/370_0/ge_proto_00000000_Build.txt";
const TRANSDATA: &str = "cann/graph-transdata-kernel-meta/ge_proto_00000062_Build.txt";
const GATHERV2D: &str = "cann/graph-gatherv2d-train/ge_proto_00056_Build.txt";

fn all_ge_proto_files() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![sample("cann")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("readable dir").flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("ge_proto_") && n.ends_with(".txt"))
            {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_real_graph_dump_parses_with_all_its_ops() {
    let files = all_ge_proto_files();
    assert_eq!(files.len(), 4, "{files:?}");
    for f in files {
        let text = std::fs::read_to_string(&f).expect("utf-8 sample");
        let model =
            ge_graph::parse(text.as_bytes()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // Independent oracle: these files indent graphs at 0 and ops at 2 spaces.
        let graphs = text.lines().filter(|l| *l == "graph {").count();
        let ops = text.lines().filter(|l| *l == "  op {").count();
        let model_attrs = text.lines().filter(|l| *l == "attr {").count();
        assert_eq!(model.graphs.len(), graphs, "{}", f.display());
        assert_eq!(model.ops().count(), ops, "{}", f.display());
        assert_eq!(model.attrs.len(), model_attrs, "{}", f.display());
        assert!(model
            .ops()
            .all(|r| !r.op.name.is_empty() && !r.op.op_type.is_empty()));
        // The headerless layout of 2020–2023 CANN.
        assert_eq!(model.name, None);
    }
}

#[test]
fn asys_kernel_2_0_11_gatherv2_maps_to_node_gatherv2() {
    let m = load(ASYS_1);
    assert_eq!(
        m.graphs.iter().map(|g| g.name.as_str()).collect::<Vec<_>>(),
        vec![
            "ge_default_20230713074125_11",
            "ge_default_20230713074125_sub_0_input",
            "ge_default_20230713074125_sub_1_unknow",
            "ge_default_20230713074125_sub_2_unknow",
            "ge_default_20230713074125_sub_3_unknow",
        ]
    );
    let hits = m.find_kernel("2_0_11_GatherV2");
    assert_eq!(hits.len(), 1);
    let (graph, op) = (hits[0].graph, hits[0].op);
    assert_eq!(hits[0].how, KernelMatch::GeTaskName);
    assert_eq!(graph.name, "ge_default_20230713074125_sub_2_unknow");
    assert_eq!(
        (op.name.as_str(), op.op_type.as_str()),
        ("GatherV2", "GatherV2")
    );
    assert_eq!(op.line, 4955);
    assert_eq!(op.id, Some(4));
    let inputs: Vec<_> = op
        .inputs
        .iter()
        .map(|i| (i.src.as_str(), i.index))
        .collect();
    assert_eq!(
        inputs,
        vec![
            ("Unique", Some(0)),
            ("ge_default_20230713074125_sub_2_unknow_Data_0", Some(0)),
            ("ge_default_20230713074125_sub_2_unknow_Data_1", Some(0)),
        ]
    );
    let desc: Vec<_> = op
        .input_desc
        .iter()
        .map(|d| {
            (
                d.dtype.as_deref(),
                d.shape.clone(),
                d.layout.as_deref(),
                d.origin_format(),
                d.origin_shape().map(<[i64]>::to_vec),
                d.size,
            )
        })
        .collect();
    assert_eq!(
        desc,
        vec![
            (
                Some("DT_FLOAT"),
                Some(vec![-1]),
                Some("ND"),
                Some("ND"),
                Some(vec![-1]),
                Some(-1)
            ),
            (
                Some("DT_INT32"),
                Some(vec![2]),
                Some("ND"),
                Some("ND"),
                Some(vec![2]),
                Some(64)
            ),
            (
                Some("DT_INT32"),
                Some(vec![]),
                Some("ND"),
                Some("ND"),
                Some(vec![]),
                Some(64)
            ),
        ]
    );
    let out = &op.output_desc[0];
    assert_eq!(
        (out.dtype.as_deref(), out.shape.as_deref()),
        (Some("DT_FLOAT"), Some(&[2][..]))
    );
    assert_eq!(out.dtype_code(), Some(1));
    assert_eq!(
        out.attrs.get("origin_shape_range"),
        Some(&AttrValue::ListListInt(vec![vec![2, 2]]))
    );
    assert_eq!(op.kernel_name(), Some("te_gatherv2_657cb48fa1743a43209d7bc779fe8c294760a5b09b3079a3323fdf18376fc408_1__kernel0"));
    assert_eq!(op.block_dim(), Some(32));
    assert_eq!(op.attrs.get_str("_cube_vector_core_type"), Some("AIC"));
    assert_eq!(op.attrs.get_str("_session_graph_id"), Some("0_11"));
    assert_eq!(op.attrs.get("Tparams"), Some(&AttrValue::Dt(0)));
    assert_eq!(op.attrs.get("fusion_scope"), Some(&AttrValue::I(-2)));
    assert!(op
        .attrs
        .get_str("_op_slice_info")
        .is_some_and(|s| s.starts_with("{\"_op_slice_info\": {\"splitMaps\"")));
    match op.attrs.get("INPUT_IS_VAR") {
        Some(AttrValue::List(l)) => {
            assert_eq!(l.b, vec![false, false, false]);
            assert_eq!(l.val_type.as_deref(), Some("VT_LIST_BOOL"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(op.is_input_const, vec![false, false, false]);
    assert_eq!(
        op.input_ir_names(),
        vec![Some("x"), Some("indices"), Some("axis")]
    );
    assert_eq!(op.output_ir_names(), vec![Some("y")]);
    assert_eq!(
        op.ir_attrs(),
        vec![
            ("batch_dims", Some(&AttrValue::I(0))),
            ("is_preprocessed", Some(&AttrValue::B(false))),
            ("negative_index_support", Some(&AttrValue::B(false))),
        ]
    );
    assert_eq!(op.src_names.len(), 3);
    assert_eq!(
        op.dst_names,
        vec!["ge_default_20230713074125_sub_2_unknow_Node_Output"]
    );

    // The device symbol finds the same node through its kernel-name attributes.
    let by_symbol = m.find_kernel(
        "te_gatherv2_657cb48fa1743a43209d7bc779fe8c294760a5b09b3079a3323fdf18376fc408_1__kernel0",
    );
    assert_eq!(by_symbol.len(), 1);
    assert_eq!(by_symbol[0].op.name, "GatherV2");
    assert_eq!(
        by_symbol[0].how,
        KernelMatch::Attr {
            key: "GatherV2_kernelname".into()
        }
    );
}

#[test]
fn asys_control_edges_options_and_model_attrs() {
    let m = load(ASYS_1);
    let root = &m.graphs[0];
    let out = root
        .ops
        .iter()
        .find(|o| o.name == "Node_Output")
        .expect("root NetOutput");
    assert_eq!(out.op_type, "NetOutput");
    assert_eq!(out.line, 898);
    assert!(out.inputs[1].is_control());
    assert_eq!(
        out.inputs[1].src,
        "ge_default_20230713074125_sub_3_unknow_PartitionedCall_3"
    );
    assert_eq!(out.data_inputs().count(), 1);
    let call = root
        .ops
        .iter()
        .find(|o| o.name == "ge_default_20230713074125_sub_0_input_PartitionedCall_0")
        .expect("PartitionedCall");
    assert_eq!(call.stream_id, Some(-1));
    assert_eq!(
        call.subgraph_names,
        vec!["ge_default_20230713074125_sub_0_input"]
    );
    // Session options are a `func` (NamedAttrs) attribute of the root graph's ops.
    let options = match root.attrs.get("GraphOptions") {
        Some(AttrValue::Func(f)) => f,
        other => panic!("GraphOptions: {other:?}"),
    };
    assert_eq!(options.name, "GraphOptions");
    assert_eq!(options.attrs.get_str("ge.exec.overflow"), Some("1"));
    assert_eq!(m.attrs.get_str("target_type"), Some("MINI"));
    assert_eq!(m.attrs.get_int("memory_size"), Some(0));
    // A const value with its tensor descriptor (`t { desc { … } }`).
    let consts: Vec<_> = m
        .ops()
        .filter_map(|r| match r.op.attrs.get("value") {
            Some(AttrValue::T(t)) => Some(t.desc.dtype.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        consts,
        vec![Some("DT_FLOAT".to_string()), Some("DT_FLOAT".to_string())]
    );
}

#[test]
fn asys_first_model_assign_kernel() {
    let m = load(ASYS_0);
    assert_eq!(m.graphs[0].name, "ge_default_20230713074122_1");
    let hits = m.find_kernel(
        "te_assign_d623a1e1b515a45cdc8c9658e58e2860034dbfbd9ab35f92e1415a0fda9d35c1_1__kernel0",
    );
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].op.name, "Variable/Assign");
    assert_eq!(
        hits[0].how,
        KernelMatch::Attr {
            key: "Variable/Assign_kernelname".into()
        }
    );
}

#[test]
fn transdata_graph_trans_transdata_0() {
    let m = load(TRANSDATA);
    assert_eq!(m.graphs[0].name, "ResNet-50_0");
    let op = m.find_op("trans_TransData_0").expect("op").op;
    assert_eq!(op.op_type, "TransData");
    assert_eq!(op.line, 192);
    assert_eq!(
        op.inputs
            .iter()
            .map(|i| (i.src.as_str(), i.index))
            .collect::<Vec<_>>(),
        vec![("data", Some(0))]
    );
    let i = &op.input_desc[0];
    assert_eq!(i.dtype.as_deref(), Some("DT_FLOAT16"));
    assert_eq!(i.shape.as_deref(), Some(&[1, 3, 224, 224][..]));
    assert_eq!(i.layout.as_deref(), Some("NCHW"));
    assert_eq!(i.origin_format(), Some("NCHW"));
    assert_eq!(i.origin_shape(), Some(&[1, 3, 224, 224][..]));
    assert_eq!(
        (i.size, i.input_tensor, i.real_dim_cnt),
        (Some(301088), Some(true), Some(4))
    );
    let o = &op.output_desc[0];
    assert_eq!(o.dtype.as_deref(), Some("DT_FLOAT16"));
    assert_eq!(o.shape.as_deref(), Some(&[1, 1, 224, 224, 16][..]));
    assert_eq!(o.layout.as_deref(), Some("NC1HWC0"));
    assert_eq!(o.origin_format(), Some("NCHW"));
    assert_eq!(o.origin_shape(), Some(&[1, 3, 224, 224][..]));
    assert_eq!(o.size, Some(1605664));
    assert_eq!(op.attrs.get_str("src_format"), Some("NCHW"));
    assert_eq!(op.attrs.get_str("dst_format"), Some("NC1HWC0"));
    assert_eq!(op.block_dim(), Some(2));
    assert_eq!(
        op.kernel_name(),
        Some("te_transdata_a603142389973648_c50cf465894adb0d_1__kernel0")
    );
    // The kernel binary is inline (octal-escaped) and exactly `_tbeKernelSize` bytes long.
    match op.attrs.get("_tbe_kernel_buffer") {
        Some(AttrValue::Bt(elf)) => {
            assert_eq!(Some(elf.len() as i64), op.attrs.get_int("_tbeKernelSize"));
            assert_eq!(&elf[..4], b"\x7fELF");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn transdata_graph_kernel_names_from_the_2021_plogs() {
    let m = load(TRANSDATA);
    let hits = m.find_kernel("-1_0_1_trans_TransData_0");
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].op.name.as_str(), &hits[0].how),
        ("trans_TransData_0", &KernelMatch::GeTaskName)
    );
    let hits = m.find_kernel("te_transdata_a603142389973648_c50cf465894adb0d_1__kernel0");
    assert_eq!(hits.len(), 1);
    assert_eq!(
        hits[0].how,
        KernelMatch::Attr {
            key: "trans_TransData_0_kernelname".into()
        }
    );
    let conv =
        m.find_kernel("te_fused_op_conv2d_leaky_relu_e005ae1944991a2c_c50cf465894adb0d_0__kernel0");
    assert_eq!(conv.len(), 1);
    assert_eq!(
        (conv[0].op.name.as_str(), conv[0].op.op_type.as_str()),
        ("conv1conv1_relu", "Conv2D")
    );
}

#[test]
fn transdata_graph_fused_names() {
    let m = load(TRANSDATA);
    let idx = m.index();
    assert!(idx.get("conv1").is_none());
    for pre in ["conv1", "bn_conv1", "scale_conv1", "conv1_relu"] {
        let into: Vec<_> = idx
            .fused_into(pre)
            .iter()
            .map(|r| r.op.name.as_str())
            .collect();
        assert_eq!(into, vec!["conv1conv1_relu"], "{pre}");
    }
    let conv = m.find_op("conv1conv1_relu").expect("fused conv").op;
    assert_eq!(
        conv.inputs
            .iter()
            .map(|i| i.src.as_str())
            .collect::<Vec<_>>(),
        vec![
            "trans_TransData_0",
            "dynamic_const_16660_695",
            "dynamic_const_16660_642"
        ]
    );
}

#[test]
fn gatherv2d_training_graph() {
    let m = load(GATHERV2D);
    assert_eq!(m.graphs[0].name, "ge_default_20200909152235_1");
    let op = m.find_op("GatherV2").expect("op").op;
    assert_eq!(op.op_type, "GatherV2D");
    assert_eq!(op.attrs.get_int("axis"), Some(0));
    // A 2020 dump: IR names of the tensors, but no `_ir_attr_names`.
    assert_eq!(op.input_ir_names(), vec![Some("x"), Some("indices")]);
    assert!(op.ir_attrs().is_empty());
    assert_eq!(op.block_dim(), Some(16));
    assert_eq!(op.input_offsets, vec![2560, 7168]);
    let ins: Vec<_> = op
        .input_desc
        .iter()
        .map(|d| {
            (
                d.dtype.as_deref(),
                d.shape.clone(),
                d.layout.as_deref(),
                d.origin_format(),
            )
        })
        .collect();
    assert_eq!(
        ins,
        vec![
            (
                Some("DT_FLOAT"),
                Some(vec![32, 32]),
                Some("NHWC"),
                Some("NHWC")
            ),
            (Some("DT_INT32"), Some(vec![16]), Some("NHWC"), Some("NHWC")),
        ]
    );
    let out = &op.output_desc[0];
    assert_eq!(
        (out.dtype.as_deref(), out.shape.as_deref()),
        (Some("DT_FLOAT"), Some(&[16, 32][..]))
    );
    assert_eq!(out.attrs.get_str("_datadump_origin_name"), Some("GatherV2"));
    // Its own pre-fusion name is itself: not a fused-away name.
    assert!(m.index().fused_into("GatherV2").is_empty());
    let k = m.find_kernel("te_gatherv2d_219e053cbbb768fc0_3cf4deb0daff668d__kernel0");
    assert_eq!(k.len(), 1);
    assert_eq!(
        k[0].how,
        KernelMatch::Attr {
            key: "GatherV2_kernelname".into()
        }
    );
    let netout = m.find_op("Node_Output").expect("NetOutput").op;
    assert!(netout
        .inputs
        .iter()
        .any(|i| i.src == "ge_global_step" && i.is_control()));
    // A protobuf op_def with escapes decodes into its raw bytes.
    assert!(op
        .attrs
        .get_str("op_def")
        .is_some_and(|s| s.starts_with("\n\u{8}GatherV2")));
}

// ---- fixtures printed by protobuf's own text_format (scripts/gen_ge_graph_fixtures.py) ----

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn jf(x: f64) -> Value {
    if x.is_infinite() {
        json!(if x > 0.0 { "inf" } else { "-inf" })
    } else {
        json!(x)
    }
}

/// The same encoding as `j_*` in the Python writer; proto3 defaults stand in for absent fields.
fn j_desc(d: &TensorDesc) -> Value {
    let mut v = json!({
        "dtype": d.dtype.clone().unwrap_or_else(|| "DT_UNDEFINED".into()),
        "shape": d.shape,
        "layout": d.layout.clone().unwrap_or_default(),
        "attrs": j_attrs(d.attrs.iter()),
    });
    let obj = v.as_object_mut().expect("object");
    for (k, x) in [
        ("size", d.size),
        ("real_dim_cnt", d.real_dim_cnt),
        ("data_offset", d.data_offset),
    ] {
        if let Some(x) = x.filter(|x| *x != 0) {
            obj.insert(k.into(), json!(x));
        }
    }
    if d.input_tensor == Some(true) {
        obj.insert("input_tensor".into(), json!(true));
    }
    v
}

fn j_attrs<'a>(attrs: impl Iterator<Item = (&'a str, &'a AttrValue)>) -> Value {
    Value::Object(
        attrs
            .map(|(k, v)| (k.to_string(), j_attr(v)))
            .collect::<Map<_, _>>(),
    )
}

fn j_graph(g: &Graph) -> Value {
    json!({
        "name": g.name, "inputs": g.inputs, "outputs": g.outputs,
        "attrs": j_attrs(g.attrs.iter()),
        "ops": g.ops.iter().map(j_op).collect::<Vec<_>>(),
    })
}

fn j_op(o: &Op) -> Value {
    json!({
        "name": o.name, "type": o.op_type,
        "inputs": o.inputs.iter().map(|i| json!([i.src, i.index])).collect::<Vec<_>>(),
        "id": o.id, "stream_id": o.stream_id, "input_name": o.input_names, "src_name": o.src_names,
        "src_index": o.src_indices, "dst_name": o.dst_names, "dst_index": o.dst_indices,
        "input_i": o.input_offsets, "output_i": o.output_offsets, "workspace": o.workspace_offsets,
        "workspace_bytes": o.workspace_bytes, "is_input_const": o.is_input_const,
        "subgraph_name": o.subgraph_names,
        "input_desc": o.input_desc.iter().map(j_desc).collect::<Vec<_>>(),
        "output_desc": o.output_desc.iter().map(j_desc).collect::<Vec<_>>(),
        "attrs": j_attrs(o.attrs.iter()),
    })
}

fn j_attr(v: &AttrValue) -> Value {
    match v {
        AttrValue::Unset => json!({"unset": true}),
        AttrValue::S(s) => json!({"s": s}),
        AttrValue::Expression(s) => json!({"expression": s}),
        AttrValue::I(i) => json!({"i": i}),
        AttrValue::F(f) => json!({"f": jf(*f)}),
        AttrValue::B(b) => json!({"b": b}),
        AttrValue::Dt(d) => json!({"dt": d}),
        AttrValue::Bt(b) => json!({"bt_hex": hex(b)}),
        AttrValue::List(l) => json!({"list": {
            "s": l.s, "i": l.i, "f": l.f.iter().map(|x| jf(*x)).collect::<Vec<_>>(), "b": l.b,
            "bt_hex": l.bt.iter().map(|b| hex(b)).collect::<Vec<_>>(), "dt": l.dt,
            "td": l.td.iter().map(j_desc).collect::<Vec<_>>(),
            "na": l.na.iter().map(|n| n.name.clone()).collect::<Vec<_>>(),
            "g": l.g.iter().map(|g| g.name.clone()).collect::<Vec<_>>(),
            "val_type": l.val_type.clone().unwrap_or_else(|| "VT_LIST_NONE".into()),
        }}),
        AttrValue::Func(f) => {
            let mut keys: Vec<&str> = f.attrs.iter().map(|(k, _)| k).collect();
            keys.sort_unstable();
            json!({"func": {"name": f.name, "keys": keys}})
        }
        AttrValue::Td(d) => json!({"td": j_desc(d)}),
        AttrValue::T(t) => json!({"t": {"desc": j_desc(&t.desc), "data_hex": hex(&t.data)}}),
        AttrValue::G(g) => json!({"g": j_graph(g)}),
        AttrValue::ListListInt(rows) => json!({"list_list_int": rows}),
        AttrValue::ListListFloat(rows) => json!({"list_list_float": rows
            .iter()
            .map(|r| r.iter().map(|x| jf(*x)).collect::<Vec<_>>())
            .collect::<Vec<_>>()}),
        AttrValue::Other(kind) => json!({"other": kind}),
    }
}

#[test]
#[ignore = "needs target/fixtures (scripts/test.sh writes them and runs this)"]
fn protobuf_text_format_fixtures_read_back_exactly() {
    let expected: Value = serde_json::from_slice(
        &std::fs::read(crate::common::fixture("ge_graph/expected.json")).expect("expected.json"),
    )
    .expect("expected is JSON");
    for name in ["pretty.txt", "one_line.txt"] {
        let bytes =
            std::fs::read(crate::common::fixture(&format!("ge_graph/{name}"))).expect("fixture");
        let m = ge_graph::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let got = json!({
            "name": m.name, "version": m.version,
            "graphs": m.graphs.iter().map(j_graph).collect::<Vec<_>>(),
            "attrs": j_attrs(m.attrs.iter()),
        });
        assert_eq!(got, expected, "{name}");
        // Lookups on the same model.
        let hit = &m.find_kernel("te_conv2d_0123abcd_1__kernel0")[0];
        assert_eq!(hit.op.name, "conv/Conv2D:fused");
        let fused: Vec<_> = m
            .index()
            .fused_into("bn")
            .iter()
            .map(|r| r.op.name.clone())
            .collect();
        assert_eq!(fused, vec!["conv/Conv2D:fused"]);
        assert_eq!(hit.op.input_desc[1].dtype_code(), Some(99));
        assert_eq!(
            hit.op
                .ir_attrs()
                .iter()
                .map(|(k, v)| (*k, v.is_some()))
                .collect::<Vec<_>>(),
            vec![("i_neg", true), ("b_true", true), ("not_set", false)]
        );
    }
}
