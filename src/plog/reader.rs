//! Streaming line reader: a file is read in chunks of [`CHUNK`] bytes with `pread` into reused
//! buffers, never whole, or, when [`map_chunks`]'s [`Mode`] maps it, in place through a
//! [`Mapping`] (no copy; each chunk's pages released when it is done). Memory stays flat in
//! the file size.
//!
//! A chunk owns the lines that *start* inside its byte range: it reads from the page boundary at
//! or before the byte before its range (that byte says whether a line starts at its first byte;
//! the read starts at a page boundary for the kernel's copy, see [`read_chunk`]) and, for its
//! last line, past its end up to the next newline. So chunks can be read and split
//! independently, one per thread
//! ([`map_chunks`]), and their lines, taken chunk after chunk, are the file's lines in order —
//! the same lines [`for_each_line`] gives one at a time.
//!
//! A file without a size (a pipe such as `<(zcat plog.gz)`, a `/proc` file) cannot be cut by
//! offset: it is read front to back with `read` into one buffer, on the calling thread.
//!
//! Lines are passed on without the `\n` or `\r\n` terminator. A line longer than [`MAX_LINE`]
//! (after the `\r` is dropped) is passed on as its first [`MAX_LINE`] bytes; the rest is not kept
//! and is counted in [`ReadStats`] (a 2 GB file without a newline costs one chunk buffer).

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Mutex};

use crate::dump::blocks::{place_in_page, PAGE};
use crate::dump::mapped::{Mapping, Mode, Vanished};

/// The longest line passed on whole; longer lines are cut to this head.
pub const MAX_LINE: usize = 1 << 20;
/// Bytes of a file one chunk covers.
pub const CHUNK: u64 = 4 << 20;
/// Bytes read at a time past a chunk's end, to finish its last line.
const STEP: usize = 64 << 10;
/// Bytes of a mapped file searched at a time past a chunk's end for its last line's newline.
const SCAN: usize = 4 << 20;
/// Chunks per thread being read, mapped or waiting to be reduced (see [`map_chunks`]).
const IN_FLIGHT_PER_THREAD: usize = 4;

/// What a read saw besides the lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    pub lines: u64,
    /// Lines longer than [`MAX_LINE`].
    pub long_lines: u64,
    /// Bytes dropped from those lines.
    pub dropped_bytes: u64,
}

/// The lines of one chunk, in a buffer: `data[begin..end]`, `\n`-separated; the last line has no
/// `\n` when it ends the file or when it was cut (`tail_dropped` bytes of it were not kept).
/// Bytes past `end` are left over from an earlier chunk.
#[derive(Default)]
struct Chunk {
    data: Vec<u8>,
    begin: usize,
    end: usize,
    tail_dropped: u64,
}

/// One chunk's lines, handed to the `map` of [`map_chunks`]: `\n`-separated in `text`, the last
/// without its `\n` when it ends the file or was cut (`tail_dropped` bytes of it not kept).
#[derive(Default)]
pub struct ChunkLines<'a> {
    text: &'a [u8],
    tail_dropped: u64,
}

