//! The fast traversal of [`super::rasterize_triangle_bands`] (issue 14).
//!
//! Stage: rasterisation, after the triangle setup shared with the reference traversal
//! ([`super::prepare`]). Input: a prepared triangle (integer edge functions, clipped bounding
//! box) and the per-triangle interpolation constants ([`super::Setup`]); output: the same
//! [`Fragment`]s, with the same values and in the same order, as
//! [`super::rasterize_triangle_reference`]. Registers read: none (everything comes decoded in
//! [`RasterConfig`]).
//!
//! # Method
//!
//! * The bounding box is walked in 8×8 blocks aligned to the render target's memory tiles, in
//!   the reference order (tile rows top to bottom in memory, i.e. window y descending; blocks
//!   left to right; inside a block rows from the top, pixels left to right).
//! * Per block the three integer edge functions are evaluated at two corners of the (clipped)
//!   block each: the one where the edge function is largest and the one where it is smallest
//!   (edge functions are affine, so their extremes over a rectangle are at the corners the
//!   signs of their x and y steps point to). An edge negative at its largest corner rejects
//!   the block; edges non-negative at their smallest accept it: every pixel is covered and no
//!   per-pixel edge test runs. Partly covered blocks test each pixel (one sign test of the OR of
//!   the three edge values). In scissor-exclude mode a block wholly inside the
//!   box is rejected, one wholly outside needs no per-pixel scissor test.
//! * Edge values are exact integers (i64), stepped by their per-pixel x increment along a row
//!   and by their y increment from row to row, so they equal the reference's values exactly.
//! * The fragments are written into a small buffer and handed to the shading code
//!   [`BATCH`] at a time (and at the end of the triangle), in the reference's order: the
//!   per-fragment routine runs in a loop of its own instead of being called once per pixel.
//! * Interpolation is monomorphised on the number of interpolated attributes and on whether
//!   gradients are needed, so the per-attribute loop has a constant trip count (the compiler
//!   unrolls and vectorises it) and nothing about the attribute set is decided per fragment.
//!   With [`super::Varyings::texcoord0_only`] only the colour and texcoord 0 are interpolated
//!   (the sprite shape: one texture unit and/or the procedural texture on texcoord 0); with
//!   [`super::Varyings::skip_depth`] the depth is not computed.
//!   The floating-point operations are the reference's, in the same order (no reassociation,
//!   no fused multiply-add: Rust never contracts), so every value is bit-identical; the tests
//!   check it over random triangles.

use super::{
    A_COLOR, A_QUAT, A_TC, A_TC0W, A_VIEW, DepthMode, Fragment, N_ATTR, Prepared, RasterConfig,
    RowBands, ScissorMode, Setup, TriangleOutcome, make_setup,
};

/// Fragments handed to the shading code at once (see [`traverse`]): small enough that the
/// buffer's initialisation per triangle stays cheap for small triangles, large enough that
/// the call per batch costs little per fragment.
pub(super) const BATCH: usize = 16;

/// Walks the prepared triangle `p` (see the module doc), handing the covered pixels to `emit`
/// in batches of at most [`BATCH`] fragments, in order.
pub(super) fn traverse<F: FnMut(&[Fragment])>(
    cfg: &RasterConfig,
    p: &Prepared<'_>,
    bands: Option<RowBands>,
    emit: F,
) -> TriangleOutcome {
    let setup = make_setup(cfg, &p.sv, &p.e);
    let fragments = if cfg.varyings.skip_depth {
        by_attributes::<false, F>(cfg, p, &setup, bands, emit)
    } else {
        by_attributes::<true, F>(cfg, p, &setup, bands, emit)
    };
    TriangleOutcome::Drawn { fragments }
}

