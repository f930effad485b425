//! The Edits panel driven headlessly with egui_kittest (issue 16): an override added from the
//! Commands view's context-menu command changes the before/after comparison, toggling it off
//! makes the images equal again, undo brings it back and removes it, and a saved trace is
//! written.

mod kittest_common;
mod viewer_common;

use eframe::egui::accesskit::Role;
use egui_kittest::kittest::Queryable;
use gpu_core::debug::DrawKind;
use gpu_core::replay::edit::EditKind;
use kittest_common::*;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::Tab;
use viewer_common::demo_path;
use viewer_common::ui::trace_index;

#[test]
fn edit_list_override_toggle_undo_save() {
    let mut h = harness(Some(demo_path("cube.ctf")));
    wait_indexed(&mut h);
    let (write, reg) = {
        let index = trace_index(&h);
        let d = &index.draws[1];
        let reg = if d.info.kind == DrawKind::Arrays {
            0x22E
        } else {
            0x22F
        };
        (d.before.writes + 1, reg)
    };
    // The comparison shows the colour buffer right after draw 1 (the cube).
    h.state_mut().push(AppCommand::SelectDraw(1));
    h.state_mut().push(AppCommand::Tab(Tab::Edits));
    step_until(&mut h, "the empty comparison", |h| {
        has_label(h, "The edits change no pixel here.")
    });
    // What "Override this write… (Edits)" in the Commands view does: draw 1's trigger
    // written as 0, so draw 1 does not run.
    h.state_mut()
        .push(AppCommand::AddEdit(Box::new(EditKind::OverrideWrite {
            write,
            reg,
            value: 0,
            mask: Some(0xF),
        })));
    step_until(&mut h, "the edited image", |h| {
        has_label(h, "pixel(s) differ.")
    });
    let text = format!("cmd {write}: 0x{reg:03X}=0x00000000/0xF");
    assert!(has_label(&h, &text), "the list shows {text}");
    // Toggle it off: before and after are equal again.
    h.get_by_label(&text).click();
    step_until(&mut h, "the disabled edit's comparison", |h| {
        has_label(h, "The edits change no pixel here.")
    });
    // Undo the toggle: the image differs again.
    h.get_by_label("Undo").click();
    step_until(&mut h, "the re-enabled edit", |h| {
        has_label(h, "pixel(s) differ.")
    });
    // Save the edited trace through the worker.
    let out =
        std::env::temp_dir().join(format!("picaview-viewer-edits-{}.ctf", std::process::id()));
    let path = out.display().to_string();
    h.get_by_role_and_label(Role::TextInput, "Save as .ctf:")
        .focus();
    h.step();
    h.get_by_role_and_label(Role::TextInput, "Save as .ctf:")
        .type_text(&path);
    h.step();
    h.get_by_label("Save").scroll_to_me();
    h.step();
    h.get_by_label("Save").click();
    step_until(&mut h, "the saved trace", |h| {
        h.state().trace().is_some_and(|s| s.edit_saved.is_some())
    });
    let saved = h.state().trace().and_then(|s| s.edit_saved.clone());
    assert!(
        matches!(&saved, Some(Ok(m)) if m.starts_with("saved ")),
        "{saved:?}"
    );
    assert!(has_label(&h, "saved "));
    let bytes = std::fs::read(&out).expect("saved file");
    let _ = std::fs::remove_file(&out);
    assert!(bytes.starts_with(b"CiTr"));
    // Undo the addition: the list is empty.
    h.get_by_label("Undo").click();
    h.get_by_label("Undo").click();
    step_until(&mut h, "the empty list", |h| has_label(h, "No edits."));
    settle(&mut h);
}
