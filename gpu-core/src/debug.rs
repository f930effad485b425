//! Observation of the GPU without coupling to any consumer (`architecture-and-style.md` §C5).
//!
//! The core calls an [`Observer`] at well-defined points: every register write (with its old and
//! new value), draw begin/end, per-draw detail (loaded vertex attributes with provenance, shaded
//! vertices, assembled and clipped primitives) and diagnostics. The `()` observer does nothing
//! and compiles away, so the replay hot path pays nothing. [`EventLog`] records everything as
//! plain data for the viewer and the CLI.
//!
//! Per-draw counters ([`DrawStats`]) include what a cost table needs (cache hits, shader
//! instructions, triangles clipped away and culled, fragments generated and killed by each
//! test, texture samples); [`DrawDetail`] records each assembled triangle's fate
//! ([`TriangleFate`]) and vertices. An observer may also lend the draw driver [`DebugBuffers`]
//! (primitive-ID and overdraw buffers, see [`buffers`]; [`DebugBufferRecorder`] does so).
//!
//! Diagnostics are for guest behaviour that the hardware tolerates (or hangs on) but a replayer
//! must survive: reads outside memory, unknown registers, shader budget overruns, etc.

use serde::{Deserialize, Serialize};

pub mod fragment;
pub use fragment::{FragmentFate, FragmentRecord, PixelProbe, ProbeBuffer};

use crate::budget::{BudgetResource, BudgetScope};
use crate::vertex::{OutputVertex, ScreenVertex};

pub mod buffers;
pub use buffers::{DebugBuffers, PrimitiveId, TargetBuffers};

/// Where a diagnostic came from and what it is about.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DiagKind {
    /// A read (vertex, index, texture, command list) touched unmapped memory.
    UnmappedRead {
        /// First physical address of the failed access.
        addr: u32,
        /// Length of the access in bytes.
        len: u64,
    },
    /// A write (framebuffer, engine output) touched unmapped memory.
    UnmappedWrite {
        /// First physical address of the failed access.
        addr: u32,
        /// Length of the access in bytes.
        len: u64,
    },
    /// A register id outside 0x000-0x2FF, or one with no known meaning.
    UnknownRegister {
        /// The register id.
        id: u32,
    },
    /// A shader invocation was stopped (budget, or another execution error).
    ShaderError,
    /// A draw was cut short to bound work (absurd vertex count, fetch failures).
    DrawTruncated,
    /// An upload FIFO received data beyond its storage.
    UploadOverflow,
    /// Command-list processing stopped (malformed list, jump loop, budget).
    CommandList,
    /// A configuration the model does not implement or that the hardware would hang on.
    Unsupported,
    /// A work budget ([`crate::budget::WorkBudget`]) ran out: the rest of the scope is skipped.
    Budget {
        /// The submission, frame or trace that ran out.
        scope: BudgetScope,
        /// What it ran out of.
        resource: BudgetResource,
    },
    /// Anything else worth telling the user.
    Other,
}

/// One diagnostic, with the draw it belongs to (if any) and a human-readable detail.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// What kind of problem.
    pub kind: DiagKind,
    /// Index of the draw (0-based, counted over the whole replay) the problem happened in.
    pub draw: Option<u64>,
    /// Explanation for people.
    pub detail: String,
}

/// Which register file a write went to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RegSpace {
    /// PICA internal register (id 0x000-0x2FF), normally from a command list.
    Pica,
    /// External GPU MMIO register (physical address).
    External,
}

/// A register write as executed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RegWriteEvent {
    /// Register space.
    pub space: RegSpace,
    /// Register id (PICA) or physical address (external).
    pub id: u32,
    /// Byte-enable mask (bit n enables byte n); 0xF for external writes.
    pub mask: u8,
    /// The parameter as written (before masking).
    pub param: u32,
    /// Stored value before the write.
    pub old: u32,
    /// Stored value after the write.
    pub new: u32,
    /// Physical address of the command-list word that carried the parameter, if any.
    pub source_addr: Option<u32>,
}

impl RegWriteEvent {
    /// True if the mask enabled no byte, so the stored value could not change.
    pub fn is_ineffective(&self) -> bool {
        self.mask == 0
    }

    /// True if the stored value did not change (the write may still have had a side effect).
    pub fn is_redundant(&self) -> bool {
        self.old == self.new
    }
}

/// Primitive topology of a draw (PRIMITIVE_CONFIG 0x25E bits 8-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Topology {
    /// Independent triangles.
    List,
    /// Triangle strip.
    Strip,
    /// Triangle fan.
    Fan,
    /// Geometry-shader primitives (triangles with a winding flag).
    Geometry,
}

