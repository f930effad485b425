//! Trace steps resolved once per batch into micro-operations.
//!
//! Stage: vertex shading (the straight-line path of [`super::Lanes::run_chunk`]). Inputs: a
//! [`Trace`] of a compiled program, the batch's uniform classes (which splatted uniform planes
//! are finite and non-zero) and the rounding mode. Outputs: a list of [`Micro`] operations that
//! every chunk of the batch then runs. Registers read: none.
//!
//! The generic operation handlers (`binary`, `mad`, `unary`, …) decide per operation and chunk
//! what the compiled operands are (plain planes or prepared scratch), which products need the
//! 0·inf fix-up, how the result is finished (f24 rounding/flushing) and how it is stored. On a
//! trace all of that is the same for every chunk of a batch, so it is decided once here: each
//! micro-operation names its operand planes directly (scratch planes included), carries its
//! finishing step and fix-up flags, and its handler is one lane loop per result plus copies.
//! Operands that need negation, flushing or a relative gather become a separate
//! [`Micro::Prep`] step before their operation (the generic `prep`, so gathers and flushing are
//! the generic engine's own code). Rare operations (LITP, CMP) stay on the generic handlers
//! ([`Micro::Slow`]). Results are computed with the same per-lane functions in the same order as
//! the generic handlers, so both give identical bits.

// Lane loops index several planes with one lane index.
#![allow(clippy::needless_range_loop)]

use crate::decode::{BinaryOp, UnaryOp};
use crate::interp::alu;

use super::super::compile::{C_BASE, Compiled, Op, RelIndex, SrcSpec};
use super::super::trace::{Trace, TraceKey};
use super::{
    Fin, Lanes, Split, copy_plane, dot_checked, dot_const, dot_masked, elem_checked, fill, is_safe,
    mad_checked, mova_bits, split_dst,
};

/// Plane references at or above this value name scratch planes (`SCR + slot·4 + lane`).
const SCR: u16 = 0xF000;

/// One resolved trace step (see the module docs).
#[derive(Clone, Copy, Debug)]
pub(super) enum Micro {
    /// Fill scratch slot `slot` from an operand that needs negation, flushing or a gather.
    Prep { src: SrcSpec, slot: u8, al: i32 },
    /// DP3/DP4/DPH into `dst` planes of `mask`.
    Dot {
        op: BinaryOp,
        x: [u16; 4],
        y: [u16; 4],
        /// Bit k: product k is with a finite non-zero uniform (no 0·inf fix-up).
        safe: u8,
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
        /// No operand plane is a destination plane: results go straight into the destination.
        into: bool,
    },
    /// A [`Micro::Dot`] whose first operand `k` is a splatted uniform (read as one value per
    /// component instead of a plane) and no operand is a destination plane.
    DotK {
        op: BinaryOp,
        k: [u16; 4],
        y: [u16; 4],
        /// As for [`Micro::Dot`].
        safe: u8,
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
    },
    /// Two to four [`Micro::DotK`] DP3/DP4 in a row with the same second operand `y`, the same
    /// finishing and one destination plane each (a matrix transform): one pass over the lanes
    /// reads `y` once and writes every row (`rows` of them; row r: uniform planes `k[r]`,
    /// fix-up mask `safe[r]`, destination plane `dst[r]`). `direct`: the destinations are the
    /// consecutive planes `dst[0] ..`, written in place; otherwise through `out`.
    Mat {
        op: BinaryOp,
        rows: u8,
        k: [[u16; 4]; 4],
        y: [u16; 4],
        safe: [u8; 4],
        fin: Fin,
        dst: [u16; 4],
        direct: bool,
    },
    /// DP4 of an a0-relative uniform row `src` (no negation or swizzle) and planes `y`, no
    /// operand a destination plane: gathered and multiplied in one pass when the a0 range
    /// allows (`simd::dot4_rel`), else through scratch slot 0 as [`Micro::Prep`] + dot.
    DotRel {
        src: SrcSpec,
        y: [u16; 4],
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
        al: i32,
    },
    /// Component-wise two-source operation (ADD, MUL, SGE, SLT, MAX, MIN, DST).
    Elem {
        op: BinaryOp,
        x: [u16; 4],
        y: [u16; 4],
        /// Per component: the product needs no 0·inf fix-up.
        safe: u8,
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
        /// As for [`Micro::Dot`].
        into: bool,
    },
    /// MAD.
    Mad {
        x: [u16; 4],
        y: [u16; 4],
        z: [u16; 4],
        safe: u8,
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
        /// As for [`Micro::Dot`].
        into: bool,
    },
    /// MOV/FLR (per component) and RCP/RSQ/EX2/LG2 (of x, to every written component).
    Un {
        op: UnaryOp,
        x: [u16; 4],
        fin: Fin,
        dst: [u16; 4],
        mask: u8,
        /// Components can be stored one at a time (no later one reads an earlier one's plane).
        direct: bool,
        /// As for [`Micro::Dot`].
        into: bool,
    },
    /// MOVA (`mask` bit 0 = a0.x, bit 1 = a0.y).
    Mova { x: [u16; 4], mask: u8 },
    /// A pass-through output ran.
    Pass { reg: u8 },
    /// Any other operation, on the generic handler.
    Slow { pc: u32, al: i32 },
    /// Copies plane `src` to plane `dst` ([`TEMP`] = a temporary plane).
    Copy { src: u16, dst: u16 },
}

