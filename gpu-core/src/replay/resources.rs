//! Resource timeline ("who touched this memory?"): for a physical address range, every producer
//! and consumer in trace order.
//!
//! Input: a [`Replay`] (rewound and run once, element by element, with no keyframes, so memory
//! use does not grow with the trace) and an [`AddrRange`]. Output: [`ResourceEvent`]s handed to
//! a callback as they happen (streaming), or collected into a bounded [`Timeline`].
//!
//! Producers and consumers recognised:
//! * memory loads of the trace (the data the recorder captured);
//! * memory fills (the range actually written);
//! * display transfers and texture copies, as source (extent from the transfer registers) and
//!   destination (the range actually written);
//! * draws rendering into the colour buffer (colour writes enabled) or the depth/stencil buffer
//!   (depth or stencil writes enabled), extent from COLORBUFFER/DEPTHBUFFER_LOC, the formats and
//!   FRAMEBUFFER_DIM;
//! * draws sampling a texture (enabled units), extent from address, size, format and the LOD
//!   max level (all six faces of a cube map);
//! * draws reading vertex arrays (each loader from the first to the last vertex id the draw
//!   used) and index buffers.
//!
//! Registers read (after each draw, as the draw saw them): the framebuffer registers
//! (0x116-0x11E), texture units (0x080-0x0A7), the vertex loaders (0x200-0x227); external
//! registers of the transfer engine (PA 0x10400C00-0x10400C28) after a transfer.
//!
//! The extents are what the configuration addresses, not a byte-exact trace of the accesses:
//! a draw that covers part of its colour buffer is reported for the whole buffer, a vertex
//! array for every byte between its first and last vertex.

use pica_cmd::citrace::{StreamEvent, TraceSource, load_target};
use serde::Serialize;

use crate::debug::{DrawInfo, DrawKind, DrawStats, EngineEvent, Observer};
use crate::engines::{Transfer, TransferRegs};
use crate::geometry::vertex_loader::{LoaderConfig, index_size};
use crate::pixel::framebuffer::FramebufferConfig;
use crate::pixel::texture::{TextureConfig, TextureType};
use crate::regs::EXT_REG_BASE;
use crate::replay::{Position, Replay};

/// Most indices read to find the vertex-id range of an indexed draw.
pub const MAX_INDICES_SCANNED: u32 = 1 << 20;

/// A physical address range `[start, start + len)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct AddrRange {
    /// First byte.
    pub start: u32,
    /// Length in bytes (at least 1 for a useful query).
    pub len: u64,
}

impl AddrRange {
    /// One past the last byte (u64, no overflow).
    pub fn end(&self) -> u64 {
        u64::from(self.start) + self.len
    }

    /// True when the two ranges share a byte.
    pub fn overlaps(&self, other: &AddrRange) -> bool {
        self.len > 0
            && other.len > 0
            && u64::from(self.start) < other.end()
            && u64::from(other.start) < self.end()
    }
}

/// What a producer or consumer did to the range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Access {
    /// A memory load of the trace wrote it.
    MemoryLoad,
    /// A memory fill wrote it.
    MemoryFill,
    /// A display transfer read it.
    TransferRead,
    /// A display transfer wrote it.
    TransferWrite,
    /// A texture copy read it.
    CopyRead,
    /// A texture copy wrote it.
    CopyWrite,
    /// A draw rendered into it as its colour buffer.
    ColorWrite,
    /// A draw rendered into it as its depth/stencil buffer.
    DepthWrite,
    /// A draw sampled it as a texture.
    TextureRead,
    /// A draw read vertex attributes from it.
    VertexRead,
    /// A draw read indices from it.
    IndexRead,
}

impl Access {
    /// True for producers (the range's contents may change).
    pub fn is_write(self) -> bool {
        matches!(
            self,
            Access::MemoryLoad
                | Access::MemoryFill
                | Access::TransferWrite
                | Access::CopyWrite
                | Access::ColorWrite
                | Access::DepthWrite
        )
    }

    /// Short name for text output (`load`, `fill`, `transfer-read`, …).
    pub fn name(self) -> &'static str {
        match self {
            Access::MemoryLoad => "load",
            Access::MemoryFill => "fill",
            Access::TransferRead => "transfer-read",
            Access::TransferWrite => "transfer-write",
            Access::CopyRead => "copy-read",
            Access::CopyWrite => "copy-write",
            Access::ColorWrite => "color-write",
            Access::DepthWrite => "depth-write",
            Access::TextureRead => "texture-read",
            Access::VertexRead => "vertex-read",
            Access::IndexRead => "index-read",
        }
    }
}

