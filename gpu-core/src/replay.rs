//! Trace replay with time travel (`pica-raster.md` §11.4, §10.6).
//!
//! Input: a CiTrace ([`pica_cmd::citrace::CiTrace`]). Output: the GPU state and physical memory
//! at any point of the trace, the LCD screens per frame, and an index of frames and draws.
//!
//! A [`Replay`] applies the trace's initial state directly to the GPU (not through writes with
//! side effects), then executes stream elements in order: memory loads into [`PhysMem`],
//! register writes to MMIO (which start memory fills, transfers and command lists), frame
//! markers. [`Replay::build_index`] runs the whole trace once, recording frames, draws and
//! keyframes (clones of the GPU and the copy-on-write memory, every [`KEYFRAME_DRAWS`] draws,
//! after draws costing [`KEYFRAME_COST`] in total, and at every frame marker that follows
//! executed work, including positions inside a command list: the command processor is
//! resumable). [`Replay::seek`] restores the nearest keyframe at or before the target and
//! re-executes deterministically up to it.
//!
//! Keyframes live under a memory budget ([`DEFAULT_KEYFRAME_BUDGET`], set with
//! [`Replay::set_keyframe_budget`]). Each keyframe is accounted the bytes it holds uniquely:
//! the memory pages (and 1 MiB chunk tables) whose `Arc` it does not share with the previous
//! keyframe, plus the size of its GPU clone. When the total would exceed the budget, the store
//! drops every other keyframe (keeping the first) and doubles the spacing of the keyframes
//! taken for the rest of the pass, so the total stays under the budget whatever the trace length;
//! seeks stay exact (they re-execute from the nearest earlier keyframe that is left), only longer.
//! The index's own records (a ~370-byte record per draw, up to the draw budget's 2^19 draws,
//! engine events and diagnostics) count against the same budget, so a trace with very many
//! draws keeps fewer keyframes rather than holding both in full.
//!
//! [`lint`] replays a whole trace once more to report what it lacks or does wrong.
//!
//! Positions are counted in executed register writes ("commands"): every PICA register write
//! from a command list and every MMIO write from the stream counts as one.

pub mod diff;
pub mod edit;
pub mod lint;
pub mod reduce;
pub mod resources;
pub mod trim;

use std::sync::Arc;

use pica_cmd::citrace::{CiTrace, CiTraceError, StreamEvent, TraceSource, load_target};
use serde::Serialize;

use crate::budget::WorkBudget;
use crate::command::gpu::{EditHooks, Gpu};
use crate::debug::{
    DiagKind, Diagnostic, DrawDetail, DrawInfo, DrawStats, EngineEvent, Observer, RegWriteEvent,
    StageTimes,
};
use crate::draw::VsEngine;
use crate::engines::lcd::{Eye, LcdColorFill, LcdError, LcdFramebufferConfig, Screen, scan_out};
use crate::memory::PhysMem;
use crate::pixel::fragment::PixelPath;
use crate::pixel::tev::TevSolo;
use crate::pixel::texture::{DecodedImage, RenderMode};
use crate::regs::{EXT_REG_BASE, LCD_REG_BASE};

/// A keyframe is taken after this many draws since the previous one (and at every frame marker).
pub const KEYFRAME_DRAWS: u64 = 16;
/// ... or after this many register writes, whichever comes first.
pub const KEYFRAME_WRITES: u64 = 20_000;
/// ... or once the draws since the previous keyframe cost this much ([`draw_cost`]), so that a
/// seek re-executes a bounded amount of work (about 5 ms of draws on a 2-core desktop at
/// ~7 Mfragments/s) whatever the draws look like. Deterministic: counted, not timed.
pub const KEYFRAME_COST: u64 = 40_000;
/// At most this many keyframes are placed by cost in one trace (each holds the memory pages its
/// draws dirtied, up to a render target's worth), which bounds their memory on long traces;
/// beyond it keyframes are placed by count and frame markers only.
pub const MAX_COST_KEYFRAMES: usize = 256;
/// Default memory budget of the keyframe store: 256 MiB.
pub const DEFAULT_KEYFRAME_BUDGET: u64 = 256 << 20;
/// The spacing of keyframes stops doubling at this factor (a trace would need more than
/// 2^20 budget overruns to reach it; the store then keeps only the first keyframe).
const MAX_KEYFRAME_STRIDE: u64 = 1 << 20;

/// The replay cost of a draw in "fragment units": fragments written, plus a per-triangle and a
/// per-vertex allowance for setup and shading. Used to place keyframes by cost.
pub fn draw_cost(stats: &DrawStats) -> u64 {
    stats.fragments_written + 64 * stats.triangles_rasterized + 16 * stats.vs_invocations
}

/// Errors of the replayer itself (trace problems inside the stream are diagnostics).
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] CiTraceError),
}

/// Where the replay is: counters that identify a point of the trace.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Position {
    /// Register writes executed so far.
    pub writes: u64,
    /// Stream elements fully executed so far (the next element to run).
    pub element: usize,
    /// Frame markers passed so far.
    pub frame: u32,
    /// Draws finished so far.
    pub draws: u64,
}

/// A point to travel to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// Right after the `n`-th register write (1-based: `AfterWrite(0)` is the initial state).
    AfterWrite(u64),
    /// Right after draw `m` (0-based, counted over the whole trace) ended.
    AfterDraw(u64),
    /// When the stream reaches its `n`-th frame marker (0-based), before it is executed.
    Frame(u32),
    /// The end of the stream.
    End,
}

/// One frame of the trace: the stream between two frame markers.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct FrameInfo {
    /// Index of the frame (0-based).
    pub index: u32,
    /// Position at the start of the frame (after the previous marker).
    pub start: Position,
    /// Position when the stream reaches this frame's marker (or the end of the stream).
    pub end: Position,
    /// Indices of the draws in this frame.
    pub draws: std::ops::Range<u64>,
    /// True if the stream ended before a marker closed this frame.
    pub unterminated: bool,
}

