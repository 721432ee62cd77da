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
