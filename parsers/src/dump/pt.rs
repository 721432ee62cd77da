//! npugraph_ex `.pt` dumps (`dump-data.md` §7): what the `data.pkl` of a `torch.save` archive
//! says about the tensors it saved.
//!
//! ```text
//! <archive>/data.pkl   pickle: torch._utils._rebuild_tensor_v2(persistent_load(('storage',
//!                      torch.<Type>Storage, '<key>', '<location>', numel)), offset, size, stride, …)
//! <archive>/data/<key> raw little-endian storage bytes
//! ```
//!
//! The pickle is read by the restricted machine in [`crate::pickle`]; this module recognises the
//! tensor-rebuild calls in the resulting value graph. Every tensor found in the saved object — a
//! tensor, tensors in tuples, lists, dicts and the arguments or state of other calls (a
//! `Parameter`, an `OrderedDict`) — is listed once, in document order, even when the object
//! refers to it many times. Opening the archive and reading storage records is the caller's job.

use super::dtype::Element;
use crate::pickle::{self, Id, Pickle, PickleError, Value};

/// One tensor `torch.save` wrote: where its elements lie in a storage record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SavedTensor {
    /// `None` when the storage type is not one npgx checks (see [`storage_element`]).
    pub element: Option<Element>,
    /// Storage class name, e.g. `FloatStorage`.
    pub storage_type: String,
    /// Storage record name: the archive member is `<archive>/data/<key>`.
    pub key: String,
    /// Offset of the first element in the storage, in elements.
    pub offset: u64,
    pub size: Vec<u64>,
    pub stride: Vec<u64>,
}

/// Why a `data.pkl` yields no tensor list.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PtError {
    #[error(transparent)]
    Pickle(#[from] PickleError),
    #[error("{0} arguments are not (storage, offset, size, stride, …)")]
    BadRebuild(String),
}

