//! PICA200 command lists: parsing into register writes and encoding register writes back into
//! command-list bytes.
//!
//! Stage: the very front of the pipeline. Input: the raw bytes of a command buffer as the GPU
//! reads them from physical memory (little-endian 32-bit words). Output: the ordered register
//! writes `(id, byte-enable mask, value)` that the command processor applies, each with the byte
//! offset it came from. Registers read: none (this is pure syntax; side effects such as
//! `GPUREG_CMDBUF_JUMP0/1` or `GPUREG_FINALIZE` are the command processor's business, this
//! module only notes writes after a FINALIZE as a diagnostic).
//!
//! Reference: `pica-core.md` §1 and `pica-raster.md` §0.2; 3dbrew "GPU/Internal Registers"
//! (command buffer section).
//!
//! # Format
//!
//! A command is `param0, header, param1 .. paramN` (the first parameter comes *before* the
//! header), followed by one padding word when `2 + N` is odd, so that every command starts on an
//! 8-byte boundary relative to the start of the buffer. Header bits:
//!
//! | bits  | field |
//! |-------|-------|
//! | 0-15  | register id (unsigned; only 0x000-0x2FF exist) |
//! | 16-19 | byte-enable mask (bit 16 -> value bits 0-7, ..., bit 19 -> bits 24-31) |
//! | 20-27 | number of extra parameters N (unsigned) — see [`ExtraParamWidth`] |
//! | 28-30 | unused (see [`ExtraParamWidth`]) |
//! | 31    | consecutive flag: parameter k goes to `id + k`; clear: all go to `id` |
//!
//! # Padding rule
//!
//! The rule is the processing loop both emulators implement: *before* reading a command, if an
//! odd number of words has been consumed since the start of the buffer, one word is skipped. A
//! padding word therefore exists only when more data follows; a buffer may end right after an
//! odd-length command. Padding words are never executed, but their values are kept so that a
//! parsed list re-encodes to identical bytes.
//!
//! # API overview
//!
//! * [`Commands`] — allocation-free iterator over the commands of a byte slice (for the command
//!   processor's hot path); [`CommandRef::writes`] expands one command into its writes.
//! * [`parse`] / [`parse_with`] — whole-list parse into a [`CmdList`] (commands, writes,
//!   diagnostics); a malformed list yields a [`CmdListError`] carrying the byte offset *and* the
//!   writes parsed before the problem.
//! * [`CmdList::encode`] — byte-exact re-encoding of a parsed list.
//! * [`CmdListBuilder`] / [`encode_writes`] — build lists from register writes, choosing burst
//!   forms automatically or as forced by the caller.

use serde::Serialize;
use thiserror::Error;

/// Number of PICA internal registers (ids 0x000..=0x2FF). Writes to higher ids are reported as
/// [`Diagnostic::UnknownRegister`].
// HW: [3DB] register map ends at 0x2FF; [C] ignores (logs) ids >= 0x300, [P] bounds-checks.
pub const REGISTER_COUNT: u16 = 0x300;

/// Register id of `GPUREG_FINALIZE`, the end-of-list register.
pub const FINALIZE_ID: u16 = 0x010;

/// Conventional value written to `GPUREG_FINALIZE` by libctru/citro3d (any value works).
pub const FINALIZE_VALUE: u32 = 0x1234_5678;

/// Maximum number of parameters in one command with the 8-bit extra-parameter count
/// (1 first parameter + 255 extra).
pub const MAX_PARAMS_PER_COMMAND: usize = 256;

/// How many header bits hold the extra-parameter count.
///
/// Sources disagree: 3dbrew, mikage and Panda3DS read 8 bits (20-27) and call 28-30 unused;
/// Citra (2021) reads 11 bits (20-30), as did older 3dbrew revisions and old ctrulib's
/// `GPUCMD_Add` (`& 0x7ff`). Real lists never set bits 28-30, so both readings agree on them.
/// We default to 8 bits (hardware documentation plus two emulators) and report set bits 28-30 as
/// [`Diagnostic::ReservedHeaderBits`]; choose [`ExtraParamWidth::Bits11`] to parse as Citra does.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub enum ExtraParamWidth {
    /// Bits 20-27 (unsigned, 0..=255 extra parameters). \[3DB\], \[M\], \[P\].
    #[default]
    Bits8,
    /// Bits 20-30 (unsigned, 0..=2047 extra parameters). \[C\].
    Bits11,
}

impl ExtraParamWidth {
    /// Mask applied to `header >> 20`.
    pub const fn field_mask(self) -> u32 {
        match self {
            Self::Bits8 => 0xFF,
            Self::Bits11 => 0x7FF,
        }
    }
}

/// Options of the command-list parser.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ParseOptions {
    /// Width of the extra-parameter count field (default: 8 bits, see [`ExtraParamWidth`]).
    pub extra_param_width: ExtraParamWidth,
}

/// A command header word.
///
/// Raw storage is the 32-bit word; the accessors decode its fields (all unsigned integers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct CmdHeader(pub u32);

impl CmdHeader {
    /// Builds a header from its fields. `mask` is truncated to 4 bits; `extra` is the number of
    /// extra parameters (0..=255, bits 20-27).
    pub const fn new(id: u16, mask: u8, extra: u8, consecutive: bool) -> Self {
        Self(
            id as u32
                | ((mask as u32 & 0xF) << 16)
                | ((extra as u32) << 20)
                | ((consecutive as u32) << 31),
        )
    }

    /// Register id, bits 0-15.
    pub const fn id(self) -> u16 {
        (self.0 & 0xFFFF) as u16
    }

    /// Byte-enable mask, bits 16-19 (bit 0 of the result enables value bits 0-7).
    pub const fn mask(self) -> u8 {
        ((self.0 >> 16) & 0xF) as u8
    }

    /// Number of extra parameters, read with the given field width.
    pub const fn extra_params(self, width: ExtraParamWidth) -> u32 {
        (self.0 >> 20) & width.field_mask()
    }

    /// Bits 28-30, unused with the 8-bit reading of the count (returned shifted down, 0..=7).
    pub const fn reserved_bits(self) -> u32 {
        (self.0 >> 28) & 0x7
    }

