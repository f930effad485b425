// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
use super::*;
use crate::geometry::viewport::{DepthMap, DepthMode};
use crate::vertex::OutputVertex;

fn cfg(w: u32, h: u32) -> RasterConfig {
    RasterConfig {
        cull: CullMode::None,
        scissor_mode: ScissorMode::Disabled,
        scissor: ScissorBox::default(),
        depth: DepthMap {
            scale: -1.0,
            offset: 0.0,
            mode: DepthMode::ZBuffer,
        },
        width: w,
        height: h,
        varyings: Varyings::ALL,
    }
}

fn sv(x: f32, y: f32) -> ScreenVertex {
    ScreenVertex {
        x,
        y,
        z_over_w: 0.0,
        inv_w: 1.0,
        attrs: OutputVertex::default(),
    }
}

fn svc(x: f32, y: f32, color: [f32; 4]) -> ScreenVertex {
    let mut v = sv(x, y);
    v.attrs.color = color;
    v
}

/// Coverage map (row-major, y up) of a triangle.
fn coverage(c: &RasterConfig, tri: &[ScreenVertex; 3]) -> (Vec<u8>, TriangleOutcome) {
    let mut hits = vec![0u8; (c.width * c.height) as usize];
    let o = rasterize_triangle(c, tri, |f| hits[(f.y * c.width + f.x) as usize] += 1);
    (hits, o)
}

fn count(c: &RasterConfig, tri: &[ScreenVertex; 3]) -> u64 {
    match rasterize_triangle(c, tri, |_| {}) {
        TriangleOutcome::Drawn { fragments } => fragments,
        _ => 0,
    }
}

#[test]
fn right_triangle_known_coverage() {
    // CCW (y up) right triangle with legs of 8 px along x and y from (0, 0).
    // Pixel (x, y) has its centre (x+.5, y+.5) inside when x + y + 1 < 8, on the hypotenuse when
    // x + y + 1 == 8 (a right edge: not owned). Left (x = 0) and bottom (y = 0) edges own theirs,
    // but no centre lies on them. So the count is #{x + y ≤ 6} = 7·8/2 = 28.
    let c = cfg(16, 16);
    let (hits, o) = coverage(&c, &[sv(0.0, 0.0), sv(8.0, 0.0), sv(0.0, 8.0)]);
    assert_eq!(o, TriangleOutcome::Drawn { fragments: 28 });
    for y in 0..16 {
        for x in 0..16 {
            let want = u8::from(x + y <= 6);
            assert_eq!(hits[(y * 16 + x) as usize], want, "({x},{y})");
        }
    }
}

#[test]
fn fill_rule_left_and_bottom_edges_own_pixel_centres() {
    let c = cfg(16, 16);
    // A square from centre (2.5, 2.5) to (6.5, 6.5): its edges pass exactly through pixel
    // centres. Split along the diagonal into two CCW triangles.
    let a = sv(2.5, 2.5);
    let b = sv(6.5, 2.5);
    let cc = sv(6.5, 6.5);
    let d = sv(2.5, 6.5);
    let (h1, _) = coverage(&c, &[a, b, cc]);
    let (h2, _) = coverage(&c, &[a, cc, d]);
    for y in 0..16u32 {
        for x in 0..16u32 {
            let i = (y * 16 + x) as usize;
            let total = h1[i] + h2[i];
            // Columns 2..=5 and rows 2..=5: the left column and bottom row are owned, the right
            // column (x = 6) and top row (y = 6) are not.
            let want = u8::from((2..=5).contains(&x) && (2..=5).contains(&y));
            assert_eq!(total, want, "({x},{y})");
        }
    }
    // The diagonal's pixel centres belong to exactly one of the two triangles: the lower-right
    // triangle (a, b, cc) has the diagonal as its left edge.
    for k in 2..=5u32 {
        let i = (k * 16 + k) as usize;
        assert_eq!((h1[i], h2[i]), (1, 0), "diagonal pixel {k}");
    }
}

/// Tiny deterministic PRNG (xorshift) for the mesh tests.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f32 {
        (self.next() % 1_000_000) as f32 / 1_000_000.0
    }
}