/// The micro-operations of one trace (reused between batches; rebuilt when the trace or the
/// batch changes).
#[derive(Debug, Default)]
pub(super) struct MicroList {
    /// The trace key they were built for (`None` when the batch changed what they depend on).
    pub key: Option<TraceKey>,
    /// [`Compiled::id`] of the program they were built for.
    pub prog: u64,
    /// The rounding mode they were built for.
    pub round: bool,
    /// The operations.
    pub ops: Vec<Micro>,
    /// Build scratch: the plane that currently holds each register plane (see [`Renames`]).
    loc: Vec<u16>,
}

/// Register planes renamed by component-permuting MOVs while a trace is resolved.
///
/// `MOV rN.xyzw, rN.<permutation>` (no negation, no finishing) only permutes which plane holds
/// which component: it is resolved by renaming (`loc[p]` = the plane holding register plane
/// `p`'s value) instead of copying. The map stays a permutation within each register, so no two
/// register planes share a physical plane and every write goes to the written plane's current
/// home. Before a generic ([`Micro::Slow`]) operation and at the end of the trace the planes are
/// moved back home with [`Micro::Copy`] (one copy per moved plane plus one per cycle).
struct Renames<'a> {
    loc: &'a mut Vec<u16>,
    moved: bool,
}

impl Renames<'_> {
    /// The plane holding plane `p` (scratch references pass through).
    fn at(&self, p: u16) -> u16 {
        self.loc.get(usize::from(p)).copied().unwrap_or(p)
    }

    fn map(&self, p: [u16; 4]) -> [u16; 4] {
        p.map(|q| self.at(q))
    }

    /// Applies a full-mask `MOV dst, src` as a renaming if it is a permutation of `dst`'s
    /// current planes; `false` (nothing changed) otherwise.
    fn permute(&mut self, dst: [u16; 4], src: [u16; 4]) -> bool {
        let (d, s) = (self.map(dst), self.map(src));
        let mut ds = d;
        let mut ss = s;
        ds.sort_unstable();
        ss.sort_unstable();
        if ds != ss || ds.windows(2).any(|w| w[0] == w[1]) || src.iter().any(|&q| q >= SCR) {
            return false;
        }
        for c in 0..4 {
            if let Some(l) = self.loc.get_mut(usize::from(dst[c])) {
                *l = s[c];
            }
        }
        self.moved = true;
        true
    }

    /// Emits the copies that move every renamed plane back home.
    fn restore(&mut self, out: &mut Vec<Micro>) {
        if !self.moved {
            return;
        }
        for p0 in 0..self.loc.len() {
            if usize::from(self.loc[p0]) == p0 {
                continue;
            }
            // The cycle through p0: plane p wants the value held by loc[p]. p0's own content
            // (wanted by the plane q with loc[q] = p0) is saved first.
            out.push(Micro::Copy {
                src: p0 as u16,
                dst: TEMP,
            });
            let mut p = p0;
            loop {
                let from = usize::from(self.loc[p]);
                self.loc[p] = p as u16;
                if from == p0 {
                    out.push(Micro::Copy {
                        src: TEMP,
                        dst: p as u16,
                    });
                    break;
                }
                out.push(Micro::Copy {
                    src: from as u16,
                    dst: p as u16,
                });
                p = from;
            }
        }
        self.moved = false;
    }
}

/// [`Micro::Copy`]'s name for the temporary plane.
const TEMP: u16 = 0xFFFF;

/// Operand planes of `s`: its own planes, or scratch slot `slot` after a [`Micro::Prep`].
fn operand(s: &SrcSpec, slot: u8, al: i32, out: &mut Vec<Micro>) -> [u16; 4] {
    match *s {
        SrcSpec::Planes {
            planes,
            neg: false,
            flush: false,
            ..
        } => planes,
        _ => {
            out.push(Micro::Prep { src: *s, slot, al });
            let b = SCR + u16::from(slot) * 4;
            [b, b + 1, b + 2, b + 3]
        }
    }
}

/// The plane a reference names.
#[inline(always)]
fn get<'a, const N: usize>(
    planes: &'a [[f32; N]],
    scr: &'a [[[f32; N]; 4]; 3],
    i: u16,
) -> &'a [f32; N] {
    if i >= SCR {
        let j = usize::from(i - SCR);
        &scr[(j / 4).min(2)][j % 4]
    } else {
        &planes[usize::from(i)]
    }
}

/// Whether no operand plane (of any lane) is a destination plane of `mask`.
fn disjoint(dst: &[u16; 4], mask: u8, srcs: &[[u16; 4]]) -> bool {
    (0..4).all(|c| mask & (1 << c) == 0 || srcs.iter().all(|s| !s.contains(&dst[c])))
}

