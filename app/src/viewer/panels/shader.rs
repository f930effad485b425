//! Shader view: pick a vertex of the current draw and step through its vertex-shader execution
//! forward and back, with the executed instruction, its source operands, the destination before
//! and after, the address registers, loop counter, condition flags and every register; the
//! re-run's outputs are compared with the pipeline's. For a `.shbin` file, the inputs are typed
//! in and the selected DVLE runs with its constant table as uniforms.
//!
//! Stage: vertex shader, replayed for inspection (see [`crate::viewer::shader_debug`]).
//! Inputs: [`ShaderTrace`]s and listings. Output: step/vertex selection commands.

use std::sync::Arc;

use eframe::egui::{self, RichText};
use shader_unit::decode::{DstReg, Program};
use shader_unit::interp::{ExecConfig, UnitState};

use crate::viewer::command::{AppCommand, Selection};
use crate::viewer::listing::ShaderListing;
use crate::viewer::panels::state::listing_ui;
use crate::viewer::panels::timeline::draw_label;
use crate::viewer::protocol::{DrawInspection, GsDebugContext, ShaderTrace, TraceEmit};
use crate::viewer::session::{ShaderSession, TraceSession};
use crate::viewer::shader_debug::{MAX_TRACE_STEPS, outputs_match, record};
use crate::viewer::shbin_debug::{RegNames, outmap_names};
use crate::viewer::widgets::{self, CHANGED, GOOD, WARN, fmt_vec4};

/// Width of the `.shbin` debugger's vector fields (room for four 10-digit numbers).
const FIELD_WIDTH: f32 = 300.0;

/// Shader view UI state.
#[derive(Debug, Default)]
pub struct ShaderView {
    /// Show v registers the program may not use too.
    pub all_inputs: bool,
    /// `.shbin` debugger: show all float uniforms, not only the named ones and constants.
    pub all_uniforms: bool,
    /// Register names for the register table while it is drawn.
    names: Option<RegNames>,
}

fn reg_name(r: DstReg) -> String {
    match r {
        DstReg::Output(i) => format!("o{i}"),
        DstReg::Temp(i) => format!("r{i}"),
    }
}

