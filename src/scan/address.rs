//! Which operator wrote the memory an input reads: device addresses linked in execution order.
//!
//! GE dump headers give every input and output its device address and size
//! (`OpInput.address`, `OpOutput.address`, `dump-data.md` §1.4). Within a group (one model, one
//! step) an input at address `a` was last written by the latest output, earlier in execution
//! order, whose range `[address, address + size)` holds `a`: its **producer**. That answers two
//! questions dump-scan cannot answer from values alone:
//!
//! * where an anomalous input came from (its producer, clean or not);
//! * the **overwrite signature**: an input read back anomalous whose producer's output — the
//!   same memory, dumped when the producer finished — was clean. Something wrote that memory
//!   between the producer P and the consumer C: an out-of-range write, or a buffer reused too
//!   early. The suspects are the operators executed between P and C; those whose own output
//!   ranges overlap the victim's range come first.
//!
//! Where headers carry no addresses (npugraph_ex `.pt`, `.npy`, stats CSVs, dumps written before
//! the field existed) nothing is linked and the group says so: an address is never guessed.
//!
//! What is kept while files are read: per group, the address range of every output (with its
//! operator's order key and whether it was clean), and the input ranges of the operators that
//! had an anomaly — not the tensors themselves. Everything else is decided in [`link`], once the
//! execution order is known.

use npgx_parsers::dump::header::Io;
use serde::{Deserialize, Serialize};

use super::order::{CompactKey, Names, PathRef};
use super::records::TensorRecord;
use super::store::Blocks;
use crate::dump::records::OpRef;

/// At most this many in-between operators are listed per overwrite (all are counted).
pub const MAX_BETWEEN: usize = 64;

/// A tensor's device address range, as a dump header declares it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Addressed {
    pub io: Io,
    pub index: usize,
    pub address: u64,
    pub size: u64,
}

/// What a tensor held when it was dumped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Held {
    Clean,
    Anomalous,
    /// Not checked (a data type npgx does not decode, a block cut short).
    Unchecked,
}

/// Whether the group's headers gave addresses.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum AddressStatus {
    /// Every checked tensor had an address.
    Linked,
    /// Some had one, some not (those are not linked).
    Partial,
    /// None had one: `.pt`, `.npy`, stats CSVs, or headers without the field.
    #[default]
    Absent,
}

/// One tensor of a link: which operator execution, and which of its inputs or outputs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TensorAt {
    pub op_name: String,
    pub op_type: Option<String>,
    /// Position of the operator execution in the group's execution order (an anomaly's `order`).
    pub order: usize,
    pub index: usize,
    /// Its declared size in bytes.
    pub bytes: u64,
    /// The dump file, relative to the scan root.
    pub path: String,
}

/// An input of an operator that had an anomaly, and the output that last wrote its memory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Link {
    /// The input (`index` is its input index).
    pub consumer: TensorAt,
    /// What the input held when read.
    pub held: Held,
    /// The input's address range, `[start, end)`.
    pub start: u64,
    pub end: u64,
    /// The output (`index` is its output index) that last wrote `start` before the consumer
    /// ran; `None` when no dumped output did (a graph input, a weight, an op not dumped).
    pub producer: Option<TensorAt>,
    /// What that output held when it was dumped.
    pub producer_held: Option<Held>,
}

/// One operator executed between a producer and its consumer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Between {
    pub op_name: String,
    pub order: usize,
    /// Whether one of its outputs overlaps the overwritten range.
    pub overlaps: bool,
}

/// The overwrite signature: the consumer read anomalous values from memory its producer had
/// left clean.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Overwrite {
    pub producer: TensorAt,
    pub consumer: TensorAt,
    /// The overwritten range, `[start, end)` (the consumer's input).
    pub start: u64,
    pub end: u64,
    /// The operators executed between them: those whose outputs overlap the range first, then
    /// the others in execution order; at most [`MAX_BETWEEN`].
    pub between: Vec<Between>,
    /// How many operators executed between them.
    pub between_count: usize,
}

/// A group's address links (docs/dump-scan.md, "Producers and overwrites").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Addresses {
    pub status: AddressStatus,
    /// Checked tensors whose header gave an address, and those without one.
    pub with_address: u64,
    pub without_address: u64,
    /// Every input of every operator with an anomaly, in execution order.
    pub links: Vec<Link>,
    pub overwrites: Vec<Overwrite>,
}

impl Addresses {
    /// The link of an operator execution's input, if any.
    pub fn link_of(&self, order: usize, index: usize) -> Option<&Link> {
        self.links
            .iter()
            .find(|l| l.consumer.order == order && l.consumer.index == index)
    }
}

/// A tensor range kept while files are read.
struct Range {
    /// Its operator execution: an index into the group's executions as they were added.
    exec: u32,
    /// Interned op type, and the file.
    op_type: u32,
    path: PathRef,
    index: u32,
    held: Held,
    start: u64,
    end: u64,
}

/// What a group keeps until [`link`].
#[derive(Default)]
pub(super) struct Book {
    outputs: Blocks<Range>,
    /// Inputs of operator executions that had an anomaly.
    inputs: Blocks<Range>,
    with_address: u64,
    without_address: u64,
}

