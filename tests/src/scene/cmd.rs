//! Building one PICA command list the way citro3d/libctru build theirs: shader binding with code
//! and uniform uploads, vertex input configuration, textures, combiners, fragment state, render
//! target, viewport and scissor, draw calls and the end-of-list sequence.
//!
//! Stage: producer of command lists (input of the command processor, `pica-core.md` §1-§3).
//! Inputs: calls on [`CommandList`]. Outputs: command-list bytes (via pica-cmd's
//! [`CmdListBuilder`]) and the guest-memory ranges the list's draws read (vertex, index and
//! texture data), which [`super::Scene::submit`] records as memory loads before kicking the list,
//! as Citra's recorder does. Registers written: every register named in the method docs; ids
//! come from pica-cmd's catalogue (`pica_cmd::regs::id`).
//!
//! The register sequences follow what the SDK libraries write (learned from libctru's
//! `shaderProgramConfigure`/`shaderProgramUse`, citro3d's `C3Di_UpdateContext`,
//! `C3D_DrawArrays`/`C3D_DrawElements`/`C3D_ImmDrawBegin`), including their quirks (masked
//! writes, the FINALIZE padding, indexed triangle lists drawn with topology "geometry
//! primitive"), so traces made with this builder look like traces of real homebrew. Unlike
//! citro3d, state is written when a method is called, not deferred to the next draw; but like
//! citro3d's dirty flags, setting a state group (program, attributes, buffers, effect, textures,
//! a TEV stage, a float uniform) to exactly what this list last wrote for it writes nothing. The
//! cache starts empty in every list, and raw writes ([`CommandList::write`] …) bypass it.
//!
//! Errors (an invalid mask or an impossible burst, a draw without buffers) are sticky: the first
//! one is kept and returned when the list is submitted ([`super::Scene::submit`]), so building code stays free of `?`.

use std::sync::Arc;

use pica_cmd::cmdlist::CmdListBuilder;
use pica_cmd::regs::RegView;
use pica_cmd::regs::Rgba8;
use pica_cmd::regs::framebuffer::{ColorFormat, DepthFormat};
use pica_cmd::regs::id;
use pica_cmd::regs::pipeline::{IndexFormat, PrimitiveTopology};
use pica_cmd::regs::rasterizer::ScissorMode;
use pica_cmd::regs::tev::{FogMode, TevStage};
use pica_cmd::regs::texturing::{TexLod, TexParam, TextureFormat, TextureType};
use shader_unit::asm::AsmConstant;
use shader_unit::float::{F24, F31, pack_f24x4, pack_f32x4};

use super::SceneError;
use super::effect::{Effect, FogLut, tev_passthrough};
use super::layout::{AttribLayout, BufferLayout};
use super::lighting::{LightEnv, LightLut, color_word};
use super::math::Mat4;
use super::resources::{IndexBuffer, RenderTarget};
use super::shader::{ShaderCode, ShaderEntry, ShaderProgram};
use super::texture::Texture;

/// Program words per CODETRANSFER_DATA command (libctru sends 128 at a time).
const CODE_CHUNK: usize = 128;
/// Vertex-shader program words the SDK uploads at most (libctru: the VS code memory holds 512).
const VS_CODE_LIMIT: usize = 512;
/// BOOLUNIFORM writes carry 0x7FFF in bits 16-31 (libctru/citro3d always set them).
const BOOL_UNIFORM_HIGH: u32 = 0x7FFF_0000;
/// ENTRYPOINT writes carry 0x7FFF in bits 16-31 (libctru).
const ENTRYPOINT_HIGH: u32 = 0x7FFF_0000;

/// Packs a vec4 for the fixed-attribute / immediate-mode ports: float24 converted by
/// truncating the mantissa, as libctru's `f32tof24` does (\[LC\]), then the 3-word packing, w
/// first.
pub fn pack_f24_truncated(v: [f32; 4]) -> [u32; 3] {
    pack_f24x4(v.map(F24::from_f32_truncate))
}

/// Which shader unit's registers a uniform write targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Unit {
    /// The vertex shader (registers 0x2B0-0x2DF).
    Vertex,
    /// The geometry shader (registers 0x280-0x2AF).
    Geometry,
}

impl Unit {
    /// Distance from a VSH_* register id to the same register of this unit.
    const fn offset(self) -> u16 {
        match self {
            Unit::Vertex => 0,
            Unit::Geometry => id::VSH_BOOLUNIFORM - id::GSH_BOOLUNIFORM,
        }
    }

    /// The id of VSH register `vsh_id` in this unit's block.
    const fn reg(self, vsh_id: u16) -> u16 {
        vsh_id - self.offset()
    }

    const fn index(self) -> usize {
        match self {
            Unit::Vertex => 0,
            Unit::Geometry => 1,
        }
    }
}

/// Which shader code the GPU's units hold, so a program is only re-uploaded when it changed
/// (citro3d's rule in `C3D_BindProgram`). Carried from one command list to the next by
/// [`super::Scene`].
#[derive(Clone, Debug, Default)]
pub struct Residency {
    vs: Option<Arc<ShaderCode>>,
    gs: Option<Arc<ShaderCode>>,
}

fn same(a: &Option<Arc<ShaderCode>>, b: &Arc<ShaderCode>) -> bool {
    a.as_ref().is_some_and(|a| Arc::ptr_eq(a, b))
}

