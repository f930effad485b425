//! Pixel formats of the colour buffer, the depth buffer and the external engines
//! (`pica-raster.md` §0.3, §9.7, §10.1).
//!
//! Stage: shared helper of the fragment stage (colour/depth reads and writes), the external
//! engines (memory fill, display transfer) and LCD scan-out. Inputs: raw pixel bytes exactly as
//! they sit in memory; outputs: `[u8; 4]` RGBA colours, integer depth and stencil values (and the
//! reverse). Registers whose fields select these formats: 0x116 DEPTHBUFFER_FORMAT, 0x117
//! COLORBUFFER_FORMAT (PICA colour ids), and the external ids of the display-transfer flags
//! (0x10400C10) and the LCD framebuffer format (PDC +0x70).
//!
//! Byte order in memory (all multi-byte words little-endian) // HW: \[C\] src/common/color.h,
//! \[3DB-I\] "GPU/Internal Registers":
//!
//! | Format | Bytes | Layout |
//! |---|---|---|
//! | RGBA8  | 4 | byte0 A, byte1 B, byte2 G, byte3 R (the u32 is `R<<24 | G<<16 | B<<8 | A`) |
//! | RGB8   | 3 | byte0 B, byte1 G, byte2 R |
//! | RGB5A1 | 2 | u16: R bits 15-11, G 10-6, B 5-1, A bit 0 |
//! | RGB565 | 2 | u16: R bits 15-11, G 10-5, B 4-0 |
//! | RGBA4  | 2 | u16: R bits 15-12, G 11-8, B 7-4, A 3-0 |
//! | D16    | 2 | u16 depth |
//! | D24    | 3 | 24-bit depth, little-endian |
//! | D24S8  | 4 | bytes 0-2 depth (LE), byte 3 stencil |
//!
//! Decoding expands narrow channels to 8 bits by bit replication (5→8 `(v<<3)|(v>>2)`, 6→8
//! `(v<<2)|(v>>4)`, 4→8 `v·17`, 1→8 `0 or 255`); encoding truncates (`c >> (8 − bits)`)
//! // HW: \[C\] color.h and framebuffer.cpp; display-transfer hardware tests agree (hw-expectations).

/// A decoded colour: R, G, B, A, each an unsigned 8-bit value (0 = 0.0, 255 = 1.0).
pub type Rgba = [u8; 4];

/// Expands a 1-bit channel to 8 bits: 0 → 0, 1 → 255.
#[inline]
pub const fn expand1(v: u32) -> u8 {
    if v & 1 != 0 { 255 } else { 0 }
}

/// Expands a 4-bit channel to 8 bits (`v·17`, i.e. the nibble replicated).
#[inline]
pub const fn expand4(v: u32) -> u8 {
    ((v & 0xF) * 17) as u8
}

/// Expands a 5-bit channel to 8 bits: `(v << 3) | (v >> 2)`.
#[inline]
pub const fn expand5(v: u32) -> u8 {
    let v = v & 0x1F;
    ((v << 3) | (v >> 2)) as u8
}

/// Expands a 6-bit channel to 8 bits: `(v << 2) | (v >> 4)`.
#[inline]
pub const fn expand6(v: u32) -> u8 {
    let v = v & 0x3F;
    ((v << 2) | (v >> 4)) as u8
}

/// Decodes an RGBA8 pixel from its 4 memory bytes (A, B, G, R).
#[inline]
pub const fn decode_rgba8(b: [u8; 4]) -> Rgba {
    [b[3], b[2], b[1], b[0]]
}

/// Decodes an RGB8 pixel from its 3 memory bytes (B, G, R); alpha is 255.
#[inline]
pub const fn decode_rgb8(b: [u8; 3]) -> Rgba {
    [b[2], b[1], b[0], 255]
}

