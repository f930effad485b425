//! The UI side of an open document: what the worker has sent so far, what is still pending, and
//! the textures made from it.
//!
//! Stage: viewer state (owned by the app, never persisted). Input: [`Response`]s from the
//! worker ([`TraceSession::poll`]). Output: caches the panels read (state snapshot, images,
//! command pages, draw detail, shader trace, thumbnails, provenance) and requests the panels
//! file with the `want_*` methods; [`TraceSession::flush`] sends each wanted item once.
//!
//! Memory is bounded: images and command pages live in small LRU caches, thumbnails in a map
//! capped at [`MAX_THUMBS`].

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use eframe::egui;
use gpu_core::replay::{FrameInfo, TraceIndex};
use gpu_core::tev::TevSolo;

use super::load::{ShaderDoc, TraceInfo};
use super::protocol::{
    CommandPage, DebugView, DrawInspection, EditImages, ImageData, ImageSource, PixelInfo,
    Progress, Request, Response, ShaderTrace, SoloImages, StateSnapshot, Thumb,
};
use super::provenance::Provenance;
use super::worker::WorkerHandle;

/// Commands per page requested from the worker.
pub const PAGE: u64 = 4096;
/// Images kept.
const MAX_IMAGES: usize = 24;
/// Command pages kept.
const MAX_PAGES: usize = 64;
/// Budget diagnostics listed in the log after indexing (the rest are counted).
const MAX_BUDGET_LOG_LINES: usize = 100;
/// Thumbnails kept.
pub const MAX_THUMBS: usize = 8192;

/// A cached image and its texture.
#[derive(Clone)]
pub enum ImageEntry {
    /// Requested, not yet here.
    Pending,
    /// Decoded; the texture is made on first display.
    Ready(Arc<ImageData>, Option<egui::TextureHandle>),
    /// Could not be decoded.
    Failed(String),
}

/// A cached thumbnail.
#[derive(Clone)]
pub enum ThumbEntry {
    /// Requested.
    Pending,
    /// Made; texture on first display.
    Ready(Arc<Thumb>, Option<egui::TextureHandle>),
    /// No readable colour buffer.
    Missing,
}

/// Combiner-solo images or why there are none.
pub type SoloResult = Result<Arc<SoloImages>, String>;

/// A shader trace or why there is none.
pub type TraceResult = Result<Arc<ShaderTrace>, String>;

/// Search state of the command list.
#[derive(Clone, Debug, Default)]
pub struct SearchState {
    /// Id of the newest request.
    pub id: u64,
    /// The query of the newest request.
    pub query: String,
    /// Range searched.
    pub range: (u64, u64),
    /// Matches of the newest answered request.
    pub matches: Vec<u64>,
    /// Whether the answer is still pending.
    pub pending: bool,
    /// The match list was cut.
    pub truncated: bool,
}

