use super::*;

const DUMP: &str = r#"{
 "task": "statistics", "level": "mix", "framework": "pytorch", "dump_data_dir": null,
 "data": {
  "Torch.log.0.forward": {
   "input_args": [
    {"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2, 3], "Max": 1.0, "Min": -1.0,
     "Mean": NaN, "Norm": Infinity, "requires_grad": false},
    [{"type": "int", "value": 9}, {"type": "torch.Tensor", "dtype": "torch.bool", "shape": [],
      "Max": true, "Min": false, "Mean": null, "Norm": null}],
    null,
    {"type": "slice", "value": [0, null, 1]}
   ],
   "input_kwargs": {"out": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [1],
     "Max": -Infinity, "Min": -Infinity, "Mean": -Infinity, "Norm": Infinity,
     "data_name": "Torch.log.0.forward.input.out.pt"}},
   "output": [{"type": "torch.Tensor", "dtype": "torch.float32", "shape": [2, 3], "Max": 3.0,
     "Min": 0.5, "Mean": 1.0, "Norm": 2.0, "md5": "abcd1234"}],
   "is_recompute": false
  },
  "Module.fc.Linear.forward.0": {"input_args": [], "input_kwargs": {}, "output": [],
   "parameters": {"weight": {"type": "torch.Tensor", "dtype": "torch.float32", "shape": [4],
     "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1}}},
  "Module.fc.Linear.parameters_grad.0": {"weight": [{"type": "torch.Tensor", "dtype": "torch.float32",
     "shape": [4], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1}]},
  "Tensor.__add__.3.backward": {"input": [{"type": "torch.Tensor", "dtype": "torch.float32",
     "shape": [4], "Max": 1, "Min": 0, "Mean": 0.5, "Norm": 1}], "output": [null]}
 }
}"#;

fn calls(text: &str) -> (DumpMeta, Vec<Call>) {
    let mut calls = Vec::new();
    let meta = read_dump(text.as_bytes(), &mut |c| calls.push(c)).unwrap();
    (meta, calls)
}

#[test]
fn calls_come_in_file_order_with_leaves_named_as_msprobe_names_them() {
    let (meta, calls) = calls(DUMP);
    assert_eq!(meta.task.as_deref(), Some("statistics"));
    assert_eq!(meta.level.as_deref(), Some("mix"));
    assert_eq!(meta.dump_data_dir, None);
    let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Torch.log.0.forward",
            "Module.fc.Linear.forward.0",
            "Module.fc.Linear.parameters_grad.0",
            "Tensor.__add__.3.backward"
        ]
    );
    let slots: Vec<(Io, &str, bool)> = calls[0]
        .leaves
        .iter()
        .map(|l| (l.io, l.slot.as_str(), l.is_tensor()))
        .collect();
    assert_eq!(
        slots,
        [
            (Io::Input, "input.0", true),
            (Io::Input, "input.1.0", false),
            (Io::Input, "input.1.1", true),
            (Io::Input, "input.2", false),
            (Io::Input, "input.3", false),
            (Io::Input, "input.out", true),
            (Io::Output, "output.0", true),
        ]
    );
    let l = &calls[0].leaves[0];
    assert_eq!(l.dtype.as_deref(), Some("torch.float16"));
    assert_eq!(l.shape, [2, 3]);
    assert_eq!((l.max, l.min), (Some(1.0), Some(-1.0)));
    assert!(l.mean.is_some_and(f64::is_nan));
    assert_eq!(l.norm, Some(f64::INFINITY));
    let b = &calls[0].leaves[2];
    assert_eq!((b.max, b.min, b.mean), (Some(1.0), Some(0.0), None));
    let out = &calls[0].leaves[5];
    assert_eq!(out.max, Some(f64::NEG_INFINITY));
    assert_eq!(
        out.data_name.as_deref(),
        Some("Torch.log.0.forward.input.out.pt")
    );
    assert_eq!(calls[0].leaves[6].md5.as_deref(), Some("abcd1234"));
    let p = &calls[1].leaves;
    assert_eq!(
        (p[0].io, p[0].slot.as_str()),
        (Io::Parameter, "parameters.weight")
    );
    let g = &calls[2].leaves;
    assert_eq!((g[0].io, g[0].slot.as_str()), (Io::Output, "weight"));
    let bw: Vec<(Io, &str)> = calls[3]
        .leaves
        .iter()
        .map(|l| (l.io, l.slot.as_str()))
        .collect();
    assert_eq!(bw, [(Io::Input, "input.0"), (Io::Output, "output.0")]);
}

