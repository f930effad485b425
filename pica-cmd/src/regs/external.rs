//! The GPU's external (ARM11 MMIO) registers by physical address: memory fill units (PSC0/1),
//! LCD framebuffer setup (PDC0 top / PDC1 bottom), the transfer engine (PPF), the P3D
//! command-list registers, the internal-register window (PA 0x10401000 + 4·id) and the LCD
//! block's colour-fill / backlight registers.
//!
//! Stage: external engines and trace replay (`pica-core.md` §9.1-§9.5, `pica-raster.md` §10,
//! [3DB] "GPU/External Registers"). Inputs: a physical address and a 32-bit value (CiTrace
//! register writes are recorded with PAs). Outputs: names ([`name`]), decodes ([`describe`]),
//! the internal id behind a window address ([`internal_id`]) and typed views for the engines.
//! Registers: PA 0x10400000-0x10401C00 and PA 0x10202000-0x10202FFF.
//!
//! Addresses: user VA 0x1EF00000 = PA 0x10400000 (GPU), VA 0x1ED02000 = PA 0x10202000 (LCD).
//! Address registers hold PA >> 3, except the LCD framebuffer addresses, which hold the PA.

use super::FieldKind::*;
use super::describe::{describe_field, raw_word_field};
use super::{Field, RegDescription, RegSpace, describe as describe_internal, lookup};

/// Physical base address of the GPU MMIO block.
pub const GPU_BASE: u32 = 0x1040_0000;
/// Size of the GPU MMIO block Citra models (0x1000 words).
pub const GPU_SIZE: u32 = 0x4000;
/// Physical address of internal register 0 in the internal-register window.
pub const INTERNAL_WINDOW: u32 = 0x1040_1000;
/// Physical base address of the LCD register block.
pub const LCD_BASE: u32 = 0x1020_2000;
/// Size of the LCD register block (0x400 words).
pub const LCD_SIZE: u32 = 0x1000;

/// The hardware unit an external register belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
pub enum ExtUnit {
    /// Hardware id, VRAM banks, busy flags, backlight control.
    Misc,
    /// Memory fill unit 0 ("PSC0").
    MemoryFill0,
    /// Memory fill unit 1 ("PSC1").
    MemoryFill1,
    /// Top-screen LCD framebuffer setup ("PDC0").
    Pdc0,
    /// Bottom-screen LCD framebuffer setup ("PDC1").
    Pdc1,
    /// Display transfer / texture copy engine ("PPF").
    TransferEngine,
    /// Command-list submission ("P3D").
    CommandList,
    /// LCD colour fill and backlight (PA 0x10202000 block).
    Lcd,
}

/// A catalogue entry for one external register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtRegDef {
    /// Physical address.
    pub pa: u32,
    /// Name (our naming; 3dbrew has no register names for this block).
    pub name: &'static str,
    /// Hardware unit.
    pub unit: ExtUnit,
    /// Field layout.
    pub fields: &'static [Field],
    /// Description.
    pub doc: &'static str,
}

pica_enum! {
    /// Memory fill width (control bits 8-9). [3DB]: 1 or 3 = 24-bit; [C]: bit 8 = 24-bit,
    /// else bit 9 = 32-bit (same result).
    pub enum FillWidth {
        Bits16 = 0 => "16_BIT",
        Bits24 = 1 => "24_BIT",
        Bits32 = 2 => "32_BIT",
        /// Also 24-bit.
        Bits24Alt = 3 => "24_BIT_ALT",
    }
}

pica_enum! {
    /// Pixel format of the external engines and the LCD (note: 2 and 3 are swapped relative to
    /// the PICA colour-buffer format numbering).
    pub enum ExternalColorFormat {
        Rgba8 = 0 => "RGBA8",
        Rgb8 = 1 => "RGB8",
        Rgb565 = 2 => "RGB565",
        Rgb5a1 = 3 => "RGB5A1",
        Rgba4 = 4 => "RGBA4",
    }
}

pica_enum! {
    /// Display-transfer downscale (flags bits 24-25); 3 is invalid.
    pub enum Downscale {
        None = 0 => "NONE",
        /// Halve the width with a 2x1 box filter.
        Box2x1 = 1 => "2X1",
        /// Halve both dimensions with a 2x2 box filter.
        Box2x2 = 2 => "2X2",
    }
}

