//! Statistics CSVs (`dump-data.md` §2.1–2.4): CANN's per-op stats dumps (`"dump_data": "stats"`,
//! one CSV per op execution) and the `statistic.csv` tables of msprobe and MindSpore (one row
//! per tensor of many ops, the op named in the row).
//!
//! ```text
//! CANN compatible : Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,Count,Nan Count,Negative Inf Count,Positive Inf Count
//! CANN selected   : Input/Output,Index,Data Size,Data Type,Format,Shape,Count[,Max Value][,Min Value][,Avg Value][,Nan Count][,Negative Inf Count][,Positive Inf Count][,l2norm]
//! msprobe table   : Op Type,Op Name,Task ID,Stream ID,Timestamp,Input/Output,Slot,Data Size,Data Type,Format,Shape[,Max Value][,Min Value][,Avg Value][,L2Norm Value][,NaN Count][,Negative Inf Count][,Positive Inf Count][,MD5 Value]
//! MindSpore table : Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,<items…>,     (every row ends in a comma)
//! row             : Input|Output|input|output,<i>,<bytes>,DT_…|float32|-|UNKNOW,<FORMAT>|-,<d0>x<d1>…|"(d0,d1)"|-|NA,<values…>
//! ```
//!
//! Columns are found by header name, never by position, so any selection and order reads, and a
//! trailing comma is one more (empty) field. Fields may be quoted (`"(128,1,28,28)"`). Values are
//! C++ `ostream` output: placeholders `-`, empty, `NA`, `UNKNOW` mean "not computed" (`None`);
//! `nan`, `-nan`, `inf`, `-inf` are real values. A header repeated later in the file (several
//! device chunks) is skipped. A header without an io column (`Input/Output` or `IO`) and an index
//! column (`Index` or `Slot`) is an error that lists the columns found.

use serde::Serialize;

use super::dtype::DType;
use super::header::Io;

/// One tensor row of a stats CSV.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StatsRow {
    /// 1-based line number in the file.
    pub line: usize,
    pub io: Io,
    pub index: usize,
    pub data_size: Option<u64>,
    /// The type name as written (`DT_FLOAT16`, `-`, `UNKNOW`).
    pub dtype_name: String,
    pub dtype: Option<DType>,
    pub format: String,
    /// Device dims; `None` when written as `-` or `NA`.
    pub shape: Option<Vec<u64>>,
    pub max: Option<f64>,
    pub min: Option<f64>,
    pub avg: Option<f64>,
    pub count: Option<u64>,
    pub nan: Option<u64>,
    pub neg_inf: Option<u64>,
    pub pos_inf: Option<u64>,
    pub l2norm: Option<f64>,
    /// The op of the row, in a `statistic.csv` table (`None` in a per-op CSV).
    pub op: Option<RowOp>,
}

/// The op a `statistic.csv` row belongs to.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RowOp {
    pub op_type: String,
    pub op_name: String,
    pub task_id: Option<u64>,
    pub stream_id: Option<u64>,
    /// µs since the epoch, as written (MindSpore writes the input and output rows of one
    /// execution with different timestamps).
    pub timestamp: Option<u64>,
}

/// A parsed stats CSV: its rows and the lines that could not be read.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct StatsCsv {
    pub rows: Vec<StatsRow>,
    /// `(line, reason)` for each row that was skipped.
    pub problems: Vec<(usize, String)>,
}

#[derive(Default)]
struct Columns {
    io: usize,
    index: usize,
    size: Option<usize>,
    dtype: Option<usize>,
    format: Option<usize>,
    shape: Option<usize>,
    max: Option<usize>,
    min: Option<usize>,
    avg: Option<usize>,
    count: Option<usize>,
    nan: Option<usize>,
    neg_inf: Option<usize>,
    pos_inf: Option<usize>,
    l2norm: Option<usize>,
    op_type: Option<usize>,
    op_name: Option<usize>,
    task_id: Option<usize>,
    stream_id: Option<usize>,
    timestamp: Option<usize>,
}

fn columns(header: &[&str]) -> Option<Columns> {
    let find = |name: &str| {
        header
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
    };
    Some(Columns {
        io: find("Input/Output").or_else(|| find("IO"))?,
        index: find("Index").or_else(|| find("Slot"))?,
        size: find("Data Size"),
        dtype: find("Data Type"),
        format: find("Format"),
        shape: find("Shape"),
        max: find("Max Value"),
        min: find("Min Value"),
        avg: find("Avg Value"),
        count: find("Count"),
        nan: find("Nan Count"),
        neg_inf: find("Negative Inf Count"),
        pos_inf: find("Positive Inf Count"),
        l2norm: find("l2norm").or_else(|| find("L2Norm Value")),
        op_type: find("Op Type"),
        op_name: find("Op Name"),
        task_id: find("Task ID"),
        stream_id: find("Stream ID"),
        timestamp: find("Timestamp"),
    })
}

