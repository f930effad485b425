//! The State view's uniform "Edit value…" action (issue 16), driven as a person would: right-
//! click a uniform row, choose the action, find the edit prefilled with the current value in
//! the Edits panel, change the value, add it and see the re-rendered colour buffer differ.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use eframe::egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use viewer_common::*;

/// Scrolls the first widget labelled `label` into view, as a person scrolls to it, and waits
/// until it stopped moving inside the window (scrolling is animated).
fn scroll_into_view(h: &mut Harness<'static, ViewerApp>, label: &str) {
    h.get_all_by_label(label)
        .next()
        .expect("widget")
        .scroll_to_me();
    let mut last = None;
    let mut still = 0;
    for _ in 0..600 {
        h.step();
        let r = h.get_all_by_label(label).next().map(|n| n.rect());
        let inside = r.is_some_and(|r| r.top() >= 0.0 && r.bottom() < 900.0);
        still = if r == last && inside { still + 1 } else { 0 };
        if still >= 5 {
            return;
        }
        last = r;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    panic!("{label} never settled in view: {last:?}");
}

#[test]
fn edit_a_float_uniform_from_the_state_view() {
    let dir = temp_dir("uniform-edit");
    let path = write_trace(&dir);
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    // Draw 2 (its trigger selected): the State view shows c0 = TINT as the draw saw it.
    h.state_mut().push(AppCommand::SelectDraw(2));
    h.state_mut().push(AppCommand::Tab(Tab::State));
    step_until(&mut h, "the vertex shader's uniforms", |h| {
        has_label(h, "c0") && has_label(h, "Float uniforms c0-c95")
    });
    // Scroll to the uniform's row and right-click it: the context menu offers the edit.
    scroll_into_view(&mut h, "c0");
    h.get_by_label("c0").click_secondary();
    h.step();
    step_until(&mut h, "context menu", |h| {
        has_label(h, "Edit value… (Edits)")
    });
    h.get_by_label("Edit value… (Edits)").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Edits);
    // Prefilled with the current value, in edit-script syntax, for the selected draw.
    assert_eq!(h.state().panels.edits.line(), "draw 2: vs c0=1,0.5,1,1");
    assert!(h.state().panels.edits.list.edits.is_empty());
    step_until(&mut h, "the empty comparison", |h| {
        has_label(h, "The edits change no pixel here.")
    });
    // Change the value (the field has the focus; select all, type) and add it.
    h.get_by_role_and_label(Role::TextInput, "Add edit:")
        .focus();
    h.step();
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.step();
    h.get_by_role_and_label(Role::TextInput, "Add edit:")
        .type_text("draw 2: vs c0=0,0.5,1,1");
    h.step();
    assert_eq!(h.state().panels.edits.line(), "draw 2: vs c0=0,0.5,1,1");
    h.get_by_label("Add").click();
    h.step();
    assert_eq!(h.state().panels.edits.list.edits.len(), 1);
    // The list shows it, and the re-render differs where draw 2 drew (red × 0).
    assert!(has_label(&h, "draw 2: vs c0=0,0.5,1,1"));
    step_until(&mut h, "the edited image", |h| {
        has_label(h, "pixel(s) differ.")
    });
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn integer_and_boolean_uniforms_offer_the_edit_too() {
    let dir = temp_dir("uniform-edit-intbool");
    let path = write_trace(&dir);
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    h.state_mut().push(AppCommand::SelectDraw(1));
    h.state_mut().push(AppCommand::Tab(Tab::State));
    step_until(&mut h, "state", |h| {
        has_label(h, "Integer and boolean uniforms")
    });
    scroll_into_view(&mut h, "Integer and boolean uniforms");
    h.get_all_by_label("Integer and boolean uniforms")
        .next()
        .expect("the vertex shader's section")
        .click();
    step_until(&mut h, "integer uniforms", |h| has_label(h, "i1"));
    scroll_into_view(&mut h, "i1");
    h.get_all_by_label("i1")
        .next()
        .expect("i1 row")
        .click_secondary();
    h.step();
    step_until(&mut h, "context menu", |h| {
        has_label(h, "Edit value… (Edits)")
    });
    h.get_by_label("Edit value… (Edits)").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Edits);
    assert!(
        h.state().panels.edits.line().starts_with("draw 1: vs i1="),
        "{}",
        h.state().panels.edits.line()
    );
    h.state_mut().push(AppCommand::Tab(Tab::State));
    step_until(&mut h, "boolean uniforms", |h| has_label(h, "b3=0"));
    scroll_into_view(&mut h, "b3=0");
    h.get_all_by_label("b3=0")
        .next()
        .expect("b3")
        .click_secondary();
    h.step();
    step_until(&mut h, "context menu", |h| {
        has_label(h, "Edit value… (Edits)")
    });
    h.get_by_label("Edit value… (Edits)").click();
    h.step();
    assert_eq!(h.state().panels.edits.line(), "draw 1: vs b3=0");
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}
