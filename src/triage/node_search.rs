//! The search behind `triage bisect --nodes`, free of processes and of torch: given a predicate
//! over sets of items (here: the FX nodes compiled by the real backend, in execution order) that
//! holds for the whole set and not for the empty one, find a small set for which it holds,
//! spending at most a budget of predicate calls.
//!
//! Three phases, each using what the previous one proved:
//!
//! 1. **prefix** — binary search for the shortest prefix `[0, k)` that reproduces: item `k-1` is
//!    needed (the prefix without it does not reproduce);
//! 2. **window** — the latest start `j` such that `[j, k)` reproduces: item `j` is needed too.
//!    Item `k-1` alone is asked first (one node is the usual cause: then one run ends the phase),
//!    then a binary search over the starts before it;
//! 3. **ddmin** — delta debugging (Zeller and Hildebrandt's `ddmin`) over the items strictly
//!    between `j` and `k-1`, always testing them together with both ends, down to a 1-minimal
//!    set: removing any one item makes the symptom go away.
//!
//! The binary searches assume monotonicity (more compiled nodes never hide the symptom); that
//! both ends are needed rests on it. ddmin does not: every interior item it keeps was tested
//! away, so the interior is 1-minimal whatever the predicate, and whatever the predicate the
//! set returned is one that reproduced. An answer other than "reproduces" (a timeout, a
//! different error) counts as "gone" for the search; the caller keeps every run in its log.
//! The same set is never run twice.

use std::collections::BTreeMap;

/// What one run of the predicate said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// The symptom is there.
    Reproduces,
    /// The symptom is not there (or something else happened: treated alike by the search).
    Gone,
    /// Stop now (Ctrl-C): keep what was found.
    Stop,
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// `set` is 1-minimal.
    Minimal,
    /// The budget ran out: `set` reproduces but may not be minimal.
    Budget,
    /// Stopped from outside: `set` reproduces but may not be minimal.
    Stopped,
}

/// The result: a set that reproduces (sorted item indices) and how the search ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub set: Vec<usize>,
    pub end: End,
    /// Predicate calls made.
    pub calls: usize,
}

/// The predicate, its budget and its memory of sets already answered.
struct Oracle<'a> {
    test: &'a mut dyn FnMut(&[usize]) -> anyhow::Result<Answer>,
    budget: usize,
    calls: usize,
    seen: BTreeMap<Vec<usize>, bool>,
}

/// Why a phase stopped early.
enum Halt {
    Budget,
    Stop,
}

impl Oracle<'_> {
    /// `Ok(Some(true))` reproduces; `Ok(None)` the search must stop (budget or Ctrl-C).
    fn ask(&mut self, set: &[usize]) -> anyhow::Result<Result<bool, Halt>> {
        if let Some(&r) = self.seen.get(set) {
            return Ok(Ok(r));
        }
        if self.calls >= self.budget {
            return Ok(Err(Halt::Budget));
        }
        self.calls += 1;
        let r = match (self.test)(set)? {
            Answer::Reproduces => true,
            Answer::Gone => false,
            Answer::Stop => return Ok(Err(Halt::Stop)),
        };
        self.seen.insert(set.to_vec(), r);
        Ok(Ok(r))
    }
}