fn placeholder(v: &str) -> bool {
    matches!(v, "" | "-" | "NA" | "UNKNOW")
}

/// Parses a value as C++ `ostream` prints it; placeholders give `None`.
pub fn parse_value(v: &str) -> Result<Option<f64>, String> {
    let v = v.trim();
    if placeholder(v) {
        return Ok(None);
    }
    match v {
        "nan" | "-nan" | "NaN" | "-NaN" => Ok(Some(f64::NAN)),
        "inf" | "+inf" => Ok(Some(f64::INFINITY)),
        "-inf" => Ok(Some(f64::NEG_INFINITY)),
        _ => v
            .parse::<f64>()
            .map(Some)
            .map_err(|_| format!("'{v}' is not a number")),
    }
}

fn parse_count(v: &str) -> Result<Option<u64>, String> {
    let v = v.trim();
    if placeholder(v) {
        return Ok(None);
    }
    v.parse::<u64>()
        .map(Some)
        .map_err(|_| format!("'{v}' is not a count"))
}

/// `4x50x50x16` (CANN), `(128,1,28,28)` (MindSpore), `[2, 3]`; `()` and `[]` are a scalar.
fn parse_shape(v: &str) -> Option<Vec<u64>> {
    let v = v.trim();
    if placeholder(v) {
        return None;
    }
    let bracketed = v
        .strip_prefix('(')
        .and_then(|x| x.strip_suffix(')'))
        .or_else(|| v.strip_prefix('[').and_then(|x| x.strip_suffix(']')));
    match bracketed {
        Some(inner) => inner
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| d.parse().ok())
            .collect(),
        None => v.split('x').map(|d| d.trim().parse().ok()).collect(),
    }
}

fn row(cols: &Columns, f: &[&str], line: usize) -> Result<StatsRow, String> {
    let get = |i: Option<usize>| i.and_then(|i| f.get(i)).map_or("", |s| s.trim());
    let io = match get(Some(cols.io)) {
        v if v.eq_ignore_ascii_case("input") => Io::Input,
        v if v.eq_ignore_ascii_case("output") => Io::Output,
        other => return Err(format!("'{other}' is neither Input nor Output")),
    };
    let index = get(Some(cols.index))
        .parse()
        .map_err(|_| format!("index '{}' is not a number", get(Some(cols.index))))?;
    let value = |i, what: &str| parse_value(get(i)).map_err(|e| format!("{what}: {e}"));
    let count = |i, what: &str| parse_count(get(i)).map_err(|e| format!("{what}: {e}"));
    let dtype_name = get(cols.dtype).to_string();
    let op = match cols.op_name {
        Some(_) => Some(RowOp {
            op_type: get(cols.op_type).to_string(),
            op_name: get(cols.op_name).to_string(),
            task_id: count(cols.task_id, "Task ID")?,
            stream_id: count(cols.stream_id, "Stream ID")?,
            timestamp: count(cols.timestamp, "Timestamp")?,
        }),
        None => None,
    };
    Ok(StatsRow {
        line,
        io,
        index,
        data_size: count(cols.size, "Data Size")?,
        dtype: DType::from_name(&dtype_name).or_else(|| DType::from_framework_name(&dtype_name)),
        dtype_name,
        format: get(cols.format).to_string(),
        shape: parse_shape(get(cols.shape)),
        max: value(cols.max, "Max Value")?,
        min: value(cols.min, "Min Value")?,
        avg: value(cols.avg, "Avg Value")?,
        count: count(cols.count, "Count")?,
        nan: count(cols.nan, "Nan Count")?,
        neg_inf: count(cols.neg_inf, "Negative Inf Count")?,
        pos_inf: count(cols.pos_inf, "Positive Inf Count")?,
        l2norm: value(cols.l2norm, "l2norm")?,
        op,
    })
}