/// The plane a reference names, with a destination plane split off (`None` if it is that
/// plane).
#[inline(always)]
fn get_split<'a, const N: usize>(
    sp: &Split<'a, N>,
    scr: &'a [[[f32; N]; 4]; 3],
    i: u16,
) -> Option<&'a [f32; N]> {
    if i >= SCR {
        let j = usize::from(i - SCR);
        Some(&scr[(j / 4).min(2)][j % 4])
    } else {
        sp.get(usize::from(i))
    }
}

/// The four planes of an operand with a destination plane split off (`None` if one is it).
#[inline(always)]
fn refs_split<'a, const N: usize>(
    sp: &Split<'a, N>,
    scr: &'a [[[f32; N]; 4]; 3],
    p: [u16; 4],
) -> Option<[&'a [f32; N]; 4]> {
    if p[0] >= SCR {
        let [a, b, c, d] = &scr[usize::from((p[0] - SCR) / 4).min(2)];
        Some([a, b, c, d])
    } else {
        Some([
            sp.get(usize::from(p[0]))?,
            sp.get(usize::from(p[1]))?,
            sp.get(usize::from(p[2]))?,
            sp.get(usize::from(p[3]))?,
        ])
    }
}

/// The four planes of an operand: all scratch (one slot) or all register planes, see
/// [`operand`].
#[inline(always)]
fn refs<'a, const N: usize>(
    planes: &'a [[f32; N]],
    scr: &'a [[[f32; N]; 4]; 3],
    p: [u16; 4],
) -> [&'a [f32; N]; 4] {
    if p[0] >= SCR {
        let [a, b, c, d] = &scr[usize::from((p[0] - SCR) / 4).min(2)];
        [a, b, c, d]
    } else {
        [
            &planes[usize::from(p[0])],
            &planes[usize::from(p[1])],
            &planes[usize::from(p[2])],
            &planes[usize::from(p[3])],
        ]
    }
}

