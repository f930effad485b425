//! Shading glue: the data paths around the shader units (`pica-core.md` §2.3, §5.2, §5.3, §6,
//! §8.1).
//!
//! * Input: loaded attribute slots ([`crate::geometry::vertex_loader::AttributeSet`]) and the register file.
//! * Output: shader input registers v0-v15 (through the input permutation), compacted output
//!   slots (through the output mask), [`OutputVertex`] records by semantic (through the output
//!   map), and — with a geometry shader — the GS inputs or uniforms filled in the configured GS
//!   input mode.
//! * Registers read, each decoded in one constructor:
//!   [`InputConfig::from_regs`]: INPUTBUFFER_CONFIG (B+0x09) bits 0-3, ATTRIBUTES_PERMUTATION
//!   LOW/HIGH (B+0x0B/0x0C); [`OutputMask::from_regs`]: OUTMAP_MASK (B+0x0D) — B = 0x2B0 (VS) or
//!   0x280 (GS); [`OutputMap::from_regs`]: SH_OUTMAP_TOTAL (0x04F), SH_OUTMAP_O0-O6
//!   (0x050-0x056); [`GsConfig::from_regs`]: GEOSTAGE_CONFIG (0x229), VSH_COM_MODE (0x244),
//!   VSH_OUTMAP_TOTAL1/2 (0x24A/0x251), GSH_MISC0 (0x252), GSH_MISC1 (0x254) and the GS unit's
//!   INPUTBUFFER_CONFIG (0x289).
//!
//! # Data flow of one vertex
//!
//! 1. Slot `a` of the attribute set goes to input register `permutation[a]` for
//!    `a < INPUTBUFFER_CONFIG[0:3] + 1` (\[C\]: the unit's own count, not 0x202's); registers no
//!    slot targets keep their previous contents.
//! 2. After the shader ran, the enabled output registers (OUTMAP_MASK bit i ↔ o_i) are
//!    **compacted** in ascending register order into slots 0, 1, 2, … (\[3DB\] pitfalls: mask 0x11
//!    puts o0 in slot 0 and o4 in slot 1).
//! 3. Without a GS, slot i component c goes to semantic `SH_OUTMAP_Oi` field c (§2.3). Semantics
//!    no component maps to stay 0 (\[C\]; \[3DB\]'s "value of 1" remark is ambiguous); 0x1F is a
//!    dropped component; 0x11 and 0x15 land in padding (accepted, invisible); 0x18-0x1E are
//!    invalid (\[C\] asserts) and are dropped with a [`ShadingDiag`]. The colour becomes
//!    `min(|c|, 1)` per component here, at the vertex (\[C\] and \[P\] agree).
//! 4. With a GS, the VS output slots (count `0x24A + 1`) feed [`GsInputBuffer`] instead, which
//!    fills GS inputs (point mode) or GS float uniforms (variable/fixed primitive modes) and says
//!    when the GS must run. The GS's EMIT output goes through the GS output mask and the same
//!    output map, then to primitive assembly with its winding flag ([`submit_emitted`]).
//!
//! # Running the shaders
//!
//! [`ShadingSetup::from_regs`] decodes everything above once per draw (through pica-cmd's
//! register catalogue, `pica_cmd::regs::Regs`). [`run_vertex_shader`] shades a batch of loaded
//! vertices through any `ShaderEngine` (the reference interpreter today) with the batch API and
//! writes each vertex's compacted output slots. [`route_vertex`] then hands one shaded vertex on:
//! to primitive assembly, or into the GS input buffer, running the GS (with an
//! [`EmitToAssembler`] sink that compacts, maps and assembles its primitives) whenever a batch is
//! complete.

use std::sync::Arc;

use shader_unit::decode::Program;
use shader_unit::interp::{
    BatchError, BatchStats, EmitSink, ExecError, Interpreter, RunStats, ShaderEngine, Uniforms,
    VertexBatch,
};

use pica_cmd::regs::Regs;
pub use pica_cmd::regs::ShaderUnit;
use pica_cmd::regs::pipeline::GeoStageMode;
pub use pica_cmd::regs::pipeline::GsInputMode;
use pica_cmd::regs::shader::ShaderUnitMode;

use crate::debug::{DiagKind, Diagnostic, DrawDetail, GsEmit, GsInvocation, UnitRegs};
use crate::geometry::assembly::PrimitiveAssembler;
use crate::vertex::OutputVertex;

/// A four-component shader register value (x, y, z, w).
pub type Vec4 = [f32; 4];

/// Number of input (v) and output (o) registers of a shader unit.
pub const NUM_REGS: usize = 16;
/// Number of float uniforms (c0-c95).
pub const NUM_FLOAT_UNIFORMS: usize = 96;
/// The GS bool uniform set to true after every GS invocation (\[C\]).
pub const GS_AFTER_INVOCATION_BOOL: usize = 15;

