//! `dump-config new`: correct `dump_config.json` files for the common dump scenarios.
//!
//! Each preset writes only the keys its scenario takes (CANN rejects extra keys in the watcher
//! and exception scenes), with explicit values for the options that matter, so the file reads
//! as documentation of what will be dumped.

use serde::Serialize;

use super::check::{default_dump_stats, DUMP_STATS};

/// The scenarios `new` can write ([`Preset::about`] says what each dumps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    Model,
    Op,
    Overflow,
    Watcher,
    Stats,
    LiteException,
    AicErrBriefDump,
    AicErrNormDump,
    AicErrDetailDump,
}

impl Preset {
    pub const ALL: [Preset; 9] = [
        Preset::Model,
        Preset::Op,
        Preset::Overflow,
        Preset::Watcher,
        Preset::Stats,
        Preset::LiteException,
        Preset::AicErrBriefDump,
        Preset::AicErrNormDump,
        Preset::AicErrDetailDump,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Preset::Model => "model",
            Preset::Op => "op",
            Preset::Overflow => "overflow",
            Preset::Watcher => "watcher",
            Preset::Stats => "stats",
            Preset::LiteException => "lite_exception",
            Preset::AicErrBriefDump => "aic_err_brief_dump",
            Preset::AicErrNormDump => "aic_err_norm_dump",
            Preset::AicErrDetailDump => "aic_err_detail_dump",
        }
    }

    /// One line on what the preset dumps (the `--help` text of its value).
    pub fn about(self) -> &'static str {
        match self {
            Preset::Model => "Graph (model) dump: dump_list with model_name and optional layer list",
            Preset::Op => "Single-op / aclnn dump: dump_op_switch on, empty dump_list",
            Preset::Overflow => {
                "Overflow detection: dump_debug on (the overflowing ops plus Opdebug files)"
            }
            Preset::Watcher => {
                "Memory-overwrite watcher: after each op in layer, check the outputs of watcher_nodes"
            }
            Preset::Stats => "Statistics instead of tensors: dump_data stats with a dump_stats list",
            Preset::LiteException => "Exception scene: args of the failing kernel",
            Preset::AicErrBriefDump => "Exception scene: args of the failing kernel",
            Preset::AicErrNormDump => "Exception scene: inputs and outputs of the failing operator",
            Preset::AicErrDetailDump => "Exception scene: AI Core error detail plus coredump",
        }
    }

    fn exception_scene(self) -> Option<&'static str> {
        match self {
            Preset::LiteException
            | Preset::AicErrBriefDump
            | Preset::AicErrNormDump
            | Preset::AicErrDetailDump => Some(self.name()),
            _ => None,
        }
    }

    /// The options (by their `new` flag name) that this preset takes.
    pub fn options(self) -> &'static [&'static str] {
        match self {
            Preset::Model => &[
                "dump-path",
                "model-name",
                "layer",
                "line",
                "dump-mode",
                "dump-step",
                "dump-level",
            ],
            Preset::Op => &["dump-path", "dump-mode", "dump-step", "dump-level"],
            Preset::Overflow => &["dump-path"],
            Preset::Watcher => &["dump-path", "layer", "watch"],
            Preset::Stats => &[
                "dump-path",
                "model-name",
                "layer",
                "line",
                "dump-mode",
                "dump-step",
                "dump-level",
                "stats",
                "single-op",
            ],
            _ => &["dump-path"],
        }
    }
}

/// `dump_mode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpMode {
    Input,
    Output,
    All,
}

impl DumpMode {
    pub const ALL: [DumpMode; 3] = [DumpMode::Input, DumpMode::Output, DumpMode::All];

    /// The value as CANN spells it.
    pub fn name(self) -> &'static str {
        match self {
            DumpMode::Input => "input",
            DumpMode::Output => "output",
            DumpMode::All => "all",
        }
    }
}

/// `dump_level` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DumpLevel {
    Op,
    Kernel,
    All,
}

impl DumpLevel {
    pub const ALL: [DumpLevel; 3] = [DumpLevel::Op, DumpLevel::Kernel, DumpLevel::All];

