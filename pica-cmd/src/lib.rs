//! PICA200 command vocabulary: command lists (parse/encode), the register catalogue with typed
//! field views, and Citra's CiTrace (`.ctf`) trace file format.
//!
//! This crate is a leaf of the workspace: it depends on no other workspace crate.
#![warn(missing_docs)]

pub mod citrace;
pub mod cmdlist;
pub mod regs;
