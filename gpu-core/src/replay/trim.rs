//! Trimming a trace to a range of frames (issue 16, "Trim and reduce").
//!
//! Input: a CiTrace and frames A..=B. Output: a new trace ([`trim`]) whose replay renders
//! frames A..=B exactly like the original's: its initial state is the GPU state at the start of
//! frame A, and its stream is a prologue followed by the elements of frames A..=B.
//!
//! * The **initial-state sections** hold what CiTrace can express: the external, LCD and PICA
//!   register files, the VS program and operand descriptors, the VS float uniforms and the
//!   default attributes (x, y, z as float24).
//! * The **prologue** is one command list (loaded at [`super::edit::SCRATCH_BASE`], whose old
//!   contents are loaded back afterwards) with what the sections cannot hold or hold inexactly:
//!   the float uniforms of both units in float32 mode (the sections drop w), the GS program and
//!   descriptors, the lighting, fog and procedural-texture tables, the fixed attributes (w), and
//!   finally the upload cursors (code, descriptor, uniform and fixed-attribute FIFOs, including a
//!   partly received vector) and the LUT index registers. Only what differs from what the
//!   sections already give is written; the prologue is simulated on a GPU while it is built.
//! * **Memory**: the resident, non-zero pages at the start of frame A that frames A..=B may
//!   read before they write all of them ([`PageSelection::Read`], the default; see
//!   [`PageUse`]), as memory loads of runs of consecutive pages before the prologue.
//!   [`PageSelection::AllNonZero`] copies every non-zero page instead.
//!
//! Not carried over (the trace format has no place for them, and a frame boundary normally has
//! none in flight): the primitive assembler's partial primitive, shader-unit registers that
//! persist between draws, an immediate-mode vertex in progress. Each shader-unit index register
//! holds its FIFO's cursor afterwards (the cursor, not the index last written, is what later
//! uploads use). [`TrimReport::inexact`] lists the state that still differs after the prologue.

use std::collections::{BTreeMap, BTreeSet};

use pica_cmd::citrace::{
    CiTrace, CiTraceBuilder, InitialState, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER,
    Section, StreamEvent, TraceSource, load_target,
};
use shader_unit::float::{F24, pack_f24x4, pack_f32x4};

use super::edit::{SCRATCH_BASE, SCRATCH_SIZE};
use super::resources::{Access, AddrRange, draw_events, engine_events};
use super::{Replay, Target, initial_state};
use crate::command::gpu::{FIXED_ATTRIBS, FLOAT_UNIFORMS, Gpu, UnitKind};
use crate::debug::{DrawInfo, DrawStats, EngineEvent, Observer, RegSpace, RegWriteEvent};
use crate::engines::lcd::{LcdFramebufferConfig, Screen};
use crate::memory::{PAGE_SIZE, PhysMem};
use crate::pixel::framebuffer::FramebufferConfig;
use crate::regs::{EXT_REG_BASE, reg};

