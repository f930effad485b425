//! Citra's GPU trace format, CiTrace (`.ctf`) version 1: reader, byte-exact writer and a builder
//! for traces made from code.
//!
//! Stage: input of the trace player. Input: a `.ctf` file (any random-access byte source).
//! Output: the header, the initial-state arrays (external GPU, LCD and PICA register files,
//! default attributes, shader program/swizzle/float-uniform memories) and the ordered stream of
//! frame markers, memory loads and MMIO register writes; memory-load payloads ("blobs") are read
//! lazily from the source. Registers read: none (the command-list kick registers at
//! PA 0x104018E0/E8/F0 are tracked only to list command-list submissions, see
//! [`CiTrace::submissions`]).
//!
//! Reference: `pica-core.md` §9.7 and `pica-raster.md` §11; Citra `src/core/tracer/citrace.h`,
//! `recorder.cpp` (read, not copied).
//!
//! # Layout (all integers little-endian, no padding)
//!
//! | offset | field |
//! |---|---|
//! | 0x00 | magic `"CiTr"` |
//! | 0x04 | version (u32) = 1 |
//! | 0x08 | header size (u32) = 0x64 |
//! | 0x0C + 8·i | section i: file offset (u32), size in **u32 words** (u32), i in [`Section::ALL`] order |
//! | 0x5C | stream offset (u32, absolute file offset of the first element) |
//! | 0x60 | stream size = **number of 20-byte elements**, not bytes |
//!
//! Stream element: u32 kind (0xE1 frame marker, 0xE2 memory load, 0xE3 register write) and a
//! 16-byte payload. Memory load: file offset of the blob, size in bytes, physical address, pad.
//! Register write: see [`RegWriteLayout`] (the two Citra generations disagree).
//!
//! # Traps of the recorder (documented in the references; handled or surfaced here)
//!
//! * The stream size counts elements, not bytes.
//! * Citra's GSP writes the command-list size register (PA 0x104018E0) in **bytes**, not bytes >> 3
//!   as hardware expects; [`CiTrace::submissions`] reports it as bytes.
//! * The w words (index 3 of each 4-word group) of the default attributes and VS float uniforms are
//!   never written by the recorder: uninitialised memory. They are kept verbatim.
//! * The GS sections are always empty in Citra's traces; lighting/fog/proctex LUTs and memory
//!   contents at the start are not captured at all.
//! * Blobs are deduplicated (Citra: by CRC-32): several memory loads may share one file offset.
//!   Size-0 loads (textures of formats the recorder cannot size) are normal.
//! * Command lists reached through CMDBUF_JUMP and draws on Citra's hardware-shader path have no
//!   memory loads.
//!
//! # Byte-exact round trip
//!
//! [`CiTrace::write_to`] serialises the parsed header, initial-state sections and stream table and
//! copies the blobs and any bytes that no structure covers ([`CiTrace::gaps`]) from the source,
//! each at its original offset, so reading then writing any valid file gives identical bytes.
//! [`CiTraceBuilder`] writes the canonical layout of Citra's recorder; a trace made by Citra's
//! recorder and fed through [`CiTraceBuilder::from_trace`] also comes out identical.

mod builder;

pub use builder::{BuildError, CiTraceBuilder};

use serde::Serialize;
use std::collections::BTreeMap;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;
use thiserror::Error;

/// The magic bytes at offset 0.
pub const MAGIC: [u8; 4] = *b"CiTr";
/// The only format version (u32 at offset 4).
pub const VERSION: u32 = 1;
/// Size of the header in bytes (u32 at offset 8 holds it).
pub const HEADER_SIZE: u32 = 0x64;
/// Size of one stream element in bytes (u32 kind + 16-byte payload).
pub const ELEMENT_SIZE: u32 = 20;

/// Stream element kind: frame marker.
pub const KIND_FRAME_MARKER: u32 = 0xE1;
/// Stream element kind: memory load.
pub const KIND_MEMORY_LOAD: u32 = 0xE2;
/// Stream element kind: register write.
pub const KIND_REGISTER_WRITE: u32 = 0xE3;

/// Physical base address of the external GPU register block (Citra models 0x1000 words).
pub const GPU_REGS_BASE: u32 = 0x1040_0000;
/// Number of 32-bit words in the external GPU register block as Citra models it.
pub const GPU_REGS_WORDS: u32 = 0x1000;
/// Physical base address of the PICA internal registers' MMIO alias (id at +4·id).
pub const PICA_MMIO_BASE: u32 = 0x1040_1000;
/// Physical base address of the LCD register block.
pub const LCD_REGS_BASE: u32 = 0x1020_2000;
/// Number of 32-bit words in the LCD register block as Citra models it.
pub const LCD_REGS_WORDS: u32 = 0x400;
/// PA of the command-list size register ("P3D"). In Citra traces it holds the size in **bytes**
/// (hardware: bytes >> 3). \[C\] GSP HLE; \[CTP\] forwards it as bytes.
pub const PA_CMDLIST_SIZE: u32 = 0x1040_18E0;
/// PA of the command-list address register (physical address >> 3).
pub const PA_CMDLIST_ADDR: u32 = 0x1040_18E8;
/// PA of the command-list trigger register (bit 0 starts processing).
pub const PA_CMDLIST_TRIGGER: u32 = 0x1040_18F0;

/// One of the ten initial-state arrays, in header order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// External GPU registers, index = (PA − 0x10400000) / 4.
    GpuRegisters,
    /// LCD registers, index = (PA − 0x10202000) / 4.
    LcdRegisters,
    /// PICA internal registers 0x000.. as stored (after byte masking).
    PicaRegisters,
    /// Default vertex attributes: 16 × 4 words, float24 in bits 0-23; w words uninitialised.
    DefaultAttributes,
    /// Vertex-shader code memory (one instruction word each).
    VsProgramBinary,
    /// Vertex-shader operand descriptors ("swizzle data").
    VsSwizzleData,
    /// VS float uniforms: 96 × 4 words, float24 in bits 0-23; w words uninitialised.
    VsFloatUniforms,
    /// Geometry-shader code memory (always empty in Citra traces).
    GsProgramBinary,
    /// Geometry-shader operand descriptors (always empty in Citra traces).
    GsSwizzleData,
    /// GS float uniforms (always empty in Citra traces).
    GsFloatUniforms,
}

impl Section {
    /// All sections in header (and canonical file) order.
    pub const ALL: [Section; 10] = [
        Section::GpuRegisters,
        Section::LcdRegisters,
        Section::PicaRegisters,
        Section::DefaultAttributes,
        Section::VsProgramBinary,
        Section::VsSwizzleData,
        Section::VsFloatUniforms,
        Section::GsProgramBinary,
        Section::GsSwizzleData,
        Section::GsFloatUniforms,
    ];

    /// Position in [`Section::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// Header byte offset of this section's (offset, size) pair.
    pub const fn header_field_offset(self) -> u32 {
        0x0C + 8 * self as u32
    }