impl Topology {
    /// Decodes the 2-bit topology field.
    pub fn from_bits(bits: u32) -> Self {
        match bits & 3 {
            0 => Topology::List,
            1 => Topology::Strip,
            2 => Topology::Fan,
            _ => Topology::Geometry,
        }
    }
}

/// How a draw was started.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum DrawKind {
    /// DRAWARRAYS (0x22E).
    Arrays,
    /// DRAWELEMENTS (0x22F).
    Elements,
    /// Immediate-mode vertices through FIXEDATTRIB_INDEX = 0xF.
    Immediate,
}

/// A texture a draw samples (enabled unit 0-2 whose colour the combiners may read).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextureRef {
    /// Texture unit 0-2.
    pub unit: u8,
    /// Physical address of level 0.
    pub addr: u32,
    /// Width in texels.
    pub width: u32,
    /// Height in texels.
    pub height: u32,
    /// Raw format id (0-13 valid).
    pub format: u32,
}

/// Summary of a draw at its start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawInfo {
    /// Draw index over the whole replay (0-based).
    pub draw: u64,
    /// How it was started.
    pub kind: DrawKind,
    /// Topology.
    pub topology: Topology,
    /// Number of vertices (indices) requested.
    pub count: u32,
    /// Whether the geometry shader is in use.
    pub geometry_shader: bool,
    /// Content hash of the vertex shader program (code + operand descriptors) and its entry.
    pub vs_program: (u64, u32),
    /// Content hash and entry of the geometry shader, when in use.
    pub gs_program: Option<(u64, u32)>,
    /// Enabled texture units 0-2.
    pub textures: [Option<TextureRef>; 3],
}

/// Counters for a finished draw.
///
/// The per-fragment cost counters ([`DrawStats::fragments_alpha_failed`],
/// [`DrawStats::fragments_stencil_failed`], [`DrawStats::fragments_depth_failed`],
/// [`DrawStats::texels_fetched`]: the cost table's, shown nowhere by default) are counted only
/// when the observer asks for them ([`Observer::wants_costs`]) and are 0 otherwise, so a replay
/// that nobody reads costs from runs per-fragment code without them. Every other field is
/// counted in every mode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DrawStats {
    /// Vertices fetched by the loader.
    pub vertices_loaded: u64,
    /// Vertex-shader invocations.
    pub vs_invocations: u64,
    /// Geometry-shader invocations.
    pub gs_invocations: u64,
    /// Triangles out of primitive assembly.
    pub triangles_assembled: u64,
    /// Triangles left after clipping (fan triangles counted individually).
    pub triangles_clipped: u64,
    /// Triangles that reached the rasterizer after culling.
    pub triangles_rasterized: u64,
    /// Fragments that passed every test and were written.
    pub fragments_written: u64,
    /// Vertices taken from the post-transform vertex cache instead of being loaded and shaded
    /// (indexed draws; the model's cache covers one draw, see
    /// [`crate::geometry::vertex_loader::VertexCacheMode`]). Includes an index repeated inside
    /// one shading batch, which is shaded once.
    #[serde(default)]
    pub vertex_cache_hits: u64,
    /// Vertex-shader instructions executed (all invocations of the draw).
    #[serde(default)]
    pub vs_instructions: u64,
    /// Geometry-shader instructions executed.
    #[serde(default)]
    pub gs_instructions: u64,
    /// Assembled triangles that clipping removed entirely.
    #[serde(default)]
    pub triangles_clipped_away: u64,
    /// Triangles (after clipping) removed by face culling.
    #[serde(default)]
    pub triangles_culled: u64,
    /// Fragments produced by the rasteriser (covered pixels inside scissor and target).
    #[serde(default)]
    pub fragments_generated: u64,
    /// Fragments discarded by the alpha test (a cost counter: 0 unless
    /// [`Observer::wants_costs`]).
    #[serde(default)]
    pub fragments_alpha_failed: u64,
    /// Fragments discarded by the stencil test (a cost counter: 0 unless
    /// [`Observer::wants_costs`]).
    #[serde(default)]
    pub fragments_stencil_failed: u64,
    /// Fragments discarded by the depth test (a cost counter: 0 unless
    /// [`Observer::wants_costs`]).
    #[serde(default)]
    pub fragments_depth_failed: u64,
    /// Texture samples: one per generated fragment per texture unit (0-3) the draw samples.
    /// [`DrawStats::texels_fetched`] counts the texels those samples read.
    #[serde(default)]
    pub texture_samples: u64,
    /// Texels fetched by texture units 0-2 (including shadow and cube lookups): 1 per nearest
    /// tap or shadow compare, 4 per bilinear tap (border taps included), summed over the one or
    /// two mip levels a lookup reads (trilinear: 8, or 4 when the LOD falls on a level). The
    /// procedural texture (unit 3) reads no texture memory and adds none. A cost counter: 0
    /// unless [`Observer::wants_costs`].
    #[serde(default)]
    pub texels_fetched: u64,
}

