// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Procedural texture tests; expected values are worked out by hand from `pica-raster.md` §8.

use super::*;
use pica_cmd::regs::{F16, id};

const NO_GRAD: [f32; 4] = [0.0; 4];

fn clamp_mode(v: u32) -> ProcTexClamp {
    ProcTexClamp::from_raw(v)
}

/// A 128-entry map word: value bits 0-11, signed 12-bit difference bits 12-23.
fn map_entry(value: u32, diff: i32) -> u32 {
    value | (((diff as u32) & 0xFFF) << 12)
}

/// Tables: noise = 0, RGB map = identity-ish ramp `value = 32·i` with diff 32 (so the map is
/// linear: c → 32·128·c / 4095 = 4096c/4095), alpha map = constant 0.5, colour entry i =
/// (i, 255 − i, 2i mod 256, 200), colour diff = +1 per channel (stored half: doubled to 2).
struct Tables {
    noise: [u32; 128],
    rgb_map: [u32; 128],
    alpha_map: [u32; 128],
    color: [u32; 256],
    color_diff: [u32; 256],
}

impl Tables {
    fn new() -> Self {
        let mut t = Tables {
            noise: [0; 128],
            rgb_map: [0; 128],
            alpha_map: [map_entry(2048, 0); 128],
            color: [0; 256],
            color_diff: [0x0101_0101; 256],
        };
        for i in 0..128 {
            t.rgb_map[i] = map_entry(32 * i as u32, 32);
        }
        for i in 0..256u32 {
            t.color[i as usize] = i | ((255 - i) << 8) | (((2 * i) & 0xFF) << 16) | (200 << 24);
        }
        t
    }

    fn luts(&self) -> ProcTexLuts<'_> {
        ProcTexLuts {
            noise: &self.noise,
            rgb_map: &self.rgb_map,
            alpha_map: &self.alpha_map,
            color: &self.color,
            color_diff: &self.color_diff,
        }
    }
}

struct Proc {
    r: Box<[u32; 0x300]>,
}

impl Proc {
    /// Unit 3 enabled on texcoord 0; clamp to edge; RGB func U; colour LUT width 128 at offset
    /// 0, nearest filter.
    fn new() -> Self {
        let mut r = Proc {
            r: Box::new([0; 0x300]),
        };
        r.set(id::TEXUNIT_CONFIG, 1 << 10);
        r.set(id::TEXUNIT3_PROCTEX0, 1 | (1 << 3));
        r.set(id::TEXUNIT3_PROCTEX4, 128 << 11);
        r
    }

    fn set(&mut self, reg: u16, v: u32) {
        self.r[usize::from(reg)] = v;
    }

    fn or(&mut self, reg: u16, v: u32) {
        self.r[usize::from(reg)] |= v;
    }

    fn cfg(&self, t: &Tables) -> ProcTexConfig {
        ProcTexConfig::from_regs(&self.r, &t.luts())
    }
}

#[test]
fn clamp_modes() {
    // 0 to zero, 1 to edge, 2 symmetrical repeat, 3 mirrored repeat, 4 pulse.
    let cases: [(u32, f32, f32); 14] = [
        (0, 0.5, 0.5),
        (0, 1.0, 1.0),
        (0, 1.25, 0.0),
        (1, 0.5, 0.5),
        (1, 1.25, 1.0),
        (2, 1.25, 0.25),
        (2, 3.0, 0.0),
        (3, 0.25, 0.25),
        (3, 1.25, 0.75),
        (3, 2.25, 0.25),
        (4, 0.5, 0.0),
        (4, 0.75, 1.0),
        // Undocumented 5: clamp to edge.
        (5, 1.5, 1.0),
        (5, 0.25, 0.25),
    ];
    for (mode, c, want) in cases {
        assert_eq!(clamp_coord(c, clamp_mode(mode)), want, "mode {mode} c {c}");
    }
}

