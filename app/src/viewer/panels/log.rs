//! Log panel: messages (load results, worker notes) and the trace's diagnostics from the index
//! pass, each diagnostic linked to the command where it happened.
//!
//! Stage: presentation. Inputs: the session's log and `TraceIndex::diagnostics`. Output:
//! selection commands.

use eframe::egui::{self, RichText};

use crate::viewer::command::AppCommand;
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::WARN;

/// Draws the panel.
pub fn ui(
    ui: &mut egui::Ui,
    s: Option<&TraceSession>,
    app_log: &[String],
    queue: &mut Vec<AppCommand>,
) {
    let diags = s
        .and_then(|s| s.index.as_ref())
        .map(|i| i.diagnostics.as_slice())
        .unwrap_or(&[]);
    let log: Vec<&String> = app_log
        .iter()
        .chain(s.map(|s| s.log.iter()).into_iter().flatten())
        .collect();
    ui.horizontal(|ui| {
        ui.strong("Log");
        ui.weak(format!(
            "{} message(s), {} diagnostic(s)",
            log.len(),
            diags.len()
        ));
    });
    let rows = log.len() + diags.len();
    egui::ScrollArea::vertical()
        .id_salt("log_scroll")
        .auto_shrink([false, false])
        .stick_to_bottom(true)
        .show_rows(ui, 16.0, rows, |ui, range| {
            for r in range {
                if let Some(m) = log.get(r) {
                    ui.monospace(m.as_str());
                } else if let Some((pos, d)) = diags.get(r - log.len()) {
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
            }
        });
}