/// One draw as recorded by the index pass.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DrawRecord {
    /// Draw information at its start.
    pub info: DrawInfo,
    /// Counters at its end.
    pub stats: DrawStats,
    /// Frame it belongs to.
    pub frame: u32,
    /// Position right before the triggering write (the state the draw started from).
    pub before: Position,
    /// Position right after the draw.
    pub after: Position,
    /// Physical address of the command-list word that triggered it, if any.
    pub trigger_addr: Option<u32>,
}

/// Something notable in the stream besides draws (for timelines).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StreamEventRecord {
    /// Position after the event.
    pub at: Position,
    /// Frame.
    pub frame: u32,
    /// What happened.
    pub event: EngineEvent,
}

/// What [`Replay::build_index`] learned about the whole trace.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TraceIndex {
    /// Frames in order.
    pub frames: Vec<FrameInfo>,
    /// Draws in order.
    pub draws: Vec<DrawRecord>,
    /// Fills, transfers and command-list submissions in order.
    pub engine_events: Vec<StreamEventRecord>,
    /// Diagnostics (at most [`MAX_INDEX_DIAGNOSTICS`]) and how many were dropped.
    pub diagnostics: Vec<(Position, Diagnostic)>,
    /// Diagnostics not kept.
    pub dropped_diagnostics: u64,
    /// Engine events not kept (past [`MAX_INDEX_ENGINE_EVENTS`]).
    pub dropped_engine_events: u64,
    /// Position at the end of the stream.
    pub end: Position,
    /// Keyframes kept at the end of the pass.
    pub keyframes: usize,
    /// Keyframes taken and later dropped to stay under the budget.
    pub keyframes_dropped: usize,
    /// Bytes the kept keyframes hold, as accounted against the budget (pages not shared with
    /// the previous keyframe, chunk tables, GPU clones).
    pub keyframe_bytes: u64,
    /// The budget the pass ran under, in bytes. It covers the keyframes and this index's own
    /// records ([`TraceIndex::record_bytes`]): the more draws, events and diagnostics a trace
    /// has, the fewer keyframes it keeps.
    pub keyframe_budget: u64,
    /// Bytes of this index's records (draws, engine events, diagnostics, by allocated
    /// capacity) at the end of the pass, counted against the keyframe budget.
    pub record_bytes: u64,
    /// Final spacing factor: 1 when no thinning was needed, doubled at every thinning.
    pub keyframe_stride: u64,
}

/// Diagnostics kept by the index pass.
pub const MAX_INDEX_DIAGNOSTICS: usize = 10_000;

/// Engine events (fills, transfers, command-list events) kept by the index pass; the rest
/// are counted. Before this cap, `costs` and `shader-trace` kept 1.7 GB of index records for
/// a 200 KB trace whose lists jump back into themselves until the write budget ends them.
pub const MAX_INDEX_ENGINE_EVENTS: usize = 1 << 20;

#[derive(Clone)]
struct Keyframe {
    pos: Position,
    gpu: Box<Gpu>,
    mem: PhysMem,
    /// Taken exactly where `run_until(AfterDraw(pos.draws - 1))` stops (right after a draw,
    /// inside its command list), so a seek to that draw restores it and executes nothing.
    at_draw_end: bool,
    /// Bytes accounted to this keyframe (see [`Keyframe::unique_bytes`]).
    bytes: u64,
}

impl Keyframe {
    /// Bytes this keyframe holds that `prev` does not share: unshared memory pages and chunk
    /// tables, the GPU clone with its boxed register files and LUTs, and shader memories whose
    /// `Arc` differs from `prev`'s.
    fn unique_bytes(&self, prev: Option<&Keyframe>) -> u64 {
        let mem = self.mem.bytes_not_shared_with(prev.map(|p| &p.mem));
        mem.saturating_add(gpu_clone_bytes(&self.gpu, prev.map(|p| &*p.gpu)))
    }
}

/// Approximate heap + inline size of a GPU clone (what a keyframe's `Box<Gpu>` holds).
fn gpu_clone_bytes(gpu: &Gpu, prev: Option<&Gpu>) -> u64 {
    use std::mem::{size_of, size_of_val};
    let mut n = size_of::<Gpu>()
        + size_of_val(&*gpu.regs)
        + size_of_val(&*gpu.ext_regs)
        + size_of_val(&*gpu.lcd_regs)
        + size_of_val(&*gpu.luts.lighting)
        + gpu.immediate_attrs.capacity() * size_of::<[f32; 4]>()
        + gpu.jumps_taken.capacity() * size_of::<crate::command::gpu::JumpState>();
    let shared =
        |a: &Arc<Vec<u32>>, b: Option<&Arc<Vec<u32>>>| b.is_some_and(|b| Arc::ptr_eq(a, b));
    for (unit, prev_unit) in [
        (&gpu.vs, prev.map(|p| &p.vs)),
        (&gpu.gs, prev.map(|p| &p.gs)),
    ] {
        if !shared(&unit.code, prev_unit.map(|u| &u.code)) {
            n += unit.code.capacity() * 4;
        }
        if !shared(&unit.opdescs, prev_unit.map(|u| &u.opdescs)) {
            n += unit.opdescs.capacity() * 4;
        }
    }
    n as u64
}

/// Keyframes under a memory budget (see the module docs).
struct KeyframeStore {
    keys: Vec<Keyframe>,
    budget: u64,
    /// Sum of the kept keyframes' `bytes`.
    total: u64,
    /// Bytes of the index records being built, counted against the same budget (updated by
    /// the index pass before every push).
    reserved: u64,
    dropped: usize,
    /// Spacing factor for the keyframes taken next (a power of two).
    stride: u64,
}

