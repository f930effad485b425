//! State panel: the GPU state AS OF the selected command (not the "current" state): vertex
//! input, shaders (disassembly, uniforms and which command set each), rasterizer, texture
//! units with thumbnails, TEV stages in a readable form, fragment operations, lighting, and
//! every register raw. Right-clicking a float, integer or boolean uniform offers "Edit value…",
//! which starts an edit of that uniform for the selected draw in the Edits panel, prefilled with
//! its current value (issue 16).
//!
//! Stage: presentation. Inputs: a [`StateSnapshot`] (register files, shader memories, fixed
//! attributes), texture thumbnails, the register history. Registers read: the vertex loader
//! (0x200-0x22A through `gpu_core::vertex_loader::LoaderConfig`), shader unit configuration
//! (0x280-0x2DF), output map (0x04F-0x056), texture units (0x080-0x0A7 through
//! `gpu_core::texture::TextureConfig`), TEV (0x0C0-0x0FD through `pica_cmd::regs::Regs`), and
//! every catalogue register of the rasterizer, framebuffer and lighting blocks.

use eframe::egui::{self, RichText};
use gpu_core::texture::{TexUnitsControl, TextureConfig};
use gpu_core::vertex_loader::{LoaderConfig, SlotSource};
use pica_cmd::regs::tev::{TevAlphaOperand, TevColorOperand, TevOp, TevScale, TevSource};
use pica_cmd::regs::{Block, Regs};

use gpu_core::replay::edit::{EditKind, FloatValue, Unit as EditUnit, describe};

use crate::viewer::command::AppCommand;
use crate::viewer::listing::{LineKind, ShaderListing};
use crate::viewer::panels::timeline::{draw_label, tri_summary};
use crate::viewer::protocol::{ImageSource, StateSnapshot};
use crate::viewer::provenance::Provenance;
use crate::viewer::session::{ImageEntry, TraceSession};
use crate::viewer::widgets::{self, fmt_vec4, register_block};

/// Width from which the State panel shows its sections in two columns.
pub const TWO_COLUMNS_FROM: f32 = 640.0;

/// State panel UI state.
#[derive(Debug, Default)]
pub struct StateView {
    /// Show all 96 uniforms, not only the non-zero ones.
    pub all_uniforms: bool,
}

fn src_name(s: TevSource) -> String {
    match s {
        TevSource::PrimaryColor => "vertex_color".into(),
        TevSource::FragmentPrimary => "frag_primary".into(),
        TevSource::FragmentSecondary => "frag_secondary".into(),
        TevSource::Texture0 => "tex0".into(),
        TevSource::Texture1 => "tex1".into(),
        TevSource::Texture2 => "tex2".into(),
        TevSource::Texture3 => "tex3".into(),
        TevSource::PreviousBuffer => "buffer".into(),
        TevSource::Constant => "const".into(),
        TevSource::Previous => "prev".into(),
        TevSource::Unknown(n) => format!("source{n}?"),
    }
}

fn rgb_operand(src: &str, o: TevColorOperand) -> String {
    match o {
        TevColorOperand::SrcColor => format!("{src}.rgb"),
        TevColorOperand::OneMinusSrcColor => format!("(1-{src}.rgb)"),
        TevColorOperand::SrcAlpha => format!("{src}.aaa"),
        TevColorOperand::OneMinusSrcAlpha => format!("(1-{src}.aaa)"),
        TevColorOperand::SrcRed => format!("{src}.rrr"),
        TevColorOperand::OneMinusSrcRed => format!("(1-{src}.rrr)"),
        TevColorOperand::SrcGreen => format!("{src}.ggg"),
        TevColorOperand::OneMinusSrcGreen => format!("(1-{src}.ggg)"),
        TevColorOperand::SrcBlue => format!("{src}.bbb"),
        TevColorOperand::OneMinusSrcBlue => format!("(1-{src}.bbb)"),
        TevColorOperand::Unknown(n) => format!("{src}.op{n}?"),
    }
}