/// A command list under construction, plus the state that decides what it must write.
#[derive(Debug)]
pub struct CommandList {
    b: CmdListBuilder,
    error: Option<SceneError>,
    residency: Residency,
    /// Guest memory read by the draws so far: `(pa, len)` in order of use.
    reads: Vec<(u32, u32)>,
    buffers: Option<BufferLayout>,
    textures: [Option<Texture>; 3],
    bools: [u16; 2],
    /// TEXENV_UPDATE_BUFFER as last written (fog mode, buffer update masks, fog z flip).
    tev_buffer: u32,
    tev_buffer_color: u32,
    fog_color: u32,
    draws: u32,
    draw_used: bool,
    cache: StateCache,
}

/// What this list last wrote for each state group, so that re-setting identical state writes
/// nothing (the effect of citro3d's dirty flags for an application that sets all its state before
/// every draw). Starts empty in every list: the first setting of each group is always written.
#[derive(Clone, Debug)]
struct StateCache {
    program: Option<ShaderProgram>,
    attributes: Option<AttribLayout>,
    effect: Option<Effect>,
    textures: Option<[Option<Texture>; 3]>,
    tev: [Option<TevStage>; 6],
    /// Float uniforms last uploaded, per unit and register (`None` = unknown).
    uniforms: [[Option<[u32; 4]>; 96]; 2],
}

impl Default for StateCache {
    fn default() -> Self {
        StateCache {
            program: None,
            attributes: None,
            effect: None,
            textures: None,
            tev: [None; 6],
            uniforms: [[None; 96]; 2],
        }
    }
}

/// True if `a` and `b` are the same program (same code objects and entry points).
fn same_program(a: &ShaderProgram, b: &ShaderProgram) -> bool {
    let gs_same = match (&a.gs, &b.gs) {
        (None, None) => true,
        (Some(x), Some(y)) => {
            Arc::ptr_eq(&x.code, &y.code)
                && x.entry.main == y.entry.main
                && x.stride == y.stride
                && x.permutation == y.permutation
        }
        _ => false,
    };
    Arc::ptr_eq(&a.vs_code, &b.vs_code) && a.vs.main == b.vs.main && gs_same
}

impl CommandList {
    /// An empty list for a GPU whose shader units hold `residency`.
    pub(crate) fn new(residency: Residency) -> Self {
        CommandList {
            b: CmdListBuilder::new(),
            error: None,
            residency,
            reads: Vec::new(),
            buffers: None,
            textures: [None; 3],
            bools: [0; 2],
            tev_buffer: 0,
            tev_buffer_color: 0xFFFF_FFFF,
            fog_color: 0,
            draws: 0,
            draw_used: false,
            cache: StateCache::default(),
        }
    }

    fn fail(&mut self, e: SceneError) {
        if self.error.is_none() {
            self.error = Some(e);
        }
    }

    // ----- raw writes ---------------------------------------------------------------------

    /// One full-word register write (libctru `GPUCMD_AddWrite`).
    pub fn write(&mut self, id: u16, value: u32) -> &mut Self {
        self.b.write(id, value);
        self
    }

    /// One write with a byte-enable mask (bit n = byte n; `GPUCMD_AddMaskedWrite`).
    pub fn write_masked(&mut self, id: u16, mask: u8, value: u32) -> &mut Self {
        if let Err(e) = self.b.write_masked(id, mask, value) {
            self.fail(SceneError::Encode(e));
        }
        self
    }

    /// `values[k]` to register `id + k` in consecutive-mode commands
    /// (`GPUCMD_AddIncrementalWrites`).
    pub fn consecutive(&mut self, id: u16, values: &[u32]) -> &mut Self {
        if let Err(e) = self.b.consecutive(id, 0xF, values) {
            self.fail(SceneError::Encode(e));
        }
        self
    }

    /// Every value to register `id` (a data port), in commands of at most 256 parameters
    /// (`GPUCMD_AddWrites`).
    pub fn repeated(&mut self, id: u16, values: &[u32]) -> &mut Self {
        if let Err(e) = self.b.repeated(id, 0xF, values) {
            self.fail(SceneError::Encode(e));
        }
        self
    }

    /// Number of draws (array, element and immediate) so far.
    pub fn draw_count(&self) -> u32 {
        self.draws
    }

    /// Bytes so far (before the end-of-list sequence).
    pub fn len_bytes(&self) -> usize {
        self.b.len_bytes()
    }

    // ----- defaults -----------------------------------------------------------------------

    /// Writes the state `C3D_Init` leaves for the first draw: the default [`Effect`], no
    /// textures (TEXUNIT_CONFIG = bit 12, cache cleared, TEXUNIT0_SHADOW = 1), the combiner
    /// buffer configuration (no fog, no buffer updates, buffer colour white, fog colour black)
    /// and all six TEV stages passing the previous value through.
    pub fn defaults(&mut self) -> &mut Self {
        self.set_effect(&Effect::default());
        self.bind_textures([None, None, None]);
        self.tev_buffer = 0;
        self.tev_buffer_color = 0xFFFF_FFFF;
        self.fog_color = 0;
        self.write_tev_buffer();
        for stage in 0..6 {
            self.set_tev(stage, &tev_passthrough());
        }
        self
    }

    // ----- shaders ------------------------------------------------------------------------

    fn upload_code(&mut self, unit: Unit, code: &ShaderCode, limit: usize) {
        let words = code.words.get(..code.words.len().min(limit)).unwrap_or(&[]);
        self.write(unit.reg(id::VSH_CODETRANSFER_INDEX), 0);
        for chunk in words.chunks(CODE_CHUNK) {
            self.repeated(unit.reg(id::VSH_CODETRANSFER_DATA), chunk);
        }
        self.write(unit.reg(id::VSH_CODETRANSFER_END), 1);
        self.write(unit.reg(id::VSH_OPDESCS_INDEX), 0);
        self.repeated(unit.reg(id::VSH_OPDESCS_DATA), &code.opdescs);
    }

