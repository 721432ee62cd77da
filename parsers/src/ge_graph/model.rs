//! The typed records of a GE graph dump and their construction from the generic text tree.
//!
//! The names follow `ge_ir.proto` (package `ge.proto`): [`GeModel`] = `ModelDef`, [`Graph`] =
//! `GraphDef`, [`Op`] = `OpDef`, [`TensorDesc`] = `TensorDescriptor`, [`AttrValue`] = `AttrDef`.
//! Fields the proto declares but npgx has no use for are skipped, as are fields it does not know
//! (newer CANN releases add some), so a dump from any release reads.

use std::borrow::Cow;

use crate::dump::dtype::DType;

use super::text::{Field, Value};
use super::GraphError;

/// A whole dump file: `ModelDef`. Files written by CANN 2020–2023 have no model header and start
/// with `graph {`; then `name` and `version` are `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GeModel {
    pub name: Option<String>,
    pub version: Option<String>,
    /// Graphs in file order: the root graph first, then its partitioned subgraphs.
    pub graphs: Vec<Graph>,
    /// Model attributes (`memory_size`, `stream_num`, `target_type`, …).
    pub attrs: Attrs,
}

/// One `graph { … }`: `GraphDef`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Graph {
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub ops: Vec<Op>,
    pub attrs: Attrs,
    /// 1-based line of the `graph` (or `g`) keyword in the dump.
    pub line: usize,
}

/// One node: `OpDef`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Op {
    /// Node name, e.g. `trans_TransData_0`. After fusion this is the fused node's name; the
    /// pre-fusion names are in [`Op::original_names`].
    pub name: String,
    /// Operator type, e.g. `TransData`, `GatherV2D`.
    pub op_type: String,
    /// Data and control inputs, in order, as written (`"src:index"`).
    pub inputs: Vec<OpInput>,
    pub attrs: Attrs,
    pub id: Option<i64>,
    pub stream_id: Option<i64>,
    pub input_names: Vec<String>,
    pub src_names: Vec<String>,
    pub src_indices: Vec<i64>,
    pub dst_names: Vec<String>,
    pub dst_indices: Vec<i64>,
    /// Device memory offsets of inputs / outputs / workspaces (`input_i`, `output_i`, `workspace`).
    pub input_offsets: Vec<i64>,
    pub output_offsets: Vec<i64>,
    pub workspace_offsets: Vec<i64>,
    pub workspace_bytes: Vec<i64>,
    pub is_input_const: Vec<bool>,
    pub input_desc: Vec<TensorDesc>,
    pub output_desc: Vec<TensorDesc>,
    pub subgraph_names: Vec<String>,
    /// 1-based line of the `op` keyword in the dump.
    pub line: usize,
}

/// One `input:` entry of an op.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpInput {
    /// The producing op's name; empty for an unconnected optional input (`input: ""`).
    pub src: String,
    /// The producer's output index; `-1` marks a control edge; `None` when the text has no
    /// parsable `:index` suffix.
    pub index: Option<i64>,
}

impl OpInput {
    /// Splits `"src:index"` at its last colon (op names may contain colons, the index cannot).
    pub fn parse(raw: &str) -> OpInput {
        if let Some((src, idx)) = raw.rsplit_once(':') {
            if let Ok(index) = idx.parse::<i64>() {
                return OpInput {
                    src: src.to_string(),
                    index: Some(index),
                };
            }
        }
        OpInput {
            src: raw.to_string(),
            index: None,
        }
    }

    /// `src:-1`: an ordering dependency, not a tensor.
    pub fn is_control(&self) -> bool {
        self.index == Some(-1)
    }

    /// `input: ""`: an optional input left unconnected.
    pub fn is_unconnected(&self) -> bool {
        self.src.is_empty()
    }
}

/// A tensor descriptor (`input_desc`, `output_desc`, `td`, a tensor's `desc`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TensorDesc {
    pub name: Option<String>,
    /// The data type as printed, e.g. `DT_FLOAT16` (see [`TensorDesc::dtype_code`]).
    pub dtype: Option<String>,
    /// Runtime (device) shape; `Some(vec![])` for a scalar (`shape { }`), `None` when absent.
    /// `-1` is an unknown dimension, `-2` an unknown rank.
    pub shape: Option<Vec<i64>>,
    /// Runtime format, e.g. `ND`, `NCHW`, `NC1HWC0`, `FRACTAL_NZ`.
    pub layout: Option<String>,
    pub attrs: Attrs,
    pub size: Option<i64>,
    pub device_type: Option<String>,
    pub real_dim_cnt: Option<i64>,
    pub data_offset: Option<i64>,
    pub input_tensor: Option<bool>,
    pub output_tensor: Option<bool>,
}

