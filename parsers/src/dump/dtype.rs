//! Data types of dumped tensors.
//!
//! Two different numberings exist (`dump-data.md` §1.4.2 and §1.4.3): the protobuf header stores
//! `OutputDataType` (0 = `DT_UNDEFINED`, 1 = `DT_FLOAT`), while TLV dump files, ATB `.bin` files and
//! GE internals use `ge::DataType` (0 = `FLOAT`). Both are mapped onto one [`DType`]; a value
//! neither table knows stays [`DType::Unknown`] with its raw number so it can be reported, never
//! guessed.

use serde::Serialize;

/// A tensor element type, named as the dump protobuf names it (`DT_FLOAT16`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(into = "String")]
pub enum DType {
    Undefined,
    Float,
    Float16,
    Int8,
    Uint8,
    Int16,
    Uint16,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Bool,
    Double,
    String,
    DualSubInt8,
    DualSubUint8,
    Complex64,
    Complex128,
    Qint8,
    Qint16,
    Qint32,
    Quint8,
    Quint16,
    Resource,
    StringRef,
    Dual,
    Variant,
    Bf16,
    Int4,
    Uint1,
    Int2,
    Uint2,
    Complex32,
    HiFloat8,
    Float8E5m2,
    Float8E4m3fn,
    Float8E8m0,
    Float6E3m2,
    Float6E2m3,
    Float4E2m1,
    Float4E1m2,
    HiFloat4,
    HiFloat4Scale,
    /// A raw value that no table knows, with the numbering it came from.
    Unknown(Numbering, i32),
}

/// Which enum a raw data-type number belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub enum Numbering {
    /// `toolkit.dumpdata.OutputDataType`, used in protobuf headers and GE graph text.
    Proto,
    /// `ge::DataType`, used in TLV dump files.
    Ge,
}

/// Proto `OutputDataType` order (index = enum value) and each type's name: the one table of
/// dump type names, which GE graph text, stats CSVs and the repro scripts also read.
const PROTO: [(DType, &str); 43] = [
    (DType::Undefined, "DT_UNDEFINED"),
    (DType::Float, "DT_FLOAT"),
    (DType::Float16, "DT_FLOAT16"),
    (DType::Int8, "DT_INT8"),
    (DType::Uint8, "DT_UINT8"),
    (DType::Int16, "DT_INT16"),
    (DType::Uint16, "DT_UINT16"),
    (DType::Int32, "DT_INT32"),
    (DType::Int64, "DT_INT64"),
    (DType::Uint32, "DT_UINT32"),
    (DType::Uint64, "DT_UINT64"),
    (DType::Bool, "DT_BOOL"),
    (DType::Double, "DT_DOUBLE"),
    (DType::String, "DT_STRING"),
    (DType::DualSubInt8, "DT_DUAL_SUB_INT8"),
    (DType::DualSubUint8, "DT_DUAL_SUB_UINT8"),
    (DType::Complex64, "DT_COMPLEX64"),
    (DType::Complex128, "DT_COMPLEX128"),
    (DType::Qint8, "DT_QINT8"),
    (DType::Qint16, "DT_QINT16"),
    (DType::Qint32, "DT_QINT32"),
    (DType::Quint8, "DT_QUINT8"),
    (DType::Quint16, "DT_QUINT16"),
    (DType::Resource, "DT_RESOURCE"),
    (DType::StringRef, "DT_STRING_REF"),
    (DType::Dual, "DT_DUAL"),
    (DType::Variant, "DT_VARIANT"),
    (DType::Bf16, "DT_BF16"),
    (DType::Int4, "DT_INT4"),
    (DType::Uint1, "DT_UINT1"),
    (DType::Int2, "DT_INT2"),
    (DType::Uint2, "DT_UINT2"),
    (DType::Complex32, "DT_COMPLEX32"),
    (DType::HiFloat8, "DT_HIFLOAT8"),
    (DType::Float8E5m2, "DT_FLOAT8_E5M2"),
    (DType::Float8E4m3fn, "DT_FLOAT8_E4M3FN"),
    (DType::Float8E8m0, "DT_FLOAT8_E8M0"),
    (DType::Float6E3m2, "DT_FLOAT6_E3M2"),
    (DType::Float6E2m3, "DT_FLOAT6_E2M3"),
    (DType::Float4E2m1, "DT_FLOAT4_E2M1"),
    (DType::Float4E1m2, "DT_FLOAT4_E1M2"),
    (DType::HiFloat4, "DT_HIFLOAT4"),
    (DType::HiFloat4Scale, "DT_HIFLOAT4_SCALE"),
];

