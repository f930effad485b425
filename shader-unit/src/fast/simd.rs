//! Entry points of the lane executor compiled for AVX2 and AVX-512 (x86-64 only).
//!
//! Stage: vertex shading. Each function here is the portable batch body
//! (`FastEngineN::run_fast_body`, inlined) compiled with more target features, so LLVM
//! vectorises the lane loops 8 or 16 wide instead of SSE2's 4. They are only called when
//! [`super::Simd::detect`] found the features at run time. Registers read: none.
//!
//! This is the crate's only `unsafe`: calling a `#[target_feature]` function from code compiled
//! without those features. The arithmetic is unchanged (no FMA contraction: LLVM never fuses
//! separate Rust `*` and `+`; no approximate instructions), so every level is bit-exact with the
//! reference; the differential tests run every level the machine supports.
//!
//! It also holds the AVX-512 permute gather of relative uniform reads (`gather_cols`) and
//! the AVX2 transpositions of a full chunk (`transpose_in`, `transpose_out`):
//! pure data movement (plus the flush's compare-and-clear on inputs), used by the AVX2 and
//! AVX-512 levels; the baseline level runs the portable loops instead.
#![allow(unsafe_code)]

use crate::decode::Program;
use crate::interp::{BatchStats, Uniforms, VertexBatch};

use super::FastEngineN;
use super::exec::Abort;

#[target_feature(enable = "avx2")]
fn body_avx2<const N: usize>(
    e: &mut FastEngineN<N>,
    program: &Program,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    e.run_fast_body(program, uniforms, entry, inputs, outputs)
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2")]
fn body_avx512<const N: usize>(
    e: &mut FastEngineN<N>,
    program: &Program,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    e.run_fast_body(program, uniforms, entry, inputs, outputs)
}

/// The batch body with AVX2. The engine only selects `Simd::Avx2` when detected.
pub(super) fn run_avx2<const N: usize>(
    e: &mut FastEngineN<N>,
    program: &Program,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return e.run_portable(program, uniforms, entry, inputs, outputs);
    }
    // SAFETY: `body_avx2` requires AVX2, and the check above proved this CPU has it.
    unsafe { body_avx2(e, program, uniforms, entry, inputs, outputs) }
}

/// The batch body with AVX-512. The engine only selects `Simd::Avx512` when detected.
pub(super) fn run_avx512<const N: usize>(
    e: &mut FastEngineN<N>,
    program: &Program,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    if !(std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx2"))
    {
        return e.run_portable(program, uniforms, entry, inputs, outputs);
    }
    // SAFETY: `body_avx512` requires AVX-512 F/VL/BW/DQ and AVX2, all checked just above.
    unsafe { body_avx512(e, program, uniforms, entry, inputs, outputs) }
}

#[target_feature(enable = "avx2")]
fn fold_avx2(bits: &mut [[u32; 4]; 16], outputs: &VertexBatch) {
    crate::bench::fold_bits_body(bits, outputs)
}

/// The benchmark checksum's bit fold with AVX2 (the baseline body when the CPU lacks it).
pub(crate) fn fold_bits_avx2(bits: &mut [[u32; 4]; 16], outputs: &VertexBatch) {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return crate::bench::fold_bits_body(bits, outputs);
    }
    // SAFETY: `fold_avx2` requires AVX2, and the check above proved this CPU has it.
    unsafe { fold_avx2(bits, outputs) }
}

