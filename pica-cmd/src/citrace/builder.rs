//! Building CiTrace files from code: initial state plus a stream of frame markers, memory loads
//! (deduplicated by content) and MMIO register writes, written in the canonical layout of Citra's
//! recorder.
//!
//! Stage: producer of traces (demo scenes, tests, trace editing). Input: calls on
//! [`CiTraceBuilder`]. Output: `.ctf` bytes. Registers read: none; the command-list helper writes
//! the P3D registers at PA 0x104018E0/E8/F0 the way Citra's GSP does (size in bytes).
//!
//! Canonical layout (Citra 2017–2021 `Recorder::Finish`): header (0x64 bytes); the ten sections
//! back to back in header order; the distinct blobs in order of first use; the stream table.
//! A memory load whose contents equal an earlier one's points at the earlier blob. Citra compares
//! CRC-32 values only (a collision would alias different data); we compare the bytes themselves,
//! which gives the same file whenever Citra's is correct.

use super::{
    CiTrace, CiTraceError, ELEMENT_SIZE, HEADER_SIZE, Header, InitialState, KIND_MEMORY_LOAD,
    MAGIC, MemoryLoad, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER, RawElement,
    RegWriteLayout, RegisterWrite, Section, SectionRef, StreamEvent, TraceSource, VERSION,
    WriteWidth,
};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash as _, Hasher as _};
use std::io::{self, Write};
use thiserror::Error;

/// Errors of [`CiTraceBuilder`].
#[derive(Debug, Error)]
pub enum BuildError {
    /// The file would need offsets or counts beyond 32 bits.
    #[error("the trace is too large for CiTrace's 32-bit offsets ({what} would be at {value:#X})")]
    TooLarge {
        /// Which field overflowed.
        what: &'static str,
        /// The value that does not fit.
        value: u64,
    },
    /// A memory load of 4 GiB or more.
    #[error("memory load of {len} bytes is too large (sizes are 32-bit)")]
    BlobTooLarge {
        /// Length of the data.
        len: usize,
    },
    /// A value wider than the write's width.
    #[error("value {value:#X} does not fit a {width:?} register write")]
    ValueTooWide {
        /// Requested width.
        width: WriteWidth,
        /// The value.
        value: u64,
    },
    /// A width the chosen layout cannot express (the compact layout has 32-bit writes only;
    /// unknown size codes are not written by the builder).
    #[error("{width:?} register writes cannot be written in the {layout:?} layout")]
    UnsupportedWidth {
        /// Requested width.
        width: WriteWidth,
        /// Layout in use.
        layout: RegWriteLayout,
    },
    /// [`CiTraceBuilder::raw_element`] was given a memory load (use
    /// [`CiTraceBuilder::memory_load`], which stores the data).
    #[error("raw memory-load elements cannot be added; use memory_load")]
    RawMemoryLoad,
    /// Reading the source trace failed ([`CiTraceBuilder::from_trace`]).
    #[error(transparent)]
    Trace(#[from] CiTraceError),
    /// Writing the output failed.
    #[error("writing the trace failed: {0}")]
    Io(#[from] io::Error),
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Item {
    /// Any element that carries no blob, verbatim.
    Element(RawElement),
    /// A memory load of blob `blob` to `pa`.
    Load { blob: usize, pa: u32 },
}

/// Builds a CiTrace from code.
///
/// ```
/// use pica_cmd::citrace::{CiTrace, CiTraceBuilder, InitialState};
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut b = CiTraceBuilder::new(InitialState::citra_sized());
/// b.submit_command_list(0x2000_0000, &[0u8; 16])?;
/// b.frame_marker();
/// let bytes = b.build()?;
/// let trace = CiTrace::from_bytes(bytes)?;
/// assert_eq!(trace.submissions().len(), 1);
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug, Default)]
pub struct CiTraceBuilder {
    initial: InitialState,
    layout: RegWriteLayout,
    items: Vec<Item>,
    blobs: Vec<Vec<u8>>,
    by_hash: HashMap<u64, Vec<usize>>,
}

fn content_hash(data: &[u8]) -> u64 {
    // Deterministic: DefaultHasher::new() uses fixed keys. Only used to find candidates; equality
    // is decided by comparing bytes.
    let mut h = DefaultHasher::new();
    data.hash(&mut h);
    h.finish()
}

impl CiTraceBuilder {
    /// A builder starting from the given initial state, writing register writes in the
    /// [`RegWriteLayout::Sized`] layout.
    pub fn new(initial: InitialState) -> Self {
        Self {
            initial,
            ..Self::default()
        }
    }