#[test]
fn shared_edges_have_no_gaps_and_no_double_hits() {
    // A 6×5 grid of quads over [3, 45]×[2, 37] with jittered interior vertices (sub-pixel
    // positions, some exactly on pixel centres), each quad split into two triangles with both
    // windings and all cull modes that keep them. Every pixel whose centre is inside the outer
    // rectangle must be hit exactly once; nothing outside may be hit.
    let c = cfg(48, 40);
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let (nx, ny) = (6usize, 5usize);
        let (x0, x1, y0, y1) = (3.0f32, 45.0f32, 2.0f32, 37.0f32);
        let mut pts = vec![[0f32; 2]; (nx + 1) * (ny + 1)];
        for j in 0..=ny {
            for i in 0..=nx {
                let mut x = x0 + (x1 - x0) * i as f32 / nx as f32;
                let mut y = y0 + (y1 - y0) * j as f32 / ny as f32;
                if i > 0 && i < nx && j > 0 && j < ny {
                    // Small enough (with the snap below) that every quad stays convex.
                    x += (rng.unit() - 0.5) * 2.0;
                    y += (rng.unit() - 0.5) * 2.0;
                    if seed % 3 == 0 {
                        // Snap to a pixel centre so edges pass through sample points.
                        x = (x - 0.5).round() + 0.5;
                        y = (y - 0.5).round() + 0.5;
                    }
                }
                pts[j * (nx + 1) + i] = [x, y];
            }
        }
        let mut hits = vec![0u8; 48 * 40];
        for j in 0..ny {
            for i in 0..nx {
                let p = |ii: usize, jj: usize| {
                    let q = pts[jj * (nx + 1) + ii];
                    sv(q[0], q[1])
                };
                let (a, b, cc, d) = (p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1));
                // Alternate the diagonal and the vertex order (winding) per quad.
                let tris = if (i + j + seed as usize).is_multiple_of(2) {
                    [[a, b, cc], [a, d, cc]]
                } else {
                    [[a, b, d], [b, d, cc]]
                };
                for t in tris {
                    rasterize_triangle(&c, &t, |f| hits[(f.y * 48 + f.x) as usize] += 1);
                }
            }
        }
        for y in 0..40u32 {
            for x in 0..48u32 {
                let (cx, cy) = (x as f32 + 0.5, y as f32 + 0.5);
                let inside = cx > x0 && cx < x1 && cy > y0 && cy < y1;
                assert_eq!(
                    hits[(y * 48 + x) as usize],
                    u8::from(inside),
                    "seed {seed} ({x},{y})"
                );
            }
        }
    }
}

#[test]
fn fan_around_a_pixel_centre_hits_it_once() {
    // Eight triangles meeting at a pixel centre: the centre pixel is owned by exactly one.
    let c = cfg(32, 32);
    let centre = [16.5f32, 16.5f32];
    let mut hits = vec![0u8; 32 * 32];
    for k in 0..8 {
        let a0 = k as f32 * std::f32::consts::FRAC_PI_4;
        let a1 = (k + 1) as f32 * std::f32::consts::FRAC_PI_4;
        let p0 = sv(centre[0] + 10.0 * a0.cos(), centre[1] + 10.0 * a0.sin());
        let p1 = sv(centre[0] + 10.0 * a1.cos(), centre[1] + 10.0 * a1.sin());
        rasterize_triangle(&c, &[sv(centre[0], centre[1]), p0, p1], |f| {
            hits[(f.y * 32 + f.x) as usize] += 1
        });
    }
    assert_eq!(hits[16 * 32 + 16], 1);
    assert!(hits.iter().all(|&h| h <= 1));
}

#[test]
fn culling_modes() {
    let ccw = [sv(1.0, 1.0), sv(9.0, 1.0), sv(1.0, 9.0)];
    let cw = [ccw[0], ccw[2], ccw[1]];
    let mut c = cfg(16, 16);
    let n = count(&c, &ccw);
    assert!(n > 0);
    // None: both windings drawn identically.
    assert_eq!(count(&c, &cw), n);
    c.cull = CullMode::Back;
    assert_eq!(rasterize_triangle(&c, &cw, |_| {}), TriangleOutcome::Culled);
    assert_eq!(count(&c, &ccw), n);
    c.cull = CullMode::Front;
    assert_eq!(
        rasterize_triangle(&c, &ccw, |_| {}),
        TriangleOutcome::Culled
    );
    assert_eq!(count(&c, &cw), n);
    c.cull = CullMode::Reserved3;
    assert_eq!(rasterize_triangle(&c, &cw, |_| {}), TriangleOutcome::Culled);
    // Zero area in every mode.
    for m in [CullMode::None, CullMode::Front, CullMode::Back] {
        c.cull = m;
        let flat = [sv(1.0, 1.0), sv(5.0, 5.0), sv(9.0, 9.0)];
        assert_eq!(
            rasterize_triangle(&c, &flat, |_| {}),
            TriangleOutcome::Degenerate
        );
    }
    assert_eq!(CullMode::from_bits(0), CullMode::None);
    assert_eq!(CullMode::from_bits(1), CullMode::Front);
    assert_eq!(CullMode::from_bits(2), CullMode::Back);
    assert_eq!(CullMode::from_bits(7), CullMode::Reserved3);
}

