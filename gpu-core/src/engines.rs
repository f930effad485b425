//! The GPU's external engines: memory fill ("PSC0/PSC1"), display transfer and texture copy
//! ("PPF") (`pica-raster.md` §10.1-§10.4, `pica-core.md` §9.2-§9.3), and the LCD scan-out that
//! presents their results ([`lcd`]).
//!
//! Stage: outside the PICA pipeline, triggered by ARM11 MMIO writes (the trace player decodes
//! the trigger writes and calls in here). Inputs: the raw external register words (PA
//! 0x10400010-0x1040002C for the fills, 0x10400C00-0x10400C28 for transfers) decoded into
//! [`MemoryFillConfig`], [`DisplayTransferConfig`] and [`TextureCopyConfig`]; [`PhysMem`].
//! Outputs: bytes written to [`PhysMem`] and an [`EngineOutcome`] listing what was written and
//! any warnings (conditions that hang real hardware, unverified flag combinations). Bad
//! configurations give a typed [`EngineError`]; nothing panics and work is bounded by
//! [`MAX_TRANSFER_PIXELS`] and by the size of mapped memory.
//!
//! Hardware facts used (citra-emu/hwtests `displaytransfer.cpp`, `memoryfills.cpp`, run on a
//! 3DS; see the tests at the end of this file, one per verified case):
//! * // HW: fills write the value's bytes little-endian, 24-bit fills repeat bytes
//!   `v[7:0], v[15:8], v[23:16]`, and nothing is written at `end`.
//! * // HW: display transfer decodes to 8 bits per channel by bit replication and re-encodes by
//!   truncation (alpha 127 → RGB5A1 A = 0, 128 → 1; alpha 100 → RGBA4 6).
//! * // HW: 2×1 and 2×2 box filters average 2 or 4 pixels consecutive in (Morton) memory order,
//!   truncating; the output is `output_width/2` (× `output_height/2`) pixels.
//! * // HW: tiled ↔ linear conversion uses the 8×8 Morton order; the raw copy (flag bit 3)
//!   performs no format or layout conversion; flag bit 16 leaves the first 8×8 tile unchanged.
//! * // HW: without the crop flag the input is read with the **output** width as its row
//!   stride: a 512-wide input transferred to a 240-wide output puts input tiled pixel 95999 at
//!   output pixel (239, 399) (hwtests "Different_Sizes", the "Why here?" check). Hydr8gon/3Beans
//!   implements the same rule (input stride = crop ? input width : output width). Citra always
//!   uses the input width.
//! * // HW: RGB8 → RGB565 / RGB5A1 transfers freeze the console (hwtests); 3dbrew lists more
//!   non-working pairs. We still convert and add an [`EngineWarning::HangsHardware`].

pub mod lcd;

use crate::debug::{DiagKind, Diagnostic};
use crate::memory::PhysMem;
use crate::pixel::color::{ColorFormat, Rgba};
use crate::pixel::tiling::TileMode;

/// Physical base address of the GPU external register block.
pub const GPU_REGS_BASE: u32 = 0x1040_0000;
/// Offsets (from [`GPU_REGS_BASE`]) of the two memory-fill units' first register (start).
pub const MEMFILL_OFFSETS: [u32; 2] = [0x10, 0x20];
/// Offset of the transfer-engine input address register.
pub const TRANSFER_INPUT_ADDR: u32 = 0xC00;
/// Offset of the transfer-engine output address register.
pub const TRANSFER_OUTPUT_ADDR: u32 = 0xC04;
/// Offset of the display-transfer output dimensions register.
pub const TRANSFER_OUTPUT_DIM: u32 = 0xC08;
/// Offset of the display-transfer input dimensions register.
pub const TRANSFER_INPUT_DIM: u32 = 0xC0C;
/// Offset of the transfer flags register.
pub const TRANSFER_FLAGS: u32 = 0xC10;
/// Offset of the transfer trigger register (bit 0 starts).
pub const TRANSFER_TRIGGER: u32 = 0xC18;
/// Offset of the texture-copy total size register.
pub const TEXCOPY_SIZE: u32 = 0xC20;
/// Offset of the texture-copy input line width / gap register.
pub const TEXCOPY_INPUT: u32 = 0xC24;
/// Offset of the texture-copy output line width / gap register.
pub const TEXCOPY_OUTPUT: u32 = 0xC28;

/// Largest number of output pixels a display transfer may produce (4096 × 4096); larger
/// requests are rejected so that buffers stay bounded (the LCDs need 400 × 240).
pub const MAX_TRANSFER_PIXELS: u64 = 4096 * 4096;

/// Largest input or output byte range a display transfer may touch (64 MiB).
pub const MAX_TRANSFER_BYTES: u64 = 64 << 20;

/// How flag bit 5 ("no tiling conversion") combines with bit 1 (input linear).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoSwizzleMode {
    /// Keep the input's layout on the output: bit 1 clear → tiled → tiled, bit 1 set → linear
    /// → linear (\[C\]).
    KeepInputLayout,
    /// Tiled → tiled regardless of bit 1 (3dbrew).
    AlwaysTiled,
    /// Linear → linear regardless of bit 1 (Hydr8gon/3Beans).
    AlwaysLinear,
}

/// UNVERIFIED: the hardware test only shows that bit 5 preserves pixel positions for equal
/// input/output widths, which all three readings satisfy. We follow \[C\] (it preserves the
/// input layout, the natural meaning of "do not swizzle"); change here to switch.
pub const NO_SWIZZLE_MODE: NoSwizzleMode = NoSwizzleMode::KeepInputLayout;

/// Whether flag bit 16 selects the 32×32 block layout ([`TileMode::Block32`]) on the tiled side.
/// UNVERIFIED: 3dbrew names bit 16 "32x32 block tiling"; Citra ignores it and 3Beans logs it as
/// unhandled; the hardware test only shows that the first 8×8 tile is unchanged, which both
/// readings satisfy. The colour buffer's own block mode (reg 0x11B) uses the same layout.
pub const HONOUR_BLOCK32_FLAG: bool = true;

/// Whether the input row stride is the output width when the crop flag is clear (hardware,
/// see the module doc). `false` gives Citra's behaviour (always the input width).
pub const CROP_OFF_USES_OUTPUT_WIDTH: bool = true;