/// Decodes an RGB5A1 pixel from its little-endian 16-bit word.
#[inline]
pub const fn decode_rgb5a1(v: u16) -> Rgba {
    let v = v as u32;
    [
        expand5(v >> 11),
        expand5(v >> 6),
        expand5(v >> 1),
        expand1(v),
    ]
}

/// Decodes an RGB565 pixel from its little-endian 16-bit word; alpha is 255.
#[inline]
pub const fn decode_rgb565(v: u16) -> Rgba {
    let v = v as u32;
    [expand5(v >> 11), expand6(v >> 5), expand5(v), 255]
}

/// Decodes an RGBA4 pixel from its little-endian 16-bit word.
#[inline]
pub const fn decode_rgba4(v: u16) -> Rgba {
    let v = v as u32;
    [
        expand4(v >> 12),
        expand4(v >> 8),
        expand4(v >> 4),
        expand4(v),
    ]
}

/// Encodes RGBA to the 4 RGBA8 memory bytes (A, B, G, R).
#[inline]
pub const fn encode_rgba8(c: Rgba) -> [u8; 4] {
    [c[3], c[2], c[1], c[0]]
}

/// Encodes RGB to the 3 RGB8 memory bytes (B, G, R); alpha is dropped.
#[inline]
pub const fn encode_rgb8(c: Rgba) -> [u8; 3] {
    [c[2], c[1], c[0]]
}

/// Encodes RGBA to an RGB5A1 word by truncation (`c >> 3`, `a >> 7`).
#[inline]
pub const fn encode_rgb5a1(c: Rgba) -> u16 {
    (((c[0] as u16) >> 3) << 11)
        | (((c[1] as u16) >> 3) << 6)
        | (((c[2] as u16) >> 3) << 1)
        | ((c[3] as u16) >> 7)
}

/// Encodes RGB to an RGB565 word by truncation (`r, b >> 3`, `g >> 2`); alpha is dropped.
#[inline]
pub const fn encode_rgb565(c: Rgba) -> u16 {
    (((c[0] as u16) >> 3) << 11) | (((c[1] as u16) >> 2) << 5) | ((c[2] as u16) >> 3)
}

/// Encodes RGBA to an RGBA4 word by truncation (`c >> 4`).
#[inline]
pub const fn encode_rgba4(c: Rgba) -> u16 {
    (((c[0] as u16) >> 4) << 12)
        | (((c[1] as u16) >> 4) << 8)
        | (((c[2] as u16) >> 4) << 4)
        | ((c[3] as u16) >> 4)
}

/// A colour-buffer / framebuffer pixel format.
///
/// The PICA colour buffer (reg 0x117 bits 16-18) and the external engines (display transfer,
/// LCD) number these formats differently: ids 2 and 3 are swapped. Use
/// [`ColorFormat::from_pica_id`] or [`ColorFormat::from_external_id`] accordingly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ColorFormat {
    /// 32-bit: bytes A, B, G, R.
    Rgba8,
    /// 24-bit: bytes B, G, R (alpha reads as 255).
    Rgb8,
    /// 16-bit: R5 G5 B5 A1 (A in bit 0).
    Rgb5a1,
    /// 16-bit: R5 G6 B5 (alpha reads as 255).
    Rgb565,
    /// 16-bit: R4 G4 B4 A4 (A in bits 0-3).
    Rgba4,
}

impl ColorFormat {
    /// All formats, in PICA id order.
    pub const ALL: [ColorFormat; 5] = [
        ColorFormat::Rgba8,
        ColorFormat::Rgb8,
        ColorFormat::Rgb5a1,
        ColorFormat::Rgb565,
        ColorFormat::Rgba4,
    ];

    /// Format from the PICA colour-buffer id (reg 0x117 bits 16-18: 0 RGBA8, 1 RGB8, 2 RGB5A1,
    /// 3 RGB565, 4 RGBA4); `None` for 5-7 (unknown).
    pub const fn from_pica_id(id: u32) -> Option<Self> {
        match id {
            0 => Some(Self::Rgba8),
            1 => Some(Self::Rgb8),
            2 => Some(Self::Rgb5a1),
            3 => Some(Self::Rgb565),
            4 => Some(Self::Rgba4),
            _ => None,
        }
    }