#[test]
fn shift_offsets() {
    let edge = ProcTexClamp::ToEdge;
    let mirror = ProcTexClamp::MirroredRepeat;
    // Odd: 0.5·((int(c)/2) mod 2): c = 2.5 → 1 → 0.5; c = 1.5 → 0; c = 6.9 → 3 mod 2 = 1.
    assert_eq!(shift_offset(2.5, ProcTexShift::Odd, edge), 0.5);
    assert_eq!(shift_offset(1.5, ProcTexShift::Odd, edge), 0.0);
    assert_eq!(shift_offset(6.9, ProcTexShift::Odd, edge), 0.5);
    // Even: 0.5·(((int(c)+1)/2) mod 2): c = 1.5 → 1 → 0.5; c = 0.5 → 0; c = 3.5 → 2 mod 2 = 0.
    assert_eq!(shift_offset(1.5, ProcTexShift::Even, edge), 0.5);
    assert_eq!(shift_offset(0.5, ProcTexShift::Even, edge), 0.0);
    assert_eq!(shift_offset(3.5, ProcTexShift::Even, edge), 0.0);
    // Mirrored repeat shifts by a whole 1.
    assert_eq!(shift_offset(2.5, ProcTexShift::Odd, mirror), 1.0);
    assert_eq!(shift_offset(2.5, ProcTexShift::None, edge), 0.0);
    assert_eq!(shift_offset(2.5, ProcTexShift::Unknown(3), edge), 0.0);
}

#[test]
fn combiners() {
    use ProcTexMapping as M;
    let (u, v) = (0.3f32, 0.4f32);
    // sqrt(0.09 + 0.16) = 0.5.
    let cases = [
        (M::U, 0.3),
        (M::U2, 0.09),
        (M::V, 0.4),
        (M::V2, 0.16),
        (M::Add, 0.35),
        (M::Add2, 0.125),
        (M::SqrtAdd2, 0.5),
        (M::Min, 0.3),
        (M::Max, 0.4),
        // ((0.35) + 0.5)/2 = 0.425.
        (M::RMax, 0.425),
        (M::Unknown(12), 0.0),
    ];
    for (f, want) in cases {
        assert!((combine(u, v, f) - want).abs() < 1e-6, "{f:?}");
    }
    // The square-root combiners saturate at 1.
    assert_eq!(combine(1.0, 1.0, M::SqrtAdd2), 1.0);
    assert_eq!(combine(1.0, 1.0, M::RMax), 1.0);
}

#[test]
fn map_lut_lookup_at_and_between_entries() {
    let mut words = [0u32; 128];
    for (i, w) in words.iter_mut().enumerate() {
        *w = map_entry(32 * i as u32, -16);
    }
    let lut = MapLut::from_words(&words);
    // c = 0.5: p = 64 → value[64] = 2048/4095.
    assert_eq!(lut.lookup(0.5), 2048.0 / 4095.0);
    // c = 0.5 + 0.25/128: δ = 0.25 → 2048/4095 − 0.25·16/4095.
    let want = (2048.0 - 4.0) / 4095.0;
    assert!((lut.lookup(0.5 + 0.25 / 128.0) - want).abs() < 1e-6);
    // c = 1: entry 127 with δ = 1: (4064 − 16)/4095.
    assert!((lut.lookup(1.0) - 4048.0 / 4095.0).abs() < 1e-6);
    // Negative and NaN read entry 0 (no panic).
    assert_eq!(lut.lookup(f32::NAN), 0.0);
}

