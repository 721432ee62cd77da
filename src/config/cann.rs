//! CANN's own error codes and texts for `dump_config.json` problems.
//!
//! Source: adump's error manager (`hicann/runtime`
//! `src/dfx/adump/adump/common/adump_error_manager.h`) as quoted in `dump-data.md` §4.3. The
//! strings are copied character for character — including the two spaces in
//! [`STEP_NOT_DIGIT`] — so that a user can grep the CANN log for the line npgx predicts.

use serde::Serialize;

/// The EP error codes adump reports for a dump configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Code {
    /// A configuration item is missing, empty or of the wrong JSON type.
    EP0001,
    /// A value is not one of the allowed enumeration values.
    EP0002,
    /// A value is malformed (path, step, blacklist position, range …).
    EP0003,
    /// The file is not valid JSON.
    EP0004,
    /// Two configuration items conflict.
    EP0005,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::EP0001 => "EP0001",
            Code::EP0002 => "EP0002",
            Code::EP0003 => "EP0003",
            Code::EP0004 => "EP0004",
            Code::EP0005 => "EP0005",
        }
    }
}

// EP0001 reasons.
pub const NOT_FOUND: &str = "The configuration item is not found";
pub const VALUE_EMPTY: &str = "The configuration item value is empty";
pub const MUST_BE_STRING: &str = "This configuration item must be of the string type";
pub const MUST_BE_ARRAY: &str = "This configuration item must be of the array type";
pub const MUST_BE_OBJECT: &str = "This configuration item must be of the object type";
pub const MEMBER_MUST_BE_STRING: &str = "The member type of this configuration item must be string";
pub const MEMBER_MUST_BE_OBJECT: &str = "The member type of this configuration item must be object";

// EP0003 reasons.
pub const INVALID_CHARS: &str = "The value contains invalid characters";
pub const PATH_NOT_EXIST: &str = "The path does not exist";
pub const PATH_NO_PERMISSION: &str = "The value is a path without read and write permissions";
pub const PATH_INVALID: &str = "The value is an invalid path";
pub const PATH_NOT_DIRECTORY: &str = "The path is not a directory path";
pub const PATH_TOO_LONG: &str = "The path length exceeds the maximum limit of 512 characters";
pub const STEP_TOO_MANY: &str = "The value exceeds the maximum limit of 100 intervals";
pub const STEP_INVALID_FORMAT: &str = "The value has invalid format, expected format: 5-10";
pub const STEP_NOT_DIGIT: &str =
    "The value contains non-digit characters,  expected format: 1 or 5-10";
pub const STEP_INVALID_RANGE: &str =
    "The value has invalid format, start step must not exceed end step, expected format: 5-10";
pub const BLACKLIST_TOO_LONG: &str = "The value size exceeds the maximum limit of 100";
pub const POS_INVALID_PREFIX: &str = "The value has invalid format, the prefix must be input or output, expected format: inputn or outputn";
pub const POS_INDEX_NOT_DIGIT: &str =
    "The value has invalid format, the index must be a digit, expected format: input1 or output1";
pub const RANGE_INCOMPLETE: &str =
    "The item is incomplete, begin and end must be configured together and non-empty";

/// EP0001: `The content of configuration item <item> in config file <path> is invalid. Reason: <reason>`
pub fn ep0001(item: &str, file: &str, reason: &str) -> String {
    format!(
        "The content of configuration item {item} in config file {file} is invalid. Reason: {reason}"
    )
}

/// EP0002: `Value <v> for configuration item <item> in file <path> is invalid, must be selected from [<opts>].`
pub fn ep0002(value: &str, item: &str, file: &str, options: &[&str]) -> String {
    // adump keeps the options in a std::set: sorted bytewise, joined with '/'.
    let mut sorted = options.to_vec();
    sorted.sort_unstable();
    format!(
        "Value {value} for configuration item {item} in file {file} is invalid, must be selected from [{}].",
        sorted.join("/")
    )
}

/// EP0003: `Value <v> for parameter <item> in config file <path> is invalid. Reason: <reason>`
pub fn ep0003(value: &str, item: &str, file: &str, reason: &str) -> String {
    format!("Value {value} for parameter {item} in config file {file} is invalid. Reason: {reason}")
}

/// EP0004: `Parse failed: <reason>`
pub fn ep0004(reason: &str) -> String {
    format!("Parse failed: {reason}")
}

/// EP0005: `When configuration item <cond> is set to <v>, configuration item <item> cannot be configured`
pub fn ep0005_cannot_set_when(item: &str, cond: &str, cond_value: &str) -> String {
    format!(
        "When configuration item {cond} is set to {cond_value}, configuration item {item} cannot be configured"
    )
}

/// EP0005: `When configuration item <cond> is not set to <v>, configuration item <item> cannot be configured`
pub fn ep0005_cannot_set_unless(item: &str, cond: &str, cond_value: &str) -> String {
    format!(
        "When configuration item {cond} is not set to {cond_value}, configuration item {item} cannot be configured"
    )
}

/// EP0005: `When configuration item <cond> is set to <v>, configuration item <item> cannot be set to <value>`
pub fn ep0005_value_conflict(item: &str, value: &str, cond: &str, cond_value: &str) -> String {
    format!(
        "When configuration item {cond} is set to {cond_value}, configuration item {item} cannot be set to {value}"
    )
}