    /// Snake-case name, as in Citra's header struct.
    pub const fn name(self) -> &'static str {
        match self {
            Section::GpuRegisters => "gpu_registers",
            Section::LcdRegisters => "lcd_registers",
            Section::PicaRegisters => "pica_registers",
            Section::DefaultAttributes => "default_attributes",
            Section::VsProgramBinary => "vs_program_binary",
            Section::VsSwizzleData => "vs_swizzle_data",
            Section::VsFloatUniforms => "vs_float_uniforms",
            Section::GsProgramBinary => "gs_program_binary",
            Section::GsSwizzleData => "gs_swizzle_data",
            Section::GsFloatUniforms => "gs_float_uniforms",
        }
    }

    /// Size in words written by Citra's 2021 recorder (older builds differ: always trust the
    /// header).
    pub const fn citra_words(self) -> u32 {
        match self {
            Section::GpuRegisters => 0x1000,
            Section::LcdRegisters => 0x400,
            Section::PicaRegisters => 0x300,
            Section::DefaultAttributes => 16 * 4,
            Section::VsProgramBinary => 4096,
            Section::VsSwizzleData => 4096,
            Section::VsFloatUniforms => 96 * 4,
            Section::GsProgramBinary | Section::GsSwizzleData | Section::GsFloatUniforms => 0,
        }
    }

    /// What Citra leaves out of this section, for display (`None` if it records it fully).
    pub const fn recorder_note(self) -> Option<&'static str> {
        match self {
            Section::DefaultAttributes | Section::VsFloatUniforms => {
                Some("w words (every 4th) are uninitialised memory in Citra traces")
            }
            Section::GsProgramBinary | Section::GsSwizzleData | Section::GsFloatUniforms => {
                Some("Citra's recorder never fills the GS sections")
            }
            _ => None,
        }
    }
}

/// Where one section lives in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct SectionRef {
    /// Absolute file offset in bytes.
    pub offset: u32,
    /// Size in u32 words.
    pub words: u32,
}

/// The 100-byte header, field by field (verbatim).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Header {
    /// Magic, `"CiTr"` for valid files.
    pub magic: [u8; 4],
    /// Format version (1).
    pub version: u32,
    /// Header size in bytes as stored (Citra: 0x64).
    pub header_size: u32,
    /// Section locations, in [`Section::ALL`] order.
    pub sections: [SectionRef; 10],
    /// Absolute file offset of the first stream element.
    pub stream_offset: u32,
    /// Number of stream elements (not bytes).
    pub stream_len: u32,
}

impl Header {
    /// Parses the first 0x64 bytes (`bytes` must hold at least that many; returns `None`
    /// otherwise).
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        let word = |at: usize| le_u32(bytes, at);
        let mut sections = [SectionRef::default(); 10];
        for (i, s) in sections.iter_mut().enumerate() {
            *s = SectionRef {
                offset: word(0x0C + 8 * i)?,
                words: word(0x10 + 8 * i)?,
            };
        }
        Some(Self {
            magic: bytes.get(0..4)?.try_into().ok()?,
            version: word(4)?,
            header_size: word(8)?,
            sections,
            stream_offset: word(0x5C)?,
            stream_len: word(0x60)?,
        })
    }

    /// Serialises the header (0x64 bytes).
    pub fn to_bytes(&self) -> [u8; HEADER_SIZE as usize] {
        let mut out = [0u8; HEADER_SIZE as usize];
        let mut put = |at: usize, v: u32| {
            if let Some(d) = out.get_mut(at..at + 4) {
                d.copy_from_slice(&v.to_le_bytes());
            }
        };
        put(4, self.version);
        put(8, self.header_size);
        for (i, s) in self.sections.iter().enumerate() {
            put(0x0C + 8 * i, s.offset);
            put(0x10 + 8 * i, s.words);
        }
        put(0x5C, self.stream_offset);
        put(0x60, self.stream_len);
        out[..4].copy_from_slice(&self.magic);
        out
    }

    /// Location of one section.
    pub fn section(&self, s: Section) -> SectionRef {
        self.sections[s.index()]
    }
}

/// The initial-state arrays captured when recording started (raw u32 words each).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct InitialState {
    /// External GPU registers, index = (PA − 0x10400000) / 4.
    pub gpu_registers: Vec<u32>,
    /// LCD registers, index = (PA − 0x10202000) / 4.
    pub lcd_registers: Vec<u32>,
    /// PICA internal registers by id.
    pub pica_registers: Vec<u32>,
    /// Default attributes, 4 words per attribute (x, y, z float24 in bits 0-23; w garbage).
    pub default_attributes: Vec<u32>,
    /// VS code words.
    pub vs_program_binary: Vec<u32>,
    /// VS operand descriptors.
    pub vs_swizzle_data: Vec<u32>,
    /// VS float uniforms, 4 words per register (x, y, z float24 in bits 0-23; w garbage).
    pub vs_float_uniforms: Vec<u32>,
    /// GS code words (Citra: empty).
    pub gs_program_binary: Vec<u32>,
    /// GS operand descriptors (Citra: empty).
    pub gs_swizzle_data: Vec<u32>,
    /// GS float uniforms (Citra: empty).
    pub gs_float_uniforms: Vec<u32>,
}

impl InitialState {
    /// Zero-filled arrays with the sizes of Citra's 2021 recorder ([`Section::citra_words`]).
    pub fn citra_sized() -> Self {
        let mut s = Self::default();
        for sec in Section::ALL {
            *s.section_mut(sec) = vec![0; sec.citra_words() as usize];
        }
        s
    }

    /// The words of one section.
    pub fn section(&self, s: Section) -> &[u32] {
        match s {
            Section::GpuRegisters => &self.gpu_registers,
            Section::LcdRegisters => &self.lcd_registers,
            Section::PicaRegisters => &self.pica_registers,
            Section::DefaultAttributes => &self.default_attributes,
            Section::VsProgramBinary => &self.vs_program_binary,
            Section::VsSwizzleData => &self.vs_swizzle_data,
            Section::VsFloatUniforms => &self.vs_float_uniforms,
            Section::GsProgramBinary => &self.gs_program_binary,
            Section::GsSwizzleData => &self.gs_swizzle_data,
            Section::GsFloatUniforms => &self.gs_float_uniforms,
        }
    }

    /// The words of one section, mutable.
    pub fn section_mut(&mut self, s: Section) -> &mut Vec<u32> {
        match s {
            Section::GpuRegisters => &mut self.gpu_registers,
            Section::LcdRegisters => &mut self.lcd_registers,
            Section::PicaRegisters => &mut self.pica_registers,
            Section::DefaultAttributes => &mut self.default_attributes,
            Section::VsProgramBinary => &mut self.vs_program_binary,
            Section::VsSwizzleData => &mut self.vs_swizzle_data,
            Section::VsFloatUniforms => &mut self.vs_float_uniforms,
            Section::GsProgramBinary => &mut self.gs_program_binary,
            Section::GsSwizzleData => &mut self.gs_swizzle_data,
            Section::GsFloatUniforms => &mut self.gs_float_uniforms,
        }
    }

    /// Initial value of the external GPU register at physical address `pa`, if the section
    /// covers it.
    pub fn gpu_register(&self, pa: u32) -> Option<u32> {
        let index = pa.checked_sub(GPU_REGS_BASE)? / 4;
        self.gpu_registers.get(index as usize).copied()
    }

    /// Sets the external GPU register at `pa`, growing the section with zeros up to Citra's
    /// 0x1000 words if needed. Returns `false` (and changes nothing) if `pa` is outside the block.
    pub fn set_gpu_register(&mut self, pa: u32, value: u32) -> bool {
        set_block_word(
            &mut self.gpu_registers,
            GPU_REGS_BASE,
            GPU_REGS_WORDS,
            pa,
            value,
        )
    }

    /// Initial value of the LCD register at physical address `pa`.
    pub fn lcd_register(&self, pa: u32) -> Option<u32> {
        let index = pa.checked_sub(LCD_REGS_BASE)? / 4;
        self.lcd_registers.get(index as usize).copied()
    }