/// An open trace (or wrapped command list).
pub struct TraceSession {
    /// Unique per session and per run: salts the ids of UI state that must not be restored
    /// from an earlier run (eframe persists egui's memory).
    pub nonce: u64,
    /// File facts.
    pub info: TraceInfo,
    worker: WorkerHandle,
    /// The index, once built.
    pub index: Option<Arc<TraceIndex>>,
    /// Progress of a long operation.
    pub progress: Option<Progress>,
    /// True when indexing was cancelled (the session is unusable).
    pub cancelled: bool,
    /// Set when the worker stopped with an internal error (the session is unusable).
    pub failed: Option<String>,
    /// Register/uniform history, once the background pass finished.
    pub provenance: Option<Arc<Provenance>>,
    /// Newest state snapshot received.
    pub state: Option<Arc<StateSnapshot>>,
    state_pending: Option<u64>,
    images: HashMap<(u64, ImageSource), ImageEntry>,
    image_order: VecDeque<(u64, ImageSource)>,
    pages: HashMap<u64, Arc<CommandPage>>,
    page_order: VecDeque<u64>,
    pages_pending: HashSet<u64>,
    /// Draw detail of the newest requested draw.
    pub detail: Option<(u64, Result<Arc<DrawInspection>, String>)>,
    detail_pending: Option<u64>,
    /// Shader trace of the newest requested vertex.
    pub shader: Option<((u64, u32), TraceResult)>,
    shader_pending: Option<(u64, u32)>,
    /// Debug buffers (primitive IDs, overdraw, depth) of the newest requested command.
    pub debug: Option<(u64, Result<Arc<DebugView>, String>)>,
    debug_pending: Option<u64>,
    /// Trace of the newest requested geometry-shader invocation, keyed (draw, invocation).
    pub gs_shader: Option<((u64, u32), TraceResult)>,
    gs_shader_pending: Option<(u64, u32)>,
    /// Resource timeline of the newest "who touched this?" query, keyed (start, len).
    pub resources: Option<((u32, u64), Arc<gpu_core::replay::resources::Timeline>)>,
    resources_pending: Option<(u32, u64)>,
    /// Progress of the running timeline pass: (range, fraction 0-1, events found so far).
    pub resources_progress: Option<((u32, u64), f32, u64)>,
    /// True when the timeline in [`TraceSession::resources`] is partial (its pass was
    /// cancelled).
    pub resources_cancelled: bool,
    /// Newest pixel pick.
    pub pixel: Option<(u64, ImageSource, u32, u32, PixelInfo)>,
    pixel_pending: Option<(u64, ImageSource, u32, u32)>,
    /// Newest pixel history: (command, image, x, y) and the answer.
    pub pixel_history: Option<(
        PixelKey,
        Result<Arc<gpu_core::history::PixelHistory>, String>,
    )>,
    pixel_history_pending: Option<PixelKey>,
    /// The last screen pick's identification (click to identify on a screen).
    pub screen_pick: Option<(PixelKey, Result<Arc<gpu_core::history::ScreenPick>, String>)>,
    screen_pick_pending: Option<PixelKey>,
    thumbs: HashMap<u64, ThumbEntry>,
    /// Search of the command list.
    pub search: SearchState,
    /// The newest combiner-solo images (draw, solo) received.
    pub tev_solo: Option<((u64, TevSolo), SoloResult)>,
    tev_solo_pending: Option<(u64, TevSolo)>,
    /// Messages for the log panel.
    pub log: Vec<String>,
    outbox: Vec<Request>,
    /// The newest answer of the Edits panel's comparison (request id, result).
    pub edit_compare: Option<(u64, Result<Arc<EditImages>, String>)>,
    /// The answer to the last "Save as .ctf" of the Edits panel.
    pub edit_saved: Option<Result<String, String>>,
}

/// A picked pixel: command, image, column, row.
pub type PixelKey = (u64, ImageSource, u32, u32);

impl std::fmt::Debug for TraceSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TraceSession")
            .field("path", &self.info.path)
            .finish_non_exhaustive()
    }
}

impl TraceSession {
    /// A session for a freshly started worker.
    pub fn new(info: TraceInfo, worker: WorkerHandle) -> Self {
        let log = info
            .warnings
            .iter()
            .map(|w| format!("trace warning: {w}"))
            .collect();
        static SESSIONS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = SESSIONS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let time = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Self {
            nonce: time ^ count.rotate_left(48),
            info,
            worker,
            index: None,
            progress: None,
            cancelled: false,
            failed: None,
            provenance: None,
            state: None,
            state_pending: None,
            images: HashMap::new(),
            image_order: VecDeque::new(),
            pages: HashMap::new(),
            page_order: VecDeque::new(),
            pages_pending: HashSet::new(),
            detail: None,
            detail_pending: None,
            shader: None,
            shader_pending: None,
            gs_shader: None,
            gs_shader_pending: None,
            resources: None,
            resources_pending: None,
            resources_progress: None,
            resources_cancelled: false,
            pixel: None,
            pixel_pending: None,
            debug: None,
            debug_pending: None,
            pixel_history: None,
            pixel_history_pending: None,
            screen_pick: None,
            screen_pick_pending: None,
            thumbs: HashMap::new(),
            search: SearchState::default(),
            tev_solo: None,
            tev_solo_pending: None,
            log,
            outbox: Vec::new(),
            edit_compare: None,
            edit_saved: None,
        }
    }

    /// Applies every response waiting in the channel. Returns true if anything arrived.
    pub fn poll(&mut self) -> bool {
        let mut any = false;
        while let Some(r) = self.worker.try_recv() {
            any = true;
            self.apply(r);
        }
        any
    }

