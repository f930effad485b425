//! Vertex view: for the current draw, every vertex's shader inputs (attribute slots with their
//! provenance: loader and address, fixed value, default) and its compacted shader outputs, plus
//! the assembled and clipped triangles.
//!
//! Stage: presentation of the vertex pipeline. Inputs: a
//! [`crate::viewer::protocol::DrawInspection`] from the worker. Output: vertex selection.
//! Registers read: none (the detail was recorded by the pipeline).

use eframe::egui::{self, RichText};
use egui_extras::{Column, TableBuilder};
use gpu_core::debug::{AttribSource, DrawDetail};

use crate::viewer::command::AppCommand;
use crate::viewer::panels::timeline::{draw_label, tri_summary};
use crate::viewer::prefs::Tab;
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::{self, fmt_vec4};

/// Vertex view UI state.
#[derive(Debug, Default)]
pub struct VerticesView {
    /// Show the triangle lists.
    pub show_triangles: bool,
}

/// The selected triangle's line: its fate and its three vertices, each with a button that
/// selects it and one that opens its shader trace. Returns the vertices (indices in the draw)
/// to highlight in the table.
fn triangle_ui(
    ui: &mut egui::Ui,
    d: &DrawDetail,
    triangle: Option<u32>,
    selected: Option<u32>,
    queue: &mut Vec<AppCommand>,
) -> Vec<u32> {
    let Some(t) = triangle else {
        return Vec::new();
    };
    let i = t as usize;
    let fate = d.fates.get(i).map_or("not recorded", |f| f.name());
    let verts = d.triangle_vertices.get(i).copied().flatten();
    ui.horizontal_wrapped(|ui| {
        ui.strong(format!("Triangle {t}"));
        ui.label(format!("({fate})"));
        match verts {
            Some(vs) => {
                ui.label("vertices:");
                for k in vs {
                    let b = ui
                        .selectable_label(selected == Some(k), format!("k = {k}"))
                        .on_hover_text("Select this vertex");
                    if b.clicked() {
                        queue.push(AppCommand::SelectVertex(k));
                    }
                    if ui
                        .small_button("shader trace ▶")
                        .on_hover_text(format!("Debug the vertex shader of vertex {k}"))
                        .clicked()
                    {
                        queue.push(AppCommand::SelectVertex(k));
                        queue.push(AppCommand::Tab(Tab::Shader));
                    }
                }
            }
            None => {
                ui.weak("its vertices are not known (geometry-shader output, or a primitive continued from an earlier draw)");
            }
        }
    });
    verts.map(|v| v.to_vec()).unwrap_or_default()
}

/// Monospace text that lets clicks through to the table row (not selectable).
fn cell(ui: &mut egui::Ui, text: String) -> egui::Response {
    ui.add(
        egui::Label::new(RichText::new(text).monospace())
            .selectable(false)
            .extend(),
    )
}

