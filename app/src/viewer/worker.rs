//! The replay worker: a thread that owns the [`Replay`] and answers the UI's [`Request`]s.
//!
//! Stage: viewer plumbing. Input: a parsed trace ([`CiTrace`]) and requests over a channel.
//! Output: [`Response`]s over a channel, each followed by a call of the waker (the UI's
//! `request_repaint`). Nothing here touches egui.
//!
//! Life of a worker:
//! 1. **Index** the trace (`Replay::build_index_with`) with progress; the UI can cancel.
//! 2. **Serve** requests. Interactive ones (state, images, pixels, command pages, draw detail,
//!    shader traces, search) are coalesced per batch (only the newest state/pixel/draw request
//!    survives, images only for the newest position) and answered first.
//! 3. In between, a **background pass** replays the whole trace once more, draw by draw, with a
//!    [`ProvenanceRecorder`] (which command set each register and uniform) and takes a
//!    thumbnail of the colour buffer after each of the first [`PREFETCH_THUMBS`] draws. When an
//!    interactive request moved the replay, the pass seeks back to where it stopped (a
//!    deterministic seek lands on the identical state). Thumbnails of later draws are made on
//!    request.
//!
//! The worker stops when the UI drops its [`WorkerHandle`] (the channel closes); long loops
//! check the shared cancel flag.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::time::{Duration, Instant};

use gpu_core::budget::WorkBudget;
use gpu_core::debug::{EventLog, GpuEvent, Observer, RegWriteEvent};
use gpu_core::gpu::{Gpu, UnitKind};
use gpu_core::replay::{DEFAULT_KEYFRAME_BUDGET, Position, Replay, Target, TraceIndex};
use gpu_core::shading::{ShaderUnit, UnitSetup};
use gpu_core::tev::TevSolo;
use gpu_core::vertex_loader::LoaderConfig;
use pica_cmd::citrace::{CiTrace, TraceSource};
use shader_unit::decode::Program;
use shader_unit::interp::Uniforms;

use super::images;
use super::listing::ShaderListing;
use super::ports::{PortEffect, PortTracker};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::raster::{RasterConfig, ScissorMode};
use gpu_core::viewport::Viewport;

use super::protocol::{
    CommandPage, DebugView, DrawInspection, EditImages, GsDebugContext, ImageData, ImageSource,
    MAX_VERTEX_IDS, Progress, Request, Response, SoloImages, StateSnapshot, Thumb, UnitSnapshot,
    VsContext,
};
use super::provenance::ProvenanceRecorder;
use super::shader_debug;
use gpu_core::replay::resources::{AddrRange, Timeline};

/// Most events a "who touched this?" answer lists (the rest are counted).
pub const MAX_TIMELINE_EVENTS: usize = 10_000;

/// Draws whose thumbnails the background pass makes without being asked.
pub const PREFETCH_THUMBS: u64 = 4096;
/// Most commands one [`Request::Commands`] returns.
pub const MAX_PAGE: u32 = 1 << 16;
/// Most matches one search returns.
pub const MAX_MATCHES: usize = 10_000;
/// Most commands one search scans.
pub const MAX_SEARCH_SPAN: u64 = 4 << 20;
/// Most events recorded while inspecting one draw.
const MAX_DRAW_EVENTS: usize = 1 << 20;
/// Minimum time between two progress messages.
const PROGRESS_INTERVAL: Duration = Duration::from_millis(80);

/// Called after every response so the UI wakes up (e.g. `egui::Context::request_repaint`).
pub type Waker = Arc<dyn Fn() + Send + Sync>;

/// The UI's end of a worker.
pub struct WorkerHandle {
    tx: Option<Sender<Request>>,
    rx: Receiver<Response>,
    cancel: Arc<AtomicBool>,
}

impl std::fmt::Debug for WorkerHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerHandle").finish_non_exhaustive()
    }
}

impl WorkerHandle {
    /// Sends a request (ignored if the worker has stopped).
    pub fn send(&self, req: Request) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(req);
        }
    }

    /// The next response, if one is waiting.
    pub fn try_recv(&self) -> Option<Response> {
        self.rx.try_recv().ok()
    }

    /// Asks the current long operation (indexing, or a "who touched" timeline pass) to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

impl Drop for WorkerHandle {
    fn drop(&mut self) {
        // Closing the channel ends the worker's loop; the flag ends a running index pass.
        self.cancel.store(true, Ordering::SeqCst);
        self.tx = None;
    }
}

/// What a trace is replayed under: the keyframe store's memory budget and the work budgets
/// (the viewer's Settings dialog edits them; a change re-indexes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplaySettings {
    /// Memory budget of the index's keyframe store, in bytes.
    pub keyframe_budget: u64,
    /// Work budgets per submission, frame and trace.
    pub work: WorkBudget,
}

