//! Procedural texture, texture unit 3 (`pica-raster.md` §8).
//!
//! Stage: texture unit 3 of the fragment pipeline (§0.4 step 4), after units 0-2 and before
//! fragment lighting and the combiners. Input: a [`ProcTexConfig`] decoded once per draw by
//! [`ProcTexConfig::from_regs`] from the registers and the five proctex LUTs; per fragment the
//! selected texture coordinate and its screen-space derivatives. Output: an RGBA colour,
//! unsigned 8 bits per channel (combiner source 6).
//!
//! Registers read (through [`pica_cmd::regs::Regs::proctex`] and
//! [`pica_cmd::regs::Regs::texunit_config`]): 0x080 TEXUNIT_CONFIG bits 8-9 (coordinate
//! source), 0x0A8 PROCTEX0 (clamp, combiners, separate alpha, noise enable, shifts, LOD bias low
//! byte), 0x0A9/0x0AA PROCTEX1/2 (noise amplitude fixed1.3.12, phase float16), 0x0AB PROCTEX3
//! (noise frequencies, float16), 0x0AC PROCTEX4 (filter, LOD range, colour-LUT width, LOD bias
//! high byte), 0x0AD PROCTEX5 (colour-LUT offsets of levels 0-3). The LUTs come from the
//! PROCTEX_LUT_DATA ports (stored in [`crate::lut::LookupTables`]).
//!
//! # Method
//!
//! Steps (Citra's software rasteriser, whose noise function was matched against hardware):
//! `|u|, |v|` → row/column shift offsets → noise → shift → clamp → combine and map through the
//! RGB map LUT → colour LUT (nearest or linear) → optional separate alpha (alpha map LUT).
//! Citra's software path ignores mipmaps; we add the LOD of Citra's GL path ([`ProcTexConfig::lod`],
//! `pica-raster.md` §8.2): `lod = log2(|width·bias|·(du + dv))` with du/dv the larger of the x and
//! y screen derivatives, clamped to the LOD range; mip levels use `width >> level` entries at
//! that level's offset. Everything is f32; colours are truncated to u8 once at the end.

use crate::pixel::color::Rgba;
use crate::pixel::fastmath::{floor_f32, round_u32, round_usize};
use crate::pixel::isa;
use crate::pixel::raster::{FRAGMENT_BATCH, Fragment};
use pica_cmd::regs::RegView as _;
use pica_cmd::regs::Regs;
use pica_cmd::regs::tev::{
    ProcTexClamp, ProcTexColorDiff, ProcTexFilter, ProcTexLutEntry, ProcTexMapping, ProcTexShift,
};
use pica_cmd::regs::texturing::Tex3Coords;

/// Colour-LUT offsets of mip levels 4-7.
// UNVERIFIED: Citra PR #3916 says these "seem to be hardcoded" (from its hardware test of
// proctex mipmaps, not proven). Alternative: the bytes of register 0x0AE, which the catalogue
// calls PROCTEX6 after ctrulib's reset data ([`pica_cmd::regs::tev::ProcTex::offsets_high`]).
pub const HIGH_LEVEL_OFFSETS: [u8; 4] = [0xF0, 0xF8, 0xFC, 0xFE];

/// What happens to a colour-LUT index past entry 255 (offset + width beyond the table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorIndexOverflow {
    /// The index wraps modulo 256 (8-bit address arithmetic).
    Wrap,
    /// The index clamps to 255.
    Clamp,
}

/// The overflow rule in use.
// UNVERIFIED: Citra reads past its 256-entry array (undefined); wrapping models an 8-bit index
// register. Alternative: ColorIndexOverflow::Clamp.
pub const COLOR_INDEX_OVERFLOW: ColorIndexOverflow = ColorIndexOverflow::Wrap;

/// Noise parameters (PROCTEX1-3).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noise {
    /// U amplitude (fixed1.3.12 signed, see
    /// [`pica_cmd::regs::tev::PROCTEX_AMPLITUDE_DIVISOR`]; Citra divides by 4095).
    pub amplitude_u: f32,
    /// V amplitude.
    pub amplitude_v: f32,
    /// U phase (float16).
    pub phase_u: f32,
    /// V phase (float16).
    pub phase_v: f32,
    /// U frequency (float16).
    pub frequency_u: f32,
    /// V frequency (float16).
    pub frequency_v: f32,
}

/// A 128-entry noise / map LUT decoded to `[value, difference]` (value bits 0-11 /4095,
/// difference bits 12-23 signed 12-bit /4095, as Citra; see [`ProcTexLutEntry`]).
#[derive(Clone, Debug, PartialEq)]
pub struct MapLut {
    /// `[value, diff]` per entry.
    pub entries: [[f32; 2]; 128],
}

impl MapLut {
    /// Decodes 128 entry words.
    pub fn from_words(words: &[u32; 128]) -> Self {
        let mut entries = [[0.0; 2]; 128];
        for (e, &w) in entries.iter_mut().zip(words) {
            let d = ProcTexLutEntry::from_raw(w);
            *e = [d.value(), d.diff()];
        }
        MapLut { entries }
    }

