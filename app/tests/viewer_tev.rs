//! The combiner (TEV) debugger as a person uses it (issue 15), driven headlessly with
//! egui_kittest: open the TEV tab on the demo's lit, textured cube draw, read the stage boxes,
//! solo a stage and see the real and soloed colour buffers side by side, switch the solo to
//! alpha; open the LUT plots and switch tables. Also `picaview render --tev-solo` from the CLI.

mod kittest_common;
mod viewer_common;

use std::path::PathBuf;
use std::process::Command;

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use kittest_common::*;
use picaview::viewer::ViewerApp;
use picaview::viewer::panels::luts::LutTable;
use picaview::viewer::prefs::Tab;
use viewer_common::demo_path;

/// The demo `name` opened at `draw`, indexed.
fn opened(name: &str, draw: u64) -> Harness<'static, ViewerApp> {
    let mut h = harness_with(Some(demo_path(name)), Some(draw), egui::vec2(1400.0, 900.0));
    wait_indexed(&mut h);
    h
}

fn solo_pixels_differ(h: &Harness<'static, ViewerApp>) -> Option<bool> {
    let s = h.state().trace()?;
    let (_, result) = s.tev_solo.as_ref()?;
    let images = result.as_ref().ok()?;
    Some(images.real.pixels != images.solo.pixels)
}

#[test]
fn tev_tab_shows_the_stages_and_solos_a_stage_beside_the_real_result() {
    // Draw 1 of the cube demo: the lit, textured crate (texture 0 · vertex colour in stage 0).
    let mut h = opened("cube.ctf", 1);
    h.get_by_label("TEV").click();
    step_until(&mut h, "the stage boxes", |h| {
        has_label(h, "Stage 0") && has_label(h, "Stage 5 · pass-through")
    });
    assert_eq!(h.state().prefs.tab, Tab::Tev);
    assert!(has_label(&h, "A: tex 0.rgb"), "stage 0 reads texture 0");
    assert!(has_label(&h, "B: primary.rgb"), "and the primary colour");
    assert!(has_label(&h, "= Modulate (A·B)"));
    assert!(has_label(&h, "Stage 1 · pass-through"));
    assert!(has_label(&h, "solo re-renders draw 1"));
    // The State panel's formula is shown too.
    assert!(has_label(&h, "tex0.rgb * vertex_color.rgb"));

    // Solo stage 0 (colour): the real and the soloed colour buffers appear side by side.
    h.get_by_label("Solo stage 0").click();
    step_until(&mut h, "the solo images", |h| {
        has_label(h, "Solo: stage 0 colour after draw 1")
    });
    assert!(has_label(&h, "Real: colour buffer after draw 1"));
    // Stage 0 is the last active stage and the crate is opaque: its colour is the real result.
    assert_eq!(solo_pixels_differ(&h), Some(false));

    // The alpha of stage 0 (texture alpha 255 · vertex alpha) differs from the crate's colours.
    h.get_by_label("Stage alpha").click();
    step_until(&mut h, "the alpha solo", |h| {
        has_label(h, "Solo: stage 0 alpha after draw 1")
    });
    assert_eq!(solo_pixels_differ(&h), Some(true));

    // Clearing the solo removes the images.
    h.get_by_label("Clear solo").click();
    step_until(&mut h, "the solo cleared", |h| {
        !has_label(h, "Solo: stage 0") && h.state().panels.tev.solo.is_none()
    });
    settle(&mut h);
}

#[test]
fn lut_tab_plots_tables_and_switches_between_them() {
    // The fog demo: fog LUT written, fog on for the ground and panels.
    let mut h = opened("fog_blend.ctf", 1);
    h.get_by_label("LUTs").click();
    step_until(&mut h, "the lighting table", |h| {
        has_label(h, "D0 (distribution 0)") && has_label(h, "Indexed by N·H")
    });
    assert!(
        has_label(&h, "Not used now"),
        "no fragment lighting in this demo"
    );
    h.get_by_label("fog LUT").click();
    step_until(&mut h, "the fog table", |h| {
        h.state().panels.luts.table == LutTable::Fog && has_label(h, "Indexed by depth")
    });
    assert!(has_label(&h, "Fog mode now: Fog"));
    assert!(
        !has_label(&h, "Every entry is 0"),
        "the demo wrote its fog table"
    );
    h.get_by_label("colour table").click();
    step_until(&mut h, "the proctex colour table", |h| {
        has_label(h, "Indexed by offset + mapped value")
    });
    assert!(has_label(&h, "texture unit 3 is disabled"));
    h.get_by_label("SP3").click();
    step_until(&mut h, "the spotlight table", |h| {
        has_label(h, "SP3 (spotlight, light 3)") && has_label(h, "Indexed by N·H")
    });
}

#[test]
fn render_tev_solo_writes_the_stage_output() {
    let dir = std::env::temp_dir().join(format!("picaview-tev-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let run = |extra: &[&str], out: &PathBuf| {
        Command::new(env!("CARGO_BIN_EXE_picaview"))
            .args([
                "render",
                demo_path("cube.ctf").to_str().expect("utf-8 path"),
            ])
            .args(["--frame", "1", "--after-draw", "1", "--target", "color"])
            .args(extra)
            .arg("-o")
            .arg(out)
            .output()
            .expect("runs")
    };
    let real = dir.join("real.png");
    let colour = dir.join("colour.png");
    let alpha = dir.join("alpha.png");
    assert!(run(&[], &real).status.success());
    let o = run(&["--tev-solo", "0"], &colour);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("combiner stage 0's colour"));
    assert!(run(&["--tev-solo", "0:alpha"], &alpha).status.success());
    let img = |p: &PathBuf| image::open(p).expect("png").to_rgba8();
    let (real, colour, alpha) = (img(&real), img(&colour), img(&alpha));
    // Stage 0 is the crate's only stage: its colour solo is the real image; its alpha is grey
    // (the crate is opaque: white) where the crate was drawn, and the background is unchanged.
    assert_eq!(real, colour);
    assert_ne!(real, alpha);
    let mut white = 0;
    for (r, a) in real.pixels().zip(alpha.pixels()) {
        if r != a {
            assert_eq!(a.0[0], a.0[1]);
            assert_eq!(a.0[1], a.0[2]);
            white += usize::from(a.0 == [255, 255, 255, 255]);
        }
    }
    assert!(
        white > 1000,
        "the crate's pixels are white in the alpha solo"
    );
    // Without --after-draw the flag is refused; a bad stage too.
    let o = Command::new(env!("CARGO_BIN_EXE_picaview"))
        .args([
            "render",
            demo_path("cube.ctf").to_str().expect("utf-8 path"),
        ])
        .args(["--tev-solo", "0", "-o"])
        .arg(dir.join("x.png"))
        .output()
        .expect("runs");
    assert!(!o.status.success());
    let o = run(&["--tev-solo", "7"], &dir.join("y.png"));
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("stage 0-5"));
    let _ = std::fs::remove_dir_all(&dir);
}
