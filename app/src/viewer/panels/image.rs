//! Image view: the top (either eye) and bottom screens, the colour/depth/stencil buffers, the texture units
//! and any physical address as an image in any format, as of the selected command; zoom and
//! pan, a pixel picker with raw and decoded values, channel isolation and PNG export.
//!
//! On the render target (colour, depth and stencil views), clicking a pixel also identifies the
//! primitive that last wrote it (draw and triangle, from the primitive-ID buffer the worker
//! records on request) and selects it. On the screens, the click is followed through the LCD
//! rotation and the display transfer that wrote the framebuffer back to the colour-buffer pixel
//! (`gpu_core::history::identify_screen_pixel`, the mapping `picaview pixel --target top`
//! prints; the transfer may have run up to `MAX_FRAMES_BACK` frames earlier), whose primitive
//! is identified the same way; the panel shows the mapping and offers
//! to select it (not done on the click: the screen would then show the state at that draw). Overlays
//! show the selected draw's triangles as a wireframe (drawn, partially clipped, culled and
//! clipped-away triangles distinctly), the overdraw heat map, depth as grey over an adjustable
//! range, and the scissor box and viewport.
//!
//! Stage: presentation. Inputs: [`ImageData`] decoded by the worker (see
//! [`crate::viewer::images`]), [`crate::viewer::protocol::PixelInfo`] for picked pixels,
//! [`DebugView`] (primitive IDs, overdraw, depth values, scissor, viewport) and the selected
//! draw's detail (clipped triangles and their fates). Output: textures, PNG files, pick
//! requests, primitive selection. Registers read: none (the worker reads them).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use eframe::egui::{self, Color32, RichText};

use gpu_core::debug::{DrawDetail, PrimitiveId, TriangleFate};

use crate::viewer::command::AppCommand;
use crate::viewer::prefs::{ImagePrefs, Prefs, Tab};
use crate::viewer::protocol::{CustomFormat, CustomImage, DebugView, ImageData, ImageSource};
use crate::viewer::session::{ImageEntry, TraceSession, color_image};
use crate::viewer::widgets::{self, paint_image};

/// Image view UI state.
#[derive(Default)]
pub struct ImageView {
    /// Zoom factor; `None` fits the image into the view.
    pub zoom: Option<f32>,
    /// Pan offset in screen points.
    pub pan: egui::Vec2,
    /// Text of the custom-address field.
    pub addr_text: String,
    /// Processed texture for channel isolation, keyed by what it was made from.
    processed: Option<(ProcessedKey, egui::TextureHandle)>,
    /// Last export message.
    pub status: Option<String>,
    /// A typed export path that exists: Save waits for "Overwrite".
    pub confirm: Option<PathBuf>,
    /// The selected triangle of the current draw (set by the app before each frame).
    pub selected_triangle: Option<u32>,
    /// Overlay toggles.
    pub overlays: Overlays,
    /// A click on the render target waiting for the primitive-ID buffer: (command, x, row).
    pending_pick: Option<(u64, u32, u32)>,
    /// The last identified pixel: (command, x, row, the primitive that last wrote it).
    pub picked_primitive: Option<(u64, u32, u32, Option<PrimitiveId>)>,
    /// The last click on a screen (identified by the worker through the display transfer).
    pub screen_pick: Option<crate::viewer::session::PixelKey>,
    /// Texture of the overdraw heat map or the re-ranged depth, keyed by what it shows.
    overlay_tex: Option<(OverlayKey, egui::TextureHandle)>,
    /// The canvas and the image's rectangle in it, as last drawn.
    last_rect: Option<(egui::Rect, egui::Rect)>,
}

/// Which overlays the image view draws over a render-target image.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Overlays {
    /// The selected draw's triangles.
    pub wireframe: bool,
    /// Fragments per pixel as a heat map instead of the image.
    pub overdraw: bool,
    /// Depth view: grey over `depth_range` instead of the auto range.
    pub depth_range: bool,
    /// Depth range shown from black to white, as fractions of the format's maximum.
    pub range: (f32, f32),
    /// The scissor box.
    pub scissor: bool,
    /// The viewport.
    pub viewport: bool,
}

