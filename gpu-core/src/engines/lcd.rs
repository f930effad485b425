//! LCD framebuffer configuration and scan-out (`pica-raster.md` §10.1, §10.6, pitfall 10;
//! `pica-core.md` §9.5).
//!
//! Stage: presentation, after the display transfer has written the LCD framebuffers. Inputs:
//! the PDC register blocks (top screen PA 0x10400400-0x104004FF, bottom 0x10400500-0x104005FF)
//! decoded into [`LcdFramebufferConfig`], the LCD colour-fill registers (PA 0x10202204 top,
//! 0x10202A04 bottom) as [`LcdColorFill`], and [`PhysMem`]. Output: an **upright** RGBA8 image
//! as a person holding the console sees the screen — 400 × 240 (top) or 320 × 240 (bottom),
//! row 0 at the top, alpha always 255.
//!
//! Framebuffer layout // HW: \[3DB-E\] "the first pixel is in the bottom-left corner", \[C\]
//! renderer_opengl.cpp draws a rotated quad: the framebuffer is linear with 240 pixels per
//! memory row; memory row r is screen column r (left → right) and pixel p of a row is screen
//! row 239 − p. Rows are `stride` bytes apart (PDC +0x90). Hence screen pixel (sx, sy), sy
//! counted from the top, is at `base + sx · stride + (239 − sy) · Bpp`.
//!
//! PDC registers used (offsets within a block): +0x5C size (width 0-15, height 16-31;
//! informational — the scan-out uses the physical panel size), +0x68/+0x6C framebuffer A first /
//! second address (full PA, **not** >> 3; left eye on the top screen), +0x70 format (bits 0-2
//! external colour format, bits 4-5 interlace mode), +0x78 bit 0 which address is displayed
//! (0 first, 1 second), +0x90 stride in bytes, +0x94/+0x98 framebuffer B (right eye) first /
//! second address.

use crate::memory::PhysMem;
use crate::pixel::color::{ColorFormat, Rgba};
use crate::pixel::texture::DecodedImage;

/// Pixels along the short side of both panels (one LCD framebuffer memory row).
pub const LCD_ROW_PIXELS: u32 = 240;

/// PDC register offsets (bytes within a screen's block).
pub mod pdc {
    /// Framebuffer size: width bits 0-15, height bits 16-31.
    pub const SIZE: u32 = 0x5C;
    /// Framebuffer A (left eye), first address (full PA).
    pub const A_FIRST: u32 = 0x68;
    /// Framebuffer A, second address.
    pub const A_SECOND: u32 = 0x6C;
    /// Format: bits 0-2 colour format (external ids), bits 4-5 interlace mode.
    pub const FORMAT: u32 = 0x70;
    /// Bit 0: which address pair is displayed (0 first, 1 second).
    pub const SELECT: u32 = 0x78;
    /// Stride in bytes between framebuffer memory rows.
    pub const STRIDE: u32 = 0x90;
    /// Framebuffer B (right eye), first address.
    pub const B_FIRST: u32 = 0x94;
    /// Framebuffer B, second address.
    pub const B_SECOND: u32 = 0x98;
}

/// One of the two screens.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Screen {
    /// Top screen (400 × 240, stereoscopic).
    Top,
    /// Bottom screen (320 × 240, touch).
    Bottom,
}

impl Screen {
    /// Physical address of the screen's PDC register block.
    pub const fn pdc_base(self) -> u32 {
        match self {
            Self::Top => 0x1040_0400,
            Self::Bottom => 0x1040_0500,
        }
    }

    /// Physical address of the screen's LCD colour-fill register.
    pub const fn color_fill_reg(self) -> u32 {
        match self {
            Self::Top => 0x1020_2204,
            Self::Bottom => 0x1020_2A04,
        }
    }

    /// Upright image size (width, height) in pixels: 400 × 240 or 320 × 240.
    pub const fn size(self) -> (u32, u32) {
        match self {
            Self::Top => (400, LCD_ROW_PIXELS),
            Self::Bottom => (320, LCD_ROW_PIXELS),
        }
    }
}

/// Which eye's framebuffer to show (the bottom screen only has the left one).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Eye {
    /// Framebuffer A.
    Left,
    /// Framebuffer B when the screen is in stereo mode (interlace mode 2, "AB") and a B
    /// address is set; otherwise framebuffer A (see [`LcdFramebufferConfig::address`]).
    Right,
}

