//! The protobuf *text format* as GE prints it, parsed generically into a tree of fields.
//!
//! Grammar (a subset of the protobuf text format that covers every construct GE writes, plus the
//! usual alternatives so that other writers parse too):
//!
//! ```text
//! message  := field*
//! field    := NAME ( ":" value | ":"? "{" message "}" | ":"? "<" message ">" ) [";" | ","]
//! value    := STRING+                      adjacent strings concatenate
//!           | TOKEN                        number, enum name, bool: [A-Za-z0-9_.+-]+
//!           | "[" (value ("," value)*)? "]" list form: one field per element
//!           | "{" message "}" | "<" message ">"
//! STRING   := '"' ... '"' | "'" ... "'"    C escapes: \n \t \r \\ \" \' \ooo \xhh \uXXXX …
//! comment  := "#" … end of line            skipped like white space
//! ```
//!
//! Nothing here knows GE's schema; [`super::model`] maps the tree onto the typed records. The tree
//! borrows names and tokens from the input; strings are only copied when they contain escapes
//! (the multi-megabyte `bt` kernel binaries do).
//!
//! The tokens are nom combinators over `&[u8]` (the input need not be UTF-8); the field loop is
//! written out so that nesting depth is bounded ([`MAX_DEPTH`]) and errors keep their offset.

use std::borrow::Cow;

use nom::bytes::complete::take_while1;
use nom::error::{ErrorKind, ParseError};
use nom::{IResult, Parser};

/// Deepest nesting accepted. GE graphs nest about ten levels (graph → op → attr → value → list →
/// td → attr …); the limit only keeps hostile input from exhausting the stack.
pub const MAX_DEPTH: usize = 128;

/// One `name: value` or `name { … }` entry, with the byte offset where its name starts.
#[derive(Debug, Clone, PartialEq)]
pub struct Field<'a> {
    pub name: &'a str,
    pub value: Value<'a>,
    pub offset: usize,
}

/// The right-hand side of a field.
#[derive(Debug, Clone, PartialEq)]
pub enum Value<'a> {
    /// A quoted string (escapes decoded) — raw bytes, not necessarily UTF-8.
    Str(Cow<'a, [u8]>),
    /// An unquoted token: number, enum name or bool, exactly as written.
    Token(&'a str),
    /// A nested message.
    Message(Vec<Field<'a>>),
}

/// Where and why the text could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// Byte offset of the problem in the input.
    pub offset: usize,
    /// What the parser expected there.
    pub expected: &'static str,
}

#[derive(Debug)]
struct PErr<'a> {
    input: &'a [u8],
    expected: &'static str,
}

impl<'a> ParseError<&'a [u8]> for PErr<'a> {
    fn from_error_kind(input: &'a [u8], _kind: ErrorKind) -> Self {
        PErr {
            input,
            expected: "well-formed protobuf text",
        }
    }
    fn append(_input: &'a [u8], _kind: ErrorKind, other: Self) -> Self {
        other
    }
}

type Res<'a, T> = IResult<&'a [u8], T, PErr<'a>>;

fn fail<'a, T>(input: &'a [u8], expected: &'static str) -> Res<'a, T> {
    Err(nom::Err::Failure(PErr { input, expected }))
}

/// Parses a whole document (the top-level message) into its fields.
pub fn parse_document(input: &[u8]) -> Result<Vec<Field<'_>>, SyntaxError> {
    let to_error = |rest: &[u8], expected| SyntaxError {
        offset: input.len() - rest.len(),
        expected,
    };
    match fields(input, input, 0) {
        Ok((rest, fields)) => {
            let rest = skip_ws(rest);
            if rest.is_empty() {
                Ok(fields)
            } else {
                Err(to_error(rest, "a field name"))
            }
        }
        Err(nom::Err::Error(e)) | Err(nom::Err::Failure(e)) => Err(to_error(e.input, e.expected)),
        Err(nom::Err::Incomplete(_)) => Err(to_error(&[], "more input")),
    }
}

/// White space and `#` comments.
fn skip_ws(mut i: &[u8]) -> &[u8] {
    loop {
        match i.first() {
            Some(b' ' | b'\t' | b'\r' | b'\n' | b'\x0b' | b'\x0c') => i = &i[1..],
            Some(b'#') => match memchr::memchr(b'\n', i) {
                Some(n) => i = &i[n + 1..],
                None => i = &[],
            },
            _ => return i,
        }
    }
}

fn is_name_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

fn is_token_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'+' | b'-')
}

fn name(i: &[u8]) -> Res<'_, &str> {
    let (rest, bytes) = take_while1(is_name_byte).parse(i)?;
    // Only ASCII bytes were taken, so this conversion cannot fail; map it anyway instead of
    // unwrapping.
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((rest, s)),
        Err(_) => fail(i, "a field name"),
    }
}

fn token(i: &[u8]) -> Res<'_, &str> {
    let (rest, bytes) = take_while1(is_token_byte).parse(i)?;
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok((rest, s)),
        Err(_) => fail(i, "a value"),
    }
}