    /// Lookup of a coordinate in [0, 1]: `p = c·128`, `i = min(int(p), 127)`,
    /// `value[i] + (p − i)·diff[i]`, so c = 1 gives `value[127] + diff[127]` (§8.2 step 5).
    /// Negative and NaN coordinates read as 0 (entry 0 exactly).
    #[inline]
    pub fn lookup(&self, c: f32) -> f32 {
        // f32::max returns the non-NaN operand, so NaN becomes 0.
        let p = c.max(0.0) * 128.0;
        // ok: `as` saturates (NaN → 0); the clamp keeps the index in 0..=127.
        let i = (p as i32).clamp(0, 127);
        let [v, d] = self.entries[i as usize];
        v + (p - i as f32) * d
    }
}

/// The five proctex LUTs as stored by the command processor (raw entry words).
#[derive(Clone, Copy, Debug)]
pub struct ProcTexLuts<'a> {
    /// Noise LUT (table 0), 128 entries.
    pub noise: &'a [u32; 128],
    /// RGB map (table 2), 128 entries.
    pub rgb_map: &'a [u32; 128],
    /// Alpha map (table 3), 128 entries.
    pub alpha_map: &'a [u32; 128],
    /// Colour table (table 4), 256 RGBA8 entries (R bits 0-7 … A bits 24-31).
    pub color: &'a [u32; 256],
    /// Colour difference table (table 5), 256 entries of signed 8-bit half-differences.
    pub color_diff: &'a [u32; 256],
}

impl<'a> ProcTexLuts<'a> {
    /// The proctex tables of the command processor's LUT storage.
    pub fn from_tables(t: &'a crate::lut::LookupTables) -> Self {
        ProcTexLuts {
            noise: &t.proctex_noise,
            rgb_map: &t.proctex_rgb_map,
            alpha_map: &t.proctex_alpha_map,
            color: &t.proctex_color,
            color_diff: &t.proctex_color_diff,
        }
    }
}

/// Something a draw's proctex configuration leaves to a guess (for diagnostics).
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, thiserror::Error,
)]
pub enum ProcTexIssue {
    /// Coordinate source 3 (treated as texcoord 0, as Citra GL).
    #[error("coordinate source 3 (treated as texture coordinate 0)")]
    UnknownCoordSource,
    /// Clamp mode 5-7 (treated as clamp to edge, as Citra).
    #[error("clamp mode {0} (treated as clamp to edge)")]
    UnknownClamp(u32),
    /// Combiner 10-15 (reads 0, as Citra).
    #[error("combiner {0} (reads 0)")]
    UnknownCombiner(u32),
    /// Shift mode 3 (no shift, as Citra).
    #[error("shift mode 3 (no shift)")]
    UnknownShift,
    /// Filter 6-7 (treated as nearest; Citra leaves the colour undefined).
    #[error("filter {0} (treated as nearest)")]
    UnknownFilter(u32),
}

/// The procedural texture of one draw, decoded once.
#[derive(Clone, Debug, PartialEq)]
pub struct ProcTexConfig {
    /// Texture coordinate used (0-2; TEXUNIT_CONFIG bits 8-9).
    pub coord: usize,
    /// U clamp (PROCTEX0 bits 0-2).
    pub u_clamp: ProcTexClamp,
    /// V clamp (bits 3-5).
    pub v_clamp: ProcTexClamp,
    /// RGB combiner (bits 6-9).
    pub rgb_func: ProcTexMapping,
    /// Alpha combiner (bits 10-13).
    pub alpha_func: ProcTexMapping,
    /// Bit 14: alpha from the alpha combiner and alpha map, not from the colour LUT.
    pub separate_alpha: bool,
    /// Noise (bit 15), if enabled.
    pub noise: Option<Noise>,
    /// U shift (bits 16-17), driven by v.
    pub u_shift: ProcTexShift,
    /// V shift (bits 18-19), driven by u.
    pub v_shift: ProcTexShift,
    /// Colour-LUT filter (PROCTEX4 bits 0-2).
    pub filter: ProcTexFilter,
    /// Minimum LOD (PROCTEX4 bits 3-6, unsigned).
    pub min_lod: u8,
    /// Maximum LOD (bits 7-10, unsigned).
    pub max_lod: u8,
    /// Colour-LUT entries of level 0 (bits 11-18, unsigned).
    pub lut_width: u32,
    /// Colour-LUT offsets of levels 0-7 (PROCTEX5 for 0-3, [`HIGH_LEVEL_OFFSETS`] for 4-7).
    pub offsets: [u8; 8],
    /// LOD bias (float16 assembled from PROCTEX4 bits 19-26 and PROCTEX0 bits 20-27).
    pub lod_bias: f32,
    /// Noise LUT.
    pub noise_lut: MapLut,
    /// RGB map LUT.
    pub rgb_map: MapLut,
    /// Alpha map LUT.
    pub alpha_map: MapLut,
    /// Colour LUT, RGBA.
    pub color: [[f32; 4]; 256],
    /// Colour differences (already doubled), RGBA.
    pub color_diff: [[f32; 4]; 256],
    /// Guesses this configuration relies on.
    pub issues: Vec<ProcTexIssue>,
    /// The routine [`ProcTexConfig::sample_fragment`] uses, resolved from the fields above.
    fast: Resolved,
}

/// The per-draw resolution of a [`ProcTexConfig`] for [`ProcTexConfig::sample_fast`]: which
/// monomorphised routine runs, and per colour-LUT level the offset and scale of the index.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Resolved {
    /// Index into the routine table of [`ProcTexConfig::sample_fast`]:
    /// `noise + 2·linear + 4·mip` (mip: 0 none, 1 nearest level, 2 linear between levels).
    route: u8,
    /// True if either shift mode moves the coordinates.
    shift: bool,
    /// Per level: the offset of its entries, as f32.
    level_offset: [f32; 8],
    /// Per level: `width − 1` (entries of the level minus one), as f32.
    level_span: [f32; 8],
    /// The colour LUT as bytes (the nearest filters without a blend between levels read it
    /// directly: the f32 entries are whole numbers 0-255, so their `as u8` is exact).
    color_u8: [Rgba; 256],
}

