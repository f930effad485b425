//! Pixel history: everything that touched one pixel of a colour or depth buffer during a frame.
//!
//! [`pixel_history`] replays frame N of a trace (up to its end, or to the end of draw M of the
//! frame) with a [`PixelProbe`] set and collects, in execution order, every draw that produced a
//! fragment at the pixel (one [`FragmentRecord`] per fragment: inputs, texels, combiner stages,
//! lighting, fog, depth/stencil, blending, fate, see [`crate::debug::fragment`]) and every memory
//! fill, display transfer or texture copy that wrote the pixel's bytes.
//!
//! The pixel is named in one of five ways ([`HistoryTarget`]):
//! * `Color` / `Depth`: image coordinates (top row 0, as the buffer is shown upright) of the
//!   colour or depth buffer configured at the end of the range;
//! * `Top` / `TopRight` / `Bottom`: screen coordinates as a person sees the LCD (top-left
//!   origin; `Top` is the left eye, `TopRight` the right eye of the stereoscopic top screen,
//!   which shows framebuffer B only in stereo mode, see [`LcdFramebufferConfig::stereo`]) at
//!   the end of the frame (even when the range stops after an earlier draw), or right after
//!   [`HistoryRequest::until_write`] when that is given (what the viewer shows at a selected
//!   command). They are mapped through the LCD scan-out (the framebuffer is stored rotated:
//!   screen column x is memory row x, screen row y is pixel 239 − y of that row) to the
//!   framebuffer address, then through the last display transfer that wrote that address
//!   (inverting its flip and box filter) back to the colour buffer the GPU rendered.
//!   [`PixelMapping::description`] says how.
//!
//! A screen shows what the last display transfer into its framebuffer wrote, which with double
//! or triple buffering ran in an earlier frame (citro3d shows frame N−1's image while frame N
//! renders). The transfer is looked for in the requested frame, then in up to
//! [`MAX_FRAMES_BACK`] earlier frames. The history then covers the frame the transfer ran in
//! ([`PixelHistory::frame`]), from its start up to the transfer (later draws cannot change what
//! the screen shows; in the requested frame `after_draw` / `until_write` may stop it earlier),
//! and the description says "displayed in frame N, rendered and transferred in frame M".
//!
//! Cost: the range is replayed (a few times: to find the buffers, the transfer and the start
//! value; for screens at most `MAX_FRAMES_BACK + 1` frames are scanned for the transfer); with
//! keyframes ([`Replay::build_index`]) seeks are short. Records are bounded ([`MAX_RECORDS`]).

use serde::Serialize;

use crate::debug::fragment::{FragmentRecord, PixelProbe, ProbeBuffer};
use crate::debug::{DrawInfo, DrawStats, EngineEvent, Observer};
use crate::engines::lcd::{Eye, LCD_ROW_PIXELS, LcdColorFill, LcdFramebufferConfig, Screen};
use crate::engines::{DisplayTransferConfig, Scaling, Transfer, TransferRegs};
use crate::pixel::color::ColorFormat;
use crate::pixel::framebuffer::FramebufferConfig;
use crate::pixel::tiling::TileMode;
use crate::regs::{EXT_REG_BASE, LCD_REG_BASE};
use crate::replay::{Position, Replay, Target};
use pica_cmd::citrace::TraceSource;

/// Most fragment records one history keeps (the rest are counted in
/// [`PixelHistory::dropped`]).
pub const MAX_RECORDS: usize = 1 << 16;
/// Most engine events kept while looking for the display transfer of a screen.
const MAX_TRANSFERS_KEPT: usize = 4096;

/// Which pixel to follow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum HistoryTarget {
    /// The colour buffer configured at the end of the range (image coordinates, top row 0).
    Color,
    /// The depth/stencil buffer configured at the end of the range (image coordinates).
    Depth,
    /// The top screen as seen (400×240, top-left origin), left eye.
    Top,
    /// The bottom screen as seen (320×240).
    Bottom,
    /// The top screen as seen by the right eye (framebuffer B in stereo mode, else the same
    /// framebuffer as [`HistoryTarget::Top`]).
    TopRight,
}

impl HistoryTarget {
    /// The screen and eye of a screen target; `None` for the render-target buffers.
    pub const fn screen_eye(self) -> Option<(Screen, Eye)> {
        match self {
            Self::Top => Some((Screen::Top, Eye::Left)),
            Self::TopRight => Some((Screen::Top, Eye::Right)),
            Self::Bottom => Some((Screen::Bottom, Eye::Left)),
            Self::Color | Self::Depth => None,
        }
    }
}