/// A configuration problem of the shading stages. Processing continues as described per variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ShadingDiag {
    /// An output-map component names a semantic 0x18-0x1E; the component is dropped.
    #[error("SH_OUTMAP_O{slot} component {component} has invalid semantic 0x{semantic:02X}")]
    InvalidSemantic {
        /// Output slot (0-6).
        slot: u8,
        /// Component (0 = x … 3 = w).
        component: u8,
        /// The semantic id.
        semantic: u8,
    },
    /// SH_OUTMAP_TOTAL names more slots than the output mask enables; the extra slots read 0.
    #[error("SH_OUTMAP_TOTAL is {total} but only {enabled} output registers are enabled")]
    OutmapBeyondOutputs {
        /// SH_OUTMAP_TOTAL.
        total: u8,
        /// Number of enabled output registers.
        enabled: u8,
    },
    /// The GS input mode byte is not 0, 1 or 2; point mode is used.
    #[error("unknown geometry-shader input mode {0}; treated as point mode")]
    UnknownGsMode(u32),
    /// A requirement \[C\] asserts for the GS configuration does not hold.
    #[error("geometry-shader configuration: {0}")]
    GsRequirement(&'static str),
    /// A GS input batch was still incomplete when the configuration was reset; it is dropped.
    #[error("incomplete geometry-shader input batch dropped")]
    GsBatchDropped,
    /// GS input data went past c95; the excess is dropped.
    #[error("geometry-shader input overflows the float uniforms (c{0} and up dropped)")]
    GsUniformOverflow(usize),
}

impl ShadingDiag {
    /// As a GPU diagnostic for the event log.
    pub fn to_diagnostic(&self, draw: Option<u64>) -> Diagnostic {
        let kind = match self {
            ShadingDiag::InvalidSemantic { .. } | ShadingDiag::OutmapBeyondOutputs { .. } => {
                DiagKind::Other
            }
            _ => DiagKind::Unsupported,
        };
        Diagnostic {
            kind,
            draw,
            detail: self.to_string(),
        }
    }
}

/// Input permutation and count of one shader unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputConfig {
    /// Number of attribute slots copied (INPUTBUFFER_CONFIG bits 0-3, plus one; 1-16).
    pub count: u8,
    /// `permutation[a]` = input register (0-15) that attribute slot `a` goes to.
    pub permutation: [u8; NUM_REGS],
}

impl InputConfig {
    /// Decodes the input configuration (INPUTBUFFER_CONFIG bits 0-3, ATTRIBUTES_PERMUTATION
    /// LOW/HIGH) of `unit` through the register catalogue.
    pub fn from_regs(regs: &[u32; 0x300], unit: ShaderUnit) -> Self {
        let c = Regs::new(regs).shader_config(unit);
        Self {
            // ok: a 4-bit field plus one is at most 16.
            count: c.input.input_count() as u8,
            permutation: c.permutation.map(|r| r & 0xF),
        }
    }

    /// The input registers some slot below `count` is copied to (bit n = v_n). Registers outside
    /// this mask keep their previous contents.
    pub fn register_mask(&self) -> u16 {
        self.permutation
            .iter()
            .take(usize::from(self.count))
            .fold(0, |m, &r| m | (1 << (r & 0xF)))
    }

    /// Copies attribute slot `a` to `inputs[permutation[a]]` for `a < count`. Input registers
    /// that no slot targets keep their previous value.
    #[inline]
    pub fn load(&self, attrs: &[Vec4; NUM_REGS], inputs: &mut [Vec4; NUM_REGS]) {
        for (attr, &reg) in attrs
            .iter()
            .zip(&self.permutation)
            .take(usize::from(self.count))
        {
            // ok: `reg` is a nibble, always < 16.
            inputs[usize::from(reg & 0xF)] = *attr;
        }
    }
}

/// Which output registers a unit writes (OUTMAP_MASK) and how they are compacted.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OutputMask(pub u16);

impl OutputMask {
    /// Decodes OUTMAP_MASK of `unit` through the register catalogue.
    pub fn from_regs(regs: &[u32; 0x300], unit: ShaderUnit) -> Self {
        Self(Regs::new(regs).shader_config(unit).output_mask)
    }

    /// Number of enabled output registers (= number of output slots).
    pub fn count(self) -> usize {
        self.0.count_ones() as usize
    }

    /// The enabled output registers in ascending order.
    pub fn registers(self) -> impl Iterator<Item = usize> {
        (0..NUM_REGS).filter(move |&i| self.0 & (1 << i) != 0)
    }

    /// Compacts the enabled output registers into slots 0, 1, …; returns the slot count.
    /// Slots past the count are left untouched.
    #[inline]
    pub fn compact(self, outputs: &[Vec4; NUM_REGS], slots: &mut [Vec4; NUM_REGS]) -> usize {
        let mut n = 0;
        for (i, out) in outputs.iter().enumerate() {
            if self.0 & (1 << i) != 0 {
                slots[n] = *out;
                n += 1;
            }
        }
        n
    }
}

/// Index of each semantic in the 24-entry output record; semantic ids are record indices.
mod record {
    pub const COLOR: usize = 0x08;
    pub const TC0: usize = 0x0C;
    pub const TC1: usize = 0x0E;
    pub const TC0_W: usize = 0x10;
    pub const VIEW: usize = 0x12;
    pub const TC2: usize = 0x16;
    pub const LEN: usize = 0x18;
}

/// Semantic id of an unused (dropped) output component.
pub const SEMANTIC_UNUSED: u8 = 0x1F;

/// One routed output component: from `slot`.`component` to record entry `target`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Route {
    slot: u8,
    component: u8,
    target: u8,
}

/// The output map (SH_OUTMAP_*): which semantic each output-slot component carries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputMap {
    /// SH_OUTMAP_TOTAL (0-7): number of output slots mapped.
    pub total: u8,
    /// Raw semantic ids, `semantics[slot][component]` (5 bits each), for display.
    pub semantics: [[u8; 4]; 7],
    /// Problems noticed while decoding (invalid semantic ids).
    pub diagnostics: Vec<ShadingDiag>,
    routes: [Route; 28],
    route_count: usize,
}

