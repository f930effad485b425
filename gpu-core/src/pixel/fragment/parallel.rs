//! The parallel pixel path: a batch of a draw's triangles shaded by several workers at once,
//! with results bit-identical to drawing them one by one.
//!
//! Stage: the same as [`PixelPipeline::draw_triangle_with`] (rasterisation and the
//! per-fragment operations) for many triangles. Input: the batch's screen-space triangles in
//! submission order; output: the render target in [`PhysMem`], the pipeline's counters and
//! diagnostics.
//!
//! # Method
//!
//! The render target's memory tile rows (8 memory rows, see [`RowBands`]) are dealt out to
//! `p` pieces ([`PIECES_PER_SHARE`] per share, at most one per tile row), row `r` to piece
//! `r % p`. The `threads` shares claim pieces one at a time until none is left (so a share that
//! starts late leaves its work to the others). For each piece it claims, a share rasterises the
//! batch's triangles in submission order but visits only the piece's tile rows, so each 8×8
//! tile — and so each pixel — is written by one share only and sees its fragments in the
//! hardware's order. Piece 0 rasterises every triangle (it records the triangles' outcomes);
//! the other pieces skip, before any set-up, each triangle whose vertices' row range (widened
//! by a row each way) has none of their tile rows, which could give them no fragment.
//! Fragment values do not depend on the share (the rasteriser evaluates edge functions per block
//! from the triangle's integer setup), so the result is the same for any thread count.
//!
//! No share writes memory during the batch: every share reads it as it was before the batch
//! (share 0 the caller's memory, the others a copy-on-write clone that copies a few hundred
//! pointers and, as nothing writes it, no page) through tile caches in deferred mode, which keep
//! the tiles they modify in the share's [`TileStore`]s (reused between batches). After the
//! batch the stores are written to the caller's memory (the shares' tiles are disjoint, and a
//! tile is stored exactly when the sequential loop would have written it), counters are
//! summed, and "not implemented" diagnostics are raised in the order the sequential path raises
//! them (by the first triangle that needed the feature). Share 0 runs on the calling thread and
//! the others on rayon's pool (one hand-off per batch); the number of shares, not the pool size,
//! fixes the partition, and the partition does not change the result.
//!
//! A group can also be launched ([`launch`]): its shares are spawned on the pool and the call
//! returns, so the caller prepares the next draws (command processing, vertex shading, set-up)
//! while the pool draws these; [`Flight::land`] later cancels the shares the pool has not
//! started, runs one more share on the calling thread for the pieces nobody has claimed, waits
//! for the shares that started and merges as above (so it never waits for a busy pool).
//! Every share of a launched group, the caller's included, reads a clone of memory taken at
//! launch, and nothing is written to memory before it lands, so the result is the same as
//! drawing the group at launch. Launching is refused on a pool thread (its wait could be for
//! work queued behind itself).
//!
//! The batch falls back to the sequential loop when it cannot gain or cannot be proven
//! identical: one thread, the [`PixelPath::Reference`] path (kept single-threaded as the test
//! oracle and for the debugging hooks that live there), stage timing on, a render-target width
//! that makes neighbouring tiles share bytes (not a multiple of the 8×8 tile or 32×32 block
//! edge), colour and depth buffers overlapping in memory, or less than [`PARALLEL_MIN_PIXELS`]
//! of estimated coverage.

use std::sync::atomic::{AtomicU32, Ordering};

use super::{
    BatchScratch, FastPlan, Feature, FragCtx, FragmentHooks, PixelPath, PixelPipeline, PixelStats,
    TextureSampler,
};
use crate::memory::PhysMem;
use crate::pixel::framebuffer::{FramebufferConfig, TileCache, TileStore};
use crate::pixel::raster::{RowBands, TriangleOutcome, rasterize_triangle_bands};
use crate::pixel::tiling::TileMode;
use crate::vertex::ScreenVertex;

/// Below this many pixels of summed (clipped) triangle bounding boxes a batch is drawn on the
/// calling thread: starting the workers and writing the tile stores back would cost more than
/// it saves. Measured again on an otherwise idle 2-core machine (2 threads, `replay_time`,
/// best of 5 interleaved rounds, session 11): 4096 took stress from 91-98 to 113 frames/s
/// against 1024 (its ~100 parallel draws per frame of ~400 fragments each lost more to the
/// hand-off than they gained), sprites 66 -> 69, geoshader 335 -> 352, cube unchanged (264);
/// never splitting a draw gave stress 114 but cost every other scene 25-40%. (An earlier
/// measurement under load 7-8 had preferred 1024.)
pub const PARALLEL_MIN_PIXELS: u64 = 4096;

/// Pieces of tile rows per share (see [`PixelPipeline::draw_triangles`]): enough that a share
/// that starts late or runs slowly leaves its work to the other, few enough that the piece
/// that visits every triangle (piece 0, which records the outcomes) is a small part of the
/// batch. Measured (2 threads, same runs as [`PARALLEL_MIN_PIXELS`]): sprites 13.56 ms/frame
/// (mean of 8) at 2, 13.78 at 4, 13.93 at 8; 1 and 3 within noise of 2; fog_blend and cube
/// within noise for 1-8.
const PIECES_PER_SHARE: usize = 2;

/// The features in the order [`PixelPipeline::draw_triangle_with`] checks them.
const FEATURES: [Feature; 6] = [
    Feature::Textures,
    Feature::ProceduralTexture,
    Feature::Lighting,
    Feature::Fog,
    Feature::Gas,
    Feature::ShadowRendering,
];

/// The memory one share reads: the caller's (share 0) or a clone of it (the other shares; a
/// clone copies a few hundred pointers and, as nobody writes memory during the batch, no page).
enum ShareMem<'m> {
    /// The caller's memory (share 0).
    Main(&'m mut PhysMem),
    /// A copy-on-write clone (the other shares).
    Copy(PhysMem),
}

impl ShareMem<'_> {
    fn get(&mut self) -> &mut PhysMem {
        match self {
            ShareMem::Main(m) => m,
            ShareMem::Copy(m) => m,
        }
    }
}

/// A share's colour and depth tile stores (see [`TileStore`]).
#[derive(Default)]
struct Scratch {
    color: TileStore,
    depth: TileStore,
}

/// The shares' tile stores, kept by the caller between batches (and draws) so a batch
/// allocates nothing for them: at most one store pair per share of the widest batch so far,
/// each freeing its tile memory above a size when it is reset, so the pool stays small. A pure
/// cache of allocations: its contents never change a result, and a clone starts empty.
///
/// It also sums where the groups drawn through it spent their time ([`ParallelTimes`]).
#[derive(Default)]
pub struct ShareStores {
    pairs: Vec<Scratch>,
    times: ParallelTimes,
}

impl Clone for ShareStores {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for ShareStores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShareStores({} pairs)", self.pairs.len())
    }
}

/// Where the groups drawn by shares spent their time, summed (wall-clock; two clock reads
/// per share and two per group, so always on): what `bench replay` reports for N threads.
/// The share of the calling thread against the pool's, and the caller's waits, tell how much
/// of the second core the parallel pixel path used: the caller's other work (commands,
/// vertices, set-up) is the replay's time minus `caller_pixels` and `caller_waiting`.
/// Timing only: no result depends on it, and a clone of the pipeline state starts at zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParallelTimes {
    /// Groups drawn by shares: in place ([`draw_group`]) and launched ([`launch`]).
    pub groups: u64,
    /// Of them, launched: drawn on the pool while the caller went on.
    pub launched: u64,
    /// Time in shares run by the calling thread (its own share of an in-place group, and the
    /// pieces of a launched group the pool had not claimed when it landed).
    pub caller_pixels: std::time::Duration,
    /// Time in shares run on rayon's pool.
    pub pool_pixels: std::time::Duration,
    /// Time the calling thread waited for pool shares to finish (after its own).
    pub caller_waiting: std::time::Duration,
}

