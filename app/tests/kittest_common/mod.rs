//! Helpers shared by the egui_kittest viewer tests: a headless harness and waiting for the
//! worker's asynchronous answers.

#![allow(dead_code)] // each test crate uses its own subset

use eframe::egui;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use picaview::viewer::prefs::Prefs;
use picaview::viewer::{ViewerApp, ViewerOptions};

/// A viewer of `size` opening `open` at `draw`, with default preferences and no native dialogs.
pub fn harness_with(
    open: Option<std::path::PathBuf>,
    draw: Option<u64>,
    size: egui::Vec2,
) -> Harness<'static, ViewerApp> {
    let mut app = ViewerApp::new(
        Prefs::default(),
        ViewerOptions {
            open,
            screenshot: None,
            draw,
            tab: None,
            ..ViewerOptions::default()
        },
    );
    // Tests never show native dialogs.
    app.native_dialogs = false;
    Harness::builder()
        .with_size(size)
        .build_ui_state(|ui, app: &mut ViewerApp| app.show(ui), app)
}

/// A 1400x900 viewer opening `open`.
pub fn harness(open: Option<std::path::PathBuf>) -> Harness<'static, ViewerApp> {
    harness_with(open, None, egui::vec2(1400.0, 900.0))
}

/// Steps frames until `cond` holds (the worker answers asynchronously), then a few more so that
/// layout settles (grids size themselves on frame one). Fails after 60 s.
pub fn step_until(
    h: &mut Harness<'static, ViewerApp>,
    what: &str,
    cond: impl Fn(&Harness<'static, ViewerApp>) -> bool,
) {
    let start = std::time::Instant::now();
    loop {
        h.step();
        if cond(h) {
            for _ in 0..3 {
                h.step();
            }
            return;
        }
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Whether any widget's label contains `text`.
pub fn has_label(h: &Harness<'static, ViewerApp>, text: &str) -> bool {
    h.query_all_by_label_contains(text).next().is_some()
}

/// Steps until the open trace is indexed and its background analysis is done.
pub fn wait_indexed(h: &mut Harness<'static, ViewerApp>) {
    step_until(h, "index and analysis", |h| {
        h.state()
            .trace()
            .is_some_and(|s| s.index.is_some() && s.provenance.is_some() && s.progress.is_none())
    });
}

/// Lets the UI settle (workers answer, spinners stop), then runs kittest's checks (including
/// the accessibility check: every input widget must have a name).
pub fn settle(h: &mut Harness<'static, ViewerApp>) {
    let start = std::time::Instant::now();
    while h.try_run().is_err() {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the UI never settled"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
