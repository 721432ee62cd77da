//! Dump file names (`dump-data.md` §1.6, §2, §7).
//!
//! ```text
//! op dump     : {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp16}
//! FFTS+       : {op_type}.{op_name}.{task_id}.{stream_id}.{timestamp16}.{task_type}.{context_id}.{thread_id}.{device_id}
//! exception   : {op_type}.{op_name}.{task_id}.{YYYYMMDDhhmmssmmm}          (no stream id)
//! args excep. : exception_info.{stream_id}.{task_id}.{YYYYMMDDhhmmssmmm}
//! overflow    : Opdebug.Node_OpDebug.{task_id}.{stream_id}.{timestamp}[.4.{ctx}.{thread}.{dev}]
//! stats       : <op dump name>.csv
//! npy         : <anything>.npy, msaccucmp convert output <op dump name>.{input|output}.{i}.npy
//! FX npy      : {fx node}-{target}.{INPUT|OUTPUT}.{i}[.{j}].{YYYYMMDDhhmmssffffff}.npy
//! npugraph_ex : {fx_node}_device_{dev}_{count}.pt
//! statistics  : statistic.csv   (one table for many ops: msprobe's merged CSV, MindSpore's)
//! msprobe     : dump.json       (stack.json, construct.json beside it; tensors in dump_tensor_data/)
//! FX graph    : dynamo_original_graph[_{graph id}][_rank_{r}][_pid_{pid}][_ts_{ts}].txt
//! hashed      : all digits (resolved through mapping.csv)
//! ```
//!
//! Writers replace `.`, `/`, `\` and space in type and name by `_`, so a name splits cleanly on
//! dots: the first token is the type, the maximal all-digit tail (2, 3 or 7 tokens) holds the ids,
//! and whatever stands between is the name (joined back with `.` should an unsanitised writer
//! ever leave a dot in it).

use nom::bytes::complete::take_while1;
use nom::character::complete::char;
use nom::combinator::all_consuming;
use nom::multi::separated_list1;
use nom::Parser;
use serde::Serialize;

use super::header::Io;

/// How the writers sanitise an op type or name for a dump file name (`dump-data.md` §1.6): `.`,
/// `/`, `\` and space become `_`. Matching a real op name against file names goes through it.
pub fn sanitise(name: &str) -> String {
    name.chars()
        .map(|c| {
            if matches!(c, '.' | '/' | '\\' | ' ') {
                '_'
            } else {
                c
            }
        })
        .collect()
}

/// The parsed name of an operator dump (also of its stats CSV).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OpDumpName {
    pub op_type: String,
    /// The sanitised name from the file name; the real name is in the header.
    pub op_name: String,
    pub task_id: u64,
    /// Absent in exception dumps.
    pub stream_id: Option<u64>,
    /// 16 digits: µs since the epoch; 17 digits: local `YYYYMMDDhhmmssmmm` (exception dumps).
    pub timestamp: u64,
    pub timestamp_digits: usize,
    pub ffts: Option<FftsIds>,
}

/// The FFTS+ suffix of a sub-task dump name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct FftsIds {
    pub task_type: u64,
    pub context_id: u64,
    pub thread_id: u64,
    pub device_id: u64,
}

impl OpDumpName {
    /// Whether this is an overflow-detection payload (`Opdebug.Node_OpDebug.*`).
    pub fn is_opdebug(&self) -> bool {
        self.op_type == "Opdebug" && self.op_name == "Node_OpDebug"
    }
}

/// The parsed name of a torchair FX data dump file (torchair `fx_dumper.py`):
/// `{node.name}-{node.target}.{INPUT|OUTPUT}.{i}[.{j}].{timestamp}.npy`, where `i` is the
/// argument or result position, `j` the element of a list argument, and the timestamp
/// `%Y%m%d%H%M%S%f` (UTC) of the call, the same for every file of one call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FxNpyName {
    /// `{node.name}-{node.target}`, e.g. `mm-aten.mm.default`: what a GE graph's
    /// `_fx_tensor_name` names (see [`parse_fx_tensor_name`]).
    pub op: String,
    pub io: Io,
    pub index: usize,
    /// Element of a list argument (`INPUT.{i}.{j}`).
    pub part: Option<usize>,
    /// The call's timestamp as µs since the Unix epoch.
    pub timestamp_us: u64,
}