/// One producer or consumer of the queried range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceEvent {
    /// What it did.
    pub access: Access,
    /// Replay position right after it (a draw: after its trigger write; a memory load: the
    /// position it was executed at, which no register write separates from the load).
    pub pos: Position,
    /// The draw (0-based over the trace), for draw accesses.
    pub draw: Option<u64>,
    /// The whole range the producer/consumer addressed (it overlaps the query).
    pub range: AddrRange,
    /// What it was, for people: `texture unit 0: RGB565 64x64, 4 levels`, …
    pub what: String,
}

/// Counts of a whole pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct TimelineStats {
    /// Events that touched the range.
    pub events: u64,
    /// Of those, producers.
    pub writes: u64,
    /// Draws the replay executed.
    pub draws: u64,
    /// Stream elements executed.
    pub elements: u64,
}

/// Collects events, keeping at most `limit` of them (the rest are counted).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Timeline {
    /// The query.
    pub query: Option<AddrRange>,
    /// The first `limit` events in trace order.
    pub events: Vec<ResourceEvent>,
    /// Events not kept.
    pub dropped: u64,
    /// Counters of the pass.
    pub stats: TimelineStats,
}

impl Timeline {
    /// Runs [`who_touched_with_progress`] and keeps the first `limit` events; `progress` is
    /// called as there, with the number of events found so far. Returns the timeline and
    /// whether the pass ran to the end (false: cancelled, the timeline holds the events found
    /// before).
    pub fn collect_with_progress<S: TraceSource>(
        replay: &mut Replay<S>,
        query: AddrRange,
        limit: usize,
        progress: &mut dyn FnMut(Position, u64) -> bool,
    ) -> (Self, bool) {
        let mut t = Timeline {
            query: Some(query),
            ..Timeline::default()
        };
        let found = std::cell::Cell::new(0u64);
        let (stats, complete) = who_touched_with_progress(
            replay,
            query,
            &mut |ev| {
                found.set(found.get() + 1);
                if t.events.len() < limit {
                    t.events.push(ev.clone());
                } else {
                    t.dropped += 1;
                }
                true
            },
            &mut |pos| progress(pos, found.get()),
        );
        t.stats = stats;
        (t, complete)
    }

    /// Runs [`who_touched`] and keeps the first `limit` events.
    pub fn collect<S: TraceSource>(
        replay: &mut Replay<S>,
        query: AddrRange,
        limit: usize,
        cancel: &mut dyn FnMut() -> bool,
    ) -> Self {
        let mut t = Timeline {
            query: Some(query),
            ..Timeline::default()
        };
        let stats = who_touched(replay, query, &mut |ev| {
            if t.events.len() < limit {
                t.events.push(ev.clone());
            } else {
                t.dropped += 1;
            }
            !cancel()
        });
        t.stats = stats;
        t
    }
}

/// Watches one step: the draws it finished (pausing right after each) and its engine runs.
#[derive(Default)]
struct Watch {
    draw: Option<(DrawInfo, DrawStats)>,
    engines: Vec<EngineEvent>,
}

impl Observer for Watch {
    fn draw_end(
        &mut self,
        info: &DrawInfo,
        stats: &DrawStats,
        _detail: Option<crate::debug::DrawDetail>,
    ) {
        self.draw = Some((*info, *stats));
    }
    fn engine(&mut self, ev: &EngineEvent) {
        if !matches!(ev, EngineEvent::CommandList { .. }) && self.engines.len() < 64 {
            self.engines.push(ev.clone());
        }
    }
    fn stop_requested(&self) -> bool {
        // Pause right after a draw so that its registers can be read as it saw them.
        self.draw.is_some()
    }
}

/// Rewinds `replay` and runs the whole trace once, calling `sink` for every producer and
/// consumer of `query` in trace order; `sink` returns false to stop early. Returns the counts.
pub fn who_touched<S: TraceSource>(
    replay: &mut Replay<S>,
    query: AddrRange,
    sink: &mut dyn FnMut(&ResourceEvent) -> bool,
) -> TimelineStats {
    who_touched_with_progress(replay, query, sink, &mut |_| true).0
}