    /// Sets the LCD register at `pa` (growing the section up to 0x400 words). Returns `false` if
    /// `pa` is outside the block.
    pub fn set_lcd_register(&mut self, pa: u32, value: u32) -> bool {
        set_block_word(
            &mut self.lcd_registers,
            LCD_REGS_BASE,
            LCD_REGS_WORDS,
            pa,
            value,
        )
    }

    /// Initial value of PICA register `id`.
    pub fn pica_register(&self, id: u16) -> Option<u32> {
        self.pica_registers.get(usize::from(id)).copied()
    }

    /// Sets PICA register `id` (growing the section up to 0x300 words). Returns `false` if
    /// `id >= 0x300`.
    pub fn set_pica_register(&mut self, id: u16, value: u32) -> bool {
        set_block_word(&mut self.pica_registers, 0, 0x300, u32::from(id) * 4, value)
    }

    /// Default attribute `i` as 4 raw words (x, y, z: float24 in bits 0-23; w: uninitialised in
    /// Citra traces).
    pub fn default_attribute(&self, i: usize) -> Option<[u32; 4]> {
        quad(&self.default_attributes, i)
    }

    /// VS float uniform `c{i}` as 4 raw words (x, y, z: float24 in bits 0-23; w: uninitialised
    /// in Citra traces).
    pub fn vs_float_uniform(&self, i: usize) -> Option<[u32; 4]> {
        quad(&self.vs_float_uniforms, i)
    }
}

fn set_block_word(words: &mut Vec<u32>, base: u32, max_words: u32, pa: u32, value: u32) -> bool {
    let Some(index) = pa.checked_sub(base).map(|o| o / 4) else {
        return false;
    };
    if index >= max_words {
        return false;
    }
    let index = index as usize;
    if words.len() <= index {
        words.resize(index + 1, 0);
    }
    // ok: the resize above guarantees `index < words.len()`.
    words[index] = value;
    true
}

fn quad(words: &[u32], i: usize) -> Option<[u32; 4]> {
    let start = i.checked_mul(4)?;
    words.get(start..start + 4)?.try_into().ok()
}

/// How register-write elements lay out their 16-byte payload. The Citra generations disagree.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegWriteLayout {
    /// Citra 2017–2021 (the references' layout, and what citrace-player reads): u32 physical
    /// address, u32 size code (0xD1/0xD2/0xD3/0xD4 = 8/16/32/64-bit), u64 value (zero-extended).
    #[default]
    Sized,
    /// Later Citra forks (e.g. PabloMK7/citra, Lime3DS, 2023-2024): u32 physical address, u32
    /// value, 8 zero bytes (the union's unused tail); 32-bit writes only.
    Compact,
}

/// Width of an MMIO register write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteWidth {
    /// 8-bit write (size code 0xD1).
    Bits8,
    /// 16-bit write (size code 0xD2).
    Bits16,
    /// 32-bit write (size code 0xD3; the only one Citra records).
    Bits32,
    /// 64-bit write (size code 0xD4).
    Bits64,
    /// A size code that is none of the above.
    Unknown(u32),
}

impl WriteWidth {
    /// Decodes a size code.
    pub const fn from_code(code: u32) -> Self {
        match code {
            0xD1 => Self::Bits8,
            0xD2 => Self::Bits16,
            0xD3 => Self::Bits32,
            0xD4 => Self::Bits64,
            other => Self::Unknown(other),
        }
    }

    /// The size code stored in the file.
    pub const fn code(self) -> u32 {
        match self {
            Self::Bits8 => 0xD1,
            Self::Bits16 => 0xD2,
            Self::Bits32 => 0xD3,
            Self::Bits64 => 0xD4,
            Self::Unknown(c) => c,
        }
    }

    /// Width in bytes (`None` for unknown codes).
    pub const fn bytes(self) -> Option<u32> {
        match self {
            Self::Bits8 => Some(1),
            Self::Bits16 => Some(2),
            Self::Bits32 => Some(4),
            Self::Bits64 => Some(8),
            Self::Unknown(_) => None,
        }
    }
}

/// A memory-load element: `size` bytes at file offset `file_offset` go to `physical_address`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct MemoryLoad {
    /// Absolute file offset of the blob (shared by loads of identical contents).
    pub file_offset: u32,
    /// Size in bytes (0 is normal for some textures).
    pub size: u32,
    /// Destination physical address (old traces may hold linear-heap virtual addresses
    /// 0x14000000..; see `pica-raster.md` §11.4).
    pub physical_address: u32,
}

/// A register-write element: an MMIO write to `physical_address`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct RegisterWrite {
    /// Physical address (GPU VA − 0x1EF00000 + 0x10400000 for GPU registers).
    pub physical_address: u32,
    /// Width of the write.
    pub width: WriteWidth,
    /// Value (zero-extended to 64 bits).
    pub value: u64,
}

/// Which register block a physical address belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(tag = "block", rename_all = "snake_case")]
pub enum MmioTarget {
    /// External GPU register, word `index` of the GPU block (PA 0x10400000 + 4·index). Words
    /// 0x400..0x700 of the block alias the PICA internal registers ([`pica_alias`]); Citra stores
    /// writes there in its GPU register array and runs side effects only for the P3D registers
    /// (0x104018E0/E8/F0, which alias 0x238/0x23A/0x23C).
    Gpu {
        /// Word index in [`InitialState::gpu_registers`].
        index: u32,
    },
    /// LCD register, word `index` of the LCD block (PA 0x10202000 + 4·index).
    Lcd {
        /// Word index in [`InitialState::lcd_registers`].
        index: u32,
    },
    /// Outside the blocks above.
    Other,
}

impl MmioTarget {
    /// Classifies a physical address (the word containing it).
    pub const fn of(pa: u32) -> Self {
        if pa >= GPU_REGS_BASE && pa < GPU_REGS_BASE + GPU_REGS_WORDS * 4 {
            Self::Gpu {
                index: (pa - GPU_REGS_BASE) / 4,
            }
        } else if pa >= LCD_REGS_BASE && pa < LCD_REGS_BASE + LCD_REGS_WORDS * 4 {
            Self::Lcd {
                index: (pa - LCD_REGS_BASE) / 4,
            }
        } else {
            Self::Other
        }
    }
}

/// Where a memory load's data lands: its `physical_address`, except that addresses in
/// 0x14000000..0x14F00000 (the old linear-heap *virtual* window that early Citra builds recorded
/// by mistake) are mapped to FCRAM, PA 0x20000000 + (addr − 0x14000000), as neobrain's
/// citrace-player does (`pica-raster.md` §11.4).
// UNVERIFIED: [CTP] maps only the first 15 MiB of the window; the rest of 0x14000000..0x1C000000
// is left alone here because 0x17E00000 (MPCore) and 0x18000000 (VRAM) are real physical ranges.
pub const fn load_target(addr: u32) -> u32 {
    if addr >= 0x1400_0000 && addr < 0x14F0_0000 {
        addr - 0x1400_0000 + 0x2000_0000
    } else {
        addr
    }
}

/// The PICA internal register id whose MMIO alias contains `pa` (PA 0x10401000 + 4·id, ids
/// 0x000..=0x2FF), if any. \[3DB\] "GPU/External Registers".
pub const fn pica_alias(pa: u32) -> Option<u16> {
    if pa >= PICA_MMIO_BASE && pa < PICA_MMIO_BASE + 0x300 * 4 {
        Some(((pa - PICA_MMIO_BASE) / 4) as u16)
    } else {
        None
    }
}