/// [`blocks`] for the triangle's attribute set, depth computed if `DEPTH`.
#[inline(always)]
fn by_attributes<const DEPTH: bool, F: FnMut(&[Fragment])>(
    cfg: &RasterConfig,
    p: &Prepared<'_>,
    setup: &Setup,
    bands: Option<RowBands>,
    emit: F,
) -> u64 {
    // The reference computes gradients only when texture coordinates are interpolated at all
    // (`n_attr > A_TC`); `make_setup` never combines gradients with `n_attr == A_TC`.
    let grad = cfg.varyings.texcoord_gradients;
    match (setup.n_attr, grad) {
        (N_ATTR, true) => blocks::<N_ATTR, true, DEPTH, F>(cfg, p, setup, bands, emit),
        (N_ATTR, false) => blocks::<N_ATTR, false, DEPTH, F>(cfg, p, setup, bands, emit),
        (A_QUAT, true) => blocks::<A_QUAT, true, DEPTH, F>(cfg, p, setup, bands, emit),
        // Colour and texcoord 0 only (the other coordinates are read by no stage).
        (A_QUAT, false) if cfg.varyings.texcoord0_only => {
            blocks::<A_TC0_END, false, DEPTH, F>(cfg, p, setup, bands, emit)
        }
        (A_QUAT, false) => blocks::<A_QUAT, false, DEPTH, F>(cfg, p, setup, bands, emit),
        _ => blocks::<A_TC, false, DEPTH, F>(cfg, p, setup, bands, emit),
    }
}

/// One past the last attribute of the colour + texcoord 0 set ([`super::Varyings::texcoord0_only`]).
const A_TC0_END: usize = A_TC + 2;

/// The block walk, monomorphised on the attribute count `NA`, gradients `GRAD` and depth
/// `DEPTH`. Returns the number of fragments emitted.
///
/// The fragments go into a buffer handed to `emit` when full and at the end.
#[inline(always)]
fn blocks<const NA: usize, const GRAD: bool, const DEPTH: bool, F: FnMut(&[Fragment])>(
    cfg: &RasterConfig,
    p: &Prepared<'_>,
    s: &Setup,
    bands: Option<RowBands>,
    mut emit: F,
) -> u64 {
    let e = &p.e;
    let (x0, x1, y0, y1) = (p.x0, p.x1, p.y0, p.y1);
    let h = i64::from(cfg.height);
    let ym_lo = h - 1 - y1;
    let ym_hi = h - 1 - y0;
    let exclude = cfg.scissor_mode == ScissorMode::Exclude;
    let sc = cfg.scissor;
    let (sx1, sy1, sx2, sy2) = (
        i64::from(sc.x1),
        i64::from(sc.y1),
        i64::from(sc.x2),
        i64::from(sc.y2),
    );
    let wbuffer = cfg.depth.mode == DepthMode::WBuffer;
    let cx = [e[0].cx, e[1].cx, e[2].cx];
    // Per edge: whether its largest value over a rectangle is at the right (x) and top (y)
    // side (its steps are positive there; a zero step makes both sides equal).
    let corner = [
        (e[0].cx > 0, e[0].cy > 0),
        (e[1].cx > 0, e[1].cy > 0),
        (e[2].cx > 0, e[2].cy > 0),
    ];
    let cy = [e[0].cy, e[1].cy, e[2].cy];
    let mut buf = [Fragment::default(); BATCH];
    let mut n = 0usize;
    let mut count = 0u64;
    let mut tile_row = ym_lo >> 3;
    while tile_row <= ym_hi >> 3 {
        if bands.is_some_and(|b| !b.owns(tile_row)) {
            tile_row += 1;
            continue;
        }
        // Window rows of this tile row, intersected with [y0, y1].
        let by_hi = (h - 1 - (tile_row << 3)).min(y1);
        let by_lo = (h - 1 - ((tile_row << 3) + 7)).max(y0);
        tile_row += 1;
        let mut tile_col = x0 >> 3;
        while tile_col <= x1 >> 3 {
            let bx_lo = (tile_col << 3).max(x0);
            let bx_hi = ((tile_col << 3) + 7).min(x1);
            tile_col += 1;
            // An affine function's largest and smallest values over the block are at the
            // corners its x and y steps point to (`corner`): two evaluations per edge give the
            // same extremes as the four corners.
            let mut all_in = true;
            let mut rejected = false;
            for (ed, &(hx, hy)) in e.iter().zip(&corner) {
                let (xh, xl) = if hx { (bx_hi, bx_lo) } else { (bx_lo, bx_hi) };
                let (yh, yl) = if hy { (by_hi, by_lo) } else { (by_lo, by_hi) };
                rejected |= ed.at(xh, yh) < 0;
                all_in &= ed.at(xl, yl) >= 0;
            }
            if rejected {
                continue;
            }
            let mut scissor = false;
            if exclude {
                let overlaps = bx_lo <= sx2 && bx_hi >= sx1 && by_lo <= sy2 && by_hi >= sy1;
                let inside = bx_lo >= sx1 && bx_hi <= sx2 && by_lo >= sy1 && by_hi <= sy2;
                if inside {
                    continue;
                }
                scissor = overlaps;
            }
            // Trivial accept: every pixel of the block is covered, nothing is tested.
            let full = all_in && !scissor;
            // Edge values at the first pixel of the top row, stepped down a row at a time
            // (exact integers: the same values as evaluating them afresh).
            let mut row = [
                e[0].at(bx_lo, by_hi),
                e[1].at(bx_lo, by_hi),
                e[2].at(bx_lo, by_hi),
            ];
            let mut py = by_hi;
            while py >= by_lo {
                let mut b = row;
                // ok: px, py are within [0, width) × [0, height), both ≤ 2047.
                let fy = py as u32;
                row = [row[0] - cy[0], row[1] - cy[1], row[2] - cy[2]];
                py -= 1;
                for px in bx_lo..=bx_hi {
                    // All three edge values ≥ 0 ⇔ the sign bit of their OR is clear.
                    if full
                        || ((b[0] | b[1] | b[2]) >= 0 && !(scissor && sc.contains(px as u32, fy)))
                    {
                        let f = &mut buf[n];
                        f.x = px as u32;
                        f.y = fy;
                        interpolate::<NA, GRAD, DEPTH>(cfg, wbuffer, s, b, f);
                        n += 1;
                        if n == BATCH {
                            emit(&buf);
                            count += BATCH as u64;
                            n = 0;
                        }
                    }
                    b = [b[0] + cx[0], b[1] + cx[1], b[2] + cx[2]];
                }
            }
        }
    }
    if n > 0 {
        emit(&buf[..n]);
        count += n as u64;
    }
    count
}