/// Problems trimming a trace.
#[derive(Debug, thiserror::Error)]
pub enum TrimError {
    /// The frame range is empty or beyond the trace.
    #[error("frames {first}..{last}: {message}")]
    Range {
        /// First frame asked for.
        first: u32,
        /// Last frame asked for (inclusive).
        last: u32,
        /// What is wrong.
        message: String,
    },
    /// The prologue does not fit its scratch area.
    #[error("the state prologue needs {0} bytes, more than the scratch area holds")]
    PrologueTooLarge(usize),
    /// Building the output failed.
    #[error(transparent)]
    Build(#[from] pica_cmd::citrace::BuildError),
    /// Reading the trace failed.
    #[error(transparent)]
    Trace(#[from] pica_cmd::citrace::CiTraceError),
}

/// What [`trim`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TrimReport {
    /// Frames of the input (frame markers, plus an unterminated tail if any).
    pub frames_in: u32,
    /// Stream elements copied from frames A..=B.
    pub elements_copied: usize,
    /// Memory pages written as loads.
    pub pages: usize,
    /// Non-zero pages at frame A that were not copied (frames A..=B do not read them before
    /// writing them whole, or do not touch them).
    pub pages_unused: usize,
    /// Register writes in the prologue.
    pub prologue_writes: usize,
    /// State that still differs from the original's at frame A after the prologue.
    pub inexact: Vec<String>,
}

/// Writes the initial-state sections for a GPU state.
fn sections_of(gpu: &Gpu) -> InitialState {
    let mut init = InitialState::citra_sized();
    let copy = |dst: &mut Vec<u32>, src: &[u32]| {
        for (d, s) in dst.iter_mut().zip(src) {
            *d = *s;
        }
    };
    copy(init.section_mut(Section::GpuRegisters), &gpu.ext_regs[..]);
    copy(init.section_mut(Section::LcdRegisters), &gpu.lcd_regs[..]);
    copy(init.section_mut(Section::PicaRegisters), &gpu.regs[..]);
    copy(init.section_mut(Section::VsProgramBinary), &gpu.vs.code);
    copy(init.section_mut(Section::VsSwizzleData), &gpu.vs.opdescs);
    let attrs = init.section_mut(Section::DefaultAttributes);
    for (i, a) in gpu.fixed_attribs.iter().enumerate() {
        for (k, x) in a.iter().enumerate() {
            if let Some(w) = attrs.get_mut(i * 4 + k) {
                *w = F24::from_f32(*x).to_bits();
            }
        }
    }
    let unis = init.section_mut(Section::VsFloatUniforms);
    for (i, u) in gpu.vs.float_uniforms.iter().enumerate() {
        for (k, x) in u.iter().enumerate() {
            if let Some(w) = unis.get_mut(i * 4 + k) {
                *w = F24::from_f32(*x).to_bits();
            }
        }
    }
    init
}

/// Builds the prologue writes that take `sim` (the GPU the sections give) to `target`,
/// executing them on `sim` as it goes.
fn prologue(sim: &mut Gpu, target: &Gpu, out: &mut Vec<(u32, u32, u8)>) {
    let mut mem = PhysMem::new();
    let mut run = |sim: &mut Gpu, out: &mut Vec<(u32, u32, u8)>, id: u32, param: u32| {
        sim.write_pica_reg(&mut mem, id, param, 0xF, None, &mut ());
        out.push((id, param, 0xF));
    };
    for kind in [UnitKind::Vertex, UnitKind::Geometry] {
        let base = match kind {
            UnitKind::Vertex => reg::VSH_BASE,
            UnitKind::Geometry => reg::GSH_BASE,
        };
        let (have, want) = (sim.unit(kind).clone(), target.unit(kind));
        if let Some(last) = (0..have.code.len())
            .rev()
            .find(|&i| have.code[i] != want.code[i])
        {
            run(sim, out, base + reg::SH_CODETRANSFER_INDEX, 0);
            for &w in &want.code[..=last] {
                run(sim, out, base + reg::SH_CODETRANSFER_DATA0, w);
            }
        }
        if let Some(last) = (0..have.opdescs.len())
            .rev()
            .find(|&i| have.opdescs[i] != want.opdescs[i])
        {
            run(sim, out, base + reg::SH_OPDESCS_INDEX, 0);
            for &w in &want.opdescs[..=last] {
                run(sim, out, base + reg::SH_OPDESCS_DATA0, w);
            }
        }
        for c in 0..FLOAT_UNIFORMS {
            let (h, w) = (have.float_uniforms[c], want.float_uniforms[c]);
            if h.map(f32::to_bits) != w.map(f32::to_bits) {
                run(
                    sim,
                    out,
                    base + reg::SH_FLOATUNIFORM_INDEX,
                    c as u32 | 1 << 31,
                );
                for word in pack_f32x4(w) {
                    run(sim, out, base + reg::SH_FLOATUNIFORM_DATA0, word);
                }
            }
        }
    }
    for t in 0..target.luts.lighting.len() {
        if sim.luts.lighting[t] != target.luts.lighting[t] {
            run(sim, out, reg::LIGHTING_LUT_INDEX, (t as u32) << 8);
            for &w in &target.luts.lighting[t] {
                run(sim, out, reg::LIGHTING_LUT_DATA0, w);
            }
        }
    }
    if sim.luts.fog != target.luts.fog {
        run(sim, out, reg::FOG_LUT_INDEX, 0);
        for &w in &target.luts.fog {
            run(sim, out, reg::FOG_LUT_DATA0, w);
        }
    }
    let proctex: [(u32, &[u32], &[u32]); 5] = [
        (0, &sim.luts.proctex_noise, &target.luts.proctex_noise),
        (2, &sim.luts.proctex_rgb_map, &target.luts.proctex_rgb_map),
        (
            3,
            &sim.luts.proctex_alpha_map,
            &target.luts.proctex_alpha_map,
        ),
        (4, &sim.luts.proctex_color, &target.luts.proctex_color),
        (
            5,
            &sim.luts.proctex_color_diff,
            &target.luts.proctex_color_diff,
        ),
    ];
    let tables: Vec<(u32, Vec<u32>)> = proctex
        .iter()
        .filter(|(_, h, w)| h != w)
        .map(|(t, _, w)| (*t, w.to_vec()))
        .collect();
    for (t, words) in tables {
        run(sim, out, reg::PROCTEX_LUT, t << 8);
        for w in words {
            run(sim, out, reg::PROCTEX_LUT_DATA0, w);
        }
    }
    // Fixed attributes 0-14 (15 selects immediate mode).
    for i in 0..FIXED_ATTRIBS - 1 {
        let (h, w) = (sim.fixed_attribs[i], target.fixed_attribs[i]);
        if h.map(f32::to_bits) != w.map(f32::to_bits) {
            run(sim, out, reg::FIXEDATTRIB_INDEX, i as u32);
            let words = pack_f24x4(w.map(F24::from_f32));
            for (k, word) in words.into_iter().enumerate() {
                run(sim, out, reg::FIXEDATTRIB_DATA0 + k as u32, word);
            }
        }
    }
    // Index registers and cursors: LUT indices live in their registers; the shader units'
    // cursors are restored by writing them (VS first: com mode mirrors its index writes).
    for id in [
        reg::LIGHTING_LUT_INDEX,
        reg::FOG_LUT_INDEX,
        reg::PROCTEX_LUT,
    ] {
        if sim.regs[id as usize] != target.regs[id as usize] {
            run(sim, out, id, target.regs[id as usize]);
        }
    }
    for kind in [UnitKind::Vertex, UnitKind::Geometry] {
        let base = match kind {
            UnitKind::Vertex => reg::VSH_BASE,
            UnitKind::Geometry => reg::GSH_BASE,
        };
        let want = target.unit(kind).clone();
        let have = sim.unit(kind);
        if have.code_index != want.code_index
            || sim.regs[(base + reg::SH_CODETRANSFER_INDEX) as usize]
                != target.regs[(base + reg::SH_CODETRANSFER_INDEX) as usize]
        {
            run(sim, out, base + reg::SH_CODETRANSFER_INDEX, want.code_index);
        }
        let have = sim.unit(kind);
        if have.opdesc_index != want.opdesc_index
            || sim.regs[(base + reg::SH_OPDESCS_INDEX) as usize]
                != target.regs[(base + reg::SH_OPDESCS_INDEX) as usize]
        {
            run(sim, out, base + reg::SH_OPDESCS_INDEX, want.opdesc_index);
        }
        let have = sim.unit(kind);
        if have.clone_cursors() != want.clone_cursors() {
            run(
                sim,
                out,
                base + reg::SH_FLOATUNIFORM_INDEX,
                want.float_index | u32::from(want.float_mode_f32) << 31,
            );
            for &w in want.float_words.iter().take(usize::from(want.float_count)) {
                run(sim, out, base + reg::SH_FLOATUNIFORM_DATA0, w);
            }
        }
    }
    let f = &target.fixed_fifo;
    if (sim.fixed_fifo.index, sim.fixed_fifo.count) != (f.index, f.count) && f.index != 0xF {
        run(sim, out, reg::FIXEDATTRIB_INDEX, f.index);
        for &w in f.words.iter().take(usize::from(f.count)) {
            run(sim, out, reg::FIXEDATTRIB_DATA0, w);
        }
    }
}

/// What still differs between two GPU states (for [`TrimReport::inexact`]).
fn differences(a: &Gpu, b: &Gpu) -> Vec<String> {
    let mut d = Vec::new();
    for i in 0..a.regs.len() {
        if a.regs[i] != b.regs[i] {
            d.push(format!(
                "PICA register 0x{i:03X}: 0x{:08X} instead of 0x{:08X}",
                a.regs[i], b.regs[i]
            ));
        }
    }
    for kind in [UnitKind::Vertex, UnitKind::Geometry] {
        let (x, y) = (a.unit(kind), b.unit(kind));
        if x.code != y.code || x.opdescs != y.opdescs {
            d.push(format!("{kind:?} program"));
        }
        if x.float_uniforms.map(|u| u.map(f32::to_bits))
            != y.float_uniforms.map(|u| u.map(f32::to_bits))
        {
            d.push(format!("{kind:?} float uniforms"));
        }
        if x.clone_cursors() != y.clone_cursors() {
            d.push(format!("{kind:?} upload cursors"));
        }
    }
    if a.fixed_attribs.map(|u| u.map(f32::to_bits)) != b.fixed_attribs.map(|u| u.map(f32::to_bits))
    {
        d.push("fixed attributes".into());
    }
    if a.luts.lighting != b.luts.lighting
        || a.luts.fog != b.luts.fog
        || a.luts.proctex_noise != b.luts.proctex_noise
        || a.luts.proctex_rgb_map != b.luts.proctex_rgb_map
        || a.luts.proctex_alpha_map != b.luts.proctex_alpha_map
        || a.luts.proctex_color != b.luts.proctex_color
        || a.luts.proctex_color_diff != b.luts.proctex_color_diff
    {
        d.push("lookup tables".into());
    }
    d
}

/// Which memory pages at frame A a trimmed trace carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PageSelection {
    /// The non-zero pages frames A..=B may read before writing them whole (see [`PageUse`]).
    #[default]
    Read,
    /// Every non-zero resident page (larger, needs no access tracking).
    AllNonZero,
}

