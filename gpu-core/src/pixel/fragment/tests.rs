// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
use super::*;
use crate::memory::VRAM;
use crate::pixel::color::ColorFormat;
use crate::vertex::OutputVertex;

// ---------------------------------------------------------------------------------------------
// Pure functions.

#[test]
fn compare_functions() {
    use CompareFunc::*;
    let table: [(CompareFunc, [bool; 3]); 8] = [
        // results for (1 OP 2, 2 OP 2, 3 OP 2)
        (Never, [false, false, false]),
        (Always, [true, true, true]),
        (Equal, [false, true, false]),
        (NotEqual, [true, false, true]),
        (Less, [true, false, false]),
        (LessEqual, [true, true, false]),
        (Greater, [false, false, true]),
        (GreaterEqual, [false, true, true]),
    ];
    for (i, (f, want)) in table.iter().enumerate() {
        assert_eq!(CompareFunc::from_bits(i as u32), *f);
        assert_eq!([f.test(1, 2), f.test(2, 2), f.test(3, 2)], *want, "{f:?}");
    }
}

#[test]
fn stencil_operations() {
    use StencilOp::*;
    let r = 0x42;
    let cases = [
        (Keep, [0, 1, 255], [0, 1, 255]),
        (Zero, [0, 1, 255], [0, 0, 0]),
        (Replace, [0, 1, 255], [r, r, r]),
        (Increment, [0, 254, 255], [1, 255, 255]),
        (Decrement, [0, 1, 255], [0, 0, 254]),
        (Invert, [0, 0x0F, 255], [255, 0xF0, 0]),
        (IncrementWrap, [0, 254, 255], [1, 255, 0]),
        (DecrementWrap, [0, 1, 255], [255, 0, 254]),
    ];
    for (i, (op, old, want)) in cases.iter().enumerate() {
        assert_eq!(StencilOp::from_bits(i as u32), *op);
        for k in 0..3 {
            assert_eq!(op.apply(old[k], r), want[k], "{op:?} {}", old[k]);
        }
    }
    // Write mask: only masked bits change; Replace writes the unmasked reference.
    let st = StencilTest {
        enabled: true,
        func: CompareFunc::Equal,
        write_mask: 0x0F,
        reference: 0xAB,
        input_mask: 0xF0,
        fail: Keep,
        depth_fail: Keep,
        depth_pass: Replace,
    };
    assert_eq!(st.update(Replace, 0x50), 0x5B);
    assert_eq!(st.update(Invert, 0x50), 0x5F);
    // Input mask on both sides: (0xAB & 0xF0) == (0xA3 & 0xF0).
    assert!(st.passes(0xA3));
    assert!(!st.passes(0xB3));
    // The reference is on the left: Less passes if ref < stored.
    let less = StencilTest {
        func: CompareFunc::Less,
        input_mask: 0xFF,
        ..st
    };
    assert!(less.passes(0xAC));
    assert!(!less.passes(0xAA));
}

fn blend(rgb_eq: u32, a_eq: u32, rs: u32, rd: u32, as_: u32, ad: u32, color: Rgba) -> Blend {
    Blend::from_words(
        rgb_eq | (a_eq << 8) | (rs << 16) | (rd << 20) | (as_ << 24) | (ad << 28),
        u32::from_le_bytes(color),
    )
}

#[test]
fn blend_equations_exact() {
    let src = [200, 100, 50, 128];
    let dst = [100, 200, 10, 64];
    // Factors: src·srcAlpha, dst·(1 − srcAlpha); alpha: One/Zero... per equation.
    // sa = 128, 1 − sa = 127.
    // add: (200·128 + 100·127)/255 = (25600 + 12700)/255 = 150.2 → 150;
    //      (100·128 + 200·127)/255 = (12800 + 25400)/255 = 149.8 → 149;
    //      (50·128 + 10·127)/255 = (6400 + 1270)/255 = 30.07 → 30.
    // alpha with One/One: 128 + 64 = 192.
    let b = blend(0, 0, 6, 7, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [150, 149, 30, 192]);
    // subtract: (25600 − 12700)/255 = 50.6 → 50; (12800 − 25400) < 0 → 0; (6400 − 1270)/255 = 20.1 → 20;
    // alpha One/One: 128 − 64 = 64.
    let b = blend(1, 1, 6, 7, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [50, 0, 20, 64]);
    // reverse subtract: 0; (25400 − 12800)/255 = 49.4 → 49; 0; alpha 64 − 128 < 0 → 0.
    let b = blend(2, 2, 6, 7, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [0, 49, 0, 0]);
    // min / max compare the products with the factors (hardware fact FO-5); with One/One that
    // is the plain min / max.
    let b = blend(3, 4, 1, 1, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [100, 100, 10, 128]);
    let b = blend(4, 3, 1, 1, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [200, 200, 50, 64]);
    // max with source factor Zero and destination factor One keeps the destination.
    let b = blend(4, 4, 0, 1, 0, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), dst);
    // min(s·sa, d·(1 − sa)): (25600, 12700) → 49; (12800, 25400) → 50; (6400, 1270) → 4.
    let b = blend(3, 3, 6, 7, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [49, 50, 4, 64]);
    // 5-7 behave as add.
    for eq in 5..=7 {
        let b = blend(eq, eq, 6, 7, 1, 1, [0; 4]);
        assert_eq!(b.apply(src, dst), [150, 149, 30, 192], "equation {eq}");
    }
    // Saturation: One/One add of 200 + 100 → 255.
    let b = blend(0, 0, 1, 1, 1, 1, [0; 4]);
    assert_eq!(b.apply(src, dst), [255, 255, 60, 192]);
}

