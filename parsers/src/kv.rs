//! The key/value bag over a log message (spec §6.4): case-insensitive, order-free,
//! `key=value` and `key:value` alike, spaces allowed around the separator.
//!
//! ```text
//! pair  = key ws* ("=" | ":") ws* value
//! key   = matched case-insensitively at a word start (`stream_id` does not match `report_stream_id`)
//! value = text up to "," or "[FUNC:" or end of message, trimmed, one trailing "." dropped
//! ```
//!
//! Typed getters take the leading token of the value, so `stream_id=117 retCode=0x91` (no comma,
//! a 2021 build) still gives `117`, and `timeout:1836.` gives `1836`.

use crate::needles;

/// A message prepared for key lookups.
#[derive(Debug, Clone)]
pub struct KvBag<'a> {
    text: &'a str,
    lower: String,
}

impl<'a> KvBag<'a> {
    /// Wraps a message. A trailing CANN item suffix (`[FUNC:…][FILE:…][LINE:…]`) ends values.
    pub fn new(text: &'a str) -> KvBag<'a> {
        KvBag {
            text,
            lower: text.to_ascii_lowercase(),
        }
    }

    /// The raw value of the first occurrence of `key` (lower-case), or `None`. The value may be
    /// empty (`fault op_name=`).
    pub fn raw(&self, key: &str) -> Option<&'a str> {
        self.raw_at(key).map(|(v, _)| v)
    }

    /// Like [`KvBag::raw`], also returning the byte offset of the key.
    pub fn raw_at(&self, key: &str) -> Option<(&'a str, usize)> {
        let mut from = 0;
        while let Some(off) = needles::find(&self.lower[from..], key) {
            let at = from + off;
            from = at + key.len();
            let before = self.lower[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &self.text[at + key.len()..];
            let r = rest.trim_start_matches(' ');
            let Some(r) = r.strip_prefix(['=', ':']) else {
                continue;
            };
            let r = r.trim_start_matches(' ');
            let mut end = r.len();
            if let Some(p) = r.find(',') {
                end = end.min(p);
            }
            if let Some(p) = needles::find(r, "[FUNC:") {
                end = end.min(p);
            }
            let v = r[..end].trim_end();
            let v = v.strip_suffix('.').unwrap_or(v);
            return Some((v, at));
        }
        None
    }

    /// The leading token (`[0-9A-Za-z_x-]`) of the value, if not empty.
    pub fn token(&self, key: &str) -> Option<&'a str> {
        let v = self.raw(key)?;
        let n = v
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_' || *b == b'-')
            .count();
        (n > 0).then(|| &v[..n])
    }

    /// The value as an unsigned decimal.
    pub fn u64(&self, key: &str) -> Option<u64> {
        self.token(key)?.parse().ok()
    }

    /// The value up to the next `,` (a kernel name, an ext string), if not empty.
    pub fn text(&self, key: &str) -> Option<&'a str> {
        self.raw(key).filter(|v| !v.is_empty())
    }

    /// The text after a fixed phrase (lower-case, e.g. `"serial number is "`) up to a
    /// delimiter, if the phrase occurs.
    pub fn after(&self, phrase: &str) -> Option<&'a str> {
        let at = needles::find(&self.lower, phrase)? + phrase.len();
        let r = &self.text[at..];
        let end = r.find([',', ' ']).unwrap_or(r.len());
        let v = &r[..end];
        let v = v.strip_suffix('.').unwrap_or(v);
        (!v.is_empty()).then_some(v)
    }

    /// Whether the message contains `needle` (lower-case), ignoring case.
    pub fn contains(&self, needle: &str) -> bool {
        needles::contains(&self.lower, needle)
    }

    /// Byte offset of `needle` (lower-case), ignoring case.
    pub fn find(&self, needle: &str) -> Option<usize> {
        needles::find(&self.lower, needle)
    }

    /// The original text.
    pub fn text_all(&self) -> &'a str {
        self.text
    }
}

/// Parses `0x…` hex or decimal into `u64`.
pub fn parse_int(s: &str) -> Option<u64> {
    let s = s.trim();
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equals_and_colon_and_case() {
        let b = KvBag::new(
            "hccl fftsplus task timeout, Stream_ID:7, sq_id:7, task_id:9865, timeout:1836.",
        );
        assert_eq!(b.u64("stream_id"), Some(7));
        assert_eq!(b.u64("timeout"), Some(1836));
        let b = KvBag::new("device_id=0, stream_id=2, report_stream_id=9, task_id=1");
        assert_eq!(b.u64("stream_id"), Some(2));
        assert_eq!(b.u64("report_stream_id"), Some(9));
    }

    #[test]
    fn no_comma_and_spaces() {
        let b = KvBag::new("Stream Synchronize failed, stream_id=117 retCode=0x91, [x].");
        assert_eq!(b.u64("stream_id"), Some(117));
        assert_eq!(b.token("retcode"), Some("0x91"));
        let b = KvBag::new("Task fail infos task_id: 2, stream_id: 45, retcode: 507011 ( model)");
        assert_eq!(b.u64("task_id"), Some(2));
    }

    #[test]
    fn empty_values_and_func_suffix() {
        let b =
            KvBag::new("task_id=19016, fault op_name=[FUNC:GetError][FILE:stream.cc][LINE:1512]");
        assert_eq!(b.raw("fault op_name"), Some(""));
        assert_eq!(b.text("fault op_name"), None);
        let b = KvBag::new("fault kernel_name=Mla_1, fault kernel info ext=none, program id=");
        assert_eq!(b.text("fault kernel_name"), Some("Mla_1"));
        assert_eq!(b.u64("program id"), None);
        assert_eq!(b.text("hash"), None);
    }

    #[test]
    fn phrases() {
        let b =
            KvBag::new("serial number is 19, there is x, core id is 0, error code = 0x10, dump");
        assert_eq!(b.after("serial number is "), Some("19"));
        assert_eq!(b.after("error code = "), Some("0x10"));
        assert_eq!(parse_int("0x10"), Some(16));
        assert_eq!(parse_int("95"), Some(95));
    }
}
