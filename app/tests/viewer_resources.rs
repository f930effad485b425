//! The resource timeline window, driven headlessly with egui_kittest: from a texture image,
//! "Who touched this?" lists the memory load and the draws sampling it; clicking an event selects
//! it. From the colour buffer it lists the draws rendering into it and the display transfers.

mod kittest_common;
mod viewer_common;

use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::command::AppCommand;
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::{state_at_selection, trace_index};

#[test]
fn who_touched_a_texture_lists_its_load_and_the_draws_sampling_it() {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    wait_indexed(&mut h);
    let index = trace_index(&h);
    let rec = index
        .draws
        .iter()
        .find(|d| d.info.textures[0].is_some())
        .expect("a draw sampling texture unit 0")
        .clone();
    let d = rec.info.draw;
    h.state_mut().push(AppCommand::SelectDraw(d));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::Texture {
            unit: 0,
            face: 0,
            level: 0,
        }));
    step_until(&mut h, "texture image and state", |h| {
        has_label(h, "Who touched this?") && state_at_selection(h)
    });
    h.get_by_label("Who touched this?").click();
    step_until(&mut h, "timeline", |h| has_label(h, "events:"));
    let tex = rec.info.textures[0].expect("unit 0").addr;
    assert!(has_label(&h, &format!("Who touched 0x{tex:08X}-")));
    let t = h
        .state()
        .trace()
        .and_then(|s| s.resources.clone())
        .map(|(_, t)| t)
        .expect("timeline");
    assert!(t.events.iter().any(|e| e.access.name() == "load"));
    assert!(t.events.iter().any(|e| e.draw == Some(d)));
    assert!(has_label(&h, " · load · "));
    // Click the first draw sampling it (a later draw than the selected one if any).
    let other = t
        .events
        .iter()
        .filter_map(|e| e.draw)
        .find(|&x| x != d)
        .expect("several draws sample the texture");
    h.get_by_label_contains(&format!("draw #{other} · texture-read"))
        .click();
    step_until(&mut h, "selection moved", |h| {
        h.state().sel.command == index.draws[other as usize].after.writes
            || h.state()
                .trace()
                .and_then(|s| s.draw_at_or_before(h.state().sel.command))
                == Some(other)
    });
    // Closing the window.
    h.state_mut().push(AppCommand::CloseWhoTouched);
    for _ in 0..3 {
        h.step();
    }
    assert!(!has_label(&h, "events:"));
    settle(&mut h);
}

#[test]
fn who_touched_the_colour_buffer_lists_draws_and_display_transfers() {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    wait_indexed(&mut h);
    h.state_mut().push(AppCommand::SelectDraw(1));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::Color));
    step_until(&mut h, "colour image and state", |h| {
        has_label(h, "Who touched this?") && state_at_selection(h)
    });
    h.get_by_label("Who touched this?").click();
    step_until(&mut h, "timeline", |h| has_label(h, "events:"));
    assert!(has_label(&h, " · color-write · "));
    assert!(has_label(&h, " · transfer-read · "));
    assert!(has_label(&h, " · fill · "));
    settle(&mut h);
}
