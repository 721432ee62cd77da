//! One test per construct of the GE dump grammar and per kernel-matching rule. The real dumps
//! are covered by the integration tests (`tests/it/ge_graph.rs`).

use super::*;

fn model(text: &str) -> GeModel {
    parse(text.as_bytes()).expect("parses")
}

#[test]
fn headerless_dump_with_graphs_and_model_attrs() {
    let m = model(
        "graph {\n  name: \"g0\"\n  input: \"data:0\"\n  output: \"out:0\"\n}\ngraph {\n  name: \"g1\"\n}\nattr {\n  key: \"stream_num\"\n  value {\n    i: 3\n  }\n}\n",
    );
    assert_eq!(m.name, None);
    assert_eq!(m.graphs.len(), 2);
    assert_eq!(m.graphs[0].name, "g0");
    assert_eq!(m.graphs[0].inputs, vec!["data:0"]);
    assert_eq!(m.graphs[0].outputs, vec!["out:0"]);
    assert_eq!((m.graphs[0].line, m.graphs[1].line), (1, 6));
    assert_eq!(m.attrs.get_int("stream_num"), Some(3));
}

#[test]
fn model_header_with_four_space_indent() {
    let m = model("name: \"m\"\nversion: \"1.0\"\ngraph {\n    name: \"g\"\n    op {\n        name: \"a\"\n        type: \"Data\"\n    }\n}\n");
    assert_eq!(m.name.as_deref(), Some("m"));
    assert_eq!(m.version.as_deref(), Some("1.0"));
    assert_eq!(m.graphs[0].ops[0].op_type, "Data");
    assert_eq!(m.graphs[0].ops[0].line, 5);
}

#[test]
fn single_line_dump_parses_like_an_indented_one() {
    let m = model(r#"graph { name: "g" op { name: "a" type: "Add" input: "x:0" input: "y:1" } }"#);
    let op = &m.graphs[0].ops[0];
    assert_eq!(op.inputs.len(), 2);
    assert_eq!(op.line, 1);
}

#[test]
fn op_inputs_data_control_and_unconnected() {
    let m = model(
        r#"graph { op { name: "n" input: "a/b:0" input: "" input: "step:-1" input: "weird" input: "ns:x:2" } }"#,
    );
    let op = &m.graphs[0].ops[0];
    let inputs: Vec<_> = op
        .inputs
        .iter()
        .map(|i| (i.src.as_str(), i.index))
        .collect();
    assert_eq!(
        inputs,
        vec![
            ("a/b", Some(0)),
            ("", None),
            ("step", Some(-1)),
            ("weird", None),
            ("ns:x", Some(2)),
        ]
    );
    assert!(op.inputs[2].is_control());
    assert!(op.inputs[1].is_unconnected());
    let data: Vec<_> = op.data_inputs().map(|i| i.src.as_str()).collect();
    assert_eq!(data, vec!["a/b", "weird", "ns:x"]);
}

#[test]
fn op_scalar_and_repeated_fields() {
    let m = model(
        r#"graph { op { name: "n" type: "T" id: 4 stream_id: -1 input_name: "p0" src_name: "s" src_index: 0
           dst_name: "d" dst_index: 1 input_i: 62277027328 output_i: 0 workspace: 7 workspace_bytes: 238
           is_input_const: false is_input_const: true subgraph_name: "sub" } }"#,
    );
    let op = &m.graphs[0].ops[0];
    assert_eq!(op.id, Some(4));
    assert_eq!(op.stream_id, Some(-1));
    assert_eq!(op.input_names, vec!["p0"]);
    assert_eq!(
        (op.src_names.clone(), op.src_indices.clone()),
        (vec!["s".to_string()], vec![0])
    );
    assert_eq!(
        (op.dst_names.clone(), op.dst_indices.clone()),
        (vec!["d".to_string()], vec![1])
    );
    assert_eq!(op.input_offsets, vec![62277027328]);
    assert_eq!(op.output_offsets, vec![0]);
    assert_eq!(op.workspace_offsets, vec![7]);
    assert_eq!(op.workspace_bytes, vec![238]);
    assert_eq!(op.is_input_const, vec![false, true]);
    assert_eq!(op.subgraph_names, vec!["sub"]);
}

