//! DVLB / DVLP / DVLE shader binaries (`.shbin`) and DVOJ shader objects: parser and data model.
//!
//! Stage: loading. Input: the bytes of a `.shbin` file (or a DVOJ object). Output: a [`Dvlb`]
//! (or [`Dvoj`]) value that holds every table of the file, decoded, plus the raw header fields a
//! writer needs to lay the file out again. Registers read: none (this is a file format; the tables
//! describe what a loader uploads to the shader unit: program words, operand descriptors, constant
//! uniforms and the output map).
//!
//! Reference: 3dbrew "SHBIN" (the "DVLB and DVOB Format" seed, read from the mikage-emu/3dbrew mirror),
//! cross-checked against the files under `tests/fixtures/real/` and the field layouts that picasso
//! (`picasso_frontend.cpp`), nihstro (`shader_binary.h`) and ctrulib (`shbin.h`) read and write.
//!
//! # Layout
//!
//! ```text
//! DVLB header   "DVLB", u32 N, u32 dvle_offset[N]        (offsets relative to the DVLB start)
//! DVLP header   directly after the DVLB header (the DVLB header has no DVLP offset)
//!               program words, operand descriptors (8 bytes each), line table, filename symbols
//! DVLE[i]       entry point, masks, GS mode, constant / label / output / uniform / symbol tables
//! ```
//!
//! Every table is reached through an offset; the parser never assumes an order, an alignment or a
//! padding between structures. The producer variants of `testdata/README.md` are all accepted:
//! DVLE version 0x1002 (picasso 2.x, nihstro) or 0x0000 (2014-2017 tools), output mask 0 in old
//! files, DVLE headers placed before the program (nihstro, picasso 1.x), unpadded file sizes, and
//! one DVLP shared by several DVLEs.
//!
//! # Producers: who writes which field
//!
//! Files come from five producers (in the order they appeared); every field of the data model
//! below names what they write. In short:
//!
//! | structure / field | aemstro (smealum, 2014-2015) | picasso 1.x (2015) | nihstro (2014-2016) | picasso 2.x (2015-) |
//! |---|---|---|---|---|
//! | order of the parts | DVLB, DVLP, DVLEs | DVLB, DVLE, DVLP (no padding) | DVLB, DVLP, DVLE at DVLP + 0x1C | DVLB, DVLP, DVLEs (4-byte padded) |
//! | DVLP 0x04 version | 0 | 0 | 0 | 0 |
//! | DVLP 0x18 | end of the opdesc table ("symbol offset") | same as 2.x | filename symbol offset | DVLP size |
//! | DVLP 0x1C..0x28 | 0 | 0 | (DVLE header) | 0 |
//! | opdesc entry word 1 | 0 (or the `.opdesc` value's high word) | 0 | "unknown", 0 | 0 |
//! | DVLE 0x04 version | 0 | 0 | 0x1002 | 0x1002 |
//! | DVLE 0x06 kind, 0x07 merge flag | kind (bit 0 of `.gsh`); 0 | kind; 0 | kind; 0 | kind; set for `.gsh` with `dummy` outputs |
//! | DVLE 0x08/0x0C entry range | `main`/`endmain` labels | entry `.proc` start, end | start, **0** | entry `.proc` start, end (exclusive) |
//! | DVLE 0x10/0x12 input/output mask | 0 | 0 / outputs | 0 | used inputs / written outputs |
//! | DVLE 0x14..0x17 GS fields | 0 | 0 | 0 | `.gsh` mode and counts |
//! | constant type 0 | **float** (before 2014-12-09: every `.const` is a float vector, see [`ConstantValue`]); later bool | bool | bool | bool (u32 0/1) |
//! | constant types 1, 2 | int, float (from 2014-12-09) | int, float | int, float | int (bytes), float (f24) |
//! | label table | one entry per label (id = index, size 0) | none | one per label (id, unknown 0, size) | none (empty, points at the outputs) |
//! | output entry halfword 0x04 mask | 0 before 2014-12-27, then the `.out` mask | mask | mask | mask |
//! | uniform table | `.uniform first, last, name` (unified indices) | names | names | names (`$` stored as `.`) |
//!
//! ctrulib/libctru and Citra only *read* these files: the DVLP code and opdesc tables, and per
//! DVLE the entry point, the constant table (types 0-2 as bool/int/float), the output table and
//! the GS fields; they ignore labels, uniform names, masks and the version halfword.
//!
//! # Errors and memory
//!
//! Every failure is a [`DvlbError`] naming the structure ([`Section`]), the byte offset and what
//! is wrong. Counts are checked against the file size *before* anything is allocated, and every
//! byte copied out of the input (tables, names) is charged to a budget of
//! [`DECODE_BUDGET_FACTOR`] times the input size, so memory use stays bounded even when
//! thousands of DVLE offsets or names point at the same large table.

use std::cell::Cell;
use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Magic of the binary header, `"DVLB"`.
pub const DVLB_MAGIC: [u8; 4] = *b"DVLB";
/// Magic of the program header, `"DVLP"`.
pub const DVLP_MAGIC: [u8; 4] = *b"DVLP";
/// Magic of an executable header, `"DVLE"`.
pub const DVLE_MAGIC: [u8; 4] = *b"DVLE";
/// Magic of an unlinked shader object, `"DVOJ"`.
pub const DVOJ_MAGIC: [u8; 4] = *b"DVOJ";

/// Size in bytes of the fixed part of the DVLB header (magic + DVLE count).
pub const DVLB_HEADER_SIZE: u32 = 8;
/// Size in bytes of the DVLP header fields every producer writes (up to the word at 0x18).
pub const DVLP_HEADER_MIN_SIZE: u32 = 0x1C;
/// Size in bytes of the full DVLP header (picasso and the 3dbrew table: fields up to 0x24).
pub const DVLP_HEADER_FULL_SIZE: u32 = 0x28;
/// Size in bytes of a DVLE header.
pub const DVLE_HEADER_SIZE: u32 = 0x40;
/// Size in bytes of a DVOJ header (3dbrew: fields up to 0x54).
pub const DVOJ_HEADER_SIZE: u32 = 0x58;
/// Size in bytes of one operand-descriptor table entry (descriptor word + unused word).
pub const OPDESC_ENTRY_SIZE: u32 = 8;
/// Size in bytes of one line-table entry (filename symbol offset + line number).
pub const LINE_ENTRY_SIZE: u32 = 8;
/// Size in bytes of one constant-table entry.
pub const CONSTANT_ENTRY_SIZE: u32 = 0x14;
/// Size in bytes of one label-table entry.
pub const LABEL_ENTRY_SIZE: u32 = 0x10;
/// Size in bytes of one output-register-table entry.
pub const OUTPUT_ENTRY_SIZE: u32 = 8;
/// Size in bytes of one uniform-table entry.
pub const UNIFORM_ENTRY_SIZE: u32 = 8;
/// Size in bytes of one item of the DVOJ's second unknown block.
pub const DVOJ_BLOCK2_ENTRY_SIZE: u32 = 12;

/// The parser copies at most `DECODE_BUDGET_FACTOR * input length + DECODE_BUDGET_SLACK` bytes
/// of tables and names out of its input. Real files copy each table once (less than 1x); the
/// limit only stops inputs whose headers reference the same data over and over.
pub const DECODE_BUDGET_FACTOR: u64 = 16;
/// See [`DECODE_BUDGET_FACTOR`].
pub const DECODE_BUDGET_SLACK: u64 = 64 * 1024;

