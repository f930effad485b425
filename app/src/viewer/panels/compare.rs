//! Compare mode: a second trace (or the same trace under another configuration) next to the
//! open one. The image row shows A | B | difference after the selected draw, and "First
//! difference" runs the lock-step diff ([`gpu_core::replay::diff`]) and jumps to the draw.
//!
//! Stage: viewer panel. Inputs: the open trace's path, trace B's path typed by the user, the two
//! run configurations (vertex-shader engine, pixel path, texture sampling), the selection.
//! Output: [`AppCommand::SelectDraw`] after a diff, and what it shows.
//!
//! The panel starts its own worker thread ([`CompareWorker`]) that owns two fresh replays
//! (A and B, each indexed once with keyframes under [`COMPARE_KEYFRAME_BUDGET`]), so the main
//! replay worker is never blocked by a long diff. Indexing and the diff report progress and can
//! be cancelled; every answer wakes the UI. The worker stops when the panel drops it.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};

use eframe::egui;
use gpu_core::draw::VsEngine;
use gpu_core::fragment::PixelPath;
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::diff::{DiffOptions, DiffOutcome, RunConfig, diff_replays, set_side_edits};
use gpu_core::replay::edit::EditList;
use gpu_core::replay::{Replay, Target, screen_image};
use gpu_core::texture::{DecodedImage, RenderMode};
use pica_cmd::citrace::{CiTrace, TraceSource};

use super::super::command::{AppCommand, Selection};
use super::super::load::FileKind;
use super::super::session::{TraceSession, color_image};

/// Keyframe budget of each of the compare worker's two replays.
pub const COMPARE_KEYFRAME_BUDGET: u64 = 64 << 20;

/// Which image the compare row shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompareImage {
    /// The PICA colour buffer after the draw.
    Color,
    /// The top screen.
    Top,
    /// The bottom screen.
    Bottom,
}

impl CompareImage {
    fn label(self) -> &'static str {
        match self {
            CompareImage::Color => "Colour buffer",
            CompareImage::Top => "Top screen",
            CompareImage::Bottom => "Bottom screen",
        }
    }
}

/// A request to the compare worker.
#[derive(Clone, Debug)]
pub enum CompareRequest {
    /// A | B | difference after draw `draw`.
    Images {
        /// Draw index (0-based over the trace).
        draw: u64,
        /// Which image.
        source: CompareImage,
    },
    /// Run the lock-step diff.
    FirstDifference,
}

/// The three images of the compare row.
#[derive(Clone, Debug)]
pub struct CompareImages {
    /// Draw index.
    pub draw: u64,
    /// Which image.
    pub source: CompareImage,
    /// Side A's image (or why there is none).
    pub a: Result<DecodedImage, String>,
    /// Side B's image.
    pub b: Result<DecodedImage, String>,
    /// Difference image (when both exist with the same size): differing pixels red,
    /// equal ones a dim grey copy of A.
    pub diff: Option<DecodedImage>,
    /// Pixels that differ.
    pub differing: u64,
}

/// An answer of the compare worker.
#[derive(Clone, Debug)]
pub enum CompareResponse {
    /// Both traces are indexed.
    Ready {
        /// Draws of A.
        draws_a: usize,
        /// Draws of B.
        draws_b: usize,
    },
    /// A long operation advanced.
    Progress(String, f32),
    /// Images.
    Images(Arc<CompareImages>),
    /// The diff finished (or failed / was cancelled).
    Diff(Result<DiffOutcome, String>),
    /// The worker could not start (unreadable trace) or was cancelled while indexing.
    Failed(String),
}

/// The UI's end of the compare worker.
pub struct CompareWorker {
    tx: Option<Sender<CompareRequest>>,
    rx: Receiver<CompareResponse>,
    cancel: Arc<AtomicBool>,
}

impl Drop for CompareWorker {
    fn drop(&mut self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.tx = None;
    }
}

impl CompareWorker {
    /// Starts a worker comparing `a` under `ca` with `b` under `cb` (and, if given, the edit
    /// list `edits_b`); `wake` is called after every answer.
    pub fn spawn(
        a: PathBuf,
        ca: RunConfig,
        b: PathBuf,
        cb: RunConfig,
        edits_b: Option<EditList>,
        wake: Arc<dyn Fn() + Send + Sync>,
    ) -> std::io::Result<Self> {
        let (req_tx, req_rx) = mpsc::channel();
        let (resp_tx, resp_rx) = mpsc::channel();
        let cancel = Arc::new(AtomicBool::new(false));
        let flag = cancel.clone();
        std::thread::Builder::new()
            .name("picaview-compare".into())
            .spawn(move || {
                let send = |r: CompareResponse| {
                    let _ = resp_tx.send(r);
                    wake();
                };
                worker_main(&a, ca, &b, cb, edits_b, &req_rx, &send, &flag);
            })?;
        Ok(Self {
            tx: Some(req_tx),
            rx: resp_rx,
            cancel,
        })
    }

