//! `geoshader.ctf`: four frames of a turning spiral galaxy whose 240 stars are points expanded to
//! textured squares by a geometry shader.
//!
//! Each frame: a background gradient drawn in immediate mode (vertex shader only,
//! `scene.v.pica`: the GS unit runs in shared mode and receives the VS upload), then the stars
//! with a VS + GS program (`particle.v.pica` + `sprite.g.pica`, one DVLB with two DVLEs): the VS
//! moves each point to eye space and passes its half size in w; the GS, in point mode with an
//! input stride of 2 registers, emits two counter-clockwise triangles per point with texture
//! coordinates, projected by a GS float uniform. The draw is `DRAWARRAYS` with topology
//! "geometry primitive", additive blending, no depth test, back faces culled (so a wrong GS
//! winding would make the stars disappear). The sprite texture is a 32 × 32 A8 soft dot; TEV
//! stage 0 takes RGB from the vertex colour and multiplies the alphas.
//!
//! Switching between the two programs every frame makes the scene re-upload code to both shader
//! units and toggle VSH_COM_MODE, as citro3d does.

use gpu_core::lcd::Screen;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::{TevOp, TevSource};
use pica_cmd::regs::texturing::{TextureFormat, WrapMode};

use super::super::effect::{ADDITIVE_BLEND, depth_test, tev_replace};
use super::super::math;
use super::super::{
    AttribLayout, BufferLayout, Effect, Sampler, Scene, SceneError, ShaderBinary, ShaderProgram,
    Unit,
};
use super::{TOP_ASPECT, VertexBytes, dot_image};
use pica_cmd::regs::framebuffer::CompareFunc;
use pica_cmd::regs::rasterizer::CullMode;

/// Frames in the trace.
const FRAMES: u32 = 4;
/// Stars in the galaxy.
const STARS: u32 = 240;

const PARTICLE_VS: &str = include_str!("particle.v.pica");
const SPRITE_GS: &str = include_str!("sprite.g.pica");
pub(super) const SCENE_VS: &str = include_str!("scene.v.pica");

/// A tiny deterministic generator (64-bit LCG, Knuth's MMIX constants) so the star field is the
/// same on every run.
pub(super) struct Lcg(pub u64);

impl Lcg {
    /// Next value in [0, 1).
    pub fn next_f32(&mut self) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        // ok: the top 24 bits fit exactly in an f32 mantissa.
        ((self.0 >> 40) as f32) / (1u64 << 24) as f32
    }
}

/// Star vertices: f32 x, y, z, half size; u8 r, g, b, a (20 bytes each).
fn stars() -> Vec<u8> {
    let mut rng = Lcg(0x5EED_0003_D5CA_FE01);
    let mut v = VertexBytes::default();
    for i in 0..STARS {
        let t = i as f32 / STARS as f32;
        let bulge = i < STARS / 6;
        let (x, y, z, size, color) = if bulge {
            let r = 0.25 * rng.next_f32().sqrt();
            let a = rng.next_f32() * std::f32::consts::TAU;
            let y = (rng.next_f32() - 0.5) * 0.15;
            (
                r * a.cos(),
                y,
                r * a.sin(),
                0.05 + 0.04 * rng.next_f32(),
                [255, 236, 190, 230],
            )
        } else {
            let arm = if i % 2 == 0 {
                0.0
            } else {
                std::f32::consts::PI
            };
            let r = 0.25 + 1.1 * t;
            let a = arm + 3.2 * t + (rng.next_f32() - 0.5) * 0.5;
            let y = (rng.next_f32() - 0.5) * 0.06;
            // ok: t in [0, 1].
            let c = [
                (120.0 + 135.0 * t) as u8,
                (150.0 - 60.0 * t) as u8,
                (255.0 - 40.0 * t) as u8,
                200,
            ];
            (
                r * a.cos(),
                y,
                r * a.sin(),
                0.025 + 0.035 * rng.next_f32(),
                c,
            )
        };
        v.f32s(&[x, y, z, size]).u8s(&color);
    }
    v.0
}