impl TensorDesc {
    /// The FX tensor torchair converted this output from (attr `_fx_tensor_name`,
    /// `{node.name}-{node.target}.OUTPUT.{i}`), split into the FX op name and `i`.
    pub fn fx_tensor(&self) -> Option<(&str, usize)> {
        crate::dump::name::parse_fx_tensor_name(self.attrs.get_str("_fx_tensor_name")?)
    }

    /// The framework-side format (attr `origin_format`), e.g. `NCHW` for an `NC1HWC0` tensor.
    pub fn origin_format(&self) -> Option<&str> {
        self.attrs.get_str("origin_format")
    }

    /// The framework-side shape (attr `origin_shape`, a list of ints; empty for a scalar).
    pub fn origin_shape(&self) -> Option<&[i64]> {
        match self.attrs.get("origin_shape")? {
            AttrValue::List(l) => Some(&l.i),
            _ => None,
        }
    }

    /// The framework-side dtype (attr `origin_data_type`, e.g. `DT_FLOAT`).
    pub fn origin_data_type(&self) -> Option<&str> {
        self.attrs.get_str("origin_data_type")
    }

    /// The numeric `ge.proto.DataType` of [`TensorDesc::dtype`]: the printed name mapped
    /// through the enum, or the number itself when the writer printed one.
    pub fn dtype_code(&self) -> Option<i32> {
        dtype_code(self.dtype.as_deref()?)
    }
}

/// `ge.proto.DataType` by name (the values coincide with the dump `OutputDataType`, so the dump
/// type table answers), or the number itself when the writer printed one.
pub fn dtype_code(name: &str) -> Option<i32> {
    if let Ok(n) = name.parse::<i32>() {
        return Some(n);
    }
    // GE prints the full enum name; a bare `FLOAT` is not one.
    if !name.starts_with("DT_") {
        return None;
    }
    DType::from_name(name)?.proto_value()
}

/// A tensor value (`t` attr): descriptor plus raw data (present with `DUMP_GE_GRAPH=1`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tensor {
    pub desc: TensorDesc,
    pub data: Vec<u8>,
}

/// A named attribute map (`func` / `na`): `NamedAttrs`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NamedAttrs {
    pub name: String,
    pub attrs: Attrs,
}

/// An attribute map in file order (GE writes keys sorted). Lookups are linear: ops carry tens
/// of attributes, not thousands.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Attrs(pub Vec<(String, AttrValue)>);

impl Attrs {
    /// The value under `key`, if any.
    pub fn get(&self, key: &str) -> Option<&AttrValue> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// The string value under `key` (`s` or `expression`).
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key)?.as_str()
    }

    /// The integer value under `key` (`i`).
    pub fn get_int(&self, key: &str) -> Option<i64> {
        match self.get(key)? {
            AttrValue::I(v) => Some(*v),
            _ => None,
        }
    }

    /// All `(key, value)` pairs in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// One attribute value: the `AttrDef` oneof.
#[derive(Debug, Clone, PartialEq)]
pub enum AttrValue {
    /// `value { }` or no `value` at all.
    Unset,
    /// `s:` — bytes in the proto; decoded as UTF-8, invalid sequences replaced.
    S(String),
    I(i64),
    F(f64),
    B(bool),
    /// `bt:` — raw bytes (e.g. a kernel binary in `_tbe_kernel_buffer`).
    Bt(Vec<u8>),
    List(Box<AttrList>),
    Func(NamedAttrs),
    Td(Box<TensorDesc>),
    T(Box<Tensor>),
    G(Box<Graph>),
    ListListInt(Vec<Vec<i64>>),
    ListListFloat(Vec<Vec<f64>>),
    /// `dt:` — a data type as a number.
    Dt(i64),
    Expression(String),
    /// A value kind this parser does not know, by its field name; kept so nothing fails.
    Other(String),
}

impl AttrValue {
    /// The text of an `s` or `expression` value.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::S(s) | AttrValue::Expression(s) => Some(s),
            _ => None,
        }
    }
}