impl Default for Overlays {
    fn default() -> Self {
        Self {
            wireframe: false,
            overdraw: false,
            depth_range: false,
            range: (0.0, 1.0),
            scissor: false,
            viewport: false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum OverlayKey {
    Overdraw(u64),
    Depth(u64, u32, u32),
}

/// True for the views whose pixels are render-target pixels (picking and overlays apply).
pub fn is_render_target(source: ImageSource) -> bool {
    matches!(
        source,
        ImageSource::Color | ImageSource::Depth | ImageSource::Stencil
    )
}

/// True for the LCD screens (picking follows the display transfer to the colour buffer).
pub fn is_screen(source: ImageSource) -> bool {
    source.is_screen()
}

/// Heat-map colour of `n` fragments out of `max`: black for none, then blue → green → yellow
/// → red.
pub fn heat_color(n: u32, max: u32) -> [u8; 4] {
    if n == 0 {
        return [0, 0, 0, 255];
    }
    let t = (n as f32 / max.max(1) as f32).clamp(0.0, 1.0);
    let stops: [[f32; 3]; 4] = [
        [30.0, 60.0, 255.0],
        [40.0, 220.0, 60.0],
        [250.0, 230.0, 40.0],
        [255.0, 30.0, 30.0],
    ];
    let f = t * 3.0;
    let i = (f as usize).min(2);
    let k = f - i as f32;
    let c = |ch: usize| (stops[i][ch] + (stops[i + 1][ch] - stops[i][ch]) * k) as u8;
    [c(0), c(1), c(2), 255]
}

/// The overdraw heat map of `dv` (image rows top first).
pub fn overdraw_pixels(dv: &DebugView) -> Vec<[u8; 4]> {
    let (w, h) = (dv.width, dv.height);
    let mut out = vec![[0, 0, 0, 255]; (w * h) as usize];
    if let Some(t) = &dv.target {
        let max = t.max_overdraw();
        for row in 0..h {
            for x in 0..w {
                out[(row * w + x) as usize] = heat_color(t.overdraw_at_image(x, row), max);
            }
        }
    }
    out
}

/// Depth values as grey, black at `lo` and white at `hi` (raw depth units); values outside
/// the range clamp.
pub fn depth_pixels(depth: &[u32], lo: u32, hi: u32) -> Vec<[u8; 4]> {
    let span = u64::from(hi.saturating_sub(lo)).max(1);
    depth
        .iter()
        .map(|&d| {
            let g = (u64::from(d.clamp(lo, hi.max(lo)) - lo) * 255 / span).min(255) as u8;
            [g, g, g, 255]
        })
        .collect()
}

impl std::fmt::Debug for ImageView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ImageView")
            .field("zoom", &self.zoom)
            .finish_non_exhaustive()
    }
}

#[derive(Clone, Debug, PartialEq)]
struct ProcessedKey {
    at: u64,
    source: ImageSource,
    channels: [bool; 4],
    checker: bool,
}

/// Applies channel isolation: disabled channels become 0; alpha is shown only when `checker`
/// (blended over a checkerboard) or when it is the only channel (then as grey).
pub fn isolate(img: &ImageData, channels: [bool; 4], checker: bool) -> Vec<[u8; 4]> {
    let only_alpha = channels == [false, false, false, true];
    img.pixels
        .iter()
        .map(|p| {
            if only_alpha {
                return [p[3], p[3], p[3], 255];
            }
            let mut q = [0u8; 4];
            for ((dst, src), on) in q.iter_mut().zip(p).zip(channels).take(3) {
                if on {
                    *dst = *src;
                }
            }
            q[3] = if checker && channels[3] { p[3] } else { 255 };
            q
        })
        .collect()
}

/// Blends pixels with alpha over a checkerboard (in place).
fn blend_checker(pixels: &mut [[u8; 4]], width: u32) {
    let w = width.max(1) as usize;
    for (i, p) in pixels.iter_mut().enumerate() {
        let (x, y) = (i % w, i / w);
        let bg: u16 = if ((x / 8) + (y / 8)) % 2 == 0 {
            200
        } else {
            120
        };
        let a = u16::from(p[3]);
        for c in p.iter_mut().take(3) {
            // ok: a ≤ 255, so the blend stays ≤ 255.
            *c = ((u16::from(*c) * a + bg * (255 - a)) / 255) as u8;
        }
        p[3] = 255;
    }
}

/// Writes `img` as a PNG (RGBA8).
pub fn export_png(img: &ImageData, path: &Path) -> Result<(), String> {
    let bytes: Vec<u8> = img.pixels.iter().flatten().copied().collect();
    let out = image::RgbaImage::from_raw(img.width, img.height, bytes)
        .ok_or("image size does not match its pixel count")?;
    out.save(path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

fn source_choices() -> Vec<ImageSource> {
    vec![
        ImageSource::TopScreen,
        ImageSource::BottomScreen,
        ImageSource::Color,
        ImageSource::Depth,
        ImageSource::Stencil,
        ImageSource::Texture {
            unit: 0,
            face: 0,
            level: 0,
        },
        ImageSource::Texture {
            unit: 1,
            face: 0,
            level: 0,
        },
        ImageSource::Texture {
            unit: 2,
            face: 0,
            level: 0,
        },
    ]
}

fn short_label(s: &ImageSource) -> String {
    match s {
        ImageSource::Texture { unit, .. } => format!("Texture {unit}"),
        ImageSource::Custom(_) => "Memory".into(),
        other => other.label(),
    }
}

impl ImageView {
    /// Draws the panel.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        prefs: &mut Prefs,
        command: u64,
        queue: &mut Vec<AppCommand>,
    ) {
        // Whether the top screen shows each eye its own framebuffer (3D on) at this command.
        let stereo = if matches!(
            prefs.image.source,
            ImageSource::TopScreen | ImageSource::TopScreenRight
        ) {
            s.want_state(command)
                .map(|st| crate::viewer::images::top_screen_stereo(&st.ext_regs[..]))
        } else {
            None
        };
        self.source_bar(ui, &mut prefs.image, stereo);
        let ip = &mut prefs.image;
        let source = ip.source;
        ui.horizontal_wrapped(|ui| {
            ui.label("Channels:");
            for (i, name) in ["R", "G", "B", "A"].iter().enumerate() {
                ui.toggle_value(&mut ip.channels[i], *name)
                    .on_hover_text("Channel isolation: show or hide this channel (A alone shows alpha as grey)");
            }
            ui.checkbox(&mut ip.checker, "alpha over checkerboard");
            ui.checkbox(&mut ip.rotate, "rotate 90°")
                .on_hover_text("3DS render targets are 240 wide and stored sideways; rotate to see them as on the screen");
            ui.separator();
            if ui.button("Fit").clicked() {
                self.zoom = None;
                self.pan = egui::Vec2::ZERO;
            }
            for z in [1.0f32, 2.0, 4.0, 8.0] {
                if ui.button(format!("{z}×")).clicked() {
                    self.zoom = Some(z);
                    self.pan = egui::Vec2::ZERO;
                }
            }
        });
        // The image: the exact one, or the newest of this source while it loads.
        let entry = s.want_image(command, source);
        let mut at = command;
        let mut loading = false;
        match &entry {
            ImageEntry::Pending => {
                loading = true;
                if let Some(prev) = s.any_image(source) {
                    at = prev;
                }
            }
            ImageEntry::Failed(e) => {
                ui.colored_label(
                    widgets::WARN,
                    format!("Cannot show {}: {e}", source.label()),
                );
                return;
            }
            ImageEntry::Ready(..) => {}
        }
        let Some((img, tex)) = s.image_texture(ui.ctx(), at, source) else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Decoding {}…", source.label()));
            });
            return;
        };
        // The range the image occupies, for the resource timeline.
        let range = s
            .want_state(command)
            .and_then(|st| crate::viewer::panels::resources::image_range(&st, source));
        ui.horizontal_wrapped(|ui| {
            ui.label(RichText::new(&img.description).monospace());
            let who = ui.add_enabled(range.is_some(), egui::Button::new("Who touched this?"));
            let who = match range {
                Some(r) => who.on_hover_text(format!(
                    "Every load, fill, transfer and draw that wrote or read PA 0x{:08X}+0x{:X}, in trace order",
                    r.start, r.len
                )),
                None => who.on_disabled_hover_text(
                    "Only PICA buffers, textures and memory views have a known address range",
                ),
            };
            if who.clicked()
                && let Some(r) = range
            {
                queue.push(AppCommand::WhoTouched {
                    start: r.start,
                    len: r.len,
                });
            }
            if loading {
                ui.spinner();
                ui.weak(format!("(showing command #{at}, updating)"));
            }
        });
        self.export_bar(ui, &img, ip, &s.info.path, at);
        let rt = is_render_target(source);
        if rt {
            self.overlay_bar(ui, s, source, at);
        }
        let needs_debug = rt
            && (self.overlays.overdraw
                || (self.overlays.depth_range && source == ImageSource::Depth)
                || self.overlays.scissor
                || self.overlays.viewport
                || self.pending_pick.is_some_and(|(c, _, _)| c == at));
        let debug = if needs_debug {
            s.want_debug(at).and_then(|r| r.as_ref().ok()).cloned()
        } else {
            None
        };
        if let (Some((c, x, y)), Some(dv)) = (self.pending_pick, debug.as_ref())
            && c == dv.at
        {
            self.pending_pick = None;
            let id = dv.target.as_ref().and_then(|t| t.id_at_image(x, y));
            self.picked_primitive = Some((c, x, y, id));
            if let Some(p) = id {
                queue.push(AppCommand::SelectPrimitive {
                    draw: p.draw,
                    triangle: p.triangle,
                });
            }
        }
        if let Some(key) = self.screen_pick.filter(|k| k.1 == source) {
            // Not selected automatically: selecting the draw would show the screen as of that
            // draw (usually before the frame was presented); the panel's buttons select it.
            s.request_screen_pick(key);
        }
        let tex_id = match self.overlay_texture(ui.ctx(), source, &img, debug.as_deref()) {
            Some(t) => t,
            None => self.processed_texture(ui.ctx(), at, source, &img, &tex, ip),
        };
        // Pixel info on the right.
        egui::Panel::right("pixel_info")
            .resizable(true)
            .default_size(230.0)
            .show(ui, |ui| {
                ui.strong("Picked pixel");
                match &s.pixel {
                    Some((pat, psrc, _, _, info)) if *psrc == source => {
                        if *pat != command {
                            ui.weak(format!("(picked at command #{pat})"));
                        }
                        egui::Grid::new("pixel_rows").num_columns(2).show(ui, |ui| {
                            for (k, v) in &info.rows {
                                ui.label(k);
                                ui.monospace(v);
                                ui.end_row();
                            }
                        });
                    }
                    _ => {
                        ui.weak("Click the image to pick a pixel: address, raw bytes and decoded value.");
                    }
                }
                if rt {
                    self.primitive_ui(ui, s, source, queue);
                } else if is_screen(source) {
                    self.screen_pick_ui(ui, s, source, queue);
                }
            });
        let wire = if rt && self.overlays.wireframe {
            s.draw_at_or_before(command).and_then(|d| {
                let r = s.want_detail(d)?.as_ref().ok()?;
                Some(r.clone())
            })
        } else {
            None
        };
        self.canvas(ui, s, command, source, &img, tex_id, ip.rotate);
        if let Some(rect) = self.last_rect {
            let painter = ui.painter_at(rect.0);
            let map = ImageMap {
                rect: rect.1,
                width: img.width,
                height: img.height,
                rotate: ip.rotate,
            };
            if let Some(insp) = &wire {
                paint_wireframe(&painter, &map, &insp.detail, self.selected_triangle);
            }
            if let Some(dv) = &debug {
                if self.overlays.scissor
                    && let Some((include, [x1, y1, x2, y2])) = dv.scissor
                {
                    let color = if include {
                        Color32::from_rgb(80, 200, 255)
                    } else {
                        Color32::from_rgb(255, 120, 200)
                    };
                    // Inclusive pixel box: the outline goes round the pixels.
                    map.outline(
                        &painter,
                        [x1 as f32, y1 as f32, (x2 + 1) as f32, (y2 + 1) as f32],
                        color,
                    );
                }
                if self.overlays.viewport {
                    let [x, y, w, h] = dv.viewport;
                    map.outline(
                        &painter,
                        [x, y, x + w, y + h],
                        Color32::from_rgb(255, 200, 0),
                    );
                }
            }
        }
    }

    /// Which image replaces the decoded one now: `Some("overdraw")` for the heat map,
    /// `Some("depth range")` for the re-ranged depth, `None` for the image itself.
    pub fn shown_overlay(&self) -> Option<&'static str> {
        match &self.overlay_tex {
            Some((OverlayKey::Overdraw(_), _)) if self.overlays.overdraw => Some("overdraw"),
            Some((OverlayKey::Depth(..), _)) if self.overlays.depth_range => Some("depth range"),
            _ => None,
        }
    }

    /// The overlay toggles (render-target views only).
    fn overlay_bar(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        source: ImageSource,
        at: u64,
    ) {
        let o = &mut self.overlays;
        ui.horizontal_wrapped(|ui| {
            ui.label("Overlays:");
            ui.toggle_value(&mut o.wireframe, "wireframe").on_hover_text(
                "The selected draw's triangles: drawn (green), partially clipped (orange), culled (red, dashed), clipped away (grey, dashed); the selected triangle in yellow",
            );
            ui.toggle_value(&mut o.overdraw, "overdraw")
                .on_hover_text("Fragments generated per pixel since the start of the frame, as a heat map (black 0, blue few … red most)");
            if source == ImageSource::Depth {
                ui.toggle_value(&mut o.depth_range, "depth range")
                    .on_hover_text("Depth as grey from the lower to the upper bound (fractions of the format's maximum)");
            }
            ui.toggle_value(&mut o.scissor, "scissor")
                .on_hover_text("The scissor box (blue: inside kept; pink: inside discarded)");
            ui.toggle_value(&mut o.viewport, "viewport")
                .on_hover_text("The viewport rectangle");
        });
        if source == ImageSource::Depth && o.depth_range {
            ui.horizontal_wrapped(|ui| {
                let l = ui.label("depth from");
                ui.add(egui::Slider::new(&mut o.range.0, 0.0..=1.0).max_decimals(6))
                    .labelled_by(l.id);
                let l = ui.label("to");
                ui.add(egui::Slider::new(&mut o.range.1, 0.0..=1.0).max_decimals(6))
                    .labelled_by(l.id);
                if ui
                    .button("auto")
                    .on_hover_text("The range of depth values present")
                    .clicked()
                    && let Some(Ok(dv)) = s.want_debug(at)
                    && let Some(d) = &dv.depth
                {
                    let max = dv.max_depth.max(1) as f32;
                    let lo = d.iter().copied().min().unwrap_or(0) as f32 / max;
                    let hi = d.iter().copied().max().unwrap_or(0) as f32 / max;
                    o.range = (lo, hi);
                }
                if o.range.1 < o.range.0 {
                    o.range.1 = o.range.0;
                }
            });
        }
    }

    /// The heat map or the re-ranged depth, when that overlay is on and the data is here.
    fn overlay_texture(
        &mut self,
        ctx: &egui::Context,
        source: ImageSource,
        img: &ImageData,
        dv: Option<&DebugView>,
    ) -> Option<egui::TextureId> {
        let dv = dv?;
        if (dv.width, dv.height) != (img.width, img.height) {
            return None;
        }
        let key = if self.overlays.overdraw {
            OverlayKey::Overdraw(dv.at)
        } else if self.overlays.depth_range && source == ImageSource::Depth && dv.depth.is_some() {
            let max = dv.max_depth as f32;
            OverlayKey::Depth(
                dv.at,
                (self.overlays.range.0 * max) as u32,
                (self.overlays.range.1 * max) as u32,
            )
        } else {
            return None;
        };
        if let Some((k, t)) = &self.overlay_tex
            && *k == key
        {
            return Some(t.id());
        }
        let px = match &key {
            OverlayKey::Overdraw(_) => overdraw_pixels(dv),
            OverlayKey::Depth(_, lo, hi) => {
                depth_pixels(dv.depth.as_deref().unwrap_or(&[]), *lo, *hi)
            }
        };
        if px.len() != (img.width * img.height) as usize {
            return None;
        }
        let t = ctx.load_texture(
            "image-overlay",
            color_image(img.width, img.height, &px),
            egui::TextureOptions::NEAREST,
        );
        let id = t.id();
        self.overlay_tex = Some((key, t));
        Some(id)
    }

    /// The identified primitive of the last click: draw, triangle, and what to open next.
    fn primitive_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        source: ImageSource,
        queue: &mut Vec<AppCommand>,
    ) {
        ui.separator();
        ui.strong("Primitive");
        if self.pending_pick.is_some() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Identifying (replaying the frame with primitive IDs)…");
            });
            return;
        }
        let Some((at, x, y, id)) = self.picked_primitive else {
            ui.weak("Click a pixel to identify the draw and triangle that wrote it.");
            return;
        };
        let Some(p) = id else {
            ui.label(format!(
                "({x}, {y}): no draw of this frame wrote it (cleared or untouched)"
            ));
            // The history still says which triangles covered it and why they did not write
            // (culled, clipped, a failed test).
            history_button(ui, (at, source, x, y), queue);
            return;
        };
        ui.label(format!(
            "({x}, {y}) was last written by draw #{}, triangle {}",
            p.draw, p.triangle
        ));
        primitive_actions(ui, s, p, (at, source, x, y), false, queue);
    }

    /// The click-to-identify section of a screen: how the pixel maps to the colour buffer
    /// (LCD rotation, display transfer) and the primitive that last wrote that buffer pixel.
    fn screen_pick_ui(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        source: ImageSource,
        queue: &mut Vec<AppCommand>,
    ) {
        ui.separator();
        ui.strong("Primitive");
        let Some(key) = self.screen_pick.filter(|k| k.1 == source) else {
            ui.weak("Click a pixel to follow it through the display transfer to the colour buffer and identify the draw and triangle that wrote it.");
            return;
        };
        let (_, _, x, y) = key;
        let Some(result) = s.screen_pick_for(key).cloned() else {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Identifying (display transfer, then the frame with primitive IDs)…");
            });
            return;
        };
        let pick = match result {
            Ok(p) => p,
            Err(e) => {
                ui.colored_label(widgets::WARN, format!("({x}, {y}): {e}"));
                return;
            }
        };
        ui.add(egui::Label::new(RichText::new(&pick.mapping.description).monospace()).wrap());
        let (bx, row) = (pick.mapping.x, pick.mapping.row);
        let Some(p) = pick.primitive else {
            ui.label(if pick.recorded {
                format!(
                    "buffer ({bx}, {row}): no draw of frame {} wrote it before the transfer (cleared or untouched)",
                    pick.frame
                )
            } else {
                format!(
                    "buffer ({bx}, {row}): no draw of frame {} rendered to this buffer before the transfer",
                    pick.frame
                )
            });
            history_button(ui, key, queue);
            return;
        };
        ui.label(format!(
            "buffer ({bx}, {row}) was last written by draw #{}, triangle {}",
            p.draw, p.triangle
        ));
        primitive_actions(ui, s, p, key, true, queue);
    }

    /// The source choices; for the top screen, the eye (`stereo`: whether the right eye shows
    /// its own framebuffer at the selected command, `None` while unknown).
    fn source_bar(&mut self, ui: &mut egui::Ui, ip: &mut ImagePrefs, stereo: Option<bool>) {
        ui.horizontal_wrapped(|ui| {
            for choice in source_choices() {
                let selected = match (choice, ip.source) {
                    (
                        ImageSource::Texture { unit: a, .. },
                        ImageSource::Texture { unit: b, .. },
                    ) => a == b,
                    (ImageSource::TopScreen, ImageSource::TopScreenRight) => true,
                    (a, b) => a == b,
                };
                if ui
                    .selectable_label(selected, short_label(&choice))
                    .clicked()
                    && !selected
                {
                    ip.source = choice;
                }
            }
            let is_custom = matches!(ip.source, ImageSource::Custom(_));
            if ui.selectable_label(is_custom, "Memory…").clicked() && !is_custom {
                ip.source = ImageSource::Custom(ip.custom);
            }
        });
        if matches!(
            ip.source,
            ImageSource::TopScreen | ImageSource::TopScreenRight
        ) {
            ui.horizontal(|ui| {
                ui.label("Eye:");
                let left = ip.source == ImageSource::TopScreen;
                if ui
                    .add(egui::Button::selectable(left, "Left"))
                    .on_hover_text("Framebuffer A")
                    .clicked()
                {
                    ip.source = ImageSource::TopScreen;
                }
                // Offered when the right eye shows its own image (or is already shown).
                let differs = stereo.unwrap_or(false);
                let r = ui.add_enabled(differs || !left, egui::Button::selectable(!left, "Right"));
                let r = r
                    .on_hover_text("Framebuffer B (3D on)")
                    .on_disabled_hover_text(
                        "3D is off at this command: both eyes show framebuffer A",
                    );
                if r.clicked() {
                    ip.source = ImageSource::TopScreenRight;
                }
                if !left && stereo == Some(false) {
                    ui.weak("(3D off: the same image as the left eye)");
                }
            });
        }
        if let ImageSource::Texture { unit, face, level } = &mut ip.source {
            ui.horizontal(|ui| {
                let l = ui.label(format!("Texture unit {unit}: face"));
                ui.add(egui::DragValue::new(face).range(0..=5))
                    .labelled_by(l.id)
                    .on_hover_text("Cube face 0-5 (+X, -X, +Y, -Y, +Z, -Z); 0 for 2D textures");
                let l = ui.label("mip level");
                ui.add(egui::DragValue::new(level).range(0..=15))
                    .labelled_by(l.id);
            });
        }
        if matches!(ip.source, ImageSource::Custom(_)) {
            if self.addr_text.is_empty() {
                self.addr_text = format!("0x{:08X}", ip.custom.addr);
            }
            ui.horizontal_wrapped(|ui| {
                let l = ui.label("Address:");
                ui.add(egui::TextEdit::singleline(&mut self.addr_text).desired_width(100.0))
                    .labelled_by(l.id);
                let l = ui.label("width");
                ui.add(egui::DragValue::new(&mut ip.custom.width).range(1..=2048))
                    .labelled_by(l.id);
                let l = ui.label("height");
                ui.add(egui::DragValue::new(&mut ip.custom.height).range(1..=2048))
                    .labelled_by(l.id);
                egui::ComboBox::from_label("format")
                    .selected_text(ip.custom.format.name())
                    .show_ui(ui, |ui| {
                        for f in CustomFormat::all() {
                            ui.selectable_value(&mut ip.custom.format, f, f.name());
                        }
                    });
                let parsed = parse_addr(&self.addr_text);
                if parsed.is_none() {
                    ui.colored_label(widgets::WARN, "bad address");
                }
                if ui.button("Show").clicked()
                    && let Some(a) = parsed
                {
                    ip.custom.addr = a;
                }
            });
            ip.source = ImageSource::Custom(ip.custom);
        }
    }

    fn export_bar(
        &mut self,
        ui: &mut egui::Ui,
        img: &Arc<ImageData>,
        ip: &mut ImagePrefs,
        trace: &Path,
        at: u64,
    ) {
        ui.horizontal_wrapped(|ui| {
            let l = ui.label("Export PNG:");
            ui.add(
                egui::TextEdit::singleline(&mut ip.export_path)
                    .hint_text("empty: next to the trace, unique name")
                    .desired_width(240.0),
            )
            .labelled_by(l.id)
            .on_hover_text("Where Save writes the PNG. Empty: a new file next to the trace (never overwriting one)");
            if ui.button("Save").clicked() {
                let typed = ip.export_path.trim();
                if typed.is_empty() {
                    let p = unique_export_path(trace, &ip.source, at);
                    self.status = Some(save_status(img, &p));
                } else {
                    let p = PathBuf::from(typed);
                    if p.exists() {
                        self.confirm = Some(p);
                    } else {
                        self.status = Some(save_status(img, &p));
                    }
                }
            }
            if ui.button("Save as…").clicked() {
                let suggested = unique_export_path(trace, &ip.source, at);
                let mut dialog = rfd::FileDialog::new().add_filter("PNG image", &["png"]);
                if let Some(dir) = suggested.parent() {
                    dialog = dialog.set_directory(dir);
                }
                if let Some(name) = suggested.file_name() {
                    dialog = dialog.set_file_name(name.to_string_lossy());
                }
                match dialog.save_file() {
                    Some(p) => {
                        // The dialog asked about overwriting already.
                        ip.export_path = p.display().to_string();
                        self.status = Some(save_status(img, &p));
                    }
                    None => {
                        self.status = Some(
                            "no file chosen (without a desktop portal or zenity the dialog cannot open; type a path, or leave the field empty, and press Save)".into(),
                        );
                    }
                }
            }
            if let Some(p) = self.confirm.clone() {
                ui.colored_label(widgets::WARN, format!("{} exists.", p.display()));
                if ui.button("Overwrite").clicked() {
                    self.status = Some(save_status(img, &p));
                    self.confirm = None;
                }
                if ui.button("Cancel").clicked() {
                    self.confirm = None;
                    self.status = Some("not saved".into());
                }
            } else if let Some(st) = &self.status {
                ui.weak(st);
            }
        });
    }

    fn processed_texture(
        &mut self,
        ctx: &egui::Context,
        at: u64,
        source: ImageSource,
        img: &ImageData,
        tex: &egui::TextureHandle,
        ip: &ImagePrefs,
    ) -> egui::TextureId {
        if ip.channels == [true; 4] && !ip.checker {
            // Plain view: alpha ignored (colour buffers often hold alpha 0).
            let key = ProcessedKey {
                at,
                source,
                channels: [true, true, true, false],
                checker: false,
            };
            return self.make_processed(ctx, key, img, tex);
        }
        let key = ProcessedKey {
            at,
            source,
            channels: ip.channels,
            checker: ip.checker,
        };
        self.make_processed(ctx, key, img, tex)
    }

    fn make_processed(
        &mut self,
        ctx: &egui::Context,
        key: ProcessedKey,
        img: &ImageData,
        _tex: &egui::TextureHandle,
    ) -> egui::TextureId {
        if let Some((k, t)) = &self.processed
            && *k == key
        {
            return t.id();
        }
        let mut px = isolate(img, key.channels, key.checker);
        if key.checker {
            blend_checker(&mut px, img.width);
        }
        let t = ctx.load_texture(
            "image-view",
            color_image(img.width, img.height, &px),
            egui::TextureOptions::NEAREST,
        );
        let id = t.id();
        self.processed = Some((key, t));
        id
    }

    #[allow(clippy::too_many_arguments)]
    fn canvas(
        &mut self,
        ui: &mut egui::Ui,
        s: &mut TraceSession,
        command: u64,
        source: ImageSource,
        img: &ImageData,
        tex: egui::TextureId,
        rotate: bool,
    ) {
        let avail = ui.available_size().max(egui::vec2(64.0, 64.0));
        let (rect, resp) = ui.allocate_exact_size(avail, egui::Sense::click_and_drag());
        widgets::name_button(&resp, "Image canvas (click to pick a pixel)");
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, Color32::from_gray(20));
        let shown = widgets::shown_size(img.width, img.height, rotate);
        let fit = (rect.width() / shown.x)
            .min(rect.height() / shown.y)
            .max(0.01);
        let mut zoom = self.zoom.unwrap_or(fit);
        if resp.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                let factor = (scroll / 200.0).exp();
                zoom = (zoom * factor).clamp(0.05, 64.0);
                self.zoom = Some(zoom);
            }
        }
        if resp.dragged() {
            self.pan += resp.drag_delta();
        }
        let size = shown * zoom;
        let img_rect = egui::Rect::from_center_size(rect.center() + self.pan, size);
        self.last_rect = Some((rect, img_rect));
        paint_image(&painter, tex, img_rect, rotate, Color32::WHITE);
        painter.rect_stroke(
            img_rect,
            0.0,
            egui::Stroke::new(1.0, Color32::from_gray(90)),
            egui::StrokeKind::Outside,
        );
        // Pointer -> image pixel.
        let to_pixel = |pos: egui::Pos2| -> Option<(u32, u32)> {
            let u = (pos.x - img_rect.left()) / img_rect.width();
            let v = (pos.y - img_rect.top()) / img_rect.height();
            if !(0.0..1.0).contains(&u) || !(0.0..1.0).contains(&v) {
                return None;
            }
            // Undo the counter-clockwise rotation: screen (u, v) shows image (1 − v, u).
            let (iu, iv) = if rotate { (1.0 - v, u) } else { (u, v) };
            let x = ((iu * img.width as f32) as u32).min(img.width.saturating_sub(1));
            let y = ((iv * img.height as f32) as u32).min(img.height.saturating_sub(1));
            Some((x, y))
        };
        if let Some(pos) = resp.hover_pos()
            && let Some((x, y)) = to_pixel(pos)
        {
            let p = img
                .pixels
                .get((y * img.width + x) as usize)
                .copied()
                .unwrap_or_default();
            let text = format!(
                "({x}, {y})  R {} G {} B {} A {}  zoom {:.2}×",
                p[0], p[1], p[2], p[3], zoom
            );
            painter.text(
                rect.left_bottom() + egui::vec2(6.0, -6.0),
                egui::Align2::LEFT_BOTTOM,
                text,
                egui::FontId::monospace(13.0),
                Color32::WHITE,
            );
        }
        if resp.clicked()
            && let Some(pos) = resp.interact_pointer_pos()
            && let Some((x, y)) = to_pixel(pos)
        {
            s.pick(command, source, x, y);
            if is_render_target(source) {
                self.pending_pick = Some((command, x, y));
                self.picked_primitive = None;
            } else if is_screen(source) {
                self.screen_pick = Some((command, source, x, y));
            }
        }
        if let Some((at, psrc, x, y, _)) = &s.pixel
            && *psrc == source
            && *at == command
        {
            // Mark the picked pixel.
            let (u, v) = (
                (*x as f32 + 0.5) / img.width as f32,
                (*y as f32 + 0.5) / img.height as f32,
            );
            let (su, sv) = if rotate { (v, 1.0 - u) } else { (u, v) };
            let c = egui::pos2(
                img_rect.left() + su * img_rect.width(),
                img_rect.top() + sv * img_rect.height(),
            );
            painter.circle_stroke(c, 5.0, egui::Stroke::new(1.5, Color32::YELLOW));
        }
    }
}

