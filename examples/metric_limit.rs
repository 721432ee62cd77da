//! The compute-only limit of `npgx dump-compare` (issue 44 item 6): the metric kernels alone
//! ([`Acc::update_raw`], the widest vectors the CPU has) over the tensor pairs of two trees
//! whose bytes were read into memory before the clock starts, on all cores, in the pieces of
//! [`CHUNK`] values the comparison streams them in. No reading, no page faults, no listing or
//! matching: where this is below a target, the arithmetic of the metric set is, whatever the
//! reader does. `scripts/bench_dump_compare.sh` prints it beside the read limit and the
//! stream-only pass.
//!
//! ```sh
//! cargo run --release --example metric_limit -- [--runs N] GOLDEN TARGET
//! ```
//!
//! Tensors are paired by op name, input or output, and index (the bench trees' ops all match;
//! two tensors of a side under one key are an error, a pair whose value counts differ is left
//! out). Both trees are held in memory: the RAM it needs is their size. Prints the best wall time
//! of N runs (default 3) in seconds, then the pairs, the bytes of both sides and the sum of the
//! pairs' cosines (the comparison's own figure, as a check).
//! `NPGX_SIMD` caps the vectors as it does for npgx.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context, Result};
use rayon::prelude::*;

use npgx::compare::metrics::Acc;
use npgx::compare::msprobe;
use npgx::dump::list::{self, Data};
use npgx::dump::values::CHUNK;
use npgx::dump::walk;
use npgx_parsers::dump::dtype::Element;

/// One side's plain tensors: (op name, input or output, index) → (element type, bytes).
type Side = BTreeMap<String, (Element, Vec<u8>)>;

fn read_side(root: &Path) -> Result<Side> {
    let mut side = Side::new();
    for c in walk::walk(root).candidates {
        for l in list::list_all(&c) {
            let mut file =
                File::open(&l.path).with_context(|| format!("cannot open {}", l.path.display()))?;
            for s in &l.tensors {
                let Data::Plain { offset, len } = s.data else {
                    continue;
                };
                let mut bytes = vec![0u8; usize::try_from(len)?];
                file.seek(SeekFrom::Start(offset))?;
                file.read_exact(&mut bytes)
                    .with_context(|| format!("{}: short read", l.path.display()))?;
                let key = format!("{}\t{:?}\t{}", l.match_name, s.io, s.index);
                if side.insert(key.clone(), (s.element, bytes)).is_some() {
                    bail!(
                        "{}: two tensors named {key:?} (op, io, index)",
                        root.display()
                    );
                }
            }
        }
    }
    Ok(side)
}

/// One pair through the metric kernels, as the comparison streams it (the kernel it runs for a
/// pair that is not msprobe's: no msprobe accumulator fed beside).
fn compare_pair((ge, gb): (Element, &[u8]), (te, tb): (Element, &[u8])) -> f64 {
    let (gs, ts) = (ge.size().unwrap_or(1), te.size().unwrap_or(1));
    let n = gb.len() / gs;
    let mut acc = Acc::default();
    let mut at = 0;
    while at < n {
        let k = CHUNK.min(n - at);
        acc.update_raw_with(
            (ge, &gb[at * gs..(at + k) * gs]),
            (te, &tb[at * ts..(at + k) * ts]),
            &mut None::<msprobe::Acc>,
        );
        at += k;
    }
    acc.finish().cosine.unwrap_or(0.0)
}

fn main() -> Result<()> {
    npgx::process::cap_vectors();
    let mut runs = 3usize;
    let mut roots = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().context("--runs needs N")?.parse()?,
            _ => roots.push(PathBuf::from(a)),
        }
    }
    let [golden, target] = roots.as_slice() else {
        bail!("usage: metric_limit [--runs N] GOLDEN TARGET");
    };
    let (golden, target) = (read_side(golden)?, read_side(target)?);
    let pairs: Vec<_> = golden
        .iter()
        .filter_map(|(k, (ge, gb))| {
            let (te, tb) = target.get(k)?;
            // Values of a pair that differ in number are a shape mismatch: not compared.
            let count = |e: &Element, b: &[u8]| b.len() / e.size().unwrap_or(1);
            (count(ge, gb) == count(te, tb)).then_some(((*ge, gb.as_slice()), (*te, tb.as_slice())))
        })
        .collect();
    if pairs.is_empty() {
        bail!("no tensor of the golden tree has a target of the same name, io and index");
    }
    let bytes: usize = pairs.iter().map(|(g, t)| g.1.len() + t.1.len()).sum();
    let mut best = f64::INFINITY;
    let mut cosines = 0.0;
    for _ in 0..runs.max(1) {
        let start = Instant::now();
        let each: Vec<f64> = pairs.par_iter().map(|&(g, t)| compare_pair(g, t)).collect();
        best = best.min(start.elapsed().as_secs_f64());
        cosines = each.iter().sum();
    }
    println!("{best:.4}");
    println!(
        "{} pairs, {bytes} bytes, sum of cosines {cosines:.12}",
        pairs.len()
    );
    Ok(())
}
