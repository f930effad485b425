//! Issue 17 ("the viewer as a newcomer meets it"), driven headlessly with egui_kittest the way a
//! person would: data-port writes shown as what they set, triggers never "redundant", the File >
//! Open path field without a desktop portal, State in two columns at 1280x800, the geometry
//! shader of a GS draw, the `.shbin` debugger's inputs/uniforms/budget (remembered per file),
//! Back/Forward, search with Enter/Shift+Enter, `--draw` out of range, the log, triangle counts
//! that agree, and image export that never overwrites silently.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::panels::timeline::tri_summary;
use picaview::viewer::widgets::fmt_vec4;
use viewer_common::ui::{first_gs_draw, trace_index};
use viewer_common::*;

fn labels_containing(h: &Harness<'static, ViewerApp>, text: &str) -> Vec<String> {
    h.query_all_by_label_contains(text)
        .map(|n| format!("{n:?}"))
        .collect()
}

fn steps(h: &mut Harness<'static, ViewerApp>, n: usize) {
    for _ in 0..n {
        h.step();
    }
}

fn opened(name: &str) -> (Harness<'static, ViewerApp>, std::path::PathBuf) {
    let dir = temp_dir(name);
    let path = write_trace(&dir);
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    (h, dir)
}

fn demo() -> Harness<'static, ViewerApp> {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    open_file(demo)
}

fn open_file(path: std::path::PathBuf) -> Harness<'static, ViewerApp> {
    let mut h = harness(Some(path));
    wait_indexed(&mut h);
    h
}