impl KeyframeStore {
    fn new(budget: u64) -> Self {
        Self {
            keys: Vec::new(),
            budget,
            total: 0,
            reserved: 0,
            dropped: 0,
            stride: 1,
        }
    }

    fn clear(&mut self) {
        self.keys.clear();
        self.total = 0;
        self.reserved = 0;
        self.dropped = 0;
        self.stride = 1;
    }

    /// Adds a keyframe, thinning the store while it is over budget.
    fn push(&mut self, mut key: Keyframe) {
        key.bytes = key.unique_bytes(self.keys.last());
        self.total = self.total.saturating_add(key.bytes);
        self.keys.push(key);
        self.fit();
    }

    /// Thins the store while the keyframes and the reserved bytes are over the budget (one
    /// keyframe, the start, always stays).
    fn fit(&mut self) {
        while self.total.saturating_add(self.reserved) > self.budget && self.keys.len() > 1 {
            self.thin();
        }
    }

    /// Keeps the keyframes (a prefix) for which `valid` holds, re-accounting nothing: the bytes
    /// of a kept keyframe only depend on its predecessor, which is kept too.
    fn keep_while(&mut self, valid: impl Fn(&Keyframe) -> bool) {
        let n = self.keys.iter().take_while(|k| valid(k)).count();
        for k in self.keys.drain(n..) {
            self.total = self.total.saturating_sub(k.bytes);
        }
    }

    /// Drops every other keyframe (keeping the first), doubles the spacing and re-accounts the
    /// keyframes left (a page once shared with a dropped keyframe may now be unique).
    fn thin(&mut self) {
        let before = self.keys.len();
        let mut i = 0usize;
        self.keys.retain(|_| {
            let keep = i.is_multiple_of(2);
            i += 1;
            keep
        });
        self.dropped += before - self.keys.len();
        self.stride = (self.stride * 2).min(MAX_KEYFRAME_STRIDE);
        self.total = 0;
        for k in 0..self.keys.len() {
            let (done, rest) = self.keys.split_at_mut(k);
            let key = &mut rest[0];
            key.bytes = key.unique_bytes(done.last());
            self.total = self.total.saturating_add(key.bytes);
        }
    }
}

/// A trace being replayed.
pub struct Replay<S: TraceSource> {
    trace: CiTrace<S>,
    initial: Arc<(Gpu, PhysMem)>,
    gpu: Gpu,
    mem: PhysMem,
    pos: Position,
    keyframes: KeyframeStore,
    blob: Vec<u8>,
    /// The combiner solo applied to the draws executed from now on ([`Replay::set_tev_solo`]).
    solo: Option<TevSolo>,
    /// True when the current state may hold soloed draws: it is not a state of the trace, so
    /// the next seek restores a keyframe instead of continuing from it.
    diverged: bool,
    /// Pixel-history probe, re-applied to the GPU state after every restore.
    probe: Option<crate::debug::PixelProbe>,
    /// The edit list applied during replay ([`Replay::set_edits`]) and its compiled hooks.
    edits: edit::EditList,
    hooks: Option<Arc<EditHooks>>,
}

/// Counts positions and forwards events; can request a stop at a target.
struct Driver<'a, O: Observer> {
    inner: &'a mut O,
    pos: &'a mut Position,
    stop: Option<Target>,
    reached: bool,
}

impl<O: Observer> Driver<'_, O> {
    fn check(&mut self) {
        self.reached = match self.stop {
            Some(Target::AfterWrite(n)) => self.pos.writes >= n,
            Some(Target::AfterDraw(m)) => self.pos.draws > m,
            _ => false,
        };
    }
}

impl<O: Observer> Observer for Driver<'_, O> {
    fn wants_draw_detail(&self) -> bool {
        self.inner.wants_draw_detail()
    }
    fn wants_costs(&self) -> bool {
        self.inner.wants_costs()
    }
    /// A stop after a write or a draw is decided by draw ends as they come, so those runs
    /// end every draw before the next begins.
    fn allows_deferred_pixels(&self) -> bool {
        !matches!(
            self.stop,
            Some(Target::AfterWrite(_) | Target::AfterDraw(_))
        ) && self.inner.allows_deferred_pixels()
    }
    fn draw_detail_limits(&self) -> crate::debug::DetailLimits {
        self.inner.draw_detail_limits()
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.pos.writes += 1;
        self.inner.reg_write(ev);
        self.check();
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.inner.draw_begin(info);
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, detail: Option<DrawDetail>) {
        self.pos.draws += 1;
        self.inner.draw_end(info, stats, detail);
        self.check();
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        self.inner.diagnostic(diag);
    }
    fn engine(&mut self, ev: &EngineEvent) {
        self.inner.engine(ev);
    }
    fn wants_stage_times(&self) -> bool {
        self.inner.wants_stage_times()
    }
    fn stage_times(&mut self, times: &StageTimes) {
        self.inner.stage_times(times);
    }
    fn fragment(&mut self, rec: &crate::debug::FragmentRecord) {
        self.inner.fragment(rec);
    }
    fn stop_requested(&self) -> bool {
        self.reached || self.inner.stop_requested()
    }
    fn take_debug_buffers(&mut self) -> Option<Box<crate::debug::DebugBuffers>> {
        self.inner.take_debug_buffers()
    }
    fn return_debug_buffers(&mut self, buffers: Box<crate::debug::DebugBuffers>) {
        self.inner.return_debug_buffers(buffers);
    }
}