pica_enum! {
    /// LCD framebuffer scan-line output mode (format bits 4-5).
    pub enum InterlaceMode {
        /// Framebuffer A only (bottom screen, and the top screen's 240x800 mode).
        A = 0 => "A",
        /// A interleaved with itself (top screen, 2D).
        AA = 1 => "AA",
        /// A and B interleaved (top screen, stereoscopic 3D).
        AB = 2 => "AB",
        /// B then A (unused by userland).
        BA = 3 => "BA",
    }
}

pica_enum! {
    /// LCD framebuffer DMA burst size (format bits 8-9).
    pub enum DmaSize {
        Words4 = 0 => "4_WORDS",
        Words8 = 1 => "8_WORDS",
        Words16 = 2 => "16_WORDS",
    }
}

layout! {
    /// Layout of HARDWARE_ID (0x10400000).
    hardware_id {
        NEW_MODEL: 2..=2, Bool, "new_model", "1 = New 3DS";
    }
}

layout! {
    /// Layout of registers described only as a whole word.
    word {
        VALUE: 0..=31, Hex, "value", "raw 32-bit value";
    }
}

layout! {
    /// Layout of VRAM_BANK_CONTROL (0x10400030).
    vram_bank_control {
        BANK_DISABLE: 8..=11, BitSet, "bank_disable", "bit i = 1: VRAM bank i disabled";
    }
}

layout! {
    /// Layout of GPU_BUSY (0x10400034).
    gpu_busy {
        PSC0: 26..=26, Bool, "psc0", "memory fill unit 0 busy";
        PSC1: 27..=27, Bool, "psc1", "memory fill unit 1 busy";
        PPF: 30..=30, Bool, "ppf", "transfer engine busy";
        P3D: 31..=31, Bool, "p3d", "command-list processor busy";
    }
}

layout! {
    /// Layout of the memory fill address registers (start / end).
    memfill_addr {
        ADDR: 0..=28, Address { shift: 3 }, "addr", "physical address >> 3 (end is exclusive; hardware requires VRAM)";
    }
}

layout! {
    /// Layout of the memory fill control registers.
    memfill_control {
        START: 0..=0, Bool, "start_busy", "write 1 = start (aborts a running fill); reads 1 while busy";
        FINISHED: 1..=1, Bool, "finished", "set by hardware on completion (PSC interrupt)";
        WIDTH: 8..=9, Enum(FillWidth::NAMES), "width", "fill value width (unsigned enum)";
    }
}

layout! {
    /// Layout of the transfer-engine address registers.
    ppf_addr {
        ADDR: 0..=28, Address { shift: 3 }, "addr", "physical address >> 3";
    }
}

layout! {
    /// Layout of DISPLAY_TRANSFER input / output dimensions and the LCD framebuffer size.
    dimensions {
        WIDTH: 0..=15, Uint, "width", "unsigned width in pixels";
        HEIGHT: 16..=31, Uint, "height", "unsigned height in pixels";
    }
}

layout! {
    /// Layout of the transfer flags (0x10400C10).
    ppf_flags {
        FLIP_V: 0..=0, Bool, "flip_v", "1 = flip vertically";
        LINEAR_TO_TILED: 1..=1, Bool, "linear_to_tiled", "1 = input linear -> output tiled; 0 = tiled -> linear";
        CROP: 2..=2, Bool, "crop", "1 = crop lines (needed when output width < input width; ignored by [C])";
        TEXTURE_COPY: 3..=3, Bool, "texture_copy", "1 = TextureCopy (raw copy with gaps) instead of a display transfer";
        NO_TILING: 5..=5, Bool, "no_tiling_conversion", "1 = no tiled/linear conversion ([3DB]: tiled -> tiled; [C]: linear -> linear with bit 1)";
        INPUT_FORMAT: 8..=10, Enum(ExternalColorFormat::NAMES), "input_format", "input pixel format, external numbering";
        OUTPUT_FORMAT: 12..=14, Enum(ExternalColorFormat::NAMES), "output_format", "output pixel format, external numbering";
        BLOCK32: 16..=16, Bool, "block32", "1 = 32x32 block tiling instead of 8x8 (unimplemented in [C])";
        DOWNSCALE: 24..=25, Enum(Downscale::NAMES), "downscale", "box-filter downscale (unsigned enum)";
    }
}

