//! Timeline panel: frames, and within each frame its draws (with colour-buffer thumbnails),
//! memory fills, display transfers / texture copies and command-list submissions, in stream
//! order; filters by kind and by register.
//!
//! Stage: presentation. Inputs: the trace index (frames, draws, engine events), thumbnails and
//! the register history ([`crate::viewer::provenance::Provenance`]) from the session. Output:
//! selection commands. Registers read: none (the register filter looks the name up in the
//! catalogue, `pica_cmd::regs::id_by_name`).

use std::collections::BTreeSet;
use std::sync::Arc;

use eframe::egui::{self, RichText};
use gpu_core::debug::{DrawKind, EngineEvent, Topology};
use gpu_core::replay::{DrawRecord, TraceIndex};

use crate::viewer::command::AppCommand;
use crate::viewer::prefs::Prefs;
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::{self, paint_image};

/// One row of the flattened timeline.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Row {
    Frame(u32),
    Draw(u64),
    Event(usize),
}

/// Timeline UI state.
#[derive(Debug, Default)]
pub struct TimelineView {
    expanded: BTreeSet<u32>,
    /// Per frame, the range of engine events in it (rebuilt when the index changes).
    events_by_frame: Vec<std::ops::Range<usize>>,
    index_ptr: usize,
    /// The frame auto-expanded for the last selection.
    followed: Option<u32>,
    /// Scroll to the selected row on the next frame.
    /// Frames left in which the list is scrolled to the selection (the first frames after a
    /// change may not know the full content height yet).
    scroll_pending: u8,
    last_command: Option<u64>,
}

/// Parses a register filter: a catalogue name (`VIEWPORT_WIDTH`, `GPUREG_…`) or an id in hex
/// (`0x041` or `41`).
pub fn parse_register(text: &str) -> Option<u16> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    if let Some(id) = pica_cmd::regs::id_by_name(t) {
        return Some(id);
    }
    let hex = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u16::from_str_radix(hex, 16).ok().filter(|&id| id < 0x300)
}

/// Topology name as every panel shows it.
pub fn topology(t: Topology) -> &'static str {
    match t {
        Topology::List => "list",
        Topology::Strip => "strip",
        Topology::Fan => "fan",
        // Topology 3: triangles with the GS winding flag (also what citro3d uses for indexed
        // triangle lists); whether a geometry shader runs is shown separately.
        Topology::Geometry => "geometry-prim",
    }
}

/// Draw kind name as every panel shows it.
pub fn kind(k: DrawKind) -> &'static str {
    match k {
        DrawKind::Arrays => "arrays",
        DrawKind::Elements => "elements",
        DrawKind::Immediate => "immediate",
    }
}

/// The draw's name as the timeline, Commands, State, Vertices and Shader views show it:
/// `Draw #3 · elements list +GS` (`+GS` when a geometry shader runs).
pub fn draw_label(d: u64, rec: &DrawRecord) -> String {
    format!(
        "Draw #{d} · {} {}{}",
        kind(rec.info.kind),
        topology(rec.info.topology),
        if rec.info.geometry_shader { " +GS" } else { "" }
    )
}

/// The triangle counts of a draw, the same everywhere: `12 tri (10 drawn)` = triangles out of
/// primitive assembly (or the geometry shader), and how many reached the rasterizer after
/// clipping and culling.
pub fn tri_summary(stats: &gpu_core::debug::DrawStats) -> String {
    format!(
        "{} tri ({} drawn)",
        stats.triangles_assembled, stats.triangles_rasterized
    )
}

