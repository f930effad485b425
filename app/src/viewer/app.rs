//! The viewer application: owns the preferences, the open document (with its replay worker),
//! the selection and the panels; lays out the window; applies deferred commands.
//!
//! Stage: viewer shell. Inputs: user input, worker responses, eframe storage. Outputs: the UI,
//! requests to the worker, saved preferences. The whole UI is drawn by [`ViewerApp::show`],
//! which needs only an [`egui::Ui`], so UI tests can drive it headlessly; the
//! [`eframe::App`] implementation adds persistence and the optional self-screenshot.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use eframe::egui::{self, Key, Modifiers, RichText};

use super::command::{AppCommand, Selection};
use super::load::{self, FileKind, Opened};
use super::panels::commands::CommandsView;
use super::panels::image::ImageView;
use super::panels::shader::ShaderView;
use super::panels::state::StateView;
use super::panels::timeline::TimelineView;
use super::panels::vertices::VerticesView;
use super::panels::{log, screens};
use super::prefs::{Prefs, Tab};
use super::session::{Document, ShaderSession, TraceSession};
use super::widgets::WARN;

/// How the viewer starts.
#[derive(Clone, Debug, Default)]
pub struct ViewerOptions {
    /// File to open at start-up.
    pub open: Option<PathBuf>,
    /// Write a screenshot of the window here once the trace is shown, then quit.
    pub screenshot: Option<PathBuf>,
    /// Select this draw (0-based over the trace) once the trace is indexed.
    pub draw: Option<u64>,
    /// Start on this tab.
    pub tab: Option<Tab>,
}

/// Self-screenshot progress.
#[derive(Debug)]
struct Screenshot {
    path: PathBuf,
    requested: bool,
    done: Arc<AtomicBool>,
    ready_frames: u32,
    started: std::time::Instant,
}

/// The panels' own UI state.
#[derive(Debug, Default)]
pub struct Panels {
    /// Timeline.
    pub timeline: TimelineView,
    /// Command list.
    pub commands: CommandsView,
    /// State.
    pub state: StateView,
    /// Image view.
    pub image: ImageView,
    /// Vertex view.
    pub vertices: VerticesView,
    /// Shader view.
    pub shader: ShaderView,
}

/// The viewer.
pub struct ViewerApp {
    /// Persisted preferences.
    pub prefs: Prefs,
    /// The open document.
    pub doc: Document,
    /// The selection.
    pub sel: Selection,
    /// Panel states.
    pub panels: Panels,
    /// Errors to show in the banner (and the log).
    pub errors: Vec<String>,
    /// Application log (open/close, errors).
    pub log: Vec<String>,
    /// Show the keyboard help window.
    pub show_help: bool,
    queue: Vec<AppCommand>,
    pending_open: Option<PathBuf>,
    screenshot: Option<Screenshot>,
    selected_initial: bool,
    fonts_installed: bool,
    start_draw: Option<u64>,
}

impl std::fmt::Debug for ViewerApp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ViewerApp")
            .field("sel", &self.sel)
            .finish_non_exhaustive()
    }
}

/// Keyboard shortcuts, for the help window and tooltips.
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("→ / ←", "next / previous draw"),
    ("Shift+→ / Shift+←", "next / previous command"),
    ("Page Down / Page Up", "end of the next / previous frame"),
    ("Home / End", "initial state / last command"),
    (
        "Down / Up, F10 / Shift+F10",
        "shader view: step forward / back",
    ),
    ("1 … 5", "Commands, State, Image, Vertices, Shader"),
    ("Ctrl+O", "open a file"),
    ("F1", "this help"),
];

impl ViewerApp {
    /// A viewer with these preferences; `opts.open` is opened on the first frame.
    pub fn new(mut prefs: Prefs, opts: ViewerOptions) -> Self {
        if let Some(t) = opts.tab {
            prefs.tab = t;
        }
        Self {
            prefs,
            doc: Document::None,
            sel: Selection::default(),
            panels: Panels::default(),
            errors: Vec::new(),
            log: Vec::new(),
            show_help: false,
            queue: Vec::new(),
            pending_open: opts.open,
            screenshot: opts.screenshot.map(|path| Screenshot {
                path,
                requested: false,
                done: Arc::new(AtomicBool::new(false)),
                ready_frames: 0,
                started: std::time::Instant::now(),
            }),
            selected_initial: false,
            fonts_installed: false,
            start_draw: opts.draw,
        }
    }