/// What [`pixel_history`] should look at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct HistoryRequest {
    /// Frame (0-based): the stream between frame markers N−1 and N.
    pub frame: u32,
    /// Stop right after this draw of the frame (0-based within the frame); `None`: the whole
    /// frame.
    pub after_draw: Option<u64>,
    /// Stop right after this register write (1-based, counted over the whole trace, as
    /// [`Target::AfterWrite`]); overrides `after_draw`. It must lie inside the frame. Screens
    /// are then mapped as the LCD shows them right after this write.
    pub until_write: Option<u64>,
    /// Which buffer or screen the coordinates refer to.
    pub target: HistoryTarget,
    /// Column.
    pub x: u32,
    /// Row from the top.
    pub y: u32,
}

/// Why a history cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// The frame does not exist.
    #[error("frame {frame} does not exist: the trace has {frames} frame(s)")]
    NoFrame {
        /// Requested frame.
        frame: u32,
        /// Frames in the trace.
        frames: u32,
    },
    /// The register write lies outside the frame.
    #[error("command {write} lies outside frame {frame} (commands {first}..={last})")]
    WriteOutsideFrame {
        /// Frame.
        frame: u32,
        /// Requested write.
        write: u64,
        /// First write of the frame.
        first: u64,
        /// Last write of the frame.
        last: u64,
    },
    /// The draw does not exist in the frame.
    #[error("draw {draw} of frame {frame} does not exist: the frame has {count} draw(s)")]
    NoDraw {
        /// Frame.
        frame: u32,
        /// Requested draw within the frame.
        draw: u64,
        /// Draws in the frame.
        count: u64,
    },
    /// The coordinates lie outside the buffer or screen.
    #[error("({x}, {y}) lies outside the {what} ({width}x{height})")]
    Outside {
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// What was addressed.
        what: String,
        /// Its width.
        width: u32,
        /// Its height.
        height: u32,
    },
    /// The screen shows something the history cannot follow.
    #[error("{0}")]
    Unmappable(String),
}

/// How the requested coordinates were mapped to a buffer pixel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PixelMapping {
    /// The buffer followed.
    pub buffer: ProbeBuffer,
    /// Buffer width in pixels.
    pub width: u32,
    /// Buffer height in pixels.
    pub height: u32,
    /// Column in the buffer.
    pub x: u32,
    /// Row from the top of the upright image (memory row).
    pub row: u32,
    /// Window y (up), as the rasteriser counts it: `height − 1 − row`.
    pub window_y: u32,
    /// Physical address of the pixel's bytes.
    pub addr: u32,
    /// Bytes per pixel.
    pub bytes: u32,
    /// For screens: the display transfer that produced the framebuffer.
    pub transfer: Option<TransferMapping>,
    /// One line for people, e.g. "top screen (10,20) -> framebuffer 0x18... (219,10) via
    /// display transfer #3 (scale 1:1, no flip) -> colour buffer 0x1F... (219,10)".
    pub description: String,
}

/// The display transfer a screen pixel was mapped through.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct TransferMapping {
    /// The eye whose framebuffer was followed (always `Left` on the bottom screen).
    pub eye: Eye,
    /// The frame the transfer ran in (the image may be displayed in a later frame).
    pub frame: u32,
    /// Ordinal of the transfer among the fills, transfers and copies of its frame (0-based).
    pub ordinal: usize,
    /// Register writes executed when it ran.
    pub at_write: u64,
    /// Its decoded configuration.
    pub config: DisplayTransferConfig,
    /// Framebuffer address of the screen pixel.
    pub framebuffer_addr: u32,
    /// Output pixel (column, row) the screen pixel lies in.
    pub output: (u32, u32),
}

/// The value of the followed pixel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PixelValue {
    /// Colour (RGBA8), for a colour buffer.
    pub color: Option<[u8; 4]>,
    /// Raw depth, for a depth buffer.
    pub depth: Option<u32>,
    /// Stencil, for a D24S8 depth buffer.
    pub stencil: Option<u8>,
}

/// One thing that touched the pixel.
// Draw events (with their counters) are the common case and a history holds a bounded number of
// events, so boxing the larger variant would only add an allocation per draw event.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum HistoryEvent {
    /// A draw produced fragments at the pixel.
    Draw {
        /// Draw index over the whole trace.
        draw: u64,
        /// Draw index within the frame.
        in_frame: u64,
        /// The draw's summary.
        info: Option<DrawInfo>,
        /// Its counters.
        stats: Option<DrawStats>,
        /// One record per fragment at the pixel, in rasterisation order.
        fragments: Vec<FragmentRecord>,
    },
    /// A memory fill, display transfer or texture copy wrote the pixel's bytes.
    Engine {
        /// Draws finished when it ran (over the whole trace).
        after_draws: u64,
        /// What ran.
        event: EngineEvent,
    },
}

