//! Where each item of the `"dump"` object of a `dump_config.json` / `acl.json` sits in the file,
//! so that every problem `npgx dump-config check` finds can carry a line and column (serde_json
//! gives positions for syntax errors only, and none for the values it accepted).
//!
//! ```text
//! file   : ws [BOM] ws { "key" : value , … }         (only the "dump" member is recorded)
//! value  : { "key" : value , … } | [ value , … ] | "string" | scalar
//! path   : ""  |  key  |  path.key  |  path[i]       (dump_path, dump_list[0].layer[2])
//! ```
//!
//! A small byte scanner, not a JSON parser: it runs on text that serde_json has already accepted,
//! records the position of every value under `"dump"`, keyed by the same CANN-style path the rules
//! report (`dump_path`, `dump_list[0].layer[2]`, `dump_list[0].opname_range[1].begin`), and on
//! malformed text it stops or skips ahead without panicking (the `dump_config` fuzz target).

use std::collections::HashMap;

/// 1-based line and column (in characters) of the value at each path; `""` is the `"dump"`
/// object itself.
pub fn locate(text: &[u8]) -> HashMap<String, (usize, usize)> {
    let mut s = Scanner {
        text,
        pos: 0,
        line: 1,
        col: 1,
        out: HashMap::new(),
    };
    s.skip_ws();
    s.top_level();
    s.out
}

/// The position for a problem's path: its own, else its nearest located parent (a missing key
/// points at the object that lacks it, `dump_step[1]` at the `dump_step` string).
pub fn position(map: &HashMap<String, (usize, usize)>, path: &str) -> Option<(usize, usize)> {
    let mut p = path;
    loop {
        if let Some(&at) = map.get(p) {
            return Some(at);
        }
        if p.is_empty() {
            return None;
        }
        p = match p.rfind(['.', '[']) {
            Some(i) => &p[..i],
            None => "",
        };
    }
}

struct Scanner<'a> {
    text: &'a [u8],
    pos: usize,
    line: usize,
    col: usize,
    out: HashMap<String, (usize, usize)>,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += 1;
            if c == b'\n' {
                self.line += 1;
                self.col = 1;
            } else if c & 0xC0 != 0x80 {
                // Count characters, not UTF-8 continuation bytes.
                self.col += 1;
            }
        }
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
        // A UTF-8 byte-order mark, which CANN's parser also skips.
        if self.text[self.pos..].starts_with(b"\xEF\xBB\xBF") {
            self.pos += 3;
            self.skip_ws();
        }
    }

    fn top_level(&mut self) {
        if self.peek() != Some(b'{') {
            return;
        }
        self.bump();
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'"') => {}
                _ => return,
            }
            let key = self.string();
            self.skip_ws();
            self.bump(); // ':'
            self.skip_ws();
            if key == "dump" {
                self.value(Some(String::new()));
            } else {
                self.value(None);
            }
            self.skip_ws();
            if self.peek() == Some(b',') {
                self.bump();
            }
        }
    }

    /// Scans one value; records its position under `path` when inside `"dump"`.
    fn value(&mut self, path: Option<String>) {
        if let Some(p) = &path {
            self.out.insert(p.clone(), (self.line, self.col));
        }
        match self.peek() {
            Some(b'{') => {
                self.bump();
                loop {
                    self.skip_ws();
                    if self.peek() != Some(b'"') {
                        self.bump(); // '}' (or end of input)
                        return;
                    }
                    let key = self.string();
                    self.skip_ws();
                    self.bump(); // ':'
                    self.skip_ws();
                    let child = path.as_ref().map(|p| {
                        if p.is_empty() {
                            key.clone()
                        } else {
                            format!("{p}.{key}")
                        }
                    });
                    self.value(child);
                    self.skip_ws();
                    if self.peek() == Some(b',') {
                        self.bump();
                    }
                }
            }
            Some(b'[') => {
                self.bump();
                let mut i = 0;
                loop {
                    self.skip_ws();
                    match self.peek() {
                        Some(b']') | None => {
                            self.bump();
                            return;
                        }
                        _ => {}
                    }
                    let child = path.as_ref().map(|p| format!("{p}[{i}]"));
                    let before = self.pos;
                    self.value(child);
                    if self.pos == before {
                        // Malformed input: always make progress.
                        self.bump();
                    }
                    i += 1;
                    self.skip_ws();
                    if self.peek() == Some(b',') {
                        self.bump();
                    }
                }
            }
            Some(b'"') => {
                self.string();
            }
            Some(_) => {
                while matches!(self.peek(), Some(c) if !matches!(c, b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n'))
                {
                    self.bump();
                }
            }
            None => {}
        }
    }

    /// A string literal's raw text (escapes kept; keys in dump configs have none).
    fn string(&mut self) -> String {
        self.bump(); // opening quote
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c == b'"' {
                break;
            }
            if c == b'\\' {
                self.bump();
            }
            self.bump();
        }
        let s =
            String::from_utf8_lossy(&self.text[start..self.pos.min(self.text.len())]).into_owned();
        self.bump(); // closing quote
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_get_line_and_column() {
        let text = "{\n  \"other\": {\"dump_path\": 1},\n  \"dump\": {\n    \"dump_path\": \"/x\",\n    \"dump_list\": [\n      {\"layer\": [\"a\", \"é\", \"b\"]}\n    ]\n  }\n}\n";
        let m = locate(text.as_bytes());
        assert_eq!(m.get(""), Some(&(3, 11)));
        assert_eq!(m.get("dump_path"), Some(&(4, 18)));
        assert_eq!(m.get("dump_list[0]"), Some(&(6, 7)));
        assert_eq!(m.get("dump_list[0].layer[2]"), Some(&(6, 28)));
        assert_eq!(position(&m, "dump_list[0].model_name"), Some((6, 7)));
        assert_eq!(position(&m, "dump_step[3]"), Some((3, 11)));
        assert_eq!(m.len(), 8);
    }

    #[test]
    fn odd_input_does_not_panic() {
        for t in [
            "",
            "[",
            "{",
            "{\"dump\"",
            "{\"dump\": [1, {\"a\": \"\\\"\"}",
            "{\"dump\": \"x",
            "{\"dump\": [}",
        ] {
            let _ = locate(t.as_bytes());
        }
    }

    #[test]
    fn every_cut_and_every_byte_deleted_does_not_panic() {
        let text = "\u{feff}{\r\n\t\"dump\": {\"dump_list\": [{\"layer\": [\"é\\\"\", 1, [2]], \"opname_range\": [{\"begin\": \"a\"}]}], \"dump_step\": \"0|3-5\"}\r\n}";
        let full = locate(text.as_bytes());
        assert_eq!(
            full.get("dump_list[0].opname_range[0].begin"),
            Some(&(2, 79))
        );
        assert_eq!(full.get("dump_step"), Some(&(2, 101)));
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            let _ = locate(&bytes[..i]);
            let mut cut = bytes.to_vec();
            if i < cut.len() {
                cut.remove(i);
            }
            for p in locate(&cut).keys() {
                let _ = position(&locate(&cut), &format!("{p}.x[1]"));
            }
        }
    }
}
