//! Perspective divide, viewport transform and depth-map parameters (`pica-raster.md` §3,
//! `pica-core.md` §8.2).
//!
//! * Input: clipped [`OutputVertex`] values in clip space (w >= `clip::W_MIN`).
//! * Output: [`ScreenVertex`] in window coordinates (origin bottom-left, y up, pixel centres at
//!   integer + 0.5), and [`DepthMap`], which the rasterizer applies per pixel.
//! * Registers read: VIEWPORT_WIDTH (0x041) and VIEWPORT_HEIGHT (0x043), float24 half sizes;
//!   VIEWPORT_XY (0x068), signed 10-bit corner x (bits 0-9) and y (bits 16-25);
//!   DEPTHMAP_SCALE (0x04D) and DEPTHMAP_OFFSET (0x04E), float24; DEPTHMAP_ENABLE (0x06D) bit 0.
//!
//! VIEWPORT_INVW/INVH (0x042/0x044, float31 `2/width`, `2/height`) are not read: the transform
//! uses the half sizes as \[C\] and \[P\] do. UNVERIFIED: the hardware may divide through the
//! reciprocals instead, which would differ in the last bits.

use pica_cmd::regs::Regs;
use pica_cmd::regs::rasterizer::DepthMapMode;

use crate::vertex::{OutputVertex, ScreenVertex};

/// The viewport transform decoded from the registers.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Viewport {
    /// Half width in pixels (VIEWPORT_WIDTH, float24).
    pub half_width: f32,
    /// Half height in pixels (VIEWPORT_HEIGHT, float24).
    pub half_height: f32,
    /// Corner x in pixels (VIEWPORT_XY bits 0-9, signed).
    pub x: i32,
    /// Corner y in pixels (VIEWPORT_XY bits 16-25, signed).
    pub y: i32,
}

impl Viewport {
    /// Decodes VIEWPORT_WIDTH (0x041), VIEWPORT_HEIGHT (0x043) and VIEWPORT_XY (0x068) through
    /// the register catalogue.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let corner = r.viewport_xy();
        Self {
            half_width: r.viewport_width(),
            half_height: r.viewport_height(),
            x: corner.x,
            y: corner.y,
        }
    }
}

/// Perspective divide and viewport transform of one clipped vertex.
///
/// `x = (x/w + 1)·halfW + corner.x`, `y = (y/w + 1)·halfH + corner.y`, `z_over_w = z/w`,
/// `inv_w = 1/w`; the attributes are copied unchanged (the rasterizer applies `1/w` itself).
/// HW: formula of \[C\]'s software rasterizer (`InitScreenCoordinates`); \[P\]'s GL path agrees.
#[inline]
pub fn to_screen(v: &OutputVertex, vp: &Viewport) -> ScreenVertex {
    let inv_w = 1.0 / v.pos[3];
    ScreenVertex {
        x: (v.pos[0] * inv_w + 1.0) * vp.half_width + vp.x as f32,
        y: (v.pos[1] * inv_w + 1.0) * vp.half_height + vp.y as f32,
        z_over_w: v.pos[2] * inv_w,
        inv_w,
        attrs: *v,
    }
}

/// How the depth value is formed (DEPTHMAP_ENABLE, 0x06D bit 0).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DepthMode {
    /// Bit 0 = 1: depth from `z/w`, interpolated linearly in screen space.
    #[default]
    ZBuffer,
    /// Bit 0 = 0: the mapped depth is multiplied by the (perspective-correct) w.
    WBuffer,
}

/// The depth map: `depth = (z/w)·scale + offset`, times w in w-buffer mode, clamped to [0, 1].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DepthMap {
    /// DEPTHMAP_SCALE (float24), by convention `near − far`.
    pub scale: f32,
    /// DEPTHMAP_OFFSET (float24), by convention `near + polygon offset`.
    pub offset: f32,
    /// z-buffer or w-buffer.
    pub mode: DepthMode,
}