/// `ge::DataType` order: index = enum value; `None` = reserved.
const GE_ORDER: [Option<DType>; 44] = [
    Some(DType::Float),
    Some(DType::Float16),
    Some(DType::Int8),
    Some(DType::Int32),
    Some(DType::Uint8),
    None,
    Some(DType::Int16),
    Some(DType::Uint16),
    Some(DType::Uint32),
    Some(DType::Int64),
    Some(DType::Uint64),
    Some(DType::Double),
    Some(DType::Bool),
    Some(DType::String),
    Some(DType::DualSubInt8),
    Some(DType::DualSubUint8),
    Some(DType::Complex64),
    Some(DType::Complex128),
    Some(DType::Qint8),
    Some(DType::Qint16),
    Some(DType::Qint32),
    Some(DType::Quint8),
    Some(DType::Quint16),
    Some(DType::Resource),
    Some(DType::StringRef),
    Some(DType::Dual),
    Some(DType::Variant),
    Some(DType::Bf16),
    Some(DType::Undefined),
    Some(DType::Int4),
    Some(DType::Uint1),
    Some(DType::Int2),
    Some(DType::Uint2),
    Some(DType::Complex32),
    Some(DType::HiFloat8),
    Some(DType::Float8E5m2),
    Some(DType::Float8E4m3fn),
    Some(DType::Float8E8m0),
    Some(DType::Float6E3m2),
    Some(DType::Float6E2m3),
    Some(DType::Float4E2m1),
    Some(DType::Float4E1m2),
    Some(DType::HiFloat4),
    Some(DType::HiFloat4Scale),
];

/// How the elements of a type are laid out, for the types npgx can read value by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Element {
    F16,
    Bf16,
    F32,
    F64,
    F8E4m3fn,
    F8E5m2,
    I8,
    U8,
    I16,
    U16,
    I32,
    U32,
    I64,
    U64,
    Bool,
    /// Two signed 4-bit values per byte, low nibble first.
    I4,
    /// Complex numbers as pairs of f32 / f64; each part is checked.
    C64,
    C128,
}

impl Element {
    /// Every layout.
    pub const ALL: [Element; 18] = [
        Element::F16,
        Element::Bf16,
        Element::F32,
        Element::F64,
        Element::F8E4m3fn,
        Element::F8E5m2,
        Element::I8,
        Element::U8,
        Element::I16,
        Element::U16,
        Element::I32,
        Element::U32,
        Element::I64,
        Element::U64,
        Element::Bool,
        Element::I4,
        Element::C64,
        Element::C128,
    ];

