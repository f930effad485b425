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
//!   edge test runs. In scissor-exclude mode a block wholly inside the box is rejected, one
//!   wholly outside needs no per-pixel scissor test.
//! * Each block row is tested as 8 lanes at once: the edge values of its pixels are the row
//!   start plus per-lane multiples of the x step (exact integers, so equal to the reference's
//!   stepped values; i32 lanes when every value the walk can meet fits, else i64), their f32
//!   conversions are computed for all lanes, and one sign test per lane (of the OR of the three
//!   edge values) gives the coverage. The covered lanes are then compacted into the pending
//!   buffer without a branch per pixel.
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

/// Pixels of a block row: the lanes of the row coverage test.
const ROW: usize = 8;

/// Slots of the pending-pixel buffers ([`Pending`]): a batch, plus one block row that may
/// run past it before the batch is handed out. A power of two, so an index masked with
/// `SLOTS - 1` needs no bounds check.
const SLOTS: usize = 32;
const _: () = assert!(SLOTS.is_power_of_two() && SLOTS >= BATCH + ROW);
const _: () = assert!(BATCH.is_power_of_two());

/// The covered pixels waiting for interpolation, in order: their three edge values as f32
/// (the reference's `b as f32`), structure of arrays (pixel `n` at `w[edge][n]`), and their
/// window position.
struct Pending {
    w: [[f32; SLOTS]; 3],
    x: [u32; SLOTS],
    y: [u32; SLOTS],
}

/// The block walk, monomorphised on the attribute count `NA`, gradients `GRAD` and depth
/// `DEPTH`. Returns the number of fragments emitted.
///
/// Each row of a block that is not rejected is tested as [`ROW`] lanes at once: the edge
/// values of the row's pixels from the row start and per-lane multiples of the x steps (exact
/// integers, so equal to the reference's stepped values), one sign test per lane, and the
/// covered lanes compacted into [`Pending`] without a branch per pixel (every lane is written
/// at the next free slot, which advances only for covered lanes). When the batch is full it is
/// interpolated and handed to `emit`, and the row's overflow moves to the front; the batch
/// boundaries are those of one fragment at a time.
///
/// When every edge value the walk can meet fits in an i32 (every real triangle: it needs
/// edges of tens of thousands of pixels to overflow), the lanes are i32, whose conversion to
/// f32 is one vector instruction; otherwise they are i64 (converted lane by lane).
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
    // Per edge: whether its largest value over a rectangle is at the right (x) and top (y)
    // side (its steps are positive there; a zero step makes both sides equal).
    let corner = [
        (e[0].cx > 0, e[0].cy > 0),
        (e[1].cx > 0, e[1].cy > 0),
        (e[2].cx > 0, e[2].cy > 0),
    ];
    let cy = [e[0].cy, e[1].cy, e[2].cy];
    // The lanes' offsets from the row start: `i·cx` per edge, as i64 and reduced mod 2^32.
    let mut off64 = [[0i64; ROW]; 3];
    let mut off32 = [[0i32; ROW]; 3];
    for k in 0..3 {
        for i in 0..ROW {
            off64[k][i] = i as i64 * e[k].cx;
            // Truncation intended: the i32 lanes add it with wrapping arithmetic (below).
            off32[k][i] = off64[k][i] as i32;
        }
    }
    // The lanes cover pixels x0 ..= x1 + 7 of rows y0 ..= y1 (a row's lanes past the box are
    // masked, but computed). If every edge value over that rectangle (extremes at its corners)
    // fits in an i32, the i32 lanes are exact: the true sum of the row start and a lane offset
    // is in range, so the wrapping sum of their values mod 2^32 is that sum.
    let small = e.iter().all(|ed| {
        [(x0, y0), (x1 + 7, y0), (x0, y1), (x1 + 7, y1)]
            .iter()
            .all(|&(x, y)| i32::try_from(ed.at(x, y)).is_ok())
    });
    let mut buf = [Fragment::default(); BATCH];
    let mut pend = Pending {
        w: [[0.0; SLOTS]; 3],
        x: [0; SLOTS],
        y: [0; SLOTS],
    };
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
            // Trivial accept: every pixel of the block is covered, no edge is tested.
            let full = all_in && !scissor;
            // Lanes inside the block (the block may be narrower than a row of lanes).
            let width = (bx_hi - bx_lo + 1) as usize;
            let mut inside = [false; ROW];
            for (i, v) in inside.iter_mut().enumerate() {
                *v = i < width;
            }
            // ok: bx_lo is within [0, width) of the target, ≤ 2047.
            let ux = bx_lo as u32;
            let mut xs = [0u32; ROW];
            for (i, v) in xs.iter_mut().enumerate() {
                *v = ux + i as u32;
            }
            // Edge values at the first pixel of the top row, stepped down a row at a time
            // (exact integers: the same values as evaluating them afresh).
            let mut row = [
                e[0].at(bx_lo, by_hi),
                e[1].at(bx_lo, by_hi),
                e[2].at(bx_lo, by_hi),
            ];
            let mut py = by_hi;
            while py >= by_lo {
                // ok: py is within [0, height), ≤ 2047.
                let fy = py as u32;
                let mut wl = [[0f32; ROW]; 3];
                let mut cov = inside;
                if small {
                    // ok: `small` bounds every edge value the lanes take (see above).
                    let r = [row[0] as i32, row[1] as i32, row[2] as i32];
                    let mut b = [[0i32; ROW]; 3];
                    for k in 0..3 {
                        for i in 0..ROW {
                            b[k][i] = r[k].wrapping_add(off32[k][i]);
                            wl[k][i] = b[k][i] as f32;
                        }
                    }
                    if !full {
                        for i in 0..ROW {
                            // All three edge values ≥ 0 ⇔ the sign bit of their OR is clear.
                            cov[i] &= (b[0][i] | b[1][i] | b[2][i]) >= 0;
                        }
                    }
                } else {
                    let mut b = [[0i64; ROW]; 3];
                    for k in 0..3 {
                        for i in 0..ROW {
                            b[k][i] = row[k] + off64[k][i];
                            wl[k][i] = b[k][i] as f32;
                        }
                    }
                    if !full {
                        for i in 0..ROW {
                            cov[i] &= (b[0][i] | b[1][i] | b[2][i]) >= 0;
                        }
                    }
                }
                if scissor {
                    for (c, &x) in cov.iter_mut().zip(&xs) {
                        *c &= !sc.contains(x, fy);
                    }
                }
                row = [row[0] - cy[0], row[1] - cy[1], row[2] - cy[2]];
                py -= 1;
                // Compaction: n < BATCH here, so n + ROW ≤ SLOTS and the masked indices
                // never wrap.
                if full && width == ROW {
                    let at = n & (BATCH - 1);
                    for (pw, w) in pend.w.iter_mut().zip(&wl) {
                        pw[at..at + ROW].copy_from_slice(w);
                    }
                    pend.x[at..at + ROW].copy_from_slice(&xs);
                    pend.y[at..at + ROW].fill(fy);
                    n += ROW;
                } else {
                    for i in 0..ROW {
                        let at = n & (SLOTS - 1);
                        pend.w[0][at] = wl[0][i];
                        pend.w[1][at] = wl[1][i];
                        pend.w[2][at] = wl[2][i];
                        pend.x[at] = xs[i];
                        pend.y[at] = fy;
                        n += usize::from(cov[i]);
                    }
                }
                if n >= BATCH {
                    interpolate_batch::<NA, GRAD, DEPTH>(cfg, wbuffer, s, &pend, BATCH, &mut buf);
                    emit(&buf);
                    count += BATCH as u64;
                    n -= BATCH;
                    // The row's overflow (at most ROW − 1 pixels) to the front.
                    for k in 0..3 {
                        pend.w[k].copy_within(BATCH..BATCH + ROW, 0);
                    }
                    pend.x.copy_within(BATCH..BATCH + ROW, 0);
                    pend.y.copy_within(BATCH..BATCH + ROW, 0);
                }
            }
        }
    }
    if n > 0 {
        interpolate_batch::<NA, GRAD, DEPTH>(cfg, wbuffer, s, &pend, n, &mut buf);
        emit(&buf[..n]);
        count += n as u64;
    }
    count
}

