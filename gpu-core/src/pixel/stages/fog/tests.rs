// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Fog tests; expected values are worked out by hand from `pica-raster.md` §9.4.

use super::*;
use pica_cmd::regs::{F16, id};

/// A fog LUT word: value bits 13-23 (unsigned 11-bit), difference bits 0-12 (signed 13-bit).
fn fog_entry(value: u32, diff: i32) -> u32 {
    (value << 13) | ((diff as u32) & 0x1FFF)
}

/// Fog factor ramp: entry i has value 2047 − 16i and difference −16 (so the factor falls
/// linearly from 1 at depth 0 to 15/2047 at depth 1).
fn ramp() -> [u32; 128] {
    core::array::from_fn(|i| fog_entry(2047 - 16 * i as u32, -16))
}

fn regs(mode: u32, z_flip: bool, color: u32) -> Box<[u32; 0x300]> {
    let mut r = Box::new([0u32; 0x300]);
    r[usize::from(id::TEXENV_UPDATE_BUFFER)] = mode | (u32::from(z_flip) << 16);
    r[usize::from(id::FOG_COLOR)] = color;
    r
}

#[test]
fn lut_entry_decoding() {
    let lut = FogLut::from_words(&[fog_entry(1024, -512); 128]);
    assert_eq!(lut.entries[5], [1024.0 / 2047.0, -512.0 / 2047.0]);
    let lut = FogLut::from_words(&[fog_entry(2047, 4095); 128]);
    assert_eq!(lut.entries[0], [1.0, 4095.0 / 2047.0]);
}

#[test]
fn factor_at_and_between_entries() {
    let lut = FogLut::from_words(&ramp());
    // depth 0.5 → idx 64 exactly: (2047 − 1024)/2047.
    assert_eq!(lut.factor(0.5), 1023.0 / 2047.0);
    // A quarter of the way to entry 65: minus 0.25·16/2047.
    let x = 64.25 / 128.0;
    assert!((lut.factor(x) - 1019.0 / 2047.0).abs() < 1e-6);
    // depth 1.0 → idx 128: entry 127 with f = 1: (2047 − 2032 − 16)/2047 < 0 → clamped to 0.
    assert_eq!(lut.factor(1.0), 0.0);
    // depth 0: entry 0 = 1.0.
    assert_eq!(lut.factor(0.0), 1.0);
    // Out-of-range and NaN inputs are clamped to the table (no panic).
    assert_eq!(lut.factor(f32::NAN), 1.0);
    assert_eq!(lut.factor(-3.0), 1.0);
    assert_eq!(lut.factor(7.0), 0.0);
}

#[test]
fn factor_is_clamped_to_one() {
    // value 2047 (1.0) and difference +2047 (+1): half way gives 1.5 → clamped to 1.
    let lut = FogLut::from_words(&[fog_entry(2047, 2047); 128]);
    assert_eq!(lut.factor(0.5 + 0.5 / 128.0), 1.0);
}

#[test]
fn decode_and_blend() {
    // Fog mode 5, fog colour (0, 0, 255).
    let r = regs(5, false, 0xFF_0000);
    let fog = FogConfig::from_regs(&r, &ramp()).unwrap();
    assert_eq!(fog.color, [0, 0, 255]);
    assert!(!fog.z_flip);
    // depth 0.5: f = 1023/2047 = 0.499756. R = 0.499756·200 = 99.95 → 99;
    // G = 0.499756·100 = 49.98 → 49; B = 0.500244·255 = 127.56 → 127; alpha unchanged.
    let mut c = [200, 100, 0, 77];
    fog.apply(0.5, &mut c);
    assert_eq!(c, [99, 49, 127, 77]);
    // Depth 0: no fog.
    let mut c = [200, 100, 0, 77];
    fog.apply(0.0, &mut c);
    assert_eq!(c, [200, 100, 0, 77]);
}