    fn apply(&mut self, r: Response) {
        match r {
            Response::Progress(p) => self.progress = Some(p),
            Response::Idle => self.progress = None,
            Response::Indexed(index) => {
                let diags = index.diagnostics.len();
                self.log.push(format!(
                    "indexed: {} frame(s), {} draw(s), {} command(s), {} keyframe(s), {diags} diagnostic(s){}",
                    index.frames.len(),
                    index.draws.len(),
                    index.end.writes,
                    index.keyframes,
                    if index.dropped_diagnostics > 0 {
                        format!(" (+{} not kept)", index.dropped_diagnostics)
                    } else {
                        String::new()
                    }
                ));
                // Budget cuts are listed one by one: they change what the replay shows.
                let budget: Vec<String> = index
                    .diagnostics
                    .iter()
                    .filter(|(_, d)| matches!(d.kind, gpu_core::debug::DiagKind::Budget { .. }))
                    .map(|(at, d)| format!("budget (frame {}): {}", at.frame, d.detail))
                    .collect();
                let shown = budget.len().min(MAX_BUDGET_LOG_LINES);
                self.log.extend(budget[..shown].iter().cloned());
                if budget.len() > shown {
                    self.log.push(format!(
                        "... {} more budget diagnostics",
                        budget.len() - shown
                    ));
                }
                self.index = Some(index);
            }
            Response::Cancelled => {
                self.cancelled = true;
                self.progress = None;
                self.log.push("indexing cancelled".into());
            }
            Response::State(s) => {
                if self.state_pending == Some(s.at) {
                    self.state_pending = None;
                }
                self.state = Some(s);
            }
            Response::Image { at, source, result } => {
                // The worker answers images only for the newest position of a batch; requests
                // for other positions still marked pending were dropped: forget them so that
                // they are asked again when needed.
                let stale: Vec<(u64, ImageSource)> = self
                    .images
                    .iter()
                    .filter(|(k, e)| k.0 != at && matches!(e, ImageEntry::Pending))
                    .map(|(k, _)| *k)
                    .collect();
                for k in stale {
                    self.images.remove(&k);
                    self.image_order.retain(|o| *o != k);
                }
                let entry = match result {
                    Ok(img) => ImageEntry::Ready(img, None),
                    Err(e) => ImageEntry::Failed(e),
                };
                self.insert_image((at, source), entry);
            }
            Response::Pixel {
                at,
                source,
                x,
                y,
                info,
            } => {
                if self.pixel_pending == Some((at, source, x, y)) {
                    self.pixel_pending = None;
                }
                self.pixel = Some((at, source, x, y, info));
            }
            Response::PixelHistory {
                at,
                source,
                x,
                y,
                result,
            } => {
                let key = (at, source, x, y);
                if self.pixel_history_pending == Some(key) {
                    self.pixel_history_pending = None;
                }
                self.pixel_history = Some((key, result));
            }
            Response::ScreenPick {
                at,
                source,
                x,
                y,
                result,
            } => {
                let key = (at, source, x, y);
                if self.screen_pick_pending == Some(key) {
                    self.screen_pick_pending = None;
                }
                self.screen_pick = Some((key, result));
            }
            Response::WhoTouchedProgress {
                start,
                len,
                fraction,
                events,
            } => {
                if self.resources_pending == Some((start, len)) {
                    self.resources_progress = Some(((start, len), fraction, events));
                }
            }
            Response::Commands(page) => {
                let key = (page.first - 1) / PAGE;
                self.pages_pending.remove(&key);
                self.pages.insert(key, page);
                self.page_order.push_back(key);
                while self.page_order.len() > MAX_PAGES {
                    if let Some(old) = self.page_order.pop_front() {
                        self.pages.remove(&old);
                    }
                }
            }
            Response::DebugBuffers { at, result } => {
                if self.debug_pending == Some(at) {
                    self.debug_pending = None;
                }
                if let Err(e) = &result {
                    self.log.push(format!("debug buffers at command {at}: {e}"));
                }
                self.debug = Some((at, result));
            }
            Response::DrawDetail { draw, result } => {
                if self.detail_pending == Some(draw) {
                    self.detail_pending = None;
                }
                if let Err(e) = &result {
                    self.log.push(format!("draw {draw}: {e}"));
                }
                self.detail = Some((draw, result));
            }
            Response::ShaderTrace {
                draw,
                index_in_draw,
                result,
            } => {
                if self.shader_pending == Some((draw, index_in_draw)) {
                    self.shader_pending = None;
                }
                self.shader = Some(((draw, index_in_draw), result));
            }
            Response::GsTrace {
                draw,
                invocation,
                result,
            } => {
                if self.gs_shader_pending == Some((draw, invocation)) {
                    self.gs_shader_pending = None;
                }
                self.gs_shader = Some(((draw, invocation), result));
            }
            Response::WhoTouched {
                start,
                len,
                result,
                complete,
            } => {
                if self.resources_pending == Some((start, len)) {
                    self.resources_pending = None;
                }
                self.resources_progress = None;
                self.resources_cancelled = !complete;
                self.resources = Some(((start, len), result));
            }
            Response::Thumbnails(list) => {
                for (d, t) in list {
                    let e = match t {
                        Some(t) => ThumbEntry::Ready(t, None),
                        None => ThumbEntry::Missing,
                    };
                    if self.thumbs.len() >= MAX_THUMBS && !self.thumbs.contains_key(&d) {
                        // Drop every other entry rather than growing without bound.
                        let keys: Vec<u64> = self.thumbs.keys().copied().step_by(2).collect();
                        for k in keys {
                            self.thumbs.remove(&k);
                        }
                    }
                    self.thumbs.insert(d, e);
                }
            }
            Response::Provenance(p) => {
                if p.truncated {
                    self.log.push(format!(
                        "register history is complete up to command {} only (memory limit)",
                        p.complete_until
                    ));
                }
                self.provenance = Some(p);
            }
            Response::SearchResult {
                id,
                matches,
                truncated,
            } => {
                if id == self.search.id {
                    self.search.pending = false;
                    self.search.matches = matches;
                    self.search.truncated = truncated;
                }
            }
            Response::TevSolo { draw, solo, result } => {
                if self.tev_solo_pending == Some((draw, solo)) {
                    self.tev_solo_pending = None;
                }
                self.tev_solo = Some(((draw, solo), result));
            }
            Response::EditCompare { id, result } => self.edit_compare = Some((id, result)),
            Response::Saved(result) => {
                self.log.push(match &result {
                    Ok(m) => m.clone(),
                    Err(e) => format!("error: {e}"),
                });
                self.edit_saved = Some(result);
            }
            Response::Log(m) => self.log.push(m),
            Response::Failed(m) => {
                self.log.push(format!("error: {m}"));
                self.progress = None;
                self.failed = Some(m);
            }
        }
    }