/// The parsed DVLEs (their in-memory records, not counting their tables, which
/// [`DECODE_BUDGET_FACTOR`] covers) may take at most `DVLE_BUDGET_FACTOR * input length +
/// DVLE_BUDGET_SLACK` bytes: about 150,000 DVLEs for a 400 KB file that lists one DVLE over
/// and over, 700,000 for 16 MiB. Real files have one DVLE per source file.
pub const DVLE_BUDGET_FACTOR: u64 = 8;
/// See [`DVLE_BUDGET_FACTOR`].
pub const DVLE_BUDGET_SLACK: u64 = 32 << 20;

// ---------------------------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------------------------

/// Which structure of the file an error (or a table) belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Section {
    /// The DVLB header (magic and DVLE count).
    DvlbHeader,
    /// The DVLE offset table that follows the DVLB header.
    DvleOffsetTable,
    /// The DVLP header.
    DvlpHeader,
    /// The program words (DVLP blob, or the DVOJ blob).
    Program,
    /// The operand-descriptor table.
    OperandDescriptors,
    /// The DVLP line-information table.
    LineTable,
    /// The DVLP filename symbol table.
    FilenameSymbols,
    /// The header of DVLE `n`.
    DvleHeader(usize),
    /// The header of a DVOJ object.
    DvojHeader,
    /// The constant table of an executable.
    Constants(Owner),
    /// The label table of an executable.
    Labels(Owner),
    /// The output-register table of an executable.
    Outputs(Owner),
    /// The uniform table of an executable.
    Uniforms(Owner),
    /// The symbol table of an executable.
    Symbols(Owner),
    /// Entry `index` of the label table of an executable.
    Label(Owner, usize),
    /// Entry `index` of the uniform table of an executable.
    Uniform(Owner, usize),
    /// The DVOJ's first unknown block (per-instruction source lines, 3dbrew's guess).
    DvojLineInfo,
    /// The DVOJ's second unknown block (12-byte items).
    DvojBlock2,
}

/// The executable a DVLE-style table belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Owner {
    /// DVLE number `n` of a DVLB (0-based, in the order of the DVLB offset table).
    Dvle(usize),
    /// The single executable of a DVOJ object.
    Dvoj,
}

impl fmt::Display for Owner {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Owner::Dvle(n) => write!(f, "DVLE[{n}]"),
            Owner::Dvoj => f.write_str("DVOJ"),
        }
    }
}

impl fmt::Display for Section {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Section::DvlbHeader => f.write_str("DVLB header"),
            Section::DvleOffsetTable => f.write_str("DVLB DVLE offset table"),
            Section::DvlpHeader => f.write_str("DVLP header"),
            Section::Program => f.write_str("program words"),
            Section::OperandDescriptors => f.write_str("operand descriptor table"),
            Section::LineTable => f.write_str("DVLP line table"),
            Section::FilenameSymbols => f.write_str("DVLP filename symbol table"),
            Section::DvleHeader(n) => write!(f, "DVLE[{n}] header"),
            Section::DvojHeader => f.write_str("DVOJ header"),
            Section::Constants(o) => write!(f, "{o} constant table"),
            Section::Labels(o) => write!(f, "{o} label table"),
            Section::Outputs(o) => write!(f, "{o} output register table"),
            Section::Uniforms(o) => write!(f, "{o} uniform table"),
            Section::Symbols(o) => write!(f, "{o} symbol table"),
            Section::Label(o, i) => write!(f, "{o} label[{i}]"),
            Section::Uniform(o, i) => write!(f, "{o} uniform[{i}]"),
            Section::DvojLineInfo => f.write_str("DVOJ line-info block"),
            Section::DvojBlock2 => f.write_str("DVOJ unknown block 2"),
        }
    }
}

/// A malformed shader binary: which structure, at which byte offset, and what is wrong.
///
/// `offset` is the absolute byte offset (from the start of the input) of the structure or table
/// named by `section`; it may lie past the end of the input when a header points there.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{section} at 0x{offset:X}: {kind}")]
pub struct DvlbError {
    /// The structure the error is about.
    pub section: Section,
    /// Absolute byte offset of that structure.
    pub offset: u64,
    /// What is wrong with it.
    pub kind: DvlbErrorKind,
}

/// What is wrong in a [`DvlbError`].
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum DvlbErrorKind {
    /// The magic number is not the expected one.
    #[error(
        "expected magic \"{}\", found \"{}\"",
        show_magic(expected),
        show_magic(found)
    )]
    BadMagic {
        /// The magic the format requires here.
        expected: [u8; 4],
        /// The four bytes found (fewer bytes are zero-filled when the input is shorter).
        found: [u8; 4],
    },
    /// The structure starts inside the input but runs past its end.
    #[error("needs {needed} bytes but the input ends after {available}")]
    Truncated {
        /// Bytes the structure needs from its offset.
        needed: u64,
        /// Bytes available from its offset to the end of the input.
        available: u64,
    },
    /// A header points at an offset at or past the end of the input.
    #[error("starts past the end of the input ({input_len} bytes)")]
    OffsetPastEnd {
        /// Length of the input in bytes.
        input_len: u64,
    },
    /// A table's entry count cannot possibly fit in the input.
    #[error(
        "count {count} exceeds file size ({count} entries of {entry_size} bytes need {needed} \
         bytes, the input has {input_len})"
    )]
    CountTooLarge {
        /// The count read from the header.
        count: u64,
        /// Size of one entry in bytes.
        entry_size: u32,
        /// `count * entry_size`.
        needed: u64,
        /// Length of the input in bytes.
        input_len: u64,
    },
    /// The tables the headers point at overlap so much (many DVLEs sharing one large table,
    /// many names sharing one long string) that decoding them would need far more memory than
    /// the input size justifies.
    #[error(
        "decoding would copy more than {limit} bytes out of a {input_len}-byte input (tables \
         referenced over and over)"
    )]
    TooMuchData {
        /// The limit, [`DECODE_BUDGET_FACTOR`] times the input size plus
        /// [`DECODE_BUDGET_SLACK`].
        limit: u64,
        /// Length of the input in bytes.
        input_len: u64,
    },
    /// The DVLE offset table lists more executables than the input can justify (each parsed
    /// DVLE takes memory; see [`DVLE_BUDGET_FACTOR`]).
    #[error(
        "more than {limit} DVLEs ({count} listed) for a {input_len}-byte input (one DVLE listed over and over?)"
    )]
    TooManyDvles {
        /// DVLEs listed in the offset table.
        count: u64,
        /// How many may be parsed for this input.
        limit: u64,
        /// Length of the input in bytes.
        input_len: u64,
    },
    /// A symbol offset points outside the symbol table.
    #[error("symbol offset 0x{symbol_offset:X} is outside the symbol table ({table_size} bytes)")]
    SymbolOutOfRange {
        /// The offset read from the entry (relative to the symbol table).
        symbol_offset: u32,
        /// Size of the symbol table in bytes.
        table_size: u32,
    },
}

fn show_magic(m: &[u8; 4]) -> String {
    m.iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b).to_string()
            } else {
                format!("\\x{b:02X}")
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Data model
// ---------------------------------------------------------------------------------------------

/// A parsed DVLB shader binary: one shared program (DVLP) and one or more executables (DVLE).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dvlb {
    /// The shared program: instruction words, operand descriptors, debug tables.
    pub dvlp: Dvlp,
    /// The executables, in the order of the DVLB offset table.
    pub dvles: Vec<Dvle>,
    /// Length of the parsed input in bytes.
    pub input_len: u64,
}

