//! Looking at what a built trace renders: replays it with gpu-core's trace player and returns
//! both screens at every frame marker, plus the diagnostics the replay reported; and writes
//! images as PNG for people to inspect.
//!
//! Stage: consumer of traces (verification only). Inputs: `.ctf` bytes. Outputs: upright screen
//! images (400 × 240 top, 320 × 240 bottom) per frame, diagnostics. Registers read: those the
//! player reads (LCD framebuffer setup for the scan-out).

use std::path::Path;

use gpu_core::debug::{Diagnostic, DiagnosticsOnly};
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target};
use gpu_core::texture::DecodedImage;
use pica_cmd::citrace::CiTrace;

use super::SceneError;

/// Diagnostics kept at most by [`render_frames`].
pub const MAX_DIAGNOSTICS: usize = 256;

/// The screens as of one frame marker.
#[derive(Clone, Debug)]
pub struct FrameImages {
    /// Top screen, 400 × 240.
    pub top: DecodedImage,
    /// Bottom screen, 320 × 240.
    pub bottom: DecodedImage,
}

/// Everything a replay of a trace showed.
#[derive(Clone, Debug)]
pub struct Rendered {
    /// Screens at each frame marker, in order.
    pub frames: Vec<FrameImages>,
    /// Diagnostics of the whole replay (at most [`MAX_DIAGNOSTICS`]).
    pub diagnostics: Vec<Diagnostic>,
    /// Draws executed.
    pub draws: u64,
}

/// Replays `trace` and captures both screens at every frame marker.
pub fn render_frames(trace: Vec<u8>) -> Result<Rendered, SceneError> {
    let trace = CiTrace::from_bytes(trace)?;
    let markers = trace.stats().frame_markers;
    let mut replay = Replay::new(trace);
    let mut obs = DiagnosticsOnly {
        limit: MAX_DIAGNOSTICS,
        ..DiagnosticsOnly::default()
    };
    let mut frames = Vec::new();
    for n in 0..markers {
        let n = u32::try_from(n).map_err(|_| SceneError::Replay("too many frames".into()))?;
        replay.run_until(Target::Frame(n), &mut obs);
        let screen = |s| {
            replay
                .screen(s)
                .map_err(|e| SceneError::Replay(format!("frame {n}, {s:?} screen: {e}")))
        };
        frames.push(FrameImages {
            top: screen(Screen::Top)?,
            bottom: screen(Screen::Bottom)?,
        });
    }
    replay.run_until(Target::End, &mut obs);
    Ok(Rendered {
        frames,
        diagnostics: obs.diagnostics,
        draws: replay.position().draws,
    })
}

/// Writes an image as an RGBA PNG.
pub fn save_png(image: &DecodedImage, path: &Path) -> Result<(), SceneError> {
    let img = image::RgbaImage::from_raw(image.width, image.height, image.to_rgba_bytes())
        .ok_or_else(|| SceneError::Replay("image buffer size mismatch".into()))?;
    img.save(path)
        .map_err(|e| SceneError::Replay(format!("writing {}: {e}", path.display())))
}