layout! {
    /// Layout of the transfer control register (0x10400C18).
    ppf_control {
        START: 0..=0, Bool, "start", "write 1 = start; cleared on completion";
        FINISHED: 8..=8, Bool, "finished", "set on completion (PPF interrupt)";
    }
}

layout! {
    /// Layout of the TextureCopy size register (0x10400C20).
    texcopy_size {
        SIZE: 0..=31, Uint, "size", "unsigned total bytes to copy (low 4 bits ignored; 0 hangs hardware)";
    }
}

layout! {
    /// Layout of the TextureCopy input / output line registers.
    texcopy_line {
        WIDTH: 0..=15, Bytes { shift: 4 }, "width", "line width in 16-byte units (bytes = field << 4)";
        GAP: 16..=31, Bytes { shift: 4 }, "gap", "gap after each line in 16-byte units (bytes = field << 4)";
    }
}

layout! {
    /// Layout of the P3D command-list size register (0x104018E0, alias of internal 0x238).
    p3d_size {
        SIZE: 0..=31, Uint, "size", "hardware: size in bytes >> 3; Citra's GSP and CiTraces: size in bytes (pica-core.md §9.4)";
    }
}

layout! {
    /// Layout of the P3D command-list address register (0x104018E8, alias of internal 0x23A).
    p3d_addr {
        ADDR: 0..=28, Address { shift: 3 }, "addr", "physical address >> 3";
    }
}

layout! {
    /// Layout of the P3D command-list trigger (0x104018F0, alias of internal 0x23C).
    p3d_trigger {
        START: 0..=0, Bool, "start", "write 1 = process the command list; reset to 0 when done";
    }
}

layout! {
    /// Layout of an LCD framebuffer address register (holds the PA itself).
    fb_addr {
        ADDR: 0..=31, Address { shift: 0 }, "addr", "framebuffer physical address (not shifted)";
    }
}

layout! {
    /// Layout of the LCD framebuffer format register (PDC +0x70).
    fb_format {
        COLOR_FORMAT: 0..=2, Enum(ExternalColorFormat::NAMES), "color_format", "pixel format, external numbering";
        INTERLACE: 4..=5, Enum(InterlaceMode::NAMES), "interlace", "scan-line output mode";
        SCAN_DOUBLING: 6..=6, Bool, "scan_doubling", "1 = scan doubling (top screen 2D)";
        DMA_SIZE: 8..=9, Enum(DmaSize::NAMES), "dma_size", "DMA burst size";
    }
}

layout! {
    /// Layout of the PDC control register (PDC +0x74).
    pdc_control {
        ENABLE: 0..=0, Bool, "enable", "display controller enabled";
        HBLANK_IRQ_MASK: 8..=8, Bool, "hblank_irq_mask", "1 = HBlank interrupt masked";
        VBLANK_IRQ_MASK: 9..=9, Bool, "vblank_irq_mask", "1 = VBlank interrupt masked";
        ERROR_IRQ_MASK: 10..=10, Bool, "error_irq_mask", "1 = error interrupt masked (UNVERIFIED)";
        OUTPUT_ENABLE: 16..=16, Bool, "output_enable", "output enable (UNVERIFIED)";
    }
}

layout! {
    /// Layout of the framebuffer select / status register (PDC +0x78).
    fb_select {
        SELECT: 0..=0, Uint, "select", "framebuffer shown after VBlank: 0 = first address, 1 = second";
        CURRENT: 4..=4, Uint, "current", "framebuffer currently displayed (UNVERIFIED)";
        RESET_FIFO: 8..=8, Bool, "reset_fifo", "reset FIFO (UNVERIFIED)";
        HBLANK_ACK: 16..=16, Bool, "hblank_irq", "HBlank interrupt status; write 1 to acknowledge";
        VBLANK_ACK: 17..=17, Bool, "vblank_irq", "VBlank interrupt status; write 1 to acknowledge";
        ERROR_ACK: 18..=18, Bool, "error_irq", "error interrupt status (UNVERIFIED)";
    }
}

layout! {
    /// Layout of the framebuffer stride register (PDC +0x90).
    fb_stride {
        STRIDE: 0..=31, Uint, "stride", "bytes between framebuffer rows (multiple of 8)";
    }
}

