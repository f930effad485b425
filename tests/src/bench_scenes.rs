//! Scene-builder traces shaped like real workloads, for replay benchmarks and the thread
//! determinism test (issue 14). Not bundled: `gen_bench_scenes` writes them as `.ctf` files.
//!
//! * `sprites`: a citro2d-like frame — 1,400 alpha-blended 21 × 21 textured quads (2,800
//!   triangles, ~600k fragments) per frame in two indexed draws, the second also adding the
//!   procedural texture (texture unit 3, registers at their reset values) through a second
//!   combiner stage. Three frames, sprites moving between frames.
//! * The lit textured model (`cube`) and the mipmapped, fogged scene (`fog_blend`) are the
//!   bundled demos of the same shape (see [`crate::scene::demos`]).
//!
//! Inputs: none (every position comes from a fixed linear congruential sequence). Output:
//! `.ctf` bytes, the same on every run.

use gpu_core::lcd::Screen;
use pica_cmd::regs::id;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::{TevOp, TevSource};
use pica_cmd::regs::texturing::{TextureFormat, WrapMode};

use crate::scene::demos::{DEMOS, demos_dir};
use crate::scene::effect::{tev_modulate, tev_passthrough, tev_stage};
use crate::scene::math;
use crate::scene::{
    AttribLayout, BufferLayout, Effect, Image, Sampler, Scene, SceneError, ShaderBinary,
    ShaderProgram, Unit,
};

/// The demo vertex shader (position, texcoord from the buffer; colour from fixed attribute 2).
const SCENE_VS: &str = include_str!("scene/demos/scene.v.pica");

/// One bench scene.
#[derive(Clone, Copy, Debug)]
pub struct BenchScene {
    /// File stem of the generated trace.
    pub name: &'static str,
    /// Builds the trace bytes.
    pub build: fn() -> Result<Vec<u8>, SceneError>,
}

/// The generated bench scenes.
pub const BENCH_SCENES: [BenchScene; 1] = [BenchScene {
    name: "sprites",
    build: sprites,
}];

/// Every trace the whole-pipeline tests run: the bundled demos (read from `assets/demos/`) and
/// the generated bench scenes, as (name, `.ctf` bytes), demos first in [`DEMOS`] order.
///
/// Panics with the file or scene name if a demo cannot be read or a scene cannot be built (a
/// broken checkout, not a condition a test should pass through).
pub fn all_traces() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for d in &DEMOS {
        let path = demos_dir().join(format!("{}.ctf", d.name));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push((d.name.to_string(), bytes));
    }
    for s in &BENCH_SCENES {
        let bytes = (s.build)().unwrap_or_else(|e| panic!("{}: {e}", s.name));
        out.push((s.name.to_string(), bytes));
    }
    out
}

/// Quads per frame (two draws of half each).
const SPRITES: u32 = 1400;
/// Sprite edge in pixels.
const SPRITE_SIZE: f32 = 21.0;
const FRAMES: u32 = 3;

/// A round, soft-edged sprite with a coloured rim (RGBA8).
fn sprite_image(size: u32) -> Image {
    let c = (size as f32 - 1.0) / 2.0;
    Image::from_fn(size, size, |x, y| {
        let d = ((x as f32 - c).powi(2) + (y as f32 - c).powi(2)).sqrt() / c;
        let a = ((1.0 - d) * 400.0).clamp(0.0, 255.0) as u8;
        let r = (120.0 + 135.0 * d.min(1.0)) as u8;
        [r, (255.0 * (1.0 - d * 0.5).max(0.0)) as u8, 200, a]
    })
}