    /// The value as CANN spells it.
    pub fn name(self) -> &'static str {
        match self {
            DumpLevel::Op => "op",
            DumpLevel::Kernel => "kernel",
            DumpLevel::All => "all",
        }
    }
}

/// The options of `new`; unset options keep CANN's defaults.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PresetOptions {
    pub dump_path: Option<String>,
    pub model_name: Option<String>,
    pub layers: Vec<String>,
    pub watch: Vec<String>,
    pub dump_mode: Option<DumpMode>,
    pub dump_step: Option<String>,
    pub dump_level: Option<DumpLevel>,
    pub stats: Vec<String>,
    pub single_op: bool,
    /// One `dump_list` entry per model with its layers (`--line`/`--fx-node` through the graph
    /// texts), in place of `model_name` and `layer`.
    pub models: Vec<(String, Vec<String>)>,
}

impl PresetOptions {
    /// The `new` flags that are set.
    pub fn given(&self) -> Vec<&'static str> {
        let mut v = Vec::new();
        let mut flag = |set: bool, name| {
            if set {
                v.push(name);
            }
        };
        flag(self.dump_path.is_some(), "dump-path");
        flag(self.model_name.is_some(), "model-name");
        flag(!self.layers.is_empty(), "layer");
        flag(!self.watch.is_empty(), "watch");
        flag(self.dump_mode.is_some(), "dump-mode");
        flag(self.dump_step.is_some(), "dump-step");
        flag(self.dump_level.is_some(), "dump-level");
        flag(!self.stats.is_empty(), "stats");
        flag(self.single_op, "single-op");
        flag(!self.models.is_empty(), "line");
        v
    }
}

/// Why a preset could not be written with these options.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PresetError {
    #[error("--{option} does not apply to the {preset} preset (it takes: {takes})")]
    NotApplicable {
        option: &'static str,
        preset: &'static str,
        takes: String,
    },
    #[error(
        "the watcher preset needs at least one --watch NAME (the op whose output gets overwritten)"
    )]
    WatcherNeedsVictim,
    #[error(
        "--model-name and --layer name a graph dump; --single-op dumps single ops: choose one"
    )]
    SingleOpWithList,
    #[error("--stats {0}: not a statistic (allowed: {allowed})", allowed = DUMP_STATS.join(", "))]
    UnknownStat(String),
    #[error("an empty name was given to --{0}")]
    EmptyName(&'static str),
    #[error("could not serialise the config: {0}")]
    Serialise(String),
}