impl Default for ReplaySettings {
    fn default() -> Self {
        Self {
            keyframe_budget: DEFAULT_KEYFRAME_BUDGET,
            work: WorkBudget::default(),
        }
    }
}

/// Starts a worker thread for `trace` with the default [`ReplaySettings`].
pub fn spawn<S: TraceSource + Send + 'static>(
    trace: CiTrace<S>,
    waker: Waker,
) -> std::io::Result<WorkerHandle> {
    spawn_with(trace, waker, ReplaySettings::default())
}

/// Starts a worker thread for `trace` that replays it under `settings`.
pub fn spawn_with<S: TraceSource + Send + 'static>(
    trace: CiTrace<S>,
    waker: Waker,
    settings: ReplaySettings,
) -> std::io::Result<WorkerHandle> {
    let (req_tx, req_rx) = mpsc::channel();
    let (resp_tx, resp_rx) = mpsc::channel();
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = cancel.clone();
    std::thread::Builder::new()
        .name("picaview-replay".into())
        .spawn(move || {
            let out = Out { tx: resp_tx, waker };
            run(trace, req_rx, out, flag, settings);
        })?;
    Ok(WorkerHandle {
        tx: Some(req_tx),
        rx: resp_rx,
        cancel,
    })
}

struct Out {
    tx: Sender<Response>,
    waker: Waker,
}

impl Out {
    fn send(&self, r: Response) {
        let _ = self.tx.send(r);
        (self.waker)();
    }
}

/// Pixel-pipeline threads of the replays workers open (0: the available cores). Set once at
/// start-up from `picaview view --threads`; every count renders identically.
pub static PIXEL_THREADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The thread count [`PIXEL_THREADS`] selects.
fn pixel_threads() -> usize {
    match PIXEL_THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
}

fn run<S: TraceSource>(
    trace: CiTrace<S>,
    rx: Receiver<Request>,
    out: Out,
    cancel: Arc<AtomicBool>,
    settings: ReplaySettings,
) {
    let total = trace.elements().len().max(1);
    let mut replay = Replay::new(trace);
    replay.set_threads(pixel_threads());
    replay.set_keyframe_budget(settings.keyframe_budget);
    replay.set_work_budget(settings.work);
    let mut last = Instant::now();
    out.send(Response::Progress(Progress {
        task: "Indexing trace",
        fraction: 0.0,
        cancellable: true,
    }));
    let index = replay.build_index_with(&mut |pos: Position| {
        if last.elapsed() >= PROGRESS_INTERVAL {
            last = Instant::now();
            out.send(Response::Progress(Progress {
                task: "Indexing trace",
                fraction: pos.element as f32 / total as f32,
                cancellable: true,
            }));
        }
        !cancel.load(Ordering::Relaxed)
    });
    let Some(index) = index else {
        out.send(Response::Cancelled);
        return;
    };
    let index = Arc::new(index);
    out.send(Response::Indexed(index.clone()));
    let mut w = Worker {
        replay,
        index,
        out,
        listings: HashMap::new(),
        inspection: None,
        bg: None,
        thumbs: BTreeSet::new(),
        at: None,
        last_progress: Instant::now(),
        edited: None,
        cancel,
    };
    w.start_background();
    w.serve(&rx);
}

/// State of the background analysis pass.
struct Background {
    /// Where the pass stopped, and how to get back there.
    target: Target,
    pos: Position,
    next_draw: u64,
    recorder: ProvenanceRecorder,
    batch: Vec<(u64, Option<Arc<Thumb>>)>,
    last_flush: Instant,
}

struct Worker<S: TraceSource> {
    replay: Replay<S>,
    index: Arc<TraceIndex>,
    out: Out,
    /// Disassemblies by (unit, upload generation, entry point).
    listings: HashMap<(u8, u64, u32), Arc<ShaderListing>>,
    inspection: Option<Arc<DrawInspection>>,
    bg: Option<Background>,
    /// Thumbnails asked for and not yet made.
    thumbs: BTreeSet<u64>,
    /// The command number the replay sits at after the last [`Worker::goto`] (None when the
    /// replay moved otherwise).
    at: Option<u64>,
    last_progress: Instant,
    /// A second replay of the trace file that runs the Edits panel's list, so that the main
    /// replay keeps its keyframes (indexed once, under a smaller keyframe budget).
    edited: Option<(std::path::PathBuf, EditedReplay)>,
    /// The handle's cancel flag: stops indexing, and after it a running timeline pass.
    cancel: Arc<AtomicBool>,
}

/// The replay of the Edits panel's comparisons.
type EditedReplay = Replay<pica_cmd::citrace::SeekSource<std::fs::File>>;