    fn insert_image(&mut self, key: (u64, ImageSource), entry: ImageEntry) {
        if !self.images.contains_key(&key) {
            self.image_order.push_back(key);
        }
        self.images.insert(key, entry);
        while self.image_order.len() > MAX_IMAGES {
            if let Some(old) = self.image_order.pop_front() {
                self.images.remove(&old);
            }
        }
    }

    /// Files a request of the Edits panel (sent at the next flush).
    pub fn send_edit_request(&mut self, r: Request) {
        self.outbox.push(r);
    }

    /// Sends the requests filed since the last flush.
    pub fn flush(&mut self) {
        for r in self.outbox.drain(..) {
            self.worker.send(r);
        }
    }

    /// Cancels indexing.
    pub fn cancel(&self) {
        self.worker.cancel();
    }

    /// True while the index is being built.
    pub fn loading(&self) -> bool {
        self.index.is_none() && !self.cancelled && self.failed.is_none()
    }

    /// True when no answer is outstanding (background analysis aside).
    pub fn idle(&self) -> bool {
        self.index.is_some()
            && self.state_pending.is_none()
            && self.pages_pending.is_empty()
            && self.detail_pending.is_none()
            && self.shader_pending.is_none()
            && self.gs_shader_pending.is_none()
            && self.resources_pending.is_none()
            && self.pixel_pending.is_none()
            && !self.search.pending
            && self.tev_solo_pending.is_none()
            && !self
                .images
                .values()
                .any(|e| matches!(e, ImageEntry::Pending))
    }

    /// Total number of commands (register writes) in the trace.
    pub fn total_commands(&self) -> u64 {
        self.index.as_ref().map_or(0, |i| i.end.writes)
    }

    /// The state as of command `at` (requested if it is not the newest snapshot).
    pub fn want_state(&mut self, at: u64) -> Option<Arc<StateSnapshot>> {
        let have = self.state.as_ref().is_some_and(|s| s.at == at);
        if !have && self.state_pending != Some(at) && self.index.is_some() {
            self.state_pending = Some(at);
            self.outbox.push(Request::State { at });
        }
        self.state.clone()
    }

