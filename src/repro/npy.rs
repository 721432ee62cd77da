//! Writing tensors as NumPy `.npy` files (format version 1.0).
//!
//! The element bytes come straight from a dump block (little-endian, as the device wrote them).
//! Types NumPy has no dtype for are widened: bf16 and the fp8 types become float32 (exact, every
//! value is representable), int4 becomes int8. The caller records the widening in `case.json`.

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

/// A complete `.npy` file: magic, version 1.0, padded header dict, data.
pub fn encode(descr: &str, shape: &[u64], data: &[u8]) -> Vec<u8> {
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape_text = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // magic (6) + version (2) + header length (2) + header, padded with spaces to a multiple
    // of 64 and ended by a newline.
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat(unpadded.next_multiple_of(64) - unpadded));
    header.push('\n');
    let mut out = Vec::with_capacity(10 + header.len() + data.len());
    out.extend_from_slice(b"\x93NUMPY\x01\x00");
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_aligned() {
        let f = encode("<f4", &[2, 3], &[0; 24]);
        assert_eq!(&f[..8], b"\x93NUMPY\x01\x00");
        let hl = u16::from_le_bytes([f[8], f[9]]) as usize;
        assert_eq!((10 + hl) % 64, 0);
        assert_eq!(f.len(), 10 + hl + 24);
        let h = std::str::from_utf8(&f[10..10 + hl]).unwrap();
        assert!(h.starts_with("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"));
        assert!(h.ends_with('\n'));
    }

    #[test]
    fn scalar_and_one_d_shapes() {
        let s = encode("<f2", &[], &[0, 0]);
        assert!(String::from_utf8_lossy(&s).contains("'shape': ()"));
        let s = encode("<f2", &[7], &[0; 14]);
        assert!(String::from_utf8_lossy(&s).contains("'shape': (7,)"));
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
