//! Screen picks and pixel history on a stereoscopic top screen whose image was transferred in
//! an earlier frame (issue 15), driven as a person would: open
//! `tests/fixtures/screens/stereo_lookback.ctf` (see `picaview_tests::screen_scenes`: frame 0
//! renders red draw 0 for the left eye and green draw 1 for the right eye and transfers both;
//! frame 1 draws into the left buffer and presents nothing), select the end of frame 1, show
//! the top screen, switch to the right eye, click pixel (100, 20): the pick names draw 1 and
//! the Pixel history window shows frame 0's history up to its transfer; back on the left eye,
//! the same pixel names draw 0.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use gpu_core::history::HistoryEvent;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::click_at;

/// The top screen image size.
const W: u32 = 400;
const H: u32 = 240;

fn fixture() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/screens/stereo_lookback.ctf")
}

/// Screen position of the centre of screen pixel (x, y) fitted into the canvas.
fn pixel_pos(h: &Harness<'static, ViewerApp>, x: u32, y: u32) -> egui::Pos2 {
    let canvas = h
        .get_by_label("Image canvas (click to pick a pixel)")
        .rect();
    let fit = (canvas.width() / W as f32).min(canvas.height() / H as f32);
    let size = egui::vec2(W as f32, H as f32) * fit;
    let img = egui::Rect::from_center_size(canvas.center(), size);
    egui::pos2(
        img.left() + (x as f32 + 0.5) * fit,
        img.top() + (y as f32 + 0.5) * fit,
    )
}

/// Clicks screen pixel (100, 20) of `source` and waits for the pick and the history; returns
/// (picked draw, frame of the history, draws in the history).
fn pick_and_history(
    h: &mut Harness<'static, ViewerApp>,
    at: u64,
    source: ImageSource,
) -> (Option<u64>, u32, Vec<u64>) {
    // The history window of an earlier pick could cover the canvas.
    h.state_mut().panels.pixel_history.open = false;
    h.step();
    let pos = pixel_pos(h, 100, 20);
    click_at(h, pos);
    let key = (at, source, 100, 20);
    step_until(h, "screen pick and history answered", |h| {
        h.state().trace().is_some_and(|s| {
            s.screen_pick.as_ref().is_some_and(|(k, _)| *k == key)
                && s.pixel_history.as_ref().is_some_and(|(k, _)| *k == key)
        })
    });
    let s = h.state().trace().expect("trace open");
    let pick = s.screen_pick.clone().expect("pick").1.expect("mapped");
    let hist = s
        .pixel_history
        .clone()
        .expect("history")
        .1
        .expect("history");
    assert_eq!(hist.request.frame, 1);
    let draws = hist
        .events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Draw { draw, .. } => Some(*draw),
            HistoryEvent::Engine { .. } => None,
        })
        .collect();
    assert_eq!(pick.frame, hist.frame);
    (pick.primitive.map(|p| p.draw), hist.frame, draws)
}

#[test]
fn right_eye_pick_and_history_of_an_image_transferred_in_the_previous_frame() {
    let mut h = harness_with(Some(fixture()), None, egui::vec2(1400.0, 900.0));
    wait_indexed(&mut h);
    h.state_mut().prefs.image.rotate = false;
    let (frame0_end, end) = {
        let s = h.state().trace().expect("trace open");
        let index = s.index.as_ref().expect("indexed");
        (index.frames[0].end.writes, index.frames[1].end.writes)
    };
    // Early in frame 0 the LCD is still in 2D: the right eye is not offered.
    h.state_mut().push(AppCommand::SelectCommand(1));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::TopScreen));
    h.step();
    step_until(&mut h, "eye toggle with the state", |h| {
        has_label(h, "Eye:")
            && h.state()
                .trace()
                .and_then(|s| s.state.as_ref())
                .is_some_and(|st| st.at == 1)
    });
    h.step();
    assert!(h.get_by_label("Right").accesskit_node().is_disabled());

    // The end of frame 1: 3D on, both eyes show frame 0's transfers.
    h.state_mut().push(AppCommand::SelectCommand(end));
    h.step();
    step_until(&mut h, "state at the end of frame 1", |h| {
        h.state()
            .trace()
            .and_then(|s| s.state.as_ref())
            .is_some_and(|st| st.at == end)
    });
    h.step();
    assert!(!h.get_by_label("Right").accesskit_node().is_disabled());
    h.get_by_label("Right").click();
    h.step();
    assert_eq!(h.state().prefs.image.source, ImageSource::TopScreenRight);
    step_until(&mut h, "right-eye image", |h| {
        has_label(h, "Image canvas (click to pick a pixel)")
            && h.state()
                .trace()
                .is_some_and(|s| s.any_image(ImageSource::TopScreenRight) == Some(end))
    });
    let (picked, frame, draws) = pick_and_history(&mut h, end, ImageSource::TopScreenRight);
    assert_eq!((picked, frame, draws), (Some(1), 0, vec![1]));
    // The panel and the window say where the image came from.
    step_until(&mut h, "panel and window text", |h| {
        has_label(
            h,
            "buffer (219, 100) was last written by draw #1, triangle 0",
        ) && has_label(
            h,
            "The screen shows an image rendered and transferred in frame 0: its events up to that transfer.",
        ) && has_label(h, "draw 1 (draw 1 of frame 0): 1 fragment(s): passed")
    });
    let hist = h
        .state()
        .trace()
        .and_then(|s| s.pixel_history.clone())
        .expect("history")
        .1
        .expect("ok");
    let t = hist.mapping.transfer.expect("through a transfer");
    assert!(t.at_write < frame0_end);
    assert!(
        hist.mapping
            .description
            .starts_with("top screen (right eye) (100,20) -> "),
        "{}",
        hist.mapping.description
    );

    // Back to the left eye: the same pixel is draw 0's.
    h.get_by_label("Left").click();
    h.step();
    assert_eq!(h.state().prefs.image.source, ImageSource::TopScreen);
    let (picked, frame, draws) = pick_and_history(&mut h, end, ImageSource::TopScreen);
    assert_eq!((picked, frame, draws), (Some(0), 0, vec![0]));
    settle(&mut h);
}
