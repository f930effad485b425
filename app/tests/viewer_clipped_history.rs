//! The Pixel history window on triangles that clipping removed (issue 15), driven as a person
//! would: on the clipping variant of `viewer_common`'s synthetic trace, click a pixel that no
//! draw wrote, open its history from the image panel and read that draw 0 (crossing the near
//! plane) and draw 1 (beyond it) were clipped before raster there.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_core::debug::fragment::FragmentFate;
use gpu_core::history::HistoryEvent;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use picaview::viewer::protocol::ImageSource;
use viewer_common::*;

/// Screen position of the centre of image pixel (x, row) of the `W × H` colour buffer fitted
/// into the canvas (no pan, no rotation).
fn pixel_pos(h: &Harness<'static, ViewerApp>, x: u32, row: u32) -> egui::Pos2 {
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

fn click_at(h: &mut Harness<'static, ViewerApp>, pos: egui::Pos2) {
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

#[test]
fn history_of_an_unwritten_pixel_shows_the_clipped_triangles() {
    let dir = temp_dir("clipped-history");
    let path = dir.join("clip.ctf");
    std::fs::write(&path, make_clip_trace()).expect("write trace");
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    h.state_mut().prefs.image.rotate = false;
    h.state_mut().push(AppCommand::SelectDraw(2));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::Color));
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Image);
    step_until(&mut h, "colour buffer", |h| {
        has_label(h, "colour buffer 0x")
    });
    // Image pixel (3, 6): in draw 0's clipped part, under draw 1; nothing wrote it.
    let pos = pixel_pos(&h, 3, 6);
    click_at(&mut h, pos);
    step_until(&mut h, "identified", |h| {
        has_label(h, "no draw of this frame wrote it")
    });
    h.get_by_label("Pixel history ▶").click();
    step_until(&mut h, "history answered", |h| {
        h.state()
            .trace()
            .and_then(|s| s.pixel_history.as_ref())
            .is_some_and(|(k, _)| (k.1, k.2, k.3) == (ImageSource::Color, 3, 6))
    });
    let (_, result) = h
        .state()
        .trace()
        .and_then(|s| s.pixel_history.clone())
        .expect("history");
    let hist = result.expect("the colour-buffer pixel has a history");
    let fates: Vec<(u64, Vec<Option<FragmentFate>>)> = hist
        .events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Draw {
                draw, fragments, ..
            } => Some((*draw, fragments.iter().map(|f| f.fate).collect())),
            HistoryEvent::Engine { .. } => None,
        })
        .collect();
    assert_eq!(
        fates,
        vec![
            (0, vec![Some(FragmentFate::ClippedAway)]),
            (1, vec![Some(FragmentFate::ClippedAway)]),
        ]
    );
    // The window says so, per draw, and names the assembled triangle.
    step_until(&mut h, "draw sections", |h| {
        has_label(
            h,
            "draw 0 (draw 0 of the frame): 1 fragment(s): clipped before raster",
        ) && has_label(
            h,
            "draw 1 (draw 1 of the frame): 1 fragment(s): clipped before raster",
        )
    });
    assert!(has_label(
        &h,
        "assembled triangle 0 at window (3,57): clipped before raster"
    ));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}