#[test]
fn noise_hash_values() {
    // R1(0) = ((0 + 2)·3 & 15) ^ T1[0] = 6; R1(10) = ((1 + 2)·3 & 15) ^ T1[1] = 9 ^ 4 = 13.
    assert_eq!(noise_rand_1d(0), 6);
    assert_eq!(noise_rand_1d(10), 13);
    // R(0, 0): a = 6, b = 6; a&3 ≠ 1; b ^= 0; b = (6 + 16) & 15 = 6; b ^= T2[6] = 4 → 2;
    // −1 + 2·2/15 = −11/15.
    assert!((noise_rand_2d(0, 0) - (-11.0 / 15.0)).abs() < 1e-6);
    // R(0, 1): b = R1(1) = 9; (9 + 16) & 15 = 9; 9 ^ 4 = 13 → −1 + 26/15 = 11/15.
    assert!((noise_rand_2d(0, 1) - 11.0 / 15.0).abs() < 1e-6);
    // R(1, 0): a = 9 (a&3 = 1 → b = 6 + 4 = 10; b ^= 6 → 12); (12 + 19) & 15 = 15;
    // 15 ^ T2[9] = 15 ^ 13 = 2 → −11/15.
    assert!((noise_rand_2d(1, 0) - (-11.0 / 15.0)).abs() < 1e-6);
    // Every value is a multiple of 2/15 in [−1, 1].
    for x in 0..50 {
        for y in 0..50 {
            let r = noise_rand_2d(x, y);
            let k = (r + 1.0) * 7.5;
            assert!((k - k.round()).abs() < 1e-4 && (-1.0..=1.0).contains(&r));
        }
    }
}

#[test]
fn noise_coefficient_hand_computed() {
    let n = Noise {
        amplitude_u: 1.0,
        amplitude_v: 1.0,
        phase_u: 0.0,
        phase_v: 0.0,
        frequency_u: 0.5,
        frequency_v: 0.5,
    };
    // Noise LUT constant 0: sx = sy = 0, so the result is g00 = R(xi, yi)·(xf + yf).
    let zero = MapLut::from_words(&[0; 128]);
    // u = 0.1: x = 9·0.5·0.1 = 0.45; v = 0: y = 0 → R(0, 0)·0.45 = −11/15·0.45 = −0.33.
    assert!((noise_coefficient(0.1, 0.0, &n, &zero) - (-0.33)).abs() < 1e-5);
    // Noise LUT constant 1 (value 4095): sx = sy = 1, so the result is g11 =
    // R(xi+1, yi+1)·(xf + yf − 2). u = 0.1, v = 0: R(1, 1)·(0.45 − 2).
    // R(1, 1): a = 9, b = R1(1) = 9 → +4 = 13 → ^6 = 11 → (11 + 19) & 15 = 14 → 14 ^ 13 = 3
    // → −1 + 6/15 = −0.6; result = −0.6·(−1.55) = 0.93.
    let one = MapLut::from_words(&[map_entry(4095, 0); 128]);
    assert!((noise_coefficient(0.1, 0.0, &n, &one) - 0.93).abs() < 1e-5);
}

#[test]
fn colour_lut_nearest_and_linear() {
    let t = Tables::new();
    let mut r = Proc::new();
    let cfg = r.cfg(&t);
    // u = 0.5: RGB map (linear ramp) gives 4096·0.5/4095 = 0.500122; index = 0 + 0.500122·127
    // = 63.5155; nearest rounds to 64 → colour (64, 191, 128, 200).
    assert_eq!(cfg.sample(0.5, 0.25, NO_GRAD), [64, 191, 128, 200]);
    // Linear (filter 1): entry 63 + 0.5155·diff (2 per channel): (64.03, 193.03, 127.03, 201.03)
    // truncated → (64, 193, 127, 201).
    r.or(id::TEXUNIT3_PROCTEX4, 1);
    assert_eq!(r.cfg(&t).sample(0.5, 0.25, NO_GRAD), [64, 193, 127, 201]);
    // Offset 0x80 and width 64: index = 128 + 0.500122·63 = 159.5077 → linear: entry 159 +
    // 0.5077·2 → (160.02, 97.02, 63.02, 201.02) → (160, 97, 63, 201).
    r.set(id::TEXUNIT3_PROCTEX4, (64 << 11) | 1);
    r.set(id::TEXUNIT3_PROCTEX5, 0x80);
    assert_eq!(r.cfg(&t).sample(0.5, 0.25, NO_GRAD), [160, 97, 63, 201]);
}