/// `None` for an op type (0 is reserved for "no type").
const NO_TYPE: u32 = u32::MAX;

impl Book {
    /// Takes in the addresses of one file (one operator execution) and the verdicts read from
    /// it. `op` is the execution's place in order.
    pub(super) fn add(
        &mut self,
        names: &mut Names,
        exec: u32,
        op: &OpRef,
        tensors: &[TensorRecord],
        addresses: &[Addressed],
    ) {
        let held = |io: Io, index: usize| {
            tensors
                .iter()
                .find(|t| t.io == io && t.index == index)
                .map_or(Held::Unchecked, |t| {
                    if t.is_anomalous() {
                        Held::Anomalous
                    } else {
                        Held::Clean
                    }
                })
        };
        let with = tensors
            .iter()
            .filter(|t| addresses.iter().any(|a| a.io == t.io && a.index == t.index))
            .count() as u64;
        self.with_address += with;
        self.without_address += tensors.len() as u64 - with;
        if addresses.is_empty() {
            return;
        }
        let anomalous = tensors.iter().any(TensorRecord::is_anomalous);
        let op_type = op.op_type.as_deref().map_or(NO_TYPE, |t| names.id(t));
        let path = names.path(&op.path);
        for a in addresses {
            let range = Range {
                exec,
                op_type,
                path,
                index: u32::try_from(a.index).unwrap_or(u32::MAX),
                held: held(a.io, a.index),
                start: a.address,
                end: a.address.saturating_add(a.size.max(1)),
            };
            match a.io {
                Io::Output => self.outputs.push(range),
                Io::Input if anomalous => self.inputs.push(range),
                _ => {}
            }
        }
    }
}

/// Links the group's inputs to their producers, once `order` (the group's operator executions,
/// sorted by [`Names::cmp`]) is known, and `positions` (the position in `order` of each
/// execution, by the index it was added with).
pub(super) fn link(
    book: Book,
    names: &Names,
    order: &[CompactKey],
    positions: &[u32],
) -> Addresses {
    let status = match (book.with_address, book.without_address) {
        (0, _) => AddressStatus::Absent,
        (_, 0) => AddressStatus::Linked,
        _ => AddressStatus::Partial,
    };
    let position = |r: &Range| positions.get(r.exec as usize).map_or(0, |&p| p as usize);
    let at = |r: &Range, at: usize| TensorAt {
        op_name: order
            .get(at)
            .map_or("", |k| names.text(k.op_name))
            .to_string(),
        op_type: (r.op_type != NO_TYPE).then(|| names.text(r.op_type).to_string()),
        order: at,
        index: r.index as usize,
        bytes: r.end - r.start,
        path: names.path_text(r.path),
    };
    // Outputs by start address, each with its position; the longest range bounds the search.
    let mut outputs: Vec<(usize, &Range)> = book.outputs.iter().map(|r| (position(r), r)).collect();
    // The file last: two files of one operator execution arrive in no defined order.
    let file = |r: &Range| names.path_text(r.path);
    outputs.sort_by(|(p, r), (q, w)| {
        (r.start, *p, r.index)
            .cmp(&(w.start, *q, w.index))
            .then_with(|| file(r).cmp(&file(w)))
    });
    let longest = outputs
        .iter()
        .map(|(_, r)| r.end - r.start)
        .max()
        .unwrap_or(0);
    // The last output before position `c` whose range holds `a`.
    let producer = |a: u64, c: usize| -> Option<(usize, &Range)> {
        let lo = outputs.partition_point(|(_, r)| r.start < a.saturating_sub(longest));
        let hi = outputs.partition_point(|(_, r)| r.start <= a);
        outputs
            .get(lo..hi)?
            .iter()
            .filter(|(p, r)| *p < c && r.end > a)
            .max_by_key(|(p, r)| (*p, r.index))
            .copied()
    };
    let mut inputs: Vec<(usize, &Range)> = book.inputs.iter().map(|r| (position(r), r)).collect();
    inputs.sort_by(|(p, r), (q, w)| {
        (*p, r.index)
            .cmp(&(*q, w.index))
            .then_with(|| file(r).cmp(&file(w)))
    });
    inputs.dedup_by_key(|(p, r)| (*p, r.index));
    let mut links = Vec::with_capacity(inputs.len());
    let mut overwrites = Vec::new();
    for &(c, r) in &inputs {
        let found = producer(r.start, c);
        let consumer = at(r, c);
        if let Some((p, w)) = found {
            if r.held == Held::Anomalous && w.held == Held::Clean {
                overwrites.push(Overwrite {
                    producer: at(w, p),
                    consumer: consumer.clone(),
                    start: r.start,
                    end: r.end,
                    between: between(&outputs, names, order, p, c, (r.start, r.end)),
                    between_count: c.saturating_sub(p + 1),
                });
            }
        }
        links.push(Link {
            consumer,
            held: r.held,
            start: r.start,
            end: r.end,
            producer: found.map(|(p, w)| at(w, p)),
            producer_held: found.map(|(_, w)| w.held),
        });
    }
    Addresses {
        status,
        with_address: book.with_address,
        without_address: book.without_address,
        links,
        overwrites,
    }
}

