// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Fragment lighting tests. Expected colours are computed by hand from `pica-raster.md` §7
//! (each test shows the arithmetic); LUTs are mostly the "ramp" `value_raw[i] = 16·i`,
//! `diff = 0`, so an input x reads `16·floor(256x)/4095`.

use super::*;
use crate::pixel::stages::{self, FixedFunctionStages};
use pica_cmd::regs::id;
use pica_cmd::regs::lighting::{light, light_offset};
use pica_cmd::regs::{F16, F20};

const IDENTITY: [f32; 4] = [0.0, 0.0, 0.0, 1.0];
const NO_TEX: [Rgba; 4] = [[0; 4]; 4];

/// LUT-input selector codes (LIGHTING_LUTINPUT_SELECT).
const NH: u32 = 0;
const VH: u32 = 1;
const NV: u32 = 2;
const LN: u32 = 3;
const SP: u32 = 4;
const CP: u32 = 5;

/// A light colour word: 8-bit channels at bits 20 (R), 10 (G), 0 (B).
fn rgb(r: u32, g: u32, b: u32) -> u32 {
    (r << 20) | (g << 10) | b
}

/// A LUT entry word: value bits 0-11, |diff| bits 12-22, sign bit 23.
fn entry(value: u32, diff: i32) -> u32 {
    let sign = u32::from(diff < 0) << 23;
    value | (diff.unsigned_abs() << 12) | sign
}

fn f16(x: f32) -> u32 {
    F16::from_f32(x).raw()
}

/// `trunc(x·255)` of the ramp LUT at entry `i`.
fn ramp_byte(i: u32) -> u8 {
    ((16 * i) as f32 / 4095.0 * 255.0) as u8
}

struct Setup {
    regs: Box<[u32; 0x300]>,
    luts: Box<[[u32; 256]; 24]>,
}

impl Setup {
    /// One directional light (id 0) at direction (0, 0, 1), every LUT disabled, configuration
    /// "7" (raw 8, all LUTs available), all inputs N·V in abs mode, scale ×1.
    fn new() -> Self {
        let mut s = Setup {
            regs: Box::new([0; 0x300]),
            luts: Box::new([[0; 256]; 24]),
        };
        s.env(8);
        s.enable(&[]);
        s.set(id::LIGHTING_NUM_LIGHTS, 0);
        s.set(id::LIGHTING_LIGHT_PERMUTATION, 0x7654_3210);
        s.set(id::LIGHTING_LUTINPUT_SELECT, 0x0222_2222);
        s.light(0, light_offset::CONFIG, 1);
        s.position(0, [0.0, 0.0, 1.0]);
        s
    }

    fn set(&mut self, reg: u16, v: u32) {
        self.regs[usize::from(reg)] = v;
    }

    fn light(&mut self, n: usize, off: u16, v: u32) {
        self.set(light(n) + off, v);
    }

    fn position(&mut self, n: usize, p: [f32; 3]) {
        self.light(n, light_offset::XY, f16(p[0]) | (f16(p[1]) << 16));
        self.light(n, light_offset::Z, f16(p[2]));
    }

    /// CONFIG0 with environment configuration `env` and the fixed bits; other bits cleared.
    fn env(&mut self, env: u32) {
        self.set(id::LIGHTING_CONFIG0, (env << 4) | (4 << 8) | (1 << 31));
    }

    fn config0_bits(&mut self, bits: u32) {
        self.regs[usize::from(id::LIGHTING_CONFIG0)] |= bits;
    }

    /// CONFIG1 enabling exactly `slots` (SP and DA for every light); shadows enabled.
    fn enable(&mut self, slots: &[LutSlot]) {
        let mut w = 1 << 18;
        let off = |s: LutSlot| !slots.contains(&s);
        if off(LutSlot::Sp) {
            w |= 0xFF << 8;
        }
        if off(LutSlot::D0) {
            w |= 1 << 16;
        }
        if off(LutSlot::D1) {
            w |= 1 << 17;
        }
        if off(LutSlot::Fr) {
            w |= 1 << 19;
        }
        if off(LutSlot::Rb) {
            w |= 1 << 20;
        }
        if off(LutSlot::Rg) {
            w |= 1 << 21;
        }
        if off(LutSlot::Rr) {
            w |= 1 << 22;
        }
        if off(LutSlot::Da) {
            w |= 0xFF << 24;
        }
        self.set(id::LIGHTING_CONFIG1, w);
    }

    /// Input selector `sel` for `slot` (all slots start at N·V).
    fn input(&mut self, slot: LutSlot, sel: u32) {
        let k = slot.input_index().unwrap() as u32 * 4;
        let r = &mut self.regs[usize::from(id::LIGHTING_LUTINPUT_SELECT)];
        *r = (*r & !(7 << k)) | (sel << k);
    }