    /// Binds a shader program: geometry-stage mode, code uploads (only when the unit does not
    /// already hold that code), entry points, output masks and maps, geometry-shader input
    /// configuration, then the DVLE constants (bool, int and float24 uniforms).
    ///
    /// Registers: 0x229 GEOSTAGE_CONFIG, 0x253 GEOSTAGE_CONFIG2, 0x244 VSH_COM_MODE (1 = the GS
    /// unit has its own program), code/opdesc upload ports (0x2CB-0x2D5 / 0x29B-0x2A5),
    /// 0x2BA/0x28A ENTRYPOINT (0x7FFF0000 | word index), 0x2BD/0x28D OUTMAP_MASK,
    /// 0x24A/0x251 VSH_OUTMAP_TOTAL1/2, 0x25E PRIMITIVE_CONFIG byte 0 (outputs − 1),
    /// 0x04F-0x056 output map, 0x064, 0x06F, 0x252, 0x254, 0x289, 0x28B/0x28C, uniforms.
    ///
    /// Binding the program this list bound last writes nothing.
    pub fn bind_program(&mut self, program: &ShaderProgram) -> &mut Self {
        if self
            .cache
            .program
            .as_ref()
            .is_some_and(|p| same_program(p, program))
        {
            return self;
        }
        self.cache.program = Some(program.clone());
        let has_gs = program.gs.is_some();
        self.write_masked(id::GEOSTAGE_CONFIG, 0x3, if has_gs { 2 } else { 0 });
        self.write_masked(id::GEOSTAGE_CONFIG2, 0x3, 0);
        self.write_masked(id::VSH_COM_MODE, 0x1, u32::from(has_gs));

        // Without a GS the GS unit mirrors VS uploads (com mode 0), so it must hold the VS code
        // too; a VS program longer than 512 words never fits the GS unit's view of it.
        let vs_code = &program.vs_code;
        let need_vs =
            !same(&self.residency.vs, vs_code) || (!has_gs && !same(&self.residency.gs, vs_code));
        if need_vs {
            self.upload_code(Unit::Vertex, vs_code, VS_CODE_LIMIT);
            self.residency.vs = Some(vs_code.clone());
            if !has_gs {
                self.residency.gs = Some(vs_code.clone());
            }
        }
        let vs = &program.vs;
        self.write(id::VSH_ENTRYPOINT, ENTRYPOINT_HIGH | (vs.main & 0xFFFF));
        self.write(id::VSH_OUTMAP_MASK, u32::from(vs.outmap.mask));
        let vs_total = vs.outmap.count().saturating_sub(1);
        self.write(id::VSH_OUTMAP_TOTAL1, vs_total);
        self.write(id::VSH_OUTMAP_TOTAL2, vs_total);

        if let Some(g) = &program.gs {
            let need_gs = !same(&self.residency.gs, &g.code)
                || (Arc::ptr_eq(&g.code, vs_code) && g.code.words.len() >= VS_CODE_LIMIT);
            if need_gs {
                self.upload_code(Unit::Geometry, &g.code, usize::MAX);
                self.residency.gs = Some(g.code.clone());
            }
            self.write(
                id::GSH_ENTRYPOINT,
                ENTRYPOINT_HIGH | (g.entry.main & 0xFFFF),
            );
            self.write(id::GSH_OUTMAP_MASK, u32::from(g.entry.outmap.mask));
        }

        let out = program.final_outmap();
        self.write_masked(id::PRIMITIVE_CONFIG, 0x1, out.count().saturating_sub(1));
        self.consecutive(id::SH_OUTMAP_TOTAL, &out.data);
        self.write(id::SH_OUTATTR_MODE, out.mode);
        self.write(id::SH_OUTATTR_CLOCK, out.clock);

        match &program.gs {
            Some(g) => {
                let variable = if g.entry.gsh_mode == 1 {
                    0x8000_0000
                } else {
                    0
                };
                self.write_masked(id::GEOSTAGE_CONFIG, 0xA, variable);
                self.write(id::GSH_MISC0, program.gsh_misc0());
                self.write(id::GSH_MISC1, program.gsh_misc1());
                self.write(id::GSH_INPUTBUFFER_CONFIG, program.gsh_inputbuffer_config());
                let p = g.permutation;
                self.consecutive(
                    id::GSH_ATTRIBUTES_PERMUTATION_LOW,
                    &[(p & 0xFFFF_FFFF) as u32, (p >> 32) as u32],
                );
            }
            None => {
                self.write_masked(id::GEOSTAGE_CONFIG, 0xA, 0);
                self.write(id::GSH_MISC0, 0);
                self.write(id::GSH_MISC1, 0);
                self.write(id::GSH_INPUTBUFFER_CONFIG, program.gsh_inputbuffer_config());
            }
        }

        self.load_constants(Unit::Vertex, &program.vs);
        if let Some(g) = &program.gs {
            self.load_constants(Unit::Geometry, &g.entry);
        }
        self
    }