#[derive(Debug, Serialize)]
struct File {
    dump: Dump,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Dump {
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_scene: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_op_switch: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_debug: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_level: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_step: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_data: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_stats: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dump_list: Option<Vec<Item>>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
struct Item {
    #[serde(skip_serializing_if = "Option::is_none")]
    model_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    layer: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    watcher_nodes: Option<Vec<String>>,
}

/// The default `dump_path` when none is given: the current directory, which always exists.
/// CANN adds `{time}/{device}/…` under it.
pub const DEFAULT_DUMP_PATH: &str = "./";

/// Writes the preset as pretty JSON (with a final newline).
pub fn render(preset: Preset, o: &PresetOptions) -> Result<String, PresetError> {
    for option in o.given() {
        if !preset.options().contains(&option) {
            return Err(PresetError::NotApplicable {
                option,
                preset: preset.name(),
                takes: preset
                    .options()
                    .iter()
                    .map(|f| format!("--{f}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
    }
    for (flag, names) in [("layer", &o.layers), ("watch", &o.watch)] {
        if names.iter().any(|n| n.trim().is_empty()) {
            return Err(PresetError::EmptyName(flag));
        }
    }
    if o.model_name.as_deref().is_some_and(|n| n.trim().is_empty()) {
        return Err(PresetError::EmptyName("model-name"));
    }
    if let Some(bad) = o.stats.iter().find(|s| !DUMP_STATS.contains(&s.as_str())) {
        return Err(PresetError::UnknownStat(bad.clone()));
    }
    let mode = o.dump_mode.map(DumpMode::name);
    let level = o.dump_level.map(DumpLevel::name);
    let path = Some(
        o.dump_path
            .clone()
            .unwrap_or_else(|| DEFAULT_DUMP_PATH.into()),
    );
    let list = || -> Vec<Item> {
        if o.models.is_empty() {
            return vec![Item {
                model_name: o.model_name.clone(),
                layer: (!o.layers.is_empty()).then(|| o.layers.clone()),
                watcher_nodes: None,
            }];
        }
        o.models
            .iter()
            .map(|(model, layers)| Item {
                model_name: Some(model.clone()),
                layer: Some(layers.clone()),
                watcher_nodes: None,
            })
            .collect()
    };
    let mut d = Dump {
        dump_path: None,
        dump_scene: None,
        dump_mode: None,
        dump_op_switch: None,
        dump_debug: None,
        dump_level: None,
        dump_step: None,
        dump_data: None,
        dump_stats: None,
        dump_list: None,
    };
    match preset {
        Preset::Model => {
            d.dump_path = path;
            d.dump_mode = Some(mode.unwrap_or("output"));
            d.dump_level = level;
            d.dump_step = o.dump_step.clone();
            d.dump_list = Some(list());
        }
        Preset::Op => {
            d.dump_path = path;
            d.dump_mode = Some(mode.unwrap_or("output"));
            d.dump_op_switch = Some("on");
            d.dump_level = level;
            d.dump_step = o.dump_step.clone();
            d.dump_list = Some(Vec::new());
        }
        Preset::Overflow => {
            d.dump_path = path;
            d.dump_debug = Some("on");
        }
        Preset::Watcher => {
            if o.watch.is_empty() {
                return Err(PresetError::WatcherNeedsVictim);
            }
            d.dump_path = path;
            d.dump_scene = Some("watcher");
            d.dump_mode = Some("output");
            d.dump_list = Some(vec![Item {
                model_name: None,
                layer: (!o.layers.is_empty()).then(|| o.layers.clone()),
                watcher_nodes: Some(o.watch.clone()),
            }]);
        }
        Preset::Stats => {
            if o.single_op
                && (o.model_name.is_some() || !o.layers.is_empty() || !o.models.is_empty())
            {
                return Err(PresetError::SingleOpWithList);
            }
            d.dump_path = path;
            d.dump_mode = Some(mode.unwrap_or("output"));
            d.dump_level = level;
            d.dump_step = o.dump_step.clone();
            d.dump_data = Some("stats");
            d.dump_stats = Some(if o.stats.is_empty() {
                default_dump_stats()
            } else {
                o.stats.clone()
            });
            if o.single_op {
                d.dump_op_switch = Some("on");
                d.dump_list = Some(Vec::new());
            } else {
                d.dump_list = Some(list());
            }
        }
        Preset::LiteException
        | Preset::AicErrBriefDump
        | Preset::AicErrNormDump
        | Preset::AicErrDetailDump => {
            d.dump_scene = preset.exception_scene();
            d.dump_path = o.dump_path.clone();
        }
    }
    let mut text = serde_json::to_string_pretty(&File { dump: d })
        .map_err(|e| PresetError::Serialise(e.to_string()))?;
    text.push('\n');
    Ok(text)
}

/// The Python lines that make a torchair `CompilerConfig` (GE graph mode) use the file
/// (`triage-and-repro.md` §2.3: `dump_config.enable_dump`, `dump_config.dump_config_path`).
pub fn torchair_lines(config_path: &str) -> String {
    // A JSON string literal is a valid Python string literal for any path.
    let quoted = serde_json::Value::from(config_path).to_string();
    format!(
        "import torch\n\
         import torchair\n\
         \n\
         config = torchair.CompilerConfig()\n\
         config.dump_config.enable_dump = True\n\
         config.dump_config.dump_config_path = {quoted}\n\
         npu_backend = torchair.get_npu_backend(compiler_config=config)\n\
         model = torch.compile(model, backend=npu_backend)\n"
    )
}