#[test]
fn z_flip_indexes_with_one_minus_depth() {
    let r = regs(5, true, 0);
    let fog = FogConfig::from_regs(&r, &ramp()).unwrap();
    // depth 0.25 → 1 − 0.25 = 0.75 → entry 96: (2047 − 1536)/2047 = 511/2047.
    assert_eq!(fog.factor(0.25), 511.0 / 2047.0);
    // 0.249634·200 = 49.93 → 49 (fog colour black).
    let mut c = [200, 0, 0, 255];
    fog.apply(0.25, &mut c);
    assert_eq!(c, [49, 0, 0, 255]);
}

#[test]
fn only_mode_5_is_fog() {
    for mode in [0, 1, 2, 3, 4, 6, 7] {
        assert!(
            FogConfig::from_regs(&regs(mode, false, 0), &ramp()).is_none(),
            "{mode}"
        );
    }
}

#[test]
fn gas_registers_decode_and_are_not_modelled() {
    let mut r = regs(7, false, 0);
    r[usize::from(id::TEXENV_UPDATE_BUFFER)] |= 1 << 3;
    r[usize::from(id::GAS_ATTENUATION)] = u32::from(F16::from_f32(0.5).0);
    r[usize::from(id::GAS_ACCMAX)] = u32::from(F16::from_f32(2.0).0);
    r[usize::from(id::GAS_LIGHT_XY)] = 1 | (2 << 8) | (3 << 16);
    r[usize::from(id::GAS_LIGHT_Z)] = 4 | (5 << 8) | (6 << 16);
    r[usize::from(id::GAS_LIGHT_Z_COLOR)] = 7 | (1 << 8);
    r[usize::from(id::GAS_DELTAZ_DEPTH)] = 0x180 | (2 << 24);
    let g = GasConfig::from_regs(&r);
    assert_eq!(g.density_source, GasDensitySource::Depth);
    assert_eq!((g.attenuation, g.accumulation_max), (0.5, 2.0));
    assert_eq!((g.planar, g.view), ([1, 2, 3], [4, 5, 6]));
    assert_eq!(g.line_of_sight, 7);
    assert_eq!(g.color_lut_input, GasColorLutInput::LightFactor);
    assert_eq!(g.delta_z, 1.5);
    assert_eq!(g.depth_func, GasDepthFunc::Greater);
    assert_eq!(g.support, GasSupport::NotModelled);
}

/// The LUT lookup (integer clamp of the truncated index) equals the written form
/// `clamp(floor(idx), 0, 127)` in f32 bit for bit: random LUTs (differences of both signs,
/// zero), every f32 from −2 to 2 in steps of 2^−14 plus their neighbours, the index
/// boundaries k/128 and their neighbours, infinities, NaN, huge values and random bit
/// patterns.
#[test]
fn factor_equals_the_floor_form_for_every_input() {
    let mut seed = 0xF061_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let written = |lut: &FogLut, x: f32| {
        let idx = if x.is_nan() { 0.0 } else { x * 128.0 };
        let i = idx.floor().clamp(0.0, 127.0);
        let [v, d] = lut.entries[i as usize];
        (v + d * (idx - i)).clamp(0.0, 1.0)
    };
    let mut xs = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        0.0,
        -0.0,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        3.0e9,
        -3.0e9,
        1.7e7,
        -1.7e7,
    ];
    for k in -256..=512 {
        let x = k as f32 / 128.0;
        xs.extend([
            x,
            f32::from_bits(x.to_bits().wrapping_add(1)),
            f32::from_bits(x.to_bits().wrapping_sub(1)),
        ]);
    }
    for k in -32768..=32768 {
        xs.push(k as f32 / 16384.0);
    }
    for _ in 0..20_000 {
        xs.push(f32::from_bits(next()));
    }
    for round in 0..8 {
        let words: [u32; 128] = core::array::from_fn(|i| match round {
            0 => fog_entry(0, 0),
            1 => fog_entry(2047, -2047),
            2 => fog_entry(2047 - 16 * i as u32, -16),
            _ => next(),
        });
        let lut = FogLut::from_words(&words);
        for &x in &xs {
            let (got, want) = (lut.factor(x), written(&lut, x));
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "round {round}, x {x:e}: {got:e} != {want:e}"
            );
        }
    }
}

