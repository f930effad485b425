//! Pixel history (issue 15) against hand-computed expectations.
//!
//! Part 1 drives `gpu_core::fragment::PixelPipeline` directly with register values set here (as
//! `raster_goldens.rs` does): a 64×64 RGBA8 / D24S8 target, a probe on window pixel (10, 10),
//! one full-target quad per draw. Each test that can end a fragment (scissor, culling, alpha,
//! stencil, depth, write mask) and each combiner source (primary colour, fragment lighting
//! primary and secondary, textures 0-3, constant, previous, previous buffer) is checked field by
//! field against values worked out by hand from the register values.
//!
//! Part 2 builds a trace with the scene builder (clear, draws, present to the top screen) and
//! runs `gpu_core::history::pixel_history` on it, through the screen mapping and directly.

use gpu_core::debug::fragment::{FragmentFate, FragmentRecord, PixelProbe, ProbeBuffer};
use gpu_core::fragment::{FragmentHooks, PixelPipeline};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::history::{HistoryEvent, HistoryRequest, HistoryTarget, pixel_history};
use gpu_core::memory::{FCRAM, PhysMem, VRAM};
use gpu_core::raster::Fragment;
use gpu_core::replay::Replay;
use gpu_core::vertex::{OutputVertex, ScreenVertex};

const W: u32 = 64;
const H: u32 = 64;
const COLOR_PA: u32 = VRAM.base;
const DEPTH_PA: u32 = VRAM.base + 0x10_0000;
const TEX_PA: [u32; 3] = [FCRAM.base, FCRAM.base + 0x1000, FCRAM.base + 0x2000];
/// float24 −1.0.
const F24_MINUS_ONE: u32 = 0xBF_0000;
/// The probed window pixel.
const PX: (u32, u32) = (10, 10);
/// Background of every test.
const CLEAR: [u8; 4] = [1, 2, 3, 4];
/// The quad's vertex colour: exact multiples of 1/255, so the primary colour is exact.
const PRIMARY: [u8; 4] = [200, 100, 50, 128];

struct Mini {
    regs: Box<[u32; 0x300]>,
    mem: PhysMem,
}

/// TEXENVi_SOURCE: RGB and alpha sources 0-2 all `s`.
fn source(s: u32) -> u32 {
    s | (s << 4) | (s << 8) | (s << 16) | (s << 20) | (s << 24)
}

fn depth_color_mask(test: bool, func: u32, rgba: u32, write: bool) -> u32 {
    u32::from(test) | (func << 4) | (rgba << 8) | (u32::from(write) << 12)
}

