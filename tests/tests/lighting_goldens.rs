//! Golden images of fragment lighting, the procedural texture, fog and shadow rendering
//! (issue 7; `pica-raster.md` §5.8, §7, §8, §9.2, §9.4).
//!
//! Every scene is built as real GPU state: register writes (including the LUT uploads through
//! the LIGHTING_LUT_DATA, FOG_LUT_DATA and PROCTEX_LUT_DATA ports) are encoded into a command
//! list with pica-cmd's builder (`encode_writes`), placed in FCRAM and executed by gpu-core's
//! command processor (`Gpu::run_command_list`), so the LUT FIFOs fill exactly as a game's would.
//! Geometry does not go through the vertex pipeline: window-space triangles ([`ScreenVertex`],
//! with the normal quaternion and view vector a vertex shader would output) are computed here
//! and fed to the pixel pipeline of the draw (`PixelPipeline::for_draw`) with the fixed-function
//! stages (`FixedFunctionStages::for_draw`) as hooks. Render target: RGBA8 colour in VRAM.
//!
//! Each test explains what its image shows and checks what can be known analytically before
//! comparing bit-exactly with the PNG in `tests/goldens/` (`UPDATE_GOLDENS=1` rewrites them).

use gpu_core::fragment::{PipelineDiag, PixelPipeline};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::gpu::Gpu;
use gpu_core::memory::{FCRAM, PhysMem, VRAM};
use gpu_core::pixel::stages::FixedFunctionStages;
use gpu_core::vertex::{OutputVertex, ScreenVertex};
use pica_cmd::cmdlist::{EncodeStrategy, RegWrite, encode_writes};
use pica_cmd::regs::id;
use pica_cmd::regs::lighting::{light, light_offset};
use pica_cmd::regs::tev::texenv;
use pica_cmd::regs::{F16, F20};
use picaview_tests::image_compare::{RgbaImage, Tolerance, assert_golden, image_from_rows};

const COLOR_PA: u32 = VRAM.base;
const DEPTH_PA: u32 = VRAM.base + 0x10_0000;
const SHADOW_PA: u32 = VRAM.base + 0x20_0000;
const TEX_PA: u32 = FCRAM.base;
const LIST_PA: u32 = FCRAM.base + 0x10_0000;
/// float24 −1.0 (depth scale: depth = −z/w).
const F24_MINUS_ONE: u32 = 0xBF_0000;

// ---- TEV helpers ----------------------------------------------------------------------------

/// TEV source codes.
const SRC_FRAG_PRIMARY: u32 = 1;
const SRC_FRAG_SECONDARY: u32 = 2;
const SRC_TEX3: u32 = 6;
const SRC_CONSTANT: u32 = 14;
const SRC_PREVIOUS: u32 = 15;

/// One TEV stage: RGB sources/operands/op, alpha sources/op (alpha operands all "src alpha").
#[derive(Clone, Copy)]
struct Stage {
    rgb: [u32; 3],
    rgb_operands: [u32; 3],
    rgb_op: u32,
    alpha: [u32; 3],
    alpha_op: u32,
    constant: [u8; 4],
}

impl Stage {
    /// RGB and alpha replaced by `src`.
    fn replace(src: u32) -> Stage {
        Stage {
            rgb: [src, 0, 0],
            rgb_operands: [0; 3],
            rgb_op: 0,
            alpha: [src, 0, 0],
            alpha_op: 0,
            constant: [0; 4],
        }
    }
}

// ---- The test bench ------------------------------------------------------------------------

struct Bench {
    gpu: Gpu,
    mem: PhysMem,
    pending: Vec<RegWrite>,
}

impl Bench {
    /// A 64×64 RGBA8 target with no depth test, blending One/Zero, lighting off.
    fn new(width: u32, height: u32) -> Self {
        let mut b = Bench {
            gpu: Gpu::new(),
            mem: PhysMem::new(),
            pending: Vec::new(),
        };
        b.target(COLOR_PA, width, height);
        b.set(id::DEPTHBUFFER_LOC, DEPTH_PA >> 3);
        b.set(id::DEPTHBUFFER_FORMAT, 3);
        for r in [id::COLORBUFFER_READ, id::COLORBUFFER_WRITE] {
            b.set(r, 0xF);
        }
        b.set(id::DEPTHBUFFER_READ, 3);
        b.set(id::DEPTHBUFFER_WRITE, 3);
        // Depth map: depth = −z/w (scale −1, offset 0), z-buffer.
        b.set(0x04D, F24_MINUS_ONE);
        b.set(0x04E, 0);
        b.set(0x06D, 1);
        b.set(id::COLOR_OPERATION, (0xE4 << 16) | (1 << 8));
        b.set(id::BLEND_FUNC, (1 << 16) | (1 << 24)); // add, One/Zero for RGB and alpha
        b.set(id::DEPTH_COLOR_MASK, 0xF << 8); // no depth test or write, RGBA written
        b.tev(&[Stage::replace(0)]);
        b
    }

    fn set(&mut self, reg: u16, value: u32) {
        self.pending.push(RegWrite::new(reg, value));
    }

    /// Colour buffer at `pa`, RGBA8, `width`×`height`.
    fn target(&mut self, pa: u32, width: u32, height: u32) {
        self.set(id::COLORBUFFER_LOC, pa >> 3);
        self.set(id::COLORBUFFER_FORMAT, 2); // RGBA8, 32-bit pixels
        self.set(
            id::FRAMEBUFFER_DIM,
            width | ((height - 1) << 12) | (1 << 24),
        );
    }