    /// Consecutive ("group") flag, bit 31.
    pub const fn consecutive(self) -> bool {
        self.0 & 0x8000_0000 != 0
    }
}

/// Expands a 4-bit byte-enable mask into a 32-bit bit mask (bit k of `mask` -> byte k).
pub const fn expand_mask(mask: u8) -> u32 {
    let mut out = 0u32;
    let mut k = 0;
    while k < 4 {
        if mask & (1 << k) != 0 {
            out |= 0xFF << (8 * k);
        }
        k += 1;
    }
    out
}

/// A register write without provenance: what the encoder takes and what the property tests
/// compare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct RegWrite {
    /// Register id (unsigned; 0x000..=0x2FF exist).
    pub id: u16,
    /// Byte-enable mask, 4 bits (bit k enables value byte k).
    pub mask: u8,
    /// Parameter word as stored in the list (unmasked).
    pub value: u32,
}

impl RegWrite {
    /// A full-word write (mask 0xF).
    pub const fn new(id: u16, value: u32) -> Self {
        Self {
            id,
            mask: 0xF,
            value,
        }
    }

    /// A write with an explicit byte-enable mask (truncated to 4 bits).
    pub const fn masked(id: u16, mask: u8, value: u32) -> Self {
        Self {
            id,
            mask: mask & 0xF,
            value,
        }
    }

    /// Applies this write to an old register value: `(old & !M) | (value & M)` with M the
    /// expanded byte mask (\[3DB\] §1.3).
    pub const fn apply(self, old: u32) -> u32 {
        let m = expand_mask(self.mask);
        (old & !m) | (self.value & m)
    }
}

/// One register write decoded from a command list, with its provenance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
pub struct CmdWrite {
    /// Byte offset of the parameter word within the list.
    pub offset: u32,
    /// Register id (unsigned; ids >= 0x300 do not exist and are reported as diagnostics).
    pub id: u16,
    /// Byte-enable mask of the command, 4 bits.
    pub mask: u8,
    /// Parameter word (unmasked, as in the list).
    pub value: u32,
    /// Index of the command this write belongs to (0-based, in list order).
    pub command: u32,
    /// Byte offset of that command's header word.
    pub header_offset: u32,
}

impl CmdWrite {
    /// The write without provenance.
    pub const fn reg_write(&self) -> RegWrite {
        RegWrite {
            id: self.id,
            mask: self.mask,
            value: self.value,
        }
    }
}

/// Burst form of a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Form {
    /// One parameter.
    Single,
    /// Several parameters to consecutive ids (header bit 31 set).
    Consecutive,
    /// Several parameters to the same id (header bit 31 clear).
    Repeated,
}

/// A command as found in a byte slice (borrowed; no allocation).
#[derive(Clone, Copy, Debug)]
pub struct CommandRef<'a> {
    /// Index of the command in the list (0-based).
    pub index: u32,
    /// Byte offset of the first parameter word (= start of the command).
    pub offset: u32,
    /// Byte offset of the header word (`offset + 4`).
    pub header_offset: u32,
    /// The header word.
    pub header: CmdHeader,
    /// Number of parameters (1 + extra count).
    pub param_count: u32,
    /// First parameter word.
    pub first_param: u32,
    /// Bytes of the extra parameter words (`4 * (param_count - 1)` bytes).
    pub extra: &'a [u8],
    /// The padding word that follows the command, if the list has one there.
    pub padding: Option<u32>,
}

impl<'a> CommandRef<'a> {
    /// Parameter `k` (0 = first parameter), or `None` past the end.
    #[inline]
    pub fn param(&self, k: u32) -> Option<u32> {
        if k == 0 {
            return Some(self.first_param);
        }
        let start = usize::try_from(k - 1).ok()?.checked_mul(4)?;
        read_word(self.extra, start)
    }

    /// Register id written by parameter `k` (`id + k` in consecutive mode, else `id`).
    #[inline]
    pub fn id_for(&self, k: u32) -> u16 {
        if self.header.consecutive() {
            // ok: `Commands` rejects commands whose last id would pass 0xFFFF, so this add
            // cannot wrap for k < param_count.
            self.header.id().wrapping_add(k as u16)
        } else {
            self.header.id()
        }
    }

    /// Byte offset of parameter `k` (the first parameter sits before the header).
    #[inline]
    pub fn param_offset(&self, k: u32) -> u32 {
        if k == 0 {
            self.offset
        } else {
            // ok: all offsets fit in u32 because `Commands` rejects inputs of 4 GiB or more.
            self.header_offset + 4 * k
        }
    }

    /// Burst form of this command.
    pub fn form(&self) -> Form {
        if self.param_count == 1 {
            Form::Single
        } else if self.header.consecutive() {
            Form::Consecutive
        } else {
            Form::Repeated
        }
    }

    /// Byte offset just past the command (including its padding word if present).
    pub fn end_offset(&self) -> u32 {
        self.header_offset + 4 * self.param_count + if self.padding.is_some() { 4 } else { 0 }
    }

    /// The register writes of this command, in order.
    pub fn writes(&self) -> impl Iterator<Item = CmdWrite> + 'a {
        let this = *self;
        (0..this.param_count).map(move |k| CmdWrite {
            offset: this.param_offset(k),
            id: this.id_for(k),
            mask: this.header.mask(),
            value: this.param(k).unwrap_or(0),
            command: this.index,
            header_offset: this.header_offset,
        })
    }
}

/// What went wrong in a malformed command list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error, Serialize)]
pub enum CmdListErrorKind {
    /// The list is 4 GiB or larger (offsets are 32-bit).
    #[error("list of {len} bytes is too large (offsets are 32-bit)")]
    TooLarge {
        /// Length in bytes.
        len: u64,
    },
    /// A first parameter word is the last word of the list: the header is missing.
    #[error("command header missing: the list ends after the first parameter")]
    MissingHeader,
    /// The header declares more extra parameters than the list holds.
    #[error(
        "header 0x{header:08X} declares {declared} extra parameter(s) but only {available} word(s) remain"
    )]
    TruncatedParams {
        /// The header word.
        header: u32,
        /// Extra parameters declared.
        declared: u32,
        /// Whole words left in the list after the header.
        available: u32,
    },
    /// A consecutive command would write past register id 0xFFFF.
    #[error("consecutive command from id 0x{id:04X} with {count} parameters runs past id 0xFFFF")]
    IdOverflow {
        /// First register id.
        id: u16,
        /// Number of parameters.
        count: u32,
    },
    /// The length is not a multiple of 4: a partial word remains at the end.
    #[error("{count} trailing byte(s) do not form a whole word")]
    TrailingBytes {
        /// Number of leftover bytes (1..=3).
        count: u32,
    },
}