#[test]
fn tensor_descriptor_with_origin_attrs() {
    let m = model(
        r#"graph { op { name: "n" input_desc { name: "x" dtype: DT_FLOAT16 shape { dim: 1 dim: 1 dim: 224 dim: 224 dim: 16 }
           layout: "NC1HWC0"
           attr { key: "origin_format" value { s: "NCHW" } }
           attr { key: "origin_shape" value { list { i: 1 i: 3 i: 224 i: 224 val_type: VT_LIST_INT } } }
           attr { key: "origin_data_type" value { s: "DT_FLOAT16" } }
           size: 1605664 device_type: "NPU" input_tensor: true real_dim_cnt: 5 data_offset: 64 }
           output_desc { dtype: DT_INT32 shape { } layout: "ND" }
           output_desc { dtype: 27 } } }"#,
    );
    let op = &m.graphs[0].ops[0];
    let x = &op.input_desc[0];
    assert_eq!(x.name.as_deref(), Some("x"));
    assert_eq!(x.dtype.as_deref(), Some("DT_FLOAT16"));
    assert_eq!(x.dtype_code(), Some(2));
    assert_eq!(x.shape.as_deref(), Some(&[1, 1, 224, 224, 16][..]));
    assert_eq!(x.layout.as_deref(), Some("NC1HWC0"));
    assert_eq!(x.origin_format(), Some("NCHW"));
    assert_eq!(x.origin_shape(), Some(&[1, 3, 224, 224][..]));
    assert_eq!(x.origin_data_type(), Some("DT_FLOAT16"));
    assert_eq!(x.size, Some(1605664));
    assert_eq!(x.device_type.as_deref(), Some("NPU"));
    assert_eq!(x.input_tensor, Some(true));
    assert_eq!(x.real_dim_cnt, Some(5));
    assert_eq!(x.data_offset, Some(64));
    // `shape { }` is a scalar, a missing shape is unknown.
    assert_eq!(op.output_desc[0].shape, Some(vec![]));
    assert_eq!(op.output_desc[1].shape, None);
    assert_eq!(op.output_desc[1].dtype_code(), Some(27));
}

#[test]
fn scalar_attr_kinds() {
    let m = model(
        r#"graph { op { name: "n"
           attr { key: "s" value { s: "Opaque" } }
           attr { key: "i" value { i: -2 } }
           attr { key: "f" value { f: 1e-05 } }
           attr { key: "f2" value { f: -inf } }
           attr { key: "b" value { b: true } }
           attr { key: "bt" value { bt: "\177ELF\000" } }
           attr { key: "dt" value { dt: 3 } }
           attr { key: "expr" value { expression: "s0 * 2" } }
           attr { key: "unset" value { } }
           attr { key: "novalue" }
           attr { key: "future" value { new_kind: 1 } } } }"#,
    );
    let a = &m.graphs[0].ops[0].attrs;
    assert_eq!(a.get("s"), Some(&AttrValue::S("Opaque".into())));
    assert_eq!(a.get("i"), Some(&AttrValue::I(-2)));
    assert_eq!(a.get("f"), Some(&AttrValue::F(1e-05)));
    assert_eq!(a.get("f2"), Some(&AttrValue::F(f64::NEG_INFINITY)));
    assert_eq!(a.get("b"), Some(&AttrValue::B(true)));
    assert_eq!(
        a.get("bt"),
        Some(&AttrValue::Bt(vec![0x7f, b'E', b'L', b'F', 0]))
    );
    assert_eq!(a.get("dt"), Some(&AttrValue::Dt(3)));
    assert_eq!(a.get_str("expr"), Some("s0 * 2"));
    assert_eq!(a.get("unset"), Some(&AttrValue::Unset));
    assert_eq!(a.get("novalue"), Some(&AttrValue::Unset));
    assert_eq!(a.get("future"), Some(&AttrValue::Other("new_kind".into())));
    assert_eq!(a.len(), 11);
}

