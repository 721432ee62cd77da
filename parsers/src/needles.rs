//! A fixed list of strings looked for in many texts, each one's searcher built once.
//!
//! `str::contains` and `memchr::memmem::find` build a searcher on every call, which on the short
//! lines of a log costs more than the search itself: a table of phrases asked about every line
//! of a multi-GB plog spent most of its time building them (docs/performance.md, "The second
//! session on the Ice Lake Xeon"). Keep a [`Needles`] in a `LazyLock` beside the list it is
//! built from.
//!
//! What it is not for: one-off searches, and needles that vary per call.

use memchr::memmem::Finder;

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