/// Builds the sprite scene.
pub fn sprites() -> Result<Vec<u8>, SceneError> {
    let mut scene = Scene::new()?;
    let top = scene.top_target()?;
    let bin = ShaderBinary::assemble(&[("scene.v.pica", SCENE_VS)])?;
    let prog = ShaderProgram::new(&bin, 0)?;
    let missing = |name: &str| SceneError::Assembly(format!("no uniform {name}"));
    let u_proj = prog
        .vs
        .float_uniform("projection")
        .ok_or_else(|| missing("projection"))?;
    let u_mv = prog
        .vs
        .float_uniform("modelView")
        .ok_or_else(|| missing("modelView"))?;
    let attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 3)
        .loader(1, AttribType::Float, 2)
        .fixed(2);
    let tex = scene.texture(
        &sprite_image(32),
        TextureFormat::Rgba8,
        1,
        Sampler::linear(WrapMode::ClampToEdge),
    )?;
    let projection = math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0);
    let identity = math::scale(1.0, 1.0, 1.0);
    let mut indices = Vec::with_capacity(SPRITES as usize / 2 * 6);
    for q in 0..(SPRITES / 2) as u16 {
        let b = q * 4;
        indices.extend_from_slice(&[b, b + 1, b + 2, b + 2, b + 1, b + 3]);
    }
    let ibo = scene.index_buffer_u16(&indices)?;
    let mut seed = 0x1234_5678u32;
    let mut next = move || {
        seed = seed.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (seed >> 8) as f32 / (1u32 << 24) as f32
    };
    let mut base: Vec<(f32, f32, f32, f32)> = (0..SPRITES)
        .map(|_| {
            (
                next() * 390.0,
                next() * 230.0,
                next() * 4.0 - 2.0,
                next() * 4.0 - 2.0,
            )
        })
        .collect();
    for frame in 0..FRAMES {
        scene.clear(&top, [16, 24, 48, 255], 0);
        let mut vertices = Vec::with_capacity(SPRITES as usize * 20);
        for (x, y, dx, dy) in &mut base {
            *x = (*x + *dx * frame as f32).rem_euclid(400.0 - SPRITE_SIZE);
            *y = (*y + *dy * frame as f32).rem_euclid(240.0 - SPRITE_SIZE);
            let (x1, y1) = (*x + SPRITE_SIZE, *y + SPRITE_SIZE);
            #[rustfmt::skip]
            vertices.extend_from_slice(&[
                *x, *y, -0.5, 0.0, 0.0,
                x1, *y, -0.5, 1.0, 0.0,
                *x, y1, -0.5, 0.0, 1.0,
                x1, y1, -0.5, 1.0, 1.0,
            ]);
        }
        let half = vertices.len() / 2;
        let first = scene.vertex_buffer_f32(&vertices[..half])?;
        let second = scene.vertex_buffer_f32(&vertices[half..])?;
        let mut cmd = scene.command_list();
        cmd.set_render_target(&top)
            .bind_program(&prog)
            .set_attributes(&attrs)
            .uniform_mat4(Unit::Vertex, u_proj, &projection)
            .uniform_mat4(Unit::Vertex, u_mv, &identity)
            .fixed_attribute(2, [1.0, 0.9, 0.8, 1.0])
            .set_effect(&Effect::ui())
            .bind_textures([Some(&tex), None, None])
            .set_tev(
                0,
                &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
            )
            .set_tev(1, &tev_passthrough())
            .set_buffers(&BufferLayout::new().buffer(first, 20, &[0, 1]))
            .draw_elements(PrimitiveTopology::Triangles, &ibo, indices.len() as u32);
        // Second half: plus the procedural texture (unit 3, bit 10 of TEXUNIT_CONFIG; the
        // byte mask rewrites bits 8-15, so bit 12 is kept set as `bind_textures` wrote it).
        cmd.write_masked(id::TEXUNIT_CONFIG, 0x2, (1 << 10) | (1 << 12))
            .set_tev(
                1,
                &tev_stage(
                    [
                        TevSource::Previous,
                        TevSource::Texture3,
                        TevSource::Previous,
                    ],
                    TevOp::Add,
                    [0xFF; 4],
                ),
            )
            .set_buffers(&BufferLayout::new().buffer(second, 20, &[0, 1]))
            .draw_elements(PrimitiveTopology::Triangles, &ibo, indices.len() as u32);
        scene.submit(cmd)?;
        scene.present(&top, Screen::Top);
        scene.end_frame();
    }
    scene.finish()
}