    fn signed(&mut self, slot: LutSlot) {
        let k = slot.input_index().unwrap() as u32 * 4 + 1;
        self.regs[usize::from(id::LIGHTING_LUTINPUT_ABS)] |= 1 << k;
    }

    fn scale(&mut self, slot: LutSlot, code: u32) {
        let k = slot.input_index().unwrap() as u32 * 4;
        self.regs[usize::from(id::LIGHTING_LUTINPUT_SCALE)] |= code << k;
    }

    fn ramp(&mut self, lut: usize) {
        for i in 0..256 {
            self.luts[lut][i] = entry(16 * i as u32, 0);
        }
    }

    fn cfg(&self) -> LightingConfig {
        LightingConfig::from_regs(&self.regs, &self.luts)
    }

    fn shade(&self, view: [f32; 3]) -> [Rgba; 2] {
        self.cfg().shade(IDENTITY, view, &NO_TEX)
    }
}

// ---- LUT entries and sampling --------------------------------------------------------------

#[test]
fn lut_entry_is_sign_magnitude() {
    let lut = LightingLut::from_words(&[entry(2048, -1024); 256]);
    assert_eq!(lut.entries[0][0], 2048.0 / 4095.0);
    assert_eq!(lut.entries[0][1], -1024.0 / 2047.0);
    let lut = LightingLut::from_words(&[entry(4095, 2047); 256]);
    assert_eq!(lut.entries[7], [1.0, 1.0]);
}

#[test]
fn lut_sampling_at_and_between_entries() {
    let mut words = [0u32; 256];
    for (i, w) in words.iter_mut().enumerate() {
        *w = entry(16 * i as u32, 8);
    }
    let lut = LightingLut::from_words(&words);
    let d = 8.0 / 2047.0;
    // x = 0.5: entry 128 exactly (δ = 0).
    assert_eq!(lut.sample_unsigned(0.5), 2048.0 / 4095.0);
    // Half way to entry 129: value[128] + 0.5·diff[128].
    let x = 0.5 + 0.5 / 256.0;
    assert!((lut.sample_unsigned(x) - (2048.0 / 4095.0 + 0.5 * d)).abs() < 1e-6);
    // x = 1.0: entry 255 with δ = 1 (the last difference extrapolates).
    assert!((lut.sample_unsigned(1.0) - (4080.0 / 4095.0 + d)).abs() < 1e-6);
    // NaN reads entry 0.
    assert_eq!(lut.sample_unsigned(f32::NAN), 0.0);
}

#[test]
fn lut_sampling_signed_two_complement_index() {
    let mut words = [0u32; 256];
    for (i, w) in words.iter_mut().enumerate() {
        *w = entry(16 * i as u32, 0);
    }
    words[153] = entry(16 * 153, 1023);
    let lut = LightingLut::from_words(&words);
    // 0.5·128 = 64 → entry 64.
    assert_eq!(lut.sample_signed(0.5), 1024.0 / 4095.0);
    // −0.5·128 = −64 → byte 0xC0 = entry 192.
    assert_eq!(lut.sample_signed(-0.5), 3072.0 / 4095.0);
    // −1 → −128 → entry 128.
    assert_eq!(lut.sample_signed(-1.0), 2048.0 / 4095.0);
    // −0.8·128 = −102.4: floor −103 → entry 153, δ = 0.6.
    let want = 2448.0 / 4095.0 + 0.6 * 1023.0 / 2047.0;
    assert!((lut.sample_signed(-0.8) - want).abs() < 1e-5);
    // +1 clamps to 127 with δ = 1.
    assert_eq!(lut.sample_signed(1.0), 2032.0 / 4095.0);
}

#[test]
fn availability_table_matches_section_7_5() {
    use LightEnvConfig as C;
    use LutSlot as S;
    let all = [S::D0, S::D1, S::Sp, S::Fr, S::Rb, S::Rg, S::Rr, S::Da];
    let table: [(C, &[S]); 8] = [
        (C::Config0, &[S::D0, S::Rr, S::Sp, S::Da]),
        (C::Config1, &[S::Fr, S::Rr, S::Sp, S::Da]),
        (C::Config2, &[S::D0, S::D1, S::Rr, S::Da]),
        (C::Config3, &[S::D0, S::D1, S::Fr, S::Da]),
        (
            C::Config4,
            &[S::D0, S::D1, S::Sp, S::Rb, S::Rg, S::Rr, S::Da],
        ),
        (
            C::Config5,
            &[S::D0, S::Sp, S::Fr, S::Rb, S::Rg, S::Rr, S::Da],
        ),
        (C::Config6, &[S::D0, S::D1, S::Sp, S::Fr, S::Rr, S::Da]),
        (C::Config7, &all),
    ];
    for (c, avail) in table {
        for s in all {
            assert_eq!(lut_available(c, s), avail.contains(&s), "{c:?} {s:?}");
        }
    }
    // Undocumented values follow UNKNOWN_ENV_CONFIG (Citra: all but RG/RB).
    assert!(lut_available(C::Unknown(7), S::D1));
    assert!(!lut_available(C::Unknown(7), S::Rg));
}

