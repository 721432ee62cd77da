//! Ascend C kernel assertions: the line a kernel prints through the device's printf buffer when
//! one of its own checks fails (``[ASSERT] … FILE:LINE: Assertion `CONDITION' MESSAGE``), the
//! root-cause hint after a device fault's records (spec plog-and-errors.md §2). One grammar for
//! the causal engine (a candidate of its own shape), `aicore` (a fact of the error) and the
//! remedy that quotes it.

use serde::{Deserialize, Serialize};

/// The tag Ascend C prints before a failed assertion of a kernel.
const ASSERT_TAG: &str = "[ASSERT]";

/// The text after the `[ASSERT]` tag of a message, when it has one.
pub fn assert_text(msg: &str) -> Option<&str> {
    msg.find(ASSERT_TAG).map(|at| &msg[at + ASSERT_TAG.len()..])
}

/// Whether a message is an Ascend C kernel assertion.
pub fn is_kernel_assert(msg: &str) -> bool {
    assert_text(msg).is_some()
}

/// An assertion of the kernel's own code that failed on the device, as Ascend C prints it
/// through the device's printf buffer (``[ASSERT] [CANN_VERSION : …][TimeStamp : …]
/// FILE:LINE: Assertion `CONDITION' MESSAGE``): the source line of the check and what it says
/// about the inputs (`Index 100000000 out of range[0 655360)!`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct KernelAssert {
    /// The source file of the check, as printed (often the operator's header in the CANN
    /// installation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_file: Option<String>,
    /// Its line in that file (`line` is kept for the log line of every fact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_line: Option<u32>,
    /// The asserted condition, without its quotes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// The kernel's message after the condition (or everything after the tag when the line has
    /// no `Assertion` part).
    pub message: String,
}

/// The assertion a message holds: after its `[ASSERT]` tag, the bracketed groups Ascend C prints
/// first (`[CANN_VERSION : 7.8][TimeStamp : 0]`) skipped, then ``FILE:LINE: Assertion
/// `CONDITION' MESSAGE``; a text of another shape is kept whole as the message. `None` without
/// the tag or with nothing after it.
///
/// ```
/// let a = npgx_parsers::kernel_assert::parse("[ASSERT] /k.h:9: Assertion `i < n' bad i").unwrap();
/// assert_eq!((a.source_line, a.condition.as_deref(), a.message.as_str()), (Some(9), Some("i < n"), "bad i"));
/// ```
pub fn parse(msg: &str) -> Option<KernelAssert> {
    let mut rest = assert_text(msg)?.trim_start();
    while let Some(group) = rest.strip_prefix('[') {
        match group.find(']') {
            Some(end) => rest = group[end + 1..].trim_start(),
            None => break,
        }
    }
    let rest = rest.trim();
    if rest.is_empty() {
        return None;
    }
    let whole = KernelAssert {
        message: rest.to_owned(),
        ..KernelAssert::default()
    };
    let Some(at) = crate::needles::find(rest, ": Assertion `") else {
        return Some(whole);
    };
    // FILE:LINE before it (a path may hold colons; the line number is after the last one).
    let Some((file, line)) = rest[..at].rsplit_once(':') else {
        return Some(whole);
    };
    let (file, Ok(line)) = (file.trim(), line.trim().parse::<u32>()) else {
        return Some(whole);
    };
    if file.is_empty() {
        return Some(whole);
    }
    let after = &rest[at + ": Assertion `".len()..];
    // The condition ends at the first quote before a space (a message may hold apostrophes; a
    // condition with a character literal such as `' '` is cut there), or at a quote that ends
    // the line.
    let end = after
        .find("' ")
        .or_else(|| after.strip_suffix('\'').map(str::len));
    let (condition, message) = match end {
        Some(q) => (Some(after[..q].to_owned()), after[q + 1..].trim()),
        None => (None, after.trim()),
    };
    Some(KernelAssert {
        source_file: Some(file.to_owned()),
        source_line: Some(line),
        condition,
        message: message.to_owned(),
    })
}
