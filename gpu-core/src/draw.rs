//! The draw driver: one DRAWARRAYS / DRAWELEMENTS / immediate-mode vertex from vertex fetch to
//! pixels (`pica-core.md` §3-§8, `pica-raster.md` §1-§4).
//!
//! It joins the two pipeline folders: [`crate::geometry`] (vertices to screen-space triangles)
//! and [`crate::pixel`] (triangles to pixels).
//!
//! Input: a [`DrawRequest`] — a borrowed, read-only view of the register file, the shader
//! memories and uniforms, the fixed attributes and the lookup tables, made by the command
//! processor ([`crate::command`], which this module does not know) — and physical memory.
//! Output: pixels in the colour/depth buffers (through the fragment pipeline), the pipeline state
//! that persists across draws ([`PipelineState`]: primitive assembler, shader unit registers, GS
//! input buffer, the GS b15 flag), draw events and optional per-draw detail for the
//! [`Observer`], and a [`DrawOutcome`] the command processor applies to its own state (draw
//! count, GS float uniforms changed by variable-primitive GS input). Registers read: those of
//! every stage, each decoding its own once per draw; 0x25E PRIMITIVE_CONFIG (draw topology) and
//! the texture unit registers (for the draw's [`DrawInfo`]).
//!
//! Stages, in order: [`vertex_loader`](crate::geometry::vertex_loader) → [`shading::run_vertex_shader`] (batches of
//! [`SHADE_BATCH`] vertices through the shader unit's batch API, on the fast batched engine
//! `shader_unit::fast::FastEngine`) → [`shading::route_vertex`]
//! (primitive assembly, or the geometry shader and its emitted primitives) → [`clip`] →
//! [`viewport`] → [`PixelPipeline`] (rasterizer, textures, combiners, fragment ops).
//!
//! Work is bounded: the vertex count is capped ([`DrawLimits`]), shading stops when the per-draw
//! instruction budget is spent, and the first failed fetch ends the draw with a diagnostic.

use std::sync::{Arc, Mutex};

use shader_unit::decode::{MAX_OPDESCS, MAX_PROGRAM_WORDS, Program};
use shader_unit::fast::FastEngine;
use shader_unit::interp::{Interpreter, NUM_FLOAT_UNIFORMS, Uniforms};

use crate::budget::WorkCount;
use crate::debug::{
    DebugBuffers, DiagKind, Diagnostic, DrawDetail, DrawInfo, DrawKind, DrawStats, Observer,
    PixelProbe, PrimitiveId, ShadedVertex, TextureRef, Topology, TriangleFate, TriangleVertices,
};
use crate::geometry::assembly::PrimitiveAssembler;
use crate::geometry::clip::{self, ClipParams};
use crate::geometry::shading::{
    self, GsContext, GsInputBuffer, OutputSlots, ShadeScratch, ShadingSetup,
};
use crate::geometry::vertex_loader::{
    AttributeSet, DrawCursor, DrawLimits, LoaderConfig, MAX_ATTRIBUTES, VertexCache,
    VertexCacheMode,
};
use crate::geometry::viewport::{self, Viewport};
use crate::lut::LookupTables;
use crate::memory::PhysMem;
use crate::pixel::fragment::parallel::ShareStores;
use crate::pixel::fragment::{
    PipelineTemplate, PixelPath, PixelPipeline, TextureCache, TextureUnits,
};
use crate::pixel::raster::TriangleOutcome;
use crate::pixel::stages::FixedFunctionStages;
use crate::pixel::tev::TevSolo;
use crate::pixel::texture::RenderMode;
use crate::regs::{PICA_REG_COUNT, reg};
use crate::vertex::{OutputVertex, ScreenVertex};

mod deferred;

/// Vertices shaded per batch.
pub const SHADE_BATCH: usize = 64;

/// Screen-space triangles collected before the parallel pixel path draws them (bounds the
/// memory of a draw's pending triangles; see [`PixelPipeline::draw_triangles`]).
pub const PIXEL_BATCH: usize = 2048;

/// One shader unit's memories as a draw reads them.
#[derive(Clone, Copy, Debug)]
pub struct ShaderMemory<'a> {
    /// Program words.
    pub code: &'a [u32],
    /// Operand descriptors.
    pub opdescs: &'a [u32],
    /// Changes whenever `code` or `opdescs` change: the key of the decoded-program cache.
    pub generation: u64,
    /// Float uniforms c0-c95.
    pub float_uniforms: &'a [[f32; 4]; NUM_FLOAT_UNIFORMS],
}

/// Everything a draw reads from the command processor's state: a borrowed, read-only view made
/// per draw (or per immediate-mode vertex).
#[derive(Clone, Copy, Debug)]
pub struct DrawRequest<'a> {
    /// The PICA register file.
    pub regs: &'a [u32; PICA_REG_COUNT],
    /// Vertex shader unit memories.
    pub vs: ShaderMemory<'a>,
    /// Geometry shader unit (unit 3) memories.
    pub gs: ShaderMemory<'a>,
    /// Fixed/default attribute values.
    pub fixed_attribs: &'a [[f32; 4]; MAX_ATTRIBUTES],
    /// Lighting, fog and procedural-texture lookup tables.
    pub luts: &'a LookupTables,
    /// The index the next draw that starts gets.
    pub next_draw: u64,
}

/// What a draw changes in the command processor's state, returned for it to apply.
#[derive(Clone, Debug, Default)]
#[must_use]
pub struct DrawOutcome {
    /// Draws started (each takes the next draw index): 1 for a draw and for the first vertex of
    /// an immediate-mode sequence, else 0.
    pub draws_started: u64,
    /// The GS float uniforms after the draw, when it ran with a geometry shader
    /// (variable-primitive GS input writes the vertex counts into them).
    pub gs_float_uniforms: Option<[[f32; 4]; NUM_FLOAT_UNIFORMS]>,
    /// Work done, for the work budgets ([`crate::budget`]): vertex positions walked, shader
    /// instructions (VS + GS) and fragments written (`draws` is left 0: the command processor
    /// counts draws itself).
    pub work: WorkCount,
}

/// How many recently decoded programs [`PipelineState`] keeps for re-uploads (a few shaders'
/// worth: bounded memory, and a miss costs one comparison per entry).
const RECENT_PROGRAMS: usize = 8;

/// A decoded program and the memory generation it was decoded from.
#[derive(Clone, Debug)]
struct CachedProgram {
    generation: u64,
    program: Arc<Program>,
    hash: u64,
}

/// Vertex-pipeline state that persists across draws.
#[derive(Clone, Debug)]
pub struct PipelineState {
    /// Primitive assembly (persists across draws; reset by 0x25E / 0x25F writes).
    pub assembler: PrimitiveAssembler<OutputVertex>,
    /// The vertex shader unit: its registers (persist between invocations and draws, §5.4) and
    /// the batched engine that shades the draw's vertex batches (bit-exact with the reference
    /// interpreter, which the shader debugger re-runs from `vs_unit.state`).
    pub vs_unit: FastEngine,
    /// The geometry shader unit's registers.
    pub gs_unit: Interpreter,
    /// GS input buffering.
    pub gs_input: GsInputBuffer,
    /// True once a GS invocation has set GS bool uniform b15 and no write to the GS bool
    /// register (0x280) has happened since ([C] behaviour, §6.2).
    pub gs_b15_set: bool,
    /// Vertex cache policy.
    pub cache_mode: VertexCacheMode,
    /// Limits per draw.
    pub limits: DrawLimits,
    /// Which implementation of the per-fragment operations draws use (both bit-identical; the
    /// reference path is the test oracle of the specialised one).
    pub pixel_path: PixelPath,
    /// Which engine shades the vertex shader batches (both bit-exact; the reference
    /// interpreter is the oracle, selectable so that two runs can be compared).
    pub vs_engine: VsEngine,
    /// How texture units sample (hardware-faithful by default; see [`RenderMode`]).
    pub render_mode: RenderMode,
    /// A combiner solo applied to every draw (debugging; `None` in normal replay): see
    /// [`crate::pixel::tev::TevSolo`]. Draws with a solo run the reference pixel path.
    pub tev_solo: Option<TevSolo>,
    /// Pixel-history probe: draws into the probed buffer record the fragments at it and report
    /// them through [`Observer::fragment`]. `None` (the default) costs nothing.
    pub pixel_probe: Option<PixelProbe>,
    /// Workers of the pixel pipeline (1: the calling thread only). Any count gives
    /// bit-identical results; above 1, draws on the specialised path collect their triangles
    /// in batches of [`PIXEL_BATCH`] and shade them in parallel.
    ///
    /// UNVERIFIED (ordering): with more than one worker a batch's pixels are written after
    /// its vertices were fetched, so a draw whose vertex or index data lies inside its own
    /// render target would read them as of the batch start. No known software does this.
    /// (Across draws there is no such case: a draw whose textures, vertices or indices lie in
    /// the buffers of draws whose pixels wait has them drawn first, see `draw/deferred.rs`.)
    pub threads: usize,
    /// Set by the command processor before each draw: the fragments its work budgets allow
    /// from here on (0, the default, makes the draw's pixels be drawn before it returns). A
    /// draw on several threads may leave its pixel work waiting for the following draws into
    /// the same buffers when this exceeds what the waiting draws can produce (see
    /// `draw/deferred.rs`); [`PipelineState::flush_pixels`] draws and reports them.
    pub defer_fragments: u64,
    vs_program: Option<CachedProgram>,
    gs_program: Option<CachedProgram>,
    /// Recently decoded programs (either unit), most recent first, at most
    /// [`RECENT_PROGRAMS`]: a program uploaded again (same words and operand descriptors) is
    /// taken from here instead of being decoded again (traces that switch between a few shaders
    /// re-upload them between draws).
    recent_programs: Vec<(Arc<Program>, u64)>,
    /// Recently decoded fixed-function stages (see [`StageCache`]).
    stages: StageCache,
    /// Recently decoded pixel-pipeline templates (see [`TemplateCache`]).
    templates: TemplateCache,
    scratch: Scratch,
    /// The open immediate-mode "draw" (vertices since FIXEDATTRIB_INDEX = 0xF), if any.
    immediate: Option<ImmediateDraw>,
    /// The register decode of the open immediate-mode draw (see [`ImmediateSetup`]).
    immediate_setup: ImmediateSetup,
    /// Decoded textures keyed by configuration and content hash. Shared (not copied) between
    /// clones of the state, e.g. keyframes: it is a pure cache, so sharing it cannot change any
    /// result.
    textures: SharedTextureCache,
}