#[test]
fn separate_alpha_uses_the_alpha_map() {
    let t = Tables::new();
    let mut r = Proc::new();
    // Separate alpha (bit 14) with alpha function V (2, bits 10-13): alpha map constant
    // 2048/4095 → trunc(0.500122·255) = 127.
    r.or(id::TEXUNIT3_PROCTEX0, (1 << 14) | (2 << 10));
    assert_eq!(r.cfg(&t).sample(0.5, 0.25, NO_GRAD), [64, 191, 128, 127]);
}

#[test]
fn coordinates_take_absolute_values_and_shift() {
    let t = Tables::new();
    let mut r = Proc::new();
    // Symmetrical repeat in u (2), U shift odd (1, bits 16-17).
    r.set(id::TEXUNIT3_PROCTEX0, 2 | (1 << 3) | (1 << 16));
    let cfg = r.cfg(&t);
    // (−0.25, −2.5) → (0.25, 2.5); u shift from v: 0.5·((2/2) mod 2) = 0.5 → u = 0.75;
    // v clamps to edge → 1.
    assert_eq!(cfg.coordinates(-0.25, -2.5), (0.75, 1.0));
}

#[test]
fn noise_moves_the_coordinates() {
    let mut t = Tables::new();
    t.noise = [map_entry(0, 0); 128];
    let mut r = Proc::new();
    r.or(id::TEXUNIT3_PROCTEX0, 1 << 15);
    // Amplitude u = 0.5 (raw 0x800 / 4096), phase 0; frequency 0.5 both.
    r.set(id::TEXUNIT3_PROCTEX1, 0x800);
    r.set(id::TEXUNIT3_PROCTEX2, 0);
    let half = u32::from(F16::from_f32(0.5).0);
    r.set(id::TEXUNIT3_PROCTEX3, half | (half << 16));
    let cfg = r.cfg(&t);
    // Noise at (0.1, 0): −0.33 (see noise_coefficient_hand_computed); u = |0.1 − 0.165| = 0.065.
    let (u, v) = cfg.coordinates(0.1, 0.0);
    let amp = 2048.0 / pica_cmd::regs::tev::PROCTEX_AMPLITUDE_DIVISOR;
    assert!((u - (0.1 - 0.33 * amp).abs()).abs() < 1e-5, "{u}");
    assert_eq!(v, 0.0);
}

#[test]
fn lod_and_mipmap_levels() {
    let t = Tables::new();
    let mut r = Proc::new();
    // Filter 3 (linear, mip nearest), LOD 0-7, width 128; bias 1.0 (f16 0x3C00: high byte 0x3C
    // in PROCTEX4 bits 19-26, low byte 0 in PROCTEX0 bits 20-27); offsets 0, 0x80, 0xC0, 0xE0.
    r.set(
        id::TEXUNIT3_PROCTEX4,
        3 | (7 << 7) | (128 << 11) | (0x3C << 19),
    );
    r.set(id::TEXUNIT3_PROCTEX5, 0xE0C0_8000);
    let cfg = r.cfg(&t);
    assert!(cfg.needs_gradients());
    // du/dx = 1/128: lod = log2(128·1·(1/128 + 0)) = 0; du/dx = 1/32, dv/dy = 0 → log2(4) = 2.
    assert_eq!(cfg.lod([1.0 / 128.0, 0.0, 0.0, 0.0]), 0.0);
    assert_eq!(cfg.lod([1.0 / 32.0, 0.0, 0.0, 0.0]), 2.0);
    // du = max(|du/dx|, |du/dy|), dv likewise: (1/64 + 1/64)·128 = 4 → 2.
    assert_eq!(cfg.lod([0.0, -1.0 / 64.0, 1.0 / 64.0, 0.0]), 2.0);
    // Huge derivatives clamp to max LOD 7; zero derivatives to 0.
    assert_eq!(cfg.lod([100.0, 0.0, 0.0, 0.0]), 7.0);
    assert_eq!(cfg.lod(NO_GRAD), 0.0);
    // Level 2: width 32 at offset 0xC0: index = 192 + 0.500122·31 = 207.5038 → linear entry 207
    // + 0.5038·2 → (208.0, 49.0, 159.0, 201.0) → R 208 (or 207 if the f32 sum lands below).
    let c = cfg.sample(0.5, 0.25, [1.0 / 32.0, 0.0, 0.0, 0.0]);
    assert_eq!(c[1], 49);
    assert!(c[0] == 208 || c[0] == 207, "{c:?}");
    // min LOD > max LOD must not panic.
    r.set(
        id::TEXUNIT3_PROCTEX4,
        3 | (9 << 3) | (2 << 7) | (128 << 11) | (0x3C << 19),
    );
    let _ = r.cfg(&t).lod([1.0, 0.0, 0.0, 0.0]);
}

