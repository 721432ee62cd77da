//! Exact-text tests: every rewrite case of issue 5, each step's output compared byte for byte.

use super::*;

const STEPS: [StepEdit; 5] = [
    StepEdit::Eager,
    StepEdit::Backend("eager"),
    StepEdit::Backend("aot_eager"),
    StepEdit::ForceEager,
    StepEdit::Original,
];

/// Rewrites `src` for all five steps with the default selection.
fn ladder(src: &str) -> Vec<String> {
    ladder_with(src, None)
}

fn ladder_with(src: &str, call: Option<usize>) -> Vec<String> {
    let script = Script::parse(src).unwrap();
    let call = script.select(call).unwrap();
    STEPS
        .iter()
        .map(|s| script.rewrite(&call, *s).unwrap().text)
        .collect()
}

fn assert_ladder(src: &str, expected: [&str; 4]) {
    let got = ladder(src);
    for (i, want) in expected.iter().enumerate() {
        assert_eq!(got[i], *want, "step {}", i + 1);
    }
    assert_eq!(got[4], src, "step 5 is the original");
}

#[test]
fn spec_worked_example() {
    let head = "import torch\nmodel = Net()\n";
    let tail = "\nout = compiled(x)\n";
    let call = "compiled = torch.compile(model, backend=\"npugraph_ex\", fullgraph=True, dynamic=False, options={\"foo\": 1, \"bar\": 2})";
    let src = format!("{head}{call}{tail}");
    let got = ladder(&src);
    assert_eq!(got[0], format!("{head}compiled = model{tail}"));
    assert_eq!(
        got[1],
        format!("{head}compiled = torch.compile(model, backend=\"eager\", fullgraph=True, dynamic=False){tail}")
    );
    assert_eq!(
        got[2],
        format!("{head}compiled = torch.compile(model, backend=\"aot_eager\", fullgraph=True, dynamic=False){tail}")
    );
    assert_eq!(
        got[3],
        format!("{head}compiled = torch.compile(model, backend=\"npugraph_ex\", fullgraph=True, dynamic=False, options={{\"foo\": 1, \"bar\": 2, \"force_eager\": True}}){tail}")
    );
    assert_eq!(got[4], src);
}

#[test]
fn options_change_is_reported() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={\"foo\": 1, **extra})\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    assert_eq!(
        script
            .rewrite(&call, StepEdit::Backend("eager"))
            .unwrap()
            .options,
        OptionsChange::Dropped {
            keys: vec!["foo".into(), "**extra".into()],
            text: "{\"foo\": 1, **extra}".into()
        }
    );
    assert_eq!(
        script.rewrite(&call, StepEdit::ForceEager).unwrap().options,
        OptionsChange::Merged {
            into: MergeTarget::LiteralDict
        }
    );
    assert_eq!(
        script.rewrite(&call, StepEdit::Original).unwrap().options,
        OptionsChange::Kept
    );
}

#[test]
fn multiline_call_with_comments() {
    let src = r#"import torch

def main():
    # build and compile
    compiled = torch.compile(  # the call under test
        model,
        backend="npugraph_ex",  # our backend
        fullgraph=True,
        options={
            "inplace_pass": False,  # keep copies
        },  # npu only
    )
    return compiled(x)
"#;
    assert_ladder(
        src,
        [
            r#"import torch

def main():
    # build and compile
    compiled = model
    return compiled(x)
"#,
            r#"import torch

def main():
    # build and compile
    compiled = torch.compile(  # the call under test
        model,
        backend="eager",  # our backend
        fullgraph=True,
    )
    return compiled(x)
"#,
            r#"import torch

def main():
    # build and compile
    compiled = torch.compile(  # the call under test
        model,
        backend="aot_eager",  # our backend
        fullgraph=True,
    )
    return compiled(x)
"#,
            r#"import torch

def main():
    # build and compile
    compiled = torch.compile(  # the call under test
        model,
        backend="npugraph_ex",  # our backend
        fullgraph=True,
        options={
            "inplace_pass": False,  # keep copies
            "force_eager": True,
        },  # npu only
    )
    return compiled(x)
"#,
        ],
    );
}

#[test]
fn multiline_without_trailing_comma_gets_new_argument_line() {
    let src = "import torch\nc = torch.compile(\n    model,\n    backend='npugraph_ex'  # b\n)\n";
    assert_ladder(
        src,
        [
            "import torch\nc = model\n",
            "import torch\nc = torch.compile(\n    model,\n    backend='eager'  # b\n)\n",
            "import torch\nc = torch.compile(\n    model,\n    backend='aot_eager'  # b\n)\n",
            "import torch\nc = torch.compile(\n    model,\n    backend='npugraph_ex',  # b\n    options={\"force_eager\": True}\n)\n",
        ],
    );
}

