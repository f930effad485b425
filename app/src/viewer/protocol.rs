//! Messages between the UI thread and the replay worker ([`super::worker`]).
//!
//! Stage: viewer plumbing. The UI sends [`Request`]s; the worker, which owns the
//! [`gpu_core::replay::Replay`], answers with [`Response`]s. Everything here is plain `Send`
//! data: snapshots of registers, decoded images, command pages, per-draw detail and shader
//! traces. Positions are counted in executed register writes ("commands", see
//! [`gpu_core::replay::Position::writes`]): "as of command `n`" means the state right after the
//! `n`-th write (1-based; 0 is the trace's initial state).

use std::sync::Arc;

use gpu_core::debug::{Diagnostic, DrawDetail, RegWriteEvent, TargetBuffers};
use gpu_core::gpu::{EXT_REG_COUNT, FIXED_ATTRIBS, FLOAT_UNIFORMS};
use gpu_core::lut::LookupTables;
use gpu_core::pixel::{ColorFormat, Rgba};
use gpu_core::replay::{Position, TraceIndex};
use gpu_core::tev::TevSolo;
use gpu_core::texture::TextureFormat;
use shader_unit::interp::{StepRecord, Vec4};

use super::listing::ShaderListing;
use super::provenance::Provenance;

/// What an image view shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ImageSource {
    /// The top LCD as a person sees it (upright, 400×240), left eye.
    TopScreen,
    /// The top LCD's right eye (framebuffer B when 3D is on, else the same image as
    /// [`ImageSource::TopScreen`]).
    TopScreenRight,
    /// The bottom LCD (upright, 320×240).
    BottomScreen,
    /// The PICA colour buffer (COLORBUFFER_LOC/FORMAT, FRAMEBUFFER_DIM), rows top first.
    Color,
    /// The depth part of the depth/stencil buffer, shown as grey (auto-ranged).
    Depth,
    /// The stencil part of a D24S8 buffer, shown as grey (value 0-255).
    Stencil,
    /// Texture unit `unit` (0-2), cube face `face` (0-5, 0 for 2D) and mip `level`.
    Texture {
        /// Unit 0-2.
        unit: u8,
        /// Cube face 0-5 (+X, -X, +Y, -Y, +Z, -Z); 0 for 2D textures.
        face: u8,
        /// Mip level (0 = largest).
        level: u8,
    },
    /// Any physical address as an image.
    Custom(CustomImage),
}

impl ImageSource {
    /// True for the LCD screens (their pixels are followed through the display transfer).
    pub fn is_screen(self) -> bool {
        matches!(
            self,
            ImageSource::TopScreen | ImageSource::TopScreenRight | ImageSource::BottomScreen
        )
    }

    /// Short label for menus and tabs.
    pub fn label(&self) -> String {
        match self {
            ImageSource::TopScreen => "Top screen".into(),
            ImageSource::TopScreenRight => "Top screen (right eye)".into(),
            ImageSource::BottomScreen => "Bottom screen".into(),
            ImageSource::Color => "Colour buffer".into(),
            ImageSource::Depth => "Depth buffer".into(),
            ImageSource::Stencil => "Stencil buffer".into(),
            ImageSource::Texture { unit, face, level } => {
                format!("Texture {unit} (face {face}, level {level})")
            }
            ImageSource::Custom(c) => format!(
                "0x{:08X} {}x{} {}",
                c.addr,
                c.width,
                c.height,
                c.format.name()
            ),
        }
    }
}

/// "Show memory as an image": address, size and pixel format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct CustomImage {
    /// Physical address of the first byte.
    pub addr: u32,
    /// Width in pixels (1-2047).
    pub width: u32,
    /// Height in pixels (1-2047).
    pub height: u32,
    /// Pixel format and layout.
    pub format: CustomFormat,
}

/// Pixel formats of [`CustomImage`]: the 14 texture formats (8×8 Morton tiles, as textures and
/// render targets are stored) and the 5 colour formats in a linear, top-row-first layout (as the
/// LCD framebuffers and display-transfer outputs are stored).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum CustomFormat {
    /// A texture format id 0-13, tiled.
    Tiled(u8),
    /// A colour format (PICA id 0-4: RGBA8, RGB8, RGB5A1, RGB565, RGBA4), linear rows.
    Linear(u8),
}

