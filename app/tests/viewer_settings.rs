//! View > Settings: the keyframe and work budgets are shown and editable; applying new budgets
//! re-indexes the trace under them and the log lists what ran out.

mod kittest_common;
mod viewer_common;

use egui_kittest::kittest::Queryable;
use kittest_common::{harness, has_label, settle, step_until, wait_indexed};
use viewer_common::demo_path;
use viewer_common::ui::trace_index;

#[test]
fn settings_show_budgets_and_reindex_with_a_draw_budget() {
    let mut h = harness(Some(demo_path("cube.ctf")));
    wait_indexed(&mut h);
    let all_draws = trace_index(&h).draws.len();
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Settings…").click();
    step_until(&mut h, "the settings window", |h| {
        has_label(h, "Work budgets")
    });
    assert!(has_label(&h, "Memory budget"));
    assert!(has_label(&h, "shader-instructions"));
    assert!(
        has_label(&h, "last index:"),
        "keyframe figures of the index are shown"
    );
    settle(&mut h);
    // One draw per frame (row draws = 1, column frame = 1).
    h.state_mut().settings.cells[1][1] = "1".into();
    h.get_by_label("Apply and re-index").click();
    step_until(&mut h, "re-index under the new budget", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.index.as_ref().is_some_and(|i| i.draws.len() < all_draws))
            && h.state()
                .log
                .iter()
                .any(|l| l.starts_with("budget (frame") && l.contains("draws-per-frame"))
    });
    assert!(h.state().log.iter().any(|l| l.contains("re-indexing")));
    assert_eq!(h.state().settings.applied.work.frame.draws, 1);
    // A bad value is refused with the parser's message and changes nothing.
    h.state_mut().settings.cells[2][0] = "lots".into();
    h.get_by_label("Apply and re-index").click();
    step_until(&mut h, "the refusal", |h| has_label(h, "writes-per-trace"));
    assert_eq!(h.state().settings.applied.work.frame.draws, 1);
}
