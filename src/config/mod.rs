//! `dump_config.json` (the `"dump"` object of `acl.json`): presets that write correct configs,
//! and a validator that applies CANN's own rules, in CANN's order, with CANN's codes and texts.
//!
//! The validator mirrors adump's `DumpConfigConverter` (`dump-data.md` §4.2): type checks, then
//! enumeration values, then constraints. CANN stops at the first problem; npgx reports every
//! problem at once, in the order CANN would meet them. It still skips what CANN skips *because of
//! the configuration* — an exception `dump_scene` ends the checks after the scene rules, and
//! `dump_debug: on` ends them after the `dump_path` and overflow rules — and it skips a rule whose
//! input is itself already reported invalid (each skip is listed in [`CheckReport::notes`]).
//!
//! Engines here return records; `report::config` renders them.

pub mod cann;
pub mod check;
pub mod graph;
pub mod line;
pub mod plan;
pub mod preset;

use serde::Serialize;

pub use cann::Code;

/// How bad a finding is. Errors make the config invalid (exit 1); warnings do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

/// Who defines the rule: CANN itself (adump would reject the file), or npgx (the file would be
/// accepted but probably not do what was meant).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    Cann,
    Npgx,
}

/// One finding about the config.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Problem {
    pub severity: Severity,
    pub source: Source,
    /// `EP0001`…`EP0005` for CANN rules; a short slug for npgx rules (`unknown-key`,
    /// `op-not-in-graph`, `fused-op-name`, `hcom-in-watcher`, `model-not-in-graph`).
    pub code: String,
    /// JSON path inside the `"dump"` object, CANN style: `dump_list[0].watcher_nodes`,
    /// `dump_stats[2]`, `dump_step[1]`; empty for the file as a whole.
    pub path: String,
    /// The adump function that reports it (the `[<func>]` of the log line); `None` for npgx rules.
    pub function: Option<&'static str>,
    /// The message: CANN's exact text for CANN rules.
    pub message: String,
    /// One line telling how to fix it.
    pub fix: String,
    /// 1-based line and column of the item in the file (for a missing item: of the object that
    /// lacks it); the syntax error's position for EP0004.
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Problem {
    /// The line as adump writes it to the CANN log: `[<func>] <message>`.
    pub fn log_line(&self) -> Option<String> {
        self.function.map(|f| format!("[{f}] {}", self.message))
    }
}

/// A [`Problem`] as the `check` document writes it: its fields, then `log_line`, the line CANN
/// writes to its log (`null` for npgx's own rules).
#[derive(Serialize, schemars::JsonSchema)]
pub struct ProblemOut<'a> {
    #[serde(flatten)]
    pub problem: &'a Problem,
    pub log_line: Option<String>,
}

fn with_log_lines<S: serde::Serializer>(problems: &[Problem], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(problems.iter().map(|problem| ProblemOut {
        problem,
        log_line: problem.log_line(),
    }))
}

/// What CANN would do with a valid config (adump `NeedDump` / `ConvertDumpType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum DumpType {
    /// Normal tensor dump (model, single-op or watcher).
    Operator,
    /// `dump_debug: on`.
    OpOverflow,
    /// `lite_exception`, `aic_err_brief_dump`.
    ArgsException,
    /// `aic_err_norm_dump`.
    Exception,
    /// `aic_err_detail_dump`.
    AicErrDetailDump,
}

/// What an [`DumpType::Operator`] dump writes: adump has one dump type for the model and single-op
/// dumps and the watcher scene, of tensors or of statistics; this says which.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OperatorDump {
    /// `dump_data: tensor` (the default): the tensors of `mode` (`input`, `output` or `all`).
    Tensors { mode: String },
    /// `dump_data: stats`: per op execution one CSV row per tensor of `mode` with these
    /// statistics (`dump_stats`, by default the first six), no tensor data.
    Stats { mode: String, stats: Vec<String> },
    /// `dump_scene: watcher`: after each op of `layer`, the outputs of the `watcher_nodes`.
    Watcher,
}

/// A graph dump used by `--graph`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GraphSummary {
    pub file: String,
    pub graphs: usize,
    pub ops: usize,
}

/// Everything `dump-config check` found.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct CheckReport {
    /// The config file as given.
    pub file: String,
    /// No errors (warnings allowed).
    pub valid: bool,
    pub errors: usize,
    pub warnings: usize,
    /// Whether CANN would dump anything (`None` when the config is invalid).
    pub dump_enabled: Option<bool>,
    /// The kind of dump CANN would run (`None` when invalid or nothing is dumped).
    pub dump_type: Option<DumpType>,
    /// What an `OPERATOR` dump writes (`None` for the other dump types).
    pub operator_dump: Option<OperatorDump>,
    /// Whether `dump_path` was checked on this machine's filesystem.
    pub filesystem_checked: bool,
    pub graphs: Vec<GraphSummary>,
    /// Every problem, each written with its [`Problem::log_line`] ([`ProblemOut`]).
    #[serde(serialize_with = "with_log_lines")]
    #[schemars(with = "Vec<ProblemOut<'static>>")]
    pub problems: Vec<Problem>,
    /// Checks that were skipped and why, and other context.
    pub notes: Vec<String>,
}

impl CheckReport {
    pub(crate) fn finish(mut self) -> Self {
        // Two rules can reach the same verdict on the same item (an empty `model_name` is both
        // "empty while dump_op_switch is off" and "empty while opname_range needs it"): CANN
        // would print it once before stopping, so report it once.
        let mut seen = std::collections::HashSet::new();
        self.problems
            .retain(|p| seen.insert((p.code.clone(), p.path.clone(), p.message.clone())));
        self.errors = self
            .problems
            .iter()
            .filter(|p| p.severity == Severity::Error)
            .count();
        self.warnings = self.problems.len() - self.errors;
        self.valid = self.errors == 0;
        if !self.valid {
            self.dump_enabled = None;
            self.dump_type = None;
            self.operator_dump = None;
        }
        self
    }
}