    /// Programs TEV stages 0.. with `stages`; the remaining stages pass "previous" through.
    fn tev(&mut self, stages: &[Stage]) {
        for k in 0..6 {
            let base = texenv(k);
            let s = stages
                .get(k)
                .copied()
                .unwrap_or_else(|| Stage::replace(SRC_PREVIOUS));
            let src = s.rgb[0] | (s.rgb[1] << 4) | (s.rgb[2] << 8);
            let asrc = s.alpha[0] | (s.alpha[1] << 4) | (s.alpha[2] << 8);
            let ops = s.rgb_operands[0] | (s.rgb_operands[1] << 4) | (s.rgb_operands[2] << 8);
            self.set(base, src | (asrc << 16));
            self.set(base + 1, ops);
            self.set(base + 2, s.rgb_op | (s.alpha_op << 16));
            self.set(base + 3, u32::from_le_bytes(s.constant));
            self.set(base + 4, 0);
        }
    }

    /// Uploads lighting LUT `lut` (0-23) through LIGHTING_LUT_INDEX / LIGHTING_LUT_DATA.
    fn lighting_lut(&mut self, lut: u32, entries: &[u32; 256]) {
        self.set(id::LIGHTING_LUT_INDEX, lut << 8);
        for &e in entries {
            self.set(0x1C8, e);
        }
    }

    /// Uploads the fog LUT through FOG_LUT_INDEX / FOG_LUT_DATA.
    fn fog_lut(&mut self, entries: &[u32; 128]) {
        self.set(id::FOG_LUT_INDEX, 0);
        for &e in entries {
            self.set(0x0E8, e);
        }
    }

    /// Uploads proctex table `table` through PROCTEX_LUT / PROCTEX_LUT_DATA.
    fn proctex_lut(&mut self, table: u32, entries: &[u32]) {
        self.set(id::PROCTEX_LUT, table << 8);
        for &e in entries {
            self.set(0x0B0, e);
        }
    }

    /// Encodes the queued writes as a command list and runs it on the command processor.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let bytes = encode_writes(&self.pending, EncodeStrategy::Auto).unwrap();
        self.mem.write(LIST_PA, &bytes).unwrap();
        assert!(
            self.gpu
                .run_command_list(&mut self.mem, LIST_PA, bytes.len() as u32, &mut ())
        );
        self.pending.clear();
    }

    fn fb(&self) -> FramebufferConfig {
        FramebufferConfig::from_regs(&self.gpu.regs)
    }

    /// Fills the current colour buffer with `c`.
    fn clear(&mut self, c: [u8; 4]) {
        self.flush();
        let fb = self.fb();
        for y in 0..fb.height {
            for x in 0..fb.width {
                fb.write_color(&mut self.mem, x, y, c).unwrap();
            }
        }
    }

    /// Draws `tris` with the current state: the per-draw pixel pipeline plus the fixed-function
    /// stages decoded from the registers and the LUTs the command processor filled.
    fn draw(&mut self, tris: &[[ScreenVertex; 3]]) {
        self.flush();
        let regs = &self.gpu.regs;
        let mut p = PixelPipeline::for_draw(&self.mem, regs);
        let mut stages = FixedFunctionStages::for_draw(regs, &self.gpu.luts);
        assert!(stages.issues().is_empty(), "{:?}", stages.issues());
        for t in tris {
            p.draw_triangle_with(&mut self.mem, t, &mut stages);
        }
        let d: Vec<PipelineDiag> = p.take_diagnostics();
        assert!(d.is_empty(), "unexpected diagnostics: {d:?}");
    }

    fn image(&self) -> RgbaImage {
        let fb = self.fb();
        image_from_rows(
            fb.width,
            fb.height,
            &fb.read_color_image(&self.mem).unwrap(),
        )
    }

    /// Window pixel (x, y), y up.
    fn pixel(&self, x: u32, y: u32) -> [u8; 4] {
        self.fb().read_color(&self.mem, x, y).unwrap()
    }
}

// ---- LUT builders ---------------------------------------------------------------------------

/// A lighting LUT for abs-mode inputs: entry i holds f(i/256) (12-bit value) and the
/// sign-magnitude difference to f((i+1)/256) (11-bit magnitude, /2047).
fn lighting_lut(f: impl Fn(f32) -> f32) -> [u32; 256] {
    core::array::from_fn(|i| {
        let a = f(i as f32 / 256.0).clamp(0.0, 1.0);
        let b = f((i + 1) as f32 / 256.0).clamp(0.0, 1.0);
        let value = (a * 4095.0).round() as u32;
        let d = b - a;
        let mag = ((d.abs() * 2047.0).round() as u32).min(2047);
        value | (mag << 12) | (u32::from(d < 0.0) << 23)
    })
}

/// A proctex noise/map LUT: f(i/128) (12-bit value) and the signed 12-bit difference
/// (/4095) to f((i+1)/128).
fn map_lut(f: impl Fn(f32) -> f32) -> [u32; 128] {
    core::array::from_fn(|i| {
        let a = (f(i as f32 / 128.0).clamp(0.0, 1.0) * 4095.0).round() as i32;
        let b = (f((i + 1) as f32 / 128.0).clamp(0.0, 1.0) * 4095.0).round() as i32;
        a as u32 | (((b - a) as u32 & 0xFFF) << 12)
    })
}

/// Proctex colour LUT (RGBA8 words) and colour-difference LUT (signed half differences) for
/// the 128 colours `c(i)`.
fn color_luts(c: impl Fn(usize) -> [u8; 4]) -> ([u32; 256], [u32; 256]) {
    let colors: [[u8; 4]; 256] = core::array::from_fn(|i| c(i.min(127)));
    let diffs = core::array::from_fn(|i| {
        let next = colors[(i + 1).min(255)];
        let d: [u8; 4] = core::array::from_fn(|k| {
            (((i32::from(next[k]) - i32::from(colors[i][k])) / 2) as i8) as u8
        });
        u32::from_le_bytes(d)
    });
    (colors.map(u32::from_le_bytes), diffs)
}

fn f16(x: f32) -> u32 {
    u32::from(F16::from_f32(x).0)
}

/// A light colour word (8-bit channels at bits 20, 10, 0).
fn rgb(r: u32, g: u32, b: u32) -> u32 {
    (r << 20) | (g << 10) | b
}

/// Equal to within 1 per channel.
fn near(a: [u8; 4], b: [u8; 4]) -> bool {
    a.iter().zip(b).all(|(&x, y)| x.abs_diff(y) <= 1)
}