impl ShaderView {
    /// The debugger for a trace's draws.
    pub fn trace_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        sel: &Selection,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(draw) = s.draw_at_or_before(sel.command) else {
            ui.label("No draw at or before the selected command. Select a draw in the timeline.");
            return;
        };
        let insp = match s.want_detail(draw) {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Replaying draw #{draw}…"));
                });
                return;
            }
            Some(Err(e)) => {
                ui.colored_label(WARN, format!("Draw #{draw}: {e}"));
                return;
            }
            Some(Ok(i)) => i.clone(),
        };
        let rec = s
            .index
            .as_ref()
            .and_then(|i| i.draws.get(usize::try_from(draw).ok()?))
            .cloned();
        let title = rec
            .as_ref()
            .map_or_else(|| format!("Draw #{draw}"), |r| draw_label(draw, r));
        if insp.gs.is_some() {
            ui.horizontal(|ui| {
                ui.label("Debug:");
                let gs_mode = sel.gs_invocation.is_some();
                if ui
                    .selectable_label(!gs_mode, "Vertex shader")
                    .on_hover_text("Step the vertex shader of the selected vertex")
                    .clicked()
                    && gs_mode
                {
                    queue.push(AppCommand::SelectGsInvocation(None));
                }
                if ui
                    .selectable_label(gs_mode, "Geometry shader")
                    .on_hover_text("Step one geometry-shader invocation of this draw")
                    .clicked()
                    && !gs_mode
                {
                    queue.push(AppCommand::SelectGsInvocation(Some(0)));
                }
            });
        }
        if let (Some(gs), Some(inv)) = (insp.gs.clone(), sel.gs_invocation) {
            self.gs_ui(ui, s, &insp, &gs, &title, inv, sel, queue);
            return;
        }
        let Some(first) = insp.detail.shaded.first().map(|v| v.index_in_draw) else {
            ui.label(format!("Draw #{draw} shaded no vertices."));
            return;
        };
        let last = insp.detail.shaded.last().map_or(first, |v| v.index_in_draw);
        let k = sel.vertex.unwrap_or(first);
        if sel.vertex.is_none() {
            queue.push(AppCommand::SelectVertex(first));
        }
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{title}: vertex shader")).heading());
            let l = ui.label("Vertex:");
            let mut v = k;
            let r = ui
                .add(egui::DragValue::new(&mut v).range(first..=last))
                .labelled_by(l.id)
                .on_hover_text("Index of the vertex in the draw (k)");
            if r.changed() && v != k {
                queue.push(AppCommand::SelectVertex(v));
            }
            if ui
                .small_button("◀")
                .on_hover_text("Previous vertex")
                .clicked()
                && k > first
            {
                queue.push(AppCommand::SelectVertex(k - 1));
            }
            if ui.small_button("▶").on_hover_text("Next vertex").clicked() && k < last {
                queue.push(AppCommand::SelectVertex(k + 1));
            }
        });
        let trace = match s.want_shader(draw, k) {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Tracing vertex {k}…"));
                });
                return;
            }
            Some(Err(e)) => {
                ui.colored_label(WARN, e);
                return;
            }
            Some(Ok(t)) => t.clone(),
        };
        if let Some(gs) = &insp.gs_listing {
            // A GS draw: its geometry shader runs on the vertex shader's outputs.
            egui::CollapsingHeader::new(
                "Geometry shader of this draw (disassembly; choose Geometry shader above to step it)",
            )
            .id_salt(("gs_listing", draw))
            .default_open(false)
            .show(ui, |ui| listing_ui(ui, &format!("gs-{draw}"), gs, None, 220.0));
        }
        let mask = insp.vs.setup.input.register_mask();
        // Keyed by draw and vertex: a new selection starts at the top of both scroll views.
        let key = format!("{draw}-{k}");
        // Outputs named by the output map the draw used (`o1 color`); with a GS the map
        // describes the GS's outputs, so the VS outputs keep their register names.
        self.names = Some(RegNames {
            outputs: if insp.gs.is_some() {
                RegNames::default().outputs
            } else {
                outmap_names(&insp.detail.regs, 0x2BD)
            },
            ..RegNames::default()
        });
        self.trace_body(
            ui,
            &trace,
            &insp.vs.listing,
            sel.shader_step,
            mask,
            &key,
            queue,
        );
        self.names = None;
    }

    /// The geometry-shader half of [`ShaderView::trace_ui`]: the invocation list (inputs,
    /// EMIT count), the stepped invocation, its emitted vertices.
    #[allow(clippy::too_many_arguments)]
    fn gs_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        insp: &DrawInspection,
        gs: &GsDebugContext,
        title: &str,
        inv: u32,
        sel: &Selection,
        queue: &mut Vec<AppCommand>,
    ) {
        let draw = insp.draw;
        let d = &insp.detail;
        let Some(last) = d.gs_invocations.last().map(|i| i.index) else {
            ui.label(format!(
                "{title}: the geometry shader ran no invocation in this draw."
            ));
            return;
        };
        let k = inv.min(last);
        if k != inv {
            queue.push(AppCommand::SelectGsInvocation(Some(k)));
        }
        let total = d.gs_invocations.len() as u64 + d.gs_invocations_dropped;
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(format!("{title}: geometry shader")).heading());
            let l = ui.label("Invocation:");
            let mut v = k;
            let r = ui
                .add(egui::DragValue::new(&mut v).range(0..=last))
                .labelled_by(l.id)
                .on_hover_text("Geometry-shader invocation of the draw (0-based)");
            if r.changed() && v != k {
                queue.push(AppCommand::SelectGsInvocation(Some(v)));
            }
            if ui
                .small_button("◀")
                .on_hover_text("Previous invocation")
                .clicked()
                && k > 0
            {
                queue.push(AppCommand::SelectGsInvocation(Some(k - 1)));
            }
            if ui
                .small_button("▶")
                .on_hover_text("Next invocation")
                .clicked()
                && k < last
            {
                queue.push(AppCommand::SelectGsInvocation(Some(k + 1)));
            }
            ui.label(format!("of {total}"));
            if d.gs_invocations_dropped > 0 {
                ui.colored_label(
                    CHANGED,
                    format!(
                        "(the first {} are recorded, {} more only counted)",
                        d.gs_invocations.len(),
                        d.gs_invocations_dropped
                    ),
                );
            }
        });
        let input_mask = gs.setup.input.register_mask();
        egui::CollapsingHeader::new(format!("Invocations ({})", d.gs_invocations.len()))
            .id_salt(("gs_invocations", draw))
            .default_open(true)
            .show(ui, |ui| {
                let row_h = (ui.text_style_height(&egui::TextStyle::Body)
                    + 2.0 * ui.spacing().button_padding.y)
                    .max(ui.spacing().interact_size.y);
                // Rows never wrap (show_rows needs one height); long ones scroll sideways.
                egui::ScrollArea::both()
                    .id_salt(("gs_invocation_list", draw))
                    .max_height(row_h * 6.0)
                    .auto_shrink([false, true])
                    .show_rows(ui, row_h, d.gs_invocations.len(), |ui, rows| {
                        ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                        for i in &d.gs_invocations[rows] {
                            let text = invocation_summary(i, input_mask);
                            if ui.selectable_label(i.index == k, text).clicked() && i.index != k {
                                queue.push(AppCommand::SelectGsInvocation(Some(i.index)));
                            }
                        }
                    });
            });
        if let Some(i) = d.gs_invocations.iter().find(|i| i.index == k)
            && let Some((first, count)) = i.input_uniforms
        {
            egui::CollapsingHeader::new(format!(
                "Input uniforms c{first}-c{} written from the vertex shader's outputs",
                (u32::from(first) + u32::from(count)).saturating_sub(1)
            ))
            .id_salt(("gs_input_uniforms", draw, k))
            .default_open(false)
            .show(ui, |ui| {
                for (n, v) in i
                    .float_uniforms
                    .iter()
                    .enumerate()
                    .skip(usize::from(first))
                    .take(usize::from(count))
                {
                    ui.monospace(format!("c{n} = {}", fmt_vec4(v)));
                }
            });
        }
        let trace = match s.want_gs_shader(draw, k) {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("Tracing invocation {k}…"));
                });
                return;
            }
            Some(Err(e)) => {
                ui.colored_label(WARN, e);
                return;
            }
            Some(Ok(t)) => t.clone(),
        };
        let mut names = RegNames {
            outputs: outmap_names(&d.regs, 0x28D),
            ..RegNames::default()
        };
        for a in 0..usize::from(gs.setup.input.count).min(16) {
            let reg = usize::from(gs.setup.input.permutation[a] & 15);
            names.inputs[reg] = format!("← input slot {a}");
        }
        self.names = Some(names);
        let key = format!("gs-{draw}-{k}");
        self.trace_body(
            ui,
            &trace,
            &gs.listing,
            sel.shader_step,
            input_mask,
            &key,
            queue,
        );
        self.names = None;
    }

    /// The debugger for a `.shbin` file: inputs and every uniform editable on the left
    /// (remembered per file and DVLE), the program and the stepped run on the right.
    pub fn doc_ui(
        &mut self,
        ui: &mut egui::Ui,
        doc: &mut ShaderSession,
        sel: &Selection,
        queue: &mut Vec<AppCommand>,
    ) {
        let count = doc.doc.dvlb.dvles.len();
        ui.horizontal_wrapped(|ui| {
            let name = doc.doc.path.file_name().map_or_else(
                || doc.doc.path.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            ui.label(RichText::new(name).heading())
                .on_hover_text(doc.doc.path.display().to_string());
            let mut dvle = doc.dvle;
            egui::ComboBox::from_label("executable")
                .selected_text(format!("DVLE {dvle}"))
                .show_ui(ui, |ui| {
                    for i in 0..count {
                        let kind = doc
                            .doc
                            .dvlb
                            .dvles
                            .get(i)
                            .map(|d| format!("{:?}", d.kind))
                            .unwrap_or_default();
                        ui.selectable_value(&mut dvle, i, format!("DVLE {i} ({kind})"));
                    }
                });
            if dvle != doc.dvle {
                doc.dvle = dvle;
                doc.trace = None;
                queue.push(AppCommand::ShaderStep(None));
            }
            if ui
                .button("Run")
                .on_hover_text("Run the entry point on these inputs and uniforms and record every step")
                .clicked()
            {
                doc.trace = Some(run_doc(doc).map(Arc::new));
                doc.runs += 1;
                doc.remember = true;
                queue.push(AppCommand::ShaderStep(None));
            }
            let l = ui.label("budget:");
            ui.add(
                egui::DragValue::new(&mut doc.edits.budget)
                    .range(1..=MAX_TRACE_STEPS)
                    .speed(100.0),
            )
            .labelled_by(l.id)
            .on_hover_text(format!(
                "Most instructions one run executes (the hardware has no limit; an endless loop stops here). At most {MAX_TRACE_STEPS} are recorded."
            ));
            ui.weak("instructions");
        });
        let Some(dvle) = doc.doc.dvlb.dvles.get(doc.dvle).cloned() else {
            ui.label("The file has no executable (DVLE).");
            return;
        };
        let names = RegNames::of(&dvle);
        let listing = match doc.doc.listings.get(doc.dvle) {
            Some(Ok(l)) => l.clone(),
            Some(Err(e)) => {
                ui.colored_label(WARN, e);
                return;
            }
            None => {
                ui.label("The file has no executable (DVLE).");
                return;
            }
        };
        egui::Panel::left("shbin_inputs")
            .resizable(true)
            .default_size(530.0)
            .show(ui, |ui| {
                egui::ScrollArea::vertical()
                    .id_salt(("shbin_inputs_scroll", doc.dvle))
                    .auto_shrink([false, false])
                    .show(ui, |ui| self.inputs_ui(ui, doc, &dvle, &names));
            });
        match &doc.trace {
            None => {
                ui.weak("Set the inputs and uniforms on the left, then Run.");
                listing_ui(ui, "doc", &listing, None, ui.available_height());
            }
            Some(Err(e)) => {
                ui.colored_label(WARN, e);
                listing_ui(ui, "doc", &listing, None, ui.available_height());
            }
            Some(Ok(t)) => {
                let t = t.clone();
                let key = format!("doc-{}-{}", doc.dvle, doc.runs);
                let mask = if dvle.input_mask != 0 {
                    dvle.input_mask
                } else {
                    0xFFFF
                };
                self.names = Some(names);
                self.trace_body(ui, &t, &listing, sel.shader_step, mask, &key, queue);
                self.names = None;
            }
        }
    }

    fn inputs_ui(
        &mut self,
        ui: &mut egui::Ui,
        doc: &mut ShaderSession,
        dvle: &shader_unit::dvlb::Dvle,
        names: &RegNames,
    ) {
        let e = &mut doc.edits;
        ui.horizontal(|ui| {
            ui.strong("Inputs");
            ui.checkbox(&mut self.all_inputs, "all v0-v15");
        });
        egui::Grid::new("shbin_input_grid")
            .num_columns(2)
            .show(ui, |ui| {
                for (i, text) in e.inputs.iter_mut().enumerate().take(16) {
                    let used = dvle.input_mask == 0 || dvle.input_mask & (1 << i) != 0;
                    if !used && !self.all_inputs {
                        continue;
                    }
                    let l = ui.label(RichText::new(names.input_label(i)).monospace());
                    ui.add(
                        egui::TextEdit::singleline(text)
                            .desired_width(ui.available_width().max(FIELD_WIDTH)),
                    )
                    .labelled_by(l.id);
                    ui.end_row();
                }
            });
        ui.separator();
        ui.horizontal(|ui| {
            ui.strong("Float uniforms");
            ui.checkbox(&mut self.all_uniforms, "all c0-c95");
        });
        let consts: Vec<usize> = dvle
            .constants
            .iter()
            .filter(|c| matches!(c.value, shader_unit::dvlb::ConstantValue::Float(_)))
            .map(|c| usize::from(c.register))
            .collect();
        egui::Grid::new("shbin_float_grid")
            .num_columns(2)
            .show(ui, |ui| {
                for (i, text) in e.floats.iter_mut().enumerate().take(96) {
                    let named = names.floats.get(i).is_some_and(|n| !n.is_empty());
                    let is_const = consts.contains(&i);
                    if !self.all_uniforms && !named && !is_const {
                        continue;
                    }
                    let name = match names.floats.get(i).filter(|n| !n.is_empty()) {
                        Some(n) => format!("c{i} {n}"),
                        None if is_const => format!("c{i} const"),
                        None => format!("c{i}"),
                    };
                    let l = ui.label(RichText::new(name).monospace());
                    ui.add(
                        egui::TextEdit::singleline(text)
                            .desired_width(ui.available_width().max(FIELD_WIDTH)),
                    )
                    .labelled_by(l.id);
                    ui.end_row();
                }
            });
        ui.separator();
        ui.strong("Integer uniforms (iterations − 1, aL start, aL step)");
        egui::Grid::new("shbin_int_grid")
            .num_columns(2)
            .show(ui, |ui| {
                for (i, text) in e.ints.iter_mut().enumerate().take(4) {
                    let name = match names.ints.get(i).filter(|n| !n.is_empty()) {
                        Some(n) => format!("i{i} {n}"),
                        None => format!("i{i}"),
                    };
                    let l = ui.label(RichText::new(name).monospace());
                    ui.add(
                        egui::TextEdit::singleline(text)
                            .desired_width(ui.available_width().max(FIELD_WIDTH)),
                    )
                    .labelled_by(l.id);
                    ui.end_row();
                }
            });
        ui.separator();
        ui.strong("Boolean uniforms");
        ui.horizontal_wrapped(|ui| {
            for i in 0..16 {
                let mut on = e.bools & (1 << i) != 0;
                let name = match names.bools.get(i).filter(|n| !n.is_empty()) {
                    Some(n) => format!("b{i} {n}"),
                    None => format!("b{i}"),
                };
                if ui.checkbox(&mut on, name).changed() {
                    e.bools = (e.bools & !(1 << i)) | (u16::from(on) << i);
                }
            }
        });
        ui.weak("Remembered for this file when you press Run.");
    }

    #[allow(clippy::too_many_arguments)]
    fn trace_body(
        &mut self,
        ui: &mut egui::Ui,
        t: &ShaderTrace,
        listing: &ShaderListing,
        step: Option<usize>,
        input_mask: u16,
        key: &str,
        queue: &mut Vec<AppCommand>,
    ) {
        let n = t.steps.len();
        let step = step.filter(|&i| i < n);
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("|◀")
                .on_hover_text("Before the first instruction (Home)")
                .clicked()
            {
                queue.push(AppCommand::ShaderStep(None));
            }
            if ui
                .button("◀ Back")
                .on_hover_text("Step back (Up / Shift+F10)")
                .clicked()
            {
                queue.push(AppCommand::ShaderMove(-1));
            }
            if ui
                .button("Step ▶")
                .on_hover_text("Step forward (Down / F10)")
                .clicked()
            {
                queue.push(AppCommand::ShaderMove(1));
            }
            if ui
                .button("▶|")
                .on_hover_text("After the last instruction")
                .clicked()
                && n > 0
            {
                queue.push(AppCommand::ShaderStep(Some(n - 1)));
            }
            let mut pos = step.map_or(0, |i| i + 1);
            let l = ui.label("Step:");
            if ui
                .add(egui::Slider::new(&mut pos, 0..=n))
                .labelled_by(l.id)
                .changed()
            {
                queue.push(AppCommand::ShaderStep(pos.checked_sub(1)));
            }
            ui.label(match step {
                None => format!("before the first instruction ({n} steps)"),
                Some(i) => format!("step {} of {n}", i + 1),
            });
            match &t.result {
                Ok(c) => ui.colored_label(GOOD, format!("END after {c} instructions")),
                Err(e) => ui.colored_label(WARN, format!("stopped: {e}")),
            };
            match outputs_match(t) {
                Some(true) => {
                    ui.colored_label(GOOD, "outputs match the pipeline");
                }
                Some(false) => {
                    ui.colored_label(WARN, "outputs DIFFER from the pipeline");
                }
                None => {}
            }
        });
        for note in &t.notes {
            ui.colored_label(CHANGED, note);
        }
        let rec = step.and_then(|i| t.steps.get(i));
        let regs = t.regs_at(step);
        let highlight = rec.and_then(|r| listing.line_of(r.pc)).or_else(|| {
            if step.is_none() {
                listing.line_of(u16::try_from(listing.entry).unwrap_or(0))
            } else {
                None
            }
        });
        ui.separator();
        // The program on the left (a listing needs less width), the registers on the right.
        let program_w = (ui.available_width() * 0.4).max(220.0);
        egui::Panel::left("shader_program")
            .resizable(true)
            .default_size(program_w)
            .show(ui, |left| {
                left.strong("Program");
                let h = left.available_height().max(200.0);
                listing_ui(left, &format!("trace-{key}"), listing, highlight, h);
            });
        {
            let right = ui;
            // Both ways: long vectors scroll sideways instead of running past the edge.
            egui::ScrollArea::both()
                .id_salt(("shader_regs", key))
                .auto_shrink([false, false])
                .show(right, |ui| {
                    if let Some(r) = rec {
                        ui.label(
                            RichText::new(format!(
                                "executed 0x{:03X}: {}",
                                r.pc,
                                shader_unit::disasm::instruction_text(&r.instr)
                            ))
                            .monospace()
                            .strong(),
                        );
                        for i in 0..usize::from(r.src_count).min(3) {
                            ui.monospace(format!("  src{} = {}", i + 1, fmt_vec4(&r.srcs[i])));
                        }
                        if let Some((reg, before, after)) = r.dst {
                            ui.label(
                                RichText::new(format!(
                                    "  {} : {} → {}",
                                    reg_name(reg),
                                    fmt_vec4(&before),
                                    fmt_vec4(&after)
                                ))
                                .monospace()
                                .color(CHANGED),
                            );
                        }
                        ui.monospace(format!(
                            "  a0 = ({}, {})  aL = {}  cmp = ({}, {})  loop left = {}  next pc 0x{:03X}",
                            r.a0[0],
                            r.a0[1],
                            r.al,
                            r.cmp[0],
                            r.cmp[1],
                            r.loop_remaining.map_or("-".into(), |l| l.to_string()),
                            r.next_pc
                        ));
                        ui.monospace(format!("  stacks: {:?}", r.stack_depths));
                    } else {
                        ui.label("Before the first instruction: inputs loaded, registers as the unit kept them.");
                    }
                    if let Some(e) = step.and_then(|i| t.emits.iter().find(|e| e.step == i)) {
                        ui.label(
                            RichText::new(format!("EMIT {}", emit_text(e)))
                                .monospace()
                                .strong()
                                .color(CHANGED),
                        );
                    }
                    if !t.emits.is_empty() {
                        emits_ui(ui, t, step, key, queue);
                    }
                    ui.separator();
                    ui.checkbox(&mut self.all_inputs, "show all v registers");
                    let changed = rec.and_then(|r| r.dst).map(|(reg, _, _)| reg);
                    egui::Grid::new("shader_reg_grid")
                        .num_columns(2)
                        .striped(true)
                        .show(ui, |ui| {
                            for (i, v) in t.inputs.iter().enumerate() {
                                if !self.all_inputs && input_mask & (1 << i) == 0 {
                                    continue;
                                }
                                let name = self
                                    .names
                                    .as_ref()
                                    .map_or_else(|| format!("v{i}"), |n| n.input_label(i));
                                ui.monospace(name);
                                ui.monospace(fmt_vec4(v)).on_hover_text(widgets::fmt_vec4_bits(v));
                                ui.end_row();
                            }
                            for (name, file, kind) in [
                                ("r", &regs.temps, 0u8),
                                ("o", &regs.outputs, 1u8),
                            ] {
                                for (i, v) in file.iter().enumerate() {
                                    let is_changed = match changed {
                                        Some(DstReg::Temp(j)) => kind == 0 && usize::from(j) == i,
                                        Some(DstReg::Output(j)) => kind == 1 && usize::from(j) == i,
                                        None => false,
                                    };
                                    let text = match (&self.names, kind) {
                                        (Some(n), 1) => n.output_label(i),
                                        _ => format!("{name}{i}"),
                                    };
                                    let mut label = RichText::new(text).monospace();
                                    let mut val = RichText::new(fmt_vec4(v)).monospace();
                                    if is_changed {
                                        label = label.color(CHANGED).strong();
                                        val = val.color(CHANGED).strong();
                                    }
                                    ui.label(label);
                                    ui.label(val).on_hover_text(widgets::fmt_vec4_bits(v));
                                    ui.end_row();
                                }
                            }
                        });
                    ui.separator();
                    ui.strong("Compacted outputs (this run / pipeline)");
                    egui::Grid::new("shader_out_grid").num_columns(3).show(ui, |ui| {
                        let m = t.slots.len().max(t.expected.as_ref().map_or(0, Vec::len));
                        for i in 0..m {
                            ui.monospace(format!("slot {i}"));
                            let a = t.slots.get(i);
                            let b = t.expected.as_ref().and_then(|e| e.get(i));
                            ui.monospace(a.map_or("-".into(), fmt_vec4));
                            let same = match (a, b) {
                                (Some(a), Some(b)) => {
                                    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
                                }
                                _ => false,
                            };
                            let text = b.map_or("-".into(), fmt_vec4);
                            if b.is_some() && !same {
                                ui.colored_label(WARN, text);
                            } else {
                                ui.monospace(text);
                            }
                            ui.end_row();
                        }
                    });
                });
        }
    }
}

