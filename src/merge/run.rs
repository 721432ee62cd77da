//! The merge itself: the shards read with polars, one row per (step, rank), each step's verdict.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use polars::prelude::{
    col, len, lit, when, Column, DataFrame, DataType, Engine, Expr, JoinArgs, JoinType, LazyFrame,
    ParquetReader, PlRefPath, ScanArgsParquet, SerReader, SortMultipleOptions,
};

use super::{
    Evidence, MergeReport, MissingInStep, MissingRanks, Point, RankFinding, Received, Skipped,
    StepReport, Summary, Unread, Unseen, Verdict,
};
use crate::shard::{ShardSchema, META_SCHEMA, META_UNREADABLE, META_VERSION, SCAN_SHARD};

/// What could not be seen: the skipped shards, and per job the ranks missing from every step
/// or from some steps.
fn unseen(steps: &[StepReport], skipped: &[Skipped], unread: Vec<Unread>) -> Unseen {
    let mut seen: BTreeMap<u64, std::collections::BTreeSet<u64>> = BTreeMap::new();
    for st in steps {
        if let Some(w) = st.world_size {
            let ranks = seen.entry(w).or_default();
            ranks.extend((0..w).filter(|r| !st.missing_ranks.contains(r)));
        }
    }
    let ranks = seen
        .iter()
        .filter_map(|(&w, present)| {
            let ranks: Vec<u64> = (0..w).filter(|r| !present.contains(r)).collect();
            (!ranks.is_empty()).then_some(MissingRanks {
                world_size: w,
                ranks,
            })
        })
        .collect();
    let steps = steps
        .iter()
        .filter_map(|st| {
            let w = st.world_size?;
            let ranks: Vec<u64> = st
                .missing_ranks
                .iter()
                .copied()
                .filter(|r| seen.get(&w).is_some_and(|p| p.contains(r)))
                .collect();
            (!ranks.is_empty()).then(|| MissingInStep {
                world_size: w,
                model: st.model.clone(),
                step: st.step,
                ranks,
            })
        })
        .collect();
    Unseen {
        shards: skipped.iter().map(|s| s.path.clone()).collect(),
        unread,
        ranks,
        steps,
    }
}

/// The shard files named by `inputs`: files as given, directories as their `*.parquet` files
/// (not recursive), sorted by path.
pub fn shard_files(inputs: &[PathBuf]) -> anyhow::Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for input in inputs {
        let meta =
            std::fs::metadata(input).with_context(|| crate::error::CannotRead::new(input))?;
        if !meta.is_dir() {
            files.push(input.clone());
            continue;
        }
        // The one tree walker (sorted by name), one level deep.
        for e in crate::walk::sorted(input).min_depth(1).max_depth(1) {
            let e = e.with_context(|| format!("cannot list {}", input.display()))?;
            let p = e.path();
            // (A shard being written, `.NAME.parquet.PID-N.npgx-tmp`, is not one.)
            if p.extension().is_some_and(|x| x == "parquet") && p.is_file() {
                files.push(p.to_path_buf());
            }
        }
    }
    Ok(files)
}

/// Checks that `path` is a Parquet file whose metadata names `schema` (reads only the footer);
/// returns how many files its scan could not read ([`META_UNREADABLE`], 0 when absent).
pub fn check_shard(path: &Path, schema: ShardSchema) -> Result<u64, String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut reader = ParquetReader::new(file);
    let meta = reader
        .get_metadata()
        .map_err(|e| format!("not a readable Parquet file (truncated?): {e}"))?;
    let kv = meta.key_value_metadata().as_deref().unwrap_or(&[]);
    let get = |key: &str| {
        kv.iter()
            .find(|k| k.key == key)
            .and_then(|k| k.value.clone())
    };
    let Some(name) = get(META_SCHEMA) else {
        return Err(format!(
            "not an npgx shard (no {META_SCHEMA} in its key-value metadata)"
        ));
    };
    if name != schema.name {
        return Err(format!(
            "a {name} file, not a {} (write shards with `npgx dump-scan --format parquet`)",
            schema.name
        ));
    }
    let version = get(META_VERSION).unwrap_or_default();
    if version != schema.version.to_string() {
        return Err(format!(
            "{} version {version:?}; this npgx reads version {}",
            schema.name, schema.version
        ));
    }
    Ok(get(META_UNREADABLE)
        .and_then(|n| n.parse().ok())
        .unwrap_or(0))
}

/// Reads a shard whole, for naming the file a failed merge could not read.
fn read_whole(path: &Path) -> Result<(), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    ParquetReader::new(file)
        .finish()
        .map(drop)
        .map_err(|e| format!("data cannot be read (corrupt?): {e}"))
}