impl Eye {
    /// Lower-case name for messages and JSON ("left", "right").
    pub const fn name(self) -> &'static str {
        match self {
            Self::Left => "left",
            Self::Right => "right",
        }
    }
}

/// The LCD colour-fill register (bits 0-7 R, 8-15 G, 16-23 B, bit 24 enable).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LcdColorFill {
    /// Bit 24: the screen shows `color` instead of the framebuffer.
    pub enabled: bool,
    /// The fill colour; alpha is 255.
    pub color: Rgba,
}

impl LcdColorFill {
    /// Reads `screen`'s colour-fill register from an LCD register file `lcd` whose word `k` is
    /// the register at PA `lcd_base + 4·k` (e.g. PA 0x10202000); missing words read as 0.
    pub fn from_lcd_regs(screen: Screen, lcd: &[u32], lcd_base: u32) -> Self {
        let k = (screen.color_fill_reg().wrapping_sub(lcd_base) / 4) as usize;
        Self::from_word(lcd.get(k).copied().unwrap_or(0))
    }

    /// Decodes the register word.
    pub fn from_word(w: u32) -> Self {
        let b = w.to_le_bytes();
        Self {
            enabled: w & (1 << 24) != 0,
            color: [b[0], b[1], b[2], 255],
        }
    }
}

/// One screen's framebuffer configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct LcdFramebufferConfig {
    /// The screen.
    pub screen: Screen,
    /// Raw size word (+0x5C).
    pub size_word: u32,
    /// Framebuffer A first / second address (+0x68, +0x6C).
    pub left: [u32; 2],
    /// Framebuffer B first / second address (+0x94, +0x98).
    pub right: [u32; 2],
    /// Raw format word (+0x70).
    pub format_word: u32,
    /// Colour format (bits 0-2, external ids); `None` for 5-7.
    pub format: Option<ColorFormat>,
    /// Interlace mode (bits 4-5): 0 A only, 1 AA, 2 AB (stereo), 3 BA.
    pub interlace: u8,
    /// Displayed address pair (+0x78 bit 0): 0 first, 1 second.
    pub select: u8,
    /// Bytes between framebuffer memory rows (+0x90).
    pub stride: u32,
}

impl LcdFramebufferConfig {
    /// Decodes a PDC block given as words: `block[k]` is the word at byte offset `4·k` of the
    /// block. Missing words read as 0.
    pub fn from_words(screen: Screen, block: &[u32]) -> Self {
        let w = |off: u32| block.get(off as usize / 4).copied().unwrap_or(0);
        let format_word = w(pdc::FORMAT);
        Self {
            screen,
            size_word: w(pdc::SIZE),
            left: [w(pdc::A_FIRST), w(pdc::A_SECOND)],
            right: [w(pdc::B_FIRST), w(pdc::B_SECOND)],
            format_word,
            format: ColorFormat::from_external_id(format_word & 7),
            interlace: ((format_word >> 4) & 3) as u8,
            select: (w(pdc::SELECT) & 1) as u8,
            stride: w(pdc::STRIDE),
        }
    }

    /// Decodes `screen`'s PDC block from a whole external register file `ext` whose word `k`
    /// is the register at PA `ext_base + 4·k` (e.g. PA 0x10400000 for the GPU block).
    pub fn from_ext_regs(screen: Screen, ext: &[u32], ext_base: u32) -> Self {
        let first = (screen.pdc_base().wrapping_sub(ext_base) / 4) as usize;
        Self::from_words(screen, ext.get(first..).unwrap_or(&[]))
    }

    /// Citra's power-on values (`GPU::Init`): RGB8, stride 720, its default addresses.
    pub fn citra_default(screen: Screen) -> Self {
        let (left, right, height) = match screen {
            Screen::Top => ([0x181E_6000, 0x1822_C800], [0x1827_3000, 0x182B_9800], 400),
            Screen::Bottom => ([0x1848_F000, 0x184C_7800], [0, 0], 320),
        };
        Self {
            screen,
            size_word: (height << 16) | LCD_ROW_PIXELS,
            left,
            right,
            format_word: 1,
            format: Some(ColorFormat::Rgb8),
            interlace: 0,
            select: 0,
            stride: 720,
        }
    }

