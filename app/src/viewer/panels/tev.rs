//! TEV panel: the six texture-combiner stages and the combiner buffer as a graph, and the
//! per-stage "solo" (re-render the selected draw with one stage's output as its colour, shown
//! next to the real result).
//!
//! Stage: presentation. Inputs: the [`StateSnapshot`] as of the selected command (the register
//! file), the formulas the State panel shows ([`super::state::tev_formulas`]), and the worker's
//! [`SoloImages`] for the selected draw. Registers read (through
//! [`gpu_core::tev::TevConfig::from_regs`] and raw for the hover texts): TEXENVi_SOURCE /
//! OPERAND / COMBINER / COLOR / SCALE at 0x0C0, 0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8 (+0 … +4),
//! 0x0E0 TEXENV_UPDATE_BUFFER bits 8-15 and 0x0FD TEXENV_BUFFER_COLOR.
//!
//! The graph is painted (boxes and Bézier wires) with real labels and buttons inside the boxes,
//! so every element has a hover text naming the register and bits it comes from and UI tests
//! can find it. Wires: a stage's output to the next stage's inputs that read "previous"; the
//! combiner buffer is a lane under the boxes, fed by the stages whose update flags are set and
//! read by inputs that select "previous buffer". Other sources are named on the input itself.

use eframe::egui::{self, Color32, Pos2, Rect, RichText, Sense, Stroke, Vec2};
use gpu_core::tev::{
    AlphaOperand, ColorOperand, SoloChannel, TEV_STAGE_BASE, TevConfig, TevOp, TevSolo, TevSource,
    TevStage,
};

use crate::viewer::command::AppCommand;
use crate::viewer::panels::state::tev_formulas;
use crate::viewer::prefs::Prefs;
use crate::viewer::protocol::{ImageData, SoloImages};
use crate::viewer::session::{TraceSession, color_image};
use crate::viewer::widgets::{self, WARN, paint_image};

/// Width of a stage box.
const BOX_W: f32 = 184.0;
/// Horizontal gap between boxes (room for the wires).
const GAP: f32 = 40.0;
/// Margin left of the first box in a row (room for the wires into it).
const LEFT: f32 = 24.0;
/// Height of the combiner-buffer lane under a row of boxes.
const LANE_H: f32 = 48.0;
/// Width of the "fragment colour" node right of the last stage.
const OUT_W: f32 = 120.0;

/// TEV panel UI state.
pub struct TevView {
    /// What a solo shows.
    pub channel: SoloChannel,
    /// The soloed stage, if any.
    pub solo: Option<u8>,
    /// Textures of the shown solo images, made once per answer.
    textures: Option<((u64, TevSolo), egui::TextureHandle, egui::TextureHandle)>,
    /// Height of the stage boxes (measured from their contents on the previous frame).
    box_h: f32,
}

impl std::fmt::Debug for TevView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TevView")
            .field("channel", &self.channel)
            .field("solo", &self.solo)
            .finish_non_exhaustive()
    }
}

impl Default for TevView {
    fn default() -> Self {
        Self {
            channel: SoloChannel::Color,
            solo: None,
            textures: None,
            box_h: 300.0,
        }
    }
}

/// An input port: stage, position, alpha (else colour).
type Port = (usize, Pos2, bool);

/// A painted wire (a polyline) and what it carries.
struct Wire {
    pts: Vec<Pos2>,
    color: Color32,
    width: f32,
    tip: String,
}

/// A label at `rect` (not moving the parent's cursor) with a hover text.
fn put_label(ui: &mut egui::Ui, rect: Rect, text: RichText, tip: &str) {
    let mut child = ui.new_child(egui::UiBuilder::new().max_rect(rect));
    child.label(text).on_hover_text(tip);
}

/// Short name of a combiner source.
pub fn source_name(s: TevSource) -> String {
    match s {
        TevSource::PrimaryColor => "primary colour".into(),
        TevSource::FragmentPrimary => "fragment primary (lighting)".into(),
        TevSource::FragmentSecondary => "fragment secondary (lighting)".into(),
        TevSource::Texture0 => "texture 0".into(),
        TevSource::Texture1 => "texture 1".into(),
        TevSource::Texture2 => "texture 2".into(),
        TevSource::Texture3 => "texture 3 (procedural)".into(),
        TevSource::PreviousBuffer => "previous buffer".into(),
        TevSource::Constant => "constant".into(),
        TevSource::Previous => "previous".into(),
        TevSource::Unknown(n) => format!("source {n}? (reads 0)"),
    }
}