/// A selectable row of one or more lines, each elided at the available width.
fn selectable_lines(
    ui: &mut egui::Ui,
    selected: bool,
    lines: &[String],
    row_h: f32,
) -> egui::Response {
    let width = ui.available_width().max(40.0);
    let pad = 4.0;
    let galleys: Vec<_> = lines
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let mut t = RichText::new(l.as_str());
            if i > 0 {
                t = t.small();
            }
            egui::WidgetText::from(t).into_galley(
                ui,
                Some(egui::TextWrapMode::Truncate),
                width - 2.0 * pad,
                egui::TextStyle::Body,
            )
        })
        .collect();
    let (rect, resp) = ui.allocate_exact_size(egui::vec2(width, row_h - 2.0), egui::Sense::click());
    let all = lines.join(" · ");
    resp.widget_info(|| egui::WidgetInfo::selected(egui::Role::Button, true, selected, &all));
    let v = ui.style().interact_selectable(&resp, selected);
    if selected || resp.hovered() {
        ui.painter().rect_filled(rect, 2.0, v.weak_bg_fill);
    }
    let total: f32 = galleys.iter().map(|g| g.size().y).sum();
    let mut y = rect.center().y - total / 2.0;
    for g in galleys {
        let h = g.size().y;
        ui.painter()
            .galley(egui::pos2(rect.left() + pad, y), g, v.text_color());
        y += h;
    }
    resp
}

/// One-line description of an engine event.
pub fn event_text(e: &EngineEvent) -> String {
    match e {
        EngineEvent::MemoryFill {
            unit,
            start,
            end,
            value,
            ..
        } => format!("Fill {unit}: 0x{start:08X}..0x{end:08X} = 0x{value:08X}"),
        EngineEvent::Transfer {
            input,
            output,
            texture_copy,
            ..
        } => {
            let what = if *texture_copy {
                "Texture copy"
            } else {
                "Display transfer"
            };
            format!("{what}: 0x{input:08X} -> 0x{output:08X}")
        }
        EngineEvent::CommandList { addr, size } => {
            format!("Command list 0x{addr:08X} ({size} bytes)")
        }
    }
}

impl TimelineView {
    fn rebuild(&mut self, index: &Arc<TraceIndex>) {
        let ptr = Arc::as_ptr(index) as usize;
        if ptr == self.index_ptr {
            return;
        }
        self.index_ptr = ptr;
        self.events_by_frame = index
            .frames
            .iter()
            .map(|f| {
                // Events are in stream order, so their frame numbers never decrease.
                let lo = index.engine_events.partition_point(|e| e.frame < f.index);
                let hi = index.engine_events.partition_point(|e| e.frame <= f.index);
                lo..hi.max(lo)
            })
            .collect();
        self.expanded.clear();
        self.followed = None;
    }

    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        prefs: &mut Prefs,
        command: u64,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(index) = s.index.clone() else {
            ui.label("Indexing…");
            return;
        };
        self.rebuild(&index);
        let current_draw = s.draw_at_or_before(command);
        if self.last_command != Some(command) {
            self.last_command = Some(command);
            self.scroll_pending = 30;
            if let Some(f) = s.frame_of(command).map(|f| f.index)
                && self.followed != Some(f)
            {
                self.followed = Some(f);
                self.expanded.insert(f);
            }
        }
        ui.horizontal_wrapped(|ui| {
            ui.toggle_value(&mut prefs.filter.draws, "Draws");
            ui.toggle_value(&mut prefs.filter.fills, "Fills");
            ui.toggle_value(&mut prefs.filter.transfers, "Transfers");
            ui.toggle_value(&mut prefs.filter.lists, "Lists");
            ui.toggle_value(&mut prefs.thumbnails, "Thumbnails");
        });
        let reg_filter = ui
            .horizontal(|ui| {
                let l = ui.label("Register:");
                ui.add(
                    egui::TextEdit::singleline(&mut prefs.filter.register)
                        .hint_text("e.g. TEXUNIT0_ADDR1 or 0x085")
                        .desired_width(150.0),
                )
                .labelled_by(l.id)
                .on_hover_text(
                    "Show only the draws whose setup (the commands since the previous draw) wrote this register",
                );
                let reg = parse_register(&prefs.filter.register);
                if !prefs.filter.register.trim().is_empty() {
                    match (reg, &s.provenance) {
                        (None, _) => {
                            ui.colored_label(widgets::WARN, "unknown register");
                        }
                        (Some(id), None) => {
                            ui.weak(format!("0x{id:03X}: waiting for analysis"));
                        }
                        (Some(id), Some(_)) => {
                            ui.weak(format!(
                                "0x{id:03X} {}",
                                pica_cmd::regs::name(id).unwrap_or("")
                            ));
                        }
                    }
                }
                reg
            })
            .inner;
        ui.separator();