impl OutputMap {
    /// Decodes SH_OUTMAP_TOTAL (0x04F bits 0-2) and SH_OUTMAP_O0-O6 (0x050-0x056) through the
    /// register catalogue.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        // ok: a 3-bit field.
        let total = (r.sh_outmap_total() & 7) as u8;
        let semantics: [[u8; 4]; 7] = std::array::from_fn(|slot| {
            r.sh_outmap(slot)
                .map(|m| m.components().map(|c| (c.raw() & 0x1F) as u8))
                .unwrap_or([SEMANTIC_UNUSED; 4])
        });
        let mut map = Self {
            total,
            semantics,
            diagnostics: Vec::new(),
            routes: [Route::default(); 28],
            route_count: 0,
        };
        for (slot, sems) in semantics.iter().enumerate().take(usize::from(total)) {
            for (component, &semantic) in sems.iter().enumerate() {
                if usize::from(semantic) < record::LEN {
                    map.routes[map.route_count] = Route {
                        slot: slot as u8,
                        component: component as u8,
                        target: semantic,
                    };
                    map.route_count += 1;
                } else if semantic != SEMANTIC_UNUSED {
                    map.diagnostics.push(ShadingDiag::InvalidSemantic {
                        slot: slot as u8,
                        component: component as u8,
                        semantic,
                    });
                }
            }
        }
        map
    }

    /// Checks the map against the number of output slots a unit produces.
    pub fn check_outputs(&self, enabled: usize) -> Option<ShadingDiag> {
        (usize::from(self.total) > enabled).then_some(ShadingDiag::OutmapBeyondOutputs {
            total: self.total,
            enabled: enabled.min(16) as u8,
        })
    }

    /// Builds the vertex from the first `slot_count` compacted output slots. Slots at or past
    /// `slot_count` read as 0; semantics nothing maps to are [`UNMAPPED_SEMANTIC_VALUE`]; the
    /// colour is `min(|c|, 1)`.
    ///
    /// Components mapped to the same semantic twice: the later slot/component wins (the order
    /// \[C\] writes them in).
    #[inline]
    pub fn to_vertex(&self, slots: &[Vec4; NUM_REGS], slot_count: usize) -> OutputVertex {
        // HW: hardware fact SH-15 (Citra PR #6966, GPUCode's hardware test): a semantic that no
        // SH_OUTMAP entry maps reads 1.0 in every component.
        let mut rec = [UNMAPPED_SEMANTIC_VALUE; record::LEN];
        for r in &self.routes[..self.route_count] {
            let s = usize::from(r.slot);
            let value = if s < slot_count {
                slots[s][usize::from(r.component & 3)]
            } else {
                0.0
            };
            // ok: targets are < 24 by construction.
            rec[usize::from(r.target) % record::LEN] = value;
        }
        let arr4 = |i: usize| [rec[i], rec[i + 1], rec[i + 2], rec[i + 3]];
        let color = arr4(record::COLOR).map(clamp_color);
        OutputVertex {
            pos: arr4(0),
            quat: arr4(4),
            color,
            tc0: [rec[record::TC0], rec[record::TC0 + 1]],
            tc1: [rec[record::TC1], rec[record::TC1 + 1]],
            tc2: [rec[record::TC2], rec[record::TC2 + 1]],
            tc0_w: rec[record::TC0_W],
            view: [
                rec[record::VIEW],
                rec[record::VIEW + 1],
                rec[record::VIEW + 2],
            ],
        }
    }
}

/// The value of every component of a rasterizer semantic (colour, texture coordinates,
/// quaternion, view, …) that no SH_OUTMAP entry maps: 1.0 (hardware fact SH-15; zero-initialising,
/// as picaview did before, is wrong).
pub const UNMAPPED_SEMANTIC_VALUE: f32 = 1.0;

/// Vertex colour clamp: `min(|c|, 1)`.
///
/// HW: \[C\] states that the hardware does this (\[P\] agrees) before clipping and interpolation.
/// UNVERIFIED: NaN. \[C\]'s `std::min(|NaN|, 1)` keeps NaN; we give 1 (Rust's `f32::min` ignores
/// a NaN operand), so the rasterizer never sees a NaN colour. Change here to keep NaN.
#[inline]
pub fn clamp_color(c: f32) -> f32 {
    c.abs().min(1.0)
}

/// Geometry-stage configuration, decoded once per draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GsConfig {
    /// GEOSTAGE_CONFIG bits 0-1 == 2: VS outputs go to the GS instead of primitive assembly.
    pub enabled: bool,
    /// GSH_MISC0 bits 0-7.
    pub mode: GsInputMode,
    /// VS output slots handed to the GS per vertex (VSH_OUTMAP_TOTAL1 bits 0-3, plus one).
    pub vs_output_count: u8,
    /// GS input registers filled per invocation in point mode (GS INPUTBUFFER_CONFIG bits 0-3,
    /// plus one).
    pub gs_input_count: u8,
    /// Fixed-primitive mode: vertices per invocation (GSH_MISC0 bits 8-11, plus one).
    pub fixed_vertex_count: u8,
    /// Fixed-primitive mode: uniforms per vertex (GSH_MISC0 bits 12-15, plus one).
    pub stride: u8,
    /// Fixed-primitive mode: first uniform written (GSH_MISC0 bits 16-19).
    pub start_uniform: u8,
    /// Variable-primitive mode: vertices per batch that deliver all outputs (GSH_MISC1 + 1).
    pub main_vertex_count: u32,
    /// Requirements \[C\] asserts that do not hold (processing continues).
    pub diagnostics: Vec<ShadingDiag>,
}