    /// True if the newest snapshot is for `at`.
    pub fn state_is_current(&self, at: u64) -> bool {
        self.state.as_ref().is_some_and(|s| s.at == at)
    }

    /// An image as of command `at`; requested when missing.
    pub fn want_image(&mut self, at: u64, source: ImageSource) -> ImageEntry {
        if self.index.is_none() {
            return ImageEntry::Pending;
        }
        match self.images.get(&(at, source)) {
            Some(e) => e.clone(),
            None => {
                self.insert_image((at, source), ImageEntry::Pending);
                self.outbox.push(Request::Image { at, source });
                ImageEntry::Pending
            }
        }
    }

    /// The (opaque) texture of a ready image, made once.
    pub fn image_texture(
        &mut self,
        ctx: &egui::Context,
        at: u64,
        source: ImageSource,
    ) -> Option<(Arc<ImageData>, egui::TextureHandle)> {
        let entry = self.images.get_mut(&(at, source))?;
        let ImageEntry::Ready(img, tex) = entry else {
            return None;
        };
        let tex = tex.get_or_insert_with(|| {
            // Opaque: colour buffers often hold alpha 0, which would hide the picture.
            let opaque: Vec<[u8; 4]> = img.pixels.iter().map(|p| [p[0], p[1], p[2], 255]).collect();
            ctx.load_texture(
                format!("image-{at}-{source:?}"),
                color_image(img.width, img.height, &opaque),
                egui::TextureOptions::NEAREST,
            )
        });
        Some((img.clone(), tex.clone()))
    }

    /// The newest ready image for `source` at any position (shown while the exact one loads).
    pub fn any_image(&self, source: ImageSource) -> Option<u64> {
        self.image_order
            .iter()
            .rev()
            .find(|(_, s)| *s == source)
            .filter(|k| matches!(self.images.get(k), Some(ImageEntry::Ready(..))))
            .map(|(at, _)| *at)
    }

    /// The write of command `n`, if its page is here (its page is requested otherwise).
    pub fn want_command(&mut self, n: u64) -> Option<gpu_core::debug::RegWriteEvent> {
        if n == 0 || self.index.is_none() {
            return None;
        }
        let key = (n - 1) / PAGE;
        match self.pages.get(&key) {
            Some(p) => p.writes.get((n - p.first) as usize).copied(),
            None => {
                if self.pages_pending.insert(key) {
                    self.outbox.push(Request::Commands {
                        first: key * PAGE + 1,
                        // ok: PAGE is 4096.
                        count: PAGE as u32,
                    });
                }
                None
            }
        }
    }

    /// What command `n` did to a data port, if its page is here and it fed one.
    pub fn command_effect(&self, n: u64) -> Option<&super::ports::PortEffect> {
        let key = n.checked_sub(1)? / PAGE;
        let p = self.pages.get(&key)?;
        p.effects.get(usize::try_from(n - p.first).ok()?)?.as_ref()
    }

    /// Draw detail of `draw` (requested when missing).
    pub fn want_detail(&mut self, draw: u64) -> Option<&Result<Arc<DrawInspection>, String>> {
        let have = self.detail.as_ref().is_some_and(|(d, _)| *d == draw);
        if !have && self.detail_pending != Some(draw) && self.index.is_some() {
            self.detail_pending = Some(draw);
            self.outbox.push(Request::DrawDetail { draw });
        }
        self.detail
            .as_ref()
            .filter(|(d, _)| *d == draw)
            .map(|(_, r)| r)
    }

    /// Debug buffers as of command `at` (requested when missing).
    pub fn want_debug(&mut self, at: u64) -> Option<&Result<Arc<DebugView>, String>> {
        let have = self.debug.as_ref().is_some_and(|(a, _)| *a == at);
        if !have && self.debug_pending != Some(at) && self.index.is_some() {
            self.debug_pending = Some(at);
            self.outbox.push(Request::DebugBuffers { at });
        }
        self.debug
            .as_ref()
            .filter(|(a, _)| *a == at)
            .map(|(_, r)| r)
    }

    /// True while draw detail is on its way.
    pub fn detail_pending(&self) -> bool {
        self.detail_pending.is_some()
    }

