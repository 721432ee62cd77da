//! npugraph_ex `.pt` dumps (`dump-data.md` §7): `torch.save` zip archives.
//!
//! ```text
//! <archive>/data.pkl   pickle: torch._utils._rebuild_tensor_v2(persistent_load(('storage',
//!                      torch.<Type>Storage, '<key>', '<location>', numel)), offset, size, stride, …)
//! <archive>/data/<key> raw little-endian storage bytes (stored, not compressed)
//! ```
//!
//! The pickle is run by a small, restricted virtual machine that builds plain values and
//! recognises only tensor-rebuild calls: no Python object is ever constructed, no code is run.
//! Every tensor found in the saved object (a tensor, or tensors in tuples, lists and dicts) is
//! checked straight from its storage record in the archive, streamed like any dump block.

use std::collections::HashMap;
use std::fs::File;

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::name::FileName;

use super::read::{check_raw, op_ref, FileOutcome, RawTensor};
use super::records::{ScanError, Source};
use super::walk::Candidate;

/// The largest `data.pkl` read (real ones are a few hundred bytes per tensor).
const MAX_PICKLE: u64 = 16 << 20;

#[derive(Clone, Debug)]
enum V {
    None,
    Bool,
    Int(i64),
    Float,
    Str(String),
    Tuple(Vec<V>),
    List(Vec<V>),
    Dict(Vec<(V, V)>),
    Global(String),
    Storage {
        element: Option<Element>,
        type_name: String,
        key: String,
    },
    Tensor(SavedTensor),
    Mark,
    Object,
}

#[derive(Clone, Debug)]
struct SavedTensor {
    element: Option<Element>,
    type_name: String,
    key: String,
    offset: u64,
    size: Vec<u64>,
    stride: Vec<u64>,
}

fn storage_element(type_name: &str) -> Option<Element> {
    Some(match type_name.strip_suffix("Storage")? {
        "Float" => Element::F32,
        "Half" => Element::F16,
        "BFloat16" => Element::Bf16,
        "Double" => Element::F64,
        "Long" => Element::I64,
        "Int" => Element::I32,
        "Short" => Element::I16,
        "Char" => Element::I8,
        "Byte" => Element::U8,
        "Bool" => Element::Bool,
        "ComplexFloat" => Element::C64,
        "ComplexDouble" => Element::C128,
        "Float8_e4m3fn" => Element::F8E4m3fn,
        "Float8_e5m2" => Element::F8E5m2,
        _ => return None,
    })
}

