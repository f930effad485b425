//! The trace linter: what a CiTrace lacks or does wrong (`pica-raster.md` §11.3 "gaps a player
//! must tolerate").
//!
//! Input: a [`Replay`]. Output: a [`LintReport`] of issues, each with the stream element, frame
//! and draw it concerns. The linter replays the whole trace once, tracking which physical bytes
//! the trace provided (memory loads) or the GPU produced (draw colour/depth buffers, fills,
//! transfers), and checks every draw's reads against that.
//!
//! Checks:
//! * memory read by a draw (vertex arrays, index buffer, textures) that nothing provided —
//!   typical of draws Citra took through its hardware-shader path, and of nested command lists;
//! * missing initial shader state (no VS program in the header and none uploaded before a draw);
//! * command-list submissions whose size is not a multiple of 16 bytes;
//! * writes to registers the catalogue does not know;
//! * draws whose vertex count goes beyond their buffers (reads past provided memory at the end
//!   of an array);
//! * every diagnostic the replay produced (unmapped reads, shader errors, ...).

use std::collections::BTreeMap;

use pica_cmd::citrace::{StreamEvent, TraceSource, load_target};
use serde::Serialize;

use crate::debug::{
    AttribSource, Diagnostic, DrawDetail, DrawInfo, DrawStats, EngineEvent, Observer, RegSpace,
    RegWriteEvent,
};
use crate::geometry::vertex_loader::LoaderConfig;
use crate::pixel::framebuffer::FramebufferConfig;
use crate::replay::Replay;

/// What kind of problem an issue is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum LintKind {
    /// A draw read memory that no memory load covered and the GPU did not write.
    UncoveredRead,
    /// A draw ran without any known vertex shader program.
    MissingShaderState,
    /// A command list's size is not a multiple of 16 bytes.
    CommandListSize,
    /// A write to a register with no known meaning.
    UnknownRegister,
    /// A draw's vertex count reaches beyond the memory its arrays cover.
    VertexCountBeyondBuffer,
    /// A diagnostic raised while replaying.
    Diagnostic,
}

/// One finding.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct LintIssue {
    /// Kind.
    pub kind: LintKind,
    /// Frame (frame markers passed before it).
    pub frame: u32,
    /// The draw it concerns.
    pub draw: Option<u64>,
    /// Explanation.
    pub detail: String,
}

/// The linter's result.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LintReport {
    /// Findings in trace order (at most [`MAX_ISSUES`]).
    pub issues: Vec<LintIssue>,
    /// Findings not kept because of the limit.
    pub dropped: u64,
    /// Number of issues per kind (including dropped ones).
    pub counts: BTreeMap<String, u64>,
    /// Draws checked.
    pub draws: u64,
    /// Frames seen.
    pub frames: u32,
}

/// Issues kept in a report.
pub const MAX_ISSUES: usize = 5_000;

/// Sorted, disjoint half-open byte ranges `[start, end)` (u64 so that ends cannot overflow).
#[derive(Clone, Debug, Default)]
pub struct RangeSet {
    ranges: BTreeMap<u64, u64>,
}

impl RangeSet {
    /// Adds `[start, start + len)`, merging with neighbours.
    pub fn insert(&mut self, start: u64, len: u64) {
        if len == 0 {
            return;
        }
        let mut s = start;
        let mut e = start.saturating_add(len);
        // Merge with a range starting before s that reaches s.
        if let Some((&ps, &pe)) = self.ranges.range(..=s).next_back()
            && pe >= s
        {
            s = ps;
            e = e.max(pe);
        }
        let overlapping: Vec<u64> = self.ranges.range(s..=e).map(|(&k, _)| k).collect();
        for k in overlapping {
            if let Some(v) = self.ranges.remove(&k) {
                e = e.max(v);
            }
        }
        self.ranges.insert(s, e);
    }

    /// Number of bytes of `[start, start + len)` not covered (0 for an empty range).
    pub fn uncovered(&self, start: u64, len: u64) -> u64 {
        let end = start.saturating_add(len);
        // An empty range (a 0-vertex DRAWELEMENTS, a 0x0 texture) covers nothing, and
        // `range(start + 1..end)` below would be a reversed range.
        if end <= start {
            return 0;
        }
        let mut covered = 0;
        if let Some((_, &pe)) = self.ranges.range(..=start).next_back() {
            covered += pe.min(end).saturating_sub(start);
        }
        for (&s, &e) in self.ranges.range(start.saturating_add(1).min(end)..end) {
            covered += e.min(end) - s;
        }
        len - covered.min(len)
    }
}

