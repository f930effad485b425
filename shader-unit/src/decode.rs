//! PICA200 shader instruction decoding: raw-word accessors, the op-info table, the typed IR
//! ([`Instr`]), its encoder, and decoded programs ([`Program`]).
//!
//! Stage: runs once per program upload (or `.shbin` load). Inputs: program words (up to 4096,
//! 12-bit PC) and operand descriptors (up to 128, 7-bit DESC). Outputs: one [`Instr`] per word,
//! with register files, relative addressing, swizzles, negation and masks resolved. Registers
//! read: none (callers pass the SH_CODETRANSFER / SH_OPDESCS data they collected).
//!
//! Sources: 3dbrew "GPU/Shader Instruction Set" [3DB], nihstro `shader_bytecode.h` at fd69de1
//! [N], pica-core.md §5 and the cheat-sheet in `testdata/bench-workloads.md`. The code here is
//! our own.
//!
//! # Instruction formats (bit ranges inclusive)
//!
//! | format | used by | layout |
//! |---|---|---|
//! | 0  | BREAK NOP END EMIT | `op[31:26]`, rest unused |
//! | 1  | ADD DP3 DP4 DPH DST MUL SGE SLT MAX MIN | `op[31:26] dst[25:21] idx[20:19] src1[18:12] (7 bit) src2[11:7] (5 bit) desc[6:0]` |
//! | 1i | DPHI DSTI SGEI SLTI | `op[31:26] dst[25:21] idx[20:19] src1[18:14] (5 bit) src2[13:7] (7 bit) desc[6:0]`; idx applies to src2 |
//! | 1u | EX2 LG2 LITP FLR RCP RSQ MOVA MOV | format 1 without src2 |
//! | 1c | CMP | `op[31:27] cmpx[26:24] cmpy[23:21] idx[20:19] src1[18:12] src2[11:7] desc[6:0]` |
//! | 2  | BREAKC CALL CALLC IFC JMPC | `op[31:26] refx[25] refy[24] condop[23:22] dst[21:10] num[7:0]` |
//! | 3  | CALLU IFU LOOP JMPU | `op[31:26] bool[25:22] / int[23:22] dst[21:10] num[7:0]` |
//! | 4  | SETEMIT | `op[31:26] vtx[25:24] prim[23] winding[22]` |
//! | 5  | MAD | `op[31:29] dst[28:24] idx[23:22] src1[21:17] (5) src2[16:10] (7) src3[9:5] (5) desc[4:0]` |
//! | 5i | MADI | `op[31:29] dst[28:24] idx[23:22] src1[21:17] (5) src2[16:12] (5) src3[11:5] (7) desc[4:0]` |
//!
//! Operand descriptor ([`OpDesc`]): `mask[3:0]` (bit 3 = x … bit 0 = w), `neg1[4]`, `sw1[12:5]`,
//! `neg2[13]`, `sw2[21:14]`, `neg3[22]`, `sw3[30:23]`. In a swizzle byte, bits 7–6 select the
//! component for lane x, 5–4 for y, 3–2 for z, 1–0 for w (0 = x … 3 = w; identity 0x1B).
//!
//! Register ids: source v0–v15 = 0x00–0x0F, r0–r15 = 0x10–0x1F, c0–c95 = 0x20–0x7F (7-bit fields
//! only); destination o0–o15 = 0x00–0x0F, r0–r15 = 0x10–0x1F.
//!
//! Decoding never fails and never panics: undefined opcodes (0x10, 0x11, 0x14–0x17, 0x1C–0x1F)
//! become [`Instr::Unknown`], and descriptor indices beyond the supplied table read as 0.

use std::sync::Arc;

use thiserror::Error;

/// Maximum number of program words: the PC and the flow-control DST field are 12 bits wide.
pub const MAX_PROGRAM_WORDS: usize = 4096;
/// Maximum number of operand descriptors: the DESC field is 7 bits wide.
pub const MAX_OPDESCS: usize = 128;
/// Identity swizzle selector byte (`.xyzw`).
pub const SWIZZLE_IDENTITY: u8 = 0x1B;

// ---------------------------------------------------------------------------------------------
// Raw accessors
// ---------------------------------------------------------------------------------------------

macro_rules! bitfield_accessors {
    ($ty:ident { $( $(#[$doc:meta])* $get:ident, $with:ident, $set:ident : $lo:expr, $width:expr; )* }) => {
        impl $ty {
            $(
                $(#[$doc])*
                #[inline]
                pub const fn $get(self) -> u32 {
                    (self.0 >> $lo) & ((1u32 << $width) - 1)
                }

                #[doc = concat!("Returns a copy with `", stringify!($get), "` (bits ", stringify!($lo),
                    ", width ", stringify!($width), ") replaced; excess bits of `v` are dropped.")]
                #[inline]
                #[must_use]
                pub const fn $with(self, v: u32) -> Self {
                    let m = ((1u32 << $width) - 1) << $lo;
                    Self((self.0 & !m) | ((v << $lo) & m))
                }

                #[doc = concat!("Sets `", stringify!($get), "` (bits ", stringify!($lo),
                    ", width ", stringify!($width), "); excess bits of `v` are dropped.")]
                #[inline]
                pub const fn $set(&mut self, v: u32) {
                    *self = self.$with(v);
                }
            )*
        }
    };
}

/// One raw 32-bit shader instruction word with accessors for every field of every format.
///
/// Accessors are named after the format they belong to; they do not check that the word really
/// has that format. All setters drop bits that do not fit.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct RawInstr(pub u32);

bitfield_accessors!(RawInstr {
    /// 6-bit opcode, bits 31–26 (all formats; for CMP/MAD/MADI it includes operand bits).
    opcode, with_opcode, set_opcode: 26, 6;
    /// 5-bit opcode of format 1c (CMP = 0x17), bits 31–27.
    opcode5, with_opcode5, set_opcode5: 27, 5;
    /// 3-bit opcode of formats 5/5i (MAD = 0b111, MADI = 0b110), bits 31–29.
    opcode3, with_opcode3, set_opcode3: 29, 3;
    /// Formats 1/1i/1u: destination register id (o0–o15 = 0x00–0x0F, r0–r15 = 0x10–0x1F), bits 25–21.
    dst, with_dst, set_dst: 21, 5;
    /// Formats 1/1i/1u/1c: relative-addressing selector (0 none, 1 a0.x, 2 a0.y, 3 aL), bits 20–19.
    idx, with_idx, set_idx: 19, 2;
    /// Formats 1/1u/1c: 7-bit SRC1 register id, bits 18–12.
    src1, with_src1, set_src1: 12, 7;
    /// Formats 1/1c: 5-bit SRC2 register id (v/r only), bits 11–7.
    src2, with_src2, set_src2: 7, 5;
    /// Format 1i: 5-bit SRC1 register id (v/r only), bits 18–14.
    src1_i, with_src1_i, set_src1_i: 14, 5;
    /// Format 1i: 7-bit SRC2 register id, bits 13–7.
    src2_i, with_src2_i, set_src2_i: 7, 7;
    /// Formats 1/1i/1u/1c: operand-descriptor index (0–127), bits 6–0.
    desc, with_desc, set_desc: 0, 7;
    /// Format 1c: compare op for the x lanes (see [`CmpOp`]), bits 26–24.
    cmp_x, with_cmp_x, set_cmp_x: 24, 3;
    /// Format 1c: compare op for the y lanes (see [`CmpOp`]), bits 23–21.
    cmp_y, with_cmp_y, set_cmp_y: 21, 3;
    /// Formats 2/3: NUM (instruction count; JMPU: bit 0 inverts the condition), bits 7–0.
    num, with_num, set_num: 0, 8;
    /// Formats 2/3: DST target word offset (12 bits), bits 21–10.
    flow_dst, with_flow_dst, set_flow_dst: 10, 12;
    /// Format 2: condition combiner (see [`CondOp`]), bits 23–22.
    cond_op, with_cond_op, set_cond_op: 22, 2;
    /// Format 2: reference value for cmp.y, bit 24.
    ref_y, with_ref_y, set_ref_y: 24, 1;
    /// Format 2: reference value for cmp.x, bit 25.
    ref_x, with_ref_x, set_ref_x: 25, 1;
    /// Format 3 (CALLU/IFU/JMPU): bool uniform id b0–b15, bits 25–22.
    bool_id, with_bool_id, set_bool_id: 22, 4;
    /// Format 3 (LOOP): integer uniform id i0–i3, bits 23–22.
    int_id, with_int_id, set_int_id: 22, 2;
    /// Format 4: winding flag, bit 22.
    winding, with_winding, set_winding: 22, 1;
    /// Format 4: primitive-emit flag, bit 23.
    prim_emit, with_prim_emit, set_prim_emit: 23, 1;
    /// Format 4: emitter vertex id (0–3), bits 25–24.
    vertex_id, with_vertex_id, set_vertex_id: 24, 2;
    /// Formats 5/5i: destination register id, bits 28–24.
    mad_dst, with_mad_dst, set_mad_dst: 24, 5;
    /// Formats 5/5i: relative-addressing selector, bits 23–22.
    mad_idx, with_mad_idx, set_mad_idx: 22, 2;
    /// Formats 5/5i: 5-bit SRC1, bits 21–17.
    mad_src1, with_mad_src1, set_mad_src1: 17, 5;
    /// Format 5: 7-bit SRC2, bits 16–10.
    mad_src2, with_mad_src2, set_mad_src2: 10, 7;
    /// Format 5: 5-bit SRC3, bits 9–5.
    mad_src3, with_mad_src3, set_mad_src3: 5, 5;
    /// Format 5i: 5-bit SRC2, bits 16–12.
    madi_src2, with_madi_src2, set_madi_src2: 12, 5;
    /// Format 5i: 7-bit SRC3, bits 11–5.
    madi_src3, with_madi_src3, set_madi_src3: 5, 7;
    /// Formats 5/5i: operand-descriptor index (0–31), bits 4–0.
    mad_desc, with_mad_desc, set_mad_desc: 0, 5;
});

