//! Pixel addressing of tiled and linear images (`pica-raster.md` §3.2, §5.3, §9.7, §10.3).
//!
//! Stage: shared helper of texturing, the fragment stage (colour/depth buffers) and the external
//! engines. Inputs: integer pixel coordinates in **memory order** and the image width; outputs:
//! pixel indices (multiply by bytes per pixel for a byte offset). Registers that select the
//! layouts: 0x11B FRAMEBUFFER_BLOCK32 bit 0 and display-transfer flag bit 16 (8×8 tiles or 32×32
//! blocks).
//!
//! * **8×8 tiles** // HW: \[C\] src/video_core/utils.h, \[3DB-I\]: the image is cut into 8×8 tiles
//!   stored left to right, tile rows top to bottom; inside a tile the pixel index is the bit
//!   interleave (Morton / Z order) of x and y with x in the even bits:
//!   `x0 + 2·y0 + 4·x1 + 8·y1 + 16·x2 + 32·y2`.
//! * **Memory order vs window order**: memory row 0 is the *top* of the image; the rasterizer's
//!   window y grows *up*, so window row y is memory row `H − 1 − y` ([`flip_row`]); texture
//!   coordinate v = 0 is likewise the last memory row. The functions here take memory rows.
//! * **Linear**: row-major, `y·W + x` (display transfer linear side, LCD framebuffers).
//!
//! All arithmetic is on u32 and wraps instead of panicking: callers bound widths and heights
//! (textures ≤ 1024, framebuffers ≤ 2048, transfers are validated by the engines), for which no
//! wrap can occur.

/// Width and height of a tile in pixels.
pub const TILE_SIZE: u32 = 8;

/// Pixels in one 8×8 tile.
pub const TILE_PIXELS: u32 = 64;

/// Morton index inside an 8×8 tile of the pixel (x & 7, y & 7), y in memory order.
#[inline]
pub const fn morton8(x: u32, y: u32) -> u32 {
    (x & 1) | ((y & 1) << 1) | ((x & 2) << 1) | ((y & 2) << 2) | ((x & 4) << 2) | ((y & 4) << 3)
}

const fn build_xy_to_morton() -> [u8; 64] {
    let mut t = [0u8; 64];
    let mut i = 0;
    while i < 64 {
        t[i] = morton8((i % 8) as u32, (i / 8) as u32) as u8;
        i += 1;
    }
    t
}

const fn build_morton_to_xy() -> [[u8; 2]; 64] {
    let mut t = [[0u8; 2]; 64];
    let mut i = 0;
    while i < 64 {
        let m = morton8((i % 8) as u32, (i / 8) as u32) as usize;
        t[m] = [(i % 8) as u8, (i / 8) as u8];
        i += 1;
    }
    t
}

/// `XY_TO_MORTON[y·8 + x]` = Morton index of (x, y) in a tile (a table form of [`morton8`]).
pub const XY_TO_MORTON: [u8; 64] = build_xy_to_morton();

/// `MORTON_TO_XY[i]` = `[x, y]` of the pixel with Morton index `i` in a tile (y in memory order);
/// the inverse of [`XY_TO_MORTON`]. Whole-tile decoders walk memory in this order.
pub const MORTON_TO_XY: [[u8; 2]; 64] = build_morton_to_xy();

/// Pixel index of (x, y) (y a memory row) in an 8×8-tiled image `width` pixels wide:
/// `(y & ~7)·width + (x & ~7)·8 + morton8(x, y)`. `width` should be a multiple of 8.
#[inline]
pub const fn tiled_index(x: u32, y: u32, width: u32) -> u32 {
    (y & !7)
        .wrapping_mul(width)
        .wrapping_add((x & !7).wrapping_mul(8))
        .wrapping_add(morton8(x, y))
}

/// Byte offset of (x, y) (memory row) in an 8×8-tiled image with `bpp` bytes per pixel.
#[inline]
pub const fn tiled_offset(x: u32, y: u32, width: u32, bpp: u32) -> u32 {
    tiled_index(x, y, width).wrapping_mul(bpp)
}