/// A source's name as the stage boxes show it (the hover text has the long one).
fn short_source_name(s: TevSource) -> String {
    match s {
        TevSource::PrimaryColor => "primary".into(),
        TevSource::FragmentPrimary => "light primary".into(),
        TevSource::FragmentSecondary => "light secondary".into(),
        TevSource::Texture0 => "tex 0".into(),
        TevSource::Texture1 => "tex 1".into(),
        TevSource::Texture2 => "tex 2".into(),
        TevSource::Texture3 => "tex 3 (proc)".into(),
        TevSource::PreviousBuffer => "buffer".into(),
        TevSource::Constant => "const".into(),
        TevSource::Previous => "prev".into(),
        TevSource::Unknown(n) => format!("source {n}?"),
    }
}

/// The 4-bit register value of a source.
fn source_bits(s: TevSource) -> u8 {
    match s {
        TevSource::PrimaryColor => 0,
        TevSource::FragmentPrimary => 1,
        TevSource::FragmentSecondary => 2,
        TevSource::Texture0 => 3,
        TevSource::Texture1 => 4,
        TevSource::Texture2 => 5,
        TevSource::Texture3 => 6,
        TevSource::PreviousBuffer => 13,
        TevSource::Constant => 14,
        TevSource::Previous => 15,
        TevSource::Unknown(n) => n,
    }
}

/// An RGB operand as a suffix or prefix of the source name.
fn rgb_operand_text(src: &str, o: ColorOperand) -> String {
    match o {
        ColorOperand::Rgb => format!("{src}.rgb"),
        ColorOperand::OneMinusRgb => format!("1 − {src}.rgb"),
        ColorOperand::Alpha => format!("{src}.aaa"),
        ColorOperand::OneMinusAlpha => format!("1 − {src}.aaa"),
        ColorOperand::Red => format!("{src}.rrr"),
        ColorOperand::OneMinusRed => format!("1 − {src}.rrr"),
        ColorOperand::Green => format!("{src}.ggg"),
        ColorOperand::OneMinusGreen => format!("1 − {src}.ggg"),
        ColorOperand::Blue => format!("{src}.bbb"),
        ColorOperand::OneMinusBlue => format!("1 − {src}.bbb"),
        ColorOperand::Unknown(n) => format!("{src} operand {n}? (reads 0)"),
    }
}

/// An alpha operand applied to a source name.
fn alpha_operand_text(src: &str, o: AlphaOperand) -> String {
    match o {
        AlphaOperand::Alpha => format!("{src}.a"),
        AlphaOperand::OneMinusAlpha => format!("1 − {src}.a"),
        AlphaOperand::Red => format!("{src}.r"),
        AlphaOperand::OneMinusRed => format!("1 − {src}.r"),
        AlphaOperand::Green => format!("{src}.g"),
        AlphaOperand::OneMinusGreen => format!("1 − {src}.g"),
        AlphaOperand::Blue => format!("{src}.b"),
        AlphaOperand::OneMinusBlue => format!("1 − {src}.b"),
    }
}

/// Name of a combiner operation.
pub fn op_name(op: TevOp) -> String {
    match op {
        TevOp::Replace => "Replace (A)".into(),
        TevOp::Modulate => "Modulate (A·B)".into(),
        TevOp::Add => "Add (A+B)".into(),
        TevOp::AddSigned => "Add signed (A+B−½)".into(),
        TevOp::Lerp => "Lerp (A·C + B·(1−C))".into(),
        TevOp::Subtract => "Subtract (A−B)".into(),
        TevOp::Dot3Rgb => "Dot3 RGB".into(),
        TevOp::Dot3Rgba => "Dot3 RGBA".into(),
        TevOp::MultiplyAdd => "Multiply-add (A·B+C)".into(),
        TevOp::AddMultiply => "Add-multiply ((A+B)·C)".into(),
        TevOp::Unknown(n) => format!("operation {n}? (gives 0)"),
    }
}

/// The bits of an operand field as the register holds them.
fn rgb_operand_bits(o: ColorOperand) -> u8 {
    match o {
        ColorOperand::Rgb => 0,
        ColorOperand::OneMinusRgb => 1,
        ColorOperand::Alpha => 2,
        ColorOperand::OneMinusAlpha => 3,
        ColorOperand::Red => 4,
        ColorOperand::OneMinusRed => 5,
        ColorOperand::Green => 8,
        ColorOperand::OneMinusGreen => 9,
        ColorOperand::Blue => 12,
        ColorOperand::OneMinusBlue => 13,
        ColorOperand::Unknown(n) => n,
    }
}

