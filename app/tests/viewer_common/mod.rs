//! Shared helpers of the viewer tests: a small synthetic CiTrace (2 frames × 3 draws, a
//! textured unit 0, a uniform upload, top-screen LCD registers), the bundled demos' paths,
//! scratch directories, and (in [`ui`]) harness-level set-up.
#![allow(dead_code)]

pub mod ui;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use gpu_core::memory::{FCRAM, VRAM};
use pica_cmd::citrace::{CiTraceBuilder, InitialState};
use pica_cmd::cmdlist::CmdListBuilder;
use shader_unit::float::{F24, F31, pack_f32x4};

pub const VS: &str = "
.out outpos position
.out outclr color
.alias inpos v0
.alias inclr v1
.fvec tint
.proc main
    mov outpos, inpos
    mul outclr, tint, inclr
    end
.end
";

pub const LIST_ADDR: u32 = FCRAM.base;
pub const VERTEX_ADDR: u32 = FCRAM.base + 0x1_0000;
pub const COLOR_ADDR: u32 = VRAM.base;
pub const TEX_ADDR: u32 = VRAM.base + 0x10_0000;
pub const W: u32 = 64;
pub const H: u32 = 64;
pub const FRAMES: u32 = 2;
pub const DRAWS_PER_FRAME: u32 = 3;
/// The tint uniform c0 uploaded before every draw.
pub const TINT: [f32; 4] = [1.0, 0.5, 1.0, 1.0];

pub fn f24(v: f32) -> u32 {
    F24::from_f32(v).to_bits()
}

/// Vertex k of draw d of frame f: position and colour.
pub fn vertex(f: u32, d: u32, k: u32) -> ([f32; 4], [f32; 4]) {
    let x0 = -1.0 + d as f32 * 0.6;
    let pos = match k {
        0 => [x0, -1.0, -0.5, 1.0],
        1 => [x0 + 0.5, -1.0, -0.5, 1.0],
        _ => [x0, 1.0, -0.5, 1.0],
    };
    let color = [0.25 * (d + 1) as f32, 0.5 * f as f32, 1.0, 1.0];
    (pos, color)
}

/// The command-list set-up of the synthetic trace: shader upload, attribute layout, render target,
/// texture unit 0, 3 vertices per draw.
pub fn setup(b: &mut CmdListBuilder) {
    let prog = shader_unit::asm::assemble_str(VS).expect("test shader assembles");
    b.write(0x2CB, 0);
    b.repeated(0x2CC, 0xF, &prog.program)
        .expect("program upload");
    b.write(0x2D5, 0);
    b.repeated(0x2D6, 0xF, &prog.opdescs)
        .expect("opdesc upload");
    b.write(0x2BF, 1);
    b.write(0x2BA, 0x7FFF_0000 | prog.entry_point);
    b.write(0x2B9, 0xA000_0001);
    b.write(0x242, 1);
    b.write(0x2BB, 0x10);
    b.write(0x2BC, 0);
    b.write(0x2BD, 0b11);
    b.write(0x04F, 2);
    b.write(0x050, 0x0302_0100);
    b.write(0x051, 0x0B0A_0908);
    b.write(0x24A, 1);
    b.write(0x251, 1);
    b.write(0x229, 0);
    b.write(0x244, 0);
    b.write(0x25E, 1);
    b.write(0x200, VERTEX_ADDR >> 3);
    b.write(0x201, 0xFF);
    b.write(0x202, 1 << 28);
    b.write(0x203, 0);
    b.write(0x204, 0x10);
    b.write(0x205, (32 << 16) | (2 << 28));
    b.write(0x228, 3);
    b.write(0x041, f24(W as f32 / 2.0));
    b.write(0x042, F31::from_f32(2.0 / W as f32).to_register());
    b.write(0x043, f24(H as f32 / 2.0));
    b.write(0x044, F31::from_f32(2.0 / H as f32).to_register());
    b.write(0x068, 0);
    b.write(0x04D, f24(-1.0));
    b.write(0x04E, f24(0.0));
    b.write(0x06D, 1);
    b.write(0x040, 0);
    b.write(0x117, 0x0000_0002);
    b.write(0x11D, COLOR_ADDR >> 3);
    b.write(0x11E, W | ((H - 1) << 12) | (1 << 24));
    b.write(0x06E, W | ((H - 1) << 12) | (1 << 24));
    b.write(0x112, 0xF);
    b.write(0x113, 0xF);
    b.write(0x114, 0);
    b.write(0x115, 0);
    b.write(0x107, 0xF00);
    b.write(0x100, 0xE40100);
    b.write(0x101, 0x0101_0000);
    b.write(0x0C0, 0);
    b.write(0x0C1, 0);
    b.write(0x0C2, 0);
    for stage in [0x0C8u16, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
        b.write(stage, 0x00F0_00F0);
        b.write(stage + 1, 0);
        b.write(stage + 2, 0);
    }
    b.write(0x0E0, 0);
    // Texture unit 0: an 8x8 RGBA8 texture (not sampled by the combiners, but configured).
    b.write(0x080, 1);
    b.write(0x082, 8 | (8 << 16));
    b.write(0x083, 0);
    b.write(0x085, TEX_ADDR >> 3);
    b.write(0x08E, 0);
}

/// The texture: texel k (memory order) = (R = 32·(k & 7), G = 255 − 4k, B = 0, A = 255).
pub fn texture_bytes() -> Vec<u8> {
    let mut out = Vec::new();
    for k in 0..64u32 {
        // RGBA8 texels are stored A, B, G, R.
        out.extend_from_slice(&[255, 0, (255 - 4 * k) as u8, (32 * (k & 7)) as u8]);
    }
    out
}