fn alpha_operand(src: &str, o: TevAlphaOperand) -> String {
    match o {
        TevAlphaOperand::SrcAlpha => format!("{src}.a"),
        TevAlphaOperand::OneMinusSrcAlpha => format!("(1-{src}.a)"),
        TevAlphaOperand::SrcRed => format!("{src}.r"),
        TevAlphaOperand::OneMinusSrcRed => format!("(1-{src}.r)"),
        TevAlphaOperand::SrcGreen => format!("{src}.g"),
        TevAlphaOperand::OneMinusSrcGreen => format!("(1-{src}.g)"),
        TevAlphaOperand::SrcBlue => format!("{src}.b"),
        TevAlphaOperand::OneMinusSrcBlue => format!("(1-{src}.b)"),
        TevAlphaOperand::Unknown(n) => format!("{src}.op{n}?"),
    }
}

/// A combiner operation applied to its operands, as a formula.
fn op_formula(op: TevOp, a: &str, b: &str, c: &str) -> String {
    match op {
        TevOp::Replace => a.to_string(),
        TevOp::Modulate => format!("{a} * {b}"),
        TevOp::Add => format!("{a} + {b}"),
        TevOp::AddSigned => format!("{a} + {b} - 0.5"),
        TevOp::Interpolate => format!("lerp({b}, {a}, {c})"),
        TevOp::Subtract => format!("{a} - {b}"),
        TevOp::Dot3Rgb => format!("dot3({a}, {b})"),
        TevOp::Dot3Rgba => format!("dot3({a}, {b}) (to alpha too)"),
        TevOp::MultiplyAdd => format!("{a} * {b} + {c}"),
        TevOp::AddMultiply => format!("min({a} + {b}, 1) * {c}"),
        TevOp::Unknown(n) => format!("op{n}?({a}, {b}, {c})"),
    }
}

fn scale_text(s: TevScale) -> &'static str {
    match s {
        TevScale::X1 => "",
        TevScale::X2 => " × 2",
        TevScale::X4 => " × 4",
        TevScale::Unknown(_) => " × ?",
    }
}

/// The six TEV stages as formulas, one `(rgb, alpha, constant)` triple per stage.
pub fn tev_formulas(regs: &[u32; 0x300]) -> Vec<(String, String, String)> {
    let r = Regs::new(regs);
    r.tev_stages()
        .iter()
        .map(|st| {
            let rs: Vec<String> = st.sources.rgb.iter().map(|s| src_name(*s)).collect();
            let als: Vec<String> = st.sources.alpha.iter().map(|s| src_name(*s)).collect();
            let ro: Vec<String> = (0..3)
                .map(|i| rgb_operand(&rs[i], st.operands.rgb[i]))
                .collect();
            let ao: Vec<String> = (0..3)
                .map(|i| alpha_operand(&als[i], st.operands.alpha[i]))
                .collect();
            let rgb = format!(
                "{}{}",
                op_formula(st.combiner.rgb_op, &ro[0], &ro[1], &ro[2]),
                scale_text(st.scales.rgb_scale)
            );
            let alpha = format!(
                "{}{}",
                op_formula(st.combiner.alpha_op, &ao[0], &ao[1], &ao[2]),
                scale_text(st.scales.alpha_scale)
            );
            let c = st.const_color;
            let konst = format!("rgba({}, {}, {}, {})", c.r, c.g, c.b, c.a);
            (rgb, alpha, konst)
        })
        .collect()
}

fn set_by(p: Option<&Provenance>, id: u16, at: u64) -> Option<u64> {
    p.and_then(|p| p.last_write(id, at))
}