#[test]
fn colour_diff_entries_are_doubled() {
    let mut t = Tables::new();
    // Signed bytes (−3, 5, 0, 127) → differences (−6, 10, 0, 254).
    t.color_diff[0] = 0xFD | (5 << 8) | (127 << 24);
    let cfg = Proc::new().cfg(&t);
    assert_eq!(cfg.color_diff[0], [-6.0, 10.0, 0.0, 254.0]);
}

#[test]
fn out_of_range_configuration_never_panics() {
    let t = Tables::new();
    let mut r = Proc::new();
    for v in [0u32, u32::MAX, 0xDEAD_BEEF, 0x1234_5678] {
        r.set(id::TEXUNIT3_PROCTEX0, v);
        r.set(id::TEXUNIT3_PROCTEX1, v.rotate_left(7));
        r.set(id::TEXUNIT3_PROCTEX2, v.rotate_left(13));
        r.set(id::TEXUNIT3_PROCTEX3, v.rotate_left(3));
        r.set(id::TEXUNIT3_PROCTEX4, v.rotate_left(17));
        r.set(id::TEXUNIT3_PROCTEX5, v);
        r.set(id::TEXUNIT_CONFIG, v);
        let cfg = r.cfg(&t);
        for (u, v) in [
            (0.0, 0.0),
            (1e30, -1e30),
            (f32::NAN, 0.5),
            (f32::INFINITY, 3.0),
        ] {
            let _ = cfg.sample(u, v, [1e-3, f32::NAN, 1e9, 0.0]);
        }
    }
    // Offset 0xF0 + width 255 runs past entry 255: wraps (or clamps), no panic.
    r.set(id::TEXUNIT3_PROCTEX0, 1 | (1 << 3));
    r.set(id::TEXUNIT3_PROCTEX4, (255 << 11) | 1);
    r.set(id::TEXUNIT3_PROCTEX5, 0xF0);
    let _ = r.cfg(&t).sample(1.0, 1.0, NO_GRAD);
}

