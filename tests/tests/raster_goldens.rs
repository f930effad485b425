//! Golden images of the rasteriser, combiners and fragment operations.
//!
//! Every scene feeds window-space triangles ([`ScreenVertex`]) straight into
//! `gpu_core::fragment::PixelPipeline` (no vertex pipeline), with the register values computed
//! here, into a 64×64 render target in VRAM (RGBA8 colour at PA 0x18000000, D24S8 depth at
//! PA 0x18100000). Each test first checks the image against what is known analytically (pixel
//! coverage from the fill rule, interpolated colours, depth order, stencil regions, the blend
//! formulas of `pica-raster.md` §9.6) and then compares it bit-exactly with the golden PNG in
//! `tests/goldens/` (`UPDATE_GOLDENS=1` rewrites them).

use gpu_core::fragment::PixelPipeline;
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::memory::{FCRAM, PhysMem, VRAM};
use gpu_core::texture::TextureFormat;
use gpu_core::texture::format::texel_from_slice;
use gpu_core::vertex::{OutputVertex, ScreenVertex};
use pica_cmd::cmdlist::{EncodeStrategy, RegWrite, encode_writes, parse};
use picaview_tests::image_compare::{RgbaImage, Tolerance, assert_golden, image_from_rows};

const W: u32 = 64;
const H: u32 = 64;
const COLOR_PA: u32 = VRAM.base;
const DEPTH_PA: u32 = VRAM.base + 0x10_0000;
/// float24 −1.0: sign 1, exponent 63 (bias), mantissa 0.
const F24_MINUS_ONE: u32 = 0xBF_0000;

/// Register values for one scene.
///
/// Register writes go through pica-cmd: [`Scene::set`] queues a write, and before anything
/// reads the registers the queue is encoded into a real command list with
/// `pica_cmd::cmdlist::encode_writes`, parsed back with `pica_cmd::cmdlist::parse` and applied
/// (byte-masked) to the register file, so the scenes are exactly what a command list carries.
struct Scene {
    regs: Box<[u32; 0x300]>,
    pending: Vec<RegWrite>,
    mem: PhysMem,
}

/// TEXENVi_SOURCE for "RGB and alpha from source `s`" (only slot 0 is read by Replace).
fn source(s: u32) -> u32 {
    s | (s << 16)
}

/// BLEND_FUNC (0x101) from its six fields.
fn blend_func(rgb_eq: u32, a_eq: u32, rgb_src: u32, rgb_dst: u32, a_src: u32, a_dst: u32) -> u32 {
    rgb_eq | (a_eq << 8) | (rgb_src << 16) | (rgb_dst << 20) | (a_src << 24) | (a_dst << 28)
}

/// DEPTH_COLOR_MASK (0x107): depth test enable, function, RGBA write mask, depth write.
fn depth_color_mask(test: bool, func: u32, rgba: u32, write: bool) -> u32 {
    u32::from(test) | (func << 4) | (rgba << 8) | (u32::from(write) << 12)
}

impl Scene {
    fn new() -> Self {
        let mut s = Scene {
            regs: Box::new([0u32; 0x300]),
            pending: Vec::new(),
            mem: PhysMem::new(),
        };
        s.init();
        s.apply();
        s
    }

    /// Queues a full-word register write.
    fn set(&mut self, id: u16, value: u32) {
        self.pending.push(RegWrite::new(id, value));
    }

    /// Encodes the queued writes as a command list, parses it back and applies it.
    fn apply(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = encode_writes(&self.pending, EncodeStrategy::Auto).unwrap();
        let list = parse(&bytes).unwrap();
        let mut n = 0;
        for w in list.reg_writes() {
            let slot = &mut self.regs[usize::from(w.id)];
            *slot = w.apply(*slot);
            n += 1;
        }
        assert_eq!(n, self.pending.len());
        self.pending.clear();
    }