// Components index the accumulator and the lane array together.
#[allow(clippy::needless_range_loop)]
#[target_feature(enable = "avx512f")]
fn fold_avx512(bits: &mut [[u32; 4]; 16], outputs: &VertexBatch) {
    use std::arch::x86_64::*;
    for (r, acc) in bits.iter_mut().enumerate() {
        let Some(vs) = outputs.reg(r) else {
            continue;
        };
        let flat = vs.as_flattened();
        // Four vertices (16 u32) per 64-byte load, two accumulators; lane 4·j + c holds
        // component c. Wrapping addition is associative and commutative, so the fold back per
        // component gives the portable body's result.
        let blocks = flat.chunks_exact(32);
        let rest = blocks.remainder();
        let (mut a0, mut a1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
        for b in blocks {
            let p = b.as_ptr();
            // SAFETY: `b` holds 32 f32, so the two 64-byte loads at offsets 0 and 16 stay
            // inside it.
            let (x, y) = unsafe {
                (
                    _mm512_loadu_si512(p.cast()),
                    _mm512_loadu_si512(p.add(16).cast()),
                )
            };
            a0 = _mm512_add_epi32(a0, x);
            a1 = _mm512_add_epi32(a1, y);
        }
        let mut lanes = [0u32; 16];
        // SAFETY: `lanes` is 16 u32, exactly one 64-byte store.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), _mm512_add_epi32(a0, a1)) };
        for j in 0..4 {
            for c in 0..4 {
                acc[c] = acc[c].wrapping_add(lanes[j * 4 + c]);
            }
        }
        for v in rest.chunks_exact(4) {
            for c in 0..4 {
                acc[c] = acc[c].wrapping_add(v[c].to_bits());
            }
        }
    }
}

/// The benchmark checksum's bit fold with AVX-512 (the baseline body when the CPU lacks it).
pub(crate) fn fold_bits_avx512(bits: &mut [[u32; 4]; 16], outputs: &VertexBatch) {
    if !std::arch::is_x86_feature_detected!("avx512f") {
        return crate::bench::fold_bits_body(bits, outputs);
    }
    // SAFETY: `fold_avx512` requires AVX-512F, checked just above.
    unsafe { fold_avx512(bits, outputs) }
}

/// Relative-read gather of a full chunk with AVX-512: `dst[c][l] = cols[c][ix[l]]`, for the
/// component tables `cols` of the uniform rows. When every index of the chunk lies in one window
/// of 64 rows, each component is 4 window loads and one or two `vpermt2ps` per 16 lanes
/// instead of a 16-byte row copy per lane and a transposition. Returns `false` without touching
/// `dst` when the CPU lacks AVX-512F, `N` is not a multiple of 16 or the indices span more than
/// 64 rows (the caller then copies rows). Pure data movement: bit-identical to the copy.
pub(crate) fn gather_cols<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    ix: &[u32; N],
    dst: &mut [[f32; N]; 4],
) -> bool {
    if !N.is_multiple_of(16) || !std::arch::is_x86_feature_detected!("avx512f") {
        return false;
    }
    // SAFETY: `gather_cols_avx512` requires AVX-512F, and the check above proved this CPU has
    // it.
    unsafe { gather_cols_avx512(cols, ix, dst) }
}

#[target_feature(enable = "avx512f")]
fn gather_cols_avx512<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    ix: &[u32; N],
    dst: &mut [[f32; N]; 4],
) -> bool {
    use std::arch::x86_64::*;
    const W: usize = 64;
    let (mut lo, mut hi) = (u32::MAX, 0u32);
    for &i in ix {
        lo = lo.min(i);
        hi = hi.max(i);
    }
    let (lo, hi) = (lo as usize, hi as usize);
    if hi - lo >= W || lo + W > super::exec::ROWS {
        return false;
    }
    let narrow = hi - lo < 32;
    let base = _mm512_set1_epi32(lo as i32);
    let bit5 = _mm512_set1_epi32(32);
    for (col, d) in cols.iter().zip(dst.iter_mut()) {
        let win = &col[lo..lo + W];
        let p = win.as_ptr();
        // SAFETY: `win` holds 64 f32, so the four 16-float loads at offsets 0, 16, 32 and 48
        // stay inside it.
        let (t0, t1, t2, t3) = unsafe {
            (
                _mm512_loadu_ps(p),
                _mm512_loadu_ps(p.add(16)),
                _mm512_loadu_ps(p.add(32)),
                _mm512_loadu_ps(p.add(48)),
            )
        };
        for b in 0..N / 16 {
            let l = b * 16;
            let is = &ix[l..l + 16];
            // SAFETY: `is` is 16 u32, exactly one unaligned 64-byte load.
            let idx = _mm512_sub_epi32(unsafe { _mm512_loadu_si512(is.as_ptr().cast()) }, base);
            // Indices are 0..64 here: bits 0-4 pick within a 32-row pair, bit 5 the pair.
            let r = if narrow {
                _mm512_permutex2var_ps(t0, idx, t1)
            } else {
                let a = _mm512_permutex2var_ps(t0, idx, t1);
                let c = _mm512_permutex2var_ps(t2, idx, t3);
                _mm512_mask_blend_ps(_mm512_test_epi32_mask(idx, bit5), a, c)
            };
            let dd = &mut d[l..l + 16];
            // SAFETY: `dd` is 16 f32, exactly one unaligned 64-byte store.
            unsafe { _mm512_storeu_ps(dd.as_mut_ptr(), r) };
        }
    }
    true
}

/// [`gather_cols`] for rows `base + a[l]` known to lie in `lo..=hi` (the caller proved that
/// no index wraps): the per-lane index is the a0 value plus one offset, added inside the permute
/// loop, and the window comes from the known range instead of a scan. Returns `false` without
/// touching `dst` when the CPU lacks AVX-512F, `N` is not a multiple of 16 or the range is not
/// one 64-row window inside the table. Pure data movement: bit-identical to the row copy.
pub(crate) fn gather_cols_off<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    a: &[i32; N],
    base: i32,
    lo: i32,
    hi: i32,
    dst: &mut [[f32; N]; 4],
) -> bool {
    if !N.is_multiple_of(16)
        || lo < 0
        || hi < lo
        || hi - lo >= 64
        || lo as usize + 64 > super::exec::ROWS
        || !std::arch::is_x86_feature_detected!("avx512f")
    {
        return false;
    }
    // SAFETY: `gather_off_avx512` requires AVX-512F, and the check above proved this CPU has
    // it.
    unsafe { gather_off_avx512(cols, a, base - lo, lo as usize, hi - lo < 32, dst) };
    true
}