impl CustomFormat {
    /// Every choice, for the format menu.
    pub fn all() -> impl Iterator<Item = CustomFormat> {
        (0..14u8)
            .map(CustomFormat::Tiled)
            .chain((0..5u8).map(CustomFormat::Linear))
    }

    /// The texture format of a tiled choice.
    pub fn texture(self) -> Option<TextureFormat> {
        match self {
            CustomFormat::Tiled(id) => TextureFormat::from_id(u32::from(id)),
            CustomFormat::Linear(_) => None,
        }
    }

    /// The colour format of a linear choice.
    pub fn color(self) -> Option<ColorFormat> {
        match self {
            CustomFormat::Linear(id) => ColorFormat::from_pica_id(u32::from(id)),
            CustomFormat::Tiled(_) => None,
        }
    }

    /// Display name, e.g. `ETC1 (tiled)` or `RGB565 (linear)`.
    pub fn name(self) -> String {
        match (self.texture(), self.color()) {
            (Some(t), _) => format!("{} (tiled)", t.name()),
            (_, Some(c)) => format!("{} (linear)", c.name()),
            _ => "invalid".into(),
        }
    }
}

/// What the pixels of an [`ImageData`] mean (for the pixel picker's wording).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ImageKind {
    /// RGBA colours.
    Color,
    /// Depth values mapped to grey.
    Depth,
    /// Stencil values as grey.
    Stencil,
}

/// A decoded image ready for display: RGBA8, row-major, top row first.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageData {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width × height` pixels.
    pub pixels: Vec<Rgba>,
    /// What the pixels mean.
    pub kind: ImageKind,
    /// One line describing where the image came from (address, format, size).
    pub description: String,
}

/// The colour buffer without and with an edit list, and their difference.
#[derive(Clone, Debug)]
pub struct EditImages {
    /// Without the edits.
    pub before: Arc<ImageData>,
    /// With the edits.
    pub after: Arc<ImageData>,
    /// Per-channel absolute difference (RGB, scaled x4, opaque); black where equal.
    pub diff: Arc<ImageData>,
    /// Pixels that differ.
    pub differing: u64,
}

/// The raw and decoded value of one picked pixel, as label/value rows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PixelInfo {
    /// Rows such as `("address", "0x18000000")`, `("raw", "FF 00 00 FF")`.
    pub rows: Vec<(String, String)>,
}

/// A small colour-buffer snapshot for the timeline (RGBA8, rows top first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Thumb {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels.
    pub pixels: Vec<Rgba>,
}

/// What the image view's picking and overlays need about the render target as of a command:
/// the primitive-ID and overdraw buffers recorded from the start of the frame, the raw depth
/// values, and the scissor box and viewport of the registers there.
#[derive(Clone, Debug)]
pub struct DebugView {
    /// Command number.
    pub at: u64,
    /// Primitive IDs and overdraw (window coordinates, see [`TargetBuffers`]); `None` when no
    /// draw of the frame so far rendered to this target.
    pub target: Option<TargetBuffers>,
    /// Render-target width in pixels.
    pub width: u32,
    /// Render-target height in pixels.
    pub height: u32,
    /// Depth values, image rows top first (as the depth image), when the depth buffer is
    /// readable.
    pub depth: Option<Vec<u32>>,
    /// Largest depth value of the depth format (`2^bits − 1`).
    pub max_depth: u32,
    /// Scissor box (window pixels, inclusive) and whether the test is on and which way:
    /// `Some((include, [x1, y1, x2, y2]))` when enabled.
    pub scissor: Option<(bool, [u32; 4])>,
    /// Viewport rectangle in window pixels: x, y, width, height.
    pub viewport: [f32; 4],
}