    /// The base configuration of every scene.
    fn init(&mut self) {
        // Render target: 0x11D/0x11C = PA >> 3; RGBA8 colour (0x117 bits 16-18 = 0, pixel size
        // field 2 = 32-bit); D24S8 (0x116 = 3); FRAMEBUFFER_DIM = width | (height − 1) << 12.
        self.set(0x11D, COLOR_PA >> 3);
        self.set(0x11C, DEPTH_PA >> 3);
        self.set(0x117, 2);
        self.set(0x116, 3);
        self.set(0x11E, W | ((H - 1) << 12) | (1 << 24));
        self.set(0x112, 0xF);
        self.set(0x113, 0xF);
        self.set(0x114, 3);
        self.set(0x115, 3);
        // Depth map: depth = −z/w (scale −1, offset 0), z-buffer mode.
        self.set(0x04D, F24_MINUS_ONE);
        self.set(0x04E, 0);
        self.set(0x06D, 1);
        // TEV stage 0 replaces with the primary colour; stages 1-5 pass "previous" through.
        self.set(0x0C0, source(0));
        for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            self.set(base, source(15));
        }
        // Blending with One/Zero (plain replace), all channels written, no depth test.
        self.set(0x100, 1 << 8);
        self.set(0x101, blend_func(0, 0, 1, 0, 1, 0));
        self.set(0x107, depth_color_mask(false, 0, 0xF, false));
    }

    /// The render target as configured (queued writes must have been applied: every scene
    /// method that draws does so).
    fn fb(&self) -> FramebufferConfig {
        assert!(self.pending.is_empty(), "register writes not applied yet");
        FramebufferConfig::from_regs(&self.regs)
    }

    /// Writes every pixel of the colour buffer, and depth 1.0 / stencil 0.
    fn clear(&mut self, f: impl Fn(u32, u32) -> [u8; 4]) {
        let fb = self.fb();
        for y in 0..H {
            for x in 0..W {
                fb.write_color(&mut self.mem, x, y, f(x, y)).unwrap();
                fb.write_depth(&mut self.mem, x, y, 0xFF_FFFF).unwrap();
                fb.write_stencil(&mut self.mem, x, y, 0).unwrap();
            }
        }
    }

    /// Draws triangles with the current registers (through the per-draw entry the command
    /// processor uses, which decodes the textures the combiners read).
    fn draw(&mut self, tris: &[[ScreenVertex; 3]]) {
        self.apply();
        let mut p = PixelPipeline::for_draw(&self.mem, &self.regs);
        for t in tris {
            p.draw_triangle(&mut self.mem, t);
        }
        let d = p.take_diagnostics();
        assert!(d.is_empty(), "unexpected diagnostics: {d:?}");
    }

    /// Window pixel (x, y), y up.
    fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        self.fb().read_color(&self.mem, x, y).unwrap()
    }

    /// The colour buffer as a person sees it (top row first).
    fn image(&self) -> RgbaImage {
        image_from_rows(W, H, &self.fb().read_color_image(&self.mem).unwrap())
    }
}

/// A vertex at window (x, y) with colour `c` (0..1 per channel) and depth `d` (z/w = −d).
fn v(x: f32, y: f32, d: f32, c: [f32; 4]) -> ScreenVertex {
    ScreenVertex {
        x,
        y,
        z_over_w: -d,
        inv_w: 1.0,
        attrs: OutputVertex {
            color: c,
            ..Default::default()
        },
    }
}

/// Two triangles covering the rectangle [x0, x1) × [y0, y1).
fn quad(x0: f32, y0: f32, x1: f32, y1: f32, d: f32, c: [f32; 4]) -> [[ScreenVertex; 3]; 2] {
    [
        [v(x0, y0, d, c), v(x1, y0, d, c), v(x1, y1, d, c)],
        [v(x0, y0, d, c), v(x1, y1, d, c), v(x0, y1, d, c)],
    ]
}

const BLACK: [u8; 4] = [0, 0, 0, 255];

#[test]
fn flat_triangle() {
    // A right triangle with legs of 48 px from (8, 8). A pixel centre (x + ½, y + ½) is inside
    // when (x − 8) + (y − 8) + 1 < 48; centres on the hypotenuse ((x−8)+(y−8) = 47) belong to the
    // right edge and are not drawn; no centre lies on the two legs. Expected: 48·47/2 = 1128.
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    let c = [1.0, 0.5, 0.0, 1.0]; // → (255, 128, 0, 255)
    s.draw(&[[
        v(8.0, 8.0, 0.5, c),
        v(56.0, 8.0, 0.5, c),
        v(8.0, 56.0, 0.5, c),
    ]]);
    let mut n = 0;
    for y in 0..H {
        for x in 0..W {
            let inside = x >= 8 && y >= 8 && (x - 8) + (y - 8) <= 46;
            let want = if inside { [255, 128, 0, 255] } else { BLACK };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
            n += u32::from(inside);
        }
    }
    assert_eq!(n, 1128);
    assert_golden("flat_triangle", &s.image(), Tolerance::EXACT);
}