impl<const N: usize> Lanes<N> {
    /// Resolves `t`'s steps for the current batch into `self.micro`.
    pub(super) fn build_micro(&mut self, prog: &Compiled, t: &Trace, round: bool) {
        let mut ops = std::mem::take(&mut self.micro.ops);
        ops.clear();
        let mut loc = std::mem::take(&mut self.micro.loc);
        loc.clear();
        loc.extend(0..prog.plane_count().min(usize::from(SCR)) as u16);
        let mut rn = Renames {
            loc: &mut loc,
            moved: false,
        };
        let cs = &self.const_safe;
        for &(pc, al) in &t.steps {
            let Some(op) = prog.ops.get(pc as usize) else {
                rn.restore(&mut ops);
                ops.push(Micro::Slow { pc, al });
                continue;
            };
            if let Op::Un {
                op: UnaryOp::Mov,
                dst,
                a:
                    SrcSpec::Planes {
                        planes,
                        neg: false,
                        flush: false,
                        ..
                    },
            } = *op
                && dst.mask == 15
                && Fin::of(&dst, round) == Fin::Plain
                && rn.permute(dst.planes, planes)
            {
                continue;
            }
            // Operands and destinations in the planes that currently hold them.
            let operand = |s: &SrcSpec, slot: u8, al: i32, out: &mut Vec<Micro>| {
                let s = match *s {
                    SrcSpec::Planes {
                        planes,
                        neg,
                        flush,
                        used,
                    } => SrcSpec::Planes {
                        planes: rn.map(planes),
                        neg,
                        flush,
                        used,
                    },
                    other => other,
                };
                operand(&s, slot, al, out)
            };
            let dst_of = |d: &super::super::compile::DstSpec| rn.map(d.planes);
            match *op {
                // DP4 of an a0-relative uniform row (no negation, no swizzle) and plain planes:
                // the gather fused into the dot product when the a0 range allows.
                Op::Bin {
                    op: BinaryOp::Dp4,
                    dst,
                    a:
                        a @ SrcSpec::Rel {
                            index: RelIndex::A0X | RelIndex::A0Y,
                            neg: false,
                            comps: [0, 1, 2, 3],
                            ..
                        },
                    b:
                        SrcSpec::Planes {
                            planes,
                            neg: false,
                            flush: false,
                            ..
                        },
                } if dst.mask != 0
                    && matches!(Fin::of(&dst, round), Fin::Plain | Fin::Flush)
                    && disjoint(&dst_of(&dst), dst.mask, &[rn.map(planes)]) =>
                {
                    ops.push(Micro::DotRel {
                        src: a,
                        y: rn.map(planes),
                        fin: Fin::of(&dst, round),
                        dst: dst_of(&dst),
                        mask: dst.mask,
                        al,
                    });
                }
                Op::Bin { op, dst, a, b } => {
                    let safe = |k: usize| is_safe(&a, k, cs) || is_safe(&b, k, cs);
                    let x = operand(&a, 0, al, &mut ops);
                    let y = operand(&b, 1, al, &mut ops);
                    let fin = Fin::of(&dst, round);
                    if matches!(op, BinaryOp::Dp3 | BinaryOp::Dp4 | BinaryOp::Dph) {
                        // DP3 has no fourth product and DPH's is 1·b.w (never 0·inf).
                        let s = (0..4).fold(0u8, |m, k| {
                            let ok = safe(k) || (k == 3 && op != BinaryOp::Dp4);
                            m | (u8::from(ok) << k)
                        });
                        let d = dst_of(&dst);
                        let into = disjoint(&d, dst.mask, &[x, y]);
                        // A uniform first operand (as in a matrix transform; the encodings put
                        // uniforms first in DP3/DP4).
                        let uniform = x.iter().all(|&q| (C_BASE..SCR).contains(&q));
                        if uniform && into && dst.mask != 0 {
                            ops.push(Micro::DotK {
                                op,
                                k: x,
                                y,
                                safe: s,
                                fin,
                                dst: d,
                                mask: dst.mask,
                            });
                        } else {
                            ops.push(Micro::Dot {
                                op,
                                x,
                                y,
                                safe: s,
                                fin,
                                dst: d,
                                mask: dst.mask,
                                into,
                            });
                        }
                    } else {
                        let s = (0..4).fold(0u8, |m, k| m | (u8::from(safe(k)) << k));
                        ops.push(Micro::Elem {
                            op,
                            x,
                            y,
                            safe: s,
                            fin,
                            dst: dst_of(&dst),
                            mask: dst.mask,
                            into: disjoint(&dst_of(&dst), dst.mask, &[x, y]),
                        });
                    }
                }
                Op::Mad { dst, a, b, c } => {
                    let s = (0..4).fold(0u8, |m, k| {
                        m | (u8::from(is_safe(&a, k, cs) || is_safe(&b, k, cs)) << k)
                    });
                    let x = operand(&a, 0, al, &mut ops);
                    let y = operand(&b, 1, al, &mut ops);
                    let z = operand(&c, 2, al, &mut ops);
                    ops.push(Micro::Mad {
                        x,
                        y,
                        z,
                        safe: s,
                        fin: Fin::of(&dst, round),
                        dst: dst_of(&dst),
                        mask: dst.mask,
                        into: disjoint(&dst_of(&dst), dst.mask, &[x, y, z]),
                    });
                }
                Op::Un { op, dst, a } if op != UnaryOp::Litp => {
                    let x = operand(&a, 0, al, &mut ops);
                    ops.push(Micro::Un {
                        op,
                        x,
                        fin: Fin::of(&dst, round),
                        dst: dst_of(&dst),
                        mask: dst.mask,
                        direct: dst.direct,
                        into: disjoint(&dst_of(&dst), dst.mask, &[x]),
                    });
                }
                Op::Mova { a, mask } => {
                    let x = operand(&a, 0, al, &mut ops);
                    ops.push(Micro::Mova { x, mask });
                }
                Op::Pass { reg, .. } => ops.push(Micro::Pass { reg }),
                Op::Nop | Op::Unknown => {}
                _ => {
                    rn.restore(&mut ops);
                    ops.push(Micro::Slow { pc, al });
                }
            }
        }
        rn.restore(&mut ops);
        fuse_mats(&mut ops);
        self.micro.ops = ops;
        self.micro.loc = loc;
        self.micro.key = Some(t.key);
        self.micro.prog = prog.id;
        self.micro.round = round;
    }