    /// Queues a command (as a panel would).
    pub fn push(&mut self, c: AppCommand) {
        self.queue.push(c);
    }

    /// The open trace session.
    pub fn trace(&self) -> Option<&TraceSession> {
        match &self.doc {
            Document::Trace(s) => Some(s),
            _ => None,
        }
    }

    /// The open trace session, mutably.
    pub fn trace_mut(&mut self) -> Option<&mut TraceSession> {
        match &mut self.doc {
            Document::Trace(s) => Some(s),
            _ => None,
        }
    }

    fn error(&mut self, e: String) {
        self.log.push(format!("error: {e}"));
        self.errors.push(e);
    }

    fn open(&mut self, ctx: &egui::Context, path: PathBuf) {
        let c = ctx.clone();
        let waker: super::worker::Waker = Arc::new(move || c.request_repaint());
        match load::open_path(&path, waker) {
            Ok(Opened::Trace { info, worker }) => {
                self.log.push(format!(
                    "opened {} ({}, {} bytes, {} stream elements)",
                    info.path.display(),
                    match info.kind {
                        FileKind::CommandList => "raw command list",
                        _ => "CiTrace",
                    },
                    info.file_len,
                    info.elements
                ));
                self.doc = Document::Trace(Box::new(TraceSession::new(info, worker)));
                self.sel = Selection::default();
                self.selected_initial = false;
                self.panels = Panels::default();
                self.prefs.add_recent(path);
            }
            Ok(Opened::Shader(doc)) => {
                self.log.push(format!(
                    "opened shader binary {} ({} DVLE(s), {} program words)",
                    doc.path.display(),
                    doc.dvlb.dvles.len(),
                    doc.dvlb.dvlp.code.len()
                ));
                let mut inputs = [[0.0f32; 4]; 16];
                inputs[0] = [0.0, 0.0, 0.0, 1.0];
                self.doc = Document::Shader(Box::new(ShaderSession {
                    doc: *doc,
                    dvle: 0,
                    inputs,
                    input_text: inputs
                        .iter()
                        .map(|v| format!("{}, {}, {}, {}", v[0], v[1], v[2], v[3]))
                        .collect(),
                    trace: None,
                }));
                self.sel = Selection::default();
                self.panels = Panels::default();
                self.prefs.tab = Tab::Shader;
                self.prefs.add_recent(path);
            }
            Err(e) => self.error(e),
        }
    }

    /// Draws the whole UI into `ui` and processes input, worker responses and commands.
    pub fn show(&mut self, ui: &mut egui::Ui) {
        let ctx = ui.ctx().clone();
        if !self.fonts_installed {
            // New fonts take effect from the next pass: draw nothing this time.
            self.fonts_installed = true;
            install_fonts(&ctx);
            ctx.request_repaint();
            return;
        }
        if let Some(p) = self.pending_open.take() {
            self.open(&ctx, p);
        }
        self.poll();
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if let Some(p) = dropped.into_iter().next() {
            self.queue.push(AppCommand::Open(p));
        }
        self.shortcuts(&ctx);
        self.layout(ui);
        let queue = std::mem::take(&mut self.queue);
        for c in queue {
            self.apply(&ctx, c);
        }
        if let Document::Trace(s) = &mut self.doc {
            s.flush();
            if s.progress.is_some() {
                ctx.request_repaint_after(std::time::Duration::from_millis(200));
            }
        }
        self.screenshot_step(&ctx);
    }