/// Tracks, for the candidate pages (non-zero at frame A), whether their first access in frames
/// A..=B is a read (needed) or a write that covers the whole page (not needed); pages never
/// accessed are not needed either.
///
/// Conservative by construction: reads are the extents the configuration addresses (see
/// [`super::resources`]: whole vertex ranges, all texture levels and faces, whole transfer
/// sources), plus every command-list word executed, the colour and depth/stencil buffers of
/// every draw (blending, depth and stencil tests read them; a draw need not cover all of
/// them), and at every frame marker the configured colour/depth buffers and all LCD framebuffer
/// addresses (the screens are scanned out there). Only memory loads and memory fills count as
/// writes, byte by byte; transfer and copy destinations count as neither.
#[derive(Debug, Default)]
pub struct PageUse {
    /// Page numbers still undecided.
    open: BTreeSet<u32>,
    /// Decided pages: true = needed.
    decided: BTreeMap<u32, bool>,
    /// Bytes written so far in undecided pages (bitmap of 4096 bits).
    written: BTreeMap<u32, Box<[u64; PAGE_SIZE / 64]>>,
}

impl PageUse {
    /// Tracks the non-zero resident pages of `mem`.
    pub fn new(mem: &PhysMem) -> Self {
        let mut open = BTreeSet::new();
        for region in mem.regions() {
            let n = region.size as usize / PAGE_SIZE;
            for i in 0..n {
                let addr = region.base + (i * PAGE_SIZE) as u32;
                if mem
                    .slice_in_page(addr, PAGE_SIZE)
                    .is_some_and(|p| p.iter().any(|&x| x != 0))
                {
                    open.insert(addr / PAGE_SIZE as u32);
                }
            }
        }
        Self {
            open,
            ..Self::default()
        }
    }