/// A condition worth reporting that did not stop the operation.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineWarning {
    /// Real hardware hangs (or produces no completion interrupt) on this configuration; the
    /// model performs the operation anyway (or skips it when there is nothing sensible to do).
    #[error("real hardware hangs on this configuration: {0}")]
    HangsHardware(&'static str),
    /// The operation did nothing (e.g. start address 0, empty range).
    #[error("skipped: {0}")]
    Skipped(&'static str),
    /// A flag or combination whose behaviour is not verified on hardware.
    #[error("unverified configuration: {0}")]
    Unverified(&'static str),
    /// The fill target is not VRAM (hardware fills only VRAM; Citra fills any memory).
    #[error("memory fill outside VRAM at 0x{0:08X}")]
    FillOutsideVram(u32),
}

/// What an engine did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineOutcome {
    /// Physical range written: (first address, length in bytes); `None` if nothing was written.
    pub written: Option<(u32, u64)>,
    /// Warnings, in the order they arose.
    pub warnings: Vec<EngineWarning>,
}

/// Why an engine operation was not performed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// A source or destination range is (partly) outside mapped memory.
    #[error("{what} range 0x{addr:08X}..+0x{len:X} is not in mapped memory")]
    Unmapped {
        /// "input", "output" or "fill".
        what: &'static str,
        /// First physical address of the range.
        addr: u32,
        /// Length of the range in bytes.
        len: u64,
    },
    /// A pixel-format field holds an id without a format (5-7).
    #[error("invalid {side} pixel format id {id}")]
    InvalidFormat {
        /// "input" or "output".
        side: &'static str,
        /// The 3-bit field value.
        id: u32,
    },
    /// Scaling mode 3 (documented as invalid).
    #[error("invalid display-transfer scaling mode 3")]
    InvalidScaling,
    /// The transfer would produce more than [`MAX_TRANSFER_PIXELS`] pixels or touch more than
    /// [`MAX_TRANSFER_BYTES`] bytes on either side.
    #[error("display transfer of {width}x{height} pixels exceeds the supported size")]
    TooLarge {
        /// Output width in pixels.
        width: u32,
        /// Output height in pixels.
        height: u32,
    },
    /// A texture copy spans more than [`MAX_TRANSFER_BYTES`] on either side.
    #[error("texture copy of 0x{size:X} bytes exceeds the supported size")]
    CopyTooLarge {
        /// The size register (bytes).
        size: u32,
    },
}

impl EngineWarning {
    /// The warning as a [`Diagnostic`] for the event log (no draw index).
    pub fn to_diagnostic(&self) -> Diagnostic {
        let kind = match self {
            Self::HangsHardware(_) | Self::Unverified(_) => DiagKind::Unsupported,
            Self::Skipped(_) | Self::FillOutsideVram(_) => DiagKind::Other,
        };
        Diagnostic {
            kind,
            draw: None,
            detail: self.to_string(),
        }
    }
}

impl EngineOutcome {
    /// The warnings as [`Diagnostic`]s.
    pub fn diagnostics(&self) -> Vec<Diagnostic> {
        self.warnings
            .iter()
            .map(EngineWarning::to_diagnostic)
            .collect()
    }
}