impl<S: TraceSource> Replay<S> {
    /// Prepares a replay: validates nothing beyond what the reader did, applies the initial
    /// state (`pica-raster.md` §11.4 step 3).
    pub fn new(trace: CiTrace<S>) -> Self {
        let (mut gpu, mem) = initial_state(&trace);
        // The default trace limits grow with the input's size (crate::budget).
        gpu.set_work_budget(WorkBudget::default().for_input_size(trace.file_len()));
        let initial = Arc::new((gpu.clone(), mem.clone()));
        Self {
            trace,
            initial,
            gpu,
            mem,
            pos: Position::default(),
            keyframes: KeyframeStore::new(DEFAULT_KEYFRAME_BUDGET),
            blob: Vec::new(),
            solo: None,
            diverged: false,
            probe: None,
            edits: edit::EditList::default(),
            hooks: None,
        }
    }

    /// Applies `edits` from now on ([`edit`]): keyframes taken before the first position where
    /// the new list acts differently from the previous one are kept, later ones are dropped (a
    /// seek past the edit re-executes from the last keyframe before it), and the current state
    /// goes back to that keyframe when it lies after the edit. A list that does not compile (a
    /// shader that does not assemble, a bad register) is refused and nothing changes.
    pub fn set_edits(&mut self, edits: edit::EditList) -> Result<(), edit::EditError> {
        let hooks = edits.compile()?;
        let hooks =
            (!hooks.overrides.is_empty() || !hooks.before_draw.is_empty()).then(|| Arc::new(hooks));
        self.edits = edits;
        self.set_edit_hooks(hooks);
        Ok(())
    }

    /// The edit list in effect.
    pub fn edits(&self) -> &edit::EditList {
        &self.edits
    }

    /// Installs compiled hooks (see [`Replay::set_edits`]).
    pub(crate) fn set_edit_hooks(&mut self, hooks: Option<Arc<EditHooks>>) {
        let empty = EditHooks::default();
        let old = self.hooks.as_deref().unwrap_or(&empty);
        let new = hooks.as_deref().unwrap_or(&empty);
        let (first_write, first_draw) = edit::first_difference(old, new);
        self.hooks = hooks;
        let valid = |p: &Position| p.writes < first_write && p.draws <= first_draw;
        self.keyframes.keep_while(|k| valid(&k.pos));
        if valid(&self.pos) {
            self.gpu.edit_hooks = self.hooks.clone();
        } else {
            match self.keyframes.keys.last().cloned() {
                Some(k) => self.restore(k),
                None => self.rewind(),
            }
        }
    }

    /// Restores a keyframe as the current state (with the current edit hooks).
    fn restore(&mut self, k: Keyframe) {
        self.install(*k.gpu);
        self.mem = k.mem;
        self.pos = k.pos;
        self.gpu.edit_hooks = self.hooks.clone();
        self.gpu.pipeline.pixel_probe = self.probe;
        self.gpu.pipeline.tev_solo = self.solo;
        self.diverged = self.solo.is_some();
    }

    /// Makes `gpu` the current state but keeps the current vertex-shader engine's compiled
    /// programs and lane buffers: they are pure caches (the engine's registers and options
    /// come from `gpu`), and a clone of the state (a keyframe, the initial state) starts
    /// without them, so every seek would otherwise compile each program of the trace again
    /// (the whole 4096-word code memory, per program).
    fn install(&mut self, mut gpu: Gpu) {
        let warm = &mut self.gpu.pipeline.vs_unit;
        let unit = &mut gpu.pipeline.vs_unit;
        std::mem::swap(&mut warm.state, &mut unit.state);
        warm.config = unit.config;
        std::mem::swap(warm, unit);
        self.gpu = gpu;
    }

    /// Ends the replay and gives its trace back.
    pub fn into_trace(self) -> CiTrace<S> {
        self.trace
    }

    /// The trace.
    pub fn trace(&self) -> &CiTrace<S> {
        &self.trace
    }

    /// The current GPU state.
    pub fn gpu(&self) -> &Gpu {
        &self.gpu
    }

    /// Selects the implementation of the per-fragment operations for this replay, from its
    /// initial state on (call it before running; keyframes taken earlier keep their setting).
    /// Both paths give bit-identical results: [`PixelPath::Reference`] is the test oracle.
    pub fn set_pixel_path(&mut self, path: PixelPath) {
        self.gpu.pipeline.pixel_path = path;
        Arc::make_mut(&mut self.initial).0.pipeline.pixel_path = path;
    }

    /// Selects the engine that shades vertex-shader batches, from the initial state on (call it
    /// before running). Both engines are bit-exact; the reference interpreter is the oracle.
    pub fn set_vs_engine(&mut self, engine: VsEngine) {
        self.gpu.pipeline.vs_engine = engine;
        Arc::make_mut(&mut self.initial).0.pipeline.vs_engine = engine;
    }

    /// Selects how texture units sample ([`RenderMode::Hardware`] by default), from the initial
    /// state on (call it before running).
    pub fn set_render_mode(&mut self, mode: RenderMode) {
        self.gpu.pipeline.render_mode = mode;
        Arc::make_mut(&mut self.initial).0.pipeline.render_mode = mode;
    }

    /// Sets (or clears) a combiner solo: every draw executed from now on writes stage
    /// `solo.stage`'s output instead of its real colour (a debugging view, see [`TevSolo`]).
    ///
    /// States reached with a solo are not states of the trace: after a solo was set, the next
    /// [`Replay::seek`] restores a keyframe (or the start) rather than continuing from the
    /// current state, and keyframes are never taken from them ([`Replay::build_index`] runs
    /// without the solo). To see draw `d` soloed, seek to just before it, set the solo, run to
    /// after it, read the images, clear the solo.
    pub fn set_tev_solo(&mut self, solo: Option<TevSolo>) {
        self.solo = solo;
        self.gpu.pipeline.tev_solo = solo;
        self.diverged |= solo.is_some();
    }

    /// The combiner solo in use.
    pub fn tev_solo(&self) -> Option<TevSolo> {
        self.solo
    }

