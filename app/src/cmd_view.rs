//! `picaview [FILE]`: the desktop viewer. Without a file it opens the bundled demo trace
//! (`assets/demos/cube.ctf`); with one it opens a `.ctf` trace, a `.shbin` shader binary or a raw
//! PICA command list (detected from the file's contents).

use std::path::PathBuf;

use anyhow::{Result, anyhow};
use clap::Args;
use picaview::viewer::prefs::Tab;

/// Arguments of the viewer (used when no subcommand is given).
#[derive(Args, Debug, Default)]
pub struct ViewArgs {
    /// A .ctf trace, .shbin shader binary or raw command list to open (default: the demo trace).
    pub file: Option<PathBuf>,
    /// Write a PNG screenshot of the window once the file is shown, then exit (needs a display,
    /// e.g. Xvfb).
    #[arg(long, value_name = "PNG")]
    pub screenshot: Option<PathBuf>,
    /// Select this draw (0-based, counted over the whole trace) once the trace is loaded.
    #[arg(long, value_name = "N")]
    pub draw: Option<u64>,
    /// Start on this view.
    #[arg(long, value_enum)]
    pub tab: Option<ViewTab>,
    /// Pixel-pipeline worker threads of the replay (default: the available cores). Images are
    /// bit-identical for every count.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Work budgets (`--budget SPEC`, as for `render`); View > Settings changes them.
    #[command(flatten)]
    pub budget: crate::budget_flag::BudgetArgs,
}

/// The viewer's central views.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum ViewTab {
    /// Register writes.
    Commands,
    /// GPU state as of the selected command.
    State,
    /// Screens, buffers, textures, memory.
    Image,
    /// Vertex shader inputs and outputs.
    Vertices,
    /// Shader debugger.
    Shader,
    /// Combiner (TEV) graph and per-stage solo.
    Tev,
    /// Lookup-table plots.
    Luts,
    /// Compare mode (a second trace or configuration).
    Compare,
    /// Per-draw cost table.
    Costs,
}

impl From<ViewTab> for Tab {
    fn from(t: ViewTab) -> Tab {
        match t {
            ViewTab::Commands => Tab::Commands,
            ViewTab::State => Tab::State,
            ViewTab::Image => Tab::Image,
            ViewTab::Vertices => Tab::Vertices,
            ViewTab::Shader => Tab::Shader,
            ViewTab::Tev => Tab::Tev,
            ViewTab::Luts => Tab::Luts,
            ViewTab::Compare => Tab::Compare,
            ViewTab::Costs => Tab::Costs,
        }
    }
}

/// Opens the viewer window.
pub fn run(args: &ViewArgs) -> Result<()> {
    if let Some(n) = args.threads {
        picaview::viewer::worker::PIXEL_THREADS
            .store(usize::from(n), std::sync::atomic::Ordering::Relaxed);
    }
    let open = args.file.clone().or_else(picaview::viewer::default_trace);
    if open.is_none() {
        eprintln!("picaview: the demo trace assets/demos/cube.ctf was not found; starting empty");
    }
    picaview::viewer::run(picaview::viewer::ViewerOptions {
        open,
        screenshot: args.screenshot.clone(),
        draw: args.draw,
        tab: args.tab.map(Tab::from),
        budget: args.budget.budget(),
    })
    .map_err(|e| anyhow!(e))
}