/// `list { s: … i: … val_type: VT_LIST_INT }`: every element kind the proto allows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AttrList {
    pub s: Vec<String>,
    pub i: Vec<i64>,
    pub f: Vec<f64>,
    pub b: Vec<bool>,
    pub bt: Vec<Vec<u8>>,
    pub td: Vec<TensorDesc>,
    pub t: Vec<Tensor>,
    pub g: Vec<Graph>,
    pub na: Vec<NamedAttrs>,
    pub dt: Vec<i64>,
    /// `VT_LIST_INT`, `VT_LIST_STRING`, … as printed; `None` when the writer omitted it.
    pub val_type: Option<String>,
}

/// Builds typed records from the tree; knows the line table for positions in errors.
pub(super) struct Builder {
    /// Offsets of every `\n` of the document, to turn byte offsets into lines.
    newlines: Vec<usize>,
}

impl Builder {
    pub(super) fn new(doc: &[u8]) -> Self {
        Builder {
            newlines: memchr::memchr_iter(b'\n', doc).collect(),
        }
    }

    /// 1-based line of a byte offset.
    pub(super) fn line(&self, offset: usize) -> usize {
        self.newlines.partition_point(|&n| n < offset) + 1
    }

    fn error(&self, field: &Field<'_>, what: &str) -> GraphError {
        GraphError {
            offset: field.offset,
            line: self.line(field.offset),
            message: format!("field `{}`: {what}", field.name),
        }
    }

    fn int(&self, f: &Field<'_>) -> Result<i64, GraphError> {
        match &f.value {
            Value::Token(t) => parse_int(t).ok_or_else(|| self.error(f, "expected an integer")),
            _ => Err(self.error(f, "expected an integer")),
        }
    }

    fn float(&self, f: &Field<'_>) -> Result<f64, GraphError> {
        match &f.value {
            Value::Token(t) => {
                // `1.5f` (C-style suffix) is valid text format; `inf` must keep its `f`.
                t.parse::<f64>()
                    .ok()
                    .or_else(|| t.strip_suffix(['f', 'F'])?.parse::<f64>().ok())
                    .or_else(|| parse_int(t).map(|v| v as f64))
                    .ok_or_else(|| self.error(f, "expected a number"))
            }
            _ => Err(self.error(f, "expected a number")),
        }
    }

    fn boolean(&self, f: &Field<'_>) -> Result<bool, GraphError> {
        match &f.value {
            Value::Token("true" | "True" | "t" | "1") => Ok(true),
            Value::Token("false" | "False" | "f" | "0") => Ok(false),
            _ => Err(self.error(f, "expected true or false")),
        }
    }

    fn bytes(&self, f: Field<'_>) -> Result<Vec<u8>, GraphError> {
        match f.value {
            Value::Str(s) => Ok(s.into_owned()),
            _ => Err(self.error(&f, "expected a quoted string")),
        }
    }

