//! Where a dump file sits in its tree (`dump-data.md` §3, §7).
//!
//! ```text
//! model dump  : {dump_path}/[msprobe_ge_dump/][worldsize{W}_global_rank{R}/]{time}/{device}/{model_name}/{model_id}/{data_index}/{file}
//! single-op   : {dump_path}/[step{N}/]{time}/{device}/{file}
//! exception   : {dump_path}/extra-info/data-dump/{device}/{file}
//! npugraph_ex : {data_dump_dir}/worldsize{W}_global_rank{R}/{fxnode}_device_{dev}_{count}.pt
//! torchair FX : {dump_path}/worldsize{W}_global_rank{R}/{graph_name}/{step}/{node}-{target}.…npy
//! MindSpore   : {dump_path}/rank_{R}/{net_name}/{graph_id}/{iteration}/statistic.csv
//! msprobe     : {dump_path}/[step{N}/]rank{R}|rank|proc{pid}/dump.json  (matched by the file, `crate::msprobe::locate`)
//! ```
//!
//! The layout is matched from the file's directory upwards, so the scan root may be any level of
//! the tree (the dump path, a rank directory, a time directory). `{time}` is the local
//! `YYYYMMDDhhmmss` of the run start; any all-digit component of at least 8 digits is taken as
//! a time, because device ids, model ids and step indices are short.

use serde::{Deserialize, Serialize};

/// Which layout a file's directory matched.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    Model,
    SingleOp,
    Exception,
    NpugraphEx,
    /// torchair's eager FX data dump (`fx_dumper.py` `step_path`: the graph's name, then the
    /// run count of that graph).
    FxDump,
    /// A MindSpore kernel-by-kernel dump (`rank_{R}/{net}/{graph}/{iteration}`).
    #[serde(rename = "mindspore")]
    MindSpore,
    /// An msprobe framework dump (`dump.json`).
    Msprobe,
    Other,
}

/// The grouping facts a directory path carries. Every field is absent when the layout lacks it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Location {
    pub world_size: Option<u32>,
    pub rank: Option<u32>,
    pub time: Option<String>,
    pub device: Option<u32>,
    pub model: Option<String>,
    pub model_id: Option<u64>,
    /// `data_index` of a model dump, or a `step{N}` directory of msprobe wrappers.
    pub step: Option<u64>,
}

fn digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn is_time(s: &str) -> bool {
    digits(s) && s.len() >= 8
}

fn small(s: &str) -> Option<u64> {
    (digits(s) && s.len() < 8).then(|| s.parse().ok()).flatten()
}

/// `worldsize{W}_global_rank{R}`.
fn world_rank(s: &str) -> Option<(u32, u32)> {
    let rest = s.strip_prefix("worldsize")?;
    let (w, r) = rest.split_once("_global_rank")?;
    Some((w.parse().ok()?, r.parse().ok()?))
}

/// MindSpore's `rank_{R}`.
fn mindspore_rank(s: &str) -> Option<u32> {
    s.strip_prefix("rank_")?.parse().ok()
}

/// `step{N}` / `step_{N}`.
fn step_dir(s: &str) -> Option<u64> {
    let n = s.strip_prefix("step")?;
    n.strip_prefix('_').unwrap_or(n).parse().ok()
}