/// What to open next for an identified primitive: its fate, the shader traces of its three
/// vertices, the Vertices view and the history of the picked pixel `history`. With `select`
/// (screen picks, whose primitive is not selected on the click) a "Select draw" button is
/// offered and the vertex and Vertices buttons select the primitive first.
fn primitive_actions(
    ui: &mut egui::Ui,
    s: &mut TraceSession,
    p: PrimitiveId,
    history: crate::viewer::session::PixelKey,
    select: bool,
    queue: &mut Vec<AppCommand>,
) {
    let (at, source, x, y) = history;
    let select_cmd = AppCommand::SelectPrimitive {
        draw: p.draw,
        triangle: p.triangle,
    };
    if select
        && ui
            .button(format!(
                "Select draw #{}, triangle {} ▶",
                p.draw, p.triangle
            ))
            .on_hover_text("Select the draw and triangle (the views show the state at that draw)")
            .clicked()
    {
        queue.push(select_cmd.clone());
    }
    let detail = s.want_detail(p.draw).and_then(|r| r.as_ref().ok()).cloned();
    if let Some(insp) = &detail {
        let i = p.triangle as usize;
        if let Some(f) = insp.detail.fates.get(i) {
            ui.label(format!("fate: {}", f.name()));
        }
        if let Some(Some(vs)) = insp.detail.triangle_vertices.get(i) {
            ui.horizontal_wrapped(|ui| {
                ui.label("shader trace of vertex");
                for k in *vs {
                    if ui
                        .small_button(format!("{k}"))
                        .on_hover_text(format!("Debug the vertex shader of vertex {k} of the draw"))
                        .clicked()
                    {
                        if select {
                            queue.push(select_cmd.clone());
                        }
                        queue.push(AppCommand::SelectVertex(k));
                        queue.push(AppCommand::Tab(Tab::Shader));
                    }
                }
            });
        }
    }
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("Vertices ▶")
            .on_hover_text("The triangle's vertices: shader inputs and outputs")
            .clicked()
        {
            if select {
                queue.push(select_cmd.clone());
            }
            queue.push(AppCommand::Tab(Tab::Vertices));
        }
        history_button(ui, (at, source, x, y), queue);
    });
}

