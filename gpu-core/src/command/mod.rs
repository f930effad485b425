//! The command processor: where register writes come in and take effect (`pica-core.md` §1,
//! §2.5-§2.7, §9.2-§9.4; `pica-raster.md` §10, §11.4).
//!
//! Input: PICA register writes from command lists in physical memory, and 32-bit MMIO writes to
//! the external GPU and LCD register blocks (from a trace). Output: the register files, shader
//! memories, uniforms, fixed attributes and lookup tables ([`gpu::Gpu`]); draws, handed to
//! [`crate::draw`] as a borrowed [`crate::draw::DrawRequest`] whose [`crate::draw::DrawOutcome`]
//! is applied back here; memory fills and transfers run by [`crate::engines`]. Every step is
//! reported to the [`crate::debug::Observer`].
//!
//! Registers read: all of them as written; with side effects: the LUT, shader-upload and
//! fixed-attribute data ports, DRAWARRAYS / DRAWELEMENTS (0x22E/0x22F), the command-buffer jumps
//! (0x238-0x23D), PRIMITIVE_CONFIG / RESTART_PRIMITIVE (0x25E/0x25F), FINALIZE (0x010)
//! ([`crate::regs::reg`]); external: memory-fill controls, the transfer trigger and the
//! command-list registers ([`external`]).
//!
//! * [`gpu`]: [`gpu::Gpu`], the whole GPU state, and command-list execution.
//! * [`external`]: side effects of external register writes, returned as values (a
//!   [`external::CommandListKick`]) that [`gpu::Gpu`] applies.

pub mod external;
pub mod gpu;
