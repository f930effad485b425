//! ETC1 and ETC1A4 block decoding (`pica-raster.md` §5.4).
//!
//! Stage: texel decode, used by the texture fetchers and the whole-texture decoder. Input: the
//! 8-byte colour block (and for ETC1A4 the 8-byte alpha block) of one 4×4 sub-block, read as
//! **little-endian u64** words; output: RGB (and alpha) of one texel.
//!
//! // HW: \[C\] src/video_core/texture/etc1.cpp and \[P\] src/core/renderer_gl/etc1.cpp decode
//! identically; the bit numbering below equals the Khronos ETC1 specification once the 8 bytes
//! are read little-endian (the PICA stores each block byte-reversed relative to `.pkm` files).
//!
//! Colour word bits: 0-15 index LSBs, 16-31 index MSBs (texel `i = 4·px + py`, column-major),
//! bit 32 flip, bit 33 differential mode, 34-36 table of sub-block 2, 37-39 table of sub-block 1,
//! 40-63 base colours (individual: 4+4 bits per channel; differential: 5-bit base + signed 3-bit
//! delta). Alpha word: the nibble at bit `4·(4·px + py)` (column-major), expanded ×17.

use crate::pixel::color::{expand4, expand5};

/// ETC1 modifier table: `(small, large)` intensity offsets for table index 0-7.
/// // HW: \[C\], \[P\] and the Khronos ETC1 specification agree.
pub const ETC1_MODIFIERS: [[i32; 2]; 8] = [
    [2, 8],
    [5, 17],
    [9, 29],
    [13, 42],
    [18, 60],
    [24, 80],
    [33, 106],
    [47, 183],
];

/// Decodes texel (px, py) (each 0-3, py = row in memory order, 0 = top) of an ETC1 colour block
/// given as a little-endian u64. Returns (R, G, B).
#[inline]
pub fn etc1_texel(block: u64, px: u32, py: u32) -> [u8; 3] {
    let px = px & 3;
    let py = py & 3;
    let i = 4 * px + py;
    let lsb = (block >> i) & 1;
    let msb = (block >> (16 + i)) & 1;
    let flip = (block >> 32) & 1 != 0;
    let differential = (block >> 33) & 1 != 0;
    // Sub-block 2 is the right half (flip = 0) or the bottom half (flip = 1).
    let second = if flip { py >= 2 } else { px >= 2 };
    let table = if second {
        (block >> 34) & 7
    } else {
        (block >> 37) & 7
    };
    let base = base_colour(block, differential, second);
    // ok: `table` is a 3-bit field (< 8) and `lsb` a single bit (< 2).
    let magnitude = ETC1_MODIFIERS[table as usize][lsb as usize];
    let modifier = if msb != 0 { -magnitude } else { magnitude };
    [
        (i32::from(base[0]) + modifier).clamp(0, 255) as u8,
        (i32::from(base[1]) + modifier).clamp(0, 255) as u8,
        (i32::from(base[2]) + modifier).clamp(0, 255) as u8,
    ]
}

/// Base colour (8-bit per channel) of sub-block 1 or 2.
#[inline]
fn base_colour(block: u64, differential: bool, second: bool) -> [u8; 3] {
    // Channel field positions: R at 56, G at 48, B at 40 (each an 8-bit group of the word).
    let mut out = [0u8; 3];
    for (c, shift) in [56u32, 48, 40].into_iter().enumerate() {
        let group = ((block >> shift) & 0xFF) as u32;
        out[c] = if differential {
            let base = group >> 3;
            // Signed 3-bit delta in the low bits of the group.
            let delta = ((group & 7) as i32) << 29 >> 29;
            let v = if second {
                (base as i32 + delta) as u32
            } else {
                base
            };
            // UNVERIFIED: a base + delta outside 0..31 is invalid ETC1 data; we wrap it to 5 bits
            // (a 5-bit adder) where Citra feeds the out-of-range int to its 5→8 expansion. The
            // alternative is clamping to 0..31.
            expand5(v & 0x1F)
        } else if second {
            expand4(group & 0xF)
        } else {
            expand4(group >> 4)
        };
    }
    out
}

/// Alpha (8-bit) of texel (px, py) of an ETC1A4 alpha block given as a little-endian u64.
#[inline]
pub fn etc1a4_alpha(alpha_block: u64, px: u32, py: u32) -> u8 {
    let i = 4 * (px & 3) + (py & 3);
    expand4(((alpha_block >> (4 * i)) & 0xF) as u32)
}