/// Searches items `0..n`. The caller knows that all `n` items reproduce and that none do not
/// (neither is asked again). `budget` bounds the predicate calls.
pub fn search(
    n: usize,
    budget: usize,
    test: &mut dyn FnMut(&[usize]) -> anyhow::Result<Answer>,
) -> anyhow::Result<Found> {
    let mut o = Oracle {
        test,
        budget,
        calls: 0,
        seen: BTreeMap::new(),
    };
    o.seen.insert((0..n).collect(), true);
    o.seen.insert(Vec::new(), false);
    let range = |a: usize, b: usize| (a..b).collect::<Vec<usize>>();
    let finish = |o: &Oracle, set: Vec<usize>, h: Halt| Found {
        set,
        end: match h {
            Halt::Budget => End::Budget,
            Halt::Stop => End::Stopped,
        },
        calls: o.calls,
    };

    // 1. The shortest reproducing prefix [0, k).
    let (mut lo, mut hi) = (0, n);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match o.ask(&range(0, mid))? {
            Ok(true) => hi = mid,
            Ok(false) => lo = mid,
            Err(h) => return Ok(finish(&o, range(0, hi), h)),
        }
    }
    let k = hi;
    // 2. The latest start j with [j, k) reproducing: [k-1, k) first, then the starts before it.
    let (mut lo, mut hi) = (0, k);
    if k > 1 {
        match o.ask(&range(k - 1, k))? {
            Ok(true) => lo = k - 1,
            Ok(false) => hi = k - 1,
            Err(h) => return Ok(finish(&o, range(0, k), h)),
        }
    }
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        match o.ask(&range(mid, k))? {
            Ok(true) => lo = mid,
            Ok(false) => hi = mid,
            Err(h) => return Ok(finish(&o, range(lo, k), h)),
        }
    }
    let j = lo;
    // 3. ddmin over the interior, with both ends always in.
    let ends: Vec<usize> = if k - j >= 2 { vec![j, k - 1] } else { vec![j] };
    let interior = range(j + 1, k.saturating_sub(1).max(j + 1));
    match ddmin(&mut o, &ends, interior)? {
        Ok(set) => Ok(Found {
            set,
            end: End::Minimal,
            calls: o.calls,
        }),
        Err((set, h)) => Ok(finish(&o, set, h)),
    }
}

/// `ends ∪ part`, sorted.
fn with(ends: &[usize], part: &[usize]) -> Vec<usize> {
    let mut s: Vec<usize> = ends.iter().chain(part).copied().collect();
    s.sort_unstable();
    s.dedup();
    s
}

/// ddmin over `c` (known to reproduce together with `ends`); returns the 1-minimal set, or the
/// smallest reproducing set so far when it had to stop.
#[allow(clippy::type_complexity)]
fn ddmin(
    o: &mut Oracle,
    ends: &[usize],
    mut c: Vec<usize>,
) -> anyhow::Result<Result<Vec<usize>, (Vec<usize>, Halt)>> {
    if c.is_empty() {
        return Ok(Ok(ends.to_vec()));
    }
    match o.ask(ends)? {
        Ok(true) => return Ok(Ok(ends.to_vec())),
        Ok(false) => {}
        Err(h) => return Ok(Err((with(ends, &c), h))),
    }
    let mut n = 2usize;
    while c.len() >= 2 {
        let chunks = split(&c, n);
        let mut reduced = false;
        // A chunk alone.
        for chunk in &chunks {
            match o.ask(&with(ends, chunk))? {
                Ok(true) => {
                    c = chunk.clone();
                    n = 2;
                    reduced = true;
                    break;
                }
                Ok(false) => {}
                Err(h) => return Ok(Err((with(ends, &c), h))),
            }
        }
        // A complement (with two chunks the complements are the chunks).
        if !reduced && chunks.len() > 2 {
            for i in 0..chunks.len() {
                let rest: Vec<usize> = chunks
                    .iter()
                    .enumerate()
                    .filter(|(k, _)| *k != i)
                    .flat_map(|(_, ch)| ch.iter().copied())
                    .collect();
                match o.ask(&with(ends, &rest))? {
                    Ok(true) => {
                        c = rest;
                        n = (n - 1).max(2);
                        reduced = true;
                        break;
                    }
                    Ok(false) => {}
                    Err(h) => return Ok(Err((with(ends, &c), h))),
                }
            }
        }
        if !reduced {
            if n >= c.len() {
                break;
            }
            n = (2 * n).min(c.len());
        }
    }
    // One item left: needed unless the ends alone reproduce (asked above: they do not).
    Ok(Ok(with(ends, &c)))
}

