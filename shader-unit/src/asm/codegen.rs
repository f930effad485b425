//! Semantic analysis and code generation of the picasso-syntax assembler.
//!
//! Stage: assembler back end. Inputs: the lines of every source file (from `lexer`), in command
//! line order. Outputs: the program words, the operand-descriptor table and one DVLE model per
//! source file, ready for `writer`; or diagnostics. Registers read: none.
//!
//! This is a behavioural re-implementation of picasso 2.7.1 (`picasso_assembler.cpp`,
//! devkitPro, MIT) written from its documented behaviour and source as reference; byte
//! compatibility needs the same decisions in the same order:
//!
//! - **Operand descriptors**: each instruction asks for a descriptor with a *care mask* (the
//!   fields it uses, minus swizzle lanes its opcode ignores, see [`optimize_mask`]); the first
//!   existing descriptor that agrees on the common cared-for bits is reused and widened, otherwise
//!   a new one is appended (at most 128). MAD/MADI have a 5-bit DESC field: a descriptor index
//!   ≥ 32 is swapped with the first slot below 32 that no MAD uses, and every earlier format-1/1c
//!   word is renumbered.
//! - **Inverted forms**: DPH/DST/SGE/SLT become DPHI/DSTI/SGEI/SLTI when SRC1 is v/r and SRC2 is a
//!   float uniform; MAD becomes MADI when SRC2 is v/r and SRC3 is a uniform (or only SRC3 uses an
//!   index register).
//! - **Uniforms**: `.fvec/.ivec/.bool` allocate upward from c0/i0/b0, shared by all vertex
//!   shaders (same name = same register); `.constf/.consti/.constfa` allocate downward from
//!   c95/i3 per file. A geometry shader with `.gsh MODE cN` gets its own space from cN up (b15 is
//!   reserved). The lowest register ever used by a constant bounds later uniform allocations.
//! - **Blocks**: `.proc`, `for`, `ifu`/`ifc` with `.else`, and `.constfa` arrays nest (32 deep).
//!   Padding NOPs go where the hardware misbehaves: after a nested block's `.end` directly
//!   followed by another `.end`/`.else`, after a jump/call as the last instruction of a block,
//!   after BREAK/BREAKC ending a loop, and into empty blocks.
//! - **Relocation**: labels are per file and resolved at the end of each file; procedures are
//!   global and resolved after all files; each DVLE's entry point is a procedure (`main` unless
//!   `.entry` says otherwise).
//!
//! Where picasso silently misreads text in ways a source may rely on (garbage or octal/hex after a
//! register number, upper-case register letters, `o3` used as an input), this assembler warns
//! and produces picasso's bytes; where a misreading is surely a mistake (unreadable offsets or
//! constants) it reports an error; where picasso silently ignores harmless text it warns. Sources picasso assembles without such
//! misreadings give byte-identical output. The deviations are listed in `asm/README.md`.

use std::collections::HashMap;

use super::errors::{AsmError, Severity};
use super::lexer::{self, Cursor, Piece, SourceLine, atof, atoi, atoi_len, is_identifier, strtoll};
use super::parser::{
    self, DEFAULT_OPSRC, PResult, Problem, cmp_op, mask_from_swizzle, parse_bool, parse_cond_exp,
    parse_reg_syntax,
};
use super::{AsmConstant, AsmEntry, AsmOptions, AsmOutput, AsmUniform, Assembly, ShaderKind};
use crate::decode::{RawInstr, op};

// Register numbering inside the assembler (picasso's): one space for all register files.
/// First temporary register r0 (v0–v15 / o0–o15 are 0x00–0x0F).
const REG_R0: i32 = 0x10;
/// First float uniform c0.
const REG_C0: i32 = 0x20;
/// First integer uniform i0.
const REG_I0: i32 = 0x80;
/// First boolean uniform b0.
const REG_B0: i32 = 0x88;
/// One past b15.
const REG_END: i32 = 0x98;

/// Uniform types (the DVLE constant-table type codes).
const UTYPE_BOOL: u16 = 0;
const UTYPE_IVEC: u16 = 1;
const UTYPE_FVEC: u16 = 2;

/// Output type code of `dummy` outputs.
const OUTTYPE_DUMMY: u16 = 9;

/// picasso's limits.
const MAX_STACK: usize = 32;
const MAX_OPDESC: usize = 128;
const MAX_UNIFORM: usize = 0x60;
const MAX_CONSTANT: usize = 0x60;
const MAX_OUTPUT: usize = 16;
/// picasso refuses a vertex-shader instruction when this many words already exist (so at most
/// `MAX_VSH_SIZE + 1` instructions fit; the off-by-one is picasso's).
const MAX_VSH_SIZE: usize = 512;

/// Care masks of the operand-descriptor fields (`OPDESC_MASK_*`).
const fn opdesc_make(out: u32, src1: u32, src2: u32, src3: u32) -> u32 {
    out | (src1 << 4) | (src2 << 13) | (src3 << 22)
}
const MASK_D123: u32 = opdesc_make(0xF, 0x1FF, 0x1FF, 0x1FF);
const MASK_D12: u32 = opdesc_make(0xF, 0x1FF, 0x1FF, 0);
const MASK_D1: u32 = opdesc_make(0xF, 0x1FF, 0, 0);
const MASK_12: u32 = opdesc_make(0, 0x1FF, 0x1FF, 0);

/// Swizzle lanes an opcode never reads, removed from the descriptor care mask so that more
/// instructions can share a descriptor (`optimizeOpdesc`). `opdesc` supplies the write mask.
fn optimize_mask(mask: u32, opcode: u32, opdesc: u32) -> u32 {
    let lane = |i: u32| 3u32 << (6 - 2 * i);
    let (mut u1, mut u2, mut u3) = (0u32, 0u32, 0u32);
    match opcode {
        op::ADD | op::MUL | op::SGE | op::SLT | op::FLR | op::MAX | op::MIN | op::MOV | op::MAD => {
            for i in 0..4 {
                if opdesc & (1 << (3 - i)) == 0 {
                    u1 |= lane(i);
                }
            }
            u2 = u1;
            u3 = u1;
        }
        op::DP3 => {
            u1 = lane(3);
            u2 = lane(3);
        }
        op::DPH => u1 = lane(3),
        op::EX2 | op::LG2 | op::RCP | op::RSQ => u1 = lane(1) | lane(2) | lane(3),
        op::MOVA => {
            if opdesc & 0b1000 == 0 {
                u1 |= lane(0);
            }
            if opdesc & 0b0100 == 0 {
                u1 |= lane(1);
            }
            u1 |= lane(2) | lane(3);
        }
        // picasso ignores z/w of CMP's SRC1 only (not of SRC2).
        op::CMP => u1 |= lane(2) | lane(3),
        _ => {}
    }
    mask & !opdesc_make(0, u1 << 1, u2 << 1, u3 << 1)
}

/// A resolved register operand.
#[derive(Clone, Copy, Debug)]
struct Reg {
    /// Register number in picasso's space (see `REG_*`).
    reg: i32,
    /// Negate bit (bit 0) and swizzle selector (bits 1–8).
    opsrc: u32,
    /// Index register (0 none, 1 a0.x, 2 a0.y, 3 aL).
    idx: u32,
    /// The register letter when written directly (`None` for aliases).
    letter: Option<u8>,
}

/// picasso's `UniformAlloc`: globals grow upward from `start`, locals (constants) downward from
/// `end`; `bound` remembers the lowest local ever allocated and caps later globals.
#[derive(Clone, Copy, Debug)]
struct UniformAlloc {
    start: i64,
    end: i64,
    bound: i64,
    tend: i64,
}

impl UniformAlloc {
    const fn new(start: i64, end: i64) -> Self {
        UniformAlloc {
            start,
            end,
            bound: end,
            tend: end,
        }
    }
    fn clear_local(&mut self) {
        self.end = self.tend;
    }
    fn alloc_global(&mut self, size: i64) -> Option<i64> {
        if self.start + size > self.bound {
            return None;
        }
        let ret = self.start;
        self.start += size;
        Some(ret)
    }
    fn alloc_local(&mut self, size: i64) -> Option<i64> {
        let pos = self.end - size;
        if pos < self.start {
            return None;
        }
        self.bound = self.bound.min(pos);
        self.end = pos;
        Some(pos)
    }
}

/// The float/int/bool allocators of one uniform space.
#[derive(Clone, Copy, Debug)]
struct AllocBundle {
    fvec: UniformAlloc,
    ivec: UniformAlloc,
    bool_: UniformAlloc,
}

impl AllocBundle {
    const fn new() -> Self {
        AllocBundle {
            fvec: UniformAlloc::new(0x20, 0x80),
            ivec: UniformAlloc::new(0x80, 0x84),
            bool_: UniformAlloc::new(0x88, 0x98),
        }
    }
    fn clear(&mut self) {
        self.fvec.clear_local();
        self.ivec.clear_local();
        self.bool_.clear_local();
    }
    fn init_for_gsh(&mut self, first_free: i64) {
        self.fvec = UniformAlloc::new(first_free, 0x80);
        self.ivec = UniformAlloc::new(0x80, 0x84);
        // HW: picasso reserves b15 in geometry shaders: the PICA sets it after each GS run [picasso].
        self.bool_ = UniformAlloc::new(0x88, 0x97);
    }
    fn get(&mut self, utype: u16) -> &mut UniformAlloc {
        match utype {
            UTYPE_IVEC => &mut self.ivec,
            UTYPE_BOOL => &mut self.bool_,
            _ => &mut self.fvec,
        }
    }
}

/// A uniform (or `.in` input) of a DVLE or of the global vertex-shader table.
#[derive(Clone, Debug)]
struct Uniform {
    name: String,
    pos: i64,
    size: i64,
    utype: u16,
}

/// A constant of a DVLE (picasso's `Constant`).
#[derive(Clone, Copy, Debug)]
enum ConstVal {
    Float([f32; 4]),
    Int([u8; 4]),
    Bool(bool),
}

#[derive(Clone, Copy, Debug)]
struct Constant {
    reg: i64,
    value: ConstVal,
}

/// Where something was written, for diagnostics reported later than the line itself.
#[derive(Clone, Copy, Debug)]
struct Loc<'a> {
    file: usize,
    line: u32,
    raw: &'a str,
    offset: usize,
    len: usize,
}

/// Per-DVLE state (picasso's `DVLEData`).
#[derive(Clone, Debug)]
struct Dvle<'a> {
    filename: String,
    file_index: usize,
    entrypoint: String,
    entry_loc: Option<Loc<'a>>,
    entry_start: u32,
    entry_end: u32,
    nodvle: bool,
    is_geo: bool,
    is_compat_geo: bool,
    is_merge: bool,
    input_mask: u16,
    output_mask: u16,
    gsh_type: u8,
    gsh_fixed_start: u8,
    gsh_variable_num: u8,
    gsh_fixed_num: u8,
    uniforms: Vec<Uniform>,
    symbol_size: usize,
    constants: Vec<Constant>,
    outputs: Vec<AsmOutput>,
    /// Output components in use, 4 bits per register (picasso keeps this in 32 bits and
    /// overflows for o8–o15; we keep all 16 registers).
    output_used: u64,
    /// The "vertex shader too long" error was reported for this file.
    too_long_reported: bool,
}

impl Dvle<'_> {
    fn uses_gsh_space(&self) -> bool {
        self.is_geo && !self.is_compat_geo
    }
    fn max_output_reg(&self) -> i32 {
        if self.is_geo { 7 } else { 16 }
    }
    fn find_free_output(&self) -> Option<i32> {
        (0..self.max_output_reg()).find(|&i| self.output_mask & (1 << i) == 0)
    }
    fn find_free_input(&self) -> Option<i32> {
        (0..16).find(|&i| self.input_mask & (1 << i) == 0)
    }
}

/// Kinds of open blocks.
#[derive(Clone, Debug)]
enum BlockKind {
    Proc(String),
    For,
    /// `else_at`: word index where the ELSE part starts (0 = no `.else` yet).
    If {
        else_at: usize,
    },
    Array,
}

#[derive(Clone, Debug)]
struct Block<'a> {
    kind: BlockKind,
    pos: usize,
    loc: Loc<'a>,
}

/// A pending label or procedure reference.
#[derive(Clone, Debug)]
struct Reloc<'a> {
    word: usize,
    name: String,
    loc: Loc<'a>,
}

/// How an instruction mnemonic is assembled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    /// No operands (NOP, END, EMIT, BREAK).
    F0,
    /// `dst, src1, src2`; the `bool` says whether an inverted form exists.
    F1(bool),
    /// `dst, src1`.
    F1u,
    /// `a0.x|a0.y|a0.xy, src1`.
    Mova,
    /// `src1, opx, opy, src2`.
    Cmp,
    /// `procName`.
    Call,
    /// `iN` (LOOP).
    For,
    /// `condExp [, target]` (BREAKC, CALLC, IFC, JMPC).
    F2,
    /// `bN [, target]` (CALLU, IFU, JMPU).
    F3,
    /// `dst, src1, src2, src3`.
    Mad,
    /// `vtxId [, flags]`.
    SetEmit,
}