/// Error from a single step of [`Commands`]: what went wrong and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error, Serialize)]
#[error("malformed command list at byte offset 0x{offset:X}: {kind}")]
pub struct CmdListStepError {
    /// Byte offset of the offending command (its first parameter word), or of the trailing
    /// bytes.
    pub offset: u32,
    /// What went wrong.
    pub kind: CmdListErrorKind,
}

/// A malformed command list: where, what, and everything parsed before the problem.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("malformed command list at byte offset 0x{offset:X}: {kind}")]
pub struct CmdListError {
    /// Byte offset of the offending command (its first parameter word), or of the trailing
    /// bytes.
    pub offset: u32,
    /// What went wrong.
    pub kind: CmdListErrorKind,
    /// The commands, writes and diagnostics parsed before the problem.
    pub partial: Box<CmdList>,
}

/// A non-fatal observation about a well-formed list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Diagnostic {
    /// A write to a register id >= 0x300 (no such register; \[C\] logs and ignores it).
    UnknownRegister {
        /// Byte offset of the parameter word.
        offset: u32,
        /// The register id.
        id: u16,
    },
    /// Header bits 28-30 are set (unused with the 8-bit count; with [`ExtraParamWidth::Bits11`]
    /// they are part of the count and not reported).
    ReservedHeaderBits {
        /// Byte offset of the header word.
        offset: u32,
        /// The header word.
        header: u32,
    },
    /// The list length is not a multiple of 16 bytes. \[3DB\]: the hardware clears the low bits of
    /// the size, so the last 8 bytes would not execute.
    SizeNotMultipleOf16 {
        /// Length in bytes.
        len: u32,
    },
    /// Commands follow a write to GPUREG_FINALIZE (0x010). \[3DB\]: hardware ignores the rest of
    /// the buffer; \[C\] keeps executing. Only the first such write is reported.
    WritesAfterFinalize {
        /// Byte offset of the parameter word of the first write after FINALIZE.
        offset: u32,
    },
}

impl core::fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match *self {
            Self::UnknownRegister { offset, id } => {
                write!(
                    f,
                    "offset 0x{offset:X}: write to register 0x{id:03X}, which does not exist (ids end at 0x2FF)"
                )
            }
            Self::ReservedHeaderBits { offset, header } => {
                write!(
                    f,
                    "offset 0x{offset:X}: header 0x{header:08X} sets the unused bits 28-30"
                )
            }
            Self::SizeNotMultipleOf16 { len } => write!(
                f,
                "list size {len} bytes is not a multiple of 16: hardware would drop the last {} bytes",
                len % 16
            ),
            Self::WritesAfterFinalize { offset } => write!(
                f,
                "offset 0x{offset:X}: writes follow GPUREG_FINALIZE (hardware stops at FINALIZE, Citra continues)"
            ),
        }
    }
}

/// Allocation-free iterator over the commands of a command list.
///
/// Yields `Err` once (and then stops) for a malformed list; see [`CmdListErrorKind`].
#[derive(Clone, Debug)]
pub struct Commands<'a> {
    bytes: &'a [u8],
    /// Byte position of the next unread word.
    pos: usize,
    /// Number of whole words in `bytes`.
    words: usize,
    index: u32,
    options: ParseOptions,
    done: bool,
    /// The input is 4 GiB or larger: the first call reports it.
    too_large: bool,
}

impl<'a> Commands<'a> {
    /// Iterates over `bytes` (a buffer start: padding is computed relative to it) with default
    /// options.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self::with_options(bytes, ParseOptions::default())
    }

    /// Iterates over `bytes` with the given options.
    pub fn with_options(bytes: &'a [u8], options: ParseOptions) -> Self {
        Self {
            bytes,
            pos: 0,
            words: bytes.len() / 4,
            index: 0,
            options,
            done: false,
            too_large: u32::try_from(bytes.len()).is_err(),
        }
    }

    /// Byte position of the next unread word.
    pub fn position(&self) -> usize {
        self.pos
    }

    fn fail(
        &mut self,
        offset: usize,
        kind: CmdListErrorKind,
    ) -> Option<Result<CommandRef<'a>, CmdListStepError>> {
        self.done = true;
        Some(Err(CmdListStepError {
            // ok: `next` rejects inputs whose length does not fit in u32 before any other error.
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            kind,
        }))
    }
}

#[inline]
fn read_word(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

impl<'a> Iterator for Commands<'a> {
    type Item = Result<CommandRef<'a>, CmdListStepError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if self.too_large {
            return self.fail(
                0,
                CmdListErrorKind::TooLarge {
                    len: self.bytes.len() as u64,
                },
            );
        }
        let start = self.pos;
        let Some(head) = self.bytes.get(start..start.saturating_add(8)) else {
            self.done = true;
            let whole_words_left = self.words.saturating_sub(start / 4);
            if whole_words_left > 0 {
                return self.fail(start, CmdListErrorKind::MissingHeader);
            }
            let rest = self.bytes.len() % 4;
            if rest != 0 {
                return self.fail(
                    self.words * 4,
                    CmdListErrorKind::TrailingBytes { count: rest as u32 },
                );
            }
            return None;
        };
        let word_pos = start / 4;
        let first_param = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
        let header = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
        let header = CmdHeader(header);
        let extra = header.extra_params(self.options.extra_param_width);
        let available = (self.words - word_pos - 2) as u32;
        if extra > available {
            return self.fail(
                start,
                CmdListErrorKind::TruncatedParams {
                    header: header.0,
                    declared: extra,
                    available,
                },
            );
        }
        let param_count = extra + 1;
        if header.consecutive() && u32::from(header.id()) + extra > 0xFFFF {
            return self.fail(
                start,
                CmdListErrorKind::IdOverflow {
                    id: header.id(),
                    count: param_count,
                },
            );
        }
        let extra_start = start + 8;
        let extra_end = extra_start + 4 * extra as usize;
        let mut next = extra_end;
        // Padding rule: an odd word position is skipped before the next command, if any data
        // remains there.
        // HW: [3DB] commands are 8-byte aligned with one padding word after odd-length commands;
        // the "skip at loop start, only while data remains" form is [C]'s and [P]'s loop.
        let padding = if (next / 4) % 2 == 1 && next / 4 < self.words {
            let p = read_word(self.bytes, next);
            next += 4;
            p
        } else {
            None
        };
        self.pos = next;
        let index = self.index;
        self.index = self.index.wrapping_add(1);
        Some(Ok(CommandRef {
            index,
            offset: start as u32,
            header_offset: start as u32 + 4,
            header,
            param_count,
            first_param,
            extra: self.bytes.get(extra_start..extra_end).unwrap_or(&[]),
            padding,
        }))
    }
}

