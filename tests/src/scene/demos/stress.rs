//! `stress.ctf`: three frames of 312 small draws each (a 16 × 12 grid on the top screen, 12 × 10
//! on the bottom), cycling through eight kinds of draw so that nearly every draw changes state:
//!
//! | kind | program | draw | state |
//! |---|---|---|---|
//! | 0 | lit (binary A, entry 0) | indexed u16 triangle list (cube) | RGB565 mipmapped texture, depth GREATER |
//! | 1 | flat (binary A, entry 1) | triangle strip (quad) | fixed-attribute colour, alpha blending |
//! | 2 | flat | triangle fan (hexagon) | RGBA8 checker, REPEAT, nearest, TEV `texture × colour` |
//! | 3 | flat | indexed u8 triangles (diamond) | two textures, two TEV stages, const colour, ADD_SIGNED |
//! | 4 | flat | immediate-mode triangle | no texture, depth GEQUAL, culling off |
//! | 5 | lit | indexed u16 (cube) | logic op XOR instead of blending |
//! | 6 | flat | strip | A8 dot texture, alpha test GREATER 96 (cut-out circle) |
//! | 7 | UI (binary B: code re-upload) | strip | integer/byte attributes, scissor INCLUDE over the cell's left half |
//!
//! Binary A holds two vertex-shader entries sharing one program (switching between them only
//! changes the entry point and output map); binary B is separate, so kinds 7 → 0 re-upload code.
//! Every draw sets its own model-view matrix.

use gpu_core::lcd::Screen;
use pica_cmd::regs::framebuffer::{CompareFunc, LogicOp};
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::rasterizer::{CullMode, ScissorMode};
use pica_cmd::regs::tev::{TevOp, TevSource};
use pica_cmd::regs::texturing::{TextureFilter, TextureFormat, WrapMode};

use super::super::effect::{
    ColorOutput, depth_test, tev_modulate, tev_passthrough, tev_replace, tev_stage,
};
use super::super::math::{self, Mat4};
use super::super::{
    AttribLayout, BufferLayout, CommandList, Effect, IndexBuffer, RenderTarget, Sampler, Scene,
    SceneError, ShaderBinary, ShaderProgram, Texture, Unit, VertexBuffer,
};
use super::cube::{UI_SRC, UI_STRIDE, ui_attributes, ui_rect};
use super::geoshader::SCENE_VS;
use super::{VertexBytes, checker_image, crate_image, cube_mesh, dot_image};
use pica_cmd::regs::framebuffer::AlphaTest;

/// Frames in the trace.
const FRAMES: u32 = 3;
const LIT_SRC: &str = include_str!("lit.v.pica");

/// Uniform registers of the programs.
struct Uniforms {
    lit_proj: u8,
    lit_mv: u8,
    lit_light: [u8; 5],
    flat_proj: u8,
    flat_mv: u8,
    ui_proj: u8,
    ui_depth: u8,
}

/// Everything the draws use.
struct Assets {
    lit: ShaderProgram,
    flat: ShaderProgram,
    ui: ShaderProgram,
    u: Uniforms,
    cube_buffers: BufferLayout,
    cube_ibo: IndexBuffer,
    shapes_buffers: BufferLayout,
    diamond_ibo: IndexBuffer,
    ui_vbo: VertexBuffer,
    crate_tex: Texture,
    checker: Texture,
    dot: Texture,
}

/// Shapes buffer layout (f32 x, y, z, u, v; 20 bytes): quad strip at 0, hexagon fan at 4,
/// diamond vertices at 12.
fn shapes() -> Vec<f32> {
    let mut v = vec![
        -0.5, -0.5, 0.0, 0.0, 0.0, //
        0.5, -0.5, 0.0, 1.0, 0.0, //
        -0.5, 0.5, 0.0, 0.0, 1.0, //
        0.5, 0.5, 0.0, 1.0, 1.0, //
        0.0, 0.0, 0.0, 0.5, 0.5, // hexagon centre
    ];
    for k in 0..=6 {
        let a = k as f32 / 6.0 * std::f32::consts::TAU;
        v.extend_from_slice(&[
            0.5 * a.cos(),
            0.5 * a.sin(),
            0.0,
            0.5 + a.cos(),
            0.5 + a.sin(),
        ]);
    }
    v.extend_from_slice(&[
        0.0, -0.6, 0.0, 0.5, 0.0, //
        0.45, 0.0, 0.0, 1.0, 0.5, //
        0.0, 0.6, 0.0, 0.5, 1.0, //
        -0.45, 0.0, 0.0, 0.0, 0.5, //
        0.0, 0.0, 0.3, 0.5, 0.5, //
    ]);
    v
}