#[test]
fn list_attr_kinds() {
    let m = model(
        r#"graph { op { name: "n"
           attr { key: "ls" value { list { s: "a" s: "b" val_type: VT_LIST_STRING } } }
           attr { key: "lb" value { list { b: false b: true val_type: VT_LIST_BOOL } } }
           attr { key: "lf" value { list { f: 0.5 f: 2 } } }
           attr { key: "ldt" value { list { dt: 1 dt: 27 } } }
           attr { key: "lbt" value { list { bt: "\001" } } }
           attr { key: "ltd" value { list { td { dtype: DT_FLOAT layout: "ND" } } } }
           attr { key: "lna" value { list { na { name: "k" attr { key: "x" value { i: 1 } } } } } }
           attr { key: "empty" value { list { val_type: VT_LIST_INT } } }
           attr { key: "lli" value { list_list_int { list_list_i { list_i: 0 list_i: 64 } list_list_i { } } } }
           attr { key: "llf" value { list_list_float { list_list_f { list_f: 0.5 } } } } } }"#,
    );
    let a = &m.graphs[0].ops[0].attrs;
    let list = |k: &str| match a.get(k) {
        Some(AttrValue::List(l)) => (**l).clone(),
        other => panic!("{k}: {other:?}"),
    };
    assert_eq!(list("ls").s, vec!["a", "b"]);
    assert_eq!(list("ls").val_type.as_deref(), Some("VT_LIST_STRING"));
    assert_eq!(list("lb").b, vec![false, true]);
    assert_eq!(list("lf").f, vec![0.5, 2.0]);
    assert_eq!(list("ldt").dt, vec![1, 27]);
    assert_eq!(list("lbt").bt, vec![vec![1u8]]);
    assert_eq!(list("ltd").td[0].dtype.as_deref(), Some("DT_FLOAT"));
    assert_eq!(list("lna").na[0].name, "k");
    assert_eq!(list("lna").na[0].attrs.get_int("x"), Some(1));
    assert_eq!(
        list("empty"),
        AttrList {
            val_type: Some("VT_LIST_INT".into()),
            ..AttrList::default()
        }
    );
    assert_eq!(
        a.get("lli"),
        Some(&AttrValue::ListListInt(vec![vec![0, 64], vec![]]))
    );
    assert_eq!(
        a.get("llf"),
        Some(&AttrValue::ListListFloat(vec![vec![0.5]]))
    );
}

#[test]
fn nested_attr_kinds_func_tensor_graph() {
    let m = model(
        r#"graph { name: "root" op { name: "n"
           attr { key: "GraphOptions" value { func { name: "GraphOptions" attr { key: "ge.exec.overflow" value { s: "1" } } } } }
           attr { key: "value" value { t { desc { dtype: DT_FLOAT shape { dim: 2 } layout: "ND" } data: "\000\000\200?" } } }
           attr { key: "td" value { td { dtype: DT_INT64 } } }
           attr { key: "body" value { g { name: "inner" op { name: "x" type: "Relu" } } } } } }"#,
    );
    let a = &m.graphs[0].ops[0].attrs;
    match a.get("GraphOptions") {
        Some(AttrValue::Func(f)) => {
            assert_eq!(f.name, "GraphOptions");
            assert_eq!(f.attrs.get_str("ge.exec.overflow"), Some("1"));
        }
        other => panic!("{other:?}"),
    }
    match a.get("value") {
        Some(AttrValue::T(t)) => {
            assert_eq!(t.desc.shape, Some(vec![2]));
            assert_eq!(t.data, vec![0, 0, 0x80, 0x3f]);
        }
        other => panic!("{other:?}"),
    }
    assert!(
        matches!(a.get("td"), Some(AttrValue::Td(td)) if td.dtype.as_deref() == Some("DT_INT64"))
    );
    match a.get("body") {
        Some(AttrValue::G(g)) => {
            assert_eq!(g.name, "inner");
            assert_eq!(g.ops[0].op_type, "Relu");
            assert_eq!((g.line, g.ops[0].line), (5, 5));
        }
        other => panic!("{other:?}"),
    }
    // Ops nested in attributes are not part of the model's op list.
    assert_eq!(m.ops().count(), 1);
}

#[test]
fn unknown_fields_are_skipped_at_every_level() {
    let m = model(
        r#"custom_version: "x" graph { future { a: 1 } op { name: "n" new_field: [1, 2] input_desc { new_td: "z" dtype: DT_BOOL } } }"#,
    );
    assert_eq!(
        m.graphs[0].ops[0].input_desc[0].dtype.as_deref(),
        Some("DT_BOOL")
    );
}