#[test]
fn hanging_indent_call_stays_inline() {
    let src =
        "import torch\nc = torch.compile(model,\n                  backend=\"npugraph_ex\")\n";
    let got = ladder(src);
    assert_eq!(
        got[3],
        "import torch\nc = torch.compile(model,\n                  backend=\"npugraph_ex\", options={\"force_eager\": True})\n"
    );
}

#[test]
fn positional_backend() {
    let src = "import torch\nc = torch.compile(model, \"npugraph_ex\", options=opts)\n";
    assert_ladder(
        src,
        [
            "import torch\nc = model\n",
            "import torch\nc = torch.compile(model, \"eager\")\n",
            "import torch\nc = torch.compile(model, \"aot_eager\")\n",
            "import torch\nc = torch.compile(model, \"npugraph_ex\", options={**opts, \"force_eager\": True})\n",
        ],
    );
}

#[test]
fn import_torch_as_alias() {
    let src = "import torch as t\nnet = t.compile(net, backend=\"npugraph_ex\", dynamic=True)\n";
    assert_ladder(
        src,
        [
            "import torch as t\nnet = net\n",
            "import torch as t\nnet = t.compile(net, backend=\"eager\", dynamic=True)\n",
            "import torch as t\nnet = t.compile(net, backend=\"aot_eager\", dynamic=True)\n",
            "import torch as t\nnet = t.compile(net, backend=\"npugraph_ex\", dynamic=True, options={\"force_eager\": True})\n",
        ],
    );
}

#[test]
fn from_torch_import_compile() {
    let src = "from torch import compile\nfrom torch import compile as tc\na = compile(m1, backend=\"npugraph_ex\")\nb = tc(m2, backend=\"eager\")\n";
    let script = Script::parse(src).unwrap();
    let calls = script.compile_calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[1].callee, "tc");
    let got = ladder(src);
    assert_eq!(
        got[0],
        "from torch import compile\nfrom torch import compile as tc\na = m1\nb = tc(m2, backend=\"eager\")\n"
    );
    assert_eq!(
        got[2],
        "from torch import compile\nfrom torch import compile as tc\na = compile(m1, backend=\"aot_eager\")\nb = tc(m2, backend=\"eager\")\n"
    );
}

#[test]
fn re_compile_is_not_a_compile_call() {
    let src = "import re\nimport torch\npat = re.compile(r\"x+\")\nc = torch.compile(m, backend=\"npugraph_ex\")\n";
    let script = Script::parse(src).unwrap();
    let calls = script.compile_calls();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].line, 4);
}

#[test]
fn decorator_with_arguments() {
    let src = "import torch\n\n@torch.compile(backend=\"npugraph_ex\", fullgraph=True)  # compiled\ndef step(x):\n    return x * 2\n";
    assert_ladder(
        src,
        [
            "import torch\n\ndef step(x):\n    return x * 2\n",
            "import torch\n\n@torch.compile(backend=\"eager\", fullgraph=True)  # compiled\ndef step(x):\n    return x * 2\n",
            "import torch\n\n@torch.compile(backend=\"aot_eager\", fullgraph=True)  # compiled\ndef step(x):\n    return x * 2\n",
            "import torch\n\n@torch.compile(backend=\"npugraph_ex\", fullgraph=True, options={\"force_eager\": True})  # compiled\ndef step(x):\n    return x * 2\n",
        ],
    );
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    assert_eq!(call.form, CallForm::Decorator);
    assert_eq!(call.line, 3);
}

#[test]
fn bare_decorator() {
    let src = "import torch\n\n@torch.compile\ndef step(x):\n    return x\n";
    assert_ladder(
        src,
        [
            "import torch\n\ndef step(x):\n    return x\n",
            "import torch\n\n@torch.compile(backend=\"eager\")\ndef step(x):\n    return x\n",
            "import torch\n\n@torch.compile(backend=\"aot_eager\")\ndef step(x):\n    return x\n",
            "import torch\n\n@torch.compile(options={\"force_eager\": True})\ndef step(x):\n    return x\n",
        ],
    );
}

