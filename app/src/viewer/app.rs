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
use super::panels::compare::CompareView;
use super::panels::edits::EditsView;
use super::panels::image::ImageView;
use super::panels::luts::LutsView;
use super::panels::shader::ShaderView;
use super::panels::state::StateView;
use super::panels::tev::TevView;
use super::panels::timeline::TimelineView;
use super::panels::vertices::VerticesView;
use super::panels::{log, resources, screens};
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
    /// Work budgets to replay traces under (the Settings dialog can change them).
    pub budget: gpu_core::budget::WorkBudget,
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
    /// Per-draw cost table.
    pub cost: super::panels::cost::CostView,
    /// Log.
    pub log: log::LogView,
    /// Compare mode.
    pub compare: CompareView,
    /// Combiner graph and solo.
    pub tev: TevView,
    /// Lookup-table plots.
    pub luts: LutsView,
    /// Pixel history window.
    pub pixel_history: super::panels::pixel_history::PixelHistoryView,
    /// Trace editor.
    pub edits: EditsView,
    /// Resource timeline ("who touched this?").
    pub resources: resources::ResourcesView,
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
    /// True when a native file dialog can appear (a session bus for the desktop portal, or
    /// zenity); otherwise File > Open shows the path field at once.
    pub native_dialogs: bool,
    /// The File > Open path field, when shown.
    pub open_field: Option<OpenField>,
    /// The Settings dialog (keyframe and work budgets).
    pub settings: super::settings::SettingsDialog,
    queue: Vec<AppCommand>,
    pending_open: Option<PathBuf>,
    screenshot: Option<Screenshot>,
    selected_initial: bool,
    fonts_installed: bool,
    start_draw: Option<u64>,
    /// Selection history for Back/Forward: earlier selected commands (newest last) and the
    /// ones gone back from.
    back: Vec<u64>,
    forward: Vec<u64>,
}

/// State of the File > Open path field.
#[derive(Clone, Debug, Default)]
pub struct OpenField {
    /// The typed path (relative to the current directory unless absolute).
    pub text: String,
    /// Why the native dialog was not used, or what went wrong.
    pub note: Option<String>,
    /// Completions of `text` (recomputed when `text` changes).
    candidates: Vec<super::open_path::Candidate>,
    /// The text `candidates` belong to.
    listed: Option<String>,
    /// Focus the field on the next frame.
    focus: bool,
}

/// True when a native file dialog can appear: rfd needs the desktop portal (on the session
/// bus) or the zenity program.
pub fn native_dialog_available() -> bool {
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some_and(|v| !v.is_empty());
    let zenity = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join("zenity").is_file()));
    bus || zenity
}

/// Widest the timeline grows by itself (the user can drag it wider up to this).
pub const TIMELINE_MAX_WIDTH: f32 = 520.0;

/// Most log lines kept (the oldest are dropped).
pub const MAX_LOG: usize = 10_000;

