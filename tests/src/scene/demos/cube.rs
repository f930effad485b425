//! `cube.ctf`: six frames of a lit, textured cube turning in front of a gradient sky on the top
//! screen, and a small 2D user interface on the bottom screen.
//!
//! Top screen (240 × 400 RGBA8 + D24S8 render target): a full-screen gradient quad (UI shader,
//! orthographic projection, triangle strip, no depth test), then the cube: 24 vertices (float
//! position, texcoord, normal), 36 u16 indices drawn as an indexed triangle list, per-vertex
//! lighting in the vertex shader (`lit.v.pica`), a 64 × 64 RGB565 crate texture with 4 mip
//! levels, TEV `texture0 × primary colour`, depth test GREATER with depth writes, back faces
//! culled, perspective projection rotated for the 3DS top screen.
//!
//! Bottom screen (240 × 320): UI shader (`ui.v.pica`) with 16-bit integer positions, float
//! texcoords and unsigned-byte colours; a gradient background, a translucent panel (alpha
//! blending), a title bar, three buttons (triangle strips; the highlighted one changes every
//! frame), an RGBA4 icon with transparent corners (textured, blended), a slider track and a round
//! knob drawn as a triangle fan whose position moves each frame.

use gpu_core::lcd::Screen;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::TevSource;
use pica_cmd::regs::texturing::{TextureFilter, TextureFormat, WrapMode};

use super::super::effect::{tev_modulate, tev_replace};
use super::super::math::{self, Mat4};
use super::super::texture::Image;
use super::super::{
    AttribLayout, BufferLayout, Effect, Sampler, Scene, SceneError, ShaderBinary, ShaderProgram,
    Unit,
};
use super::{TOP_ASPECT, VertexBytes, crate_image, cube_mesh};

/// Frames in the trace.
const FRAMES: u32 = 6;

const LIT_SRC: &str = include_str!("lit.v.pica");
pub(super) const UI_SRC: &str = include_str!("ui.v.pica");

/// Bytes per UI vertex: i16 x, y; f32 u, v; u8 r, g, b, a.
pub(super) const UI_STRIDE: u32 = 16;

/// Appends one UI vertex.
pub(super) fn ui_vertex(v: &mut VertexBytes, x: i16, y: i16, uv: [f32; 2], color: [u8; 4]) {
    v.i16s(&[x, y]).f32s(&uv).u8s(&color);
}

/// Appends a rectangle as a 4-vertex triangle strip (top-left, top-right, bottom-left,
/// bottom-right; y grows downwards) with a vertical colour gradient and the full texture
/// (v = 1 at the top edge, since texture row 0 is sampled at v = 1).
pub(super) fn ui_rect(
    v: &mut VertexBytes,
    (x0, y0, x1, y1): (i16, i16, i16, i16),
    top: [u8; 4],
    bottom: [u8; 4],
) {
    ui_vertex(v, x0, y0, [0.0, 1.0], top);
    ui_vertex(v, x1, y0, [1.0, 1.0], top);
    ui_vertex(v, x0, y1, [0.0, 0.0], bottom);
    ui_vertex(v, x1, y1, [1.0, 0.0], bottom);
}

/// The UI attribute layout: v0 = 2 × i16 position, v1 = 2 × f32 texcoord, v2 = 4 × u8 colour.
pub(super) fn ui_attributes() -> AttribLayout {
    AttribLayout::new()
        .loader(0, AttribType::Short, 2)
        .loader(1, AttribType::Float, 2)
        .loader(2, AttribType::UnsignedByte, 4)
}

/// A round icon: a blue disc with a white "play" triangle, transparent outside the disc.
fn icon_image(size: u32) -> Image {
    let s = size as f32;
    Image::from_fn(size, size, |x, y| {
        let (fx, fy) = ((x as f32 + 0.5) / s - 0.5, (y as f32 + 0.5) / s - 0.5);
        let r = (fx * fx + fy * fy).sqrt();
        if r > 0.48 {
            return [0, 0, 0, 0];
        }
        let in_triangle = fx > -0.15 && fx < 0.22 && fy.abs() < (0.22 - fx) * 0.75;
        if in_triangle {
            [255, 255, 255, 255]
        } else if r > 0.42 {
            [230, 240, 255, 255]
        } else {
            [40, 110, 220, 255]
        }
    })
}