impl Resolved {
    fn new(
        filter: ProcTexFilter,
        noise: bool,
        shifts: [ProcTexShift; 2],
        lut_width: u32,
        offsets: &[u8; 8],
        color: &[u32; 256],
    ) -> Self {
        let linear = matches!(
            filter,
            ProcTexFilter::Linear
                | ProcTexFilter::LinearMipNearest
                | ProcTexFilter::LinearMipLinear
        );
        let mip = match filter {
            ProcTexFilter::NearestMipNearest | ProcTexFilter::LinearMipNearest => 1,
            ProcTexFilter::NearestMipLinear | ProcTexFilter::LinearMipLinear => 2,
            _ => 0,
        };
        let mut level_offset = [0.0; 8];
        let mut level_span = [0.0; 8];
        for level in 0..8 {
            // As `level_color`: a level narrower than one entry is one entry.
            let width = (lut_width >> level).max(1);
            level_offset[level] = f32::from(offsets[level]);
            level_span[level] = (width - 1) as f32;
        }
        Resolved {
            route: u8::from(noise) + 2 * u8::from(linear) + 4 * mip,
            shift: shifts
                .iter()
                .any(|s| matches!(s, ProcTexShift::Odd | ProcTexShift::Even)),
            level_offset,
            level_span,
            color_u8: color.map(u32::to_le_bytes),
        }
    }
}

/// True if the proctex filter of `regs` uses mip levels (and so needs coordinate derivatives).
pub fn needs_gradients(regs: &[u32; 0x300]) -> bool {
    uses_mipmaps(Regs::new(regs).proctex().lut.filter)
}

const fn uses_mipmaps(f: ProcTexFilter) -> bool {
    !matches!(
        f,
        ProcTexFilter::Nearest | ProcTexFilter::Linear | ProcTexFilter::Unknown(_)
    )
}

impl ProcTexConfig {
    /// Decodes the proctex registers of `regs` and the LUTs in `luts`.
    pub fn from_regs(regs: &[u32; 0x300], luts: &ProcTexLuts<'_>) -> Self {
        let r = Regs::new(regs);
        let p = r.proctex();
        let c = p.config;
        let mut issues = Vec::new();
        let coord = match r.texunit_config().tex3_coords {
            Tex3Coords::Texcoord0 => 0,
            Tex3Coords::Texcoord1 => 1,
            Tex3Coords::Texcoord2 => 2,
            Tex3Coords::Unknown(_) => {
                // UNVERIFIED: Citra GL logs "unexpected" and uses texcoord 0.
                issues.push(ProcTexIssue::UnknownCoordSource);
                0
            }
        };
        for clamp in [c.u_clamp, c.v_clamp] {
            if let ProcTexClamp::Unknown(v) = clamp {
                issues.push(ProcTexIssue::UnknownClamp(v));
            }
        }
        let mut funcs = vec![c.rgb_func];
        if c.separate_alpha {
            funcs.push(c.alpha_func);
        }
        for f in funcs {
            if let ProcTexMapping::Unknown(v) = f {
                issues.push(ProcTexIssue::UnknownCombiner(v));
            }
        }
        if matches!(c.u_shift, ProcTexShift::Unknown(_))
            || matches!(c.v_shift, ProcTexShift::Unknown(_))
        {
            issues.push(ProcTexIssue::UnknownShift);
        }
        if let ProcTexFilter::Unknown(v) = p.lut.filter {
            issues.push(ProcTexIssue::UnknownFilter(v));
        }
        issues.dedup();
        let o = p.offsets;
        let h = HIGH_LEVEL_OFFSETS;
        let offsets = [
            o.level0, o.level1, o.level2, o.level3, h[0], h[1], h[2], h[3],
        ];
        let fast = Resolved::new(
            p.lut.filter,
            c.noise_enable,
            [c.u_shift, c.v_shift],
            u32::from(p.lut.lut_width),
            &offsets,
            luts.color,
        );
        let mut color = [[0.0; 4]; 256];
        let mut color_diff = [[0.0; 4]; 256];
        for i in 0..256 {
            color[i] = luts.color[i].to_le_bytes().map(f32::from);
            let d = ProcTexColorDiff::from_raw(luts.color_diff[i]);
            // The table holds half the difference to the next entry (§8.1).
            color_diff[i] = [d.r, d.g, d.b, d.a].map(|x| (2 * x) as f32);
        }
        ProcTexConfig {
            coord,
            u_clamp: c.u_clamp,
            v_clamp: c.v_clamp,
            rgb_func: c.rgb_func,
            alpha_func: c.alpha_func,
            separate_alpha: c.separate_alpha,
            noise: c.noise_enable.then(|| Noise {
                amplitude_u: p.noise_u.amplitude(),
                amplitude_v: p.noise_v.amplitude(),
                phase_u: p.noise_u.phase.to_f32(),
                phase_v: p.noise_v.phase.to_f32(),
                frequency_u: p.frequency.u.to_f32(),
                frequency_v: p.frequency.v.to_f32(),
            }),
            u_shift: c.u_shift,
            v_shift: c.v_shift,
            filter: p.lut.filter,
            min_lod: p.lut.min_lod,
            max_lod: p.lut.max_lod,
            lut_width: u32::from(p.lut.lut_width),
            offsets,
            lod_bias: p.lod_bias().to_f32(),
            noise_lut: MapLut::from_words(luts.noise),
            rgb_map: MapLut::from_words(luts.rgb_map),
            alpha_map: MapLut::from_words(luts.alpha_map),
            color,
            color_diff,
            issues,
            fast,
        }
    }

