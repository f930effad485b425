//! The fixed-function per-fragment stages that plug into the pixel pipeline through
//! [`FragmentHooks`]: fragment lighting ([`crate::lighting`]), the procedural texture
//! ([`crate::proctex`]), fog ([`crate::fog`]) and shadow-map rendering ([`crate::shadow`]).
//!
//! Stage: per fragment, at the hook points of [`crate::fragment`] (`pica-raster.md` §0.4: unit 3
//! with the textures, lighting before the combiners, fog after the alpha test, shadow rendering
//! instead of the colour write). Input: the register file and the LUT storage of
//! [`crate::gpu::LookupTables`], decoded once per draw by [`FixedFunctionStages::from_regs`];
//! per fragment the [`Fragment`]. Output: the hook results. Registers read: those of the four
//! modules (see their docs); each part is decoded only when the registers enable it.
//!
//! Typical use at a draw:
//! `let mut stages = FixedFunctionStages::for_draw(&regs, &gpu.luts);` then
//! `pipeline.draw_triangle_with(mem, &tri, &mut stages)` for every triangle, and
//! [`FixedFunctionStages::issues`] for the draw's diagnostics.

use crate::fog::{FogConfig, GasConfig};
use crate::fragment::{FragmentHooks, lighting_enabled};
use crate::gpu::LookupTables;
use crate::lighting::{LUT_COUNT, LUT_ENTRIES, LightingConfig, LightingIssue};
use crate::pixel::Rgba;
use crate::proctex::{ProcTexConfig, ProcTexIssue, ProcTexLuts};
use crate::raster::Fragment;
use crate::shadow::ShadowWriteConfig;
use pica_cmd::regs::Regs;
use pica_cmd::regs::framebuffer::FragOpMode;
use pica_cmd::regs::tev::FogMode;

/// A guess made by one of the fixed-function stages of a draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum StageIssue {
    /// From fragment lighting.
    Lighting(LightingIssue),
    /// From the procedural texture.
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
    /// The procedural texture, if texture unit 3 is enabled (0x080 bit 10).
    pub proctex: Option<ProcTexConfig>,
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
                .then(|| ProcTexConfig::from_regs(regs, &luts.proctex)),
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

    #[inline]
    fn fog(&mut self, frag: &Fragment, color: &mut Rgba) -> bool {
        if let Some(f) = &self.fog {
            f.apply(frag.depth, color);
        }
        true
    }

    // `gas_fog` and `gas_render` keep their "not implemented" defaults: gas is not modelled
    // (see `crate::fog`), so the pipeline reports `NotImplemented(Gas)` and discards the
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
