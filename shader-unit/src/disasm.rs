//! Disassembler: DVLB shader binaries to picasso 2.7 assembly, plus a raw debugging listing.
//!
//! Stage: tooling (no pipeline stage). Inputs: a parsed [`Dvlb`] (program words, operand
//! descriptors, DVLE tables). Outputs: text. Registers read: none. Instructions are formatted
//! from the typed IR of [`crate::decode`] ([`Instr`]); this module never looks at instruction
//! bits itself.
//!
//! # What the source looks like
//!
//! The output is picasso 2.7 syntax (devkitPro/picasso `Manual.md`) meant to re-assemble to the
//! same program words, operand descriptors and constant table:
//!
//! - DVLE tables become directives: `.gsh` (geometry DVLEs), `.entry`, `.in`, `.fvec`/`.ivec`/
//!   `.bool` (or `.alias` when picasso's allocator would not reproduce the registers),
//!   `.constf`/`.consti` (or `.setf`/`.seti` when picasso 2.x's top-down allocation would not
//!   reproduce the register), `.setb`, and `.out` with its semantic and mask.
//! - Code is wrapped in `.proc`/`.end`: the entry procedure from the DVLE's entry range, one
//!   procedure per CALL/CALLC/CALLU target range (picasso's `call` takes a procedure name and
//!   derives DST and NUM from it), and one enclosing procedure when some code belongs to none.
//! - IFU/IFC become `ifu bN` / `ifc cond` ... `.else` ... `.end`, LOOP becomes `for iN` ... `.end`
//!   (the only forms picasso accepts for them); JMPC/JMPU targets become labels, named from the
//!   DVLE label table or invented as `l_XXX` (hex word address).
//! - Operands: `-` negation, swizzles in picasso's shortest form (`.x` = `.xxxx`), destination
//!   masks, relative addressing `c4[a0.x]` / `name[aL+2]`, conditions `cmp.x && !cmp.y`.
//!   Registers named in the DVLE uniform/output tables are printed by name.
//!
//! - Register choices picasso's allocators must reproduce: uniforms are declared in register
//!   order with private `_unused_*` uniforms filling gaps; constants use `.constf`/`.consti` only
//!   where picasso 2.x's top-down allocation lands on the same register. picasso 2.7.1 rejects
//!   the name `v15` (its range check is off by one), so v15 is written `v14[1]`.
//!
//! Every instruction picasso cannot express (undefined opcodes, an empty write mask, flow control
//! whose ranges do not nest, ...) is printed as `nop` with an `UNEXPRESSIBLE` comment, so that
//! addresses still line up; instructions that picasso would encode differently get a `NOTE`
//! comment; and the header lists these problems, tagged `[code]` (program words, operand
//! descriptors, constants) or `[table]` (other DVLE fields). The operand-descriptor table is
//! checked by replaying picasso's allocation (`findOrAddOpdesc` with its lane masks and the MAD
//! slot swap): other producers (nihstro) allocate differently, and re-assembly then renumbers
//! descriptors. [`Listing::code_exact`] and [`Listing::exact`] summarise the notes; the
//! real-file tests check both claims against an actual re-assembly.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use thiserror::Error;

use crate::decode::{
    BinaryOp, CmpOp, Cond, CondOp, Dst, DstReg, Instr, OpDesc, Program, RelAddr, Src, SrcReg,
    UnaryOp, op,
};
use crate::dvlb::{
    Constant, ConstantValue, Dvlb, Dvle, GsMode, ShaderKind, UniformEntry, UniformRegister,
};
use crate::float::F24;

/// At most this many distinct DVLE entry ranges become procedure candidates (files from real
/// producers have one DVLE per source file, a handful at most). A DVLE whose range is not among
/// them enters the longest procedure starting at its entry point, as a DVLE whose range does not
/// nest does; this keeps the analysis of files that list thousands of DVLEs linear.
pub const MAX_ENTRY_RANGES: usize = 256;

/// Column at which the `; address` comment of an instruction line starts.
const COMMENT_COLUMN: usize = 44;

/// picasso refuses more than this many instructions in a vertex-shader source file
/// (`MAX_VSH_SIZE`).
const PICASSO_MAX_VSH_WORDS: usize = 512;

/// A disassembled DVLE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listing {
    /// The picasso source text.
    pub text: String,
    /// For each program word (index = address), the 0-based line of `text` that shows it.
    pub address_lines: Vec<usize>,
    /// Problems for re-assembly, one sentence each (also written into the header of `text`).
    pub notes: Vec<String>,
    /// True when assembling `text` with picasso 2.7.1 should reproduce the program words,
    /// operand descriptors and constant table (no note concerns them).
    pub code_exact: bool,
    /// True when no note at all was raised: the DVLE header fields and tables (entry range,
    /// masks, uniform and output tables) should come out the same too.
    pub exact: bool,
}

/// Why a disassembly could not be produced.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DisasmError {
    /// The requested DVLE does not exist.
    #[error("DVLE {index} does not exist (the file has {count})")]
    NoSuchDvle {
        /// The requested index.
        index: usize,
        /// Number of DVLEs in the file.
        count: usize,
    },
}

/// Disassembles DVLE `dvle` (its directives plus the whole shared program) to picasso source.
pub fn disassemble(dvlb: &Dvlb, dvle: usize) -> Result<String, DisasmError> {
    disassemble_listing(dvlb, dvle).map(|l| l.text)
}

/// Like [`disassemble`], with the address-to-line map and the re-assembly notes.
pub fn disassemble_listing(dvlb: &Dvlb, dvle: usize) -> Result<Listing, DisasmError> {
    let count = dvlb.dvles.len();
    let exe = dvlb
        .dvles
        .get(dvle)
        .ok_or(DisasmError::NoSuchDvle { index: dvle, count })?;
    let analysis = Analysis::new(dvlb, Some(dvle));
    let mut out = FileWriter::new(&analysis, exe, dvle, count);
    out.header(dvlb);
    out.directives();
    out.code();
    Ok(out.finish())
}

