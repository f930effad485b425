// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Table-driven tests of the PICA float formats (pica-core.md §4) and the upload packings (§2.6).

use super::*;

/// (raw f24, expected f32 bits) — decoding is exact, so compare bit patterns.
const F24_DECODE: &[(u32, u32)] = &[
    (0x00_0000, 0x0000_0000), // +0
    (0x80_0000, 0x8000_0000), // -0
    (0x3F_0000, 0x3F80_0000), // 1.0: e = 63
    (0xBF_0000, 0xBF80_0000), // -1.0
    (0x40_0000, 0x4000_0000), // 2.0
    (0x3E_0000, 0x3F00_0000), // 0.5
    (0x3F_8000, 0x3FC0_0000), // 1.5
    (0x7F_0000, 0x7F80_0000), // +inf
    (0xFF_0000, 0xFF80_0000), // -inf
    (0x7F_0001, 0x7F80_0080), // NaN, mantissa kept (<< 7)
    (0x7F_8000, 0x7FC0_0000), // quiet NaN
    (0x00_0001, 0x2000_0080), // exponent 0, mantissa 1: normal (1 + 2^-16) * 2^-63, no denormal
    (0x00_FFFF, 0x207F_FF80), // largest "would-be denormal"
    (0x01_0000, 0x2080_0000), // 2^-62
    (0x7E_FFFF, 0x5F7F_FF80), // largest finite: (2 - 2^-16) * 2^63
];

#[test]
fn f24_decode_table() {
    for &(raw, expected) in F24_DECODE {
        let got = F24::from_bits(raw).to_f32().to_bits();
        assert_eq!(got, expected, "decode f24 {raw:#08x}");
    }
}

#[test]
fn f24_from_bits_masks_to_24_bits() {
    assert_eq!(F24::from_bits(0xFF3F_0000).to_bits(), 0x3F_0000);
    assert_eq!(F24::from_bits(0xFF3F_0000).to_f32(), 1.0);
}

#[test]
fn f16_decode_table() {
    // (raw f16, expected f32)
    let cases: &[(u32, f32)] = &[
        (0x0000, 0.0),
        (0x3C00, 1.0),
        (0xBC00, -1.0),
        (0x4000, 2.0),
        (0x3800, 0.5),
        (0x7C00, f32::INFINITY),
        (0xFC00, f32::NEG_INFINITY),
        // exponent 0, mantissa 1: (1 + 2^-10) * 2^-15 — an IEEE half would give 2^-24 instead.
        (0x0001, (1.0 + 1.0 / 1024.0) / 32768.0),
        (0x7BFF, 65504.0),
    ];
    for &(raw, expected) in cases {
        assert_eq!(
            F16::from_bits(raw).to_f32(),
            expected,
            "decode f16 {raw:#06x}"
        );
    }
    assert!(F16::from_bits(0x7C01).to_f32().is_nan());
    assert!(F16::from_bits(0x8000).to_f32().is_sign_negative());
}

#[test]
fn f20_and_f31_decode() {
    assert_eq!(F20::from_bits(0x3_F000).to_f32(), 1.0);
    assert_eq!(F20::from_bits(0x3_F800).to_f32(), 1.5);
    assert_eq!(F20::from_bits(0x8_0000 | 0x4_0000).to_f32(), -2.0);
    assert_eq!(F20::from_bits(0x7_F000).to_f32(), f32::INFINITY);
    // float31: 1.7.23, register bits 1-31.
    let one = F31::from_bits(63 << 23);
    assert_eq!(one.to_f32(), 1.0);
    assert_eq!(one.to_register(), (63 << 23) << 1);
    assert_eq!(F31::from_register((63 << 23) << 1 | 1), one);
    // 1/240 (a typical VIEWPORT_INVW): exact in 23 mantissa bits like f32.
    let inv = 1.0f32 / 240.0;
    assert_eq!(F31::from_f32(inv).to_f32(), inv);
}

