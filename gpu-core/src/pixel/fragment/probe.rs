//! Pixel-history recording inside the pixel pipeline (the probe of
//! [`crate::debug::fragment::PixelProbe`]).
//!
//! The per-fragment code of [`super::FragCtx`] is generic over a [`Recorder`]: the normal path
//! passes `()`, whose `ON` constant is false, so every recording call compiles away; a probed
//! pipeline passes a [`FragmentRecord`] for each fragment inside the probe rectangle. A pipeline
//! with a probe ([`PixelPipeline::set_probe`]) runs the reference colour path for the whole draw
//! and handles triangles in [`PixelPipeline::draw_triangle_probed`]; without a probe the only
//! cost is one `Option` test per triangle.
//!
//! Triangles that covered a probed pixel but were culled, and fragments the scissor test
//! removed, never reach the per-fragment code: they are found by rasterising the triangle a
//! second time with culling off and the scissor box narrowed to the probe rectangle (so only
//! the probed pixels are visited). Triangles that clipping cut or removed are handed back by
//! the draw driver as the projection of their w > 0 part ([`PixelPipeline::probe_clipped`]).
//!
//! The combiner solo ([`PixelPipeline::set_tev_solo`]) is selected the same way: a soloed
//! draw's fragments are processed with a [`Soloed`] recorder (`SOLO` true), so the code that
//! computes and writes the soloed stage exists only in those instantiations and the normal
//! per-fragment code has no solo test.

use super::{ColorOutput, FragCtx, PixelPath, PixelPipeline, TextureSampler, TileCache};
pub use crate::debug::fragment::{
    BlendRecord, DepthStencilRecord, FogRecord, FragmentFate, FragmentInputs, FragmentRecord,
    PixelProbe, TevStageRecord, TexelRecord,
};
use crate::memory::PhysMem;
use crate::pixel::color::Rgba;
use crate::pixel::raster::{
    CullMode, Fragment, ScissorBox, ScissorMode, TriangleOutcome, Varyings,
    rasterize_triangle_reference,
};
use crate::pixel::stages::FragmentHooks;
use crate::pixel::tev::{TevConfig, TevInputs};
use crate::vertex::ScreenVertex;

/// Receives what happens to one fragment. `()` records nothing (and compiles away).
pub(crate) trait Recorder {
    /// True for a recorder that records (checked at compile time around costly calls).
    const ON: bool;
    /// True if the draw's combiner solo is applied (the solo code is compiled only for such
    /// recorders, see [`Soloed`]).
    const SOLO: bool = false;
    /// A texture unit's colour (and where it came from, if known).
    fn texel(&mut self, _info: Option<TexelRecord>, _unit: usize, _color: Rgba) {}
    /// The fragment-lighting colours.
    fn lighting(&mut self, _colors: [Rgba; 2]) {}
    /// Runs the combiners on the source table `t` (slots as `TevProgram::run_table`) with the
    /// readable reference, recording every stage; returns the output.
    fn combiners(&mut self, tev: &TevConfig, t: &[Rgba; 16]) -> Rgba {
        tev.combine(&inputs_of(t))
    }
    /// Fog: factor and colour (if known), colour before and after.
    fn fog(&mut self, _factor: Option<(f32, [u8; 3])>, _before: Rgba, _after: Rgba) {}
    /// The depth/stencil stage.
    fn depth_stencil(&mut self, _r: DepthStencilRecord) {}
    /// The colour stage.
    fn blend(&mut self, _r: BlendRecord) {}
    /// What ended the fragment.
    fn fate(&mut self, _f: FragmentFate) {}
}

impl Recorder for () {
    const ON: bool = false;
}

impl<R: Recorder> Recorder for &mut R {
    const ON: bool = R::ON;
    const SOLO: bool = R::SOLO;
    fn texel(&mut self, info: Option<TexelRecord>, unit: usize, color: Rgba) {
        (**self).texel(info, unit, color);
    }
    fn lighting(&mut self, colors: [Rgba; 2]) {
        (**self).lighting(colors);
    }
    fn combiners(&mut self, tev: &TevConfig, t: &[Rgba; 16]) -> Rgba {
        (**self).combiners(tev, t)
    }
    fn fog(&mut self, factor: Option<(f32, [u8; 3])>, before: Rgba, after: Rgba) {
        (**self).fog(factor, before, after);
    }
    fn depth_stencil(&mut self, r: DepthStencilRecord) {
        (**self).depth_stencil(r);
    }
    fn blend(&mut self, r: BlendRecord) {
        (**self).blend(r);
    }
    fn fate(&mut self, f: FragmentFate) {
        (**self).fate(f);
    }
}

