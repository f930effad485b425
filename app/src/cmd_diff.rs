//! `picaview diff`: replays two traces (or one trace twice under two configurations or two
//! edit lists: `--edits-a` / `--edits-b`, B defaulting to A) in lock step and reports the first draw whose output differs, the first differing vertex in it and
//! the shader instruction where that vertex's registers diverge
//! ([`gpu_core::replay::diff`]).
//!
//! Exit status: 0 when the runs are identical, 1 when they differ, 2 on an error (unreadable
//! trace, bad arguments), so that the command can gate CI.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{Context as _, Result, bail};
use clap::{Args, ValueEnum};
use gpu_core::draw::VsEngine;
use gpu_core::fragment::PixelPath;
use gpu_core::replay::Replay;
use gpu_core::replay::diff::{
    DiffOptions, DiffOutcome, RunConfig, diff_replays, set_side_edits, unapplied_edits,
};
use gpu_core::texture::RenderMode;
use serde::Serialize;

use crate::cmd_trace::open_trace;

/// Vertex-shader engine choice on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EngineArg {
    /// The batched fast engine (the default).
    Fast,
    /// The reference interpreter.
    Reference,
}

/// Pixel-path choice on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PixelArg {
    /// The specialised per-fragment path (the default).
    Specialized,
    /// The generic reference path.
    Reference,
}

/// Texture-sampling choice on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum TexturesArg {
    /// Hardware-faithful filtering and mipmapping (the default).
    Hardware,
    /// Citra's software renderer: nearest from the base level.
    CitraSwrast,
}

/// Builds a [`RunConfig`] from the command-line choices.
pub fn run_config(engine: EngineArg, pixel: PixelArg, textures: TexturesArg) -> RunConfig {
    RunConfig {
        vs_engine: match engine {
            EngineArg::Fast => VsEngine::Fast,
            EngineArg::Reference => VsEngine::Reference,
        },
        pixel_path: match pixel {
            PixelArg::Specialized => PixelPath::Specialized,
            PixelArg::Reference => PixelPath::Reference,
        },
        render_mode: match textures {
            TexturesArg::Hardware => RenderMode::Hardware,
            TexturesArg::CitraSwrast => RenderMode::CitraSwrast,
        },
    }
}

/// Arguments of `picaview diff`.
#[derive(Args, Debug)]
pub struct DiffArgs {
    /// Trace A (.ctf).
    pub a: PathBuf,
    /// Trace B (.ctf); omitted: A again (to compare two configurations or edit lists).
    pub b: Option<PathBuf>,
    /// Edit script (syntax: `picaview edit --help`) applied while replaying side A.
    #[arg(long, value_name = "FILE")]
    pub edits_a: Option<PathBuf>,
    /// Edit script applied while replaying side B (alone: the trace with the edits off vs on).
    #[arg(long, value_name = "FILE")]
    pub edits_b: Option<PathBuf>,
    /// Vertex-shader engine of side A.
    #[arg(long, value_enum, default_value = "fast")]
    pub engine_a: EngineArg,
    /// Vertex-shader engine of side B.
    #[arg(long, value_enum, default_value = "fast")]
    pub engine_b: EngineArg,
    /// Per-fragment path of side A.
    #[arg(long, value_enum, default_value = "specialized")]
    pub pixel_a: PixelArg,
    /// Per-fragment path of side B.
    #[arg(long, value_enum, default_value = "specialized")]
    pub pixel_b: PixelArg,
    /// Texture sampling of side A.
    #[arg(long, value_enum, default_value = "hardware")]
    pub textures_a: TexturesArg,
    /// Texture sampling of side B.
    #[arg(long, value_enum, default_value = "hardware")]
    pub textures_b: TexturesArg,
    /// Shaded vertices compared per draw (the rest of a larger draw is compared through the
    /// buffers only).
    #[arg(long, default_value_t = 65536)]
    pub max_vertices: usize,
    /// Do not re-run the first differing vertex to find the divergent instruction.
    #[arg(long)]
    pub no_instructions: bool,
    /// Print the result as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    a: String,
    b: String,
    config_a: RunConfig,
    config_b: RunConfig,
    edits_a: Option<String>,
    edits_b: Option<String>,
    /// Enabled edits of side A that never ran (only checked when the runs agree).
    unapplied_edits_a: Vec<String>,
    /// Same for side B.
    unapplied_edits_b: Vec<String>,
    same: bool,
    summary: String,
    #[serde(flatten)]
    outcome: &'a DiffOutcome,
}

