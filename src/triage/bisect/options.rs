//! The options `triage bisect` flips: the catalogue of npugraph_ex `CompilerConfig` knobs, the
//! values in force in step 5's script, and the single-flip variants planned from them. The
//! runner in the parent module starts the variants.

use npgx_parsers::pyedit::OptionsSource;

use super::{Flip, Mode, Skipped};
use crate::triage::route::Route;

/// One npugraph_ex option the bisection can flip.
pub(super) struct Knob {
    pub(super) key: &'static str,
    /// npugraph_ex's default, as a Python literal.
    default: &'static str,
    kind: Kind,
    /// What a difference with this flip implicates.
    pub(super) mechanism: &'static str,
    /// Where the evidence goes when this flip is implicated in a failure.
    pub(super) route: Route,
}

enum Kind {
    /// A bool: flipped away from the value in force.
    Flip,
    /// Set back to the default, only when the script set it to something else.
    BackToDefault,
    /// Set to this value (failure path only: capture errors from unsafe calls).
    SetForFailures(&'static str),
}

/// The catalogue, in the order the variants run (spec `triage-and-repro.md` §2.2).
const KNOBS: &[Knob] = &[
    Knob {
        key: "force_recapture",
        default: "False",
        kind: Kind::Flip,
        mechanism: "re-capturing before every replay changes it: input/output memory handling around capture and replay is implicated, not the capture itself",
        route: Route::RuntimeError,
    },
    Knob {
        key: "clone_output",
        default: "False",
        kind: Kind::Flip,
        mechanism: "outputs are overwritten by a later replay (output memory reuse) is implicated",
        route: Route::RuntimeError,
    },
    Knob {
        key: "clone_input",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the copy of inputs into the captured buffers is implicated",
        route: Route::RuntimeError,
    },
    Knob {
        key: "reuse_graph_pool_in_same_fx",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the memory pool shared by the graphs of one FX graph is implicated",
        route: Route::RuntimeError,
    },
    Knob {
        key: "remove_noop_ops",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the no-op removal pass is implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "remove_cat_ops",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the cat elimination pass is implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "inplace_pass",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the reinplace pass is implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "input_inplace_pass",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the reinplace pass on graph inputs is implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "pattern_fusion_pass",
        default: "True",
        kind: Kind::Flip,
        mechanism: "the ATen pattern fusions are implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "frozen_parameter",
        default: "False",
        kind: Kind::BackToDefault,
        mechanism: "treating parameter addresses as fixed is implicated",
        route: Route::RuntimeError,
    },
    Knob {
        key: "static_kernel_compile",
        default: "False",
        kind: Kind::BackToDefault,
        mechanism: "static kernel compilation is implicated",
        route: Route::CompileError,
    },
    Knob {
        key: "capture_error_mode",
        default: "\"global\"",
        kind: Kind::SetForFailures("\"relaxed\""),
        mechanism: "an unsafe call during capture is implicated",
        route: Route::CompileError,
    },
];

/// The values in force in step 5: the script's literal options, else the defaults.
pub(super) struct InForce {
    entries: Vec<(String, String)>,
    /// Some keys are unknown (an options expression or a `**` spread).
    pub(super) partial: bool,
}

impl InForce {
    pub(super) fn of(source: OptionsSource) -> InForce {
        match source {
            OptionsSource::Absent => InForce {
                entries: Vec::new(),
                partial: false,
            },
            OptionsSource::Literal { entries, splat } => InForce {
                entries,
                partial: splat,
            },
            OptionsSource::Expression(_) => InForce {
                entries: Vec::new(),
                partial: true,
            },
        }
    }

    fn user_value(&self, key: &str) -> Option<&str> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.trim())
    }
}

/// The single-flip variants for `mode`, and the keys skipped with the reason.
pub(super) fn plan_flips(
    mode: Mode,
    in_force: &InForce,
    supported: Option<&[String]>,
) -> (Vec<Flip>, Vec<Skipped>) {
    let mut flips = Vec::new();
    let mut skipped = Vec::new();
    for k in KNOBS {
        let user = in_force.user_value(k.key);
        let current = user.unwrap_or(k.default).to_string();
        let value = match k.kind {
            Kind::Flip => match current.as_str() {
                "True" => "False",
                "False" => "True",
                other => {
                    skipped.push(Skipped {
                        key: k.key.into(),
                        reason: format!(
                            "the script sets it to `{other}`, not a literal True/False"
                        ),
                    });
                    continue;
                }
            },
            Kind::BackToDefault => match user {
                Some(v) if v != k.default => k.default,
                _ => continue,
            },
            Kind::SetForFailures(v) => {
                if mode != Mode::Failure || current == v {
                    continue;
                }
                v
            }
        };
        if let Some(list) = supported {
            if !list.iter().any(|s| s == k.key) {
                skipped.push(Skipped {
                    key: k.key.into(),
                    reason:
                        "the installed npugraph_ex rejects it (no such CompilerConfig attribute)"
                            .into(),
                });
                continue;
            }
        }
        flips.push(Flip {
            key: k.key.into(),
            value: value.into(),
            in_force: current,
        });
    }
    (flips, skipped)
}

pub(super) fn knob(key: &str) -> Option<&'static Knob> {
    KNOBS.iter().find(|k| k.key == key)
}

pub(super) fn dir_name(flips: &[Flip]) -> String {
    flips
        .iter()
        .map(|f| format!("{}-{}", f.key, f.value.trim_matches('"')))
        .collect::<Vec<_>>()
        .join("+")
}