impl GsConfig {
    /// Decodes the geometry-stage registers (see the module doc) through the register
    /// catalogue.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let geo = r.geostage_config();
        let misc0 = r.gsh_misc0();
        let gs_input = r.shader_config(ShaderUnit::Geometry).input;
        let vs_outputs = r.vsh_outmap_total1();
        let mode = misc0.input_mode;
        let mut cfg = Self {
            enabled: geo.mode == GeoStageMode::GeometryShader,
            mode,
            // ok: 4-bit fields plus one are at most 16.
            vs_output_count: vs_outputs as u8,
            gs_input_count: gs_input.input_count() as u8,
            fixed_vertex_count: misc0.fixed_vertex_count,
            stride: misc0.stride,
            start_uniform: misc0.start_uniform,
            main_vertex_count: r.gsh_misc1().main_vertex_count(),
            diagnostics: Vec::new(),
        };
        if !cfg.enabled {
            return cfg;
        }
        // Everything below mirrors an assertion of [C]; the hardware's behaviour when it fails
        // is unknown, so we only report it.
        let d = &mut cfg.diagnostics;
        if !r.gs_config_separate() {
            d.push(ShadingDiag::GsRequirement(
                "VSH_COM_MODE (0x244) bit 0 should be 1",
            ));
        }
        if gs_input.unit_mode != ShaderUnitMode::GeometryShader {
            d.push(ShadingDiag::GsRequirement(
                "GS INPUTBUFFER_CONFIG mode byte should be 0x08",
            ));
        }
        if vs_outputs != r.vsh_outmap_total2() {
            d.push(ShadingDiag::GsRequirement(
                "0x24A and 0x251 should hold the same count",
            ));
        }
        let variable_flag = geo.variable_primitive;
        let to_uniform = gs_input.input_to_uniform;
        match mode {
            GsInputMode::Point => {
                if variable_flag || to_uniform != 0 {
                    d.push(ShadingDiag::GsRequirement(
                        "point mode expects 0x229 bit 31 = 0 and input-to-uniform = 0",
                    ));
                }
                if !cfg.gs_input_count.is_multiple_of(cfg.vs_output_count) {
                    d.push(ShadingDiag::GsRequirement(
                        "point mode: GS input count should be a multiple of the VS output count",
                    ));
                }
            }
            GsInputMode::VariablePrimitive => {
                if !variable_flag || to_uniform != 1 {
                    d.push(ShadingDiag::GsRequirement(
                        "variable-primitive mode expects 0x229 bit 31 = 1 and input-to-uniform = 1",
                    ));
                }
            }
            GsInputMode::FixedPrimitive => {
                if variable_flag || to_uniform != 1 {
                    d.push(ShadingDiag::GsRequirement(
                        "fixed-primitive mode expects 0x229 bit 31 = 0 and input-to-uniform = 1",
                    ));
                }
                if cfg.stride != cfg.vs_output_count {
                    d.push(ShadingDiag::GsRequirement(
                        "fixed-primitive mode: stride should equal the VS output count",
                    ));
                }
            }
            GsInputMode::Unknown(m) => d.push(ShadingDiag::UnknownGsMode(m)),
        }
        cfg
    }

    /// The mode as the data path runs it (unknown modes behave as point mode).
    pub fn effective_mode(&self) -> GsInputMode {
        match self.mode {
            GsInputMode::Unknown(_) => GsInputMode::Point,
            m => m,
        }
    }
}

/// What [`GsInputBuffer`] asks of its caller after a submission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GsFeed {
    /// More vertices are needed before the GS runs.
    Pending,
    /// The GS inputs/uniforms are complete: run the GS once now, then set GS bool uniform
    /// [`GS_AFTER_INVOCATION_BOOL`] (b15) to true (\[C\]).
    Run,
}

/// Buffers VS outputs into GS inputs or GS float uniforms according to the [`GsConfig`].
///
/// Like the primitive assembler in \[C\], this state is re-created at each draw
/// ([`GsInputBuffer::reconfigure`]); a partial batch left over from the previous draw is
/// dropped with [`ShadingDiag::GsBatchDropped`].
#[derive(Clone, Debug)]
pub struct GsInputBuffer {
    mode: GsInputMode,
    /// Point mode: attribute buffer and fill level.
    attrs: [Vec4; NUM_REGS],
    filled: usize,
    /// Uniform modes: next uniform written; the batch's first uniform.
    cursor: usize,
    begin: usize,
    /// Fixed-primitive mode: one past the batch's last uniform (may exceed 96).
    end: usize,
    /// Variable-primitive mode.
    need_count: bool,
    main_left: u32,
    total_left: u32,
    /// Whether the overflow of the current batch was already reported.
    overflow_reported: bool,
    /// Uniform modes: the float uniforms the last complete batch wrote (first, count).
    last_batch: Option<(u8, u8)>,
}

