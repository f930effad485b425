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

use crate::interp::{BatchStats, Uniforms, VertexBatch};

use super::FastEngineN;
use super::exec::Abort;

#[target_feature(enable = "avx2")]
fn body_avx2<const N: usize>(
    e: &mut FastEngineN<N>,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    e.run_fast_body(uniforms, entry, inputs, outputs)
}

#[target_feature(enable = "avx512f,avx512vl,avx512bw,avx512dq,avx2")]
fn body_avx512<const N: usize>(
    e: &mut FastEngineN<N>,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    e.run_fast_body(uniforms, entry, inputs, outputs)
}

/// The batch body with AVX2. The engine only selects `Simd::Avx2` when detected.
pub(super) fn run_avx2<const N: usize>(
    e: &mut FastEngineN<N>,
    uniforms: &Uniforms,
    entry: u32,
    inputs: &VertexBatch,
    outputs: &mut VertexBatch,
) -> Result<BatchStats, Abort> {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return e.run_portable(uniforms, entry, inputs, outputs);
    }
    // SAFETY: `body_avx2` requires AVX2, and the check above proved this CPU has it.
    unsafe { body_avx2(e, uniforms, entry, inputs, outputs) }
}

/// The batch body with AVX-512. The engine only selects `Simd::Avx512` when detected.
pub(super) fn run_avx512<const N: usize>(
    e: &mut FastEngineN<N>,
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
        return e.run_portable(uniforms, entry, inputs, outputs);
    }
    // SAFETY: `body_avx512` requires AVX-512 F/VL/BW/DQ and AVX2, all checked just above.
    unsafe { body_avx512(e, uniforms, entry, inputs, outputs) }
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
