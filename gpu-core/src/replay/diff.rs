//! Lock-step comparison of two replays: the first draw whose output differs, the first
//! differing vertex in it, and the shader instruction where that vertex's registers diverge.
//!
//! Input: two [`Replay`]s (two traces, or one trace opened twice under two [`RunConfig`]s:
//! fast vs reference vertex-shader engine, specialised vs reference pixel path, hardware vs
//! Citra-software-renderer texture sampling; either side may also replay under its own edit
//! list, installed with [`set_side_edits`], e.g. one trace with an edit list on and off).
//! Output: a [`DiffOutcome`]; [`unapplied_edits`] names the edits a side never ran.
//!
//! Both replays advance one draw at a time ([`Target::AfterDraw`]). After each draw the
//! colour buffer and the depth/stencil buffer configured at that moment are hashed in place
//! (64-bit, over the bytes in memory: nothing is copied) and the draw's shaded vertex outputs
//! ([`DrawDetail::shaded`], at most [`DiffOptions::limits`] records) are compared bit for bit.
//! The first draw where anything differs is examined more closely:
//!
//! * colour and depth/stencil: both images are decoded and compared pixel by pixel (count,
//!   first differing pixel in image order, top row first, as `picaview render --target color`
//!   writes it);
//! * vertices: the first vertex (in draw order) with a differing output register, by
//!   output register and component;
//! * instruction: both replays are moved to the state right before the draw, and that vertex
//!   is re-run on the reference interpreter with a recorder on each side, with each side's
//!   program, uniforms, unit registers and inputs (the earlier invocations of the draw are
//!   re-run first, since the unit keeps its registers between invocations); the two step lists
//!   are compared and the first step whose PC, destination value, address registers or
//!   condition flags differ is reported. When both re-runs agree but the pipeline's outputs did
//!   not, the difference comes from the configuration (e.g. the shader engine), which the
//!   report says.
//!
//! When every draw agrees, the traces are run to their end and the two screens compared.
//! Memory is bounded: one draw's detail per side, two images at a time, and recorded shader
//! steps capped at [`MAX_DIFF_TRACE_STEPS`].

use serde::Serialize;
use shader_unit::decode::{DstReg, Program};
use shader_unit::interp::{ExecConfig, Recorder, StepRecord, Uniforms, UnitState, run};

use super::edit::{EditError, EditList, describe};
use super::{Replay, Target, screen_image};
use crate::command::gpu::{AppliedEdit, Injection};
use crate::debug::{DetailLimits, DrawDetail, DrawInfo, DrawStats, Observer, RegWriteEvent};
use crate::draw::VsEngine;
use crate::engines::lcd::Screen;
use crate::geometry::shading::{ShaderUnit, UnitSetup};
use crate::geometry::vertex_loader::LoaderConfig;
use crate::memory::{PAGE_SIZE, PageRef, PhysMem};
use crate::pixel::fragment::PixelPath;
use crate::pixel::framebuffer::FramebufferConfig;
use crate::pixel::texture::RenderMode;
use pica_cmd::citrace::TraceSource;

/// Most shader steps recorded per side when looking for the divergent instruction.
pub const MAX_DIFF_TRACE_STEPS: u64 = 65_536;

/// Most earlier invocations of the draw re-run to rebuild the unit's persistent registers.
pub const MAX_DIFF_PRE_RUNS: usize = 50_000;

/// Most instructions those re-runs execute in total (a hostile shader that spends its whole
/// budget on every vertex cannot make the search run for hours).
pub const MAX_DIFF_PRE_RUN_INSTRUCTIONS: u64 = 1 << 26;

/// How one side of a comparison is replayed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct RunConfig {
    /// Vertex-shader engine.
    #[serde(serialize_with = "ser_engine")]
    pub vs_engine: VsEngine,
    /// Implementation of the per-fragment operations.
    #[serde(serialize_with = "ser_path")]
    pub pixel_path: PixelPath,
    /// Texture sampling mode.
    pub render_mode: RenderMode,
}

fn ser_engine<S: serde::Serializer>(e: &VsEngine, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match e {
        VsEngine::Fast => "fast",
        VsEngine::Reference => "reference",
    })
}

fn ser_path<S: serde::Serializer>(p: &PixelPath, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(match p {
        PixelPath::Reference => "reference",
        PixelPath::Specialized => "specialized",
    })
}

impl RunConfig {
    /// Applies the configuration to a replay that has not run yet.
    pub fn apply<S: TraceSource>(&self, replay: &mut Replay<S>) {
        replay.set_vs_engine(self.vs_engine);
        replay.set_pixel_path(self.pixel_path);
        replay.set_render_mode(self.render_mode);
    }

    /// A short description, e.g. `engine fast, pixel specialized, textures hardware`.
    pub fn describe(&self) -> String {
        format!(
            "engine {}, pixel {}, textures {}",
            match self.vs_engine {
                VsEngine::Fast => "fast",
                VsEngine::Reference => "reference",
            },
            match self.pixel_path {
                PixelPath::Reference => "reference",
                PixelPath::Specialized => "specialized",
            },
            match self.render_mode {
                RenderMode::Hardware => "hardware",
                RenderMode::CitraSwrast => "citra-swrast",
            }
        )
    }
}

/// Options of [`diff_replays`].
#[derive(Clone, Copy, Debug)]
pub struct DiffOptions {
    /// How many loaded and shaded vertices per draw are kept and compared (assembled and
    /// clipped triangles are not kept).
    pub limits: DetailLimits,
    /// Whether to look for the divergent instruction of the first differing vertex.
    pub trace_instructions: bool,
}

impl Default for DiffOptions {
    fn default() -> Self {
        Self {
            limits: DetailLimits {
                loaded: 1 << 16,
                shaded: 1 << 16,
                triangles: 0,
                gs_invocations: 0,
            },
            trace_instructions: true,
        }
    }
}

/// Why a comparison did not finish.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// The progress callback asked to stop.
    #[error("cancelled after {draws} draw(s)")]
    Cancelled {
        /// Draws compared before the stop.
        draws: u64,
    },
}

