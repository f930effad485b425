//! Cross-draw pixel groups: the pixel work of consecutive draws that render into the same
//! target, drawn together by the parallel pixel path
//! ([`crate::pixel::fragment::parallel::draw_group`]).
//!
//! Stage: between the draw driver's geometry and the pixel pipeline. Input: a finished
//! draw's pixel pipeline, fixed-function stages and screen-space triangles; output: the render
//! target in [`PhysMem`], each draw's statistics and diagnostics, reported to the observer
//! when its pixels are drawn (later than its `draw_begin`, in draw order).
//!
//! A small draw (a sprite, a quad of a UI, one of a few hundred models) has too few pixels to
//! split between threads, so without groups it runs on one. With them its pixels wait, and
//! the draws that follow join it while they render into the same buffers, until a group is
//! large enough or something needs the memory they write: the shares then run every waiting
//! draw in order over their own tile rows, which keeps every pixel's fragments in the
//! hardware's order and the result bit-identical to drawing each draw in turn.
//!
//! A draw waits only when nothing can observe the difference ([`PipelineState::draw`] decides):
//! more than one thread, the specialised pixel path without probes, solos or stage timing, an
//! observer that accepts late `draw_end` events ([`Observer::allows_deferred_pixels`]), and a
//! command processor that allows it ([`PipelineState::defer_fragments`]: inside a command
//! list, without edit hooks, and with more fragments left in the work budgets than the
//! waiting draws can produce, so no budget can run out while pixels wait). The group is drawn
//! before anything reads what it writes:
//! * a draw whose textures, vertex arrays or index buffer overlap the waiting draws' colour or
//!   depth buffer (render to texture): before its textures are decoded;
//! * a draw that cannot wait, or renders into other buffers: before its pixels;
//! * the command processor: when the list's own memory overlaps the waiting draws' buffers,
//!   at a jump, and when it stops or finishes a list (so fills, transfers, memory loads,
//!   frame ends and snapshots always see every pixel).
//!
//! A waiting group is launched ([`Pending::cycle`], through
//! [`crate::pixel::fragment::parallel::launch`]) once its fragment bound reaches
//! [`LAUNCH_MIN_FRAGMENTS`] and no launched group is still being drawn, or when it must make
//! room (a draw into other buffers, or one it cannot take): the pool draws it while the caller
//! goes on with the next draws, which wait as a new group. At most one group is in flight: it
//! lands (its tiles are written, its draws reported) before any other pixel work and at every
//! point above where a waiting group is drawn; the checks above cover its buffers too.
//!
//! Immediate-mode vertices wait like draws (each vertex's triangles with its own pipeline);
//! what their pixels add to the immediate-mode draw's counters is collected when they are
//! reported, and a draw that ends while some of its vertices' pixels wait ends after them
//! (an end entry in the queue).
//!
//! [`Observer::allows_deferred_pixels`]: crate::debug::Observer::allows_deferred_pixels
//! [`PipelineState::draw`]: super::PipelineState::draw
//! [`PipelineState::defer_fragments`]: super::PipelineState::defer_fragments

use std::ops::Range;

use crate::debug::{DrawInfo, DrawStats, Observer};
use crate::geometry::vertex_loader::{LoaderConfig, index_size};
use crate::memory::PhysMem;
use crate::pixel::fragment::parallel::{
    Flight, GroupDraw, GroupKey, GroupSource, ShareStores, draw_group, fragment_bound, group_key,
    launch, written_ranges,
};
use crate::pixel::fragment::textures::TextureUnits;
use crate::pixel::fragment::{PixelPath, PixelPipeline};
use crate::pixel::stages::FixedFunctionStages;
use crate::pixel::texture::{TextureConfig, TextureType};
use crate::vertex::ScreenVertex;

/// A draw being drawn now: its pipeline, stages and triangles.
pub(super) type Current<'a> = (
    &'a mut PixelPipeline<TextureUnits>,
    &'a mut FixedFunctionStages,
    &'a [[ScreenVertex; 3]],
);

/// At most this many draws wait in one group (bounds the memory of their pipelines).
pub(super) const MAX_WAITING_DRAWS: usize = 256;

/// A waiting group is launched (drawn on the pool while the draws after it are prepared, see
/// [`Pending::cycle`]) once the upper bound of its fragments reaches this many and no
/// launched group is still being drawn.
const LAUNCH_MIN_FRAGMENTS: u64 = 2048;