/// Keyframe budget of the edited replay.
const EDITED_KEYFRAME_BUDGET: u64 = 64 << 20;

/// Collects register writes (bounded).
struct Collector {
    writes: Vec<RegWriteEvent>,
    effects: Vec<Option<PortEffect>>,
    ports: PortTracker,
    limit: usize,
}

impl Observer for Collector {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        if self.writes.len() < self.limit {
            self.writes.push(*ev);
            self.effects.push(self.ports.write(ev));
        }
    }
}

/// Finds writes matching a query.
struct Searcher<'q> {
    query: &'q str,
    next: u64,
    matches: Vec<u64>,
    truncated: bool,
}

impl Observer for Searcher<'_> {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.next += 1;
        if self.matches.len() >= MAX_MATCHES {
            self.truncated = true;
            return;
        }
        if write_matches(ev, self.query) {
            self.matches.push(self.next);
        }
    }
}

/// True if a write's register name, id, value or decoded text contains `query` (lower case).
pub fn write_matches(ev: &RegWriteEvent, query: &str) -> bool {
    if query.is_empty() {
        return false;
    }
    let desc = match ev.space {
        gpu_core::debug::RegSpace::Pica => {
            pica_cmd::regs::describe(u16::try_from(ev.id).unwrap_or(u16::MAX), ev.new)
        }
        gpu_core::debug::RegSpace::External => pica_cmd::regs::external::describe(ev.id, ev.new),
    };
    if desc.name.to_ascii_lowercase().contains(query) {
        return true;
    }
    let ids = match ev.space {
        gpu_core::debug::RegSpace::Pica => format!("0x{:03x} {:08x}", ev.id, ev.new),
        gpu_core::debug::RegSpace::External => format!("0x{:08x} {:08x}", ev.id, ev.new),
    };
    ids.contains(query) || desc.one_line().to_ascii_lowercase().contains(query)
}

impl<S: TraceSource> Worker<S> {
    fn serve(&mut self, rx: &Receiver<Request>) {
        loop {
            let mut batch = Vec::new();
            let busy = self.bg.is_some() || !self.thumbs.is_empty();
            if !busy {
                match rx.recv() {
                    Ok(r) => batch.push(r),
                    Err(_) => return,
                }
            }
            loop {
                match rx.try_recv() {
                    Ok(r) => batch.push(r),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => return,
                }
            }
            self.handle(batch);
            if let Some(draw) = self.thumbs.pop_first() {
                self.make_thumbnail(draw);
            } else if self.bg.is_some() {
                self.background_step();
            }
        }
    }