// ---- Geometry -------------------------------------------------------------------------------

/// A vertex at window (x, y), depth `d`, with normal `n` (as the quaternion rotating +z onto
/// it), view vector `view`, texcoord0 `tc` and colour `c`.
fn vertex(x: f32, y: f32, d: f32, n: [f32; 3], view: [f32; 3], tc: [f32; 2]) -> ScreenVertex {
    let q = [-n[1], n[0], 0.0, 1.0 + n[2]];
    let l = (q[0] * q[0] + q[1] * q[1] + q[3] * q[3]).sqrt();
    ScreenVertex {
        x,
        y,
        z_over_w: -d,
        inv_w: 1.0,
        attrs: OutputVertex {
            quat: q.map(|c| c / l),
            view,
            tc0: tc,
            color: [1.0; 4],
            ..Default::default()
        },
    }
}

/// A quad [x0, x1) × [y0, y1) facing +z, texcoords (0, 0) bottom-left to (1, 1) top-right,
/// depth `d0` on the left edge and `d1` on the right edge, view vector +z.
fn quad(x0: f32, y0: f32, x1: f32, y1: f32, d0: f32, d1: f32) -> [[ScreenVertex; 3]; 2] {
    quad_uv(x0, y0, x1, y1, d0, d1, [0.0, 0.0], [1.0, 1.0])
}

#[allow(clippy::too_many_arguments)]
fn quad_uv(
    x0: f32,
    y0: f32,
    x1: f32,
    y1: f32,
    d0: f32,
    d1: f32,
    uv0: [f32; 2],
    uv1: [f32; 2],
) -> [[ScreenVertex; 3]; 2] {
    let n = [0.0, 0.0, 1.0];
    let v = [0.0, 0.0, 1.0];
    let a = vertex(x0, y0, d0, n, v, uv0);
    let b = vertex(x1, y0, d1, n, v, [uv1[0], uv0[1]]);
    let c = vertex(x1, y1, d1, n, v, uv1);
    let e = vertex(x0, y1, d0, n, v, [uv0[0], uv1[1]]);
    [[a, b, c], [a, c, e]]
}

/// Sphere geometry: centre (0, 0, −4) in view space, radius 1, seen orthographically and drawn
/// as a disk of radius `R_PX` pixels around window (32, 32).
const R_PX: f32 = 28.0;
const SPHERE_Z: f32 = -4.0;

/// The visible hemisphere (n.z ≥ 0) tessellated into 12 rings × 32 segments. Each vertex
/// carries its normal (as a quaternion) and the view vector −p (eye at the origin).
fn sphere() -> Vec<[ScreenVertex; 3]> {
    let (rings, segs) = (12usize, 32usize);
    let vert = |ring: usize, seg: usize| {
        let theta = ring as f32 / rings as f32 * std::f32::consts::FRAC_PI_2;
        let phi = seg as f32 / segs as f32 * std::f32::consts::TAU;
        let n = [
            theta.sin() * phi.cos(),
            theta.sin() * phi.sin(),
            theta.cos(),
        ];
        let p = [n[0], n[1], SPHERE_Z + n[2]];
        vertex(
            32.0 + R_PX * n[0],
            32.0 + R_PX * n[1],
            0.5 - 0.25 * n[2],
            n,
            p.map(|c| -c),
            [0.0; 2],
        )
    };
    let mut tris = Vec::new();
    for ring in 0..rings {
        for seg in 0..segs {
            let (a, b) = (vert(ring, seg), vert(ring, seg + 1));
            let (c, d) = (vert(ring + 1, seg), vert(ring + 1, seg + 1));
            if ring > 0 {
                tris.push([a, c, b]);
            }
            tris.push([b, c, d]);
        }
    }
    tris
}

// ---- Lit spheres, one per light environment configuration -----------------------------------

/// Black: no sphere pixel can be black, since the global ambient (10, 10, 10) times the
/// smallest Fresnel factor (0.35) leaves at least 3 in every channel.
const BACKGROUND: [u8; 4] = [0, 0, 0, 255];

/// The LUT ids.
const D0: u32 = 0;
const D1: u32 = 1;
const FR: u32 = 3;
const RB: u32 = 4;
const RG: u32 = 5;
const RR: u32 = 6;
const SP0: u32 = 8;
const DA0: u32 = 16;

