//! Compiles a decoded [`Program`] once into the fast engine's operation list.
//!
//! Stage: runs once per (program, flush mode) and is cached by [`super::FastEngine`]. Inputs: the
//! decoded instructions. Outputs: [`Compiled`]: one [`Op`] per program word with every source
//! resolved to register-file *planes* (one plane = one component of one register across all
//! lanes; the swizzle is a choice of planes and costs nothing at run time), negation and
//! subnormal flushing folded into splatted uniform planes or flagged as a per-operand
//! preparation step, write masks as lane bit sets, and the register components each operation
//! reads and writes (for the persistent-state analysis described in [`super`]).
//! Registers read: none.

use std::collections::HashMap;

use crate::decode::{
    BinaryOp, CmpOp, Cond, CondOp, DstReg, Instr, Program, RelAddr, Src, SrcReg, UnaryOp,
};
use crate::interp::alu;

/// First plane of the raw input registers v0–v15 (plane = register · 4 + component).
pub(crate) const V_RAW: u16 = 0;
/// First plane of the flushed copies of v0–v15 (flush mode only; filled when read).
pub(crate) const V_FL: u16 = 64;
/// First plane of r0–r15.
pub(crate) const R_BASE: u16 = 128;
/// First plane of o0–o15.
pub(crate) const O_BASE: u16 = 192;
/// First splatted-uniform plane.
pub(crate) const C_BASE: u16 = 256;

/// Bits of the non-float persistent registers in [`Meta`] masks.
pub(crate) const M_A0X: u8 = 1;
/// a0.y.
pub(crate) const M_A0Y: u8 = 2;
/// aL.
pub(crate) const M_AL: u8 = 4;
/// cmp.x.
pub(crate) const M_CMPX: u8 = 8;
/// cmp.y.
pub(crate) const M_CMPY: u8 = 16;

/// Which index register a relative operand adds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RelIndex {
    /// a0.x (per lane).
    A0X,
    /// a0.y (per lane).
    A0Y,
    /// aL (the same for every lane of a warp).
    Al,
}

/// A compiled source operand.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum SrcSpec {
    /// Read planes directly (`planes[lane]` after the swizzle). When `neg` or `flush` is set the
    /// used planes are first copied into scratch with `flush(-x)` / `-x` / `flush(x)` applied.
    Planes {
        /// Plane per operand lane (x, y, z, w after swizzle).
        planes: [u16; 4],
        /// Negate (sign flip, like the reference's `-x`).
        neg: bool,
        /// Flush f24 subnormals after the negation.
        flush: bool,
        /// Operand lanes the operation uses (bit n = lane n).
        used: u8,
    },
    /// `c[base + index]`, gathered per lane (a0) or per warp (aL) from the uniform table.
    Rel {
        /// Register number of the operand (before the offset).
        base: u8,
        /// Component read for each operand lane.
        comps: [u8; 4],
        /// The index register.
        index: RelIndex,
        /// Negate.
        neg: bool,
        /// Flush after negation.
        flush: bool,
        /// Operand lanes used.
        used: u8,
    },
}

/// A compiled destination.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DstSpec {
    /// Plane written for each component x, y, z, w.
    pub planes: [u16; 4],
    /// Components written (bit n = component n; x = bit 0).
    pub mask: u8,
    /// Flush results (flush mode and a flushing operation).
    pub flush: bool,
    /// The result is already flushed when it is not rounded (MOV/FLR of flushed operands), so
    /// the flush can be skipped.
    pub clean: bool,
    /// Components can be computed and stored one at a time: no later component reads a plane
    /// an earlier one writes.
    pub direct: bool,
}