/// The DVLP program header and the tables it points to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dvlp {
    /// Absolute byte offset of the DVLP header (always `8 + 4 * dvle_count`).
    pub offset: u32,
    /// Header word 0x04. Unknown; 3dbrew: "same value as in DVLE, likely a version". Every known
    /// producer (aemstro, nihstro, picasso 1.x/2.x) writes 0.
    pub version: u32,
    /// Where each table sits, exactly as the header stores it (for layout-preserving writers).
    pub layout: DvlpLayout,
    /// Program words (one 32-bit instruction each), in file order. Index = instruction address.
    pub code: Vec<u32>,
    /// Operand-descriptor table, one entry per descriptor index (0..=127 are addressable).
    pub opdescs: Vec<OpdescEntry>,
    /// Line information, one entry per table item (empty in every homebrew file).
    pub lines: Vec<LineInfo>,
    /// The raw filename symbol table (NUL-terminated strings referenced by [`LineInfo`]).
    pub filename_symbols: Vec<u8>,
}

/// The raw DVLP header fields that locate its tables. All offsets are relative to the DVLP start.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvlpLayout {
    /// Header word 0x08: byte offset of the program words.
    pub code_offset: u32,
    /// Header word 0x0C: number of program words.
    pub code_words: u32,
    /// Header word 0x10: byte offset of the operand-descriptor table.
    pub opdesc_offset: u32,
    /// Header word 0x14: number of operand-descriptor entries (8 bytes each).
    pub opdesc_count: u32,
    /// Header word 0x18: byte offset of the line table. picasso 2.x writes the DVLP size (the
    /// end of its tables), aemstro the end of the opdesc table, nihstro its filename symbol
    /// offset; no producer writes a non-empty line table.
    ///
    /// UNVERIFIED: 3dbrew calls 0x18 "unknown (same value as offset to filename symbol table?)"
    /// and 0x1C "unknown (always zero?)"; nihstro reads 0x18 as the filename symbol offset and
    /// ends its header there. We read 0x18/0x1C as the offset/count of a table of 8-byte line
    /// entries, laid out like the DVOJ's per-instruction line block on 3dbrew; an empty table
    /// placed just before the filename symbols explains 3dbrew's observation. The alternative
    /// (0x18 = filename symbol offset) only matters for files with a non-empty filename table,
    /// and no such file is known.
    pub line_offset: u32,
    /// The fields at 0x1C..0x28, when the header has them (see [`DvlpExtension`]).
    pub extension: Option<DvlpExtension>,
}

/// DVLP header fields 0x1C..0x28. Absent when those bytes belong to another structure: nihstro
/// (and picasso 1.x) place the first DVLE header at DVLP + 0x1C.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvlpExtension {
    /// Header word 0x1C: number of line-table entries (UNVERIFIED, see [`DvlpLayout::line_offset`]).
    pub line_count: u32,
    /// Header word 0x20: byte offset of the filename symbol table (0 in picasso files).
    pub filename_offset: u32,
    /// Header word 0x24: size of the filename symbol table in bytes.
    pub filename_size: u32,
}

/// One operand-descriptor table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct OpdescEntry {
    /// The operand descriptor (destination mask, source swizzles and negations), as uploaded to
    /// the shader unit's swizzle-pattern registers.
    pub descriptor: u32,
    /// The entry's second word. Unused by the hardware; picasso writes 0 and nihstro calls it
    /// "unknown". Kept for byte-exact writers.
    pub extra: u32,
}

/// One line-table entry (UNVERIFIED layout, see [`DvlpLayout::line_offset`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineInfo {
    /// Byte offset into the filename symbol table of the source file name.
    pub filename_offset: u32,
    /// Source line number.
    pub line: u32,
    /// The file name resolved from the filename symbol table (`None` when out of range).
    pub filename: Option<String>,
}

/// Which shader unit an executable targets (DVLE byte 0x06).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ShaderKind {
    /// 0: vertex shader.
    Vertex,
    /// 1: geometry shader.
    Geometry,
    /// Any other value (3dbrew: "might contain other flags"); the raw byte.
    Other(u8),
}

impl ShaderKind {
    /// Decodes DVLE byte 0x06.
    pub const fn from_raw(raw: u8) -> Self {
        match raw {
            0 => ShaderKind::Vertex,
            1 => ShaderKind::Geometry,
            other => ShaderKind::Other(other),
        }
    }

    /// The byte a writer stores.
    pub const fn to_raw(self) -> u8 {
        match self {
            ShaderKind::Vertex => 0,
            ShaderKind::Geometry => 1,
            ShaderKind::Other(b) => b,
        }
    }
}

/// Geometry-shader input mode (DVLE byte 0x14; the value of GPUREG_GSH_MISC0 / 0x252 bits 0-7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum GsMode {
    /// 0: point mode (also the value in every vertex-shader DVLE).
    Point,
    /// 1: variable-size primitive ("subdivision") mode.
    Variable,
    /// 2: fixed-size primitive ("particle") mode.
    Fixed,
    /// Any other value; the raw byte.
    Other(u8),
}

impl GsMode {
    /// Decodes DVLE byte 0x14.
    pub const fn from_raw(raw: u8) -> Self {
        match raw {
            0 => GsMode::Point,
            1 => GsMode::Variable,
            2 => GsMode::Fixed,
            other => GsMode::Other(other),
        }
    }

    /// The byte a writer stores.
    pub const fn to_raw(self) -> u8 {
        match self {
            GsMode::Point => 0,
            GsMode::Variable => 1,
            GsMode::Fixed => 2,
            GsMode::Other(b) => b,
        }
    }
}

/// A DVLE executable: entry point, uniform/output configuration and its debug tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dvle {
    /// Absolute byte offset of the DVLE header.
    pub offset: u32,
    /// Header halfword 0x04: 0x1002 (picasso 2.x, nihstro) or 0x0000 (aemstro, picasso 1.x).
    pub version: u16,
    /// Header byte 0x06: vertex or geometry shader. Every producer writes 0 or 1 (aemstro: bit 0
    /// of its DVLE type).
    pub kind: ShaderKind,
    /// Header byte 0x07: non-zero = merge the vertex shader's output map into the geometry
    /// shader's (picasso 2.x sets it for a GS with `dummy` outputs; aemstro, nihstro and picasso
    /// 1.x write 0). Raw byte.
    pub merge_outmaps: u8,
    /// Header word 0x08: entry point, instruction index into the DVLP program words (picasso:
    /// the entry `.proc`; nihstro and aemstro: the `main` label).
    pub main_start: u32,
    /// Header word 0x0C: end of the entry procedure, instruction index (exclusive; picasso writes
    /// start + size of the entry `.proc`, aemstro the `endmain` label). nihstro writes 0.
    pub main_end: u32,
    /// Header halfword 0x10: bit n set = input register vn is used (picasso 2.x; 0 in files of
    /// aemstro, nihstro and picasso 1.x).
    pub input_mask: u16,
    /// Header halfword 0x12: bit n set = output register on is written (picasso; 0 in files of
    /// aemstro and nihstro).
    pub output_mask: u16,
    /// Header byte 0x14: geometry-shader input mode (picasso 2.x `.gsh`; 0 from every other
    /// producer and in every vertex-shader DVLE).
    pub gs_mode: GsMode,
    /// Header byte 0x15: fixed mode, first float uniform (c index) of the vertex array
    /// (picasso 2.x only).
    pub gs_fixed_start: u8,
    /// Header byte 0x16: variable mode, number of fully-defined vertices per primitive
    /// (picasso 2.x only).
    pub gs_variable_num: u8,
    /// Header byte 0x17: fixed mode, number of vertices per primitive (picasso 2.x only).
    pub gs_fixed_num: u8,
    /// Where each table sits, exactly as the header stores it (for layout-preserving writers).
    pub layout: DvleLayout,
    /// Constant uniforms the loader uploads when the executable is selected (every producer;
    /// see [`ConstantValue`] for aemstro's type-0 floats).
    pub constants: Vec<Constant>,
    /// Code labels (nihstro and aemstro write one per label; picasso writes none).
    pub labels: Vec<Label>,
    /// Output registers and their semantics (the source of the SH_OUTMAP registers; every
    /// producer).
    pub outputs: Vec<OutputEntry>,
    /// Named input registers and uniforms (every producer; aemstro only for `.uniform`).
    pub uniforms: Vec<UniformEntry>,
    /// The raw symbol table (NUL-terminated names referenced by labels and uniforms).
    pub symbols: Vec<u8>,
}

