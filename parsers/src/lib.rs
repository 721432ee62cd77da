//! Pure parsers for the artefacts an Ascend graph-mode run leaves behind.
//!
//! Every function here goes from bytes or text to typed records: no filesystem, no printing, no
//! global state, no panics on any input. The application crate (`npgx`) owns I/O, parallelism and
//! rendering; this crate owns the grammars, so each can be unit-tested and fuzzed on its own.
//!
//! What it is not for: file I/O, rendering and routing decisions. The one piece of judgement kept
//! here is [`causal`] — which error in a text came first — because `plog`, `aicore` and `triage`
//! must agree on it and it is a pure function of the text.

pub mod aicore;
pub mod cann_error;
pub mod causal;
pub mod compiler_diag;
pub mod dump;
pub mod dump_config;
pub mod fx_graph;
pub mod ge_graph;
pub mod kernel_assert;
pub mod knowledge;
pub mod kv;
pub mod line_origin;
pub mod line_prefix;
pub mod msprobe;
pub mod needles;
pub mod pickle;
pub mod plog;
pub mod printed;
pub mod pyedit;
pub mod shell;
pub mod torch_logs;
pub mod versions;