/// Parses a whole stats CSV. Fails only when there is no recognisable header line.
///
/// The `csv` crate splits the records (RFC 4180: a quoted field may hold commas, `""` and line
/// breaks). Blank and whitespace-only lines are skipped, and each row keeps the line it starts on.
pub fn parse(text: &str) -> Result<StatsCsv, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut records = reader.records().filter_map(|r| match r {
        Ok(rec) if rec.len() == 1 && rec[0].trim().is_empty() => None,
        Ok(rec) => Some(Ok((start_line(text, rec.position()), rec))),
        Err(e) => Some(Err((start_line(text, e.position()), e.to_string()))),
    });
    let header = match records.next() {
        Some(Ok((_, header))) => header,
        Some(Err((_, e))) => return Err(e),
        None => return Err("empty file".to_string()),
    };
    let header_fields: Vec<&str> = header.iter().collect();
    let cols = columns(&header_fields).ok_or_else(|| {
        let found: Vec<&str> = header_fields
            .iter()
            .map(|h| h.trim())
            .filter(|h| !h.is_empty())
            .collect();
        format!(
            "unknown statistics header: no io column (Input/Output or IO) with an index column (Index or Slot); the columns found are: {}",
            found.join(", ")
        )
    })?;
    let mut out = StatsCsv::default();
    for record in records {
        match record {
            Ok((_, rec)) if rec == header => {}
            Ok((line, rec)) => {
                let fields: Vec<&str> = rec.iter().collect();
                match row(&cols, &fields, line) {
                    Ok(r) => out.rows.push(r),
                    Err(e) => out.problems.push((line, e)),
                }
            }
            Err((line, e)) => out.problems.push((line, e)),
        }
    }
    Ok(out)
}

/// The 1-based line a record starts on. The reader's position is where it began looking, before
/// the blank lines it skips (`\r` and `\n` bytes), so those are counted here. A record read from a
/// reader always has a position (and so does every error an in-memory text can give); 0 stands
/// for none.
fn start_line(text: &str, at: Option<&csv::Position>) -> usize {
    let Some(at) = at else { return 0 };
    let from = usize::try_from(at.byte()).map_or(text.len(), |b| b.min(text.len()));
    let skipped = text.as_bytes()[from..]
        .iter()
        .take_while(|&&b| matches!(b, b'\r' | b'\n'))
        .filter(|&&b| b == b'\n')
        .count();
    usize::try_from(at.line()).map_or(usize::MAX, |l| l.saturating_add(skipped))
}

#[cfg(test)]
mod tests {
    use super::*;

    const COMPAT: &str = "Input/Output,Index,Data Size,Data Type,Format,Shape,Max Value,Min Value,Avg Value,Count,Nan Count,Negative Inf Count,Positive Inf Count";

    #[test]
    fn compatible_header_rows_from_the_writer_tests() {
        let text = format!(
            "{COMPAT}\nOutput,0,640000,DT_FLOAT,NHWC,4x50x50x16,1.99999,1,1.50004,160000,0,0,0\nInput,0,12,DT_FLOAT,NCHW,3,3,-2,0.666667,3,0,0,0\n"
        );
        let csv = parse(&text).unwrap();
        assert!(csv.problems.is_empty());
        let r = &csv.rows[0];
        assert_eq!((r.io, r.index, r.line), (Io::Output, 0, 2));
        assert_eq!(r.dtype, Some(DType::Float));
        assert_eq!(r.shape, Some(vec![4, 50, 50, 16]));
        assert_eq!(
            (r.max, r.min, r.avg),
            (Some(1.99999), Some(1.0), Some(1.50004))
        );
        assert_eq!(
            (r.count, r.nan, r.neg_inf, r.pos_inf),
            (Some(160000), Some(0), Some(0), Some(0))
        );
        assert_eq!(csv.rows[1].shape, Some(vec![3]));
    }

    #[test]
    fn selected_header_and_placeholders() {
        let text = "Input/Output,Index,Data Size,Data Type,Format,Shape,Count,Max Value,Nan Count,l2norm\n\
                    Input,0,268435456,DT_INT64,ND,100x20x40,80000,100,400,3.5\n\
                    Output,1,8,DT_BF16,ND,NA,NA,NA,NA,NA\n\
                    Output,2,8,UNKNOW,UNKNOW,-,,,,\n";
        let csv = parse(text).unwrap();
        assert!(csv.problems.is_empty(), "{:?}", csv.problems);
        assert_eq!(csv.rows[0].count, Some(80000));
        assert_eq!(csv.rows[0].nan, Some(400));
        assert_eq!(csv.rows[0].min, None);
        assert_eq!(csv.rows[0].l2norm, Some(3.5));
        assert_eq!(csv.rows[1].shape, None);
        assert_eq!(csv.rows[1].max, None);
        assert_eq!(csv.rows[2].dtype, None);
    }

