//! The 14 texel formats and how one texel is found and decoded (`pica-raster.md` §5.2-§5.4).
//!
//! Stage: texel decode. Inputs: a [`TextureFormat`] (reg 0x08E/0x096/0x09E bits 0-3), texel
//! coordinates (x, memory row) and the level width; outputs: the byte offset of the texel (or of
//! the byte / block that holds it) and the decoded `[u8; 4]` RGBA.
//!
//! Every format uses the 8×8 Morton tiling of [`crate::pixel::tiling`]. Byte orders (memory is
//! little-endian) // HW: \[C\] texture_decode.cpp, \[P\] textures.cpp agree:
//!
//! | Id | Format | bits | Texel storage | Decoded (R, G, B, A) |
//! |---|---|---|---|---|
//! | 0 | RGBA8 | 32 | bytes A, B, G, R | |
//! | 1 | RGB8 | 24 | bytes B, G, R | A = 255 |
//! | 2 | RGB5A1 | 16 | R 15-11, G 10-6, B 5-1, A 0 | |
//! | 3 | RGB565 | 16 | R 15-11, G 10-5, B 4-0 | A = 255 |
//! | 4 | RGBA4 | 16 | R 15-12, G 11-8, B 7-4, A 3-0 | |
//! | 5 | IA8 | 16 | byte0 A, byte1 I | (I, I, I, A) |
//! | 6 | HILO8 | 16 | byte0 second channel, byte1 first | (byte1, byte0, 0, 255) |
//! | 7 | I8 | 8 | I | (I, I, I, 255) |
//! | 8 | A8 | 8 | A | (0, 0, 0, A) |
//! | 9 | IA4 | 8 | I bits 7-4, A bits 3-0 | (I·17, I·17, I·17, A·17) |
//! | 10 | I4 | 4 | even Morton index in bits 3-0, odd in 7-4 | (I·17, I·17, I·17, 255) |
//! | 11 | A4 | 4 | same nibble rule | (0, 0, 0, A·17) |
//! | 12 | ETC1 | 4 | 8-byte blocks, four per tile | A = 255 |
//! | 13 | ETC1A4 | 8 | 16-byte blocks (8 alpha + 8 colour) | A = nibble·17 |

use crate::pixel::color::{
    Rgba, decode_rgb5a1, decode_rgb565, decode_rgba4, decode_rgba8, expand4,
};
use crate::pixel::tiling::tiled_index;

use super::etc1::{etc1_texel, etc1a4_alpha};

/// A texture texel format (TEXUNITi_TYPE bits 0-3; ids 14 and 15 are invalid).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TextureFormat {
    /// 0: 32-bit, bytes A, B, G, R.
    Rgba8,
    /// 1: 24-bit, bytes B, G, R.
    Rgb8,
    /// 2: 16-bit R5 G5 B5 A1.
    Rgb5a1,
    /// 3: 16-bit R5 G6 B5.
    Rgb565,
    /// 4: 16-bit R4 G4 B4 A4.
    Rgba4,
    /// 5: 16-bit, byte0 alpha, byte1 intensity.
    Ia8,
    /// 6: 16-bit two-channel (normal maps), byte0 = G, byte1 = R.
    Hilo8,
    /// 7: 8-bit intensity.
    I8,
    /// 8: 8-bit alpha.
    A8,
    /// 9: 8-bit, intensity in the high nibble, alpha in the low nibble.
    Ia4,
    /// 10: 4-bit intensity.
    I4,
    /// 11: 4-bit alpha.
    A4,
    /// 12: ETC1 compressed RGB, 4 bits per texel.
    Etc1,
    /// 13: ETC1 with a separate 4-bit alpha, 8 bits per texel.
    Etc1a4,
}

impl TextureFormat {
    /// All 14 formats in id order.
    pub const ALL: [TextureFormat; 14] = [
        Self::Rgba8,
        Self::Rgb8,
        Self::Rgb5a1,
        Self::Rgb565,
        Self::Rgba4,
        Self::Ia8,
        Self::Hilo8,
        Self::I8,
        Self::A8,
        Self::Ia4,
        Self::I4,
        Self::A4,
        Self::Etc1,
        Self::Etc1a4,
    ];

    /// Format from its register id (bits 0-3); `None` for 14 and 15.
    pub const fn from_id(id: u32) -> Option<Self> {
        if (id as usize) < Self::ALL.len() {
            // ok: the index was just checked against the table length.
            Some(Self::ALL[id as usize])
        } else {
            None
        }
    }

    /// The register id.
    pub const fn id(self) -> u32 {
        self as u32
    }