struct Lint {
    report: LintReport,
    provided: RangeSet,
    frame: u32,
    vs_known: bool,
    unknown_regs: BTreeMap<u32, u64>,
}

impl Lint {
    fn issue(&mut self, kind: LintKind, draw: Option<u64>, detail: String) {
        *self.report.counts.entry(format!("{kind:?}")).or_default() += 1;
        if self.report.issues.len() < MAX_ISSUES {
            self.report.issues.push(LintIssue {
                kind,
                frame: self.frame,
                draw,
                detail,
            });
        } else {
            self.report.dropped += 1;
        }
    }

    fn check_draw(&mut self, info: &DrawInfo, detail: &DrawDetail) {
        let draw = Some(info.draw);
        if !self.vs_known {
            self.issue(
                LintKind::MissingShaderState,
                draw,
                "draw with no vertex shader program: the trace header has none and none was uploaded before".into(),
            );
            // Report once.
            self.vs_known = true;
        }
        // Vertex arrays: the bytes of every fetched attribute.
        let Ok(regs) = <&[u32; 0x300]>::try_from(detail.regs.as_slice()) else {
            return;
        };
        let loader = LoaderConfig::from_regs(regs);
        let mut missing_attr = 0u64;
        let mut first_missing: Option<(u32, u32)> = None;
        let mut first_vertex_provided = true;
        for (vi, v) in detail.loaded.iter().enumerate() {
            for (slot, src) in v.sources.iter().enumerate() {
                if let AttribSource::Buffer { addr, .. } = src {
                    let size = loader
                        .formats
                        .get(slot)
                        .map(|f| f.size_bytes())
                        .unwrap_or(4);
                    let un = self.provided.uncovered(u64::from(*addr), u64::from(size));
                    if un > 0 {
                        missing_attr += un;
                        first_missing.get_or_insert((v.index_in_draw, *addr));
                        if vi == 0 {
                            first_vertex_provided = false;
                        }
                    }
                }
            }
        }
        if let Some((k, addr)) = first_missing {
            if first_vertex_provided {
                // The arrays are there but end before the draw's last vertex.
                self.issue(
                    LintKind::VertexCountBeyondBuffer,
                    draw,
                    format!(
                        "draw of {} vertices reads attribute data past what the trace provides from vertex {k} on (PA 0x{addr:08X})",
                        info.count
                    ),
                );
            } else {
                self.issue(
                    LintKind::UncoveredRead,
                    draw,
                    format!(
                        "{missing_attr} bytes of vertex attributes were never loaded by the trace (first: vertex {k} at PA 0x{addr:08X}); Citra's hardware-shader path records no vertex data"
                    ),
                );
            }
        }
        // Index buffer.
        if info.kind == crate::debug::DrawKind::Elements {
            let size = u64::from(crate::geometry::vertex_loader::index_size(
                loader.index_format,
            ));
            let n = detail.loaded.len().max(info.count.min(1 << 20) as usize) as u64;
            let addr = loader.index_address();
            let un = self.provided.uncovered(addr, n * size);
            if un > 0 {
                self.issue(
                    LintKind::UncoveredRead,
                    draw,
                    format!("{un} bytes of the index buffer at PA 0x{addr:08X} were never loaded by the trace"),
                );
            }
        }
        // Textures (level 0).
        for t in info.textures.iter().flatten() {
            let bpp = crate::pixel::texture::TextureFormat::from_id(t.format)
                .map(|f| u64::from(f.bits_per_texel()))
                .unwrap_or(32);
            let len = u64::from(t.width) * u64::from(t.height) * bpp / 8;
            let un = self.provided.uncovered(u64::from(t.addr), len);
            if un > 0 {
                self.issue(
                    LintKind::UncoveredRead,
                    draw,
                    format!(
                        "texture unit {} ({}x{}, format {}) at PA 0x{:08X}: {un} of {len} bytes never loaded or rendered (Citra records I8/A8/IA4/ETC1 textures with size 0)",
                        t.unit, t.width, t.height, t.format, t.addr
                    ),
                );
            }
        }
        // What the draw rendered is now provided.
        let fb = FramebufferConfig::from_regs(regs);
        let pixels = u64::from(fb.width) * u64::from(fb.height);
        if let Some(f) = fb.color_format {
            self.provided.insert(
                u64::from(fb.color_addr),
                pixels * f.bytes_per_pixel() as u64,
            );
        }
        if let Some(d) = fb.depth_format {
            self.provided.insert(
                u64::from(fb.depth_addr),
                pixels * d.bytes_per_pixel() as u64,
            );
        }
    }
}

struct LintObserver<'a> {
    lint: &'a mut Lint,
}