impl Default for GsInputBuffer {
    fn default() -> Self {
        Self {
            mode: GsInputMode::Point,
            attrs: [[0.0; 4]; NUM_REGS],
            filled: 0,
            cursor: 0,
            begin: 0,
            end: 0,
            need_count: true,
            main_left: 0,
            total_left: 0,
            overflow_reported: false,
            last_batch: None,
        }
    }
}

impl GsInputBuffer {
    /// Uniform input modes: the float uniforms (first, count) the batch that completed last wrote;
    /// `None` in point mode. Variable-primitive batches include the count in c0.
    pub fn last_batch_uniforms(&self) -> Option<(u8, u8)> {
        self.last_batch
    }

    /// Records the uniform range of a batch that just completed (`first..self.cursor`).
    fn close_batch(&mut self, first: usize) {
        let end = self.cursor.min(NUM_FLOAT_UNIFORMS);
        let first = first.min(end);
        // ok: both are at most 96.
        self.last_batch = Some((first as u8, (end - first) as u8));
    }

    /// True if no partial batch is buffered.
    pub fn is_empty(&self) -> bool {
        match self.mode {
            GsInputMode::VariablePrimitive => self.need_count,
            GsInputMode::FixedPrimitive => self.cursor == self.begin,
            _ => self.filled == 0,
        }
    }

    /// Starts buffering for a draw with configuration `cfg`. Returns a diagnostic if a partial
    /// batch of the previous configuration was dropped.
    pub fn reconfigure(&mut self, cfg: &GsConfig) -> Option<ShadingDiag> {
        let dropped = (!self.is_empty()).then_some(ShadingDiag::GsBatchDropped);
        let mode = cfg.effective_mode();
        let begin = usize::from(cfg.start_uniform);
        *self = Self {
            mode,
            cursor: begin,
            begin,
            end: begin + usize::from(cfg.vs_output_count) * usize::from(cfg.fixed_vertex_count),
            ..Self::default()
        };
        dropped
    }

    /// True if the next index of an indexed draw is a batch's vertex count rather than a vertex
    /// (variable-primitive mode between batches). The caller then passes it to
    /// [`GsInputBuffer::submit_count`] instead of loading a vertex.
    ///
    /// UNVERIFIED: \[C\] requires an indexed draw for this mode; for DRAWARRAYS we treat the
    /// vertex id the same way (the caller decides).
    pub fn needs_count(&self) -> bool {
        self.mode == GsInputMode::VariablePrimitive && self.need_count
    }

    /// Variable-primitive mode: starts a batch of `count` vertices; writes `(N, N, N, N)` to c0
    /// and makes c1 the next uniform written.
    ///
    /// UNVERIFIED: a count of 0 starts no batch (the next index is a count again); in \[C\] the
    /// counter would wrap and the batch never end.
    pub fn submit_count(
        &mut self,
        cfg: &GsConfig,
        count: u32,
        uniforms: &mut [Vec4; NUM_FLOAT_UNIFORMS],
    ) {
        let n = count as f32;
        uniforms[0] = [n; 4];
        if count == 0 {
            return;
        }
        self.cursor = 1;
        self.begin = 1;
        self.main_left = cfg.main_vertex_count;
        self.total_left = count;
        self.need_count = false;
        self.overflow_reported = false;
    }

    /// Writes `values` to consecutive uniforms from the cursor, dropping anything past c95.
    fn write_uniforms(
        &mut self,
        values: &[Vec4],
        uniforms: &mut [Vec4; NUM_FLOAT_UNIFORMS],
    ) -> Option<ShadingDiag> {
        let mut diag = None;
        for v in values {
            match uniforms.get_mut(self.cursor) {
                Some(u) => *u = *v,
                None if !self.overflow_reported => {
                    self.overflow_reported = true;
                    diag = Some(ShadingDiag::GsUniformOverflow(self.cursor));
                }
                None => {}
            }
            self.cursor = self.cursor.saturating_add(1);
        }
        diag
    }

    /// Submits the compacted output slots of one VS invocation (the first
    /// `cfg.vs_output_count` of `vs_slots` are used).
    ///
    /// * Point mode: appended to the GS input buffer; when it holds `gs_input_count` slots they
    ///   are loaded into `gs_inputs` through `gs_input_cfg` (the GS permutation) and the GS must
    ///   run. Slots that do not fit (input count not a multiple of the output count) are dropped.
    /// * Variable primitive: written to the uniforms at the cursor (all slots for main vertices,
    ///   slot 0 for the others); the GS runs after the batch's last vertex.
    /// * Fixed primitive: written to the uniforms at the cursor; the GS runs when
    ///   `fixed_vertex_count` vertices have arrived.
    ///
    /// Returns the feed decision and a diagnostic when data went past c95.
    pub fn submit_vertex(
        &mut self,
        cfg: &GsConfig,
        vs_slots: &[Vec4; NUM_REGS],
        uniforms: &mut [Vec4; NUM_FLOAT_UNIFORMS],
        gs_input_cfg: &InputConfig,
        gs_inputs: &mut [Vec4; NUM_REGS],
    ) -> (GsFeed, Option<ShadingDiag>) {
        let n = usize::from(cfg.vs_output_count).min(NUM_REGS);
        let slots = &vs_slots[..n];
        match self.mode {
            GsInputMode::VariablePrimitive => {
                if self.need_count {
                    // The caller skipped `submit_count`; treat the vertex as an empty batch.
                    return (GsFeed::Pending, None);
                }
                let diag = if self.main_left > 0 {
                    self.main_left -= 1;
                    self.write_uniforms(slots, uniforms)
                } else {
                    self.write_uniforms(&slots[..1], uniforms)
                };
                self.total_left = self.total_left.saturating_sub(1);
                if self.total_left == 0 {
                    self.need_count = true;
                    self.close_batch(0);
                    return (GsFeed::Run, diag);
                }
                (GsFeed::Pending, diag)
            }
            GsInputMode::FixedPrimitive => {
                let diag = self.write_uniforms(slots, uniforms);
                if self.cursor >= self.end {
                    self.close_batch(self.begin);
                    self.cursor = self.begin;
                    self.overflow_reported = false;
                    return (GsFeed::Run, diag);
                }
                (GsFeed::Pending, diag)
            }
            GsInputMode::Point | GsInputMode::Unknown(_) => {
                let want = usize::from(cfg.gs_input_count).min(NUM_REGS);
                let take = n.min(want - self.filled.min(want));
                self.attrs[self.filled..self.filled + take].copy_from_slice(&slots[..take]);
                self.filled += take;
                if self.filled >= want {
                    self.filled = 0;
                    gs_input_cfg.load(&self.attrs, gs_inputs);
                    return (GsFeed::Run, None);
                }
                (GsFeed::Pending, None)
            }
        }
    }
}