impl ShareStores {
    /// Where the groups drawn through these stores spent their time.
    pub fn times(&self) -> ParallelTimes {
        self.times
    }

    /// Adds a group's share times: the caller's share `caller` and the pool's `pool`, and
    /// the caller's wait `waited`.
    fn count_group<'o>(
        &mut self,
        launched: bool,
        caller: Option<&'o ShareOut>,
        pool: impl IntoIterator<Item = &'o ShareOut>,
        waited: std::time::Duration,
    ) {
        let t = &mut self.times;
        t.groups += 1;
        t.launched += u64::from(launched);
        t.caller_pixels += caller.map_or(std::time::Duration::ZERO, |o| o.busy);
        t.pool_pixels += pool
            .into_iter()
            .map(|o| o.busy)
            .sum::<std::time::Duration>();
        t.caller_waiting += waited;
    }

    /// A store pair from the pool (or a new one), emptied for `fb`.
    fn take(&mut self, fb: &FramebufferConfig, color_bpp: u32, depth_bpp: u32) -> Scratch {
        let mut s = self.pairs.pop().unwrap_or_default();
        let edge = block_edge(fb).unwrap_or(8);
        let tiles = (fb.width as usize * (fb.height.div_ceil(edge) * edge) as usize) / 64;
        s.color.reset(fb.color_addr, color_bpp, tiles);
        s.depth.reset(fb.depth_addr, depth_bpp, tiles);
        s
    }

    /// Returns `s` to the pool.
    fn give_back(&mut self, s: Scratch) {
        self.pairs.push(s);
    }
}

/// Sums the clipped bounding-box areas of `tris` (window coordinates), saturating.
fn estimated_pixels(tris: &[[ScreenVertex; 3]], fb: &FramebufferConfig) -> u64 {
    let (w, h) = (fb.width as f32, fb.height as f32);
    let mut sum = 0u64;
    for t in tris {
        let (mut x0, mut x1, mut y0, mut y1) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
        for v in t {
            x0 = x0.min(v.x);
            x1 = x1.max(v.x);
            y0 = y0.min(v.y);
            y1 = y1.max(v.y);
        }
        let dx = (x1.min(w) - x0.max(0.0)).max(0.0);
        let dy = (y1.min(h) - y0.max(0.0)).max(0.0);
        // NaN compares false in max/min chains above and lands here as 0 (`as` saturates).
        sum = sum.saturating_add((dx * dy) as u64);
    }
    sum
}

/// The memory tile rows (8 memory rows each; memory row `height − 1 − y`) that the
/// rasteriser can visit for `tri`, conservatively: the window rows of the vertices' y range,
/// widened by one row each way (the rasteriser rounds to its subpixel grid first and then to
/// pixels), before any clipping to the target or the scissor (which only removes rows).
/// `None` if a y is not finite (the rasteriser rejects the triangle, but the caller does not
/// rely on that and visits it).
#[inline]
fn tile_row_span(tri: &[ScreenVertex; 3], height: i64) -> Option<(i64, i64)> {
    let (a, b, c) = (tri[0].y, tri[1].y, tri[2].y);
    if !(a.is_finite() && b.is_finite() && c.is_finite()) {
        return None;
    }
    // Far outside any target (≤ 2048 rows) the exact value does not matter; clamping keeps
    // the integer arithmetic far from overflow.
    let lo = a.min(b).min(c).clamp(-1.0e9, 1.0e9).floor() as i64 - 1;
    let hi = a.max(b).max(c).clamp(-1.0e9, 1.0e9).ceil() as i64 + 1;
    Some(((height - 1 - hi) >> 3, (height - 1 - lo) >> 3))
}

/// False only if `tri` cannot have a fragment in a tile row of `bands` (see
/// [`tile_row_span`]): its tile rows are fewer than the pieces and none is `bands`'s.
#[inline]
fn reaches(tri: &[ScreenVertex; 3], height: i64, bands: RowBands) -> bool {
    let Some((r0, r1)) = tile_row_span(tri, height) else {
        return true;
    };
    let count = i64::from(bands.count.max(1));
    if r1 - r0 + 1 >= count {
        return true;
    }
    // The first row at or after r0 that belongs to `bands`.
    let first = r0 + (i64::from(bands.index) - r0).rem_euclid(count);
    first <= r1
}

/// The block edge of the render target's layout: 8×8 tiles ([`TileMode::Tiled8`]) or 32×32
/// blocks ([`TileMode::Block32`]); `None` for a layout the parallel path does not handle.
fn block_edge(fb: &FramebufferConfig) -> Option<u32> {
    match fb.tile_mode {
        TileMode::Tiled8 => Some(8),
        TileMode::Block32 => Some(32),
        TileMode::Linear => None,
    }
}

/// True if every 8×8 tile of the render target has bytes of its own: the width is a multiple
/// of the layout's block edge (otherwise the address formula makes neighbouring tiles or
/// blocks overlap, and two shares could write the same bytes).
fn tiles_are_disjoint(fb: &FramebufferConfig) -> bool {
    block_edge(fb).is_some_and(|e| fb.width.is_multiple_of(e))
}

/// True if the byte ranges of the colour and depth buffers (whole blocks) overlap (then a
/// pixel's colour and depth bytes could belong to different shares' tiles).
pub(super) fn buffers_overlap(fb: &FramebufferConfig, color_bpp: u32, depth_bpp: u32) -> bool {
    let e = block_edge(fb).unwrap_or(32);
    let pixels = u64::from(fb.width) * u64::from(fb.height.div_ceil(e) * e);
    let c0 = u64::from(fb.color_addr);
    let c1 = c0 + pixels * u64::from(color_bpp);
    let d0 = u64::from(fb.depth_addr);
    let d1 = d0 + pixels * u64::from(depth_bpp);
    c0 < d1 && d0 < c1
}

impl<S: TextureSampler, H: FragmentHooks> FragCtx<'_, S, H> {
    /// Rasterises the part of `tri` in `bands` through the specialised routine with `plan`
    /// (the generic code without one). `COSTS` must equal [`FragCtx::costs`] (chosen once per
    /// triangle, so the per-fragment code has no test).
    #[inline(always)]
    fn shade_band<const COSTS: bool>(
        &mut self,
        tri: &[ScreenVertex; 3],
        bands: RowBands,
        plan: Option<&FastPlan>,
        scratch: &mut BatchScratch,
    ) -> TriangleOutcome {
        let cfg = self.cfg;
        let bands = Some(bands);
        // The routine is chosen here, once per triangle, so each rasteriser loop calls one.
        match plan {
            Some(plan) => self.shade_plan::<COSTS>(tri, bands, plan, scratch),
            None => rasterize_triangle_bands(&cfg.raster, tri, bands, |f| self.process(f, ())),
        }
    }
}

/// One draw of a group drawn by [`draw_group`]: its pipeline (configuration, counters,
/// diagnostics), its fragment hooks and its screen-space triangles in submission order.
pub struct GroupDraw<'a, S: TextureSampler, H> {
    /// The draw's pixel pipeline.
    pub pixels: &'a mut PixelPipeline<S>,
    /// The draw's fixed-function stages.
    pub hooks: &'a mut H,
    /// The draw's triangles, in submission order.
    pub tris: &'a [[ScreenVertex; 3]],
}

/// The part of a render-target configuration that fixes the share partition and the tile
/// stores: draws of a group must agree on it ([`group_key`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupKey {
    color_addr: u32,
    depth_addr: u32,
    color_bpp: u32,
    depth_bpp: u32,
    width: u32,
    height: u32,
    tile_mode: TileMode,
}

/// The group key of `pixels`'s render target (see [`GroupKey`]).
pub fn group_key<S: TextureSampler>(pixels: &PixelPipeline<S>) -> GroupKey {
    let fb = &pixels.cfg.fb;
    GroupKey {
        color_addr: fb.color_addr,
        depth_addr: fb.depth_addr,
        color_bpp: pixels.color_cache.bpp(),
        depth_bpp: pixels.depth_cache.bpp(),
        width: fb.width,
        height: fb.height,
        tile_mode: fb.tile_mode,
    }
}

