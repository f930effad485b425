//! The Edits panel: the trace's edit list (issue 16, "Edit and re-render").
//!
//! Stage: viewer panel. Input: edits added here (one edit-script line, or the shader editor) or
//! from other views ([`AppCommand::AddEdit`](crate::viewer::command::AppCommand::AddEdit), e.g.
//! the Commands view's "Override this write"; or prefilled into the "Add edit" field by
//! [`AppCommand::PrefillEdit`](crate::viewer::command::AppCommand::PrefillEdit), e.g. the State
//! view's "Edit value…" on a uniform), the selected command. Output: requests to the
//! worker ([`Request::EditCompare`]: the colour buffer after the selected command without and
//! with the edits, and their difference, the latter from a second replay of the trace file in
//! the worker; [`Request::SaveEdited`]). The list can be toggled per edit, undone and redone;
//! the rest of the viewer shows the unedited trace.

use std::sync::Arc;

use eframe::egui::{self, RichText};
use gpu_core::replay::edit::{Edit, EditKind, EditList, Unit, describe};

use crate::viewer::protocol::{ImageData, Request};
use crate::viewer::session::{TraceSession, color_image};

/// Undo steps kept.
const MAX_UNDO: usize = 100;

/// The Edits panel's state.
#[derive(Default)]
pub struct EditsView {
    /// The edit list.
    pub list: EditList,
    undo: Vec<EditList>,
    redo: Vec<EditList>,
    /// The edit-script line being typed.
    line: String,
    line_error: Option<String>,
    /// Focus the line on the next frame (it was just prefilled from another view).
    focus_line: bool,
    shader_draw: String,
    shader_gs: bool,
    shader_text: String,
    shader_errors: Vec<String>,
    save_path: String,
    next_id: u64,
    /// The comparison asked for: id, command, list.
    asked: Option<(u64, u64, EditList)>,
    textures: Option<(u64, [egui::TextureHandle; 3])>,
}

impl std::fmt::Debug for EditsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditsView")
            .field("edits", &self.list.edits.len())
            .finish_non_exhaustive()
    }
}

impl EditsView {
    fn change(&mut self, f: impl FnOnce(&mut EditList)) {
        let before = self.list.clone();
        f(&mut self.list);
        if self.list != before {
            self.undo.push(before);
            if self.undo.len() > MAX_UNDO {
                self.undo.remove(0);
            }
            self.redo.clear();
        }
    }

    /// Appends an enabled edit (undoable).
    pub fn add(&mut self, kind: EditKind) {
        self.change(|l| l.edits.push(Edit::new(kind)));
    }

    /// Puts `line` (edit-script syntax) in the "Add edit" field and focuses it, for the user to
    /// change and add (e.g. the State view's "Edit value…", prefilled with the current value).
    pub fn prefill(&mut self, line: String) {
        self.line = line;
        self.line_error = None;
        self.focus_line = true;
    }

    /// The text of the "Add edit" field.
    pub fn line(&self) -> &str {
        &self.line
    }

    /// Undoes the last change of the list.
    pub fn undo(&mut self) {
        if let Some(prev) = self.undo.pop() {
            self.redo.push(std::mem::replace(&mut self.list, prev));
        }
    }

    /// Redoes the last undone change.
    pub fn redo(&mut self) {
        if let Some(next) = self.redo.pop() {
            self.undo.push(std::mem::replace(&mut self.list, next));
        }
    }