    /// Sets (or clears) the pixel-history probe: from now on, draws into the probed buffer
    /// report the fragments at the probe through [`Observer::fragment`] (see
    /// [`crate::debug::fragment`]). Survives [`Replay::seek`] and [`Replay::rewind`]; keyframes
    /// are unaffected. Off by default (no cost).
    pub fn set_pixel_probe(&mut self, probe: Option<crate::debug::PixelProbe>) {
        self.probe = probe;
        self.gpu.pipeline.pixel_probe = probe;
    }

    /// The pixel-history probe in use.
    pub fn pixel_probe(&self) -> Option<crate::debug::PixelProbe> {
        self.probe
    }

    /// Sets the number of pixel-pipeline workers for this replay, from its initial state on
    /// (call it before running; keyframes taken earlier keep their setting). Every count gives
    /// bit-identical results; 1 (the default) draws on the calling thread only.
    pub fn set_threads(&mut self, threads: usize) {
        let threads = threads.max(1);
        self.gpu.pipeline.threads = threads;
        Arc::make_mut(&mut self.initial).0.pipeline.threads = threads;
    }

    /// Sets the work budgets per submission, frame and trace ([`crate::budget`]), from the
    /// initial state on (call it before running or indexing; an index built earlier keeps the
    /// budgets it was built with until it is built again).
    /// Trace-level limits left at their defaults grow with the input's size
    /// ([`WorkBudget::for_input_size`]).
    pub fn set_work_budget(&mut self, budget: WorkBudget) {
        let budget = budget.for_input_size(self.trace.file_len());
        self.gpu.set_work_budget(budget);
        Arc::make_mut(&mut self.initial).0.set_work_budget(budget);
    }

    /// The work budgets in force.
    pub fn work_budget(&self) -> WorkBudget {
        self.initial.0.work.budget
    }

    /// Sets the memory budget of the keyframe store in bytes (default
    /// [`DEFAULT_KEYFRAME_BUDGET`]); takes effect at the next [`Replay::build_index`].
    pub fn set_keyframe_budget(&mut self, bytes: u64) {
        self.keyframes.budget = bytes;
    }

    /// Number of keyframes held now.
    pub fn keyframe_count(&self) -> usize {
        self.keyframes.keys.len()
    }

    /// The memory budget of the keyframe store in bytes.
    pub fn keyframe_budget(&self) -> u64 {
        self.keyframes.budget
    }

    /// The current physical memory.
    pub fn mem(&self) -> &PhysMem {
        &self.mem
    }

    /// The current position.
    pub fn position(&self) -> Position {
        self.pos
    }

    /// True when every stream element has been executed.
    pub fn at_end(&self) -> bool {
        self.pos.element >= self.trace.elements().len() && !self.gpu.list_in_progress()
    }

    /// Restarts from the initial state.
    pub fn rewind(&mut self) {
        self.install(self.initial.0.clone());
        self.gpu.pipeline.pixel_probe = self.probe;
        self.mem = self.initial.1.clone();
        self.pos = Position::default();
        self.gpu.pipeline.tev_solo = self.solo;
        self.diverged = self.solo.is_some();
        self.gpu.edit_hooks = self.hooks.clone();
    }

    /// Executes until `target` is reached (or the stream ends), reporting to `obs`. Returns
    /// true if the target was reached exactly.
    pub fn run_until<O: Observer>(&mut self, target: Target, obs: &mut O) -> bool {
        loop {
            if self.reached(target) {
                return true;
            }
            if self.at_end() {
                return matches!(target, Target::End);
            }
            self.step(Some(target), obs);
        }
    }

    fn reached(&self, target: Target) -> bool {
        match target {
            Target::AfterWrite(n) => self.pos.writes >= n,
            Target::AfterDraw(m) => self.pos.draws > m,
            Target::Frame(n) => {
                self.pos.frame == n
                    && !self.gpu.list_in_progress()
                    && matches!(
                        self.trace.event(self.pos.element),
                        Some(StreamEvent::FrameMarker)
                    )
                    || self.pos.frame > n
            }
            Target::End => self.at_end(),
        }
    }

    /// Executes exactly one stream element (or finishes an interrupted command list).
    pub fn step_element<O: Observer>(&mut self, obs: &mut O) {
        self.step(None, obs);
    }

    /// Executes one stream element, or continues an interrupted command list, stopping early if
    /// `stop` is reached inside a command list.
    fn step<O: Observer>(&mut self, stop: Option<Target>, obs: &mut O) {
        let mut pos = self.pos;
        let mut driver = Driver {
            inner: obs,
            pos: &mut pos,
            stop,
            reached: false,
        };
        if self.gpu.list_in_progress() {
            let finished = self.gpu.resume_command_list(&mut self.mem, &mut driver);
            if finished {
                crate::command::external::command_list_finished(&mut self.gpu.ext_regs[..]);
                driver.pos.element += 1;
            }
            self.pos = pos;
            return;
        }
        let element = driver.pos.element;
        match self.trace.event(element) {
            Some(StreamEvent::FrameMarker) => {
                self.gpu.begin_frame();
                driver.pos.frame += 1;
                driver.pos.element += 1;
            }
            Some(StreamEvent::MemoryLoad(load)) => {
                match self.trace.read_blob_into(element, &mut self.blob) {
                    Ok(()) => {
                        let pa = load_target(load.physical_address);
                        if self.mem.write(pa, &self.blob).is_err() {
                            driver.diagnostic(&Diagnostic {
                                kind: DiagKind::UnmappedWrite { addr: pa, len: u64::from(load.size) },
                                draw: None,
                                detail: format!(
                                    "stream element {element}: memory load of {} bytes to PA 0x{pa:08X} is outside mapped memory",
                                    load.size
                                ),
                            });
                        }
                    }
                    Err(e) => driver.diagnostic(&Diagnostic {
                        kind: DiagKind::Other,
                        draw: None,
                        detail: format!("stream element {element}: {e}"),
                    }),
                }
                driver.pos.element += 1;
            }
            Some(StreamEvent::RegisterWrite(w)) => {
                for (pa, mask, value) in pica_cmd::citrace::write_words(&w) {
                    // 8/16-bit writes merge into the stored word.
                    let old = self.gpu.external_reg(pa).unwrap_or(0);
                    let merged = (old & !mask) | (value & mask);
                    self.gpu
                        .write_external(&mut self.mem, pa, merged, true, &mut driver);
                }
                if !self.gpu.list_in_progress() {
                    driver.pos.element += 1;
                }
            }
            Some(StreamEvent::Unknown { kind }) => {
                driver.diagnostic(&Diagnostic {
                    kind: DiagKind::Other,
                    draw: None,
                    detail: format!(
                        "stream element {element} has unknown kind 0x{kind:X}; skipped"
                    ),
                });
                driver.pos.element += 1;
            }
            None => {}
        }
        self.pos = pos;
    }

