//! Per-draw cost table of one frame (issue 15): vertices fetched and shaded, post-transform
//! cache hits, shader instructions (total and per vertex), triangles in / after clipping /
//! culled / rasterised, fragments generated / killed by each test / written, texture samples;
//! sortable columns, a bar chart over the frame's draws, click a row or a bar to select the draw.
//!
//! Stage: presentation. Input: the trace index ([`TraceIndex`]: every draw's
//! [`DrawStats`], counted by the index pass, which asks for the cost counters
//! (`Observer::wants_costs`), so nothing is re-run for this table; the replays behind the
//! images run without the per-fragment ones). Output: [`AppCommand::SelectDraw`]. The pure
//! part ([`CostRow`], [`CostColumn`], [`frame_rows`], [`sort_rows`]) is shared with the
//! `picaview costs` command-line tool. Registers read: none.
//!
//! Vertex-cache hits: the model has a post-transform cache for indexed draws that lives for one
//! draw (`gpu_core::vertex_loader::VertexCacheMode`); a hit is a vertex whose index was seen
//! before in the draw, so it was neither loaded nor shaded again. UNVERIFIED: the hardware's
//! cache size and replacement policy are unknown, so the count is an upper bound of what the
//! hardware saves.

use eframe::egui::{self, Color32};
use gpu_core::debug::{DrawKind, DrawStats, Topology};
use gpu_core::replay::TraceIndex;
use serde::Serialize;

use crate::viewer::command::AppCommand;
use crate::viewer::session::TraceSession;

/// One draw's costs.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct CostRow {
    /// Draw index over the trace.
    pub draw: u64,
    /// Frame it belongs to.
    pub frame: u32,
    /// How it was started (`arrays`, `elements`, `immediate`).
    pub kind: &'static str,
    /// Topology (`list`, `strip`, `fan`, `geometry`).
    pub topology: &'static str,
    /// Vertices (indices) requested.
    pub count: u32,
    /// The counters.
    pub stats: DrawStats,
}

impl CostRow {
    /// Vertex-shader instructions per shaded vertex.
    pub fn vs_per_vertex(&self) -> f64 {
        if self.stats.vs_invocations == 0 {
            0.0
        } else {
            self.stats.vs_instructions as f64 / self.stats.vs_invocations as f64
        }
    }
}

/// A column of the cost table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CostColumn {
    /// Draw index.
    Draw,
    /// Vertices fetched by the loader.
    Fetched,
    /// Vertex-shader invocations.
    Shaded,
    /// Post-transform cache hits.
    CacheHits,
    /// Vertex-shader instructions (all vertices).
    VsInstructions,
    /// Vertex-shader instructions per shaded vertex.
    VsPerVertex,
    /// Geometry-shader instructions.
    GsInstructions,
    /// Triangles out of primitive assembly.
    TrianglesIn,
    /// Triangles after clipping (fan pieces counted).
    AfterClip,
    /// Assembled triangles clipping removed.
    ClippedAway,
    /// Triangles removed by face culling.
    Culled,
    /// Triangles rasterised.
    Rasterized,
    /// Fragments generated.
    Fragments,
    /// Fragments killed by the alpha test.
    AlphaKilled,
    /// Fragments killed by the stencil test.
    StencilKilled,
    /// Fragments killed by the depth test.
    DepthKilled,
    /// Fragments written.
    Written,
    /// Texture samples.
    TextureSamples,
    /// Texels fetched by those samples.
    TexelsFetched,
}

impl CostColumn {
    /// Every column in display order.
    pub const ALL: [CostColumn; 19] = [
        CostColumn::Draw,
        CostColumn::Fetched,
        CostColumn::Shaded,
        CostColumn::CacheHits,
        CostColumn::VsInstructions,
        CostColumn::VsPerVertex,
        CostColumn::GsInstructions,
        CostColumn::TrianglesIn,
        CostColumn::AfterClip,
        CostColumn::ClippedAway,
        CostColumn::Culled,
        CostColumn::Rasterized,
        CostColumn::Fragments,
        CostColumn::AlphaKilled,
        CostColumn::StencilKilled,
        CostColumn::DepthKilled,
        CostColumn::Written,
        CostColumn::TextureSamples,
        CostColumn::TexelsFetched,
    ];