    /// The name NumPy / PyTorch users write (`float16`, `bfloat16`, …).
    pub fn numpy_name(self) -> &'static str {
        match self {
            Element::F16 => "float16",
            Element::Bf16 => "bfloat16",
            Element::F32 => "float32",
            Element::F64 => "float64",
            Element::F8E4m3fn => "float8_e4m3fn",
            Element::F8E5m2 => "float8_e5m2",
            Element::I8 => "int8",
            Element::U8 => "uint8",
            Element::I16 => "int16",
            Element::U16 => "uint16",
            Element::I32 => "int32",
            Element::U32 => "uint32",
            Element::I64 => "int64",
            Element::U64 => "uint64",
            Element::Bool => "bool",
            Element::I4 => "int4",
            Element::C64 => "complex64",
            Element::C128 => "complex128",
        }
    }

    /// The layout of a NumPy name (`float16`), case-insensitive.
    pub fn from_numpy_name(name: &str) -> Option<Element> {
        Element::ALL
            .into_iter()
            .find(|e| e.numpy_name().eq_ignore_ascii_case(name))
    }

    /// The layout a user names, case-insensitive: a NumPy name (`float16`) or a dump type name
    /// with or without its prefix (`DT_FLOAT16`, `float`).
    pub fn from_user_name(name: &str) -> Option<Element> {
        Element::from_numpy_name(name)
            .or_else(|| DType::from_name(&name.to_ascii_uppercase()).and_then(DType::element))
    }

    /// The significant bits a value of this layout has at most once decoded to f64 (every part
    /// of a complex number): the product of two values whose bits add up to 53 or fewer is exact
    /// in f64 (f32 × f32: 48), so a fused multiply-add of it rounds as a multiplication and an
    /// addition do.
    pub fn significant_bits(self) -> u32 {
        match self {
            Element::Bool => 1,
            Element::F8E5m2 | Element::I4 => 3,
            Element::F8E4m3fn => 4,
            Element::I8 => 7,
            Element::U8 | Element::Bf16 => 8,
            Element::F16 => 11,
            Element::I16 => 15,
            Element::U16 => 16,
            Element::F32 | Element::C64 => 24,
            Element::I32 => 31,
            Element::U32 => 32,
            // Rounded to f64's 53 bits.
            Element::F64 | Element::C128 | Element::I64 | Element::U64 => 53,
        }
    }

    /// Bytes per element, or `None` for sub-byte types.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            Element::F8E4m3fn | Element::F8E5m2 | Element::I8 | Element::U8 | Element::Bool => 1,
            Element::F16 | Element::Bf16 | Element::I16 | Element::U16 => 2,
            Element::F32 | Element::I32 | Element::U32 => 4,
            Element::F64 | Element::I64 | Element::U64 | Element::C64 => 8,
            Element::C128 => 16,
            Element::I4 => return None,
        })
    }

    /// The dump data type this layout belongs to (for files that name types their own way,
    /// such as `.npy` and `.pt`).
    pub fn dtype(self) -> DType {
        match self {
            Element::F16 => DType::Float16,
            Element::Bf16 => DType::Bf16,
            Element::F32 => DType::Float,
            Element::F64 => DType::Double,
            Element::F8E4m3fn => DType::Float8E4m3fn,
            Element::F8E5m2 => DType::Float8E5m2,
            Element::I8 => DType::Int8,
            Element::U8 => DType::Uint8,
            Element::I16 => DType::Int16,
            Element::U16 => DType::Uint16,
            Element::I32 => DType::Int32,
            Element::U32 => DType::Uint32,
            Element::I64 => DType::Int64,
            Element::U64 => DType::Uint64,
            Element::Bool => DType::Bool,
            Element::I4 => DType::Int4,
            Element::C64 => DType::Complex64,
            Element::C128 => DType::Complex128,
        }
    }

    /// Whether the type can hold NaN or infinity at all.
    pub fn is_float(self) -> bool {
        matches!(
            self,
            Element::F16
                | Element::Bf16
                | Element::F32
                | Element::F64
                | Element::F8E4m3fn
                | Element::F8E5m2
                | Element::C64
                | Element::C128
        )
    }

    /// The magnitude at which a finite value counts as overflowed (saturated): the largest finite
    /// value of the type. `None` for types where only NaN/Inf matter (f32, f64, integers).
    pub fn saturation_limit(self) -> Option<f64> {
        match self {
            Element::F16 => Some(65504.0),
            // Largest finite bf16: 0x7F7F.
            Element::Bf16 => Some(f64::from(f32::from_bits(0x7F7F_0000))),
            Element::F8E4m3fn => Some(448.0),
            Element::F8E5m2 => Some(57344.0),
            _ => None,
        }
    }
}

impl DType {
    /// Maps a protobuf `OutputDataType` value.
    pub fn from_proto(v: i32) -> DType {
        usize::try_from(v)
            .ok()
            .and_then(|i| PROTO.get(i))
            .map(|&(d, _)| d)
            .unwrap_or(DType::Unknown(Numbering::Proto, v))
    }

