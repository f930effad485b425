//! PICA200 floating-point storage formats and their conversions to and from host `f32`.
//!
//! Stage: used by every stage that reads shader registers, uniforms, fixed attributes or
//! float-valued GPU registers. Inputs: raw register/upload words. Outputs: `f32` values (and the
//! reverse encodings). Registers read: none directly; callers pass raw fields.
//!
//! # Formats (pica-core.md §4.1)
//!
//! | type  | layout  | sign | exponent | mantissa | bias | used by |
//! |-------|---------|------|----------|----------|------|---------|
//! | [`F24`] | 1.7.16 | 23 | 16–22 | 0–15 | 63 | shader registers, uniforms, attributes, viewport |
//! | [`F20`] | 1.7.12 | 19 | 12–18 | 0–11 | 63 | lighting distance attenuation |
//! | [`F16`] | 1.5.10 | 15 | 10–14 | 0–9  | 15 | lighting positions, procedural textures |
//! | [`F31`] | 1.7.23 | 30 | 23–29 | 0–22 | 63 | VIEWPORT_INVW/INVH (stored in register bits 1–31) |
//!
//! # Decoding (pica-core.md §4.2)
//!
//! // HW: [C]/[P] `Float<M,E>::FromRaw`, restated in pica-core.md §4.2.
//! - all bits except the sign zero → ±0.0;
//! - exponent all ones → ±inf (mantissa 0) or NaN (mantissa kept, shifted into the f32 mantissa);
//! - otherwise a *normal* number `1.m × 2^(e − bias)` — **there are no denormals**: exponent 0
//!   with a non-zero mantissa is `1.m × 2^−bias`, not `0.m × 2^(1−bias)` as in IEEE formats.
//!   Never use an IEEE half type for [`F16`].
//!
//! # Encoding
//!
//! Two rounding modes ([`Rounding`]): round-to-nearest-even (the default, for assemblers and for an
//! f24-accurate arithmetic mode) and truncation toward zero (parity with nihstro's `to_float24`
//! that Citra's trace recorder uses, pica-core.md §4.3). Both handle the special values the
//! nihstro encoder gets wrong:
//! - NaN stays NaN (sign kept; the top mantissa bits are kept, forced non-zero);
//! - ±inf stays ±inf;
//! - finite values too large for the format become ±inf (see [`F24::from_f32`]);
//! - values too small become ±0, or the smallest non-zero magnitude when that is nearer
//!   (round-to-nearest only). Because the encoding "exponent 0, mantissa 0" means zero, the value
//!   `1.0 × 2^−bias` itself is not representable; it rounds to `(1 + 2^−M) × 2^−bias`.
//!
//! # Packed uploads (pica-core.md §2.6)
//!
//! Float uniforms in f24 mode, fixed attributes and immediate-mode vertices carry one vec4 in three
//! 32-bit words, **w first**: [`unpack_f24x4`] / [`pack_f24x4`]. Float uniforms in f32 mode carry
//! four IEEE words, again w first: [`unpack_f32x4`] / [`pack_f32x4`]. All vec4 arrays in this
//! module are in `[x, y, z, w]` order.

/// How an `f32` is rounded when it is encoded into a narrower PICA float format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Rounding {
    /// Round to nearest, ties to even (IEEE default). Used by our assembler and accurate modes.
    #[default]
    NearestEven,
    /// Drop the extra mantissa bits (round toward zero), as nihstro's `to_float24` does
    /// (the encoder Citra's CiTrace recorder uses). Underflow gives ±0.
    Truncate,
}

