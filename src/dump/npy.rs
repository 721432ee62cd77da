//! NumPy `.npy` files: the one header reader behind dump-scan, dump-compare and repro
//! ([`read_header`]), and the writer of repro and dump-convert. The header is written by npyz;
//! the element bytes follow as they come from a dump block (little-endian, as the device wrote
//! them), so large tensors can be streamed.
//!
//! Types NumPy has no dtype for are widened: bf16 and the fp8 types become float32 (exact, every
//! value is representable), int4 becomes int8. The caller records the widening (repro in
//! `case.json`, dump-convert in its report).

use std::fs::File;
use std::os::unix::fs::FileExt;

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::scalar;

/// Bytes read from the front of an `.npy` file for its header (NumPy pads a header to a multiple
/// of 64 bytes; real ones are a few hundred).
const HEADER_PROBE: usize = 64 << 10;

/// An `.npy` file's header.
#[derive(Clone, Debug)]
pub struct NpyHeader {
    /// The element type; `None` for a structured array.
    pub type_str: Option<npyz::TypeStr>,
    pub shape: Vec<u64>,
    /// Fortran (column-major) element order.
    pub fortran: bool,
    /// Where the data starts: right after the header.
    pub data_offset: u64,
}

impl NpyHeader {
    /// The element layout npgx reads for the type (see [`element`]).
    pub fn element(&self) -> Option<Element> {
        self.type_str.as_ref().and_then(element)
    }

    /// Bytes of data the header declares (`None` on overflow or for a structured array).
    pub fn nbytes(&self) -> Option<u64> {
        let ts = self.type_str.as_ref()?;
        self.shape
            .iter()
            .try_fold(1u64, |a, &d| a.checked_mul(d))?
            .checked_mul(ts.size_field())
    }

    /// [`Self::nbytes`] when the data fits in a file `len` bytes long after the header.
    pub fn nbytes_within(&self, len: u64) -> Option<u64> {
        self.nbytes().filter(|&n| {
            self.data_offset
                .checked_add(n)
                .is_some_and(|end| end <= len)
        })
    }
}

/// Reads the header of an `.npy` file `len` bytes long from its first bytes. The error says
/// what is wrong with the file's start (byte offset 0).
pub fn read_header(file: &File, len: u64) -> Result<NpyHeader, String> {
    let mut head = vec![0u8; HEADER_PROBE.min(usize::try_from(len).unwrap_or(usize::MAX))];
    file.read_exact_at(&mut head, 0)
        .map_err(|e| format!("cannot read: {e}"))?;
    let start = data_start(&head).map_err(|e| format!("not a .npy file: {e}"))?;
    let header = npyz::NpyHeader::from_reader(&head[..start])
        .map_err(|e| format!("not a .npy file: {e}"))?;
    Ok(NpyHeader {
        type_str: match header.dtype() {
            npyz::DType::Plain(ts) => Some(ts),
            _ => None,
        },
        shape: header.shape().to_vec(),
        fortran: header.order() == npyz::Order::Fortran,
        data_offset: start as u64,
    })
}

/// Where an `.npy` file's data starts, from its preamble: the magic `\x93NUMPY`, a major and
/// a minor version byte, then the header length — a little-endian u16 in version 1, a u32 in
/// versions 2 and 3 — and the header itself. `head` is the file's first bytes; the header must
/// lie within them.
fn data_start(head: &[u8]) -> Result<usize, String> {
    let magic = head
        .get(..6)
        .ok_or("shorter than the 10-byte .npy preamble")?;
    if magic != b"\x93NUMPY" {
        return Err("no \\x93NUMPY magic".into());
    }
    let (len_bytes, start) = match head.get(6) {
        Some(1) => (2, 10usize),
        Some(2 | 3) => (4, 12),
        Some(v) => return Err(format!(".npy format version {v} is not known")),
        None => return Err("shorter than the 10-byte .npy preamble".into()),
    };
    let raw = head
        .get(8..8 + len_bytes)
        .ok_or("shorter than the .npy preamble")?;
    let header_len = raw
        .iter()
        .rev()
        .fold(0usize, |a, &b| (a << 8) | usize::from(b));
    start
        .checked_add(header_len)
        .filter(|&end| end <= head.len())
        .ok_or_else(|| {
            format!(
                ".npy header length {header_len} runs past the first {} bytes read",
                head.len()
            )
        })
}

