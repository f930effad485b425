// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Sampler tests: expected values are computed by hand in the comments.

use super::*;
use crate::memory::VRAM;
use crate::pixel::color::encode_rgba8;
use crate::pixel::texture::config::{ShadowConfig, WrapMode};
use crate::pixel::tiling::tiled_offset;

const BASE: u32 = VRAM.base;

/// Writes a tiled RGBA8 level at `addr` whose texel (x, y_memory) is `f(x, y)`.
fn write_rgba8(mem: &mut PhysMem, addr: u32, w: u32, h: u32, f: impl Fn(u32, u32) -> Rgba) {
    for y in 0..h {
        for x in 0..w {
            mem.write(addr + tiled_offset(x, y, w, 4), &encode_rgba8(f(x, y)))
                .unwrap();
        }
    }
}

/// 8×8 texture with texel (x, ym) = (30·x, 30·ym, 0, 255).
fn gradient_texture() -> (PhysMem, TextureConfig) {
    let mut mem = PhysMem::new();
    write_rgba8(&mut mem, BASE, 8, 8, |x, y| {
        [30 * x as u8, 30 * y as u8, 0, 255]
    });
    (mem, TextureConfig::new_2d(BASE, 8, 8, TextureFormat::Rgba8))
}

fn centre(i: i32, n: u32) -> f32 {
    (i as f32 + 0.5) / n as f32
}

#[test]
fn nearest_reads_flipped_rows() {
    let (mem, cfg) = gradient_texture();
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // v = 0 is the bottom: texel row t lives in memory row 7 − t.
    assert_eq!(
        s.sample_2d(centre(3, 8), centre(0, 8), &Gradients::ZERO),
        [90, 210, 0, 255]
    );
    assert_eq!(
        s.sample_2d(centre(3, 8), centre(7, 8), &Gradients::ZERO),
        [90, 0, 0, 255]
    );
    assert_eq!(
        s.sample_2d(centre(0, 8), centre(5, 8), &Gradients::ZERO),
        [0, 60, 0, 255]
    );
}

#[test]
fn wrap_modes_at_sample_level() {
    let (mem, mut cfg) = gradient_texture();
    cfg.border = [1, 2, 3, 4];
    let v = centre(7, 8); // memory row 0 → G = 0
    let cases = [
        // (mode, u, expected texel x or None for border)
        (WrapMode::ClampToEdge, -0.3, Some(0)),
        (WrapMode::ClampToEdge, 1.7, Some(7)),
        (WrapMode::ClampToBorder, -0.01, None),
        (WrapMode::ClampToBorder, 1.0, None),
        (WrapMode::ClampToBorder, 0.99, Some(7)),
        (WrapMode::Repeat, 1.2, Some(1)),  // floor(9.6) = 9 → 1
        (WrapMode::Repeat, -0.1, Some(7)), // floor(−0.8) = −1 → 7
        (WrapMode::MirroredRepeat, 1.2, Some(6)), // 9 → 2·8 − 1 − 9 = 6
        (WrapMode::MirroredRepeat, -0.1, Some(0)), // −1 → 15 → 0
        (WrapMode::EdgeOrRepeat, -0.1, Some(7)),
        (WrapMode::EdgeOrRepeat, 1.5, Some(7)),
        (WrapMode::BorderOrRepeat, -0.1, Some(7)),
        (WrapMode::BorderOrRepeat, 1.5, None),
        (WrapMode::Repeat6, 1.2, Some(1)),
        (WrapMode::Repeat7, 1.2, Some(1)),
    ];
    for (mode, u, expect) in cases {
        cfg.wrap_s = mode;
        let s = Sampler::from_memory(&mem, &cfg).unwrap();
        let got = s.sample_2d(u, v, &Gradients::ZERO);
        let want = match expect {
            Some(x) => [30 * x as u8, 0, 0, 255],
            None => [1, 2, 3, 4],
        };
        assert_eq!(got, want, "{mode:?} u={u}");
    }
    // Wrap in t uses the t mode: v = 1.2 with repeat → t = 1 → memory row 6.
    cfg.wrap_s = WrapMode::ClampToEdge;
    cfg.wrap_t = WrapMode::Repeat;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(
        s.sample_2d(centre(2, 8), 1.2, &Gradients::ZERO),
        [60, 180, 0, 255]
    );
}

