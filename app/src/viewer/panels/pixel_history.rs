//! The Pixel history window (issue 15): what touched the pixel picked in an image view.
//!
//! Picking a pixel of a screen, the colour buffer or the depth/stencil buffer in the image view
//! asks the worker for [`gpu_core::history::pixel_history`] over the frame that contains the
//! selected command, up to it, and opens this window: how the pixel maps to a buffer (through
//! the LCD and the display transfer for screens), its value before and after, then every memory
//! fill / transfer that wrote it and every draw that produced a fragment there. Each draw and
//! each fragment is a collapsible section; "Select draw" selects the draw in the timeline.
//!
//! The text helpers ([`fragment_lines`], [`value_text`], [`engine_text`]) are shared with the
//! `picaview pixel` command, so the window and the CLI say the same thing.

use eframe::egui::{self, RichText};
use gpu_core::debug::EngineEvent;
use gpu_core::debug::fragment::{FragmentFate, FragmentRecord};
use gpu_core::history::{HistoryEvent, PixelHistory, PixelValue};

use crate::viewer::command::AppCommand;
use crate::viewer::protocol::ImageSource;
use crate::viewer::session::{PixelKey, TraceSession};

/// State of the Pixel history window.
#[derive(Debug, Default)]
pub struct PixelHistoryView {
    /// Whether the window is shown.
    pub open: bool,
    /// The last pixel pick seen (a new one opens the window).
    seen: Option<PixelKey>,
    /// The pick whose history is shown.
    shown: Option<PixelKey>,
}

/// True for the images whose pixels have a history (screens and render targets).
pub fn has_history(source: &ImageSource) -> bool {
    matches!(
        source,
        ImageSource::TopScreen
            | ImageSource::TopScreenRight
            | ImageSource::BottomScreen
            | ImageSource::Color
            | ImageSource::Depth
            | ImageSource::Stencil
    )
}

impl PixelHistoryView {
    /// Opens the window on the history of `key` (also when that pixel was picked before and the
    /// window was closed since).
    pub fn open_for(&mut self, key: PixelKey) {
        if has_history(&key.1) {
            self.open = true;
            self.seen = Some(key);
            self.shown = Some(key);
        }
    }

    /// Follows pixel picks and shows the window (when open).
    pub fn ui(&mut self, ctx: &egui::Context, s: &mut TraceSession, queue: &mut Vec<AppCommand>) {
        if let Some((at, source, x, y, _)) = &s.pixel {
            let key = (*at, *source, *x, *y);
            if self.seen != Some(key) {
                self.seen = Some(key);
                // A screen pick opens the history at once. A render-target pick first
                // identifies the draw and triangle in the Image view, whose "Pixel history ▶"
                // opens this window ([`PixelHistoryView::open_for`]); opening it on every click
                // would cover that panel.
                if source.is_screen() {
                    self.open = true;
                    self.shown = Some(key);
                }
            }
        }
        if !self.open {
            return;
        }
        if let Some(key) = self.shown {
            s.request_pixel_history(key);
        }
        let mut open = true;
        egui::Window::new("Pixel history")
            .open(&mut open)
            .default_size([560.0, 420.0])
            .default_pos([420.0, 160.0])
            .vscroll(true)
            .show(ctx, |ui| self.contents(ui, s, queue));
        self.open = open;
    }

    fn contents(&self, ui: &mut egui::Ui, s: &TraceSession, queue: &mut Vec<AppCommand>) {
        let Some(key) = self.shown else {
            ui.weak("Pick a pixel of a screen, the colour buffer or the depth buffer in the Image view.");
            return;
        };
        let (at, source, x, y) = key;
        ui.label(format!("{} ({x}, {y}) as of command #{at}", source.label()));
        let answer = s.pixel_history.as_ref().filter(|(k, _)| *k == key);
        let Some((_, result)) = answer else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.weak("replaying the frame with a probe on this pixel…");
            });
            return;
        };
        let h = match result {
            Ok(h) => h,
            Err(e) => {
                ui.colored_label(ui.visuals().warn_fg_color, e);
                return;
            }
        };
        history_ui(ui, h, queue);
    }
}