/// Runs the selected DVLE of a shader file on the typed inputs.
fn run_doc(doc: &ShaderSession) -> Result<ShaderTrace, String> {
    let dvlb = &doc.doc.dvlb;
    let dvle = dvlb
        .dvles
        .get(doc.dvle)
        .ok_or_else(|| format!("DVLE {} does not exist", doc.dvle))?;
    let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());
    let (inputs, uniforms) = doc.edits.parse()?;
    let state = UnitState {
        inputs,
        ..UnitState::default()
    };
    let config = ExecConfig {
        budget: doc.edits.effective_budget(),
        ..ExecConfig::default()
    };
    let mask = if dvle.output_mask != 0 {
        dvle.output_mask
    } else {
        dvle.outputs
            .iter()
            .fold(0u16, |m, o| m | (1u16 << (o.register & 15)))
    };
    Ok(record(
        &program,
        &uniforms,
        state,
        dvle.main_start,
        config,
        mask,
        None,
    ))
}

/// One line about an invocation for the GS invocation list: the VS vertices it received, its
/// first input, the EMITs.
fn invocation_summary(i: &gpu_core::debug::GsInvocation, input_mask: u16) -> String {
    let vertices = match i.vertices.as_slice() {
        [] => "no vertex".to_string(),
        [v] => format!("vertex {v}"),
        [a, .., b] => format!("vertices {a}-{b} ({})", i.vertices.len()),
    };
    let input = match i.input_uniforms {
        Some((first, count)) => format!(
            "c{first}-c{}",
            (u32::from(first) + u32::from(count)).saturating_sub(1)
        ),
        None => (0..16)
            .find(|r| input_mask & (1 << r) != 0)
            .map_or_else(String::new, |r| {
                format!("v{r} = {}", fmt_vec4(&i.state.inputs[r]))
            }),
    };
    let more = if i.emits_dropped > 0 {
        format!("+{}", i.emits_dropped)
    } else {
        String::new()
    };
    let err = if i.error.is_some() { ", stopped" } else { "" };
    format!(
        "#{}  {vertices}  {input}  {}{more} emits, {} primitives{err}",
        i.index,
        i.emits.len(),
        i.primitives()
    )
}