/// [`super::interpolate`] with the attribute count and the gradient switch fixed at compile
/// time: the same operations in the same order, so the same bits.
#[inline(always)]
fn interpolate<const NA: usize, const GRAD: bool, const DEPTH: bool>(
    cfg: &RasterConfig,
    wbuffer: bool,
    s: &Setup,
    b: [i64; 3],
    f: &mut Fragment,
) {
    let w = [b[0] as f32, b[1] as f32, b[2] as f32];
    let wsum = w[0] + w[1] + w[2];
    let d = w[0] * s.inv_w[0] + w[1] * s.inv_w[1] + w[2] * s.inv_w[2];
    let inv_d = 1.0 / d;

    if DEPTH {
        let zw = (s.z[0] * w[0] + s.z[1] * w[1] + s.z[2] * w[2]) / wsum;
        let w_pix = if wbuffer { inv_d * wsum } else { 1.0 };
        f.depth = cfg.depth.depth(zw, w_pix);
    }

    let mut out = [0f32; N_ATTR];
    let (a0, a1, a2) = (&s.attr_w[0], &s.attr_w[1], &s.attr_w[2]);
    for k in 0..NA {
        out[k] = (a0[k] * w[0] + a1[k] * w[1] + a2[k] * w[2]) * inv_d;
    }
    // The colour as four lanes: lane-wise operations that the compiler keeps in one vector
    // register (the scalar form rounded each channel through f64).
    f.color = round4_to_u8([
        out[A_COLOR] * 255.0,
        out[A_COLOR + 1] * 255.0,
        out[A_COLOR + 2] * 255.0,
        out[A_COLOR + 3] * 255.0,
    ]);
    if NA == A_TC0_END {
        f.tc[0] = [out[A_TC], out[A_TC + 1]];
    } else if NA > A_TC {
        f.tc = [
            [out[A_TC], out[A_TC + 1]],
            [out[A_TC + 2], out[A_TC + 3]],
            [out[A_TC + 4], out[A_TC + 5]],
        ];
        f.tc0_w = out[A_TC0W];
        if GRAD {
            for unit in 0..3 {
                let (ku, kv) = (2 * unit, 2 * unit + 1);
                let (u, v) = (out[A_TC + ku], out[A_TC + kv]);
                f.tc_grad[unit] = [
                    (s.n_dx[ku] - u * s.d_dx) * inv_d,
                    (s.n_dx[kv] - v * s.d_dx) * inv_d,
                    (s.n_dy[ku] - u * s.d_dy) * inv_d,
                    (s.n_dy[kv] - v * s.d_dy) * inv_d,
                ];
            }
            let (k, w) = (A_TC0W - A_TC, out[A_TC0W]);
            f.tc0_w_grad = [
                (s.n_dx[k] - w * s.d_dx) * inv_d,
                (s.n_dy[k] - w * s.d_dy) * inv_d,
            ];
        }
    }
    if NA == N_ATTR {
        let q = [
            out[A_QUAT],
            out[A_QUAT + 1],
            out[A_QUAT + 2],
            out[A_QUAT + 3],
        ];
        let len = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]).sqrt();
        f.quat = if len > 0.0 && len.is_finite() {
            [q[0] / len, q[1] / len, q[2] / len, q[3] / len]
        } else {
            [0.0; 4]
        };
        f.view = [out[A_VIEW], out[A_VIEW + 1], out[A_VIEW + 2]];
    }
}

