//! A restricted pickle reader: bytes in, a graph of plain values out. No Python object is
//! built and no code is run — `GLOBAL` only records a name, `REDUCE` only records the call.
//!
//! ```text
//! pickle  := [PROTO n] [FRAME len] op* STOP
//! op      := push a value (NONE, BININT, BINUNICODE, EMPTY_LIST, …)
//!          | build from the stack (TUPLE, LIST, DICT … down to the last MARK; TUPLE1..3)
//!          | mutate the value below (APPEND(S), SETITEM(S), ADDITEMS, BUILD)
//!          | memo (BINPUT, LONG_BINPUT, MEMOIZE store the top; BINGET, LONG_BINGET push it back)
//!          | call (GLOBAL / STACK_GLOBAL name a callable, REDUCE / NEWOBJ record a call,
//!            BINPERSID records `persistent_load(pid)`)
//! ```
//!
//! Protocols 2–5 as written by `pickle` and `torch.save` are read; the text opcodes of
//! protocols 0–1 (other than `GLOBAL`) and out-of-band buffers are refused.
//!
//! # Why an arena
//! Values live in one `Vec` ([`Pickle::values`]) and refer to each other by index ([`Id`]).
//! A memo get pushes the *same* index again, as Python shares the same object, so a pickle that
//! doubles a list with every memo get (a few hundred bytes describing 2^60 elements) stays a few
//! hundred values. Nothing is nested in Rust terms, so neither building, walking
//! ([`Pickle::walk`]) nor dropping recurses, whatever the input's depth.
//!
//! # Limits
//! The input is at most [`Limits::bytes`] long (strings are copied out of it, so their total is
//! bounded by it too); values plus container entries plus stack slots are at most
//! [`Limits::objects`]; containers nest at most [`Limits::depth`] deep. Python's pickler recurses
//! once per level with a default recursion limit of 1000, so nothing `torch.save` wrote is deeper.

use std::collections::HashMap;

/// Index of a value in [`Pickle::values`].
pub type Id = u32;

/// One value of the pickled object graph.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    /// An integer wider than 64 bits (its value is not kept).
    BigInt,
    Float(f64),
    Str(String),
    /// `bytes` / `bytearray`; only the length is kept.
    Bytes(usize),
    Tuple(Vec<Id>),
    List(Vec<Id>),
    Dict(Vec<(Id, Id)>),
    Set(Vec<Id>),
    /// A name `GLOBAL` or `STACK_GLOBAL` looked up (never imported).
    Global {
        module: String,
        name: String,
    },
    /// `persistent_load(pid)`: how `torch.save` refers to storage records.
    Persistent(Id),
    /// `callable(*args)` from `REDUCE` / `NEWOBJ`, with what later opcodes added to it.
    Call(Box<Call>),
}

/// A recorded call and the state later opcodes gave its result.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    pub callable: Id,
    pub args: Id,
    /// `BUILD` state (`__setstate__` argument).
    pub state: Option<Id>,
    /// `SETITEM(S)` on the result (e.g. an `OrderedDict`).
    pub items: Vec<(Id, Id)>,
    /// `APPEND(S)` on the result.
    pub appended: Vec<Id>,
}

/// Caps on what one pickle may build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Input length.
    pub bytes: usize,
    /// Values, container entries and stack slots together.
    pub objects: usize,
    /// Container nesting.
    pub depth: u32,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            bytes: 16 << 20,
            objects: 1 << 20,
            depth: 1000,
        }
    }
}

/// Why a pickle cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("pickle byte {offset}: {kind}")]
pub struct PickleError {
    /// Offset of the opcode that failed.
    pub offset: usize,
    pub kind: ErrorKind,
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    #[error("input is {0} bytes, more than the {1}-byte limit")]
    TooLarge(usize, usize),
    #[error("cut short (no STOP opcode)")]
    Truncated,
    #[error("opcode 0x{0:02x} is not supported")]
    Unsupported(u8),
    #[error("stack underflow")]
    Underflow,
    #[error("no MARK on the stack")]
    NoMark,
    #[error("MARK where a value is needed")]
    MarkAsValue,
    #[error("memo entry {0} is not set")]
    MemoUnset(u64),
    #[error("more than {0} objects")]
    TooManyObjects(usize),
    #[error("nesting deeper than {0} levels")]
    TooDeep(u32),
    #[error("{0} needs {1} below it")]
    Type(&'static str, &'static str),
    #[error("negative length")]
    NegativeLength,
}