    /// True if [`ProcTexConfig::sample`] uses its derivatives (mipmap filters).
    pub fn needs_gradients(&self) -> bool {
        uses_mipmaps(self.filter)
    }

    /// The colour for a fragment (its coordinate [`ProcTexConfig::coord`] and derivatives),
    /// through the specialised [`ProcTexConfig::sample_fast`].
    #[inline]
    pub fn sample_fragment(&self, frag: &Fragment) -> Rgba {
        let c = self.coord.min(2);
        let [u, v] = frag.tc[c];
        self.sample_fast(u, v, frag.tc_grad[c])
    }

    /// [`ProcTexConfig::sample`] through the routine resolved when the configuration was
    /// decoded: the noise, colour-LUT filter and mip mode are const parameters of a
    /// monomorphised function, the LUT level offsets and spans are precomputed, and the
    /// row/column shift is skipped when both shift modes are off. Same result for every input
    /// (tested against [`ProcTexConfig::sample`], the readable reference).
    #[inline]
    pub fn sample_fast(&self, u: f32, v: f32, grad: [f32; 4]) -> Rgba {
        match self.fast.route {
            0 => self.routine::<false, false, 0>(u, v, grad),
            1 => self.routine::<true, false, 0>(u, v, grad),
            2 => self.routine::<false, true, 0>(u, v, grad),
            3 => self.routine::<true, true, 0>(u, v, grad),
            4 => self.routine::<false, false, 1>(u, v, grad),
            5 => self.routine::<true, false, 1>(u, v, grad),
            6 => self.routine::<false, true, 1>(u, v, grad),
            7 => self.routine::<true, true, 1>(u, v, grad),
            8 => self.routine::<false, false, 2>(u, v, grad),
            9 => self.routine::<true, false, 2>(u, v, grad),
            10 => self.routine::<false, true, 2>(u, v, grad),
            _ => self.routine::<true, true, 2>(u, v, grad),
        }
    }

    /// [`ProcTexConfig::sample_fragment`] for every fragment of `frags`: `out[i]` receives
    /// the colour of `frags[i]` (for `i < min(frags.len(), out.len())`). Same result per
    /// fragment; the routine is chosen once per call and each batch of up to
    /// [`FRAGMENT_BATCH`] fragments runs phase by phase (coordinates, shift, noise, clamp,
    /// combiner, map, colour LUT), every mode decided once per phase, not per fragment.
    /// Through the AVX2 copy where the CPU has it ([`crate::pixel::isa`]).
    pub fn sample_batch(&self, frags: &[Fragment], out: &mut [Rgba]) {
        isa::dispatch!(
            self.sample_batch_avx2(frags, out),
            self.sample_batch_body(frags, out)
        )
    }

    isa::avx2_fn! {
        fn sample_batch_avx2(&self, frags: &[Fragment], out: &mut [Rgba]) {
            self.sample_batch_body(frags, out);
        }
    }

    #[inline(always)]
    fn sample_batch_body(&self, frags: &[Fragment], out: &mut [Rgba]) {
        match self.fast.route {
            0 => self.batch_route::<false, false, 0>(frags, out),
            1 => self.batch_route::<true, false, 0>(frags, out),
            2 => self.batch_route::<false, true, 0>(frags, out),
            3 => self.batch_route::<true, true, 0>(frags, out),
            4 => self.batch_route::<false, false, 1>(frags, out),
            5 => self.batch_route::<true, false, 1>(frags, out),
            6 => self.batch_route::<false, true, 1>(frags, out),
            7 => self.batch_route::<true, true, 1>(frags, out),
            8 => self.batch_route::<false, false, 2>(frags, out),
            9 => self.batch_route::<true, false, 2>(frags, out),
            10 => self.batch_route::<false, true, 2>(frags, out),
            _ => self.batch_route::<true, true, 2>(frags, out),
        }
    }

    #[inline(always)]
    fn batch_route<const NOISE: bool, const LINEAR: bool, const MIP: u8>(
        &self,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) {
        for (f, o) in frags
            .chunks(FRAGMENT_BATCH)
            .zip(out.chunks_mut(FRAGMENT_BATCH))
        {
            self.batch::<NOISE, LINEAR, MIP>(f, o);
        }
    }

