//! Safe spelling of user-derived text in generated Python and in file names.
//!
//! Op names come from graphs and logs and contain `/`, `.`, quotes, backslashes and, in
//! principle, anything else. Generated scripts never splice such a name into code: every one
//! goes through [`py_str`], which yields a double-quoted Python literal that evaluates back to
//! the exact same string. File names go through [`file_stem`], which keeps a readable,
//! portable part and never produces a path separator, `..` or a leading dot.

use std::fmt::Write as _;

/// A Python string literal (double-quoted, ASCII only) that evaluates to `s`.
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// `Some(x)` as a Python literal string, `None` as `None`.
pub fn py_opt_str(s: Option<&str>) -> String {
    s.map_or_else(|| "None".to_string(), py_str)
}

/// Text safe inside a `#` comment line: control characters (which would end the comment)
/// are replaced by `?`.
pub fn comment(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

/// Longest stem kept from a name before a hash suffix is added.
const MAX_STEM: usize = 80;

/// A file-name stem for `name`: ASCII letters, digits, `_` and `-` kept, everything else `_`.
/// Long names are cut and get an 8-hex-digit FNV-1a hash of the full name so that two long
/// names with the same prefix do not collide. Never empty, never starts with `.` or `-`.
pub fn file_stem(name: &str) -> String {
    let mut s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if s.starts_with('-') {
        s.insert(0, '_');
    }
    if s.is_empty() {
        s.push_str("op");
    }
    if s.len() > MAX_STEM {
        s.truncate(MAX_STEM);
        let _ = write!(s, "_{:08x}", fnv1a(name));
    }
    s
}

fn fnv1a(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_and_escapes() {
        assert_eq!(py_str(r#"a/b.c"d'e\f"#), r#""a/b.c\"d'e\\f""#);
        assert_eq!(
            py_str("x\ny\u{7f}é€😀"),
            "\"x\\ny\\x7f\\xe9\\u20ac\\U0001f600\""
        );
        assert_eq!(py_opt_str(None), "None");
    }

    #[test]
    fn file_stems_are_portable() {
        assert_eq!(file_stem("layer.0/attn/Add_1"), "layer_0_attn_Add_1");
        assert_eq!(file_stem("../x"), "___x");
        assert_eq!(file_stem(""), "op");
        assert_eq!(file_stem("-rf"), "_-rf");
        let long = "a".repeat(200);
        let s = file_stem(&long);
        assert_eq!(s.len(), MAX_STEM + 9);
        assert_ne!(s, file_stem(&"a".repeat(201)));
    }
}