/// A texture cache shared between clones of [`PipelineState`].
#[derive(Clone)]
pub struct SharedTextureCache(Arc<Mutex<TextureCache>>);

impl Default for SharedTextureCache {
    fn default() -> Self {
        Self(Arc::new(Mutex::new(TextureCache::with_default_budget())))
    }
}

impl std::fmt::Debug for SharedTextureCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SharedTextureCache")
    }
}

impl SharedTextureCache {
    fn pipeline(
        &self,
        mem: &PhysMem,
        regs: &[u32; 0x300],
        mode: RenderMode,
        template: &PipelineTemplate,
    ) -> PixelPipeline<TextureUnits> {
        match self.0.lock() {
            Ok(mut cache) => {
                cache.render_mode = mode;
                PixelPipeline::for_draw_template(mem, regs, &mut cache, template)
            }
            // A panic elsewhere poisoned the cache: decode without it.
            Err(_) => {
                let mut cache = TextureCache::new(0);
                cache.render_mode = mode;
                PixelPipeline::for_draw_template(mem, regs, &mut cache, template)
            }
        }
    }
}

/// Words of a [`PipelineTemplate`] key ([`PipelineTemplate::KEY`]).
const TEMPLATE_KEY_WORDS: usize = PipelineTemplate::KEY.end - PipelineTemplate::KEY.start;

/// How many pixel-pipeline templates [`TemplateCache`] keeps.
const RECENT_TEMPLATES: usize = 16;

/// Recently decoded [`PipelineTemplate`]s, most recent first, each with a copy of the key
/// registers it was decoded from (compared word for word: no hash, no false hit). A draw whose
/// registers 0x040-0x1FF equal an entry's reuses its template instead of decoding the
/// combiners, fragment operations and framebuffer configuration again (stress: 936 pixel set-ups
/// per replay, a handful of configurations). A pure cache: a clone of the pipeline state (a
/// keyframe) starts empty.
#[derive(Default)]
struct TemplateCache(Vec<(Box<[u32; TEMPLATE_KEY_WORDS]>, PipelineTemplate)>);

impl Clone for TemplateCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for TemplateCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TemplateCache({} entries)", self.0.len())
    }
}

impl TemplateCache {
    /// The template for `regs`, decoded now or reused (and made the most recent entry).
    fn get(&mut self, regs: &[u32; 0x300]) -> &PipelineTemplate {
        let key = &regs[PipelineTemplate::KEY];
        match self.0.iter().position(|(k, _)| k[..] == *key) {
            Some(i) => self.0[..=i].rotate_right(1),
            None => {
                let mut k = Box::new([0u32; TEMPLATE_KEY_WORDS]);
                k.copy_from_slice(key);
                if self.0.len() >= RECENT_TEMPLATES {
                    self.0.pop();
                }
                self.0.insert(0, (k, PipelineTemplate::from_regs(regs)));
            }
        }
        &self.0[0].1
    }
}

/// The engine that runs vertex-shader batches in the draw pipeline.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum VsEngine {
    /// The batched structure-of-arrays engine (`shader_unit::fast`), the default.
    #[default]
    Fast,
    /// The reference interpreter (`shader_unit::interp`), one vertex at a time.
    Reference,
}

/// Shades one batch with the selected engine. The reference interpreter borrows the fast
/// engine's persistent registers for the batch, so the unit state stays in `vs_unit` either way.
#[allow(clippy::too_many_arguments)]
fn shade_batch(
    vs_unit: &mut FastEngine,
    engine: VsEngine,
    program: &Arc<Program>,
    uniforms: &Uniforms,
    unit: &shading::UnitSetup,
    attrs: &[AttributeSet],
    scratch: &mut ShadeScratch,
    slots: &mut [OutputSlots],
) -> Result<shader_unit::interp::BatchStats, shader_unit::interp::BatchError> {
    match engine {
        VsEngine::Fast => {
            shading::run_vertex_shader(vs_unit, program, uniforms, unit, attrs, scratch, slots)
        }
        VsEngine::Reference => {
            let mut interp = Interpreter {
                state: std::mem::take(&mut vs_unit.state),
                config: vs_unit.config,
                last_executed: 0,
            };
            let r = shading::run_vertex_shader(
                &mut interp,
                program,
                uniforms,
                unit,
                attrs,
                scratch,
                slots,
            );
            vs_unit.state = interp.state;
            r
        }
    }
}

impl Default for PipelineState {
    fn default() -> Self {
        Self {
            assembler: PrimitiveAssembler::new(Topology::List),
            vs_unit: FastEngine::default(),
            gs_unit: Interpreter::default(),
            gs_input: GsInputBuffer::default(),
            gs_b15_set: false,
            cache_mode: VertexCacheMode::default(),
            limits: DrawLimits::default(),
            pixel_path: PixelPath::default(),
            vs_engine: VsEngine::default(),
            render_mode: RenderMode::default(),
            tev_solo: None,
            pixel_probe: None,
            threads: 1,
            defer_fragments: 0,
            vs_program: None,
            gs_program: None,
            recent_programs: Vec::new(),
            stages: StageCache::default(),
            templates: TemplateCache::default(),
            scratch: Scratch::default(),
            immediate: None,
            immediate_setup: ImmediateSetup::default(),
            textures: SharedTextureCache::default(),
        }
    }
}

/// Reusable buffers (allocated once, reused by every draw). Nothing in them outlives a draw
/// (each draw resizes, clears or overwrites what it uses, and flushes `screen`), so a clone of
/// the pipeline state (a replay keyframe holds one per keyframe) starts with empty buffers
/// instead of copying the last draw's ~100 KB.
#[derive(Debug, Default)]
struct Scratch {
    attrs: Vec<AttributeSet>,
    slots: Vec<OutputSlots>,
    /// (k, vertex id, where its outputs come from).
    pending: Vec<(u32, u32, Pending)>,
    /// Outputs of the cache hits of the current batch.
    cached: Vec<OutputSlots>,
    /// The post-transform cache of indexed draws, emptied at the start of each (boxed and
    /// optional: taking the scratch out for a draw makes no entries).
    vertex_cache: Option<Box<VertexCache<OutputSlots>>>,
    shade: ShadeScratch,
    tris: Vec<[OutputVertex; 3]>,
    /// Screen-space triangles waiting for the parallel pixel path.
    screen: Vec<[ScreenVertex; 3]>,
    /// The parallel pixel path's per-share tile stores, reused between batches and draws.
    stores: ShareStores,
    /// Draws whose pixel work waits for the following draws (cross-draw groups), and those
    /// drawn but not yet reported. Empty whenever the command processor is between lists, so
    /// a clone (a keyframe) starting empty loses nothing.
    waiting_pixels: deferred::Pending,
    /// The display transfer's buffers (see [`crate::engines::TransferScratch`]).
    transfer: crate::engines::TransferScratch,
}

impl Clone for Scratch {
    fn clone(&self) -> Self {
        Self::default()
    }
}

/// Where a pending vertex's shaded outputs come from.
#[derive(Clone, Copy, Debug)]
enum Pending {
    /// Shaded in this batch at this position.
    Shaded(usize),
    /// Found in the post-transform cache; copied to `Scratch::cached` at this position.
    Cached(usize),
}

/// The [`DrawSetup`] of the open immediate-mode draw, reused by its later vertices instead of
/// decoding the register file again for every vertex (stress: one full set-up per vertex).
///
/// Sound because the draw is closed ([`PipelineState::close_immediate`], which drops this) by
/// any register write outside the fixed-attribute ports 0x232-0x235, which no part of the set-up
/// reads, and the shader memories and uniforms change only through such writes. Only set-ups
/// without a geometry shader are kept: the GS uniforms change between vertices (the GS input
/// buffer fills them, and b15 follows every invocation), so those are decoded per vertex as
/// before. A pure cache: a clone (a keyframe) starts without it, and a missing entry is simply
/// decoded again.
#[derive(Default)]
struct ImmediateSetup(Option<Box<DrawSetup>>);

impl Clone for ImmediateSetup {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for ImmediateSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ImmediateSetup({})", self.0.is_some())
    }
}