/// "Pixel history ▶": opens the history of the picked pixel `key`.
fn history_button(
    ui: &mut egui::Ui,
    key: crate::viewer::session::PixelKey,
    queue: &mut Vec<AppCommand>,
) {
    let (at, source, x, y) = key;
    if ui
        .button("Pixel history ▶")
        .on_hover_text("Every draw that touched this pixel")
        .clicked()
    {
        queue.push(AppCommand::OpenPixelHistory { at, source, x, y });
    }
}

/// Maps render-target window coordinates (x right, y up, in pixels) to the screen.
struct ImageMap {
    rect: egui::Rect,
    width: u32,
    height: u32,
    rotate: bool,
}

impl ImageMap {
    fn to_screen(&self, wx: f32, wy: f32) -> egui::Pos2 {
        // Window row wy is image row height − wy (memory row 0 at the top).
        let u = wx / self.width.max(1) as f32;
        let v = (self.height as f32 - wy) / self.height.max(1) as f32;
        let (su, sv) = if self.rotate { (v, 1.0 - u) } else { (u, v) };
        egui::pos2(
            self.rect.left() + su * self.rect.width(),
            self.rect.top() + sv * self.rect.height(),
        )
    }

    /// Outlines the window-space box `[x0, y0, x1, y1]`.
    fn outline(&self, painter: &egui::Painter, b: [f32; 4], color: Color32) {
        let pts = vec![
            self.to_screen(b[0], b[1]),
            self.to_screen(b[2], b[1]),
            self.to_screen(b[2], b[3]),
            self.to_screen(b[0], b[3]),
            self.to_screen(b[0], b[1]),
        ];
        painter.add(egui::Shape::line(pts, egui::Stroke::new(1.5, color)));
    }
}