/// DP4 of an a0-relative uniform row and four planes, fused with the gather: `o[l] =
/// ((r0·y0 + r1·y1) + r2·y2) + r3·y3` with `r = row base + a[l]` from the component tables
/// `cols` (rows known to lie in `lo..=hi`, no wrapping, checked by the caller), plain products
/// (no 0·inf fix-up), then flushed as [`crate::interp::alu::flush`] when `flush`. The gathered
/// row stays in registers (no scratch planes). Returns `None` without touching `o` when the CPU
/// lacks AVX-512F, `N` is not a multiple of 16 or the range is not one 64-row window;
/// otherwise whether a result lane was NaN before the flush (the caller then recomputes with
/// the fix-up, as for the engine's other unchecked products).
#[allow(clippy::too_many_arguments)]
pub(crate) fn dot4_rel<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    a: &[i32; N],
    base: i32,
    lo: i32,
    hi: i32,
    y: [&[f32; N]; 4],
    o: &mut [f32; N],
    flush: bool,
) -> Option<bool> {
    if !N.is_multiple_of(16)
        || lo < 0
        || hi < lo
        || hi - lo >= 64
        || lo as usize + 64 > super::exec::ROWS
        || !std::arch::is_x86_feature_detected!("avx512f")
    {
        return None;
    }
    // SAFETY: `dot4_rel_avx512` requires AVX-512F, and the check above proved this CPU has it.
    Some(unsafe { dot4_rel_avx512(cols, a, base - lo, lo as usize, hi - lo < 32, y, o, flush) })
}

#[allow(clippy::too_many_arguments)]
#[target_feature(enable = "avx512f")]
fn dot4_rel_avx512<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    a: &[i32; N],
    off: i32,
    lo: usize,
    narrow: bool,
    y: [&[f32; N]; 4],
    o: &mut [f32; N],
    flush: bool,
) -> bool {
    use std::arch::x86_64::*;
    let offv = _mm512_set1_epi32(off);
    let bit5 = _mm512_set1_epi32(32);
    let abs = _mm512_set1_epi32(0x7FFF_FFFF);
    let min_normal = _mm512_set1_ps(crate::interp::alu::F24_MIN_NORMAL);
    // The 64-row window of each component (four registers each).
    let mut win = [[_mm512_setzero_ps(); 4]; 4];
    for (w, col) in win.iter_mut().zip(cols) {
        let part = &col[lo..lo + 64];
        let p = part.as_ptr();
        for (k, t) in w.iter_mut().enumerate() {
            // SAFETY: `part` holds 64 f32 and k < 4, so the 16 floats at 16·k stay inside it.
            *t = unsafe { _mm512_loadu_ps(p.add(16 * k)) };
        }
    }
    let mut nan: u16 = 0;
    for b in 0..N / 16 {
        let l = b * 16;
        let is = &a[l..l + 16];
        // SAFETY: `is` is 16 i32, exactly one unaligned 64-byte load.
        let ix = _mm512_add_epi32(unsafe { _mm512_loadu_si512(is.as_ptr().cast()) }, offv);
        let high = _mm512_test_epi32_mask(ix, bit5);
        let row = |w: &[__m512; 4]| {
            let x = _mm512_permutex2var_ps(w[0], ix, w[1]);
            if narrow {
                x
            } else {
                let z = _mm512_permutex2var_ps(w[2], ix, w[3]);
                _mm512_mask_blend_ps(high, x, z)
            }
        };
        let yv = |c: usize| {
            let ys = &y[c][l..l + 16];
            // SAFETY: `ys` is 16 f32, exactly one unaligned 64-byte load.
            unsafe { _mm512_loadu_ps(ys.as_ptr()) }
        };
        // ((p0 + p1) + p2) + p3 with separate multiplies and adds (no fused multiply-add).
        let p0 = _mm512_mul_ps(row(&win[0]), yv(0));
        let p1 = _mm512_mul_ps(row(&win[1]), yv(1));
        let p2 = _mm512_mul_ps(row(&win[2]), yv(2));
        let p3 = _mm512_mul_ps(row(&win[3]), yv(3));
        let mut v = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(p0, p1), p2), p3);
        nan |= _mm512_cmp_ps_mask::<_CMP_UNORD_Q>(v, v);
        if flush {
            // |v| < F24_MIN_NORMAL (ordered: NaN keeps its value) -> +0.
            let mag = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), abs));
            let small = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(mag, min_normal);
            v = _mm512_mask_mov_ps(v, small, _mm512_setzero_ps());
        }
        let os = &mut o[l..l + 16];
        // SAFETY: `os` is 16 f32, exactly one unaligned 64-byte store.
        unsafe { _mm512_storeu_ps(os.as_mut_ptr(), v) };
    }
    nan != 0
}

