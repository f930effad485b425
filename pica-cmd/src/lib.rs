//! PICA200 command vocabulary: command lists (parse/encode), the register catalogue with typed
//! field views, Citra's CiTrace (`.ctf`) trace file format, and file-type detection for the tools.
//!
//! This crate is a leaf of the workspace: it depends on no other workspace crate.
#![warn(missing_docs)]

pub mod citrace;
pub mod cmdlist;
pub mod filekind;
pub mod regs;