/// Colour and dashing of a wireframe triangle by its fate.
fn wire_style(fate: Option<TriangleFate>, culled: bool) -> (Color32, bool) {
    if culled {
        return (Color32::from_rgb(255, 60, 60), true);
    }
    match fate {
        Some(TriangleFate::PartiallyClipped) => (Color32::from_rgb(255, 150, 40), false),
        Some(TriangleFate::ClippedAway) => (Color32::from_gray(150), true),
        Some(TriangleFate::Culled) => (Color32::from_rgb(255, 60, 60), true),
        _ => (Color32::from_rgb(80, 230, 120), false),
    }
}

/// The draw's clipped triangles (and, dashed grey, the triangles clipping removed, projected
/// when all their vertices are in front of the eye), the selected triangle in yellow.
fn paint_wireframe(painter: &egui::Painter, map: &ImageMap, d: &DrawDetail, selected: Option<u32>) {
    let mut shapes = Vec::new();
    let mut tri = |pts: [egui::Pos2; 3], color: Color32, dashed: bool, width: f32| {
        let line = vec![pts[0], pts[1], pts[2], pts[0]];
        let stroke = egui::Stroke::new(width, color);
        if dashed {
            shapes.extend(egui::Shape::dashed_line(&line, stroke, 5.0, 4.0));
        } else {
            shapes.push(egui::Shape::line(line, stroke));
        }
    };
    let mut selected_pts = Vec::new();
    for (i, t) in d.clipped.iter().enumerate() {
        let from = d.clipped_from.get(i).copied();
        let culled = d.clipped_culled.get(i).copied().unwrap_or(false);
        let fate = from.and_then(|f| d.fates.get(f as usize).copied());
        let pts = t.map(|v| map.to_screen(v.x, v.y));
        if from.is_some() && from == selected {
            selected_pts.push(pts);
            continue;
        }
        let (color, dashed) = wire_style(fate, culled);
        tri(pts, color, dashed, 1.0);
    }
    // Triangles clipping removed: their unclipped outline, when it can be projected.
    if let Ok(regs) = <&[u32; 0x300]>::try_from(d.regs.as_slice()) {
        let vp = gpu_core::viewport::Viewport::from_regs(regs);
        for (i, t) in d.assembled.iter().enumerate() {
            if d.fates.get(i) != Some(&TriangleFate::ClippedAway)
                || t.iter().any(|v| v.pos[3] <= 0.0)
            {
                continue;
            }
            let pts = t.map(|v| {
                let sv = gpu_core::viewport::to_screen(&v, &vp);
                map.to_screen(sv.x, sv.y)
            });
            if selected == Some(i as u32) {
                selected_pts.push(pts);
                continue;
            }
            let (color, dashed) = wire_style(Some(TriangleFate::ClippedAway), false);
            tri(pts, color, dashed, 1.0);
        }
    }
    for pts in selected_pts {
        tri(pts, Color32::YELLOW, false, 2.5);
    }
    painter.extend(shapes);
}

