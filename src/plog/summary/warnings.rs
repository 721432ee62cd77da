//! The warnings of a file's lines: the first [`WARNINGS_PER_FILE`] shown, the rest counted.

use std::path::PathBuf;

use crate::plog::Warning;

/// Most warnings kept per file; the rest are counted in one last warning.
pub(super) const WARNINGS_PER_FILE: usize = 20;

pub(super) const WARN_UNPARSED: &str =
    "starts like a plog header but does not parse; kept as a continuation line";
pub(super) const WARN_BEFORE_FIRST: &str = "text before the first plog header";

pub(super) struct FileWarnings<'a> {
    pub(super) out: &'a mut Vec<Warning>,
    pub(super) path: PathBuf,
    pub(super) count: usize,
}

impl FileWarnings<'_> {
    pub(super) fn push(&mut self, line: u64, message: &str) {
        self.count += 1;
        if self.count <= WARNINGS_PER_FILE {
            self.out.push(Warning {
                file: self.path.clone(),
                line: Some(line),
                message: message.to_owned(),
            });
        }
    }

    pub(super) fn close(self) {
        if self.count > WARNINGS_PER_FILE {
            self.out.push(Warning {
                file: self.path,
                line: None,
                message: format!("{} more warnings not shown", self.count - WARNINGS_PER_FILE),
            });
        }
    }
}

/// Line warnings of one chunk: the first [`WARNINGS_PER_FILE`] of each kind and the counts (a
/// file shows its first ones only). "Before the first header" applies only to the lines before
/// the chunk's first record, and only if no record came before the chunk.
#[derive(Default)]
pub(super) struct ChunkWarnings {
    pub(super) unparsed: Vec<u64>,
    pub(super) unparsed_count: usize,
    pub(super) before_first: Vec<u64>,
    pub(super) before_first_count: usize,
}

impl ChunkWarnings {
    pub(super) fn note(list: &mut Vec<u64>, count: &mut usize, line: u64) {
        *count += 1;
        if list.len() < WARNINGS_PER_FILE {
            list.push(line);
        }
    }

    /// Passes the warnings on to the file's, lines shifted by `offset`.
    pub(super) fn apply(self, fw: &mut FileWarnings<'_>, offset: u64, before_first: bool) {
        let (early, early_count) = if before_first {
            (self.before_first, self.before_first_count)
        } else {
            (Vec::new(), 0)
        };
        let mut a = self.unparsed.iter().peekable();
        let mut b = early.iter().peekable();
        let mut shown = 0;
        loop {
            let take_a = match (a.peek(), b.peek()) {
                (Some(x), Some(y)) => x < y,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => break,
            };
            let (line, message) = if take_a {
                (a.next(), WARN_UNPARSED)
            } else {
                (b.next(), WARN_BEFORE_FIRST)
            };
            if let Some(l) = line {
                fw.push(l + offset, message);
                shown += 1;
            }
        }
        fw.count += self.unparsed_count + early_count - shown;
    }
}