#[test]
fn broken_json_names_the_line() {
    let mut n = 0;
    let e = read_dump("{\"data\": {\"a\": [1,\n 2,,]}}".as_bytes(), &mut |_| {
        n += 1
    })
    .unwrap_err();
    assert_eq!(e.line, 2);
    let e = read_dump("{\"task\": \"x\"}".as_bytes(), &mut |_| n += 1).unwrap_err();
    assert!(e.message.contains("no \"data\""), "{e}");
    assert!(read_dump("[]".as_bytes(), &mut |_| n += 1).is_err());
    // Deep nesting is an error, not a stack overflow.
    let deep = format!(
        "{{\"data\": {{\"a\": {}{}}}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(read_dump(deep.as_bytes(), &mut |_| n += 1).is_err());
    assert_eq!(n, 0);
}

#[test]
fn call_names() {
    let c = call_name("Functional.conv2d.0.forward").unwrap();
    assert_eq!(
        (c.prefix, c.op.as_str(), c.direction, c.count),
        ("Functional", "Functional.conv2d", "forward", Some(0))
    );
    let c = call_name("Module.layer1.0.conv1.Conv2d.backward.12").unwrap();
    assert_eq!(
        (c.op.as_str(), c.direction, c.count),
        ("Module.layer1.0.conv1.Conv2d", "backward", Some(12))
    );
    let c = call_name("Cell.conv1.Conv2d.parameters_grad").unwrap();
    assert_eq!(
        (c.op.as_str(), c.direction, c.count),
        ("Cell.conv1.Conv2d", "parameters_grad", None)
    );
    let c = call_name("Module.l1.Linear.parameters_grad.2").unwrap();
    assert_eq!(
        (c.op.as_str(), c.direction, c.count),
        ("Module.l1.Linear", "parameters_grad", Some(2))
    );
    assert!(call_name("Functional.conv2d").is_none());
    assert!(call_name("forward.0").is_none());
    assert!(is_collective("Distributed.all_reduce.3.forward"));
    assert!(!is_collective("Distributed.get_rank.0.forward"));
    assert!(!is_collective("Torch.all_reduce.0.forward"));
}

#[test]
fn rank_and_step_from_the_path() {
    assert_eq!(locate(&["dump", "step3", "rank7"]), (Some(7), Some(3)));
    assert_eq!(locate(&["dump", "step2", "rank"]), (None, Some(2)));
    assert_eq!(locate(&["dump", "step0", "proc2016"]), (None, Some(0)));
    assert_eq!(locate(&["x", "rank0"]), (Some(0), None));
    assert_eq!(locate(&["step1", "x", "rank0"]), (Some(0), None));
    assert_eq!(locate::<&str>(&[]), (None, None));
}

#[test]
fn stacks_in_both_forms_and_the_users_frame() {
    let old = r#"{"Torch.log.0.forward": ["File /site-packages/msprobe/hook.py, line 3, in f, \n x()",
        "File /site-packages/torch/nn/m.py, line 9, in g, \n y()",
        "File /home/u/train.py, line 42, in step, \n loss = torch.log(p)"]}"#;
    let new = r#"{"0": [["Functional.conv2d.0.forward", "Functional.conv2d.1.forward"],
        ["File /site-packages/msprobe/hook.py, line 3, in f, \n x()"]]}"#;
    let mut got = Vec::new();
    read_stacks(old.as_bytes(), &mut |c, f| {
        got.push((c.to_string(), user_frame(f)))
    })
    .unwrap();
    read_stacks(new.as_bytes(), &mut |c, f| {
        got.push((c.to_string(), user_frame(f)))
    })
    .unwrap();
    assert_eq!(
        got,
        [
            (
                "Torch.log.0.forward".to_string(),
                Some("/home/u/train.py, line 42, in step: loss = torch.log(p)".to_string())
            ),
            ("Functional.conv2d.0.forward".to_string(), None),
            ("Functional.conv2d.1.forward".to_string(), None),
        ]
    );
}

#[test]
fn every_cut_of_a_dump_json_goes_through_the_fuzz_entry_without_a_panic() {
    let text = br#"{"task": "tensor", "level": "L1", "dump_data_dir": null, "data": {"Functional.add.0.forward": {"input_args": [{"type": "torch.Tensor", "dtype": "torch.float16", "shape": [2], "Max": 1.0, "Min": 0.0, "Mean": 0.5, "Norm": 1.0, "data_name": "x.pt"}], "output": []}}}"#;
    for cut in 0..=text.len() {
        super::fuzz::all(&text[..cut]);
    }
}

#[test]
fn a_users_frame_splits_into_its_parts() {
    assert_eq!(
        split_user_frame("/home/u/train.py, line 42, in step: loss = torch.log(p)"),
        Some((
            "/home/u/train.py",
            42,
            Some("step"),
            Some("loss = torch.log(p)")
        ))
    );
    assert_eq!(
        split_user_frame("/a, b/m.py, line 7, in f"),
        Some(("/a, b/m.py", 7, Some("f"), None))
    );
    assert_eq!(split_user_frame("no line here"), None);
    assert_eq!(split_user_frame("x, line "), None);
}
