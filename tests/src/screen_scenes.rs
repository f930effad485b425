//! Scenes for screen-pixel tests (issue 15): a stereoscopic top screen whose two eyes show
//! different draws, and a frame that presents nothing, so its screen still shows the image an
//! earlier frame transferred (double buffering).
//!
//! [`stereo_lookback`] writes a trace with two frames (vertex positions are upright top-screen
//! pixels through `math::ortho_tilt(0, 400, 240, 0, 0, 1)`; no depth buffers, no culling):
//! * frame 0: colour buffers L and R (240 × 400 RGBA8) are cleared blue and black (memory fills
//!   #0 and #1 of the frame); draw 0 renders a red triangle (0,0) (0,120) (200,0) into L, draw
//!   1 a green triangle (40,0) (40,120) (240,0) into R; L is display-transferred to the left
//!   eye's back framebuffer (transfer #2), R to the right eye's (transfer #3; with 3D off, to
//!   the same framebuffer A, overwriting L's image); the frame ends with the buffer swap;
//! * frame 1: draw 2 renders a yellow triangle (0,0) (0,240) (400,0) into L; nothing is
//!   presented, so at the end of frame 1 the screen still shows frame 0's transfers.
//!
//! So screen pixel (100, 20) is red in the left eye (draw 0) and green in the right eye (draw
//! 1); (20, 20) is red on the left and black (cleared, no draw) on the right.

use gpu_core::lcd::{Eye, Screen};
use pica_cmd::regs::framebuffer::ColorFormat;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::TevSource;

use crate::scene::effect::tev_replace;
use crate::scene::{
    AttribLayout, BufferLayout, Effect, Scene, SceneError, ShaderBinary, ShaderProgram, Unit, math,
};

/// Pass-through vertex shader: position through the projection, colour as is.
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

/// The trace described in the module doc; `stereo` turns the top screen's 3D on.
pub fn stereo_lookback(stereo: bool) -> Result<Vec<u8>, SceneError> {
    let mut scene = Scene::new()?;
    scene.set_stereo(stereo)?;
    let left = scene.render_target(240, 400, ColorFormat::Rgba8, None)?;
    let right = scene.render_target(240, 400, ColorFormat::Rgba8, None)?;
    let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)])?;
    let prog = ShaderProgram::new(&bin, 0)?;
    let tri = |x: f32, c: [f32; 4]| -> [f32; 24] {
        let p = [[x, 0.0], [x, 120.0], [x + 200.0, 0.0]];
        let mut out = [0.0; 24];
        for (i, [px, py]) in p.into_iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&[px, py, -0.5, 1.0, c[0], c[1], c[2], c[3]]);
        }
        out
    };
    let mut verts = Vec::new();
    verts.extend_from_slice(&tri(0.0, [1.0, 0.0, 0.0, 1.0]));
    verts.extend_from_slice(&tri(40.0, [0.0, 1.0, 0.0, 1.0]));
    let vb = scene.vertex_buffer_f32(&verts)?;
    // A triangle covering the upper-left half of the screen (its own buffer: frame 1's list
    // loads what its draw reads).
    let mut yellow = Vec::new();
    for [px, py] in [[0.0f32, 0.0], [0.0, 240.0], [400.0, 0.0]] {
        yellow.extend_from_slice(&[px, py, -0.5, 1.0, 1.0, 1.0, 0.0, 1.0]);
    }
    let vb_yellow = scene.vertex_buffer_f32(&yellow)?;
    let attribs =
        AttribLayout::new()
            .loader(0, AttribType::Float, 4)
            .loader(1, AttribType::Float, 4);
    let buffers = BufferLayout::new().buffer(vb, 32, &[0, 1]);
    let projection = math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0);

    // Frame 0.
    scene.clear(&left, [0, 0, 255, 255], 0);
    scene.clear(&right, [0, 0, 0, 255], 0);
    let mut list = scene.command_list();
    list.set_render_target(&left)
        .bind_program(&prog)
        .set_attributes(&attribs)
        .set_buffers(&buffers)
        .uniform_mat4(Unit::Vertex, 0, &projection)
        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .set_effect(&Effect::ui())
        .draw_arrays(PrimitiveTopology::Triangles, 0, 3);
    list.set_render_target(&right)
        .draw_arrays(PrimitiveTopology::Triangles, 3, 3);
    scene.submit(list)?;
    scene.present_eye(&left, Screen::Top, Eye::Left);
    scene.present_eye(&right, Screen::Top, Eye::Right);
    scene.end_frame();

    // Frame 1: draws, presents nothing.
    let mut list = scene.command_list();
    list.set_render_target(&left)
        .set_buffers(&BufferLayout::new().buffer(vb_yellow, 32, &[0, 1]))
        .draw_arrays(PrimitiveTopology::Triangles, 0, 3);
    scene.submit(list)?;
    scene.end_frame();
    scene.finish()
}

/// Where [`stereo_lookback`]'s stereo trace is kept for the viewer and CLI tests (the `app`
/// crate's tests cannot build scenes); `tests/tests/screen_history.rs` checks it is current.
pub const STEREO_FIXTURE: &str = "fixtures/screens/stereo_lookback.ctf";