/// The geometry shader's output of a GS draw: every emitted vertex of the recorded invocations,
/// with the invocation it came from and whether it completed a primitive. Clicking a row selects
/// that invocation for the shader debugger.
fn gs_output_ui(
    ui: &mut egui::Ui,
    insp: &crate::viewer::protocol::DrawInspection,
    queue: &mut Vec<AppCommand>,
) {
    let d = &insp.detail;
    let emitted: usize = d.gs_invocations.iter().map(|i| i.emits.len()).sum();
    let prims: usize = d.gs_invocations.iter().map(|i| i.primitives()).sum();
    let more = if d.gs_invocations_dropped > 0 {
        format!(" (+{} invocations not recorded)", d.gs_invocations_dropped)
    } else {
        String::new()
    };
    egui::CollapsingHeader::new(format!(
        "Geometry-shader output: {} invocations, {emitted} emitted vertices, {prims} primitives{more}",
        d.gs_invocations.len()
    ))
    .id_salt(("gs_output", insp.draw))
    .default_open(false)
    .show(ui, |ui| {
        if ui
            .button("Debug the geometry shader ▶")
            .on_hover_text("Step invocation 0 in the shader view")
            .clicked()
        {
            queue.push(AppCommand::SelectGsInvocation(Some(0)));
            queue.push(AppCommand::Tab(Tab::Shader));
        }
        let rows: Vec<(usize, usize)> = d
            .gs_invocations
            .iter()
            .enumerate()
            .flat_map(|(i, inv)| (0..inv.emits.len()).map(move |e| (i, e)))
            .collect();
        // The height a selectable monospace row really takes, so that show_rows places rows
        // where they are drawn.
        let row_h = (ui.text_style_height(&egui::TextStyle::Monospace)
            + 2.0 * ui.spacing().button_padding.y)
            .max(ui.spacing().interact_size.y);
        // Rows never wrap (show_rows needs one height); long ones scroll sideways.
        egui::ScrollArea::both()
            .id_salt(("gs_output_rows", insp.draw))
            .max_height(row_h * 12.0)
            .auto_shrink([false, true])
            .show_rows(ui, row_h, rows.len(), |ui, range| {
                ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                for &(i, e) in &rows[range] {
                    let Some(inv) = d.gs_invocations.get(i) else {
                        continue;
                    };
                    let Some(em) = inv.emits.get(e) else {
                        continue;
                    };
                    let prim = if em.primitive {
                        if em.winding { " prim(inv)" } else { " prim" }
                    } else {
                        ""
                    };
                    let text = format!(
                        "inv {:4} emit {e} slot {}{prim:10} pos {} color {} tc0 ({}, {})",
                        inv.index,
                        em.slot,
                        fmt_vec4(&em.vertex.pos),
                        fmt_vec4(&em.vertex.color),
                        widgets::fmt_f32(em.vertex.tc0[0]),
                        widgets::fmt_f32(em.vertex.tc0[1]),
                    );
                    let r = ui
                        .selectable_label(false, RichText::new(text).monospace())
                        .on_hover_text("Click to debug this invocation in the shader view");
                    if r.clicked() {
                        queue.push(AppCommand::SelectGsInvocation(Some(inv.index)));
                        queue.push(AppCommand::Tab(Tab::Shader));
                    }
                }
            });
    });
}

fn source_text(s: &AttribSource) -> String {
    match s {
        AttribSource::Buffer { loader, addr } => format!("loader {loader} @ 0x{addr:08X}"),
        AttribSource::Fixed => "fixed attribute".into(),
        AttribSource::Default => "default (previous contents)".into(),
        AttribSource::Immediate => "immediate-mode vertex".into(),
    }
}