    fn string(&self, f: Field<'_>) -> Result<String, GraphError> {
        match f.value {
            Value::Str(Cow::Borrowed(b)) => Ok(String::from_utf8_lossy(b).into_owned()),
            Value::Str(Cow::Owned(b)) => Ok(match String::from_utf8(b) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            }),
            _ => Err(self.error(&f, "expected a quoted string")),
        }
    }

    /// A string or an enum name: `dtype: DT_FLOAT`, `val_type: VT_LIST_INT`.
    fn name_or_string(&self, f: Field<'_>) -> Result<String, GraphError> {
        match f.value {
            Value::Token(t) => Ok(t.to_string()),
            _ => self.string(f),
        }
    }

    fn message<'a>(&self, f: Field<'a>) -> Result<(usize, Vec<Field<'a>>), GraphError> {
        match f.value {
            Value::Message(m) => Ok((f.offset, m)),
            _ => Err(self.error(&f, "expected a `{ … }` message")),
        }
    }

    pub(super) fn model(&self, fields: Vec<Field<'_>>) -> Result<GeModel, GraphError> {
        let mut m = GeModel::default();
        // A bare `GraphDef` (torchair's `dynamo_original_graph_*.txt`: `name:`, then `op { … }`
        // at the top level) is one graph.
        if fields.iter().any(|f| f.name == "op") {
            m.graphs.push(self.graph_body(0, fields)?);
            return Ok(m);
        }
        for f in fields {
            match f.name {
                "name" => m.name = Some(self.string(f)?),
                "version" => m.version = Some(self.name_or_string(f)?),
                "graph" => m.graphs.push(self.graph(f)?),
                "attr" => self.attr_entry(f, &mut m.attrs)?,
                _ => {}
            }
        }
        Ok(m)
    }

    fn graph(&self, f: Field<'_>) -> Result<Graph, GraphError> {
        let (offset, fields) = self.message(f)?;
        self.graph_body(offset, fields)
    }

    fn graph_body(&self, offset: usize, fields: Vec<Field<'_>>) -> Result<Graph, GraphError> {
        let mut g = Graph {
            line: self.line(offset),
            ..Graph::default()
        };
        for f in fields {
            match f.name {
                "name" => g.name = self.string(f)?,
                "input" => g.inputs.push(self.string(f)?),
                "output" => g.outputs.push(self.string(f)?),
                "op" => {
                    let (offset, body) = self.message(f)?;
                    let mut op = self.op(body)?;
                    op.line = self.line(offset);
                    g.ops.push(op);
                }
                "attr" => self.attr_entry(f, &mut g.attrs)?,
                _ => {}
            }
        }
        Ok(g)
    }

    fn op(&self, fields: Vec<Field<'_>>) -> Result<Op, GraphError> {
        let mut op = Op::default();
        for f in fields {
            match f.name {
                "name" => op.name = self.string(f)?,
                "type" => op.op_type = self.string(f)?,
                "input" => op.inputs.push(OpInput::parse(&self.string(f)?)),
                "attr" => self.attr_entry(f, &mut op.attrs)?,
                "id" => op.id = Some(self.int(&f)?),
                "stream_id" => op.stream_id = Some(self.int(&f)?),
                "input_name" => op.input_names.push(self.string(f)?),
                "src_name" => op.src_names.push(self.string(f)?),
                "src_index" => op.src_indices.push(self.int(&f)?),
                "dst_name" => op.dst_names.push(self.string(f)?),
                "dst_index" => op.dst_indices.push(self.int(&f)?),
                "input_i" => op.input_offsets.push(self.int(&f)?),
                "output_i" => op.output_offsets.push(self.int(&f)?),
                "workspace" => op.workspace_offsets.push(self.int(&f)?),
                "workspace_bytes" => op.workspace_bytes.push(self.int(&f)?),
                "is_input_const" => op.is_input_const.push(self.boolean(&f)?),
                "input_desc" => op.input_desc.push(self.tensor_desc(self.message(f)?.1)?),
                "output_desc" => op.output_desc.push(self.tensor_desc(self.message(f)?.1)?),
                "subgraph_name" => op.subgraph_names.push(self.string(f)?),
                _ => {}
            }
        }
        Ok(op)
    }

    fn tensor_desc(&self, fields: Vec<Field<'_>>) -> Result<TensorDesc, GraphError> {
        let mut td = TensorDesc::default();
        for f in fields {
            match f.name {
                "name" => td.name = Some(self.string(f)?),
                "dtype" => td.dtype = Some(self.name_or_string(f)?),
                "shape" => {
                    let mut dims = Vec::new();
                    for d in self.message(f)?.1 {
                        if d.name == "dim" {
                            dims.push(self.int(&d)?);
                        }
                    }
                    td.shape = Some(dims);
                }
                "layout" => td.layout = Some(self.name_or_string(f)?),
                "attr" => self.attr_entry(f, &mut td.attrs)?,
                "size" => td.size = Some(self.int(&f)?),
                "device_type" => td.device_type = Some(self.name_or_string(f)?),
                "real_dim_cnt" => td.real_dim_cnt = Some(self.int(&f)?),
                "data_offset" => td.data_offset = Some(self.int(&f)?),
                "input_tensor" => td.input_tensor = Some(self.boolean(&f)?),
                "output_tensor" => td.output_tensor = Some(self.boolean(&f)?),
                _ => {}
            }
        }
        Ok(td)
    }

    fn tensor(&self, fields: Vec<Field<'_>>) -> Result<Tensor, GraphError> {
        let mut t = Tensor::default();
        for f in fields {
            match f.name {
                "desc" => t.desc = self.tensor_desc(self.message(f)?.1)?,
                "data" => t.data = self.bytes(f)?,
                _ => {}
            }
        }
        Ok(t)
    }

    fn named_attrs(&self, fields: Vec<Field<'_>>) -> Result<NamedAttrs, GraphError> {
        let mut na = NamedAttrs::default();
        for f in fields {
            match f.name {
                "name" => na.name = self.string(f)?,
                "attr" => self.attr_entry(f, &mut na.attrs)?,
                _ => {}
            }
        }
        Ok(na)
    }

    /// `attr { key: "k" value { … } }` — one map entry appended to `attrs`.
    fn attr_entry(&self, f: Field<'_>, attrs: &mut Attrs) -> Result<(), GraphError> {
        let (_, body) = self.message(f)?;
        let mut key = String::new();
        let mut value = AttrValue::Unset;
        for e in body {
            match e.name {
                "key" => key = self.string(e)?,
                "value" => value = self.attr_value(self.message(e)?.1)?,
                _ => {}
            }
        }
        attrs.0.push((key, value));
        Ok(())
    }

    fn attr_value(&self, fields: Vec<Field<'_>>) -> Result<AttrValue, GraphError> {
        // A oneof: the last member set wins, as in protobuf.
        let mut value = AttrValue::Unset;
        for f in fields {
            value = match f.name {
                "s" => AttrValue::S(self.string(f)?),
                "i" => AttrValue::I(self.int(&f)?),
                "f" => AttrValue::F(self.float(&f)?),
                "b" => AttrValue::B(self.boolean(&f)?),
                "bt" => AttrValue::Bt(self.bytes(f)?),
                "dt" => AttrValue::Dt(self.int(&f)?),
                "list" => AttrValue::List(Box::new(self.attr_list(self.message(f)?.1)?)),
                "func" => AttrValue::Func(self.named_attrs(self.message(f)?.1)?),
                "td" => AttrValue::Td(Box::new(self.tensor_desc(self.message(f)?.1)?)),
                "t" => AttrValue::T(Box::new(self.tensor(self.message(f)?.1)?)),
                "g" => AttrValue::G(Box::new(self.graph(f)?)),
                "list_list_int" => {
                    AttrValue::ListListInt(self.list_list(f, "list_i", Self::int)?)
                }
                "list_list_float" => {
                    AttrValue::ListListFloat(self.list_list(f, "list_f", Self::float)?)
                }
                "expression" => match f.value {
                    Value::Message(_) => AttrValue::Other("expression".to_string()),
                    _ => AttrValue::Expression(self.name_or_string(f)?),
                },
                other => AttrValue::Other(other.to_string()),
            };
        }
        Ok(value)
    }

    /// `list_list_int { list_list_i { list_i: 0 list_i: 64 } }` and the float twin
    /// (`list_list_float { list_list_f { list_f: … } }`): rows of `inner` items.
    fn list_list<T>(
        &self,
        f: Field<'_>,
        inner: &str,
        item: impl Fn(&Self, &Field<'_>) -> Result<T, GraphError>,
    ) -> Result<Vec<Vec<T>>, GraphError> {
        let mut out = Vec::new();
        for row in self.message(f)?.1 {
            let mut v = Vec::new();
            for x in self.message(row)?.1 {
                if x.name == inner {
                    v.push(item(self, &x)?);
                }
            }
            out.push(v);
        }
        Ok(out)
    }

    fn attr_list(&self, fields: Vec<Field<'_>>) -> Result<AttrList, GraphError> {
        let mut l = AttrList::default();
        for f in fields {
            match f.name {
                "s" => l.s.push(self.string(f)?),
                "i" => l.i.push(self.int(&f)?),
                "f" => l.f.push(self.float(&f)?),
                "b" => l.b.push(self.boolean(&f)?),
                "bt" => l.bt.push(self.bytes(f)?),
                "dt" => l.dt.push(self.int(&f)?),
                "td" => l.td.push(self.tensor_desc(self.message(f)?.1)?),
                "t" => l.t.push(self.tensor(self.message(f)?.1)?),
                "g" => l.g.push(self.graph(f)?),
                "na" => l.na.push(self.named_attrs(self.message(f)?.1)?),
                "val_type" => l.val_type = Some(self.name_or_string(f)?),
                _ => {}
            }
        }
        Ok(l)
    }
}

/// Decimal, or `0x` hex, optionally signed.
fn parse_int(t: &str) -> Option<i64> {
    if let Ok(v) = t.parse::<i64>() {
        return Some(v);
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let hex = body
        .strip_prefix("0x")
        .or_else(|| body.strip_prefix("0X"))?;
    let v = i64::from_str_radix(hex, 16).ok()?;
    Some(if neg { -v } else { v })
}