/// A decoded pickle: the arena and the value `STOP` returned.
#[derive(Clone, Debug, PartialEq)]
pub struct Pickle {
    pub values: Vec<Value>,
    pub root: Id,
}

impl Pickle {
    pub fn get(&self, id: Id) -> &Value {
        &self.values[id as usize]
    }

    /// Every value reachable from `from`, each once, in document order (depth first, children
    /// left to right), without recursion. `descend` says whether to look inside a value; dict
    /// keys are not visited. The work is linear in values plus entries, shared values or not.
    pub fn walk(&self, from: Id, mut descend: impl FnMut(Id, &Value) -> bool) {
        let mut seen = vec![false; self.values.len()];
        let mut todo = vec![from];
        let mut children = Vec::new();
        while let Some(id) = todo.pop() {
            let Some(slot) = seen.get_mut(id as usize) else {
                continue;
            };
            if std::mem::replace(slot, true) {
                continue;
            }
            let v = self.get(id);
            if !descend(id, v) {
                continue;
            }
            children.clear();
            match v {
                Value::Tuple(xs) | Value::List(xs) | Value::Set(xs) => children.extend(xs),
                Value::Dict(kv) => children.extend(kv.iter().map(|(_, v)| *v)),
                Value::Persistent(x) => children.push(*x),
                Value::Call(c) => {
                    children.push(c.args);
                    children.extend(c.state);
                    children.extend(c.items.iter().map(|(_, v)| *v));
                    children.extend(&c.appended);
                }
                Value::None
                | Value::Bool(_)
                | Value::Int(_)
                | Value::BigInt
                | Value::Float(_)
                | Value::Str(_)
                | Value::Bytes(_)
                | Value::Global { .. } => {}
            }
            todo.extend(children.iter().rev());
        }
    }
}

/// Reads `data` with the default [`Limits`].
pub fn parse(data: &[u8]) -> Result<Pickle, PickleError> {
    parse_with(data, Limits::default())
}

/// Reads `data` within `limits`.
pub fn parse_with(data: &[u8], limits: Limits) -> Result<Pickle, PickleError> {
    if data.len() > limits.bytes {
        return Err(PickleError {
            offset: 0,
            kind: ErrorKind::TooLarge(data.len(), limits.bytes),
        });
    }
    let mut m = Machine {
        b: data,
        pos: 0,
        values: Vec::new(),
        depth: Vec::new(),
        stack: Vec::new(),
        memo: HashMap::new(),
        budget: limits.objects,
        limits,
    };
    loop {
        let at = m.pos;
        match m.step() {
            Ok(Some(root)) => {
                return Ok(Pickle {
                    values: m.values,
                    root,
                })
            }
            Ok(None) => {}
            Err(kind) => return Err(PickleError { offset: at, kind }),
        }
    }
}

/// A stack slot: a value or a MARK.
const MARK: Id = Id::MAX;

struct Machine<'a> {
    b: &'a [u8],
    pos: usize,
    values: Vec<Value>,
    /// Nesting depth of each value (0 for scalars), checked as containers are built or grow.
    depth: Vec<u32>,
    stack: Vec<Id>,
    memo: HashMap<u64, Id>,
    budget: usize,
    limits: Limits,
}

type Step<T> = Result<T, ErrorKind>;