/// One shader unit's memories as of a position.
#[derive(Clone, Debug)]
pub struct UnitSnapshot {
    /// Disassembly of the program memory (cached by upload generation).
    pub listing: Arc<ShaderListing>,
    /// Float uniforms c0-c95 (x, y, z, w as f32).
    pub float_uniforms: [Vec4; FLOAT_UNIFORMS],
}

/// The GPU state as of a command.
#[derive(Clone, Debug)]
pub struct StateSnapshot {
    /// The requested command number (state after that write).
    pub at: u64,
    /// Where the replay actually is (the end of the trace if `at` is past it).
    pub pos: Position,
    /// PICA register file 0x000-0x2FF.
    pub regs: Box<[u32; 0x300]>,
    /// External GPU registers (PA 0x10400000 + 4·i).
    pub ext_regs: Box<[u32; EXT_REG_COUNT]>,
    /// Vertex shader unit.
    pub vs: UnitSnapshot,
    /// Geometry shader unit.
    pub gs: UnitSnapshot,
    /// Fixed / default attribute values 0-15.
    pub fixed_attribs: [Vec4; FIXED_ATTRIBS],
    /// Lighting, fog and procedural-texture lookup tables (raw entry words).
    pub luts: Arc<LookupTables>,
}

/// The colour buffer after one draw, as the trace renders it and with a combiner solo.
#[derive(Clone, Debug, PartialEq)]
pub struct SoloImages {
    /// After the draw, as the trace renders it.
    pub real: ImageData,
    /// After the draw rendered with the solo (the earlier draws as in the trace).
    pub solo: ImageData,
}

/// Register writes `first..first + writes.len()` (1-based command numbers) in order.
#[derive(Clone, Debug)]
pub struct CommandPage {
    /// Command number of `writes[0]`.
    pub first: u64,
    /// The writes as executed (old and new values, mask, source address).
    pub writes: Vec<RegWriteEvent>,
    /// Per write, what it did if it fed a data port (uniform, code, LUT, fixed attribute).
    pub effects: Vec<Option<super::ports::PortEffect>>,
}

/// Everything the vertex and shader views need about one draw.
#[derive(Clone, Debug)]
pub struct DrawInspection {
    /// Draw index (0-based over the trace).
    pub draw: u64,
    /// Loaded vertices (in shader-invocation order), shaded vertices (one per index),
    /// assembled and clipped triangles.
    pub detail: DrawDetail,
    /// Diagnostics raised while the draw ran.
    pub diagnostics: Vec<Diagnostic>,
    /// Vertex id of every draw position k (index buffer value or k + VERTEX_OFFSET), at most
    /// [`MAX_VERTEX_IDS`] of them.
    pub vertex_ids: Vec<u32>,
    /// The vertex shader as the draw ran it.
    pub vs: Arc<VsContext>,
    /// Disassembly of the geometry shader, when the draw ran one.
    pub gs_listing: Option<Arc<ShaderListing>>,
    /// The geometry shader as the draw ran it (GS draws only): enough to re-run any of its
    /// recorded invocations ([`DrawDetail::gs_invocations`]).
    pub gs: Option<Arc<GsDebugContext>>,
}

/// The geometry-shader setup of a draw. The per-invocation inputs, unit registers and uniforms
/// are in the draw detail's `gs_invocations`.
#[derive(Clone, Debug)]
pub struct GsDebugContext {
    /// Decoded GS program.
    pub program: Arc<shader_unit::decode::Program>,
    /// Disassembly of the program.
    pub listing: Arc<ShaderListing>,
    /// GS input permutation/count, output mask and entry point.
    pub setup: gpu_core::shading::UnitSetup,
    /// Interpreter options used by the pipeline's GS unit.
    pub config: shader_unit::interp::ExecConfig,
}

/// Most vertex ids a [`DrawInspection`] lists.
pub const MAX_VERTEX_IDS: u32 = 1 << 20;