#[test]
fn bilinear_weights() {
    let (mem, mut cfg) = gradient_texture();
    cfg.mag_filter = Filter::Linear;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // u·8 − 0.5 = 0.75 → texels x = 0 and 1 with weights 64/256 and 192/256:
    // R = 0·0.25 + 30·0.75 = 22.5, rounded to 23. v at the centre of t = 3 (memory row 4):
    // G = 120.
    assert_eq!(
        s.sample_2d(1.25 / 8.0, centre(3, 8), &Gradients::ZERO),
        [23, 120, 0, 255]
    );
    // v·8 − 0.5 = 3.5: rows t = 3 (ym 4, G 120) and t = 4 (ym 3, G 90) half each: 105
    // (the sum is exact, the rounding constant adds only half a unit: 105.5 → 105).
    assert_eq!(
        s.sample_2d(1.25 / 8.0, 0.5, &Gradients::ZERO),
        [23, 105, 0, 255]
    );
    // Exactly on a texel centre: no blending.
    assert_eq!(
        s.sample_2d(centre(5, 8), centre(2, 8), &Gradients::ZERO),
        [150, 150, 0, 255]
    );
}

#[test]
fn bilinear_with_border_and_nearest_differ() {
    let (mem, mut cfg) = gradient_texture();
    cfg.mag_filter = Filter::Linear;
    cfg.wrap_s = WrapMode::ClampToBorder;
    cfg.border = [200, 0, 0, 0];
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // u = 0: u·8 − 0.5 = −0.5 → texel −1 (border) and texel 0, half each.
    // R = (200 + 0)/2 = 100; G = (0 + 120)/2 = 60; A = (0 + 255)/2 = 127.5 → 128.
    assert_eq!(
        s.sample_2d(0.0, centre(3, 8), &Gradients::ZERO),
        [100, 60, 0, 128]
    );
    cfg.mag_filter = Filter::Nearest;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(
        s.sample_2d(0.0, centre(3, 8), &Gradients::ZERO),
        [0, 120, 0, 255]
    );
}

/// 16×16 texture, level 0 red, level 1 (8×8) green, laid out consecutively.
fn mip_texture(max_level: u32) -> (PhysMem, TextureConfig) {
    let mut mem = PhysMem::new();
    write_rgba8(&mut mem, BASE, 16, 16, |_, _| [255, 0, 0, 255]);
    write_rgba8(&mut mem, BASE + 16 * 16 * 4, 8, 8, |_, _| [0, 255, 0, 255]);
    let mut cfg = TextureConfig::new_2d(BASE, 16, 16, TextureFormat::Rgba8);
    cfg.lod.max_level = max_level;
    (mem, cfg)
}

#[test]
fn lambda_and_level_selection() {
    let (mem, cfg) = mip_texture(1);
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    let red = [255, 0, 0, 255];
    let green = [0, 255, 0, 255];
    // One texel per pixel: λ = 0 → magnification, level 0.
    let g1 = Gradients::uv(1.0 / 16.0, 0.0, 0.0, 1.0 / 16.0);
    assert_eq!(s.lambda(&g1), 0.0);
    assert_eq!(s.sample_2d(0.5, 0.5, &g1), red);
    // Two texels per pixel: λ = 1 → level 1.
    let g2 = Gradients::uv(2.0 / 16.0, 0.0, 0.0, 0.0);
    assert_eq!(s.lambda(&g2), 1.0);
    assert_eq!(s.sample_2d(0.5, 0.5, &g2), green);
    // The y derivative alone can select the level too (max of the two lengths).
    let g3 = Gradients::uv(0.0, 0.0, 0.0, 4.0 / 16.0);
    assert_eq!(s.lambda(&g3), 2.0);
    assert_eq!(s.lod(2.0), 1.0, "clamped to the last level");
    assert_eq!(s.sample_2d(0.5, 0.5, &g3), green);
}