    /// Draws the panel. `command` is the selected command (the comparison shows the state
    /// right after it).
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &mut TraceSession, command: u64) {
        egui::ScrollArea::vertical()
            .id_salt("edits-scroll")
            .show(ui, |ui| {
                self.add_ui(ui);
                ui.separator();
                self.list_ui(ui);
                self.save_ui(ui, s);
                ui.separator();
                self.compare_ui(ui, s, command);
                ui.separator();
                self.shader_ui(ui, s);
            });
    }

    fn add_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            let label = ui.label("Add edit:");
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut self.line)
                        .hint_text("draw 12: 0x0C3=0xFF0000FF   |   cmd 345: 0x0C0=0x1/0x3   |   draw 12: vs c4=1,0,0,1")
                        .desired_width(420.0),
                )
                .labelled_by(label.id);
            if std::mem::take(&mut self.focus_line) {
                r.request_focus();
            }
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.button("Add").clicked() || enter {
                let mut no_files =
                    |p: &str| Err(format!("'{p}': use the shader editor below for shaders"));
                match EditList::parse_script(&self.line, &mut no_files)
                    .and_then(|l| l.compile().map(|_| l))
                {
                    Ok(l) if l.edits.is_empty() => {
                        self.line_error = Some("nothing to add".into());
                    }
                    Ok(l) => {
                        self.change(|list| list.edits.extend(l.edits));
                        self.line.clear();
                        self.line_error = None;
                    }
                    Err(e) => self.line_error = Some(e.to_string()),
                }
            }
        });
        if let Some(e) = &self.line_error {
            ui.colored_label(egui::Color32::LIGHT_RED, e);
        }
        ui.label(
            RichText::new(
                "Syntax as `picaview edit --help`; right-click a write in Commands to override it.",
            )
            .weak(),
        );
    }

    fn list_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal(|ui| {
            ui.strong(format!("Edits ({})", self.list.edits.len()));
            if ui
                .add_enabled(!self.undo.is_empty(), egui::Button::new("Undo"))
                .clicked()
            {
                self.undo();
            }
            if ui
                .add_enabled(!self.redo.is_empty(), egui::Button::new("Redo"))
                .clicked()
            {
                self.redo();
            }
        });
        if self.list.edits.is_empty() {
            ui.label(RichText::new("No edits.").weak());
            return;
        }
        let mut toggle = None;
        let mut remove = None;
        for (i, e) in self.list.edits.iter().enumerate() {
            ui.horizontal(|ui| {
                let mut on = e.enabled;
                if ui
                    .checkbox(&mut on, RichText::new(describe(&e.kind)).monospace())
                    .on_hover_text("Enable / disable this edit")
                    .changed()
                {
                    toggle = Some(i);
                }
                if ui
                    .small_button("Remove")
                    .on_hover_text("Remove this edit")
                    .clicked()
                {
                    remove = Some(i);
                }
            });
        }
        if let Some(i) = toggle {
            self.change(|l| {
                if let Some(e) = l.edits.get_mut(i) {
                    e.enabled = !e.enabled;
                }
            });
        }
        if let Some(i) = remove {
            self.change(|l| {
                if i < l.edits.len() {
                    l.edits.remove(i);
                }
            });
        }
    }

    fn compare_ui(&mut self, ui: &mut egui::Ui, s: &mut TraceSession, command: u64) {
        ui.strong(format!(
            "Colour buffer after #{command}: before | after | difference"
        ));
        let current = self
            .asked
            .as_ref()
            .is_some_and(|(_, at, l)| *at == command && *l == self.list);
        if !current {
            self.next_id += 1;
            let id = self.next_id;
            self.asked = Some((id, command, self.list.clone()));
            let source = s.info.path.clone();
            s.send_edit_request(Request::EditCompare {
                id,
                source,
                at: command,
                edits: Arc::new(self.list.clone()),
            });
        }
        let Some((id, _, _)) = self.asked else { return };
        match &s.edit_compare {
            Some((got, Ok(imgs))) if *got == id => {
                if imgs.differing == 0 {
                    ui.label("The edits change no pixel here.");
                } else {
                    ui.label(format!("{} pixel(s) differ.", imgs.differing));
                }
                let tex = match &self.textures {
                    Some((tid, t)) if *tid == id => t.clone(),
                    _ => {
                        let ctx = ui.ctx();
                        let make = |name: &str, img: &ImageData| {
                            let opaque: Vec<[u8; 4]> =
                                img.pixels.iter().map(|p| [p[0], p[1], p[2], 255]).collect();
                            ctx.load_texture(
                                format!("edits-{name}"),
                                color_image(img.width, img.height, &opaque),
                                egui::TextureOptions::NEAREST,
                            )
                        };
                        let t = [
                            make("before", &imgs.before),
                            make("after", &imgs.after),
                            make("diff", &imgs.diff),
                        ];
                        self.textures = Some((id, t.clone()));
                        t
                    }
                };
                ui.horizontal(|ui| {
                    for t in &tex {
                        let size = t.size_vec2();
                        let scale = (240.0 / size.x.max(1.0)).min(1.0);
                        ui.image((t.id(), size * scale));
                    }
                });
            }
            Some((got, Err(e))) if *got == id => {
                ui.colored_label(egui::Color32::LIGHT_RED, e);
            }
            _ => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Rendering before and after…");
                });
            }
        }
    }

    fn shader_ui(&mut self, ui: &mut egui::Ui, s: &TraceSession) {
        ui.strong("Shader editor");
        ui.horizontal(|ui| {
            let label = ui.label("Before draw");
            ui.add(egui::TextEdit::singleline(&mut self.shader_draw).desired_width(60.0))
                .labelled_by(label.id);
            ui.radio_value(&mut self.shader_gs, false, "vertex shader");
            ui.radio_value(&mut self.shader_gs, true, "geometry shader");
            if ui
                .button("Load current disassembly")
                .on_hover_text("The program in the unit's memory as of the selected command")
                .clicked()
                && let Some(state) = &s.state
            {
                let unit = if self.shader_gs { &state.gs } else { &state.vs };
                self.shader_text = unit
                    .listing
                    .lines
                    .iter()
                    .map(|l| l.text.as_str())
                    .collect::<Vec<_>>()
                    .join("\n");
            }
        });
        let label = ui.label("Picasso source:");
        ui.add(
            egui::TextEdit::multiline(&mut self.shader_text)
                .code_editor()
                .desired_rows(8)
                .desired_width(f32::INFINITY),
        )
        .labelled_by(label.id);
        if ui.button("Assemble and add").clicked() {
            self.shader_errors.clear();
            let draw = match self.shader_draw.trim().parse::<u64>() {
                Ok(d) => d,
                Err(_) => {
                    self.shader_errors
                        .push(format!("'{}' is not a draw number", self.shader_draw));
                    return;
                }
            };
            let unit = if self.shader_gs {
                Unit::Geometry
            } else {
                Unit::Vertex
            };
            let kind = EditKind::Shader {
                draw,
                unit,
                name: format!("draw{draw}.{}.pica", if self.shader_gs { "g" } else { "v" }),
                source: self.shader_text.clone(),
            };
            let one = EditList {
                edits: vec![Edit::new(kind.clone())],
            };
            match one.compile() {
                Ok(_) => self.add(kind),
                Err(gpu_core::replay::edit::EditError::Assembly { errors, .. }) => {
                    self.shader_errors = errors;
                }
                Err(e) => self.shader_errors.push(e.to_string()),
            }
        }
        for e in &self.shader_errors {
            ui.colored_label(egui::Color32::LIGHT_RED, RichText::new(e).monospace());
        }
    }

    fn save_ui(&mut self, ui: &mut egui::Ui, s: &mut TraceSession) {
        ui.horizontal(|ui| {
            let label = ui.label("Save as .ctf:");
            ui.add(
                egui::TextEdit::singleline(&mut self.save_path)
                    .hint_text("/path/to/edited.ctf")
                    .desired_width(320.0),
            )
            .labelled_by(label.id);
            let ok = !self.save_path.trim().is_empty() && !self.list.edits.is_empty();
            if ui.add_enabled(ok, egui::Button::new("Save")).clicked() {
                s.edit_saved = None;
                s.send_edit_request(Request::SaveEdited {
                    source: s.info.path.clone(),
                    dest: self.save_path.trim().into(),
                    edits: Arc::new(self.list.clone()),
                });
            }
        });
        match &s.edit_saved {
            Some(Ok(m)) => {
                ui.label(m);
            }
            Some(Err(e)) => {
                ui.colored_label(egui::Color32::LIGHT_RED, e);
            }
            None => {}
        }
    }
}
