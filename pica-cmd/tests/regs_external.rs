//! External (MMIO) registers: names and decodes by physical address, the internal-register
//! window, unknown addresses.

use std::collections::HashSet;

use pica_cmd::regs::external::{
    self, Downscale, ExtUnit, ExternalColorFormat, FillWidth, FramebufferFormat, InterlaceMode,
    MemoryFillControl, TransferFlags,
};
use pica_cmd::regs::{RegSpace, RegView};

#[test]
fn table_is_consistent() {
    let mut pas = HashSet::new();
    let mut names = HashSet::new();
    for d in external::all() {
        assert_eq!(d.pa % 4, 0, "{} unaligned", d.name);
        assert!(pas.insert(d.pa), "duplicate PA {:#x}", d.pa);
        assert!(names.insert(d.name), "duplicate name {}", d.name);
        let in_gpu = (external::GPU_BASE..external::GPU_BASE + external::GPU_SIZE).contains(&d.pa);
        let in_lcd = (external::LCD_BASE..external::LCD_BASE + external::LCD_SIZE).contains(&d.pa);
        assert!(
            in_gpu || in_lcd,
            "{} outside the GPU and LCD blocks",
            d.name
        );
        assert_eq!(in_lcd, d.unit == ExtUnit::Lcd, "{}", d.name);
        let mut used = 0u32;
        for f in d.fields {
            assert!(f.lo <= f.hi && f.hi <= 31);
            assert!(!f.doc.is_empty());
            if !f.alias {
                assert_eq!(used & f.mask(), 0, "{}.{}", d.name, f.name);
                used |= f.mask();
            }
        }
        assert!(!d.doc.is_empty());
    }
}

#[test]
fn names_by_physical_address() {
    for (pa, want) in [
        (0x1040_0000, "HARDWARE_ID"),
        (0x1040_0010, "MEMFILL0_START"),
        (0x1040_001C, "MEMFILL0_CONTROL"),
        (0x1040_002C, "MEMFILL1_CONTROL"),
        (0x1040_0034, "GPU_BUSY"),
        (0x1040_0468, "PDC0_FB_A_FIRST"),
        (0x1040_0470, "PDC0_FB_FORMAT"),
        (0x1040_0478, "PDC0_FB_SELECT"),
        (0x1040_0490, "PDC0_FB_STRIDE"),
        (0x1040_0568, "PDC1_FB_A_FIRST"),
        (0x1040_055C, "PDC1_FB_SIZE"),
        (0x1040_0C00, "PPF_INPUT_ADDR"),
        (0x1040_0C10, "PPF_FLAGS"),
        (0x1040_0C18, "PPF_CONTROL"),
        (0x1040_0C24, "PPF_TEXCOPY_INPUT"),
        (0x1040_18E0, "P3D_CMDLIST_SIZE"),
        (0x1040_18E8, "P3D_CMDLIST_ADDR"),
        (0x1040_18F0, "P3D_CMDLIST_TRIGGER"),
        (0x1020_2204, "LCD_TOP_FILL"),
        (0x1020_2A04, "LCD_BOTTOM_FILL"),
    ] {
        assert_eq!(external::name(pa), Some(want), "{pa:#x}");
    }
    assert_eq!(external::name(0x1040_0FF0), None);
    assert_eq!(external::name(0x1040_0011), None);
    assert_eq!(external::name(0), None);
    assert_eq!(external::name(u32::MAX), None);
}

#[test]
fn internal_register_window() {
    assert_eq!(external::internal_id(0x1040_1000), Some(0x000));
    assert_eq!(external::internal_id(0x1040_1000 + 4 * 0x107), Some(0x107));
    assert_eq!(external::internal_id(0x1040_1BFC), Some(0x2FF));
    assert_eq!(external::internal_id(0x1040_1C00), None);
    assert_eq!(external::internal_id(0x1040_1001), None);
    assert_eq!(external::internal_id(0x1040_0FFC), None);
    assert_eq!(external::window_address(0x238), 0x1040_18E0);
    // The P3D registers are the window addresses of CMDBUF_SIZE0 / ADDR0 / JUMP0.
    assert_eq!(external::internal_id(0x1040_18E0), Some(0x238));
    assert_eq!(external::internal_id(0x1040_18F0), Some(0x23C));
    // Other window addresses are named after the internal register.
    assert_eq!(
        external::name(external::window_address(0x107)),
        Some("DEPTH_COLOR_MASK")
    );
    let d = external::describe(external::window_address(0x107), 0x1F41);
    assert_eq!(d.space, RegSpace::External);
    assert_eq!(d.id, 0x1040_141C);
    assert_eq!(d.internal_id, Some(0x107));
    assert_eq!(d.name, "DEPTH_COLOR_MASK");
    assert!(d.known);
    assert_eq!(d.fields[1].meaning, "LESS");
    let p3d = external::describe(0x1040_18E0, 0x1000);
    assert_eq!(p3d.name, "P3D_CMDLIST_SIZE");
    assert_eq!(p3d.internal_id, Some(0x238));
}