/// The body of a history: mapping, values, events.
fn history_ui(ui: &mut egui::Ui, h: &PixelHistory, queue: &mut Vec<AppCommand>) {
    ui.add(egui::Label::new(RichText::new(&h.mapping.description).monospace()).wrap());
    let of_frame = if h.frame == h.request.frame {
        "the frame".to_string()
    } else {
        ui.label(format!(
            "The screen shows an image rendered and transferred in frame {}: its events up to that transfer.",
            h.frame
        ));
        format!("frame {}", h.frame)
    };
    ui.monospace(format!(
        "before: {}   after: {}",
        value_text(&h.before),
        value_text(&h.after)
    ));
    ui.label(format!(
        "{} event(s), {} fragment(s){}",
        h.events.len(),
        h.fragment_count(),
        if h.dropped > 0 {
            format!(", {} not kept", h.dropped)
        } else {
            String::new()
        }
    ));
    ui.separator();
    if h.events.is_empty() {
        ui.weak("Nothing touched this pixel in the frame up to the selected command.");
    }
    for (i, e) in h.events.iter().enumerate() {
        match e {
            HistoryEvent::Engine { after_draws, event } => {
                ui.monospace(format!(
                    "{} (after {after_draws} draws)",
                    engine_text(event)
                ));
            }
            HistoryEvent::Draw {
                draw,
                in_frame,
                fragments,
                ..
            } => {
                let fates: Vec<&str> = fragments
                    .iter()
                    .map(|f| f.fate.map_or("?", FragmentFate::label))
                    .collect();
                let title = format!(
                    "draw {draw} (draw {in_frame} of {of_frame}): {} fragment(s): {}",
                    fragments.len(),
                    fates.join(", ")
                );
                egui::CollapsingHeader::new(title)
                    .id_salt(("pixel-history-draw", i))
                    .default_open(h.events.len() <= 4)
                    .show(ui, |ui| {
                        if ui.button(format!("Select draw {draw}")).clicked() {
                            queue.push(AppCommand::SelectDraw(*draw));
                        }
                        for (k, f) in fragments.iter().enumerate() {
                            let lines = fragment_lines(f);
                            let head = lines.first().cloned().unwrap_or_default();
                            egui::CollapsingHeader::new(head)
                                .id_salt(("pixel-history-fragment", i, k))
                                .default_open(fragments.len() == 1)
                                .show(ui, |ui| {
                                    for l in lines.iter().skip(1) {
                                        ui.monospace(l.trim_start());
                                    }
                                });
                        }
                    });
            }
        }
    }
}
/// `(r,g,b,a)`.
pub fn rgba(c: [u8; 4]) -> String {
    format!("({},{},{},{})", c[0], c[1], c[2], c[3])
}

/// `(r,g,b)`.
pub fn rgb(c: [u8; 3]) -> String {
    format!("({},{},{})", c[0], c[1], c[2])
}

/// The value of the followed pixel for people.
pub fn value_text(v: &PixelValue) -> String {
    let mut parts = Vec::new();
    if let Some(c) = v.color {
        parts.push(format!("rgba{}", rgba(c)));
    }
    if let Some(d) = v.depth {
        parts.push(format!("depth 0x{d:06X}"));
    }
    if let Some(s) = v.stencil {
        parts.push(format!("stencil {s}"));
    }
    if parts.is_empty() {
        "unreadable".to_string()
    } else {
        parts.join(" ")
    }
}

/// One engine event for people.
pub fn engine_text(e: &EngineEvent) -> String {
    match e {
        EngineEvent::MemoryFill {
            unit,
            start,
            end,
            value,
            ..
        } => format!("memory fill (unit {unit}) 0x{start:08X}..0x{end:08X} with 0x{value:08X}"),
        EngineEvent::Transfer {
            input,
            output,
            texture_copy,
            ..
        } => format!(
            "{} 0x{input:08X} -> 0x{output:08X}",
            if *texture_copy {
                "texture copy"
            } else {
                "display transfer"
            }
        ),
        EngineEvent::CommandList { addr, size } => {
            format!("command list 0x{addr:08X} ({size} bytes)")
        }
    }
}

