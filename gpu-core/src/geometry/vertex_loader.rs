//! Vertex loading: attribute buffers in physical memory → vertex-shader input attributes
//! (`pica-core.md` §3).
//!
//! * Input: the register file, [`PhysMem`], the fixed/default attribute values and a vertex id.
//! * Output: an [`AttributeSet`] — up to 16 attribute slots of `[f32; 4]` with their provenance
//!   ([`AttribSource`]: loader + address, fixed value, or previous contents) — or a typed
//!   [`LoadDiag`] when a fetch leaves mapped memory.
//! * Registers read (all by [`LoaderConfig::from_regs`], once per draw, through pica-cmd's
//!   register catalogue):
//!   ATTRIBBUFFERS_LOC (0x200), ATTRIBBUFFERS_FORMAT_LOW/HIGH (0x201/0x202), the twelve loaders
//!   ATTRIBBUFFERn_OFFSET/CONFIG1/CONFIG2 (0x203 + 3n .. 0x205 + 3n), INDEXBUFFER_CONFIG (0x227),
//!   NUMVERTICES (0x228) and VERTEX_OFFSET (0x22A).
//!
//! # Loader → attribute mapping
//!
//! HW: \[C\] and \[M\] agree (and \[3DB\]'s pitfalls page is consistent with them); \[P\]'s sequential
//! variant breaks on reordered loaders and is not followed. Each loader walks its entries with a
//! running byte offset starting at 0. An entry `a` in 0..=11 is an attribute slot: the offset is
//! aligned up to the element size of attribute `a`'s format, attribute `a` is fetched from
//! `base + loader offset + offset + stride × vertex`, and the offset advances by the attribute's
//! size. Entries 12-15 are padding: align to 4, then skip 4, 8, 12 or 16 bytes. **The entry value
//! selects both the format (from 0x201/0x202) and the destination slot.** Alignment was checked on
//! hardware for aligned buffers (fact VL-3); UNVERIFIED(VL-3): that it is relative to the vertex
//! start (not the absolute address) when a buffer base is unaligned ([C] PR #1535, inferred from a
//! game).
//!
//! # Which value a slot gets (§3.3)
//!
//! For slot `i < count` (count = 0x202 bits 28-31, plus one): a loader entry naming `i` wins
//! ("arrays override fixed values regardless of the bit", \[3DB\]); otherwise slots `i >= 12` and
//! slots whose fixed-mask bit (0x202 bit 16 + i) is set take the fixed value; otherwise the slot
//! keeps its previous contents (\[C\]; reported as [`ConfigDiag::UndefinedAttribute`]).
//!
//! # Formats (§3.1)
//!
//! s8, u8, s16 are converted to float **without normalisation**; f32 is taken as is. Missing
//! components are filled with (0, 0, 0, 1), never from the fixed value.
//!
//! # Draw loop and bounds (§3.4)
//!
//! DRAWARRAYS fetches vertex `k + VERTEX_OFFSET`; DRAWELEMENTS fetches `index[k]` (u8 or u16,
//! little-endian) and ignores VERTEX_OFFSET. There is no restart index. Address arithmetic is done
//! in 64 bits; an address past 4 GiB or outside mapped memory is a [`LoadDiag`], and the caller
//! stops the draw at the first one. [`DrawLimits`] caps the number of vertices a single draw may
//! process, so NUMVERTICES = 0xFFFFFFFF with zero strides (which never fails a fetch) is bounded
//! too.
//!
//! # Post-transform vertex cache (§3.5)
//!
//! [`VertexCache`] is a small FIFO keyed on the vertex id, used within one DRAWELEMENTS draw and
//! cleared at the start of every draw. It is invisible for shaders that are pure functions of
//! their inputs; with shaders that carry state between invocations it decides which invocations
//! happen. UNVERIFIED: the hardware cache size (0x22D) and replacement policy are unknown.
//! We follow \[C\] (32-entry FIFO, indexed draws only, nothing kept across draws) because most
//! traces come from it; \[P\] uses 64 direct-mapped entries, \[M\] 16 FIFO entries. The size is the
//! const parameter of [`VertexCache`] and [`VertexCacheMode`] can turn it off.

