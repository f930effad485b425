//! Hardware fact TE-4 (testdata/hw-facts.md §5): Dot3_RGB checked against every entry of the
//! table Lectem measured on a real 3DS (`tests/fixtures/hw/dot3_rgb.tsv`, 11 patterns × 256
//! inputs; provenance in `tests/fixtures/hw/PROVENANCE.md`).
//!
//! Every entry goes through the combiner as the console ran it: TEV stage 0 with operation 6,
//! source 0 = the constant colour, source 1 = texture 0, decoded from the register file by
//! `TevConfig::from_regs` and evaluated by `TevConfig::combine`; the R byte of the result is
//! compared (the test program read R).
//!
//! The model (`gpu_core::tev::dot3`: one's-complement sign and magnitude per channel, products
//! rounded to nearest over 255, complemented when the signs differ) reproduces every entry, so
//! the test requires all 2,816 to match.

use gpu_core::tev::{TevConfig, TevInputs};

const FIXTURE: &str = include_str!("../fixtures/hw/dot3_rgb.tsv");

/// The two sources of pattern `p` for input `x`: (constant colour, texture 0 colour).
fn pattern(p: usize, x: u8) -> ([u8; 3], [u8; 3]) {
    match p {
        0 => ([x, x, x], [x, x, x]),
        1 | 9 => ([0x80; 3], [x, x, x]),
        2 | 6 => ([0x80; 3], [x, 0x80, 0x80]),
        3 => ([0x83, 0x80, 0x80], [x, 0x7F, 0x80]),
        4 => ([0x83, 0x80, 0x80], [x, 0x80, 0x80]),
        5 => ([0x80; 3], [x, 0x7F, 0x80]),
        7 => ([0x80; 3], [x, x, 0x80]),
        8 => ([0x80, 0x7F, 0x80], [x, x, 0x80]),
        _ => ([0x80, 0x7F, 0x80], [x, x, x]),
    }
}

/// The measured table: `table[p][x]`.
fn table() -> Vec<[u8; 256]> {
    let mut t = vec![[0u8; 256]; 11];
    let mut rows = 0;
    for line in FIXTURE.lines() {
        if line.starts_with('#') || line.starts_with('x') || line.is_empty() {
            continue;
        }
        let cells: Vec<u8> = line
            .split('\t')
            .map(|c| u8::from_str_radix(c, 16).expect("hex cell"))
            .collect();
        assert_eq!(cells.len(), 12, "row {line:?}");
        let x = usize::from(cells[0]);
        assert_eq!(x, rows, "rows are in input order");
        for p in 0..11 {
            t[p][x] = cells[p + 1];
        }
        rows += 1;
    }
    assert_eq!(rows, 256);
    t
}

/// Stage 0: Dot3_RGB of (constant, texture 0), alpha Replace(constant).
fn dot3_via_tev(constant: [u8; 3], texel: [u8; 3]) -> u8 {
    let mut regs = [0u32; 0x300];
    regs[0x0C0] = 14 | (3 << 4) | (14 << 16); // RGB sources: constant, texture 0; alpha: constant
    regs[0x0C1] = 0; // operands: source colour / source alpha
    regs[0x0C2] = 6; // RGB op 6 = Dot3_RGB, alpha op 0 = Replace
    regs[0x0C3] = u32::from_le_bytes([constant[0], constant[1], constant[2], 0xFF]);
    regs[0x0C4] = 0; // scales 1x
    // Stages 1-5 pass the result through (source previous, replace); an all-zero stage would
    // replace it with the primary colour.
    for base in [0x0C8, 0x0D0, 0x0D8, 0x0F0, 0x0F8] {
        regs[base] = 15 | (15 << 16);
    }
    let cfg = TevConfig::from_regs(&regs);
    let inputs = TevInputs {
        texture: [[texel[0], texel[1], texel[2], 0xFF], [0; 4], [0; 4], [0; 4]],
        ..TevInputs::default()
    };
    cfg.combine(&inputs)[0]
}

#[test]
fn hw_te4_dot3_rgb_against_the_whole_measured_table() {
    let t = table();
    let mut exact = 0;
    let mut wrong = Vec::new();
    for (p, hw) in t.iter().enumerate() {
        for x in 0..=255u8 {
            let (c, tex) = pattern(p, x);
            let got = dot3_via_tev(c, tex);
            let want = hw[usize::from(x)];
            if got == want {
                exact += 1;
            } else {
                wrong.push(format!(
                    "P{p} x={x:#04x}: hardware {want:#04x}, model {got:#04x}"
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of 2816 entries differ:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    assert_eq!(exact, 2816);
}

#[test]
fn hw_te4_dot3_rgb_sample_values_from_the_fact_sheet() {
    // testdata/hw-facts.md TE-4 sample row: src0 = src1 = (x, x, x), as (x, hardware).
    // The curve is not symmetric about 0x80 (0x40 gives 0xBA, 0xC0 gives 0xC3): below 0x80 the
    // magnitude is 254 − 2x (one's complement), not 255 − 2x.
    let t = table();
    for (x, hw) in [
        (0x00u8, 0xFFu8),
        (0x35, 0xFF),
        (0x36, 0xFC),
        (0x40, 0xBA),
        (0x60, 0x2D),
        (0x70, 0x0C),
        (0x7F, 0x00),
        (0x80, 0x00),
        (0x90, 0x0C),
        (0xA0, 0x33),
        (0xB0, 0x6F),
        (0xC0, 0xC3),
        (0xD0, 0xFF),
    ] {
        assert_eq!(t[0][usize::from(x)], hw, "fixture row {x:#04x}");
        assert_eq!(
            dot3_via_tev([x; 3], [x; 3]),
            hw,
            "(x,x,x)·(x,x,x) at {x:#04x}"
        );
    }
    // (0x80, 0x80, 0x80)·(x, x, x): 0 up to 0xBF, 3 from 0xC0 — 0x80 is a tiny positive value.
    for x in 0..=255u8 {
        let want = if x >= 0xC0 { 3 } else { 0 };
        assert_eq!(t[1][usize::from(x)], want);
        assert_eq!(dot3_via_tev([0x80; 3], [x; 3]), want, "x = {x:#04x}");
    }
    // 0x80 · 0x7F is −1 (a negative zero complemented), not 0: P3 is P4 minus one.
    for x in 0x89..=0xFFu8 {
        assert_eq!(
            t[3][usize::from(x)] + 1,
            t[4][usize::from(x)],
            "x = {x:#04x}"
        );
        assert_eq!(
            dot3_via_tev([0x83, 0x80, 0x80], [x, 0x7F, 0x80]) + 1,
            dot3_via_tev([0x83, 0x80, 0x80], [x, 0x80, 0x80]),
            "x = {x:#04x}"
        );
    }
}