/// The raw DVLE table offsets (relative to the DVLE start) and counts, as stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DvleLayout {
    /// Header word 0x18: constant table offset.
    pub constant_offset: u32,
    /// Header word 0x1C: constant table entry count (20 bytes each).
    pub constant_count: u32,
    /// Header word 0x20: label table offset.
    pub label_offset: u32,
    /// Header word 0x24: label table entry count (16 bytes each).
    pub label_count: u32,
    /// Header word 0x28: output register table offset.
    pub output_offset: u32,
    /// Header word 0x2C: output register table entry count (8 bytes each).
    pub output_count: u32,
    /// Header word 0x30: uniform table offset.
    pub uniform_offset: u32,
    /// Header word 0x34: uniform table entry count (8 bytes each).
    pub uniform_count: u32,
    /// Header word 0x38: symbol table offset.
    pub symbol_offset: u32,
    /// Header word 0x3C: symbol table size in bytes.
    pub symbol_size: u32,
}

/// One constant-table entry: a uniform register and the value the loader uploads to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Constant {
    /// Halfword 0x00: the constant type (0 bool, 1 integer vector, 2 float vector), raw. Files
    /// of aemstro before 2014-12-09 write 0 for their float vectors (see [`ConstantValue`]).
    ///
    /// nihstro's `shader_binary.h` reads bit 0 of the first word as a custom "float32 values" flag
    /// that only its own loader of Citra dumps uses; that extension is not interpreted here.
    pub type_raw: u16,
    /// Halfword 0x02: register index within its file (b0-b15, i0-i3 or c0-c95), raw.
    pub register: u16,
    /// The value, decoded according to `type_raw`.
    pub value: ConstantValue,
    /// The four data words at 0x04..0x14 exactly as stored (for byte-exact writers).
    pub data: [u32; 4],
}

/// The value of a [`Constant`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConstantValue {
    /// Type 0: boolean uniform; true when byte 0x04 is non-zero (picasso writes a whole word 0/1).
    Bool(bool),
    /// Type 1: integer vector uniform, bytes 0x04..0x08 = x, y, z, w (unsigned 8-bit each).
    Int([u8; 4]),
    /// Type 2: float vector uniform, words 0x04..0x14 = x, y, z, w as raw float24 (1.7.16) bit
    /// patterns in the low 24 bits of each word.
    ///
    /// Also type 0 in DVLEs written by aemstro before its 2014-12-09 commit "added bool and int
    /// const support", whose `.const` wrote every constant as `register << 16 | 0` followed by
    /// four float24 words. Such a DVLE is recognised when its version halfword is 0, it has no
    /// constant of type 1 or 2, and at least one type-0 entry cannot be a boolean (a register
    /// above b15, a first word other than 0/1, or a non-zero second to fourth word); every
    /// type-0 entry of it is then a float vector. UNVERIFIED heuristic (\[AEM\] history): a
    /// DVLE of that era whose constants are all (0/1-ish, 0, 0, 0) vectors of c0-c15 reads as
    /// booleans.
    Float([u32; 4]),
    /// Any other type value; see `type_raw` and `data`.
    Unknown,
}

/// One label-table entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Label {
    /// Halfword 0x00: label id.
    pub id: u16,
    /// Halfword 0x02: unknown (3dbrew: "always 1?"; nihstro writes 0).
    pub unknown: u16,
    /// Word 0x04: instruction index of the label in the DVLP program.
    pub location: u32,
    /// Word 0x08: size of the labelled block in instructions; 0xFFFFFFFF = no size (3dbrew).
    pub size: u32,
    /// Word 0x0C: byte offset of the name in the DVLE symbol table.
    pub symbol_offset: u32,
    /// The name, resolved from the symbol table (lossy UTF-8).
    pub name: String,
}

/// Output semantic of an output-table entry (the "output type" halfword).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum OutputSemantic {
    /// 0: clip-space position.
    Position,
    /// 1: normal quaternion (fragment lighting).
    NormalQuat,
    /// 2: vertex colour.
    Color,
    /// 3: texture coordinate 0 (u, v).
    TexCoord0,
    /// 4: texture coordinate 0 w (cube/3D textures).
    TexCoord0W,
    /// 5: texture coordinate 1.
    TexCoord1,
    /// 6: texture coordinate 2.
    TexCoord2,
    /// 8: view vector (fragment lighting).
    View,
    /// 9: picasso's `dummy` (generic value passed to the GS, or merged output maps).
    Dummy,
    /// Any other value (7 is listed as "?" by 3dbrew); the raw halfword.
    Other(u16),
}

impl OutputSemantic {
    /// Decodes the output-type halfword.
    pub const fn from_raw(raw: u16) -> Self {
        match raw {
            0 => OutputSemantic::Position,
            1 => OutputSemantic::NormalQuat,
            2 => OutputSemantic::Color,
            3 => OutputSemantic::TexCoord0,
            4 => OutputSemantic::TexCoord0W,
            5 => OutputSemantic::TexCoord1,
            6 => OutputSemantic::TexCoord2,
            8 => OutputSemantic::View,
            9 => OutputSemantic::Dummy,
            other => OutputSemantic::Other(other),
        }
    }

    /// The halfword a writer stores.
    pub const fn to_raw(self) -> u16 {
        match self {
            OutputSemantic::Position => 0,
            OutputSemantic::NormalQuat => 1,
            OutputSemantic::Color => 2,
            OutputSemantic::TexCoord0 => 3,
            OutputSemantic::TexCoord0W => 4,
            OutputSemantic::TexCoord1 => 5,
            OutputSemantic::TexCoord2 => 6,
            OutputSemantic::View => 8,
            OutputSemantic::Dummy => 9,
            OutputSemantic::Other(v) => v,
        }
    }

    /// The picasso `.out` property name, or `None` for values picasso cannot express.
    pub const fn picasso_name(self) -> Option<&'static str> {
        match self {
            OutputSemantic::Position => Some("position"),
            OutputSemantic::NormalQuat => Some("normalquat"),
            OutputSemantic::Color => Some("color"),
            OutputSemantic::TexCoord0 => Some("texcoord0"),
            OutputSemantic::TexCoord0W => Some("texcoord0w"),
            OutputSemantic::TexCoord1 => Some("texcoord1"),
            OutputSemantic::TexCoord2 => Some("texcoord2"),
            OutputSemantic::View => Some("view"),
            OutputSemantic::Dummy => Some("dummy"),
            OutputSemantic::Other(_) => None,
        }
    }
}

/// One output-register-table entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputEntry {
    /// Halfword 0x00: what the register carries.
    pub semantic: OutputSemantic,
    /// Halfword 0x02: output register index (o0-o15).
    pub register: u16,
    /// Halfword 0x04: component mask, bit 0 = x, bit 1 = y, bit 2 = z, bit 3 = w (3dbrew: 5 = xz).
    pub mask: u16,
    /// Halfword 0x06: unknown (3dbrew: constant within a DVLE); picasso writes 0.
    pub unknown: u16,
}