    /// Shader trace of vertex `k` of `draw` (requested when missing).
    pub fn want_shader(&mut self, draw: u64, k: u32) -> Option<&Result<Arc<ShaderTrace>, String>> {
        let have = self
            .shader
            .as_ref()
            .is_some_and(|(key, _)| *key == (draw, k));
        if !have && self.shader_pending != Some((draw, k)) && self.index.is_some() {
            self.shader_pending = Some((draw, k));
            self.outbox.push(Request::ShaderTrace {
                draw,
                index_in_draw: k,
            });
        }
        self.shader
            .as_ref()
            .filter(|(key, _)| *key == (draw, k))
            .map(|(_, r)| r)
    }

    /// The colour buffer after `draw` with and without the combiner solo `solo` (requested
    /// when missing; the newest answer is kept).
    pub fn want_tev_solo(&mut self, draw: u64, solo: TevSolo) -> Option<&SoloResult> {
        let key = (draw, solo);
        let have = self.tev_solo.as_ref().is_some_and(|(k, _)| *k == key);
        if !have && self.tev_solo_pending != Some(key) && self.index.is_some() {
            self.tev_solo_pending = Some(key);
            self.outbox.push(Request::TevSolo { draw, solo });
        }
        self.tev_solo
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, r)| r)
    }

    /// Trace of geometry-shader invocation `invocation` of `draw` (requested when missing).
    pub fn want_gs_shader(
        &mut self,
        draw: u64,
        invocation: u32,
    ) -> Option<&Result<Arc<ShaderTrace>, String>> {
        let key = (draw, invocation);
        let have = self.gs_shader.as_ref().is_some_and(|(k, _)| *k == key);
        if !have && self.gs_shader_pending != Some(key) && self.index.is_some() {
            self.gs_shader_pending = Some(key);
            self.outbox.push(Request::GsTrace { draw, invocation });
        }
        self.gs_shader
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, r)| r)
    }

    /// True while combiner-solo images are on their way.
    pub fn tev_solo_pending(&self) -> bool {
        self.tev_solo_pending.is_some()
    }

    /// The resource timeline of `[start, start + len)` (requested when missing).
    pub fn want_resources(
        &mut self,
        start: u32,
        len: u64,
    ) -> Option<Arc<gpu_core::replay::resources::Timeline>> {
        let key = (start, len);
        let have = self.resources.as_ref().is_some_and(|(k, _)| *k == key);
        if !have && self.resources_pending != Some(key) && self.index.is_some() {
            self.resources_pending = Some(key);
            self.outbox.push(Request::WhoTouched { start, len });
        }
        self.resources
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, t)| t.clone())
    }

    /// True while the timeline pass of range (start, len) runs.
    pub fn resources_running(&self, start: u32, len: u64) -> bool {
        self.resources_pending == Some((start, len))
    }

    /// Cancels the running timeline pass (the worker answers with the events found so far).
    pub fn cancel_resources(&self) {
        if self.resources_pending.is_some() {
            self.worker.cancel();
        }
    }

    /// Forgets the (partial) timeline of range (start, len), so that the next
    /// [`TraceSession::want_resources`] runs the pass again.
    pub fn rerun_resources(&mut self, start: u32, len: u64) {
        if self
            .resources
            .as_ref()
            .is_some_and(|(k, _)| *k == (start, len))
        {
            self.resources = None;
            self.resources_cancelled = false;
        }
    }

    /// Picks a pixel.
    pub fn pick(&mut self, at: u64, source: ImageSource, x: u32, y: u32) {
        if self.pixel_pending != Some((at, source, x, y)) {
            self.pixel_pending = Some((at, source, x, y));
            self.outbox.push(Request::Pixel { at, source, x, y });
        }
    }

    /// Asks for the history of a pixel (answered into [`TraceSession::pixel_history`]).
    pub fn request_pixel_history(&mut self, key: PixelKey) {
        let have = self.pixel_history.as_ref().is_some_and(|(k, _)| *k == key);
        if !have && self.pixel_history_pending != Some(key) {
            self.pixel_history_pending = Some(key);
            let (at, source, x, y) = key;
            self.outbox.push(Request::PixelHistory { at, source, x, y });
        }
    }

    /// Asks which colour-buffer pixel and primitive a screen pixel shows (answered into
    /// [`TraceSession::screen_pick`]).
    pub fn request_screen_pick(&mut self, key: PixelKey) {
        let have = self.screen_pick.as_ref().is_some_and(|(k, _)| *k == key);
        if !have && self.screen_pick_pending != Some(key) {
            self.screen_pick_pending = Some(key);
            let (at, source, x, y) = key;
            self.outbox.push(Request::ScreenPick { at, source, x, y });
        }
    }

    /// The identification of screen pick `key`, once the worker answered.
    pub fn screen_pick_for(
        &self,
        key: PixelKey,
    ) -> Option<&Result<Arc<gpu_core::history::ScreenPick>, String>> {
        self.screen_pick
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, r)| r)
    }

    /// True while a pixel history is being computed.
    pub fn pixel_history_pending(&self) -> bool {
        self.pixel_history_pending.is_some()
    }

    /// Thumbnail texture of `draw` (requested when missing).
    pub fn want_thumb(&mut self, ctx: &egui::Context, draw: u64) -> Option<egui::TextureHandle> {
        match self.thumbs.get_mut(&draw) {
            None => {
                self.thumbs.insert(draw, ThumbEntry::Pending);
                self.outbox.push(Request::Thumbnail { draw });
                None
            }
            Some(ThumbEntry::Ready(t, tex)) => Some(
                tex.get_or_insert_with(|| {
                    ctx.load_texture(
                        format!("thumb-{draw}"),
                        color_image(t.width, t.height, &t.pixels),
                        egui::TextureOptions::LINEAR,
                    )
                })
                .clone(),
            ),
            Some(_) => None,
        }
    }

    /// True when a thumbnail for `draw` has arrived (made or known missing).
    pub fn has_thumb(&self, draw: u64) -> bool {
        matches!(
            self.thumbs.get(&draw),
            Some(ThumbEntry::Ready(..) | ThumbEntry::Missing)
        )
    }

    /// Starts a search of commands `first..=last`.
    pub fn search(&mut self, query: &str, first: u64, last: u64) {
        self.search.id += 1;
        self.search.query = query.to_string();
        self.search.range = (first, last);
        self.search.pending = true;
        self.search.matches.clear();
        self.outbox.push(Request::Search {
            id: self.search.id,
            first,
            last,
            query: query.to_string(),
        });
    }

    /// The frame containing command `n` (frames cover contiguous command ranges).
    pub fn frame_of(&self, n: u64) -> Option<&FrameInfo> {
        let index = self.index.as_ref()?;
        let i = index.frames.partition_point(|f| f.end.writes < n);
        index.frames.get(i).or(index.frames.last())
    }

    /// The draw whose triggering command is `n`, or the last draw triggered at or before it.
    pub fn draw_at_or_before(&self, n: u64) -> Option<u64> {
        let index = self.index.as_ref()?;
        let i = index.draws.partition_point(|d| d.before.writes < n);
        i.checked_sub(1).map(|i| i as u64)
    }
}