/// Builds the bottom-screen UI vertices for `frame`; returns the bytes and the first vertex and
/// vertex count of every draw.
fn ui_vertices(frame: u32) -> (Vec<u8>, Vec<(PrimitiveTopology, u32, u32)>) {
    let mut v = VertexBytes::default();
    let mut draws = Vec::new();
    let mut n = 0u32;
    let mut rect = |v: &mut VertexBytes, r, top, bottom| {
        ui_rect(v, r, top, bottom);
        draws.push((PrimitiveTopology::TriangleStrip, n, 4));
        n += 4;
    };
    // Background, panel, title bar.
    rect(
        &mut v,
        (0, 0, 320, 240),
        [24, 32, 72, 255],
        [72, 24, 88, 255],
    );
    rect(
        &mut v,
        (16, 16, 304, 224),
        [255, 255, 255, 48],
        [255, 255, 255, 24],
    );
    rect(
        &mut v,
        (16, 16, 304, 48),
        [60, 150, 240, 255],
        [30, 90, 200, 255],
    );
    // Buttons; the highlighted one cycles.
    for i in 0..3u32 {
        // ok: small constants.
        let y0 = (64 + 52 * i) as i16;
        let (top, bottom) = if i == frame % 3 {
            ([255, 210, 90, 255], [240, 150, 40, 255])
        } else {
            ([200, 200, 215, 255], [140, 140, 160, 255])
        };
        rect(&mut v, (32, y0, 176, y0 + 40), top, bottom);
    }
    // Icon (textured) and slider track.
    rect(&mut v, (200, 60, 288, 148), [255; 4], [255; 4]);
    rect(
        &mut v,
        (200, 184, 288, 192),
        [90, 90, 110, 255],
        [60, 60, 80, 255],
    );
    // Knob: a fan of 16 segments around a centre moving along the track.
    let cx = 200.0 + 88.0 * frame as f32 / (FRAMES - 1) as f32;
    let cy = 188.0f32;
    let first = n;
    // ok: screen coordinates well inside i16.
    ui_vertex(
        &mut v,
        cx as i16,
        cy as i16,
        [0.5, 0.5],
        [255, 255, 255, 255],
    );
    for k in 0..=16 {
        let a = k as f32 / 16.0 * std::f32::consts::TAU;
        let (x, y) = (cx + 12.0 * a.cos(), cy + 12.0 * a.sin());
        ui_vertex(
            &mut v,
            x.round() as i16,
            y.round() as i16,
            [0.5, 0.5],
            [250, 120, 60, 255],
        );
    }
    draws.push((PrimitiveTopology::TriangleFan, first, 18));
    (v.0, draws)
}

/// Builds `cube.ctf`.
pub fn build() -> Result<Vec<u8>, SceneError> {
    build_frames(FRAMES)
}