    /// Sends a request.
    pub fn send(&self, r: CompareRequest) {
        if let Some(tx) = &self.tx {
            let _ = tx.send(r);
        }
    }

    /// The next answer, if any.
    pub fn try_recv(&self) -> Option<CompareResponse> {
        self.rx.try_recv().ok()
    }

    /// Stops the running long operation.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::SeqCst);
    }
}

fn open(path: &std::path::Path, cfg: RunConfig) -> Result<Replay<impl TraceSource>, String> {
    let trace = CiTrace::open(path)
        .map_err(|e| format!("{}: not a readable CiTrace: {e}", path.display()))?;
    let mut r = Replay::new(trace);
    cfg.apply(&mut r);
    r.set_keyframe_budget(COMPARE_KEYFRAME_BUDGET);
    Ok(r)
}

#[allow(clippy::too_many_arguments)]
fn worker_main(
    pa: &std::path::Path,
    ca: RunConfig,
    pb: &std::path::Path,
    cb: RunConfig,
    edits_b: Option<EditList>,
    rx: &Receiver<CompareRequest>,
    send: &dyn Fn(CompareResponse),
    cancel: &AtomicBool,
) {
    let (mut a, mut b) = match (open(pa, ca), open(pb, cb)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => {
            send(CompareResponse::Failed(e));
            return;
        }
    };
    if let Some(edits) = edits_b
        && let Err(e) = set_side_edits(&mut b, edits)
    {
        send(CompareResponse::Failed(format!(
            "the edit list of side B: {e}"
        )));
        return;
    }
    let mut draws = [0usize; 2];
    for (i, (name, r)) in [("A", &mut a as &mut dyn Indexable), ("B", &mut b)]
        .into_iter()
        .enumerate()
    {
        let task = format!("Indexing trace {name}");
        send(CompareResponse::Progress(task.clone(), 0.0));
        match r.index(&mut |f| {
            if let Some(f) = f {
                send(CompareResponse::Progress(task.clone(), f));
            }
            !cancel.load(Ordering::Relaxed)
        }) {
            Some(n) => draws[i] = n,
            None => {
                send(CompareResponse::Failed("indexing cancelled".into()));
                return;
            }
        }
    }
    send(CompareResponse::Ready {
        draws_a: draws[0],
        draws_b: draws[1],
    });
    while let Ok(req) = rx.recv() {
        cancel.store(false, Ordering::SeqCst);
        match req {
            CompareRequest::Images { draw, source } => {
                let ia = image_after(&mut a, draw, source);
                let ib = image_after(&mut b, draw, source);
                send(CompareResponse::Images(Arc::new(difference(
                    draw, source, ia, ib,
                ))));
            }
            CompareRequest::FirstDifference => {
                let total = draws[0].max(draws[1]).max(1) as f32;
                let mut last = std::time::Instant::now();
                let result = diff_replays(&mut a, &mut b, &DiffOptions::default(), &mut |n| {
                    if last.elapsed() >= std::time::Duration::from_millis(80) {
                        last = std::time::Instant::now();
                        send(CompareResponse::Progress(
                            "Looking for the first difference".into(),
                            n as f32 / total,
                        ));
                    }
                    !cancel.load(Ordering::Relaxed)
                });
                send(CompareResponse::Diff(result.map_err(|e| e.to_string())));
            }
        }
    }
}

/// Indexing behind a trait object, so both replays (of possibly different sources) share the
/// loop above.
trait Indexable {
    /// Builds the index; `progress` gets `Some(fraction)` now and then and `None` after every
    /// other step, and returns false to cancel. Returns the number of draws (`None`: cancelled).
    fn index(&mut self, progress: &mut dyn FnMut(Option<f32>) -> bool) -> Option<usize>;
}

impl<S: TraceSource> Indexable for Replay<S> {
    fn index(&mut self, progress: &mut dyn FnMut(Option<f32>) -> bool) -> Option<usize> {
        let total = self.trace().elements().len().max(1) as f32;
        let mut last = std::time::Instant::now();
        let idx = self.build_index_with(&mut |pos| {
            if last.elapsed() >= std::time::Duration::from_millis(80) {
                last = std::time::Instant::now();
                progress(Some(pos.element as f32 / total))
            } else {
                progress(None)
            }
        })?;
        Some(idx.draws.len())
    }
}