#[test]
fn scissor_include_and_exclude() {
    let mut c = cfg(16, 16);
    let full = [sv(-10.0, -10.0), sv(60.0, -10.0), sv(-10.0, 60.0)];
    assert_eq!(count(&c, &full), 256);
    c.scissor = ScissorBox {
        x1: 2,
        y1: 3,
        x2: 5,
        y2: 4,
    }; // 4 × 2 inclusive
    c.scissor_mode = ScissorMode::Include;
    let (hits, _) = coverage(&c, &full);
    for y in 0..16u32 {
        for x in 0..16u32 {
            let inside = (2..=5).contains(&x) && (3..=4).contains(&y);
            assert_eq!(
                hits[(y * 16 + x) as usize],
                u8::from(inside),
                "include ({x},{y})"
            );
        }
    }
    c.scissor_mode = ScissorMode::Exclude;
    let (hits, o) = coverage(&c, &full);
    assert_eq!(o, TriangleOutcome::Drawn { fragments: 256 - 8 });
    assert_eq!(hits[3 * 16 + 2], 0);
    assert_eq!(hits[0], 1);
    // Inverted box in include mode: nothing.
    c.scissor = ScissorBox {
        x1: 9,
        y1: 0,
        x2: 3,
        y2: 15,
    };
    c.scissor_mode = ScissorMode::Include;
    assert_eq!(count(&c, &full), 0);
    // Decoding: 2 is disabled.
    assert_eq!(ScissorMode::from_bits(2), ScissorMode::Disabled);
    assert_eq!(ScissorMode::from_bits(3), ScissorMode::Include);
    assert_eq!(ScissorMode::from_bits(1), ScissorMode::Exclude);
}

#[test]
fn absurd_triangles_are_bounded_or_rejected() {
    let c = cfg(400, 240);
    // A triangle a million pixels wide costs one pass over the target.
    let huge = [sv(-1.0e6, -1.0e6), sv(1.0e6, -1.0e6), sv(0.0, 1.0e6)];
    let t = std::time::Instant::now();
    assert_eq!(count(&c, &huge), 400 * 240);
    assert!(t.elapsed().as_secs() < 5);
    // Beyond ±2^20 pixels, infinite or NaN: rejected.
    for bad in [f32::NAN, f32::INFINITY, -f32::INFINITY, 3.0e6] {
        let tri = [sv(bad, 0.0), sv(10.0, 0.0), sv(0.0, 10.0)];
        assert_eq!(
            rasterize_triangle(&c, &tri, |_| {}),
            TriangleOutcome::Invalid
        );
    }
    // Entirely off-target: drawn with no fragments.
    let off = [sv(-50.0, -50.0), sv(-10.0, -50.0), sv(-50.0, -10.0)];
    assert_eq!(
        rasterize_triangle(&c, &off, |_| {}),
        TriangleOutcome::Drawn { fragments: 0 }
    );
    // A zero-sized target never produces pixels.
    let z = cfg(0, 0);
    assert_eq!(count(&z, &huge), 0);
}

#[test]
fn negative_coordinates_do_not_wrap() {
    // Citra's u16 fixed point wraps negative positions; ours are signed.
    let c = cfg(16, 16);
    let (hits, _) = coverage(&c, &[sv(-8.0, -8.0), sv(8.0, -8.0), sv(-8.0, 8.0)]);
    // The hypotenuse is x + y = 0: no pixel centre of the target is inside.
    assert!(hits.iter().all(|&h| h == 0));
    let (hits, _) = coverage(&c, &[sv(-8.0, -8.0), sv(24.0, -8.0), sv(-8.0, 24.0)]);
    // Hypotenuse x + y = 16: pixels with x + y + 1 < 16.
    for y in 0..16u32 {
        for x in 0..16u32 {
            assert_eq!(
                hits[(y * 16 + x) as usize],
                u8::from(x + y < 15),
                "({x},{y})"
            );
        }
    }
}

#[test]
fn primary_colour_is_rounded() {
    let c = cfg(8, 8);
    let col = [0.5, 1.0 / 255.0 * 0.49, 1.0 / 255.0 * 0.51, 1.0];
    let tri = [svc(0.0, 0.0, col), svc(8.0, 0.0, col), svc(0.0, 8.0, col)];
    let mut seen = None;
    rasterize_triangle(&c, &tri, |f| seen = Some(f.color));
    // 127.5 → 128 (half away from zero), 0.49 → 0, 0.51 → 1.
    assert_eq!(seen, Some([128, 0, 1, 255]));
}

#[test]
fn gouraud_interpolation_is_barycentric_without_perspective() {
    // Equal w: attributes are plain barycentric interpolations of the edge values.
    let c = cfg(16, 16);
    let tri = [
        svc(0.0, 0.0, [1.0, 0.0, 0.0, 1.0]),
        svc(16.0, 0.0, [0.0, 1.0, 0.0, 1.0]),
        svc(0.0, 16.0, [0.0, 0.0, 1.0, 1.0]),
    ];
    rasterize_triangle(&c, &tri, |f| {
        let (px, py) = (f.x as f32 + 0.5, f.y as f32 + 0.5);
        let b1 = px / 16.0;
        let b2 = py / 16.0;
        let b0 = 1.0 - b1 - b2;
        let want = [b0, b1, b2].map(|b| (b * 255.0).round() as i32);
        for (got, want) in f.color.iter().zip(want) {
            assert!((i32::from(*got) - want).abs() <= 1, "{f:?}");
        }
        assert_eq!(f.color[3], 255);
    });
}

