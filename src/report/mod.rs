//! Renderers: turn engine records into tables, JSON, CSV. No scanning or analysis here.
pub mod aicore;
pub mod config;
pub mod dump_compare;
pub mod dump_scan;
pub mod plog;
pub mod repro;
pub mod triage;