    fn pages(&self, r: AddrRange) -> Vec<u32> {
        if r.len == 0 {
            return Vec::new();
        }
        let first = r.start / PAGE_SIZE as u32;
        let last = ((r.end() - 1).min(u64::from(u32::MAX)) / PAGE_SIZE as u64) as u32;
        self.open.range(first..=last).copied().collect()
    }

    /// `r` is read: its undecided pages are needed.
    pub fn read(&mut self, r: AddrRange) {
        for p in self.pages(r) {
            self.open.remove(&p);
            self.written.remove(&p);
            self.decided.insert(p, true);
        }
    }

    /// Every byte of `r` is written: pages it completes (with earlier writes) are not needed.
    pub fn write(&mut self, r: AddrRange) {
        for p in self.pages(r) {
            let base = u64::from(p) * PAGE_SIZE as u64;
            let lo = r.start.max(base as u32) as u64 - base;
            let hi = r.end().min(base + PAGE_SIZE as u64) - base;
            let bits = self
                .written
                .entry(p)
                .or_insert_with(|| Box::new([0; PAGE_SIZE / 64]));
            for b in lo..hi {
                bits[(b / 64) as usize] |= 1 << (b % 64);
            }
            if bits.iter().all(|&w| w == u64::MAX) {
                self.open.remove(&p);
                self.written.remove(&p);
                self.decided.insert(p, false);
            }
        }
    }