/// Pixels per lane group of [`interpolate_group`]: one SSE register of f32.
const L: usize = 4;
const _: () = assert!(BATCH.is_multiple_of(L));

/// Interpolates the first `n` pixels of `p` into `buf[..n]`, a lane group of [`L`] pixels at
/// a time (see [`interpolate_group`]). Not inlined: it runs once per batch, and the traversal
/// calls it from two places (full batch, last batch).
#[inline(never)]
fn interpolate_batch<const NA: usize, const GRAD: bool, const DEPTH: bool>(
    cfg: &RasterConfig,
    wbuffer: bool,
    s: &Setup,
    p: &Pending,
    n: usize,
    buf: &mut [Fragment; BATCH],
) {
    for (g, frags) in buf.chunks_exact_mut(L).enumerate() {
        if g * L >= n {
            break;
        }
        let lanes = g * L..g * L + L;
        let mut w = [[0f32; L]; 3];
        for (wk, pk) in w.iter_mut().zip(&p.w) {
            wk.copy_from_slice(&pk[lanes.clone()]);
        }
        for ((f, &x), &y) in frags.iter_mut().zip(&p.x[lanes.clone()]).zip(&p.y[lanes]) {
            f.x = x;
            f.y = y;
        }
        // The lanes of a last, partial group past `n` hold stale weights: computing them is
        // harmless (float operations do not trap) and the fragments they write are not
        // handed out.
        interpolate_group::<NA, GRAD, DEPTH>(cfg, wbuffer, s, &w, frags);
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
