//! LUT panel: the lighting, fog and procedural-texture lookup tables the GPU holds as of the
//! selected command, plotted as curves (egui_plot), each with the input it is indexed by.
//!
//! Stage: presentation. Input: the [`StateSnapshot`] (register file and the raw LUT words of
//! [`gpu_core::lut::LookupTables`]); entries decoded with the core's own decoders
//! ([`LightingLut`], [`FogLut`], [`MapLut`]). Registers read: 0x1C3 LIGHTING_CONFIG0 (environment
//! configuration), 0x1C4 LIGHTING_CONFIG1 (per-LUT disable bits), 0x1D0-0x1D2
//! LIGHTING_LUTINPUT_ABS/SELECT/SCALE, 0x08F LIGHTING_ENABLE0, 0x1C6 LIGHTING_NUM_LIGHTS and
//! 0x1D9 the light permutation, LIGHTn_ATTENUATION_BIAS/SCALE, 0x0E0 (fog mode, z flip),
//! 0x080 (texture unit 3 enable), 0x0A8 PROCTEX0 (noise, mappings), 0x0AC PROCTEX4 (colour LUT
//! width), 0x0AD PROCTEX5 (offset).
//!
//! Axes: a lighting LUT in absolute mode covers input 0..1 with entry `i` at `i/256`; in signed
//! mode −1..1 with entries 0-127 at `i/128` and 128-255 at `(i − 256)/128` (two's complement).
//! Fog entries are at `depth = i/128`; proctex noise and map entries at `i/128`; the colour table
//! by entry index.

use eframe::egui::{self, Color32, RichText};
use egui_plot::{Legend, Line, Plot, PlotPoints};
use gpu_core::fog::FogLut;
use gpu_core::lighting::{LightingLut, LutSlot, lut_available};
use gpu_core::lut::LookupTables;
use gpu_core::proctex::MapLut;
use pica_cmd::regs::Regs;
use pica_cmd::regs::lighting::LutInput;

use crate::viewer::session::TraceSession;
use crate::viewer::widgets::WARN;

/// A table the panel can plot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LutTable {
    /// Lighting LUT by id (0-23; 2 and 7 do not exist).
    Lighting(u8),
    /// The fog LUT.
    Fog,
    /// Procedural texture noise table.
    ProcNoise,
    /// Procedural texture RGB map.
    ProcRgbMap,
    /// Procedural texture alpha map.
    ProcAlphaMap,
    /// Procedural texture colour table.
    ProcColor,
}

impl LutTable {
    /// Every table in menu order.
    pub fn all() -> Vec<LutTable> {
        let mut v: Vec<LutTable> = [0u8, 1, 3, 4, 5, 6]
            .into_iter()
            .chain(8..24)
            .map(LutTable::Lighting)
            .collect();
        v.extend([
            LutTable::Fog,
            LutTable::ProcNoise,
            LutTable::ProcRgbMap,
            LutTable::ProcAlphaMap,
            LutTable::ProcColor,
        ]);
        v
    }

    /// Menu name.
    pub fn name(self) -> String {
        match self {
            LutTable::Lighting(id) => match id {
                0 => "D0 (distribution 0)".into(),
                1 => "D1 (distribution 1)".into(),
                3 => "FR (Fresnel)".into(),
                4 => "RB (reflection blue)".into(),
                5 => "RG (reflection green)".into(),
                6 => "RR (reflection red)".into(),
                8..=15 => format!("SP{} (spotlight, light {})", id - 8, id - 8),
                16..=23 => format!("DA{} (distance attenuation, light {})", id - 16, id - 16),
                _ => format!("lighting LUT {id}"),
            },
            LutTable::Fog => "Fog".into(),
            LutTable::ProcNoise => "Proctex noise".into(),
            LutTable::ProcRgbMap => "Proctex RGB map".into(),
            LutTable::ProcAlphaMap => "Proctex alpha map".into(),
            LutTable::ProcColor => "Proctex colour table".into(),
        }
    }

    /// Name on the picker button.
    pub fn short_name(self) -> String {
        match self {
            LutTable::Lighting(id) => match id {
                0 => "D0".into(),
                1 => "D1".into(),
                3 => "FR".into(),
                4 => "RB".into(),
                5 => "RG".into(),
                6 => "RR".into(),
                8..=15 => format!("SP{}", id - 8),
                16..=23 => format!("DA{}", id - 16),
                _ => format!("LUT {id}"),
            },
            LutTable::Fog => "fog LUT".into(),
            LutTable::ProcNoise => "noise".into(),
            LutTable::ProcRgbMap => "RGB map".into(),
            LutTable::ProcAlphaMap => "alpha map".into(),
            LutTable::ProcColor => "colour table".into(),
        }
    }

