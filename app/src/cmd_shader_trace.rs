//! `picaview shader-trace TRACE.ctf --draw N [--vertex K | --gs-invocation K] [--json]`: the
//! shader debugger's step-by-step run on the command line.
//!
//! The draw is replayed with detail (as the viewer's shader view does,
//! `picaview::viewer::worker::inspect_draw`); then either vertex K's vertex-shader invocation
//! (default: the draw's first vertex) or the draw's geometry-shader invocation K is re-run on
//! the reference interpreter from the state the pipeline had, and every executed instruction is
//! printed, followed by the outputs (and, for the GS, every EMIT with its vertex) and whether
//! the re-run agrees with the pipeline.

use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Result, anyhow, bail};
use gpu_core::replay::Replay;
use picaview::viewer::listing::ShaderListing;
use picaview::viewer::protocol::ShaderTrace;
use picaview::viewer::shader_debug::{outputs_match, trace_gs, trace_vertex};
use picaview::viewer::worker::inspect_draw;
use serde_json::{Value, json};

use crate::cmd_shader::{fmt_vec, jvec, step_json, step_text};
use crate::cmd_trace::open_trace;

/// Arguments of `picaview shader-trace`.
#[derive(clap::Args, Debug)]
pub struct ShaderTraceArgs {
    /// CiTrace file.
    pub file: PathBuf,
    /// Draw index (0-based over the trace, as `trace info` lists them).
    #[arg(long)]
    pub draw: u64,
    /// Trace the vertex shader of this vertex (index in the draw); the default is the first.
    #[arg(long, conflicts_with = "gs_invocation")]
    pub vertex: Option<u32>,
    /// Trace this geometry-shader invocation of the draw instead (0-based).
    #[arg(long, value_name = "K")]
    pub gs_invocation: Option<u32>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `picaview shader-trace`.
pub fn run(args: &ShaderTraceArgs) -> Result<()> {
    let trace = open_trace(&args.file)?;
    let mut replay = Replay::new(trace);
    // One draw is inspected: a streaming index (records only, no keyframes; the inspection
    // then replays from the start up to the draw) keeps memory to the draw records instead of
    // filling the keyframe budget for a single seek.
    let index = replay
        .build_index_streaming(&mut |_| true)
        .unwrap_or_default();
    let Some(rec) = usize::try_from(args.draw)
        .ok()
        .and_then(|d| index.draws.get(d))
    else {
        bail!(
            "{}: draw {} does not exist (the trace has {} draws, 0-{})",
            args.file.display(),
            args.draw,
            index.draws.len(),
            index.draws.len().saturating_sub(1)
        );
    };
    if args.gs_invocation.is_some() && !rec.info.geometry_shader {
        bail!(
            "{}: draw {} does not use the geometry shader",
            args.file.display(),
            args.draw
        );
    }
    let insp = inspect_draw(&mut replay, rec, &mut |gpu, unit, entry| {
        let u = gpu.unit(unit);
        Arc::new(ShaderListing::from_memory(&u.code, &u.opdescs, entry))
    })
    .map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
    let (unit, t) = match args.gs_invocation {
        Some(k) => ("geometry", trace_gs(&insp, k)),
        None => {
            let k = match args.vertex {
                Some(k) => k,
                None => insp
                    .detail
                    .shaded
                    .first()
                    .map(|v| v.index_in_draw)
                    .ok_or_else(|| anyhow!("draw {} shaded no vertices", args.draw))?,
            };
            ("vertex", trace_vertex(&insp, &insp.vertex_ids, k))
        }
    };
    let t = t.map_err(|e| anyhow!("{}: {e}", args.file.display()))?;
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &to_json(unit, &t))?;
        writeln!(out)?;
    } else {
        write_text(&mut out, unit, &t)?;
    }
    out.flush()?;
    Ok(())
}

fn write_text(out: &mut impl Write, unit: &str, t: &ShaderTrace) -> io::Result<()> {
    let what = if unit == "geometry" {
        format!("geometry-shader invocation {}", t.index_in_draw)
    } else {
        format!("vertex {}", t.index_in_draw)
    };
    writeln!(out, "draw {}, {what}: {unit} shader", t.draw)?;
    for note in &t.notes {
        writeln!(out, "note: {note}")?;
    }
    for (i, v) in t.inputs.iter().enumerate() {
        writeln!(out, "v{i:<2} = {}", fmt_vec(v))?;
    }
    writeln!(out, "trace:")?;
    let mut emits = t.emits.iter().enumerate().peekable();
    for (i, s) in t.steps.iter().enumerate() {
        writeln!(out, "{}", step_text(s))?;
        while let Some((n, e)) = emits.next_if(|(_, e)| e.step == i) {
            let prim = if e.primitive {
                if e.winding {
                    " +primitive (inverted winding)"
                } else {
                    " +primitive"
                }
            } else {
                ""
            };
            writeln!(
                out,
                "     EMIT #{n} slot {}{prim}: pos {} color {} tc0 ({}, {})",
                e.slot,
                fmt_vec(&e.vertex.pos),
                fmt_vec(&e.vertex.color),
                e.vertex.tc0[0],
                e.vertex.tc0[1]
            )?;
        }
    }
    match &t.result {
        Ok(n) => writeln!(out, "END after {n} instructions")?,
        Err(e) => writeln!(out, "stopped: {e}")?,
    }
    for (i, v) in t.slots.iter().enumerate() {
        writeln!(out, "output slot {i} = {}", fmt_vec(v))?;
    }
    if !t.emits.is_empty() {
        writeln!(
            out,
            "{} EMIT, {} primitives",
            t.emits.len(),
            t.emits.iter().filter(|e| e.primitive).count()
        )?;
    }
    match outputs_match(t) {
        Some(true) => writeln!(out, "outputs match the pipeline")?,
        Some(false) => writeln!(out, "outputs DIFFER from the pipeline")?,
        None => {}
    }
    Ok(())
}

fn to_json(unit: &str, t: &ShaderTrace) -> Value {
    json!({
        "draw": t.draw,
        "unit": unit,
        "vertex": (unit == "vertex").then_some(t.index_in_draw),
        "gs_invocation": (unit == "geometry").then_some(t.index_in_draw),
        "inputs": t.inputs.iter().map(jvec).collect::<Vec<_>>(),
        "trace": t.steps.iter().map(step_json).collect::<Vec<_>>(),
        "result": match &t.result {
            Ok(n) => json!({ "instructions": n }),
            Err(e) => json!({ "error": e }),
        },
        "outputs": t.slots.iter().map(jvec).collect::<Vec<_>>(),
        "outputs_match_pipeline": outputs_match(t),
        "emits": t.emits.iter().map(|e| json!({
            "step": e.step,
            "slot": e.slot,
            "primitive": e.primitive,
            "winding": e.winding,
            "outputs": e.outputs.iter().map(jvec).collect::<Vec<_>>(),
            "position": e.vertex.pos,
            "color": e.vertex.color,
            "tc0": e.vertex.tc0,
        })).collect::<Vec<_>>(),
        "notes": t.notes,
    })
}