/// (f32 input, RNE f24, truncated f24)
const F24_ENCODE: &[(f32, u32, u32)] = &[
    (0.0, 0x00_0000, 0x00_0000),
    (-0.0, 0x80_0000, 0x80_0000),
    (1.0, 0x3F_0000, 0x3F_0000),
    (-2.5, 0xC0_4000, 0xC0_4000),
    (f32::INFINITY, 0x7F_0000, 0x7F_0000),
    (f32::NEG_INFINITY, 0xFF_0000, 0xFF_0000),
    // 1 + 2^-17: exactly half an f24 ulp above 1.0 -> ties to even (1.0); truncation also 1.0.
    (1.0 + 1.0 / 131072.0, 0x3F_0000, 0x3F_0000),
    // 1 + 3 * 2^-17: halfway between ulp 1 and 2 -> even (2).
    (1.0 + 3.0 / 131072.0, 0x3F_0002, 0x3F_0001),
    // 1 + 2^-17 + 2^-23: above the half -> rounds up.
    (1.0 + 1.0 / 131072.0 + 1.0 / 8388608.0, 0x3F_0001, 0x3F_0000),
    // Largest f32 below 2.0 rounds up into the next binade; truncation stays below.
    (1.999_999_9, 0x40_0000, 0x3F_FFFF),
    // 0.1 = 0x3DCCCCCD: mantissa 0x4CCCCD, dropped bits 0x4D > 0x40 -> up.
    (0.1, 0x3B_999A, 0x3B_9999),
    // Overflow: 2^64 and f32::MAX -> inf. Largest finite f24 = (2 - 2^-16) * 2^63.
    (f32::from_bits(0x5F80_0000), 0x7F_0000, 0x7F_0000),
    (f32::MAX, 0x7F_0000, 0x7F_0000),
    (-f32::MAX, 0xFF_0000, 0xFF_0000),
    // Largest finite f24 stays finite.
    (f32::from_bits(0x5F7F_FF80), 0x7E_FFFF, 0x7E_FFFF),
    // Largest finite + half an ulp (ties to even, 0xFFFF is odd) -> inf; truncation stays finite.
    (f32::from_bits(0x5F7F_FFC0), 0x7F_0000, 0x7E_FFFF),
    // Underflow: 2^-63 exactly is not representable (it is the "zero" encoding); the nearest
    // value is (1 + 2^-16) * 2^-63 -> raw 0x000001. Truncation gives zero.
    (f32::from_bits(0x2000_0000), 0x00_0001, 0x00_0000),
    // 2^-64: exactly below the midpoint (1+2^-16)*2^-64 -> zero.
    (f32::from_bits(0x1F80_0000), 0x00_0000, 0x00_0000),
    // 1.5 * 2^-64: above the midpoint -> smallest non-zero.
    (f32::from_bits(0x1FC0_0000), 0x00_0001, 0x00_0000),
    (f32::from_bits(0x9FC0_0000), 0x80_0001, 0x80_0000),
    // 2^-65: far below -> zero (sign kept).
    (f32::from_bits(0x9F00_0000), 0x80_0000, 0x80_0000),
    // f32 subnormal -> zero.
    (1.0e-40, 0x00_0000, 0x00_0000),
    // 2^-62 is exactly representable.
    (f32::from_bits(0x2080_0000), 0x01_0000, 0x01_0000),
];

#[test]
fn f24_encode_table() {
    for &(v, rne, trunc) in F24_ENCODE {
        assert_eq!(
            F24::from_f32(v).to_bits(),
            rne,
            "RNE encode {v:e} ({:#010x})",
            v.to_bits()
        );
        assert_eq!(
            F24::from_f32_truncate(v).to_bits(),
            trunc,
            "truncating encode {v:e} ({:#010x})",
            v.to_bits()
        );
    }
}

#[test]
fn f24_encode_nan() {
    for rounding in [Rounding::NearestEven, Rounding::Truncate] {
        let q = F24::from_f32_with(f32::NAN, rounding);
        assert!(q.is_nan());
        assert!(q.to_f32().is_nan());
        // A NaN whose payload lives only in the low 7 bits must stay NaN.
        let low = F24::from_f32_with(f32::from_bits(0x7F80_0001), rounding);
        assert!(low.is_nan(), "{low:?}");
        let neg = F24::from_f32_with(f32::from_bits(0xFFC0_0000), rounding);
        assert!(neg.is_nan() && neg.is_sign_negative());
    }
}

#[test]
fn f16_encode_table() {
    let cases: &[(f32, u32, u32)] = &[
        (1.0, 0x3C00, 0x3C00),
        (-2.0, 0xC000, 0xC000),
        (65504.0, 0x7BFF, 0x7BFF),
        (65520.0, 0x7C00, 0x7BFF), // midpoint to "65536": ties to even (odd 0x3FF) -> inf
        (1e6, 0x7C00, 0x7C00),
        (f32::INFINITY, 0x7C00, 0x7C00),
        (1.0 / 3.0, 0x3555, 0x3555),
        (0.1, 0x2E66, 0x2E66),
        // 2^-15 -> (1 + 2^-10) * 2^-15, raw 0x0001 (no denormals)
        (1.0 / 32768.0, 0x0001, 0x0000),
        (1.0e-9, 0x0000, 0x0000),
    ];
    for &(v, rne, trunc) in cases {
        assert_eq!(F16::from_f32(v).to_bits(), rne, "RNE f16 {v:e}");
        assert_eq!(
            F16::from_f32_truncate(v).to_bits(),
            trunc,
            "trunc f16 {v:e}"
        );
    }
}