impl DrawStats {
    /// Adds every counter of `other` (sums over draws; the pixels of an immediate-mode draw's
    /// vertices added to its draw).
    pub fn add(&mut self, other: &DrawStats) {
        self.vertices_loaded += other.vertices_loaded;
        self.vs_invocations += other.vs_invocations;
        self.gs_invocations += other.gs_invocations;
        self.triangles_assembled += other.triangles_assembled;
        self.triangles_clipped += other.triangles_clipped;
        self.triangles_rasterized += other.triangles_rasterized;
        self.fragments_written += other.fragments_written;
        self.vertex_cache_hits += other.vertex_cache_hits;
        self.vs_instructions += other.vs_instructions;
        self.gs_instructions += other.gs_instructions;
        self.triangles_clipped_away += other.triangles_clipped_away;
        self.triangles_culled += other.triangles_culled;
        self.fragments_generated += other.fragments_generated;
        self.fragments_alpha_failed += other.fragments_alpha_failed;
        self.fragments_stencil_failed += other.fragments_stencil_failed;
        self.fragments_depth_failed += other.fragments_depth_failed;
        self.texture_samples += other.texture_samples;
        self.texels_fetched += other.texels_fetched;
    }
}

/// What happened to an assembled triangle between clipping and rasterisation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TriangleFate {
    /// Not clipped and rasterised.
    Drawn,
    /// Cut by a clip plane; at least one piece was rasterised.
    PartiallyClipped,
    /// Removed entirely by clipping.
    ClippedAway,
    /// Every piece was removed by face culling.
    Culled,
    /// Zero area (covers nothing).
    Degenerate,
    /// NaN, infinite or absurd window positions (skipped, reported as a diagnostic).
    Invalid,
}

impl TriangleFate {
    /// Short lower-case name (`drawn`, `partially clipped`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TriangleFate::Drawn => "drawn",
            TriangleFate::PartiallyClipped => "partially clipped",
            TriangleFate::ClippedAway => "clipped away",
            TriangleFate::Culled => "culled",
            TriangleFate::Degenerate => "degenerate",
            TriangleFate::Invalid => "invalid",
        }
    }
}

/// The vertices (indices in the draw, [`ShadedVertex::index_in_draw`]) an assembled triangle
/// was made of; `None` for triangles a geometry shader emitted.
pub type TriangleVertices = Option<[u32; 3]>;

/// Where an input attribute's value came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AttribSource {
    /// Loaded from an attribute buffer.
    Buffer {
        /// Loader (0-11).
        loader: u8,
        /// Physical address of the first component.
        addr: u32,
    },
    /// A fixed attribute value (FIXEDATTRIB), used because the fixed mask selects it.
    Fixed,
    /// Not provided by any loader or fixed value: the previous contents.
    Default,
    /// An immediate-mode vertex.
    Immediate,
}

/// One vertex as loaded, before the vertex shader.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LoadedVertex {
    /// Index in the draw (k = 0..count).
    pub index_in_draw: u32,
    /// Vertex id (the index buffer value or k + VERTEX_OFFSET).
    pub vertex_id: u32,
    /// Attribute slots 0..n with their values (f32 x, y, z, w).
    pub attrs: Vec<[f32; 4]>,
    /// Provenance per slot.
    pub sources: Vec<AttribSource>,
}

/// One shaded vertex: the shader's compacted output registers and the vertex by semantic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShadedVertex {
    /// Index in the draw.
    pub index_in_draw: u32,
    /// Output registers in slot order (after OUTMAP_MASK compaction).
    pub outputs: Vec<[f32; 4]>,
    /// The vertex after the output map.
    pub vertex: OutputVertex,
}

