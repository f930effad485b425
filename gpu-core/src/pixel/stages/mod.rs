//! The fixed-function per-fragment stages that plug into the pixel pipeline through
//! [`FragmentHooks`] (defined here, next to their implementation, so that the stages do not
//! depend on the pipeline that calls them): fragment lighting ([`lighting`]), the procedural
//! texture ([`proctex`]), fog ([`fog`]) and shadow-map rendering ([`shadow`]).
//!
//! Stage: per fragment, at the hook points of [`crate::pixel::fragment`] (`pica-raster.md` §0.4: unit 3
//! with the textures, lighting before the combiners, fog after the alpha test, shadow rendering
//! instead of the colour write). Input: the register file and the LUT storage of
//! [`LookupTables`] ([`crate::lut`]), decoded once per draw by [`FixedFunctionStages::from_regs`];
//! per fragment the [`Fragment`]. Output: the hook results. Registers read: those of the four
//! modules (see their docs); each part is decoded only when the registers enable it.
//!
//! Typical use at a draw:
//! `let mut stages = FixedFunctionStages::for_draw(&regs, &gpu.luts);` then
//! `pipeline.draw_triangle_with(mem, &tri, &mut stages)` for every triangle, and
//! [`FixedFunctionStages::issues`] for the draw's diagnostics.

pub mod fog;
pub mod lighting;
pub mod proctex;
pub mod shadow;

use crate::lut::LookupTables;
use crate::pixel::color::Rgba;
use crate::pixel::raster::Fragment;
use fog::{FogConfig, GasConfig};
use lighting::{LUT_COUNT, LUT_ENTRIES, LightingConfig, LightingIssue};
use pica_cmd::regs::Regs;
use pica_cmd::regs::framebuffer::FragOpMode;
use pica_cmd::regs::tev::FogMode;
use proctex::{ProcTexConfig, ProcTexIssue, ProcTexLuts};
use shadow::ShadowWriteConfig;

/// The per-fragment stages the pixel pipeline ([`crate::pixel::fragment`]) calls out to
/// (fragment lighting, procedural texture, fog, gas, shadow rendering), implemented here by
/// [`FixedFunctionStages`]. Every method has a default that returns "not implemented"
/// (`None` / `false`); the pipeline then reports [`PipelineDiag::NotImplemented`](crate::pixel::fragment::PipelineDiag::NotImplemented) once per draw
/// and continues with a neutral value. The `()` hooks implement nothing.
pub trait FragmentHooks {
    /// Fragment lighting: the primary and secondary fragment colours (TEV sources 1 and 2) for
    /// `frag`, given the texture colours (units 0-3, for bump/shadow maps).
    fn lighting(&mut self, _frag: &Fragment, _textures: &[Rgba; 4]) -> Option<[Rgba; 2]> {
        None
    }
    /// The procedural texture (unit 3) colour for `frag`.
    fn procedural_texture(&mut self, _frag: &Fragment) -> Option<Rgba> {
        None
    }
    /// [`FragmentHooks::procedural_texture`] for every fragment of `frags`: `out[i]` receives
    /// the colour of `frags[i]` (`out` is at least as long as `frags`), or (0, 0, 0, 0) where
    /// the hook has none; returns false if any fragment had none (not implemented). The
    /// default calls the per-fragment hook in order.
    fn procedural_texture_batch(&mut self, frags: &[Fragment], out: &mut [Rgba]) -> bool {
        let mut all = true;
        for (o, f) in out.iter_mut().zip(frags) {
            match self.procedural_texture(f) {
                Some(c) => *o = c,
                None => {
                    *o = [0; 4];
                    all = false;
                }
            }
        }
        all
    }
    /// Fog (mode 5): changes the RGB of `color` (the combiner output) for `frag`'s depth.
    /// Returns false if not implemented.
    fn fog(&mut self, _frag: &Fragment, _color: &mut Rgba) -> bool {
        false
    }
    /// [`FragmentHooks::fog`] for the fragments `frags[k]` with bit k of `alive` set, on
    /// `colors[k]`, in order (`frags` has at most 16 fragments; other colours are left alone);
    /// returns false if any was not implemented. The default calls the per-fragment hook.
    fn fog_batch(&mut self, frags: &[Fragment], colors: &mut [Rgba; 16], alive: u32) -> bool {
        let mut all = true;
        for (k, (f, c)) in frags.iter().zip(colors.iter_mut()).enumerate() {
            if alive & (1 << k) != 0 {
                all &= self.fog(f, c);
            }
        }
        all
    }
    /// Gas shading as a fog mode (fog mode 7): changes `color` for `frag`. Returns false if not
    /// implemented; the fragment is then discarded (Citra's GL path discards gas fragments).
    fn gas_fog(&mut self, _frag: &Fragment, _color: &mut Rgba) -> bool {
        false
    }
    /// The fog factor and fog colour (RGB) [`FragmentHooks::fog`] uses for `frag`, for pixel
    /// history; `None` when unknown.
    fn fog_factor(&self, _frag: &Fragment) -> Option<(f32, [u8; 3])> {
        None
    }
    /// Gas rendering (fragment operation mode 1): update this pixel's colour-buffer bytes
    /// (`pixel`, in the colour buffer's own format, 2-4 bytes) from the combiner output
    /// `color`. Nothing else happens to the fragment. Returns `None` if not implemented, else
    /// whether the bytes were changed.
    fn gas_render(&mut self, _frag: &Fragment, _color: Rgba, _pixel: &mut [u8]) -> Option<bool> {
        None
    }
    /// Shadow-map rendering (fragment operation mode 3): update this pixel's colour-buffer
    /// bytes (`pixel`: always 4 bytes, the buffer is 4 bytes per pixel in this mode whatever its
    /// format, `pica-raster.md` §9.2) from the combiner output `color`. Nothing else happens to
    /// the fragment. Returns `None` if not implemented, else whether the bytes were changed.
    fn shadow(&mut self, _frag: &Fragment, _color: Rgba, _pixel: &mut [u8]) -> Option<bool> {
        None
    }
    /// True if [`FragmentHooks::lighting`], [`FragmentHooks::procedural_texture`] and
    /// [`FragmentHooks::fog`] always answer (never "not implemented") and do nothing besides
    /// computing their result, so the pipeline may skip them for a fragment whose fate is
    /// decided without them (early depth/stencil, issue 14). Default: false, every fragment
    /// calls them in the hardware's order.
    fn skippable(&self) -> bool {
        false
    }
}