    /// Runs the resolved steps on every lane of the chunk (`init` = the lane mask).
    #[inline(always)]
    pub(super) fn run_micro(&mut self, prog: &Compiled, round: bool, init: u64) {
        let ops = std::mem::take(&mut self.micro.ops);
        for m in &ops {
            match *m {
                Micro::Prep { ref src, slot, al } => self.prep(src, usize::from(slot), al),
                Micro::Dot {
                    op,
                    x,
                    y,
                    safe,
                    fin,
                    dst,
                    mask,
                    into,
                } => {
                    let Self {
                        planes, scr, out, ..
                    } = self;
                    if into && mask != 0 {
                        // Straight into the first destination plane, copied to the others.
                        let first = (mask.trailing_zeros() as usize).min(3);
                        let d = usize::from(dst[first]);
                        if let Some((dp, sp)) = split_dst(planes, d)
                            && let (Some(xs), Some(ys)) =
                                (refs_split(&sp, scr, x), refs_split(&sp, scr, y))
                        {
                            dot_checked(op, dp, xs, ys, fin, safe);
                            for c in first + 1..4 {
                                if mask & (1 << c) != 0 {
                                    copy_plane(planes, d, usize::from(dst[c]), 0, true);
                                }
                            }
                            continue;
                        }
                    }
                    {
                        let (xs, ys) = (refs(planes, scr, x), refs(planes, scr, y));
                        dot_checked(op, &mut out[0], xs, ys, fin, safe);
                    }
                    for c in 0..4 {
                        if mask & (1 << c) != 0 {
                            planes[usize::from(dst[c])] = out[0];
                        }
                    }
                }
                Micro::DotK {
                    op,
                    k,
                    y,
                    safe,
                    fin,
                    dst,
                    mask,
                } => {
                    let Self {
                        planes, scr, out, ..
                    } = self;
                    let kv = k.map(|p| planes.get(usize::from(p)).map_or(0.0, |v| v[0]));
                    let first = (mask.trailing_zeros() as usize).min(3);
                    let d = usize::from(dst[first]);
                    if let Some((dp, sp)) = split_dst(planes, d)
                        && let (Some(ks), Some(ys)) =
                            (refs_split(&sp, scr, k), refs_split(&sp, scr, y))
                    {
                        dot_const(op, dp, kv, ks, ys, fin, safe);
                        for c in first + 1..4 {
                            if mask & (1 << c) != 0 {
                                copy_plane(planes, d, usize::from(dst[c]), 0, true);
                            }
                        }
                        continue;
                    }
                    {
                        let (ks, ys) = (refs(planes, scr, k), refs(planes, scr, y));
                        dot_const(op, &mut out[0], kv, ks, ys, fin, safe);
                    }
                    for c in 0..4 {
                        if mask & (1 << c) != 0 {
                            planes[usize::from(dst[c])] = out[0];
                        }
                    }
                }
                Micro::Mat {
                    op,
                    rows,
                    k,
                    y,
                    safe,
                    fin,
                    dst,
                    direct,
                } => {
                    let dp4 = op == BinaryOp::Dp4;
                    match rows {
                        2 => self.mat::<2>(dp4, k, y, safe, fin, dst, direct),
                        3 => self.mat::<3>(dp4, k, y, safe, fin, dst, direct),
                        _ => self.mat::<4>(dp4, k, y, safe, fin, dst, direct),
                    }
                }
                Micro::DotRel {
                    ref src,
                    y,
                    fin,
                    dst,
                    mask,
                    al,
                } => {
                    let first = (mask.trailing_zeros() as usize).min(3);
                    let d = usize::from(dst[first]);
                    if self.dot_rel(src, y, fin, d) != Some(false) {
                        // Not fusable here, or some lane NaN (maybe 0·inf): gather into scratch
                        // and take the checked dot product with its fix-up.
                        self.prep(src, 0, al);
                        let Self { planes, scr, .. } = self;
                        if let Some((dp, sp)) = split_dst(planes, d)
                            && let Some(ys) = refs_split(&sp, scr, y)
                        {
                            let [g0, g1, g2, g3] = &scr[0];
                            dot_checked(BinaryOp::Dp4, dp, [g0, g1, g2, g3], ys, fin, 0);
                        }
                    }
                    for c in first + 1..4 {
                        if mask & (1 << c) != 0 {
                            copy_plane(&mut self.planes, d, usize::from(dst[c]), 0, true);
                        }
                    }
                }
                Micro::Elem {
                    op,
                    x,
                    y,
                    safe,
                    fin,
                    dst,
                    mask,
                    into,
                } => {
                    let Self {
                        planes, scr, out, ..
                    } = self;
                    if into {
                        // No operand is a destination plane: component by component in place.
                        for c in 0..4 {
                            if mask & (1 << c) == 0 {
                                continue;
                            }
                            let s = safe & (1 << c) != 0;
                            let d = usize::from(dst[c]);
                            if let Some((dp, sp)) = split_dst(planes, d)
                                && let (Some(xs), Some(ys)) =
                                    (get_split(&sp, scr, x[c]), get_split(&sp, scr, y[c]))
                            {
                                elem_checked(op, c, dp, xs, ys, fin, s);
                                continue;
                            }
                            {
                                let (xs, ys) = (get(planes, scr, x[c]), get(planes, scr, y[c]));
                                elem_checked(op, c, &mut out[c], xs, ys, fin, s);
                            }
                            planes[d] = out[c];
                        }
                        continue;
                    }
                    {
                        let (xs, ys) = (refs(planes, scr, x), refs(planes, scr, y));
                        for c in 0..4 {
                            if mask & (1 << c) != 0 {
                                let s = safe & (1 << c) != 0;
                                elem_checked(op, c, &mut out[c], xs[c], ys[c], fin, s);
                            }
                        }
                    }
                    store(planes, out, dst, mask);
                }
                Micro::Mad {
                    x,
                    y,
                    z,
                    safe,
                    fin,
                    dst,
                    mask,
                    into,
                } => {
                    let Self {
                        planes, scr, out, ..
                    } = self;
                    if into {
                        for c in 0..4 {
                            if mask & (1 << c) == 0 {
                                continue;
                            }
                            let s = safe & (1 << c) != 0;
                            let d = usize::from(dst[c]);
                            let kernel =
                                |o: &mut [f32; N], a: &[f32; N], b: &[f32; N], e: &[f32; N]| {
                                    mad_checked(o, a, b, e, fin, s)
                                };
                            if let Some((dp, sp)) = split_dst(planes, d)
                                && let (Some(a), Some(b), Some(e)) = (
                                    get_split(&sp, scr, x[c]),
                                    get_split(&sp, scr, y[c]),
                                    get_split(&sp, scr, z[c]),
                                )
                            {
                                kernel(dp, a, b, e);
                                continue;
                            }
                            {
                                let (a, b, e) = (
                                    get(planes, scr, x[c]),
                                    get(planes, scr, y[c]),
                                    get(planes, scr, z[c]),
                                );
                                kernel(&mut out[c], a, b, e);
                            }
                            planes[d] = out[c];
                        }
                        continue;
                    }
                    {
                        let xs = refs(planes, scr, x);
                        let ys = refs(planes, scr, y);
                        let zs = refs(planes, scr, z);
                        for c in 0..4 {
                            if mask & (1 << c) == 0 {
                                continue;
                            }
                            let (a, b, d) = (xs[c], ys[c], zs[c]);
                            mad_checked(&mut out[c], a, b, d, fin, safe & (1 << c) != 0);
                        }
                    }
                    store(planes, out, dst, mask);
                }
                Micro::Un {
                    op,
                    x,
                    fin,
                    dst,
                    mask,
                    direct,
                    into,
                } => {
                    let Self {
                        planes, scr, out, ..
                    } = self;
                    if into && mask != 0 && !(op == UnaryOp::Mov && fin == Fin::Plain) {
                        let first = (mask.trailing_zeros() as usize).min(3);
                        let mut done = true;
                        for c in 0..4 {
                            if mask & (1 << c) == 0 {
                                continue;
                            }
                            let per_comp = matches!(op, UnaryOp::Mov | UnaryOp::Flr);
                            if !per_comp && c > first {
                                copy_plane(
                                    planes,
                                    usize::from(dst[first]),
                                    usize::from(dst[c]),
                                    0,
                                    true,
                                );
                                continue;
                            }
                            let src = if per_comp { x[c] } else { x[0] };
                            let Some((o, sp)) = split_dst(planes, usize::from(dst[c])) else {
                                done = false;
                                break;
                            };
                            let Some(a) = get_split(&sp, scr, src) else {
                                done = false;
                                break;
                            };
                            match op {
                                UnaryOp::Mov => fill(o, fin, |l| a[l]),
                                UnaryOp::Flr => fill(o, fin, |l| alu::flr(a[l])),
                                UnaryOp::Rcp => fill(o, fin, |l| alu::rcp(a[l])),
                                UnaryOp::Rsq => fill(o, fin, |l| alu::rsq(a[l])),
                                UnaryOp::Ex2 => fill(o, fin, |l| alu::ex2(a[l])),
                                _ => fill(o, fin, |l| alu::lg2(a[l])),
                            }
                        }
                        if done {
                            continue;
                        }
                    }
                    match op {
                        UnaryOp::Mov if fin == Fin::Plain && direct => {
                            // Plane copies, component by component.
                            for c in 0..4 {
                                if mask & (1 << c) == 0 {
                                    continue;
                                }
                                let d = usize::from(dst[c]);
                                if x[c] >= SCR {
                                    planes[d] = *get(planes, scr, x[c]);
                                } else {
                                    copy_plane(planes, usize::from(x[c]), d, 0, true);
                                }
                            }
                        }
                        UnaryOp::Mov if fin == Fin::Plain => {
                            {
                                let xs = refs(planes, scr, x);
                                for c in 0..4 {
                                    if mask & (1 << c) != 0 {
                                        out[c] = *xs[c];
                                    }
                                }
                            }
                            store(planes, out, dst, mask);
                        }
                        UnaryOp::Mov | UnaryOp::Flr => {
                            {
                                let xs = refs(planes, scr, x);
                                for c in 0..4 {
                                    if mask & (1 << c) == 0 {
                                        continue;
                                    }
                                    let a = xs[c];
                                    if op == UnaryOp::Mov {
                                        fill(&mut out[c], fin, |l| a[l]);
                                    } else {
                                        fill(&mut out[c], fin, |l| alu::flr(a[l]));
                                    }
                                }
                            }
                            store(planes, out, dst, mask);
                        }
                        _ => {
                            {
                                let a = get(planes, scr, x[0]);
                                let o = &mut out[0];
                                match op {
                                    UnaryOp::Rcp => fill(o, fin, |l| alu::rcp(a[l])),
                                    UnaryOp::Rsq => fill(o, fin, |l| alu::rsq(a[l])),
                                    UnaryOp::Ex2 => fill(o, fin, |l| alu::ex2(a[l])),
                                    _ => fill(o, fin, |l| alu::lg2(a[l])),
                                }
                            }
                            for c in 0..4 {
                                if mask & (1 << c) != 0 {
                                    planes[usize::from(dst[c])] = out[0];
                                }
                            }
                        }
                    }
                }
                Micro::Mova { x, mask } => {
                    let Self {
                        planes,
                        scr,
                        a0,
                        a0_range,
                        ..
                    } = self;
                    let xs = refs(planes, scr, x);
                    for k in 0..2 {
                        if mask & (1 << k) != 0 {
                            let (d, s) = (&mut a0[k], xs[k]);
                            for l in 0..N {
                                d[l] = mova_bits(s[l]);
                            }
                            // The range of the new values, for the relative reads that follow.
                            let (mut mn, mut mx) = (i32::MAX, i32::MIN);
                            for l in 0..N {
                                mn = mn.min(d[l]);
                                mx = mx.max(d[l]);
                            }
                            a0_range[k] = Some((mn, mx));
                        }
                    }
                }
                Micro::Pass { reg } => self.pass_done |= 1 << (reg & 15),
                Micro::Copy { src, dst } => {
                    let Self { planes, out, .. } = self;
                    match (src, dst) {
                        (TEMP, d) => {
                            if let Some(p) = planes.get_mut(usize::from(d)) {
                                *p = out[0];
                            }
                        }
                        (s, TEMP) => {
                            if let Some(p) = planes.get(usize::from(s)) {
                                out[0] = *p;
                            }
                        }
                        (s, d) => copy_plane(planes, usize::from(s), usize::from(d), 0, true),
                    }
                }
                Micro::Slow { pc, al } => match prog.ops.get(pc as usize) {
                    Some(Op::Bin { op, dst, a, b }) => {
                        self.binary(*op, dst, a, b, init, true, al, round)
                    }
                    Some(Op::Mad { dst, a, b, c }) => self.mad(dst, a, b, c, init, true, al, round),
                    Some(Op::Un { op, dst, a }) => self.unary(*op, dst, a, init, true, al, round),
                    Some(Op::Mova { a, mask }) => self.mova(a, *mask, init, true, al),
                    Some(Op::Cmp { a, b, ops }) => self.compare(a, b, *ops, init, true, al),
                    Some(&Op::Pass { reg, .. }) => self.pass_done |= 1 << (reg & 15),
                    _ => {}
                },
            }
        }
        self.micro.ops = ops;
    }
}