    fn handle(&mut self, batch: Vec<Request>) {
        let mut state = None;
        let mut pixel = None;
        let mut draw = None;
        let mut shader = None;
        let mut gs_trace = None;
        let mut who = None;
        let mut search = None;
        let mut debug = None;
        let mut solo = None;
        let mut history = None;
        let mut screen_pick = None;
        let mut compare = None;
        let mut saves = Vec::new();
        let mut images: Vec<(u64, ImageSource)> = Vec::new();
        let mut pages: Vec<(u64, u32)> = Vec::new();
        for r in batch {
            match r {
                Request::State { at } => state = Some(at),
                Request::Image { at, source } => {
                    if !images.contains(&(at, source)) {
                        images.push((at, source));
                    }
                }
                Request::Pixel { at, source, x, y } => pixel = Some((at, source, x, y)),
                Request::PixelHistory { at, source, x, y } => history = Some((at, source, x, y)),
                Request::ScreenPick { at, source, x, y } => screen_pick = Some((at, source, x, y)),
                Request::Commands { first, count } => {
                    if !pages.contains(&(first, count)) {
                        pages.push((first, count));
                    }
                }
                Request::DrawDetail { draw: d } => draw = Some(d),
                Request::ShaderTrace {
                    draw: d,
                    index_in_draw,
                } => shader = Some((d, index_in_draw)),
                Request::GsTrace {
                    draw: d,
                    invocation,
                } => gs_trace = Some((d, invocation)),
                Request::WhoTouched { start, len } => who = Some((start, len)),
                Request::Thumbnail { draw: d } => {
                    let prefetched = self
                        .bg
                        .as_ref()
                        .is_some_and(|b| d >= b.next_draw && d < PREFETCH_THUMBS);
                    if !prefetched {
                        self.thumbs.insert(d);
                    }
                }
                Request::Search {
                    id,
                    first,
                    last,
                    query,
                } => search = Some((id, first, last, query)),
                Request::DebugBuffers { at } => debug = Some(at),
                Request::TevSolo { draw: d, solo: t } => solo = Some((d, t)),
                Request::EditCompare {
                    id,
                    source,
                    at,
                    edits,
                } => compare = Some((id, source, at, edits)),
                Request::SaveEdited {
                    source,
                    dest,
                    edits,
                } => saves.push((source, dest, edits)),
            }
        }
        // Images only for the newest position asked about.
        if let Some(&(newest, _)) = images.last() {
            images.retain(|(at, _)| *at == newest);
        }
        if let Some(at) = state {
            self.goto(at);
            let snap = self.snapshot(at);
            self.out.send(Response::State(Arc::new(snap)));
        }
        for (at, source) in images {
            self.goto(at);
            let result =
                images::extract(self.replay.gpu(), self.replay.mem(), source).map(Arc::new);
            self.out.send(Response::Image { at, source, result });
        }
        if let Some((at, source, x, y)) = pixel {
            self.goto(at);
            let info = images::pick(self.replay.gpu(), self.replay.mem(), source, x, y);
            self.out.send(Response::Pixel {
                at,
                source,
                x,
                y,
                info,
            });
        }
        for (first, count) in pages {
            let page = self.commands(first, count);
            self.out.send(Response::Commands(Arc::new(page)));
        }
        if let Some(d) = draw {
            let result = self.inspect(d);
            self.out.send(Response::DrawDetail { draw: d, result });
        }
        if let Some((d, k)) = shader {
            let result = self.inspect(d).and_then(|insp| {
                shader_debug::trace_vertex(&insp, &insp.vertex_ids, k).map(Arc::new)
            });
            self.out.send(Response::ShaderTrace {
                draw: d,
                index_in_draw: k,
                result,
            });
        }
        if let Some((d, invocation)) = gs_trace {
            let result = self
                .inspect(d)
                .and_then(|insp| shader_debug::trace_gs(&insp, invocation).map(Arc::new));
            self.out.send(Response::GsTrace {
                draw: d,
                invocation,
                result,
            });
        }
        if let Some((start, len)) = who {
            self.who_touched(start, len);
        }
        if let Some((id, first, last, query)) = search {
            self.search(id, first, last, &query);
        }
        if let Some(at) = debug {
            let result = Ok(Arc::new(self.debug_view(at)));
            self.out.send(Response::DebugBuffers { at, result });
        }
        if let Some((d, t)) = solo {
            let result = self.tev_solo(d, t).map(Arc::new);
            self.out.send(Response::TevSolo {
                draw: d,
                solo: t,
                result,
            });
        }
        if let Some((at, source, x, y)) = history {
            let result = self.pixel_history(at, source, x, y);
            self.out.send(Response::PixelHistory {
                at,
                source,
                x,
                y,
                result,
            });
        }
        if let Some((at, source, x, y)) = screen_pick {
            let target = match source {
                ImageSource::BottomScreen => gpu_core::history::HistoryTarget::Bottom,
                ImageSource::TopScreenRight => gpu_core::history::HistoryTarget::TopRight,
                _ => gpu_core::history::HistoryTarget::Top,
            };
            // The identification moves the replay: forget where it was.
            self.at = None;
            let result = if source.is_screen() {
                gpu_core::history::identify_screen_pixel(&mut self.replay, target, x, y, at)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            } else {
                Err(format!("{} is not a screen", source.label()))
            };
            self.out.send(Response::ScreenPick {
                at,
                source,
                x,
                y,
                result,
            });
        }
        if let Some((id, source, at, edits)) = compare {
            let result = self.edit_compare(&source, at, &edits).map(Arc::new);
            self.out.send(Response::EditCompare { id, result });
        }
        for (source, dest, edits) in saves {
            self.out
                .send(Response::Saved(save_edited_file(&source, &dest, &edits)));
        }
    }

    /// The resource timeline of `[start, start + len)`: one pass over the whole trace (the
    /// replay's position is lost) with progress answers, cancelled by the shared cancel flag
    /// ([`WorkerHandle::cancel`]); a cancelled pass answers with the events found so far.
    fn who_touched(&mut self, start: u32, len: u64) {
        // A cancel asked before this pass started (for an earlier one) does not stop it.
        self.cancel.store(false, Ordering::SeqCst);
        let total = self.replay.trace().elements().len().max(1) as f32;
        let cancel = self.cancel.clone();
        let out = &self.out;
        let mut last = Instant::now();
        out.send(Response::WhoTouchedProgress {
            start,
            len,
            fraction: 0.0,
            events: 0,
        });
        let (t, complete) = Timeline::collect_with_progress(
            &mut self.replay,
            AddrRange { start, len },
            MAX_TIMELINE_EVENTS,
            &mut |pos, events| {
                if last.elapsed() >= PROGRESS_INTERVAL {
                    last = Instant::now();
                    out.send(Response::WhoTouchedProgress {
                        start,
                        len,
                        fraction: pos.element as f32 / total,
                        events,
                    });
                }
                !cancel.load(Ordering::Relaxed)
            },
        );
        self.cancel.store(false, Ordering::SeqCst);
        self.at = None;
        self.out.send(Response::WhoTouched {
            start,
            len,
            result: Arc::new(t),
            complete,
        });
    }

