//! Shader programs for scenes: picasso sources assembled with shader-unit's assembler into a
//! DVLB model ([`ShaderBinary`]), one vertex entry plus an optional geometry entry combined into a
//! [`ShaderProgram`], and the register values a program needs (output map, masks, geometry
//! stage configuration) computed the way libctru's `DVLE_GenerateOutmap` /
//! `shaderProgramConfigure` compute them (behaviour learned from libctru, code our own).
//!
//! Stage: host-side preparation of the vertex/geometry shader configuration. Inputs: picasso
//! source text. Outputs: program words, operand descriptors, the DVLE tables, and derived
//! register values. The writes themselves are emitted by [`super::CommandList::bind_program`].
//! Registers the derived values are for: 0x04F-0x056 SH_OUTMAP_TOTAL/O0-O6, 0x064
//! SH_OUTATTR_MODE, 0x06F SH_OUTATTR_CLOCK, 0x2BD/0x28D OUTMAP_MASK, 0x24A/0x251
//! VSH_OUTMAP_TOTAL1/2, 0x252 GSH_MISC0, 0x254 GSH_MISC1, 0x289 GSH_INPUTBUFFER_CONFIG.

use std::sync::Arc;

use shader_unit::asm::{AsmConstant, AsmEntry, AsmUniform, ShaderKind, UniformKind, assemble};

use super::SceneError;

/// The program words and operand descriptors of one DVLB (its DVLP), shared by its entries.
#[derive(Debug, PartialEq, Eq)]
pub struct ShaderCode {
    /// Program words.
    pub words: Vec<u32>,
    /// Operand descriptors (one 32-bit word each, as uploaded through OPDESCS_DATA).
    pub opdescs: Vec<u32>,
}

/// Output-map register values of one shader entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outmap {
    /// `data[0]` = number of output registers (SH_OUTMAP_TOTAL), `data[1..=7]` = SH_OUTMAP_O0-O6:
    /// one 5-bit semantic id per byte (x in bits 0-4 … w in bits 24-28), 0x1F = unused.
    pub data: [u32; 8],
    /// OUTMAP_MASK: bit n = output register on is written.
    pub mask: u16,
    /// SH_OUTATTR_MODE (0x064): 1 when a texture coordinate is output.
    pub mode: u32,
    /// SH_OUTATTR_CLOCK (0x06F): which attribute groups are present (bit 0 position.z, 1 colour,
    /// 8-10 texcoord0-2, 16 texcoord0.w, 24 normal quaternion / view).
    pub clock: u32,
}

/// An output-map word with all four components unused (semantic 0x1F in every byte).
const UNUSED_WORD: u32 = 0x1F1F_1F1F;

impl Outmap {
    /// Number of output registers (what SH_OUTMAP_TOTAL, VSH_OUTMAP_TOTAL1/2 + 1 and
    /// PRIMITIVE_CONFIG bits 0-3 + 1 hold).
    pub fn count(&self) -> u32 {
        self.data[0]
    }

