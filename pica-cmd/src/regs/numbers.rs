//! Number formats of PICA200 register fields: float24 (1.7.16), float20 (1.7.12), float16
//! (1.5.10), float31 (1.7.23 stored in register bits 1-31), fixed point and sign extension.
//!
//! Stage: shared helpers for the register catalogue. Inputs: raw field bits. Outputs: f32/f64
//! values for display and typed getters. Registers read: none.
//!
//! Decoding follows the rule [C] and [P] share (`pica-core.md` §4.2, `pica-raster.md` §0.3): all
//! bits except the sign zero -> signed zero; exponent all ones -> infinity (mantissa 0) or NaN
//! (mantissa kept); otherwise the IEEE exponent is `e + 128 - 2^(E-1)` and the mantissa is moved
//! to the top of the 23-bit IEEE mantissa. There are no denormals: exponent 0 with a non-zero
//! mantissa is the normal number 2^-bias * 1.m. Every PICA float of these widths is exactly
//! representable in f32, so decode -> encode gives back the raw bits (tested exhaustively for
//! float24).
//!
//! The encoders are ours (the register catalogue only needs them for builders and tests): round
//! to nearest even, overflow -> infinity, magnitudes below 2^-bias flush to signed zero, NaN keeps
//! its top mantissa bits (forced non-zero). // UNVERIFIED: how the hardware rounds f32 inputs
//! (f32 uniform uploads) to float24 is undocumented; nihstro's encoder truncates instead.

use serde::Serialize;

/// Sign-extends the low `bits` bits of `value` (bits 1-32; 0 yields 0).
#[inline]
pub const fn sign_extend(value: u32, bits: u32) -> i32 {
    if bits == 0 {
        return 0;
    }
    if bits >= 32 {
        return value as i32;
    }
    let shift = 32 - bits;
    ((value << shift) as i32) >> shift
}

/// Mask of the low `bits` bits.
#[inline]
const fn low_mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bits) - 1
    }
}

/// Decodes a PICA float with `mant` mantissa bits and `exp` exponent bits (bias
/// 2^(exp-1) - 1, sign bit above the exponent) to f32. Requires `mant <= 23`, `2 <= exp <= 8`.
#[inline]
pub(crate) fn pica_float_to_f32(raw: u32, mant: u32, exp: u32) -> f32 {
    let raw = raw & low_mask(1 + exp + mant);
    let sign = (raw >> (exp + mant)) & 1;
    let e = (raw >> mant) & low_mask(exp);
    let m = raw & low_mask(mant);
    let bits = if e == 0 && m == 0 {
        sign << 31
    } else if e == low_mask(exp) {
        (sign << 31) | (0xFF << 23) | (m << (23 - mant))
    } else {
        (sign << 31) | ((e + 128 - (1 << (exp - 1))) << 23) | (m << (23 - mant))
    };
    f32::from_bits(bits)
}

/// Encodes an f32 into a PICA float with `mant` mantissa bits and `exp` exponent bits, rounding
/// to nearest even (see the module doc for the edge cases).
pub(crate) fn f32_to_pica_float(value: f32, mant: u32, exp: u32) -> u32 {
    let b = value.to_bits();
    let sign = (b >> 31) << (exp + mant);
    let e32 = (b >> 23) & 0xFF;
    let m32 = b & 0x7F_FFFF;
    let exp_ones = low_mask(exp);
    if e32 == 0xFF {
        let m = if m32 == 0 {
            0
        } else {
            (m32 >> (23 - mant)).max(1)
        };
        return sign | (exp_ones << mant) | m;
    }
    if e32 == 0 {
        // Zero and f32 subnormals (far below the smallest PICA magnitude).
        return sign;
    }
    let drop = 23 - mant;
    let mut m = m32 >> drop;
    if drop > 0 {
        let rem = m32 & low_mask(drop);
        let half = 1 << (drop - 1);
        if rem > half || (rem == half && (m & 1) == 1) {
            m += 1;
        }
    }
    let mut e = e32 as i32 - (128 - (1i32 << (exp - 1)));
    if m == 1 << mant {
        m = 0;
        e += 1;
    }
    if e >= exp_ones as i32 {
        return sign | (exp_ones << mant);
    }
    if e < 0 {
        return sign;
    }
    sign | ((e as u32) << mant) | m
}

