//! Command-list panel: every register write of the selected command's frame in execution order,
//! grouped by draw, with its decoded fields, previous → new value, and marks for writes whose
//! byte mask enabled nothing (ineffective), enabled only some bytes (partial) or that stored the
//! value the register already had (redundant); search; a register filter; and the full decode
//! of the selected write with field tooltips.
//!
//! Stage: presentation. Inputs: the trace index (frame ranges, draws, engine events), command
//! pages ([`gpu_core::debug::RegWriteEvent`]s) fetched on demand from the worker, the register
//! history. Output: selection commands. Registers read: any, decoded through
//! `pica_cmd::regs::describe` / `pica_cmd::regs::external::describe`.

use std::collections::HashSet;

use eframe::egui::{self, Color32, RichText};
use gpu_core::debug::{RegSpace, RegWriteEvent};
use gpu_core::replay::TraceIndex;
use pica_cmd::regs::RegDescription;

use crate::viewer::command::AppCommand;
use crate::viewer::panels::timeline::{draw_label, event_text, parse_register, tri_summary};
use crate::viewer::prefs::Prefs;
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::{self, CHANGED, WARN};

/// Background of command rows that match the search.
pub const SEARCH_HIT: Color32 = Color32::from_rgb(90, 70, 0);

/// One row of the command list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CRow {
    /// Header of the commands leading to draw `m` (inclusive of its trigger).
    Group(u64),
    /// Header of the commands after the frame's last draw.
    Tail,
    /// Command `n`.
    Write(u64),
    /// Engine event `i` (after the command that started it).
    Event(usize),
}

/// Key of the cached row list.
#[derive(Clone, Debug, PartialEq, Eq)]
struct RowsKey {
    index_ptr: usize,
    frame: u32,
    filter: Option<u16>,
    prov: bool,
    collapsed: Vec<u64>,
}

/// Command-list UI state.
#[derive(Debug, Default)]
pub struct CommandsView {
    /// Search text.
    pub query: String,
    /// Search the whole trace instead of the current frame.
    pub whole_trace: bool,
    collapsed: HashSet<u64>,
    rows: Vec<CRow>,
    key: Option<RowsKey>,
    last_command: Option<u64>,
    /// Frames left in which the list is scrolled to the selection (the first frames after a
    /// change may not know the full content height yet).
    scroll_pending: u8,
    /// Query and range of the newest search started here.
    searched: Option<(String, (u64, u64))>,
    /// Select the first match when the newest search's answer arrives.
    jump_on_result: bool,
}

/// Selects the next (or previous) search match after (before) `cmd`, wrapping around.
fn step_match(matches: &[u64], cmd: u64, forward: bool, queue: &mut Vec<AppCommand>) {
    let target = if forward {
        matches.iter().find(|&&m| m > cmd).or(matches.first())
    } else {
        matches.iter().rev().find(|&&m| m < cmd).or(matches.last())
    };
    if let Some(&t) = target {
        queue.push(AppCommand::SelectCommand(t));
    }
}

/// Decodes a write's stored value (and its previous value).
pub fn describe_write(ev: &RegWriteEvent) -> (RegDescription, RegDescription) {
    match ev.space {
        RegSpace::Pica => {
            let id = u16::try_from(ev.id).unwrap_or(u16::MAX);
            (
                pica_cmd::regs::describe(id, ev.new),
                pica_cmd::regs::describe(id, ev.old),
            )
        }
        RegSpace::External => (
            pica_cmd::regs::external::describe(ev.id, ev.new),
            pica_cmd::regs::external::describe(ev.id, ev.old),
        ),
    }
}

/// Short flags of a write: ineffective (mask 0), partial mask, redundant.
pub fn write_flags(ev: &RegWriteEvent) -> Vec<(&'static str, &'static str)> {
    let mut f = Vec::new();
    if ev.is_ineffective() {
        f.push((
            "masked out",
            "the byte-enable mask is 0: no byte of the register changed (side effects may still run)",
        ));
    } else if ev.space == RegSpace::Pica && ev.mask != 0xF {
        f.push((
            "partial",
            "the byte-enable mask enables only some bytes; the other bytes kept their value",
        ));
    }
    if is_redundant(ev) {
        f.push((
            "redundant",
            "the register already held this value and is state, not a trigger or data port: the write changed nothing",
        ));
    }
    f
}