/// Whether storing component by component is safe for `dst` with these sources (lane k of a
/// source feeds component k of the result).
fn direct_ok(dst: &DstSpec, srcs: &[&SrcSpec]) -> bool {
    for s in srcs {
        if let SrcSpec::Planes {
            planes,
            neg: false,
            flush: false,
            used,
        } = **s
        {
            for (k, plane) in planes.iter().enumerate() {
                for c in 0..4 {
                    if k != c
                        && used & (1 << k) != 0
                        && dst.mask & (1 << c) != 0
                        && *plane == dst.planes[c]
                    {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// One compiled operation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Op {
    /// Two-source arithmetic.
    Bin {
        op: BinaryOp,
        dst: DstSpec,
        a: SrcSpec,
        b: SrcSpec,
    },
    /// MAD/MADI.
    Mad {
        dst: DstSpec,
        a: SrcSpec,
        b: SrcSpec,
        c: SrcSpec,
    },
    /// One-source arithmetic (LITP also writes cmp).
    Un {
        op: UnaryOp,
        dst: DstSpec,
        a: SrcSpec,
    },
    /// `MOV oK.xyzw, vJ` (identity swizzle, no negation) in a program without divergent
    /// control flow, where every writer of oK is such a MOV from the same vJ: the lane executor
    /// only records that it ran, and the outputs are written straight from the input batch
    /// (`flush?(v)`, then `dst`'s finishing) without going through planes. See
    /// [`Compiled::pass`].
    Pass {
        /// Output register K.
        reg: u8,
        /// The destination (for the finishing step in rounding mode).
        dst: DstSpec,
    },
    /// MOVA; `mask` bit 0 = a0.x, bit 1 = a0.y.
    Mova { a: SrcSpec, mask: u8 },
    /// CMP.
    Cmp {
        a: SrcSpec,
        b: SrcSpec,
        ops: [CmpOp; 2],
    },
    /// NOP, and arithmetic whose write mask is empty (no effect at all).
    Nop,
    /// Undefined opcode (a counted NOP).
    Unknown,
    /// END.
    End,
    /// BREAK.
    Break,
    /// BREAKC.
    BreakC { cond: Cond },
    /// CALL.
    Call { dst: u16, num: u8 },
    /// CALLC.
    CallC { cond: Cond, dst: u16, num: u8 },
    /// CALLU.
    CallU { b: u8, dst: u16, num: u8 },
    /// IFU.
    IfU { b: u8, dst: u16, num: u8 },
    /// IFC.
    IfC { cond: Cond, dst: u16, num: u8 },
    /// LOOP.
    Loop { i: u8, dst: u16 },
    /// JMPC.
    JmpC { cond: Cond, dst: u16 },
    /// JMPU.
    JmpU { b: u8, dst: u16, invert: bool },
}

/// Register components an operation reads before and writes after it runs.
///
/// `hazard_*` are the reads of components that some instruction of the program may write: a
/// read of such a component that the current invocation has not written yet would see the
/// previous vertex's value (a serial dependency), see [`super`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Meta {
    /// Temp components (bit r·4 + c) read, limited to possibly-written ones.
    pub hazard_r: u64,
    /// a0/aL/cmp bits read, limited to possibly-written ones.
    pub hazard_m: u8,
    /// Temp components (bits 0–63) and output components (bits 64–127) written.
    pub writes_ro: u128,
    /// a0/aL/cmp bits written.
    pub writes_m: u8,
}

/// A splatted uniform plane: `flush?(neg?(c[reg].comp))`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct ConstPlane {
    /// Uniform register (0–95).
    pub reg: u8,
    /// Component.
    pub comp: u8,
    /// Negated.
    pub neg: bool,
    /// Flushed (only set in flush mode).
    pub flush: bool,
}

/// A program compiled for the fast engine.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    /// The words it was compiled from (cache validation).
    pub code: Vec<u32>,
    /// The descriptors it was compiled from.
    pub opdescs: Vec<u32>,
    /// Compiled for flush mode.
    pub flush: bool,
    /// One op per word.
    pub ops: Vec<Op>,
    /// One meta per word.
    pub meta: Vec<Meta>,
    /// Splatted uniform planes, starting at [`C_BASE`].
    pub consts: Vec<ConstPlane>,
    /// The program has SETEMIT/EMIT (geometry shader): run it on the reference interpreter.
    pub serial_only: bool,
    /// Components some instruction may write (r bits 0–63, o bits 64–127).
    pub maywrite_ro: u128,
    /// a0/aL/cmp bits some instruction may write.
    pub maywrite_m: u8,
    /// Raw input components read (bit v·4 + c).
    pub v_raw_read: u64,
    /// Flushed input components read.
    pub v_fl_read: u64,
    /// Input registers read raw or flushed (bit v).
    pub v_regs: u16,
    /// Temp components read by some instruction.
    pub r_read: u64,
    /// Temp components whose every writer flushes its result (flush mode: reads after an
    /// in-invocation write skip the flush). A value carried in from the unit state for such a
    /// component must itself be flushed for the lanes to read it correctly (see `super`).
    pub clean_r: u64,
    /// Some operand uses relative addressing.
    pub uses_rel: bool,
    /// Pass-through outputs: `pass[K] = Some(J)` when every writer of oK is an [`Op::Pass`]
    /// from vJ (its value is `flush?(vJ)`, read through the flushing fetch in flush mode).
    pub pass: [Option<u8>; 16],
    /// No IFC/CALLC/JMPC/BREAKC: every lane of a chunk follows the same path (see
    /// [`super::trace`]).
    pub uniform_flow: bool,
    /// A number no other compilation in this process has (keys work derived from this program,
    /// such as the resolved micro-operations, across batches).
    pub id: u64,
}

/// Source of [`Compiled::id`].
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Compiled {
    /// Total number of planes (registers + splatted uniforms).
    pub fn plane_count(&self) -> usize {
        usize::from(C_BASE) + self.consts.len()
    }

    /// Whether this was compiled from `program` in `flush` mode.
    pub fn matches(&self, program: &Program, flush: bool) -> bool {
        self.flush == flush && self.code == program.code() && self.opdescs == program.opdescs()
    }
}

/// Lane bits (x = bit 0) of a descriptor mask (x = bit 3).
fn lanes_of(mask: u8) -> u8 {
    ((mask >> 3) & 1) | (((mask >> 2) & 1) << 1) | (((mask >> 1) & 1) << 2) | ((mask & 1) << 3)
}

fn cond_reads(cond: Cond) -> u8 {
    match cond.op {
        CondOp::Or | CondOp::And => M_CMPX | M_CMPY,
        CondOp::X => M_CMPX,
        CondOp::Y => M_CMPY,
    }
}

fn dst_bits(reg: DstReg, lanes: u8) -> u128 {
    let (base, i) = match reg {
        DstReg::Temp(i) => (0u32, i & 15),
        DstReg::Output(i) => (64u32, i & 15),
    };
    u128::from(lanes & 15) << (base + u32::from(i) * 4)
}

/// Operand lanes used by the operation, given its destination lanes.
fn used_lanes(instr: &Instr) -> [u8; 3] {
    match *instr {
        Instr::Binary { op, dst, .. } => {
            let m = lanes_of(dst.mask);
            if m == 0 {
                return [0; 3];
            }
            match op {
                BinaryOp::Dp3 => [0b0111, 0b0111, 0],
                BinaryOp::Dp4 => [0b1111, 0b1111, 0],
                BinaryOp::Dph => [0b0111, 0b1111, 0],
                BinaryOp::Dst => {
                    let a = (m & 2) | (m & 4);
                    let b = (m & 2) | (m & 8);
                    [a, b, 0]
                }
                _ => [m, m, 0],
            }
        }
        Instr::Mad { dst, .. } => {
            let m = lanes_of(dst.mask);
            [m, m, m]
        }
        Instr::Unary { op, dst, .. } => {
            let m = lanes_of(dst.mask);
            match op {
                UnaryOp::Litp => [0b1001 | (m & 0b0010), 0, 0],
                _ if m == 0 => [0; 3],
                UnaryOp::Ex2 | UnaryOp::Lg2 | UnaryOp::Rcp | UnaryOp::Rsq => [1, 0, 0],
                _ => [m, 0, 0],
            }
        }
        Instr::Mova { mask, .. } => {
            let m = lanes_of(mask) & 0b11;
            [m, 0, 0]
        }
        Instr::Cmp { .. } => [0b11, 0b11, 0],
        _ => [0; 3],
    }
}

/// Register components read by one source, as (temp bits, misc bits, v bits).
fn src_reads(s: &Src, used: u8) -> (u64, u8, u64) {
    let mut comps = 0u8;
    for lane in 0..4 {
        if used & (1 << lane) != 0 {
            comps |= 1 << (s.swizzle[lane] & 3);
        }
    }
    match s.reg {
        SrcReg::Temp(i) => (u64::from(comps) << (u32::from(i & 15) * 4), 0, 0),
        SrcReg::Input(i) => (0, 0, u64::from(comps) << (u32::from(i & 15) * 4)),
        SrcReg::Const(_) => {
            if used == 0 {
                return (0, 0, 0);
            }
            let m = match s.rel {
                RelAddr::None => 0,
                RelAddr::A0X => M_A0X,
                RelAddr::A0Y => M_A0Y,
                RelAddr::AL => M_AL,
            };
            (0, m, 0)
        }
    }
}

/// The sources of an arithmetic instruction and whether each is read through the flushing
/// fetch (in flush mode).
fn sources(instr: &Instr) -> ([Option<&Src>; 3], bool) {
    match instr {
        Instr::Binary { op, src1, src2, .. } => (
            [Some(src1), Some(src2), None],
            !matches!(op, BinaryOp::Max | BinaryOp::Min),
        ),
        Instr::Unary { src, .. } => ([Some(src), None, None], true),
        Instr::Mad {
            src1, src2, src3, ..
        } => ([Some(src1), Some(src2), Some(src3)], true),
        Instr::Mova { src, .. } => ([Some(src), None, None], false),
        Instr::Cmp { src1, src2, .. } => ([Some(src1), Some(src2), None], false),
        _ => ([None; 3], false),
    }
}

/// Writes of one instruction: (temp/output bits, misc bits, written by MAX/MIN).
fn writes(instr: &Instr) -> (u128, u8, bool) {
    match *instr {
        Instr::Binary { op, dst, .. } => (
            dst_bits(dst.reg, lanes_of(dst.mask)),
            0,
            matches!(op, BinaryOp::Max | BinaryOp::Min),
        ),
        Instr::Unary { op, dst, .. } => {
            let m = if op == UnaryOp::Litp {
                M_CMPX | M_CMPY
            } else {
                0
            };
            (dst_bits(dst.reg, lanes_of(dst.mask)), m, false)
        }
        Instr::Mad { dst, .. } => (dst_bits(dst.reg, lanes_of(dst.mask)), 0, false),
        Instr::Mova { mask, .. } => {
            let l = lanes_of(mask);
            let mut m = 0;
            if l & 1 != 0 {
                m |= M_A0X;
            }
            if l & 2 != 0 {
                m |= M_A0Y;
            }
            (0, m, false)
        }
        Instr::Cmp { .. } => (0, M_CMPX | M_CMPY, false),
        Instr::Loop { .. } => (0, M_AL, false),
        _ => (0, 0, false),
    }
}

struct Builder {
    flush: bool,
    consts: Vec<ConstPlane>,
    const_index: HashMap<ConstPlane, u16>,
    /// Temp components whose every writer flushes its result (values read after an in-invocation
    /// write are then already flushed).
    clean_r: u64,
    v_raw_read: u64,
    v_fl_read: u64,
}

impl Builder {
    fn const_plane(&mut self, p: ConstPlane) -> u16 {
        if let Some(&i) = self.const_index.get(&p) {
            return i;
        }
        let i = C_BASE + self.consts.len() as u16;
        self.consts.push(p);
        self.const_index.insert(p, i);
        i
    }

    fn src(&mut self, s: &Src, used: u8, flushing: bool) -> SrcSpec {
        let fl = flushing && self.flush;
        let comp = |lane: usize| s.swizzle[lane] & 3;
        match s.reg {
            SrcReg::Const(c) if s.rel != RelAddr::None => SrcSpec::Rel {
                base: c,
                comps: [comp(0), comp(1), comp(2), comp(3)],
                index: match s.rel {
                    RelAddr::A0X => RelIndex::A0X,
                    RelAddr::A0Y => RelIndex::A0Y,
                    _ => RelIndex::Al,
                },
                neg: s.negate,
                flush: fl,
                used,
            },
            SrcReg::Const(c) => {
                let mut planes = [0u16; 4];
                for (lane, p) in planes.iter_mut().enumerate() {
                    if used & (1 << lane) != 0 {
                        // Decode keeps c in 0..=95 (7-bit field minus 0x20).
                        *p = self.const_plane(ConstPlane {
                            reg: c.min(95),
                            comp: comp(lane),
                            neg: s.negate,
                            flush: fl,
                        });
                    }
                }
                SrcSpec::Planes {
                    planes,
                    neg: false,
                    flush: false,
                    used,
                }
            }
            SrcReg::Input(i) => {
                let i = u16::from(i & 15);
                let mut planes = [0u16; 4];
                for (lane, p) in planes.iter_mut().enumerate() {
                    let c = u16::from(comp(lane));
                    let bit = 1u64 << (i * 4 + c);
                    if used & (1 << lane) != 0 {
                        if fl {
                            self.v_fl_read |= bit;
                        } else {
                            self.v_raw_read |= bit;
                        }
                    }
                    *p = if fl { V_FL } else { V_RAW } + i * 4 + c;
                }
                // Flushed copies are already flushed; a negation needs a flush afterwards
                // (flush(-x) differs from -flush(x) at zero).
                SrcSpec::Planes {
                    planes,
                    neg: s.negate,
                    flush: fl && s.negate,
                    used,
                }
            }
            SrcReg::Temp(i) => {
                let i = u16::from(i & 15);
                let mut planes = [0u16; 4];
                let mut clean = true;
                for (lane, p) in planes.iter_mut().enumerate() {
                    let c = u16::from(comp(lane));
                    *p = R_BASE + i * 4 + c;
                    if used & (1 << lane) != 0 && self.clean_r & (1u64 << (i * 4 + c)) == 0 {
                        clean = false;
                    }
                }
                SrcSpec::Planes {
                    planes,
                    neg: s.negate,
                    flush: fl && (s.negate || !clean),
                    used,
                }
            }
        }
    }

    fn dst(&self, reg: DstReg, mask: u8, flushing: bool) -> DstSpec {
        let base = match reg {
            DstReg::Temp(i) => R_BASE + u16::from(i & 15) * 4,
            DstReg::Output(i) => O_BASE + u16::from(i & 15) * 4,
        };
        DstSpec {
            planes: [base, base + 1, base + 2, base + 3],
            mask: lanes_of(mask),
            flush: flushing && self.flush,
            clean: false,
            direct: false,
        }
    }
}

/// Compiles `program` for hardware-flush mode (`flush`) or plain IEEE arithmetic.
pub(crate) fn compile(program: &Program, flush: bool) -> Compiled {
    let instrs = program.instrs();
    // Every pass below is a function of the instruction alone plus idempotent updates (bit
    // ORs, constant interning, a per-output state machine that a repeat leaves unchanged), so
    // an instruction equal to the one before it adds nothing: `distinct` skips such repeats,
    // and pass 3 copies the previous op. The shader units' code memory is mostly a long run of
    // one word past the program (zeros), which this makes nearly free to compile.
    let distinct = || {
        instrs
            .iter()
            .enumerate()
            .filter(|&(k, i)| k == 0 || instrs.get(k - 1) != Some(i))
            .map(|(_, i)| i)
    };
    // Pass 1: what may be written, by whom.
    let mut maywrite_ro = 0u128;
    let mut maywrite_m = 0u8;
    let mut maxmin_r = 0u64;
    let mut serial_only = false;
    for instr in distinct() {
        let (ro, m, maxmin) = writes(instr);
        maywrite_ro |= ro;
        maywrite_m |= m;
        if maxmin {
            maxmin_r |= ro as u64;
        }
        if matches!(instr, Instr::Emit | Instr::SetEmit { .. }) {
            serial_only = true;
        }
    }
    // Pass-through outputs (see `Op::Pass`): only without divergent control flow, so every
    // instruction runs on all lanes of a chunk at once.
    let divergent = instrs.iter().any(|i| {
        matches!(
            i,
            Instr::IfC { .. } | Instr::CallC { .. } | Instr::JmpC { .. } | Instr::BreakC { .. }
        )
    });
    let mut pass: [Option<u8>; 16] = [None; 16];
    if !divergent && !serial_only {
        // Per output register: Some(Some(J)) while every writer so far is a pass MOV from vJ,
        // Some(None) once some other writer was seen.
        let mut seen: [Option<Option<u8>>; 16] = [None; 16];
        for instr in distinct() {
            let (ro, _, _) = writes(instr);
            let outs = (ro >> 64) as u64;
            if outs == 0 {
                continue;
            }
            let cand = pass_candidate(instr);
            for (k, seen_k) in seen.iter_mut().enumerate() {
                if outs >> (k * 4) & 15 == 0 {
                    continue;
                }
                *seen_k = match (*seen_k, cand) {
                    (None, Some((o, j))) if usize::from(o) == k => Some(Some(j)),
                    (Some(Some(prev)), Some((o, j))) if usize::from(o) == k && prev == j => {
                        Some(Some(j))
                    }
                    _ => Some(None),
                };
            }
        }
        for (p, s) in pass.iter_mut().zip(seen) {
            *p = s.flatten();
        }
    }
    // UNVERIFIED-free note: CMP's codes 6/7 read the old flag only when the reference is
    // configured to leave it unchanged.
    let cmp_reads_old = alu::CMP_UNKNOWN_OP_RESULT.is_none();
    let mut b = Builder {
        flush,
        consts: Vec::new(),
        const_index: HashMap::new(),
        clean_r: (maywrite_ro as u64) & !maxmin_r,
        v_raw_read: 0,
        v_fl_read: 0,
    };
    let mut ops = Vec::with_capacity(instrs.len());
    let mut meta = Vec::with_capacity(instrs.len());
    let mut r_read = 0u64;
    let mut uses_rel = false;
    let mut prev: Option<&Instr> = None;
    for instr in instrs {
        if prev == Some(instr)
            && let (Some(&op), Some(&m)) = (ops.last(), meta.last())
        {
            ops.push(op);
            meta.push(m);
            continue;
        }
        prev = Some(instr);
        let used = used_lanes(instr);
        let (srcs, flushing) = sources(instr);
        let mut reads_r = 0u64;
        let mut reads_m = 0u8;
        for (s, &u) in srcs.iter().zip(&used) {
            if let Some(s) = s {
                let (r, m, _) = src_reads(s, u);
                reads_r |= r;
                reads_m |= m;
                uses_rel |= m != 0;
            }
        }
        let (writes_ro, writes_m, _) = writes(instr);
        let op = match *instr {
            Instr::Binary {
                op,
                dst,
                ref src1,
                ref src2,
                ..
            } => {
                if lanes_of(dst.mask) == 0 {
                    Op::Nop
                } else {
                    let fl = !matches!(op, BinaryOp::Max | BinaryOp::Min);
                    let mut d = b.dst(dst.reg, dst.mask, fl);
                    let (sa, sb) = (
                        b.src(src1, used[0], flushing),
                        b.src(src2, used[1], flushing),
                    );
                    d.direct = direct_ok(&d, &[&sa, &sb]);
                    Op::Bin {
                        op,
                        dst: d,
                        a: sa,
                        b: sb,
                    }
                }
            }
            Instr::Mad {
                dst,
                ref src1,
                ref src2,
                ref src3,
                ..
            } => {
                if lanes_of(dst.mask) == 0 {
                    Op::Nop
                } else {
                    let mut d = b.dst(dst.reg, dst.mask, true);
                    let (sa, sb, sc) = (
                        b.src(src1, used[0], true),
                        b.src(src2, used[1], true),
                        b.src(src3, used[2], true),
                    );
                    d.direct = direct_ok(&d, &[&sa, &sb, &sc]);
                    Op::Mad {
                        dst: d,
                        a: sa,
                        b: sb,
                        c: sc,
                    }
                }
            }
            Instr::Unary {
                op, dst, ref src, ..
            } => {
                if lanes_of(dst.mask) == 0 && op != UnaryOp::Litp {
                    Op::Nop
                } else if let Some((k, _)) = pass_candidate(instr)
                    && pass[usize::from(k)].is_some()
                {
                    let mut d = b.dst(dst.reg, dst.mask, true);
                    d.clean = true;
                    d.direct = true;
                    Op::Pass { reg: k, dst: d }
                } else {
                    let mut d = b.dst(dst.reg, dst.mask, true);
                    let sa = b.src(src, used[0], true);
                    d.direct = direct_ok(&d, &[&sa]);
                    // In flush mode every fetched operand is flushed (fetch_arith), and MOV and
                    // FLR map flushed values to flushed values.
                    d.clean = matches!(op, UnaryOp::Mov | UnaryOp::Flr);
                    Op::Un { op, dst: d, a: sa }
                }
            }
            Instr::Mova { ref src, mask, .. } => {
                let m = lanes_of(mask) & 0b11;
                if m == 0 {
                    Op::Nop
                } else {
                    Op::Mova {
                        a: b.src(src, used[0], false),
                        mask: m,
                    }
                }
            }
            Instr::Cmp {
                ref src1,
                ref src2,
                op_x,
                op_y,
                ..
            } => {
                if cmp_reads_old {
                    reads_m |= M_CMPX | M_CMPY;
                }
                Op::Cmp {
                    a: b.src(src1, used[0], false),
                    b: b.src(src2, used[1], false),
                    ops: [op_x, op_y],
                }
            }
            Instr::Nop => Op::Nop,
            Instr::Unknown(_) => Op::Unknown,
            Instr::End => Op::End,
            Instr::Break => Op::Break,
            Instr::BreakC { cond } => {
                reads_m |= cond_reads(cond);
                Op::BreakC { cond }
            }
            Instr::Call { dst, num } => Op::Call { dst, num },
            Instr::CallC { cond, dst, num } => {
                reads_m |= cond_reads(cond);
                Op::CallC { cond, dst, num }
            }
            Instr::CallU { b, dst, num } => Op::CallU { b, dst, num },
            Instr::IfU { b, dst, num } => Op::IfU { b, dst, num },
            Instr::IfC { cond, dst, num } => {
                reads_m |= cond_reads(cond);
                Op::IfC { cond, dst, num }
            }
            Instr::Loop { i, dst, .. } => Op::Loop { i, dst },
            Instr::JmpC { cond, dst } => {
                reads_m |= cond_reads(cond);
                Op::JmpC { cond, dst }
            }
            Instr::JmpU { b, dst, invert } => Op::JmpU { b, dst, invert },
            // Only reachable in serial-only programs, which never run here.
            Instr::Emit | Instr::SetEmit { .. } => Op::Nop,
        };
        r_read |= reads_r;
        ops.push(op);
        meta.push(Meta {
            hazard_r: reads_r & (maywrite_ro as u64),
            hazard_m: reads_m & maywrite_m,
            writes_ro,
            writes_m,
        });
    }
    Compiled {
        code: program.code().to_vec(),
        opdescs: program.opdescs().to_vec(),
        flush,
        ops,
        meta,
        consts: b.consts,
        serial_only,
        maywrite_ro,
        maywrite_m,
        v_raw_read: b.v_raw_read,
        v_fl_read: b.v_fl_read,
        v_regs: (0..16).fold(0u16, |m, r| {
            m | (u16::from((b.v_raw_read | b.v_fl_read) >> (r * 4) & 15 != 0) << r)
        }),
        r_read,
        clean_r: b.clean_r,
        uses_rel,
        pass,
        uniform_flow: !divergent,
        id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
    }
}

/// Destination of one [`lane_deps`] entry: a temp (0–63) or output (64–127) component.
pub(crate) const DEP_A0X: u8 = 128;
/// [`lane_deps`] destination a0.y.
pub(crate) const DEP_A0Y: u8 = 129;
/// [`lane_deps`] destination cmp.x.
pub(crate) const DEP_CMPX: u8 = 130;
/// [`lane_deps`] destination cmp.y.
pub(crate) const DEP_CMPY: u8 = 131;

/// What one written component of an arithmetic instruction is computed from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct LaneDep {
    /// The component written: temp/output bit (r·4 + c, outputs + 64) or a `DEP_*` value.
    pub dst: u8,
    /// Temp components read for it (bit r·4 + c).
    pub r: u64,
    /// It reads an input register component.
    pub v: bool,
    /// a0 components ([`M_A0X`], [`M_A0Y`]) that index a relative uniform read for it.
    pub rel: u8,
}

/// Calls `f` once per component `instr` writes, with what that component is computed from
/// (per component: an element-wise operation's x depends on its operands' x lanes only, a dot
/// product's on every lane it reads). Control flow and NOP write nothing.
pub(crate) fn lane_deps(instr: &Instr, mut f: impl FnMut(LaneDep)) {
    let (srcs, _) = sources(instr);
    let dep_of = |used: [u8; 3], dst: u8| {
        let mut d = LaneDep {
            dst,
            ..LaneDep::default()
        };
        for (s, &u) in srcs.iter().zip(&used) {
            if let Some(s) = s {
                let (r, m, v) = src_reads(s, u);
                d.r |= r;
                d.v |= v != 0;
                d.rel |= m & (M_A0X | M_A0Y);
            }
        }
        d
    };
    // The instruction with its destination mask cut to one lane (descriptor bit 3 = x).
    let one_lane = |lane: u8| -> Instr {
        let mut i = *instr;
        match &mut i {
            Instr::Binary { dst, .. } | Instr::Unary { dst, .. } | Instr::Mad { dst, .. } => {
                dst.mask = 8 >> lane;
            }
            _ => {}
        }
        i
    };
    match *instr {
        Instr::Binary { dst, .. } | Instr::Mad { dst, .. } | Instr::Unary { dst, .. } => {
            let lanes = lanes_of(dst.mask);
            let (base, reg) = match dst.reg {
                DstReg::Temp(i) => (0u8, i & 15),
                DstReg::Output(i) => (64u8, i & 15),
            };
            for lane in 0..4u8 {
                if lanes & (1 << lane) != 0 {
                    f(dep_of(used_lanes(&one_lane(lane)), base + reg * 4 + lane));
                }
            }
            if let Instr::Unary {
                op: UnaryOp::Litp, ..
            } = *instr
            {
                let all = dep_of(used_lanes(instr), DEP_CMPX);
                f(all);
                f(LaneDep {
                    dst: DEP_CMPY,
                    ..all
                });
            }
        }
        Instr::Mova { mask, .. } => {
            let lanes = lanes_of(mask);
            if lanes & 1 != 0 {
                f(dep_of([1, 0, 0], DEP_A0X));
            }
            if lanes & 2 != 0 {
                f(dep_of([2, 0, 0], DEP_A0Y));
            }
        }
        Instr::Cmp { .. } => {
            f(dep_of([1, 1, 0], DEP_CMPX));
            f(dep_of([2, 2, 0], DEP_CMPY));
        }
        _ => {}
    }
}

/// `(K, J)` when `instr` is `MOV oK.xyzw, vJ` with the identity swizzle and no negation.
fn pass_candidate(instr: &Instr) -> Option<(u8, u8)> {
    match *instr {
        Instr::Unary {
            op: UnaryOp::Mov,
            dst:
                crate::decode::Dst {
                    reg: DstReg::Output(k),
                    mask: 0b1111,
                },
            ref src,
            ..
        } if src.swizzle == [0, 1, 2, 3]
            && !src.negate
            && src.rel == RelAddr::None
            && matches!(src.reg, SrcReg::Input(_)) =>
        {
            match src.reg {
                SrcReg::Input(j) => Some((k & 15, j & 15)),
                _ => None,
            }
        }
        _ => None,
    }
}