#[test]
fn blend_factors_exact() {
    let src = [200, 100, 50, 128];
    let dst = [100, 200, 10, 64];
    let k = [20, 40, 60, 80];
    // Factor value for channel 0 (R) and channel 3 (A).
    let want: [(u32, u32); 16] = [
        (0, 0),
        (255, 255),
        (200, 128),
        (55, 127),
        (100, 64),
        (155, 191),
        (128, 128),
        (127, 127),
        (64, 64),
        (191, 191),
        (20, 80),
        (235, 175),
        (80, 80),
        (175, 175),
        (128, 255), // min(128, 255 − 64 = 191) for RGB; 255 for alpha
        (255, 255), // reserved 15: one
    ];
    for (id, (r, a)) in want.iter().enumerate() {
        let f = BlendFactor::from_bits(id as u32);
        assert_eq!(f.value(0, src, dst, k), *r, "{f:?} R");
        assert_eq!(f.value(3, src, dst, k), *a, "{f:?} A");
    }
    // Alpha saturate with a small remaining destination alpha.
    assert_eq!(
        BlendFactor::SourceAlphaSaturate.value(1, src, [0, 0, 0, 250], k),
        5
    );
    // Through a blend: dst·constColor (R: 100·20/255 = 7.8 → 7).
    let b = blend(0, 0, 0, 10, 0, 10, k);
    assert_eq!(b.apply(src, dst), [7, 31, 2, 20]);
}

#[test]
fn logic_ops_all_sixteen() {
    let s = 0b1100_1010u8;
    let d = 0b1010_0110u8;
    let want = [
        0,
        s & d,
        s & !d,
        s,
        255,
        !s,
        d,
        !d,
        !(s & d),
        s | d,
        !(s | d),
        s ^ d,
        !(s ^ d),
        !s & d,
        s | !d,
        !s | d,
    ];
    for (i, w) in want.iter().enumerate() {
        assert_eq!(LogicOp::from_bits(i as u32).apply(s, d), *w, "op {i}");
    }
}

#[test]
fn decode_fragment_ops() {
    let mut r = Box::new([0u32; 0x300]);
    r[0x100] = (1 << 8) | 3;
    r[0x101] = 2 | (4 << 8) | (6 << 16) | (7 << 20) | (1 << 24) | (9 << 28);
    r[0x103] = 0x0403_0201;
    r[0x104] = 1 | (5 << 4) | (0x80 << 8);
    r[0x105] = 1 | (2 << 4) | (0x0F << 8) | (0x33 << 16) | (0xF0 << 24);
    r[0x106] = 1 | (3 << 4) | (7 << 8);
    r[0x107] = 1 | (4 << 4) | (0b1011 << 8) | (1 << 12);
    r[0x0E0] = 5;
    r[0x061] = 2;
    r[0x062] = 1;
    r[0x06A] = 0x12_3456;
    let o = FragmentOps::from_regs(&r);
    assert_eq!(o.mode, FragmentMode::Shadow);
    assert_eq!(o.fog, FogMode::Fog);
    assert_eq!(
        o.alpha_test,
        AlphaTest {
            enabled: true,
            func: CompareFunc::LessEqual,
            reference: 0x80
        }
    );
    assert_eq!(o.stencil.func, CompareFunc::Equal);
    assert_eq!(
        (
            o.stencil.write_mask,
            o.stencil.reference,
            o.stencil.input_mask
        ),
        (0x0F, 0x33, 0xF0)
    );
    assert_eq!(
        (o.stencil.fail, o.stencil.depth_fail, o.stencil.depth_pass),
        (
            StencilOp::Zero,
            StencilOp::Increment,
            StencilOp::DecrementWrap
        )
    );
    assert_eq!(
        o.depth,
        DepthTest {
            enabled: true,
            func: CompareFunc::Less,
            write: true
        }
    );
    assert_eq!(o.color_mask, [true, true, false, true]);
    let ColorOutput::Blend(b) = o.output else {
        panic!("blend expected")
    };
    assert_eq!(
        (b.rgb_eq, b.alpha_eq),
        (BlendEquation::ReverseSubtract, BlendEquation::Max)
    );
    assert_eq!(
        (b.rgb_src, b.rgb_dst),
        (BlendFactor::SourceAlpha, BlendFactor::OneMinusSourceAlpha)
    );
    assert_eq!(
        (b.alpha_src, b.alpha_dst),
        (BlendFactor::One, BlendFactor::OneMinusDestAlpha)
    );
    assert_eq!(b.color, [1, 2, 3, 4]);
    assert_eq!(
        o.early_depth,
        EarlyDepth {
            enabled: [true, false],
            func: 2,
            clear_value: 0x12_3456
        }
    );
    r[0x100] = 0;
    r[0x102] = 11;
    assert_eq!(
        FragmentOps::from_regs(&r).output,
        ColorOutput::Logic(LogicOp::Xor)
    );
    assert_eq!(FogMode::from_bits(3), FogMode::Other(3));
    assert_eq!(FragmentMode::from_bits(2), FragmentMode::Reserved2);
}

// ---------------------------------------------------------------------------------------------
// The whole pipeline on a 16×16 render target in VRAM.

const W: u32 = 16;
const H: u32 = 16;
const COLOR: u32 = VRAM.base;
const DEPTH: u32 = VRAM.base + 0x1_0000;
const F24_MINUS_ONE: u32 = 0xBF_0000;

struct Scene {
    regs: Box<[u32; 0x300]>,
    mem: PhysMem,
}