/// Sets up the shared lighting scene and returns the bench; `env` is CONFIG0 bits 4-7.
///
/// * Light 0 (slot 0): positional at (2, 2, −2) (up, right, in front of the sphere centre),
///   diffuse (200, 200, 200), ambient (20, 20, 30), specular 0 white, specular 1
///   (60, 40, 90); spotlight aimed at the sphere centre (spot register = normalised
///   (pos − centre)), distance attenuation scale 1/6, bias −0.2.
/// * Light 1 (slot 1): directional from the left, (−1, 0.3, 0.5), diffuse (40, 60, 160),
///   specular 0 (100, 100, 255), specular 1 (30, 30, 30); no spot, no distance attenuation.
/// * Global ambient (10, 10, 10).
/// * LUTs (all abs mode, ×1): D0 = x²⁴ on N·H (tight highlight); D1 = x⁴ on N·H (broad sheen);
///   RR = 0.6 + 0.4x, RG = x², RB = 1 − 0.6x, all on N·V (tinted reflection, different towards
///   the rim); FR = 0.35 + 0.65x on N·V (Fresnel into the secondary alpha, which the combiners
///   use to darken the rim); SP0 = smoothstep(0.975, 0.995, x) on the spot input (a cone of about 6°-13°
///   around the light's axis, which passes through the sphere centre);
///   DA0 = 1 − x (linear fall-off with distance).
/// * Combiners: stage 0 = primary + secondary fragment colour, alpha 255; stage 1 = previous ×
///   secondary alpha (so Fresnel shows as a darker rim; without FR the alpha is 1).
fn lit_sphere_bench(env: u32) -> Bench {
    let mut b = Bench::new(64, 64);
    b.set(id::LIGHTING_ENABLE0, 1);
    b.set(id::LIGHTING_ENABLE1, 0);
    // CONFIG0: environment, fixed bits, Fresnel → secondary alpha (bit 3).
    b.set(
        id::LIGHTING_CONFIG0,
        (env << 4) | (4 << 8) | (1 << 31) | (1 << 3),
    );
    // CONFIG1: every LUT enabled; spotlight and distance attenuation off for light 1
    // (bits 9 and 25); bit 18 is always 1.
    b.set(id::LIGHTING_CONFIG1, (1 << 18) | (1 << 9) | (1 << 25));
    b.set(id::LIGHTING_NUM_LIGHTS, 1);
    b.set(id::LIGHTING_LIGHT_PERMUTATION, 0x10);
    // Inputs: D0 N·H, D1 N·H, SP spot, FR N·V, RB/RG/RR N·V; abs mode; scale ×1.
    b.set(id::LIGHTING_LUTINPUT_SELECT, 0x0222_2400);
    b.set(id::LIGHTING_LUTINPUT_ABS, 0);
    b.set(id::LIGHTING_LUTINPUT_SCALE, 0);
    b.set(id::LIGHTING_AMBIENT, rgb(10, 10, 10));

    let l0 = light(0);
    b.set(l0 + light_offset::SPECULAR0, rgb(255, 255, 255));
    b.set(l0 + light_offset::SPECULAR1, rgb(60, 40, 90));
    b.set(l0 + light_offset::DIFFUSE, rgb(200, 200, 200));
    b.set(l0 + light_offset::AMBIENT, rgb(20, 20, 30));
    b.set(l0 + light_offset::XY, f16(2.0) | (f16(2.0) << 16));
    b.set(l0 + light_offset::Z, f16(-2.0));
    // Spot register: normalize((2, 2, −2) − (0, 0, −4)) = (1, 1, 1)/√3 = 0.57735 → ·2048 = 1182.
    b.set(l0 + light_offset::SPOTDIR_XY, 1182 | (1182 << 16));
    b.set(l0 + light_offset::SPOTDIR_Z, 1182);
    b.set(l0 + light_offset::CONFIG, 0);
    b.set(
        l0 + light_offset::ATTENUATION_SCALE,
        F20::from_f32(1.0 / 6.0).raw(),
    );
    b.set(
        l0 + light_offset::ATTENUATION_BIAS,
        F20::from_f32(-0.2).raw(),
    );

    let l1 = light(1);
    b.set(l1 + light_offset::SPECULAR0, rgb(100, 100, 255));
    b.set(l1 + light_offset::SPECULAR1, rgb(30, 30, 30));
    b.set(l1 + light_offset::DIFFUSE, rgb(40, 60, 160));
    b.set(l1 + light_offset::AMBIENT, 0);
    b.set(l1 + light_offset::XY, f16(-1.0) | (f16(0.3) << 16));
    b.set(l1 + light_offset::Z, f16(0.5));
    b.set(l1 + light_offset::CONFIG, 1);

    b.lighting_lut(D0, &lighting_lut(|x| x.powi(24)));
    b.lighting_lut(D1, &lighting_lut(|x| x.powi(4)));
    b.lighting_lut(RR, &lighting_lut(|x| 0.6 + 0.4 * x));
    b.lighting_lut(RG, &lighting_lut(|x| x * x));
    b.lighting_lut(RB, &lighting_lut(|x| 1.0 - 0.6 * x));
    b.lighting_lut(FR, &lighting_lut(|x| 0.35 + 0.65 * x));
    b.lighting_lut(
        SP0,
        &lighting_lut(|x| {
            let t = ((x - 0.975) / 0.02).clamp(0.0, 1.0);
            t * t * (3.0 - 2.0 * t)
        }),
    );
    b.lighting_lut(DA0, &lighting_lut(|x| 1.0 - x));

    b.tev(&[
        Stage {
            rgb: [SRC_FRAG_PRIMARY, SRC_FRAG_SECONDARY, 0],
            rgb_operands: [0; 3],
            rgb_op: 2, // add
            alpha: [SRC_CONSTANT, 0, 0],
            alpha_op: 0,
            constant: [0, 0, 0, 255],
        },
        Stage {
            rgb: [SRC_PREVIOUS, SRC_FRAG_SECONDARY, 0],
            rgb_operands: [0, 2, 0], // colour × source alpha
            rgb_op: 1,               // modulate
            alpha: [SRC_PREVIOUS, 0, 0],
            alpha_op: 0,
            constant: [0; 4],
        },
    ]);
    b.clear(BACKGROUND);
    b
}

/// Renders the lit sphere for CONFIG0 bits 4-7 = `env` and checks the silhouette: pixel centres
/// farther than R + 1 from the centre keep the background, those nearer than R − 1 are drawn
/// (the 32-segment polygon deviates from the circle by at most R·(1 − cos(π/32)) = 0.13 px).
fn lit_sphere(env: u32) -> RgbaImage {
    let mut b = lit_sphere_bench(env);
    b.draw(&sphere());
    for y in 0..64 {
        for x in 0..64 {
            let r = ((x as f32 + 0.5 - 32.0).powi(2) + (y as f32 + 0.5 - 32.0).powi(2)).sqrt();
            let p = b.pixel(x, y);
            if r > R_PX + 1.0 {
                assert_eq!(p, BACKGROUND, "({x},{y}) outside the sphere");
            } else if r < R_PX - 1.0 {
                assert_ne!(p, BACKGROUND, "({x},{y}) inside the sphere");
                assert_eq!(p[3], 255);
            }
        }
    }
    b.image()
}