        let rows = self.rows(&index, prefs, reg_filter, s);
        let row_h = if prefs.thumbnails { 40.0 } else { 18.0 };
        let selected_row = rows.iter().position(|r| match (r, current_draw) {
            (Row::Draw(d), Some(c)) => *d == c,
            _ => false,
        });
        // Per session: a scroll state restored from an earlier run (eframe persists egui's
        // memory) must not fight the follow-the-selection scrolling.
        let mut scroll = egui::ScrollArea::vertical()
            .id_salt(("timeline_scroll", s.nonce))
            .auto_shrink([false, false]);
        if self.scroll_pending > 0
            && let Some(i) = selected_row
        {
            let spacing = ui.spacing().item_spacing.y;
            let y = i as f32 * (row_h + spacing);
            scroll = scroll.vertical_scroll_offset((y - 120.0).max(0.0));
        }
        self.scroll_pending = self.scroll_pending.saturating_sub(1);
        scroll.show_rows(ui, row_h, rows.len(), |ui, range| {
            for row in rows.get(range).unwrap_or(&[]) {
                match *row {
                    Row::Frame(f) => self.frame_row(ui, &index, f, row_h, queue),
                    Row::Draw(d) => {
                        let selected = current_draw == Some(d);
                        let r = draw_row(ui, s, &index, d, selected, prefs, row_h, queue);
                        if selected && self.scroll_pending > 0 {
                            // The selection is laid out: bring it fully into view, then stop
                            // following it so the user can scroll freely.
                            if !ui.clip_rect().contains_rect(r.rect) {
                                r.scroll_to_me(Some(egui::Align::Center));
                            }
                            self.scroll_pending = 0;
                        }
                    }
                    Row::Event(e) => {
                        if let Some(ev) = index.engine_events.get(e) {
                            let r = ui
                                .horizontal(|ui| {
                                    ui.set_height(row_h);
                                    ui.add_space(12.0);
                                    ui.add(egui::Button::selectable(
                                        command == ev.at.writes,
                                        RichText::new(event_text(&ev.event)).small(),
                                    ))
                                })
                                .inner;
                            if r.on_hover_text(format!("After command {}", ev.at.writes))
                                .clicked()
                            {
                                queue.push(AppCommand::SelectCommand(ev.at.writes));
                            }
                        }
                    }
                }
            }
        });
    }

    fn frame_row(
        &mut self,
        ui: &mut egui::Ui,
        index: &TraceIndex,
        f: u32,
        row_h: f32,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(frame) = index.frames.get(f as usize) else {
            return;
        };
        let open = self.expanded.contains(&f);
        ui.horizontal(|ui| {
            ui.set_height(row_h);
            let arrow = if open { "▾" } else { "▸" };
            if ui
                .small_button(arrow)
                .on_hover_text("Expand / collapse")
                .clicked()
            {
                if open {
                    self.expanded.remove(&f);
                } else {
                    self.expanded.insert(f);
                }
            }
            let text = format!(
                "Frame {f}: {} draw(s), {} command(s){}",
                frame.draws.end - frame.draws.start,
                frame.end.writes - frame.start.writes,
                if frame.unterminated {
                    " (no end marker)"
                } else {
                    ""
                }
            );
            if ui
                .link(RichText::new(text).strong())
                .on_hover_text("Go to the end of this frame")
                .clicked()
            {
                queue.push(AppCommand::SelectCommand(frame.end.writes));
            }
        });
    }

    fn rows(
        &self,
        index: &TraceIndex,
        prefs: &Prefs,
        reg: Option<u16>,
        s: &TraceSession,
    ) -> Vec<Row> {
        let mut rows = Vec::new();
        for frame in &index.frames {
            rows.push(Row::Frame(frame.index));
            if !self.expanded.contains(&frame.index) {
                continue;
            }
            let mut items: Vec<(u64, u8, Row)> = Vec::new();
            if prefs.filter.draws {
                for d in frame.draws.clone() {
                    let Some(rec) = index.draws.get(d as usize) else {
                        continue;
                    };
                    if let (Some(id), Some(p)) = (reg, &s.provenance) {
                        let prev = d
                            .checked_sub(1)
                            .and_then(|p| index.draws.get(p as usize))
                            .map_or(0, |p| p.before.writes + 1);
                        if !p.written_between(id, prev + 1, rec.before.writes + 1) {
                            continue;
                        }
                    }
                    items.push((rec.before.writes + 1, 1, Row::Draw(d)));
                }
            }
            if let Some(range) = self.events_by_frame.get(frame.index as usize) {
                for i in range.clone() {
                    let Some(ev) = index.engine_events.get(i) else {
                        continue;
                    };
                    let show = match ev.event {
                        EngineEvent::MemoryFill { .. } => prefs.filter.fills,
                        EngineEvent::Transfer { .. } => prefs.filter.transfers,
                        EngineEvent::CommandList { .. } => prefs.filter.lists,
                    };
                    if show {
                        items.push((ev.at.writes, 0, Row::Event(i)));
                    }
                }
            }
            items.sort_by_key(|(at, k, _)| (*at, *k));
            rows.extend(items.into_iter().map(|(_, _, r)| r));
        }
        rows
    }
}

