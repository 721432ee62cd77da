//! The plog line header: `[LEVEL] MODULE(PID,PNAME):YYYY-MM-DD-hh:mm:ss.mmm.uuu␠`.
//!
//! Grammar (spec `plog-and-errors.md` §1.1, §1.5):
//!
//! ```text
//! header = "[" level "] " module "(" pid "," pname "):" ts " "?
//! level  = "DEBUG" | "INFO" | "WARNING" | "ERROR" | "EVENT" | "TRACE" | "NULL" | digits
//! module = [A-Z0-9_]+                 (digits only when the module id has no name)
//! pid    = "-"? digits                (device firmware writes -1)
//! pname  = anything up to the "):" that is followed by a digit; may be empty, "null" or numeric
//!          (device IMP logs put one space between "):" and the timestamp; accepted)
//! ts     = d4 "-" d2 "-" d2 "-" d2 ":" d2 ":" d2 "." d3 "." d3
//! ```
//!
//! The header is matched on every line of multi-GB files, so it is a hand-written byte scanner
//! (several times faster than a combinator chain here); the content grammars that run on fewer
//! lines use nom.
//!
//! MindSpore's own logger writes look-alike lines with three fields inside the parentheses
//! (`GE(118114,ffff4effd1e0,python)`); a PNAME holding a comma is rejected so that those lines are
//! never taken for plog records.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use nom::IResult;
use serde::Serialize;

/// Severity of a plog record. `TRACE` is printed by HCCL status lines; a level the logger does not
/// know is printed as a number and kept as [`Level::Numeric`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    Debug,
    Info,
    Warning,
    Error,
    Null,
    Event,
    Trace,
    /// The logger's fallback `[%d]` for a level id outside its table.
    Numeric(i64),
}

impl Level {
    /// The level as printed in the log (`"ERROR"`, `"7"`).
    pub fn name(self) -> Cow<'static, str> {
        match self {
            Level::Debug => "DEBUG".into(),
            Level::Info => "INFO".into(),
            Level::Warning => "WARNING".into(),
            Level::Error => "ERROR".into(),
            Level::Null => "NULL".into(),
            Level::Event => "EVENT".into(),
            Level::Trace => "TRACE".into(),
            Level::Numeric(n) => n.to_string().into(),
        }
    }

    /// Parses a level name as printed (`ERROR`) or as a user types it (`error`, `warn`, `3`).
    /// Numbers 0–4 and 16 map to the named levels of the logger's table.
    pub fn from_name(s: &str) -> Option<Level> {
        let upper = s.trim().to_ascii_uppercase();
        Some(match upper.as_str() {
            "DEBUG" | "0" => Level::Debug,
            "INFO" | "1" => Level::Info,
            "WARNING" | "WARN" | "2" => Level::Warning,
            "ERROR" | "3" => Level::Error,
            "NULL" | "4" => Level::Null,
            "EVENT" | "16" => Level::Event,
            "TRACE" => Level::Trace,
            other => Level::Numeric(other.parse().ok()?),
        })
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

impl Serialize for Level {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

/// What [`Serialize`] writes: a name as printed, or the number of a [`Level::Numeric`].
impl schemars::JsonSchema for Level {
    fn schema_name() -> Cow<'static, str> {
        "Level".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "The level as printed in the log (`ERROR`), or the number of a level the logger does not name.",
            "type": "string",
            "pattern": "^(DEBUG|INFO|WARNING|ERROR|NULL|EVENT|TRACE|-?[0-9]+)$",
        })
    }
}

/// Reads back what [`Serialize`] writes: a name as printed, or the number of a
/// [`Level::Numeric`].
impl<'de> serde::Deserialize<'de> for Level {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(d)?;
        Ok(match &*s {
            "DEBUG" => Level::Debug,
            "INFO" => Level::Info,
            "WARNING" => Level::Warning,
            "ERROR" => Level::Error,
            "NULL" => Level::Null,
            "EVENT" => Level::Event,
            "TRACE" => Level::Trace,
            n => Level::Numeric(n.parse().map_err(|_| {
                serde::de::Error::invalid_value(serde::de::Unexpected::Str(n), &"a plog level")
            })?),
        })
    }
}