impl DepthMap {
    /// Decodes DEPTHMAP_SCALE (0x04D), DEPTHMAP_OFFSET (0x04E) and DEPTHMAP_ENABLE (0x06D)
    /// through the register catalogue.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        Self {
            scale: r.depthmap_scale(),
            offset: r.depthmap_offset(),
            mode: match r.depthmap_mode() {
                DepthMapMode::WBuffer => DepthMode::WBuffer,
                // ok: a 1-bit field has no unknown encodings.
                DepthMapMode::ZBuffer | DepthMapMode::Unknown(_) => DepthMode::ZBuffer,
            },
        }
    }

    /// Depth in [0, 1] for a fragment with interpolated `z_over_w` and (perspective-correct) `w`.
    ///
    /// HW: \[C\]'s software rasterizer (`pica-raster.md` §3.3); NaN maps to 0.
    /// UNVERIFIED: \[C\] notes its depth is "about 3 bits" less precise than hardware.
    #[inline]
    pub fn depth(&self, z_over_w: f32, w: f32) -> f32 {
        let mut d = z_over_w * self.scale + self.offset;
        if self.mode == DepthMode::WBuffer {
            d *= w;
        }
        // `clamp` keeps NaN; a NaN depth maps to 0 instead.
        if d.is_nan() { 0.0 } else { d.clamp(0.0, 1.0) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pica_cmd::regs::id;

    const REG_VIEWPORT_WIDTH: usize = id::VIEWPORT_WIDTH as usize;
    const REG_VIEWPORT_HEIGHT: usize = id::VIEWPORT_HEIGHT as usize;
    const REG_VIEWPORT_XY: usize = id::VIEWPORT_XY as usize;
    const REG_DEPTHMAP_SCALE: usize = id::DEPTHMAP_SCALE as usize;
    const REG_DEPTHMAP_OFFSET: usize = id::DEPTHMAP_OFFSET as usize;
    const REG_DEPTHMAP_ENABLE: usize = id::DEPTHMAP_ENABLE as usize;

    /// float24 bits of small exact values.
    const F24_ONE: u32 = 0x3F_0000;
    const F24_MINUS_ONE: u32 = 0xBF_0000;
    /// 200.0 = 1.5625 × 2^7.
    const F24_200: u32 = ((63 + 7) << 16) | 0x9000;
    /// 120.0 = 1.875 × 2^6.
    const F24_120: u32 = ((63 + 6) << 16) | 0xE000;

    fn regs() -> Box<[u32; 0x300]> {
        let mut r = Box::new([0u32; 0x300]);
        r[REG_VIEWPORT_WIDTH] = F24_200;
        r[REG_VIEWPORT_HEIGHT] = F24_120;
        r[REG_DEPTHMAP_SCALE] = F24_MINUS_ONE;
        r[REG_DEPTHMAP_OFFSET] = 0;
        r[REG_DEPTHMAP_ENABLE] = 1;
        r
    }

    #[test]
    fn viewport_from_registers() {
        let mut r = regs();
        r[REG_VIEWPORT_XY] = (0x3FF << 16) | 0x010; // y = −1, x = 16
        assert_eq!(
            Viewport::from_regs(&r),
            Viewport {
                half_width: 200.0,
                half_height: 120.0,
                x: 16,
                y: -1
            }
        );
        r[REG_VIEWPORT_XY] = (0x200 << 16) | 0x1FF; // y = −512, x = 511
        let vp = Viewport::from_regs(&r);
        assert_eq!((vp.x, vp.y), (511, -512));
    }

    #[test]
    fn divide_and_viewport() {
        let vp = Viewport::from_regs(&regs());
        let cases: [([f32; 4], [f32; 4]); 4] = [
            // pos in clip space → (x, y, z/w, 1/w)
            ([0.0, 0.0, -1.0, 2.0], [200.0, 120.0, -0.5, 0.5]),
            ([-2.0, -2.0, 0.0, 2.0], [0.0, 0.0, 0.0, 0.5]),
            ([4.0, 4.0, -4.0, 4.0], [400.0, 240.0, -1.0, 0.25]),
            ([0.5, -0.25, -0.5, 1.0], [300.0, 90.0, -0.5, 1.0]),
        ];
        for (pos, want) in cases {
            let v = OutputVertex {
                pos,
                color: [0.5; 4],
                ..Default::default()
            };
            let s = to_screen(&v, &vp);
            assert_eq!([s.x, s.y, s.z_over_w, s.inv_w], want, "{pos:?}");
            assert_eq!(s.attrs, v, "attributes are not premultiplied");
        }
    }

    #[test]
    fn viewport_corner_offsets() {
        let vp = Viewport {
            half_width: 10.0,
            half_height: 5.0,
            x: -3,
            y: 7,
        };
        let s = to_screen(
            &OutputVertex {
                pos: [0.0, 0.0, 0.0, 1.0],
                ..Default::default()
            },
            &vp,
        );
        assert_eq!((s.x, s.y), (7.0, 12.0));
    }

    #[test]
    fn depth_map_z_and_w_buffer() {
        let mut r = regs();
        let z = DepthMap::from_regs(&r);
        assert_eq!(
            z,
            DepthMap {
                scale: -1.0,
                offset: 0.0,
                mode: DepthMode::ZBuffer
            }
        );
        // (z/w, w) → depth
        for (zw, w, want) in [
            (0.0, 1.0, 0.0),
            (-0.5, 4.0, 0.5),
            (-1.0, 2.0, 1.0),
            (0.25, 1.0, 0.0),
        ] {
            assert_eq!(z.depth(zw, w), want);
        }
        r[REG_DEPTHMAP_ENABLE] = 0;
        r[REG_DEPTHMAP_OFFSET] = F24_ONE;
        r[REG_DEPTHMAP_SCALE] = F24_ONE;
        let wb = DepthMap::from_regs(&r);
        assert_eq!(wb.mode, DepthMode::WBuffer);
        // ((z/w)·1 + 1)·w = z + w
        assert_eq!(wb.depth(-0.75, 2.0), 0.5);
        assert_eq!(wb.depth(-0.5, 4.0), 1.0, "clamped");
        assert_eq!(wb.depth(f32::NAN, 1.0), 0.0);
    }
}
