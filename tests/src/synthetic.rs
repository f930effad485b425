//! Synthetic traces for the budget, memory and hostile-input tests: many draws that fetch and
//! shade every vertex but rasterise nothing.
//!
//! Inputs: the counts. Output: `.ctf` bytes, the same on every run.

use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};

use crate::scene::{AttribLayout, BufferLayout, Scene, ShaderBinary, ShaderProgram};

/// Pass-through vertex shader: position and colour from v0.
pub const PASS_VS: &str = "
.out outpos position
.out outclr color
.proc main
	mov outpos, v0
	mov outclr, v0
	end
.end
";

/// `frames` frames of `draws` draws of `count` vertices each, one command list per frame. Every
/// vertex reads attribute 0 (four floats) with a 16-byte stride from a 16-byte buffer of zeros:
/// the rest reads zeros, so nothing is rasterised but every vertex is fetched and shaded.
///
/// With `gs` = `Some(source)`, the vertex shader is followed by that geometry shader
/// (assembled as the binary's second program, fed 2 attributes per vertex, see
/// [`ShaderProgram::with_geometry`]) and the draws use the geometry-shader topology.
///
/// Panics if the scene builder refuses (a bug in the test set-up, not in the code under test).
pub fn zero_vertex_draws(frames: u32, draws: u32, count: u32, gs: Option<&str>) -> Vec<u8> {
    let mut scene = Scene::new().expect("scene");
    let top = scene.top_target().expect("target");
    let bin = match gs {
        Some(src) => ShaderBinary::assemble(&[("pass.v.pica", PASS_VS), ("gs.g.pica", src)]),
        None => ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]),
    }
    .expect("shaders assemble");
    let mut program = ShaderProgram::new(&bin, 0).expect("program");
    if gs.is_some() {
        program = program.with_geometry(&bin, 1, 2).expect("geometry shader");
    }
    let vbo = scene.vertex_buffer(&[0u8; 16]).expect("vertex buffer");
    let attrs = AttribLayout::new().loader(0, AttribType::Float, 4);
    let buffers = BufferLayout::new().buffer(vbo, 16, &[0]);
    let topology = if gs.is_some() {
        PrimitiveTopology::GeometryPrimitive
    } else {
        PrimitiveTopology::Triangles
    };
    for _ in 0..frames {
        let mut cmd = scene.command_list();
        cmd.set_render_target(&top)
            .bind_program(&program)
            .set_attributes(&attrs)
            .set_buffers(&buffers);
        for _ in 0..draws {
            cmd.draw_arrays(topology, 0, count);
        }
        scene.submit(cmd).expect("submit");
        scene.end_frame();
    }
    scene.finish().expect("trace")
}