/// [`fog_blend_lanes`] against the expression of [`FogConfig::apply`] (`as u8` on the f32
/// sum): every channel value 0..=255 against fog colours 0, 1, 127, 128, 254, 255 and random
/// ones, with factors 0, −0, 1, NaN, the smallest steps above 0 and below 1, every k/4096 and
/// random values in [0, 1], lanes shuffled so that each lane sees every kind; alpha kept.
#[test]
fn blend_lanes_equal_the_per_channel_cast() {
    let mut seed = 0xB1E0_u32;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        seed
    };
    let mut factors = vec![
        0.0f32,
        -0.0,
        1.0,
        f32::NAN,
        f32::from_bits(1),
        f32::MIN_POSITIVE,
        f32::EPSILON,
        1.0 - f32::EPSILON / 2.0,
        1.0 - f32::EPSILON,
        0.5,
        f32::from_bits(0.5f32.to_bits() - 1),
    ];
    for k in 0..=4096 {
        factors.push(k as f32 / 4096.0);
    }
    for _ in 0..4000 {
        factors.push((next() % 0x100_0001) as f32 / 16_777_216.0);
    }
    let mut fogs = vec![
        [0u8; 3],
        [1, 1, 1],
        [127, 128, 254],
        [255, 255, 255],
        [0, 255, 128],
    ];
    for _ in 0..6 {
        let w = next().to_le_bytes();
        fogs.push([w[0], w[1], w[2]]);
    }
    let want = |f: f32, c: Rgba, fog: [u8; 3]| {
        let mut c = c;
        for (c, &fc) in c.iter_mut().take(3).zip(&fog) {
            *c = (f * f32::from(*c) + (1.0 - f) * f32::from(fc)) as u8;
        }
        c
    };
    let mut checked = 0u64;
    for fog in fogs {
        for (chunk, fs) in factors.chunks(16).enumerate() {
            let f: [f32; 16] = std::array::from_fn(|k| fs[(k + chunk) % fs.len()]);
            for base in (0..256).step_by(16) {
                let colors: [Rgba; 16] = std::array::from_fn(|k| {
                    let c = ((base + k * 7 + chunk) % 256) as u8;
                    [c, (base + k) as u8, 255 - c, next() as u8]
                });
                let got = fog_blend_lanes(&f, fog, &colors);
                for k in 0..16 {
                    assert_eq!(
                        got[k].to_le_bytes(),
                        want(f[k], colors[k], fog),
                        "f {:e} colour {:?} fog {fog:?}",
                        f[k],
                        colors[k]
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 1_000_000, "only {checked} lanes");
}

/// [`trunc_u32`] against the saturating `as u32` cast: NaN, infinities, negatives, every
/// integer and half integer up to 2^23 neighbourhoods (8 neighbours each side) for the fog
/// ranges 0..=256 and a sweep of every 61st f32 from 0 to 256, plus values near 2^23.
#[test]
fn trunc_u32_equals_the_cast() {
    let mut xs = vec![
        f32::NAN,
        -f32::NAN,
        f32::NEG_INFINITY,
        -1.0e30,
        -256.0,
        -1.0,
        -0.5,
        -f32::MIN_POSITIVE,
        -0.0,
        0.0,
        f32::from_bits(1),
        8_388_607.0,
        8_388_607.5,
        8_388_607.75,
        f32::from_bits(8_388_608f32.to_bits() - 1),
    ];
    for k in 0..=512 {
        let x = k as f32 / 2.0;
        let mut up = x;
        let mut down = x;
        xs.push(x);
        for _ in 0..8 {
            up = f32::from_bits(up.to_bits() + 1);
            down = f32::from_bits(down.to_bits().wrapping_sub(1));
            xs.extend([up, down]);
        }
    }
    for k in 0..1 << 20 {
        xs.push(k as f32 + 0.5);
        xs.push(k as f32 * 8.0 + 4.0);
    }
    let mut bits = 0u32;
    while bits < 256f32.to_bits() {
        xs.push(f32::from_bits(bits));
        bits += 61;
    }
    for x in xs {
        if x.is_nan() || x < 8_388_608.0 {
            assert_eq!(trunc_u32(x), x as u32, "{x:e}");
        }
    }
}