/// Most entries of the Back/Forward history.
pub const MAX_HISTORY: usize = 256;

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
    (
        "Alt+← / Alt+→",
        "back / forward through the selection history",
    ),
    ("Shift+→ / Shift+←", "next / previous command"),
    ("Page Down / Page Up", "end of the next / previous frame"),
    ("Home / End", "initial state / last command"),
    (
        "Down / Up, F10 / Shift+F10",
        "shader view: step forward / back",
    ),
    (
        "1 … 7",
        "Commands, State, Image, Vertices, Shader, TEV, LUTs",
    ),
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
            native_dialogs: native_dialog_available(),
            open_field: None,
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
            back: Vec::new(),
            forward: Vec::new(),
            settings: super::settings::SettingsDialog::new(super::worker::ReplaySettings {
                work: opts.budget,
                ..Default::default()
            }),
        }
    }

    /// True if Back (Alt+←) has somewhere to go.
    pub fn can_go_back(&self) -> bool {
        !self.back.is_empty()
    }

    /// True if Forward (Alt+→) has somewhere to go.
    pub fn can_go_forward(&self) -> bool {
        !self.forward.is_empty()
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

    /// The remembered edits of DVLE `dvle` of a shader file, else the DVLE's defaults.
    fn shader_edits(&self, sess: &ShaderSession, dvle: usize) -> super::shbin_debug::ShaderInputs {
        self.prefs
            .shader_memo(&sess.prefs_key(dvle))
            .or_else(|| {
                sess.doc
                    .dvlb
                    .dvles
                    .get(dvle)
                    .map(super::shbin_debug::ShaderInputs::for_dvle)
            })
            .unwrap_or_default()
    }

    fn open(&mut self, ctx: &egui::Context, path: PathBuf) {
        let c = ctx.clone();
        let waker: super::worker::Waker = Arc::new(move || c.request_repaint());
        match load::open_path_with(&path, waker, self.settings.applied) {
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
                let mut sess = ShaderSession {
                    doc: *doc,
                    dvle: 0,
                    edits: Default::default(),
                    trace: None,
                    runs: 0,
                    remember: false,
                };
                sess.edits = self.shader_edits(&sess, 0);
                self.doc = Document::Shader(Box::new(sess));
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
        // One chronological log: the session's messages join the app's as they arrive.
        self.log.append(&mut s.log);
        if self.log.len() > MAX_LOG {
            let extra = self.log.len() - MAX_LOG;
            self.log.drain(..extra);
        }
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
            let requested = self.start_draw.take();
            let draw = requested.and_then(|d| index.draws.get(usize::try_from(d).ok()?));
            if let Some(d) = requested
                && draw.is_none()
            {
                let msg = if index.draws.is_empty() {
                    format!(
                        "--draw {d}: the trace has no draws; showing the end of the first frame"
                    )
                } else {
                    format!(
                        "--draw {d} is out of range: the trace has {} draw(s), 0..={}; showing the end of the first frame",
                        index.draws.len(),
                        index.draws.len() - 1
                    )
                };
                self.log.push(format!("error: {msg}"));
                self.errors.push(msg);
            }
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
            // Alt+arrows first: a plain-arrow pattern would also match them.
            if i.consume_key(Modifiers::ALT, Key::ArrowLeft) {
                q.push(AppCommand::Back);
            }
            if i.consume_key(Modifiers::ALT, Key::ArrowRight) {
                q.push(AppCommand::Forward);
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
            let keys = [
                Key::Num1,
                Key::Num2,
                Key::Num3,
                Key::Num4,
                Key::Num5,
                Key::Num6,
                Key::Num7,
                Key::Num8,
                Key::Num9,
                Key::Num0,
            ];
            for (k, tab) in keys.into_iter().zip(Tab::ALL) {
                if i.consume_key(Modifiers::NONE, k) {
                    q.push(AppCommand::Tab(tab));
                }
            }
        });
        if ctx.input_mut(|i| i.consume_key(Modifiers::NONE, Key::F1)) {
            self.show_help = !self.show_help;
        }
    }

    fn show_open_field(&mut self, note: Option<String>) {
        let text = self.open_field.take().map(|f| f.text).unwrap_or_default();
        self.open_field = Some(OpenField {
            text,
            note,
            focus: true,
            ..OpenField::default()
        });
    }

    /// The File > Open path field: type a path (Tab completes, Enter opens), or click a
    /// completion.
    fn open_field_ui(&mut self, ctx: &egui::Context) {
        let Some(f) = &mut self.open_field else {
            return;
        };
        let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let mut open = true;
        let mut chosen: Option<PathBuf> = None;
        egui::Window::new("Open a file")
            .open(&mut open)
            .collapsible(false)
            .default_width(560.0)
            .anchor(egui::Align2::CENTER_TOP, [0.0, 60.0])
            .show(ctx, |ui| {
                if let Some(n) = &f.note {
                    ui.colored_label(WARN, n);
                }
                ui.weak(format!("Relative paths start in {}", cwd.display()));
                let mut tab = false;
                let r = ui
                    .horizontal(|ui| {
                        let l = ui.label("Path:");
                        let r = ui
                            .add(
                                egui::TextEdit::singleline(&mut f.text)
                                    .hint_text("e.g. assets/demos/cube.ctf")
                                    .lock_focus(true)
                                    .desired_width(400.0),
                            )
                            .labelled_by(l.id)
                            .on_hover_text("Tab completes, Enter opens");
                        if r.has_focus() {
                            tab = ui.input_mut(|i| i.consume_key(Modifiers::NONE, Key::Tab));
                        }
                        if ui.button("Open").clicked() {
                            chosen = Some(super::open_path::resolve(&f.text, &cwd));
                        }
                        r
                    })
                    .inner;
                if f.focus {
                    r.request_focus();
                    f.focus = false;
                }
                if f.listed.as_deref() != Some(f.text.as_str()) {
                    f.candidates = super::open_path::complete(&f.text, &cwd);
                    f.listed = Some(f.text.clone());
                }
                if tab && let Some(p) = super::open_path::common_prefix(&f.candidates) {
                    if p.len() > f.text.len() {
                        f.text = p;
                    }
                    set_cursor_end(ui.ctx(), r.id, &f.text);
                }
                if r.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
                    chosen = Some(super::open_path::resolve(&f.text, &cwd));
                }
                ui.separator();
                let mut pick: Option<super::open_path::Candidate> = None;
                egui::ScrollArea::vertical()
                    .id_salt("open_field_candidates")
                    .max_height(260.0)
                    .show(ui, |ui| {
                        if f.candidates.is_empty() {
                            ui.weak("(no matching file or folder)");
                        }
                        for c in &f.candidates {
                            let t = if c.dir {
                                RichText::new(&c.name).strong()
                            } else {
                                RichText::new(&c.name)
                            };
                            if ui.selectable_label(false, t).clicked() {
                                pick = Some(c.clone());
                            }
                        }
                    });
                if let Some(c) = pick {
                    f.text = c.text.clone();
                    if c.dir {
                        f.focus = true;
                        set_cursor_end(ui.ctx(), r.id, &f.text);
                    } else {
                        chosen = Some(super::open_path::resolve(&c.text, &cwd));
                    }
                }
            });
        if let Some(p) = chosen {
            if p.is_dir() {
                let mut t = f.text.trim_end_matches('/').to_string();
                t.push('/');
                f.text = t;
                f.focus = true;
            } else if p.is_file() {
                self.open_field = None;
                self.queue.push(AppCommand::Open(p));
                return;
            } else {
                f.note = Some(format!("{} does not exist", p.display()));
                f.focus = true;
            }
        }
        if !open {
            self.open_field = None;
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
                    self.panels.log.ui(ui, trace, &self.log, &mut self.queue)
                });
        }
        let command = self.sel.command;
        match &mut self.doc {
            Document::None => {
                egui::CentralPanel::default()
                    .show(ui, |ui| welcome(ui, &self.prefs, &mut self.queue));
            }
            Document::Shader(doc) => {
                let prev_dvle = doc.dvle;
                egui::CentralPanel::default().show(ui, |ui| {
                    self.panels
                        .shader
                        .doc_ui(ui, doc, &self.sel, &mut self.queue)
                });
                if doc.remember {
                    doc.remember = false;
                    let key = doc.prefs_key(doc.dvle);
                    self.prefs.remember_shader(key, doc.edits.clone());
                }
                if doc.dvle != prev_dvle {
                    // Another executable: its own remembered inputs (or its constants).
                    let dvle = doc.dvle;
                    let memo = self.prefs.shader_memo(&doc.prefs_key(dvle));
                    doc.edits = memo.unwrap_or_else(|| {
                        doc.doc
                            .dvlb
                            .dvles
                            .get(dvle)
                            .map(super::shbin_debug::ShaderInputs::for_dvle)
                            .unwrap_or_default()
                    });
                }
            }
            Document::Trace(s) => {
                if self.prefs.show_timeline {
                    egui::Panel::left("timeline")
                        .resizable(true)
                        .default_size(330.0)
                        .min_size(300.0)
                        // Long rows elide (with a tooltip) instead of widening the panel.
                        .max_size(TIMELINE_MAX_WIDTH)
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
                        Tab::Image => {
                            p.image.selected_triangle = self.sel.triangle;
                            p.image.ui(ui, s, &mut self.prefs, command, &mut self.queue)
                        }
                        Tab::Vertices => p.vertices.ui(
                            ui,
                            s,
                            command,
                            self.sel.vertex,
                            self.sel.triangle,
                            &mut self.queue,
                        ),
                        Tab::Shader => p.shader.trace_ui(ui, s, &self.sel, &mut self.queue),
                        Tab::Tev => p.tev.ui(ui, s, &self.prefs, command, &mut self.queue),
                        Tab::Luts => p.luts.ui(ui, s, command),
                        Tab::Compare => {
                            p.compare
                                .ui(ui, s, &self.sel, &p.edits.list, &mut self.queue)
                        }
                        Tab::Costs => {
                            let draw = s.draw_at_or_before(command);
                            p.cost.ui(ui, s, command, draw, &mut self.queue)
                        }
                        Tab::Edits => p.edits.ui(ui, s, command),
                    }
                });
            }
        }
        if let Document::Trace(s) = &mut self.doc {
            self.panels.pixel_history.ui(ui.ctx(), s, &mut self.queue);
            self.panels.resources.ui(ui.ctx(), s, &mut self.queue);
        }
        self.open_field_ui(ui.ctx());
        let index = match &self.doc {
            Document::Trace(s) => s.index.clone(),
            _ => None,
        };
        if let Some(new) = self.settings.show(ui.ctx(), index.as_deref())
            && let Document::Trace(s) = &self.doc
        {
            // New budgets: open the trace again, which indexes it under them.
            self.log.push(format!(
                "settings changed (keyframe budget {} MiB, work budgets: {}): re-indexing",
                new.keyframe_budget >> 20,
                if new.work.spec().is_empty() {
                    "defaults".to_string()
                } else {
                    new.work.spec()
                }
            ));
            self.pending_open = Some(s.info.path.clone());
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
                if ui
                    .button("Open path…")
                    .on_hover_text("Type a path with completion instead of using the system dialog")
                    .clicked()
                {
                    self.queue.push(AppCommand::OpenPathField);
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
                if ui
                    .button("Settings…")
                    .on_hover_text("Keyframe memory budget and work budgets (re-indexes)")
                    .clicked()
                {
                    self.settings.open = true;
                    ui.close();
                }
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
        let (can_back, can_fwd) = (!self.back.is_empty(), !self.forward.is_empty());
        ui.horizontal_wrapped(|ui| {
            if ui
                .add_enabled(can_back, egui::Button::new("⟵"))
                .on_hover_text("Back to the previous selection (Alt+←)")
                .on_disabled_hover_text("Back (Alt+←): no earlier selection")
                .clicked()
            {
                q.push(AppCommand::Back);
            }
            if ui
                .add_enabled(can_fwd, egui::Button::new("⟶"))
                .on_hover_text("Forward again (Alt+→)")
                .on_disabled_hover_text("Forward (Alt+→): nothing to go forward to")
                .clicked()
            {
                q.push(AppCommand::Forward);
            }
            ui.separator();
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
                    "· draw #{d} of {}",
                    s.index.as_ref().map_or(0, |i| i.draws.len())
                )),
                None => ui.label("· before the first draw"),
            };
            if let Some(p) = &s.progress {
                ui.separator();
                // The bar holds the percentage; the task is a label beside it (a long task name
                // inside a fixed-width bar was cut off).
                ui.add(
                    egui::ProgressBar::new(p.fraction)
                        .desired_width(90.0)
                        .show_percentage(),
                );
                ui.weak(p.task);
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
                if !self.native_dialogs {
                    self.show_open_field(Some(
                        "No native file dialog is available (no desktop portal on a session bus, no zenity): type the path.".into(),
                    ));
                    return;
                }
                let started = std::time::Instant::now();
                match rfd::FileDialog::new()
                    .add_filter(
                        "PICA traces, shaders, command lists",
                        &["ctf", "shbin", "bin", "pica"],
                    )
                    .add_filter("All files", &["*"])
                    .pick_file()
                {
                    Some(p) => self.open(ctx, p),
                    // Nobody closes a real dialog this fast: it could not appear.
                    None if started.elapsed() < std::time::Duration::from_millis(400) => {
                        self.native_dialogs = false;
                        self.show_open_field(Some(
                            "The native file dialog could not be shown (no desktop portal or zenity): type the path.".into(),
                        ));
                    }
                    None => self.log.push("file dialog closed without a file".into()),
                }
            }
            AppCommand::OpenPathField => self.show_open_field(None),
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
            AppCommand::Back => {
                if let Some(n) = self.back.pop() {
                    self.forward.push(self.sel.command);
                    self.select_no_history(n);
                }
            }
            AppCommand::Forward => {
                if let Some(n) = self.forward.pop() {
                    self.back.push(self.sel.command);
                    self.select_no_history(n);
                }
            }
            AppCommand::Tab(t) => self.prefs.tab = t,
            AppCommand::AddEdit(kind) => {
                self.panels.edits.add(*kind);
                self.prefs.tab = Tab::Edits;
            }
            AppCommand::PrefillEdit(line) => {
                self.panels.edits.prefill(line);
                self.prefs.tab = Tab::Edits;
            }
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
            AppCommand::SelectPrimitive { draw, triangle } => {
                if let Some(rec) = self
                    .trace()
                    .and_then(|s| s.index.as_ref())
                    .and_then(|i| i.draws.get(usize::try_from(draw).unwrap_or(usize::MAX)))
                {
                    let n = rec.before.writes + 1;
                    self.select(n);
                    self.sel.triangle = Some(triangle);
                }
            }
            AppCommand::OpenPixelHistory { at, source, x, y } => {
                // The pixel history panel reads the picked pixel.
                if let Document::Trace(s) = &mut self.doc {
                    s.pick(at, source, x, y);
                }
                self.panels.pixel_history.open_for((at, source, x, y));
            }
            AppCommand::SelectVertex(k) => {
                if self.sel.vertex != Some(k) || self.sel.gs_invocation.is_some() {
                    self.sel.vertex = Some(k);
                    self.sel.shader_step = None;
                    self.sel.gs_invocation = None;
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
            AppCommand::WhoTouched { start, len } => {
                self.panels.resources.query = Some((start, len));
            }
            AppCommand::CloseWhoTouched => self.panels.resources.query = None,
            AppCommand::SelectGsInvocation(g) => {
                if self.sel.gs_invocation != g {
                    self.sel.gs_invocation = g;
                    self.sel.shader_step = None;
                }
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
            Document::Trace(s) if self.sel.gs_invocation.is_some() => s
                .gs_shader
                .as_ref()
                .and_then(|(_, r)| r.as_ref().ok())
                .map_or(0, |t| t.steps.len()),
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
        if n != self.sel.command {
            self.back.push(self.sel.command);
            if self.back.len() > MAX_HISTORY {
                self.back.remove(0);
            }
            self.forward.clear();
        }
        self.select_no_history(n);
    }

    fn select_no_history(&mut self, n: u64) {
        let old_draw = self
            .trace()
            .and_then(|s| s.draw_at_or_before(self.sel.command));
        self.sel.command = n;
        let new_draw = self.trace().and_then(|s| s.draw_at_or_before(n));
        if old_draw != new_draw {
            self.sel.vertex = None;
            self.sel.shader_step = None;
            self.sel.triangle = None;
            self.sel.gs_invocation = None;
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

/// Moves the text cursor of the text field `id` to the end of `text`.
fn set_cursor_end(ctx: &egui::Context, id: egui::Id, text: &str) {
    if let Some(mut state) = egui::TextEdit::load_state(ctx, id) {
        let end = egui::text::CCursor::new(text.chars().count());
        state
            .cursor
            .set_char_range(Some(egui::text::CCursorRange::one(end)));
        state.store(ctx, id);
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