    /// The colour buffer after draw `draw` with the combiner solo `solo`, and without.
    fn tev_solo(&mut self, draw: u64, solo: TevSolo) -> Result<SoloImages, String> {
        let rec = self
            .index
            .draws
            .get(usize::try_from(draw).unwrap_or(usize::MAX))
            .ok_or_else(|| format!("draw {draw} does not exist"))?
            .clone();
        self.at = None;
        // Just before the draw's trigger, then the draw alone with the solo.
        self.replay
            .seek(Target::AfterWrite(rec.before.writes), &mut ());
        self.replay.set_tev_solo(Some(solo));
        self.replay.run_until(Target::AfterDraw(draw), &mut ());
        let soloed = images::extract(self.replay.gpu(), self.replay.mem(), ImageSource::Color);
        self.replay.set_tev_solo(None);
        // This seek restores a real state (the replay knows the current one is not): the
        // background pass may continue from it.
        self.replay.seek(Target::AfterDraw(draw), &mut ());
        let real = images::extract(self.replay.gpu(), self.replay.mem(), ImageSource::Color)?;
        Ok(SoloImages {
            real,
            solo: soloed?,
        })
    }

    /// Records the debug buffers from the start of `at`'s frame to command `at` and reads the
    /// render target's depth, scissor and viewport there.
    fn debug_view(&mut self, at: u64) -> DebugView {
        let start = self
            .index
            .frames
            .iter()
            .rev()
            .find(|f| f.start.writes <= at)
            .map_or(0, |f| f.start.writes);
        let buffers = self.replay.record_debug_buffers(
            Target::AfterWrite(start),
            Target::AfterWrite(at),
            &mut (),
        );
        self.at = Some(at);
        let gpu = self.replay.gpu();
        let fb = FramebufferConfig::from_regs(&gpu.regs);
        let raster = RasterConfig::from_regs(&gpu.regs);
        let vp = Viewport::from_regs(&gpu.regs);
        let depth = fb
            .depth_format
            .is_some()
            .then(|| fb.read_depth_image(self.replay.mem()).ok())
            .flatten()
            .map(|v| v.into_iter().map(|(d, _)| d).collect());
        let sc = raster.scissor;
        DebugView {
            at,
            target: buffers.target(fb.color_addr).cloned(),
            width: fb.width,
            height: fb.height,
            depth,
            max_depth: fb.depth_format.map_or(1, |f| f.max_depth()),
            scissor: match raster.scissor_mode {
                ScissorMode::Disabled => None,
                m => Some((m == ScissorMode::Include, [sc.x1, sc.y1, sc.x2, sc.y2])),
            },
            viewport: [
                vp.x as f32,
                vp.y as f32,
                2.0 * vp.half_width,
                2.0 * vp.half_height,
            ],
        }
    }

    /// The history of a pixel over the frame containing command `at`, up to it.
    fn pixel_history(
        &mut self,
        at: u64,
        source: ImageSource,
        x: u32,
        y: u32,
    ) -> Result<Arc<gpu_core::history::PixelHistory>, String> {
        use gpu_core::history::{HistoryRequest, HistoryTarget};
        let target = match source {
            ImageSource::TopScreen => HistoryTarget::Top,
            ImageSource::TopScreenRight => HistoryTarget::TopRight,
            ImageSource::BottomScreen => HistoryTarget::Bottom,
            ImageSource::Color => HistoryTarget::Color,
            ImageSource::Depth | ImageSource::Stencil => HistoryTarget::Depth,
            ImageSource::Texture { .. } | ImageSource::Custom(_) => {
                return Err(format!(
                    "pixel history follows screens and render targets, not {}",
                    source.label()
                ));
            }
        };
        let frame = self
            .index
            .frames
            .iter()
            .find(|f| at <= f.end.writes)
            .or(self.index.frames.last())
            .map_or(0, |f| f.index);
        let req = HistoryRequest {
            frame,
            after_draw: None,
            until_write: Some(at),
            target,
            x,
            y,
        };
        // The history moves the replay: forget where it was.
        self.at = None;
        gpu_core::history::pixel_history(&mut self.replay, &req)
            .map(Arc::new)
            .map_err(|e| e.to_string())
    }