fn load(scene: &mut Scene) -> Result<Assets, SceneError> {
    let a = ShaderBinary::assemble(&[("lit.v.pica", LIT_SRC), ("scene.v.pica", SCENE_VS)])?;
    let b = ShaderBinary::assemble(&[("ui.v.pica", UI_SRC)])?;
    let lit = ShaderProgram::new(&a, 0)?;
    let flat = ShaderProgram::new(&a, 1)?;
    let ui = ShaderProgram::new(&b, 0)?;
    let f = |p: &ShaderProgram, name: &str| {
        p.vs.float_uniform(name)
            .ok_or_else(|| SceneError::Assembly(format!("no uniform {name}")))
    };
    let u = Uniforms {
        lit_proj: f(&lit, "projection")?,
        lit_mv: f(&lit, "modelView")?,
        lit_light: [
            f(&lit, "lightDir")?,
            f(&lit, "halfVec")?,
            f(&lit, "lightColor")?,
            f(&lit, "ambient")?,
            f(&lit, "specular")?,
        ],
        flat_proj: f(&flat, "projection")?,
        flat_mv: f(&flat, "modelView")?,
        ui_proj: f(&ui, "projection")?,
        ui_depth: f(&ui, "depth")?,
    };
    let (verts, indices) = cube_mesh();
    let cube_vbo = scene.vertex_buffer_f32(&verts)?;
    let cube_ibo = scene.index_buffer_u16(&indices)?;
    let shapes_vbo = scene.vertex_buffer_f32(&shapes())?;
    let diamond_ibo = scene.index_buffer_u8(&[
        12, 13, 16, 13, 14, 16, 14, 15, 16, 15, 12, 16, // front fan around the tip
        12, 14, 13, 12, 15, 14, // back
    ])?;
    let mut rect = VertexBytes::default();
    ui_rect(
        &mut rect,
        (0, 0, 18, 16),
        [250, 250, 120, 255],
        [250, 120, 40, 255],
    );
    let ui_vbo = scene.vertex_buffer(&rect.0)?;
    Ok(Assets {
        lit,
        flat,
        ui,
        u,
        cube_buffers: BufferLayout::new().buffer(cube_vbo, 32, &[0, 1, 2]),
        cube_ibo,
        shapes_buffers: BufferLayout::new().buffer(shapes_vbo, 20, &[0, 1]),
        diamond_ibo,
        ui_vbo,
        crate_tex: scene.texture(
            &crate_image(32),
            TextureFormat::Rgb565,
            3,
            Sampler {
                mip: TextureFilter::Linear,
                ..Sampler::linear(WrapMode::ClampToEdge)
            },
        )?,
        checker: scene.texture(
            &checker_image(16, 4, [255, 255, 255, 255], [40, 40, 40, 255]),
            TextureFormat::Rgba8,
            1,
            Sampler::nearest(WrapMode::Repeat),
        )?,
        dot: scene.texture(
            &dot_image(16),
            TextureFormat::A8,
            1,
            Sampler::linear(WrapMode::ClampToEdge),
        )?,
    })
}

/// A cell's colour, varying smoothly over the grid.
fn cell_color(i: u32, alpha: f32) -> [f32; 4] {
    let t = i as f32 * 0.37;
    [
        0.5 + 0.5 * t.sin(),
        0.5 + 0.5 * (t * 1.3 + 2.0).sin(),
        0.5 + 0.5 * (t * 0.7 + 4.0).sin(),
        alpha,
    ]
}