layout! {
    /// Layout of the LCD colour-fill registers (0x10202204 / 0x10202A04).
    lcd_fill {
        COLOR: 0..=23, Rgb8, "color", "fill colour: R 0-7, G 8-15, B 16-23";
        ENABLE: 24..=24, Bool, "enable", "1 = show the fill colour instead of the framebuffer";
    }
}

layout! {
    /// Layout of the LCD backlight registers (0x10202240 / 0x10202A40).
    lcd_backlight {
        LEVEL: 0..=31, Uint, "level", "backlight brightness (unsigned)";
    }
}

macro_rules! ext {
    ($pa:expr, $name:expr, $unit:ident, $layout:ident, $doc:expr) => {
        ExtRegDef {
            pa: $pa,
            name: $name,
            unit: ExtUnit::$unit,
            fields: $layout::FIELDS,
            doc: $doc,
        }
    };
}

macro_rules! memfill {
    ($n:literal, $base:expr, $unit:ident) => {
        [
            ext!(
                $base,
                concat!("MEMFILL", $n, "_START"),
                $unit,
                memfill_addr,
                concat!("Memory fill unit ", $n, " start address (PA >> 3).")
            ),
            ext!(
                $base + 4,
                concat!("MEMFILL", $n, "_END"),
                $unit,
                memfill_addr,
                concat!(
                    "Memory fill unit ",
                    $n,
                    " end address (PA >> 3, exclusive)."
                )
            ),
            ext!(
                $base + 8,
                concat!("MEMFILL", $n, "_VALUE"),
                $unit,
                word,
                concat!(
                    "Memory fill unit ",
                    $n,
                    " fill value (16/24/32-bit per the control width)."
                )
            ),
            ext!(
                $base + 12,
                concat!("MEMFILL", $n, "_CONTROL"),
                $unit,
                memfill_control,
                concat!(
                    "Memory fill unit ",
                    $n,
                    " control: writing bit 0 starts the fill."
                )
            ),
        ]
    };
}