#[test]
fn gouraud_triangle() {
    // Red, green, blue corners; all w = 1, so the colour at a pixel centre is the barycentric
    // mix, rounded to u8 (round half away from zero).
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    let (a, b, c) = ((4.0f32, 4.0f32), (60.0f32, 10.0f32), (20.0f32, 60.0f32));
    s.draw(&[[
        v(a.0, a.1, 0.5, [1.0, 0.0, 0.0, 1.0]),
        v(b.0, b.1, 0.5, [0.0, 1.0, 0.0, 1.0]),
        v(c.0, c.1, 0.5, [0.0, 0.0, 1.0, 1.0]),
    ]]);
    let area = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
    let mut checked = 0;
    for y in 0..H {
        for x in 0..W {
            let p = (x as f32 + 0.5, y as f32 + 0.5);
            let l0 = ((b.0 - p.0) * (c.1 - p.1) - (b.1 - p.1) * (c.0 - p.0)) / area;
            let l1 = ((c.0 - p.0) * (a.1 - p.1) - (c.1 - p.1) * (a.0 - p.0)) / area;
            let l2 = 1.0 - l0 - l1;
            // Only check pixels clearly inside (edge ownership is covered by flat_triangle).
            if l0 > 0.01 && l1 > 0.01 && l2 > 0.01 {
                let got = s.pixel(x, y);
                let want = [l0, l1, l2].map(|l| (l * 255.0).round() as i32);
                for ch in 0..3 {
                    assert!(
                        (i32::from(got[ch]) - want[ch]).abs() <= 1,
                        "({x},{y}) {got:?} {want:?}"
                    );
                }
                assert_eq!(got[3], 255);
                checked += 1;
            }
        }
    }
    assert!(checked > 1000);
    assert_golden("gouraud_triangle", &s.image(), Tolerance::EXACT);
}

#[test]
fn fill_rule_mesh_has_no_gaps_or_overlaps() {
    // A 4×4 grid of quads over [4, 60]² with interior vertices moved off the grid, split into
    // triangles, drawn with additive blending (One/One) of 60 per hit on black: every pixel
    // inside must be exactly 60 (a gap would be 0, a double hit 120).
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    s.set(0x0C0, source(14)); // constant colour
    s.set(0x0C3, u32::from_le_bytes([60, 60, 60, 0]));
    s.set(0x101, blend_func(0, 0, 1, 1, 0, 1)); // RGB: s + d; alpha: d
    let n = 4;
    let jitter = [
        [0.0, 0.0],
        [1.3, -0.7],
        [-0.5, 1.1],
        [0.25, 0.75],
        [-1.2, -0.4],
    ];
    let mut pts = vec![[0f32; 2]; (n + 1) * (n + 1)];
    for j in 0..=n {
        for i in 0..=n {
            let mut p = [4.0 + 14.0 * i as f32, 4.0 + 14.0 * j as f32];
            if i > 0 && i < n && j > 0 && j < n {
                let k = jitter[(i * 3 + j) % jitter.len()];
                p = [p[0] + k[0], p[1] + k[1]];
                if (i + j) % 2 == 0 {
                    // Put this vertex exactly on a pixel centre.
                    p = [p[0].floor() + 0.5, p[1].floor() + 0.5];
                }
            }
            pts[j * (n + 1) + i] = p;
        }
    }
    let mut tris = Vec::new();
    let c = [0.0; 4];
    for j in 0..n {
        for i in 0..n {
            let q = |ii: usize, jj: usize| {
                let p = pts[jj * (n + 1) + ii];
                v(p[0], p[1], 0.5, c)
            };
            let (a, b, cc, d) = (q(i, j), q(i + 1, j), q(i + 1, j + 1), q(i, j + 1));
            if (i + j) % 2 == 0 {
                tris.push([a, b, cc]);
                tris.push([a, cc, d]);
            } else {
                // Clockwise order for half of them: drawn the same with culling off.
                tris.push([a, d, b]);
                tris.push([b, d, cc]);
            }
        }
    }
    s.draw(&tris);
    for y in 0..H {
        for x in 0..W {
            let inside = (4..60).contains(&x) && (4..60).contains(&y);
            let want = if inside { [60, 60, 60, 255] } else { BLACK };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
        }
    }
    assert_golden("fill_rule_mesh", &s.image(), Tolerance::EXACT);
}