impl<'a> ChunkLines<'a> {
    fn new(text: &'a [u8], tail_dropped: u64) -> ChunkLines<'a> {
        ChunkLines { text, tail_dropped }
    }

    fn of(c: &'a Chunk) -> ChunkLines<'a> {
        ChunkLines::new(c.data.get(c.begin..c.end).unwrap_or(&[]), c.tail_dropped)
    }
}

impl ChunkLines<'_> {
    /// Calls `f(line_no, line)` for every line of the chunk; line numbers count from 1 within the
    /// chunk (the caller adds the lines of the chunks before).
    pub fn for_each(&self, mut f: impl FnMut(u64, &[u8])) -> ReadStats {
        let mut stats = ReadStats::default();
        let mut emit = |line: &[u8], dropped: u64| {
            stats.lines += 1;
            // A whole line loses its `\r`; a head cut by the reader is its first bytes as they are.
            let line = match dropped {
                0 => line.strip_suffix(b"\r").unwrap_or(line),
                _ => line,
            };
            let (head, extra) = if line.len() > MAX_LINE {
                (&line[..MAX_LINE], (line.len() - MAX_LINE) as u64)
            } else {
                (line, 0)
            };
            if dropped + extra > 0 {
                stats.long_lines += 1;
                stats.dropped_bytes += dropped + extra;
            }
            f(stats.lines, head);
        };
        let text = self.text;
        let mut pos = 0;
        for nl in memchr::memchr_iter(b'\n', text) {
            emit(&text[pos..nl], 0);
            pos = nl + 1;
        }
        if pos < text.len() {
            emit(&text[pos..], self.tail_dropped);
        }
        stats
    }
}

/// The size of a regular file that has one; `None` for pipes, devices and `/proc` files, which
/// are read front to back.
fn sized(file: &File) -> io::Result<Option<u64>> {
    let meta = file.metadata()?;
    Ok((meta.is_file() && meta.len() > 0).then_some(meta.len()))
}

/// Reads into `buf` from `offset` until `buf` is full or the file ends; returns the bytes read.
fn read_full_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Makes `buf` at least `len` bytes long. The buffer only grows: its bytes are written once,
/// not zeroed again for every chunk read into it.
fn room(buf: &mut Vec<u8>, len: usize) {
    if buf.len() < len {
        buf.resize(len, 0);
    }
}

/// Reads the lines that start in `start..end` of `file` (`len` bytes long) into `c`.
///
/// The read starts at the page boundary at or before `start - 1` (the byte that says whether a
/// line starts at `start`) and lands at a page-aligned place of the buffer ([`place_in_page`]):
/// reading from `start - 1` into a `malloc`ed buffer (16 bytes past a page) put every chunk's
/// copy 17 bytes past its source, where an AMD Zen 3's `rep movsb` ran 5× slower (513 MiB of
/// page cache with `dd bs=4M`: 0.20–0.25 s at 1, 8 and 16 bytes past, 0.04 s at 0 and from 32
/// to 4000 bytes past; docs/performance.md).
fn read_chunk(file: &File, len: u64, start: u64, end: u64, c: &mut Chunk) -> io::Result<()> {
    let from = start.saturating_sub(1) / PAGE as u64 * PAGE as u64;
    let want = usize::try_from(end - from).unwrap_or(usize::MAX);
    room(&mut c.data, want.saturating_add(PAGE));
    let base = place_in_page(&c.data, from);
    let n = read_full_at(file, &mut c.data[base..base + want], from)?;
    (c.begin, c.end, c.tail_dropped) = (0, 0, 0);
    // A line starts at `start` when it is the file's first byte or follows a newline: newlines at
    // `start - 1 ..= end - 2` start lines inside the range.
    if start > 0 {
        // `start - 1 - from` < PAGE.
        let lo = base + (start - 1 - from) as usize;
        let hi = base + n.min(want - 1);
        match c.data.get(lo..hi).and_then(|b| memchr::memchr(b'\n', b)) {
            Some(i) => c.begin = lo + i + 1,
            None => return Ok(()),
        }
    } else {
        c.begin = base;
    }
    let mut filled = base + n;
    c.end = filled;
    if c.data[base..filled].last() == Some(&b'\n') || end >= len || n < want {
        return Ok(());
    }
    // The last line runs past the range: read on to its newline, keeping at most its head.
    let line_start =
        memchr::memrchr(b'\n', &c.data[c.begin..filled]).map_or(c.begin, |i| c.begin + i + 1);
    let mut at = from + n as u64;
    loop {
        let kept = filled - line_start;
        if kept <= MAX_LINE + 1 {
            room(&mut c.data, filled + STEP);
            let got = read_full_at(file, &mut c.data[filled..filled + STEP], at)?;
            at += got as u64;
            let newline = memchr::memchr(b'\n', &c.data[filled..filled + got]);
            match newline {
                Some(i) => {
                    filled += i + 1;
                    break;
                }
                None if got == 0 => break,
                None => filled += got,
            }
        } else {
            // Too long: keep the head, count the rest (a `\r` before the newline is not counted).
            let mut dropped = (kept - MAX_LINE) as u64;
            let mut prev_cr = c.data[filled - 1] == b'\r';
            filled = line_start + MAX_LINE;
            let mut scratch = vec![0u8; STEP];
            loop {
                let got = read_full_at(file, &mut scratch, at)?;
                at += got as u64;
                let bytes = &scratch[..got];
                match memchr::memchr(b'\n', bytes) {
                    Some(i) => {
                        dropped += i as u64;
                        if (i > 0 && bytes[i - 1] == b'\r') || (i == 0 && prev_cr) {
                            dropped -= 1;
                        }
                        break;
                    }
                    None if got == 0 => {
                        // The file ends the line: a `\r` at its end is not counted either.
                        dropped -= u64::from(prev_cr);
                        break;
                    }
                    None => {
                        dropped += got as u64;
                        prev_cr = bytes.last() == Some(&b'\r');
                    }
                }
            }
            c.tail_dropped = dropped;
            break;
        }
    }
    c.end = filled;
    Ok(())
}

/// `map` over the lines that start in `start..end` of the mapped file (`len` bytes long), as
/// [`read_chunk`] finds them, read in place: no copy. The chunk's last line is cut to its head
/// and the rest counted when it is longer than [`MAX_LINE`], as `read_chunk` cuts it. Every page
/// the chunk touched is released afterwards (those past a long last line's head during the
/// search), so the resident set stays that of the chunks in flight. `None` when the mapping
/// could not be read (the caller reads the chunk with `pread`).
fn mapped_chunk<R>(
    m: &Mapping,
    len: u64,
    start: u64,
    end: u64,
    map: &impl Fn(ChunkLines<'_>) -> R,
) -> Option<io::Result<R>> {
    // From the byte before the range (it says whether a line starts at `start`) to the file's
    // end (the last line may run on past `end`).
    let from = start.saturating_sub(1);
    let read = m.read(from, len - from, |bytes| {
        // Offsets into `bytes`; `end - 1 - from` and `end - from` are within it (`start < end`).
        let (last, stop) = ((end - 1 - from) as usize, (end - from) as usize);
        let begin = if start == 0 {
            Some(0)
        } else {
            // Newlines at `start - 1 ..= end - 2` start lines inside the range.
            memchr::memchr(b'\n', &bytes[..last]).map(|i| i + 1)
        };
        let Some(begin) = begin else {
            return (map(ChunkLines::default()), stop);
        };
        if bytes[last] == b'\n' || end >= len {
            let text = &bytes[begin..stop];
            return (map(ChunkLines::new(text, 0)), stop);
        }
        // The last line runs on past the range: to its newline or the file's end, the pages
        // past its head released as the search goes (a file of one 2 GB line maps a step at a
        // time); only its head is handed over, the rest counted, as `read_chunk` does.
        let line_start =
            memchr::memrchr(b'\n', &bytes[begin..stop]).map_or(begin, |i| begin + i + 1);
        let head_end = line_start + MAX_LINE + 2;
        let mut pos = stop;
        let finish = loop {
            let to = bytes.len().min(pos + SCAN);
            if let Some(i) = memchr::memchr(b'\n', &bytes[pos..to]) {
                break pos + i + 1;
            }
            if pos >= head_end {
                m.release(from + pos as u64, (to - pos) as u64);
            }
            if to == bytes.len() {
                break to;
            }
            pos = to;
        };
        let line = &bytes[line_start..finish];
        let line = line.strip_suffix(b"\n").unwrap_or(line);
        let content = line.strip_suffix(b"\r").unwrap_or(line).len();
        let lines = if content > MAX_LINE {
            let text = &bytes[begin..line_start + MAX_LINE];
            ChunkLines::new(text, (content - MAX_LINE) as u64)
        } else {
            ChunkLines::new(&bytes[begin..finish], 0)
        };
        (map(lines), finish)
    });
    match read {
        Ok(Ok((r, read))) => {
            // Every page this chunk touched, its neighbours' included: whichever chunk comes
            // last to a shared page, it does not stay mapped.
            m.release(from, read as u64);
            Some(Ok(r))
        }
        Ok(Err(Vanished)) => Some(Err(io::Error::other(
            "the file was truncated while it was read",
        ))),
        // Not read (this thread holds its deepest guarded reads already): `pread` instead.
        Err(_) => None,
    }
}

/// A file that cannot be read at offsets or gives no size (a pipe, `/proc`), front to back with
/// `read` into one buffer: calls `f(line, dropped)` for every line (its head when it is longer
/// than [`MAX_LINE`], `dropped` the bytes not kept).
fn stream_lines(mut file: impl Read, mut f: impl FnMut(&[u8], u64)) -> io::Result<ReadStats> {
    let mut buf = vec![0u8; 2 * MAX_LINE];
    let mut start = 0usize; // first unconsumed byte
    let mut end = 0usize; // end of valid data
    let mut stats = ReadStats::default();
    // `buf[..MAX_LINE]` holds the head of an over-long line whose rest is being dropped.
    let mut skipping = false;
    let mut emit = |stats: &mut ReadStats, line: &[u8], dropped: usize| {
        stats.lines += 1;
        // As `ChunkLines::for_each`: only a whole line loses its `\r`.
        let line = match dropped {
            0 => line.strip_suffix(b"\r").unwrap_or(line),
            _ => line,
        };
        let (head, extra) = if line.len() > MAX_LINE {
            (&line[..MAX_LINE], line.len() - MAX_LINE)
        } else {
            (line, 0)
        };
        if dropped + extra > 0 {
            stats.long_lines += 1;
            stats.dropped_bytes += (dropped + extra) as u64;
        }
        f(head, (dropped + extra) as u64);
    };
    let mut dropped = 0usize;
    // Whether the last byte dropped while skipping was a `\r` (the one before a newline or the
    // file's end, if nothing follows it, is not counted).
    let mut dropped_cr = false;
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                // One line fills the buffer: keep its head, drop the rest up to its newline.
                dropped += end - MAX_LINE;
                dropped_cr = buf[end - 1] == b'\r';
                end = MAX_LINE;
                skipping = true;
            }
        }
        let n = match file.read(&mut buf[end..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            if start < end {
                if skipping {
                    let cr = if end > MAX_LINE {
                        buf[end - 1] == b'\r'
                    } else {
                        dropped_cr
                    };
                    dropped = dropped + (end - MAX_LINE) - usize::from(cr);
                    emit(&mut stats, &buf[..MAX_LINE], dropped);
                } else {
                    emit(&mut stats, &buf[start..end], 0);
                }
            }
            return Ok(stats);
        }
        let chunk_end = end + n;
        let mut pos = start;
        for nl in memchr::memchr_iter(b'\n', &buf[end..chunk_end]) {
            let at = end + nl;
            if skipping {
                // A `\r` before the newline is not counted (as in `read_chunk`).
                let cr = if at > MAX_LINE {
                    buf[at - 1] == b'\r'
                } else {
                    dropped_cr
                };
                dropped = dropped + (at - MAX_LINE) - usize::from(cr);
                emit(&mut stats, &buf[..MAX_LINE], dropped);
                skipping = false;
                dropped = 0;
            } else {
                emit(&mut stats, &buf[pos..at], 0);
            }
            pos = at + 1;
        }
        start = pos;
        end = chunk_end;
        if start == end {
            start = 0;
            end = 0;
        }
    }
}