    /// True when page number `page` (address / 4096) must be carried.
    pub fn needed(&self, page: u32) -> bool {
        self.decided.get(&page) == Some(&true)
    }
}

/// Watches one step: command-list words executed, the draw it finished (pausing right after
/// it, so the registers are as the draw saw them) and its engine runs.
#[derive(Default)]
struct AccessWatch {
    list_words: Vec<u32>,
    draw: Option<(DrawInfo, DrawStats)>,
    engines: Vec<EngineEvent>,
}

impl Observer for AccessWatch {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        if ev.space == RegSpace::Pica
            && let Some(a) = ev.source_addr
        {
            self.list_words.push(a);
        }
    }
    fn draw_end(
        &mut self,
        info: &DrawInfo,
        stats: &DrawStats,
        _detail: Option<crate::debug::DrawDetail>,
    ) {
        self.draw = Some((*info, *stats));
    }
    fn engine(&mut self, ev: &EngineEvent) {
        if !matches!(ev, EngineEvent::CommandList { .. }) {
            self.engines.push(ev.clone());
        }
    }
    fn stop_requested(&self) -> bool {
        self.draw.is_some()
    }
}

/// The colour and depth/stencil buffers the registers configure, as reads.
fn read_framebuffers(gpu: &Gpu, pages: &mut PageUse) {
    let fb = FramebufferConfig::from_regs(&gpu.regs);
    let pixels = u64::from(fb.width) * u64::from(fb.height);
    if let Some(f) = fb.color_format {
        pages.read(AddrRange {
            start: fb.color_addr,
            len: pixels * f.bytes_per_pixel() as u64,
        });
    }
    if let Some(f) = fb.depth_format {
        pages.read(AddrRange {
            start: fb.depth_addr,
            len: pixels * f.bytes_per_pixel() as u64,
        });
    }
}

/// Every address an LCD framebuffer register names, as a read of a whole framebuffer (rows of
/// at least 240 RGBA8 pixels, one row per screen column).
fn read_lcd(gpu: &Gpu, pages: &mut PageUse) {
    for screen in [Screen::Top, Screen::Bottom] {
        let cfg = LcdFramebufferConfig::from_ext_regs(screen, &gpu.ext_regs[..], EXT_REG_BASE);
        let rows = u64::from(screen.size().0);
        let len = u64::from(cfg.stride.max(240 * 4)) * rows;
        for addr in cfg.left.into_iter().chain(cfg.right) {
            if addr != 0 {
                pages.read(AddrRange { start: addr, len });
            }
        }
    }
}

/// Runs `replay` from its position (the start of frame `first`) through frame `last`'s marker,
/// recording page accesses in `pages`. Returns the stream element after that marker (or the
/// stream's length when the trace ends first).
fn track_accesses<S: TraceSource>(replay: &mut Replay<S>, last: u32, pages: &mut PageUse) -> usize {
    let mut watch = AccessWatch::default();
    loop {
        if replay.reached(Target::Frame(last)) {
            read_framebuffers(&replay.gpu, pages);
            read_lcd(&replay.gpu, pages);
            return replay.pos.element + 1;
        }
        if replay.at_end() {
            return replay.trace.elements().len();
        }
        let pos = replay.position();
        if !replay.gpu.list_in_progress() {
            match replay.trace.event(pos.element) {
                Some(StreamEvent::MemoryLoad(m)) => pages.write(AddrRange {
                    start: load_target(m.physical_address),
                    len: u64::from(m.size),
                }),
                Some(StreamEvent::FrameMarker) => {
                    read_framebuffers(&replay.gpu, pages);
                    read_lcd(&replay.gpu, pages);
                }
                _ => {}
            }
        }
        replay.step_element(&mut watch);
        let after = replay.position();
        for a in watch.list_words.drain(..) {
            // The parameter word and the header after it (extra parameters follow it and are
            // reported themselves).
            pages.read(AddrRange { start: a, len: 8 });
        }
        for ev in std::mem::take(&mut watch.engines) {
            for e in engine_events(replay, &ev, after) {
                match e.access {
                    Access::MemoryFill => pages.write(e.range),
                    Access::TransferWrite | Access::CopyWrite => {}
                    Access::TransferRead | Access::CopyRead => {
                        // UNVERIFIED extent (pica-raster.md §10): the engine reads from the
                        // source aligned down to 16 bytes, tiled inputs span whole 8-row tiles
                        // and the box filter reads a few pixels more than the extent the
                        // registers give; a page before and an eighth plus a page after are
                        // kept as an allowance.
                        let start = e.range.start.saturating_sub(PAGE_SIZE as u32);
                        let end = e.range.end() + e.range.len / 8 + PAGE_SIZE as u64;
                        pages.read(AddrRange {
                            start,
                            len: end - u64::from(start),
                        });
                    }
                    _ => pages.read(e.range),
                }
            }
        }
        if let Some((info, stats)) = watch.draw.take() {
            read_framebuffers(&replay.gpu, pages);
            for e in draw_events(replay, &info, &stats, after) {
                pages.read(e.range);
            }
        }
    }
}