#[test]
fn module_compile_method() {
    let src = "import torch\nmodel = Net()\nmodel.compile(backend=\"npugraph_ex\", options={\"static_kernel_compile\": True})\ny = model(x)\n";
    assert_ladder(
        src,
        [
            "import torch\nmodel = Net()\ny = model(x)\n",
            "import torch\nmodel = Net()\nmodel.compile(backend=\"eager\")\ny = model(x)\n",
            "import torch\nmodel = Net()\nmodel.compile(backend=\"aot_eager\")\ny = model(x)\n",
            "import torch\nmodel = Net()\nmodel.compile(backend=\"npugraph_ex\", options={\"static_kernel_compile\": True, \"force_eager\": True})\ny = model(x)\n",
        ],
    );
}

#[test]
fn module_compile_alone_in_block_becomes_pass() {
    let src =
        "import torch\nif use_graph:\n    model.compile(backend=\"npugraph_ex\")  # graph mode\n";
    let got = ladder(src);
    assert_eq!(
        got[0],
        "import torch\nif use_graph:\n    pass  # graph mode\n"
    );
}

#[test]
fn call_inside_factory_function() {
    let src = "import torch\n\ndef build(model, cfg):\n    model = torch.compile(model, backend=\"npugraph_ex\", mode=cfg.mode)\n    return model\n\nm = build(Net(), cfg)\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    assert_eq!(call.enclosing_function.as_deref(), Some("build"));
    assert_ladder(
        src,
        [
            "import torch\n\ndef build(model, cfg):\n    model = model\n    return model\n\nm = build(Net(), cfg)\n",
            "import torch\n\ndef build(model, cfg):\n    model = torch.compile(model, backend=\"eager\", mode=cfg.mode)\n    return model\n\nm = build(Net(), cfg)\n",
            "import torch\n\ndef build(model, cfg):\n    model = torch.compile(model, backend=\"aot_eager\", mode=cfg.mode)\n    return model\n\nm = build(Net(), cfg)\n",
            "import torch\n\ndef build(model, cfg):\n    model = torch.compile(model, backend=\"npugraph_ex\", mode=cfg.mode, options={\"force_eager\": True})\n    return model\n\nm = build(Net(), cfg)\n",
        ],
    );
}

#[test]
fn return_of_compile_call_in_factory() {
    let src = "import torch\ndef make(m):\n    return torch.compile(m, backend=\"npugraph_ex\")\n";
    assert_eq!(ladder(src)[0], "import torch\ndef make(m):\n    return m\n");
}

#[test]
fn several_calls_pick_npugraph_ex() {
    let src = "import torch\nenc = torch.compile(encoder)\ndec = torch.compile(decoder, backend=\"npugraph_ex\")\n";
    let got = ladder(src);
    assert_eq!(
        got[0],
        "import torch\nenc = torch.compile(encoder)\ndec = decoder\n"
    );
    assert_eq!(
        got[1],
        "import torch\nenc = torch.compile(encoder)\ndec = torch.compile(decoder, backend=\"eager\")\n"
    );
}

#[test]
fn several_calls_ambiguous_then_call_n() {
    let src = "import torch\na = torch.compile(m1, backend=\"npugraph_ex\")\nb = torch.compile(m2, backend=\"npugraph_ex\")\n";
    let script = Script::parse(src).unwrap();
    let err = script.select(None).unwrap_err();
    assert_eq!(
        err.to_string(),
        "2 compile calls and none (or more than one) uses backend=\"npugraph_ex\"; pick one with --call N:\n  1: line 2: torch.compile(m1, backend=\"npugraph_ex\")\n  2: line 3: torch.compile(m2, backend=\"npugraph_ex\")"
    );
    let got = ladder_with(src, Some(2));
    assert_eq!(
        got[0],
        "import torch\na = torch.compile(m1, backend=\"npugraph_ex\")\nb = m2\n"
    );
    assert_eq!(
        script.select(Some(3)).unwrap_err(),
        PyEditError::NoSuchCall {
            requested: 3,
            available: 2
        }
    );
    assert!(matches!(
        script.select(Some(0)).unwrap_err(),
        PyEditError::NoSuchCall { .. }
    ));
}

#[test]
fn no_backend_gets_one_and_options_slot_is_reused() {
    let src = "import torch\nc = torch.compile(m, options={\"a\": 1})\n";
    let got = ladder(src);
    assert_eq!(
        got[1],
        "import torch\nc = torch.compile(m, backend=\"eager\")\n"
    );
    assert_eq!(
        got[3],
        "import torch\nc = torch.compile(m, options={\"a\": 1, \"force_eager\": True})\n"
    );
    let src = "import torch\nc = torch.compile(m)\n";
    let got = ladder(src);
    assert_eq!(
        got[2],
        "import torch\nc = torch.compile(m, backend=\"aot_eager\")\n"
    );
}