impl Observer for LintObserver<'_> {
    fn wants_draw_detail(&self) -> bool {
        true
    }
    fn draw_detail_limits(&self) -> crate::debug::DetailLimits {
        // The linter reads only the loaded vertices (their attribute addresses): shaded
        // vertices and triangles are not kept at all, and loaded ones up to the same 2^20 the
        // index-buffer check uses.
        crate::debug::DetailLimits {
            loaded: 1 << 20,
            shaded: 0,
            triangles: 0,
            gs_invocations: 0,
        }
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        if ev.space == RegSpace::Pica {
            if (0x2CC..=0x2D3).contains(&ev.id) {
                self.lint.vs_known = true;
            }
            let known = u16::try_from(ev.id)
                .ok()
                .and_then(pica_cmd::regs::name)
                .is_some();
            if !known {
                *self.lint.unknown_regs.entry(ev.id).or_default() += 1;
            }
        }
    }
    fn draw_end(&mut self, info: &DrawInfo, _stats: &DrawStats, detail: Option<DrawDetail>) {
        self.lint.report.draws += 1;
        if let Some(d) = detail {
            self.lint.check_draw(info, &d);
        }
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        self.lint
            .issue(LintKind::Diagnostic, diag.draw, diag.detail.clone());
    }
    fn engine(&mut self, ev: &EngineEvent) {
        match ev {
            EngineEvent::CommandList { addr, size } if size % 16 != 0 => {
                self.lint.issue(
                    LintKind::CommandListSize,
                    None,
                    format!(
                        "command list at PA 0x{addr:08X} is {size} bytes, not a multiple of 16: real hardware ignores the last {} bytes (a FINALIZE there never runs)",
                        size % 16
                    ),
                );
            }
            EngineEvent::MemoryFill {
                written: Some((a, l)),
                ..
            }
            | EngineEvent::Transfer {
                written: Some((a, l)),
                ..
            } => {
                self.lint.provided.insert(u64::from(*a), *l);
            }
            _ => {}
        }
    }
}

/// Replays the whole trace from the start and reports what it lacks or does wrong.
pub fn check<S: TraceSource>(replay: &mut Replay<S>) -> LintReport {
    replay.rewind();
    let vs_in_header = replay
        .trace()
        .initial_state()
        .section(pica_cmd::citrace::Section::VsProgramBinary)
        .iter()
        .any(|&w| w != 0);
    let mut lint = Lint {
        report: LintReport::default(),
        provided: RangeSet::default(),
        frame: 0,
        vs_known: vs_in_header,
        unknown_regs: BTreeMap::new(),
    };
    while !replay.at_end() {
        let pos = replay.position();
        lint.frame = pos.frame;
        // Memory loads are provided data (recorded before the write that uses them).
        if !replay.gpu().list_in_progress()
            && let Some(StreamEvent::MemoryLoad(load)) = replay.trace().event(pos.element)
        {
            lint.provided.insert(
                u64::from(load_target(load.physical_address)),
                u64::from(load.size),
            );
        }
        replay.step_element(&mut LintObserver { lint: &mut lint });
    }
    lint.report.frames = replay.position().frame;
    let unknown = std::mem::take(&mut lint.unknown_regs);
    for (id, n) in unknown {
        lint.issue(
            LintKind::UnknownRegister,
            None,
            format!("{n} write(s) to register 0x{id:03X}, which has no known meaning"),
        );
    }
    lint.report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ranges_are_never_uncovered() {
        // A DRAWELEMENTS of 0 vertices or a 0x0 texture asks about an empty range: no panic.
        let mut r = RangeSet::default();
        assert_eq!(r.uncovered(0x1000, 0), 0);
        assert_eq!(r.uncovered(u64::MAX, 0), 0);
        assert!(r.uncovered(u64::MAX - 1, 5) <= 5);
        r.insert(0x1000, 0x100);
        assert_eq!(r.uncovered(0x1000, 0), 0);
        assert_eq!(r.uncovered(0x1080, 0), 0);
        assert_eq!(r.uncovered(0x10FF, 2), 1);
    }

    #[test]
    fn range_set_merges_and_counts() {
        let mut r = RangeSet::default();
        r.insert(10, 10);
        r.insert(30, 10);
        assert_eq!(r.uncovered(0, 50), 30);
        r.insert(15, 20);
        assert_eq!(r.uncovered(10, 30), 0);
        assert_eq!(r.uncovered(5, 10), 5);
        assert_eq!(r.uncovered(39, 2), 1);
        r.insert(u64::MAX - 1, 5);
        assert_eq!(r.uncovered(u64::MAX - 1, 1), 0);
    }
}
