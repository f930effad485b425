//! Click to identify, overlays and the cost table (issue 15), driven headlessly with
//! egui_kittest on the synthetic trace of `viewer_common` (64 × 64 target, per frame three
//! right triangles: draw d spans clip x from −1 + 0.6·d to −0.5 + 0.6·d, full height, with the
//! right angle at the bottom left).

mod kittest_common;
mod viewer_common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::panels::cost::CostColumn;
use picaview::viewer::prefs::Tab;
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::{click_at, pixel_pos};
use viewer_common::*;

fn opened(name: &str) -> (Harness<'static, ViewerApp>, std::path::PathBuf) {
    let dir = temp_dir(&format!("pick-{name}"));
    let path = write_trace(&dir);
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    (h, dir)
}

/// The selected draw (the draw at or before the selected command).
fn selected_draw(h: &Harness<'static, ViewerApp>) -> Option<u64> {
    let n = h.state().sel.command;
    h.state().trace().and_then(|s| s.draw_at_or_before(n))
}

/// Shows the colour buffer (or `source`) after draw 2 (the end of frame 0), unrotated.
fn show_target(h: &mut Harness<'static, ViewerApp>, source: ImageSource) {
    h.state_mut().prefs.image.rotate = false;
    h.state_mut().push(AppCommand::SelectDraw(2));
    h.state_mut().push(AppCommand::ShowImage(source));
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Image);
    let want = match source {
        ImageSource::Depth => "depth of",
        _ => "colour buffer 0x",
    };
    step_until(h, "render-target image", |h| has_label(h, want));
}

#[test]
fn click_a_pixel_selects_the_draw_and_triangle() {
    let (mut h, dir) = opened("click");
    show_target(&mut h, ImageSource::Color);
    // Image pixel (22, 40) = window (22, 23): inside draw 1's triangle (clip x −0.4 … −0.4 +
    // 0.5·(1 − (y + 1)/2), i.e. window x 19.2 … 29.3 at that height) and no other draw's.
    let pos = pixel_pos(&h, 22, 40);
    click_at(&mut h, pos);
    step_until(&mut h, "primitive identified", |h| {
        h.state().sel.triangle.is_some()
    });
    assert_eq!(selected_draw(&h), Some(1));
    assert_eq!(h.state().sel.triangle, Some(0));
    let picked = h.state().panels.image.picked_primitive.expect("picked");
    assert_eq!((picked.1, picked.2), (22, 40));
    assert_eq!(picked.3.map(|p| (p.draw, p.triangle)), Some((1, 0)));
    step_until(&mut h, "primitive panel", |h| {
        has_label(h, "was last written by draw #1, triangle 0")
    });
    // The triangle's three vertices are offered for the shader trace, and the Vertices view
    // shows the triangle.
    step_until(&mut h, "fate from the detail", |h| {
        has_label(h, "fate: drawn")
    });
    h.get_by_label("Vertices ▶").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Vertices);
    step_until(&mut h, "triangle line", |h| has_label(h, "Triangle 0"));
    assert!(has_label(&h, "k = 0") && has_label(&h, "k = 1") && has_label(&h, "k = 2"));
    h.get_all_by_label("shader trace ▶")
        .nth(1)
        .expect("second vertex's button")
        .click();
    h.step();
    assert_eq!(h.state().sel.vertex, Some(1));
    assert_eq!(h.state().prefs.tab, Tab::Shader);
    // Back to the image: pixel history takes the pixel as the picked pixel.
    h.state_mut().push(AppCommand::Tab(Tab::Image));
    step_until(&mut h, "image again", |h| has_label(h, "Pixel history ▶"));
    h.get_by_label("Pixel history ▶").click();
    step_until(&mut h, "pixel picked", |h| {
        h.state()
            .trace()
            .and_then(|s| s.pixel.as_ref())
            .is_some_and(|p| (p.1, p.2, p.3) == (ImageSource::Color, 22, 40))
    });
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn clicking_an_unwritten_pixel_selects_nothing() {
    let (mut h, dir) = opened("empty");
    show_target(&mut h, ImageSource::Color);
    let before = h.state().sel;
    // Image pixel (60, 2): right of every triangle, near the top.
    let pos = pixel_pos(&h, 60, 2);
    click_at(&mut h, pos);
    step_until(&mut h, "identified", |h| {
        h.state().panels.image.picked_primitive.is_some()
    });
    assert_eq!(
        h.state().panels.image.picked_primitive.and_then(|p| p.3),
        None
    );
    assert!(has_label(&h, "no draw of this frame wrote it"));
    assert_eq!(h.state().sel.triangle, before.triangle);
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn toggle_each_overlay() {
    let (mut h, dir) = opened("overlays");
    show_target(&mut h, ImageSource::Color);
    assert_eq!(h.state().panels.image.shown_overlay(), None);
    h.get_by_label("overdraw").click();
    step_until(&mut h, "heat map", |h| {
        h.state().panels.image.shown_overlay() == Some("overdraw")
    });
    assert!(h.state().panels.image.overlays.overdraw);
    h.get_by_label("overdraw").click();
    h.step();
    assert_eq!(h.state().panels.image.shown_overlay(), None);
    // Wireframe: the selected draw's detail is fetched for it.
    h.get_by_label("wireframe").click();
    step_until(&mut h, "draw detail", |h| {
        h.state()
            .trace()
            .and_then(|s| s.detail.as_ref())
            .is_some_and(|(d, r)| *d == 2 && r.is_ok())
    });
    assert!(h.state().panels.image.overlays.wireframe);
    for name in ["scissor", "viewport"] {
        h.get_by_label(name).click();
        h.step();
    }
    let o = h.state().panels.image.overlays;
    assert!(o.scissor && o.viewport);
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn depth_range_overlay_on_the_demo() {
    // The synthetic trace has no depth buffer: the bundled cube demo has one.
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    wait_indexed(&mut h);
    show_target(&mut h, ImageSource::Depth);
    h.get_by_label("depth range").click();
    step_until(&mut h, "depth debug data", |h| {
        h.state()
            .trace()
            .and_then(|s| s.debug.as_ref())
            .is_some_and(|(_, r)| r.as_ref().is_ok_and(|d| d.depth.is_some()))
    });
    h.get_by_label("auto").click();
    h.step();
    step_until(&mut h, "re-ranged depth", |h| {
        h.state().panels.image.shown_overlay() == Some("depth range")
    });
    let (lo, hi) = h.state().panels.image.overlays.range;
    assert!(lo <= hi && hi <= 1.0, "{lo} {hi}");
    assert!((lo, hi) != (0.0, 1.0), "auto took the present range");
    settle(&mut h);
}

#[test]
fn cost_table_sorts_and_selects() {
    let (mut h, dir) = opened("costs");
    h.state_mut().push(AppCommand::SelectDraw(0));
    h.state_mut().push(AppCommand::Tab(Tab::Costs));
    step_until(&mut h, "cost table", |h| has_label(h, "Frame 0: 3 draws"));
    // Sort by vertex-shader instructions (largest first), then reverse.
    h.get_by_label("VS instr").click();
    h.step();
    assert_eq!(h.state().panels.cost.sort, CostColumn::VsInstructions);
    assert!(!h.state().panels.cost.ascending);
    // The header shows the new order from the next frame on.
    h.step();
    h.get_by_label("VS instr ↓").click();
    h.step();
    h.step();
    assert!(h.state().panels.cost.ascending);
    assert!(has_label(&h, "VS instr ↑"));
    // Click a row: its draw is selected.
    h.get_by_label("draw #2").click();
    h.step();
    assert_eq!(selected_draw(&h), Some(2));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}