#[test]
fn uniform_uploads_read_as_what_they_set_and_triggers_are_never_redundant() {
    let (mut h, dir) = opened("i17-ports");
    let index = trace_index(&h);
    let prov = h
        .state()
        .trace()
        .and_then(|s| s.provenance.clone())
        .expect("history");
    // The upload of c0 before draw 1 repeats the values of the upload before draw 0, and draw
    // 1's DRAWARRAYS write repeats draw 0's value 1.
    let trig1 = index.draws[1].before.writes + 1;
    let c0 = prov.uniform_setter(0, 0, trig1).expect("c0 uploaded");
    h.get_by_label("Commands").click();
    h.state_mut().push(AppCommand::SelectCommand(c0));
    let want = format!("VS c0 = {} [f32]", fmt_vec4(&TINT));
    step_until(&mut h, "the upload's effect", |h| has_label(h, &want));
    // The first words of the vector say which register and word they are.
    assert!(has_label(&h, "VS c0 word 1/4 [f32]"));
    // The detail of the selected write says it too.
    assert!(has_label(&h, &format!("⇒ {want}")));
    // No data-port or trigger write is "redundant" although their values repeat.
    for row in labels_containing(&h, "[redundant]") {
        assert!(
            !row.contains("DRAWARRAYS") && !row.contains("FLOATUNIFORM"),
            "an action write is marked redundant: {row}"
        );
    }
    assert!(
        has_label(&h, "DRAWARRAYS"),
        "the draw trigger rows are visible"
    );
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn file_open_without_a_portal_shows_a_path_field_with_completion() {
    let dir = temp_dir("i17-open");
    let path = write_trace(&dir);
    let mut h = harness(None);
    steps(&mut h, 2);
    // Ctrl+O: no native dialog can appear here, so the path field does.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    steps(&mut h, 3);
    assert!(has_label(&h, "No native file dialog is available"));
    assert!(h.state().open_field.is_some());
    let typed = format!("{}/synth", dir.display());
    h.get_by_role_and_label(Role::TextInput, "Path:")
        .type_text(&typed);
    steps(&mut h, 2);
    // The completion list shows the matching file; Tab completes to it.
    assert!(has_label(&h, "synthetic.ctf"));
    h.key_press(egui::Key::Tab);
    steps(&mut h, 2);
    assert_eq!(
        h.state().open_field.as_ref().map(|f| f.text.clone()),
        Some(path.display().to_string())
    );
    h.key_press(egui::Key::Enter);
    step_until(&mut h, "the typed trace opened", |h| {
        h.state().trace().is_some_and(|s| s.index.is_some())
    });
    assert_eq!(h.state().trace().map(|s| s.info.path.clone()), Some(path));
    assert!(h.state().open_field.is_none());
    // A path that does not exist says so instead of failing silently.
    h.state_mut().push(AppCommand::OpenPathField);
    steps(&mut h, 2);
    h.get_by_role_and_label(Role::TextInput, "Path:")
        .type_text("-no-such-file");
    steps(&mut h, 1);
    h.get_by_label("Open").click();
    steps(&mut h, 2);
    assert!(has_label(&h, "does not exist"));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn state_uses_two_columns_and_shows_textures_and_tev_above_the_fold_at_1280x800() {
    let dir = temp_dir("i17-state");
    let path = write_trace(&dir);
    let mut h = harness_with(Some(path), None, egui::vec2(1280.0, 800.0));
    wait_indexed(&mut h);
    h.get_by_label("State").click();
    step_until(&mut h, "texture units", |h| {
        has_label(h, "Texture unit 0: enabled")
    });
    // The timeline keeps its width (long draw rows elide) and leaves the width to the views.
    let tabs = h.get_by_label("Commands").rect();
    assert!(
        tabs.left() < 420.0,
        "the timeline grew: tabs start at {tabs:?}"
    );
    let vertex = h.get_by_label("Vertex input").rect();
    let tex = h.get_by_label("Texture units").rect();
    let tev = h.get_by_label("TEV (colour combiners)").rect();
    // Side by side: the texture units start level with the vertex input, to its right.
    assert!(tex.left() > vertex.right(), "{vertex:?} {tex:?}");
    assert!((tex.top() - vertex.top()).abs() < 4.0, "{vertex:?} {tex:?}");
    assert!(tev.bottom() < 800.0, "TEV is below the fold: {tev:?}");
    // The TEV stages read as formulas, pass-through stages folded into one line.
    assert!(has_label(&h, "rgb = "));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn a_geometry_shader_draw_is_labelled_and_its_gs_disassembly_is_shown() {
    let mut h = open_file(demo_path("geoshader.ctf"));
    let d = first_gs_draw(&h);
    h.state_mut().push(AppCommand::SelectDraw(d));
    steps(&mut h, 2);
    h.get_by_label("Shader").click();
    step_until(&mut h, "shader trace", |h| {
        has_label(h, "before the first instruction")
    });
    assert!(has_label(&h, &format!("Draw #{d} ·")));
    assert!(has_label(&h, "+GS: vertex shader"));
    h.get_by_label_contains("Geometry shader of this draw")
        .click();
    steps(&mut h, 3);
    let gs = h
        .state()
        .trace()
        .and_then(|s| s.detail.as_ref())
        .and_then(|(_, r)| r.as_ref().ok())
        .and_then(|i| i.gs_listing.clone())
        .expect("the inspection carries the GS listing");
    let line = gs
        .lines
        .iter()
        .find(|l| l.text.contains("emit") || l.text.contains("end"))
        .expect("a GS has emit/end");
    assert!(has_label(&h, &line.text), "{} not shown", line.text);
    // The timeline names it the same way.
    assert!(labels_containing(&h, "+GS").len() >= 2);
    settle(&mut h);
}

const SHBIN_SRC: &str = "
.fvec tint
.out outpos position
.out outclr color
.in aPosition v0
.in aColor v1
.proc main
    mov outpos, v0
    mul outclr, tint, v1
    end
.end
";

#[test]
fn shbin_debugger_edits_inputs_and_uniforms_names_registers_and_remembers_them() {
    let dir = temp_dir("i17-shbin");
    let bytes = shader_unit::asm::assemble_to_shbin(&[("t.v.pica", SHBIN_SRC)]).expect("assembles");
    let path = dir.join("tint.shbin");
    std::fs::write(&path, bytes).expect("write shbin");
    let mut h = harness(Some(path.clone()));
    step_until(&mut h, "shader doc", |h| has_label(h, "v0 aPosition"));
    assert!(has_label(&h, "v1 aColor"));
    assert!(has_label(&h, "c0 tint"));
    // Type the uniform and an input, then Run.
    let set = |h: &mut Harness<'static, ViewerApp>, label: &str, text: &str| {
        h.get_by_role_and_label(Role::TextInput, label).focus();
        h.step();
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
        h.step();
        h.get_by_role_and_label(Role::TextInput, label)
            .type_text(text);
        h.step();
    };
    set(&mut h, "c0 tint", "2, 2, 2, 2");
    set(&mut h, "v1 aColor", "0.5, 0.25, 1, 1");
    h.get_by_label("Run").click();
    step_until(&mut h, "run", |h| {
        has_label(h, "before the first instruction")
    });
    assert!(has_label(&h, "END after 3 instructions"));
    h.get_by_label("▶|").click();
    step_until(&mut h, "last step", |h| has_label(h, "step 3 of 3"));
    // Outputs are named by their semantics and hold tint · colour.
    assert!(has_label(&h, "o0 position"));
    assert!(has_label(&h, "o1 color"));
    assert!(has_label(&h, &fmt_vec4(&[1.0, 0.5, 2.0, 2.0])));
    // Remembered for this file: reopening brings the typed values back.
    h.state_mut().push(AppCommand::Close);
    steps(&mut h, 2);
    h.state_mut().push(AppCommand::Open(path.clone()));
    step_until(&mut h, "reopened", |h| has_label(h, "c0 tint"));
    let edits = match &h.state().doc {
        picaview::viewer::session::Document::Shader(d) => d.edits.clone(),
        _ => panic!("the shader binary is open"),
    };
    assert_eq!(edits.floats[0], "2, 2, 2, 2");
    assert_eq!(edits.inputs[1], "0.5, 0.25, 1, 1");
    // The instruction budget is the user's; running out says why the run stopped.
    if let picaview::viewer::session::Document::Shader(d) = &mut h.state_mut().doc {
        d.edits.budget = 2;
    }
    h.get_by_label("Run").click();
    step_until(&mut h, "budget stop", |h| {
        has_label(h, "instruction budget of 2 exhausted")
    });
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn back_and_forward_walk_the_selection_history() {
    let (mut h, dir) = opened("i17-history");
    let index = trace_index(&h);
    let start = h.state().sel.command;
    let t0 = index.draws[0].before.writes + 1;
    let t1 = index.draws[1].before.writes + 1;
    h.key_press(egui::Key::Home);
    steps(&mut h, 2);
    h.key_press(egui::Key::ArrowRight);
    steps(&mut h, 2);
    h.key_press(egui::Key::ArrowRight);
    steps(&mut h, 2);
    assert_eq!(h.state().sel.command, t1);
    h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowLeft);
    steps(&mut h, 2);
    assert_eq!(h.state().sel.command, t0);
    h.get_by_label("⟵").click();
    steps(&mut h, 2);
    assert_eq!(h.state().sel.command, 0);
    h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowRight);
    steps(&mut h, 2);
    assert_eq!(h.state().sel.command, t0);
    h.get_by_label("⟶").click();
    steps(&mut h, 2);
    assert_eq!(h.state().sel.command, t1);
    // Back three times reaches where the trace opened.
    for _ in 0..3 {
        h.key_press_modifiers(egui::Modifiers::ALT, egui::Key::ArrowLeft);
        steps(&mut h, 2);
    }
    assert_eq!(h.state().sel.command, start);
    assert!(!h.state().can_go_back());
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn search_jumps_to_the_match_and_enter_steps_through_matches() {
    let (mut h, dir) = opened("i17-search");
    let index = trace_index(&h);
    let trig: Vec<u64> = (0..3).map(|d| index.draws[d].before.writes + 1).collect();
    h.get_by_label("Commands").click();
    steps(&mut h, 2);
    h.get_by_role_and_label(Role::TextInput, "Search:").focus();
    h.step();
    h.get_by_role_and_label(Role::TextInput, "Search:")
        .type_text("DRAWARRAYS");
    h.step();
    h.key_press(egui::Key::Enter);
    // The answer arrives, then the selection jumps to the first match (wrapping from the end
    // of the frame, where the trace opened).
    step_until(&mut h, "first match selected", |h| {
        h.state().sel.command == trig[0]
    });
    assert!(has_label(&h, "3 match(es), at 1"));
    h.key_press(egui::Key::Enter);
    steps(&mut h, 3);
    assert_eq!(h.state().sel.command, trig[1]);
    h.key_press(egui::Key::Enter);
    steps(&mut h, 3);
    assert_eq!(h.state().sel.command, trig[2]);
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::Enter);
    steps(&mut h, 3);
    assert_eq!(h.state().sel.command, trig[1]);
    assert!(has_label(&h, "3 match(es), at 2"));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn draw_out_of_range_is_reported() {
    let dir = temp_dir("i17-draw");
    let path = write_trace(&dir);
    let mut h = harness_with(Some(path), Some(999), egui::vec2(1280.0, 800.0));
    wait_indexed(&mut h);
    steps(&mut h, 2);
    assert!(has_label(&h, "--draw 999 is out of range"));
    assert!(h.state().errors.iter().any(|e| e.contains("0..=5")));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_log_lists_newest_last_and_follows_it() {
    let dir = temp_dir("i17-log");
    let path = write_trace(&dir);
    let mut h = harness_with(Some(path.clone()), None, egui::vec2(1280.0, 800.0));
    wait_indexed(&mut h);
    // Opened, then indexed (the session's message), in that order.
    let log = h.state().log.clone();
    let opened = log.iter().position(|l| l.starts_with("opened "));
    let indexed = log.iter().position(|l| l.starts_with("indexed: "));
    assert!(opened < indexed && indexed.is_some(), "{log:?}");
    for i in 0..300 {
        h.state_mut().log.push(format!("message number {i:03}"));
    }
    steps(&mut h, 4);
    assert!(
        has_label(&h, "message number 299"),
        "the newest line is shown"
    );
    assert!(
        !has_label(&h, "message number 000"),
        "the view follows the newest"
    );
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn triangle_counts_and_draw_names_agree_between_timeline_state_and_vertices() {
    let mut h = demo();
    let index = trace_index(&h);
    let d = index
        .draws
        .iter()
        .position(|r| r.stats.triangles_assembled != r.stats.triangles_rasterized)
        .unwrap_or(1);
    let rec = &index.draws[d];
    let label = picaview::viewer::panels::timeline::draw_label(d as u64, rec);
    let tris = tri_summary(&rec.stats);
    h.state_mut().push(AppCommand::SelectDraw(d as u64));
    // The timeline scrolls to the selected draw and shows its name and counts.
    step_until(&mut h, "timeline row", |h| {
        labels_containing(h, &label)
            .iter()
            .any(|r| r.contains(&tris))
    });
    h.get_by_label("Vertices").click();
    step_until(&mut h, "vertices heading", |h| {
        has_label(h, &format!("→ {tris}"))
    });
    assert!(has_label(&h, &label));
    h.get_by_label("State").click();
    step_until(&mut h, "state draw line", |h| {
        has_label(h, &format!("{label} · {} vtx → {tris}", rec.info.count))
    });
    // The End key selects the last command; the timeline follows to the last draw.
    h.key_press(egui::Key::End);
    let last = index.draws.len() - 1;
    step_until(&mut h, "last draw row", |h| {
        has_label(h, &format!("Draw #{last} ·"))
    });
    settle(&mut h);
}

#[test]
fn save_image_writes_next_to_the_trace_and_never_overwrites_silently() {
    let (mut h, dir) = opened("i17-save");
    h.get_by_label("Image").click();
    step_until(&mut h, "image", |h| has_label(h, "Export PNG:"));
    let at = h.state().sel.command;
    h.get_by_label("Save").click();
    steps(&mut h, 2);
    let first = dir.join(format!("synthetic-top-{at}.png"));
    assert!(first.is_file(), "{} written", first.display());
    h.get_by_label("Save").click();
    steps(&mut h, 2);
    let second = dir.join(format!("synthetic-top-{at}-2.png"));
    assert!(second.is_file(), "a second save gets a new name");
    // A typed path that exists asks first.
    let typed = dir.join("mine.png");
    std::fs::write(&typed, b"keep me").expect("write");
    h.state_mut().prefs.image.export_path = typed.display().to_string();
    h.step();
    h.get_by_label("Save").click();
    steps(&mut h, 2);
    assert!(has_label(&h, "exists."));
    assert_eq!(std::fs::read(&typed).expect("read"), b"keep me");
    h.get_by_label("Overwrite").click();
    steps(&mut h, 2);
    assert!(image::open(&typed).is_ok(), "overwritten with the PNG");
    // Nothing was written into the working directory.
    assert!(!std::path::Path::new("picaview-image.png").exists());
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_shader_view_starts_at_the_top_when_the_vertex_changes() {
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness_with(Some(demo), None, egui::vec2(1280.0, 800.0));
    wait_indexed(&mut h);
    let index = trace_index(&h);
    // A draw with several vertices.
    let d = index
        .draws
        .iter()
        .position(|r| r.info.count >= 4)
        .expect("a draw with vertices") as u64;
    h.state_mut().push(AppCommand::SelectDraw(d));
    steps(&mut h, 2);
    h.get_by_label("Shader").click();
    step_until(&mut h, "shader trace", |h| {
        has_label(h, "before the first instruction")
    });
    let top = h.get_by_label("v0").rect().top();
    // Scroll the register pane down to the output table below the registers.
    h.get_by_label("Compacted outputs (this run / pipeline)")
        .scroll_to_me();
    steps(&mut h, 3);
    let scrolled = h.get_by_label("v0").rect().top();
    assert!(
        scrolled < top - 50.0,
        "the pane scrolled: {top} -> {scrolled}"
    );
    // The next vertex: both views start at the top again.
    h.get_by_label("▶").click();
    step_until(&mut h, "next vertex traced", |h| {
        let v = h.state().sel.vertex;
        let traced = h
            .state()
            .trace()
            .and_then(|s| s.shader.as_ref())
            .is_some_and(|((_, k), r)| Some(*k) == v && r.is_ok());
        v.is_some_and(|v| v > 0)
            && traced
            && h.query_by_label("v0").is_some()
            && has_label(h, "before the first instruction")
    });
    let again = h.get_by_label("v0").rect().top();
    assert!(
        (again - top).abs() < 2.0,
        "back at the top: {top} vs {again}"
    );
    settle(&mut h);
}

#[test]
fn the_trace_shader_view_names_outputs_by_the_output_map() {
    let (mut h, dir) = opened("i17-outmap");
    h.state_mut().push(AppCommand::SelectDraw(1));
    steps(&mut h, 2);
    h.get_by_label("Shader").click();
    step_until(&mut h, "shader trace", |h| {
        has_label(h, "before the first instruction")
    });
    // OUTMAP_O0 = position, OUTMAP_O1 = colour in the synthetic trace.
    assert!(has_label(&h, "o0 position"));
    assert!(has_label(&h, "o1 color"));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}