const KEYS: [&str; 4] = ["world_size", "model_key", "step", "rank"];

fn keys() -> Vec<Expr> {
    KEYS.iter().map(|k| col(*k)).collect()
}

/// The columns of a rank's first anomalous (or first born) tensor, `prefix`ed.
const POINT: [&str; 9] = [
    "position",
    "collectives_before",
    "collective",
    "op_name",
    "op_type",
    "io",
    "index",
    "kind",
    "input_anomalous",
];

/// Per (step, rank): counts, the first anomaly and the first birth — one polars plan over the
/// lazy scan of every shard.
fn per_rank(files: &[PathBuf]) -> anyhow::Result<DataFrame> {
    let args = ScanArgsParquet {
        glob: false,
        include_file_paths: Some("shard".into()),
        ..ScanArgsParquet::default()
    };
    let paths = files
        .iter()
        .map(|p| PlRefPath::new(p.to_string_lossy().into_owned()))
        .collect();
    let rows = LazyFrame::scan_parquet_files(paths, args).context("cannot scan the shards")?;
    let totals = rows.clone().group_by(keys()).agg([
        len().cast(DataType::UInt64).alias("tensors"),
        col("anomalous")
            .cast(DataType::UInt64)
            .sum()
            .alias("anomalous_tensors"),
        col("collective").max().alias("last_collective"),
        // Two different files for one rank and step: a rank scanned twice, or two jobs' shards.
        col("shard").min().alias("shard_min"),
        col("shard").max().alias("shard_max"),
    ]);
    // Anomalous tensors only (pushed down into the scan), then one row per operator execution:
    // its first anomalous tensor (inputs before outputs, then by index) and whether any input
    // and any output was anomalous.
    let io_rank = when(col("io").eq(lit("input")))
        .then(lit(0u32))
        .otherwise(lit(1u32));
    let mut op_keys = keys();
    op_keys.push(col("position"));
    let ops = rows
        .filter(col("anomalous"))
        .select(
            keys()
                .into_iter()
                .chain([
                    col("position"),
                    col("collectives_before"),
                    col("collective"),
                    col("op_name"),
                    col("op_type"),
                    col("io"),
                    col("index"),
                    col("kind"),
                    io_rank.alias("io_rank"),
                ])
                .collect::<Vec<_>>(),
        )
        .sort_by_exprs(
            keys()
                .into_iter()
                .chain([col("position"), col("io_rank"), col("index")])
                .collect::<Vec<_>>(),
            SortMultipleOptions::default().with_nulls_last(true),
        )
        .group_by_stable(op_keys)
        .agg([
            col("collectives_before").first(),
            col("collective").first(),
            col("op_name").first(),
            col("op_type").first(),
            col("io").first(),
            col("index").first(),
            col("kind").first(),
            col("io")
                .eq(lit("input"))
                .any(false)
                .alias("input_anomalous"),
            col("io")
                .eq(lit("output"))
                .any(false)
                .alias("output_anomalous"),
        ]);
    let first_of = |lf: LazyFrame, prefix: &str| {
        lf.group_by_stable(keys()).agg(
            POINT
                .iter()
                .map(|c| col(*c).first().alias(format!("{prefix}{c}")))
                .collect::<Vec<_>>(),
        )
    };
    let first = first_of(ops.clone(), "first_");
    let born = first_of(
        ops.filter(col("output_anomalous").and(col("input_anomalous").not())),
        "born_",
    );
    let join = |a: LazyFrame, b: LazyFrame| {
        let mut args = JoinArgs::new(JoinType::Left);
        args.nulls_equal = true;
        a.join(b, keys(), keys(), args)
    };
    // The streaming engine reads the shards in morsels: peak memory is the aggregates', not
    // every projected row of every shard (docs/performance.md).
    join(join(totals, first), born)
        .sort(KEYS, SortMultipleOptions::default().with_nulls_last(true))
        .collect_with_engine(Engine::Streaming)
        // One plan, one sink: always a single frame (`Multiple` comes only from collect_all).
        .map(|r| r.unwrap_single())
        .context("cannot merge the shards")
}

fn column<'a>(df: &'a DataFrame, name: &str) -> anyhow::Result<&'a Column> {
    df.column(name)
        .with_context(|| format!("merged table has no column {name}"))
}

fn u64s(df: &DataFrame, name: &str) -> anyhow::Result<Vec<Option<u64>>> {
    let c = column(df, name)?.cast(&DataType::UInt64)?;
    Ok(c.u64()?.iter().collect())
}