#[test]
fn lit_sphere_per_light_environment_configuration() {
    // What the eight images show (same lights and LUTs, only CONFIG0 bits 4-7 change; a LUT the
    // configuration lacks reads 1.0, and RG/RB fall back to RR):
    // * config 0 (D0, RR, SP, DA): white highlight of light 0 (D0), spot cone and distance
    //   fall-off on light 0; no D1 → specular 1 at full strength tinted by RR (grey-violet
    //   wash); no FR → no dark rim.
    // * config 1 (FR, RR, SP, DA): no D0 → specular 0 everywhere at full strength (very bright,
    //   saturated); FR darkens the rim.
    // * config 2 (D0, D1, RR, DA): no spot cone (SP = 1): light 0 lights the whole front;
    //   D1 sheen; no rim.
    // * config 3 (D0, D1, FR, DA): like 2 without RR (reflection 1) but with the Fresnel rim.
    // * config 4 (all but FR): spot cone, highlight, coloured reflections (RR/RG/RB differ), no
    //   rim.
    // * config 5 (all but D1): like 4 with the rim; specular 1 at full strength.
    // * config 6 (all but RB, RG): like "7" with grey (RR-only) reflections.
    // * config "7" (raw 8, everything): full model.
    let envs = [0u32, 1, 2, 3, 4, 5, 6, 8];
    let images: Vec<RgbaImage> = envs.iter().map(|&e| lit_sphere(e)).collect();
    // Every configuration changes the picture.
    for i in 0..images.len() {
        for j in i + 1..images.len() {
            assert_ne!(
                images[i], images[j],
                "configs {} and {} look alike",
                envs[i], envs[j]
            );
        }
    }
    for (env, img) in envs.iter().zip(&images) {
        let name = if *env == 8 { 7 } else { *env };
        assert_golden(
            &format!("lighting_sphere_config{name}"),
            img,
            Tolerance::EXACT,
        );
    }
}

// ---- Normal-mapped quad ---------------------------------------------------------------------

#[test]
fn normal_mapped_quad() {
    // A 64×64 quad facing the viewer (identity quaternion) whose normal comes from texture
    // unit 0 (bump mode 1, renormalised): a 32×32 RGBA8 normal map holding a 4×4 grid of
    // domes (hemispherical bumps of radius 3.5 texels in 8×8 cells; flat between them),
    // encoded as rgb = (n + 1)·127.5. One directional light from the upper left
    // (−0.5, 0.5, 0.7), diffuse white, ambient (25, 25, 25). The combiners output the primary
    // fragment colour only, so texture unit 0 is read solely by the lighting unit.
    //
    // Flat texels are (128, 128, 255): P = (0.003922, 0.003922, 1), renormalised z = 0.999985,
    // L = (−0.5, 0.5, 0.7)/0.994987, N·L = 0.703515 → 0.703515·255 + 25 = 204.4 → 204.
    // Dome texels facing the light are brighter, those facing away darker.
    let mut b = Bench::new(64, 64);
    let mut bytes = vec![0u8; 32 * 32 * 4];
    for t in 0..32u32 {
        for s in 0..32u32 {
            let (cx, cy) = ((s % 8) as f32 - 3.5, (t % 8) as f32 - 3.5);
            let r2 = (cx * cx + cy * cy) / (3.5 * 3.5);
            let n = if r2 < 1.0 {
                let k = 1.0 / 3.5;
                let z = (1.0 - r2).sqrt();
                let l = (cx * cx * k * k + cy * cy * k * k + z * z).sqrt();
                [cx * k / l, cy * k / l, z / l]
            } else {
                [0.0, 0.0, 1.0]
            };
            let c = n.map(|v| ((v + 1.0) * 127.5).round().clamp(0.0, 255.0) as u8);
            // Texture row t counts from the bottom: memory row 31 − t; RGBA8 bytes A, B, G, R.
            let idx = gpu_core::tiling::tiled_index(s, 31 - t, 32) as usize;
            bytes[idx * 4..idx * 4 + 4].copy_from_slice(&[255, c[2], c[1], c[0]]);
        }
    }
    b.mem.write(TEX_PA, &bytes).unwrap();
    b.set(id::TEXUNIT_CONFIG, 1 | (1 << 12));
    b.set(id::TEXUNIT0_DIM, 32 | (32 << 16));
    b.set(id::TEXUNIT0_PARAM, 0); // nearest, clamp to edge, 2D
    b.set(id::TEXUNIT0_LOD, 0);
    b.set(id::TEXUNIT0_ADDR1, TEX_PA >> 3);
    b.set(id::TEXUNIT0_TYPE, 0); // RGBA8
    b.set(id::LIGHTING_ENABLE0, 1);
    // Configuration 0; bump mode 1 from unit 0 (bits 22-23 = 0); renormalisation on.
    b.set(id::LIGHTING_CONFIG0, (4 << 8) | (1 << 31) | (1 << 28));
    b.set(
        id::LIGHTING_CONFIG1,
        (1 << 18) | (0x7B << 16) | (0xFF << 8) | (0xFF << 24),
    );
    b.set(id::LIGHTING_NUM_LIGHTS, 0);
    b.set(id::LIGHTING_LIGHT_PERMUTATION, 0);
    let l0 = light(0);
    b.set(l0 + light_offset::DIFFUSE, rgb(255, 255, 255));
    b.set(l0 + light_offset::AMBIENT, rgb(25, 25, 25));
    b.set(l0 + light_offset::XY, f16(-0.5) | (f16(0.5) << 16));
    b.set(l0 + light_offset::Z, f16(0.7));
    b.set(l0 + light_offset::CONFIG, 1);
    b.tev(&[Stage {
        constant: [0, 0, 0, 255],
        alpha: [SRC_CONSTANT, 0, 0],
        ..Stage::replace(SRC_FRAG_PRIMARY)
    }]);
    b.clear([0, 0, 0, 255]);
    b.draw(&quad(0.0, 0.0, 64.0, 64.0, 0.5, 0.5));
    // Pixel (x, y) samples texel (x/2, y/2). Flat texel: cell corner (0, 0).
    assert_eq!(b.pixel(0, 0), [204, 204, 204, 255]);
    // Texel (2, 5) of a cell (cx, cy = −1.5, 1.5): n = (−0.4286, 0.4286, 0.7955), facing the
    // light: N·L = 0.9905 → 252.6 + 25 → 255. Texel (5, 2): n = (0.4286, −0.4286, 0.7955),
    // facing away: N·L = 0.1292 → 32.9 + 25 = 57.9 → 57 (±1 for the 8-bit normal encoding).
    assert_eq!(b.pixel(4, 10), [255, 255, 255, 255]);
    let away = b.pixel(10, 4)[0];
    assert!((55..=60).contains(&away), "{away}");
    assert_golden("lighting_normal_map_quad", &b.image(), Tolerance::EXACT);
}