/// The instruction table: mnemonic, opcode, inverted opcode (if any), form. picasso accepts the
/// inverted mnemonics (`dphi` …) as synonyms that still choose the form automatically.
const INSTRUCTIONS: &[(&str, u32, u32, Form)] = &[
    ("nop", op::NOP, 0, Form::F0),
    ("end", op::END, 0, Form::F0),
    ("emit", op::EMIT, 0, Form::F0),
    ("break", op::BREAK, 0, Form::F0),
    ("add", op::ADD, 0, Form::F1(false)),
    ("dp3", op::DP3, 0, Form::F1(false)),
    ("dp4", op::DP4, 0, Form::F1(false)),
    ("dph", op::DPH, op::DPHI, Form::F1(true)),
    ("dphi", op::DPH, op::DPHI, Form::F1(true)),
    ("dst", op::DST, op::DSTI, Form::F1(true)),
    ("dsti", op::DST, op::DSTI, Form::F1(true)),
    ("mul", op::MUL, 0, Form::F1(false)),
    ("sge", op::SGE, op::SGEI, Form::F1(true)),
    ("sgei", op::SGE, op::SGEI, Form::F1(true)),
    ("slt", op::SLT, op::SLTI, Form::F1(true)),
    ("slti", op::SLT, op::SLTI, Form::F1(true)),
    ("max", op::MAX, 0, Form::F1(false)),
    ("min", op::MIN, 0, Form::F1(false)),
    ("ex2", op::EX2, 0, Form::F1u),
    ("lg2", op::LG2, 0, Form::F1u),
    ("litp", op::LITP, 0, Form::F1u),
    ("flr", op::FLR, 0, Form::F1u),
    ("rcp", op::RCP, 0, Form::F1u),
    ("rsq", op::RSQ, 0, Form::F1u),
    ("mov", op::MOV, 0, Form::F1u),
    ("mova", op::MOVA, 0, Form::Mova),
    ("cmp", op::CMP, 0, Form::Cmp),
    ("call", op::CALL, 0, Form::Call),
    ("for", op::LOOP, 0, Form::For),
    ("breakc", op::BREAKC, 0, Form::F2),
    ("callc", op::CALLC, 0, Form::F2),
    ("ifc", op::IFC, 0, Form::F2),
    ("jmpc", op::JMPC, 0, Form::F2),
    ("callu", op::CALLU, 0, Form::F3),
    ("ifu", op::IFU, 0, Form::F3),
    ("jmpu", op::JMPU, 0, Form::F3),
    ("mad", op::MAD, op::MADI, Form::Mad),
    ("madi", op::MAD, op::MADI, Form::Mad),
    ("setemit", op::SETEMIT, 0, Form::SetEmit),
];

/// Usage line per form, for "missing operand" messages.
fn usage(name: &str, form: Form) -> String {
    let ops = match form {
        Form::F0 => "no operands",
        Form::F1(_) => "dest, src1, src2",
        Form::F1u => "dest, src1",
        Form::Mova => "a0.x|a0.y|a0.xy, src1",
        Form::Cmp => "src1, opx, opy, src2",
        Form::Call => "procName",
        Form::For => "iN",
        Form::F2 if name.eq_ignore_ascii_case("jmpc") => "condExp, labelName",
        Form::F2 if name.eq_ignore_ascii_case("callc") => "condExp, procName",
        Form::F2 => "condExp",
        Form::F3 if name.eq_ignore_ascii_case("jmpu") => "[!]bN, labelName",
        Form::F3 if name.eq_ignore_ascii_case("callu") => "bN, procName",
        Form::F3 => "bN",
        Form::Mad => "dest, src1, src2, src3",
        Form::SetEmit => "vtxId[, prim inv]",
    };
    format!("`{} {}`", name.to_ascii_lowercase(), ops)
}

/// Directives (without the dot).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Directive {
    Proc,
    Else,
    End,
    Alias,
    Uniform(u16),
    Const(u16),
    ConstFa,
    In,
    Out,
    Entry,
    NoDvle,
    Gsh,
    SetFi(u16),
    SetB,
}

const DIRECTIVES: &[(&str, Directive)] = &[
    ("proc", Directive::Proc),
    ("else", Directive::Else),
    ("end", Directive::End),
    ("alias", Directive::Alias),
    ("fvec", Directive::Uniform(UTYPE_FVEC)),
    ("ivec", Directive::Uniform(UTYPE_IVEC)),
    ("bool", Directive::Uniform(UTYPE_BOOL)),
    ("constf", Directive::Const(UTYPE_FVEC)),
    ("consti", Directive::Const(UTYPE_IVEC)),
    ("constfa", Directive::ConstFa),
    ("in", Directive::In),
    ("out", Directive::Out),
    ("entry", Directive::Entry),
    ("nodvle", Directive::NoDvle),
    ("gsh", Directive::Gsh),
    ("setf", Directive::SetFi(UTYPE_FVEC)),
    ("seti", Directive::SetFi(UTYPE_IVEC)),
    ("setb", Directive::SetB),
];

const REGISTER_EXPECTED: &str =
    "a register (v0-v15, r0-r15, c0-c95, o0-o15, i0-i3, b0-b15) or a defined alias";

/// The assembler state across all files (picasso's globals).
pub(crate) struct Assembler<'a> {
    opts: AsmOptions,
    buf: Vec<u32>,
    stack: Vec<Block<'a>>,
    opdescs: Vec<u32>,
    opdesc_masks: Vec<u32>,
    opdesc_is_mad: u32,
    global_uniforms: Vec<Uniform>,
    const_array: Vec<[f32; 4]>,
    const_array_size: i64,
    const_array_name: Option<Piece<'a>>,
    last_was_end: bool,
    unif_alloc: [AllocBundle; 2],
    procs: HashMap<String, (usize, usize)>,
    dvles: Vec<Dvle<'a>>,
    total_dvle_count: i64,
    proc_relocs: Vec<Reloc<'a>>,
    // Cleared for every file.
    labels: HashMap<&'a str, usize>,
    label_relocs: Vec<Reloc<'a>>,
    aliases: HashMap<&'a str, u32>,
    cur_dvle: Option<usize>,
    // Diagnostics.
    files: Vec<String>,
    cur_file: usize,
    cur_line: u32,
    cur_raw: &'a str,
    diags: Vec<AsmError>,
    /// Sort key per diagnostic: (file index, line, column).
    diag_keys: Vec<(usize, u32, u32)>,
    /// Errors and warnings not kept (beyond [`super::MAX_DIAGNOSTICS`]).
    dropped: [u64; 2],
}

impl<'a> Assembler<'a> {
    /// A fresh assembler.
    pub fn new(opts: AsmOptions) -> Self {
        Assembler {
            opts,
            buf: Vec::new(),
            stack: Vec::new(),
            opdescs: Vec::new(),
            opdesc_masks: Vec::new(),
            opdesc_is_mad: 0,
            global_uniforms: Vec::new(),
            const_array: Vec::new(),
            const_array_size: -1,
            const_array_name: None,
            last_was_end: false,
            unif_alloc: [AllocBundle::new(), AllocBundle::new()],
            procs: HashMap::new(),
            dvles: Vec::new(),
            total_dvle_count: 0,
            proc_relocs: Vec::new(),
            labels: HashMap::new(),
            label_relocs: Vec::new(),
            aliases: HashMap::new(),
            cur_dvle: None,
            files: Vec::new(),
            cur_file: 0,
            cur_line: 0,
            cur_raw: "",
            diags: Vec::new(),
            diag_keys: Vec::new(),
            dropped: [0; 2],
        }
    }

    // ----------------------------------------------------------------------------------------
    // Diagnostics
    // ----------------------------------------------------------------------------------------

    fn push_diag(
        &mut self,
        severity: Severity,
        loc: Loc<'a>,
        message: String,
        expected: Option<String>,
    ) {
        if self.diags.len() >= super::MAX_DIAGNOSTICS {
            self.dropped[usize::from(severity != Severity::Error)] += 1;
            return;
        }
        let column = if loc.line == 0 {
            0
        } else {
            loc.raw.get(..loc.offset).map_or(0, |s| s.chars().count()) as u32 + 1
        };
        let token_text = loc.raw.get(loc.offset..loc.offset + loc.len).unwrap_or("");
        let span = token_text.chars().count().max(1) as u32;
        self.diag_keys.push((loc.file, loc.line, column));
        self.diags.push(AsmError {
            severity,
            file: self.files.get(loc.file).cloned().unwrap_or_default(),
            line: loc.line,
            column,
            message,
            token: (!token_text.is_empty()).then(|| token_text.to_string()),
            expected,
            source_line: (loc.line > 0).then(|| loc.raw.to_string()),
            span,
        });
    }