/// Submits one emitted GS primitive to primitive assembly (`pica-core.md` §6.3): raises the
/// assembler's winding flag if the SETEMIT winding bit was set, then pushes the emitter buffer's
/// vertices in order; every completed triangle goes to `sink`.
///
/// HW: \[C\] submits buffer entries 0, 1, 2. UNVERIFIED: \[3DB\] describes a 4-entry emitter buffer;
/// which entries a primitive uses then is unknown. Callers pass the entries to submit.
pub fn submit_emitted(
    pa: &mut PrimitiveAssembler<OutputVertex>,
    vertices: &[OutputVertex],
    winding: bool,
    mut sink: impl FnMut([OutputVertex; 3]),
) {
    if winding {
        pa.set_winding();
    }
    for v in vertices {
        if let Some(tri) = pa.push(*v) {
            sink(tri);
        }
    }
}

/// Per-unit shader configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UnitSetup {
    /// Input count and permutation.
    pub input: InputConfig,
    /// Output mask (compaction).
    pub outputs: OutputMask,
    /// Entry point, a word offset (ENTRYPOINT bits 0-15).
    pub entry: u32,
}

impl UnitSetup {
    /// Decodes `unit`'s INPUTBUFFER_CONFIG, permutation, OUTMAP_MASK and ENTRYPOINT through
    /// the register catalogue.
    pub fn from_regs(regs: &[u32; 0x300], unit: ShaderUnit) -> Self {
        let c = Regs::new(regs).shader_config(unit);
        Self {
            input: InputConfig {
                // ok: a 4-bit field plus one is at most 16.
                count: c.input.input_count() as u8,
                permutation: c.permutation.map(|r| r & 0xF),
            },
            outputs: OutputMask(c.output_mask),
            entry: u32::from(c.entry_point),
        }
    }
}

/// Everything the shading stages read from the registers, decoded once per draw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShadingSetup {
    /// The vertex shader unit.
    pub vs: UnitSetup,
    /// The geometry shader unit (unit 3).
    pub gs: UnitSetup,
    /// The geometry stage (whether the GS is used, its input mode).
    pub geometry: GsConfig,
    /// The output map (applies to the VS output without a GS, to the GS output with one).
    pub output_map: OutputMap,
}

impl ShadingSetup {
    /// Decodes the shading registers (module doc).
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        Self {
            vs: UnitSetup::from_regs(regs, ShaderUnit::Vertex),
            gs: UnitSetup::from_regs(regs, ShaderUnit::Geometry),
            geometry: GsConfig::from_regs(regs),
            output_map: OutputMap::from_regs(regs),
        }
    }

    /// The mask whose compacted output the output map describes: the GS's when the GS is used.
    pub fn final_outputs(&self) -> OutputMask {
        if self.geometry.enabled {
            self.gs.outputs
        } else {
            self.vs.outputs
        }
    }

    /// Every configuration problem: invalid semantics, an output map longer than the outputs,
    /// and (with a GS) the geometry-stage requirements.
    pub fn diagnostics(&self) -> Vec<ShadingDiag> {
        let mut d = self.output_map.diagnostics.clone();
        d.extend(self.output_map.check_outputs(self.final_outputs().count()));
        d.extend(self.geometry.diagnostics.iter().cloned());
        d
    }
}

/// Compacted output slots of one shaded vertex (slot i = i-th enabled output register).
pub type OutputSlots = [Vec4; NUM_REGS];

/// Reusable batch buffers for [`run_vertex_shader`]: they are re-allocated only when the batch
/// size or a register mask changes, so a draw shaded in equal-sized batches allocates once.
#[derive(Clone, Debug, Default)]
pub struct ShadeScratch {
    inputs: Option<VertexBatch>,
    outputs: Option<VertexBatch>,
}

/// `slot`'s batch if it has `len` vertices and carries `mask`, else a zero-filled one of that
/// shape (in `slot`'s allocation when there is one: draws of a few vertices each change `len`
/// from draw to draw).
fn take_batch(slot: &mut Option<VertexBatch>, len: usize, mask: u16) -> VertexBatch {
    match slot.take() {
        Some(b) if b.len() == len && b.mask() == mask => b,
        Some(mut b) => {
            b.reset(len, mask);
            b
        }
        None => VertexBatch::new(len, mask),
    }
}