    /// One batch of at most [`FRAGMENT_BATCH`] fragments; every step mirrors
    /// [`ProcTexConfig::routine`] (the same f32 operations in the same order, so the same
    /// bits). Lanes past the batch's length compute on zeros and are never stored.
    #[inline(always)]
    fn batch<const NOISE: bool, const LINEAR: bool, const MIP: u8>(
        &self,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) {
        const B: usize = FRAGMENT_BATCH;
        let n = frags.len().min(out.len()).min(B);
        let c = self.coord.min(2);
        let mut u = [0.0f32; B];
        let mut v = [0.0f32; B];
        for ((u, v), f) in u.iter_mut().zip(v.iter_mut()).zip(&frags[..n]) {
            let [a, b] = f.tc[c];
            (*u, *v) = (a.abs(), b.abs());
        }
        // Steps 1-4 (`coordinates`): shift offsets from the coordinates before the noise.
        let mut u_off = [0.0f32; B];
        let mut v_off = [0.0f32; B];
        if self.fast.shift {
            shift_lanes(&v, self.u_shift, self.u_clamp, &mut u_off);
            shift_lanes(&u, self.v_shift, self.v_clamp, &mut v_off);
        }
        if NOISE && let Some(nz) = &self.noise {
            for (u, v) in u[..n].iter_mut().zip(&mut v[..n]) {
                let k = noise_coefficient(*u, *v, nz, &self.noise_lut);
                *u = (*u + k * nz.amplitude_u).abs();
                *v = (*v + k * nz.amplitude_v).abs();
            }
        }
        for i in 0..B {
            u[i] += u_off[i];
            v[i] += v_off[i];
        }
        clamp_lanes(&mut u, self.u_clamp);
        clamp_lanes(&mut v, self.v_clamp);
        let mut lut_coord = [0.0f32; B];
        combine_lanes(&u, &v, self.rgb_func, &mut lut_coord);
        for x in &mut lut_coord[..n] {
            *x = self.rgb_map.lookup(*x);
        }
        let out = &mut out[..n];
        if !LINEAR && MIP != 2 {
            for (i, o) in out.iter_mut().enumerate() {
                let level = if MIP == 0 {
                    0
                } else {
                    round_usize(self.lod(frags[i].tc_grad[c]))
                };
                *o = self.fast.color_u8
                    [color_index(round_u32(self.level_index(lut_coord[i], level)))];
            }
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                let lc = lut_coord[i];
                let color = match MIP {
                    0 => self.level_color_fast::<LINEAR>(lc, 0),
                    1 => self
                        .level_color_fast::<LINEAR>(lc, round_usize(self.lod(frags[i].tc_grad[c]))),
                    _ => {
                        let lod = self.lod(frags[i].tc_grad[c]);
                        let li = lod.trunc();
                        let f = lod - li;
                        let li = li as usize;
                        let a = self.level_color_fast::<LINEAR>(lc, li);
                        if f > 0.0 {
                            let b = self.level_color_fast::<LINEAR>(lc, li + 1);
                            [
                                lerp(a[0], b[0], f),
                                lerp(a[1], b[1], f),
                                lerp(a[2], b[2], f),
                                lerp(a[3], b[3], f),
                            ]
                        } else {
                            a
                        }
                    }
                };
                // ok: saturating float → u8 (truncates), as `sample`.
                *o = [
                    color[0] as u8,
                    color[1] as u8,
                    color[2] as u8,
                    color[3] as u8,
                ];
            }
        }
        if self.separate_alpha {
            let mut a = [0.0f32; B];
            combine_lanes(&u, &v, self.alpha_func, &mut a);
            for (o, &a) in out.iter_mut().zip(&a) {
                let a = self.alpha_map.lookup(a);
                o[3] = (a.clamp(0.0, 1.0) * 255.0) as u8;
            }
        }
    }

    /// One specialised routine (see [`ProcTexConfig::sample_fast`]); every step mirrors
    /// [`ProcTexConfig::sample`].
    #[inline(always)]
    fn routine<const NOISE: bool, const LINEAR: bool, const MIP: u8>(
        &self,
        u: f32,
        v: f32,
        grad: [f32; 4],
    ) -> Rgba {
        // Steps 1-4 (`coordinates`).
        let (mut u, mut v) = (u.abs(), v.abs());
        let (u_off, v_off) = if self.fast.shift {
            (
                shift_offset(v, self.u_shift, self.u_clamp),
                shift_offset(u, self.v_shift, self.v_clamp),
            )
        } else {
            (0.0, 0.0)
        };
        if NOISE && let Some(n) = &self.noise {
            let k = noise_coefficient(u, v, n, &self.noise_lut);
            u = (u + k * n.amplitude_u).abs();
            v = (v + k * n.amplitude_v).abs();
        }
        let (u, v) = (
            clamp_coord(u + u_off, self.u_clamp),
            clamp_coord(v + v_off, self.v_clamp),
        );
        let lut_coord = combine_and_map(u, v, self.rgb_func, &self.rgb_map);
        if !LINEAR && MIP != 2 {
            // One nearest entry: the byte table (no float round trip).
            let level = if MIP == 0 {
                0
            } else {
                round_usize(self.lod(grad))
            };
            let mut out =
                self.fast.color_u8[color_index(round_u32(self.level_index(lut_coord, level)))];
            if self.separate_alpha {
                let a = combine_and_map(u, v, self.alpha_func, &self.alpha_map);
                out[3] = (a.clamp(0.0, 1.0) * 255.0) as u8;
            }
            return out;
        }
        let color = match MIP {
            0 => self.level_color_fast::<LINEAR>(lut_coord, 0),
            1 => self.level_color_fast::<LINEAR>(lut_coord, round_usize(self.lod(grad))),
            _ => {
                let lod = self.lod(grad);
                let li = lod.trunc();
                let f = lod - li;
                let li = li as usize;
                let a = self.level_color_fast::<LINEAR>(lut_coord, li);
                if f > 0.0 {
                    let b = self.level_color_fast::<LINEAR>(lut_coord, li + 1);
                    [
                        lerp(a[0], b[0], f),
                        lerp(a[1], b[1], f),
                        lerp(a[2], b[2], f),
                        lerp(a[3], b[3], f),
                    ]
                } else {
                    a
                }
            }
        };
        // ok: saturating float → u8 (truncates), as `sample`.
        let mut out = [
            color[0] as u8,
            color[1] as u8,
            color[2] as u8,
            color[3] as u8,
        ];
        if self.separate_alpha {
            let a = combine_and_map(u, v, self.alpha_func, &self.alpha_map);
            out[3] = (a.clamp(0.0, 1.0) * 255.0) as u8;
        }
        out
    }

    /// [`ProcTexConfig::level_color`] with the filter resolved and the level's offset and
    /// span precomputed.
    #[inline(always)]
    fn level_color_fast<const LINEAR: bool>(&self, lut_coord: f32, level: usize) -> [f32; 4] {
        let index = self.level_index(lut_coord, level);
        if LINEAR {
            let i = index as u32; // ok: index ≥ 0
            let f = index - i as f32;
            let i = color_index(i);
            let (c, d) = (self.color[i], self.color_diff[i]);
            [
                c[0] + f * d[0],
                c[1] + f * d[1],
                c[2] + f * d[2],
                c[3] + f * d[3],
            ]
        } else {
            self.color[color_index(round_u32(index))]
        }
    }

    /// The (fractional) colour-LUT index of `lut_coord` in mip `level`, as `level_color`.
    #[inline(always)]
    fn level_index(&self, lut_coord: f32, level: usize) -> f32 {
        let level = level.min(7);
        let c = if lut_coord.is_nan() {
            0.0
        } else {
            lut_coord.clamp(0.0, 1.0)
        };
        self.fast.level_offset[level] + c * self.fast.level_span[level]
    }

    /// The colour at texture coordinate (u, v); `grad` = `[du/dx, dv/dx, du/dy, dv/dy]` (read
    /// only by the mipmap filters). The readable reference of [`ProcTexConfig::sample_fast`].
    pub fn sample(&self, u: f32, v: f32, grad: [f32; 4]) -> Rgba {
        let (u, v) = self.coordinates(u, v);

        // Colour from the RGB map and the colour LUT.
        let lut_coord = combine_and_map(u, v, self.rgb_func, &self.rgb_map);
        let color = match self.filter {
            ProcTexFilter::Nearest | ProcTexFilter::Linear | ProcTexFilter::Unknown(_) => {
                self.level_color(lut_coord, 0)
            }
            ProcTexFilter::NearestMipNearest | ProcTexFilter::LinearMipNearest => {
                // Round half away from zero, as GLSL round() commonly does.
                let level = round_usize(self.lod(grad));
                self.level_color(lut_coord, level)
            }
            ProcTexFilter::NearestMipLinear | ProcTexFilter::LinearMipLinear => {
                let lod = self.lod(grad);
                let li = lod.trunc();
                let f = lod - li;
                let li = li as usize;
                let a = self.level_color(lut_coord, li);
                if f > 0.0 {
                    let b = self.level_color(lut_coord, li + 1);
                    [0, 1, 2, 3].map(|k| lerp(a[k], b[k], f))
                } else {
                    a
                }
            }
        };
        let mut out = color.map(|x| x as u8); // ok: saturating float → u8 (truncates)
        if self.separate_alpha {
            // The alpha skips the colour LUT (§8.2 step 8).
            let a = combine_and_map(u, v, self.alpha_func, &self.alpha_map);
            out[3] = (a.clamp(0.0, 1.0) * 255.0) as u8;
        }
        out
    }

    /// Steps 1-4 of §8.2: absolute value, shift offsets, noise, shift, clamp.
    #[inline]
    pub fn coordinates(&self, u: f32, v: f32) -> (f32, f32) {
        let mut u = u.abs();
        let mut v = v.abs();
        // The shift offsets are computed before the noise moves the coordinates.
        let u_off = shift_offset(v, self.u_shift, self.u_clamp);
        let v_off = shift_offset(u, self.v_shift, self.v_clamp);
        if let Some(n) = &self.noise {
            let k = noise_coefficient(u, v, n, &self.noise_lut);
            u = (u + k * n.amplitude_u).abs();
            v = (v + k * n.amplitude_v).abs();
        }
        (
            clamp_coord(u + u_off, self.u_clamp),
            clamp_coord(v + v_off, self.v_clamp),
        )
    }

    /// The level of detail for derivatives `grad` (Citra GL's formula, §8.2): 0 if the bias is
    /// 0, else `log2(|width·bias|·(du + dv))` clamped to [max(0, min), min(7, max)].
    // HW: Citra PR #3916's hardware test found the mip transition boundaries of this formula
    // matching the 3DS "very well" (a visual comparison; the exact precision is unknown).
    pub fn lod(&self, grad: [f32; 4]) -> f32 {
        let lo = f32::from(self.min_lod);
        let hi = f32::from(self.max_lod).min(7.0);
        let raw = if self.lod_bias == 0.0 {
            0.0
        } else {
            let du = grad[0].abs().max(grad[2].abs());
            let dv = grad[1].abs().max(grad[3].abs());
            ((self.lut_width as f32 * self.lod_bias).abs() * (du + dv)).log2()
        };
        // Not f32::clamp: min > max must not panic (the range is guest data). NaN → lo.
        let l = if raw.is_nan() { lo } else { raw };
        l.max(lo).min(hi).max(0.0)
    }

    /// The colour-LUT colour (0-255 per channel, unrounded) of `lut_coord` in mip `level`.
    fn level_color(&self, lut_coord: f32, level: usize) -> [f32; 4] {
        let level = level.min(7);
        // UNVERIFIED: a level narrower than one entry is treated as one entry.
        let width = (self.lut_width >> level).max(1);
        let offset = f32::from(self.offsets[level]);
        // Map values outside [0, 1] would index outside the level (Citra GL clamps the map
        // output; Citra SW reads out of bounds); clamped here.
        let c = if lut_coord.is_nan() {
            0.0
        } else {
            lut_coord.clamp(0.0, 1.0)
        };
        let index = offset + c * (width - 1) as f32;
        match self.filter {
            ProcTexFilter::Linear
            | ProcTexFilter::LinearMipNearest
            | ProcTexFilter::LinearMipLinear => {
                let i = index as u32; // ok: index ≥ 0
                let f = index - i as f32;
                let i = color_index(i);
                let (c, d) = (self.color[i], self.color_diff[i]);
                [0, 1, 2, 3].map(|k| c[k] + f * d[k])
            }
            _ => self.color[color_index(round_u32(index))],
        }
    }
}

