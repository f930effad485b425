//! Hardware-measured GPU behaviour (testdata/hw-facts.md, issue 20): vertex loading, the vertex
//! pipeline, clipping and rasterisation, combiners, fog and fragment operations. One test per
//! fact, named `hw_<fact id>_...`, asserting what the console showed; the table of all facts is
//! `docs/hardware-behaviour.md`.
//!
//! Each test builds a command list with pica-cmd's builder and runs it through `Gpu` from
//! physical memory (the same path a trace takes), into a 64×64 RGBA8 colour buffer with a D24S8
//! depth/stencil buffer, and reads pixels back; or, where the fact concerns one stage's
//! arithmetic, calls that stage's public API directly (combiners, blending).

use gpu_core::debug::{DrawDetail, EventLog};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::gpu::Gpu;
use gpu_core::memory::{FCRAM, PhysMem, VRAM};
use gpu_core::tev::{TevConfig, TevInputs};
use pica_cmd::cmdlist::CmdListBuilder;
use shader_unit::float::{F24, F31};

// ----- the rig -----------------------------------------------------------------------------

const LIST_ADDR: u32 = FCRAM.base;
const VERTEX_ADDR: u32 = FCRAM.base + 0x1_0000;
const INDEX_ADDR: u32 = FCRAM.base + 0x8_0000;
const COLOR_ADDR: u32 = VRAM.base;
const DEPTH_ADDR: u32 = VRAM.base + 0x10_0000;
const W: u32 = 64;
const H: u32 = 64;

fn f24(v: f32) -> u32 {
    F24::from_f32(v).to_bits()
}

/// Output semantics of SH_OUTMAP_Oi (0x050-0x056).
mod sem {
    pub const POS: u32 = 0x0302_0100;
    pub const COLOR: u32 = 0x0B0A_0908;
    /// texcoord0 u, v; z and w unused (0x1F).
    pub const TC0: u32 = 0x1F1F_0D0C;
}

/// Passes v0 → o0, v1 → o1, v2 → o2.
const VS: &str = "
.out outpos position
.out outclr color
.out outtc texcoord0
.alias inpos v0
.alias inclr v1
.alias intc v2
.proc main
    mov outpos, inpos
    mov outclr, inclr
    mov outtc, intc
    end
.end
";

/// One vertex of the rig's layout: position, colour, texcoord (three float4 attributes).
#[derive(Clone, Copy)]
struct Vtx {
    pos: [f32; 4],
    color: [f32; 4],
    tc: [f32; 4],
}

fn vtx(x: f32, y: f32, z: f32, color: [f32; 4]) -> Vtx {
    Vtx {
        pos: [x, y, z, 1.0],
        color,
        tc: [0.0; 4],
    }
}

/// Two triangles covering the clip-space rectangle [x0, x1] × [y0, y1] at depth z.
fn quad(x0: f32, y0: f32, x1: f32, y1: f32, z: f32, color: [f32; 4]) -> Vec<Vtx> {
    let a = vtx(x0, y0, z, color);
    let b = vtx(x1, y0, z, color);
    let c = vtx(x1, y1, z, color);
    let d = vtx(x0, y1, z, color);
    vec![a, b, c, a, c, d]
}

/// The whole target.
fn full(z: f32, color: [f32; 4]) -> Vec<Vtx> {
    quad(-1.0, -1.0, 1.0, 1.0, z, color)
}

struct Rig {
    gpu: Gpu,
    mem: PhysMem,
    b: CmdListBuilder,
    log: EventLog,
    next_vertex: u32,
}

impl Rig {
    /// The VS above, 3 float4 attributes (one loader, stride 48), triangles, viewport 64×64,
    /// RGBA8 colour + D24S8 depth, blending One/Zero, no depth test, TEV stage 0 = primary colour.
    fn new() -> Self {
        let mut r = Rig {
            gpu: Gpu::new(),
            mem: PhysMem::new(),
            b: CmdListBuilder::new(),
            log: EventLog::new(100_000, true),
            next_vertex: VERTEX_ADDR,
        };
        let prog = shader_unit::asm::assemble_str(VS).expect("test shader assembles");
        let b = &mut r.b;
        b.write(0x2CB, 0);
        b.repeated(0x2CC, 0xF, &prog.program).unwrap();
        b.write(0x2D5, 0);
        b.repeated(0x2D6, 0xF, &prog.opdescs).unwrap();
        b.write(0x2BF, 1);
        b.write(0x2BA, 0x7FFF_0000 | prog.entry_point);
        b.write(0x2B9, 0xA000_0002); // VS input config: 3 inputs
        b.write(0x242, 2); // 3 attributes
        b.write(0x2BB, 0x210);
        b.write(0x2BC, 0);
        b.write(0x2BD, 0b111); // o0-o2 written
        b.write(0x229, 0); // no geometry shader
        b.write(0x244, 0);
        // Vertex arrays: three float x4 attributes, loader 0 = attributes 0, 1, 2, stride 48.
        b.write(0x201, 0xFFF);
        b.write(0x202, 2 << 28);
        b.write(0x203, 0);
        b.write(0x204, 0x210);
        b.write(0x205, (48 << 16) | (3 << 28));
        b.write(0x22A, 0);
        // Viewport 64×64 at (0, 0); depth = −z (scale −1, offset 0); no culling.
        b.write(0x041, f24(W as f32 / 2.0));
        b.write(0x042, F31::from_f32(2.0 / W as f32).to_register());
        b.write(0x043, f24(H as f32 / 2.0));
        b.write(0x044, F31::from_f32(2.0 / H as f32).to_register());
        b.write(0x068, 0);
        b.write(0x04D, f24(-1.0));
        b.write(0x04E, f24(0.0));
        b.write(0x06D, 1);
        b.write(0x040, 0);
        // Render target.
        b.write(0x117, 2); // RGBA8
        b.write(0x116, 3); // D24S8
        b.write(0x11D, COLOR_ADDR >> 3);
        b.write(0x11C, DEPTH_ADDR >> 3);
        b.write(0x11E, W | ((H - 1) << 12) | (1 << 24));
        b.write(0x06E, W | ((H - 1) << 12) | (1 << 24));
        b.write(0x112, 0xF);
        b.write(0x113, 0xF);
        b.write(0x114, 3);
        b.write(0x115, 3);
        b.write(0x107, 0xF00); // colour writes on, depth test and depth writes off
        b.write(0x100, 0xE4_0100); // blending
        b.write(0x101, blend_func(0, 0, 1, 0, 1, 0));
        // TEV stage 0: primary colour; stages 1-5: previous.
        b.write(0x0C0, 0);
        b.write(0x0C1, 0);
        b.write(0x0C2, 0);
        b.write(0x0C4, 0);
        for stage in [0x0C8u16, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            b.write(stage, 0x000F_000F); // Replace(previous)
            b.write(stage + 1, 0);
            b.write(stage + 2, 0);
            b.write(stage + 4, 0);
        }
        b.write(0x0E0, 0);
        r.outmap(&[sem::POS, sem::COLOR, sem::TC0]);
        r.flush();
        r
    }

    /// SH_OUTMAP_TOTAL and SH_OUTMAP_O0.. (the shader always writes o0-o2).
    fn outmap(&mut self, slots: &[u32]) {
        let n = slots.len() as u32;
        self.b.write(0x04F, n);
        for (i, s) in slots.iter().enumerate() {
            self.b.write(0x050 + i as u16, *s);
        }
        self.b.write(0x24A, n - 1);
        self.b.write(0x251, n - 1);
        self.b.write(0x25E, n - 1);
    }

    fn set(&mut self, reg: u16, value: u32) {
        self.b.write(reg, value);
    }

    /// Runs the queued writes as one command list.
    fn flush(&mut self) {
        self.b.finalize();
        let list = std::mem::replace(&mut self.b, CmdListBuilder::new()).to_bytes();
        self.mem.write(LIST_ADDR, &list).unwrap();
        self.gpu
            .run_command_list(&mut self.mem, LIST_ADDR, list.len() as u32, &mut self.log);
    }

    fn fb(&self) -> FramebufferConfig {
        FramebufferConfig::from_regs(&self.gpu.regs)
    }

    /// Fills colour, depth and stencil directly in memory.
    fn clear(&mut self, color: [u8; 4], depth: u32, stencil: u8) {
        self.flush();
        let fb = self.fb();
        for y in 0..H {
            for x in 0..W {
                fb.write_color(&mut self.mem, x, y, color).unwrap();
                fb.write_depth(&mut self.mem, x, y, depth).unwrap();
                fb.write_stencil(&mut self.mem, x, y, stencil).unwrap();
            }
        }
    }

    fn upload(&mut self, verts: &[Vtx]) -> u32 {
        let mut bytes = Vec::new();
        for v in verts {
            for x in v.pos.iter().chain(&v.color).chain(&v.tc) {
                bytes.extend_from_slice(&x.to_le_bytes());
            }
        }
        let addr = self.next_vertex;
        self.mem.write(addr, &bytes).unwrap();
        self.next_vertex += (bytes.len() as u32).next_multiple_of(0x100);
        addr
    }

    /// DRAWARRAYS of `verts` (topology 0 = triangles).
    fn draw(&mut self, verts: &[Vtx]) {
        let addr = self.upload(verts);
        self.b.write(0x200, addr >> 3);
        self.b.write(0x203, 0);
        self.b.write(0x228, verts.len() as u32);
        self.b.write(0x25E, self.gpu.regs[0x25E] & 0xF);
        self.b.write(0x22E, 1);
        self.flush();
    }

