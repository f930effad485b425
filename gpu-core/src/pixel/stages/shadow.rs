//! Shadow-map rendering (fragment operation mode 3, `pica-raster.md` §9.2) and the shadow-map
//! texel layout shared with shadow-texture sampling (§5.8).
//!
//! Stage: replaces the per-fragment operations after the combiners when COLOR_OPERATION bits
//! 0-1 = 3 (§0.4 step 7): no alpha, stencil or depth test, no blending. Input: a
//! [`ShadowWriteConfig`] decoded once per draw by [`ShadowWriteConfig::from_regs`]; per fragment
//! its depth in [0, 1] and the combiner output's green channel (the "intensity"); the four
//! colour-buffer bytes of the pixel. Output: the updated bytes.
//!
//! Registers read: 0x130 FRAGOP_SHADOW (float16 "constant" and "linear" penumbra terms). The
//! colour buffer is addressed as 4 bytes per pixel whatever its format (done by the fragment
//! pipeline).
//!
//! # Texel layout
//!
//! Byte 0 = depth bits 16-23, byte 1 = bits 8-15, byte 2 = bits 0-7 (24-bit big-endian depth),
//! byte 3 = 8-bit intensity. Sampled as an RGBA8 texture (bytes A, B, G, R in memory order) this
//! reads A = depth bits 16-23, B = bits 8-15, G = bits 0-7, R = intensity, which is what the
//! texture unit's shadow compare ([`crate::pixel::texture::Sampler::shadow_compare_face`]) expects.
//!
//! # Write rule (Citra `DrawShadowMapPixel`)
//!
//! `d = trunc(depth·0xFFFFFF)`, `s` = combiner green; with the stored `(dref, sref)`: if
//! `d < dref` then, if `s == 0`, store the depth only; else
//! `s' = clamp(s / (constant + linear·(d / dref)), 0, 255)` and store the intensity only if
//! `s' < sref`. The hardware precision of that division is unknown ([`SHADOW_PRECISION`]).

use pica_cmd::regs::{F16, Regs};

/// The depth and intensity of one shadow-map texel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ShadowTexel {
    /// 24-bit depth (unsigned, 0xFFFFFF = far).
    pub depth: u32,
    /// 8-bit intensity (0 = fully shadowed, 255 = lit).
    pub intensity: u8,
}

impl ShadowTexel {
    /// Decodes the 4 memory bytes of a shadow-map texel.
    #[inline]
    pub const fn from_bytes(b: [u8; 4]) -> Self {
        ShadowTexel {
            depth: ((b[0] as u32) << 16) | ((b[1] as u32) << 8) | b[2] as u32,
            intensity: b[3],
        }
    }

    /// The 4 memory bytes of this texel (depth bits above 24 are dropped).
    #[inline]
    pub const fn to_bytes(self) -> [u8; 4] {
        [
            (self.depth >> 16) as u8,
            (self.depth >> 8) as u8,
            self.depth as u8,
            self.intensity,
        ]
    }

    /// Decodes the texel from its RGBA8-decoded colour (R = intensity, G = depth bits 0-7,
    /// B = bits 8-15, A = bits 16-23).
    #[inline]
    pub const fn from_rgba(c: [u8; 4]) -> Self {
        ShadowTexel {
            depth: ((c[3] as u32) << 16) | ((c[2] as u32) << 8) | c[1] as u32,
            intensity: c[0],
        }
    }
}

/// The arithmetic precision of the soft-shadow intensity division.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShadowPrecision {
    /// Plain f32 (Citra SW and GL: its "float16" type stores an f32 without rounding).
    F32,
    /// Every intermediate rounded to float16 (what the register format suggests).
    F16,
}

/// The precision in use.
// UNVERIFIED: hardware precision unknown (`pica-raster.md` §9.2); F32 matches Citra's output.
// Alternative: ShadowPrecision::F16.
pub const SHADOW_PRECISION: ShadowPrecision = ShadowPrecision::F32;

/// Shadow-map rendering parameters of a draw (reg 0x130 FRAGOP_SHADOW).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ShadowWriteConfig {
    /// Bits 0-15, float16: penumbra scale + penumbra bias.
    pub constant: f32,
    /// Bits 16-31, float16: penumbra scale with reversed sign.
    pub linear: f32,
}

impl ShadowWriteConfig {
    /// Decodes FRAGOP_SHADOW.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let s = Regs::new(regs).fragop_shadow();
        ShadowWriteConfig {
            constant: s.constant.to_f32(),
            linear: s.linear.to_f32(),
        }
    }

    /// Applies the write rule to the stored texel bytes `pixel` for a fragment at `depth`
    /// ([0, 1]) whose combiner output has green `intensity`. Returns true if `pixel` changed.
    pub fn write(&self, depth: f32, intensity: u8, pixel: &mut [u8; 4]) -> bool {
        // ok: depth is clamped to [0, 1] by the rasteriser; `as` saturates anyway (NaN → 0).
        let d = (depth * 16_777_215.0) as u32;
        let stored = ShadowTexel::from_bytes(*pixel);
        if d >= stored.depth {
            return false;
        }
        let new = if intensity == 0 {
            ShadowTexel {
                depth: d,
                intensity: stored.intensity,
            }
        } else {
            let s = self.soft_intensity(intensity, d, stored.depth);
            if s >= stored.intensity {
                return false;
            }
            ShadowTexel {
                depth: stored.depth,
                intensity: s,
            }
        };
        let bytes = new.to_bytes();
        let changed = bytes != *pixel;
        *pixel = bytes;
        changed
    }

    /// `clamp(s / (constant + linear·(d / dref)), 0, 255)` truncated to u8 (`dref > d ≥ 0`).
    /// A NaN quotient gives 255 (no intensity write).
    pub fn soft_intensity(&self, s: u8, d: u32, dref: u32) -> u8 {
        let ratio = d as f32 / dref.max(1) as f32;
        let q = match SHADOW_PRECISION {
            ShadowPrecision::F32 => f32::from(s) / (self.constant + self.linear * ratio),
            ShadowPrecision::F16 => {
                let r = |x: f32| F16::from_f32(x).to_f32();
                let den = r(self.constant + r(self.linear * r(ratio)));
                r(f32::from(s) / den)
            }
        };
        if q.is_nan() {
            255
        } else {
            q.clamp(0.0, 255.0) as u8
        }
    }
}

#[cfg(test)]
mod tests;