impl Mini {
    fn new() -> Self {
        let mut s = Mini {
            regs: Box::new([0u32; 0x300]),
            mem: PhysMem::new(),
        };
        let r = &mut s.regs;
        r[0x11D] = COLOR_PA >> 3;
        r[0x11C] = DEPTH_PA >> 3;
        r[0x117] = 2;
        r[0x116] = 3;
        r[0x11E] = W | ((H - 1) << 12) | (1 << 24);
        r[0x112] = 0xF;
        r[0x113] = 0xF;
        r[0x114] = 3;
        r[0x115] = 3;
        r[0x04D] = F24_MINUS_ONE;
        r[0x06D] = 1;
        r[0x0C0] = source(0);
        for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            r[base] = source(15);
        }
        r[0x100] = 1 << 8;
        // Blend One/Zero: the source replaces the destination.
        r[0x101] = (1 << 16) | (1 << 24);
        r[0x107] = depth_color_mask(false, 0, 0xF, false);
        let fb = s.fb();
        for y in 0..H {
            for x in 0..W {
                fb.write_color(&mut s.mem, x, y, CLEAR).unwrap();
                fb.write_depth(&mut s.mem, x, y, 0xFF_FFFF).unwrap();
                fb.write_stencil(&mut s.mem, x, y, 7).unwrap();
            }
        }
        s
    }

    fn fb(&self) -> FramebufferConfig {
        FramebufferConfig::from_regs(&self.regs)
    }

    /// An 8×8 RGBA8 texture of one colour on unit `unit`, read by nothing yet.
    fn texture(&mut self, unit: usize, c: [u8; 4]) {
        let base = [0x081, 0x091, 0x099][unit];
        self.regs[0x080] |= 1 << unit;
        self.regs[base + 1] = 8 | (8 << 16);
        self.regs[base + 2] = 0;
        self.regs[base + 3] = 0;
        self.regs[base + 4] = TEX_PA[unit] >> 3;
        self.regs[[0x08E, 0x096, 0x09E][unit]] = 0;
        // RGBA8 texels are stored A, B, G, R.
        let texel = [c[3], c[2], c[1], c[0]];
        let bytes: Vec<u8> = (0..64).flat_map(|_| texel).collect();
        self.mem.write(TEX_PA[unit], &bytes).unwrap();
    }

    /// Draws a quad over the whole target with the probe set and returns the records.
    fn draw(&mut self, hooks: &mut TestHooks) -> Vec<FragmentRecord> {
        self.draw_tris(&quad(PRIMARY), hooks)
    }

    fn draw_tris(
        &mut self,
        tris: &[[ScreenVertex; 3]],
        hooks: &mut TestHooks,
    ) -> Vec<FragmentRecord> {
        let mut p = PixelPipeline::for_draw(&self.mem, &self.regs);
        p.set_probe(
            PixelProbe::pixel(ProbeBuffer::Color(COLOR_PA), PX.0, PX.1),
            7,
        );
        for t in tris {
            p.draw_triangle_with(&mut self.mem, t, hooks);
        }
        let (records, dropped) = p.take_probe_records();
        assert_eq!(dropped, 0);
        records
    }

    fn pixel(&self) -> [u8; 4] {
        self.fb().read_color(&self.mem, PX.0, PX.1).unwrap()
    }
}

/// Hooks with fixed fragment-lighting and procedural-texture colours and a fixed fog.
#[derive(Default)]
struct TestHooks;

const LIGHT_PRIMARY: [u8; 4] = [11, 22, 33, 44];
const LIGHT_SECONDARY: [u8; 4] = [55, 66, 77, 88];
const PROCTEX: [u8; 4] = [99, 98, 97, 96];
const FOG_COLOR: [u8; 3] = [250, 0, 100];

impl FragmentHooks for TestHooks {
    fn lighting(&mut self, _f: &Fragment, _t: &[[u8; 4]; 4]) -> Option<[[u8; 4]; 2]> {
        Some([LIGHT_PRIMARY, LIGHT_SECONDARY])
    }
    fn procedural_texture(&mut self, _f: &Fragment) -> Option<[u8; 4]> {
        Some(PROCTEX)
    }
    fn fog(&mut self, _f: &Fragment, color: &mut [u8; 4]) -> bool {
        // Factor 0.5 towards FOG_COLOR, truncating (the real stage's formula).
        for (c, fc) in color.iter_mut().zip(FOG_COLOR) {
            *c = (0.5 * f32::from(*c) + 0.5 * f32::from(fc)) as u8;
        }
        true
    }
    fn fog_factor(&self, _f: &Fragment) -> Option<(f32, [u8; 3])> {
        Some((0.5, FOG_COLOR))
    }
}

fn v(x: f32, y: f32, c: [u8; 4]) -> ScreenVertex {
    ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 0.5,
        attrs: OutputVertex {
            color: c.map(|k| f32::from(k) / 255.0),
            tc0: [0.25, 0.75],
            ..Default::default()
        },
    }
}

/// Two counter-clockwise (window y up) triangles covering the target.
fn quad(c: [u8; 4]) -> [[ScreenVertex; 3]; 2] {
    let (a, b) = (0.0, 64.0);
    [
        [v(a, a, c), v(b, a, c), v(b, b, c)],
        [v(a, a, c), v(b, b, c), v(a, b, c)],
    ]
}