    /// Window pixel (x, y), y up.
    fn px(&self, x: u32, y: u32) -> [u8; 4] {
        self.fb().read_color(&self.mem, x, y).unwrap()
    }

    fn depth_stencil(&self, x: u32, y: u32) -> (u32, u8) {
        self.fb().read_depth_stencil(&self.mem, x, y).unwrap()
    }

    fn last_detail(&self) -> &DrawDetail {
        &self.log.details.last().expect("a draw was recorded").1
    }

    fn covered(&self, bg: [u8; 4]) -> u32 {
        let mut n = 0;
        for y in 0..H {
            for x in 0..W {
                n += u32::from(self.px(x, y) != bg);
            }
        }
        n
    }
}

/// BLEND_FUNC (0x101).
fn blend_func(rgb_eq: u32, a_eq: u32, rgb_src: u32, rgb_dst: u32, a_src: u32, a_dst: u32) -> u32 {
    rgb_eq | (a_eq << 8) | (rgb_src << 16) | (rgb_dst << 20) | (a_src << 24) | (a_dst << 28)
}

/// DEPTH_COLOR_MASK (0x107).
fn depth_color_mask(test: bool, func: u32, rgba: u32, write: bool) -> u32 {
    u32::from(test) | (func << 4) | (rgba << 8) | (u32::from(write) << 12)
}

/// STENCIL_TEST (0x105).
fn stencil_test(enable: bool, func: u32, write_mask: u8, reference: u8, input_mask: u8) -> u32 {
    u32::from(enable)
        | (func << 4)
        | (u32::from(write_mask) << 8)
        | (u32::from(reference) << 16)
        | (u32::from(input_mask) << 24)
}

const BLACK: [u8; 4] = [0, 0, 0, 255];
const WHITE: [f32; 4] = [1.0; 4];
const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];

// ----- VL: vertex loading --------------------------------------------------------------------

/// A rig whose loader reads attribute 0 (position, float x4) and attribute 1 (colour) with the
/// given format nibble and size in bytes, in one buffer; attribute 2 stays a float4.
fn colour_layout_rig(fmt: u32, colour_bytes: u32) -> Rig {
    let mut r = Rig::new();
    // Loader: attr 0 (16 bytes), attr 1, attr 2 (16 bytes).
    r.set(0x201, 0xF | (fmt << 4) | (0xF << 8));
    r.set(0x205, ((32 + colour_bytes) << 16) | (3 << 28));
    r
}

fn upload_raw(r: &mut Rig, bytes: &[u8]) -> u32 {
    let addr = r.next_vertex;
    r.mem.write(addr, bytes).unwrap();
    r.next_vertex += (bytes.len() as u32).next_multiple_of(0x100);
    addr
}

fn draw_raw(r: &mut Rig, addr: u32, count: u32) {
    r.set(0x200, addr >> 3);
    r.set(0x228, count);
    r.set(0x22E, 1);
    r.flush();
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Full-screen triangle list (two triangles) positions.
const FULL: [[f32; 4]; 6] = [
    [-1.0, -1.0, -0.5, 1.0],
    [1.0, -1.0, -0.5, 1.0],
    [1.0, 1.0, -0.5, 1.0],
    [-1.0, -1.0, -0.5, 1.0],
    [1.0, 1.0, -0.5, 1.0],
    [-1.0, 1.0, -0.5, 1.0],
];

#[test]
fn hw_vl1_missing_components_default_to_x001() {
    // yuriks vertex-loading: a 2-float colour is read as (r, g, 0, 1).
    let mut r = colour_layout_rig(0x3 | (1 << 2), 8); // float x2
    let mut bytes = Vec::new();
    for p in FULL {
        bytes.extend(f32s(&p));
        bytes.extend(f32s(&[1.0, 0.5]));
        bytes.extend(f32s(&[0.0; 4]));
    }
    let addr = upload_raw(&mut r, &bytes);
    r.clear(BLACK, 0xFF_FFFF, 0);
    draw_raw(&mut r, addr, 6);
    for v in &r.last_detail().assembled[0] {
        assert_eq!(v.color, [1.0, 0.5, 0.0, 1.0]);
    }
    let p = r.px(32, 32);
    assert_eq!([p[0], p[2], p[3]], [255, 0, 255]);
    assert!((127..=128).contains(&p[1]), "{p:?}");
}

#[test]
fn hw_vl2_fixed_attribute_ignored_when_an_array_feeds_it() {
    // The same 2-float colour, with attribute 1 also marked as fixed (0x202 bit 17) and a fixed
    // value of (0.5, 0.5, 0.5, 0.5) uploaded: the array still wins, z/w are still 0 and 1.
    let mut r = colour_layout_rig(0x3 | (1 << 2), 8);
    r.set(0x202, (2 << 28) | (1 << 17));
    // FIXEDATTRIB_INDEX 1, then the packed float24 vec4 (w first).
    let h = F24::from_f32(0.5).to_bits();
    r.set(0x232, 1);
    r.set(0x233, (h << 8) | (h >> 16));
    r.set(0x234, ((h & 0xFFFF) << 16) | (h >> 8));
    r.set(0x235, ((h & 0xFF) << 24) | h);
    r.flush();
    assert_eq!(r.gpu.fixed_attribs[1], [0.5; 4], "fixed value uploaded");
    let mut bytes = Vec::new();
    for p in FULL {
        bytes.extend(f32s(&p));
        bytes.extend(f32s(&[1.0, 0.25]));
        bytes.extend(f32s(&[0.0; 4]));
    }
    let addr = upload_raw(&mut r, &bytes);
    r.clear(BLACK, 0xFF_FFFF, 0);
    draw_raw(&mut r, addr, 6);
    for v in &r.last_detail().assembled[0] {
        assert_eq!(
            v.color,
            [1.0, 0.25, 0.0, 1.0],
            "no bluish tint from the fixed value"
        );
    }
}

#[test]
fn hw_vl3_attributes_align_to_their_element_size() {
    // Loader: colour as 3 unsigned bytes first, then position float x4 (aligned up to offset 4),
    // then a padding component (code 12 = 4 bytes, itself aligned to 4), then texcoord float x4.
    // Vertex size: 3 + 1 (align) + 16 + 4 (pad) + 16 = 40.
    let mut r = Rig::new();
    // Attribute formats: attr 0 float x4, attr 1 ubyte x3 (type 1, 3 comps), attr 2 float x4.
    r.set(0x201, 0xF | ((0x1 | (2 << 2)) << 4) | (0xF << 8));
    // Components: attr 1, attr 0, padding 4 bytes (12), attr 2.
    r.set(0x204, 0x1 | (12 << 8) | (0x2 << 12)); // nibbles: 1, 0, 12, 2
    r.set(0x205, (40 << 16) | (4 << 28));
    let mut bytes = Vec::new();
    for p in FULL {
        bytes.extend([1u8, 0, 1, 0xEE]); // magenta (raw byte values 1, 0, 1) + alignment gap
        bytes.extend(f32s(&p));
        bytes.extend([0xEE; 4]); // padding component
        bytes.extend(f32s(&[0.25; 4]));
    }
    assert_eq!(bytes.len(), 6 * 40);
    let addr = upload_raw(&mut r, &bytes);
    r.clear(BLACK, 0xFF_FFFF, 0);
    draw_raw(&mut r, addr, 6);
    let tri = &r.last_detail().assembled[0];
    assert_eq!(tri[0].pos, FULL[0]);
    assert_eq!(tri[0].color[..3], [1.0, 0.0, 1.0]);
    assert_eq!(tri[0].tc0, [0.25, 0.25]);
    assert_eq!(r.px(32, 32), [255, 0, 255, 255]);
    assert_eq!(r.covered(BLACK), W * H);
}

#[test]
fn hw_vl5_vertex_offset_applies_to_array_draws_only() {
    // Subv gpu_draw_arrays_offset: VERTEX_OFFSET (0x22A) = 6 makes DRAWARRAYS start at vertex 6;
    // DRAWELEMENTS ignores it.
    let mut r = Rig::new();
    let mut verts = full(-0.5, RED); // vertices 0-5: red
    verts.extend(full(-0.5, GREEN)); // vertices 6-11: green
    let addr = r.upload(&verts);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.set(0x200, addr >> 3);
    r.set(0x22A, 6);
    r.set(0x228, 6);
    r.set(0x22E, 1);
    r.flush();
    assert_eq!(
        r.px(32, 32),
        [0, 255, 0, 255],
        "array draw starts at vertex 6"
    );
    // Indexed: indices 0-5 (u16), offset still 6.
    r.clear(BLACK, 0xFF_FFFF, 0);
    let idx: Vec<u8> = (0u16..6).flat_map(|i| i.to_le_bytes()).collect();
    r.mem.write(INDEX_ADDR, &idx).unwrap();
    r.set(0x227, (INDEX_ADDR - addr) | (1 << 31)); // offset from the base, 16-bit indices
    r.set(0x22F, 1); // DRAWELEMENTS
    r.flush();
    assert_eq!(
        r.px(32, 32),
        [255, 0, 0, 255],
        "indexed draw ignores the offset"
    );
}

#[test]
fn hw_vl6_vertex_colour_made_absolute_and_clamped_before_interpolation() {
    // yuriks color-clamping: (−1.5, −1.5, −1.5) shows white like (1.5, …) and (1, 1, 1);
    // (−0.5, 0, 0) is half red; a triangle from white to (−1.5, …) has no dark band.
    for c in [[-1.5f32; 3], [1.5; 3], [1.0; 3]] {
        let mut r = Rig::new();
        r.clear(BLACK, 0xFF_FFFF, 0);
        r.draw(&full(-0.5, [c[0], c[1], c[2], 1.0]));
        assert_eq!(r.px(20, 40), [255, 255, 255, 255], "colour {c:?}");
    }
    let mut r = Rig::new();
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [-0.5, 0.0, 0.0, 1.0]));
    let p = r.px(20, 40);
    assert!(
        (127..=128).contains(&p[0]) && p[1] == 0 && p[2] == 0,
        "{p:?}"
    );
    // Gradient: white at one corner, (−1.5, −1.5, −1.5) at the others.
    let mut r = Rig::new();
    r.clear(BLACK, 0xFF_FFFF, 0);
    let dark = [-1.5, -1.5, -1.5, 1.0];
    r.draw(&[
        vtx(-1.0, -1.0, -0.5, WHITE),
        vtx(1.0, -1.0, -0.5, dark),
        vtx(-1.0, 1.0, -0.5, dark),
    ]);
    let mut inside = 0;
    for y in 0..H {
        for x in 0..W {
            let p = r.px(x, y);
            if p != BLACK {
                assert_eq!(p, [255, 255, 255, 255], "({x},{y})");
                inside += 1;
            }
        }
    }
    assert!(inside > 1900, "{inside}");
}

