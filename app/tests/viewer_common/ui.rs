//! Harness-level set-up shared by the viewer tests: the open trace's index, the first
//! geometry-shader draw, whether the state view has caught up with the selection, and clicks on
//! image pixels of the synthetic trace's colour buffer. Uses only the harness API (no waiting:
//! pass the conditions below to `kittest_common::step_until`).

use std::sync::Arc;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_core::replay::TraceIndex;
use picaview::viewer::ViewerApp;

use super::{H, W};

/// The open trace's index (panics when no trace is open or it is not indexed yet).
pub fn trace_index(h: &Harness<'static, ViewerApp>) -> Arc<TraceIndex> {
    h.state()
        .trace()
        .and_then(|s| s.index.clone())
        .expect("index")
}

/// The first draw of the open trace that runs a geometry shader (panics when there is none).
pub fn first_gs_draw(h: &Harness<'static, ViewerApp>) -> u64 {
    trace_index(h)
        .draws
        .iter()
        .position(|r| r.info.geometry_shader)
        .expect("the trace has a GS draw") as u64
}

/// Whether the state view shows the state at the selected command (the worker has answered the
/// last selection).
pub fn state_at_selection(h: &Harness<'static, ViewerApp>) -> bool {
    h.state()
        .trace()
        .and_then(|s| s.state.as_ref())
        .is_some_and(|st| st.at == h.state().sel.command)
}

/// Screen position of the centre of image pixel (x, row) of the `W × H` colour buffer of the
/// synthetic trace fitted into the image canvas (no pan, no rotation).
pub fn pixel_pos(h: &Harness<'static, ViewerApp>, x: u32, row: u32) -> egui::Pos2 {
    let canvas = h
        .get_by_label("Image canvas (click to pick a pixel)")
        .rect();
    let fit = (canvas.width() / W as f32).min(canvas.height() / H as f32);
    let size = egui::vec2(W as f32, H as f32) * fit;
    let img = egui::Rect::from_center_size(canvas.center(), size);
    egui::pos2(
        img.left() + (x as f32 + 0.5) * fit,
        img.top() + (row as f32 + 0.5) * fit,
    )
}

/// A primary-button click (move, press, release) at `pos`.
pub fn click_at(h: &mut Harness<'static, ViewerApp>, pos: egui::Pos2) {
    h.event(egui::Event::PointerMoved(pos));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
    }
}