/// A register of the unified index space of uniform-table entries (3dbrew "Uniform Table Entry").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UniformRegister {
    /// 0x00-0x0F: input register vN.
    Input(u8),
    /// 0x10-0x6F: float vector uniform cN.
    Float(u8),
    /// 0x70-0x73: integer vector uniform iN.
    Int(u8),
    /// 0x78-0x87: boolean uniform bN.
    Bool(u8),
    /// Anything else (0x74-0x77, 0x88 and up); the raw index.
    Other(u16),
}

impl UniformRegister {
    /// Decodes a unified register index.
    pub const fn from_raw(raw: u16) -> Self {
        // The casts below cannot truncate: every arm bounds `raw` below 0x100.
        match raw {
            0x00..=0x0F => UniformRegister::Input(raw as u8),
            0x10..=0x6F => UniformRegister::Float((raw - 0x10) as u8),
            0x70..=0x73 => UniformRegister::Int((raw - 0x70) as u8),
            0x78..=0x87 => UniformRegister::Bool((raw - 0x78) as u8),
            other => UniformRegister::Other(other),
        }
    }

    /// The unified index a writer stores.
    pub const fn to_raw(self) -> u16 {
        match self {
            UniformRegister::Input(n) => n as u16,
            UniformRegister::Float(n) => 0x10 + n as u16,
            UniformRegister::Int(n) => 0x70 + n as u16,
            UniformRegister::Bool(n) => 0x78 + n as u16,
            UniformRegister::Other(v) => v,
        }
    }
}

/// One uniform-table entry: a named input register or uniform (or a range for arrays).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniformEntry {
    /// Word 0x00: byte offset of the name in the DVLE symbol table.
    pub symbol_offset: u32,
    /// Halfword 0x04: first register, unified index space (see [`UniformRegister`]).
    pub start: u16,
    /// Halfword 0x06: last register, inclusive (equal to `start` for non-arrays).
    pub end: u16,
    /// The name, resolved from the symbol table (lossy UTF-8; picasso stores `$` as `.`).
    pub name: String,
}

impl UniformEntry {
    /// The first register, decoded.
    pub const fn start_register(&self) -> UniformRegister {
        UniformRegister::from_raw(self.start)
    }

    /// Number of registers covered (`end - start + 1`), or 0 when `end < start`.
    pub const fn len(&self) -> u32 {
        if self.end < self.start {
            0
        } else {
            (self.end - self.start) as u32 + 1
        }
    }

    /// True when the entry covers no register (`end < start`).
    pub const fn is_empty(&self) -> bool {
        self.end < self.start
    }
}

/// A parsed DVOJ (unlinked shader object), as far as 3dbrew describes it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Dvoj {
    /// Header halfword 0x04 (unknown, likely a version).
    pub version: u16,
    /// Header byte 0x06: vertex or geometry shader.
    pub kind: ShaderKind,
    /// Header byte 0x07: merge-output-maps flag, raw.
    pub merge_outmaps: u8,
    /// Header halfword 0x08: used input registers.
    pub input_mask: u16,
    /// Header halfword 0x0A: used output registers.
    ///
    /// UNVERIFIED: 3dbrew lists the output mask at 0x10, which is also the constant-table
    /// offset; we read the halfword after the input mask, as in the DVLE (0x10/0x12).
    pub output_mask: u16,
    /// Header word 0x0C: unknown ("padding? usually 0xFFFFFFFF").
    pub unknown_0c: u32,
    /// Program words (the entry point is the first instruction, per 3dbrew).
    pub code: Vec<u32>,
    /// Operand descriptors.
    pub opdescs: Vec<OpdescEntry>,
    /// Constant table.
    pub constants: Vec<Constant>,
    /// Label table.
    pub labels: Vec<Label>,
    /// Output register table.
    pub outputs: Vec<OutputEntry>,
    /// Uniform table.
    pub uniforms: Vec<UniformEntry>,
    /// First unknown block: per-instruction (symbol offset of the source file name, line) pairs,
    /// 3dbrew's unconfirmed guess. Filenames resolve against the DVOJ symbol table.
    pub line_info: Vec<LineInfo>,
    /// Second unknown block: 12-byte items, the first word an instruction index (3dbrew).
    pub block2: Vec<[u32; 3]>,
    /// The raw symbol table.
    pub symbols: Vec<u8>,
}

/// Either kind of shader file, chosen by its magic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ShaderFile {
    /// A linked DVLB shader binary (`.shbin`).
    Dvlb(Dvlb),
    /// An unlinked DVOJ shader object.
    Dvoj(Dvoj),
}

/// Parses a shader file, dispatching on its magic (`DVLB` or `DVOJ`).
pub fn parse_shader_file(bytes: &[u8]) -> Result<ShaderFile, DvlbError> {
    match bytes.get(0..4) {
        Some(m) if m == DVOJ_MAGIC => Dvoj::parse(bytes).map(ShaderFile::Dvoj),
        _ => Dvlb::parse(bytes).map(ShaderFile::Dvlb),
    }
}

// ---------------------------------------------------------------------------------------------
// Byte access
// ---------------------------------------------------------------------------------------------

/// Reads a little-endian word from `b` at `at`; 0 when out of range.
///
/// Callers only pass slices whose length was checked against the structure size, so the zero
/// fallback is unreachable; it exists so that no input can make this panic.
fn rd_u32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at.wrapping_add(4)) {
        Some(&[a, c, d, e]) => u32::from_le_bytes([a, c, d, e]),
        _ => 0,
    }
}

/// Reads a little-endian halfword; 0 when out of range (see [`rd_u32`]).
fn rd_u16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at.wrapping_add(2)) {
        Some(&[a, c]) => u16::from_le_bytes([a, c]),
        _ => 0,
    }
}

/// Reads a byte; 0 when out of range (see [`rd_u32`]).
fn rd_u8(b: &[u8], at: usize) -> u8 {
    b.get(at).copied().unwrap_or(0)
}

/// The input with bounds-checked, error-producing accessors and the decode budget.
struct Input<'a> {
    bytes: &'a [u8],
    /// Bytes the parser may still copy out (see [`DECODE_BUDGET_FACTOR`]).
    budget: Cell<u64>,
}