    /// Format from the external id used by display transfer and the LCD (0 RGBA8, 1 RGB8,
    /// 2 RGB565, 3 RGB5A1, 4 RGBA4); `None` for 5-7 (3dbrew: blocked by GSP).
    pub const fn from_external_id(id: u32) -> Option<Self> {
        match id {
            0 => Some(Self::Rgba8),
            1 => Some(Self::Rgb8),
            2 => Some(Self::Rgb565),
            3 => Some(Self::Rgb5a1),
            4 => Some(Self::Rgba4),
            _ => None,
        }
    }

    /// The PICA colour-buffer id (inverse of [`ColorFormat::from_pica_id`]).
    pub const fn pica_id(self) -> u32 {
        match self {
            Self::Rgba8 => 0,
            Self::Rgb8 => 1,
            Self::Rgb5a1 => 2,
            Self::Rgb565 => 3,
            Self::Rgba4 => 4,
        }
    }

    /// The external id (inverse of [`ColorFormat::from_external_id`]).
    pub const fn external_id(self) -> u32 {
        match self {
            Self::Rgba8 => 0,
            Self::Rgb8 => 1,
            Self::Rgb565 => 2,
            Self::Rgb5a1 => 3,
            Self::Rgba4 => 4,
        }
    }

    /// Bytes per pixel: 4, 3 or 2.
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            Self::Rgba8 => 4,
            Self::Rgb8 => 3,
            Self::Rgb5a1 | Self::Rgb565 | Self::Rgba4 => 2,
        }
    }

    /// Short upper-case name ("RGBA8", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Rgba8 => "RGBA8",
            Self::Rgb8 => "RGB8",
            Self::Rgb5a1 => "RGB5A1",
            Self::Rgb565 => "RGB565",
            Self::Rgba4 => "RGBA4",
        }
    }

    /// True if the format stores alpha (RGB8 and RGB565 read back A = 255).
    pub const fn has_alpha(self) -> bool {
        !matches!(self, Self::Rgb8 | Self::Rgb565)
    }

    /// Decodes one pixel from its memory bytes. `bytes` should hold at least
    /// [`ColorFormat::bytes_per_pixel`] bytes; missing bytes read as zero, extra bytes are ignored.
    #[inline]
    pub fn decode(self, bytes: &[u8]) -> Rgba {
        let mut b = [0u8; 4];
        let n = bytes.len().min(4);
        b[..n].copy_from_slice(&bytes[..n]);
        self.decode_word(b)
    }

    /// Decodes one pixel from its first [`ColorFormat::bytes_per_pixel`] memory bytes held in a
    /// 4-byte array (the rest are ignored).
    #[inline]
    pub const fn decode_word(self, b: [u8; 4]) -> Rgba {
        let h = u16::from_le_bytes([b[0], b[1]]);
        match self {
            Self::Rgba8 => decode_rgba8(b),
            Self::Rgb8 => decode_rgb8([b[0], b[1], b[2]]),
            Self::Rgb5a1 => decode_rgb5a1(h),
            Self::Rgb565 => decode_rgb565(h),
            Self::Rgba4 => decode_rgba4(h),
        }
    }

    /// Encodes one pixel; the first [`ColorFormat::bytes_per_pixel`] bytes of the result are the
    /// memory bytes, the rest are zero.
    #[inline]
    pub const fn encode_word(self, c: Rgba) -> [u8; 4] {
        match self {
            Self::Rgba8 => encode_rgba8(c),
            Self::Rgb8 => {
                let b = encode_rgb8(c);
                [b[0], b[1], b[2], 0]
            }
            Self::Rgb5a1 => {
                let b = encode_rgb5a1(c).to_le_bytes();
                [b[0], b[1], 0, 0]
            }
            Self::Rgb565 => {
                let b = encode_rgb565(c).to_le_bytes();
                [b[0], b[1], 0, 0]
            }
            Self::Rgba4 => {
                let b = encode_rgba4(c).to_le_bytes();
                [b[0], b[1], 0, 0]
            }
        }
    }

    /// Encodes one pixel into `out`, writing `min(out.len(), bytes_per_pixel)` bytes.
    #[inline]
    pub fn encode(self, c: Rgba, out: &mut [u8]) {
        let w = self.encode_word(c);
        let n = out.len().min(self.bytes_per_pixel());
        out[..n].copy_from_slice(&w[..n]);
    }
}