    /// Uploads an entry's constants: bool uniforms merged into the unit's current set (for the
    /// GS, b15 cleared as citro3d does), int uniforms, float24 uniforms (index write with bit 31
    /// clear, then the three packed words, w first).
    fn load_constants(&mut self, unit: Unit, entry: &ShaderEntry) {
        let u = unit.index();
        for c in &entry.constants {
            if let AsmConstant::Bool { reg, value } = *c {
                let bit = 1u16 << (reg & 0xF);
                self.bools[u] = if value {
                    self.bools[u] | bit
                } else {
                    self.bools[u] & !bit
                };
            }
        }
        if unit == Unit::Geometry {
            self.bools[u] &= !(1 << 15);
        }
        self.write(
            unit.reg(id::VSH_BOOLUNIFORM),
            BOOL_UNIFORM_HIGH | u32::from(self.bools[u]),
        );
        for c in &entry.constants {
            match *c {
                AsmConstant::Int { reg, value } => {
                    self.write(
                        unit.reg(id::VSH_INTUNIFORM_I0) + u16::from(reg & 3),
                        u32::from_le_bytes(value),
                    );
                }
                AsmConstant::Float { reg, value } => {
                    if let Some(slot) = self.cache.uniforms[u].get_mut(usize::from(reg)) {
                        *slot = None;
                    }
                    let [x, y, z, w] = value.map(F24::from_bits);
                    let [a, b, c] = pack_f24x4([x, y, z, w]);
                    self.consecutive(
                        unit.reg(id::VSH_FLOATUNIFORM_INDEX),
                        &[u32::from(reg), a, b, c],
                    );
                }
                AsmConstant::Bool { .. } => {}
            }
        }
    }

    /// Float uniforms `c{reg}`, `c{reg+1}`, … in float32 mode (index write with bit 31 set,
    /// then four words per vector in the order w, z, y, x), as citro3d uploads them.
    ///
    /// Values identical to what this list last uploaded to those registers are not re-sent.
    pub fn uniform_vec4s(&mut self, unit: Unit, reg: u8, values: &[[f32; 4]]) -> &mut Self {
        let cache = &mut self.cache.uniforms[unit.index()];
        let bits: Vec<[u32; 4]> = values.iter().map(|v| v.map(f32::to_bits)).collect();
        let unchanged = bits.iter().enumerate().all(|(k, b)| {
            cache
                .get(usize::from(reg) + k)
                .is_some_and(|c| c.as_ref() == Some(b))
        });
        if unchanged {
            return self;
        }
        for (k, b) in bits.into_iter().enumerate() {
            if let Some(slot) = cache.get_mut(usize::from(reg) + k) {
                *slot = Some(b);
            }
        }
        self.write(
            unit.reg(id::VSH_FLOATUNIFORM_INDEX),
            0x8000_0000 | u32::from(reg),
        );
        let words: Vec<u32> = values.iter().flat_map(|&v| pack_f32x4(v)).collect();
        self.repeated(unit.reg(id::VSH_FLOATUNIFORM_DATA), &words);
        self
    }

    /// A 4×4 matrix as four float uniforms starting at `c{reg}` (row i in `c{reg+i}`).
    pub fn uniform_mat4(&mut self, unit: Unit, reg: u8, m: &Mat4) -> &mut Self {
        self.uniform_vec4s(unit, reg, m)
    }

    /// Sets boolean uniform `b{index}` of `unit` and writes the unit's BOOLUNIFORM register.
    pub fn uniform_bool(&mut self, unit: Unit, index: u8, value: bool) -> &mut Self {
        let u = unit.index();
        let bit = 1u16 << (index & 0xF);
        self.bools[u] = if value {
            self.bools[u] | bit
        } else {
            self.bools[u] & !bit
        };
        self.write(
            unit.reg(id::VSH_BOOLUNIFORM),
            BOOL_UNIFORM_HIGH | u32::from(self.bools[u]),
        );
        self
    }

    /// Integer uniform `i{index}` = (x, y, z, w) (x = loop count − 1, y = start, z = step).
    pub fn uniform_int(&mut self, unit: Unit, index: u8, value: [u8; 4]) -> &mut Self {
        self.write(
            unit.reg(id::VSH_INTUNIFORM_I0) + u16::from(index & 3),
            u32::from_le_bytes(value),
        );
        self
    }

    // ----- vertex input -------------------------------------------------------------------

    /// The attribute formats and the VS input permutation: 0x201/0x202 formats, 0x2B9
    /// VSH_INPUTBUFFER_CONFIG (masked 0xB: 0xA0000000 | count − 1), 0x242 VSH_NUM_ATTR,
    /// 0x2BB/0x2BC permutation.
    pub fn set_attributes(&mut self, layout: &AttribLayout) -> &mut Self {
        if self.cache.attributes == Some(*layout) {
            return self;
        }
        self.cache.attributes = Some(*layout);
        let n = u32::from(layout.count.max(1)) - 1;
        self.consecutive(id::ATTRIBBUFFERS_FORMAT_LOW, &layout.format);
        // UNVERIFIED: bits 28-31 (0xA) of INPUTBUFFER_CONFIG are what [LC]/[C3D] always write;
        // no source explains them (the alternative, leaving them 0, is what [C] would accept).
        // The masked write (0xB) leaves byte 2 untouched.
        self.write_masked(id::VSH_INPUTBUFFER_CONFIG, 0xB, 0xA000_0000 | n);
        self.write(id::VSH_NUM_ATTR, n);
        let p = layout.permutation;
        self.consecutive(
            id::VSH_ATTRIBUTES_PERMUTATION_LOW,
            &[(p & 0xFFFF_FFFF) as u32, (p >> 32) as u32],
        );
        self
    }