    fn poll(&mut self) {
        let Document::Trace(s) = &mut self.doc else {
            return;
        };
        s.poll();
        if let Some(m) = s.failed.take() {
            self.errors.push(m);
            s.cancelled = true;
        }
        if !self.selected_initial
            && let Some(index) = &s.index
        {
            self.selected_initial = true;
            // Start at the requested draw, else where the first frame is complete: every view
            // has something to show.
            let draw = self
                .start_draw
                .take()
                .and_then(|d| index.draws.get(usize::try_from(d).ok()?));
            self.sel.command = match draw {
                Some(rec) => rec.before.writes + 1,
                None => index
                    .frames
                    .first()
                    .map_or(index.end.writes, |f| f.end.writes),
            };
        }
    }

    fn shortcuts(&mut self, ctx: &egui::Context) {
        if ctx.text_edit_focused() {
            return;
        }
        let shader_tab = self.prefs.tab == Tab::Shader;
        let q = &mut self.queue;
        ctx.input_mut(|i| {
            if i.consume_key(Modifiers::COMMAND, Key::O) {
                q.push(AppCommand::OpenDialog);
            }
            if i.consume_key(Modifiers::SHIFT, Key::F10) {
                q.push(AppCommand::ShaderMove(-1));
            }
            if i.consume_key(Modifiers::NONE, Key::F10) {
                q.push(AppCommand::ShaderMove(1));
            }
            if i.consume_key(Modifiers::SHIFT, Key::ArrowRight) {
                q.push(AppCommand::StepCommand(1));
            }
            if i.consume_key(Modifiers::SHIFT, Key::ArrowLeft) {
                q.push(AppCommand::StepCommand(-1));
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowRight) {
                q.push(AppCommand::StepDraw(1));
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowLeft) {
                q.push(AppCommand::StepDraw(-1));
            }
            if i.consume_key(Modifiers::NONE, Key::PageDown) {
                q.push(AppCommand::StepFrame(1));
            }
            if i.consume_key(Modifiers::NONE, Key::PageUp) {
                q.push(AppCommand::StepFrame(-1));
            }
            if shader_tab {
                if i.consume_key(Modifiers::NONE, Key::ArrowDown) {
                    q.push(AppCommand::ShaderMove(1));
                }
                if i.consume_key(Modifiers::NONE, Key::ArrowUp) {
                    q.push(AppCommand::ShaderMove(-1));
                }
            }
            if i.consume_key(Modifiers::NONE, Key::Home) {
                q.push(if shader_tab {
                    AppCommand::ShaderStep(None)
                } else {
                    AppCommand::Start
                });
            }
            if i.consume_key(Modifiers::NONE, Key::End) {
                q.push(AppCommand::End);
            }
            for (k, tab) in [Key::Num1, Key::Num2, Key::Num3, Key::Num4, Key::Num5]
                .into_iter()
                .zip(Tab::ALL)
            {
                if i.consume_key(Modifiers::NONE, k) {
                    q.push(AppCommand::Tab(tab));
                }
            }
        });
        if ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::F1)) {
            self.show_help = !self.show_help;
        }
    }

    fn layout(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("menu").show(ui, |ui| self.menu_bar(ui));
        if matches!(self.doc, Document::Trace(_)) {
            egui::Panel::top("toolbar").show(ui, |ui| self.toolbar(ui));
        }
        if !self.errors.is_empty() {
            egui::Panel::top("errors")
                .frame(
                    egui::Frame::default()
                        .fill(egui::Color32::from_rgb(90, 20, 20))
                        .inner_margin(6.0),
                )
                .show(ui, |ui| {
                    ui.horizontal_wrapped(|ui| {
                        for e in &self.errors {
                            ui.label(RichText::new(e).color(egui::Color32::WHITE));
                        }
                        if ui.button("Dismiss").clicked() {
                            self.queue.push(AppCommand::DismissErrors);
                        }
                    });
                });
        }
        if self.prefs.show_log {
            egui::Panel::bottom("log")
                .resizable(true)
                .default_size(110.0)
                .show(ui, |ui| {
                    let trace = match &self.doc {
                        Document::Trace(s) => Some(&**s),
                        _ => None,
                    };
                    log::ui(ui, trace, &self.log, &mut self.queue)
                });
        }
        let command = self.sel.command;
        match &mut self.doc {
            Document::None => {
                egui::CentralPanel::default()
                    .show(ui, |ui| welcome(ui, &self.prefs, &mut self.queue));
            }
            Document::Shader(doc) => {
                egui::CentralPanel::default().show(ui, |ui| {
                    self.panels
                        .shader
                        .doc_ui(ui, doc, &self.sel, &mut self.queue)
                });
            }
            Document::Trace(s) => {
                if self.prefs.show_timeline {
                    egui::Panel::left("timeline")
                        .resizable(true)
                        .default_size(330.0)
                        .show(ui, |ui| {
                            ui.strong("Timeline");
                            self.panels.timeline.ui(
                                ui,
                                s,
                                &mut self.prefs,
                                command,
                                &mut self.queue,
                            );
                        });
                }
                if self.prefs.show_screens && s.index.is_some() {
                    egui::Panel::right("screens")
                        .resizable(true)
                        .default_size(240.0)
                        .show(ui, |ui| {
                            screens::ui(ui, s, &self.prefs, command, &mut self.queue)
                        });
                }
                egui::CentralPanel::default().show(ui, |ui| {
                    ui.horizontal(|ui| {
                        for (i, tab) in Tab::ALL.iter().enumerate() {
                            if ui
                                .selectable_label(self.prefs.tab == *tab, tab.title())
                                .on_hover_text(format!("Key {}", i + 1))
                                .clicked()
                            {
                                self.queue.push(AppCommand::Tab(*tab));
                            }
                        }
                    });
                    ui.separator();
                    if s.index.is_none() {
                        loading_ui(ui, s, &mut self.queue);
                        return;
                    }
                    let p = &mut self.panels;
                    match self.prefs.tab {
                        Tab::Commands => {
                            p.commands
                                .ui(ui, s, &mut self.prefs, command, &mut self.queue)
                        }
                        Tab::State => p.state.ui(ui, s, command, &mut self.queue),
                        Tab::Image => p.image.ui(ui, s, &mut self.prefs, command, &mut self.queue),
                        Tab::Vertices => {
                            p.vertices
                                .ui(ui, s, command, self.sel.vertex, &mut self.queue)
                        }
                        Tab::Shader => p.shader.trace_ui(ui, s, &self.sel, &mut self.queue),
                    }
                });
            }
        }
        if self.show_help {
            let mut open = true;
            egui::Window::new("Keyboard shortcuts")
                .open(&mut open)
                .show(ui.ctx(), |ui| {
                    egui::Grid::new("shortcuts").num_columns(2).show(ui, |ui| {
                        for (k, what) in SHORTCUTS {
                            ui.monospace(*k);
                            ui.label(*what);
                            ui.end_row();
                        }
                    });
                });
            self.show_help = open;
        }
    }

    fn menu_bar(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open…  (Ctrl+O)").clicked() {
                    self.queue.push(AppCommand::OpenDialog);
                    ui.close();
                }
                ui.menu_button("Recent files", |ui| {
                    if self.prefs.recent.is_empty() {
                        ui.weak("(none)");
                    }
                    for p in &self.prefs.recent {
                        if ui.button(p.display().to_string()).clicked() {
                            self.queue.push(AppCommand::Open(p.clone()));
                            ui.close();
                        }
                    }
                });
                if let Some(demo) = super::default_trace()
                    && ui.button("Open the demo trace").clicked()
                {
                    self.queue.push(AppCommand::Open(demo));
                    ui.close();
                }
                if ui.button("Close").clicked() {
                    self.queue.push(AppCommand::Close);
                    ui.close();
                }
                ui.separator();
                if ui.button("Quit").clicked() {
                    self.queue.push(AppCommand::Quit);
                    ui.close();
                }
            });
            ui.menu_button("View", |ui| {
                ui.checkbox(&mut self.prefs.show_timeline, "Timeline");
                ui.checkbox(&mut self.prefs.show_screens, "Screens");
                ui.checkbox(&mut self.prefs.show_log, "Log");
                ui.checkbox(&mut self.prefs.thumbnails, "Draw thumbnails");
                ui.checkbox(
                    &mut self.prefs.rotate_thumbs,
                    "Rotate tall colour buffers in previews",
                );
            });
            ui.menu_button("Help", |ui| {
                if ui.button("Keyboard shortcuts  (F1)").clicked() {
                    self.show_help = true;
                    ui.close();
                }
            });
            let path = match &self.doc {
                Document::Trace(s) => Some(&s.info.path),
                Document::Shader(d) => Some(&d.doc.path),
                Document::None => None,
            };
            if let Some(p) = path {
                ui.separator();
                let name = p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                );
                ui.weak(name).on_hover_text(p.display().to_string());
            }
        });
    }

    fn toolbar(&mut self, ui: &mut egui::Ui) {
        let Document::Trace(s) = &mut self.doc else {
            return;
        };
        let total = s.total_commands();
        let q = &mut self.queue;
        ui.horizontal_wrapped(|ui| {
            let b = |ui: &mut egui::Ui, text: &str, tip: &str| {
                ui.button(text).on_hover_text(tip).clicked()
            };
            if b(ui, "|◀ Start", "Initial state (Home)") {
                q.push(AppCommand::Start);
            }
            if b(ui, "◀◀ Frame", "End of the previous frame (Page Up)") {
                q.push(AppCommand::StepFrame(-1));
            }
            if b(ui, "◀ Draw", "Previous draw (←)") {
                q.push(AppCommand::StepDraw(-1));
            }
            if b(ui, "‹ Cmd", "Previous command (Shift+←)") {
                q.push(AppCommand::StepCommand(-1));
            }
            if b(ui, "Cmd ›", "Next command (Shift+→)") {
                q.push(AppCommand::StepCommand(1));
            }
            if b(ui, "Draw ▶", "Next draw (→)") {
                q.push(AppCommand::StepDraw(1));
            }
            if b(ui, "Frame ▶▶", "End of the next frame (Page Down)") {
                q.push(AppCommand::StepFrame(1));
            }
            if b(ui, "End ▶|", "Last command (End)") {
                q.push(AppCommand::End);
            }
            ui.separator();
            let l = ui.label("Command");
            let mut c = self.sel.command;
            if ui
                .add(egui::DragValue::new(&mut c).range(0..=total))
                .labelled_by(l.id)
                .changed()
            {
                q.push(AppCommand::SelectCommand(c));
            }
            ui.label(format!("of {total}"));
            if let Some(f) = s.frame_of(self.sel.command) {
                ui.label(format!(
                    "· frame {} of {}",
                    f.index,
                    s.index.as_ref().map_or(0, |i| i.frames.len())
                ));
            }
            match s.draw_at_or_before(self.sel.command) {
                Some(d) => ui.label(format!(
                    "· draw {d} of {}",
                    s.index.as_ref().map_or(0, |i| i.draws.len())
                )),
                None => ui.label("· before the first draw"),
            };
            if let Some(p) = &s.progress {
                ui.separator();
                ui.add(
                    egui::ProgressBar::new(p.fraction)
                        .desired_width(160.0)
                        .text(format!("{} {:.0}%", p.task, p.fraction * 100.0)),
                );
                if p.cancellable && ui.button("Cancel").clicked() {
                    q.push(AppCommand::Cancel);
                }
            }
        });
    }

    fn apply(&mut self, ctx: &egui::Context, c: AppCommand) {
        match c {
            AppCommand::Open(p) => self.open(ctx, p),
            AppCommand::OpenDialog => {
                match rfd::FileDialog::new()
                    .add_filter("PICA traces, shaders, command lists", &["ctf", "shbin", "bin", "pica"])
                    .add_filter("All files", &["*"])
                    .pick_file()
                {
                    Some(p) => self.open(ctx, p),
                    None => self.log.push(
                        "file dialog closed without a file (if no dialog appeared: no desktop portal or zenity is available; drop a file on the window or pass it on the command line)".into(),
                    ),
                }
            }
            AppCommand::Close => {
                self.doc = Document::None;
                self.sel = Selection::default();
            }
            AppCommand::Cancel => {
                if let Document::Trace(s) = &self.doc {
                    s.cancel();
                }
            }
            AppCommand::Quit => ctx.send_viewport_cmd(egui::ViewportCommand::Close),
            AppCommand::DismissErrors => self.errors.clear(),
            AppCommand::Tab(t) => self.prefs.tab = t,
            AppCommand::ShowImage(src) => {
                self.prefs.image.source = src;
                self.prefs.tab = Tab::Image;
            }
            AppCommand::SelectCommand(n) => self.select(n),
            AppCommand::SelectDraw(d) => {
                if let Some(rec) = self
                    .trace()
                    .and_then(|s| s.index.as_ref())
                    .and_then(|i| i.draws.get(d as usize))
                {
                    let n = rec.before.writes + 1;
                    self.select(n);
                }
            }
            AppCommand::SelectVertex(k) => {
                if self.sel.vertex != Some(k) {
                    self.sel.vertex = Some(k);
                    self.sel.shader_step = None;
                }
            }
            AppCommand::StepCommand(d) => {
                let n = self.sel.command.saturating_add_signed(d);
                self.select(n);
            }
            AppCommand::StepDraw(d) => {
                let cur = self.sel.command;
                let target = self.trace().and_then(|s| s.index.as_ref()).and_then(|i| {
                    if d > 0 {
                        i.draws
                            .iter()
                            .map(|r| r.before.writes + 1)
                            .find(|&t| t > cur)
                    } else {
                        i.draws
                            .iter()
                            .rev()
                            .map(|r| r.before.writes + 1)
                            .find(|&t| t < cur)
                    }
                });
                if let Some(t) = target {
                    self.select(t);
                }
            }
            AppCommand::StepFrame(d) => {
                let cur = self.sel.command;
                let target = self.trace().and_then(|s| s.index.as_ref()).and_then(|i| {
                    if d > 0 {
                        i.frames.iter().map(|f| f.end.writes).find(|&e| e > cur)
                    } else {
                        i.frames
                            .iter()
                            .rev()
                            .map(|f| f.end.writes)
                            .find(|&e| e < cur)
                    }
                });
                if let Some(t) = target {
                    self.select(t);
                }
            }
            AppCommand::Start => self.select(0),
            AppCommand::End => {
                let n = self.trace().map_or(0, TraceSession::total_commands);
                self.select(n);
            }
            AppCommand::ShaderStep(s) => self.sel.shader_step = s,
            AppCommand::ShaderMove(d) => {
                let n = self.shader_steps();
                if n == 0 {
                    return;
                }
                // Position p = number of executed steps (0 = before the first).
                let p = self.sel.shader_step.map_or(0, |i| i + 1) as i64;
                let p = (p + d).clamp(0, n as i64) as usize;
                self.sel.shader_step = p.checked_sub(1);
            }
        }
    }

    /// Steps of the shader trace the shader view shows.
    fn shader_steps(&self) -> usize {
        match &self.doc {
            Document::Trace(s) => s
                .shader
                .as_ref()
                .and_then(|(_, r)| r.as_ref().ok())
                .map_or(0, |t| t.steps.len()),
            Document::Shader(d) => d
                .trace
                .as_ref()
                .and_then(|r| r.as_ref().ok())
                .map_or(0, |t| t.steps.len()),
            Document::None => 0,
        }
    }

    fn select(&mut self, n: u64) {
        let total = self.trace().map_or(0, TraceSession::total_commands);
        let n = n.min(total);
        let old_draw = self
            .trace()
            .and_then(|s| s.draw_at_or_before(self.sel.command));
        self.sel.command = n;
        let new_draw = self.trace().and_then(|s| s.draw_at_or_before(n));
        if old_draw != new_draw {
            self.sel.vertex = None;
            self.sel.shader_step = None;
        }
    }

    fn screenshot_step(&mut self, ctx: &egui::Context) {
        let Some(shot) = &mut self.screenshot else {
            return;
        };
        if shot.done.load(Ordering::SeqCst) {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        ctx.request_repaint_after(std::time::Duration::from_millis(50));
        if shot.requested {
            return;
        }
        // Wait until the trace is indexed and the visible images arrived (or 60 s passed).
        let ready = match &self.doc {
            Document::Trace(s) => {
                s.idle()
                    && s.any_image(super::protocol::ImageSource::TopScreen)
                        .is_some()
            }
            Document::Shader(_) | Document::None => true,
        };
        if ready {
            shot.ready_frames += 1;
        } else {
            shot.ready_frames = 0;
        }
        if shot.ready_frames >= 20 || shot.started.elapsed().as_secs() > 60 {
            shot.requested = true;
            let path = shot.path.clone();
            let done = shot.done.clone();
            let c = ctx.clone();
            ctx.request_screenshot(move |img: Arc<egui::ColorImage>| {
                let [w, h] = img.size;
                let bytes: Vec<u8> = img.pixels.iter().flat_map(|p| p.to_array()).collect();
                let result = image::RgbaImage::from_raw(w as u32, h as u32, bytes)
                    .ok_or_else(|| "screenshot has the wrong size".to_string())
                    .and_then(|i| i.save(&path).map_err(|e| e.to_string()));
                if let Err(e) = result {
                    eprintln!(
                        "picaview: cannot write the screenshot {}: {e}",
                        path.display()
                    );
                }
                done.store(true, Ordering::SeqCst);
                c.request_repaint();
            });
        }
    }
}

