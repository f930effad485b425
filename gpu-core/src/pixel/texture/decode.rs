//! Whole-texture decoding to RGBA8 (for the viewer, thumbnails and [`super::DecodedTexels`]).
//!
//! Stage: tooling / texture cache. Inputs: tiled texture bytes (from a slice or from
//! [`PhysMem`]), size and [`TextureFormat`]; output: row-major RGBA8 with **row 0 = first
//! memory row = top of the image** (texture coordinate v = 1), i.e. upright as the texture is
//! normally drawn. No registers are read.
//!
//! The format dispatch happens once per level: each format gets its own monomorphised loop.

use crate::memory::PhysMem;
use crate::pixel::color::Rgba;

use super::TextureError;
use super::config::{CubeFace, LevelLayout, TextureConfig};
use super::format::{TextureFormat, texel_from_slice};

/// A decoded image: `width × height` RGBA8 pixels, row-major, top row first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DecodedImage {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width · height` pixels, row-major, top row first.
    pub pixels: Vec<Rgba>,
}

impl DecodedImage {
    /// Pixel (x, y) (y = row from the top), or `None` outside the image.
    pub fn get(&self, x: u32, y: u32) -> Option<Rgba> {
        if x >= self.width || y >= self.height {
            return None;
        }
        self.pixels
            .get(y as usize * self.width as usize + x as usize)
            .copied()
    }

    /// The pixels as a flat byte vector R, G, B, A, ... (e.g. for PNG encoding).
    pub fn to_rgba_bytes(&self) -> Vec<u8> {
        self.pixels.iter().flatten().copied().collect()
    }
}

/// Largest side accepted by the decoders (the texture DIM fields are 11 bits).
pub const MAX_DECODE_SIDE: u32 = 2047;

fn decode_impl<const F: u32>(bytes: &[u8], width: u32, height: u32, out: &mut [Rgba]) {
    // ok: F is one of the const ids 0..14 instantiated in `decode_level_into`.
    let format = TextureFormat::ALL[F as usize];
    for (y, row) in out
        .chunks_mut(width.max(1) as usize)
        .take(height as usize)
        .enumerate()
    {
        for (x, px) in row.iter_mut().enumerate() {
            *px = texel_from_slice(format, bytes, x as u32, y as u32, width);
        }
    }
}

/// Decodes a tiled `width × height` level held in `bytes` into `out` (row-major, top row
/// first; at most `out.len()` pixels are written). Missing bytes decode as zero.
pub fn decode_level_into(
    format: TextureFormat,
    bytes: &[u8],
    width: u32,
    height: u32,
    out: &mut [Rgba],
) {
    use TextureFormat::*;
    let f = match format {
        Rgba8 => decode_impl::<0>,
        Rgb8 => decode_impl::<1>,
        Rgb5a1 => decode_impl::<2>,
        Rgb565 => decode_impl::<3>,
        Rgba4 => decode_impl::<4>,
        Ia8 => decode_impl::<5>,
        Hilo8 => decode_impl::<6>,
        I8 => decode_impl::<7>,
        A8 => decode_impl::<8>,
        Ia4 => decode_impl::<9>,
        I4 => decode_impl::<10>,
        A4 => decode_impl::<11>,
        Etc1 => decode_impl::<12>,
        Etc1a4 => decode_impl::<13>,
    };
    f(bytes, width, height, out);
}

/// Decodes a tiled level held in `bytes` into a new image. Sides are limited to
/// [`MAX_DECODE_SIDE`] so that memory stays bounded.
pub fn decode_level(
    format: TextureFormat,
    bytes: &[u8],
    width: u32,
    height: u32,
) -> Result<DecodedImage, TextureError> {
    check_size(width, height)?;
    let mut pixels = vec![[0u8; 4]; width as usize * height as usize];
    decode_level_into(format, bytes, width, height, &mut pixels);
    Ok(DecodedImage {
        width,
        height,
        pixels,
    })
}

fn check_size(width: u32, height: u32) -> Result<(), TextureError> {
    if width == 0 || height == 0 || width > MAX_DECODE_SIDE || height > MAX_DECODE_SIDE {
        return Err(TextureError::EmptySize { width, height });
    }
    Ok(())
}

/// Decodes a tiled image of `format` at physical address `addr` (any address, e.g. the viewer's
/// "show memory as texture").
pub fn decode_at(
    mem: &PhysMem,
    addr: u32,
    width: u32,
    height: u32,
    format: TextureFormat,
) -> Result<DecodedImage, TextureError> {
    check_size(width, height)?;
    let len = format.level_span(width, height);
    let bytes = mem
        .read_vec(addr, len as usize)
        .map_err(|_| TextureError::Unmapped { addr, len })?;
    decode_level(format, &bytes, width, height)
}