/// The element type of a NumPy type string (little-endian or byte-sized types only).
pub fn element(t: &npyz::TypeStr) -> Option<Element> {
    use npyz::TypeChar as T;
    if t.endianness() == npyz::Endianness::Big && t.size_field() > 1 {
        return None;
    }
    Some(match (t.type_char(), t.size_field()) {
        (T::Float, 2) => Element::F16,
        (T::Float, 4) => Element::F32,
        (T::Float, 8) => Element::F64,
        (T::Int, 1) => Element::I8,
        (T::Int, 2) => Element::I16,
        (T::Int, 4) => Element::I32,
        (T::Int, 8) => Element::I64,
        (T::Uint, 1) => Element::U8,
        (T::Uint, 2) => Element::U16,
        (T::Uint, 4) => Element::U32,
        (T::Uint, 8) => Element::U64,
        (T::Bool, 1) => Element::Bool,
        (T::Complex, 8) => Element::C64,
        (T::Complex, 16) => Element::C128,
        _ => return None,
    })
}

/// The `.npy` type of an element, and what it had to become.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NpyType {
    /// NumPy `descr`, e.g. `<f2`.
    pub descr: &'static str,
    /// NumPy dtype name, e.g. `float16`.
    pub name: &'static str,
    /// Whether the values were converted to a wider type.
    pub widened: bool,
}

/// The `.npy` type for an element layout.
pub fn npy_type(el: Element) -> NpyType {
    // The element each layout is written as: itself, or a wider one.
    let (descr, written) = match el {
        Element::F16 => ("<f2", Element::F16),
        Element::Bf16 | Element::F8E4m3fn | Element::F8E5m2 | Element::F32 => ("<f4", Element::F32),
        Element::F64 => ("<f8", Element::F64),
        Element::I8 | Element::I4 => ("|i1", Element::I8),
        Element::U8 => ("|u1", Element::U8),
        Element::I16 => ("<i2", Element::I16),
        Element::U16 => ("<u2", Element::U16),
        Element::I32 => ("<i4", Element::I32),
        Element::U32 => ("<u4", Element::U32),
        Element::I64 => ("<i8", Element::I64),
        Element::U64 => ("<u8", Element::U64),
        Element::Bool => ("|b1", Element::Bool),
        Element::C64 => ("<c8", Element::C64),
        Element::C128 => ("<c16", Element::C128),
    };
    let (name, widened) = (written.numpy_name(), written != el);
    NpyType {
        descr,
        name,
        widened,
    }
}

/// Converts `data` (whole elements of `el`) to the bytes of its `.npy` type.
/// `count` is the number of elements (needed for int4, where a byte holds two).
pub fn convert(el: Element, data: &[u8], count: usize) -> Vec<u8> {
    match el {
        Element::Bf16 => data
            .chunks_exact(2)
            .flat_map(|b| scalar::bf16_to_f32(u16::from_le_bytes([b[0], b[1]])).to_le_bytes())
            .collect(),
        Element::F8E4m3fn => data
            .iter()
            .flat_map(|&b| scalar::e4m3fn_to_f32(b).to_le_bytes())
            .collect(),
        Element::F8E5m2 => data
            .iter()
            .flat_map(|&b| scalar::e5m2_to_f32(b).to_le_bytes())
            .collect(),
        Element::I4 => data
            .iter()
            .flat_map(|&b| {
                // Low nibble first, sign-extended (dump-data.md §6).
                let lo = ((b << 4) as i8) >> 4;
                let hi = (b as i8) >> 4;
                [lo as u8, hi as u8]
            })
            .take(count)
            .collect(),
        _ => data.to_vec(),
    }
}

