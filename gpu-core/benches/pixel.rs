//! Criterion benchmarks of the pixel pipeline's stages (issue 14): triangle setup, raster
//! coverage and interpolation, the colour combiners, texture sampling per format and filter
//! (specialised routine and the generic sampler), the procedural texture, fragment lighting,
//! and a whole batch through the pixel pipeline at 1 and 2 threads.
//!
//! Run: `cargo bench -p gpu-core --bench pixel` (add `-- NAME` to filter).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::lut::LookupTables;
use gpu_core::memory::{PhysMem, VRAM};
use gpu_core::pixel::fragment::parallel::ShareStores;
use gpu_core::pixel::fragment::{
    FragmentHooks, PixelPath, PixelPipeline, TextureSampler, TextureUnits,
};
use gpu_core::pixel::raster::{
    FRAGMENT_BATCH, Fragment, RasterConfig, rasterize_triangle, rasterize_triangle_reference,
};
use gpu_core::pixel::stages::FixedFunctionStages;
use gpu_core::pixel::tev::{BatchTable, TevConfig, TevInputs, TevProgram};
use gpu_core::vertex::{OutputVertex, ScreenVertex};

/// A 400×240 RGBA8 / D24S8 render target in VRAM, depth test off, no blending, stage 0
/// replacing with the primary colour.
fn target_regs() -> Box<[u32; 0x300]> {
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
            color: [0.8, 0.5, 0.2, 1.0],
            tc0: [u, v],
            ..Default::default()
        },
    }
}

/// 64 quads of 24×24 pixels spread over the target (128 triangles).
fn sprite_batch() -> Vec<[ScreenVertex; 3]> {
    let mut tris = Vec::new();
    for k in 0..64 {
        let (x, y) = ((k % 16) as f32 * 24.0 + 4.0, (k / 16) as f32 * 56.0 + 8.0);
        let (a, b, c, d) = (
            vertex(x, y, 0.0, 0.0),
            vertex(x + 24.0, y, 1.0, 0.0),
            vertex(x, y + 24.0, 0.0, 1.0),
            vertex(x + 24.0, y + 24.0, 1.0, 1.0),
        );
        tris.push([a, b, c]);
        tris.push([c, b, d]);
    }
    tris
}

fn raster(c: &mut Criterion) {
    let regs = target_regs();
    let cfg = RasterConfig::from_regs(&regs);
    // Setup-dominated: a one-pixel triangle.
    let tiny = [
        vertex(10.2, 10.2, 0.0, 0.0),
        vertex(11.2, 10.2, 0.0, 0.0),
        vertex(10.2, 11.2, 0.0, 0.0),
    ];
    c.bench_function("raster/setup (1-pixel triangle)", |b| {
        b.iter(|| {
            let mut n = 0u32;
            rasterize_triangle(&cfg, black_box(&tiny), |f| n += f.x);
            n
        })
    });
    let big = [
        vertex(0.0, 0.0, 0.0, 0.0),
        vertex(128.0, 0.0, 1.0, 0.0),
        vertex(0.0, 128.0, 0.0, 1.0),
    ];
    c.bench_function("raster/coverage+interpolation (8k fragments)", |b| {
        b.iter(|| {
            let mut n = 0u32;
            rasterize_triangle(&cfg, black_box(&big), |f| {
                n = n.wrapping_add(f.color[0] as u32)
            });
            n
        })
    });
    // The same fragments from the per-pixel reference traversal (the oracle of the block
    // traversal above).
    c.bench_function(
        "raster/coverage+interpolation reference traversal (8k fragments)",
        |b| {
            b.iter(|| {
                let mut n = 0u32;
                rasterize_triangle_reference(&cfg, black_box(&big), |f| {
                    n = n.wrapping_add(f.color[0] as u32)
                });
                n
            })
        },
    );
    // Sprite-sized quads (21 × 21 pixels, both halves): mostly partly covered blocks.
    let sprite: Vec<[ScreenVertex; 3]> = (0..16)
        .flat_map(|k| {
            let (x, y) = (3.3 + 23.0 * (k % 8) as f32, 5.7 + 25.0 * (k / 8) as f32);
            let (x1, y1) = (x + 21.0, y + 21.0);
            [
                [
                    vertex(x, y, 0.0, 0.0),
                    vertex(x1, y, 1.0, 0.0),
                    vertex(x, y1, 0.0, 1.0),
                ],
                [
                    vertex(x, y1, 0.0, 1.0),
                    vertex(x1, y, 1.0, 0.0),
                    vertex(x1, y1, 1.0, 1.0),
                ],
            ]
        })
        .collect();
    for (name, fast) in [("", true), (" reference traversal", false)] {
        c.bench_function(&format!("raster/16 sprite quads{name}"), |b| {
            b.iter(|| {
                let mut n = 0u32;
                for t in black_box(&sprite) {
                    let emit = |f: &Fragment| n = n.wrapping_add(f.color[0] as u32);
                    if fast {
                        rasterize_triangle(&cfg, t, emit);
                    } else {
                        rasterize_triangle_reference(&cfg, t, emit);
                    }
                }
                n
            })
        });
    }
}