/// Pixel index of (x, y) in a row-major image `width` pixels wide: `y·width + x`.
#[inline]
pub const fn linear_index(x: u32, y: u32, width: u32) -> u32 {
    y.wrapping_mul(width).wrapping_add(x)
}

/// Byte offset of (x, y) in a row-major image with `bpp` bytes per pixel (rows `width·bpp` apart).
#[inline]
pub const fn linear_offset(x: u32, y: u32, width: u32, bpp: u32) -> u32 {
    linear_index(x, y, width).wrapping_mul(bpp)
}

/// Converts between window rows (y up, 0 = bottom) and memory rows (0 = top): `height − 1 − y`.
/// The mapping is its own inverse. Out-of-range rows wrap (callers clip first).
#[inline]
pub const fn flip_row(y: u32, height: u32) -> u32 {
    height.wrapping_sub(1).wrapping_sub(y)
}

/// Order of the 8×8 tiles inside a 32×32 block in [`TileMode::Block32`].
///
/// UNVERIFIED: none of our sources describe the 32×32 block layout (Citra ignores reg 0x11B and
/// display-transfer bit 16; `pica-raster.md` §13.2). The chosen guess keeps Morton ordering one
/// level up (the 4×4 tiles of a block in Z order, like the pixels in a tile); the alternative is
/// row-major tiles within the block. Flip this const to switch.
pub const BLOCK32_TILES_IN_Z_ORDER: bool = true;

/// Pixel index of (x, y) (memory row) in a 32×32-block-tiled image `width` pixels wide.
///
/// Blocks of 32×32 pixels are stored left to right, block rows top to bottom; each block holds
/// 16 8×8 tiles (order: [`BLOCK32_TILES_IN_Z_ORDER`]) of 64 Morton-ordered pixels. `width` should
/// be a multiple of 32. UNVERIFIED layout, see [`BLOCK32_TILES_IN_Z_ORDER`].
#[inline]
pub const fn block32_index(x: u32, y: u32, width: u32) -> u32 {
    let tx = (x >> 3) & 3;
    let ty = (y >> 3) & 3;
    let tile = if BLOCK32_TILES_IN_Z_ORDER {
        (tx & 1) | ((ty & 1) << 1) | ((tx & 2) << 1) | ((ty & 2) << 2)
    } else {
        ty * 4 + tx
    };
    (y & !31)
        .wrapping_mul(width)
        .wrapping_add((x & !31).wrapping_mul(32))
        .wrapping_add(tile * TILE_PIXELS)
        .wrapping_add(morton8(x, y))
}

/// A memory layout of a 2D image.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TileMode {
    /// Row-major pixels.
    Linear,
    /// 8×8 Morton tiles (textures, colour and depth buffers by default).
    Tiled8,
    /// 32×32 blocks of 8×8 tiles (reg 0x11B bit 0 = 1, display-transfer flag bit 16).
    /// UNVERIFIED layout, see [`block32_index`].
    Block32,
}

impl TileMode {
    /// Pixel index of (x, y) (memory row) in an image of this layout, `width` pixels wide.
    #[inline]
    pub const fn index(self, x: u32, y: u32, width: u32) -> u32 {
        match self {
            Self::Linear => linear_index(x, y, width),
            Self::Tiled8 => tiled_index(x, y, width),
            Self::Block32 => block32_index(x, y, width),
        }
    }