/// The bytes of the render target's colour and depth buffers (whole blocks) as two
/// half-open physical address ranges: everything a draw of the group can write.
pub fn written_ranges<S: TextureSampler>(pixels: &PixelPipeline<S>) -> [(u64, u64); 2] {
    let fb = &pixels.cfg.fb;
    let e = block_edge(fb).unwrap_or(32);
    let rows = u64::from(fb.height.div_ceil(e) * e);
    let px = u64::from(fb.width.div_ceil(e) * e) * rows;
    let c0 = u64::from(fb.color_addr);
    let d0 = u64::from(fb.depth_addr);
    [
        (c0, c0 + px * u64::from(pixels.color_cache.bpp())),
        (d0, d0 + px * u64::from(pixels.depth_cache.bpp())),
    ]
}

/// An upper bound of the fragments `tris` can produce in `pixels`'s render target: per
/// triangle the vertices' bounding box widened by two pixels each way (the rasteriser's
/// subpixel rounding moves an edge by less than one), clipped to the target; the whole target
/// for a triangle with a coordinate that is not finite.
pub fn fragment_bound<S: TextureSampler>(
    pixels: &PixelPipeline<S>,
    tris: &[[ScreenVertex; 3]],
) -> u64 {
    let fb = &pixels.cfg.fb;
    let (w, h) = (f64::from(fb.width), f64::from(fb.height));
    let mut sum = 0u64;
    for t in tris {
        let finite = t.iter().all(|v| v.x.is_finite() && v.y.is_finite());
        let area = if finite {
            let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
            for v in t {
                x0 = x0.min(f64::from(v.x));
                x1 = x1.max(f64::from(v.x));
                y0 = y0.min(f64::from(v.y));
                y1 = y1.max(f64::from(v.y));
            }
            let dx = ((x1 + 2.0).min(w) - (x0 - 2.0).max(0.0)).max(0.0).ceil();
            let dy = ((y1 + 2.0).min(h) - (y0 - 2.0).max(0.0)).max(0.0).ceil();
            (dx * dy) as u64
        } else {
            (w * h) as u64
        };
        sum = sum.saturating_add(area);
    }
    sum
}

/// What one share produced for one draw of the group.
#[derive(Clone, Copy)]
struct DrawOut {
    /// Fragment-operation counters (alpha/stencil/depth failures, fragments passed).
    stats: PixelStats,
    /// Fragments this share rasterised.
    fragments: u64,
    /// Triangle outcomes (drawn, culled, invalid), the same in every piece: recorded by the
    /// share that ran piece 0.
    outcomes: Option<(u64, u64, u64)>,
    /// Per [`FEATURES`] entry: the first triangle of the draw that needed it unimplemented.
    first_missing: [usize; 6],
    color_unmapped: u64,
    depth_unmapped: u64,
}

impl Default for DrawOut {
    fn default() -> Self {
        DrawOut {
            stats: PixelStats::default(),
            fragments: 0,
            outcomes: None,
            first_missing: [usize::MAX; 6],
            color_unmapped: 0,
            depth_unmapped: 0,
        }
    }
}

/// What one share produced.
struct ShareOut {
    /// Per draw of the group.
    draws: Vec<DrawOut>,
    /// The tiles this share modified.
    scratch: Scratch,
    /// The share's wall-clock time ([`ParallelTimes`]).
    busy: std::time::Duration,
}

impl<S: TextureSampler + Sync> PixelPipeline<S> {
    /// Rasterises and shades `tris` in order with `threads` workers (see the module doc);
    /// memory, counters and diagnostics end up exactly as after calling
    /// [`PixelPipeline::draw_triangle_with`] for each triangle in turn. Returns the number of
    /// triangles drawn ([`TriangleOutcome::Drawn`]).
    pub fn draw_triangles<H: FragmentHooks + Clone + Send>(
        &mut self,
        mem: &mut PhysMem,
        tris: &[[ScreenVertex; 3]],
        hooks: &mut H,
        threads: usize,
        stores: &mut ShareStores,
    ) -> u64 {
        let mut group = [GroupDraw {
            pixels: self,
            hooks,
            tris,
        }];
        draw_group(mem, &mut group, threads, stores)[0]
    }
}