impl EngineError {
    /// The error as a [`Diagnostic`] for the event log (no draw index): unmapped input ranges
    /// are [`DiagKind::UnmappedRead`], unmapped output or fill ranges
    /// [`DiagKind::UnmappedWrite`], everything else [`DiagKind::Unsupported`].
    pub fn to_diagnostic(&self) -> Diagnostic {
        let kind = match *self {
            Self::Unmapped {
                what: "input",
                addr,
                len,
            } => DiagKind::UnmappedRead { addr, len },
            Self::Unmapped { addr, len, .. } => DiagKind::UnmappedWrite { addr, len },
            _ => DiagKind::Unsupported,
        };
        Diagnostic {
            kind,
            draw: None,
            detail: self.to_string(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Memory fill

/// Width of the memory-fill pattern (control bits 8-9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum FillWidth {
    /// Bits 8-9 = 0: the low 16 bits of the value, little-endian, every 2 bytes.
    Bits16,
    /// Bits 8-9 = 1 or 3 (bit 8 set): bytes `v[7:0], v[15:8], v[23:16]` repeated.
    Bits24,
    /// Bits 8-9 = 2: the 32-bit value, little-endian, every 4 bytes.
    Bits32,
}

/// One memory-fill unit's registers, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MemoryFillConfig {
    /// First physical address (register +0x0 = PA >> 3).
    pub start: u32,
    /// One past the last physical address (register +0x4 = PA >> 3).
    pub end: u32,
    /// Fill value (register +0x8).
    pub value: u32,
    /// Pattern width (register +0xC bits 8-9).
    pub width: FillWidth,
    /// Register +0xC bit 0 (start / busy).
    pub start_bit: bool,
}

impl MemoryFillConfig {
    /// Decodes the four register words of one unit (start, end, value, control).
    /// Address fields are PA >> 3 (29 significant bits).
    pub fn from_words(start: u32, end: u32, value: u32, control: u32) -> Self {
        // HW: [3DB-E] bits 8-9: 0 = 16-bit, 1 or 3 = 24-bit, 2 = 32-bit; [C] tests bit 8 first,
        // which gives the same mapping.
        let width = if control & 0x100 != 0 {
            FillWidth::Bits24
        } else if control & 0x200 != 0 {
            FillWidth::Bits32
        } else {
            FillWidth::Bits16
        };
        Self {
            start: (start & 0x1FFF_FFFF) << 3,
            end: (end & 0x1FFF_FFFF) << 3,
            value,
            width,
            start_bit: control & 1 != 0,
        }
    }

    /// The repeating byte pattern written to memory.
    pub fn pattern(&self) -> ([u8; 4], usize) {
        let b = self.value.to_le_bytes();
        match self.width {
            FillWidth::Bits16 => (b, 2),
            FillWidth::Bits24 => (b, 3),
            FillWidth::Bits32 => (b, 4),
        }
    }
}

/// UNVERIFIED: whether a 24-bit fill stops exactly at `end` (our choice; Hydr8gon/3Beans writes
/// 16-bit units up to `end`) or completes the last 3-byte group, overrunning `end` by up to 2
/// bytes (\[C\]). The hardware test only covers lengths that are multiples of 3.
pub const FILL24_OVERRUNS_END: bool = false;

/// Performs a memory fill over `[start, end)`.
///
/// A start address of 0 or an empty range does nothing (a warning, not an error): GSP programs
/// the unused unit with zeros. A range outside mapped memory is an error.
pub fn memory_fill(
    mem: &mut PhysMem,
    cfg: &MemoryFillConfig,
) -> Result<EngineOutcome, EngineError> {
    let mut out = EngineOutcome::default();
    if cfg.start == 0 {
        out.warnings
            .push(EngineWarning::Skipped("memory fill with start address 0"));
        return Ok(out);
    }
    if cfg.end <= cfg.start {
        out.warnings
            .push(EngineWarning::Skipped("memory fill with end <= start"));
        return Ok(out);
    }
    let (bytes, n) = cfg.pattern();
    let mut len = u64::from(cfg.end - cfg.start);
    if FILL24_OVERRUNS_END && n == 3 {
        len = len.div_ceil(3) * 3;
    }
    if !mem.is_mapped(cfg.start, len) {
        return Err(EngineError::Unmapped {
            what: "fill",
            addr: cfg.start,
            len,
        });
    }
    if mem.region_of(cfg.start).map(|r| r.name) != Some(crate::memory::VRAM.name) {
        out.warnings.push(EngineWarning::FillOutsideVram(cfg.start));
    }
    // Write in chunks of a pre-filled buffer whose length (4080 = 12·340) is a multiple of
    // every pattern length, so each chunk starts at pattern phase 0.
    let mut chunk = [0u8; 4080];
    for (k, b) in chunk.iter_mut().enumerate() {
        *b = bytes[k % n];
    }
    let mut done = 0u64;
    while done < len {
        let step = (len - done).min(chunk.len() as u64);
        // ok: start + len is inside a mapped region (checked above), so it fits in u32.
        let addr = cfg.start + done as u32;
        mem.write(addr, &chunk[..step as usize])
            .map_err(|_| EngineError::Unmapped {
                what: "fill",
                addr: cfg.start,
                len,
            })?;
        done += step;
    }
    out.written = Some((cfg.start, len));
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Transfer engine registers

/// The transfer engine's raw register words (PA 0x10400C00-0x10400C28).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TransferRegs {
    /// 0xC00: input PA >> 3.
    pub input_addr: u32,
    /// 0xC04: output PA >> 3.
    pub output_addr: u32,
    /// 0xC08: display-transfer output width (bits 0-15), height (16-31).
    pub output_dim: u32,
    /// 0xC0C: display-transfer input width (bits 0-15), height (16-31).
    pub input_dim: u32,
    /// 0xC10: flags.
    pub flags: u32,
    /// 0xC20: texture-copy total size in bytes.
    pub copy_size: u32,
    /// 0xC24: texture-copy input line width (bits 0-15), gap (16-31), 16-byte units.
    pub copy_input: u32,
    /// 0xC28: texture-copy output line width, gap.
    pub copy_output: u32,
}

/// A decoded transfer request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Transfer {
    /// Flags bit 3 clear: display transfer.
    Display(DisplayTransferConfig),
    /// Flags bit 3 set: texture copy (raw bytes with line gaps).
    TextureCopy(TextureCopyConfig),
}

impl TransferRegs {
    /// Decodes the registers into the operation selected by flags bit 3.
    pub fn decode(&self) -> Transfer {
        if self.flags & 8 != 0 {
            Transfer::TextureCopy(TextureCopyConfig::from_words(
                self.input_addr,
                self.output_addr,
                self.copy_size,
                self.copy_input,
                self.copy_output,
            ))
        } else {
            Transfer::Display(DisplayTransferConfig::from_words(
                self.input_addr,
                self.output_addr,
                self.output_dim,
                self.input_dim,
                self.flags,
            ))
        }
    }
}

/// Runs the transfer the registers describe.
pub fn run_transfer(mem: &mut PhysMem, regs: &TransferRegs) -> Result<EngineOutcome, EngineError> {
    run_transfer_threads(mem, regs, 1)
}

/// [`run_transfer`] with a display transfer's conversion split over up to `threads` workers
/// (bit-identical for any count; see [`display_transfer_threads`]).
pub fn run_transfer_threads(
    mem: &mut PhysMem,
    regs: &TransferRegs,
    threads: usize,
) -> Result<EngineOutcome, EngineError> {
    run_transfer_with(mem, regs, threads, &mut TransferScratch::default())
}

/// [`run_transfer_threads`] converting through `scratch`'s buffers (kept by the caller from one
/// transfer to the next, so a frame's transfers do not allocate a screen's worth each).
pub fn run_transfer_with(
    mem: &mut PhysMem,
    regs: &TransferRegs,
    threads: usize,
    scratch: &mut TransferScratch,
) -> Result<EngineOutcome, EngineError> {
    match regs.decode() {
        Transfer::Display(c) => display_transfer_with(mem, &c, threads, scratch),
        Transfer::TextureCopy(c) => texture_copy(mem, &c),
    }
}

/// The input and output buffers a display transfer converts through, reused between transfers.
/// Allocated per transfer, a 400x240 RGBA8 screen's 384 KB of input was mapped afresh by the
/// allocator and faulted in page by page by the kernel each time (50 replays of the stress
/// demo: 37.4 k page faults before these buffers were kept, 30.3 k after). Buffers larger than
/// [`TransferScratch::KEEP_BYTES`] are freed after the transfer, so at most that much stays
/// allocated between transfers whatever the trace asks for.
#[derive(Debug, Default)]
pub struct TransferScratch {
    src: Vec<u8>,
    dst: Vec<u8>,
}

impl TransferScratch {
    /// Buffers up to this many bytes each are kept between transfers (4 MiB: two 1024x1024
    /// RGBA8 images; the 3DS screens need 384 KB).
    pub const KEEP_BYTES: usize = 4 << 20;

    /// Frees a buffer that grew beyond [`TransferScratch::KEEP_BYTES`].
    fn trim(&mut self) {
        for v in [&mut self.src, &mut self.dst] {
            if v.capacity() > Self::KEEP_BYTES {
                *v = Vec::new();
            }
        }
    }