#[test]
fn errors_give_the_line() {
    let e = parse(b"graph {\n  op {\n    name: \"x\"\n").unwrap_err();
    assert_eq!(e.line, 4);
    assert!(e.message.contains("'}' closing a message"), "{e}");
    let e = parse(b"graph {\n  op {\n    id: \"seven\"\n  }\n}\n").unwrap_err();
    assert_eq!((e.line, e.offset), (3, 19));
    assert_eq!(e.to_string(), "line 3: field `id`: expected an integer");
    let e = parse(b"graph {\n  op: 3\n}").unwrap_err();
    assert_eq!(
        e.to_string(),
        "line 2: field `op`: expected a `{ … }` message"
    );
    assert!(parse(b"\xff\xfe binary").is_err());
}

#[test]
fn never_panics_on_truncations_of_a_real_looking_dump() {
    let text = br#"graph { name: "g" op { name: "n" type: "T" input: "a:0" attr { key: "k" value { list { i: 1 s: "\101\x42" val_type: VT_LIST_INT } } } input_desc { dtype: DT_FLOAT shape { dim: 1 } } } }"#;
    for n in 0..=text.len() {
        let _ = parse(&text[..n]);
    }
    assert!(parse(text).is_ok());
}

#[test]
fn empty_input_is_an_empty_model() {
    assert_eq!(parse(b"").unwrap(), GeModel::default());
    assert_eq!(parse(b"  # only a comment\n").unwrap(), GeModel::default());
}

fn kernel_model() -> GeModel {
    model(
        r#"graph { name: "g"
        op { name: "GatherV2" type: "GatherV2"
             attr { key: "GatherV2_kernelname" value { s: "te_gatherv2_657c_1__kernel0" } }
             attr { key: "_kernelname" value { s: "te_gatherv2_657c_1__kernel0" } } }
        op { name: "trans_TransData_0" type: "TransData"
             attr { key: "trans_TransData_0_kernelname" value { s: "te_transdata_a603_c50c_1__kernel0" } } }
        op { name: "fa" type: "FlashAttentionScore"
             attr { key: "_kernelname" value { s: "FlashAttentionScore_1a2b_high_performance" } } }
        op { name: "mm" type: "MatMul"
             attr { key: "_kernelname" value { s: "MatMul_99_mix_aic" } } }
        op { name: "mm_twin" type: "MatMul"
             attr { key: "_kernelname" value { s: "MatMul_99" } } }
        op { name: "clean" type: "AtomicAddrClean"
             attr { key: "_atomic_kernelname" value { s: "te_atomic_clean_7__kernel0" } } }
        op { name: "conv" type: "Conv2D"
             attr { key: "_tbe_kernel_name" value { s: "conv" } }
             attr { key: "_datadump_original_op_names" value { list { s: "conv1" s: "bn1" val_type: VT_LIST_STRING } } } }
        op { name: "allreduce" type: "HcomAllReduce" } }"#,
    )
}

fn hits(m: &GeModel, k: &str) -> Vec<(String, KernelMatch)> {
    m.find_kernel(k)
        .into_iter()
        .map(|h| (h.op.name.clone(), h.how))
        .collect()
}

#[test]
fn kernel_by_node_name() {
    let m = kernel_model();
    assert_eq!(
        hits(&m, "GatherV2"),
        vec![("GatherV2".into(), KernelMatch::NodeName)]
    );
}

#[test]
fn kernel_by_ge_task_name() {
    let m = kernel_model();
    assert_eq!(
        hits(&m, "2_0_11_GatherV2"),
        vec![("GatherV2".into(), KernelMatch::GeTaskName)]
    );
    assert_eq!(
        hits(&m, "-1_0_1_trans_TransData_0"),
        vec![("trans_TransData_0".into(), KernelMatch::GeTaskName)]
    );
    assert!(hits(&m, "1_2_GatherV2").is_empty());
}

