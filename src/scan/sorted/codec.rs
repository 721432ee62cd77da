//! A tensor record as bytes in a sorted run, written against the record before it.
//!
//! Records of a run come in execution order, so neighbours share most of what they hold: the
//! group (rank, time, device, model, step, layout) is written only when it changes, the op name
//! and the path as the length of the prefix they share with the previous record's and the rest;
//! numbers are LEB128 varints, `Option`s a 0/1 byte before the value, strings a length before
//! their bytes, floats their eight bytes. About 100 bytes a tensor instead of 400.

use npgx_parsers::dump::header::Io;
use npgx_parsers::dump::path::{Layout, Location};

use crate::dump::records::OpRef;
use crate::scan::records::{Source, TensorRecord};

/// What the previous record of a run leaves for the next one to be written against (a new run
/// starts from the default).
#[derive(Default)]
pub(super) struct Context {
    group: Option<(Location, Layout)>,
    op_name: String,
    path: String,
}

impl Context {
    /// Remembers the fields the next record is written against.
    fn keep(&mut self, op: &OpRef) {
        let same = self
            .group
            .as_ref()
            .is_some_and(|(l, y)| *l == op.location && *y == op.layout);
        if !same {
            self.group = Some((op.location.clone(), op.layout));
        }
        for (kept, now) in [(&mut self.op_name, &op.op_name), (&mut self.path, &op.path)] {
            kept.clear();
            kept.push_str(now);
        }
    }
}

/// Appends `t` to `out`, against `cx` (then updated).
pub(super) fn encode(t: &TensorRecord, cx: &mut Context, out: &mut Vec<u8>) {
    let mut e = Enc(out);
    let same = cx
        .group
        .as_ref()
        .is_some_and(|(l, y)| *l == t.op.location && *y == t.op.layout);
    e.byte(u8::from(!same));
    if !same {
        let l = &t.op.location;
        e.opt(l.world_size.map(u64::from));
        e.opt(l.rank.map(u64::from));
        e.opt_str(l.time.as_deref());
        e.opt(l.device.map(u64::from));
        e.opt_str(l.model.as_deref());
        e.opt(l.model_id);
        e.opt(l.step);
        e.byte(layout_code(t.op.layout));
    }
    e.shared(&cx.op_name, &t.op.op_name);
    e.opt_str(t.op.op_type.as_deref());
    for v in [t.op.task_id, t.op.stream_id, t.op.timestamp, t.op.counter] {
        e.opt(v);
    }
    e.shared(&cx.path, &t.op.path);
    e.byte(io_code(t.io));
    e.num(t.index as u64);
    e.str(&t.dtype);
    e.opt_str(t.format.as_deref());
    e.num(t.shape.len() as u64);
    for &d in &t.shape {
        e.num(d);
    }
    for v in [t.elements, t.nan, t.pos_inf, t.neg_inf] {
        e.num(v);
    }
    e.opt(t.overflow);
    for v in [t.min, t.max, t.mean] {
        e.byte(u8::from(v.is_some()));
        if let Some(v) = v {
            e.0.extend_from_slice(&v.to_le_bytes());
        }
    }
    e.byte(source_code(t.source));
    e.opt_str(t.slot.as_deref());
    cx.keep(&t.op);
}

/// [`encode`]'s record back, against `cx` (then updated); `None` when the bytes do not hold
/// one.
pub(super) fn decode(bytes: &[u8], cx: &mut Context) -> Option<TensorRecord> {
    let mut d = Dec(bytes);
    let (location, layout) = match d.byte()? {
        0 => cx.group.clone()?,
        1 => {
            let u32_of = |v: Option<u64>| v.map(u32::try_from).transpose().ok();
            let location = Location {
                world_size: u32_of(d.opt()?)?,
                rank: u32_of(d.opt()?)?,
                time: d.opt_str()?,
                device: u32_of(d.opt()?)?,
                model: d.opt_str()?,
                model_id: d.opt()?,
                step: d.opt()?,
            };
            (location, layout_of(d.byte()?)?)
        }
        _ => return None,
    };
    let op_name = d.shared(&cx.op_name)?;
    let op_type = d.opt_str()?;
    let (task_id, stream_id, timestamp, counter) = (d.opt()?, d.opt()?, d.opt()?, d.opt()?);
    let op = OpRef {
        location,
        layout,
        op_name,
        op_type,
        task_id,
        stream_id,
        timestamp,
        counter,
        path: d.shared(&cx.path)?,
    };
    let io = io_of(d.byte()?)?;
    let index = usize::try_from(d.num()?).ok()?;
    let dtype = d.str()?;
    let format = d.opt_str()?;
    let dims = usize::try_from(d.num()?).ok()?;
    // Each dimension takes a byte at least: a count past what is left is not one.
    if dims > d.0.len() {
        return None;
    }
    let shape = (0..dims).map(|_| d.num()).collect::<Option<Vec<u64>>>()?;
    let t = TensorRecord {
        op,
        io,
        index,
        dtype,
        format,
        shape,
        elements: d.num()?,
        nan: d.num()?,
        pos_inf: d.num()?,
        neg_inf: d.num()?,
        overflow: d.opt()?,
        min: d.float()?,
        max: d.float()?,
        mean: d.float()?,
        source: source_of(d.byte()?)?,
        slot: d.opt_str()?,
    };
    if !d.0.is_empty() {
        return None;
    }
    cx.keep(&t.op);
    Some(t)
}