    /// Runs the whole trace once from the start, recording frames, draws, engine events,
    /// diagnostics and keyframes. Leaves the replay at the end of the stream.
    pub fn build_index(&mut self) -> TraceIndex {
        // ok: a callback that never cancels always yields an index.
        self.build_index_with(&mut |_| true).unwrap_or_default()
    }

    /// [`Replay::build_index`] with progress and cancellation (for the viewer's worker thread):
    /// `keep_going` is called with the position after every executed stream element (or
    /// command-list slice); when it returns false the pass stops, the keyframes taken so far are
    /// dropped and `None` is returned.
    pub fn build_index_with(
        &mut self,
        keep_going: &mut dyn FnMut(Position) -> bool,
    ) -> Option<TraceIndex> {
        self.index_pass(true, keep_going)
    }

    /// Streaming index: the same frames, draws, engine events and diagnostics as
    /// [`Replay::build_index_with`], but no keyframe is kept (the store is emptied), so memory
    /// does not grow with the trace's length beyond the records themselves. Seeks afterwards
    /// replay from the start. For one-pass tools (`trace info`, `trace check`).
    pub fn build_index_streaming(
        &mut self,
        keep_going: &mut dyn FnMut(Position) -> bool,
    ) -> Option<TraceIndex> {
        self.index_pass(false, keep_going)
    }

    fn index_pass(
        &mut self,
        keep: bool,
        keep_going: &mut dyn FnMut(Position) -> bool,
    ) -> Option<TraceIndex> {
        // Keyframes must hold states of the trace: index without the solo, then restore it.
        let solo = self.solo.take();
        let index = self.index_pass_inner(keep, keep_going);
        self.set_tev_solo(solo);
        index
    }

    fn index_pass_inner(
        &mut self,
        keep: bool,
        keep_going: &mut dyn FnMut(Position) -> bool,
    ) -> Option<TraceIndex> {
        self.rewind();
        self.keyframes.clear();
        let mut rec = IndexRecorder::default();
        if keep {
            self.keyframes.push(self.keyframe());
        }
        let mut frame_start = self.pos;
        let mut last_key = self.pos;
        let mut cost_keys = 0usize;
        // Something other than frame markers ran since the last keyframe.
        let mut work_since_key = false;
        while !self.at_end() {
            let before = self.pos;
            rec.pos = before;
            rec.writes_seen = 0;
            rec.draws_seen = 0;
            if keep {
                // Full record vectors grow here, before the step that may need it, and the
                // store first makes room for the grown capacity: growing inside the step would
                // hold the doubled records beside a full store until the next fit.
                let draw_limit =
                    usize::try_from(self.gpu.work.budget.trace.draws).unwrap_or(usize::MAX);
                let draws = growth_ahead(&rec.index.draws, draw_limit);
                let events = growth_ahead(&rec.index.engine_events, MAX_INDEX_ENGINE_EVENTS);
                if draws + events > 0 {
                    let extra = draws * std::mem::size_of::<DrawRecord>()
                        + events * std::mem::size_of::<StreamEventRecord>();
                    self.keyframes.reserved = rec.record_bytes().saturating_add(extra as u64);
                    self.keyframes.fit();
                    rec.index.draws.reserve_exact(draws);
                    rec.index.engine_events.reserve_exact(events);
                }
            }
            // Stop inside command lists after every draw so keyframes can be taken there.
            let stop = Target::AfterDraw(before.draws);
            let mut wrapped = IndexObserver { rec: &mut rec };
            self.step(Some(stop), &mut wrapped);
            let after = self.pos;
            if keep {
                // The records grow by doubling their capacity: make room for them at once, not
                // at the next keyframe, so the store and the records stay within the budget
                // (beyond it by at most the one keyframe being added).
                let reserved = rec.record_bytes();
                if reserved != self.keyframes.reserved {
                    self.keyframes.reserved = reserved;
                    self.keyframes.fit();
                }
            }
            let stride = self.keyframes.stride;
            if after.frame == before.frame && after != before {
                work_since_key = true;
            }
            if after.frame > before.frame {
                let first = rec.frames_draw_start;
                rec.index.frames.push(FrameInfo {
                    index: before.frame,
                    start: frame_start,
                    end: before,
                    draws: first..before.draws,
                    unterminated: false,
                });
                rec.frames_draw_start = before.draws;
                frame_start = after;
                // Empty frames (nothing executed since the last keyframe) get no keyframe;
                // after thinning, only every `stride`-th frame marker does.
                if keep && work_since_key && u64::from(after.frame - last_key.frame) >= stride {
                    self.keyframes.reserved = rec.record_bytes();
                    self.keyframes.push(self.keyframe());
                    last_key = after;
                    rec.cost_since_key = 0;
                    work_since_key = false;
                }
            } else if !keep {
                // Streaming: no keyframes.
            } else if after.draws - last_key.draws >= KEYFRAME_DRAWS.saturating_mul(stride)
                || after.writes - last_key.writes >= KEYFRAME_WRITES.saturating_mul(stride)
                || (rec.cost_since_key >= KEYFRAME_COST.saturating_mul(stride)
                    && cost_keys < MAX_COST_KEYFRAMES)
            {
                if after.draws - last_key.draws < KEYFRAME_DRAWS.saturating_mul(stride)
                    && after.writes - last_key.writes < KEYFRAME_WRITES.saturating_mul(stride)
                {
                    cost_keys += 1;
                }
                let mut key = self.keyframe();
                // The step stopped at its target, right after draw `before.draws`.
                key.at_draw_end = after.draws == before.draws + 1;
                self.keyframes.reserved = rec.record_bytes();
                self.keyframes.push(key);
                last_key = after;
                rec.cost_since_key = 0;
                work_since_key = false;
            }
            if !keep_going(after) {
                self.keyframes.clear();
                return None;
            }
        }
        let end = self.pos;
        if end.writes > frame_start.writes
            || rec.index.frames.is_empty()
            || end.draws > rec.frames_draw_start
        {
            rec.index.frames.push(FrameInfo {
                index: end.frame,
                start: frame_start,
                end,
                draws: rec.frames_draw_start..end.draws,
                unterminated: true,
            });
        }
        rec.index.end = end;
        // The records grew since the last keyframe was taken.
        self.keyframes.reserved = rec.record_bytes();
        self.keyframes.fit();
        rec.index.keyframes = self.keyframes.keys.len();
        rec.index.keyframes_dropped = self.keyframes.dropped;
        rec.index.keyframe_bytes = self.keyframes.total;
        rec.index.keyframe_budget = self.keyframes.budget;
        rec.index.record_bytes = rec.record_bytes();
        rec.index.keyframe_stride = self.keyframes.stride;
        Some(rec.index)
    }

