//! Streaming line reader: fixed-size buffer, `memchr` line splitting, no whole-file reads.
//! Memory stays flat in the file size (one buffer, grown only for a single line longer than it).

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

const BUFFER: usize = 1 << 20;

/// Calls `f(line_no, line)` for every physical line of the file at `path`, without the `\n` or
/// `\r\n` terminator. Line numbers are 1-based. A final line without `\n` is included.
pub fn for_each_line(path: &Path, mut f: impl FnMut(u64, &[u8])) -> io::Result<()> {
    let mut file = File::open(path)?;
    let mut buf = vec![0u8; BUFFER];
    let mut start = 0usize; // first unconsumed byte
    let mut end = 0usize; // end of valid data
    let mut no = 0u64;
    loop {
        if end == buf.len() {
            if start > 0 {
                buf.copy_within(start..end, 0);
                end -= start;
                start = 0;
            } else {
                buf.resize(buf.len() * 2, 0);
            }
        }
        let n = match file.read(&mut buf[end..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if n == 0 {
            if start < end {
                no += 1;
                f(no, strip_cr(&buf[start..end]));
            }
            return Ok(());
        }
        let chunk_end = end + n;
        let mut pos = start;
        for nl in memchr::memchr_iter(b'\n', &buf[end..chunk_end]) {
            let at = end + nl;
            no += 1;
            f(no, strip_cr(&buf[pos..at]));
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

    #[test]
    fn lines_across_buffer_boundaries_long_lines_crlf_and_no_final_newline() {
        let mut expected: Vec<Vec<u8>> = Vec::new();
        let mut data = Vec::new();
        for i in 0..40_000u32 {
            let line =
                format!("[INFO] GE({i},p):2025-01-01-00:00:00.000.000 line {i}").into_bytes();
            data.extend_from_slice(&line);
            data.extend_from_slice(if i % 7 == 0 { b"\r\n" } else { b"\n" });
            expected.push(line);
        }
        let long = vec![b'x'; BUFFER * 2 + 17];
        data.extend_from_slice(&long);
        data.push(b'\n');
        expected.push(long);
        data.extend_from_slice(b"last");
        expected.push(b"last".to_vec());
        let path =
            std::env::temp_dir().join(format!("npgx-reader-test-{}.log", std::process::id()));
        std::fs::write(&path, &data).unwrap();
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        for_each_line(&path, |no, line| got.push((no, line.to_vec()))).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(got.len(), expected.len());
        for (i, ((no, line), want)) in got.iter().zip(&expected).enumerate() {
            assert_eq!(*no, i as u64 + 1);
            assert_eq!(line, want, "line {no}");
        }
    }
}