/// Draws a group of consecutive draws, each its triangles in order, with `threads` workers
/// (see the module doc): memory, and each draw's counters and diagnostics, end up exactly as
/// after calling [`PixelPipeline::draw_triangle_with`] for every triangle of every draw in
/// turn, provided nothing a later draw of the group reads before its pixels (its textures,
/// decoded when its pipeline was made; its vertices) lies in the render target. Returns the
/// number of triangles drawn ([`TriangleOutcome::Drawn`]) per draw.
///
/// The draws run in parallel together when they share the render target's layout
/// ([`GroupKey`]), all take the specialised path without stage timing, the target's tiles are
/// disjoint, its colour and depth buffers do not overlap, and their summed estimated coverage
/// reaches [`PARALLEL_MIN_PIXELS`]; otherwise one after the other on the calling thread.
pub fn draw_group<S: TextureSampler + Sync, H: FragmentHooks + Clone + Send>(
    mem: &mut PhysMem,
    draws: &mut [GroupDraw<'_, S, H>],
    threads: usize,
    stores: &mut ShareStores,
) -> Vec<u64> {
    let Some(first) = draws.first() else {
        return Vec::new();
    };
    let cfg = first.pixels.cfg;
    let parallel = threads > 1
        && draws.iter().any(|d| !d.tris.is_empty())
        && shareable(draws.iter().map(|d| &*d.pixels))
        && draws
            .iter()
            .map(|d| estimated_pixels(d.tris, &d.pixels.cfg.fb))
            .fold(0u64, u64::saturating_add)
            >= PARALLEL_MIN_PIXELS;
    if !parallel {
        return draws
            .iter_mut()
            .map(|d| {
                let mut drawn = 0;
                for t in d.tris {
                    if let TriangleOutcome::Drawn { .. } =
                        d.pixels.draw_triangle_with(mem, t, d.hooks)
                    {
                        drawn += 1;
                    }
                }
                drawn
            })
            .collect();
    }
    let key = group_key(first.pixels);
    // The caches may hold a tile that the shares are about to change.
    for d in draws.iter_mut() {
        d.pixels.color_cache.invalidate(mem);
        d.pixels.depth_cache.invalidate(mem);
    }
    let n = threads.min(u32::MAX as usize);
    let pieces = Pieces::new(cfg.raster.height, key, piece_count(n, &cfg.fb));
    let clone_hooks = |draws: &[GroupDraw<'_, S, H>]| -> Vec<H> {
        draws.iter().map(|d| (*d.hooks).clone()).collect()
    };
    // Every share reads memory as it was before the group and keeps the tiles it modifies in
    // its stores; memory is written after the group, so no page is copied.
    let mut jobs: Vec<(ShareMem<'_>, Vec<H>, Scratch)> = Vec::with_capacity(n);
    for _ in 1..n {
        let scratch = pieces.scratch(stores, &cfg.fb);
        jobs.push((ShareMem::Copy(mem.clone()), clone_hooks(draws), scratch));
    }
    let scratch = pieces.scratch(stores, &cfg.fb);
    jobs.insert(0, (ShareMem::Main(&mut *mem), clone_hooks(draws), scratch));
    let views: Vec<DrawView<'_, S>> = draws
        .iter()
        .map(|d| DrawView::of(d.pixels, &*d.hooks, d.tris))
        .collect();
    let views = &views;
    let pieces = &pieces;
    let run_share = |(mut share_mem, mut share_hooks, scratch): (ShareMem<'_>, Vec<H>, Scratch)| {
        let out = run_share(views, &mut share_hooks, share_mem.get(), scratch, pieces);
        // A clone is dropped here, on its share's thread, before the write-back (so the
        // caller's pages are no longer shared with it and are written in place).
        drop(share_mem);
        out
    };
    // Share 0 runs on the calling thread while the pool runs the others: one hand-off per
    // group instead of the caller waking the pool and sleeping until it is done.
    let mut jobs = jobs.into_iter();
    let mut rest: Vec<Option<ShareOut>> = (1..n).map(|_| None).collect();
    let (first, own_done) = rayon::in_place_scope(|scope| {
        let run_share = &run_share;
        let main_job = jobs.next();
        for (slot, job) in rest.iter_mut().zip(jobs) {
            scope.spawn(move |_| *slot = Some(run_share(job)));
        }
        // The scope waits for the pool's shares after this.
        (main_job.map(run_share), std::time::Instant::now())
    });
    stores.count_group(
        false,
        first.as_ref(),
        rest.iter().flatten(),
        own_done.elapsed(),
    );
    let results = first.into_iter().chain(rest.into_iter().flatten());
    let totals = combine(draws.len(), results, mem, stores);
    draws
        .iter_mut()
        .zip(&totals)
        .map(|(d, t)| apply(d.pixels, t))
        .collect()
}

/// True if the draws' pixels can be drawn by shares at all (whatever their size): every draw
/// on the specialised path without stage timing, one render-target layout ([`GroupKey`])
/// whose tiles are disjoint and whose colour and depth buffers do not overlap.
fn shareable<'p, S: TextureSampler + 'p>(
    mut pixels: impl Iterator<Item = &'p PixelPipeline<S>>,
) -> bool {
    let Some(first) = pixels.next() else {
        return false;
    };
    let key = group_key(first);
    let ok = |p: &PixelPipeline<S>| {
        p.path() == PixelPath::Specialized && p.timer.is_none() && group_key(p) == key
    };
    let fb = &first.cfg.fb;
    ok(first)
        && pixels.all(ok)
        && tiles_are_disjoint(fb)
        && !buffers_overlap(fb, key.color_bpp, key.depth_bpp)
}

/// The number of pieces the tile rows of `fb` are dealt out to for `shares` shares.
fn piece_count(shares: usize, fb: &FramebufferConfig) -> u32 {
    let tile_rows = fb.height.div_ceil(8) as usize;
    (shares.saturating_mul(PIECES_PER_SHARE)).clamp(1, tile_rows.max(1)) as u32
}

/// A group's tile rows dealt out to `count` interleaved pieces, which the shares claim one by
/// one through `next` (so a share that starts late — a worker still waking up, or a core busy
/// with another process — leaves its pieces to the others).
struct Pieces {
    count: u32,
    next: AtomicU32,
    /// The target's height in rows (for [`reaches`]).
    height: i64,
    color_bpp: u32,
    depth_bpp: u32,
}

impl Pieces {
    fn new(raster_height: u32, key: GroupKey, count: u32) -> Self {
        Pieces {
            count,
            next: AtomicU32::new(0),
            height: i64::from(raster_height),
            color_bpp: key.color_bpp,
            depth_bpp: key.depth_bpp,
        }
    }

    /// True if a piece is left to claim.
    fn remaining(&self) -> bool {
        self.next.load(Ordering::Relaxed) < self.count
    }

    /// A store pair for one share.
    fn scratch(&self, stores: &mut ShareStores, fb: &FramebufferConfig) -> Scratch {
        stores.take(fb, self.color_bpp, self.depth_bpp)
    }
}

/// What a share needs of one draw (shared, read-only).
struct DrawView<'v, S> {
    cfg: &'v super::PipelineConfig,
    tev: &'v super::TevProgram,
    sampler: &'v S,
    needs: super::Needs,
    color_stage: Option<super::ColorStage>,
    early_depth: bool,
    costs: bool,
    plan: Option<FastPlan>,
    tris: &'v [[ScreenVertex; 3]],
}

impl<'v, S: TextureSampler> DrawView<'v, S> {
    fn of<H: FragmentHooks>(
        p: &'v PixelPipeline<S>,
        hooks: &H,
        tris: &'v [[ScreenVertex; 3]],
    ) -> Self {
        DrawView {
            cfg: &p.cfg,
            tev: &p.tev,
            sampler: &p.sampler,
            needs: p.needs,
            color_stage: p.color_stage,
            early_depth: p.early_depth(hooks),
            costs: p.costs,
            // The parallel path runs only on the specialised path, without a solo (which
            // selects the reference path); the plan is `None` only if that ever changes.
            plan: p.plan.filter(|_| p.solo.is_none()),
            tris,
        }
    }
}

/// One share: claims pieces of `pieces` until none is left and, for each, runs every draw of
/// `views` in order over the piece's tile rows, reading `m` (memory as before the group,
/// which it never writes) and keeping the tiles it modifies in `scratch`'s stores.
fn run_share<S: TextureSampler, H: FragmentHooks>(
    views: &[DrawView<'_, S>],
    share_hooks: &mut [H],
    m: &mut PhysMem,
    scratch: Scratch,
    pieces: &Pieces,
) -> ShareOut {
    let start = std::time::Instant::now();
    let mut outs = vec![DrawOut::default(); views.len()];
    let mut color_cache = TileCache::deferred(pieces.color_bpp, scratch.color);
    let mut depth_cache = TileCache::deferred(pieces.depth_bpp, scratch.depth);
    // The share's batch scratch, kept across its pieces, draws and triangles (its contract
    // holds across draws: the rows a draw reads are written before they are read, and the
    // others are never written).
    let mut scratch = BatchScratch::boxed();
    let height = pieces.height;
    loop {
        let index = pieces.next.fetch_add(1, Ordering::Relaxed);
        if index >= pieces.count {
            break;
        }
        let bands = RowBands {
            count: pieces.count,
            index,
        };
        for ((view, out), share_hooks) in views.iter().zip(&mut outs).zip(share_hooks.iter_mut()) {
            let (mut drawn, mut culled, mut invalid) = (0, 0, 0);
            let unmapped = (color_cache.unmapped_pixels, depth_cache.unmapped_pixels);
            for (k, tri) in view.tris.iter().enumerate() {
                // Piece 0 visits every triangle (it records their outcomes); the others skip
                // those whose bounding box has none of their tile rows, which would give them
                // no fragment (and so no counter or diagnostic) but a set-up.
                if index != 0 && !reaches(tri, height, bands) {
                    continue;
                }
                let mut missing = 0u32;
                let outcome = {
                    let mut ctx = FragCtx {
                        cfg: view.cfg,
                        tev: view.tev,
                        sampler: view.sampler,
                        needs: view.needs,
                        color_cache: &mut color_cache,
                        depth_cache: &mut depth_cache,
                        stats: &mut out.stats,
                        costs: view.costs,
                        missing: &mut missing,
                        mem: &mut *m,
                        hooks: &mut *share_hooks,
                        color_stage: view.color_stage,
                        early_depth: view.early_depth,
                        sampling: false,
                        input_time: std::time::Duration::ZERO,
                        // A solo selects the reference path, which never comes here.
                        solo: None,
                    };
                    if view.costs {
                        ctx.shade_band::<true>(tri, bands, view.plan.as_ref(), &mut scratch)
                    } else {
                        ctx.shade_band::<false>(tri, bands, view.plan.as_ref(), &mut scratch)
                    }
                };
                // No flush between triangles or draws: the share owns its tiles, and its
                // caches read a tile they let go of back from their stores.
                match outcome {
                    TriangleOutcome::Drawn { fragments: f } => {
                        drawn += 1;
                        out.fragments += f;
                    }
                    TriangleOutcome::Culled => culled += 1,
                    TriangleOutcome::Invalid => invalid += 1,
                    TriangleOutcome::Degenerate => {}
                }
                for (i, f) in FEATURES.iter().enumerate() {
                    if missing & (1 << (*f as u32)) != 0 {
                        out.first_missing[i] = out.first_missing[i].min(k);
                    }
                }
            }
            out.color_unmapped += color_cache.unmapped_pixels - unmapped.0;
            out.depth_unmapped += depth_cache.unmapped_pixels - unmapped.1;
            if index == 0 {
                out.outcomes = Some((drawn, culled, invalid));
            }
        }
    }
    ShareOut {
        draws: outs,
        scratch: Scratch {
            color: color_cache.into_store().unwrap_or_default(),
            depth: depth_cache.into_store().unwrap_or_default(),
        },
        busy: start.elapsed(),
    }
}

/// Sums the shares' results per draw (`draws` draws) and writes their tiles to `mem` (the
/// shares' tiles are disjoint, so the order does not matter), returning the stores to
/// `stores`.
fn combine(
    draws: usize,
    results: impl IntoIterator<Item = ShareOut>,
    mem: &mut PhysMem,
    stores: &mut ShareStores,
) -> Vec<DrawOut> {
    let mut totals = vec![DrawOut::default(); draws];
    for out in results {
        for (t, o) in totals.iter_mut().zip(&out.draws) {
            if o.outcomes.is_some() {
                t.outcomes = o.outcomes;
            }
            t.fragments += o.fragments;
            t.stats.alpha_failed += o.stats.alpha_failed;
            t.stats.stencil_failed += o.stats.stencil_failed;
            t.stats.depth_failed += o.stats.depth_failed;
            t.stats.fragments_passed += o.stats.fragments_passed;
            t.stats.texels += o.stats.texels;
            t.color_unmapped += o.color_unmapped;
            t.depth_unmapped += o.depth_unmapped;
            for (a, b) in t.first_missing.iter_mut().zip(o.first_missing) {
                *a = (*a).min(b);
            }
        }
        out.scratch.color.write_back(mem);
        out.scratch.depth.write_back(mem);
        stores.give_back(out.scratch);
    }
    totals
}

/// Adds a draw's summed results `t` to its pipeline `p` (counters, then its "not implemented"
/// diagnostics in the sequential order: by first triangle, then by feature order); returns
/// its triangles drawn.
fn apply<S: TextureSampler>(p: &mut PixelPipeline<S>, t: &DrawOut) -> u64 {
    let mut drawn = 0;
    if let Some((dn, culled, invalid)) = t.outcomes {
        drawn = dn;
        p.stats.triangles_drawn += dn;
        p.stats.triangles_culled += culled;
        p.invalid_triangles += invalid;
    }
    p.stats.fragments += t.fragments;
    p.stats.alpha_failed += t.stats.alpha_failed;
    p.stats.stencil_failed += t.stats.stencil_failed;
    p.stats.depth_failed += t.stats.depth_failed;
    p.stats.fragments_passed += t.stats.fragments_passed;
    p.stats.texels += t.stats.texels;
    p.color_cache.unmapped_pixels += t.color_unmapped;
    p.depth_cache.unmapped_pixels += t.depth_unmapped;
    let mut order: Vec<(usize, usize)> = t
        .first_missing
        .iter()
        .enumerate()
        .filter(|(_, k)| **k != usize::MAX)
        .map(|(i, k)| (*k, i))
        .collect();
    order.sort_unstable();
    for (_, i) in order {
        p.not_implemented(FEATURES[i]);
    }
    drawn
}

/// The draws of a group that [`launch`] draws while the caller goes on: it owns them, the
/// shares read them.
pub trait GroupSource<S: TextureSampler + 'static, H: 'static>: Send + Sync + 'static {
    /// Each draw's pipeline, fixed-function stages and triangles (in submission order), in
    /// draw order.
    fn draws(&self) -> impl Iterator<Item = (&PixelPipeline<S>, &H, &[[ScreenVertex; 3]])>;
    /// Each draw's pipeline, in draw order, to add its counters and diagnostics to.
    fn pixels_mut(&mut self) -> impl Iterator<Item = &mut PixelPipeline<S>>;
}

/// What the shares of a launched group share.
struct FlightInner<G> {
    group: G,
    pieces: Pieces,
}

/// What a share spawned on the pool needs to start: memory as it was at launch, its store
/// pair and the group. Taken by the share when it starts, or by the caller when it lands the
/// group first (the share then does nothing), so the caller never waits for a share that has
/// not started (a pool busy with other work, a worker not scheduled).
type Slot<G> = std::sync::Mutex<Option<(PhysMem, Scratch, std::sync::Arc<FlightInner<G>>)>>;

/// Locks `m`, whether or not a holder panicked (the data stays consistent: a slot is only
/// ever taken whole).
fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A group of draws being drawn on the pool while the caller goes on ([`launch`]); its
/// results reach memory, counters and diagnostics when it lands ([`Flight::land`]).
pub struct Flight<G> {
    inner: std::sync::Arc<FlightInner<G>>,
    /// The spawned shares' starting slots.
    slots: std::sync::Arc<[Slot<G>]>,
    /// The shares' results (in a mutex only so the flight, and the pipeline state holding
    /// it, stay `Sync`; only its owner receives).
    results: std::sync::Mutex<std::sync::mpsc::Receiver<ShareOut>>,
    /// Shares spawned on the pool.
    jobs: usize,
    /// Their results so far.
    received: Vec<ShareOut>,
    /// Memory as it was at launch and a store pair, for the share the caller runs when it
    /// lands the group (it takes what the pool has not).
    caller: (PhysMem, Scratch),
}

impl<G> std::fmt::Debug for Flight<G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Flight({} shares, {} done)",
            self.jobs,
            self.received.len()
        )
    }
}