    /// Computes the output map of a DVLE output table (`.out` declarations).
    ///
    /// Semantic ids and counts per output type (`pica-core.md` §2.3; the same assignment
    /// libctru's loader makes): position 0x00-0x03 (4 components), normal quaternion 0x04-0x07
    /// (4), colour 0x08-0x0B (4), texcoord0 0x0C-0x0D (2), texcoord0.w 0x10 (1), texcoord1
    /// 0x0E-0x0F (2), texcoord2 0x16-0x17 (2), view 0x12-0x14 (3). Components are assigned to the
    /// set bits of the entry's mask in x, y, z, w order. Outputs of other types (picasso's
    /// `dummy`) are counted as output registers but map nothing.
    pub fn from_outputs(outputs: &[shader_unit::asm::AsmOutput]) -> Self {
        let mut m = Outmap {
            data: [UNUSED_WORD; 8],
            mask: 0,
            mode: 0,
            clock: 0,
        };
        m.data[0] = 0;
        for out in outputs {
            let reg = usize::from(out.register & 0xF);
            if m.mask & (1 << reg) == 0 {
                m.mask |= 1 << reg;
                m.data[0] += 1;
            }
            let (base, count, clock, texcoord) = match out.semantic {
                0 => (0x00, 4, 0, false),
                1 => (0x04, 4, 1 << 24, false),
                2 => (0x08, 4, 1 << 1, false),
                3 => (0x0C, 2, 1 << 8, true),
                4 => (0x10, 1, 1 << 16, true),
                5 => (0x0E, 2, 1 << 9, true),
                6 => (0x16, 2, 1 << 10, true),
                8 => (0x12, 3, 1 << 24, false),
                _ => continue,
            };
            m.clock |= clock;
            if texcoord {
                m.mode = 1;
            }
            // Output registers beyond o6 have no SH_OUTMAP register; they are still counted.
            let Some(word) = m.data.get_mut(reg + 1) else {
                continue;
            };
            let mut assigned = 0;
            for comp in 0..4 {
                if assigned == count {
                    break;
                }
                if out.mask & (1 << comp) != 0 {
                    let shift = comp * 8;
                    *word = (*word & !(0xFF << shift)) | ((base + assigned) << shift);
                    assigned += 1;
                    if out.semantic == 0 && assigned == 3 {
                        // The position's z component is present.
                        m.clock |= 1;
                    }
                }
            }
        }
        m
    }

    /// Merges a vertex shader's map into a geometry shader's (a GS whose DVLE asks for it, i.e.
    /// picasso's `dummy` outputs): semantics both share first, then those only the GS has, then
    /// those only the VS has (libctru's order).
    pub fn merge(vs: &Outmap, gs: &Outmap) -> Outmap {
        let mut out = Outmap {
            data: [UNUSED_WORD; 8],
            mask: gs.mask,
            mode: gs.mode | vs.mode,
            clock: gs.clock | vs.clock,
        };
        out.data[0] = 0;
        let push = |word: u32, out: &mut Outmap| {
            let n = out.data[0] as usize + 1;
            if let Some(slot) = out.data.get_mut(n) {
                *slot = word;
                out.data[0] += 1;
            }
        };
        let gs_words: Vec<u32> = gs.data[1..]
            .iter()
            .copied()
            .take_while(|&w| w != UNUSED_WORD)
            .collect();
        let vs_words: Vec<u32> = vs.data[1..]
            .iter()
            .copied()
            .take_while(|&w| w != UNUSED_WORD)
            .collect();
        let mut vs_common = vec![false; vs_words.len()];
        let mut gs_common = vec![false; gs_words.len()];
        for (gi, &g) in gs_words.iter().enumerate() {
            if let Some(vi) = vs_words.iter().position(|&v| v == g) {
                push(g, &mut out);
                vs_common[vi] = true;
                gs_common[gi] = true;
            }
        }
        for (gi, &g) in gs_words.iter().enumerate() {
            if !gs_common[gi] {
                push(g, &mut out);
            }
        }
        for (vi, &v) in vs_words.iter().enumerate() {
            if !vs_common[vi] {
                push(v, &mut out);
            }
        }
        out
    }
}

/// One entry (DVLE) of a [`ShaderBinary`].
#[derive(Clone, Debug)]
pub struct ShaderEntry {
    /// Vertex or geometry shader.
    pub kind: ShaderKind,
    /// Word index of the entry procedure (ENTRYPOINT bits 0-15).
    pub main: u32,
    /// The output map from the entry's `.out` table.
    pub outmap: Outmap,
    /// Merge the vertex shader's output map into this geometry shader's.
    pub merge_outmaps: bool,
    /// Geometry-shader input mode (GSH_MISC0 bits 0-7): 0 point, 1 variable, 2 fixed.
    pub gsh_mode: u8,
    /// Fixed mode: first float uniform receiving vertices.
    pub gsh_fixed_start: u8,
    /// Variable mode: vertices with full attributes.
    pub gsh_variable_num: u8,
    /// Fixed mode: vertices per primitive.
    pub gsh_fixed_num: u8,
    /// Constants the loader uploads when the program is bound (`.constf`, `.consti`, `.setb`…).
    pub constants: Vec<AsmConstant>,
    /// Named uniforms and inputs.
    pub uniforms: Vec<AsmUniform>,
}