/// Detailed per-draw data, recorded only when the observer asks for it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DrawDetail {
    /// The PICA register file (0x300 words) as the draw saw it.
    pub regs: Vec<u32>,
    /// Vertices as loaded.
    pub loaded: Vec<LoadedVertex>,
    /// Vertices as shaded.
    pub shaded: Vec<ShadedVertex>,
    /// Triangles out of primitive assembly (clip space).
    pub assembled: Vec<[OutputVertex; 3]>,
    /// Triangles after clipping and the viewport transform.
    pub clipped: Vec<[ScreenVertex; 3]>,
    /// How many records of each list are kept ([`Observer::draw_detail_limits`]).
    #[serde(default)]
    pub limits: DetailLimits,
    /// Records not kept because of `limits`: loaded, shaded, assembled, clipped.
    #[serde(default)]
    pub dropped: [u64; 4],
    /// Per assembled triangle (parallel to `assembled`): what clipping, culling and setup did
    /// to it.
    #[serde(default)]
    pub fates: Vec<TriangleFate>,
    /// Per assembled triangle (parallel to `assembled`): its vertices' indices in the draw.
    #[serde(default)]
    pub triangle_vertices: Vec<TriangleVertices>,
    /// Per clipped triangle (parallel to `clipped`): the assembled triangle it is a piece of.
    #[serde(default)]
    pub clipped_from: Vec<u32>,
    /// Per clipped triangle (parallel to `clipped`): true if face culling removed it.
    #[serde(default)]
    pub clipped_culled: Vec<bool>,
    /// Geometry-shader invocations in order (draws with the GS enabled), at most
    /// [`DetailLimits::gs_invocations`] of them.
    #[serde(default)]
    pub gs_invocations: Vec<GsInvocation>,
    /// GS invocations not kept because of `limits`.
    #[serde(default)]
    pub gs_invocations_dropped: u64,
    /// Draw positions (index in draw) of the VS vertices fed to the GS since its last
    /// invocation: the inputs of the next recorded invocation.
    #[serde(skip)]
    pub gs_pending_vertices: Vec<u32>,
}

/// A shader unit's registers that persist between invocations, as plain data (the
/// serialisable form of [`shader_unit::interp::UnitState`]).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct UnitRegs {
    /// v0-v15.
    pub inputs: [[f32; 4]; 16],
    /// r0-r15.
    pub temps: [[f32; 4]; 16],
    /// o0-o15 (the bank instructions write).
    pub outputs: [[f32; 4]; 16],
    /// The other output bank (made current by the next EMIT).
    pub output_bank: [[f32; 4]; 16],
    /// a0.x, a0.y.
    pub a0: [i32; 2],
    /// Loop counter aL.
    pub al: i32,
    /// cmp.x, cmp.y.
    pub cmp: [bool; 2],
    /// Emitter: slot the next EMIT writes (SETEMIT vertex id).
    pub emit_slot: u8,
    /// Emitter: the next EMIT submits a primitive.
    pub emit_primitive: bool,
    /// Emitter: that primitive has the inverted winding flag.
    pub emit_winding: bool,
    /// Emitter buffer (all 16 output registers per slot).
    pub emit_buffer: Vec<[[f32; 4]; 16]>,
}

impl UnitRegs {
    /// Copies an interpreter's unit state.
    pub fn from_state(s: &shader_unit::interp::UnitState) -> Self {
        Self {
            inputs: s.inputs,
            temps: s.temps,
            outputs: s.outputs,
            output_bank: s.output_bank,
            a0: s.a0,
            al: s.al,
            cmp: s.cmp,
            emit_slot: s.emitter.vertex_id,
            emit_primitive: s.emitter.prim_emit,
            emit_winding: s.emitter.winding,
            emit_buffer: s.emitter.buffer.to_vec(),
        }
    }

    /// The interpreter's unit state these registers describe (missing emitter slots are 0).
    pub fn to_state(&self) -> shader_unit::interp::UnitState {
        let mut s = shader_unit::interp::UnitState {
            inputs: self.inputs,
            temps: self.temps,
            outputs: self.outputs,
            output_bank: self.output_bank,
            a0: self.a0,
            al: self.al,
            cmp: self.cmp,
            ..Default::default()
        };
        s.emitter.vertex_id = self.emit_slot;
        s.emitter.prim_emit = self.emit_primitive;
        s.emitter.winding = self.emit_winding;
        for (d, v) in s.emitter.buffer.iter_mut().zip(&self.emit_buffer) {
            *d = *v;
        }
        s
    }
}

/// One EMIT of a geometry-shader invocation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GsEmit {
    /// Emitter slot written (SETEMIT vertex id, 0-3).
    pub slot: u8,
    /// True when this EMIT submitted a primitive (SETEMIT primitive flag): emitter slots 0, 1,
    /// 2 went to primitive assembly.
    pub primitive: bool,
    /// The primitive's winding flag (SETEMIT inverted winding), meaningful with `primitive`.
    pub winding: bool,
    /// The emitted output registers, compacted by the GS output mask (slot order).
    pub outputs: Vec<[f32; 4]>,
    /// The emitted vertex by semantic (after the output map).
    pub vertex: OutputVertex,
}

