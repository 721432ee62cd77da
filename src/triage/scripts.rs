//! The five step scripts, generated from the user's script by minimal syntax-aware edits.

use std::path::Path;

use anyhow::Context;
use npgx_parsers::pyedit::{
    CompileCall, Extras, MergeTarget, OptionsChange, PyEditError, Script, StepEdit,
};
use serde::{Deserialize, Serialize};

use super::compare;
use super::layout::{Step, ORIGINAL_SCRIPT, SCRIPTS_DIR};

/// One generated step script.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StepScript {
    pub step: Step,
    /// File name under `scripts/`.
    pub file: String,
    /// What happened to the user's `options` in this step.
    pub options: OptionsChange,
    #[serde(skip)]
    pub text: String,
}

/// The selected compile call and the five scripts.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScriptPlan {
    pub call: CompileCall,
    pub steps: Vec<StepScript>,
    /// The callable is wrapped to save outputs and timings (`--compare-outputs`).
    pub capture: bool,
    /// Steps 4 and 5 write npugraph_ex data dumps into their step directory (`--dump-tensors`).
    pub dump_tensors: bool,
    /// The seed every step starts from (Python's `random`, numpy, torch CPU and NPU).
    pub seed: u64,
}

/// How the scripts are made.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// `--call N`.
    pub call: Option<usize>,
    /// Wrap the callable for `--compare-outputs`.
    pub capture: bool,
    /// `--dump-tensors`.
    pub dump_tensors: bool,
    pub seed: u64,
}

/// The environment variable that carries the data-dump directory of one step or variant.
pub const DUMP_DIR_ENV: &str = "NPGX_DUMP_DIR";

/// `dump_tensor_data=True` and `data_dump_dir` read from [`DUMP_DIR_ENV`] at run time (the same
/// script then dumps into whichever directory npgx runs it for).
pub fn dump_options() -> Vec<(String, String)> {
    vec![
        ("dump_tensor_data".into(), "True".into()),
        (
            "data_dump_dir".into(),
            format!("__import__(\"os\").environ[\"{DUMP_DIR_ENV}\"]"),
        ),
    ]
}

/// The statements put at the top of every step script and bisect variant: the same random
/// state before the user's code runs.
pub fn seed_prelude(seed: u64) -> String {
    SEED_PRELUDE.replace("{seed}", &seed.to_string())
}

const SEED_PRELUDE: &str = r#"# npgx triage: the same random state in every step and variant (seed {seed}, see env.txt)
import random as _npgx_random; _npgx_random.seed({seed})
try:
    import numpy as _npgx_numpy; _npgx_numpy.random.seed({seed})
except ImportError:
    pass
try:
    import torch as _npgx_torch; _npgx_torch.manual_seed({seed})
    try:
        _npgx_torch.npu.manual_seed_all({seed})
    except Exception:
        pass
except ImportError:
    pass
"#;

/// Step 5 of `source` with `options` merged into the compile call's options: a bisect variant.
pub fn variant(
    source: &str,
    call: &CompileCall,
    options: &[(String, String)],
    capture: bool,
    seed: u64,
) -> Result<String, PyEditError> {
    let script = Script::parse(source)?;
    let prelude = seed_prelude(seed);
    let extras = Extras {
        wrapper: capture.then_some(compare::CAPTURE_WRAPPER),
        options,
        prelude: Some(&prelude),
    };
    Ok(script.rewrite_with(call, StepEdit::Original, extras)?.text)
}

/// Builds the plan for `source`.
pub fn plan(source: &str, opts: PlanOptions) -> Result<ScriptPlan, PyEditError> {
    let script = Script::parse(source)?;
    let selected = script.select(opts.call)?;
    let prelude = seed_prelude(opts.seed);
    let dumps = if opts.dump_tensors {
        dump_options()
    } else {
        Vec::new()
    };
    let mut steps = Vec::with_capacity(5);
    for step in Step::ALL {
        let extras = Extras {
            wrapper: opts.capture.then_some(compare::CAPTURE_WRAPPER),
            options: if step.has_debug_dir() { &dumps } else { &[] },
            prelude: Some(&prelude),
        };
        let rewrite = script.rewrite_with(&selected, step.edit(), extras)?;
        steps.push(StepScript {
            step,
            file: step.script_name(),
            options: rewrite.options,
            text: rewrite.text,
        });
    }
    Ok(ScriptPlan {
        call: selected,
        steps,
        capture: opts.capture,
        dump_tensors: opts.dump_tensors,
        seed: opts.seed,
    })
}

/// Writes `scripts/original.py` (a byte copy) and the five step scripts under `root`.
pub fn write(root: &Path, original: &[u8], plan: &ScriptPlan) -> anyhow::Result<()> {
    let dir = root.join(SCRIPTS_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let orig = dir.join(ORIGINAL_SCRIPT);
    crate::output::write(&orig, original)?;
    for s in &plan.steps {
        let p = dir.join(&s.file);
        crate::output::write(&p, s.text.as_bytes())?;
    }
    if plan.capture {
        let p = dir.join(compare::CAPTURE_MODULE);
        crate::output::write(&p, compare::CAPTURE_SOURCE.as_bytes())?;
    }
    Ok(())
}

/// One sentence per step on the options, for the report. `dumps`: `--dump-tensors` merged the
/// data-dump options into steps 4 and 5.
pub fn options_summary(step: Step, change: &OptionsChange, dumps: bool) -> String {
    let dump_note = if dumps && step.has_debug_dir() {
        " (with dump_tensor_data=True and data_dump_dir = the step directory)"
    } else {
        ""
    };
    let what = match change {
        OptionsChange::Absent => "no options".into(),
        OptionsChange::Kept => "options kept as written".into(),
        OptionsChange::Dropped { keys, text } if keys.is_empty() => {
            format!("options dropped ({text})")
        }
        OptionsChange::Dropped { keys, .. } => format!("options dropped: {}", keys.join(", ")),
        OptionsChange::Merged { .. } if step == Step::NpugraphEx => {
            "options as written".to_string()
        }
        OptionsChange::Merged { into } => match into {
            MergeTarget::LiteralDict => "\"force_eager\": True added to the options dict".into(),
            MergeTarget::ReplacedValue => "the existing force_eager set to True".into(),
            MergeTarget::SpreadExpression => {
                "options = {**user_options, \"force_eager\": True}".into()
            }
            MergeTarget::NewArgument => "options={\"force_eager\": True} added".into(),
        },
    };
    format!("{what}{dump_note}")
}
