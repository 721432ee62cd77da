//! Reading the tensor blocks of one open file, with positional reads into the caller's buffer.
//!
//! One rule for a file that changes while it is read: a positional read that ends early is
//! [`ReadError::Changed`] — the caller drops what it computed from the file and reports it as
//! changed, never a tensor made of what was left. The bytes exist only for the consumer's call.

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;

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

/// An open file.
pub struct Blocks {
    file: File,
    len: u64,
}

impl Blocks {
    /// `file` of `len` bytes (its length when it was listed).
    pub fn new(file: File, len: u64) -> Blocks {
        Blocks { file, len }
    }

    /// Calls `f` with the `len` bytes at `offset`, read into `buf` (the caller bounds `len`).
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
        let n = usize::try_from(len)
            .map_err(|_| ReadError::Io(format!("{len} bytes do not fit in memory")))?;
        buf.resize(n, 0);
        match self.file.read_exact_at(buf, offset) {
            Ok(()) => Ok(f(buf)),
            Err(e) if e.kind() == ErrorKind::UnexpectedEof => Err(ReadError::Changed { offset }),
            Err(e) => Err(ReadError::Io(format!(
                "read at offset {offset} failed: {e}"
            ))),
        }
    }

    /// Whether the file still holds every byte it had when it was listed (checked after
    /// reading it: a file truncated after its last read is reported as changed too).
    pub fn still_whole(&self) -> bool {
        self.file.metadata().is_ok_and(|m| m.len() >= self.len)
    }
}
