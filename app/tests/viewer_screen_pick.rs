//! Click to identify on a screen (issue 15), driven as a person would: open a demo, show the
//! top screen, click a pixel; the image panel shows how the pixel maps through the LCD
//! rotation and the display transfer to the colour buffer and the draw and triangle that wrote
//! it (the same answer as `gpu_core::history::identify_screen_pixel`), with buttons that select
//! them and open their vertices.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui_kittest::kittest::Queryable;
use gpu_core::history::{HistoryTarget, identify_screen_pixel};
use gpu_core::replay::Replay;
use kittest_common::*;
use pica_cmd::citrace::CiTrace;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use picaview::viewer::protocol::ImageSource;
use viewer_common::demo_path;

#[test]
fn clicking_the_top_screen_identifies_the_draw_through_the_display_transfer() {
    let path = demo_path("fog_blend.ctf");
    let mut h = harness_with(Some(path.clone()), None, egui::vec2(1400.0, 900.0));
    wait_indexed(&mut h);
    // The end of frame 1: the top screen shows what frame 1 presented.
    let end = {
        let s = h.state().trace().expect("trace open");
        let index = s.index.as_ref().expect("indexed");
        index.frames[1].end.writes
    };
    h.state_mut().push(AppCommand::SelectCommand(end));
    h.state_mut().push(AppCommand::Tab(Tab::Image));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::TopScreen));
    h.step();
    step_until(&mut h, "top screen image", |h| {
        has_label(h, "Image canvas (click to pick a pixel)")
            && h.state().trace().is_some_and(|s| s.progress.is_none())
    });
    assert!(has_label(
        &h,
        "Click a pixel to follow it through the display transfer"
    ));
    // Click the middle of the screen image.
    h.get_by_label("Image canvas (click to pick a pixel)")
        .click();
    step_until(&mut h, "screen pick answered", |h| {
        h.state()
            .trace()
            .and_then(|s| s.screen_pick.as_ref())
            .is_some()
    });
    let (key, result) = h
        .state()
        .trace()
        .and_then(|s| s.screen_pick.clone())
        .expect("screen pick");
    let (at, source, x, y) = key;
    assert_eq!((at, source), (end, ImageSource::TopScreen));
    let pick = result.expect("the top screen pixel maps to the colour buffer");
    assert!(
        pick.mapping.description.contains("via display transfer #")
            && pick.mapping.description.contains("LCD rotated"),
        "{}",
        pick.mapping.description
    );
    // The same answer as the core function on a fresh replay of the file.
    let mut rp = Replay::new(CiTrace::open(&path).expect("demo opens"));
    let want = identify_screen_pixel(&mut rp, HistoryTarget::Top, x, y, at).expect("core");
    assert_eq!(pick.mapping, want.mapping);
    assert_eq!(pick.primitive, want.primitive);
    let p = want
        .primitive
        .expect("the middle of the fog_blend screen is drawn");
    // The panel shows the mapping and the primitive; the selection stays (the screen keeps
    // showing the presented image) until a button selects the primitive.
    step_until(&mut h, "mapping and primitive shown", |h| {
        has_label(h, "top screen (")
            && has_label(
                h,
                &format!(
                    "was last written by draw #{}, triangle {}",
                    p.draw, p.triangle
                ),
            )
    });
    assert_eq!(h.state().sel.command, end);
    // The pixel history window opened on the screen pick too; close it so that the panel's
    // buttons are not covered, then go on to the triangle's vertices.
    h.state_mut().panels.pixel_history.open = false;
    h.step();
    step_until(&mut h, "fate from the detail", |h| has_label(h, "fate: "));
    h.get_by_label("Vertices ▶").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Vertices);
    assert_eq!(h.state().sel.triangle, Some(p.triangle));
    let sel = h.state().sel.command;
    let draw = h.state().trace().and_then(|s| s.draw_at_or_before(sel));
    assert_eq!(draw, Some(p.draw));
    // Back on the screen: the same pick's panel offers to select the draw again.
    h.state_mut().push(AppCommand::SelectCommand(end));
    h.state_mut().push(AppCommand::Tab(Tab::Image));
    let select = format!("Select draw #{}, triangle {} ▶", p.draw, p.triangle);
    step_until(&mut h, "select button", |h| has_label(h, &select));
    h.get_by_label(&select).click();
    h.step();
    let sel = h.state().sel.command;
    assert_eq!(
        h.state().trace().and_then(|s| s.draw_at_or_before(sel)),
        Some(p.draw)
    );
    settle(&mut h);
}

#[test]
fn a_screen_nothing_was_presented_to_says_why() {
    let mut h = harness_with(Some(demo_path("cube.ctf")), None, egui::vec2(1400.0, 900.0));
    wait_indexed(&mut h);
    // Command 1: nothing has been presented yet.
    h.state_mut().push(AppCommand::SelectCommand(1));
    h.step();
    let s = h.state_mut().trace_mut().expect("trace open");
    s.request_screen_pick((1, ImageSource::BottomScreen, 5, 5));
    step_until(&mut h, "answer", |h| {
        h.state()
            .trace()
            .and_then(|s| s.screen_pick.as_ref())
            .is_some()
    });
    let (_, result) = h
        .state()
        .trace()
        .and_then(|s| s.screen_pick.clone())
        .expect("answer");
    assert!(result.is_err(), "{result:?}");
    settle(&mut h);
}