#[derive(Clone, Debug)]
struct ImmediateDraw {
    info: DrawInfo,
    stats: DrawStats,
    detail: Option<DrawDetail>,
    vertices: u32,
}

impl PipelineState {
    /// Handles a write to PRIMITIVE_CONFIG or RESTART_PRIMITIVE: [C] resets assembly on any
    /// write to either, taking the topology from 0x25E bits 8-9.
    pub fn reset_assembly(&mut self, primitive_config: u32) {
        self.assembler
            .set_topology(Topology::from_bits(primitive_config >> 8));
        self.assembler.reset();
    }

    fn program(
        cache: &mut Option<CachedProgram>,
        recent: &mut Vec<(Arc<Program>, u64)>,
        unit: &ShaderMemory,
    ) -> (Arc<Program>, u64) {
        match cache {
            Some(c) if c.generation == unit.generation => (c.program.clone(), c.hash),
            _ => {
                // What `Program::new` keeps of the memories.
                let code = &unit.code[..unit.code.len().min(MAX_PROGRAM_WORDS)];
                let opdescs = &unit.opdescs[..unit.opdescs.len().min(MAX_OPDESCS)];
                let found = recent
                    .iter()
                    .position(|(p, _)| p.code() == code && p.opdescs() == opdescs);
                let (program, hash) = match found {
                    Some(i) => recent.remove(i),
                    None => {
                        let program = Program::new_shared(unit.code, unit.opdescs);
                        let hash = program.content_hash();
                        (program, hash)
                    }
                };
                recent.insert(0, (program.clone(), hash));
                recent.truncate(RECENT_PROGRAMS);
                *cache = Some(CachedProgram {
                    generation: unit.generation,
                    program: program.clone(),
                    hash,
                });
                (program, hash)
            }
        }
    }
}

/// Uniforms of a unit from its memories and its bool/int registers (block base `block`).
fn uniforms(unit: &ShaderMemory, regs: &[u32; 0x300], block: usize) -> Uniforms {
    let mut u = Uniforms {
        f: *unit.float_uniforms,
        ..Uniforms::default()
    };
    u.set_bools(regs[block]);
    for i in 0..4 {
        u.set_int(i, regs[block + 1 + i]);
    }
    u
}

/// Everything a draw decodes once from the registers.
struct DrawSetup {
    regs: Box<[u32; 0x300]>,
    setup: ShadingSetup,
    /// The set-up's configuration problems, reported with every use of it.
    diagnostics: Vec<shading::ShadingDiag>,
    clip: ClipParams,
    viewport: Viewport,
    vs_program: Arc<Program>,
    vs_hash: u64,
    vs_uniforms: Uniforms,
    gs: Option<(Arc<Program>, Uniforms)>,
    gs_hash: Option<u64>,
}

impl DrawSetup {
    fn draw_info(&self, draw: u64, kind: DrawKind, count: u32) -> DrawInfo {
        let units = crate::pixel::texture::TexUnitsControl::from_regs(&self.regs);
        let enabled = [units.enabled[0], units.enabled[1], units.enabled[2]];
        let textures = std::array::from_fn(|u| {
            enabled[u].then(|| {
                let t = crate::pixel::texture::TextureConfig::from_regs(&self.regs, u);
                TextureRef {
                    unit: u as u8,
                    addr: t.address,
                    width: t.width,
                    height: t.height,
                    format: t.format_id,
                }
            })
        });
        DrawInfo {
            draw,
            kind,
            topology: Topology::from_bits(self.regs[reg::PRIMITIVE_CONFIG as usize] >> 8),
            count,
            geometry_shader: self.setup.geometry.enabled,
            vs_program: (self.vs_hash, self.setup.vs.entry),
            gs_program: self.gs_hash.map(|h| (h, self.setup.gs.entry)),
            textures,
        }
    }
}

fn draw_setup<O: Observer>(
    p: &mut PipelineState,
    req: &DrawRequest,
    draw: u64,
    obs: &mut O,
) -> DrawSetup {
    let regs = Box::new(*req.regs);
    let setup = ShadingSetup::from_regs(&regs);
    let diagnostics = setup.diagnostics();
    for d in &diagnostics {
        obs.diagnostic(&d.to_diagnostic(Some(draw)));
    }
    let (vs_program, vs_hash) =
        PipelineState::program(&mut p.vs_program, &mut p.recent_programs, &req.vs);
    let vs_uniforms = uniforms(&req.vs, &regs, reg::VSH_BASE as usize);
    let mut gs_hash = None;
    let gs = if setup.geometry.enabled {
        let (program, hash) =
            PipelineState::program(&mut p.gs_program, &mut p.recent_programs, &req.gs);
        gs_hash = Some(hash);
        let mut u = uniforms(&req.gs, &regs, reg::GSH_BASE as usize);
        if p.gs_b15_set {
            u.b[15] = true;
        }
        Some((program, u))
    } else {
        None
    };
    DrawSetup {
        clip: ClipParams::from_regs(&regs),
        viewport: Viewport::from_regs(&regs),
        setup,
        diagnostics,
        regs,
        vs_program,
        vs_hash,
        vs_uniforms,
        gs,
        gs_hash,
    }
}

/// Where the draw driver records debug data besides the pixels: the per-draw detail and the
/// primitive-ID / overdraw buffers, when an observer asked for them.
struct Recording<'a> {
    detail: &'a mut Option<DrawDetail>,
    debug: &'a mut Option<Box<DebugBuffers>>,
    draw: u64,
    /// The vertices (indices in the draw) of the triangle in `tris`, when known.
    vertices: TriangleVertices,
}

/// Where a draw's screen-space triangles go: straight to the pixel pipeline (`threads` ≤ 1,
/// or the reference path), or into `screen` for [`flush_screen`].
struct PixelSink<'a> {
    screen: &'a mut Vec<[ScreenVertex; 3]>,
    threads: usize,
    stores: &'a mut ShareStores,
    /// Earlier draws whose pixels wait: drawn before (with, when they share the layout) the
    /// sink's triangles.
    pending: &'a mut deferred::Pending,
}

impl PixelSink<'_> {
    fn batched(&self, pixels: &PixelPipeline<TextureUnits>) -> bool {
        self.threads > 1 && pixels.path() == PixelPath::Specialized
    }
}

/// Draws the triangles collected in `sink` (in order) and empties it.
fn flush_screen(
    sink: &mut PixelSink,
    pixels: &mut PixelPipeline<TextureUnits>,
    stages: &mut FixedFunctionStages,
    mem: &mut PhysMem,
    stats: &mut DrawStats,
) {
    if sink.screen.is_empty() && !sink.pending.is_waiting() {
        return;
    }
    let culled = pixels.stats().triangles_culled;
    stats.triangles_rasterized += sink.pending.draw(
        mem,
        sink.threads,
        sink.stores,
        Some((pixels, stages, &sink.screen[..])),
    );
    stats.triangles_culled += pixels.stats().triangles_culled - culled;
    sink.screen.clear();
}

/// Clips, transforms and rasterises the assembled triangles in `tris` (or collects them in
/// `sink` for the parallel path, drawing a full batch).
#[allow(clippy::too_many_arguments)]
fn rasterize_all(
    tris: &mut Vec<[OutputVertex; 3]>,
    ds: &DrawSetup,
    pixels: &mut PixelPipeline<TextureUnits>,
    stages: &mut FixedFunctionStages,
    mem: &mut PhysMem,
    stats: &mut DrawStats,
    rec: Recording,
    sink: &mut PixelSink,
) {
    let Recording {
        detail,
        debug,
        draw,
        vertices,
    } = rec;
    // Per-draw detail and debug buffers need each triangle's outcome as it is drawn: those
    // draws stay on this thread (the debug buffers also select the reference path).
    let batched = sink.batched(pixels) && detail.is_none() && debug.is_none();
    for tri in tris.drain(..) {
        let index = u32::try_from(stats.triangles_assembled).unwrap_or(u32::MAX);
        stats.triangles_assembled += 1;
        if let Some(d) = detail.as_mut() {
            d.push_assembled(tri);
        }
        if let Some(b) = debug.as_mut() {
            b.set_primitive(PrimitiveId {
                draw,
                triangle: index,
            });
        }
        // Pixel history: records taken before this triangle's pieces (None without a probe).
        let probe_mark = if batched { None } else { pixels.probe_mark() };
        let poly = clip::clip_triangle(&tri, &ds.clip);
        if poly.is_empty() {
            stats.triangles_clipped_away += 1;
        }
        let (mut drawn, mut culled, mut invalid) = (false, false, false);
        for t in poly.triangles() {
            stats.triangles_clipped += 1;
            let screen = t.map(|v| viewport::to_screen(&v, &ds.viewport));
            if batched {
                sink.screen.push(screen);
                if sink.screen.len() >= PIXEL_BATCH {
                    flush_screen(sink, pixels, stages, mem, stats);
                }
                continue;
            }
            let outcome = match debug.as_mut() {
                Some(b) => pixels.draw_triangle_recorded(mem, &screen, stages, b),
                None => pixels.draw_triangle_with(mem, &screen, stages),
            };
            match outcome {
                TriangleOutcome::Drawn { .. } => {
                    stats.triangles_rasterized += 1;
                    drawn = true;
                }
                TriangleOutcome::Culled => {
                    stats.triangles_culled += 1;
                    culled = true;
                }
                TriangleOutcome::Invalid => invalid = true,
                TriangleOutcome::Degenerate => {}
            }
            if let Some(d) = detail.as_mut() {
                d.push_clipped_piece(screen, index, outcome == TriangleOutcome::Culled);
            }
        }
        if let Some(mark) = probe_mark
            && poly.was_clipped()
        {
            // What clipping removed, at the probed pixels.
            for t in crate::debug::fragment::positive_w_fan(&tri)
                .into_iter()
                .flatten()
            {
                let screen = t.map(|v| viewport::to_screen(&v, &ds.viewport));
                pixels.probe_clipped(&screen, index, mark);
            }
        }
        if let Some(d) = detail.as_mut() {
            let fate = if poly.is_empty() {
                TriangleFate::ClippedAway
            } else if drawn && poly.was_clipped() {
                TriangleFate::PartiallyClipped
            } else if drawn {
                TriangleFate::Drawn
            } else if culled {
                TriangleFate::Culled
            } else if invalid {
                TriangleFate::Invalid
            } else {
                TriangleFate::Degenerate
            };
            d.set_fate(index, fate, vertices);
        }
    }
}