fn strs(df: &DataFrame, name: &str) -> anyhow::Result<Vec<Option<String>>> {
    let c = column(df, name)?.cast(&DataType::String)?;
    Ok(c.str()?.iter().map(|v| v.map(str::to_string)).collect())
}

fn bools(df: &DataFrame, name: &str) -> anyhow::Result<Vec<Option<bool>>> {
    let c = column(df, name)?.cast(&DataType::Boolean)?;
    Ok(c.bool()?.iter().collect())
}

/// The `prefix`ed point columns of the per-rank table, row by row.
fn points(df: &DataFrame, prefix: &str) -> anyhow::Result<Vec<Option<Point>>> {
    let n = |c: &str| u64s(df, &format!("{prefix}{c}"));
    let s = |c: &str| strs(df, &format!("{prefix}{c}"));
    let (position, before, collective, index) = (
        n("position")?,
        n("collectives_before")?,
        n("collective")?,
        n("index")?,
    );
    let (op_name, op_type, io, kind) = (s("op_name")?, s("op_type")?, s("io")?, s("kind")?);
    let input = bools(df, &format!("{prefix}input_anomalous"))?;
    Ok((0..df.height())
        .map(|i| {
            Some(Point {
                position: position[i]?,
                collectives_before: before[i].unwrap_or(0),
                collective: collective[i],
                op_name: op_name[i].clone(),
                op_type: op_type[i].clone(),
                io: io[i].clone(),
                index: index[i],
                kind: kind[i].clone(),
                input_anomalous: input[i].unwrap_or(false),
            })
        })
        .collect())
}

/// Collectives passed before a first anomaly: collective k itself counts as passed when only
/// its outputs are anomalous (the anomaly came through it).
fn passed(p: &Point) -> u64 {
    match p.collective {
        Some(k) if !p.input_anomalous => k + 1,
        Some(k) => k,
        None => p.collectives_before,
    }
}

/// Names the first anomalous rank of a step from its ranks' findings (wall clocks never count).
pub fn decide(findings: &[RankFinding], collectives: u64) -> Option<Verdict> {
    let placed: Vec<(u64, u64, u64)> = findings
        .iter()
        .filter_map(|f| {
            let p = f.first_anomaly.as_ref()?;
            Some((f.rank, passed(p), p.position))
        })
        .collect();
    let by_collective = collectives > 0;
    let key = |&(_, passed, position): &(u64, u64, u64)| {
        if by_collective {
            passed
        } else {
            position
        }
    };
    let first = placed.iter().map(key).min()?;
    let origin: Vec<u64> = placed
        .iter()
        .filter(|p| key(p) == first)
        .map(|p| p.0)
        .collect();
    let evidence = match (origin.len(), by_collective) {
        (1, true) => Evidence::CollectiveOrdinal,
        (1, false) => Evidence::ExecutionPosition,
        _ => Evidence::Ambiguous,
    };
    // Only a collective links ranks: without one, a later anomaly on another rank was not
    // received from the earliest (each rank ran its own operators), so none is named receiver.
    let received = placed
        .iter()
        .filter(|_| by_collective)
        .filter(|p| key(p) > first)
        .map(|&(rank, passed, _)| Received {
            rank,
            after_collective: by_collective.then(|| passed.saturating_sub(1)),
        })
        .collect();
    let origin_received = findings
        .iter()
        .filter(|f| origin.contains(&f.rank))
        .filter_map(|f| f.first_anomaly.as_ref())
        .all(|p| p.collective.is_some() && !p.input_anomalous);
    Some(Verdict {
        origin,
        evidence,
        before_collective: (by_collective && first < collectives).then_some(first),
        received,
        origin_received,
    })
}

type StepKey = (Option<u64>, Option<String>, Option<u64>);

/// The shards to merge: the readable ones, the files skipped and why, and the shards that
/// report files their scan could not read.
#[derive(Default)]
struct Shards {
    files: Vec<PathBuf>,
    skipped: Vec<Skipped>,
    unread: Vec<Unread>,
}

impl Shards {
    /// Lists the files under `inputs` and checks each is a shard of this schema version; fails
    /// when none is.
    fn list(inputs: &[PathBuf]) -> anyhow::Result<Shards> {
        let mut s = Shards::default();
        for f in shard_files(inputs)? {
            match check_shard(&f, SCAN_SHARD) {
                Ok(n) => {
                    if n > 0 {
                        s.unread.push(Unread {
                            shard: f.display().to_string(),
                            files: n,
                        });
                    }
                    s.files.push(f);
                }
                Err(message) => s.skipped.push(Skipped {
                    path: f.display().to_string(),
                    message,
                }),
            }
        }
        if s.files.is_empty() {
            let why: Vec<String> = s
                .skipped
                .iter()
                .map(|k| format!("{}: {}", k.path, k.message))
                .collect();
            anyhow::bail!("no shard to merge{}", {
                if why.is_empty() {
                    " (no .parquet file given)".to_string()
                } else {
                    format!(":\n  {}", why.join("\n  "))
                }
            });
        }
        Ok(s)
    }

