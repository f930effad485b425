//! Compare mode with an edit list on side B (issue 16, "an edit list on/off"): the Edits tab's
//! list (a TEV edit before draw 5 of the cube demo) applied to side B only. "First difference"
//! names draw 5; with the edit disabled in the list the two sides are the same.

mod kittest_common;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use gpu_core::replay::diff::DiffOutcome;
use gpu_core::replay::edit::{Edit, EditKind, EditList};
use kittest_common::*;
use picaview::viewer::ViewerApp;

fn tev_edit(enabled: bool) -> EditList {
    let set = |reg, value| Edit {
        enabled,
        kind: EditKind::SetRegister {
            draw: 5,
            reg,
            value,
            mask: 0xF,
        },
    };
    EditList {
        edits: vec![
            set(0x0C0, 0x000E_000E),
            set(0x0C2, 0),
            set(0x0C3, 0xFF00_FF00),
        ],
    }
}

fn start_and_find(h: &mut Harness<'static, ViewerApp>) {
    h.get_by_label("Start comparing").click();
    step_until(h, "both traces indexed", |h| {
        h.state().panels.compare.ready.is_some() || h.state().panels.compare.error.is_some()
    });
    assert_eq!(h.state().panels.compare.error, None);
    h.get_by_label("First difference").click();
    step_until(h, "the diff", |h| h.state().panels.compare.result.is_some());
}

#[test]
fn compare_mode_with_the_edit_list_on_side_b() {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    wait_indexed(&mut h);
    h.state_mut().panels.edits.list = tev_edit(true);
    h.get_by_label("Compare").click();
    step_until(&mut h, "the compare tab", |h| {
        has_label(h, "Start comparing")
    });
    assert!(has_label(
        &h,
        "B: apply the Edits tab's list (3 enabled edit(s))"
    ));
    h.get_by_label("B: apply the Edits tab's list (3 enabled edit(s))")
        .click();
    step_until(&mut h, "the checkbox", |h| h.state().panels.compare.edits_b);
    start_and_find(&mut h);
    let result = h.state().panels.compare.result.clone();
    match result {
        Some(Ok(DiffOutcome::Different(d))) => assert_eq!(d.draw, Some(5), "{}", d.summary()),
        other => panic!("expected a difference at draw 5, got {other:?}"),
    }
    step_until(&mut h, "the summary", |h| {
        has_label(h, "first difference: frame 0 draw 5")
    });
    // The same list, disabled: the sides agree.
    h.state_mut().panels.edits.list = tev_edit(false);
    settle(&mut h);
    start_and_find(&mut h);
    let result = h.state().panels.compare.result.clone();
    assert!(
        matches!(result, Some(Ok(DiffOutcome::Same { draws: 66, .. }))),
        "{result:?}"
    );
    settle(&mut h);
}