/// Reads the layout from the directory components of a file, outermost first. Include the scan
/// root's own name as the first component so that a root at any level still matches.
pub fn locate<S: AsRef<str>>(dirs: &[S]) -> (Layout, Location) {
    let c: Vec<&str> = dirs.iter().map(AsRef::as_ref).collect();
    let mut loc = Location::default();
    for s in &c {
        if let Some((w, r)) = world_rank(s) {
            loc.world_size = Some(w);
            loc.rank = Some(r);
        } else if let Some(n) = step_dir(s) {
            loc.step = Some(n);
        }
    }
    let n = c.len();
    // rank_{R}/{net}/{graph}/{iteration}
    if n >= 4 {
        if let (Some(r), Some(g), Some(i)) =
            (mindspore_rank(c[n - 4]), small(c[n - 2]), small(c[n - 1]))
        {
            loc.rank = Some(r);
            loc.model = Some(c[n - 3].to_string());
            loc.model_id = Some(g);
            loc.step = Some(i);
            return (Layout::MindSpore, loc);
        }
    }
    // extra-info/data-dump/{device}
    if n >= 2 && c[n - 2] == "data-dump" {
        if let Some(dev) = small(c[n - 1]) {
            loc.device = u32::try_from(dev).ok();
            loc.step = None;
            return (Layout::Exception, loc);
        }
    }
    // …/{time}/{device}/{model}/{model_id}/{index}
    if n >= 4 {
        let (dev, model, id, idx) = (c[n - 4], c[n - 3], c[n - 2], c[n - 1]);
        let time_before = n >= 5 && is_time(c[n - 5]);
        let root_is_time_dir = n == 4;
        if let (Some(d), Some(i), Some(x)) = (small(dev), small(id), small(idx)) {
            if time_before || root_is_time_dir {
                loc.time = time_before.then(|| c[n - 5].to_string());
                loc.device = u32::try_from(d).ok();
                loc.model = Some(model.to_string());
                loc.model_id = Some(i);
                loc.step = Some(x);
                return (Layout::Model, loc);
            }
        }
    }
    // …/{time}/{device}
    if n >= 2 && is_time(c[n - 2]) {
        if let Some(d) = small(c[n - 1]) {
            loc.time = Some(c[n - 2].to_string());
            loc.device = u32::try_from(d).ok();
            return (Layout::SingleOp, loc);
        }
    }
    if n >= 1 && world_rank(c[n - 1]).is_some() {
        return (Layout::NpugraphEx, loc);
    }
    // worldsize{W}_global_rank{R}/{graph_name}/{step}
    if n >= 3 && world_rank(c[n - 3]).is_some() {
        if let Some(step) = small(c[n - 1]) {
            loc.model = Some(c[n - 2].to_string());
            loc.step = Some(step);
            return (Layout::FxDump, loc);
        }
    }
    (Layout::Other, loc)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(p: &str) -> Vec<&str> {
        p.split('/').collect()
    }

    #[test]
    fn torchair_model_dump() {
        let (l, loc) = locate(&split(
            "dump/worldsize2_global_rank1/20241121145738/0/ge_default_20200808163719_121/1/3",
        ));
        assert_eq!(l, Layout::Model);
        assert_eq!((loc.world_size, loc.rank), (Some(2), Some(1)));
        assert_eq!(loc.time.as_deref(), Some("20241121145738"));
        assert_eq!(loc.device, Some(0));
        assert_eq!(loc.model.as_deref(), Some("ge_default_20200808163719_121"));
        assert_eq!((loc.model_id, loc.step), (Some(1), Some(3)));
    }

    #[test]
    fn plain_and_msprobe_model_dumps() {
        let (l, loc) = locate(&split("dump/msprobe_ge_dump/20240101120000/1/graph_1/7/0"));
        assert_eq!(l, Layout::Model);
        assert_eq!(
            (loc.rank, loc.device, loc.model_id, loc.step),
            (None, Some(1), Some(7), Some(0))
        );
        // root = the time directory itself
        let (l, loc) = locate(&split("0/m/1/2"));
        assert_eq!((l, loc.time, loc.step), (Layout::Model, None, Some(2)));
    }

    #[test]
    fn single_op_and_exception() {
        let (l, loc) = locate(&split("dump/step3/20240101120000/2"));
        assert_eq!(l, Layout::SingleOp);
        assert_eq!((loc.device, loc.step), (Some(2), Some(3)));
        let (l, loc) = locate(&split("work/extra-info/data-dump/1"));
        assert_eq!((l, loc.device), (Layout::Exception, Some(1)));
    }

    #[test]
    fn mindspore_kernel_dump() {
        let (l, loc) = locate(&split("dump_data0/rank_3/mnist/2/75"));
        assert_eq!(l, Layout::MindSpore);
        assert_eq!(
            (loc.rank, loc.model.as_deref(), loc.model_id, loc.step),
            (Some(3), Some("mnist"), Some(2), Some(75))
        );
        assert_eq!(locate(&split("dump/rank_x/mnist/2/75")).0, Layout::Other);
    }

    #[test]
    fn npugraph_ex_and_other() {
        let (l, loc) = locate(&split("out/worldsize1_global_rank0"));
        assert_eq!((l, loc.rank), (Layout::NpugraphEx, Some(0)));
        assert_eq!(locate(&split("a/b/c")).0, Layout::Other);
        assert_eq!(locate::<&str>(&[]).0, Layout::Other);
        // short numbers are not a time: no single-op match
        assert_eq!(locate(&split("a/12/0")).0, Layout::Other);
        let (l, loc) = locate(&split("fx/worldsize2_global_rank1/graph_3/4"));
        assert_eq!(
            (l, loc.rank, loc.model.as_deref(), loc.step),
            (Layout::FxDump, Some(1), Some("graph_3"), Some(4))
        );
    }
}