/// The result of a comparison.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "result", rename_all = "snake_case")]
pub enum DiffOutcome {
    /// Every draw's outputs and the final screens are identical.
    Same {
        /// Draws compared.
        draws: u64,
        /// Frame markers passed.
        frames: u32,
    },
    /// The first difference.
    Different(Box<FirstDifference>),
}

impl DiffOutcome {
    /// True when the two runs agree.
    pub fn is_same(&self) -> bool {
        matches!(self, DiffOutcome::Same { .. })
    }
}

/// Where and how the two runs first differ.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FirstDifference {
    /// Frame (0-based) of the draw (for side A).
    pub frame: u32,
    /// The draw (0-based over the whole trace); `None` when all draws agree and the difference
    /// is in the final screens (or in the number of draws).
    pub draw: Option<u64>,
    /// The draw's index within its frame (0-based).
    pub draw_in_frame: Option<u64>,
    /// A structural difference (one trace has fewer draws, different vertex counts, ...).
    pub structure: Option<String>,
    /// Colour-buffer difference after the draw.
    pub color: Option<PixelDiff>,
    /// Depth/stencil-buffer difference after the draw.
    pub depth: Option<PixelDiff>,
    /// Screen differences at the end of the traces (only when every draw agreed).
    pub screens: Vec<ScreenDiff>,
    /// The first differing shaded vertex.
    pub vertex: Option<VertexDiff>,
    /// The first differing input attribute of that vertex's invocation, if the inputs differ.
    pub input: Option<InputDiff>,
    /// The first instruction where that vertex's registers diverge.
    pub instruction: Option<InstructionDiff>,
    /// Explanations (why some part could not be determined, what it means).
    pub notes: Vec<String>,
}

/// A difference between two images (colour, depth/stencil or screen).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PixelDiff {
    /// Image width (of side A).
    pub width: u32,
    /// Image height (of side A).
    pub height: u32,
    /// Pixels that differ (all of them when the sizes or configurations differ).
    pub differing: u64,
    /// First differing pixel in image order (x, row from the top).
    pub first: Option<(u32, u32)>,
    /// Side A's value there (RGBA for colour; depth, stencil, 0, 0 for depth).
    pub a: [u32; 4],
    /// Side B's value there.
    pub b: [u32; 4],
    /// Set when the buffers' configuration (address, format, size) differs.
    pub config: Option<String>,
}

/// One screen that differs at the end.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ScreenDiff {
    /// "top" or "bottom".
    pub screen: String,
    /// The pixel difference.
    pub diff: PixelDiff,
}

/// The first shaded vertex of the draw whose outputs differ.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct VertexDiff {
    /// Index of the vertex in the draw.
    pub index_in_draw: u32,
    /// Output register (o0-o15) of the first differing component, if the output maps agree.
    pub output_register: Option<u8>,
    /// Compacted output slot.
    pub slot: usize,
    /// Component 0-3 (x, y, z, w).
    pub component: u8,
    /// Side A's value.
    pub a: f32,
    /// Side B's value.
    pub b: f32,
}

/// The first input attribute register that differs between the two invocations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InputDiff {
    /// Input register v0-v15.
    pub register: u8,
    /// Component 0-3.
    pub component: u8,
    /// Side A's value.
    pub a: f32,
    /// Side B's value.
    pub b: f32,
}

/// The first step of the re-run vertex where the two sides diverge.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct InstructionDiff {
    /// Step number (0-based count of executed instructions).
    pub step: usize,
    /// Word address of side A's instruction.
    pub pc: u16,
    /// Side A's instruction as text.
    pub text: String,
    /// Side B's PC and instruction when they differ from A's.
    pub other: Option<(u16, String)>,
    /// What differs: e.g. `r0.x`, `a0.x`, `cmp.y`, `pc` or `end` (one side stopped).
    pub register: String,
    /// Side A's value of it.
    pub a: f64,
    /// Side B's value of it.
    pub b: f64,
}

const COMP: [char; 4] = ['x', 'y', 'z', 'w'];

/// Records the one draw a step runs (detail, info) and where it started.
struct StepObserver {
    limits: DetailLimits,
    writes_seen: u64,
    begin_writes: Option<u64>,
    info: Option<DrawInfo>,
    detail: Option<DrawDetail>,
}

impl StepObserver {
    fn new(limits: DetailLimits) -> Self {
        Self {
            limits,
            writes_seen: 0,
            begin_writes: None,
            info: None,
            detail: None,
        }
    }
}

impl Observer for StepObserver {
    fn wants_draw_detail(&self) -> bool {
        true
    }
    fn draw_detail_limits(&self) -> DetailLimits {
        self.limits
    }
    fn reg_write(&mut self, _ev: &RegWriteEvent) {
        self.writes_seen += 1;
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.begin_writes = Some(self.writes_seen.saturating_sub(1));
        self.info = Some(*info);
    }
    fn draw_end(&mut self, info: &DrawInfo, _stats: &DrawStats, detail: Option<DrawDetail>) {
        if self.info.is_none() {
            self.info = Some(*info);
        }
        self.detail = detail;
    }
}

/// One side after one draw.
struct Side {
    /// The draw ran.
    ran: bool,
    /// Register writes executed before the draw's triggering write.
    before_writes: u64,
    info: Option<DrawInfo>,
    detail: Option<DrawDetail>,
    fb: FramebufferConfig,
    /// The colour buffer's range (address, bytes), if its format is valid.
    color_range: Option<(u32, u64)>,
    /// The depth buffer's range, if its format is valid.
    depth_range: Option<(u32, u64)>,
}

/// Installs `edits` on one side of a comparison (like [`Replay::set_edits`]) and records which
/// of them run, so that [`unapplied_edits`] can name the enabled edits that never did (a write
/// override whose write addresses another register, a draw the trace does not have).
pub fn set_side_edits<S: TraceSource>(r: &mut Replay<S>, edits: EditList) -> Result<(), EditError> {
    let mut hooks = edits.compile()?;
    hooks.record = true;
    let any = !hooks.overrides.is_empty() || !hooks.before_draw.is_empty();
    r.edits = edits;
    r.set_edit_hooks(any.then(|| std::sync::Arc::new(hooks)));
    Ok(())
}