/// Adds the pixel pipeline's counters to a draw's statistics (the per-fragment cost counters
/// are 0 when the pipeline ran with costs off, [`PixelPipeline::set_costs`]).
fn add_pixel_stats(stats: &mut DrawStats, pixels: &PixelPipeline<TextureUnits>) {
    let ps = pixels.stats();
    stats.fragments_written += ps.fragments_passed;
    stats.fragments_generated += ps.fragments;
    stats.fragments_alpha_failed += ps.alpha_failed;
    stats.fragments_stencil_failed += ps.stencil_failed;
    stats.fragments_depth_failed += ps.depth_failed;
    stats.texture_samples += ps.fragments * u64::from(pixels.sampled_units());
    stats.texels_fetched += ps.texels;
}

/// Starts recording a draw into the debug buffers (if any): selects the render target's
/// buffers and the reference pixel path.
fn begin_debug(debug: &mut Option<Box<DebugBuffers>>, pixels: &mut PixelPipeline<TextureUnits>) {
    if let Some(b) = debug.as_mut() {
        let fb = &pixels.config().fb;
        let bpp = fb.color_format.map_or(4, |f| f.bytes_per_pixel() as u32);
        let bytes = fb.width.saturating_mul(fb.height).saturating_mul(bpp);
        b.begin_draw(fb.color_addr, fb.width, fb.height, bytes);
        pixels.set_path(PixelPath::Reference);
    }
}

/// Records a shaded vertex in the draw detail, if detail is being recorded.
fn record_shaded(detail: &mut Option<DrawDetail>, ds: &DrawSetup, k: u32, slots: &OutputSlots) {
    if let Some(d) = detail.as_mut() {
        let n = ds.setup.vs.outputs.count();
        d.push_shaded(ShadedVertex {
            index_in_draw: k,
            outputs: slots[..n.min(16)].to_vec(),
            vertex: ds.setup.output_map.to_vertex(slots, n),
        });
    }
}

/// Hands one shaded vertex to primitive assembly, or to the geometry shader when the draw uses
/// one; completed triangles are appended to `tris`. Returns the GS instructions executed.
#[allow(clippy::too_many_arguments)]
fn route<O: Observer>(
    p: &mut PipelineState,
    ds: &DrawSetup,
    slots: &OutputSlots,
    gs_uniforms: Option<&mut Uniforms>,
    tris: &mut Vec<[OutputVertex; 3]>,
    stats: &mut DrawStats,
    draw: u64,
    obs: &mut O,
    record: Option<shading::GsRecord<'_>>,
) -> u64 {
    let gs_ctx = match (&ds.gs, gs_uniforms) {
        (Some((program, _)), Some(uniforms)) => Some(GsContext {
            buffer: &mut p.gs_input,
            unit: &mut p.gs_unit,
            program,
            uniforms,
        }),
        _ => None,
    };
    let routed = shading::route_vertex_recorded(
        &ds.setup,
        slots,
        gs_ctx,
        &mut p.assembler,
        |t| tris.push(t),
        record,
    );
    match routed {
        Ok(out) => {
            stats.gs_invocations += u64::from(out.gs_invocations);
            if out.gs_invocations > 0 {
                p.gs_b15_set = true;
            }
            if let Some(d) = out.diagnostic {
                obs.diagnostic(&d.to_diagnostic(Some(draw)));
            }
            out.gs_instructions
        }
        Err(e) => {
            // The invocation ran (and set b15) before it failed.
            stats.gs_invocations += 1;
            p.gs_b15_set = true;
            obs.diagnostic(&Diagnostic {
                kind: DiagKind::ShaderError,
                draw: Some(draw),
                detail: format!("geometry shader stopped: {e}"),
            });
            // The failed invocation's instructions count against the budgets like any other
            // (a GS that runs its per-invocation allowance and then fails is not free).
            p.gs_unit.last_executed
        }
    }
}

/// How many fixed-function stage configurations [`PipelineState`] keeps for later draws
/// (traces that alternate between a few kinds of draw on two screens reuse them; a miss costs
/// one 64-bit comparison per entry).
const RECENT_STAGES: usize = 16;

/// The registers [`FixedFunctionStages::from_regs`] reads all lie in these ranges: texture unit
/// 3 enable, the procedural texture, fog and gas (0x080-0x0FF: texturing, proctex 0x0A8-0x0AF,
/// fog/gas 0x0E0-0x0E7), the fragment operation mode (0x100-0x10F) and gas, shadow and
/// fragment lighting (0x120-0x1FF). The render target registers 0x110-0x11F are not read, so
/// draws into the other screen's buffers share the entry. A cached configuration is reused
/// only when every word of these ranges is equal.
const STAGE_REGS: [std::ops::Range<usize>; 2] = [0x080..0x110, 0x120..0x200];

/// Number of register words in [`STAGE_REGS`].
const STAGE_KEY_WORDS: usize =
    (STAGE_REGS[0].end - STAGE_REGS[0].start) + (STAGE_REGS[1].end - STAGE_REGS[1].start);

/// The [`STAGE_REGS`] words of `regs`, in order.
fn stage_key(regs: &[u32; 0x300]) -> [u32; STAGE_KEY_WORDS] {
    let mut key = [0u32; STAGE_KEY_WORDS];
    let (a, b) = key.split_at_mut(STAGE_REGS[0].end - STAGE_REGS[0].start);
    a.copy_from_slice(&regs[STAGE_REGS[0].clone()]);
    b.copy_from_slice(&regs[STAGE_REGS[1].clone()]);
    key
}

/// A 64-bit digest of a stage key, compared before the words themselves.
fn stage_key_hash(key: &[u32; STAGE_KEY_WORDS]) -> u64 {
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for pair in key.chunks_exact(2) {
        let w = u64::from(pair[0]) | (u64::from(pair[1]) << 32);
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
    h
}

/// A decoded [`FixedFunctionStages`] and what it was decoded from.
struct CachedStages {
    mode: RenderMode,
    hash: u64,
    regs: [u32; STAGE_KEY_WORDS],
    /// The lookup tables as of the decode, when some enabled stage reads them (lighting,
    /// procedural texture or fog); only the tables of the enabled stages are compared.
    luts: Option<Box<LookupTables>>,
    stages: FixedFunctionStages,
}

impl CachedStages {
    /// True if decoding registers with stage key `key` (digest `hash`) and `luts` in `mode`
    /// would give this entry's stages: the stage registers are equal and so are the tables
    /// the enabled stages read (a disabled stage reads no table).
    fn matches(
        &self,
        hash: u64,
        key: &[u32; STAGE_KEY_WORDS],
        luts: &LookupTables,
        mode: RenderMode,
    ) -> bool {
        if self.hash != hash || self.mode != mode || self.regs != *key {
            return false;
        }
        let Some(old) = self.luts.as_deref() else {
            // No stage that reads a table is enabled (the registers above decide which are).
            return true;
        };
        let s = &self.stages;
        (s.lighting.is_none() || old.lighting == luts.lighting)
            && (s.fog.is_none() || old.fog == luts.fog)
            && (s.proctex.is_none()
                || (old.proctex_noise == luts.proctex_noise
                    && old.proctex_rgb_map == luts.proctex_rgb_map
                    && old.proctex_alpha_map == luts.proctex_alpha_map
                    && old.proctex_color == luts.proctex_color
                    && old.proctex_color_diff == luts.proctex_color_diff))
    }
}

/// Recently decoded fixed-function stage configurations, most recent first (at most
/// [`RECENT_STAGES`]). Decoding the stages copies their tables (lighting LUTs, fog and proctex
/// tables: tens of KiB) even when the draw changed nothing, so draws with the configuration of
/// an earlier draw take the decoded stages from here. A pure cache: a clone of the pipeline
/// state (a keyframe) starts empty.
#[derive(Default)]
// Boxed: entries are taken out for a draw and put back, as pointers.
#[allow(clippy::vec_box)]
struct StageCache(Vec<Box<CachedStages>>);

impl Clone for StageCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for StageCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StageCache({} entries)", self.0.len())
    }
}