#[test]
fn kernel_by_plain_and_opname_kernelname_attrs() {
    let m = kernel_model();
    let key = |k: &str| KernelMatch::Attr { key: k.into() };
    // `GatherV2_kernelname` comes first in the file, so it is the key reported.
    assert_eq!(
        hits(&m, "te_gatherv2_657c_1__kernel0"),
        vec![("GatherV2".into(), key("GatherV2_kernelname"))]
    );
    // Without the `__kernel0` device-symbol suffix too.
    assert_eq!(
        hits(&m, "te_transdata_a603_c50c_1"),
        vec![(
            "trans_TransData_0".into(),
            key("trans_TransData_0_kernelname")
        )]
    );
    assert_eq!(
        hits(&m, "te_atomic_clean_7__kernel0"),
        vec![("clean".into(), key("_atomic_kernelname"))]
    );
}

#[test]
fn kernel_with_mix_suffix_matches_both_twins() {
    let m = kernel_model();
    let got = hits(&m, "MatMul_99_mix_aiv");
    let names: Vec<_> = got.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["mm", "mm_twin"]);
}

#[test]
fn kernel_with_tiling_key() {
    let m = kernel_model();
    assert_eq!(
        hits(
            &m,
            "FlashAttentionScore_1a2b_high_performance_10330_mix_aic"
        ),
        vec![(
            "fa".into(),
            KernelMatch::AttrWithoutTilingKey {
                key: "_kernelname".into(),
                tiling_key: 10330
            }
        )]
    );
}

#[test]
fn unknown_kernel_matches_nothing() {
    assert!(hits(&kernel_model(), "te_nothing__kernel0").is_empty());
    assert!(hits(&kernel_model(), "").is_empty());
}

#[test]
fn index_finds_names_and_fused_names() {
    let m = kernel_model();
    let idx = m.index();
    assert_eq!(
        idx.get("conv").map(|r| r.op.op_type.as_str()),
        Some("Conv2D")
    );
    assert!(idx.get("conv1").is_none());
    let fused: Vec<_> = idx
        .fused_into("conv1")
        .iter()
        .map(|r| r.op.name.as_str())
        .collect();
    assert_eq!(fused, vec!["conv"]);
    assert!(idx.fused_into("conv").is_empty());
    assert!(m.find_op("allreduce").is_some_and(|r| r.op.is_hcom()));
}

#[test]
fn op_kernel_name_prefers_plain_attr() {
    let m = kernel_model();
    assert_eq!(
        m.find_op("trans_TransData_0")
            .and_then(|r| r.op.kernel_name()),
        Some("te_transdata_a603_c50c_1__kernel0")
    );
    assert_eq!(
        m.find_op("allreduce").and_then(|r| r.op.kernel_name()),
        None
    );
}

#[test]
fn kernel_stem_strips_suffixes() {
    assert_eq!(kernel_stem("te_x_1__kernel0"), "te_x_1");
    assert_eq!(kernel_stem("K_mix_aic"), "K");
    assert_eq!(kernel_stem("K_mix_aiv__kernel0"), "K");
    assert_eq!(kernel_stem("K__kernelX"), "K__kernelX");
}

#[test]
fn kernel_by_fragment_is_the_weakest_rule() {
    let m = kernel_model();
    assert_eq!(
        hits(&m, "te_transdata_a603"),
        vec![(
            "trans_TransData_0".into(),
            KernelMatch::AttrContains {
                key: "trans_TransData_0_kernelname".into()
            }
        )]
    );
    // Too short to mean anything.
    assert!(hits(&m, "te_gath").is_empty());
}