fn image_after<S: TraceSource>(
    r: &mut Replay<S>,
    draw: u64,
    source: CompareImage,
) -> Result<DecodedImage, String> {
    if !r.seek(Target::AfterDraw(draw), &mut ()) {
        return Err(format!("the trace has no draw {draw}"));
    }
    let (gpu, mem) = (r.gpu(), r.mem());
    match source {
        CompareImage::Top => screen_image(gpu, mem, Screen::Top).map_err(|e| e.to_string()),
        CompareImage::Bottom => screen_image(gpu, mem, Screen::Bottom).map_err(|e| e.to_string()),
        CompareImage::Color => {
            let fb = FramebufferConfig::from_regs(&gpu.regs);
            let pixels = fb.read_color_image(mem).map_err(|e| e.to_string())?;
            Ok(DecodedImage {
                width: fb.width,
                height: fb.height,
                pixels,
            })
        }
    }
}

/// Builds the difference image of two images of the same size.
pub fn difference(
    draw: u64,
    source: CompareImage,
    a: Result<DecodedImage, String>,
    b: Result<DecodedImage, String>,
) -> CompareImages {
    let mut differing = 0u64;
    let diff = match (&a, &b) {
        (Ok(x), Ok(y)) if (x.width, x.height) == (y.width, y.height) => {
            let pixels = x
                .pixels
                .iter()
                .zip(&y.pixels)
                .map(|(p, q)| {
                    let d = (0..4).map(|c| p[c].abs_diff(q[c])).max().unwrap_or(0);
                    if d > 0 {
                        differing += 1;
                        [128u8.saturating_add(d / 2), 0, 0, 255]
                    } else {
                        let g = ((u16::from(p[0]) + u16::from(p[1]) + u16::from(p[2])) / 12) as u8;
                        [g, g, g, 255]
                    }
                })
                .collect();
            Some(DecodedImage {
                width: x.width,
                height: x.height,
                pixels,
            })
        }
        _ => None,
    };
    CompareImages {
        draw,
        source,
        a,
        b,
        diff,
        differing,
    }
}

/// What a worker compares: A path, B path, configurations, side B's edit list.
type Started = (PathBuf, PathBuf, RunConfig, RunConfig, Option<EditList>);

/// The compare panel's state.
pub struct CompareView {
    /// Path of trace B as typed (empty: the open trace itself).
    pub path_b: String,
    /// Configuration of side A.
    pub config_a: RunConfig,
    /// Configuration of side B.
    pub config_b: RunConfig,
    /// Side B replays under the Edits tab's edit list (one trace with the edits off vs on).
    pub edits_b: bool,
    /// Which image the row shows.
    pub source: CompareImage,
    /// The running worker.
    worker: Option<CompareWorker>,
    /// What the worker compares: (A path, B path, configs).
    started: Option<Started>,
    /// Draws of A and B once indexed.
    pub ready: Option<(usize, usize)>,
    /// Progress of the worker's long operation.
    pub progress: Option<(String, f32)>,
    /// The last diff result (or error text).
    pub result: Option<Result<DiffOutcome, String>>,
    /// A diff is running.
    pub diff_running: bool,
    /// Worker failure.
    pub error: Option<String>,
    /// The images shown and their textures.
    images: Option<(Arc<CompareImages>, [Option<egui::TextureHandle>; 3])>,
    /// Images asked for and not yet answered.
    pending: Option<(u64, CompareImage)>,
}

impl std::fmt::Debug for CompareView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompareView")
            .field("path_b", &self.path_b)
            .field("config_a", &self.config_a)
            .field("config_b", &self.config_b)
            .field("ready", &self.ready)
            .field("result", &self.result)
            .finish_non_exhaustive()
    }
}

impl Default for CompareView {
    fn default() -> Self {
        Self {
            path_b: String::new(),
            config_a: RunConfig::default(),
            config_b: RunConfig::default(),
            edits_b: false,
            source: CompareImage::Color,
            worker: None,
            started: None,
            ready: None,
            progress: None,
            result: None,
            diff_running: false,
            error: None,
            images: None,
            pending: None,
        }
    }
}