fn ints(v: &V) -> Option<Vec<u64>> {
    match v {
        V::Tuple(items) | V::List(items) => items
            .iter()
            .map(|x| match x {
                V::Int(i) => u64::try_from(*i).ok(),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

struct Pickle<'a> {
    b: &'a [u8],
    pos: usize,
}

impl Pickle<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8], String> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or_else(|| format!("pickle cut short at byte {}", self.pos))?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn le<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn line(&mut self) -> Result<String, String> {
        let rest = &self.b[self.pos..];
        let n = rest
            .iter()
            .position(|&c| c == b'\n')
            .ok_or("unterminated pickle text line")?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }
}

fn reduce(callable: V, args: V) -> V {
    let V::Global(name) = callable else {
        return V::Object;
    };
    let V::Tuple(a) = args else {
        return V::Object;
    };
    match name.as_str() {
        "torch._utils._rebuild_tensor_v2" | "torch._utils._rebuild_tensor" => {
            match (
                a.first(),
                a.get(1),
                a.get(2).and_then(ints),
                a.get(3).and_then(ints),
            ) {
                (
                    Some(V::Storage {
                        element,
                        type_name,
                        key,
                    }),
                    Some(V::Int(off)),
                    Some(size),
                    Some(stride),
                ) => V::Tensor(SavedTensor {
                    element: *element,
                    type_name: type_name.clone(),
                    key: key.clone(),
                    offset: u64::try_from(*off).unwrap_or(0),
                    size,
                    stride,
                }),
                _ => V::Object,
            }
        }
        "torch._utils._rebuild_parameter" | "torch._utils._rebuild_parameter_with_state" => {
            a.into_iter().next().unwrap_or(V::Object)
        }
        "collections.OrderedDict" => V::Dict(Vec::new()),
        _ => V::Object,
    }
}

/// Runs the restricted pickle machine and returns the saved object.
fn unpickle(b: &[u8]) -> Result<V, String> {
    let mut p = Pickle { b, pos: 0 };
    let mut stack: Vec<V> = Vec::new();
    let mut memo: HashMap<u32, V> = HashMap::new();
    let pop = |s: &mut Vec<V>| s.pop().ok_or_else(|| "pickle stack underflow".to_string());
    let pop_mark = |s: &mut Vec<V>| -> Result<Vec<V>, String> {
        let m = s
            .iter()
            .rposition(|v| matches!(v, V::Mark))
            .ok_or("pickle MARK missing")?;
        let items = s.split_off(m + 1);
        s.pop();
        Ok(items)
    };
    loop {
        let op = p.u8()?;
        match op {
            0x80 => {
                p.u8()?;
            }
            0x95 => {
                p.le::<8>()?;
            }
            b'c' => {
                let module = p.line()?;
                let name = p.line()?;
                stack.push(V::Global(format!("{module}.{name}")));
            }
            0x93 => {
                let name = pop(&mut stack)?;
                let module = pop(&mut stack)?;
                let (V::Str(m), V::Str(n)) = (module, name) else {
                    return Err("STACK_GLOBAL needs two strings".into());
                };
                stack.push(V::Global(format!("{m}.{n}")));
            }
            b'(' => stack.push(V::Mark),
            b')' => stack.push(V::Tuple(Vec::new())),
            b't' => {
                let items = pop_mark(&mut stack)?;
                stack.push(V::Tuple(items));
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                if stack.len() < n {
                    return Err("pickle stack underflow".into());
                }
                let items = stack.split_off(stack.len() - n);
                stack.push(V::Tuple(items));
            }
            b']' => stack.push(V::List(Vec::new())),
            b'l' => {
                let items = pop_mark(&mut stack)?;
                stack.push(V::List(items));
            }
            b'a' => {
                let v = pop(&mut stack)?;
                if let Some(V::List(l)) = stack.last_mut() {
                    l.push(v);
                }
            }
            b'e' => {
                let items = pop_mark(&mut stack)?;
                if let Some(V::List(l)) = stack.last_mut() {
                    l.extend(items);
                }
            }
            b'}' => stack.push(V::Dict(Vec::new())),
            b'd' => {
                let items = pop_mark(&mut stack)?;
                let mut it = items.into_iter();
                let mut d = Vec::new();
                while let (Some(k), Some(v)) = (it.next(), it.next()) {
                    d.push((k, v));
                }
                stack.push(V::Dict(d));
            }
            b's' => {
                let v = pop(&mut stack)?;
                let k = pop(&mut stack)?;
                if let Some(V::Dict(d)) = stack.last_mut() {
                    d.push((k, v));
                }
            }
            b'u' => {
                let items = pop_mark(&mut stack)?;
                if let Some(V::Dict(d)) = stack.last_mut() {
                    let mut it = items.into_iter();
                    while let (Some(k), Some(v)) = (it.next(), it.next()) {
                        d.push((k, v));
                    }
                }
            }
            b'N' => stack.push(V::None),
            0x88 | 0x89 => stack.push(V::Bool),
            b'J' => stack.push(V::Int(i64::from(i32::from_le_bytes(p.le()?)))),
            b'K' => stack.push(V::Int(i64::from(p.u8()?))),
            b'M' => stack.push(V::Int(i64::from(u16::from_le_bytes(p.le()?)))),
            0x8a => {
                let n = usize::from(p.u8()?);
                let bytes = p.take(n)?;
                let mut v: i64 = 0;
                for (i, &b) in bytes.iter().enumerate().take(8) {
                    v |= i64::from(b) << (8 * i);
                }
                if n > 0 && n < 8 && bytes[n - 1] & 0x80 != 0 {
                    v -= 1i64 << (8 * n);
                }
                stack.push(V::Int(v));
            }
            b'G' => {
                p.le::<8>()?;
                stack.push(V::Float);
            }
            b'X' | b'T' | b'B' => {
                let n = u32::from_le_bytes(p.le()?) as usize;
                let s = String::from_utf8_lossy(p.take(n)?).into_owned();
                stack.push(V::Str(s));
            }
            0x8c | b'U' | b'C' => {
                let n = usize::from(p.u8()?);
                let s = String::from_utf8_lossy(p.take(n)?).into_owned();
                stack.push(V::Str(s));
            }
            b'q' => {
                let i = u32::from(p.u8()?);
                memo.insert(i, stack.last().cloned().ok_or("BINPUT on empty stack")?);
            }
            b'r' => {
                let i = u32::from_le_bytes(p.le()?);
                memo.insert(
                    i,
                    stack.last().cloned().ok_or("LONG_BINPUT on empty stack")?,
                );
            }
            0x94 => {
                let i = u32::try_from(memo.len()).unwrap_or(u32::MAX);
                memo.insert(i, stack.last().cloned().ok_or("MEMOIZE on empty stack")?);
            }
            b'h' => {
                let i = u32::from(p.u8()?);
                stack.push(memo.get(&i).cloned().ok_or(format!("memo {i} unset"))?);
            }
            b'j' => {
                let i = u32::from_le_bytes(p.le()?);
                stack.push(memo.get(&i).cloned().ok_or(format!("memo {i} unset"))?);
            }
            b'Q' => {
                let pid = pop(&mut stack)?;
                let storage = match pid {
                    V::Tuple(t) if t.len() >= 3 => match (&t[1], &t[2]) {
                        (V::Global(g), V::Str(key)) => {
                            let type_name = g.rsplit('.').next().unwrap_or(g).to_string();
                            V::Storage {
                                element: storage_element(&type_name),
                                type_name,
                                key: key.clone(),
                            }
                        }
                        _ => V::Object,
                    },
                    _ => V::Object,
                };
                stack.push(storage);
            }
            b'R' => {
                let args = pop(&mut stack)?;
                let callable = pop(&mut stack)?;
                stack.push(reduce(callable, args));
            }
            0x81 => {
                pop(&mut stack)?;
                pop(&mut stack)?;
                stack.push(V::Object);
            }
            b'b' => {
                pop(&mut stack)?;
            }
            b'.' => return pop(&mut stack),
            other => {
                return Err(format!(
                    "pickle opcode 0x{other:02x} at byte {} is not supported",
                    p.pos - 1
                ))
            }
        }
    }
}

fn collect(v: &V, out: &mut Vec<SavedTensor>) {
    match v {
        V::Tensor(t) => out.push(t.clone()),
        V::Tuple(items) | V::List(items) => items.iter().for_each(|x| collect(x, out)),
        V::Dict(d) => d.iter().for_each(|(_, x)| collect(x, out)),
        V::None
        | V::Bool
        | V::Int(_)
        | V::Float
        | V::Str(_)
        | V::Global(_)
        | V::Storage { .. }
        | V::Mark
        | V::Object => {}
    }
}

/// Whether a strided view covers a dense block of its storage (any dimension order, no gaps, no
/// overlaps) — true for contiguous tensors and their permutations such as a transpose. Such a
/// view holds exactly the elements `offset .. offset + numel` of its storage, which is all a
/// verdict needs: NaN/Inf counts, min, max and mean do not depend on element order.
fn dense(size: &[u64], stride: &[u64]) -> bool {
    if size.len() != stride.len() {
        return false;
    }
    let mut dims: Vec<(u64, u64)> = stride
        .iter()
        .copied()
        .zip(size.iter().copied())
        .filter(|&(_, n)| n != 1)
        .collect();
    dims.sort_unstable();
    let mut expect = 1u64;
    for (st, n) in dims {
        if st != expect {
            return false;
        }
        expect = expect.saturating_mul(n);
    }
    true
}

/// A tensor of a `.pt` archive: its type, view and where its first element lies in the file.
pub struct PtTensor {
    pub element: Element,
    pub shape: Vec<u64>,
    pub stride: Vec<u64>,
    /// File offset of the view's first element.
    pub offset: u64,
    /// Bytes from `offset` the view spans (`numel × element size` for dense views).
    pub nbytes: u64,
}

impl PtTensor {
    /// Whether the view is C-contiguous (its elements lie in logical order).
    pub fn is_contiguous(&self) -> bool {
        let mut expect = 1u64;
        for (&n, &st) in self.shape.iter().zip(&self.stride).rev() {
            if n != 1 && st != expect {
                return false;
            }
            expect = expect.saturating_mul(n);
        }
        self.shape.len() == self.stride.len()
    }
}

/// Lists the tensors saved in a `.pt` archive of `len` bytes, in the order of the saved object
/// (a tensor; tensors in tuples, lists and dicts). Only dense views (contiguous or permuted)
/// are listed; every other tensor is an `Err` with the reason. Nothing but `data.pkl` is read.
pub fn list(file: &File, len: u64) -> Result<Vec<Result<PtTensor, String>>, String> {
    let mut zip =
        zip::ZipArchive::new(file).map_err(|e| format!("not a torch.save zip archive: {e}"))?;
    let pkl_name = zip
        .file_names()
        .find(|n| n.ends_with("/data.pkl") || *n == "data.pkl")
        .map(str::to_string)
        .ok_or("torch.save archive has no data.pkl")?;
    let prefix = pkl_name.trim_end_matches("data.pkl").to_string();
    let pickle = match zip.by_name(&pkl_name) {
        Ok(f) if f.size() <= MAX_PICKLE => {
            let mut buf = Vec::with_capacity(f.size() as usize);
            std::io::Read::read_to_end(&mut std::io::Read::take(f, MAX_PICKLE), &mut buf)
                .map_err(|e| format!("cannot read data.pkl: {e}"))?;
            buf
        }
        Ok(f) => return Err(format!("data.pkl is {} bytes, too large", f.size())),
        Err(e) => return Err(format!("cannot read data.pkl: {e}")),
    };
    let saved = unpickle(&pickle).map_err(|e| format!("data.pkl: {e}"))?;
    let mut tensors = Vec::new();
    collect(&saved, &mut tensors);
    if tensors.is_empty() {
        return Err("data.pkl holds no tensor".into());
    }
    Ok(tensors
        .into_iter()
        .map(|t| {
            let el = t
                .element
                .ok_or_else(|| format!("storage type {} is not read", t.type_name))?;
            if !dense(&t.size, &t.stride) {
                return Err(format!(
                    "strided view with gaps or overlaps (size {:?}, stride {:?}) is not read",
                    t.size, t.stride
                ));
            }
            let (start, record_len) = match zip.by_name(&format!("{prefix}data/{}", t.key)) {
                Ok(f) if f.compression() == zip::CompressionMethod::Stored => f
                    .data_start()
                    .map(|start| (start, f.size()))
                    .ok_or_else(|| format!("storage record {} has no data offset", t.key))?,
                Ok(_) => return Err(format!("storage record {} is compressed", t.key)),
                Err(e) => return Err(format!("storage record {}: {e}", t.key)),
            };
            let size = el.size().unwrap_or(1) as u64;
            let count = t.size.iter().try_fold(1u64, |a, &d| a.checked_mul(d));
            let span = count
                .and_then(|n| n.checked_mul(size))
                .zip(t.offset.checked_mul(size))
                .filter(|(n, off)| off.checked_add(*n).is_some_and(|end| end <= record_len))
                .filter(|_| start.checked_add(record_len).is_some_and(|e| e <= len));
            let (nbytes, off) = span.ok_or_else(|| {
                format!(
                    "size {:?} at storage offset {} does not fit the {record_len}-byte storage record",
                    t.size, t.offset
                )
            })?;
            Ok(PtTensor {
                element: el,
                shape: t.size,
                stride: t.stride,
                offset: start + off,
                nbytes,
            })
        })
        .collect())
}

/// Reads one `.pt` file.
pub fn read(c: &Candidate, file: &File, len: u64) -> FileOutcome {
    let err = |message: String| FileOutcome {
        errors: vec![ScanError {
            path: c.rel.clone(),
            message,
            offset: None,
        }],
        ..FileOutcome::default()
    };
    let tensors = match list(file, len) {
        Ok(t) => t,
        Err(e) => return err(e),
    };
    let (fx_node, counter) = match &c.name {
        FileName::Pt { fx_node, count, .. } => (fx_node.clone(), *count),
        _ => (c.rel.clone(), None),
    };
    let mut op = op_ref(c, None, None);
    op.op_name = fx_node;
    op.counter = counter;
    let mut out = FileOutcome {
        decoded: true,
        ..FileOutcome::default()
    };
    for (index, t) in tensors.into_iter().enumerate() {
        let checked = t.and_then(|t| {
            let raw = RawTensor {
                io: Io::Output,
                index,
                element: t.element,
                shape: t.shape,
                offset: t.offset,
                nbytes: t.nbytes,
            };
            check_raw(file, &op, raw, Source::Pt).map(|r| (r, t.nbytes))
        });
        match checked {
            Ok((r, nbytes)) => {
                out.bytes += nbytes;
                out.tensors.push(r);
            }
            Err(m) => out.errors.push(ScanError {
                path: c.rel.clone(),
                message: format!("tensor {index}: {m}"),
                offset: None,
            }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::dense;

    #[test]
    fn dense_views() {
        assert!(dense(&[2, 3], &[3, 1]));
        assert!(dense(&[2, 3], &[1, 2])); // transpose
        assert!(dense(&[2, 1, 3], &[3, 100, 1])); // size-1 dims have any stride
        assert!(dense(&[], &[]));
        assert!(!dense(&[2, 3], &[4, 1])); // row padding
        assert!(!dense(&[2, 3], &[0, 1])); // broadcast
        assert!(!dense(&[2], &[1, 1]));
    }
}