/// Register name (from the catalogue) and id of stage `k`'s register `+off`.
fn reg_name(k: usize, off: usize) -> String {
    let id = TEV_STAGE_BASE[k.min(5)] + off;
    let name = pica_cmd::regs::describe(id as u16, 0).name;
    format!("{name} (0x{id:03X})")
}

/// Hover text of one input of a stage.
fn input_tip(k: usize, regs: &[u32; 0x300], alpha: bool, j: usize, st: &TevStage) -> String {
    let base = TEV_STAGE_BASE[k.min(5)];
    let (src, sbit) = if alpha {
        (st.alpha_source[j], 16 + 4 * j)
    } else {
        (st.rgb_source[j], 4 * j)
    };
    let (obits, olen, oval) = if alpha {
        (12 + 4 * j, 3, st.alpha_operand[j] as u8)
    } else {
        (4 * j, 4, rgb_operand_bits(st.rgb_operand[j]))
    };
    let mut t = format!(
        "{} input {}: {}\n{} = 0x{:08X}, bits {}-{} = {} ({})\n{} = 0x{:08X}, bits {}-{} = {}",
        if alpha { "Alpha" } else { "Colour" },
        ["A", "B", "C"][j],
        source_name(src),
        reg_name(k, 0),
        regs[base],
        sbit,
        sbit + 3,
        source_bits(src),
        source_name(src),
        reg_name(k, 1),
        regs[base + 1],
        obits,
        obits + olen - 1,
        oval
    );
    if k == 0 && src == TevSource::Previous {
        t.push_str("\nIn stage 0, \"previous\" reads the primary colour (HW: hardware fact TE-1).");
    }
    if src == TevSource::PreviousBuffer {
        t.push_str(if k == 0 {
            "\nIn stage 0 the buffer reads (0, 0, 0, 0)."
        } else if k == 1 {
            "\nIn stage 1 the buffer holds its initial colour (0x0FD)."
        } else {
            "\nThe buffer lags one stage: it holds what stages ≤ k − 2 wrote."
        });
    }
    t
}