    /// The vertex buffers: 0x200 ATTRIBBUFFERS_LOC (base >> 3) and the 36 loader words.
    pub fn set_buffers(&mut self, layout: &BufferLayout) -> &mut Self {
        if self.buffers.as_ref() == Some(layout) {
            return self;
        }
        self.write(id::ATTRIBBUFFERS_LOC, layout.base >> 3);
        self.consecutive(id::attribbuffer(0), &layout.loader_words());
        self.buffers = Some(layout.clone());
        self
    }

    /// Fixed attribute `index` (0-11) = `value` (FIXEDATTRIB_INDEX, then the three packed
    /// float24 words, w first).
    pub fn fixed_attribute(&mut self, index: u8, value: [f32; 4]) -> &mut Self {
        self.write(id::FIXEDATTRIB_INDEX, u32::from(index.min(11)));
        self.consecutive(id::FIXEDATTRIB_DATA0, &pack_f24_truncated(value));
        self
    }

    // ----- render target ------------------------------------------------------------------

    /// Flushes the framebuffer caches after drawing (FRAMEBUFFER_FLUSH, EARLYDEPTH_CLEAR), as
    /// citro3d does before switching targets.
    fn flush_if_drawn(&mut self) {
        if self.draw_used {
            self.draw_used = false;
            self.write(id::FRAMEBUFFER_FLUSH, 1);
            self.write(id::EARLYDEPTH_CLEAR, 1);
        }
    }

    /// Draws into `target` (citro3d `C3D_FrameDrawOn`): flush, FRAMEBUFFER_INVALIDATE,
    /// 0x11C-0x11E buffer addresses (PA >> 3) and dimensions (width | (height − 1) << 12 |
    /// 1 << 24), 0x06E RENDERBUF_DIM, 0x116/0x117 formats, 0x11B block mode, 0x112-0x115
    /// read/write enables, then a full-target viewport with the scissor disabled.
    pub fn set_render_target(&mut self, target: &RenderTarget) -> &mut Self {
        self.flush_if_drawn();
        self.write(id::FRAMEBUFFER_INVALIDATE, 1);
        let dim = 0x0100_0000
            | ((target.height.saturating_sub(1) & 0xFFF) << 12)
            | (target.width & 0xFFF);
        let depth_pa = target.depth_pa.unwrap_or(0);
        self.consecutive(
            id::DEPTHBUFFER_LOC,
            &[depth_pa >> 3, target.color_pa >> 3, dim],
        );
        self.write(id::RENDERBUF_DIM, dim);
        self.write(id::DEPTHBUFFER_FORMAT, target.depth_format.raw());
        // Pixel size: 2 = 32-bit (RGBA8), 0 = 16-bit, and 1 for RGB8.
        // UNVERIFIED: 1 is what [C3D] writes for RGB8 ([3DB] documents only 0 and 2; the
        // alternative would be 2).
        let size = match target.color_format {
            ColorFormat::Rgba8 => 2,
            ColorFormat::Rgb8 => 1,
            _ => 0,
        };
        self.write(
            id::COLORBUFFER_FORMAT,
            size | (target.color_format.raw() << 16),
        );
        self.write(id::FRAMEBUFFER_BLOCK32, 0);
        let color = 0xF;
        let depth = match (target.depth_pa, target.depth_format) {
            (None, _) => 0,
            (Some(_), DepthFormat::D24S8) => 0x3,
            (Some(_), _) => 0x2,
        };
        self.consecutive(id::COLORBUFFER_READ, &[color, color, depth, depth]);
        self.viewport(0, 0, target.width, target.height);
        self.scissor(ScissorMode::Disabled, 0, 0, 0, 0);
        self
    }

    /// The viewport: 0x041-0x044 half width (float24), 2 / width (float31 in bits 1-31), half
    /// height, 2 / height; 0x068 VIEWPORT_XY (x bits 0-9, y bits 16-25).
    pub fn viewport(&mut self, x: u32, y: u32, width: u32, height: u32) -> &mut Self {
        let (w, h) = (width.max(1) as f32, height.max(1) as f32);
        self.consecutive(
            id::VIEWPORT_WIDTH,
            &[
                F24::from_f32_truncate(w / 2.0).to_bits(),
                F31::from_f32_truncate(2.0 / w).to_register(),
                F24::from_f32_truncate(h / 2.0).to_bits(),
                F31::from_f32_truncate(2.0 / h).to_register(),
            ],
        );
        self.write(id::VIEWPORT_XY, (y << 16) | (x & 0xFFFF));
        self
    }

    /// The scissor (0x065-0x067): mode, first corner (left, top) and the inclusive second
    /// corner (right − 1, bottom − 1), in window pixels.
    pub fn scissor(
        &mut self,
        mode: ScissorMode,
        left: u32,
        top: u32,
        right: u32,
        bottom: u32,
    ) -> &mut Self {
        let first = (top << 16) | (left & 0xFFFF);
        let second = (bottom.saturating_sub(1) << 16) | (right.saturating_sub(1) & 0xFFFF);
        let (first, second) = if mode == ScissorMode::Disabled {
            (0, 0)
        } else {
            (first, second)
        };
        self.consecutive(id::SCISSORTEST_MODE, &[mode.raw(), first, second]);
        self
    }

    // ----- fragment state -----------------------------------------------------------------