/// A stream element as stored: kind word and 16 payload bytes, verbatim (so padding and unused
/// union bytes survive a round trip).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RawElement {
    /// Element kind (0xE1/0xE2/0xE3 are defined).
    pub kind: u32,
    /// Payload bytes.
    pub payload: [u8; 16],
}

impl RawElement {
    /// Parses 20 bytes (`None` if fewer are given).
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        Some(Self {
            kind: le_u32(bytes, 0)?,
            payload: bytes.get(4..20)?.try_into().ok()?,
        })
    }

    /// Serialises the element (20 bytes).
    pub fn to_bytes(&self) -> [u8; ELEMENT_SIZE as usize] {
        let mut out = [0u8; ELEMENT_SIZE as usize];
        out[..4].copy_from_slice(&self.kind.to_le_bytes());
        out[4..].copy_from_slice(&self.payload);
        out
    }

    /// Payload word `i` (0..=3).
    pub fn word(&self, i: usize) -> u32 {
        le_u32(&self.payload, i * 4).unwrap_or(0)
    }

    fn from_words(kind: u32, words: [u32; 4]) -> Self {
        let mut payload = [0u8; 16];
        for (d, w) in payload.chunks_exact_mut(4).zip(words) {
            d.copy_from_slice(&w.to_le_bytes());
        }
        Self { kind, payload }
    }

    /// A frame marker (zero payload, as Citra writes it).
    pub fn frame_marker() -> Self {
        Self::from_words(KIND_FRAME_MARKER, [0; 4])
    }

    /// A memory load (pad word 0, as Citra writes it).
    pub fn memory_load(load: MemoryLoad) -> Self {
        Self::from_words(
            KIND_MEMORY_LOAD,
            [load.file_offset, load.size, load.physical_address, 0],
        )
    }

    /// A register write in the given layout. The compact layout stores only the low 32 bits of
    /// the value and no width.
    pub fn register_write(layout: RegWriteLayout, w: RegisterWrite) -> Self {
        match layout {
            RegWriteLayout::Sized => Self::from_words(
                KIND_REGISTER_WRITE,
                [
                    w.physical_address,
                    w.width.code(),
                    w.value as u32,
                    (w.value >> 32) as u32,
                ],
            ),
            RegWriteLayout::Compact => Self::from_words(
                KIND_REGISTER_WRITE,
                [w.physical_address, w.value as u32, 0, 0],
            ),
        }
    }

    /// Typed view of the element.
    pub fn decode(&self, layout: RegWriteLayout) -> StreamEvent {
        match self.kind {
            KIND_FRAME_MARKER => StreamEvent::FrameMarker,
            KIND_MEMORY_LOAD => StreamEvent::MemoryLoad(MemoryLoad {
                file_offset: self.word(0),
                size: self.word(1),
                physical_address: self.word(2),
            }),
            KIND_REGISTER_WRITE => StreamEvent::RegisterWrite(match layout {
                RegWriteLayout::Sized => RegisterWrite {
                    physical_address: self.word(0),
                    width: WriteWidth::from_code(self.word(1)),
                    value: u64::from(self.word(2)) | u64::from(self.word(3)) << 32,
                },
                RegWriteLayout::Compact => RegisterWrite {
                    physical_address: self.word(0),
                    width: WriteWidth::Bits32,
                    value: u64::from(self.word(1)),
                },
            }),
            kind => StreamEvent::Unknown { kind },
        }
    }
}

/// Typed view of a stream element.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// End of an emulated frame (one per VBlank in Citra).
    FrameMarker,
    /// Memory contents the GPU was about to read.
    MemoryLoad(MemoryLoad),
    /// An MMIO register write (recorded after its side effects ran).
    RegisterWrite(RegisterWrite),
    /// An element kind this format does not define.
    Unknown {
        /// The kind word.
        kind: u32,
    },
}

/// A command-list submission found in the stream: a write with bit 0 set to
/// [`PA_CMDLIST_TRIGGER`], with the size and address registers' values at that point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Submission {
    /// Index of the trigger's stream element.
    pub element: usize,
    /// Index of the frame it belongs to (number of frame markers before it).
    pub frame: u32,
    /// Physical address of the list (address register × 8).
    pub physical_address: u32,
    /// Size in bytes: the size register's value as Citra writes it (bytes, not bytes >> 3).
    pub size: u32,
}

/// How much of a memory range [`CiTrace::read_memory`] found in the trace's memory loads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct Coverage {
    /// Number of bytes some load covered.
    pub bytes: u64,
    /// Length of the covered run at the start of the range.
    pub prefix: u64,
}

/// Summary counts over the stream.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct StreamStats {
    /// Number of stream elements.
    pub elements: u64,
    /// Frame markers.
    pub frame_markers: u64,
    /// Memory loads.
    pub memory_loads: u64,
    /// Sum of the memory loads' sizes in bytes.
    pub memory_load_bytes: u64,
    /// Distinct blobs (distinct (offset, size) pairs).
    pub distinct_blobs: u64,
    /// Bytes of the distinct blobs.
    pub distinct_blob_bytes: u64,
    /// Register writes.
    pub register_writes: u64,
    /// Register writes per physical address (sorted by address).
    pub writes_by_address: BTreeMap<u32, u64>,
    /// Elements of unknown kind.
    pub unknown_elements: u64,
}

/// Problems that make a file unreadable. Every variant names the file offset at fault.
#[derive(Debug, Error)]
pub enum CiTraceError {
    /// The source could not be read.
    #[error("I/O error reading {len} byte(s) at file offset 0x{offset:X}: {source}")]
    Io {
        /// Offset of the failed read.
        offset: u64,
        /// Length of the failed read.
        len: u64,
        /// The underlying error.
        source: io::Error,
    },
    /// The file is shorter than the 0x64-byte header.
    #[error("truncated header: the file has {len} byte(s), the header needs 0x64")]
    TruncatedHeader {
        /// File length.
        len: u64,
    },
    /// The magic at offset 0 is not "CiTr".
    #[error("bad magic {found:02X?} at offset 0 (expected \"CiTr\")")]
    BadMagic {
        /// The four bytes found.
        found: [u8; 4],
    },
    /// The version at offset 4 is not 1.
    #[error("unsupported CiTrace version {version} at offset 0x4 (only version 1 exists)")]
    UnsupportedVersion {
        /// The version found.
        version: u32,
    },
    /// The header size at offset 8 points past the end of the file.
    #[error("header size 0x{header_size:X} (offset 0x8) exceeds the file length {len}")]
    HeaderSizeOutOfBounds {
        /// The header size found.
        header_size: u32,
        /// File length.
        len: u64,
    },
    /// A section's offset/size lies (partly) outside the file.
    #[error(
        "section {} (header offset 0x{field_offset:X}): offset 0x{offset:X} + {words} word(s) exceeds the file length {len}",
        section.name()
    )]
    SectionOutOfBounds {
        /// The section.
        section: Section,
        /// Header byte offset of its (offset, size) pair.
        field_offset: u32,
        /// Section offset.
        offset: u32,
        /// Section size in words.
        words: u32,
        /// File length.
        len: u64,
    },
    /// The stream table lies (partly) outside the file.
    #[error(
        "stream (header offset 0x5C): {count} element(s) of 20 bytes at offset 0x{offset:X} exceed the file length {len}"
    )]
    StreamOutOfBounds {
        /// Stream offset.
        offset: u32,
        /// Element count.
        count: u32,
        /// File length.
        len: u64,
    },
    /// A memory load's blob lies (partly) outside the file.
    #[error(
        "memory load #{element} (element at file offset 0x{element_offset:X}): blob 0x{file_offset:X} + {size} byte(s) exceeds the file length {len}"
    )]
    BlobOutOfBounds {
        /// Stream element index.
        element: usize,
        /// File offset of the element.
        element_offset: u64,
        /// Blob offset.
        file_offset: u32,
        /// Blob size.
        size: u32,
        /// File length.
        len: u64,
    },
    /// An element index outside the stream was asked for.
    #[error("no stream element #{element} (the stream has {count})")]
    NoSuchElement {
        /// Requested index.
        element: usize,
        /// Stream length.
        count: usize,
    },
    /// The element asked for is not a memory load.
    #[error("stream element #{element} at file offset 0x{element_offset:X} is not a memory load")]
    NotAMemoryLoad {
        /// Element index.
        element: usize,
        /// File offset of the element.
        element_offset: u64,
    },
}