// ----- SH-15: unmapped output slots ----------------------------------------------------------

#[test]
fn hw_sh15_unmapped_output_semantics_read_one() {
    // Only the position is mapped: colour and texcoord semantics read 1.0.
    let mut r = Rig::new();
    r.outmap(&[sem::POS]);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.2, 0.3, 0.4, 0.5]));
    for v in &r.last_detail().assembled[0] {
        assert_eq!(v.color, [1.0; 4]);
        assert_eq!(v.tc0, [1.0; 2]);
        assert_eq!(v.quat, [1.0; 4]);
    }
    assert_eq!(r.px(32, 32), [255, 255, 255, 255]);
    // Colour mapped only in r and g: b and a read 1.0.
    let mut r = Rig::new();
    r.outmap(&[sem::POS, 0x1F1F_0908]);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 0.0, 0.0, 0.0]));
    assert_eq!(r.px(32, 32), [0, 0, 255, 255]);
}

// ----- CR: clipping and rasterisation ---------------------------------------------------------

#[test]
fn hw_cr1_depth_clip_range_is_minus_w_to_zero() {
    // Issue #2248 / PR #2884: geometry with 0 < z <= w is clipped, −w <= z <= 0 is drawn.
    let mut r = Rig::new();
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(0.5, RED));
    assert_eq!(r.covered(BLACK), 0, "z = +0.5w is outside");
    assert!(r.last_detail().clipped.is_empty());
    r.draw(&full(-0.5, RED));
    assert_eq!(r.covered(BLACK), W * H, "z = −0.5w is inside");
    // A triangle crossing z = 0 is cut there: every clipped vertex has z/w <= 0.
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&[
        vtx(-1.0, -1.0, -0.5, RED),
        vtx(1.0, -1.0, 0.5, RED),
        vtx(-1.0, 1.0, -0.5, RED),
    ]);
    let clipped = &r.last_detail().clipped;
    assert!(!clipped.is_empty());
    for tri in clipped {
        for v in tri {
            assert!(v.z_over_w <= 0.0, "{}", v.z_over_w);
        }
    }
    // The part with z > 0 (x > 0 at the bottom edge) is gone: bottom-right corner not drawn.
    assert_eq!(r.px(60, 1), BLACK);
    assert_eq!(r.px(2, 2), [255, 0, 0, 255]);
}

#[test]
fn hw_cr2_user_clip_plane_removes_negative_distances() {
    // PR #2900: a·x + b·y + c·z + d·w >= 0 is kept. Plane x >= 0 keeps the right half.
    let mut r = Rig::new();
    r.set(0x047, 1);
    r.set(0x048, f24(1.0));
    r.set(0x049, f24(0.0));
    r.set(0x04A, f24(0.0));
    r.set(0x04B, f24(0.0));
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, RED));
    for y in [0, 31, 63] {
        for x in 0..W {
            let want = if x >= 32 { [255, 0, 0, 255] } else { BLACK };
            assert_eq!(r.px(x, y), want, "({x},{y})");
        }
    }
    // Plane disabled: everything drawn.
    r.set(0x047, 0);
    r.draw(&full(-0.5, GREEN));
    assert_eq!(r.px(5, 5), [0, 255, 0, 255]);
}

#[test]
fn hw_cr4_scissor_is_inclusive_with_include_and_exclude_modes() {
    // PR #1263 / Subv gpu_scissor: SCISSORTEST_DIM holds x + w − 1, y + h − 1 (inclusive);
    // mode 3 draws inside only, mode 1 outside only; fields are 10 bits.
    let bx = (10u32, 20u32, 29u32, 35u32); // inclusive box x 10..=29, y 20..=35
    for (mode, inside_drawn) in [(3u32, true), (1, false)] {
        let mut r = Rig::new();
        r.set(0x065, mode);
        // Junk above bit 9 of each field must be ignored.
        r.set(0x066, bx.0 | (bx.1 << 16) | (1 << 10) | (1 << 26));
        r.set(0x067, bx.2 | (bx.3 << 16) | (1 << 10) | (1 << 26));
        r.clear(BLACK, 0xFF_FFFF, 0);
        r.draw(&full(-0.5, RED));
        for y in 0..H {
            for x in 0..W {
                let inside = (bx.0..=bx.2).contains(&x) && (bx.1..=bx.3).contains(&y);
                let drawn = inside == inside_drawn;
                let want = if drawn { [255, 0, 0, 255] } else { BLACK };
                assert_eq!(r.px(x, y), want, "mode {mode} ({x},{y})");
            }
        }
    }
}

// ----- TE: combiners ---------------------------------------------------------------------------

/// Combiner registers of stage `i` (0-5).
fn stage_base(i: usize) -> usize {
    [0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8][i]
}

/// A register file with every stage passing "previous" through.
fn tev_regs() -> Box<[u32; 0x300]> {
    let mut regs = Box::new([0u32; 0x300]);
    for i in 0..6 {
        regs[stage_base(i)] = 15 | (15 << 16);
    }
    regs
}

/// Stage `i`: RGB and alpha Replace(source `s`).
fn replace(regs: &mut [u32; 0x300], i: usize, s: u32) {
    regs[stage_base(i)] = s | (s << 16);
    regs[stage_base(i) + 2] = 0;
}

fn inputs(primary: [u8; 4]) -> TevInputs {
    TevInputs {
        primary,
        ..TevInputs::default()
    }
}

#[test]
fn hw_te1_previous_in_stage_0_is_the_primary_colour() {
    // PR #6921 (GPUCode's tev_test): stage 0 Replace(Previous) shows the vertex colour.
    let mut regs = tev_regs();
    replace(&mut regs, 0, 15);
    let cfg = TevConfig::from_regs(&regs);
    assert_eq!(cfg.combine(&inputs([10, 20, 200, 255])), [10, 20, 200, 255]);
    // And through the pixel pipeline.
    let mut r = Rig::new();
    r.set(0x0C0, 15 | (15 << 16));
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 0.0, 1.0, 1.0]));
    assert_eq!(r.px(32, 32), [0, 0, 255, 255]);
}

#[test]
fn hw_te2_previous_buffer_in_stage_0_is_zero() {
    // PR #6921: stage 0 PreviousBuffer reads 0, not the buffer colour register.
    let mut regs = tev_regs();
    replace(&mut regs, 0, 13);
    regs[0x0FD] = 0xFFFF_FFFF; // initial buffer colour: white
    let cfg = TevConfig::from_regs(&regs);
    assert_eq!(cfg.combine(&inputs([10, 20, 30, 40])), [0, 0, 0, 0]);
}

#[test]
fn hw_te3_combiner_buffer_lags_one_stage() {
    // PR #1261 (fincs): stage 1 reads GPUREG_TEXENV_BUFFER_COLOR; stage n >= 2 reads stage
    // n − 2's output as filtered by the update masks.
    let mut regs = tev_regs();
    // Stage 0: constant A; stage 1: constant B; both written to the buffer (bits 8-9 RGB,
    // 12-13 alpha of 0x0E0).
    let a = [11u8, 22, 33, 44];
    let b = [55u8, 66, 77, 88];
    let init = [99u8, 98, 97, 96];
    replace(&mut regs, 0, 14);
    regs[stage_base(0) + 3] = u32::from_le_bytes(a);
    replace(&mut regs, 1, 14);
    regs[stage_base(1) + 3] = u32::from_le_bytes(b);
    regs[0x0E0] = (0b11 << 8) | (0b11 << 12);
    regs[0x0FD] = u32::from_le_bytes(init);
    // Stage 1 result check: make stage 1 read the buffer instead.
    let mut s1 = regs.clone();
    replace(&mut s1, 1, 13);
    assert_eq!(
        TevConfig::from_regs(&s1).combine(&inputs([0; 4])),
        init,
        "stage 1 reads the initial buffer colour, not stage 0's output"
    );
    // Stage 2 reads stage 0's buffered output (not stage 1's).
    let mut s2 = regs.clone();
    replace(&mut s2, 2, 13);
    assert_eq!(TevConfig::from_regs(&s2).combine(&inputs([0; 4])), a);
    // Stage 3 reads stage 1's.
    let mut s3 = regs.clone();
    replace(&mut s3, 3, 13);
    assert_eq!(TevConfig::from_regs(&s3).combine(&inputs([0; 4])), b);
    // Update masks filter: stage 0 updates RGB only, stage 1 nothing → stage 3 sees A's RGB with
    // the initial alpha.
    let mut s3m = s3.clone();
    s3m[0x0E0] = 0b01 << 8;
    assert_eq!(
        TevConfig::from_regs(&s3m).combine(&inputs([0; 4])),
        [a[0], a[1], a[2], init[3]]
    );
}