#[inline]
fn color_index(i: u32) -> usize {
    match COLOR_INDEX_OVERFLOW {
        ColorIndexOverflow::Wrap => (i & 0xFF) as usize,
        ColorIndexOverflow::Clamp => i.min(255) as usize,
    }
}

/// [`shift_offset`] of every lane, the mode decided once.
#[inline(always)]
fn shift_lanes(
    c: &[f32; FRAGMENT_BATCH],
    mode: ProcTexShift,
    clamp: ProcTexClamp,
    out: &mut [f32; FRAGMENT_BATCH],
) {
    match mode {
        ProcTexShift::None | ProcTexShift::Unknown(_) => *out = [0.0; FRAGMENT_BATCH],
        ProcTexShift::Odd => {
            for (o, &c) in out.iter_mut().zip(c) {
                *o = shift_offset(c, ProcTexShift::Odd, clamp);
            }
        }
        ProcTexShift::Even => {
            for (o, &c) in out.iter_mut().zip(c) {
                *o = shift_offset(c, ProcTexShift::Even, clamp);
            }
        }
    }
}

/// [`clamp_coord`] of every lane, the mode decided once (each arm inlines `clamp_coord` with a
/// constant mode: the same operations).
#[inline(always)]
fn clamp_lanes(c: &mut [f32; FRAGMENT_BATCH], mode: ProcTexClamp) {
    #[inline(always)]
    fn each(c: &mut [f32; FRAGMENT_BATCH], mode: ProcTexClamp) {
        for x in c.iter_mut() {
            *x = clamp_coord(*x, mode);
        }
    }
    match mode {
        ProcTexClamp::ToZero => each(c, ProcTexClamp::ToZero),
        ProcTexClamp::SymmetricalRepeat => each(c, ProcTexClamp::SymmetricalRepeat),
        ProcTexClamp::MirroredRepeat => each(c, ProcTexClamp::MirroredRepeat),
        ProcTexClamp::Pulse => each(c, ProcTexClamp::Pulse),
        ProcTexClamp::ToEdge | ProcTexClamp::Unknown(_) => each(c, ProcTexClamp::ToEdge),
    }
}