/// [`who_touched`] that also calls `progress` with the replay position before every stream
/// element (for a progress bar: `position.element` out of the trace's elements); `progress`
/// returns false to cancel the pass there. Returns the counts and whether the pass ran to the
/// end of the trace (false: `sink` or `progress` stopped it).
pub fn who_touched_with_progress<S: TraceSource>(
    replay: &mut Replay<S>,
    query: AddrRange,
    sink: &mut dyn FnMut(&ResourceEvent) -> bool,
    progress: &mut dyn FnMut(Position) -> bool,
) -> (TimelineStats, bool) {
    replay.rewind();
    let mut stats = TimelineStats::default();
    let mut watch = Watch::default();
    let mut go = true;
    let mut emit = |stats: &mut TimelineStats, ev: ResourceEvent| -> bool {
        if !ev.range.overlaps(&query) {
            return true;
        }
        stats.events += 1;
        if ev.access.is_write() {
            stats.writes += 1;
        }
        sink(&ev)
    };
    while go && !replay.at_end() {
        let pos = replay.position();
        if !progress(pos) {
            go = false;
            break;
        }
        if !replay.gpu().list_in_progress()
            && let Some(StreamEvent::MemoryLoad(load)) = replay.trace().event(pos.element)
        {
            let pa = load_target(load.physical_address);
            go &= emit(
                &mut stats,
                ResourceEvent {
                    access: Access::MemoryLoad,
                    pos,
                    draw: None,
                    range: AddrRange {
                        start: pa,
                        len: u64::from(load.size),
                    },
                    what: format!(
                        "memory load of {} bytes (stream element {})",
                        load.size, pos.element
                    ),
                },
            );
        }
        if !replay.gpu().list_in_progress() {
            stats.elements += 1;
        }
        replay.step_element(&mut watch);
        let after = replay.position();
        for ev in std::mem::take(&mut watch.engines) {
            for e in engine_events(replay, &ev, after) {
                go &= emit(&mut stats, e);
            }
        }
        if let Some((info, dstats)) = watch.draw.take() {
            stats.draws += 1;
            for e in draw_events(replay, &info, &dstats, after) {
                go &= emit(&mut stats, e);
            }
        }
    }
    (stats, go && replay.at_end())
}

/// The ranges an engine run read and wrote.
pub(crate) fn engine_events<S: TraceSource>(
    replay: &Replay<S>,
    ev: &EngineEvent,
    pos: Position,
) -> Vec<ResourceEvent> {
    let mut out = Vec::new();
    let make = |access, start: u32, len: u64, what: String| ResourceEvent {
        access,
        pos,
        draw: None,
        range: AddrRange { start, len },
        what,
    };
    match ev {
        EngineEvent::MemoryFill {
            unit,
            start,
            end,
            value,
            written,
        } => {
            let (a, l) = written.unwrap_or((*start, 0));
            out.push(make(
                Access::MemoryFill,
                a,
                l,
                format!("memory fill unit {unit}: 0x{start:08X}-0x{end:08X} with 0x{value:08X}"),
            ));
        }
        EngineEvent::Transfer { written, .. } => {
            let ext = |pa: u32| {
                replay
                    .gpu()
                    .ext_regs
                    .get(((pa - EXT_REG_BASE) / 4) as usize)
                    .copied()
                    .unwrap_or(0)
            };
            let regs = TransferRegs {
                input_addr: ext(0x1040_0C00),
                output_addr: ext(0x1040_0C04),
                output_dim: ext(0x1040_0C08),
                input_dim: ext(0x1040_0C0C),
                flags: ext(0x1040_0C10),
                copy_size: ext(0x1040_0C20),
                copy_input: ext(0x1040_0C24),
                copy_output: ext(0x1040_0C28),
            };
            let (read, write, what) = match regs.decode() {
                Transfer::Display(c) => {
                    let bpp = crate::pixel::ColorFormat::from_external_id(c.input_format_id)
                        .map_or(4, |f| f.bytes_per_pixel() as u64);
                    let len = u64::from(c.input_stride()) * u64::from(c.input_height) * bpp;
                    (
                        (Access::TransferRead, c.input_addr, len),
                        Access::TransferWrite,
                        format!(
                            "display transfer {}x{} 0x{:08X} -> 0x{:08X}",
                            c.input_width, c.input_height, c.input_addr, c.output_addr
                        ),
                    )
                }
                Transfer::TextureCopy(c) => {
                    let total = u64::from(c.size & !15);
                    let len = if c.input_gap == 0 || c.input_width == 0 {
                        total
                    } else {
                        let lines = total.div_ceil(u64::from(c.input_width));
                        total + lines.saturating_sub(1) * u64::from(c.input_gap)
                    };
                    (
                        (Access::CopyRead, c.input_addr, len),
                        Access::CopyWrite,
                        format!(
                            "texture copy of {total} bytes 0x{:08X} -> 0x{:08X}",
                            c.input_addr, c.output_addr
                        ),
                    )
                }
            };
            out.push(make(read.0, read.1, read.2, what.clone()));
            if let Some((a, l)) = written {
                out.push(make(write, *a, *l, what));
            }
        }
        EngineEvent::CommandList { .. } => {}
    }
    out
}

