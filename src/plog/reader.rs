//! Streaming line reader: fixed-size buffer, `memchr` line splitting, no whole-file reads.
//! Memory stays flat in the file size: one buffer of [`BUFFER`] bytes, never grown. A line
//! longer than [`MAX_LINE`] is passed on as its first [`MAX_LINE`] bytes; the rest is dropped
//! and counted in [`ReadStats`] (a 2 GB file without a newline costs 2 MiB).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

/// The longest line passed on whole; longer lines are cut to this head.
pub const MAX_LINE: usize = 1 << 20;
const BUFFER: usize = 2 * MAX_LINE;

/// What a read saw besides the lines.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadStats {
    pub lines: u64,
    /// Lines longer than [`MAX_LINE`].
    pub long_lines: u64,
    /// Bytes dropped from those lines.
    pub dropped_bytes: u64,
}

/// Calls `f(line_no, line)` for every physical line of the file at `path`, without the `\n` or
/// `\r\n` terminator. Line numbers are 1-based. A final line without `\n` is included.
pub fn for_each_line(path: &Path, mut f: impl FnMut(u64, &[u8])) -> io::Result<ReadStats> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; BUFFER];
    let mut start = 0usize; // first unconsumed byte
    let mut end = 0usize; // end of valid data
    let mut stats = ReadStats::default();
    // `buf[..MAX_LINE]` holds the head of an over-long line whose rest is being dropped.
    let mut skipping = false;
    let mut emit = |stats: &mut ReadStats, line: &[u8], dropped: usize| {
        stats.lines += 1;
        let line = strip_cr(line);
        let (head, extra) = if line.len() > MAX_LINE {
            (&line[..MAX_LINE], line.len() - MAX_LINE)
        } else {
            (line, 0)
        };
        if dropped + extra > 0 {
            stats.long_lines += 1;
            stats.dropped_bytes += (dropped + extra) as u64;
        }
        f(stats.lines, head);
    };
    let mut dropped = 0usize;
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                // One line fills the buffer: keep its head, drop the rest up to its newline.
                dropped += end - MAX_LINE;
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
                    dropped += end - MAX_LINE;
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
                dropped += at - MAX_LINE;
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

fn strip_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(data: &[u8], name: &str) -> (Vec<(u64, Vec<u8>)>, ReadStats) {
        let path = std::env::temp_dir().join(format!(
            "npgx-reader-test-{name}-{}.log",
            std::process::id()
        ));
        std::fs::write(&path, data).unwrap();
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let stats = for_each_line(&path, |no, line| got.push((no, line.to_vec()))).unwrap();
        std::fs::remove_file(&path).unwrap();
        (got, stats)
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

    #[test]
    fn long_lines_keep_their_head_and_count_the_rest() {
        let mut data = b"first\n".to_vec();
        let mid = MAX_LINE + 5;
        data.extend(std::iter::repeat_n(b'a', mid));
        data.push(b'\n');
        let huge = BUFFER * 2 + 17;
        data.extend(std::iter::repeat_n(b'b', huge));
        data.extend_from_slice(b"\nafter\n");
        let tail = BUFFER + 3;
        data.extend(std::iter::repeat_n(b'c', tail));
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
}