impl TevView {
    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        prefs: &Prefs,
        command: u64,
        queue: &mut Vec<AppCommand>,
    ) {
        let Some(snap) = s.want_state(command) else {
            ui.spinner();
            return;
        };
        let draw = s.draw_at_or_before(command);
        let regs: &[u32; 0x300] = &snap.regs;
        let cfg = TevConfig::from_regs(regs);
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("Combiners as of command {}", snap.at));
            if !s.state_is_current(command) {
                ui.spinner();
            }
            match draw {
                Some(d) => ui.label(format!("· solo re-renders draw {d}")),
                None => ui.weak("· no draw yet: nothing to solo"),
            };
        });
        ui.horizontal_wrapped(|ui| {
            ui.label("Solo shows:");
            for (c, name, tip) in [
                (
                    SoloChannel::Color,
                    "Stage colour",
                    "The stage's RGB, written opaque",
                ),
                (
                    SoloChannel::Alpha,
                    "Stage alpha",
                    "The stage's alpha as grey, written opaque",
                ),
                (
                    SoloChannel::Both,
                    "Stage RGBA",
                    "The stage's RGBA as it is (the image shows RGB)",
                ),
            ] {
                ui.selectable_value(&mut self.channel, c, name)
                    .on_hover_text(tip);
            }
            if self.solo.is_some() && ui.button("Clear solo").clicked() {
                self.solo = None;
            }
        });
        ui.separator();
        let width = ui.available_width();
        egui::ScrollArea::both()
            .id_salt("tev_graph")
            .auto_shrink([false, true])
            .max_height(ui.available_height().max(200.0))
            .show(ui, |ui| {
                self.solo_images(ui, s, prefs, draw, queue);
                ui.add_space(8.0);
                self.graph(ui, regs, &cfg, width);
            });
    }

    /// The stage boxes, the buffer lanes and the wires. Stages wrap into rows of as many
    /// boxes as fit `width`; each row has its buffer lane underneath.
    fn graph(&mut self, ui: &mut egui::Ui, regs: &[u32; 0x300], cfg: &TevConfig, width: f32) {
        let formulas = tev_formulas(regs);
        let cols = (((width - LEFT - 8.0) / (BOX_W + GAP)).floor() as usize).clamp(2, 6);
        let rows = 6usize.div_ceil(cols);
        let box_h = self.box_h.max(120.0);
        let row_h = box_h + LANE_H;
        let size = Vec2::new(
            LEFT + cols as f32 * (BOX_W + GAP) + if cols == 6 { OUT_W } else { 0.0 },
            rows as f32 * row_h + if cols == 6 { 8.0 } else { 48.0 },
        );
        let (rect, resp) = ui.allocate_exact_size(size, Sense::hover());
        let painter = ui.painter_at(rect);
        let visuals = ui.visuals().clone();
        let text_color = visuals.text_color();
        let wire_rgb = Color32::from_rgb(90, 160, 230);
        let wire_alpha = Color32::from_rgb(200, 160, 80);
        let wire_buf = Color32::from_rgb(120, 200, 120);
        let box_pos = |k: usize| {
            Pos2::new(
                rect.left() + LEFT + (k % cols) as f32 * (BOX_W + GAP),
                rect.top() + 4.0 + (k / cols) as f32 * row_h,
            )
        };
        let lane_y =
            |k: usize| rect.top() + 4.0 + (k / cols) as f32 * row_h + box_h + LANE_H * 0.45;
        let mut wires: Vec<Wire> = Vec::new();
        let mut out_ports = [Pos2::ZERO; 6];
        let mut prev_inputs: Vec<Port> = Vec::new();
        let mut buffer_inputs: Vec<Port> = Vec::new();
        let mut measured: f32 = 0.0;

        // Buffer lanes, one per row, joined from the end of a row to the start of the next.
        let lane_tip = format!(
            "Combiner buffer\nTEXENV_BUFFER_COLOR (0x0FD) = 0x{:08X}: its colour as stage 1 reads it\n\
             TEXENV_UPDATE_BUFFER (0x0E0) = 0x{:08X}: bits 8-11 stages 0-3 write RGB, bits 12-15 alpha\n\
             Stage 0 reads (0, 0, 0, 0) as the buffer; stage k ≥ 2 reads what stages ≤ k − 2 wrote.",
            regs[0x0FD], regs[0x0E0]
        );
        for row in 0..rows {
            let first = row * cols;
            let last = (first + cols - 1).min(5);
            let y = lane_y(first);
            let a = Pos2::new(box_pos(first).x - LEFT * 0.5, y);
            let b = Pos2::new(box_pos(last).x + BOX_W + GAP * 0.5, y);
            wires.push(Wire {
                pts: vec![a, b],
                color: wire_buf,
                width: 5.0,
                tip: lane_tip.clone(),
            });
            if row + 1 < rows {
                let next = Pos2::new(box_pos(last + 1).x - LEFT * 0.5, lane_y(last + 1));
                wires.push(Wire {
                    pts: vec![
                        b,
                        Pos2::new(b.x, y + LANE_H * 0.4),
                        Pos2::new(next.x, y + LANE_H * 0.4),
                        next,
                    ],
                    color: wire_buf,
                    width: 2.0,
                    tip: lane_tip.clone(),
                });
            }
        }
        let [br, bg, bb, ba] = cfg.buffer_color;
        put_label(
            ui,
            Rect::from_min_size(
                Pos2::new(box_pos(0).x, lane_y(0) + 6.0),
                Vec2::new(cols as f32 * (BOX_W + GAP) - GAP, 16.0),
            ),
            RichText::new(format!(
                "combiner buffer · initial rgba({br}, {bg}, {bb}, {ba}) · lags one stage"
            ))
            .small(),
            &lane_tip,
        );

        for (k, st) in cfg.stages.iter().enumerate() {
            let box_rect = Rect::from_min_size(box_pos(k), Vec2::new(BOX_W, box_h));
            let pass = st.is_pass_through();
            let fill = if pass {
                visuals.faint_bg_color
            } else {
                visuals.extreme_bg_color
            };
            painter.rect_filled(box_rect, 6.0, fill);
            let border = if self.solo == Some(k as u8) {
                Stroke::new(2.5, Color32::from_rgb(240, 200, 60))
            } else if pass {
                Stroke::new(1.0, visuals.weak_text_color())
            } else {
                Stroke::new(1.5, text_color)
            };
            painter.rect_stroke(box_rect, 6.0, border, egui::StrokeKind::Inside);
            let out_port = Pos2::new(box_rect.right(), box_rect.top() + 14.0);
            out_ports[k] = out_port;
            painter.circle_filled(out_port, 4.0, text_color);

            let mut child = ui.new_child(
                egui::UiBuilder::new()
                    .max_rect(Rect::from_min_size(
                        box_rect.min + Vec2::splat(8.0),
                        Vec2::new(BOX_W - 16.0, 2000.0),
                    ))
                    .layout(egui::Layout::top_down(egui::Align::Min))
                    .id_salt(("tev_stage", k)),
            );
            self.stage_contents(
                &mut child,
                k,
                st,
                regs,
                cfg,
                &formulas,
                box_rect,
                (wire_rgb, wire_alpha, &painter),
                (&mut prev_inputs, &mut buffer_inputs),
            );
            measured = measured.max(child.min_rect().height() + 16.0);

            if k < 4 {
                let (ur, ua) = (
                    cfg.update_rgb & (1 << k) != 0,
                    cfg.update_alpha & (1 << k) != 0,
                );
                if ur || ua {
                    let from = Pos2::new(box_rect.center().x, box_rect.bottom());
                    let to = Pos2::new(box_rect.center().x + 24.0, lane_y(k));
                    wires.push(Wire {
                        pts: bezier(from, to, true),
                        color: wire_buf,
                        width: 2.0,
                        tip: format!(
                            "Stage {k} writes its {} to the combiner buffer\nTEXENV_UPDATE_BUFFER (0x0E0) = 0x{:08X}: bit {} (RGB) = {}, bit {} (alpha) = {}",
                            match (ur, ua) {
                                (true, true) => "colour and alpha",
                                (true, false) => "colour",
                                _ => "alpha",
                            },
                            regs[0x0E0],
                            8 + k,
                            u8::from(ur),
                            12 + k,
                            u8::from(ua)
                        ),
                    });
                }
            }
        }
        if (measured - self.box_h).abs() > 0.5 {
            self.box_h = measured;
            ui.ctx().request_repaint();
        }

        // The final colour node: right of stage 5 in one row, else under the last row.
        let last = out_ports[5];
        let out_rect = if cols == 6 {
            Rect::from_min_size(
                Pos2::new(last.x + GAP * 0.6, last.y - 12.0),
                Vec2::new(OUT_W - 16.0, 24.0),
            )
        } else {
            Rect::from_min_size(
                Pos2::new(last.x - 120.0, rect.bottom() - 30.0),
                Vec2::new(120.0, 24.0),
            )
        };
        painter.rect_stroke(
            out_rect,
            4.0,
            Stroke::new(1.5, text_color),
            egui::StrokeKind::Inside,
        );
        put_label(
            ui,
            out_rect.shrink2(Vec2::new(6.0, 4.0)),
            RichText::new("fragment colour").small(),
            "The combiner output: alpha test, fog, depth/stencil and blending follow",
        );
        let end = Pos2::new(out_rect.left(), out_rect.center().y);
        wires.push(Wire {
            pts: if cols == 6 {
                bezier(last, end, false)
            } else {
                vec![
                    last,
                    Pos2::new(last.x + GAP * 0.4, last.y),
                    Pos2::new(last.x + GAP * 0.4, end.y),
                    Pos2::new(out_rect.right(), end.y),
                ]
            },
            color: text_color,
            width: 2.0,
            tip: "Stage 5's output is the combiner output".into(),
        });

        // Stage k − 1's output into stage k's "previous" inputs (around the box when wrapping).
        for (k, port, alpha) in prev_inputs {
            let from = out_ports[k - 1];
            let pts = if k % cols == 0 {
                let mid_y = lane_y(k - 1) + LANE_H * 0.25;
                vec![
                    from,
                    Pos2::new(from.x + GAP * 0.3, from.y),
                    Pos2::new(from.x + GAP * 0.3, mid_y),
                    Pos2::new(port.x - LEFT * 0.7, mid_y),
                    Pos2::new(port.x - LEFT * 0.7, port.y),
                    port,
                ]
            } else {
                bezier(from, port, false)
            };
            wires.push(Wire {
                pts,
                color: if alpha { wire_alpha } else { wire_rgb },
                width: 2.0,
                tip: format!(
                    "Stage {}'s output → stage {k} {} input (source 15, previous)\n{} = 0x{:08X}",
                    k - 1,
                    if alpha { "alpha" } else { "colour" },
                    reg_name(k, 0),
                    regs[TEV_STAGE_BASE[k]]
                ),
            });
        }
        // The buffer lane into "previous buffer" inputs.
        for (k, port, alpha) in buffer_inputs {
            let from = Pos2::new(port.x - LEFT * 0.35, lane_y(k));
            wires.push(Wire {
                pts: vec![from, Pos2::new(from.x, port.y), port],
                color: wire_buf,
                width: 2.0,
                tip: format!(
                    "Combiner buffer → stage {k} {} input (source 13, previous buffer)\n{} = 0x{:08X}",
                    if alpha { "alpha" } else { "colour" },
                    reg_name(k, 0),
                    regs[TEV_STAGE_BASE[k]]
                ),
            });
        }

        let hover = resp.hover_pos().and_then(|p| nearest_wire(&wires, p));
        for (i, w) in wires.iter().enumerate() {
            let width = if hover == Some(i) {
                w.width + 1.5
            } else {
                w.width
            };
            painter.add(egui::Shape::line(
                w.pts.clone(),
                Stroke::new(width, w.color),
            ));
        }
        if let Some(w) = hover.and_then(|i| wires.get(i)) {
            resp.on_hover_text_at_pointer(w.tip.clone());
        }
    }

    /// The labels and the solo button inside stage `k`'s box.
    #[allow(clippy::too_many_arguments)]
    fn stage_contents(
        &mut self,
        child: &mut egui::Ui,
        k: usize,
        st: &TevStage,
        regs: &[u32; 0x300],
        cfg: &TevConfig,
        formulas: &[(String, String, String)],
        box_rect: Rect,
        (wire_rgb, wire_alpha, painter): (Color32, Color32, &egui::Painter),
        (prev_inputs, buffer_inputs): (&mut Vec<Port>, &mut Vec<Port>),
    ) {
        child.spacing_mut().item_spacing.y = 2.0;
        let pass = st.is_pass_through();
        let base = TEV_STAGE_BASE[k];
        let header = if pass {
            format!("Stage {k} · pass-through")
        } else {
            format!("Stage {k}")
        };
        child
            .label(RichText::new(header).strong())
            .on_hover_text(format!(
                "{}\n{} = 0x{:08X}\n{} = 0x{:08X}\n{} = 0x{:08X}\n{} = 0x{:08X}\n{} = 0x{:08X}",
                if pass {
                    "Pass-through: replace(previous) for colour and alpha, scale 1 (skipped per fragment)"
                } else {
                    "Combiner stage"
                },
                reg_name(k, 0),
                regs[base],
                reg_name(k, 1),
                regs[base + 1],
                reg_name(k, 2),
                regs[base + 2],
                reg_name(k, 3),
                regs[base + 3],
                reg_name(k, 4),
                regs[base + 4],
            ));
        let (rgb_formula, alpha_formula, _) = formulas.get(k).cloned().unwrap_or_default();
        for alpha in [false, true] {
            child.label(
                RichText::new(if alpha { "Alpha" } else { "Colour" })
                    .small()
                    .color(if alpha { wire_alpha } else { wire_rgb }),
            );
            let op = if alpha { st.alpha_op } else { st.rgb_op };
            let dot3_alpha = alpha && st.rgb_op == TevOp::Dot3Rgba;
            let arity = if dot3_alpha { 0 } else { op.arity() };
            for j in 0..arity {
                let src = if alpha {
                    st.alpha_source[j]
                } else {
                    st.rgb_source[j]
                };
                let mut name = short_source_name(src);
                if k == 0 && src == TevSource::Previous {
                    name = "prev (= primary)".into();
                }
                let text = if alpha {
                    alpha_operand_text(&name, st.alpha_operand[j])
                } else {
                    rgb_operand_text(&name, st.rgb_operand[j])
                };
                let r = child
                    .label(format!("{}: {text}", ["A", "B", "C"][j]))
                    .on_hover_text(input_tip(k, regs, alpha, j, st));
                let port = Pos2::new(box_rect.left(), r.rect.center().y);
                painter.circle_filled(port, 3.0, if alpha { wire_alpha } else { wire_rgb });
                match src {
                    TevSource::Previous if k > 0 => prev_inputs.push((k, port, alpha)),
                    TevSource::PreviousBuffer => buffer_inputs.push((k, port, alpha)),
                    _ => {}
                }
            }
            if dot3_alpha {
                child.label("= the colour's Dot3 result").on_hover_text(format!(
                    "Dot3 RGBA: the colour combiner's result also replaces the alpha output; the alpha combiner is skipped (its scale still applies).\n{} = 0x{:08X}, bits 0-3 = 7",
                    reg_name(k, 2),
                    regs[base + 2]
                ));
            }
            let scale = if alpha { st.alpha_scale } else { st.rgb_scale };
            let bit = if alpha { 16 } else { 0 };
            child
                .label(
                    RichText::new(format!(
                        "= {}{}",
                        op_name(op),
                        if scale == 1 {
                            String::new()
                        } else {
                            format!(" × {scale}")
                        }
                    ))
                    .strong(),
                )
                .on_hover_text(format!(
                    "{} = 0x{:08X}, bits {}-{} = {} ({})\n{} = 0x{:08X}, bits {}-{}: scale × {}{}",
                    reg_name(k, 2),
                    regs[base + 2],
                    bit,
                    bit + 3,
                    (regs[base + 2] >> bit) & 0xF,
                    op_name(op),
                    reg_name(k, 4),
                    regs[base + 4],
                    bit,
                    bit + 1,
                    scale,
                    if st.scale_reserved {
                        "\nReserved scale value 3 (UNVERIFIED: treated as × 1)"
                    } else {
                        ""
                    }
                ));
            child.label(
                RichText::new(if alpha { &alpha_formula } else { &rgb_formula })
                    .small()
                    .weak(),
            );
        }
        let [cr, cg, cb, ca] = st.constant;
        child.horizontal(|ui| {
            let (sw, _) = ui.allocate_exact_size(Vec2::splat(10.0), Sense::hover());
            ui.painter()
                .rect_filled(sw, 2.0, Color32::from_rgb(cr, cg, cb));
            ui.label(RichText::new(format!("const ({cr}, {cg}, {cb}, {ca})")).small())
                .on_hover_text(format!(
                    "{} = 0x{:08X}: R bits 0-7, G 8-15, B 16-23, A 24-31",
                    reg_name(k, 3),
                    regs[base + 3]
                ));
        });
        if k < 4 {
            let (ur, ua) = (
                cfg.update_rgb & (1 << k) != 0,
                cfg.update_alpha & (1 << k) != 0,
            );
            let what = match (ur, ua) {
                (true, true) => "buffer ← colour and alpha",
                (true, false) => "buffer ← colour",
                (false, true) => "buffer ← alpha",
                (false, false) => "buffer not written",
            };
            child
                .label(RichText::new(what).small())
                .on_hover_text(format!(
                    "TEXENV_UPDATE_BUFFER (0x0E0) = 0x{:08X}: bit {} (RGB) = {}, bit {} (alpha) = {}",
                    regs[0x0E0],
                    8 + k,
                    u8::from(ur),
                    12 + k,
                    u8::from(ua)
                ));
        } else {
            child.label(RichText::new("cannot write the buffer").small().weak());
        }
        let soloed = self.solo == Some(k as u8);
        let b = child
            .selectable_label(soloed, format!("Solo stage {k}"))
            .on_hover_text(
                "Re-render the selected draw with this stage's output as the final colour \
                 (no fog, no blending; the real alpha test, depth and stencil), next to the real result",
            );
        if b.clicked() {
            self.solo = if soloed { None } else { Some(k as u8) };
        }
    }

    /// The real and soloed images of the selected draw, side by side.
    fn solo_images(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        prefs: &Prefs,
        draw: Option<u64>,
        queue: &mut Vec<AppCommand>,
    ) {
        let (Some(stage), Some(draw)) = (self.solo, draw) else {
            ui.weak("Click \"Solo stage k\" to see the selected draw rendered with that stage's output as its colour.");
            return;
        };
        let solo = TevSolo {
            stage,
            channel: self.channel,
        };
        let what = match self.channel {
            SoloChannel::Color => "colour",
            SoloChannel::Alpha => "alpha",
            SoloChannel::Both => "RGBA",
        };
        let result = s.want_tev_solo(draw, solo).cloned();
        let images = match result {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!(
                        "Rendering draw {draw} with stage {stage}'s {what}…"
                    ));
                });
                return;
            }
            Some(Err(e)) => {
                ui.colored_label(WARN, format!("Solo of draw {draw}: {e}"));
                return;
            }
            Some(Ok(images)) => images,
        };
        let key = (draw, solo);
        if self.textures.as_ref().is_none_or(|(k, _, _)| *k != key) {
            let tex = |name: &str, img: &ImageData| {
                let opaque: Vec<[u8; 4]> =
                    img.pixels.iter().map(|p| [p[0], p[1], p[2], 255]).collect();
                ui.ctx().load_texture(
                    format!("tev-solo-{name}"),
                    color_image(img.width, img.height, &opaque),
                    egui::TextureOptions::NEAREST,
                )
            };
            self.textures = Some((key, tex("real", &images.real), tex("solo", &images.solo)));
        }
        let Some((_, real_tex, solo_tex)) = &self.textures else {
            return;
        };
        let SoloImages { real, solo: soloed } = &*images;
        let avail = ui.available_width().max(200.0);
        ui.horizontal_top(|ui| {
            for (title, img, tex) in [
                (
                    format!("Real: colour buffer after draw {draw}"),
                    real,
                    real_tex,
                ),
                (
                    format!("Solo: stage {stage} {what} after draw {draw}"),
                    soloed,
                    solo_tex,
                ),
            ] {
                ui.vertical(|ui| {
                    ui.strong(&title);
                    let rotate = prefs.rotate_thumbs && img.height > img.width;
                    let shown = widgets::shown_size(img.width, img.height, rotate);
                    let w = ((avail - 24.0) / 2.0).min(shown.x.min(420.0)).max(120.0);
                    let size = Vec2::new(w, w * shown.y / shown.x.max(1.0));
                    let (rect, resp) = ui.allocate_exact_size(size, Sense::click());
                    widgets::name_button(&resp, &title);
                    ui.painter().rect_filled(rect, 0.0, Color32::BLACK);
                    paint_image(ui.painter(), tex.id(), rect, rotate, Color32::WHITE);
                    if resp
                        .on_hover_text(format!(
                            "{}\nClick to open the colour buffer in the image view",
                            img.description
                        ))
                        .clicked()
                    {
                        queue.push(AppCommand::ShowImage(
                            crate::viewer::protocol::ImageSource::Color,
                        ));
                    }
                });
            }
        });
        ui.weak(
            "The solo writes the stage's value with no fog and no blending; fragments are kept or \
             discarded by the real alpha test, stencil and depth tests.",
        );
    }
}

