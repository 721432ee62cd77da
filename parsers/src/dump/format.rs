//! Tensor formats (`OutputFormat`, `dump-data.md` §1.4.4).
//!
//! GE keeps a format as an `int32` with four parts: bits 0–7 the primary format, bits 8–23 a
//! sub-format (e.g. the group count of a grouped FRACTAL_Z), bits 24–27 a C0 code with
//! `C0 = 1 << (code - 1)`. The AICPU dump writer stores the parts separately, the exception writer
//! stores the raw value, so [`Format::from_raw`] always splits.

use serde::Serialize;

const NAMES: [&str; 52] = [
    "NCHW",
    "NHWC",
    "ND",
    "NC1HWC0",
    "FRACTAL_Z",
    "NC1C0HWPAD",
    "NHWC1C0",
    "FSR_NCHW",
    "FRACTAL_DECONV",
    "C1HWNC0",
    "FRACTAL_DECONV_TRANSPOSE",
    "FRACTAL_DECONV_SP_STRIDE_TRANS",
    "NC1HWC0_C04",
    "FRACTAL_Z_C04",
    "CHWN",
    "FRACTAL_DECONV_SP_STRIDE8_TRANS",
    "HWCN",
    "NC1KHKWHWC0",
    "BN_WEIGHT",
    "FILTER_HWCK",
    "HASHTABLE_LOOKUP_LOOKUPS",
    "HASHTABLE_LOOKUP_KEYS",
    "HASHTABLE_LOOKUP_VALUE",
    "HASHTABLE_LOOKUP_OUTPUT",
    "HASHTABLE_LOOKUP_HITS",
    "C1HWNCoC0",
    "MD",
    "NDHWC",
    "FRACTAL_ZZ",
    "FRACTAL_NZ",
    "NCDHW",
    "DHWCN",
    "NDC1HWC0",
    "FRACTAL_Z_3D",
    "CN",
    "NC",
    "DHWNC",
    "FRACTAL_Z_3D_TRANSPOSE",
    "FRACTAL_ZN_LSTM",
    "FRACTAL_Z_G",
    "RESERVED",
    "ALL",
    "NULL",
    "ND_RNN_BIAS",
    "FRACTAL_ZN_RNN",
    "YUV",
    "YUV_A",
    "NCL",
    "FRACTAL_Z_WINO",
    "C1HWC0",
    "FRACTAL_NZ_C0_16",
    "FRACTAL_NZ_C0_32",
];

/// A tensor format split into its parts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
pub struct Format {
    /// Primary format number (`v & 0xFF`).
    pub primary: u8,
    /// Sub-format (`(v >> 8) & 0xFFFF`), e.g. groups of a grouped FRACTAL_Z.
    pub sub: u16,
    /// Explicit C0 from bits 24–27, when encoded.
    pub c0: Option<u32>,
}

impl Format {
    pub const NCHW: u8 = 0;
    pub const NHWC: u8 = 1;
    pub const ND: u8 = 2;
    pub const NC1HWC0: u8 = 3;
    pub const FRACTAL_Z: u8 = 4;
    pub const NC1HWC0_C04: u8 = 12;
    pub const HWCN: u8 = 16;
    pub const C1HWNCOC0: u8 = 25;
    pub const FRACTAL_NZ: u8 = 29;
    pub const NDC1HWC0: u8 = 32;
    pub const FRACTAL_Z_3D: u8 = 33;
    pub const FRACTAL_NZ_C0_16: u8 = 50;
    pub const FRACTAL_NZ_C0_32: u8 = 51;

    /// Splits a raw format value. A separately stored sub-format (`sub_format` field) wins
    /// over the bits when it is non-zero.
    pub fn from_raw(v: i32, sub_format: i32) -> Format {
        let bits = v as u32;
        let code = (bits >> 24) & 0xF;
        let sub = if sub_format > 0 {
            u16::try_from(sub_format).unwrap_or(u16::MAX)
        } else {
            ((bits >> 8) & 0xFFFF) as u16
        };
        Format {
            primary: (bits & 0xFF) as u8,
            sub,
            c0: (code > 0).then(|| 1u32 << (code - 1)),
        }
    }

    /// A plain primary format with no sub-format.
    pub fn primary(primary: u8) -> Format {
        Format {
            primary,
            sub: 0,
            c0: None,
        }
    }

    /// The format's name (`FRACTAL_NZ`); 255 is `FORMAT_MAX`, anything unknown `FORMAT_<n>`.
    pub fn name(&self) -> String {
        match NAMES.get(usize::from(self.primary)) {
            Some(n) => (*n).to_string(),
            None if self.primary == 255 => "FORMAT_MAX".to_string(),
            None => format!("FORMAT_{}", self.primary),
        }
    }

    /// Parses a format name as printed by stats CSVs and GE graphs (`FRACTAL_NZ`, `FORMAT_ND`).
    pub fn from_name(name: &str) -> Option<Format> {
        let bare = name.strip_prefix("FORMAT_").unwrap_or(name);
        NAMES
            .iter()
            .position(|n| n.eq_ignore_ascii_case(bare))
            .and_then(|i| u8::try_from(i).ok())
            .map(Format::primary)
    }

    /// Whether the device layout holds padding that a logical view excludes.
    pub fn is_padded_device_format(&self) -> bool {
        matches!(
            self.primary,
            Format::NC1HWC0
                | Format::NC1HWC0_C04
                | Format::FRACTAL_Z
                | Format::FRACTAL_NZ
                | Format::FRACTAL_NZ_C0_16
                | Format::FRACTAL_NZ_C0_32
                | Format::NDC1HWC0
                | Format::FRACTAL_Z_3D
                | Format::C1HWNCOC0
        )
    }
}

impl std::fmt::Display for Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_raw_values() {
        let f = Format::from_raw(29, 0);
        assert_eq!((f.primary, f.sub, f.c0), (29, 0, None));
        assert_eq!(f.name(), "FRACTAL_NZ");
        // groups = 4 in bits 8..23, C0 code 5 => C0 = 16
        let raw = (5 << 24) | (4 << 8) | 4;
        let f = Format::from_raw(raw, 0);
        assert_eq!((f.primary, f.sub, f.c0), (4, 4, Some(16)));
        assert_eq!(Format::from_raw(4, 8).sub, 8);
    }

    #[test]
    fn names() {
        assert_eq!(Format::primary(255).name(), "FORMAT_MAX");
        assert_eq!(Format::primary(200).name(), "FORMAT_200");
        assert_eq!(Format::from_name("NC1HWC0"), Some(Format::primary(3)));
        assert_eq!(Format::from_name("FORMAT_ND"), Some(Format::primary(2)));
        assert_eq!(Format::from_name("-"), None);
    }
}