/// Keeps the edit log of a side small: one entry per applied edit, without the written words
/// (keyframes clone the log).
fn compact_edit_log<S: TraceSource>(r: &mut Replay<S>) {
    let log = &mut r.gpu.edit_log;
    if log.is_empty() {
        return;
    }
    for e in log.iter_mut() {
        if let AppliedEdit::Injected { writes, site, .. } = e {
            *writes = Vec::new();
            *site = None;
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    log.retain(|e| match e {
        AppliedEdit::Override { edit, .. } => seen.insert(vec![*edit]),
        AppliedEdit::Injected { edits, .. } => seen.insert(edits.clone()),
    });
}

/// The enabled edits of a side (installed with [`set_side_edits`]) that did not run in the
/// replay so far, in script syntax with their index (`edit 2 (draw 99: 0x0C0=0x1)`). Meaningful
/// after [`diff_replays`] returned [`DiffOutcome::Same`] (the whole trace ran linearly).
pub fn unapplied_edits<S: TraceSource>(r: &Replay<S>) -> Vec<String> {
    let mut applied = vec![false; r.edits.edits.len()];
    for e in &r.gpu.edit_log {
        match e {
            AppliedEdit::Override { edit, .. } => {
                if let Some(a) = applied.get_mut(*edit) {
                    *a = true;
                }
            }
            AppliedEdit::Injected { edits, .. } => {
                for &i in edits {
                    if let Some(a) = applied.get_mut(i) {
                        *a = true;
                    }
                }
            }
        }
    }
    r.edits
        .edits
        .iter()
        .enumerate()
        .filter(|(i, e)| e.enabled && !applied[*i])
        .map(|(i, e)| format!("edit {i} ({})", describe(&e.kind)))
        .collect()
}

fn step_side<S: TraceSource>(r: &mut Replay<S>, draw: u64, limits: DetailLimits) -> Side {
    let base = r.position().writes;
    let mut obs = StepObserver::new(limits);
    let ran = r.run_until(Target::AfterDraw(draw), &mut obs);
    compact_edit_log(r);
    let fb = FramebufferConfig::from_regs(&r.gpu().regs);
    let color_range = fb
        .color_format
        .map(|f| (fb.color_addr, pixels(&fb) * f.bytes_per_pixel() as u64));
    let depth_range = fb
        .depth_format
        .map(|f| (fb.depth_addr, pixels(&fb) * f.bytes_per_pixel() as u64));
    Side {
        ran,
        before_writes: base + obs.begin_writes.unwrap_or(obs.writes_seen),
        info: obs.info,
        detail: obs.detail,
        fb,
        color_range,
        depth_range,
    }
}

/// Compares one buffer (colour or depth) of both sides draw after draw without reading all of
/// it each time: it holds [`PageRef`]s to the pages of the range as of the last comparison,
/// which found both sides equal. A page whose handle is unchanged on both sides was not written
/// since (copy-on-write gives a written page a new handle), so only pages written on either side
/// are compared byte for byte; a changed range compares everything. The verdict is that of
/// comparing the whole range (issue 18: hashing both framebuffers after each of 500,000 draws
/// took minutes).
#[derive(Default)]
struct BufferWatch {
    /// The range both sides had equal bytes in at the last comparison.
    range: Option<(u32, u64)>,
    /// Side A's page handles over `range`, one per page touched.
    a: Vec<Option<PageRef>>,
    /// Side B's.
    b: Vec<Option<PageRef>>,
}

fn same_page(x: &Option<PageRef>, y: &Option<PageRef>) -> bool {
    match (x, y) {
        (Some(x), Some(y)) => x.same(y),
        (None, None) => true,
        _ => false,
    }
}

impl BufferWatch {
    /// True if the buffers at `ra` in `ma` and `rb` in `mb` hold the same bytes (unmapped bytes
    /// read as zero; two absent buffers are the same, one absent is not).
    fn same(
        &mut self,
        ma: &PhysMem,
        ra: Option<(u32, u64)>,
        mb: &PhysMem,
        rb: Option<(u32, u64)>,
    ) -> bool {
        let known = ra.is_some() && self.range == ra;
        if !known {
            self.range = None;
            self.a.clear();
            self.b.clear();
        }
        if ra != rb {
            return false;
        }
        let Some((addr, len)) = ra else {
            return true;
        };
        let end = u64::from(addr).saturating_add(len).min(1 << 32);
        let mut at = u64::from(addr);
        let mut i = 0;
        while at < end {
            // ok: at < end ≤ 2^32.
            let pa = at as u32;
            let n = (PAGE_SIZE - (pa as usize) % PAGE_SIZE).min((end - at) as usize);
            let (pga, pgb) = (ma.page_ref(pa), mb.page_ref(pa));
            let unchanged = known && same_page(&self.a[i], &pga) && same_page(&self.b[i], &pgb);
            if !unchanged && !same_page(&pga, &pgb) && !bytes_equal(ma, mb, pa, n) {
                self.range = None;
                self.a.clear();
                self.b.clear();
                return false;
            }
            if known {
                self.a[i] = pga;
                self.b[i] = pgb;
            } else {
                self.a.push(pga);
                self.b.push(pgb);
            }
            i += 1;
            at += n as u64;
        }
        self.range = ra;
        true
    }
}

/// True if `n` bytes at `pa` (within one page) are equal in both memories (unmapped bytes read
/// as zero, as in [`hash_range`]).
fn bytes_equal(ma: &PhysMem, mb: &PhysMem, pa: u32, n: usize) -> bool {
    let mut ba = [0u8; PAGE_SIZE];
    let mut bb = [0u8; PAGE_SIZE];
    let read = |m: &PhysMem, buf: &mut [u8; PAGE_SIZE]| {
        let chunk = &mut buf[..n];
        if m.read(pa, chunk).is_err() {
            chunk.fill(0);
        }
    };
    match (ma.slice_in_page(pa, n), mb.slice_in_page(pa, n)) {
        (Some(x), Some(y)) => x == y,
        (Some(x), None) => {
            read(mb, &mut bb);
            x == &bb[..n]
        }
        (None, Some(y)) => {
            read(ma, &mut ba);
            &ba[..n] == y
        }
        (None, None) => {
            read(ma, &mut ba);
            read(mb, &mut bb);
            ba[..n] == bb[..n]
        }
    }
}

fn pixels(fb: &FramebufferConfig) -> u64 {
    u64::from(fb.width) * u64::from(fb.height)
}

/// A 64-bit hash of `len` bytes of memory at `addr` (unmapped or non-resident bytes hash as
/// zero), read page by page in place.
pub fn hash_range(mem: &PhysMem, addr: u32, len: u64) -> u64 {
    let mut h = Hash64::new();
    let mut a = u64::from(addr);
    let end = a.saturating_add(len).min(1 << 32);
    let mut buf = [0u8; PAGE_SIZE];
    while a < end {
        // ok: a < end ≤ 2^32.
        let pa = a as u32;
        let n = (PAGE_SIZE - (pa as usize) % PAGE_SIZE).min((end - a) as usize);
        match mem.slice_in_page(pa, n) {
            Some(bytes) => h.bytes(bytes),
            None => {
                let chunk = &mut buf[..n];
                if mem.read(pa, chunk).is_err() {
                    chunk.fill(0);
                }
                h.bytes(chunk);
            }
        }
        a += n as u64;
    }
    h.finish()
}

/// A small, fast, deterministic 64-bit hash (multiply-rotate over 8-byte words).
struct Hash64(u64, u64);

impl Hash64 {
    fn new() -> Self {
        Self(0x9E37_79B9_7F4A_7C15, 0)
    }
    fn word(&mut self, w: u64) {
        self.0 = (self.0 ^ w)
            .wrapping_mul(0xFF51_AFD7_ED55_8CCD)
            .rotate_left(31);
    }
    fn bytes(&mut self, b: &[u8]) {
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        for &x in chunks.remainder() {
            self.word(u64::from(x) | 0x100);
        }
        self.1 += b.len() as u64;
    }
    fn finish(mut self) -> u64 {
        let n = self.1;
        self.word(n);
        let mut x = self.0;
        x ^= x >> 33;
        x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        x ^ (x >> 33)
    }
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits()
}

/// Compares two replays draw by draw (see the module docs). `progress` is called after every
/// compared draw with the number compared so far; returning false cancels.
pub fn diff_replays<A: TraceSource, B: TraceSource>(
    a: &mut Replay<A>,
    b: &mut Replay<B>,
    opts: &DiffOptions,
    progress: &mut dyn FnMut(u64) -> bool,
) -> Result<DiffOutcome, DiffError> {
    a.rewind();
    b.rewind();
    // A fresh log for this run (rewinding restores the initial GPU, whose log is empty).
    a.gpu.edit_log.clear();
    b.gpu.edit_log.clear();
    let mut draw = 0u64;
    let mut frame = 0u32;
    let mut frame_first_draw = 0u64;
    let mut color_watch = BufferWatch::default();
    let mut depth_watch = BufferWatch::default();
    loop {
        let sa = step_side(a, draw, opts.limits);
        let sb = step_side(b, draw, opts.limits);
        let pos = a.position();
        if pos.frame > frame {
            // The draw ran in the frame the replay is in now; earlier frames ended before it.
            frame = pos.frame;
            frame_first_draw = draw;
        }
        match (sa.ran, sb.ran) {
            (false, false) => break,
            (true, true) => {}
            (ra, _) => {
                let (short, long) = if ra { ("B", "A") } else { ("A", "B") };
                return Ok(DiffOutcome::Different(Box::new(FirstDifference {
                    frame,
                    draw: Some(draw),
                    draw_in_frame: Some(draw - frame_first_draw),
                    structure: Some(format!(
                        "trace {short} ends after {draw} draw(s); trace {long} has draw {draw} and maybe more"
                    )),
                    ..FirstDifference::default()
                })));
            }
        }
        let vertices_differ = first_vertex_diff(&sa, &sb);
        let color_differs = !color_watch.same(a.mem(), sa.color_range, b.mem(), sb.color_range)
            || !same_color_config(&sa.fb, &sb.fb);
        let depth_differs = !depth_watch.same(a.mem(), sa.depth_range, b.mem(), sb.depth_range)
            || !same_depth_config(&sa.fb, &sb.fb);
        let count_differs = match (&sa.info, &sb.info) {
            (Some(x), Some(y)) => x.count != y.count || x.topology != y.topology,
            _ => false,
        };
        if vertices_differ.is_some() || color_differs || depth_differs || count_differs {
            let mut d = FirstDifference {
                frame,
                draw: Some(draw),
                draw_in_frame: Some(draw - frame_first_draw),
                ..FirstDifference::default()
            };
            if count_differs && let (Some(x), Some(y)) = (&sa.info, &sb.info) {
                d.structure = Some(format!(
                    "draw {draw}: A draws {} vertices ({:?}), B draws {} ({:?})",
                    x.count, x.topology, y.count, y.topology
                ));
            }
            if color_differs {
                d.color = Some(color_diff(a.mem(), &sa.fb, b.mem(), &sb.fb));
            }
            if depth_differs {
                d.depth = Some(depth_diff(a.mem(), &sa.fb, b.mem(), &sb.fb));
            }
            for (side, s) in [("A", &sa), ("B", &sb)] {
                if let Some(det) = &s.detail
                    && det.dropped[1] > 0
                {
                    d.notes.push(format!(
                        "side {side}: only the first {} shaded vertices of the draw were compared",
                        det.shaded.len()
                    ));
                }
            }
            if let Some(v) = vertices_differ {
                if opts.trace_instructions {
                    trace_divergence(a, &sa, b, &sb, v.index_in_draw, &mut d);
                }
                d.vertex = Some(v);
            }
            return Ok(DiffOutcome::Different(Box::new(d)));
        }
        draw += 1;
        if !progress(draw) {
            return Err(DiffError::Cancelled { draws: draw });
        }
    }
    // Every draw agreed: compare the screens at the end.
    let frames = a.position().frame;
    let mut screens = Vec::new();
    for (name, screen) in [("top", Screen::Top), ("bottom", Screen::Bottom)] {
        let ia = screen_image(a.gpu(), a.mem(), screen).ok();
        let ib = screen_image(b.gpu(), b.mem(), screen).ok();
        let diff = match (ia, ib) {
            (None, None) => None,
            (Some(x), Some(y)) => {
                let pa: Vec<[u32; 4]> = x.pixels.iter().map(|p| p.map(u32::from)).collect();
                let pb: Vec<[u32; 4]> = y.pixels.iter().map(|p| p.map(u32::from)).collect();
                image_diff(x.width, x.height, &pa, y.width, y.height, &pb)
            }
            (x, _) => Some(PixelDiff {
                config: Some(format!(
                    "the screen can be scanned out only on side {}",
                    if x.is_some() { "A" } else { "B" }
                )),
                ..PixelDiff::default()
            }),
        };
        if let Some(diff) = diff {
            screens.push(ScreenDiff {
                screen: name.to_string(),
                diff,
            });
        }
    }
    if screens.is_empty() {
        Ok(DiffOutcome::Same {
            draws: draw,
            frames,
        })
    } else {
        Ok(DiffOutcome::Different(Box::new(FirstDifference {
            frame: frames,
            screens,
            notes: vec![format!(
                "all {draw} draws agree; the screens differ at the end of the traces (fills, transfers or LCD setup)"
            )],
            ..FirstDifference::default()
        })))
    }
}

fn same_color_config(a: &FramebufferConfig, b: &FramebufferConfig) -> bool {
    (
        a.color_addr,
        a.color_format_id,
        a.width,
        a.height,
        a.tile_mode,
    ) == (
        b.color_addr,
        b.color_format_id,
        b.width,
        b.height,
        b.tile_mode,
    )
}

fn same_depth_config(a: &FramebufferConfig, b: &FramebufferConfig) -> bool {
    (
        a.depth_addr,
        a.depth_format_id,
        a.width,
        a.height,
        a.tile_mode,
    ) == (
        b.depth_addr,
        b.depth_format_id,
        b.width,
        b.height,
        b.tile_mode,
    )
}

fn color_diff(
    ma: &PhysMem,
    fa: &FramebufferConfig,
    mb: &PhysMem,
    fb: &FramebufferConfig,
) -> PixelDiff {
    let ia = fa.read_color_image(ma).ok();
    let ib = fb.read_color_image(mb).ok();
    let mut d = match (ia, ib) {
        (Some(x), Some(y)) => {
            let pa: Vec<[u32; 4]> = x.iter().map(|p| p.map(u32::from)).collect();
            let pb: Vec<[u32; 4]> = y.iter().map(|p| p.map(u32::from)).collect();
            image_diff(fa.width, fa.height, &pa, fb.width, fb.height, &pb).unwrap_or_default()
        }
        _ => PixelDiff {
            width: fa.width,
            height: fa.height,
            config: Some("a colour buffer could not be read (unknown format or unmapped)".into()),
            ..PixelDiff::default()
        },
    };
    if !same_color_config(fa, fb) {
        d.config = Some(format!(
            "colour buffer A at 0x{:08X} format {} {}x{}, B at 0x{:08X} format {} {}x{}",
            fa.color_addr,
            fa.color_format_id,
            fa.width,
            fa.height,
            fb.color_addr,
            fb.color_format_id,
            fb.width,
            fb.height
        ));
    }
    d
}

fn depth_diff(
    ma: &PhysMem,
    fa: &FramebufferConfig,
    mb: &PhysMem,
    fb: &FramebufferConfig,
) -> PixelDiff {
    let ia = fa.read_depth_image(ma).ok();
    let ib = fb.read_depth_image(mb).ok();
    let mut d = match (ia, ib) {
        (Some(x), Some(y)) => {
            let pa: Vec<[u32; 4]> = x.iter().map(|&(z, s)| [z, u32::from(s), 0, 0]).collect();
            let pb: Vec<[u32; 4]> = y.iter().map(|&(z, s)| [z, u32::from(s), 0, 0]).collect();
            image_diff(fa.width, fa.height, &pa, fb.width, fb.height, &pb).unwrap_or_default()
        }
        _ => PixelDiff {
            width: fa.width,
            height: fa.height,
            config: Some("a depth buffer could not be read (unknown format or unmapped)".into()),
            ..PixelDiff::default()
        },
    };
    if !same_depth_config(fa, fb) {
        d.config = Some(format!(
            "depth buffer A at 0x{:08X} format {}, B at 0x{:08X} format {}",
            fa.depth_addr, fa.depth_format_id, fb.depth_addr, fb.depth_format_id
        ));
    }
    d
}

/// Compares two images (rows top first); `None` when identical.
fn image_diff(
    wa: u32,
    ha: u32,
    pa: &[[u32; 4]],
    wb: u32,
    hb: u32,
    pb: &[[u32; 4]],
) -> Option<PixelDiff> {
    if (wa, ha) != (wb, hb) || pa.len() != pb.len() {
        return Some(PixelDiff {
            width: wa,
            height: ha,
            differing: pa.len().max(pb.len()) as u64,
            config: Some(format!("image sizes differ: A {wa}x{ha}, B {wb}x{hb}")),
            ..PixelDiff::default()
        });
    }
    let mut d = PixelDiff {
        width: wa,
        height: ha,
        ..PixelDiff::default()
    };
    for (i, (x, y)) in pa.iter().zip(pb).enumerate() {
        if x != y {
            if d.first.is_none() {
                let w = wa.max(1) as usize;
                d.first = Some(((i % w) as u32, (i / w) as u32));
                d.a = *x;
                d.b = *y;
            }
            d.differing += 1;
        }
    }
    (d.differing > 0).then_some(d)
}

fn first_vertex_diff(sa: &Side, sb: &Side) -> Option<VertexDiff> {
    let (da, db) = (sa.detail.as_ref()?, sb.detail.as_ref()?);
    let mask_a = UnitSetup::from_regs(&regs_of(da), ShaderUnit::Vertex)
        .outputs
        .0;
    let mask_b = UnitSetup::from_regs(&regs_of(db), ShaderUnit::Vertex)
        .outputs
        .0;
    for (va, vb) in da.shaded.iter().zip(&db.shaded) {
        let n = va.outputs.len().max(vb.outputs.len());
        for slot in 0..n {
            let (oa, ob) = (va.outputs.get(slot), vb.outputs.get(slot));
            for c in 0..4 {
                let x = oa.map_or(f32::NAN, |o| o[c]);
                let y = ob.map_or(f32::NAN, |o| o[c]);
                if oa.is_none()
                    || ob.is_none()
                    || !same_f32(x, y)
                    || va.index_in_draw != vb.index_in_draw
                {
                    return Some(VertexDiff {
                        index_in_draw: va.index_in_draw,
                        output_register: (mask_a == mask_b)
                            .then(|| slot_register(mask_a, slot))
                            .flatten(),
                        slot,
                        component: c as u8,
                        a: x,
                        b: y,
                    });
                }
            }
        }
    }
    if da.shaded.len() != db.shaded.len() {
        let k = da.shaded.len().min(db.shaded.len());
        let v = da.shaded.get(k).or_else(|| db.shaded.get(k))?;
        return Some(VertexDiff {
            index_in_draw: v.index_in_draw,
            output_register: None,
            slot: 0,
            component: 0,
            a: da
                .shaded
                .get(k)
                .map_or(f32::NAN, |s| s.outputs.first().map_or(f32::NAN, |o| o[0])),
            b: db
                .shaded
                .get(k)
                .map_or(f32::NAN, |s| s.outputs.first().map_or(f32::NAN, |o| o[0])),
        });
    }
    None
}

fn regs_of(d: &DrawDetail) -> [u32; 0x300] {
    let mut r = [0u32; 0x300];
    for (o, i) in r.iter_mut().zip(&d.regs) {
        *o = *i;
    }
    r
}

/// The output register (o0-o15) of compacted slot `slot` under OUTMAP_MASK `mask`.
fn slot_register(mask: u16, slot: usize) -> Option<u8> {
    (0..16u8).filter(|i| mask & (1 << i) != 0).nth(slot)
}

/// The vertex shader as a draw saw it: program, uniforms, unit setup, persistent registers.
struct VsRun {
    program: std::sync::Arc<Program>,
    uniforms: Uniforms,
    setup: UnitSetup,
    state: UnitState,
    config: ExecConfig,
    vertex_id: Option<u32>,
}

fn vs_before_draw<S: TraceSource>(
    r: &mut Replay<S>,
    before_writes: u64,
    info: Option<&DrawInfo>,
    k: u32,
) -> VsRun {
    r.seek(Target::AfterWrite(before_writes), &mut ());
    let injected = injected_state(r);
    let gpu = injected.as_ref().unwrap_or(&r.gpu);
    let regs = gpu.regs.clone();
    let mut uniforms = Uniforms {
        f: gpu.vs.float_uniforms,
        ..Uniforms::default()
    };
    uniforms.set_bools(regs[0x2B0]);
    for i in 0..4 {
        uniforms.set_int(i, regs[0x2B1 + i]);
    }
    let vertex_id = info.and_then(|info| {
        LoaderConfig::from_regs(&regs)
            .vertex_id(r.mem(), info.kind, k)
            .ok()
    });
    VsRun {
        program: Program::new_shared(&gpu.vs.code, &gpu.vs.opdescs),
        uniforms,
        setup: UnitSetup::from_regs(&regs, ShaderUnit::Vertex),
        state: gpu.pipeline.vs_unit.state.clone(),
        config: gpu.pipeline.vs_unit.config,
        vertex_id,
    }
}

fn to_regs(attrs: &[[f32; 4]]) -> [[f32; 4]; 16] {
    let mut out = [[0.0; 4]; 16];
    for (o, a) in out.iter_mut().zip(attrs) {
        *o = *a;
    }
    out
}

/// The GPU as the draw about to start sees it when the side's edit list injects writes before
/// it (they run after the trigger write, so a seek to the write before the trigger does not
/// include them): a copy of the state with those writes executed. `None` without injections.
fn injected_state<S: TraceSource>(r: &Replay<S>) -> Option<crate::command::gpu::Gpu> {
    let hooks = r.hooks.as_ref()?;
    let edits = hooks.before_draw.get(&r.gpu.draw_count)?;
    let mut gpu = r.gpu.clone();
    gpu.edit_hooks = None;
    let mut mem = r.mem.clone();
    for (_, writes) in edits {
        for inj in writes {
            let (id, param, mask) = match *inj {
                Injection::Write { id, param, mask } => (id, param, mask),
                Injection::SetBits { id, bits, value } => {
                    let old = gpu.regs.get(id as usize).copied().unwrap_or(0);
                    (id, (old & !bits) | (value & bits), 0xF)
                }
            };
            gpu.write_pica_reg(&mut mem, id, param, mask, None, &mut ());
        }
    }
    Some(gpu)
}

/// Re-runs vertex `k` of the draw on the reference interpreter with a recorder: returns the
/// input registers of its invocation and the recorded steps.
fn record_vertex(
    vs: &VsRun,
    detail: &DrawDetail,
    k: u32,
    notes: &mut Vec<String>,
    side: &str,
) -> Option<([[f32; 4]; 16], Vec<StepRecord>, bool)> {
    let invocation = detail
        .loaded
        .iter()
        .position(|l| l.index_in_draw == k)
        .or_else(|| {
            let id = vs.vertex_id?;
            detail
                .loaded
                .iter()
                .rposition(|l| l.vertex_id == id && l.index_in_draw <= k)
        });
    let Some(invocation) = invocation else {
        notes.push(format!(
            "side {side}: vertex {k} has no recorded invocation (beyond the detail limits?)"
        ));
        return None;
    };
    let mut state = vs.state.clone();
    let config = vs.config;
    let first = if invocation > MAX_DIFF_PRE_RUNS {
        notes.push(format!(
            "side {side}: the {invocation} earlier invocations were not re-run; temporaries may differ from the pipeline's"
        ));
        invocation
    } else {
        0
    };
    let mut spent = 0u64;
    for (i, l) in detail
        .loaded
        .iter()
        .enumerate()
        .take(invocation)
        .skip(first)
    {
        if spent >= MAX_DIFF_PRE_RUN_INSTRUCTIONS {
            notes.push(format!(
                "side {side}: invocations {i}..{invocation} were not re-run (more than {MAX_DIFF_PRE_RUN_INSTRUCTIONS} instructions before the vertex); temporaries may differ from the pipeline's"
            ));
            break;
        }
        vs.setup.input.load(&to_regs(&l.attrs), &mut state.inputs);
        // Errors of earlier invocations were diagnosed by the pipeline; keep going.
        spent += match run(
            &vs.program,
            &vs.uniforms,
            &mut state,
            vs.setup.entry,
            &config,
            &mut (),
            &mut (),
        ) {
            Ok(stats) => stats.instructions,
            Err(_) => config.budget.max(1),
        };
    }
    let loaded = detail.loaded.get(invocation)?;
    vs.setup
        .input
        .load(&to_regs(&loaded.attrs), &mut state.inputs);
    let inputs = state.inputs;
    let mut capped = config;
    capped.budget = capped.budget.min(MAX_DIFF_TRACE_STEPS);
    let mut rec = Recorder::new();
    let result = run(
        &vs.program,
        &vs.uniforms,
        &mut state,
        vs.setup.entry,
        &capped,
        &mut rec,
        &mut (),
    );
    let truncated = result.is_err() && config.budget > MAX_DIFF_TRACE_STEPS;
    Some((inputs, rec.steps, truncated))
}

fn trace_divergence<A: TraceSource, B: TraceSource>(
    a: &mut Replay<A>,
    sa: &Side,
    b: &mut Replay<B>,
    sb: &Side,
    k: u32,
    d: &mut FirstDifference,
) {
    let (Some(da), Some(db)) = (&sa.detail, &sb.detail) else {
        return;
    };
    let va = vs_before_draw(a, sa.before_writes, sa.info.as_ref(), k);
    let vb = vs_before_draw(b, sb.before_writes, sb.info.as_ref(), k);
    let ra = record_vertex(&va, da, k, &mut d.notes, "A");
    let rb = record_vertex(&vb, db, k, &mut d.notes, "B");
    let (Some((ina, steps_a, ta)), Some((inb, steps_b, tb))) = (ra, rb) else {
        return;
    };
    'inputs: for (r, (x, y)) in ina.iter().zip(&inb).enumerate() {
        for c in 0..4 {
            if !same_f32(x[c], y[c]) {
                d.input = Some(InputDiff {
                    register: r as u8,
                    component: c as u8,
                    a: x[c],
                    b: y[c],
                });
                break 'inputs;
            }
        }
    }
    d.instruction = first_divergent_step(&steps_a, &steps_b);
    if d.instruction.is_none() {
        if ta || tb {
            d.notes.push(format!(
                "the re-runs agree for the first {MAX_DIFF_TRACE_STEPS} steps (the trace stops there)"
            ));
        } else {
            d.notes.push(
                "re-run on the reference interpreter, both sides execute identically: the outputs differ because of the run configuration (shader engine), not the program, uniforms or inputs"
                    .to_string(),
            );
        }
    }
}

fn instr_text(s: &StepRecord) -> String {
    shader_unit::disasm::instruction_text(&s.instr)
}

/// The first step where two recorded runs differ.
fn first_divergent_step(a: &[StepRecord], b: &[StepRecord]) -> Option<InstructionDiff> {
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        let base = |register: String, va: f64, vb: f64| InstructionDiff {
            step: i,
            pc: x.pc,
            text: instr_text(x),
            other: (x.pc != y.pc || x.instr != y.instr).then(|| (y.pc, instr_text(y))),
            register,
            a: va,
            b: vb,
        };
        if x.pc != y.pc {
            return Some(base("pc".into(), f64::from(x.pc), f64::from(y.pc)));
        }
        match (&x.dst, &y.dst) {
            (Some((ra, _, aa)), Some((rb, _, ab))) if ra == rb => {
                for c in 0..4 {
                    if !same_f32(aa[c], ab[c]) {
                        return Some(base(
                            format!("{}.{}", reg_name(*ra), COMP[c]),
                            f64::from(aa[c]),
                            f64::from(ab[c]),
                        ));
                    }
                }
            }
            (None, None) => {}
            (ra, rb) => {
                let n = |r: &Option<(DstReg, _, _)>| {
                    r.as_ref().map_or("none".to_string(), |r| reg_name(r.0))
                };
                return Some(base(format!("dst {} vs {}", n(ra), n(rb)), 0.0, 0.0));
            }
        }
        for (c, comp) in COMP.iter().enumerate().take(2) {
            if x.a0[c] != y.a0[c] {
                return Some(base(
                    format!("a0.{comp}"),
                    f64::from(x.a0[c]),
                    f64::from(y.a0[c]),
                ));
            }
            if x.cmp[c] != y.cmp[c] {
                return Some(base(
                    format!("cmp.{comp}"),
                    f64::from(u8::from(x.cmp[c])),
                    f64::from(u8::from(y.cmp[c])),
                ));
            }
        }
        if x.al != y.al {
            return Some(base("aL".into(), f64::from(x.al), f64::from(y.al)));
        }
        if x.next_pc != y.next_pc {
            return Some(base(
                "next pc".into(),
                f64::from(x.next_pc),
                f64::from(y.next_pc),
            ));
        }
    }
    if a.len() != b.len() {
        let i = a.len().min(b.len());
        let s = a.get(i).or_else(|| b.get(i))?;
        return Some(InstructionDiff {
            step: i,
            pc: s.pc,
            text: instr_text(s),
            other: None,
            register: format!("end (A runs {} step(s), B {})", a.len(), b.len()),
            a: a.len() as f64,
            b: b.len() as f64,
        });
    }
    None
}

