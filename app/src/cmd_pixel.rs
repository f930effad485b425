//! `picaview pixel`: the history of one pixel over a frame (issue 15), from
//! [`gpu_core::history::pixel_history`].
//!
//! `--target color|depth` takes image coordinates of the buffer configured at the end of the
//! range (top row 0, as `picaview render --target color` shows it); `--target top|bottom`
//! takes screen coordinates as a person sees the LCD and follows them through the scan-out and
//! the display transfer to the colour buffer (the first output line says how).
//!
//! Human output: the mapping, the value before and after, then every memory fill, display
//! transfer or texture copy that wrote the pixel and every draw that produced a fragment there,
//! in order, with each fragment's inputs, texels, combiner stages, fog, depth/stencil, blend and
//! fate. `--json` writes JSON Lines, one object per line as it is produced: `{"type":"mapping"}`,
//! then `{"type":"engine"}` / `{"type":"draw"}` per event, then `{"type":"summary"}`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use gpu_core::debug::EngineEvent;
use gpu_core::debug::fragment::{FragmentRecord, ProbeBuffer};
use gpu_core::history::{
    HistoryEvent, HistoryRequest, HistoryTarget, PixelHistory, PixelValue, pixel_history,
};
use gpu_core::replay::Replay;
use serde_json::json;

use crate::cmd_trace::open_trace;

/// Which buffer or screen the coordinates refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PixelTarget {
    /// The colour buffer configured at the end of the range (image coordinates, top row 0).
    Color,
    /// The depth/stencil buffer configured at the end of the range.
    Depth,
    /// The top screen as seen (400x240), mapped through the display transfer.
    Top,
    /// The bottom screen as seen (320x240).
    Bottom,
}

/// Arguments of `picaview pixel`.
#[derive(Args, Debug)]
pub struct PixelArgs {
    /// The trace (.ctf).
    pub trace: PathBuf,
    /// Frame (0-based): the stream up to this frame marker.
    #[arg(long, default_value_t = 0)]
    pub frame: u32,
    /// Stop right after this draw of the frame (0-based within the frame).
    #[arg(long)]
    pub after_draw: Option<u64>,
    /// Which buffer or screen --x/--y refer to.
    #[arg(long, value_enum, default_value = "color")]
    pub target: PixelTarget,
    /// Column.
    #[arg(long)]
    pub x: u32,
    /// Row from the top.
    #[arg(long)]
    pub y: u32,
    /// JSON Lines output (one object per line).
    #[arg(long)]
    pub json: bool,
}

/// Runs `picaview pixel`.
pub fn run(args: &PixelArgs) -> Result<()> {
    let trace = open_trace(&args.trace)?;
    let mut replay = Replay::new(trace);
    let req = HistoryRequest {
        frame: args.frame,
        after_draw: args.after_draw,
        target: match args.target {
            PixelTarget::Color => HistoryTarget::Color,
            PixelTarget::Depth => HistoryTarget::Depth,
            PixelTarget::Top => HistoryTarget::Top,
            PixelTarget::Bottom => HistoryTarget::Bottom,
        },
        x: args.x,
        y: args.y,
    };
    let h = pixel_history(&mut replay, &req).with_context(|| args.trace.display().to_string())?;
    let mut out = std::io::stdout().lock();
    if args.json {
        write_json(&mut out, &h)?;
    } else {
        write_text(&mut out, &h)?;
    }
    out.flush()?;
    Ok(())
}

