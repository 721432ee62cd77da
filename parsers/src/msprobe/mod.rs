//! msprobe (mindstudio-probe) framework dumps: `dump.json`, `stack.json` and where they live.
//!
//! ```text
//! layout     : {dump_path}/step{N}/rank{R}|rank|proc{pid}/{dump.json, stack.json, construct.json, dump_tensor_data/}
//! dump.json  : {"task": "statistics|tensor|md5|…", "level": "L0|L1|mix", "framework": …, "dump_data_dir": …,
//!               "data": {"<call>": {"input_args": [...], "input_kwargs": {...}, "output": [...],
//!                                   "parameters": {...}, "input": [...] (backward), …}, …}}
//! call       : {Prefix}.{api}.{count}.{forward|backward}          (APIs: Functional, Tensor, Torch, Distributed, Primitive, Mint, …)
//!              {Module|Cell}.{path}.{Class}.{forward|backward}.{count}   (modules, levels L0 and mix)
//!              {Module|Cell}.{path}.{Class}.parameters_grad[.{count}]  (parameter gradients: {name: leaf or [leaf]})
//! leaf       : {"type": "torch.Tensor|mindspore.Tensor|int|float|bool|slice|…", "dtype", "shape",
//!               "Max", "Min", "Mean", "Norm", ["Max_except_inf_nan", "Min_except_inf_nan"], ["md5"],
//!               ["data_name": "<file in dump_tensor_data>"], ["value"]}
//! stack.json : {"<call>": [frame, …]}  or  {"<n>": [[call, …], [frame, …]]}
//! ```
//!
//! A leaf is a dict with a string `type`; lists, tuples and dicts of leaves nest and `null`
//! stands for `None`. A leaf's name within its call is msprobe's own: the io (`input` for
//! `input_args`, `input_kwargs` and backward `input`, `output`, `parameters`) then the list
//! index or dict key of every level (`input.2.1`, `input.weight`, `parameters.bias`).
//!
//! The calls of `data` are handed out one at a time in file order — the execution order within
//! a rank — so a dump.json of any size is read through a fixed buffer ([`read_dump`]); only one
//! call's tree is in memory at once. Python writes non-finite floats as the bare tokens `NaN`,
//! `Infinity` and `-Infinity`; [`tolerant::Tolerant`] quotes them on the fly.

pub mod tolerant;
mod tree;

use std::io::Read;

use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
use serde::Serialize;

use crate::dump::header::Io;

/// Entry point for fuzzing (beside `dump::fuzz::all`): arbitrary bytes as a `dump.json`, a
/// `stack.json` and a call name; must never panic. Built for `cargo fuzz` and the unit tests.
#[cfg(any(fuzzing, test))]
pub mod fuzz {
    pub fn all(data: &[u8]) {
        let _ = super::read_dump(data, &mut |_| {});
        let _ = super::read_stacks(data, &mut |_, _| {});
        let _ = super::call_name(&String::from_utf8_lossy(data));
    }
}

pub use tree::Node;

/// The facts of a dump.json besides its calls.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DumpMeta {
    pub task: Option<String>,
    pub level: Option<String>,
    pub framework: Option<String>,
    pub dump_data_dir: Option<String>,
}

/// One statistic as written: a number (non-finite ones included), or absent (`null`, missing,
/// a string that is no number). Bools (`"Max": true` of bool tensors) read as 1 and 0.
pub type Stat = Option<f64>;

/// One leaf of a call: a tensor (with `dtype`) or another value (`int`, `slice`, `None`, …).
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Leaf {
    pub io: Io,
    /// msprobe's name of the leaf within its call: `input.0`, `input.2.1`, `parameters.weight`.
    pub slot: String,
    /// The `type` field (`torch.Tensor`, `int`, …); `None` for a `null` leaf.
    pub kind: Option<String>,
    /// The framework's dtype name (`torch.float16`, `Float32`); `None` for non-tensors.
    pub dtype: Option<String>,
    pub shape: Vec<u64>,
    pub max: Stat,
    pub min: Stat,
    pub mean: Stat,
    pub norm: Stat,
    /// `Max_except_inf_nan` / `Min_except_inf_nan`: the finite extremes msprobe adds when Max or
    /// Min is not finite.
    pub max_finite: Stat,
    pub min_finite: Stat,
    pub md5: Option<String>,
    /// The tensor file in `dump_tensor_data/` (task `tensor`).
    pub data_name: Option<String>,
}