    /// Re-creates a trace's contents in a builder (every blob is read from the source). Building
    /// it writes the canonical layout: identical bytes for a trace made by Citra's recorder.
    pub fn from_trace<S: TraceSource>(trace: &mut CiTrace<S>) -> Result<Self, BuildError> {
        let mut b = Self::new(trace.initial_state().clone());
        b.layout = trace.layout();
        let mut buf = Vec::new();
        for i in 0..trace.elements().len() {
            match trace.event(i) {
                Some(StreamEvent::MemoryLoad(m)) => {
                    trace.read_blob_into(i, &mut buf)?;
                    b.memory_load(m.physical_address, &buf)?;
                }
                Some(_) => {
                    if let Some(&raw) = trace.elements().get(i) {
                        b.items.push(Item::Element(raw));
                    }
                }
                None => {}
            }
        }
        Ok(b)
    }

    /// Sets the register-write layout (default [`RegWriteLayout::Sized`]).
    pub fn layout(&mut self, layout: RegWriteLayout) -> &mut Self {
        self.layout = layout;
        self
    }

    /// The initial state.
    pub fn initial_state(&self) -> &InitialState {
        &self.initial
    }

    /// The initial state, mutable.
    pub fn initial_state_mut(&mut self) -> &mut InitialState {
        &mut self.initial
    }

    /// Number of stream elements so far.
    pub fn element_count(&self) -> usize {
        self.items.len()
    }

    /// Number of distinct blobs so far.
    pub fn blob_count(&self) -> usize {
        self.blobs.len()
    }

    /// Appends a frame marker.
    pub fn frame_marker(&mut self) -> &mut Self {
        self.items.push(Item::Element(RawElement::frame_marker()));
        self
    }

    /// Appends a memory load of `data` to physical address `pa`. Identical contents are stored
    /// once.
    pub fn memory_load(&mut self, pa: u32, data: &[u8]) -> Result<&mut Self, BuildError> {
        if u32::try_from(data.len()).is_err() {
            return Err(BuildError::BlobTooLarge { len: data.len() });
        }
        let hash = content_hash(data);
        let candidates = self.by_hash.entry(hash).or_default();
        let found = candidates
            .iter()
            .copied()
            .find(|&i| self.blobs.get(i).is_some_and(|b| b.as_slice() == data));
        let blob = match found {
            Some(i) => i,
            None => {
                let i = self.blobs.len();
                self.blobs.push(data.to_vec());
                candidates.push(i);
                i
            }
        };
        self.items.push(Item::Load { blob, pa });
        Ok(self)
    }

    /// Appends a 32-bit register write (the only width Citra records).
    pub fn register_write(&mut self, pa: u32, value: u32) -> &mut Self {
        let w = RegisterWrite {
            physical_address: pa,
            width: WriteWidth::Bits32,
            value: u64::from(value),
        };
        self.items
            .push(Item::Element(RawElement::register_write(self.layout, w)));
        self
    }

    /// Appends a register write of the given width (8/16/32/64-bit; the value must fit).
    pub fn register_write_sized(
        &mut self,
        pa: u32,
        width: WriteWidth,
        value: u64,
    ) -> Result<&mut Self, BuildError> {
        let Some(bytes) = width.bytes() else {
            return Err(BuildError::UnsupportedWidth {
                width,
                layout: self.layout,
            });
        };
        if self.layout == RegWriteLayout::Compact && width != WriteWidth::Bits32 {
            return Err(BuildError::UnsupportedWidth {
                width,
                layout: self.layout,
            });
        }
        if bytes < 8 && value >> (bytes * 8) != 0 {
            return Err(BuildError::ValueTooWide { width, value });
        }
        let w = RegisterWrite {
            physical_address: pa,
            width,
            value,
        };
        self.items
            .push(Item::Element(RawElement::register_write(self.layout, w)));
        Ok(self)
    }