/// JSON Lines: mapping, events, summary.
pub fn write_json(out: &mut impl Write, h: &PixelHistory) -> Result<()> {
    let line = |out: &mut dyn Write, v: serde_json::Value| -> Result<()> {
        serde_json::to_writer(&mut *out, &v)?;
        out.write_all(b"\n")?;
        Ok(())
    };
    line(
        out,
        json!({"type": "mapping", "request": h.request, "mapping": h.mapping,
               "start": h.start, "end": h.end}),
    )?;
    for e in &h.events {
        match e {
            HistoryEvent::Engine { after_draws, event } => line(
                out,
                json!({"type": "engine", "after_draws": after_draws, "event": event}),
            )?,
            HistoryEvent::Draw {
                draw,
                in_frame,
                info,
                stats,
                fragments,
            } => line(
                out,
                json!({"type": "draw", "draw": draw, "in_frame": in_frame, "info": info,
                       "stats": stats, "fragments": fragments}),
            )?,
        }
    }
    line(
        out,
        json!({"type": "summary", "before": h.before, "after": h.after,
               "events": h.events.len(), "fragments": h.fragment_count(),
               "dropped": h.dropped}),
    )
}

fn rgba(c: [u8; 4]) -> String {
    format!("({},{},{},{})", c[0], c[1], c[2], c[3])
}

fn rgb(c: [u8; 3]) -> String {
    format!("({},{},{})", c[0], c[1], c[2])
}

/// The value of the followed pixel for people.
pub fn value_text(v: &PixelValue) -> String {
    let mut parts = Vec::new();
    if let Some(c) = v.color {
        parts.push(format!("rgba{}", rgba(c)));
    }
    if let Some(d) = v.depth {
        parts.push(format!("depth 0x{d:06X}"));
    }
    if let Some(s) = v.stencil {
        parts.push(format!("stencil {s}"));
    }
    if parts.is_empty() {
        "unreadable".to_string()
    } else {
        parts.join(" ")
    }
}

/// One engine event for people.
pub fn engine_text(e: &EngineEvent) -> String {
    match e {
        EngineEvent::MemoryFill {
            unit,
            start,
            end,
            value,
            ..
        } => format!("memory fill (unit {unit}) 0x{start:08X}..0x{end:08X} with 0x{value:08X}"),
        EngineEvent::Transfer {
            input,
            output,
            texture_copy,
            ..
        } => format!(
            "{} 0x{input:08X} -> 0x{output:08X}",
            if *texture_copy {
                "texture copy"
            } else {
                "display transfer"
            }
        ),
        EngineEvent::CommandList { addr, size } => {
            format!("command list 0x{addr:08X} ({size} bytes)")
        }
    }
}