impl StageCache {
    /// The stages of a draw with `regs` and `luts`, taken out of the cache (or decoded);
    /// give them back with [`StageCache::put`] when the draw is done.
    fn take(
        &mut self,
        regs: &[u32; 0x300],
        luts: &LookupTables,
        mode: RenderMode,
    ) -> Box<CachedStages> {
        let key = stage_key(regs);
        let hash = stage_key_hash(&key);
        if let Some(i) = self
            .0
            .iter()
            .position(|e| e.matches(hash, &key, luts, mode))
        {
            return self.0.remove(i);
        }
        let citra = (mode == RenderMode::CitraSwrast)
            .then(|| citra_swrast_stage_regs(regs))
            .flatten();
        let stages = FixedFunctionStages::for_draw(citra.as_ref().unwrap_or(regs), luts);
        let reads_tables =
            stages.lighting.is_some() || stages.fog.is_some() || stages.proctex.is_some();
        Box::new(CachedStages {
            mode,
            hash,
            regs: key,
            luts: reads_tables.then(|| Box::new(luts.clone())),
            stages,
        })
    }

    /// Keeps `entry` as the most recent configuration.
    fn put(&mut self, entry: Box<CachedStages>) {
        self.0.insert(0, entry);
        self.0.truncate(RECENT_STAGES);
    }
}

/// Lighting, procedural texture, fog and shadow stages of a draw (from `cache` when an
/// earlier draw had the same configuration); the unverified behaviours the configuration
/// relies on are reported once per draw. Return the entry to the cache after the draw.
fn fixed_function_stages<O: Observer>(
    cache: &mut StageCache,
    regs: &[u32; 0x300],
    luts: &LookupTables,
    mode: RenderMode,
    draw: u64,
    obs: &mut O,
) -> Box<CachedStages> {
    let entry = cache.take(regs, luts, mode);
    for issue in entry.stages.issues() {
        obs.diagnostic(&Diagnostic {
            kind: DiagKind::Unsupported,
            draw: Some(draw),
            detail: format!("fixed-function stage relies on unverified behaviour: {issue}"),
        });
    }
    entry
}

/// The registers as Citra's software renderer uses them for the fixed-function stages, when
/// they differ (`None` otherwise; checked once per draw): its procedural texture ignores mip
/// levels and LOD (`pica-raster.md` §8.2 step 7 and §13.3: "Citra SW ignores mip levels
/// (always level 0)"; source [C] src/video_core/swrasterizer/proctex.cpp), so the mipmap
/// filters read level 0 with their nearest or linear colour-LUT filter: PROCTEX4 (0x0AC)
/// filter 2 and 4 become 0 (nearest), 3 and 5 become 1 (linear).
pub fn citra_swrast_stage_regs(regs: &[u32; 0x300]) -> Option<[u32; 0x300]> {
    const PROCTEX4: usize = 0x0AC;
    let filter = regs[PROCTEX4] & 7;
    let base = match filter {
        2 | 4 => 0,
        3 | 5 => 1,
        _ => return None,
    };
    let mut r = *regs;
    r[PROCTEX4] = (r[PROCTEX4] & !7) | base;
    Some(r)
}

fn report_pixel_diags<O: Observer>(
    pixels: &mut PixelPipeline<TextureUnits>,
    draw: u64,
    obs: &mut O,
) {
    let (records, dropped) = pixels.take_probe_records();
    for r in &records {
        obs.fragment(r);
    }
    if dropped > 0 {
        obs.diagnostic(&Diagnostic {
            kind: DiagKind::Other,
            draw: Some(draw),
            detail: format!("pixel history: {dropped} fragment records not kept (limit per draw)"),
        });
    }
    for d in pixels.take_diagnostics() {
        obs.diagnostic(&d.to_diagnostic(Some(draw)));
    }
}

