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