/// The specialised routine against the reference on random registers, tables, coordinates
/// and derivatives (special values included): bit-identical colours, every route exercised.
#[test]
fn specialised_sample_matches_the_reference() {
    let mut x = 0x1357_9BDFu32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut routes = std::collections::BTreeSet::new();
    for case in 0..3000u32 {
        let mut t = Tables::new();
        for w in t
            .noise
            .iter_mut()
            .chain(&mut t.rgb_map)
            .chain(&mut t.alpha_map)
        {
            *w = next() & 0xFF_FFFF;
        }
        for w in t.color.iter_mut().chain(&mut t.color_diff) {
            *w = next();
        }
        let mut r = Proc::new();
        r.set(id::TEXUNIT_CONFIG, (1 << 10) | (next() & (3 << 8)));
        for reg in [
            id::TEXUNIT3_PROCTEX0,
            id::TEXUNIT3_PROCTEX1,
            id::TEXUNIT3_PROCTEX2,
            id::TEXUNIT3_PROCTEX3,
            id::TEXUNIT3_PROCTEX4,
            id::TEXUNIT3_PROCTEX5,
        ] {
            r.set(reg, next());
        }
        if case.is_multiple_of(3) {
            // Small frequencies and amplitudes (the usual range) and a sane LUT width.
            r.set(id::TEXUNIT3_PROCTEX3, 0x3C00_3C00 & next());
            r.or(id::TEXUNIT3_PROCTEX4, 0xFF << 11);
        }
        let cfg = r.cfg(&t);
        routes.insert(cfg.fast.route);
        let mut coord = || match next() % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => -1.0e20,
            3 => f32::from_bits(next()),
            _ => (next() % 40_000) as f32 / 10_000.0 - 2.0,
        };
        for _ in 0..64 {
            let (u, v) = (coord(), coord());
            let grad = [
                coord() / 64.0,
                coord() / 64.0,
                coord() / 64.0,
                coord() / 64.0,
            ];
            assert_eq!(
                cfg.sample_fast(u, v, grad),
                cfg.sample(u, v, grad),
                "case {case}: ({u}, {v}) {grad:?} {:?}",
                cfg.fast
            );
        }
    }
    assert_eq!(routes.len(), 12, "routes exercised: {routes:?}");
}

/// `sample_batch` (and the `FixedFunctionStages` batch hook) against the per-fragment
/// `sample_fragment` / `procedural_texture` for every U clamp × RGB combiner × filter × noise
/// × separate alpha (V clamp, alpha combiner, shifts, coordinate source and the other
/// registers random), on batches of 1-40 fragments (so several chunks) with coordinates and
/// derivatives incl. negative, huge, NaN and infinite values.
#[test]
fn batch_matches_the_per_fragment_sample() {
    use crate::pixel::stages::{FixedFunctionStages, FragmentHooks};
    let mut x = 0x2468_ACE1u32;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        x
    };
    let mut seen = std::collections::BTreeSet::new();
    for case in 0..8 * 16 * 8 * 4u32 {
        let (u_clamp, rest) = (case % 8, case / 8);
        let (func, rest) = (rest % 16, rest / 16);
        let (filter, rest) = (rest % 8, rest / 8);
        let (noise, separate) = (rest & 1, rest >> 1);
        let mut t = Tables::new();
        for w in t
            .noise
            .iter_mut()
            .chain(&mut t.rgb_map)
            .chain(&mut t.alpha_map)
        {
            *w = next() & 0xFF_FFFF;
        }
        for w in t.color.iter_mut().chain(&mut t.color_diff) {
            *w = next();
        }
        let mut r = Proc::new();
        r.set(id::TEXUNIT_CONFIG, (1 << 10) | (next() & (3 << 8)));
        let p0 = u_clamp
            | (next() & (7 << 3))
            | (func << 6)
            | (next() & (0xF << 10))
            | (separate << 14)
            | (noise << 15)
            | (next() & (0xFFF << 16));
        r.set(id::TEXUNIT3_PROCTEX0, p0);
        for reg in [
            id::TEXUNIT3_PROCTEX1,
            id::TEXUNIT3_PROCTEX2,
            id::TEXUNIT3_PROCTEX3,
            id::TEXUNIT3_PROCTEX5,
        ] {
            r.set(reg, next());
        }
        if case.is_multiple_of(2) {
            r.set(id::TEXUNIT3_PROCTEX3, 0x3C00_3C00 & next());
        }
        r.set(id::TEXUNIT3_PROCTEX4, (next() & !7) | filter);
        if case.is_multiple_of(3) {
            r.or(id::TEXUNIT3_PROCTEX4, 0xFF << 11);
        }
        let cfg = r.cfg(&t);
        seen.insert((
            format!("{:?}", cfg.v_clamp),
            format!("{:?} {:?}", cfg.u_shift, cfg.v_shift),
            cfg.fast.route,
        ));
        let len = (next() % 40 + 1) as usize;
        let mut value = || match next() % 16 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => -1.0e20,
            4 => 3.0e9,
            5 => f32::from_bits(next()),
            6 => -0.0,
            _ => (next() % 80_000) as f32 / 10_000.0 - 4.0,
        };
        let frags: Vec<Fragment> = (0..len)
            .map(|_| {
                let mut f = Fragment::default();
                for k in 0..3 {
                    f.tc[k] = [value(), value()];
                    f.tc_grad[k] = [value() / 64.0, value() / 64.0, value(), value()];
                }
                f
            })
            .collect();
        let want: Vec<Rgba> = frags.iter().map(|f| cfg.sample_fragment(f)).collect();
        let mut got = vec![[1u8; 4]; len];
        cfg.sample_batch(&frags, &mut got);
        assert_eq!(got, want, "case {case}: {:?}", cfg.fast);
        let mut stages = FixedFunctionStages {
            lighting: None,
            proctex: Some(Box::new(cfg)),
            fog: None,
            shadow: None,
            gas: None,
        };
        let mut hooked = vec![[1u8; 4]; len + 3];
        assert!(stages.procedural_texture_batch(&frags, &mut hooked));
        assert_eq!(hooked[..len], want[..], "case {case} (hook)");
        assert!(hooked[len..].iter().all(|o| *o == [1; 4]), "case {case}");
        for (f, w) in frags.iter().zip(&want) {
            assert_eq!(stages.procedural_texture(f), Some(*w), "case {case}");
        }
    }
    let routes: std::collections::BTreeSet<_> = seen.iter().map(|s| s.2).collect();
    assert_eq!(routes.len(), 12, "routes exercised: {routes:?}");
    let v_clamps: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.0).collect();
    let shifts: std::collections::BTreeSet<_> = seen.iter().map(|s| &s.1).collect();
    // 6 distinct clamp values (5 modes + unknown ones) and 4 × 4 shift pairs.
    assert!(
        v_clamps.len() >= 6 && shifts.len() >= 12,
        "{v_clamps:?} {shifts:?}"
    );
}