    /// Bits per texel: 32, 24, 16, 8 or 4.
    pub const fn bits_per_texel(self) -> u32 {
        match self {
            Self::Rgba8 => 32,
            Self::Rgb8 => 24,
            Self::Rgb5a1 | Self::Rgb565 | Self::Rgba4 | Self::Ia8 | Self::Hilo8 => 16,
            Self::I8 | Self::A8 | Self::Ia4 | Self::Etc1a4 => 8,
            Self::I4 | Self::A4 | Self::Etc1 => 4,
        }
    }

    /// Bytes of one 8×8 tile (`64 · bits / 8`).
    pub const fn tile_bytes(self) -> u32 {
        self.bits_per_texel() * 8
    }

    /// Bytes of a `width × height` level (`width · height · bits / 8`), as u64 (no overflow).
    pub const fn level_bytes(self, width: u32, height: u32) -> u64 {
        width as u64 * height as u64 * self.bits_per_texel() as u64 / 8
    }

    /// Bytes spanned by a tiled `width × height` level: one past the last byte any texel
    /// offset can reach. Equals [`TextureFormat::level_bytes`] when both sides are multiples of
    /// 8 (every valid texture); for other sizes it also covers the partial last tile (whose
    /// layout is UNVERIFIED — hardware requires power-of-two sizes ≥ 8). 0 for an empty level.
    pub const fn level_span(self, width: u32, height: u32) -> u64 {
        if width == 0 || height == 0 {
            return 0;
        }
        let (w, h) = (width as u64, height as u64);
        // The last tile's start is the largest tile start (it grows with both tile coordinates).
        let last_tile_start_texel = if self.is_etc() {
            (((h - 1) >> 3) * (w >> 3) + ((w - 1) >> 3)) * 64
        } else {
            ((h - 1) & !7) * w + ((w - 1) & !7) * 8
        };
        (last_tile_start_texel + 64) * self.bits_per_texel() as u64 / 8
    }

    /// True for the two ETC formats.
    pub const fn is_etc(self) -> bool {
        matches!(self, Self::Etc1 | Self::Etc1a4)
    }

    /// Short upper-case name ("RGBA8", "ETC1A4", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rgba8 => "RGBA8",
            Self::Rgb8 => "RGB8",
            Self::Rgb5a1 => "RGB5A1",
            Self::Rgb565 => "RGB565",
            Self::Rgba4 => "RGBA4",
            Self::Ia8 => "IA8",
            Self::Hilo8 => "HILO8",
            Self::I8 => "I8",
            Self::A8 => "A8",
            Self::Ia4 => "IA4",
            Self::I4 => "I4",
            Self::A4 => "A4",
            Self::Etc1 => "ETC1",
            Self::Etc1a4 => "ETC1A4",
        }
    }

    /// Number of bytes [`TextureFormat::fetch`] reads at [`TextureFormat::texel_offset`]:
    /// the texel's bytes, the byte holding a 4-bit texel, or the whole ETC block (8 / 16).
    pub const fn fetch_bytes(self) -> u32 {
        match self {
            Self::Etc1 => 8,
            Self::Etc1a4 => 16,
            Self::I4 | Self::A4 => 1,
            other => other.bits_per_texel() / 8,
        }
    }

    /// Byte offset, from the start of a level `width` texels wide, of what must be read to
    /// decode texel (x, y) (y = memory row, 0 = top): the texel itself, the byte holding a
    /// 4-bit texel, or the ETC sub-block holding it. Wraps instead of overflowing.
    #[inline]
    pub const fn texel_offset(self, x: u32, y: u32, width: u32) -> u32 {
        match self {
            Self::Etc1 | Self::Etc1a4 => {
                let block = if matches!(self, Self::Etc1) { 8 } else { 16 };
                let tile = (y >> 3).wrapping_mul(width >> 3).wrapping_add(x >> 3);
                let sub = ((x & 7) >> 2) + 2 * ((y & 7) >> 2);
                tile.wrapping_mul(block * 4).wrapping_add(sub * block)
            }
            Self::I4 | Self::A4 => tiled_index(x, y, width) >> 1,
            other => tiled_index(x, y, width).wrapping_mul(other.bits_per_texel() / 8),
        }
    }

    /// Decodes texel (x, y) (y = memory row) from `raw`, the first
    /// [`TextureFormat::fetch_bytes`] bytes found at [`TextureFormat::texel_offset`] (zero
    /// padded to 16 bytes). Only the low bits of x and y matter (nibble / block position).
    #[inline]
    pub fn fetch(self, raw: &[u8; 16], x: u32, y: u32) -> Rgba {
        match self {
            Self::Rgba8 => decode_rgba8([raw[0], raw[1], raw[2], raw[3]]),
            Self::Rgb8 => [raw[2], raw[1], raw[0], 255],
            Self::Rgb5a1 => decode_rgb5a1(u16::from_le_bytes([raw[0], raw[1]])),
            Self::Rgb565 => decode_rgb565(u16::from_le_bytes([raw[0], raw[1]])),
            Self::Rgba4 => decode_rgba4(u16::from_le_bytes([raw[0], raw[1]])),
            Self::Ia8 => [raw[1], raw[1], raw[1], raw[0]],
            Self::Hilo8 => [raw[1], raw[0], 0, 255],
            Self::I8 => [raw[0], raw[0], raw[0], 255],
            Self::A8 => [0, 0, 0, raw[0]],
            Self::Ia4 => {
                let i = expand4(u32::from(raw[0]) >> 4);
                [i, i, i, expand4(u32::from(raw[0]))]
            }
            Self::I4 => {
                let i = expand4(nibble(raw[0], x));
                [i, i, i, 255]
            }
            Self::A4 => [0, 0, 0, expand4(nibble(raw[0], x))],
            Self::Etc1 => {
                let c = etc1_texel(le_u64(raw, 0), x & 3, y & 3);
                [c[0], c[1], c[2], 255]
            }
            Self::Etc1a4 => {
                let a = etc1a4_alpha(le_u64(raw, 0), x & 3, y & 3);
                let c = etc1_texel(le_u64(raw, 8), x & 3, y & 3);
                [c[0], c[1], c[2], a]
            }
        }
    }
}

