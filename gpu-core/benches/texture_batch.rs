//! Criterion benchmarks of texture sampling over a batch of 16 fragments (issue 14): the
//! batch entry point `TextureSampler::sample_batch` of [`TextureUnits`] against the
//! per-fragment loop of `sample_counted` it replaces, per format and filter.
//!
//! Run: `cargo bench -p gpu-core --bench texture_batch` (add `-- NAME` to filter).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gpu_core::memory::{PhysMem, VRAM};
use gpu_core::pixel::fragment::{TextureSampler, TextureUnits};
use gpu_core::pixel::raster::{FRAGMENT_BATCH, Fragment};

/// Unit 0 enabled: a 128×128 texture of format `id` at `tex` with PARAM word `param` and
/// LOD word `lod`.
fn regs(tex: u32, id: u32, param: u32, lod: u32) -> Box<[u32; 0x300]> {
    let mut r = Box::new([0u32; 0x300]);
    r[0x080] = 1;
    r[0x082] = 128 | (128 << 16);
    r[0x083] = param;
    r[0x084] = lod;
    r[0x085] = tex >> 3;
    r[0x08E] = id;
    r
}

fn texture_batch(c: &mut Criterion) {
    let mut mem = PhysMem::new();
    let tex = VRAM.base + 0x20_0000;
    let bytes: Vec<u8> = (0..128 * 128 * 4 * 2)
        .map(|i| (i * 7 + i / 13) as u8)
        .collect();
    mem.write(tex, &bytes).unwrap();
    let formats = [("RGBA8", 0), ("RGB565", 3), ("IA8", 5), ("A8", 8)];
    // (name, PARAM word, LOD word, derivative per pixel in texels of level 0).
    let filters = [
        ("nearest", 0u32, 0u32, 0.5f32),
        ("nearest repeat", (2 << 8) | (2 << 12), 0, 0.5),
        ("linear", 0b110, 0, 0.5),
        ("linear repeat", 0b110 | (2 << 8) | (2 << 12), 0, 0.5),
        // Mip chain of 5 levels, linear mip filter, λ ≈ 1.6: two bilinear levels blended.
        (
            "trilinear repeat",
            0b110 | (2 << 8) | (2 << 12) | (1 << 24),
            4 << 16,
            3.0,
        ),
    ];
    for (name, id) in formats {
        for (filter, param, lod, footprint) in filters {
            let units = TextureUnits::from_regs(&mem, &regs(tex, id, param, lod), [true; 3]);
            // One batch as the fast traversal hands it over: a 4×4 pixel block, texture
            // coordinates stepping by `footprint` texels per pixel.
            let d = footprint / 128.0;
            let base: Vec<Fragment> = (0..FRAGMENT_BATCH)
                .map(|i| {
                    let mut f = Fragment::default();
                    f.tc_grad[0] = [d, 0.0, 0.0, d];
                    f.tc[0] = [(i % 4) as f32 * d, (i / 4) as f32 * d];
                    f
                })
                .collect();
            let mut frags = base.clone();
            let mut out = [[0u8; 4]; FRAGMENT_BATCH];
            let mut k = 0u32;
            let mut step = |frags: &mut [Fragment]| {
                k = k.wrapping_add(1);
                let (du, dv) = ((k % 97) as f32 / 97.0, (k % 89) as f32 / 89.0);
                for (f, b) in frags.iter_mut().zip(&base) {
                    f.tc[0] = [b.tc[0][0] + du, b.tc[0][1] + dv];
                }
            };
            c.bench_function(&format!("texture16/{name} {filter} per fragment"), |b| {
                b.iter(|| {
                    step(&mut frags);
                    let mut texels = 0u64;
                    for (o, f) in out.iter_mut().zip(black_box(&frags)) {
                        let (c, n) = units.sample_counted(&mem, 0, f);
                        *o = c;
                        texels += u64::from(n);
                    }
                    black_box(&out);
                    texels
                })
            });
            c.bench_function(&format!("texture16/{name} {filter} batch"), |b| {
                b.iter(|| {
                    step(&mut frags);
                    let texels = units.sample_batch(&mem, 0, black_box(&frags), &mut out);
                    black_box(&out);
                    texels
                })
            });
        }
    }
}

criterion_group!(benches, texture_batch);
criterion_main!(benches);