/// Allocation-free iterator over every register write of a list (flattening [`Commands`]).
///
/// Stops after yielding the first error.
#[derive(Clone, Debug)]
pub struct Writes<'a> {
    commands: Commands<'a>,
    /// Extra-parameter bytes of the current command not yet yielded.
    extra: &'a [u8],
    /// Next write's register id, parameter offset; current command's fields.
    id: u16,
    offset: u32,
    mask: u8,
    consecutive: bool,
    command: u32,
    header_offset: u32,
}

impl<'a> Writes<'a> {
    /// Iterates over the writes of `bytes` with default options.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self::with_options(bytes, ParseOptions::default())
    }

    /// Iterates over the writes of `bytes` with the given options.
    pub fn with_options(bytes: &'a [u8], options: ParseOptions) -> Self {
        Self {
            commands: Commands::with_options(bytes, options),
            extra: &[],
            id: 0,
            offset: 0,
            mask: 0,
            consecutive: false,
            command: 0,
            header_offset: 0,
        }
    }
}

impl Iterator for Writes<'_> {
    type Item = Result<CmdWrite, CmdListStepError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if let Some((word, rest)) = self.extra.split_first_chunk::<4>() {
            self.extra = rest;
            if self.consecutive {
                // ok: `Commands` rejects consecutive commands whose ids would pass 0xFFFF.
                self.id = self.id.wrapping_add(1);
            }
            self.offset += 4;
            return Some(Ok(CmdWrite {
                offset: self.offset,
                id: self.id,
                mask: self.mask,
                value: u32::from_le_bytes(*word),
                command: self.command,
                header_offset: self.header_offset,
            }));
        }
        match self.commands.next()? {
            Ok(c) => {
                self.extra = c.extra;
                self.id = c.header.id();
                self.mask = c.header.mask();
                self.consecutive = c.header.consecutive();
                self.command = c.index;
                self.header_offset = c.header_offset;
                // The first extra parameter follows the header.
                self.offset = c.header_offset;
                Some(Ok(CmdWrite {
                    offset: c.offset,
                    id: self.id,
                    mask: self.mask,
                    value: c.first_param,
                    command: c.index,
                    header_offset: c.header_offset,
                }))
            }
            Err(e) => Some(Err(e)),
        }
    }
}

/// A parsed command as stored in [`CmdList`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub struct Command {
    /// Byte offset of the first parameter word.
    pub offset: u32,
    /// The header word, verbatim (reserved bits included).
    pub header: CmdHeader,
    /// Index of this command's first write in [`CmdList::writes`].
    pub first_write: u32,
    /// Number of parameters (= writes) of the command.
    pub param_count: u32,
    /// The padding word after the command, if present in the list.
    pub padding: Option<u32>,
}

impl Command {
    /// Byte offset of the header word.
    pub const fn header_offset(&self) -> u32 {
        self.offset + 4
    }

    /// Burst form.
    pub const fn form(&self) -> Form {
        if self.param_count == 1 {
            Form::Single
        } else if self.header.consecutive() {
            Form::Consecutive
        } else {
            Form::Repeated
        }
    }
}

/// A fully parsed command list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CmdList {
    /// Commands in list order.
    pub commands: Vec<Command>,
    /// Register writes in execution order.
    pub writes: Vec<CmdWrite>,
    /// Non-fatal observations, in list order (the size check comes last).
    pub diagnostics: Vec<Diagnostic>,
    /// Length in bytes of the parsed list.
    pub len: u32,
}

impl CmdList {
    /// The commands' writes, for command `c`.
    pub fn writes_of(&self, c: &Command) -> &[CmdWrite] {
        let start = c.first_write as usize;
        let end = start.saturating_add(c.param_count as usize);
        self.writes.get(start..end).unwrap_or(&[])
    }

    /// Re-encodes the list: commands with their headers verbatim, parameters and padding words.
    /// For a list returned by [`parse`] this reproduces the input bytes exactly.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len as usize);
        for c in &self.commands {
            let ws = self.writes_of(c);
            let mut values = ws.iter().map(|w| w.value);
            out.extend_from_slice(&values.next().unwrap_or(0).to_le_bytes());
            out.extend_from_slice(&c.header.0.to_le_bytes());
            for v in values {
                out.extend_from_slice(&v.to_le_bytes());
            }
            if let Some(p) = c.padding {
                out.extend_from_slice(&p.to_le_bytes());
            }
        }
        out
    }

    /// The writes without provenance.
    pub fn reg_writes(&self) -> impl Iterator<Item = RegWrite> + '_ {
        self.writes.iter().map(CmdWrite::reg_write)
    }
}

/// Parses a whole command list with default options (8-bit extra-parameter count).
pub fn parse(bytes: &[u8]) -> Result<CmdList, CmdListError> {
    parse_with(bytes, ParseOptions::default())
}