/// Decodes a PICA float of `m_bits` mantissa and `e_bits` exponent bits (sign above them) to `f32`.
///
/// `raw` may carry garbage above the format's width; it is masked. Exact: every PICA float with
/// at most 23 mantissa and 8 exponent bits is representable as an `f32`.
#[inline]
pub const fn decode_pica_float(raw: u32, m_bits: u32, e_bits: u32) -> f32 {
    let width = 1 + e_bits + m_bits;
    let raw = raw & mask(width);
    let sign = (raw >> (width - 1)) & 1;
    let e = (raw >> m_bits) & mask(e_bits);
    let m = raw & mask(m_bits);
    let bits = if e == 0 && m == 0 {
        sign << 31
    } else if e == mask(e_bits) {
        (sign << 31) | (0xFF << 23) | (m << (23 - m_bits))
    } else {
        // Rebias: f32 bias 127, format bias 2^(E-1) - 1.
        let f32_e = e + 128 - (1 << (e_bits - 1));
        (sign << 31) | (f32_e << 23) | (m << (23 - m_bits))
    };
    f32::from_bits(bits)
}

/// Encodes `value` into a PICA float of `m_bits` mantissa and `e_bits` exponent bits.
///
/// The result occupies the low `1 + e_bits + m_bits` bits. See the module docs for the rules.
pub const fn encode_pica_float(value: f32, m_bits: u32, e_bits: u32, rounding: Rounding) -> u32 {
    let bits = value.to_bits();
    let sign = bits >> 31;
    let sign_out = sign << (e_bits + m_bits);
    let e_all_ones = mask(e_bits);
    let exp32 = (bits >> 23) & 0xFF;
    let mant32 = bits & 0x7F_FFFF;
    let shift = 23 - m_bits;

    if exp32 == 0xFF {
        if mant32 == 0 {
            return sign_out | (e_all_ones << m_bits);
        }
        let mut m = mant32 >> shift;
        if m == 0 {
            // Keep it a NaN: set the top ("quiet") mantissa bit.
            m = 1 << (m_bits - 1);
        }
        return sign_out | (e_all_ones << m_bits) | m;
    }
    if exp32 == 0 {
        // ±0 and f32 subnormals (< 2^-126): far below the smallest PICA float of any format
        // (the largest bias is 63), so they all encode to a signed zero.
        return sign_out;
    }

    let bias = (1i32 << (e_bits - 1)) - 1;
    let e_max = e_all_ones as i32 - 1;
    let e = exp32 as i32 - 127 + bias;
    if e < -1 {
        return sign_out;
    }
    if e == -1 {
        // Value in [2^(-bias-1), 2^-bias). Its representable neighbours are 0 and the smallest
        // non-zero magnitude (1 + 2^-M) * 2^-bias; the midpoint is (1 + 2^-M) * 2^(-bias-1).
        return match rounding {
            Rounding::NearestEven if mant32 > (1 << shift) => sign_out | 1,
            _ => sign_out,
        };
    }

    let mut e = e as u32;
    let mut m = mant32 >> shift;
    if let Rounding::NearestEven = rounding
        && shift > 0
    {
        let rem = mant32 & mask(shift);
        let half = 1 << (shift - 1);
        if rem > half || (rem == half && (m & 1) == 1) {
            m += 1;
            if m == 1 << m_bits {
                m = 0;
                e += 1;
            }
        }
    }
    if e as i32 > e_max {
        // UNVERIFIED: overflow saturates to infinity in both modes (hardware encoders are not
        // documented; nihstro produces garbage here). Alternative: the largest finite value.
        return sign_out | (e_all_ones << m_bits);
    }
    if e == 0 && m == 0 {
        // "exponent 0, mantissa 0" means zero, so 1.0 * 2^-bias is not representable.
        return match rounding {
            Rounding::NearestEven => sign_out | 1,
            Rounding::Truncate => sign_out,
        };
    }
    sign_out | (e << m_bits) | m
}

#[inline]
const fn mask(bits: u32) -> u32 {
    if bits >= 32 {
        u32::MAX
    } else {
        (1 << bits) - 1
    }
}