impl Scene {
    fn new(color: ColorFormat, depth: DepthFormat) -> Self {
        let mut r = Box::new([0u32; 0x300]);
        r[0x11D] = COLOR >> 3;
        r[0x11C] = DEPTH >> 3;
        r[0x117] = color.pica_id() << 16;
        r[0x116] = depth.id();
        r[0x11E] = W | ((H - 1) << 12) | (1 << 24);
        r[0x112] = 0xF;
        r[0x113] = 0xF;
        r[0x114] = 3;
        r[0x115] = 3;
        r[0x04D] = F24_MINUS_ONE; // depth = −z/w
        r[0x06D] = 1;
        // Stage 0: replace with the constant colour; stages 1-5: pass-through.
        r[0x0C0] = 14 | (14 << 16);
        for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
            r[base] = 15 | (15 << 16);
        }
        // Blending on, One/Zero: plain replacement; all channels written; no depth test.
        r[0x100] = 1 << 8;
        r[0x101] = (1 << 16) | (1 << 24);
        r[0x107] = 0xF << 8;
        Scene {
            regs: r,
            mem: PhysMem::new(),
        }
    }

    fn constant(&mut self, c: Rgba) {
        self.regs[0x0C3] = u32::from_le_bytes(c);
    }

    fn fb(&self) -> FramebufferConfig {
        FramebufferConfig::from_regs(&self.regs)
    }

    /// Fills the rectangle [x0, x1) × [y0, y1) (window pixels) at depth `d` (z/w = −d).
    fn rect(&mut self, x0: f32, y0: f32, x1: f32, y1: f32, d: f32) -> Vec<PipelineDiag> {
        let v = |x: f32, y: f32| ScreenVertex {
            x,
            y,
            z_over_w: -d,
            inv_w: 1.0,
            attrs: OutputVertex {
                color: [1.0; 4],
                ..Default::default()
            },
        };
        let mut p = PixelPipeline::new(&self.regs);
        p.draw_triangle(&mut self.mem, &[v(x0, y0), v(x1, y0), v(x1, y1)]);
        p.draw_triangle(&mut self.mem, &[v(x0, y0), v(x1, y1), v(x0, y1)]);
        p.take_diagnostics()
    }

    fn full(&mut self, d: f32) -> Vec<PipelineDiag> {
        self.rect(0.0, 0.0, W as f32, H as f32, d)
    }

    fn color(&self, x: u32, y: u32) -> Rgba {
        self.fb().read_color(&self.mem, x, y).unwrap()
    }

    fn depth(&self, x: u32, y: u32) -> (u32, u8) {
        self.fb().read_depth_stencil(&self.mem, x, y).unwrap()
    }

    fn clear(&mut self, c: Rgba, depth: u32, stencil: u8) {
        let fb = self.fb();
        for y in 0..H {
            for x in 0..W {
                fb.write_color(&mut self.mem, x, y, c).unwrap();
                fb.write_depth(&mut self.mem, x, y, depth).unwrap();
                fb.write_stencil(&mut self.mem, x, y, stencil).unwrap();
            }
        }
    }
}

const D24_MAX: u32 = 0xFF_FFFF;

#[test]
fn flat_fill_writes_every_pixel_in_every_colour_format() {
    for f in ColorFormat::ALL {
        let mut s = Scene::new(f, DepthFormat::D24S8);
        s.constant([0xF8, 0x84, 0x10, 0xFF]);
        let diags = s.full(0.5);
        assert!(diags.is_empty(), "{diags:?}");
        let want = f.decode_word(f.encode_word([0xF8, 0x84, 0x10, 0xFF]));
        for y in 0..H {
            for x in 0..W {
                assert_eq!(s.color(x, y), want, "{f:?} ({x},{y})");
            }
        }
    }
}

#[test]
fn depth_test_and_write() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([0; 4], D24_MAX, 0);
    s.regs[0x107] = 1 | (4 << 4) | (0xF << 8) | (1 << 12); // Less, write
    s.constant([255, 0, 0, 255]);
    s.full(0.5);
    assert_eq!(s.color(3, 3), [255, 0, 0, 255]);
    // trunc(0.5 · 0xFFFFFF) = 0x7FFFFF.
    assert_eq!(s.depth(3, 3).0, 0x7F_FFFF);
    // Farther: rejected.
    s.constant([0, 255, 0, 255]);
    s.full(0.75);
    assert_eq!(s.color(3, 3), [255, 0, 0, 255]);
    assert_eq!(s.depth(3, 3).0, 0x7F_FFFF);
    // Nearer, left half only.
    s.constant([0, 0, 255, 255]);
    s.rect(0.0, 0.0, 8.0, 16.0, 0.25);
    assert_eq!(s.color(3, 3), [0, 0, 255, 255]);
    assert_eq!(s.color(12, 3), [255, 0, 0, 255]);
    assert_eq!(s.depth(3, 3).0, (0.25f32 * D24_MAX as f32) as u32);
    // Equal depth passes with LessEqual, not with Less.
    s.regs[0x107] = 1 | (5 << 4) | (0xF << 8) | (1 << 12);
    s.constant([9, 9, 9, 255]);
    s.rect(8.0, 0.0, 16.0, 16.0, 0.5);
    assert_eq!(s.color(12, 3), [9, 9, 9, 255]);
}

#[test]
fn depth_test_disabled_still_writes_depth() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24);
    s.clear([0; 4], 0, 0);
    s.regs[0x107] = (4 << 4) | (0xF << 8) | (1 << 12); // test off, func Less, write on
    s.constant([1, 2, 3, 4]);
    s.full(0.75);
    assert_eq!(s.color(0, 0), [1, 2, 3, 4]);
    assert_eq!(s.depth(0, 0).0, (0.75f32 * D24_MAX as f32) as u32);
    // Depth write bit clear: no write.
    s.regs[0x107] = 0xF << 8;
    s.full(0.25);
    assert_eq!(s.depth(0, 0).0, (0.75f32 * D24_MAX as f32) as u32);
    // DEPTHBUFFER_WRITE bit 1 clear: no write either.
    s.regs[0x107] = (0xF << 8) | (1 << 12);
    s.regs[0x115] = 1;
    s.full(0.25);
    assert_eq!(s.depth(0, 0).0, (0.75f32 * D24_MAX as f32) as u32);
}