/// An emitted vertex in one line: slot, primitive flag, position, colour, texture coordinate 0.
fn emit_text(e: &TraceEmit) -> String {
    let prim = if e.primitive {
        if e.winding {
            " +primitive (inverted winding)"
        } else {
            " +primitive"
        }
    } else {
        ""
    };
    format!(
        "slot {}{prim}: pos {} color {} tc0 ({}, {})",
        e.slot,
        fmt_vec4(&e.vertex.pos),
        fmt_vec4(&e.vertex.color),
        widgets::fmt_f32(e.vertex.tc0[0]),
        widgets::fmt_f32(e.vertex.tc0[1])
    )
}

/// The vertices a GS run emitted up to the current step, each a button to its EMIT step.
fn emits_ui(
    ui: &mut egui::Ui,
    t: &ShaderTrace,
    step: Option<usize>,
    key: &str,
    queue: &mut Vec<AppCommand>,
) {
    let done = t
        .emits
        .iter()
        .filter(|e| step.is_some_and(|s| e.step <= s))
        .count();
    ui.separator();
    ui.strong(format!(
        "Emitted vertices so far: {done} of {} ({} primitives in the run)",
        t.emits.len(),
        t.emits.iter().filter(|e| e.primitive).count()
    ));
    egui::Grid::new(("gs_emits", key))
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            for (n, e) in t.emits.iter().enumerate().take(done) {
                if ui
                    .small_button(format!("#{n} step {}", e.step + 1))
                    .on_hover_text("Go to this EMIT")
                    .clicked()
                {
                    queue.push(AppCommand::ShaderStep(Some(e.step)));
                }
                ui.monospace(emit_text(e));
                ui.end_row();
            }
        });
}
