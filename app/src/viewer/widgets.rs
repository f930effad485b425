//! Small reusable pieces of UI: number formatting, decoded register fields with tooltips, links
//! to commands, images with rotation.
//!
//! Stage: presentation. Inputs: register values (decoded through `pica_cmd::regs::describe`, whose
//! field doc strings become tooltips), f32 vectors, textures. Outputs: egui widgets.

use eframe::egui::{self, Color32, RichText};
use pica_cmd::regs::RegDescription;

use super::command::AppCommand;

/// Colour of changed values.
pub const CHANGED: Color32 = Color32::from_rgb(255, 200, 80);
/// Colour of warnings.
pub const WARN: Color32 = Color32::from_rgb(255, 140, 90);
/// Colour of good news.
pub const GOOD: Color32 = Color32::from_rgb(120, 220, 120);

/// A float for tables: up to 6 significant digits, `-0` kept, NaN/inf named.
pub fn fmt_f32(v: f32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e6).contains(&a) {
        format!("{v:.4e}")
    } else {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        if s == "-0" && v.to_bits() >> 31 == 0 {
            "0".into()
        } else {
            s.into()
        }
    }
}

/// `(x, y, z, w)`.
pub fn fmt_vec4(v: &[f32; 4]) -> String {
    format!(
        "({}, {}, {}, {})",
        fmt_f32(v[0]),
        fmt_f32(v[1]),
        fmt_f32(v[2]),
        fmt_f32(v[3])
    )
}

/// Bit patterns of a vec4 (exact float values for the tooltip).
pub fn fmt_vec4_bits(v: &[f32; 4]) -> String {
    format!(
        "{:08X} {:08X} {:08X} {:08X} (f32 bits)",
        v[0].to_bits(),
        v[1].to_bits(),
        v[2].to_bits(),
        v[3].to_bits()
    )
}

/// A clickable `#n` that selects command `n`.
pub fn command_link(ui: &mut egui::Ui, n: u64, queue: &mut Vec<AppCommand>) {
    if ui
        .link(format!("#{n}"))
        .on_hover_text(format!("Go to command {n}"))
        .clicked()
    {
        queue.push(AppCommand::SelectCommand(n));
    }
}

/// The decoded fields of a register as grid rows (`name | meaning`), each with the field's
/// documentation (bit range and number format) as tooltip. Fields that differ from `old` are
/// highlighted.
pub fn fields_rows(ui: &mut egui::Ui, desc: &RegDescription, old: Option<&RegDescription>) {
    for (i, f) in desc.fields.iter().enumerate() {
        let changed = old
            .and_then(|o| o.fields.get(i))
            .is_some_and(|o| o.raw != f.raw);
        let bits = if f.bits.0 == f.bits.1 {
            format!("bit {}", f.bits.0)
        } else {
            format!("bits {}-{}", f.bits.0, f.bits.1)
        };
        let tip = format!("{bits}, raw 0x{:X}\n{}", f.raw, f.doc);
        ui.label(RichText::new(f.name).monospace())
            .on_hover_text(&tip);
        let mut text = RichText::new(&f.meaning).monospace();
        if changed {
            text = text.color(CHANGED);
        }
        let r = ui.label(text).on_hover_text(&tip);
        if changed && let Some(o) = old.and_then(|o| o.fields.get(i)) {
            r.on_hover_text(format!("was {}", o.meaning));
        }
        ui.end_row();
    }
}

/// A register with its fields, as a collapsible block: `0x041 VIEWPORT_WIDTH = 0x…` with the
/// register documentation as tooltip and an optional "set by #n" link.
pub fn register_block(
    ui: &mut egui::Ui,
    desc: &RegDescription,
    set_by: Option<u64>,
    queue: &mut Vec<AppCommand>,
) {
    let id = ui.make_persistent_id(("reg", desc.id, desc.space));
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true)
        .show_header(ui, |ui| {
            let head = format!(
                "{} {} = 0x{:08X}",
                match desc.space {
                    pica_cmd::regs::RegSpace::Internal => format!("0x{:03X}", desc.id),
                    pica_cmd::regs::RegSpace::External => format!("0x{:08X}", desc.id),
                },
                desc.name,
                desc.value
            );
            // Wraps ("set by" goes to the next line) instead of running past a narrow panel.
            ui.horizontal_wrapped(|ui| {
                let r = ui.label(RichText::new(head).monospace().strong());
                if !desc.doc.is_empty() {
                    r.on_hover_text(
                        desc.doc
                            .lines()
                            .map(str::trim)
                            .collect::<Vec<_>>()
                            .join(" "),
                    );
                }
                match set_by {
                    Some(n) => {
                        ui.weak("set by");
                        command_link(ui, n, queue);
                    }
                    None => {
                        ui.weak("(initial state)");
                    }
                }
            });
        })
        .body(|ui| {
            egui::Grid::new(("fields", desc.id))
                .num_columns(2)
                .striped(true)
                .show(ui, |ui| fields_rows(ui, desc, None));
        });
}

/// Paints `tex` into `rect`, optionally rotated 90° counter-clockwise (the image's top edge
/// ends up on the left).
pub fn paint_image(
    painter: &egui::Painter,
    tex: egui::TextureId,
    rect: egui::Rect,
    rotate: bool,
    tint: Color32,
) {
    let mut mesh = egui::Mesh::with_texture(tex);
    let uv = [
        egui::pos2(0.0, 0.0),
        egui::pos2(1.0, 0.0),
        egui::pos2(1.0, 1.0),
        egui::pos2(0.0, 1.0),
    ];
    // Corners of `rect`: top-left, top-right, bottom-right, bottom-left.
    let corners = [
        rect.left_top(),
        rect.right_top(),
        rect.right_bottom(),
        rect.left_bottom(),
    ];
    for i in 0..4 {
        // Rotating the image counter-clockwise: image corner i goes to screen corner i − 1.
        let pos = if rotate {
            corners[(i + 3) % 4]
        } else {
            corners[i]
        };
        mesh.vertices.push(egui::epaint::Vertex {
            pos,
            uv: uv[i],
            color: tint,
        });
    }
    mesh.indices.extend_from_slice(&[0, 1, 2, 0, 2, 3]);
    painter.add(egui::Shape::mesh(mesh));
}

/// Names a clickable painted area for accessibility (and UI tests).
pub fn name_button(resp: &egui::Response, label: &str) {
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, label));
}

/// Size of an image of `w × h` pixels as shown (swapped when rotated).
pub fn shown_size(w: u32, h: u32, rotate: bool) -> egui::Vec2 {
    if rotate {
        egui::vec2(h as f32, w as f32)
    } else {
        egui::vec2(w as f32, h as f32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_formatting() {
        assert_eq!(fmt_f32(1.0), "1");
        assert_eq!(fmt_f32(-0.5), "-0.5");
        assert_eq!(fmt_f32(0.0), "0");
        assert_eq!(fmt_f32(-0.0), "-0");
        assert_eq!(fmt_f32(f32::NAN), "NaN");
        assert_eq!(fmt_f32(1e9), "1.0000e9");
        assert_eq!(fmt_vec4(&[1.0, 2.5, 0.0, 1.0]), "(1, 2.5, 0, 1)");
    }
}
