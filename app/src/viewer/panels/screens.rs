//! Screens panel: the top and bottom LCDs and the PICA colour buffer as of the selected
//! command, at a glance (the top screen's right eye too when 3D is on and it shows its own
//! framebuffer); a click opens the image view.
//!
//! Stage: presentation. Inputs: images from the session. Output: image-view commands.

use eframe::egui::{self, Color32, RichText};

use crate::viewer::command::AppCommand;
use crate::viewer::prefs::Prefs;
use crate::viewer::protocol::ImageSource;
use crate::viewer::session::{ImageEntry, TraceSession};
use crate::viewer::widgets::{self, paint_image};

/// Draws the panel.
pub fn ui(
    ui: &mut egui::Ui,
    s: &mut TraceSession,
    prefs: &Prefs,
    command: u64,
    queue: &mut Vec<AppCommand>,
) {
    let stereo = s
        .want_state(command)
        .is_some_and(|st| crate::viewer::images::top_screen_stereo(&st.ext_regs[..]));
    let mut sources = vec![(ImageSource::TopScreen, "Top screen")];
    if stereo {
        sources = vec![
            (ImageSource::TopScreen, "Top screen (left eye)"),
            (ImageSource::TopScreenRight, "Top screen (right eye)"),
        ];
    }
    sources.push((ImageSource::BottomScreen, "Bottom screen"));
    sources.push((ImageSource::Color, "Colour buffer"));
    egui::ScrollArea::vertical()
        .id_salt("screens_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for (source, title) in sources {
                ui.label(RichText::new(title).strong());
                let entry = s.want_image(command, source);
                let at = match &entry {
                    ImageEntry::Ready(..) => Some(command),
                    ImageEntry::Pending => s.any_image(source),
                    ImageEntry::Failed(e) => {
                        ui.colored_label(widgets::WARN, e);
                        None
                    }
                };
                let Some(at) = at else {
                    if matches!(entry, ImageEntry::Pending) {
                        ui.spinner();
                    }
                    continue;
                };
                let Some((img, tex)) = s.image_texture(ui.ctx(), at, source) else {
                    continue;
                };
                let rotate =
                    source == ImageSource::Color && prefs.rotate_thumbs && img.height > img.width;
                let shown = widgets::shown_size(img.width, img.height, rotate);
                let w = ui.available_width().max(32.0);
                let size = egui::vec2(w, w * shown.y / shown.x.max(1.0));
                let (rect, resp) = ui.allocate_exact_size(size, egui::Sense::click());
                widgets::name_button(&resp, &format!("Open {title}"));
                ui.painter().rect_filled(rect, 0.0, Color32::BLACK);
                paint_image(ui.painter(), tex.id(), rect, rotate, Color32::WHITE);
                if resp
                    .on_hover_text(format!(
                        "{}\nClick to open in the image view",
                        img.description
                    ))
                    .clicked()
                {
                    queue.push(AppCommand::ShowImage(source));
                }
                ui.add_space(6.0);
            }
        });
}
