//! A byte stream that turns the non-JSON number tokens msprobe writes into JSON strings.
//!
//! Python's `json.dump` writes a non-finite float as the bare tokens `NaN`, `Infinity` and
//! `-Infinity`, which strict JSON (and serde_json) rejects. Outside strings no JSON token starts
//! with `N` or `I`, so each such token is quoted on the fly (`NaN` → `"NaN"`, `-Infinity` →
//! `"-Infinity"`); text inside strings (escapes included) passes unchanged. The rewrite works
//! chunk by chunk with a few bits of state carried across chunk edges, so a file of hundreds of
//! megabytes streams through a fixed buffer and is never held whole.

use std::io::{self, Read};

const CHUNK: usize = 64 << 10;

/// Wraps a reader of msprobe JSON; reads give strict JSON.
pub struct Tolerant<R> {
    inner: R,
    input: Vec<u8>,
    out: Vec<u8>,
    out_pos: usize,
    in_string: bool,
    escaped: bool,
    /// Inside a bare token being quoted.
    in_bare: bool,
    /// A `-` outside a string, not yet written: it may start `-Infinity`.
    minus: bool,
    done: bool,
}

impl<R: Read> Tolerant<R> {
    pub fn new(inner: R) -> Tolerant<R> {
        Tolerant {
            inner,
            input: vec![0; CHUNK],
            out: Vec::with_capacity(CHUNK + CHUNK / 4),
            out_pos: 0,
            in_string: false,
            escaped: false,
            in_bare: false,
            minus: false,
            done: false,
        }
    }

    fn rewrite(&mut self, n: usize) {
        self.out.clear();
        self.out_pos = 0;
        for &b in &self.input[..n] {
            if self.in_bare {
                if b.is_ascii_alphabetic() {
                    self.out.push(b);
                    continue;
                }
                self.out.push(b'"');
                self.in_bare = false;
            }
            if self.minus {
                self.minus = false;
                if b == b'I' {
                    self.out.extend_from_slice(b"\"-I");
                    self.in_bare = true;
                    continue;
                }
                self.out.push(b'-');
            }
            if self.in_string {
                self.out.push(b);
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => {
                    self.in_string = true;
                    self.out.push(b);
                }
                b'N' | b'I' => {
                    self.out.extend_from_slice(&[b'"', b]);
                    self.in_bare = true;
                }
                b'-' => self.minus = true,
                _ => self.out.push(b),
            }
        }
    }

    fn finish(&mut self) {
        self.out.clear();
        self.out_pos = 0;
        if self.minus {
            self.out.push(b'-');
        }
        if self.in_bare {
            self.out.push(b'"');
        }
        self.minus = false;
        self.in_bare = false;
        self.done = true;
    }
}

impl<R: Read> Read for Tolerant<R> {
    fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
        while self.out_pos >= self.out.len() {
            if self.done {
                return Ok(0);
            }
            let n = loop {
                match self.inner.read(&mut self.input) {
                    Ok(n) => break n,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(e),
                }
            };
            if n == 0 {
                self.finish();
            } else {
                self.rewrite(n);
            }
        }
        let n = dst.len().min(self.out.len() - self.out_pos);
        dst[..n].copy_from_slice(&self.out[self.out_pos..self.out_pos + n]);
        self.out_pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out one byte at a time, to cut every token at every edge.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, dst: &mut [u8]) -> io::Result<usize> {
            match (self.0.split_first(), dst.first_mut()) {
                (Some((&b, rest)), Some(d)) => {
                    *d = b;
                    self.0 = rest;
                    Ok(1)
                }
                _ => Ok(0),
            }
        }
    }

    fn run(text: &str) -> String {
        let mut a = String::new();
        Tolerant::new(text.as_bytes())
            .read_to_string(&mut a)
            .unwrap();
        let mut b = String::new();
        Tolerant::new(Trickle(text.as_bytes()))
            .read_to_string(&mut b)
            .unwrap();
        assert_eq!(a, b, "chunk edges change the output");
        a
    }

    #[test]
    fn bare_tokens_are_quoted_strings_and_escapes_are_not() {
        assert_eq!(
            run(r#"{"Max": NaN, "Min": -Infinity, "Norm": Infinity, "x": -1.5e-3}"#),
            r#"{"Max": "NaN", "Min": "-Infinity", "Norm": "Infinity", "x": -1.5e-3}"#
        );
        assert_eq!(
            run(r#"["NaN \" Infinity \\", -Infinity]"#),
            r#"["NaN \" Infinity \\", "-Infinity"]"#
        );
        assert_eq!(run("[Infinity]"), r#"["Infinity"]"#);
        assert_eq!(run("Infinity"), r#""Infinity""#);
        assert_eq!(run("-"), "-");
    }
}