    /// The lighting slot of a lighting LUT id and its light (for SP/DA).
    fn slot(id: u8) -> Option<(LutSlot, usize)> {
        Some(match id {
            0 => (LutSlot::D0, 0),
            1 => (LutSlot::D1, 0),
            3 => (LutSlot::Fr, 0),
            4 => (LutSlot::Rb, 0),
            5 => (LutSlot::Rg, 0),
            6 => (LutSlot::Rr, 0),
            8..=15 => (LutSlot::Sp, usize::from(id - 8)),
            16..=23 => (LutSlot::Da, usize::from(id - 16)),
            _ => return None,
        })
    }
}

/// Name of a lighting LUT input.
pub fn input_name(i: LutInput) -> String {
    match i {
        LutInput::NH => "N·H".into(),
        LutInput::VH => "V·H".into(),
        LutInput::NV => "N·V".into(),
        LutInput::LN => "L·N".into(),
        LutInput::SP => "−L·P (spotlight direction)".into(),
        LutInput::CP => "cos φ".into(),
        LutInput::Unknown(v) => format!("input {v}?"),
    }
}

/// What the plot shows: curves and text lines describing the input.
pub struct LutPlot {
    /// Lines describing the table's input and whether the current state uses it.
    pub info: Vec<String>,
    /// Label of the x axis.
    pub x_label: String,
    /// Named curves of (x, y) points.
    pub curves: Vec<(String, Color32, Vec<[f64; 2]>)>,
}

