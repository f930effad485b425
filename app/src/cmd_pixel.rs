//! `picaview pixel`: the history of one pixel over a frame (issue 15), from
//! [`gpu_core::history::pixel_history`].
//!
//! `--target color|depth` takes image coordinates of the buffer configured at the end of the
//! range (top row 0, as `picaview render --target color` shows it); `--target
//! top|top-right|bottom` takes screen coordinates as a person sees the LCD (`top` is the left
//! eye, `top-right` the right eye of the stereoscopic top screen) and follows them through the
//! scan-out and the display transfer to the colour buffer (the second output line says how).
//! When the screen shows an image an earlier frame transferred (double buffering, or a frame
//! that presents nothing), the history is that frame's, up to the transfer, looking back at
//! most [`gpu_core::history::MAX_FRAMES_BACK`] frames; the output says so.
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
use gpu_core::debug::fragment::ProbeBuffer;
use gpu_core::history::{HistoryEvent, HistoryRequest, HistoryTarget, PixelHistory, pixel_history};
use gpu_core::replay::Replay;
use picaview::viewer::panels::pixel_history::{engine_text, fragment_lines, value_text};
use serde_json::json;

use crate::cmd_trace::open_trace;

/// Which buffer or screen the coordinates refer to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PixelTarget {
    /// The colour buffer configured at the end of the range (image coordinates, top row 0).
    Color,
    /// The depth/stencil buffer configured at the end of the range.
    Depth,
    /// The top screen as seen (400x240) by the left eye, mapped through the display transfer.
    Top,
    /// The top screen as seen by the right eye (framebuffer B when 3D is on; with 3D off the
    /// same image as `top`).
    TopRight,
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
    /// Which buffer or screen --x/--y refer to. `top` is the top screen's left eye,
    /// `top-right` its right eye (the same image when 3D is off). A screen pixel is followed
    /// through the display transfer that wrote it, looked for in this frame and up to 4 frames
    /// before (double buffering); the history is then of the frame that transfer ran in, up
    /// to the transfer.
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
        until_write: None,
        target: match args.target {
            PixelTarget::Color => HistoryTarget::Color,
            PixelTarget::Depth => HistoryTarget::Depth,
            PixelTarget::Top => HistoryTarget::Top,
            PixelTarget::TopRight => HistoryTarget::TopRight,
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
        json!({"type": "mapping", "request": h.request, "frame": h.frame,
               "mapping": h.mapping, "start": h.start, "end": h.end}),
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

/// Human-readable report.
pub fn write_text(out: &mut impl Write, h: &PixelHistory) -> Result<()> {
    let range = match h.request.after_draw {
        None => format!("frame {}", h.request.frame),
        Some(m) => format!("frame {} up to draw {m} of the frame", h.request.frame),
    };
    writeln!(out, "pixel history of {range}")?;
    writeln!(out, "{}", h.mapping.description)?;
    let of_frame = if h.frame == h.request.frame {
        "the frame".to_string()
    } else {
        writeln!(
            out,
            "events of frame {} (where the displayed image was rendered), up to its display transfer",
            h.frame
        )?;
        format!("frame {}", h.frame)
    };
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
                    "draw {draw} (draw {in_frame} of {of_frame}): {} fragment(s)",
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