#[test]
fn depth_tested_overlapping_triangles() {
    // Triangle A: red at constant depth 0.5. Triangle B: green, depth 0.2 at x = 0 rising
    // linearly to 0.8 at x = 64 (depth = 0.2 + 0.6·x/64, exact in z/w since z/w is linear in
    // screen space). Depth test Less, depth writes on, drawn A then B: where both cover a pixel,
    // B wins exactly where its depth < 0.5, i.e. pixel centres with x + ½ < 32 → x ≤ 31.
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    s.set(0x107, depth_color_mask(true, 4, 0xF, true));
    let red = [1.0, 0.0, 0.0, 1.0];
    let green = [0.0, 1.0, 0.0, 1.0];
    let a = [
        v(0.0, 0.0, 0.5, red),
        v(64.0, 0.0, 0.5, red),
        v(32.0, 64.0, 0.5, red),
    ];
    let db = |x: f32| 0.2 + 0.6 * x / 64.0;
    let b = [
        v(0.0, 16.0, db(0.0), green),
        v(64.0, 16.0, db(64.0), green),
        v(64.0, 48.0, db(64.0), green),
    ];
    s.draw(&[a]);
    s.draw(&[b]);
    let in_a = |x: u32, y: u32| {
        // Edges of A: y > 0, y < 2x, y < 2(64 − x) at the pixel centre (strict: no centre lies on
        // the slanted edges since 2x+1 is odd and y+½ is not an integer).
        let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
        py < 2.0 * px && py < 2.0 * (64.0 - px)
    };
    let in_b = |x: u32, y: u32| {
        // B: bottom edge y = 16 (owned), slanted edge from (0, 16) to (64, 48): y < 16 + x/2.
        let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
        py > 16.0 && py < 16.0 + px / 2.0
    };
    for y in 0..H {
        for x in 0..W {
            let want = match (in_a(x, y), in_b(x, y)) {
                (true, true) if x <= 31 => [0, 255, 0, 255],
                (true, _) => [255, 0, 0, 255],
                (false, true) => [0, 255, 0, 255],
                (false, false) => BLACK,
            };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
        }
    }
    // The depth buffer holds B's depth left of the crossing and A's to the right.
    let (z_left, _) = s.fb().read_depth_stencil(&s.mem, 10, 20).unwrap();
    let (z_right, _) = s.fb().read_depth_stencil(&s.mem, 40, 20).unwrap();
    assert_eq!(z_right, (0.5f32 * 16_777_215.0) as u32);
    let want_left = db(10.5) * 16_777_215.0;
    assert!(
        (z_left as f32 - want_left).abs() < 64.0,
        "{z_left} vs {want_left}"
    );
    assert_golden("depth_overlap", &s.image(), Tolerance::EXACT);
}

#[test]
fn stencil_masking() {
    // Pass 1: a triangle writes stencil 1 (Always, depth-pass Replace) with colour writes off.
    // Pass 2: a full-screen blue quad where stencil == 1. Pass 3: a yellow quad where
    // stencil != 1. Result: the triangle's exact coverage in blue, everything else yellow.
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    let tri = [
        v(10.0, 6.0, 0.5, [0.0; 4]),
        v(58.0, 30.0, 0.5, [0.0; 4]),
        v(20.0, 58.0, 0.5, [0.0; 4]),
    ];
    // STENCIL_TEST: enable, func (bits 4-6), write mask 0xFF (bits 8-15), ref 1 (16-23),
    // input mask 0xFF (24-31).
    let stencil =
        |func: u32, write_mask: u32| 1 | (func << 4) | (write_mask << 8) | (1 << 16) | (0xFF << 24);
    s.set(0x105, stencil(1, 0xFF));
    s.set(0x106, 2 << 8); // depth pass: Replace
    s.set(0x107, depth_color_mask(false, 0, 0, false));
    s.draw(&[tri]);
    // Record the coverage from the stencil buffer itself.
    let mut covered = vec![false; (W * H) as usize];
    for y in 0..H {
        for x in 0..W {
            covered[(y * W + x) as usize] = s.fb().read_depth_stencil(&s.mem, x, y).unwrap().1 == 1;
        }
    }
    s.set(0x106, 0);
    s.set(0x107, depth_color_mask(false, 0, 0xF, false));
    s.set(0x105, stencil(2, 0)); // Equal
    s.draw(&quad(0.0, 0.0, 64.0, 64.0, 0.5, [0.0, 0.0, 1.0, 1.0]));
    s.set(0x105, stencil(3, 0)); // NotEqual
    s.draw(&quad(0.0, 0.0, 64.0, 64.0, 0.5, [1.0, 1.0, 0.0, 1.0]));
    let mut n = 0;
    for y in 0..H {
        for x in 0..W {
            let inside = covered[(y * W + x) as usize];
            let want = if inside {
                [0, 0, 255, 255]
            } else {
                [255, 255, 0, 255]
            };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
            n += u32::from(inside);
        }
    }
    // Coverage ≈ the triangle's area, |cross product| / 2 = 1128 px².
    let area = ((58.0 - 10.0) * (58.0 - 6.0) - (30.0 - 6.0) * (20.0 - 10.0)) / 2.0f32;
    assert!((n as f32 - area).abs() < 0.05 * area, "{n} vs {area}");
    assert_golden("stencil_mask", &s.image(), Tolerance::EXACT);
}