/// Parses a whole command list.
///
/// On a malformed list returns a [`CmdListError`] with the byte offset and the commands and
/// writes parsed before the problem. Never panics; memory use is proportional to the input.
pub fn parse_with(bytes: &[u8], options: ParseOptions) -> Result<CmdList, CmdListError> {
    let mut list = CmdList {
        len: u32::try_from(bytes.len()).unwrap_or(u32::MAX),
        ..CmdList::default()
    };
    let mut checker = ListChecker::new(options);
    for cmd in Commands::with_options(bytes, options) {
        let cmd = match cmd {
            Ok(c) => c,
            Err(e) => {
                return Err(CmdListError {
                    offset: e.offset,
                    kind: e.kind,
                    partial: Box::new(list),
                });
            }
        };
        checker.command(&cmd, |d| list.diagnostics.push(d));
        list.commands.push(Command {
            offset: cmd.offset,
            header: cmd.header,
            first_write: list.writes.len() as u32,
            param_count: cmd.param_count,
            padding: cmd.padding,
        });
        for w in cmd.writes() {
            checker.write(&w, |d| list.diagnostics.push(d));
            list.writes.push(w);
        }
    }
    ListChecker::finish(list.len, |d| list.diagnostics.push(d));
    Ok(list)
}

/// The diagnostics of [`parse_with`], computed command by command, so that streaming decoders
/// ([`parse_reader`]) report exactly what a whole-list parse reports, in the same order.
#[derive(Clone, Copy, Debug)]
pub struct ListChecker {
    options: ParseOptions,
    finalize_seen: bool,
    after_finalize_reported: bool,
}

impl ListChecker {
    /// A checker for a list parsed with `options`.
    pub fn new(options: ParseOptions) -> Self {
        Self {
            options,
            finalize_seen: false,
            after_finalize_reported: false,
        }
    }

    /// Diagnostics about a command header (call before its writes).
    pub fn command(&mut self, cmd: &CommandRef<'_>, mut report: impl FnMut(Diagnostic)) {
        if self.options.extra_param_width == ExtraParamWidth::Bits8
            && cmd.header.reserved_bits() != 0
        {
            report(Diagnostic::ReservedHeaderBits {
                offset: cmd.header_offset,
                header: cmd.header.0,
            });
        }
    }

    /// Diagnostics about one write, in list order.
    pub fn write(&mut self, w: &CmdWrite, mut report: impl FnMut(Diagnostic)) {
        if self.finalize_seen && !self.after_finalize_reported {
            report(Diagnostic::WritesAfterFinalize { offset: w.offset });
            self.after_finalize_reported = true;
        }
        if w.id >= REGISTER_COUNT {
            report(Diagnostic::UnknownRegister {
                offset: w.offset,
                id: w.id,
            });
        }
        if w.id == FINALIZE_ID {
            self.finalize_seen = true;
        }
    }

    /// The diagnostics about the whole list of `len` bytes (call once, at the end).
    pub fn finish(len: u32, mut report: impl FnMut(Diagnostic)) {
        if !len.is_multiple_of(16) {
            report(Diagnostic::SizeNotMultipleOf16 { len });
        }
    }
}

/// Size of the sections [`parse_reader`] reads at a time.
pub const READER_SECTION: usize = 1 << 20;

/// The largest command in bytes: first parameter, header, 2047 extra parameters (11-bit
/// count), padding.
const MAX_COMMAND_BYTES: usize = 8 + 4 * 0x7FF + 4;

/// Why [`parse_reader`] stopped early.
#[derive(Debug, Error)]
pub enum ReaderError {
    /// Reading the input failed.
    #[error("read error at byte offset 0x{offset:X}: {source}")]
    Io {
        /// Offset of the first byte not read.
        offset: u64,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The list is malformed (offsets are absolute, as for [`parse_with`]).
    #[error(transparent)]
    List(#[from] CmdListStepError),
    /// The callback failed (e.g. writing the output).
    #[error("output error: {0}")]
    Output(std::io::Error),
}

/// Counts of a list decoded by [`parse_reader`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReaderSummary {
    /// Length of the list in bytes.
    pub len: u64,
    /// Number of commands.
    pub commands: u64,
    /// Number of register writes.
    pub writes: u64,
}

/// Decodes a command list from any reader in sections of [`READER_SECTION`] bytes, calling
/// `on_command` for every command in order, with offsets and indices relative to the start of
/// the whole list (as [`Commands`] over the whole list would give them). Memory use is bounded
/// by the section size whatever the input length; the result is the same as [`Commands`] over
/// the whole input: the same commands, then the same error if the list is malformed.
pub fn parse_reader<R: std::io::Read>(
    mut reader: R,
    options: ParseOptions,
    mut on_command: impl FnMut(&CommandRef<'_>) -> std::io::Result<()>,
) -> Result<ReaderSummary, ReaderError> {
    // Small lists never need the whole section: start at 64 KiB and grow when it fills up.
    let full_size = READER_SECTION + MAX_COMMAND_BYTES;
    let mut buf = vec![0u8; (64 << 10) + MAX_COMMAND_BYTES];
    let mut filled = 0usize;
    let mut base = 0u64;
    let mut index_base = 0u32;
    let mut eof = false;
    let mut summary = ReaderSummary::default();
    loop {
        while !eof {
            if filled == buf.len() {
                if buf.len() >= full_size {
                    break;
                }
                buf.resize(full_size, 0);
            }
            let spare = buf.get_mut(filled..).unwrap_or(&mut []);
            match reader.read(spare) {
                Ok(0) => eof = true,
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(ReaderError::Io {
                        offset: base + filled as u64,
                        source,
                    });
                }
            }
        }
        let total = base + filled as u64;
        if u32::try_from(total).is_err() {
            return Err(ReaderError::List(CmdListStepError {
                offset: 0,
                kind: CmdListErrorKind::TooLarge { len: total },
            }));
        }
        // ok: `total` fits in u32 (checked above), so every offset below does too.
        let rebase = |o: u32| o + base as u32;
        let window = buf.get(..filled).unwrap_or(&[]);
        let consumed;
        let mut finished = false;
        let mut iter = Commands::with_options(window, options);
        let mut count = 0u32;
        loop {
            match iter.next() {
                None => {
                    consumed = filled;
                    finished = eof;
                    break;
                }
                Some(Ok(c)) => {
                    let end = c.end_offset() as usize;
                    // A command ending at the end of the section may still get a padding word
                    // (or be followed by data) once the next section is read.
                    if !eof && end >= filled {
                        consumed = c.offset as usize;
                        break;
                    }
                    let rebased = CommandRef {
                        index: index_base.wrapping_add(c.index),
                        offset: rebase(c.offset),
                        header_offset: rebase(c.header_offset),
                        ..c
                    };
                    on_command(&rebased).map_err(ReaderError::Output)?;
                    summary.commands += 1;
                    summary.writes += u64::from(c.param_count);
                    count = c.index.wrapping_add(1);
                }
                Some(Err(e)) => {
                    let incomplete = matches!(
                        e.kind,
                        CmdListErrorKind::TruncatedParams { .. }
                            | CmdListErrorKind::MissingHeader
                            | CmdListErrorKind::TrailingBytes { .. }
                    );
                    if !eof && incomplete {
                        consumed = e.offset as usize;
                        break;
                    }
                    return Err(ReaderError::List(CmdListStepError {
                        offset: rebase(e.offset),
                        kind: e.kind,
                    }));
                }
            }
        }
        if finished {
            summary.len = total;
            return Ok(summary);
        }
        buf.copy_within(consumed..filled, 0);
        filled -= consumed;
        base += consumed as u64;
        index_base = index_base.wrapping_add(count);
    }
}

/// Errors of the command-list encoder.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum EncodeError {
    /// A byte-enable mask wider than 4 bits.
    #[error("byte-enable mask 0x{mask:X} has more than 4 bits")]
    InvalidMask {
        /// The mask given.
        mask: u8,
    },
    /// A consecutive burst would run past register id 0xFFFF.
    #[error("consecutive burst from id 0x{id:04X} with {count} values runs past id 0xFFFF")]
    IdOverflow {
        /// First id.
        id: u16,
        /// Number of values.
        count: usize,
    },
    /// More than 256 parameters in a command forced to be a single command.
    #[error("{count} parameters do not fit in one command (at most 256)")]
    TooManyParams {
        /// Number of parameters requested.
        count: usize,
    },
}

