//! Layered triage of `torch.compile` failures on Ascend (npugraph_ex backend).
//!
//! The ladder (spec `triage-and-repro.md` §1.1): eager → `backend="eager"` →
//! `backend="aot_eager"` → npugraph_ex with `force_eager` → the original npugraph_ex call.
//! `run` generates the five step scripts ([`scripts`]), runs them ([`runner`]) and analyses the
//! tree; `steps` runs step scripts someone else wrote, under the contract of the triage skill's
//! `run_triage.sh`, and analyses the tree ([`steps`]); `analyze` does the analysis on an
//! existing tree ([`analyze`]); `classify` reads any captured log ([`classify`]), and a directory
//! of rank logs side by side ([`ranks`]). The analysis anchors on the first causal error (the
//! shared engine `npgx_parsers::causal`) and routes it ([`route`]).
//!
//! Engines here return records; `report::triage` renders them.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub mod analyze;
pub mod bisect;
pub mod classify;
pub mod compare;
pub mod dumps;
pub mod judge;
pub mod layout;
pub mod node_search;
pub mod nodes;
pub mod rank_view;
pub mod ranks;
pub mod route;
pub mod runner;
pub mod scripts;
pub mod steps;

/// Name of the document of a [`TriageRun`] (schema `npgx.triage-run`).
pub const RUN_SCHEMA_NAME: &str = "triage-run";
/// Version of the `npgx.triage-run` document of a [`TriageRun`] (`triage run` and `bisect`; 2:
/// `bisect.nodes`, the FX node search).
pub const RUN_SCHEMA_VERSION: u32 = 2;

/// What `triage run` produced: the run (scripts, steps) and the analysis of its tree.
#[derive(Debug, Clone, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TriageRun {
    pub run: runner::RunSummary,
    pub analysis: analyze::TriageAnalysis,
    /// `triage bisect` / `run --bisect`: the option search after the ladder.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bisect: Option<bisect::Bisection>,
}

impl TriageRun {
    /// Where `triage_report.md` goes.
    pub fn report_path(&self) -> PathBuf {
        self.run.root.join(layout::REPORT_FILE)
    }

    /// Writes the rendered hand-off (`report::triage::run_handoff`) into the run's tree:
    /// `triage_report.md` and, after an FX node search, `bisect/nodes.json`.
    pub fn write_handoff(&self, report: &str, nodes: Option<&str>) -> anyhow::Result<()> {
        crate::output::write(&self.report_path(), report.as_bytes())?;
        if let Some(text) = nodes {
            let path = self
                .run
                .root
                .join(layout::BISECT_DIR)
                .join(format!("{}.json", nodes::NODES_DIR));
            crate::output::write(&path, text.as_bytes())?;
        }
        Ok(())
    }

    /// 0 all steps passed, 1 a step failed, 130 interrupted.
    pub fn exit_code(&self) -> u8 {
        let bisect_interrupted = self
            .bisect
            .as_ref()
            .is_some_and(|b| b.outcome == bisect::Outcome::Interrupted);
        if self.run.interrupted || bisect_interrupted {
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

/// `triage run`: generates the step scripts, runs the ladder and analyses the tree; with
/// `bisect`, then searches the npugraph_ex option behind a step-5-only failure or difference.
pub fn run(
    cfg: &runner::RunConfig,
    bisect: Option<bisect::BisectConfig>,
    progress: &mut dyn runner::Progress,
) -> anyhow::Result<TriageRun> {
    let stop = runner::interrupt_flag()?;
    let run = runner::run(cfg, &stop, progress)?;
    let analysis = analyze::analyze(&run.root)?;
    let bisect = match bisect {
        Some(b) if !run.interrupted => {
            let source = std::fs::read_to_string(&cfg.script).map_err(|e| {
                anyhow::Error::new(e).context(crate::error::CannotRead::new(&cfg.script))
            })?;
            let template = cfg
                .template
                .clone()
                .unwrap_or_else(runner::default_template);
            let launch = bisect::Launch {
                script: &cfg.script,
                template: &template,
                args: &cfg.args,
                timeout: cfg.timeout,
                seed: cfg.seed,
                capture: cfg.compare_outputs,
                stop: &stop,
            };
            Some(bisect::run(
                &run.root,
                &source,
                &run.plan.call,
                &analysis,
                &launch,
                b,
                progress,
            )?)
        }
        _ => None,
    };
    Ok(TriageRun {
        run,
        analysis,
        bisect,
    })
}