/// One geometry-shader invocation of a draw, as the GS unit received and ran it: enough to
/// re-run it exactly on the reference interpreter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GsInvocation {
    /// Invocation number in the draw (0-based, counting dropped ones).
    pub index: u32,
    /// Draw positions (index in draw) of the VS-shaded vertices whose outputs this invocation
    /// received, in order.
    pub vertices: Vec<u32>,
    /// Uniform input modes (variable/fixed primitive): the first float uniform the input
    /// buffer wrote for this invocation and how many (variable mode includes the count in c0).
    /// `None` in point mode, where the inputs are v0-v15 (`state.inputs`).
    pub input_uniforms: Option<(u8, u8)>,
    /// The unit's registers before the first instruction (inputs loaded).
    pub state: UnitRegs,
    /// GS float uniforms c0-c95 as the invocation saw them.
    pub float_uniforms: Vec<[f32; 4]>,
    /// GS bool uniforms (bit n = bn; b15 is set after every invocation).
    pub bool_uniforms: u16,
    /// GS integer uniforms i0-i3 (x = iterations - 1, y = start, z = step, w).
    pub int_uniforms: [[u8; 4]; 4],
    /// Entry point (word offset).
    pub entry: u32,
    /// Every EMIT in order, at most [`GsInvocation::MAX_EMITS`].
    pub emits: Vec<GsEmit>,
    /// EMITs beyond [`GsInvocation::MAX_EMITS`], counted only.
    pub emits_dropped: u64,
    /// Instructions executed.
    pub instructions: u64,
    /// Why the invocation stopped early (budget, bad PC), if it did.
    pub error: Option<String>,
}

impl GsInvocation {
    /// Most EMITs kept per invocation.
    pub const MAX_EMITS: usize = 256;

    /// The uniforms as an interpreter input.
    pub fn uniforms(&self) -> shader_unit::interp::Uniforms {
        let mut u = shader_unit::interp::Uniforms::default();
        for (d, v) in u.f.iter_mut().zip(&self.float_uniforms) {
            *d = *v;
        }
        u.i = self.int_uniforms;
        for (n, b) in u.b.iter_mut().enumerate() {
            *b = self.bool_uniforms >> n & 1 != 0;
        }
        u
    }

    /// Number of primitives the invocation submitted.
    pub fn primitives(&self) -> usize {
        self.emits.iter().filter(|e| e.primitive).count()
    }
}

/// Per-list caps on [`DrawDetail`]: the first N records of each list are kept, the rest only
/// counted (in [`DrawDetail::dropped`]), so that a draw of 2^20 vertices cannot make an
/// observer hold gigabytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DetailLimits {
    /// Loaded vertices kept.
    pub loaded: usize,
    /// Shaded vertices kept.
    pub shaded: usize,
    /// Assembled and clipped triangles kept (each list).
    pub triangles: usize,
    /// Geometry-shader invocations kept (each about 4 KB plus its emits).
    #[serde(default = "DetailLimits::default_gs_invocations")]
    pub gs_invocations: usize,
}

impl DetailLimits {
    /// The default caps: 2^18 records per list (about 100 MB for the largest list).
    pub const DEFAULT: DetailLimits = DetailLimits {
        loaded: 1 << 18,
        shaded: 1 << 18,
        triangles: 1 << 18,
        gs_invocations: 1 << 12,
    };

    fn default_gs_invocations() -> usize {
        Self::DEFAULT.gs_invocations
    }
}

impl Default for DetailLimits {
    fn default() -> Self {
        Self::DEFAULT
    }
}

impl DrawDetail {
    /// Empty detail for a draw that saw `regs`, keeping at most `limits` records per list.
    pub fn new(regs: &[u32], limits: DetailLimits) -> Self {
        Self {
            regs: regs.to_vec(),
            limits,
            ..Self::default()
        }
    }

    /// Adds a loaded vertex (or counts it when the list is full).
    pub fn push_loaded(&mut self, v: LoadedVertex) {
        if self.loaded.len() < self.limits.loaded {
            self.loaded.push(v);
        } else {
            self.dropped[0] += 1;
        }
    }

    /// Adds a shaded vertex (or counts it when the list is full).
    pub fn push_shaded(&mut self, v: ShadedVertex) {
        if self.shaded.len() < self.limits.shaded {
            self.shaded.push(v);
        } else {
            self.dropped[1] += 1;
        }
    }

    /// Adds an assembled triangle (or counts it when the list is full).
    pub fn push_assembled(&mut self, t: [OutputVertex; 3]) {
        if self.assembled.len() < self.limits.triangles {
            self.assembled.push(t);
        } else {
            self.dropped[2] += 1;
        }
    }

    /// Adds a clipped triangle (or counts it when the list is full).
    pub fn push_clipped(&mut self, t: [ScreenVertex; 3]) {
        if self.clipped.len() < self.limits.triangles {
            self.clipped.push(t);
        } else {
            self.dropped[3] += 1;
        }
    }