/// Records into `R` and applies the draw's combiner solo (the pipeline's solo must be set).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Soloed<R>(pub R);

impl<R: Recorder> Recorder for Soloed<R> {
    const ON: bool = R::ON;
    const SOLO: bool = true;
    fn texel(&mut self, info: Option<TexelRecord>, unit: usize, color: Rgba) {
        self.0.texel(info, unit, color);
    }
    fn lighting(&mut self, colors: [Rgba; 2]) {
        self.0.lighting(colors);
    }
    fn combiners(&mut self, tev: &TevConfig, t: &[Rgba; 16]) -> Rgba {
        self.0.combiners(tev, t)
    }
    fn fog(&mut self, factor: Option<(f32, [u8; 3])>, before: Rgba, after: Rgba) {
        self.0.fog(factor, before, after);
    }
    fn depth_stencil(&mut self, r: DepthStencilRecord) {
        self.0.depth_stencil(r);
    }
    fn blend(&mut self, r: BlendRecord) {
        self.0.blend(r);
    }
    fn fate(&mut self, f: FragmentFate) {
        self.0.fate(f);
    }
}

fn inputs_of(t: &[Rgba; 16]) -> TevInputs {
    TevInputs {
        primary: t[0],
        fragment_primary: t[1],
        fragment_secondary: t[2],
        texture: [t[3], t[4], t[5], t[6]],
    }
}

impl Recorder for FragmentRecord {
    const ON: bool = true;
    fn texel(&mut self, info: Option<TexelRecord>, unit: usize, color: Rgba) {
        let mut r = info.unwrap_or(TexelRecord {
            unit: unit as u8,
            format: if unit == 3 { 0xFF } else { 0 },
            ..TexelRecord::default()
        });
        r.color = color;
        self.texels.push(r);
    }
    fn lighting(&mut self, colors: [Rgba; 2]) {
        self.lighting = Some(colors);
    }
    fn combiners(&mut self, tev: &TevConfig, t: &[Rgba; 16]) -> Rgba {
        let mut stages = [TevStageRecord::default(); 6];
        let out = tev.combine_traced(&inputs_of(t), &mut stages);
        self.tev = stages.to_vec();
        self.combiner_output = out;
        out
    }
    fn fog(&mut self, factor: Option<(f32, [u8; 3])>, before: Rgba, after: Rgba) {
        self.fog = Some(FogRecord {
            factor: factor.map(|f| f.0),
            color: factor.map_or([0; 3], |f| f.1),
            before,
            after,
        });
    }
    fn depth_stencil(&mut self, r: DepthStencilRecord) {
        self.depth_stencil = Some(r);
    }
    fn blend(&mut self, r: BlendRecord) {
        self.blend = Some(r);
    }
    fn fate(&mut self, f: FragmentFate) {
        self.fate = Some(f);
    }
}

/// The blend record of a fragment: factors per channel as the reference blend computes them.
pub(crate) fn blend_record(
    output: ColorOutput,
    src: Rgba,
    dst: Rgba,
    result: Rgba,
    written: Rgba,
    mask: [bool; 4],
) -> BlendRecord {
    let mut r = BlendRecord {
        blend: false,
        src,
        dst,
        src_factor: [0; 4],
        dst_factor: [0; 4],
        result,
        written,
        mask,
    };
    if let ColorOutput::Blend(b) = output {
        r.blend = true;
        for ch in 0..4 {
            let (sf, df) = if ch < 3 {
                (b.rgb_src, b.rgb_dst)
            } else {
                (b.alpha_src, b.alpha_dst)
            };
            // ok: factor values are unsigned 0.8 (0..=255).
            r.src_factor[ch] = sf.value(ch, src, dst, b.color) as u8;
            r.dst_factor[ch] = df.value(ch, src, dst, b.color) as u8;
        }
    }
    r
}