    /// Column title.
    pub fn title(self) -> &'static str {
        match self {
            CostColumn::Draw => "draw",
            CostColumn::Fetched => "fetched",
            CostColumn::Shaded => "shaded",
            CostColumn::CacheHits => "cache hits",
            CostColumn::VsInstructions => "VS instr",
            CostColumn::VsPerVertex => "VS/vertex",
            CostColumn::GsInstructions => "GS instr",
            CostColumn::TrianglesIn => "tris in",
            CostColumn::AfterClip => "after clip",
            CostColumn::ClippedAway => "clipped away",
            CostColumn::Culled => "culled",
            CostColumn::Rasterized => "rasterised",
            CostColumn::Fragments => "fragments",
            CostColumn::AlphaKilled => "alpha killed",
            CostColumn::StencilKilled => "stencil killed",
            CostColumn::DepthKilled => "depth killed",
            CostColumn::Written => "written",
            CostColumn::TextureSamples => "tex samples",
            CostColumn::TexelsFetched => "texels",
        }
    }

    /// What the column counts (tooltip).
    pub fn help(self) -> &'static str {
        match self {
            CostColumn::Draw => "Draw index over the whole trace",
            CostColumn::Fetched => "Vertices fetched by the vertex loader",
            CostColumn::Shaded => "Vertex-shader invocations",
            CostColumn::CacheHits => {
                "Vertices taken from the post-transform cache (indexed draws; the cache lives for one draw; UNVERIFIED size)"
            }
            CostColumn::VsInstructions => "Vertex-shader instructions executed, all vertices",
            CostColumn::VsPerVertex => "Vertex-shader instructions per shaded vertex",
            CostColumn::GsInstructions => "Geometry-shader instructions executed",
            CostColumn::TrianglesIn => "Triangles out of primitive assembly",
            CostColumn::AfterClip => "Triangles after clipping (each fan piece counted)",
            CostColumn::ClippedAway => "Assembled triangles clipping removed entirely",
            CostColumn::Culled => "Triangles removed by face culling",
            CostColumn::Rasterized => "Triangles rasterised",
            CostColumn::Fragments => "Fragments generated by the rasteriser",
            CostColumn::AlphaKilled => "Fragments discarded by the alpha test",
            CostColumn::StencilKilled => "Fragments discarded by the stencil test",
            CostColumn::DepthKilled => "Fragments discarded by the depth test",
            CostColumn::Written => "Fragments that passed every test and were written",
            CostColumn::TextureSamples => {
                "Texture samples: fragments × sampled units (0-3, the procedural texture included)"
            }
            CostColumn::TexelsFetched => {
                "Texels fetched by units 0-2: 1 per nearest tap or shadow compare, 4 per bilinear tap, summed over the 1 or 2 mip levels a lookup reads (trilinear 8); the procedural texture fetches none"
            }
        }
    }

    /// The value of `row` in this column (for sorting and the bar chart).
    pub fn value(self, row: &CostRow) -> f64 {
        let s = &row.stats;
        let v = match self {
            CostColumn::Draw => row.draw,
            CostColumn::Fetched => s.vertices_loaded,
            CostColumn::Shaded => s.vs_invocations,
            CostColumn::CacheHits => s.vertex_cache_hits,
            CostColumn::VsInstructions => s.vs_instructions,
            CostColumn::VsPerVertex => return row.vs_per_vertex(),
            CostColumn::GsInstructions => s.gs_instructions,
            CostColumn::TrianglesIn => s.triangles_assembled,
            CostColumn::AfterClip => s.triangles_clipped,
            CostColumn::ClippedAway => s.triangles_clipped_away,
            CostColumn::Culled => s.triangles_culled,
            CostColumn::Rasterized => s.triangles_rasterized,
            CostColumn::Fragments => s.fragments_generated,
            CostColumn::AlphaKilled => s.fragments_alpha_failed,
            CostColumn::StencilKilled => s.fragments_stencil_failed,
            CostColumn::DepthKilled => s.fragments_depth_failed,
            CostColumn::Written => s.fragments_written,
            CostColumn::TextureSamples => s.texture_samples,
            CostColumn::TexelsFetched => s.texels_fetched,
        };
        v as f64
    }

    /// The cell text of `row` in this column.
    pub fn text(self, row: &CostRow) -> String {
        match self {
            CostColumn::VsPerVertex => format!("{:.1}", row.vs_per_vertex()),
            _ => format!("{}", self.value(row) as u64),
        }
    }
}

fn kind_name(k: DrawKind) -> &'static str {
    match k {
        DrawKind::Arrays => "arrays",
        DrawKind::Elements => "elements",
        DrawKind::Immediate => "immediate",
    }
}

fn topology_name(t: Topology) -> &'static str {
    match t {
        Topology::List => "list",
        Topology::Strip => "strip",
        Topology::Fan => "fan",
        Topology::Geometry => "geometry",
    }
}

