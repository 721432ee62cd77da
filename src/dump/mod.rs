//! Dump-tree I/O, shared by every engine that reads dumps (the scan in [`crate::scan`],
//! `dump-compare`, `dump-convert`, `repro`, the triage's dump steps): [`walk`] finds and
//! classifies the files of a tree, [`list`] turns a file (GE op dump, `.npy`, `.pt`, msprobe
//! tensor) into its tensors and where their bytes are, [`blocks`] reads those bytes (by `pread`,
//! or through the guarded mapping of [`mapped`]), and [`values`] decodes them to numbers in
//! logical order. Nothing here computes statistics or prints.

pub mod blocks;
pub mod list;
pub mod mapped;
pub mod npy;
pub mod order;
pub mod pt;
pub mod records;
pub mod values;
pub mod walk;

pub use records::FileProblem;