    /// The shards' rows per (step, rank) ([`per_rank`]). A shard whose footer reads but whose
    /// data does not is found by reading each file whole (only on this path), skipped, and the
    /// rest merged.
    fn read(&mut self) -> anyhow::Result<DataFrame> {
        loop {
            match per_rank(&self.files) {
                Ok(df) => return Ok(df),
                Err(e) => {
                    let before = self.files.len();
                    let skipped = &mut self.skipped;
                    self.files.retain(|f| match read_whole(f) {
                        Ok(()) => true,
                        Err(message) => {
                            skipped.push(Skipped {
                                path: f.display().to_string(),
                                message,
                            });
                            false
                        }
                    });
                    if self.files.len() == before || self.files.is_empty() {
                        return Err(e);
                    }
                }
            }
        }
    }
}

/// The findings of every rank, by (world size, model, step); rows without a rank are left out
/// with a warning, and so are (warned about) a rank's rows in several shards and jobs of
/// several world sizes mixed.
fn rank_findings(
    df: &DataFrame,
    warnings: &mut Vec<String>,
) -> anyhow::Result<BTreeMap<StepKey, Vec<RankFinding>>> {
    let (ws, model, step, rank) = (
        u64s(df, "world_size")?,
        strs(df, "model_key")?,
        u64s(df, "step")?,
        u64s(df, "rank")?,
    );
    let (tensors, anomalous, last) = (
        u64s(df, "tensors")?,
        u64s(df, "anomalous_tensors")?,
        u64s(df, "last_collective")?,
    );
    let (first, born) = (points(df, "first_")?, points(df, "born_")?);
    let (shard_min, shard_max) = (strs(df, "shard_min")?, strs(df, "shard_max")?);
    let mut steps: BTreeMap<StepKey, Vec<RankFinding>> = BTreeMap::new();
    for i in 0..df.height() {
        let at = format!(
            "world size {}, model {}, step {}",
            ws[i].map_or("?".into(), |v| v.to_string()),
            model[i].as_deref().unwrap_or("?"),
            step[i].map_or("?".into(), |v| v.to_string())
        );
        let Some(r) = rank[i] else {
            warnings.push(format!(
                "{} tensors of {at} have no rank (their tree has no worldsize…_global_rank… level \
                 and the scan had no --rank or --rank-from-env): not merged",
                tensors[i].unwrap_or(0)
            ));
            continue;
        };
        if shard_min[i] != shard_max[i] {
            warnings.push(format!(
                "rank {r} of {at} has rows in several shards ({} … {}): merged as one rank",
                shard_min[i].as_deref().unwrap_or("?"),
                shard_max[i].as_deref().unwrap_or("?")
            ));
        }
        let f = RankFinding {
            rank: r,
            tensors: tensors[i].unwrap_or(0),
            anomalous_tensors: anomalous[i].unwrap_or(0),
            collectives: last[i].map_or(0, |k| k + 1),
            first_anomaly: first[i].clone(),
            first_born: born[i].clone(),
        };
        steps
            .entry((ws[i], model[i].clone(), step[i]))
            .or_default()
            .push(f);
    }
    let sizes: std::collections::BTreeSet<Option<u64>> = steps.keys().map(|k| k.0).collect();
    if sizes.len() > 1 {
        let list: Vec<String> = sizes
            .iter()
            .map(|s| s.map_or("unknown".into(), |s| s.to_string()))
            .collect();
        warnings.push(format!(
            "shards of {} jobs mixed (world sizes {}): their steps are kept apart",
            sizes.len(),
            list.join(", ")
        ));
    }
    Ok(steps)
}