#[test]
fn hw_te5_dot3_rgba_also_writes_alpha() {
    // PR #2671 / JayFoxRox texenv-combiner: colour op 7 writes the dot product to alpha too,
    // whatever the alpha combiner says.
    let mut regs = tev_regs();
    let base = stage_base(0);
    regs[base] = 14 | (14 << 4) | (14 << 16); // RGB: constant · constant; alpha: constant
    regs[base + 1] = 0;
    regs[base + 2] = 7; // RGB op 7 (Dot3_RGBA), alpha op 0 (Replace)
    regs[base + 3] = u32::from_le_bytes([0xC0, 0xC0, 0xC0, 0x12]);
    let cfg = TevConfig::from_regs(&regs);
    let out = cfg.combine(&inputs([0; 4]));
    let d = gpu_core::tev::dot3([0xC0; 3], [0xC0; 3]);
    assert_eq!(
        out,
        [d, d, d, d],
        "alpha is the dot product, not the constant's 0x12"
    );
    // With op 6 (Dot3_RGB) the alpha combiner runs normally.
    regs[base + 2] = 6;
    let out = TevConfig::from_regs(&regs).combine(&inputs([0; 4]));
    assert_eq!(out, [d, d, d, 0x12]);
}

// ----- FG: fog --------------------------------------------------------------------------------

/// A rig with fog mode 5, fog colour `fog`, and a LUT whose every entry has factor `value`/2047
/// (difference 0): the fragment keeps `value/2047` of its colour.
fn fog_rig(fog: [u8; 3], value: u32) -> Rig {
    let mut r = Rig::new();
    r.set(0x0E0, 5);
    r.set(0x0E1, u32::from_le_bytes([fog[0], fog[1], fog[2], 0]));
    r.set(0x0E6, 0);
    for _ in 0..128 {
        r.set(0x0E8, value << 13);
    }
    r
}

#[test]
fn hw_fg1_fog_mode_5_blends_rgb_only() {
    // PR #1875 / JayFoxRox fog tests: fog mixes RGB towards the fog colour, alpha is untouched.
    let mut r = fog_rig([0, 0, 255], 0); // factor 0: the fog colour replaces RGB
    r.set(0x101, blend_func(0, 0, 1, 0, 1, 0));
    r.clear([1, 2, 3, 4], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [1.0, 0.0, 0.0, 0.4]));
    let p = r.px(32, 32);
    assert_eq!(&p[..3], &[0, 0, 255], "{p:?}");
    assert_eq!(p[3], 102, "alpha 0.4 untouched by fog");
    // Half factor: halfway between red and blue.
    let mut r = fog_rig([0, 0, 255], 1024);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [1.0, 0.0, 0.0, 1.0]));
    let p = r.px(32, 32);
    assert!(
        p[0].abs_diff(128) <= 1 && p[1] == 0 && p[2].abs_diff(127) <= 1,
        "{p:?}"
    );
    assert_eq!(p[3], 255);
}

#[test]
fn hw_fg2_fog_comes_before_blending_and_write_masks() {
    // PR #1875: blending and the write mask act on the fogged colour.
    let mut r = fog_rig([0, 255, 0], 0); // fogged colour = green
    r.set(0x101, blend_func(0, 0, 1, 1, 1, 0)); // RGB: src + dst
    r.set(0x107, depth_color_mask(false, 0, 0b1011, false)); // blue not written
    r.clear([100, 0, 50, 255], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 0.0, 1.0, 1.0])); // blue fragment, fogged to green
    assert_eq!(r.px(32, 32), [100, 255, 50, 255]);
}

#[test]
fn hw_fg3_fog_lut_write_index_wraps_at_128() {
    // PR #1875: FOG_LUT_DATA writes store at index mod 128 and increment.
    let mut r = Rig::new();
    r.set(0x0E6, 126);
    for v in [1u32, 2, 3, 4] {
        r.set(0x0E8, v << 13);
    }
    r.flush();
    assert_eq!(r.gpu.luts.fog[126], 1 << 13);
    assert_eq!(r.gpu.luts.fog[127], 2 << 13);
    assert_eq!(r.gpu.luts.fog[0], 3 << 13);
    assert_eq!(r.gpu.luts.fog[1], 4 << 13);
    // Any of the eight data ports works the same.
    r.set(0x0E6, 127);
    r.set(0x0EF, 7 << 13);
    r.set(0x0EB, 8 << 13);
    r.flush();
    assert_eq!((r.gpu.luts.fog[127], r.gpu.luts.fog[0]), (7 << 13, 8 << 13));
}

// ----- FO: fragment operations -------------------------------------------------------------

#[test]
fn hw_fo1_depth_written_with_the_depth_test_off() {
    // PR #1462 (yuriks, confirmed on hardware): depth writes happen without the depth test.
    let mut r = Rig::new();
    r.set(0x107, depth_color_mask(false, 0, 0xF, true));
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.25, RED));
    let (d, _) = r.depth_stencil(32, 32);
    assert!(d.abs_diff(0x3F_FFFF) <= 1, "depth 0.25 written: {d:#x}");
    // Depth writes disabled in the write-allow register (0x115): nothing written.
    let mut r = Rig::new();
    r.set(0x107, depth_color_mask(false, 0, 0xF, true));
    r.set(0x115, 0);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.25, RED));
    assert_eq!(r.depth_stencil(32, 32).0, 0xFF_FFFF);
}

#[test]
fn hw_fo2_stencil_depth_pass_action_runs_with_the_depth_test_off() {
    // Subv gpu_stencil_tests "zpass behavior when the depth test is disabled": the green square
    // writes stencil (replace with 1, depth test off); the red square, stencil-tested
    // NOTEQUAL 1, is masked where green wrote.
    let mut r = Rig::new();
    r.set(0x107, depth_color_mask(false, 0, 0xF, false));
    r.set(0x105, stencil_test(true, 1, 0xFF, 1, 0xFF)); // ALWAYS
    r.set(0x106, 2 << 8); // z-pass: replace
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&quad(-1.0, -1.0, 0.0, 1.0, -0.5, GREEN)); // left half
    assert_eq!(r.depth_stencil(10, 10).1, 1);
    assert_eq!(r.depth_stencil(50, 10).1, 0);
    r.set(0x105, stencil_test(true, 3, 0xFF, 1, 0xFF)); // NOTEQUAL 1
    r.set(0x106, 0);
    r.draw(&full(-0.5, RED));
    assert_eq!(
        r.px(10, 10),
        [0, 255, 0, 255],
        "masked where green wrote stencil"
    );
    assert_eq!(r.px(50, 10), [255, 0, 0, 255]);
}

#[test]
fn hw_fo3_stencil_action_codes() {
    // PR #1049 / Subv gpu_stencil_tests: 0 keep, 1 zero, 2 replace, 3 increment saturating,
    // 4 decrement saturating, 5 invert, 6 increment wrapping, 7 decrement wrapping.
    let cases: [(u32, u8, u8); 12] = [
        (0, 7, 7),
        (1, 7, 0),
        (2, 7, 0x5A),
        (3, 7, 8),
        (3, 255, 255),
        (4, 7, 6),
        (4, 0, 0),
        (5, 0x0F, 0xF0),
        (6, 7, 8),
        (6, 255, 0),
        (7, 7, 6),
        (7, 0, 255),
    ];
    for (op, before, after) in cases {
        let mut r = Rig::new();
        r.set(0x105, stencil_test(true, 1, 0xFF, 0x5A, 0xFF));
        r.set(0x106, op << 8);
        r.clear(BLACK, 0xFF_FFFF, before);
        r.draw(&full(-0.5, RED));
        assert_eq!(r.depth_stencil(32, 32).1, after, "op {op} on {before}");
    }
}

#[test]
fn hw_fo4_stencil_write_mask_and_compare_mask_do_different_jobs() {
    // Subv gpu_stencil_tests: reference 15 with write mask 0x3 stores 3; reference 15 with
    // compare ("input") mask 0x7 still stores 15.
    let mut r = Rig::new();
    r.set(0x105, stencil_test(true, 1, 0x3, 15, 0xFF));
    r.set(0x106, 2 << 8);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, RED));
    assert_eq!(r.depth_stencil(32, 32).1, 3);
    let mut r = Rig::new();
    r.set(0x105, stencil_test(true, 1, 0xFF, 15, 0x7));
    r.set(0x106, 2 << 8);
    r.clear(BLACK, 0xFF_FFFF, 0);
    r.draw(&full(-0.5, RED));
    assert_eq!(r.depth_stencil(32, 32).1, 15);
    // The compare mask applies to both sides of the comparison: stored 0x0F vs reference 0x07
    // under mask 0x7 compare equal.
    let mut r = Rig::new();
    r.set(0x105, stencil_test(true, 2, 0xFF, 0x07, 0x7)); // EQUAL
    r.clear(BLACK, 0xFF_FFFF, 0x0F);
    r.draw(&full(-0.5, RED));
    assert_eq!(r.px(32, 32), [255, 0, 0, 255]);
}

