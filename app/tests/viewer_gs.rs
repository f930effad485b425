//! Geometry-shader stepping in the viewer, driven headlessly with egui_kittest as a person
//! would: open the geoshader demo, select a GS draw, open the shader debugger, choose the
//! geometry shader and an invocation, step to an EMIT and see the emitted vertex; the Vertices
//! view lists the GS output and leads to the debugger.

mod kittest_common;
mod viewer_common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::widgets::fmt_vec4;
use viewer_common::demo_path;
use viewer_common::ui::first_gs_draw;

fn open_geoshader() -> (Harness<'static, ViewerApp>, u64) {
    let mut h = harness(Some(demo_path("geoshader.ctf")));
    wait_indexed(&mut h);
    let d = first_gs_draw(&h);
    h.state_mut().push(AppCommand::SelectDraw(d));
    for _ in 0..2 {
        h.step();
    }
    (h, d)
}

fn gs_trace_ready(h: &Harness<'static, ViewerApp>, draw: u64, inv: u32) -> bool {
    h.state()
        .trace()
        .and_then(|s| s.gs_shader.as_ref())
        .is_some_and(|(k, r)| *k == (draw, inv) && r.is_ok())
}

#[test]
fn step_a_geometry_shader_invocation_to_an_emit_and_see_the_emitted_vertex() {
    let (mut h, d) = open_geoshader();
    h.get_by_label("Shader").click();
    step_until(&mut h, "vertex shader trace", |h| {
        has_label(h, "before the first instruction")
    });
    h.get_by_label("Geometry shader").click();
    step_until(&mut h, "GS invocation 0 traced", |h| {
        gs_trace_ready(h, d, 0)
    });
    assert!(has_label(&h, "+GS: geometry shader"));
    // The invocation list: one per star, with its input vertex and EMIT count.
    let insp = h
        .state()
        .trace()
        .and_then(|s| s.detail.as_ref())
        .and_then(|(_, r)| r.as_ref().ok())
        .cloned()
        .expect("draw detail");
    let n = insp.detail.gs_invocations.len();
    assert!(n > 3, "{n} invocations");
    assert!(has_label(&h, &format!("Invocations ({n})")));
    // Choose invocation 3 in the list.
    h.get_by_label_contains("#3  vertex 3 ").click();
    step_until(&mut h, "GS invocation 3 traced", |h| {
        gs_trace_ready(h, d, 3)
    });
    assert_eq!(h.state().sel.gs_invocation, Some(3));
    assert!(has_label(&h, "6 emits, 2 primitives"));
    let trace = h
        .state()
        .trace()
        .and_then(|s| s.gs_shader.as_ref())
        .and_then(|(_, r)| r.as_ref().ok())
        .cloned()
        .expect("trace");
    assert_eq!(trace.emits.len(), 6);
    assert!(trace.notes.is_empty(), "{:?}", trace.notes);
    // Step forward with the button until the first EMIT has executed.
    let first_emit = trace.emits[0].step;
    for _ in 0..=first_emit {
        h.get_by_label("Step ▶").click();
        h.step();
    }
    for _ in 0..3 {
        h.step();
    }
    assert_eq!(h.state().sel.shader_step, Some(first_emit));
    let recorded = &insp.detail.gs_invocations[3].emits[0];
    let pos = fmt_vec4(&recorded.vertex.pos);
    assert_eq!(trace.emits[0].vertex.pos, recorded.vertex.pos);
    assert!(
        has_label(&h, &format!("EMIT slot 0: pos {pos}")),
        "the executed EMIT shows the emitted vertex"
    );
    assert!(has_label(
        &h,
        "Emitted vertices so far: 1 of 6 (2 primitives in the run)"
    ));
    // Two more EMITs complete the first triangle.
    let third = trace.emits[2].step;
    h.state_mut().push(AppCommand::ShaderStep(Some(third)));
    for _ in 0..3 {
        h.step();
    }
    assert!(has_label(&h, "EMIT slot 2 +primitive"));
    assert!(has_label(&h, "Emitted vertices so far: 3 of 6"));
    // Back to the vertex shader.
    h.get_by_label("Vertex shader").click();
    step_until(&mut h, "VS trace", |h| {
        h.state().sel.gs_invocation.is_none() && has_label(h, "+GS: vertex shader")
    });
    settle(&mut h);
}

#[test]
fn the_vertices_view_lists_gs_output_and_opens_the_invocation_in_the_debugger() {
    let (mut h, d) = open_geoshader();
    h.get_by_label("Vertices").click();
    step_until(&mut h, "draw detail", |h| {
        has_label(h, "Geometry-shader output:")
    });
    let insp = h
        .state()
        .trace()
        .and_then(|s| s.detail.as_ref())
        .and_then(|(_, r)| r.as_ref().ok())
        .cloned()
        .expect("draw detail");
    let n = insp.detail.gs_invocations.len();
    let tris = h
        .state()
        .trace()
        .and_then(|s| s.index.as_ref())
        .map(|i| i.draws[d as usize].stats.triangles_assembled)
        .expect("stats");
    assert_eq!(2 * n as u64, tris);
    assert!(has_label(
        &h,
        &format!(
            "Geometry-shader output: {n} invocations, {} emitted vertices, {tris} primitives",
            6 * n
        )
    ));
    h.get_by_label_contains("Geometry-shader output:").click();
    for _ in 0..3 {
        h.step();
    }
    h.get_by_label_contains("inv    1 emit 2 slot 2 prim")
        .click();
    step_until(&mut h, "GS invocation 1 traced", |h| {
        gs_trace_ready(h, d, 1)
    });
    assert_eq!(h.state().sel.gs_invocation, Some(1));
    assert!(has_label(&h, "+GS: geometry shader"));
    settle(&mut h);
}
