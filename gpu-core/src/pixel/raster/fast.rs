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
//!   unrolls it) and nothing about the attribute set is decided per fragment.
//!   With [`super::Varyings::texcoord0_only`] only the colour and texcoord 0 (and, with
//!   gradients, texcoord 0's u, v gradients) are interpolated (the sprite shape, and a
//!   mipmapped ground: one 2D texture unit and/or the procedural texture on texcoord 0); with
//!   [`super::Varyings::skip_depth`] the depth is not computed.
//! * The traversal itself only records each covered pixel's position and its three edge values
//!   (as f32); a full batch (and the last one) is interpolated at once, structure of arrays in
//!   groups of four pixels (the lanes are pixels: the reciprocal, depth, every attribute, the
//!   colour rounding, the gradients and the quaternion normalisation each run over the four
//!   lanes together, in vector registers), and the results are then written into the
//!   fragments.
//!   The floating-point operations are the reference's, in the same order (no reassociation,
//!   no fused multiply-add: Rust never contracts), so every value is bit-identical; the tests
//!   check it over random triangles.

use crate::pixel::isa;

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
/// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
pub(super) fn traverse<F: FnMut(&[Fragment])>(
    cfg: &RasterConfig,
    p: &Prepared<'_>,
    bands: Option<RowBands>,
    emit: F,
) -> TriangleOutcome {
    isa::dispatch!(
        traverse_avx2(cfg, p, bands, emit),
        traverse_body(cfg, p, bands, emit)
    )
}

isa::avx2_fn! {
    fn traverse_avx2<F: FnMut(&[Fragment])>(
        cfg: &RasterConfig,
        p: &Prepared<'_>,
        bands: Option<RowBands>,
        emit: F,
    ) -> TriangleOutcome {
        traverse_body(cfg, p, bands, emit)
    }
}

#[inline(always)]
fn traverse_body<F: FnMut(&[Fragment])>(
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
        // Colour and texcoord 0 (with its u, v gradients) only: the other coordinates and
        // their gradients are read by no stage (a 2D unit 0 or the procedural texture on
        // texcoord 0 read `tc_grad[0]` alone).
        (A_QUAT, true) if cfg.varyings.texcoord0_only => {
            blocks::<A_TC0_END, true, DEPTH, F>(cfg, p, setup, bands, emit)
        }
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
    let mut weights: Weights = [[[0.0; L]; 3]; GROUPS];
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
                        // Only the position and the weights now: the batch is
                        // interpolated at once when full (see `interpolate_batch`).
                        // n < BATCH here (it is reset on reaching BATCH): `% BATCH` is a
                        // no-op that lets the compiler drop the index checks.
                        let k = n % BATCH;
                        let f = &mut buf[k];
                        f.x = px as u32;
                        f.y = fy;
                        let wg = &mut weights[k / L];
                        wg[0][k % L] = b[0] as f32;
                        wg[1][k % L] = b[1] as f32;
                        wg[2][k % L] = b[2] as f32;
                        n = k + 1;
                        if n == BATCH {
                            interpolate_batch::<NA, GRAD, DEPTH>(
                                cfg, wbuffer, s, &weights, BATCH, &mut buf,
                            );
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
        interpolate_batch::<NA, GRAD, DEPTH>(cfg, wbuffer, s, &weights, n, &mut buf);
        emit(&buf[..n]);
        count += n as u64;
    }
    count
}

/// Pixels per lane group of [`interpolate_group`]: one SSE register of f32.
const L: usize = 4;
/// Lane groups per batch.
const GROUPS: usize = BATCH / L;
const _: () = assert!(BATCH.is_multiple_of(L));

/// The covered pixels of the current batch waiting for interpolation: their three edge
/// values as f32 (the reference's `b as f32`), structure of arrays in groups of [`L`] pixels
/// (the lanes are pixels), pixel `n` at `[n / L][edge][n % L]`.
type Weights = [[[f32; L]; 3]; GROUPS];