#[test]
fn hw_fo5_min_max_blending_apply_the_factors() {
    // Issue #2684 / Subv gpu_blend_factors / PR #6925: MAX with source factor ZERO and
    // destination factor ONE leaves the destination (libstarlight's knockout).
    let mut r = Rig::new();
    r.set(0x101, blend_func(4, 4, 0, 1, 0, 1));
    r.clear([10, 20, 30, 40], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, WHITE));
    assert_eq!(r.px(32, 32), [10, 20, 30, 40]);
    // MIN with source ONE, destination ZERO: min(s·1, d·0) = 0.
    let mut r = Rig::new();
    r.set(0x101, blend_func(3, 3, 1, 0, 1, 0));
    r.clear([10, 20, 30, 40], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, WHITE));
    assert_eq!(r.px(32, 32), [0, 0, 0, 0]);
    // MAX with both ONE behaves like plain max.
    let mut r = Rig::new();
    r.set(0x101, blend_func(4, 4, 1, 1, 1, 1));
    r.clear([200, 20, 30, 255], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 1.0, 0.0, 0.0]));
    assert_eq!(r.px(32, 32), [200, 255, 30, 255]);
}

#[test]
fn hw_fo6_invalid_blend_equation_acts_as_add() {
    // Citra pica_to_gl.h / azahar pica_to_vk.h: hardware-tested fallback, equations 5-7 = ADD.
    for eq in 5..=7 {
        let mut r = Rig::new();
        r.set(0x101, blend_func(eq, eq, 1, 1, 1, 1));
        r.clear([100, 10, 0, 20], 0xFF_FFFF, 0);
        r.draw(&full(-0.5, [0.2, 0.2, 0.2, 0.2]));
        assert_eq!(r.px(32, 32), [151, 61, 51, 71], "equation {eq}");
    }
}

#[test]
fn hw_fo7_alpha_blend_function_accepts_colour_factors() {
    // PR #1625 / JayFoxRox alpha-blend: the alpha function takes any factor; colour factors
    // use the alpha component for the A channel. Source colour factor on alpha = src.a · src.a.
    let mut r = Rig::new();
    // RGB: ONE/ZERO; alpha: SOURCE_COLOR (2) / ONE_MINUS_SOURCE_COLOR (3).
    r.set(0x101, blend_func(0, 0, 1, 0, 2, 3));
    r.clear([0, 0, 0, 200], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 0.0, 0.0, 0.5]));
    let a = r.px(32, 32)[3];
    // s = 128 (0.5 → 128), d = 200: (128·128 + 200·127) / 255 = 163.88 → 163 (truncating).
    assert!(a.abs_diff(163) <= 1, "alpha {a}");
    // Destination colour factor for alpha: (s·d + d·0)/255.
    let mut r = Rig::new();
    r.set(0x101, blend_func(0, 0, 1, 0, 4, 0));
    r.clear([0, 0, 0, 200], 0xFF_FFFF, 0);
    r.draw(&full(-0.5, [0.0, 0.0, 0.0, 0.5]));
    let a = r.px(32, 32)[3];
    assert!(a.abs_diff(100) <= 1, "alpha {a}");
}

#[test]
fn hw_fo8_logic_ops_combine_with_fog() {
    // PR #1875: every logic op works on the fogged colour. XOR (op 6? see below) of the fogged
    // colour with the destination.
    // LOGIC_OP codes (0x102): 0 clear, 1 and, 2 and-reverse, 3 copy, 4 set, 5 copy-inverted,
    // 6 noop, 7 invert, 8 nand, 9 or, 10 nor, 11 xor, 12 equiv, 13 and-inverted,
    // 14 or-reverse, 15 or-inverted.
    let fogged = [0x0Fu8, 0xF0, 0x3C];
    let dst = [0x55u8, 0x55, 0x55, 0xFF];
    type Op = fn(u8, u8) -> u8;
    let cases: [(u32, Op); 4] = [
        (3, |s, _| s),
        (11, |s, d| s ^ d),
        (9, |s, d| s | d),
        (1, |s, d| s & d),
    ];
    for (op, f) in cases {
        let mut r = fog_rig(fogged, 0);
        r.set(0x100, 0xE4_0000); // logic op mode (bit 8 = 0)
        r.set(0x102, op);
        r.clear(dst, 0xFF_FFFF, 0);
        r.draw(&full(-0.5, [1.0, 1.0, 1.0, 1.0]));
        let p = r.px(32, 32);
        let want: Vec<u8> = (0..3).map(|ch| f(fogged[ch], dst[ch])).collect();
        assert_eq!(&p[..3], &want[..], "logic op {op}");
    }
}

// ----- TX: texturing -------------------------------------------------------------------------

mod tx {
    use super::*;
    use gpu_core::texture::config::{TextureConfig, WrapMode};
    use gpu_core::texture::format::{TextureFormat, texel_from_slice};

    /// Unit 0 registers: 0x081 border, 0x082 dim, 0x083 param, 0x085 address, 0x08E type.
    fn unit0(param: u32) -> Box<[u32; 0x300]> {
        let mut regs = Box::new([0u32; 0x300]);
        regs[0x082] = (8 << 16) | 8;
        regs[0x083] = param;
        regs[0x085] = 0x1800_0000 >> 3;
        regs
    }

    #[test]
    fn hw_tx1_wrap_t_is_bits_8_10_and_wrap_s_bits_12_14() {
        // PR #949 (Lectem wrap_modes): t at bits 8-10, s at bits 12-14, 3 bits each.
        for (s, t) in [(0u32, 2u32), (2, 0), (3, 1), (5, 4), (7, 6)] {
            let cfg = TextureConfig::from_regs(&unit0((s << 12) | (t << 8)), 0);
            assert_eq!(cfg.wrap_s, WrapMode::from_bits(s), "s = {s}");
            assert_eq!(cfg.wrap_t, WrapMode::from_bits(t), "t = {t}");
        }
    }

    #[test]
    fn hw_tx2_wrap_modes_4_to_7() {
        // PR #2703 (observed): 4 = edge for positive / repeat for negative coordinates,
        // 5 = border for positive / repeat for negative, 6 and 7 = repeat.
        let n = 8;
        let m = |bits| WrapMode::from_bits(bits);
        assert_eq!(m(4).apply(9, n), Some(7));
        assert_eq!(m(4).apply(-1, n), Some(7));
        assert_eq!(m(4).apply(-9, n), Some(7));
        assert_eq!(m(4).apply(3, n), Some(3));
        assert_eq!(m(5).apply(8, n), None);
        assert_eq!(m(5).apply(-1, n), Some(7));
        assert_eq!(m(5).apply(3, n), Some(3));
        for bits in [6, 7] {
            assert_eq!(m(bits).apply(9, n), Some(1));
            assert_eq!(m(bits).apply(-1, n), Some(7));
            assert_eq!(m(bits).apply(16, n), Some(0));
        }
    }

    #[test]
    fn hw_tx3_border_colour_outside_zero_to_size() {
        // PR #907 (Lectem wrap_modes): clamp-to-border returns the border for texel
        // coordinates < 0 or >= size, the texel otherwise.
        let b = WrapMode::ClampToBorder;
        assert_eq!(b.apply(-1, 8), None);
        assert_eq!(b.apply(8, 8), None);
        assert_eq!(b.apply(0, 8), Some(0));
        assert_eq!(b.apply(7, 8), Some(7));
        // The border colour register (0x081, R in bits 0-7) is decoded per unit.
        let mut regs = unit0(1 << 12);
        regs[0x081] = u32::from_le_bytes([1, 2, 3, 4]);
        assert_eq!(TextureConfig::from_regs(&regs, 0).border, [1, 2, 3, 4]);
    }

    #[test]
    fn hw_tx4_hilo8_red_is_the_high_byte() {
        // PR #1034 (yuriks hilo8-test): R = second (high) byte, G = first byte, B = 0, A = 255.
        let mut level = vec![0u8; 8 * 8 * 2];
        level[0] = 0x12; // texel (0, 0) in Morton order: low byte
        level[1] = 0xAB; // high byte
        assert_eq!(
            texel_from_slice(TextureFormat::Hilo8, &level, 0, 0, 8),
            [0xAB, 0x12, 0, 255]
        );
    }

    #[test]
    fn hw_tx5_texture_register_field_widths() {
        // PR #2703: width/height 11 bits, type 3 bits (28-30), address 28 bits (× 8).
        let mut regs = unit0(0);
        regs[0x082] = (0xF800 << 16) | (1024 << 16) | 0xF800 | 512; // junk above bit 10
        regs[0x083] = (1 << 31) | (1 << 28); // type 1 (cube) + junk bit 31
        regs[0x085] = 0xF000_0000 | (0x1800_0000 >> 3);
        regs[0x08E] = 0; // RGBA8
        let cfg = TextureConfig::from_regs(&regs, 0);
        assert_eq!((cfg.width, cfg.height), (1024, 512));
        assert_eq!(cfg.address, 0x1800_0000);
        assert_eq!(
            cfg.texture_type,
            gpu_core::texture::config::TextureType::from_catalogue(
                pica_cmd::regs::texturing::TextureType::from_raw(1)
            )
        );
    }

    /// An 8×8 RGBA8 texture whose columns 0-3 are red and 4-7 green (Morton order inside the
    /// tile: x = bits 0, 2, 4 of the texel index).
    fn half_red_half_green() -> Vec<u8> {
        let mut t = Vec::new();
        for i in 0..64u32 {
            let x = (i & 1) | ((i >> 1) & 2) | ((i >> 2) & 4);
            // RGBA8 texels are stored A, B, G, R.
            t.extend(if x < 4 {
                [255, 0, 0, 255]
            } else {
                [255, 0, 255, 0]
            });
        }
        t
    }