impl Leaf {
    /// Whether the leaf is a tensor (it has a dtype).
    pub fn is_tensor(&self) -> bool {
        self.dtype.is_some()
    }
}

/// One entry of `data`.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Call {
    pub name: String,
    pub leaves: Vec<Leaf>,
}

/// A call name split into its parts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CallName<'a> {
    /// `Functional`, `Tensor`, `Torch`, `Distributed`, `Module`, `Cell`, `Primitive`, …
    pub prefix: &'a str,
    /// The call without its counter and direction: `Functional.linear`, `Module.fc.Linear`.
    pub op: String,
    /// `forward`, `backward` or `parameters_grad`.
    pub direction: &'a str,
    pub count: Option<u64>,
}

/// Splits a call name (grammar above); `None` when it has neither direction.
pub fn call_name(name: &str) -> Option<CallName<'_>> {
    let t: Vec<&str> = name.split('.').collect();
    let prefix = *t.first()?;
    let op = |n: usize| t.get(..n).map(|p| p.join("."));
    let n = t.len();
    let number = |s: &str| s.parse::<u64>().ok();
    // Older msprobe ends the name with parameters_grad, newer adds the count.
    if let Some(at) = parameters_grad_at(&t) {
        return Some(CallName {
            prefix,
            op: op(at)?,
            direction: "parameters_grad",
            count: t.get(at + 1).and_then(|c| number(c)),
        });
    }
    // API: …{count}.{direction}; module: …{direction}.{count}.
    let (dir_at, count_at) = match (t.get(n.checked_sub(1)?), t.get(n.checked_sub(2)?)) {
        (Some(&d), Some(c)) if is_direction(d) && number(c).is_some() => (n - 1, n - 2),
        (Some(c), Some(&d)) if is_direction(d) && number(c).is_some() => (n - 2, n - 1),
        _ => return None,
    };
    (n >= 3).then_some(())?;
    Some(CallName {
        prefix,
        op: op(n - 2)?,
        direction: t.get(dir_at)?,
        count: number(t.get(count_at)?),
    })
}

/// Where `parameters_grad` stands in a split call name: last, or before a count.
fn parameters_grad_at(t: &[&str]) -> Option<usize> {
    let n = t.len();
    match (t.get(n.checked_sub(1)?), t.get(n.checked_sub(2)?)) {
        (Some(&"parameters_grad"), _) => Some(n - 1),
        (Some(c), Some(&"parameters_grad")) if c.parse::<u64>().is_ok() => Some(n - 2),
        _ => None,
    }
}

fn is_direction(s: &str) -> bool {
    s == "forward" || s == "backward"
}

/// Whether a call is a collective communication (`Distributed.all_reduce.3.forward`, …): the
/// `Distributed` prefix msprobe gives `torch.distributed` and `mindspore.communication` APIs,
/// except the ones that only ask about the process group.
pub fn is_collective(name: &str) -> bool {
    const QUERIES: [&str; 4] = ["get_rank", "get_world_size", "get_backend", "new_group"];
    let Some(api) = name.strip_prefix("Distributed.") else {
        return false;
    };
    !QUERIES.iter().any(|q| api.starts_with(q))
}

/// Where an msprobe dump directory sits: the rank from `rank{R}` (`rank` alone: a single-card
/// run; `proc{pid}`: a run without distribution — both no rank) and the step from the
/// `step{N}` directory above it. `dirs` are the directory's components, outermost first.
pub fn locate<S: AsRef<str>>(dirs: &[S]) -> (Option<u32>, Option<u64>) {
    let n = dirs.len();
    let rank = dirs
        .last()
        .and_then(|d| d.as_ref().strip_prefix("rank"))
        .and_then(|r| r.parse().ok());
    let step = n
        .checked_sub(2)
        .and_then(|i| dirs.get(i))
        .and_then(|d| d.as_ref().strip_prefix("step")?.parse().ok());
    (rank, step)
}

/// An error with the place serde_json found it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} (line {line}, column {column})")]
pub struct JsonError {
    pub message: String,
    pub line: usize,
    pub column: usize,
}

impl From<serde_json::Error> for JsonError {
    fn from(e: serde_json::Error) -> JsonError {
        let full = e.to_string();
        // serde_json appends " at line L column C"; keep the message without it.
        let message = full
            .rsplit_once(" at line ")
            .map_or(full.as_str(), |(m, _)| m)
            .to_string();
        JsonError {
            message,
            line: e.line(),
            column: e.column(),
        }
    }
}