// ---- Procedural textures --------------------------------------------------------------------

/// Sets up texture unit 3 on texcoord 0 with an orange gradient colour LUT (128 entries,
/// linear filter), an identity RGB map and a constant-1 noise table; combiners output
/// texture 3 with alpha 255.
fn proctex_bench(width: u32, height: u32) -> Bench {
    let mut b = Bench::new(width, height);
    b.set(id::TEXUNIT_CONFIG, (1 << 10) | (1 << 12));
    b.set(id::TEXUNIT3_PROCTEX4, 1 | (128 << 11)); // linear, width 128
    b.set(id::TEXUNIT3_PROCTEX5, 0);
    // Colour i: black → orange → white.
    let (colors, diffs) = color_luts(|i| {
        let t = i as f32 / 127.0;
        let r = (t * 2.0).min(1.0);
        let g = (t * 2.0 - 0.5).clamp(0.0, 1.0);
        let bl = (t * 2.0 - 1.0).clamp(0.0, 1.0);
        [r, g, bl, 1.0].map(|c| (c * 255.0).round() as u8)
    });
    b.proctex_lut(4, &colors);
    b.proctex_lut(5, &diffs);
    b.proctex_lut(2, &map_lut(|x| x));
    b.proctex_lut(3, &map_lut(|x| x));
    b.proctex_lut(0, &map_lut(|x| x * x * (3.0 - 2.0 * x)));
    b.tev(&[Stage {
        constant: [0, 0, 0, 255],
        alpha: [SRC_CONSTANT, 0, 0],
        ..Stage::replace(SRC_TEX3)
    }]);
    b.clear([0, 0, 0, 255]);
    b
}

#[test]
fn proctex_quad_per_combiner_function() {
    // A 160×64 image of ten 32×32 quads, one per combiner function (left to right, bottom row
    // then top row): U, U², V, V², (U+V)/2, (U²+V²)/2, √(U²+V²), min, max, RMax. Each quad
    // spans u, v = 0..1 (u to the right, v up); clamp to edge; the value goes through the
    // identity RGB map into the orange gradient. Analytic checks: U shows vertical bands (a
    // row is constant), V horizontal bands; the V tile is the U tile transposed; the symmetric
    // functions give tiles symmetric under transposition; the colour at the tile's bottom-left
    // pixel (u, v = 1/64) is the gradient's first entries (nearly black).
    let mut b = proctex_bench(160, 64);
    let mut tris = Vec::new();
    for f in 0..10u32 {
        let (x0, y0) = ((f % 5) as f32 * 32.0, (f / 5) as f32 * 32.0);
        // PROCTEX0: clamp to edge (1) both; RGB function f; alpha function f.
        b.set(id::TEXUNIT3_PROCTEX0, 1 | (1 << 3) | (f << 6) | (f << 10));
        tris.clear();
        tris.extend(quad(x0, y0, x0 + 32.0, y0 + 32.0, 0.5, 0.5));
        b.draw(&tris);
    }
    // Transposed pixels interpolate their coordinates in a different order of f32 operations,
    // so equalities are checked to within 1 per channel.
    let tile = |f: u32, i: u32, j: u32| b.pixel((f % 5) * 32 + i, (f / 5) * 32 + j);
    for i in 0..32 {
        for j in 0..32 {
            assert!(near(tile(0, i, j), tile(0, i, 0)), "U is constant along v");
            assert!(near(tile(2, i, j), tile(2, 0, j)), "V is constant along u");
            assert!(near(tile(2, i, j), tile(0, j, i)), "V = U transposed");
            assert!(near(tile(3, i, j), tile(1, j, i)), "V² = U² transposed");
            for f in [4, 5, 6, 7, 8, 9] {
                assert!(
                    near(tile(f, i, j), tile(f, j, i)),
                    "function {f} is symmetric"
                );
            }
        }
    }
    // u = 1/64 at the left column: the colour LUT near entry 2 (dark).
    assert!(tile(0, 0, 0)[0] < 16);
    // min ≤ max everywhere: the min tile is never brighter (red channel) than the max tile.
    for i in 0..32 {
        for j in 0..32 {
            assert!(tile(7, i, j)[0] <= tile(8, i, j)[0]);
        }
    }
    assert_golden("proctex_functions", &b.image(), Tolerance::EXACT);
}

