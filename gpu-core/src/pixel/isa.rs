//! The pixel kernels compiled twice: for the x86-64 baseline (SSE2) and with AVX2, chosen at
//! run time (issue 14).
//!
//! Stage: every stage of the specialised pixel path (traversal, interpolation, texture
//! sampling, the procedural texture, the combiners, fog, the fragment operations and the
//! colour write). Registers read: none.
//!
//! # Method
//!
//! Each hot kernel's body is an `#[inline(always)]` function; [`avx2_fn!`] defines a copy of
//! it with the target features `avx2, bmi1, bmi2, lzcnt, popcnt` (the vector part of
//! x86-64-v3, without FMA), and the kernel's entry point calls the copy when [`avx2`] says
//! the CPU has them ([`dispatch!`]), the portable body otherwise. The arithmetic is the same
//! Rust code: LLVM never contracts separate `*` and `+` into fused multiply-adds (and FMA is
//! not enabled), and it uses no approximate instructions, so both copies give bit-identical
//! results; what changes is the instruction selection (8-wide lane loops, SSE4.1 rounding,
//! blends and 32-bit multiplies, `tzcnt`/`popcnt` for the lane masks). Measured on the
//! 2-core AMD EPYC machine (session 12, one binary with and without `PICAVIEW_SIMD=portable`):
//! 14% fewer instructions per replay (callgrind, 1 thread: fog_blend 663.5 -> 570.8 M, cube
//! 948.4 -> 817.5 M); wall time within that host's noise (paired runs, medians: fog_blend
//! -5%, stress -3%, sprites 0%, cube +2%); the replay fingerprints (every byte of memory at
//! every frame) equal on every trace at 1, 2 and 8 threads. Also measured and not kept: the
//! display-transfer row converters in AVX2 (cube 17% slower, paired median), 8-pixel
//! interpolation groups (slower on both copies).
//!
//! cargo-fuzz builds (cfg `fuzzing`) compile the portable copies only: the AVX2 ones are the
//! same code, and the fuzz smoke's build time goes to compiling kernels with coverage
//! instrumentation.
//!
//! `PICAVIEW_SIMD=portable` in the environment (read once per process) keeps the portable
//! copies, to rule the AVX2 build out when a result is in doubt. This module holds the
//! crate's only `unsafe`: calling a `#[target_feature]` function from code compiled without
//! those features, after checking that the CPU has them.
#![allow(unsafe_code)]

use std::sync::atomic::{AtomicU8, Ordering};

/// [`avx2`]'s cached answer: not yet known, no, yes.
static LEVEL: AtomicU8 = AtomicU8::new(UNKNOWN);
const UNKNOWN: u8 = 0;
const PORTABLE: u8 = 1;
const AVX2: u8 = 2;

/// The environment variable that keeps the portable kernels (value `portable`).
pub const SIMD_ENV: &str = "PICAVIEW_SIMD";

/// True if the AVX2 copies of the pixel kernels run: the CPU has AVX2, BMI1, BMI2, LZCNT and
/// POPCNT and [`SIMD_ENV`] is not `portable`. Decided once per process (a relaxed load after
/// that). Whenever this returns true, the CPU has every feature [`avx2_fn!`] enables.
#[inline(always)]
pub fn avx2() -> bool {
    match LEVEL.load(Ordering::Relaxed) {
        AVX2 => true,
        PORTABLE => false,
        _ => detect(),
    }
}

/// The name of the kernels [`avx2`] selects ("avx2" or "portable"), for benchmark reports.
pub fn kernels() -> &'static str {
    if avx2() { "avx2" } else { "portable" }
}

#[cold]
fn detect() -> bool {
    let wanted = std::env::var_os(SIMD_ENV).is_none_or(|v| v != "portable");
    let on = wanted && cpu_has_avx2();
    LEVEL.store(if on { AVX2 } else { PORTABLE }, Ordering::Relaxed);
    on
}

#[cfg(all(target_arch = "x86_64", not(fuzzing)))]
fn cpu_has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2")
        && std::arch::is_x86_feature_detected!("bmi1")
        && std::arch::is_x86_feature_detected!("bmi2")
        && std::arch::is_x86_feature_detected!("lzcnt")
        && std::arch::is_x86_feature_detected!("popcnt")
}

#[cfg(any(not(target_arch = "x86_64"), fuzzing))]
fn cpu_has_avx2() -> bool {
    false
}

/// Defines the item (a function) compiled with AVX2, BMI1, BMI2, LZCNT and POPCNT, on x86-64
/// only. Its body should call the kernel's `#[inline(always)]` portable body, so the whole
/// kernel is compiled with the features. Call it through [`dispatch!`].
macro_rules! avx2_fn {
    ($($item:tt)*) => {
        #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
        #[target_feature(enable = "avx2,bmi1,bmi2,lzcnt,popcnt")]
        $($item)*
    };
}
pub(crate) use avx2_fn;

/// `dispatch!(avx2_call, portable_call)`: the value of `avx2_call` (a call of an [`avx2_fn!`]
/// function) when [`avx2`] is true, else of `portable_call` (the same kernel's portable body).
macro_rules! dispatch {
    ($avx2:expr, $portable:expr $(,)?) => {{
        #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
        #[allow(unsafe_code)]
        // SAFETY: `avx2()` is true only when the CPU has every feature `avx2_fn!` enables.
        let r = if $crate::pixel::isa::avx2() {
            unsafe { $avx2 }
        } else {
            $portable
        };
        #[cfg(any(not(target_arch = "x86_64"), fuzzing))]
        let r = $portable;
        r
    }};
}
pub(crate) use dispatch;

#[cfg(test)]
mod tests {
    use super::*;

    avx2_fn! {
        fn sum_avx2(x: &[f32; 16]) -> f32 {
            sum_body(x)
        }
    }

    #[inline(always)]
    fn sum_body(x: &[f32; 16]) -> f32 {
        // A fixed order of additions: both copies must give the same bits.
        x.iter().fold(0.0, |a, &b| a + b * 0.5)
    }

    fn sum(x: &[f32; 16]) -> f32 {
        dispatch!(sum_avx2(x), sum_body(x))
    }

    #[test]
    fn both_copies_give_the_same_bits() {
        let mut x = [0.0f32; 16];
        for (i, v) in x.iter_mut().enumerate() {
            *v = (i as f32 + 0.1).sqrt() * 1.0e7 - 3.3e6;
        }
        assert_eq!(sum(&x).to_bits(), sum_body(&x).to_bits());
        assert_eq!(kernels(), if avx2() { "avx2" } else { "portable" });
    }
}
