//! Writing tensors as NumPy `.npy` files. The header is written by npyz; the element bytes
//! follow as they come from a dump block (little-endian, as the device wrote them), so large
//! tensors can be streamed.
//!
//! Types NumPy has no dtype for are widened: bf16 and the fp8 types become float32 (exact, every
//! value is representable), int4 becomes int8. The caller records the widening (repro in
//! `case.json`, dump-convert in its report).

use npgx_parsers::dump::dtype::Element;
use npgx_parsers::dump::scalar;

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
    let (descr, name, widened) = match el {
        Element::F16 => ("<f2", "float16", false),
        Element::Bf16 | Element::F8E4m3fn | Element::F8E5m2 => ("<f4", "float32", true),
        Element::F32 => ("<f4", "float32", false),
        Element::F64 => ("<f8", "float64", false),
        Element::I8 => ("|i1", "int8", false),
        Element::I4 => ("|i1", "int8", true),
        Element::U8 => ("|u1", "uint8", false),
        Element::I16 => ("<i2", "int16", false),
        Element::U16 => ("<u2", "uint16", false),
        Element::I32 => ("<i4", "int32", false),
        Element::U32 => ("<u4", "uint32", false),
        Element::I64 => ("<i8", "int64", false),
        Element::U64 => ("<u8", "uint64", false),
        Element::Bool => ("|b1", "bool", false),
        Element::C64 => ("<c8", "complex64", false),
        Element::C128 => ("<c16", "complex128", false),
    };
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
}