/// Interpolates the first `n` pixels of `w` into `buf[..n]` (whose `x`, `y` are set), a lane
/// group of [`L`] pixels at a time (see [`interpolate_group`]). Not inlined: it runs once per
/// batch, and the traversal calls it from two places (full batch, last batch). Through the
/// AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
#[inline(never)]
fn interpolate_batch<const NA: usize, const GRAD: bool, const DEPTH: bool>(
    cfg: &RasterConfig,
    wbuffer: bool,
    s: &Setup,
    w: &Weights,
    n: usize,
    buf: &mut [Fragment; BATCH],
) {
    isa::dispatch!(
        interpolate_batch_avx2::<NA, GRAD, DEPTH>(cfg, wbuffer, s, w, n, buf),
        interpolate_batch_body::<NA, GRAD, DEPTH>(cfg, wbuffer, s, w, n, buf)
    )
}

isa::avx2_fn! {
    fn interpolate_batch_avx2<const NA: usize, const GRAD: bool, const DEPTH: bool>(
        cfg: &RasterConfig,
        wbuffer: bool,
        s: &Setup,
        w: &Weights,
        n: usize,
        buf: &mut [Fragment; BATCH],
    ) {
        interpolate_batch_body::<NA, GRAD, DEPTH>(cfg, wbuffer, s, w, n, buf);
    }
}

#[inline(always)]
fn interpolate_batch_body<const NA: usize, const GRAD: bool, const DEPTH: bool>(
    cfg: &RasterConfig,
    wbuffer: bool,
    s: &Setup,
    w: &Weights,
    n: usize,
    buf: &mut [Fragment; BATCH],
) {
    for (g, (frags, wg)) in buf.chunks_exact_mut(L).zip(w).enumerate() {
        if g * L >= n {
            break;
        }
        // The lanes of a last, partial group past `n` hold stale or zero weights: computing
        // them is harmless (float operations do not trap) and the fragments they write are
        // not handed out.
        interpolate_group::<NA, GRAD, DEPTH>(cfg, wbuffer, s, wg, frags);
    }
}