/// Copies the computed components of `mask` from `out` into their destination planes.
#[inline(always)]
fn store<const N: usize>(planes: &mut [[f32; N]], out: &[[f32; N]; 4], dst: [u16; 4], mask: u8) {
    for c in 0..4 {
        if mask & (1 << c) != 0 {
            planes[usize::from(dst[c])] = out[c];
        }
    }
}

/// Fuses runs of two to four [`Micro::DotK`] into [`Micro::Mat`], in place: DP3 or DP4 (the
/// same for the run), one destination plane each (all distinct), the same second operand and
/// the same plain or flushing finish. Each `DotK` already has no operand plane among its
/// destinations, and they share `y`, so no row reads a plane an earlier row wrote: computing
/// every row in one pass gives each one's result unchanged.
fn fuse_mats(ops: &mut Vec<Micro>) {
    let mut w = 0;
    let mut i = 0;
    while i < ops.len() {
        let m = ops[i];
        if let Micro::DotK {
            op,
            k,
            y,
            safe,
            fin,
            dst,
            mask,
        } = m
            && matches!(op, BinaryOp::Dp3 | BinaryOp::Dp4)
            && matches!(fin, Fin::Plain | Fin::Flush)
            && mask.count_ones() == 1
        {
            let one = |d: [u16; 4], mask: u8| d[(mask.trailing_zeros() as usize).min(3)];
            let (mut ks, mut safes, mut dsts) = ([k; 4], [safe; 4], [one(dst, mask); 4]);
            let mut n = 1;
            while n < 4
                && let Some(&Micro::DotK {
                    op: op2,
                    k: k2,
                    y: y2,
                    safe: safe2,
                    fin: fin2,
                    dst: dst2,
                    mask: mask2,
                }) = ops.get(i + n)
                && op2 == op
                && y2 == y
                && fin2 == fin
                && mask2.count_ones() == 1
                && !dsts[..n].contains(&one(dst2, mask2))
            {
                ks[n] = k2;
                safes[n] = safe2;
                dsts[n] = one(dst2, mask2);
                n += 1;
            }
            if n >= 2 {
                let direct = (0..n).all(|r| usize::from(dsts[r]) == usize::from(dsts[0]) + r);
                ops[w] = Micro::Mat {
                    op,
                    rows: n as u8,
                    k: ks,
                    y,
                    safe: safes,
                    fin,
                    dst: dsts,
                    direct,
                };
                w += 1;
                i += n;
                continue;
            }
        }
        ops[w] = m;
        w += 1;
        i += 1;
    }
    ops.truncate(w);
}