/// Shades `attrs` (in order) with `engine`: each vertex's attribute slots go through the unit's
/// input permutation, the program runs from the unit's entry point, and the enabled output
/// registers are compacted into `slots_out[i]` (which must be at least as long as `attrs`;
/// extra vertices are not shaded).
///
/// The engine's unit state persists from vertex to vertex (§5.4). On error, the vertices before
/// the failing one have their slots written; the error names the failing vertex.
pub fn run_vertex_shader<E: ShaderEngine>(
    engine: &mut E,
    program: &Arc<Program>,
    uniforms: &Uniforms,
    unit: &UnitSetup,
    attrs: &[crate::geometry::vertex_loader::AttributeSet],
    scratch: &mut ShadeScratch,
    slots_out: &mut [OutputSlots],
) -> Result<BatchStats, BatchError> {
    let n = attrs.len().min(slots_out.len());
    let mut inputs = take_batch(&mut scratch.inputs, n, unit.input.register_mask());
    let mut outputs = take_batch(&mut scratch.outputs, n, unit.outputs.0);
    let mut regs = [[0.0f32; 4]; NUM_REGS];
    for (i, set) in attrs[..n].iter().enumerate() {
        unit.input.load(&set.values, &mut regs);
        inputs.store_vertex(i, &regs);
    }
    let result = engine.run_batch_shared(program, uniforms, unit.entry, &inputs, &mut outputs);
    let shaded = match &result {
        Ok(stats) => stats.vertices,
        Err(e) => e.vertex,
    };
    for (i, out) in slots_out.iter_mut().enumerate().take(shaded.min(n)) {
        outputs.load_vertex(i, &mut regs);
        unit.outputs.compact(&regs, out);
    }
    scratch.inputs = Some(inputs);
    scratch.outputs = Some(outputs);
    result
}

/// An [`EmitSink`] that turns GS primitives into triangles: each emitted vertex is compacted by
/// the GS output mask and mapped to an [`OutputVertex`], then [`submit_emitted`] feeds the
/// assembler with the winding flag.
pub struct EmitToAssembler<'a, F: FnMut([OutputVertex; 3])> {
    /// GS output mask (0x28D).
    pub mask: OutputMask,
    /// The output map.
    pub map: &'a OutputMap,
    /// The primitive assembler (topology 3 in well-formed GS draws).
    pub assembler: &'a mut PrimitiveAssembler<OutputVertex>,
    /// Receives every assembled triangle.
    pub sink: F,
    /// Number of primitives emitted so far.
    pub primitives: u64,
}

impl<F: FnMut([OutputVertex; 3])> EmitSink for EmitToAssembler<'_, F> {
    fn primitive(&mut self, vertices: [&[Vec4; 16]; 3], winding: bool) {
        let mut slots = [[0.0f32; 4]; NUM_REGS];
        let verts = vertices.map(|regs| {
            let n = self.mask.compact(regs, &mut slots);
            self.map.to_vertex(&slots, n)
        });
        self.primitives += 1;
        submit_emitted(self.assembler, &verts, winding, &mut self.sink);
    }
}

/// The geometry-shader side of [`route_vertex`].
pub struct GsContext<'a> {
    /// Input buffering state (re-configured at each draw).
    pub buffer: &'a mut GsInputBuffer,
    /// The GS unit (its state persists across invocations and draws).
    pub unit: &'a mut Interpreter,
    /// The decoded GS program.
    pub program: &'a Program,
    /// The GS uniforms: the uniform input modes write into `f`, and `b[15]` is set after every
    /// invocation (\[C\]); the caller keeps them for the next vertex and draw.
    pub uniforms: &'a mut Uniforms,
}

/// What [`route_vertex`] did with one vertex.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RouteOutcome {
    /// GS invocations run (0 or 1).
    pub gs_invocations: u32,
    /// GS primitives emitted.
    pub gs_primitives: u64,
    /// Instructions the GS executed.
    pub gs_instructions: u64,
    /// A GS input problem (uniform overflow).
    pub diagnostic: Option<ShadingDiag>,
}

/// Hands one VS-shaded vertex on (`slots` = its compacted outputs).
///
/// * No GS (`gs` is `None` or the setup does not enable it): the output map makes an
///   [`OutputVertex`], which is pushed into `assembler`; a completed triangle goes to `sink`.
/// * With a GS: the first `0x24A + 1` slots go into the GS input buffer; when a batch is
///   complete the GS runs once, its primitives go through [`EmitToAssembler`], and GS bool
///   uniform b15 is set.
///
/// A GS that fails (budget, bad PC) returns the error; whatever it emitted before still went to
/// `sink`, and b15 is set as for a normal run.
pub fn route_vertex<F: FnMut([OutputVertex; 3])>(
    setup: &ShadingSetup,
    slots: &OutputSlots,
    gs: Option<GsContext<'_>>,
    assembler: &mut PrimitiveAssembler<OutputVertex>,
    sink: F,
) -> Result<RouteOutcome, ExecError> {
    route_vertex_recorded(setup, slots, gs, assembler, sink, None)
}