macro_rules! pdc {
    ($p:literal, $base:expr, $unit:ident, $screen:literal) => {
        [
            ext!(
                $base,
                concat!($p, "_HTOTAL"),
                $unit,
                word,
                concat!($screen, " screen timing: total scan-line width.")
            ),
            ext!(
                $base + 0x04,
                concat!($p, "_HSTART"),
                $unit,
                word,
                concat!($screen, " screen timing: image start.")
            ),
            ext!(
                $base + 0x08,
                concat!($p, "_HBR"),
                $unit,
                word,
                concat!($screen, " screen timing: right border start.")
            ),
            ext!(
                $base + 0x0C,
                concat!($p, "_HPF"),
                $unit,
                word,
                concat!($screen, " screen timing: front porch.")
            ),
            ext!(
                $base + 0x10,
                concat!($p, "_HSYNC"),
                $unit,
                word,
                concat!($screen, " screen timing: HSync pulse.")
            ),
            ext!(
                $base + 0x14,
                concat!($p, "_HPB"),
                $unit,
                word,
                concat!($screen, " screen timing: back porch.")
            ),
            ext!(
                $base + 0x18,
                concat!($p, "_HBL"),
                $unit,
                word,
                concat!($screen, " screen timing: left border.")
            ),
            ext!(
                $base + 0x1C,
                concat!($p, "_HIRQ"),
                $unit,
                word,
                concat!($screen, " screen timing: HBlank interrupt window.")
            ),
            ext!(
                $base + 0x24,
                concat!($p, "_VTOTAL"),
                $unit,
                word,
                concat!($screen, " screen timing: total lines.")
            ),
            ext!(
                $base + 0x34,
                concat!($p, "_VDISP"),
                $unit,
                word,
                concat!($screen, " screen timing: displayed lines.")
            ),
            ext!(
                $base + 0x40,
                concat!($p, "_VIRQ"),
                $unit,
                word,
                concat!($screen, " screen timing: VBlank interrupt window.")
            ),
            ext!(
                $base + 0x4C,
                concat!($p, "_OVERSCAN_COLOR"),
                $unit,
                word,
                concat!($screen, " screen overscan filler colour (24-bit).")
            ),
            ext!(
                $base + 0x50,
                concat!($p, "_HCOUNT"),
                $unit,
                word,
                concat!($screen, " screen horizontal beam counter.")
            ),
            ext!(
                $base + 0x54,
                concat!($p, "_VCOUNT"),
                $unit,
                word,
                concat!($screen, " screen vertical beam counter.")
            ),
            ext!(
                $base + 0x5C,
                concat!($p, "_FB_SIZE"),
                $unit,
                dimensions,
                concat!(
                    $screen,
                    " screen framebuffer size: width (240) and height (400 top / 320 bottom)."
                )
            ),
            ext!(
                $base + 0x60,
                concat!($p, "_HDISP"),
                $unit,
                word,
                concat!($screen, " screen image start / end.")
            ),
            ext!(
                $base + 0x68,
                concat!($p, "_FB_A_FIRST"),
                $unit,
                fb_addr,
                concat!(
                    $screen,
                    " screen framebuffer A (top: left eye) first address (PA)."
                )
            ),
            ext!(
                $base + 0x6C,
                concat!($p, "_FB_A_SECOND"),
                $unit,
                fb_addr,
                concat!($screen, " screen framebuffer A second address (PA).")
            ),
            ext!(
                $base + 0x70,
                concat!($p, "_FB_FORMAT"),
                $unit,
                fb_format,
                concat!($screen, " screen framebuffer format and interlacing.")
            ),
            ext!(
                $base + 0x74,
                concat!($p, "_CONTROL"),
                $unit,
                pdc_control,
                concat!($screen, " screen display controller control.")
            ),
            ext!(
                $base + 0x78,
                concat!($p, "_FB_SELECT"),
                $unit,
                fb_select,
                concat!(
                    $screen,
                    " screen framebuffer select (bit 0) and interrupt status."
                )
            ),
            ext!(
                $base + 0x80,
                concat!($p, "_CLUT_INDEX"),
                $unit,
                word,
                concat!($screen, " screen colour LUT index.")
            ),
            ext!(
                $base + 0x84,
                concat!($p, "_CLUT_DATA"),
                $unit,
                word,
                concat!(
                    $screen,
                    " screen colour LUT entry (RGB8, index increments)."
                )
            ),
            ext!(
                $base + 0x90,
                concat!($p, "_FB_STRIDE"),
                $unit,
                fb_stride,
                concat!($screen, " screen framebuffer row stride in bytes.")
            ),
            ext!(
                $base + 0x94,
                concat!($p, "_FB_B_FIRST"),
                $unit,
                fb_addr,
                concat!(
                    $screen,
                    " screen framebuffer B (top: right eye) first address (PA)."
                )
            ),
            ext!(
                $base + 0x98,
                concat!($p, "_FB_B_SECOND"),
                $unit,
                fb_addr,
                concat!($screen, " screen framebuffer B second address (PA).")
            ),
        ]
    };
}

const MISC: [ExtRegDef; 5] = [
    ext!(
        GPU_BASE,
        "HARDWARE_ID",
        Misc,
        hardware_id,
        "Hardware id (bit 2: New 3DS)."
    ),
    ext!(
        GPU_BASE + 0x30,
        "VRAM_BANK_CONTROL",
        Misc,
        vram_bank_control,
        "VRAM bank control."
    ),
    ext!(
        GPU_BASE + 0x34,
        "GPU_BUSY",
        Misc,
        gpu_busy,
        "Busy flags of the GPU engines."
    ),
    ext!(
        GPU_BASE + 0xC0,
        "BACKLIGHT_CONTROL",
        Misc,
        word,
        "Backlight control: 0 lets backlights turn off, 0x20000000 forces them on."
    ),
    ext!(
        GPU_BASE + 0xC14,
        "PPF_UNKNOWN_C14",
        TransferEngine,
        word,
        "Unnamed transfer-engine register: GSP writes 0 here before starting a display transfer."
    ),
];

const MEMFILL0: [ExtRegDef; 4] = memfill!(0, GPU_BASE + 0x10, MemoryFill0);
const MEMFILL1: [ExtRegDef; 4] = memfill!(1, GPU_BASE + 0x20, MemoryFill1);
const PDC0: [ExtRegDef; 26] = pdc!("PDC0", GPU_BASE + 0x400, Pdc0, "Top");
const PDC1: [ExtRegDef; 26] = pdc!("PDC1", GPU_BASE + 0x500, Pdc1, "Bottom");