#[test]
fn d16_depth_values() {
    let mut s = Scene::new(ColorFormat::Rgb565, DepthFormat::D16);
    s.clear([0; 4], 0xFFFF, 0);
    s.regs[0x107] = 1 | (4 << 4) | (0xF << 8) | (1 << 12);
    s.full(0.5);
    // trunc(0.5 · 65535) = 32767.
    assert_eq!(s.depth(5, 5), (32767, 0));
    // Stored as a little-endian u16 at the Morton position: window (0, 15) is memory row 0.
    assert_eq!(s.mem.read_u16(DEPTH).unwrap(), 32767);
}

#[test]
fn stencil_masking() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([0, 0, 0, 255], D24_MAX, 0);
    // Pass 1: write reference 1 into the stencil of the left half, colour writes masked off.
    s.regs[0x105] = 1 | (1 << 4) | (0xFF << 8) | (1 << 16) | (0xFF << 24); // Always, ref 1
    s.regs[0x106] = 2 << 8; // depth pass: Replace
    s.regs[0x107] = 0; // no colour, no depth
    s.rect(0.0, 0.0, 8.0, 16.0, 0.5);
    assert_eq!(s.depth(3, 3), (D24_MAX, 1));
    assert_eq!(s.depth(12, 3), (D24_MAX, 0));
    assert_eq!(s.color(3, 3), [0, 0, 0, 255]);
    // Pass 2: full-screen quad drawn only where stencil == 1.
    s.regs[0x105] = 1 | (2 << 4) | (1 << 16) | (0xFF << 24); // Equal ref 1, write mask 0
    s.regs[0x106] = 0;
    s.regs[0x107] = 0xF << 8;
    s.constant([255, 255, 255, 255]);
    s.full(0.5);
    for y in 0..H {
        for x in 0..W {
            let want = if x < 8 { [255; 4] } else { [0, 0, 0, 255] };
            assert_eq!(s.color(x, y), want, "({x},{y})");
        }
    }
}

#[test]
fn stencil_ops_on_fail_depth_fail_and_pass() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([0; 4], 0x40_0000, 10);
    // Stencil Equal 10 on the left half only passes where stored == 10.
    // fail: Zero, depth fail: Increment, depth pass: Decrement; write mask 0xFF.
    s.regs[0x105] = 1 | (2 << 4) | (0xFF << 8) | (10 << 16) | (0xFF << 24);
    s.regs[0x106] = 1 | (3 << 4) | (4 << 8);
    s.regs[0x107] = 1 | (4 << 4) | (0xF << 8); // depth Less, no depth write
    // Depth 0.75 > stored 0.25 → depth fails → Increment: 11.
    s.rect(0.0, 0.0, 4.0, 16.0, 0.75);
    assert_eq!(s.depth(1, 1).1, 11);
    // Now stencil (11) ≠ 10 → stencil fails → Zero.
    s.rect(0.0, 0.0, 4.0, 16.0, 0.1);
    assert_eq!(s.depth(1, 1).1, 0);
    // Elsewhere stencil 10 passes and depth 0.1 passes → Decrement: 9; colour written.
    s.constant([7, 7, 7, 7]);
    s.rect(4.0, 0.0, 8.0, 16.0, 0.1);
    assert_eq!(s.depth(5, 1), (0x40_0000, 9));
    assert_eq!(s.color(5, 1), [7, 7, 7, 7]);
    // Depth test disabled: the depth-pass op still runs.
    s.regs[0x107] = 0xF << 8;
    s.rect(8.0, 0.0, 12.0, 16.0, 0.9);
    assert_eq!(s.depth(9, 1).1, 9);
    // Write mask 0xF0 on Invert: only the high nibble changes (10 = 0x0A → 0xFA).
    s.regs[0x105] = 1 | (1 << 4) | (0xF0 << 8) | (0xFF << 24);
    s.regs[0x106] = 5 << 8;
    s.rect(12.0, 0.0, 16.0, 16.0, 0.9);
    assert_eq!(s.depth(13, 1).1, 0xFA);
    // DEPTHBUFFER_WRITE bit 0 clear: stencil not written.
    s.regs[0x115] = 2;
    s.rect(12.0, 0.0, 16.0, 16.0, 0.9);
    assert_eq!(s.depth(13, 1).1, 0xFA);
}

#[test]
fn stencil_needs_d24s8() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24);
    s.clear([0; 4], 0, 0);
    // Stencil Never would discard everything, but D24 has no stencil: ignored.
    s.regs[0x105] = 1;
    s.constant([5, 5, 5, 5]);
    s.full(0.5);
    assert_eq!(s.color(0, 0), [5, 5, 5, 5]);
}

#[test]
fn alpha_test_every_function() {
    // Fragment alpha 100 against reference 100.
    let want = [false, true, true, false, false, true, false, true];
    for (func, pass) in want.iter().enumerate() {
        let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
        s.clear([0; 4], 0, 0);
        s.regs[0x104] = 1 | ((func as u32) << 4) | (100 << 8);
        s.constant([1, 2, 3, 100]);
        s.full(0.5);
        let got = s.color(4, 4) == [1, 2, 3, 100];
        assert_eq!(got, *pass, "function {func}");
    }
    // Disabled: passes.
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x104] = 0; // function Never but disabled
    s.constant([1, 2, 3, 100]);
    s.full(0.5);
    assert_eq!(s.color(4, 4), [1, 2, 3, 100]);
}

