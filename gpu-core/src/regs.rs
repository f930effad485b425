//! The register map shared by the stages: sizes and MMIO addresses of the three register files
//! (PICA internal, external GPU block, LCD block) and the ids of the PICA registers with side
//! effects (3dbrew GPUREG_* names).
//!
//! A leaf module: it holds constants only, so that the command processor ([`crate::command`]),
//! the draw pipeline ([`crate::draw`]) and the replayer ([`crate::replay`]) name registers the
//! same way without depending on each other.

/// Number of PICA internal registers.
pub const PICA_REG_COUNT: usize = 0x300;
/// Number of words in the external GPU register block (PA 0x10400000..0x10404000).
pub const EXT_REG_COUNT: usize = 0x1000;
/// Number of words in the LCD register block (PA 0x10202000..0x10203000).
pub const LCD_REG_COUNT: usize = 0x400;
/// Physical address of the external GPU register block.
pub const EXT_REG_BASE: u32 = 0x1040_0000;
/// Physical address of the LCD register block.
pub const LCD_REG_BASE: u32 = 0x1020_2000;
/// Physical address of the PICA internal register MMIO window (PA 0x10401000 + 4·id).
pub const PICA_MMIO_BASE: u32 = 0x1040_1000;

/// Register ids with side effects (3dbrew GPUREG_* names).
#[allow(missing_docs)]
pub mod reg {
    pub const FINALIZE: u32 = 0x010;
    pub const PROCTEX_LUT: u32 = 0x0AF;
    pub const PROCTEX_LUT_DATA0: u32 = 0x0B0;
    pub const PROCTEX_LUT_DATA7: u32 = 0x0B7;
    pub const FOG_LUT_INDEX: u32 = 0x0E6;
    pub const FOG_LUT_DATA0: u32 = 0x0E8;
    pub const FOG_LUT_DATA7: u32 = 0x0EF;
    pub const LIGHTING_LUT_INDEX: u32 = 0x1C5;
    pub const LIGHTING_LUT_DATA0: u32 = 0x1C8;
    pub const LIGHTING_LUT_DATA7: u32 = 0x1CF;
    pub const DRAWARRAYS: u32 = 0x22E;
    pub const DRAWELEMENTS: u32 = 0x22F;
    pub const VTX_FUNC: u32 = 0x231;
    pub const FIXEDATTRIB_INDEX: u32 = 0x232;
    pub const FIXEDATTRIB_DATA0: u32 = 0x233;
    pub const FIXEDATTRIB_DATA2: u32 = 0x235;
    pub const CMDBUF_SIZE0: u32 = 0x238;
    pub const CMDBUF_ADDR0: u32 = 0x23A;
    pub const CMDBUF_JUMP0: u32 = 0x23C;
    pub const CMDBUF_JUMP1: u32 = 0x23D;
    pub const VSH_NUM_ATTR: u32 = 0x242;
    pub const VSH_COM_MODE: u32 = 0x244;
    pub const PRIMITIVE_CONFIG: u32 = 0x25E;
    pub const RESTART_PRIMITIVE: u32 = 0x25F;
    /// Base of the geometry-shader unit's block.
    pub const GSH_BASE: u32 = 0x280;
    /// Base of the vertex-shader unit's block.
    pub const VSH_BASE: u32 = 0x2B0;
    // Offsets within a shader unit block.
    pub const SH_BOOLUNIFORM: u32 = 0x00;
    pub const SH_INTUNIFORM_I0: u32 = 0x01;
    pub const SH_INPUTBUFFER_CONFIG: u32 = 0x09;
    pub const SH_ENTRYPOINT: u32 = 0x0A;
    pub const SH_ATTRIBUTES_PERMUTATION_LOW: u32 = 0x0B;
    pub const SH_ATTRIBUTES_PERMUTATION_HIGH: u32 = 0x0C;
    pub const SH_OUTMAP_MASK: u32 = 0x0D;
    pub const SH_CODETRANSFER_END: u32 = 0x0F;
    pub const SH_FLOATUNIFORM_INDEX: u32 = 0x10;
    pub const SH_FLOATUNIFORM_DATA0: u32 = 0x11;
    pub const SH_FLOATUNIFORM_DATA7: u32 = 0x18;
    pub const SH_CODETRANSFER_INDEX: u32 = 0x1B;
    pub const SH_CODETRANSFER_DATA0: u32 = 0x1C;
    pub const SH_CODETRANSFER_DATA7: u32 = 0x23;
    pub const SH_OPDESCS_INDEX: u32 = 0x25;
    pub const SH_OPDESCS_DATA0: u32 = 0x26;
    pub const SH_OPDESCS_DATA7: u32 = 0x2D;
}