/// The history of one pixel.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PixelHistory {
    /// What was asked.
    pub request: HistoryRequest,
    /// The frame the events belong to: the requested one, or for a screen pixel whose display
    /// transfer ran in an earlier frame, that frame.
    pub frame: u32,
    /// Where the pixel is.
    pub mapping: PixelMapping,
    /// Position at the start of the range.
    pub start: Position,
    /// Position at the end of the range.
    pub end: Position,
    /// The pixel's value at the start of the range.
    pub before: PixelValue,
    /// The pixel's value at the end of the range.
    pub after: PixelValue,
    /// What touched it, in execution order.
    pub events: Vec<HistoryEvent>,
    /// Fragment records not kept ([`MAX_RECORDS`] and the per-draw limit).
    pub dropped: u64,
}

impl PixelHistory {
    /// Number of fragment records kept.
    pub fn fragment_count(&self) -> usize {
        self.events
            .iter()
            .map(|e| match e {
                HistoryEvent::Draw { fragments, .. } => fragments.len(),
                HistoryEvent::Engine { .. } => 0,
            })
            .sum()
    }
}

/// Records display transfers (with their position) and nothing else.
#[derive(Default)]
struct TransferLog {
    writes: u64,
    transfers: Vec<(usize, u64, EngineEvent)>,
    count: usize,
}

impl Observer for TransferLog {
    fn reg_write(&mut self, _ev: &crate::debug::RegWriteEvent) {
        self.writes += 1;
    }
    fn engine(&mut self, ev: &EngineEvent) {
        let ordinal = self.count;
        if !matches!(ev, EngineEvent::CommandList { .. }) {
            self.count += 1;
        }
        if let EngineEvent::Transfer {
            texture_copy: false,
            ..
        } = ev
        {
            if self.transfers.len() >= MAX_TRANSFERS_KEPT {
                self.transfers.remove(0);
            }
            self.transfers.push((ordinal, self.writes, ev.clone()));
        }
    }
}

/// Collects the probe's records and the engine events that wrote the pixel.
struct Collector {
    addr: u32,
    bytes: u32,
    frame_first_draw: u64,
    draws: u64,
    open: Option<DrawInfo>,
    events: Vec<HistoryEvent>,
    kept: usize,
    dropped: u64,
}

fn overlaps(written: Option<(u32, u64)>, addr: u32, bytes: u32) -> bool {
    written.is_some_and(|(start, len)| {
        let (s, e) = (u64::from(start), u64::from(start) + len);
        let (a, b) = (u64::from(addr), u64::from(addr) + u64::from(bytes));
        s < b && a < e
    })
}

impl Observer for Collector {
    /// Pixel history reports each draw's counters in full.
    fn wants_costs(&self) -> bool {
        true
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.open = Some(*info);
    }
    fn draw_end(
        &mut self,
        info: &DrawInfo,
        stats: &DrawStats,
        _detail: Option<crate::debug::DrawDetail>,
    ) {
        self.draws += 1;
        if let Some(HistoryEvent::Draw {
            draw,
            info: i,
            stats: s,
            ..
        }) = self.events.last_mut()
            && *draw == info.draw
        {
            *i = Some(*info);
            *s = Some(*stats);
        }
        self.open = None;
    }
    fn fragment(&mut self, rec: &FragmentRecord) {
        if self.kept >= MAX_RECORDS {
            self.dropped += 1;
            return;
        }
        self.kept += 1;
        if let Some(HistoryEvent::Draw {
            draw, fragments, ..
        }) = self.events.last_mut()
            && *draw == rec.draw
        {
            fragments.push(rec.clone());
            return;
        }
        self.events.push(HistoryEvent::Draw {
            draw: rec.draw,
            in_frame: rec.draw.saturating_sub(self.frame_first_draw),
            info: self.open.filter(|i| i.draw == rec.draw),
            stats: None,
            fragments: vec![rec.clone()],
        });
    }
    fn diagnostic(&mut self, diag: &crate::debug::Diagnostic) {
        if diag.detail.starts_with("pixel history:") {
            // "pixel history: N fragment records not kept" from the per-draw limit.
            let n = diag
                .detail
                .split_whitespace()
                .nth(2)
                .and_then(|t| t.parse::<u64>().ok())
                .unwrap_or(0);
            self.dropped += n;
        }
    }
    fn engine(&mut self, ev: &EngineEvent) {
        let written = match ev {
            EngineEvent::MemoryFill { written, .. } | EngineEvent::Transfer { written, .. } => {
                *written
            }
            EngineEvent::CommandList { .. } => None,
        };
        if overlaps(written, self.addr, self.bytes) {
            self.events.push(HistoryEvent::Engine {
                after_draws: self.draws,
                event: ev.clone(),
            });
        }
    }
}

fn ext(regs: &[u32], pa: u32) -> u32 {
    regs.get((pa.wrapping_sub(EXT_REG_BASE) / 4) as usize)
        .copied()
        .unwrap_or(0)
}