/// Fields until `}` / `>` / end of input (the caller checks which).
fn fields<'a>(doc: &'a [u8], mut i: &'a [u8], depth: usize) -> Res<'a, Vec<Field<'a>>> {
    if depth > MAX_DEPTH {
        return fail(i, "less deeply nested messages");
    }
    let mut out = Vec::new();
    loop {
        i = skip_ws(i);
        match i.first() {
            None | Some(b'}' | b'>') => return Ok((i, out)),
            _ => {}
        }
        let offset = doc.len() - i.len();
        let (rest, field_name) = match name(i) {
            Ok(ok) => ok,
            Err(_) => return fail(i, "a field name"),
        };
        i = skip_ws(rest);
        let mut colon = false;
        if let Some(b':') = i.first() {
            colon = true;
            i = skip_ws(&i[1..]);
        }
        match i.first() {
            Some(b'{' | b'<') => {
                let (rest, value) = nested(doc, i, depth)?;
                out.push(Field {
                    name: field_name,
                    value,
                    offset,
                });
                i = rest;
            }
            Some(b'[') if colon => {
                i = skip_ws(&i[1..]);
                loop {
                    if let Some(b']') = i.first() {
                        i = &i[1..];
                        break;
                    }
                    let (rest, value) = value(doc, i, depth)?;
                    out.push(Field {
                        name: field_name,
                        value,
                        offset,
                    });
                    i = skip_ws(rest);
                    match i.first() {
                        Some(b',') => i = skip_ws(&i[1..]),
                        Some(b']') => {}
                        _ => return fail(i, "',' or ']' in a list"),
                    }
                }
            }
            _ if colon => {
                let (rest, value) = value(doc, i, depth)?;
                out.push(Field {
                    name: field_name,
                    value,
                    offset,
                });
                i = rest;
            }
            _ => return fail(i, "':' or '{' after a field name"),
        }
        i = skip_ws(i);
        if let Some(b';' | b',') = i.first() {
            i = &i[1..];
        }
    }
}

fn nested<'a>(doc: &'a [u8], i: &'a [u8], depth: usize) -> Res<'a, Value<'a>> {
    let close = match i.first() {
        Some(b'{') => b'}',
        Some(b'<') => b'>',
        _ => return fail(i, "'{'"),
    };
    let (rest, inner) = fields(doc, &i[1..], depth + 1)?;
    match rest.first() {
        Some(&c) if c == close => Ok((&rest[1..], Value::Message(inner))),
        _ if close == b'}' => fail(rest, "'}' closing a message"),
        _ => fail(rest, "'>' closing a message"),
    }
}

fn value<'a>(doc: &'a [u8], i: &'a [u8], depth: usize) -> Res<'a, Value<'a>> {
    match i.first() {
        Some(b'{' | b'<') => nested(doc, i, depth),
        Some(b'"' | b'\'') => {
            let (mut rest, mut s) = quoted(i)?;
            // Adjacent string literals concatenate.
            loop {
                let after = skip_ws(rest);
                if !matches!(after.first(), Some(b'"' | b'\'')) {
                    break;
                }
                let (r, more) = quoted(after)?;
                s.to_mut().extend_from_slice(&more);
                rest = r;
            }
            Ok((rest, Value::Str(s)))
        }
        _ => match token(i) {
            Ok((rest, t)) => Ok((rest, Value::Token(t))),
            Err(_) => fail(i, "a value (string, number or name)"),
        },
    }
}