/// The register planes other than `R` consecutive destination planes from `b`.
struct SplitRows<'a, const N: usize> {
    lo: &'a [[f32; N]],
    hi: &'a [[f32; N]],
    b: usize,
    r: usize,
}

impl<'a, const N: usize> SplitRows<'a, N> {
    /// Plane `i`, or `None` when it is a destination plane.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<&'a [f32; N]> {
        if i < self.b {
            self.lo.get(i)
        } else {
            self.hi.get(i.checked_sub(self.b + self.r)?)
        }
    }

    /// The four planes of an operand (scratch or register planes, see [`operand`]), `None` if
    /// one is a destination plane.
    #[inline(always)]
    fn refs(&self, scr: &'a [[[f32; N]; 4]; 3], p: [u16; 4]) -> Option<[&'a [f32; N]; 4]> {
        if p[0] >= SCR {
            let [a, b, c, d] = &scr[usize::from((p[0] - SCR) / 4).min(2)];
            Some([a, b, c, d])
        } else {
            Some([
                self.get(usize::from(p[0]))?,
                self.get(usize::from(p[1]))?,
                self.get(usize::from(p[2]))?,
                self.get(usize::from(p[3]))?,
            ])
        }
    }
}

/// Planes `b .. b + R` mutably and the others shared (`None` when out of range).
#[inline(always)]
fn split_rows<const R: usize, const N: usize>(
    planes: &mut [[f32; N]],
    b: usize,
) -> Option<(&mut [[f32; N]; R], SplitRows<'_, N>)> {
    let (lo, rest) = planes.split_at_mut(b.min(planes.len()));
    let (mid, hi) = rest.split_first_chunk_mut::<R>()?;
    Some((mid, SplitRows { lo, hi, b, r: R }))
}