    /// Writes the whole fragment-state group (citro3d `C3Di_EffectBind` order): 0x06D, 0x040,
    /// 0x04D/0x04E, 0x104-0x107, 0x126 (masked: byte 3), 0x103, 0x101, 0x102, 0x100 (masked:
    /// bytes 0-2), 0x130, 0x062 (masked), 0x118, 0x061 (masked), 0x06A (masked: bytes 0-2).
    pub fn set_effect(&mut self, e: &Effect) -> &mut Self {
        if self.cache.effect == Some(*e) {
            return self;
        }
        self.cache.effect = Some(*e);
        self.write(id::DEPTHMAP_ENABLE, u32::from(e.depth_map.z_buffer));
        self.write(id::FACECULLING_CONFIG, e.cull_word());
        self.consecutive(id::DEPTHMAP_SCALE, &e.depth_map_words());
        self.consecutive(id::FRAGOP_ALPHA_TEST, &e.fragment_test_words());
        self.write_masked(id::GAS_DELTAZ_DEPTH, 0x8, e.gas_depth_func() << 24);
        self.write(id::BLEND_COLOR, e.blend_color_word());
        self.write(id::BLEND_FUNC, e.blend.to_raw());
        self.write(id::LOGIC_OP, e.logic_op_word());
        self.write_masked(id::COLOR_OPERATION, 0x7, e.color_operation_word());
        self.write(id::FRAGOP_SHADOW, e.shadow);
        let (early, func, clear) = e.early_depth;
        self.write_masked(id::EARLYDEPTH_TEST1, 0x1, u32::from(early));
        self.write(id::EARLYDEPTH_TEST2, u32::from(early));
        self.write_masked(id::EARLYDEPTH_FUNC, 0x1, func.raw());
        self.write_masked(id::EARLYDEPTH_DATA, 0x7, clear & 0xFF_FFFF);
        self
    }

    /// TEV stage `stage` (0-5): its five registers SOURCE, OPERAND, COMBINER, COLOR, SCALE.
    pub fn set_tev(&mut self, stage: usize, s: &TevStage) -> &mut Self {
        let stage = stage.min(5);
        if self.cache.tev[stage] == Some(*s) {
            return self;
        }
        self.cache.tev[stage] = Some(*s);
        self.consecutive(id::texenv(stage.min(5)), &s.to_words());
        self
    }

    fn write_tev_buffer(&mut self) {
        self.write_masked(id::TEXENV_UPDATE_BUFFER, 0x7, self.tev_buffer);
        self.write(id::TEXENV_BUFFER_COLOR, self.tev_buffer_color);
        self.write(id::FOG_COLOR, self.fog_color);
    }

    /// Which stages (bit i = stage i, 0-3) update the combiner buffer's RGB and alpha, and the
    /// buffer's initial colour `[r, g, b, a]`: 0x0E0 bits 8-15 (masked write of bytes 0-2),
    /// 0x0FD, and 0x0E1 re-written with the current fog colour (citro3d writes the group).
    pub fn tev_buffer(&mut self, rgb_mask: u8, alpha_mask: u8, color: [u8; 4]) -> &mut Self {
        self.tev_buffer = (self.tev_buffer & !0xFF00)
            | (u32::from(rgb_mask & 0xF) << 8)
            | (u32::from(alpha_mask & 0xF) << 12);
        let [r, g, b, a] = color;
        self.tev_buffer_color = Rgba8 { r, g, b, a }.to_word();
        self.write_tev_buffer();
        self
    }

    /// Fog: mode (0x0E0 bits 0-2, z flip off), colour `[r, g, b]` (0x0E1), and optionally the
    /// LUT (FOG_LUT_INDEX = 0, then the 128 entries through FOG_LUT_DATA).
    pub fn fog(&mut self, mode: FogMode, color: [u8; 3], lut: Option<&FogLut>) -> &mut Self {
        self.tev_buffer = (self.tev_buffer & !0x1_0007) | (mode.raw() & 7);
        self.fog_color = u32::from_le_bytes([color[0], color[1], color[2], 0]);
        self.write_tev_buffer();
        if let Some(lut) = lut {
            self.write(id::FOG_LUT_INDEX, 0);
            self.repeated(id::FOG_LUT_DATA, &lut.entries);
        }
        self
    }

    // ----- fragment lighting --------------------------------------------------------------

    /// Enables fragment lighting with `env` (citro3d `C3Di_LightEnvUpdate` order):
    /// LIGHTING_ENABLE0 = 1 and LIGHTING_ENABLE1 = 0 (the two disagreeing enable registers,
    /// both written as the SDK does), ambient, light count − 1 / CONFIG0 / CONFIG1 as one burst,
    /// LUT input abs/select/scale, the light permutation, each present LUT (index = table << 8,
    /// then 256 entries in commands of 8), and the twelve registers of every light.
    pub fn set_light_env(&mut self, env: &LightEnv) -> &mut Self {
        self.write(id::LIGHTING_ENABLE0, 1);
        self.write(id::LIGHTING_ENABLE1, 0);
        self.write(id::LIGHTING_AMBIENT, color_word(env.ambient));
        // ok: at most 8 lights.
        let count = env.light_count().max(1) as u32 - 1;
        self.consecutive(
            id::LIGHTING_NUM_LIGHTS,
            &[count, env.config0(), env.config1()],
        );
        self.consecutive(id::LIGHTING_LUTINPUT_ABS, &env.lut_input_words());
        self.write(id::LIGHTING_LIGHT_PERMUTATION, env.permutation());
        for (table, slot) in env.luts() {
            if let Some(s) = slot {
                self.upload_light_lut(table, &s.lut);
            }
        }
        for (n, light) in env.lights.iter().take(8).enumerate() {
            self.consecutive(id::light(n), &light.words());
        }
        self
    }