fn registers_of(
    ui: &mut egui::Ui,
    snap: &StateSnapshot,
    prov: Option<&Provenance>,
    filter: impl Fn(u16) -> bool,
    queue: &mut Vec<AppCommand>,
) {
    for def in pica_cmd::regs::all() {
        if def.port.is_some() || !filter(def.id) {
            continue;
        }
        let value = snap.regs.get(usize::from(def.id)).copied().unwrap_or(0);
        let desc = pica_cmd::regs::describe(def.id, value);
        register_block(ui, &desc, set_by(prov, def.id, snap.at), queue);
    }
}

impl StateView {
    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        command: u64,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(snap) = s.want_state(command) else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Loading state…");
            });
            return;
        };
        let prov = s.provenance.clone();
        let prov = prov.as_deref();
        // The draw a uniform's "Edit value…" applies to: the selected draw (the last draw at
        // or before the command), else the first draw.
        let edit_draw = s.draw_at_or_before(snap.at).or_else(|| {
            s.index
                .as_ref()
                .is_some_and(|i| !i.draws.is_empty())
                .then_some(0)
        });
        ui.horizontal(|ui| {
            ui.label(RichText::new(format!("State as of command #{}", snap.at)).heading());
            if snap.at != command {
                ui.spinner();
                ui.weak(format!("(updating to #{command})"));
            }
        });
        if let Some(d) = s.draw_at_or_before(snap.at)
            && let Some(rec) = s
                .index
                .as_ref()
                .and_then(|i| i.draws.get(usize::try_from(d).ok()?))
        {
            // The same name and counts as the timeline and the Vertices view.
            ui.label(format!(
                "{} · {} vtx → {}{}",
                draw_label(d, rec),
                rec.info.count,
                tri_summary(&rec.stats),
                if rec.before.writes + 1 == snap.at {
                    " (its trigger is the selected command)"
                } else {
                    " (the last draw at or before the selected command)"
                }
            ));
        }
        ui.weak(format!(
            "replay position: {} commands, {} draws, frame {}, stream element {}{}",
            snap.pos.writes,
            snap.pos.draws,
            snap.pos.frame,
            snap.pos.element,
            if prov.is_none() {
                "; \"set by\" links appear when the background analysis has finished"
            } else {
                ""
            }
        ));
        ui.separator();
        // Wide panels show the sections in two columns, each scrolling on its own.
        let two = ui.available_width() >= TWO_COLUMNS_FROM;
        let mut left = |ui: &mut egui::Ui, s: &mut TraceSession| {
            let _ = &s;
            egui::CollapsingHeader::new("Vertex input")
                .default_open(true)
                .show(ui, |ui| vertex_input(ui, &snap, prov, queue));
            egui::CollapsingHeader::new("Vertex shader")
                .default_open(true)
                .show(ui, |ui| {
                    self.shader_unit(ui, &snap, prov, false, edit_draw, queue)
                });
            egui::CollapsingHeader::new("Geometry shader")
                .default_open(false)
                .show(ui, |ui| {
                    self.shader_unit(ui, &snap, prov, true, edit_draw, queue)
                });
            egui::CollapsingHeader::new("Rasterizer")
                .default_open(true)
                .show(ui, |ui| {
                    ui.weak("Viewport, depth map, culling, clipping, scissor, output map");
                    registers_of(
                        ui,
                        &snap,
                        prov,
                        |id| Block::of(id) == Block::Rasterizer,
                        queue,
                    );
                });
        };
        let right = |ui: &mut egui::Ui, s: &mut TraceSession, queue: &mut Vec<AppCommand>| {
            egui::CollapsingHeader::new("Texture units")
                .default_open(true)
                .show(ui, |ui| texture_units(ui, s, &snap, prov, queue));
            egui::CollapsingHeader::new("TEV (colour combiners)")
                .default_open(true)
                .show(ui, |ui| tev(ui, &snap, prov, queue));
            egui::CollapsingHeader::new("Fragment operations")
                .default_open(true)
                .show(ui, |ui| {
                    ui.weak(
                        "Blending, logic op, alpha/stencil/depth tests, write masks, render target",
                    );
                    registers_of(
                        ui,
                        &snap,
                        prov,
                        |id| Block::of(id) == Block::Framebuffer,
                        queue,
                    );
                });
            egui::CollapsingHeader::new("Fragment lighting")
                .default_open(false)
                .show(ui, |ui| {
                    registers_of(
                        ui,
                        &snap,
                        prov,
                        |id| Block::of(id) == Block::Lighting,
                        queue,
                    );
                });
            egui::CollapsingHeader::new("All registers (raw)")
                .default_open(false)
                .show(ui, |ui| raw_registers(ui, &snap, prov, queue));
        };
        if two {
            let mut deferred: Vec<AppCommand> = Vec::new();
            ui.columns(2, |cols| {
                let [l, r] = cols else {
                    return;
                };
                // Each column scrolls on its own and clips at its edge (a wide grid never
                // spills into the other column); content wraps to the column's width.
                let clip = l.max_rect().intersect(l.clip_rect());
                l.set_clip_rect(clip);
                egui::ScrollArea::vertical()
                    .id_salt("state_scroll_left")
                    .auto_shrink([false, false])
                    .show(l, |ui| left(ui, s));
                let clip = r.max_rect().intersect(r.clip_rect());
                r.set_clip_rect(clip);
                egui::ScrollArea::vertical()
                    .id_salt("state_scroll_right")
                    .auto_shrink([false, false])
                    .show(r, |ui| right(ui, s, &mut deferred));
            });
            queue.append(&mut deferred);
        } else {
            let mut deferred: Vec<AppCommand> = Vec::new();
            egui::ScrollArea::vertical()
                .id_salt("state_scroll")
                .auto_shrink([false, false])
                .show(ui, |ui| {
                    left(ui, s);
                    right(ui, s, &mut deferred);
                });
            queue.append(&mut deferred);
        }
    }

    fn shader_unit(
        &mut self,
        ui: &mut egui::Ui,
        snap: &StateSnapshot,
        prov: Option<&Provenance>,
        gs: bool,
        edit_draw: Option<u64>,
        queue: &mut Vec<AppCommand>,
    ) {
        let edit_unit = if gs {
            EditUnit::Geometry
        } else {
            EditUnit::Vertex
        };
        let (unit, base, unit_idx) = if gs {
            (&snap.gs, 0x280u16, 1usize)
        } else {
            (&snap.vs, 0x2B0u16, 0usize)
        };
        if gs {
            let geo = snap.regs[0x229] & 3;
            ui.label(if geo == 2 {
                "The geometry shader is enabled (GEOSTAGE_CONFIG mode 2)."
            } else {
                "The geometry shader is not in use (GEOSTAGE_CONFIG mode ≠ 2)."
            });
        }
        for off in [0x0Au16, 0x09, 0x0B, 0x0C, 0x0D] {
            let id = base + off;
            let desc = pica_cmd::regs::describe(id, snap.regs[usize::from(id)]);
            register_block(ui, &desc, set_by(prov, id, snap.at), queue);
        }
        if !gs {
            for id in 0x04Fu16..=0x056 {
                let desc = pica_cmd::regs::describe(id, snap.regs[usize::from(id)]);
                register_block(ui, &desc, set_by(prov, id, snap.at), queue);
            }
        }
        egui::CollapsingHeader::new("Disassembly")
            .id_salt(("disasm", gs))
            .default_open(!gs)
            .show(ui, |ui| {
                listing_ui(ui, if gs { "gs" } else { "vs" }, &unit.listing, None, 300.0)
            });
        egui::CollapsingHeader::new("Float uniforms c0-c95")
            .id_salt(("uniforms", gs))
            .default_open(!gs)
            .show(ui, |ui| {
                ui.checkbox(&mut self.all_uniforms, "show zero uniforms too");
                egui::Grid::new(("uniform_grid", gs))
                    .num_columns(3)
                    .striped(true)
                    .show(ui, |ui| {
                        for (i, v) in unit.float_uniforms.iter().enumerate() {
                            if !self.all_uniforms && v.iter().all(|x| x.to_bits() == 0) {
                                continue;
                            }
                            let edit = edit_draw.map(|draw| EditKind::FloatUniform {
                                draw,
                                unit: edit_unit,
                                index: i as u8,
                                value: FloatValue::f24(*v),
                            });
                            let r = uniform_label(ui, format!("c{i}"));
                            edit_menu(&r, edit.as_ref(), queue);
                            let r = ui
                                .add(
                                    egui::Label::new(RichText::new(fmt_vec4(v)).monospace())
                                        .sense(egui::Sense::click()),
                                )
                                .on_hover_text(widgets::fmt_vec4_bits(v));
                            edit_menu(&r, edit.as_ref(), queue);
                            match prov.and_then(|p| p.uniform_setter(unit_idx, i, snap.at)) {
                                Some(n) => {
                                    ui.horizontal(|ui| {
                                        ui.weak("set by");
                                        widgets::command_link(ui, n, queue);
                                    });
                                }
                                None => {
                                    ui.weak(if prov.is_some() {
                                        "initial state"
                                    } else {
                                        "…"
                                    });
                                }
                            }
                            ui.end_row();
                        }
                    });
            });
        egui::CollapsingHeader::new("Integer and boolean uniforms")
            .id_salt(("intbool", gs))
            .default_open(false)
            .show(ui, |ui| {
                ui.weak("Right-click a value to edit it for the selected draw.");
                egui::Grid::new(("intbool_grid", gs))
                    .num_columns(2)
                    .show(ui, |ui| {
                        for i in 0..4u8 {
                            let v = snap.regs[usize::from(base + 1 + u16::from(i))].to_le_bytes();
                            let edit = edit_draw.map(|draw| EditKind::IntUniform {
                                draw,
                                unit: edit_unit,
                                index: i,
                                value: v,
                            });
                            let r = uniform_label(ui, format!("i{i}"));
                            edit_menu(&r, edit.as_ref(), queue);
                            let r = uniform_label(
                                ui,
                                format!("x {} y {} z {} w {}", v[0], v[1], v[2], v[3]),
                            );
                            edit_menu(&r, edit.as_ref(), queue);
                            ui.end_row();
                        }
                        let bools = snap.regs[usize::from(base)];
                        ui.label(RichText::new("b0-b15").monospace());
                        ui.horizontal_wrapped(|ui| {
                            for b in 0..16u8 {
                                let on = bools >> b & 1 == 1;
                                let edit = edit_draw.map(|draw| EditKind::BoolUniform {
                                    draw,
                                    unit: edit_unit,
                                    index: b,
                                    value: on,
                                });
                                let r = uniform_label(ui, format!("b{b}={}", u8::from(on)));
                                edit_menu(&r, edit.as_ref(), queue);
                            }
                        });
                        ui.end_row();
                    });
                for off in 0x00u16..=0x04 {
                    let id = base + off;
                    let desc = pica_cmd::regs::describe(id, snap.regs[usize::from(id)]);
                    register_block(ui, &desc, set_by(prov, id, snap.at), queue);
                }
            });
    }
}