    /// Adds a clipped triangle with the assembled triangle it came from and whether culling
    /// removed it (or counts it when the list is full).
    pub fn push_clipped_piece(&mut self, t: [ScreenVertex; 3], from: u32, culled: bool) {
        if self.clipped.len() < self.limits.triangles {
            self.clipped.push(t);
            self.clipped_from.push(from);
            self.clipped_culled.push(culled);
        } else {
            self.dropped[3] += 1;
        }
    }

    /// Records the fate and vertices of assembled triangle `i` (kept only while `i` is within
    /// the kept part of `assembled`).
    pub fn set_fate(&mut self, i: u32, fate: TriangleFate, vertices: TriangleVertices) {
        if (i as usize) < self.limits.triangles && self.fates.len() == i as usize {
            self.fates.push(fate);
            self.triangle_vertices.push(vertices);
        }
    }

    /// Adds a geometry-shader invocation (or counts it when the list is full).
    pub fn push_gs_invocation(&mut self, g: GsInvocation) {
        if self.gs_invocations.len() < self.limits.gs_invocations {
            self.gs_invocations.push(g);
        } else {
            self.gs_invocations_dropped += 1;
        }
    }

    /// True when the next GS invocation will be kept (so the caller may skip copying state).
    pub fn keeps_gs_invocation(&self) -> bool {
        self.gs_invocations.len() < self.limits.gs_invocations
    }

    /// True when some record was not kept.
    pub fn truncated(&self) -> bool {
        self.dropped.iter().any(|&n| n > 0) || self.gs_invocations_dropped > 0
    }
}

/// Receives what the GPU does. Every method has a no-op default.
pub trait Observer {
    /// True if the observer wants [`DrawDetail`] (costly: one record per vertex and triangle).
    fn wants_draw_detail(&self) -> bool {
        false
    }
    /// How much [`DrawDetail`] to keep per draw when [`Observer::wants_draw_detail`] is true.
    fn draw_detail_limits(&self) -> DetailLimits {
        DetailLimits::DEFAULT
    }
    /// True if the observer reads the per-fragment cost counters of [`DrawStats`] (the cost
    /// table: fragments killed by each test, texels fetched). Asked once per draw; when false
    /// the pixel pipeline runs without them (they read 0) and early depth skips the texture
    /// lookups of the fragments it kills. Images, depth/stencil, diagnostics and the other
    /// counters are the same either way.
    fn wants_costs(&self) -> bool {
        false
    }
    /// True if this observer accepts a draw's `draw_end` (with its pixel diagnostics) after
    /// later draws began: with several pixel threads, the pixels of small draws may then wait
    /// and be drawn in parallel together with the following draws into the same buffers
    /// (`draw/deferred.rs`). Events stay in draw order among themselves, and memory is complete
    /// whenever the command processor is outside a command list. The default is false: every
    /// draw ends before the next begins.
    fn allows_deferred_pixels(&self) -> bool {
        false
    }
    /// A register write was executed.
    fn reg_write(&mut self, _ev: &RegWriteEvent) {}
    /// A draw is about to start.
    fn draw_begin(&mut self, _info: &DrawInfo) {}
    /// A draw finished; `detail` is `Some` when [`Observer::wants_draw_detail`] said so.
    fn draw_end(&mut self, _info: &DrawInfo, _stats: &DrawStats, _detail: Option<DrawDetail>) {}
    /// Something went wrong that the replay survived.
    fn diagnostic(&mut self, _diag: &Diagnostic) {}
    /// An external engine ran (memory fill, display transfer, texture copy, command list).
    fn engine(&mut self, _ev: &EngineEvent) {}
    /// Checked after every command-list register write: returning true pauses the command
    /// processor there (the list can be resumed). Used by time travel to stop at a position.
    fn stop_requested(&self) -> bool {
        false
    }
    /// True if the observer wants [`StageTimes`] per draw (benchmarks: costs a clock read per
    /// triangle and per sampled fragment).
    fn wants_stage_times(&self) -> bool {
        false
    }
    /// Where a draw's time went, reported before [`Observer::draw_end`] when
    /// [`Observer::wants_stage_times`] said so.
    fn stage_times(&mut self, _times: &StageTimes) {}
    /// One fragment at the pixel probe (see [`PixelProbe`]), reported after the draw's
    /// pixels are processed and before [`Observer::draw_end`]. Only called while a probe is set.
    fn fragment(&mut self, _rec: &FragmentRecord) {}
    /// Called at the start of every draw: an observer that wants the primitive-ID and overdraw
    /// buffers ([`DebugBuffers`]) lends them to the draw, which records into them (on the
    /// reference pixel path) and gives them back through [`Observer::return_debug_buffers`].
    fn take_debug_buffers(&mut self) -> Option<Box<DebugBuffers>> {
        None
    }
    /// Gives back the buffers lent by [`Observer::take_debug_buffers`] at the end of a draw.
    // The box is handed back as it was lent: moving it out of the box would copy the struct.
    #[allow(clippy::boxed_local)]
    fn return_debug_buffers(&mut self, _buffers: Box<DebugBuffers>) {}
}