#[test]
fn perspective_correct_texcoords_and_depth() {
    // Vertex 0 at w = 1, vertices 1, 2 at w = 4. A texcoord u = (0, 1, 0) interpolates as
    // (b1/4) / (b0 + b1/4 + b2/4) with screen-space barycentrics b.
    let mut c = cfg(16, 16);
    let mut tri = [sv(0.0, 0.0), sv(16.0, 0.0), sv(0.0, 16.0)];
    tri[1].attrs.tc0 = [1.0, 0.0];
    tri[1].attrs.tc0_w = 2.0;
    tri[0].inv_w = 1.0;
    tri[1].inv_w = 0.25;
    tri[2].inv_w = 0.25;
    tri[0].z_over_w = -0.2;
    tri[1].z_over_w = -0.6;
    tri[2].z_over_w = -1.0;
    let mut n = 0;
    rasterize_triangle(&c, &tri, |f| {
        let (px, py) = (f.x as f32 + 0.5, f.y as f32 + 0.5);
        let b1 = px / 16.0;
        let b2 = py / 16.0;
        let b0 = 1.0 - b1 - b2;
        let d = b0 + 0.25 * b1 + 0.25 * b2;
        let u = 0.25 * b1 / d;
        // The fill-rule bias (−1 in 1/256 px² units on ~65536) perturbs weights by ~2e-5.
        assert!((f.tc[0][0] - u).abs() < 1e-4, "{f:?} {u}");
        assert!((f.tc0_w - 2.0 * u).abs() < 1e-4);
        // z-buffer: z/w linear in screen space, scale −1.
        let zw = -0.2 * b0 - 0.6 * b1 - 1.0 * b2;
        assert!((f.depth - (-zw)).abs() < 1e-4, "{f:?}");
        n += 1;
    });
    assert!(n > 100);
    // w-buffer: depth = (z/w·scale + offset)·w with perspective-correct w.
    c.depth.mode = DepthMode::WBuffer;
    c.depth.scale = -0.25;
    c.depth.offset = 0.0;
    rasterize_triangle(&c, &tri, |f| {
        let (px, py) = (f.x as f32 + 0.5, f.y as f32 + 0.5);
        let b1 = px / 16.0;
        let b2 = py / 16.0;
        let b0 = 1.0 - b1 - b2;
        let w = 1.0 / (b0 + 0.25 * b1 + 0.25 * b2);
        let zw = -0.2 * b0 - 0.6 * b1 - 1.0 * b2;
        let want = (zw * -0.25 * w).clamp(0.0, 1.0);
        assert!((f.depth - want).abs() < 1e-4, "{f:?} {want}");
    });
}

#[test]
fn depth_is_clamped() {
    let mut c = cfg(8, 8);
    c.depth.scale = 10.0;
    c.depth.offset = 0.5;
    let mut tri = [sv(0.0, 0.0), sv(8.0, 0.0), sv(0.0, 8.0)];
    for v in &mut tri {
        v.z_over_w = 1.0;
    }
    rasterize_triangle(&c, &tri, |f| assert_eq!(f.depth, 1.0));
    for v in &mut tri {
        v.z_over_w = -1.0;
    }
    rasterize_triangle(&c, &tri, |f| assert_eq!(f.depth, 0.0));
}

#[test]
fn quaternion_is_normalised_and_view_is_not() {
    let c = cfg(8, 8);
    let mut tri = [sv(0.0, 0.0), sv(8.0, 0.0), sv(0.0, 8.0)];
    tri[0].attrs.quat = [1.0, 0.0, 0.0, 0.0];
    tri[1].attrs.quat = [0.0, 1.0, 0.0, 0.0];
    tri[2].attrs.quat = [0.0, 0.0, 1.0, 0.0];
    for v in &mut tri {
        v.attrs.view = [0.0, 0.0, 3.0];
    }
    rasterize_triangle(&c, &tri, |f| {
        let len: f32 = f.quat.iter().map(|q| q * q).sum::<f32>().sqrt();
        assert!((len - 1.0).abs() < 1e-5, "{f:?}");
        assert!((f.view[2] - 3.0).abs() < 1e-5);
    });
    // A zero quaternion stays zero instead of NaN.
    let mut z = tri;
    for v in &mut z {
        v.attrs.quat = [0.0; 4];
    }
    rasterize_triangle(&c, &z, |f| assert_eq!(f.quat, [0.0; 4]));
}

