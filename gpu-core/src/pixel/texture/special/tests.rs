// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! The specialised lookups against the generic sampler (the oracle): colour and texel count.

use super::*;
use crate::memory::{PhysMem, VRAM};
use crate::pixel::texture::config::{LodConfig, TextureConfig};
use crate::pixel::texture::format::TextureFormat;

/// A small deterministic generator (xorshift32).
struct Rng(u32);

impl Rng {
    fn next(&mut self) -> u32 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 17;
        self.0 ^= self.0 << 5;
        self.0
    }

    fn unit(&mut self) -> f32 {
        (self.next() % 100_000) as f32 / 100_000.0
    }

    /// A coordinate: mostly inside [−1.5, 2.5], sometimes an extreme or special value.
    fn coord(&mut self) -> f32 {
        match self.next() % 40 {
            0 => f32::NAN,
            1 => f32::INFINITY,
            2 => f32::NEG_INFINITY,
            3 => 3.0e9,
            4 => -3.0e9,
            5 => -0.0,
            6 => 1.0,
            7 => f32::from_bits(self.next()),
            // Exactly on texel edges and centres of a 64-texel grid.
            8..=11 => (self.next() % 257) as f32 / 128.0 - 0.5,
            _ => self.unit() * 4.0 - 1.5,
        }
    }

    /// A derivative: magnification, minification over several levels, zero, special.
    fn grad(&mut self) -> f32 {
        match self.next() % 20 {
            0 => 0.0,
            1 => f32::NAN,
            2 => f32::INFINITY,
            3 => 1.0e-30,
            4..=9 => (self.unit() - 0.5) / 64.0,
            _ => (self.unit() - 0.5) * 2f32.powi((self.next() % 8) as i32 - 6),
        }
    }
}

const SIZES: [u32; 7] = [8, 16, 32, 64, 128, 24, 40];

/// Memory with pseudo-random texture bytes at the start of VRAM.
fn memory(rng: &mut Rng) -> PhysMem {
    let bytes: Vec<u8> = (0..0x6_0000).map(|_| rng.next() as u8).collect();
    let mut mem = PhysMem::new();
    mem.write(VRAM.base, &bytes).unwrap();
    mem
}

fn random_config(rng: &mut Rng) -> TextureConfig {
    let w = SIZES[rng.next() as usize % SIZES.len()];
    let h = SIZES[rng.next() as usize % SIZES.len()];
    let formats = [
        TextureFormat::Rgba8,
        TextureFormat::Rgb565,
        TextureFormat::Etc1,
    ];
    let mut c = TextureConfig::new_2d(
        VRAM.base,
        w,
        h,
        formats[rng.next() as usize % formats.len()],
    );
    let filter = |b: u32| {
        if b & 1 == 0 {
            Filter::Nearest
        } else {
            Filter::Linear
        }
    };
    // Half the cases use one wrap mode on both axes (the common case).
    c.wrap_s = WrapMode::from_bits(rng.next());
    c.wrap_t = if rng.next().is_multiple_of(2) {
        c.wrap_s
    } else {
        WrapMode::from_bits(rng.next())
    };
    c.mag_filter = filter(rng.next());
    c.min_filter = if rng.next().is_multiple_of(3) {
        c.mag_filter
    } else {
        filter(rng.next())
    };
    c.mip_filter = filter(rng.next());
    c.border = rng.next().to_le_bytes();
    let max_level = rng.next() % 9;
    c.lod = LodConfig {
        bias: match rng.next() % 4 {
            0 => 0.0,
            _ => (rng.next() % 2048) as f32 / 256.0 - 4.0,
        },
        max_level,
        min_level: rng.next() % (max_level + 2),
    };
    c
}

fn fragment(rng: &mut Rng, tc: usize) -> Fragment {
    let mut f = Fragment::default();
    f.tc[tc] = [rng.coord(), rng.coord()];
    f.tc_grad[tc] = [rng.grad(), rng.grad(), rng.grad(), rng.grad()];
    f
}

#[test]
fn specialised_lookups_match_the_generic_sampler() {
    let mut rng = Rng(0x5EED_1234);
    let mem = memory(&mut rng);
    let mut kinds = std::collections::BTreeMap::new();
    let mut counts = std::collections::BTreeSet::new();
    for case in 0..1500 {
        let cfg = random_config(&mut rng);
        let sampler = Arc::new(Sampler::decoded(&mem, &cfg).unwrap());
        let (unit, tc) = (case % 3, (case / 3) % 3);
        let lookup = UnitLookup::new(sampler, unit, tc);
        *kinds.entry(lookup.kind()).or_insert(0) += 1;
        for _ in 0..200 {
            let f = fragment(&mut rng, tc);
            let fast = lookup.sample(&f);
            let oracle = lookup.sample_reference(&f);
            counts.insert(fast.1);
            assert_eq!(
                fast,
                oracle,
                "case {case} ({}): {cfg:?} tc {:?} grad {:?}",
                lookup.kind(),
                f.tc[tc],
                f.tc_grad[tc]
            );
        }
    }
    for k in ["one level bilinear", "one level nearest", "mipmapped"] {
        assert!(kinds.contains_key(k), "{k} never chosen: {kinds:?}");
    }
    // Nearest, bilinear, two nearest levels, two bilinear levels.
    for n in [1, 2, 4, 8] {
        assert!(counts.contains(&n), "{n} texels never counted: {counts:?}");
    }
}