    fn loc(&self, p: Piece<'a>) -> Loc<'a> {
        Loc {
            file: self.cur_file,
            line: self.cur_line,
            raw: self.cur_raw,
            offset: p.offset,
            len: p.text.len(),
        }
    }

    fn report(&mut self, p: Problem<'a>) {
        let loc = self.loc(p.at);
        self.push_diag(Severity::Error, loc, p.message, p.expected);
    }

    fn warn(&mut self, at: Piece<'a>, message: String) {
        let loc = self.loc(at);
        self.push_diag(Severity::Warning, loc, message, None);
    }

    /// An error for the whole file (line 0).
    fn file_error(&mut self, file: usize, message: String) {
        let loc = Loc {
            file,
            line: 0,
            raw: "",
            offset: 0,
            len: 0,
        };
        self.push_diag(Severity::Error, loc, message, None);
    }

    // ----------------------------------------------------------------------------------------
    // Files and lines
    // ----------------------------------------------------------------------------------------

    /// Assembles one source file (picasso's `AssembleString`).
    pub fn assemble_file(&mut self, name: &str, text: &'a str) {
        let lines = lexer::split_lines(name, text);
        let base = self.files.len();
        self.files.extend(lines.files.iter().cloned());
        self.cur_file = base;
        self.cur_line = 1;
        self.cur_raw = "";
        if let Some(at) = lines.nul_at {
            let line = text[..at].matches('\n').count() as u32 + 1;
            let loc = Loc {
                file: base,
                line,
                raw: "",
                offset: 0,
                len: 0,
            };
            self.push_diag(
                Severity::Warning,
                loc,
                "NUL character in the source: picasso stops reading here".to_string(),
                None,
            );
        }
        // ClearStatus.
        self.unif_alloc[0].clear();
        self.labels.clear();
        self.label_relocs.clear();
        self.aliases.clear();
        self.cur_dvle = None;

        for line in &lines.lines {
            self.line(base, line);
        }

        // Unclosed blocks: report each opener, then close them so the next file starts clean.
        let open: Vec<Block<'a>> = self.stack.drain(..).collect();
        for b in &open {
            let what = match &b.kind {
                BlockKind::Proc(name) => format!("`.proc {name}` is never closed"),
                BlockKind::For => "`for` loop is never closed".to_string(),
                BlockKind::If { .. } => "`if` block is never closed".to_string(),
                BlockKind::Array => "`.constfa` array is never closed".to_string(),
            };
            self.push_diag(
                Severity::Error,
                b.loc,
                what,
                Some("a matching `.end`".to_string()),
            );
            if let BlockKind::Proc(name) = &b.kind {
                // Register it anyway so that calls do not cascade into more errors.
                self.procs
                    .entry(name.clone())
                    .or_insert((b.pos, self.buf.len() - b.pos));
            }
        }
        self.const_array.clear();
        self.const_array_size = -1;
        self.const_array_name = None;

        // FixupLabelRelocations.
        let relocs = std::mem::take(&mut self.label_relocs);
        for r in relocs {
            match self.labels.get(r.name.as_str()) {
                Some(&dst) => {
                    if dst > 0xFFF {
                        self.push_diag(
                            Severity::Error,
                            r.loc,
                            format!(
                                "label `{}` is at word {dst}, beyond the 12-bit jump range",
                                r.name
                            ),
                            None,
                        );
                    }
                    if let Some(w) = self.buf.get_mut(r.word) {
                        *w = (*w & !(0xFFF << 10)) | ((dst as u32 & 0xFFF) << 10); // ok: masked
                    }
                }
                None => self.push_diag(
                    Severity::Error,
                    r.loc,
                    format!("label `{}` is not defined in this file", r.name),
                    Some("a label defined as `name:` in the same file".to_string()),
                ),
            }
        }
    }

    fn line(&mut self, file_base: usize, line: &SourceLine<'a>) {
        self.cur_file = file_base + line.file;
        self.cur_line = line.number;
        self.cur_raw = line.raw;
        for &label in &line.labels {
            if !is_identifier(label.text) {
                self.report(
                    Problem::new(label, format!("invalid label name `{}`", label.text)).expected(
                        "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                    ),
                );
                continue;
            }
            if self.labels.contains_key(label.text) {
                self.report(Problem::new(
                    label,
                    format!("duplicate label `{}`", label.text),
                ));
                continue;
            }
            self.labels.insert(label.text, self.buf.len());
        }
        if line.statement.is_empty() {
            return;
        }
        let mut cur = Cursor::new(line.statement);
        let Some(cmd) = cur.tok_spc() else { return };
        let result = if cmd.first() == Some(b'.') {
            self.directive(cmd, &mut cur, line.statement)
        } else {
            self.instruction(cmd, &mut cur, line.statement)
        };
        if let Err(p) = result {
            self.report(p);
        }
    }

    // ----------------------------------------------------------------------------------------
    // Helpers shared by commands
    // ----------------------------------------------------------------------------------------

    fn get_dvle(&mut self) -> usize {
        if let Some(i) = self.cur_dvle {
            return i;
        }
        let file_index = self.cur_file;
        let filename = self.files.get(file_index).cloned().unwrap_or_default();
        self.dvles.push(Dvle {
            filename,
            file_index,
            entrypoint: "main".to_string(),
            entry_loc: None,
            entry_start: 0,
            entry_end: 0,
            nodvle: false,
            is_geo: false,
            is_compat_geo: false,
            is_merge: false,
            input_mask: 0,
            output_mask: 0,
            gsh_type: 0,
            gsh_fixed_start: 0,
            gsh_variable_num: 0,
            gsh_fixed_num: 0,
            uniforms: Vec::new(),
            symbol_size: 0,
            constants: Vec::new(),
            outputs: Vec::new(),
            output_used: 0,
            too_long_reported: false,
        });
        self.total_dvle_count += 1;
        let i = self.dvles.len() - 1;
        self.cur_dvle = Some(i);
        i
    }

    fn dvle(&mut self) -> &mut Dvle<'a> {
        let i = self.get_dvle();
        &mut self.dvles[i]
    }

    /// The "missing operand" problem, placed just after the statement.
    fn missing(stmt: Piece<'a>, what: String) -> Problem<'a> {
        let end = Piece::new("", stmt.offset + stmt.text.len());
        Problem::new(end, "missing operand").expected(what)
    }

    fn arg(
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
        what: &dyn Fn() -> String,
    ) -> PResult<'a, Piece<'a>> {
        cur.next_arg().ok_or_else(|| Self::missing(stmt, what()))
    }

    fn arg_spc(
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
        what: &dyn Fn() -> String,
    ) -> PResult<'a, Piece<'a>> {
        cur.next_arg_spc()
            .ok_or_else(|| Self::missing(stmt, what()))
    }

    fn no_more_args(cur: &mut Cursor<'a>, what: &dyn Fn() -> String) -> PResult<'a, ()> {
        let rest = cur.rest();
        match cur.next_arg() {
            Some(_) => Err(Problem::new(
                rest.trim(),
                format!("too many operands: `{}`", rest.trim().text),
            )
            .expected(what())),
            None => Ok(()),
        }
    }

    /// picasso's `parseInt`: `strtoll(text, 0)` in `[min, max]`; text after the number is an
    /// error here (picasso ignores it).
    fn parse_int(p: Piece<'a>, min: i64, max: i64) -> PResult<'a, i64> {
        let r = strtoll(p.text, true);
        if r.consumed == 0 || r.consumed != p.text.len() {
            return Err(Problem::new(p, format!("invalid number `{}`", p.text))
                .expected(format!("an integer from {min} to {max}")));
        }
        if r.value < min || r.value > max {
            return Err(Problem::new(p, format!("value {} out of range", r.value))
                .expected(format!("an integer from {min} to {max}")));
        }
        Ok(r.value)
    }

    /// picasso's `parseReg`: resolves an operand to a register number, swizzle, negation and
    /// index register.
    fn parse_reg(&mut self, p: Piece<'a>, allow_idx: bool) -> PResult<'a, Reg> {
        let syn = parse_reg_syntax(p, allow_idx)?;
        if let Some(ig) = syn.ignored {
            self.warn(ig, format!("text `{}` after `]` is ignored", ig.text));
        }
        if let Some((at, note)) = syn.lenient {
            self.warn(at, note);
        }
        let offset = syn.bracket.map_or(0, |b| b.offset);
        let idx = u32::from(syn.bracket.map_or(0, |b| b.idx));
        if let Some(&alias) = self.aliases.get(syn.name.text) {
            let reg = ((alias & 0xFF) as i32).saturating_add(offset); // ok: 8-bit field
            let opsrc = syn.opsrc ^ ((alias >> 8) & 1);
            let alias_sw = (alias >> 9) & 0xFF;
            let user_sw = opsrc >> 1;
            let mut out = opsrc & 1;
            for j in 0..4 {
                let comp = (user_sw >> (6 - 2 * j)) & 3;
                let mapped = (alias_sw >> (6 - 2 * comp)) & 3;
                out |= (mapped << (6 - 2 * j)) << 1;
            }
            return Ok(Reg {
                reg,
                opsrc: out,
                idx,
                letter: None,
            });
        }
        let name = syn.name;
        let bytes = name.text.as_bytes();
        let letter = bytes.first().copied().unwrap_or(0);
        let is_reg_letter = matches!(
            letter.to_ascii_lowercase(),
            b'o' | b'v' | b'r' | b'c' | b'i' | b'b'
        );
        if !(is_reg_letter && bytes.get(1).is_some_and(u8::is_ascii_digit)) {
            return Err(
                Problem::new(name, format!("unknown register or alias `{}`", name.text))
                    .expected(REGISTER_EXPECTED),
            );
        }
        let digits = name.from(1);
        // picasso reads the number with `strtoll(.., 0)` and ignores what follows it: `r1x` is
        // r1, `r010` is octal r8, `c0x10` is c16. Accepted with a warning and picasso's reading.
        let r = strtoll(digits.text, true);
        let decimal_len = digits.text.bytes().take_while(u8::is_ascii_digit).count();
        let decimal: i64 = digits.text[..decimal_len].parse().unwrap_or(i64::MAX);
        if r.consumed == 0 || r.value > 255 {
            return Err(
                Problem::new(name, format!("invalid register name `{}`", name.text))
                    .expected(REGISTER_EXPECTED),
            );
        }
        let plain = r.consumed == digits.text.len()
            && decimal_len == digits.text.len()
            && decimal == r.value;
        if letter.is_ascii_uppercase() {
            // picasso 2.7.1 accepts upper-case letters but then skips the register-file offset
            // and the range check: `C5` is register 0x05 (v5 read, o5 written), `R20` is 0x14
            // (r4). Accepted with a warning and picasso's bytes.
            let raw = r.value as i32; // ok: 0..=255 checked above
            if idx != 0 && !(REG_C0..REG_I0).contains(&raw) {
                return Err(
                    Problem::new(p, format!("relative addressing on `{}`", name.text))
                        .expected("a float uniform (c0-c95): only those can use a0.x, a0.y or aL"),
                );
            }
            self.warn(
                name,
                format!(
                    "upper-case register name `{}`: picasso 2.7.1 reads it as register 0x{raw:02X} (the register-file offset of `{}` is skipped); write `{}` for the {} register",
                    name.text,
                    char::from(letter),
                    name.text.to_ascii_lowercase(),
                    char::from(letter.to_ascii_lowercase())
                ),
            );
            return Ok(Reg {
                reg: raw.saturating_add(offset),
                opsrc: syn.opsrc,
                idx,
                letter: None,
            });
        }
        if !plain {
            self.warn(
                name,
                format!(
                    "register `{}` is read as `{}{}` (picasso reads the number with strtoll: a leading 0 is octal, 0x hex, and text after the number is ignored)",
                    name.text,
                    char::from(letter),
                    r.value
                ),
            );
        }
        let mut reg = r.value as i32; // ok: checked below before use
        let (base, count, what) = match letter {
            b'o' => {
                let max = self.dvle().max_output_reg();
                (
                    0,
                    max,
                    if max == 7 {
                        "o0-o6 (geometry shader)"
                    } else {
                        "o0-o15"
                    },
                )
            }
            // picasso 2.7.1 rejects v15 (an off-by-one); the register exists, so we accept it.
            b'v' => (0, 16, "v0-v15"),
            b'r' => (REG_R0, 16, "r0-r15"),
            b'c' => (REG_C0, 96, "c0-c95"),
            // picasso 2.7.1 accepts i4-i7, which do not exist (warned below); only `for`/`loop`
            // and `.alias` can use them, everything else rejects them afterwards.
            b'i' => (REG_I0, 8, "i0-i3"),
            _ => (REG_B0, 16, "b0-b15"),
        };
        if r.value < 0 || r.value >= i64::from(count) {
            return Err(
                Problem::new(name, format!("register `{}` does not exist", name.text))
                    .expected(what),
            );
        }
        if letter == b'i' && r.value >= 4 {
            self.warn(
                name,
                format!(
                    "`{}` does not exist (integer uniforms are i0-i3); picasso 2.7.1 accepts it and writes {} into the instruction's uniform-id field",
                    name.text, r.value
                ),
            );
        }
        reg += base;
        if idx != 0 && !(REG_C0..REG_I0).contains(&reg) {
            return Err(
                Problem::new(p, format!("relative addressing on `{}`", name.text))
                    .expected("a float uniform (c0-c95): only those can use a0.x, a0.y or aL"),
            );
        }
        if offset > 0 && reg.saturating_add(offset) >= base + count {
            self.warn(
                p,
                format!(
                    "offset moves `{}` past the end of its register file",
                    syn.whole.text
                ),
            );
        }
        reg = reg.saturating_add(offset);
        Ok(Reg {
            reg,
            opsrc: syn.opsrc,
            idx,
            letter: Some(letter),
        })
    }

    /// A source operand: like [`Self::parse_reg`]. An output register is accepted with a
    /// warning and reads the input register of the same number, as picasso 2.7.1 assembles it
    /// (both files share register numbers 0x00-0x0F).
    fn src_reg(&mut self, p: Piece<'a>, allow_idx: bool) -> PResult<'a, Reg> {
        let r = self.parse_reg(p, allow_idx)?;
        if r.letter == Some(b'o') {
            self.warn(
                p,
                format!(
                    "output register `{}` cannot be read: this reads v{} (as picasso does)",
                    p.text, r.reg
                ),
            );
        }
        Ok(r)
    }

    fn dest_reg(&mut self, p: Piece<'a>) -> PResult<'a, Reg> {
        let r = self.parse_reg(p, false)?;
        if !(0..REG_C0).contains(&r.reg) {
            return Err(
                Problem::new(p, format!("`{}` cannot be a destination", p.text))
                    .expected("an output (o0-o15) or temporary (r0-r15) register"),
            );
        }
        if r.letter == Some(b'v') {
            self.warn(
                p,
                format!(
                    "input register `{}` cannot be written: this writes o{} (as picasso does)",
                    p.text, r.reg
                ),
            );
        }
        Ok(r)
    }

    fn ensure_wide(r: &Reg, p: Piece<'a>, n: u32, mnemonic: &str) -> PResult<'a, ()> {
        if !(0..REG_I0).contains(&r.reg) {
            return Err(Problem::new(
                p,
                format!("`{}` cannot be source {n} of `{mnemonic}`", p.text),
            )
            .expected("an input (v0-v15), temporary (r0-r15) or float uniform (c0-c95) register"));
        }
        Ok(())
    }

    fn ensure_narrow(r: &Reg, p: Piece<'a>, n: u32, mnemonic: &str, hint: &str) -> PResult<'a, ()> {
        if !(0..REG_C0).contains(&r.reg) {
            return Err(Problem::new(
                p,
                format!("`{}` cannot be source {n} of `{mnemonic}`", p.text),
            )
            .expected(format!(
                "an input (v0-v15) or temporary (r0-r15) register here{hint}"
            )));
        }
        Ok(())
    }

    fn ensure_no_idx(r: &Reg, p: Piece<'a>, n: u32, mnemonic: &str) -> PResult<'a, ()> {
        if r.idx != 0 {
            return Err(Problem::new(
                p,
                format!("source {n} of `{mnemonic}` cannot use relative addressing"),
            )
            .expected("relative addressing only on the operand that may be a float uniform"));
        }
        Ok(())
    }

    fn bad_inputs(regs: &[i32]) -> bool {
        let bad = |a: i32, b: i32| a < 0x10 && b < 0x10 && a != b;
        regs.iter()
            .enumerate()
            .any(|(i, &a)| regs.iter().skip(i + 1).any(|&b| bad(a, b)))
    }

    /// An integer-uniform operand (`for`/`loop`): i0-i3, and i4-i7 as picasso 2.7.1 accepts them
    /// (with the warning of [`Self::parse_reg`]).
    fn ireg(&mut self, p: Piece<'a>) -> PResult<'a, Reg> {
        let r = self.parse_reg(p, false)?;
        if !(REG_I0..REG_I0 + 8).contains(&r.reg) {
            return Err(
                Problem::new(p, format!("`{}` is not an integer uniform", p.text))
                    .expected("i0-i3"),
            );
        }
        Ok(r)
    }

    fn breg(&mut self, p: Piece<'a>) -> PResult<'a, Reg> {
        let r = self.parse_reg(p, false)?;
        if !(REG_B0..REG_END).contains(&r.reg) {
            return Err(
                Problem::new(p, format!("`{}` is not a boolean uniform", p.text))
                    .expected("b0-b15"),
            );
        }
        Ok(r)
    }

    /// Records the relocation of the flow target `target` for the instruction about to be
    /// pushed: a procedure for calls, a label for jumps.
    fn flow_reloc(&mut self, target: Piece<'a>, is_call: bool) -> PResult<'a, ()> {
        Self::target(target, if is_call { "procedure" } else { "label" })?;
        let reloc = Reloc {
            word: self.buf.len(),
            name: target.text.to_string(),
            loc: self.loc(target),
        };
        if is_call {
            self.proc_relocs.push(reloc);
        } else {
            self.label_relocs.push(reloc);
        }
        Ok(())
    }

    fn target(p: Piece<'a>, what: &str) -> PResult<'a, ()> {
        if p.is_empty() || !is_identifier(p.text) {
            return Err(Problem::new(p, format!("invalid {what} name `{}`", p.text))
                .expected("an identifier (letters, digits, `_`, `$`; not starting with a digit)"));
        }
        Ok(())
    }

    fn find_or_add_opdesc(
        &mut self,
        opcode: u32,
        opdesc: u32,
        mask: u32,
        at: Piece<'a>,
    ) -> PResult<'a, usize> {
        let mask = optimize_mask(mask, opcode, opdesc);
        for i in 0..self.opdescs.len() {
            let min_mask = mask & self.opdesc_masks[i];
            if opdesc & min_mask == self.opdescs[i] & min_mask {
                self.opdescs[i] = (self.opdescs[i] & !mask) | (opdesc & mask);
                self.opdesc_masks[i] |= mask;
                return Ok(i);
            }
        }
        if self.opdescs.len() == MAX_OPDESC {
            return Err(Problem::new(at, "too many different operand descriptors")
                .expected(format!("at most {MAX_OPDESC} distinct swizzle/negate/mask combinations per shader binary")));
        }
        self.opdescs.push(opdesc);
        self.opdesc_masks.push(mask);
        Ok(self.opdescs.len() - 1)
    }

    fn swap_opdesc(&mut self, from: usize, to: usize) {
        self.opdescs.swap(from, to);
        self.opdesc_masks.swap(from, to);
        for w in &mut self.buf {
            let opcode = *w >> 26;
            if opcode < 0x20 || (opcode & !1) == op::CMP {
                let mut d = (*w & 0x7F) as usize;
                if d == from {
                    d = to;
                } else if d == to {
                    d = from;
                }
                *w = (*w & !0x7F) | d as u32; // ok: d < 128
            }
        }
    }

    fn insert_padding_nop(&mut self, at: Piece<'a>) {
        if self.opts.auto_nop {
            self.buf.push(RawInstr::format0(op::NOP).0);
        } else {
            self.warn(
                at,
                "a padding NOP is required here (hardware erratum); automatic NOPs are off"
                    .to_string(),
            );
        }
    }

    fn push_block(&mut self, kind: BlockKind, at: Piece<'a>) -> PResult<'a, ()> {
        if self.stack.len() == MAX_STACK {
            return Err(Problem::new(at, "too many nested blocks")
                .expected(format!("at most {MAX_STACK} open blocks")));
        }
        let loc = self.loc(at);
        self.stack.push(Block {
            kind,
            pos: self.buf.len(),
            loc,
        });
        Ok(())
    }

    /// Reads four comma-separated numbers up to `)` (the argument syntax of `.constf` & co.).
    fn four_values(
        &mut self,
        a0: Piece<'a>,
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
        usage: &dyn Fn() -> String,
    ) -> PResult<'a, [Piece<'a>; 4]> {
        let four = || format!("four values: {}", usage());
        let a1 = cur.next_arg().ok_or_else(|| Self::missing(stmt, four()))?;
        let a2 = cur.next_arg().ok_or_else(|| Self::missing(stmt, four()))?;
        let rest = cur.rest();
        let Some(paren) = rest.find(b')') else {
            let at = if rest.is_empty() {
                Piece::new("", stmt.offset + stmt.text.len())
            } else {
                rest
            };
            let what = if rest.is_empty() {
                "missing fourth value or `)`"
            } else {
                "missing `)`"
            };
            return Err(Problem::new(at, what).expected(four()));
        };
        let a3 = rest.to(paren).trim();
        let tail = rest.from(paren + 1).trim();
        if !tail.is_empty() {
            self.warn(tail, format!("text `{}` after `)` is ignored", tail.text));
        }
        Ok([a0, a1, a2, a3])
    }

    fn float_value(&mut self, p: Piece<'a>) -> PResult<'a, f32> {
        let r = atof(p.text);
        if r.consumed == 0 {
            // picasso reads values with C `atof`: no number reads 0.
            self.warn(
                p,
                format!(
                    "`{}` is not a number: read as 0 (as picasso's atof does)",
                    p.text
                ),
            );
            return Ok(0.0);
        }
        if r.consumed != p.text.len() {
            let tail = p.from(r.consumed);
            self.warn(
                tail,
                format!("text `{}` after the number is ignored", tail.text),
            );
        }
        // C `(float) atof(...)`: round the double to the nearest float.
        Ok(r.value as f32)
    }

    fn int_value(&mut self, p: Piece<'a>) -> PResult<'a, u8> {
        let v = atoi(p.text);
        if p.is_empty() || atoi_len(p.text) != p.text.len() {
            // picasso reads values with C `atoi`: no number reads 0, text after the number
            // (`3.5`) is ignored.
            self.warn(
                p,
                format!(
                    "integer `{}` is read as {v} (as picasso's atoi does: no number reads 0, text after the number is ignored)",
                    p.text
                ),
            );
        }
        if !(-128..=255).contains(&v) {
            self.warn(
                p,
                format!(
                    "{v} does not fit in 8 bits; only its low 8 bits ({}) are kept",
                    v & 0xFF
                ),
            );
        }
        Ok((v & 0xFF) as u8) // ok: masked
    }

    // ----------------------------------------------------------------------------------------
    // Instructions
    // ----------------------------------------------------------------------------------------

    fn instruction(
        &mut self,
        cmd: Piece<'a>,
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
    ) -> PResult<'a, ()> {
        let Some(&(name, opcode, opcodei, form)) = INSTRUCTIONS
            .iter()
            .find(|(n, ..)| cmd.text.eq_ignore_ascii_case(n))
        else {
            return Err(Problem::new(cmd, format!("unknown instruction `{}`", cmd.text))
                .expected("an instruction (add, mov, dp4, mad, cmp, ifc, for, call, end, ...) or a directive starting with `.`"));
        };
        if self.stack.is_empty() {
            return Err(Problem::new(
                cmd,
                format!("instruction `{}` outside of a block", cmd.text),
            )
            .expected("instructions inside `.proc name` ... `.end`"));
        }
        self.last_was_end = false;
        let d = self.get_dvle();
        let depth = self.stack.len();
        let words = self.buf.len();
        let too_long = !self.dvles[d].is_geo && self.buf.len() > MAX_VSH_SIZE;
        let result = if !too_long {
            self.instruction_body(name, opcode, opcodei, form, cur, stmt)
        } else if self.dvles[d].too_long_reported {
            // Reported once per file; later instructions are skipped silently.
            Ok(())
        } else {
            self.dvles[d].too_long_reported = true;
            Err(Problem::new(
                cmd,
                format!(
                    "vertex shader too long: {} instructions",
                    self.buf.len() + 1
                ),
            )
            .expected(format!(
                "at most {} instructions in a vertex shader's code memory",
                MAX_VSH_SIZE + 1
            )))
        };
        if (result.is_err() || too_long) && matches!(form, Form::For | Form::F2 | Form::F3) {
            // Keep the block structure intact after an error in a block opener so that the
            // matching `.else`/`.end` do not produce follow-up errors.
            let opens = opcode == op::LOOP || opcode == op::IFC || opcode == op::IFU;
            if opens && self.stack.len() == depth && depth < MAX_STACK {
                let kind = if opcode == op::LOOP {
                    BlockKind::For
                } else {
                    BlockKind::If { else_at: 0 }
                };
                let loc = self.loc(cmd);
                self.stack.push(Block {
                    kind,
                    pos: self.buf.len(),
                    loc,
                });
                if self.buf.len() == words {
                    self.buf.push(opcode << 26);
                }
            }
        }
        result
    }

    fn instruction_body(
        &mut self,
        name: &str,
        opcode: u32,
        opcodei: u32,
        form: Form,
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
    ) -> PResult<'a, ()> {
        let use_ = || usage(name, form);
        match form {
            Form::F0 => {
                Self::no_more_args(cur, &use_)?;
                self.buf.push(RawInstr::format0(opcode).0);
            }
            Form::F1(has_inverted) => {
                let dest_p = Self::arg(cur, stmt, &use_)?;
                let s1_p = Self::arg(cur, stmt, &use_)?;
                let s2_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let d = self.dest_reg(dest_p)?;
                let s1 = self.src_reg(s1_p, true)?;
                let s2 = self.src_reg(s2_p, true)?;
                let inverted = has_inverted && s1.reg < REG_C0 && s2.reg >= REG_C0;
                let hint = if has_inverted {
                    ""
                } else {
                    " (only dph, dst, sge, slt and mad can take the uniform in another operand)"
                };
                if !inverted {
                    Self::ensure_wide(&s1, s1_p, 1, name)?;
                    Self::ensure_narrow(&s2, s2_p, 2, name, hint)?;
                    Self::ensure_no_idx(&s2, s2_p, 2, name)?;
                } else {
                    Self::ensure_narrow(&s1, s1_p, 1, name, hint)?;
                    Self::ensure_no_idx(&s1, s1_p, 1, name)?;
                    Self::ensure_wide(&s2, s2_p, 2, name)?;
                }
                if Self::bad_inputs(&[s1.reg, s2.reg]) {
                    return Err(Problem::new(
                        stmt,
                        "two different input registers in one instruction",
                    )
                    .expected(
                        "at most one distinct v register per instruction (hardware limitation)",
                    ));
                }
                let desc =
                    opdesc_make(mask_from_swizzle(d.opsrc >> 1, true), s1.opsrc, s2.opsrc, 0);
                let di = self.find_or_add_opdesc(opcode, desc, MASK_D12, stmt)? as u32; // ok: < 128
                let (dst, r1, r2) = (d.reg as u32, s1.reg as u32, s2.reg as u32); // ok: range-checked
                let w = if !inverted {
                    RawInstr::format1(opcode, dst, s1.idx, r1, r2, di)
                } else {
                    RawInstr::format1i(opcodei, dst, s2.idx, r1, r2, di)
                };
                self.buf.push(w.0);
            }
            Form::F1u => {
                let dest_p = Self::arg(cur, stmt, &use_)?;
                let s1_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let d = self.dest_reg(dest_p)?;
                let s1 = self.src_reg(s1_p, true)?;
                Self::ensure_wide(&s1, s1_p, 1, name)?;
                let desc = opdesc_make(mask_from_swizzle(d.opsrc >> 1, true), s1.opsrc, 0, 0);
                let di = self.find_or_add_opdesc(opcode, desc, MASK_D1, stmt)? as u32; // ok: < 128
                self.buf
                    .push(RawInstr::format1(opcode, d.reg as u32, s1.idx, s1.reg as u32, 0, di).0); // ok: range-checked
            }
            Form::Mova => {
                let t = Self::arg(cur, stmt, &use_)?;
                let s1_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let is = |s: &str| t.text.eq_ignore_ascii_case(s);
                let mask = if is("a0") || is("a0.x") {
                    0b1000
                } else if is("a1") || is("a0.y") {
                    0b0100
                } else if is("a01") || is("a0.xy") {
                    0b1100
                } else {
                    return Err(Problem::new(
                        t,
                        format!("invalid destination `{}` for mova", t.text),
                    )
                    .expected("`a0.x`, `a0.y` or `a0.xy`"));
                };
                let s1 = self.src_reg(s1_p, true)?;
                Self::ensure_wide(&s1, s1_p, 1, name)?;
                let desc = opdesc_make(mask, s1.opsrc, 0, 0);
                let di = self.find_or_add_opdesc(opcode, desc, MASK_D1, stmt)? as u32; // ok: < 128
                self.buf
                    .push(RawInstr::format1(opcode, 0, s1.idx, s1.reg as u32, 0, di).0); // ok: range-checked
            }
            Form::Cmp => {
                let s1_p = Self::arg(cur, stmt, &use_)?;
                let x_p = Self::arg(cur, stmt, &use_)?;
                let y_p = Self::arg(cur, stmt, &use_)?;
                let s2_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let s1 = self.src_reg(s1_p, true)?;
                Self::ensure_wide(&s1, s1_p, 1, name)?;
                let cmp_expected = "`eq`, `ne`, `lt`, `le`, `gt` or `ge`";
                let cx = cmp_op(x_p.text).ok_or_else(|| {
                    Problem::new(x_p, format!("invalid comparison `{}`", x_p.text))
                        .expected(cmp_expected)
                })?;
                let cy = cmp_op(y_p.text).ok_or_else(|| {
                    Problem::new(y_p, format!("invalid comparison `{}`", y_p.text))
                        .expected(cmp_expected)
                })?;
                let s2 = self.src_reg(s2_p, false)?;
                Self::ensure_narrow(&s2, s2_p, 2, name, "")?;
                let desc = opdesc_make(0, s1.opsrc, s2.opsrc, 0);
                let di = self.find_or_add_opdesc(opcode, desc, MASK_12, stmt)? as u32; // ok: < 128
                self.buf
                    .push(RawInstr::format1c(cx, cy, s1.idx, s1.reg as u32, s2.reg as u32, di).0); // ok: range-checked
            }
            Form::Call => {
                let target = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                Self::target(target, "procedure")?;
                let loc = self.loc(target);
                self.proc_relocs.push(Reloc {
                    word: self.buf.len(),
                    name: target.text.to_string(),
                    loc,
                });
                self.buf.push(opcode << 26);
            }
            Form::For => {
                let reg_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let r = self.ireg(reg_p)?;
                self.push_block(BlockKind::For, stmt)?;
                self.buf
                    .push(RawInstr::format3(opcode, (r.reg - REG_I0) as u32, 0, 0).0); // ok: 0..8
            }
            Form::F2 => {
                let cond_p = Self::arg(cur, stmt, &use_)?;
                let flags = parse_cond_exp(cond_p)?;
                match opcode {
                    op::CALLC | op::JMPC => {
                        let target = Self::arg(cur, stmt, &use_)?;
                        Self::no_more_args(cur, &use_)?;
                        self.flow_reloc(target, opcode == op::CALLC)?;
                    }
                    op::IFC => {
                        Self::no_more_args(cur, &use_)?;
                        self.push_block(BlockKind::If { else_at: 0 }, stmt)?;
                    }
                    _ => Self::no_more_args(cur, &use_)?,
                }
                self.buf.push((opcode << 26) | flags);
            }
            Form::F3 => {
                let mut reg_p = Self::arg(cur, stmt, &use_)?;
                let mut negation = 0;
                if reg_p.first() == Some(b'!') {
                    if opcode != op::JMPU {
                        return Err(Problem::new(
                            reg_p,
                            format!("`{name}` cannot invert its condition"),
                        )
                        .expected("a boolean uniform without `!` (only jmpu supports `!bN`)"));
                    }
                    negation = 1;
                    reg_p = reg_p.from(1);
                }
                let r = self.breg(reg_p)?;
                match opcode {
                    op::CALLU | op::JMPU => {
                        let target = Self::arg(cur, stmt, &use_)?;
                        Self::no_more_args(cur, &use_)?;
                        self.flow_reloc(target, opcode == op::CALLU)?;
                    }
                    _ => {
                        Self::no_more_args(cur, &use_)?;
                        self.push_block(BlockKind::If { else_at: 0 }, stmt)?;
                    }
                }
                self.buf
                    .push(RawInstr::format3(opcode, (r.reg - REG_B0) as u32, 0, negation).0); // ok: 0..16
            }
            Form::Mad => {
                let dest_p = Self::arg(cur, stmt, &use_)?;
                let s1_p = Self::arg(cur, stmt, &use_)?;
                let s2_p = Self::arg(cur, stmt, &use_)?;
                let s3_p = Self::arg(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let d = self.dest_reg(dest_p)?;
                let s1 = self.src_reg(s1_p, false)?;
                Self::ensure_narrow(&s1, s1_p, 1, name, "")?;
                let s2 = self.src_reg(s2_p, true)?;
                let s3 = self.src_reg(s3_p, true)?;
                let inverted =
                    s2.reg < REG_C0 && (s3.reg >= REG_C0 || (s3.idx != 0 && s2.idx == 0));
                if !inverted {
                    Self::ensure_wide(&s2, s2_p, 2, name)?;
                    Self::ensure_narrow(
                        &s3,
                        s3_p,
                        3,
                        name,
                        " (a uniform may be source 2 or source 3, not both)",
                    )?;
                    Self::ensure_no_idx(&s3, s3_p, 3, name)?;
                } else {
                    Self::ensure_narrow(&s2, s2_p, 2, name, "")?;
                    Self::ensure_wide(&s3, s3_p, 3, name)?;
                    Self::ensure_no_idx(&s2, s2_p, 2, name)?;
                }
                if Self::bad_inputs(&[s1.reg, s2.reg, s3.reg]) {
                    return Err(Problem::new(
                        stmt,
                        "two different input registers in one instruction",
                    )
                    .expected(
                        "at most one distinct v register per instruction (hardware limitation)",
                    ));
                }
                let desc = opdesc_make(
                    mask_from_swizzle(d.opsrc >> 1, true),
                    s1.opsrc,
                    s2.opsrc,
                    s3.opsrc,
                );
                let mut di = self.find_or_add_opdesc(opcode, desc, MASK_D123, stmt)?;
                if di >= 32 {
                    let Some(which) = (0..32).find(|&w| self.opdesc_is_mad & (1 << w) == 0) else {
                        return Err(Problem::new(
                            stmt,
                            "no operand descriptor below 32 left for mad",
                        )
                        .expected("at most 32 distinct operand descriptors used by mad/madi"));
                    };
                    self.swap_opdesc(which, di);
                    di = which;
                }
                self.opdesc_is_mad |= 1 << di;
                let (dst, r1, r2, r3, di) = (
                    d.reg as u32,
                    s1.reg as u32,
                    s2.reg as u32,
                    s3.reg as u32,
                    di as u32,
                ); // ok: range-checked
                let w = if !inverted {
                    RawInstr::format5(dst, s2.idx, r1, r2, r3, di)
                } else {
                    RawInstr::format5i(dst, s3.idx, r1, r2, r3, di)
                };
                self.buf.push(w.0);
            }
            Form::SetEmit => {
                let vtx_p = Self::arg(cur, stmt, &use_)?;
                let flags_p = cur.next_arg();
                Self::no_more_args(cur, &use_)?;
                let vtx = Self::parse_int(vtx_p, 0, 2)? as u32; // ok: 0..=2
                let (mut prim, mut inv) = (false, false);
                if let Some(fp) = flags_p {
                    let mut fc = Cursor::new(fp);
                    while let Some(flag) = fc.tok_spc() {
                        let is = |s: &str| flag.text.eq_ignore_ascii_case(s);
                        if is("prim") || is("primitive") {
                            prim = true;
                        } else if is("inv") || is("invert") {
                            inv = true;
                        } else {
                            // picasso 2.7.1 prints "unknown setemit flag" but ignores the
                            // failure: the flag is skipped, the others still count, and the
                            // output is written.
                            self.warn(
                                flag,
                                format!(
                                    "unknown setemit flag `{}` is ignored (as picasso 2.7.1 does; the flags are `prim`/`primitive` and `inv`/`invert`)",
                                    flag.text
                                ),
                            );
                        }
                    }
                }
                let dv = self.dvle();
                if !dv.is_geo {
                    dv.is_geo = true;
                    dv.is_compat_geo = true;
                }
                self.buf.push(RawInstr::format4(vtx, prim, inv).0);
            }
        }
        Ok(())
    }

    // ----------------------------------------------------------------------------------------
    // Directives
    // ----------------------------------------------------------------------------------------

    fn directive(
        &mut self,
        cmd: Piece<'a>,
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
    ) -> PResult<'a, ()> {
        let name = cmd.from(1);
        let Some(&(_, dir)) = DIRECTIVES
            .iter()
            .find(|(n, _)| name.text.eq_ignore_ascii_case(n))
        else {
            return Err(Problem::new(cmd, format!("unknown directive `{}`", cmd.text)).expected(
                "one of .proc .end .else .alias .fvec .ivec .bool .constf .consti .constfa .in .out .entry .nodvle .gsh .setf .seti .setb",
            ));
        };
        let depth = self.stack.len();
        let result = self.directive_body(dir, cmd, cur, stmt);
        if result.is_err() && self.stack.len() == depth && depth < MAX_STACK {
            // Keep block structure after a failed opener (see `instruction`).
            let in_array = matches!(
                self.stack.last(),
                Some(Block {
                    kind: BlockKind::Array,
                    ..
                })
            );
            let kind = match dir {
                Directive::Proc => Some(BlockKind::Proc(String::new())),
                Directive::ConstFa if !in_array => Some(BlockKind::Array),
                _ => None,
            };
            if let Some(kind) = kind {
                let loc = self.loc(stmt);
                self.stack.push(Block {
                    kind,
                    pos: self.buf.len(),
                    loc,
                });
                self.const_array_name = None;
            }
        }
        result
    }

    fn directive_body(
        &mut self,
        dir: Directive,
        cmd: Piece<'a>,
        cur: &mut Cursor<'a>,
        stmt: Piece<'a>,
    ) -> PResult<'a, ()> {
        match dir {
            Directive::Proc => self.dir_proc(cur, stmt),
            Directive::Else => self.dir_else(cur, stmt),
            Directive::End => self.dir_end(cur, stmt),
            Directive::Alias => self.dir_alias(cur, stmt),
            Directive::Uniform(t) => self.dir_uniform(t, cur, cmd),
            Directive::Const(t) => self.dir_const(t, cur, stmt),
            Directive::ConstFa => self.dir_constfa(cur, stmt),
            Directive::In => self.dir_in(cur, stmt),
            Directive::Out => self.dir_out(cur, stmt),
            Directive::Entry => self.dir_entry(cur, stmt),
            Directive::NoDvle => {
                let d = self.get_dvle();
                Self::no_more_args(cur, &|| "`.nodvle` without operands".to_string())?;
                if !self.dvles[d].nodvle {
                    self.dvles[d].nodvle = true;
                    self.total_dvle_count -= 1;
                }
                Ok(())
            }
            Directive::Gsh => self.dir_gsh(cur, stmt),
            Directive::SetFi(t) => self.dir_setfi(t, cur, stmt),
            Directive::SetB => self.dir_setb(cur, stmt),
        }
    }

    fn dir_proc(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let use_ = || "`.proc name`".to_string();
        let name = Self::arg(cur, stmt, &use_)?;
        Self::no_more_args(cur, &use_)?;
        if !is_identifier(name.text) || name.is_empty() {
            // picasso accepts any text here, but such a procedure can never be called.
            self.warn(
                name,
                format!(
                    "procedure name `{}` is not an identifier and cannot be called",
                    name.text
                ),
            );
        }
        self.push_block(BlockKind::Proc(name.text.to_string()), stmt)?;
        if self.procs.contains_key(name.text) {
            return Err(Problem::new(
                name,
                format!("procedure `{}` is already defined", name.text),
            ));
        }
        Ok(())
    }

    fn dir_else(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        Self::no_more_args(cur, &|| "`.else` without operands".to_string())?;
        let Some(top) = self.stack.last() else {
            return Err(Problem::new(
                stmt,
                "`.else` without an open `ifu`/`ifc` block",
            ));
        };
        let BlockKind::If { else_at } = top.kind else {
            let inner = match top.kind {
                BlockKind::For => "a `for` loop",
                BlockKind::Array => "a `.constfa` array",
                _ => "a procedure",
            };
            return Err(Problem::new(
                stmt,
                format!(
                    "`.else` without an open `ifu`/`ifc` block (the innermost open block is {inner})"
                ),
            ));
        };
        if else_at != 0 {
            return Err(Problem::new(stmt, "second `.else` in the same `if` block"));
        }
        let if_pos = top.pos;
        if self.last_was_end {
            self.insert_padding_nop(stmt);
            self.last_was_end = false;
        } else {
            let p = self.buf.len();
            let last = self.buf.last().map_or(0, |w| w >> 26);
            if matches!(last, op::JMPC | op::JMPU | op::CALL | op::CALLC | op::CALLU)
                || p - if_pos < 2
            {
                self.insert_padding_nop(stmt);
            }
        }
        let cur_pos = self.buf.len();
        if let Some(Block {
            kind: BlockKind::If { else_at },
            ..
        }) = self.stack.last_mut()
        {
            *else_at = cur_pos;
        }
        self.check_flow_field(cur_pos, 0xFFF, stmt);
        if let Some(w) = self.buf.get_mut(if_pos) {
            *w = (*w & !(0xFFF << 10)) | ((cur_pos as u32 & 0xFFF) << 10); // ok: masked
        }
        Ok(())
    }

    fn check_flow_field(&mut self, value: usize, max: usize, at: Piece<'a>) {
        if value > max {
            self.report(Problem::new(
                at,
                format!(
                    "block too large: {value} does not fit in a {}-bit flow-control field",
                    max.count_ones()
                ),
            ));
        }
    }

    fn dir_end(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        Self::no_more_args(cur, &|| "`.end` without operands".to_string())?;
        let Some(elem) = self.stack.pop() else {
            return Err(Problem::new(stmt, "`.end` without an open block"));
        };
        let is_array = matches!(elem.kind, BlockKind::Array);
        if !is_array && self.last_was_end {
            self.insert_padding_nop(stmt);
            self.last_was_end = false;
        } else if !is_array && !self.buf.is_empty() {
            let p = self.buf.len();
            let last = self.buf.last().map_or(0, |w| w >> 26);
            let is_for = matches!(elem.kind, BlockKind::For);
            let min_len = if matches!(elem.kind, BlockKind::Proc(_)) {
                1
            } else {
                2
            };
            if matches!(last, op::JMPC | op::JMPU | op::CALL | op::CALLC | op::CALLU)
                || (is_for && matches!(last, op::BREAK | op::BREAKC))
                || p - elem.pos < min_len
            {
                self.insert_padding_nop(stmt);
            }
        }
        let cur_pos = self.buf.len();
        let size = cur_pos - elem.pos;
        match elem.kind {
            BlockKind::Proc(name) => {
                self.procs.entry(name).or_insert((elem.pos, size));
            }
            BlockKind::For => {
                self.check_flow_field(cur_pos - 1, 0xFFF, stmt);
                if let Some(w) = self.buf.get_mut(elem.pos) {
                    *w = (*w & !(0xFFF << 10)) | (((cur_pos - 1) as u32 & 0xFFF) << 10); // ok: masked
                }
                self.last_was_end = true;
            }
            BlockKind::If { else_at } => {
                if else_at == 0 {
                    self.check_flow_field(cur_pos, 0xFFF, stmt);
                    if let Some(w) = self.buf.get_mut(elem.pos) {
                        *w = (*w & !(0xFFF << 10)) | ((cur_pos as u32 & 0xFFF) << 10); // ok: masked
                    }
                } else {
                    self.check_flow_field(cur_pos - else_at, 0x3FF, stmt);
                    if let Some(w) = self.buf.get_mut(elem.pos) {
                        *w = (*w & !0x3FF) | ((cur_pos - else_at) as u32 & 0x3FF); // ok: masked
                    }
                }
                self.last_was_end = true;
            }
            BlockKind::Array => self.end_array(stmt)?,
        }
        Ok(())
    }

    fn end_array(&mut self, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let space = usize::from(self.dvles[d].uses_gsh_space());
        let Some(name) = self.const_array_name.take() else {
            // The array header had an error that was already reported.
            self.const_array.clear();
            self.const_array_size = -1;
            return Ok(());
        };
        let values = std::mem::take(&mut self.const_array);
        let declared = std::mem::replace(&mut self.const_array_size, -1);
        if self.aliases.contains_key(name.text) {
            return Err(Problem::new(
                name,
                format!("name `{}` is already used", name.text),
            ));
        }
        let size = if declared >= 0 {
            declared.max(values.len() as i64)
        } else {
            values.len() as i64
        };
        if size == 0 {
            return Err(
                Problem::new(name, format!("array `{}` has no elements", name.text))
                    .expected("`.constfa (x, y, z, w)` lines before `.end`"),
            );
        }
        let Some(pos) = self.unif_alloc[space].fvec.alloc_local(size) else {
            return Err(Problem::new(
                name,
                format!(
                    "not enough float uniforms left for constant array `{}` ({size} registers)",
                    name.text
                ),
            ));
        };
        let dv = &mut self.dvles[d];
        if dv.constants.len() + size as usize > MAX_CONSTANT {
            // ok: size <= 96 after a successful allocation
            return Err(Problem::new(stmt, "too many constants in one shader")
                .expected(format!("at most {MAX_CONSTANT}")));
        }
        for i in 0..size {
            let value = values.get(i as usize).copied().unwrap_or([0.0; 4]); // ok: i < 96
            dv.constants.push(Constant {
                reg: pos + i,
                value: ConstVal::Float(value),
            });
        }
        self.aliases
            .insert(name.text, pos as u32 | (DEFAULT_OPSRC << 8)); // ok: pos < 0x80
        Ok(())
    }

    fn dir_alias(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let use_ = || "`.alias name register`".to_string();
        let name = Self::arg_spc(cur, stmt, &use_)?;
        let reg_p = Self::arg_spc(cur, stmt, &use_)?;
        Self::no_more_args(cur, &use_)?;
        if name.is_empty() || !is_identifier(name.text) {
            return Err(
                Problem::new(name, format!("invalid alias name `{}`", name.text)).expected(
                    "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                ),
            );
        }
        let b = name.text.as_bytes();
        if matches!(
            b[0].to_ascii_lowercase(), // ok: `name` is not empty (checked above)
            b'o' | b'v' | b'r' | b'c' | b'i' | b'b'
        ) && b.get(1).is_some_and(u8::is_ascii_digit)
        {
            return Err(Problem::new(
                name,
                format!("alias `{}` looks like a register name", name.text),
            )
            .expected("a name that is not a register letter followed by a digit"));
        }
        let r = self.parse_reg(reg_p, false)?;
        if r.reg > 0xFF {
            return Err(Problem::new(
                reg_p,
                format!("`{}` is beyond the last register", reg_p.text),
            ));
        }
        if self.aliases.contains_key(name.text) {
            return Err(Problem::new(
                name,
                format!("name `{}` is already used", name.text),
            ));
        }
        let value = (r.reg as u32 & 0xFF) | (r.opsrc << 8); // ok: reg < 0x100 after offsets
        self.aliases.insert(name.text, value);
        Ok(())
    }

    fn dir_uniform(&mut self, utype: u16, cur: &mut Cursor<'a>, cmd: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let shared = !self.dvles[d].uses_gsh_space();
        let space = usize::from(!shared);
        let mut any = false;
        while let Some(arg) = cur.next_arg() {
            any = true;
            let mut size: i64 = 1;
            let mut name = arg;
            if let Some(ob) = arg.find(b'[') {
                let inner = arg.from(ob + 1);
                let Some(cb) = inner.find(b']') else {
                    return Err(Problem::new(arg, format!("missing `]` in `{}`", arg.text))
                        .expected("`name[size]`"));
                };
                let size_p = inner.to(cb).trim();
                let tail = inner.from(cb + 1);
                if !tail.trim().is_empty() {
                    // picasso 2.7.1 cuts the argument at `]`: what follows is never read.
                    self.warn(
                        tail,
                        format!(
                            "text `{}` after `]` is ignored (as picasso does)",
                            tail.text
                        ),
                    );
                }
                name = arg.to(ob);
                if atoi(size_p.text) < 1 {
                    return Err(Problem::new(
                        size_p,
                        format!("invalid uniform array size `{}`", size_p.text),
                    )
                    .expected("a positive decimal number"));
                }
                if atoi_len(size_p.text) != size_p.text.len() {
                    self.warn(
                        size_p,
                        format!(
                            "array size `{}` is read as {} (as picasso's atoi does: text after the number is ignored)",
                            size_p.text,
                            atoi(size_p.text)
                        ),
                    );
                }
                size = i64::from(atoi(size_p.text));
            }
            if name.is_empty() || !is_identifier(name.text) {
                return Err(
                    Problem::new(name, format!("invalid uniform name `{}`", name.text)).expected(
                        "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                    ),
                );
            }
            if self.aliases.contains_key(name.text) {
                return Err(Problem::new(
                    name,
                    format!("name `{}` is already used", name.text),
                ));
            }
            let mut pos = None;
            let earlier = if shared {
                self.global_uniforms.iter().find(|u| u.name == name.text)
            } else {
                None
            };
            if let Some(u) = earlier {
                if u.utype != utype {
                    return Err(Problem::new(
                        name,
                        format!(
                            "uniform `{}` was declared with another type in an earlier file",
                            name.text
                        ),
                    ));
                }
                if u.size != size {
                    return Err(Problem::new(
                        name,
                        format!(
                            "uniform `{}` was declared with size {} in an earlier file",
                            name.text, u.size
                        ),
                    ));
                }
                pos = Some(u.pos);
            }
            let pos = match pos {
                Some(p) => p,
                None => {
                    if self.global_uniforms.len() == MAX_UNIFORM {
                        return Err(Problem::new(name, "too many uniforms in total")
                            .expected(format!("at most {MAX_UNIFORM}")));
                    }
                    match self.unif_alloc[space].get(utype).alloc_global(size) {
                        Some(p) => p,
                        None => {
                            return Err(Problem::new(
                                arg,
                                format!(
                                    "not enough uniform registers left for `{}` ({size})",
                                    arg.text
                                ),
                            ));
                        }
                    }
                }
            };
            if shared {
                self.global_uniforms.push(Uniform {
                    name: name.text.to_string(),
                    pos,
                    size,
                    utype,
                });
            }
            let dv = &mut self.dvles[d];
            if !name.text.starts_with('_') {
                if dv.uniforms.len() == MAX_UNIFORM {
                    return Err(Problem::new(name, "too many uniforms in one shader")
                        .expected(format!("at most {MAX_UNIFORM}")));
                }
                dv.uniforms.push(Uniform {
                    name: name.text.to_string(),
                    pos,
                    size,
                    utype,
                });
                dv.symbol_size += name.text.len() + 1;
            }
            self.aliases
                .insert(name.text, pos as u32 | (DEFAULT_OPSRC << 8)); // ok: pos < 0x98
        }
        if !any {
            self.warn(cmd, format!("`{}` declares nothing", cmd.text));
        }
        Ok(())
    }

    fn dir_const(&mut self, utype: u16, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let space = usize::from(self.dvles[d].uses_gsh_space());
        let use_ = || "`name(x, y, z, w)`".to_string();
        let name = cur
            .next_arg_cparen()
            .ok_or_else(|| Self::missing(stmt, use_()))?;
        let a0 = cur.next_arg().ok_or_else(|| {
            Problem::new(name, format!("missing `(` after `{}`", name.text)).expected(use_())
        })?;
        let vals = self.four_values(a0, cur, stmt, &use_)?;
        if name.is_empty() || !is_identifier(name.text) {
            return Err(
                Problem::new(name, format!("invalid constant name `{}`", name.text)).expected(
                    "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                ),
            );
        }
        if self.aliases.contains_key(name.text) {
            return Err(Problem::new(
                name,
                format!("name `{}` is already used", name.text),
            ));
        }
        let value = self.const_value(utype, &vals)?;
        let Some(pos) = self.unif_alloc[space].get(utype).alloc_local(1) else {
            return Err(Problem::new(
                name,
                format!("no uniform register left for constant `{}`", name.text),
            ));
        };
        let dv = &mut self.dvles[d];
        if dv.constants.len() == MAX_CONSTANT {
            return Err(Problem::new(stmt, "too many constants in one shader")
                .expected(format!("at most {MAX_CONSTANT}")));
        }
        dv.constants.push(Constant { reg: pos, value });
        self.aliases
            .insert(name.text, pos as u32 | (DEFAULT_OPSRC << 8)); // ok: pos < 0x84
        Ok(())
    }

    fn const_value(&mut self, utype: u16, vals: &[Piece<'a>; 4]) -> PResult<'a, ConstVal> {
        if utype == UTYPE_FVEC {
            let mut f = [0f32; 4];
            for (o, p) in f.iter_mut().zip(vals) {
                *o = self.float_value(*p)?;
            }
            Ok(ConstVal::Float(f))
        } else {
            let mut v = [0u8; 4];
            for (o, p) in v.iter_mut().zip(vals) {
                *o = self.int_value(*p)?;
            }
            Ok(ConstVal::Int(v))
        }
    }

    fn dir_constfa(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let in_array = matches!(
            self.stack.last(),
            Some(Block {
                kind: BlockKind::Array,
                ..
            })
        );
        if !in_array {
            let use_ = || "`.constfa name[]` or `.constfa name[size]`".to_string();
            let arg = Self::arg(cur, stmt, &use_)?;
            Self::no_more_args(cur, &use_)?;
            if self.stack.len() == MAX_STACK {
                return Err(Problem::new(stmt, "too many nested blocks")
                    .expected(format!("at most {MAX_STACK} open blocks")));
            }
            let Some(ob) = arg.find(b'[') else {
                return Err(
                    Problem::new(arg, format!("missing `[` in `{}`", arg.text)).expected(use_())
                );
            };
            let inner = arg.from(ob + 1);
            let Some(cb) = inner.find(b']') else {
                return Err(
                    Problem::new(arg, format!("missing `]` in `{}`", arg.text)).expected(use_())
                );
            };
            let size_p = inner.to(cb).trim();
            let tail = inner.from(cb + 1).trim();
            if !tail.is_empty() {
                return Err(Problem::new(
                    tail,
                    format!("unexpected text `{}` after `]`", tail.text),
                )
                .expected(use_()));
            }
            let mut size = -1;
            if !size_p.is_empty() {
                let v = atoi(size_p.text);
                if v <= 0 {
                    return Err(Problem::new(
                        size_p,
                        format!("invalid array size `{}`", size_p.text),
                    )
                    .expected("a positive decimal number"));
                }
                if atoi_len(size_p.text) != size_p.text.len() {
                    self.warn(
                        size_p,
                        format!(
                            "array size `{}` is read as {v} (as picasso's atoi does: text after the number is ignored)",
                            size_p.text
                        ),
                    );
                }
                size = i64::from(v);
            }
            let name = arg.to(ob);
            if name.is_empty() || !is_identifier(name.text) {
                return Err(
                    Problem::new(name, format!("invalid array name `{}`", name.text)).expected(
                        "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                    ),
                );
            }
            if size > 96 {
                // picasso would first pad the array with that many zero vectors, then fail to
                // allocate it; fail early with the same outcome and bounded memory.
                return Err(Problem::new(
                    size_p,
                    format!("array size {size} exceeds the 96 float uniforms"),
                ));
            }
            self.push_block(BlockKind::Array, stmt)?;
            self.const_array_size = size;
            self.const_array_name = Some(name);
            self.const_array.clear();
        } else {
            let use_ = || "`.constfa (x, y, z, w)`".to_string();
            let declared = self.const_array_size;
            if declared >= 0 && declared == self.const_array.len() as i64
                || self.const_array.len() >= 96
            {
                return Err(
                    Problem::new(stmt, "too many elements in the array").expected(format!(
                        "at most {}",
                        if declared >= 0 { declared } else { 96 }
                    )),
                );
            }
            let a0 = Self::arg(cur, stmt, &use_)?;
            if a0.first() != Some(b'(') {
                return Err(
                    Problem::new(a0, format!("expected `(` at `{}`", a0.text)).expected(use_())
                );
            }
            let vals = self.four_values(a0.from(1), cur, stmt, &use_)?;
            let mut v = [0f32; 4];
            for (o, p) in v.iter_mut().zip(vals) {
                *o = self.float_value(p)?;
            }
            if self.const_array_name.is_some() {
                self.const_array.push(v);
            }
        }
        Ok(())
    }

    fn dir_setfi(&mut self, utype: u16, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || "`register(x, y, z, w)`".to_string();
        let name = cur
            .next_arg_cparen()
            .ok_or_else(|| Self::missing(stmt, use_()))?;
        let a0 = cur.next_arg().ok_or_else(|| {
            Problem::new(name, format!("missing `(` after `{}`", name.text)).expected(use_())
        })?;
        let vals = self.four_values(a0, cur, stmt, &use_)?;
        let r = self.parse_reg(name, false)?;
        if utype == UTYPE_FVEC && !(REG_C0..REG_I0).contains(&r.reg) {
            return Err(
                Problem::new(name, format!("`{}` is not a float uniform", name.text))
                    .expected("c0-c95"),
            );
        }
        if utype == UTYPE_IVEC && !(REG_I0..REG_I0 + 4).contains(&r.reg) {
            return Err(
                Problem::new(name, format!("`{}` is not an integer uniform", name.text))
                    .expected("i0-i3"),
            );
        }
        let value = self.const_value(utype, &vals)?;
        let dv = &mut self.dvles[d];
        if dv.constants.len() == MAX_CONSTANT {
            return Err(Problem::new(stmt, "too many constants in one shader")
                .expected(format!("at most {MAX_CONSTANT}")));
        }
        dv.constants.push(Constant {
            reg: i64::from(r.reg),
            value,
        });
        Ok(())
    }

    fn dir_setb(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || "`.setb bN value`".to_string();
        let name = Self::arg_spc(cur, stmt, &use_)?;
        let value_p = Self::arg_spc(cur, stmt, &use_)?;
        Self::no_more_args(cur, &use_)?;
        let r = self.breg(name)?;
        let Some(value) = parse_bool(value_p.text) else {
            return Err(
                Problem::new(value_p, format!("invalid boolean `{}`", value_p.text))
                    .expected("true, false, on, off, 1 or 0"),
            );
        };
        let dv = &mut self.dvles[d];
        if dv.constants.len() == MAX_CONSTANT {
            return Err(Problem::new(stmt, "too many constants in one shader")
                .expected(format!("at most {MAX_CONSTANT}")));
        }
        dv.constants.push(Constant {
            reg: i64::from(r.reg),
            value: ConstVal::Bool(value),
        });
        Ok(())
    }

    fn dir_in(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || "`.in name [vN]`".to_string();
        let name = Self::arg_spc(cur, stmt, &use_)?;
        let reg_p = cur.next_arg_spc();
        Self::no_more_args(cur, &use_)?;
        if name.is_empty() || !is_identifier(name.text) {
            return Err(
                Problem::new(name, format!("invalid input name `{}`", name.text)).expected(
                    "an identifier (letters, digits, `_`, `$`; not starting with a digit)",
                ),
            );
        }
        if self.aliases.contains_key(name.text) {
            return Err(Problem::new(
                name,
                format!("name `{}` is already used", name.text),
            ));
        }
        let oid = match reg_p {
            Some(p) => {
                let r = self.parse_reg(p, false)?;
                let direct_other = r.letter.is_some_and(|l| l != b'v' && l != b'o');
                if !(0..0x10).contains(&r.reg) || direct_other {
                    return Err(
                        Problem::new(p, format!("`{}` is not an input register", p.text))
                            .expected("v0-v15"),
                    );
                }
                if r.letter == Some(b'o') {
                    self.warn(
                        p,
                        format!(
                            "`{}` is an output register: `.in` takes v{} instead (as picasso does)",
                            p.text, r.reg
                        ),
                    );
                }
                r.reg
            }
            None => match self.dvles[d].find_free_input() {
                Some(i) => i,
                None => {
                    return Err(Problem::new(
                        name,
                        "all 16 input registers are already used",
                    ));
                }
            },
        };
        let dv = &mut self.dvles[d];
        if dv.uniforms.len() == MAX_UNIFORM {
            return Err(Problem::new(name, "too many uniforms in one shader")
                .expected(format!("at most {MAX_UNIFORM}")));
        }
        dv.input_mask |= 1 << oid;
        dv.uniforms.push(Uniform {
            name: name.text.to_string(),
            pos: i64::from(oid),
            size: 1,
            utype: UTYPE_FVEC,
        });
        dv.symbol_size += name.text.len() + 1;
        self.aliases
            .insert(name.text, oid as u32 | (DEFAULT_OPSRC << 8)); // ok: oid < 16
        Ok(())
    }

    fn dir_out(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || "`.out name|- semantic[.mask] [oN[.mask]]`".to_string();
        let name_p = Self::arg_spc(cur, stmt, &use_)?;
        let mut type_p = Self::arg_spc(cur, stmt, &use_)?;
        let reg_p = cur.next_arg_spc();
        Self::no_more_args(cur, &use_)?;
        let name = if name_p.text == "-" {
            None
        } else if name_p.is_empty() || !is_identifier(name_p.text) {
            return Err(
                Problem::new(name_p, format!("invalid output name `{}`", name_p.text))
                    .expected("an identifier, or `-` for no alias"),
            );
        } else {
            Some(name_p)
        };
        let mut oid = None;
        let mut sw = DEFAULT_OPSRC;
        if let Some(p) = reg_p {
            let r = self.parse_reg(p, false)?;
            let max = self.dvles[d].max_output_reg();
            let direct_other = r.letter.is_some_and(|l| l != b'o' && l != b'v');
            if r.letter == Some(b'v') && (0..max).contains(&r.reg) {
                self.warn(
                    p,
                    format!(
                        "`{}` is an input register: `.out` takes o{} instead (as picasso does)",
                        p.text, r.reg
                    ),
                );
            }
            if !(0..max).contains(&r.reg) || direct_other {
                return Err(Problem::new(
                    p,
                    format!("`{}` is not an output register here", p.text),
                )
                .expected(if max == 7 {
                    "o0-o6 (geometry shader)"
                } else {
                    "o0-o15"
                }));
            }
            oid = Some(r.reg);
            sw = r.opsrc;
        } else if let Some(dot) = type_p.find(b'.') {
            let m = type_p.from(dot + 1);
            type_p = type_p.to(dot);
            sw = parser::parse_swizzle(m.text)
                .map(|s| s << 1)
                .ok_or_else(|| {
                    Problem::new(m, format!("invalid output mask `{}`", m.text))
                        .expected("components from `xyzw` (or `rgba`, `stpq`)")
                })?;
        }
        let mask = mask_from_swizzle(sw >> 1, false);
        let Some(otype) = parser::output_type(type_p.text) else {
            return Err(Problem::new(type_p, format!("unknown output semantic `{}`", type_p.text)).expected(
                "position, normalquat, color, texcoord0, texcoord0w, texcoord1, texcoord2, view or dummy (or pos, nquat, clr, tcoord0, tcoord0w, tcoord1, tcoord2)",
            ));
        };
        let dv = &mut self.dvles[d];
        let oid = match oid {
            Some(o) => {
                if dv.output_used & (u64::from(mask) << (4 * o)) != 0 {
                    return Err(Problem::new(
                        reg_p.unwrap_or(type_p),
                        "this output overlaps components of an earlier `.out`",
                    ));
                }
                Some(o)
            }
            None => dv.find_free_output(),
        };
        let Some(oid) = oid.filter(|_| dv.outputs.len() < MAX_OUTPUT) else {
            return Err(Problem::new(stmt, "too many outputs")
                .expected(format!("at most {} output registers", dv.max_output_reg())));
        };
        if let Some(n) = name
            && self.aliases.contains_key(n.text)
        {
            return Err(Problem::new(
                n,
                format!("name `{}` is already used", n.text),
            ));
        }
        if oid >= 7 && otype != OUTTYPE_DUMMY {
            return Err(Problem::new(
                reg_p.unwrap_or(stmt),
                format!("o{oid} can only be a `dummy` output"),
            )
            .expected("o0-o6 for semantic outputs"));
        }
        let dv = &mut self.dvles[d];
        dv.outputs.push(AsmOutput {
            semantic: otype,
            register: oid as u16,
            mask: mask as u16,
        }); // ok: small
        dv.output_mask |= 1 << oid;
        dv.output_used |= u64::from(mask) << (4 * oid);
        if otype == OUTTYPE_DUMMY && dv.uses_gsh_space() {
            dv.is_merge = true;
        }
        if let Some(n) = name {
            self.aliases
                .insert(n.text, oid as u32 | (DEFAULT_OPSRC << 8)); // ok: oid < 16
        }
        Ok(())
    }

    fn dir_entry(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || "`.entry procName`".to_string();
        let name = Self::arg_spc(cur, stmt, &use_)?;
        Self::no_more_args(cur, &use_)?;
        Self::target(name, "entry point")?;
        let loc = self.loc(name);
        let dv = &mut self.dvles[d];
        dv.entrypoint = name.text.to_string();
        dv.entry_loc = Some(loc);
        Ok(())
    }

    fn dir_gsh(&mut self, cur: &mut Cursor<'a>, stmt: Piece<'a>) -> PResult<'a, ()> {
        let d = self.get_dvle();
        let use_ = || {
            "`.gsh point cN`, `.gsh variable cN vtxNum` or `.gsh fixed cN cArrayStart vtxNum`"
                .to_string()
        };
        let Some(mode_p) = cur.next_arg_spc() else {
            // Legacy form: a geometry shader sharing the vertex shaders' uniform space.
            let dv = &mut self.dvles[d];
            dv.is_geo = true;
            dv.is_compat_geo = true;
            return Ok(());
        };
        let dv = &self.dvles[d];
        if dv.is_geo {
            return Err(Problem::new(
                stmt,
                "this file is already a geometry shader (`.gsh` or `setemit` came earlier)",
            ));
        }
        if !dv.constants.is_empty() || !dv.uniforms.is_empty() || dv.output_mask != 0 {
            return Err(Problem::new(
                stmt,
                "`.gsh` must come before any constant, uniform, input or output declaration",
            ));
        }
        let Some(mode) = parser::gsh_mode(mode_p.text) else {
            return Err(Problem::new(
                mode_p,
                format!("unknown geometry shader mode `{}`", mode_p.text),
            )
            .expected("point, variable (subdivision) or fixed (particle)"));
        };
        let first_p = Self::arg_spc(cur, stmt, &use_)?;
        let first = self.parse_reg(first_p, false)?;
        if !(REG_C0..REG_I0).contains(&first.reg) {
            return Err(Problem::new(
                first_p,
                format!("`{}` is not a float uniform", first_p.text),
            )
            .expected("c0-c95"));
        }
        let mut variable_num = 0;
        let mut fixed = (0, 0);
        match mode {
            1 => {
                let n_p = Self::arg_spc(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                variable_num = Self::parse_int(n_p, 0, 255)? as u8; // ok: 0..=255
            }
            2 => {
                let start_p = Self::arg_spc(cur, stmt, &use_)?;
                let n_p = Self::arg_spc(cur, stmt, &use_)?;
                Self::no_more_args(cur, &use_)?;
                let start = self.parse_reg(start_p, false)?;
                let n = Self::parse_int(n_p, 0, 255)? as u8; // ok: 0..=255
                if !(REG_C0..REG_I0).contains(&start.reg) {
                    return Err(Problem::new(
                        start_p,
                        format!("`{}` is not a float uniform", start_p.text),
                    )
                    .expected("c0-c95"));
                }
                if start.reg >= first.reg {
                    return Err(Problem::new(
                        start_p,
                        format!(
                            "array start `{}` lies inside the uniform allocation pool",
                            start_p.text
                        ),
                    )
                    .expected(format!("a register below `{}`", first_p.text)));
                }
                fixed = ((start.reg - REG_C0) as u8, n); // ok: < 96
            }
            _ => Self::no_more_args(cur, &use_)?,
        }
        let dv = &mut self.dvles[d];
        dv.is_geo = true;
        dv.gsh_type = mode;
        dv.gsh_variable_num = variable_num;
        dv.gsh_fixed_start = fixed.0;
        dv.gsh_fixed_num = fixed.1;
        self.unif_alloc[1].init_for_gsh(i64::from(first.reg));
        Ok(())
    }

    // ----------------------------------------------------------------------------------------
    // Linking
    // ----------------------------------------------------------------------------------------

    /// Resolves procedure references and entry points (picasso's `RelocateProduct`) and builds
    /// the result; `Err` carries all diagnostics when there is at least one error.
    pub fn finish(mut self) -> Result<Assembly, Vec<AsmError>> {
        let relocs = std::mem::take(&mut self.proc_relocs);
        for r in relocs {
            match self.procs.get(&r.name) {
                Some(&(dst, num)) => {
                    if dst > 0xFFF || num > 0x3FF {
                        self.push_diag(
                            Severity::Error,
                            r.loc,
                            format!("procedure `{}` (word {dst}, {num} words) does not fit the call fields", r.name),
                            None,
                        );
                    }
                    if let Some(w) = self.buf.get_mut(r.word) {
                        *w =
                            (*w & !0x3F_FFFF) | (num as u32 & 0x3FF) | ((dst as u32 & 0xFFF) << 10); // ok: masked
                    }
                }
                None => self.push_diag(
                    Severity::Error,
                    r.loc,
                    format!("procedure `{}` is not defined", r.name),
                    Some("a `.proc` of that name in one of the input files".to_string()),
                ),
            }
        }
        if self.total_dvle_count == 0 && !self.diags.iter().any(AsmError::is_error) {
            self.file_error(0, "no shader entry (DVLE) can be generated from the input: no file contains instructions or declarations, or all use `.nodvle`".to_string());
        }
        for i in 0..self.dvles.len() {
            if self.dvles[i].nodvle {
                continue;
            }
            let name = self.dvles[i].entrypoint.clone();
            match self.procs.get(&name) {
                Some(&(start, size)) => {
                    self.dvles[i].entry_start = start as u32; // ok: < buffer size
                    self.dvles[i].entry_end = (start + size) as u32; // ok: < buffer size
                }
                None => {
                    let file = self.dvles[i].file_index;
                    match self.dvles[i].entry_loc {
                        Some(loc) => self.push_diag(Severity::Error, loc, format!("entry point `{name}` is not defined"), Some("a `.proc` of that name".to_string())),
                        None => self.file_error(file, format!("entry point `{name}` is not defined (no `.entry`, so `main` is used)")),
                    }
                }
            }
        }
        // Report in source order (file, line, column), whatever the phase that found them.
        let mut order: Vec<usize> = (0..self.diags.len()).collect();
        order.sort_by_key(|&i| self.diag_keys[i]);
        let mut slots: Vec<Option<AsmError>> = std::mem::take(&mut self.diags)
            .into_iter()
            .map(Some)
            .collect();
        self.diags = order.iter().filter_map(|&i| slots[i].take()).collect();
        let [errors, warnings] = self.dropped;
        if errors + warnings > 0 {
            self.diags.push(AsmError {
                severity: if errors > 0 {
                    Severity::Error
                } else {
                    Severity::Warning
                },
                file: self.files.first().cloned().unwrap_or_default(),
                line: 0,
                column: 0,
                message: format!(
                    "{errors} more error(s) and {warnings} more warning(s) not listed (at most {} diagnostics are kept)",
                    super::MAX_DIAGNOSTICS
                ),
                token: None,
                expected: None,
                source_line: None,
                span: 0,
            });
        }
        if self.diags.iter().any(AsmError::is_error) {
            return Err(self.diags);
        }
        let entries = self
            .dvles
            .iter()
            .filter(|d| !d.nodvle)
            .map(build_entry)
            .collect();
        Ok(Assembly {
            program: self.buf,
            opdescs: self.opdescs,
            entries,
            warnings: self.diags,
        })
    }
}

/// picasso's `f32tof24`: truncates the mantissa, flushes underflow to ±0 and saturates overflow,
/// infinities and NaNs to ±infinity (f24: sign bit 23, exponent 22–16 biased by 63, mantissa
/// 15–0).
pub(crate) fn picasso_f32_to_f24(f: f32) -> u32 {
    let i = f.to_bits();
    let mantissa = (i & 0x7F_FFFF) >> 7;
    let exponent = ((i >> 23) & 0xFF) as i32 - 127 + 63;
    let sign = i >> 31;
    if exponent < 0 {
        sign << 23
    } else if exponent > 0x7F {
        (sign << 23) | (0x7F << 16)
    } else {
        (sign << 23) | ((exponent as u32) << 16) | mantissa // ok: 0..=0x7F
    }
}

fn build_entry(d: &Dvle<'_>) -> AsmEntry {
    let constants = d
        .constants
        .iter()
        .map(|c| match c.value {
            ConstVal::Float(v) => AsmConstant::Float {
                reg: (c.reg - i64::from(REG_C0)) as u8,
                value: v.map(picasso_f32_to_f24),
            }, // ok: c range-checked
            ConstVal::Int(v) => AsmConstant::Int {
                reg: (c.reg - i64::from(REG_I0)) as u8,
                value: v,
            }, // ok: i range-checked
            ConstVal::Bool(v) => AsmConstant::Bool {
                reg: (c.reg - i64::from(REG_B0)) as u8,
                value: v,
            }, // ok: b range-checked
        })
        .collect();
    let mut uniforms: Vec<&Uniform> = d.uniforms.iter().collect();
    // UNVERIFIED: picasso uses the unstable std::sort; positions only tie when two `.in` name the
    // same register, where libstdc++ keeps declaration order for fewer than 17 entries (as here).
    uniforms.sort_by_key(|u| u.pos);
    let uniforms = uniforms
        .iter()
        .map(|u| {
            let first = if u.pos >= i64::from(REG_C0) {
                u.pos - 0x10
            } else {
                u.pos
            };
            AsmUniform {
                name: u.name.replace('$', "."),
                first: first as u16,               // ok: < 0x98
                last: (first + u.size - 1) as u16, // ok: allocation bounded
                kind: match u.utype {
                    UTYPE_BOOL => super::UniformKind::Bool,
                    UTYPE_IVEC => super::UniformKind::Int,
                    _ if u.pos < i64::from(REG_C0) => super::UniformKind::Input,
                    _ => super::UniformKind::Float,
                },
            }
        })
        .collect();
    AsmEntry {
        source: d.filename.clone(),
        kind: if d.is_geo {
            ShaderKind::Geometry
        } else {
            ShaderKind::Vertex
        },
        merge_outmaps: d.is_merge,
        entry_start: d.entry_start,
        entry_end: d.entry_end,
        input_mask: d.input_mask,
        output_mask: d.output_mask,
        gsh_mode: d.gsh_type,
        gsh_fixed_start: d.gsh_fixed_start,
        gsh_variable_num: d.gsh_variable_num,
        gsh_fixed_num: d.gsh_fixed_num,
        constants,
        outputs: d.outputs.clone(),
        uniforms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f24_conversion_matches_picasso() {
        assert_eq!(picasso_f32_to_f24(1.0), 0x3F0000);
        assert_eq!(picasso_f32_to_f24(-1.0), 0xBF0000);
        assert_eq!(picasso_f32_to_f24(0.5), 0x3E0000);
        assert_eq!(picasso_f32_to_f24(0.0), 0);
        assert_eq!(picasso_f32_to_f24(-0.0), 0x800000);
        assert_eq!(picasso_f32_to_f24(f32::INFINITY), 0x7F0000);
        assert_eq!(picasso_f32_to_f24(f32::NAN), 0x7F0000);
        assert_eq!(picasso_f32_to_f24(1e-30), 0);
        // Truncation, not rounding: 1 + 2^-17 + 2^-23 keeps only 16 mantissa bits.
        assert_eq!(picasso_f32_to_f24(f32::from_bits(0x3F80_00FF)), 0x3F0001);
    }

    #[test]
    fn optimize_mask_ignores_unused_lanes() {
        // mov with mask .x: src1 lanes y, z, w are free.
        let m = optimize_mask(MASK_D1, op::MOV, 0b1000);
        assert_eq!(
            m & opdesc_make(0, 0x1FF, 0, 0),
            opdesc_make(0, 0x1 | (0b11 << 7), 0, 0)
        );
        // dp3: lane w of both sources is free.
        let m = optimize_mask(MASK_D12, op::DP3, 0xF);
        assert_eq!((m >> 4) & 0x1FF, 0x1FF & !(3 << 1));
    }

    /// Assembles `src` (a vertex shader, or a geometry shader with `.gsh`) and returns the
    /// whole DVLB and the warnings' messages.
    fn shbin(src: &str) -> (Vec<u8>, Vec<String>) {
        match super::super::assemble(&[("t.v.pica", src)]) {
            Ok(a) => (
                a.to_shbin(),
                a.warnings.iter().map(|w| w.message.clone()).collect(),
            ),
            Err(e) => panic!("picasso 2.7.1 accepts:\n{src}\n{}", e.render()),
        }
    }

    /// `odd` assembles to the bytes of `canonical` (what picasso 2.7.1 makes of it), with a
    /// warning containing `says`.
    fn same_as(odd: &str, canonical: &str, says: &str) {
        let (a, warnings) = shbin(odd);
        let (b, clean) = shbin(canonical);
        assert!(clean.is_empty(), "{canonical}: {clean:?}");
        assert_eq!(a, b, "{odd} vs {canonical}");
        assert!(
            warnings.iter().any(|w| w.contains(says)),
            "{odd}: {warnings:?}"
        );
    }

    fn body(instr: &str) -> String {
        format!(".fvec m[8]\n.out o position\n.proc main\n{instr}\n\tend\n.end\n")
    }

    /// picasso's `parseReg` reads a bracket with `atoi`: no number is offset 0, text after the
    /// number is ignored, and an unknown name before `+` means no index register.
    #[test]
    fn unreadable_register_offsets_read_as_picasso_does() {
        for (odd, canonical, says) in [
            ("mov o, m[abc]", "mov o, m[0]", "read as 0"),
            ("mov o, m[]", "mov o, m[0]", "read as 0"),
            ("mov o, m[a0.x-1]", "mov o, m[0]", "read as 0"),
            ("mov o, m[2x]", "mov o, m[2]", "read as 2"),
            ("mov o, m[a3+1]", "mov o, m[1]", "not an index register"),
            ("mov o, m[q + 3]", "mov o, m[3]", "not an index register"),
            ("mov o, m[a0.y+2z]", "mov o, m[a0.y+2]", "read as 2"),
            ("mov o, c4[abc]", "mov o, c4", "read as 0"),
        ] {
            same_as(&body(odd), &body(canonical), says);
        }
    }

    /// `.constf`/`.consti` values go through `atof`/`atoi`: junk reads 0, `3.5` reads 3.
    #[test]
    fn constant_values_read_with_atof_and_atoi() {
        let prog = |c: &str| format!("{c}\n.out o position\n.proc main\n\tmov o, k\n\tend\n.end\n");
        same_as(
            &prog(".constf k(1, x, 2, 3)"),
            &prog(".constf k(1, 0, 2, 3)"),
            "read as 0",
        );
        same_as(
            &prog(".constf k(1, , 2, 3)"),
            &prog(".constf k(1, 0, 2, 3)"),
            "read as 0",
        );
        let iprog = |c: &str| {
            format!("{c}\n.out o position\n.proc main\n\tfor n\n\tnop\n\t.end\n\tend\n.end\n")
        };
        same_as(
            &iprog(".consti n(3.5, 1, abc, 3)"),
            &iprog(".consti n(3, 1, 0, 3)"),
            "read as 3",
        );
    }

    /// Uniform array sizes are read with `atoi`, and text after `]` in `.fvec` is never read.
    #[test]
    fn uniform_sizes_read_with_atoi() {
        let prog =
            |d: &str| format!("{d}\n.out o position\n.proc main\n\tmov o, a[3]\n\tend\n.end\n");
        same_as(&prog(".fvec a[4x]"), &prog(".fvec a[4]"), "read as 4");
        same_as(&prog(".fvec a[4]junk"), &prog(".fvec a[4]"), "is ignored");
        let arr = |n: &str| {
            format!(
                ".constfa t[{n}]\n.constfa (1, 2, 3, 4)\n.constfa (5, 6, 7, 8)\n.end\n.out o position\n.proc main\n\tmov o, t[1]\n\tend\n.end\n"
            )
        };
        same_as(&arr("2x"), &arr("2"), "read as 2");
        // Still errors in picasso too: a size that reads 0 or less, garbage after `]` of
        // `.constfa`.
        for bad in [".fvec a[x]", ".fvec a[0]"] {
            assert!(
                super::super::assemble(&[("t.v.pica", prog(bad).as_str())]).is_err(),
                "{bad}"
            );
        }
        let garbage = ".constfa t[2]x\n.constfa (1, 2, 3, 4)\n.end\n.proc main\n\tend\n.end\n";
        assert!(super::super::assemble(&[("t.v.pica", garbage)]).is_err());
    }

    /// `i4`-`i7` are accepted (warned) where picasso takes an integer uniform: `for i5` writes 5
    /// into the uniform-id field (bits 22-25), as picasso's `(regId - 0x80) << 22` does.
    #[test]
    fn integer_registers_i4_to_i7_encode_as_picasso_does() {
        let prog = |r: &str| {
            format!(".out o position\n.proc main\n\tfor {r}\n\tnop\n\t.end\n\tend\n.end\n")
        };
        let (_, w) = shbin(&prog("i5"));
        assert!(w.iter().any(|m| m.contains("`i5` does not exist")), "{w:?}");
        let word = |r: &str| match super::super::assemble(&[("t.v.pica", prog(r).as_str())]) {
            Ok(a) => a.program[0],
            Err(e) => panic!("{}", e.render()),
        };
        for n in 4..8u32 {
            assert_eq!(
                word(&format!("i{n}")),
                word(&format!("i{}", n - 4)) | (1 << 24),
                "i{n}"
            );
            assert_eq!((word(&format!("i{n}")) >> 22) & 0xF, n);
        }
        // `.alias` takes it too; i8 does not exist for picasso either.
        let (a, w) = shbin(
            ".alias cnt i6\n.out o position\n.proc main\n\tfor cnt\n\tnop\n\t.end\n\tend\n.end\n",
        );
        assert_eq!(a, shbin(&prog("i6")).0);
        assert!(!w.is_empty());
        assert!(super::super::assemble(&[("t.v.pica", prog("i8").as_str())]).is_err());
    }

    /// An unknown `setemit` flag is reported but ignored (picasso 2.7.1 prints an error and
    /// still writes its output); the known flags beside it still count.
    #[test]
    fn unknown_setemit_flags_are_ignored_like_picasso() {
        let gs = |s: &str| {
            format!(
                ".gsh point c0\n.out o position\n.proc main\n\t{s}\n\tmov o, v0\n\temit\n\tend\n.end\n"
            )
        };
        same_as(
            &gs("setemit 0, bogus"),
            &gs("setemit 0"),
            "unknown setemit flag `bogus`",
        );
        same_as(
            &gs("setemit 2, bogus prim"),
            &gs("setemit 2, prim"),
            "`bogus` is ignored",
        );
        same_as(
            &gs("setemit 1, inv what primitive"),
            &gs("setemit 1, inv prim"),
            "`what`",
        );
    }
}
