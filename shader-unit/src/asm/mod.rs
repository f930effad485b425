//! The PICA200 shader assembler: picasso 2.7.1's language in, byte-identical `.shbin` out.
//!
//! Stage: tooling around the shader unit (no hardware stage). Inputs: one or more source files in
//! picasso syntax (`.v.pica`, `.g.pica`; see devkitPro picasso's `Manual.md`). Outputs: an
//! [`Assembly`] — program words, operand descriptors and one [`AsmEntry`] (DVLE) per file — that
//! [`Assembly::to_shbin`] writes as a DVLB file identical to picasso's; or [`AsmErrors`] with every
//! problem found (`file:line:column`, offending token, what was expected). Registers read: none.
//!
//! ```
//! let src = "
//!     .out outpos position
//!     .alias inpos v0
//!     .proc main
//!         mov outpos, inpos
//!         end
//!     .end
//! ";
//! let prog = shader_unit::asm::assemble_str(src)?;
//! assert_eq!(prog.program.len(), 2);
//! assert_eq!(prog.entry_point, 0);
//! # Ok::<(), shader_unit::asm::AsmErrors>(())
//! ```
//!
//! Modules: `lexer` (lines, comments, labels, C number parsing), `parser` (operand and
//! condition syntax), `codegen` (aliases, allocation, operand descriptors, blocks, relocation),
//! `writer` (DVLB bytes), `errors` (diagnostics). The behaviour that byte compatibility depends
//! on, and the few places where we deliberately differ from picasso, are documented in
//! `codegen`'s module docs and in `README.md` beside this file.

mod codegen;
mod errors;
mod lexer;
mod parser;
mod writer;

pub use errors::{AsmError, AsmErrors, MAX_DIAGNOSTICS, Severity};
pub use writer::write_shbin;

/// Assembler options (picasso's command-line switches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsmOptions {
    /// Insert the padding NOPs the hardware needs after certain block ends (picasso's default;
    /// `false` = picasso `--no-nop`, which only warns).
    pub auto_nop: bool,
}

impl Default for AsmOptions {
    fn default() -> Self {
        AsmOptions { auto_nop: true }
    }
}

/// Vertex or geometry shader (DVLE shader-type byte 0 / 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ShaderKind {
    /// A vertex shader.
    Vertex,
    /// A geometry shader (`.gsh`, or `setemit` in legacy sources).
    Geometry,
}

/// One DVLE constant-table entry: a uniform preloaded with a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AsmConstant {
    /// Float vector `c[reg]` (reg 0–95) with four f24 values (raw 24-bit encodings: sign bit 23,
    /// exponent bits 22–16 biased by 63, mantissa bits 15–0), components x, y, z, w.
    Float {
        /// Register index within c0–c95.
        reg: u8,
        /// Raw f24 bits of x, y, z, w, converted from f32 by truncation like picasso.
        value: [u32; 4],
    },
    /// Integer vector `i[reg]` (reg 0–3), four unsigned bytes x, y, z, w.
    Int {
        /// Register index within i0–i3.
        reg: u8,
        /// x (loop count − 1), y (aL start), z (aL step), w.
        value: [u8; 4],
    },
    /// Boolean `b[reg]` (reg 0–15).
    Bool {
        /// Register index within b0–b15.
        reg: u8,
        /// The value.
        value: bool,
    },
}

/// One DVLE output-table entry (`.out`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AsmOutput {
    /// Semantic type code: 0 position, 1 normalquat, 2 color, 3 texcoord0, 4 texcoord0w,
    /// 5 texcoord1, 6 texcoord2, 8 view, 9 dummy.
    pub semantic: u16,
    /// Output register number (o0–o15).
    pub register: u16,
    /// Component mask, bit 0 = x … bit 3 = w.
    pub mask: u16,
}

/// What kind of register range a uniform-table entry names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UniformKind {
    /// An input register (`.in`).
    Input,
    /// Float uniforms (`.fvec`).
    Float,
    /// Integer uniforms (`.ivec`).
    Int,
    /// Boolean uniforms (`.bool`).
    Bool,
}

/// One DVLE uniform-table entry with its symbol.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmUniform {
    /// Symbol name (`$` already replaced by `.`, as picasso writes it).
    pub name: String,
    /// First register in DVLE numbering: v0–v15 = 0x00–0x0F, c0–c95 = 0x10–0x6F, i0–i3 =
    /// 0x70–0x73, b0–b15 = 0x78–0x87.
    pub first: u16,
    /// Last register (inclusive), same numbering.
    pub last: u16,
    /// The register kind.
    pub kind: UniformKind,
}