/// The nibble of a 4-bit texel: the texel with even x (even Morton index) is in bits 3-0.
#[inline]
fn nibble(byte: u8, x: u32) -> u32 {
    if x & 1 == 0 {
        u32::from(byte & 0xF)
    } else {
        u32::from(byte >> 4)
    }
}

#[inline]
fn le_u64(raw: &[u8; 16], at: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&raw[at..at + 8]); // ok: at is 0 or 8, both in range of 16 bytes
    u64::from_le_bytes(b)
}

/// Decodes texel (x, y) (y = memory row, 0 = top) of a level held in `level` (the bytes of the
/// whole level, tiled). Bytes past the end of `level` read as zero.
pub fn texel_from_slice(format: TextureFormat, level: &[u8], x: u32, y: u32, width: u32) -> Rgba {
    let off = format.texel_offset(x, y, width) as usize;
    let n = format.fetch_bytes() as usize;
    let mut raw = [0u8; 16];
    if let Some(src) = level.get(off..) {
        let k = src.len().min(n);
        raw[..k].copy_from_slice(&src[..k]);
    }
    format.fetch(&raw, x, y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pixel::tiling::morton8;

    fn raw(bytes: &[u8]) -> [u8; 16] {
        let mut r = [0u8; 16];
        r[..bytes.len()].copy_from_slice(bytes);
        r
    }

    #[test]
    fn ids_round_trip_and_invalid_ids() {
        for f in TextureFormat::ALL {
            assert_eq!(TextureFormat::from_id(f.id()), Some(f));
        }
        assert_eq!(TextureFormat::from_id(14), None);
        assert_eq!(TextureFormat::from_id(15), None);
        assert_eq!(TextureFormat::from_id(u32::MAX), None);
    }

    #[test]
    fn tile_sizes() {
        let expect = [
            256, 192, 128, 128, 128, 128, 128, 64, 64, 64, 32, 32, 32, 64,
        ];
        for (f, e) in TextureFormat::ALL.iter().zip(expect) {
            assert_eq!(f.tile_bytes(), e, "{f:?}");
        }
        assert_eq!(TextureFormat::Etc1.level_bytes(1024, 1024), 512 * 1024);
        for f in TextureFormat::ALL {
            assert_eq!(f.level_span(64, 32), f.level_bytes(64, 32), "{f:?}");
            assert_eq!(f.level_span(0, 32), 0);
        }
        // 12×4 RGBA8: the second (partial) tile starts at texel 64 and spans 64 texels.
        assert_eq!(TextureFormat::Rgba8.level_span(12, 4), 128 * 4);
        // Every texel offset of odd sizes lies inside the span.
        for f in TextureFormat::ALL {
            for (w, h) in [(12u32, 4u32), (5, 9), (17, 3), (8, 1)] {
                let span = f.level_span(w, h);
                for y in 0..h {
                    for x in 0..w {
                        let end = u64::from(f.texel_offset(x, y, w)) + u64::from(f.fetch_bytes());
                        assert!(end <= span, "{f:?} {w}x{h} ({x},{y})");
                    }
                }
            }
        }
    }

    #[test]
    fn texel_decoding_hand_computed() {
        use TextureFormat::*;
        assert_eq!(
            Rgba8.fetch(&raw(&[0x44, 0x33, 0x22, 0x11]), 0, 0),
            [0x11, 0x22, 0x33, 0x44]
        );
        assert_eq!(
            Rgb8.fetch(&raw(&[0x33, 0x22, 0x11]), 0, 0),
            [0x11, 0x22, 0x33, 255]
        );
        // RGB5A1 0xF821: R 31, G 0, B 16, A 1.
        assert_eq!(Rgb5a1.fetch(&raw(&[0x21, 0xF8]), 0, 0), [255, 0, 0x84, 255]);
        // RGB565 0x07E0: pure green.
        assert_eq!(Rgb565.fetch(&raw(&[0xE0, 0x07]), 0, 0), [0, 255, 0, 255]);
        assert_eq!(
            Rgba4.fetch(&raw(&[0x34, 0x12]), 0, 0),
            [0x11, 0x22, 0x33, 0x44]
        );
        assert_eq!(
            Ia8.fetch(&raw(&[0x80, 0x40]), 0, 0),
            [0x40, 0x40, 0x40, 0x80]
        );
        assert_eq!(Hilo8.fetch(&raw(&[0x12, 0xAB]), 0, 0), [0xAB, 0x12, 0, 255]);
        assert_eq!(I8.fetch(&raw(&[0x7F]), 0, 0), [0x7F, 0x7F, 0x7F, 255]);
        assert_eq!(A8.fetch(&raw(&[0x7F]), 0, 0), [0, 0, 0, 0x7F]);
        assert_eq!(Ia4.fetch(&raw(&[0xA3]), 0, 0), [0xAA, 0xAA, 0xAA, 0x33]);
        // 4-bit: even x in the low nibble.
        assert_eq!(I4.fetch(&raw(&[0xC5]), 0, 0), [0x55, 0x55, 0x55, 255]);
        assert_eq!(I4.fetch(&raw(&[0xC5]), 1, 0), [0xCC, 0xCC, 0xCC, 255]);
        assert_eq!(A4.fetch(&raw(&[0xC5]), 2, 1), [0, 0, 0, 0x55]);
        assert_eq!(A4.fetch(&raw(&[0xC5]), 3, 1), [0, 0, 0, 0xCC]);
    }

    #[test]
    fn texel_offsets_follow_morton_tiling() {
        use TextureFormat::*;
        // 16×16 RGBA8: texel (9, 2) is in tile 1 (256 bytes in), Morton (1, 2) = 9.
        assert_eq!(Rgba8.texel_offset(9, 2, 16), 256 + 9 * 4);
        assert_eq!(Rgb8.texel_offset(9, 2, 16), 192 + 9 * 3);
        // Second tile row of a 16-wide I8 texture.
        assert_eq!(I8.texel_offset(0, 8, 16), 128);
        // I4: Morton index 13 -> byte 6 (odd -> high nibble).
        assert_eq!(I4.texel_offset(3, 2, 8), morton8(3, 2) / 2);
        // ETC1: sub-block order UL, UR, LL, LR inside a tile; 8 bytes each, tile 32 bytes.
        assert_eq!(Etc1.texel_offset(0, 0, 16), 0);
        assert_eq!(Etc1.texel_offset(5, 1, 16), 8);
        assert_eq!(Etc1.texel_offset(2, 6, 16), 16);
        assert_eq!(Etc1.texel_offset(7, 7, 16), 24);
        assert_eq!(Etc1.texel_offset(8, 0, 16), 32);
        assert_eq!(Etc1.texel_offset(0, 8, 16), 64);
        assert_eq!(Etc1a4.texel_offset(7, 7, 16), 48);
        assert_eq!(Etc1a4.texel_offset(8, 8, 16), 64 * 3);
    }

    #[test]
    fn etc1a4_fetch_reads_alpha_then_colour() {
        // Alpha block: nibble for (1, 2) (i = 6) = 0x9; colour block: individual, all base 0,
        // table 0, no index bits: colour = (2, 2, 2).
        let mut r = [0u8; 16];
        r[..8].copy_from_slice(&(0x9u64 << 24).to_le_bytes());
        assert_eq!(TextureFormat::Etc1a4.fetch(&r, 1, 2), [2, 2, 2, 0x99]);
        assert_eq!(TextureFormat::Etc1a4.fetch(&r, 2, 1), [2, 2, 2, 0]);
        // Same texel position in a different tile only uses the low bits.
        assert_eq!(TextureFormat::Etc1a4.fetch(&r, 9, 10), [2, 2, 2, 0x99]);
    }

    #[test]
    fn slice_fetch_out_of_range_is_zero() {
        let level = [0xFFu8; 4];
        assert_eq!(
            texel_from_slice(TextureFormat::Rgba8, &level, 0, 0, 8),
            [255; 4]
        );
        assert_eq!(
            texel_from_slice(TextureFormat::Rgba8, &level, 1, 0, 8),
            [0; 4]
        );
        assert_eq!(
            texel_from_slice(TextureFormat::Etc1, &[], 7, 7, 8),
            [2, 2, 2, 255]
        );
    }
}