impl RawInstr {
    /// Format 0 (BREAK, NOP, END, EMIT): just the opcode.
    pub const fn format0(op: u32) -> Self {
        Self(0).with_opcode(op)
    }

    /// Format 1 / 1u: `op dst, src1 (7-bit, relative via idx), src2 (5-bit)`, descriptor `desc`.
    pub const fn format1(op: u32, dst: u32, idx: u32, src1: u32, src2: u32, desc: u32) -> Self {
        Self(0)
            .with_opcode(op)
            .with_dst(dst)
            .with_idx(idx)
            .with_src1(src1)
            .with_src2(src2)
            .with_desc(desc)
    }

    /// Format 1i: `op dst, src1 (5-bit), src2 (7-bit, relative via idx)`, descriptor `desc`.
    pub const fn format1i(op: u32, dst: u32, idx: u32, src1: u32, src2: u32, desc: u32) -> Self {
        Self(0)
            .with_opcode(op)
            .with_dst(dst)
            .with_idx(idx)
            .with_src1_i(src1)
            .with_src2_i(src2)
            .with_desc(desc)
    }

    /// Format 1c (CMP): compare ops for x and y, `src1` (7-bit, relative), `src2` (5-bit).
    pub const fn format1c(
        cmp_x: u32,
        cmp_y: u32,
        idx: u32,
        src1: u32,
        src2: u32,
        desc: u32,
    ) -> Self {
        Self(0)
            .with_opcode5(OPCODE5_CMP)
            .with_cmp_x(cmp_x)
            .with_cmp_y(cmp_y)
            .with_idx(idx)
            .with_src1(src1)
            .with_src2(src2)
            .with_desc(desc)
    }

    /// Format 2: conditional flow control (`refx`, `refy`, `cond_op`, target `dst`, count `num`).
    pub const fn format2(
        op: u32,
        ref_x: bool,
        ref_y: bool,
        cond_op: u32,
        dst: u32,
        num: u32,
    ) -> Self {
        Self(0)
            .with_opcode(op)
            .with_ref_x(ref_x as u32)
            .with_ref_y(ref_y as u32)
            .with_cond_op(cond_op)
            .with_flow_dst(dst)
            .with_num(num)
    }

    /// Format 3: uniform flow control; `id` is the bool id (CALLU/IFU/JMPU, 4 bits) or int id
    /// (LOOP, 2 bits — pass 0–3).
    pub const fn format3(op: u32, id: u32, dst: u32, num: u32) -> Self {
        Self(0)
            .with_opcode(op)
            .with_bool_id(id)
            .with_flow_dst(dst)
            .with_num(num)
    }

    /// Format 4 (SETEMIT).
    pub const fn format4(vertex_id: u32, prim_emit: bool, winding: bool) -> Self {
        Self(0)
            .with_opcode(op::SETEMIT)
            .with_vertex_id(vertex_id)
            .with_prim_emit(prim_emit as u32)
            .with_winding(winding as u32)
    }

    /// Format 5 (MAD): `dst = src1 (5) * src2 (7, relative) + src3 (5)`, descriptor < 32.
    pub const fn format5(dst: u32, idx: u32, src1: u32, src2: u32, src3: u32, desc: u32) -> Self {
        Self(0)
            .with_opcode3(OPCODE3_MAD)
            .with_mad_dst(dst)
            .with_mad_idx(idx)
            .with_mad_src1(src1)
            .with_mad_src2(src2)
            .with_mad_src3(src3)
            .with_mad_desc(desc)
    }

    /// Format 5i (MADI): `dst = src1 (5) * src2 (5) + src3 (7, relative)`, descriptor < 32.
    pub const fn format5i(dst: u32, idx: u32, src1: u32, src2: u32, src3: u32, desc: u32) -> Self {
        Self(0)
            .with_opcode3(OPCODE3_MADI)
            .with_mad_dst(dst)
            .with_mad_idx(idx)
            .with_mad_src1(src1)
            .with_madi_src2(src2)
            .with_madi_src3(src3)
            .with_mad_desc(desc)
    }

    /// The op-info table entry for this word's opcode.
    #[inline]
    pub fn info(self) -> &'static OpInfo {
        op_info(self.opcode())
    }
}

/// 5-bit opcode of CMP in format 1c (0x2E >> 1).
pub const OPCODE5_CMP: u32 = 0x17;
/// 3-bit opcode of MAD in format 5 (0x38 >> 3).
pub const OPCODE3_MAD: u32 = 0b111;
/// 3-bit opcode of MADI in format 5i (0x30 >> 3).
pub const OPCODE3_MADI: u32 = 0b110;

/// One raw operand descriptor word.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct OpDesc(pub u32);

bitfield_accessors!(OpDesc {
    /// Destination write mask, bits 3–0 (bit 3 = x, 2 = y, 1 = z, 0 = w).
    mask, with_mask, set_mask: 0, 4;
    /// Negate source 1, bit 4.
    neg1, with_neg1, set_neg1: 4, 1;
    /// Source 1 swizzle selector byte, bits 12–5.
    swizzle1, with_swizzle1, set_swizzle1: 5, 8;
    /// Negate source 2, bit 13.
    neg2, with_neg2, set_neg2: 13, 1;
    /// Source 2 swizzle selector byte, bits 21–14.
    swizzle2, with_swizzle2, set_swizzle2: 14, 8;
    /// Negate source 3, bit 22.
    neg3, with_neg3, set_neg3: 22, 1;
    /// Source 3 swizzle selector byte, bits 30–23.
    swizzle3, with_swizzle3, set_swizzle3: 23, 8;
});

impl OpDesc {
    /// Builds a descriptor from a mask and up to three (swizzle lanes, negate) pairs.
    pub const fn new(
        mask: u8,
        s1: ([u8; 4], bool),
        s2: ([u8; 4], bool),
        s3: ([u8; 4], bool),
    ) -> Self {
        Self(0)
            .with_mask(mask as u32)
            .with_swizzle1(swizzle_to_selector(s1.0) as u32)
            .with_neg1(s1.1 as u32)
            .with_swizzle2(swizzle_to_selector(s2.0) as u32)
            .with_neg2(s2.1 as u32)
            .with_swizzle3(swizzle_to_selector(s3.0) as u32)
            .with_neg3(s3.1 as u32)
    }

    /// Swizzle lanes and negate flag of source `n` (1, 2 or 3; anything else reads source 3).
    pub const fn source(self, n: u8) -> ([u8; 4], bool) {
        match n {
            1 => (selector_to_swizzle(self.swizzle1() as u8), self.neg1() != 0),
            2 => (selector_to_swizzle(self.swizzle2() as u8), self.neg2() != 0),
            _ => (selector_to_swizzle(self.swizzle3() as u8), self.neg3() != 0),
        }
    }
}

/// Expands a swizzle selector byte into per-lane component indices `[x, y, z, w]` (each 0–3).
#[inline]
pub const fn selector_to_swizzle(sel: u8) -> [u8; 4] {
    [(sel >> 6) & 3, (sel >> 4) & 3, (sel >> 2) & 3, sel & 3]
}

/// Packs per-lane component indices (each taken mod 4) into a swizzle selector byte.
#[inline]
pub const fn swizzle_to_selector(sw: [u8; 4]) -> u8 {
    ((sw[0] & 3) << 6) | ((sw[1] & 3) << 4) | ((sw[2] & 3) << 2) | (sw[3] & 3)
}

// ---------------------------------------------------------------------------------------------
// Op-info table
// ---------------------------------------------------------------------------------------------