    /// Byte offset of (x, y) (memory row) with `bpp` bytes per pixel.
    #[inline]
    pub const fn offset(self, x: u32, y: u32, width: u32, bpp: u32) -> u32 {
        self.index(x, y, width).wrapping_mul(bpp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index grid of `pica-raster.md` §5.3 (rows in memory order).
    const GRID: [[u32; 8]; 8] = [
        [0, 1, 4, 5, 16, 17, 20, 21],
        [2, 3, 6, 7, 18, 19, 22, 23],
        [8, 9, 12, 13, 24, 25, 28, 29],
        [10, 11, 14, 15, 26, 27, 30, 31],
        [32, 33, 36, 37, 48, 49, 52, 53],
        [34, 35, 38, 39, 50, 51, 54, 55],
        [40, 41, 44, 45, 56, 57, 60, 61],
        [42, 43, 46, 47, 58, 59, 62, 63],
    ];

    #[test]
    fn morton_matches_reference_grid() {
        for (y, row) in GRID.iter().enumerate() {
            for (x, &m) in row.iter().enumerate() {
                assert_eq!(morton8(x as u32, y as u32), m, "({x},{y})");
                assert_eq!(u32::from(XY_TO_MORTON[y * 8 + x]), m);
                assert_eq!(MORTON_TO_XY[m as usize], [x as u8, y as u8]);
            }
        }
    }

    #[test]
    fn tiled_offsets() {
        // 16 wide: the second tile of the first tile row starts at pixel 64.
        assert_eq!(tiled_index(8, 0, 16), 64);
        // First pixel of the second tile row: 8 rows · 16 pixels.
        assert_eq!(tiled_index(0, 8, 16), 128);
        // (13, 10) in a 32-wide image: tile row 1 (256), tile 1 (64), morton(5, 2) = 25.
        assert_eq!(tiled_index(13, 10, 32), 256 + 64 + 25);
        assert_eq!(tiled_offset(13, 10, 32, 4), (256 + 64 + 25) * 4);
        // Equivalent form of §5.3: base + (y>>3)·(W/8)·tile_bytes + (x>>3)·tile_bytes + m·Bpp.
        let (w, bpp) = (64u32, 3u32);
        for y in 0..32 {
            for x in 0..w {
                let tb = 64 * bpp;
                let expect = (y >> 3) * (w / 8) * tb + (x >> 3) * tb + morton8(x & 7, y & 7) * bpp;
                assert_eq!(tiled_offset(x, y, w, bpp), expect);
            }
        }
    }

    /// The display transfer splits indices into a row part and a column part.
    #[test]
    fn indices_split_into_row_and_column_parts() {
        for mode in [TileMode::Linear, TileMode::Tiled8, TileMode::Block32] {
            for width in [8u32, 32, 96, 240, 400, 0xFFFF, 0x8000_0000] {
                for y in (0..70).chain([0xFFF0, 0xFFFF_FFF0]) {
                    for x in (0..70).chain([513, 0xFFFF, 0x1_FFFE]) {
                        assert_eq!(
                            mode.index(x, y, width),
                            mode.index(0, y, width)
                                .wrapping_add(mode.index(x, 0, width)),
                            "{mode:?} ({x},{y}) width {width}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn tiled_index_is_a_bijection() {
        let (w, h) = (32u32, 16u32);
        let mut seen = vec![false; (w * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let i = tiled_index(x, y, w) as usize;
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
        let mut seen = vec![false; 64 * 64];
        for y in 0..64 {
            for x in 0..64 {
                let i = block32_index(x, y, 64) as usize;
                assert!(!seen[i]);
                seen[i] = true;
            }
        }
    }

    #[test]
    fn linear_and_flip() {
        assert_eq!(linear_index(3, 2, 10), 23);
        assert_eq!(linear_offset(3, 2, 10, 2), 46);
        assert_eq!(flip_row(0, 240), 239);
        assert_eq!(flip_row(239, 240), 0);
        assert_eq!(flip_row(flip_row(17, 240), 240), 17);
        // Absurd values wrap instead of panicking.
        let _ = tiled_offset(u32::MAX, u32::MAX, u32::MAX, 4);
        let _ = flip_row(5, 0);
    }

    #[test]
    fn block32_keeps_8x8_tiles_intact() {
        // Within the first block, the first tile is identical to the 8x8 layout.
        for y in 0..8 {
            for x in 0..8 {
                assert_eq!(block32_index(x, y, 64), morton8(x, y));
            }
        }
        // The second block of a row starts after 32·32 pixels.
        assert_eq!(block32_index(32, 0, 64), 1024);
        // The second block row starts after 32 rows of the image.
        assert_eq!(block32_index(0, 32, 64), 32 * 64);
        assert_eq!(TileMode::Tiled8.index(13, 10, 32), tiled_index(13, 10, 32));
        assert_eq!(TileMode::Linear.offset(1, 1, 4, 2), 10);
    }
}