/// The default fonts, with Hack (monospace, which has arrows, triangles and box glyphs) as
/// a fallback of the proportional family too, so that labels like "◀" and "→" render.
pub fn install_fonts(ctx: &egui::Context) {
    let mut fonts = egui::FontDefinitions::default();
    if let Some(p) = fonts.families.get_mut(&egui::FontFamily::Proportional)
        && !p.iter().any(|n| n == "Hack")
    {
        p.push("Hack".to_owned());
    }
    ctx.set_fonts(fonts);
}

fn welcome(ui: &mut egui::Ui, prefs: &Prefs, queue: &mut Vec<AppCommand>) {
    ui.vertical_centered(|ui| {
        ui.add_space(40.0);
        ui.heading("picaview");
        ui.label("PICA200 (Nintendo 3DS GPU) trace viewer and shader debugger");
        ui.add_space(12.0);
        if ui.button("Open a file…").clicked() {
            queue.push(AppCommand::OpenDialog);
        }
        if let Some(demo) = super::default_trace()
            && ui.button("Open the demo trace").clicked()
        {
            queue.push(AppCommand::Open(demo));
        }
        ui.label("…or drop a .ctf trace, a .shbin shader or a raw command list on this window.");
        if !prefs.recent.is_empty() {
            ui.add_space(12.0);
            ui.strong("Recent files");
            for p in &prefs.recent {
                if ui.link(p.display().to_string()).clicked() {
                    queue.push(AppCommand::Open(p.clone()));
                }
            }
        }
    });
}