fn config_ui(ui: &mut egui::Ui, side: &str, c: &mut RunConfig) {
    ui.horizontal(|ui| {
        ui.label(format!("{side}:"));
        egui::ComboBox::from_label(format!("{side} shader engine"))
            .selected_text(match c.vs_engine {
                VsEngine::Fast => "fast",
                VsEngine::Reference => "reference",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut c.vs_engine, VsEngine::Fast, "fast");
                ui.selectable_value(&mut c.vs_engine, VsEngine::Reference, "reference");
            });
        egui::ComboBox::from_label(format!("{side} pixel path"))
            .selected_text(match c.pixel_path {
                PixelPath::Specialized => "specialized",
                PixelPath::Reference => "reference",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut c.pixel_path, PixelPath::Specialized, "specialized");
                ui.selectable_value(&mut c.pixel_path, PixelPath::Reference, "reference");
            });
        egui::ComboBox::from_label(format!("{side} textures"))
            .selected_text(match c.render_mode {
                RenderMode::Hardware => "hardware",
                RenderMode::CitraSwrast => "citra-swrast",
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut c.render_mode, RenderMode::Hardware, "hardware");
                ui.selectable_value(&mut c.render_mode, RenderMode::CitraSwrast, "citra-swrast");
            });
    });
}

impl CompareView {
    /// The path of trace B (the open trace when the field is empty).
    fn b_path(&self, a: &std::path::Path) -> PathBuf {
        let t = self.path_b.trim();
        if t.is_empty() {
            a.to_path_buf()
        } else {
            PathBuf::from(t)
        }
    }

    /// Starts (or restarts) the worker for the current paths and configurations; `edits` is
    /// the Edits tab's list, used for side B when [`CompareView::edits_b`] is set.
    pub fn start(&mut self, ctx: &egui::Context, a: PathBuf, edits: &EditList) {
        let edits_b = self.edits_b.then(|| edits.clone());
        let b = self.b_path(&a);
        self.worker = None;
        self.ready = None;
        self.result = None;
        self.error = None;
        self.images = None;
        self.pending = None;
        self.diff_running = false;
        let ctx2 = ctx.clone();
        match CompareWorker::spawn(
            a.clone(),
            self.config_a,
            b.clone(),
            self.config_b,
            edits_b.clone(),
            Arc::new(move || ctx2.request_repaint()),
        ) {
            Ok(w) => {
                self.worker = Some(w);
                self.started = Some((a, b, self.config_a, self.config_b, edits_b));
                self.progress = Some(("Starting".into(), 0.0));
            }
            Err(e) => self.error = Some(format!("cannot start the compare thread: {e}")),
        }
    }