#[test]
fn texcoord_gradients_match_finite_differences() {
    let c = cfg(32, 32);
    let mut tri = [sv(0.0, 0.0), sv(32.0, 2.0), sv(3.0, 30.0)];
    tri[0].inv_w = 1.0;
    tri[1].inv_w = 0.3;
    tri[2].inv_w = 0.6;
    tri[0].attrs.tc1 = [0.0, 0.0];
    tri[1].attrs.tc1 = [4.0, 1.0];
    tri[2].attrs.tc1 = [0.5, 3.0];
    let mut frags = std::collections::HashMap::new();
    rasterize_triangle(&c, &tri, |f| {
        frags.insert((f.x, f.y), *f);
    });
    let mut checked = 0;
    for (&(x, y), f) in &frags {
        let (Some(fx), Some(fy)) = (frags.get(&(x + 1, y)), frags.get(&(x, y + 1))) else {
            continue;
        };
        let g = f.tc_grad[1];
        // The derivative at x lies between the forward differences at x−1 and x (convexity of
        // the rational function); check the forward difference within 10 %.
        let du_dx = fx.tc[1][0] - f.tc[1][0];
        let dv_dy = fy.tc[1][1] - f.tc[1][1];
        assert!(
            (g[0] - du_dx).abs() <= 0.1 * du_dx.abs() + 1e-4,
            "{x},{y}: {g:?} {du_dx}"
        );
        assert!(
            (g[3] - dv_dy).abs() <= 0.1 * dv_dy.abs() + 1e-4,
            "{x},{y}: {g:?} {dv_dy}"
        );
        checked += 1;
    }
    assert!(checked > 100);
}

#[test]
fn varyings_are_skipped_when_not_needed() {
    let mut c = cfg(8, 8);
    c.varyings = Varyings::default();
    let mut tri = [sv(0.0, 0.0), sv(8.0, 0.0), sv(0.0, 8.0)];
    for v in &mut tri {
        v.attrs.tc0 = [0.5, 0.5];
        v.attrs.quat = [1.0, 0.0, 0.0, 0.0];
        v.attrs.color = [1.0; 4];
    }
    rasterize_triangle(&c, &tri, |f| {
        assert_eq!(f.tc[0], [0.0, 0.0]);
        assert_eq!(f.quat, [0.0; 4]);
        assert_eq!(f.color, [255; 4]);
    });
}

#[test]
fn pixels_come_tile_by_tile() {
    // Memory tiles are 8×8 blocks of memory rows H − 1 − y; with H = 20 (not a multiple of 8)
    // window rows 19..12 form the first tile row. Fragments of one tile must be contiguous.
    let c = cfg(24, 20);
    let tri = [sv(-5.0, -5.0), sv(50.0, -5.0), sv(-5.0, 50.0)];
    let mut order = Vec::new();
    rasterize_triangle(&c, &tri, |f| order.push(((19 - f.y) >> 3, f.x >> 3)));
    assert_eq!(order.len(), 24 * 20);
    let mut seen = std::collections::HashSet::new();
    let mut prev = None;
    for t in order {
        if prev != Some(t) {
            assert!(seen.insert(t), "tile {t:?} visited twice");
            prev = Some(t);
        }
    }
    assert_eq!(seen.len(), 3 * 3);
}

#[test]
fn config_from_registers() {
    let mut r = Box::new([0u32; 0x300]);
    r[0x040] = 2;
    r[0x065] = 3;
    r[0x066] = 10 | (20 << 16);
    r[0x067] = 30 | (40 << 16);
    r[0x04D] = 0xBF_0000; // −1.0
    r[0x04E] = 0x3F_0000; // 1.0
    r[0x06D] = 0;
    r[0x11E] = 400 | (239 << 12);
    let c = RasterConfig::from_regs(&r);
    assert_eq!(c.cull, CullMode::Back);
    assert_eq!(c.scissor_mode, ScissorMode::Include);
    assert_eq!(
        c.scissor,
        ScissorBox {
            x1: 10,
            y1: 20,
            x2: 30,
            y2: 40
        }
    );
    assert_eq!(
        c.depth,
        DepthMap {
            scale: -1.0,
            offset: 1.0,
            mode: DepthMode::WBuffer
        }
    );
    assert_eq!((c.width, c.height), (400, 240));
}