/// The recording state of a probed pipeline.
#[derive(Debug)]
pub(crate) struct ProbeState {
    probe: PixelProbe,
    draw: u64,
    /// Triangles handed to the pipeline so far in this draw.
    triangle: u32,
    records: Vec<FragmentRecord>,
    dropped: u64,
}

impl ProbeState {
    fn push(&mut self, r: FragmentRecord) {
        if self.records.len() < PixelProbe::MAX_RECORDS_PER_DRAW {
            self.records.push(r);
        } else {
            self.dropped += 1;
        }
    }

    fn record(&self, frag: &Fragment, w: f32) -> FragmentRecord {
        FragmentRecord {
            draw: self.draw,
            triangle: self.triangle,
            x: frag.x,
            y: frag.y,
            inputs: FragmentInputs {
                depth: frag.depth,
                w,
                primary: frag.color,
                texcoord: frag.tc,
                texcoord0_w: frag.tc0_w,
            },
            ..FragmentRecord::default()
        }
    }
}

/// Perspective-correct w of `tri` at the centre of pixel (x, y): `1 / Σ bᵢ·(1/wᵢ)` with
/// screen-space barycentrics (f64; NaN-free: 0 for a degenerate triangle).
fn w_at(tri: &[ScreenVertex; 3], x: u32, y: u32) -> f32 {
    let (px, py) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
    let p = tri.map(|v| (f64::from(v.x), f64::from(v.y), f64::from(v.inv_w)));
    let edge = |a: (f64, f64, f64), b: (f64, f64, f64)| {
        (b.0 - a.0) * (py - a.1) - (b.1 - a.1) * (px - a.0)
    };
    let area = (p[1].0 - p[0].0) * (p[2].1 - p[0].1) - (p[1].1 - p[0].1) * (p[2].0 - p[0].0);
    if area == 0.0 || !area.is_finite() {
        return 0.0;
    }
    let b0 = edge(p[1], p[2]) / area;
    let b1 = edge(p[2], p[0]) / area;
    let b2 = edge(p[0], p[1]) / area;
    let inv = b0 * p[0].2 + b1 * p[1].2 + b2 * p[2].2;
    if inv == 0.0 || !inv.is_finite() {
        0.0
    } else {
        (1.0 / inv) as f32
    }
}

impl<S: TextureSampler> PixelPipeline<S> {
    /// Records the fragments of this draw that land in `probe` (pixel history), if the draw
    /// renders into the probed buffer; `draw` is the draw index put in the records. Switches
    /// the pipeline to [`PixelPath::Reference`] (bit-identical results).
    pub fn set_probe(&mut self, probe: PixelProbe, draw: u64) {
        if !probe.watches(self.cfg.fb.color_addr, self.cfg.fb.depth_addr) {
            return;
        }
        self.set_path(PixelPath::Reference);
        self.probe = Some(Box::new(ProbeState {
            probe: probe.clamped(),
            draw,
            triangle: 0,
            records: Vec::new(),
            dropped: 0,
        }));
    }

    /// The records collected so far (leaving the list empty) and the number not kept because
    /// of [`PixelProbe::MAX_RECORDS_PER_DRAW`].
    pub fn take_probe_records(&mut self) -> (Vec<FragmentRecord>, u64) {
        match self.probe.as_mut() {
            Some(p) => (
                std::mem::take(&mut p.records),
                std::mem::take(&mut p.dropped),
            ),
            None => (Vec::new(), 0),
        }
    }

    /// Records taken so far in this draw, or `None` when no probe records this draw (the mark
    /// [`PixelPipeline::probe_clipped`] compares against).
    #[inline]
    pub fn probe_mark(&self) -> Option<usize> {
        self.probe.as_ref().map(|p| p.records.len())
    }