fn only(records: &[FragmentRecord]) -> &FragmentRecord {
    assert_eq!(records.len(), 1, "one fragment at the probe: {records:#?}");
    &records[0]
}

#[test]
fn primary_colour_passes_and_is_written() {
    let mut s = Mini::new();
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!((r.draw, r.x, r.y), (7, PX.0, PX.1));
    // Pixel (10, 10) of the diagonal split lies in the first triangle (below y = x? no: y = x
    // exactly at the centre (10.5, 10.5), owned by one of the two by the fill rule).
    assert!(r.triangle <= 1);
    assert_eq!(r.fate, Some(FragmentFate::Passed));
    assert_eq!(r.inputs.primary, PRIMARY);
    assert_eq!(r.inputs.depth, 0.5);
    assert_eq!(r.inputs.w, 2.0, "1 / (1/w) with 1/w = 0.5 at every vertex");
    assert_eq!(r.tev.len(), 6);
    let st0 = r.tev[0];
    assert!(st0.active);
    assert_eq!(st0.rgb_in[0], [200, 100, 50]);
    assert_eq!(st0.alpha_in[0], 128);
    assert_eq!(st0.output, PRIMARY);
    for st in &r.tev[1..] {
        assert!(!st.active);
        assert_eq!(
            st.output, PRIMARY,
            "pass-through stages forward the previous colour"
        );
    }
    assert_eq!(r.combiner_output, PRIMARY);
    let b = r.blend.expect("blend record");
    assert!(b.blend);
    assert_eq!(b.src, PRIMARY);
    assert_eq!(b.dst, CLEAR);
    assert_eq!(b.src_factor, [255; 4], "One");
    assert_eq!(b.dst_factor, [0; 4], "Zero");
    assert_eq!(b.written, PRIMARY);
    assert_eq!(s.pixel(), PRIMARY);
    // No depth or stencil test configured: the stage does not touch the buffer.
    assert_eq!(r.depth_stencil, None);
    assert!(r.texels.is_empty() && r.lighting.is_none() && r.fog.is_none());
}

#[test]
fn probe_records_nothing_elsewhere_and_changes_nothing() {
    let mut a = Mini::new();
    let mut b = Mini::new();
    a.draw(&mut TestHooks);
    // Without a probe (the specialised path).
    let mut p = PixelPipeline::for_draw(&b.mem, &b.regs);
    for t in &quad(PRIMARY) {
        p.draw_triangle_with(&mut b.mem, t, &mut TestHooks);
    }
    assert_eq!(p.take_probe_records().0.len(), 0);
    let fb = a.fb();
    assert_eq!(
        fb.read_color_image(&a.mem).unwrap(),
        fb.read_color_image(&b.mem).unwrap()
    );
    // A probe on another buffer records nothing.
    let mut p = PixelPipeline::for_draw(&b.mem, &b.regs);
    p.set_probe(
        PixelProbe::pixel(ProbeBuffer::Color(COLOR_PA + 0x4000), 10, 10),
        0,
    );
    for t in &quad(PRIMARY) {
        p.draw_triangle_with(&mut b.mem, t, &mut TestHooks);
    }
    assert!(p.take_probe_records().0.is_empty());
}

#[test]
fn constant_previous_and_operands() {
    let mut s = Mini::new();
    // Stage 0: constant (source 14) = (9, 8, 7, 6). Stage 1: previous (15) with operands
    // "1 − rgb" (1) and "1 − alpha" (1).
    s.regs[0x0C0] = source(14);
    s.regs[0x0C3] = u32::from_le_bytes([9, 8, 7, 6]);
    s.regs[0x0C8] = source(15);
    s.regs[0x0C9] = 1 | (1 << 12);
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.tev[0].rgb_in[0], [9, 8, 7]);
    assert_eq!(r.tev[0].output, [9, 8, 7, 6]);
    assert!(r.tev[1].active);
    assert_eq!(r.tev[1].rgb_in[0], [246, 247, 248]);
    assert_eq!(r.tev[1].alpha_in[0], 249);
    assert_eq!(r.combiner_output, [246, 247, 248, 249]);
    assert_eq!(s.pixel(), [246, 247, 248, 249]);
}