/// True if the write stored the value the register already had and the register is state:
/// writes to triggers, data ports, FIFO index registers and command-list jumps/kicks act every
/// time, so they are never redundant.
pub fn is_redundant(ev: &RegWriteEvent) -> bool {
    ev.is_redundant() && !ev.is_ineffective() && !crate::viewer::ports::acts_on_write(ev)
}

impl CommandsView {
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
        let Some(frame) = s.frame_of(command).cloned() else {
            ui.label("The trace has no frames.");
            return;
        };
        if self.last_command != Some(command) {
            self.last_command = Some(command);
            self.scroll_pending = 30;
        }
        self.toolbar(ui, s, prefs, &frame, queue);
        ui.separator();
        let filter = parse_register(&prefs.command_filter);
        let key = RowsKey {
            index_ptr: std::sync::Arc::as_ptr(&index) as usize,
            frame: frame.index,
            filter,
            prov: s.provenance.is_some(),
            collapsed: {
                let mut c: Vec<u64> = self.collapsed.iter().copied().collect();
                c.sort_unstable();
                c
            },
        };
        if self.key.as_ref() != Some(&key) {
            self.rows = build_rows(&index, &frame, filter, s, &self.collapsed);
            self.key = Some(key);
        }

        // The selected write in full, at the bottom.
        egui::Panel::bottom("command_detail")
            .resizable(true)
            .default_size(220.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt("command_detail_scroll")
                    .auto_shrink([false, false])
                    .show(ui, |ui| selected_detail(ui, s, command, queue));
            });

        let row_h = 18.0;
        let selected_row = self.rows.iter().position(|r| *r == CRow::Write(command));
        let mut scroll = egui::ScrollArea::vertical()
            // Per session: a scroll state restored from an earlier run (eframe persists egui's
            // memory) must not fight the follow-the-selection scrolling.
            .id_salt(("commands_scroll", s.nonce))
            .auto_shrink([false, false]);
        if self.scroll_pending > 0
            && let Some(i) = selected_row
        {
            let y = i as f32 * (row_h + ui.spacing().item_spacing.y);
            scroll = scroll.vertical_scroll_offset((y - 150.0).max(0.0));
        }
        self.scroll_pending = self.scroll_pending.saturating_sub(1);
        let rows = std::mem::take(&mut self.rows);
        scroll.show_rows(ui, row_h, rows.len(), |ui, range| {
            for row in rows.get(range).unwrap_or(&[]) {
                let r = self.row_ui(ui, s, &index, *row, command, prefs.show_fields, queue);
                if let Some(r) = r
                    && self.scroll_pending > 0
                {
                    if !ui.clip_rect().contains_rect(r.rect) {
                        r.scroll_to_me(Some(egui::Align::Center));
                    }
                    self.scroll_pending = 0;
                }
            }
        });
        self.rows = rows;
    }

    fn toolbar(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        prefs: &mut Prefs,
        frame: &gpu_core::replay::FrameInfo,
        queue: &mut Vec<AppCommand>,
    ) {
        ui.horizontal_wrapped(|ui| {
            ui.label(
                RichText::new(format!(
                    "Frame {}: commands {}..={}",
                    frame.index,
                    frame.start.writes + 1,
                    frame.end.writes
                ))
                .strong(),
            );
            ui.checkbox(&mut prefs.show_fields, "Decoded fields");
            ui.weak("* = value changed").on_hover_text(
                "A * after the value: the write changed the register. Hover a row for old → new.",
            );
            let l = ui.label("Only register:");
            ui.add(
                egui::TextEdit::singleline(&mut prefs.command_filter)
                    .hint_text("name or 0x id")
                    .desired_width(120.0),
            )
            .labelled_by(l.id);
            if !prefs.command_filter.trim().is_empty() {
                match parse_register(&prefs.command_filter) {
                    None => {
                        ui.colored_label(WARN, "unknown register");
                    }
                    Some(_) if s.provenance.is_none() => {
                        ui.weak("waiting for analysis");
                    }
                    Some(_) => {}
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("Search:");
            let r = ui
                .add(
                    egui::TextEdit::singleline(&mut self.query)
                        .hint_text("register, value or field text")
                        .desired_width(180.0),
                )
                .labelled_by(l.id)
                .on_hover_text("Enter: find / next match, Shift+Enter: previous match");
            let (enter, shift) = ui.input(|i| (i.key_pressed(egui::Key::Enter), i.modifiers.shift));
            let enter = enter && r.lost_focus();
            if enter {
                // Keep the focus in the field so that Enter steps through the matches.
                r.request_focus();
            }
            if ui.checkbox(&mut self.whole_trace, "whole trace").changed() {
                self.searched = None;
            }
            let cmd = self.last_command.unwrap_or(0);
            let query = self.query.trim().to_string();
            let range = if self.whole_trace {
                (1, s.total_commands())
            } else {
                (frame.start.writes + 1, frame.end.writes)
            };
            let same = self.searched.as_ref() == Some(&(query.clone(), range))
                && !s.search.pending
                && s.search.query == query;
            let find = ui.button("Find").clicked();
            if (find || enter) && !query.is_empty() {
                if same && enter {
                    step_match(&s.search.matches, cmd, !shift, queue);
                } else {
                    s.search(&query, range.0, range.1);
                    self.searched = Some((query.clone(), range));
                    self.jump_on_result = true;
                }
            }
            if self.jump_on_result && !s.search.pending {
                // First answer of a new search: go to the first match at or after the
                // selection (wrapping to the first one).
                self.jump_on_result = false;
                let m = &s.search.matches;
                if let Some(&t) = m.iter().find(|&&m| m >= cmd).or(m.first()) {
                    queue.push(AppCommand::SelectCommand(t));
                }
            }
            let sr = &s.search;
            if sr.pending {
                ui.spinner();
            } else if !sr.query.is_empty() {
                let here = sr.matches.binary_search(&cmd).ok();
                ui.label(format!(
                    "{} match(es){}{}",
                    sr.matches.len(),
                    if sr.truncated {
                        " (first ones only)"
                    } else {
                        ""
                    },
                    here.map(|i| format!(", at {}", i + 1)).unwrap_or_default()
                ));
                if ui
                    .small_button("◀")
                    .on_hover_text("Previous match (Shift+Enter)")
                    .clicked()
                {
                    step_match(&sr.matches, cmd, false, queue);
                }
                if ui
                    .small_button("▶")
                    .on_hover_text("Next match (Enter)")
                    .clicked()
                {
                    step_match(&sr.matches, cmd, true, queue);
                }
            }
        });
    }

    #[allow(clippy::too_many_arguments)]
    fn row_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        index: &TraceIndex,
        row: CRow,
        command: u64,
        show_fields: bool,
        queue: &mut Vec<AppCommand>,
    ) -> Option<egui::Response> {
        match row {
            CRow::Group(m) => {
                let rec = index.draws.get(m as usize)?;
                ui.horizontal(|ui| {
                    let open = !self.collapsed.contains(&m);
                    if ui
                        .small_button(if open { "▾" } else { "▸" })
                        .on_hover_text("Expand / collapse this draw's commands")
                        .clicked()
                    {
                        if open {
                            self.collapsed.insert(m);
                        } else {
                            self.collapsed.remove(&m);
                        }
                    }
                    let t = format!(
                        "{} · {} vtx → {} (triggered by #{})",
                        draw_label(m, rec),
                        rec.info.count,
                        tri_summary(&rec.stats),
                        rec.before.writes + 1
                    );
                    if ui.link(RichText::new(t).strong()).clicked() {
                        queue.push(AppCommand::SelectDraw(m));
                    }
                });
                None
            }
            CRow::Tail => {
                ui.label(RichText::new("After the last draw of the frame").strong());
                None
            }
            CRow::Event(i) => {
                if let Some(ev) = index.engine_events.get(i) {
                    ui.label(
                        RichText::new(format!("        ↳ {}", event_text(&ev.event)))
                            .italics()
                            .color(Color32::LIGHT_BLUE),
                    );
                }
                None
            }
            CRow::Write(n) => {
                let selected = n == command;
                let Some(ev) = s.want_command(n) else {
                    ui.label(RichText::new(format!("#{n} …")).monospace().weak());
                    return None;
                };
                let (desc, old) = describe_write(&ev);
                let loc = match ev.space {
                    RegSpace::Pica => format!("0x{:03X}", ev.id),
                    RegSpace::External => format!("{:08X}", ev.id),
                };
                let effect = s.command_effect(n).cloned();
                // Compact columns (the previous value is in the tooltip and the detail below):
                // number, register, name, stored value, then what it means.
                let mut text = match &effect {
                    // A data-port word: what it set, not the raw port register's value.
                    Some(e) => format!(
                        "#{n:<6} {loc} {:<24} {:08X} ⇒ {}",
                        desc.name, ev.param, e.text
                    ),
                    None => format!(
                        "#{n:<6} {loc} {:<24} {:08X}{}",
                        desc.name,
                        ev.new,
                        if ev.old != ev.new { "*" } else { " " }
                    ),
                };
                let flags = write_flags(&ev);
                for (f, _) in &flags {
                    text.push_str(&format!(" [{f}]"));
                }
                if show_fields && desc.known && effect.is_none() {
                    let fields: Vec<String> = desc
                        .fields
                        .iter()
                        .map(|f| format!("{}: {}", f.name, f.meaning))
                        .collect();
                    text.push(' ');
                    text.push_str(&fields.join(", "));
                }
                let full = text.clone();
                let mut rt = RichText::new(text).monospace();
                if ev.is_ineffective() || is_redundant(&ev) {
                    rt = rt.weak();
                } else if desc.name.starts_with("unknown") {
                    rt = rt.color(WARN);
                }
                if s.search.matches.binary_search(&n).is_ok() {
                    rt = rt.background_color(SEARCH_HIT);
                }
                // The row elides at the panel's edge; the tooltip has everything.
                let r = ui.add(egui::Button::selectable(selected, rt).truncate());
                let r = r.on_hover_ui(|ui| {
                    ui.set_max_width(720.0);
                    ui.label(RichText::new(full).monospace());
                    ui.label(
                        RichText::new(format!("0x{:08X} → 0x{:08X}", ev.old, ev.new)).monospace(),
                    );
                    ui.separator();
                    ui.label(RichText::new(format!("{desc:#}")).monospace());
                    for (f, why) in &flags {
                        ui.colored_label(CHANGED, format!("{f}: {why}"));
                    }
                    if !desc.doc.is_empty() {
                        ui.label(
                            desc.doc
                                .lines()
                                .map(str::trim)
                                .collect::<Vec<_>>()
                                .join(" "),
                        );
                    }
                    let _ = old;
                });
                if r.clicked() {
                    queue.push(AppCommand::SelectCommand(n));
                }
                r.context_menu(|ui| {
                    if ui.button("Override this write… (Edits)").clicked() {
                        queue.push(AppCommand::AddEdit(Box::new(
                            gpu_core::replay::edit::EditKind::OverrideWrite {
                                write: n,
                                reg: ev.id,
                                value: ev.param,
                                mask: Some(ev.mask),
                            },
                        )));
                        ui.close();
                    }
                });
                selected.then_some(r)
            }
        }
    }
}