    /// Bytes the buffers hold allocated.
    pub fn capacity(&self) -> usize {
        self.src.capacity() + self.dst.capacity()
    }
}

/// The first `len` bytes of `buf`, grown (with zeros) if shorter. The bytes are whatever the
/// last transfer left: every caller overwrites all `len` of them before reading any (zeroing
/// them each time was 1.5% of the stress demo's replay).
fn prefix(buf: &mut Vec<u8>, len: usize) -> &mut [u8] {
    if buf.len() < len {
        buf.resize(len, 0);
    }
    &mut buf[..len]
}

// ---------------------------------------------------------------------------------------------
// Display transfer

/// Display-transfer box filter (flags bits 24-25).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Scaling {
    /// 0: none.
    None,
    /// 1: 2×1 (halve the width).
    Half2x1,
    /// 2: 2×2 (halve both).
    Half2x2,
    /// 3: invalid.
    Invalid,
}

/// A display transfer (flags bit 3 clear), decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DisplayTransferConfig {
    /// Input physical address (register × 8).
    pub input_addr: u32,
    /// Output physical address (register × 8).
    pub output_addr: u32,
    /// Input width in pixels (0xC0C bits 0-15).
    pub input_width: u32,
    /// Input height in pixels (0xC0C bits 16-31).
    pub input_height: u32,
    /// Output width in pixels before scaling (0xC08 bits 0-15).
    pub output_width: u32,
    /// Output height in pixels before scaling (0xC08 bits 16-31).
    pub output_height: u32,
    /// Bit 0: flip vertically.
    pub flip_vertically: bool,
    /// Bit 1: input linear, output tiled.
    pub input_linear: bool,
    /// Bit 2: crop (input rows are `input_width` apart).
    pub crop: bool,
    /// Bit 5: no tiling conversion (see [`NO_SWIZZLE_MODE`]).
    pub no_swizzle: bool,
    /// Bit 16: 32×32 block tiling (see [`HONOUR_BLOCK32_FLAG`]).
    pub block32: bool,
    /// Bits 8-10: input format, external numbering.
    pub input_format_id: u32,
    /// Bits 12-14: output format, external numbering.
    pub output_format_id: u32,
    /// Bits 24-25: box filter.
    pub scaling: Scaling,
}

impl DisplayTransferConfig {
    /// Decodes the register words: input/output addresses (PA >> 3), output and input
    /// dimensions, flags.
    pub fn from_words(
        input_addr: u32,
        output_addr: u32,
        output_dim: u32,
        input_dim: u32,
        flags: u32,
    ) -> Self {
        Self {
            input_addr: (input_addr & 0x1FFF_FFFF) << 3,
            output_addr: (output_addr & 0x1FFF_FFFF) << 3,
            input_width: input_dim & 0xFFFF,
            input_height: input_dim >> 16,
            output_width: output_dim & 0xFFFF,
            output_height: output_dim >> 16,
            flip_vertically: flags & 1 != 0,
            input_linear: flags & 2 != 0,
            crop: flags & 4 != 0,
            no_swizzle: flags & 0x20 != 0,
            block32: flags & 0x1_0000 != 0,
            input_format_id: (flags >> 8) & 7,
            output_format_id: (flags >> 12) & 7,
            scaling: match (flags >> 24) & 3 {
                0 => Scaling::None,
                1 => Scaling::Half2x1,
                2 => Scaling::Half2x2,
                _ => Scaling::Invalid,
            },
        }
    }

    /// (input layout, output layout).
    pub fn layouts(&self) -> (TileMode, TileMode) {
        let tiled = if self.block32 && HONOUR_BLOCK32_FLAG {
            TileMode::Block32
        } else {
            TileMode::Tiled8
        };
        match (self.input_linear, self.no_swizzle) {
            (false, false) => (tiled, TileMode::Linear),
            (true, false) => (TileMode::Linear, tiled),
            (linear_in, true) => match NO_SWIZZLE_MODE {
                NoSwizzleMode::KeepInputLayout if linear_in => (TileMode::Linear, TileMode::Linear),
                NoSwizzleMode::KeepInputLayout | NoSwizzleMode::AlwaysTiled => (tiled, tiled),
                NoSwizzleMode::AlwaysLinear => (TileMode::Linear, TileMode::Linear),
            },
        }
    }

    /// Output size in pixels after scaling: width halved for 2×1 and 2×2, height for 2×2.
    pub fn output_size(&self) -> (u32, u32) {
        match self.scaling {
            Scaling::None | Scaling::Invalid => (self.output_width, self.output_height),
            Scaling::Half2x1 => (self.output_width >> 1, self.output_height),
            Scaling::Half2x2 => (self.output_width >> 1, self.output_height >> 1),
        }
    }

    /// Row stride of the input in pixels (see [`CROP_OFF_USES_OUTPUT_WIDTH`]).
    pub fn input_stride(&self) -> u32 {
        if self.crop || !CROP_OFF_USES_OUTPUT_WIDTH {
            self.input_width
        } else {
            self.output_width
        }
    }
}

/// Largest pixel index + 1 touched in an image of `layout` with row stride `stride` when
/// columns `0..cols` and rows `0..rows` are addressed (u64, no overflow).
fn index_span(layout: TileMode, cols: u32, rows: u32, stride: u32) -> u64 {
    if cols == 0 || rows == 0 {
        return 0;
    }
    let (x, y, s) = (u64::from(cols - 1), u64::from(rows - 1), u64::from(stride));
    match layout {
        TileMode::Linear => y * s + x + 1,
        TileMode::Tiled8 => (y & !7) * s + (x & !7) * 8 + 64,
        TileMode::Block32 => (y & !31) * s + (x & !31) * 32 + 1024,
    }
}

/// The formats in the order of the const-generic format parameters of [`convert_rows`].
const FORMATS: [ColorFormat; 5] = [
    ColorFormat::Rgba8,
    ColorFormat::Rgb8,
    ColorFormat::Rgb565,
    ColorFormat::Rgb5a1,
    ColorFormat::Rgba4,
];