/// The destination pattern of the blend scene: a horizontal ramp in R, a vertical ramp in G, a
/// constant B, and an alpha ramp.
fn blend_background(x: u32, y: u32) -> [u8; 4] {
    [(x * 4) as u8, (y * 4) as u8, 96, (255 - x * 3) as u8]
}

/// The §9.6 formula, written out independently of the implementation.
fn expected_blend(eq: u32, src: [u8; 4], dst: [u8; 4]) -> [u8; 4] {
    let mut out = [0u8; 4];
    for ch in 0..4 {
        let s = i32::from(src[ch]);
        let d = i32::from(dst[ch]);
        // RGB: SrcAlpha / OneMinusSrcAlpha; alpha: One / One.
        let (sf, df) = if ch < 3 {
            (i32::from(src[3]), 255 - i32::from(src[3]))
        } else {
            (255, 255)
        };
        let r = match eq {
            0 => (s * sf + d * df) / 255,
            1 => (s * sf - d * df) / 255,
            2 => (d * df - s * sf) / 255,
            // MIN / MAX compare the factored values (hardware fact FO-5).
            3 => (s * sf).min(d * df) / 255,
            4 => (s * sf).max(d * df) / 255,
            _ => unreachable!(),
        };
        out[ch] = r.clamp(0, 255) as u8;
    }
    out
}

#[test]
fn every_blend_equation() {
    // Five horizontal bands, 12 rows each from y = 2: band k blends a constant source colour
    // over the background with equation k (0 add, 1 subtract, 2 reverse subtract, 3 min, 4 max),
    // RGB factors SrcAlpha / OneMinusSrcAlpha, alpha factors One / One.
    let mut s = Scene::new();
    s.clear(blend_background);
    let src = [200u8, 60, 180, 150];
    s.set(0x0C0, source(14));
    s.set(0x0C3, u32::from_le_bytes(src));
    for eq in 0..5u32 {
        s.set(0x101, blend_func(eq, eq, 6, 7, 1, 1));
        let y0 = 2.0 + 12.0 * eq as f32;
        s.draw(&quad(0.0, y0, 64.0, y0 + 12.0, 0.5, [0.0; 4]));
    }
    for y in 0..H {
        for x in 0..W {
            let band = if (2..62).contains(&y) {
                Some((y - 2) / 12)
            } else {
                None
            };
            let want = match band {
                Some(eq) => expected_blend(eq, src, blend_background(x, y)),
                None => blend_background(x, y),
            };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
        }
    }
    // Subtract and reverse subtract clamp at 0 somewhere in this scene; min/max apply the
    // factors (FO-5).
    assert_eq!(s.pixel(63, 2 + 12 * 2)[0], 0);
    assert_golden("blend_equations", &s.image(), Tolerance::EXACT);
}