/// One draw (or immediate-mode vertex) whose pixels wait, or were drawn and wait to be
/// reported.
struct Waiting {
    info: DrawInfo,
    /// The draw's statistics (for an immediate-mode vertex: only what its pixels add).
    stats: DrawStats,
    pixels: PixelPipeline<TextureUnits>,
    stages: FixedFunctionStages,
    /// Its triangles in [`Pending::screen`].
    tris: Range<usize>,
    /// An immediate-mode vertex's triangles: its counters go to the immediate-mode draw, which
    /// ends later ([`Entry::ImmediateEnd`] or [`PipelineState::close_immediate`]).
    ///
    /// [`PipelineState::close_immediate`]: super::PipelineState::close_immediate
    immediate: bool,
}

/// What waits, in draw order.
enum Entry {
    /// A draw's or an immediate-mode vertex's pixel work. Boxed: a pipeline is a few
    /// kilobytes, moved once into its box.
    Pixels(Box<Waiting>),
    /// An immediate-mode draw that ended while pixels of its vertices waited: reported (with
    /// what its vertices' pixels add) after them.
    ImmediateEnd(Box<(DrawInfo, DrawStats)>),
}

/// A launched group: its entries (in draw order, immediate-mode ends among them), their
/// triangles, and each draw's culled-triangle counter before it was drawn.
struct Launched {
    entries: Vec<Entry>,
    screen: Vec<[ScreenVertex; 3]>,
    culled: Vec<u64>,
}

impl GroupSource<TextureUnits, FixedFunctionStages> for Launched {
    fn draws(
        &self,
    ) -> impl Iterator<
        Item = (
            &PixelPipeline<TextureUnits>,
            &FixedFunctionStages,
            &[[ScreenVertex; 3]],
        ),
    > {
        self.entries.iter().filter_map(|e| match e {
            Entry::Pixels(w) => Some((&w.pixels, &w.stages, &self.screen[w.tris.clone()])),
            Entry::ImmediateEnd(_) => None,
        })
    }

    fn pixels_mut(&mut self) -> impl Iterator<Item = &mut PixelPipeline<TextureUnits>> {
        self.entries.iter_mut().filter_map(|e| match e {
            Entry::Pixels(w) => Some(&mut w.pixels),
            Entry::ImmediateEnd(_) => None,
        })
    }
}

/// The draws whose pixel work waits, the group being drawn on the pool, and those drawn but
/// not yet reported.
#[derive(Default)]
pub(super) struct Pending {
    /// Waiting, in draw order.
    waiting: Vec<Entry>,
    /// The launched group (earlier draws than `waiting`'s, later than `done`'s).
    flight: Option<Flight<Launched>>,
    /// The launched group's colour and depth buffer bytes.
    flight_written: [(u64, u64); 2],
    /// The fragment bound of the launched group, and of the drawn entries not yet reported.
    flight_bound: u64,
    done_bound: u64,
    /// A triangle buffer kept for the next group.
    spare_screen: Vec<[ScreenVertex; 3]>,
    /// [`Entry::Pixels`] entries in `waiting`.
    pixel_entries: usize,
    /// Drawn, in draw order, to be reported by [`Pending::report`].
    done: Vec<Entry>,
    /// What the reported pixels of the open (or next ending) immediate-mode draw's vertices
    /// added to its counters.
    immediate: DrawStats,
    /// The waiting draws' triangles, in submission order.
    screen: Vec<[ScreenVertex; 3]>,
    /// The waiting draws' render-target layout.
    key: Option<GroupKey>,
    /// The waiting draws' colour and depth buffer bytes (half-open physical ranges).
    written: [(u64, u64); 2],
    /// An upper bound of the fragments the waiting draws can produce.
    bound: u64,
}

impl std::fmt::Debug for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Pending({} waiting, {:?} launched, {} to report)",
            self.waiting.len(),
            self.flight,
            self.done.len()
        )
    }
}

/// Each pixel entry's culled-triangle counter (before its pixels are drawn, for
/// [`add_drawn`]).
fn culled_counts(entries: &[Entry]) -> Vec<u64> {
    entries
        .iter()
        .filter_map(|e| match e {
            Entry::Pixels(w) => Some(w.pixels.stats().triangles_culled),
            Entry::ImmediateEnd(_) => None,
        })
        .collect()
}