/// A monospace uniform label that takes clicks (for its context menu).
fn uniform_label(ui: &mut egui::Ui, text: String) -> egui::Response {
    ui.add(egui::Label::new(RichText::new(text).monospace()).sense(egui::Sense::click()))
}

/// The context menu of a uniform: "Edit value… (Edits)" starts `edit` (the uniform's current
/// value for the selected draw) in the Edits panel's "Add edit" field, in edit-script syntax.
fn edit_menu(r: &egui::Response, edit: Option<&EditKind>, queue: &mut Vec<AppCommand>) {
    let Some(edit) = edit else {
        return;
    };
    r.context_menu(|ui| {
        let line = describe(edit);
        if ui
            .button("Edit value… (Edits)")
            .on_hover_text(format!("Start the edit '{line}' in the Edits panel"))
            .clicked()
        {
            queue.push(AppCommand::PrefillEdit(line));
            ui.close();
        }
    });
}

/// A listing in a scroll area (`salt` identifies it), with line `highlight` marked; the view
/// scrolls to the highlight when it changes.
pub fn listing_ui(
    ui: &mut egui::Ui,
    salt: &str,
    l: &ShaderListing,
    highlight: Option<usize>,
    height: f32,
) {
    ui.weak(format!("entry point 0x{:03X}", l.entry));
    let memo = ui.make_persistent_id(("listing_highlight", salt));
    let scroll_now = ui.data(|d| d.get_temp::<Option<usize>>(memo)) != Some(highlight);
    egui::ScrollArea::vertical()
        .id_salt(("listing", salt))
        .max_height(height)
        .auto_shrink([false, true])
        .show(ui, |ui| {
            for (i, line) in l.lines.iter().enumerate() {
                let mut t = RichText::new(&line.text).monospace();
                if line.kind == LineKind::Label {
                    t = t.color(egui::Color32::LIGHT_BLUE).strong();
                } else if line.kind == LineKind::Other {
                    t = t.weak();
                }
                if Some(i) == highlight {
                    t = t
                        .background_color(egui::Color32::from_rgb(70, 70, 20))
                        .strong();
                    let r = ui.label(t);
                    if scroll_now {
                        r.scroll_to_me(Some(egui::Align::Center));
                    }
                } else {
                    ui.label(t);
                }
            }
        });
    ui.data_mut(|d| d.insert_temp(memo, highlight));
}