fn transfer_regs(ext_regs: &[u32]) -> TransferRegs {
    TransferRegs {
        input_addr: ext(ext_regs, 0x1040_0C00),
        output_addr: ext(ext_regs, 0x1040_0C04),
        output_dim: ext(ext_regs, 0x1040_0C08),
        input_dim: ext(ext_regs, 0x1040_0C0C),
        flags: ext(ext_regs, 0x1040_0C10),
        copy_size: ext(ext_regs, 0x1040_0C20),
        copy_input: ext(ext_regs, 0x1040_0C24),
        copy_output: ext(ext_regs, 0x1040_0C28),
    }
}

/// The checked range of a request within its frame.
struct FrameRange {
    /// Position at the start of the frame.
    start: Position,
    /// Where the range ends (end of the frame, after a draw or after a write).
    end_target: Target,
}

/// The range [start, end] of a request, checked.
fn range<S: TraceSource>(
    replay: &mut Replay<S>,
    req: &HistoryRequest,
) -> Result<FrameRange, HistoryError> {
    let frame = req.frame;
    // Seek (keyframes make it short) to the start of the frame, then run to its end.
    if frame == 0 {
        replay.rewind();
    } else if !replay.seek(Target::Frame(frame - 1), &mut ()) {
        return Err(HistoryError::NoFrame {
            frame,
            frames: replay.position().frame,
        });
    }
    let start = replay.position();
    let closed = replay.run_until(Target::Frame(frame), &mut ());
    let end = replay.position();
    if !closed && frame > 0 && end.writes == start.writes {
        return Err(HistoryError::NoFrame {
            frame,
            frames: end.frame,
        });
    }
    if let Some(n) = req.until_write {
        if n < start.writes || n > end.writes {
            return Err(HistoryError::WriteOutsideFrame {
                frame,
                write: n,
                first: start.writes,
                last: end.writes,
            });
        }
        return Ok(FrameRange {
            start,
            end_target: Target::AfterWrite(n),
        });
    }
    let end_target = match req.after_draw {
        None => Target::Frame(frame),
        Some(m) => {
            let count = end.draws - start.draws;
            if m >= count {
                return Err(HistoryError::NoDraw {
                    frame,
                    draw: m,
                    count,
                });
            }
            Target::AfterDraw(start.draws + m)
        }
    };
    Ok(FrameRange { start, end_target })
}

fn outside(x: u32, y: u32, what: &str, width: u32, height: u32) -> HistoryError {
    HistoryError::Outside {
        x,
        y,
        what: what.to_string(),
        width,
        height,
    }
}

/// A buffer pixel of the render target described by `fb` (image coordinates).
fn buffer_pixel(
    fb: &FramebufferConfig,
    depth: bool,
    x: u32,
    row: u32,
) -> Result<PixelMapping, HistoryError> {
    let what = if depth {
        "depth buffer"
    } else {
        "colour buffer"
    };
    if x >= fb.width || row >= fb.height {
        return Err(outside(x, row, what, fb.width, fb.height));
    }
    let window_y = fb.height - 1 - row;
    let (buffer, addr, bytes) = if depth {
        let a = fb
            .depth_pixel_addr(x, window_y)
            .map_err(|e| HistoryError::Unmappable(format!("depth buffer: {e}")))?;
        let b = fb.depth_format.map_or(4, |f| f.bytes_per_pixel() as u32);
        (ProbeBuffer::Depth(fb.depth_addr), a, b)
    } else {
        let a = fb
            .color_pixel_addr(x, window_y)
            .map_err(|e| HistoryError::Unmappable(format!("colour buffer: {e}")))?;
        let b = fb.color_format.map_or(4, |f| f.bytes_per_pixel() as u32);
        (ProbeBuffer::Color(fb.color_addr), a, b)
    };
    Ok(PixelMapping {
        buffer,
        width: fb.width,
        height: fb.height,
        x,
        row,
        window_y,
        addr,
        bytes,
        transfer: None,
        description: format!(
            "{what} 0x{:08X} ({x},{row}) = window ({x},{window_y}), pixel bytes at 0x{addr:08X}",
            match buffer {
                ProbeBuffer::Color(a) | ProbeBuffer::Depth(a) => a,
            }
        ),
    })
}

/// The render target a mapping refers to: the end state's configuration, with the address,
/// size and format of the mapped buffer when it came from a display transfer.
fn target_config(
    regs: &[u32; 0x300],
    m: &PixelMapping,
    input_format: Option<ColorFormat>,
) -> FramebufferConfig {
    let mut fb = FramebufferConfig::from_regs(regs);
    if m.transfer.is_some()
        && let ProbeBuffer::Color(a) = m.buffer
    {
        fb.color_addr = a;
        fb.width = m.width;
        fb.height = m.height;
        fb.tile_mode = TileMode::Tiled8;
        if let Some(f) = input_format {
            fb.color_format = Some(f);
        }
    }
    fb
}