// ---- Input selectors ------------------------------------------------------------------------

/// Geometry for the selector tests: N = (0, 0, 1), T = (1, 0, 0) (identity quaternion),
/// view direction Vn = (0.6, 0, 0.8), directional light L = (0, 0.28, 0.96), spot register
/// (0, 0, 0.5). Then H = (0.6, 0.28, 1.76), |H| = 1.880426, Ĥ = (0.319077, 0.148904, 0.935958):
///
/// | input | value | ×256 | entry | ramp·255 |
/// |---|---|---|---|---|
/// | N·H | 0.935958 | 239.6 | 239 | 238 |
/// | V·H | 0.6·0.319077 + 0.8·0.935958 = 0.940212 | 240.7 | 240 | 239 |
/// | N·V | 0.8 | 204.8 | 204 | 203 |
/// | L·N | 0.96 | 245.8 | 245 | 244 |
/// | SP = L·spot | 0.48 | 122.9 | 122 | 121 |
/// | CP = (Ĥ − N(N·Ĥ))·T | 0.319077 | 81.7 | 81 | 80 |
fn selector_setup(sel: u32) -> Setup {
    let mut s = Setup::new();
    s.enable(&[LutSlot::D0]);
    s.ramp(0);
    s.input(LutSlot::D0, sel);
    s.light(0, light_offset::SPECULAR0, rgb(255, 255, 255));
    s.position(0, [0.0, 0.28, 0.96]);
    s.light(0, light_offset::SPOTDIR_Z, 1024);
    s
}

#[test]
fn each_input_selector() {
    let view = [3.0, 0.0, 4.0]; // |V| = 5, Vn = (0.6, 0, 0.8)
    for (sel, entry_index) in [
        (NH, 239),
        (VH, 240),
        (NV, 204),
        (LN, 245),
        (SP, 122),
        (CP, 81),
    ] {
        let s = selector_setup(sel);
        let [primary, secondary] = s.shade(view);
        let b = ramp_byte(entry_index);
        assert_eq!(secondary, [b, b, b, 255], "selector {sel}");
        // No diffuse, ambient or global ambient: the primary colour is black, alpha 1.
        assert_eq!(primary, [0, 0, 0, 255]);
    }
    assert_eq!(
        [238, 239, 203, 244, 121, 80],
        [239, 240, 204, 245, 122, 81].map(ramp_byte)
    );
}

#[test]
fn cos_phi_reads_zero_outside_configuration_7() {
    let mut s = selector_setup(CP);
    s.env(6);
    // Entry 0 of the ramp is 0.
    assert_eq!(s.shade([3.0, 0.0, 4.0])[1], [0, 0, 0, 255]);
}

#[test]
fn abs_and_signed_modes_with_negative_input() {
    // N·V = −0.8 (view below the surface).
    let view = [3.0, 0.0, -4.0];
    let mut s = selector_setup(NV);
    // One-sided light, abs mode: Citra's rule max(−0.8, 0) = 0 → entry 0 → 0.
    let one_sided = match ABS_INPUT_RULE {
        AbsInputRule::TwoSidedSelects => 0,
        AbsInputRule::AlwaysAbs => 203,
    };
    assert_eq!(s.shade(view)[1], [one_sided, one_sided, one_sided, 255]);
    // Two-sided light (LIGHTn_CONFIG bit 1): |−0.8| → entry 204 → 203 (both abs rules).
    s.light(0, light_offset::CONFIG, 0b11);
    assert_eq!(s.shade(view)[1], [203, 203, 203, 255]);
    // Signed mode: −0.8·128 = −102.4 → entry 153 (0x99), δ = 0.6.
    s.light(0, light_offset::CONFIG, 1);
    s.signed(LutSlot::D0);
    s.luts[0][153] = entry(16 * 153, 1023);
    // 2448/4095 + 0.6·1023/2047 = 0.597802 + 0.299853 = 0.897655 → ×255 = 228.9.
    assert_eq!(s.shade(view)[1], [228, 228, 228, 255]);
}

#[test]
fn output_scales() {
    let view = [3.0, 0.0, 4.0];
    let mut s = selector_setup(NV);
    // ×0.5 (code 7): 0.797070·0.5·255 = 101.6.
    s.scale(LutSlot::D0, 7);
    assert_eq!(s.shade(view)[1][0], 101);
    // ×2 (code 1): 1.594 → clamped to 1 → 255.
    let mut s = selector_setup(NV);
    s.scale(LutSlot::D0, 1);
    assert_eq!(s.shade(view)[1][0], 255);
    // Undocumented code 4: output 0, reported.
    let mut s = selector_setup(NV);
    s.scale(LutSlot::D0, 4);
    assert_eq!(s.shade(view)[1][0], 0);
    assert!(
        s.cfg()
            .issues
            .contains(&LightingIssue::UnknownLutScale(LutSlot::D0, 4))
    );
}

