//! Vertex input description for scenes: which attributes the vertex shader receives and in
//! which formats ([`AttribLayout`], citro3d's `C3D_AttrInfo`), and where the vertex loaders read
//! them from ([`BufferLayout`], citro3d's `C3D_BufInfo`).
//!
//! Stage: host-side description of the vertex loader (`pica-core.md` §3). Inputs: attribute
//! formats, buffers, strides. Outputs: the register words [`super::CommandList`] writes:
//! 0x200 ATTRIBBUFFERS_LOC (base PA >> 3), 0x201/0x202 ATTRIBBUFFERS_FORMAT_LOW/HIGH (per
//! attribute: type bits 0-1, components − 1 bits 2-3, four bits each; 0x202 bits 16-27 the
//! fixed-attribute mask, bits 28-31 total attributes − 1), 0x203 + 3n ATTRIBBUFFERn_OFFSET /
//! CONFIG1 / CONFIG2 (byte offset from the base; components' attribute indices or padding codes
//! 12-15 in nibbles; stride bits 16-23; component count bits 28-31), and the shader's input
//! permutation (VSH_ATTRIBUTES_PERMUTATION_LOW/HIGH, one input register per attribute).

use pica_cmd::regs::pipeline::AttribType;

use super::memory::VRAM_BASE;
use super::resources::VertexBuffer;

/// Maximum number of attributes and of loaders.
pub const MAX_ATTRIBUTES: usize = 12;

/// The attributes a vertex has: for each (in order) either a loaded format or "fixed" (its
/// value comes from the fixed-attribute registers), and the shader input register it feeds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AttribLayout {
    /// ATTRIBBUFFERS_FORMAT_LOW/HIGH as written.
    pub format: [u32; 2],
    /// Input register of attribute i in nibble i.
    pub permutation: u64,
    /// Number of attributes.
    pub count: u8,
}

impl AttribLayout {
    /// No attributes; every attribute slot marked fixed until a loader claims it.
    pub fn new() -> Self {
        AttribLayout {
            format: [0, 0xFFF << 16],
            permutation: 0,
            count: 0,
        }
    }

    fn push(&mut self, reg: u8) -> Option<usize> {
        let id = usize::from(self.count);
        if id >= MAX_ATTRIBUTES {
            return None;
        }
        self.count += 1;
        self.permutation |= u64::from(reg & 0xF) << (id * 4);
        // Total attribute count − 1 in 0x202 bits 28-31.
        self.format[1] = (self.format[1] & !0xF000_0000) | ((id as u32) << 28);
        Some(id)
    }

    /// Adds an attribute loaded from a buffer: `components` (1-4) values of `ty`, delivered to
    /// input register `v{reg}`. Ignored past 12 attributes.
    pub fn loader(mut self, reg: u8, ty: AttribType, components: u8) -> Self {
        if let Some(id) = self.push(reg) {
            let fmt = ((u32::from(components.clamp(1, 4)) - 1) << 2) | (ty.raw() & 3);
            let (word, shift) = if id < 8 {
                (0, id * 4)
            } else {
                (1, (id - 8) * 4)
            };
            self.format[word] |= fmt << shift;
            // A loaded attribute is not fixed.
            self.format[1] &= !(1 << (id + 16));
        }
        self
    }

    /// Adds an attribute whose value is the fixed attribute of the same index
    /// ([`super::CommandList::fixed_attribute`]), delivered to `v{reg}`.
    pub fn fixed(mut self, reg: u8) -> Self {
        self.push(reg);
        self
    }
}

/// One vertex loader: a buffer region and the attribute components it holds, in memory order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Loader {
    /// The buffer read.
    pub buffer: VertexBuffer,
    /// Byte offset of the first vertex in the buffer.
    pub offset: u32,
    /// Bytes per vertex.
    pub stride: u32,
    /// Components: attribute index 0-11, or 12-15 for 4/8/12/16 bytes of padding.
    pub components: Vec<u8>,
}

impl Loader {
    /// CONFIG1/CONFIG2 words.
    pub fn config_words(&self) -> [u32; 2] {
        let mut perm: u64 = 0;
        for (k, &c) in self.components.iter().take(12).enumerate() {
            perm |= u64::from(c & 0xF) << (4 * k);
        }
        // ok: at most 12 components.
        let count = self.components.len().min(12) as u32;
        [
            (perm & 0xFFFF_FFFF) as u32,
            ((perm >> 32) as u32 & 0xFFFF) | ((self.stride & 0xFF) << 16) | (count << 28),
        ]
    }
}

/// The vertex buffers of a draw: a base address and up to 12 loaders.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BufferLayout {
    /// Base physical address all loader offsets are relative to (citro3d uses the start of
    /// VRAM, so linear-heap buffers get offsets of 0x08000000 and more).
    pub base: u32,
    /// The loaders.
    pub loaders: Vec<Loader>,
}

impl Default for BufferLayout {
    fn default() -> Self {
        BufferLayout {
            base: VRAM_BASE,
            loaders: Vec::new(),
        }
    }
}

impl BufferLayout {
    /// An empty layout with citro3d's base address.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a loader over `buffer` with the given stride and components (attribute indices, or
    /// 12-15 for padding). Ignored past 12 loaders.
    pub fn buffer(mut self, buffer: VertexBuffer, stride: u32, components: &[u8]) -> Self {
        if self.loaders.len() < MAX_ATTRIBUTES {
            self.loaders.push(Loader {
                buffer,
                offset: 0,
                stride,
                components: components.to_vec(),
            });
        }
        self
    }

    /// The 36 words of ATTRIBBUFFER0_OFFSET … ATTRIBBUFFER11_CONFIG2 (unused loaders zero).
    pub fn loader_words(&self) -> [u32; 36] {
        let mut w = [0u32; 36];
        for (i, l) in self.loaders.iter().take(MAX_ATTRIBUTES).enumerate() {
            let [c1, c2] = l.config_words();
            w[3 * i] = l.buffer.pa.wrapping_add(l.offset).wrapping_sub(self.base) & 0x0FFF_FFFF;
            w[3 * i + 1] = c1;
            w[3 * i + 2] = c2;
        }
        w
    }
}