/// A plog timestamp `YYYY-MM-DD-hh:mm:ss.mmm.uuu` (local time of the writer's clock; host and
/// device clocks differ). Field order makes the derived ordering chronological.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct PlogTime {
    pub year: u16,
    pub month: u8,
    pub day: u8,
    pub hour: u8,
    pub minute: u8,
    pub second: u8,
    pub milli: u16,
    pub micro: u16,
}

impl PlogTime {
    /// Parses the exact plog form `YYYY-MM-DD-hh:mm:ss.mmm.uuu`.
    pub fn parse(s: &str) -> Option<PlogTime> {
        timestamp(s.as_bytes()).ok().map(|(_, t)| t)
    }

    /// Parses a user-supplied bound: the plog form, or a prefix of it (`2025-05-08`,
    /// `2025-05-08-09:56`), or the same with a space or `T` between date and time. A prefix names
    /// a span of time, and the bound covers all of it: the missing fields are the span's first
    /// instant for [`BoundEnd::Lower`] and its last for [`BoundEnd::Upper`], so an upper bound of
    /// `2025-05-08` keeps every record of the 8th and `2025-05-08-09:57` keeps 09:57:59.999.999.
    pub fn parse_bound(s: &str, end: BoundEnd) -> Option<PlogTime> {
        let digits: Vec<u32> = s
            .split(|c: char| !c.is_ascii_digit())
            .filter(|p| !p.is_empty())
            .map(|p| p.parse().ok())
            .collect::<Option<_>>()?;
        if digits.is_empty() || digits.len() > 8 || digits[0] > 9999 {
            return None;
        }
        // The first and last value of each field, year to microsecond.
        let (first, last) = ([0, 1, 1, 0, 0, 0, 0, 0], [0, 12, 31, 23, 59, 59, 999, 999]);
        let get = |i: usize| {
            digits.get(i).copied().unwrap_or(match end {
                BoundEnd::Lower => first[i],
                BoundEnd::Upper => last[i],
            })
        };
        let t = PlogTime {
            year: get(0) as u16,
            month: get(1).min(99) as u8,
            day: get(2).min(99) as u8,
            hour: get(3).min(99) as u8,
            minute: get(4).min(99) as u8,
            second: get(5).min(99) as u8,
            milli: get(6).min(999) as u16,
            micro: get(7).min(999) as u16,
        };
        Some(t)
    }
}

/// Which end of a time range a user-supplied bound closes (see [`PlogTime::parse_bound`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundEnd {
    Lower,
    Upper,
}

impl fmt::Display for PlogTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:04}-{:02}-{:02}-{:02}:{:02}:{:02}.{:03}.{:03}",
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.milli,
            self.micro
        )
    }
}

impl Serialize for PlogTime {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// What [`Serialize`] writes: the time stamp as printed.
impl schemars::JsonSchema for PlogTime {
    fn schema_name() -> Cow<'static, str> {
        "PlogTime".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "A plog time stamp `YYYY-MM-DD-hh:mm:ss.mmm.uuu` (the writer's local clock).",
            "type": "string",
            "pattern": "^[0-9]{4,}-[0-9]{2}-[0-9]{2}-[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}\\.[0-9]{3}$",
        })
    }
}

/// Reads back what [`Serialize`] writes (a whole time stamp; no prefix).
impl<'de> serde::Deserialize<'de> for PlogTime {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <Cow<'de, str>>::deserialize(d)?;
        PlogTime::parse(&s).ok_or_else(|| {
            serde::de::Error::invalid_value(
                serde::de::Unexpected::Str(&s),
                &"a plog time YYYY-MM-DD-hh:mm:ss.mmm.uuu",
            )
        })
    }
}

/// The parsed header of one plog record. Borrowed from the line; `module` is ASCII by grammar,
/// `pname` is lossy UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlogHeader<'a> {
    pub level: Level,
    /// `RUNTIME`, `HCCL`, `TSCH`, … or the numeric module id when the id has no name.
    pub module: &'a str,
    /// Signed: device firmware writes `-1`.
    pub pid: i64,
    /// Process name as written (any bytes but a comma); may be empty, `null` or numeric. Decoded
    /// by [`PlogHeader::pname`] only where it is used: most lines repeat a name already seen.
    pub pname_bytes: &'a [u8],
    pub time: PlogTime,
}

