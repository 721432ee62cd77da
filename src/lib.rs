//! npgx: find out why a PyTorch graph-mode model on an Ascend NPU crashes, computes wrong numbers
//! or runs slow.
//!
//! Data flows one way: input files → [`npgx_parsers`] (pure grammars and decoders) → records
//! produced by an engine module (`dump`, …) → [`report`] renderers. Engines never print; the
//! [`cli`] layer parses arguments, calls one engine function and hands its result to a renderer.

pub mod cancel;
pub mod cli;
pub mod compare;
pub mod config;
pub mod dump;
pub mod envelope;
pub mod error;
pub mod fx;
pub mod incident;
pub mod mcp;
pub mod merge;
pub mod output;
pub mod plog;
pub mod process;
pub mod report;
pub mod repro;
pub mod scan;
pub mod schema;
pub mod shard;
pub mod simd;
pub mod source_map;
pub mod tools;
pub mod triage;
pub mod walk;