/// [`round_to_u8_branchless`] of four channels at once, as bytes: the same result per channel,
/// computed with lane-wise float operations only, so the four channels stay in one vector
/// register (a float-to-integer cast per lane is scalarised with its saturation checks).
///
/// The clamp maps NaN and negatives to 0 and saturates at 255 (written as comparisons so they
/// become single `maxps`/`minps`). For `c` in [0, 255], `c + 2^23` is `2^23 + rne(c)`
/// (round to nearest even; the sum's ulp is 1), so its bits minus those of `2^23` are
/// `rne(c)`, and `n = (c + 2^23) − 2^23` is `rne(c)` exactly. `c − n` is exact (`n = 0`, or
/// `c` and `n` within a factor of two: Sterbenz's lemma) and equals 0.5 exactly when `c` was
/// a tie that went down to the even neighbour, where rounding half away from zero goes up:
/// adding that one gives `round(c)`. Tested against the scalar form (and checked on every
/// f32 bit pattern when written).
#[inline(always)]
pub(super) fn round4_to_u8(y: [f32; 4]) -> [u8; 4] {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    const MAGIC_BITS: u32 = 0x4B00_0000;
    const _: () = assert!(MAGIC.to_bits() == MAGIC_BITS);
    let mut r = [0u8; 4];
    for (o, &v) in r.iter_mut().zip(&y) {
        let c = if v > 0.0 { v } else { 0.0 };
        let c = if c < 255.0 { c } else { 255.0 };
        let f = c + MAGIC;
        let n = f - MAGIC;
        let up = u32::from(c - n == 0.5);
        // ok: the difference is rne(c) in 0..=255 and `up` is 0 when it is 255.
        *o = (f.to_bits().wrapping_sub(MAGIC_BITS) + up) as u8;
    }
    r
}

/// [`super::round_to_u8`] without branches: `round(y)` (half away from zero) saturated to
/// 0..=255, NaN giving 0, as a u32.
///
/// `max(y, 0)` maps NaN and negatives to 0 (`f32::max` returns the non-NaN operand), `min`
/// saturates at 255; for the clamped value `c` in [0, 255], `c + 0.5` is exact in f64 (24
/// significant bits plus one more binary place), so truncating it is `floor(c + 0.5)`, which is
/// rounding half away from zero for non-negative values. Tested against the branchy form.
/// (The traversal now uses [`round4_to_u8`]; this scalar form stays as a tested reference.)
#[cfg(test)]
pub(super) fn round_to_u8_branchless(y: f32) -> u32 {
    // Not `clamp`: it keeps NaN, and NaN must become 0 here.
    #[allow(clippy::manual_clamp)]
    let c = y.max(0.0).min(255.0);
    (f64::from(c) + 0.5) as u32
}