/// `dst[c][l] = cols[c][lo + a[l] + off]`, where every `a[l] + off` is in `0..64` (`0..32`
/// when `narrow`) and `lo + 64 <= ROWS` (checked by the caller).
#[target_feature(enable = "avx512f")]
fn gather_off_avx512<const N: usize>(
    cols: &[[f32; super::exec::ROWS]; 4],
    a: &[i32; N],
    off: i32,
    lo: usize,
    narrow: bool,
    dst: &mut [[f32; N]; 4],
) {
    use std::arch::x86_64::*;
    let offv = _mm512_set1_epi32(off);
    let bit5 = _mm512_set1_epi32(32);
    let mut idx = [_mm512_setzero_si512(); 4];
    for (b, v) in idx.iter_mut().enumerate().take(N / 16) {
        let is = &a[b * 16..b * 16 + 16];
        // SAFETY: `is` is 16 i32, exactly one unaligned 64-byte load.
        *v = _mm512_add_epi32(unsafe { _mm512_loadu_si512(is.as_ptr().cast()) }, offv);
    }
    for (col, d) in cols.iter().zip(dst.iter_mut()) {
        let win = &col[lo..lo + 64];
        let p = win.as_ptr();
        // SAFETY: `win` holds 64 f32, so the four 16-float loads at offsets 0, 16, 32 and 48
        // stay inside it.
        let (t0, t1, t2, t3) = unsafe {
            (
                _mm512_loadu_ps(p),
                _mm512_loadu_ps(p.add(16)),
                _mm512_loadu_ps(p.add(32)),
                _mm512_loadu_ps(p.add(48)),
            )
        };
        for b in 0..N / 16 {
            // N ≤ 64, so the first four index vectors cover every block; more lanes reload.
            let ix = if b < 4 {
                idx[b]
            } else {
                let is = &a[b * 16..b * 16 + 16];
                // SAFETY: `is` is 16 i32, exactly one unaligned 64-byte load.
                _mm512_add_epi32(unsafe { _mm512_loadu_si512(is.as_ptr().cast()) }, offv)
            };
            let r = if narrow {
                _mm512_permutex2var_ps(t0, ix, t1)
            } else {
                let x = _mm512_permutex2var_ps(t0, ix, t1);
                let y = _mm512_permutex2var_ps(t2, ix, t3);
                _mm512_mask_blend_ps(_mm512_test_epi32_mask(ix, bit5), x, y)
            };
            let dd = &mut d[b * 16..b * 16 + 16];
            // SAFETY: `dd` is 16 f32, exactly one unaligned 64-byte store.
            unsafe { _mm512_storeu_ps(dd.as_mut_ptr(), r) };
        }
    }
}

/// Input transposition of a full chunk with AVX2: `dst[c][l] = f(src[l][c])` where `f` flushes
/// f24 subnormals (as [`crate::interp::alu::flush`]) when `flush` is set. Returns `false`
/// without touching `dst` when the CPU lacks AVX2 or `N` is not a multiple of 8 (the caller then
/// runs its portable loop). Pure data movement plus the flush's compare-and-clear, so the result
/// is bit-identical to the portable loop.
pub(crate) fn transpose_in<const N: usize>(
    src: &[[f32; 4]; N],
    dst: &mut [[f32; N]; 4],
    flush: bool,
) -> bool {
    if !N.is_multiple_of(8) || !std::arch::is_x86_feature_detected!("avx2") {
        return false;
    }
    // SAFETY: `transpose_in_avx2` requires AVX2, and the check above proved this CPU has it.
    unsafe { transpose_in_avx2(src, dst, flush) };
    true
}

/// Output transposition of a full chunk with AVX2: `dst[l][c] = src[c][l]`. Returns `false`
/// without touching `dst` when the CPU lacks AVX2 or `N` is not a multiple of 8.
pub(crate) fn transpose_out<const N: usize>(src: &[[f32; N]; 4], dst: &mut [[f32; 4]; N]) -> bool {
    if !N.is_multiple_of(8) || !std::arch::is_x86_feature_detected!("avx2") {
        return false;
    }
    // SAFETY: `transpose_out_avx2` requires AVX2, and the check above proved this CPU has it.
    unsafe { transpose_out_avx2(src, dst) };
    true
}