    fn upload_light_lut(&mut self, table: u32, lut: &LightLut) {
        self.write(id::LIGHTING_LUT_INDEX, (table & 0x1F) << 8);
        for chunk in lut.entries.chunks(8) {
            self.repeated(id::LIGHTING_LUT_DATA, chunk);
        }
    }

    /// Disables fragment lighting (LIGHTING_ENABLE0 = 0, LIGHTING_ENABLE1 = 1).
    pub fn disable_lighting(&mut self) -> &mut Self {
        self.write(id::LIGHTING_ENABLE0, 0);
        self.write(id::LIGHTING_ENABLE1, 1);
        self
    }

    // ----- textures -----------------------------------------------------------------------

    /// Binds textures to units 0-2 (`None` = unit off): per bound unit BORDER_COLOR, DIM
    /// (height bits 0-10, width 16-26), PARAM, LOD, ADDR (PA >> 3) as one burst and TYPE; then
    /// TEXUNIT_CONFIG (masked 0xB: enables | bit 12), the cache-clear bit 16 (masked 0x4) and
    /// TEXUNIT0_SHADOW = 1 — citro3d's sequence.
    pub fn bind_textures(&mut self, units: [Option<&Texture>; 3]) -> &mut Self {
        const FIRST: [u16; 3] = [
            id::TEXUNIT0_BORDER_COLOR,
            id::TEXUNIT1_BORDER_COLOR,
            id::TEXUNIT2_BORDER_COLOR,
        ];
        const TYPE: [u16; 3] = [id::TEXUNIT0_TYPE, id::TEXUNIT1_TYPE, id::TEXUNIT2_TYPE];
        let wanted = units.map(|t| t.copied());
        if self.cache.textures == Some(wanted) {
            return self;
        }
        self.cache.textures = Some(wanted);
        let mut enabled = 0u32;
        for (i, t) in units.iter().enumerate() {
            self.textures[i] = t.copied();
            let Some(t) = t else { continue };
            enabled |= 1 << i;
            let s = t.sampler;
            let [r, g, b, a] = s.border;
            let param = TexParam {
                mag_filter: s.mag,
                min_filter: s.min,
                etc1: if t.format == TextureFormat::Etc1 {
                    2
                } else {
                    0
                },
                wrap_t: s.wrap_t,
                wrap_s: s.wrap_s,
                shadow: false,
                mip_filter: s.mip,
                texture_type: TextureType::Texture2D,
            };
            let lod = TexLod {
                // ok: clamped to the signed 13-bit fixed1.4.8 range first.
                bias_raw: (s.lod_bias * 256.0).clamp(-4096.0, 4095.0) as i32,
                // ok: at most 7 levels above the base for 1024 → 8.
                max_level: t.max_level.min(15) as u8,
                min_level: 0,
            };
            self.consecutive(
                FIRST[i],
                &[
                    Rgba8 { r, g, b, a }.to_word(),
                    (t.width << 16) | t.height,
                    param.to_raw(),
                    lod.to_raw(),
                    t.pa >> 3,
                ],
            );
            self.write(TYPE[i], t.format.raw());
        }
        self.write_masked(id::TEXUNIT_CONFIG, 0xB, enabled | (1 << 12));
        self.write_masked(id::TEXUNIT_CONFIG, 0x4, 1 << 16);
        self.write(id::TEXUNIT0_SHADOW, 1);
        self
    }

    // ----- draws --------------------------------------------------------------------------

    /// Records the memory a draw reads: bound textures, then for each loader the bytes of
    /// vertices `first..=last`.
    fn record_reads(&mut self, first: u32, last: u32) {
        for t in self.textures.iter().flatten() {
            self.reads.push((t.pa, t.size));
        }
        let Some(layout) = &self.buffers else { return };
        for l in &layout.loaders {
            let start = u64::from(l.offset) + u64::from(first) * u64::from(l.stride);
            let end = (u64::from(l.offset) + (u64::from(last) + 1) * u64::from(l.stride))
                .min(u64::from(l.buffer.len));
            if start < end {
                // ok: both are below the buffer length, a u32.
                self.reads
                    .push((l.buffer.pa + start as u32, (end - start) as u32));
            }
        }
    }