/// Where a screen pixel lies in the LCD framebuffer.
struct ScreenFramebuffer {
    name: &'static str,
    /// The eye whose framebuffer this is.
    eye: Eye,
    /// Framebuffer base address (of the eye).
    base: u32,
    /// Address of the pixel's bytes.
    addr: u32,
    /// Bytes per framebuffer pixel.
    bpp: u32,
    /// Pixel within the framebuffer's memory row (`LCD_ROW_PIXELS − 1 − y`).
    p: u32,
}

fn screen_name(screen: Screen, eye: Eye) -> &'static str {
    match (screen, eye) {
        (Screen::Top, Eye::Left) => "top screen",
        (Screen::Top, Eye::Right) => "top screen (right eye)",
        (Screen::Bottom, _) => "bottom screen",
    }
}

/// The framebuffer pixel the LCD shows `eye` at screen pixel (x, y) in the GPU's current
/// state.
fn screen_framebuffer(
    gpu: &crate::command::gpu::Gpu,
    screen: Screen,
    eye: Eye,
    x: u32,
    y: u32,
) -> Result<ScreenFramebuffer, HistoryError> {
    // The bottom screen has one framebuffer.
    let eye = if screen == Screen::Bottom {
        Eye::Left
    } else {
        eye
    };
    let name = screen_name(screen, eye);
    let (w, h) = screen.size();
    if x >= w || y >= h {
        return Err(outside(x, y, name, w, h));
    }
    let fill = LcdColorFill::from_lcd_regs(screen, &gpu.lcd_regs[..], LCD_REG_BASE);
    if fill.enabled {
        return Err(HistoryError::Unmappable(format!(
            "the {name} shows the LCD colour fill, not a framebuffer"
        )));
    }
    let lcd = LcdFramebufferConfig::from_ext_regs(screen, &gpu.ext_regs[..], EXT_REG_BASE);
    let fmt = lcd.format.ok_or_else(|| {
        HistoryError::Unmappable(format!("the {name} framebuffer format is invalid"))
    })?;
    let bpp = fmt.bytes_per_pixel() as u32;
    let base = lcd.address(eye);
    // Scan-out (`lcd::scan_out`): screen column x is memory row x (stride apart); screen row y
    // is pixel LCD_ROW_PIXELS − 1 − y of that row.
    let p = LCD_ROW_PIXELS - 1 - y;
    let addr = base
        .wrapping_add(x.wrapping_mul(lcd.stride))
        .wrapping_add(p * bpp);
    Ok(ScreenFramebuffer {
        name,
        eye,
        base,
        addr,
        bpp,
        p,
    })
}

/// The last display transfer of `log` that wrote the framebuffer pixel: (ordinal, write).
fn last_transfer_into(log: &TransferLog, fb: &ScreenFramebuffer) -> Option<(usize, u64)> {
    log.transfers
        .iter()
        .rev()
        .find(|(_, _, ev)| {
            matches!(ev, EngineEvent::Transfer { written, .. } if overlaps(*written, fb.addr, fb.bpp))
        })
        .map(|&(ordinal, at_write, _)| (ordinal, at_write))
}

/// The display transfer that produced a displayed framebuffer pixel.
struct FoundTransfer {
    /// The frame it ran in.
    frame: u32,
    /// Position at the start of that frame.
    start: Position,
    /// Ordinal among the fills, transfers and copies of the frame.
    ordinal: usize,
    /// The register write that ran it.
    at_write: u64,
}

/// Looks for the last display transfer that wrote framebuffer pixel `fb`: in frame `last`
/// from its start up to `end_in_last`, then in each of the [`MAX_FRAMES_BACK`] frames before
/// it (newest first). Leaves the replay anywhere.
fn find_transfer<S: TraceSource>(
    replay: &mut Replay<S>,
    fb: &ScreenFramebuffer,
    last: u32,
    end_in_last: Target,
) -> Option<FoundTransfer> {
    for frame in (last.saturating_sub(MAX_FRAMES_BACK)..=last).rev() {
        if frame == 0 {
            replay.rewind();
        } else {
            replay.seek(Target::Frame(frame - 1), &mut ());
        }
        let start = replay.position();
        let mut log = TransferLog {
            writes: start.writes,
            ..TransferLog::default()
        };
        let end = if frame == last {
            end_in_last
        } else {
            Target::Frame(frame)
        };
        replay.run_until(end, &mut log);
        if let Some((ordinal, at_write)) = last_transfer_into(&log, fb) {
            return Some(FoundTransfer {
                frame,
                start,
                ordinal,
                at_write,
            });
        }
    }
    None
}