use pica_cmd::regs::Regs;
pub use pica_cmd::regs::pipeline::{AttribFormat, AttribType, IndexFormat, Loader, LoaderEntry};

use crate::debug::{AttribSource, DiagKind, Diagnostic, DrawKind, LoadedVertex};
use crate::memory::PhysMem;

/// Number of vertex loaders (attribute buffers).
pub const NUM_LOADERS: usize = 12;
/// Number of attribute slots with a format in 0x201/0x202 (slots 12-15 are fixed-only).
pub const NUM_FORMATTED_ATTRIBUTES: usize = 12;
/// Number of attribute slots (the 4-bit count field allows 16).
pub const MAX_ATTRIBUTES: usize = 16;
/// Entries per loader that the hardware honours (\[C\] ignores entries 12-15 with an error).
pub const MAX_LOADER_ENTRIES: usize = 12;

/// UNVERIFIED: whether the hardware rounds f32 attributes to float24 on load. \[C\] and \[P\] keep the
/// full f32 value (which is what traces were checked against); the shader ALU is float24 per
/// \[3DB\]. Set to `true` to round on load.
pub const ROUND_F32_ATTRIBUTES_TO_F24: bool = false;

/// Where a slot's value comes from for every vertex of a draw.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SlotSource {
    /// Fetched from a loader.
    Buffer {
        /// Loader number (0-11).
        loader: u8,
        /// Byte offset of vertex 0's data from the attribute base (loader offset + position in
        /// the vertex).
        offset: u32,
        /// Bytes between vertices (the loader's stride).
        stride: u32,
        /// Format from 0x201/0x202.
        format: AttribFormat,
    },
    /// The fixed/default attribute value of this slot.
    Fixed,
    /// No source: the slot keeps its previous contents.
    #[default]
    Undefined,
}

/// Bytes per index of `format` (1 or 2).
pub fn index_size(format: IndexFormat) -> u32 {
    match format {
        IndexFormat::U8 => 1,
        // ok: a 1-bit field has no unknown encodings; 2 keeps the arithmetic defined.
        IndexFormat::U16 | IndexFormat::Unknown(_) => 2,
    }
}

/// A configuration problem noticed while decoding the loader registers. The draw still runs
/// (with the behaviour described on each variant).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ConfigDiag {
    /// A loader's entry count is 13-15; entries past 12 are ignored (as in \[C\]).
    #[error("loader {loader} lists {count} entries; only the first 12 exist")]
    TooManyLoaderEntries {
        /// Loader number.
        loader: u8,
        /// Configured entry count.
        count: u8,
    },
    /// Two loaders (or two entries) name the same attribute; the later one is used.
    #[error("attribute {attribute} is listed by loader {first} and again by loader {second}")]
    AttributeInSeveralLoaders {
        /// Attribute slot.
        attribute: u8,
        /// Loader of the earlier entry (ignored).
        first: u8,
        /// Loader of the later entry (used).
        second: u8,
    },
    /// A slot below the attribute count has no loader entry and no fixed bit: it keeps the value
    /// of the previous vertex/draw.
    #[error("attribute {attribute} has no loader and no fixed value (keeps previous contents)")]
    UndefinedAttribute {
        /// Attribute slot.
        attribute: u8,
    },
    /// A loader entry names a slot at or beyond the attribute count; it only takes up space.
    #[error("loader {loader} lists attribute {attribute}, beyond the attribute count {count}")]
    AttributeBeyondCount {
        /// Loader number.
        loader: u8,
        /// Attribute slot.
        attribute: u8,
        /// Attribute count (0x202 bits 28-31, plus one).
        count: u8,
    },
    /// A loader's stride is smaller than the bytes its entries occupy, so vertices overlap.
    /// \[3DB\]: a stride that is not the real vertex size hangs the PICA or draws nothing.
    #[error("loader {loader}: stride {stride} is smaller than its layout ({layout} bytes)")]
    StrideTooSmall {
        /// Loader number.
        loader: u8,
        /// Configured stride.
        stride: u8,
        /// Bytes the entries occupy (with alignment).
        layout: u32,
    },
}

