//! Side effects of writes to the external GPU registers (`pica-raster.md` §10, `pica-core.md`
//! §9.2-§9.4): memory fills, display transfers / texture copies and command-list kicks.
//!
//! Input: the external register file after the write. Output: changes to [`PhysMem`] (through
//! [`crate::engines`]), completion bits in the external register file, and — for a command-list
//! kick — a [`CommandListKick`] value that the command processor ([`super::gpu::Gpu`]) runs;
//! this module never calls back into it. Everything is reported to the [`Observer`].
//! Registers read: PA 0x10400010-0x1040002C (memory fills), 0x10400C00-0x10400C28 (transfers),
//! 0x104018E0-0x104018F0 (command list).

use crate::debug::{Diagnostic, EngineEvent, Observer};
use crate::engines::{self, MemoryFillConfig, TransferRegs};
use crate::memory::PhysMem;
use crate::regs::EXT_REG_BASE;

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

/// What a write to an external register started, for the command processor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExternalEffect {
    /// A command list to run.
    pub kick: Option<CommandListKick>,
    /// Work the transfer engine did, for the work budget
    /// ([`crate::budget::BudgetResource::TransferPixels`]): pixels a display transfer read
    /// (output pixels times box-filter taps) or 4-byte units a texture copy moved; 0 when no
    /// transfer ran or it failed before moving anything.
    pub transfer_pixels: u64,
}

/// The transfer-engine work of a transfer that wrote something (see
/// [`ExternalEffect::transfer_pixels`]).
pub fn transfer_cost(regs: &TransferRegs) -> u64 {
    match regs.decode() {
        engines::Transfer::Display(c) => {
            let (w, h) = c.output_size();
            let taps = match c.scaling {
                engines::Scaling::Half2x1 => 2,
                engines::Scaling::Half2x2 => 4,
                engines::Scaling::None | engines::Scaling::Invalid => 1,
            };
            u64::from(w) * u64::from(h) * taps
        }
        engines::Transfer::TextureCopy(c) => u64::from(c.size & !15) / 4,
    }
}

/// A command list started by a write to the trigger register, for the command processor to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CommandListKick {
    /// Physical address of the list.
    pub addr: u32,
    /// Size in bytes.
    pub size: u32,
}

fn ext(regs: &[u32], pa: u32) -> u32 {
    regs.get(((pa - EXT_REG_BASE) / 4) as usize)
        .copied()
        .unwrap_or(0)
}

fn set_ext(regs: &mut [u32], pa: u32, value: u32) {
    if let Some(r) = regs.get_mut(((pa - EXT_REG_BASE) / 4) as usize) {
        *r = value;
    }
}

fn report<O: Observer>(obs: &mut O, diags: impl IntoIterator<Item = Diagnostic>) {
    for d in diags {
        obs.diagnostic(&d);
    }
}

/// Runs the side effect of a write of `value` to external register `pa` (already stored in
/// `ext_regs`, the external register file from PA 0x10400000). A command-list kick is returned
/// for the caller to run; after it finished, [`command_list_finished`] clears the trigger bit.
/// The work a transfer did is returned for the caller's work budget. A display transfer
/// converts with up to `threads` workers (the same bytes for any count) through `transfer`'s
/// buffers.
#[allow(clippy::too_many_arguments)]
pub fn external_side_effect<O: Observer>(
    ext_regs: &mut [u32],
    mem: &mut PhysMem,
    pa: u32,
    value: u32,
    cmdlist_size_in_bytes: bool,
    threads: usize,
    transfer: &mut engines::TransferScratch,
    obs: &mut O,
) -> ExternalEffect {
    let mut effect = ExternalEffect::default();
    match pa {
        MEMFILL0_CONTROL | MEMFILL1_CONTROL if value & 1 != 0 => {
            let unit = u8::from(pa == MEMFILL1_CONTROL);
            let base = pa - 0xC;
            let cfg = MemoryFillConfig::from_words(
                ext(ext_regs, base),
                ext(ext_regs, base + 4),
                ext(ext_regs, base + 8),
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
                value: ext(ext_regs, base + 8),
                written,
            });
            // Completion: start bit cleared, finished bit set ([3DB]).
            set_ext(ext_regs, pa, (value & !1) | 2);
        }
        TRANSFER_TRIGGER if value & 1 != 0 => {
            let regs = TransferRegs {
                input_addr: ext(ext_regs, 0x1040_0C00),
                output_addr: ext(ext_regs, 0x1040_0C04),
                output_dim: ext(ext_regs, 0x1040_0C08),
                input_dim: ext(ext_regs, 0x1040_0C0C),
                flags: ext(ext_regs, 0x1040_0C10),
                copy_size: ext(ext_regs, 0x1040_0C20),
                copy_input: ext(ext_regs, 0x1040_0C24),
                copy_output: ext(ext_regs, 0x1040_0C28),
            };
            let written = match engines::run_transfer_with(mem, &regs, threads, transfer) {
                Ok(outcome) if outcome.written.is_some() => {
                    effect.transfer_pixels = transfer_cost(&regs);
                    report(obs, outcome.diagnostics());
                    outcome.written
                }
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
            set_ext(ext_regs, pa, (value & !1) | 0x100);
        }
        CMDLIST_TRIGGER if value & 1 != 0 => {
            let raw_size = ext(ext_regs, CMDLIST_SIZE);
            // Traces recorded by Citra hold the size in bytes; hardware takes bytes >> 3
            // (pica-raster.md §10.5).
            let size = if cmdlist_size_in_bytes {
                raw_size
            } else {
                raw_size.wrapping_mul(8)
            };
            let addr = ext(ext_regs, CMDLIST_ADDR).wrapping_mul(8);
            effect.kick = Some(CommandListKick { addr, size });
        }
        _ => {}
    }
    effect
}

/// Marks a command-list submission as finished (trigger bit cleared in `ext_regs`, the external
/// register file): after a kick ran to its end, or for lists that were interrupted by time travel
/// and resumed later.
pub fn command_list_finished(ext_regs: &mut [u32]) {
    let v = ext(ext_regs, CMDLIST_TRIGGER);
    set_ext(ext_regs, CMDLIST_TRIGGER, v & !1);
}