fn vertex_input(
    ui: &mut egui::Ui,
    snap: &StateSnapshot,
    prov: Option<&Provenance>,
    queue: &mut Vec<AppCommand>,
) {
    let cfg = LoaderConfig::from_regs(&snap.regs);
    ui.label(format!(
        "attribute base 0x{:08X}, {} attribute slot(s), fixed mask 0x{:03X}, {} vertices, vertex offset {}, index buffer 0x{:08X} ({:?})",
        cfg.base,
        cfg.attribute_count,
        cfg.fixed_mask,
        cfg.num_vertices,
        cfg.vertex_offset,
        cfg.index_address(),
        cfg.index_format
    ));
    egui::Grid::new("slots")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            ui.strong("slot");
            ui.strong("source, fixed value");
            ui.end_row();
            for i in 0..usize::from(cfg.attribute_count).min(16) {
                ui.monospace(format!("{i}"));
                let src = match cfg.slots.get(i) {
                    Some(SlotSource::Buffer {
                        loader,
                        offset,
                        stride,
                        format,
                    }) => format!(
                        "loader {loader}: +0x{offset:X}, stride {stride}, {}×{}",
                        format.components, format.ty
                    ),
                    Some(SlotSource::Fixed) => "fixed attribute".into(),
                    Some(SlotSource::Undefined) | None => "undefined (keeps old value)".into(),
                };
                let v = snap.fixed_attribs.get(i).copied().unwrap_or_default();
                // Stacked and wrapping: fits a narrow column.
                ui.vertical(|ui| {
                    ui.add(egui::Label::new(RichText::new(src).monospace()).wrap());
                    ui.horizontal_wrapped(|ui| {
                        ui.weak("fixed");
                        ui.monospace(fmt_vec4(&v));
                        if let Some(n) = prov.and_then(|p| p.fixed_attrib_setter(i, snap.at)) {
                            ui.weak("set by");
                            widgets::command_link(ui, n, queue);
                        }
                    });
                });
                ui.end_row();
            }
        });
    for d in &cfg.diagnostics {
        ui.colored_label(widgets::WARN, format!("{d:?}"));
    }
    egui::CollapsingHeader::new("Loader registers")
        .default_open(false)
        .show(ui, |ui| {
            registers_of(ui, snap, prov, |id| (0x200..=0x22A).contains(&id), queue);
        });
}