/// The 32-bit bilinear taps at their limits: scaled coordinates just inside, on and just
/// outside the clamp-to-edge range `[−2^F, n·2^F]` and around the repeat bound `|fx| = 2^22`
/// (where the 64-bit path takes over; and the former bound 2^30), for both axes and every level size of the test set.
#[test]
fn bilinear_taps_match_at_the_clamp_and_repeat_limits() {
    let mut rng = Rng(0xB111_0042);
    let mem = memory(&mut rng);
    let one = (1u32 << FILTER_FRAC_BITS) as f32;
    for &size in &SIZES {
        for (ws, wt) in [
            (WrapMode::ClampToEdge, WrapMode::ClampToEdge),
            (WrapMode::Repeat, WrapMode::Repeat),
            (WrapMode::ClampToEdge, WrapMode::Repeat),
            (WrapMode::Repeat, WrapMode::ClampToEdge),
        ] {
            let mut cfg = TextureConfig::new_2d(VRAM.base, size, size, TextureFormat::Rgba8);
            cfg.mag_filter = Filter::Linear;
            cfg.min_filter = Filter::Linear;
            cfg.wrap_s = ws;
            cfg.wrap_t = wt;
            cfg.border = [1, 2, 3, 4];
            let lookup = UnitLookup::new(Arc::new(Sampler::decoded(&mem, &cfg).unwrap()), 0, 0);
            assert_eq!(lookup.kind(), "one level bilinear");
            let n = size as f32;
            // Normalised coordinates whose scaled value (c·n − 0.5)·2^F lands near a limit.
            let at = |scaled: f32| (scaled / one + 0.5) / n;
            let mut coords = vec![f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 0.0, -0.0];
            for limit in [
                -one,
                0.0,
                n * one,
                n * one - one,
                1_073_741_824.0,
                -1_073_741_824.0,
                4_194_304.0,
                -4_194_304.0,
            ] {
                let c = at(limit);
                coords.push(c);
                let mut up = c;
                let mut down = c;
                for _ in 0..4 {
                    up = f32::from_bits(up.to_bits().wrapping_add(1));
                    down = if down > 0.0 {
                        f32::from_bits(down.to_bits().wrapping_sub(1))
                    } else {
                        f32::from_bits(down.to_bits().wrapping_add(1))
                    };
                    coords.extend([up, down, -up, -down]);
                }
                for k in 1..6 {
                    coords.push(at(limit - k as f32 * 37.0));
                    coords.push(at(limit + k as f32 * 37.0));
                }
            }
            for &u in &coords {
                for &v in coords.iter().step_by(3) {
                    let mut f = Fragment::default();
                    f.tc[0] = [u, v];
                    assert_eq!(
                        lookup.sample(&f),
                        lookup.sample_reference(&f),
                        "{size}x{size} {ws:?}/{wt:?} at ({u:e}, {v:e})"
                    );
                    f.tc[0] = [v, u];
                    assert_eq!(
                        lookup.sample(&f),
                        lookup.sample_reference(&f),
                        "{size}x{size} {ws:?}/{wt:?} at ({v:e}, {u:e})"
                    );
                }
            }
        }
    }
}

/// `scaled(c, n·2^F)` is the generic filter's `(c·n − 0.5)·2^F` bit for bit: every level
/// size, special values, values around the subnormal and overflow limits, and random bit
/// patterns.
#[test]
fn scaled_coordinates_equal_the_generic_expression() {
    let mut rng = Rng(0x5CA1_ED00);
    let one = (1u32 << FILTER_FRAC_BITS) as f32;
    let mut specials = vec![
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MAX,
        f32::MIN,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        f32::from_bits(1),
        f32::from_bits(0x8000_0001),
        f32::MAX / 256.0,
        f32::MAX / 2047.0,
        0.5,
        1.0,
    ];
    for k in 0..64 {
        specials.push(f32::MAX / (1u64 << (k % 24)) as f32 / (1 + k / 24) as f32);
        specials.push(f32::MIN_POSITIVE * (k + 1) as f32 / 64.0);
    }
    for n in 1..=2047u32 {
        let lv = LevelView::new(0, n, n);
        let wf = n as f32;
        let check = |c: f32| {
            let want = (c * wf - 0.5) * one;
            let got = scaled(c, lv.ws);
            assert!(
                got.to_bits() == want.to_bits() || (got.is_nan() && want.is_nan()),
                "n {n}, c {c:e}: {got:e} != {want:e}"
            );
        };
        for &c in &specials {
            check(c);
            check(-c);
        }
        for _ in 0..400 {
            check(f32::from_bits(rng.next()));
            check(rng.unit() * 3.0 - 1.0);
        }
    }
}