    /// The colour buffer after command `at` without `edits` (the main replay) and with them
    /// (a second replay of the file `source`, whose keyframes before the first edit survive
    /// changes of the list).
    fn edit_compare(
        &mut self,
        source: &std::path::Path,
        at: u64,
        edits: &gpu_core::replay::edit::EditList,
    ) -> Result<EditImages, String> {
        self.goto(at);
        let before = images::extract(self.replay.gpu(), self.replay.mem(), ImageSource::Color)?;
        if self.edited.as_ref().is_none_or(|(p, _)| p != source) {
            let trace = CiTrace::open(source).map_err(|e| {
                format!(
                    "{}: {e} (the Edits panel replays the .ctf file)",
                    source.display()
                )
            })?;
            let mut r = Replay::new(trace);
            r.set_keyframe_budget(EDITED_KEYFRAME_BUDGET);
            r.build_index();
            self.edited = Some((source.to_path_buf(), r));
        }
        let Some((_, r)) = self.edited.as_mut() else {
            return Err("no edited replay".into());
        };
        r.set_edits(edits.clone()).map_err(|e| e.to_string())?;
        r.seek(Target::AfterWrite(at), &mut ());
        let after = images::extract(r.gpu(), r.mem(), ImageSource::Color);
        let after = after?;
        let mut differing = 0u64;
        let pixels: Vec<[u8; 4]> = before
            .pixels
            .iter()
            .zip(&after.pixels)
            .map(|(a, b)| {
                if a != b {
                    differing += 1;
                }
                let d = |k: usize| (a[k].abs_diff(b[k]) as u16 * 4).min(255) as u8;
                [d(0), d(1), d(2), 255]
            })
            .collect();
        let diff = ImageData {
            width: before.width.min(after.width),
            height: before.height.min(after.height),
            pixels,
            kind: before.kind,
            description: "difference (x4)".into(),
        };
        Ok(EditImages {
            before: Arc::new(before),
            after: Arc::new(after),
            diff: Arc::new(diff),
            differing,
        })
    }

    /// Moves the replay to "after command `at`".
    fn goto(&mut self, at: u64) {
        if self.at != Some(at) {
            self.replay.seek(Target::AfterWrite(at), &mut ());
            self.at = Some(at);
        }
    }

    fn listing(&mut self, gpu_unit: UnitKind, entry: u32) -> Arc<ShaderListing> {
        let gpu: &Gpu = self.replay.gpu();
        let unit = gpu.unit(gpu_unit);
        let key = (
            u8::from(gpu_unit == UnitKind::Geometry),
            unit.program_generation,
            entry,
        );
        if let Some(l) = self.listings.get(&key) {
            return l.clone();
        }
        let l = Arc::new(ShaderListing::from_memory(&unit.code, &unit.opdescs, entry));
        if self.listings.len() > 64 {
            self.listings.clear();
        }
        self.listings.insert(key, l.clone());
        l
    }

    fn snapshot(&mut self, at: u64) -> StateSnapshot {
        let vs_entry = self.replay.gpu().regs[0x2BA] & 0xFFFF;
        let gs_entry = self.replay.gpu().regs[0x28A] & 0xFFFF;
        let vs_listing = self.listing(UnitKind::Vertex, vs_entry);
        let gs_listing = self.listing(UnitKind::Geometry, gs_entry);
        let gpu = self.replay.gpu();
        StateSnapshot {
            at,
            pos: self.replay.position(),
            regs: gpu.regs.clone(),
            ext_regs: gpu.ext_regs.clone(),
            vs: UnitSnapshot {
                listing: vs_listing,
                float_uniforms: gpu.vs.float_uniforms,
            },
            gs: UnitSnapshot {
                listing: gs_listing,
                float_uniforms: gpu.gs.float_uniforms,
            },
            fixed_attribs: gpu.fixed_attribs,
            luts: Arc::new(gpu.luts.clone()),
        }
    }

    fn commands(&mut self, first: u64, count: u32) -> CommandPage {
        let first = first.max(1);
        let count = count.min(MAX_PAGE);
        self.goto(first - 1);
        let last = first + u64::from(count) - 1;
        let mut c = Collector {
            writes: Vec::with_capacity(count as usize),
            effects: Vec::with_capacity(count as usize),
            ports: PortTracker::new(self.replay.gpu()),
            limit: count as usize,
        };
        self.replay.run_until(Target::AfterWrite(last), &mut c);
        self.at = Some(last);
        CommandPage {
            first,
            writes: c.writes,
            effects: c.effects,
        }
    }