#[test]
fn mip_filter_nearest_vs_linear_and_bias() {
    let (mem, mut cfg) = mip_texture(1);
    cfg.lod.bias = 0.5;
    let g = Gradients::uv(1.0 / 16.0, 0.0, 0.0, 0.0); // λ = 0, biased 0.5: minified
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // Nearest mip: lod 0.5 rounds down to level 0.
    assert_eq!(s.sample_2d(0.5, 0.5, &g), [255, 0, 0, 255]);
    cfg.mip_filter = Filter::Linear;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // Linear mip: half of each level: (255·128 + 0·128 + 128) >> 8 = 128.
    assert_eq!(s.sample_2d(0.5, 0.5, &g), [128, 128, 0, 255]);
    // A quarter of the way: lod 0.25 → weight 64: R = (255·192 + 128) >> 8 = 191, G = 64.
    cfg.lod.bias = 0.25;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(s.sample_2d(0.5, 0.5, &g), [191, 64, 0, 255]);
    // Negative bias turns λ = 1 into magnification.
    cfg.lod.bias = -1.0;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(
        s.sample_2d(0.5, 0.5, &Gradients::uv(2.0 / 16.0, 0.0, 0.0, 0.0)),
        [255, 0, 0, 255]
    );
}

#[test]
fn min_and_max_level_clamps() {
    let (mem, mut cfg) = mip_texture(1);
    cfg.lod.min_level = 1;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // Even magnified, the lowest allowed level is 1.
    assert_eq!(s.sample_2d(0.5, 0.5, &Gradients::ZERO), [0, 255, 0, 255]);
    // max_level 0: level 1 is never used.
    let (mem, cfg) = mip_texture(0);
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(s.layout().count, 1);
    assert_eq!(
        s.sample_2d(0.5, 0.5, &Gradients::uv(8.0, 0.0, 0.0, 0.0)),
        [255, 0, 0, 255]
    );
}

#[test]
fn minification_uses_min_filter_on_single_level() {
    let (mem, mut cfg) = gradient_texture();
    cfg.mag_filter = Filter::Nearest;
    cfg.min_filter = Filter::Linear;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    let u = 1.25 / 8.0;
    let v = centre(3, 8);
    assert_eq!(s.sample_2d(u, v, &Gradients::ZERO), [30, 120, 0, 255]); // nearest: x = 1
    let minified = Gradients::uv(4.0 / 8.0, 0.0, 0.0, 0.0);
    assert_eq!(s.sample_2d(u, v, &minified), [23, 120, 0, 255]); // linear
}

