//! Exact replacements for `f32::floor` / `f32::round` conversions in per-fragment code.
//!
//! The baseline x86-64 target (SSE2) has no rounding instruction, so `floor` and `round` are
//! libm calls; the texture sampler and the procedural texture call them per fragment. These
//! helpers give the same result as the std expression they name for **every** `f32` input
//! (NaN, infinities, out-of-range values saturating as `as` does), using only truncating casts
//! and one comparison. Tested against std over special values and millions of random bit
//! patterns.

/// `x.floor() as i64`.
#[inline(always)]
pub fn floor_i64(x: f32) -> i64 {
    let t = x as i64;
    // Truncation rounds toward zero: for negative non-integers it went up by one.
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// `x.floor() as i32`.
#[inline(always)]
pub fn floor_i32(x: f32) -> i32 {
    let t = x as i32;
    if (t as f32) > x {
        t.saturating_sub(1)
    } else {
        t
    }
}

/// The magnitude below which [`floor_small`] is exact: 2^22.
pub const FLOOR_SMALL_LIMIT: f32 = 4_194_304.0;

/// `x.floor() as i32` for `|x| < 2^22` ([`FLOOR_SMALL_LIMIT`]); for other inputs (NaN,
/// larger magnitudes) the result is some i32 (no panic), so callers check the range first.
///
/// `x + 1.5·2^23` lies in (2^23, 2^24), where the f32 spacing is 1: the addition rounds x to
/// the nearest integer `r` exactly, and the low bits of the sum's encoding are `r + 2^22`.
/// Subtracting the constant back is exact too, and `r > x` says the rounding went up (x not
/// an integer), so the floor is `r − 1`. No saturating conversion and no libm call.
#[inline(always)]
pub fn floor_small(x: f32) -> i32 {
    const MAGIC: f32 = 12_582_912.0; // 1.5·2^23
    let sum = x + MAGIC;
    let r = (sum.to_bits() as i32).wrapping_sub(MAGIC.to_bits() as i32);
    r.wrapping_sub(i32::from(sum - MAGIC > x))
}

/// `x.floor()` (as f32).
#[inline(always)]
pub fn floor_f32(x: f32) -> f32 {
    // |x| ≥ 2^23 is already integral (and NaN fails the test and is returned as is).
    if x.abs() < 8_388_608.0 {
        let t = x as i32 as f32;
        // `copysign` keeps −0.0 (and −0.0 < x < 0 cannot reach the else branch).
        if t > x { t - 1.0 } else { t.copysign(x) }
    } else {
        x
    }
}

/// `x.round() as u32` (round half away from zero, then a saturating cast).
#[inline(always)]
pub fn round_u32(x: f32) -> u32 {
    // NaN and x ≤ 0 give 0 (round(x) ≤ 0 for x < 0.5 and `as u32` saturates negatives to 0,
    // while 0 < x < 0.5 is handled below).
    if x.is_nan() || x <= 0.0 {
        return 0;
    }
    let t = x as u32;
    if x >= 4_294_967_296.0 {
        return u32::MAX;
    }
    // x − t is exact (t = 0, or t ≥ x/2 and Sterbenz's lemma; integral x ≥ 2^23 gives 0).
    t.saturating_add(u32::from(x - t as f32 >= 0.5))
}

/// `x.round() as usize`.
#[inline(always)]
pub fn round_usize(x: f32) -> usize {
    if x >= 4_294_967_296.0 {
        return x.round() as usize;
    }
    round_u32(x) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(x: f32) {
        assert_eq!(floor_i64(x), x.floor() as i64, "floor_i64({x:e})");
        assert_eq!(floor_i32(x), x.floor() as i32, "floor_i32({x:e})");
        let (a, b) = (floor_f32(x), x.floor());
        assert!(
            a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
            "floor_f32({x:e})"
        );
        assert_eq!(round_u32(x), x.round() as u32, "round_u32({x:e})");
        assert_eq!(round_usize(x), x.round() as usize, "round_usize({x:e})");
        if x.abs() < FLOOR_SMALL_LIMIT {
            assert_eq!(floor_small(x), x.floor() as i32, "floor_small({x:e})");
        }
    }

    /// `floor_small` on every f32 of a few binades across its range, and around the limit.
    #[test]
    fn floor_small_is_exact_below_its_limit() {
        for start in [0.0f32, 0.25, 1.0, 255.0, 65_536.0, 4_194_303.0] {
            let mut x = start;
            for _ in 0..200_000 {
                for v in [x, -x] {
                    assert_eq!(floor_small(v), v.floor() as i32, "floor_small({v:e})");
                }
                x = f32::from_bits(x.to_bits() + 1);
                if x >= FLOOR_SMALL_LIMIT {
                    break;
                }
            }
        }
        let below = f32::from_bits(FLOOR_SMALL_LIMIT.to_bits() - 1);
        // 2^22 − 0.5: its floor is 2^22 − 1, and that of its negation −2^22.
        assert_eq!(floor_small(below), below.floor() as i32);
        assert_eq!(floor_small(-below), (-below).floor() as i32);
        assert_eq!(floor_small(-below), -4_194_304);
        assert_eq!(floor_small(-0.0), 0);
        assert_eq!(floor_small(f32::from_bits(1)), 0);
        assert_eq!(floor_small(-f32::from_bits(1)), -1);
    }

    #[test]
    fn special_values_match_std() {
        let specials = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            0.49999997,
            1.5,
            2.5,
            -1.5,
            -2.5,
            0.99999994,
            -0.99999994,
            8_388_607.5,
            8_388_608.0,
            -8_388_607.5,
            16_777_217.0,
            2_147_483_520.0,
            2_147_483_648.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
            4_294_967_040.0,
            4_294_967_296.0,
            9.2e18,
            -9.3e18,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        for x in specials {
            check(x);
            check(f32::from_bits(x.to_bits().wrapping_add(1)));
            check(f32::from_bits(x.to_bits().wrapping_sub(1)));
        }
    }

    #[test]
    fn random_bit_patterns_match_std() {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..2_000_000 {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            check(f32::from_bits(s as u32));
            // Small magnitudes, where the fractional cases are.
            check((s >> 40) as f32 / 65_536.0 - 64.0);
        }
    }
}