#[test]
fn blending_through_the_pipeline_uses_the_stored_pixel() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([100, 200, 10, 64], 0, 0);
    // SrcAlpha / OneMinusSrcAlpha, alpha One/One.
    s.regs[0x101] = (6 << 16) | (7 << 20) | (1 << 24) | (1 << 28);
    s.constant([200, 100, 50, 128]);
    s.full(0.5);
    assert_eq!(s.color(0, 0), [150, 149, 30, 192]);
    // Destinations without alpha read A = 255: RGB565 One·src + DstAlpha·dst.
    let mut s = Scene::new(ColorFormat::Rgb565, DepthFormat::D24S8);
    s.clear([0x80, 0x80, 0x80, 0], 0, 0);
    s.regs[0x101] = (1 << 16) | (8 << 20) | (1 << 24);
    s.constant([0x10, 0x10, 0x10, 0]);
    s.full(0.5);
    // dst decodes to (0x84, 0x82, 0x84): 0x10 + 0x84 = 0x94 → 565 truncation → 0x94 (5-bit 18 →
    // 0x94), G: 0x10 + 0x82 = 0x92 → 6-bit 36 → 0x92.
    assert_eq!(s.color(0, 0), [0x94, 0x92, 0x94, 255]);
}

#[test]
fn logic_op_through_the_pipeline() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([0b1010_0110; 4], 0, 0);
    s.regs[0x100] = 0; // logic op
    s.regs[0x102] = 11; // xor
    s.constant([0b1100_1010; 4]);
    s.full(0.5);
    assert_eq!(s.color(0, 0), [0b0110_1100; 4]);
}

#[test]
fn colour_write_mask_per_channel_and_global_enable() {
    for mask in 0..16u32 {
        let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
        s.clear([1, 2, 3, 4], 0, 0);
        s.regs[0x107] = mask << 8;
        s.constant([100, 101, 102, 103]);
        s.full(0.5);
        let mut want = [1, 2, 3, 4];
        for (ch, w) in want.iter_mut().enumerate() {
            if mask & (1 << ch) != 0 {
                *w = 100 + ch as u8;
            }
        }
        assert_eq!(s.color(7, 7), want, "mask {mask:04b}");
    }
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.clear([1, 2, 3, 4], 0, 0);
    s.regs[0x113] = 0; // COLORBUFFER_WRITE off
    s.constant([100, 101, 102, 103]);
    s.full(0.5);
    assert_eq!(s.color(7, 7), [1, 2, 3, 4]);
}

#[test]
fn gouraud_colour_reaches_the_framebuffer() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x0C0] = 0; // stage 0 replaces with the primary colour
    let v = |x: f32, y: f32, c: [f32; 4]| ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        attrs: OutputVertex {
            color: c,
            ..Default::default()
        },
    };
    let mut p = PixelPipeline::new(&s.regs);
    let tri = [
        v(0.0, 0.0, [1.0, 0.0, 0.0, 1.0]),
        v(16.0, 0.0, [0.0, 1.0, 0.0, 1.0]),
        v(0.0, 16.0, [0.0, 0.0, 1.0, 1.0]),
    ];
    assert_eq!(
        p.draw_triangle(&mut s.mem, &tri),
        TriangleOutcome::Drawn { fragments: 120 }
    );
    // Pixel (0, 0): centre (0.5, 0.5): barycentrics (15/16, 1/32, 1/32) → (239, 8, 8).
    assert_eq!(s.color(0, 0), [239, 8, 8, 255]);
    let st = p.stats();
    assert_eq!(
        (st.triangles_drawn, st.fragments, st.fragments_passed),
        (1, 120, 120)
    );
}

#[test]
fn unknown_formats_and_unmapped_buffers_are_diagnostics() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x117] = 6 << 16;
    s.regs[0x116] = 1;
    s.regs[0x107] = 1 | (0xF << 8) | (1 << 12);
    let d = s.full(0.5);
    assert!(d.contains(&PipelineDiag::UnknownColorFormat(6)), "{d:?}");
    assert!(d.contains(&PipelineDiag::UnknownDepthFormat(1)), "{d:?}");

    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x11D] = 0x0800_0000 >> 3; // unmapped PA
    s.regs[0x11C] = 0x0900_0000 >> 3;
    s.regs[0x107] = 1 | (0xF << 8) | (1 << 12);
    let d = s.full(0.5);
    assert!(
        d.iter()
            .any(|x| matches!(x, PipelineDiag::UnmappedColorBuffer { pixels: 256, .. })),
        "{d:?}"
    );
    assert!(
        d.iter()
            .any(|x| matches!(x, PipelineDiag::UnmappedDepthBuffer { .. })),
        "{d:?}"
    );
    // Converted for the event log.
    let diag = d[0].to_diagnostic(Some(3));
    assert_eq!(diag.draw, Some(3));
}