fn loading_ui(ui: &mut egui::Ui, s: &TraceSession, queue: &mut Vec<AppCommand>) {
    ui.add_space(20.0);
    if s.cancelled {
        ui.colored_label(
            WARN,
            "Indexing was cancelled or failed (see the log). Open the file again to retry.",
        );
        return;
    }
    ui.horizontal(|ui| {
        ui.spinner();
        let p = s.progress.as_ref();
        ui.label(format!(
            "{} {}…",
            p.map_or("Opening", |p| p.task),
            s.info.path.display()
        ));
    });
    if let Some(p) = &s.progress {
        ui.add(egui::ProgressBar::new(p.fraction).show_percentage());
        if p.cancellable && ui.button("Cancel").clicked() {
            queue.push(AppCommand::Cancel);
        }
    }
}

impl eframe::App for ViewerApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        self.show(ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.prefs.save(storage);
    }

    fn raw_input_hook(&mut self, _ctx: &egui::Context, raw: &mut egui::RawInput) {
        // A screenshot run shows the UI as opened, not whatever the (virtual) pointer hovers.
        if self.screenshot.is_some() {
            raw.events.retain(|e| {
                !matches!(
                    e,
                    egui::Event::PointerMoved(_)
                        | egui::Event::PointerButton { .. }
                        | egui::Event::MouseMoved(_)
                )
            });
        }
    }
}