/// Calls `f(line_no, line)` for every line of the file at `path`, in order, on this thread.
/// Line numbers are 1-based. A final line without `\n` is included.
pub fn for_each_line(path: &Path, mut f: impl FnMut(u64, &[u8])) -> io::Result<ReadStats> {
    for_each_line_while(path, |no, line| {
        f(no, line);
        true
    })
}

/// Bytes of an input's head kept for what the whole text says: the versions and the framework it
/// names (`npgx_parsers::versions`), and the wording rules of a report without an error (such
/// reports are short).
pub const HEAD: usize = 256 * 1024;

/// Appends a line to an input's head (lossy UTF-8, then a newline) while the head is under
/// [`HEAD`] bytes, cut at a character boundary.
pub fn push_head(head: &mut String, line: &[u8]) {
    if head.len() >= HEAD {
        return;
    }
    let s = String::from_utf8_lossy(line);
    let room = HEAD - head.len();
    let cut = (0..=room.min(s.len()))
        .rev()
        .find(|i| s.is_char_boundary(*i))
        .unwrap_or(0);
    head.push_str(&s[..cut]);
    head.push('\n');
}

/// The framework a file's program runs on, read from its first [`HEAD`] bytes as `triage
/// classify` reads them; unknown when the file cannot be read again (a pipe the scan has used
/// up reads as empty).
pub fn framework_of(path: &Path) -> npgx_parsers::versions::Framework {
    let mut head = Vec::new();
    let read = File::open(path).and_then(|f| f.take(HEAD as u64).read_to_end(&mut head));
    match read {
        Ok(_) => npgx_parsers::versions::stated(&String::from_utf8_lossy(&head)).framework,
        Err(_) => npgx_parsers::versions::Framework::default(),
    }
}