/// What one display transfer converts: the input bytes (read from its aligned-down address)
/// and the geometry.
struct TransferJob<'a> {
    src: &'a [u8],
    in_layout: TileMode,
    out_layout: TileMode,
    stride: u32,
    sx: u32,
    sy: u32,
    out_w: u32,
    out_h: u32,
    flip: bool,
    /// Per output column x: the column part of the input index of `(x << sx, 0)` (layout
    /// indices split into a row part and a column part, see [`TileMode::index`]).
    col_in: Vec<u32>,
    /// Per output column x: the column part of the output index.
    col_out: Vec<u32>,
    /// The largest entry of `col_in` (0 when empty): with it a row is checked once for input
    /// bytes in range instead of every pixel ([`convert_row_in_range`]).
    col_in_max: u32,
    /// The smallest and largest entries of `col_out` (0 when empty), likewise for the output.
    col_out_min: u32,
    col_out_max: u32,
}

impl<'a> TransferJob<'a> {
    /// The job for an output of `out_w` × `out_h` pixels; the column tables are built here.
    #[allow(clippy::too_many_arguments)]
    fn new(
        src: &'a [u8],
        in_layout: TileMode,
        out_layout: TileMode,
        stride: u32,
        (sx, sy): (u32, u32),
        (out_w, out_h): (u32, u32),
        flip: bool,
    ) -> Self {
        let col_in: Vec<u32> = (0..out_w)
            .map(|x| in_layout.index(x << sx, 0, stride))
            .collect();
        let col_out: Vec<u32> = (0..out_w).map(|x| out_layout.index(x, 0, out_w)).collect();
        Self {
            src,
            in_layout,
            out_layout,
            stride,
            sx,
            sy,
            out_w,
            out_h,
            flip,
            col_in_max: col_in.iter().copied().max().unwrap_or(0),
            col_out_min: col_out.iter().copied().min().unwrap_or(0),
            col_out_max: col_out.iter().copied().max().unwrap_or(0),
            col_in,
            col_out,
        }
    }
}

/// Below this many output pixels a transfer is converted on the calling thread.
const PARALLEL_TRANSFER_PIXELS: u64 = 16 * 1024;

/// Converts every output pixel of `job` into `dst` (the output bytes from the output address).
/// With `threads` > 1 and an output layout whose row groups (1 row linear, 8 rows tiled, 32
/// rows in 32×32 blocks) own disjoint byte ranges, the groups are dealt out to rayon workers;
/// each output byte is computed from the input alone, so the bytes are the same for any count.
fn convert_parallel(
    job: &TransferJob,
    in_fmt: ColorFormat,
    out_fmt: ColorFormat,
    dst: &mut [u8],
    threads: usize,
) {
    let convert = convert_fn(in_fmt, out_fmt);
    let (group_rows, edge) = match job.out_layout {
        TileMode::Linear => (1u32, 1u32),
        TileMode::Tiled8 => (8, 8),
        TileMode::Block32 => (32, 32),
    };
    let group_bytes = group_rows as usize * job.out_w as usize * out_fmt.bytes_per_pixel();
    let split = threads > 1
        && u64::from(job.out_w) * u64::from(job.out_h) >= PARALLEL_TRANSFER_PIXELS
        && job.out_w.is_multiple_of(edge)
        && group_bytes > 0;
    if !split {
        convert(job, dst, 0, 0..job.out_h);
        return;
    }
    let groups = job.out_h.div_ceil(group_rows) as usize;
    let per_worker = groups.div_ceil(threads).max(1);
    let share_bytes = per_worker * group_bytes;
    // One contiguous run of row groups per share; the calling thread converts the first while
    // the pool converts the others (one hand-off, and the caller does not sleep until a woken
    // worker finishes, as with the pixel pipeline's batches).
    let run = |k: usize, chunk: &mut [u8]| {
        // ok: k · per_worker < groups <= out_h, which fits in u32.
        let first = (k * per_worker) as u32 * group_rows;
        let last = first.saturating_add(per_worker as u32 * group_rows);
        let rows = first.min(job.out_h)..last.min(job.out_h);
        convert(job, chunk, k * share_bytes, rows);
    };
    let mut shares = dst.chunks_mut(share_bytes).enumerate();
    let first = shares.next();
    rayon::in_place_scope(|scope| {
        let run = &run;
        for (k, chunk) in shares {
            scope.spawn(move |_| run(k, chunk));
        }
        if let Some((k, chunk)) = first {
            run(k, chunk);
        }
    });
}

/// The row converter for one format pair.
type ConvertRows = fn(&TransferJob, &mut [u8], usize, std::ops::Range<u32>);

fn convert_fn(in_fmt: ColorFormat, out_fmt: ColorFormat) -> ConvertRows {
    fn with_in<const I: usize>(out_fmt: ColorFormat) -> ConvertRows {
        match out_fmt {
            ColorFormat::Rgba8 => convert_rows::<I, 0>,
            ColorFormat::Rgb8 => convert_rows::<I, 1>,
            ColorFormat::Rgb565 => convert_rows::<I, 2>,
            ColorFormat::Rgb5a1 => convert_rows::<I, 3>,
            ColorFormat::Rgba4 => convert_rows::<I, 4>,
        }
    }
    match in_fmt {
        ColorFormat::Rgba8 => with_in::<0>(out_fmt),
        ColorFormat::Rgb8 => with_in::<1>(out_fmt),
        ColorFormat::Rgb565 => with_in::<2>(out_fmt),
        ColorFormat::Rgb5a1 => with_in::<3>(out_fmt),
        ColorFormat::Rgba4 => with_in::<4>(out_fmt),
    }
}

/// Converts output rows `rows` of `job` into `dst`, which holds the output bytes from byte
/// `base` on (bytes outside `dst` are not written). `I` and `O` index [`FORMATS`].
///
/// For every output pixel (x, oy) the input pixel `(x << sx, y << sy)` (y = oy, or
/// `out_h − 1 − oy` when flipping) and the next 1 or 3 pixels in memory for the box filters are
/// read in the input layout (missing input bytes read as a zero pixel), decoded, averaged,
/// encoded and stored in the output layout.
///
/// A row whose every input and output byte lies inside the buffers (all rows of a transfer
/// that fits, checked once per row) takes [`convert_row_in_range`], with the filter width a
/// constant and no per-pixel range checks; any other row takes [`convert_row_checked`], the
/// per-pixel definition. Both write the same bytes (oracle test in `engines/tests.rs`).
fn convert_rows<const I: usize, const O: usize>(
    job: &TransferJob,
    dst: &mut [u8],
    base: usize,
    rows: std::ops::Range<u32>,
) {
    let taps = 1u32 << (job.sx + job.sy);
    for oy in rows {
        let done = match taps {
            1 => convert_row_in_range::<I, O, 1>(job, dst, base, oy),
            2 => convert_row_in_range::<I, O, 2>(job, dst, base, oy),
            _ => convert_row_in_range::<I, O, 4>(job, dst, base, oy),
        };
        if !done {
            convert_row_checked::<I, O>(job, dst, base, oy);
        }
    }
}