/// [`super::interpolate`] for [`L`] pixels at once, structure of arrays (each step over all
/// lanes, so the compiler keeps the lanes in one vector register), with the attribute count and
/// the gradient switch fixed at compile time. Per pixel the floating-point operations are the
/// reference's, in the same order (Rust never contracts to fused multiply-add), so every value
/// is bit-identical; only the results are then written into the fragments one by one.
#[inline(always)]
fn interpolate_group<const NA: usize, const GRAD: bool, const DEPTH: bool>(
    cfg: &RasterConfig,
    wbuffer: bool,
    s: &Setup,
    w: &[[f32; L]; 3],
    frags: &mut [Fragment],
) {
    let [w0, w1, w2] = *w;
    let mut wsum = [0f32; L];
    let mut inv_d = [0f32; L];
    for j in 0..L {
        wsum[j] = w0[j] + w1[j] + w2[j];
        let d = w0[j] * s.inv_w[0] + w1[j] * s.inv_w[1] + w2[j] * s.inv_w[2];
        inv_d[j] = 1.0 / d;
    }

    if DEPTH {
        let dm = &cfg.depth;
        let mut depth = [0f32; L];
        for j in 0..L {
            let zw = (s.z[0] * w0[j] + s.z[1] * w1[j] + s.z[2] * w2[j]) / wsum[j];
            // `DepthMap::depth` lane-wise: the w-buffer product, then the clamp to [0, 1]
            // written as `f32::clamp` is (−0 stays −0) and NaN mapped to 0.
            let mut d = zw * dm.scale + dm.offset;
            if wbuffer {
                d *= inv_d[j] * wsum[j];
            }
            let c = if d < 0.0 { 0.0 } else { d };
            let c = if c > 1.0 { 1.0 } else { c };
            depth[j] = if d.is_nan() { 0.0 } else { c };
        }
        for (f, &d) in frags.iter_mut().zip(&depth) {
            f.depth = d;
        }
    }

    let mut out = [[0f32; L]; N_ATTR];
    let (a0, a1, a2) = (&s.attr_w[0], &s.attr_w[1], &s.attr_w[2]);
    for k in 0..NA {
        for j in 0..L {
            out[k][j] = (a0[k] * w0[j] + a1[k] * w1[j] + a2[k] * w2[j]) * inv_d[j];
        }
    }
    // The colour: each channel rounded by [`round_lane`], lane-wise, packed into a
    // little-endian word per pixel.
    let mut rgba = [0u32; L];
    for c in 0..4 {
        let ch = out[A_COLOR + c];
        for j in 0..L {
            rgba[j] |= round_lane(ch[j] * 255.0) << (8 * c);
        }
    }
    for (f, &c) in frags.iter_mut().zip(&rgba) {
        f.color = c.to_le_bytes();
    }
    if NA == A_TC0_END {
        for (j, f) in frags.iter_mut().take(L).enumerate() {
            f.tc[0] = [out[A_TC][j], out[A_TC + 1][j]];
        }
        if GRAD {
            // The gradients below for texcoord 0's u and v (k = 0, 1) alone.
            let mut g = [[0f32; L]; 4];
            for j in 0..L {
                let (u, v) = (out[A_TC][j], out[A_TC + 1][j]);
                g[0][j] = (s.n_dx[0] - u * s.d_dx) * inv_d[j];
                g[1][j] = (s.n_dx[1] - v * s.d_dx) * inv_d[j];
                g[2][j] = (s.n_dy[0] - u * s.d_dy) * inv_d[j];
                g[3][j] = (s.n_dy[1] - v * s.d_dy) * inv_d[j];
            }
            for (j, f) in frags.iter_mut().take(L).enumerate() {
                f.tc_grad[0] = [g[0][j], g[1][j], g[2][j], g[3][j]];
            }
        }
    } else if NA > A_TC {
        for (j, f) in frags.iter_mut().take(L).enumerate() {
            f.tc = [
                [out[A_TC][j], out[A_TC + 1][j]],
                [out[A_TC + 2][j], out[A_TC + 3][j]],
                [out[A_TC + 4][j], out[A_TC + 5][j]],
            ];
            f.tc0_w = out[A_TC0W][j];
        }
        if GRAD {
            // A = N/D  ⇒  ∂A/∂x = (∂N/∂x − A·∂D/∂x) / D, per coordinate (k = 0..7 over
            // A_TC..=A_TC0W), lane-wise.
            let mut gx = [[0f32; L]; 7];
            let mut gy = [[0f32; L]; 7];
            for k in 0..7 {
                for j in 0..L {
                    let a = out[A_TC + k][j];
                    gx[k][j] = (s.n_dx[k] - a * s.d_dx) * inv_d[j];
                    gy[k][j] = (s.n_dy[k] - a * s.d_dy) * inv_d[j];
                }
            }
            for (j, f) in frags.iter_mut().take(L).enumerate() {
                for unit in 0..3 {
                    let (ku, kv) = (2 * unit, 2 * unit + 1);
                    f.tc_grad[unit] = [gx[ku][j], gx[kv][j], gy[ku][j], gy[kv][j]];
                }
                let k = A_TC0W - A_TC;
                f.tc0_w_grad = [gx[k][j], gy[k][j]];
            }
        }
    }
    if NA == N_ATTR {
        let [q0, q1, q2, q3] = [
            out[A_QUAT],
            out[A_QUAT + 1],
            out[A_QUAT + 2],
            out[A_QUAT + 3],
        ];
        let mut quat = [[0f32; L]; 4];
        for j in 0..L {
            let len = (q0[j] * q0[j] + q1[j] * q1[j] + q2[j] * q2[j] + q3[j] * q3[j]).sqrt();
            // The divisions run in every lane (no trap on 0, inf or NaN) and a degenerate
            // length selects 0 afterwards: the same values as dividing only when it is valid.
            let ok = len > 0.0 && len.is_finite();
            let (a, b, c, d) = (q0[j] / len, q1[j] / len, q2[j] / len, q3[j] / len);
            quat[0][j] = if ok { a } else { 0.0 };
            quat[1][j] = if ok { b } else { 0.0 };
            quat[2][j] = if ok { c } else { 0.0 };
            quat[3][j] = if ok { d } else { 0.0 };
        }
        for (j, f) in frags.iter_mut().take(L).enumerate() {
            f.quat = [quat[0][j], quat[1][j], quat[2][j], quat[3][j]];
            f.view = [out[A_VIEW][j], out[A_VIEW + 1][j], out[A_VIEW + 2][j]];
        }
    }
}