/// The curves and input description of `table` in the state `regs` / `luts`.
pub fn lut_plot(table: LutTable, regs: &[u32; 0x300], luts: &LookupTables) -> LutPlot {
    let r = Regs::new(regs);
    let value_color = Color32::from_rgb(90, 160, 230);
    match table {
        LutTable::Lighting(id) => {
            let lut = LightingLut::from_words(&luts.lighting[usize::from(id) % 24]);
            let mut info = Vec::new();
            let lighting_on = r.lighting_enable0();
            let c0 = r.lighting_config0();
            let c1 = r.lighting_config1();
            let perm = r.light_permutation();
            let num = r.lighting_num_lights().clamp(1, 8) as usize;
            let mut signed = false;
            let mut x_label = "input".to_string();
            if let Some((slot, light)) = LutTable::slot(id) {
                if let Some(k) = slot.input_index() {
                    let input = r.lut_input_select().inputs[k];
                    signed = r.lut_input_abs().signed[k];
                    let scale = r.lut_input_scale().scales[k];
                    let scale_text = scale.factor().map_or_else(
                        || format!("{} (undocumented: 0)", scale.raw()),
                        |f| format!("× {f}"),
                    );
                    x_label = input_name(input);
                    info.push(format!(
                        "Indexed by {} ({}), output {} (LIGHTING_LUTINPUT_SELECT 0x1D1 bits {}-{}, ABS 0x1D0 bit {}, SCALE 0x1D2 bits {}-{})",
                        input_name(input),
                        if signed {
                            "signed input −1..1"
                        } else {
                            "absolute input: |x| for two-sided lights, else max(x, 0)"
                        },
                        scale_text,
                        4 * k,
                        4 * k + 2,
                        4 * k + 1,
                        4 * k,
                        4 * k + 2
                    ));
                } else {
                    let l = r.light(light);
                    let (scale, bias) = l.map_or((0.0, 0.0), |l| {
                        (l.attenuation_scale.to_f32(), l.attenuation_bias.to_f32())
                    });
                    x_label = "distance · scale + bias".into();
                    info.push(format!(
                        "Indexed by clamp(distance · {scale} + {bias}, 0, 1) (light {light}'s ATTENUATION_SCALE / BIAS, float20)"
                    ));
                }
                let available = lut_available(c0.config, slot);
                let disabled = match slot {
                    LutSlot::D0 => c1.d0_disable,
                    LutSlot::D1 => c1.d1_disable,
                    LutSlot::Fr => c1.fr_disable,
                    LutSlot::Rb => c1.rb_disable,
                    LutSlot::Rg => c1.rg_disable,
                    LutSlot::Rr => c1.rr_disable,
                    LutSlot::Sp => c1.spot_disabled(light),
                    LutSlot::Da => c1.dist_atten_disabled(light),
                };
                let light_on = !matches!(slot, LutSlot::Sp | LutSlot::Da)
                    || perm.slots[..num]
                        .iter()
                        .any(|&p| usize::from(p & 7) == light);
                info.push(match (lighting_on, available, disabled, light_on) {
                    (false, ..) => "Not used now: fragment lighting is off (0x08F)".into(),
                    (_, false, ..) => format!(
                        "Not used now: not available in light environment configuration {:?} (0x1C3 bits 4-7; reads 1.0)",
                        c0.config
                    ),
                    (_, _, true, _) => "Not used now: disabled in LIGHTING_CONFIG1 (0x1C4)".into(),
                    (_, _, _, false) => format!("Not used now: light {light} is not enabled"),
                    _ => "Used by the current lighting configuration".into(),
                });
            }
            // Entry i's input: abs mode i/256; signed mode two's complement /128.
            let mut pts: Vec<[f64; 2]> = lut
                .entries
                .iter()
                .enumerate()
                .map(|(i, [v, _])| {
                    let x = if signed {
                        f64::from(i as u8 as i8) / 128.0
                    } else {
                        i as f64 / 256.0
                    };
                    [x, f64::from(*v)]
                })
                .collect();
            pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
            LutPlot {
                info,
                x_label,
                curves: vec![("value".into(), value_color, pts)],
            }
        }
        LutTable::Fog => {
            let lut = FogLut::from_words(&luts.fog);
            let upd = r.texenv_update_buffer();
            let pts = lut
                .entries
                .iter()
                .enumerate()
                .map(|(i, [v, _])| [i as f64 / 128.0, f64::from(*v)])
                .collect();
            LutPlot {
                info: vec![
                    format!(
                        "Indexed by {} (0x0E0 bit 16 z flip = {}); value = weight of the fragment colour (1 = no fog)",
                        if upd.fog_z_flip {
                            "1 − depth"
                        } else {
                            "depth"
                        },
                        u8::from(upd.fog_z_flip)
                    ),
                    format!("Fog mode now: {:?} (0x0E0 bits 0-2)", upd.fog_mode),
                ],
                x_label: if upd.fog_z_flip {
                    "1 − depth".into()
                } else {
                    "depth".into()
                },
                curves: vec![("fog factor".into(), value_color, pts)],
            }
        }
        LutTable::ProcNoise | LutTable::ProcRgbMap | LutTable::ProcAlphaMap => {
            let (words, what) = match table {
                LutTable::ProcNoise => (
                    &luts.proctex_noise,
                    "Indexed by the noise coordinate (noise LUT, table 0)",
                ),
                LutTable::ProcRgbMap => (
                    &luts.proctex_rgb_map,
                    "Indexed by the RGB mapping function's result of (u, v) (table 2)",
                ),
                _ => (
                    &luts.proctex_alpha_map,
                    "Indexed by the alpha mapping function's result of (u, v), with separate alpha (table 3)",
                ),
            };
            let lut = MapLut::from_words(words);
            let pts = lut
                .entries
                .iter()
                .enumerate()
                .map(|(i, [v, _])| [i as f64 / 128.0, f64::from(*v)])
                .collect();
            LutPlot {
                info: vec![what.to_string(), proctex_state(regs)],
                x_label: "coordinate".into(),
                curves: vec![("value".into(), value_color, pts)],
            }
        }
        LutTable::ProcColor => {
            let p = r.proctex();
            let mut curves = Vec::new();
            for (ch, name, color) in [
                (0, "R", Color32::from_rgb(230, 80, 80)),
                (1, "G", Color32::from_rgb(80, 200, 80)),
                (2, "B", Color32::from_rgb(90, 130, 240)),
                (3, "A", Color32::GRAY),
            ] {
                let pts = luts
                    .proctex_color
                    .iter()
                    .enumerate()
                    .map(|(i, w)| [i as f64, f64::from(w.to_le_bytes()[ch])])
                    .collect();
                curves.push((name.to_string(), color, pts));
            }
            LutPlot {
                info: vec![
                    format!(
                        "Indexed by offset + mapped value · width: width {} (PROCTEX4 0x0AC), level-0 offset {} (PROCTEX5 0x0AD)",
                        p.lut.lut_width, p.offsets.level0
                    ),
                    proctex_state(regs),
                ],
                x_label: "entry".into(),
                curves,
            }
        }
    }
}