impl<'a> PlogHeader<'a> {
    /// The process name, lossy UTF-8.
    pub fn pname(&self) -> Cow<'a, str> {
        String::from_utf8_lossy(self.pname_bytes)
    }
}

/// Parses the header at the start of `line`; returns the header and the bytes after it (the
/// record content, without the single separating space).
///
/// Returns `None` for any line that is not a plog header, including MindSpore's look-alike lines.
/// Never panics.
///
/// ```
/// use npgx_parsers::plog::header::{parse_header, Level};
/// let line = b"[ERROR] RUNTIME(289610,):2026-09-10-08:52:41.377.821 [stream.cc:1743]289907 GetError:x";
/// let (h, rest) = parse_header(line).unwrap();
/// assert_eq!((h.level, h.module, h.pid, &*h.pname()), (Level::Error, "RUNTIME", 289610, ""));
/// assert_eq!(h.time.to_string(), "2026-09-10-08:52:41.377.821");
/// assert!(rest.starts_with(b"[stream.cc:1743]"));
/// ```
pub fn parse_header(line: &[u8]) -> Option<(PlogHeader<'_>, &[u8])> {
    parse_full(line).map(|(h, _, rest)| (h, rest))
}

/// Where the parts of a header's prefix lie in its line.
struct Spans {
    /// The prefix `[` … `):` before the timestamp.
    prefix: usize,
    pname: Range<usize>,
}