/// Runs `picaview diff`; returns the exit status (0 same, 1 different).
pub fn run(args: &DiffArgs) -> Result<u8> {
    let ca = run_config(args.engine_a, args.pixel_a, args.textures_a);
    let cb = run_config(args.engine_b, args.pixel_b, args.textures_b);
    if args.b.is_none() && args.edits_a.is_none() && args.edits_b.is_none() && ca == cb {
        bail!(
            "give trace B, or compare trace A with itself under two configurations \
             (--engine-b, --pixel-b, --textures-b, ...) or edit lists (--edits-a / --edits-b)"
        );
    }
    let path_b = args.b.as_ref().unwrap_or(&args.a);
    let mut a = Replay::new(open_trace(&args.a)?);
    let mut b = Replay::new(open_trace(path_b)?);
    ca.apply(&mut a);
    cb.apply(&mut b);
    for (path, r) in [(&args.edits_a, &mut a), (&args.edits_b, &mut b)] {
        if let Some(path) = path {
            let edits = crate::cmd_edit::read_script_file(path)?;
            set_side_edits(r, edits).with_context(|| path.display().to_string())?;
        }
    }
    let mut opts = DiffOptions::default();
    opts.limits.loaded = args.max_vertices;
    opts.limits.shaded = args.max_vertices;
    opts.trace_instructions = !args.no_instructions;
    let outcome = diff_replays(&mut a, &mut b, &opts, &mut |_| true)?;
    // Only a run that went through the whole trace knows which edits never applied.
    let (unapplied_a, unapplied_b) = if outcome.is_same() {
        (unapplied_edits(&a), unapplied_edits(&b))
    } else {
        (Vec::new(), Vec::new())
    };
    for (side, list) in [("A", &unapplied_a), ("B", &unapplied_b)] {
        if !list.is_empty() {
            eprintln!(
                "warning: side {side}: edit(s) never applied during the replay: {}",
                list.join("; ")
            );
        }
    }
    let edits_text = |p: &Option<PathBuf>| p.as_ref().map(|p| p.display().to_string());
    let side_text = |c: &RunConfig, p: &Option<PathBuf>| match p {
        Some(p) => format!("{}, edits {}", c.describe(), p.display()),
        None => c.describe(),
    };
    let summary = match &outcome {
        DiffOutcome::Same { draws, frames } => {
            format!(
                "no difference: {draws} draw(s), {frames} frame marker(s), same screens at the end"
            )
        }
        DiffOutcome::Different(d) => d.summary(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let report = JsonReport {
            a: args.a.display().to_string(),
            b: path_b.display().to_string(),
            config_a: ca,
            config_b: cb,
            edits_a: edits_text(&args.edits_a),
            edits_b: edits_text(&args.edits_b),
            unapplied_edits_a: unapplied_a,
            unapplied_edits_b: unapplied_b,
            same: outcome.is_same(),
            summary,
            outcome: &outcome,
        };
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "A: {} ({})",
            args.a.display(),
            side_text(&ca, &args.edits_a)
        )?;
        writeln!(
            out,
            "B: {} ({})",
            path_b.display(),
            side_text(&cb, &args.edits_b)
        )?;
        writeln!(out, "{summary}")?;
    }
    Ok(if outcome.is_same() { 0 } else { 1 })
}
