//! `fog_blend.ctf`: four frames of a camera gliding over a checkered ground past three rows of
//! translucent coloured panels that recede into fog.
//!
//! Program `scene.v.pica` (position and texcoord from a vertex buffer, colour from fixed
//! attribute 2, set per draw). The ground is one 24 × 40 quad with a 64 × 64 RGB565 checker
//! texture (4 mip levels, linear filtering, REPEAT wrap, texture coordinates up to 12 × 20),
//! depth-tested and written. The 24 panels are drawn back to front from a shared unit-quad
//! buffer, each with its own model-view matrix and colour (fixed attribute), an IA8 "glass"
//! texture (opaque frame, see-through middle) modulated by the colour, alpha blending
//! `src·a + dst·(1 − a)`, depth test GREATER without depth writes and no culling.
//!
//! Fog: mode 5 with the sky colour, and a 128-entry fog LUT uploaded through FOG_LUT_DATA giving
//! `exp(−0.07 · distance)` for the eye-space distance of each depth value (the projection's
//! near/far planes 0.1/40); the clear colour is the fog colour.

use gpu_core::lcd::Screen;
use pica_cmd::regs::framebuffer::CompareFunc;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::rasterizer::CullMode;
use pica_cmd::regs::tev::{FogMode, TevSource};
use pica_cmd::regs::texturing::{TextureFilter, TextureFormat, WrapMode};

use super::super::effect::{depth_test, tev_modulate};
use super::super::math;
use super::super::texture::Image;
use super::super::{
    AttribLayout, BufferLayout, Effect, FogLut, Sampler, Scene, SceneError, ShaderBinary,
    ShaderProgram, Unit,
};
use super::geoshader::SCENE_VS;
use super::{TOP_ASPECT, checker_image};

/// Frames in the trace.
const FRAMES: u32 = 4;
/// Near and far planes of the projection (the fog LUT is computed for them).
const NEAR: f32 = 0.1;
const FAR: f32 = 40.0;
/// Sky and fog colour.
const SKY: [u8; 3] = [196, 208, 224];

/// A frame of opaque white around a faintly white, mostly transparent middle (IA8: intensity
/// from red, alpha).
fn glass_image(size: u32) -> Image {
    Image::from_fn(size, size, |x, y| {
        let border = x < 3 || y < 3 || x >= size - 3 || y >= size - 3;
        let streak = (x + 2 * y) % 23 < 2;
        if border {
            [255, 255, 255, 255]
        } else if streak {
            [255, 255, 255, 170]
        } else {
            [255, 255, 255, 110]
        }
    })
}

/// Builds `fog_blend.ctf`.
pub fn build() -> Result<Vec<u8>, SceneError> {
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

    // Position (3 floats) and texcoord (2 floats) from the buffer; colour fixed.
    let attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 3)
        .loader(1, AttribType::Float, 2)
        .fixed(2);
    // Ground quad (strip) then the unit panel quad (strip), 20 bytes per vertex.
    #[rustfmt::skip]
    let quads: [f32; 40] = [
        -12.0, -1.0,   2.0,   0.0,  0.0,
         12.0, -1.0,   2.0,  12.0,  0.0,
        -12.0, -1.0, -38.0,   0.0, 20.0,
         12.0, -1.0, -38.0,  12.0, 20.0,
         -0.5,  0.0,   0.0,   0.0,  0.0,
          0.5,  0.0,   0.0,   1.0,  0.0,
         -0.5,  1.0,   0.0,   0.0,  1.0,
          0.5,  1.0,   0.0,   1.0,  1.0,
    ];
    let vbo = scene.vertex_buffer_f32(&quads)?;
    let buffers = BufferLayout::new().buffer(vbo, 20, &[0, 1]);

    let ground_tex = scene.texture(
        &checker_image(64, 2, [70, 150, 80, 255], [150, 200, 110, 255]),
        TextureFormat::Rgb565,
        4,
        Sampler {
            mip: TextureFilter::Linear,
            ..Sampler::linear(WrapMode::Repeat)
        },
    )?;
    let glass = scene.texture(
        &glass_image(32),
        TextureFormat::Ia8,
        1,
        Sampler::linear(WrapMode::ClampToEdge),
    )?;
    let fog = FogLut::exponential(0.07, NEAR, FAR);
    let projection = math::perspective_tilt(60f32.to_radians(), TOP_ASPECT, NEAR, FAR);
    let ground_effect = Effect::default();
    let panel_effect = Effect {
        cull: CullMode::None,
        depth: depth_test(true, CompareFunc::Greater, false),
        ..Effect::default()
    };
    let columns: [(f32, [f32; 4]); 3] = [
        (-2.6, [0.95, 0.25, 0.3, 0.55]),
        (0.0, [0.3, 0.9, 0.45, 0.5]),
        (2.6, [0.3, 0.45, 1.0, 0.55]),
    ];

    for frame in 0..FRAMES {
        let [r, g, b] = SKY;
        scene.clear(&top, [r, g, b, 255], 0);
        let mut cmd = scene.command_list();
        cmd.set_render_target(&top);
        let camera = math::mul(
            &math::rotate_y(0.06 * (frame as f32 - 1.5)),
            &math::translate(0.0, -0.15, 0.5 * frame as f32),
        );
        cmd.bind_program(&prog)
            .set_attributes(&attrs)
            .set_buffers(&buffers)
            .uniform_mat4(Unit::Vertex, u_proj, &projection)
            .fog(FogMode::Fog, SKY, Some(&fog));

        // Ground.
        cmd.uniform_mat4(Unit::Vertex, u_mv, &camera)
            .fixed_attribute(2, [1.0, 1.0, 1.0, 1.0])
            .set_effect(&ground_effect)
            .bind_textures([Some(&ground_tex), None, None])
            .set_tev(
                0,
                &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
            )
            .draw_arrays(PrimitiveTopology::TriangleStrip, 0, 4);

        // Panels, far rows first.
        cmd.set_effect(&panel_effect)
            .bind_textures([Some(&glass), None, None]);
        for row in (0..8u32).rev() {
            let z = -3.0 - 3.0 * row as f32;
            for &(x, color) in &columns {
                let model = math::mul(&math::translate(x, -1.0, z), &math::scale(1.8, 1.7, 1.0));
                cmd.uniform_mat4(Unit::Vertex, u_mv, &math::mul(&camera, &model))
                    .fixed_attribute(2, color)
                    .draw_arrays(PrimitiveTopology::TriangleStrip, 4, 4);
            }
        }
        scene.submit(cmd)?;
        scene.present(&top, Screen::Top);
        scene.end_frame();
    }
    scene.finish()
}