#[test]
fn proctex_clamps_shifts_and_noise() {
    // A 128×64 image of eight 32×32 quads with u, v = 0..2 (function U, so the colour follows
    // the clamped u): bottom row, left to right: clamp to zero (u > 1 → 0: the right half
    // has the colour of u = 0), clamp to edge (right half saturated), symmetrical repeat (the ramp
    // twice), mirrored repeat (up then down); top row: pulse (black then the last colour), odd
    // u shift driven by v with symmetrical repeat and v = 0..4 (bricks: u is shifted by half a
    // period where int(v)/2 is odd, i.e. v in [2, 4), the upper half), even shift (shifted
    // where (int(v)+1)/2 is odd: v in [1, 3), the middle half), and noise (amplitude 0.3 in u
    // and v, frequency 0.25, on symmetrical repeat: wavy ramps).
    let mut b = proctex_bench(128, 64);
    let freq = f16(0.25);
    b.set(id::TEXUNIT3_PROCTEX1, 1229); // u amplitude 0.3 (fixed1.3.12, 1229/4096), phase 0
    b.set(id::TEXUNIT3_PROCTEX2, 1229);
    b.set(id::TEXUNIT3_PROCTEX3, freq | (freq << 16));
    let tiles: [(u32, u32); 8] = [
        (0, 0),       // clamp to zero
        (1, 0),       // clamp to edge
        (2, 0),       // symmetrical repeat
        (3, 0),       // mirrored repeat
        (4, 0),       // pulse
        (2, 1 << 16), // symmetrical repeat + odd u shift
        (2, 2 << 16), // symmetrical repeat + even u shift
        (2, 1 << 15), // symmetrical repeat + noise
    ];
    for (k, (clamp, extra)) in tiles.iter().enumerate() {
        let (x0, y0) = ((k % 4) as f32 * 32.0, (k / 4) as f32 * 32.0);
        b.set(id::TEXUNIT3_PROCTEX0, clamp | (1 << 3) | extra);
        let v1 = if k == 5 || k == 6 { 4.0 } else { 2.0 };
        b.draw(&quad_uv(
            x0,
            y0,
            x0 + 32.0,
            y0 + 32.0,
            0.5,
            0.5,
            [0.0, 0.0],
            [2.0, v1],
        ));
    }
    let tile = |k: u32, i: u32, j: u32| b.pixel((k % 4) * 32 + i, (k / 4) * 32 + j);
    for j in 0..32 {
        for i in 0..16 {
            // Left halves (u < 1) of the four bottom tiles agree: every mode leaves u ∈ [0, 1)
            // unchanged.
            assert_eq!(tile(0, i, j), tile(1, i, j));
            assert_eq!(tile(0, i, j), tile(2, i, j));
            assert_eq!(tile(0, i, j), tile(3, i, j));
            // Symmetrical repeat has period 16 pixels (u period 1); ±1 for the f32 fraction.
            assert!(near(tile(2, i, j), tile(2, i + 16, j)));
            // Clamp to zero: the right half (u > 1) is the colour of u = 0 exactly.
            // Clamp to edge: the right half is the colour of u = 1.
            assert_eq!(tile(0, i + 16, j), tile(0, 31, 0));
            assert_eq!(tile(1, i + 16, j), tile(1, 31, 0));
        }
        // Pulse has two colours.
        for i in 0..32 {
            let p = tile(4, i, j);
            assert!(
                p == tile(4, 0, 0) || p == tile(4, 31, 0),
                "pulse ({i},{j}) {p:?}"
            );
        }
        // Shifts: v = 4(j + ½)/32. Odd: rows with v in [2, 4) (j ≥ 16) are shifted by half a
        // period (8 pixels) against the unshifted rows; even: rows with v in [1, 3) (8 ≤ j < 24).
        for i in 0..8 {
            let odd = |j: u32| tile(5, i, j);
            let even = |j: u32| tile(6, i, j);
            assert!(near(tile(5, i + 8, 4), odd(20)), "odd shift at column {i}");
            assert!(
                near(tile(6, i + 8, 4), even(12)),
                "even shift at column {i}"
            );
            assert!(near(even(28), even(4)), "even: no shift outside [1, 3)");
        }
    }
    assert_golden("proctex_clamps_noise", &b.image(), Tolerance::EXACT);
}

// ---- Fog ------------------------------------------------------------------------------------

#[test]
fn fog_on_a_depth_ramp() {
    // A 64×64 image: two orange quads whose depth runs from 0 at the left edge to 1 at the
    // right edge. Fog mode 5 with fog colour (40, 60, 120) and a LUT whose factor falls
    // linearly from 1 (no fog) at depth 0 to 0 (all fog) at depth 1. The top quad is drawn
    // normally: orange on the left fading into the fog colour on the right. The bottom quad
    // has z-flip set (the LUT is indexed with 1 − depth): the reverse.
    //
    // Pixel column x has depth d = (x + ½)/64 (z/w interpolates linearly); the LUT gives
    // f ≈ 1 − d and the colour is trunc(f·c + (1 − f)·fog) per channel; checked within 1
    // (the LUT stores f in 11 bits).
    let mut b = Bench::new(64, 64);
    b.set(id::TEXENV_UPDATE_BUFFER, 5);
    b.set(id::FOG_COLOR, 40 | (60 << 8) | (120 << 16));
    let lut: [u32; 128] = core::array::from_fn(|i| {
        let v = |k: usize| (2047.0 * (1.0 - k as f32 / 128.0)).round() as i32;
        let (a, n) = (v(i), v(i + 1));
        ((a as u32) << 13) | ((n - a) as u32 & 0x1FFF)
    });
    b.fog_lut(&lut);
    b.tev(&[Stage {
        constant: [255, 128, 0, 255],
        ..Stage::replace(SRC_CONSTANT)
    }]);
    b.clear([0, 0, 0, 255]);
    b.draw(&quad(0.0, 32.0, 64.0, 64.0, 0.0, 1.0));
    b.set(id::TEXENV_UPDATE_BUFFER, 5 | (1 << 16));
    b.draw(&quad(0.0, 0.0, 64.0, 32.0, 0.0, 1.0));
    let orange = [255.0f32, 128.0, 0.0];
    let fog = [40.0f32, 60.0, 120.0];
    for x in 0..64 {
        let d = (x as f32 + 0.5) / 64.0;
        for (y, f) in [(48, 1.0 - d), (16, d)] {
            let p = b.pixel(x, y);
            for c in 0..3 {
                let want = f * orange[c] + (1.0 - f) * fog[c];
                // Truncation (< 1) plus the LUT's 11-bit rounding (≤ 0.5/2047·255).
                assert!(
                    (f32::from(p[c]) - want).abs() <= 1.1,
                    "({x},{y}) channel {c}: {p:?} vs {want}"
                );
            }
            assert_eq!(p[3], 255);
        }
    }
    assert_golden("fog_depth_ramp", &b.image(), Tolerance::EXACT);
}

// ---- Shadow rendering and shadow sampling ----------------------------------------------------