/// The one-step bilinear blend equals the generic two-step blend
/// (`sampler::bilinear`) for every pair of weights 0..2^F, on the extreme taps (all 0, all
/// 255, one tap 255 and the rest 0) and on random taps.
#[test]
fn one_step_bilinear_equals_the_generic_blend() {
    let mut rng = Rng(0xB111_4EA2);
    let one = 1u32 << FILTER_FRAC_BITS;
    for fs in 0..one {
        for ft in 0..one {
            let mut cases = vec![[[0u8; 4]; 4], [[255u8; 4]; 4]];
            for hot in 0..4 {
                let mut c = [[0u8; 4]; 4];
                c[hot] = [255; 4];
                cases.push(c);
            }
            for _ in 0..4 {
                cases.push([0; 4].map(|_: u8| rng.next().to_le_bytes()));
            }
            for [c00, c10, c01, c11] in cases {
                assert_eq!(
                    bilinear_direct(&c00, &c10, &c01, &c11, fs, ft),
                    crate::pixel::texture::sampler::bilinear(c00, c10, c01, c11, fs, ft),
                    "{c00:?} {c10:?} {c01:?} {c11:?} {fs} {ft}"
                );
            }
        }
    }
}

/// The lane form of the inner bilinear blend (`bilinear_rows` on two `pair` reads) equals
/// the one-step blend for every pair of weights 0..2^F, on the extreme taps (all 0, all 255,
/// one tap or one channel 255 and the rest 0, one tap or channel 0 and the rest 255) and on
/// random taps.
#[test]
fn row_pair_bilinear_equals_the_one_step_blend() {
    let mut rng = Rng(0x5A4B_0077);
    let one = 1u32 << FILTER_FRAC_BITS;
    let mut fixed = vec![[[0u8; 4]; 4], [[255u8; 4]; 4]];
    for hot in 0..4 {
        for ch in 0..4 {
            let mut c = [[0u8; 4]; 4];
            c[hot] = [255; 4];
            fixed.push(c);
            let mut c = [[0u8; 4]; 4];
            c[hot][ch] = 255;
            fixed.push(c);
            let mut c = [[255u8; 4]; 4];
            c[hot][ch] = 0;
            fixed.push(c);
        }
    }
    for fs in 0..one {
        for ft in 0..one {
            let mut cases = fixed.clone();
            for _ in 0..6 {
                cases.push([0; 4].map(|_: u8| rng.next().to_le_bytes()));
            }
            for [c00, c10, c01, c11] in cases {
                let texels = [c01, c11, c00, c10];
                let (r1, r0) = (pair(&texels, 0), pair(&texels, 2));
                let got = bilinear_rows(r0.unwrap(), r1.unwrap(), fs, ft).to_le_bytes();
                assert_eq!(
                    got,
                    bilinear_direct(&c00, &c10, &c01, &c11, fs, ft),
                    "{c00:?} {c10:?} {c01:?} {c11:?} {fs} {ft}"
                );
            }
        }
    }
    // Pairs past the end of the array are refused, not read.
    let texels = [[1u8; 4]; 3];
    assert!(pair(&texels, 1).is_some());
    assert!(pair(&texels, 2).is_none());
    assert!(pair(&texels, usize::MAX).is_none());
}