impl ConfigDiag {
    /// As a GPU diagnostic for the event log.
    pub fn to_diagnostic(&self, draw: Option<u64>) -> Diagnostic {
        Diagnostic {
            kind: DiagKind::Other,
            draw,
            detail: self.to_string(),
        }
    }
}

/// A failure while fetching a draw's data. The draw stops at the first one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LoadDiag {
    /// An attribute fetch left mapped memory.
    #[error(
        "vertex {vertex} (draw index {index_in_draw}): attribute {attribute} of loader {loader} \
         reads unmapped memory 0x{addr:08X}..+{len}"
    )]
    AttributeUnmapped {
        /// Position in the draw (k).
        index_in_draw: u32,
        /// Vertex id.
        vertex: u32,
        /// Attribute slot.
        attribute: u8,
        /// Loader number.
        loader: u8,
        /// Physical address of the access (may exceed 32 bits when the arithmetic overflowed).
        addr: u64,
        /// Length of the access in bytes.
        len: u32,
    },
    /// An index fetch left mapped memory.
    #[error("draw index {index_in_draw}: index buffer read at 0x{addr:08X}..+{len} is unmapped")]
    IndexUnmapped {
        /// Position in the draw (k).
        index_in_draw: u32,
        /// Physical address of the access.
        addr: u64,
        /// Length in bytes (1 or 2).
        len: u32,
    },
    /// The draw asked for more vertices than [`DrawLimits`] allows; only the first `limit` run.
    #[error("draw asks for {requested} vertices; only the first {limit} are processed")]
    CountCapped {
        /// NUMVERTICES.
        requested: u32,
        /// The cap.
        limit: u32,
    },
}

impl LoadDiag {
    /// As a GPU diagnostic for the event log.
    pub fn to_diagnostic(&self, draw: Option<u64>) -> Diagnostic {
        let kind = match *self {
            LoadDiag::AttributeUnmapped { addr, len, .. }
            | LoadDiag::IndexUnmapped { addr, len, .. } => DiagKind::UnmappedRead {
                addr: addr.min(u64::from(u32::MAX)) as u32,
                len: len.into(),
            },
            LoadDiag::CountCapped { .. } => DiagKind::DrawTruncated,
        };
        Diagnostic {
            kind,
            draw,
            detail: self.to_string(),
        }
    }
}

/// Bounds on the work of one draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DrawLimits {
    /// Largest number of vertices (indices) one draw may process; the rest is dropped with
    /// [`LoadDiag::CountCapped`].
    pub max_vertices: u32,
    /// Largest number of shader instructions (VS and GS together) one draw may execute; the
    /// draw driver stops shading when it is spent. Each invocation also has its own budget in
    /// the interpreter, so this only matters for many slow invocations.
    pub max_shader_instructions: u64,
}

/// Default vertex cap: 1 Mi vertices per draw. The 3DS transforms at most a few million
/// vertices per second, so real draws stay far below; a hostile NUMVERTICES = 0xFFFFFFFF costs
/// at most this many fetches.
pub const DEFAULT_MAX_DRAW_VERTICES: u32 = 1 << 20;

/// Default instruction cap per draw: 2^30 (on the order of ten seconds in the reference
/// interpreter), far above real draws (1 Mi vertices × a few hundred instructions).
pub const DEFAULT_MAX_DRAW_INSTRUCTIONS: u64 = 1 << 30;

impl Default for DrawLimits {
    fn default() -> Self {
        Self {
            max_vertices: DEFAULT_MAX_DRAW_VERTICES,
            max_shader_instructions: DEFAULT_MAX_DRAW_INSTRUCTIONS,
        }
    }
}

/// Walks the vertex ids of one draw under [`DrawLimits`]: positions `k = 0 .. min(NUMVERTICES,
/// cap)`, each mapped to its vertex id by [`LoaderConfig::vertex_id`]. After the first failed
/// index fetch the cursor is exhausted, so a broken draw stops at its first bad read.
///
/// The caller decides what to do with each id (post-transform cache lookup, a GS
/// variable-primitive count, or [`LoaderConfig::load_vertex`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DrawCursor {
    kind: DrawKind,
    next: u32,
    end: u32,
}