/// How [`encode_writes`] and [`CmdListBuilder::writes`] choose command forms.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EncodeStrategy {
    /// Merge runs of writes with the same mask into consecutive bursts (ids increasing by one)
    /// or repeated bursts (same id), whichever run is longer; everything else becomes single
    /// writes.
    #[default]
    Auto,
    /// One command per write (what libctru's `GPUCMD_AddWrite` produces).
    SingleOnly,
}

/// Builds a command list word by word.
///
/// Padding words use [`CmdListBuilder::padding_value`] (default 0, as libctru writes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CmdListBuilder {
    words: Vec<u32>,
    padding: u32,
}

impl CmdListBuilder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the value written into padding words from now on.
    pub fn padding_value(&mut self, value: u32) -> &mut Self {
        self.padding = value;
        self
    }

    /// Length so far in bytes.
    pub fn len_bytes(&self) -> usize {
        self.words.len() * 4
    }

    /// True if nothing has been written.
    pub fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// The words so far.
    pub fn words(&self) -> &[u32] {
        &self.words
    }

    /// Appends one command verbatim: `header` is used as given (its count field must equal
    /// `params.len() - 1` for the list to parse back; this is the escape hatch for writing
    /// unusual headers, e.g. with reserved bits set). `params` must not be empty. A padding word
    /// is appended when the command has an odd number of words.
    pub fn raw_command(&mut self, header: CmdHeader, params: &[u32]) -> &mut Self {
        let Some((&first, rest)) = params.split_first() else {
            return self;
        };
        self.words.push(first);
        self.words.push(header.0);
        self.words.extend_from_slice(rest);
        if rest.len() % 2 == 1 {
            self.words.push(self.padding);
        }
        self
    }

    fn check_mask(mask: u8) -> Result<(), EncodeError> {
        if mask > 0xF {
            Err(EncodeError::InvalidMask { mask })
        } else {
            Ok(())
        }
    }

    fn push_one(&mut self, id: u16, mask: u8, consecutive: bool, values: &[u32]) {
        // ok: callers pass 1..=256 values, so the extra count fits in 8 bits.
        let extra = (values.len().saturating_sub(1)).min(255) as u8;
        let header = CmdHeader::new(id, mask, extra, consecutive && values.len() > 1);
        self.raw_command(header, values);
    }

    /// One full-word write (mask 0xF).
    pub fn write(&mut self, id: u16, value: u32) -> &mut Self {
        self.push_one(id, 0xF, false, &[value]);
        self
    }

    /// One masked write.
    pub fn write_masked(
        &mut self,
        id: u16,
        mask: u8,
        value: u32,
    ) -> Result<&mut Self, EncodeError> {
        Self::check_mask(mask)?;
        self.push_one(id, mask, false, &[value]);
        Ok(self)
    }

    /// Consecutive form: `values[k]` goes to `id + k`. Split into commands of at most 256
    /// parameters (each continuing at the next id). Empty `values` writes nothing.
    pub fn consecutive(
        &mut self,
        id: u16,
        mask: u8,
        values: &[u32],
    ) -> Result<&mut Self, EncodeError> {
        Self::check_mask(mask)?;
        if values.is_empty() {
            return Ok(self);
        }
        if usize::from(id) + values.len() - 1 > 0xFFFF {
            return Err(EncodeError::IdOverflow {
                id,
                count: values.len(),
            });
        }
        for (i, chunk) in values.chunks(MAX_PARAMS_PER_COMMAND).enumerate() {
            // ok: checked above that id + len - 1 <= 0xFFFF.
            let chunk_id = id + (i * MAX_PARAMS_PER_COMMAND) as u16;
            self.push_one(chunk_id, mask, true, chunk);
        }
        Ok(self)
    }

    /// Repeated form: every value goes to `id`, in order. Split into commands of at most 256
    /// parameters. Empty `values` writes nothing.
    pub fn repeated(
        &mut self,
        id: u16,
        mask: u8,
        values: &[u32],
    ) -> Result<&mut Self, EncodeError> {
        Self::check_mask(mask)?;
        for chunk in values.chunks(MAX_PARAMS_PER_COMMAND) {
            self.push_one(id, mask, false, chunk);
        }
        Ok(self)
    }

    /// Appends exactly one command of the given form (no splitting): errors if `values` has
    /// more than 256 entries, or more than one for [`Form::Single`]. Empty `values` writes
    /// nothing.
    pub fn command(
        &mut self,
        form: Form,
        id: u16,
        mask: u8,
        values: &[u32],
    ) -> Result<&mut Self, EncodeError> {
        Self::check_mask(mask)?;
        if values.is_empty() {
            return Ok(self);
        }
        let max = if form == Form::Single {
            1
        } else {
            MAX_PARAMS_PER_COMMAND
        };
        if values.len() > max {
            return Err(EncodeError::TooManyParams {
                count: values.len(),
            });
        }
        if form == Form::Consecutive && usize::from(id) + values.len() - 1 > 0xFFFF {
            return Err(EncodeError::IdOverflow {
                id,
                count: values.len(),
            });
        }
        self.push_one(id, mask, form == Form::Consecutive, values);
        Ok(self)
    }

    /// Appends a sequence of writes, choosing command forms with `strategy`. Parsing the result
    /// yields exactly these writes in order.
    pub fn writes(
        &mut self,
        writes: &[RegWrite],
        strategy: EncodeStrategy,
    ) -> Result<&mut Self, EncodeError> {
        let mut values: Vec<u32> = Vec::new();
        let mut i = 0;
        while let Some(first) = writes.get(i) {
            Self::check_mask(first.mask)?;
            let rest = writes.get(i..).unwrap_or(&[]);
            let (form, run) = match strategy {
                EncodeStrategy::SingleOnly => (Form::Single, 1),
                EncodeStrategy::Auto => choose_form(rest),
            };
            values.clear();
            values.extend(rest.iter().take(run).map(|w| w.value));
            self.push_one(first.id, first.mask, form == Form::Consecutive, &values);
            i += run;
        }
        Ok(self)
    }

    /// Appends the end-of-list sequence: a write of [`FINALIZE_VALUE`] to GPUREG_FINALIZE, then,
    /// only if the list is not yet a multiple of 16 bytes, a second identical write, so that the
    /// size is 16-byte aligned and no FINALIZE is lost to the hardware's size rounding (3dbrew
    /// "GPU/Pitfalls"). libctru's `GPUCMD_Finalize` pads the same way with a repeated FINALIZE
    /// write (some versions always write two).
    pub fn finalize(&mut self) -> &mut Self {
        self.write(FINALIZE_ID, FINALIZE_VALUE);
        if !self.words.len().is_multiple_of(4) {
            self.write(FINALIZE_ID, FINALIZE_VALUE);
        }
        self
    }

    /// The list as bytes (little-endian words).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.words.len() * 4);
        for w in &self.words {
            out.extend_from_slice(&w.to_le_bytes());
        }
        out
    }

    /// The list as words.
    pub fn into_words(self) -> Vec<u32> {
        self.words
    }
}