fn reg_name(r: DstReg) -> String {
    match r {
        DstReg::Output(n) => format!("o{n}"),
        DstReg::Temp(n) => format!("r{n}"),
    }
}

impl FirstDifference {
    /// One paragraph for people, e.g. `first difference: frame 0 draw 12 (colour 37 pixels,
    /// first at (10,20): a=#ff0000ff b=#fe0000ff); vertex 3 output o1.x a=... b=...; first
    /// divergent instruction 0x0014 `mad r0, ...` r0.x a=... b=...`.
    pub fn summary(&self) -> String {
        let mut s = match (self.draw, self.draw_in_frame) {
            (Some(d), Some(f)) => format!(
                "first difference: frame {} draw {f} (draw {d} of the trace)",
                self.frame
            ),
            _ => format!(
                "first difference: at the end of the traces (frame {})",
                self.frame
            ),
        };
        let mut parts = Vec::new();
        if let Some(st) = &self.structure {
            parts.push(st.clone());
        }
        let hex = |p: [u32; 4]| format!("#{:02x}{:02x}{:02x}{:02x}", p[0], p[1], p[2], p[3]);
        if let Some(c) = &self.color {
            parts.push(pixel_text("colour", c, hex));
        }
        if let Some(c) = &self.depth {
            parts.push(pixel_text("depth/stencil", c, |p| {
                format!("0x{:06x}/s{}", p[0], p[1])
            }));
        }
        for sd in &self.screens {
            parts.push(pixel_text(&format!("{} screen", sd.screen), &sd.diff, hex));
        }
        if !parts.is_empty() {
            s.push_str(&format!(" ({})", parts.join("; ")));
        }
        if let Some(v) = &self.vertex {
            let reg = match v.output_register {
                Some(o) => format!("o{o}"),
                None => format!("slot {}", v.slot),
            };
            s.push_str(&format!(
                "; vertex {} output {reg}.{} a={} b={}",
                v.index_in_draw,
                COMP[v.component as usize & 3],
                v.a,
                v.b
            ));
        }
        if let Some(i) = &self.input {
            s.push_str(&format!(
                "; input v{}.{} a={} b={}",
                i.register,
                COMP[i.component as usize & 3],
                i.a,
                i.b
            ));
        }
        if let Some(i) = &self.instruction {
            s.push_str(&format!(
                "; first divergent instruction 0x{:04x} `{}`",
                i.pc, i.text
            ));
            if let Some((pc, t)) = &i.other {
                s.push_str(&format!(" (B: 0x{pc:04x} `{t}`)"));
            }
            s.push_str(&format!(
                " {} a={} b={} (step {})",
                i.register, i.a as f32, i.b as f32, i.step
            ));
        }
        for n in &self.notes {
            s.push_str(&format!("\nnote: {n}"));
        }
        s
    }
}