impl DrawCursor {
    /// A cursor over a DRAWARRAYS or DRAWELEMENTS draw, with the cap diagnostic if NUMVERTICES
    /// exceeds the limit.
    pub fn new(
        cfg: &LoaderConfig,
        kind: DrawKind,
        limits: &DrawLimits,
    ) -> (Self, Option<LoadDiag>) {
        let (end, diag) = cfg.planned_count(limits);
        (Self { kind, next: 0, end }, diag)
    }

    /// Positions not yet visited.
    pub fn remaining(&self) -> u32 {
        self.end - self.next
    }

    /// Stops the walk (e.g. after a failed attribute fetch).
    pub fn stop(&mut self) {
        self.next = self.end;
    }

    /// The next `(k, vertex id)`, an index-fetch error (after which the cursor is exhausted), or
    /// `None` at the end.
    pub fn next_id(
        &mut self,
        cfg: &LoaderConfig,
        mem: &PhysMem,
    ) -> Option<Result<(u32, u32), LoadDiag>> {
        if self.next >= self.end {
            return None;
        }
        let k = self.next;
        self.next += 1;
        match cfg.vertex_id(mem, self.kind, k) {
            Ok(id) => Some(Ok((k, id))),
            Err(e) => {
                self.stop();
                Some(Err(e))
            }
        }
    }
}

/// The vertex-loader configuration of a draw, decoded once from the registers.
#[derive(Clone, Debug, PartialEq)]
pub struct LoaderConfig {
    /// Physical base address of all attribute and index data: ATTRIBBUFFERS_LOC bits 1-28
    /// shifted left by 3 (so always a multiple of 16).
    pub base: u32,
    /// Formats of attributes 0-11 (0x201, 0x202 bits 0-15).
    pub formats: [AttribFormat; NUM_FORMATTED_ATTRIBUTES],
    /// Fixed-attribute mask: bit i set = slot i uses its fixed value unless a loader lists it.
    pub fixed_mask: u16,
    /// Number of attribute slots, 1-16 (0x202 bits 28-31, plus one).
    pub attribute_count: u8,
    /// The twelve loaders as configured.
    pub loaders: [Loader; NUM_LOADERS],
    /// Resolved source of every slot (slots at or beyond `attribute_count` are `Undefined`).
    pub slots: [SlotSource; MAX_ATTRIBUTES],
    /// Index buffer offset from `base` (INDEXBUFFER_CONFIG bits 0-27).
    pub index_offset: u32,
    /// Index format (INDEXBUFFER_CONFIG bit 31).
    pub index_format: IndexFormat,
    /// NUMVERTICES.
    pub num_vertices: u32,
    /// VERTEX_OFFSET (DRAWARRAYS only).
    pub vertex_offset: u32,
    /// Problems noticed while decoding; the configuration is still usable.
    pub diagnostics: Vec<ConfigDiag>,
    /// Slots fetched from memory, in slot order (decoded once for the per-vertex loop).
    fetch: [(u8, SlotSource); MAX_ATTRIBUTES],
    fetch_len: usize,
}

