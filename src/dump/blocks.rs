//! Reading the tensor blocks of one open file: mapped, or with positional reads.
//!
//! Files of at least [`MAP_MIN`] bytes are mapped when [`super::mapped::mode`] says so (by
//! default: when the page cache holds all of the file) — guarded against a file truncated under
//! the mapping — and their blocks handed to the consumer where the page cache holds them;
//! smaller files, files that cannot be mapped or are not to be are read with `pread` into the
//! caller's buffer. One rule for a file that changes while it is read, whichever way: a page that vanished under the mapping, or a positional read that
//! ends early, is [`ReadError::Changed`] — the caller drops what it computed from the file and
//! reports it as changed, never a tensor made of what was left.

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;

use super::mapped::{Mapping, Mode, Vanished};

/// Files shorter than this are read with `pread`: for a few pages the mapping's set-up and
/// tear-down (page-table entries, and on `munmap` a flush of the other cores' TLBs) cost more
/// than the copy it saves (docs/performance.md, "mapped reads").
pub const MAP_MIN: u64 = 1 << 20;

/// The page size a positional read keeps its alignment to (see [`place_in_page`]).
pub const PAGE: usize = 4096;

/// Where in `buf` (which has at least [`PAGE`] bytes to spare) to read the bytes at file
/// `offset` so that they sit at the same offset in a page as in the file's pages: the kernel's
/// copy (`rep movsb`) ran about 5× slower on an AMD Zen 3 with the destination a few bytes past
/// the source modulo 4 KiB (docs/performance.md, "per CPU"), and a buffer's place in its page
/// is the allocator's choice.
pub fn place_in_page(buf: &[u8], offset: u64) -> usize {
    ((offset % PAGE as u64) as usize + PAGE - buf.as_ptr().addr() % PAGE) % PAGE
}

/// Why a range could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReadError {
    /// The file lost bytes while it was read (truncated or shrunk): nothing read from it holds.
    Changed { offset: u64 },
    /// Any other read error.
    Io(String),
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Changed { offset } => write!(
                f,
                "the file changed while it was read (bytes at offset {offset} vanished: truncated or shrunk): nothing from it is reported"
            ),
            ReadError::Io(m) => f.write_str(m),
        }
    }
}

/// An open file and, when it is mapped, its mapping.
pub struct Blocks {
    file: File,
    len: u64,
    map: Option<Mapping>,
}

impl Blocks {
    /// `file` of `len` bytes (its length when it was listed), mapped when that pays and `mode`
    /// allows it.
    pub fn new(file: File, len: u64, mode: Mode) -> Blocks {
        let map = (len >= MAP_MIN)
            .then(|| Mapping::new(&file, len, mode))
            .flatten();
        Blocks { file, len, map }
    }

    /// Whether the blocks come from a mapping (then a range of any length costs no buffer).
    pub fn is_mapped(&self) -> bool {
        self.map.is_some()
    }

    /// Starts read-ahead of a range that is about to be read (mapped files only).
    pub fn will_read(&self, offset: u64, len: u64) {
        if let Some(m) = &self.map {
            m.will_read(offset, len);
        }
    }

    /// Calls `f` with the `len` bytes at `offset`: from the mapping (any length), or read into
    /// `buf` (the caller bounds `len`).
    pub fn with_range<R>(
        &self,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
        f: impl for<'a> FnOnce(&'a [u8]) -> R,
    ) -> Result<R, ReadError> {
        let end = offset.checked_add(len).filter(|&e| e <= self.len);
        if end.is_none() {
            return Err(ReadError::Changed { offset });
        }
        let f = match &self.map {
            Some(m) => match m.read(offset, len, f) {
                Ok(r) => return r.map_err(|Vanished| ReadError::Changed { offset }),
                // The thread's guard table is full: read it the other way.
                Err(f) => f,
            },
            None => f,
        };
        let n = usize::try_from(len)
            .map_err(|_| ReadError::Io(format!("{len} bytes do not fit in memory")))?;
        // The buffer only grows: its bytes are not zeroed again for every range.
        if buf.len() < n.saturating_add(PAGE) {
            buf.resize(n.saturating_add(PAGE), 0);
        }
        let base = place_in_page(buf, offset);
        let buf = &mut buf[base..base + n];
        match self.file.read_exact_at(buf, offset) {
            Ok(()) => Ok(f(buf)),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(ReadError::Changed { offset }),
            Err(e) => Err(ReadError::Io(format!(
                "read at offset {offset} failed: {e}"
            ))),
        }
    }

    /// Whether the file still holds every byte it had when it was listed (checked after
    /// reading it: a file truncated after its last guarded read is reported as changed too).
    pub fn still_whole(&self) -> bool {
        self.file.metadata().is_ok_and(|m| m.len() >= self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_positional_read_lands_at_the_files_offset_in_a_page() {
        let path = std::env::temp_dir().join(format!("npgx-blocks-{}.bin", std::process::id()));
        let data: Vec<u8> = (0..3 * PAGE as u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &data).unwrap();
        let blocks = Blocks::new(File::open(&path).unwrap(), data.len() as u64, Mode::Never);
        // A buffer of every size and offset the callers leave behind, every offset in a page.
        let mut buf = Vec::new();
        for (offset, len) in [
            (0, 10),
            (1, 4096),
            (17, 100),
            (4095, 2),
            (4111, 5000),
            (8000, 0),
        ] {
            let (addr, bytes) = blocks
                .with_range(offset, len, &mut buf, |b| (b.as_ptr().addr(), b.to_vec()))
                .unwrap();
            assert_eq!(bytes, &data[offset as usize..(offset + len) as usize]);
            if len > 0 {
                assert_eq!(addr % PAGE, offset as usize % PAGE, "offset {offset}");
            }
        }
        std::fs::remove_file(&path).unwrap();
    }
}