#[test]
fn hooked_features_report_or_call_hooks() {
    // Fog mode 5 without a hook: not implemented, colour unchanged.
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x0E0] = 5;
    s.constant([10, 20, 30, 40]);
    let d = s.full(0.5);
    assert!(
        d.contains(&PipelineDiag::NotImplemented(Feature::Fog)),
        "{d:?}"
    );
    assert_eq!(s.color(0, 0), [10, 20, 30, 40]);

    // With a hook that sets RGB to the depth, lighting that returns fixed colours, and a
    // procedural texture.
    struct Hooks {
        calls: u32,
    }
    impl FragmentHooks for Hooks {
        fn fog(&mut self, frag: &Fragment, color: &mut Rgba) -> bool {
            self.calls += 1;
            let v = (frag.depth * 200.0) as u8;
            color[0] = v;
            true
        }
        fn lighting(&mut self, _f: &Fragment, _t: &[Rgba; 4]) -> Option<[Rgba; 2]> {
            Some([[0, 50, 0, 0], [0, 0, 60, 0]])
        }
        fn procedural_texture(&mut self, _f: &Fragment) -> Option<Rgba> {
            Some([0, 0, 0, 70])
        }
    }
    // Stage 0: fragment primary + secondary (Add); alpha: texture 3.
    s.regs[0x0C0] = 1 | (2 << 4) | (6 << 16);
    s.regs[0x0C2] = 2; // RGB Add, alpha Replace
    s.regs[0x08F] = 1; // lighting on
    s.regs[0x080] = 1 << 10; // proctex on
    let mut p = PixelPipeline::new(&s.regs);
    let v = |x: f32, y: f32| ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        ..Default::default()
    };
    let mut h = Hooks { calls: 0 };
    p.draw_triangle_with(
        &mut s.mem,
        &[v(0.0, 0.0), v(16.0, 0.0), v(0.0, 16.0)],
        &mut h,
    );
    assert!(p.take_diagnostics().is_empty());
    assert_eq!(h.calls, 120);
    assert_eq!(s.color(0, 0), [100, 50, 60, 70]);

    // Shadow and gas modes without hooks: reported, nothing written.
    for mode in [3u32, 1] {
        let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
        s.clear([1, 1, 1, 1], 0, 0);
        s.regs[0x100] |= mode;
        let d = s.full(0.5);
        let f = if mode == 3 {
            Feature::ShadowRendering
        } else {
            Feature::Gas
        };
        assert!(d.contains(&PipelineDiag::NotImplemented(f)), "{d:?}");
        assert_eq!(s.color(0, 0), [1, 1, 1, 1]);
    }

    // An enabled texture unit that is read but has no sampler.
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x080] = 1;
    s.regs[0x0C0] = 3 | (3 << 16);
    let d = s.full(0.5);
    assert!(
        d.contains(&PipelineDiag::NotImplemented(Feature::Textures)),
        "{d:?}"
    );
    assert_eq!(s.color(0, 0), [0, 0, 0, 0]);
}

#[test]
fn texture_sampler_is_called_for_read_units_only() {
    struct Checker;
    impl TextureSampler for Checker {
        fn enabled(&self, unit: usize) -> bool {
            unit < 2
        }
        fn needs_gradients(&self) -> bool {
            false
        }
        fn sample(&self, _m: &PhysMem, unit: usize, f: &Fragment) -> Rgba {
            assert_eq!(unit, 1, "unit 0 is enabled but not read");
            let on = ((f.tc[1][0] * 4.0) as u32 + (f.tc[1][1] * 4.0) as u32) % 2 == 1;
            if on { [255; 4] } else { [0, 0, 0, 255] }
        }
    }
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.regs[0x0C0] = 4 | (4 << 16); // texture 1
    let v = |x: f32, y: f32| {
        let attrs = OutputVertex {
            tc1: [x / 16.0, y / 16.0],
            ..Default::default()
        };
        ScreenVertex {
            x,
            y,
            z_over_w: -0.5,
            inv_w: 1.0,
            attrs,
        }
    };
    let mut p = PixelPipeline::with_sampler(&s.regs, Checker);
    p.draw_triangle(&mut s.mem, &[v(0.0, 0.0), v(16.0, 0.0), v(16.0, 16.0)]);
    p.draw_triangle(&mut s.mem, &[v(0.0, 0.0), v(16.0, 16.0), v(0.0, 16.0)]);
    assert!(p.take_diagnostics().is_empty());
    // A 4×4 checkerboard of 4-pixel squares.
    for y in 0..H {
        for x in 0..W {
            let on = (x / 4 + y / 4) % 2 == 1;
            assert_eq!(
                s.color(x, y),
                if on { [255; 4] } else { [0, 0, 0, 255] },
                "({x},{y})"
            );
        }
    }
}

#[test]
fn one_shot_draw_triangle() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    s.constant([3, 3, 3, 3]);
    let v = |x: f32, y: f32| ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        ..Default::default()
    };
    let (o, d) = draw_triangle(
        &mut s.mem,
        &s.regs,
        &[v(0.0, 0.0), v(16.0, 0.0), v(0.0, 16.0)],
    );
    assert_eq!(o, TriangleOutcome::Drawn { fragments: 120 });
    assert!(d.is_empty());
    assert_eq!(s.color(0, 0), [3, 3, 3, 3]);
}