#[test]
fn fast_rounding_matches_round_half_away_from_zero() {
    let reference = |y: f32| {
        if y.is_nan() {
            0
        } else {
            y.round().clamp(0.0, 255.0) as u8
        }
    };
    let mut y = -3.0f32;
    while y < 300.0 {
        assert_eq!(round_to_u8(y), reference(y), "{y}");
        y += 0.001;
    }
    for y in [
        0.49999997,
        0.5,
        0.50000006,
        127.5,
        254.5,
        254.49998,
        255.0,
        1e30,
        -0.5,
        f32::NAN,
    ] {
        assert_eq!(round_to_u8(y), reference(y), "{y}");
    }
    for k in 0..=255u32 {
        let y = k as f32 + 0.5;
        assert_eq!(round_to_u8(y), reference(y), "{y}");
        let below = f32::from_bits(y.to_bits() - 1);
        assert_eq!(round_to_u8(below), reference(below), "{below}");
    }
}

/// A fragment as comparable bits (floats by their bit patterns, so NaN and −0 count).
fn frag_bits(f: &Fragment) -> Vec<u32> {
    let mut v = vec![f.x, f.y, f.depth.to_bits(), u32::from_le_bytes(f.color)];
    v.extend(f.tc.iter().flatten().map(|x| x.to_bits()));
    v.push(f.tc0_w.to_bits());
    v.extend(f.tc_grad.iter().flatten().map(|x| x.to_bits()));
    v.extend(f.tc0_w_grad.iter().map(|x| x.to_bits()));
    v.extend(f.quat.iter().map(|x| x.to_bits()));
    v.extend(f.view.iter().map(|x| x.to_bits()));
    v
}

/// A random screen vertex: positions from inside the target to far outside, sometimes on
/// pixel centres or shared with another vertex, random attributes and 1/w.
fn random_vertex(rng: &mut Rng, w: f32, h: f32) -> ScreenVertex {
    // Pixel centres and pixel corners often, so edges run through sample points and block
    // corners (where the fill rule and the trivial accept/reject decisions are on a knife edge).
    let pos = |rng: &mut Rng, size: f32| match rng.next() % 8 {
        0..=2 => (rng.unit() * size).floor() + 0.5,
        3 => (rng.unit() * size).floor(),
        4 => rng.unit() * size * 3.0 - size,
        _ => rng.unit() * (size + 8.0) - 4.0,
    };
    let mut v = sv(pos(rng, w), pos(rng, h));
    v.z_over_w = rng.unit() * 2.0 - 0.5;
    v.inv_w = match rng.next() % 6 {
        0 => 1.0,
        _ => 0.05 + rng.unit() * 4.0,
    };
    let a = &mut v.attrs;
    for c in a.color.iter_mut() {
        *c = rng.unit();
    }
    for t in a
        .tc0
        .iter_mut()
        .chain(a.tc1.iter_mut())
        .chain(a.tc2.iter_mut())
    {
        *t = rng.unit() * 4.0 - 1.0;
    }
    a.tc0_w = rng.unit() * 2.0;
    for q in a.quat.iter_mut().chain(a.view.iter_mut()) {
        *q = rng.unit() * 2.0 - 1.0;
    }
    // Edge values in a fraction of the vertices: quaternions of zero, infinite or NaN length
    // (the per-fragment normalisation's degenerate cases), colours outside [0, 1] and NaN
    // (the rounding's clamps), depth and 1/w at 0, −0, ±inf, NaN (the depth clamp, its −0
    // and NaN cases, and divisions by 0).
    const SPECIAL: [f32; 8] = [
        0.0,
        -0.0,
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        1e30,
        -1e-30,
        1e-45,
    ];
    let special = |rng: &mut Rng| SPECIAL[(rng.next() % 8) as usize];
    match rng.next() % 16 {
        0 => a.quat = [0.0; 4],
        1 => a.quat[(rng.next() % 4) as usize] = special(rng),
        2 => a.color[(rng.next() % 4) as usize] = special(rng),
        3 => a.color = [rng.unit() * 4.0 - 2.0, -0.0, 1.0 + rng.unit(), 0.5 / 255.0],
        4 => v.z_over_w = special(rng),
        5 => v.inv_w = special(rng),
        6 => a.tc0[(rng.next() % 2) as usize] = special(rng),
        7 => a.view[(rng.next() % 3) as usize] = special(rng),
        _ => {}
    }
    v
}