impl ShaderEntry {
    fn from_asm(e: &AsmEntry) -> Self {
        ShaderEntry {
            kind: e.kind,
            main: e.entry_start,
            outmap: Outmap::from_outputs(&e.outputs),
            merge_outmaps: e.merge_outmaps,
            gsh_mode: e.gsh_mode,
            gsh_fixed_start: e.gsh_fixed_start,
            gsh_variable_num: e.gsh_variable_num,
            gsh_fixed_num: e.gsh_fixed_num,
            constants: e.constants.clone(),
            uniforms: e.uniforms.clone(),
        }
    }

    /// First float-uniform register (c index) of the uniform called `name` (`.fvec`), like
    /// libctru's `shaderInstanceGetUniformLocation`.
    pub fn float_uniform(&self, name: &str) -> Option<u8> {
        self.uniforms
            .iter()
            .find(|u| u.kind == UniformKind::Float && u.name == name)
            // ok: float uniforms are numbered 0x10-0x6F in the DVLE's unified space.
            .and_then(|u| u8::try_from(u.first.checked_sub(0x10)?).ok())
    }

    /// Boolean uniform index (b0-b15) of the uniform called `name` (`.bool`).
    pub fn bool_uniform(&self, name: &str) -> Option<u8> {
        self.uniforms
            .iter()
            .find(|u| u.kind == UniformKind::Bool && u.name == name)
            .and_then(|u| u8::try_from(u.first.checked_sub(0x78)?).ok())
    }
}

/// An assembled shader binary (a DVLB): shared code plus its entries, in source order.
#[derive(Clone, Debug)]
pub struct ShaderBinary {
    code: Arc<ShaderCode>,
    entries: Vec<ShaderEntry>,
}

impl ShaderBinary {
    /// Assembles picasso sources (`(file name, text)` pairs, like `picasso -o x.shbin a b`).
    pub fn assemble(sources: &[(&str, &str)]) -> Result<Self, SceneError> {
        let asm = assemble(sources).map_err(|e| SceneError::Assembly(e.render()))?;
        Ok(ShaderBinary {
            code: Arc::new(ShaderCode {
                words: asm.program,
                opdescs: asm.opdescs,
            }),
            entries: asm.entries.iter().map(ShaderEntry::from_asm).collect(),
        })
    }

    /// The shared code.
    pub fn code(&self) -> &Arc<ShaderCode> {
        &self.code
    }

    /// Entry `i` (DVLE index).
    pub fn entry(&self, i: usize) -> Result<&ShaderEntry, SceneError> {
        self.entries.get(i).ok_or(SceneError::NoSuchEntry(i))
    }
}

/// The geometry stage of a [`ShaderProgram`].
#[derive(Clone, Debug)]
pub struct GeometryStage {
    /// Code of the binary holding the GS entry.
    pub code: Arc<ShaderCode>,
    /// The GS entry.
    pub entry: ShaderEntry,
    /// Input registers per GS invocation in point mode (GSH_INPUTBUFFER_CONFIG bits 0-3 + 1);
    /// libctru's `shaderProgramSetGsh` stride. 0 = the VS output count.
    pub stride: u8,
    /// GS input permutation (v0-v15), 4 bits per input; libctru's default 0xFEDCBA9876543210.
    pub permutation: u64,
}

/// A vertex shader with an optional geometry shader (libctru's `shaderProgram_s`).
#[derive(Clone, Debug)]
pub struct ShaderProgram {
    /// Code of the binary holding the VS entry.
    pub vs_code: Arc<ShaderCode>,
    /// The VS entry.
    pub vs: ShaderEntry,
    /// The geometry stage, if any.
    pub gs: Option<GeometryStage>,
}