    #[test]
    fn hw_tx6_unit_2_coordinate_source_switch() {
        // PR #2686: unit 2 samples texcoord2, or texcoord1 when TEXUNIT_CONFIG bit 13 is set.
        // o2.xy carries texcoord1 (u = 0.25: red column), o2.zw texcoord2 (u = 0.75: green).
        for (bit13, want) in [(false, [0, 255, 0, 255]), (true, [255, 0, 0, 255])] {
            let mut r = Rig::new();
            r.outmap(&[sem::POS, sem::COLOR, 0x1716_0F0E]);
            let tex_addr = FCRAM.base + 0x9_0000;
            r.mem.write(tex_addr, &half_red_half_green()).unwrap();
            r.set(0x080, (1 << 2) | (u32::from(bit13) << 13));
            r.set(0x09A, (8 << 16) | 8);
            r.set(0x09B, 0);
            r.set(0x09C, 0);
            r.set(0x09D, tex_addr >> 3);
            r.set(0x09E, 0);
            r.set(0x0C0, 5 | (5 << 16)); // stage 0: texture 2
            r.clear(BLACK, 0xFF_FFFF, 0);
            let mut verts = full(-0.5, WHITE);
            for v in &mut verts {
                v.tc = [0.25, 0.5, 0.75, 0.5];
            }
            r.draw(&verts);
            let v = &r.last_detail().assembled[0][0];
            assert_eq!((v.tc1, v.tc2), ([0.25, 0.5], [0.75, 0.5]));
            let diags: Vec<_> = r.log.diagnostics().collect();
            assert!(diags.is_empty(), "{diags:?}");
            assert_eq!(r.px(32, 32), want, "bit 13 = {bit13}");
        }
    }

    /// An 8×8 RGBA8 normal map: columns 0-3 hold N = (0, 0, 1) (texel (128, 128, 255)),
    /// columns 4-7 N = (1, 0, 0) (texel (255, 128, 128)).
    fn normal_map() -> Vec<u8> {
        let mut t = Vec::new();
        for i in 0..64u32 {
            let x = (i & 1) | ((i >> 1) & 2) | ((i >> 2) & 4);
            // A, B, G, R.
            t.extend(if x < 4 {
                [255, 255, 128, 128]
            } else {
                [255, 128, 128, 255]
            });
        }
        t
    }

    #[test]
    fn hw_tx7_bump_map_reads_through_the_tev_samplers() {
        // PR #2725: the normal map of bump mapping is sampled like a combiner texture; here
        // unit 2 with its coordinate switch (TEXUNIT_CONFIG bit 13, TX-6). One directional
        // light along +z, diffuse white: N = (0, 0, 1) lights the pixel, N = (1, 0, 0) leaves
        // it black. texcoord1 points at the (0, 0, 1) half, texcoord2 at the (1, 0, 0) half.
        for (bit13, lit) in [(false, false), (true, true)] {
            let mut r = Rig::new();
            // o1 = normal quaternion (identity), o2 = (texcoord1, texcoord2).
            r.outmap(&[sem::POS, 0x0706_0504, 0x1716_0F0E]);
            let tex_addr = FCRAM.base + 0x9_0000;
            r.mem.write(tex_addr, &normal_map()).unwrap();
            r.set(0x080, (1 << 2) | (u32::from(bit13) << 13));
            r.set(0x09A, (8 << 16) | 8);
            r.set(0x09B, 0);
            r.set(0x09C, 0);
            r.set(0x09D, tex_addr >> 3);
            r.set(0x09E, 0);
            // Lighting: one light, env config 7, normal map from unit 2, all LUTs, spot,
            // shadow and distance attenuation off.
            r.set(0x08F, 1);
            r.set(0x1C2, 0);
            r.set(
                0x1C3,
                (2 << 22) | (1 << 28) | (8 << 4) | (4 << 8) | (1 << 31),
            );
            r.set(
                0x1C4,
                0xFF | (0xFF << 8) | (0b111_1111 << 16) | (0xFF << 24),
            );
            r.set(0x1D9, 0);
            r.set(0x1C0, 0); // no global ambient
            r.set(0x140, 0);
            r.set(0x141, 0);
            r.set(0x142, (255 << 20) | (255 << 10) | 255); // diffuse white
            r.set(0x143, 0);
            let f16 = |x: f32| shader_unit::float::F16::from_f32(x).to_bits();
            r.set(0x144, f16(0.0) | (f16(0.0) << 16));
            r.set(0x145, f16(1.0));
            r.set(0x149, 1); // directional
            r.set(0x0C0, 1 | (1 << 16)); // stage 0: fragment primary colour
            r.clear(BLACK, 0xFF_FFFF, 0);
            let mut verts = full(-0.5, [0.0, 0.0, 0.0, 1.0]);
            for v in &mut verts {
                v.color = [0.0, 0.0, 0.0, 1.0]; // o1: identity quaternion
                v.tc = [0.25, 0.5, 0.75, 0.5];
            }
            r.draw(&verts);
            let diags: Vec<_> = r.log.diagnostics().collect();
            assert!(diags.is_empty(), "{diags:?}");
            let p = r.px(32, 32);
            // Texel 128 decodes to 0.004, not 0: the lit normal is not exactly (0, 0, 1).
            let ok = if lit {
                p[..3].iter().all(|&c| c >= 250)
            } else {
                p[..3] == [0, 0, 0]
            };
            assert!(ok, "bit 13 = {bit13}: {p:?}");
        }
    }
}

// ----- FB: framebuffer and external engines ----------------------------------------------

mod fb {
    use super::*;
    use gpu_core::engines::{self, DisplayTransferConfig, MemoryFillConfig, TextureCopyConfig};

    fn rgba8_word(c: [u8; 4]) -> [u8; 4] {
        // RGBA8 framebuffer pixels are stored A, B, G, R.
        [c[3], c[2], c[1], c[0]]
    }

    /// Display-transfers one 8×8 tile of `input_format` (0 RGBA8, 1 RGB8, 2 RGB565, 3 RGB5A1,
    /// 4 RGBA4) into `output_format`, tiled → tiled (flag bit 1 = 0 means tiled→linear; use the
    /// raw "no conversion of layout" path of both tiled: flags bit 1 | bit 5).
    fn transfer(input: &[u8], in_fmt: u32, out_fmt: u32, out_len: usize) -> Vec<u8> {
        let mut mem = PhysMem::new();
        let src = VRAM.base;
        let dst = VRAM.base + 0x1000;
        mem.write(src, input).unwrap();
        // Flags: input format bits 8-10, output format bits 12-14; bit 1 = linear → tiled
        // with bit 5 = tiled → tiled (no layout change).
        let flags = (in_fmt << 8) | (out_fmt << 12) | (1 << 1) | (1 << 5);
        let cfg = DisplayTransferConfig::from_words(
            src >> 3,
            dst >> 3,
            8 | (8 << 16),
            8 | (8 << 16),
            flags,
        );
        engines::display_transfer(&mut mem, &cfg).expect("transfer runs");
        let mut out = vec![0u8; out_len];
        mem.read(dst, &mut out).unwrap();
        out
    }

    #[test]
    fn hw_fb1_display_transfer_alpha_thresholds_and_fills() {
        // citra-emu/hwtests displaytransfer.cpp: RGBA8 → RGB5A1 sets A = 1 from alpha 128 up
        // (127 → 0); RGBA8 → RGBA4 truncates alpha 100 to 6; memoryfills.cpp: 24-bit fills
        // repeat v[7:0], v[15:8], v[23:16].
        for (alpha, a1) in [(100u8, 0u16), (127, 0), (128, 1), (254, 1)] {
            let px: Vec<u8> = (0..64)
                .flat_map(|_| rgba8_word([255, 0, 0, alpha]))
                .collect();
            let out = transfer(&px, 0, 3, 128);
            let v = u16::from_le_bytes([out[0], out[1]]);
            assert_eq!(v & 1, a1, "RGB5A1 alpha of {alpha}");
            assert_eq!(v >> 11, 31, "red");
        }
        let px: Vec<u8> = (0..64).flat_map(|_| rgba8_word([0, 0, 0, 100])).collect();
        let out = transfer(&px, 0, 4, 128);
        assert_eq!(
            u16::from_le_bytes([out[0], out[1]]) & 0xF,
            6,
            "RGBA4 alpha of 100"
        );
        // 24-bit fill.
        let mut mem = PhysMem::new();
        let cfg = MemoryFillConfig::from_words(
            VRAM.base >> 3,
            (VRAM.base + 24) >> 3,
            0x00AA_BBCC,
            1 | (1 << 8),
        );
        engines::memory_fill(&mut mem, &cfg).unwrap();
        let mut got = [0u8; 24];
        mem.read(VRAM.base, &mut got).unwrap();
        for k in 0..8 {
            assert_eq!(&got[3 * k..3 * k + 3], &[0xCC, 0xBB, 0xAA]);
        }
    }

    #[test]
    fn hw_fb2_texture_copy_source_aligned_down_to_16_bytes() {
        // Issue #1336: an 8-byte-aligned source starts copying at the previous 16-byte boundary.
        let mut mem = PhysMem::new();
        let src: Vec<u8> = (0..64u8).collect();
        mem.write(VRAM.base, &src).unwrap();
        let out_addr = VRAM.base + 0x1000;
        let cfg = TextureCopyConfig::from_words((VRAM.base + 8) >> 3, out_addr >> 3, 32, 0, 0);
        engines::texture_copy(&mut mem, &cfg).unwrap();
        let mut got = [0u8; 32];
        mem.read(out_addr, &mut got).unwrap();
        assert_eq!(&got[..], &src[..32]);
    }