#[test]
fn existing_force_eager_is_set_true() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={\"force_eager\": False, \"x\": 1})\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    let r = script.rewrite(&call, StepEdit::ForceEager).unwrap();
    assert_eq!(
        r.text,
        "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={\"force_eager\": True, \"x\": 1})\n"
    );
    assert_eq!(
        r.options,
        OptionsChange::Merged {
            into: MergeTarget::ReplacedValue
        }
    );
}

#[test]
fn empty_options_dict_and_trailing_comma_inline() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={},)\n";
    let got = ladder(src);
    assert_eq!(
        got[1],
        "import torch\nc = torch.compile(m, backend=\"eager\", )\n"
    );
    assert_eq!(
        got[3],
        "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={\"force_eager\": True},)\n"
    );
}

#[test]
fn options_in_the_middle_inline() {
    let src =
        "import torch\nc = torch.compile(m, options=o, backend=\"npugraph_ex\", dynamic=False)\n";
    assert_eq!(
        ladder(src)[1],
        "import torch\nc = torch.compile(m, backend=\"eager\", dynamic=False)\n"
    );
}

#[test]
fn decorator_factory_applied_directly() {
    let src = "import torch\nf = torch.compile(backend=\"npugraph_ex\")(fn)\ng = torch.compile(backend=\"npugraph_ex\")\n";
    let got = ladder_with(src, Some(1));
    assert_eq!(
        got[0],
        "import torch\nf = fn\ng = torch.compile(backend=\"npugraph_ex\")\n"
    );
    let got = ladder_with(src, Some(2));
    assert_eq!(
        got[0],
        "import torch\nf = torch.compile(backend=\"npugraph_ex\")(fn)\ng = (lambda fn: fn)\n"
    );
}

#[test]
fn model_as_keyword_and_lambda_is_parenthesised() {
    let src = "import torch\nc = torch.compile(model=net, backend=\"npugraph_ex\")\n";
    assert_eq!(ladder(src)[0], "import torch\nc = net\n");
    let src = "import torch\ny = torch.compile(lambda v: v + 1, backend=\"npugraph_ex\")(x)\n";
    assert_eq!(ladder(src)[0], "import torch\ny = (lambda v: v + 1)(x)\n");
}

#[test]
fn non_ascii_comments_survive() {
    let src = "import torch\n# 编译模型\nc = torch.compile(m, backend=\"npugraph_ex\")  # 图模式\n";
    assert_eq!(
        ladder(src)[3],
        "import torch\n# 编译模型\nc = torch.compile(m, backend=\"npugraph_ex\", options={\"force_eager\": True})  # 图模式\n"
    );
}

#[test]
fn no_compile_call_is_an_error() {
    let script = Script::parse("import torch\nprint(torch.ones(2))\n").unwrap();
    assert_eq!(script.select(None).unwrap_err(), PyEditError::NoCompileCall);
}

#[test]
fn syntax_error_names_the_line() {
    let err = Script::parse("import torch\n\nc = torch.compile(m,\nprint(1\n")
        .err()
        .unwrap();
    assert!(matches!(err, PyEditError::Syntax { .. }), "{err:?}");
    let err = Script::parse("def f(:\n    pass\n").err().unwrap();
    assert_eq!(err, PyEditError::Syntax { line: 1, column: 7 });
}

#[test]
fn never_panics_on_odd_input() {
    for src in [
        "",
        "\u{feff}",
        "torch.compile",
        "@torch.compile\n",
        "x = (",
        "\0\0",
    ] {
        if let Ok(s) = Script::parse(src) {
            for c in s.compile_calls() {
                for step in STEPS {
                    let _ = s.rewrite(&c, step);
                }
            }
        }
    }
}