/// A depth-buffer format (reg 0x116 DEPTHBUFFER_FORMAT bits 0-1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum DepthFormat {
    /// 16-bit depth, little-endian u16 (id 0).
    D16,
    /// 24-bit depth, 3 bytes little-endian (id 2).
    D24,
    /// 24-bit depth in bytes 0-2 (little-endian) and 8-bit stencil in byte 3 (id 3).
    D24S8,
}

impl DepthFormat {
    /// Format from reg 0x116 bits 0-1: 0 D16, 2 D24, 3 D24S8; `None` for 1, whose meaning is
    /// unknown (Citra treats it as unimplemented) and for values above 3.
    pub const fn from_id(id: u32) -> Option<Self> {
        match id {
            0 => Some(Self::D16),
            2 => Some(Self::D24),
            3 => Some(Self::D24S8),
            _ => None,
        }
    }

    /// The register id (inverse of [`DepthFormat::from_id`]).
    pub const fn id(self) -> u32 {
        match self {
            Self::D16 => 0,
            Self::D24 => 2,
            Self::D24S8 => 3,
        }
    }

    /// Bytes per pixel: 2, 3 or 4.
    pub const fn bytes_per_pixel(self) -> usize {
        match self {
            Self::D16 => 2,
            Self::D24 => 3,
            Self::D24S8 => 4,
        }
    }

    /// Number of depth bits: 16 or 24.
    pub const fn depth_bits(self) -> u32 {
        match self {
            Self::D16 => 16,
            Self::D24 | Self::D24S8 => 24,
        }
    }

    /// The largest depth value, `2^bits − 1` (depth 1.0).
    pub const fn max_depth(self) -> u32 {
        (1 << self.depth_bits()) - 1
    }

    /// True if the format has a stencil byte (only D24S8).
    pub const fn has_stencil(self) -> bool {
        matches!(self, Self::D24S8)
    }