/// Raw 6-bit opcode values (for MAD/MADI/CMP the lowest value of their range).
#[allow(missing_docs)]
pub mod op {
    pub const ADD: u32 = 0x00;
    pub const DP3: u32 = 0x01;
    pub const DP4: u32 = 0x02;
    pub const DPH: u32 = 0x03;
    pub const DST: u32 = 0x04;
    pub const EX2: u32 = 0x05;
    pub const LG2: u32 = 0x06;
    pub const LITP: u32 = 0x07;
    pub const MUL: u32 = 0x08;
    pub const SGE: u32 = 0x09;
    pub const SLT: u32 = 0x0A;
    pub const FLR: u32 = 0x0B;
    pub const MAX: u32 = 0x0C;
    pub const MIN: u32 = 0x0D;
    pub const RCP: u32 = 0x0E;
    pub const RSQ: u32 = 0x0F;
    pub const MOVA: u32 = 0x12;
    pub const MOV: u32 = 0x13;
    pub const DPHI: u32 = 0x18;
    pub const DSTI: u32 = 0x19;
    pub const SGEI: u32 = 0x1A;
    pub const SLTI: u32 = 0x1B;
    pub const BREAK: u32 = 0x20;
    pub const NOP: u32 = 0x21;
    pub const END: u32 = 0x22;
    pub const BREAKC: u32 = 0x23;
    pub const CALL: u32 = 0x24;
    pub const CALLC: u32 = 0x25;
    pub const CALLU: u32 = 0x26;
    pub const IFU: u32 = 0x27;
    pub const IFC: u32 = 0x28;
    pub const LOOP: u32 = 0x29;
    pub const EMIT: u32 = 0x2A;
    pub const SETEMIT: u32 = 0x2B;
    pub const JMPC: u32 = 0x2C;
    pub const JMPU: u32 = 0x2D;
    pub const CMP: u32 = 0x2E;
    pub const MADI: u32 = 0x30;
    pub const MAD: u32 = 0x38;
}

/// Instruction encoding format ([3DB] numbering).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Format {
    /// Format 0: opcode only (BREAK, NOP, END, EMIT).
    F0,
    /// Format 1: two sources, SRC1 7-bit.
    F1,
    /// Format 1i: two sources, SRC2 7-bit ("inverted").
    F1i,
    /// Format 1u: one 7-bit source.
    F1u,
    /// Format 1c: CMP.
    F1c,
    /// Format 2: conditional flow control.
    F2,
    /// Format 3: uniform (bool/int) flow control.
    F3,
    /// Format 4: SETEMIT.
    F4,
    /// Format 5: MAD (SRC2 7-bit).
    F5,
    /// Format 5i: MADI (SRC3 7-bit).
    F5i,
    /// Undefined opcode.
    Unknown,
}

/// What an opcode is, independent of its encoding details.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum OpKind {
    /// A two-source arithmetic op.
    Binary(BinaryOp),
    /// A one-source arithmetic op.
    Unary(UnaryOp),
    /// MOVA.
    Mova,
    /// CMP.
    Cmp,
    /// MAD / MADI.
    Mad,
    /// BREAK.
    Break,
    /// NOP.
    Nop,
    /// END.
    End,
    /// BREAKC.
    BreakC,
    /// CALL.
    Call,
    /// CALLC.
    CallC,
    /// CALLU.
    CallU,
    /// IFU.
    IfU,
    /// IFC.
    IfC,
    /// LOOP.
    Loop,
    /// EMIT.
    Emit,
    /// SETEMIT.
    SetEmit,
    /// JMPC.
    JmpC,
    /// JMPU.
    JmpU,
    /// Undefined opcode.
    Unknown,
}

/// One row of the op-info table: the single source for decoder, disassembler and assembler.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct OpInfo {
    /// Lowercase mnemonic as picasso spells it (`"unk"` for undefined opcodes; LOOP is `"loop"`,
    /// picasso writes it `for`).
    pub mnemonic: &'static str,
    /// Encoding format.
    pub format: Format,
    /// What the instruction does.
    pub kind: OpKind,
    /// Number of register source operands (0–3).
    pub sources: u8,
    /// Whether the instruction has a register destination (MOVA writes a0 instead: false).
    pub has_dst: bool,
    /// True for the inverted forms (DPHI, DSTI, SGEI, SLTI, MADI).
    pub inverted: bool,
}

const fn row(
    mnemonic: &'static str,
    format: Format,
    kind: OpKind,
    sources: u8,
    has_dst: bool,
) -> OpInfo {
    let inverted = matches!(format, Format::F1i | Format::F5i);
    OpInfo {
        mnemonic,
        format,
        kind,
        sources,
        has_dst,
        inverted,
    }
}

const UNKNOWN_INFO: OpInfo = row("unk", Format::Unknown, OpKind::Unknown, 0, false);

/// The op-info table indexed by the 6-bit opcode (bits 31–26).
pub static OP_INFO: [OpInfo; 64] = build_op_info();

const fn build_op_info() -> [OpInfo; 64] {
    use BinaryOp as B;
    use Format as F;
    use OpKind as K;
    use UnaryOp as U;
    let mut t = [UNKNOWN_INFO; 64];
    t[0x00] = row("add", F::F1, K::Binary(B::Add), 2, true);
    t[0x01] = row("dp3", F::F1, K::Binary(B::Dp3), 2, true);
    t[0x02] = row("dp4", F::F1, K::Binary(B::Dp4), 2, true);
    t[0x03] = row("dph", F::F1, K::Binary(B::Dph), 2, true);
    t[0x04] = row("dst", F::F1, K::Binary(B::Dst), 2, true);
    t[0x05] = row("ex2", F::F1u, K::Unary(U::Ex2), 1, true);
    t[0x06] = row("lg2", F::F1u, K::Unary(U::Lg2), 1, true);
    t[0x07] = row("litp", F::F1u, K::Unary(U::Litp), 1, true);
    t[0x08] = row("mul", F::F1, K::Binary(B::Mul), 2, true);
    t[0x09] = row("sge", F::F1, K::Binary(B::Sge), 2, true);
    t[0x0A] = row("slt", F::F1, K::Binary(B::Slt), 2, true);
    t[0x0B] = row("flr", F::F1u, K::Unary(U::Flr), 1, true);
    t[0x0C] = row("max", F::F1, K::Binary(B::Max), 2, true);
    t[0x0D] = row("min", F::F1, K::Binary(B::Min), 2, true);
    t[0x0E] = row("rcp", F::F1u, K::Unary(U::Rcp), 1, true);
    t[0x0F] = row("rsq", F::F1u, K::Unary(U::Rsq), 1, true);
    t[0x12] = row("mova", F::F1u, K::Mova, 1, false);
    t[0x13] = row("mov", F::F1u, K::Unary(U::Mov), 1, true);
    t[0x18] = row("dphi", F::F1i, K::Binary(B::Dph), 2, true);
    t[0x19] = row("dsti", F::F1i, K::Binary(B::Dst), 2, true);
    t[0x1A] = row("sgei", F::F1i, K::Binary(B::Sge), 2, true);
    t[0x1B] = row("slti", F::F1i, K::Binary(B::Slt), 2, true);
    t[0x20] = row("break", F::F0, K::Break, 0, false);
    t[0x21] = row("nop", F::F0, K::Nop, 0, false);
    t[0x22] = row("end", F::F0, K::End, 0, false);
    t[0x23] = row("breakc", F::F2, K::BreakC, 0, false);
    t[0x24] = row("call", F::F2, K::Call, 0, false);
    t[0x25] = row("callc", F::F2, K::CallC, 0, false);
    t[0x26] = row("callu", F::F3, K::CallU, 0, false);
    t[0x27] = row("ifu", F::F3, K::IfU, 0, false);
    t[0x28] = row("ifc", F::F2, K::IfC, 0, false);
    t[0x29] = row("loop", F::F3, K::Loop, 0, false);
    t[0x2A] = row("emit", F::F0, K::Emit, 0, false);
    t[0x2B] = row("setemit", F::F4, K::SetEmit, 0, false);
    t[0x2C] = row("jmpc", F::F2, K::JmpC, 0, false);
    t[0x2D] = row("jmpu", F::F3, K::JmpU, 0, false);
    t[0x2E] = row("cmp", F::F1c, K::Cmp, 2, false);
    t[0x2F] = row("cmp", F::F1c, K::Cmp, 2, false);
    let mut i = 0x30;
    while i < 0x38 {
        t[i] = row("madi", F::F5i, K::Mad, 3, true);
        t[i + 8] = row("mad", F::F5, K::Mad, 3, true);
        i += 1;
    }
    t
}

/// The op-info row for a 6-bit opcode (only the low 6 bits of `opcode` are used).
#[inline]
pub fn op_info(opcode: u32) -> &'static OpInfo {
    &OP_INFO[(opcode & 0x3F) as usize]
}

// ---------------------------------------------------------------------------------------------
// Typed IR
// ---------------------------------------------------------------------------------------------