macro_rules! pica_float {
    ($(#[doc = $doc:literal])* $t:ident($repr:ty), $bits:literal, $mant:literal, $exp:literal, $label:literal) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
        pub struct $t(pub $repr);

        impl $t {
            /// Total width in bits.
            pub const BITS: u32 = $bits;
            /// +0.0.
            pub const ZERO: Self = Self(0);

            /// Wraps raw bits (bits above the format's width are dropped).
            #[inline]
            pub const fn from_raw(raw: u32) -> Self {
                Self((raw & low_mask($bits)) as $repr)
            }

            /// The raw bits.
            #[inline]
            pub const fn raw(self) -> u32 {
                self.0 as u32
            }

            /// The exact f32 value.
            #[inline]
            pub fn to_f32(self) -> f32 {
                pica_float_to_f32(self.raw(), $mant, $exp)
            }

            /// Encodes an f32, rounding to nearest even.
            pub fn from_f32(value: f32) -> Self {
                Self::from_raw(f32_to_pica_float(value, $mant, $exp))
            }
        }

        impl core::fmt::Display for $t {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!($label, " {}"), self.to_f32())
            }
        }
    };
}

pica_float!(
    /// float1.7.16 ("float24"): sign bit 23, exponent bits 16-22 (bias 63), mantissa bits 0-15.
    /// Used by the viewport, depth map, clip plane, fixed attributes and shader data.
    F24(u32), 24, 16, 7, "f24"
);
pica_float!(
    /// float1.7.12 ("float20"): sign bit 19, exponent bits 12-18 (bias 63), mantissa bits 0-11.
    /// Used by the light distance-attenuation bias and scale.
    F20(u32), 20, 12, 7, "f20"
);
pica_float!(
    /// float1.5.10 ("float16", PICA rules: no denormals, unlike IEEE half): sign bit 15,
    /// exponent bits 10-14 (bias 15), mantissa bits 0-9. Used by light positions, gas,
    /// shadow and procedural-texture parameters.
    F16(u16), 16, 10, 5, "f16"
);
pica_float!(
    /// float1.7.23 ("float31"): sign bit 30, exponent bits 23-29 (bias 63), mantissa bits 0-22,
    /// stored in register bits 1-31. Used by VIEWPORT_INVW / VIEWPORT_INVH.
    F31(u32), 31, 23, 7, "f31"
);

/// What a fixed-point field's raw value is divided by.
///
/// The formats are documented as fixed point by [3DB] (e.g. "fixed1.1.11"), which means a
/// divisor of 2^frac; [C] and [P] divide several of them by 2^frac - 1 instead (spot direction
/// /2047, procedural-texture noise amplitude /4095, LUT values /4095). Each field picks one; the
/// difference is below 0.05 %.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FixedDivisor {
    /// raw / 2^frac_bits (what the fixed-point notation means).
    PowerOfTwo,
    /// raw / (2^frac_bits - 1) (the emulators' choice for some fields).
    AllOnes,
}