/// A small deterministic generator (xorshift), so the mutation test needs no dependency.
fn xorshift(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn never_panics_on_mutated_dumps() {
    let seed_text: &[u8] = br#"graph {
  name: "g"
  op {
    name: "GatherV2"
    type: "GatherV2"
    input: "Unique:0"
    input: "step:-1"
    attr { key: "_kernelname" value { s: "te_gatherv2_1__kernel0" } }
    attr { key: "l" value { list { i: 1 b: true s: "\101" val_type: VT_LIST_INT } } }
    attr { key: "t" value { t { desc { dtype: DT_FLOAT shape { dim: 2 } } data: "\000\x01" } } }
    attr { key: "lli" value { list_list_int { list_list_i { list_i: 0 } } } }
    input_desc { dtype: DT_FLOAT shape { dim: -1 } layout: "ND" }
  }
}
attr { key: "k" value { i: 0 } }
"#;
    const ALPHABET: &[u8] = b"{}<>[]:;,\"'\\ \n#-0123456789abcxyz_\xff";
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut parsed = 0;
    for _ in 0..3000 {
        let mut text = seed_text.to_vec();
        for _ in 0..1 + xorshift(&mut state) % 4 {
            let pos = (xorshift(&mut state) as usize) % text.len();
            match xorshift(&mut state) % 3 {
                0 => text[pos] = ALPHABET[(xorshift(&mut state) as usize) % ALPHABET.len()],
                1 => {
                    text.remove(pos);
                }
                _ => text.insert(
                    pos,
                    ALPHABET[(xorshift(&mut state) as usize) % ALPHABET.len()],
                ),
            }
        }
        if let Ok(model) = parse(&text) {
            parsed += 1;
            let _ = model.find_kernel("te_gatherv2_1");
            let _ = model.index().fused_into("x");
        }
    }
    // Many mutations hit white space or names and still parse: both paths were exercised.
    assert!(parsed > 100 && parsed < 3000, "{parsed}");
}

#[test]
fn ir_names_and_attrs() {
    let m = model(
        r#"graph { op { name: "g" type: "GatherV2"
           attr { key: "_input_name_key" value { list { s: "axis" s: "indices" s: "x" s: "stray" } } }
           attr { key: "_input_name_value" value { list { i: 2 i: 1 i: 0 i: 7 } } }
           attr { key: "_ir_attr_names" value { list { s: "batch_dims" s: "missing" } } }
           attr { key: "batch_dims" value { i: 0 } }
           input_desc { dtype: DT_FLOAT } input_desc { dtype: DT_INT32 } input_desc { dtype: DT_INT32 } } }"#,
    );
    let op = &m.graphs[0].ops[0];
    assert_eq!(
        op.input_ir_names(),
        vec![Some("x"), Some("indices"), Some("axis")]
    );
    assert!(op.output_ir_names().is_empty());
    assert_eq!(
        op.ir_attrs(),
        vec![("batch_dims", Some(&AttrValue::I(0))), ("missing", None)]
    );
}

#[test]
fn bare_graph_def_from_torchair() {
    // torchair's `dynamo_original_graph_*.txt`: a GraphDef without `graph { }` around it, ops
    // at the top level, `_fx_tensor_name` on each output descriptor.
    let m = model(
        r#"name: "graph_1"
op {
  name: "Add_2"
  type: "Add"
  input: "arg0_1:0"
  output_desc {
    name: "y"
    attr { key: "_fx_tensor_name" value { s: "add_1-aten.add.Tensor.OUTPUT.0" } }
  }
}
op { name: "Split" type: "SplitD"
  output_desc { attr { key: "_fx_tensor_name" value { s: "split-aten.split.Tensor.OUTPUT.0" } } }
  output_desc { attr { key: "_fx_tensor_name" value { s: "split-aten.split.Tensor.OUTPUT.1" } } } }
op { name: "NetOutput" type: "NetOutput" }"#,
    );
    assert_eq!(m.graphs.len(), 1);
    let g = &m.graphs[0];
    assert_eq!(g.name, "graph_1");
    assert_eq!(g.ops.len(), 3);
    assert_eq!(
        g.ops[0].output_desc[0].fx_tensor(),
        Some(("add_1-aten.add.Tensor", 0))
    );
    assert_eq!(
        g.ops[1].output_desc[1].fx_tensor(),
        Some(("split-aten.split.Tensor", 1))
    );
    assert_eq!(
        g.ops[2].output_desc.first().and_then(|d| d.fx_tensor()),
        None
    );
}

#[test]
fn dtype_codes_come_from_the_dump_type_table() {
    use super::dtype_code;
    assert_eq!(dtype_code("DT_UNDEFINED"), Some(0));
    assert_eq!(dtype_code("DT_BF16"), Some(27));
    assert_eq!(dtype_code("DT_FLOAT4_E1M2"), Some(40));
    assert_eq!(dtype_code("99"), Some(99));
    assert_eq!(dtype_code("FLOAT"), None);
    assert_eq!(dtype_code("DT_NOPE"), None);
}