impl CiTraceError {
    /// The file offset at fault, where one exists.
    pub fn offset(&self) -> Option<u64> {
        match self {
            Self::Io { offset, .. } => Some(*offset),
            Self::TruncatedHeader { len } => Some(*len),
            Self::BadMagic { .. } => Some(0),
            Self::UnsupportedVersion { .. } => Some(4),
            Self::HeaderSizeOutOfBounds { .. } => Some(8),
            Self::SectionOutOfBounds { field_offset, .. } => Some(u64::from(*field_offset)),
            Self::StreamOutOfBounds { .. } => Some(0x5C),
            Self::BlobOutOfBounds { element_offset, .. } => Some(*element_offset),
            Self::NotAMemoryLoad { element_offset, .. } => Some(*element_offset),
            Self::NoSuchElement { .. } => None,
        }
    }
}

/// Non-fatal observations made while reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "warning", rename_all = "snake_case")]
pub enum TraceWarning {
    /// The header-size field is not 0x64 (fields are read at their fixed positions anyway).
    UnexpectedHeaderSize {
        /// The value found.
        header_size: u32,
    },
    /// An element of undefined kind.
    UnknownElementKind {
        /// Element index.
        element: usize,
        /// File offset of the element.
        offset: u64,
        /// The kind word.
        kind: u32,
    },
    /// A register write whose size code is not 0xD1..=0xD4 (sized layout).
    BadWriteSize {
        /// Element index.
        element: usize,
        /// File offset of the element.
        offset: u64,
        /// The code found.
        code: u32,
    },
    /// Two structural regions (header, sections, stream table) overlap.
    RegionsOverlap {
        /// Start of the first region.
        a_offset: u64,
        /// Start of the second region.
        b_offset: u64,
    },
    /// Bytes that no header field, section, blob or the stream table refers to.
    UnreferencedBytes {
        /// Start offset.
        offset: u64,
        /// Length in bytes.
        len: u64,
    },
    /// A section is larger than any recorder writes: only its first [`MAX_SECTION_WORDS`]
    /// words are loaded (the rest is kept on disk for the byte-exact round trip).
    SectionTruncated {
        /// The section.
        section: Section,
        /// Its size in words, as the header says.
        words: u32,
        /// Words loaded.
        kept: u32,
    },
    /// More than [`MAX_WARNINGS`] warnings: the rest were counted, not kept.
    WarningsOmitted {
        /// Number of warnings not kept.
        count: u64,
    },
}

impl core::fmt::Display for TraceWarning {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::UnexpectedHeaderSize { header_size } => {
                write!(
                    f,
                    "offset 0x8: header size 0x{header_size:X} (expected 0x64)"
                )
            }
            Self::UnknownElementKind {
                element,
                offset,
                kind,
            } => {
                write!(
                    f,
                    "element #{element} at offset 0x{offset:X}: unknown kind 0x{kind:X}"
                )
            }
            Self::BadWriteSize {
                element,
                offset,
                code,
            } => write!(
                f,
                "element #{element} at offset 0x{offset:X}: register write with size code 0x{code:X} (expected 0xD1-0xD4)"
            ),
            Self::RegionsOverlap { a_offset, b_offset } => {
                write!(
                    f,
                    "regions at offsets 0x{a_offset:X} and 0x{b_offset:X} overlap"
                )
            }
            Self::UnreferencedBytes { offset, len } => {
                write!(
                    f,
                    "{len} byte(s) at offset 0x{offset:X} are not referenced by the header or stream"
                )
            }
            Self::SectionTruncated {
                section,
                words,
                kept,
            } => write!(
                f,
                "section {} declares {words} words; only the first {kept} are loaded (no recorder writes more)",
                section.name()
            ),
            Self::WarningsOmitted { count } => {
                write!(f, "{count} more warning(s) not listed")
            }
        }
    }
}

/// Sections are loaded up to this many words each (16 times the largest one Citra writes, the
/// 0x1000-word external register block); the rest of a larger section stays on disk.
pub const MAX_SECTION_WORDS: u32 = 0x1_0000;

/// The reader keeps at most this many warnings; the rest are counted in one
/// [`TraceWarning::WarningsOmitted`].
pub const MAX_WARNINGS: usize = 1000;

/// Warnings collected with a bound (see [`MAX_WARNINGS`]).
#[derive(Default)]
struct Warnings {
    kept: Vec<TraceWarning>,
    omitted: u64,
}

impl Warnings {
    fn push(&mut self, w: TraceWarning) {
        if self.kept.len() < MAX_WARNINGS {
            self.kept.push(w);
        } else {
            self.omitted += 1;
        }
    }

    fn finish(mut self) -> Vec<TraceWarning> {
        if self.omitted > 0 {
            self.kept.push(TraceWarning::WarningsOmitted {
                count: self.omitted,
            });
        }
        self.kept
    }
}

/// Options of the reader.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Register-write payload layout; `None` detects it (see [`detect_layout`]).
    pub layout: Option<RegWriteLayout>,
}

/// Random-access byte source a trace is read from.
pub trait TraceSource {
    /// Total length in bytes.
    fn byte_len(&self) -> u64;
    /// Fills `buf` with the bytes at `offset..offset + buf.len()`.
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()>;
    /// The whole source as a slice, if it is in memory (lets blobs be borrowed without copying).
    fn as_slice(&self) -> Option<&[u8]> {
        None
    }
}

fn slice_read_at(bytes: &[u8], offset: u64, buf: &mut [u8]) -> io::Result<()> {
    let start = usize::try_from(offset).map_err(|_| io::ErrorKind::UnexpectedEof)?;
    let src = start
        .checked_add(buf.len())
        .and_then(|end| bytes.get(start..end))
        .ok_or(io::ErrorKind::UnexpectedEof)?;
    buf.copy_from_slice(src);
    Ok(())
}