impl LoaderConfig {
    /// Decodes the loader registers (0x200-0x22A) through the register catalogue and resolves
    /// every slot's source.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let formats = std::array::from_fn(|i| {
            // ok: `i < 12`, so the catalogue always has a format.
            r.attrib_format(i).unwrap_or(AttribFormat {
                ty: AttribType::Byte,
                components: 1,
            })
        });
        let loaders = std::array::from_fn(|n| {
            // ok: `n < 12`, so the catalogue always has the loader.
            r.loader(n).unwrap_or(Loader {
                offset: 0,
                entries: [LoaderEntry::Attribute(0); 12],
                stride: 0,
                component_count: 0,
            })
        });
        let index = r.index_buffer();
        let mut cfg = Self {
            base: r.attribbuffers_base().0,
            formats,
            fixed_mask: r.fixed_attrib_mask(),
            // ok: a 4-bit field plus one is at most 16.
            attribute_count: r.attrib_count() as u8,
            loaders,
            slots: [SlotSource::Undefined; MAX_ATTRIBUTES],
            index_offset: index.offset,
            index_format: index.format,
            num_vertices: r.num_vertices(),
            vertex_offset: r.vertex_offset(),
            diagnostics: Vec::new(),
            fetch: [(0, SlotSource::Undefined); MAX_ATTRIBUTES],
            fetch_len: 0,
        };
        cfg.resolve();
        cfg
    }

    /// Walks the loaders and decides each slot's source (module doc, "Loader → attribute
    /// mapping" and "Which value a slot gets").
    fn resolve(&mut self) {
        let count = usize::from(self.attribute_count);
        let mut loaded_by: [Option<u8>; NUM_FORMATTED_ATTRIBUTES] =
            [None; NUM_FORMATTED_ATTRIBUTES];
        for (n, loader) in self.loaders.iter().enumerate() {
            let n = n as u8; // ok: n < 12
            if usize::from(loader.component_count) > MAX_LOADER_ENTRIES {
                self.diagnostics.push(ConfigDiag::TooManyLoaderEntries {
                    loader: n,
                    count: loader.component_count,
                });
            }
            let mut off: u32 = 0;
            for &entry in loader.used_entries() {
                let format = match entry {
                    LoaderEntry::Attribute(a) => self.formats.get(usize::from(a)).map(|f| (a, *f)),
                    LoaderEntry::Padding(_) => None,
                };
                // ok: indexing below uses `a < 12` (a format exists) and `i < count <= 16`.
                if let Some((attribute, format)) = format {
                    let a = usize::from(attribute);
                    // Elements are aligned to their component size (1, 2 or 4).
                    off = off.next_multiple_of(format.ty.element_size());
                    if a < count {
                        if let Some(first) = loaded_by[a] {
                            self.diagnostics
                                .push(ConfigDiag::AttributeInSeveralLoaders {
                                    attribute,
                                    first,
                                    second: n,
                                });
                        }
                        loaded_by[a] = Some(n);
                        self.slots[a] = SlotSource::Buffer {
                            loader: n,
                            // Offsets are 28-bit plus at most 12 × 16 bytes: no overflow.
                            offset: loader.offset + off,
                            stride: u32::from(loader.stride),
                            format,
                        };
                    } else {
                        self.diagnostics.push(ConfigDiag::AttributeBeyondCount {
                            loader: n,
                            attribute,
                            count: self.attribute_count,
                        });
                    }
                    off += format.size_bytes();
                } else {
                    // Padding codes 12-15: align to 4, then skip 4, 8, 12 or 16 bytes.
                    off = off.next_multiple_of(4) + entry.padding_bytes();
                }
            }
            if !loader.used_entries().is_empty() && off > u32::from(loader.stride) {
                self.diagnostics.push(ConfigDiag::StrideTooSmall {
                    loader: n,
                    stride: loader.stride,
                    layout: off,
                });
            }
        }
        for i in 0..count {
            let listed = loaded_by.get(i).copied().flatten().is_some();
            if !listed {
                if i >= NUM_FORMATTED_ATTRIBUTES || self.fixed_mask & (1 << i) != 0 {
                    self.slots[i] = SlotSource::Fixed;
                } else {
                    self.diagnostics
                        .push(ConfigDiag::UndefinedAttribute { attribute: i as u8 });
                }
            }
        }
        self.fetch_len = 0;
        for (i, slot) in self.slots.iter().enumerate().take(count) {
            if matches!(slot, SlotSource::Buffer { .. }) {
                self.fetch[self.fetch_len] = (i as u8, *slot);
                self.fetch_len += 1;
            }
        }
    }

    /// Number of indices the draw processes under `limits`, and the diagnostic when capped.
    pub fn planned_count(&self, limits: &DrawLimits) -> (u32, Option<LoadDiag>) {
        if self.num_vertices > limits.max_vertices {
            let diag = LoadDiag::CountCapped {
                requested: self.num_vertices,
                limit: limits.max_vertices,
            };
            (limits.max_vertices, Some(diag))
        } else {
            (self.num_vertices, None)
        }
    }

    /// Physical address of the index buffer.
    pub fn index_address(&self) -> u64 {
        u64::from(self.base) + u64::from(self.index_offset)
    }

    /// The vertex id for draw position `k`: `k + VERTEX_OFFSET` (wrapping, u32) for DRAWARRAYS,
    /// `index[k]` for DRAWELEMENTS (VERTEX_OFFSET not applied, no restart value).
    /// Immediate-mode draws have no vertex ids; `k` is returned.
    pub fn vertex_id(&self, mem: &PhysMem, kind: DrawKind, k: u32) -> Result<u32, LoadDiag> {
        match kind {
            DrawKind::Arrays => Ok(k.wrapping_add(self.vertex_offset)),
            DrawKind::Immediate => Ok(k),
            DrawKind::Elements => {
                let len = index_size(self.index_format);
                let addr = self.index_address() + u64::from(k) * u64::from(len);
                let err = LoadDiag::IndexUnmapped {
                    index_in_draw: k,
                    addr,
                    len,
                };
                let a32 = u32::try_from(addr).map_err(|_| err.clone())?;
                match len {
                    1 => mem.read_u8(a32).map(u32::from),
                    _ => mem.read_u16(a32).map(u32::from),
                }
                .map_err(|_| err)
            }
        }
    }

    /// Loads vertex `vertex` into `out`: fetched slots from memory, fixed slots from `fixed`
    /// (the 16 fixed/default attribute values, x-y-z-w), undefined slots untouched.
    ///
    /// `index_in_draw` only labels diagnostics. On error, `out` may be partly updated.
    pub fn load_vertex(
        &self,
        mem: &PhysMem,
        fixed: &[[f32; 4]; MAX_ATTRIBUTES],
        index_in_draw: u32,
        vertex: u32,
        out: &mut AttributeSet,
    ) -> Result<(), LoadDiag> {
        let count = usize::from(self.attribute_count);
        out.count = self.attribute_count;
        let slots = self
            .slots
            .iter()
            .zip(fixed)
            .zip(out.values.iter_mut().zip(&mut out.sources));
        for ((slot, fixed), (value, source)) in slots.take(count) {
            match slot {
                SlotSource::Fixed => {
                    *value = *fixed;
                    *source = AttribSource::Fixed;
                }
                SlotSource::Undefined => *source = AttribSource::Default,
                SlotSource::Buffer { .. } => {}
            }
        }
        for &(slot, source) in &self.fetch[..self.fetch_len] {
            let SlotSource::Buffer {
                loader,
                offset,
                stride,
                format,
            } = source
            else {
                continue;
            };
            let addr =
                u64::from(self.base) + u64::from(offset) + u64::from(stride) * u64::from(vertex);
            let len = format.size_bytes().min(16);
            let err = || LoadDiag::AttributeUnmapped {
                index_in_draw,
                vertex,
                attribute: slot,
                loader,
                addr,
                len,
            };
            let a32 = u32::try_from(addr).map_err(|_| err())?;
            let mut buf = [0u8; 16];
            let bytes = &mut buf[..len as usize];
            match mem.slice_in_page(a32, bytes.len()) {
                Some(s) => bytes.copy_from_slice(s),
                None => mem.read(a32, bytes).map_err(|_| err())?,
            }
            // ok: fetch slots are attribute indices below 12.
            let i = usize::from(slot);
            out.values[i] = decode_attribute(&buf, format);
            out.sources[i] = AttribSource::Buffer { loader, addr: a32 };
        }
        Ok(())
    }
}

