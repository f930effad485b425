//! Byte-exact DVLB writer: lays out an [`Assembly`] the way picasso 2.7.1 writes `.shbin` files.
//!
//! Stage: assembler output. Inputs: an [`Assembly`] (program words, operand descriptors, DVLE
//! models). Outputs: the `.shbin` bytes (all fields little-endian). Registers read: none.
//!
//! Layout (offsets in bytes; "DVLE-relative" offsets count from the DVLE's magic):
//!
//! | part | contents |
//! |---|---|
//! | DVLB header | `"DVLB"`, u32 DVLE count, one u32 absolute offset per DVLE |
//! | DVLP header (10 words) | `"DVLP"`, u32 version 0, u32 program offset (40, DVLP-relative), u32 program size in words, u32 opdesc offset (DVLP-relative), u32 opdesc count, u32 "symbol table" offset = DVLP size, 3 × u32 zero |
//! | program | u32 words |
//! | opdescs | one u64 per descriptor (the 31-bit descriptor, high word 0) |
//! | each DVLE | header (16 words), constants, outputs, uniforms, symbol strings, zero padding to 4 bytes |
//!
//! DVLE header: `"DVLE"`, u16 0x1002, u8 shader type (0 vertex, 1 geometry), u8 merge-outmaps
//! flag, u32 entry start and u32 entry end (word indices; end exclusive), u16 input mask, u16
//! output mask, u8 GS mode, u8 GS fixed-array start register, u8 GS variable vertex count, u8 GS
//! fixed vertex count, then (offset, count) pairs, DVLE-relative: constants (20 bytes each),
//! labels (always empty: offset of the output table, count 0), outputs (8 bytes each), uniforms
//! (8 bytes each) and symbols (offset, size in bytes).
//!
//! Constant entry: u16 type (0 bool, 1 ivec, 2 fvec), u16 register index (within its file), then
//! four f24 values as u32 (fvec), four bytes + 12 zero bytes (ivec) or u32 0/1 + 12 zero bytes
//! (bool). Output entry: u64 `type | register << 16 | mask << 32` (mask bit 0 = x). Uniform entry:
//! u32 symbol offset, u16 first and u16 last register in DVLE numbering (v0 = 0x00, c0 = 0x10,
//! i0 = 0x70, b0 = 0x78).

use super::{AsmConstant, Assembly};

/// "DVLB" magic (little-endian u32).
const MAGIC_DVLB: u32 = 0x424C_5644;
/// "DVLP" magic.
const MAGIC_DVLP: u32 = 0x504C_5644;
/// "DVLE" magic.
const MAGIC_DVLE: u32 = 0x454C_5644;
/// DVLE version halfword written by picasso 2.x.
const DVLE_VERSION: u16 = 0x1002;
/// DVLP header size in bytes.
const DVLP_HEADER: usize = 10 * 4;
/// DVLE header size in bytes.
const DVLE_HEADER: usize = 16 * 4;

/// Writes `asm` as a `.shbin` (DVLB) file.
pub fn write_shbin(asm: &Assembly) -> Vec<u8> {
    let mut out = Vec::with_capacity(256 + asm.program.len() * 4 + asm.opdescs.len() * 8);
    let w32 = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    let w16 = |out: &mut Vec<u8>, v: u16| out.extend_from_slice(&v.to_le_bytes());

    let prog_words = asm.program.len();
    let dvlp_size = DVLP_HEADER + prog_words * 4 + asm.opdescs.len() * 8;
    let count = asm.entries.len();

    w32(&mut out, MAGIC_DVLB);
    w32(&mut out, count as u32); // ok: bounded by the number of source files
    let mut off = 8 + count * 4 + dvlp_size;
    for e in &asm.entries {
        w32(&mut out, off as u32); // ok: files are far below 4 GiB
        off += DVLE_HEADER
            + e.constants.len() * 20
            + e.outputs.len() * 8
            + e.uniforms.len() * 8
            + e.symbol_size();
        off = (off + 3) & !3;
    }

    w32(&mut out, MAGIC_DVLP);
    w32(&mut out, 0);
    w32(&mut out, DVLP_HEADER as u32);
    w32(&mut out, prog_words as u32); // ok: see above
    w32(&mut out, (DVLP_HEADER + prog_words * 4) as u32); // ok: see above
    w32(&mut out, asm.opdescs.len() as u32); // ok: at most 128
    w32(&mut out, dvlp_size as u32); // ok: see above
    w32(&mut out, 0);
    w32(&mut out, 0);
    w32(&mut out, 0);
    for &word in &asm.program {
        w32(&mut out, word);
    }
    for &d in &asm.opdescs {
        out.extend_from_slice(&u64::from(d).to_le_bytes());
    }

    for e in &asm.entries {
        let start = out.len();
        w32(&mut out, MAGIC_DVLE);
        w16(&mut out, DVLE_VERSION);
        out.push(u8::from(e.kind == super::ShaderKind::Geometry));
        out.push(u8::from(e.merge_outmaps));
        w32(&mut out, e.entry_start);
        w32(&mut out, e.entry_end);
        w16(&mut out, e.input_mask);
        w16(&mut out, e.output_mask);
        out.extend_from_slice(&[
            e.gsh_mode,
            e.gsh_fixed_start,
            e.gsh_variable_num,
            e.gsh_fixed_num,
        ]);
        let mut rel = DVLE_HEADER;
        // Constants.
        w32(&mut out, rel as u32); // ok: small
        w32(&mut out, e.constants.len() as u32); // ok: at most 96
        rel += e.constants.len() * 20;
        // Labels (picasso writes none).
        w32(&mut out, rel as u32); // ok: small
        w32(&mut out, 0);
        // Outputs.
        w32(&mut out, rel as u32); // ok: small
        w32(&mut out, e.outputs.len() as u32); // ok: at most 16
        rel += e.outputs.len() * 8;
        // Uniforms.
        w32(&mut out, rel as u32); // ok: small
        w32(&mut out, e.uniforms.len() as u32); // ok: at most 96
        rel += e.uniforms.len() * 8;
        // Symbols.
        w32(&mut out, rel as u32); // ok: small
        w32(&mut out, e.symbol_size() as u32); // ok: small

        for c in &e.constants {
            match *c {
                AsmConstant::Float { reg, value } => {
                    w16(&mut out, 2);
                    w16(&mut out, u16::from(reg));
                    for v in value {
                        w32(&mut out, v);
                    }
                }
                AsmConstant::Int { reg, value } => {
                    w16(&mut out, 1);
                    w16(&mut out, u16::from(reg));
                    out.extend_from_slice(&value);
                    out.extend_from_slice(&[0; 12]);
                }
                AsmConstant::Bool { reg, value } => {
                    w16(&mut out, 0);
                    w16(&mut out, u16::from(reg));
                    w32(&mut out, u32::from(value));
                    out.extend_from_slice(&[0; 12]);
                }
            }
        }
        for o in &e.outputs {
            let entry =
                u64::from(o.semantic) | (u64::from(o.register) << 16) | (u64::from(o.mask) << 32);
            out.extend_from_slice(&entry.to_le_bytes());
        }
        let mut sym = 0u32;
        for u in &e.uniforms {
            w32(&mut out, sym);
            sym += u.name.len() as u32 + 1; // ok: names are short
            w16(&mut out, u.first);
            w16(&mut out, u.last);
        }
        for u in &e.uniforms {
            out.extend_from_slice(u.name.as_bytes());
            out.push(0);
        }
        debug_assert_eq!(out.len() - start, rel + e.symbol_size());
        while out.len() % 4 != 0 {
            out.push(0);
        }
    }
    out
}