#[test]
fn scissor_and_write_mask() {
    // A full-screen white quad with scissor include (16..=47, 8..=39), then a red quad with
    // scissor exclude (24..=39 × 16..=31) writing only R and A: analytic regions.
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    s.set(0x065, 3);
    s.set(0x066, 16 | (8 << 16));
    s.set(0x067, 47 | (39 << 16));
    s.draw(&quad(0.0, 0.0, 64.0, 64.0, 0.5, [1.0; 4]));
    s.set(0x065, 1);
    s.set(0x066, 24 | (16 << 16));
    s.set(0x067, 39 | (31 << 16));
    s.set(0x107, depth_color_mask(false, 0, 0b1001, false));
    s.draw(&quad(0.0, 0.0, 64.0, 64.0, 0.5, [1.0, 0.0, 0.0, 0.5]));
    for y in 0..H {
        for x in 0..W {
            let white = (16..=47).contains(&x) && (8..=39).contains(&y);
            let hole = (24..=39).contains(&x) && (16..=31).contains(&y);
            let base = if white { [255, 255, 255, 255] } else { BLACK };
            // Red pass: R = 255, A = 128, G and B kept, except inside the excluded box.
            let want = if hole {
                base
            } else {
                [255, base[1], base[2], 128]
            };
            assert_eq!(s.pixel(x, y), want, "({x},{y})");
        }
    }
    assert_golden("scissor_write_mask", &s.image(), Tolerance::EXACT);
}

// ---------------------------------------------------------------------------------------------
// Textured quads (texture unit 0, nearest filtering, w = 1).

/// Where the scenes put texture data: FCRAM.
const TEX_PA: u32 = FCRAM.base;

/// Deterministic pseudo-random bytes (xorshift64*), so every format sees varied texels.
fn pattern_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed | 1;
    (0..n)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 56) as u8
        })
        .collect()
}

/// A vertex with texcoord0 = (u, v) (colour unused).
fn vt(x: f32, y: f32, u: f32, v: f32) -> ScreenVertex {
    ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        attrs: OutputVertex {
            tc0: [u, v],
            ..Default::default()
        },
    }
}

/// A quad [x0, x1) × [y0, y1) with texcoords (u0, v0) at the bottom-left corner and (u1, v1)
/// at the top-right.
#[allow(clippy::too_many_arguments)]
fn tex_quad(
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    u0: f32,
    v0: f32,
    u1: f32,
    v1: f32,
) -> [[ScreenVertex; 3]; 2] {
    [
        [vt(x0, y0, u0, v0), vt(x1, y0, u1, v0), vt(x1, y1, u1, v1)],
        [vt(x0, y0, u0, v0), vt(x1, y1, u1, v1), vt(x0, y1, u0, v1)],
    ]
}

impl Scene {
    /// Configures texture unit 0: enabled, 2D, nearest, `w`×`h` texels of `format` at
    /// `TEX_PA`, wrap modes (PARAM bits 12-14 = s, 8-10 = t), border colour; TEV stage 0
    /// replaces with texture 0.
    fn texture0(
        &mut self,
        format: TextureFormat,
        w: u32,
        h: u32,
        wrap_s: u32,
        wrap_t: u32,
        border: [u8; 4],
    ) {
        self.set(0x080, 1 | (1 << 12));
        self.set(0x081, u32::from_le_bytes(border));
        self.set(0x082, h | (w << 16)); // DIM: height bits 0-10, width 16-26
        self.set(0x083, (wrap_t << 8) | (wrap_s << 12));
        self.set(0x084, 0);
        self.set(0x085, TEX_PA >> 3);
        self.set(0x08E, format.id());
        self.set(0x0C0, source(3));
    }
}

#[test]
fn textured_quad_in_every_format() {
    // A 128×128 target holding a 4×4 grid of 32×32 tiles; tile k shows a 16×16 texture of
    // format k (pseudo-random bytes) magnified 2×. With texcoords 0..1 across a tile, the pixel
    // centre at (tx + i + ½) samples texel floor((i + ½)/2) = i/2 along s, and along t the
    // texel row j/2 counted from the bottom, i.e. memory row 15 − j/2. Expected colours come
    // from the texel decoder on the same bytes.
    let mut s = Scene::new();
    let (tw, th) = (128u32, 128u32);
    s.set(0x11E, tw | ((th - 1) << 12) | (1 << 24));
    s.apply();
    let fb = s.fb();
    for y in 0..th {
        for x in 0..tw {
            fb.write_color(&mut s.mem, x, y, [40, 0, 40, 255]).unwrap();
        }
    }
    let mut expected = vec![[40u8, 0, 40, 255]; (tw * th) as usize];
    for (k, &format) in TextureFormat::ALL.iter().enumerate() {
        let bytes = pattern_bytes(format.level_bytes(16, 16) as usize, 0x1234 + k as u64);
        s.mem.write(TEX_PA, &bytes).unwrap();
        s.texture0(format, 16, 16, 0, 0, [0; 4]);
        let (tx, ty) = ((k as u32 % 4) * 32, (k as u32 / 4) * 32);
        let (x0, y0) = (tx as f32, ty as f32);
        s.draw(&tex_quad(x0, y0, x0 + 32.0, y0 + 32.0, 0.0, 0.0, 1.0, 1.0));
        for j in 0..32 {
            for i in 0..32 {
                let texel = texel_from_slice(format, &bytes, i / 2, 15 - j / 2, 16);
                expected[((ty + j) * tw + tx + i) as usize] = texel;
            }
        }
    }
    for y in 0..th {
        for x in 0..tw {
            let got = s.fb().read_color(&s.mem, x, y).unwrap();
            assert_eq!(got, expected[(y * tw + x) as usize], "({x},{y})");
        }
    }
    let img = image_from_rows(tw, th, &s.fb().read_color_image(&s.mem).unwrap());
    assert_golden("texture_formats", &img, Tolerance::EXACT);
}