fn texture_units(
    ui: &mut egui::Ui,
    s: &mut TraceSession,
    snap: &StateSnapshot,
    prov: Option<&Provenance>,
    queue: &mut Vec<AppCommand>,
) {
    let units = TexUnitsControl::from_regs(&snap.regs);
    for unit in 0..3u8 {
        let cfg = TextureConfig::from_regs(&snap.regs, usize::from(unit));
        let enabled = units.enabled[usize::from(unit)];
        ui.horizontal(|ui| {
            let source = ImageSource::Texture {
                unit,
                face: 0,
                level: 0,
            };
            let (rect, resp) = ui.allocate_exact_size(egui::vec2(64.0, 64.0), egui::Sense::click());
            widgets::name_button(&resp, &format!("Open texture unit {unit}"));
            ui.painter()
                .rect_filled(rect, 2.0, egui::Color32::from_gray(25));
            if enabled {
                if let ImageEntry::Failed(e) = s.want_image(snap.at, source) {
                    ui.painter().text(
                        rect.center(),
                        egui::Align2::CENTER_CENTER,
                        "x",
                        egui::FontId::proportional(20.0),
                        widgets::WARN,
                    );
                    resp.clone().on_hover_text(e);
                } else if let Some((img, tex)) = s.image_texture(ui.ctx(), snap.at, source) {
                    let shown = widgets::shown_size(img.width, img.height, false);
                    let scale = (64.0 / shown.x).min(64.0 / shown.y);
                    let r = egui::Rect::from_center_size(rect.center(), shown * scale);
                    widgets::paint_image(ui.painter(), tex.id(), r, false, egui::Color32::WHITE);
                }
            }
            if resp.on_hover_text("Open in the image view").clicked() {
                queue.push(AppCommand::ShowImage(source));
            }
            ui.vertical(|ui| {
                ui.label(
                    RichText::new(format!(
                        "Texture unit {unit}: {}",
                        if enabled { "enabled" } else { "disabled" }
                    ))
                    .strong(),
                );
                let fmt = cfg.format.map_or_else(
                    || format!("invalid format {}", cfg.format_id),
                    |f| f.name().into(),
                );
                ui.monospace(format!(
                    "0x{:08X}  {}x{}  {fmt}  {:?}",
                    cfg.address, cfg.width, cfg.height, cfg.texture_type
                ));
                ui.monospace(format!(
                    "wrap s {} t {}, mag {:?}, min {:?}, mip {:?}, LOD {}..={} bias {}",
                    cfg.wrap_s.name(),
                    cfg.wrap_t.name(),
                    cfg.mag_filter,
                    cfg.min_filter,
                    cfg.mip_filter,
                    cfg.lod.min_level,
                    cfg.lod.max_level,
                    cfg.lod.bias
                ));
                let b = cfg.border;
                ui.monospace(format!(
                    "border rgba({}, {}, {}, {})",
                    b[0], b[1], b[2], b[3]
                ));
            });
        });
    }
    if units.proctex_enabled {
        ui.label("Procedural texture (unit 3) enabled.");
    }
    egui::CollapsingHeader::new("Texture registers")
        .default_open(false)
        .show(ui, |ui| {
            registers_of(ui, snap, prov, |id| (0x080..=0x0AF).contains(&id), queue);
        });
}