const PPF: [ExtRegDef; 9] = [
    ext!(
        GPU_BASE + 0xC00,
        "PPF_INPUT_ADDR",
        TransferEngine,
        ppf_addr,
        "Transfer input address (PA >> 3)."
    ),
    ext!(
        GPU_BASE + 0xC04,
        "PPF_OUTPUT_ADDR",
        TransferEngine,
        ppf_addr,
        "Transfer output address (PA >> 3)."
    ),
    ext!(
        GPU_BASE + 0xC08,
        "PPF_OUTPUT_DIM",
        TransferEngine,
        dimensions,
        "Display transfer output width and height."
    ),
    ext!(
        GPU_BASE + 0xC0C,
        "PPF_INPUT_DIM",
        TransferEngine,
        dimensions,
        "Display transfer input width and height."
    ),
    ext!(
        GPU_BASE + 0xC10,
        "PPF_FLAGS",
        TransferEngine,
        ppf_flags,
        "Transfer flags."
    ),
    ext!(
        GPU_BASE + 0xC18,
        "PPF_CONTROL",
        TransferEngine,
        ppf_control,
        "Transfer start / finished."
    ),
    ext!(
        GPU_BASE + 0xC20,
        "PPF_TEXCOPY_SIZE",
        TransferEngine,
        texcopy_size,
        "TextureCopy total size in bytes."
    ),
    ext!(
        GPU_BASE + 0xC24,
        "PPF_TEXCOPY_INPUT",
        TransferEngine,
        texcopy_line,
        "TextureCopy input line width and gap."
    ),
    ext!(
        GPU_BASE + 0xC28,
        "PPF_TEXCOPY_OUTPUT",
        TransferEngine,
        texcopy_line,
        "TextureCopy output line width and gap."
    ),
];

const P3D: [ExtRegDef; 3] = [
    ext!(
        GPU_BASE + 0x18E0,
        "P3D_CMDLIST_SIZE",
        CommandList,
        p3d_size,
        "Command-list size (alias of internal CMDBUF_SIZE0 0x238). Hardware: bytes >> 3; Citra and CiTraces: bytes."
    ),
    ext!(
        GPU_BASE + 0x18E8,
        "P3D_CMDLIST_ADDR",
        CommandList,
        p3d_addr,
        "Command-list address (alias of internal CMDBUF_ADDR0 0x23A)."
    ),
    ext!(
        GPU_BASE + 0x18F0,
        "P3D_CMDLIST_TRIGGER",
        CommandList,
        p3d_trigger,
        "Command-list start (alias of internal CMDBUF_JUMP0 0x23C); bit 0 starts processing."
    ),
];

const LCD: [ExtRegDef; 4] = [
    ext!(
        LCD_BASE + 0x204,
        "LCD_TOP_FILL",
        Lcd,
        lcd_fill,
        "Top screen solid colour fill."
    ),
    ext!(
        LCD_BASE + 0x240,
        "LCD_TOP_BACKLIGHT",
        Lcd,
        lcd_backlight,
        "Top screen backlight brightness."
    ),
    ext!(
        LCD_BASE + 0xA04,
        "LCD_BOTTOM_FILL",
        Lcd,
        lcd_fill,
        "Bottom screen solid colour fill."
    ),
    ext!(
        LCD_BASE + 0xA40,
        "LCD_BOTTOM_BACKLIGHT",
        Lcd,
        lcd_backlight,
        "Bottom screen backlight brightness."
    ),
];

/// Every external register group.
const GROUPS: &[&[ExtRegDef]] = &[&MISC, &MEMFILL0, &MEMFILL1, &PDC0, &PDC1, &PPF, &P3D, &LCD];

/// Every named external register (the internal-register window excluded), in table order.
pub fn all() -> impl Iterator<Item = &'static ExtRegDef> {
    GROUPS.iter().flat_map(|g| g.iter())
}

/// The named external register at physical address `pa`.
pub fn lookup_pa(pa: u32) -> Option<&'static ExtRegDef> {
    all().find(|d| d.pa == pa)
}