/// The rows of a [`Micro::Mat`] into `o` in one pass over the lanes: row r is
/// `((k[r].x·y0 + k[r].y·y1) + k[r].z·y2) + k[r].w·y3` (DP4) or the first three products
/// (DP3), the reference's order, with plain products, finished by `f`. Returns per row whether
/// a lane was NaN before finishing (the caller then recomputes that row with the 0·inf
/// fix-up, as [`super::fill_chk`] does for one dot product).
#[inline(always)]
fn mat_pass<const R: usize, const N: usize>(
    dp4: bool,
    o: &mut [[f32; N]; R],
    k: &[[f32; 4]; 4],
    y: [&[f32; N]; 4],
    f: impl Fn(f32) -> f32,
) -> [bool; R] {
    let [y0, y1, y2, y3] = y;
    let mut nan = [0u32; R];
    if dp4 {
        for l in 0..N {
            let (a, b, c, d) = (y0[l], y1[l], y2[l], y3[l]);
            for r in 0..R {
                let v = ((k[r][0] * a + k[r][1] * b) + k[r][2] * c) + k[r][3] * d;
                nan[r] |= u32::from(v.is_nan());
                o[r][l] = f(v);
            }
        }
    } else {
        for l in 0..N {
            let (a, b, c) = (y0[l], y1[l], y2[l]);
            for r in 0..R {
                let v = (k[r][0] * a + k[r][1] * b) + k[r][2] * c;
                nan[r] |= u32::from(v.is_nan());
                o[r][l] = f(v);
            }
        }
    }
    nan.map(|x| x != 0)
}

/// [`mat_pass`] with the finishing step chosen outside the loop (plain or flushing; the fusion
/// leaves f24 rounding to the single dot products).
#[inline(always)]
fn mat_fill<const R: usize, const N: usize>(
    dp4: bool,
    o: &mut [[f32; N]; R],
    k: &[[f32; 4]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
) -> [bool; R] {
    match fin {
        Fin::Flush => mat_pass(dp4, o, k, y, alu::flush),
        _ => mat_pass(dp4, o, k, y, |v| v),
    }
}

impl<const N: usize> Lanes<N> {
    /// Runs a [`Micro::Mat`] of `R` rows.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn mat<const R: usize>(
        &mut self,
        dp4: bool,
        k: [[u16; 4]; 4],
        y: [u16; 4],
        safe: [u8; 4],
        fin: Fin,
        dst: [u16; 4],
        direct: bool,
    ) {
        let op = if dp4 { BinaryOp::Dp4 } else { BinaryOp::Dp3 };
        let Self {
            planes, scr, out, ..
        } = self;
        let kv = k.map(|row| row.map(|p| planes.get(usize::from(p)).map_or(0.0, |v| v[0])));
        if direct
            && let Some((o, sp)) = split_rows::<R, N>(planes, usize::from(dst[0]))
            && let Some(ys) = sp.refs(scr, y)
        {
            let nan = mat_fill(dp4, o, &kv, ys, fin);
            for r in 0..R {
                if nan[r]
                    && let Some(kp) = sp.refs(scr, k[r])
                {
                    dot_masked(op, &mut o[r], kp, ys, fin, safe[r]);
                }
            }
            return;
        }
        let Some(o) = out.first_chunk_mut::<R>() else {
            return;
        };
        let ys = refs(planes, scr, y);
        let nan = mat_fill(dp4, o, &kv, ys, fin);
        for r in 0..R {
            if nan[r] {
                let kp = refs(planes, scr, k[r]);
                dot_masked(op, &mut o[r], kp, ys, fin, safe[r]);
            }
        }
        for r in 0..R {
            if let Some(p) = planes.get_mut(usize::from(dst[r])) {
                *p = o[r];
            }
        }
    }
}