/// Where [`route_vertex_recorded`] records geometry-shader invocations for the debugger.
pub struct GsRecord<'a> {
    /// The draw's detail; invocations go to [`DrawDetail::gs_invocations`].
    pub detail: &'a mut DrawDetail,
    /// Draw position (index in draw) of the vertex being routed.
    pub index_in_draw: u32,
}

/// [`route_vertex`], recording each GS invocation (inputs as the unit received them, unit
/// registers and uniforms before it ran, every EMIT with its vertex) into `record` when given.
/// Without a GS or without `record` this is exactly [`route_vertex`].
pub fn route_vertex_recorded<F: FnMut([OutputVertex; 3])>(
    setup: &ShadingSetup,
    slots: &OutputSlots,
    gs: Option<GsContext<'_>>,
    assembler: &mut PrimitiveAssembler<OutputVertex>,
    mut sink: F,
    mut record: Option<GsRecord<'_>>,
) -> Result<RouteOutcome, ExecError> {
    let mut outcome = RouteOutcome::default();
    let gs = match gs {
        Some(gs) if setup.geometry.enabled => gs,
        _ => {
            let v = setup.output_map.to_vertex(slots, setup.vs.outputs.count());
            if let Some(tri) = assembler.push(v) {
                sink(tri);
            }
            return Ok(outcome);
        }
    };
    let (feed, diag) = gs.buffer.submit_vertex(
        &setup.geometry,
        slots,
        &mut gs.uniforms.f,
        &setup.gs.input,
        &mut gs.unit.state.inputs,
    );
    outcome.diagnostic = diag;
    if let Some(r) = record.as_mut()
        && r.detail.keeps_gs_invocation()
    {
        r.detail.gs_pending_vertices.push(r.index_in_draw);
    }
    if feed == GsFeed::Pending {
        return Ok(outcome);
    }
    let mut emit = EmitToAssembler {
        mask: setup.gs.outputs,
        map: &setup.output_map,
        assembler,
        sink: &mut sink,
        primitives: 0,
    };
    let result = match record.as_mut() {
        None => gs
            .unit
            .run_with(gs.program, gs.uniforms, setup.gs.entry, &mut (), &mut emit),
        Some(r) => {
            let index = u32::try_from(
                (r.detail.gs_invocations.len() as u64)
                    .saturating_add(r.detail.gs_invocations_dropped),
            )
            .unwrap_or(u32::MAX);
            let vertices = std::mem::take(&mut r.detail.gs_pending_vertices);
            if r.detail.keeps_gs_invocation() {
                let mut inv = GsInvocation {
                    index,
                    vertices,
                    input_uniforms: gs.buffer.last_batch_uniforms(),
                    state: UnitRegs::from_state(&gs.unit.state),
                    float_uniforms: gs.uniforms.f.to_vec(),
                    bool_uniforms: gs.uniforms.bools(),
                    int_uniforms: gs.uniforms.i,
                    entry: setup.gs.entry,
                    emits: Vec::new(),
                    emits_dropped: 0,
                    instructions: 0,
                    error: None,
                };
                let mut rec = RecordEmits {
                    inner: &mut emit,
                    mask: setup.gs.outputs,
                    map: &setup.output_map,
                    inv: &mut inv,
                };
                let result =
                    gs.unit
                        .run_with(gs.program, gs.uniforms, setup.gs.entry, &mut (), &mut rec);
                match &result {
                    Ok(stats) => inv.instructions = stats.instructions,
                    Err(e) => inv.error = Some(e.to_string()),
                }
                r.detail.push_gs_invocation(inv);
                result
            } else {
                r.detail.gs_invocations_dropped += 1;
                gs.unit
                    .run_with(gs.program, gs.uniforms, setup.gs.entry, &mut (), &mut emit)
            }
        }
    };
    outcome.gs_invocations = 1;
    outcome.gs_primitives = emit.primitives;
    if let Some(b) = gs.uniforms.b.get_mut(GS_AFTER_INVOCATION_BOOL) {
        *b = true;
    }
    let stats: RunStats = result?;
    outcome.gs_instructions = stats.instructions;
    Ok(outcome)
}

/// An [`EmitSink`] that records every EMIT of one invocation into a [`GsInvocation`] and
/// forwards it to the pipeline's sink.
struct RecordEmits<'a, S: EmitSink> {
    inner: &'a mut S,
    mask: OutputMask,
    map: &'a OutputMap,
    inv: &'a mut GsInvocation,
}

impl<S: EmitSink> EmitSink for RecordEmits<'_, S> {
    fn vertex(&mut self, slot: u8, outputs: &[Vec4; 16]) {
        if self.inv.emits.len() < GsInvocation::MAX_EMITS {
            let mut slots = [[0.0f32; 4]; NUM_REGS];
            let n = self.mask.compact(outputs, &mut slots);
            self.inv.emits.push(GsEmit {
                slot,
                primitive: false,
                winding: false,
                outputs: slots[..n].to_vec(),
                vertex: self.map.to_vertex(&slots, n),
            });
        } else {
            self.inv.emits_dropped += 1;
        }
        self.inner.vertex(slot, outputs);
    }

    fn primitive(&mut self, vertices: [&[Vec4; 16]; 3], winding: bool) {
        if self.inv.emits_dropped == 0
            && let Some(e) = self.inv.emits.last_mut()
        {
            e.primitive = true;
            e.winding = winding;
        }
        self.inner.primitive(vertices, winding);
    }
}

#[cfg(test)]
mod tests;