/// `round(y)` (half away from zero) saturated to 0..=255, NaN giving 0, as a u32 in
/// 0..=255, with lane-wise float operations and one integer subtraction only, so
/// [`interpolate_group`] keeps its pixels in one vector register (a float-to-integer cast per
/// lane is scalarised with its saturation checks).
///
/// The clamp maps NaN and negatives to 0 and saturates at 255 (written as comparisons so they
/// become single `maxps`/`minps`). For `c` in [0, 255], `c + 2^23` is `2^23 + rne(c)`
/// (round to nearest even; the sum's ulp is 1), so its bits minus those of `2^23` are
/// `rne(c)`, and `n = (c + 2^23) − 2^23` is `rne(c)` exactly. `c − n` is exact (`n = 0`, or
/// `c` and `n` within a factor of two: Sterbenz's lemma) and equals 0.5 exactly when `c` was
/// a tie that went down to the even neighbour, where rounding half away from zero goes up:
/// adding that one gives `round(c)` (never above 255: 255 is no tie). Tested against the
/// scalar form through [`round4_to_u8`] (and checked on every f32 bit pattern when written).
#[inline(always)]
fn round_lane(v: f32) -> u32 {
    const MAGIC: f32 = 8_388_608.0; // 2^23
    const MAGIC_BITS: u32 = 0x4B00_0000;
    const _: () = assert!(MAGIC.to_bits() == MAGIC_BITS);
    let c = if v > 0.0 { v } else { 0.0 };
    let c = if c < 255.0 { c } else { 255.0 };
    let f = c + MAGIC;
    let n = f - MAGIC;
    let up = u32::from(c - n == 0.5);
    f.to_bits().wrapping_sub(MAGIC_BITS) + up
}

/// [`round_lane`] of four channels, as bytes (the tests check the lane rounding through it).
#[cfg(test)]
pub(super) fn round4_to_u8(y: [f32; 4]) -> [u8; 4] {
    // ok: `round_lane` is at most 255.
    y.map(|v| round_lane(v) as u8)
}

/// [`super::round_to_u8`] without branches: `round(y)` (half away from zero) saturated to
/// 0..=255, NaN giving 0, as a u32.
///
/// `max(y, 0)` maps NaN and negatives to 0 (`f32::max` returns the non-NaN operand), `min`
/// saturates at 255; for the clamped value `c` in [0, 255], `c + 0.5` is exact in f64 (24
/// significant bits plus one more binary place), so truncating it is `floor(c + 0.5)`, which is
/// rounding half away from zero for non-negative values. Tested against the branchy form.
/// (The traversal now uses [`round_lane`]; this scalar form stays as a tested reference.)
#[cfg(test)]
pub(super) fn round_to_u8_branchless(y: f32) -> u32 {
    // Not `clamp`: it keeps NaN, and NaN must become 0 here.
    #[allow(clippy::manual_clamp)]
    let c = y.max(0.0).min(255.0);
    (f64::from(c) + 0.5) as u32
}