// ---- Diffuse, spot, distance attenuation -----------------------------------------------------

#[test]
fn diffuse_ambient_and_global_ambient() {
    let mut s = Setup::new();
    // L = (0, 0.6, 0.8): N·L = 0.8.
    s.position(0, [0.0, 0.6, 0.8]);
    s.light(0, light_offset::DIFFUSE, rgb(200, 100, 0));
    s.light(0, light_offset::AMBIENT, rgb(10, 20, 30));
    s.set(id::LIGHTING_AMBIENT, rgb(5, 0, 0));
    // R: (200/255·0.8 + 10/255 + 5/255)·255 = 160 + 15 = 175 (f32: 174.99998 or 175.0).
    // G: 100·0.8 + 20 = 100; B: 30.
    let p = s.shade([0.0, 0.0, 1.0])[0];
    assert!(p[0] == 174 || p[0] == 175, "{p:?}");
    assert!(p[1] == 99 || p[1] == 100, "{p:?}");
    assert!(p[2] == 29 || p[2] == 30, "{p:?}");
    assert_eq!(p[3], 255);
    // Light from behind: one-sided N·L = max(−0.8, 0) = 0 → ambient only.
    s.position(0, [0.0, 0.6, -0.8]);
    let p = s.shade([0.0, 0.0, 1.0])[0];
    assert!((19..=20).contains(&p[1]), "{p:?}"); // 20/255·255 = 20 (±1 for f32)
    // Two-sided: |N·L| = 0.8 again.
    s.light(0, light_offset::CONFIG, 0b11);
    let p2 = s.shade([0.0, 0.0, 1.0])[0];
    assert!(p2[1] >= 99);
}

#[test]
fn spot_and_distance_attenuation() {
    let mut s = Setup::new();
    s.enable(&[LutSlot::Sp, LutSlot::Da]);
    s.input(LutSlot::Sp, SP);
    // Positional light at (0, 0, 3); fragment at (0, 0, −1) so V = (0, 0, 1):
    // L = pos + V = (0, 0, 4), |L| = 4, N·L = 1.
    s.light(0, light_offset::CONFIG, 0);
    s.position(0, [0.0, 0.0, 3.0]);
    s.light(0, light_offset::DIFFUSE, rgb(255, 255, 255));
    // Spot register (0, 0, 1.0) (raw 0x800 / 2048): SP input = 1 → entry 255 (δ = 1, diff 0)
    // → 4080/4095 = 0.996337.
    s.light(0, light_offset::SPOTDIR_Z, 0x800);
    s.ramp(8);
    // DA: x = clamp(0.125·4 + 0, 0, 1) = 0.5 → entry 128 → 2048/4095 = 0.500122.
    s.light(
        0,
        light_offset::ATTENUATION_SCALE,
        F20::from_f32(0.125).raw(),
    );
    s.light(0, light_offset::ATTENUATION_BIAS, 0);
    s.ramp(16);
    // Diffuse = 1·1·0.500122·0.996337·255 = 127.06 → 127.
    assert_eq!(s.shade([0.0, 0.0, 1.0])[0], [127, 127, 127, 255]);
    // Disabling DA for light 0 (CONFIG1 bit 24): 0.996337·255 = 254.07 → 254.
    s.regs[usize::from(id::LIGHTING_CONFIG1)] |= 1 << 24;
    assert_eq!(s.shade([0.0, 0.0, 1.0])[0], [254, 254, 254, 255]);
    // Disabling the spotlight too (bit 8): 255.
    s.regs[usize::from(id::LIGHTING_CONFIG1)] |= 1 << 8;
    assert_eq!(s.shade([0.0, 0.0, 1.0])[0], [255, 255, 255, 255]);
    // Configuration 2 has no SP LUT: it reads 1.0 even when enabled in CONFIG1.
    s.enable(&[LutSlot::Sp]);
    s.env(2);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[0], [255, 255, 255, 255]);
}

#[test]
fn directional_distance_attenuation_distance() {
    let mut s = Setup::new();
    s.enable(&[LutSlot::Da]);
    s.position(0, [0.0, 0.0, 2.0]);
    s.light(0, light_offset::DIFFUSE, rgb(255, 255, 255));
    s.light(
        0,
        light_offset::ATTENUATION_SCALE,
        F20::from_f32(0.25).raw(),
    );
    s.ramp(16);
    // V = (0, 0, 1). LightVector rule: d = |pos| = 2 → x = 0.5 → entry 128 → 127.
    // PositionPlusView rule: d = |pos + V| = 3 → x = 0.75 → entry 192 → 3072/4095·255 = 191.
    let want = match DA_DISTANCE {
        DaDistance::LightVector => 127,
        DaDistance::PositionPlusView => 191,
    };
    assert_eq!(s.shade([0.0, 0.0, 1.0])[0][0], want);
}