macro_rules! pica_float {
    ($(#[$doc:meta])* $name:ident, $m:expr, $e:expr, $fmt:literal) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(u32);

        impl $name {
            /// Mantissa width in bits.
            pub const MANTISSA_BITS: u32 = $m;
            /// Exponent width in bits.
            pub const EXPONENT_BITS: u32 = $e;
            /// Total width in bits (sign + exponent + mantissa).
            pub const BITS: u32 = 1 + $e + $m;
            /// Exponent bias.
            pub const BIAS: i32 = (1 << ($e - 1)) - 1;
            /// Mask of the valid raw bits.
            pub const MASK: u32 = mask(Self::BITS);
            /// +0.0.
            pub const ZERO: Self = Self(0);
            /// +1.0.
            pub const ONE: Self = Self((Self::BIAS as u32) << $m);
            /// +infinity.
            pub const INFINITY: Self = Self(mask($e) << $m);
            /// −infinity.
            pub const NEG_INFINITY: Self = Self((1 << ($e + $m)) | (mask($e) << $m));
            /// A quiet NaN (top mantissa bit set).
            pub const NAN: Self = Self((mask($e) << $m) | (1 << ($m - 1)));

            #[doc = concat!("Wraps raw ", $fmt, " bits; bits above the format's width are dropped.")]
            #[inline]
            pub const fn from_bits(raw: u32) -> Self {
                Self(raw & Self::MASK)
            }

            #[doc = concat!("The raw ", $fmt, " bits (only the low `BITS` bits can be set).")]
            #[inline]
            pub const fn to_bits(self) -> u32 {
                self.0
            }

            /// Exact conversion to `f32` (pica-core.md §4.2; no denormals).
            #[inline]
            pub const fn to_f32(self) -> f32 {
                decode_pica_float(self.0, $m, $e)
            }

            /// Encodes with round-to-nearest-even; overflow → ±inf, NaN stays NaN.
            #[inline]
            pub const fn from_f32(value: f32) -> Self {
                Self(encode_pica_float(value, $m, $e, Rounding::NearestEven))
            }

            /// Encodes by truncating the mantissa (nihstro/Citra parity); overflow → ±inf.
            #[inline]
            pub const fn from_f32_truncate(value: f32) -> Self {
                Self(encode_pica_float(value, $m, $e, Rounding::Truncate))
            }

            /// Encodes with the given rounding mode.
            #[inline]
            pub const fn from_f32_with(value: f32, rounding: Rounding) -> Self {
                Self(encode_pica_float(value, $m, $e, rounding))
            }

            /// True for NaN encodings (exponent all ones, mantissa non-zero).
            #[inline]
            pub const fn is_nan(self) -> bool {
                (self.0 >> $m) & mask($e) == mask($e) && self.0 & mask($m) != 0
            }

            /// True for ±infinity.
            #[inline]
            pub const fn is_infinite(self) -> bool {
                self.0 & !(1 << ($e + $m)) == Self::INFINITY.0
            }

            /// True for ±0.
            #[inline]
            pub const fn is_zero(self) -> bool {
                self.0 & !(1 << ($e + $m)) == 0
            }

            /// The sign bit.
            #[inline]
            pub const fn is_sign_negative(self) -> bool {
                (self.0 >> ($e + $m)) & 1 == 1
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                write!(f, concat!(stringify!($name), "({:#x} = {:?})"), self.0, self.to_f32())
            }
        }

        impl From<$name> for f32 {
            #[inline]
            fn from(v: $name) -> f32 {
                v.to_f32()
            }
        }
    };
}

pica_float!(
    /// PICA float24 (1.7.16, bias 63): the shader unit's number format. Raw bits in the low 24 bits.
    F24, 16, 7, "float24 (1.7.16)"
);
pica_float!(
    /// PICA float16 (1.5.10, bias 15, **no denormals** — not IEEE half). Raw bits in the low 16 bits.
    F16, 10, 5, "float16 (1.5.10)"
);
pica_float!(
    /// PICA float20 (1.7.12, bias 63), used by lighting attenuation registers.
    F20, 12, 7, "float20 (1.7.12)"
);
pica_float!(
    /// PICA float31 (1.7.23, bias 63). The raw value here is the 31-bit field; in the GPU
    /// registers (VIEWPORT_INVW/INVH) it is stored in bits 1–31: use [`F31::from_register`] /
    /// [`F31::to_register`].
    F31, 23, 7, "float31 (1.7.23)"
);

impl F31 {
    /// Extracts the float31 stored in bits 1–31 of a register word (bit 0 is ignored).
    #[inline]
    pub const fn from_register(word: u32) -> Self {
        Self(word >> 1)
    }

    /// The register word holding this value in bits 1–31 (bit 0 clear).
    #[inline]
    pub const fn to_register(self) -> u32 {
        self.0 << 1
    }
}

/// Rounds an `f32` to the nearest value representable in float24 (round-to-nearest-even).
///
/// Useful for an f24-accurate arithmetic mode: `round_to_f24(a * b)`.
#[inline]
pub const fn round_to_f24(value: f32) -> f32 {
    F24::from_f32(value).to_f32()
}

/// Unpacks one f24 vec4 from the 3-word upload packing (w first, pica-core.md §2.6).
///
/// `words[0]` = `W[23:0] << 8 | Z[23:16]`, `words[1]` = `Z[15:0] << 16 | Y[23:8]`,
/// `words[2]` = `Y[7:0] << 24 | X[23:0]`. Returns `[x, y, z, w]`.
#[inline]
pub const fn unpack_f24x4(words: [u32; 3]) -> [F24; 4] {
    let [w0, w1, w2] = words;
    let w = w0 >> 8;
    let z = ((w0 & 0xFF) << 16) | (w1 >> 16);
    let y = ((w1 & 0xFFFF) << 8) | (w2 >> 24);
    let x = w2 & 0xFF_FFFF;
    [
        F24::from_bits(x),
        F24::from_bits(y),
        F24::from_bits(z),
        F24::from_bits(w),
    ]
}

/// Packs an `[x, y, z, w]` f24 vec4 into the 3-word upload packing (inverse of [`unpack_f24x4`]).
#[inline]
pub const fn pack_f24x4(v: [F24; 4]) -> [u32; 3] {
    let [x, y, z, w] = [
        v[0].to_bits(),
        v[1].to_bits(),
        v[2].to_bits(),
        v[3].to_bits(),
    ];
    [
        (w << 8) | (z >> 16),
        ((z & 0xFFFF) << 16) | (y >> 8),
        ((y & 0xFF) << 24) | x,
    ]
}

/// Unpacks a 3-word f24 vec4 straight to `[x, y, z, w]` `f32` values.
#[inline]
pub const fn unpack_f24x4_f32(words: [u32; 3]) -> [f32; 4] {
    let v = unpack_f24x4(words);
    [v[0].to_f32(), v[1].to_f32(), v[2].to_f32(), v[3].to_f32()]
}

/// Encodes `[x, y, z, w]` `f32` values (round-to-nearest-even) into the 3-word f24 packing.
#[inline]
pub const fn pack_f24x4_f32(v: [f32; 4]) -> [u32; 3] {
    pack_f24x4([
        F24::from_f32(v[0]),
        F24::from_f32(v[1]),
        F24::from_f32(v[2]),
        F24::from_f32(v[3]),
    ])
}

/// Unpacks a float uniform uploaded in f32 mode (FLOATUNIFORM_INDEX bit 31 = 1): the four IEEE
/// words arrive w, z, y, x. Returns `[x, y, z, w]`; values are kept unrounded ([C]/[P] behaviour).
#[inline]
pub const fn unpack_f32x4(words: [u32; 4]) -> [f32; 4] {
    [
        f32::from_bits(words[3]),
        f32::from_bits(words[2]),
        f32::from_bits(words[1]),
        f32::from_bits(words[0]),
    ]
}

/// Packs `[x, y, z, w]` into the f32-mode upload order (w, z, y, x).
#[inline]
pub const fn pack_f32x4(v: [f32; 4]) -> [u32; 4] {
    [
        v[3].to_bits(),
        v[2].to_bits(),
        v[1].to_bits(),
        v[0].to_bits(),
    ]
}

#[cfg(test)]
mod tests;