/// The fast block traversal hands out exactly the reference traversal's fragments: same
/// pixels, same order, same bits in every field, same outcome — over random triangles (small
/// and large, on and off screen), every attribute set, gradients on and off, both depth modes,
/// every cull and scissor mode and render-target sizes that are not multiples of 8. With row
/// bands, the shares together produce the reference's fragments, each share in reference order.
#[test]
fn fast_traversal_matches_the_reference_bit_for_bit() {
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let vary_sets = [
        Varyings::ALL,
        Varyings::default(),
        Varyings {
            texcoords: true,
            texcoord_gradients: false,
            lighting: false,
            texcoord0_only: false,
            skip_depth: false,
        },
        Varyings {
            texcoords: true,
            texcoord_gradients: true,
            lighting: false,
            texcoord0_only: false,
            skip_depth: false,
        },
        Varyings {
            texcoords: false,
            texcoord_gradients: false,
            lighting: true,
            texcoord0_only: false,
            skip_depth: false,
        },
        // Texcoord 0 alone (the sprite shape): the other coordinates stay 0.
        Varyings {
            texcoords: true,
            texcoord_gradients: false,
            lighting: false,
            texcoord0_only: true,
            skip_depth: false,
        },
        // Texcoord 0 alone with its gradients (a mipmapped 2D unit 0): the other coordinates
        // and gradients stay 0.
        Varyings {
            texcoords: true,
            texcoord_gradients: true,
            lighting: false,
            texcoord0_only: true,
            skip_depth: false,
        },
        // `texcoord0_only` is ignored with lighting on.
        Varyings {
            texcoords: true,
            texcoord_gradients: false,
            lighting: true,
            texcoord0_only: true,
            skip_depth: false,
        },
        Varyings {
            texcoords: true,
            texcoord_gradients: true,
            lighting: true,
            texcoord0_only: true,
            skip_depth: false,
        },
    ];
    let mut tc0_only_fragments = 0u64;
    let mut tc0_grad_fragments = 0u64;
    let mut huge_fragments = 0u64;
    let mut emitted = 0u64;
    for case in 0..6000u32 {
        let (w, h) = match case % 4 {
            0 => (64, 48),
            1 => (37, 29),
            2 => (16, 96),
            _ => (240, 40),
        };
        let mut c = cfg(w, h);
        c.varyings = vary_sets[(case as usize / 4) % vary_sets.len()];
        // Depth skipped in a fifth of the cases (the fast traversal leaves it at 0).
        c.varyings.skip_depth = case % 5 == 2;
        c.cull = CullMode::from_bits(rng.next() as u32);
        c.depth.mode = if rng.next().is_multiple_of(2) {
            DepthMode::ZBuffer
        } else {
            DepthMode::WBuffer
        };
        // Depth maps whose results reach both clamps, −0 (scale −1, offset −0 at z/w = 0)
        // and NaN.
        (c.depth.scale, c.depth.offset) = match rng.next() % 5 {
            0 => (-1.0, 0.0),
            1 => (-1.0, -0.0),
            2 => (2.0, -0.5),
            3 => (f32::INFINITY, 0.0),
            _ => (0.5, 0.25),
        };
        c.scissor_mode = ScissorMode::from_bits(rng.next() as u32);
        let (a, b) = (rng.next() as u32 % w, rng.next() as u32 % w);
        let (p, q) = (rng.next() as u32 % h, rng.next() as u32 % h);
        c.scissor = ScissorBox {
            x1: a.min(b),
            x2: a.max(b),
            y1: p.min(q),
            y2: p.max(q),
        };
        // Sprite-like halves of axis-aligned quads (edges through pixel centres and block
        // corners), small triangles, and triangles up to several times the target.
        let mut tri = if case % 3 == 1 {
            let mut t = [
                random_vertex(&mut rng, w as f32, h as f32),
                random_vertex(&mut rng, w as f32, h as f32),
                random_vertex(&mut rng, w as f32, h as f32),
            ];
            let (xa, ya, xb, yb) = (t[0].x, t[0].y, t[1].x, t[1].y);
            let corners = match rng.next() % 4 {
                0 => [(xa, ya), (xb, ya), (xa, yb)],
                1 => [(xb, ya), (xb, yb), (xa, yb)],
                2 => [(xa, ya), (xb, yb), (xa, yb)],
                _ => [(xa, ya), (xb, ya), (xb, yb)],
            };
            for (v, (x, y)) in t.iter_mut().zip(corners) {
                v.x = x;
                v.y = y;
            }
            t
        } else if case % 3 == 0 {
            let v0 = random_vertex(&mut rng, w as f32, h as f32);
            let mut t = [v0, v0, v0];
            for v in t.iter_mut().skip(1) {
                let o = random_vertex(&mut rng, w as f32, h as f32);
                *v = o;
                v.x = v0.x + (rng.unit() - 0.5) * 24.0;
                v.y = v0.y + (rng.unit() - 0.5) * 24.0;
            }
            t
        } else {
            [
                random_vertex(&mut rng, w as f32, h as f32),
                random_vertex(&mut rng, w as f32, h as f32),
                random_vertex(&mut rng, w as f32, h as f32),
            ]
        };
        // Huge triangles in a tenth of the cases: one vertex hundreds of targets away, so the
        // edge values overflow an i32 (and their f32 conversions round).
        let huge = case % 10 == 7;
        if huge {
            let v = &mut tri[(rng.next() % 3) as usize];
            v.x = (v.x - w as f32 / 2.0) * 400.0;
            v.y = (v.y - h as f32 / 2.0) * 400.0;
        }
        let mut want = Vec::new();
        let tc0_only = c.varyings.texcoord0_only && !c.varyings.lighting;
        let ro = rasterize_triangle_reference(&c, &tri, |f| {
            let mut f = *f;
            if tc0_only {
                // What the fast traversal leaves at 0 (nothing reads it in such draws).
                f.tc[1] = [0.0; 2];
                f.tc[2] = [0.0; 2];
                f.tc0_w = 0.0;
                f.tc_grad[1] = [0.0; 4];
                f.tc_grad[2] = [0.0; 4];
                f.tc0_w_grad = [0.0; 2];
            }
            if c.varyings.skip_depth {
                f.depth = 0.0;
            }
            want.push(frag_bits(&f))
        });
        if tc0_only {
            tc0_only_fragments += want.len() as u64;
            if c.varyings.texcoord_gradients {
                tc0_grad_fragments += want.len() as u64;
            }
        }
        let mut got = Vec::new();
        let fo = rasterize_triangle(&c, &tri, |f| got.push(frag_bits(f)));
        assert_eq!(fo, ro, "case {case}");
        assert_eq!(got, want, "case {case}: {tri:?}");
        // Batched: non-empty batches of at most FRAGMENT_BATCH, concatenated in order.
        let mut batched = Vec::new();
        let bo = rasterize_triangle_batched(&c, &tri, None, |fs| {
            assert!(!fs.is_empty() && fs.len() <= FRAGMENT_BATCH, "case {case}");
            batched.extend(fs.iter().map(frag_bits));
        });
        assert_eq!(bo, ro, "case {case}");
        assert_eq!(batched, want, "case {case}: batched");
        emitted += got.len() as u64;
        if huge {
            huge_fragments += got.len() as u64;
        }

        // Bands: 2 and 3 shares partition the fragments; each share keeps reference order.
        for count in [2u32, 3] {
            let mut all = Vec::new();
            for index in 0..count {
                let bands = Some(RowBands { count, index });
                let mut part = Vec::new();
                let o = rasterize_triangle_bands(&c, &tri, bands, |f| part.push(frag_bits(f)));
                let expect: Vec<_> = want
                    .iter()
                    .filter(|f| {
                        let tile_row = (i64::from(h) - 1 - i64::from(f[1])) >> 3;
                        RowBands { count, index }.owns(tile_row)
                    })
                    .cloned()
                    .collect();
                assert_eq!(part, expect, "case {case} share {index}/{count}");
                if let TriangleOutcome::Drawn { fragments } = o {
                    assert_eq!(fragments, part.len() as u64);
                } else {
                    assert_eq!(o, ro);
                }
                all.extend(part);
            }
            assert_eq!(all.len(), want.len());
        }
    }
    // The cases really draw (most triangles cover pixels).
    assert!(emitted > 200_000, "{emitted}");
    assert!(tc0_only_fragments > 20_000, "{tc0_only_fragments}");
    assert!(tc0_grad_fragments > 10_000, "{tc0_grad_fragments}");
    assert!(huge_fragments > 10_000, "{huge_fragments}");
}