/// The internal register id a physical address maps to through the internal-register window
/// (PA 0x10401000 + 4·id, id 0x000-0x2FF); `None` outside the window or if unaligned.
pub fn internal_id(pa: u32) -> Option<u16> {
    let off = pa.checked_sub(INTERNAL_WINDOW)?;
    if off % 4 != 0 {
        return None;
    }
    let id = off / 4;
    (id < super::REG_COUNT as u32).then_some(id as u16)
}

/// The physical address of internal register `id` in the internal-register window.
pub const fn window_address(id: u16) -> u32 {
    INTERNAL_WINDOW + 4 * id as u32
}

/// The name of the register at `pa`: a named external register, else the internal register
/// behind a window address; `None` if neither is known.
pub fn name(pa: u32) -> Option<&'static str> {
    lookup_pa(pa)
        .map(|d| d.name)
        .or_else(|| internal_id(pa).and_then(|id| lookup(id).map(|d| d.name)))
}

/// Decodes `value` written to physical address `pa`. Window addresses decode as their internal
/// register (with `internal_id` set); unknown addresses give a generic description; never
/// panics.
pub fn describe(pa: u32, value: u32) -> RegDescription {
    let internal = internal_id(pa);
    if let Some(def) = lookup_pa(pa) {
        return RegDescription {
            space: RegSpace::External,
            id: pa,
            name: def.name.to_string(),
            known: true,
            block: None,
            internal_id: internal,
            value,
            fields: def
                .fields
                .iter()
                .map(|f| describe_field(f, value))
                .collect(),
            doc: def.doc,
        };
    }
    if let Some(id) = internal {
        let mut d = describe_internal(id, value);
        d.space = RegSpace::External;
        d.id = pa;
        d.internal_id = Some(id);
        return d;
    }
    RegDescription {
        space: RegSpace::External,
        id: pa,
        name: format!("unknown MMIO register 0x{pa:08X}"),
        known: false,
        block: None,
        internal_id: None,
        value,
        fields: vec![raw_word_field(value)],
        doc: "",
    }
}

view! {
    /// Decoded memory fill control register.
    pub struct MemoryFillControl from memfill_control {
        start: bool = START,
        finished: bool = FINISHED,
        width: FillWidth = WIDTH,
    }
}

impl MemoryFillControl {
    /// Bytes per fill value: 2, 3 or 4.
    pub const fn value_bytes(&self) -> u32 {
        match self.width {
            FillWidth::Bits16 => 2,
            FillWidth::Bits32 => 4,
            // ok: the 2-bit field has no other encodings; 1 and 3 are both 24-bit.
            FillWidth::Bits24 | FillWidth::Bits24Alt | FillWidth::Unknown(_) => 3,
        }
    }
}

view! {
    /// Decoded width / height register (display transfer dimensions, LCD framebuffer size).
    pub struct Dimensions from dimensions {
        width: u16 = WIDTH,
        height: u16 = HEIGHT,
    }
}

view! {
    /// Decoded transfer flags (0x10400C10).
    pub struct TransferFlags from ppf_flags {
        flip_v: bool = FLIP_V,
        linear_to_tiled: bool = LINEAR_TO_TILED,
        crop: bool = CROP,
        texture_copy: bool = TEXTURE_COPY,
        no_tiling_conversion: bool = NO_TILING,
        input_format: ExternalColorFormat = INPUT_FORMAT,
        output_format: ExternalColorFormat = OUTPUT_FORMAT,
        block32: bool = BLOCK32,
        downscale: Downscale = DOWNSCALE,
    }
}

view! {
    /// Decoded TextureCopy line register (width and gap in bytes).
    pub struct TextureCopyLine from texcopy_line {
        width: super::ByteCount = WIDTH,
        gap: super::ByteCount = GAP,
    }
}

view! {
    /// Decoded LCD framebuffer format register.
    pub struct FramebufferFormat from fb_format {
        color_format: ExternalColorFormat = COLOR_FORMAT,
        interlace: InterlaceMode = INTERLACE,
        scan_doubling: bool = SCAN_DOUBLING,
        dma_size: DmaSize = DMA_SIZE,
    }
}

view! {
    /// Decoded LCD colour-fill register.
    pub struct LcdFill from lcd_fill {
        color: super::Rgb8 = COLOR,
        enable: bool = ENABLE,
    }
}