/// Builds `geoshader.ctf`.
pub fn build() -> Result<Vec<u8>, SceneError> {
    let mut scene = Scene::new()?;
    let top = scene.top_target()?;

    let bg_bin = ShaderBinary::assemble(&[("scene.v.pica", SCENE_VS)])?;
    let bg = ShaderProgram::new(&bg_bin, 0)?;
    let sprite_bin = ShaderBinary::assemble(&[
        ("particle.v.pica", PARTICLE_VS),
        ("sprite.g.pica", SPRITE_GS),
    ])?;
    // Point mode, 2 input registers (eye position + size, colour) per GS invocation.
    let sprites = ShaderProgram::new(&sprite_bin, 0)?.with_geometry(&sprite_bin, 1, 2)?;
    let missing = |name: &str| SceneError::Assembly(format!("no uniform {name}"));
    let bg_proj = bg
        .vs
        .float_uniform("projection")
        .ok_or_else(|| missing("projection"))?;
    let bg_mv = bg
        .vs
        .float_uniform("modelView")
        .ok_or_else(|| missing("modelView"))?;
    let vs_mv = sprites
        .vs
        .float_uniform("modelView")
        .ok_or_else(|| missing("modelView"))?;
    let gs_proj = sprites
        .gs
        .as_ref()
        .and_then(|g| g.entry.float_uniform("projection"))
        .ok_or_else(|| missing("projection"))?;

    let star_vbo = scene.vertex_buffer(&stars())?;
    let star_attrs =
        AttribLayout::new()
            .loader(0, AttribType::Float, 4)
            .loader(1, AttribType::UnsignedByte, 4);
    let star_buffers = BufferLayout::new().buffer(star_vbo, 20, &[0, 1]);
    let dot = scene.texture(
        &dot_image(32),
        TextureFormat::A8,
        1,
        Sampler::linear(WrapMode::ClampToEdge),
    )?;
    // RGB = vertex colour; alpha = texture alpha × vertex alpha.
    let mut star_tev = tev_replace(TevSource::PrimaryColor);
    star_tev.sources.alpha = [
        TevSource::Texture0,
        TevSource::PrimaryColor,
        TevSource::PrimaryColor,
    ];
    star_tev.combiner.alpha_op = TevOp::Modulate;

    // Background: the VS gets pos, texcoord, colour as immediate-mode vec4s.
    let bg_attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 3)
        .loader(1, AttribType::Float, 2)
        .loader(2, AttribType::Float, 4);
    let bg_ortho = math::ortho_tilt(-1.0, 1.0, -1.0, 1.0, 0.0, 1.0);
    let top_color = [0.02, 0.03, 0.12, 1.0];
    let bottom_color = [0.10, 0.02, 0.14, 1.0];
    let corners: [[[f32; 4]; 3]; 4] = [
        [[-1.0, 1.0, -0.9, 1.0], [0.0; 4], top_color],
        [[-1.0, -1.0, -0.9, 1.0], [0.0; 4], bottom_color],
        [[1.0, 1.0, -0.9, 1.0], [0.0; 4], top_color],
        [[1.0, -1.0, -0.9, 1.0], [0.0; 4], bottom_color],
    ];
    let bg_vertices: Vec<&[[f32; 4]]> = corners.iter().map(|c| &c[..]).collect();

    let projection = math::perspective_tilt(50f32.to_radians(), TOP_ASPECT, 0.1, 20.0);
    let sprite_effect = Effect {
        blend: ADDITIVE_BLEND,
        depth: depth_test(false, CompareFunc::Always, false),
        ..Effect::default()
    };
    let bg_effect = Effect {
        cull: CullMode::None,
        ..Effect::ui()
    };

    for frame in 0..FRAMES {
        scene.clear(&top, [0, 0, 0, 255], 0);
        let mut cmd = scene.command_list();
        cmd.set_render_target(&top);

        cmd.bind_program(&bg)
            .set_attributes(&bg_attrs)
            .uniform_mat4(Unit::Vertex, bg_proj, &bg_ortho)
            .uniform_mat4(Unit::Vertex, bg_mv, &math::IDENTITY)
            .set_effect(&bg_effect)
            .bind_textures([None, None, None])
            .set_tev(0, &tev_replace(TevSource::PrimaryColor))
            .draw_immediate(PrimitiveTopology::TriangleStrip, &bg_vertices);

        let model_view = math::mul(
            &math::translate(0.0, -0.05, -1.9),
            &math::mul(&math::rotate_x(0.75), &math::rotate_y(0.25 * frame as f32)),
        );
        cmd.bind_program(&sprites)
            .set_attributes(&star_attrs)
            .set_buffers(&star_buffers)
            .uniform_mat4(Unit::Vertex, vs_mv, &model_view)
            .uniform_mat4(Unit::Geometry, gs_proj, &projection)
            .set_effect(&sprite_effect)
            .bind_textures([Some(&dot), None, None])
            .set_tev(0, &star_tev)
            .draw_arrays(PrimitiveTopology::GeometryPrimitive, 0, STARS);

        scene.submit(cmd)?;
        scene.present(&top, Screen::Top);
        scene.end_frame();
    }
    scene.finish()
}