/// The branch-free rounding of the fast traversal equals the reference's `round_to_u8` on every
/// float around each rounding boundary (k + 0.5 for k in −2..=257, ±4096 ulps), on special
/// values and on a million random bit patterns.
#[test]
fn branchless_rounding_matches_the_reference_rounding() {
    let check = |y: f32| {
        assert_eq!(
            fast::round_to_u8_branchless(y),
            u32::from(round_to_u8(y)),
            "{y:?} ({:#x})",
            y.to_bits()
        );
        // The four-lane form, with the value in each lane beside other lane contents.
        for lane in 0..4 {
            let mut v = [0.25, 254.5, f32::NAN, 7.5];
            v[lane] = y;
            let r = fast::round4_to_u8(v);
            assert_eq!(
                r[lane],
                round_to_u8(y),
                "lane {lane}: {y:?} ({:#x})",
                y.to_bits()
            );
            for k in (0..4).filter(|&k| k != lane) {
                assert_eq!(r[k], round_to_u8(v[k]), "other lane {k}");
            }
        }
    };
    for y in [
        0.0,
        -0.0,
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE,
        f32::MAX,
        f32::MIN,
        1e-45,
        254.5,
        255.0,
        255.49998,
        0.49999997,
        0.5,
    ] {
        check(y);
    }
    for k in -2..=257i32 {
        for base in [k as f32 + 0.5, k as f32] {
            let bits = base.to_bits();
            for d in 0..4096u32 {
                check(f32::from_bits(bits.wrapping_add(d)));
                check(f32::from_bits(bits.wrapping_sub(d)));
            }
        }
    }
    let mut rng = Rng(0xC0FF_EE00_1234_5678);
    for _ in 0..1_000_000 {
        check(f32::from_bits(rng.next() as u32));
        check(rng.unit() * 300.0 - 20.0);
    }
}