/// Reads a dump.json from `reader`, calling `on_call` with each call of `data` in file order.
/// A call whose tree is not an object is handed out with no leaves.
pub fn read_dump<R: Read>(reader: R, on_call: &mut dyn FnMut(Call)) -> Result<DumpMeta, JsonError> {
    let mut de = serde_json::Deserializer::from_reader(tolerant::Tolerant::new(reader));
    let meta = Top { on_call }.deserialize(&mut de)?;
    de.end()?;
    Ok(meta)
}

struct Top<'a> {
    on_call: &'a mut dyn FnMut(Call),
}

impl<'de> DeserializeSeed<'de> for Top<'_> {
    type Value = DumpMeta;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<DumpMeta, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Top<'_> {
    type Value = DumpMeta;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an msprobe dump.json object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<DumpMeta, A::Error> {
        let mut meta = DumpMeta::default();
        let mut data = false;
        while let Some(key) = map.next_key::<String>()? {
            let field = match key.as_str() {
                "task" => &mut meta.task,
                "level" => &mut meta.level,
                "framework" => &mut meta.framework,
                "dump_data_dir" => &mut meta.dump_data_dir,
                "data" => {
                    map.next_value_seed(Data {
                        on_call: &mut *self.on_call,
                    })?;
                    data = true;
                    continue;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    continue;
                }
            };
            *field = map.next_value::<Node>()?.text();
        }
        if !data {
            return Err(serde::de::Error::custom(
                "no \"data\" object: not an msprobe dump.json",
            ));
        }
        Ok(meta)
    }
}

struct Data<'a> {
    on_call: &'a mut dyn FnMut(Call),
}

impl<'de> DeserializeSeed<'de> for Data<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Data<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("the \"data\" object of calls")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(name) = map.next_key::<String>()? {
            let tree = map.next_value::<Node>()?;
            let leaves = call_leaves(&name, &tree);
            (self.on_call)(Call { name, leaves });
        }
        Ok(())
    }
}

/// The leaves of one call's tree, in document order.
pub fn call_leaves(name: &str, tree: &Node) -> Vec<Leaf> {
    let mut out = Vec::new();
    let Node::Map(entries) = tree else {
        return out;
    };
    let parts: Vec<&str> = name.split('.').collect();
    if parameters_grad_at(&parts).is_some() {
        // `{"weight": [leaf]}`: msprobe names the leaf `weight`, list levels add no index.
        for (key, v) in entries {
            match v {
                Node::List(items) => {
                    for item in items {
                        flatten(item, Io::Output, key.clone(), &mut out);
                    }
                }
                _ => flatten(v, Io::Output, key.clone(), &mut out),
            }
        }
        return out;
    }
    for (key, v) in entries {
        let (io, slot) = match key.as_str() {
            "input_args" | "input_kwargs" | "input" => (Io::Input, "input"),
            "output" => (Io::Output, "output"),
            "parameters" => (Io::Parameter, "parameters"),
            _ => continue,
        };
        match v {
            // A single value (a kwarg-less output written bare) is the slot itself.
            Node::List(_) | Node::Map(_) if !v.is_leaf() => {}
            _ => {
                flatten(v, io, slot.to_string(), &mut out);
                continue;
            }
        }
        for (sub, child) in v.children() {
            flatten(child, io, format!("{slot}.{sub}"), &mut out);
        }
    }
    out
}

/// Appends the leaves under `node` (named `slot`) depth first.
fn flatten(node: &Node, io: Io, slot: String, out: &mut Vec<Leaf>) {
    // Iterative, so that nesting depth (bounded by the JSON reader anyway) costs no stack.
    let mut todo = vec![(node, slot)];
    while let Some((n, slot)) = todo.pop() {
        if n.is_leaf() || matches!(n, Node::Null) {
            out.push(leaf(n, io, slot));
            continue;
        }
        let children: Vec<(&Node, String)> = n
            .children()
            .map(|(sub, c)| (c, format!("{slot}.{sub}")))
            .collect();
        todo.extend(children.into_iter().rev());
    }
}