impl SavedTensor {
    /// Whether the strided view covers a dense block of its storage (any dimension order, no
    /// gaps, no overlaps) — true for contiguous tensors and their permutations such as a
    /// transpose. Such a view holds exactly the elements `offset .. offset + numel` of its
    /// storage, which is all a NaN/Inf/min/max/mean verdict needs (they do not depend on order).
    pub fn dense(&self) -> bool {
        if self.size.len() != self.stride.len() {
            return false;
        }
        let mut dims: Vec<(u64, u64)> = self
            .stride
            .iter()
            .copied()
            .zip(self.size.iter().copied())
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

    /// `(byte offset, byte length)` of a dense view's elements inside a storage record of
    /// `record_len` bytes, or `None` when the element type is unknown or the view does not fit.
    pub fn byte_span(&self, record_len: u64) -> Option<(u64, u64)> {
        let size = self.element?.size().unwrap_or(1) as u64;
        let count = self.size.iter().try_fold(1u64, |a, &d| a.checked_mul(d))?;
        let nbytes = count.checked_mul(size)?;
        let off = self.offset.checked_mul(size)?;
        off.checked_add(nbytes)
            .filter(|&end| end <= record_len)
            .map(|_| (off, nbytes))
    }
}

/// The element type of a `torch.<Type>Storage` class.
pub fn storage_element(type_name: &str) -> Option<Element> {
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

const REBUILD: [&str; 2] = ["_rebuild_tensor_v2", "_rebuild_tensor"];

fn global(p: &Pickle, id: Id) -> Option<(&str, &str)> {
    match p.get(id) {
        Value::Global { module, name } => Some((module, name)),
        _ => None,
    }
}

fn is_rebuild(p: &Pickle, id: Id) -> bool {
    global(p, id).is_some_and(|(m, n)| m == "torch._utils" && REBUILD.contains(&n))
}

fn items(p: &Pickle, id: Id) -> Option<&[Id]> {
    match p.get(id) {
        Value::Tuple(xs) | Value::List(xs) => Some(xs),
        _ => None,
    }
}

fn uint(p: &Pickle, id: Id) -> Option<u64> {
    match p.get(id) {
        Value::Int(i) => u64::try_from(*i).ok(),
        _ => None,
    }
}

fn uints(p: &Pickle, id: Id) -> Option<Vec<u64>> {
    items(p, id)?.iter().map(|&x| uint(p, x)).collect()
}

/// `(storage, offset, size, stride, …)` → a tensor.
fn rebuild(p: &Pickle, args: Id) -> Option<SavedTensor> {
    let a = items(p, args)?;
    let Value::Persistent(pid) = p.get(*a.first()?) else {
        return None;
    };
    let pid = items(p, *pid)?;
    let (_, type_name) = global(p, *pid.get(1)?)?;
    let Value::Str(key) = p.get(*pid.get(2)?) else {
        return None;
    };
    Some(SavedTensor {
        element: storage_element(type_name),
        storage_type: type_name.to_string(),
        key: key.clone(),
        offset: uint(p, *a.get(1)?)?,
        size: uints(p, *a.get(2)?)?,
        stride: uints(p, *a.get(3)?)?,
    })
}

/// Every tensor saved in `data_pkl`, once each, in document order.
pub fn saved_tensors(data_pkl: &[u8]) -> Result<Vec<SavedTensor>, PtError> {
    let p = pickle::parse(data_pkl)?;
    let mut out = Vec::new();
    let mut bad = None;
    p.walk(p.root, |_, v| {
        let Value::Call(c) = v else {
            return true;
        };
        // `_rebuild_from_type_v2(func, type, args, state)` saves tensor subclasses.
        let from_type = global(&p, c.callable)
            .is_some_and(|(m, n)| m == "torch._tensor" && n == "_rebuild_from_type_v2");
        let (func, args) = match (from_type, items(&p, c.args)) {
            (true, Some([func, _, args, ..])) => (*func, *args),
            _ => (c.callable, c.args),
        };
        if !is_rebuild(&p, func) {
            return true;
        }
        match rebuild(&p, args) {
            Some(t) => out.push(t),
            None => {
                let name = global(&p, func).map_or("", |(_, n)| n);
                bad.get_or_insert_with(|| name.to_string());
            }
        }
        false
    });
    match bad {
        Some(name) => Err(PtError::BadRebuild(name)),
        None => Ok(out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view(size: &[u64], stride: &[u64]) -> SavedTensor {
        SavedTensor {
            element: Some(Element::F32),
            storage_type: "FloatStorage".into(),
            key: "0".into(),
            offset: 0,
            size: size.to_vec(),
            stride: stride.to_vec(),
        }
    }

    #[test]
    fn dense_views() {
        assert!(view(&[2, 3], &[3, 1]).dense());
        assert!(view(&[2, 3], &[1, 2]).dense()); // transpose
        assert!(view(&[2, 1, 3], &[3, 100, 1]).dense()); // size-1 dims have any stride
        assert!(view(&[], &[]).dense());
        assert!(!view(&[2, 3], &[4, 1]).dense()); // row padding
        assert!(!view(&[2, 3], &[0, 1]).dense()); // broadcast
        assert!(!view(&[2], &[1, 1]).dense());
    }

    #[test]
    fn byte_spans_are_checked() {
        let mut t = view(&[2, 3], &[3, 1]);
        assert_eq!(t.byte_span(24), Some((0, 24)));
        assert_eq!(t.byte_span(23), None);
        t.offset = 2;
        assert_eq!(t.byte_span(32), Some((8, 24)));
        assert_eq!(t.byte_span(31), None);
        t.offset = u64::MAX / 2;
        assert_eq!(t.byte_span(u64::MAX), None);
        t.offset = 0;
        t.size = vec![u64::MAX, 2];
        assert_eq!(t.byte_span(u64::MAX), None);
        t.size = vec![1];
        t.element = None;
        assert_eq!(t.byte_span(64), None);
    }

    /// `torch.save(torch.zeros(2, 3), f)` (torch 2.x, protocol 2), the data.pkl bytes as
    /// `pickletools.dis` lists them.
    pub(crate) const ZEROS_2X3: &[u8] = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\nq\x00((X\x07\x00\x00\x00storageq\x01ctorch\nFloatStorage\nq\x02X\x01\x00\x00\x000q\x03X\x03\x00\x00\x00cpuq\x04K\x06tq\x05QK\x00K\x02K\x03\x86q\x06K\x03K\x01\x86q\x07\x89ccollections\nOrderedDict\nq\x08)Rq\ttq\nRq\x0b.";

    #[test]
    fn a_saved_tensor() {
        let got = saved_tensors(ZEROS_2X3).expect("reads");
        assert_eq!(
            got,
            vec![SavedTensor {
                element: Some(Element::F32),
                storage_type: "FloatStorage".into(),
                key: "0".into(),
                offset: 0,
                size: vec![2, 3],
                stride: vec![3, 1],
            }]
        );
    }

    #[test]
    fn a_tensor_shared_many_times_is_listed_once() {
        // (t, t, [t, t]) where t is memo 11
        let mut b = ZEROS_2X3[..ZEROS_2X3.len() - 1].to_vec();
        b.extend_from_slice(b"h\x0b]q\x0c(h\x0bh\x0be\x87.");
        assert_eq!(saved_tensors(&b).expect("reads").len(), 1);
    }

    #[test]
    fn a_rebuild_with_wrong_arguments_is_an_error() {
        let b = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n(K\x01tR.";
        assert_eq!(
            saved_tensors(b),
            Err(PtError::BadRebuild("_rebuild_tensor_v2".into()))
        );
    }

    #[test]
    fn other_calls_are_looked_into_but_not_run() {
        // os.system('x') wrapping nothing: recorded, not run, holds no tensor
        let b = b"\x80\x02cos\nsystem\nX\x01\x00\x00\x00x\x85R.";
        assert_eq!(saved_tensors(b), Ok(vec![]));
    }
}