    /// Draws `count` vertices starting at `first` from the bound buffers (citro3d
    /// `C3D_DrawArrays`): topology (0x25E byte 1), RESTART_PRIMITIVE, INDEXBUFFER_CONFIG =
    /// 0x80000000, NUMVERTICES, VERTEX_OFFSET, GEOSTAGE_CONFIG2 bit 0 around the DRAWARRAYS
    /// trigger, START_DRAW_FUNC0 = 0 while drawing, then VTX_FUNC (vertex cache clear).
    pub fn draw_arrays(
        &mut self,
        topology: PrimitiveTopology,
        first: u32,
        count: u32,
    ) -> &mut Self {
        self.write_masked(id::PRIMITIVE_CONFIG, 0x2, topology.raw() << 8);
        self.write(id::RESTART_PRIMITIVE, 1);
        self.write(id::INDEXBUFFER_CONFIG, 0x8000_0000);
        self.write(id::NUMVERTICES, count);
        self.write(id::VERTEX_OFFSET, first);
        self.write_masked(id::GEOSTAGE_CONFIG2, 0x1, 1);
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 0);
        self.write(id::DRAWARRAYS, 1);
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 1);
        self.write_masked(id::GEOSTAGE_CONFIG2, 0x1, 0);
        self.write(id::VTX_FUNC, 1);
        if count > 0 {
            self.record_reads(first, first + count - 1);
        }
        self.draws += 1;
        self.draw_used = true;
        self
    }

    /// Draws `count` indices of `indices` (citro3d `C3D_DrawElements`): a triangle list is sent
    /// with topology 3 ("geometry primitive") and GEOSTAGE_CONFIG/CONFIG2 bit 8 set during the
    /// draw, exactly as the SDK does; INDEXBUFFER_CONFIG = offset from the buffer base | format
    /// << 31.
    pub fn draw_elements(
        &mut self,
        topology: PrimitiveTopology,
        indices: &IndexBuffer,
        count: u32,
    ) -> &mut Self {
        let Some(base) = self.buffers.as_ref().map(|b| b.base) else {
            self.fail(SceneError::NoBuffers);
            return self;
        };
        let triangles = topology == PrimitiveTopology::Triangles;
        let sent = if triangles {
            PrimitiveTopology::GeometryPrimitive
        } else {
            topology
        };
        let format = u32::from(indices.format == IndexFormat::U16);
        self.write_masked(id::PRIMITIVE_CONFIG, 0x2, sent.raw() << 8);
        self.write(id::RESTART_PRIMITIVE, 1);
        self.write(
            id::INDEXBUFFER_CONFIG,
            (indices.pa.wrapping_sub(base) & 0x0FFF_FFFF) | (format << 31),
        );
        self.write(id::NUMVERTICES, count);
        self.write(id::VERTEX_OFFSET, 0);
        if triangles {
            self.write_masked(id::GEOSTAGE_CONFIG, 0x2, 0x100);
            self.write_masked(id::GEOSTAGE_CONFIG2, 0x2, 0x100);
        }
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 0);
        self.write(id::DRAWELEMENTS, 1);
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 1);
        if triangles {
            self.write_masked(id::GEOSTAGE_CONFIG, 0x2, 0);
            self.write_masked(id::GEOSTAGE_CONFIG2, 0x2, 0);
        }
        self.write(id::VTX_FUNC, 1);
        self.write_masked(id::PRIMITIVE_CONFIG, 0x8, 0);
        self.write_masked(id::PRIMITIVE_CONFIG, 0x8, 0);
        let used = indices
            .indices
            .get(..count as usize)
            .unwrap_or(&indices.indices);
        self.reads
            .push((indices.pa, indices.index_size() * used.len() as u32));
        if let (Some(&lo), Some(&hi)) = (used.iter().min(), used.iter().max()) {
            self.record_reads(u32::from(lo), u32::from(hi));
        } else {
            for t in self.textures.iter().flatten() {
                self.reads.push((t.pa, t.size));
            }
        }
        self.draws += 1;
        self.draw_used = true;
        self
    }

    /// Immediate-mode draw (citro3d `C3D_ImmDrawBegin` / `C3D_ImmSendAttrib` / `C3D_ImmDrawEnd`):
    /// each vertex is its attributes in order, each attribute one vec4 sent as three packed
    /// float24 words to FIXEDATTRIB_DATA0-2 after FIXEDATTRIB_INDEX = 0xF.
    pub fn draw_immediate(
        &mut self,
        topology: PrimitiveTopology,
        vertices: &[&[[f32; 4]]],
    ) -> &mut Self {
        self.write_masked(id::PRIMITIVE_CONFIG, 0x2, topology.raw() << 8);
        self.write(id::RESTART_PRIMITIVE, 1);
        self.write(id::INDEXBUFFER_CONFIG, 0x8000_0000);
        self.write_masked(id::GEOSTAGE_CONFIG2, 0x1, 1);
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 0);
        self.write(id::FIXEDATTRIB_INDEX, 0xF);
        for v in vertices {
            for &attr in v.iter() {
                self.consecutive(id::FIXEDATTRIB_DATA0, &pack_f24_truncated(attr));
            }
        }
        self.write_masked(id::START_DRAW_FUNC0, 0x1, 1);
        self.write_masked(id::GEOSTAGE_CONFIG2, 0x1, 0);
        self.write(id::VTX_FUNC, 1);
        for t in self.textures.iter().flatten() {
            self.reads.push((t.pa, t.size));
        }
        self.draws += 1;
        self.draw_used = true;
        self
    }

    // ----- end ----------------------------------------------------------------------------

    /// Ends the list (citro3d `C3Di_SplitFrame` + libctru `GPUCMD_Finalize`): after drawing,
    /// FRAMEBUFFER_FLUSH, FRAMEBUFFER_INVALIDATE and EARLYDEPTH_CLEAR; then FINALIZE, padded to
    /// a multiple of 16 bytes. Returns the bytes, the shader residency after the list and the
    /// memory ranges its draws read, or the first error.
    pub(crate) fn finish(mut self) -> Result<FinishedList, SceneError> {
        if self.draw_used {
            self.write(id::FRAMEBUFFER_FLUSH, 1);
            self.write(id::FRAMEBUFFER_INVALIDATE, 1);
            self.write(id::EARLYDEPTH_CLEAR, 1);
        }
        self.b.finalize();
        if let Some(e) = self.error {
            return Err(e);
        }
        Ok(FinishedList {
            bytes: self.b.to_bytes(),
            residency: self.residency,
            reads: self.reads,
            draws: self.draws,
        })
    }
}

/// A finished command list.
#[derive(Debug)]
pub(crate) struct FinishedList {
    pub bytes: Vec<u8>,
    pub residency: Residency,
    pub reads: Vec<(u32, u32)>,
    pub draws: u32,
}
