//! `--citra-swrast` beyond texture sampling (issue 16): the documented simplifications of
//! Citra's software renderer in the fixed-function stages, applied once per draw by
//! `gpu_core::draw::citra_swrast_stage_regs`. Citra SW's procedural texture ignores mip levels
//! and LOD (`pica-raster.md` §8.2 step 7, §13.3): a mipmap filter reads level 0 with its
//! nearest/linear colour-LUT filter, whatever the derivatives.

use gpu_core::draw::citra_swrast_stage_regs;
use gpu_core::lut::LookupTables;
use gpu_core::pixel::stages::FixedFunctionStages;

/// Registers with texture unit 3 (proctex) enabled and colour-LUT filter `filter`: LOD 0-7,
/// width 128, bias 1.0, level offsets 0, 0x80, 0xC0, 0xE0.
fn regs(filter: u32) -> [u32; 0x300] {
    let mut r = [0u32; 0x300];
    r[0x080] = 1 << 10 | 1 << 12;
    r[0x0AC] = filter | (7 << 7) | (128 << 11) | (0x3C << 19);
    r[0x0AD] = 0xE0C0_8000;
    r
}

/// Colour-LUT entry 0 (level 0 at map value 0) red, entry 0xC0 (level 2) green; the RGB map is
/// zero, so every fragment reads the first entry of its level.
fn luts() -> LookupTables {
    let mut t = LookupTables::default();
    t.proctex_color[0] = u32::from_le_bytes([255, 0, 0, 255]);
    t.proctex_color[0xC0] = u32::from_le_bytes([0, 255, 0, 255]);
    t
}

fn sample(regs: &[u32; 0x300], grad: [f32; 4]) -> [u8; 4] {
    let stages = FixedFunctionStages::for_draw(regs, &luts());
    stages
        .proctex
        .expect("proctex enabled")
        .sample(0.5, 0.25, grad)
}

#[test]
fn citra_swrast_proctex_reads_level_zero() {
    // du/dx = 1/32 → LOD 2 on hardware (Citra GL's formula).
    let lod2 = [1.0 / 32.0, 0.0, 0.0, 0.0];
    for (filter, base) in [(2, 0), (3, 1), (4, 0), (5, 1)] {
        let hw = regs(filter);
        let citra = citra_swrast_stage_regs(&hw).expect("mip filters are rewritten");
        assert_eq!(citra[0x0AC] & 7, base, "filter {filter}");
        assert_eq!(citra[0x0AC] & !7, hw[0x0AC] & !7, "only the filter changes");
        assert_eq!(
            citra.iter().zip(&hw).filter(|(a, b)| a != b).count(),
            1,
            "no other register changes"
        );
        // Hardware: level 2 (green) for the mip-nearest filters; Citra SW: level 0 (red).
        if filter == 2 || filter == 3 {
            assert_eq!(sample(&hw, lod2), [0, 255, 0, 255], "filter {filter}");
        }
        assert_eq!(sample(&citra, lod2), [255, 0, 0, 255], "filter {filter}");
        assert_eq!(sample(&citra, lod2), sample(&regs(base), lod2));
    }
    // Filters without mip levels (and invalid ones) are left alone.
    for filter in [0, 1, 6, 7] {
        assert!(citra_swrast_stage_regs(&regs(filter)).is_none());
    }
}