/// One quoted string literal; borrows when it holds no escapes.
fn quoted(i: &[u8]) -> Res<'_, Cow<'_, [u8]>> {
    let Some(&quote) = i.first() else {
        return fail(i, "a string");
    };
    let body = &i[1..];
    let Some(stop) = memchr::memchr2(quote, b'\\', body) else {
        return fail(i, "a closing quote");
    };
    if body[stop] == quote {
        return Ok((&body[stop + 1..], Cow::Borrowed(&body[..stop])));
    }
    let mut out = Vec::with_capacity(body.len().min(stop * 2 + 64));
    out.extend_from_slice(&body[..stop]);
    let mut j = stop;
    loop {
        let Some(&c) = body.get(j) else {
            return fail(i, "a closing quote");
        };
        if c == quote {
            return Ok((&body[j + 1..], Cow::Owned(out)));
        }
        if c != b'\\' {
            // Escaped binaries (`bt`) alternate short plain runs with escapes: a plain loop beats
            // memchr's set-up cost here.
            let start = j;
            while j < body.len() && body[j] != quote && body[j] != b'\\' {
                j += 1;
            }
            out.extend_from_slice(&body[start..j]);
            continue;
        }
        // Fast path for what C++ `CEscape` writes for every non-printable byte: `\ooo`.
        if let [b'\\', a @ b'0'..=b'3', b @ b'0'..=b'7', c @ b'0'..=b'7', ..] = body[j..] {
            out.push(((a - b'0') << 6) | ((b - b'0') << 3) | (c - b'0'));
            j += 4;
            continue;
        }
        let Some(&e) = body.get(j + 1) else {
            return fail(i, "a closing quote");
        };
        j += 2;
        match e {
            b'n' => out.push(b'\n'),
            b't' => out.push(b'\t'),
            b'r' => out.push(b'\r'),
            b'a' => out.push(0x07),
            b'b' => out.push(0x08),
            b'f' => out.push(0x0c),
            b'v' => out.push(0x0b),
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                for _ in 0..2 {
                    match body.get(j) {
                        Some(&d @ b'0'..=b'7') => {
                            v = v * 8 + u32::from(d - b'0');
                            j += 1;
                        }
                        _ => break,
                    }
                }
                // `\777` overflows a byte; C++ keeps the low eight bits.
                out.push((v & 0xff) as u8);
            }
            b'x' | b'X' => {
                let mut v = 0u32;
                let mut n = 0;
                while n < 2 {
                    match body.get(j).and_then(|d| (*d as char).to_digit(16)) {
                        Some(d) => {
                            v = v * 16 + d;
                            j += 1;
                            n += 1;
                        }
                        None => break,
                    }
                }
                if n == 0 {
                    return fail(&body[j..], "hex digits after \\x");
                }
                out.push(v as u8);
            }
            b'u' | b'U' => {
                let width = if e == b'u' { 4 } else { 8 };
                let digits = body.get(j..j + width).unwrap_or(&[]);
                let code = std::str::from_utf8(digits)
                    .ok()
                    .and_then(|d| u32::from_str_radix(d, 16).ok())
                    .and_then(char::from_u32);
                let Some(ch) = code else {
                    return fail(&body[j.min(body.len())..], "a unicode escape");
                };
                j += width;
                let mut buf = [0u8; 4];
                out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
            }
            // \\ \" \' \? and anything unknown stand for themselves.
            other => out.push(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(s: &str) -> Vec<Field<'_>> {
        parse_document(s.as_bytes()).expect("parses")
    }

    #[test]
    fn scalar_fields_with_and_without_separators() {
        let f = doc("a: 1 b: DT_FLOAT; c: -1.5e-3, d: true");
        let got: Vec<_> = f.iter().map(|f| (f.name, f.value.clone())).collect();
        assert_eq!(
            got,
            vec![
                ("a", Value::Token("1")),
                ("b", Value::Token("DT_FLOAT")),
                ("c", Value::Token("-1.5e-3")),
                ("d", Value::Token("true")),
            ]
        );
    }

    #[test]
    fn nested_messages_in_both_bracket_styles_and_with_colon() {
        let f = doc("m { x: 1 } n: < y: 2 > o: { }");
        assert_eq!(f.len(), 3);
        assert_eq!(
            f[0].value,
            Value::Message(vec![Field {
                name: "x",
                value: Value::Token("1"),
                offset: 4
            }])
        );
        assert!(matches!(&f[1].value, Value::Message(v) if v.len() == 1));
        assert_eq!(f[2].value, Value::Message(vec![]));
    }

    #[test]
    fn strings_decode_escapes_and_concatenate() {
        let f = doc(r#"s: "a\n\t\"q\"\\" t: "\177ELF\002\000" u: 'x' "y" v: "\x41\u00e9""#);
        assert_eq!(f[0].value, Value::Str(Cow::Borrowed(b"a\n\t\"q\"\\")));
        assert_eq!(
            f[1].value,
            Value::Str(Cow::Owned(vec![0x7f, b'E', b'L', b'F', 2, 0]))
        );
        assert_eq!(f[2].value, Value::Str(Cow::Borrowed(b"xy")));
        assert_eq!(f[3].value, Value::Str(Cow::Borrowed("Aé".as_bytes())));
    }

    #[test]
    fn list_form_expands_to_repeated_fields() {
        let f = doc("dim: [1, 2, 3] name: []");
        let dims: Vec<_> = f.iter().map(|f| &f.value).collect();
        assert_eq!(
            dims,
            vec![&Value::Token("1"), &Value::Token("2"), &Value::Token("3")]
        );
    }

    #[test]
    fn comments_and_blank_lines_are_skipped() {
        let f = doc("# header\n\n a: 1 # trailing\n# end");
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].offset, 11);
    }

    #[test]
    fn errors_carry_the_offset() {
        let e = parse_document(b"a { b: 1 ").unwrap_err();
        assert_eq!(e.offset, 9);
        assert_eq!(e.expected, "'}' closing a message");
        let e = parse_document(b"a: \"open").unwrap_err();
        assert_eq!((e.offset, e.expected), (3, "a closing quote"));
        let e = parse_document(b"a 1").unwrap_err();
        assert_eq!((e.offset, e.expected), (2, "':' or '{' after a field name"));
        let e = parse_document(b"}").unwrap_err();
        assert_eq!((e.offset, e.expected), (0, "a field name"));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = "a {".repeat(MAX_DEPTH + 5);
        let e = parse_document(deep.as_bytes()).unwrap_err();
        assert_eq!(e.expected, "less deeply nested messages");
    }
}