/// [`transpose_in`] with AVX-512 (16 vertices per step, two stages of `vpermt2ps`). Returns
/// `false` without touching `dst` when the CPU lacks AVX-512F or `N` is not a multiple of 16.
pub(crate) fn transpose_in512<const N: usize>(
    src: &[[f32; 4]; N],
    dst: &mut [[f32; N]; 4],
    flush: bool,
) -> bool {
    if !N.is_multiple_of(16) || !std::arch::is_x86_feature_detected!("avx512f") {
        return false;
    }
    // SAFETY: `transpose_in_avx512` requires AVX-512F, and the check above proved this CPU has
    // it.
    unsafe { transpose_in_avx512(src, dst, flush) };
    true
}

/// [`transpose_out`] with AVX-512. Returns `false` without touching `dst` when the CPU lacks
/// AVX-512F or `N` is not a multiple of 16.
pub(crate) fn transpose_out512<const N: usize>(
    src: &[[f32; N]; 4],
    dst: &mut [[f32; 4]; N],
) -> bool {
    if !N.is_multiple_of(16) || !std::arch::is_x86_feature_detected!("avx512f") {
        return false;
    }
    // SAFETY: `transpose_out_avx512` requires AVX-512F, and the check above proved this CPU has
    // it.
    unsafe { transpose_out_avx512(src, dst) };
    true
}

/// Index vectors of the AVX-512 transpositions (positions in the 32 floats of two registers).
/// Stage 1 of the input transposition, over two registers of 4 vertices each: x of the 8
/// vertices then y; z then w.
const IN_XY: [i32; 16] = [0, 4, 8, 12, 16, 20, 24, 28, 1, 5, 9, 13, 17, 21, 25, 29];
const IN_ZW: [i32; 16] = [2, 6, 10, 14, 18, 22, 26, 30, 3, 7, 11, 15, 19, 23, 27, 31];
/// The low (high) halves of two registers.
const HALF_LO: [i32; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
const HALF_HI: [i32; 16] = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];
/// Stage 2 of the output transposition over (x|y, z|w) halves: vertex k's x, y, z, w at k,
/// 8 + k, 16 + k, 24 + k (vertices 0-3, then 4-7).
const OUT_V0: [i32; 16] = [0, 8, 16, 24, 1, 9, 17, 25, 2, 10, 18, 26, 3, 11, 19, 27];
const OUT_V1: [i32; 16] = [4, 12, 20, 28, 5, 13, 21, 29, 6, 14, 22, 30, 7, 15, 23, 31];

#[target_feature(enable = "avx512f")]
fn transpose_in_avx512<const N: usize>(src: &[[f32; 4]; N], dst: &mut [[f32; N]; 4], flush: bool) {
    use std::arch::x86_64::*;
    let load = |a: [i32; 16]| {
        // SAFETY: `a` is 16 i32, exactly one unaligned 64-byte load.
        unsafe { _mm512_loadu_si512(a.as_ptr().cast()) }
    };
    let (xy, zw, lo, hi) = (load(IN_XY), load(IN_ZW), load(HALF_LO), load(HALF_HI));
    let abs = _mm512_set1_epi32(0x7FFF_FFFF);
    let min_normal = _mm512_set1_ps(crate::interp::alu::F24_MIN_NORMAL);
    let [d0, d1, d2, d3] = dst;
    for b in 0..N / 16 {
        let l = b * 16;
        // Vertices l..l+16 are 64 contiguous floats; `l + 16 <= N` (N is a multiple of 16).
        let s = &src[l..l + 16];
        let p = s.as_ptr().cast::<f32>();
        // SAFETY: `s` holds 16 vertices = 64 f32, so the four 16-float loads at offsets 0, 16,
        // 32 and 48 stay inside it.
        let (a0, a1, a2, a3) = unsafe {
            (
                _mm512_loadu_ps(p),
                _mm512_loadu_ps(p.add(16)),
                _mm512_loadu_ps(p.add(32)),
                _mm512_loadu_ps(p.add(48)),
            )
        };
        let t0 = _mm512_permutex2var_ps(a0, xy, a1);
        let t1 = _mm512_permutex2var_ps(a0, zw, a1);
        let t2 = _mm512_permutex2var_ps(a2, xy, a3);
        let t3 = _mm512_permutex2var_ps(a2, zw, a3);
        let fix = |v: __m512| {
            if flush {
                // |v| < F24_MIN_NORMAL (ordered: NaN keeps its value) -> +0.
                let mag = _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), abs));
                let small = _mm512_cmp_ps_mask::<_CMP_LT_OQ>(mag, min_normal);
                _mm512_mask_mov_ps(v, small, _mm512_setzero_ps())
            } else {
                v
            }
        };
        let out = [
            fix(_mm512_permutex2var_ps(t0, lo, t2)),
            fix(_mm512_permutex2var_ps(t0, hi, t2)),
            fix(_mm512_permutex2var_ps(t1, lo, t3)),
            fix(_mm512_permutex2var_ps(t1, hi, t3)),
        ];
        for (d, v) in [&mut *d0, &mut *d1, &mut *d2, &mut *d3]
            .into_iter()
            .zip(out)
        {
            let dd = &mut d[l..l + 16];
            // SAFETY: `dd` is 16 f32, exactly one unaligned 64-byte store.
            unsafe { _mm512_storeu_ps(dd.as_mut_ptr(), v) };
        }
    }
}

