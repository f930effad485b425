//! Resource timeline window ("Who touched this?"): for the physical address range of the image
//! the user looks at (a texture, the colour/depth buffer, a memory view), every producer and
//! consumer in trace order: memory loads, fills, display transfers and texture copies, draws
//! rendering into it, sampling it, reading vertices or indices from it. Clicking an event
//! selects its position (the draw, or the command right after the event). The pass replays the
//! whole trace on the worker: the window shows its progress and can cancel it (the events found
//! until then are listed, with "Run again").
//!
//! Stage: presentation of `gpu_core::replay::resources`. Inputs: the range (from
//! [`image_range`]) and the worker's [`Timeline`]. Output: selection commands. Registers read
//! (for the range of an image): COLORBUFFER/DEPTHBUFFER_LOC and formats, FRAMEBUFFER_DIM, the
//! texture unit registers, from the state snapshot.

use eframe::egui::{self, RichText};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::replay::resources::{AddrRange, ResourceEvent, Timeline};
use gpu_core::texture::{CubeFace, TextureConfig};

use crate::viewer::command::AppCommand;
use crate::viewer::protocol::{ImageSource, StateSnapshot};
use crate::viewer::session::TraceSession;
use crate::viewer::widgets::{CHANGED, GOOD};

/// Resource timeline UI state.
#[derive(Debug, Default)]
pub struct ResourcesView {
    /// The range shown (start, length); `None` = window closed.
    pub query: Option<(u32, u64)>,
}

/// The physical range an image view shows, from the state as of the shown command: the whole
/// colour or depth/stencil buffer, one texture face with all its levels, a memory view. `None`
/// for the LCD screens and for formats without a size.
pub fn image_range(state: &StateSnapshot, source: ImageSource) -> Option<AddrRange> {
    match source {
        ImageSource::Color => {
            let fb = FramebufferConfig::from_regs(&state.regs);
            let bpp = fb.color_format?.bytes_per_pixel() as u64;
            Some(AddrRange {
                start: fb.color_addr,
                len: u64::from(fb.width) * u64::from(fb.height) * bpp,
            })
        }
        ImageSource::Depth | ImageSource::Stencil => {
            let fb = FramebufferConfig::from_regs(&state.regs);
            let bpp = fb.depth_format?.bytes_per_pixel() as u64;
            Some(AddrRange {
                start: fb.depth_addr,
                len: u64::from(fb.width) * u64::from(fb.height) * bpp,
            })
        }
        ImageSource::Texture { unit, face, .. } => {
            let cfg = TextureConfig::from_regs(&state.regs, usize::from(unit));
            let layout = cfg.layout()?;
            let start = CubeFace::ALL
                .get(usize::from(face))
                .map_or(cfg.address, |f| cfg.face_address(*f));
            Some(AddrRange {
                start,
                len: layout.total_bytes,
            })
        }
        ImageSource::Custom(c) => {
            let len = match (c.format.texture(), c.format.color()) {
                (Some(t), _) => t.level_span(c.width, c.height),
                (_, Some(f)) => {
                    u64::from(c.width) * u64::from(c.height) * f.bytes_per_pixel() as u64
                }
                _ => return None,
            };
            Some(AddrRange { start: c.addr, len })
        }
        ImageSource::TopScreen | ImageSource::TopScreenRight | ImageSource::BottomScreen => None,
    }
}

/// One event as a line of the list.
pub fn event_text(e: &ResourceEvent) -> String {
    let at = match e.draw {
        Some(d) => format!("draw #{d}"),
        None => format!("cmd {}", e.pos.writes),
    };
    format!(
        "frame {} · {at} · {} · 0x{:08X}+0x{:X} · {}",
        e.pos.frame,
        e.access.name(),
        e.range.start,
        e.range.len,
        e.what
    )
}

impl ResourcesView {
    /// Draws the window while a query is open.
    pub fn ui(&mut self, ctx: &egui::Context, s: &mut TraceSession, queue: &mut Vec<AppCommand>) {
        let Some((start, len)) = self.query else {
            return;
        };
        let timeline = s.want_resources(start, len);
        let mut open = true;
        let end = (u64::from(start) + len).saturating_sub(1);
        egui::Window::new(format!("Who touched 0x{start:08X}-0x{end:08X}?"))
            .open(&mut open)
            .default_size([720.0, 360.0])
            .resizable(true)
            .show(ctx, |ui| match timeline {
                None => progress_ui(ui, s, start, len),
                Some(t) => {
                    if s.resources_cancelled {
                        ui.horizontal_wrapped(|ui| {
                            ui.colored_label(
                                CHANGED,
                                "Cancelled: only the events found before the cancel are listed.",
                            );
                            if ui
                                .button("Run again")
                                .on_hover_text("Replay the whole trace again for this range")
                                .clicked()
                            {
                                s.rerun_resources(start, len);
                            }
                        });
                    }
                    list_ui(ui, &t, queue)
                }
            });
        if !open {
            queue.push(AppCommand::CloseWhoTouched);
        }
    }
}

/// While the pass runs: what it does, a progress bar and Cancel.
fn progress_ui(ui: &mut egui::Ui, s: &mut TraceSession, start: u32, len: u64) {
    ui.horizontal(|ui| {
        ui.spinner();
        ui.label("Replaying the trace to find every producer and consumer…");
    });
    let progress = s
        .resources_progress
        .filter(|(k, _, _)| *k == (start, len) && s.resources_running(start, len));
    match progress {
        Some((_, fraction, events)) => {
            ui.horizontal(|ui| {
                ui.add(
                    egui::ProgressBar::new(fraction)
                        .show_percentage()
                        .desired_width(320.0),
                );
                ui.label(format!("{events} event(s) so far"));
                if ui
                    .button("Cancel")
                    .on_hover_text("Stop the pass; the events found so far are listed")
                    .clicked()
                {
                    s.cancel_resources();
                }
            });
        }
        None => {
            ui.weak("Waiting for the replay worker…");
        }
    }
}

fn list_ui(ui: &mut egui::Ui, t: &Timeline, queue: &mut Vec<AppCommand>) {
    let st = t.stats;
    ui.label(format!(
        "{} events: {} writes, {} reads (over {} draws). Click one to select it.",
        st.events,
        st.writes,
        st.events - st.writes,
        st.draws
    ));
    if t.dropped > 0 {
        ui.colored_label(
            CHANGED,
            format!(
                "Only the first {} are listed ({} more).",
                t.events.len(),
                t.dropped
            ),
        );
    }
    if t.events.is_empty() {
        ui.weak("Nothing in the trace reads or writes this range.");
        return;
    }
    let row_h = (ui.text_style_height(&egui::TextStyle::Monospace)
        + 2.0 * ui.spacing().button_padding.y)
        .max(ui.spacing().interact_size.y);
    egui::ScrollArea::both()
        .id_salt("who_touched_rows")
        .auto_shrink([false, false])
        .show_rows(ui, row_h, t.events.len(), |ui, range| {
            ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
            for e in &t.events[range] {
                let mut text = RichText::new(event_text(e)).monospace();
                if e.access.is_write() {
                    text = text.color(GOOD);
                }
                if ui
                    .selectable_label(false, text)
                    .on_hover_text(if e.access.is_write() {
                        "Producer (writes the range)"
                    } else {
                        "Consumer (reads the range)"
                    })
                    .clicked()
                {
                    queue.push(match e.draw {
                        Some(d) => AppCommand::SelectDraw(d),
                        None => AppCommand::SelectCommand(e.pos.writes),
                    });
                }
            }
        });
}
