//! Shared helpers of gpu-core's integration tests: a minimal pass-through scene.
#![allow(dead_code)]

use gpu_core::memory::{FCRAM, VRAM};
use pica_cmd::cmdlist::CmdListBuilder;
use shader_unit::float::{F24, F31};

pub const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

pub const VS: &str = "
.out outpos position
.out outclr color
.alias inpos v0
.alias inclr v1
.proc main
    mov outpos, inpos
    mov outclr, inclr
    end
.end
";

pub const LIST_ADDR: u32 = FCRAM.base;
pub const VERTEX_ADDR: u32 = FCRAM.base + 0x1_0000;
pub const COLOR_ADDR: u32 = VRAM.base;
pub const W: u32 = 64;
pub const H: u32 = 64;

pub fn f24(v: f32) -> u32 {
    F24::from_f32(v).to_bits()
}

/// Writes the VS program, the vertex layout (2 float4 attributes, one loader), the viewport,
/// a 64x64 RGBA8 colour buffer in VRAM and a pass-through combiner.
pub fn setup(b: &mut CmdListBuilder, vertex_count: u32, topology: u32) {
    let prog = shader_unit::asm::assemble_str(VS).expect("test shader assembles");
    // Shader code and operand descriptors through the VS upload ports.
    b.write(0x2CB, 0);
    b.repeated(0x2CC, 0xF, &prog.program).unwrap();
    b.write(0x2D5, 0);
    b.repeated(0x2D6, 0xF, &prog.opdescs).unwrap();
    b.write(0x2BF, 1); // CODETRANSFER_END
    b.write(0x2BA, 0x7FFF_0000 | prog.entry_point); // ENTRYPOINT
    b.write(0x2B9, 0xA000_0001); // INPUTBUFFER_CONFIG: VS mode, 2 inputs
    b.write(0x242, 1); // VSH_NUM_ATTR: 2 attributes
    b.write(0x2BB, 0x10); // permutation: attribute 0 -> v0, 1 -> v1
    b.write(0x2BC, 0);
    b.write(0x2BD, 0b11); // OUTMAP_MASK: o0, o1
    b.write(0x04F, 2); // SH_OUTMAP_TOTAL
    b.write(0x050, 0x0302_0100); // o0 = position xyzw
    b.write(0x051, 0x0B0A_0908); // o1 = colour rgba
    b.write(0x24A, 1);
    b.write(0x251, 1);
    b.write(0x229, 0); // no geometry shader
    b.write(0x244, 0);
    b.write(0x25E, 1 | (topology << 8)); // PRIMITIVE_CONFIG: 2 outputs, topology
    // Vertex arrays: base, formats (two float x4), one loader of stride 32.
    b.write(0x200, VERTEX_ADDR >> 3);
    b.write(0x201, 0xFF);
    b.write(0x202, 1 << 28);
    b.write(0x203, 0);
    b.write(0x204, 0x10);
    b.write(0x205, (32 << 16) | (2 << 28));
    b.write(0x228, vertex_count);
    b.write(0x22A, 0);
    // Viewport 64x64 at (0, 0); z-buffer depth map (scale -1, offset 0); no culling.
    b.write(0x041, f24(W as f32 / 2.0));
    b.write(0x042, F31::from_f32(2.0 / W as f32).to_register());
    b.write(0x043, f24(H as f32 / 2.0));
    b.write(0x044, F31::from_f32(2.0 / H as f32).to_register());
    b.write(0x068, 0);
    b.write(0x04D, f24(-1.0));
    b.write(0x04E, f24(0.0));
    b.write(0x06D, 1);
    b.write(0x040, 0);
    // Colour buffer: RGBA8 at COLOR_ADDR, 64x64; depth buffer unused.
    b.write(0x117, 0x0000_0002); // COLORBUFFER_FORMAT: RGBA8, 4 bytes per pixel
    b.write(0x11D, COLOR_ADDR >> 3);
    b.write(0x11E, W | ((H - 1) << 12) | (1 << 24));
    b.write(0x06E, W | ((H - 1) << 12) | (1 << 24));
    b.write(0x112, 0xF);
    b.write(0x113, 0xF);
    b.write(0x114, 0);
    b.write(0x115, 0);
    b.write(0x107, 0xF00); // colour writes on, depth test off
    b.write(0x100, 0xE40100); // blending mode
    b.write(0x101, 0x0101_0000); // add, src ONE, dst ZERO
    // TEV stage 0: primary colour, replace; stages 1-5: previous, replace.
    b.write(0x0C0, 0);
    b.write(0x0C1, 0);
    b.write(0x0C2, 0);
    for stage in [0x0C8u16, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
        b.write(stage, 0x00F0_00F0); // source "previous" (15) for rgb and alpha
        b.write(stage + 1, 0);
        b.write(stage + 2, 0);
    }
    b.write(0x0E0, 0);
}

pub fn vertex_bytes(verts: &[([f32; 4], [f32; 4])]) -> Vec<u8> {
    let mut out = Vec::new();
    for (p, c) in verts {
        for v in p.iter().chain(c) {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}