/// The vertex-shader setup of a draw, enough to re-run any of its invocations.
#[derive(Clone, Debug)]
pub struct VsContext {
    /// Decoded program.
    pub program: Arc<shader_unit::decode::Program>,
    /// Disassembly of the program.
    pub listing: Arc<ShaderListing>,
    /// Uniforms (c, i, b) as the draw saw them.
    pub uniforms: shader_unit::interp::Uniforms,
    /// Input permutation/count, output mask and entry point.
    pub setup: gpu_core::shading::UnitSetup,
    /// The unit's persistent registers before the draw's first invocation.
    pub state: shader_unit::interp::UnitState,
    /// Interpreter options used by the pipeline.
    pub config: shader_unit::interp::ExecConfig,
}

/// Register values of a shader unit at one point of an invocation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShaderRegs {
    /// r0-r15.
    pub temps: [Vec4; 16],
    /// o0-o15.
    pub outputs: [Vec4; 16],
}

/// One vertex's shader execution, step by step.
#[derive(Clone, Debug)]
pub struct ShaderTrace {
    /// Draw index.
    pub draw: u64,
    /// Index of the vertex in the draw (k).
    pub index_in_draw: u32,
    /// Input registers v0-v15 as the invocation saw them.
    pub inputs: [Vec4; 16],
    /// Registers before the first instruction.
    pub initial: ShaderRegs,
    /// One record per executed instruction.
    pub steps: Vec<StepRecord>,
    /// Register values after every [`CHECKPOINT_STEPS`]-th step: `checkpoints[i]` is the state
    /// after step `i · CHECKPOINT_STEPS − 1` (`checkpoints[0]` = `initial`).
    pub checkpoints: Vec<ShaderRegs>,
    /// How the invocation ended (`Ok(instructions)` or the error text).
    pub result: Result<u64, String>,
    /// Compacted output slots of this re-run.
    pub slots: Vec<Vec4>,
    /// The pipeline's compacted output slots for the vertex (from the draw detail).
    pub expected: Option<Vec<Vec4>>,
    /// Caveats (earlier invocations skipped, trace truncated, ...).
    pub notes: Vec<String>,
    /// Geometry shaders: every EMIT of the run in order (empty for vertex shaders).
    pub emits: Vec<TraceEmit>,
}

/// One EMIT of a traced geometry-shader invocation.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceEmit {
    /// The step (index into [`ShaderTrace::steps`]) that executed the EMIT.
    pub step: usize,
    /// Emitter slot written (SETEMIT vertex id).
    pub slot: u8,
    /// True when the EMIT submitted a primitive (slots 0, 1, 2).
    pub primitive: bool,
    /// Winding flag of that primitive.
    pub winding: bool,
    /// Output registers compacted by the GS output mask.
    pub outputs: Vec<Vec4>,
    /// The vertex by semantic (after the output map).
    pub vertex: gpu_core::vertex::OutputVertex,
}

/// Steps between two [`ShaderTrace::checkpoints`].
pub const CHECKPOINT_STEPS: usize = 64;

impl ShaderTrace {
    /// Registers after step `step` (`None` = before the first step).
    pub fn regs_at(&self, step: Option<usize>) -> ShaderRegs {
        let Some(step) = step else {
            return self.initial;
        };
        let step = step.min(self.steps.len().saturating_sub(1));
        let (cp, mut regs) = match self.checkpoints.len() {
            0 => (0, self.initial),
            n => {
                let cp = ((step + 1) / CHECKPOINT_STEPS).min(n - 1);
                (
                    cp,
                    self.checkpoints.get(cp).copied().unwrap_or(self.initial),
                )
            }
        };
        let first = (cp * CHECKPOINT_STEPS).min(step + 1);
        for rec in self.steps.get(first..=step).unwrap_or(&[]) {
            apply_step(&mut regs, rec);
        }
        regs
    }
}

/// Applies one step's destination write to `regs`.
pub fn apply_step(regs: &mut ShaderRegs, rec: &StepRecord) {
    use shader_unit::decode::DstReg;
    if let Some((reg, _before, after)) = rec.dst {
        match reg {
            DstReg::Output(i) => {
                if let Some(r) = regs.outputs.get_mut(usize::from(i)) {
                    *r = after;
                }
            }
            DstReg::Temp(i) => {
                if let Some(r) = regs.temps.get_mut(usize::from(i)) {
                    *r = after;
                }
            }
        }
    }
}

