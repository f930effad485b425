//! Per-lane arithmetic of the shader ALU with the PICA200's edge-case rules.
//!
//! Stage: helper of the reference interpreter. Inputs/outputs: host `f32` values standing for
//! shader float24 values (the interpreter computes in f32, like [C]/[P]; see [`super::ExecConfig`]
//! for optional f24 rounding and subnormal flushing). Registers read: none.
//!
//! Rules and their sources (pica-core.md §5.7/§5.8, testdata/hw-expectations.md):
//! - // HW: [3DB], aroulin fp-tests cases 20–27: `0 × ±inf = 0` inside MUL, MAD and DP*; NaN × 0 = NaN.
//! - // HW: aroulin fp-tests 11/12/16/17: MAX/MIN pick with a strict comparison
//!   (`a > b ? a : b`), so `max(NaN, 0) = 0`, `max(0, NaN) = NaN` (same for MIN).
//! - // HW: aroulin fp-tests 0/3: `rcp(±0) = rsq(±0) = +inf` (no negative zero on hardware).
//! - // HW: aroulin `ex2-tests`/`lg2-tests`: EX2/LG2 read `src.x` only and broadcast.
//! - Sums in DP3/DP4/DPH are evaluated left to right, `((p0 + p1) + p2) + p3`, and MAD is
//!   `round(round(a·b) + c)` (not fused, [3DB]); this is also the bench reference definition.

/// What `MAX(0, -inf)` returns. The sources disagree (pica-core.md §10 #15).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum MaxInfRule {
    /// `a > b ? a : b` for every input: `max(0, -inf) = 0`. [C], [CL], both JITs, and the
    /// expectation of the aroulin fp-tests ROM (case 10).
    StrictCompare,
    /// An infinite second operand always wins: `max(0, -inf) = -inf`. [3DB] and [P-INT].
    InfiniteSecondWins,
}

/// The rule this interpreter uses for MAX.
///
/// UNVERIFIED: we choose [`MaxInfRule::StrictCompare`] because the same strict comparison is what
/// produces the hardware-measured NaN orderings (`max(NaN,0)=0`, `max(0,NaN)=NaN`), it needs no
/// special case, and the hardware test ROM's expectation for case 10 is 0; [3DB]'s −inf note is a
/// single unexplained observation. Flip this const to [`MaxInfRule::InfiniteSecondWins`] to follow
/// [3DB]/[P].
pub const MAX_INF_RULE: MaxInfRule = MaxInfRule::StrictCompare;

/// What CMP writes for the undocumented comparison codes 6 and 7.
///
/// // HW: [3DB] lists them as "always true" and [P] implements that; [C] leaves the flag unchanged.
/// We follow [3DB]. Set to `None` for [C]'s "unchanged" behaviour.
pub const CMP_UNKNOWN_OP_RESULT: Option<bool> = Some(true);

/// The largest magnitude LITP lets through for `y`: 127 + 255/256 ([3DB]/[P]).
pub const LITP_Y_LIMIT: f32 = 127.996_09;

/// Smallest positive float24 magnitude that is not flushed to zero in hardware-flush mode: 2^−62.
///
/// UNVERIFIED: [3DB] "1.0 can be multiplied 63 times by 0.5 until the result compares equal to
/// zero" means 2^−63 flushes, and pica-core.md §5.8 says the largest exponent-0 value
/// (0x00FFFF) and `n/2` for the smallest normal n both become 0 — so everything with an
/// f24 exponent field of 0 (|x| < 2^−62) is treated as a subnormal. (The emulators' decoder reads
/// exponent 0 as a normal number instead; that only matters for decoding raw words, §4.2.)
pub const F24_MIN_NORMAL: f32 = 2.168_404_3e-19; // 2^-62 exactly (0x2080_0000)

/// Flushes f24-subnormal magnitudes (and −0) to +0; NaN and larger values pass unchanged.
#[inline(always)]
pub fn flush(x: f32) -> f32 {
    if x.abs() < F24_MIN_NORMAL { 0.0 } else { x }
}

/// Multiplication with the PICA rule `0 × ±inf = +0` (NaN stays NaN when an input is NaN).
#[inline(always)]
pub fn mul(a: f32, b: f32) -> f32 {
    let p = a * b;
    // A NaN product from non-NaN inputs can only be 0 × inf.
    if p.is_nan() && !a.is_nan() && !b.is_nan() {
        0.0
    } else {
        p
    }
}

/// `((a0·b0 + a1·b1) + a2·b2)` with [`mul`] products.
#[inline(always)]
pub fn dp3(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    (mul(a[0], b[0]) + mul(a[1], b[1])) + mul(a[2], b[2])
}

/// `(((a0·b0 + a1·b1) + a2·b2) + a3·b3)` with [`mul`] products.
#[inline(always)]
pub fn dp4(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    dp3(a, b) + mul(a[3], b[3])
}