/// Parses a hexadecimal address, with or without `0x` (`0x18000000`, `18000000`).
pub fn parse_addr(text: &str) -> Option<u32> {
    let t = text.trim();
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    u32::from_str_radix(t, 16).ok()
}

/// Saves and says what happened.
fn save_status(img: &ImageData, path: &Path) -> String {
    match export_png(img, path) {
        Ok(()) => format!("saved {}", path.display()),
        Err(e) => e,
    }
}

/// A path next to `trace` named after the trace, the image and the command
/// (`cube-top-1234.png`), with `-2`, `-3`, … added until no file of that name exists.
pub fn unique_export_path(trace: &Path, source: &ImageSource, at: u64) -> PathBuf {
    let dir = trace
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf);
    let stem = trace.file_stem().map_or_else(
        || "picaview".to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    let base = default_export_name(source, at);
    let base = base.to_string_lossy();
    let tail = base.strip_prefix("picaview-").unwrap_or(&base);
    let tail = tail.strip_suffix(".png").unwrap_or(tail);
    let first = dir.join(format!("{stem}-{tail}.png"));
    if !first.exists() {
        return first;
    }
    // Bounded: after this many taken names the last candidate is returned (and Save then
    // reports the overwrite risk through the caller's checks no more than any other name).
    for i in 2..10_000u32 {
        let p = dir.join(format!("{stem}-{tail}-{i}.png"));
        if !p.exists() {
            return p;
        }
    }
    dir.join(format!("{stem}-{tail}-{}.png", std::process::id()))
}