    /// True when the screen shows a different framebuffer to each eye: interlace mode 2
    /// ("AB", format bit 5) with a framebuffer B address set.
    ///
    /// UNVERIFIED \[LC gfx.c\]: libctru sets format bit 5 exactly when 3D is on and writes
    /// framebuffer B = A when it is off, so both rules agree on its output; for hand-made
    /// traces that leave stale B addresses with 3D off, the bit decides. Citra ignores the bit
    /// and shows B for the right eye whenever both B addresses are non-zero. Mode 3 ("BA")
    /// is treated as 2D here (not produced by libctru; what the panel does with it is not
    /// known).
    pub fn stereo(&self) -> bool {
        self.interlace == 2 && self.right != [0, 0]
    }

    /// The physical address scanned out for `eye`: the first or second address by `select`,
    /// of framebuffer A (left eye, and the right eye when [`Self::stereo`] is false) or B.
    pub fn address(&self, eye: Eye) -> u32 {
        let pair = match eye {
            Eye::Right if self.stereo() => self.right,
            _ => self.left,
        };
        pair[usize::from(self.select & 1)]
    }
}

/// Why a screen cannot be scanned out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LcdError {
    /// The format field holds 5-7.
    #[error("invalid LCD framebuffer format id {0}")]
    InvalidFormat(u32),
    /// The framebuffer lies (partly) outside mapped memory.
    #[error("LCD framebuffer range 0x{addr:08X}..+0x{len:X} is not in mapped memory")]
    Unmapped {
        /// First physical address.
        addr: u32,
        /// Length of the range in bytes.
        len: u64,
    },
}