/// Name of the `npgx.dump-config` JSON documents (`check`, `new` and `plan` write one each).
pub const SCHEMA_NAME: &str = "dump-config";

/// Version of the `dump-config` JSON documents (`docs/dump-config.md`, envelope `docs/json.md`).
pub const SCHEMA_VERSION: u32 = 2;

/// Checks the config file at `path` and, with `graphs`, every layer and watcher name against
/// those GE graph dumps. Fails only when a file cannot be read (or a graph cannot be parsed);
/// every problem with the config itself is a [`Problem`] of the report.
pub fn check_file(
    path: &std::path::Path,
    graphs: &[std::path::PathBuf],
    options: &check::CheckOptions,
) -> anyhow::Result<CheckReport> {
    use anyhow::Context as _;
    let bytes = std::fs::read(path).with_context(|| crate::error::CannotRead::new(path))?;
    let mut report = check::check(&bytes, &path.display().to_string(), options);
    if graphs.is_empty() {
        return Ok(report);
    }
    let mut models = Vec::with_capacity(graphs.len());
    for g in graphs {
        let text = std::fs::read(g).with_context(|| crate::error::CannotRead::new(g))?;
        let model = npgx_parsers::ge_graph::parse(&text)
            .with_context(|| format!("{} is not a readable GE graph dump", g.display()))?;
        report.graphs.push(GraphSummary {
            file: g.display().to_string(),
            graphs: model.graphs.len(),
            ops: model.ops().count(),
        });
        models.push(model);
    }
    report.problems.extend(graph::check_names(&bytes, &models));
    check::locate_problems(&mut report.problems, &bytes);
    Ok(report.finish())
}

/// A config written from a preset, already checked with CANN's rules.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct NewConfig {
    pub preset: &'static str,
    /// Where it was written (`None`: not written, the caller prints it).
    pub written: Option<String>,
    /// The `dump_config.json` text.
    #[serde(skip)]
    pub text: String,
    /// The same, as JSON.
    pub config: serde_json::Value,
    /// `--torchair`: the Python lines that point a torchair `CompilerConfig` at the written file
    /// (at `dump_config.json` when it was not written).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torchair: Option<String>,
    /// `--line` / `--fx-node`: the FX nodes selected and the GE operators dumped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fx: Option<line::Selection>,
}

impl NewConfig {
    /// The same config with its [`NewConfig::torchair`] lines.
    pub fn with_torchair(mut self) -> NewConfig {
        let path = self.written.as_deref().unwrap_or("dump_config.json");
        self.torchair = Some(preset::torchair_lines(path));
        self
    }
}

/// Writes a config from `preset` — never one that `check` rejects — to `output` when given
/// (refusing to replace an existing file unless `force`; `force` without `output` is an error),
/// else returns it for printing.
pub fn new_config(
    preset: preset::Preset,
    options: &preset::PresetOptions,
    output: Option<&std::path::Path>,
    force: bool,
) -> anyhow::Result<NewConfig> {
    if force && output.is_none() {
        anyhow::bail!("force needs an output file");
    }
    let text = preset::render(preset, options)?;
    ensure_valid(&text)?;
    let config = serde_json::from_str(&text)?;
    let written = match output {
        Some(path) => {
            write_new_file(path, &text, force)?;
            Some(
                std::path::absolute(path)
                    .unwrap_or_else(|_| path.to_path_buf())
                    .display()
                    .to_string(),
            )
        }
        None => None,
    };
    Ok(NewConfig {
        preset: preset.name(),
        written,
        text,
        config,
        torchair: None,
        fx: None,
    })
}

/// `new` for the operators of a source line or FX node (`from`: the graph texts and what to
/// select, [`line::select_in`]): one `dump_list` entry per graph in place of `model_name` and
/// `layer`, the selection in the document's `fx`. Without `from`, [`new_config`].
pub fn new_config_from(
    preset: preset::Preset,
    mut options: preset::PresetOptions,
    from: Option<(&[std::path::PathBuf], &line::Selector)>,
    output: Option<&std::path::Path>,
    force: bool,
) -> anyhow::Result<NewConfig> {
    let Some((graphs, sel)) = from else {
        return new_config(preset, &options, output, force);
    };
    if options.model_name.is_some() || !options.layers.is_empty() {
        anyhow::bail!("a source line or FX node selects the model and its layers itself: no model name or layer with it");
    }
    let (selection, models) = line::select_in(graphs, sel)?;
    options.models = models;
    let mut made = new_config(preset, &options, output, force)?;
    made.fx = Some(selection);
    Ok(made)
}

/// Runs a generated config through the `check` rules (without the filesystem checks): an error
/// listing CANN's objections when it would be rejected.
fn ensure_valid(text: &str) -> anyhow::Result<()> {
    let verdict = check::check(
        text.as_bytes(),
        "<generated>",
        &check::CheckOptions { filesystem: false },
    );
    if !verdict.valid {
        let reasons: Vec<String> = verdict
            .problems
            .iter()
            .map(|p| format!("{} {}: {}", p.code, p.path, p.message))
            .collect();
        anyhow::bail!(
            "these options give a config CANN rejects:\n  {}",
            reasons.join("\n  ")
        );
    }
    Ok(())
}

fn write_new_file(path: &std::path::Path, text: &str, force: bool) -> anyhow::Result<()> {
    if force {
        crate::output::write(path, text.as_bytes())
    } else {
        crate::output::write_new(path, text.as_bytes())
    }
}