// ---- Specular terms -------------------------------------------------------------------------

#[test]
fn geometric_factor_and_clamp_highlights() {
    let mut s = Setup::new();
    // L = (0, 0.6, 0.8), V = (0, 0, 1): H = (0, 0.6, 1.8), |H|² = 3.6, N·L = 0.8,
    // g = min(0.8 / 3.6, 1) = 0.222222; spec0 = 1·g → 56.67 → 56.
    s.position(0, [0.0, 0.6, 0.8]);
    s.light(0, light_offset::SPECULAR0, rgb(255, 255, 255));
    s.light(0, light_offset::CONFIG, 1 | 0b100);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [56, 56, 56, 255]);
    // Without the geometric factor: D0 unavailable/disabled = 1 → 255.
    s.light(0, light_offset::CONFIG, 1);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [255, 255, 255, 255]);
    // Light below the horizon: N·L clamps to 0; clamp highlights (CONFIG0 bit 27) removes
    // the specular term.
    s.position(0, [0.0, 0.6, -0.8]);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [255, 255, 255, 255]);
    s.config0_bits(1 << 27);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [0, 0, 0, 255]);
}

#[test]
fn reflection_luts_and_rr_fallback() {
    let mut s = Setup::new();
    s.enable(&[LutSlot::Rr, LutSlot::Rg, LutSlot::Rb]);
    s.light(0, light_offset::SPECULAR1, rgb(255, 255, 255));
    // N·V = 0.8 for V = (0.6, 0, 0.8)·5 → entry 204. RR ramp, RG constant 0.5, RB 0.25.
    s.ramp(6);
    s.luts[5] = [entry(2048, 0); 256];
    s.luts[4] = [entry(1024, 0); 256];
    let view = [3.0, 0.0, 4.0];
    // spec1 = D1 (disabled → 1)·(RR, RG, RB): 203, 2048/4095·255 = 127.5 → 127, 63.7 → 63.
    assert_eq!(s.shade(view)[1], [203, 127, 63, 255]);
    // RB disabled (CONFIG1 bit 20 per 3dbrew/libctru): blue takes RR's value.
    s.regs[usize::from(id::LIGHTING_CONFIG1)] |= 1 << 20;
    assert_eq!(s.shade(view)[1], [203, 127, 203, 255]);
    // Configuration 6 has no RG/RB: both take RR.
    s.env(6);
    assert_eq!(s.shade(view)[1], [203, 203, 203, 255]);
    // RR disabled (bit 22): RR = 1 and everything falls back to it.
    s.regs[usize::from(id::LIGHTING_CONFIG1)] |= 1 << 22;
    assert_eq!(s.shade(view)[1], [255, 255, 255, 255]);
}

#[test]
fn d0_and_d1_combine_with_their_colours() {
    let mut s = Setup::new();
    s.enable(&[LutSlot::D0, LutSlot::D1]);
    s.luts[0] = [entry(2048, 0); 256]; // D0 = 0.500122
    s.luts[1] = [entry(1024, 0); 256]; // D1 = 0.250061
    s.light(0, light_offset::SPECULAR0, rgb(200, 0, 0));
    s.light(0, light_offset::SPECULAR1, rgb(0, 0, 255));
    // R = 0.500122·200 = 100.02 → 100; B = 0.250061·255 = 63.77 → 63.
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [100, 0, 63, 255]);
    // Configuration 0 has no D1 LUT: D1 reads 1.0 despite CONFIG1 enabling it.
    s.env(0);
    assert_eq!(s.shade([0.0, 0.0, 1.0])[1], [100, 0, 255, 255]);
}

#[test]
fn fresnel_comes_from_the_last_light_only() {
    let mut s = Setup::new();
    s.env(1); // FR, RR, SP, DA
    s.enable(&[LutSlot::Fr]);
    s.ramp(3);
    s.input(LutSlot::Fr, LN);
    s.config0_bits(0b1100); // Fresnel → primary and secondary alpha
    // Two lights: slot 0 = light 0 with L·N = 0.96, slot 1 = light 1 with L·N = 0.8.
    s.set(id::LIGHTING_NUM_LIGHTS, 1);
    s.position(0, [0.0, 0.28, 0.96]);
    s.light(1, light_offset::CONFIG, 1);
    s.position(1, [0.0, 0.6, 0.8]);
    // Alpha = FR(0.8) = entry 204 → 203 (not 244 from light 0).
    let [p, q] = s.shade([0.0, 0.0, 1.0]);
    assert_eq!((p[3], q[3]), (203, 203));
    // Swap the slots with the permutation: now light 0 is last → 244.
    s.set(id::LIGHTING_LIGHT_PERMUTATION, 0x7654_3201);
    let [p, q] = s.shade([0.0, 0.0, 1.0]);
    assert_eq!((p[3], q[3]), (244, 244));
    // Only the secondary alpha selected (bits 2-3 = 2).
    s.env(1);
    s.config0_bits(0b1000);
    let [p, q] = s.shade([0.0, 0.0, 1.0]);
    assert_eq!((p[3], q[3]), (255, 244));
}