/// Disassembles every DVLE of the file.
///
/// With one DVLE this is [`disassemble`]`(dvlb, 0)`. With several it prints one section per
/// DVLE, each meant to be saved as its own source file and assembled together
/// (`picasso -o out.shbin file0.pica file1.pica ...`): the code goes into one file (the first
/// geometry DVLE's if the program uses SETEMIT, else DVLE 0's), the other files hold only their
/// directives and an `.entry` naming their procedure, because picasso shares procedures between
/// the files of one run.
pub fn disassemble_all(dvlb: &Dvlb) -> String {
    let mut out = Vec::new();
    // ok: writing into a Vec cannot fail.
    let _ = disassemble_all_to(dvlb, &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// [`disassemble_all`], written to `out` DVLE by DVLE (memory use does not grow with the number
/// of DVLEs; the text is identical).
pub fn disassemble_all_to(dvlb: &Dvlb, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    let count = dvlb.dvles.len();
    if count == 0 {
        let analysis = Analysis::new(dvlb, None);
        writeln!(
            out,
            "; picaview disassembly: the file has no DVLE (no entry point)"
        )?;
        let empty = empty_dvle();
        let mut file = FileWriter::new(&analysis, &empty, 0, 0);
        file.code();
        return out.write_all(file.finish().text.as_bytes());
    }
    let analysis = Analysis::new(dvlb, None);
    let code_file = analysis.code_file(dvlb);
    let mut shared = UniformAlloc::default();
    for (index, exe) in dvlb.dvles.iter().enumerate() {
        let mut file = FileWriter::new(&analysis, exe, index, count);
        if count > 1 {
            writeln!(
                out,
                "; ======== file {index}: DVLE {index} ({}){} ========",
                kind_name(exe.kind),
                if index == code_file {
                    ", holds the code"
                } else {
                    ""
                }
            )?;
        }
        file.header(dvlb);
        file.directives_with(&mut shared);
        if index == code_file {
            file.code();
        } else {
            file.entry_only();
        }
        out.write_all(file.finish().text.as_bytes())?;
        if index + 1 < count {
            out.write_all(b"\n")?;
        }
    }
    Ok(())
}

/// A raw listing for debugging: every word with its address, its operand descriptor and a
/// one-line rendering, followed by the operand-descriptor table.
pub fn raw_listing(dvlb: &Dvlb) -> String {
    let p = &dvlb.dvlp;
    let descs = dvlb.operand_descriptors();
    let program = Program::new(&p.code, &descs);
    let mut s = String::new();
    let code_at = u64::from(p.offset) + u64::from(p.layout.code_offset);
    let op_at = u64::from(p.offset) + u64::from(p.layout.opdesc_offset);
    let _ = writeln!(
        s,
        "; DVLP at 0x{:X}: {} program words at 0x{code_at:X}, {} operand descriptors at 0x{op_at:X}",
        p.offset,
        p.code.len(),
        p.opdescs.len()
    );
    for (i, e) in dvlb.dvles.iter().enumerate() {
        let _ = writeln!(
            s,
            "; DVLE {i} at 0x{:X}: {}, entry 0x{:03X}..0x{:03X}",
            e.offset,
            kind_name(e.kind),
            e.main_start,
            e.main_end
        );
    }
    s.push_str("; addr  word      desc  opdesc    instruction\n");
    for (addr, (&word, instr)) in p.code.iter().zip(program.instrs()).enumerate() {
        let desc = instr_desc_index(instr);
        let (d, od) = match desc {
            Some(i) => {
                let dw = descs
                    .get(usize::from(i))
                    .map_or("--------".to_string(), |w| format!("{w:08X}"));
                (format!("{i:02X}"), dw)
            }
            None => ("--".to_string(), "--------".to_string()),
        };
        let _ = writeln!(
            s,
            "  {addr:03X}   {word:08X}  {d}    {od}  {}",
            instruction_text(instr)
        );
    }
    if p.code.len() > program.len() {
        let _ = writeln!(
            s,
            "; {} words beyond the 4096 addressable ones are not shown",
            p.code.len() - program.len()
        );
    }
    s.push_str(
        "; operand descriptors: index  descriptor  extra     mask  src1      src2      src3\n",
    );
    for (i, e) in p.opdescs.iter().enumerate() {
        let d = OpDesc(e.descriptor);
        let src = |n: u8| {
            let (sw, neg) = d.source(n);
            format!("{}{}", if neg { "-" } else { "" }, swizzle_letters(sw))
        };
        let _ = writeln!(
            s,
            ";   {i:02X}  {:08X}  {:08X}  {:<4}  {:<8}  {:<8}  {}",
            e.descriptor,
            e.extra,
            mask_letters(d.mask() as u8),
            src(1),
            src(2),
            src(3)
        );
    }
    s
}

/// One instruction as text without context: registers by number, flow targets as word
/// addresses (`call 0x010, 3`, `ifu b0, 0x008, 2`, `loop i0, 0x00C`). For debugger views; not
/// always valid picasso input.
pub fn instruction_text(instr: &Instr) -> String {
    let names = NoNames;
    let mut s = String::new();
    match *instr {
        Instr::Call { dst, num } => {
            let _ = write!(s, "call 0x{dst:03X}, {num}");
        }
        Instr::CallC { cond, dst, num } => {
            let _ = write!(s, "callc {}, 0x{dst:03X}, {num}", cond_text(cond));
        }
        Instr::CallU { b, dst, num } => {
            let _ = write!(s, "callu b{b}, 0x{dst:03X}, {num}");
        }
        Instr::IfU { b, dst, num } => {
            let _ = write!(s, "ifu b{b}, 0x{dst:03X}, {num}");
        }
        Instr::IfC { cond, dst, num } => {
            let _ = write!(s, "ifc {}, 0x{dst:03X}, {num}", cond_text(cond));
        }
        Instr::Loop { i, dst, .. } => {
            let _ = write!(s, "loop i{i}, 0x{dst:03X}");
        }
        Instr::JmpC { cond, dst } => {
            let _ = write!(s, "jmpc {}, 0x{dst:03X}", cond_text(cond));
        }
        Instr::JmpU { b, dst, invert } => {
            let _ = write!(s, "jmpu {}b{b}, 0x{dst:03X}", if invert { "!" } else { "" });
        }
        Instr::Unknown(w) => {
            let _ = write!(s, "unknown 0x{w:08X} (opcode 0x{:02X})", instr.opcode());
        }
        _ => match plain_instruction(instr, &names) {
            Ok(t) => s = t,
            Err(why) => {
                let _ = write!(s, "{} ({why})", instr.mnemonic());
            }
        },
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Operand formatting
// ---------------------------------------------------------------------------------------------

/// How registers are named: by number ([`NoNames`]) or by the DVLE's aliases ([`FileNames`]).
trait RegNames {
    /// Name for source register `reg` (a v or c register), if it has one: `(base name, index)`
    /// where `index` is the offset into an array alias (`None` for a plain alias).
    fn src_name(&self, reg: SrcReg) -> Option<(&str, Option<u32>)>;
    /// Name for output register `o{n}`.
    fn out_name(&self, n: u8) -> Option<&str>;
    /// Name for bool uniform `b{n}`.
    fn bool_name(&self, n: u8) -> Option<(&str, Option<u32>)>;
    /// Name for integer uniform `i{n}`.
    fn int_name(&self, n: u8) -> Option<(&str, Option<u32>)>;
}

struct NoNames;

impl RegNames for NoNames {
    fn src_name(&self, _: SrcReg) -> Option<(&str, Option<u32>)> {
        None
    }
    fn out_name(&self, _: u8) -> Option<&str> {
        None
    }
    fn bool_name(&self, _: u8) -> Option<(&str, Option<u32>)> {
        None
    }
    fn int_name(&self, _: u8) -> Option<(&str, Option<u32>)> {
        None
    }
}

const COMPONENTS: [char; 4] = ['x', 'y', 'z', 'w'];

/// All four lanes of a swizzle as letters.
fn swizzle_letters(sw: [u8; 4]) -> String {
    sw.iter().map(|&c| COMPONENTS[usize::from(c & 3)]).collect()
}

/// picasso's shortest spelling of a swizzle: empty for the identity, otherwise the lanes with
/// trailing repeats of the last lane dropped (picasso fills missing lanes with the last one).
fn swizzle_suffix(sw: [u8; 4]) -> String {
    if sw == [0, 1, 2, 3] {
        return String::new();
    }
    let mut n = 4;
    while n > 1 && sw[n - 1] == sw[n - 2] {
        n -= 1;
    }
    let letters: String = sw[..n]
        .iter()
        .map(|&c| COMPONENTS[usize::from(c & 3)])
        .collect();
    format!(".{letters}")
}

/// Write-mask letters in xyzw order (bit 3 = x … bit 0 = w).
fn mask_letters(mask: u8) -> String {
    (0..4)
        .filter(|i| mask & (8 >> i) != 0)
        .map(|i| COMPONENTS[i])
        .collect()
}

fn rel_name(rel: RelAddr) -> &'static str {
    match rel {
        RelAddr::None => "",
        RelAddr::A0X => "a0.x",
        RelAddr::A0Y => "a0.y",
        RelAddr::AL => "aL",
    }
}

/// `base` or `base[k]`, or for relative operands `base[rel]` / `base[rel+k]`.
fn indexed(base: &str, index: Option<u32>, rel: RelAddr) -> String {
    match (rel, index) {
        (RelAddr::None, None) => base.to_string(),
        (RelAddr::None, Some(k)) => format!("{base}[{k}]"),
        (r, None) | (r, Some(0)) => format!("{base}[{}]", rel_name(r)),
        (r, Some(k)) => format!("{base}[{}+{k}]", rel_name(r)),
    }
}

/// Formats a source operand. Errors name what picasso cannot express.
fn src_text(s: &Src, names: &dyn RegNames) -> Result<String, String> {
    if s.rel != RelAddr::None && !matches!(s.reg, SrcReg::Const(_)) {
        return Err("relative addressing on an input or temporary register".into());
    }
    let reg = match names.src_name(s.reg) {
        Some((base, index)) => indexed(base, index, s.rel),
        None => match s.reg {
            // picasso 2.7.1 rejects `v15` (its range check is `< 0x0F`) but accepts the
            // indexed spelling `v14[1]`, which names the same register.
            SrcReg::Input(15) => "v14[1]".to_string(),
            SrcReg::Input(n) => format!("v{n}"),
            SrcReg::Temp(n) => format!("r{n}"),
            SrcReg::Const(n) => indexed(&format!("c{n}"), None, s.rel),
        },
    };
    let neg = if s.negate { "-" } else { "" };
    Ok(format!("{neg}{reg}{}", swizzle_suffix(s.swizzle)))
}

/// Formats a destination operand with its write mask.
fn dst_text(d: &Dst, names: &dyn RegNames) -> Result<String, String> {
    if d.mask & 0xF == 0 {
        return Err("empty write mask".into());
    }
    let reg = match d.reg {
        DstReg::Output(n) => names
            .out_name(n)
            .map_or_else(|| format!("o{n}"), str::to_string),
        DstReg::Temp(n) => format!("r{n}"),
    };
    let mask = d.mask & 0xF;
    Ok(if mask == 0xF {
        reg
    } else {
        format!("{reg}.{}", mask_letters(mask))
    })
}

fn cmp_name(op: CmpOp) -> Result<&'static str, String> {
    Ok(match op {
        CmpOp::Eq => "eq",
        CmpOp::Ne => "ne",
        CmpOp::Lt => "lt",
        CmpOp::Le => "le",
        CmpOp::Gt => "gt",
        CmpOp::Ge => "ge",
        CmpOp::Unk6 | CmpOp::Unk7 => {
            return Err(format!("comparison code {} has no picasso name", op.raw()));
        }
    })
}

/// A condition in picasso syntax (`cmp.x`, `!cmp.y`, `cmp.x && !cmp.y`, `cmp.x || cmp.y`).
fn cond_text(c: Cond) -> String {
    let flag = |name: &str, r: bool| format!("{}{name}", if r { "" } else { "!" });
    match c.op {
        CondOp::X => flag("cmp.x", c.ref_x),
        CondOp::Y => flag("cmp.y", c.ref_y),
        CondOp::And => format!("{} && {}", flag("cmp.x", c.ref_x), flag("cmp.y", c.ref_y)),
        CondOp::Or => format!("{} || {}", flag("cmp.x", c.ref_x), flag("cmp.y", c.ref_y)),
    }
}

fn bool_reg(n: u8, names: &dyn RegNames) -> String {
    names
        .bool_name(n)
        .map_or_else(|| format!("b{n}"), |(b, i)| indexed(b, i, RelAddr::None))
}

fn int_reg(n: u8, names: &dyn RegNames) -> String {
    names
        .int_name(n)
        .map_or_else(|| format!("i{n}"), |(b, i)| indexed(b, i, RelAddr::None))
}

/// Formats every instruction that needs no flow-control context.
fn plain_instruction(instr: &Instr, names: &dyn RegNames) -> Result<String, String> {
    let m = instr.mnemonic();
    Ok(match instr {
        Instr::Binary {
            dst, src1, src2, ..
        } => format!(
            "{m} {}, {}, {}",
            dst_text(dst, names)?,
            src_text(src1, names)?,
            src_text(src2, names)?
        ),
        Instr::Unary { dst, src, .. } => {
            format!("{m} {}, {}", dst_text(dst, names)?, src_text(src, names)?)
        }
        Instr::Mova { src, mask, .. } => {
            let target = match (mask & 8 != 0, mask & 4 != 0) {
                (true, true) => "a0.xy",
                (true, false) => "a0.x",
                (false, true) => "a0.y",
                (false, false) => return Err("MOVA with neither x nor y in its mask".into()),
            };
            format!("{m} {target}, {}", src_text(src, names)?)
        }
        Instr::Cmp {
            src1,
            src2,
            op_x,
            op_y,
            ..
        } => format!(
            "{m} {}, {}, {}, {}",
            src_text(src1, names)?,
            cmp_name(*op_x)?,
            cmp_name(*op_y)?,
            src_text(src2, names)?
        ),
        Instr::Mad {
            dst,
            src1,
            src2,
            src3,
            ..
        } => format!(
            "{m} {}, {}, {}, {}",
            dst_text(dst, names)?,
            src_text(src1, names)?,
            src_text(src2, names)?,
            src_text(src3, names)?
        ),
        Instr::Break | Instr::Nop | Instr::End | Instr::Emit => m.to_string(),
        Instr::BreakC { cond } => format!("{m} {}", cond_text(*cond)),
        Instr::SetEmit {
            vertex_id,
            prim_emit,
            winding,
        } => {
            if *vertex_id > 2 {
                return Err(format!(
                    "SETEMIT vertex id {vertex_id} (picasso accepts 0-2)"
                ));
            }
            let mut s = format!("{m} {vertex_id}");
            match (*prim_emit, *winding) {
                (false, false) => {}
                (true, false) => s.push_str(", prim"),
                (false, true) => s.push_str(", inv"),
                (true, true) => s.push_str(", prim inv"),
            }
            s
        }
        Instr::Unknown(w) => {
            return Err(format!(
                "undefined opcode 0x{:02X} (word 0x{w:08X})",
                instr.opcode()
            ));
        }
        Instr::Call { .. }
        | Instr::CallC { .. }
        | Instr::CallU { .. }
        | Instr::IfU { .. }
        | Instr::IfC { .. }
        | Instr::Loop { .. }
        | Instr::JmpC { .. }
        | Instr::JmpU { .. } => return Err("flow control needs its target context".into()),
    })
}

fn instr_desc_index(instr: &Instr) -> Option<u8> {
    match *instr {
        Instr::Binary { desc, .. }
        | Instr::Unary { desc, .. }
        | Instr::Mova { desc, .. }
        | Instr::Cmp { desc, .. }
        | Instr::Mad { desc, .. } => Some(desc),
        _ => None,
    }
}

fn kind_name(kind: ShaderKind) -> String {
    match kind {
        ShaderKind::Vertex => "vertex shader".into(),
        ShaderKind::Geometry => "geometry shader".into(),
        ShaderKind::Other(b) => format!("shader type 0x{b:02X}"),
    }
}

// ---------------------------------------------------------------------------------------------
// Float constants
// ---------------------------------------------------------------------------------------------

/// picasso 2.7.1's `f32tof24` (`picasso_frontend.cpp`): mantissa truncated, exponent rebias,
/// underflow to ±0, overflow (and inf/NaN) to ±inf.
fn picasso_f32_to_f24(f: f32) -> u32 {
    let i = f.to_bits();
    let mantissa = (i & 0x7F_FFFF) >> 7;
    let exponent = ((i >> 23) & 0xFF) as i32 - 127 + 63;
    let sign = i >> 31;
    if exponent < 0 {
        sign << 23
    } else if exponent > 0x7F {
        (sign << 23) | (0x7F << 16)
    } else {
        (sign << 23) | ((exponent as u32) << 16) | mantissa
    }
}

/// What picasso makes of a constant written as `text`: C `atof` (a correctly rounded double),
/// converted to `float`, then [`picasso_f32_to_f24`].
fn picasso_reads(text: &str) -> Option<u32> {
    let v: f64 = match text {
        "inf" => f64::INFINITY,
        "-inf" => f64::NEG_INFINITY,
        _ => text.parse().ok()?,
    };
    Some(picasso_f32_to_f24(v as f32))
}

/// Text for one float24 constant component such that picasso reads back the same bits, or the
/// closest text plus `false` when no text can (NaN: picasso turns every NaN into infinity).
fn f24_text(raw: u32) -> (String, bool) {
    let bits = raw & 0xFF_FFFF;
    let value = F24::from_bits(bits).to_f32();
    if value.is_nan() {
        return ("nan".into(), false);
    }
    let shortest = format!("{value:?}");
    if picasso_reads(&shortest) == Some(bits) {
        return (shortest, true);
    }
    // The middle of the run of f32 values that truncate to these f24 bits survives any rounding
    // of the decimal text.
    let mid = f32::from_bits(value.to_bits() | 0x40);
    let text = format!("{mid:?}");
    let ok = picasso_reads(&text) == Some(bits);
    (text, ok)
}

// ---------------------------------------------------------------------------------------------
// Program analysis: procedures, blocks, labels
// ---------------------------------------------------------------------------------------------

/// A half-open word range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Range {
    start: u32,
    end: u32,
}

impl Range {
    fn contains_range(self, o: Range) -> bool {
        self.start <= o.start && o.end <= self.end
    }
    fn disjoint(self, o: Range) -> bool {
        self.end <= o.start || o.end <= self.start
    }
    fn len(self) -> u32 {
        self.end - self.start
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockKind {
    /// A `.proc` (index into `Analysis::procs`).
    Proc(usize),
    /// `ifu`/`ifc` at `outer.start`: then `[start+1, dst)`, else `[dst, outer.end)`.
    If { dst: u32 },
    /// `for` at `outer.start`: body `[start+1, outer.end)`.
    Loop,
}

#[derive(Clone, Copy, Debug)]
struct Block {
    outer: Range,
    kind: BlockKind,
}

impl Block {
    /// Whether `child` can sit inside `self` as picasso nests blocks.
    fn holds(&self, child: &Block) -> bool {
        match self.kind {
            BlockKind::Proc(_) => self.outer.contains_range(child.outer),
            BlockKind::If { dst } => {
                let then = Range {
                    start: self.outer.start + 1,
                    end: dst,
                };
                let els = Range {
                    start: dst,
                    end: self.outer.end,
                };
                then.contains_range(child.outer) || els.contains_range(child.outer)
            }
            BlockKind::Loop => Range {
                start: self.outer.start + 1,
                end: self.outer.end,
            }
            .contains_range(child.outer),
        }
    }

    fn compatible(&self, other: &Block) -> bool {
        self.outer.disjoint(other.outer) || self.holds(other) || other.holds(self)
    }
}

#[derive(Clone, Debug)]
struct ProcInfo {
    range: Range,
    name: String,
}

/// Program-level facts shared by every DVLE listing of one file.
struct Analysis {
    program: Program,
    /// Words beyond the 4096 addressable ones (not disassembled).
    dropped_words: usize,
    procs: Vec<ProcInfo>,
    /// Procedures opening at each address, outermost first.
    procs_at: BTreeMap<u32, Vec<usize>>,
    /// Structured IF/LOOP instruction addresses.
    structured: HashSet<u32>,
    /// Name of the procedure each DVLE enters, by DVLE index.
    entry_proc: Vec<Option<usize>>,
    /// Labels to print at each address (in order).
    labels_at: BTreeMap<u32, Vec<String>>,
    /// Label name used for a jump target.
    jump_label: HashMap<u32, String>,
    /// Whether any word is a SETEMIT (the code must then go into a geometry-shader file).
    uses_setemit: bool,
    /// Empty entry procedures (`.proc main` / `.end` with nothing in between): address -> name.
    empty_procs: BTreeMap<u32, String>,
    /// The empty entry procedure's address each DVLE enters, by DVLE index.
    empty_entry: Vec<Option<u32>>,
}

/// A valid picasso identifier: C identifier characters plus `$`, not starting with a digit.
fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' || c == '$' => {}
        _ => return false,
    }
    chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// picasso's `.alias` refuses names that start like a register: `o`, `v`, `r`, `c`, `i` or `b`
/// followed by a digit.
fn looks_like_register(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 2
        && matches!(
            b[0].to_ascii_lowercase(),
            b'o' | b'v' | b'r' | b'c' | b'i' | b'b'
        )
        && b[1].is_ascii_digit()
}

/// A set of names in use, handing out fresh ones in amortised constant time (a file with
/// a million uniforms of the same name must not search `u_2`, `u_3`, ... from the start each
/// time).
#[derive(Default)]
struct Names {
    used: HashSet<String>,
    /// Next suffix to try for each base name.
    next: HashMap<String, u32>,
}

impl Names {
    fn contains(&self, name: &str) -> bool {
        self.used.contains(name)
    }

    fn insert(&mut self, name: String) -> bool {
        self.used.insert(name)
    }
}

impl FromIterator<String> for Names {
    fn from_iter<I: IntoIterator<Item = String>>(iter: I) -> Self {
        Names {
            used: iter.into_iter().collect(),
            next: HashMap::new(),
        }
    }
}

/// Returns `base`, or `base_2`, `base_3`, ... — the first not in `used`; records it.
fn unique(base: &str, used: &mut Names) -> String {
    if used.insert(base.to_string()) {
        return base.to_string();
    }
    let mut n = used.next.get(base).copied().unwrap_or(2);
    loop {
        let candidate = format!("{base}_{n}");
        n += 1;
        if used.insert(candidate.clone()) {
            used.next.insert(base.to_string(), n);
            return candidate;
        }
    }
}

/// At most this many re-assembly notes are listed per DVLE; the rest are counted.
pub const MAX_NOTES: usize = 1000;

impl Analysis {
    /// Analyses the program; `listed` is the DVLE whose entry procedure is called `main`.
    fn new(dvlb: &Dvlb, listed: Option<usize>) -> Analysis {
        let descs = dvlb.operand_descriptors();
        let program = Program::new(&dvlb.dvlp.code, &descs);
        let dropped_words = dvlb.dvlp.code.len().saturating_sub(program.len());
        let len = program.len() as u32;
        let instrs = program.instrs();

        // Label-table names by address (all DVLEs, file order, valid identifiers only).
        let mut table_labels: BTreeMap<u32, Vec<String>> = BTreeMap::new();
        let mut seen_labels = HashSet::new();
        for e in &dvlb.dvles {
            for l in &e.labels {
                if l.location <= len && is_identifier(&l.name) && seen_labels.insert(l.name.clone())
                {
                    table_labels
                        .entry(l.location)
                        .or_default()
                        .push(l.name.clone());
                }
            }
        }

        // Candidate blocks in priority order.
        let mut candidates: Vec<(Block, ProcOrigin)> = Vec::new();
        let dvle_order: Vec<usize> = match listed {
            Some(l) => std::iter::once(l)
                .chain((0..dvlb.dvles.len()).filter(|&i| i != l))
                .collect(),
            None => (0..dvlb.dvles.len()).collect(),
        };
        // An empty entry procedure: picasso writes start == end for `.proc main` / `.end` with
        // nothing in between. nihstro writes end 0, so start == end == 0 with code present is
        // read as nihstro's "main at 0" instead.
        let empty_entry_at = |e: &Dvle| -> Option<u32> {
            (e.main_start == e.main_end
                && e.main_start <= len
                && (e.main_start == len || e.main_start > 0))
                .then_some(e.main_start)
        };
        let empty_entry: Vec<Option<u32>> = dvlb.dvles.iter().map(empty_entry_at).collect();
        let entry_range = |e: &Dvle| -> Option<(Range, bool)> {
            if e.main_start >= len || empty_entry_at(e).is_some() {
                return None;
            }
            if e.main_end > e.main_start && e.main_end <= len {
                Some((
                    Range {
                        start: e.main_start,
                        end: e.main_end,
                    },
                    true,
                ))
            } else {
                Some((
                    Range {
                        start: e.main_start,
                        end: len,
                    },
                    false,
                ))
            }
        };
        let proc_block = |r: Range| Block {
            outer: r,
            kind: BlockKind::Proc(usize::MAX),
        };
        // Entry ranges: one candidate per distinct range (DVLEs sharing a range share its
        // procedure below), at most MAX_ENTRY_RANGES of them (see its doc).
        let mut entry_ranges: HashSet<Range> = HashSet::new();
        let mut take_entry = |r: Range| {
            entry_ranges.contains(&r)
                || (entry_ranges.len() < MAX_ENTRY_RANGES && entry_ranges.insert(r))
        };
        let mut entry_candidates: [Vec<(Block, ProcOrigin)>; 2] = [Vec::new(), Vec::new()];
        for &d in &dvle_order {
            if let Some((r, exact)) = dvlb.dvles.get(d).and_then(entry_range)
                && take_entry(r)
            {
                entry_candidates[usize::from(!exact)].push((proc_block(r), ProcOrigin::Entry(d)));
            }
        }
        let [exact_entries, open_entries] = entry_candidates;
        candidates.extend(exact_entries);
        for instr in instrs {
            if let Instr::Call { dst, num }
            | Instr::CallC { dst, num, .. }
            | Instr::CallU { dst, num, .. } = *instr
            {
                let r = Range {
                    start: u32::from(dst),
                    end: u32::from(dst) + u32::from(num),
                };
                if num > 0 && r.end <= len {
                    candidates.push((proc_block(r), ProcOrigin::Call));
                }
            }
        }
        candidates.extend(open_entries);
        for (pc, instr) in instrs.iter().enumerate() {
            let pc = pc as u32;
            match *instr {
                Instr::IfU { dst, num, .. } | Instr::IfC { dst, num, .. } => {
                    let dst = u32::from(dst);
                    let end = dst + u32::from(num);
                    if dst > pc && end <= len {
                        let block = Block {
                            outer: Range { start: pc, end },
                            kind: BlockKind::If { dst },
                        };
                        candidates.push((block, ProcOrigin::None));
                    }
                }
                Instr::Loop { dst, .. } => {
                    let dst = u32::from(dst);
                    if dst >= pc && dst < len {
                        let block = Block {
                            outer: Range {
                                start: pc,
                                end: dst + 1,
                            },
                            kind: BlockKind::Loop,
                        };
                        candidates.push((block, ProcOrigin::None));
                    }
                }
                _ => {}
            }
        }

        // Greedy acceptance: a block is kept if it nests with every block kept so far.
        let mut blocks: Vec<Block> = Vec::new();
        let mut procs: Vec<ProcInfo> = Vec::new();
        let mut proc_by_range: HashMap<Range, usize> = HashMap::new();
        let mut proc_origins: Vec<Vec<ProcOrigin>> = Vec::new();
        let mut structured = HashSet::new();
        // Procedure ranges already refused: each distinct range is checked once.
        let mut refused: HashSet<Range> = HashSet::new();
        for (block, origin) in candidates {
            if let BlockKind::Proc(_) = block.kind {
                if let Some(&i) = proc_by_range.get(&block.outer) {
                    proc_origins[i].push(origin);
                    continue;
                }
                if refused.contains(&block.outer) {
                    continue;
                }
            }
            if !blocks.iter().all(|b| b.compatible(&block)) {
                if let BlockKind::Proc(_) = block.kind {
                    refused.insert(block.outer);
                }
                continue;
            }
            match block.kind {
                BlockKind::Proc(_) => {
                    let i = procs.len();
                    procs.push(ProcInfo {
                        range: block.outer,
                        name: String::new(),
                    });
                    proc_origins.push(vec![origin]);
                    proc_by_range.insert(block.outer, i);
                    blocks.push(Block {
                        outer: block.outer,
                        kind: BlockKind::Proc(i),
                    });
                }
                _ => {
                    structured.insert(block.outer.start);
                    blocks.push(block);
                }
            }
        }
        // Code outside every procedure: one procedure around the whole program holds it.
        let mut covered = vec![false; program.len()];
        for p in &procs {
            for c in covered
                .iter_mut()
                .take(p.range.end as usize)
                .skip(p.range.start as usize)
            {
                *c = true;
            }
        }
        if covered.iter().any(|c| !c) {
            let r = Range { start: 0, end: len };
            let i = procs.len();
            procs.push(ProcInfo {
                range: r,
                name: String::new(),
            });
            proc_origins.push(vec![ProcOrigin::Wrapper]);
            blocks.push(Block {
                outer: r,
                kind: BlockKind::Proc(i),
            });
        }

        // A DVLE whose entry range did not nest enters the longest procedure starting at its
        // entry point, if any. (Linear: one pass over the origins, one over the procedures.)
        let mut has_own = vec![false; dvlb.dvles.len()];
        for origins in &proc_origins {
            for o in origins {
                if let ProcOrigin::Entry(d) = o
                    && let Some(slot) = has_own.get_mut(*d)
                {
                    *slot = true;
                }
            }
        }
        let mut longest_at: HashMap<u32, usize> = HashMap::new();
        for (i, p) in procs.iter().enumerate() {
            let slot = longest_at.entry(p.range.start).or_insert(i);
            if procs[*slot].range.len() < p.range.len() {
                *slot = i;
            }
        }
        for (d, e) in dvlb.dvles.iter().enumerate() {
            if has_own.get(d).copied().unwrap_or(true) || empty_entry_at(e).is_some() {
                continue;
            }
            if let Some(&i) = longest_at.get(&e.main_start) {
                proc_origins[i].push(ProcOrigin::Entry(d));
            }
        }

        // Procedure names.
        let mut used = Names::default();
        let mut main_taken = false;
        let mut entry_proc = vec![None; dvlb.dvles.len()];
        for (i, origins) in proc_origins.iter().enumerate() {
            for o in origins {
                if let ProcOrigin::Entry(d) = o
                    && let Some(slot) = entry_proc.get_mut(*d)
                    && slot.is_none()
                {
                    *slot = Some(i);
                }
            }
        }
        // An empty entry procedure of the listed (first) DVLE is `main`.
        let mut empty_procs: BTreeMap<u32, String> = BTreeMap::new();
        if let Some(&first) = dvle_order.first()
            && let Some(Some(at)) = empty_entry.get(first)
        {
            empty_procs.insert(*at, unique("main", &mut used));
            main_taken = true;
        }
        // Entry procedures first so that the listed DVLE's gets `main`.
        let mut first_entry = vec![usize::MAX; procs.len()];
        for (pos, &d) in dvle_order.iter().enumerate() {
            if let Some(Some(i)) = entry_proc.get(d)
                && let Some(slot) = first_entry.get_mut(*i)
            {
                *slot = (*slot).min(pos);
            }
        }
        let mut order: Vec<usize> = (0..procs.len()).collect();
        order.sort_by_key(|&i| {
            (
                first_entry[i],
                procs[i].range.start,
                std::cmp::Reverse(procs[i].range.end),
            )
        });
        for i in order {
            let start = procs[i].range.start;
            let from_table = table_labels
                .get(&start)
                .and_then(|names| names.iter().find(|n| !used.contains(n)).cloned());
            let is_entry = proc_origins[i]
                .iter()
                .any(|o| matches!(o, ProcOrigin::Entry(_)));
            let name = match from_table {
                Some(n) => {
                    used.insert(n.clone());
                    n
                }
                None if is_entry && !main_taken => unique("main", &mut used),
                None => unique(&format!("proc_{start:03x}"), &mut used),
            };
            if name == "main" {
                main_taken = true;
            }
            procs[i].name = name;
        }

        for &d in &dvle_order {
            if let Some(Some(at)) = empty_entry.get(d)
                && !empty_procs.contains_key(at)
            {
                let name = unique(&format!("proc_{at:03x}"), &mut used);
                empty_procs.insert(*at, name);
            }
        }

        let mut procs_at: BTreeMap<u32, Vec<usize>> = BTreeMap::new();
        for (i, p) in procs.iter().enumerate() {
            procs_at.entry(p.range.start).or_default().push(i);
        }
        for list in procs_at.values_mut() {
            list.sort_by_key(|&i| std::cmp::Reverse(procs[i].range.end));
        }

        // Jump labels: the label table's name at the target, else `l_XXX`.
        let mut label_names: Names = table_labels.values().flatten().cloned().collect();
        let mut labels_at = table_labels.clone();
        let mut jump_label = HashMap::new();
        for instr in instrs {
            if let Instr::JmpC { dst, .. } | Instr::JmpU { dst, .. } = *instr {
                let t = u32::from(dst);
                if t > len || jump_label.contains_key(&t) {
                    continue;
                }
                let name = match table_labels.get(&t).and_then(|v| v.first()) {
                    Some(n) => n.clone(),
                    None => {
                        let n = unique(&format!("l_{t:03x}"), &mut label_names);
                        labels_at.entry(t).or_default().push(n.clone());
                        n
                    }
                };
                jump_label.insert(t, name);
            }
        }

        let uses_setemit = instrs.iter().any(|i| matches!(i, Instr::SetEmit { .. }));
        Analysis {
            program,
            dropped_words,
            procs,
            procs_at,
            structured,
            entry_proc,
            labels_at,
            jump_label,
            uses_setemit,
            empty_procs,
            empty_entry,
        }
    }

    /// Which DVLE's file of [`disassemble_all`] holds the code.
    fn code_file(&self, dvlb: &Dvlb) -> usize {
        let geometry = dvlb
            .dvles
            .iter()
            .position(|e| e.kind == ShaderKind::Geometry);
        match geometry {
            Some(i) if self.uses_setemit => i,
            _ => 0,
        }
    }

    /// The procedure whose range is exactly `[dst, dst+num)`, if it was accepted.
    fn call_proc(&self, dst: u16, num: u8) -> Option<&ProcInfo> {
        let r = Range {
            start: u32::from(dst),
            end: u32::from(dst) + u32::from(num),
        };
        self.procs.iter().find(|p| p.range == r)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ProcOrigin {
    Entry(usize),
    Call,
    Wrapper,
    None,
}

fn empty_dvle() -> Dvle {
    Dvle {
        offset: 0,
        version: 0,
        kind: ShaderKind::Vertex,
        merge_outmaps: 0,
        main_start: 0,
        main_end: 0,
        input_mask: 0,
        output_mask: 0,
        gs_mode: GsMode::Point,
        gs_fixed_start: 0,
        gs_variable_num: 0,
        gs_fixed_num: 0,
        layout: crate::dvlb::DvleLayout {
            constant_offset: 0,
            constant_count: 0,
            label_offset: 0,
            label_count: 0,
            output_offset: 0,
            output_count: 0,
            uniform_offset: 0,
            uniform_count: 0,
            symbol_offset: 0,
            symbol_size: 0,
        },
        constants: Vec::new(),
        labels: Vec::new(),
        outputs: Vec::new(),
        uniforms: Vec::new(),
        symbols: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Per-DVLE names and directives
// ---------------------------------------------------------------------------------------------

/// Register names of one source file (picasso aliases are per file).
#[derive(Default)]
struct FileNames {
    /// Name per unified uniform register (0x00-0x0F v, 0x10-0x6F c, 0x70-0x73 i, 0x78-0x87 b),
    /// as (alias, index into the array or None).
    unified: HashMap<u16, (String, Option<u32>)>,
    outputs: HashMap<u8, String>,
}

impl RegNames for FileNames {
    fn src_name(&self, reg: SrcReg) -> Option<(&str, Option<u32>)> {
        let key = match reg {
            SrcReg::Input(n) => u16::from(n),
            SrcReg::Const(n) => 0x10 + u16::from(n),
            SrcReg::Temp(_) => return None,
        };
        self.unified.get(&key).map(|(s, i)| (s.as_str(), *i))
    }
    fn out_name(&self, n: u8) -> Option<&str> {
        self.outputs.get(&n).map(String::as_str)
    }
    fn bool_name(&self, n: u8) -> Option<(&str, Option<u32>)> {
        self.unified
            .get(&(0x78 + u16::from(n)))
            .map(|(s, i)| (s.as_str(), *i))
    }
    fn int_name(&self, n: u8) -> Option<(&str, Option<u32>)> {
        self.unified
            .get(&(0x70 + u16::from(n)))
            .map(|(s, i)| (s.as_str(), *i))
    }
}

/// The alias for a uniform-table name: picasso stores `$` as `.` in the table, so `.` goes back
/// to `$`; the result must be an identifier that does not look like a register.
fn alias_name(table_name: &str) -> Option<String> {
    let n = table_name.replace('.', "$");
    (is_identifier(&n) && !looks_like_register(&n)).then_some(n)
}

fn semantic_alias(entry_semantic: &str) -> String {
    format!("out_{entry_semantic}")
}

/// picasso's vertex-shader uniform allocator, which is shared by all source files of one run
/// (`unifAlloc[0]` and `g_uniformTable` in `picasso_assembler.cpp`): next free registers and the
/// uniforms declared so far. Geometry shaders with a `.gsh` mode get a fresh one per file.
#[derive(Clone, Debug)]
struct UniformAlloc {
    /// Next free register per class, unified index space (c0 = 0x10, i0 = 0x70, b0 = 0x78).
    next: [u16; 3],
    /// Uniforms declared in earlier files: name -> (class, first register, last register).
    declared: HashMap<String, (usize, u16, u16)>,
}

impl UniformAlloc {
    fn starting_at(fvec: u16) -> Self {
        UniformAlloc {
            next: [fvec, 0x70, 0x78],
            declared: HashMap::new(),
        }
    }
}

impl Default for UniformAlloc {
    fn default() -> Self {
        Self::starting_at(0x10)
    }
}

/// Writes one picasso source file.
struct FileWriter<'a> {
    a: &'a Analysis,
    dvle: &'a Dvle,
    index: usize,
    count: usize,
    names: FileNames,
    lines: Vec<String>,
    /// Re-assembly notes (the first [`MAX_NOTES`]); `true` marks notes about code,
    /// descriptors or constants.
    notes: Vec<(bool, String)>,
    /// The notes kept, for de-duplication.
    note_set: HashSet<String>,
    /// Notes not kept (beyond [`MAX_NOTES`]; may repeat each other).
    notes_dropped: usize,
    /// Whether any note (kept or not) is about code, descriptors or constants.
    any_code_note: bool,
    address_lines: Vec<usize>,
    header_at: usize,
    aliases_used: Names,
}

impl<'a> FileWriter<'a> {
    fn new(a: &'a Analysis, dvle: &'a Dvle, index: usize, count: usize) -> Self {
        FileWriter {
            a,
            dvle,
            index,
            count,
            names: FileNames::default(),
            lines: Vec::new(),
            notes: Vec::new(),
            note_set: HashSet::new(),
            notes_dropped: 0,
            any_code_note: false,
            // Filled by `code()`; files without code (the other DVLEs of `disassemble_all`)
            // never allocate it.
            address_lines: Vec::new(),
            header_at: 0,
            aliases_used: Names::default(),
        }
    }

    fn line(&mut self, s: impl Into<String>) {
        self.lines.push(s.into());
    }

    /// A note about a DVLE table or header field re-assembly would not reproduce.
    fn note(&mut self, s: impl Into<String>) {
        self.add_note(false, s.into());
    }

    /// A note about program words, operand descriptors or constants.
    fn note_code(&mut self, s: impl Into<String>) {
        self.add_note(true, s.into());
    }

    fn add_note(&mut self, code: bool, s: String) {
        if self.note_set.contains(&s) {
            return;
        }
        self.any_code_note |= code;
        if self.notes.len() < MAX_NOTES {
            self.note_set.insert(s.clone());
            self.notes.push((code, s));
        } else {
            self.notes_dropped += 1;
        }
    }

    fn header(&mut self, dvlb: &Dvlb) {
        let e = self.dvle;
        self.line(format!(
            "; picaview disassembly of DVLE {} of {} ({})",
            self.index,
            self.count,
            kind_name(e.kind)
        ));
        self.line(format!(
            "; program: {} words, {} operand descriptors; DVLE version 0x{:04X}, entry 0x{:03X}..0x{:03X}",
            dvlb.dvlp.code.len(),
            dvlb.dvlp.opdescs.len(),
            e.version,
            e.main_start,
            e.main_end
        ));
        self.line(format!(
            "; input mask 0x{:04X}, output mask 0x{:04X}",
            e.input_mask, e.output_mask
        ));
        if e.kind == ShaderKind::Geometry || e.gs_mode != GsMode::Point {
            self.line(format!(
                "; geometry: mode {:?}, fixed start c{}, variable count {}, fixed count {}, merge outmaps {}",
                e.gs_mode, e.gs_fixed_start, e.gs_variable_num, e.gs_fixed_num, e.merge_outmaps
            ));
        }
        self.header_at = self.lines.len();
    }

    /// All directives of the DVLE, for a stand-alone file.
    fn directives(&mut self) {
        self.directives_with(&mut UniformAlloc::default());
    }

    /// All directives of the DVLE; `shared` is the vertex-shader allocator state left by the
    /// earlier files of the same picasso run.
    fn directives_with(&mut self, shared: &mut UniformAlloc) {
        let e = self.dvle;
        let mut fvec_start: u16 = 0x10;
        if e.kind == ShaderKind::Geometry {
            fvec_start = self.gsh_directive();
        } else if e.gs_mode != GsMode::Point || e.merge_outmaps != 0 {
            self.note("vertex-shader DVLE with geometry-shader fields set (picasso writes 0)");
        }
        if e.kind != ShaderKind::Vertex && e.kind != ShaderKind::Geometry {
            self.note(format!(
                "shader type byte 0x{:02X} cannot be written by picasso",
                e.kind.to_raw()
            ));
        }
        if let Some(Some(p)) = self.a.entry_proc.get(self.index) {
            let name = self.a.procs[*p].name.clone();
            if name != "main" {
                self.line(format!(".entry {name}"));
            }
            let r = self.a.procs[*p].range;
            if (r.start, r.end) != (e.main_start, e.main_end) {
                self.note(format!(
                    "entry range 0x{:03X}..0x{:03X} is written as procedure `{name}` 0x{:03X}..0x{:03X}",
                    e.main_start, e.main_end, r.start, r.end
                ));
            }
        } else if let Some(Some(at)) = self.a.empty_entry.get(self.index) {
            let name = self.a.empty_procs.get(at).cloned().unwrap_or_default();
            if name != "main" {
                self.line(format!(".entry {name}"));
            }
        } else if (e.main_start as usize) < self.a.program.len() {
            self.note(format!(
                "no procedure starts at entry point 0x{:03X}; no `.entry` can express it",
                e.main_start
            ));
        } else {
            self.note(format!(
                "entry point 0x{:03X} is not inside the program; no `.entry` can express it",
                e.main_start
            ));
        }
        let (fvec_next, ivec_next) = if self.dvle.kind == ShaderKind::Geometry {
            self.uniform_directives(&mut UniformAlloc::starting_at(fvec_start))
        } else {
            self.uniform_directives(shared)
        };
        self.constant_directives(fvec_next, ivec_next);
        self.output_directives();
    }

    /// `.gsh mode firstReg ...`; returns the first float uniform (unified index) picasso will
    /// allocate from.
    fn gsh_directive(&mut self) -> u16 {
        let e = self.dvle;
        let lowest_fvec = e
            .uniforms
            .iter()
            .filter_map(|u| match u.start_register() {
                UniformRegister::Float(n) => Some(n),
                _ => None,
            })
            .min();
        let mut first = lowest_fvec.unwrap_or(0);
        if e.gs_mode == GsMode::Fixed && first <= e.gs_fixed_start {
            first = e.gs_fixed_start.saturating_add(1).min(95);
        }
        match e.gs_mode {
            GsMode::Point => self.line(format!(".gsh point c{first}")),
            GsMode::Variable => self.line(format!(".gsh variable c{first} {}", e.gs_variable_num)),
            GsMode::Fixed => {
                if e.gs_fixed_start > 95 {
                    self.note(format!(
                        "fixed-mode array start c{} is out of range",
                        e.gs_fixed_start
                    ));
                }
                self.line(format!(
                    ".gsh fixed c{first} c{} {}",
                    e.gs_fixed_start.min(95),
                    e.gs_fixed_num
                ));
            }
            GsMode::Other(m) => {
                self.note(format!(
                    "geometry-shader mode {m} has no picasso name; written as point"
                ));
                self.line(format!(".gsh point c{first}"));
            }
        }
        if e.gs_mode != GsMode::Variable && e.gs_variable_num != 0 {
            self.note("variable-mode vertex count set outside variable mode");
        }
        if e.gs_mode != GsMode::Fixed && (e.gs_fixed_start != 0 || e.gs_fixed_num != 0) {
            self.note("fixed-mode fields set outside fixed mode");
        }
        let has_dummy = e
            .outputs
            .iter()
            .any(|o| o.semantic == crate::dvlb::OutputSemantic::Dummy);
        if (e.merge_outmaps != 0) != has_dummy {
            self.note("merge-outmaps flag does not match the dummy outputs (picasso derives it from them)");
        }
        0x10 + u16::from(first)
    }

    /// Emits `.in`, `.fvec`, `.ivec`, `.bool` (and `.alias` fallbacks) in register order, which
    /// is the order of picasso's sorted uniform table. Returns the next float and integer
    /// uniforms picasso's allocator would hand out (unified index space).
    fn uniform_directives(&mut self, alloc: &mut UniformAlloc) -> (u16, u16) {
        let mut entries: Vec<&UniformEntry> = self.dvle.uniforms.iter().collect();
        entries.sort_by_key(|u| u.start);
        let mut input_mask = 0u16;
        // Private gap names must not repeat across the files of one run (picasso would find
        // the earlier one in its global table and reuse its registers).
        let gap_prefix = if self.index == 0 {
            "_unused_".to_string()
        } else {
            format!("_unused{}_", self.index)
        };
        for u in entries {
            let Some(name) = alias_name(&u.name) else {
                self.note(format!(
                    "uniform name {:?} is not a picasso identifier; it is dropped",
                    u.name
                ));
                self.line(format!(
                    "; uniform {:?} at unified register 0x{:02X}..0x{:02X}",
                    u.name, u.start, u.end
                ));
                continue;
            };
            if u.is_empty() {
                self.note(format!("uniform `{name}` has end < start"));
                continue;
            }
            let name = if self.aliases_used.contains(&name) {
                self.note(format!("uniform name `{name}` appears twice"));
                unique(&name, &mut self.aliases_used)
            } else {
                self.aliases_used.insert(name.clone());
                name
            };
            let len = u.len();
            let array = if len > 1 {
                format!("{name}[{len}]")
            } else {
                name.clone()
            };
            let (directive, next, base, prefix, class_end) = match u.start_register() {
                UniformRegister::Input(n) => {
                    if len != 1 || u.end > 0x0F {
                        self.note(format!("input `{name}` spans several registers"));
                    }
                    let reg = if n == 15 {
                        "v14[1]".to_string()
                    } else {
                        format!("v{n}")
                    };
                    self.line(format!(".in {name} {reg}"));
                    input_mask |= 1 << n;
                    self.register_names(&name, u);
                    continue;
                }
                UniformRegister::Float(_) => (".fvec", 0usize, 0x10u16, "c", 0x70u16),
                UniformRegister::Int(_) => (".ivec", 1, 0x70, "i", 0x74),
                UniformRegister::Bool(_) => (".bool", 2, 0x78, "b", 0x88),
                UniformRegister::Other(raw) => {
                    self.note(format!(
                        "uniform `{name}` names unified register 0x{raw:02X}, which is no register"
                    ));
                    continue;
                }
            };
            let class = next;
            let next = alloc.next[class];
            let end_ok = u32::from(u.end) < u32::from(class_end);
            let earlier = alloc.declared.get(&name).copied();
            if earlier == Some((class, u.start, u.end)) {
                // Declared by an earlier file of the run: picasso reuses its registers.
                self.line(format!("{directive} {array}"));
            } else if earlier.is_none() && u.start >= next && end_ok && !name.starts_with('_') {
                if u.start > next {
                    // A gap: a private (underscore) uniform keeps picasso's allocator in step
                    // without adding a table entry.
                    let gap = u.start - next;
                    let gap_name = unique(
                        &format!("{gap_prefix}{prefix}{}", next - base),
                        &mut self.aliases_used,
                    );
                    let gap_decl = if gap > 1 {
                        format!("{gap_name}[{gap}]")
                    } else {
                        gap_name
                    };
                    self.line(format!("{directive} {gap_decl}"));
                }
                self.line(format!("{directive} {array}"));
                alloc.next[class] = u.end + 1;
                alloc.declared.insert(name.clone(), (class, u.start, u.end));
            } else {
                self.note(format!(
                    "uniform `{name}` cannot be allocated by picasso at {prefix}{}; declared with .alias (not in the re-assembled uniform table)",
                    u.start.saturating_sub(base)
                ));
                self.line(format!(
                    ".alias {name} {prefix}{}",
                    u.start.saturating_sub(base)
                ));
            }
            self.register_names(&name, u);
        }
        if input_mask != self.dvle.input_mask {
            self.note(format!(
                "input mask 0x{:04X} differs from the `.in` registers (0x{input_mask:04X})",
                self.dvle.input_mask
            ));
        }
        (alloc.next[0], alloc.next[1])
    }

    fn register_names(&mut self, name: &str, u: &UniformEntry) {
        let array = u.len() > 1;
        // Registers exist only below unified index 0x88; longer ranges name nothing more.
        for k in 0..u.len().min(0x88) {
            let reg = u.start.wrapping_add(k as u16);
            let index = array.then_some(k);
            self.names
                .unified
                .entry(reg)
                .or_insert_with(|| (name.to_string(), index));
        }
    }

    /// `.constf`/`.consti` where picasso 2.x's top-down allocation reproduces the register,
    /// `.setf`/`.seti` otherwise, `.setb` for booleans.
    fn constant_directives(&mut self, fvec_next: u16, ivec_next: u16) {
        let constants: Vec<Constant> = self.dvle.constants.clone();
        let mut next_f: i32 = 95;
        let mut next_i: i32 = 3;
        let fvec_floor = i32::from(fvec_next) - 0x10;
        let ivec_floor = i32::from(ivec_next) - 0x70;
        for c in &constants {
            let reg = i32::from(c.register);
            match c.value {
                ConstantValue::Float(words) => {
                    if reg > 95 {
                        self.note_code(format!("float constant for c{reg} is out of range"));
                        continue;
                    }
                    if c.type_raw != 2 {
                        self.note_code(format!(
                            "float constant c{reg} is stored with type {} (early aemstro); picasso writes type 2",
                            c.type_raw
                        ));
                    }
                    let mut exact = true;
                    let parts: Vec<String> = words
                        .iter()
                        .map(|&w| {
                            let (t, ok) = f24_text(w);
                            exact &= ok && w >> 24 == 0;
                            t
                        })
                        .collect();
                    if !exact {
                        self.note_code(format!("float constant c{reg} has bits picasso cannot write (NaN or bits 24-31)"));
                    }
                    let values = parts.join(", ");
                    if reg == next_f && reg >= fvec_floor {
                        let alias = unique(&format!("const_c{reg}"), &mut self.aliases_used);
                        self.line(format!(".constf {alias}({values})"));
                        next_f -= 1;
                    } else {
                        self.line(format!(".setf c{reg}({values})"));
                    }
                }
                ConstantValue::Int(v) => {
                    if reg > 3 {
                        self.note_code(format!("integer constant for i{reg} is out of range"));
                        continue;
                    }
                    if c.data[1..].iter().any(|&w| w != 0) {
                        self.note_code(format!(
                            "integer constant i{reg} has padding bits picasso writes as 0"
                        ));
                    }
                    let values = format!("{}, {}, {}, {}", v[0], v[1], v[2], v[3]);
                    if reg == next_i && reg >= ivec_floor {
                        let alias = unique(&format!("const_i{reg}"), &mut self.aliases_used);
                        self.line(format!(".consti {alias}({values})"));
                        next_i -= 1;
                    } else {
                        self.line(format!(".seti i{reg}({values})"));
                    }
                }
                ConstantValue::Bool(b) => {
                    if reg > 15 {
                        self.note_code(format!("bool constant for b{reg} is out of range"));
                        continue;
                    }
                    if c.data[0] > 1 || c.data[1..].iter().any(|&w| w != 0) {
                        self.note_code(format!(
                            "bool constant b{reg} has bits picasso writes as 0"
                        ));
                    }
                    self.line(format!(".setb b{reg} {b}"));
                }
                ConstantValue::Unknown => {
                    self.note_code(format!(
                        "constant of unknown type {} for register {reg}",
                        c.type_raw
                    ));
                    self.line(format!(
                        "; constant type {} register {reg} data {:08X} {:08X} {:08X} {:08X}",
                        c.type_raw, c.data[0], c.data[1], c.data[2], c.data[3]
                    ));
                }
            }
        }
    }

    fn output_directives(&mut self) {
        let e = self.dvle;
        let max_reg: u16 = if e.kind == ShaderKind::Geometry {
            7
        } else {
            16
        };
        let mut mask_seen = 0u16;
        let mut used_components = 0u64;
        let mut semantic_count: HashMap<String, usize> = HashMap::new();
        for o in &e.outputs {
            if let Some(n) = o.semantic.picasso_name() {
                *semantic_count.entry(n.to_string()).or_default() += 1;
            }
        }
        for o in &e.outputs {
            let Some(sem) = o.semantic.picasso_name() else {
                self.note(format!(
                    "output semantic {} has no picasso name",
                    o.semantic.to_raw()
                ));
                self.line(format!(
                    "; output o{} semantic {} mask 0x{:X}",
                    o.register,
                    o.semantic.to_raw(),
                    o.mask
                ));
                continue;
            };
            if o.register >= max_reg {
                self.note(format!(
                    "output register o{} is not available to this shader type in picasso",
                    o.register
                ));
                self.line(format!(
                    "; output {sem} o{} mask 0x{:X}",
                    o.register, o.mask
                ));
                continue;
            }
            let mask = o.mask & 0xF;
            let shift = 4 * u32::from(o.register);
            // Entries picasso would reject are written as comments so the file still assembles.
            let rejected = if o.register >= 7 && o.semantic != crate::dvlb::OutputSemantic::Dummy {
                Some(format!(
                    "picasso only allows `dummy` outputs on o{}",
                    o.register
                ))
            } else if used_components & (u64::from(mask) << shift) != 0 {
                Some(format!(
                    "outputs overlap on o{} (picasso rejects that)",
                    o.register
                ))
            } else {
                None
            };
            if let Some(why) = rejected {
                self.note(format!("{why}; the entry is left out"));
                self.line(format!(
                    "; output {sem} o{} mask 0x{:X}: {why}",
                    o.register, o.mask
                ));
                continue;
            }
            if mask == 0 || o.mask > 0xF {
                self.note(format!(
                    "output o{} has mask 0x{:X}, which picasso cannot write",
                    o.register, o.mask
                ));
            }
            if o.unknown != 0 {
                self.note(format!(
                    "output o{} has unknown halfword 0x{:04X} (picasso writes 0)",
                    o.register, o.unknown
                ));
            }
            used_components |= u64::from(mask) << shift;
            mask_seen |= 1 << o.register;
            let reg = o.register as u8;
            let alias = if self.names.outputs.contains_key(&reg) {
                "-".to_string()
            } else {
                let base = if semantic_count.get(sem).copied().unwrap_or(0) > 1 {
                    format!("{}_o{}", semantic_alias(sem), o.register)
                } else {
                    semantic_alias(sem)
                };
                let n = unique(&base, &mut self.aliases_used);
                self.names.outputs.insert(reg, n.clone());
                n
            };
            // picasso reads the mask in xyzw order from the register's swizzle (bit 0 = x).
            let letters: String = (0..4)
                .filter(|i| mask & (1 << i) != 0)
                .map(|i| COMPONENTS[i])
                .collect();
            let suffix = if mask == 0xF || mask == 0 {
                String::new()
            } else {
                format!(".{letters}")
            };
            self.line(format!(".out {alias} {sem} o{}{suffix}", o.register));
        }
        if mask_seen != e.output_mask {
            self.note(format!(
                "output mask 0x{:04X} differs from the `.out` registers (0x{mask_seen:04X})",
                e.output_mask
            ));
        }
    }

    /// For the files of [`disassemble_all`] that hold no code (their `.entry` line, if needed,
    /// is among the directives).
    fn entry_only(&mut self) {
        self.line("; (no code in this file: picasso shares the procedures of the code file)");
    }

    // -----------------------------------------------------------------------------------------
    // Code
    // -----------------------------------------------------------------------------------------

    fn code(&mut self) {
        let a = self.a;
        self.address_lines = vec![0; a.program.len()];
        let len = a.program.len() as u32;
        let geometry = self.dvle.kind == ShaderKind::Geometry;
        if a.dropped_words > 0 {
            self.note_code(format!(
                "{} words beyond address 0xFFF are not shown",
                a.dropped_words
            ));
        }
        if !geometry && a.program.len() > PICASSO_MAX_VSH_WORDS {
            self.note_code("picasso refuses vertex-shader files longer than 512 instructions");
        }
        if let Some(why) = picasso_opdesc_mismatch(&a.program) {
            self.note_code(why);
        }
        if a.uses_setemit && !geometry {
            self.note(
                "the code uses SETEMIT, which makes picasso treat this file as a geometry shader",
            );
        }
        if len == 0 {
            self.line("; (empty program)");
            if let Some(name) = a.empty_procs.get(&0) {
                self.line(format!(".proc {name}"));
                self.line(".end");
            }
            return;
        }
        self.line("");

        enum Open {
            Proc { end: u32 },
            IfThen { pos: u32, dst: u32, end: u32 },
            IfElse { pos: u32, end: u32 },
            Loop { pos: u32, end: u32 },
        }
        let mut stack: Vec<Open> = Vec::new();
        let mut sim = NopSim::default();
        let code = a.program.code();
        let last_opcode = |at: u32| -> Option<u32> {
            at.checked_sub(1)
                .and_then(|i| code.get(i as usize))
                .map(|&w| w >> 26)
        };
        for addr in 0..=len {
            // Close the blocks that end here, innermost first.
            loop {
                let depth = stack.len().saturating_sub(1);
                let Some(top) = stack.last_mut() else { break };
                match *top {
                    Open::IfThen { pos, dst, end } if dst == addr => {
                        let prev = last_opcode(addr);
                        if end > dst {
                            sim.at_else(addr, pos, prev);
                            *top = Open::IfElse { pos, end };
                            self.line(format!("{}.else", indent(depth)));
                        } else {
                            sim.at_end(addr, pos, prev, EndKind::If);
                            stack.pop();
                            self.line(format!("{}.end", indent(depth)));
                        }
                    }
                    Open::IfElse { pos, end } if end == addr => {
                        sim.at_end(addr, pos, last_opcode(addr), EndKind::If);
                        stack.pop();
                        self.line(format!("{}.end", indent(depth)));
                    }
                    Open::Loop { pos, end } if end == addr => {
                        sim.at_end(addr, pos, last_opcode(addr), EndKind::For);
                        stack.pop();
                        self.line(format!("{}.end", indent(depth)));
                    }
                    Open::Proc { end } if end == addr => {
                        sim.at_end(addr, addr, last_opcode(addr), EndKind::Proc);
                        stack.pop();
                        self.line(format!("{}.end", indent(depth)));
                        if depth == 0 && addr < len {
                            self.line("");
                        }
                    }
                    _ => break,
                }
            }
            if let Some(name) = a.empty_procs.get(&addr) {
                if stack.is_empty() {
                    if addr > 0 {
                        self.line("");
                    }
                    self.line(format!(".proc {name}"));
                    self.line(".end");
                    if addr < len {
                        self.line("");
                    }
                } else {
                    self.note(format!(
                        "empty entry procedure `{name}` at 0x{addr:03X} lies inside another block; picasso cannot nest it"
                    ));
                }
            }
            if addr < len {
                for &p in a.procs_at.get(&addr).map(Vec::as_slice).unwrap_or(&[]) {
                    let info = &a.procs[p];
                    self.line(format!("{}.proc {}", indent(stack.len()), info.name));
                    stack.push(Open::Proc {
                        end: info.range.end,
                    });
                }
            }
            if let Some(names) = a.labels_at.get(&addr) {
                for n in names {
                    self.line(format!("{n}:"));
                }
            }
            if addr == len {
                break;
            }
            let Some(instr) = a.program.get(addr as usize) else {
                break;
            };
            let word = code.get(addr as usize).copied().unwrap_or(0);
            let depth = stack.len();
            let text = self.instruction_line(addr, word, instr, depth);
            let line_no = self.lines.len();
            if let Some(slot) = self.address_lines.get_mut(addr as usize) {
                *slot = line_no;
            }
            self.line(text);
            sim.instruction();
            if a.structured.contains(&addr) {
                match *instr {
                    Instr::IfU { dst, num, .. } | Instr::IfC { dst, num, .. } => {
                        stack.push(Open::IfThen {
                            pos: addr,
                            dst: u32::from(dst),
                            end: u32::from(dst) + u32::from(num),
                        })
                    }
                    Instr::Loop { dst, .. } => stack.push(Open::Loop {
                        pos: addr,
                        end: u32::from(dst) + 1,
                    }),
                    _ => {}
                }
            }
        }
        // Unreachable with the nesting checks in `Analysis`; keeps the output balanced anyway.
        while stack.pop().is_some() {
            self.line(format!("{}.end", indent(stack.len())));
        }
        if sim.padding_needed {
            self.note_code("picasso would insert padding NOPs at some `.end`/`.else` here: assemble with --no-nop (picasso -n)");
        }
    }

    /// One instruction as a line of source, indented for block depth `depth`, with its address
    /// comment at [`COMMENT_COLUMN`].
    fn instruction_line(&mut self, addr: u32, word: u32, instr: &Instr, depth: usize) -> String {
        let mut notes: Vec<String> = Vec::new();
        let text = match self.instruction_body(addr, instr, &mut notes) {
            Ok(t) => t,
            Err(why) => {
                self.note_code(format!("0x{addr:03X}: {why}; written as nop"));
                let raw = instruction_text(instr);
                let mut s = pad(format!("{}nop", indent(depth)));
                let _ = write!(s, "; 0x{addr:03X} UNEXPRESSIBLE: {raw} [{word:08X}]: {why}");
                return s;
            }
        };
        self.fidelity_notes(addr, word, instr, &mut notes);
        let mut s = pad(format!("{}{text}", indent(depth)));
        let _ = write!(s, "; 0x{addr:03X}");
        for n in &notes {
            let _ = write!(s, " NOTE: {n}.");
            self.note_code(format!("0x{addr:03X}: {n}"));
        }
        s
    }

    fn instruction_body(
        &self,
        addr: u32,
        instr: &Instr,
        notes: &mut Vec<String>,
    ) -> Result<String, String> {
        let a = self.a;
        let m = instr.mnemonic();
        let geometry = self.dvle.kind == ShaderKind::Geometry;
        if geometry
            && let Some(DstReg::Output(n)) = instr_dst(instr).map(|d| d.reg)
            && n >= 7
        {
            return Err(format!(
                "o{n} is not available in a picasso geometry shader"
            ));
        }
        let call_target = |dst: u16, num: u8| -> Result<String, String> {
            a.call_proc(dst, num)
                .map(|p| p.name.clone())
                .ok_or_else(|| {
                    format!("call range 0x{dst:03X}+{num} is not a procedure that nests")
                })
        };
        let structured = |what: &str| -> Result<(), String> {
            if a.structured.contains(&addr) {
                Ok(())
            } else {
                Err(format!(
                    "{what} block does not nest with the surrounding code"
                ))
            }
        };
        let jump_target = |dst: u16| -> Result<String, String> {
            a.jump_label
                .get(&u32::from(dst))
                .cloned()
                .ok_or_else(|| format!("jump target 0x{dst:03X} is past the end of the program"))
        };
        Ok(match *instr {
            Instr::Call { dst, num } => format!("{m} {}", call_target(dst, num)?),
            Instr::CallC { cond, dst, num } => {
                format!("{m} {}, {}", cond_text(cond), call_target(dst, num)?)
            }
            Instr::CallU { b, dst, num } => {
                format!(
                    "{m} {}, {}",
                    bool_reg(b, &self.names),
                    call_target(dst, num)?
                )
            }
            Instr::IfU { b, .. } => {
                structured("IF")?;
                format!("{m} {}", bool_reg(b, &self.names))
            }
            Instr::IfC { cond, .. } => {
                structured("IF")?;
                format!("{m} {}", cond_text(cond))
            }
            Instr::Loop { i, num, .. } => {
                structured("LOOP")?;
                if num != 0 {
                    notes.push(format!("LOOP NUM field {num} (picasso writes 0)"));
                }
                format!("for {}", int_reg(i, &self.names))
            }
            Instr::JmpC { cond, dst } => format!("{m} {}, {}", cond_text(cond), jump_target(dst)?),
            Instr::JmpU { b, dst, invert } => format!(
                "{m} {}{}, {}",
                if invert { "!" } else { "" },
                bool_reg(b, &self.names),
                jump_target(dst)?
            ),
            _ => plain_instruction(instr, &self.names)?,
        })
    }

    /// Notes for instructions that picasso would encode differently from the original word.
    fn fidelity_notes(&self, _addr: u32, word: u32, instr: &Instr, notes: &mut Vec<String>) {
        match instr.encode() {
            Ok(enc) if enc.word != word => notes.push(format!(
                "word {word:08X} has bits outside the fields picasso writes ({:08X})",
                enc.word
            )),
            Err(e) => notes.push(format!("not re-encodable: {e}")),
            _ => {}
        }
        match *instr {
            Instr::Binary {
                op: bop,
                src1,
                src2,
                inverted,
                ..
            } => {
                let has_inverted = matches!(
                    bop,
                    BinaryOp::Dph | BinaryOp::Dst | BinaryOp::Sge | BinaryOp::Slt
                );
                let picasso_inverts = has_inverted
                    && !matches!(src1.reg, SrcReg::Const(_))
                    && matches!(src2.reg, SrcReg::Const(_));
                if inverted != picasso_inverts {
                    notes.push(
                        "picasso picks the other (normal/inverted) encoding for these operands"
                            .into(),
                    );
                }
                if two_inputs(&[src1, src2]) {
                    notes.push(
                        "picasso rejects two different input registers in one instruction".into(),
                    );
                }
            }
            Instr::Mad {
                src1,
                src2,
                src3,
                inverted,
                ..
            } => {
                let picasso_inverts = !matches!(src2.reg, SrcReg::Const(_))
                    && (matches!(src3.reg, SrcReg::Const(_))
                        || (src3.rel != RelAddr::None && src2.rel == RelAddr::None));
                if inverted != picasso_inverts {
                    notes.push(
                        "picasso picks the other (MAD/MADI) encoding for these operands".into(),
                    );
                }
                if two_inputs(&[src1, src2, src3]) {
                    notes.push(
                        "picasso rejects two different input registers in one instruction".into(),
                    );
                }
            }
            Instr::Cmp { src1, src2, .. } if two_inputs(&[src1, src2]) => {
                notes.push(
                    "picasso rejects two different input registers in one instruction".into(),
                );
            }
            Instr::Mova { mask, dst_raw, .. } => {
                if mask & 3 != 0 {
                    notes
                        .push("MOVA descriptor mask has z/w bits (picasso writes x/y only)".into());
                }
                if dst_raw != 0 {
                    notes.push(format!(
                        "MOVA destination field {dst_raw} (picasso writes 0)"
                    ));
                }
            }
            Instr::BreakC { cond }
            | Instr::CallC { cond, .. }
            | Instr::IfC { cond, .. }
            | Instr::JmpC { cond, .. } => {
                let unused_ref_clear = match cond.op {
                    CondOp::X => !cond.ref_y,
                    CondOp::Y => !cond.ref_x,
                    _ => false,
                };
                if unused_ref_clear {
                    notes.push("the unused reference bit of this one-flag condition is 0 (picasso writes 1)".into());
                }
            }
            _ => {}
        }
        if let Some(d) = instr_desc_index(instr) {
            let table_len = self.a.program.opdescs().len();
            if usize::from(d) >= table_len {
                notes.push(format!(
                    "operand descriptor {d} is beyond the table ({table_len} entries)"
                ));
            }
        }
    }

    fn finish(mut self) -> Listing {
        // Insert the notes into the header, then shift the address map accordingly.
        let code_exact = !self.any_code_note;
        let problems = self.notes.len() + self.notes_dropped;
        if self.notes_dropped > 0 {
            let more = format!("... and {} more problem(s) not listed", self.notes_dropped);
            self.notes.push((false, more));
        }
        let mut header_notes = Vec::new();
        if !self.notes.is_empty() {
            header_notes.push(if code_exact {
                "; NOTE: re-assembly reproduces the program and constants, but not these DVLE fields:"
                    .to_string()
            } else {
                format!(
                    "; WARNING: re-assembly will not reproduce this binary exactly ({problems} problem(s)):"
                )
            });
            for (code, n) in &self.notes {
                let tag = if *code { "code" } else { "table" };
                header_notes.push(format!(";   - [{tag}] {n}"));
            }
        }
        let shift = header_notes.len();
        let at = self.header_at.min(self.lines.len());
        self.lines.splice(at..at, header_notes);
        for l in &mut self.address_lines {
            if *l >= at {
                *l += shift;
            }
        }
        let mut text = self.lines.join("\n");
        text.push('\n');
        Listing {
            text,
            address_lines: self.address_lines,
            exact: self.notes.is_empty(),
            code_exact,
            notes: self.notes.into_iter().map(|(_, n)| n).collect(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// picasso's operand-descriptor allocation
// ---------------------------------------------------------------------------------------------

/// Operand-descriptor fields: destination mask (bits 0-3), then per source 9 bits (negate,
/// 8-bit swizzle) at bits 4, 13 and 22 (picasso's `OPDESC_MAKE`).
const OPDESC_DST: u32 = 0xF;
const fn opdesc_src(n: u32) -> u32 {
    0x1FF << (4 + 9 * n)
}

/// The swizzle bits of the given lanes (bit i = lane i, x = 0) of source `n` (0-based).
const fn swizzle_lane_bits(n: u32, lanes: u32) -> u32 {
    let mut sw = 0;
    let mut i = 0;
    while i < 4 {
        if lanes & (1 << i) != 0 {
            sw |= 3 << (6 - 2 * i);
        }
        i += 1;
    }
    sw << (5 + 9 * n)
}

/// What picasso feeds its allocator for one instruction: the descriptor value and the mask of
/// bits that matter (`findOrAddOpdesc` after `optimizeOpdesc`), plus whether it is a MAD.
fn picasso_opdesc_request(instr: &Instr, table: &[u32]) -> Option<(u32, u32, bool)> {
    let desc = instr_desc_index(instr)?;
    let d = table.get(usize::from(desc)).copied().unwrap_or(0);
    // Lanes (bit i = lane i) not written by the destination mask (mask bit 3 = x).
    let dst_mask = d & OPDESC_DST;
    let unwritten = (0..4)
        .filter(|i| dst_mask & (8 >> i) == 0)
        .fold(0, |m, i| m | (1 << i));
    let (fields, unused, mad) = match *instr {
        Instr::Binary { op: bop, .. } => {
            let unused = match bop {
                BinaryOp::Dp3 => [0b1000, 0b1000, 0],
                BinaryOp::Dph => [0b1000, 0, 0],
                BinaryOp::Dp4 | BinaryOp::Dst => [0, 0, 0],
                _ => [unwritten, unwritten, unwritten],
            };
            (OPDESC_DST | opdesc_src(0) | opdesc_src(1), unused, false)
        }
        Instr::Unary { op: uop, .. } => {
            let unused = match uop {
                UnaryOp::Ex2 | UnaryOp::Lg2 | UnaryOp::Rcp | UnaryOp::Rsq => 0b1110,
                UnaryOp::Litp => 0,
                UnaryOp::Flr | UnaryOp::Mov => unwritten,
            };
            (OPDESC_DST | opdesc_src(0), [unused, 0, 0], false)
        }
        Instr::Mova { .. } => {
            // picasso writes only the a0.x / a0.y bits; unused lanes: x/y when not written, z, w.
            let unused = (unwritten & 0b0011) | 0b1100;
            (OPDESC_DST | opdesc_src(0), [unused, 0, 0], false)
        }
        Instr::Cmp { .. } => (opdesc_src(0) | opdesc_src(1), [0b1100, 0, 0], false),
        Instr::Mad { .. } => (
            OPDESC_DST | opdesc_src(0) | opdesc_src(1) | opdesc_src(2),
            [unwritten; 3],
            true,
        ),
        _ => return None,
    };
    let value = match *instr {
        Instr::Mova { .. } => d & (fields & !0b0011),
        _ => d & fields,
    };
    let cleared = swizzle_lane_bits(0, unused[0])
        | swizzle_lane_bits(1, unused[1])
        | swizzle_lane_bits(2, unused[2]);
    Some((value, fields & !cleared, mad))
}

/// Replays picasso 2.7.1's descriptor allocation (`findOrAddOpdesc`, the MAD slot swap of
/// `format5`) over the program in address order. Returns a note when the result differs from
/// the binary's indices or table, i.e. when re-assembly would renumber descriptors (nihstro
/// and other producers allocate differently).
fn picasso_opdesc_mismatch(program: &Program) -> Option<String> {
    let table = program.opdescs();
    let mut sim: Vec<(u32, u32)> = Vec::new();
    let mut is_mad = 0u32;
    // (address, simulated index) of every instruction with a descriptor.
    let mut assigned: Vec<(usize, usize, bool)> = Vec::new();
    for (addr, instr) in program.instrs().iter().enumerate() {
        let Some((value, mask, mad)) = picasso_opdesc_request(instr, table) else {
            continue;
        };
        let found = sim.iter().position(|&(v, m)| {
            let min = mask & m;
            value & min == v & min
        });
        let mut index = match found {
            Some(i) => {
                let (v, m) = sim[i];
                sim[i] = ((v & !mask) | (value & mask), m | mask);
                i
            }
            None => {
                if sim.len() == 128 {
                    return Some("picasso would run out of operand descriptors (128)".into());
                }
                sim.push((value, mask));
                sim.len() - 1
            }
        };
        if mad && index >= 32 {
            let Some(which) = (0..32).find(|w| is_mad & (1 << w) == 0) else {
                return Some("picasso cannot place every MAD descriptor below 32".into());
            };
            sim.swap(which, index);
            for entry in assigned.iter_mut().filter(|e| !e.2) {
                if entry.1 == which {
                    entry.1 = index;
                } else if entry.1 == index {
                    entry.1 = which;
                }
            }
            index = which;
        }
        if mad {
            is_mad |= 1 << index;
        }
        assigned.push((addr, index, mad));
    }
    for &(addr, index, _) in &assigned {
        let actual = program
            .get(addr)
            .and_then(instr_desc_index)
            .map(usize::from);
        if actual != Some(index) {
            return Some(format!(
                "picasso would allocate operand descriptors differently (0x{addr:03X} gets {index} instead of {}); \
                 re-assembly renumbers them",
                actual.unwrap_or(0)
            ));
        }
    }
    if sim.len() != table.len() {
        return Some(format!(
            "picasso would write {} operand descriptors instead of {}",
            sim.len(),
            table.len()
        ));
    }
    let differing = sim.iter().zip(table).position(|(&(v, _), &t)| v != t);
    differing.map(|i| {
        format!(
            "picasso would write operand descriptor {i} as {:08X} instead of {:08X} (bits no \
             instruction uses)",
            sim[i].0, table[i]
        )
    })
}

fn instr_dst(instr: &Instr) -> Option<Dst> {
    match *instr {
        Instr::Binary { dst, .. } | Instr::Unary { dst, .. } | Instr::Mad { dst, .. } => Some(dst),
        _ => None,
    }
}

fn two_inputs(srcs: &[Src]) -> bool {
    let inputs: Vec<u8> = srcs
        .iter()
        .filter_map(|s| match s.reg {
            SrcReg::Input(n) => Some(n),
            _ => None,
        })
        .collect();
    inputs.windows(2).any(|w| w[0] != w[1]) || (inputs.len() == 3 && inputs[0] != inputs[2])
}

fn indent(depth: usize) -> String {
    "    ".repeat(depth)
}

/// Pads an instruction to the comment column (at least one space).
fn pad(mut s: String) -> String {
    if s.len() < COMMENT_COLUMN {
        s.push_str(&" ".repeat(COMMENT_COLUMN - s.len()));
    } else {
        s.push(' ');
    }
    s
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum EndKind {
    Proc,
    If,
    For,
}

/// Simulates picasso's automatic padding NOPs (`insertPaddingNop` in `picasso_assembler.cpp`)
/// to tell whether re-assembly without `--no-nop` would insert words the binary lacks.
#[derive(Default)]
struct NopSim {
    last_was_end: bool,
    padding_needed: bool,
}

fn is_flow_tail(opcode: Option<u32>) -> bool {
    matches!(opcode, Some(o) if o == op::JMPC || o == op::JMPU || o == op::CALL || o == op::CALLC || o == op::CALLU)
}

impl NopSim {
    fn instruction(&mut self) {
        self.last_was_end = false;
    }

    fn at_else(&mut self, cur: u32, pos: u32, last: Option<u32>) {
        if self.last_was_end {
            self.padding_needed = true;
            self.last_was_end = false;
        } else if is_flow_tail(last) || cur.saturating_sub(pos) < 2 {
            self.padding_needed = true;
        }
    }

    fn at_end(&mut self, cur: u32, pos: u32, last: Option<u32>, kind: EndKind) {
        if self.last_was_end {
            self.padding_needed = true;
            self.last_was_end = false;
        } else if cur > 0 {
            let min = if kind == EndKind::Proc { 1 } else { 2 };
            let loop_tail = kind == EndKind::For
                && matches!(last, Some(o) if o == op::BREAK || o == op::BREAKC);
            if is_flow_tail(last)
                || loop_tail
                || (kind != EndKind::Proc && cur.saturating_sub(pos) < min)
            {
                self.padding_needed = true;
            }
        }
        if kind != EndKind::Proc {
            self.last_was_end = true;
        }
    }
}

#[cfg(test)]
mod tests;