/// The lines describing one fragment (indented by the caller).
pub fn fragment_lines(f: &FragmentRecord) -> Vec<String> {
    let mut l = Vec::new();
    let fate = f.fate.map_or("unknown", |x| x.label());
    l.push(format!(
        "triangle {} at window ({},{}): {fate}",
        f.triangle, f.x, f.y
    ));
    let i = &f.inputs;
    l.push(format!(
        "  inputs: depth {:.6} w {:.6} primary {} tc0 ({:.4},{:.4}) tc0.w {:.4} tc1 ({:.4},{:.4}) tc2 ({:.4},{:.4})",
        i.depth,
        i.w,
        rgba(i.primary),
        i.texcoord[0][0],
        i.texcoord[0][1],
        i.texcoord0_w,
        i.texcoord[1][0],
        i.texcoord[1][1],
        i.texcoord[2][0],
        i.texcoord[2][1]
    ));
    for t in &f.texels {
        if t.unit == 3 {
            l.push(format!("  texture 3 (procedural): {}", rgba(t.color)));
        } else {
            l.push(format!(
                "  texture {}: {} from level {} at 0x{:08X} (lod {:.3}, texel ({:.2},{:.2}); base 0x{:08X}, format {})",
                t.unit,
                rgba(t.color),
                t.level,
                t.level_addr,
                t.lod,
                t.texel[0],
                t.texel[1],
                t.addr,
                t.format
            ));
        }
    }
    if let Some([p, s]) = f.lighting {
        l.push(format!(
            "  fragment lighting: primary {} secondary {}",
            rgba(p),
            rgba(s)
        ));
    }
    let mut passed = Vec::new();
    for st in &f.tev {
        if !st.active {
            passed.push(st.stage.to_string());
            continue;
        }
        l.push(format!(
            "  tev {}: rgb in {} {} {} alpha in {} {} {} -> {} (buffer {})",
            st.stage,
            rgb(st.rgb_in[0]),
            rgb(st.rgb_in[1]),
            rgb(st.rgb_in[2]),
            st.alpha_in[0],
            st.alpha_in[1],
            st.alpha_in[2],
            rgba(st.output),
            rgba(st.buffer)
        ));
    }
    if !f.tev.is_empty() {
        if !passed.is_empty() {
            l.push(format!("  tev {}: pass-through", passed.join(",")));
        }
        l.push(format!("  combiner output {}", rgba(f.combiner_output)));
    }
    if let Some(fog) = f.fog {
        l.push(format!(
            "  fog: factor {} colour {} {} -> {}",
            fog.factor
                .map_or("unknown".to_string(), |x| format!("{x:.4}")),
            rgb(fog.color),
            rgba(fog.before),
            rgba(fog.after)
        ));
    }
    if let Some(ds) = f.depth_stencil {
        l.push(format!(
            "  depth/stencil: fragment depth 0x{:06X}, stored 0x{:06X} -> 0x{:06X}, stencil {} -> {}",
            ds.fragment_depth, ds.depth_before, ds.depth_after, ds.stencil_before, ds.stencil_after
        ));
    }
    if let Some(b) = f.blend {
        let mask: String = ["R", "G", "B", "A"]
            .iter()
            .zip(b.mask)
            .map(|(c, on)| if on { *c } else { "-" })
            .collect();
        if b.blend {
            l.push(format!(
                "  blend: src {} x {} + dst {} x {} -> {}; mask {mask}; written {}",
                rgba(b.src),
                rgba(b.src_factor),
                rgba(b.dst),
                rgba(b.dst_factor),
                rgba(b.result),
                rgba(b.written)
            ));
        } else {
            l.push(format!(
                "  logic op: src {} dst {} -> {}; mask {mask}; written {}",
                rgba(b.src),
                rgba(b.dst),
                rgba(b.result),
                rgba(b.written)
            ));
        }
    }
    l
}

/// Human-readable report.
pub fn write_text(out: &mut impl Write, h: &PixelHistory) -> Result<()> {
    let range = match h.request.after_draw {
        None => format!("frame {}", h.request.frame),
        Some(m) => format!("frame {} up to draw {m} of the frame", h.request.frame),
    };
    writeln!(out, "pixel history of {range}")?;
    writeln!(out, "{}", h.mapping.description)?;
    let what = match h.mapping.buffer {
        ProbeBuffer::Color(_) => "colour",
        ProbeBuffer::Depth(_) => "depth/stencil",
    };
    writeln!(
        out,
        "{what} before: {}   after: {}",
        value_text(&h.before),
        value_text(&h.after)
    )?;
    if h.events.is_empty() {
        writeln!(out, "nothing touched this pixel in the range")?;
    }
    for e in &h.events {
        match e {
            HistoryEvent::Engine { after_draws, event } => {
                writeln!(out, "{} (after {after_draws} draws)", engine_text(event))?;
            }
            HistoryEvent::Draw {
                draw,
                in_frame,
                fragments,
                ..
            } => {
                writeln!(
                    out,
                    "draw {draw} (draw {in_frame} of the frame): {} fragment(s)",
                    fragments.len()
                )?;
                for f in fragments {
                    for line in fragment_lines(f) {
                        writeln!(out, "  {line}")?;
                    }
                }
            }
        }
    }
    if h.dropped > 0 {
        writeln!(
            out,
            "{} fragment record(s) not kept (limit {})",
            h.dropped,
            gpu_core::history::MAX_RECORDS
        )?;
    }
    Ok(())
}