fn build_rows(
    index: &TraceIndex,
    frame: &gpu_core::replay::FrameInfo,
    filter: Option<u16>,
    s: &TraceSession,
    collapsed: &HashSet<u64>,
) -> Vec<CRow> {
    let first = frame.start.writes + 1;
    let last = frame.end.writes;
    let mut rows = Vec::new();
    // Draw groups of the frame: (first command, trigger command, draw).
    let mut groups: Vec<(u64, u64, Option<u64>)> = Vec::new();
    let mut next = first;
    for d in frame.draws.clone() {
        if let Some(rec) = index.draws.get(d as usize) {
            let trig = rec.before.writes + 1;
            groups.push((next, trig, Some(d)));
            next = trig + 1;
        }
    }
    if next <= last || groups.is_empty() {
        groups.push((next, last, None));
    }
    let events: Vec<(u64, usize)> = index
        .engine_events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.frame == frame.index)
        .map(|(i, e)| (e.at.writes, i))
        .collect();
    let mut ev_i = 0;
    let reg_list = match (filter, &s.provenance) {
        (Some(id), Some(p)) => p.reg_writes.get(usize::from(id)),
        _ => None,
    };
    for (lo, hi, d) in groups {
        rows.push(match d {
            Some(d) => CRow::Group(d),
            None => CRow::Tail,
        });
        if d.is_some_and(|d| collapsed.contains(&d)) {
            while events.get(ev_i).is_some_and(|(at, _)| *at <= hi) {
                ev_i += 1;
            }
            continue;
        }
        let writes: Box<dyn Iterator<Item = u64>> = match reg_list {
            Some(list) => {
                let a = list.partition_point(|&w| w < lo);
                let b = list.partition_point(|&w| w <= hi);
                Box::new(list.get(a..b).unwrap_or(&[]).to_vec().into_iter())
            }
            None if filter.is_some() => Box::new(std::iter::empty()),
            None => Box::new(lo..=hi),
        };
        for n in writes {
            while let Some(&(at, i)) = events.get(ev_i) {
                if at < n {
                    rows.push(CRow::Event(i));
                    ev_i += 1;
                } else {
                    break;
                }
            }
            rows.push(CRow::Write(n));
        }
        while let Some(&(at, i)) = events.get(ev_i) {
            if at <= hi {
                rows.push(CRow::Event(i));
                ev_i += 1;
            } else {
                break;
            }
        }
    }
    rows.extend(
        events
            .get(ev_i..)
            .unwrap_or(&[])
            .iter()
            .map(|(_, i)| CRow::Event(*i)),
    );
    rows
}