/// One shader entry (DVLE): what one source file contributes besides its code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AsmEntry {
    /// The source file's name.
    pub source: String,
    /// Vertex or geometry shader.
    pub kind: ShaderKind,
    /// Geometry shader whose `dummy` outputs merge with the vertex shader's output map.
    pub merge_outmaps: bool,
    /// First program word of the entry procedure.
    pub entry_start: u32,
    /// One past the entry procedure's last word.
    pub entry_end: u32,
    /// Input registers declared with `.in` (bit n = vn).
    pub input_mask: u16,
    /// Output registers declared with `.out` (bit n = on).
    pub output_mask: u16,
    /// Geometry-shader mode: 0 point, 1 variable, 2 fixed.
    pub gsh_mode: u8,
    /// Fixed mode: first float uniform of the vertex array (c index).
    pub gsh_fixed_start: u8,
    /// Variable mode: vertices with full attributes.
    pub gsh_variable_num: u8,
    /// Fixed mode: vertices per primitive.
    pub gsh_fixed_num: u8,
    /// Constant table, in declaration order.
    pub constants: Vec<AsmConstant>,
    /// Output table, in declaration order.
    pub outputs: Vec<AsmOutput>,
    /// Uniform table, sorted by register.
    pub uniforms: Vec<AsmUniform>,
}

impl AsmEntry {
    /// Size in bytes of the symbol table (names with their NUL terminators).
    pub fn symbol_size(&self) -> usize {
        self.uniforms.iter().map(|u| u.name.len() + 1).sum()
    }
}

/// The result of assembling one or more source files into one DVLB.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Assembly {
    /// Program words shared by all entries (the DVLP blob).
    pub program: Vec<u32>,
    /// Operand descriptors (the DVLP table; 31 significant bits each).
    pub opdescs: Vec<u32>,
    /// One entry per source file that produced a DVLE, in input order.
    pub entries: Vec<AsmEntry>,
    /// Warnings (the assembly succeeded).
    pub warnings: Vec<AsmError>,
}

impl Assembly {
    /// The `.shbin` file bytes, identical to what picasso 2.7.1 writes.
    pub fn to_shbin(&self) -> Vec<u8> {
        write_shbin(self)
    }
}

/// One assembled entry in the shape tests and the emulator want: everything needed to run it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledProgram {
    /// Program words.
    pub program: Vec<u32>,
    /// Operand descriptors.
    pub opdescs: Vec<u32>,
    /// Entry point (word index of the entry procedure).
    pub entry_point: u32,
    /// One past the entry procedure's last word.
    pub entry_end: u32,
    /// Output map (`.out`), in declaration order.
    pub outputs: Vec<AsmOutput>,
    /// Constants to preload (`.constf`, `.consti`, `.constfa`, `.setf`, `.seti`, `.setb`).
    pub constants: Vec<AsmConstant>,
    /// The full DVLE model (uniform table, masks, geometry-shader mode).
    pub entry: AsmEntry,
    /// Warnings.
    pub warnings: Vec<AsmError>,
}

/// Assembles `sources` (`(file name, text)` pairs, in command-line order) into one DVLB model,
/// like `picasso -o out.shbin a.v.pica b.g.pica`.
pub fn assemble(sources: &[(&str, &str)]) -> Result<Assembly, AsmErrors> {
    assemble_with(sources, AsmOptions::default())
}

/// [`assemble`] with options.
pub fn assemble_with(sources: &[(&str, &str)], options: AsmOptions) -> Result<Assembly, AsmErrors> {
    let mut asm = codegen::Assembler::new(options);
    for (name, text) in sources {
        asm.assemble_file(name, text);
    }
    asm.finish().map_err(AsmErrors)
}

/// Assembles one source file straight to `.shbin` bytes.
pub fn assemble_to_shbin(sources: &[(&str, &str)]) -> Result<Vec<u8>, AsmErrors> {
    assemble(sources).map(|a| a.to_shbin())
}

/// Assembles a single source text (named `input.pica` in diagnostics) and returns its only entry.
pub fn assemble_str(src: &str) -> Result<AssembledProgram, AsmErrors> {
    let asm = assemble(&[("input.pica", src)])?;
    let Some(entry) = asm.entries.into_iter().next() else {
        // ok: `finish` reports an error when no DVLE exists, so this is not reached; answer with
        // an error rather than panic anyway.
        return Err(AsmErrors(vec![AsmError {
            severity: Severity::Error,
            file: "input.pica".to_string(),
            line: 0,
            column: 0,
            message: "the source declares no shader entry (`.nodvle`?)".to_string(),
            token: None,
            expected: None,
            source_line: None,
            span: 0,
        }]));
    };
    Ok(AssembledProgram {
        program: asm.program,
        opdescs: asm.opdescs,
        entry_point: entry.entry_start,
        entry_end: entry.entry_end,
        outputs: entry.outputs.clone(),
        constants: entry.constants.clone(),
        entry,
        warnings: asm.warnings,
    })
}