/// Writes a `.npy` header for C-order data of NumPy type `descr` and `shape`; the data bytes
/// follow, written by the caller.
pub fn write_header<W: std::io::Write>(w: W, descr: &str, shape: &[u64]) -> std::io::Result<W> {
    use npyz::WriterBuilder;
    let ts: npyz::TypeStr = descr
        .parse()
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("{e}")))?;
    npyz::WriteOptions::new_header_only()
        .dtype(npyz::DType::new_scalar(ts))
        .shape(shape)
        .writer(w)
        .write_header_only()
}

/// A complete `.npy` file in memory: header and data.
pub fn encode(descr: &str, shape: &[u64], data: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut out = write_header(Vec::with_capacity(128 + data.len()), descr, shape)?;
    out.extend_from_slice(data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// npyz reads back what is written, with the shape and type given.
    #[test]
    fn round_trips_through_npyz() {
        for shape in [vec![2u64, 3], vec![], vec![7]] {
            let n: u64 = shape.iter().product();
            let data: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
            let f = encode("<f4", &shape, &data).unwrap();
            let npy = npyz::NpyFile::new(&f[..]).unwrap();
            assert_eq!(npy.shape(), &shape[..]);
            let back: Vec<f32> = npy.into_vec().unwrap();
            assert_eq!(back, (0..n).map(|i| i as f32).collect::<Vec<_>>());
        }
        let f = encode("<f2", &[1], &[0, 0x3C]).unwrap();
        assert!(String::from_utf8_lossy(&f).contains("'<f2'"));
    }

    #[test]
    fn widening() {
        // bf16 0x3F80 = 1.0
        assert_eq!(
            convert(Element::Bf16, &[0x80, 0x3F], 1),
            1.0f32.to_le_bytes()
        );
        // int4: 0xF1 → low 1, high -1
        assert_eq!(convert(Element::I4, &[0xF1], 2), vec![1u8, 0xFF]);
        assert_eq!(convert(Element::I4, &[0xF1], 1), vec![1u8]);
        assert!(npy_type(Element::Bf16).widened);
    }

    #[test]
    fn npy_types_name_what_is_written() {
        let t = |el| {
            let t = npy_type(el);
            (t.descr, t.name, t.widened)
        };
        assert_eq!(t(Element::F16), ("<f2", "float16", false));
        assert_eq!(t(Element::Bf16), ("<f4", "float32", true));
        assert_eq!(t(Element::F8E5m2), ("<f4", "float32", true));
        assert_eq!(t(Element::F32), ("<f4", "float32", false));
        assert_eq!(t(Element::I4), ("|i1", "int8", true));
        assert_eq!(t(Element::I8), ("|i1", "int8", false));
        assert_eq!(t(Element::Bool), ("|b1", "bool", false));
        assert_eq!(t(Element::C128), ("<c16", "complex128", false));
    }

    fn npy(major: u8, header: &[u8]) -> Vec<u8> {
        let mut b = b"\x93NUMPY".to_vec();
        b.extend([major, 0]);
        match major {
            1 => b.extend((header.len() as u16).to_le_bytes()),
            _ => b.extend((header.len() as u32).to_le_bytes()),
        }
        b.extend(header);
        b
    }

    #[test]
    fn header_lengths_by_version() {
        let h = [b' '; 70_000];
        assert_eq!(data_start(&npy(1, &h[..118])), Ok(128));
        assert_eq!(data_start(&npy(2, &h[..116])), Ok(128));
        assert_eq!(data_start(&npy(3, &h)), Ok(70_012)); // past u16
        let cut = npy(2, &h[..116]);
        assert!(data_start(&cut[..100]).is_err());
        assert!(data_start(&cut[..9]).is_err());
        assert!(data_start(&npy(4, &h[..4])).is_err());
        assert!(data_start(b"\x93NUMPZ\x01\x00\x00\x00").is_err());
        let mut huge = npy(2, b"");
        huge[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(data_start(&huge).is_err());
    }
}