#[target_feature(enable = "avx512f")]
fn transpose_out_avx512<const N: usize>(src: &[[f32; N]; 4], dst: &mut [[f32; 4]; N]) {
    use std::arch::x86_64::*;
    // Stage 1: 8 lanes of one plane then 8 of another (low or high half of the 16).
    let load = |a: [i32; 16]| {
        // SAFETY: `a` is 16 i32, exactly one unaligned 64-byte load.
        unsafe { _mm512_loadu_si512(a.as_ptr().cast()) }
    };
    let (lo, hi, v0, v1) = (load(HALF_LO), load(HALF_HI), load(OUT_V0), load(OUT_V1));
    for b in 0..N / 16 {
        let l = b * 16;
        let mut v = [_mm512_setzero_ps(); 4];
        for (v, s) in v.iter_mut().zip(src) {
            let ss = &s[l..l + 16];
            // SAFETY: `ss` is 16 f32, exactly one unaligned 64-byte load.
            *v = unsafe { _mm512_loadu_ps(ss.as_ptr()) };
        }
        let u0 = _mm512_permutex2var_ps(v[0], lo, v[1]);
        let u2 = _mm512_permutex2var_ps(v[0], hi, v[1]);
        let u1 = _mm512_permutex2var_ps(v[2], lo, v[3]);
        let u3 = _mm512_permutex2var_ps(v[2], hi, v[3]);
        let out = [
            _mm512_permutex2var_ps(u0, v0, u1),
            _mm512_permutex2var_ps(u0, v1, u1),
            _mm512_permutex2var_ps(u2, v0, u3),
            _mm512_permutex2var_ps(u2, v1, u3),
        ];
        let d = &mut dst[l..l + 16];
        let p = d.as_mut_ptr().cast::<f32>();
        for (k, o) in out.into_iter().enumerate() {
            // SAFETY: `d` holds 16 vertices = 64 f32; the store at offset 16·k (k < 4) writes
            // 16 of them.
            unsafe { _mm512_storeu_ps(p.add(16 * k), o) };
        }
    }
}

#[target_feature(enable = "avx2")]
fn transpose_in_avx2<const N: usize>(src: &[[f32; 4]; N], dst: &mut [[f32; N]; 4], flush: bool) {
    use std::arch::x86_64::*;
    // Lane order after the two unpack stages is 0 2 4 6 | 1 3 5 7; this restores 0..7.
    let order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    let sign = _mm256_set1_ps(-0.0);
    let min_normal = _mm256_set1_ps(crate::interp::alu::F24_MIN_NORMAL);
    let [d0, d1, d2, d3] = dst;
    for b in 0..N / 8 {
        let l = b * 8;
        // Vertices l..l+8 are 32 contiguous floats; `l + 8 <= N` because N is a multiple of 8.
        let s = &src[l..l + 8];
        let p = s.as_ptr().cast::<f32>();
        // SAFETY: `s` holds 8 vertices = 32 f32, so the four unaligned 8-float loads at offsets
        // 0, 8, 16 and 24 stay inside it.
        let (a0, a1, a2, a3) = unsafe {
            (
                _mm256_loadu_ps(p),
                _mm256_loadu_ps(p.add(8)),
                _mm256_loadu_ps(p.add(16)),
                _mm256_loadu_ps(p.add(24)),
            )
        };
        let t0 = _mm256_unpacklo_ps(a0, a1);
        let t1 = _mm256_unpackhi_ps(a0, a1);
        let t2 = _mm256_unpacklo_ps(a2, a3);
        let t3 = _mm256_unpackhi_ps(a2, a3);
        let x = _mm256_castpd_ps(_mm256_unpacklo_pd(
            _mm256_castps_pd(t0),
            _mm256_castps_pd(t2),
        ));
        let y = _mm256_castpd_ps(_mm256_unpackhi_pd(
            _mm256_castps_pd(t0),
            _mm256_castps_pd(t2),
        ));
        let z = _mm256_castpd_ps(_mm256_unpacklo_pd(
            _mm256_castps_pd(t1),
            _mm256_castps_pd(t3),
        ));
        let w = _mm256_castpd_ps(_mm256_unpackhi_pd(
            _mm256_castps_pd(t1),
            _mm256_castps_pd(t3),
        ));
        let fix = |v: __m256| {
            let v = _mm256_permutevar8x32_ps(v, order);
            if flush {
                // |v| < F24_MIN_NORMAL (ordered: NaN keeps its value) -> +0.
                let small = _mm256_cmp_ps::<_CMP_LT_OQ>(_mm256_andnot_ps(sign, v), min_normal);
                _mm256_andnot_ps(small, v)
            } else {
                v
            }
        };
        let out = [fix(x), fix(y), fix(z), fix(w)];
        for (d, v) in [&mut *d0, &mut *d1, &mut *d2, &mut *d3]
            .into_iter()
            .zip(out)
        {
            let dd = &mut d[l..l + 8];
            // SAFETY: `dd` is 8 f32, exactly one unaligned 8-float store.
            unsafe { _mm256_storeu_ps(dd.as_mut_ptr(), v) };
        }
    }
}