    #[test]
    fn mindspore_table_with_quoted_shapes_and_trailing_commas() {
        let text = "Op Type,Op Name,Task ID,Stream ID,Timestamp,IO,Slot,Data Size,Data Type,Shape,Max Value,Min Value,L2Norm Value\n\
                    GeLU,Default_GeLU-op0,0,0,1721724942726120,input,0,401408,float32,\"(128,1,28,28)\",2.82149,-0.424213,305.872,\n\
                    GeLU,Default_GeLU-op0,0,0,1721724942728400,output,0,1,bool,\"()\",1,0,1,\n";
        let csv = parse(text).unwrap();
        assert!(csv.problems.is_empty(), "{:?}", csv.problems);
        let r = &csv.rows[0];
        assert_eq!((r.io, r.index, r.dtype), (Io::Input, 0, Some(DType::Float)));
        assert_eq!(r.shape, Some(vec![128, 1, 28, 28]));
        assert_eq!(
            (r.max, r.min, r.l2norm, r.avg),
            (Some(2.82149), Some(-0.424213), Some(305.872), None)
        );
        let op = r.op.as_ref().unwrap();
        assert_eq!(
            (op.op_type.as_str(), op.op_name.as_str()),
            ("GeLU", "Default_GeLU-op0")
        );
        assert_eq!(
            (op.task_id, op.stream_id, op.timestamp),
            (Some(0), Some(0), Some(1721724942726120))
        );
        assert_eq!(csv.rows[1].shape, Some(vec![]));
        assert_eq!(csv.rows[1].dtype, Some(DType::Bool));
    }

    #[test]
    fn msprobe_merged_table_by_header() {
        // msprobe's AclDumpDataProcessor: Input/Output and Slot, the selected items, MD5 Value.
        let text = "Op Type,Op Name,Task ID,Stream ID,Timestamp,Input/Output,Slot,Data Size,Data Type,Format,Shape,Max Value,Min Value,L2Norm Value,NaN Count,MD5 Value\n\
                    MatMul,mm_1,7,2,1700000000000001,Output,1,8,DT_FLOAT16,ND,2x2,inf,-1,nan,3,ab12\n";
        let csv = parse(text).unwrap();
        assert!(csv.problems.is_empty(), "{:?}", csv.problems);
        let r = &csv.rows[0];
        assert_eq!(
            (r.io, r.index, r.dtype),
            (Io::Output, 1, Some(DType::Float16))
        );
        assert_eq!(
            (r.max, r.min, r.nan),
            (Some(f64::INFINITY), Some(-1.0), Some(3))
        );
        assert!(r.l2norm.is_some_and(f64::is_nan));
        assert_eq!(r.format, "ND");
        let op = r.op.as_ref().unwrap();
        assert_eq!(
            (op.op_name.as_str(), op.task_id, op.stream_id),
            ("mm_1", Some(7), Some(2))
        );
    }

    #[test]
    fn rows_keep_their_line_across_blank_lines_and_crlf() {
        let text = format!(
            "\r\n  \r\n{COMPAT}\r\n\r\n\r\nOutput,0,4,DT_FLOAT,ND,2,1,0,0.5,2,0,0,0\r\n \t \r\n\nInput,x\r\n\r\n{COMPAT}\r\nInput,1,4,DT_FLOAT,ND,2,1,0,0.5,2,0,0,0"
        );
        let csv = parse(&text).unwrap();
        let lines: Vec<usize> = csv.rows.iter().map(|r| r.line).collect();
        assert_eq!(lines, [6, 12]);
        assert_eq!(csv.problems.len(), 1, "{:?}", csv.problems);
        assert_eq!(csv.problems[0].0, 9);
    }

    #[test]
    fn quoted_fields_hold_commas_and_doubled_quotes() {
        let text = "Op Type,Op Name,IO,Slot,Shape\nAdd,\"a,\"\"b\"\"\",output,0,\"[2, 3]\"\n";
        let csv = parse(text).unwrap();
        assert!(csv.problems.is_empty(), "{:?}", csv.problems);
        let r = &csv.rows[0];
        assert_eq!(r.op.as_ref().unwrap().op_name, "a,\"b\"");
        assert_eq!(r.shape, Some(vec![2, 3]));
    }

    #[test]
    fn an_unknown_header_lists_its_columns() {
        let e = parse("Name,Value,Shape\na,1,2\n").unwrap_err();
        assert!(
            e.ends_with("the columns found are: Name, Value, Shape"),
            "{e}"
        );
    }

    #[test]
    fn glibc_special_values_and_bad_rows() {
        let text = format!(
            "{COMPAT}\nOutput,0,4,DT_FLOAT16,ND,2,inf,-nan,-inf,2,1,0,1\n{COMPAT}\nSideways,0\nOutput,x,4\n"
        );
        let csv = parse(&text).unwrap();
        let r = &csv.rows[0];
        assert_eq!(r.max, Some(f64::INFINITY));
        assert!(r.min.unwrap().is_nan());
        assert_eq!(r.avg, Some(f64::NEG_INFINITY));
        assert_eq!(csv.problems.len(), 2);
        assert_eq!(csv.problems[0].0, 4);
        assert!(parse("a,b\n1,2").is_err());
        assert!(parse("").is_err());
    }
}