// ---- Permutation, bump and shadow ------------------------------------------------------------

#[test]
fn permutation_selects_light_registers() {
    let mut s = Setup::new();
    s.set(id::LIGHTING_NUM_LIGHTS, 1);
    s.set(id::LIGHTING_LIGHT_PERMUTATION, 0x53); // slot 0 = light 3, slot 1 = light 5
    for (n, c) in [(3, rgb(100, 0, 0)), (5, rgb(0, 0, 60)), (0, rgb(0, 255, 0))] {
        s.light(n, light_offset::CONFIG, 1);
        s.position(n, [0.0, 0.0, 1.0]);
        s.light(n, light_offset::DIFFUSE, c);
    }
    let p = s.shade([0.0, 0.0, 1.0])[0];
    // Light 0 (green) is not in the first two slots.
    assert_eq!(p[1], 0);
    assert!(
        (99..=100).contains(&p[0]) && (59..=60).contains(&p[2]),
        "{p:?}"
    );
}

#[test]
fn quaternion_rotation() {
    // 90° about y: (0, sin 45°, 0, cos 45°) maps z to x and x to −z.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let q = [0.0, h, 0.0, h];
    let z = rotate(q, [0.0, 0.0, 1.0]);
    let x = rotate(q, [1.0, 0.0, 0.0]);
    for (a, b) in z.iter().zip([1.0, 0.0, 0.0]) {
        assert!((a - b).abs() < 1e-6, "{z:?}");
    }
    for (a, b) in x.iter().zip([0.0, 0.0, -1.0]) {
        assert!((a - b).abs() < 1e-6, "{x:?}");
    }
    assert_eq!(rotate(IDENTITY, [0.3, 0.4, 0.5]), [0.3, 0.4, 0.5]);
}

#[test]
fn normal_map_with_and_without_renormalisation() {
    let mut s = Setup::new();
    s.light(0, light_offset::DIFFUSE, rgb(255, 255, 255));
    // Bump mode 1 (normal map) from texture unit 2 (bits 22-23 = 2).
    s.config0_bits((1 << 28) | (2 << 22));
    let mut tex = NO_TEX;
    // P = (191, 128, 255)/127.5 − 1 = (0.498039, 0.003922, 1).
    tex[2] = [191, 128, 255, 255];
    // Renormalised: z = sqrt(1 − 0.248043 − 0.000015) = 0.867146; N·L = z for L = (0, 0, 1)
    // → 221.12 → 221.
    let cfg = s.cfg();
    assert_eq!(cfg.texture_units_read(), [false, false, true, false]);
    assert_eq!(texture_units_read(&s.regs), [false, false, true, false]);
    assert_eq!(
        cfg.shade(IDENTITY, [0.0, 0.0, 1.0], &tex)[0],
        [221, 221, 221, 255]
    );
    // Renormalisation disabled (bit 30): z = 255/127.5 − 1 = 1 → N·L = 1 → 255.
    s.config0_bits(1 << 30);
    assert_eq!(
        s.cfg().shade(IDENTITY, [0.0, 0.0, 1.0], &tex)[0],
        [255, 255, 255, 255]
    );
    // The normal is rotated by the quaternion: 90° about y turns the perturbed normal
    // (0.498, 0.004, 1) into (1, 0.004, −0.498); with L = (1, 0, 0) N·L = 1 → 255, while L =
    // (0, 0, 1) gives max(−0.498, 0) = 0.
    let h = std::f32::consts::FRAC_1_SQRT_2;
    let q = [0.0, h, 0.0, h];
    assert_eq!(s.cfg().shade(q, [0.0, 0.0, 1.0], &tex)[0], [0, 0, 0, 255]);
    s.position(0, [1.0, 0.0, 0.0]);
    assert_eq!(
        s.cfg().shade(q, [0.0, 0.0, 1.0], &tex)[0],
        [255, 255, 255, 255]
    );
}

#[test]
fn tangent_map_feeds_cos_phi() {
    let mut s = selector_setup(CP);
    // Tangent map (mode 2) from unit 0: T = (128, 255, 128)/127.5 − 1 = (0.003922, 1, 0.003922).
    s.config0_bits(2 << 28);
    let mut tex = NO_TEX;
    tex[0] = [128, 255, 128, 255];
    // CP = (Ĥ − N(N·Ĥ))·T = (0.319077, 0.148904, 0)·T = 0.001251 + 0.148904 = 0.150155
    // → ×256 = 38.44 → entry 38 → 16·38/4095·255 = 37.86 → 37.
    let out = s.cfg().shade(IDENTITY, [3.0, 0.0, 4.0], &tex);
    assert_eq!(out[1], [37, 37, 37, 255]);
}