/// Progress of a long operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// What is running ("Indexing trace", "Analysing", ...).
    pub task: &'static str,
    /// Fraction done, 0-1.
    pub fraction: f32,
    /// Whether the UI may cancel it.
    pub cancellable: bool,
}

/// A request from the UI.
#[derive(Clone, Debug, PartialEq)]
pub enum Request {
    /// The state as of command `at`.
    State {
        /// Command number.
        at: u64,
    },
    /// An image as of command `at`.
    Image {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
    },
    /// Raw and decoded value of pixel (x, y) (image coordinates, top row 0) of an image.
    Pixel {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row from the top.
        y: u32,
    },
    /// The history of pixel (x, y) of an image (screens, colour, depth or stencil buffer)
    /// over the frame that contains command `at`, up to `at` (issue 15).
    PixelHistory {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row from the top.
        y: u32,
    },
    /// Click to identify on a screen (issue 15): pixel (x, y) of the top or bottom screen as
    /// shown after command `at`, mapped through the LCD and the display transfer to the colour
    /// buffer, and the primitive that last wrote that buffer pixel
    /// ([`gpu_core::history::identify_screen_pixel`]).
    ScreenPick {
        /// Command number.
        at: u64,
        /// [`ImageSource::TopScreen`] or [`ImageSource::BottomScreen`].
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row from the top.
        y: u32,
    },
    /// Commands `first..first + count`.
    Commands {
        /// First command number (1-based).
        first: u64,
        /// How many.
        count: u32,
    },
    /// Loaded/shaded vertices and triangles of a draw.
    DrawDetail {
        /// Draw index.
        draw: u64,
    },
    /// Step-by-step shader execution of one vertex of a draw.
    ShaderTrace {
        /// Draw index.
        draw: u64,
        /// Vertex index in the draw (k).
        index_in_draw: u32,
    },
    /// Step-by-step execution of one geometry-shader invocation of a draw.
    GsTrace {
        /// Draw index.
        draw: u64,
        /// Invocation number in the draw.
        invocation: u32,
    },
    /// Every producer and consumer of a physical address range over the whole trace.
    WhoTouched {
        /// First byte.
        start: u32,
        /// Length in bytes.
        len: u64,
    },
    /// A colour-buffer thumbnail after a draw.
    Thumbnail {
        /// Draw index.
        draw: u64,
    },
    /// The primitive-ID / overdraw buffers of the current render target as of command `at`
    /// (recorded from the start of `at`'s frame), with its depth values, scissor and viewport.
    DebugBuffers {
        /// Command number.
        at: u64,
    },
    /// The colour buffer after draw `draw` rendered normally and with a combiner solo.
    TevSolo {
        /// Draw index.
        draw: u64,
        /// The stage and channel shown.
        solo: TevSolo,
    },
    /// The colour buffer after command `at` without and with an edit list (Edits panel).
    EditCompare {
        /// Echoed in the answer.
        id: u64,
        /// The trace file (replayed a second time with the edits).
        source: std::path::PathBuf,
        /// Command number.
        at: u64,
        /// The edits.
        edits: Arc<gpu_core::replay::edit::EditList>,
    },
    /// Write `source` with `edits` baked in to `dest` (Edits panel, "Save as .ctf").
    SaveEdited {
        /// The trace file.
        source: std::path::PathBuf,
        /// The new file.
        dest: std::path::PathBuf,
        /// The edits.
        edits: Arc<gpu_core::replay::edit::EditList>,
    },
    /// Commands in `first..=last` whose register name, id, value or decoded text contains
    /// `query` (case-insensitive).
    Search {
        /// Echoed in the answer.
        id: u64,
        /// First command number.
        first: u64,
        /// Last command number (inclusive).
        last: u64,
        /// Text to look for.
        query: String,
    },
}