/// The rows of frame `frame`'s draws, in draw order (empty when the frame does not exist).
pub fn frame_rows(index: &TraceIndex, frame: u32) -> Vec<CostRow> {
    let Some(f) = index.frames.get(frame as usize) else {
        return Vec::new();
    };
    let first = usize::try_from(f.draws.start).unwrap_or(usize::MAX);
    let end = usize::try_from(f.draws.end).unwrap_or(usize::MAX);
    index
        .draws
        .get(first.min(index.draws.len())..end.min(index.draws.len()))
        .unwrap_or(&[])
        .iter()
        .map(|r| CostRow {
            draw: r.info.draw,
            frame: r.frame,
            kind: kind_name(r.info.kind),
            topology: topology_name(r.info.topology),
            count: r.info.count,
            stats: r.stats,
        })
        .collect()
}

/// Sorts `rows` by `column` (ties by draw index, so the order is deterministic).
pub fn sort_rows(rows: &mut [CostRow], column: CostColumn, ascending: bool) {
    rows.sort_by(|a, b| {
        let o = column
            .value(a)
            .total_cmp(&column.value(b))
            .then(a.draw.cmp(&b.draw));
        if ascending { o } else { o.reverse() }
    });
}

/// Sums of every counter over `rows`.
pub fn totals(rows: &[CostRow]) -> DrawStats {
    let mut t = DrawStats::default();
    for r in rows {
        t.add(&r.stats);
    }
    t
}

/// Cost panel UI state.
#[derive(Debug)]
pub struct CostView {
    /// Column the table is sorted by.
    pub sort: CostColumn,
    /// Ascending order.
    pub ascending: bool,
    /// Column the bar chart shows.
    pub chart: CostColumn,
}

impl Default for CostView {
    fn default() -> Self {
        Self {
            sort: CostColumn::Draw,
            ascending: true,
            chart: CostColumn::Fragments,
        }
    }
}