#[test]
fn shadow_factor_attenuates_diffuse_and_alpha() {
    let mut s = Setup::new();
    s.light(0, light_offset::DIFFUSE, rgb(200, 200, 200));
    s.light(0, light_offset::AMBIENT, rgb(50, 50, 50));
    // Shadow factor from unit 1, applied to the primary colour (bits 0, 16, unit bits 24-25).
    s.config0_bits(1 | (1 << 16) | (1 << 24));
    let mut tex = NO_TEX;
    tex[1] = [128, 64, 255, 32];
    let cfg = s.cfg();
    assert_eq!(cfg.texture_units_read(), [false, true, false, false]);
    let p = cfg.shade(IDENTITY, [0.0, 0.0, 1.0], &tex)[0];
    // DiffuseOnly: (200/255·S + 50/255)·255 with S = 128/255: 100.39 + 50 = 150.39 → 150;
    // G: S = 64/255 → 50.2 + 50 → 100; B: S = 1 → 250.
    let want = match SHADOW_TERM {
        ShadowTerm::DiffuseOnly => [150, 100, 250, 255],
        // (200 + 50)/255·S·255: 125.49, 62.75, 250.
        ShadowTerm::DiffuseAndAmbient => [125, 62, 250, 255],
    };
    assert!(
        p.iter().zip(want).all(|(&a, b)| a == b || a + 1 == b),
        "{p:?} vs {want:?}"
    );
    // Inverted (bit 18): S = 1 − 128/255 = 0.498039 → 99.6 + 50 = 149.6 → 149.
    s.config0_bits(1 << 18);
    let p = s.cfg().shade(IDENTITY, [0.0, 0.0, 1.0], &tex)[0];
    if SHADOW_TERM == ShadowTerm::DiffuseOnly {
        assert_eq!(p[0], 149);
    }
    // Shadow disabled for light 0 (CONFIG1 bit 0): unshadowed 200 + 50 = 250.
    s.regs[usize::from(id::LIGHTING_CONFIG1)] |= 1;
    let p = s.cfg().shade(IDENTITY, [0.0, 0.0, 1.0], &tex)[0];
    assert!(p[0] >= 249, "{p:?}");
}

#[test]
fn shadow_alpha_multiplies_fresnel_alpha() {
    let mut s = Setup::new();
    s.env(1);
    s.enable(&[LutSlot::Fr]);
    s.luts[3] = [entry(2048, 0); 256]; // FR = 0.500122
    // Shadow factor from unit 0 on alpha (bit 19), Fresnel to primary alpha (bit 2).
    s.config0_bits(1 | (1 << 19) | 0b100);
    let mut tex = NO_TEX;
    tex[0] = [255, 255, 255, 32];
    // Alpha = 0.500122·32/255 = 0.062760 → 16.00 → 16. Secondary alpha untouched: 255.
    let [p, q] = s.cfg().shade(IDENTITY, [0.0, 0.0, 1.0], &tex);
    assert_eq!((p[3], q[3]), (16, 255));
}

// ---- Robustness -----------------------------------------------------------------------------

#[test]
fn degenerate_inputs_do_not_panic() {
    let mut s = Setup::new();
    s.enable(&[
        LutSlot::D0,
        LutSlot::D1,
        LutSlot::Sp,
        LutSlot::Fr,
        LutSlot::Rr,
        LutSlot::Rg,
        LutSlot::Rb,
        LutSlot::Da,
    ]);
    s.light(0, light_offset::CONFIG, 0b1110); // positional, two-sided, geometric factors
    s.position(0, [0.0, 0.0, 0.0]);
    let cfg = s.cfg();
    for q in [[0.0; 4], [f32::NAN; 4], [f32::INFINITY, 0.0, 0.0, 1.0]] {
        for v in [[0.0; 3], [f32::NAN; 3], [1e30, -1e30, 0.0]] {
            let _ = cfg.shade(q, v, &NO_TEX);
        }
    }
}

#[test]
fn random_registers_never_panic() {
    // A fixed-seed xorshift over every lighting register and LUT word.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u32
    };
    let mut regs = Box::new([0u32; 0x300]);
    let mut luts = Box::new([[0u32; 256]; 24]);
    for _ in 0..200 {
        for r in 0x140..0x1E0 {
            regs[r] = next();
        }
        for t in luts.iter_mut() {
            for e in t.iter_mut() {
                *e = next();
            }
        }
        let cfg = LightingConfig::from_regs(&regs, &luts);
        assert!((1..=8).contains(&cfg.num_lights));
        let tex = [[next() as u8; 4]; 4];
        let q = [next(), next(), next(), next()].map(|v| v as f32 / u32::MAX as f32 - 0.5);
        let v = [next(), next(), next()].map(|v| v as f32 / 1e6 - 2000.0);
        let _ = cfg.shade(q, v, &tex);
    }
}

// ---- The per-draw stage bundle --------------------------------------------------------------