/// Adds to each pixel entry's statistics what drawing its pixels gave: `drawn` triangles
/// per entry, the culled triangles beyond `culled` (its counter before), and the pixel
/// counters.
fn add_drawn(entries: &mut [Entry], drawn: &[u64], culled: &[u64]) {
    let waiting = entries.iter_mut().filter_map(|e| match e {
        Entry::Pixels(w) => Some(w),
        Entry::ImmediateEnd(_) => None,
    });
    for ((w, d), c) in waiting.zip(drawn).zip(culled) {
        w.stats.triangles_rasterized += d;
        w.stats.triangles_culled += w.pixels.stats().triangles_culled - c;
        super::add_pixel_stats(&mut w.stats, &w.pixels);
    }
}

/// True if the half-open ranges `a` and `b` share a byte.
fn overlaps(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 < a.1 && b.0 < b.1 && a.0 < b.1 && b.0 < a.1
}

impl Pending {
    /// True if pixel work waits.
    pub(super) fn is_waiting(&self) -> bool {
        self.pixel_entries > 0
    }

    /// True if pixel work waits or is being drawn on the pool.
    pub(super) fn holds_pixels(&self) -> bool {
        self.is_waiting() || self.flight.is_some()
    }

    /// True if entries wait or are being drawn (pixel work, or immediate-mode draws that end
    /// after it).
    pub(super) fn busy(&self) -> bool {
        !self.waiting.is_empty() || self.flight.is_some()
    }

    /// True if `range` (half-open, physical) overlaps the buffers of the waiting draws or of
    /// the launched group.
    pub(super) fn overlaps(&self, range: (u64, u64)) -> bool {
        (self.is_waiting() && self.written.iter().any(|w| overlaps(*w, range)))
            || (self.flight.is_some() && self.flight_written.iter().any(|w| overlaps(*w, range)))
    }

    /// True if a draw with registers `regs` and vertex loading `loader` reads memory the
    /// waiting draws or the launched group write: its enabled textures (every level, every cube face), its index
    /// buffer, or its vertex arrays (conservatively: every vertex an index or the array range
    /// could name).
    pub(super) fn read_by(
        &self,
        regs: &[u32; 0x300],
        loader: &LoaderConfig,
        indexed: bool,
    ) -> bool {
        self.textures_read_by(regs) || self.vertices_read_by(loader, indexed)
    }

    /// True if the enabled textures of a draw with registers `regs` (every level, every cube
    /// face) overlap the buffers of the waiting draws or the launched group.
    pub(super) fn textures_read_by(&self, regs: &[u32; 0x300]) -> bool {
        if !self.holds_pixels() {
            return false;
        }
        for unit in 0..3 {
            if regs[0x080] & (1 << unit) == 0 {
                continue;
            }
            let cfg = TextureConfig::from_regs(regs, unit);
            let Some(layout) = cfg.layout() else {
                // Not decodable: nothing is read, but stay on the safe side.
                return true;
            };
            let cube = matches!(
                cfg.texture_type,
                TextureType::CubeMap | TextureType::ShadowCube
            );
            let faces: &[u32] = if cube {
                &cfg.face_addresses
            } else {
                std::slice::from_ref(&cfg.address)
            };
            for &a in faces {
                let a = u64::from(a);
                if self.overlaps((a, a + layout.total_bytes)) {
                    return true;
                }
            }
        }
        false
    }

    /// True if the index buffer or the vertex arrays of a draw with vertex loading `loader`
    /// can overlap the buffers of the waiting draws or the launched group (every vertex an
    /// index or the array range could name).
    fn vertices_read_by(&self, loader: &LoaderConfig, indexed: bool) -> bool {
        if !self.holds_pixels() {
            return false;
        }
        let count = u64::from(loader.num_vertices);
        // The vertex ids the draw can name: any 16-bit (8-bit) index, or the array range.
        let ids = if indexed {
            let size = u64::from(index_size(loader.index_format));
            let a = loader.index_address();
            if self.overlaps((a, a + count * size)) {
                return true;
            }
            0..if size == 1 { 0x100 } else { 0x1_0000 }
        } else {
            let first = u64::from(loader.vertex_offset);
            first..first + count
        };
        for l in &loader.loaders {
            if l.component_count == 0 {
                continue;
            }
            let stride = u64::from(l.stride);
            let start = u64::from(loader.base) + u64::from(l.offset);
            // A loader reads at most 12 attributes of 4 floats past a vertex's start.
            let range = (
                start + ids.start * stride,
                start + ids.end * stride + 12 * 16,
            );
            if self.overlaps(range) {
                return true;
            }
        }
        false
    }

    /// The render-target layout of the waiting draws (`None` when none waits).
    pub(super) fn key(&self) -> Option<GroupKey> {
        self.key.filter(|_| self.is_waiting())
    }