#[test]
fn shadowed_scene() {
    // Two passes over 64×64 buffers.
    //
    // Pass 1 renders a shadow map (fragment operation mode 3) into an RGBA8 buffer cleared to
    // depth 0xFFFFFF / intensity 0xFF, seen from a light that looks straight down the view
    // axis (so light space = window space): a hard occluder square at depth 0.3 whose
    // combiner output has green 0 (writes its depth: bytes 4C CC CC FF), and a soft occluder
    // square at depth 0.4 with green 128 (writes intensity 128 / (1 + 0·…) = 128 only; the depth
    // stays 0xFFFFFF). FRAGOP_SHADOW: constant 1, linear 0.
    //
    // Pass 2 draws the receiver, a full-screen quad at depth 0.6, lit by a directional light
    // (diffuse (220, 200, 160), ambient (30, 30, 50)) whose shadow factor comes from texture
    // unit 0 = the shadow map as a 2D shadow texture (orthographic, bias 0), texcoord0 =
    // window position / 64 and w = 0.6. The compare gives 0 under the hard occluder (stored
    // depth 0.3 < 0.6), 128 under the soft one and 255 elsewhere, so the primary colour is
    // (250, 230, 210) lit, the ambient (30, 30, 50) in the hard shadow and 220·128/255 + 30 =
    // 140, 130, 130 in the soft shadow (the shadow does not touch the ambient term,
    // `gpu_core::lighting::SHADOW_TERM`).
    let mut b = Bench::new(64, 64);
    // Pass 1.
    b.target(SHADOW_PA, 64, 64);
    b.set(id::COLOR_OPERATION, (0xE4 << 16) | (1 << 8) | 3);
    b.set(id::FRAGOP_SHADOW, f16(1.0));
    b.clear([0xFF; 4]);
    b.tev(&[Stage::replace(SRC_CONSTANT)]);
    b.set(texenv(0) + 3, 0); // green 0: depth write
    b.draw(&quad(8.0, 8.0, 28.0, 56.0, 0.3, 0.3));
    b.set(texenv(0) + 3, 128 << 8); // green 128: intensity write
    b.draw(&quad(36.0, 8.0, 56.0, 56.0, 0.4, 0.4));
    b.flush();
    // The 4 memory bytes of window pixel (x, y) of the shadow map (memory row 63 − y).
    let texel_at = |b: &Bench, x: u32, y: u32| {
        let mut px = [0u8; 4];
        let addr = SHADOW_PA + 4 * gpu_core::tiling::tiled_index(x, 63 - y, 64);
        b.mem.read(addr, &mut px).unwrap();
        px
    };
    let hard = texel_at(&b, 16, 30);
    let depth = (u32::from(hard[0]) << 16) | (u32::from(hard[1]) << 8) | u32::from(hard[2]);
    assert!(
        depth.abs_diff(0x4C_CCCC) <= 1 && hard[3] == 0xFF,
        "{hard:02X?}"
    );
    assert_eq!(texel_at(&b, 46, 30), [0xFF, 0xFF, 0xFF, 128]);
    assert_eq!(texel_at(&b, 32, 30), [0xFF; 4]);

    // Pass 2.
    b.target(COLOR_PA, 64, 64);
    b.set(id::COLOR_OPERATION, (0xE4 << 16) | (1 << 8));
    b.set(id::TEXUNIT_CONFIG, 1 | (1 << 12));
    b.set(id::TEXUNIT0_DIM, 64 | (64 << 16));
    b.set(id::TEXUNIT0_PARAM, (2 << 28) | (1 << 20)); // shadow 2D, nearest, clamp to edge
    b.set(id::TEXUNIT0_LOD, 0);
    b.set(id::TEXUNIT0_ADDR1, SHADOW_PA >> 3);
    b.set(id::TEXUNIT0_SHADOW, 1); // orthographic, bias 0
    b.set(id::TEXUNIT0_TYPE, 0); // RGBA8
    b.set(id::LIGHTING_ENABLE0, 1);
    // Shadow factor (bit 0) on the primary colour (bit 16) from unit 0 (bits 24-25 = 0).
    b.set(id::LIGHTING_CONFIG0, (4 << 8) | (1 << 31) | 1 | (1 << 16));
    b.set(
        id::LIGHTING_CONFIG1,
        (1 << 18) | (0x7B << 16) | (0xFF << 8) | (0xFF << 24),
    );
    b.set(id::LIGHTING_NUM_LIGHTS, 0);
    b.set(id::LIGHTING_LIGHT_PERMUTATION, 0);
    let l0 = light(0);
    b.set(l0 + light_offset::DIFFUSE, rgb(220, 200, 160));
    b.set(l0 + light_offset::AMBIENT, rgb(30, 30, 50));
    b.set(l0 + light_offset::XY, 0);
    b.set(l0 + light_offset::Z, f16(1.0));
    b.set(l0 + light_offset::CONFIG, 1);
    b.tev(&[Stage {
        constant: [0, 0, 0, 255],
        alpha: [SRC_CONSTANT, 0, 0],
        ..Stage::replace(SRC_FRAG_PRIMARY)
    }]);
    b.clear([0, 0, 0, 255]);
    let mut receiver = quad(0.0, 0.0, 64.0, 64.0, 0.6, 0.6);
    for t in &mut receiver {
        for v in t.iter_mut() {
            v.attrs.tc0_w = 0.6;
        }
    }
    b.draw(&receiver);
    let close = |p: [u8; 4], want: [u8; 3]| p.iter().zip(want).all(|(&a, w)| a.abs_diff(w) <= 1);
    assert!(
        close(b.pixel(32, 30), [250, 230, 210]),
        "{:?}",
        b.pixel(32, 30)
    );
    assert!(
        close(b.pixel(16, 30), [30, 30, 50]),
        "{:?}",
        b.pixel(16, 30)
    );
    assert!(
        close(b.pixel(46, 30), [140, 130, 130]),
        "{:?}",
        b.pixel(46, 30)
    );
    assert_golden("shadow_scene", &b.image(), Tolerance::EXACT);
}
