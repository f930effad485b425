//! Deferred UI commands and the one selection model every panel reads
//! (`architecture-and-style.md` §C6).
//!
//! Stage: viewer control. Panels never change the selection or the document while they draw:
//! they push [`AppCommand`]s, and the app applies them after the frame's layout.

use std::path::PathBuf;

use super::prefs::Tab;
use super::protocol::ImageSource;

/// What the user selected. Everything else (the draw whose detail is shown, the frame) is
/// derived from `command`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The selected command: the state shown is the one right after this register write
    /// (1-based; 0 = the trace's initial state).
    pub command: u64,
    /// Selected vertex (index in the draw) of the current draw.
    pub vertex: Option<u32>,
    /// Selected step of the shader trace (`None` = before the first instruction).
    pub shader_step: Option<usize>,
    /// Selected triangle (index out of primitive assembly) of the current draw, e.g. picked by
    /// clicking a pixel.
    pub triangle: Option<u32>,
    /// The shader view debugs this geometry-shader invocation of the current draw instead of
    /// the selected vertex's vertex shader.
    pub gs_invocation: Option<u32>,
}

/// A deferred action.
#[derive(Clone, Debug, PartialEq)]
pub enum AppCommand {
    /// Open a file.
    Open(PathBuf),
    /// Show the native file dialog (or the path field when no native dialog can appear).
    OpenDialog,
    /// Show the path field of File > Open (no native dialog).
    OpenPathField,
    /// Close the document.
    Close,
    /// Cancel the running long operation.
    Cancel,
    /// Select a command.
    SelectCommand(u64),
    /// Select a draw (its triggering command).
    SelectDraw(u64),
    /// Select a vertex of the current draw.
    SelectVertex(u32),
    /// Select a draw and one of its triangles (index out of primitive assembly), e.g. the
    /// primitive that wrote a clicked pixel.
    SelectPrimitive {
        /// Draw index.
        draw: u64,
        /// Triangle within the draw.
        triangle: u32,
    },
    /// Open the pixel history of a pixel of an image (the pixel becomes the picked pixel).
    OpenPixelHistory {
        /// Command number the pixel was picked at.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row from the top.
        y: u32,
    },
    /// Move by commands.
    StepCommand(i64),
    /// Move to the next / previous draw.
    StepDraw(i64),
    /// Move to the end of the next / previous frame.
    StepFrame(i64),
    /// Go to the initial state.
    Start,
    /// Go to the last command.
    End,
    /// Switch the central tab.
    Tab(Tab),
    /// Show an image in the image view.
    ShowImage(ImageSource),
    /// Debug a geometry-shader invocation of the current draw (`None`: the vertex shader).
    SelectGsInvocation(Option<u32>),
    /// Open the resource timeline ("who touched this?") of a physical address range.
    WhoTouched {
        /// First byte.
        start: u32,
        /// Length in bytes.
        len: u64,
    },
    /// Close the resource timeline.
    CloseWhoTouched,
    /// Select a shader step.
    ShaderStep(Option<usize>),
    /// Move the shader step by this many instructions.
    ShaderMove(i64),
    /// Go back in the selection history (Alt+←).
    Back,
    /// Go forward in the selection history (Alt+→).
    Forward,
    /// Add an edit to the Edits panel's list (and show it).
    AddEdit(Box<gpu_core::replay::edit::EditKind>),
    /// Start an edit: show the Edits panel with this edit-script line in its "Add edit" field
    /// (e.g. the State view's "Edit value…" on a uniform, prefilled with the current value).
    PrefillEdit(String),
    /// Dismiss the error banner.
    DismissErrors,
    /// Quit.
    Quit,
}