/// The synthetic trace.
pub fn make_trace() -> Vec<u8> {
    make_trace_with(vertex)
}

/// Vertex k of draw d of frame f of the clipping trace ([`make_clip_trace`]).
pub fn clip_vertex(f: u32, d: u32, k: u32) -> ([f32; 4], [f32; 4]) {
    let (_, color) = vertex(f, d, k);
    let pos = match (d, k) {
        // Crosses the near plane z = 0 half way up: the upper part is clipped away.
        (0, 0) => [-1.0, -1.0, -0.5, 1.0],
        (0, 1) => [1.0, -1.0, -0.5, 1.0],
        (0, _) => [-1.0, 1.0, 0.5, 1.0],
        // Entirely beyond the near plane (z = 0.5 > 0), covering the whole target.
        (1, 0) => [-1.0, -1.0, 0.5, 1.0],
        (1, 1) => [3.0, -1.0, 0.5, 1.0],
        (1, _) => [-1.0, 3.0, 0.5, 1.0],
        _ => return vertex(f, d, k),
    };
    (pos, color)
}

/// The synthetic trace with draws 0 and 1 of each frame replaced by the clipped triangles of
/// [`clip_vertex`] (window x = (cx + 1)·32, y = (cy + 1)·32): image pixel (3, 6) lies in draw
/// 0's clipped part and under draw 1 (clipped away); image pixel (3, 60) is drawn by draw 0.
pub fn make_clip_trace() -> Vec<u8> {
    make_trace_with(clip_vertex)
}

/// Vertex k of draw d of frame f: (position, colour).
pub type VertexFn = fn(u32, u32, u32) -> ([f32; 4], [f32; 4]);

/// The synthetic trace with vertex positions and colours from `vertex`.
pub fn make_trace_with(vertex: VertexFn) -> Vec<u8> {
    make_trace_frames(FRAMES, vertex)
}

/// The synthetic trace with `frames` frames (frames repeat the pattern of frames 0 and 1; the
/// builder stores identical command lists and vertex data once, so the file stays small while
/// a replay of it takes long: for tests of long worker passes).
pub fn make_long_trace(frames: u32) -> Vec<u8> {
    make_trace_frames(frames, |f, d, k| vertex(f % 2, d, k))
}

/// The synthetic trace with `frames` frames and vertices from `vertex`.
pub fn make_trace_frames(frames: u32, vertex: VertexFn) -> Vec<u8> {
    let mut init = InitialState::citra_sized();
    // Top screen: framebuffer A at the colour buffer, RGBA8, stride 240·4 bytes.
    let pdc = 0x1040_0400;
    assert!(init.set_gpu_register(pdc + 0x68, COLOR_ADDR));
    assert!(init.set_gpu_register(pdc + 0x6C, COLOR_ADDR));
    assert!(init.set_gpu_register(pdc + 0x70, 0));
    assert!(init.set_gpu_register(pdc + 0x78, 0));
    assert!(init.set_gpu_register(pdc + 0x90, 960));
    let mut tb = CiTraceBuilder::new(init);
    tb.memory_load(TEX_ADDR, &texture_bytes())
        .expect("texture load");
    for f in 0..frames {
        let mut verts = Vec::new();
        for d in 0..DRAWS_PER_FRAME {
            for k in 0..3 {
                let (p, c) = vertex(f, d, k);
                for v in p.iter().chain(&c) {
                    verts.extend_from_slice(&v.to_le_bytes());
                }
            }
        }
        let mut b = CmdListBuilder::new();
        setup(&mut b);
        for d in 0..DRAWS_PER_FRAME {
            // c0 = TINT (f32 mode).
            b.write(0x2C0, 0x8000_0000);
            for w in pack_f32x4(TINT) {
                b.write(0x2C1, w);
            }
            b.write(0x22A, d * 3);
            b.write(0x22E, 1);
        }
        b.finalize();
        tb.memory_load(VERTEX_ADDR, &verts).expect("vertex load");
        tb.submit_command_list(LIST_ADDR, &b.to_bytes())
            .expect("submit");
        tb.frame_marker();
    }
    tb.build().expect("trace builds")
}

/// A raw command list (one frame's list of the trace).
pub fn make_cmdlist() -> Vec<u8> {
    let mut b = CmdListBuilder::new();
    setup(&mut b);
    b.write(0x22E, 1);
    b.finalize();
    b.to_bytes()
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picaview-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// The bundled demo trace `assets/demos/{file}` (e.g. `"cube.ctf"`).
pub fn demo_path(file: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(file)
}

/// Writes `bytes` as `file` into a fresh temporary directory named after `test`; returns the
/// directory (remove it when done) and the file's path.
pub fn write_temp_trace(test: &str, file: &str, bytes: &[u8]) -> (PathBuf, PathBuf) {
    let dir = temp_dir(test);
    let path = dir.join(file);
    std::fs::write(&path, bytes).expect("write trace");
    (dir, path)
}

/// Writes the synthetic trace into `dir` and returns its path.
pub fn write_trace(dir: &std::path::Path) -> PathBuf {
    let p = dir.join("synthetic.ctf");
    std::fs::write(&p, make_trace()).expect("write trace");
    p
}

/// Polls `cond` until it holds (panics after 60 s).
pub fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let start = Instant::now();
    while !cond() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}