/// An answer from the worker.
#[derive(Clone, Debug)]
pub enum Response {
    /// A long operation advanced.
    Progress(Progress),
    /// The long operation finished (or was cancelled); no progress to show.
    Idle,
    /// The trace was indexed; the session is ready.
    Indexed(Arc<TraceIndex>),
    /// Indexing was cancelled; the worker stopped.
    Cancelled,
    /// A state snapshot.
    State(Arc<StateSnapshot>),
    /// A decoded image (or why it could not be decoded).
    Image {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// The image or an error message.
        result: Result<Arc<ImageData>, String>,
    },
    /// A picked pixel.
    Pixel {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// Rows of text.
        info: PixelInfo,
    },
    /// A pixel history.
    PixelHistory {
        /// Command number.
        at: u64,
        /// Which image.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// The history or why there is none.
        result: Result<Arc<gpu_core::history::PixelHistory>, String>,
    },
    /// Answer to [`Request::ScreenPick`].
    ScreenPick {
        /// Command number.
        at: u64,
        /// Which screen.
        source: ImageSource,
        /// Column.
        x: u32,
        /// Row.
        y: u32,
        /// The mapping and primitive, or why the pixel cannot be followed.
        result: Result<Arc<gpu_core::history::ScreenPick>, String>,
    },
    /// A page of commands.
    Commands(Arc<CommandPage>),
    /// Draw detail.
    DrawDetail {
        /// Draw index.
        draw: u64,
        /// The detail or an error message.
        result: Result<Arc<DrawInspection>, String>,
    },
    /// A shader trace.
    ShaderTrace {
        /// Draw index.
        draw: u64,
        /// Vertex index in the draw.
        index_in_draw: u32,
        /// The trace or an error message.
        result: Result<Arc<ShaderTrace>, String>,
    },
    /// The images of a [`Request::TevSolo`].
    TevSolo {
        /// Draw index.
        draw: u64,
        /// The solo.
        solo: TevSolo,
        /// The images or why they could not be made.
        result: Result<Arc<SoloImages>, String>,
    },
    /// A geometry-shader invocation trace.
    GsTrace {
        /// Draw index.
        draw: u64,
        /// Invocation number in the draw.
        invocation: u32,
        /// The trace or an error message.
        result: Result<Arc<ShaderTrace>, String>,
    },
    /// The resource timeline of a range.
    WhoTouched {
        /// First byte.
        start: u32,
        /// Length in bytes.
        len: u64,
        /// The events (bounded) and counts.
        result: Arc<gpu_core::replay::resources::Timeline>,
        /// False when the pass was cancelled ([`WorkerHandle::cancel`](super::worker::WorkerHandle::cancel)):
        /// `result` holds the events found before.
        complete: bool,
    },
    /// The resource timeline pass of a range advanced (the pass replays the whole trace).
    WhoTouchedProgress {
        /// First byte.
        start: u32,
        /// Length in bytes.
        len: u64,
        /// Fraction of the trace's stream elements done, 0-1.
        fraction: f32,
        /// Events found so far.
        events: u64,
    },
    /// Thumbnails after draws (`None`: no readable colour buffer).
    Thumbnails(Vec<(u64, Option<Arc<Thumb>>)>),
    /// The background analysis pass finished: register/uniform provenance.
    Provenance(Arc<Provenance>),
    /// Search results.
    SearchResult {
        /// The request's id.
        id: u64,
        /// Matching command numbers in order.
        matches: Vec<u64>,
        /// True when the match list was cut at its limit.
        truncated: bool,
    },
    /// Debug buffers of the render target as of a command.
    DebugBuffers {
        /// Command number.
        at: u64,
        /// The buffers or an error message.
        result: Result<Arc<DebugView>, String>,
    },
    /// Answer to [`Request::EditCompare`].
    EditCompare {
        /// The request's id.
        id: u64,
        /// Before, after and difference images, or why there are none.
        result: Result<Arc<EditImages>, String>,
    },
    /// Answer to [`Request::SaveEdited`]: what was written, or the error.
    Saved(Result<String, String>),
    /// A message for the log panel.
    Log(String),
    /// The worker stopped because of an internal error (a panic in the replay); the session
    /// is unusable. The text says what happened.
    Failed(String),
}