/// Two-source arithmetic operations (the inverted encodings map onto the same op).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum BinaryOp {
    /// ADD 0x00: a + b.
    Add,
    /// DP3 0x01: 3-component dot product, broadcast.
    Dp3,
    /// DP4 0x02: 4-component dot product, broadcast.
    Dp4,
    /// DPH 0x03 / DPHI 0x18: DP4 with a.w replaced by 1.
    Dph,
    /// DST 0x04 / DSTI 0x19: distance vector (1, a.y·b.y, a.z, b.w).
    Dst,
    /// MUL 0x08: a · b.
    Mul,
    /// SGE 0x09 / SGEI 0x1A: a ≥ b ? 1 : 0.
    Sge,
    /// SLT 0x0A / SLTI 0x1B: a < b ? 1 : 0.
    Slt,
    /// MAX 0x0C.
    Max,
    /// MIN 0x0D.
    Min,
}

/// One-source arithmetic operations.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum UnaryOp {
    /// EX2 0x05: 2^a.x, broadcast.
    Ex2,
    /// LG2 0x06: log2(a.x), broadcast.
    Lg2,
    /// LITP 0x07: lighting partial (also sets cmp.x/cmp.y).
    Litp,
    /// FLR 0x0B: floor per lane.
    Flr,
    /// RCP 0x0E: 1/a.x, broadcast.
    Rcp,
    /// RSQ 0x0F: 1/√a.x, broadcast.
    Rsq,
    /// MOV 0x13.
    Mov,
}

/// The eight CMP comparison codes (format 1c, 3 bits each).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CmpOp {
    /// 0: equal.
    Eq,
    /// 1: not equal.
    Ne,
    /// 2: less than.
    Lt,
    /// 3: less or equal.
    Le,
    /// 4: greater than.
    Gt,
    /// 5: greater or equal.
    Ge,
    /// 6: undocumented ([3DB]/[P]: always true; [C]: flag unchanged).
    Unk6,
    /// 7: undocumented ([3DB]/[P]: always true; [C]: flag unchanged).
    Unk7,
}

impl CmpOp {
    /// Decodes a 3-bit code (higher bits ignored).
    pub const fn from_raw(v: u32) -> Self {
        match v & 7 {
            0 => Self::Eq,
            1 => Self::Ne,
            2 => Self::Lt,
            3 => Self::Le,
            4 => Self::Gt,
            5 => Self::Ge,
            6 => Self::Unk6,
            _ => Self::Unk7,
        }
    }

    /// The 3-bit code.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// How the two condition-flag tests of a format-2 instruction combine (CONDOP, bits 23–22).
///
/// // HW: [3DB], [N] fd69de1, [P]: 0 = OR, 1 = AND, 2 = X only, 3 = Y only (an older nihstro
/// swaps 2 and 3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum CondOp {
    /// 0: (cmp.x == refx) || (cmp.y == refy).
    Or,
    /// 1: (cmp.x == refx) && (cmp.y == refy).
    And,
    /// 2: cmp.x == refx.
    X,
    /// 3: cmp.y == refy.
    Y,
}

impl CondOp {
    /// Decodes a 2-bit CONDOP (higher bits ignored).
    pub const fn from_raw(v: u32) -> Self {
        match v & 3 {
            0 => Self::Or,
            1 => Self::And,
            2 => Self::X,
            _ => Self::Y,
        }
    }

    /// The 2-bit code.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// A flow-control condition on the cmp.x/cmp.y flags.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Cond {
    /// How the two tests combine.
    pub op: CondOp,
    /// Value cmp.x is compared with (bit 25).
    pub ref_x: bool,
    /// Value cmp.y is compared with (bit 24).
    pub ref_y: bool,
}

impl Cond {
    /// Evaluates the condition on the current flags.
    #[inline]
    pub const fn eval(self, cmp_x: bool, cmp_y: bool) -> bool {
        let x = cmp_x == self.ref_x;
        let y = cmp_y == self.ref_y;
        match self.op {
            CondOp::Or => x || y,
            CondOp::And => x && y,
            CondOp::X => x,
            CondOp::Y => y,
        }
    }
}

/// Relative-addressing selector (IDX field).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub enum RelAddr {
    /// 0: no offset.
    #[default]
    None,
    /// 1: + a0.x.
    A0X,
    /// 2: + a0.y.
    A0Y,
    /// 3: + aL.
    AL,
}

impl RelAddr {
    /// Decodes a 2-bit IDX (higher bits ignored).
    pub const fn from_raw(v: u32) -> Self {
        match v & 3 {
            0 => Self::None,
            1 => Self::A0X,
            2 => Self::A0Y,
            _ => Self::AL,
        }
    }

    /// The 2-bit code.
    pub const fn raw(self) -> u32 {
        self as u32
    }
}

/// A source register (the register file is part of the value).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum SrcReg {
    /// v0–v15 (raw 0x00–0x0F).
    Input(u8),
    /// r0–r15 (raw 0x10–0x1F).
    Temp(u8),
    /// c0–c95 (raw 0x20–0x7F; 7-bit fields only).
    Const(u8),
}

impl SrcReg {
    /// Decodes a raw source id (7 bits used).
    pub const fn from_raw(v: u32) -> Self {
        let v = (v & 0x7F) as u8;
        match v {
            0x00..=0x0F => Self::Input(v),
            0x10..=0x1F => Self::Temp(v - 0x10),
            _ => Self::Const(v - 0x20),
        }
    }

    /// The raw 7-bit source id. Indices out of range wrap into their file (`& 15` / clamp).
    pub const fn raw(self) -> u32 {
        match self {
            Self::Input(i) => (i & 0xF) as u32,
            Self::Temp(i) => 0x10 | (i & 0xF) as u32,
            Self::Const(i) => 0x20 + (if i > 95 { 95 } else { i }) as u32,
        }
    }

    /// Whether this register can be named by a 5-bit source field (v or r).
    pub const fn fits_5bit(self) -> bool {
        !matches!(self, Self::Const(_))
    }
}

/// A destination register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum DstReg {
    /// o0–o15 (raw 0x00–0x0F).
    Output(u8),
    /// r0–r15 (raw 0x10–0x1F).
    Temp(u8),
}

impl DstReg {
    /// Decodes a raw 5-bit destination id.
    pub const fn from_raw(v: u32) -> Self {
        let v = (v & 0x1F) as u8;
        if v < 0x10 {
            Self::Output(v)
        } else {
            Self::Temp(v - 0x10)
        }
    }

    /// The raw 5-bit destination id.
    pub const fn raw(self) -> u32 {
        match self {
            Self::Output(i) => (i & 0xF) as u32,
            Self::Temp(i) => 0x10 | (i & 0xF) as u32,
        }
    }
}

/// A fully resolved source operand.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Src {
    /// Register (before relative addressing).
    pub reg: SrcReg,
    /// Relative addressing; only ever set on the operand the format's IDX applies to.
    pub rel: RelAddr,
    /// Component read for each lane `[x, y, z, w]` (0 = x … 3 = w).
    pub swizzle: [u8; 4],
    /// Whether all four lanes are negated after the swizzle.
    pub negate: bool,
}

impl Src {
    /// A plain operand: no relative addressing, identity swizzle, no negation.
    pub const fn plain(reg: SrcReg) -> Self {
        Self {
            reg,
            rel: RelAddr::None,
            swizzle: [0, 1, 2, 3],
            negate: false,
        }
    }
}

/// A destination operand with its write mask.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Dst {
    /// Register written.
    pub reg: DstReg,
    /// Write mask, bit 3 = x, 2 = y, 1 = z, 0 = w.
    pub mask: u8,
}

