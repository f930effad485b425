//! Shader disassembly listings for the viewer's state and shader panels.
//!
//! Stage: presentation. Inputs: shader program memory (code words and operand descriptors, as a
//! trace's GPU holds them) and the entry point (SH_ENTRYPOINT bits 0-15), or a parsed DVLB file.
//! Output: [`ShaderListing`], lines of text with a map from word address to line, so the shader
//! debugger can highlight the executing instruction. Registers read: none (the caller passes
//! the entry point).
//!
//! Program memory from a trace has no symbol table, so labels are invented: `main` at the entry
//! point, `proc_XXX` at CALL targets and `l_XXX` at every other flow-control target (XXX = word
//! address in hex). DVLB files use the disassembler of `shader_unit::disasm` (picasso syntax,
//! the file's own labels).

use std::collections::BTreeMap;

use shader_unit::decode::{Instr, Program};
use shader_unit::disasm::{disassemble_listing, instruction_text};
use shader_unit::dvlb::Dvlb;

/// What a listing line shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineKind {
    /// A label (`main:`).
    Label,
    /// An instruction.
    Instruction,
    /// A comment, directive or blank line.
    Other,
}

/// One line of a listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ListingLine {
    /// Word address of the instruction on this line.
    pub pc: Option<u16>,
    /// The text.
    pub text: String,
    /// Kind of line.
    pub kind: LineKind,
}

/// A disassembled program.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ShaderListing {
    /// Lines in order.
    pub lines: Vec<ListingLine>,
    /// For each word address shown, the line index that holds it.
    pub pc_line: Vec<Option<usize>>,
    /// Entry point (word address).
    pub entry: u32,
}

/// Largest program memory (words) a listing shows.
const MAX_WORDS: usize = 4096;

impl ShaderListing {
    /// Lists program memory `code`/`opdescs` starting at word 0 up to the last non-zero word (and
    /// at least past `entry` and every flow-control target).
    pub fn from_memory(code: &[u32], opdescs: &[u32], entry: u32) -> Self {
        let code = code.get(..code.len().min(MAX_WORDS)).unwrap_or(code);
        let program = Program::new(code, opdescs);
        Self::from_program(&program, entry)
    }

    /// Lists a decoded program (see [`ShaderListing::from_memory`]).
    pub fn from_program(program: &Program, entry: u32) -> Self {
        let instrs = program.instrs();
        let words = program.code();
        let mut end = words.iter().rposition(|&w| w != 0).map_or(0, |i| i + 1);
        end = end.max(entry as usize + 1);
        let mut labels: BTreeMap<u16, String> = BTreeMap::new();
        for instr in instrs.iter().take(end.min(instrs.len())) {
            if let Some(t) = instr.flow_target() {
                let name = match instr {
                    Instr::Call { .. } | Instr::CallC { .. } | Instr::CallU { .. } => {
                        format!("proc_{t:03X}")
                    }
                    _ => format!("l_{t:03X}"),
                };
                labels.entry(t).or_insert(name);
                end = end.max(usize::from(t) + 1);
            }
        }
        if let Ok(e) = u16::try_from(entry) {
            labels.insert(e, "main".to_string());
        }
        let end = end.min(instrs.len());
        let mut lines = Vec::with_capacity(end + labels.len() + 1);
        let mut pc_line = vec![None; end];
        if end == 0 {
            lines.push(ListingLine {
                pc: None,
                text: "; (empty program memory)".into(),
                kind: LineKind::Other,
            });
        }
        for (pc, instr) in instrs.iter().enumerate().take(end) {
            // ok: `end` is at most MAX_WORDS (4096), so the address fits u16.
            let pc16 = pc as u16;
            if let Some(name) = labels.get(&pc16) {
                lines.push(ListingLine {
                    pc: None,
                    text: format!("{name}:"),
                    kind: LineKind::Label,
                });
            }
            let mut text = format!("{pc:03X}:  {}", instruction_text(instr));
            if let Some(t) = instr.flow_target()
                && let Some(name) = labels.get(&t)
            {
                text.push_str(&format!("    ; -> {name}"));
            }
            if let Some(slot) = pc_line.get_mut(pc) {
                *slot = Some(lines.len());
            }
            lines.push(ListingLine {
                pc: Some(pc16),
                text,
                kind: LineKind::Instruction,
            });
        }
        Self {
            lines,
            pc_line,
            entry,
        }
    }

    /// Lists DVLE `dvle` of a DVLB file in picasso syntax (with the file's labels and names).
    pub fn from_dvlb(dvlb: &Dvlb, dvle: usize) -> Result<Self, String> {
        let listing = disassemble_listing(dvlb, dvle).map_err(|e| e.to_string())?;
        let entry = dvlb.dvles.get(dvle).map_or(0, |d| d.main_start);
        let mut pc_of_line: BTreeMap<usize, u16> = BTreeMap::new();
        for (pc, &line) in listing.address_lines.iter().enumerate() {
            if let Ok(pc) = u16::try_from(pc) {
                pc_of_line.entry(line).or_insert(pc);
            }
        }
        let lines: Vec<ListingLine> = listing
            .text
            .lines()
            .enumerate()
            .map(|(i, l)| {
                let pc = pc_of_line.get(&i).copied();
                let trimmed = l.trim_start();
                let kind = if pc.is_some() {
                    LineKind::Instruction
                } else if trimmed.ends_with(':') && !trimmed.starts_with(';') {
                    LineKind::Label
                } else {
                    LineKind::Other
                };
                ListingLine {
                    pc,
                    text: l.to_string(),
                    kind,
                }
            })
            .collect();
        let pc_line = listing.address_lines.iter().map(|&l| Some(l)).collect();
        Ok(Self {
            lines,
            pc_line,
            entry,
        })
    }

    /// The line showing word address `pc`.
    pub fn line_of(&self, pc: u16) -> Option<usize> {
        self.pc_line.get(usize::from(pc)).copied().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_listing_has_entry_and_flow_labels() {
        let src = "
.out outpos position
.proc main
    call sub
    mov outpos, v0
    end
.end
.proc sub
    mov r0, v0
.end
";
        let prog = shader_unit::asm::assemble_str(src).expect("assembles");
        let mut code = prog.program.clone();
        code.resize(4096, 0);
        let l = ShaderListing::from_memory(&code, &prog.opdescs, prog.entry_point);
        let text: Vec<&str> = l.lines.iter().map(|l| l.text.as_str()).collect();
        assert!(text.contains(&"main:"), "{text:?}");
        assert!(text.iter().any(|t| t.starts_with("proc_")), "{text:?}");
        assert!(text.iter().any(|t| t.contains("end")), "{text:?}");
        // Zero words after the program are not listed.
        assert!(l.pc_line.len() < 16);
        let entry_line = l.line_of(prog.entry_point as u16).expect("entry listed");
        assert!(l.lines[entry_line].text.contains("call"));
    }

    #[test]
    fn empty_memory_lists_a_note() {
        let l = ShaderListing::from_memory(&[0; 4096], &[0; 128], 0);
        // Entry 0 is listed even though its word is zero.
        assert_eq!(l.pc_line.len(), 1);
        assert!(l.lines.iter().any(|x| x.text == "main:"));
    }
}