/// An observer that records [`DebugBuffers`] (and clears a target's buffers when a memory fill
/// overwrites it), wrapping another observer.
#[derive(Debug)]
pub struct DebugBufferRecorder<'a, O: Observer> {
    /// The buffers (lent to draws while they run).
    pub buffers: Option<Box<DebugBuffers>>,
    /// The observer every event is forwarded to.
    pub inner: &'a mut O,
}

impl<'a, O: Observer> DebugBufferRecorder<'a, O> {
    /// A recorder with empty buffers forwarding to `inner`.
    pub fn new(inner: &'a mut O) -> Self {
        Self {
            buffers: Some(Box::default()),
            inner,
        }
    }

    /// The recorded buffers.
    pub fn finish(self) -> DebugBuffers {
        self.buffers.map(|b| *b).unwrap_or_default()
    }
}

impl<O: Observer> Observer for DebugBufferRecorder<'_, O> {
    fn wants_draw_detail(&self) -> bool {
        self.inner.wants_draw_detail()
    }
    fn wants_costs(&self) -> bool {
        self.inner.wants_costs()
    }
    fn draw_detail_limits(&self) -> DetailLimits {
        self.inner.draw_detail_limits()
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.inner.reg_write(ev);
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.inner.draw_begin(info);
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, detail: Option<DrawDetail>) {
        self.inner.draw_end(info, stats, detail);
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        self.inner.diagnostic(diag);
    }
    fn engine(&mut self, ev: &EngineEvent) {
        if let (
            EngineEvent::MemoryFill {
                written: Some((start, len)),
                ..
            },
            Some(b),
        ) = (ev, self.buffers.as_mut())
        {
            let end = u64::from(*start)
                .saturating_add(*len)
                .min(u64::from(u32::MAX)) as u32;
            b.memory_filled(*start, end);
        }
        self.inner.engine(ev);
    }
    fn stop_requested(&self) -> bool {
        self.inner.stop_requested()
    }
    fn wants_stage_times(&self) -> bool {
        self.inner.wants_stage_times()
    }
    fn stage_times(&mut self, times: &StageTimes) {
        self.inner.stage_times(times);
    }
    fn take_debug_buffers(&mut self) -> Option<Box<DebugBuffers>> {
        self.buffers.take()
    }
    fn return_debug_buffers(&mut self, buffers: Box<DebugBuffers>) {
        self.buffers = Some(buffers);
    }
    fn fragment(&mut self, rec: &FragmentRecord) {
        self.inner.fragment(rec);
    }
}

/// Where one draw's time went, by pipeline stage (measured only for observers that ask, see
/// [`Observer::wants_stage_times`]). The split inside the pixel stage is an estimate: one
/// fragment in [`StageTimes::SAMPLE_EVERY`] is timed and the result scaled.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct StageTimes {
    /// Vertex loading, vertex and geometry shading, primitive assembly, clipping, viewport:
    /// the draw's time outside the pixel pipeline.
    pub geometry: std::time::Duration,
    /// Triangle setup, rasterisation and interpolation: the pixel pipeline's time minus the
    /// per-fragment work below.
    pub raster: std::time::Duration,
    /// Texture units 0-3 (procedural texture included) and fragment lighting (estimated).
    pub texture: std::time::Duration,
    /// Colour combiners and the fragment operations, from the alpha test to the colour write
    /// (estimated).
    pub fragment_ops: std::time::Duration,
}

impl StageTimes {
    /// One fragment in this many is timed for the split of the pixel stage.
    pub const SAMPLE_EVERY: u32 = 16;

    /// Adds another draw's times.
    pub fn add(&mut self, o: &StageTimes) {
        self.geometry += o.geometry;
        self.raster += o.raster;
        self.texture += o.texture;
        self.fragment_ops += o.fragment_ops;
    }
}

/// The no-op observer (it takes late draw ends: nothing reads them).
impl Observer for () {
    fn allows_deferred_pixels(&self) -> bool {
        true
    }
}