#[test]
fn cube_face_selection_and_coordinates() {
    let c = cube_coords(1.0, 0.5, -0.25, &Gradients::ZERO);
    // +X: sc = −w = 0.25, tc = −v = −0.5, ma = 1 → s = 0.625, t = 0.25.
    assert_eq!((c.face, c.s, c.t, c.ma), (CubeFace::PosX, 0.625, 0.25, 1.0));
    let c = cube_coords(-2.0, 1.0, 1.0, &Gradients::ZERO);
    // −X: sc = −w = −1, tc = v = 1, ma = −2 → s = 0.75, t = 0.25.
    assert_eq!((c.face, c.s, c.t), (CubeFace::NegX, 0.75, 0.25));
    assert_eq!(
        cube_coords(0.1, 2.0, 0.3, &Gradients::ZERO).face,
        CubeFace::PosY
    );
    assert_eq!(
        cube_coords(0.1, -2.0, 0.3, &Gradients::ZERO).face,
        CubeFace::NegY
    );
    assert_eq!(
        cube_coords(0.1, 0.2, 0.3, &Gradients::ZERO).face,
        CubeFace::PosZ
    );
    assert_eq!(
        cube_coords(0.1, 0.2, -0.3, &Gradients::ZERO).face,
        CubeFace::NegZ
    );
    // Ties go to the later axis (strict comparisons): |u| = |w| selects Z.
    assert_eq!(
        cube_coords(1.0, 0.0, 1.0, &Gradients::ZERO).face,
        CubeFace::PosZ
    );
    // Derivatives: on +Z with ma = 1, s = u/2 + 0.5 → ∂s/∂x = ∂u/∂x / 2.
    let g = Gradients {
        dx: [0.2, 0.0, 0.0],
        dy: [0.0, 0.4, 0.0],
    };
    let c = cube_coords(0.0, 0.0, 1.0, &g);
    assert_eq!((c.ds_dx, c.dt_dy), (0.1, -0.2));
}

#[test]
fn cube_map_sampling_reads_each_face() {
    let mut mem = PhysMem::new();
    let mut regs = [0u32; 0x300];
    regs[0x082] = (8 << 16) | 8;
    regs[0x083] = 1 << 28; // cube map
    regs[0x08E] = 0; // RGBA8
    let colours: [Rgba; 6] = [
        [10, 0, 0, 255],
        [20, 0, 0, 255],
        [30, 0, 0, 255],
        [40, 0, 0, 255],
        [50, 0, 0, 255],
        [60, 0, 0, 255],
    ];
    for (k, c) in colours.iter().enumerate() {
        let addr = BASE + 0x1000 * k as u32;
        write_rgba8(&mut mem, addr, 8, 8, |_, _| *c);
        if k == 0 {
            regs[0x085] = addr >> 3;
        } else {
            regs[0x086 + k - 1] = (addr >> 3) & 0x3F_FFFF;
        }
    }
    let cfg = TextureConfig::from_regs(&regs, 0);
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    let dirs = [
        [1.0, 0.1, 0.2],
        [-1.0, 0.1, 0.2],
        [0.1, 1.0, 0.2],
        [0.1, -1.0, 0.2],
        [0.1, 0.2, 1.0],
        [0.1, 0.2, -1.0],
    ];
    for (d, c) in dirs.iter().zip(colours) {
        assert_eq!(s.sample(d[0], d[1], d[2], &Gradients::ZERO), c, "{d:?}");
    }
}

#[test]
fn shadow_compare() {
    let mut mem = PhysMem::new();
    // Texel bytes A, B, G, R = depth 0x800000 big-endian in A, B, G and intensity 200 in R.
    write_rgba8(&mut mem, BASE, 8, 8, |_, _| [200, 0x00, 0x00, 0x80]);
    let mut cfg = TextureConfig::new_2d(BASE, 8, 8, TextureFormat::Rgba8);
    cfg.texture_type = TextureType::Shadow2D;
    cfg.shadow.orthographic = true;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // z = 0.4 → 6710886 ≤ 8388608: lit (R). z = 0.6 → 10066329 > ref: shadowed.
    assert_eq!(s.sample(0.5, 0.5, 0.4, &Gradients::ZERO), [200; 4]);
    assert_eq!(s.sample(0.5, 0.5, 0.6, &Gradients::ZERO), [0; 4]);
    // A bias of 0x300000 brings 0.6 below the reference.
    cfg.shadow.bias = 0x30_0000;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(s.sample(0.5, 0.5, 0.6, &Gradients::ZERO), [200; 4]);
    // Perspective: u, v are divided by w (w = 0.4 → u = 0.2/0.4 = 0.5).
    cfg.shadow = ShadowConfig {
        orthographic: false,
        bias: 0,
    };
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(s.sample(0.2, 0.2, 0.4, &Gradients::ZERO), [200; 4]);
}

