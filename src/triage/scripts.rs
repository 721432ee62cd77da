//! The five step scripts, generated from the user's script by minimal syntax-aware edits.

use std::path::Path;

use anyhow::Context;
use npgx_parsers::pyedit::{CompileCall, MergeTarget, OptionsChange, Script};
use serde::Serialize;

use super::compare;
use super::layout::{Step, ORIGINAL_SCRIPT, SCRIPTS_DIR};

/// One generated step script.
#[derive(Debug, Clone, Serialize)]
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
#[derive(Debug, Clone, Serialize)]
pub struct ScriptPlan {
    pub call: CompileCall,
    pub steps: Vec<StepScript>,
    /// The callable is wrapped to save outputs and timings (`--compare-outputs`).
    pub capture: bool,
}

/// Builds the plan for `source`; `call` is `--call N`; `capture` wraps the callable for
/// `--compare-outputs`.
pub fn plan(
    source: &str,
    call: Option<usize>,
    capture: bool,
) -> Result<ScriptPlan, npgx_parsers::pyedit::PyEditError> {
    let script = Script::parse(source)?;
    let selected = script.select(call)?;
    let mut steps = Vec::with_capacity(5);
    for step in Step::ALL {
        let rewrite = if capture {
            script.rewrite_wrapped(&selected, step.edit(), compare::CAPTURE_WRAPPER)?
        } else {
            script.rewrite(&selected, step.edit())?
        };
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
        capture,
    })
}

/// Writes `scripts/original.py` (a byte copy) and the five step scripts under `root`.
pub fn write(root: &Path, original: &[u8], plan: &ScriptPlan) -> anyhow::Result<()> {
    let dir = root.join(SCRIPTS_DIR);
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let orig = dir.join(ORIGINAL_SCRIPT);
    std::fs::write(&orig, original).with_context(|| format!("cannot write {}", orig.display()))?;
    for s in &plan.steps {
        let p = dir.join(&s.file);
        std::fs::write(&p, &s.text).with_context(|| format!("cannot write {}", p.display()))?;
    }
    if plan.capture {
        let p = dir.join(compare::CAPTURE_MODULE);
        std::fs::write(&p, compare::CAPTURE_SOURCE)
            .with_context(|| format!("cannot write {}", p.display()))?;
    }
    Ok(())
}

/// One sentence per step on the options, for the report.
pub fn options_summary(change: &OptionsChange) -> String {
    match change {
        OptionsChange::Absent => "no options".into(),
        OptionsChange::Kept => "options kept as written".into(),
        OptionsChange::Dropped { keys, text } if keys.is_empty() => {
            format!("options dropped ({text})")
        }
        OptionsChange::Dropped { keys, .. } => format!("options dropped: {}", keys.join(", ")),
        OptionsChange::Merged { into } => match into {
            MergeTarget::LiteralDict => "\"force_eager\": True added to the options dict".into(),
            MergeTarget::ReplacedValue => "the existing force_eager set to True".into(),
            MergeTarget::SpreadExpression => {
                "options = {**user_options, \"force_eager\": True}".into()
            }
            MergeTarget::NewArgument => "options={\"force_eager\": True} added".into(),
        },
    }
}