/// [`parse_header`], and where the parts of the prefix lie.
fn parse_full(line: &[u8]) -> Option<(PlogHeader<'_>, Spans, &[u8])> {
    let at = |rest: &[u8]| line.len() - rest.len();
    let rest = line.strip_prefix(b"[")?;
    let close = rest.iter().take(12).position(|&b| b == b']')?;
    let level = level(&rest[..close])?;
    let rest = rest[close..].strip_prefix(b"] ")?;
    let m = rest
        .iter()
        .position(|&b| !(b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_'))?;
    if m == 0 {
        return None;
    }
    let module = std::str::from_utf8(&rest[..m]).ok()?;
    let rest = rest[m..].strip_prefix(b"(")?;
    let (pid, rest) = signed(rest)?;
    let rest = rest.strip_prefix(b",")?;
    let pname_at = at(rest);
    let (pname, rest) = pname(rest)?;
    let rest = rest.strip_prefix(b"):")?;
    let spans = Spans {
        prefix: at(rest),
        pname: pname_at..pname_at + pname.len(),
    };
    let (time, rest) = time_and_content(rest)?;
    let header = PlogHeader {
        level,
        module,
        pid,
        pname_bytes: pname,
        time,
    };
    Some((header, spans, rest))
}

/// The timestamp after a header's `):` and the content after it.
fn time_and_content(rest: &[u8]) -> Option<(PlogTime, &[u8])> {
    // Device IMP logs print a space before the timestamp: `IMP(-2,IMP): 1970-01-01-…`.
    let rest = rest.strip_prefix(b" ").unwrap_or(rest);
    let (rest, time) = timestamp(rest).ok()?;
    Some((time, rest.strip_prefix(b" ").unwrap_or(rest)))
}

/// The longest header prefix (`[` to `):`) [`HeaderCache`] keeps; longer ones are parsed whole.
const CACHED_PREFIX: usize = 256;

/// Prefixes a [`HeaderCache`] keeps.
pub const CACHED_PREFIXES: usize = 4;

/// [`parse_header`] for the lines of one file in order. Records mostly repeat a recent prefix
/// before the timestamp (`[INFO] GE(1365,python3):`; in real plogs 85 % of records repeat the
/// one before, 98 % one of the last four): when a line starts with the bytes of a kept prefix, the
/// level, module, pid and name are the same, and only the timestamp is read. The result is
/// always [`parse_header`]'s: a line whose timestamp does not follow the kept prefix is parsed
/// whole (a name may itself hold `):`).
#[derive(Debug, Default)]
pub struct HeaderCache {
    entries: [Entry; CACHED_PREFIXES],
    /// The entry the last header came from: tried first.
    last: usize,
    /// The entry the next new prefix replaces.
    next: usize,
    /// The last timestamp's bytes up to the second (`YYYY-MM-DD-hh:mm:ss`, already checked) and
    /// its time: records come many to a second, so a timestamp that starts with these bytes
    /// needs only its last eight (`.mmm.uuu`) checked and read.
    second: Option<([u8; SECOND], PlogTime)>,
}

/// The bytes of a timestamp up to the second.
const SECOND: usize = 19;

/// One kept prefix and what it says.
#[derive(Debug, Default)]
struct Entry {
    /// Empty when the entry holds nothing.
    prefix: Vec<u8>,
    level: Option<Level>,
    module: String,
    pid: i64,
    /// The name's bytes in `prefix`.
    pname: Range<usize>,
}

/// Where a [`HeaderCache`] found a header's prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cached {
    /// In this entry, kept from an earlier line.
    Hit(usize),
    /// Parsed from this line and kept in this entry (replacing what it held).
    New(usize),
    /// Parsed from this line and not kept (longer than [`CACHED_PREFIX`]).
    Uncached,
}

impl HeaderCache {
    pub fn new() -> HeaderCache {
        HeaderCache::default()
    }

    /// [`parse_header`] of `line`, and where its prefix (level, module, pid and name) was found.
    /// The module and name may be borrowed from the cache.
    pub fn parse<'c, 'a: 'c>(
        &'c mut self,
        line: &'a [u8],
    ) -> Option<(PlogHeader<'c>, &'a [u8], Cached)> {
        let last = self.last;
        let mut hit = None;
        for k in std::iter::once(last).chain((0..CACHED_PREFIXES).filter(|&k| k != last)) {
            let e = &self.entries[k];
            let Some(level) = e.level.filter(|_| !e.prefix.is_empty()) else {
                continue;
            };
            let Some(rest) = line.strip_prefix(&e.prefix[..]) else {
                continue;
            };
            if let Some((time, rest)) = self.cached_time_and_content(rest) {
                hit = Some((k, level, time, rest));
                break;
            }
        }
        if let Some((k, level, time, rest)) = hit {
            self.last = k;
            let e = &self.entries[k];
            let header = PlogHeader {
                level,
                module: &e.module,
                pid: e.pid,
                pname_bytes: e.prefix.get(e.pname.clone()).unwrap_or_default(),
                time,
            };
            return Some((header, rest, Cached::Hit(k)));
        }
        let (h, spans, rest) = parse_full(line)?;
        if spans.prefix > CACHED_PREFIX {
            return Some((h, rest, Cached::Uncached));
        }
        let k = self.next;
        self.next = (k + 1) % CACHED_PREFIXES;
        self.last = k;
        let e = &mut self.entries[k];
        e.prefix.clear();
        e.prefix.extend_from_slice(&line[..spans.prefix]);
        e.level = Some(h.level);
        e.module.clear();
        e.module.push_str(h.module);
        e.pname = spans.pname;
        e.pid = h.pid;
        Some((h, rest, Cached::New(k)))
    }
}

impl HeaderCache {
    /// [`time_and_content`], reading only the last eight bytes of a timestamp that starts with
    /// the second of the one before (the same answer: the first [`SECOND`] bytes were checked
    /// then, the rest are checked here).
    fn cached_time_and_content<'a>(&mut self, rest: &'a [u8]) -> Option<(PlogTime, &'a [u8])> {
        let r = rest.strip_prefix(b" ").unwrap_or(rest);
        let b = r.first_chunk::<27>()?;
        let time = match &self.second {
            Some((bytes, t)) if b[..SECOND] == bytes[..] => sub_second(b, *t)?,
            _ => {
                let (_, t) = timestamp(r).ok()?;
                let mut bytes = [0u8; SECOND];
                bytes.copy_from_slice(&b[..SECOND]);
                self.second = Some((bytes, t));
                t
            }
        };
        let r = &r[TIME_SHAPE.len()..];
        Some((time, r.strip_prefix(b" ").unwrap_or(r)))
    }
}