/// The ranges a draw rendered into and read, from the registers as it saw them.
pub(crate) fn draw_events<S: TraceSource>(
    replay: &Replay<S>,
    info: &DrawInfo,
    stats: &DrawStats,
    pos: Position,
) -> Vec<ResourceEvent> {
    let regs = &replay.gpu().regs;
    let mut out = Vec::new();
    let make = |access, start: u32, len: u64, what: String| ResourceEvent {
        access,
        pos,
        draw: Some(info.draw),
        range: AddrRange { start, len },
        what,
    };
    let fb = FramebufferConfig::from_regs(regs);
    let pixels = u64::from(fb.width) * u64::from(fb.height);
    if fb.color_write
        && let Some(f) = fb.color_format
    {
        out.push(make(
            Access::ColorWrite,
            fb.color_addr,
            pixels * f.bytes_per_pixel() as u64,
            format!(
                "colour buffer {} {}x{}, {} fragments written",
                f.name(),
                fb.width,
                fb.height,
                stats.fragments_written
            ),
        ));
    }
    if (fb.depth_write || fb.stencil_write)
        && let Some(f) = fb.depth_format
    {
        out.push(make(
            Access::DepthWrite,
            fb.depth_addr,
            pixels * f.bytes_per_pixel() as u64,
            format!("depth buffer {f:?} {}x{}", fb.width, fb.height),
        ));
    }
    for t in info.textures.iter().flatten() {
        let cfg = TextureConfig::from_regs(regs, usize::from(t.unit));
        let Some(layout) = cfg.layout() else {
            continue;
        };
        let name = cfg.format.map_or("invalid", |f| f.name());
        let what = format!(
            "texture unit {}: {name} {}x{}, {} level(s)",
            t.unit, cfg.width, cfg.height, layout.count
        );
        let cube = matches!(
            cfg.texture_type,
            TextureType::CubeMap | TextureType::ShadowCube
        );
        if cube {
            for (face, a) in cfg.face_addresses.iter().enumerate() {
                out.push(make(
                    Access::TextureRead,
                    *a,
                    layout.total_bytes,
                    format!("{what}, cube face {face}"),
                ));
            }
        } else {
            out.push(make(
                Access::TextureRead,
                cfg.address,
                layout.total_bytes,
                what,
            ));
        }
    }
    if info.kind != DrawKind::Immediate && info.count > 0 {
        let loader = LoaderConfig::from_regs(regs);
        let mem = replay.mem();
        let n = info.count.min(MAX_INDICES_SCANNED);
        let (mut lo, mut hi) = (u32::MAX, 0u32);
        for k in 0..n {
            match loader.vertex_id(mem, info.kind, k) {
                Ok(id) => {
                    lo = lo.min(id);
                    hi = hi.max(id);
                }
                Err(_) => break,
            }
        }
        if info.kind == DrawKind::Elements {
            let size = index_size(loader.index_format);
            out.push(make(
                Access::IndexRead,
                u32::try_from(loader.index_address()).unwrap_or(u32::MAX),
                u64::from(info.count) * u64::from(size),
                format!("index buffer, {} x {size}-byte indices", info.count),
            ));
        }
        if lo <= hi {
            for (i, l) in loader.loaders.iter().enumerate() {
                if l.component_count == 0 || l.stride == 0 {
                    continue;
                }
                let stride = u64::from(l.stride);
                let start = u64::from(loader.base) + u64::from(l.offset) + u64::from(lo) * stride;
                let len = (u64::from(hi) - u64::from(lo) + 1) * stride;
                let Ok(start) = u32::try_from(start) else {
                    continue;
                };
                out.push(make(
                    Access::VertexRead,
                    start,
                    len,
                    format!(
                        "vertex array loader {i}: vertices {lo}-{hi}, stride {}",
                        l.stride
                    ),
                ));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlap_is_half_open_and_overflow_free() {
        let a = AddrRange {
            start: 0x100,
            len: 0x10,
        };
        assert!(a.overlaps(&AddrRange {
            start: 0x10F,
            len: 1
        }));
        assert!(!a.overlaps(&AddrRange {
            start: 0x110,
            len: 1
        }));
        assert!(!a.overlaps(&AddrRange {
            start: 0xF0,
            len: 0x10
        }));
        assert!(!a.overlaps(&AddrRange {
            start: 0x100,
            len: 0
        }));
        let top = AddrRange {
            start: u32::MAX,
            len: u64::MAX / 2,
        };
        assert!(top.overlaps(&AddrRange {
            start: u32::MAX,
            len: 1
        }));
    }
}
