//! CANN plogs: the line header, module content prefixes, records with continuation lines, and
//! file names / folder layouts. Console prefixes in front of a record (`[rankN]:`, vLLM, c10) are
//! peeled by [`crate::line_prefix`].
//!
//! Reference: `plog-and-errors.md` §1 in the shared specs. Layering follows its §6:
//! [`record::lines`] (layer 0) → [`header::parse_header`] / [`crate::line_prefix::strip_prefixes`] (layer 1) →
//! [`record::RecordAssembler`] (layer 2) → [`content::parse_content`] and the key/value bag in
//! [`crate::kv`] (layer 3).
//!
//! Typical use on a captured text:
//!
//! ```
//! use npgx_parsers::plog::{parse_records, Level};
//! let text = b"[ERROR] RUNTIME(1365,python3.8):2025-08-06-23:09:35.772.604 [stars_engine.cc:1551]6219 ProcLogicCqReport:[FINAL][FINAL]Task run failed, device_id=3\n";
//! let recs = parse_records(text);
//! assert_eq!(recs[0].level, Level::Error);
//! assert_eq!(recs[0].content().func, Some("ProcLogicCqReport"));
//! ```

pub mod content;
pub mod header;
pub mod path;
pub mod record;

pub use header::{
    parse_header, BoundEnd, Cached, HeaderCache, Level, PlogHeader, PlogTime, CACHED_PREFIXES,
};
pub use record::{lines, parse_records, PlogRecord, RecordAssembler};
