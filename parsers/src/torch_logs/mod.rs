//! PyTorch-side log text: Python tracebacks and the wrapper exceptions whose message carries the
//! real error. The TORCH_LOGS / glog / c10 / launcher line prefixes are [`crate::line_prefix`].
//!
//! What it is for: turning one line of captured stdout/stderr into "what is this line" — the
//! prefixes peeled off ([`prefix`]), then a traceback frame, an exception, a wrapper, a logging
//! line ([`python`]). What it is not for: CANN plog records and CANN error-report blocks (the
//! `plog` and `cann_error` grammars), or deciding which error caused which (the causal engine,
//! [`crate::causal`]).

pub mod python;

pub use python::{
    aclnn_call_failed, backend_compiler_failed, embedded_error, exception_line, frame_line,
    is_chain_separator, is_traceback_start, logging_line, EmbeddedError, ExceptionLine, Frame,
    LoggingLine,
};