#[test]
fn previous_buffer_reads_the_buffer_colour_in_stage_1() {
    let mut s = Mini::new();
    // Stage 1 replaces with the previous buffer (13): one stage behind, it reads
    // TEXENV_BUFFER_COLOR.
    s.regs[0x0FD] = u32::from_le_bytes([10, 20, 30, 40]);
    s.regs[0x0C8] = source(13);
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.tev[0].buffer, [0, 0, 0, 0], "stage 0 reads zero");
    assert_eq!(r.tev[1].buffer, [10, 20, 30, 40]);
    assert_eq!(r.tev[1].rgb_in[0], [10, 20, 30]);
    assert_eq!(r.combiner_output, [10, 20, 30, 40]);
}

#[test]
fn textures_0_to_2_with_level_and_address() {
    let colors = [[40, 50, 60, 70], [80, 90, 100, 110], [120, 130, 140, 150]];
    for unit in 0..3 {
        let mut s = Mini::new();
        s.texture(unit, colors[unit]);
        s.regs[0x0C0] = source(3 + unit as u32);
        let recs = s.draw(&mut TestHooks);
        let r = only(&recs);
        assert_eq!(r.texels.len(), 1, "unit {unit}");
        let t = r.texels[0];
        assert_eq!(usize::from(t.unit), unit);
        assert_eq!(t.color, colors[unit], "unit {unit}");
        assert_eq!(t.addr, TEX_PA[unit]);
        assert_eq!((t.level, t.level_addr), (0, TEX_PA[unit]));
        assert_eq!(t.format, 0);
        assert_eq!(
            r.tev[0].rgb_in[0],
            [colors[unit][0], colors[unit][1], colors[unit][2]]
        );
        assert_eq!(r.combiner_output, colors[unit]);
        if unit == 0 {
            assert_eq!(r.inputs.texcoord[0], [0.25, 0.75]);
            assert_eq!(t.texel, [2.0, 6.0], "(u·8, v·8)");
        }
    }
}

#[test]
fn modulate_primary_by_texture() {
    let mut s = Mini::new();
    s.texture(0, [255, 128, 0, 255]);
    // Stage 0: primary × texture 0 (op 1 = modulate) for RGB and alpha.
    // RGB sources primary (0), texture 0 (3); alpha sources primary, texture 0.
    s.regs[0x0C0] = (3 << 4) | (3 << 20);
    s.regs[0x0C2] = 1 | (1 << 16);
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.tev[0].rgb_in[0], [200, 100, 50]);
    assert_eq!(r.tev[0].rgb_in[1], [255, 128, 0]);
    assert_eq!(r.tev[0].alpha_in, [128, 255, 0]);
    // a·b/255 truncated: 200·255/255 = 200, 100·128/255 = 50.19 → 50, 0; 128·255/255 = 128.
    assert_eq!(r.combiner_output, [200, 50, 0, 128]);
}

#[test]
fn procedural_texture_and_fragment_lighting_sources() {
    // Texture 3 (procedural, reg 0x080 bit 10).
    let mut s = Mini::new();
    s.regs[0x080] |= 1 << 10;
    s.regs[0x0C0] = source(6);
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.texels.len(), 1);
    assert_eq!((r.texels[0].unit, r.texels[0].color), (3, PROCTEX));
    assert_eq!(r.combiner_output, PROCTEX);

    // Fragment primary (1) and secondary (2) colours: lighting enabled (reg 0x08F bit 0).
    for (src, want) in [(1, LIGHT_PRIMARY), (2, LIGHT_SECONDARY)] {
        let mut s = Mini::new();
        s.regs[0x08F] = 1;
        s.regs[0x0C0] = source(src);
        let recs = s.draw(&mut TestHooks);
        let r = only(&recs);
        assert_eq!(r.lighting, Some([LIGHT_PRIMARY, LIGHT_SECONDARY]));
        assert_eq!(r.tev[0].output, want, "source {src}");
        assert_eq!(s.pixel(), want);
    }
}