/// Decodes a whole 4×4 ETC1 colour block into `out[py][px]` (alpha set to 255).
pub fn etc1_block(block: u64, out: &mut [[[u8; 4]; 4]; 4]) {
    for (py, row) in out.iter_mut().enumerate() {
        for (px, texel) in row.iter_mut().enumerate() {
            let c = etc1_texel(block, px as u32, py as u32);
            *texel = [c[0], c[1], c[2], 255];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a colour word from fields (all bit positions per the module doc).
    fn word(lsb: u16, msb: u16, flip: bool, diff: bool, t1: u64, t2: u64, colours: u64) -> u64 {
        u64::from(lsb)
            | (u64::from(msb) << 16)
            | (u64::from(flip) << 32)
            | (u64::from(diff) << 33)
            | (t2 << 34)
            | (t1 << 37)
            | (colours << 40)
    }

    #[test]
    fn individual_mode_no_flip() {
        // R1=0x8 R2=0x2, G1=0x4 G2=0x6, B1=0xA B2=0x1 -> bits 63..40 = R1 R2 G1 G2 B1 B2.
        let colours = 0x82_46_A1;
        // Table 1 = 0 (2, 8), table 2 = 7 (47, 183). Texel (0,0): index 0 -> lsb 0, msb 0: +2.
        // Texel (1,0) (i = 4): lsb 1 -> +8. Texel (0,1) (i = 1): msb 1 -> −2.
        // Texel (2,0) (i = 8, sub-block 2): lsb 1 msb 1 -> −183. Texel (3,3) (i = 15): +47.
        let lsb = (1 << 4) | (1 << 8);
        let msb = (1 << 1) | (1 << 8);
        let w = word(lsb, msb, false, false, 0, 7, colours);
        // Sub-block 1 base: (0x88, 0x44, 0xAA); sub-block 2 base: (0x22, 0x66, 0x11).
        assert_eq!(etc1_texel(w, 0, 0), [0x8A, 0x46, 0xAC]);
        assert_eq!(etc1_texel(w, 1, 0), [0x90, 0x4C, 0xB2]);
        assert_eq!(etc1_texel(w, 0, 1), [0x86, 0x42, 0xA8]);
        assert_eq!(etc1_texel(w, 2, 0), [0, 0, 0]); // 0x22 − 183 clamps to 0
        assert_eq!(etc1_texel(w, 3, 3), [0x22 + 47, 0x66 + 47, 0x11 + 47]);
        // Rows 2-3 of the left columns still belong to sub-block 1 without flip.
        assert_eq!(etc1_texel(w, 1, 3), [0x8A, 0x46, 0xAC]);
    }

    #[test]
    fn individual_mode_flip_splits_by_row() {
        let colours = 0x82_46_A1;
        let w = word(0, 0, true, false, 1, 2, colours);
        // Top rows: sub-block 1, table 1 small = +5. Bottom rows: sub-block 2, table 2 small = +9.
        assert_eq!(etc1_texel(w, 3, 0), [0x88 + 5, 0x44 + 5, 0xAA + 5]);
        assert_eq!(etc1_texel(w, 0, 1), [0x88 + 5, 0x44 + 5, 0xAA + 5]);
        assert_eq!(etc1_texel(w, 0, 2), [0x22 + 9, 0x66 + 9, 0x11 + 9]);
        assert_eq!(etc1_texel(w, 3, 3), [0x22 + 9, 0x66 + 9, 0x11 + 9]);
    }

    #[test]
    fn differential_mode() {
        // R: base 0b10000 (16), delta −1 (0b111) -> 15. G: base 1, delta +3 -> 4.
        // B: base 31, delta 0 -> 31. Group = base << 3 | delta.
        let r = (16 << 3) | 0b111;
        let g = (1 << 3) | 0b011;
        let b = 31 << 3;
        let colours = (r << 16) | (g << 8) | b;
        let w = word(0, 0, false, true, 0, 0, colours);
        // Sub-block 1: expand5(16) = 0x84, expand5(1) = 0x08, expand5(31) = 0xFF; modifier +2.
        assert_eq!(etc1_texel(w, 0, 0), [0x86, 0x0A, 0xFF]);
        // Sub-block 2: expand5(15) = 0x7B, expand5(4) = 0x21, 0xFF; +2.
        assert_eq!(etc1_texel(w, 2, 0), [0x7D, 0x23, 0xFF]);
        // Flip: sub-block 2 is the bottom half.
        let wf = word(0, 0, true, true, 0, 0, colours);
        assert_eq!(etc1_texel(wf, 3, 1), [0x86, 0x0A, 0xFF]);
        assert_eq!(etc1_texel(wf, 0, 2), [0x7D, 0x23, 0xFF]);
    }

    #[test]
    fn alpha_nibbles_are_column_major() {
        // Nibble i = 4·px + py holds value i.
        let mut a = 0u64;
        for i in 0..16u64 {
            a |= i << (4 * i);
        }
        assert_eq!(etc1a4_alpha(a, 0, 0), 0);
        assert_eq!(etc1a4_alpha(a, 0, 1), 17); // i = 1
        assert_eq!(etc1a4_alpha(a, 1, 0), 4 * 17); // i = 4
        assert_eq!(etc1a4_alpha(a, 3, 3), 255); // i = 15
    }

    #[test]
    fn whole_block_matches_per_texel() {
        let w = 0x1234_5678_9ABC_DEF0u64;
        let mut out = [[[0u8; 4]; 4]; 4];
        etc1_block(w, &mut out);
        for py in 0..4 {
            for px in 0..4 {
                let c = etc1_texel(w, px, py);
                assert_eq!(out[py as usize][px as usize], [c[0], c[1], c[2], 255]);
            }
        }
    }
}