impl<'a> Input<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        let len = bytes.len() as u64;
        let budget = len
            .saturating_mul(DECODE_BUDGET_FACTOR)
            .saturating_add(DECODE_BUDGET_SLACK);
        Input {
            bytes,
            budget: Cell::new(budget),
        }
    }

    fn len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// Accounts for `amount` bytes copied out of the input.
    fn charge(&self, section: Section, offset: u64, amount: u64) -> Result<(), DvlbError> {
        let left = self.budget.get();
        if amount > left {
            let input_len = self.len();
            let limit = input_len
                .saturating_mul(DECODE_BUDGET_FACTOR)
                .saturating_add(DECODE_BUDGET_SLACK);
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::TooMuchData { limit, input_len },
            ));
        }
        self.budget.set(left - amount);
        Ok(())
    }

    fn err(&self, section: Section, offset: u64, kind: DvlbErrorKind) -> DvlbError {
        DvlbError {
            section,
            offset,
            kind,
        }
    }

    /// `size` bytes at absolute `offset`. A zero-sized structure may sit exactly at the end.
    fn bytes_at(&self, section: Section, offset: u64, size: u64) -> Result<&'a [u8], DvlbError> {
        let len = self.len();
        if offset > len || (offset == len && size > 0) {
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::OffsetPastEnd { input_len: len },
            ));
        }
        let available = len - offset;
        if size > available {
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::Truncated {
                    needed: size,
                    available,
                },
            ));
        }
        // Both bounds were checked against the input length above, so they fit in usize.
        let start = offset as usize;
        let end = (offset + size) as usize;
        self.bytes.get(start..end).ok_or_else(|| {
            self.err(
                section,
                offset,
                DvlbErrorKind::Truncated {
                    needed: size,
                    available,
                },
            )
        })
    }

    /// A table of `count` entries of `entry_size` bytes at absolute `offset`.
    fn table(
        &self,
        section: Section,
        offset: u64,
        count: u32,
        entry_size: u32,
    ) -> Result<&'a [u8], DvlbError> {
        let needed = u64::from(count) * u64::from(entry_size);
        let len = self.len();
        if needed > len {
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::CountTooLarge {
                    count: u64::from(count),
                    entry_size,
                    needed,
                    input_len: len,
                },
            ));
        }
        if count == 0 {
            // An empty table may point anywhere (picasso points empty tables at the next one,
            // which may be the end of the file); nothing is read.
            return Ok(&[]);
        }
        let bytes = self.bytes_at(section, offset, needed)?;
        self.charge(section, offset, needed)?;
        Ok(bytes)
    }

    /// Checks a 4-byte magic at `offset`. A short input whose remaining bytes match the start of
    /// the magic is reported as truncated; anything else that differs is a bad magic.
    fn magic(&self, section: Section, offset: u64, expected: [u8; 4]) -> Result<(), DvlbError> {
        let len = self.len();
        if offset > len {
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::OffsetPastEnd { input_len: len },
            ));
        }
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|o| self.bytes.get(o..))
            .unwrap_or(&[]);
        let mut found = [0u8; 4];
        for (slot, &b) in found.iter_mut().zip(rest) {
            *slot = b;
        }
        let available = rest.len().min(4);
        if found[..available] != expected[..available] {
            return Err(self.err(section, offset, DvlbErrorKind::BadMagic { expected, found }));
        }
        if available < 4 {
            let available = available as u64;
            return Err(self.err(
                section,
                offset,
                DvlbErrorKind::Truncated {
                    needed: 4,
                    available,
                },
            ));
        }
        Ok(())
    }
}

/// Absolute offset of a table: `base + rel` (no overflow: both are below 2^32).
fn abs(base: u32, rel: u32) -> u64 {
    u64::from(base) + u64::from(rel)
}

/// Resolves a NUL-terminated name at `offset` in `table` (the name ends at the table's end if no
/// NUL follows). An offset equal to the table size yields the empty name.
fn symbol(table: &[u8], offset: u32, section: Section, entry_at: u64) -> Result<String, DvlbError> {
    let start = offset as usize;
    let rest = table.get(start..).ok_or(DvlbError {
        section,
        offset: entry_at,
        kind: DvlbErrorKind::SymbolOutOfRange {
            symbol_offset: offset,
            table_size: table.len() as u32,
        },
    })?;
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let name = rest.get(..end).unwrap_or(&[]);
    Ok(String::from_utf8_lossy(name).into_owned())
}

impl Input<'_> {
    /// [`symbol`], charged to the decode budget.
    fn name(
        &self,
        table: &[u8],
        offset: u32,
        section: Section,
        entry_at: u64,
    ) -> Result<String, DvlbError> {
        let name = symbol(table, offset, section, entry_at)?;
        self.charge(section, entry_at, name.len() as u64)?;
        Ok(name)
    }
}

// ---------------------------------------------------------------------------------------------
// DVLB
// ---------------------------------------------------------------------------------------------

impl Dvlb {
    /// Parses a complete DVLB file (`.shbin`).
    pub fn parse(bytes: &[u8]) -> Result<Dvlb, DvlbError> {
        let input = Input::new(bytes);
        input.magic(Section::DvlbHeader, 0, DVLB_MAGIC)?;
        let head = input.bytes_at(Section::DvlbHeader, 0, u64::from(DVLB_HEADER_SIZE))?;
        let count = rd_u32(head, 4);
        let offsets = input.table(Section::DvleOffsetTable, 8, count, 4)?;
        let dvle_offsets: Vec<u32> = offsets.chunks_exact(4).map(|c| rd_u32(c, 0)).collect();

        // HW: [3DB] "SHBIN": "The DVLP section comes directly after the binary header"; the header
        // has no DVLP offset, so this is where every reader (ctrulib, citra, nihstro) looks.
        let dvlp_offset = u32::try_from(8 + 4 * u64::from(count)).map_err(|_| DvlbError {
            section: Section::DvleOffsetTable,
            offset: 8,
            kind: DvlbErrorKind::OffsetPastEnd {
                input_len: input.len(),
            },
        })?;
        let dvlp = parse_dvlp(&input, dvlp_offset, &dvle_offsets)?;

        // The DVLE records take memory of their own: a table listing one DVLE a million times
        // is refused up front.
        let per_dvle = std::mem::size_of::<Dvle>() as u64;
        let dvle_limit = input
            .len()
            .saturating_mul(DVLE_BUDGET_FACTOR)
            .saturating_add(DVLE_BUDGET_SLACK)
            / per_dvle;
        if u64::from(count) > dvle_limit {
            return Err(input.err(
                Section::DvleOffsetTable,
                8,
                DvlbErrorKind::TooManyDvles {
                    count: u64::from(count),
                    limit: dvle_limit,
                    input_len: input.len(),
                },
            ));
        }
        let mut dvles = Vec::with_capacity(dvle_offsets.len());
        for (index, &offset) in dvle_offsets.iter().enumerate() {
            dvles.push(parse_dvle(&input, index, offset)?);
        }
        Ok(Dvlb {
            dvlp,
            dvles,
            input_len: input.len(),
        })
    }

    /// The operand descriptors alone (entry word 0 of each table entry), in table order.
    pub fn operand_descriptors(&self) -> Vec<u32> {
        self.dvlp.opdescs.iter().map(|e| e.descriptor).collect()
    }
}

fn parse_dvlp(input: &Input<'_>, offset: u32, dvle_offsets: &[u32]) -> Result<Dvlp, DvlbError> {
    let base = u64::from(offset);
    input.magic(Section::DvlpHeader, base, DVLP_MAGIC)?;
    let head = input.bytes_at(Section::DvlpHeader, base, u64::from(DVLP_HEADER_MIN_SIZE))?;
    let version = rd_u32(head, 0x04);
    let code_offset = rd_u32(head, 0x08);
    let code_words = rd_u32(head, 0x0C);
    let opdesc_offset = rd_u32(head, 0x10);
    let opdesc_count = rd_u32(head, 0x14);
    let line_offset = rd_u32(head, 0x18);

    let code_bytes = input.table(Section::Program, abs(offset, code_offset), code_words, 4)?;
    let code: Vec<u32> = code_bytes.chunks_exact(4).map(|c| rd_u32(c, 0)).collect();

    let op_bytes = input.table(
        Section::OperandDescriptors,
        abs(offset, opdesc_offset),
        opdesc_count,
        OPDESC_ENTRY_SIZE,
    )?;
    let opdescs: Vec<OpdescEntry> = op_bytes
        .chunks_exact(OPDESC_ENTRY_SIZE as usize)
        .map(|c| OpdescEntry {
            descriptor: rd_u32(c, 0),
            extra: rd_u32(c, 4),
        })
        .collect();

    // The words at 0x1C..0x28 exist only if those bytes are not part of another structure.
    // UNVERIFIED: 0x18/0x1C as line table offset/count and 0x20/0x24 as the filename table
    // follow the [3DB] DVLP table plus our reading of its "unknown" words (see
    // `DvlpLayout::line_offset`); the alternative, [N]'s 0x18 = filename table offset with no
    // words after it, only differs for files with a non-empty filename table (none known).
    let ext_start = base + u64::from(DVLP_HEADER_MIN_SIZE);
    let ext_end = base + u64::from(DVLP_HEADER_FULL_SIZE);
    let overlaps = |start: u64, len: u64| start < ext_end && ext_start < start + len;
    let code_len = u64::from(code_words) * 4;
    let op_len = u64::from(opdesc_count) * u64::from(OPDESC_ENTRY_SIZE);
    let taken = dvle_offsets
        .iter()
        .any(|&d| overlaps(u64::from(d), u64::from(DVLE_HEADER_SIZE)))
        || (code_len > 0 && overlaps(abs(offset, code_offset), code_len))
        || (op_len > 0 && overlaps(abs(offset, opdesc_offset), op_len));
    let extension = if taken || ext_end > input.len() {
        None
    } else {
        let ext = input.bytes_at(Section::DvlpHeader, ext_start, ext_end - ext_start)?;
        Some(DvlpExtension {
            line_count: rd_u32(ext, 0),
            filename_offset: rd_u32(ext, 4),
            filename_size: rd_u32(ext, 8),
        })
    };

    let (filename_symbols, lines) = match extension {
        Some(ext) => {
            let names = input
                .table(
                    Section::FilenameSymbols,
                    abs(offset, ext.filename_offset),
                    ext.filename_size,
                    1,
                )?
                .to_vec();
            let line_at = abs(offset, line_offset);
            let line_bytes =
                input.table(Section::LineTable, line_at, ext.line_count, LINE_ENTRY_SIZE)?;
            let lines = parse_line_info(input, Section::LineTable, line_at, line_bytes, &names)?;
            (names, lines)
        }
        None => (Vec::new(), Vec::new()),
    };

    Ok(Dvlp {
        offset,
        version,
        layout: DvlpLayout {
            code_offset,
            code_words,
            opdesc_offset,
            opdesc_count,
            line_offset,
            extension,
        },
        code,
        opdescs,
        lines,
        filename_symbols,
    })
}