/// Decodes mip `level` of `face` (use [`CubeFace::PosX`] for 2D) of a configured texture unit.
/// Levels past the end of the chain are an error.
pub fn decode_texture(
    mem: &PhysMem,
    config: &TextureConfig,
    face: CubeFace,
    level: usize,
) -> Result<DecodedImage, TextureError> {
    let format = config
        .format
        .ok_or(TextureError::InvalidFormat(config.format_id))?;
    check_size(config.width, config.height)?;
    let layout = LevelLayout::new(config.width, config.height, format, config.lod.max_level);
    let info = *layout
        .levels()
        .get(level)
        .ok_or(TextureError::NoSuchLevel {
            level,
            levels: layout.count,
        })?;
    let addr = config.face_address(face).wrapping_add(info.offset);
    decode_at(mem, addr, info.width, info.height, format)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::VRAM;
    use crate::pixel::tiling::{morton8, tiled_index};

    #[test]
    fn decode_untiles_rgba8() {
        // 16×8 RGBA8 whose texel k in memory order has R = k.
        let (w, h) = (16u32, 8u32);
        let mut bytes = vec![0u8; (w * h * 4) as usize];
        for k in 0..(w * h) {
            bytes[(k * 4 + 3) as usize] = k as u8; // byte 3 = R
            bytes[(k * 4) as usize] = 255; // byte 0 = A
        }
        let img = decode_level(TextureFormat::Rgba8, &bytes, w, h).unwrap();
        for y in 0..h {
            for x in 0..w {
                assert_eq!(
                    img.get(x, y).unwrap(),
                    [tiled_index(x, y, w) as u8, 0, 0, 255]
                );
            }
        }
        // Texel (9, 1): tile 1 (index 64) + Morton(1, 1) = 3.
        assert_eq!(img.get(9, 1).unwrap()[0], 64 + morton8(1, 1) as u8);
    }

    #[test]
    fn decode_4bit_nibbles() {
        // 8×8 I4: byte k holds texels 2k (low nibble) and 2k+1 (high nibble).
        let bytes: Vec<u8> = (0..32u8).map(|k| (k & 0xF) | 0xF0).collect();
        let img = decode_level(TextureFormat::I4, &bytes, 8, 8).unwrap();
        assert_eq!(img.get(0, 0).unwrap(), [0, 0, 0, 255]); // Morton 0: byte 0 low = 0
        assert_eq!(img.get(1, 0).unwrap(), [255, 255, 255, 255]); // Morton 1: byte 0 high = F
        assert_eq!(img.get(0, 1).unwrap(), [17, 17, 17, 255]); // Morton 2: byte 1 low = 1
    }

    /// ETC1 colour word, individual mode, every base nibble = `n`, table 0, all indices 0: each
    /// texel decodes to `n·17 + 2`.
    fn flat_etc1(n: u64) -> u64 {
        (n * 0x11_1111) << 40
    }

    #[test]
    fn decode_etc1_block_order_in_tiles() {
        // 16×8: two tiles; blocks are UL, UR, LL, LR within each tile; block b of tile t has n =
        // 4·t + b + 1.
        let mut bytes = Vec::new();
        for t in 0..2u64 {
            for b in 0..4u64 {
                bytes.extend_from_slice(&flat_etc1(4 * t + b + 1).to_le_bytes());
            }
        }
        let img = decode_level(TextureFormat::Etc1, &bytes, 16, 8).unwrap();
        for y in 0..8u32 {
            for x in 0..16u32 {
                let n = 4 * (x / 8) + ((x % 8) / 4) + 2 * (y / 4) + 1;
                let v = (n * 17 + 2) as u8;
                assert_eq!(img.get(x, y).unwrap(), [v, v, v, 255], "({x},{y})");
            }
        }
    }

    #[test]
    fn decode_etc1a4_alpha_and_colour() {
        // 8×8 ETC1A4: 16-byte blocks (alpha word, colour word). Block b: alpha nibbles all
        // b + 8 except texel (1, 2) of block 3 which is 0; colour n = b + 1.
        let mut bytes = Vec::new();
        for b in 0..4u64 {
            let mut alpha = (b + 8) * 0x1111_1111_1111_1111;
            if b == 3 {
                alpha &= !(0xF << (4 * (4 + 2))); // i = 4·px + py = 6
            }
            bytes.extend_from_slice(&alpha.to_le_bytes());
            bytes.extend_from_slice(&flat_etc1(b + 1).to_le_bytes());
        }
        let img = decode_level(TextureFormat::Etc1a4, &bytes, 8, 8).unwrap();
        for y in 0..8u32 {
            for x in 0..8u32 {
                let b = x / 4 + 2 * (y / 4);
                let v = ((b + 1) * 17 + 2) as u8;
                let a = if (b, x % 4, y % 4) == (3, 1, 2) {
                    0
                } else {
                    ((b + 8) * 17) as u8
                };
                assert_eq!(img.get(x, y).unwrap(), [v, v, v, a], "({x},{y})");
            }
        }
    }

    #[test]
    fn decode_from_memory_and_errors() {
        let mut mem = PhysMem::new();
        mem.write(VRAM.base, &[0xFF, 0x00, 0x00, 0x80]).unwrap();
        let img = decode_at(&mem, VRAM.base, 8, 8, TextureFormat::Rgba8).unwrap();
        assert_eq!(img.get(0, 0).unwrap(), [0x80, 0, 0, 0xFF]);
        assert_eq!(img.to_rgba_bytes().len(), 8 * 8 * 4);
        assert!(matches!(
            decode_at(&mem, 0, 8, 8, TextureFormat::Rgba8),
            Err(TextureError::Unmapped { addr: 0, .. })
        ));
        assert!(decode_at(&mem, VRAM.base, 0, 8, TextureFormat::Rgba8).is_err());
        assert!(decode_at(&mem, VRAM.base, 4096, 8, TextureFormat::Rgba8).is_err());
        let mut cfg = TextureConfig::new_2d(VRAM.base, 8, 8, TextureFormat::Rgba8);
        assert!(decode_texture(&mem, &cfg, CubeFace::PosX, 0).is_ok());
        assert!(matches!(
            decode_texture(&mem, &cfg, CubeFace::PosX, 1),
            Err(TextureError::NoSuchLevel {
                level: 1,
                levels: 1
            })
        ));
        cfg.format = None;
        cfg.format_id = 14;
        assert_eq!(
            decode_texture(&mem, &cfg, CubeFace::PosX, 0),
            Err(TextureError::InvalidFormat(14))
        );
    }
}