fn pixel_text(what: &str, d: &PixelDiff, fmt: impl Fn([u32; 4]) -> String) -> String {
    let mut s = format!("{what} {} pixels", d.differing);
    if let Some((x, y)) = d.first {
        s.push_str(&format!(
            ", first at ({x},{y}): a={} b={}",
            fmt(d.a),
            fmt(d.b)
        ));
    }
    if let Some(c) = &d.config {
        s.push_str(&format!(", {c}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffer_watch_agrees_with_a_full_comparison() {
        use crate::memory::VRAM;
        let base = VRAM.base + 100; // not page-aligned: partial first and last pages
        let range = Some((base, 3 * PAGE_SIZE as u64));
        let (mut a, mut b) = (PhysMem::new(), PhysMem::new());
        let mut w = BufferWatch::default();
        // Never written on either side: equal (zeros).
        assert!(w.same(&a, range, &b, range));
        // Same bytes written on both sides.
        a.write(base + 5000, &[7; 10]).unwrap();
        b.write(base + 5000, &[7; 10]).unwrap();
        assert!(w.same(&a, range, &b, range));
        // A page written on one side only, inside the range.
        a.write(base + 9000, &[1]).unwrap();
        assert!(!w.same(&a, range, &b, range));
        b.write(base + 9000, &[1]).unwrap();
        assert!(w.same(&a, range, &b, range));
        // Unchanged pages are not re-read, yet a write in place after the last comparison
        // is still seen (the held handle forces a copy).
        b.write(base + 10, &[9]).unwrap();
        assert!(!w.same(&a, range, &b, range));
        a.write(base + 10, &[9]).unwrap();
        assert!(w.same(&a, range, &b, range));
        // Writes outside the range (same page, before `base`) do not matter.
        a.write(VRAM.base, &[3; 100]).unwrap();
        assert!(w.same(&a, range, &b, range));
        // A different range, or one side without a buffer, compares afresh.
        let other = Some((base + 8, 16));
        assert!(w.same(&a, other, &b, other));
        assert!(!w.same(&a, other, &b, None));
        assert!(w.same(&a, None, &b, None));
        // Ranges reaching into unmapped memory read it as zero on both sides.
        let edge = Some((VRAM.end() as u32 - 8, 64));
        assert!(w.same(&a, edge, &b, edge));
        a.write(VRAM.end() as u32 - 4, &[1]).unwrap();
        assert!(!w.same(&a, edge, &b, edge));
        // The verdict always matches the full-range hash.
        for r in [range, other, edge].into_iter().flatten() {
            let hashes_equal = hash_range(&a, r.0, r.1) == hash_range(&b, r.0, r.1);
            assert_eq!(
                BufferWatch::default().same(&a, Some(r), &b, Some(r)),
                hashes_equal
            );
        }
    }

    #[test]
    fn slot_register_follows_the_mask() {
        assert_eq!(slot_register(0b1011, 0), Some(0));
        assert_eq!(slot_register(0b1011, 1), Some(1));
        assert_eq!(slot_register(0b1011, 2), Some(3));
        assert_eq!(slot_register(0b1011, 3), None);
    }

    #[test]
    fn hash_distinguishes_and_repeats() {
        let mut mem = PhysMem::new();
        let base = crate::memory::VRAM.base;
        let h0 = hash_range(&mem, base, 8192);
        assert_eq!(h0, hash_range(&mem, base, 8192));
        mem.write(base + 5000, &[1]).unwrap();
        assert_ne!(h0, hash_range(&mem, base, 8192));
        // Unmapped memory hashes as zeros, without panicking.
        assert_eq!(hash_range(&mem, 0x0000_0000, 16), {
            let mut h = Hash64::new();
            h.bytes(&[0; 16]);
            h.finish()
        });
    }

    #[test]
    fn image_diff_counts_and_finds_first() {
        let a = vec![[0u32; 4]; 6];
        let mut b = a.clone();
        b[4] = [1, 2, 3, 4];
        b[5] = [1, 0, 0, 0];
        let d = image_diff(3, 2, &a, 3, 2, &b).unwrap();
        assert_eq!(d.differing, 2);
        assert_eq!(d.first, Some((1, 1)));
        assert_eq!(d.b, [1, 2, 3, 4]);
        assert!(image_diff(3, 2, &a, 3, 2, &a).is_none());
        assert!(image_diff(3, 2, &a, 2, 3, &b).unwrap().config.is_some());
    }
}
