//! Miscellaneous registers 0x000-0x03F: FINALIZE and the P3D interrupt registers.
//!
//! Stage: command processor. Inputs: register words. Outputs: catalogue entries. Registers:
//! 0x000 IRQ_ACK, 0x010 FINALIZE, 0x020 IRQ_CMP, 0x030 IRQ_MASK, 0x034 IRQ_AUTOSTOP.
//!
//! [3DB] names only FINALIZE in this range; the interrupt registers and their names come from
//! [LC] (libctru `gpu/registers.h`). Their behaviour is not modelled by [C] or [P].

use super::FieldKind::*;

// UNVERIFIED: the interrupt registers' names and meanings come from [LC] only; [3DB] lists
// them as unnamed; alternative: treat them as unknown.
layout! {
    /// Layout of IRQ_ACK (0x000).
    irq_ack {
        VALUE: 0..=31, Hex, "value", "[LC] acknowledges the P3D interrupt; bit meaning undocumented (unsigned, hex). UNVERIFIED";
    }
}

layout! {
    /// Layout of FINALIZE (0x010).
    finalize {
        TRIGGER: 0..=31, Trigger, "trigger", "unsigned; any write raises the P3D interrupt and (hardware) ends the current command buffer; 0x12345678 is the conventional value";
    }
}

layout! {
    /// Layout of IRQ_CMP (0x020).
    irq_cmp {
        VALUE: 0..=31, Hex, "value", "[LC] the P3D interrupt fires when the value written to FINALIZE equals this (unsigned, hex). UNVERIFIED";
    }
}

layout! {
    /// Layout of IRQ_MASK (0x030).
    irq_mask {
        MASK: 0..=31, Hex, "mask", "[LC] interrupt mask, a 0 bit enables the corresponding interrupt (bit mask). UNVERIFIED";
    }
}

layout! {
    /// Layout of IRQ_AUTOSTOP (0x034).
    irq_autostop {
        ENABLE: 0..=0, Bool, "stop_on_irq", "[LC] 1 = stop command-list processing when the interrupt fires. UNVERIFIED: only bit 0 is described";
    }
}

registers! {
    block: Misc;
    /// [LC] P3D interrupt acknowledge (3dbrew: GPUREG_0000, no meaning given).
    0x000 IRQ_ACK => irq_ack;
    /// Finalizes a command list: raises the P3D interrupt; on hardware the rest of the current
    /// buffer is ignored ([3DB]); [C] continues to the end of the buffer (`pica-core.md` §1.5).
    0x010 FINALIZE => finalize;
    /// [LC] P3D interrupt compare value.
    0x020 IRQ_CMP => irq_cmp;
    /// [LC] interrupt mask.
    0x030 IRQ_MASK => irq_mask;
    /// [LC] stop command-list processing on interrupt.
    0x034 IRQ_AUTOSTOP => irq_autostop;
}

/// Every catalogue group of this module.
pub(crate) const GROUPS: &[&[super::RegDef]] = &[TABLE];