#[test]
fn fog_is_recorded_before_and_after() {
    let mut s = Mini::new();
    s.regs[0x0E0] = 5;
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    let f = r.fog.expect("fog record");
    assert_eq!(f.factor, Some(0.5));
    assert_eq!(f.color, FOG_COLOR);
    assert_eq!(f.before, PRIMARY);
    // RGB only: (200+250)/2 = 225, (100+0)/2 = 50, (50+100)/2 = 75; alpha unchanged.
    assert_eq!(f.after, [225, 50, 75, 128]);
    assert_eq!(s.pixel(), [225, 50, 75, 128]);
}

#[test]
fn scissor_kills_the_fragment() {
    let mut s = Mini::new();
    // Include mode (3) with a box (20..40, 20..40) that leaves (10, 10) out.
    s.regs[0x065] = 3;
    s.regs[0x066] = 20 | (20 << 16);
    s.regs[0x067] = 40 | (40 << 16);
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.fate, Some(FragmentFate::Scissor));
    assert_eq!(
        r.inputs.primary, PRIMARY,
        "the inputs are still interpolated"
    );
    assert!(r.tev.is_empty() && r.blend.is_none());
    assert_eq!(s.pixel(), CLEAR);
    // Exclude mode (1) with the same box keeps the pixel.
    let mut s = Mini::new();
    s.regs[0x065] = 1;
    s.regs[0x066] = 20 | (20 << 16);
    s.regs[0x067] = 40 | (40 << 16);
    assert_eq!(
        only(&s.draw(&mut TestHooks)).fate,
        Some(FragmentFate::Passed)
    );
}

#[test]
fn culled_triangles_are_reported() {
    let mut s = Mini::new();
    // FACECULLING_CONFIG 1: counter-clockwise (front) faces culled; the quad is CCW.
    s.regs[0x040] = 1;
    let recs = s.draw(&mut TestHooks);
    let r = only(&recs);
    assert_eq!(r.fate, Some(FragmentFate::Culled));
    assert_eq!(r.inputs.primary, PRIMARY);
    assert_eq!(s.pixel(), CLEAR);
    // Culling back faces keeps it.
    let mut s = Mini::new();
    s.regs[0x040] = 2;
    assert_eq!(
        only(&s.draw(&mut TestHooks)).fate,
        Some(FragmentFate::Passed)
    );
}

#[test]
fn alpha_test_kills_the_fragment() {
    let mut s = Mini::new();
    // Enabled, func Greater (6), reference 200: alpha 128 fails.
    s.regs[0x104] = 1 | (6 << 4) | (200 << 8);
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::AlphaTest));
    assert_eq!(r.combiner_output, PRIMARY, "the combiners ran");
    assert!(r.blend.is_none() && r.depth_stencil.is_none());
    assert_eq!(s.pixel(), CLEAR);
    // Reference 100 passes.
    let mut s = Mini::new();
    s.regs[0x104] = 1 | (6 << 4) | (100 << 8);
    assert_eq!(
        only(&s.draw(&mut TestHooks)).fate,
        Some(FragmentFate::Passed)
    );
}