/// Picks the form and run length for the writes starting at `rest[0]` (non-empty).
fn choose_form(rest: &[RegWrite]) -> (Form, usize) {
    let Some(first) = rest.first() else {
        return (Form::Single, 1);
    };
    let limit = rest.len().min(MAX_PARAMS_PER_COMMAND);
    let window = rest.get(..limit).unwrap_or(rest);
    let consecutive = window
        .iter()
        .enumerate()
        .take_while(|(k, w)| w.mask == first.mask && usize::from(w.id) == usize::from(first.id) + k)
        .count();
    let repeated = window
        .iter()
        .take_while(|w| w.mask == first.mask && w.id == first.id)
        .count();
    if consecutive > 1 && consecutive >= repeated {
        (Form::Consecutive, consecutive)
    } else if repeated > 1 {
        (Form::Repeated, repeated)
    } else {
        (Form::Single, 1)
    }
}

/// Encodes writes into command-list bytes with the given strategy (no FINALIZE appended).
pub fn encode_writes(
    writes: &[RegWrite],
    strategy: EncodeStrategy,
) -> Result<Vec<u8>, EncodeError> {
    let mut b = CmdListBuilder::new();
    b.writes(writes, strategy)?;
    Ok(b.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(words: &[u32]) -> Vec<u8> {
        words.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn header_fields() {
        let h = CmdHeader(0x802F_011C);
        assert_eq!(h.id(), 0x11C);
        assert_eq!(h.mask(), 0xF);
        assert_eq!(h.extra_params(ExtraParamWidth::Bits8), 2);
        assert!(h.consecutive());
        assert_eq!(CmdHeader::new(0x11C, 0xF, 2, true), h);
        let r = CmdHeader(0x7000_0000);
        assert_eq!(r.reserved_bits(), 7);
        assert_eq!(r.extra_params(ExtraParamWidth::Bits8), 0);
        assert_eq!(r.extra_params(ExtraParamWidth::Bits11), 0x700);
    }

    #[test]
    fn mask_expansion_and_apply() {
        assert_eq!(expand_mask(0), 0);
        assert_eq!(expand_mask(0b0101), 0x00FF_00FF);
        assert_eq!(expand_mask(0xF), u32::MAX);
        assert_eq!(
            RegWrite::masked(0x107, 0b0010, 0xAABB_CCDD).apply(0x1122_3344),
            0x1122_CC44
        );
    }

    #[test]
    fn three_dbrew_example_consecutive_and_repeated() {
        // [3DB]: AAAAAAAA 802F011C BBBBBBBB CCCCCCCC
        let list = parse(&bytes(&[0xA, 0x802F_011C, 0xB, 0xC])).unwrap();
        let ids: Vec<_> = list
            .writes
            .iter()
            .map(|w| (w.id, w.value, w.offset))
            .collect();
        assert_eq!(
            ids,
            vec![(0x11C, 0xA, 0), (0x11D, 0xB, 8), (0x11E, 0xC, 12)]
        );
        assert_eq!(list.commands[0].form(), Form::Consecutive);
        let list = parse(&bytes(&[0xA, 0x002F_011C, 0xB, 0xC])).unwrap();
        assert!(
            list.writes
                .iter()
                .all(|w| w.id == 0x11C && w.header_offset == 4)
        );
        assert_eq!(list.commands[0].form(), Form::Repeated);
    }

    #[test]
    fn padding_after_odd_command_is_skipped_and_kept() {
        // 1 extra param -> 3 words + padding (0xDEAD), then a single write.
        let words = [1, 0x001F_0100, 2, 0xDEAD, 3, 0x000F_0101];
        let list = parse(&bytes(&words)).unwrap();
        assert_eq!(list.writes.len(), 3);
        assert_eq!(list.commands[0].padding, Some(0xDEAD));
        assert_eq!(list.writes[2].offset, 16);
        assert_eq!(list.encode(), bytes(&words));
    }

    #[test]
    fn no_padding_at_end_of_buffer() {
        let words = [1, 0x001F_0100, 2];
        let list = parse(&bytes(&words)).unwrap();
        assert_eq!(list.commands[0].padding, None);
        assert_eq!(list.encode(), bytes(&words));
        assert!(
            list.diagnostics
                .contains(&Diagnostic::SizeNotMultipleOf16 { len: 12 })
        );
    }

    #[test]
    fn malformed_lists_report_offset_and_partial() {
        let e = parse(&bytes(&[1, 0x000F_0100, 2])).unwrap_err();
        assert_eq!(e.offset, 8);
        assert_eq!(e.kind, CmdListErrorKind::MissingHeader);
        assert_eq!(e.partial.writes.len(), 1);

        let e = parse(&bytes(&[1, 0x000F_0100, 2, 0x003F_0101, 5])).unwrap_err();
        assert_eq!(e.offset, 8);
        assert_eq!(
            e.kind,
            CmdListErrorKind::TruncatedParams {
                header: 0x003F_0101,
                declared: 3,
                available: 1
            }
        );
        assert_eq!(e.partial.commands.len(), 1);

        let mut b = bytes(&[1, 0x000F_0100]);
        b.push(7);
        let e = parse(&b).unwrap_err();
        assert_eq!(
            (e.offset, e.kind),
            (8, CmdListErrorKind::TrailingBytes { count: 1 })
        );
        assert_eq!(e.partial.writes.len(), 1);

        let e = parse(&bytes(&[1, 0x801F_FFFF, 2, 0])).unwrap_err();
        assert_eq!(
            e.kind,
            CmdListErrorKind::IdOverflow {
                id: 0xFFFF,
                count: 2
            }
        );
    }

    #[test]
    fn diagnostics() {
        let words = [1, 0x700F_0300, 0x1234_5678, 0x000F_0010, 0, 0x000F_0041];
        let list = parse(&bytes(&words)).unwrap();
        assert_eq!(
            list.diagnostics,
            vec![
                Diagnostic::ReservedHeaderBits {
                    offset: 4,
                    header: 0x700F_0300
                },
                Diagnostic::UnknownRegister {
                    offset: 0,
                    id: 0x300
                },
                Diagnostic::WritesAfterFinalize { offset: 16 },
                Diagnostic::SizeNotMultipleOf16 { len: 24 },
            ]
        );
        // With Citra's 11-bit count, the same header declares 0x700 extra parameters.
        let e = parse_with(
            &bytes(&words),
            ParseOptions {
                extra_param_width: ExtraParamWidth::Bits11,
            },
        )
        .unwrap_err();
        assert!(matches!(
            e.kind,
            CmdListErrorKind::TruncatedParams {
                declared: 0x700,
                ..
            }
        ));
    }

    #[test]
    fn writes_iterator_matches_parse() {
        let words = [1, 0x802F_0100, 2, 3, 4, 0x001F_0200, 5, 0];
        let b = bytes(&words);
        let it: Vec<_> = Writes::new(&b).collect::<Result<_, _>>().unwrap();
        assert_eq!(it, parse(&b).unwrap().writes);
    }

    #[test]
    fn builder_forms() {
        let mut b = CmdListBuilder::new();
        b.write(0x041, 7);
        b.consecutive(0x2C0, 0xF, &[1, 2, 3]).unwrap();
        b.repeated(0x2C1, 0x3, &[4, 5]).unwrap();
        b.finalize();
        let bytes = b.to_bytes();
        assert_eq!(bytes.len() % 16, 0);
        let list = parse(&bytes).unwrap();
        let forms: Vec<_> = list.commands.iter().map(Command::form).collect();
        assert_eq!(
            forms[..3],
            [Form::Single, Form::Consecutive, Form::Repeated]
        );
        assert_eq!(
            list.writes.last().map(|w| (w.id, w.value)),
            Some((FINALIZE_ID, FINALIZE_VALUE))
        );
        assert!(b.consecutive(0xFFFF, 0xF, &[1, 2]).is_err());
        assert!(b.write_masked(1, 0x10, 0).is_err());
        assert!(b.command(Form::Single, 1, 0xF, &[1, 2]).is_err());
        assert!(b.command(Form::Repeated, 1, 0xF, &[0; 257]).is_err());
    }

    #[test]
    fn long_bursts_are_split() {
        let values: Vec<u32> = (0..600).collect();
        let mut b = CmdListBuilder::new();
        b.repeated(0x2C1, 0xF, &values).unwrap();
        let list = parse(&b.to_bytes()).unwrap();
        assert_eq!(list.commands.len(), 3);
        assert_eq!(
            list.reg_writes().map(|w| w.value).collect::<Vec<_>>(),
            values
        );
    }

    #[test]
    fn auto_strategy_picks_bursts() {
        let mut writes = vec![RegWrite::new(0x2C0, 5)];
        writes.extend((0..6).map(|v| RegWrite::new(0x2C1, v)));
        writes.extend((0..3).map(|k| RegWrite::new(0x50 + k, k as u32)));
        writes.push(RegWrite::masked(0x53, 0x1, 9));
        let b = encode_writes(&writes, EncodeStrategy::Auto).unwrap();
        let list = parse(&b).unwrap();
        let forms: Vec<_> = list
            .commands
            .iter()
            .map(|c| (c.form(), c.param_count))
            .collect();
        assert_eq!(
            forms,
            vec![
                (Form::Consecutive, 2),
                (Form::Repeated, 5),
                (Form::Consecutive, 3),
                (Form::Single, 1)
            ]
        );
        assert_eq!(list.reg_writes().collect::<Vec<_>>(), writes);
        let single = encode_writes(&writes, EncodeStrategy::SingleOnly).unwrap();
        assert_eq!(single.len(), writes.len() * 8);
        assert!(single.len() > b.len());
    }
}