    /// Whether pixel work of `pixels` with triangles `tris` can wait: first draws the waiting
    /// group if it renders into other buffers; then `Some(fragment bound)` (for [`Pending::push`])
    /// if the work is on the specialised path and joins within the group's bounds: fewer
    /// than [`MAX_WAITING_DRAWS`] draws and [`PIXEL_BATCH`] triangles in all, and the
    /// fragment bound of all of them below `allowance` (what the work budgets have left for
    /// fragments not yet charged).
    ///
    /// [`PIXEL_BATCH`]: super::PIXEL_BATCH
    pub(super) fn room_for(
        &mut self,
        mem: &mut PhysMem,
        threads: usize,
        stores: &mut ShareStores,
        pixels: &PixelPipeline<TextureUnits>,
        tris: &[[ScreenVertex; 3]],
        allowance: u64,
    ) -> Option<u64> {
        let specialized = pixels.path() == PixelPath::Specialized;
        let fits = |s: &Self| {
            s.pixel_entries < MAX_WAITING_DRAWS && s.screen.len() + tris.len() < super::PIXEL_BATCH
        };
        // A group of other buffers, or one this draw would overflow, is launched (a new
        // group starts with this draw).
        if self.key().is_some_and(|k| k != group_key(pixels))
            || (specialized && self.is_waiting() && !fits(self))
        {
            self.cycle(mem, threads, stores, true);
        }
        let bound = fragment_bound(pixels, tris);
        let unreported = self
            .bound
            .saturating_add(self.flight_bound)
            .saturating_add(self.done_bound);
        (specialized && fits(self) && unreported.saturating_add(bound) < allowance).then_some(bound)
    }

    /// Moves the pipeline along: lands the launched group if it is finished (or, `force`,
    /// waiting for it), then launches the waiting group if none is in flight and it is large
    /// enough (or, `force`, whatever its size; drawn here if it cannot be launched).
    pub(super) fn cycle(
        &mut self,
        mem: &mut PhysMem,
        threads: usize,
        stores: &mut ShareStores,
        force: bool,
    ) {
        if let Some(f) = &mut self.flight {
            if !force && !f.finished() {
                return;
            }
            self.land(mem, stores);
        }
        if self.is_waiting() && (force || self.bound >= LAUNCH_MIN_FRAGMENTS) {
            let culled = culled_counts(&self.waiting);
            let group = Launched {
                entries: std::mem::take(&mut self.waiting),
                screen: std::mem::replace(&mut self.screen, std::mem::take(&mut self.spare_screen)),
                culled,
            };
            match launch(mem, group, threads, stores) {
                Ok(flight) => {
                    self.flight = Some(flight);
                    self.flight_written = self.written;
                    self.flight_bound = self.bound;
                    self.bound = 0;
                    self.pixel_entries = 0;
                    self.key = None;
                }
                Err(group) => {
                    // Drawn here, as `draw` would.
                    self.waiting = group.entries;
                    self.spare_screen = std::mem::replace(&mut self.screen, group.screen);
                    self.draw(mem, threads, stores, None);
                }
            }
        }
    }

    /// Waits for the launched group, if any, and moves its entries to those to report.
    fn land(&mut self, mem: &mut PhysMem, stores: &mut ShareStores) {
        let Some(flight) = self.flight.take() else {
            return;
        };
        let (mut group, drawn) = flight.land(mem, stores);
        add_drawn(&mut group.entries, &drawn, &group.culled);
        self.done.append(&mut group.entries);
        self.done_bound = self.done_bound.saturating_add(self.flight_bound);
        self.flight_bound = 0;
        group.screen.clear();
        self.spare_screen = group.screen;
    }