    /// Pixel history of clipping: `tri` is (a piece of) the projection of assembled triangle
    /// `assembled`, which clipping cut or removed. Each probed pixel it covers (culling off)
    /// that no record since `mark` (this triangle's rasterised pieces) covers gets a
    /// [`FragmentFate::ClippedAway`] record. Nothing is drawn.
    pub fn probe_clipped(&mut self, tri: &[ScreenVertex; 3], assembled: u32, mark: usize) {
        let Some(mut st) = self.probe.take() else {
            return;
        };
        let probe = st.probe;
        let mut rc = self.cfg.raster;
        rc.varyings = Varyings::ALL;
        rc.cull = CullMode::None;
        rc.scissor_mode = ScissorMode::Include;
        rc.scissor = ScissorBox {
            x1: probe.x,
            y1: probe.y,
            x2: probe.x.saturating_add(probe.w - 1),
            y2: probe.y.saturating_add(probe.h - 1),
        };
        rasterize_triangle_reference(&rc, tri, |f| {
            let covered = st
                .records
                .get(mark..)
                .unwrap_or(&[])
                .iter()
                .any(|r| r.x == f.x && r.y == f.y);
            if !covered {
                let mut r = st.record(f, w_at(tri, f.x, f.y));
                r.triangle = assembled;
                r.fate = Some(FragmentFate::ClippedAway);
                st.push(r);
            }
        });
        self.probe = Some(st);
    }

    /// [`PixelPipeline::draw_triangle_with`] with recording at the probe.
    pub(super) fn draw_triangle_probed<H: FragmentHooks>(
        &mut self,
        mem: &mut PhysMem,
        tri: &[ScreenVertex; 3],
        hooks: &mut H,
    ) -> TriangleOutcome {
        let Some(mut st) = self.probe.take() else {
            return self.draw_triangle_with(mem, tri, hooks);
        };
        let cfg = self.cfg;
        let probe = st.probe;
        let mut missing = 0u32;
        let outcome = {
            let mut ctx = FragCtx {
                cfg: &cfg,
                tev: &self.tev,
                sampler: &self.sampler,
                needs: self.needs,
                color_cache: &mut self.color_cache,
                depth_cache: &mut self.depth_cache,
                stats: &mut self.stats,
                costs: self.costs,
                missing: &mut missing,
                mem: &mut *mem,
                hooks: &mut *hooks,
                color_stage: None,
                early_depth: false,
                sampling: false,
                input_time: std::time::Duration::ZERO,
                solo: self.solo.as_ref(),
            };
            let soloed = ctx.solo.is_some();
            rasterize_triangle_reference(&cfg.raster, tri, |f| {
                if probe.contains(f.x, f.y) {
                    let mut r = st.record(f, w_at(tri, f.x, f.y));
                    if soloed {
                        ctx.process(f, Soloed(&mut r));
                    } else {
                        ctx.process(f, &mut r);
                    }
                    st.push(r);
                } else if soloed {
                    ctx.process(f, Soloed(()));
                } else {
                    ctx.process(f, ());
                }
            })
        };
        flush(&mut self.color_cache, &mut self.depth_cache, mem);
        // Culled triangles and scissored fragments: rasterise again over the probe only.
        let scissored = match cfg.raster.scissor_mode {
            ScissorMode::Disabled => false,
            ScissorMode::Include | ScissorMode::Exclude => true,
        };
        if outcome == TriangleOutcome::Culled || scissored {
            let mut rc = cfg.raster;
            rc.varyings = Varyings::ALL;
            rc.scissor_mode = ScissorMode::Include;
            rc.scissor = ScissorBox {
                x1: probe.x,
                y1: probe.y,
                x2: probe.x.saturating_add(probe.w - 1),
                y2: probe.y.saturating_add(probe.h - 1),
            };
            let culled = outcome == TriangleOutcome::Culled;
            if culled {
                rc.cull = CullMode::None;
            }
            let real = cfg.raster;
            rasterize_triangle_reference(&rc, tri, |f| {
                let kept_by_scissor = match real.scissor_mode {
                    ScissorMode::Disabled => true,
                    ScissorMode::Include => real.scissor.contains(f.x, f.y),
                    ScissorMode::Exclude => !real.scissor.contains(f.x, f.y),
                };
                let fate = if culled {
                    FragmentFate::Culled
                } else if !kept_by_scissor {
                    FragmentFate::Scissor
                } else {
                    return;
                };
                let mut r = st.record(f, w_at(tri, f.x, f.y));
                r.fate = Some(fate);
                st.push(r);
            });
        }
        st.triangle = st.triangle.saturating_add(1);
        self.probe = Some(st);
        self.finish_triangle(outcome, missing)
    }
}

fn flush(color: &mut TileCache, depth: &mut TileCache, mem: &mut PhysMem) {
    color.flush(mem);
    depth.flush(mem);
}
