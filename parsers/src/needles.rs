//! A fixed list of strings looked for in many texts, each one's searcher built once.
//!
//! `str::contains` and `memchr::memmem::find` build a searcher on every call, which on the short
//! lines of a log costs more than the search itself: a table of phrases asked about every line
//! of a multi-GB plog spent most of its time building them (docs/performance.md, "The second
//! session on the Ice Lake Xeon"). Keep a [`Needles`] in a `LazyLock` beside the list it is
//! built from.
//!
//! What it is not for: needles that vary per call. For those (and other one-off searches in a
//! line or a message), [`find`]: the needle's first byte that is not a space found with
//! `memchr`, the whole needle compared there, with no searcher to build.

use memchr::memmem::Finder;

/// The byte offset of the first `needle` in `hay`, as `str::find` gives it, without building a
/// searcher: for the short texts of a log line (the lines are capped), where a two-way
/// searcher's set-up cost more than the search (a message's `KvBag` lookups: ≈ 340 instructions
/// per call in `StrSearcher::new`).
pub fn find(hay: &str, needle: &str) -> Option<usize> {
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    if n.is_empty() {
        return Some(0);
    }
    let last = h.len().checked_sub(n.len())?;
    // The needle's first byte that is not a space is looked for (a space is in every few bytes
    // of a line: ` (PID:` would stop at each), then the whole needle compared where it would
    // start: a hit at `k + i` of `hay` is a start at `i`. Hits come in order, so the first match
    // is the leftmost, at a char boundary: the needle is UTF-8, so it does not start with a
    // continuation byte.
    let k = n.iter().position(|&b| b != b' ').unwrap_or(0);
    memchr::memchr_iter(n[k], &h[k..=last + k]).find(|&i| h[i..i + n.len()] == *n)
}

/// Whether `needle` occurs in `hay` ([`find`]).
pub fn contains(hay: &str, needle: &str) -> bool {
    find(hay, needle).is_some()
}

/// Searchers for a list of needles, in the list's order.
pub struct Needles(Vec<Finder<'static>>);

impl Needles {
    pub fn new<N: AsRef<[u8]> + ?Sized + 'static>(
        needles: impl IntoIterator<Item = &'static N>,
    ) -> Needles {
        Needles(
            needles
                .into_iter()
                .map(|n| Finder::new(n.as_ref()))
                .collect(),
        )
    }

    /// Whether any needle occurs in `hay` (none does when the list is empty).
    pub fn any_in(&self, hay: impl AsRef<[u8]>) -> bool {
        let hay = hay.as_ref();
        self.0.iter().any(|f| f.find(hay).is_some())
    }

    /// Where the needles occur in `hay` as (start, end) byte ranges: the first needle's
    /// non-overlapping occurrences from the left, then the second's, and so on.
    pub fn matches<'h>(&'h self, hay: &'h [u8]) -> impl Iterator<Item = (usize, usize)> + 'h {
        self.0.iter().flat_map(move |f| {
            let len = f.needle().len();
            f.find_iter(hay).map(move |at| (at, at + len))
        })
    }

    /// Whether every needle occurs in `hay` (all do when the list is empty).
    pub fn all_in(&self, hay: impl AsRef<[u8]>) -> bool {
        let hay = hay.as_ref();
        self.0.iter().all(|f| f.find(hay).is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn find_as_str_find_would_say() {
        let hays = [
            "",
            "a",
            "stream_id=1, report_stream_id=2",
            "aaaab",
            "ab ab ab",
            "é[FUNC:x][FILE:y]",
            "runtime result = 507015",
            "x",
            "[ERROR] 2024 (PID:1, Device:0) (PID:2",
            "  ab ab",
            " ab  ab",
            "(PID: (PID:",
        ];
        let needles = [
            "",
            "a",
            "b",
            "ab",
            "aab",
            "[FUNC:",
            "stream_id",
            "é",
            "7015",
            "xx",
            "runtime result = 507015!",
            " (PID:",
            "  ab",
            " ",
            "  ",
        ];
        for h in hays {
            for n in needles {
                assert_eq!(find(h, n), h.find(n), "{h:?} {n:?}");
                assert_eq!(contains(h, n), h.contains(n), "{h:?} {n:?}");
            }
        }
    }

    #[test]
    fn any_and_all_as_contains_would_say() {
        let n = Needles::new(["task run failed", "watchdog"]);
        for hay in [
            "x task run failed y",
            "a watchdog",
            "task run failed, watchdog",
            "",
            "task run",
        ] {
            let contains = ["task run failed", "watchdog"].map(|p| hay.contains(p));
            assert_eq!(n.any_in(hay), contains.iter().any(|&c| c), "{hay:?}");
            assert_eq!(n.all_in(hay), contains.iter().all(|&c| c), "{hay:?}");
        }
        let empty = Needles::new::<str>([]);
        assert!(!empty.any_in("x") && empty.all_in("x"));
        let bytes = Needles::new([&b"core_id"[..]]);
        assert!(bytes.any_in(b"a core_id=1".as_slice()));
        // Needle by needle, each one's occurrences from the left, without overlaps.
        let leads = Needles::new(["ret ", "aa"]);
        let got: Vec<_> = leads.matches(b"aaa ret 1 ret 2").collect();
        assert_eq!(got, [(4, 8), (10, 14), (0, 2)]);
    }
}