/// [`convert_rows`] pixel by pixel with every range checked: the definition the fast rows are
/// tested against.
#[cfg(test)]
fn convert_rows_reference<const I: usize, const O: usize>(
    job: &TransferJob,
    dst: &mut [u8],
    base: usize,
    rows: std::ops::Range<u32>,
) {
    for oy in rows {
        convert_row_checked::<I, O>(job, dst, base, oy);
    }
}

/// Input and output row bases of output row `oy` (index(x, y) = index(0, y) + index(x, 0),
/// wrapping, in every layout).
#[inline(always)]
fn row_bases(job: &TransferJob, oy: u32) -> (u32, u32) {
    let y = if job.flip { job.out_h - 1 - oy } else { oy };
    let row_in = job.in_layout.index(0, y << job.sy, job.stride);
    let row_out = job.out_layout.index(0, oy, job.out_w);
    (row_in, row_out)
}

/// Output row `oy` of [`convert_rows`] when all of it is in range, `TAPS` (1, 2 or 4) input
/// pixels per output pixel. Returns false, writing nothing, when some input index of the row
/// would wrap or some input or output byte lies outside `job.src` / `dst` (the row then needs
/// [`convert_row_checked`]).
#[inline(always)]
fn convert_row_in_range<const I: usize, const O: usize, const TAPS: usize>(
    job: &TransferJob,
    dst: &mut [u8],
    base: usize,
    oy: u32,
) -> bool {
    let (in_fmt, out_fmt) = (FORMATS[I], FORMATS[O]);
    let (ibpp, obpp) = (in_fmt.bytes_per_pixel(), out_fmt.bytes_per_pixel());
    let (row_in, row_out) = row_bases(job, oy);
    // The largest input pixel index read and the output index range written, in u64: when
    // none passes u32::MAX, `row + col` does not wrap for any column (the checked path wraps
    // the base sum in u32 like the layout indices do).
    let in_last = u64::from(row_in) + u64::from(job.col_in_max);
    let out_first = u64::from(row_out) + u64::from(job.col_out_min);
    let out_last = u64::from(row_out) + u64::from(job.col_out_max);
    let fits = in_last <= u64::from(u32::MAX)
        && out_last <= u64::from(u32::MAX)
        && (in_last + TAPS as u64) * ibpp as u64 <= job.src.len() as u64
        && out_first * obpp as u64 >= base as u64
        && (out_last + 1) * obpp as u64 <= (base + dst.len()) as u64;
    if !fits {
        return false;
    }
    let src = job.src;
    // In range by the checks above (every index lies between the row's extremes).
    let pixel = |at: usize| -> Rgba {
        let mut b = [0u8; 4];
        b[..ibpp].copy_from_slice(&src[at..at + ibpp]);
        in_fmt.decode_word(b)
    };
    for (&cin, &cout) in job.col_in.iter().zip(&job.col_out) {
        let si = (row_in + cin) as usize * ibpp;
        let c = match TAPS {
            1 => pixel(si),
            2 => avg2(pixel(si), pixel(si + ibpp)),
            _ => avg4(
                pixel(si),
                pixel(si + ibpp),
                pixel(si + 2 * ibpp),
                pixel(si + 3 * ibpp),
            ),
        };
        let d = (row_out + cout) as usize * obpp - base;
        dst[d..d + obpp].copy_from_slice(&out_fmt.encode_word(c)[..obpp]);
    }
    true
}

/// Output row `oy` of [`convert_rows`], every pixel's input and output range checked (input
/// bytes past the source read as a zero pixel, output bytes outside `dst` are skipped).
fn convert_row_checked<const I: usize, const O: usize>(
    job: &TransferJob,
    dst: &mut [u8],
    base: usize,
    oy: u32,
) {
    let (in_fmt, out_fmt) = (FORMATS[I], FORMATS[O]);
    let (ibpp, obpp) = (in_fmt.bytes_per_pixel(), out_fmt.bytes_per_pixel());
    let src = job.src;
    let pixel = |i: u64| -> Rgba {
        let at = (i * ibpp as u64) as usize;
        match src.get(at..at + ibpp) {
            Some(s) => {
                let mut b = [0u8; 4];
                b[..ibpp].copy_from_slice(s);
                in_fmt.decode_word(b)
            }
            None => [0; 4],
        }
    };
    let taps = 1u32 << (job.sx + job.sy);
    let (row_in, row_out) = row_bases(job, oy);
    for (&cin, &cout) in job.col_in.iter().zip(&job.col_out) {
        let si = u64::from(row_in.wrapping_add(cin));
        let c = match taps {
            1 => pixel(si),
            2 => avg2(pixel(si), pixel(si + 1)),
            _ => avg4(pixel(si), pixel(si + 1), pixel(si + 2), pixel(si + 3)),
        };
        let di = row_out.wrapping_add(cout) as usize * obpp;
        let Some(local) = di.checked_sub(base) else {
            continue;
        };
        if let Some(d) = dst.get_mut(local..local + obpp) {
            d.copy_from_slice(&out_fmt.encode_word(c)[..obpp]);
        }
    }
}

/// True for the format pairs that hang real hardware or give no completion interrupt.
fn pair_hangs(input: ColorFormat, output: ColorFormat) -> bool {
    let wide = |f: ColorFormat| matches!(f, ColorFormat::Rgba8 | ColorFormat::Rgb8);
    // HW: hwtests freeze on RGB8 → RGB565 / RGB5A1 (and skip RGB8 → RGBA4); [3DB-E] lists
    // RGB8 → RGBA8 and 16-bit → 24/32-bit as non-working too.
    (input == ColorFormat::Rgb8 && output != ColorFormat::Rgb8) || (!wide(input) && wide(output))
}

