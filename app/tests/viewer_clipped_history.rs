//! The Pixel history window on triangles that clipping removed (issue 15), driven as a person
//! would: on the clipping variant of `viewer_common`'s synthetic trace, click a pixel that no
//! draw wrote, open its history from the image panel and read that draw 0 (crossing the near
//! plane) and draw 1 (beyond it) were clipped before raster there.

mod kittest_common;
mod viewer_common;

use egui_kittest::kittest::Queryable;
use gpu_core::debug::fragment::FragmentFate;
use gpu_core::history::HistoryEvent;
use kittest_common::*;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::{click_at, pixel_pos};
use viewer_common::*;

#[test]
fn history_of_an_unwritten_pixel_shows_the_clipped_triangles() {
    let (dir, path) = write_temp_trace("clipped-history", "clip.ctf", &make_clip_trace());
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