/// Expected wrapped texel index (`pica-raster.md` §5.7) for an 8-texel axis; `None` = border.
fn wrap8(mode: u32, c: i32) -> Option<i32> {
    let n = 8;
    match mode {
        0 => Some(c.clamp(0, n - 1)),
        1 => (0..n).contains(&c).then_some(c),
        2 | 6 | 7 => Some(c.rem_euclid(n)),
        3 => {
            let m = c.rem_euclid(2 * n);
            Some(if m >= n { 2 * n - 1 - m } else { m })
        }
        4 => Some(if c < 0 { c.rem_euclid(n) } else { c.min(n - 1) }),
        5 => (c < n).then(|| c.rem_euclid(n)),
        _ => unreachable!(),
    }
}

#[test]
fn every_wrap_mode() {
    // Eight 16×32 tiles (two rows of four), tile m using wrap mode m in both s and t, over an
    // 8×8 RGBA8 texture whose texel (s, t) has R = 32·s + 16, G = 32·t + 16 (t counted from
    // the bottom), B = 200, with texcoords −1..2 across the tile: pixel i samples
    // c = floor(8·(−1 + 3·(i + ½)/n)) for a tile n pixels long (16 across, 32 up); the sample
    // points never fall on a texel edge.
    // Border colour: (255, 0, 255, 255).
    let mut s = Scene::new();
    s.clear(|_, _| BLACK);
    let mut bytes = vec![0u8; 8 * 8 * 4];
    for t in 0..8u32 {
        for sx in 0..8u32 {
            let ym = 7 - t;
            let idx = gpu_core::tiling::tiled_index(sx, ym, 8) as usize;
            // RGBA8 bytes in memory: A, B, G, R.
            bytes[idx * 4..idx * 4 + 4].copy_from_slice(&[
                255,
                200,
                (32 * t + 16) as u8,
                (32 * sx + 16) as u8,
            ]);
        }
    }
    s.mem.write(TEX_PA, &bytes).unwrap();
    let border = [255, 0, 255, 255];
    for mode in 0..8u32 {
        s.texture0(TextureFormat::Rgba8, 8, 8, mode, mode, border);
        let (x0, y0) = ((mode % 4) as f32 * 16.0, (mode / 4) as f32 * 32.0);
        // 16 pixels wide, 32 tall: s covers −1..2 over 16 px, t over 32 px.
        s.draw(&tex_quad(
            x0,
            y0,
            x0 + 16.0,
            y0 + 32.0,
            -1.0,
            -1.0,
            2.0,
            2.0,
        ));
    }
    for mode in 0..8u32 {
        let (tx, ty) = ((mode % 4) * 16, (mode / 4) * 32);
        for j in 0..32 {
            for i in 0..16 {
                let cs = (8.0 * (-1.0 + 3.0 * (i as f32 + 0.5) / 16.0)).floor() as i32;
                let ct = (8.0 * (-1.0 + 3.0 * (j as f32 + 0.5) / 32.0)).floor() as i32;
                let want = match (wrap8(mode, cs), wrap8(mode, ct)) {
                    (Some(a), Some(b)) => [(32 * a + 16) as u8, (32 * b + 16) as u8, 200, 255],
                    _ => border,
                };
                assert_eq!(s.pixel(tx + i, ty + j), want, "mode {mode} ({i},{j})");
            }
        }
    }
    assert_golden("wrap_modes", &s.image(), Tolerance::EXACT);
}