    /// Reads the worker's answers; queues the jump to a found difference.
    fn poll(&mut self, ctx: &egui::Context, q: &mut Vec<AppCommand>) {
        let Some(w) = &self.worker else { return };
        while let Some(r) = w.try_recv() {
            match r {
                CompareResponse::Ready { draws_a, draws_b } => {
                    self.ready = Some((draws_a, draws_b));
                    self.progress = None;
                }
                CompareResponse::Progress(t, f) => self.progress = Some((t, f)),
                CompareResponse::Images(imgs) => {
                    if self.pending == Some((imgs.draw, imgs.source)) {
                        self.pending = None;
                    }
                    let tex = |name: &str, img: Option<&DecodedImage>| {
                        img.map(|i| {
                            ctx.load_texture(
                                name,
                                color_image(i.width, i.height, &i.pixels),
                                egui::TextureOptions::NEAREST,
                            )
                        })
                    };
                    let t = [
                        tex("compare-a", imgs.a.as_ref().ok()),
                        tex("compare-b", imgs.b.as_ref().ok()),
                        tex("compare-diff", imgs.diff.as_ref()),
                    ];
                    self.images = Some((imgs, t));
                }
                CompareResponse::Diff(r) => {
                    self.diff_running = false;
                    self.progress = None;
                    if let Ok(DiffOutcome::Different(d)) = &r
                        && let Some(draw) = d.draw
                    {
                        q.push(AppCommand::SelectDraw(draw));
                    }
                    self.result = Some(r);
                }
                CompareResponse::Failed(e) => {
                    self.error = Some(e);
                    self.progress = None;
                    self.diff_running = false;
                }
            }
        }
    }

    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        sel: &Selection,
        edits: &EditList,
        q: &mut Vec<AppCommand>,
    ) {
        let ctx = ui.ctx().clone();
        self.poll(&ctx, q);
        if s.info.kind != FileKind::Trace {
            ui.label("Compare mode needs a CiTrace (.ctf) file on side A.");
            return;
        }
        let a_path = s.info.path.clone();
        ui.horizontal(|ui| {
            let l = ui.label("Trace B:");
            ui.add(
                egui::TextEdit::singleline(&mut self.path_b)
                    .hint_text("empty: the open trace")
                    .desired_width(360.0),
            )
            .labelled_by(l.id);
            if ui
                .button("Start comparing")
                .on_hover_text("Open trace B and index both")
                .clicked()
            {
                self.start(&ctx, a_path.clone(), edits);
            }
        });
        config_ui(ui, "A", &mut self.config_a);
        config_ui(ui, "B", &mut self.config_b);
        let enabled = edits.edits.iter().filter(|e| e.enabled).count();
        ui.checkbox(
            &mut self.edits_b,
            format!("B: apply the Edits tab's list ({enabled} enabled edit(s))"),
        )
        .on_hover_text("Compare with the edits off (A) and on (B)");
        let current = (
            a_path.clone(),
            self.b_path(&a_path),
            self.config_a,
            self.config_b,
            self.edits_b.then(|| edits.clone()),
        );
        if self.started.as_ref().is_some_and(|st| *st != current) && self.worker.is_some() {
            ui.label("The paths or configurations changed: press Start comparing to apply them.");
        }
        if let Some(e) = &self.error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        if let Some((task, f)) = &self.progress {
            ui.horizontal(|ui| {
                ui.label(task.as_str());
                ui.add(egui::ProgressBar::new(f.clamp(0.0, 1.0)).desired_width(200.0));
                if ui.button("Cancel compare").clicked()
                    && let Some(w) = &self.worker
                {
                    w.cancel();
                }
            });
        }
        let Some((draws_a, draws_b)) = self.ready else {
            if self.worker.is_none() {
                ui.label("Choose trace B (or leave it empty) and the configurations, then press Start comparing.");
            }
            return;
        };
        ui.label(format!("A: {draws_a} draw(s), B: {draws_b} draw(s)"));
        ui.horizontal(|ui| {
            let busy = self.diff_running;
            if ui
                .add_enabled(!busy, egui::Button::new("First difference"))
                .on_hover_text(
                    "Replay A and B draw by draw and jump to the first draw that differs",
                )
                .clicked()
                && let Some(w) = &self.worker
            {
                w.send(CompareRequest::FirstDifference);
                self.diff_running = true;
                self.result = None;
            }
            for src in [CompareImage::Color, CompareImage::Top, CompareImage::Bottom] {
                ui.radio_value(&mut self.source, src, src.label());
            }
        });
        match &self.result {
            Some(Ok(DiffOutcome::Same { draws, frames })) => {
                ui.label(format!(
                    "no difference: {draws} draw(s), {frames} frame marker(s), same screens at the end"
                ));
            }
            Some(Ok(DiffOutcome::Different(d))) => {
                ui.label(d.summary());
            }
            Some(Err(e)) => {
                ui.colored_label(egui::Color32::LIGHT_RED, format!("diff stopped: {e}"));
            }
            None => {}
        }
        ui.separator();
        let Some(draw) = s.draw_at_or_before(sel.command.max(1)) else {
            ui.label("Select a draw to compare its images.");
            return;
        };
        let want = (draw, self.source);
        let have = self.images.as_ref().map(|(i, _)| (i.draw, i.source));
        if have != Some(want)
            && self.pending != Some(want)
            && !self.diff_running
            && let Some(w) = &self.worker
        {
            w.send(CompareRequest::Images {
                draw,
                source: self.source,
            });
            self.pending = Some(want);
        }
        let Some((imgs, tex)) = &self.images else {
            ui.label("Rendering…");
            return;
        };
        ui.label(format!(
            "After draw {} — {}: {} pixel(s) differ",
            imgs.draw,
            imgs.source.label(),
            imgs.differing
        ));
        let avail = ui.available_width();
        let w = ((avail - 24.0) / 3.0).max(32.0);
        ui.horizontal_top(|ui| {
            let titles = ["A", "B", "Difference"];
            let errs = [
                imgs.a.as_ref().err().cloned(),
                imgs.b.as_ref().err().cloned(),
                imgs.diff.is_none().then(|| {
                    "no difference image (sizes differ or an image is missing)".to_string()
                }),
            ];
            for ((title, t), err) in titles.iter().zip(tex).zip(errs) {
                ui.vertical(|ui| {
                    ui.label(*title);
                    match t {
                        Some(t) => {
                            let [tw, th] = t.size();
                            let scale = w / tw.max(1) as f32;
                            let size = egui::vec2(w, th as f32 * scale);
                            let (rect, _) = ui.allocate_exact_size(size, egui::Sense::hover());
                            ui.painter().image(
                                t.id(),
                                rect,
                                egui::Rect::from_min_max(
                                    egui::pos2(0.0, 0.0),
                                    egui::pos2(1.0, 1.0),
                                ),
                                egui::Color32::WHITE,
                            );
                        }
                        None => {
                            ui.label(err.unwrap_or_default());
                        }
                    }
                });
            }
        });
    }
}