/// A Bézier wire from `from` to `to`, flattened: horizontal tangents (output on the right,
/// input on the left), or vertical ones when `down`.
fn bezier(from: Pos2, to: Pos2, down: bool) -> Vec<Pos2> {
    let d = if down {
        Vec2::new(0.0, ((to.y - from.y).abs() * 0.5).max(12.0))
    } else {
        Vec2::new(((to.x - from.x).abs() * 0.5).max(24.0), 0.0)
    };
    let curve = egui::epaint::CubicBezierShape::from_points_stroke(
        [from, from + d, to - d, to],
        false,
        Color32::TRANSPARENT,
        Stroke::NONE,
    );
    (0..=24).map(|i| curve.sample(i as f32 / 24.0)).collect()
}

/// The index of the wire within 5 points of `p`, if any (the nearest).
fn nearest_wire(wires: &[Wire], p: Pos2) -> Option<usize> {
    let mut best: Option<(usize, f32)> = None;
    for (i, w) in wires.iter().enumerate() {
        for seg in w.pts.windows(2) {
            let d = dist_to_segment(p, seg[0], seg[1]);
            if d <= 5.0 && best.is_none_or(|(_, bd)| d < bd) {
                best = Some((i, d));
            }
        }
    }
    best.map(|(i, _)| i)
}

