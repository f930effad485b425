//! The picaview desktop viewer (eframe/egui with the glow renderer).
//!
//! Structure (`architecture-and-style.md` §C5-§C6):
//! * [`worker`]: a thread that owns the trace replay and answers requests ([`protocol`]);
//!   long operations report progress and can be cancelled.
//! * [`session`]: the UI-side caches of one open document; [`load`] opens files.
//! * [`app`]: the window, deferred [`command`]s, the single selection model, persistence
//!   ([`prefs`]); [`panels`] are views over the session; [`settings`] is the dialog for the
//!   keyframe and work budgets.
//! * Pure helpers: [`images`] (screens, buffers, textures, pixel picking), [`listing`]
//!   (shader disassembly), [`shader_debug`] (step-by-step shader re-runs), [`provenance`]
//!   (which command set a register or uniform), [`widgets`].

pub mod app;
pub mod command;
pub mod images;
pub mod listing;
pub mod load;
pub mod open_path;
pub mod panels;
pub mod ports;
pub mod prefs;
pub mod protocol;
pub mod provenance;
pub mod session;
pub mod settings;
pub mod shader_debug;
pub mod shbin_debug;
pub mod widgets;
pub mod worker;

use std::path::PathBuf;

pub use app::{ViewerApp, ViewerOptions};

/// The bundled demo trace (`assets/demos/cube.ctf`), looked up next to the executable's
/// workspace (walking up from the executable) and then in the source tree this binary was built
/// from; `None` if neither exists.
pub fn default_trace() -> Option<PathBuf> {
    let rel = PathBuf::from("assets").join("demos").join("cube.ctf");
    if let Ok(exe) = std::env::current_exe() {
        for dir in exe.ancestors().skip(1) {
            let p = dir.join(&rel);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(&rel);
    p.is_file().then_some(p)
}

/// Native window options: the glow renderer (set explicitly, see `gui-stack.md`), a sensible
/// size and the app id under which eframe stores the preferences.
pub fn native_options() -> eframe::NativeOptions {
    eframe::NativeOptions {
        renderer: eframe::Renderer::Glow,
        viewport: eframe::egui::ViewportBuilder::default()
            .with_title("picaview")
            .with_app_id("picaview")
            .with_inner_size([1280.0, 800.0])
            .with_drag_and_drop(true),
        ..Default::default()
    }
}

/// Opens the viewer window and runs until it is closed.
pub fn run(opts: ViewerOptions) -> Result<(), String> {
    eframe::run_native(
        "picaview",
        native_options(),
        Box::new(move |cc| {
            let prefs = prefs::Prefs::load(cc.storage);
            Ok(Box::new(ViewerApp::new(prefs, opts)))
        }),
    )
    .map_err(|e| format!("cannot open the viewer window: {e}"))
}
