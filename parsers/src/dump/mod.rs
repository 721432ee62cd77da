//! CANN operator dumps: binary dump files (v2, v1, TLV), their names, the directory trees they
//! live in, statistics CSVs, `mapping.csv` and Opdebug overflow payloads.
//!
//! The byte-level reference is `dump-data.md` in the shared specs; each module quotes the part it
//! implements.

pub mod dtype;
pub mod format;
pub mod header;
pub mod layout;
pub mod mapping;
pub mod name;
pub mod opdebug;
pub mod path;
pub mod proto;
pub mod scalar;
pub mod stats_csv;