fn tev(c: &mut Criterion) {
    let mut regs = target_regs();
    // Stage 0: texture 0 × primary colour (sources 0 and 1; the specialised modulate shape).
    regs[0x0C0] = 3 | (3 << 16);
    regs[0x0C3] = 0;
    regs[0x0C1] = 0;
    regs[0x0C2] = 1 | (1 << 16);
    let modulate = TevProgram::new(&TevConfig::from_regs(&regs));
    // Six stages with mixed operands (the generic evaluation).
    for (i, base) in [0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8]
        .into_iter()
        .enumerate()
    {
        regs[base] = 0x0F3 | (0x0E3 << 16);
        regs[base + 1] = 0x0001_0005 + i as u32;
        regs[base + 2] = (4 + i as u32 % 5) | (2 << 16);
        regs[base + 3] = 0x8040_20FF;
    }
    let generic = TevProgram::new(&TevConfig::from_regs(&regs));
    let inp = TevInputs {
        primary: [200, 100, 50, 255],
        fragment_primary: [10, 20, 30, 40],
        fragment_secondary: [1, 2, 3, 4],
        texture: [
            [90, 180, 45, 128],
            [5, 6, 7, 8],
            [9, 10, 11, 12],
            [13, 14, 15, 16],
        ],
    };
    c.bench_function("tev/1 stage modulate", |b| {
        b.iter(|| modulate.run(black_box(&inp)))
    });
    c.bench_function("tev/6 stages generic", |b| {
        b.iter(|| generic.run(black_box(&inp)))
    });
    // A batch of 16 fragments: the batch kernel against 16 per-fragment `run_table` calls on
    // the same table (per batch; divide by 16 for per fragment).
    let mut table: BatchTable = [[[0; 4]; FRAGMENT_BATCH]; 16];
    for (s, row) in table.iter_mut().enumerate().take(7) {
        for (i, px) in row.iter_mut().enumerate() {
            *px = [
                (s * 37 + i * 11) as u8,
                (i * 53) as u8,
                (s * 7) as u8,
                (200 - i) as u8,
            ];
        }
    }
    let mut out = [[0u8; 4]; FRAGMENT_BATCH];
    for (name, prog) in [
        ("1 stage modulate", &modulate),
        ("6 stages generic", &generic),
    ] {
        c.bench_function(&format!("tev/{name}, batch of 16 (run_batch)"), |b| {
            b.iter(|| {
                let mut t = table;
                prog.run_batch(black_box(&mut t), FRAGMENT_BATCH, &mut out);
                out
            })
        });
        c.bench_function(&format!("tev/{name}, batch of 16 (run_table each)"), |b| {
            b.iter(|| {
                let t = black_box(&table);
                for (i, o) in out.iter_mut().enumerate() {
                    let mut col: [[u8; 4]; 16] = [[0; 4]; 16];
                    for (c, row) in col.iter_mut().zip(t.iter()) {
                        *c = row[i];
                    }
                    *o = prog.run_table(&mut col);
                }
                out
            })
        });
    }
}

fn textures(c: &mut Criterion) {
    let mut mem = PhysMem::new();
    let tex = VRAM.base + 0x20_0000;
    let bytes: Vec<u8> = (0..128 * 128 * 4 * 2)
        .map(|i| (i * 7 + i / 13) as u8)
        .collect();
    mem.write(tex, &bytes).unwrap();
    let formats = [
        ("RGBA8", 0),
        ("RGB8", 1),
        ("RGB565", 3),
        ("RGBA4", 4),
        ("IA8", 5),
        ("A8", 8),
        ("ETC1", 12),
        ("ETC1A4", 13),
    ];
    // (name, PARAM word, LOD word, derivative per pixel in texels of level 0).
    let filters = [
        ("nearest", 0u32, 0u32, 0.5f32),
        ("linear", 0b110, 0, 0.5),
        // Repeat in s and t (the mask form of the wrap).
        ("linear repeat", 0b110 | (2 << 8) | (2 << 12), 0, 0.5),
        // Mip chain of 5 levels, linear mip filter, λ ≈ 1.6: two bilinear levels blended.
        ("trilinear", 0b110 | (1 << 24), 4 << 16, 3.0),
    ];
    for (name, id) in formats {
        for (filter, param, lod, footprint) in filters {
            // Trilinear only on two formats (decoding is per draw: the format does not change
            // the per-sample cost).
            if filter == "trilinear" && !matches!(name, "RGBA8" | "ETC1") {
                continue;
            }
            let mut regs = target_regs();
            regs[0x080] = 1;
            regs[0x082] = 128 | (128 << 16);
            regs[0x083] = param;
            regs[0x084] = lod;
            regs[0x085] = tex >> 3;
            regs[0x08E] = id;
            regs[0x0C0] = 3 | (3 << 16);
            for path in [PixelPath::Specialized, PixelPath::Reference] {
                let mut units = TextureUnits::from_regs(&mem, &regs, [true, false, false]);
                units.set_path(path);
                let mut frag = Fragment::default();
                let d = footprint / 128.0;
                frag.tc_grad[0] = [d, 0.0, 0.0, d];
                let mut k = 0u32;
                let suffix = match path {
                    PixelPath::Specialized => "",
                    PixelPath::Reference => " (generic)",
                };
                c.bench_function(&format!("texture/{name} {filter}{suffix}"), |b| {
                    b.iter(|| {
                        k = k.wrapping_add(1);
                        frag.tc[0] = [(k % 97) as f32 / 97.0, (k % 89) as f32 / 89.0];
                        units.sample_counted(&mem, 0, black_box(&frag))
                    })
                });
            }
        }
    }
}