/// Splits a GE graph's `_fx_tensor_name` attribute (torchair sets it on every output
/// descriptor of the GE ops converted from one FX node) into the FX op name and the output
/// index: `add_1-aten.add.Tensor.OUTPUT.0` → (`add_1-aten.add.Tensor`, 0).
pub fn parse_fx_tensor_name(s: &str) -> Option<(&str, usize)> {
    let (op, index) = s.rsplit_once(".OUTPUT.")?;
    (!op.is_empty() && is_digits(index)).then_some(())?;
    Some((op, index.parse().ok()?))
}

/// Which of torchair's graph dump forms a file is (`debug.graph_dump.type`, chosen by the
/// file's extension in torchair's `dump_graph`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GraphForm {
    /// The GE `GraphDef` in protobuf text: `_fx_tensor_name` on the outputs of each FX node's
    /// last GE operator.
    #[default]
    Txt,
    /// The same graph for Netron, every descriptor one escaped string.
    Pbtxt,
    /// The Python that builds the graph: `# File` and `## FX Code` lines above each FX node's
    /// GE operators.
    Py,
}

/// The parsed name of a torchair graph dump `dynamo_original_graph_*.{txt,pbtxt,py}`
/// (`debug.graph_dump`): the FX graph converted to a GE graph, before GE's passes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FxGraphName {
    /// `N` of torchair's `graph_<N>` (the GE model name of the graph's dumps).
    pub graph_id: Option<u64>,
    pub rank: Option<u32>,
    pub form: GraphForm,
}

