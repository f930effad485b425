//! Log panel: messages (load results, worker notes, errors) in the order they happened, newest
//! last, following the newest; and, on a second page, the trace's diagnostics from the index
//! pass, each linked to the command where it happened.
//!
//! Stage: presentation. Inputs: the app's log and `TraceIndex::diagnostics`. Output:
//! selection commands.

use eframe::egui::{self, RichText};

use crate::viewer::command::AppCommand;
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::WARN;

/// Log panel UI state.
#[derive(Debug, Default)]
pub struct LogView {
    /// Show the trace's diagnostics instead of the messages.
    pub diagnostics: bool,
}

impl LogView {
    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: Option<&TraceSession>,
        log: &[String],
        queue: &mut Vec<AppCommand>,
    ) {
        let diags = s
            .and_then(|s| s.index.as_ref())
            .map(|i| i.diagnostics.as_slice())
            .unwrap_or(&[]);
        ui.horizontal(|ui| {
            ui.strong("Log");
            if ui
                .selectable_label(!self.diagnostics, format!("Messages ({})", log.len()))
                .clicked()
            {
                self.diagnostics = false;
            }
            if ui
                .selectable_label(self.diagnostics, format!("Diagnostics ({})", diags.len()))
                .on_hover_text("Problems the replay found in the trace, with the command")
                .clicked()
            {
                self.diagnostics = true;
            }
        });
        let row_h = ui.text_style_height(&egui::TextStyle::Monospace).max(16.0);
        if !self.diagnostics {
            // Newest last; the view follows the newest line unless the user scrolled up.
            egui::ScrollArea::both()
                .id_salt("log_scroll")
                .auto_shrink([false, false])
                .stick_to_bottom(true)
                .show_rows(ui, row_h, log.len(), |ui, range| {
                    for m in log.get(range).unwrap_or(&[]) {
                        let mut t = RichText::new(m.as_str()).monospace();
                        if m.starts_with("error:") {
                            t = t.color(WARN);
                        }
                        // One line per message: show_rows needs equal row heights.
                        ui.add(egui::Label::new(t).extend());
                    }
                });
            return;
        }
        egui::ScrollArea::both()
            .id_salt("diag_scroll")
            .auto_shrink([false, false])
            .show_rows(ui, row_h, diags.len(), |ui, range| {
                for (pos, d) in diags.get(range).unwrap_or(&[]) {
                    ui.horizontal(|ui| {
                        if ui
                            .link(RichText::new(format!("#{}", pos.writes)).monospace())
                            .on_hover_text("Go to this command")
                            .clicked()
                        {
                            queue.push(AppCommand::SelectCommand(pos.writes));
                        }
                        let draw = d.draw.map(|d| format!("draw {d}: ")).unwrap_or_default();
                        ui.colored_label(
                            WARN,
                            RichText::new(format!("{draw}{}", d.detail)).monospace(),
                        );
                    });
                }
            });
    }
}