/// What an external engine did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum EngineEvent {
    /// Memory fill unit `unit` filled `[start, end)`.
    MemoryFill {
        /// Unit 0 or 1.
        unit: u8,
        /// First physical address.
        start: u32,
        /// One past the last physical address.
        end: u32,
        /// Fill value.
        value: u32,
        /// Range actually written (first address, length), if any.
        written: Option<(u32, u64)>,
    },
    /// Display transfer or texture copy from `input` to `output`.
    Transfer {
        /// Source physical address.
        input: u32,
        /// Destination physical address.
        output: u32,
        /// True for texture copy (flags bit 3).
        texture_copy: bool,
        /// Range actually written (first address, length), if any.
        written: Option<(u32, u64)>,
    },
    /// A command list was submitted.
    CommandList {
        /// Physical address.
        addr: u32,
        /// Size in bytes.
        size: u32,
    },
}

/// One recorded event.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GpuEvent {
    /// A register write.
    RegWrite(RegWriteEvent),
    /// A draw started.
    DrawBegin(DrawInfo),
    /// A draw ended.
    DrawEnd {
        /// The draw.
        info: DrawInfo,
        /// Its counters.
        stats: DrawStats,
    },
    /// A diagnostic.
    Diagnostic(Diagnostic),
    /// An external engine ran.
    Engine(EngineEvent),
}

/// An observer that records every event (and optionally per-draw detail).
#[derive(Clone, Debug, Default)]
pub struct EventLog {
    /// Events in execution order.
    pub events: Vec<GpuEvent>,
    /// Per-draw detail, `(draw index, detail)`, when `record_detail` is on.
    pub details: Vec<(u64, DrawDetail)>,
    /// Whether to ask for per-draw detail.
    pub record_detail: bool,
    /// Stop recording register writes after this many events (bounded memory); counted in
    /// `dropped`.
    pub max_events: usize,
    /// Events not recorded because of `max_events`.
    pub dropped: u64,
}

impl EventLog {
    /// A log that keeps at most `max_events` events.
    pub fn new(max_events: usize, record_detail: bool) -> Self {
        Self {
            events: Vec::new(),
            details: Vec::new(),
            record_detail,
            max_events,
            dropped: 0,
        }
    }

    fn push(&mut self, ev: GpuEvent) {
        if self.events.len() < self.max_events {
            self.events.push(ev);
        } else {
            self.dropped += 1;
        }
    }

    /// The diagnostics recorded so far.
    pub fn diagnostics(&self) -> impl Iterator<Item = &Diagnostic> {
        self.events.iter().filter_map(|e| match e {
            GpuEvent::Diagnostic(d) => Some(d),
            _ => None,
        })
    }
}

impl Observer for EventLog {
    fn wants_draw_detail(&self) -> bool {
        self.record_detail
    }
    /// The log records every event as it happened, the draws' cost counters included.
    fn wants_costs(&self) -> bool {
        true
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.push(GpuEvent::RegWrite(*ev));
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.push(GpuEvent::DrawBegin(*info));
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, detail: Option<DrawDetail>) {
        self.push(GpuEvent::DrawEnd {
            info: *info,
            stats: *stats,
        });
        if let Some(d) = detail {
            self.details.push((info.draw, d));
        }
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        self.push(GpuEvent::Diagnostic(diag.clone()));
    }
    fn engine(&mut self, ev: &EngineEvent) {
        self.push(GpuEvent::Engine(ev.clone()));
    }
}

/// Diagnostics only, for callers that want errors but not the full log.
#[derive(Clone, Debug, Default)]
pub struct DiagnosticsOnly {
    /// The diagnostics, at most `limit` of them.
    pub diagnostics: Vec<Diagnostic>,
    /// Diagnostics not kept because of the limit.
    pub dropped: u64,
    /// Maximum number kept.
    pub limit: usize,
}

impl Observer for DiagnosticsOnly {
    fn diagnostic(&mut self, diag: &Diagnostic) {
        if self.diagnostics.len() < self.limit {
            self.diagnostics.push(diag.clone());
        } else {
            self.dropped += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_log_is_bounded() {
        let mut log = EventLog::new(2, false);
        let ev = RegWriteEvent {
            space: RegSpace::Pica,
            id: 0x41,
            mask: 0xF,
            param: 1,
            old: 0,
            new: 1,
            source_addr: None,
        };
        for _ in 0..5 {
            log.reg_write(&ev);
        }
        assert_eq!(log.events.len(), 2);
        assert_eq!(log.dropped, 3);
    }

    #[test]
    fn write_classification() {
        let ev = RegWriteEvent {
            space: RegSpace::Pica,
            id: 0x41,
            mask: 0,
            param: 5,
            old: 7,
            new: 7,
            source_addr: Some(0x2000_0000),
        };
        assert!(ev.is_ineffective());
        assert!(ev.is_redundant());
        assert_eq!(Topology::from_bits(0x1), Topology::Strip);
        assert_eq!(Topology::from_bits(0x7), Topology::Geometry);
    }
}