/// Performs a display transfer: format conversion, tiled ↔ linear, box filter, flip.
///
/// For every output pixel (x, y) of the scaled output size, the input pixel
/// `(x << sx, y << sy)` (plus the next 1 or 3 pixels in memory for the box filters) is read
/// with the input layout and stride ([`DisplayTransferConfig::input_stride`]), converted, and
/// written at output row `flip ? h − 1 − y : y` with the output layout (stride = scaled output
/// width).
pub fn display_transfer(
    mem: &mut PhysMem,
    cfg: &DisplayTransferConfig,
) -> Result<EngineOutcome, EngineError> {
    display_transfer_threads(mem, cfg, 1)
}

/// [`display_transfer`] with the pixel conversion split over up to `threads` rayon workers
/// (bands of output rows; the result does not depend on `threads`).
pub fn display_transfer_threads(
    mem: &mut PhysMem,
    cfg: &DisplayTransferConfig,
    threads: usize,
) -> Result<EngineOutcome, EngineError> {
    display_transfer_with(mem, cfg, threads, &mut TransferScratch::default())
}

/// [`display_transfer_threads`] converting through `scratch`'s buffers.
pub fn display_transfer_with(
    mem: &mut PhysMem,
    cfg: &DisplayTransferConfig,
    threads: usize,
    scratch: &mut TransferScratch,
) -> Result<EngineOutcome, EngineError> {
    let result = display_transfer_in(mem, cfg, threads, scratch);
    scratch.trim();
    result
}

fn display_transfer_in(
    mem: &mut PhysMem,
    cfg: &DisplayTransferConfig,
    threads: usize,
    scratch: &mut TransferScratch,
) -> Result<EngineOutcome, EngineError> {
    let mut out = EngineOutcome::default();
    let in_fmt =
        ColorFormat::from_external_id(cfg.input_format_id).ok_or(EngineError::InvalidFormat {
            side: "input",
            id: cfg.input_format_id,
        })?;
    let out_fmt =
        ColorFormat::from_external_id(cfg.output_format_id).ok_or(EngineError::InvalidFormat {
            side: "output",
            id: cfg.output_format_id,
        })?;
    let (sx, sy) = match cfg.scaling {
        Scaling::None => (0, 0),
        Scaling::Half2x1 => (1, 0),
        Scaling::Half2x2 => (1, 1),
        Scaling::Invalid => return Err(EngineError::InvalidScaling),
    };
    let (out_w, out_h) = cfg.output_size();
    if out_w == 0 || out_h == 0 {
        out.warnings.push(EngineWarning::Skipped(
            "display transfer with an empty output",
        ));
        return Ok(out);
    }
    if u64::from(out_w) * u64::from(out_h) > MAX_TRANSFER_PIXELS {
        return Err(EngineError::TooLarge {
            width: out_w,
            height: out_h,
        });
    }
    if pair_hangs(in_fmt, out_fmt) {
        out.warnings
            .push(EngineWarning::HangsHardware("display transfer format pair"));
    }
    if cfg.block32 {
        out.warnings.push(EngineWarning::Unverified(
            "display transfer flag bit 16 (32x32 blocks)",
        ));
    }
    if cfg.scaling != Scaling::None && cfg.input_linear {
        out.warnings
            .push(EngineWarning::Unverified("box filter with linear input"));
    }
    if !cfg.crop && cfg.input_width > cfg.output_width {
        // HW: without the crop flag the extra input columns are not skipped (module doc).
        out.warnings.push(EngineWarning::Unverified(
            "input wider than output without the crop flag",
        ));
    }

    let (in_layout, out_layout) = cfg.layouts();
    let stride = cfg.input_stride();
    let (ibpp, obpp) = (in_fmt.bytes_per_pixel(), out_fmt.bytes_per_pixel());
    let taps = 1u64 << (sx + sy);
    let in_pixels = index_span(in_layout, out_w << sx, out_h << sy, stride) + taps - 1;
    let in_len = in_pixels * ibpp as u64;
    let out_len = index_span(out_layout, out_w, out_h, out_w) * obpp as u64;
    if in_len > MAX_TRANSFER_BYTES || out_len > MAX_TRANSFER_BYTES {
        return Err(EngineError::TooLarge {
            width: out_w,
            height: out_h,
        });
    }
    // HW: hardware fact FB-2 (Citra issue #1336, photos of a 3DS): the source address is
    // effectively aligned down to 16 bytes. UNVERIFIED for the destination (kept as given).
    let input_addr = cfg.input_addr & !(TEXCOPY_SOURCE_ALIGN - 1);
    if !mem.is_mapped(input_addr, in_len) {
        return Err(EngineError::Unmapped {
            what: "input",
            addr: input_addr,
            len: in_len,
        });
    }
    if !mem.is_mapped(cfg.output_addr, out_len) {
        return Err(EngineError::Unmapped {
            what: "output",
            addr: cfg.output_addr,
            len: out_len,
        });
    }
    let err_in = EngineError::Unmapped {
        what: "input",
        addr: cfg.input_addr,
        len: in_len,
    };
    let TransferScratch { src, dst } = scratch;
    // The lengths are within MAX_TRANSFER_BYTES and mapped (checked above).
    let src = prefix(src, in_len as usize);
    mem.read(cfg.input_addr, src).map_err(|_| err_in)?;
    let err_out = EngineError::Unmapped {
        what: "output",
        addr: cfg.output_addr,
        len: out_len,
    };
    // Read-modify-write keeps bytes of partially covered tiles intact; an output whose every
    // byte is written (whole tiles or blocks, or linear rows) need not be read first.
    let edge = match out_layout {
        TileMode::Linear => 1,
        TileMode::Tiled8 => 8,
        TileMode::Block32 => 32,
    };
    let covered = out_w.is_multiple_of(edge) && out_h.is_multiple_of(edge);
    // Covered: the conversion writes every byte of `dst`; otherwise it is read first.
    let dst = prefix(dst, out_len as usize);
    if !covered {
        mem.read(cfg.output_addr, dst)
            .map_err(|_| err_out.clone())?;
    }

    let job = TransferJob::new(
        src,
        in_layout,
        out_layout,
        stride,
        (sx, sy),
        (out_w, out_h),
        cfg.flip_vertically,
    );
    convert_parallel(&job, in_fmt, out_fmt, dst, threads);
    mem.write(cfg.output_addr, dst).map_err(|_| err_out)?;
    out.written = Some((cfg.output_addr, out_len));
    Ok(out)
}