#[test]
fn wrapped_for_output_capture() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\")  # go\nc(x)\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    let w = "__import__(\"npgx_capture\").wrap";
    let got: Vec<String> = STEPS
        .iter()
        .map(|s| script.rewrite_wrapped(&call, *s, w).unwrap().text)
        .collect();
    assert_eq!(
        got[0],
        "import torch\nc = __import__(\"npgx_capture\").wrap(m)  # go\nc(x)\n"
    );
    assert_eq!(
        got[1],
        "import torch\nc = __import__(\"npgx_capture\").wrap(torch.compile(m, backend=\"eager\"))  # go\nc(x)\n"
    );
    assert_eq!(
        got[3],
        "import torch\nc = __import__(\"npgx_capture\").wrap(torch.compile(m, backend=\"npugraph_ex\", options={\"force_eager\": True}))  # go\nc(x)\n"
    );
    assert_eq!(
        got[4],
        "import torch\nc = __import__(\"npgx_capture\").wrap(torch.compile(m, backend=\"npugraph_ex\"))  # go\nc(x)\n"
    );
    let dec = Script::parse(
        "import torch\n@torch.compile(backend=\"npugraph_ex\")\ndef f(x):\n    return x\n",
    )
    .unwrap();
    let call = dec.select(None).unwrap();
    assert_eq!(
        dec.rewrite_wrapped(&call, StepEdit::Eager, w).unwrap_err(),
        PyEditError::CaptureUnsupported(CallForm::Decorator)
    );
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn extra_options_merge_into_step5_and_step4() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={'inplace_pass': False, 'clone_output': False})\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    let set = pairs(&[("clone_output", "True"), ("remove_noop_ops", "False")]);
    let extras = Extras {
        options: &set,
        ..Extras::default()
    };
    let r = script
        .rewrite_with(&call, StepEdit::Original, extras)
        .unwrap();
    assert_eq!(
        r.text,
        "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={'inplace_pass': False, 'clone_output': True, 'remove_noop_ops': False})\n"
    );
    assert_eq!(
        r.options,
        OptionsChange::Merged {
            into: MergeTarget::LiteralDict
        }
    );
    let r = script
        .rewrite_with(&call, StepEdit::ForceEager, extras)
        .unwrap();
    assert!(r.text.contains("{'inplace_pass': False, 'clone_output': True, 'force_eager': True, 'remove_noop_ops': False}"), "{}", r.text);
    // No options / an expression.
    for (call_text, want) in [
        ("torch.compile(m, backend=\"npugraph_ex\")", "torch.compile(m, backend=\"npugraph_ex\", options={\"clone_output\": True, \"remove_noop_ops\": False})"),
        ("torch.compile(m, backend=\"npugraph_ex\", options=opts)", "torch.compile(m, backend=\"npugraph_ex\", options={**opts, \"clone_output\": True, \"remove_noop_ops\": False})"),
    ] {
        let src = format!("import torch\nc = {call_text}\n");
        let script = Script::parse(&src).unwrap();
        let call = script.select(None).unwrap();
        let r = script.rewrite_with(&call, StepEdit::Original, extras).unwrap();
        assert_eq!(r.text, format!("import torch\nc = {want}\n"));
    }
}

#[test]
fn options_as_written() {
    let src = "import torch\nc = torch.compile(m, backend=\"npugraph_ex\", options={**base, \"frozen_parameter\": True, \"capture_error_mode\": \"global\"})\n";
    let script = Script::parse(src).unwrap();
    let call = script.select(None).unwrap();
    assert_eq!(
        script.options_of(&call),
        OptionsSource::Literal {
            entries: pairs(&[
                ("frozen_parameter", "True"),
                ("capture_error_mode", "\"global\"")
            ]),
            splat: true
        }
    );
    let src = "import torch\nc = torch.compile(m, options=cfg.opts)\nd = torch.compile(m)\n";
    let script = Script::parse(src).unwrap();
    let calls = script.compile_calls();
    assert_eq!(
        script.options_of(&calls[0]),
        OptionsSource::Expression("cfg.opts".into())
    );
    assert_eq!(script.options_of(&calls[1]), OptionsSource::Absent);
}

#[test]
fn prelude_goes_after_docstring_and_future_imports() {
    let extras = Extras {
        prelude: Some("import random; random.seed(0)"),
        ..Extras::default()
    };
    let cases = [
        (
            "\"\"\"Doc.\"\"\"\n# c\nfrom __future__ import annotations\nimport torch\nc = torch.compile(m)\n",
            "\"\"\"Doc.\"\"\"\n# c\nfrom __future__ import annotations\nimport random; random.seed(0)\nimport torch\nc = torch.compile(m)\n",
        ),
        (
            "import torch\nc = torch.compile(m)\n",
            "import random; random.seed(0)\nimport torch\nc = torch.compile(m)\n",
        ),
        (
            "#!/usr/bin/env python\nimport torch\n\"\"\"not a docstring\"\"\"\nc = torch.compile(m)\n",
            "#!/usr/bin/env python\nimport random; random.seed(0)\nimport torch\n\"\"\"not a docstring\"\"\"\nc = torch.compile(m)\n",
        ),
    ];
    for (src, want) in cases {
        let script = Script::parse(src).unwrap();
        let call = script.select(None).unwrap();
        let r = script
            .rewrite_with(&call, StepEdit::Original, extras)
            .unwrap();
        assert_eq!(r.text, want);
        assert!(Script::parse(&r.text).is_ok());
    }
}