/// Loads the non-zero resident pages of `mem` that `keep` accepts (by page number), merging
/// runs of consecutive pages (at most 1 MiB per load). Returns the number of pages loaded and
/// the number of non-zero pages skipped.
fn load_pages(
    mem: &PhysMem,
    b: &mut CiTraceBuilder,
    keep: &dyn Fn(u32) -> bool,
) -> Result<(usize, usize), TrimError> {
    const MAX_RUN: usize = 1 << 20;
    let mut pages = 0;
    let mut skipped = 0;
    let mut run: Option<(u32, Vec<u8>)> = None;
    let flush = |b: &mut CiTraceBuilder, run: &mut Option<(u32, Vec<u8>)>| {
        if let Some((addr, data)) = run.take() {
            b.memory_load(addr, &data).map(|_| ())
        } else {
            Ok(())
        }
    };
    for region in mem.regions() {
        let n = region.size as usize / PAGE_SIZE;
        for i in 0..n {
            let addr = region.base + (i * PAGE_SIZE) as u32;
            let page = mem
                .slice_in_page(addr, PAGE_SIZE)
                .filter(|p| p.iter().any(|&x| x != 0));
            let page = match page {
                Some(_) if !keep(addr / PAGE_SIZE as u32) => {
                    skipped += 1;
                    None
                }
                p => p,
            };
            match page {
                Some(p) => {
                    pages += 1;
                    match &mut run {
                        Some((start, data))
                            if *start as usize + data.len() == addr as usize
                                && data.len() < MAX_RUN =>
                        {
                            data.extend_from_slice(p)
                        }
                        _ => {
                            flush(b, &mut run)?;
                            run = Some((addr, p.to_vec()));
                        }
                    }
                }
                None => flush(b, &mut run)?,
            }
        }
        flush(b, &mut run)?;
    }
    Ok((pages, skipped))
}

/// Number of frames of a trace: its frame markers, plus one when elements follow the last.
pub fn frame_count<S: TraceSource>(trace: &CiTrace<S>) -> u32 {
    let n = trace.elements().len();
    let mut frames = 0u32;
    let mut tail = false;
    for i in 0..n {
        if matches!(trace.event(i), Some(StreamEvent::FrameMarker)) {
            frames = frames.saturating_add(1);
            tail = false;
        } else {
            tail = true;
        }
    }
    frames.saturating_add(u32::from(tail))
}

/// Trims `trace` to frames `first..=last` (0-based; see the module docs), carrying the pages
/// the frames read ([`PageSelection::Read`]).
pub fn trim<S: TraceSource>(
    trace: CiTrace<S>,
    first: u32,
    last: u32,
) -> Result<(CiTraceBuilder, TrimReport), TrimError> {
    trim_with(trace, first, last, PageSelection::Read)
}