#[test]
fn disabled_unit_batch_reads_zero() {
    use crate::pixel::stages::{FixedFunctionStages, FragmentHooks};
    let mut stages = FixedFunctionStages {
        lighting: None,
        proctex: None,
        fog: None,
        shadow: None,
        gas: None,
    };
    let frags = vec![Fragment::default(); 20];
    let mut out = vec![[9u8; 4]; 21];
    assert!(stages.procedural_texture_batch(&frags, &mut out));
    assert!(out[..20].iter().all(|o| *o == [0; 4]));
    assert_eq!(out[20], [9; 4]);
}

/// Instruction-count driver (not a check): the sprite scene's procedural texture (clamp to
/// edge, U, nearest colour LUT, no noise) on a 16-fragment batch `COST_ITERS` times, through
/// `sample_batch` (`COST_PATH=batch`) or 16 `sample_fragment` calls (see the TEV driver).
#[test]
#[ignore]
fn cost_driver() {
    let iters: usize = std::env::var("COST_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let batch = std::env::var("COST_PATH").is_ok_and(|p| p == "batch");
    let t = Tables::new();
    let cfg = Proc::new().cfg(&t);
    let mut frags = vec![Fragment::default(); FRAGMENT_BATCH];
    let mut out = [[0u8; 4]; FRAGMENT_BATCH];
    let mut acc = 0u32;
    for k in 0..iters {
        for (i, f) in frags.iter_mut().enumerate() {
            f.tc[0] = [((k + i) % 97) as f32 / 97.0, (i % 89) as f32 / 89.0];
        }
        let frags = std::hint::black_box(&frags);
        if batch {
            cfg.sample_batch(frags, &mut out);
        } else {
            for (o, f) in out.iter_mut().zip(frags) {
                *o = cfg.sample_fragment(f);
            }
        }
        acc = acc.wrapping_add(u32::from_le_bytes(std::hint::black_box(out)[5]));
    }
    println!("{acc}");
}