/// One decoded instruction. Decoding never fails; see the module docs.
///
/// For arithmetic instructions `desc` is the operand-descriptor index the word used (kept for
/// display and re-encoding); the swizzles/negations/mask are already resolved from it.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Instr {
    /// ADD DP3 DP4 DPH DST MUL SGE SLT MAX MIN and the inverted DPHI DSTI SGEI SLTI.
    Binary {
        /// Operation.
        op: BinaryOp,
        /// Destination and mask.
        dst: Dst,
        /// First operand (7-bit field in format 1, 5-bit in 1i).
        src1: Src,
        /// Second operand (5-bit field in format 1, 7-bit in 1i).
        src2: Src,
        /// Encoded in the inverted format 1i.
        inverted: bool,
        /// Operand-descriptor index (0–127).
        desc: u8,
    },
    /// EX2 LG2 LITP FLR RCP RSQ MOV.
    Unary {
        /// Operation.
        op: UnaryOp,
        /// Destination and mask.
        dst: Dst,
        /// The operand.
        src: Src,
        /// Operand-descriptor index.
        desc: u8,
    },
    /// MOVA: a0.x/a0.y ← trunc(src.x/src.y) for the lanes enabled in `mask` (bit 3 = x, 2 = y).
    Mova {
        /// The operand.
        src: Src,
        /// Descriptor mask (only bits 3 and 2 matter).
        mask: u8,
        /// Raw destination field (ignored by hardware; kept for re-encoding).
        dst_raw: u8,
        /// Operand-descriptor index.
        desc: u8,
    },
    /// CMP: cmp.x = x(src1.x, src2.x); cmp.y = y(src1.y, src2.y). The mask is ignored.
    Cmp {
        /// First operand (7-bit).
        src1: Src,
        /// Second operand (5-bit).
        src2: Src,
        /// Comparison for the x lanes.
        op_x: CmpOp,
        /// Comparison for the y lanes.
        op_y: CmpOp,
        /// Operand-descriptor index.
        desc: u8,
    },
    /// MAD / MADI: dst = src1 · src2 + src3 (product rounded first, 0·inf = 0).
    Mad {
        /// Destination and mask.
        dst: Dst,
        /// Factor (5-bit).
        src1: Src,
        /// Factor (7-bit in MAD, 5-bit in MADI).
        src2: Src,
        /// Addend (5-bit in MAD, 7-bit in MADI).
        src3: Src,
        /// MADI encoding (SRC3 is the 7-bit operand).
        inverted: bool,
        /// Operand-descriptor index (0–31).
        desc: u8,
    },
    /// BREAK: leave the innermost LOOP.
    Break,
    /// NOP.
    Nop,
    /// END: stop the invocation.
    End,
    /// EMIT: emit a vertex from the output registers (geometry shader).
    Emit,
    /// BREAKC: BREAK if the condition holds.
    BreakC {
        /// Condition.
        cond: Cond,
    },
    /// CALL: run `[dst, dst + num)` then continue after the CALL.
    Call {
        /// Target word.
        dst: u16,
        /// Instruction count.
        num: u8,
    },
    /// CALLC: CALL if the condition holds.
    CallC {
        /// Condition.
        cond: Cond,
        /// Target word.
        dst: u16,
        /// Instruction count.
        num: u8,
    },
    /// CALLU: CALL if bool uniform `b` is set.
    CallU {
        /// Bool uniform index (0–15).
        b: u8,
        /// Target word.
        dst: u16,
        /// Instruction count.
        num: u8,
    },
    /// IFU: then-block `[pc+1, dst)`, else-block `[dst, dst+num)`, selected by bool uniform `b`.
    IfU {
        /// Bool uniform index.
        b: u8,
        /// First word of the else block.
        dst: u16,
        /// Else-block length.
        num: u8,
    },
    /// IFC: like IFU, selected by the condition.
    IfC {
        /// Condition.
        cond: Cond,
        /// First word of the else block.
        dst: u16,
        /// Else-block length.
        num: u8,
    },
    /// LOOP: body `[pc+1, dst]` (inclusive), `i[i].x + 1` iterations, aL from `i[i].y` by `i[i].z`.
    Loop {
        /// Integer uniform index (0–3).
        i: u8,
        /// Last word of the body.
        dst: u16,
        /// Raw NUM field (unused by hardware; kept for re-encoding).
        num: u8,
    },
    /// SETEMIT: select the emitter vertex slot and the primitive/winding flags for the next EMIT.
    SetEmit {
        /// Emitter buffer slot (0–3).
        vertex_id: u8,
        /// Submit a primitive on the next EMIT.
        prim_emit: bool,
        /// Raise the winding (inverted) flag for that primitive.
        winding: bool,
    },
    /// JMPC: jump to `dst` if the condition holds.
    JmpC {
        /// Condition.
        cond: Cond,
        /// Target word.
        dst: u16,
    },
    /// JMPU: jump to `dst` if `b[b] != invert` (NUM bit 0 = `invert`: jump when the bool is false).
    JmpU {
        /// Bool uniform index.
        b: u8,
        /// Target word.
        dst: u16,
        /// NUM bit 0.
        invert: bool,
    },
    /// An undefined opcode (executes as a NOP in our interpreter; see interp docs).
    Unknown(u32),
}

