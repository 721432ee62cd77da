//! Layered triage of `torch.compile` failures on Ascend (npugraph_ex backend).
//!
//! The ladder (spec `triage-and-repro.md` §1.1): eager → `backend="eager"` →
//! `backend="aot_eager"` → npugraph_ex with `force_eager` → the original npugraph_ex call.
//! `run` generates the five step scripts ([`scripts`]), runs them ([`runner`]) and analyses the
//! tree; `analyze` does the analysis on an existing tree ([`analyze`]); `classify` reads any
//! captured log ([`classify`]). The analysis anchors on the first causal error (the shared engine
//! `npgx_parsers::causal`) and routes it ([`route`]).
//!
//! Engines here return records; `report::triage` renders them.

pub mod analyze;
pub mod classify;
pub mod compare;
pub mod dumps;
pub mod layout;
pub mod route;
pub mod runner;
pub mod scripts;