    fn inspect(&mut self, draw: u64) -> Result<Arc<DrawInspection>, String> {
        if let Some(i) = &self.inspection
            && i.draw == draw
        {
            return Ok(i.clone());
        }
        let rec = self
            .index
            .draws
            .get(usize::try_from(draw).unwrap_or(usize::MAX))
            .ok_or_else(|| format!("draw {draw} does not exist"))?
            .clone();
        let listings = &mut self.listings;
        let insp = inspect_draw(&mut self.replay, &rec, &mut |gpu, unit, entry| {
            cached_listing(listings, gpu, unit, entry)
        });
        self.at = None;
        let insp = Arc::new(insp?);
        self.inspection = Some(insp.clone());
        Ok(insp)
    }

    fn search(&mut self, id: u64, first: u64, last: u64, query: &str) {
        let first = first.max(1);
        let last = last.min(first.saturating_add(MAX_SEARCH_SPAN));
        let query = query.to_ascii_lowercase();
        self.goto(first - 1);
        let mut s = Searcher {
            query: &query,
            next: first - 1,
            matches: Vec::new(),
            truncated: false,
        };
        self.replay.run_until(Target::AfterWrite(last), &mut s);
        self.at = Some(last);
        self.out.send(Response::SearchResult {
            id,
            matches: s.matches,
            truncated: s.truncated,
        });
    }

    fn make_thumbnail(&mut self, draw: u64) {
        if usize::try_from(draw).map_or(true, |d| d >= self.index.draws.len()) {
            self.out.send(Response::Thumbnails(vec![(draw, None)]));
            return;
        }
        self.replay.seek(Target::AfterDraw(draw), &mut ());
        self.at = None;
        let t = images::thumbnail(self.replay.gpu(), self.replay.mem()).map(Arc::new);
        self.out.send(Response::Thumbnails(vec![(draw, t)]));
    }

    fn start_background(&mut self) {
        self.replay.seek(Target::AfterWrite(0), &mut ());
        self.at = Some(0);
        let recorder = ProvenanceRecorder::new(0, &self.replay.gpu().regs);
        self.bg = Some(Background {
            target: Target::AfterWrite(0),
            pos: self.replay.position(),
            next_draw: 0,
            recorder,
            batch: Vec::new(),
            last_flush: Instant::now(),
        });
    }

    fn background_step(&mut self) {
        let Some(bg) = self.bg.as_mut() else {
            return;
        };
        if self.replay.position() != bg.pos {
            self.replay.seek(bg.target, &mut ());
            if self.replay.position() != bg.pos {
                self.out.send(Response::Log(format!(
                    "analysis stopped: seeking back gave position {:?} instead of {:?}",
                    self.replay.position(),
                    bg.pos
                )));
                self.bg = None;
                self.out.send(Response::Idle);
                return;
            }
        }
        self.at = None;
        let draws = self.index.draws.len() as u64;
        let end = self.index.end;
        if bg.next_draw < draws {
            let d = bg.next_draw;
            self.replay
                .run_until(Target::AfterDraw(d), &mut bg.recorder);
            if d < PREFETCH_THUMBS {
                let t = images::thumbnail(self.replay.gpu(), self.replay.mem()).map(Arc::new);
                bg.batch.push((d, t));
            }
            bg.target = Target::AfterDraw(d);
            bg.pos = self.replay.position();
            bg.next_draw = d + 1;
            if bg.batch.len() >= 64 || bg.last_flush.elapsed() >= PROGRESS_INTERVAL {
                let batch = std::mem::take(&mut bg.batch);
                bg.last_flush = Instant::now();
                if !batch.is_empty() {
                    self.out.send(Response::Thumbnails(batch));
                }
            }
            if self.last_progress.elapsed() >= PROGRESS_INTERVAL {
                self.last_progress = Instant::now();
                let fraction = if end.writes == 0 {
                    0.0
                } else {
                    bg.pos.writes as f32 / end.writes as f32
                };
                self.out.send(Response::Progress(Progress {
                    task: "Analysing (thumbnails, provenance)",
                    fraction,
                    cancellable: false,
                }));
            }
            return;
        }
        self.replay.run_until(Target::End, &mut bg.recorder);
        let Some(bg) = self.bg.take() else {
            return;
        };
        if !bg.batch.is_empty() {
            self.out.send(Response::Thumbnails(bg.batch));
        }
        self.out
            .send(Response::Provenance(Arc::new(bg.recorder.finish())));
        self.out.send(Response::Idle);
    }
}

/// Writes `source` with `edits` baked in to `dest` (never over `source`).
fn save_edited_file(
    source: &std::path::Path,
    dest: &std::path::Path,
    edits: &gpu_core::replay::edit::EditList,
) -> Result<String, String> {
    if let (Ok(a), Ok(b)) = (source.canonicalize(), dest.canonicalize())
        && a == b
    {
        return Err("the output would overwrite the input trace".into());
    }
    let trace = CiTrace::open(source).map_err(|e| format!("{}: {e}", source.display()))?;
    let (builder, report) =
        gpu_core::replay::edit::save_edited(trace, edits).map_err(|e| e.to_string())?;
    let bytes = builder.build().map_err(|e| e.to_string())?;
    std::fs::write(dest, &bytes).map_err(|e| format!("writing {}: {e}", dest.display()))?;
    Ok(format!(
        "saved {} ({} bytes, {} override(s), writes inserted before {} draw(s))",
        dest.display(),
        bytes.len(),
        report.overrides,
        report.injections
    ))
}

