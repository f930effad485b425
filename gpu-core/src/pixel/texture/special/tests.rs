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
    c.wrap_t = if rng.next() % 2 == 0 {
        c.wrap_s
    } else {
        WrapMode::from_bits(rng.next())
    };
    c.mag_filter = filter(rng.next());
    c.min_filter = if rng.next() % 3 == 0 {
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