    /// Appends an element verbatim (frame markers, register writes, undefined kinds). Memory
    /// loads are refused: their blob must go through [`CiTraceBuilder::memory_load`].
    pub fn raw_element(&mut self, element: RawElement) -> Result<&mut Self, BuildError> {
        if element.kind == KIND_MEMORY_LOAD {
            return Err(BuildError::RawMemoryLoad);
        }
        self.items.push(Item::Element(element));
        Ok(self)
    }

    /// Appends a command-list submission the way Citra records one: writes of the size (in
    /// bytes, Citra's convention) and address (PA >> 3) registers, the memory load of the list
    /// (recorded while the trigger write is processed), then the trigger write (value 1).
    pub fn submit_command_list(&mut self, pa: u32, list: &[u8]) -> Result<&mut Self, BuildError> {
        let size =
            u32::try_from(list.len()).map_err(|_| BuildError::BlobTooLarge { len: list.len() })?;
        self.register_write(PA_CMDLIST_SIZE, size);
        self.register_write(PA_CMDLIST_ADDR, pa >> 3);
        self.memory_load(pa, list)?;
        self.register_write(PA_CMDLIST_TRIGGER, 1);
        Ok(self)
    }

    /// Computes the canonical header and the blob offsets.
    fn layout_header(&self) -> Result<(Header, Vec<u32>), BuildError> {
        let fit = |what: &'static str, value: u64| {
            u32::try_from(value).map_err(|_| BuildError::TooLarge { what, value })
        };
        let mut cursor = u64::from(HEADER_SIZE);
        let mut sections = [SectionRef::default(); 10];
        for s in Section::ALL {
            let words = self.initial.section(s).len() as u64;
            sections[s.index()] = SectionRef {
                offset: fit(s.name(), cursor)?,
                words: fit(s.name(), words)?,
            };
            cursor += words * 4;
        }
        let mut blob_offsets = Vec::with_capacity(self.blobs.len());
        for b in &self.blobs {
            blob_offsets.push(fit("a memory-load blob", cursor)?);
            cursor += b.len() as u64;
        }
        let header = Header {
            magic: MAGIC,
            version: VERSION,
            header_size: HEADER_SIZE,
            sections,
            stream_offset: fit("stream_offset", cursor)?,
            stream_len: fit("stream_size", self.items.len() as u64)?,
        };
        Ok((header, blob_offsets))
    }

    /// Size in bytes of the file [`CiTraceBuilder::build`] would produce.
    pub fn file_len(&self) -> u64 {
        let sections: u64 = Section::ALL
            .iter()
            .map(|&s| self.initial.section(s).len() as u64 * 4)
            .sum();
        let blobs: u64 = self.blobs.iter().map(|b| b.len() as u64).sum();
        u64::from(HEADER_SIZE)
            + sections
            + blobs
            + self.items.len() as u64 * u64::from(ELEMENT_SIZE)
    }

    /// Writes the trace in the canonical layout.
    pub fn write_to<W: Write>(&self, out: &mut W) -> Result<(), BuildError> {
        let (header, blob_offsets) = self.layout_header()?;
        out.write_all(&header.to_bytes())?;
        let mut buf = Vec::new();
        for s in Section::ALL {
            buf.clear();
            buf.extend(self.initial.section(s).iter().flat_map(|w| w.to_le_bytes()));
            out.write_all(&buf)?;
        }
        for b in &self.blobs {
            out.write_all(b)?;
        }
        buf.clear();
        for item in &self.items {
            let raw = match *item {
                Item::Element(e) => e,
                Item::Load { blob, pa } => RawElement::memory_load(MemoryLoad {
                    file_offset: blob_offsets.get(blob).copied().unwrap_or(0),
                    // ok: memory_load refuses blobs of 4 GiB or more.
                    size: self.blobs.get(blob).map_or(0, |b| b.len() as u32),
                    physical_address: pa,
                }),
            };
            buf.extend_from_slice(&raw.to_bytes());
        }
        out.write_all(&buf)?;
        Ok(())
    }

    /// The trace in the canonical layout, as bytes.
    pub fn build(&self) -> Result<Vec<u8>, BuildError> {
        let mut out = Vec::with_capacity(usize::try_from(self.file_len()).unwrap_or(0));
        self.write_to(&mut out)?;
        Ok(out)
    }
}