#[test]
fn decodes() {
    let fill = external::describe(0x1040_001C, 0x0000_0201);
    assert_eq!(fill.fields[0].meaning, "true");
    assert_eq!(fill.fields[2].meaning, "32_BIT");
    let c = MemoryFillControl::from_raw(0x0000_0101);
    assert_eq!(
        (c.start, c.width, c.value_bytes()),
        (true, FillWidth::Bits24, 3)
    );
    assert_eq!(MemoryFillControl::from_raw(0x300).value_bytes(), 3);
    assert_eq!(MemoryFillControl::from_raw(0).value_bytes(), 2);
    assert_eq!(
        external::describe(0x1040_0010, 0x0300_0000).fields[0].meaning,
        "0x18000000 (PA)"
    );
    // Display transfer flags: tiled -> linear RGBA8 -> RGB8 with 2x2 downscale.
    let flags = (1 << 12) | (2 << 24);
    let t = TransferFlags::from_raw(flags);
    assert!(!t.linear_to_tiled && !t.flip_v && !t.texture_copy);
    assert_eq!(t.input_format, ExternalColorFormat::Rgba8);
    assert_eq!(t.output_format, ExternalColorFormat::Rgb8);
    assert_eq!(t.downscale, Downscale::Box2x2);
    assert_eq!(
        ExternalColorFormat::from_raw(2),
        ExternalColorFormat::Rgb565
    );
    // LCD framebuffer format as nngxInitialize leaves it for the top screen (0x80340, [3DB])
    // with RGB8 selected: interlace A, scan doubling, DMA size 3 (undocumented).
    let f = FramebufferFormat::from_raw(0x0008_0341);
    assert_eq!(f.color_format, ExternalColorFormat::Rgb8);
    assert_eq!(f.interlace, InterlaceMode::A);
    assert!(f.scan_doubling);
    assert_eq!(f.dma_size, external::DmaSize::Unknown(3));
    let stereo = FramebufferFormat::from_raw(0x0000_0021);
    assert_eq!(stereo.interlace, InterlaceMode::AB);
    let fb = external::describe(0x1040_0468, 0x1830_0000);
    assert_eq!(fb.fields[0].meaning, "0x18300000 (PA)");
    let size = external::describe(0x1040_045C, 0x0190_00F0);
    assert_eq!(size.fields[0].meaning, "240");
    assert_eq!(size.fields[1].meaning, "400");
    let lcd = external::describe(0x1020_2204, 0x0100_00FF);
    assert_eq!(lcd.fields[0].meaning, "rgb(255, 0, 0)");
    assert_eq!(lcd.fields[1].meaning, "true");
    let tc = external::describe(0x1040_0C24, (2 << 16) | 4);
    assert_eq!(tc.fields[0].meaning, "64 bytes");
    assert_eq!(tc.fields[1].meaning, "32 bytes");
}

#[test]
fn unknown_addresses() {
    let d = external::describe(0x1040_0FF0, 5);
    assert!(!d.known);
    assert_eq!(d.name, "unknown MMIO register 0x10400FF0");
    assert_eq!(d.fields[0].meaning, "0x00000005");
    assert_eq!(
        d.one_line(),
        "0x10400FF0 unknown MMIO register 0x10400FF0 = 0x00000005"
    );
    for pa in (0x1040_0000u32..0x1040_4000)
        .step_by(4)
        .chain([0, 3, u32::MAX])
    {
        let _ = external::describe(pa, pa);
    }
    let json = serde_json::to_value(external::describe(0x1040_0C10, 0)).expect("json");
    assert_eq!(json["space"], "External");
    assert_eq!(json["id"], 0x1040_0C10u32);
    assert!(json.get("block").is_none());
}