#[test]
fn lut_upload_through_the_data_ports_reaches_the_configuration() {
    use crate::command::gpu::Gpu;
    use crate::memory::PhysMem;
    let mut gpu = Gpu::new();
    let mut mem = PhysMem::new();
    let mut w =
        |id: u16, v: u32| gpu.write_pica_reg(&mut mem, u32::from(id), v, 0xF, None, &mut ());
    w(id::LIGHTING_ENABLE0, 1);
    // D0 (LUT 0) entries 10, 11 through LIGHTING_LUT_INDEX = index 10, LUT 0, then two data
    // words to different aliases of the port.
    w(id::LIGHTING_LUT_INDEX, 10);
    w(0x1C8, entry(100, -5));
    w(0x1CF, entry(200, 7));
    let stages = FixedFunctionStages::for_draw(&gpu.regs, &gpu.luts);
    let l = stages.lighting.expect("lighting enabled");
    // CONFIG1 = 0: every LUT enabled; configuration 0 has D0.
    let d0 = l.d0.unwrap();
    let t = &l.tables[usize::from(d0.table)];
    assert_eq!(t.entries[10], [100.0 / 4095.0, -5.0 / 2047.0]);
    assert_eq!(t.entries[11], [200.0 / 4095.0, 7.0 / 2047.0]);
    assert!(stages.proctex.is_none() && stages.fog.is_none() && stages.shadow.is_none());
}

#[test]
fn stage_bundle_follows_the_registers() {
    use crate::lut::LookupTables;
    use crate::pixel::fragment::FragmentHooks;
    use crate::pixel::raster::Fragment;
    let luts = LookupTables::default();
    let mut regs = Box::new([0u32; 0x300]);
    // Nothing enabled: lighting hook gives black (disabled lighting), proctex (0, 0, 0, 0).
    let mut st = FixedFunctionStages::for_draw(&regs, &luts);
    let frag = Fragment {
        depth: 0.25,
        ..Default::default()
    };
    assert_eq!(st.lighting(&frag, &NO_TEX), Some([[0; 4]; 2]));
    assert_eq!(st.procedural_texture(&frag), Some([0; 4]));
    let mut c = [10, 20, 30, 40];
    assert!(st.fog(&frag, &mut c));
    assert_eq!(c, [10, 20, 30, 40]);
    // Gas is not modelled: the hooks keep their "not implemented" defaults.
    assert!(!st.gas_fog(&frag, &mut c));
    assert_eq!(st.gas_render(&frag, c, &mut [0u8; 4]), None);

    // Fog mode 5 with a zero LUT (factor 0: all fog colour) and fog colour (1, 2, 3).
    regs[usize::from(id::TEXENV_UPDATE_BUFFER)] = 5;
    regs[usize::from(id::FOG_COLOR)] = 0x03_0201;
    // Shadow rendering (mode 3) with FRAGOP_SHADOW constant 1.
    regs[usize::from(id::COLOR_OPERATION)] = 3;
    regs[usize::from(id::FRAGOP_SHADOW)] = 0x3C00;
    // Texture unit 3 enabled.
    regs[usize::from(id::TEXUNIT_CONFIG)] = 1 << 10;
    let mut st = FixedFunctionStages::for_draw(&regs, &luts);
    assert!(st.proctex.is_some() && st.fog.is_some() && st.shadow.is_some());
    assert!(st.gas.is_none());
    let mut c = [10, 20, 30, 40];
    assert!(st.fog(&frag, &mut c));
    assert_eq!(c, [1, 2, 3, 40]);
    // Shadow write: depth 0.25 → 0x3FFFFF under a cleared texel, green 0 → depth only.
    let mut px = [0xFF; 4];
    assert_eq!(st.shadow(&frag, [0, 0, 0, 0], &mut px), Some(true));
    assert_eq!(px, [0x3F, 0xFF, 0xFF, 0xFF]);
    // Gas mode decodes the gas registers for display.
    regs[usize::from(id::COLOR_OPERATION)] = 1;
    assert!(FixedFunctionStages::for_draw(&regs, &luts).gas.is_some());
}

#[test]
fn stage_issues_are_collected() {
    use crate::lut::LookupTables;
    let luts = LookupTables::default();
    let mut s = Setup::new();
    s.set(id::LIGHTING_ENABLE0, 1);
    s.env(9); // undocumented
    s.set(id::TEXUNIT_CONFIG, (1 << 10) | (3 << 8)); // proctex on coordinate source 3
    let st = FixedFunctionStages::for_draw(&s.regs, &luts);
    let issues = st.issues();
    assert!(issues.contains(&stages::StageIssue::Lighting(
        LightingIssue::UnknownEnvConfig(9)
    )));
    assert!(issues.contains(&stages::StageIssue::ProcTex(
        crate::pixel::stages::proctex::ProcTexIssue::UnknownCoordSource
    )));
}
