//! Pure parsers for the artefacts an Ascend graph-mode run leaves behind.
//!
//! Every function here goes from bytes or text to typed records: no filesystem, no printing, no
//! global state, no panics on any input. The application crate (`npgx`) owns I/O, parallelism and
//! rendering; this crate owns the grammars, so each can be unit-tested and fuzzed on its own.
//!
//! What it is not for: deciding what a record *means* for a user (which error was first, which
//! operator is to blame). That analysis lives in the application.

pub mod aicore;
pub mod cann_error;
pub mod dump;
pub mod ge_graph;
pub mod pickle;
pub mod plog;
pub mod pyedit;
pub mod torch_logs;
