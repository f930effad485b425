//! The Pixel history window driven as a person would (issue 15): open a demo trace, select a
//! draw, show the colour buffer, click a pixel, read its history, expand a draw and select it.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use gpu_core::history::HistoryEvent;
use kittest_common::*;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use picaview::viewer::protocol::ImageSource;
use viewer_common::demo_path;

#[test]
fn pick_a_pixel_and_open_its_history() {
    let mut h = harness_with(
        Some(demo_path("fog_blend.ctf")),
        None,
        egui::vec2(1400.0, 900.0),
    );
    wait_indexed(&mut h);
    // The last draw of frame 1: the frame is complete up to there.
    let last_draw = {
        let s = h.state().trace().expect("trace open");
        let index = s.index.as_ref().expect("indexed");
        index.frames[1].draws.end - 1
    };
    h.state_mut().push(AppCommand::SelectDraw(last_draw));
    h.state_mut().push(AppCommand::Tab(Tab::Image));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::TopScreen));
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Image);
    step_until(&mut h, "top screen image", |h| {
        has_label(h, "Image canvas (click to pick a pixel)")
            && h.state().trace().is_some_and(|s| s.progress.is_none())
    });
    // Click the middle of the screen image: the ground is there, under the fog.
    h.get_by_label("Image canvas (click to pick a pixel)")
        .click();
    step_until(&mut h, "pixel history", |h| {
        h.state()
            .trace()
            .and_then(|s| s.pixel_history.as_ref())
            .is_some()
            && has_label(h, "Pixel history")
    });
    let (key, result) = h
        .state()
        .trace()
        .and_then(|s| s.pixel_history.clone())
        .expect("history");
    assert_eq!(key.1, ImageSource::TopScreen);
    let hist = result.expect("the top screen pixel has a history");
    assert!(
        hist.mapping.description.contains("via display transfer #"),
        "{}",
        hist.mapping.description
    );
    let draws: Vec<u64> = hist
        .events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Draw { draw, .. } => Some(*draw),
            HistoryEvent::Engine { .. } => None,
        })
        .collect();
    assert!(!draws.is_empty(), "{:?}", hist.events);
    assert!(has_label(&h, "top screen ("), "the mapping line is shown");
    // Each draw is a section: open the first and select its draw.
    let first = draws[0];
    let header = format!("draw {first} (draw ");
    step_until(&mut h, "draw section", |h| has_label(h, &header));
    let select = format!("Select draw {first}");
    if !has_label(&h, &select) {
        h.query_all_by_label_contains(&header)
            .next()
            .expect("draw header")
            .click();
        step_until(&mut h, "select button", |h| has_label(h, &select));
    }
    h.get_by_label(&select).click();
    h.step();
    h.step();
    let trigger = {
        let s = h.state().trace().expect("trace open");
        let index = s.index.as_ref().expect("indexed");
        index.draws[first as usize].after.writes
    };
    let sel = h.state().sel.command;
    assert!(
        sel <= trigger && sel + 64 > trigger,
        "selected command {sel} is draw {first}'s (ends at {trigger})"
    );
    // A fragment section shows the combiner stages.
    assert!(has_label(&h, "tev 0: rgb in") || has_label(&h, "triangle "));
    settle(&mut h);
}

#[test]
fn colour_buffer_pick_outside_every_draw_says_so() {
    let mut h = harness_with(Some(demo_path("cube.ctf")), None, egui::vec2(1400.0, 900.0));
    wait_indexed(&mut h);
    // Command 1: nothing has been drawn yet in frame 0.
    h.state_mut().push(AppCommand::SelectCommand(1));
    h.step();
    let s = h.state_mut().trace_mut().expect("trace open");
    s.request_pixel_history((1, ImageSource::Color, 0, 0));
    step_until(&mut h, "answer", |h| {
        h.state()
            .trace()
            .and_then(|s| s.pixel_history.as_ref())
            .is_some()
    });
    let (_, result) = h
        .state()
        .trace()
        .and_then(|s| s.pixel_history.clone())
        .expect("history");
    // Either no render target yet (an error message) or an empty history: never a panic.
    if let Ok(hist) = result {
        assert_eq!(hist.fragment_count(), 0);
    }
    settle(&mut h);
}