#[test]
fn stencil_test_kills_the_fragment_and_runs_the_fail_op() {
    let mut s = Mini::new();
    // STENCIL_TEST: enabled, func Never (0), write mask 0xFF, reference 0x5A, input mask 0xFF.
    // STENCIL_OP fail = Replace (2).
    s.regs[0x105] = 1 | (0xFF << 8) | (0x5A << 16) | (0xFF << 24);
    s.regs[0x106] = 2;
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::Stencil));
    let ds = r.depth_stencil.expect("depth/stencil record");
    assert_eq!((ds.stencil_before, ds.stencil_after), (7, 0x5A));
    assert_eq!((ds.depth_before, ds.depth_after), (0xFF_FFFF, 0xFF_FFFF));
    assert_eq!(s.pixel(), CLEAR);
}

#[test]
fn depth_test_kills_the_fragment_and_depth_writes_are_recorded() {
    let mut s = Mini::new();
    // Depth test Greater (6) against 0xFFFFFF fails; depth writes on.
    s.regs[0x107] = depth_color_mask(true, 6, 0xF, true);
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::Depth));
    let ds = r.depth_stencil.expect("depth/stencil record");
    // trunc(0.5 · 0xFFFFFF) = 0x7FFFFF.
    assert_eq!(ds.fragment_depth, 0x7F_FFFF);
    assert_eq!((ds.depth_before, ds.depth_after), (0xFF_FFFF, 0xFF_FFFF));
    assert_eq!(s.pixel(), CLEAR);
    // Less (4) passes and writes the depth.
    let mut s = Mini::new();
    s.regs[0x107] = depth_color_mask(true, 4, 0xF, true);
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::Passed));
    let ds = r.depth_stencil.expect("depth/stencil record");
    assert_eq!((ds.depth_before, ds.depth_after), (0xFF_FFFF, 0x7F_FFFF));
    assert_eq!((ds.stencil_before, ds.stencil_after), (7, 7));
}

#[test]
fn write_mask_off_leaves_the_pixel() {
    let mut s = Mini::new();
    s.regs[0x107] = depth_color_mask(false, 0, 0, false);
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::WriteMask));
    assert!(r.blend.is_none());
    assert_eq!(s.pixel(), CLEAR);
    // A partial mask (R and A only) writes through blending: G and B keep the destination.
    let mut s = Mini::new();
    s.regs[0x107] = depth_color_mask(false, 0, 0b1001, false);
    let r = only(&s.draw(&mut TestHooks)).clone();
    assert_eq!(r.fate, Some(FragmentFate::Passed));
    let b = r.blend.expect("blend record");
    assert_eq!(b.mask, [true, false, false, true]);
    assert_eq!(b.result, PRIMARY);
    assert_eq!(b.written, [200, 2, 3, 128]);
    assert_eq!(s.pixel(), [200, 2, 3, 128]);
}

#[test]
fn alpha_blending_factors_and_result() {
    let mut s = Mini::new();
    // Add; RGB src alpha (6) / one minus src alpha (7); alpha One/Zero.
    s.regs[0x101] = (6 << 16) | (7 << 20) | (1 << 24);
    let r = only(&s.draw(&mut TestHooks)).clone();
    let b = r.blend.expect("blend record");
    assert_eq!(b.src_factor, [128, 128, 128, 255]);
    assert_eq!(b.dst_factor, [127, 127, 127, 0]);
    // (s·128 + d·127) / 255 truncated: R (200·128 + 1·127)/255 = 100.9 → 100;
    // G (100·128 + 2·127)/255 = 51.2 → 51; B (50·128 + 3·127)/255 = 26.6 → 26; A 128.
    assert_eq!(b.result, [100, 51, 26, 128]);
    assert_eq!(b.written, [100, 51, 26, 128]);
    assert_eq!(s.pixel(), [100, 51, 26, 128]);
}

#[test]
fn overdraw_gives_one_record_per_fragment_in_order() {
    let mut s = Mini::new();
    let mut tris = quad(PRIMARY).to_vec();
    tris.extend(quad([10, 20, 30, 40]));
    let recs = s.draw_tris(&tris, &mut TestHooks);
    assert_eq!(recs.len(), 2);
    assert!(recs[0].triangle < recs[1].triangle);
    assert_eq!(recs[0].blend.unwrap().written, PRIMARY);
    assert_eq!(recs[1].blend.unwrap().dst, PRIMARY);
    assert_eq!(recs[1].blend.unwrap().written, [10, 20, 30, 40]);
}

