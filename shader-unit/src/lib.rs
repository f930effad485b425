//! PICA200 shader unit: number formats, instruction decoding, the DVLB/DVLE shader binary format,
//! the disassembler, the reference interpreter, the fast batched engine and the picasso-compatible assembler.
//!
//! This crate is a leaf of the workspace: it depends on no other workspace crate.
#![warn(missing_docs)]

pub mod asm;
pub mod bench;
pub mod decode;
pub mod disasm;
pub mod dvlb;
pub mod fast;
pub mod float;
pub mod interp;
