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
use gpu_core::vertex_loader::LoaderConfig;
use pica_cmd::citrace::{CiTrace, TraceSource};
use shader_unit::decode::Program;
use shader_unit::interp::Uniforms;

use super::images;
use super::listing::ShaderListing;
use super::ports::{PortEffect, PortTracker};
use super::protocol::{
    CommandPage, DrawInspection, ImageSource, MAX_VERTEX_IDS, Progress, Request, Response,
    StateSnapshot, Thumb, UnitSnapshot, VsContext,
};
use super::provenance::ProvenanceRecorder;
use super::shader_debug;

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

    /// Asks the current long operation (indexing) to stop.
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

fn run<S: TraceSource>(
    trace: CiTrace<S>,
    rx: Receiver<Request>,
    out: Out,
    cancel: Arc<AtomicBool>,
    settings: ReplaySettings,
) {
    let total = trace.elements().len().max(1);
    let mut replay = Replay::new(trace);
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
}

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
        let mut search = None;
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
        if let Some((id, first, last, query)) = search {
            self.search(id, first, last, &query);
        }
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
        self.replay
            .seek(Target::AfterWrite(rec.before.writes), &mut ());
        self.at = None;
        let entry = self.replay.gpu().regs[0x2BA] & 0xFFFF;
        let listing = self.listing(UnitKind::Vertex, entry);
        let gs_listing = if rec.info.geometry_shader {
            let gs_entry = self.replay.gpu().regs[0x28A] & 0xFFFF;
            Some(self.listing(UnitKind::Geometry, gs_entry))
        } else {
            None
        };
        let gpu = self.replay.gpu();
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
            match loader.vertex_id(self.replay.mem(), rec.info.kind, k) {
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
        self.replay.run_until(Target::AfterDraw(draw), &mut log);
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
        let insp = Arc::new(DrawInspection {
            draw,
            detail,
            diagnostics,
            vertex_ids,
            vs: Arc::new(vs),
            gs_listing,
        });
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