/// The cube scene for `frames` frames: the six frames of `cube.ctf` over and over (frame `k`
/// shows frame `k % 6`), for long-capture measurements (`build_frames(6)` is `cube.ctf`).
pub fn build_frames(frames: u32) -> Result<Vec<u8>, SceneError> {
    let mut scene = Scene::new()?;
    let top = scene.top_target()?;
    let bottom = scene.bottom_target()?;

    let lit_bin = ShaderBinary::assemble(&[("lit.v.pica", LIT_SRC)])?;
    let lit = ShaderProgram::new(&lit_bin, 0)?;
    let ui_bin = ShaderBinary::assemble(&[("ui.v.pica", UI_SRC)])?;
    let ui = ShaderProgram::new(&ui_bin, 0)?;
    let uniform = |p: &ShaderProgram, name: &str| {
        p.vs.float_uniform(name)
            .ok_or_else(|| SceneError::Assembly(format!("no uniform {name}")))
    };
    let (u_proj, u_mv) = (uniform(&lit, "projection")?, uniform(&lit, "modelView")?);
    let u_light = [
        uniform(&lit, "lightDir")?,
        uniform(&lit, "halfVec")?,
        uniform(&lit, "lightColor")?,
        uniform(&lit, "ambient")?,
        uniform(&lit, "specular")?,
    ];
    let (ui_proj, ui_depth) = (uniform(&ui, "projection")?, uniform(&ui, "depth")?);

    // Cube geometry and texture.
    let (verts, indices) = cube_mesh();
    let cube_vbo = scene.vertex_buffer_f32(&verts)?;
    let cube_ibo = scene.index_buffer_u16(&indices)?;
    let cube_attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 3)
        .loader(1, AttribType::Float, 2)
        .loader(2, AttribType::Float, 3);
    let cube_buffers = BufferLayout::new().buffer(cube_vbo, 32, &[0, 1, 2]);
    let crate_tex = scene.texture(
        &crate_image(64),
        TextureFormat::Rgb565,
        4,
        Sampler {
            mip: TextureFilter::Linear,
            ..Sampler::linear(WrapMode::ClampToEdge)
        },
    )?;

    // Top-screen sky: a full-screen gradient in UI vertices.
    let mut sky = VertexBytes::default();
    ui_rect(
        &mut sky,
        (0, 0, 400, 240),
        [90, 150, 230, 255],
        [200, 225, 250, 255],
    );
    let sky_vbo = scene.vertex_buffer(&sky.0)?;

    // Bottom-screen UI: one buffer rewritten every frame.
    let (ui_bytes, _) = ui_vertices(0);
    let ui_vbo = scene.vertex_buffer(&ui_bytes)?;
    let icon = scene.texture(
        &icon_image(64),
        TextureFormat::Rgba4,
        1,
        Sampler::linear(WrapMode::ClampToEdge),
    )?;

    let projection = math::perspective_tilt(55f32.to_radians(), TOP_ASPECT, 0.1, 20.0);
    let top_ortho = math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0);
    let bottom_ortho = math::ortho_tilt(0.0, 320.0, 240.0, 0.0, 0.0, 1.0);
    let light_dir = math::normalize3([-0.4, 0.6, 0.7]);
    let half = math::normalize3([light_dir[0], light_dir[1], light_dir[2] + 1.0]);

    for k in 0..frames {
        let frame = k % FRAMES;
        let (ui_bytes, ui_draws) = ui_vertices(frame);
        scene.write_buffer(&ui_vbo, &ui_bytes)?;

        scene.clear(&top, [0, 0, 0, 255], 0);
        scene.clear(&bottom, [0, 0, 0, 255], 0);
        let mut cmd = scene.command_list();

        // --- top screen ---
        cmd.set_render_target(&top);
        cmd.bind_program(&ui)
            .set_attributes(&ui_attributes())
            .set_buffers(&BufferLayout::new().buffer(sky_vbo, UI_STRIDE, &[0, 1, 2]))
            .uniform_mat4(Unit::Vertex, ui_proj, &top_ortho)
            .uniform_vec4s(Unit::Vertex, ui_depth, &[[-0.9, 0.0, 0.0, 0.0]])
            .set_effect(&Effect::ui())
            .bind_textures([None, None, None])
            .set_tev(0, &tev_replace(TevSource::PrimaryColor))
            .draw_arrays(PrimitiveTopology::TriangleStrip, 0, 4);

        let angle = 0.5 + 0.3 * frame as f32;
        let model_view: Mat4 = math::mul(
            &math::translate(0.0, 0.0, -2.6),
            &math::mul(
                &math::rotate_x(0.45 + 0.15 * frame as f32),
                &math::rotate_y(angle),
            ),
        );
        cmd.bind_program(&lit)
            .set_attributes(&cube_attrs)
            .set_buffers(&cube_buffers)
            .uniform_mat4(Unit::Vertex, u_proj, &projection)
            .uniform_mat4(Unit::Vertex, u_mv, &model_view)
            .uniform_vec4s(
                Unit::Vertex,
                u_light[0],
                &[[light_dir[0], light_dir[1], light_dir[2], 0.0]],
            )
            .uniform_vec4s(
                Unit::Vertex,
                u_light[1],
                &[[half[0], half[1], half[2], 0.0]],
            )
            .uniform_vec4s(Unit::Vertex, u_light[2], &[[0.85, 0.8, 0.7, 1.0]])
            .uniform_vec4s(Unit::Vertex, u_light[3], &[[0.3, 0.32, 0.4, 1.0]])
            .uniform_vec4s(Unit::Vertex, u_light[4], &[[0.5, 0.5, 0.45, 0.0]])
            .set_effect(&Effect::default())
            .bind_textures([Some(&crate_tex), None, None])
            .set_tev(
                0,
                &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
            )
            .draw_elements(PrimitiveTopology::Triangles, &cube_ibo, 36);

        // --- bottom screen ---
        cmd.set_render_target(&bottom);
        cmd.bind_program(&ui)
            .set_attributes(&ui_attributes())
            .set_buffers(&BufferLayout::new().buffer(ui_vbo, UI_STRIDE, &[0, 1, 2]))
            .uniform_mat4(Unit::Vertex, ui_proj, &bottom_ortho)
            .uniform_vec4s(Unit::Vertex, ui_depth, &[[-0.5, 0.0, 0.0, 0.0]])
            .set_effect(&Effect::ui());
        for (i, &(topology, first, count)) in ui_draws.iter().enumerate() {
            // Draw 6 is the icon: textured; everything else uses the vertex colour.
            if i == 6 {
                cmd.bind_textures([Some(&icon), None, None]).set_tev(
                    0,
                    &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
                );
            } else if i == 0 || i == 7 {
                cmd.bind_textures([None, None, None])
                    .set_tev(0, &tev_replace(TevSource::PrimaryColor));
            }
            cmd.draw_arrays(topology, first, count);
        }
        scene.submit(cmd)?;
        scene.present(&top, Screen::Top);
        scene.present(&bottom, Screen::Bottom);
        scene.end_frame();
    }
    scene.finish()
}