/// Decodes 8-byte line entries; file names resolve leniently (debug data only: an offset outside
/// the name table gives `None`), but their copies count against the decode budget.
fn parse_line_info(
    input: &Input<'_>,
    section: Section,
    at: u64,
    bytes: &[u8],
    names: &[u8],
) -> Result<Vec<LineInfo>, DvlbError> {
    let mut lines = Vec::with_capacity(bytes.len() / LINE_ENTRY_SIZE as usize);
    for c in bytes.chunks_exact(LINE_ENTRY_SIZE as usize) {
        let filename_offset = rd_u32(c, 0);
        let filename = symbol(names, filename_offset, section, at).ok();
        input.charge(section, at, filename.as_ref().map_or(0, |n| n.len() as u64))?;
        lines.push(LineInfo {
            filename_offset,
            line: rd_u32(c, 4),
            filename,
        });
    }
    Ok(lines)
}

fn parse_dvle(input: &Input<'_>, index: usize, offset: u32) -> Result<Dvle, DvlbError> {
    let base = u64::from(offset);
    let section = Section::DvleHeader(index);
    input.magic(section, base, DVLE_MAGIC)?;
    let h = input.bytes_at(section, base, u64::from(DVLE_HEADER_SIZE))?;
    let layout = DvleLayout {
        constant_offset: rd_u32(h, 0x18),
        constant_count: rd_u32(h, 0x1C),
        label_offset: rd_u32(h, 0x20),
        label_count: rd_u32(h, 0x24),
        output_offset: rd_u32(h, 0x28),
        output_count: rd_u32(h, 0x2C),
        uniform_offset: rd_u32(h, 0x30),
        uniform_count: rd_u32(h, 0x34),
        symbol_offset: rd_u32(h, 0x38),
        symbol_size: rd_u32(h, 0x3C),
    };
    let owner = Owner::Dvle(index);
    let tables = ExecTables::parse(
        input,
        owner,
        TableLocs {
            constants: (abs(offset, layout.constant_offset), layout.constant_count),
            labels: (abs(offset, layout.label_offset), layout.label_count),
            outputs: (abs(offset, layout.output_offset), layout.output_count),
            uniforms: (abs(offset, layout.uniform_offset), layout.uniform_count),
            symbols: (abs(offset, layout.symbol_offset), layout.symbol_size),
        },
    )?;
    let version = rd_u16(h, 0x04);
    let mut constants = tables.constants;
    if version == 0 && is_early_aemstro(&constants) {
        for c in &mut constants {
            if c.type_raw == 0 {
                c.value = ConstantValue::Float(c.data);
            }
        }
    }
    Ok(Dvle {
        offset,
        version,
        kind: ShaderKind::from_raw(rd_u8(h, 0x06)),
        merge_outmaps: rd_u8(h, 0x07),
        main_start: rd_u32(h, 0x08),
        main_end: rd_u32(h, 0x0C),
        input_mask: rd_u16(h, 0x10),
        output_mask: rd_u16(h, 0x12),
        gs_mode: GsMode::from_raw(rd_u8(h, 0x14)),
        gs_fixed_start: rd_u8(h, 0x15),
        gs_variable_num: rd_u8(h, 0x16),
        gs_fixed_num: rd_u8(h, 0x17),
        layout,
        constants,
        labels: tables.labels,
        outputs: tables.outputs,
        uniforms: tables.uniforms,
        symbols: tables.symbols,
    })
}

/// Absolute offsets and counts of the executable tables shared by DVLE and DVOJ.
struct TableLocs {
    constants: (u64, u32),
    labels: (u64, u32),
    outputs: (u64, u32),
    uniforms: (u64, u32),
    symbols: (u64, u32),
}

struct ExecTables {
    constants: Vec<Constant>,
    labels: Vec<Label>,
    outputs: Vec<OutputEntry>,
    uniforms: Vec<UniformEntry>,
    symbols: Vec<u8>,
}

impl ExecTables {
    fn parse(input: &Input<'_>, owner: Owner, locs: TableLocs) -> Result<ExecTables, DvlbError> {
        let (sym_at, sym_size) = locs.symbols;
        let symbols = input
            .table(Section::Symbols(owner), sym_at, sym_size, 1)?
            .to_vec();

        let (at, count) = locs.constants;
        let constants = input
            .table(Section::Constants(owner), at, count, CONSTANT_ENTRY_SIZE)?
            .chunks_exact(CONSTANT_ENTRY_SIZE as usize)
            .map(parse_constant)
            .collect();

        let (at, count) = locs.labels;
        let bytes = input.table(Section::Labels(owner), at, count, LABEL_ENTRY_SIZE)?;
        let mut labels = Vec::with_capacity(count as usize);
        for (i, c) in bytes.chunks_exact(LABEL_ENTRY_SIZE as usize).enumerate() {
            let symbol_offset = rd_u32(c, 0x0C);
            let entry_at = at + (i as u64) * u64::from(LABEL_ENTRY_SIZE);
            // [3DB]: halfword id, halfword "unknown (always 1?)"; [N] reads an 8-bit id from
            // the first word. Halfwords keep both readings (nihstro writes 0 in the upper half).
            labels.push(Label {
                id: rd_u16(c, 0),
                unknown: rd_u16(c, 2),
                location: rd_u32(c, 4),
                size: rd_u32(c, 8),
                symbol_offset,
                name: input.name(&symbols, symbol_offset, Section::Label(owner, i), entry_at)?,
            });
        }

        let (at, count) = locs.outputs;
        let outputs = input
            .table(Section::Outputs(owner), at, count, OUTPUT_ENTRY_SIZE)?
            .chunks_exact(OUTPUT_ENTRY_SIZE as usize)
            .map(|c| OutputEntry {
                semantic: OutputSemantic::from_raw(rd_u16(c, 0)),
                register: rd_u16(c, 2),
                mask: rd_u16(c, 4),
                unknown: rd_u16(c, 6),
            })
            .collect();

        let (at, count) = locs.uniforms;
        let bytes = input.table(Section::Uniforms(owner), at, count, UNIFORM_ENTRY_SIZE)?;
        let mut uniforms = Vec::with_capacity(count as usize);
        for (i, c) in bytes.chunks_exact(UNIFORM_ENTRY_SIZE as usize).enumerate() {
            let symbol_offset = rd_u32(c, 0);
            let entry_at = at + (i as u64) * u64::from(UNIFORM_ENTRY_SIZE);
            uniforms.push(UniformEntry {
                symbol_offset,
                start: rd_u16(c, 4),
                end: rd_u16(c, 6),
                name: symbol(
                    &symbols,
                    symbol_offset,
                    Section::Uniform(owner, i),
                    entry_at,
                )?,
            });
        }

        Ok(ExecTables {
            constants,
            labels,
            outputs,
            uniforms,
            symbols,
        })
    }
}