fn tev(
    ui: &mut egui::Ui,
    snap: &StateSnapshot,
    prov: Option<&Provenance>,
    queue: &mut Vec<AppCommand>,
) {
    let r = Regs::new(&snap.regs);
    let upd = r.texenv_update_buffer();
    // One stage per block, its formulas stacked, so the table fits a narrow column; stages
    // that only pass the previous stage through are folded into one line.
    let stages = tev_formulas(&snap.regs);
    let passthrough = |i: usize, rgb: &str, a: &str| {
        rgb == "prev.rgb" && a == "prev.a" && !upd.updates_rgb(i) && !upd.updates_alpha(i)
    };
    egui::Grid::new("tev")
        .num_columns(2)
        .striped(true)
        .show(ui, |ui| {
            let mut i = 0;
            while i < stages.len() {
                let (rgb, a, k) = &stages[i];
                if passthrough(i, rgb, a) {
                    let mut j = i;
                    while j + 1 < stages.len()
                        && passthrough(j + 1, &stages[j + 1].0, &stages[j + 1].1)
                    {
                        j += 1;
                    }
                    let which = if j > i {
                        format!("{i}-{j}")
                    } else {
                        format!("{i}")
                    };
                    ui.monospace(which);
                    ui.weak("pass the previous stage through (prev.rgb, prev.a)");
                    ui.end_row();
                    i = j + 1;
                    continue;
                }
                ui.monospace(format!("{i}"));
                ui.vertical(|ui| {
                    let line = |ui: &mut egui::Ui, t: String| {
                        ui.add(egui::Label::new(RichText::new(t).monospace()).wrap());
                    };
                    line(ui, format!("rgb = {rgb}"));
                    line(ui, format!("a   = {a}"));
                    let buf = match (upd.updates_rgb(i), upd.updates_alpha(i)) {
                        (true, true) => "; buffer ← rgb, a",
                        (true, false) => "; buffer ← rgb",
                        (false, true) => "; buffer ← a",
                        (false, false) => "",
                    };
                    line(ui, format!("const {k}{buf}"));
                });
                ui.end_row();
                i += 1;
            }
        });
    ui.add(
        egui::Label::new(
            RichText::new("prev = the previous stage's output; buffer = the combiner buffer (one stage behind); lerp(x, y, t) = x·(1−t) + y·t").weak(),
        )
        .wrap(),
    );
    egui::CollapsingHeader::new("TEV registers")
        .default_open(false)
        .show(ui, |ui| {
            registers_of(ui, snap, prov, |id| (0x0C0..=0x0FD).contains(&id), queue);
        });
}