impl VerticesView {
    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        command: u64,
        selected: Option<u32>,
        triangle: Option<u32>,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(draw) = s.draw_at_or_before(command) else {
            ui.label("No draw at or before the selected command. Select a draw in the timeline.");
            return;
        };
        let pending = s.detail_pending();
        let insp = match s.want_detail(draw) {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Replaying draw #{draw} with detail…"));
                });
                return;
            }
            Some(Err(e)) => {
                ui.colored_label(widgets::WARN, format!("Draw #{draw}: {e}"));
                return;
            }
            Some(Ok(i)) => i.clone(),
        };
        let d = &insp.detail;
        let rec = s
            .index
            .as_ref()
            .and_then(|i| i.draws.get(usize::try_from(draw).ok()?))
            .cloned();
        ui.horizontal_wrapped(|ui| {
            let title = rec
                .as_ref()
                .map_or_else(|| format!("Draw #{draw}"), |r| draw_label(draw, r));
            ui.label(RichText::new(title).heading());
            // The same triangle counts as the timeline (from the draw's counters), then what
            // this view lists.
            let tris = rec.as_ref().map(|r| tri_summary(&r.stats)).unwrap_or_default();
            ui.label(format!(
                "{} vertices ({} shader invocations) → {tris}; listed: {} assembled, {} after clipping",
                d.shaded.len(),
                d.loaded.len(),
                d.assembled.len(),
                d.clipped.len()
            ));
            if pending {
                ui.spinner();
            }
        });
        for diag in &insp.diagnostics {
            ui.colored_label(widgets::WARN, &diag.detail);
        }
        ui.horizontal(|ui| {
            ui.checkbox(&mut self.show_triangles, "Show triangles");
            match selected {
                Some(k) => {
                    ui.label(format!("selected vertex {k}"));
                    if ui.button("Debug its shader ▶").clicked() {
                        queue.push(AppCommand::Tab(Tab::Shader));
                    }
                }
                None => {
                    ui.weak("Click a row to select a vertex, then debug its shader.");
                }
            }
        });
        let tri_vertices = triangle_ui(ui, d, triangle, selected, queue);
        if self.show_triangles {
            egui::CollapsingHeader::new(format!("Clipped triangles ({})", d.clipped.len()))
                .default_open(true)
                .show(ui, |ui| {
                    egui::ScrollArea::vertical()
                        .id_salt("tris")
                        .max_height(160.0)
                        .show_rows(ui, 16.0, d.clipped.len(), |ui, range| {
                            for i in range {
                                if let Some(t) = d.clipped.get(i) {
                                    ui.monospace(format!(
                                        "{i:5}: ({:.2}, {:.2}, z {:.4}) ({:.2}, {:.2}, z {:.4}) ({:.2}, {:.2}, z {:.4})",
                                        t[0].x, t[0].y, t[0].z_over_w,
                                        t[1].x, t[1].y, t[1].z_over_w,
                                        t[2].x, t[2].y, t[2].z_over_w
                                    ));
                                }
                            }
                        });
                });
        }
        if !d.gs_invocations.is_empty() {
            gs_output_ui(ui, &insp, queue);
        }
        ui.separator();
        // Input record per shaded vertex: its own load, or the load of its vertex id (cache hit).
        let inputs: Vec<Option<usize>> = d
            .shaded
            .iter()
            .map(|sv| {
                d.loaded
                    .iter()
                    .position(|l| l.index_in_draw == sv.index_in_draw)
                    .or_else(|| {
                        let id = insp.vertex_ids.get(sv.index_in_draw as usize)?;
                        d.loaded.iter().rposition(|l| {
                            l.vertex_id == *id && l.index_in_draw <= sv.index_in_draw
                        })
                    })
            })
            .collect();
        let n_in = d.loaded.iter().map(|l| l.attrs.len()).max().unwrap_or(0);
        let n_out = d.shaded.iter().map(|v| v.outputs.len()).max().unwrap_or(0);
        // Many attribute/output columns scroll sideways instead of being cut at the edge.
        egui::ScrollArea::horizontal()
            .id_salt("vertex_table_h")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                let mut table = TableBuilder::new(ui)
                    .id_salt("vertex_table")
                    .striped(true)
                    .sense(egui::Sense::click())
                    .column(Column::exact(50.0))
                    .column(Column::exact(60.0))
                    .columns(
                        Column::auto().at_least(120.0).resizable(true).clip(true),
                        n_in + n_out,
                    )
                    .min_scrolled_height(100.0);
                if let Some(k) = selected
                    && let Some(row) = d.shaded.iter().position(|v| v.index_in_draw == k)
                {
                    table = table.scroll_to_row(row, None);
                }
                let shaded = &d.shaded;
                let loaded = &d.loaded;
                table
                    .header(20.0, |mut h| {
                        h.col(|ui| {
                            ui.strong("k");
                        });
                        h.col(|ui| {
                            ui.strong("id");
                        });
                        for i in 0..n_in {
                            h.col(|ui| {
                                ui.strong(format!("in v-slot {i}")).on_hover_text(
                                    "Attribute slot as loaded (before the input permutation)",
                                );
                            });
                        }
                        for i in 0..n_out {
                            h.col(|ui| {
                                ui.strong(format!("out slot {i}")).on_hover_text(
                                    "Compacted output register (the i-th enabled o register)",
                                );
                            });
                        }
                    })
                    .body(|body| {
                        body.rows(18.0, shaded.len(), |mut row| {
                            let r = row.index();
                            let Some(sv) = shaded.get(r) else {
                                return;
                            };
                            row.set_selected(
                                selected == Some(sv.index_in_draw)
                                    || tri_vertices.contains(&sv.index_in_draw),
                            );
                            let l = inputs.get(r).copied().flatten().and_then(|i| loaded.get(i));
                            row.col(|ui| {
                                cell(ui, sv.index_in_draw.to_string());
                            });
                            row.col(|ui| {
                                cell(ui, l.map_or("-".into(), |l| l.vertex_id.to_string()));
                            });
                            for i in 0..n_in {
                                row.col(|ui| {
                                    if let Some(l) = l
                                        && let Some(v) = l.attrs.get(i)
                                    {
                                        let src =
                                            l.sources.get(i).map(source_text).unwrap_or_default();
                                        cell(ui, fmt_vec4(v)).on_hover_text(format!(
                                            "{src}\n{}",
                                            widgets::fmt_vec4_bits(v)
                                        ));
                                    }
                                });
                            }
                            for i in 0..n_out {
                                row.col(|ui| {
                                    if let Some(v) = sv.outputs.get(i) {
                                        cell(ui, fmt_vec4(v))
                                            .on_hover_text(widgets::fmt_vec4_bits(v));
                                    }
                                });
                            }
                            if row.response().clicked() {
                                queue.push(AppCommand::SelectVertex(sv.index_in_draw));
                            }
                        });
                    });
            });
    }
}