/// Draws one grid of `cols` × `rows` cells into `target`.
#[allow(clippy::too_many_arguments)]
fn grid(
    cmd: &mut CommandList,
    a: &Assets,
    target: &RenderTarget,
    aspect: f32,
    cols: u32,
    rows: u32,
    frame: u32,
    first_index: u32,
) {
    cmd.set_render_target(target);
    let projection = math::perspective_tilt(45f32.to_radians(), aspect, 0.5, 20.0);
    // Visible half extents at the grid's distance (z = -8).
    let half_h = 8.0 * (22.5f32.to_radians()).tan();
    let half_w = half_h * aspect;
    let (cw, ch) = (2.0 * half_w / cols as f32, 2.0 * half_h / rows as f32);
    let light = math::normalize3([-0.3, 0.5, 0.8]);
    let half = math::normalize3([light[0], light[1], light[2] + 1.0]);
    for row in 0..rows {
        for col in 0..cols {
            let i = first_index + row * cols + col;
            // Pairs of neighbouring cells share a kind (so some state carries over), rows shift it.
            let kind = (col / 2 + row + frame) % 8;
            let x = -half_w + cw * (col as f32 + 0.5);
            let y = half_h - ch * (row as f32 + 0.5);
            let spin = 0.3 * i as f32 + 0.4 * frame as f32;
            let size = 0.8 * cw.min(ch);
            let mv: Mat4 = math::mul(
                &math::translate(x, y, -8.0),
                &math::mul(
                    &math::mul(&math::rotate_y(spin), &math::rotate_x(0.5 * spin)),
                    &math::scale(size, size, size),
                ),
            );
            match kind {
                0 | 5 => {
                    let effect = if kind == 5 {
                        Effect {
                            output: ColorOutput::LogicOp(LogicOp::Xor),
                            ..Effect::default()
                        }
                    } else {
                        Effect::default()
                    };
                    cmd.bind_program(&a.lit)
                        .set_attributes(
                            &AttribLayout::new()
                                .loader(0, AttribType::Float, 3)
                                .loader(1, AttribType::Float, 2)
                                .loader(2, AttribType::Float, 3),
                        )
                        .set_buffers(&a.cube_buffers)
                        .uniform_mat4(Unit::Vertex, a.u.lit_proj, &projection)
                        .uniform_mat4(Unit::Vertex, a.u.lit_mv, &mv)
                        .uniform_vec4s(
                            Unit::Vertex,
                            a.u.lit_light[0],
                            &[[light[0], light[1], light[2], 0.0]],
                        )
                        .uniform_vec4s(
                            Unit::Vertex,
                            a.u.lit_light[1],
                            &[[half[0], half[1], half[2], 0.0]],
                        )
                        .uniform_vec4s(Unit::Vertex, a.u.lit_light[2], &[cell_color(i, 1.0)])
                        .uniform_vec4s(Unit::Vertex, a.u.lit_light[3], &[[0.25, 0.25, 0.3, 1.0]])
                        .uniform_vec4s(Unit::Vertex, a.u.lit_light[4], &[[0.4, 0.4, 0.4, 0.0]])
                        .set_effect(&effect)
                        .bind_textures([Some(&a.crate_tex), None, None])
                        .set_tev(
                            0,
                            &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
                        )
                        .set_tev(1, &tev_passthrough())
                        .draw_elements(PrimitiveTopology::Triangles, &a.cube_ibo, 36);
                }
                7 => {
                    // UI program: pixel coordinates of the cell in the rotated render target.
                    // Upright cell (col, row) covers screen x [col·cpx, …), y [row·cpy, …).
                    let (cpx, cpy) = (target.height / cols, target.width / rows);
                    let (sx, sy) = (col * cpx, row * cpy);
                    // The 18 × 16 rectangle at (0, 0) lands at screen (sx + 3, sy + 2): an
                    // orthographic projection of the whole screen (y down), shifted.
                    let (ox, oy) = ((sx + 3) as f32, (sy + 2) as f32);
                    let (w, h) = (target.height as f32, target.width as f32);
                    let ortho = math::ortho_tilt(-ox, w - ox, h - oy, -oy, 0.0, 1.0);
                    // Scissor in window coordinates (x up the screen, y to the left): keep the
                    // left half of the cell, i.e. window y from the cell's middle to its left.
                    let wy0 = target.height - sx - cpx / 2;
                    let wy1 = target.height - sx;
                    cmd.bind_program(&a.ui)
                        .set_attributes(&ui_attributes())
                        .set_buffers(&BufferLayout::new().buffer(a.ui_vbo, UI_STRIDE, &[0, 1, 2]))
                        .uniform_mat4(Unit::Vertex, a.u.ui_proj, &ortho)
                        .uniform_vec4s(Unit::Vertex, a.u.ui_depth, &[[-0.2, 0.0, 0.0, 0.0]])
                        .set_effect(&Effect::ui())
                        .bind_textures([None, None, None])
                        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
                        .set_tev(1, &tev_passthrough())
                        .scissor(ScissorMode::Include, 0, wy0, target.width, wy1)
                        .draw_arrays(PrimitiveTopology::TriangleStrip, 0, 4)
                        .scissor(ScissorMode::Disabled, 0, 0, 0, 0);
                }
                _ => {
                    cmd.bind_program(&a.flat)
                        .set_attributes(
                            &AttribLayout::new()
                                .loader(0, AttribType::Float, 3)
                                .loader(1, AttribType::Float, 2)
                                .fixed(2),
                        )
                        .set_buffers(&a.shapes_buffers)
                        .uniform_mat4(Unit::Vertex, a.u.flat_proj, &projection)
                        .uniform_mat4(Unit::Vertex, a.u.flat_mv, &mv)
                        .fixed_attribute(2, cell_color(i, 0.7));
                    match kind {
                        1 => {
                            cmd.set_effect(&Effect {
                                cull: CullMode::None,
                                ..Effect::default()
                            })
                            .bind_textures([None, None, None])
                            .set_tev(0, &tev_replace(TevSource::PrimaryColor))
                            .set_tev(1, &tev_passthrough())
                            .draw_arrays(
                                PrimitiveTopology::TriangleStrip,
                                0,
                                4,
                            );
                        }
                        2 => {
                            cmd.set_effect(&Effect {
                                cull: CullMode::None,
                                ..Effect::default()
                            })
                            .bind_textures([Some(&a.checker), None, None])
                            .set_tev(
                                0,
                                &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
                            )
                            .set_tev(1, &tev_passthrough())
                            .draw_arrays(
                                PrimitiveTopology::TriangleFan,
                                4,
                                8,
                            );
                        }
                        3 => {
                            // Stage 0: checker × colour; stage 1: previous + const − 0.5
                            // (ADD_SIGNED), alpha from the dot texture (unit 1).
                            let mut s1 = tev_stage(
                                [
                                    TevSource::Previous,
                                    TevSource::Constant,
                                    TevSource::PrimaryColor,
                                ],
                                TevOp::AddSigned,
                                [150, 110, 90, 255],
                            );
                            s1.sources.alpha = [
                                TevSource::Texture1,
                                TevSource::Previous,
                                TevSource::PrimaryColor,
                            ];
                            s1.combiner.alpha_op = TevOp::Modulate;
                            cmd.set_effect(&Effect {
                                cull: CullMode::None,
                                ..Effect::default()
                            })
                            .bind_textures([Some(&a.checker), Some(&a.dot), None])
                            .set_tev(
                                0,
                                &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
                            )
                            .set_tev(1, &s1)
                            .draw_elements(
                                PrimitiveTopology::Triangles,
                                &a.diamond_ibo,
                                18,
                            );
                        }
                        4 => {
                            let c = cell_color(i, 1.0);
                            let tri: [[[f32; 4]; 3]; 3] = [
                                [[-0.5, -0.45, 0.0, 1.0], [0.0; 4], c],
                                [[0.5, -0.45, 0.0, 1.0], [0.0; 4], [1.0, 1.0, 1.0, 1.0]],
                                [[0.0, 0.5, 0.0, 1.0], [0.0; 4], [c[2], c[0], c[1], 1.0]],
                            ];
                            let verts: Vec<&[[f32; 4]]> = tri.iter().map(|v| &v[..]).collect();
                            cmd.set_attributes(
                                &AttribLayout::new()
                                    .loader(0, AttribType::Float, 3)
                                    .loader(1, AttribType::Float, 2)
                                    .loader(2, AttribType::Float, 4),
                            )
                            .set_effect(&Effect {
                                cull: CullMode::None,
                                depth: depth_test(true, CompareFunc::GreaterEqual, true),
                                ..Effect::default()
                            })
                            .bind_textures([None, None, None])
                            .set_tev(0, &tev_replace(TevSource::PrimaryColor))
                            .set_tev(1, &tev_passthrough())
                            .draw_immediate(PrimitiveTopology::Triangles, &verts);
                        }
                        _ => {
                            // Kind 6: cut-out circle by alpha test.
                            let mut s0 = tev_replace(TevSource::PrimaryColor);
                            s0.sources.alpha = [
                                TevSource::Texture0,
                                TevSource::PrimaryColor,
                                TevSource::PrimaryColor,
                            ];
                            cmd.set_effect(&Effect {
                                cull: CullMode::None,
                                alpha_test: AlphaTest {
                                    enable: true,
                                    func: CompareFunc::Greater,
                                    reference: 96,
                                },
                                ..Effect::default()
                            })
                            .bind_textures([Some(&a.dot), None, None])
                            .set_tev(0, &s0)
                            .set_tev(1, &tev_passthrough())
                            .draw_arrays(
                                PrimitiveTopology::TriangleStrip,
                                0,
                                4,
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Builds `stress.ctf`.
pub fn build() -> Result<Vec<u8>, SceneError> {
    let mut scene = Scene::new()?;
    let top = scene.top_target()?;
    let bottom = scene.bottom_target()?;
    let assets = load(&mut scene)?;
    for frame in 0..FRAMES {
        scene.clear(&top, [16, 16, 24, 255], 0);
        scene.clear(&bottom, [24, 16, 16, 255], 0);
        let mut cmd = scene.command_list();
        grid(&mut cmd, &assets, &top, 400.0 / 240.0, 16, 12, frame, 0);
        grid(
            &mut cmd,
            &assets,
            &bottom,
            320.0 / 240.0,
            12,
            10,
            frame,
            192,
        );
        scene.submit(cmd)?;
        scene.present(&top, Screen::Top);
        scene.present(&bottom, Screen::Bottom);
        scene.end_frame();
    }
    scene.finish()
}