/// Cheap test used by the record assembler on every physical line.
pub fn is_header(line: &[u8]) -> bool {
    line.first() == Some(&b'[') && parse_header(line).is_some()
}

fn level(word: &[u8]) -> Option<Level> {
    Some(match word {
        b"DEBUG" => Level::Debug,
        b"INFO" => Level::Info,
        b"WARNING" => Level::Warning,
        b"ERROR" => Level::Error,
        b"NULL" => Level::Null,
        b"EVENT" => Level::Event,
        b"TRACE" => Level::Trace,
        digits => Level::Numeric(std::str::from_utf8(digits).ok()?.parse().ok()?),
    })
}

/// PNAME: everything up to the `):` that is followed by a digit (the timestamp). A comma inside
/// means a MindSpore line (`pid,tid,pname`), which is rejected. Returns the name and the rest
/// starting at that `)`.
fn pname(i: &[u8]) -> Option<(&[u8], &[u8])> {
    let digit_at = |k: usize| i.get(k).is_some_and(u8::is_ascii_digit);
    for p in memchr::memchr_iter(b')', i) {
        if i.get(p + 1) == Some(&b':')
            && (digit_at(p + 2) || (i.get(p + 2) == Some(&b' ') && digit_at(p + 3)))
        {
            let name = &i[..p];
            if name.contains(&b',') {
                return None;
            }
            return Some((name, &i[p..]));
        }
    }
    None
}

/// `-`? digits, at most 18 of them.
fn signed(i: &[u8]) -> Option<(i64, &[u8])> {
    let (neg, digits) = match i.strip_prefix(b"-") {
        Some(r) => (true, r),
        None => (false, i),
    };
    let n = digits.iter().take_while(|b| b.is_ascii_digit()).count();
    if n == 0 || n > 18 {
        return None;
    }
    let v = digits[..n]
        .iter()
        .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0'));
    Some((if neg { -v } else { v }, &digits[n..]))
}

/// The fixed shape of a plog timestamp: `9` = a digit, other bytes literal.
const TIME_SHAPE: &[u8; 27] = b"9999-99-99-99:99:99.999.999";

/// The shape as four overlapping 8-byte words (bytes 0, 8, 16 and 19 on), each as three masks:
/// the digit positions, the literal positions, and the literals.
const SHAPE_WORDS: [(u64, u64, u64); 4] = [
    shape_word(0),
    shape_word(8),
    shape_word(16),
    shape_word(TIME_SHAPE.len() - 8),
];

const fn shape_word(at: usize) -> (u64, u64, u64) {
    let (mut digits, mut literals, mut values) = (0u64, 0u64, 0u64);
    let mut k = 0;
    while k < 8 {
        let c = TIME_SHAPE[at + k];
        if c == b'9' {
            digits |= 0xFF << (8 * k);
        } else {
            literals |= 0xFF << (8 * k);
            values |= (c as u64) << (8 * k);
        }
        k += 1;
    }
    (digits, literals, values)
}

/// Whether the 27 bytes of `b` have [`TIME_SHAPE`], eight bytes at a time: a byte `c` is a
/// digit when its high nibble is 3 and adding 6 does not leave it (`0x30..=0x39`). The added 6
/// cannot carry into the next byte where the high nibbles are 3.
fn has_time_shape(b: &[u8; 27]) -> bool {
    SHAPE_WORDS
        .iter()
        .zip([0, 8, 16, TIME_SHAPE.len() - 8])
        .all(|(&shape, at)| {
            let mut w = [0u8; 8];
            w.copy_from_slice(&b[at..at + 8]);
            word_has_shape(u64::from_le_bytes(w), shape)
        })
}

/// Whether the eight bytes of `w` have the shape of one of [`SHAPE_WORDS`].
#[inline(always)]
fn word_has_shape(w: u64, (digits, literals, values): (u64, u64, u64)) -> bool {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    const THREES: u64 = 0x3030_3030_3030_3030;
    const SIXES: u64 = 0x0606_0606_0606_0606;
    let d = w & digits;
    (w & literals) == values
        && (d & HIGH) == (THREES & digits)
        && (d.wrapping_add(SIXES & digits) & HIGH) == (THREES & digits)
}