/// [`trim`] with a choice of the memory pages carried.
pub fn trim_with<S: TraceSource>(
    trace: CiTrace<S>,
    first: u32,
    last: u32,
    selection: PageSelection,
) -> Result<(CiTraceBuilder, TrimReport), TrimError> {
    let frames = frame_count(&trace);
    if first > last || last >= frames {
        return Err(TrimError::Range {
            first,
            last,
            message: format!(
                "the trace has {frames} frame(s) (0..{})",
                frames.saturating_sub(1)
            ),
        });
    }
    let layout = trace.layout();
    let mut replay = Replay::new(trace);
    let start_element = if first == 0 {
        0
    } else {
        replay.run_until(Target::Frame(first - 1), &mut ());
        replay.pos.element + 1
    };
    let target_gpu = replay.gpu.clone();
    let target_mem = replay.mem.clone();
    let mut pages = PageUse::new(&target_mem);
    let end_element = track_accesses(&mut replay, last, &mut pages);
    let mut trace = replay.into_trace();

    let init = sections_of(&target_gpu);
    let mut b = CiTraceBuilder::new(init);
    b.layout(layout);
    // What a replay of the sections alone gives.
    let probe = CiTrace::from_bytes(b.build()?)?;
    let (mut sim, _) = initial_state(&probe);
    let mut writes = Vec::new();
    prologue(&mut sim, &target_gpu, &mut writes);
    let mut report = TrimReport {
        frames_in: frames,
        prologue_writes: writes.len(),
        inexact: differences(&sim, &target_gpu),
        ..TrimReport::default()
    };
    let keep = |page: u32| selection == PageSelection::AllNonZero || pages.needed(page);
    (report.pages, report.pages_unused) = load_pages(&target_mem, &mut b, &keep)?;
    if !writes.is_empty() {
        let mut list = Vec::with_capacity(writes.len() * 8);
        for &(id, param, mask) in &writes {
            list.extend_from_slice(&param.to_le_bytes());
            list.extend_from_slice(&(id | u32::from(mask) << 16).to_le_bytes());
        }
        if list.len() > SCRATCH_SIZE as usize {
            return Err(TrimError::PrologueTooLarge(list.len()));
        }
        b.memory_load(SCRATCH_BASE, &list)?;
        b.register_write(PA_CMDLIST_SIZE, list.len() as u32);
        b.register_write(PA_CMDLIST_ADDR, SCRATCH_BASE >> 3);
        b.register_write(PA_CMDLIST_TRIGGER, 1);
        let old = target_mem
            .read_vec(SCRATCH_BASE, list.len())
            .unwrap_or_else(|_| vec![0; list.len()]);
        b.memory_load(SCRATCH_BASE, &old)?;
        let ext = |pa: u32| target_gpu.external_reg(pa).unwrap_or(0);
        b.register_write(PA_CMDLIST_SIZE, ext(PA_CMDLIST_SIZE));
        b.register_write(PA_CMDLIST_ADDR, ext(PA_CMDLIST_ADDR));
        if ext(PA_CMDLIST_TRIGGER) & 1 != 0 {
            report
                .inexact
                .push("the command-list trigger bit was set at frame A".into());
        }
    }
    let mut buf = Vec::new();
    for i in start_element..end_element {
        match trace.event(i) {
            Some(StreamEvent::MemoryLoad(m)) => {
                trace.read_blob_into(i, &mut buf)?;
                b.memory_load(m.physical_address, &buf)?;
            }
            Some(_) => {
                b.raw_element(trace.elements()[i])?;
            }
            None => {}
        }
        report.elements_copied += 1;
    }
    Ok((b, report))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::VRAM;

    #[test]
    fn page_use_keeps_pages_read_before_written_whole() {
        let mut mem = PhysMem::new();
        let base = VRAM.base;
        let page = |k: u32| base / PAGE_SIZE as u32 + k;
        for k in 0..5 {
            mem.write(base + k * PAGE_SIZE as u32, &[1]).unwrap();
        }
        let mut u = PageUse::new(&mem);
        let range = |k: u32, off: u32, len: u64| AddrRange {
            start: base + k * PAGE_SIZE as u32 + off,
            len,
        };
        // Page 0: written whole (in two halves), then read: not needed.
        u.write(range(0, 0, 2048));
        u.write(range(0, 2048, 2048));
        u.read(range(0, 0, 16));
        // Page 1: written in part, then read: needed.
        u.write(range(1, 0, 4000));
        u.read(range(1, 4000, 4));
        // Page 2: read first, then written whole: needed.
        u.read(range(2, 100, 1));
        u.write(range(2, 0, PAGE_SIZE as u64));
        // Page 3: never touched; page 4: written whole by a write that starts in page 3.
        u.write(range(3, 4000, 96 + PAGE_SIZE as u64));
        u.read(range(4, 0, 1));
        assert!(!u.needed(page(0)));
        assert!(u.needed(page(1)));
        assert!(u.needed(page(2)));
        assert!(!u.needed(page(3)));
        assert!(!u.needed(page(4)));
        // A huge range costs only the tracked pages.
        u.read(AddrRange {
            start: 0,
            len: 1 << 32,
        });
        assert!(u.needed(page(3)));
        assert!(!u.needed(page(0)), "decided pages stay decided");
    }
}