/// [`for_each_line`] that stops reading after the chunk in which `f` first returns false (the
/// lines after it in that chunk are still handed over).
pub fn for_each_line_while(
    path: &Path,
    mut f: impl FnMut(u64, &[u8]) -> bool,
) -> io::Result<ReadStats> {
    let file = File::open(path)?;
    let Some(len) = sized(&file)? else {
        return for_each_line_in(file, |no, line| {
            f(no, line);
        });
    };
    let mut chunk = Chunk::default();
    let mut total = ReadStats::default();
    let mut start = 0;
    let mut more = true;
    while start < len && more {
        let end = len.min(start + CHUNK);
        read_chunk(&file, len, start, end, &mut chunk)?;
        let base = total.lines;
        let s = ChunkLines::of(&chunk).for_each(|no, line| more &= f(base + no, line));
        total.lines += s.lines;
        total.long_lines += s.long_lines;
        total.dropped_bytes += s.dropped_bytes;
        start = end;
    }
    Ok(total)
}

/// Calls `f(line_no, line)` for every line read front to back from `reader` (a pipe, text
/// pasted into an agent's request), with the same line rules as [`for_each_line`].
pub fn for_each_line_in(reader: impl Read, mut f: impl FnMut(u64, &[u8])) -> io::Result<ReadStats> {
    let mut no = 0;
    stream_lines(reader, |line, _| {
        no += 1;
        f(no, line);
    })
}