#[test]
fn projection_divides_by_w() {
    let (mem, mut cfg) = gradient_texture();
    cfg.texture_type = TextureType::Projection2D;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    // (u, v, w) = (0.5·c3, 0.5·c3', 0.5) samples like (c3, c3').
    let direct = TextureConfig {
        texture_type: TextureType::Tex2D,
        ..cfg
    };
    let d = Sampler::from_memory(&mem, &direct).unwrap();
    let (u, v) = (centre(3, 8), centre(6, 8));
    assert_eq!(
        s.sample(u * 0.5, v * 0.5, 0.5, &Gradients::ZERO),
        d.sample_2d(u, v, &Gradients::ZERO)
    );
}

#[test]
fn disabled_type_is_transparent_black() {
    let (mem, mut cfg) = gradient_texture();
    cfg.texture_type = TextureType::Disabled;
    let s = Sampler::from_memory(&mem, &cfg).unwrap();
    assert_eq!(s.sample(0.5, 0.5, 1.0, &Gradients::ZERO), [0; 4]);
}

#[test]
fn construction_errors() {
    let mem = PhysMem::new();
    let mut cfg = TextureConfig::new_2d(BASE, 8, 8, TextureFormat::Rgba8);
    cfg.format = None;
    cfg.format_id = 15;
    assert_eq!(
        Sampler::from_memory(&mem, &cfg).unwrap_err(),
        TextureError::InvalidFormat(15)
    );
    let cfg = TextureConfig::new_2d(BASE, 0, 8, TextureFormat::Rgba8);
    assert!(matches!(
        Sampler::decoded(&mem, &cfg),
        Err(TextureError::EmptySize { .. })
    ));
    // The last 4 KiB of VRAM cannot hold a 64×64 RGBA8 texture.
    let addr = VRAM.base + VRAM.size - 0x1000;
    let cfg = TextureConfig::new_2d(addr, 64, 64, TextureFormat::Rgba8);
    assert_eq!(
        Sampler::from_memory(&mem, &cfg).unwrap_err(),
        TextureError::Unmapped {
            addr,
            len: 64 * 64 * 4
        }
    );
}

#[test]
fn absurd_coordinates_never_panic() {
    let (mem, mut cfg) = gradient_texture();
    for mode in [
        WrapMode::Repeat,
        WrapMode::MirroredRepeat,
        WrapMode::ClampToBorder,
    ] {
        for filter in [Filter::Nearest, Filter::Linear] {
            cfg.wrap_s = mode;
            cfg.wrap_t = mode;
            cfg.mag_filter = filter;
            cfg.min_filter = filter;
            cfg.mip_filter = filter;
            let s = Sampler::from_memory(&mem, &cfg).unwrap();
            for x in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e30, -1e30, 0.0] {
                let g = Gradients::uv(x, x, x, x);
                let _ = s.sample_2d(x, -x, &g);
                let _ = s.sample(x, x, x, &g);
                let _ = s.sample_cube(x, 0.5, x, &g);
            }
        }
    }
}

/// Deterministic pseudo-random bytes (xorshift).
fn noise(len: usize, mut seed: u32) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed as u8
        })
        .collect()
}

