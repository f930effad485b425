//! Side effects of writes to the external GPU registers (`pica-raster.md` §10, `pica-core.md`
//! §9.2-§9.4): memory fills, display transfers / texture copies and command-list kicks.
//!
//! Input: the external register file in [`Gpu`] after the write. Output: changes to
//! [`PhysMem`] (through `engines`) and to the PICA state (through the command processor),
//! reported to the [`Observer`].

use crate::debug::{Diagnostic, EngineEvent, Observer};
use crate::engines::{self, MemoryFillConfig, TransferRegs};
use crate::gpu::{EXT_REG_BASE, Gpu};
use crate::memory::PhysMem;

/// PA of memory fill unit 0's control word; unit 1's is 0x10 further.
pub const MEMFILL0_CONTROL: u32 = 0x1040_001C;
/// PA of memory fill unit 1's control word.
pub const MEMFILL1_CONTROL: u32 = 0x1040_002C;
/// PA of the transfer engine's trigger word.
pub const TRANSFER_TRIGGER: u32 = 0x1040_0C18;
/// PA of the command-list size register.
pub const CMDLIST_SIZE: u32 = 0x1040_18E0;
/// PA of the command-list address register (PA >> 3).
pub const CMDLIST_ADDR: u32 = 0x1040_18E8;
/// PA of the command-list trigger register.
pub const CMDLIST_TRIGGER: u32 = 0x1040_18F0;

fn ext(gpu: &Gpu, pa: u32) -> u32 {
    gpu.ext_regs
        .get(((pa - EXT_REG_BASE) / 4) as usize)
        .copied()
        .unwrap_or(0)
}

fn set_ext(gpu: &mut Gpu, pa: u32, value: u32) {
    if let Some(r) = gpu.ext_regs.get_mut(((pa - EXT_REG_BASE) / 4) as usize) {
        *r = value;
    }
}

fn report<O: Observer>(obs: &mut O, diags: impl IntoIterator<Item = Diagnostic>) {
    for d in diags {
        obs.diagnostic(&d);
    }
}

/// Runs the side effect of a write of `value` to external register `pa` (already stored).
pub fn external_side_effect<O: Observer>(
    gpu: &mut Gpu,
    mem: &mut PhysMem,
    pa: u32,
    value: u32,
    cmdlist_size_in_bytes: bool,
    obs: &mut O,
) {
    match pa {
        MEMFILL0_CONTROL | MEMFILL1_CONTROL if value & 1 != 0 => {
            let unit = u8::from(pa == MEMFILL1_CONTROL);
            let base = pa - 0xC;
            let cfg = MemoryFillConfig::from_words(
                ext(gpu, base),
                ext(gpu, base + 4),
                ext(gpu, base + 8),
                value,
            );
            let written = match engines::memory_fill(mem, &cfg) {
                Ok(outcome) => {
                    report(obs, outcome.diagnostics());
                    outcome.written
                }
                Err(e) => {
                    report(obs, [e.to_diagnostic()]);
                    None
                }
            };
            obs.engine(&EngineEvent::MemoryFill {
                unit,
                start: cfg.start,
                end: cfg.end,
                value: ext(gpu, base + 8),
                written,
            });
            // Completion: start bit cleared, finished bit set ([3DB]).
            set_ext(gpu, pa, (value & !1) | 2);
        }
        TRANSFER_TRIGGER if value & 1 != 0 => {
            let regs = TransferRegs {
                input_addr: ext(gpu, 0x1040_0C00),
                output_addr: ext(gpu, 0x1040_0C04),
                output_dim: ext(gpu, 0x1040_0C08),
                input_dim: ext(gpu, 0x1040_0C0C),
                flags: ext(gpu, 0x1040_0C10),
                copy_size: ext(gpu, 0x1040_0C20),
                copy_input: ext(gpu, 0x1040_0C24),
                copy_output: ext(gpu, 0x1040_0C28),
            };
            let written = match engines::run_transfer(mem, &regs) {
                Ok(outcome) => {
                    report(obs, outcome.diagnostics());
                    outcome.written
                }
                Err(e) => {
                    report(obs, [e.to_diagnostic()]);
                    None
                }
            };
            obs.engine(&EngineEvent::Transfer {
                input: regs.input_addr.wrapping_mul(8),
                output: regs.output_addr.wrapping_mul(8),
                texture_copy: regs.flags & 8 != 0,
                written,
            });
            // Completion: bit 0 cleared, bit 8 set ([3DB]).
            set_ext(gpu, pa, (value & !1) | 0x100);
        }
        CMDLIST_TRIGGER if value & 1 != 0 => {
            let raw_size = ext(gpu, CMDLIST_SIZE);
            // Traces recorded by Citra hold the size in bytes; hardware takes bytes >> 3
            // (pica-raster.md §10.5).
            let size = if cmdlist_size_in_bytes {
                raw_size
            } else {
                raw_size.wrapping_mul(8)
            };
            let addr = ext(gpu, CMDLIST_ADDR).wrapping_mul(8);
            gpu.run_command_list(mem, addr, size, obs);
            if !gpu.list_in_progress() {
                set_ext(gpu, pa, value & !1);
            }
        }
        _ => {}
    }
}

/// Marks a command-list submission as finished (trigger bit cleared), for lists that were
/// interrupted by time travel and resumed later.
pub fn command_list_finished(gpu: &mut Gpu) {
    let v = ext(gpu, CMDLIST_TRIGGER);
    set_ext(gpu, CMDLIST_TRIGGER, v & !1);
}
