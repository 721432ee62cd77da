//! Layered triage of `torch.compile` failures on Ascend (npugraph_ex backend).
//!
//! The ladder (spec `triage-and-repro.md` §1.1): eager → `backend="eager"` →
//! `backend="aot_eager"` → npugraph_ex with `force_eager` → the original npugraph_ex call.
//! `run` generates the five step scripts ([`scripts`]), runs them ([`runner`]) and analyses the
//! tree; `analyze` does the analysis on an existing tree ([`analyze`]); `classify` reads any
//! captured log ([`classify`]). The analysis anchors on the first causal error (the shared engine
//! `npgx_parsers::causal`) and routes it ([`route`]).
//!
//! Engines here return records; `report::triage` renders them.

use std::path::PathBuf;

use serde::Serialize;

pub mod analyze;
pub mod classify;
pub mod compare;
pub mod dumps;
pub mod layout;
pub mod route;
pub mod runner;
pub mod scripts;

/// What `triage run` produced: the run (scripts, steps) and the analysis of its tree.
#[derive(Debug, Clone, Serialize)]
pub struct TriageRun {
    pub run: runner::RunSummary,
    pub analysis: analyze::TriageAnalysis,
}

impl TriageRun {
    /// Where `triage_report.md` goes.
    pub fn report_path(&self) -> PathBuf {
        self.run.root.join(layout::REPORT_FILE)
    }

    /// 0 all steps passed, 1 a step failed, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        if self.run.interrupted {
            130
        } else if self
            .run
            .steps
            .iter()
            .any(|s| s.end != runner::StepEnd::Passed)
        {
            1
        } else {
            0
        }
    }
}

/// `triage run`: generates the step scripts, runs the ladder and analyses the tree.
pub fn run(
    cfg: &runner::RunConfig,
    progress: &mut dyn runner::Progress,
) -> anyhow::Result<TriageRun> {
    let run = runner::run(cfg, progress)?;
    let analysis = analyze::analyze(&run.root)?;
    Ok(TriageRun { run, analysis })
}