/// `c` in `n` chunks of nearly equal length, in order.
fn split(c: &[usize], n: usize) -> Vec<Vec<usize>> {
    let n = n.min(c.len()).max(1);
    let mut out = Vec::with_capacity(n);
    let mut start = 0;
    for i in 0..n {
        let len = (c.len() - start) / (n - i);
        out.push(c[start..start + len].to_vec());
        start += len;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A predicate that reproduces when `needed ⊆ set`, counting its calls.
    fn needs(needed: &[usize]) -> impl FnMut(&[usize]) -> anyhow::Result<Answer> + '_ {
        move |set: &[usize]| {
            Ok(if needed.iter().all(|x| set.contains(x)) {
                Answer::Reproduces
            } else {
                Answer::Gone
            })
        }
    }

    #[test]
    fn one_node_among_many_in_logarithmic_calls() {
        for n in [1usize, 2, 3, 7, 64, 1000] {
            for culprit in [0, n / 2, n - 1] {
                let needed = [culprit];
                let mut p = needs(&needed);
                let f = search(n, 100, &mut p).unwrap();
                assert_eq!(f.set, vec![culprit], "n={n}");
                assert_eq!(f.end, End::Minimal);
                // The prefix's binary search (⌈log₂ n⌉ runs), then one run of the found node
                // alone.
                let log = n.next_power_of_two().trailing_zeros() as usize;
                assert!(f.calls <= log + 1, "n={n} culprit={culprit}: {}", f.calls);
            }
        }
    }

    #[test]
    fn a_pair_far_apart_and_a_triple() {
        let needed = [3, 40];
        let f = search(64, 100, &mut needs(&needed)).unwrap();
        assert_eq!(f.set, vec![3, 40]);
        assert_eq!(f.end, End::Minimal);
        let needed = [5, 9, 17];
        let f = search(30, 100, &mut needs(&needed)).unwrap();
        assert_eq!(f.set, vec![5, 9, 17]);
        assert_eq!(f.end, End::Minimal);
    }

    #[test]
    fn only_the_whole_set_reproduces() {
        let all: Vec<usize> = (0..6).collect();
        let f = search(6, 100, &mut needs(&all)).unwrap();
        assert_eq!(f.set, all);
        assert_eq!(f.end, End::Minimal);
    }

    #[test]
    fn budget_and_stop_keep_a_reproducing_set() {
        let needed = [10];
        let f = search(64, 2, &mut needs(&needed)).unwrap();
        assert_eq!(f.end, End::Budget);
        assert_eq!(f.calls, 2);
        assert!(f.set.contains(&10), "{:?}", f.set);
        let mut calls = 0;
        let mut stop_third = |set: &[usize]| {
            calls += 1;
            Ok(if calls == 3 {
                Answer::Stop
            } else if set.contains(&10) {
                Answer::Reproduces
            } else {
                Answer::Gone
            })
        };
        let f = search(64, 100, &mut stop_third).unwrap();
        assert_eq!(f.end, End::Stopped);
        assert!(f.set.contains(&10), "{:?}", f.set);
    }

    #[test]
    fn no_set_is_asked_twice_and_errors_propagate() {
        let mut asked: Vec<Vec<usize>> = Vec::new();
        let mut p = |set: &[usize]| {
            asked.push(set.to_vec());
            Ok(if set.contains(&2) && set.contains(&5) {
                Answer::Reproduces
            } else {
                Answer::Gone
            })
        };
        search(8, 100, &mut p).unwrap();
        let mut sorted = asked.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), asked.len(), "{asked:?}");
        assert!(!asked.contains(&(0..8).collect()) && !asked.contains(&Vec::new()));
        let mut failing = |_: &[usize]| -> anyhow::Result<Answer> { anyhow::bail!("cannot start") };
        assert!(search(8, 100, &mut failing).is_err());
    }

    #[test]
    fn a_non_monotone_predicate_still_gives_a_reproducing_set() {
        // Reproduces for exactly the sets with an odd number of items among {1, 2, 4}.
        let mut p = |set: &[usize]| {
            let k = [1, 2, 4].iter().filter(|x| set.contains(x)).count();
            Ok(if k % 2 == 1 {
                Answer::Reproduces
            } else {
                Answer::Gone
            })
        };
        let f = search(6, 100, &mut p).unwrap();
        let k = [1, 2, 4].iter().filter(|x| f.set.contains(x)).count();
        assert_eq!(k % 2, 1, "{:?}", f.set);
    }
}