/// DP4 with `a.w` replaced by 1.0 (the last product is `1 · b.w = b.w` exactly).
#[inline(always)]
pub fn dph(a: &[f32; 4], b: &[f32; 4]) -> f32 {
    dp3(a, b) + mul(1.0, b[3])
}

/// MAX per [`MAX_INF_RULE`].
#[inline(always)]
pub fn max(a: f32, b: f32) -> f32 {
    match MAX_INF_RULE {
        MaxInfRule::StrictCompare => {
            if a > b {
                a
            } else {
                b
            }
        }
        MaxInfRule::InfiniteSecondWins => {
            if b.is_infinite() {
                b
            } else if a > b {
                a
            } else {
                b
            }
        }
    }
}

/// MIN: `a < b ? a : b` (`min(NaN, 0) = 0`, `min(0, NaN) = NaN`).
#[inline(always)]
pub fn min(a: f32, b: f32) -> f32 {
    if a < b { a } else { b }
}

/// SGE: `a >= b ? 1 : 0` (NaN compares false → 0).
#[inline(always)]
pub fn sge(a: f32, b: f32) -> f32 {
    if a >= b { 1.0 } else { 0.0 }
}

/// SLT: `a < b ? 1 : 0` (NaN compares false → 0).
#[inline(always)]
pub fn slt(a: f32, b: f32) -> f32 {
    if a < b { 1.0 } else { 0.0 }
}

/// RCP: `1 / a`, exact f32 division, with `rcp(±0) = +inf`.
#[inline(always)]
pub fn rcp(a: f32) -> f32 {
    if a == 0.0 { f32::INFINITY } else { 1.0 / a }
}

/// RSQ: `1 / sqrt(a)` (f32 square root, then f32 division), with `rsq(±0) = +inf`,
/// `rsq(negative) = NaN`, `rsq(+inf) = 0`.
#[inline(always)]
pub fn rsq(a: f32) -> f32 {
    if a == 0.0 {
        f32::INFINITY
    } else {
        1.0 / a.sqrt()
    }
}

/// EX2: `2^a` (host `exp2f`; `ex2(-inf) = 0`, `ex2(NaN) = NaN`).
#[inline(always)]
pub fn ex2(a: f32) -> f32 {
    a.exp2()
}

/// LG2: `log2(a)` (host `log2f`; `lg2(±0) = -inf`, negative → NaN).
#[inline(always)]
pub fn lg2(a: f32) -> f32 {
    a.log2()
}

/// FLR: floor (NaN → NaN, ±inf → ±inf).
#[inline(always)]
pub fn flr(a: f32) -> f32 {
    a.floor()
}

/// MOVA conversion: truncation toward zero, saturating at the i32 range, NaN → 0.
///
/// // HW: [3DB] opcode table ("truncating"), every emulator; the relative-addressing text of [3DB]
/// says "rounding" (pica-core.md §10 #30). UNVERIFIED: out-of-range/NaN results (hardware a0 is
/// 8 bits wide at most; [C-JIT] gives i32::MIN for NaN).
#[inline(always)]
pub fn mova(a: f32) -> i32 {
    a as i32
}

/// LITP: `(max(x, 0), clamp(y, ±LITP_Y_LIMIT), 0, max(w, 0))` and the flags
/// `(x >= 0, w >= 0)` ([3DB]/[P]).
#[inline]
pub fn litp(a: &[f32; 4]) -> ([f32; 4], bool, bool) {
    // NaN stays NaN (f32::clamp propagates it). UNVERIFIED for hardware.
    let y = a[1].clamp(-LITP_Y_LIMIT, LITP_Y_LIMIT);
    (
        [max(a[0], 0.0), y, 0.0, max(a[3], 0.0)],
        a[0] >= 0.0,
        a[3] >= 0.0,
    )
}

/// DST: `(1, a.y · b.y, a.z, b.w)` ([3DB]; no emulator implements it).
#[inline]
pub fn dst(a: &[f32; 4], b: &[f32; 4]) -> [f32; 4] {
    [1.0, mul(a[1], b[1]), a[2], b[3]]
}

/// One CMP comparison. NaN operands make every comparison false except NE.
#[inline(always)]
pub fn compare(op: crate::decode::CmpOp, a: f32, b: f32, old: bool) -> bool {
    use crate::decode::CmpOp;
    match op {
        CmpOp::Eq => a == b,
        CmpOp::Ne => a != b,
        CmpOp::Lt => a < b,
        CmpOp::Le => a <= b,
        CmpOp::Gt => a > b,
        CmpOp::Ge => a >= b,
        CmpOp::Unk6 | CmpOp::Unk7 => CMP_UNKNOWN_OP_RESULT.unwrap_or(old),
    }
}