/// Decodes one instruction word. `opdescs` is the descriptor table (missing entries read as 0).
pub fn decode(word: u32, opdescs: &[u32]) -> Instr {
    let r = RawInstr(word);
    let info = r.info();
    let desc_at = |i: u32| OpDesc(opdescs.get(i as usize).copied().unwrap_or(0));
    let src = |raw: u32, d: OpDesc, n: u8, rel: RelAddr| {
        let (swizzle, negate) = d.source(n);
        Src {
            reg: SrcReg::from_raw(raw),
            rel,
            swizzle,
            negate,
        }
    };
    match info.kind {
        OpKind::Binary(op) => {
            let d = desc_at(r.desc());
            let rel = RelAddr::from_raw(r.idx());
            let dst = Dst {
                reg: DstReg::from_raw(r.dst()),
                mask: d.mask() as u8,
            };
            let (src1, src2) = if info.inverted {
                (
                    src(r.src1_i(), d, 1, RelAddr::None),
                    src(r.src2_i(), d, 2, rel),
                )
            } else {
                (src(r.src1(), d, 1, rel), src(r.src2(), d, 2, RelAddr::None))
            };
            Instr::Binary {
                op,
                dst,
                src1,
                src2,
                inverted: info.inverted,
                desc: r.desc() as u8,
            }
        }
        OpKind::Unary(op) => {
            let d = desc_at(r.desc());
            Instr::Unary {
                op,
                dst: Dst {
                    reg: DstReg::from_raw(r.dst()),
                    mask: d.mask() as u8,
                },
                src: src(r.src1(), d, 1, RelAddr::from_raw(r.idx())),
                desc: r.desc() as u8,
            }
        }
        OpKind::Mova => {
            let d = desc_at(r.desc());
            Instr::Mova {
                src: src(r.src1(), d, 1, RelAddr::from_raw(r.idx())),
                mask: d.mask() as u8,
                dst_raw: r.dst() as u8,
                desc: r.desc() as u8,
            }
        }
        OpKind::Cmp => {
            let d = desc_at(r.desc());
            Instr::Cmp {
                src1: src(r.src1(), d, 1, RelAddr::from_raw(r.idx())),
                src2: src(r.src2(), d, 2, RelAddr::None),
                op_x: CmpOp::from_raw(r.cmp_x()),
                op_y: CmpOp::from_raw(r.cmp_y()),
                desc: r.desc() as u8,
            }
        }
        OpKind::Mad => {
            let d = desc_at(r.mad_desc());
            let rel = RelAddr::from_raw(r.mad_idx());
            let dst = Dst {
                reg: DstReg::from_raw(r.mad_dst()),
                mask: d.mask() as u8,
            };
            let src1 = src(r.mad_src1(), d, 1, RelAddr::None);
            let (src2, src3) = if info.inverted {
                (
                    src(r.madi_src2(), d, 2, RelAddr::None),
                    src(r.madi_src3(), d, 3, rel),
                )
            } else {
                (
                    src(r.mad_src2(), d, 2, rel),
                    src(r.mad_src3(), d, 3, RelAddr::None),
                )
            };
            Instr::Mad {
                dst,
                src1,
                src2,
                src3,
                inverted: info.inverted,
                desc: r.mad_desc() as u8,
            }
        }
        OpKind::Break => Instr::Break,
        OpKind::Nop => Instr::Nop,
        OpKind::End => Instr::End,
        OpKind::Emit => Instr::Emit,
        OpKind::BreakC => Instr::BreakC { cond: cond_of(r) },
        OpKind::Call => Instr::Call {
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::CallC => Instr::CallC {
            cond: cond_of(r),
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::CallU => Instr::CallU {
            b: r.bool_id() as u8,
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::IfU => Instr::IfU {
            b: r.bool_id() as u8,
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::IfC => Instr::IfC {
            cond: cond_of(r),
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::Loop => Instr::Loop {
            i: r.int_id() as u8,
            dst: r.flow_dst() as u16,
            num: r.num() as u8,
        },
        OpKind::SetEmit => Instr::SetEmit {
            vertex_id: r.vertex_id() as u8,
            prim_emit: r.prim_emit() != 0,
            winding: r.winding() != 0,
        },
        OpKind::JmpC => Instr::JmpC {
            cond: cond_of(r),
            dst: r.flow_dst() as u16,
        },
        OpKind::JmpU => Instr::JmpU {
            b: r.bool_id() as u8,
            dst: r.flow_dst() as u16,
            invert: r.num() & 1 != 0,
        },
        OpKind::Unknown => Instr::Unknown(word),
    }
}

fn cond_of(r: RawInstr) -> Cond {
    Cond {
        op: CondOp::from_raw(r.cond_op()),
        ref_x: r.ref_x() != 0,
        ref_y: r.ref_y() != 0,
    }
}

// ---------------------------------------------------------------------------------------------
// Encoding
// ---------------------------------------------------------------------------------------------

/// Why an [`Instr`] cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// A c register was placed in an operand that only has a 5-bit field.
    #[error("operand {operand} of {mnemonic} cannot name a float uniform (5-bit field)")]
    ConstIn5BitField {
        /// Mnemonic.
        mnemonic: &'static str,
        /// 1-based operand number.
        operand: u8,
    },
    /// Relative addressing on an operand the format's IDX does not apply to.
    #[error("operand {operand} of {mnemonic} cannot use relative addressing")]
    RelOnWrongOperand {
        /// Mnemonic.
        mnemonic: &'static str,
        /// 1-based operand number.
        operand: u8,
    },
    /// A register index outside its file (v/r/o 0–15, c 0–95).
    #[error("register index {index} out of range in {mnemonic}")]
    RegisterOutOfRange {
        /// Mnemonic.
        mnemonic: &'static str,
        /// The index.
        index: u8,
    },
    /// A field value too large for its encoding.
    #[error("{field} = {value} does not fit in {mnemonic}")]
    FieldTooLarge {
        /// Mnemonic.
        mnemonic: &'static str,
        /// Field name.
        field: &'static str,
        /// Value given.
        value: u32,
    },
    /// The binary op has no inverted form (only DPH, DST, SGE, SLT do).
    #[error("{mnemonic} has no inverted form")]
    NoInvertedForm {
        /// Mnemonic.
        mnemonic: &'static str,
    },
    /// Two instructions need different contents in the same operand-descriptor slot.
    #[error("operand descriptor {index} is needed with two different contents")]
    DescriptorConflict {
        /// The descriptor index.
        index: u8,
    },
    /// An `Unknown` word that actually has a defined opcode.
    #[error("Unknown({0:#010x}) carries a defined opcode")]
    NotUnknown(u32),
}

/// An encoded instruction: the program word and, for instructions with operands, the operand
/// descriptor it expects at index `desc`. Like picasso, fields the instruction does not use
/// (absent sources, CMP's mask) are written as 0.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Encoded {
    /// Program word.
    pub word: u32,
    /// `(index, descriptor word)` for arithmetic instructions.
    pub opdesc: Option<(u8, u32)>,
}

fn check_src(
    s: &Src,
    mnemonic: &'static str,
    operand: u8,
    five_bit: bool,
    rel_ok: bool,
) -> Result<u32, EncodeError> {
    let index = match s.reg {
        SrcReg::Input(i) | SrcReg::Temp(i) if i > 15 => Some(i),
        SrcReg::Const(i) if i > 95 => Some(i),
        _ => None,
    };
    if let Some(index) = index {
        return Err(EncodeError::RegisterOutOfRange { mnemonic, index });
    }
    if five_bit && !s.reg.fits_5bit() {
        return Err(EncodeError::ConstIn5BitField { mnemonic, operand });
    }
    if !rel_ok && s.rel != RelAddr::None {
        return Err(EncodeError::RelOnWrongOperand { mnemonic, operand });
    }
    if s.swizzle.iter().any(|&c| c > 3) {
        return Err(EncodeError::FieldTooLarge {
            mnemonic,
            field: "swizzle",
            value: u32::from(swizzle_to_selector(s.swizzle)),
        });
    }
    Ok(s.reg.raw())
}

fn check_dst(d: &Dst, mnemonic: &'static str) -> Result<u32, EncodeError> {
    let (DstReg::Output(i) | DstReg::Temp(i)) = d.reg;
    if i > 15 {
        return Err(EncodeError::RegisterOutOfRange { mnemonic, index: i });
    }
    if d.mask > 15 {
        return Err(EncodeError::FieldTooLarge {
            mnemonic,
            field: "mask",
            value: u32::from(d.mask),
        });
    }
    Ok(d.reg.raw())
}

fn check_field(
    mnemonic: &'static str,
    field: &'static str,
    value: u32,
    bits: u32,
) -> Result<u32, EncodeError> {
    if value >> bits != 0 {
        Err(EncodeError::FieldTooLarge {
            mnemonic,
            field,
            value,
        })
    } else {
        Ok(value)
    }
}

/// Swizzle/negate written for source fields an instruction does not use: all zero, as picasso
/// writes them (`OPDESC_MAKE` with 0 for absent sources).
const UNUSED_SRC: ([u8; 4], bool) = ([0; 4], false);

impl Instr {
    /// The op-info row of this instruction (for `Unknown`, of its raw opcode).
    pub fn info(&self) -> &'static OpInfo {
        op_info(self.opcode())
    }

    /// The 6-bit opcode this instruction encodes to (MAD/MADI/CMP: the lowest of their range).
    pub fn opcode(&self) -> u32 {
        match *self {
            Instr::Binary {
                op: bop, inverted, ..
            } => match (bop, inverted) {
                (BinaryOp::Add, _) => op::ADD,
                (BinaryOp::Dp3, _) => op::DP3,
                (BinaryOp::Dp4, _) => op::DP4,
                (BinaryOp::Dph, false) => op::DPH,
                (BinaryOp::Dph, true) => op::DPHI,
                (BinaryOp::Dst, false) => op::DST,
                (BinaryOp::Dst, true) => op::DSTI,
                (BinaryOp::Mul, _) => op::MUL,
                (BinaryOp::Sge, false) => op::SGE,
                (BinaryOp::Sge, true) => op::SGEI,
                (BinaryOp::Slt, false) => op::SLT,
                (BinaryOp::Slt, true) => op::SLTI,
                (BinaryOp::Max, _) => op::MAX,
                (BinaryOp::Min, _) => op::MIN,
            },
            Instr::Unary { op: uop, .. } => match uop {
                UnaryOp::Ex2 => op::EX2,
                UnaryOp::Lg2 => op::LG2,
                UnaryOp::Litp => op::LITP,
                UnaryOp::Flr => op::FLR,
                UnaryOp::Rcp => op::RCP,
                UnaryOp::Rsq => op::RSQ,
                UnaryOp::Mov => op::MOV,
            },
            Instr::Mova { .. } => op::MOVA,
            Instr::Cmp { .. } => op::CMP,
            Instr::Mad {
                inverted: false, ..
            } => op::MAD,
            Instr::Mad { inverted: true, .. } => op::MADI,
            Instr::Break => op::BREAK,
            Instr::Nop => op::NOP,
            Instr::End => op::END,
            Instr::Emit => op::EMIT,
            Instr::BreakC { .. } => op::BREAKC,
            Instr::Call { .. } => op::CALL,
            Instr::CallC { .. } => op::CALLC,
            Instr::CallU { .. } => op::CALLU,
            Instr::IfU { .. } => op::IFU,
            Instr::IfC { .. } => op::IFC,
            Instr::Loop { .. } => op::LOOP,
            Instr::SetEmit { .. } => op::SETEMIT,
            Instr::JmpC { .. } => op::JMPC,
            Instr::JmpU { .. } => op::JMPU,
            Instr::Unknown(w) => w >> 26,
        }
    }

    /// The operand-descriptor bits this instruction reads: the mask (bits 0–3) for instructions
    /// with a destination or MOVA, and the negate+swizzle fields of the sources it has (source 1:
    /// bits 4–12, source 2: 13–21, source 3: 22–30). 0 for instructions without a descriptor.
    pub fn opdesc_used_bits(&self) -> u32 {
        const MASK: u32 = 0xF;
        const S1: u32 = 0x1FF << 4;
        const S2: u32 = 0x1FF << 13;
        const S3: u32 = 0x1FF << 22;
        match self {
            Instr::Binary { .. } => MASK | S1 | S2,
            Instr::Unary { .. } | Instr::Mova { .. } => MASK | S1,
            Instr::Cmp { .. } => S1 | S2,
            Instr::Mad { .. } => MASK | S1 | S2 | S3,
            _ => 0,
        }
    }

    /// Lowercase mnemonic (`"dphi"`, `"madi"`, … for the inverted forms).
    pub fn mnemonic(&self) -> &'static str {
        self.info().mnemonic
    }

    /// Encodes back into a program word (and the operand descriptor it needs).
    ///
    /// `decode(encode(x).word, table with encode(x).opdesc) == x` for every encodable `x`.
    pub fn encode(&self) -> Result<Encoded, EncodeError> {
        let m = self.mnemonic();
        let flow = |dst: u16| check_field(m, "dst", u32::from(dst), 12);
        let plain = |word: RawInstr| {
            Ok(Encoded {
                word: word.0,
                opdesc: None,
            })
        };
        match self {
            Instr::Binary {
                op: bop,
                dst,
                src1,
                src2,
                inverted,
                desc,
            } => {
                let opcode = self.opcode();
                if *inverted
                    && !matches!(
                        bop,
                        BinaryOp::Dph | BinaryOp::Dst | BinaryOp::Sge | BinaryOp::Slt
                    )
                {
                    return Err(EncodeError::NoInvertedForm { mnemonic: m });
                }
                let d = check_dst(dst, m)?;
                let desc = check_field(m, "desc", u32::from(*desc), 7)?;
                let word = if *inverted {
                    let s1 = check_src(src1, m, 1, true, false)?;
                    let s2 = check_src(src2, m, 2, false, true)?;
                    RawInstr::format1i(opcode, d, src2.rel.raw(), s1, s2, desc)
                } else {
                    let s1 = check_src(src1, m, 1, false, true)?;
                    let s2 = check_src(src2, m, 2, true, false)?;
                    RawInstr::format1(opcode, d, src1.rel.raw(), s1, s2, desc)
                };
                let od = OpDesc::new(
                    dst.mask,
                    (src1.swizzle, src1.negate),
                    (src2.swizzle, src2.negate),
                    UNUSED_SRC,
                );
                Ok(Encoded {
                    word: word.0,
                    opdesc: Some((desc as u8, od.0)),
                })
            }
            Instr::Unary { dst, src, desc, .. } => {
                let d = check_dst(dst, m)?;
                let desc = check_field(m, "desc", u32::from(*desc), 7)?;
                let s = check_src(src, m, 1, false, true)?;
                let word = RawInstr::format1(self.opcode(), d, src.rel.raw(), s, 0, desc);
                let od = OpDesc::new(dst.mask, (src.swizzle, src.negate), UNUSED_SRC, UNUSED_SRC);
                Ok(Encoded {
                    word: word.0,
                    opdesc: Some((desc as u8, od.0)),
                })
            }
            Instr::Mova {
                src,
                mask,
                dst_raw,
                desc,
            } => {
                let desc = check_field(m, "desc", u32::from(*desc), 7)?;
                let dr = check_field(m, "dst_raw", u32::from(*dst_raw), 5)?;
                let mask = check_field(m, "mask", u32::from(*mask), 4)?;
                let s = check_src(src, m, 1, false, true)?;
                let word = RawInstr::format1(op::MOVA, dr, src.rel.raw(), s, 0, desc);
                let od = OpDesc::new(
                    mask as u8,
                    (src.swizzle, src.negate),
                    UNUSED_SRC,
                    UNUSED_SRC,
                );
                Ok(Encoded {
                    word: word.0,
                    opdesc: Some((desc as u8, od.0)),
                })
            }
            Instr::Cmp {
                src1,
                src2,
                op_x,
                op_y,
                desc,
            } => {
                let desc = check_field(m, "desc", u32::from(*desc), 7)?;
                let s1 = check_src(src1, m, 1, false, true)?;
                let s2 = check_src(src2, m, 2, true, false)?;
                let word = RawInstr::format1c(op_x.raw(), op_y.raw(), src1.rel.raw(), s1, s2, desc);
                // CMP ignores the mask; picasso writes 0 there.
                let od = OpDesc::new(
                    0,
                    (src1.swizzle, src1.negate),
                    (src2.swizzle, src2.negate),
                    UNUSED_SRC,
                );
                Ok(Encoded {
                    word: word.0,
                    opdesc: Some((desc as u8, od.0)),
                })
            }
            Instr::Mad {
                dst,
                src1,
                src2,
                src3,
                inverted,
                desc,
            } => {
                let d = check_dst(dst, m)?;
                let desc = check_field(m, "desc", u32::from(*desc), 5)?;
                let s1 = check_src(src1, m, 1, true, false)?;
                let word = if *inverted {
                    let s2 = check_src(src2, m, 2, true, false)?;
                    let s3 = check_src(src3, m, 3, false, true)?;
                    RawInstr::format5i(d, src3.rel.raw(), s1, s2, s3, desc)
                } else {
                    let s2 = check_src(src2, m, 2, false, true)?;
                    let s3 = check_src(src3, m, 3, true, false)?;
                    RawInstr::format5(d, src2.rel.raw(), s1, s2, s3, desc)
                };
                let od = OpDesc::new(
                    dst.mask,
                    (src1.swizzle, src1.negate),
                    (src2.swizzle, src2.negate),
                    (src3.swizzle, src3.negate),
                );
                Ok(Encoded {
                    word: word.0,
                    opdesc: Some((desc as u8, od.0)),
                })
            }
            Instr::Break | Instr::Nop | Instr::End | Instr::Emit => {
                plain(RawInstr::format0(self.opcode()))
            }
            Instr::BreakC { cond } => plain(RawInstr::format2(
                op::BREAKC,
                cond.ref_x,
                cond.ref_y,
                cond.op.raw(),
                0,
                0,
            )),
            Instr::Call { dst, num } => plain(RawInstr::format2(
                op::CALL,
                false,
                false,
                0,
                flow(*dst)?,
                u32::from(*num),
            )),
            Instr::CallC { cond, dst, num } => plain(RawInstr::format2(
                op::CALLC,
                cond.ref_x,
                cond.ref_y,
                cond.op.raw(),
                flow(*dst)?,
                u32::from(*num),
            )),
            Instr::IfC { cond, dst, num } => plain(RawInstr::format2(
                op::IFC,
                cond.ref_x,
                cond.ref_y,
                cond.op.raw(),
                flow(*dst)?,
                u32::from(*num),
            )),
            Instr::JmpC { cond, dst } => plain(RawInstr::format2(
                op::JMPC,
                cond.ref_x,
                cond.ref_y,
                cond.op.raw(),
                flow(*dst)?,
                0,
            )),
            Instr::CallU { b, dst, num } | Instr::IfU { b, dst, num } => {
                let b = check_field(m, "bool id", u32::from(*b), 4)?;
                plain(RawInstr::format3(
                    self.opcode(),
                    b,
                    flow(*dst)?,
                    u32::from(*num),
                ))
            }
            Instr::JmpU { b, dst, invert } => {
                let b = check_field(m, "bool id", u32::from(*b), 4)?;
                plain(RawInstr::format3(
                    op::JMPU,
                    b,
                    flow(*dst)?,
                    u32::from(*invert),
                ))
            }
            Instr::Loop { i, dst, num } => {
                let i = check_field(m, "int id", u32::from(*i), 2)?;
                plain(RawInstr::format3(op::LOOP, i, flow(*dst)?, u32::from(*num)))
            }
            Instr::SetEmit {
                vertex_id,
                prim_emit,
                winding,
            } => {
                let v = check_field(m, "vertex id", u32::from(*vertex_id), 2)?;
                plain(RawInstr::format4(v, *prim_emit, *winding))
            }
            Instr::Unknown(w) => {
                if op_info(w >> 26).kind != OpKind::Unknown {
                    return Err(EncodeError::NotUnknown(*w));
                }
                plain(RawInstr(*w))
            }
        }
    }
}

/// Encodes a list of instructions into program words and an operand-descriptor table.
///
/// Descriptors are placed at the index each instruction names. Several instructions may share an
/// index when the descriptor bits they use agree (like picasso's descriptor reuse); bits no
/// instruction uses stay 0. A real conflict returns [`EncodeError::DescriptorConflict`] with the
/// position of the instruction. Convenient for tests and tiny generated shaders.
pub fn encode_program(instrs: &[Instr]) -> Result<(Vec<u32>, Vec<u32>), (usize, EncodeError)> {
    let mut code = Vec::with_capacity(instrs.len());
    // (value, bits that some instruction uses)
    let mut descs: Vec<(u32, u32)> = Vec::new();
    for (pc, instr) in instrs.iter().enumerate() {
        let enc = instr.encode().map_err(|e| (pc, e))?;
        code.push(enc.word);
        if let Some((i, d)) = enc.opdesc {
            let used = instr.opdesc_used_bits();
            let i = usize::from(i);
            if descs.len() <= i {
                descs.resize(i + 1, (0, 0));
            }
            let (value, care) = descs[i];
            if (value ^ d) & care & used != 0 {
                return Err((pc, EncodeError::DescriptorConflict { index: i as u8 }));
            }
            descs[i] = ((value & care) | (d & used), care | used);
        }
    }
    Ok((code, descs.into_iter().map(|(v, _)| v).collect()))
}

// ---------------------------------------------------------------------------------------------
// Register access sets (data-flow highlighting)
// ---------------------------------------------------------------------------------------------

/// A register (or register-like state) an instruction reads or writes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum RegRef {
    /// Input register v0–v15.
    Input(u8),
    /// Temporary r0–r15.
    Temp(u8),
    /// Float uniform c0–c95 (for relative operands: the base register).
    Const(u8),
    /// Output register o0–o15.
    Output(u8),
    /// Address register a0.x.
    A0X,
    /// Address register a0.y.
    A0Y,
    /// Loop counter aL.
    AL,
    /// Condition flag cmp.x.
    CmpX,
    /// Condition flag cmp.y.
    CmpY,
    /// Bool uniform b0–b15.
    Bool(u8),
    /// Integer uniform i0–i3.
    Int(u8),
}