    #[test]
    fn hw_fb4_memory_fill_with_start_zero_still_completes() {
        // Citra gpu.cpp comment: the trigger bit is cleared and the finished bit set even with a
        // start address of 0.
        let mut gpu = Gpu::new();
        let mut mem = PhysMem::new();
        let mut log = EventLog::new(100, false);
        let base = 0x1040_0010;
        gpu.write_external(&mut mem, base, 0, true, &mut log);
        gpu.write_external(&mut mem, base + 4, 0x100, true, &mut log);
        gpu.write_external(&mut mem, base + 8, 0xFFFF_FFFF, true, &mut log);
        gpu.write_external(&mut mem, base + 0xC, 1 | (2 << 8), true, &mut log);
        let control = gpu.external_reg(base + 0xC).expect("fill control register");
        assert_eq!(control & 1, 0, "start bit cleared");
        assert_eq!(control & 2, 2, "finished bit set");
    }

    #[test]
    fn hw_fb5_framebuffer_address_and_depth_format_field_widths() {
        // PR #2703: colour/depth buffer addresses are 28-bit fields (× 8); the depth format is
        // a 2-bit field.
        let mut regs = Box::new([0u32; 0x300]);
        regs[0x11D] = 0xF000_0000 | (VRAM.base >> 3);
        regs[0x11C] = 0xF000_0000 | ((VRAM.base + 0x1000) >> 3);
        regs[0x116] = 3 | 0xFC; // D24S8 + junk above bit 1
        regs[0x117] = 2;
        regs[0x11E] = 8 | (7 << 12) | (1 << 24);
        let fb = FramebufferConfig::from_regs(&regs);
        assert_eq!(fb.color_addr, VRAM.base);
        assert_eq!(fb.depth_addr, VRAM.base + 0x1000);
        assert_eq!(fb.depth_format_id, 3);
    }
}

// ----- LI / CR-5: fragment lighting -------------------------------------------------------

mod li {
    use gpu_core::lighting::{LUT_COUNT, LUT_ENTRIES, LightingConfig};
    use shader_unit::float::{F16, F20};

    const CONFIG7: u32 = 8;

    /// A lighting register file: `n` lights in slot order `perm`, environment config 7, the
    /// given CONFIG0 extra bits, all LUTs disabled except those in `enabled_luts` (CONFIG1 bit
    /// numbers: 16 D0, 17 D1, 19 FR, 20 RB, 21 RG, 22 RR), spot/shadow/DA off unless `da_on`.
    fn regs(perm: &[u32], config0: u32, enabled_luts: &[u32], da_on: u8) -> Box<[u32; 0x300]> {
        let mut r = Box::new([0u32; 0x300]);
        r[0x08F] = 1; // LIGHTING_ENABLE0
        r[0x1C2] = perm.len() as u32 - 1;
        r[0x1C3] = config0 | (CONFIG7 << 4) | (4 << 8) | (1 << 31);
        let mut c1 = 0xFF | (0xFF << 8) | (1 << 18) | ((0xFF & !u32::from(da_on)) << 24);
        for bit in [16, 17, 19, 20, 21, 22] {
            if !enabled_luts.contains(&bit) {
                c1 |= 1 << bit;
            }
        }
        r[0x1C4] = c1;
        r[0x1D9] = perm
            .iter()
            .enumerate()
            .fold(0, |m, (k, l)| m | (l << (4 * k)));
        r
    }

    fn color10(c: [f32; 3]) -> u32 {
        let q = |x: f32| (x * 255.0).round() as u32;
        q(c[2]) | (q(c[1]) << 10) | (q(c[0]) << 20)
    }

    /// Light `id`: colours, direction/position, CONFIG bits (0 directional, 1 two-sided,
    /// 2 geometric0).
    fn light(
        r: &mut [u32; 0x300],
        id: usize,
        spec0: [f32; 3],
        diffuse: [f32; 3],
        pos: [f32; 3],
        config: u32,
    ) {
        let b = 0x140 + 0x10 * id;
        let h = |x: f32| F16::from_f32(x).to_bits();
        r[b] = color10(spec0);
        r[b + 1] = 0;
        r[b + 2] = color10(diffuse);
        r[b + 3] = 0;
        r[b + 4] = h(pos[0]) | (h(pos[1]) << 16);
        r[b + 5] = h(pos[2]);
        r[b + 9] = config;
    }

    /// LUT words with entry i = value f(i) (fixed0.12 / 4095), difference 0.
    fn lut(f: impl Fn(usize) -> f32) -> [u32; LUT_ENTRIES] {
        std::array::from_fn(|i| ((f(i) * 4095.0).round() as u32).min(4095))
    }

    fn no_luts() -> Box<[[u32; LUT_ENTRIES]; LUT_COUNT]> {
        Box::new([[0; LUT_ENTRIES]; LUT_COUNT])
    }

    const IDENTITY: [f32; 4] = [0.0, 0.0, 0.0, 1.0];
    const NO_TEX: [[u8; 4]; 4] = [[0; 4]; 4];

    #[test]
    fn hw_li1_fresnel_from_the_last_enabled_light_only() {
        // PR #2914 / wwylele fresnel-test: the Fresnel factor (written to the primary alpha) is
        // the last light slot's; the others are ignored, not multiplied in.
        // FR LUT: entry i = i/255 (input L·N, abs mode), selector: primary alpha.
        let mut luts = no_luts();
        luts[3] = lut(|i| i as f32 / 255.0);
        let fr_alpha = |perm: &[u32]| {
            let mut r = regs(perm, 1 << 2, &[19], 0);
            r[0x1D1] = 3 << 12; // FR input: L·N
            // Light 0 along the normal (L·N = 1), light 1 at L·N = 0.5, light 2 at 0.25.
            light(&mut r, 0, [0.0; 3], [0.0; 3], [0.0, 0.0, 1.0], 1);
            light(&mut r, 1, [0.0; 3], [0.0; 3], [0.0, 0.866_025_4, 0.5], 1);
            light(&mut r, 2, [0.0; 3], [0.0; 3], [0.0, 0.968_245_8, 0.25], 1);
            let cfg = LightingConfig::from_regs(&r, &luts);
            cfg.shade(IDENTITY, [0.0, 0.0, 1.0], &NO_TEX)[0][3]
        };
        // About 128 for L·N = 0.5, 64 for 0.25, 255 for 1 (±2: float16 light directions).
        let a = fr_alpha(&[0, 1]);
        let b = fr_alpha(&[1, 0]);
        let c = fr_alpha(&[0, 1, 2]);
        assert!(a.abs_diff(128) <= 2, "last = light 1 (L·N 0.5): {a}");
        assert!(b >= 254, "last = light 0 (L·N 1): {b}");
        assert!(
            c.abs_diff(64) <= 2,
            "last = light 2 (L·N 0.25), not a product: {c}"
        );
    }

    #[test]
    fn hw_li2_geometric_factor() {
        // PR #2776 / wwylele geo_factor: G = min(1, 0.5·|L·N| / (1 + L·V)) multiplies the
        // specular term (here specular0 white, D0 off, one directional two-sided light).
        let luts = no_luts();
        for (l, v) in [
            ([0.0f32, 0.0, 1.0], [0.0f32, 0.0, 1.0]),
            ([0.6, 0.0, 0.8], [0.0, 0.0, 1.0]),
            ([0.0, 0.8, 0.6], [0.0, -0.6, 0.8]),
            ([0.8, 0.0, 0.6], [-0.8, 0.0, 0.6]),
            ([0.0, 0.6, -0.8], [0.0, 0.0, 1.0]), // behind the surface: |L·N| (two-sided)
        ] {
            let mut r = regs(&[0], 0, &[], 0);
            light(&mut r, 0, [1.0; 3], [0.0; 3], l, 0b111); // directional, two-sided, geo0
            let cfg = LightingConfig::from_regs(&r, &luts);
            let spec = cfg.shade(IDENTITY, v, &NO_TEX)[1];
            let ln = l[2]; // N = (0, 0, 1)
            let lv = l[0] * v[0] + l[1] * v[1] + l[2] * v[2];
            let g = if 1.0 + lv == 0.0 {
                0.0
            } else {
                (0.5 * ln.abs() / (1.0 + lv)).min(1.0)
            };
            let want = (g * 255.0) as i32;
            assert!(
                (i32::from(spec[0]) - want).abs() <= 1,
                "L {l:?} V {v:?}: {} vs {want}",
                spec[0]
            );
        }
    }

    #[test]
    fn hw_li3_distance_attenuation_measures_the_light_vector() {
        // PR #6366: the DA input is scale·|L| + bias with L the unnormalised light vector:
        // |position + view| for a positional light, |position| for a directional one.
        let mut luts = no_luts();
        luts[16] = lut(|i| i as f32 / 255.0); // DA0 ramp
        let shade = |pos: [f32; 3], directional: bool, view: [f32; 3]| {
            let mut r = regs(&[0], 0, &[], 1);
            light(
                &mut r,
                0,
                [0.0; 3],
                [1.0; 3],
                pos,
                u32::from(directional) | 2,
            );
            r[0x14A] = F20::from_f32(0.0).to_bits(); // bias
            r[0x14B] = F20::from_f32(0.25).to_bits(); // scale
            let cfg = LightingConfig::from_regs(&r, &luts);
            cfg.shade(IDENTITY, view, &NO_TEX)[0][0]
        };
        // Positional light at (0, 0, 2), fragment view vector (0, 0, 1): |L| = 3, DA(0.75).
        let p = shade([0.0, 0.0, 2.0], false, [0.0, 0.0, 1.0]);
        assert!(p.abs_diff(191) <= 1, "positional: {p}");
        // Directional light of length 2: DA(0.5) whatever the view vector.
        for view in [[0.0, 0.0, 1.0], [0.0, 0.0, 7.0], [3.0, 0.0, 4.0]] {
            let d = shade([0.0, 0.0, 2.0], true, view);
            assert!(d.abs_diff(128) <= 1, "directional, view {view:?}: {d}");
        }
    }