/// One line on whether texture unit 3 is on.
fn proctex_state(regs: &[u32; 0x300]) -> String {
    let r = Regs::new(regs);
    if r.texunit_config().tex3_enable {
        "Texture unit 3 (procedural texture) is enabled (0x080 bit 10)".into()
    } else {
        "Not used now: texture unit 3 is disabled (0x080 bit 10)".into()
    }
}

/// LUT panel UI state.
#[derive(Debug)]
pub struct LutsView {
    /// The table shown.
    pub table: LutTable,
}

impl Default for LutsView {
    fn default() -> Self {
        Self {
            table: LutTable::Lighting(0),
        }
    }
}

impl LutsView {
    /// Draws the panel.
    pub fn ui(&mut self, ui: &mut egui::Ui, s: &mut TraceSession, command: u64) {
        let Some(snap) = s.want_state(command) else {
            ui.spinner();
            return;
        };
        ui.horizontal_wrapped(|ui| {
            ui.strong(format!("Lookup tables as of command {}", snap.at));
            if !s.state_is_current(command) {
                ui.spinner();
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Fragment lighting:").strong());
            for t in LutTable::all() {
                if matches!(t, LutTable::Lighting(_)) {
                    ui.selectable_value(&mut self.table, t, t.short_name())
                        .on_hover_text(t.name());
                }
            }
        });
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new("Fog:").strong());
            ui.selectable_value(&mut self.table, LutTable::Fog, LutTable::Fog.short_name());
            ui.label(RichText::new("Procedural texture:").strong());
            for t in [
                LutTable::ProcNoise,
                LutTable::ProcRgbMap,
                LutTable::ProcAlphaMap,
                LutTable::ProcColor,
            ] {
                ui.selectable_value(&mut self.table, t, t.short_name())
                    .on_hover_text(t.name());
            }
        });
        ui.separator();
        let plot = lut_plot(self.table, &snap.regs, &snap.luts);
        ui.heading(self.table.name());
        for line in &plot.info {
            if line.starts_with("Not used") {
                ui.colored_label(WARN, line);
            } else {
                ui.label(line);
            }
        }
        let all_zero = plot
            .curves
            .iter()
            .all(|(_, _, pts)| pts.iter().all(|p| p[1] == 0.0));
        if all_zero {
            ui.weak("Every entry is 0 (never written, or written as zeros).");
        }
        Plot::new(("lut_plot", self.table))
            .legend(Legend::default())
            .x_axis_label(plot.x_label.clone())
            .y_axis_label("value")
            .allow_scroll(false)
            .show(ui, |p| {
                for (name, color, pts) in plot.curves {
                    p.line(Line::new(name, PlotPoints::from(pts)).color(color));
                }
            });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lighting_axes_follow_the_input_mode() {
        let mut luts = LookupTables::default();
        // Entry i = i·16 (value bits 0-11).
        for (i, e) in luts.lighting[0].iter_mut().enumerate() {
            *e = (i as u32) * 16;
        }
        let mut regs = [0u32; 0x300];
        let p = lut_plot(LutTable::Lighting(0), &regs, &luts);
        let pts = &p.curves[0].2;
        assert_eq!(pts.len(), 256);
        assert_eq!(pts[0][0], 0.0);
        assert_eq!(pts[255][0], 255.0 / 256.0);
        assert!(p.info[0].contains("N·H"), "{:?}", p.info);
        assert!(p.info[0].contains("absolute"), "{:?}", p.info);
        // Signed D0 (ABS bit 1 set), input L·N (select bits 0-2 = 3): entries 128-255 first.
        regs[0x1D0] = 1 << 1;
        regs[0x1D1] = 3;
        let p = lut_plot(LutTable::Lighting(0), &regs, &luts);
        let pts = &p.curves[0].2;
        assert_eq!(pts[0][0], -1.0);
        assert!((pts[0][1] - f64::from(128u32 * 16) / 4095.0).abs() < 1e-6);
        assert_eq!(pts[255][0], 127.0 / 128.0);
        assert!(p.info[0].contains("L·N") && p.info[0].contains("signed"));
        // Lighting is off in this state.
        assert!(p.info.iter().any(|l| l.contains("lighting is off")));
    }

    #[test]
    fn every_table_plots() {
        let luts = LookupTables::default();
        let regs = [0u32; 0x300];
        for t in LutTable::all() {
            let p = lut_plot(t, &regs, &luts);
            assert!(!p.curves.is_empty(), "{t:?}");
            assert!(!p.info.is_empty(), "{t:?}");
        }
        assert_eq!(LutTable::all().len(), 6 + 16 + 5);
    }
}