/// The lines describing one fragment (indented by the caller).
pub fn fragment_lines(f: &FragmentRecord) -> Vec<String> {
    let mut l = Vec::new();
    let fate = f.fate.map_or("unknown", |x| x.label());
    if f.fate == Some(FragmentFate::ClippedAway) {
        // No piece reached the rasteriser here: the index is the assembled triangle's.
        l.push(format!(
            "assembled triangle {} at window ({},{}): {fate} (its projection covers the pixel)",
            f.triangle, f.x, f.y
        ));
    } else {
        l.push(format!(
            "triangle {} at window ({},{}): {fate}",
            f.triangle, f.x, f.y
        ));
    }
    let i = &f.inputs;
    l.push(format!(
        "  inputs: depth {:.6} w {:.6} primary {} tc0 ({:.4},{:.4}) tc0.w {:.4} tc1 ({:.4},{:.4}) tc2 ({:.4},{:.4})",
        i.depth,
        i.w,
        rgba(i.primary),
        i.texcoord[0][0],
        i.texcoord[0][1],
        i.texcoord0_w,
        i.texcoord[1][0],
        i.texcoord[1][1],
        i.texcoord[2][0],
        i.texcoord[2][1]
    ));
    for t in &f.texels {
        if t.unit == 3 {
            l.push(format!("  texture 3 (procedural): {}", rgba(t.color)));
        } else {
            l.push(format!(
                "  texture {}: {} from level {} at 0x{:08X} (lod {:.3}, texel ({:.2},{:.2}); base 0x{:08X}, format {})",
                t.unit,
                rgba(t.color),
                t.level,
                t.level_addr,
                t.lod,
                t.texel[0],
                t.texel[1],
                t.addr,
                t.format
            ));
        }
    }
    if let Some([p, s]) = f.lighting {
        l.push(format!(
            "  fragment lighting: primary {} secondary {}",
            rgba(p),
            rgba(s)
        ));
    }
    let mut passed = Vec::new();
    for st in &f.tev {
        if !st.active {
            passed.push(st.stage.to_string());
            continue;
        }
        l.push(format!(
            "  tev {}: rgb in {} {} {} alpha in {} {} {} -> {} (buffer {})",
            st.stage,
            rgb(st.rgb_in[0]),
            rgb(st.rgb_in[1]),
            rgb(st.rgb_in[2]),
            st.alpha_in[0],
            st.alpha_in[1],
            st.alpha_in[2],
            rgba(st.output),
            rgba(st.buffer)
        ));
    }
    if !f.tev.is_empty() {
        if !passed.is_empty() {
            l.push(format!("  tev {}: pass-through", passed.join(",")));
        }
        l.push(format!("  combiner output {}", rgba(f.combiner_output)));
    }
    if let Some(fog) = f.fog {
        l.push(format!(
            "  fog: factor {} colour {} {} -> {}",
            fog.factor
                .map_or("unknown".to_string(), |x| format!("{x:.4}")),
            rgb(fog.color),
            rgba(fog.before),
            rgba(fog.after)
        ));
    }
    if let Some(ds) = f.depth_stencil {
        l.push(format!(
            "  depth/stencil: fragment depth 0x{:06X}, stored 0x{:06X} -> 0x{:06X}, stencil {} -> {}",
            ds.fragment_depth, ds.depth_before, ds.depth_after, ds.stencil_before, ds.stencil_after
        ));
    }
    if let Some(b) = f.blend {
        let mask: String = ["R", "G", "B", "A"]
            .iter()
            .zip(b.mask)
            .map(|(c, on)| if on { *c } else { "-" })
            .collect();
        if b.blend {
            l.push(format!(
                "  blend: src {} x {} + dst {} x {} -> {}; mask {mask}; written {}",
                rgba(b.src),
                rgba(b.src_factor),
                rgba(b.dst),
                rgba(b.dst_factor),
                rgba(b.result),
                rgba(b.written)
            ));
        } else {
            l.push(format!(
                "  logic op: src {} dst {} -> {}; mask {mask}; written {}",
                rgba(b.src),
                rgba(b.dst),
                rgba(b.result),
                rgba(b.written)
            ));
        }
    }
    l
}