/// The default file name of an exported image.
pub fn default_export_name(source: &ImageSource, at: u64) -> PathBuf {
    let name = match source {
        ImageSource::TopScreen => "top".to_string(),
        ImageSource::TopScreenRight => "top-right".to_string(),
        ImageSource::BottomScreen => "bottom".to_string(),
        ImageSource::Color => "color".to_string(),
        ImageSource::Depth => "depth".to_string(),
        ImageSource::Stencil => "stencil".to_string(),
        ImageSource::Texture { unit, face, level } => format!("tex{unit}-f{face}-l{level}"),
        ImageSource::Custom(CustomImage { addr, .. }) => format!("mem-{addr:08x}"),
    };
    PathBuf::from(format!("picaview-{name}-{at}.png"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::viewer::protocol::ImageKind;

    fn img() -> ImageData {
        ImageData {
            width: 2,
            height: 1,
            pixels: vec![[10, 20, 30, 0], [40, 50, 60, 128]],
            kind: ImageKind::Color,
            description: String::new(),
        }
    }

    #[test]
    fn channel_isolation() {
        let i = img();
        assert_eq!(
            isolate(&i, [true; 4], false),
            vec![[10, 20, 30, 255], [40, 50, 60, 255]]
        );
        assert_eq!(
            isolate(&i, [false, true, false, false], false),
            vec![[0, 20, 0, 255], [0, 50, 0, 255]]
        );
        assert_eq!(
            isolate(&i, [false, false, false, true], false),
            vec![[0, 0, 0, 255], [128, 128, 128, 255]]
        );
        let mut px = isolate(&i, [true; 4], true);
        assert_eq!(px[1][3], 128);
        blend_checker(&mut px, 2);
        assert_eq!(px[0], [200, 200, 200, 255]);
        assert_eq!(px[1][3], 255);
    }

    #[test]
    fn addresses_and_export() {
        assert_eq!(parse_addr("0x18000000"), Some(0x1800_0000));
        assert_eq!(parse_addr("1f"), Some(0x1F));
        assert_eq!(parse_addr("zz"), None);
        let dir = std::env::temp_dir().join(format!("picaview-export-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let p = dir.join("x.png");
        export_png(&img(), &p).expect("export");
        let back = image::open(&p).expect("png").to_rgba8();
        assert_eq!(back.get_pixel(1, 0).0, [40, 50, 60, 128]);
        assert!(export_png(&img(), &dir.join("no/such/dir/x.png")).is_err());
        let _ = std::fs::remove_dir_all(&dir);
        assert_eq!(
            default_export_name(&ImageSource::Color, 5),
            PathBuf::from("picaview-color-5.png")
        );
    }
}