/// One share of a launched group, with memory `m` (a clone, dropped before it returns so the
/// caller's pages are no longer shared with it when the tiles are written back).
fn flight_share<
    S: TextureSampler + 'static,
    H: FragmentHooks + Clone + 'static,
    G: GroupSource<S, H>,
>(
    inner: &FlightInner<G>,
    mut m: PhysMem,
    scratch: Scratch,
) -> ShareOut {
    let g = &inner.group;
    if !inner.pieces.remaining() {
        // Started after every piece was claimed: nothing to draw.
        return ShareOut {
            draws: vec![DrawOut::default(); g.draws().count()],
            scratch,
            busy: std::time::Duration::ZERO,
        };
    }
    let views: Vec<DrawView<'_, S>> = g.draws().map(|(p, h, t)| DrawView::of(p, h, t)).collect();
    let mut hooks: Vec<H> = g.draws().map(|(_, h, _)| h.clone()).collect();
    let out = run_share(&views, &mut hooks, &mut m, scratch, &inner.pieces);
    drop(m);
    out
}

/// Starts drawing `group` on rayon's pool and returns at once, so the caller can prepare the
/// next draws while the pool draws these: the same shares as [`draw_group`] (or one, below
/// [`PARALLEL_MIN_PIXELS`]) reading memory as it is now. The caller must not write memory
/// the group reads or writes (its render target, its textures) until it lands the group
/// ([`Flight::land`]); nothing is written to `mem` before then.
///
/// Returns the group back (`Err`) when it cannot be drawn this way: fewer than two threads,
/// no triangle, a group [`draw_group`] would not split for a reason other than its size, or a
/// caller on a pool thread (which could wait for work queued behind itself).
pub fn launch<S, H, G>(
    mem: &mut PhysMem,
    mut group: G,
    threads: usize,
    stores: &mut ShareStores,
) -> Result<Flight<G>, G>
where
    S: TextureSampler + Send + Sync + 'static,
    H: FragmentHooks + Clone + Send + Sync + 'static,
    G: GroupSource<S, H>,
{
    let Some((p0, _, _)) = group.draws().next() else {
        return Err(group);
    };
    let (fb, key, height) = (p0.cfg.fb, group_key(p0), p0.cfg.raster.height);
    if threads < 2
        || rayon::current_thread_index().is_some()
        || group.draws().all(|(_, _, t)| t.is_empty())
        || !shareable(group.draws().map(|(p, _, _)| p))
    {
        return Err(group);
    }
    for p in group.pixels_mut() {
        p.color_cache.invalidate(mem);
        p.depth_cache.invalidate(mem);
    }
    let area = group
        .draws()
        .map(|(_, _, t)| estimated_pixels(t, &fb))
        .fold(0u64, u64::saturating_add);
    // A small group is drawn by one share; a large one by as many as `draw_group` uses, one
    // fewer on the pool than there are threads (the caller keeps a core for the next draws
    // and joins in when it lands the group).
    let (pieces, jobs) = if area < PARALLEL_MIN_PIXELS {
        (1, 1)
    } else {
        (piece_count(threads, &fb), threads - 1)
    };
    let pieces = Pieces::new(height, key, pieces);
    let caller = (mem.clone(), pieces.scratch(stores, &fb));
    let scratches: Vec<Scratch> = (0..jobs).map(|_| pieces.scratch(stores, &fb)).collect();
    let inner = std::sync::Arc::new(FlightInner { group, pieces });
    let slots: std::sync::Arc<[Slot<G>]> = scratches
        .into_iter()
        .map(|s| std::sync::Mutex::new(Some((mem.clone(), s, std::sync::Arc::clone(&inner)))))
        .collect();
    let (tx, results) = std::sync::mpsc::channel();
    for i in 0..jobs {
        let slots = std::sync::Arc::clone(&slots);
        let tx = tx.clone();
        rayon::spawn(move || {
            // Taken by the caller already: the group has landed without this share.
            let Some((m, scratch, inner)) = slots.get(i).and_then(|s| lock(s).take()) else {
                return;
            };
            let out = flight_share(&inner, m, scratch);
            // The group is released before the result is sent, so the caller holds the only
            // reference once it has the result of every share that started.
            drop(inner);
            // The caller may have dropped the flight (its result is then not wanted).
            let _ = tx.send(out);
        });
    }
    Ok(Flight {
        inner,
        slots,
        results: std::sync::Mutex::new(results),
        jobs,
        received: Vec::new(),
        caller,
    })
}