    #[test]
    fn hw_li5_cp_input_projection_is_not_renormalized() {
        // PR #2762: CP = dot(H' − N·(N·H'), T) with H' the normalised half vector, and the
        // projection NOT renormalised. N = (0,0,1), T = (1,0,0) (identity quaternion).
        // L = V = (0.6, 0, 0.8): H' = L, projection (0.6, 0, 0): CP = 0.6 (a renormalised
        // projection would give 1). The CP value drives the D0 LUT (entry i = i/255).
        let mut luts = no_luts();
        luts[0] = lut(|i| i as f32 / 255.0);
        let mut r = regs(&[0], 0, &[16], 0);
        r[0x1D1] = 5; // D0 input: CP
        r[0x1D0] = 1 << 1; // D0 input signed (no abs)
        light(&mut r, 0, [1.0; 3], [0.0; 3], [0.6, 0.0, 0.8], 1);
        let cfg = LightingConfig::from_regs(&r, &luts);
        let spec = cfg.shade(IDENTITY, [0.6, 0.0, 0.8], &NO_TEX)[1][0];
        // Signed lookup of 0.6: entry floor(0.6·128) = 76 → 76/255 plus δ·0 → 0.298.
        let want = ((76.0f32 / 255.0 * 4095.0).round() / 4095.0 * 255.0) as u8;
        assert!(spec.abs_diff(want) <= 1, "CP 0.6 → {spec} (want {want})");
    }

    /// Bump mapping from texture unit 0: CONFIG0 bump unit 22-23 = 0, mode 28-29, bit 30 = no
    /// renormalisation.
    fn bump_regs(mode: u32, no_renorm: bool) -> Box<[u32; 0x300]> {
        let mut r = regs(&[0], (mode << 28) | (u32::from(no_renorm) << 30), &[16], 0);
        r[0x1D1] = 5; // D0 input: CP
        r[0x1D0] = 1 << 1; // D0 input signed
        light(&mut r, 0, [1.0; 3], [0.0; 3], [0.6, 0.0, 0.8], 1);
        r
    }

    /// Signed D0 LUT whose entry for x in [-1, 1) is (x + 1) / 2, so the secondary red
    /// channel reads back CP.
    fn cp_lut() -> Box<[[u32; LUT_ENTRIES]; LUT_COUNT]> {
        let mut luts = no_luts();
        luts[0] = lut(|i| {
            let x = if i < 128 {
                i as f32 / 128.0
            } else {
                (i as f32 - 256.0) / 128.0
            };
            (x + 1.0) / 2.0
        });
        luts
    }

    fn cp_of(spec_red: u8) -> f32 {
        f32::from(spec_red) / 255.0 * 2.0 - 1.0
    }

    #[test]
    fn hw_li6_cp_with_renorm_off_assumes_a_unit_normal() {
        // PR #2891: with renormalisation off and a non-unit normal-map vector, CP is computed
        // without dividing by |N|². Texel (191, 128, 191) → N ≈ (0.5, 0, 0.5); H = (0.6, 0, 0.8);
        // N·H = 0.7: CP = (H − N·(N·H))·T = 0.6 − 0.35 = 0.25 (dividing by |N|² = 0.5 would
        // give 0.6 − 0.7 = −0.1).
        let luts = cp_lut();
        let r = bump_regs(1, true);
        let cfg = LightingConfig::from_regs(&r, &luts);
        let tex = [[191, 128, 191, 255], [0; 4], [0; 4], [0; 4]];
        let cp = cp_of(cfg.shade(IDENTITY, [0.6, 0.0, 0.8], &tex)[1][0]);
        assert!((cp - 0.25).abs() < 0.03, "CP {cp}");
    }

    #[test]
    fn hw_li8_tangent_map_mode_ignores_renorm() {
        // azahar fragment generators ("confirmed on 3DS"): in tangent-map mode the renorm bit
        // changes nothing, even for a non-unit tangent vector.
        let luts = cp_lut();
        let tex = [[191, 160, 140, 255], [0; 4], [0; 4], [0; 4]];
        let out = |no_renorm| {
            let cfg = LightingConfig::from_regs(&bump_regs(2, no_renorm), &luts);
            cfg.shade(IDENTITY, [0.6, 0.0, 0.8], &tex)
        };
        assert_eq!(out(false), out(true));
        // The tangent map does change the result (the test would be vacuous otherwise).
        let cfg = LightingConfig::from_regs(&bump_regs(0, false), &luts);
        assert_ne!(cfg.shade(IDENTITY, [0.6, 0.0, 0.8], &tex), out(false));
    }

    #[test]
    fn hw_cr5_quaternions_normalized_per_vertex_then_interpolated_linearly() {
        // PR #2726/#2729 (yuriks' test): each vertex quaternion is normalised, the unit
        // quaternions are interpolated linearly, and the fragment renormalises. A vertex with
        // an unnormalised quaternion must not pull the interpolation towards itself.
        use gpu_core::raster::{RasterConfig, rasterize_triangle};
        use gpu_core::vertex::{OutputVertex, ScreenVertex};
        let regs = {
            let mut r = Box::new([0u32; 0x300]);
            r[0x11E] = 64 | (63 << 12) | (1 << 24);
            r[0x117] = 2;
            r
        };
        let cfg = RasterConfig::from_regs(&regs);
        let sv = |x: f32, y: f32, quat: [f32; 4]| ScreenVertex {
            x,
            y,
            z_over_w: -0.5,
            inv_w: 1.0,
            attrs: OutputVertex {
                quat,
                ..Default::default()
            },
        };
        // v0 identity ×4 (length 4), v1 and v2 a 90° rotation about z (unit length).
        let s = std::f32::consts::FRAC_1_SQRT_2;
        let rot = [0.0, 0.0, s, s];
        let tri = [
            sv(0.0, 0.0, [0.0, 0.0, 0.0, 4.0]),
            sv(64.0, 0.0, rot),
            sv(0.0, 64.0, rot),
        ];
        let mut checked = 0;
        rasterize_triangle(&cfg, &tri, |f| {
            // Barycentric weight of v0 at the pixel centre.
            let (px, py) = (f.x as f32 + 0.5, f.y as f32 + 0.5);
            let w0 = 1.0 - (px + py) / 64.0;
            let q = [0.0, 0.0, (1.0 - w0) * s, w0 + (1.0 - w0) * s];
            let len = (q[2] * q[2] + q[3] * q[3]).sqrt();
            let want = [0.0, 0.0, q[2] / len, q[3] / len];
            for c in 0..4 {
                assert!(
                    (f.quat[c] - want[c]).abs() < 1e-3,
                    "({}, {}): {:?} vs {want:?}",
                    f.x,
                    f.y,
                    f.quat
                );
            }
            checked += 1;
        });
        assert!(checked > 1000);
    }
}

// ----- VL-7: primitive assembly with a geometry shader -----------------------------------

#[test]
fn hw_vl7_assembler_keeps_the_topology_and_gs_winding_reverses_order() {
    // PR #2865 (hardware tested): with a geometry shader the assembler still follows the
    // topology setting, and the GS winding flag reverses the emitted triangle's first two
    // vertices (geometry topology).
    use gpu_core::assembly::{PrimitiveAssembler, Topology};
    use gpu_core::shading::submit_emitted;
    use gpu_core::vertex::OutputVertex;
    let v = |i: f32| OutputVertex {
        pos: [i, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    let ids = |t: &[OutputVertex; 3]| t.map(|v| v.pos[0] as u32);
    // Geometry topology: winding set → (v1, v0, v2); the flag is consumed by that triangle.
    let mut pa = PrimitiveAssembler::new(Topology::Geometry);
    let mut tris = Vec::new();
    submit_emitted(&mut pa, &[v(0.0), v(1.0), v(2.0)], true, |t| {
        tris.push(ids(&t))
    });
    submit_emitted(&mut pa, &[v(3.0), v(4.0), v(5.0)], false, |t| {
        tris.push(ids(&t))
    });
    assert_eq!(tris, vec![[1, 0, 2], [3, 4, 5]]);
    // Strip topology with GS output: emitted vertices are assembled as a strip.
    let mut pa = PrimitiveAssembler::new(Topology::Strip);
    let mut tris = Vec::new();
    submit_emitted(&mut pa, &[v(0.0), v(1.0), v(2.0)], false, |t| {
        tris.push(ids(&t))
    });
    submit_emitted(&mut pa, &[v(3.0)], false, |t| tris.push(ids(&t)));
    assert_eq!(tris, vec![[0, 1, 2], [2, 1, 3]]);
    // Fan topology likewise.
    let mut pa = PrimitiveAssembler::new(Topology::Fan);
    let mut tris = Vec::new();
    submit_emitted(&mut pa, &[v(0.0), v(1.0), v(2.0), v(3.0)], false, |t| {
        tris.push(ids(&t))
    });
    assert_eq!(tris, vec![[0, 1, 2], [0, 2, 3]]);
}