/// The value of a fixed-point field: `raw` (sign-extended over `1 + int_bits + frac_bits` bits if
/// `signed`, else `int_bits + frac_bits` bits) divided per `divisor`.
pub fn fixed_to_f64(
    raw: u32,
    signed: bool,
    int_bits: u8,
    frac_bits: u8,
    divisor: FixedDivisor,
) -> f64 {
    let width = u32::from(signed) + u32::from(int_bits) + u32::from(frac_bits);
    let v = if signed {
        f64::from(sign_extend(raw, width))
    } else {
        f64::from(raw & low_mask(width))
    };
    let frac = f64::from(frac_bits.min(31));
    let div = match divisor {
        FixedDivisor::PowerOfTwo => frac.exp2(),
        FixedDivisor::AllOnes => (frac.exp2() - 1.0).max(1.0),
    };
    v / div
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f24_known_values() {
        assert_eq!(F24::from_raw(0x3F0000).to_f32(), 1.0);
        assert_eq!(F24::from_raw(0xBF0000).to_f32(), -1.0);
        assert_eq!(F24::from_raw(0x3F8000).to_f32(), 1.5);
        assert_eq!(F24::from_raw(0x460000).to_f32(), 128.0);
        assert_eq!(F24::from_raw(0x000000).to_f32(), 0.0);
        assert!(F24::from_raw(0x800000).to_f32().is_sign_negative());
        assert_eq!(F24::from_raw(0x7F0000).to_f32(), f32::INFINITY);
        assert!(F24::from_raw(0x7F0001).to_f32().is_nan());
        // No denormals: exponent 0, mantissa 1 is 2^-63 * (1 + 2^-16).
        assert_eq!(
            F24::from_raw(0x000001).to_f32(),
            2f32.powi(-63) * (1.0 + 2f32.powi(-16))
        );
    }

    #[test]
    fn f24_round_trip_exhaustive() {
        for raw in 0..(1u32 << 24) {
            let v = F24::from_raw(raw).to_f32();
            assert_eq!(F24::from_f32(v).raw(), raw, "raw {raw:#08x} -> {v}");
        }
    }

    #[test]
    fn f16_and_f20_and_f31_round_trip_exhaustive() {
        for raw in 0..(1u32 << 16) {
            assert_eq!(F16::from_f32(F16::from_raw(raw).to_f32()).raw(), raw);
        }
        for raw in 0..(1u32 << 20) {
            assert_eq!(F20::from_f32(F20::from_raw(raw).to_f32()).raw(), raw);
        }
        for raw in (0..(1u32 << 31)).step_by(4099) {
            assert_eq!(F31::from_f32(F31::from_raw(raw).to_f32()).raw(), raw);
        }
    }

    #[test]
    fn f16_known_values() {
        assert_eq!(F16::from_raw(0x3C00).to_f32(), 1.0);
        assert_eq!(F16::from_raw(0xC000).to_f32(), -2.0);
        assert_eq!(F16::from_raw(0x7C00).to_f32(), f32::INFINITY);
        // Exponent 0, mantissa 0x200: 2^-15 * 1.5 (not an IEEE half denormal).
        assert_eq!(F16::from_raw(0x0200).to_f32(), 1.5 * 2f32.powi(-15));
    }

    #[test]
    fn encoder_rounding_and_limits() {
        // 1 + 2^-17 is halfway between 1.0 and 1 + 2^-16: ties to even -> 1.0.
        assert_eq!(F24::from_f32(1.0 + 2f32.powi(-17)).raw(), 0x3F0000);
        // Slightly above the tie rounds up.
        assert_eq!(
            F24::from_f32(1.0 + 2f32.powi(-17) + 2f32.powi(-22)).raw(),
            0x3F0001
        );
        assert_eq!(F24::from_f32(1e30).raw(), 0x7F0000);
        assert_eq!(F24::from_f32(-1e30).raw(), 0xFF0000);
        assert_eq!(F24::from_f32(1e-30).raw(), 0);
        assert!(F24::from_f32(f32::NAN).to_f32().is_nan());
    }

    #[test]
    fn fixed_point() {
        assert_eq!(
            fixed_to_f64(0x100, true, 4, 8, FixedDivisor::PowerOfTwo),
            1.0
        );
        assert_eq!(
            fixed_to_f64(0x1F80, true, 4, 8, FixedDivisor::PowerOfTwo),
            -0.5
        );
        assert_eq!(fixed_to_f64(2047, true, 1, 11, FixedDivisor::AllOnes), 1.0);
        assert_eq!(
            fixed_to_f64(0x800, false, 0, 12, FixedDivisor::PowerOfTwo),
            0.5
        );
        assert_eq!(sign_extend(0x3FF, 10), -1);
        assert_eq!(sign_extend(0x1FF, 10), 511);
        assert_eq!(sign_extend(5, 0), 0);
        assert_eq!(sign_extend(0xFFFF_FFFF, 32), -1);
    }
}