    /// Maps a `ge::DataType` value (TLV dump files).
    pub fn from_ge(v: i32) -> DType {
        usize::try_from(v)
            .ok()
            .and_then(|i| GE_ORDER.get(i).copied().flatten())
            .unwrap_or(DType::Unknown(Numbering::Ge, v))
    }

    /// Parses a name as printed in stats CSVs and GE graph text (`DT_FLOAT16`); the `DT_` prefix
    /// is optional. Unknown names give `None`.
    pub fn from_name(name: &str) -> Option<DType> {
        let bare = name.strip_prefix("DT_").unwrap_or(name);
        PROTO
            .iter()
            .find(|(_, n)| n.strip_prefix("DT_") == Some(bare))
            .map(|&(d, _)| d)
    }

    /// A framework's dtype name: PyTorch (`torch.float16`, `torch.bfloat16`), MindSpore
    /// (`Float16`, `BFloat16`) and NumPy / MindSpore dump CSVs (`float32`, `int64`, `bool`).
    pub fn from_framework_name(name: &str) -> Option<DType> {
        let bare = name
            .strip_prefix("torch.")
            .unwrap_or(name)
            .to_ascii_lowercase();
        // PyTorch's aliases; every other name is NumPy's.
        Some(match bare.as_str() {
            "half" => DType::Float16,
            "float" => DType::Float,
            "double" => DType::Double,
            "short" => DType::Int16,
            "int" => DType::Int32,
            "long" => DType::Int64,
            _ => Element::from_numpy_name(&bare)?.dtype(),
        })
    }

    /// The protobuf name, e.g. `DT_FLOAT16`; unknown values print as `DT_UNKNOWN(<n>)`.
    pub fn name(self) -> &'static str {
        PROTO
            .iter()
            .find(|(d, _)| *d == self)
            .map_or("DT_UNKNOWN", |(_, n)| n)
    }

    /// The protobuf `OutputDataType` value (also `ge.proto.DataType`, the numbering of GE graph
    /// text); `None` for an unknown type.
    pub fn proto_value(self) -> Option<i32> {
        let i = PROTO.iter().position(|(d, _)| *d == self)?;
        i32::try_from(i).ok()
    }

    /// The NumPy name of the type's own element layout (`DT_FLOAT16` → `float16`); `None` for a
    /// type without one, or one read through another type's layout (`DT_QINT8` is read as int8
    /// but is not NumPy's int8).
    pub fn numpy_name(self) -> Option<&'static str> {
        let el = self.element()?;
        (el.dtype() == self).then(|| el.numpy_name())
    }

    /// The element layout, for the types whose values npgx reads. Types with a documented but
    /// unverified encoding (HiFloat8, fp6, fp4, e8m0) and opaque types return `None`.
    pub fn element(self) -> Option<Element> {
        Some(match self {
            DType::Float => Element::F32,
            DType::Float16 => Element::F16,
            DType::Bf16 => Element::Bf16,
            DType::Double => Element::F64,
            DType::Float8E4m3fn => Element::F8E4m3fn,
            DType::Float8E5m2 => Element::F8E5m2,
            DType::Int8 | DType::Qint8 => Element::I8,
            DType::Uint8 | DType::Quint8 => Element::U8,
            DType::Int16 | DType::Qint16 => Element::I16,
            DType::Uint16 | DType::Quint16 => Element::U16,
            DType::Int32 | DType::Qint32 => Element::I32,
            DType::Uint32 => Element::U32,
            DType::Int64 => Element::I64,
            DType::Uint64 => Element::U64,
            DType::Bool => Element::Bool,
            DType::Int4 => Element::I4,
            DType::Complex64 => Element::C64,
            DType::Complex128 => Element::C128,
            _ => return None,
        })
    }
}

impl std::fmt::Display for DType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DType::Unknown(Numbering::Proto, v) => write!(f, "DT_UNKNOWN({v})"),
            DType::Unknown(Numbering::Ge, v) => write!(f, "DT_UNKNOWN(ge:{v})"),
            d => f.write_str(d.name()),
        }
    }
}