/// One register access: which register, which lanes (bit 3 = x … bit 0 = w; 0 for scalars),
/// and the relative-addressing register that offsets it (reads only).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub struct Access {
    /// The register.
    pub reg: RegRef,
    /// Lanes touched (vector registers) or 0.
    pub lanes: u8,
    /// Relative addressing applied to the register index.
    pub rel: RelAddr,
}

impl Access {
    const fn scalar(reg: RegRef) -> Self {
        Self {
            reg,
            lanes: 0,
            rel: RelAddr::None,
        }
    }
}

fn src_access(s: &Src, lanes_used: u8, out: &mut Vec<Access>) {
    let mut lanes = 0u8;
    for (lane, &comp) in s.swizzle.iter().enumerate() {
        if lanes_used & (8 >> lane) != 0 {
            lanes |= 8 >> (comp & 3);
        }
    }
    let reg = match s.reg {
        SrcReg::Input(i) => RegRef::Input(i),
        SrcReg::Temp(i) => RegRef::Temp(i),
        SrcReg::Const(i) => RegRef::Const(i),
    };
    out.push(Access {
        reg,
        lanes,
        rel: s.rel,
    });
    match s.rel {
        RelAddr::None => {}
        RelAddr::A0X => out.push(Access::scalar(RegRef::A0X)),
        RelAddr::A0Y => out.push(Access::scalar(RegRef::A0Y)),
        RelAddr::AL => out.push(Access::scalar(RegRef::AL)),
    }
}