impl PipelineState {
    /// Executes a DRAWARRAYS (`indexed = false`) or DRAWELEMENTS (`indexed = true`) draw with index
    /// `req.next_draw`. Returns the changes the command processor applies to its state.
    pub fn draw<O: Observer>(
        &mut self,
        req: &DrawRequest,
        mem: &mut PhysMem,
        indexed: bool,
        obs: &mut O,
    ) -> DrawOutcome {
        self.close_immediate(obs);
        let draw = req.next_draw;
        let kind = if indexed {
            DrawKind::Elements
        } else {
            DrawKind::Arrays
        };
        let ds = draw_setup(self, req, draw, obs);
        let loader = LoaderConfig::from_regs(&ds.regs);
        let info = ds.draw_info(draw, kind, loader.num_vertices);
        let defer = self.may_defer(obs);
        // Earlier draws' waiting pixels are drawn now if this draw cannot wait or reads what
        // they write (its textures are decoded and its vertices read below).
        if self.scratch.waiting_pixels.holds_pixels()
            && (!defer
                || self
                    .scratch
                    .waiting_pixels
                    .read_by(&ds.regs, &loader, indexed))
        {
            let Scratch {
                waiting_pixels,
                stores,
                ..
            } = &mut self.scratch;
            waiting_pixels.draw(mem, self.threads, stores, None);
        }
        let mut fragments_reported = self.scratch.waiting_pixels.report(obs);
        obs.draw_begin(&info);
        let draw_start = obs.wants_stage_times().then(std::time::Instant::now);
        for d in &loader.diagnostics {
            obs.diagnostic(&d.to_diagnostic(Some(draw)));
        }
        let mut stats = DrawStats::default();
        let mut detail = obs
            .wants_draw_detail()
            .then(|| DrawDetail::new(&ds.regs[..], obs.draw_detail_limits()));
        let template = self.templates.get(&ds.regs);
        let mut pixels = self
            .textures
            .pipeline(mem, &ds.regs, self.render_mode, template);
        pixels.set_path(self.pixel_path);
        // The per-fragment cost counters only when someone reads them (Observer::wants_costs).
        pixels.set_costs(obs.wants_costs());
        if self.tev_solo.is_some() {
            pixels.set_tev_solo(self.tev_solo);
        }
        if let Some(probe) = self.pixel_probe {
            pixels.set_probe(probe, draw);
        }
        if obs.wants_stage_times() {
            pixels.enable_timing();
        }
        let mut debug = obs.take_debug_buffers();
        begin_debug(&mut debug, &mut pixels);
        let mut stage_entry = fixed_function_stages(
            &mut self.stages,
            &ds.regs,
            req.luts,
            self.render_mode,
            draw,
            obs,
        );
        let stages = &mut stage_entry.stages;
        let p = self;
        let mut gs_uniforms = ds.gs.as_ref().map(|(_, u)| u.clone());
        if ds.setup.geometry.enabled
            && let Some(d) = p.gs_input.reconfigure(&ds.setup.geometry)
        {
            obs.diagnostic(&d.to_diagnostic(Some(draw)));
        }
        let (mut cursor, cap) = DrawCursor::new(&loader, kind, &p.limits);
        if let Some(d) = cap {
            obs.diagnostic(&d.to_diagnostic(Some(draw)));
        }
        let use_cache = indexed && p.cache_mode == VertexCacheMode::PerIndexedDraw;
        // Variable-primitive GS input interleaves batch counts with vertices, which depends on the
        // routing of every earlier vertex: shade one vertex at a time there.
        let variable_gs = ds.setup.geometry.enabled
            && ds.setup.geometry.effective_mode() == shading::GsInputMode::VariablePrimitive;
        let batch = if variable_gs { 1 } else { SHADE_BATCH };
        // Which vertices each assembled triangle is made of (recorded with the detail, for
        // draws without a geometry shader that do not continue an earlier draw's primitive).
        let mut index_assembler =
            (detail.is_some() && !ds.setup.geometry.enabled && p.assembler.is_empty())
                .then(|| PrimitiveAssembler::<u32>::new(p.assembler.topology()));
        let mut scratch = std::mem::take(&mut p.scratch);
        scratch.attrs.resize(batch, AttributeSet::default());
        scratch.slots.resize(batch, [[0.0; 4]; 16]);
        let mut cache = scratch.vertex_cache.take().unwrap_or_default();
        cache.clear();
        let mut instructions: u64 = 0;
        let mut screen = std::mem::take(&mut scratch.screen);
        let mut stores = std::mem::take(&mut scratch.stores);
        let mut pending = std::mem::take(&mut scratch.waiting_pixels);
        let mut sink = PixelSink {
            screen: &mut screen,
            threads: p.threads,
            stores: &mut stores,
            pending: &mut pending,
        };
        let mut positions: u64 = 0;
        'draw: loop {
            // Gather a batch of vertex ids; load the ones that need shading.
            scratch.pending.clear();
            scratch.cached.clear();
            let mut n_shade = 0;
            while scratch.pending.len() < batch {
                let Some(next) = cursor.next_id(&loader, mem) else {
                    break;
                };
                positions += 1;
                let (k, id) = match next {
                    Ok(v) => v,
                    Err(e) => {
                        obs.diagnostic(&e.to_diagnostic(Some(draw)));
                        break;
                    }
                };
                if variable_gs && p.gs_input.needs_count() {
                    if let Some(u) = gs_uniforms.as_mut() {
                        p.gs_input.submit_count(&ds.setup.geometry, id, &mut u.f);
                    }
                    continue;
                }
                if use_cache {
                    if let Some(slots) = cache.get(id) {
                        stats.vertex_cache_hits += 1;
                        scratch.cached.push(*slots);
                        scratch
                            .pending
                            .push((k, id, Pending::Cached(scratch.cached.len() - 1)));
                        continue;
                    }
                    // The same id earlier in this batch: shade once.
                    if let Some(&(_, _, Pending::Shaded(i))) = scratch
                        .pending
                        .iter()
                        .find(|(_, pid, s)| *pid == id && matches!(s, Pending::Shaded(_)))
                    {
                        stats.vertex_cache_hits += 1;
                        scratch.pending.push((k, id, Pending::Shaded(i)));
                        continue;
                    }
                }
                if let Err(e) =
                    loader.load_vertex(mem, req.fixed_attribs, k, id, &mut scratch.attrs[n_shade])
                {
                    obs.diagnostic(&e.to_diagnostic(Some(draw)));
                    cursor.stop();
                    break;
                }
                if let Some(d) = detail.as_mut() {
                    d.push_loaded(scratch.attrs[n_shade].to_loaded(k, id));
                }
                scratch.pending.push((k, id, Pending::Shaded(n_shade)));
                n_shade += 1;
            }
            if scratch.pending.is_empty() {
                break;
            }
            stats.vertices_loaded += n_shade as u64;
            let mut shaded = n_shade;
            if n_shade > 0 {
                let result = shade_batch(
                    &mut p.vs_unit,
                    p.vs_engine,
                    &ds.vs_program,
                    &ds.vs_uniforms,
                    &ds.setup.vs,
                    &scratch.attrs[..n_shade],
                    &mut scratch.shade,
                    &mut scratch.slots[..n_shade],
                );
                match result {
                    Ok(s) => {
                        stats.vs_invocations += s.vertices as u64;
                        stats.vs_instructions += s.instructions;
                        instructions += s.instructions;
                    }
                    Err(e) => {
                        shaded = e.vertex;
                        stats.vs_invocations += e.vertex as u64;
                        obs.diagnostic(&Diagnostic {
                            kind: DiagKind::ShaderError,
                            draw: Some(draw),
                            detail: format!(
                                "vertex shader stopped on vertex {} of the batch: {}",
                                e.vertex, e.error
                            ),
                        });
                    }
                }
            }
            for (k, id, src) in &scratch.pending {
                let (k, id) = (*k, *id);
                let slots = match src {
                    Pending::Shaded(i) if *i < shaded => scratch.slots[*i],
                    Pending::Shaded(_) => break 'draw,
                    Pending::Cached(c) => scratch.cached[*c],
                };
                if use_cache && matches!(src, Pending::Shaded(_)) {
                    cache.insert(id, slots);
                }
                record_shaded(&mut detail, &ds, k, &slots);
                let gs_instructions = route(
                    p,
                    &ds,
                    &slots,
                    gs_uniforms.as_mut(),
                    &mut scratch.tris,
                    &mut stats,
                    draw,
                    obs,
                    detail.as_mut().map(|detail| shading::GsRecord {
                        detail,
                        index_in_draw: k,
                    }),
                );
                stats.gs_instructions += gs_instructions;
                instructions += gs_instructions;
                let vertices = index_assembler.as_mut().and_then(|a| a.push(k));
                rasterize_all(
                    &mut scratch.tris,
                    &ds,
                    &mut pixels,
                    stages,
                    mem,
                    &mut stats,
                    Recording {
                        detail: &mut detail,
                        debug: &mut debug,
                        draw,
                        vertices,
                    },
                    &mut sink,
                );
                // A geometry shader can run up to its per-invocation budget (2^20
                // instructions) for every vertex of the batch: check after each invocation,
                // so the draw stops within one invocation of its instruction allowance (the
                // check below reports it).
                if gs_instructions > 0 && instructions > p.limits.max_shader_instructions {
                    break;
                }
            }
            if shaded < n_shade {
                break;
            }
            if instructions > p.limits.max_shader_instructions {
                obs.diagnostic(&Diagnostic {
                kind: DiagKind::DrawTruncated,
                draw: Some(draw),
                detail: format!(
                    "draw stopped after {instructions} shader instructions (limit {}); {} vertices not processed",
                    p.limits.max_shader_instructions,
                    cursor.remaining()
                ),
            });
                break;
            }
        }
        // The pixels wait for the next draws when the draw may wait (above), renders into the
        // waiting draws' buffers and the group stays within its bounds (draws, triangles, and
        // fragments below what the work budgets have left); otherwise the waiting draws and
        // this one are drawn now.
        let waits = if defer && debug.is_none() && detail.is_none() {
            pending.room_for(
                mem,
                p.threads,
                &mut stores,
                &pixels,
                &screen,
                p.defer_fragments,
            )
        } else {
            None
        };
        let gs_float_uniforms = gs_uniforms.map(|u| u.f);
        if let Some(b) = debug {
            obs.return_debug_buffers(b);
        }
        if let Some(bound) = waits {
            pending.push(
                info,
                stats,
                pixels,
                stages.clone(),
                &mut screen,
                bound,
                false,
            );
            pending.cycle(mem, p.threads, &mut stores, false);
        } else {
            let mut sink = PixelSink {
                screen: &mut screen,
                threads: p.threads,
                stores: &mut stores,
                pending: &mut pending,
            };
            flush_screen(&mut sink, &mut pixels, stages, mem, &mut stats);
            // The earlier draws drawn with this one end first.
            fragments_reported += pending.report(obs);
            add_pixel_stats(&mut stats, &pixels);
            report_pixel_diags(&mut pixels, draw, obs);
            if let (Some(timer), Some(t)) = (pixels.timer(), draw_start) {
                obs.stage_times(&timer.stage_times(t.elapsed()));
            }
            obs.draw_end(&info, &stats, detail);
            fragments_reported += stats.fragments_generated;
        }
        // Earlier draws drawn by a full batch of this one.
        fragments_reported += pending.report(obs);
        p.stages.put(stage_entry);
        scratch.vertex_cache = Some(cache);
        scratch.screen = screen;
        scratch.stores = stores;
        scratch.waiting_pixels = pending;
        p.scratch = scratch;
        DrawOutcome {
            draws_started: 1,
            gs_float_uniforms,
            work: WorkCount {
                vertices: positions,
                shader_instructions: instructions,
                // This draw's fragments, or 0 while they wait, and those of earlier draws
                // whose pixels were drawn during this one.
                fragments: fragments_reported,
                ..WorkCount::default()
            },
        }
    }

    /// One complete immediate-mode vertex (FIXEDATTRIB_INDEX = 0xF, §3.7): shaded with the VS input
    /// permutation applied, then routed like a vertex of a draw. Consecutive immediate vertices form
    /// one draw in the event log (index `req.next_draw` when this vertex opens it), closed by the
    /// next register write outside 0x232-0x235 ([`PipelineState::close_immediate`]). Returns the
    /// changes the command processor applies to its state.
    pub fn immediate_vertex<O: Observer>(
        &mut self,
        req: &DrawRequest,
        mem: &mut PhysMem,
        attrs: &[[f32; 4]],
        obs: &mut O,
    ) -> DrawOutcome {
        let mut outcome = DrawOutcome::default();
        if self.immediate.is_none() {
            let draw = req.next_draw;
            outcome.draws_started = 1;
            let ds = draw_setup(self, req, draw, obs);
            let info = ds.draw_info(draw, DrawKind::Immediate, 0);
            obs.draw_begin(&info);
            if ds.setup.geometry.enabled
                && let Some(d) = self.gs_input.reconfigure(&ds.setup.geometry)
            {
                obs.diagnostic(&d.to_diagnostic(Some(draw)));
            }
            self.immediate = Some(ImmediateDraw {
                info,
                stats: DrawStats::default(),
                detail: obs
                    .wants_draw_detail()
                    .then(|| DrawDetail::new(&ds.regs[..], obs.draw_detail_limits())),
                vertices: 0,
            });
            // The vertex below uses this decode (reporting its diagnostics again, as a second
            // decode would).
            self.immediate_setup.0 = (!ds.setup.geometry.enabled).then(|| Box::new(ds));
        }
        let Some(mut imm) = self.immediate.take() else {
            return outcome;
        };
        let draw = imm.info.draw;
        // The set-up as `draw_setup` would decode it now (the registers it reads are those of
        // the draw's first vertex), its diagnostics reported again as a fresh decode would.
        let ds = match self.immediate_setup.0.take() {
            Some(mut ds) => {
                // The fixed-attribute ports are the only registers written since (none of
                // the set-up reads them; copied so that `ds.regs` is the register file).
                let ports = reg::FIXEDATTRIB_INDEX as usize..=reg::FIXEDATTRIB_DATA2 as usize;
                ds.regs[ports.clone()].copy_from_slice(&req.regs[ports]);
                for d in &ds.diagnostics {
                    obs.diagnostic(&d.to_diagnostic(Some(draw)));
                }
                ds
            }
            None => Box::new(draw_setup(self, req, draw, obs)),
        };
        let set = AttributeSet::immediate(attrs);
        let k = imm.vertices;
        imm.vertices += 1;
        imm.info.count = imm.vertices;
        imm.stats.vertices_loaded += 1;
        if let Some(d) = imm.detail.as_mut() {
            d.push_loaded(set.to_loaded(k, k));
        }
        let p = &mut *self;
        let mut scratch = std::mem::take(&mut p.scratch);
        let mut slots = [[[0.0f32; 4]; 16]; 1];
        let result = shade_batch(
            &mut p.vs_unit,
            p.vs_engine,
            &ds.vs_program,
            &ds.vs_uniforms,
            &ds.setup.vs,
            std::slice::from_ref(&set),
            &mut scratch.shade,
            &mut slots,
        );
        imm.stats.vs_invocations += 1;
        outcome.work.vertices = 1;
        match result {
            Ok(s) => {
                imm.stats.vs_instructions += s.instructions;
                outcome.work.shader_instructions = s.instructions;
                let slots = slots[0];
                record_shaded(&mut imm.detail, &ds, k, &slots);
                let mut gs_uniforms = ds.gs.as_ref().map(|(_, u)| u.clone());
                let gs_instructions = route(
                    p,
                    &ds,
                    &slots,
                    gs_uniforms.as_mut(),
                    &mut scratch.tris,
                    &mut imm.stats,
                    draw,
                    obs,
                    imm.detail.as_mut().map(|detail| shading::GsRecord {
                        detail,
                        index_in_draw: k,
                    }),
                );
                imm.stats.gs_instructions += gs_instructions;
                outcome.work.shader_instructions += gs_instructions;
                outcome.gs_float_uniforms = gs_uniforms.map(|u| u.f);
                if !scratch.tris.is_empty() {
                    // The vertex's pixels may wait like a draw's (see `draw`); earlier pixels
                    // are drawn first if it cannot wait or its textures are in their buffers.
                    let defer = self.may_defer(obs) && imm.detail.is_none();
                    if scratch.waiting_pixels.holds_pixels()
                        && (!defer || scratch.waiting_pixels.textures_read_by(&ds.regs))
                    {
                        let Scratch {
                            waiting_pixels,
                            stores,
                            ..
                        } = &mut scratch;
                        waiting_pixels.draw(mem, self.threads, stores, None);
                    }
                    outcome.work.fragments += scratch.waiting_pixels.report(obs);
                    let template = self.templates.get(&ds.regs);
                    let mut pixels =
                        self.textures
                            .pipeline(mem, &ds.regs, self.render_mode, template);
                    pixels.set_path(self.pixel_path);
                    pixels.set_costs(obs.wants_costs());
                    let mut debug = obs.take_debug_buffers();
                    begin_debug(&mut debug, &mut pixels);
                    if self.tev_solo.is_some() {
                        pixels.set_tev_solo(self.tev_solo);
                    }
                    if let Some(probe) = self.pixel_probe {
                        pixels.set_probe(probe, draw);
                    }
                    let mut stage_entry = fixed_function_stages(
                        &mut self.stages,
                        &ds.regs,
                        req.luts,
                        self.render_mode,
                        draw,
                        obs,
                    );
                    let stages = &mut stage_entry.stages;
                    // The triangles this vertex completed (one, or a geometry shader's
                    // output) are drawn before the next vertex arrives, with the draw's workers
                    // (a full-screen immediate-mode quad is worth splitting).
                    let mut screen = std::mem::take(&mut scratch.screen);
                    let mut stores = std::mem::take(&mut scratch.stores);
                    let mut pending = std::mem::take(&mut scratch.waiting_pixels);
                    let mut sink = PixelSink {
                        screen: &mut screen,
                        threads: self.threads,
                        stores: &mut stores,
                        pending: &mut pending,
                    };
                    rasterize_all(
                        &mut scratch.tris,
                        &ds,
                        &mut pixels,
                        stages,
                        mem,
                        &mut imm.stats,
                        Recording {
                            detail: &mut imm.detail,
                            debug: &mut debug,
                            draw,
                            vertices: None,
                        },
                        &mut sink,
                    );
                    let waits = if defer && debug.is_none() {
                        pending.room_for(
                            mem,
                            self.threads,
                            &mut stores,
                            &pixels,
                            &screen,
                            self.defer_fragments,
                        )
                    } else {
                        None
                    };
                    if let Some(b) = debug.take() {
                        obs.return_debug_buffers(b);
                    }
                    if let Some(bound) = waits {
                        pending.push(
                            imm.info,
                            DrawStats::default(),
                            pixels,
                            stages.clone(),
                            &mut screen,
                            bound,
                            true,
                        );
                        pending.cycle(mem, self.threads, &mut stores, false);
                    } else {
                        let mut sink = PixelSink {
                            screen: &mut screen,
                            threads: self.threads,
                            stores: &mut stores,
                            pending: &mut pending,
                        };
                        flush_screen(&mut sink, &mut pixels, stages, mem, &mut imm.stats);
                        // Earlier pixels drawn with this vertex's are reported first.
                        outcome.work.fragments += pending.report(obs);
                        add_pixel_stats(&mut imm.stats, &pixels);
                        outcome.work.fragments += pixels.stats().fragments;
                        report_pixel_diags(&mut pixels, draw, obs);
                    }
                    outcome.work.fragments += pending.report(obs);
                    self.stages.put(stage_entry);
                    scratch.screen = screen;
                    scratch.stores = stores;
                    scratch.waiting_pixels = pending;
                }
            }
            Err(e) => obs.diagnostic(&Diagnostic {
                kind: DiagKind::ShaderError,
                draw: Some(draw),
                detail: format!(
                    "vertex shader stopped on an immediate-mode vertex: {}",
                    e.error
                ),
            }),
        }
        self.scratch = scratch;
        self.immediate = Some(imm);
        if !ds.setup.geometry.enabled {
            self.immediate_setup.0 = Some(ds);
        }
        outcome
    }

    /// Ends the open immediate-mode draw, if any (called before any register write outside the
    /// fixed-attribute ports, and at the end of command lists).
    pub fn close_immediate<O: Observer>(&mut self, obs: &mut O) {
        self.immediate_setup.0 = None;
        if let Some(imm) = self.immediate.take() {
            match imm.detail {
                // Recorded in detail: its vertices' pixels never waited.
                Some(detail) => obs.draw_end(&imm.info, &imm.stats, Some(detail)),
                // With pixels of its vertices waiting or unreported, it ends after them.
                None => {
                    if let Some((info, stats)) = self
                        .scratch
                        .waiting_pixels
                        .end_immediate(imm.info, imm.stats)
                    {
                        obs.draw_end(&info, &stats, None);
                    }
                }
            }
        }
    }

    /// May a draw's (or an immediate-mode vertex's) pixels wait for the following draws
    /// (`draw/deferred.rs`)? Only where nobody can tell: several threads, the specialised path
    /// without probe or solo, an observer that takes late draw ends and wants no per-draw
    /// detail, costs or timing, and a command processor that allows it
    /// ([`PipelineState::defer_fragments`]).
    fn may_defer<O: Observer>(&self, obs: &O) -> bool {
        self.threads > 1
            && self.defer_fragments > 0
            && self.pixel_path == PixelPath::Specialized
            && self.tev_solo.is_none()
            && self.pixel_probe.is_none()
            && obs.allows_deferred_pixels()
            && !obs.wants_draw_detail()
            && !obs.wants_costs()
            && !obs.wants_stage_times()
    }

    /// True while immediate-mode vertices are being collected into an open draw.
    pub fn immediate_open(&self) -> bool {
        self.immediate.is_some()
    }

    /// Draws the pixels of draws that wait for following draws (see
    /// [`PipelineState::defer_fragments`]) and reports those draws to `obs` (pixel
    /// diagnostics, `draw_end`) in draw order. Returns the fragments they generated, which
    /// the caller charges to the work budgets. The command processor calls this whenever it
    /// stops or finishes a command list, so memory is complete outside lists.
    pub fn flush_pixels<O: Observer>(&mut self, mem: &mut PhysMem, obs: &mut O) -> u64 {
        let Scratch {
            waiting_pixels,
            stores,
            ..
        } = &mut self.scratch;
        if waiting_pixels.busy() {
            waiting_pixels.draw(mem, self.threads, stores, None);
        }
        waiting_pixels.report(obs)
    }

    /// Where the parallel pixel path's groups spent their time since this state was made
    /// (zero at 1 thread; a clone starts at zero).
    pub fn parallel_times(&self) -> crate::pixel::fragment::parallel::ParallelTimes {
        self.scratch.stores.times()
    }

    /// The buffers display transfers convert through, kept between transfers.
    pub fn transfer_scratch(&mut self) -> &mut crate::engines::TransferScratch {
        &mut self.scratch.transfer
    }

    /// True if draws wait whose colour or depth buffer overlaps the physical bytes
    /// `start..end` (the command processor asks for the list it reads).
    pub fn pixels_wait_on(&self, start: u64, end: u64) -> bool {
        self.scratch.waiting_pixels.overlaps((start, end))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 16) as u32
        }
    }

    fn random_luts(rng: &mut Rng) -> LookupTables {
        let mut l = LookupTables::default();
        for t in l.lighting.iter_mut() {
            for w in t.iter_mut() {
                *w = rng.next() & 0xFF_FFFF;
            }
        }
        for t in [
            &mut l.fog[..],
            &mut l.proctex_noise[..],
            &mut l.proctex_rgb_map[..],
            &mut l.proctex_alpha_map[..],
            &mut l.proctex_color[..],
            &mut l.proctex_color_diff[..],
        ] {
            for w in t.iter_mut() {
                *w = rng.next();
            }
        }
        l
    }

    /// Random registers with lighting, the procedural texture and fog (or gas, or shadow
    /// rendering) switched on as `case` selects.
    fn stage_regs(rng: &mut Rng, case: usize) -> Box<[u32; 0x300]> {
        let mut r = Box::new([0u32; 0x300]);
        for w in r.iter_mut() {
            *w = rng.next();
        }
        // LIGHTING_ENABLE0 (0x08F) bit 0, TEXUNIT_CONFIG (0x080) bit 10: proctex.
        r[0x08F] = (r[0x08F] & !1) | u32::from(case % 3 != 2);
        r[0x080] = (r[0x080] & !(1 << 10)) | (u32::from(case.is_multiple_of(2)) << 10);
        // Fog mode (0x0E0 bits 0-2): fog, gas or off; fragment mode (0x100 bits 0-1).
        r[0x0E0] = (r[0x0E0] & !7) | [5, 7, 0, 5][case % 4];
        r[0x100] = (r[0x100] & !3) | [0, 1, 3, 0, 0][case % 5];
        r
    }

    /// `FixedFunctionStages::from_regs` reads only the [`STAGE_REGS`] words: changing every
    /// other register at random never changes the decoded stages. This is what makes keying
    /// the stage cache on those words sound.
    #[test]
    fn stages_depend_only_on_the_stage_registers() {
        let mut rng = Rng(0xD4A5_0001_2345_6789);
        let luts = random_luts(&mut rng);
        for case in 0..200 {
            let regs = stage_regs(&mut rng, case);
            let base = format!("{:?}", FixedFunctionStages::for_draw(&regs, &luts));
            let mut other = regs.clone();
            for (i, w) in other.iter_mut().enumerate() {
                if !STAGE_REGS.iter().any(|r| r.contains(&i)) {
                    *w = rng.next();
                }
            }
            assert_eq!(stage_key(&regs), stage_key(&other));
            let changed = format!("{:?}", FixedFunctionStages::for_draw(&other, &luts));
            assert_eq!(base, changed, "case {case}");
        }
    }

    /// The stage cache hands back an entry only for the same stage registers, render mode and
    /// the tables the enabled stages read; otherwise it decodes anew, and what it returns is
    /// always what a fresh decode gives.
    #[test]
    fn stage_cache_reuses_only_identical_configurations() {
        let mut rng = Rng(0x5EED_0000_D4A5_0002);
        let luts = random_luts(&mut rng);
        let regs = stage_regs(&mut rng, 0);
        let fresh = |r: &[u32; 0x300], l: &LookupTables| {
            format!("{:?}", FixedFunctionStages::for_draw(r, l))
        };
        let mode = RenderMode::Hardware;
        let mut cache = StageCache::default();
        let e = cache.take(&regs, &luts, mode);
        assert!(e.stages.lighting.is_some() && e.stages.proctex.is_some());
        assert!(e.stages.fog.is_some());
        let first: *const CachedStages = &*e;
        cache.put(e);
        // The render target (0x110-0x11F) is not part of the key: the same entry.
        let mut other_target = regs.clone();
        other_target[0x11C] ^= 0x100;
        other_target[0x11D] ^= 0x200;
        let e = cache.take(&other_target, &luts, mode);
        assert_eq!(&*e as *const CachedStages, first);
        assert_eq!(format!("{:?}", e.stages), fresh(&other_target, &luts));
        cache.put(e);
        // A changed table entry of each enabled stage, a changed stage register, the other
        // render mode: a new decode, equal to decoding from scratch.
        let mut cases: Vec<(Box<[u32; 0x300]>, LookupTables, RenderMode)> = Vec::new();
        let mut l = luts.clone();
        l.fog[3] ^= 0x1234;
        cases.push((regs.clone(), l, mode));
        let mut l = luts.clone();
        l.lighting[5][7] ^= 0x40_0001;
        cases.push((regs.clone(), l, mode));
        let mut l = luts.clone();
        l.proctex_color[9] ^= 0xFF;
        cases.push((regs.clone(), l, mode));
        let mut l = luts.clone();
        l.proctex_noise[1] ^= 0x10;
        cases.push((regs.clone(), l, mode));
        let mut r = regs.clone();
        r[0x1C0] ^= 0x10;
        cases.push((r, luts.clone(), mode));
        let mut r = regs.clone();
        r[0x0E1] ^= 0x0001_0000;
        cases.push((r, luts.clone(), mode));
        cases.push((regs.clone(), luts.clone(), RenderMode::CitraSwrast));
        for (k, (r, l, m)) in cases.iter().enumerate() {
            let e = cache.take(r, l, *m);
            assert_ne!(
                &*e as *const CachedStages, first,
                "case {k}: stale entry reused"
            );
            let expected = match m {
                RenderMode::CitraSwrast => {
                    let c = citra_swrast_stage_regs(r);
                    fresh(c.as_ref().unwrap_or(r), l)
                }
                RenderMode::Hardware => fresh(r, l),
            };
            assert_eq!(format!("{:?}", e.stages), expected, "case {k}");
            // The entry is kept, and found again for the same input.
            let again: *const CachedStages = &*e;
            cache.put(e);
            let e = cache.take(r, l, *m);
            assert_eq!(&*e as *const CachedStages, again, "case {k}: not reused");
            cache.put(e);
        }
        // Tables of stages that are off are not compared: with lighting, proctex and fog off
        // any table change keeps the entry.
        let mut off = regs.clone();
        off[0x08F] &= !1;
        off[0x080] &= !(1 << 10);
        off[0x0E0] &= !7;
        let e = cache.take(&off, &luts, mode);
        assert!(e.luts.is_none());
        let plain: *const CachedStages = &*e;
        cache.put(e);
        let mut l = luts.clone();
        l.fog[0] ^= 1;
        l.lighting[0][0] ^= 1;
        l.proctex_color[0] ^= 1;
        let e = cache.take(&off, &l, mode);
        assert_eq!(&*e as *const CachedStages, plain);
        cache.put(e);
        // Bounded.
        for k in 0..40u32 {
            let mut r = regs.clone();
            r[0x1C0] = k;
            let e = cache.take(&r, &luts, mode);
            cache.put(e);
        }
        assert_eq!(cache.0.len(), RECENT_STAGES);
    }

    /// `PipelineTemplate::from_regs` reads only the [`PipelineTemplate::KEY`] words: changing
    /// every other register at random never changes the template (configuration, combiner
    /// program, units read, diagnostics). This is what makes keying the template cache on
    /// those words sound.
    #[test]
    fn templates_depend_only_on_the_key_registers() {
        let mut rng = Rng(0xC3D5_0001_7E3A_1001);
        let mut diagnosed = 0;
        for case in 0..300 {
            let regs = stage_regs(&mut rng, case);
            let t = PipelineTemplate::from_regs(&regs);
            diagnosed += usize::from(!format!("{t:?}").contains("diags: []"));
            let base = format!("{t:?}");
            let mut other = regs.clone();
            for (i, w) in other.iter_mut().enumerate() {
                if !PipelineTemplate::KEY.contains(&i) {
                    *w = rng.next();
                }
            }
            let changed = format!("{:?}", PipelineTemplate::from_regs(&other));
            assert_eq!(base, changed, "case {case}");
        }
        // Random registers exercise the diagnostics too (reserved values, unknown formats).
        assert!(diagnosed > 0);
    }

    /// The template cache hands back a template equal to a fresh decode, reuses an entry only
    /// for identical key words (any changed key word decodes anew), and stays bounded.
    #[test]
    fn template_cache_reuses_only_identical_keys() {
        let mut rng = Rng(0x7E3A_0000_C3D5_0002);
        let regs = stage_regs(&mut rng, 0);
        let fresh = |r: &[u32; 0x300]| format!("{:?}", PipelineTemplate::from_regs(r));
        let mut cache = TemplateCache::default();
        assert_eq!(format!("{:?}", cache.get(&regs)), fresh(&regs));
        let first: *const PipelineTemplate = cache.get(&regs);
        assert_eq!(cache.0.len(), 1);
        // Registers outside the key (vertex arrays, shader uniforms): the same entry.
        let mut outside = regs.clone();
        outside[0x200] ^= 0x1000;
        outside[0x2B0] ^= 1;
        outside[0x03F] ^= 7;
        assert_eq!(cache.get(&outside) as *const PipelineTemplate, first);
        assert_eq!(cache.0.len(), 1);
        // Any key word changed: a new entry equal to a fresh decode; the old one is still found.
        for i in [
            0x040usize, 0x080, 0x0C0, 0x0FF, 0x100, 0x110, 0x11C, 0x140, 0x1FF,
        ] {
            let mut r = regs.clone();
            r[i] ^= 0x0001_0001;
            let n = cache.0.len();
            assert_eq!(format!("{:?}", cache.get(&r)), fresh(&r), "word 0x{i:03X}");
            assert_eq!(cache.0.len(), n + 1, "word 0x{i:03X}: stale entry reused");
            assert_eq!(format!("{:?}", cache.get(&regs)), fresh(&regs));
            assert_eq!(cache.0.len(), n + 1);
        }
        // Bounded.
        for k in 0..40u32 {
            let mut r = regs.clone();
            r[0x0C0] = k;
            let _ = cache.get(&r);
        }
        assert_eq!(cache.0.len(), RECENT_TEMPLATES);
        // A clone (a keyframe) starts empty.
        assert_eq!(cache.clone().0.len(), 0);
    }
}