/// An egui image from RGBA8 pixels.
pub fn color_image(width: u32, height: u32, pixels: &[[u8; 4]]) -> egui::ColorImage {
    let mut bytes = Vec::with_capacity(pixels.len() * 4);
    for p in pixels {
        bytes.extend_from_slice(p);
    }
    bytes.resize(width as usize * height as usize * 4, 0);
    egui::ColorImage::from_rgba_unmultiplied([width as usize, height as usize], &bytes)
}

/// The open document.
pub enum Document {
    /// Nothing open.
    None,
    /// A trace.
    Trace(Box<TraceSession>),
    /// A shader binary.
    Shader(Box<ShaderSession>),
}

/// An open shader binary with the shader debugger's inputs.
#[derive(Clone, Debug)]
pub struct ShaderSession {
    /// The file.
    pub doc: ShaderDoc,
    /// Selected DVLE.
    pub dvle: usize,
    /// Inputs, uniforms and budget as edited.
    pub edits: super::shbin_debug::ShaderInputs,
    /// The newest run.
    pub trace: Option<Result<Arc<ShaderTrace>, String>>,
    /// Runs so far (a new run starts the views at the top).
    pub runs: u64,
    /// Set by Run: the app stores `edits` in the preferences, then clears it.
    pub remember: bool,
}

impl ShaderSession {
    /// The preferences key of the edits of DVLE `dvle` of this file.
    pub fn prefs_key(&self, dvle: usize) -> String {
        format!("{}#{dvle}", self.doc.path.display())
    }
}
