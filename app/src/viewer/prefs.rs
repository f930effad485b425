//! Preferences and layout choices that persist across runs (eframe storage, RON). Emulator
//! state is never stored here (`architecture-and-style.md` §C6): only what the user chose.
//!
//! Stage: viewer configuration. Read once at start-up ([`Prefs::load`]) and written by
//! eframe's periodic save ([`Prefs::save`]).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::protocol::{CustomFormat, CustomImage, ImageSource};
use super::shbin_debug::ShaderInputs;

/// Key of the preferences in eframe's storage.
pub const STORAGE_KEY: &str = "picaview.prefs";
/// Recent files remembered.
pub const MAX_RECENT: usize = 10;

/// The central views.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Tab {
    /// Register writes.
    Commands,
    /// GPU state as of the selected command.
    #[default]
    State,
    /// Images.
    Image,
    /// Vertex shader inputs and outputs of the selected draw.
    Vertices,
    /// The shader debugger.
    Shader,
    /// The combiner (TEV) graph and per-stage solo.
    Tev,
    /// Lighting, fog and procedural-texture lookup tables as curves.
    Luts,
    /// Compare mode: a second trace or configuration, A | B | difference, first difference.
    Compare,
    /// Per-draw cost table of the current frame.
    Costs,
    /// The trace editor (edit list, before/after images).
    Edits,
}

impl Tab {
    /// Every tab in display order.
    pub const ALL: [Tab; 10] = [
        Tab::Commands,
        Tab::State,
        Tab::Image,
        Tab::Vertices,
        Tab::Shader,
        Tab::Tev,
        Tab::Luts,
        Tab::Compare,
        Tab::Costs,
        Tab::Edits,
    ];

    /// The tab's title.
    pub fn title(self) -> &'static str {
        match self {
            Tab::Commands => "Commands",
            Tab::State => "State",
            Tab::Image => "Image",
            Tab::Vertices => "Vertices",
            Tab::Shader => "Shader",
            Tab::Tev => "TEV",
            Tab::Luts => "LUTs",
            Tab::Compare => "Compare",
            Tab::Costs => "Costs",
            Tab::Edits => "Edits",
        }
    }
}

/// Which timeline entries are shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineFilter {
    /// Show draws.
    pub draws: bool,
    /// Show memory fills.
    pub fills: bool,
    /// Show display transfers and texture copies.
    pub transfers: bool,
    /// Show command-list submissions.
    pub lists: bool,
    /// Register name or id (hex): show only the draws whose setup (the commands since the
    /// previous draw) wrote that register.
    pub register: String,
}

impl Default for TimelineFilter {
    fn default() -> Self {
        Self {
            draws: true,
            fills: true,
            transfers: true,
            lists: true,
            register: String::new(),
        }
    }
}

/// Image view choices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImagePrefs {
    /// What is shown.
    pub source: ImageSource,
    /// Channel toggles R, G, B, A.
    pub channels: [bool; 4],
    /// Draw a checkerboard behind transparent pixels (else alpha is ignored).
    pub checker: bool,
    /// Rotate the view 90° counter-clockwise (3DS render targets are stored sideways).
    pub rotate: bool,
    /// Last custom image settings.
    pub custom: CustomImage,
    /// Export path typed by the user.
    pub export_path: String,
}

impl Default for ImagePrefs {
    fn default() -> Self {
        Self {
            source: ImageSource::TopScreen,
            channels: [true; 4],
            checker: false,
            rotate: false,
            custom: CustomImage {
                addr: 0x1800_0000,
                width: 256,
                height: 256,
                format: CustomFormat::Tiled(0),
            },
            // Empty: Save writes next to the trace under a new unique name.
            export_path: String::new(),
        }
    }
}

/// Everything persisted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Prefs {
    /// Most recent first.
    pub recent: Vec<PathBuf>,
    /// Central tab.
    pub tab: Tab,
    /// Show the timeline panel.
    pub show_timeline: bool,
    /// Show the screens panel.
    pub show_screens: bool,
    /// Show the log panel.
    pub show_log: bool,
    /// Show draw thumbnails in the timeline.
    pub thumbnails: bool,
    /// Timeline filter.
    pub filter: TimelineFilter,
    /// Image view.
    pub image: ImagePrefs,
    /// Command list: show only writes to this register (name or hex id).
    pub command_filter: String,
    /// Command list: show decoded fields under each write.
    pub show_fields: bool,
    /// Rotate thumbnails and the screens panel's colour buffer like the image view.
    pub rotate_thumbs: bool,
    /// Shader debugger inputs and uniforms per `.shbin` file and DVLE (`path#dvle`), most
    /// recent first, at most [`MAX_SHADER_MEMOS`].
    pub shader_inputs: Vec<(String, ShaderInputs)>,
}

/// Shader binaries whose debugger inputs are remembered.
pub const MAX_SHADER_MEMOS: usize = 32;

impl Default for Prefs {
    fn default() -> Self {
        Self {
            recent: Vec::new(),
            tab: Tab::default(),
            show_timeline: true,
            show_screens: true,
            show_log: true,
            thumbnails: true,
            filter: TimelineFilter::default(),
            image: ImagePrefs::default(),
            command_filter: String::new(),
            show_fields: true,
            rotate_thumbs: true,
            shader_inputs: Vec::new(),
        }
    }
}

impl Prefs {
    /// Reads the preferences from eframe storage (defaults when absent or unreadable).
    pub fn load(storage: Option<&dyn eframe::Storage>) -> Self {
        let mut p: Self = storage
            .and_then(|s| eframe::get_value(s, STORAGE_KEY))
            .unwrap_or_default();
        // Earlier versions defaulted to a fixed file name in the working directory, which
        // Save then overwrote silently.
        if p.image.export_path == "picaview-image.png" {
            p.image.export_path.clear();
        }
        p
    }

    /// Writes the preferences.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, STORAGE_KEY, self);
    }

    /// The remembered shader debugger inputs for `key` (`path#dvle`).
    pub fn shader_memo(&self, key: &str) -> Option<ShaderInputs> {
        self.shader_inputs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone().normalized())
    }

    /// Remembers shader debugger inputs for `key`, most recent first, bounded.
    pub fn remember_shader(&mut self, key: String, inputs: ShaderInputs) {
        self.shader_inputs.retain(|(k, _)| *k != key);
        self.shader_inputs.insert(0, (key, inputs));
        self.shader_inputs.truncate(MAX_SHADER_MEMOS);
    }

    /// Puts `path` first in the recent-file list.
    pub fn add_recent(&mut self, path: PathBuf) {
        self.recent.retain(|p| p != &path);
        self.recent.insert(0, path);
        self.recent.truncate(MAX_RECENT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recent_files_are_unique_and_bounded() {
        let mut p = Prefs::default();
        for i in 0..15 {
            p.add_recent(PathBuf::from(format!("f{i}.ctf")));
        }
        p.add_recent(PathBuf::from("f10.ctf"));
        assert_eq!(p.recent.len(), MAX_RECENT);
        assert_eq!(p.recent[0], PathBuf::from("f10.ctf"));
        assert_eq!(
            p.recent
                .iter()
                .filter(|x| x.as_path() == std::path::Path::new("f10.ctf"))
                .count(),
            1
        );
    }
}
