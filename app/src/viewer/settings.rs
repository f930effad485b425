//! The Settings dialog (View > Settings…): the keyframe store's memory budget and the work
//! budgets per command-list submission, frame and trace that a trace is indexed and replayed
//! under. Apply re-indexes the open trace with the new values; the last index's keyframe
//! figures (kept, dropped, bytes, spacing) are shown next to the budget.
//!
//! The work-budget cells are text (a count, `0x` hex, `2^N` or `unlimited`) read by the same
//! parser as the CLI's `--budget` ([`WorkBudget::apply_spec`]), so both accept the same values.

use eframe::egui;
use gpu_core::budget::{BudgetResource, BudgetScope, WorkBudget};
use gpu_core::replay::TraceIndex;

use super::worker::ReplaySettings;

/// The dialog's state: the settings in force and the values being edited.
#[derive(Clone, Debug)]
pub struct SettingsDialog {
    /// The window is shown.
    pub open: bool,
    /// The settings the open trace was (or the next one will be) indexed under.
    pub applied: ReplaySettings,
    /// Edited keyframe budget in MiB.
    pub keyframe_mib: u64,
    /// Edited work budgets: `[scope][resource]` as text.
    pub cells: [[String; BudgetResource::ALL.len()]; 3],
    /// Why the last Apply was refused.
    pub error: Option<String>,
}

fn cell_text(v: u64) -> String {
    if v == u64::MAX {
        "unlimited".into()
    } else if v.is_power_of_two() && v >= 1 << 10 {
        format!("2^{}", v.trailing_zeros())
    } else {
        v.to_string()
    }
}

impl SettingsDialog {
    /// A closed dialog whose fields show `applied`.
    pub fn new(applied: ReplaySettings) -> Self {
        let mut d = Self {
            open: false,
            applied,
            keyframe_mib: 0,
            cells: Default::default(),
            error: None,
        };
        d.reset_to(applied);
        d
    }

    /// Sets every field to `s`.
    pub fn reset_to(&mut self, s: ReplaySettings) {
        self.keyframe_mib = s.keyframe_budget >> 20;
        for (i, scope) in BudgetScope::ALL.into_iter().enumerate() {
            for (j, r) in BudgetResource::ALL.into_iter().enumerate() {
                self.cells[i][j] = cell_text(s.work.scope(scope).get(r));
            }
        }
        self.error = None;
    }

    /// The settings the fields describe, or why they are not valid.
    pub fn edited(&self) -> Result<ReplaySettings, String> {
        let mut spec = Vec::new();
        for (i, scope) in BudgetScope::ALL.into_iter().enumerate() {
            for (j, r) in BudgetResource::ALL.into_iter().enumerate() {
                spec.push(format!(
                    "{}-per-{}={}",
                    r.name(),
                    scope.name(),
                    self.cells[i][j].trim()
                ));
            }
        }
        let mut work = WorkBudget::default();
        work.apply_spec(&spec.join(","))
            .map_err(|e| e.to_string())?;
        Ok(ReplaySettings {
            keyframe_budget: self.keyframe_mib.saturating_mul(1 << 20),
            work,
        })
    }

    /// Shows the window when open. Returns the new settings when Apply was pressed with valid
    /// values that differ from the applied ones (the caller re-indexes).
    pub fn show(
        &mut self,
        ctx: &egui::Context,
        index: Option<&TraceIndex>,
    ) -> Option<ReplaySettings> {
        if !self.open {
            return None;
        }
        let mut open = true;
        let mut result = None;
        egui::Window::new("Settings")
            .open(&mut open)
            .resizable(false)
            .show(ctx, |ui| {
                ui.heading("Keyframes");
                ui.horizontal(|ui| {
                    let label = ui.label("Memory budget");
                    ui.add(
                        egui::DragValue::new(&mut self.keyframe_mib)
                            .range(0..=1 << 20)
                            .suffix(" MiB"),
                    )
                    .labelled_by(label.id)
                    .on_hover_text(
                        "Keyframes are thinned to stay under this; seeks re-execute more when it is small",
                    );
                });
                if let Some(ix) = index {
                    ui.weak(format!(
                        "last index: {} keyframe(s) kept, {} dropped, {:.1} MiB of {} MiB, spacing x{}",
                        ix.keyframes,
                        ix.keyframes_dropped,
                        ix.keyframe_bytes as f64 / f64::from(1u32 << 20),
                        ix.keyframe_budget >> 20,
                        ix.keyframe_stride
                    ));
                }
                ui.separator();
                ui.heading("Work budgets");
                ui.weak("A count, 0x hex, 2^N or `unlimited`. When one runs out, the rest of its submission / frame / trace is skipped with a diagnostic in the log.");
                egui::Grid::new("work_budgets")
                    .num_columns(4)
                    .striped(true)
                    .show(ui, |ui| {
                        ui.label("");
                        for scope in BudgetScope::ALL {
                            ui.strong(format!("per {}", scope.name()));
                        }
                        ui.end_row();
                        for (j, r) in BudgetResource::ALL.into_iter().enumerate() {
                            let label = ui.label(r.name());
                            for i in 0..BudgetScope::ALL.len() {
                                ui.add(
                                    egui::TextEdit::singleline(&mut self.cells[i][j])
                                        .desired_width(90.0)
                                        .id_salt(("budget", i, j)),
                                )
                                .labelled_by(label.id);
                            }
                            ui.end_row();
                        }
                    });
                if let Some(e) = &self.error {
                    ui.colored_label(super::widgets::WARN, e);
                }
                ui.horizontal(|ui| {
                    if ui.button("Apply and re-index").clicked() {
                        match self.edited() {
                            Ok(s) => {
                                self.error = None;
                                if s != self.applied {
                                    self.applied = s;
                                    result = Some(s);
                                }
                            }
                            Err(e) => self.error = Some(e),
                        }
                    }
                    if ui.button("Defaults").clicked() {
                        self.reset_to(ReplaySettings::default());
                    }
                    if ui.button("Revert").clicked() {
                        self.reset_to(self.applied);
                    }
                });
            });
        self.open = open;
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_round_trip_and_bad_cells_are_refused() {
        let mut s = ReplaySettings::default();
        s.work.frame.draws = 12;
        s.work.trace.fragments = u64::MAX;
        s.keyframe_budget = 64 << 20;
        let mut d = SettingsDialog::new(s);
        assert_eq!(d.edited().unwrap(), s);
        assert_eq!(d.cells[1][1], "12");
        assert_eq!(d.cells[2][4], "unlimited");
        d.cells[0][0] = "lots".into();
        assert!(d.edited().unwrap_err().contains("writes-per-submission"));
        d.reset_to(ReplaySettings::default());
        assert_eq!(d.edited().unwrap(), ReplaySettings::default());
    }
}