/// Throughput measurement (run with `cargo test --release -p gpu-core -- --ignored
/// --nocapture pixel_throughput`); asserts only that the work was done.
#[test]
#[ignore]
fn pixel_throughput() {
    let (w, h) = (400u32, 240u32);
    let mut r = Box::new([0u32; 0x300]);
    r[0x11D] = COLOR >> 3;
    r[0x11C] = DEPTH >> 3;
    r[0x116] = 3;
    r[0x11E] = w | ((h - 1) << 12);
    r[0x113] = 0xF;
    r[0x115] = 3;
    r[0x04D] = F24_MINUS_ONE;
    r[0x06D] = 1;
    r[0x0C0] = 0; // primary colour
    for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
        r[base] = 15 | (15 << 16);
    }
    r[0x100] = 1 << 8;
    r[0x101] = (6 << 16) | (7 << 20) | (1 << 24); // alpha blending
    r[0x107] = 1 | (5 << 4) | (0xF << 8) | (1 << 12); // depth LessEqual + write
    let mut mem = PhysMem::new();
    let v = |x: f32, y: f32, c: [f32; 4]| ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        attrs: OutputVertex {
            color: c,
            ..Default::default()
        },
    };
    let (fw, fh) = (w as f32, h as f32);
    let full = [
        [
            v(0.0, 0.0, [1.0, 0.0, 0.0, 0.5]),
            v(fw, 0.0, [0.0, 1.0, 0.0, 0.5]),
            v(fw, fh, [0.0, 0.0, 1.0, 0.5]),
        ],
        [
            v(0.0, 0.0, [1.0, 0.0, 0.0, 0.5]),
            v(fw, fh, [0.0, 0.0, 1.0, 0.5]),
            v(0.0, fh, [1.0, 1.0, 1.0, 0.5]),
        ],
    ];
    let frames = 50;
    let t = std::time::Instant::now();
    let mut p = PixelPipeline::new(&r);
    for _ in 0..frames {
        for tri in &full {
            p.draw_triangle(&mut mem, tri);
        }
    }
    let dt = t.elapsed().as_secs_f64();
    let px = p.stats().fragments as f64;
    assert_eq!(p.stats().fragments, u64::from(w * h) * frames);
    println!(
        "full-screen: {:.1} Mpixels/s ({:.2} ms per 400x240 layer)",
        px / dt / 1e6,
        dt * 1e3 / frames as f64
    );

    // Many small triangles (about 50 pixels each).
    let mut p = PixelPipeline::new(&r);
    let t = std::time::Instant::now();
    let mut n = 0u64;
    for k in 0..200_000u32 {
        let x = (k * 37 % 390) as f32;
        let y = (k * 53 % 230) as f32;
        let tri = [
            v(x, y, [1.0; 4]),
            v(x + 10.0, y, [0.5; 4]),
            v(x, y + 10.0, [0.2; 4]),
        ];
        p.draw_triangle(&mut mem, &tri);
        n += 1;
    }
    let dt = t.elapsed().as_secs_f64();
    println!(
        "small triangles: {:.2} Mtriangles/s, {:.1} Mpixels/s",
        n as f64 / dt / 1e6,
        p.stats().fragments as f64 / dt / 1e6
    );
}

#[test]
fn shadow_and_gas_render_hooks_get_the_pixel_bytes() {
    struct Writer;
    impl FragmentHooks for Writer {
        fn shadow(&mut self, f: &Fragment, c: Rgba, px: &mut [u8]) -> Option<bool> {
            assert_eq!(px.len(), 4, "shadow mode always uses 4 bytes per pixel");
            px.copy_from_slice(&[c[1], f.x as u8, f.y as u8, 0xAB]);
            Some(true)
        }
        fn gas_render(&mut self, _f: &Fragment, _c: Rgba, px: &mut [u8]) -> Option<bool> {
            assert_eq!(px.len(), 2, "RGB565 target");
            Some(false)
        }
    }
    let v = |x: f32, y: f32| ScreenVertex {
        x,
        y,
        z_over_w: -0.5,
        inv_w: 1.0,
        ..Default::default()
    };
    // Shadow mode on an RGB565 target still writes 4-byte pixels.
    let mut s = Scene::new(ColorFormat::Rgb565, DepthFormat::D24S8);
    s.regs[0x100] = 3;
    s.constant([0, 77, 0, 0]);
    let mut p = PixelPipeline::new(&s.regs);
    p.draw_triangle_with(
        &mut s.mem,
        &[v(0.0, 0.0), v(16.0, 0.0), v(0.0, 16.0)],
        &mut Writer,
    );
    assert!(p.take_diagnostics().is_empty());
    // Window (0, 0) is memory row 15: tile row 1 (16·8 pixels), morton(0, 7) = 42; 4 bytes each.
    assert_eq!(
        s.mem.read_vec(COLOR + (128 + 42) * 4, 4).unwrap(),
        [77, 0, 0, 0xAB]
    );
    // Gas rendering: the hook sees the native 2-byte pixel and leaves it alone.
    let mut s = Scene::new(ColorFormat::Rgb565, DepthFormat::D24S8);
    s.regs[0x100] = 1;
    let mut p = PixelPipeline::new(&s.regs);
    p.draw_triangle_with(
        &mut s.mem,
        &[v(0.0, 0.0), v(16.0, 0.0), v(0.0, 16.0)],
        &mut Writer,
    );
    assert!(p.take_diagnostics().is_empty());
    assert_eq!(s.color(0, 0), [0, 0, 0, 255]);
}

/// Per-draw set-up cost with a 256×256 RGBA8 texture (decoded once per draw); run with
/// `cargo test --release -p gpu-core -- --ignored --nocapture draw_setup_cost`.
#[test]
#[ignore]
fn draw_setup_cost() {
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
    let tex = crate::memory::FCRAM.base;
    s.mem.write(tex, &vec![0x5A; 256 * 256 * 4]).unwrap();
    s.regs[0x080] = 1;
    s.regs[0x082] = 256 | (256 << 16);
    s.regs[0x085] = tex >> 3;
    s.regs[0x08E] = 0;
    s.regs[0x0C0] = 3 | (3 << 16);
    let n = 200;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let p = PixelPipeline::for_draw(&s.mem, &s.regs);
        assert!(p.config().tev.reads(TevSource::Texture0));
    }
    let textured = t.elapsed().as_secs_f64() / n as f64;
    let mut cache = TextureCache::with_default_budget();
    let t = std::time::Instant::now();
    for _ in 0..n {
        let _ = PixelPipeline::for_draw_cached(&s.mem, &s.regs, &mut cache);
    }
    let cached = t.elapsed().as_secs_f64() / n as f64;
    assert_eq!((cache.misses, cache.hits), (1, n - 1));
    s.regs[0x080] = 0;
    let t = std::time::Instant::now();
    for _ in 0..n {
        let _ = PixelPipeline::for_draw(&s.mem, &s.regs);
    }
    let plain = t.elapsed().as_secs_f64() / n as f64;
    println!(
        "per-draw set-up: {:.1} µs untextured, {:.1} µs with a 256x256 RGBA8 texture decoded, \
         {:.1} µs with it cached (content hash only)",
        plain * 1e6,
        textured * 1e6,
        cached * 1e6
    );
}