#[test]
fn round_trip_every_f24() {
    // Every non-NaN f24 survives decode -> encode in both modes (decode is exact).
    for raw in 0..=0xFF_FFFFu32 {
        let f = F24::from_bits(raw);
        if f.is_nan() {
            assert!(F24::from_f32(f.to_f32()).is_nan());
            continue;
        }
        assert_eq!(F24::from_f32(f.to_f32()), f, "{raw:#08x}");
        assert_eq!(F24::from_f32_truncate(f.to_f32()), f, "{raw:#08x}");
    }
}

#[test]
fn round_trip_every_f16_and_f20() {
    for raw in 0..=0xFFFFu32 {
        let f = F16::from_bits(raw);
        if !f.is_nan() {
            assert_eq!(F16::from_f32(f.to_f32()), f, "{raw:#06x}");
        }
    }
    for raw in (0..=0xF_FFFFu32).step_by(7) {
        let f = F20::from_bits(raw);
        if !f.is_nan() {
            assert_eq!(F20::from_f32(f.to_f32()), f, "{raw:#07x}");
        }
    }
}

#[test]
fn rne_is_nearest() {
    // For a sample of f32 values, the RNE result is at least as close as both neighbours.
    let mut x = 0x1234_5678u32;
    for _ in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let v = f32::from_bits((x & 0x8FFF_FFFF) | 0x3000_0000); // moderate exponents
        let enc = F24::from_f32(v);
        let d = (enc.to_f32() as f64 - v as f64).abs();
        let up = F24::from_bits(enc.to_bits() + 1).to_f32() as f64;
        let down = F24::from_bits(enc.to_bits().wrapping_sub(1)).to_f32() as f64;
        assert!(d <= (up - v as f64).abs(), "{v:e}");
        assert!(d <= (down - v as f64).abs(), "{v:e}");
        let t = F24::from_f32_truncate(v).to_f32();
        assert!(t.abs() <= v.abs(), "truncation moves toward zero: {v:e}");
    }
}

#[test]
fn packed_f24_vec4() {
    let v = [
        F24::ONE,
        F24::from_f32(2.0),
        F24::from_f32(-3.0),
        F24::from_f32(0.5),
    ];
    let words = pack_f24x4(v);
    // w = 0.5 = 0x3E0000 goes first.
    assert_eq!(words[0] >> 8, 0x3E_0000);
    assert_eq!(words[2] & 0xFF_FFFF, 0x3F_0000);
    assert_eq!(unpack_f24x4(words), v);
    assert_eq!(unpack_f24x4_f32(words), [1.0, 2.0, -3.0, 0.5]);
    assert_eq!(pack_f24x4_f32([1.0, 2.0, -3.0, 0.5]), words);
    // Explicit layout from pica-core.md §2.6 with distinct byte patterns.
    let words = [0xAABB_CCDD, 0xEEFF_1122, 0x3344_5566];
    let [x, y, z, w] = unpack_f24x4(words);
    assert_eq!(w.to_bits(), 0xAA_BBCC);
    assert_eq!(z.to_bits(), 0xDD_EEFF);
    assert_eq!(y.to_bits(), 0x11_2233);
    assert_eq!(x.to_bits(), 0x44_5566);
    assert_eq!(pack_f24x4([x, y, z, w]), words);
}

#[test]
fn f32_uniform_order() {
    let words = [0x4080_0000, 0x4040_0000, 0x4000_0000, 0x3F80_0000]; // w, z, y, x
    assert_eq!(unpack_f32x4(words), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(pack_f32x4([1.0, 2.0, 3.0, 4.0]), words);
}

#[test]
fn predicates_and_consts() {
    assert_eq!(F24::ONE.to_f32(), 1.0);
    assert_eq!(F16::ONE.to_f32(), 1.0);
    assert_eq!(F20::ONE.to_f32(), 1.0);
    assert_eq!(F31::ONE.to_f32(), 1.0);
    assert!(F24::NAN.is_nan() && !F24::INFINITY.is_nan());
    assert!(F24::NEG_INFINITY.is_infinite() && F24::NEG_INFINITY.is_sign_negative());
    assert!(F24::from_bits(0x80_0000).is_zero());
    assert!(!F24::from_bits(0x00_0001).is_zero());
    assert_eq!(round_to_f24(0.1), F24::from_bits(0x3B_999A).to_f32());
}