/// Identity GS input permutation.
pub const IDENTITY_PERMUTATION: u64 = 0xFEDC_BA98_7654_3210;

impl ShaderProgram {
    /// A program running entry `vs_entry` of `binary` as the vertex shader (must be a VS).
    pub fn new(binary: &ShaderBinary, vs_entry: usize) -> Result<Self, SceneError> {
        let vs = binary.entry(vs_entry)?.clone();
        if vs.kind != ShaderKind::Vertex {
            return Err(SceneError::WrongShaderKind {
                entry: vs_entry,
                expected: "vertex",
            });
        }
        Ok(ShaderProgram {
            vs_code: binary.code.clone(),
            vs,
            gs: None,
        })
    }

    /// Adds entry `gs_entry` of `binary` as geometry shader with the given point-mode input
    /// stride (libctru `shaderProgramSetGsh`).
    pub fn with_geometry(
        mut self,
        binary: &ShaderBinary,
        gs_entry: usize,
        stride: u8,
    ) -> Result<Self, SceneError> {
        let entry = binary.entry(gs_entry)?.clone();
        if entry.kind != ShaderKind::Geometry {
            return Err(SceneError::WrongShaderKind {
                entry: gs_entry,
                expected: "geometry",
            });
        }
        self.gs = Some(GeometryStage {
            code: binary.code.clone(),
            entry,
            stride,
            permutation: IDENTITY_PERMUTATION,
        });
        Ok(self)
    }

    /// The output map the rasterizer sees: the GS's (merged with the VS's if the GS asks), or
    /// the VS's.
    pub fn final_outmap(&self) -> Outmap {
        match &self.gs {
            Some(g) if g.entry.merge_outmaps => Outmap::merge(&self.vs.outmap, &g.entry.outmap),
            Some(g) => g.entry.outmap,
            None => self.vs.outmap,
        }
    }

    /// GSH_MISC0 (0x252): input mode in bits 0-7; fixed mode adds bit 24, the first uniform
    /// (bits 16-19), stride − 1 (12-15) and vertices − 1 (8-11) — libctru's encoding.
    pub fn gsh_misc0(&self) -> u32 {
        let Some(g) = &self.gs else { return 0 };
        let mode = u32::from(g.entry.gsh_mode);
        if mode == 2 {
            mode | 0x0100_0000
                | (u32::from(g.entry.gsh_fixed_start) << 16)
                | (u32::from(self.gs_stride().saturating_sub(1)) << 12)
                | (u32::from(g.entry.gsh_fixed_num.saturating_sub(1)) << 8)
        } else {
            mode
        }
    }

    /// GSH_MISC1 (0x254): variable mode's full-vertex count − 1, else 0.
    pub fn gsh_misc1(&self) -> u32 {
        match &self.gs {
            Some(g) if g.entry.gsh_mode == 1 => {
                u32::from(g.entry.gsh_variable_num.saturating_sub(1))
            }
            _ => 0,
        }
    }

    /// The GS input stride actually used: the configured one, or the VS output count.
    pub fn gs_stride(&self) -> u8 {
        match &self.gs {
            Some(g) if g.stride != 0 => g.stride,
            // ok: at most 16 output registers.
            _ => self.vs.outmap.count().min(16) as u8,
        }
    }

    /// GSH_INPUTBUFFER_CONFIG (0x289): with a GS, bit 27 set, bit 8 for non-point modes and
    /// stride − 1 in bits 0-3; without one, 0xA0000000 (what libctru writes).
    // UNVERIFIED: the meaning of bits 27-31 is undocumented; the values are [LC]'s
    // (`shaderProgramConfigure`). gpu-core reads only bits 0-3 and 8.
    pub fn gsh_inputbuffer_config(&self) -> u32 {
        match &self.gs {
            Some(g) => {
                0x0800_0000
                    | if g.entry.gsh_mode != 0 { 0x100 } else { 0 }
                    | u32::from(self.gs_stride().saturating_sub(1) & 0xF)
            }
            None => 0xA000_0000,
        }
    }
}