/// Parses `dynamo_original_graph[_{graph id}][_rank_{r}][_pid_{pid}][_ts_{ts}].{txt,pbtxt,py}`
/// and the names before torchair 7.1, `dynamo_original_graph_{ts}.{type}` (a 14-digit or longer
/// number is a timestamp, never a graph id); `None` for any other name
/// (`dynamo_optimized_graph_*` included: GE's passes have renamed and fused its operators).
pub fn parse_fx_graph_name(name: &str) -> Option<FxGraphName> {
    let rest = name.strip_prefix("dynamo_original_graph")?;
    let (rest, form) = if let Some(r) = rest.strip_suffix(".pbtxt") {
        (r, GraphForm::Pbtxt)
    } else if let Some(r) = rest.strip_suffix(".txt") {
        (r, GraphForm::Txt)
    } else {
        (rest.strip_suffix(".py")?, GraphForm::Py)
    };
    let mut out = FxGraphName {
        form,
        ..FxGraphName::default()
    };
    if rest.is_empty() {
        return Some(out);
    }
    let t: Vec<&str> = rest.strip_prefix('_')?.split('_').collect();
    let mut i = 0;
    if t.first().is_some_and(|x| is_digits(x)) {
        if t[0].len() < 14 {
            out.graph_id = t[0].parse().ok();
        }
        i = 1;
    }
    while i < t.len() {
        let (key, value) = (t[i], t.get(i + 1).filter(|v| is_digits(v))?);
        match key {
            "rank" => out.rank = value.parse().ok(),
            "pid" | "ts" => {}
            _ => return None,
        }
        i += 2;
    }
    Some(out)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (H. Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYYMMDDhhmmssffffff` (UTC) as µs since the epoch; `None` unless 20 digits of a real time.
fn utc_stamp_us(t: &str) -> Option<u64> {
    if t.len() != 20 || !is_digits(t) {
        return None;
    }
    let n = |a: usize, b: usize| t[a..b].parse::<i64>().ok();
    let (y, mo, d) = (n(0, 4)?, n(4, 6)?, n(6, 8)?);
    let (h, mi, s, us) = (n(8, 10)?, n(10, 12)?, n(12, 14)?, n(14, 20)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    u64::try_from(secs.checked_mul(1_000_000)?.checked_add(us)?).ok()
}

fn parse_fx_npy(stem: &str) -> Option<FxNpyName> {
    let t: Vec<&str> = stem.split('.').collect();
    let at = t.iter().rposition(|x| *x == "INPUT" || *x == "OUTPUT")?;
    let tail = &t[at + 1..];
    let (index, part, stamp) = match tail {
        [i, ts] => (i, None, ts),
        [i, j, ts] => (i, Some(j), ts),
        _ => return None,
    };
    let op = t[..at].join(".");
    if op.is_empty() || !is_digits(index) || part.is_some_and(|j| !is_digits(j)) {
        return None;
    }
    Some(FxNpyName {
        op,
        io: if t[at] == "INPUT" {
            Io::Input
        } else {
            Io::Output
        },
        index: index.parse().ok()?,
        part: match part {
            Some(j) => Some(j.parse().ok()?),
            None => None,
        },
        timestamp_us: utc_stamp_us(stamp)?,
    })
}

/// What a file is, judged by its name alone.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum FileName {
    /// A binary operator dump (including `Opdebug` payloads and args-exception dumps).
    Dump(OpDumpName),
    /// A stats CSV written instead of tensor data.
    Stats(OpDumpName),
    /// A NumPy file; `origin` is set for msaccucmp `convert` output names.
    Npy {
        origin: Option<OpDumpName>,
        io: Option<Io>,
        index: Option<usize>,
    },
    /// A torchair FX data dump (`debug.data_dump.type = "npy"`): one argument or result of one
    /// FX node call.
    FxNpy(FxNpyName),
    /// An npugraph_ex `dump_tensor_data` file.
    Pt {
        fx_node: String,
        device: Option<u32>,
        count: Option<u64>,
    },
    /// A `statistic.csv`: one row per tensor of many ops, the op named in each row.
    StatsTable,
    /// An msprobe `dump.json` (`crate::msprobe`).
    MsprobeDump,
    /// An all-digit name: a dump whose real name was too long, listed in `mapping.csv`.
    Hashed,
    /// The `mapping.csv` that resolves hashed names.
    Mapping,
    Other,
}

fn tokens(name: &str) -> Option<Vec<&str>> {
    let token = take_while1::<_, &str, nom::error::Error<&str>>(|c| c != '.');
    all_consuming(separated_list1(char('.'), token))
        .parse(name)
        .ok()
        .map(|(_, t)| t)
}

/// Whether `t` is one or more ASCII digits.
pub(crate) fn is_digits(t: &str) -> bool {
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// Parses `{op_type}.{op_name}.{ids…}` (the op-dump grammar above).
pub fn parse_op_dump_name(name: &str) -> Option<OpDumpName> {
    let t = tokens(name)?;
    if t.len() >= 4 && t[0] == "exception_info" && t[1..4].iter().all(|x| is_digits(x)) {
        return Some(OpDumpName {
            op_type: "exception_info".into(),
            op_name: "exception_info".into(),
            stream_id: Some(t[1].parse().ok()?),
            task_id: t[2].parse().ok()?,
            timestamp: t[3].parse().ok()?,
            timestamp_digits: t[3].len(),
            ffts: None,
        });
    }
    let digit_tail = t.iter().rev().take_while(|x| is_digits(x)).count();
    // Type and at least one name token must remain before the ids.
    let room = t.len().saturating_sub(2);
    let n = [7, 3, 2]
        .into_iter()
        .find(|&n| n <= digit_tail && n <= room)?;
    let ids: Vec<u64> = t[t.len() - n..]
        .iter()
        .map(|x| x.parse().ok())
        .collect::<Option<_>>()?;
    let ts_token = t[t.len() - n + if n == 2 { 1 } else { 2 }];
    let (stream_id, timestamp) = match n {
        2 => (None, ids[1]),
        _ => (Some(ids[1]), ids[2]),
    };
    Some(OpDumpName {
        op_type: t[0].to_string(),
        op_name: t[1..t.len() - n].join("."),
        task_id: ids[0],
        stream_id,
        timestamp,
        timestamp_digits: ts_token.len(),
        ffts: (n == 7).then(|| FftsIds {
            task_type: ids[3],
            context_id: ids[4],
            thread_id: ids[5],
            device_id: ids[6],
        }),
    })
}

fn parse_pt(stem: &str) -> FileName {
    // {fx_node}_device_{dev}_{count}
    let parsed = stem.rsplit_once("_device_").and_then(|(node, rest)| {
        let (dev, count) = rest.split_once('_')?;
        (is_digits(dev) && is_digits(count) && !node.is_empty())
            .then(|| (node, dev.parse().ok(), count.parse().ok()))
    });
    match parsed {
        Some((node, device, count)) => FileName::Pt {
            fx_node: node.to_string(),
            device,
            count,
        },
        None => FileName::Pt {
            fx_node: stem.to_string(),
            device: None,
            count: None,
        },
    }
}

fn parse_npy(stem: &str) -> FileName {
    // {dump name}.{input|output}.{i}[.{shape}]
    let t: Vec<&str> = stem.split('.').collect();
    let io_at = t
        .iter()
        .rposition(|x| *x == "input" || *x == "output")
        .filter(|&i| i + 1 < t.len() && is_digits(t[i + 1]));
    match io_at {
        Some(i) => FileName::Npy {
            origin: parse_op_dump_name(&t[..i].join(".")),
            io: Some(if t[i] == "input" {
                Io::Input
            } else {
                Io::Output
            }),
            index: t[i + 1].parse().ok(),
        },
        None => FileName::Npy {
            origin: None,
            io: None,
            index: None,
        },
    }
}

/// Classifies a file by its name (no directory part).
pub fn classify(name: &str) -> FileName {
    match name {
        "mapping.csv" => return FileName::Mapping,
        "statistic.csv" => return FileName::StatsTable,
        "dump.json" => return FileName::MsprobeDump,
        _ => {}
    }
    if is_digits(name) {
        return FileName::Hashed;
    }
    if let Some(stem) = name.strip_suffix(".npy") {
        if let Some(fx) = parse_fx_npy(stem) {
            return FileName::FxNpy(fx);
        }
        return parse_npy(stem);
    }
    if let Some(stem) = name.strip_suffix(".pt") {
        return parse_pt(stem);
    }
    if let Some(stem) = name.strip_suffix(".csv") {
        return parse_op_dump_name(stem).map_or(FileName::Other, FileName::Stats);
    }
    parse_op_dump_name(name).map_or(FileName::Other, FileName::Dump)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitising_matches_the_writer() {
        assert_eq!(sanitise("layer.0/attn add\\x"), "layer_0_attn_add_x");
    }

    fn op(name: &str) -> OpDumpName {
        match classify(name) {
            FileName::Dump(d) => d,
            other => panic!("{name}: {other:?}"),
        }
    }

    #[test]
    fn normal_dump() {
        let d = op("Add.Add_1.3.2.1700000000123456");
        assert_eq!(d.op_type, "Add");
        assert_eq!(d.op_name, "Add_1");
        assert_eq!((d.task_id, d.stream_id), (3, Some(2)));
        assert_eq!(
            (d.timestamp, d.timestamp_digits),
            (1_700_000_000_123_456, 16)
        );
        assert_eq!(d.ffts, None);
    }

    #[test]
    fn ffts_plus_dump() {
        let d =
            op("Add.partition0_rank1_new_sub_graph1_sgt_graph_0_Add.0.3.1673383728093446.4.1.0.0");
        assert_eq!(d.op_name, "partition0_rank1_new_sub_graph1_sgt_graph_0_Add");
        assert_eq!(
            (d.task_id, d.stream_id, d.timestamp),
            (0, Some(3), 1_673_383_728_093_446)
        );
        let f = d.ffts.unwrap();
        assert_eq!(
            (f.task_type, f.context_id, f.thread_id, f.device_id),
            (4, 1, 0, 0)
        );
    }

    #[test]
    fn exception_dump_has_no_stream() {
        let d = op("aclnnIndexSelect_0_L0.GatherV3AiCore.1.20250508095618530");
        assert_eq!(d.op_type, "aclnnIndexSelect_0_L0");
        assert_eq!(d.op_name, "GatherV3AiCore");
        assert_eq!((d.task_id, d.stream_id), (1, None));
        assert_eq!(
            (d.timestamp, d.timestamp_digits),
            (20_250_508_095_618_530, 17)
        );
    }

    #[test]
    fn args_exception_puts_stream_first() {
        let d = op("exception_info.47.102521368.20260910085237489");
        assert_eq!((d.stream_id, d.task_id), (Some(47), 102_521_368));
    }

    #[test]
    fn opdebug() {
        assert!(op("Opdebug.Node_OpDebug.5.2.1700000000000001").is_opdebug());
        assert!(!op("Add.Add.5.2.1700000000000001").is_opdebug());
    }

    #[test]
    fn stats_npy_pt_and_others() {
        assert!(matches!(
            classify("Add.Add_1.3.2.1700000000123456.csv"),
            FileName::Stats(_)
        ));
        assert_eq!(classify("statistic.csv"), FileName::StatsTable);
        assert_eq!(classify("dump.json"), FileName::MsprobeDump);
        assert_eq!(classify("stack.json"), FileName::Other);
        assert_eq!(classify("mapping.csv"), FileName::Mapping);
        assert_eq!(classify("12345678901234567890"), FileName::Hashed);
        match classify("Add.Add_1.3.2.1700000000123456.output.0.npy") {
            FileName::Npy { origin, io, index } => {
                assert_eq!(origin.unwrap().op_name, "Add_1");
                assert_eq!((io, index), (Some(Io::Output), Some(0)));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            classify("x.npy"),
            FileName::Npy {
                origin: None,
                io: None,
                index: None
            }
        );
        assert_eq!(
            classify("npu_rms_norm_device_0_3.pt"),
            FileName::Pt {
                fx_node: "npu_rms_norm".into(),
                device: Some(0),
                count: Some(3)
            }
        );
        assert_eq!(classify("README.md"), FileName::Other);
        assert_eq!(
            classify("dynamo_original_graph_1_rank_0_pid_42_ts_20251010083825327878.txt"),
            FileName::Other
        );
        assert_eq!(classify("a.b.c"), FileName::Other);
        assert_eq!(classify("Add.1.2"), FileName::Other);
        assert_eq!(classify(""), FileName::Other);
        assert_eq!(classify("..."), FileName::Other);
    }

    #[test]
    fn fx_npy_names() {
        let fx = |name: &str| match classify(name) {
            FileName::FxNpy(f) => f,
            other => panic!("{name}: {other:?}"),
        };
        let a = fx("mm-aten.mm.default.INPUT.1.20240125031118787351.npy");
        assert_eq!(a.op, "mm-aten.mm.default");
        assert_eq!((a.io, a.index, a.part), (Io::Input, 1, None));
        // 2024-01-25T03:11:18.787351Z
        assert_eq!(a.timestamp_us, 1_706_152_278_787_351);
        let b = fx("cat-aten.cat.default.INPUT.0.2.20240125031118787351.npy");
        assert_eq!((b.io, b.index, b.part), (Io::Input, 0, Some(2)));
        let c = fx("add_1-aten.add.Tensor.OUTPUT.0.20240125031118787351.npy");
        assert_eq!((c.op.as_str(), c.io), ("add_1-aten.add.Tensor", Io::Output));
        // Not a real time, or not the FX grammar: an ordinary .npy.
        for other in [
            "mm-aten.mm.default.INPUT.1.20241325031118787351.npy",
            "mm.INPUT.x.20240125031118787351.npy",
            ".INPUT.0.20240125031118787351.npy",
            "mm.INPUT.0.1.2.20240125031118787351.npy",
        ] {
            assert!(matches!(classify(other), FileName::Npy { .. }), "{other}");
        }
    }

    #[test]
    fn fx_tensor_and_graph_names() {
        assert_eq!(
            parse_fx_tensor_name("add_1-aten.add.Tensor.OUTPUT.3"),
            Some(("add_1-aten.add.Tensor", 3))
        );
        assert_eq!(parse_fx_tensor_name("add_1-aten.add.Tensor"), None);
        assert_eq!(parse_fx_tensor_name(".OUTPUT.0"), None);
        assert_eq!(
            parse_fx_graph_name(
                "dynamo_original_graph_2_rank_15_pid_421214_ts_20251010083825327878.txt"
            ),
            Some(FxGraphName {
                graph_id: Some(2),
                rank: Some(15),
                form: GraphForm::Txt,
            })
        );
        assert_eq!(
            parse_fx_graph_name("dynamo_original_graph.txt"),
            Some(FxGraphName::default())
        );
        // The three forms, and the names before torchair 7.1 (a timestamp, no graph id).
        let form = |n: &str| parse_fx_graph_name(n).map(|g| (g.graph_id, g.form));
        assert_eq!(
            form("dynamo_original_graph_1_rank_0.py"),
            Some((Some(1), GraphForm::Py))
        );
        assert_eq!(
            form("dynamo_original_graph_3.pbtxt"),
            Some((Some(3), GraphForm::Pbtxt))
        );
        assert_eq!(
            form("dynamo_original_graph_20241122115958123456.txt"),
            Some((None, GraphForm::Txt))
        );
        assert_eq!(
            parse_fx_graph_name("dynamo_original_graph_1_rank_0.json"),
            None
        );
        assert_eq!(parse_fx_graph_name("dynamo_optimized_graph_1.txt"), None);
        assert_eq!(parse_fx_graph_name("dynamo_original_graph_1_x_2.txt"), None);
        assert_eq!(
            parse_fx_graph_name("dynamo_original_graph_1_rank.txt"),
            None
        );
    }
}