/// [`combine`] of every lane, the function decided once (as [`clamp_lanes`]).
#[inline(always)]
fn combine_lanes(
    u: &[f32; FRAGMENT_BATCH],
    v: &[f32; FRAGMENT_BATCH],
    f: ProcTexMapping,
    out: &mut [f32; FRAGMENT_BATCH],
) {
    #[inline(always)]
    fn each(
        u: &[f32; FRAGMENT_BATCH],
        v: &[f32; FRAGMENT_BATCH],
        f: ProcTexMapping,
        out: &mut [f32; FRAGMENT_BATCH],
    ) {
        for i in 0..FRAGMENT_BATCH {
            out[i] = combine(u[i], v[i], f);
        }
    }
    match f {
        ProcTexMapping::U => *out = *u,
        ProcTexMapping::U2 => each(u, v, ProcTexMapping::U2, out),
        ProcTexMapping::V => *out = *v,
        ProcTexMapping::V2 => each(u, v, ProcTexMapping::V2, out),
        ProcTexMapping::Add => each(u, v, ProcTexMapping::Add, out),
        ProcTexMapping::Add2 => each(u, v, ProcTexMapping::Add2, out),
        ProcTexMapping::SqrtAdd2 => each(u, v, ProcTexMapping::SqrtAdd2, out),
        ProcTexMapping::Min => each(u, v, ProcTexMapping::Min, out),
        ProcTexMapping::Max => each(u, v, ProcTexMapping::Max, out),
        ProcTexMapping::RMax => each(u, v, ProcTexMapping::RMax, out),
        ProcTexMapping::Unknown(_) => *out = [0.0; FRAGMENT_BATCH],
    }
}

/// The row/column shift offset (§8.2 step 1): `off = 1` for mirrored repeat, else 0.5; odd:
/// `off·((int(c)/2) mod 2)`, even: `off·(((int(c)+1)/2) mod 2)`. `c` is the other coordinate.
#[inline(always)]
pub fn shift_offset(c: f32, mode: ProcTexShift, clamp: ProcTexClamp) -> f32 {
    let off = if clamp == ProcTexClamp::MirroredRepeat {
        1.0
    } else {
        0.5
    };
    let i = i64::from(c as i32); // ok: saturating truncation toward zero
    match mode {
        ProcTexShift::None | ProcTexShift::Unknown(_) => 0.0,
        ProcTexShift::Odd => off * ((i / 2) % 2) as f32,
        ProcTexShift::Even => off * (((i + 1) / 2) % 2) as f32,
    }
}