    /// Adds a draw (or, `immediate`, an immediate-mode vertex) whose pixels wait (its render
    /// target must have the waiting draws' layout: draw them first otherwise). `tris` is
    /// emptied.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn push(
        &mut self,
        info: DrawInfo,
        stats: DrawStats,
        pixels: PixelPipeline<TextureUnits>,
        stages: FixedFunctionStages,
        tris: &mut Vec<[ScreenVertex; 3]>,
        bound: u64,
        immediate: bool,
    ) {
        let key = group_key(&pixels);
        debug_assert!(self.key().is_none_or(|k| k == key));
        if !self.is_waiting() {
            self.key = Some(key);
            self.written = written_ranges(&pixels);
            self.bound = 0;
        }
        self.bound = self.bound.saturating_add(bound);
        let start = self.screen.len();
        self.screen.append(tris);
        self.waiting.push(Entry::Pixels(Box::new(Waiting {
            info,
            stats,
            pixels,
            stages,
            tris: start..self.screen.len(),
            immediate,
        })));
        self.pixel_entries += 1;
    }

    /// The open immediate-mode draw ends with counters `stats`: returns them with what its
    /// vertices' pixels added when nothing is left to report (the caller ends the draw now),
    /// or keeps the end to be reported after the pixels that wait or were drawn.
    pub(super) fn end_immediate(
        &mut self,
        info: DrawInfo,
        mut stats: DrawStats,
    ) -> Option<(DrawInfo, DrawStats)> {
        let end = Entry::ImmediateEnd(Box::new((info, stats)));
        if self.busy() {
            self.waiting.push(end);
            None
        } else if !self.done.is_empty() {
            self.done.push(end);
            None
        } else {
            stats.add(&std::mem::take(&mut self.immediate));
            Some((info, stats))
        }
    }

    /// Lands the launched group, then draws the waiting draws (all to be reported by
    /// [`Pending::report`], immediate-mode ends among them) and, after them,
    /// `current` (a draw's pipeline, stages and triangles) when given and of the same
    /// layout; returns the number of `current`'s triangles drawn (0 without one). A `current`
    /// of another layout is drawn after the group, on its own.
    pub(super) fn draw(
        &mut self,
        mem: &mut PhysMem,
        threads: usize,
        stores: &mut ShareStores,
        current: Option<Current<'_>>,
    ) -> u64 {
        // The launched group's draws come first.
        self.land(mem, stores);
        let same = current
            .as_ref()
            .is_some_and(|(p, _, _)| self.key().is_none_or(|k| k == group_key(p)));
        let (joined, alone) = if same {
            (current, None)
        } else {
            (None, current)
        };
        let mut drawn_current = 0;
        if self.is_waiting() || joined.is_some() {
            let culled = culled_counts(&self.waiting);
            let Pending {
                waiting, screen, ..
            } = self;
            let mut group: Vec<GroupDraw<'_, TextureUnits, FixedFunctionStages>> = waiting
                .iter_mut()
                .filter_map(|e| match e {
                    Entry::Pixels(w) => Some(GroupDraw {
                        pixels: &mut w.pixels,
                        hooks: &mut w.stages,
                        tris: &screen[w.tris.clone()],
                    }),
                    Entry::ImmediateEnd(_) => None,
                })
                .collect();
            if let Some((pixels, hooks, tris)) = joined {
                group.push(GroupDraw {
                    pixels,
                    hooks,
                    tris,
                });
            }
            let drawn = draw_group(mem, &mut group, threads, stores);
            drop(group);
            add_drawn(&mut self.waiting, &drawn, &culled);
            if drawn.len() > self.pixel_entries {
                drawn_current = drawn[drawn.len() - 1];
            }
            self.pixel_entries = 0;
            self.screen.clear();
            self.key = None;
        }
        // Immediate-mode ends that waited behind the launched group go too.
        self.done.append(&mut self.waiting);
        self.done_bound = self.done_bound.saturating_add(self.bound);
        self.bound = 0;
        if let Some((pixels, hooks, tris)) = alone {
            drawn_current = pixels.draw_triangles(mem, tris, hooks, threads, stores);
        }
        drawn_current
    }

    /// Reports the drawn draws to `obs` in draw order (their pixel diagnostics, then
    /// `draw_end`; an immediate-mode vertex's counters go to its draw, which ends with its
    /// [`Entry::ImmediateEnd`] or when it closes); returns the fragments they generated (for
    /// the work budgets).
    pub(super) fn report<O: Observer>(&mut self, obs: &mut O) -> u64 {
        let mut fragments = 0;
        for e in self.done.iter_mut() {
            match e {
                Entry::Pixels(d) => {
                    super::report_pixel_diags(&mut d.pixels, d.info.draw, obs);
                    fragments += d.stats.fragments_generated;
                    if d.immediate {
                        self.immediate.add(&d.stats);
                    } else {
                        obs.draw_end(&d.info, &d.stats, None);
                    }
                }
                Entry::ImmediateEnd(end) => {
                    let (info, stats) = &mut **end;
                    stats.add(&std::mem::take(&mut self.immediate));
                    obs.draw_end(info, stats, None);
                }
            }
        }
        self.done.clear();
        self.done_bound = 0;
        fragments
    }
}