/// Whether a constant table was written by aemstro before 2014-12-09, when every constant was a
/// float vector stored with type 0 (see [`ConstantValue::Float`]).
fn is_early_aemstro(constants: &[Constant]) -> bool {
    let typed = constants.iter().any(|c| c.type_raw == 1 || c.type_raw == 2);
    let not_bool = |c: &Constant| {
        c.type_raw == 0 && (c.register > 15 || c.data[0] > 1 || c.data[1..].iter().any(|&w| w != 0))
    };
    !typed && constants.iter().any(not_bool)
}

fn parse_constant(c: &[u8]) -> Constant {
    let type_raw = rd_u16(c, 0);
    let data = [rd_u32(c, 4), rd_u32(c, 8), rd_u32(c, 12), rd_u32(c, 16)];
    // Sources disagree on the field widths: [3DB] shows a byte type at 0x00, a byte register
    // at 0x02 and a byte bool value at 0x04; picasso writes halfwords and a 32-bit bool; [N]
    // reads the register from bits 16-23. We read halfwords (the widest reading; identical for
    // every valid file) and the bool from its low byte, and keep all data words raw.
    let value = match type_raw {
        // 3dbrew: the bool value is the byte at 0x04; picasso writes the whole word as 0/1.
        0 => ConstantValue::Bool(rd_u8(c, 4) != 0),
        1 => ConstantValue::Int([rd_u8(c, 4), rd_u8(c, 5), rd_u8(c, 6), rd_u8(c, 7)]),
        2 => ConstantValue::Float(data),
        _ => ConstantValue::Unknown,
    };
    Constant {
        type_raw,
        register: rd_u16(c, 2),
        value,
        data,
    }
}

// ---------------------------------------------------------------------------------------------
// DVOJ
// ---------------------------------------------------------------------------------------------

impl Dvoj {
    /// Parses a DVOJ shader object (all offsets relative to its start, 3dbrew "DVOJ").
    pub fn parse(bytes: &[u8]) -> Result<Dvoj, DvlbError> {
        let input = Input::new(bytes);
        input.magic(Section::DvojHeader, 0, DVOJ_MAGIC)?;
        let h = input.bytes_at(Section::DvojHeader, 0, u64::from(DVOJ_HEADER_SIZE))?;
        let at = |rel: usize| u64::from(rd_u32(h, rel));

        let tables = ExecTables::parse(
            &input,
            Owner::Dvoj,
            TableLocs {
                constants: (at(0x10), rd_u32(h, 0x14)),
                labels: (at(0x18), rd_u32(h, 0x1C)),
                outputs: (at(0x40), rd_u32(h, 0x44)),
                uniforms: (at(0x48), rd_u32(h, 0x4C)),
                symbols: (at(0x50), rd_u32(h, 0x54)),
            },
        )?;
        let code = input
            .table(Section::Program, at(0x20), rd_u32(h, 0x24), 4)?
            .chunks_exact(4)
            .map(|c| rd_u32(c, 0))
            .collect();
        let opdescs = input
            .table(
                Section::OperandDescriptors,
                at(0x28),
                rd_u32(h, 0x2C),
                OPDESC_ENTRY_SIZE,
            )?
            .chunks_exact(OPDESC_ENTRY_SIZE as usize)
            .map(|c| OpdescEntry {
                descriptor: rd_u32(c, 0),
                extra: rd_u32(c, 4),
            })
            .collect();
        let line_bytes = input.table(
            Section::DvojLineInfo,
            at(0x30),
            rd_u32(h, 0x34),
            LINE_ENTRY_SIZE,
        )?;
        let line_info = parse_line_info(
            &input,
            Section::DvojLineInfo,
            at(0x30),
            line_bytes,
            &tables.symbols,
        )?;
        let block2 = input
            .table(
                Section::DvojBlock2,
                at(0x38),
                rd_u32(h, 0x3C),
                DVOJ_BLOCK2_ENTRY_SIZE,
            )?
            .chunks_exact(DVOJ_BLOCK2_ENTRY_SIZE as usize)
            .map(|c| [rd_u32(c, 0), rd_u32(c, 4), rd_u32(c, 8)])
            .collect();

        Ok(Dvoj {
            version: rd_u16(h, 0x04),
            kind: ShaderKind::from_raw(rd_u8(h, 0x06)),
            merge_outmaps: rd_u8(h, 0x07),
            input_mask: rd_u16(h, 0x08),
            // UNVERIFIED: [3DB] lists the output mask at 0x10, which collides with the constant
            // table offset; the halfword after the input mask (as in the DVLE) is our guess.
            output_mask: rd_u16(h, 0x0A),
            unknown_0c: rd_u32(h, 0x0C),
            code,
            opdescs,
            constants: tables.constants,
            labels: tables.labels,
            outputs: tables.outputs,
            uniforms: tables.uniforms,
            line_info,
            block2,
            symbols: tables.symbols,
        })
    }
}

impl Dvoj {
    /// The object as a one-DVLE [`Dvlb`], so that DVLB tools (disassembler, interpreter setup)
    /// can use it. The entry range is the whole program (3dbrew: a DVOJ's entry point is its
    /// first instruction); the DVLP has no line table; file offsets are 0.
    pub fn to_dvlb(&self) -> Dvlb {
        let words = u32::try_from(self.code.len()).unwrap_or(u32::MAX);
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        Dvlb {
            dvlp: Dvlp {
                offset: 0,
                version: 0,
                layout: DvlpLayout {
                    code_offset: 0,
                    code_words: words,
                    opdesc_offset: 0,
                    opdesc_count: count(self.opdescs.len()),
                    line_offset: 0,
                    extension: None,
                },
                code: self.code.clone(),
                opdescs: self.opdescs.clone(),
                lines: Vec::new(),
                filename_symbols: Vec::new(),
            },
            dvles: vec![Dvle {
                offset: 0,
                version: self.version,
                kind: self.kind,
                merge_outmaps: self.merge_outmaps,
                main_start: 0,
                main_end: words,
                input_mask: self.input_mask,
                output_mask: self.output_mask,
                gs_mode: GsMode::Point,
                gs_fixed_start: 0,
                gs_variable_num: 0,
                gs_fixed_num: 0,
                layout: DvleLayout {
                    constant_offset: 0,
                    constant_count: count(self.constants.len()),
                    label_offset: 0,
                    label_count: count(self.labels.len()),
                    output_offset: 0,
                    output_count: count(self.outputs.len()),
                    uniform_offset: 0,
                    uniform_count: count(self.uniforms.len()),
                    symbol_offset: 0,
                    symbol_size: count(self.symbols.len()),
                },
                constants: self.constants.clone(),
                labels: self.labels.clone(),
                outputs: self.outputs.clone(),
                uniforms: self.uniforms.clone(),
                symbols: self.symbols.clone(),
            }],
            input_len: 0,
        }
    }
}

#[cfg(test)]
mod tests;