/// No hooks: every hooked feature is reported as not implemented.
impl FragmentHooks for () {}

/// Is fragment lighting enabled?
///
/// UNVERIFIED (`pica-raster.md` §7.1, §13.1): Panda3DS reads reg 0x08F bit 0 (1 = on), Citra reads
/// reg 0x1C6 bit 0 (1 = off); libraries set both consistently. We use 0x08F, which 3dbrew names
/// the enable and which is 0 (off) in a zeroed register file.
pub fn lighting_enabled(regs: &[u32; 0x300]) -> bool {
    Regs::new(regs).lighting_enable0()
}

/// A guess made by one of the fixed-function stages of a draw.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, thiserror::Error,
)]
pub enum StageIssue {
    /// From fragment lighting.
    #[error("fragment lighting: {0}")]
    Lighting(LightingIssue),
    /// From the procedural texture.
    #[error("procedural texture: {0}")]
    ProcTex(ProcTexIssue),
}

/// The lookup tables the stages read, borrowed from wherever they are stored.
#[derive(Clone, Copy, Debug)]
pub struct StageLuts<'a> {
    /// The 24 lighting LUTs (entry words bits 0-23).
    pub lighting: &'a [[u32; LUT_ENTRIES]; LUT_COUNT],
    /// The fog LUT.
    pub fog: &'a [u32; 128],
    /// The procedural texture LUTs.
    pub proctex: ProcTexLuts<'a>,
}

impl<'a> StageLuts<'a> {
    /// The tables of the command processor's LUT storage.
    pub fn from_tables(t: &'a LookupTables) -> Self {
        StageLuts {
            lighting: &t.lighting,
            fog: &t.fog,
            proctex: ProcTexLuts::from_tables(t),
        }
    }
}

/// Fragment lighting, procedural texture, fog and shadow rendering of one draw, as
/// [`FragmentHooks`]. Parts the registers do not enable are `None` (their hooks are then not
/// called by the pipeline, or return a neutral result).
#[derive(Clone, Debug)]
pub struct FixedFunctionStages {
    /// Fragment lighting, if enabled ([`lighting_enabled`]).
    pub lighting: Option<LightingConfig>,
    /// The procedural texture, if texture unit 3 is enabled (0x080 bit 10). Boxed: its
    /// tables make it ~12 KB, and the stages are cloned and moved per draw (the parallel
    /// path's shares, draws whose pixels wait).
    pub proctex: Option<Box<ProcTexConfig>>,
    /// Fog, if fog mode 5 is selected.
    pub fog: Option<FogConfig>,
    /// Shadow-map rendering parameters, if fragment operation mode 3 is selected.
    pub shadow: Option<ShadowWriteConfig>,
    /// The gas registers (decoded for display; gas is not modelled), if fog mode 7 or
    /// fragment operation mode 1 is selected.
    pub gas: Option<GasConfig>,
}

impl FixedFunctionStages {
    /// Decodes the stages `regs` enables, reading the LUTs from the command processor's
    /// storage. This is the per-draw entry point.
    pub fn for_draw(regs: &[u32; 0x300], luts: &LookupTables) -> Self {
        Self::from_regs(regs, &StageLuts::from_tables(luts))
    }