/// The operator executions strictly between positions `p` and `c`: those with an output
/// overlapping `range` first, then the others, each part in execution order.
fn between(
    outputs: &[(usize, &Range)],
    names: &Names,
    order: &[CompactKey],
    p: usize,
    c: usize,
    (start, end): (u64, u64),
) -> Vec<Between> {
    let mut overlapping: Vec<usize> = outputs
        .iter()
        .filter(|(q, r)| *q > p && *q < c && r.start < end && r.end > start)
        .map(|(q, _)| *q)
        .collect();
    overlapping.sort_unstable();
    overlapping.dedup();
    let rest = (p + 1..c).filter(|q| overlapping.binary_search(q).is_err());
    overlapping
        .iter()
        .map(|&q| (q, true))
        .chain(rest.map(|q| (q, false)))
        .take(MAX_BETWEEN)
        .filter_map(|(q, overlaps)| {
            order.get(q).map(|k| Between {
                op_name: names.text(k.op_name).to_string(),
                order: q,
                overlaps,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::analysis::tests::t as tensor;
    use crate::scan::analysis::Collector;

    /// One operator execution: `(io, address, size, nan)` per tensor.
    type Exec<'a> = (&'a str, u64, &'a [(Io, u64, u64, u64)]);

    fn run(execs: &[Exec<'_>]) -> Addresses {
        let mut c = Collector::new(false);
        // Files arrive in any order: last first.
        for (op, ts, tensors) in execs.iter().rev() {
            let mut counts = [0usize; 2];
            let mut records = Vec::new();
            let mut addressed = Vec::new();
            for &(io, address, size, nan) in tensors.iter() {
                let slot = usize::from(io == Io::Output);
                let index = counts[slot];
                counts[slot] += 1;
                records.push(tensor(op, *ts, io, index, nan));
                if address != 0 {
                    addressed.push(Addressed {
                        io,
                        index,
                        address,
                        size,
                    });
                }
            }
            c.add_addresses(&records, &addressed);
            for r in records {
                c.add(r);
            }
        }
        c.finish().groups.remove(0).addresses
    }

    #[test]
    fn the_latest_earlier_writer_is_the_producer_never_the_reader_itself() {
        let a = run(&[
            ("W1", 1, &[(Io::Output, 0x100, 64, 0)]),
            ("W2", 2, &[(Io::Output, 0x100, 64, 1)]),
            // In place: reads and writes 0x100; its own output is not its producer.
            (
                "C",
                3,
                &[(Io::Input, 0x120, 16, 1), (Io::Output, 0x100, 64, 1)],
            ),
        ]);
        assert_eq!(a.status, AddressStatus::Linked);
        let l = a.link_of(2, 0).expect("linked");
        let p = l.producer.as_ref().expect("producer");
        assert_eq!((p.op_name.as_str(), p.order, p.bytes), ("W2", 1, 64));
        assert_eq!(l.producer_held, Some(Held::Anomalous));
        assert_eq!((l.start, l.end), (0x120, 0x130));
        assert!(a.overwrites.is_empty());
    }

    #[test]
    fn a_clean_producer_and_an_anomalous_read_is_an_overwrite() {
        let a = run(&[
            ("P", 1, &[(Io::Output, 0x1000, 256, 0)]),
            ("X", 2, &[(Io::Output, 0x9000, 16, 0)]),
            ("Y", 3, &[(Io::Output, 0x10f0, 64, 0)]),
            (
                "C",
                4,
                &[(Io::Input, 0x1000, 256, 1), (Io::Output, 0x5000, 4, 1)],
            ),
        ]);
        assert_eq!(a.overwrites.len(), 1);
        let w = &a.overwrites[0];
        assert_eq!(
            (w.producer.op_name.as_str(), w.consumer.op_name.as_str()),
            ("P", "C")
        );
        let between: Vec<(&str, bool)> = w
            .between
            .iter()
            .map(|b| (b.op_name.as_str(), b.overlaps))
            .collect();
        assert_eq!(between, [("Y", true), ("X", false)]);
        assert_eq!(w.between_count, 2);
    }

    #[test]
    fn an_output_range_costs_40_bytes() {
        assert_eq!(std::mem::size_of::<Range>(), 40);
    }

    #[test]
    fn no_address_no_link() {
        let a = run(&[
            ("P", 1, &[(Io::Output, 0, 256, 0)]),
            ("C", 2, &[(Io::Input, 0, 256, 1)]),
        ]);
        assert_eq!(a.status, AddressStatus::Absent);
        assert_eq!((a.with_address, a.without_address), (0, 2));
        assert!(a.links.is_empty());
        let partial = run(&[
            ("P", 1, &[(Io::Output, 0x10, 4, 0)]),
            ("C", 2, &[(Io::Input, 0, 4, 1)]),
        ]);
        assert_eq!(partial.status, AddressStatus::Partial);
        assert!(partial.links.is_empty());
    }
}