impl CostView {
    /// Draws the panel for the frame containing command `command`.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        command: u64,
        selected_draw: Option<u64>,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(index) = s.index.clone() else {
            ui.spinner();
            return;
        };
        let frame = s.frame_of(command).map_or(0, |f| f.index);
        let mut rows = frame_rows(&index, frame);
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("Frame {frame}: {} draws", rows.len()));
            ui.separator();
            egui::ComboBox::from_label("bar chart")
                .selected_text(self.chart.title())
                .show_ui(ui, |ui| {
                    for c in CostColumn::ALL.into_iter().skip(1) {
                        ui.selectable_value(&mut self.chart, c, c.title());
                    }
                });
        });
        if rows.is_empty() {
            ui.weak("This frame has no draws.");
            return;
        }
        let t = totals(&rows);
        ui.weak(format!(
            "totals: {} vertices shaded, {} VS instructions, {} triangles in, {} rasterised, {} fragments generated, {} written",
            t.vs_invocations,
            t.vs_instructions,
            t.triangles_assembled,
            t.triangles_rasterized,
            t.fragments_generated,
            t.fragments_written
        ));
        self.chart_ui(ui, &rows, selected_draw, queue);
        ui.separator();
        sort_rows(&mut rows, self.sort, self.ascending);
        // Many columns scroll sideways instead of being cut at the edge.
        egui::ScrollArea::horizontal()
            .id_salt("cost_table_h")
            .auto_shrink([false, false])
            .show(ui, |ui| self.table_ui(ui, &rows, selected_draw, queue));
    }

    fn chart_ui(
        &self,
        ui: &mut egui::Ui,
        rows: &[CostRow],
        selected: Option<u64>,
        queue: &mut Vec<AppCommand>,
    ) {
        let height = 90.0;
        let width = ui.available_width().max(64.0);
        let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, height), egui::Sense::click());
        crate::viewer::widgets::name_button(
            &resp,
            "Cost bar chart (click a bar to select its draw)",
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, Color32::from_gray(24));
        let max = rows
            .iter()
            .map(|r| self.chart.value(r))
            .fold(0.0f64, f64::max)
            .max(1.0);
        let n = rows.len().max(1) as f32;
        let bar_w = rect.width() / n;
        for (i, r) in rows.iter().enumerate() {
            let h = (self.chart.value(r) / max) as f32 * (height - 4.0);
            let x0 = rect.left() + i as f32 * bar_w;
            let bar = egui::Rect::from_min_max(
                egui::pos2(x0 + bar_w * 0.1, rect.bottom() - h),
                egui::pos2(x0 + bar_w * 0.9, rect.bottom()),
            );
            let color = if selected == Some(r.draw) {
                Color32::YELLOW
            } else {
                Color32::from_rgb(90, 150, 220)
            };
            painter.rect_filled(bar, 0.0, color);
        }
        if let Some(pos) = resp.hover_pos() {
            let i = ((pos.x - rect.left()) / bar_w) as usize;
            if let Some(r) = rows.get(i) {
                resp.clone().on_hover_text(format!(
                    "draw {}: {} {}",
                    r.draw,
                    self.chart.text(r),
                    self.chart.title()
                ));
            }
        }
        if resp.clicked()
            && let Some(pos) = resp.interact_pointer_pos()
        {
            let i = ((pos.x - rect.left()) / bar_w) as usize;
            if let Some(r) = rows.get(i) {
                queue.push(AppCommand::SelectDraw(r.draw));
            }
        }
    }

    fn table_ui(
        &mut self,
        ui: &mut egui::Ui,
        rows: &[CostRow],
        selected: Option<u64>,
        queue: &mut Vec<AppCommand>,
    ) {
        use egui_extras::{Column, TableBuilder};
        let mut table = TableBuilder::new(ui)
            .id_salt("cost_table")
            .striped(true)
            .resizable(true)
            .cell_layout(egui::Layout::right_to_left(egui::Align::Center));
        for _ in CostColumn::ALL {
            table = table.column(Column::auto().at_least(44.0));
        }
        let mut clicked_sort = None;
        table
            .header(20.0, |mut header| {
                for c in CostColumn::ALL {
                    header.col(|ui| {
                        let arrow = if self.sort == c {
                            if self.ascending { " ↑" } else { " ↓" }
                        } else {
                            ""
                        };
                        if ui
                            .button(format!("{}{arrow}", c.title()))
                            .on_hover_text(c.help())
                            .clicked()
                        {
                            clicked_sort = Some(c);
                        }
                    });
                }
            })
            .body(|body| {
                body.rows(18.0, rows.len(), |mut row| {
                    let r = &rows[row.index()];
                    row.set_selected(selected == Some(r.draw));
                    let mut clicked = false;
                    for c in CostColumn::ALL {
                        row.col(|ui| {
                            // Every cell is clickable: a click anywhere on the row selects.
                            let text = if c == CostColumn::Draw {
                                egui::RichText::new(format!("draw #{}", r.draw))
                            } else {
                                egui::RichText::new(c.text(r)).monospace()
                            };
                            let resp = ui.add(
                                egui::Label::new(text)
                                    .selectable(false)
                                    .sense(egui::Sense::click()),
                            );
                            clicked |= resp.clicked();
                        });
                    }
                    if clicked {
                        queue.push(AppCommand::SelectDraw(r.draw));
                    }
                });
            });
        if let Some(c) = clicked_sort {
            if self.sort == c {
                self.ascending = !self.ascending;
            } else {
                self.sort = c;
                // Costs are most useful largest first; draw order ascending.
                self.ascending = c == CostColumn::Draw;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(draw: u64, fragments: u64) -> CostRow {
        CostRow {
            draw,
            frame: 0,
            kind: "arrays",
            topology: "list",
            count: 3,
            stats: DrawStats {
                fragments_generated: fragments,
                vs_invocations: 3,
                vs_instructions: 18,
                ..DrawStats::default()
            },
        }
    }

    #[test]
    fn sorting_and_values() {
        let mut rows = vec![row(0, 5), row(1, 50), row(2, 5)];
        sort_rows(&mut rows, CostColumn::Fragments, false);
        assert_eq!(rows.iter().map(|r| r.draw).collect::<Vec<_>>(), [1, 2, 0]);
        sort_rows(&mut rows, CostColumn::Fragments, true);
        assert_eq!(rows.iter().map(|r| r.draw).collect::<Vec<_>>(), [0, 2, 1]);
        assert_eq!(CostColumn::VsPerVertex.text(&rows[0]), "6.0");
        assert_eq!(totals(&rows).fragments_generated, 60);
    }

    #[test]
    fn texels_fetched_column_sorts_and_sums() {
        let mut rows = vec![row(0, 5), row(1, 50), row(2, 5)];
        for (r, (samples, texels)) in rows.iter_mut().zip([(5, 20), (50, 50), (5, 40)]) {
            r.stats.texture_samples = samples;
            r.stats.texels_fetched = texels;
        }
        sort_rows(&mut rows, CostColumn::TexelsFetched, false);
        assert_eq!(rows.iter().map(|r| r.draw).collect::<Vec<_>>(), [1, 2, 0]);
        assert_eq!(CostColumn::TexelsFetched.text(&rows[1]), "40");
        assert_eq!(CostColumn::TexelsFetched.title(), "texels");
        let t = totals(&rows);
        assert_eq!((t.texture_samples, t.texels_fetched), (60, 110));
        assert!(CostColumn::ALL.contains(&CostColumn::TexelsFetched));
        assert!(CostColumn::ALL.contains(&CostColumn::TextureSamples));
    }
}