/// `YYYY-MM-DD-hh:mm:ss.mmm.uuu` — a fixed-width field, its shape checked eight bytes at a
/// time (this runs on every line of multi-GB files; a combinator chain is several times slower).
pub(crate) fn timestamp(i: &[u8]) -> IResult<&[u8], PlogTime> {
    let Some(b) = i.first_chunk::<27>() else {
        return Err(fail(i));
    };
    if !has_time_shape(b) {
        return Err(fail(i));
    }
    let num = |at: usize, n: usize| number(&b[at..at + n]);
    let time = PlogTime {
        year: num(0, 4),
        month: num(5, 2) as u8,
        day: num(8, 2) as u8,
        hour: num(11, 2) as u8,
        minute: num(14, 2) as u8,
        second: num(17, 2) as u8,
        milli: num(20, 3),
        micro: num(24, 3),
    };
    Ok((&i[TIME_SHAPE.len()..], time))
}

/// The value of a run of checked ASCII digits.
#[inline(always)]
fn number(digits: &[u8]) -> u16 {
    digits
        .iter()
        .fold(0u16, |acc, d| acc * 10 + u16::from(d - b'0'))
}

/// `second`'s time with the milli- and microseconds of `b`, when `b[SECOND..]` has the shape of
/// `.mmm.uuu` (the bytes before were checked with `second`'s).
fn sub_second(b: &[u8; 27], second: PlogTime) -> Option<PlogTime> {
    let shaped = word_has_shape(u64::from_le_bytes(*b.last_chunk::<8>()?), SHAPE_WORDS[3]);
    shaped.then(|| PlogTime {
        milli: number(&b[20..23]),
        micro: number(&b[24..27]),
        ..second
    })
}

