//! The viewer driven headlessly with egui_kittest: open a trace, step to a draw, read a decoded
//! register field, select a vertex and step its shader, open a texture view and pick a pixel,
//! keyboard shortcuts, bad files, shader binaries.

mod kittest_common;
mod viewer_common;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::command::AppCommand;
use picaview::viewer::prefs::{Prefs, Tab};
use picaview::viewer::protocol::ImageSource;
use viewer_common::ui::trace_index;
use viewer_common::*;

/// Opens the synthetic trace and waits until indexing and the background analysis are done.
fn opened() -> (Harness<'static, ViewerApp>, std::path::PathBuf) {
    let dir = temp_dir(&format!("ui-{:?}", std::thread::current().id()).replace(['(', ')'], ""));
    let path = write_trace(&dir);
    let mut h = harness(Some(path));
    step_until(&mut h, "index and analysis", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.index.is_some() && s.provenance.is_some() && s.progress.is_none())
    });
    (h, dir)
}

#[test]
fn open_trace_step_to_draw_and_read_a_register_field() {
    let (mut h, dir) = opened();
    let index = trace_index(&h);
    // Starts at the end of frame 0.
    assert_eq!(h.state().sel.command, index.frames[0].end.writes);
    h.get_by_label("|◀ Start").click();
    h.step();
    h.step();
    assert_eq!(h.state().sel.command, 0);
    // The toolbar's "Draw ▶" steps to draw 0's triggering command.
    h.get_by_label("Draw ▶").click();
    h.step();
    h.step();
    let trig0 = index.draws[0].before.writes + 1;
    assert_eq!(h.state().sel.command, trig0);
    // The → key steps to the next draw, ← back.
    h.key_press(egui::Key::ArrowRight);
    h.step();
    h.step();
    assert_eq!(h.state().sel.command, index.draws[1].before.writes + 1);
    h.key_press(egui::Key::ArrowLeft);
    h.step();
    h.step();
    assert_eq!(h.state().sel.command, trig0);
    // Shift+→ steps one command.
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::ArrowRight);
    h.step();
    h.step();
    assert_eq!(h.state().sel.command, trig0 + 1);
    h.key_press_modifiers(egui::Modifiers::SHIFT, egui::Key::ArrowLeft);
    h.step();

    // Commands tab: the selected write is the draw trigger, decoded.
    h.get_by_label("Commands").click();
    // The header comes from the selection at once; the decoded page arrives from the worker
    // later, so wait for both.
    step_until(&mut h, "command detail", |h| {
        has_label(h, &format!("Command #{trig0}")) && has_label(h, "triggers draw #0")
    });
    let desc = pica_cmd::regs::describe(0x22E, 1);
    assert!(has_label(&h, &desc.name));

    // Go to the viewport-width write of frame 0 and read its decoded field.
    let prov = h
        .state()
        .trace()
        .and_then(|s| s.provenance.clone())
        .expect("history");
    let vw = prov
        .last_write(0x041, trig0)
        .expect("viewport width was written");
    h.state_mut().push(AppCommand::SelectCommand(vw));
    step_until(&mut h, "viewport write", |h| {
        has_label(h, &format!("Command #{vw}"))
    });
    let want = pica_cmd::regs::describe(0x041, f24(W as f32 / 2.0));
    let field = &want.fields[0];
    assert_eq!(field.meaning, "f24 32");
    let node = h.get_by_label(&field.meaning);
    assert_eq!(node.accesskit_node().value().as_deref(), Some("f24 32"));
    // Its name is shown next to it (tooltips carry the field's documentation).
    assert!(has_label(&h, field.name));

    // The State tab shows the same register as of the selected command, with "set by #n".
    h.get_by_label("State").click();
    step_until(&mut h, "state", |h| {
        has_label(h, &format!("State as of command #{vw}"))
    });
    assert!(has_label(&h, &format!("0x041 {}", want.name)));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn select_a_vertex_and_step_its_shader() {
    let (mut h, dir) = opened();
    let index = trace_index(&h);
    h.state_mut().push(AppCommand::SelectDraw(1));
    h.step();
    assert_eq!(h.state().sel.command, index.draws[1].before.writes + 1);
    h.get_by_label("Vertices").click();
    let (p1, _) = vertex(0, 1, 1);
    let cell = picaview::viewer::widgets::fmt_vec4(&p1);
    step_until(&mut h, "vertex table", |h| has_label(h, &cell));
    // Click vertex 1's position cell: the row selects the vertex.
    // (The position passes through the shader: it is both an input and an output cell.)
    h.get_all_by_label(&cell).next().expect("cell").click();
    h.step();
    h.step();
    assert_eq!(h.state().sel.vertex, Some(1));
    h.get_by_label("Debug its shader ▶").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Shader);
    step_until(&mut h, "shader trace", |h| {
        has_label(h, "before the first instruction")
    });
    assert!(has_label(&h, "outputs match the pipeline"));
    // Step forward twice: mov, then mul.
    h.get_by_label("Step ▶").click();
    h.step();
    h.get_by_label("Step ▶").click();
    step_until(&mut h, "step 2", |h| has_label(h, "step 2 of 3"));
    assert_eq!(h.state().sel.shader_step, Some(1));
    assert!(has_label(&h, "executed 0x001: mul"));
    // The destination o1 holds colour · tint after the mul.
    let (_, c1) = vertex(0, 1, 1);
    let o1: [f32; 4] = std::array::from_fn(|i| c1[i] * TINT[i]);
    assert!(has_label(&h, &picaview::viewer::widgets::fmt_vec4(&o1)));
    // Back with the key (Up), and again with the button.
    h.key_press(egui::Key::ArrowUp);
    h.step();
    h.step();
    assert_eq!(h.state().sel.shader_step, Some(0));
    h.get_by_label("◀ Back").click();
    h.step();
    h.step();
    assert_eq!(h.state().sel.shader_step, None);
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn open_a_texture_view_and_pick_a_pixel() {
    let (mut h, dir) = opened();
    // From the state panel's texture-unit thumbnail.
    h.get_by_label("State").click();
    step_until(&mut h, "texture thumbnail", |h| {
        has_label(h, "Open texture unit 0")
    });
    h.get_by_label("Open texture unit 0").scroll_to_me();
    step_until(&mut h, "texture section visible", |h| {
        has_label(h, "Texture unit 0: enabled")
    });
    h.get_by_label("Open texture unit 0").click();
    h.step();
    assert_eq!(h.state().prefs.tab, Tab::Image);
    assert_eq!(
        h.state().prefs.image.source,
        ImageSource::Texture {
            unit: 0,
            face: 0,
            level: 0
        }
    );
    step_until(&mut h, "texture image", |h| {
        has_label(h, "texture unit 0: 0x18100000, 8x8")
    });
    // Click the canvas centre: texel (4, 4) is picked, with raw bytes and the decoded value.
    h.get_by_label("Image canvas (click to pick a pixel)")
        .click();
    // The hint above the canvas also mentions "raw bytes": wait for the worker's answer itself.
    step_until(&mut h, "pixel info", |h| {
        h.state().trace().is_some_and(|s| s.pixel.is_some()) && has_label(h, "(4, 4)")
    });
    let picked = h
        .state()
        .trace()
        .and_then(|s| s.pixel.clone())
        .expect("picked");
    assert_eq!((picked.2, picked.3), (4, 4), "{:?}", picked.4);
    assert!(has_label(&h, "(4, 4)"));
    // Texel (4, 4) is Morton index 48: R = 0, G = 255 − 192 = 63.
    assert!(has_label(&h, "R 0 G 63 B 0 A 255"));
    // Channel isolation and export.
    h.get_by_label("G").click();
    h.step();
    assert_eq!(h.state().prefs.image.channels, [true, false, true, true]);
    let out = dir.join("tex.png");
    h.state_mut().prefs.image.export_path = out.display().to_string();
    h.step();
    h.get_by_label("Save").click();
    h.step();
    let png = image::open(&out).expect("exported").to_rgba8();
    assert_eq!(png.dimensions(), (8, 8));
    assert_eq!(png.get_pixel(4, 4).0, [0, 63, 0, 255]);
    // Any memory as an image: the same bytes as a tiled RGBA8 image.
    h.get_by_label("Memory…").click();
    h.step();
    assert!(matches!(
        h.state().prefs.image.source,
        ImageSource::Custom(_)
    ));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn bad_files_show_errors_and_shader_binaries_open() {
    let dir = temp_dir("ui-bad");
    let bad = dir.join("bad.ctf");
    std::fs::write(&bad, b"CiTr\x01\0\0\0 not really a trace").expect("write");
    let mut h = harness(Some(bad));
    h.step();
    h.step();
    assert!(has_label(&h, "not a valid CiTrace"));
    assert!(!h.state().errors.is_empty());
    h.get_by_label("Dismiss").click();
    h.step();
    assert!(h.state().errors.is_empty());

    // A shader binary opens in the shader view; Run records a trace that can be stepped.
    let shbin = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/shaders/craftus-world.shbin");
    h.state_mut().push(AppCommand::Open(shbin));
    step_until(&mut h, "shader doc", |h| has_label(h, "DVLE 0"));
    assert_eq!(h.state().prefs.tab, Tab::Shader);
    h.get_by_label("Run").click();
    step_until(&mut h, "shader run", |h| {
        has_label(h, "before the first instruction")
    });
    h.key_press(egui::Key::F10);
    step_until(&mut h, "first step", |h| has_label(h, "step 1 of"));
    assert_eq!(h.state().sel.shader_step, Some(0));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn recent_files_and_persisted_prefs() {
    let (mut h, dir) = opened();
    let path = dir.join("synthetic.ctf");
    assert_eq!(h.state().prefs.recent.first(), Some(&path));
    // Preferences round-trip through RON the way eframe stores them.
    h.state_mut().prefs.tab = Tab::Vertices;
    h.state_mut().prefs.filter.register = "0x041".into();
    let prefs = h.state().prefs.clone();
    let text = ron_roundtrip(&prefs);
    assert_eq!(text, prefs);
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

fn ron_roundtrip(p: &Prefs) -> Prefs {
    // eframe's storage serialises with RON; serde_json exercises the same derive.
    let s = serde_json::to_string(p).expect("serialises");
    serde_json::from_str(&s).expect("deserialises")
}

/// A file dropped on the window (what eframe hands to egui on native platforms).
#[derive(Debug)]
struct Dropped(std::path::PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &std::path::Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn dropping_a_file_opens_it() {
    let dir = temp_dir("ui-drop");
    let path = write_trace(&dir);
    let mut h = harness(None);
    h.step();
    h.step();
    assert!(has_label(&h, "drop a .ctf trace"));
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(path.clone())));
    step_until(&mut h, "dropped trace indexed", |h| {
        h.state().trace().is_some_and(|s| s.index.is_some())
    });
    assert_eq!(h.state().trace().map(|s| s.info.path.clone()), Some(path));
    // The first frame is shown: the toolbar names it.
    assert!(has_label(&h, "frame 0 of 2"));
    settle(&mut h);
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn the_demo_trace_opens_by_default() {
    // `picaview` without arguments opens this file.
    let demo = picaview::viewer::default_trace().expect("assets/demos/cube.ctf is found");
    let mut h = harness(Some(demo));
    step_until(&mut h, "demo indexed", |h| {
        h.state().trace().is_some_and(|s| s.index.is_some())
    });
    let index = trace_index(&h);
    assert!(index.frames.len() >= 2 && index.draws.len() >= 10);
    // Home, then → twice: draw 1 (the crate, drawn through the geometry shader).
    h.key_press(egui::Key::Home);
    h.step();
    h.key_press(egui::Key::ArrowRight);
    h.step();
    h.key_press(egui::Key::ArrowRight);
    h.step();
    h.step();
    assert_eq!(h.state().sel.command, index.draws[1].before.writes + 1);
    assert!(has_label(&h, &format!("draw #1 of {}", index.draws.len())));
    h.get_by_label("Vertices").click();
    let n = index.draws[1].info.count;
    step_until(&mut h, "crate vertices", |h| {
        has_label(h, &format!("{n} vertices ("))
    });
    // The screens panel shows the top screen as of this command.
    step_until(&mut h, "top screen", |h| has_label(h, "Open Top screen"));
    settle(&mut h);
}