impl Machine<'_> {
    fn take(&mut self, n: usize) -> Step<&[u8]> {
        let end = self.pos.checked_add(n).filter(|&e| e <= self.b.len());
        let end = end.ok_or(ErrorKind::Truncated)?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Step<[u8; N]> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N)?);
        Ok(a)
    }
    fn u8(&mut self) -> Step<u8> {
        Ok(self.arr::<1>()?[0])
    }
    fn u32(&mut self) -> Step<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn len64(&mut self) -> Step<usize> {
        usize::try_from(u64::from_le_bytes(self.arr()?)).map_err(|_| ErrorKind::Truncated)
    }
    fn line(&mut self) -> Step<String> {
        let rest = &self.b[self.pos..];
        let n = memchr::memchr(b'\n', rest).ok_or(ErrorKind::Truncated)?;
        let s = String::from_utf8_lossy(&rest[..n]).into_owned();
        self.pos += n + 1;
        Ok(s)
    }
    fn text(&mut self, n: usize) -> Step<String> {
        Ok(String::from_utf8_lossy(self.take(n)?).into_owned())
    }

    /// Spends `n` of the object budget.
    fn spend(&mut self, n: usize) -> Step<()> {
        self.budget = self
            .budget
            .checked_sub(n)
            .ok_or(ErrorKind::TooManyObjects(self.limits.objects))?;
        Ok(())
    }
    fn check_depth(&self, d: u32) -> Step<u32> {
        if d > self.limits.depth {
            Err(ErrorKind::TooDeep(self.limits.depth))
        } else {
            Ok(d)
        }
    }
    fn depth_of(&self, id: Id) -> u32 {
        self.depth.get(id as usize).copied().unwrap_or(0)
    }
    /// Adds a value whose children are `kids`, returning its id.
    fn alloc(&mut self, v: Value, kids: &[Id]) -> Step<Id> {
        self.spend(1 + kids.len())?;
        let d = kids.iter().map(|&k| self.depth_of(k)).max();
        let d = self.check_depth(d.map_or(0, |d| d + 1))?;
        let id = Id::try_from(self.values.len())
            .ok()
            .filter(|&i| i != MARK)
            .ok_or(ErrorKind::TooManyObjects(self.limits.objects))?;
        self.values.push(v);
        self.depth.push(d);
        Ok(id)
    }
    fn push_id(&mut self, id: Id) -> Step<()> {
        self.spend(1)?;
        self.stack.push(id);
        Ok(())
    }
    fn push(&mut self, v: Value) -> Step<()> {
        let id = self.alloc(v, &[])?;
        self.push_id(id)
    }
    fn pop_slot(&mut self) -> Step<Id> {
        let id = self.stack.pop().ok_or(ErrorKind::Underflow)?;
        self.budget += 1;
        Ok(id)
    }
    fn pop(&mut self) -> Step<Id> {
        match self.pop_slot()? {
            MARK => Err(ErrorKind::MarkAsValue),
            id => Ok(id),
        }
    }
    fn top(&self) -> Step<Id> {
        match self.stack.last() {
            None => Err(ErrorKind::Underflow),
            Some(&MARK) => Err(ErrorKind::MarkAsValue),
            Some(&id) => Ok(id),
        }
    }
    /// Pops everything down to the last MARK (and the MARK).
    fn pop_mark(&mut self) -> Step<Vec<Id>> {
        let m = self
            .stack
            .iter()
            .rposition(|&s| s == MARK)
            .ok_or(ErrorKind::NoMark)?;
        let items = self.stack.split_off(m + 1);
        self.stack.pop();
        self.budget += items.len() + 1;
        Ok(items)
    }
    /// Records that container `into` now holds `kids` (its depth may grow).
    fn grow(&mut self, into: Id, kids: &[Id]) -> Step<()> {
        self.spend(kids.len())?;
        let d = kids
            .iter()
            .map(|&k| self.depth_of(k) + 1)
            .max()
            .unwrap_or(0);
        let d = self.check_depth(d.max(self.depth_of(into)))?;
        if let Some(slot) = self.depth.get_mut(into as usize) {
            *slot = d;
        }
        Ok(())
    }
    fn value_mut(&mut self, id: Id) -> &mut Value {
        &mut self.values[id as usize]
    }
    fn pairs(items: &[Id]) -> Vec<(Id, Id)> {
        items.chunks_exact(2).map(|p| (p[0], p[1])).collect()
    }

    fn append(&mut self, items: Vec<Id>) -> Step<()> {
        let into = self.top()?;
        self.grow(into, &items)?;
        match self.value_mut(into) {
            Value::List(l) => l.extend(items),
            Value::Call(c) => c.appended.extend(items),
            _ => return Err(ErrorKind::Type("APPEND", "a list")),
        }
        Ok(())
    }
    fn set_items(&mut self, items: Vec<Id>) -> Step<()> {
        if items.len() % 2 != 0 {
            return Err(ErrorKind::Type("SETITEMS", "key/value pairs"));
        }
        let into = self.top()?;
        self.grow(into, &items)?;
        let pairs = Self::pairs(&items);
        match self.value_mut(into) {
            Value::Dict(d) => d.extend(pairs),
            Value::Call(c) => c.items.extend(pairs),
            _ => return Err(ErrorKind::Type("SETITEM", "a dict")),
        }
        Ok(())
    }
    fn call(&mut self, callable: Id, args: Id) -> Step<()> {
        let c = Call {
            callable,
            args,
            state: None,
            items: Vec::new(),
            appended: Vec::new(),
        };
        let id = self.alloc(Value::Call(Box::new(c)), &[callable, args])?;
        self.push_id(id)
    }
    fn memo_put(&mut self, key: u64) -> Step<()> {
        let top = self.top()?;
        if !self.memo.contains_key(&key) {
            self.spend(1)?;
        }
        self.memo.insert(key, top);
        Ok(())
    }
    fn memo_get(&mut self, key: u64) -> Step<()> {
        let id = *self.memo.get(&key).ok_or(ErrorKind::MemoUnset(key))?;
        self.push_id(id)
    }
    fn int_le(bytes: &[u8]) -> Value {
        if bytes.len() > 8 {
            return Value::BigInt;
        }
        let mut v: i64 = 0;
        for (i, &b) in bytes.iter().enumerate() {
            v |= i64::from(b) << (8 * i);
        }
        let n = bytes.len();
        if n > 0 && n < 8 && bytes[n - 1] & 0x80 != 0 {
            v -= 1i64 << (8 * n);
        }
        Value::Int(v)
    }

    /// Runs one opcode; `Some(root)` at STOP. The opcodes go by family to the methods below.
    fn step(&mut self) -> Step<Option<Id>> {
        let op = self.u8()?;
        match op {
            // STOP
            b'.' => return self.pop().map(Some),
            // PROTO, FRAME, MARK, POP, POP_MARK, DUP
            0x80 | 0x95 | b'(' | b'0' | b'1' | b'2' => self.stack_op(op)?,
            // NONE, NEWTRUE, NEWFALSE, BININT, BININT1, BININT2, LONG1, LONG4, BINFLOAT
            b'N' | 0x88 | 0x89 | b'J' | b'K' | b'M' | 0x8a | 0x8b | b'G' => self.scalar(op)?,
            // BINUNICODE, BINSTRING, SHORT_BINUNICODE, SHORT_BINSTRING, BINUNICODE8, BINBYTES,
            // SHORT_BINBYTES, BINBYTES8, BYTEARRAY8
            b'X' | b'T' | 0x8c | b'U' | 0x8d | b'B' | b'C' | 0x8e | 0x96 => self.string(op)?,
            // EMPTY_TUPLE, EMPTY_LIST, EMPTY_DICT, EMPTY_SET, TUPLE, LIST, FROZENSET,
            // TUPLE1..TUPLE3, DICT
            b')' | b']' | b'}' | 0x8f | b't' | b'l' | 0x91 | 0x85..=0x87 | b'd' => {
                self.construct(op)?
            }
            // APPEND, APPENDS, SETITEM, SETITEMS, ADDITEMS
            b'a' | b'e' | b's' | b'u' | 0x90 => self.fill(op)?,
            // GLOBAL, STACK_GLOBAL, REDUCE, NEWOBJ, NEWOBJ_EX, BUILD, BINPERSID
            b'c' | 0x93 | b'R' | 0x81 | 0x92 | b'b' | b'Q' => self.call_op(op)?,
            // BINPUT, LONG_BINPUT, MEMOIZE, BINGET, LONG_BINGET
            b'q' | b'r' | 0x94 | b'h' | b'j' => self.memo_op(op)?,
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(None)
    }

    /// Framing and the stack itself: PROTO, FRAME (both skipped), MARK, POP, POP_MARK, DUP.
    fn stack_op(&mut self, op: u8) -> Step<()> {
        match op {
            0x80 => {
                self.u8()?; // PROTO
            }
            0x95 => {
                self.arr::<8>()?; // FRAME: framing is only a read-ahead hint
            }
            b'(' => {
                self.spend(1)?;
                self.stack.push(MARK);
            }
            b'0' => {
                self.pop_slot()?;
            }
            b'1' => {
                self.pop_mark()?;
            }
            b'2' => {
                let top = self.top()?;
                self.push_id(top)?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// Pushes a scalar: `None`, a bool, an integer (fixed-width, or little-endian of a given
    /// length) or a float.
    fn scalar(&mut self, op: u8) -> Step<()> {
        match op {
            b'N' => self.push(Value::None)?,
            0x88 => self.push(Value::Bool(true))?,
            0x89 => self.push(Value::Bool(false))?,
            b'J' => {
                let v = i32::from_le_bytes(self.arr()?);
                self.push(Value::Int(i64::from(v)))?;
            }
            b'K' => {
                let v = self.u8()?;
                self.push(Value::Int(i64::from(v)))?;
            }
            b'M' => {
                let v = u16::from_le_bytes(self.arr()?);
                self.push(Value::Int(i64::from(v)))?;
            }
            0x8a => {
                let n = usize::from(self.u8()?);
                let v = Self::int_le(self.take(n)?);
                self.push(v)?;
            }
            0x8b => {
                let n = i32::from_le_bytes(self.arr()?);
                let n = usize::try_from(n).map_err(|_| ErrorKind::NegativeLength)?;
                let v = Self::int_le(self.take(n)?);
                self.push(v)?;
            }
            b'G' => {
                let v = f64::from_be_bytes(self.arr()?);
                self.push(Value::Float(v))?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// Pushes a length-prefixed string (its text copied out) or bytes (only the length kept).
    fn string(&mut self, op: u8) -> Step<()> {
        match op {
            b'X' => {
                let n = self.u32()? as usize;
                let s = self.text(n)?;
                self.push(Value::Str(s))?;
            }
            b'T' => {
                let n = i32::from_le_bytes(self.arr()?);
                let n = usize::try_from(n).map_err(|_| ErrorKind::NegativeLength)?;
                let s = self.text(n)?;
                self.push(Value::Str(s))?;
            }
            0x8c | b'U' => {
                let n = usize::from(self.u8()?);
                let s = self.text(n)?;
                self.push(Value::Str(s))?;
            }
            0x8d => {
                let n = self.len64()?;
                let s = self.text(n)?;
                self.push(Value::Str(s))?;
            }
            b'B' => {
                let n = self.u32()? as usize;
                self.take(n)?;
                self.push(Value::Bytes(n))?;
            }
            b'C' => {
                let n = usize::from(self.u8()?);
                self.take(n)?;
                self.push(Value::Bytes(n))?;
            }
            0x8e | 0x96 => {
                let n = self.len64()?;
                self.take(n)?;
                self.push(Value::Bytes(n))?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// Builds a container: empty, from the items down to the last MARK, or a tuple of the top
    /// one to three.
    fn construct(&mut self, op: u8) -> Step<()> {
        match op {
            b')' => self.push(Value::Tuple(Vec::new()))?,
            b']' => self.push(Value::List(Vec::new()))?,
            b'}' => self.push(Value::Dict(Vec::new()))?,
            0x8f => self.push(Value::Set(Vec::new()))?,
            b't' | b'l' | 0x91 => {
                let items = self.pop_mark()?;
                let v = match op {
                    b't' => Value::Tuple(items.clone()),
                    b'l' => Value::List(items.clone()),
                    _ => Value::Set(items.clone()),
                };
                let id = self.alloc(v, &items)?;
                self.push_id(id)?;
            }
            0x85..=0x87 => {
                let n = usize::from(op - 0x84);
                let at = self
                    .stack
                    .len()
                    .checked_sub(n)
                    .ok_or(ErrorKind::Underflow)?;
                if self.stack[at..].contains(&MARK) {
                    return Err(ErrorKind::MarkAsValue);
                }
                let items = self.stack.split_off(at);
                self.budget += n;
                let id = self.alloc(Value::Tuple(items.clone()), &items)?;
                self.push_id(id)?;
            }
            b'd' => {
                let items = self.pop_mark()?;
                if items.len() % 2 != 0 {
                    return Err(ErrorKind::Type("DICT", "key/value pairs"));
                }
                let id = self.alloc(Value::Dict(Self::pairs(&items)), &items)?;
                self.push_id(id)?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// Adds items to the container below them: a list or a call's result (APPEND(S)), a dict
    /// or a call's result (SETITEM(S)), a set (ADDITEMS).
    fn fill(&mut self, op: u8) -> Step<()> {
        match op {
            b'a' => {
                let v = self.pop()?;
                self.append(vec![v])?;
            }
            b'e' => {
                let items = self.pop_mark()?;
                self.append(items)?;
            }
            b's' => {
                let v = self.pop()?;
                let k = self.pop()?;
                self.set_items(vec![k, v])?;
            }
            b'u' => {
                let items = self.pop_mark()?;
                self.set_items(items)?;
            }
            0x90 => {
                let items = self.pop_mark()?;
                let into = self.top()?;
                self.grow(into, &items)?;
                match self.value_mut(into) {
                    Value::Set(s) => s.extend(items),
                    _ => return Err(ErrorKind::Type("ADDITEMS", "a set")),
                }
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// Names and calls, recorded and never run: a global's name, a call (REDUCE, NEWOBJ,
    /// NEWOBJ_EX, whose kwargs are dropped), the BUILD state of a call's result, and
    /// `persistent_load(pid)`.
    fn call_op(&mut self, op: u8) -> Step<()> {
        match op {
            b'c' => {
                let module = self.line()?;
                let name = self.line()?;
                self.push(Value::Global { module, name })?;
            }
            0x93 => {
                let name = self.pop()?;
                let module = self.pop()?;
                let (Value::Str(m), Value::Str(n)) = (self.get(module), self.get(name)) else {
                    return Err(ErrorKind::Type("STACK_GLOBAL", "two strings"));
                };
                let v = Value::Global {
                    module: m.clone(),
                    name: n.clone(),
                };
                self.push(v)?;
            }
            b'R' | 0x81 => {
                let args = self.pop()?;
                let callable = self.pop()?;
                self.call(callable, args)?;
            }
            0x92 => {
                let _kwargs = self.pop()?;
                let args = self.pop()?;
                let callable = self.pop()?;
                self.call(callable, args)?;
            }
            b'b' => {
                let state = self.pop()?;
                let into = self.top()?;
                if let Value::Call(_) = self.get(into) {
                    self.grow(into, &[state])?;
                    if let Value::Call(c) = self.value_mut(into) {
                        c.state = Some(state);
                    }
                }
            }
            b'Q' => {
                let pid = self.pop()?;
                let id = self.alloc(Value::Persistent(pid), &[pid])?;
                self.push_id(id)?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    /// The memo: BINPUT, LONG_BINPUT, MEMOIZE store the top; BINGET, LONG_BINGET push it back.
    fn memo_op(&mut self, op: u8) -> Step<()> {
        match op {
            b'q' => {
                let k = self.u8()?;
                self.memo_put(u64::from(k))?;
            }
            b'r' => {
                let k = self.u32()?;
                self.memo_put(u64::from(k))?;
            }
            0x94 => {
                let k = self.memo.len() as u64;
                self.memo_put(k)?;
            }
            b'h' => {
                let k = self.u8()?;
                self.memo_get(u64::from(k))?;
            }
            b'j' => {
                let k = self.u32()?;
                self.memo_get(u64::from(k))?;
            }
            other => return Err(ErrorKind::Unsupported(other)),
        }
        Ok(())
    }

    fn get(&self, id: Id) -> &Value {
        &self.values[id as usize]
    }
}

#[cfg(test)]
mod tests;