struct Enc<'a>(&'a mut Vec<u8>);

impl Enc<'_> {
    fn byte(&mut self, b: u8) {
        self.0.push(b);
    }

    /// LEB128: seven bits a byte, low first, the high bit set on all but the last.
    fn num(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.byte((v as u8) | 0x80);
            v >>= 7;
        }
        self.byte(v as u8);
    }

    fn opt(&mut self, v: Option<u64>) {
        self.byte(u8::from(v.is_some()));
        if let Some(v) = v {
            self.num(v);
        }
    }

    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }

    fn opt_str(&mut self, s: Option<&str>) {
        self.byte(u8::from(s.is_some()));
        if let Some(s) = s {
            self.str(s);
        }
    }

    /// `s` as the number of leading bytes it shares with `before`, then the rest.
    fn shared(&mut self, before: &str, s: &str) {
        let common = before
            .bytes()
            .zip(s.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        self.num(common as u64);
        self.bytes(s.as_bytes().get(common..).unwrap_or_default());
    }

    fn bytes(&mut self, b: &[u8]) {
        self.num(b.len() as u64);
        self.0.extend_from_slice(b);
    }
}

struct Dec<'a>(&'a [u8]);

impl Dec<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn byte(&mut self) -> Option<u8> {
        self.take(1)?.first().copied()
    }

    /// A LEB128 varint of at most ten bytes that fits in 64 bits.
    fn num(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let bits = u64::from(b & 0x7f);
            if shift == 63 && bits > 1 {
                return None;
            }
            v |= bits << shift;
            if b & 0x80 == 0 {
                return Some(v);
            }
        }
        None
    }

    /// `Some(None)` for an absent value, `None` for bytes that do not hold one.
    fn opt(&mut self) -> Option<Option<u64>> {
        match self.byte()? {
            0 => Some(None),
            1 => self.num().map(Some),
            _ => None,
        }
    }

    fn float(&mut self) -> Option<Option<f64>> {
        match self.byte()? {
            0 => Some(None),
            1 => Some(Some(f64::from_le_bytes(self.take(8)?.try_into().ok()?))),
            _ => None,
        }
    }

    fn bytes(&mut self) -> Option<&[u8]> {
        let len = usize::try_from(self.num()?).ok()?;
        self.take(len)
    }

    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?.to_vec()).ok()
    }

    fn opt_str(&mut self) -> Option<Option<String>> {
        match self.byte()? {
            0 => Some(None),
            1 => self.str().map(Some),
            _ => None,
        }
    }

    /// [`Enc::shared`]'s string back.
    fn shared(&mut self, before: &str) -> Option<String> {
        let common = usize::try_from(self.num()?).ok()?;
        let mut s = before.as_bytes().get(..common)?.to_vec();
        s.extend_from_slice(self.bytes()?);
        String::from_utf8(s).ok()
    }
}

fn layout_code(l: Layout) -> u8 {
    match l {
        Layout::Model => 0,
        Layout::SingleOp => 1,
        Layout::Exception => 2,
        Layout::NpugraphEx => 3,
        Layout::MindSpore => 4,
        Layout::Msprobe => 5,
        Layout::Other => 6,
        Layout::FxDump => 7,
    }
}

fn layout_of(b: u8) -> Option<Layout> {
    Some(match b {
        0 => Layout::Model,
        1 => Layout::SingleOp,
        2 => Layout::Exception,
        3 => Layout::NpugraphEx,
        4 => Layout::MindSpore,
        5 => Layout::Msprobe,
        6 => Layout::Other,
        7 => Layout::FxDump,
        _ => return None,
    })
}

fn io_code(io: Io) -> u8 {
    match io {
        Io::Input => 0,
        Io::Parameter => 1,
        Io::Output => 2,
        Io::Buffer => 3,
        Io::Workspace => 4,
    }
}

fn io_of(b: u8) -> Option<Io> {
    Some(match b {
        0 => Io::Input,
        1 => Io::Parameter,
        2 => Io::Output,
        3 => Io::Buffer,
        4 => Io::Workspace,
        _ => return None,
    })
}

fn source_code(s: Source) -> u8 {
    match s {
        Source::Dump => 0,
        Source::Stats => 1,
        Source::Npy => 2,
        Source::Pt => 3,
    }
}

fn source_of(b: u8) -> Option<Source> {
    Some(match b {
        0 => Source::Dump,
        1 => Source::Stats,
        2 => Source::Npy,
        3 => Source::Pt,
        _ => return None,
    })
}
