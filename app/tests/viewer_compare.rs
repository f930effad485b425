//! Compare mode (issue 16) driven headlessly: the open demo trace against itself under two
//! configurations. Reference vs fast shader engine: no difference. Hardware vs Citra
//! software-renderer texture sampling: "First difference" runs the diff on the compare worker,
//! names draw 1 (the first textured draw), jumps there, and the A | B | difference row shows
//! differing pixels.

mod kittest_common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_core::draw::VsEngine;
use gpu_core::replay::diff::DiffOutcome;
use gpu_core::texture::RenderMode;
use kittest_common::*;
use picaview::viewer::ViewerApp;

fn demo() -> Harness<'static, ViewerApp> {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    wait_indexed(&mut h);
    h
}

fn start_and_find(h: &mut Harness<'static, ViewerApp>) {
    h.get_by_label("Start comparing").click();
    step_until(h, "both traces indexed", |h| {
        h.state().panels.compare.ready.is_some()
    });
    h.get_by_label("First difference").click();
    step_until(h, "the diff", |h| h.state().panels.compare.result.is_some());
}

#[test]
fn compare_mode_finds_and_shows_the_first_difference() {
    let mut h = demo();
    h.get_by_label("Compare").click();
    step_until(&mut h, "the compare tab", |h| {
        has_label(h, "Start comparing")
    });
    // Same trace, reference vs fast vertex-shader engine: identical.
    h.state_mut().panels.compare.config_a.vs_engine = VsEngine::Reference;
    start_and_find(&mut h);
    let result = h.state().panels.compare.result.clone();
    assert!(
        matches!(result, Some(Ok(DiffOutcome::Same { draws: 66, .. }))),
        "{result:?}"
    );
    assert!(has_label(&h, "no difference: 66 draw(s)"));
    // Citra software-renderer sampling on side B: draw 1 (the textured cube) differs.
    h.state_mut().panels.compare.config_a.vs_engine = VsEngine::Fast;
    h.state_mut().panels.compare.config_b.render_mode = RenderMode::CitraSwrast;
    start_and_find(&mut h);
    step_until(&mut h, "the summary", |h| {
        has_label(h, "first difference: frame 0 draw 1")
    });
    // The selection jumped to draw 1.
    let draw = h
        .state()
        .trace()
        .and_then(|s| s.draw_at_or_before(h.state().sel.command));
    assert_eq!(draw, Some(1));
    // A | B | difference of draw 1.
    step_until(&mut h, "the compare images", |h| {
        has_label(h, "After draw 1 — Colour buffer:")
    });
    let row = h
        .query_all_by_label_contains("After draw 1 — Colour buffer:")
        .next()
        .map(|n| format!("{n:?}"))
        .unwrap_or_default();
    assert!(!row.contains(": 0 pixel(s) differ"), "{row}");
    for title in ["A", "B", "Difference"] {
        assert!(h.query_all_by_label(title).next().is_some(), "{title}");
    }
    settle(&mut h);
}