    /// Short upper-case name ("D16", ...).
    pub const fn name(self) -> &'static str {
        match self {
            Self::D16 => "D16",
            Self::D24 => "D24",
            Self::D24S8 => "D24S8",
        }
    }

    /// Reads the depth value (unsigned integer, 16 or 24 bits) from the pixel's memory bytes held
    /// in a 4-byte array (bytes past [`DepthFormat::bytes_per_pixel`] are ignored).
    #[inline]
    pub const fn decode_depth(self, b: [u8; 4]) -> u32 {
        match self {
            Self::D16 => u16::from_le_bytes([b[0], b[1]]) as u32,
            Self::D24 | Self::D24S8 => u32::from_le_bytes([b[0], b[1], b[2], 0]),
        }
    }

    /// Reads the stencil value (byte 3 for D24S8; 0 for formats without stencil).
    #[inline]
    pub const fn decode_stencil(self, b: [u8; 4]) -> u8 {
        match self {
            Self::D24S8 => b[3],
            Self::D16 | Self::D24 => 0,
        }
    }

    /// Stores `depth` (masked to the format's bits) into the pixel bytes, leaving the stencil
    /// byte of D24S8 untouched.
    #[inline]
    pub const fn encode_depth(self, b: [u8; 4], depth: u32) -> [u8; 4] {
        let d = depth.to_le_bytes();
        match self {
            Self::D16 => [d[0], d[1], b[2], b[3]],
            Self::D24 | Self::D24S8 => [d[0], d[1], d[2], b[3]],
        }
    }

    /// Stores `stencil` into byte 3 (D24S8 only; other formats are returned unchanged), leaving
    /// the depth bytes untouched.
    #[inline]
    pub const fn encode_stencil(self, b: [u8; 4], stencil: u8) -> [u8; 4] {
        match self {
            Self::D24S8 => [b[0], b[1], b[2], stencil],
            Self::D16 | Self::D24 => b,
        }
    }

    /// Reads the depth from a byte slice (missing bytes read as zero).
    #[inline]
    pub fn read_depth(self, bytes: &[u8]) -> u32 {
        self.decode_depth(pad4(bytes))
    }

    /// Reads the stencil from a byte slice (missing bytes read as zero).
    #[inline]
    pub fn read_stencil(self, bytes: &[u8]) -> u8 {
        self.decode_stencil(pad4(bytes))
    }

    /// Writes `depth` into the first bytes of `out` (2 or 3 bytes, fewer if `out` is shorter);
    /// the stencil byte is not touched.
    #[inline]
    pub fn write_depth(self, out: &mut [u8], depth: u32) {
        let n = out.len().min(self.depth_bits() as usize / 8);
        out[..n].copy_from_slice(&depth.to_le_bytes()[..n]);
    }

    /// Writes `stencil` into byte 3 of `out` (D24S8 only; nothing otherwise or if `out` is short).
    #[inline]
    pub fn write_stencil(self, out: &mut [u8], stencil: u8) {
        if self.has_stencil()
            && let Some(b) = out.get_mut(3)
        {
            *b = stencil;
        }
    }
}