#[target_feature(enable = "avx2")]
fn transpose_out_avx2<const N: usize>(src: &[[f32; N]; 4], dst: &mut [[f32; 4]; N]) {
    use std::arch::x86_64::*;
    // Lanes 0..7 to the order 0 2 4 6 | 1 3 5 7 that the unpack stages invert.
    let order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    for b in 0..N / 8 {
        let l = b * 8;
        let mut v = [_mm256_setzero_ps(); 4];
        for (v, s) in v.iter_mut().zip(src) {
            let ss = &s[l..l + 8];
            // SAFETY: `ss` is 8 f32, exactly one unaligned 8-float load.
            *v = _mm256_permutevar8x32_ps(unsafe { _mm256_loadu_ps(ss.as_ptr()) }, order);
        }
        let pd = _mm256_castps_pd;
        let t0 = _mm256_castpd_ps(_mm256_unpacklo_pd(pd(v[0]), pd(v[1])));
        let t2 = _mm256_castpd_ps(_mm256_unpackhi_pd(pd(v[0]), pd(v[1])));
        let t1 = _mm256_castpd_ps(_mm256_unpacklo_pd(pd(v[2]), pd(v[3])));
        let t3 = _mm256_castpd_ps(_mm256_unpackhi_pd(pd(v[2]), pd(v[3])));
        let a0 = _mm256_shuffle_ps::<0b10_00_10_00>(t0, t1);
        let a1 = _mm256_shuffle_ps::<0b11_01_11_01>(t0, t1);
        let a2 = _mm256_shuffle_ps::<0b10_00_10_00>(t2, t3);
        let a3 = _mm256_shuffle_ps::<0b11_01_11_01>(t2, t3);
        let d = &mut dst[l..l + 8];
        let p = d.as_mut_ptr().cast::<f32>();
        // SAFETY: `d` holds 8 vertices = 32 f32, so the four 8-float stores at offsets 0, 8, 16
        // and 24 stay inside it.
        unsafe {
            _mm256_storeu_ps(p, a0);
            _mm256_storeu_ps(p.add(8), a1);
            _mm256_storeu_ps(p.add(16), a2);
            _mm256_storeu_ps(p.add(24), a3);
        }
    }
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    /// The AVX-512 and AVX2 folds give the portable body's sums for every batch length (full
    /// 8-vertex blocks and remainders) and any subset of registers.
    #[test]
    fn folds_match_the_portable_body() {
        let mut x = 0x1234_5678u32;
        for len in 0..40 {
            let mut batch = VertexBatch::new(len, 0b1010_0000_0000_0111);
            for r in 0..16 {
                if let Some(vs) = batch.reg_mut(r) {
                    for v in vs.iter_mut() {
                        for c in v.iter_mut() {
                            x ^= x << 13;
                            x ^= x >> 17;
                            x ^= x << 5;
                            *c = f32::from_bits(x);
                        }
                    }
                }
            }
            let mut want = [[7u32; 4]; 16];
            crate::bench::fold_bits_body(&mut want, &batch);
            let mut a2 = [[7u32; 4]; 16];
            fold_bits_avx2(&mut a2, &batch);
            let mut a5 = [[7u32; 4]; 16];
            fold_bits_avx512(&mut a5, &batch);
            assert_eq!(a2, want, "avx2, {len} vertices");
            assert_eq!(a5, want, "avx512, {len} vertices");
        }
    }

    /// The AVX-512 and AVX2 transpositions give the portable loops' bits (with and without the
    /// flush, on edge values), and the known-range gather matches indexing.
    #[test]
    fn transpositions_and_offset_gather_match_the_loops() {
        let mut x = 0x0BAD_5EEDu32;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let edges = [0.0f32, -0.0, 1.5e-20, -1.5e-20, f32::INFINITY, 3.0, -7.25];
        let mut src = [[0.0f32; 4]; 64];
        for v in src.iter_mut() {
            for c in v.iter_mut() {
                let r = next();
                *c = if r % 3 == 0 {
                    edges[(r as usize / 3) % edges.len()]
                } else {
                    f32::from_bits(r)
                };
            }
        }
        let flushed = |v: f32| crate::interp::alu::flush(v);
        for flush in [false, true] {
            let mut want = [[0.0f32; 64]; 4];
            for l in 0..64 {
                for c in 0..4 {
                    want[c][l] = if flush { flushed(src[l][c]) } else { src[l][c] };
                }
            }
            let mut a5 = [[0.0f32; 64]; 4];
            let mut a2 = [[0.0f32; 64]; 4];
            let done5 = transpose_in512(&src, &mut a5, flush);
            let done2 = transpose_in(&src, &mut a2, flush);
            let bits = |p: &[[f32; 64]; 4]| p.map(|r| r.map(f32::to_bits));
            if done5 {
                assert_eq!(bits(&a5), bits(&want), "avx512 in, flush {flush}");
            }
            if done2 {
                assert_eq!(bits(&a2), bits(&want), "avx2 in, flush {flush}");
            }
        }
        let mut planes = [[0.0f32; 64]; 4];
        for (c, p) in planes.iter_mut().enumerate() {
            for (l, v) in p.iter_mut().enumerate() {
                *v = (l * 4 + c) as f32;
            }
        }
        let mut out5 = [[0.0f32; 4]; 64];
        if transpose_out512(&planes, &mut out5) {
            for l in 0..64 {
                for c in 0..4 {
                    assert_eq!(out5[l][c], planes[c][l], "avx512 out {l} {c}");
                }
            }
        }
        // Known-range gather: rows base + a[l] for a in lo..=hi.
        use crate::fast::exec::ROWS;
        let mut cols = [[0.0f32; ROWS]; 4];
        for (c, col) in cols.iter_mut().enumerate() {
            for (i, v) in col.iter_mut().enumerate() {
                *v = (i * 4 + c) as f32 + 0.25;
            }
        }
        for (base, lo, span) in [
            (8, 0, 24),
            (8, -8, 60),
            (100, -3, 31),
            (20, 0, 64),
            (0, 0, 80),
        ] {
            let a: [i32; 64] = std::array::from_fn(|_| lo + (next() % span) as i32);
            let (mn, mx) = (
                a.iter().copied().min().unwrap_or(0),
                a.iter().copied().max().unwrap_or(0),
            );
            let mut got = [[0.0f32; 64]; 4];
            let done = gather_cols_off(&cols, &a, base, base + mn, base + mx, &mut got);
            if !std::arch::is_x86_feature_detected!("avx512f") {
                assert!(!done);
                continue;
            }
            assert_eq!(done, mx - mn < 64, "base {base} lo {lo} span {span}");
            if done {
                for c in 0..4 {
                    for l in 0..64 {
                        let row = (base + a[l]) as usize;
                        assert_eq!(got[c][l], cols[c][row], "c {c} lane {l}");
                    }
                }
            }
        }
    }

    /// The permute gather reads the same values as indexing, for windows narrower than 32
    /// rows, up to 64 rows, and declines wider spans.
    #[test]
    fn permute_gather_matches_indexing() {
        use crate::fast::exec::ROWS;
        let mut cols = [[0.0f32; ROWS]; 4];
        for (c, col) in cols.iter_mut().enumerate() {
            for (i, v) in col.iter_mut().enumerate() {
                *v = (i * 4 + c) as f32 + 0.5;
            }
        }
        let mut x = 99u32;
        for (lo, span) in [
            (0u32, 1u32),
            (8, 24),
            (100, 32),
            (40, 64),
            (128, 1),
            (65, 64),
            (0, 65),
            (3, 129),
        ] {
            let mut ix = [0u32; 64];
            for i in ix.iter_mut() {
                x ^= x << 13;
                x ^= x >> 17;
                x ^= x << 5;
                *i = lo + x % span;
            }
            let mut got = [[0.0f32; 64]; 4];
            let done = gather_cols(&cols, &ix, &mut got);
            let (mn, mx) = (
                ix.iter().min().copied().unwrap_or(0),
                ix.iter().max().copied().unwrap_or(0),
            );
            if !std::arch::is_x86_feature_detected!("avx512f") {
                assert!(!done);
                continue;
            }
            assert_eq!(done, mx - mn < 64, "lo {lo} span {span}");
            if done {
                for c in 0..4 {
                    for l in 0..64 {
                        assert_eq!(got[c][l], cols[c][ix[l] as usize], "c {c} lane {l}");
                    }
                }
            }
        }
    }
}