fn raw_registers(
    ui: &mut egui::Ui,
    snap: &StateSnapshot,
    prov: Option<&Provenance>,
    queue: &mut Vec<AppCommand>,
) {
    egui::Grid::new("raw_regs")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            for id in 0..0x300u16 {
                let v = snap.regs[usize::from(id)];
                let name = pica_cmd::regs::name(id);
                if name.is_none() && v == 0 {
                    continue;
                }
                ui.monospace(format!("0x{id:03X}"));
                ui.monospace(name.unwrap_or("(unknown)"));
                ui.monospace(format!("0x{v:08X}"));
                match set_by(prov, id, snap.at) {
                    Some(n) => widgets::command_link(ui, n, queue),
                    None => {
                        ui.label("");
                    }
                }
                ui.end_row();
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tev_formula_reads_modulate_and_pass_through() {
        let mut regs = [0u32; 0x300];
        // Stage 0: rgb = tex0.rgb * vertex_color.rgb, alpha = vertex_color.a (replace).
        regs[0x0C0] = 3; // rgb sources tex0, primary, primary; alpha sources primary
        regs[0x0C1] = 0;
        regs[0x0C2] = 1; // rgb MODULATE, alpha REPLACE
        regs[0x0C4] = 1; // rgb scale 2x
        // Stage 1: previous, replace.
        regs[0x0C8] = 0x00F0_00F0 | 0xF | (0xF << 16);
        let f = tev_formulas(&regs);
        assert_eq!(f[0].0, "tex0.rgb * vertex_color.rgb × 2");
        assert_eq!(f[0].1, "vertex_color.a");
        assert_eq!(f[1].0, "prev.rgb");
        assert_eq!(f.len(), 6);
    }
}