impl From<DType> for String {
    fn from(d: DType) -> String {
        d.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proto_and_ge_numberings_differ() {
        assert_eq!(DType::from_proto(0), DType::Undefined);
        assert_eq!(DType::from_proto(1), DType::Float);
        assert_eq!(DType::from_ge(0), DType::Float);
        assert_eq!(DType::from_ge(1), DType::Float16);
        assert_eq!(DType::from_proto(27), DType::Bf16);
        assert_eq!(DType::from_ge(27), DType::Bf16);
        assert_eq!(DType::from_proto(35), DType::Float8E4m3fn);
        assert_eq!(DType::from_ge(36), DType::Float8E4m3fn);
        assert_eq!(DType::from_ge(9), DType::Int64);
    }

    #[test]
    fn unknown_values_are_kept() {
        assert_eq!(DType::from_proto(99), DType::Unknown(Numbering::Proto, 99));
        assert_eq!(DType::from_proto(-1), DType::Unknown(Numbering::Proto, -1));
        assert_eq!(DType::from_ge(5), DType::Unknown(Numbering::Ge, 5));
        assert_eq!(DType::from_proto(99).to_string(), "DT_UNKNOWN(99)");
    }

    #[test]
    fn names_round_trip() {
        for (i, (d, _)) in PROTO.iter().enumerate() {
            assert_eq!(DType::from_name(d.name()), Some(*d), "index {i}");
            assert_eq!(d.proto_value(), i32::try_from(i).ok(), "{d}");
            assert_eq!(DType::from_proto(i32::try_from(i).unwrap()), *d);
        }
        assert_eq!(DType::Unknown(Numbering::Proto, 50).proto_value(), None);
        assert_eq!(DType::Unknown(Numbering::Proto, 50).name(), "DT_UNKNOWN");
        assert_eq!(DType::from_name("FLOAT16"), Some(DType::Float16));
        assert_eq!(DType::from_name("-"), None);
    }

    #[test]
    fn element_and_dtype_agree() {
        for i in 0..43 {
            let d = DType::from_proto(i);
            if let Some(el) = d.element() {
                assert_eq!(el.dtype().element(), Some(el), "{d}");
            }
        }
    }

    #[test]
    fn numpy_names_of_the_types_themselves() {
        assert_eq!(DType::Float.numpy_name(), Some("float32"));
        assert_eq!(DType::Bf16.numpy_name(), Some("bfloat16"));
        assert_eq!(DType::Int4.numpy_name(), Some("int4"));
        assert_eq!(DType::Qint8.numpy_name(), None);
        assert_eq!(DType::HiFloat8.numpy_name(), None);
        for el in Element::ALL {
            assert_eq!(el.dtype().numpy_name(), Some(el.numpy_name()));
        }
    }

    #[test]
    fn framework_names() {
        assert_eq!(
            DType::from_framework_name("torch.float16"),
            Some(DType::Float16)
        );
        assert_eq!(DType::from_framework_name("BFloat16"), Some(DType::Bf16));
        assert_eq!(DType::from_framework_name("float32"), Some(DType::Float));
        assert_eq!(DType::from_framework_name("torch.Size"), None);
    }

    #[test]
    fn user_names() {
        for el in Element::ALL {
            assert_eq!(Element::from_user_name(el.numpy_name()), Some(el));
            assert_eq!(Element::from_user_name(el.dtype().name()), Some(el));
        }
        assert_eq!(Element::from_user_name("Float16"), Some(Element::F16));
        assert_eq!(Element::from_user_name("float"), Some(Element::F32));
        assert_eq!(Element::from_user_name("half"), None);
    }

    #[test]
    fn saturation_limits() {
        assert_eq!(Element::F16.saturation_limit(), Some(65504.0));
        assert_eq!(Element::F8E4m3fn.saturation_limit(), Some(448.0));
        assert_eq!(Element::F8E5m2.saturation_limit(), Some(57344.0));
        assert_eq!(
            Element::Bf16.saturation_limit(),
            Some(3.3895313892515355e38)
        );
        assert_eq!(Element::F32.saturation_limit(), None);
    }
}