    /// Decodes the stages `regs` enables, with the LUTs in `luts`.
    pub fn from_regs(regs: &[u32; 0x300], luts: &StageLuts<'_>) -> Self {
        let r = Regs::new(regs);
        let mode = r.color_operation().frag_op_mode;
        let fog_mode = r.texenv_update_buffer().fog_mode;
        FixedFunctionStages {
            lighting: lighting_enabled(regs)
                .then(|| LightingConfig::from_regs(regs, luts.lighting)),
            proctex: r
                .texunit_config()
                .tex3_enable
                .then(|| Box::new(ProcTexConfig::from_regs(regs, &luts.proctex))),
            fog: FogConfig::from_regs(regs, luts.fog),
            shadow: (mode == FragOpMode::Shadow).then(|| ShadowWriteConfig::from_regs(regs)),
            gas: (mode == FragOpMode::Gas || fog_mode == FogMode::Gas)
                .then(|| GasConfig::from_regs(regs)),
        }
    }

    /// The guesses the decoded configuration relies on (report them once per draw).
    pub fn issues(&self) -> Vec<StageIssue> {
        let mut out = Vec::new();
        if let Some(l) = &self.lighting {
            out.extend(l.issues.iter().map(|&i| StageIssue::Lighting(i)));
        }
        if let Some(p) = &self.proctex {
            out.extend(p.issues.iter().map(|&i| StageIssue::ProcTex(i)));
        }
        out
    }
}

impl FragmentHooks for FixedFunctionStages {
    /// Lighting, the procedural texture and fog always answer and keep no state.
    fn skippable(&self) -> bool {
        true
    }

    #[inline]
    fn lighting(&mut self, frag: &Fragment, textures: &[Rgba; 4]) -> Option<[Rgba; 2]> {
        // Disabled lighting gives (0, 0, 0, 0) for both colours (`pica-raster.md` §7.1).
        Some(match &self.lighting {
            Some(l) => l.shade(frag.quat, frag.view, textures),
            None => [[0; 4]; 2],
        })
    }

    #[inline]
    fn procedural_texture(&mut self, frag: &Fragment) -> Option<Rgba> {
        // A disabled unit reads (0, 0, 0, 0) (§5.6).
        Some(
            self.proctex
                .as_ref()
                .map_or([0; 4], |p| p.sample_fragment(frag)),
        )
    }

    /// Every fragment answers (a disabled unit reads (0, 0, 0, 0)); the sampling routine
    /// and its modes are chosen once per call (see [`ProcTexConfig::sample_batch`]).
    fn procedural_texture_batch(&mut self, frags: &[Fragment], out: &mut [Rgba]) -> bool {
        match &self.proctex {
            Some(p) => p.sample_batch(frags, out),
            None => out.iter_mut().take(frags.len()).for_each(|o| *o = [0; 4]),
        }
        true
    }

    #[inline]
    fn fog(&mut self, frag: &Fragment, color: &mut Rgba) -> bool {
        if let Some(f) = &self.fog {
            f.apply(frag.depth, color);
        }
        true
    }

    /// Fog across the batch's lanes ([`FogConfig::apply_batch`]).
    #[inline]
    fn fog_batch(&mut self, frags: &[Fragment], colors: &mut [Rgba; 16], alive: u32) -> bool {
        if let Some(f) = &self.fog {
            f.apply_batch(frags, colors, alive);
        }
        true
    }

    fn fog_factor(&self, frag: &Fragment) -> Option<(f32, [u8; 3])> {
        self.fog.as_ref().map(|f| (f.factor(frag.depth), f.color))
    }

    // `gas_fog` and `gas_render` keep their "not implemented" defaults: gas is not modelled
    // (see `crate::pixel::stages::fog`), so the pipeline reports `NotImplemented(Gas)` and discards the
    // fragment.

    #[inline]
    fn shadow(&mut self, frag: &Fragment, color: Rgba, pixel: &mut [u8]) -> Option<bool> {
        let cfg = match self.shadow {
            Some(c) => c,
            // The pipeline only calls this in shadow mode; decode nothing twice.
            None => ShadowWriteConfig {
                constant: 1.0,
                linear: 0.0,
            },
        };
        // The colour buffer is 4 bytes per pixel in shadow mode (§9.2).
        let pixel: &mut [u8; 4] = pixel.get_mut(..4)?.try_into().ok()?;
        // Shadow mode hands over the pixel's 4 colour-buffer bytes; anything else is left alone.
        let px: &mut [u8] = pixel;
        let Ok(px) = <&mut [u8; 4]>::try_from(px) else {
            return Some(false);
        };
        Some(cfg.write(frag.depth, color[1], px))
    }
}
