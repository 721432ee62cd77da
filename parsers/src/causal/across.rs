//! The first causal error across sources: several files (`npgx plog` over many processes' plogs)
//! or several ranks of one job (`npgx triage classify DIR`), each with its own first causal error
//! from the engine in [`super`].
//!
//! Each source's error is a [`Contender`]; the first one is the least by [`cmp`]:
//!
//! 1. **tier** — an error that states a cause beats a graph-break reason, a cascade or chatter;
//! 2. **collective errors last** — an error read as collective communication (HCCL timeouts,
//!    notify waits, a peer's lost heartbeat: phase `collective`) is what every other rank prints
//!    when one rank stops answering, so a rank with another error of the same tier comes first;
//!    with only collective errors the ordering goes on as below;
//! 3. **rank** ([`CauseRank`]) — a device fault before an error report before a task error …;
//! 4. **time** — the earlier time stamp, when both sources have one (times are compared only
//!    between different sources; within one the engine has already chosen);
//! 5. **source order, then line** — the caller's order (file order, or rank order).
//!
//! Without time stamps the ordering is steps 1–3 and 5: the caller must say that it fell back.

use std::cmp::Ordering;

use super::{CauseRank, Tier};

/// One source's first causal error, as the ordering reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contender<T> {
    pub tier: Tier,
    /// Read as collective communication (phase `collective`).
    pub collective: bool,
    pub rank: CauseRank,
    /// Its time stamp, in a form that orders (the caller brings all sources to one precision).
    pub time: Option<T>,
    /// The source's position in the caller's order.
    pub source: usize,
    /// The error's line in its source.
    pub line: u64,
}

/// The ordering of the module's comment (less is more causal).
pub fn cmp<T: Ord>(a: &Contender<T>, b: &Contender<T>) -> Ordering {
    (a.tier, a.collective, a.rank)
        .cmp(&(b.tier, b.collective, b.rank))
        .then_with(|| match (&a.time, &b.time) {
            (Some(x), Some(y)) if a.source != b.source => x.cmp(y),
            _ => Ordering::Equal,
        })
        .then_with(|| (a.source, a.line).cmp(&(b.source, b.line)))
}

/// The position (in `contenders`) of the first causal error, `None` when there is none. A fold,
/// not a sort: with time stamps on some sources only the ordering need not be total, and a fold
/// still gives one answer (the earliest source wins ties).
pub fn first<T: Ord>(contenders: &[Contender<T>]) -> Option<usize> {
    let mut best: Option<usize> = None;
    for (i, c) in contenders.iter().enumerate() {
        if best.is_none_or(|b| cmp(c, &contenders[b]) == Ordering::Less) {
            best = Some(i);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(
        tier: Tier,
        collective: bool,
        rank: CauseRank,
        time: Option<u32>,
        source: usize,
    ) -> Contender<u32> {
        Contender {
            tier,
            collective,
            rank,
            time,
            source,
            line: 1,
        }
    }

    #[test]
    fn tier_then_collective_then_rank_then_time_then_order() {
        use CauseRank::{DeviceFault, Error, ErrorReport};
        use Tier::Strong;
        // A collective report on rank 0 (earlier source) loses to rank 3's own error.
        let v = [
            c(Strong, true, ErrorReport, Some(50), 0),
            c(Strong, false, Error, Some(10), 3),
        ];
        assert_eq!(first(&v), Some(1));
        // The same kind of error on two ranks: the earlier time wins over the earlier source.
        let v = [
            c(Strong, false, ErrorReport, Some(20), 0),
            c(Strong, false, ErrorReport, Some(10), 1),
        ];
        assert_eq!(first(&v), Some(1));
        // A device fault beats a plain error whatever the times.
        let v = [
            c(Strong, false, Error, Some(1), 0),
            c(Strong, false, DeviceFault, Some(9), 1),
        ];
        assert_eq!(first(&v), Some(1));
        // A strong collective error beats a cascade; without times the source order decides.
        let v = [
            c(Tier::Cascade, false, CauseRank::Cascade, None, 0),
            c(Strong, true, ErrorReport, None, 1),
            c(Strong, true, ErrorReport, None, 2),
        ];
        assert_eq!(first(&v), Some(1));
        assert_eq!(first::<u32>(&[]), None);
    }
}
