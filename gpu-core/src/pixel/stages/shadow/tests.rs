// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Shadow-map rendering tests; expected bytes follow `pica-raster.md` §9.2 by hand.

use super::*;
use pica_cmd::regs::id;

fn cfg(constant: f32, linear: f32) -> ShadowWriteConfig {
    ShadowWriteConfig { constant, linear }
}

#[test]
fn texel_layouts() {
    let t = ShadowTexel {
        depth: 0x12_3456,
        intensity: 0x78,
    };
    assert_eq!(t.to_bytes(), [0x12, 0x34, 0x56, 0x78]);
    assert_eq!(ShadowTexel::from_bytes([0x12, 0x34, 0x56, 0x78]), t);
    // RGBA8 decoding of bytes (A, B, G, R) = (0x12, 0x34, 0x56, 0x78) gives
    // R = 0x78, G = 0x56, B = 0x34, A = 0x12.
    assert_eq!(ShadowTexel::from_rgba([0x78, 0x56, 0x34, 0x12]), t);
}

#[test]
fn zero_intensity_writes_depth_only_when_closer() {
    let c = cfg(1.0, 0.0);
    // Cleared map: depth 0xFFFFFF, intensity 0xFF.
    let mut px = [0xFF; 4];
    // depth 0.5 → trunc(0.5·0xFFFFFF) = 0x7FFFFF < 0xFFFFFF: store depth, keep intensity.
    assert!(c.write(0.5, 0, &mut px));
    assert_eq!(px, [0x7F, 0xFF, 0xFF, 0xFF]);
    // Farther fragment (0.75 → 0xBFFFFF ≥ 0x7FFFFF): nothing.
    assert!(!c.write(0.75, 0, &mut px));
    assert_eq!(px, [0x7F, 0xFF, 0xFF, 0xFF]);
    // Equal depth: not less, nothing.
    assert!(!c.write(0.5, 0, &mut px));
}

#[test]
fn nonzero_intensity_writes_soft_intensity_only() {
    // constant 1, linear 1: s' = s / (1 + d/dref).
    let c = cfg(1.0, 1.0);
    // Stored depth 0x800000 (≈ 0.5), intensity 255; fragment depth 0.25 → d = 0x3FFFFF;
    // d/dref = 4194303/8388608 = 0.49999988 → s' = 200 / 1.49999988 = 133.33 → 133 < 255.
    let mut px = [0x80, 0x00, 0x00, 0xFF];
    assert!(c.write(0.25, 200, &mut px));
    assert_eq!(px, [0x80, 0x00, 0x00, 133]);
    // A second fragment whose s' is not below the stored 133 changes nothing.
    assert!(!c.write(0.25, 250, &mut px)); // 250 / 1.5 = 166.7 ≥ 133
    assert!(c.write(0.25, 150, &mut px)); // 150 / 1.5 ≈ 100 < 133
    // 150 / 1.49999988 = 100.0000079 → 100.
    assert_eq!(px[3], 100);
}

#[test]
fn soft_intensity_saturates_and_handles_zero_denominator() {
    // Denominator 0.5 doubles the intensity: 200 → 400 → 255.
    assert_eq!(cfg(0.5, 0.0).soft_intensity(200, 1, 2), 255);
    // Denominator 0: +inf → 255; negative denominator → 0.
    assert_eq!(cfg(0.0, 0.0).soft_intensity(10, 1, 2), 255);
    assert_eq!(cfg(-1.0, 0.0).soft_intensity(10, 1, 2), 0);
    // NaN (inf/inf) → 255, i.e. no intensity write.
    assert_eq!(cfg(f32::INFINITY, 0.0).soft_intensity(10, 1, 2), 0);
    assert_eq!(cfg(f32::NAN, 0.0).soft_intensity(10, 1, 2), 255);
}

#[test]
fn decode_fragop_shadow() {
    let mut r = Box::new([0u32; 0x300]);
    // constant 1.5 (f16 0x3E00), linear −0.5 (0xB800).
    r[usize::from(id::FRAGOP_SHADOW)] = 0x3E00 | (0xB800 << 16);
    assert_eq!(ShadowWriteConfig::from_regs(&r), cfg(1.5, -0.5));
}