/// The error for a screen pixel no transfer in the look-back wrote.
fn no_transfer(fb: &ScreenFramebuffer, x: u32, y: u32, last: u32, upto: &str) -> HistoryError {
    let (name, addr, base, p) = (fb.name, fb.addr, fb.base, fb.p);
    let first = last.saturating_sub(MAX_FRAMES_BACK);
    HistoryError::Unmappable(format!(
        "no display transfer in frames {first}..={last} {upto}wrote the {name} framebuffer pixel at 0x{addr:08X} ({name} ({x},{y}) -> framebuffer 0x{base:08X} ({p},{x}))"
    ))
}

/// Inverts display transfer `found` for the framebuffer pixel `fb` of screen pixel (x, y).
/// Leaves the replay right after the transfer.
fn through_transfer<S: TraceSource>(
    replay: &mut Replay<S>,
    fb: &ScreenFramebuffer,
    x: u32,
    y: u32,
    found: &FoundTransfer,
) -> Result<(PixelMapping, Option<ColorFormat>), HistoryError> {
    let (name, base, fb_addr) = (fb.name, fb.base, fb.addr);
    let (ordinal, at_write) = (found.ordinal, found.at_write);
    replay.seek(Target::AfterWrite(at_write), &mut ());
    let Transfer::Display(cfg) = transfer_regs(&replay.gpu().ext_regs[..]).decode() else {
        return Err(HistoryError::Unmappable(
            "the transfer registers no longer describe a display transfer".into(),
        ));
    };
    let out_fmt = ColorFormat::from_external_id(cfg.output_format_id);
    let in_fmt = ColorFormat::from_external_id(cfg.input_format_id);
    let (Some(out_fmt), Some(in_fmt)) = (out_fmt, in_fmt) else {
        return Err(HistoryError::Unmappable(
            "the display transfer has an invalid format".into(),
        ));
    };
    let (in_layout, out_layout) = cfg.layouts();
    if out_layout != TileMode::Linear || in_layout != TileMode::Tiled8 {
        return Err(HistoryError::Unmappable(format!(
            "display transfer #{ordinal} converts {in_layout:?} to {out_layout:?}; only tiled-to-linear transfers (the ones that feed the LCD) are followed"
        )));
    }
    let (out_w, out_h) = cfg.output_size();
    let obpp = out_fmt.bytes_per_pixel() as u32;
    let off = fb_addr.wrapping_sub(cfg.output_addr);
    let idx = off / obpp;
    let (ox, oy) = (idx % out_w.max(1), idx / out_w.max(1));
    if oy >= out_h {
        return Err(HistoryError::Unmappable(
            "the framebuffer pixel lies outside the display transfer's output".into(),
        ));
    }
    let (sx, sy, scale) = match cfg.scaling {
        Scaling::None => (0, 0, "1:1"),
        Scaling::Half2x1 => (1, 0, "2x1 box filter: this pixel and the one to its right"),
        Scaling::Half2x2 => (1, 1, "2x2 box filter: this pixel and its 3 neighbours"),
        Scaling::Invalid => {
            return Err(HistoryError::Unmappable(
                "the display transfer's scaling is invalid".into(),
            ));
        }
    };
    let in_y = if cfg.flip_vertically {
        out_h - 1 - oy
    } else {
        oy
    };
    let (bx, row) = (ox << sx, in_y << sy);
    let (bw, bh) = (cfg.input_stride(), cfg.input_height);
    if bx >= bw || row >= bh {
        return Err(HistoryError::Unmappable(format!(
            "the display transfer reads ({bx},{row}) outside its {bw}x{bh} input"
        )));
    }
    let window_y = bh - 1 - row;
    let in_bpp = in_fmt.bytes_per_pixel() as u32;
    let addr = cfg
        .input_addr
        .wrapping_add(crate::pixel::tiling::tiled_offset(bx, row, bw, in_bpp));
    let flip = if cfg.flip_vertically {
        "flip"
    } else {
        "no flip"
    };
    let description = format!(
        "{name} ({x},{y}) -> framebuffer 0x{base:08X} ({ox},{oy}) (LCD rotated 90°: screen columns are framebuffer rows) via display transfer #{ordinal} (scale {scale}, {flip}) -> colour buffer 0x{:08X} ({bx},{row}) = window ({bx},{window_y})",
        cfg.input_addr
    );
    Ok((
        PixelMapping {
            buffer: ProbeBuffer::Color(cfg.input_addr),
            width: bw,
            height: bh,
            x: bx,
            row,
            window_y,
            addr,
            bytes: in_bpp,
            transfer: Some(TransferMapping {
                eye: fb.eye,
                frame: found.frame,
                ordinal,
                at_write,
                config: cfg,
                framebuffer_addr: fb_addr,
                output: (ox, oy),
            }),
            description,
        },
        Some(in_fmt),
    ))
}