#[test]
fn random_register_files_and_triangles_never_panic() {
    // Arbitrary register words (render-target and texture sizes masked small so the test stays
    // fast; addresses random, so most buffers are unmapped), arbitrary vertices including NaN,
    // infinities and huge values: every draw must finish without panicking.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let specials = [
        f32::NAN,
        f32::INFINITY,
        -f32::INFINITY,
        1e30,
        -1e30,
        0.0,
        -0.0,
    ];
    let mut mem = PhysMem::new();
    mem.write(VRAM.base, &[0x5Au8; 4096]).unwrap();
    for case in 0..300 {
        let mut r = Box::new([0u32; 0x300]);
        for w in r.iter_mut() {
            *w = next() as u32;
        }
        r[0x11E] = (r[0x11E] & !(0x7FF | (0x3FF << 12)))
            | (next() as u32 % 40)
            | ((next() as u32 % 40) << 12);
        for dim in [0x082, 0x092, 0x09A] {
            r[dim] = (next() as u32 % 65) | ((next() as u32 % 65) << 16);
        }
        if case % 2 == 0 {
            // Point the buffers and textures at mapped memory half of the time.
            r[0x11D] = (VRAM.base + (next() as u32 % 0x1000)) >> 3;
            r[0x11C] = (VRAM.base + 0x2000 + (next() as u32 % 0x1000)) >> 3;
            r[0x085] = (VRAM.base + (next() as u32 % 0x1000)) >> 3;
        }
        let mut p = PixelPipeline::for_draw(&mem, &r);
        for _ in 0..4 {
            let mut tri = [ScreenVertex::default(); 3];
            for v in &mut tri {
                let mut f = || {
                    let k = next();
                    if k % 11 == 0 {
                        specials[(k >> 8) as usize % specials.len()]
                    } else {
                        ((k >> 16) % 20_000) as f32 / 100.0 - 50.0
                    }
                };
                v.x = f();
                v.y = f();
                v.z_over_w = f();
                v.inv_w = f();
                v.attrs.color = [f(), f(), f(), f()];
                v.attrs.tc0 = [f(), f()];
                v.attrs.tc1 = [f(), f()];
                v.attrs.tc2 = [f(), f()];
                v.attrs.tc0_w = f();
                v.attrs.quat = [f(), f(), f(), f()];
            }
            p.draw_triangle(&mut mem, &tri);
        }
        let _ = p.take_diagnostics();
    }
}

/// The rasteriser's attribute choices follow what the draw's stages read: texcoord 0 alone
/// when no stage reads texcoords 1/2 or texcoord0.w, and no depth when neither the
/// stencil/depth stage nor fog reads it (the fast traversal leaves the rest at 0, so a
/// condition dropped here would hand a stage zeros).
#[test]
fn interpolated_attributes_follow_what_the_stages_read() {
    struct Units;
    impl TextureSampler for Units {
        fn enabled(&self, _unit: usize) -> bool {
            true
        }
        fn needs_gradients(&self) -> bool {
            false
        }
        fn sample(&self, _m: &PhysMem, _unit: usize, _f: &Fragment) -> Rgba {
            [0; 4]
        }
    }
    let vary = |s: &Scene| {
        PixelPipeline::with_sampler(&s.regs, Units)
            .config()
            .raster
            .varyings
    };
    let sprite = || {
        let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D24S8);
        s.regs[0x080] = 1; // unit 0 on
        s.regs[0x0C0] = 3 | (3 << 16); // stage 0 reads texture 0
        s
    };
    // The sprite shape: texture 0 only, no depth test or write, no fog.
    let v = vary(&sprite());
    assert!(v.texcoords && v.texcoord0_only && v.skip_depth, "{v:?}");

    // Texture 1 read: its coordinate is needed.
    let mut s = sprite();
    s.regs[0x080] = 3;
    s.regs[0x0C0] = 4 | (4 << 16);
    assert!(!vary(&s).texcoord0_only);
    // Texture 2 on texcoord 2.
    let mut s = sprite();
    s.regs[0x080] = 5;
    s.regs[0x0C0] = 5 | (5 << 16);
    assert!(!vary(&s).texcoord0_only);
    // Unit 0 as a projective texture reads texcoord0.w.
    let mut s = sprite();
    s.regs[0x083] |= 3 << 28;
    assert!(!vary(&s).texcoord0_only);
    // The procedural texture on texcoord 1 (0x080 bits 8-9) or on texcoord 0.
    let mut s = sprite();
    s.regs[0x080] = (1 << 10) | (1 << 8);
    s.regs[0x0C0] = 6 | (6 << 16);
    assert!(!vary(&s).texcoord0_only);
    s.regs[0x080] = 1 << 10;
    assert!(vary(&s).texcoord0_only);
    // Shadow rendering mode: neither shortcut.
    let mut s = sprite();
    s.regs[0x100] |= 3;
    let v = vary(&s);
    assert!(!v.texcoord0_only && !v.skip_depth, "{v:?}");

    // Depth read by the depth test, depth writes, the stencil test and fog.
    for (reg, value) in [
        (0x107, (0xF << 8) | 1),
        (0x107, (0xF << 8) | (1 << 12)),
        (0x105, 1),
        (0x0E0, 5),
    ] {
        let mut s = sprite();
        s.regs[reg] = value;
        assert!(!vary(&s).skip_depth, "reg {reg:#x} = {value:#x}");
    }
    // A stencil test without a stencil buffer reads nothing.
    let mut s = Scene::new(ColorFormat::Rgba8, DepthFormat::D16);
    s.regs[0x105] = 1;
    assert!(vary(&s).skip_depth);
}