/// `(a + b) / 2` per channel, truncating.
#[inline]
fn avg2(a: Rgba, b: Rgba) -> Rgba {
    std::array::from_fn(|i| ((u16::from(a[i]) + u16::from(b[i])) / 2) as u8)
}

/// `((a + b) + (c + d)) / 4` per channel, truncating.
#[inline]
fn avg4(a: Rgba, b: Rgba, c: Rgba, d: Rgba) -> Rgba {
    std::array::from_fn(|i| {
        ((u16::from(a[i]) + u16::from(b[i]) + u16::from(c[i]) + u16::from(d[i])) / 4) as u8
    })
}

// ---------------------------------------------------------------------------------------------
// Texture copy

/// A texture copy (flags bit 3 set), decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TextureCopyConfig {
    /// Input physical address (register × 8).
    pub input_addr: u32,
    /// Output physical address (register × 8).
    pub output_addr: u32,
    /// Total bytes (0xC20; the low 4 bits are ignored by the copy).
    pub size: u32,
    /// Input line width in bytes (0xC24 bits 0-15 × 16).
    pub input_width: u32,
    /// Input gap in bytes after each line (0xC24 bits 16-31 × 16).
    pub input_gap: u32,
    /// Output line width in bytes (0xC28 bits 0-15 × 16).
    pub output_width: u32,
    /// Output gap in bytes after each line (0xC28 bits 16-31 × 16).
    pub output_gap: u32,
}

impl TextureCopyConfig {
    /// Decodes the register words: addresses (PA >> 3), size, input and output width/gap words.
    pub fn from_words(
        input_addr: u32,
        output_addr: u32,
        size: u32,
        input: u32,
        output: u32,
    ) -> Self {
        Self {
            input_addr: (input_addr & 0x1FFF_FFFF) << 3,
            output_addr: (output_addr & 0x1FFF_FFFF) << 3,
            size,
            input_width: (input & 0xFFFF) * 16,
            input_gap: (input >> 16) * 16,
            output_width: (output & 0xFFFF) * 16,
            output_gap: (output >> 16) * 16,
        }
    }
}

/// Alignment (bytes) the texture copy applies to its source address (hardware fact FB-2).
pub const TEXCOPY_SOURCE_ALIGN: u32 = 16;

/// Bytes spanned by `total` bytes copied in lines of `width` bytes separated by `gap` bytes.
fn copy_span(total: u64, width: u64, gap: u64) -> u64 {
    let lines = total.div_ceil(width);
    total + lines.saturating_sub(1) * gap
}

/// Performs a texture copy (\[C\] `TextureCopy` semantics): `size & ~15` bytes are copied; each
/// side reads/writes lines of its width and skips its gap after every full line; a side whose
/// gap is 0 is contiguous (its width is ignored). Size 0, or a zero width with a non-zero gap,
/// hangs real hardware: the model copies nothing and warns.
pub fn texture_copy(
    mem: &mut PhysMem,
    cfg: &TextureCopyConfig,
) -> Result<EngineOutcome, EngineError> {
    let mut out = EngineOutcome::default();
    let total = u64::from(cfg.size & !15);
    if total == 0 {
        out.warnings
            .push(EngineWarning::HangsHardware("texture copy of size 0"));
        return Ok(out);
    }
    let in_w = if cfg.input_gap == 0 {
        total
    } else {
        u64::from(cfg.input_width)
    };
    let out_w = if cfg.output_gap == 0 {
        total
    } else {
        u64::from(cfg.output_width)
    };
    if in_w == 0 || out_w == 0 {
        out.warnings.push(EngineWarning::HangsHardware(
            "texture copy with line width 0 and a gap",
        ));
        return Ok(out);
    }
    let (in_gap, out_gap) = (u64::from(cfg.input_gap), u64::from(cfg.output_gap));
    let in_len = copy_span(total, in_w, in_gap);
    let out_len = copy_span(total, out_w, out_gap);
    if in_len > MAX_TRANSFER_BYTES || out_len > MAX_TRANSFER_BYTES {
        return Err(EngineError::CopyTooLarge { size: cfg.size });
    }
    // HW: hardware fact FB-2 (Citra issue #1336, photos of a 3DS): the source address is
    // effectively aligned down to 16 bytes. UNVERIFIED for the destination (kept as given).
    let input_addr = cfg.input_addr & !(TEXCOPY_SOURCE_ALIGN - 1);
    if !mem.is_mapped(input_addr, in_len) {
        return Err(EngineError::Unmapped {
            what: "input",
            addr: input_addr,
            len: in_len,
        });
    }
    if !mem.is_mapped(cfg.output_addr, out_len) {
        return Err(EngineError::Unmapped {
            what: "output",
            addr: cfg.output_addr,
            len: out_len,
        });
    }
    // ok: both spans are inside mapped regions, which end below 2^32, so offsets fit in u32.
    let (mut src, mut dst) = (u64::from(input_addr), u64::from(cfg.output_addr));
    let (mut in_left, mut out_left, mut remaining) = (in_w, out_w, total);
    let mut buf = [0u8; 4096];
    while remaining > 0 {
        let n = in_left.min(out_left).min(remaining).min(buf.len() as u64);
        let chunk = &mut buf[..n as usize];
        let err = |what, addr: u64| EngineError::Unmapped {
            what,
            addr: addr as u32,
            len: n,
        };
        mem.read(src as u32, chunk).map_err(|_| err("input", src))?;
        mem.write(dst as u32, chunk)
            .map_err(|_| err("output", dst))?;
        src += n;
        dst += n;
        remaining -= n;
        in_left -= n;
        out_left -= n;
        if in_left == 0 {
            src += in_gap;
            in_left = in_w;
        }
        if out_left == 0 {
            dst += out_gap;
            out_left = out_w;
        }
    }
    out.written = Some((cfg.output_addr, out_len));
    Ok(out)
}

#[cfg(test)]
mod tests;