fn value_of<S: TraceSource>(
    replay: &Replay<S>,
    fb: &FramebufferConfig,
    m: &PixelMapping,
) -> PixelValue {
    let mem = replay.mem();
    match m.buffer {
        ProbeBuffer::Color(_) => PixelValue {
            color: fb.read_color(mem, m.x, m.window_y).ok(),
            ..PixelValue::default()
        },
        ProbeBuffer::Depth(_) => {
            let ds = fb.read_depth_stencil(mem, m.x, m.window_y).ok();
            PixelValue {
                depth: ds.map(|d| d.0),
                stencil: ds.and_then(|d| {
                    (fb.depth_format == Some(crate::pixel::color::DepthFormat::D24S8))
                        .then_some(d.1)
                }),
                ..PixelValue::default()
            }
        }
    }
}

/// Seeks to the start of `frame` (rewinds for frame 0).
fn seek_frame_start<S: TraceSource>(replay: &mut Replay<S>, frame: u32) {
    if frame == 0 {
        replay.rewind();
    } else {
        replay.seek(Target::Frame(frame - 1), &mut ());
    }
}

/// Where a screen request's history starts and ends, and the pixel it follows.
struct ScreenRange {
    mapping: PixelMapping,
    input_format: Option<ColorFormat>,
    /// The frame the transfer ran in.
    frame: u32,
    start: Position,
    end_target: Target,
}

/// Maps a screen request through the transfer that produced the displayed pixel (looking
/// back up to [`MAX_FRAMES_BACK`] frames) and narrows the range to that transfer's frame, up
/// to the transfer.
fn screen_range<S: TraceSource>(
    replay: &mut Replay<S>,
    req: &HistoryRequest,
    frame_range: &FrameRange,
    screen: Screen,
    eye: Eye,
) -> Result<ScreenRange, HistoryError> {
    // The image shown at the end of the frame (the one the frame presents: the LCD and the
    // transfer that feeds it usually run after the last draw), or right after `until_write`.
    let (shown, shown_text) = match req.until_write {
        Some(n) => (
            Target::AfterWrite(n),
            format!("displayed at command {n} of frame {}", req.frame),
        ),
        None => (
            Target::Frame(req.frame),
            format!("displayed at the end of frame {}", req.frame),
        ),
    };
    replay.seek(shown, &mut ());
    let fb = screen_framebuffer(replay.gpu(), screen, eye, req.x, req.y)?;
    let upto = match req.until_write {
        Some(n) => format!("up to command {n} "),
        None => String::new(),
    };
    let found = find_transfer(replay, &fb, req.frame, shown)
        .ok_or_else(|| no_transfer(&fb, req.x, req.y, req.frame, &upto))?;
    let (mut mapping, input_format) = through_transfer(replay, &fb, req.x, req.y, &found)?;
    let (ordinal, at_write, frame) = (found.ordinal, found.at_write, found.frame);
    let (start, end_target) = if frame == req.frame {
        // The requested range, stopped at the transfer when it ends later.
        replay.seek(frame_range.end_target, &mut ());
        let end_target = if at_write < replay.position().writes {
            Target::AfterWrite(at_write)
        } else {
            frame_range.end_target
        };
        mapping.description = format!(
            "{}; {shown_text}, rendered and transferred in the same frame by display transfer #{ordinal} at command {at_write}",
            mapping.description
        );
        (frame_range.start, end_target)
    } else {
        mapping.description = format!(
            "{}; {shown_text}, rendered and transferred in frame {frame} by display transfer #{ordinal} at command {at_write}: the history covers frame {frame} up to that transfer",
            mapping.description
        );
        (found.start, Target::AfterWrite(at_write))
    };
    Ok(ScreenRange {
        mapping,
        input_format,
        frame,
        start,
        end_target,
    })
}