/// Replays draw `rec` with detail and packages what the vertex and shader views (and
/// `picaview shader-trace`) need: the draw detail (loaded/shaded vertices, triangles, GS
/// invocations), its diagnostics, vertex ids, and the VS/GS setups to re-run invocations.
/// `make_listing` makes (or finds cached) disassembly of a unit's program. The replay is left after
/// the draw.
pub fn inspect_draw<S: TraceSource>(
    replay: &mut Replay<S>,
    rec: &gpu_core::replay::DrawRecord,
    make_listing: &mut dyn FnMut(&Gpu, UnitKind, u32) -> Arc<ShaderListing>,
) -> Result<DrawInspection, String> {
    let draw = rec.info.draw;
    replay.seek(Target::AfterWrite(rec.before.writes), &mut ());
    let entry = replay.gpu().regs[0x2BA] & 0xFFFF;
    let listing = make_listing(replay.gpu(), UnitKind::Vertex, entry);
    let gs_listing = if rec.info.geometry_shader {
        let gs_entry = replay.gpu().regs[0x28A] & 0xFFFF;
        Some(make_listing(replay.gpu(), UnitKind::Geometry, gs_entry))
    } else {
        None
    };
    let gpu = replay.gpu();
    let gs = gs_listing.as_ref().map(|listing| {
        Arc::new(GsDebugContext {
            program: Program::new_shared(&gpu.gs.code, &gpu.gs.opdescs),
            listing: listing.clone(),
            setup: UnitSetup::from_regs(&gpu.regs, ShaderUnit::Geometry),
            config: gpu.pipeline.gs_unit.config,
        })
    });
    let regs = gpu.regs.clone();
    let mut uniforms = Uniforms {
        f: gpu.vs.float_uniforms,
        ..Uniforms::default()
    };
    uniforms.set_bools(regs[0x2B0]);
    for i in 0..4 {
        uniforms.set_int(i, regs[0x2B1 + i]);
    }
    let loader = LoaderConfig::from_regs(&regs);
    let n = rec.info.count.min(MAX_VERTEX_IDS);
    let mut vertex_ids = Vec::with_capacity(n as usize);
    for k in 0..n {
        match loader.vertex_id(replay.mem(), rec.info.kind, k) {
            Ok(id) => vertex_ids.push(id),
            Err(_) => break,
        }
    }
    let vs = VsContext {
        program: Program::new_shared(&gpu.vs.code, &gpu.vs.opdescs),
        listing,
        uniforms,
        setup: UnitSetup::from_regs(&regs, ShaderUnit::Vertex),
        state: gpu.pipeline.vs_unit.state.clone(),
        config: gpu.pipeline.vs_unit.config,
    };
    let mut log = EventLog::new(MAX_DRAW_EVENTS, true);
    replay.run_until(Target::AfterDraw(draw), &mut log);
    let diagnostics = log
        .events
        .iter()
        .filter_map(|e| match e {
            GpuEvent::Diagnostic(d) if d.draw.is_none_or(|x| x == draw) => Some(d.clone()),
            _ => None,
        })
        .collect();
    let detail = log
        .details
        .into_iter()
        .find(|(d, _)| *d == draw)
        .map(|(_, d)| d)
        .ok_or_else(|| format!("draw {draw} produced no detail (the replay diverged?)"))?;
    Ok(DrawInspection {
        draw,
        detail,
        diagnostics,
        vertex_ids,
        vs: Arc::new(vs),
        gs_listing,
        gs,
    })
}

/// The listing of `unit`'s program from `entry`, cached by upload generation.
fn cached_listing(
    listings: &mut HashMap<(u8, u64, u32), Arc<ShaderListing>>,
    gpu: &Gpu,
    gpu_unit: UnitKind,
    entry: u32,
) -> Arc<ShaderListing> {
    let unit = gpu.unit(gpu_unit);
    let key = (
        u8::from(gpu_unit == UnitKind::Geometry),
        unit.program_generation,
        entry,
    );
    if let Some(l) = listings.get(&key) {
        return l.clone();
    }
    let l = Arc::new(ShaderListing::from_memory(&unit.code, &unit.opdescs, entry));
    if listings.len() > 64 {
        listings.clear();
    }
    listings.insert(key, l.clone());
    l
}
