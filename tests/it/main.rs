//! Integration tests: run the `npgx` binary on real samples (`../shared/samples/`) and on
//! fixtures written by the independent Python writers (`target/fixtures/`, made by
//! `scripts/test.sh`), and assert exact fields.

mod aicore;
mod cli;
mod cluster;
mod common;
mod dump_compare;
mod dump_config;
mod dump_plan;
mod dump_scan;
mod ge_graph;
mod json;
mod mcp;
#[cfg(feature = "tables")]
mod merge;
mod msprobe;
mod plog;
mod remedies;
mod report;
mod repro;
mod schema;
mod skills;
mod source_map;
mod triage;
mod triage_nodes;
mod triage_ranks;
mod triage_slow;
mod triage_steps;
mod truncation;