impl<G> Flight<G> {
    /// True if every piece has been claimed and every share that started has finished
    /// (then [`Flight::land`] draws nothing and waits for nothing).
    pub fn finished(&mut self) -> bool {
        let results = self
            .results
            .get_mut()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while let Ok(out) = results.try_recv() {
            self.received.push(out);
        }
        if self.inner.pieces.remaining() {
            return false;
        }
        let queued = self.slots.iter().filter(|s| lock(s).is_some()).count();
        self.received.len() >= self.jobs - queued
    }

    /// Waits for the group (drawing on the calling thread whatever pieces the pool has not
    /// claimed), writes its tiles to `mem` and adds each draw's counters and diagnostics to
    /// its pipeline; returns the group and the triangles drawn per draw.
    pub fn land<S, H>(self, mem: &mut PhysMem, stores: &mut ShareStores) -> (G, Vec<u64>)
    where
        S: TextureSampler + 'static,
        H: FragmentHooks + Clone + 'static,
        G: GroupSource<S, H>,
    {
        let Flight {
            mut inner,
            slots,
            results,
            jobs,
            mut received,
            caller,
        } = self;
        let results = results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // The shares that have not started never will: their pieces are drawn here.
        let mut started = jobs;
        for slot in slots.iter() {
            if let Some((m, scratch, group)) = lock(slot).take() {
                drop((m, group));
                stores.give_back(scratch);
                started -= 1;
            }
        }
        let (m, scratch) = caller;
        let own = flight_share(&inner, m, scratch);
        let own_done = std::time::Instant::now();
        while received.len() < started {
            match results.recv() {
                Ok(out) => received.push(out),
                // Every sender is gone: a share did not finish (a panic on the pool, which
                // aborts the process by default). Nothing more will come.
                Err(_) => break,
            }
        }
        // Each share that started dropped its reference before sending its result, and the
        // others' references were dropped with their slots.
        let mut group = loop {
            match std::sync::Arc::try_unwrap(inner) {
                Ok(i) => break i.group,
                Err(again) => {
                    inner = again;
                    std::thread::yield_now();
                }
            }
        };
        stores.count_group(true, Some(&own), &received, own_done.elapsed());
        received.push(own);
        let count = group.draws().count();
        let totals = combine(count, received, mem, stores);
        let drawn = group
            .pixels_mut()
            .zip(&totals)
            .map(|(p, t)| apply(p, t))
            .collect();
        (group, drawn)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::VRAM;
    use crate::pixel::fragment::textures::NoTextures as NoTexturesAlias;
    use crate::vertex::OutputVertex;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 >> 16) as u32
        }
        fn f(&mut self, scale: f32) -> f32 {
            (self.next() % 10_000) as f32 / 10_000.0 * scale
        }
    }

    /// The bytes the test's buffers can live in: the start and the end of VRAM.
    fn snapshot(mem: &PhysMem) -> Vec<u8> {
        let mut out = vec![0u8; 0x6_0000];
        let (a, b) = out.split_at_mut(0x4_0000);
        mem.read(VRAM.base, a).unwrap();
        mem.read(VRAM.base + VRAM.size - 0x2_0000, b).unwrap();
        out
    }

    /// Random render targets (every colour and depth format, both tile modes, buffers partly
    /// past the end of VRAM), fragment operations, fog and procedural texture without hooks
    /// (so "not implemented" diagnostics are raised mid-batch), and random triangles: drawing
    /// the batch with 2, 3 and 8 workers leaves the same memory, counters and diagnostics as
    /// drawing the triangles one by one.
    #[test]
    fn batches_match_the_sequential_loop_at_every_thread_count() {
        let mut rng = Rng(0x5EED_1234_ABCD_0001);
        let mut noise = vec![0u8; 0x4_0000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        base.write(VRAM.base + VRAM.size - 0x2_0000, &noise[..0x2_0000])
            .unwrap();
        let mut parallel_cases = 0;
        let mut stores = ShareStores::default();
        for case in 0..120 {
            let mut r = Box::new([0u32; 0x300]);
            for w in r[0x100..0x108].iter_mut() {
                *w = rng.next();
            }
            r[0x100] &= !3;
            if case % 2 == 0 {
                r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][case % 3];
                r[0x100] |= 1 << 8;
            }
            let (mut w, h) = (8 * (2 + rng.next() % 12), 8 * (2 + rng.next() % 12));
            if case % 9 == 8 {
                // A width whose tiles overlap in memory: must fall back, still identical.
                w += 3;
            }
            let color_bytes = w * h * 4;
            if case % 5 == 4 {
                // Colour buffer running past the end of VRAM.
                r[0x11D] = (VRAM.base + VRAM.size - color_bytes / 2) >> 3;
            } else {
                r[0x11D] = (VRAM.base + (rng.next() % 0x100) * 8) >> 3;
            }
            r[0x11C] = (VRAM.base + 0x2_0000 + (rng.next() % 0x100) * 8) >> 3;
            r[0x117] = (rng.next() % 5) << 16;
            r[0x116] = [0, 2, 3][rng.next() as usize % 3];
            r[0x11B] = rng.next() % 2;
            r[0x11E] = w | ((h - 1) << 12) | (1 << 24);
            r[0x112] = 0xF;
            r[0x113] = 0xF;
            r[0x114] = 3;
            r[0x115] = 3;
            r[0x04D] = 0xBF_0000;
            r[0x06D] = 1;
            // Fog mode 5 (no hook: "not implemented") in some cases.
            r[0x0E0] = if case % 3 == 0 { 5 } else { 0 };
            // Stage 0: primary colour, or (some cases) the procedural texture (unit 3 enabled,
            // no hook: "not implemented").
            if case % 4 == 1 {
                r[0x080] = 1 << 10;
                r[0x0C0] = 6 | (6 << 16);
            } else {
                r[0x0C0] = 0;
            }
            r[0x0C1] = 0;
            for s in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
                r[s] = 15 | (15 << 16);
            }
            let (wf, hf) = (w as f32, h as f32);
            let mut tris = Vec::new();
            for _ in 0..(4 + rng.next() % 20) {
                let mut tri = [ScreenVertex::default(); 3];
                for v in &mut tri {
                    *v = ScreenVertex {
                        x: rng.f(wf + 16.0) - 8.0,
                        y: rng.f(hf + 16.0) - 8.0,
                        z_over_w: -rng.f(1.0),
                        inv_w: 1.0,
                        attrs: OutputVertex {
                            color: [rng.f(1.0), rng.f(1.0), rng.f(1.0), rng.f(1.0)],
                            ..Default::default()
                        },
                    };
                }
                tris.push(tri);
            }
            if case % 3 == 2 {
                // Many small triangles (sprite-like): most pieces skip most of them.
                tris.clear();
                for _ in 0..(80 + rng.next() % 120) {
                    let (cx, cy) = (rng.f(wf + 8.0) - 4.0, rng.f(hf + 8.0) - 4.0);
                    let mut tri = [ScreenVertex::default(); 3];
                    for v in &mut tri {
                        *v = ScreenVertex {
                            x: cx + rng.f(24.0) - 12.0,
                            y: cy + rng.f(24.0) - 12.0,
                            z_over_w: -rng.f(1.0),
                            inv_w: 1.0,
                            attrs: OutputVertex {
                                color: [rng.f(1.0), rng.f(1.0), rng.f(1.0), rng.f(1.0)],
                                ..Default::default()
                            },
                        };
                    }
                    tris.push(tri);
                }
            }
            if case % 7 == 0 {
                tris[1][0].x = f32::NAN;
            }
            if case % 13 == 12 {
                // A batch of one triangle (an immediate-mode vertex's).
                tris.truncate(1);
            }
            // One pool of share stores for every case: stores reused across render targets
            // of other sizes, addresses and formats must not change a result.
            let mut run = |threads: Option<usize>| {
                let mut mem = base.clone();
                let mut p = PixelPipeline::new(&r);
                let drawn = match threads {
                    None => tris
                        .iter()
                        .filter(|t| {
                            matches!(p.draw_triangle(&mut mem, t), TriangleOutcome::Drawn { .. })
                        })
                        .count() as u64,
                    Some(n) => p.draw_triangles(&mut mem, &tris, &mut (), n, &mut stores),
                };
                (snapshot(&mem), drawn, p.stats(), p.take_diagnostics())
            };
            let fb = FramebufferConfig::from_regs(&r);
            let bpp = |b: Option<usize>| b.map_or(4, |n| n as u32);
            let parallel = estimated_pixels(&tris, &fb) >= PARALLEL_MIN_PIXELS
                && tiles_are_disjoint(&fb)
                && !buffers_overlap(
                    &fb,
                    bpp(fb.color_format.map(|f| f.bytes_per_pixel())),
                    bpp(fb.depth_format.map(|f| f.bytes_per_pixel())),
                );
            parallel_cases += u32::from(parallel);
            let sequential = run(None);
            for n in [2, 3, 8] {
                let par = run(Some(n));
                assert!(
                    par.0 == sequential.0,
                    "case {case}, {n} threads: memory differs"
                );
                assert_eq!(par.1, sequential.1, "case {case}, {n} threads: drawn");
                assert_eq!(par.2, sequential.2, "case {case}, {n} threads: counters");
                assert_eq!(par.3, sequential.3, "case {case}, {n} threads: diagnostics");
            }
        }
        assert!(
            parallel_cases > 40,
            "only {parallel_cases} batches took the parallel path"
        );
    }

    /// Groups of consecutive draws (each its own fragment operations, fog and combiner
    /// source, most into one render target, some into another buffer or with overlapping
    /// colour and depth buffers so the group must fall back): drawing a group with 2, 3 and 8
    /// workers leaves the same memory, and each draw the same triangle count, counters and
    /// diagnostics, as drawing the draws one after the other on one thread.
    #[test]
    fn groups_of_draws_match_drawing_them_in_turn() {
        let mut rng = Rng(0x5EED_6A0B_0000_0003);
        let mut noise = vec![0u8; 0x4_0000];
        for b in noise.iter_mut() {
            *b = rng.next() as u8;
        }
        let mut base = PhysMem::new();
        base.write(VRAM.base, &noise).unwrap();
        let mut stores = ShareStores::default();
        let mut parallel_groups = 0;
        let mut launches = 0;
        for case in 0..60 {
            let (w, h) = (8 * (4 + rng.next() % 10), 8 * (4 + rng.next() % 10));
            let mut common = Box::new([0u32; 0x300]);
            common[0x11D] = (VRAM.base + (rng.next() % 0x40) * 8) >> 3;
            common[0x11C] = (VRAM.base + 0x2_0000 + (rng.next() % 0x40) * 8) >> 3;
            common[0x117] = (rng.next() % 5) << 16;
            common[0x116] = [0, 2, 3][rng.next() as usize % 3];
            common[0x11B] = rng.next() % 2;
            common[0x11E] = w | ((h - 1) << 12) | (1 << 24);
            common[0x112] = 0xF;
            common[0x113] = 0xF;
            common[0x114] = 3;
            common[0x115] = 3;
            common[0x04D] = 0xBF_0000;
            common[0x06D] = 1;
            let draws = 2 + rng.next() as usize % 6;
            let mut regs = Vec::new();
            let mut tris = Vec::new();
            for d in 0..draws {
                let mut r = common.clone();
                for word in r[0x100..0x108].iter_mut() {
                    *word = rng.next();
                }
                r[0x100] &= !3;
                if rng.next().is_multiple_of(2) {
                    r[0x101] = [0x7676_0000, 0x0101_0000, 0x1016_0000][d % 3];
                    r[0x100] |= 1 << 8;
                }
                // Fog mode 5 or procedural texture without hooks in some draws ("not
                // implemented", raised per draw).
                r[0x0E0] = if rng.next().is_multiple_of(5) { 5 } else { 0 };
                if rng.next().is_multiple_of(6) {
                    r[0x080] = 1 << 10;
                    r[0x0C0] = 3;
                } else {
                    r[0x0C0] = 0;
                }
                r[0x0C1] = 0;
                r[0x0C2] = 0;
                r[0x0C3] = 0xFFFF_FFFF;
                r[0x0C4] = 0;
                if case % 10 == 9 && d == draws / 2 {
                    // Another render target (colour buffer elsewhere): no common group.
                    r[0x11D] = (VRAM.base + 0x3_0000) >> 3;
                }
                if case % 10 == 4 && d == 0 {
                    // Colour and depth buffers overlapping: the group must fall back.
                    r[0x11C] = r[0x11D];
                }
                regs.push(r);
                let (wf, hf) = (w as f32, h as f32);
                let mut t = Vec::new();
                let small = rng.next().is_multiple_of(2);
                for _ in 0..(1 + rng.next() % if small { 12 } else { 4 }) {
                    let size = if small { 20.0 } else { wf.max(hf) * 1.5 };
                    let (cx, cy) = (rng.f(wf + 8.0) - 4.0, rng.f(hf + 8.0) - 4.0);
                    let mut tri = [ScreenVertex::default(); 3];
                    for v in &mut tri {
                        *v = ScreenVertex {
                            x: cx + rng.f(size) - size / 2.0,
                            y: cy + rng.f(size) - size / 2.0,
                            z_over_w: -rng.f(1.0),
                            inv_w: 1.0,
                            attrs: OutputVertex {
                                color: [rng.f(1.0), rng.f(1.0), rng.f(1.0), rng.f(1.0)],
                                ..Default::default()
                            },
                        };
                    }
                    t.push(tri);
                }
                tris.push(t);
            }
            let mut launched = 0;
            let mut run = |threads: Option<usize>, launching: bool| {
                let mut mem = base.clone();
                let mut pipes: Vec<PixelPipeline> =
                    regs.iter().map(|r| PixelPipeline::new(r)).collect();
                let mut hooks = vec![(); draws];
                if let (Some(n), true) = (threads, launching) {
                    // Launched on the pool and landed (or, when it cannot be launched,
                    // drawn as a group).
                    let group = Owned {
                        pipes,
                        hooks,
                        tris: tris.clone(),
                    };
                    let (mut group, drawn) = match launch(&mut mem, group, n, &mut stores) {
                        Ok(flight) => {
                            launched += 1;
                            flight.land(&mut mem, &mut stores)
                        }
                        Err(mut g) => {
                            let Owned { pipes, hooks, tris } = &mut g;
                            let mut d: Vec<GroupDraw<'_, NoTexturesAlias, ()>> = pipes
                                .iter_mut()
                                .zip(hooks.iter_mut())
                                .zip(tris.iter())
                                .map(|((pixels, hooks), t)| GroupDraw {
                                    pixels,
                                    hooks,
                                    tris: t,
                                })
                                .collect();
                            let drawn = draw_group(&mut mem, &mut d, n, &mut stores);
                            drop(d);
                            (g, drawn)
                        }
                    };
                    let per_draw: Vec<_> = group
                        .pipes
                        .iter_mut()
                        .map(|p| (p.stats(), p.take_diagnostics()))
                        .collect();
                    return (snapshot(&mem), drawn, per_draw);
                }
                let drawn = match threads {
                    None => pipes
                        .iter_mut()
                        .zip(&tris)
                        .map(|(p, t)| {
                            t.iter()
                                .filter(|t| {
                                    matches!(
                                        p.draw_triangle(&mut mem, t),
                                        TriangleOutcome::Drawn { .. }
                                    )
                                })
                                .count() as u64
                        })
                        .collect(),
                    Some(n) => {
                        let mut group: Vec<GroupDraw<'_, NoTexturesAlias, ()>> = pipes
                            .iter_mut()
                            .zip(hooks.iter_mut())
                            .zip(&tris)
                            .map(|((pixels, hooks), t)| GroupDraw {
                                pixels,
                                hooks,
                                tris: t,
                            })
                            .collect();
                        draw_group(&mut mem, &mut group, n, &mut stores)
                    }
                };
                let per_draw: Vec<_> = pipes
                    .iter_mut()
                    .map(|p| (p.stats(), p.take_diagnostics()))
                    .collect();
                (snapshot(&mem), drawn, per_draw)
            };
            let sequential = run(None, false);
            let pipes: Vec<PixelPipeline> = regs.iter().map(|r| PixelPipeline::new(r)).collect();
            let key = group_key(&pipes[0]);
            let fb = FramebufferConfig::from_regs(&regs[0]);
            if pipes.iter().all(|p| group_key(p) == key)
                && tiles_are_disjoint(&fb)
                && !buffers_overlap(&fb, key.color_bpp, key.depth_bpp)
                && tris.iter().map(|t| estimated_pixels(t, &fb)).sum::<u64>() >= PARALLEL_MIN_PIXELS
            {
                parallel_groups += 1;
            }
            for n in [2, 3, 8] {
                for launching in [false, true] {
                    let par = run(Some(n), launching);
                    let how = if launching { "launched" } else { "group" };
                    assert!(
                        par.0 == sequential.0,
                        "case {case}, {n} threads, {how}: memory"
                    );
                    assert_eq!(
                        par.1, sequential.1,
                        "case {case}, {n} threads, {how}: drawn"
                    );
                    assert_eq!(
                        par.2, sequential.2,
                        "case {case}, {n} threads, {how}: counters"
                    );
                }
            }
            launches += launched;
        }
        assert!(
            parallel_groups > 15,
            "only {parallel_groups} groups took the parallel path"
        );
        // Launched: each case whose layout allows shares, small groups included (75 of the
        // 180 runs with this seed).
        assert!(launches > 50, "only {launches} groups were launched");
        // The stores counted every group drawn by shares: the in-place ones (each parallel
        // case at 2, 3 and 8 threads) and the launched ones; the caller drew in each.
        let t = stores.times();
        assert_eq!(t.launched, launches);
        assert_eq!(t.groups, 3 * parallel_groups + launches);
        assert!(t.caller_pixels > std::time::Duration::ZERO, "{t:?}");
        // A clone of the stores (a keyframe's) starts at zero.
        assert_eq!(stores.clone().times(), ParallelTimes::default());
    }

    /// A group owned for [`launch`] in the tests.
    struct Owned {
        pipes: Vec<PixelPipeline>,
        hooks: Vec<()>,
        tris: Vec<Vec<[ScreenVertex; 3]>>,
    }

    impl GroupSource<NoTexturesAlias, ()> for Owned {
        fn draws(
            &self,
        ) -> impl Iterator<Item = (&PixelPipeline<NoTexturesAlias>, &(), &[[ScreenVertex; 3]])>
        {
            self.pipes
                .iter()
                .zip(&self.hooks)
                .zip(&self.tris)
                .map(|((p, h), t)| (p, h, &t[..]))
        }

        fn pixels_mut(&mut self) -> impl Iterator<Item = &mut PixelPipeline<NoTexturesAlias>> {
            self.pipes.iter_mut()
        }
    }

    /// A piece skips a triangle only if the rasteriser gives it no fragment in the piece's
    /// tile rows: random triangles of every size, some with a vertex at a subpixel edge or out
    /// of range, rasterised per band.
    #[test]
    fn skipped_triangles_have_no_fragment_in_the_piece() {
        let mut rng = Rng(0x0BAD_5EED_0000_0007);
        let mut r = Box::new([0u32; 0x300]);
        let (w, h) = (96u32, 200u32);
        r[0x11E] = w | ((h - 1) << 12) | (1 << 24);
        r[0x04D] = 0xBF_0000;
        let raster = &crate::pixel::raster::RasterConfig::from_regs(&r);
        let mut skipped = 0;
        for case in 0..4000 {
            let size = [2.0, 9.0, 40.0, 400.0][case % 4];
            let (cx, cy) = (rng.f(w as f32 + 40.0) - 20.0, rng.f(h as f32 + 40.0) - 20.0);
            let mut tri = [ScreenVertex::default(); 3];
            for v in &mut tri {
                v.x = cx + rng.f(size) - size / 2.0;
                v.y = cy + rng.f(size) - size / 2.0;
                if rng.next().is_multiple_of(8) {
                    // On a row boundary, give or take the subpixel rounding.
                    v.y = v.y.round() + [-1.0 / 32.0, 0.0, 1.0 / 32.0][rng.next() as usize % 3];
                }
                v.inv_w = 1.0;
            }
            if case % 97 == 0 {
                tri[2].y = f32::INFINITY;
            }
            for count in [2u32, 3, 8, 16] {
                for index in 0..count {
                    let bands = RowBands { count, index };
                    if reaches(&tri, i64::from(h), bands) {
                        continue;
                    }
                    skipped += 1;
                    let mut n = 0u64;
                    rasterize_triangle_bands(raster, &tri, Some(bands), |_| n += 1);
                    assert_eq!(n, 0, "case {case}: {tri:?} has fragments in {bands:?}");
                }
            }
        }
        assert!(skipped > 10_000, "only {skipped} skips");
    }

    #[test]
    fn row_bands_partition_tile_rows() {
        for count in 1..6u32 {
            for row in -20i64..40 {
                let owners = (0..count)
                    .filter(|&index| RowBands { count, index }.owns(row))
                    .count();
                assert_eq!(owners, 1, "row {row} with {count} shares");
            }
        }
    }
}
