//! The resource timeline as a cancellable background request with progress (issue 16), driven
//! as a person would: on a long trace (6000 frames of `viewer_common`'s pattern, a pass of a
//! few seconds), "Who touched this?" on the colour buffer shows a progress bar with Cancel;
//! cancelling lists the events found so far and says so; "Run again" runs the whole pass.

mod kittest_common;
mod viewer_common;

use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::command::AppCommand;
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::state_at_selection;
use viewer_common::*;

const FRAMES_LONG: u32 = 6000;

#[test]
fn who_touched_shows_progress_cancels_and_runs_again() {
    let (dir, path) = write_temp_trace("who-cancel", "long.ctf", &make_long_trace(FRAMES_LONG));
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    h.state_mut().push(AppCommand::SelectDraw(2));
    h.state_mut()
        .push(AppCommand::ShowImage(ImageSource::Color));
    step_until(&mut h, "colour buffer and state", |h| {
        has_label(h, "Who touched this?") && state_at_selection(h)
    });
    h.get_by_label("Who touched this?").click();
    // The pass reports progress; the window shows a bar and Cancel.
    step_until(&mut h, "progress", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.resources_progress.is_some())
            && has_label(h, "Cancel")
            && has_label(h, "event(s) so far")
    });
    assert!(
        h.state().trace().is_some_and(
            |s| s.resources.is_none() && s.resources_running(COLOR_ADDR, u64::from(W * H * 4))
        ),
        "the pass of the colour buffer's range runs"
    );
    h.get_by_label("Cancel").click();
    step_until(&mut h, "cancelled answer", |h| {
        h.state().trace().is_some_and(|s| s.resources.is_some())
    });
    let (partial, cancelled) = {
        let s = h.state().trace().expect("trace");
        let (_, t) = s.resources.clone().expect("timeline");
        (t, s.resources_cancelled)
    };
    assert!(cancelled, "the pass was cancelled");
    // 3 draws per frame write the colour buffer: a cancelled pass saw fewer than all.
    assert!(
        partial.stats.draws < u64::from(FRAMES_LONG * DRAWS_PER_FRAME),
        "{:?}",
        partial.stats
    );
    step_until(&mut h, "cancel notice", |h| {
        has_label(h, "Cancelled: only the events found")
    });
    // Run again: the whole pass this time.
    h.get_by_label("Run again").click();
    step_until(&mut h, "complete answer", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.resources.is_some() && !s.resources_cancelled)
    });
    let full = h
        .state()
        .trace()
        .and_then(|s| s.resources.clone())
        .map(|(_, t)| t)
        .expect("timeline");
    assert_eq!(full.stats.draws, u64::from(FRAMES_LONG * DRAWS_PER_FRAME));
    assert!(full.stats.events >= full.stats.draws);
    assert!(!has_label(&h, "Cancelled: only the events found"));
    step_until(&mut h, "list", |h| has_label(h, "events:"));
    // The worker answers other requests again: the selection's state follows.
    h.state_mut().push(AppCommand::SelectDraw(1));
    step_until(&mut h, "state after the pass", state_at_selection);
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}
