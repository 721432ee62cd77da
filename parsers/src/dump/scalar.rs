//! Scalar encodings of low-precision types (`dump-data.md` §6, "Scalar encodings").
//!
//! All little-endian. bf16 is the upper half of an f32. fp8 e4m3fn (bias 7, no infinity,
//! S.1111.111 is NaN, largest finite 448) and e5m2 (bias 15, IEEE-like with ±infinity and NaN)
//! follow the OCP FP8 definitions, which is also what ml_dtypes and PyTorch implement — unlike
//! msaccucmp, which decodes e4m3fn NaN as 480 and drops the sign of e5m2 infinities.

/// bf16 bits to f32 (exact).
pub fn bf16_to_f32(bits: u16) -> f32 {
    f32::from_bits(u32::from(bits) << 16)
}

/// fp16 bits to f32 (exact). Branch-free, so a loop over it vectorises: the exponent and
/// mantissa are shifted into f32 position and scaled by 2^112, which rebias the exponent and
/// also normalises fp16 subnormals exactly; infinities and NaNs get the all-ones exponent.
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    let h = u32::from(bits);
    let sign = (h & 0x8000) << 16;
    let em = h & 0x7FFF;
    let scaled = (f32::from_bits(em << 13) * f32::from_bits(0x7780_0000)).to_bits();
    let special = (em << 13) | 0x7F80_0000;
    f32::from_bits(if em >= 0x7C00 { special } else { scaled } | sign)
}

/// fp8 e4m3fn to f32 (exact).
pub fn e4m3fn_to_f32(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 3) & 0xF);
    let man = f32::from(b & 0x7);
    if exp == 0xF && b & 0x7 == 0x7 {
        return f32::NAN;
    }
    if exp == 0 {
        sign * man / 8.0 * 2f32.powi(-6)
    } else {
        sign * (1.0 + man / 8.0) * 2f32.powi(exp - 7)
    }
}

/// fp8 e5m2 to f32 (exact).
pub fn e5m2_to_f32(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((b >> 2) & 0x1F);
    let man = f32::from(b & 0x3);
    match exp {
        0x1F if b & 0x3 == 0 => sign * f32::INFINITY,
        0x1F => f32::NAN,
        0 => sign * man / 4.0 * 2f32.powi(-14),
        _ => sign * (1.0 + man / 4.0) * 2f32.powi(exp - 15),
    }
}

/// A 256-entry decode table for a one-byte float type.
pub fn table(decode: fn(u8) -> f32) -> [f32; 256] {
    let mut t = [0.0f32; 256];
    for (i, v) in t.iter_mut().enumerate() {
        *v = decode(i as u8);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_e4m3fn() {
        assert_eq!(e4m3fn_to_f32(0x7E), 448.0);
        assert_eq!(e4m3fn_to_f32(0xFE), -448.0);
        assert!(e4m3fn_to_f32(0x7F).is_nan());
        assert!(e4m3fn_to_f32(0xFF).is_nan());
        assert_eq!(e4m3fn_to_f32(0x38), 1.0);
        assert_eq!(e4m3fn_to_f32(0x01), 2f32.powi(-9));
        assert_eq!(e4m3fn_to_f32(0x78), 256.0);
    }

    #[test]
    fn fp8_e5m2() {
        assert_eq!(e5m2_to_f32(0x7B), 57344.0);
        assert_eq!(e5m2_to_f32(0x7C), f32::INFINITY);
        assert_eq!(e5m2_to_f32(0xFC), f32::NEG_INFINITY);
        assert!(e5m2_to_f32(0x7D).is_nan());
        assert_eq!(e5m2_to_f32(0x3C), 1.0);
        assert_eq!(e5m2_to_f32(0x01), 2f32.powi(-16));
    }

    #[test]
    fn f16_matches_the_half_crate_on_every_value() {
        for bits in 0..=u16::MAX {
            let want = half::f16::from_bits(bits).to_f32();
            let got = f16_to_f32(bits);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "{bits:#06x}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn sixteen_bit_types() {
        assert_eq!(bf16_to_f32(0x3F80), 1.0);
        assert_eq!(bf16_to_f32(0xFF80), f32::NEG_INFINITY);
        assert_eq!(f16_to_f32(0x7BFF), 65504.0);
        assert_eq!(f16_to_f32(0x3C00), 1.0);
    }
}