/// The selected write in full: register, value change, every field with its documentation.
fn selected_detail(
    ui: &mut egui::Ui,
    s: &mut TraceSession,
    command: u64,
    queue: &mut Vec<AppCommand>,
) {
    if command == 0 {
        ui.label("Initial state (before the first command).");
        return;
    }
    let Some(ev) = s.want_command(command) else {
        ui.label(format!("Command #{command}: loading…"));
        return;
    };
    let (desc, old) = describe_write(&ev);
    ui.horizontal_wrapped(|ui| {
        ui.label(RichText::new(format!("Command #{command}")).strong());
        let loc = match ev.space {
            RegSpace::Pica => format!("register 0x{:03X}", ev.id),
            RegSpace::External => format!("MMIO 0x{:08X}", ev.id),
        };
        ui.label(
            RichText::new(format!("{loc} {}", desc.name))
                .monospace()
                .strong(),
        )
        .on_hover_text(
            desc.doc
                .lines()
                .map(str::trim)
                .collect::<Vec<_>>()
                .join(" "),
        );
        ui.label(
            RichText::new(format!(
                "param 0x{:08X}, mask 0x{:X}: 0x{:08X} → 0x{:08X}",
                ev.param, ev.mask, ev.old, ev.new
            ))
            .monospace(),
        );
        if let Some(e) = s.command_effect(command) {
            ui.colored_label(
                widgets::GOOD,
                RichText::new(format!("⇒ {}", e.text)).monospace(),
            );
        }
        if let Some(a) = ev.source_addr {
            ui.weak(format!("from command-list word at 0x{a:08X}"));
        }
        for (f, why) in write_flags(&ev) {
            ui.colored_label(CHANGED, format!("[{f}]"))
                .on_hover_text(why);
        }
        if let Some(d) = s.draw_at_or_before(command)
            && s.index
                .as_ref()
                .and_then(|i| i.draws.get(d as usize))
                .is_some_and(|r| r.before.writes + 1 == command)
        {
            ui.colored_label(widgets::GOOD, format!("triggers draw #{d}"));
        }
    });
    egui::Grid::new("selected_fields")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| widgets::fields_rows(ui, &desc, Some(&old)));
    let _ = queue;
}