#[test]
fn memory_and_decoded_sources_agree_for_every_format() {
    let mut mem = PhysMem::new();
    mem.write(BASE, &noise(64 * 1024, 0x1234_5678)).unwrap();
    for format in TextureFormat::ALL {
        let mut cfg = TextureConfig::new_2d(BASE, 32, 16, format);
        cfg.lod.max_level = 1;
        cfg.wrap_s = WrapMode::Repeat;
        cfg.wrap_t = WrapMode::MirroredRepeat;
        cfg.mag_filter = Filter::Linear;
        cfg.mip_filter = Filter::Linear;
        let a = Sampler::from_memory(&mem, &cfg).unwrap();
        let b = Sampler::decoded(&mem, &cfg).unwrap();
        for i in 0..200 {
            let u = (i as f32 * 0.137).fract() * 3.0 - 1.0;
            let v = (i as f32 * 0.291).fract() * 3.0 - 1.0;
            let g = Gradients::uv((i % 5) as f32 / 32.0, 0.0, 0.0, (i % 3) as f32 / 16.0);
            assert_eq!(
                a.sample_2d(u, v, &g),
                b.sample_2d(u, v, &g),
                "{format:?} {u} {v}"
            );
        }
    }
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Arbitrary texture registers, coordinates and derivatives never panic.
        #[test]
        fn arbitrary_texture_state_never_panics(
            words in proptest::collection::vec(any::<u32>(), 16),
            coords in proptest::collection::vec(any::<f32>(), 9),
            unit in 0usize..4,
        ) {
            let mut mem = PhysMem::new();
            mem.write(BASE, &noise(0x1_0000, words[0] | 1)).unwrap();
            let mut regs = [0u32; 0x300];
            for (k, id) in (0x080..=0x09E).enumerate() {
                regs[id] = words[k % words.len()].rotate_left(k as u32);
            }
            // Keep the texture small and in VRAM in most cases so that sampling really runs.
            if words[1] & 1 == 0 {
                for (dim, addr) in [(0x082, 0x085), (0x092, 0x095), (0x09A, 0x09D)] {
                    regs[dim] &= 0x007F_007F;
                    regs[addr] = (BASE >> 3) + (regs[addr] & 0x3FF);
                }
            }
            let cfg = TextureConfig::from_regs(&regs, unit);
            let g = Gradients { dx: [coords[3], coords[4], coords[5]], dy: [coords[6], coords[7], coords[8]] };
            if let Ok(s) = Sampler::from_memory(&mem, &cfg) {
                let a = s.sample(coords[0], coords[1], coords[2], &g);
                if let Ok(d) = Sampler::decoded(&mem, &cfg) {
                    prop_assert_eq!(a, d.sample(coords[0], coords[1], coords[2], &g));
                }
            }
            let _ = crate::pixel::texture::decode_texture(&mem, &cfg, CubeFace::NegZ, (words[2] & 7) as usize);
        }
    }
}

#[test]
fn citra_swrast_mode_is_nearest_base_level_truncating() {
    let (mem, mut cfg) = gradient_texture();
    cfg.wrap_s = WrapMode::Repeat;
    cfg.mag_filter = Filter::Linear;
    cfg.min_filter = Filter::Linear;
    let hw = Sampler::from_memory(&mem, &cfg).unwrap();
    let citra_cfg = cfg.with_mode(RenderMode::CitraSwrast);
    assert_eq!(
        (
            citra_cfg.mag_filter,
            citra_cfg.min_filter,
            citra_cfg.lod.max_level
        ),
        (Filter::Nearest, Filter::Nearest, 0)
    );
    let citra = Sampler::from_memory(&mem, &citra_cfg).unwrap();
    let v = centre(7, 8); // memory row 0 → G = 0
    // u = -0.05: u·8 = -0.4 truncates to texel 0 (Citra SW); flooring would give -1 → 7.
    assert_eq!(citra.sample_2d(-0.05, v, &Gradients::ZERO), [0, 0, 0, 255]);
    // Between texel centres 2 and 3 (u·8 = 3.0 exactly: texel 3), no blending.
    assert_eq!(
        citra.sample_2d(3.0 / 8.0, v, &Gradients::ZERO),
        [90, 0, 0, 255]
    );
    // The hardware filters there: half of texel 2 and half of texel 3.
    assert_eq!(
        hw.sample_2d(3.0 / 8.0, v, &Gradients::ZERO),
        [75, 0, 0, 255]
    );
}