/// Produces the upright image of `cfg.screen` as the panel shows it: the solid colour if `fill`
/// is enabled, else the framebuffer selected for `eye` decoded with the configured format and
/// stride.
pub fn scan_out(
    mem: &PhysMem,
    cfg: &LcdFramebufferConfig,
    eye: Eye,
    fill: LcdColorFill,
) -> Result<DecodedImage, LcdError> {
    let (width, height) = cfg.screen.size();
    if fill.enabled {
        let pixels = vec![fill.color; (width * height) as usize];
        return Ok(DecodedImage {
            width,
            height,
            pixels,
        });
    }
    let format = cfg
        .format
        .ok_or(LcdError::InvalidFormat(cfg.format_word & 7))?;
    let bpp = format.bytes_per_pixel();
    let addr = cfg.address(eye);
    let row_bytes = LCD_ROW_PIXELS as usize * bpp;
    let extent = u64::from(width - 1) * u64::from(cfg.stride) + row_bytes as u64;
    if !mem.is_mapped(addr, extent) {
        return Err(LcdError::Unmapped { addr, len: extent });
    }
    let mut pixels = vec![[0u8; 4]; (width * height) as usize];
    let mut row = vec![0u8; row_bytes];
    for sx in 0..width {
        // ok: the whole extent was checked above, so this address does not overflow.
        let row_addr = addr + sx * cfg.stride;
        mem.read(row_addr, &mut row)
            .map_err(|_| LcdError::Unmapped { addr, len: extent })?;
        for (p, px) in row.chunks_exact(bpp).enumerate() {
            let c = format.decode(px);
            let sy = LCD_ROW_PIXELS as usize - 1 - p;
            if let Some(dst) = pixels.get_mut(sy * width as usize + sx as usize) {
                *dst = [c[0], c[1], c[2], 255];
            }
        }
    }
    Ok(DecodedImage {
        width,
        height,
        pixels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{DisplayTransferConfig, display_transfer};
    use crate::memory::VRAM;
    use crate::pixel::color::encode_rgba8;
    use crate::pixel::tiling::{flip_row, tiled_offset};

    fn block(words: &[(u32, u32)]) -> Vec<u32> {
        let mut b = vec![0u32; 64];
        for &(off, v) in words {
            b[off as usize / 4] = v;
        }
        b
    }

    #[test]
    fn decode_pdc_block() {
        let b = block(&[
            (pdc::SIZE, 0x0190_00F0),
            (pdc::A_FIRST, 0x1800_0000),
            (pdc::A_SECOND, 0x1810_0000),
            (pdc::FORMAT, 0x20 | 3),
            (pdc::SELECT, 1),
            (pdc::STRIDE, 480),
            (pdc::B_FIRST, 0x1820_0000),
            (pdc::B_SECOND, 0x1830_0000),
        ]);
        let c = LcdFramebufferConfig::from_words(Screen::Top, &b);
        assert_eq!(c.format, Some(ColorFormat::Rgb5a1)); // external id 3
        assert_eq!(c.interlace, 2);
        assert_eq!(c.stride, 480);
        assert_eq!(c.address(Eye::Left), 0x1810_0000);
        assert_eq!(c.address(Eye::Right), 0x1830_0000);
        let c = LcdFramebufferConfig::from_words(Screen::Bottom, &b[..0x70 / 4]);
        assert_eq!(
            c.format,
            Some(ColorFormat::Rgba8),
            "missing words read as 0"
        );
        assert_eq!(
            c.address(Eye::Right),
            0x1800_0000,
            "no right buffer: falls back to left"
        );
        // 3D off (interlace mode 0) with stale B addresses: the right eye sees A.
        let mut b2 = b.clone();
        b2[pdc::FORMAT as usize / 4] = 3;
        let c = LcdFramebufferConfig::from_words(Screen::Top, &b2);
        assert!(!c.stereo());
        assert_eq!(c.address(Eye::Right), 0x1810_0000);
        assert_eq!(Eye::Right.name(), "right");
    }

    #[test]
    fn from_whole_register_files() {
        let mut ext = vec![0u32; 0x1000];
        ext[(0x500 + pdc::STRIDE as usize) / 4] = 960;
        ext[(0x500 + pdc::A_FIRST as usize) / 4] = 0x1848_F000;
        let c = LcdFramebufferConfig::from_ext_regs(Screen::Bottom, &ext, 0x1040_0000);
        assert_eq!((c.stride, c.address(Eye::Left)), (960, 0x1848_F000));
        // A register file that does not reach the block reads as zeros.
        let c = LcdFramebufferConfig::from_ext_regs(Screen::Top, &ext[..4], 0x1040_0000);
        assert_eq!(c.stride, 0);
        let mut lcd = vec![0u32; 0x400];
        lcd[0xA04 / 4] = 0x0100_0000 | 0x00_20_10;
        let f = LcdColorFill::from_lcd_regs(Screen::Bottom, &lcd, 0x1020_2000);
        assert_eq!(
            f,
            LcdColorFill {
                enabled: true,
                color: [0x10, 0x20, 0, 255]
            }
        );
        assert!(!LcdColorFill::from_lcd_regs(Screen::Top, &lcd, 0x1020_2000).enabled);
        assert!(!LcdColorFill::from_lcd_regs(Screen::Top, &[], 0).enabled);
    }

    #[test]
    fn first_pixel_in_memory_is_bottom_left() {
        let mut mem = PhysMem::new();
        let cfg = LcdFramebufferConfig::citra_default(Screen::Top);
        let base = cfg.address(Eye::Left);
        // RGB8 bytes B, G, R. First pixel: red. Row 10, pixel 5: green. Last row, last pixel:
        // blue.
        mem.write(base, &[0, 0, 255]).unwrap();
        mem.write(base + 10 * 720 + 5 * 3, &[0, 255, 0]).unwrap();
        mem.write(base + 399 * 720 + 239 * 3, &[255, 0, 0]).unwrap();
        let img = scan_out(&mem, &cfg, Eye::Left, LcdColorFill::default()).unwrap();
        assert_eq!((img.width, img.height), (400, 240));
        assert_eq!(img.get(0, 239).unwrap(), [255, 0, 0, 255]);
        assert_eq!(img.get(10, 234).unwrap(), [0, 255, 0, 255]);
        assert_eq!(img.get(399, 0).unwrap(), [0, 0, 255, 255]);
        assert_eq!(img.get(0, 0).unwrap(), [0, 0, 0, 255]);
    }

    #[test]
    fn second_buffer_and_right_eye_and_formats() {
        let mut mem = PhysMem::new();
        let mut cfg = LcdFramebufferConfig::citra_default(Screen::Top);
        cfg.format = Some(ColorFormat::Rgb565);
        cfg.stride = 480;
        cfg.select = 1;
        // Stereo (interlace mode 2, "AB").
        cfg.interlace = 2;
        mem.write(cfg.right[1], &0xF800u16.to_le_bytes()).unwrap();
        mem.write(cfg.left[1], &0x07E0u16.to_le_bytes()).unwrap();
        let right = scan_out(&mem, &cfg, Eye::Right, LcdColorFill::default()).unwrap();
        assert_eq!(right.get(0, 239).unwrap(), [255, 0, 0, 255]);
        let left = scan_out(&mem, &cfg, Eye::Left, LcdColorFill::default()).unwrap();
        assert_eq!(left.get(0, 239).unwrap(), [0, 255, 0, 255]);
        // 3D off (Citra's power-on interlace mode 0): both eyes see framebuffer A.
        cfg.interlace = 0;
        let right = scan_out(&mem, &cfg, Eye::Right, LcdColorFill::default()).unwrap();
        assert_eq!(right.get(0, 239).unwrap(), [0, 255, 0, 255]);
    }

    #[test]
    fn colour_fill_overrides() {
        let mem = PhysMem::new();
        let cfg = LcdFramebufferConfig::citra_default(Screen::Bottom);
        let fill = LcdColorFill::from_word(0x0100_80FF);
        assert_eq!(
            fill,
            LcdColorFill {
                enabled: true,
                color: [0xFF, 0x80, 0x00, 255]
            }
        );
        let img = scan_out(&mem, &cfg, Eye::Left, fill).unwrap();
        assert_eq!((img.width, img.height), (320, 240));
        assert!(img.pixels.iter().all(|&p| p == [0xFF, 0x80, 0, 255]));
        assert!(!LcdColorFill::from_word(0x00FF_FFFF).enabled);
    }

    #[test]
    fn errors() {
        let mem = PhysMem::new();
        let mut cfg = LcdFramebufferConfig::citra_default(Screen::Top);
        cfg.format = None;
        cfg.format_word = 6;
        assert_eq!(
            scan_out(&mem, &cfg, Eye::Left, LcdColorFill::default()),
            Err(LcdError::InvalidFormat(6))
        );
        let mut cfg = LcdFramebufferConfig::citra_default(Screen::Top);
        cfg.stride = u32::MAX;
        assert!(matches!(
            scan_out(&mem, &cfg, Eye::Left, LcdColorFill::default()),
            Err(LcdError::Unmapped { .. })
        ));
        cfg.stride = 720;
        cfg.left = [VRAM.base + VRAM.size - 100, 0];
        assert!(scan_out(&mem, &cfg, Eye::Left, LcdColorFill::default()).is_err());
    }

    /// The whole presentation path: a PICA colour buffer (240 × 400, tiled, window y up) →
    /// display transfer (tiled → linear, RGBA8 → RGB8, no flip) → LCD scan-out. Window +x
    /// points up the physical screen and window +y points left (`pica-raster.md` §10.6).
    #[test]
    fn pica_window_pixel_reaches_the_expected_screen_position() {
        let mut mem = PhysMem::new();
        let colour_buffer = VRAM.base;
        let (w, h) = (240u32, 400u32);
        let lcd = LcdFramebufferConfig::citra_default(Screen::Top);
        // Window pixel (x, y) with y up lives in memory row h − 1 − y.
        let put = |mem: &mut PhysMem, x: u32, y: u32, c: Rgba| {
            let off = tiled_offset(x, flip_row(y, h), w, 4);
            mem.write(colour_buffer + off, &encode_rgba8(c)).unwrap();
        };
        put(&mut mem, 0, 0, [255, 0, 0, 255]); // window bottom-left
        put(&mut mem, 239, 0, [0, 255, 0, 255]); // window bottom-right (+x)
        put(&mut mem, 0, 399, [0, 0, 255, 255]); // window top-left (+y)
        let dims = (h << 16) | w;
        let t = DisplayTransferConfig::from_words(
            colour_buffer >> 3,
            lcd.left[0] >> 3,
            dims,
            dims,
            1 << 12,
        );
        display_transfer(&mut mem, &t).unwrap();
        let img = scan_out(&mem, &lcd, Eye::Left, LcdColorFill::default()).unwrap();
        assert_eq!(
            img.get(399, 239).unwrap(),
            [255, 0, 0, 255],
            "window origin: bottom-right"
        );
        assert_eq!(img.get(399, 0).unwrap(), [0, 255, 0, 255], "+x goes up");
        assert_eq!(img.get(0, 239).unwrap(), [0, 0, 255, 255], "+y goes left");
    }
}