    fn keyframe(&self) -> Keyframe {
        Keyframe {
            pos: self.pos,
            gpu: Box::new(self.gpu.clone()),
            mem: self.mem.clone(),
            at_draw_end: false,
            bytes: 0,
        }
    }

    /// Travels to `target`: restores the nearest keyframe at or before it (or the start) and
    /// re-executes up to it. Deterministic: the same target always gives the same state.
    /// `obs` sees everything executed after the restored keyframe.
    pub fn seek<O: Observer>(&mut self, target: Target, obs: &mut O) -> bool {
        let key = self
            .keyframes
            .keys
            .iter()
            .rev()
            .find(|k| match target {
                Target::AfterWrite(n) => k.pos.writes <= n,
                Target::AfterDraw(m) => {
                    k.pos.draws <= m || (k.at_draw_end && k.pos.draws == m.saturating_add(1))
                }
                Target::Frame(f) => k.pos.frame <= f,
                Target::End => true,
            })
            .cloned();
        let current_ok = match target {
            Target::AfterWrite(n) => self.pos.writes <= n,
            Target::AfterDraw(m) => self.pos.draws <= m,
            Target::Frame(f) => self.pos.frame <= f,
            Target::End => true,
        };
        let key_pos = key.as_ref().map(|k| k.pos);
        // Keep going from the current state when it is closer than the keyframe (and is a
        // state of the trace).
        if self.diverged || !(current_ok && key_pos.is_none_or(|kp| kp <= self.pos)) {
            match key {
                Some(k) => self.restore(k),
                None => self.rewind(),
            }
        }
        self.run_until(target, obs)
    }

    /// Records the primitive-ID and overdraw buffers ([`crate::debug::DebugBuffers`]) of the
    /// draws between `from` and `to`: travels to `from` (normally the start of a frame), then
    /// runs to `to` with the recording on, reporting to `obs`. Draws run on the reference pixel
    /// path while recording (bit-identical results); replay without it is unaffected.
    pub fn record_debug_buffers<O: Observer>(
        &mut self,
        from: Target,
        to: Target,
        obs: &mut O,
    ) -> crate::debug::DebugBuffers {
        self.seek(from, &mut ());
        let mut rec = crate::debug::DebugBufferRecorder::new(obs);
        self.run_until(to, &mut rec);
        rec.finish()
    }

    /// The image a screen shows now, upright as a person sees it.
    pub fn screen(&self, screen: Screen) -> Result<DecodedImage, LcdError> {
        screen_image(&self.gpu, &self.mem, screen)
    }
}

/// The image an LCD shows for a GPU state, upright as a person sees it (`pica-raster.md` §10.6).
pub fn screen_image(gpu: &Gpu, mem: &PhysMem, screen: Screen) -> Result<DecodedImage, LcdError> {
    let cfg = LcdFramebufferConfig::from_ext_regs(screen, &gpu.ext_regs[..], EXT_REG_BASE);
    let fill = LcdColorFill::from_lcd_regs(screen, &gpu.lcd_regs[..], LCD_REG_BASE);
    scan_out(mem, &cfg, Eye::Left, fill)
}

/// How many elements a full `v` grows by before its next push: its capacity (doubling, at
/// least 64), but not past `limit` elements in all (none once `limit` is reached).
fn growth_ahead<T>(v: &Vec<T>, limit: usize) -> usize {
    if v.len() < v.capacity() {
        return 0;
    }
    v.capacity().max(64).min(limit.saturating_sub(v.len()))
}

#[derive(Default)]
struct IndexRecorder {
    index: TraceIndex,
    pos: Position,
    frames_draw_start: u64,
    open: Option<(DrawInfo, Position, Option<u32>)>,
    last_write_addr: Option<u32>,
    writes_seen: u64,
    draws_seen: u64,
    /// [`draw_cost`] of the draws since the last keyframe.
    cost_since_key: u64,
    /// Bytes of the kept diagnostics' texts.
    diagnostic_text_bytes: u64,
}