/// A report per step: its ranks present and missing, its anomalous ranks and the verdict on
/// where the anomaly began; counted into `summary`.
fn step_reports(
    steps: BTreeMap<StepKey, Vec<RankFinding>>,
    summary: &mut Summary,
) -> Vec<StepReport> {
    let mut out = Vec::new();
    for ((world_size, model, step), ranks) in steps {
        summary.steps += 1;
        summary.tensors += ranks.iter().map(|r| r.tensors).sum::<u64>();
        let present: Vec<u64> = ranks.iter().map(|r| r.rank).collect();
        let missing_ranks: Vec<u64> = world_size
            .map(|w| {
                (0..w)
                    .filter(|r| present.binary_search(r).is_err())
                    .collect()
            })
            .unwrap_or_default();
        let collectives = ranks.iter().map(|r| r.collectives).max().unwrap_or(0);
        let findings: Vec<RankFinding> = ranks
            .into_iter()
            .filter(|r| r.first_anomaly.is_some())
            .collect();
        let verdict = decide(&findings, collectives);
        if !findings.is_empty() {
            summary.anomalous_steps += 1;
        }
        out.push(StepReport {
            world_size,
            model,
            step,
            ranks: present.len() as u64,
            complete: missing_ranks.is_empty(),
            missing_ranks,
            collectives,
            anomalous_ranks: findings.iter().map(|f| f.rank).collect(),
            verdict,
            findings,
        });
    }
    out
}

/// Merges the shards under `inputs`. Files that are not shards of this schema version are
/// skipped and listed; fails when none is left or polars cannot read them.
pub fn merge(inputs: &[PathBuf]) -> anyhow::Result<MergeReport> {
    let mut shards = Shards::list(inputs)?;
    let df = shards.read()?;
    let Shards {
        files,
        skipped,
        mut unread,
    } = shards;
    let mut warnings = Vec::new();
    let steps = rank_findings(&df, &mut warnings)?;
    let mut summary = Summary {
        shards: files.len() as u64,
        skipped: skipped.len() as u64,
        ..Summary::default()
    };
    let out = step_reports(steps, &mut summary);
    unread.retain(|u| files.iter().any(|f| f.display().to_string() == u.shard));
    let unseen = unseen(&out, &skipped, unread);
    // Without one tensor row no rank is known, so none can be missing either: that is not a
    // complete merge, whatever `unseen` says.
    if out.is_empty() {
        warnings.push(
            "no shard holds a tensor: no step and no rank was seen (did the scans check nothing?)"
                .into(),
        );
    }
    Ok(MergeReport {
        complete: unseen.is_empty() && !out.is_empty(),
        unseen,
        summary,
        steps: out,
        skipped,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(rank: u64, collective: Option<u64>, before: u64, input: bool) -> RankFinding {
        RankFinding {
            rank,
            tensors: 10,
            anomalous_tensors: 1,
            collectives: 3,
            first_anomaly: Some(Point {
                position: 5 + rank,
                collectives_before: before,
                collective,
                op_name: None,
                op_type: None,
                io: None,
                index: None,
                kind: None,
                input_anomalous: input,
            }),
            first_born: None,
        }
    }

    #[test]
    fn the_rank_born_before_the_collective_is_the_origin() {
        // rank 2 goes wrong before collective 1; ranks 0 and 1 receive it through collective 1
        // (clean inputs, anomalous outputs), rank 3 later still.
        let v = decide(
            &[
                finding(0, Some(1), 1, false),
                finding(1, Some(1), 1, false),
                finding(2, None, 1, false),
                finding(3, None, 2, false),
            ],
            3,
        )
        .expect("a verdict");
        assert_eq!(v.origin, [2]);
        assert!(!v.origin_received);
        assert_eq!(v.evidence, Evidence::CollectiveOrdinal);
        assert_eq!(v.before_collective, Some(1));
        let got: Vec<(u64, Option<u64>)> = v
            .received
            .iter()
            .map(|r| (r.rank, r.after_collective))
            .collect();
        assert_eq!(got, [(0, Some(1)), (1, Some(1)), (3, Some(1))]);
    }

    #[test]
    fn two_ranks_in_one_interval_are_ambiguous_and_positions_decide_without_collectives() {
        let both = decide(
            &[finding(4, None, 0, false), finding(6, Some(0), 0, true)],
            2,
        )
        .expect("a verdict");
        assert_eq!(
            (both.origin, both.evidence, both.before_collective),
            (vec![4, 6], Evidence::Ambiguous, Some(0))
        );
        let by_position = decide(&[finding(4, None, 0, false), finding(6, None, 0, false)], 0)
            .expect("a verdict");
        assert_eq!(by_position.origin, [4]);
        // Only receivers present: the origin named is itself a receiver.
        let only = decide(&[finding(1, Some(1), 1, false)], 3).expect("a verdict");
        assert_eq!((only.origin, only.origin_received), (vec![1], true));
        assert_eq!(by_position.evidence, Evidence::ExecutionPosition);
        // Without a collective nothing links the ranks: the later rank is not named a receiver.
        assert!(by_position.received.is_empty());
        assert!(decide(&[], 3).is_none());
    }
}