fn dist_to_segment(p: Pos2, a: Pos2, b: Pos2) -> f32 {
    let ab = b - a;
    let len2 = ab.length_sq();
    let t = if len2 > 0.0 {
        ((p - a).dot(ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + ab * t - p).length()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wires_are_found_near_their_curve_only() {
        let w = Wire {
            pts: bezier(Pos2::new(0.0, 0.0), Pos2::new(100.0, 0.0), false),
            color: Color32::WHITE,
            width: 2.0,
            tip: String::new(),
        };
        assert_eq!(
            nearest_wire(std::slice::from_ref(&w), Pos2::new(50.0, 2.0)),
            Some(0)
        );
        assert_eq!(
            nearest_wire(std::slice::from_ref(&w), Pos2::new(50.0, 20.0)),
            None
        );
    }

    #[test]
    fn input_tips_name_register_and_bits() {
        let mut regs = [0u32; 0x300];
        // Stage 1: colour input B = texture 0 (source bits 4-7 = 3), operand 1 − rgb.
        regs[0x0C8] = 3 << 4;
        regs[0x0C9] = 1 << 4;
        regs[0x0CA] = 1; // modulate
        let cfg = TevConfig::from_regs(&regs);
        let t = input_tip(1, &regs, false, 1, &cfg.stages[1]);
        assert!(t.contains("texture 0"), "{t}");
        assert!(t.contains("(0x0C8)") && t.contains("bits 4-7 = 3"), "{t}");
        assert!(t.contains("(0x0C9)") && t.contains("bits 4-7 = 1"), "{t}");
        // Stage 0's previous is the primary colour.
        regs[0x0C0] = 15;
        let cfg = TevConfig::from_regs(&regs);
        let t = input_tip(0, &regs, false, 0, &cfg.stages[0]);
        assert!(t.contains("primary colour (HW"), "{t}");
    }
}