fn fail(i: &[u8]) -> nom::Err<nom::error::Error<&[u8]>> {
    nom::Err::Error(nom::error::Error::new(i, nom::error::ErrorKind::Verify))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(line: &str) -> PlogHeader<'_> {
        parse_header(line.as_bytes()).expect("header").0
    }

    #[test]
    fn runtime_error_line() {
        let x = h("[ERROR] RUNTIME(155320,python3):2025-05-08-09:56:18.522.534 [stars_engine.cc:1553]155320 X");
        assert_eq!(x.level, Level::Error);
        assert_eq!(x.module, "RUNTIME");
        assert_eq!(x.pid, 155320);
        assert_eq!(x.pname(), "python3");
        assert_eq!(x.time.to_string(), "2025-05-08-09:56:18.522.534");
    }

    #[test]
    fn firmware_pid_minus_one_null_pname() {
        let x = h("[ERROR] TSCH(-1,null):2020-12-23-17:10:54.083.518 17 (cpuid:0) a.c:1 f: m");
        assert_eq!((x.pid, &*x.pname(), x.module), (-1, "null", "TSCH"));
    }

    #[test]
    fn empty_and_numeric_pname_and_long_pname() {
        assert_eq!(
            h("[ERROR] IDEDD(289610,):2026-09-10-08:52:37.489.589 x").pname(),
            ""
        );
        assert_eq!(
            h("[ERROR] RUNTIME(809924,4):2026-01-01-00:00:00.000.000 x").pname(),
            "4"
        );
        assert_eq!(
            h("[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 [op_base.cc:974]").pname(),
            "mindie_llm_backend_connector"
        );
    }

    #[test]
    fn numeric_level_and_module_trace_event() {
        let x = h("[7] 99(1,p):2025-01-01-00:00:00.000.000 x");
        assert_eq!((x.level, x.module), (Level::Numeric(7), "99"));
        assert_eq!(
            h("[TRACE] HCCL(1,p):2025-01-01-00:00:00.000.000 x").level,
            Level::Trace
        );
        assert_eq!(
            h("[EVENT] X_1(1,p):2025-01-01-00:00:00.000.000 x").level,
            Level::Event
        );
    }

    #[test]
    fn rejects_look_alikes() {
        for line in [
            "[EXCEPTION] GE(118114,ffff4effd1e0,python):2021-09-11-16:48:31.511.063 [m.cc:233] Run] x",
            "[ERROR] DEVICE(2420702,fffe06ffd1e0,python):2023-11-20-15:34:32.886.561 [a.cc:761] x",
            "[ERROR] 2026-05-08-03:20:32 (PID:920, Device:12, RankID:-1) ERR02005 DIST internal error",
            "[ERROR] aclrtSynchronizeStream(stream) failed: 507015 (/tmp/main.cpp:108)",
            "[ERROR] RecentErrMsg: EZ9999: Inner Error!",
            "[2025-05-13 02:25:58.64217] [error] [36815] [hccl_runner.cpp:132] x",
            "[ERROR] RUNTIME(1,p):2025-01-01-00:00",
            "",
            "[",
        ] {
            assert!(parse_header(line.as_bytes()).is_none(), "{line}");
        }
    }

    #[test]
    fn device_imp_space_before_timestamp() {
        let x =
            h("[INFO] IMP(-2,IMP): 1970-01-01-00:00:00.000.000 1 (device_id:0 die_id:0) [IMP] x");
        assert_eq!((x.pid, &*x.pname(), x.module), (-2, "IMP", "IMP"));
    }

    #[test]
    fn pname_with_parenthesis_takes_last_close_before_timestamp() {
        let x = h("[INFO] APP(5,a(b)):2025-01-01-00:00:00.000.000 x");
        assert_eq!(x.pname(), "a(b)");
    }

    /// The byte-at-a-time reading of [`TIME_SHAPE`].
    fn shape_by_bytes(b: &[u8; 27]) -> bool {
        TIME_SHAPE.iter().zip(b).all(|(&s, &c)| {
            if s == b'9' {
                c.is_ascii_digit()
            } else {
                c == s
            }
        })
    }

    #[test]
    fn time_shape_by_words_equals_by_bytes_for_every_byte_at_every_place() {
        let good = *b"2025-05-08-09:56:18.522.534";
        assert!(has_time_shape(&good));
        for at in 0..27 {
            for c in 0..=255u8 {
                let mut b = good;
                b[at] = c;
                assert_eq!(
                    has_time_shape(&b),
                    shape_by_bytes(&b),
                    "byte {c:#04x} at {at}"
                );
                // Two bytes wrong at once: a carry out of one must not hide the other.
                let mut b2 = b;
                b2[(at + 1) % 27] = 0xFF;
                assert_eq!(
                    has_time_shape(&b2),
                    shape_by_bytes(&b2),
                    "{c:#04x} at {at}, 0xff after"
                );
            }
        }
    }

    #[test]
    fn every_field_of_a_timestamp_reads_back() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for _ in 0..20_000 {
            let t = PlogTime {
                year: next(10_000) as u16,
                month: next(100) as u8,
                day: next(100) as u8,
                hour: next(100) as u8,
                minute: next(100) as u8,
                second: next(100) as u8,
                milli: next(1000) as u16,
                micro: next(1000) as u16,
            };
            assert_eq!(PlogTime::parse(&t.to_string()), Some(t));
        }
    }

    #[test]
    fn cached_second_gives_parse_header_for_every_timestamp() {
        let mut cache = HeaderCache::new();
        for t in [
            "2025-01-01-00:00:00.000.001",
            "2025-01-01-00:00:00.999.999",
            "2025-01-01-00:00:00.000.00x",
            "2025-01-01-00:00:00,000.002",
            "2025-01-01-00:00:00.0000002",
            "2025-01-01-00:00:00.000.0",
            "2025-01-01-00:00:01.000.003",
            "2025-01-01-00:00:0x.000.004",
            "2025-01-01-00:00:01.000.005",
            "2025-01-02-00:00:01.000.006",
            "2025-01-01-00:00:01.000.007",
            "2025-01-01-00:00:01.\u{ff}00.008",
            "2025-01-01-00:00:01.000.:09",
        ] {
            for line in [
                format!("[INFO] GE(1,python3):{t} text"),
                format!("[INFO] GE(1,python3): {t}"),
            ] {
                let got = cache
                    .parse(line.as_bytes())
                    .map(|(h, rest, _)| (h.clone(), rest.to_vec()));
                let want = parse_header(line.as_bytes()).map(|(h, rest)| (h, rest.to_vec()));
                assert_eq!(got, want, "{line}");
            }
        }
    }

    #[test]
    fn cache_gives_parse_header_for_every_line() {
        let lines: &[&[u8]] = &[
            b"[INFO] GE(1,python3):2025-01-01-00:00:00.000.001 a",
            b"[INFO] GE(1,python3):2025-01-01-00:00:00.000.002 b",
            b"[INFO] GE(1,python3):2025-01-01-00:00:00.000.00x c",
            b"[INFO] GE(1,python3):2025-01-01-00:00:00.000.003",
            b"[INFO] GE(1,python3):x):2025-01-01-00:00:00.000.004 a name holding ):",
            b"[INFO] GE(1,python3): 2025-01-01-00:00:00.000.005 space",
            b"[INFO] GE(1,python3):",
            b"continuation",
            b"[INFO] GE(1,python3):2025-01-01-00:00:00.000.006 after a continuation",
            b"[INFO] GE(1,python3,x):2025-01-01-00:00:00.000.007 look-alike",
            b"[ERROR] GE(1,python3):2025-01-01-00:00:00.000.008 level",
            b"[ERROR] GE(2,python3):2025-01-01-00:00:00.000.009 pid",
            b"[ERROR] GE(2,py\xff):2025-01-01-00:00:00.000.010 name",
            b"[ERROR] GE(2,py\xff):2025-01-01-00:00:00.000.011 same name",
        ];
        let long = [
            b"[INFO] GE(1,".as_slice(),
            &[b'p'; 300],
            b"):2025-01-01-00:00:00.000.012 x",
        ]
        .concat();
        let mut cache = HeaderCache::new();
        let mut found = Vec::new();
        for line in lines.iter().copied().chain([&long[..], &long[..]]) {
            let got = cache
                .parse(line)
                .map(|(h, rest, c)| (h.clone(), rest.to_vec(), c));
            let want = parse_header(line).map(|(h, rest)| (h, rest.to_vec()));
            assert_eq!(
                got.as_ref().map(|(h, rest, _)| (h.clone(), rest.clone())),
                want,
                "{}",
                String::from_utf8_lossy(line)
            );
            found.push(got.map(|g| g.2));
        }
        use Cached::{Hit, New, Uncached};
        assert_eq!(
            found,
            [
                Some(New(0)),
                Some(Hit(0)),
                None,
                Some(Hit(0)),
                Some(New(1)), // a name holding `):`
                Some(Hit(0)), // the older prefix, with a space before the timestamp
                None,
                None,
                Some(Hit(0)),
                None,
                Some(New(2)),
                Some(New(3)),
                Some(New(0)), // the oldest entry is replaced
                Some(Hit(0)),
                Some(Uncached),
                Some(Uncached),
            ]
        );
    }

    #[test]
    fn level_from_user_names() {
        assert_eq!(Level::from_name("warn"), Some(Level::Warning));
        assert_eq!(Level::from_name("3"), Some(Level::Error));
        assert_eq!(Level::from_name("9"), Some(Level::Numeric(9)));
        assert_eq!(Level::from_name("loud"), None);
    }

    #[test]
    fn bounds() {
        let t = PlogTime::parse_bound("2025-05-08 09:56", BoundEnd::Lower).unwrap();
        assert_eq!(t.to_string(), "2025-05-08-09:56:00.000.000");
        let t = PlogTime::parse_bound("2025-05-08 09:56", BoundEnd::Upper).unwrap();
        assert_eq!(t.to_string(), "2025-05-08-09:56:59.999.999");
        let t = PlogTime::parse_bound("2025-05", BoundEnd::Lower).unwrap();
        assert_eq!(t.to_string(), "2025-05-01-00:00:00.000.000");
        let t = PlogTime::parse_bound("2025-05-08", BoundEnd::Upper).unwrap();
        assert_eq!(t.to_string(), "2025-05-08-23:59:59.999.999");
        let full = "2025-05-08-09:56:20.764.120";
        for end in [BoundEnd::Lower, BoundEnd::Upper] {
            assert_eq!(PlogTime::parse_bound(full, end).unwrap().to_string(), full);
        }
        assert!(PlogTime::parse_bound("yesterday", BoundEnd::Upper).is_none());
    }
}