/// Applies a clamp mode (§8.2 step 4) to a non-negative coordinate.
#[inline(always)]
pub fn clamp_coord(c: f32, mode: ProcTexClamp) -> f32 {
    match mode {
        ProcTexClamp::ToZero => {
            if c > 1.0 {
                0.0
            } else {
                c
            }
        }
        ProcTexClamp::SymmetricalRepeat => c - floor_f32(c),
        ProcTexClamp::MirroredRepeat => {
            let i = c as i32; // ok: saturating truncation
            let f = c - i as f32;
            if i % 2 == 0 { f } else { 1.0 - f }
        }
        ProcTexClamp::Pulse => {
            if c <= 0.5 {
                0.0
            } else {
                1.0
            }
        }
        // UNVERIFIED: modes 5-7 behave as clamp to edge (Citra's default branch).
        ProcTexClamp::ToEdge | ProcTexClamp::Unknown(_) => c.min(1.0),
    }
}

/// A combiner function of (u, v) (§8.1 "Combiners"); undocumented functions give 0.
// UNVERIFIED: Citra PR #2697 reports that the hardware's square root (SQRT2, RMAX) is inaccurate
// for small inputs; we use the exact f32 square root, as Citra does.
#[inline(always)]
pub fn combine(u: f32, v: f32, f: ProcTexMapping) -> f32 {
    match f {
        ProcTexMapping::U => u,
        ProcTexMapping::U2 => u * u,
        ProcTexMapping::V => v,
        ProcTexMapping::V2 => v * v,
        ProcTexMapping::Add => (u + v) * 0.5,
        ProcTexMapping::Add2 => (u * u + v * v) * 0.5,
        ProcTexMapping::SqrtAdd2 => (u * u + v * v).sqrt().min(1.0),
        ProcTexMapping::Min => u.min(v),
        ProcTexMapping::Max => u.max(v),
        ProcTexMapping::RMax => (((u + v) * 0.5 + (u * u + v * v).sqrt()) * 0.5).min(1.0),
        // UNVERIFIED: Citra logs and uses 0 for combiners 10-15.
        ProcTexMapping::Unknown(_) => 0.0,
    }
}

/// `map.lookup(combine(u, v, f))`.
#[inline]
fn combine_and_map(u: f32, v: f32, f: ProcTexMapping, map: &MapLut) -> f32 {
    map.lookup(combine(u, v, f))
}

/// The hardware-matched pseudo-random 1D hash (§8.2; algorithm from Citra, verified there
/// against hardware output, not known to be the hardware's own algorithm).
pub fn noise_rand_1d(v: u32) -> u32 {
    const T1: [u32; 16] = [0, 4, 10, 8, 4, 9, 7, 12, 5, 15, 13, 14, 11, 15, 2, 11];
    (((v % 9 + 2) * 3) & 0xF) ^ T1[((v / 9) & 0xF) as usize]
}

/// The 2D gradient value in [−1, 1] (multiples of 2/15) at lattice point (x, y).
pub fn noise_rand_2d(x: u32, y: u32) -> f32 {
    const T2: [u32; 16] = [10, 2, 15, 8, 0, 7, 4, 5, 5, 13, 2, 6, 13, 9, 3, 14];
    let a = noise_rand_1d(x);
    let mut b = noise_rand_1d(y);
    if a & 3 == 1 {
        b += 4;
    }
    b ^= (a & 1) * 6;
    b += 10 + a;
    b &= 0xF;
    b ^= T2[a as usize];
    -1.0 + b as f32 * 2.0 / 15.0
}

/// The noise value at (u, v) (§8.2 step 2), in [−1, 1] for a noise LUT within [0, 1].
pub fn noise_coefficient(u: f32, v: f32, n: &Noise, lut: &MapLut) -> f32 {
    let x = 9.0 * n.frequency_u * (u + n.phase_u).abs();
    let y = 9.0 * n.frequency_v * (v + n.phase_v).abs();
    let xi = x as i32; // ok: saturating truncation toward zero
    let yi = y as i32;
    let xf = x - xi as f32;
    let yf = y - yi as f32;
    // Lattice coordinates are used as unsigned 32-bit values (Citra).
    let (x0, y0) = (xi as u32, yi as u32);
    let (x1, y1) = (x0.wrapping_add(1), y0.wrapping_add(1));
    let g0 = noise_rand_2d(x0, y0) * (xf + yf);
    let g1 = noise_rand_2d(x1, y0) * (xf + yf - 1.0);
    let g2 = noise_rand_2d(x0, y1) * (xf + yf - 1.0);
    let g3 = noise_rand_2d(x1, y1) * (xf + yf - 2.0);
    let sx = lut.lookup(xf);
    let sy = lut.lookup(yf);
    lerp(lerp(g0, g1, sx), lerp(g2, g3, sx), sy)
}

/// `a·(1 − t) + b·t` (the form of Citra's `Lerp` and GLSL `mix`).
#[inline]
fn lerp(a: f32, b: f32, t: f32) -> f32 {
    a * (1.0 - t) + b * t
}

#[cfg(test)]
mod tests;