#[inline]
fn pad4(bytes: &[u8]) -> [u8; 4] {
    let mut b = [0u8; 4];
    let n = bytes.len().min(4);
    b[..n].copy_from_slice(&bytes[..n]);
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansions_replicate_bits() {
        assert_eq!(expand5(0), 0);
        assert_eq!(expand5(1), 8);
        assert_eq!(expand5(0x10), 0x84);
        assert_eq!(expand5(0x1F), 255);
        assert_eq!(expand6(1), 4);
        assert_eq!(expand6(0x20), 0x82);
        assert_eq!(expand6(0x3F), 255);
        assert_eq!(expand4(0xA), 0xAA);
        assert_eq!(expand1(1), 255);
        assert_eq!(expand1(0), 0);
    }

    #[test]
    fn rgba8_byte_order_is_abgr() {
        // R=0x11 G=0x22 B=0x33 A=0x44 sits in memory as 44 33 22 11.
        let c = [0x11, 0x22, 0x33, 0x44];
        assert_eq!(ColorFormat::Rgba8.encode_word(c), [0x44, 0x33, 0x22, 0x11]);
        assert_eq!(ColorFormat::Rgba8.decode(&[0x44, 0x33, 0x22, 0x11]), c);
        // The little-endian u32 of those bytes is R<<24|G<<16|B<<8|A.
        assert_eq!(u32::from_le_bytes([0x44, 0x33, 0x22, 0x11]), 0x1122_3344);
    }

    #[test]
    fn rgb8_byte_order_is_bgr() {
        assert_eq!(
            ColorFormat::Rgb8.decode(&[0x33, 0x22, 0x11]),
            [0x11, 0x22, 0x33, 255]
        );
        let mut out = [0u8; 3];
        ColorFormat::Rgb8.encode([0x11, 0x22, 0x33, 0x99], &mut out);
        assert_eq!(out, [0x33, 0x22, 0x11]);
    }

    #[test]
    fn sixteen_bit_formats_hand_computed() {
        // RGB565: R=0b10000 G=0b100000 B=0b00001 -> 0x8401.
        assert_eq!(
            ColorFormat::Rgb565.decode(&0x8401u16.to_le_bytes()),
            [0x84, 0x82, 0x08, 255]
        );
        // RGB5A1: R=31 G=0 B=16 A=1 -> 1111 1000 0010 0001 = 0xF821.
        assert_eq!(decode_rgb5a1(0xF821), [255, 0, 0x84, 255]);
        assert_eq!(encode_rgb5a1([255, 0, 0x84, 255]), 0xF821);
        assert_eq!(encode_rgb5a1([255, 0, 0x84, 127]), 0xF820);
        // RGBA4: 0x1234 -> 0x11 0x22 0x33 0x44.
        assert_eq!(decode_rgba4(0x1234), [0x11, 0x22, 0x33, 0x44]);
        assert_eq!(encode_rgba4([0x1F, 0x2F, 0x3F, 0x4F]), 0x1234);
        // Truncating encode: 0xFF, 0x07 (g 6 bits: 1), 0x07.
        assert_eq!(encode_rgb565([0xFF, 0x07, 0x07, 0]), 0xF820);
    }

    #[test]
    fn encode_then_decode_is_identity_on_representable_values() {
        for f in ColorFormat::ALL {
            for v in 0..=255u8 {
                let c = [v, v.wrapping_mul(3), v.wrapping_mul(7), v.wrapping_mul(11)];
                let once = f.decode_word(f.encode_word(c));
                let twice = f.decode_word(f.encode_word(once));
                assert_eq!(once, twice, "{f:?} {c:?}");
            }
        }
    }

    #[test]
    fn format_ids_differ_between_pica_and_external() {
        assert_eq!(ColorFormat::from_pica_id(2), Some(ColorFormat::Rgb5a1));
        assert_eq!(ColorFormat::from_external_id(2), Some(ColorFormat::Rgb565));
        assert_eq!(ColorFormat::from_pica_id(5), None);
        assert_eq!(ColorFormat::from_external_id(7), None);
        for f in ColorFormat::ALL {
            assert_eq!(ColorFormat::from_pica_id(f.pica_id()), Some(f));
            assert_eq!(ColorFormat::from_external_id(f.external_id()), Some(f));
        }
    }

    #[test]
    fn short_slices_never_panic() {
        assert_eq!(ColorFormat::Rgba8.decode(&[1]), [0, 0, 0, 1]);
        let mut out = [0u8; 1];
        ColorFormat::Rgba8.encode([1, 2, 3, 4], &mut out);
        assert_eq!(out, [4]);
        assert_eq!(DepthFormat::D24S8.read_depth(&[1, 2]), 0x0201);
        DepthFormat::D24S8.write_stencil(&mut out, 9);
    }

    #[test]
    fn depth_formats() {
        assert_eq!(DepthFormat::from_id(1), None);
        let b = [0x11, 0x22, 0x33, 0x44];
        assert_eq!(DepthFormat::D16.decode_depth(b), 0x2211);
        assert_eq!(DepthFormat::D24.decode_depth(b), 0x33_2211);
        assert_eq!(DepthFormat::D24S8.decode_depth(b), 0x33_2211);
        assert_eq!(DepthFormat::D24S8.decode_stencil(b), 0x44);
        assert_eq!(DepthFormat::D24.decode_stencil(b), 0);
        // Depth writes keep the stencil byte, stencil writes keep the depth bytes.
        assert_eq!(
            DepthFormat::D24S8.encode_depth(b, 0xAABBCC),
            [0xCC, 0xBB, 0xAA, 0x44]
        );
        assert_eq!(
            DepthFormat::D24S8.encode_stencil(b, 0x99),
            [0x11, 0x22, 0x33, 0x99]
        );
        assert_eq!(DepthFormat::D16.max_depth(), 0xFFFF);
        assert_eq!(DepthFormat::D24S8.max_depth(), 0xFF_FFFF);
        let mut px = [0u8, 0, 0, 7];
        DepthFormat::D24S8.write_depth(&mut px, 0x123456);
        assert_eq!(px, [0x56, 0x34, 0x12, 7]);
    }
}