/// Converts raw attribute bytes to a vec4 (no normalisation; missing components 0, 0, 0, 1).
pub fn decode_attribute(bytes: &[u8; 16], format: AttribFormat) -> [f32; 4] {
    let mut v = [0.0, 0.0, 0.0, 1.0];
    let n = usize::from(format.components).min(4);
    for (c, out) in v.iter_mut().enumerate().take(n) {
        *out = match format.ty {
            AttribType::Byte => f32::from(bytes[c] as i8),
            AttribType::UnsignedByte => f32::from(bytes[c]),
            AttribType::Short => f32::from(i16::from_le_bytes([bytes[2 * c], bytes[2 * c + 1]])),
            // ok: a 2-bit type field has no unknown encodings; treat one like a float.
            AttribType::Float | AttribType::Unknown(_) => {
                let f = f32::from_le_bytes([
                    bytes[4 * c],
                    bytes[4 * c + 1],
                    bytes[4 * c + 2],
                    bytes[4 * c + 3],
                ]);
                if ROUND_F32_ATTRIBUTES_TO_F24 {
                    shader_unit::float::round_to_f24(f)
                } else {
                    f
                }
            }
        };
    }
    v
}

/// The input attributes of one vertex, before the shader's input permutation.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AttributeSet {
    /// Slot values x, y, z, w. Slots at or beyond `count` are stale and not used.
    pub values: [[f32; 4]; MAX_ATTRIBUTES],
    /// Where each slot's value came from.
    pub sources: [AttribSource; MAX_ATTRIBUTES],
    /// Number of valid slots (1-16).
    pub count: u8,
}