fn leaf(n: &Node, io: Io, slot: String) -> Leaf {
    let stat = |k: &str| n.get(k).and_then(Node::number);
    let text = |k: &str| n.get(k).and_then(Node::text);
    let is_tensor =
        n.get("dtype").is_some_and(|d| !matches!(d, Node::Null)) && n.get("shape").is_some();
    Leaf {
        io,
        slot,
        kind: text("type"),
        dtype: if is_tensor { text("dtype") } else { None },
        shape: match n.get("shape") {
            Some(Node::List(dims)) if is_tensor => dims
                .iter()
                .filter_map(|d| d.number())
                .map(|d| d as u64)
                .collect(),
            _ => Vec::new(),
        },
        max: stat("Max"),
        min: stat("Min"),
        mean: stat("Mean"),
        norm: stat("Norm"),
        max_finite: stat("Max_except_inf_nan"),
        min_finite: stat("Min_except_inf_nan"),
        md5: text("md5"),
        data_name: text("data_name"),
    }
}

/// The stack of each call a stack.json lists, through `keep` (only the calls wanted are kept):
/// both the older `{call: [frame, …]}` and the newer `{"n": [[call, …], [frame, …]]}` forms.
pub fn read_stacks<R: Read>(
    reader: R,
    keep: &mut dyn FnMut(&str, &[String]),
) -> Result<(), JsonError> {
    let mut de = serde_json::Deserializer::from_reader(tolerant::Tolerant::new(reader));
    Stacks { keep }.deserialize(&mut de)?;
    de.end()?;
    Ok(())
}

struct Stacks<'a> {
    keep: &'a mut dyn FnMut(&str, &[String]),
}

impl<'de> DeserializeSeed<'de> for Stacks<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Stacks<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an msprobe stack.json object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let strings =
            |n: &Node| -> Vec<String> { n.children().filter_map(|(_, s)| s.text()).collect() };
        while let Some(key) = map.next_key::<String>()? {
            let v = map.next_value::<Node>()?;
            match &v {
                Node::List(items) if items.len() == 2 && matches!(items[0], Node::List(_)) => {
                    let frames = strings(&items[1]);
                    for call in strings(&items[0]) {
                        (self.keep)(&call, &frames);
                    }
                }
                Node::List(_) => (self.keep)(&key, &strings(&v)),
                _ => {}
            }
        }
        Ok(())
    }
}

/// The frame of a stack that is the user's code: the innermost one outside msprobe and the
/// frameworks (torch, torch_npu, mindspore, …), else the innermost frame outside msprobe.
/// Frames are as msprobe writes them (`File {path}, line {n}, in {function}, \n {code}`), innermost
/// first; the result joins the two lines: `{path}, line {n}, in {function}: {code}`.
pub fn user_frame(frames: &[String]) -> Option<String> {
    const TOOL: [&str; 3] = ["/msprobe/", "/mstt/", "/accuracy_tools/"];
    const FRAMEWORK: [&str; 6] = [
        "/torch/",
        "/torch_npu/",
        "/mindspore/",
        "/torchair/",
        "/apex/",
        "/megatron/core/",
    ];
    let is = |f: &&String, parts: &[&str]| parts.iter().any(|p| f.contains(p));
    let pick = frames
        .iter()
        .find(|f| !is(f, &TOOL) && !is(f, &FRAMEWORK))
        .or_else(|| frames.iter().find(|f| !is(f, &TOOL)))?;
    let text = pick.strip_prefix("File ").unwrap_or(pick);
    let (place, code) = text.split_once(", \n").unwrap_or((text, ""));
    let code = code.trim();
    Some(if code.is_empty() {
        place.trim().to_string()
    } else {
        format!("{}: {code}", place.trim())
    })
}

/// The parts of a frame as [`user_frame`] writes it (`{path}, line {n}, in {function}: {code}`):
/// path, line, function and code; `None` when it has no `, line {n}`.
pub fn split_user_frame(s: &str) -> Option<(&str, u32, Option<&str>, Option<&str>)> {
    let (path, rest) = s.rsplit_once(", line ")?;
    let end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let line = rest[..end].parse().ok()?;
    let rest = &rest[end..];
    let (function, code) = match rest.strip_prefix(", in ") {
        Some(r) => match r.split_once(": ") {
            Some((f, c)) => (Some(f.trim()), Some(c.trim())),
            None => (Some(r.trim()), None),
        },
        None => (None, rest.strip_prefix(": ").map(str::trim)),
    };
    Some((
        path.trim(),
        line,
        function.filter(|f| !f.is_empty()),
        code.filter(|c| !c.is_empty()),
    ))
}

#[cfg(test)]
mod tests;