#[allow(clippy::too_many_arguments)]
fn draw_row(
    ui: &mut egui::Ui,
    s: &mut TraceSession,
    index: &TraceIndex,
    d: u64,
    selected: bool,
    prefs: &Prefs,
    row_h: f32,
    queue: &mut Vec<AppCommand>,
) -> egui::Response {
    let Some(rec) = index.draws.get(d as usize) else {
        return ui.label("");
    };
    let label = draw_label(d, rec);
    let counts = format!("{} vtx → {}", rec.info.count, tri_summary(&rec.stats));
    let r = ui
        .horizontal(|ui| {
            ui.set_height(row_h);
            ui.add_space(12.0);
            if prefs.thumbnails {
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(36.0, 36.0), egui::Sense::hover());
                ui.painter()
                    .rect_filled(rect, 2.0, egui::Color32::from_gray(30));
                if let Some(tex) = s.want_thumb(ui.ctx(), d) {
                    let size = tex.size_vec2();
                    let rotate = prefs.rotate_thumbs && size.y > size.x;
                    let shown = widgets::shown_size(size.x as u32, size.y as u32, rotate);
                    let scale = (36.0 / shown.x).min(36.0 / shown.y);
                    let r = egui::Rect::from_center_size(rect.center(), shown * scale);
                    paint_image(ui.painter(), tex.id(), r, rotate, egui::Color32::WHITE);
                }
            }
            // With thumbnails the row has room for two lines: the draw, then its counts; each
            // line elides at the panel's edge (the tooltip has everything).
            let lines: Vec<String> = if prefs.thumbnails {
                vec![label.clone(), counts.clone()]
            } else {
                vec![format!("{label} · {counts}")]
            };
            selectable_lines(ui, selected, &lines, row_h)
        })
        .inner;
    let r = r.on_hover_text(format!(
        "Draw {d} (frame {}): {:?}, {:?}, {} vertices requested\nloaded {}, VS invocations {}, GS invocations {}\ntriangles: {} assembled, {} after clipping, {} rasterised\nfragments written: {}\ntriggered by command {}{}",
        rec.frame,
        rec.info.kind,
        rec.info.topology,
        rec.info.count,
        rec.stats.vertices_loaded,
        rec.stats.vs_invocations,
        rec.stats.gs_invocations,
        rec.stats.triangles_assembled,
        rec.stats.triangles_clipped,
        rec.stats.triangles_rasterized,
        rec.stats.fragments_written,
        rec.before.writes + 1,
        rec.trigger_addr
            .map(|a| format!(" (command-list word at 0x{a:08X})"))
            .unwrap_or_default()
    ));
    if r.clicked() {
        queue.push(AppCommand::SelectDraw(d));
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_filter_parses_names_and_ids() {
        assert_eq!(parse_register("0x041"), Some(0x041));
        assert_eq!(parse_register("41"), Some(0x041));
        assert_eq!(parse_register(""), None);
        assert_eq!(parse_register("0x999"), None);
        let name = pica_cmd::regs::name(0x041).expect("0x041 is named");
        assert_eq!(parse_register(name), Some(0x041));
        assert_eq!(parse_register(&format!("gpureg_{name}")), Some(0x041));
    }
}