impl IndexRecorder {
    /// Bytes the records hold (vectors by capacity, diagnostic texts), as counted against the
    /// keyframe budget.
    fn record_bytes(&self) -> u64 {
        use std::mem::size_of;
        let i = &self.index;
        let n = i.frames.capacity() * size_of::<FrameInfo>()
            + i.draws.capacity() * size_of::<DrawRecord>()
            + i.engine_events.capacity() * size_of::<StreamEventRecord>()
            + i.diagnostics.capacity() * size_of::<(Position, Diagnostic)>();
        (n as u64).saturating_add(self.diagnostic_text_bytes)
    }
}

struct IndexObserver<'a> {
    rec: &'a mut IndexRecorder,
}

impl IndexObserver<'_> {
    fn pos(&self) -> Position {
        let r = &self.rec;
        Position {
            writes: r.pos.writes + r.writes_seen,
            draws: r.pos.draws + r.draws_seen,
            ..r.pos
        }
    }
}

impl Observer for IndexObserver<'_> {
    /// The index's draw records carry the costs (the viewer's cost table and `costs` read
    /// them from there).
    fn wants_costs(&self) -> bool {
        true
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.rec.writes_seen += 1;
        self.rec.last_write_addr = ev.source_addr;
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        let mut before = self.pos();
        before.writes = before.writes.saturating_sub(1);
        self.rec.open = Some((*info, before, self.rec.last_write_addr));
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, _detail: Option<DrawDetail>) {
        self.rec.draws_seen += 1;
        self.rec.cost_since_key += draw_cost(stats);
        let after = self.pos();
        let (info0, before, trigger_addr) = self.rec.open.take().unwrap_or((*info, after, None));
        self.rec.index.draws.push(DrawRecord {
            info: DrawInfo {
                count: info.count.max(info0.count),
                ..info0
            },
            stats: *stats,
            frame: after.frame,
            before,
            after,
            trigger_addr,
        });
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        let pos = self.pos();
        let idx = &mut self.rec.index;
        if idx.diagnostics.len() < MAX_INDEX_DIAGNOSTICS {
            self.rec.diagnostic_text_bytes += diag.detail.capacity() as u64;
            idx.diagnostics.push((pos, diag.clone()));
        } else {
            idx.dropped_diagnostics += 1;
        }
    }
    fn engine(&mut self, ev: &EngineEvent) {
        let at = self.pos();
        let idx = &mut self.rec.index;
        if idx.engine_events.len() >= MAX_INDEX_ENGINE_EVENTS {
            idx.dropped_engine_events += 1;
            return;
        }
        idx.engine_events.push(StreamEventRecord {
            at,
            frame: at.frame,
            event: ev.clone(),
        });
    }
}

/// The GPU and memory a trace starts from: the initial-state sections applied directly
/// (`pica-raster.md` §11.2-§11.4). Uninitialised w words of default attributes and float
/// uniforms ([C]'s recorder never writes them) are replaced by 1.0 for attributes and 0.0 for
/// uniforms.
// UNVERIFIED: the true w values are lost in every Citra trace; 1.0 is the natural default for a
// homogeneous attribute, 0.0 what a zeroed uniform file holds.
pub fn initial_state<S: TraceSource>(trace: &CiTrace<S>) -> (Gpu, PhysMem) {
    use pica_cmd::citrace::Section;
    let init = trace.initial_state();
    let mut gpu = Gpu::new();
    for (dst, src) in gpu
        .ext_regs
        .iter_mut()
        .zip(init.section(Section::GpuRegisters))
    {
        *dst = *src;
    }
    for (dst, src) in gpu
        .lcd_regs
        .iter_mut()
        .zip(init.section(Section::LcdRegisters))
    {
        *dst = *src;
    }
    for (dst, src) in gpu
        .regs
        .iter_mut()
        .zip(init.section(Section::PicaRegisters))
    {
        *dst = *src;
    }
    let f24 = |w: u32| shader_unit::float::F24::from_bits(w & 0xFF_FFFF).to_f32();
    for (i, attr) in gpu.fixed_attribs.iter_mut().enumerate() {
        if let Some(w) = init.default_attribute(i) {
            *attr = [f24(w[0]), f24(w[1]), f24(w[2]), 1.0];
        }
    }
    {
        let code = std::sync::Arc::make_mut(&mut gpu.vs.code);
        for (dst, src) in code.iter_mut().zip(init.section(Section::VsProgramBinary)) {
            *dst = *src;
        }
        let ops = std::sync::Arc::make_mut(&mut gpu.vs.opdescs);
        for (dst, src) in ops.iter_mut().zip(init.section(Section::VsSwizzleData)) {
            *dst = *src;
        }
        gpu.vs.program_generation += 1;
    }
    for (i, u) in gpu.vs.float_uniforms.iter_mut().enumerate() {
        if let Some(w) = init.vs_float_uniform(i) {
            *u = [f24(w[0]), f24(w[1]), f24(w[2]), 0.0];
        }
    }
    // Derived state that Citra only updates on writes: the upload cursors and the topology.
    let regs = gpu.regs.clone();
    gpu.pipeline.reset_assembly(regs[0x25E]);
    gpu.vs.code_index = regs[0x2CB] & 0xFFF;
    gpu.vs.opdesc_index = regs[0x2D5] & 0xFFF;
    gpu.vs.float_index = regs[0x2C0] & 0xFF;
    gpu.vs.float_mode_f32 = regs[0x2C0] >> 31 != 0;
    // The GS unit's memories are not captured (the GS sections are always empty): with com
    // mode sharing, they mirror the VS's.
    if regs[0x244] & 1 == 0 {
        gpu.gs.code = gpu.vs.code.clone();
        gpu.gs.opdescs = gpu.vs.opdescs.clone();
        gpu.gs.program_generation += 1;
    }
    (gpu, PhysMem::new())
}