fn proctex(c: &mut Criterion) {
    let mut regs = target_regs();
    regs[0x080] = 1 << 10;
    // Clamp to edge, RGB function U, noise on with small frequencies, linear colour LUT of 128
    // entries.
    regs[0x0A8] = 1 | (1 << 3) | (1 << 15);
    regs[0x0A9] = 0x0800;
    regs[0x0AA] = 0x0800;
    regs[0x0AB] = 0x3C00_3C00;
    regs[0x0AC] = 1 | (128 << 11);
    let mut luts = LookupTables::default();
    for (i, w) in luts.proctex_rgb_map.iter_mut().enumerate() {
        *w = (32 * i as u32) | (32 << 12);
    }
    for (i, w) in luts.proctex_color.iter_mut().enumerate() {
        *w = (i as u32).wrapping_mul(0x0103_0507);
    }
    let stages = FixedFunctionStages::for_draw(&regs, &luts);
    let Some(p) = stages.proctex.as_ref() else {
        return;
    };
    let mut k = 0u32;
    c.bench_function("proctex/noise, linear LUT", |b| {
        b.iter(|| {
            k = k.wrapping_add(1);
            let (u, v) = ((k % 97) as f32 / 97.0, (k % 89) as f32 / 89.0);
            p.sample_fast(black_box(u), black_box(v), [0.0; 4])
        })
    });
    let frags: Vec<Fragment> = (0..FRAGMENT_BATCH)
        .map(|i| {
            let mut f = Fragment::default();
            f.tc[0] = [(i % 97) as f32 / 97.0, (i * 7 % 89) as f32 / 89.0];
            f
        })
        .collect();
    let mut out = [[0u8; 4]; FRAGMENT_BATCH];
    c.bench_function(
        "proctex/noise, linear LUT, batch of 16 (sample_batch)",
        |b| {
            b.iter(|| {
                p.sample_batch(black_box(&frags), &mut out);
                out
            })
        },
    );
    c.bench_function(
        "proctex/noise, linear LUT, batch of 16 (sample_fragment each)",
        |b| {
            b.iter(|| {
                for (o, f) in out.iter_mut().zip(black_box(&frags)) {
                    *o = p.sample_fragment(f);
                }
                out
            })
        },
    );
    c.bench_function("proctex/noise, linear LUT (reference)", |b| {
        b.iter(|| {
            k = k.wrapping_add(1);
            let (u, v) = ((k % 97) as f32 / 97.0, (k % 89) as f32 / 89.0);
            p.sample(black_box(u), black_box(v), [0.0; 4])
        })
    });
}

fn lighting(c: &mut Criterion) {
    let mut regs = target_regs();
    regs[0x08F] = 1; // LIGHTING_ENABLE0
    regs[0x1C2] = 0; // one light
    regs[0x140] = 0x00C0_C0C0; // light 0 specular 0
    regs[0x143] = 0x00FF_FFFF; // diffuse
    regs[0x144] = 0x0020_2020; // ambient
    let luts = LookupTables::default();
    let mut stages = FixedFunctionStages::for_draw(&regs, &luts);
    let frag = Fragment {
        quat: [0.0, 0.0, 0.0, 1.0],
        view: [0.0, 0.0, 1.0],
        ..Default::default()
    };
    let tex = [[0u8; 4]; 4];
    c.bench_function("lighting/1 light", |b| {
        b.iter(|| stages.lighting(black_box(&frag), &tex))
    });
}

fn batch(c: &mut Criterion) {
    let regs = target_regs();
    let tris = sprite_batch();
    for threads in [1usize, 2] {
        let mut mem = PhysMem::new();
        mem.write(VRAM.base, &[0u8; 4]).unwrap();
        let mut stores = ShareStores::default();
        c.bench_function(
            &format!("pipeline/128 sprite triangles, {threads} thread(s)"),
            |b| {
                b.iter(|| {
                    let mut p = PixelPipeline::new(&regs);
                    p.draw_triangles(&mut mem, black_box(&tris), &mut (), threads, &mut stores)
                })
            },
        );
    }
}

criterion_group!(benches, raster, tev, textures, proctex, lighting, batch);
criterion_main!(benches);