/// Reads the file at `path` in chunks of `chunk` bytes on the rayon pool: `map` turns each
/// chunk's lines into a value on a worker thread, and `reduce` gets the values in file order on
/// this thread while the next chunks are being mapped. A chunk is started whenever one is
/// reduced, so the workers never wait for each other; at most [`IN_FLIGHT_PER_THREAD`] chunks per
/// thread are read or waiting, so memory does not grow with the file. When `reduce` answers
/// `Break` (its output went to a closed pipe), no further chunk is read and the ones in flight
/// are dropped (a pipe or other unsized input is read to its end, unmapped). A read error stops
/// the file: the values of the chunks before it are reduced, then the error is returned.
///
/// Called on a rayon worker (where blocking for results could stall the pool), the chunks are
/// mapped and reduced one after the other on that thread.
pub fn map_chunks<R: Send>(
    path: &Path,
    chunk: u64,
    mode: Mode,
    map: impl Fn(ChunkLines<'_>) -> R + Sync,
    reduce: impl FnMut(R) -> ControlFlow<()>,
) -> io::Result<()> {
    let window = IN_FLIGHT_PER_THREAD * rayon::current_num_threads();
    map_chunks_within(path, (chunk, mode, window), map, reduce)
}

/// [`map_chunks`] with at most `window` chunks read or waiting at once, for values that hold a
/// chunk's worth of data (`plog --records`' records), whose memory would otherwise grow with
/// the core count.
pub fn map_chunks_within<R: Send>(
    path: &Path,
    (chunk, mode, window): (u64, Mode, usize),
    map: impl Fn(ChunkLines<'_>) -> R + Sync,
    mut reduce: impl FnMut(R) -> ControlFlow<()>,
) -> io::Result<()> {
    let file = File::open(path)?;
    let Some(len) = sized(&file)? else {
        // Front to back on this thread, in chunks of whole lines (a cut line ends its chunk).
        let mut c = Chunk::default();
        // Whether `reduce` asked to stop (the rest of the stream is read past, not mapped).
        let mut stopped = false;
        let mut flush = |c: &mut Chunk, tail_dropped: u64| {
            (c.begin, c.end, c.tail_dropped) = (0, c.data.len(), tail_dropped);
            let stop = reduce(map(ChunkLines::of(c))).is_break();
            c.data.clear();
            stop
        };
        stream_lines(file, |line, dropped| {
            if stopped {
                return;
            }
            c.data.extend_from_slice(line);
            if dropped > 0 {
                stopped = flush(&mut c, dropped);
                return;
            }
            c.data.push(b'\n');
            if c.data.len() as u64 >= chunk {
                stopped = flush(&mut c, 0);
            }
        })?;
        if !stopped && !c.data.is_empty() {
            flush(&mut c, 0);
        }
        return Ok(());
    };
    let chunk = chunk.max(1);
    let count = usize::try_from(len.div_ceil(chunk)).unwrap_or(usize::MAX);
    let mapping = Mapping::new(&file, len, mode);
    let buffers: Mutex<Vec<Chunk>> = Mutex::new(Vec::new());
    let run = |k: usize| -> io::Result<R> {
        let start = k as u64 * chunk;
        if let Some(out) = mapping
            .as_ref()
            .and_then(|m| mapped_chunk(m, len, start, len.min(start + chunk), &map))
        {
            return out;
        }
        let mut c = buffers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop()
            .unwrap_or_default();
        let read = read_chunk(&file, len, start, len.min(start + chunk), &mut c);
        let out = read.map(|()| map(ChunkLines::of(&c)));
        buffers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(c);
        out
    };
    if rayon::current_thread_index().is_some() {
        for k in 0..count {
            if reduce(run(k)?).is_break() {
                break;
            }
        }
        return Ok(());
    }
    let window = window.max(1);
    let (tx, rx) = mpsc::channel::<(usize, io::Result<R>)>();
    let mut failed = None;
    // Set when the reading stops early: the chunks started before are not read.
    let stop = AtomicBool::new(false);
    rayon::in_place_scope(|scope| {
        let (run, stop) = (&run, &stop);
        let spawn = |k: usize| {
            let tx = tx.clone();
            // The receiver outlives the scope; a send cannot fail before it is dropped.
            scope.spawn(move |_| {
                if !stop.load(Ordering::Relaxed) {
                    drop(tx.send((k, run(k))));
                }
            });
        };
        let mut next = count.min(window);
        (0..next).for_each(spawn);
        // Values that arrived before the ones ahead of them, by chunk index.
        let mut waiting: BTreeMap<usize, io::Result<R>> = BTreeMap::new();
        let mut want = 0;
        while want < next {
            let Ok((k, value)) = rx.recv() else { break };
            waiting.insert(k, value);
            while let Some(value) = waiting.remove(&want) {
                want += 1;
                match value {
                    Ok(v) => {
                        if reduce(v).is_break() {
                            stop.store(true, Ordering::Relaxed);
                            return;
                        }
                    }
                    Err(e) => {
                        failed = Some(e);
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                }
                if next < count {
                    spawn(next);
                    next += 1;
                }
            }
        }
    });
    failed.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file of its own for every call: the tests run in parallel in one process.
    fn temp(data: &[u8], name: &str) -> std::path::PathBuf {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!(
            "npgx-reader-test-{name}-{}-{k}.log",
            std::process::id()
        ));
        std::fs::write(&path, data).unwrap();
        path
    }

    #[test]
    fn reading_stops_after_the_chunk_where_the_callback_says_so() {
        // Three chunks of 64-byte lines; stop at line 10: the first chunk is read to its end,
        // nothing after it.
        let line = [b'x'; 63];
        let mut data = Vec::new();
        while (data.len() as u64) < 3 * CHUNK {
            data.extend_from_slice(&line);
            data.push(b'\n');
        }
        let path = temp(&data, "while");
        let mut seen = 0u64;
        let stats = for_each_line_while(&path, |no, _| {
            seen = no;
            no < 10
        })
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(seen, CHUNK / 64);
        assert_eq!(stats.lines, CHUNK / 64);
    }

    #[test]
    fn a_files_framework_is_read_from_its_head_only() {
        use npgx_parsers::versions::Framework;
        let path = temp(b"[ERROR] KERNEL(1,f,python):2023-10-13-09:30:47.546.313 [mindspore/ccsrc/kernel/oplib/op_info_utils.cc:172] LoadOpInfoJson] Get op info json suffix path failed\n", "ms");
        assert_eq!(framework_of(&path), Framework::MindSpore);
        std::fs::remove_file(&path).unwrap();
        // A name past the head does not count.
        let mut data = vec![b'x'; HEAD + 10];
        data.extend_from_slice(b"\nggml_cann_init\n");
        let path = temp(&data, "late");
        assert_eq!(framework_of(&path), Framework::Unknown);
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            framework_of(Path::new("/nonexistent/npgx/file.log")),
            Framework::Unknown
        );
        let mut head = String::new();
        push_head(&mut head, &vec![b'y'; HEAD * 2]);
        push_head(&mut head, b"more");
        assert_eq!(head.len(), HEAD + 1);
    }

    fn read_all(data: &[u8], name: &str) -> (Vec<(u64, Vec<u8>)>, ReadStats) {
        let path = temp(data, name);
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let stats = for_each_line(&path, |no, line| got.push((no, line.to_vec()))).unwrap();
        std::fs::remove_file(&path).unwrap();
        (got, stats)
    }

    /// The lines of every chunk of `chunk` bytes, chunk after chunk, numbered across chunks,
    /// copied; mapped too, and the same.
    fn read_chunked(path: &Path, chunk: u64) -> (Vec<(u64, Vec<u8>)>, ReadStats) {
        let copied = read_chunked_in(path, chunk, Mode::Never);
        let mapped = read_chunked_in(path, chunk, Mode::Always);
        assert_eq!(copied.1, mapped.1, "chunk {chunk}: stats");
        assert!(copied.0 == mapped.0, "chunk {chunk}: mapped lines differ");
        copied
    }

    fn read_chunked_in(path: &Path, chunk: u64, mode: Mode) -> (Vec<(u64, Vec<u8>)>, ReadStats) {
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut total = ReadStats::default();
        map_chunks(
            path,
            chunk,
            mode,
            |lines| {
                let mut v: Vec<(u64, Vec<u8>)> = Vec::new();
                let s = lines.for_each(|no, l| v.push((no, l.to_vec())));
                (v, s)
            },
            |(v, s)| {
                let base = total.lines;
                got.extend(v.into_iter().map(|(no, l)| (base + no, l)));
                total.lines += s.lines;
                total.long_lines += s.long_lines;
                total.dropped_bytes += s.dropped_bytes;
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        (got, total)
    }

    // A `Break` from `reduce` (the output went to a closed pipe) starts no further chunk.
    #[test]
    fn a_break_from_reduce_reads_no_further_chunk() {
        let data: Vec<u8> = b"0123456789abcdef0123456789abcde\n".repeat(4096);
        let path = temp(&data, "break");
        let count = data.len() / 64;
        for mode in [Mode::Never, Mode::Always] {
            let mapped = std::sync::atomic::AtomicUsize::new(0);
            let mut reduced = 0;
            map_chunks(
                &path,
                64,
                mode,
                |lines| {
                    mapped.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    lines.for_each(|_, _| {}).lines
                },
                |_| {
                    reduced += 1;
                    ControlFlow::Break(())
                },
            )
            .unwrap();
            let mapped = mapped.into_inner();
            let window = IN_FLIGHT_PER_THREAD * rayon::current_num_threads();
            assert_eq!(reduced, 1, "{mode:?}");
            assert!(
                mapped <= window.min(count),
                "{mode:?}: {mapped} of {count} chunks mapped, {window} in flight at most"
            );
        }
        std::fs::remove_file(&path).unwrap();
    }

    // A file truncated while its mapped chunks are read is an error of the read, not a crash:
    // the pages past the new end vanish under the lines being read.
    #[test]
    fn a_file_truncated_under_its_mapping_is_an_error() {
        let data = [b'x'; 4095].iter().chain(b"\n").copied().cycle();
        let data: Vec<u8> = data.take(64 * 4096).collect();
        let path = temp(&data, "truncated");
        let once = std::sync::Once::new();
        let res = map_chunks(
            &path,
            16 * 4096,
            Mode::Always,
            |lines| {
                once.call_once(|| {
                    let f = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
                    f.set_len(4096).unwrap();
                });
                lines.for_each(|_, _| {}).lines
            },
            |_| ControlFlow::Continue(()),
        );
        std::fs::remove_file(&path).unwrap();
        let e = res.expect_err("the truncation is seen");
        assert!(e.to_string().contains("truncated while it was read"), "{e}");
    }

    // A last line that runs on for tens of MiB is searched through the mapping a step at a
    // time, its pages released as the search goes: the mapping's resident set stays a few
    // steps, not the line.
    #[test]
    fn a_long_last_line_leaves_the_resident_set_flat() {
        let mut data = b"first\n".to_vec();
        data.resize(40 << 20, b'x');
        data.extend_from_slice(b"\nlast\n");
        let path = temp(&data, "long-mapped");
        let resident = || {
            let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
            let mut lines = smaps.lines();
            let at = path.to_str().unwrap();
            lines.by_ref().find(|l| l.ends_with(at))?;
            let rss = lines.find_map(|l| l.strip_prefix("Rss:"))?;
            rss.trim().trim_end_matches(" kB").parse::<u64>().ok()
        };
        let most = std::sync::atomic::AtomicU64::new(0);
        let mut got = Vec::new();
        map_chunks(
            &path,
            CHUNK,
            Mode::Always,
            |lines| {
                let kib = resident().expect("the file is mapped");
                most.fetch_max(kib, std::sync::atomic::Ordering::Relaxed);
                lines.for_each(|_, l| assert!(l.len() <= MAX_LINE)).lines
            },
            |n| {
                got.push(n);
                ControlFlow::Continue(())
            },
        )
        .unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(got.iter().sum::<u64>(), 3);
        let most = most.into_inner();
        assert!(most < 24 << 10, "{most} KiB of a 40 MiB line resident");
    }

    #[test]
    fn a_chunk_lands_at_its_file_offset_in_a_page() {
        // Lines of 100 bytes: one starts at every multiple of 100.
        let data: Vec<u8> = (0..200)
            .flat_map(|i| format!("{i:099}\n").into_bytes())
            .collect();
        let path = temp(&data, "aligned");
        let file = File::open(&path).unwrap();
        let len = data.len() as u64;
        let mut c = Chunk::default();
        for start in [0u64, 1, 4096, 8200, 12345] {
            read_chunk(&file, len, start, len, &mut c).unwrap();
            let first = start.div_ceil(100) * 100;
            let at = c.data.as_ptr().addr() + c.begin;
            assert_eq!(at % PAGE, first as usize % PAGE, "start {start}");
            assert_eq!(
                &c.data[c.begin..c.begin + 100],
                &data[first as usize..first as usize + 100]
            );
        }
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn lines_across_buffer_boundaries_crlf_and_no_final_newline() {
        let mut expected: Vec<Vec<u8>> = Vec::new();
        let mut data = Vec::new();
        for i in 0..80_000u32 {
            let line =
                format!("[INFO] GE({i},p):2025-01-01-00:00:00.000.000 line {i}").into_bytes();
            data.extend_from_slice(&line);
            data.extend_from_slice(if i % 7 == 0 { b"\r\n" } else { b"\n" });
            expected.push(line);
        }
        data.extend_from_slice(b"last");
        expected.push(b"last".to_vec());
        let (got, stats) = read_all(&data, "boundaries");
        assert_eq!(got.len(), expected.len());
        assert_eq!(stats.long_lines, 0);
        for (i, ((no, line), want)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(*no, i as u64 + 1);
            assert_eq!(line, want, "line {no}");
        }
    }

    fn long_data() -> (Vec<u8>, usize, usize, usize) {
        let mut data = b"first\n".to_vec();
        let mid = MAX_LINE + 5;
        data.extend(std::iter::repeat_n(b'a', mid));
        data.push(b'\n');
        let huge = 2 * CHUNK as usize + 17;
        data.extend(std::iter::repeat_n(b'b', huge));
        data.extend_from_slice(b"\r\nafter\n");
        let tail = CHUNK as usize + 3;
        data.extend(std::iter::repeat_n(b'c', tail));
        (data, mid, huge, tail)
    }

    #[test]
    fn long_lines_keep_their_head_and_count_the_rest() {
        let (data, mid, huge, tail) = long_data();
        let (got, stats) = read_all(&data, "long");
        let lens: Vec<(u64, usize)> = got.iter().map(|(n, l)| (*n, l.len())).collect();
        assert_eq!(
            lens,
            [(1, 5), (2, MAX_LINE), (3, MAX_LINE), (4, 5), (5, MAX_LINE)]
        );
        assert_eq!(got[3].1, b"after");
        assert!(got[2].1.iter().all(|b| *b == b'b'));
        assert_eq!(stats.long_lines, 3);
        assert_eq!(
            stats.dropped_bytes,
            (mid - MAX_LINE + huge - MAX_LINE + tail - MAX_LINE) as u64
        );
    }

    // A `\r` ends a line only before its newline or the file's end: in a long line's kept head it
    // is a byte like any other, and past the head it is not counted. Every way of reading agrees.
    #[test]
    fn carriage_returns_in_long_lines() {
        let mut data = vec![b'x'; MAX_LINE - 1];
        data.extend_from_slice(b"\ryyyy\nshort\r\n");
        data.extend(std::iter::repeat_n(b'z', MAX_LINE + 100));
        data.extend_from_slice(b"\r\n");
        data.extend(std::iter::repeat_n(b'w', CHUNK as usize + 10));
        data.push(b'\r');
        let (want, stats) = read_all(&data, "cr");
        let lens: Vec<usize> = want.iter().map(|(_, l)| l.len()).collect();
        assert_eq!(lens, [MAX_LINE, 5, MAX_LINE, MAX_LINE]);
        assert_eq!(want[0].1.last(), Some(&b'\r'));
        assert_eq!(
            (stats.long_lines, stats.dropped_bytes),
            (3, (4 + 100 + CHUNK as usize + 10 - MAX_LINE) as u64)
        );
        let path = temp(&data, "cr-chunked");
        for chunk in [1000, 4096, MAX_LINE as u64 - 3, MAX_LINE as u64 + 1, CHUNK] {
            // (copied and mapped, compared inside)
            let (got, got_stats) = read_chunked(&path, chunk);
            assert_eq!(got_stats, stats, "chunk {chunk}");
            assert!(got == want, "chunk {chunk}: lines differ");
        }
        let mut piped = Vec::new();
        let piped_stats =
            for_each_line_in(&data[..], |no, l| piped.push((no, l.to_vec()))).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(piped_stats, stats);
        assert!(piped == want, "a pipe's lines differ");
    }

    // Any chunk size, on any number of threads, gives the same lines as one pass.
    #[test]
    fn chunks_give_the_lines_of_one_pass() {
        let mut short = Vec::new();
        for i in 0..3000u32 {
            short.extend_from_slice(format!("line {i}\n").as_bytes());
            if i % 11 == 0 {
                short.extend_from_slice(b"\r\n\n\r\n");
            }
        }
        short.extend_from_slice(b"no newline\r");
        let (mut long, ..) = long_data();
        long.push(b'\n');
        long.extend_from_slice(&short);
        for (name, data, chunks) in [
            (
                "short",
                &short,
                &[1, 2, 7, 4095, 4096, 4097, 5000, 1 << 40][..],
            ),
            (
                "long",
                &long,
                &[4096, MAX_LINE as u64 - 1, MAX_LINE as u64 + 1, CHUNK][..],
            ),
        ] {
            let path = temp(data, name);
            let (want, want_stats) = read_all(data, &format!("{name}-one"));
            for &chunk in chunks {
                let (got, stats) = read_chunked(&path, chunk);
                assert_eq!(stats, want_stats, "{name}, chunk {chunk}");
                assert!(got == want, "{name}, chunk {chunk}: lines differ");
            }
            std::fs::remove_file(&path).unwrap();
        }
        // A pipe has no size: read front to back, the same lines.
        let (want, want_stats) = read_all(&long, "pipe-one");
        let file = temp(&long, "pipe");
        let mut child = std::process::Command::new("cat")
            .arg(&file)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let fd = std::os::fd::AsRawFd::as_raw_fd(&stdout);
        let pipe = format!("/proc/self/fd/{fd}");
        let (got, stats) = read_chunked_in(Path::new(&pipe), 4096, Mode::Always);
        child.wait().unwrap();
        std::fs::remove_file(&file).unwrap();
        assert_eq!(stats, want_stats);
        assert!(got == want, "pipe: lines differ");
        // On a rayon worker (a pool of one thread: waiting there for the pool would never end)
        // the chunks are read in turn, with the same lines.
        let path = temp(&short, "on-worker");
        let (want, want_stats) = read_chunked(&path, 1 << 40);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let (got, stats) = pool.install(|| read_chunked(&path, 7));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(stats, want_stats);
        assert!(got == want, "on a worker: lines differ");
        let empty = temp(b"", "empty");
        assert_eq!(read_chunked(&empty, 3), (Vec::new(), ReadStats::default()));
        std::fs::remove_file(&empty).unwrap();
    }
}