/// The inner-footprint bilinear path against the generic sampler for every wrap mode on
/// both axes, square and non-square, power-of-two and other sizes, several formats: scaled
/// coordinates on and a few ulps around both ends of the inner range `[0, (n − 1)·2^F)`,
/// on every texel boundary and weight step of a row, at random inside and outside, and
/// some of them whole periods away (the repeat path and its seams).
#[test]
fn inner_bilinear_footprints_match_the_generic_sampler_for_every_wrap_mode() {
    let mut rng = Rng(0x1EEE_F00D);
    let mem = memory(&mut rng);
    let one = (1u32 << FILTER_FRAC_BITS) as f32;
    let sizes = [
        (8, 8),
        (32, 16),
        (24, 40),
        (2, 64),
        (128, 2),
        (1, 8),
        (40, 24),
    ];
    let formats = [
        TextureFormat::Rgba8,
        TextureFormat::Rgb565,
        TextureFormat::Etc1,
    ];
    let mut checked = 0u32;
    for (k, &(w, h)) in sizes.iter().enumerate() {
        for ws in 0..8 {
            for wt in [ws, (ws + 3) % 8] {
                let mut cfg = TextureConfig::new_2d(VRAM.base, w, h, formats[k % formats.len()]);
                cfg.mag_filter = Filter::Linear;
                cfg.min_filter = Filter::Linear;
                cfg.wrap_s = WrapMode::from_bits(ws);
                cfg.wrap_t = WrapMode::from_bits(wt);
                cfg.border = [9, 8, 7, 6];
                let Ok(sampler) = Sampler::decoded(&mem, &cfg) else {
                    continue;
                };
                let lookup = UnitLookup::new(Arc::new(sampler), 1, 1);
                assert_eq!(lookup.kind(), "one level bilinear");
                // Normalised coordinates of scaled values on axis size n.
                let coords = |n: u32, rng: &mut Rng| {
                    let nf = n as f32;
                    let at = |scaled: f32| (scaled / one + 0.5) / nf;
                    let mut c = Vec::new();
                    for limit in [0.0, (n.max(1) - 1) as f32 * one] {
                        let x = at(limit);
                        c.push(x);
                        let (mut up, mut down) = (x, x);
                        for _ in 0..3 {
                            up = f32::from_bits(up.to_bits().wrapping_add(1));
                            down = if down > 0.0 {
                                f32::from_bits(down.to_bits() - 1)
                            } else {
                                f32::from_bits(down.to_bits().wrapping_add(1))
                            };
                            c.extend([up, down]);
                        }
                    }
                    for s in 0..(2 * n + 2) {
                        c.push(at(s as f32 * one / 2.0 - one / 2.0 + 1.0));
                        c.push(at(s as f32 * one / 2.0 + (rng.next() % 256) as f32));
                    }
                    for _ in 0..24 {
                        c.push(rng.unit() * 1.4 - 0.2);
                    }
                    // Repeats: the same points whole periods away (and the seams there).
                    let shifted: Vec<f32> = c
                        .iter()
                        .step_by(3)
                        .flat_map(|&x| [x + 1.0, x - 1.0, x + 3.0, x - 7.0, x + 1000.0])
                        .collect();
                    c.extend(shifted);
                    c
                };
                let (us, vs) = (coords(w, &mut rng), coords(h, &mut rng));
                for &u in &us {
                    for &v in &vs {
                        let mut f = Fragment::default();
                        f.tc[1] = [u, v];
                        assert_eq!(
                            lookup.sample(&f),
                            lookup.sample_reference(&f),
                            "{w}x{h} {:?}/{:?} at ({u:e}, {v:e})",
                            cfg.wrap_s,
                            cfg.wrap_t
                        );
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 100_000, "{checked}");
}

/// The lane form of the mip blend equals the generic per-channel `sampler::blend` for every
/// pair of channel values and every weight 0..=2^F, whatever the other lanes hold.
#[test]
fn mip_blend_lanes_equal_the_generic_blend() {
    let mut rng = Rng(0x0B1E_4D00);
    let one = 1u32 << FILTER_FRAC_BITS;
    for f in 0..=one {
        for x in 0..=255u8 {
            for y in 0..=255u8 {
                let r = rng.next().to_le_bytes();
                let ch = (usize::from(x) + usize::from(y)) % 4;
                let (mut a, mut b) = (r, [r[3], r[2], r[1], r[0]]);
                a[ch] = x;
                b[ch] = y;
                assert_eq!(
                    blend_levels(a, b, f),
                    crate::pixel::texture::sampler::blend(a, b, f),
                    "{a:?} {b:?} {f}"
                );
            }
        }
    }
}

#[test]
fn routines_are_chosen_per_configuration() {
    let mut rng = Rng(7);
    let mem = memory(&mut rng);
    let mut cfg = TextureConfig::new_2d(VRAM.base, 32, 32, TextureFormat::Rgba8);
    cfg.mag_filter = Filter::Linear;
    cfg.min_filter = Filter::Linear;
    let kind = |cfg: &TextureConfig| {
        UnitLookup::new(Arc::new(Sampler::decoded(&mem, cfg).unwrap()), 0, 0).kind()
    };
    assert_eq!(kind(&cfg), "one level bilinear");
    cfg.min_filter = Filter::Nearest;
    assert_eq!(kind(&cfg), "mipmapped", "min ≠ mag needs the LOD");
    cfg.mag_filter = Filter::Nearest;
    assert_eq!(kind(&cfg), "one level nearest");
    cfg.lod.max_level = 2;
    assert_eq!(kind(&cfg), "mipmapped");
    cfg.lod.min_level = 2;
    assert_eq!(kind(&cfg), "one level nearest", "LOD range of one level");
    cfg.texture_type = TextureType::CubeMap;
    assert_eq!(kind(&cfg), "generic");
    let swrast = TextureConfig::new_2d(VRAM.base, 32, 32, TextureFormat::Rgba8)
        .with_mode(RenderMode::CitraSwrast);
    assert_eq!(kind(&swrast), "generic");
}

#[test]
fn texel_counts_follow_the_filters() {
    let mut rng = Rng(99);
    let mem = memory(&mut rng);
    let mut cfg = TextureConfig::new_2d(VRAM.base, 64, 64, TextureFormat::Rgba8);
    cfg.mag_filter = Filter::Linear;
    cfg.min_filter = Filter::Linear;
    cfg.mip_filter = Filter::Linear;
    cfg.lod.max_level = 3;
    let lookup = UnitLookup::new(Arc::new(Sampler::decoded(&mem, &cfg).unwrap()), 1, 1);
    let at = |du: f32| {
        let mut f = Fragment::default();
        f.tc[1] = [0.3, 0.6];
        f.tc_grad[1] = [du, 0.0, 0.0, du];
        lookup.sample(&f).1
    };
    // Magnified: one bilinear tap of level 0.
    assert_eq!(at(0.5 / 64.0), 4);
    // λ = 1.5: levels 1 and 2 blended.
    assert_eq!(at(2f32.powf(1.5) / 64.0), 8);
    // λ = 1 exactly: on level 1, one tap.
    assert_eq!(at(2.0 / 64.0), 4);
    // Far minified: clamped to the last level.
    assert_eq!(at(1.0), 4);
    cfg.mag_filter = Filter::Nearest;
    cfg.min_filter = Filter::Nearest;
    let lookup = UnitLookup::new(Arc::new(Sampler::decoded(&mem, &cfg).unwrap()), 0, 0);
    let mut f = Fragment::default();
    f.tc[0] = [0.3, 0.6];
    f.tc_grad[0] = [2f32.powf(1.5) / 64.0, 0.0, 0.0, 0.0];
    assert_eq!(lookup.sample(&f).1, 2, "nearest on two levels");
    f.tc_grad[0] = [0.1 / 64.0, 0.0, 0.0, 0.0];
    assert_eq!(lookup.sample(&f).1, 1);
}

/// The batch routines against the per-fragment ones and the generic sampler (the oracle):
/// every format of the texel decoder's families, every filter combination (one level and
/// mipmapped, nearest and linear min/mag/mip), every wrap mode on each axis, cube maps (the
/// generic batch), random coordinates and gradients including NaN, infinities, huge,
/// negative and subnormal values, and batch lengths 1..=16 plus longer slices (processed in
/// chunks) and an `out` shorter than the batch. Colours and texel counts must be equal.
#[test]
fn batch_lookups_equal_per_fragment_lookups() {
    let mut rng = Rng(0xBA7C_4009);
    let mem = memory(&mut rng);
    let formats = [
        TextureFormat::Rgba8,
        TextureFormat::Rgb8,
        TextureFormat::Rgb5a1,
        TextureFormat::Rgb565,
        TextureFormat::Rgba4,
        TextureFormat::Ia8,
        TextureFormat::Hilo8,
        TextureFormat::I8,
        TextureFormat::A8,
        TextureFormat::Ia4,
        TextureFormat::I4,
        TextureFormat::A4,
        TextureFormat::Etc1,
        TextureFormat::Etc1a4,
    ];
    let wraps = [
        WrapMode::ClampToEdge,
        WrapMode::ClampToBorder,
        WrapMode::Repeat,
        WrapMode::MirroredRepeat,
    ];
    let mut kinds = std::collections::BTreeMap::new();
    let mut counts = std::collections::BTreeSet::new();
    let mut frags = Vec::new();
    for case in 0..1200 {
        let mut cfg = random_config(&mut rng);
        let fmt = formats[case % formats.len()];
        cfg.format = Some(fmt);
        cfg.format_id = fmt.id();
        // Cover every pair of the four main wrap modes systematically (random_config also
        // draws the odd encodings).
        if case % 2 == 0 {
            cfg.wrap_s = wraps[(case / 2) % 4];
            cfg.wrap_t = wraps[(case / 8) % 4];
        }
        // Every filter combination on both the one-level and the mipmapped routines.
        let lin = |b: usize| {
            if b & 1 == 1 {
                Filter::Linear
            } else {
                Filter::Nearest
            }
        };
        if case % 3 != 0 {
            cfg.mag_filter = lin(case / 3);
            cfg.min_filter = lin(case / 6);
            cfg.mip_filter = lin(case / 12);
        }
        if case % 50 == 7 {
            cfg.texture_type = TextureType::CubeMap;
            cfg.width = cfg.width.max(cfg.height);
            cfg.height = cfg.width;
        }
        let Ok(sampler) = Sampler::decoded(&mem, &cfg) else {
            continue;
        };
        let (unit, tc) = (case % 3, (case / 3) % 3);
        let lookup = UnitLookup::new(Arc::new(sampler), unit, tc);
        *kinds.entry(lookup.kind()).or_insert(0) += 1;
        for len in (1..=16).chain([17, 31, 40]) {
            frags.clear();
            for _ in 0..len {
                let mut f = fragment(&mut rng, tc);
                f.tc0_w = rng.coord();
                f.tc0_w_grad = [rng.grad(), rng.grad()];
                // Sometimes the same fragment repeated, or a subnormal derivative.
                if rng.next().is_multiple_of(16) {
                    f.tc_grad[tc][0] = f32::from_bits(rng.next() & 0x007F_FFFF);
                }
                frags.push(f);
            }
            let mut want = vec![[0u8; 4]; len];
            let mut want_texels = 0u64;
            for (w, f) in want.iter_mut().zip(&frags) {
                let (c, n) = lookup.sample(f);
                assert_eq!((c, n), lookup.sample_reference(f), "case {case}");
                *w = c;
                want_texels += u64::from(n);
                counts.insert(n);
            }
            let mut got = vec![[0xEEu8; 4]; len + 3];
            let texels = lookup.sample_batch(&frags, &mut got);
            assert_eq!(
                (&got[..len], texels),
                (&want[..], want_texels),
                "case {case} ({}) len {len}: {cfg:?}",
                lookup.kind()
            );
            assert_eq!(&got[len..], &[[0xEE; 4]; 3], "wrote past the batch");
            let mut reference = vec![[0u8; 4]; len];
            let rt = lookup.sample_batch_reference(&frags, &mut reference);
            assert_eq!((&reference[..], rt), (&want[..], want_texels));
            // An `out` shorter than the batch: only its fragments are sampled and counted.
            let short = len / 2;
            let mut part = vec![[0u8; 4]; short];
            let pt = lookup.sample_batch(&frags, &mut part);
            let part_texels: u64 = frags[..short]
                .iter()
                .map(|f| u64::from(lookup.sample(f).1))
                .sum();
            assert_eq!((&part[..], pt), (&want[..short], part_texels));
        }
    }
    for k in [
        "one level bilinear",
        "one level nearest",
        "mipmapped",
        "generic",
    ] {
        assert!(kinds.contains_key(k), "{k} never chosen: {kinds:?}");
    }
    for n in [1, 2, 4, 8] {
        assert!(counts.contains(&n), "{n} texels never counted: {counts:?}");
    }
}

/// [`inner_lane`] equals [`inner_taps`] wherever the latter answers, and answers exactly
/// there: every level size of the test set and both lane kinds, on special values, values
/// around the inner-range ends and the repeat bound, and random bit patterns.
#[test]
fn inner_lanes_equal_inner_taps() {
    let mut rng = Rng(0x1A7E_0001);
    let one = (1u32 << FILTER_FRAC_BITS) as f32;
    for n in [1u32, 2, 3, 8, 16, 24, 40, 64, 128, 1024, 2047] {
        let lv = LevelView::new(0, n, n);
        let mut xs = vec![
            f32::NAN,
            -f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            0.0,
            -0.0,
            f32::MAX,
            f32::MIN,
            f32::from_bits(1),
            lv.in_s,
            lv.in_s - 1.0,
            FLOOR_SMALL_LIMIT,
            -FLOOR_SMALL_LIMIT,
        ];
        for base in [
            0.0,
            lv.in_s,
            lv.in_s - one,
            FLOOR_SMALL_LIMIT,
            -FLOOR_SMALL_LIMIT,
        ] {
            let mut up = base;
            let mut down = base;
            for _ in 0..8 {
                up = f32::from_bits(up.to_bits().wrapping_add(1));
                down = f32::from_bits(down.to_bits().wrapping_sub(1));
                xs.extend([up, down, -up, -down]);
            }
        }
        for _ in 0..4000 {
            xs.push(f32::from_bits(rng.next()));
            xs.push((rng.unit() * 3.0 - 1.0) * lv.hi_s);
        }
        for &x in &xs {
            let check = |lane: (bool, u32, u32), taps: Option<(u32, u32)>, k: &str| match taps {
                Some((s0, f)) => assert_eq!(lane, (true, s0, f), "{k} n {n} x {x:e}"),
                None => assert!(!lane.0, "{k} n {n} x {x:e}"),
            };
            check(
                inner_lane::<EDGE>(x, lv.in_s, lv.last_s),
                inner_taps::<EDGE>(x, lv.in_s, lv.last_s),
                "edge",
            );
            check(
                inner_lane::<ANY>(x, lv.in_s, lv.last_s),
                inner_taps::<ANY>(x, lv.in_s, lv.last_s),
                "any",
            );
            if n.is_power_of_two() {
                check(
                    inner_lane::<REPEAT>(x, lv.in_s, lv.last_s),
                    inner_taps::<REPEAT>(x, lv.in_s, lv.last_s),
                    "repeat",
                );
            }
        }
    }
}

mod pipeline {
    //! Whole draws through [`PixelPipeline`]: texel counts and a draw that samples its own
    //! colour buffer, at 1, 2 and 8 threads and on the reference path.

    use super::Rng;
    use crate::memory::{PhysMem, VRAM};
    use crate::pixel::fragment::{PixelPath, PixelPipeline};
    use crate::vertex::{OutputVertex, ScreenVertex};

    /// Colour buffer 400×240 RGBA8 at VRAM start, D24S8 depth 1 MiB later, no depth test, no
    /// blending; stage 0 replaces with texture 0 (unit 0: `w`×`h` RGBA8 at `tex` with PARAM
    /// word `param` and LOD word `lod`); stages 1-5 pass through.
    fn regs(tex: u32, w: u32, h: u32, param: u32, lod: u32) -> Box<[u32; 0x300]> {
        let mut r = Box::new([0u32; 0x300]);
        r[0x11D] = VRAM.base >> 3;
        r[0x11C] = (VRAM.base + 0x10_0000) >> 3;
        r[0x117] = 0;
        r[0x116] = 3;
        r[0x11E] = 400 | (239 << 12) | (1 << 24);
        r[0x112] = 0xF;
        r[0x113] = 0xF;
        r[0x114] = 3;
        r[0x115] = 3;
        r[0x04D] = 0xBF_0000;
        r[0x06D] = 1;
        r[0x107] = 0xF << 8;
        r[0x080] = 1;
        r[0x082] = h | (w << 16);
        r[0x083] = param;
        r[0x084] = lod;
        r[0x085] = tex >> 3;
        r[0x08E] = 0;
        r[0x0C0] = 3 | (3 << 16);
        r[0x0C1] = 0;
        r[0x0C2] = 0;
        for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            r[base] = 15 | (15 << 16);
        }
        r
    }

    fn vertex(x: f32, y: f32, u: f32, v: f32) -> ScreenVertex {
        ScreenVertex {
            x,
            y,
            z_over_w: -0.5,
            inv_w: 1.0,
            attrs: OutputVertex {
                color: [1.0; 4],
                tc0: [u, v],
                ..Default::default()
            },
        }
    }

    /// The whole 400×240 target as two triangles, texture coordinates 0..`s` across.
    fn screen(s: f32) -> Vec<[ScreenVertex; 3]> {
        let a = vertex(0.0, 0.0, 0.0, 0.0);
        let b = vertex(400.0, 0.0, s, 0.0);
        let c = vertex(0.0, 240.0, 0.0, s);
        let d = vertex(400.0, 240.0, s, s);
        vec![[a, b, c], [c, b, d]]
    }

    /// Runs one draw; returns (colour buffer bytes, fragments, texels).
    fn draw(
        mem: &PhysMem,
        regs: &[u32; 0x300],
        tris: &[[ScreenVertex; 3]],
        threads: usize,
        path: PixelPath,
    ) -> (Vec<u8>, u64, u64) {
        let mut mem = mem.clone();
        let mut p = PixelPipeline::for_draw(&mem, regs);
        p.set_path(path);
        p.draw_triangles(
            &mut mem,
            tris,
            &mut (),
            threads,
            &mut crate::pixel::fragment::parallel::ShareStores::default(),
        );
        let mut out = vec![0u8; 400 * 240 * 4];
        mem.read(VRAM.base, &mut out).unwrap();
        let s = p.stats();
        (out, s.fragments, s.texels)
    }

    const RUNS: [(usize, PixelPath); 4] = [
        (1, PixelPath::Specialized),
        (2, PixelPath::Specialized),
        (8, PixelPath::Specialized),
        (1, PixelPath::Reference),
    ];

    fn noise(rng: &mut Rng, len: usize) -> Vec<u8> {
        (0..len).map(|_| rng.next() as u8).collect()
    }

    #[test]
    fn texels_fetched_per_filter_at_every_thread_count() {
        let mut rng = Rng(0xC0FFEE);
        let tex = VRAM.base + 0x20_0000;
        let mut mem = PhysMem::new();
        mem.write(tex, &noise(&mut rng, 0x8000)).unwrap();
        let linear = 0b110;
        // (PARAM, LOD, texture coordinate span, texels per fragment or None for "between").
        let cases: [(u32, u32, f32, Option<u64>); 4] = [
            // Nearest, magnified: 1 texel.
            (0, 0, 1.0, Some(1)),
            // Bilinear, magnified: 4.
            (linear, 0, 1.0, Some(4)),
            // Bilinear over 4 levels (64×64 → 8×8), linear mip filter, 64 copies across: 17
            // texels per pixel in y, λ ≈ 4.1 clamped to level 3 alone: 4 texels.
            (linear | (1 << 24), 3 << 16, 64.0, Some(4)),
            // 1.5 texels per pixel in y (λ = log2 1.5): levels 0 and 1 blended, 8 texels.
            (linear | (1 << 24), 3 << 16, 1.5 * 240.0 / 64.0, Some(8)),
        ];
        for (param, lod, span, per) in cases {
            let r = regs(tex, 64, 64, param, lod);
            let tris = screen(span);
            let runs: Vec<_> = RUNS
                .iter()
                .map(|&(threads, path)| draw(&mem, &r, &tris, threads, path))
                .collect();
            let (_, fragments, texels) = &runs[0];
            assert_eq!(*fragments, 400 * 240);
            if let Some(per) = per {
                assert_eq!(*texels, per * fragments, "PARAM {param:#x} LOD {lod:#x}");
            }
            for (k, run) in runs.iter().enumerate() {
                assert!(
                    run == &runs[0],
                    "run {:?} differs (PARAM {param:#x})",
                    RUNS[k]
                );
            }
        }
    }

    #[test]
    fn a_draw_sampling_its_own_colour_buffer_reads_it_as_at_draw_start() {
        let mut rng = Rng(0xFEED);
        // A 64×64 RGBA8 texture at the colour buffer's address, bilinear and repeating over
        // 3×3 copies, so the draw overwrites texels it still samples later.
        let param = 0b110 | (2 << 8) | (2 << 12);
        let mut mem = PhysMem::new();
        let before = noise(&mut rng, 400 * 240 * 4);
        mem.write(VRAM.base, &before).unwrap();
        let own = regs(VRAM.base, 64, 64, param, 0);
        // The same draw reading a copy of the buffer's bytes elsewhere (never written).
        let copy_at = VRAM.base + 0x20_0000;
        mem.write(copy_at, &before[..64 * 64 * 4]).unwrap();
        let copy = regs(copy_at, 64, 64, param, 0);
        let tris = screen(3.0);
        let want = draw(&mem, &copy, &tris, 1, PixelPath::Reference);
        assert!(want.0 != before, "the draw changes the buffer");
        for (threads, path) in RUNS {
            let got = draw(&mem, &own, &tris, threads, path);
            assert!(got == want, "{threads} thread(s), {path:?}");
        }
    }

    /// [`TextureUnits`]' `sample_batch` against its per-fragment `sample_counted` on both
    /// paths and for a unit without a sampler (every texel reads 0, none counted).
    #[test]
    fn texture_units_batch_equals_per_fragment_sampling() {
        use crate::pixel::fragment::{TextureSampler, TextureUnits};
        use crate::pixel::raster::Fragment;
        let mut rng = Rng(0x0B47_C400);
        let tex = VRAM.base + 0x20_0000;
        let mut mem = PhysMem::new();
        mem.write(tex, &noise(&mut rng, 0x8000)).unwrap();
        let linear = 0b110;
        let repeat = (2 << 8) | (2 << 12);
        for (param, lod) in [
            (0, 0),
            (linear, 0),
            (linear | repeat, 0),
            (repeat, 0),
            (linear | (1 << 24), 3 << 16),
            (linear | repeat | (1 << 24), 3 << 16),
            (repeat | (1 << 24), 3 << 16),
        ] {
            let r = regs(tex, 64, 64, param, lod);
            for path in [PixelPath::Specialized, PixelPath::Reference] {
                let mut units = TextureUnits::from_regs(&mem, &r, [true, true, false]);
                units.set_path(path);
                for len in 1..=16 {
                    let frags: Vec<Fragment> = (0..len)
                        .map(|_| {
                            let mut f = Fragment::default();
                            let c = |rng: &mut Rng| (rng.next() % 4096) as f32 / 1024.0 - 1.5;
                            f.tc[0] = [c(&mut rng), c(&mut rng)];
                            let d = (rng.next() % 64) as f32 / 256.0 / 64.0;
                            f.tc_grad[0] = [d, 0.0, 0.0, d * 1.5];
                            f
                        })
                        .collect();
                    for unit in [0, 1, 2] {
                        let mut want = Vec::new();
                        let mut want_texels = 0u64;
                        for f in &frags {
                            let (c, n) = units.sample_counted(&mem, unit, f);
                            want.push(c);
                            want_texels += u64::from(n);
                        }
                        let mut got = vec![[9u8; 4]; len];
                        let texels = units.sample_batch(&mem, unit, &frags, &mut got);
                        assert_eq!(
                            (got, texels),
                            (want, want_texels),
                            "PARAM {param:#x} {path:?} unit {unit} len {len}"
                        );
                    }
                }
            }
        }
    }
}