/// The history of one pixel over a frame (see the module doc). Leaves the replay at the end
/// of the range with no probe set.
pub fn pixel_history<S: TraceSource>(
    replay: &mut Replay<S>,
    req: &HistoryRequest,
) -> Result<PixelHistory, HistoryError> {
    replay.set_pixel_probe(None);
    let frame_range = range(replay, req)?;
    let (mapping, in_fmt, frame, start, end_target) = match req.target.screen_eye() {
        None => {
            replay.seek(frame_range.end_target, &mut ());
            let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
            (
                buffer_pixel(&fb, req.target == HistoryTarget::Depth, req.x, req.y)?,
                None,
                req.frame,
                frame_range.start,
                frame_range.end_target,
            )
        }
        Some((screen, eye)) => {
            let r = screen_range(replay, req, &frame_range, screen, eye)?;
            (r.mapping, r.input_format, r.frame, r.start, r.end_target)
        }
    };
    // The end state: render target and value.
    replay.seek(end_target, &mut ());
    let end_regs = *replay.gpu().regs;
    let fb = target_config(&end_regs, &mapping, in_fmt);
    let end = replay.position();
    let after = value_of(replay, &fb, &mapping);

    // The start value, then the range again with the probe.
    seek_frame_start(replay, frame);
    let before = value_of(replay, &fb, &mapping);
    let probe = PixelProbe::pixel(mapping.buffer, mapping.x, mapping.window_y);
    replay.set_pixel_probe(Some(probe));
    let mut col = Collector {
        addr: mapping.addr,
        bytes: mapping.bytes,
        frame_first_draw: start.draws,
        draws: replay.position().draws,
        open: None,
        events: Vec::new(),
        kept: 0,
        dropped: 0,
    };
    replay.run_until(end_target, &mut col);
    replay.set_pixel_probe(None);
    Ok(PixelHistory {
        request: *req,
        frame,
        mapping,
        start,
        end,
        before,
        after,
        events: col.events,
        dropped: col.dropped,
    })
}

/// How many frames before the requested one (or the one containing the position, for
/// [`identify_screen_pixel`]) are searched for the display transfer that produced a screen
/// pixel: double- and triple-buffered programs present an earlier frame's image while they
/// render the next. Bounds the work of a screen query to this many frames plus one.
pub const MAX_FRAMES_BACK: u32 = 4;

/// Where a screen pixel, as the LCD shows it after a command, was rendered: the colour-buffer
/// pixel behind it (through the LCD scan-out and the display transfer that wrote the
/// framebuffer) and the primitive that last wrote that pixel before the transfer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ScreenPick {
    /// The colour-buffer pixel, with the transfer (always `Some` here).
    pub mapping: PixelMapping,
    /// The frame the display transfer ran in.
    pub frame: u32,
    /// The primitive (draw, assembled triangle) that last wrote the colour-buffer pixel
    /// between the start of that frame and the transfer; `None` when no draw of that range
    /// wrote it (cleared or untouched) or the buffer was not recorded.
    pub primitive: Option<crate::debug::PrimitiveId>,
    /// False when the primitive-ID buffer of the colour buffer could not be recorded (no draw
    /// rendered to it in the range, or it is larger than the debug buffers allow).
    pub recorded: bool,
}

/// Identifies screen pixel (x, y) (`target` is [`HistoryTarget::Top`],
/// [`HistoryTarget::TopRight`] or [`HistoryTarget::Bottom`]) as the LCD shows it right after
/// register write `at`: the LCD configuration there gives the framebuffer pixel (of the
/// target's eye); the last display transfer at or before `at` that wrote it (in the frame of
/// `at` or up to [`MAX_FRAMES_BACK`] frames earlier) gives the colour-buffer pixel (its flip
/// and box filter inverted); the primitive-ID buffer recorded from the start of that
/// transfer's frame up to the transfer gives the primitive.
///
/// Cost: a few seeks and one replay of the transfer's frame with the debug buffers (reference
/// pixel path). Leaves the replay right after the transfer.
pub fn identify_screen_pixel<S: TraceSource>(
    replay: &mut Replay<S>,
    target: HistoryTarget,
    x: u32,
    y: u32,
    at: u64,
) -> Result<ScreenPick, HistoryError> {
    let Some((screen, eye)) = target.screen_eye() else {
        return Err(HistoryError::Unmappable(
            "only the top and bottom screens go through a display transfer".into(),
        ));
    };
    replay.set_pixel_probe(None);
    // A seek may land after frame markers that follow write `at` (no write separates them);
    // the search below starts from that frame and steps back, so both give the same answer.
    replay.seek(Target::AfterWrite(at), &mut ());
    let here = replay.position();
    let fb = screen_framebuffer(replay.gpu(), screen, eye, x, y)?;
    let last = here.frame;
    let found = find_transfer(replay, &fb, last, Target::AfterWrite(at))
        .ok_or_else(|| no_transfer(&fb, x, y, last, &format!("up to command {at} ")))?;
    let (mut mapping, _) = through_transfer(replay, &fb, x, y, &found)?;
    let (frame, start, at_write) = (found.frame, found.start, found.at_write);
    mapping.description = format!(
        "{} (the transfer ran in frame {frame}, command {at_write})",
        mapping.description
    );
    let buffers = replay.record_debug_buffers(
        Target::AfterWrite(start.writes),
        Target::AfterWrite(at_write),
        &mut (),
    );
    let color = match mapping.buffer {
        ProbeBuffer::Color(a) | ProbeBuffer::Depth(a) => a,
    };
    let t = buffers.target(color);
    Ok(ScreenPick {
        primitive: t.and_then(|t| t.id_at_image(mapping.x, mapping.row)),
        recorded: t.is_some(),
        mapping,
        frame,
    })
}