fn dst_access(d: &Dst) -> Access {
    let reg = match d.reg {
        DstReg::Output(i) => RegRef::Output(i),
        DstReg::Temp(i) => RegRef::Temp(i),
    };
    Access {
        reg,
        lanes: d.mask & 0xF,
        rel: RelAddr::None,
    }
}

fn cond_reads(c: &Cond, out: &mut Vec<Access>) {
    if c.op != CondOp::Y {
        out.push(Access::scalar(RegRef::CmpX));
    }
    if c.op != CondOp::X {
        out.push(Access::scalar(RegRef::CmpY));
    }
}

impl Instr {
    /// Registers this instruction reads, with the source lanes actually consumed.
    pub fn reads(&self) -> Vec<Access> {
        let mut out = Vec::new();
        match self {
            Instr::Binary {
                op,
                dst,
                src1,
                src2,
                ..
            } => {
                let (l1, l2) = match op {
                    BinaryOp::Dp3 => (0b1110, 0b1110),
                    BinaryOp::Dp4 => (0xF, 0xF),
                    BinaryOp::Dph => (0b1110, 0xF),
                    // DST: (1, a.y*b.y, a.z, b.w)
                    BinaryOp::Dst => (dst.mask & 0b0110, dst.mask & 0b0101),
                    _ => (dst.mask, dst.mask),
                };
                src_access(src1, l1, &mut out);
                src_access(src2, l2, &mut out);
            }
            Instr::Unary { op, dst, src, .. } => {
                let l = match op {
                    UnaryOp::Ex2 | UnaryOp::Lg2 | UnaryOp::Rcp | UnaryOp::Rsq => 0b1000,
                    UnaryOp::Litp => 0b1101,
                    UnaryOp::Flr | UnaryOp::Mov => dst.mask,
                };
                src_access(src, l, &mut out);
            }
            Instr::Mova { src, mask, .. } => src_access(src, mask & 0b1100, &mut out),
            Instr::Cmp { src1, src2, .. } => {
                src_access(src1, 0b1100, &mut out);
                src_access(src2, 0b1100, &mut out);
            }
            Instr::Mad {
                dst,
                src1,
                src2,
                src3,
                ..
            } => {
                src_access(src1, dst.mask, &mut out);
                src_access(src2, dst.mask, &mut out);
                src_access(src3, dst.mask, &mut out);
            }
            Instr::BreakC { cond }
            | Instr::CallC { cond, .. }
            | Instr::IfC { cond, .. }
            | Instr::JmpC { cond, .. } => {
                cond_reads(cond, &mut out);
            }
            Instr::CallU { b, .. } | Instr::IfU { b, .. } | Instr::JmpU { b, .. } => {
                out.push(Access::scalar(RegRef::Bool(*b)))
            }
            Instr::Loop { i, .. } => out.push(Access::scalar(RegRef::Int(*i))),
            Instr::Emit => {
                for o in 0..16 {
                    out.push(Access {
                        reg: RegRef::Output(o),
                        lanes: 0xF,
                        rel: RelAddr::None,
                    });
                }
            }
            Instr::Break
            | Instr::Nop
            | Instr::End
            | Instr::Call { .. }
            | Instr::SetEmit { .. }
            | Instr::Unknown(_) => {}
        }
        out
    }

    /// Registers this instruction writes (destination lanes per its mask).
    pub fn writes(&self) -> Vec<Access> {
        let mut out = Vec::new();
        match self {
            Instr::Binary { dst, .. } | Instr::Mad { dst, .. } => out.push(dst_access(dst)),
            Instr::Unary { op, dst, .. } => {
                out.push(dst_access(dst));
                if *op == UnaryOp::Litp {
                    out.push(Access::scalar(RegRef::CmpX));
                    out.push(Access::scalar(RegRef::CmpY));
                }
            }
            Instr::Mova { mask, .. } => {
                if mask & 0b1000 != 0 {
                    out.push(Access::scalar(RegRef::A0X));
                }
                if mask & 0b0100 != 0 {
                    out.push(Access::scalar(RegRef::A0Y));
                }
            }
            Instr::Cmp { .. } => {
                out.push(Access::scalar(RegRef::CmpX));
                out.push(Access::scalar(RegRef::CmpY));
            }
            Instr::Loop { .. } => out.push(Access::scalar(RegRef::AL)),
            _ => {}
        }
        out
    }

    /// For flow-control instructions, the static target word (DST field).
    pub fn flow_target(&self) -> Option<u16> {
        match *self {
            Instr::Call { dst, .. }
            | Instr::CallC { dst, .. }
            | Instr::CallU { dst, .. }
            | Instr::IfU { dst, .. }
            | Instr::IfC { dst, .. }
            | Instr::Loop { dst, .. }
            | Instr::JmpC { dst, .. }
            | Instr::JmpU { dst, .. } => Some(dst),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Programs
// ---------------------------------------------------------------------------------------------

/// A decoded shader program: raw words, operand descriptors and one [`Instr`] per word.
///
/// Decoded once; cheap to share (`Program::new_shared` returns an `Arc`). Inputs longer than the
/// hardware limits are cut: at most [`MAX_PROGRAM_WORDS`] words and [`MAX_OPDESCS`] descriptors
/// are kept (the PC and DESC fields cannot address more).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    code: Vec<u32>,
    opdescs: Vec<u32>,
    instrs: Vec<Instr>,
}

impl Program {
    /// Decodes `code` with the descriptor table `opdescs`.
    pub fn new(code: &[u32], opdescs: &[u32]) -> Self {
        let code = &code[..code.len().min(MAX_PROGRAM_WORDS)];
        let opdescs = &opdescs[..opdescs.len().min(MAX_OPDESCS)];
        let instrs = code.iter().map(|&w| decode(w, opdescs)).collect();
        Self {
            code: code.to_vec(),
            opdescs: opdescs.to_vec(),
            instrs,
        }
    }

    /// Decodes and wraps in an `Arc` for sharing between engines/threads.
    pub fn new_shared(code: &[u32], opdescs: &[u32]) -> Arc<Self> {
        Arc::new(Self::new(code, opdescs))
    }

    /// The program words.
    pub fn code(&self) -> &[u32] {
        &self.code
    }

    /// The operand descriptors.
    pub fn opdescs(&self) -> &[u32] {
        &self.opdescs
    }

    /// The decoded instructions (same length as [`Program::code`]).
    pub fn instrs(&self) -> &[Instr] {
        &self.instrs
    }

    /// The instruction at word `pc`, if inside the program.
    pub fn get(&self, pc: usize) -> Option<&Instr> {
        self.instrs.get(pc)
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        self.instrs.len()
    }

    /// True when the program has no words.
    pub fn is_empty(&self) -> bool {
        self.instrs.is_empty()
    }

    /// A content hash (FNV-1a 64 over words and descriptors), for caching decoded programs.
    pub fn content_hash(&self) -> u64 {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        let mut eat = |w: u32| {
            for b in w.to_le_bytes() {
                h ^= u64::from(b);
                h = h.wrapping_mul(0x100_0000_01b3);
            }
        };
        eat(self.code.len() as u32);
        self.code.iter().for_each(|&w| eat(w));
        eat(self.opdescs.len() as u32);
        self.opdescs.iter().for_each(|&w| eat(w));
        h
    }
}

#[cfg(test)]
mod tests;