impl TraceSource for Vec<u8> {
    fn byte_len(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        slice_read_at(self, offset, buf)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

impl TraceSource for &[u8] {
    fn byte_len(&self) -> u64 {
        self.len() as u64
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        slice_read_at(self, offset, buf)
    }
    fn as_slice(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// A [`TraceSource`] over any `Read + Seek` (e.g. a `File`): reads on demand, keeps nothing.
#[derive(Debug)]
pub struct SeekSource<R> {
    inner: R,
    len: u64,
}

impl<R: Read + Seek> SeekSource<R> {
    /// Wraps a reader, measuring its length.
    pub fn new(mut inner: R) -> io::Result<Self> {
        let len = inner.seek(SeekFrom::End(0))?;
        Ok(Self { inner, len })
    }

    /// The wrapped reader.
    pub fn into_inner(self) -> R {
        self.inner
    }
}

impl<R: Read + Seek> TraceSource for SeekSource<R> {
    fn byte_len(&self) -> u64 {
        self.len
    }
    fn read_at(&mut self, offset: u64, buf: &mut [u8]) -> io::Result<()> {
        self.inner.seek(SeekFrom::Start(offset))?;
        self.inner.read_exact(buf)
    }
}

/// Picks the register-write layout of a stream: [`RegWriteLayout::Sized`] if every register
/// write carries a valid size code (or there are none); otherwise [`RegWriteLayout::Compact`]
/// if every register write has a zero payload tail; otherwise `Sized` (the reader then warns
/// about each bad size code).
///
/// UNVERIFIED: a file whose every write is a zero-tailed compact write of a value 0xD1..=0xD4, or
/// a sized file whose every write stores 0, fits both layouts; `Sized` wins (the documented one).
pub fn detect_layout(elements: &[RawElement]) -> RegWriteLayout {
    let mut sized_ok = true;
    let mut compact_ok = true;
    for e in elements.iter().filter(|e| e.kind == KIND_REGISTER_WRITE) {
        sized_ok &= matches!(e.word(1), 0xD1..=0xD4);
        compact_ok &= e.word(2) == 0 && e.word(3) == 0;
    }
    if !sized_ok && compact_ok {
        RegWriteLayout::Compact
    } else {
        RegWriteLayout::Sized
    }
}

/// A parsed CiTrace: header, initial state and stream in memory; blobs read lazily from the
/// source.
///
/// Memory use: the initial-state sections and the stream table (both validated against the file
/// length before anything is allocated); blobs are only read when asked for.
#[derive(Debug)]
pub struct CiTrace<S> {
    source: S,
    len: u64,
    header: Header,
    header_tail: Vec<u8>,
    initial: InitialState,
    elements: Vec<RawElement>,
    layout: RegWriteLayout,
    gaps: Vec<(u64, u64)>,
    /// Tails of sections longer than [`MAX_SECTION_WORDS`] (byte ranges left on disk).
    section_tails: Vec<(u64, u64)>,
    warnings: Vec<TraceWarning>,
}

impl CiTrace<SeekSource<std::fs::File>> {
    /// Opens and validates a trace file; blobs stay on disk until read.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CiTraceError> {
        let file = std::fs::File::open(path).map_err(|source| CiTraceError::Io {
            offset: 0,
            len: 0,
            source,
        })?;
        let source = SeekSource::new(file).map_err(|source| CiTraceError::Io {
            offset: 0,
            len: 0,
            source,
        })?;
        Self::read(source, ReadOptions::default())
    }
}

impl CiTrace<Vec<u8>> {
    /// Parses a trace held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Self, CiTraceError> {
        Self::read(bytes, ReadOptions::default())
    }
}

fn read_exact_at<S: TraceSource>(
    source: &mut S,
    offset: u64,
    len: u64,
) -> Result<Vec<u8>, CiTraceError> {
    let io_err = |source| CiTraceError::Io {
        offset,
        len,
        source,
    };
    let n = usize::try_from(len).map_err(|_| io_err(io::ErrorKind::OutOfMemory.into()))?;
    let mut buf = vec![0u8; n];
    source.read_at(offset, &mut buf).map_err(io_err)?;
    Ok(buf)
}

fn words_from_bytes(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn le_u32(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl<S: TraceSource> CiTrace<S> {
    /// Parses and validates a trace: header, every section and the stream table against the file
    /// length, and every memory load's blob range. Nothing larger than the file is allocated.
    pub fn read(mut source: S, options: ReadOptions) -> Result<Self, CiTraceError> {
        let len = source.byte_len();
        if len < u64::from(HEADER_SIZE) {
            return Err(CiTraceError::TruncatedHeader { len });
        }
        let head = read_exact_at(&mut source, 0, u64::from(HEADER_SIZE))?;
        // ok: `head` has exactly HEADER_SIZE bytes.
        let header = Header::from_bytes(&head).ok_or(CiTraceError::TruncatedHeader { len })?;
        if header.magic != MAGIC {
            return Err(CiTraceError::BadMagic {
                found: header.magic,
            });
        }
        if header.version != VERSION {
            return Err(CiTraceError::UnsupportedVersion {
                version: header.version,
            });
        }
        let mut warnings = Warnings::default();
        if header.header_size != HEADER_SIZE {
            warnings.push(TraceWarning::UnexpectedHeaderSize {
                header_size: header.header_size,
            });
        }
        if u64::from(header.header_size) > len {
            return Err(CiTraceError::HeaderSizeOutOfBounds {
                header_size: header.header_size,
                len,
            });
        }
        let header_end = u64::from(header.header_size.max(HEADER_SIZE));
        let header_tail = read_exact_at(
            &mut source,
            u64::from(HEADER_SIZE),
            header_end - u64::from(HEADER_SIZE),
        )?;

        // Structural regions, for overlap and gap accounting: (start, end).
        let mut regions: Vec<(u64, u64)> = vec![(0, header_end)];

        // Sections: each checked against the file length, loaded up to MAX_SECTION_WORDS, and
        // read once per group of overlapping ranges (a file whose sections all point at the same
        // bytes reads them once).
        let mut loads: Vec<(u64, u64, Section)> = Vec::new();
        let mut section_tails = Vec::new();
        for section in Section::ALL {
            let r = header.section(section);
            let end = u64::from(r.offset) + u64::from(r.words) * 4;
            if end > len {
                return Err(CiTraceError::SectionOutOfBounds {
                    section,
                    field_offset: section.header_field_offset(),
                    offset: r.offset,
                    words: r.words,
                    len,
                });
            }
            if r.words > 0 {
                regions.push((u64::from(r.offset), end));
            }
            let kept = r.words.min(MAX_SECTION_WORDS);
            let kept_end = u64::from(r.offset) + u64::from(kept) * 4;
            if kept < r.words {
                warnings.push(TraceWarning::SectionTruncated {
                    section,
                    words: r.words,
                    kept,
                });
                section_tails.push((kept_end, end));
            }
            loads.push((u64::from(r.offset), kept_end, section));
        }
        let mut initial = InitialState::default();
        loads.sort_unstable();
        let mut i = 0;
        while i < loads.len() {
            let (start, mut end, _) = loads[i];
            let mut j = i + 1;
            while let Some(&(s2, e2, _)) = loads.get(j)
                && s2 < end
            {
                end = end.max(e2);
                j += 1;
            }
            let group = read_exact_at(&mut source, start, end - start)?;
            for &(s2, e2, section) in loads.get(i..j).unwrap_or(&[]) {
                // ok: every range of the group lies within `start..end`.
                let bytes = group
                    .get((s2 - start) as usize..(e2 - start) as usize)
                    .unwrap_or(&[]);
                *initial.section_mut(section) = words_from_bytes(bytes);
            }
            i = j;
        }

        let stream_start = u64::from(header.stream_offset);
        let stream_end = stream_start + u64::from(header.stream_len) * u64::from(ELEMENT_SIZE);
        if stream_end > len {
            return Err(CiTraceError::StreamOutOfBounds {
                offset: header.stream_offset,
                count: header.stream_len,
                len,
            });
        }
        let table = read_exact_at(&mut source, stream_start, stream_end - stream_start)?;
        let elements: Vec<RawElement> = table
            .chunks_exact(ELEMENT_SIZE as usize)
            .filter_map(RawElement::from_bytes)
            .collect();
        if header.stream_len > 0 {
            regions.push((stream_start, stream_end));
        }

        // Overlaps between structural regions (blobs may legitimately share bytes).
        let mut sorted = regions.clone();
        sorted.sort_unstable();
        for pair in sorted.windows(2) {
            if let [a, b] = pair
                && b.0 < a.1
            {
                warnings.push(TraceWarning::RegionsOverlap {
                    a_offset: a.0,
                    b_offset: b.0,
                });
            }
        }

        let layout = options.layout.unwrap_or_else(|| detect_layout(&elements));
        let mut blob_ranges: Vec<(u64, u64)> = Vec::new();
        for (i, e) in elements.iter().enumerate() {
            let element_offset = stream_start + i as u64 * u64::from(ELEMENT_SIZE);
            match e.decode(layout) {
                StreamEvent::MemoryLoad(m) => {
                    let end = u64::from(m.file_offset) + u64::from(m.size);
                    if end > len {
                        return Err(CiTraceError::BlobOutOfBounds {
                            element: i,
                            element_offset,
                            file_offset: m.file_offset,
                            size: m.size,
                            len,
                        });
                    }
                    if m.size > 0 {
                        blob_ranges.push((u64::from(m.file_offset), end));
                    }
                }
                StreamEvent::RegisterWrite(RegisterWrite {
                    width: WriteWidth::Unknown(code),
                    ..
                }) => warnings.push(TraceWarning::BadWriteSize {
                    element: i,
                    offset: element_offset,
                    code,
                }),
                StreamEvent::Unknown { kind } => warnings.push(TraceWarning::UnknownElementKind {
                    element: i,
                    offset: element_offset,
                    kind,
                }),
                StreamEvent::FrameMarker | StreamEvent::RegisterWrite(_) => {}
            }
        }

        regions.extend(blob_ranges);
        let gaps = uncovered(&mut regions, len);
        for &(offset, gap_len) in &gaps {
            warnings.push(TraceWarning::UnreferencedBytes {
                offset,
                len: gap_len,
            });
        }

        Ok(Self {
            source,
            len,
            header,
            header_tail,
            initial,
            elements,
            layout,
            gaps,
            section_tails,
            warnings: warnings.finish(),
        })
    }

    /// File length in bytes.
    pub fn file_len(&self) -> u64 {
        self.len
    }

    /// The header.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The initial-state arrays.
    pub fn initial_state(&self) -> &InitialState {
        &self.initial
    }

    /// The register-write layout in use (detected or forced).
    pub fn layout(&self) -> RegWriteLayout {
        self.layout
    }

    /// The stream elements, verbatim.
    pub fn elements(&self) -> &[RawElement] {
        &self.elements
    }

    /// Typed view of element `i`.
    pub fn event(&self, i: usize) -> Option<StreamEvent> {
        self.elements.get(i).map(|e| e.decode(self.layout))
    }

    /// Typed views of all elements, in order.
    pub fn events(&self) -> impl Iterator<Item = StreamEvent> + '_ {
        self.elements.iter().map(|e| e.decode(self.layout))
    }

    /// File offset of stream element `i`.
    pub fn element_offset(&self, i: usize) -> u64 {
        u64::from(self.header.stream_offset) + i as u64 * u64::from(ELEMENT_SIZE)
    }

    /// Non-fatal observations made while reading.
    pub fn warnings(&self) -> &[TraceWarning] {
        &self.warnings
    }

    /// Byte ranges `(offset, len)` that no structure refers to (kept for the exact round trip).
    pub fn gaps(&self) -> &[(u64, u64)] {
        &self.gaps
    }

    /// The source the trace is read from.
    pub fn source(&self) -> &S {
        &self.source
    }

    fn load_at(&self, element: usize) -> Result<MemoryLoad, CiTraceError> {
        match self.event(element) {
            Some(StreamEvent::MemoryLoad(m)) => Ok(m),
            Some(_) => Err(CiTraceError::NotAMemoryLoad {
                element,
                element_offset: self.element_offset(element),
            }),
            None => Err(CiTraceError::NoSuchElement {
                element,
                count: self.elements.len(),
            }),
        }
    }

    /// The blob of memory-load element `element`, borrowed from an in-memory source (`None` for
    /// sources that are not in memory; use [`CiTrace::read_blob_into`] then).
    pub fn blob(&self, element: usize) -> Result<Option<&[u8]>, CiTraceError> {
        let m = self.load_at(element)?;
        Ok(self.source.as_slice().and_then(|s| {
            let start = m.file_offset as usize;
            s.get(start..start.checked_add(m.size as usize)?)
        }))
    }

    /// Reads the blob of memory-load element `element` into `buf` (cleared first; reusing one
    /// buffer avoids an allocation per load).
    pub fn read_blob_into(
        &mut self,
        element: usize,
        buf: &mut Vec<u8>,
    ) -> Result<(), CiTraceError> {
        let m = self.load_at(element)?;
        buf.clear();
        buf.resize(m.size as usize, 0);
        let offset = u64::from(m.file_offset);
        self.source
            .read_at(offset, buf)
            .map_err(|source| CiTraceError::Io {
                offset,
                len: u64::from(m.size),
                source,
            })
    }

    /// Reads the blob of memory-load element `element`.
    pub fn read_blob(&mut self, element: usize) -> Result<Vec<u8>, CiTraceError> {
        let mut buf = Vec::new();
        self.read_blob_into(element, &mut buf)?;
        Ok(buf)
    }

    /// Reconstructs physical memory `pa .. pa + out.len()` as the memory loads among elements
    /// `0..before` left it (later loads win; load addresses pass through [`load_target`]). Bytes no load covered are set to 0. Only the
    /// overlapping parts of blobs are read; memory use is proportional to `out.len()`.
    pub fn read_memory(
        &mut self,
        before: usize,
        pa: u32,
        out: &mut [u8],
    ) -> Result<Coverage, CiTraceError> {
        out.fill(0);
        let want_start = u64::from(pa);
        let want_end = want_start + out.len() as u64;
        let mut filled = vec![false; out.len()];
        let mut covered = 0u64;
        let mut chunk = Vec::new();
        let upto = before.min(self.elements.len());
        for i in (0..upto).rev() {
            if covered == out.len() as u64 {
                break;
            }
            let Some(StreamEvent::MemoryLoad(m)) = self.event(i) else {
                continue;
            };
            let load_start = u64::from(load_target(m.physical_address));
            let load_end = load_start + u64::from(m.size);
            let start = load_start.max(want_start);
            let end = load_end.min(want_end);
            if start >= end {
                continue;
            }
            let file_at = u64::from(m.file_offset) + (start - load_start);
            chunk.resize((end - start) as usize, 0);
            self.source
                .read_at(file_at, &mut chunk)
                .map_err(|source| CiTraceError::Io {
                    offset: file_at,
                    len: end - start,
                    source,
                })?;
            let base = (start - want_start) as usize;
            for (k, &byte) in chunk.iter().enumerate() {
                if let (Some(f), Some(o)) = (filled.get_mut(base + k), out.get_mut(base + k))
                    && !*f
                {
                    *f = true;
                    *o = byte;
                    covered += 1;
                }
            }
        }
        let prefix = filled.iter().take_while(|&&f| f).count() as u64;
        Ok(Coverage {
            bytes: covered,
            prefix,
        })
    }

    /// Every command-list submission in the stream: 32-bit (or wider) writes with bit 0 set to
    /// [`PA_CMDLIST_TRIGGER`], with the size/address registers as tracked from the initial GPU
    /// register file and the writes before it.
    pub fn submissions(&self) -> Vec<Submission> {
        let mut size = self.initial.gpu_register(PA_CMDLIST_SIZE).unwrap_or(0);
        let mut addr = self.initial.gpu_register(PA_CMDLIST_ADDR).unwrap_or(0);
        let mut frame = 0u32;
        let mut out = Vec::new();
        for (i, ev) in self.events().enumerate() {
            match ev {
                StreamEvent::FrameMarker => frame = frame.saturating_add(1),
                StreamEvent::RegisterWrite(w) => {
                    for (pa, mask, value) in write_words(&w) {
                        let merge = |old: u32| (old & !mask) | (value & mask);
                        match pa {
                            PA_CMDLIST_SIZE => size = merge(size),
                            PA_CMDLIST_ADDR => addr = merge(addr),
                            PA_CMDLIST_TRIGGER if mask & value & 1 != 0 => out.push(Submission {
                                element: i,
                                frame,
                                physical_address: addr.wrapping_mul(8),
                                size,
                            }),
                            _ => {}
                        }
                    }
                }
                StreamEvent::MemoryLoad(_) | StreamEvent::Unknown { .. } => {}
            }
        }
        out
    }

    /// Counts over the stream.
    pub fn stats(&self) -> StreamStats {
        let mut s = StreamStats {
            elements: self.elements.len() as u64,
            ..StreamStats::default()
        };
        let mut blobs = std::collections::BTreeSet::new();
        for ev in self.events() {
            match ev {
                StreamEvent::FrameMarker => s.frame_markers += 1,
                StreamEvent::MemoryLoad(m) => {
                    s.memory_loads += 1;
                    s.memory_load_bytes += u64::from(m.size);
                    if blobs.insert((m.file_offset, m.size)) {
                        s.distinct_blob_bytes += u64::from(m.size);
                    }
                }
                StreamEvent::RegisterWrite(w) => {
                    s.register_writes += 1;
                    *s.writes_by_address.entry(w.physical_address).or_insert(0) += 1;
                }
                StreamEvent::Unknown { .. } => s.unknown_elements += 1,
            }
        }
        s.distinct_blobs = blobs.len() as u64;
        s
    }

    /// Writes the trace: the parsed header, sections and stream table serialised, blobs and
    /// unreferenced bytes copied from the source, each at its original offset. Returns the
    /// number of bytes written (= [`CiTrace::file_len`]).
    pub fn write_to<W: Write>(&mut self, out: &mut W) -> Result<u64, CiTraceError> {
        enum Piece {
            Header,
            Section(Section),
            Stream,
            Copy,
        }
        let mut pieces: Vec<(u64, u64, Piece)> = Vec::new();
        pieces.push((
            0,
            u64::from(HEADER_SIZE) + self.header_tail.len() as u64,
            Piece::Header,
        ));
        for s in Section::ALL {
            let r = self.header.section(s);
            // The loaded words only; the tail of a truncated section is copied from the source.
            let loaded = self.initial.section(s).len() as u64;
            if r.words > 0 && loaded > 0 {
                pieces.push((
                    u64::from(r.offset),
                    u64::from(r.offset) + loaded * 4,
                    Piece::Section(s),
                ));
            }
        }
        if !self.elements.is_empty() {
            let start = u64::from(self.header.stream_offset);
            pieces.push((
                start,
                start + self.elements.len() as u64 * u64::from(ELEMENT_SIZE),
                Piece::Stream,
            ));
        }
        let mut seen = std::collections::BTreeSet::new();
        for e in &self.elements {
            if let StreamEvent::MemoryLoad(m) = e.decode(self.layout)
                && m.size > 0
                && seen.insert((m.file_offset, m.size))
            {
                pieces.push((
                    u64::from(m.file_offset),
                    u64::from(m.file_offset) + u64::from(m.size),
                    Piece::Copy,
                ));
            }
        }
        for &(offset, len) in &self.gaps {
            pieces.push((offset, offset + len, Piece::Copy));
        }
        for &(start, end) in &self.section_tails {
            pieces.push((start, end, Piece::Copy));
        }
        pieces.sort_by_key(|p| (p.0, p.1));

        let io_err = |offset: u64, len: u64| {
            move |source| CiTraceError::Io {
                offset,
                len,
                source,
            }
        };
        let mut cursor = 0u64;
        let mut buf = Vec::new();
        for (start, end, piece) in pieces {
            if end <= cursor {
                continue;
            }
            let skip = cursor.saturating_sub(start);
            let from = start + skip;
            match piece {
                Piece::Header => {
                    buf.clear();
                    buf.extend_from_slice(&self.header.to_bytes());
                    buf.extend_from_slice(&self.header_tail);
                }
                Piece::Section(s) => {
                    buf.clear();
                    buf.extend(self.initial.section(s).iter().flat_map(|w| w.to_le_bytes()));
                }
                Piece::Stream => {
                    buf.clear();
                    buf.extend(self.elements.iter().flat_map(|e| e.to_bytes()));
                }
                Piece::Copy => {
                    // Stream the bytes through a bounded buffer.
                    let mut at = from;
                    while at < end {
                        let n = (end - at).min(1 << 20);
                        buf.resize(n as usize, 0);
                        self.source.read_at(at, &mut buf).map_err(io_err(at, n))?;
                        out.write_all(&buf).map_err(io_err(at, n))?;
                        at += n;
                    }
                    cursor = end;
                    continue;
                }
            }
            let part = buf.get(skip as usize..).unwrap_or(&[]);
            out.write_all(part)
                .map_err(io_err(from, part.len() as u64))?;
            cursor = end;
        }
        Ok(cursor)
    }

    /// [`CiTrace::write_to`] into a new vector.
    pub fn to_bytes(&mut self) -> Result<Vec<u8>, CiTraceError> {
        let mut out = Vec::with_capacity(usize::try_from(self.len).unwrap_or(0));
        self.write_to(&mut out)?;
        Ok(out)
    }
}

/// The 32-bit words a register write touches: `(word PA, bit mask, value shifted into place)`.
/// 8/16-bit writes touch part of one word; 64-bit writes touch two.
pub fn write_words(w: &RegisterWrite) -> impl Iterator<Item = (u32, u32, u32)> {
    let pa = w.physical_address;
    let shift = (pa & 3) * 8;
    let aligned = pa & !3;
    let (first, second) = match w.width {
        WriteWidth::Bits8 => (
            Some((aligned, 0xFFu32 << shift, (w.value as u32 & 0xFF) << shift)),
            None,
        ),
        WriteWidth::Bits16 => (
            Some((
                aligned,
                0xFFFFu32.wrapping_shl(shift),
                (w.value as u32 & 0xFFFF).wrapping_shl(shift),
            )),
            None,
        ),
        WriteWidth::Bits32 => (Some((aligned, u32::MAX, w.value as u32)), None),
        WriteWidth::Bits64 => (
            Some((aligned, u32::MAX, w.value as u32)),
            Some((aligned.wrapping_add(4), u32::MAX, (w.value >> 32) as u32)),
        ),
        WriteWidth::Unknown(_) => (None, None),
    };
    first.into_iter().chain(second)
}

/// Sorts `regions` and returns the sub-ranges of `0..len` none of them covers, as
/// `(offset, len)`.
fn uncovered(regions: &mut [(u64, u64)], len: u64) -> Vec<(u64, u64)> {
    regions.sort_unstable();
    let mut gaps = Vec::new();
    let mut cursor = 0u64;
    for &(start, end) in regions.iter() {
        if start > cursor {
            gaps.push((cursor, start - cursor));
        }
        cursor = cursor.max(end);
    }
    if cursor < len {
        gaps.push((cursor, len - cursor));
    }
    gaps
}

#[cfg(test)]
mod tests;