// ----- through a trace ---------------------------------------------------------------------

mod trace {
    use super::*;
    use gpu_core::debug::EngineEvent;
    use gpu_core::lcd::Screen;
    use pica_cmd::citrace::CiTrace;
    use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
    use pica_cmd::regs::rasterizer::CullMode;
    use pica_cmd::regs::tev::TevSource;
    use picaview_tests::scene::effect::tev_replace;
    use picaview_tests::scene::{
        AttribLayout, BufferLayout, Effect, Scene, ShaderBinary, ShaderProgram, Unit, math,
    };

    const PASS_VS: &str = "
.fvec projection[4]
.out outpos position
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outclr, v1
    end
.end
";

    /// One frame: clear blue, a red triangle in the upright top-left corner of the top screen
    /// drawn with front faces culled and again with back faces culled (exactly one of the two
    /// is culled), then a green one with the colour write mask off; present to the top screen.
    pub fn build() -> Vec<u8> {
        let mut scene = Scene::new().unwrap();
        let target = scene.top_target().unwrap();
        let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).unwrap();
        let prog = ShaderProgram::new(&bin, 0).unwrap();
        let verts = [
            0.0f32, 0.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0, //
            0.0, 120.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0, //
            200.0, 0.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0, //
            0.0, 0.0, -0.5, 1.0, 0.0, 1.0, 0.0, 1.0, //
            0.0, 120.0, -0.5, 1.0, 0.0, 1.0, 0.0, 1.0, //
            200.0, 0.0, -0.5, 1.0, 0.0, 1.0, 0.0, 1.0,
        ];
        let vb = scene.vertex_buffer_f32(&verts).unwrap();
        scene.clear(&target, [0, 0, 255, 255], 0);
        let mut list = scene.command_list();
        list.set_render_target(&target)
            .bind_program(&prog)
            .set_attributes(&AttribLayout::new().loader(0, AttribType::Float, 4).loader(
                1,
                AttribType::Float,
                4,
            ))
            .set_buffers(&BufferLayout::new().buffer(vb, 32, &[0, 1]))
            .uniform_mat4(
                Unit::Vertex,
                0,
                &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
            )
            .set_tev(0, &tev_replace(TevSource::PrimaryColor));
        for cull in [CullMode::CullCcw, CullMode::CullCw] {
            list.set_effect(&Effect {
                cull,
                ..Effect::ui()
            })
            .draw_arrays(PrimitiveTopology::Triangles, 0, 3);
        }
        let mut masked = Effect::ui();
        masked.depth.red_write = false;
        masked.depth.green_write = false;
        masked.depth.blue_write = false;
        masked.depth.alpha_write = false;
        list.set_effect(&masked)
            .draw_arrays(PrimitiveTopology::Triangles, 3, 3);
        scene.submit(list).unwrap();
        scene.present(&target, Screen::Top);
        scene.end_frame();
        scene.finish().unwrap()
    }

    fn replay(bytes: &[u8]) -> Replay<Vec<u8>> {
        Replay::new(CiTrace::from_bytes(bytes.to_vec()).unwrap())
    }

    #[test]
    fn top_screen_pixel_through_the_display_transfer() {
        let bytes = build();
        let mut rp = replay(&bytes);
        let req = HistoryRequest {
            frame: 0,
            after_draw: None,
            until_write: None,
            target: HistoryTarget::Top,
            x: 20,
            y: 20,
        };
        let h = pixel_history(&mut rp, &req).unwrap();
        let m = &h.mapping;
        assert!(m.transfer.is_some(), "{m:?}");
        assert!(
            m.description
                .starts_with("top screen (20,20) -> framebuffer 0x")
                && m.description.contains("via display transfer #"),
            "{}",
            m.description
        );
        // The top target is 240×400 and the LCD is rotated: screen column 20 is buffer row
        // 20 from the top... of the rotated image; screen row 20 is buffer column 239 − 20.
        assert_eq!((m.width, m.height), (240, 400));
        assert_eq!(m.x, 239 - 20, "{}", m.description);
        assert_eq!(h.after.color, Some([255, 0, 0, 255]));
        // Fill, then the three draws.
        assert!(matches!(
            h.events[0],
            HistoryEvent::Engine {
                event: EngineEvent::MemoryFill { .. },
                ..
            }
        ));
        let draws: Vec<(u64, Vec<Option<FragmentFate>>)> = h
            .events
            .iter()
            .filter_map(|e| match e {
                HistoryEvent::Draw {
                    draw, fragments, ..
                } => Some((*draw, fragments.iter().map(|f| f.fate).collect())),
                HistoryEvent::Engine { .. } => None,
            })
            .collect();
        assert_eq!(draws.len(), 3, "{draws:?}");
        let fates: Vec<Option<FragmentFate>> = draws.iter().map(|d| d.1[0]).collect();
        assert!(
            fates[..2].contains(&Some(FragmentFate::Culled))
                && fates[..2].contains(&Some(FragmentFate::Passed)),
            "{fates:?}"
        );
        assert_eq!(fates[2], Some(FragmentFate::WriteMask));
        // The written fragment wrote red over the clear colour (blue).
        let passed = h
            .events
            .iter()
            .find_map(|e| match e {
                HistoryEvent::Draw { fragments, .. } => fragments
                    .iter()
                    .find(|f| f.fate == Some(FragmentFate::Passed)),
                HistoryEvent::Engine { .. } => None,
            })
            .unwrap();
        let b = passed.blend.unwrap();
        assert_eq!(b.dst, [0, 0, 255, 255]);
        assert_eq!(b.written, [255, 0, 0, 255]);

        // The same pixel named in colour-buffer coordinates gives the same events.
        let direct = HistoryRequest {
            target: HistoryTarget::Color,
            x: m.x,
            y: m.row,
            ..req
        };
        let h2 = pixel_history(&mut rp, &direct).unwrap();
        assert_eq!(h2.events, h.events);
        assert_eq!(h2.after, h.after);
    }

    #[test]
    fn untouched_pixel_has_only_the_fill_and_after_draw_stops_early() {
        let bytes = build();
        let mut rp = replay(&bytes);
        let req = HistoryRequest {
            frame: 0,
            after_draw: None,
            until_write: None,
            target: HistoryTarget::Top,
            x: 380,
            y: 220,
        };
        let h = pixel_history(&mut rp, &req).unwrap();
        assert_eq!(h.events.len(), 1, "{:?}", h.events);
        assert_eq!(h.after.color, Some([0, 0, 255, 255]));
        // After draw 0 of the frame: only the first draw's fragment.
        let early = HistoryRequest {
            after_draw: Some(0),
            x: 20,
            y: 20,
            ..req
        };
        let h = pixel_history(&mut rp, &early).unwrap();
        assert_eq!(h.fragment_count(), 1);
        // Errors, never panics.
        assert!(pixel_history(&mut rp, &HistoryRequest { frame: 5, ..req }).is_err());
        assert!(pixel_history(&mut rp, &HistoryRequest { x: 400, ..req }).is_err());
        assert!(
            pixel_history(
                &mut rp,
                &HistoryRequest {
                    after_draw: Some(3),
                    ..req
                }
            )
            .is_err()
        );
        assert!(
            pixel_history(
                &mut rp,
                &HistoryRequest {
                    target: HistoryTarget::Bottom,
                    x: 5,
                    y: 5,
                    ..req
                }
            )
            .is_err(),
            "nothing was presented to the bottom screen"
        );
    }
}