impl Default for AttributeSet {
    fn default() -> Self {
        Self {
            values: [[0.0; 4]; MAX_ATTRIBUTES],
            sources: [AttribSource::Default; MAX_ATTRIBUTES],
            count: 0,
        }
    }
}

impl AttributeSet {
    /// An immediate-mode vertex (FIXEDATTRIB_INDEX = 0xF): `values` are the attributes in order
    /// (at most 16 are used).
    pub fn immediate(values: &[[f32; 4]]) -> Self {
        let mut set = Self::default();
        let n = values.len().min(MAX_ATTRIBUTES);
        set.values[..n].copy_from_slice(&values[..n]);
        set.sources[..n].fill(AttribSource::Immediate);
        set.count = n as u8; // ok: n <= 16
        set
    }

    /// The valid slots.
    pub fn slots(&self) -> &[[f32; 4]] {
        &self.values[..usize::from(self.count).min(MAX_ATTRIBUTES)]
    }

    /// As the event log's record (allocates; observers only).
    pub fn to_loaded(&self, index_in_draw: u32, vertex_id: u32) -> LoadedVertex {
        let n = usize::from(self.count).min(MAX_ATTRIBUTES);
        LoadedVertex {
            index_in_draw,
            vertex_id,
            attrs: self.values[..n].to_vec(),
            sources: self.sources[..n].to_vec(),
        }
    }
}

/// Whether the post-transform vertex cache is used (module doc, §3.5).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum VertexCacheMode {
    /// Shade every index, even repeated ones.
    Disabled,
    /// Reuse the outputs of recently shaded vertex ids within one DRAWELEMENTS draw (\[C\]).
    #[default]
    PerIndexedDraw,
}

/// Number of entries of the default vertex cache (\[C\]: 32).
pub const VERTEX_CACHE_ENTRIES: usize = 32;

/// A FIFO post-transform cache of `N` entries keyed on the vertex id. Fixed size, no allocation;
/// [`VertexCache::clear`] is O(1), so one cache can serve draw after draw (the draw path keeps
/// one instead of making its ~8 KB of entries for every draw).
#[derive(Clone, Debug)]
pub struct VertexCache<T: Copy + Default, const N: usize = VERTEX_CACHE_ENTRIES> {
    /// Slot `i`'s vertex id, for `i < len`.
    ids: [u32; N],
    values: [T; N],
    /// Slots filled since the last clear (they fill in order from 0, then wrap).
    len: usize,
    /// The slot the next insertion takes.
    next: usize,
}

impl<T: Copy + Default, const N: usize> Default for VertexCache<T, N> {
    fn default() -> Self {
        Self {
            ids: [0; N],
            values: [T::default(); N],
            len: 0,
            next: 0,
        }
    }
}

impl<T: Copy + Default, const N: usize> VertexCache<T, N> {
    /// Empties the cache (start of every draw; VTX_FUNC 0x231).
    pub fn clear(&mut self) {
        self.len = 0;
        self.next = 0;
    }

    /// The cached value for `vertex`, if present (the first filled slot holding it).
    pub fn get(&self, vertex: u32) -> Option<&T> {
        let i = self.ids[..self.len].iter().position(|&id| id == vertex)?;
        self.values.get(i)
    }

    /// Inserts `value` for `vertex`, evicting the oldest entry when full.
    pub fn insert(&mut self, vertex: u32, value: T) {
        if N == 0 {
            return;
        }
        if let (Some(id), Some(v)) = (self.ids.get_mut(self.next), self.values.get_mut(self.next)) {
            *id = vertex;
            *v = value;
        }
        self.len = (self.len + 1).min(N);
        self.next = (self.next + 1) % N;
    }
}

#[cfg(test)]
mod tests;
