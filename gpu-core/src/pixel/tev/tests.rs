// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
use super::*;

/// A configuration whose stage 0 computes `op` on (primary, texture 0, texture 1) with plain
/// RGB / alpha operands, and stages 1-5 pass through.
fn one_stage(op: TevOp) -> TevConfig {
    let mut stages = [TevStage::PASS_THROUGH; 6];
    stages[0] = TevStage {
        rgb_source: [
            TevSource::PrimaryColor,
            TevSource::Texture0,
            TevSource::Texture1,
        ],
        alpha_source: [
            TevSource::PrimaryColor,
            TevSource::Texture0,
            TevSource::Texture1,
        ],
        rgb_operand: [ColorOperand::Rgb; 3],
        alpha_operand: [AlphaOperand::Alpha; 3],
        rgb_op: op,
        alpha_op: op,
        ..TevStage::PASS_THROUGH
    };
    TevConfig {
        stages,
        buffer_color: [0; 4],
        update_rgb: 0,
        update_alpha: 0,
    }
}

fn inputs(a: Rgba, b: Rgba, c: Rgba) -> TevInputs {
    TevInputs {
        primary: a,
        texture: [b, c, [0; 4], [0; 4]],
        ..Default::default()
    }
}

fn run(op: TevOp, a: Rgba, b: Rgba, c: Rgba) -> Rgba {
    one_stage(op).combine(&inputs(a, b, c))
}

#[test]
fn replace() {
    assert_eq!(
        run(TevOp::Replace, [10, 200, 255, 77], [1; 4], [2; 4]),
        [10, 200, 255, 77]
    );
}

#[test]
fn modulate_truncates() {
    // 255·255/255 = 255; 128·128/255 = 64.25 → 64; 100·3/255 = 1.18 → 1; 200·100/255 = 78.4 → 78.
    assert_eq!(
        run(
            TevOp::Modulate,
            [255, 128, 100, 200],
            [255, 128, 3, 100],
            [0; 4]
        ),
        [255, 64, 1, 78]
    );
}

#[test]
fn add_saturates() {
    assert_eq!(
        run(TevOp::Add, [200, 100, 0, 250], [100, 100, 0, 10], [0; 4]),
        [255, 200, 0, 255]
    );
}

#[test]
fn add_signed_clamps_both_ways() {
    // 200 + 100 − 128 = 172; 10 + 20 − 128 < 0 → 0; 255 + 255 − 128 = 382 → 255; 128 + 0 − 128 = 0.
    assert_eq!(
        run(
            TevOp::AddSigned,
            [200, 10, 255, 128],
            [100, 20, 255, 0],
            [0; 4]
        ),
        [172, 0, 255, 0]
    );
}

#[test]
fn lerp() {
    // (a·c + b·(255 − c)) / 255: (200·55 + 100·200)/255 = 121.6 → 121; c = 255 → a; c = 0 → b.
    assert_eq!(
        run(
            TevOp::Lerp,
            [200, 200, 200, 90],
            [100, 100, 100, 30],
            [55, 255, 0, 128]
        ),
        [121, 200, 100, 60]
    );
    // alpha: (90·128 + 30·127)/255 = (11520 + 3810)/255 = 60.1 → 60.
}

#[test]
fn subtract_floors_at_zero() {
    assert_eq!(
        run(TevOp::Subtract, [100, 200, 5, 0], [200, 100, 5, 1], [0; 4]),
        [0, 100, 0, 0]
    );
}

#[test]
fn multiply_add_and_add_multiply() {
    // (100·200 + 255·50)/255 = 128.4 → 128; (255·255 + 255·10)/255 = 265 → 255.
    assert_eq!(
        run(
            TevOp::MultiplyAdd,
            [100, 255, 0, 100],
            [200, 255, 0, 200],
            [50, 10, 7, 50]
        ),
        [128, 255, 7, 128]
    );
    // min(a + b, 255)·c/255: (100 + 200 → 255)·100/255 = 100; (50 + 60)·128/255 = 55.2 → 55.
    assert_eq!(
        run(
            TevOp::AddMultiply,
            [100, 50, 0, 255],
            [200, 60, 0, 0],
            [100, 128, 255, 255]
        ),
        [100, 55, 0, 255]
    );
}

#[test]
fn dot3_rgb_exact_values() {
    // Each term: one's-complement sign and magnitude (|2x − 255|, or 254 − 2x below 0x80), the
    // magnitudes' product rounded over 255, complemented (−r − 1) when the signs differ (TE-4).
    assert_eq!(dot3([255; 3], [255; 3]), 255); // 3 · 255 = 765 → 255
    assert_eq!(dot3([128; 3], [255; 3]), 3); // 1·255/255 = 1 each
    assert_eq!(dot3([0; 3], [255; 3]), 0); // 254·255/255 = 254 → −255 each → 0
    // 0x80 is +1 and 0x7F a negative zero: their product is !0 = −1.
    assert_eq!(dot3([0x83, 128, 128], [0x89, 127, 128]), 0); // 7·19/255 = 0.52 → 1, −1, 0
    assert_eq!(dot3([0x83, 128, 128], [0x89, 128, 128]), 1);
    // Negative magnitudes are one lower: (0x40,..)² = 126²/255 = 62.3 → 62 each, while
    // (0xBF,..)² = 127²/255 = 63.3 → 63 each (measured 0xBA and 0xBD).
    assert_eq!(dot3([0x40; 3], [0x40; 3]), 186);
    assert_eq!(dot3([0xBF; 3], [0xBF; 3]), 189);
    // (192,128,64)·(160,96,64): 129·65/255 = 32.9 → 33; +1 · (96: −63, magnitude 62) gives
    // 62/255 → 0, complemented to −1; 126²/255 = 62.3 → 62: 33 − 1 + 62 = 94.
    assert_eq!(dot3([192, 128, 64], [160, 96, 64]), 94);
    // A negative term: 126·65/255 = 32.1 → 32, complemented to −33: 33 − 33 + 0 = 0.
    assert_eq!(dot3([192, 64, 128], [160, 160, 128]), 0);
    assert_eq!(dot3([192, 64, 255], [160, 160, 129]), 3); // 33 − 33 + 255·3/255
    // Through the combiner: replicated to RGB; alpha comes from the alpha combiner (Dot3_RGB
    // in the alpha op gives 0 here, see the next test); with Replace as alpha op it is a.a.
    let mut cfg = one_stage(TevOp::Dot3Rgb);
    cfg.stages[0].alpha_op = TevOp::Replace;
    let out = cfg.combine(&inputs([192, 128, 64, 7], [160, 96, 64, 9], [0; 4]));
    assert_eq!(out, [94, 94, 94, 7]);
}

#[test]
fn dot3_rgba_writes_alpha_and_skips_alpha_combiner() {
    let mut cfg = one_stage(TevOp::Dot3Rgba);
    cfg.stages[0].alpha_op = TevOp::Replace; // ignored
    let out = cfg.combine(&inputs([192, 128, 64, 7], [160, 96, 64, 9], [0; 4]));
    assert_eq!(out, [94, 94, 94, 94]);
    // The alpha scale still applies to the DOT3 alpha.
    cfg.stages[0].alpha_scale = 2;
    let out = cfg.combine(&inputs([192, 128, 64, 7], [160, 96, 64, 9], [0; 4]));
    assert_eq!(out, [94, 94, 94, 188]);
    // DOT3 as the alpha operation alone: 0 (reported).
    let mut cfg = one_stage(TevOp::Replace);
    cfg.stages[0].alpha_op = TevOp::Dot3Rgb;
    assert_eq!(cfg.combine(&inputs([1, 2, 3, 4], [0; 4], [0; 4]))[3], 0);
    assert!(cfg.issues().contains(&TevIssue::Dot3AlphaOp { stage: 0 }));
}

#[test]
fn unknown_operation_gives_zero() {
    assert_eq!(run(TevOp::Unknown(12), [9; 4], [9; 4], [9; 4]), [0; 4]);
    assert!(
        one_stage(TevOp::Unknown(12))
            .issues()
            .contains(&TevIssue::UnknownOp {
                stage: 0,
                value: 12
            })
    );
}

#[test]
fn scales_saturate() {
    let mut cfg = one_stage(TevOp::Replace);
    cfg.stages[0].rgb_scale = 2;
    cfg.stages[0].alpha_scale = 4;
    assert_eq!(
        cfg.combine(&inputs([100, 127, 128, 63], [0; 4], [0; 4])),
        [200, 254, 255, 252]
    );
    cfg.stages[0].alpha_scale = 4;
    assert_eq!(cfg.combine(&inputs([0, 0, 0, 64], [0; 4], [0; 4]))[3], 255);
    assert_eq!(scale_from_bits(0), 1);
    assert_eq!(scale_from_bits(1), 2);
    assert_eq!(scale_from_bits(2), 4);
    assert_eq!(scale_from_bits(3), 1);
}

#[test]
fn every_rgb_operand() {
    let c = [10, 20, 30, 40];
    let cases: [(u32, [u8; 3]); 10] = [
        (0, [10, 20, 30]),
        (1, [245, 235, 225]),
        (2, [40, 40, 40]),
        (3, [215, 215, 215]),
        (4, [10, 10, 10]),
        (5, [245, 245, 245]),
        (8, [20, 20, 20]),
        (9, [235, 235, 235]),
        (12, [30, 30, 30]),
        (13, [225, 225, 225]),
    ];
    for (bits, want) in cases {
        let mut cfg = one_stage(TevOp::Replace);
        cfg.stages[0].rgb_operand[0] = ColorOperand::from_bits(bits);
        let out = cfg.combine(&inputs(c, [0; 4], [0; 4]));
        assert_eq!(out[..3], want, "operand {bits}");
    }
    for bits in [6, 7, 10, 11, 14, 15] {
        let op = ColorOperand::from_bits(bits);
        assert_eq!(op, ColorOperand::Unknown(bits as u8));
        let mut cfg = one_stage(TevOp::Replace);
        cfg.stages[0].rgb_operand[0] = op;
        assert_eq!(cfg.combine(&inputs(c, [0; 4], [0; 4]))[..3], [0, 0, 0]);
        assert!(cfg.issues().contains(&TevIssue::UnknownOperand {
            stage: 0,
            value: bits as u8
        }));
    }
}

#[test]
fn every_alpha_operand() {
    let c = [10, 20, 30, 40];
    let want = [40, 215, 10, 245, 20, 235, 30, 225];
    for (bits, w) in want.iter().enumerate() {
        let mut cfg = one_stage(TevOp::Replace);
        cfg.stages[0].alpha_operand[0] = AlphaOperand::from_bits(bits as u32);
        assert_eq!(
            cfg.combine(&inputs(c, [0; 4], [0; 4]))[3],
            *w,
            "alpha operand {bits}"
        );
    }
}

#[test]
fn every_source() {
    let inp = TevInputs {
        primary: [1, 1, 1, 1],
        fragment_primary: [2, 2, 2, 2],
        fragment_secondary: [3, 3, 3, 3],
        texture: [[4; 4], [5; 4], [6; 4], [7; 4]],
    };
    let cases = [
        (0u32, 1u8),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (5, 6),
        (6, 7),
        (14, 9),
    ];
    for (bits, want) in cases {
        let mut cfg = one_stage(TevOp::Replace);
        cfg.stages[0].rgb_source[0] = TevSource::from_bits(bits);
        cfg.stages[0].alpha_source[0] = TevSource::from_bits(bits);
        cfg.stages[0].constant = [9; 4];
        assert_eq!(cfg.combine(&inp), [want; 4], "source {bits}");
    }
    for bits in 7..=12u32 {
        let mut cfg = one_stage(TevOp::Replace);
        cfg.stages[0].rgb_source[0] = TevSource::from_bits(bits);
        cfg.stages[0].alpha_source[0] = TevSource::from_bits(bits);
        assert_eq!(cfg.combine(&inp), [0; 4], "unknown source {bits}");
        assert!(cfg.issues().contains(&TevIssue::UnknownSource {
            stage: 0,
            value: bits as u8
        }));
    }
}

#[test]
fn previous_chains_stages_and_is_the_primary_colour_in_stage_zero() {
    // Stage 0 reads Previous: the primary colour (hardware fact TE-1; default inputs: 0).
    let mut cfg = one_stage(TevOp::Add);
    cfg.stages[0].rgb_source = [
        TevSource::Previous,
        TevSource::Constant,
        TevSource::Constant,
    ];
    cfg.stages[0].alpha_source = cfg.stages[0].rgb_source;
    cfg.stages[0].constant = [5, 6, 7, 8];
    assert_eq!(cfg.combine(&TevInputs::default()), [5, 6, 7, 8]);
    let primary = TevInputs {
        primary: [1, 2, 3, 4],
        ..TevInputs::default()
    };
    assert_eq!(cfg.combine(&primary), [6, 8, 10, 12]);
    // Stage 1 adds its constant to stage 0's output.
    cfg.stages[1] = cfg.stages[0];
    cfg.stages[1].constant = [10, 10, 10, 10];
    assert_eq!(cfg.combine(&TevInputs::default()), [15, 16, 17, 18]);
}

/// Stage `i` outputs constant `k_i`; stage `reader` replaces with the previous buffer.
fn buffer_cfg(reader: usize, update_rgb: u8, update_alpha: u8) -> TevConfig {
    let mut stages = [TevStage::PASS_THROUGH; 6];
    for (i, s) in stages.iter_mut().enumerate() {
        let src = if i == reader {
            TevSource::PreviousBuffer
        } else {
            TevSource::Constant
        };
        *s = TevStage {
            rgb_source: [src; 3],
            alpha_source: [src; 3],
            constant: [
                10 * i as u8 + 1,
                10 * i as u8 + 2,
                10 * i as u8 + 3,
                10 * i as u8 + 4,
            ],
            ..TevStage::PASS_THROUGH
        };
    }
    // Stages after the reader pass its output through.
    for s in stages.iter_mut().skip(reader + 1) {
        *s = TevStage::PASS_THROUGH;
    }
    TevConfig {
        stages,
        buffer_color: [200, 201, 202, 203],
        update_rgb,
        update_alpha,
    }
}

#[test]
fn combiner_buffer_lags_one_stage() {
    let inp = TevInputs::default();
    // Stage 0 reads zero.
    assert_eq!(buffer_cfg(0, 0xF, 0xF).combine(&inp), [0; 4]);
    // Stage 1 reads the register colour even if stage 0 updates the buffer.
    assert_eq!(buffer_cfg(1, 0xF, 0xF).combine(&inp), [200, 201, 202, 203]);
    // Stage 2 reads stage 0's output when stage 0 updates the buffer...
    assert_eq!(buffer_cfg(2, 0x1, 0x1).combine(&inp), [1, 2, 3, 4]);
    // ...and the register colour when it does not (stage 1's update is not visible yet).
    assert_eq!(buffer_cfg(2, 0x2, 0x2).combine(&inp), [200, 201, 202, 203]);
    // RGB and alpha update separately.
    assert_eq!(buffer_cfg(2, 0x1, 0x0).combine(&inp), [1, 2, 3, 203]);
    assert_eq!(buffer_cfg(2, 0x0, 0x1).combine(&inp), [200, 201, 202, 4]);
    // Stage 4 sees updates of stages ≤ 2, stage 5 of stages ≤ 3.
    assert_eq!(buffer_cfg(4, 0xF, 0xF).combine(&inp), [21, 22, 23, 24]);
    assert_eq!(buffer_cfg(5, 0xF, 0xF).combine(&inp), [31, 32, 33, 34]);
    // Stage 4 can never update it: stage 5 still sees stage 3 when bits 4+ would be set.
    assert_eq!(buffer_cfg(5, 0x8, 0x8).combine(&inp), [31, 32, 33, 34]);
}

#[test]
fn decode_from_registers() {
    let mut r = Box::new([0u32; 0x300]);
    // Stage 2 at 0x0D0: sources rgb (3, 14, 15), alpha (0, 13, 5); operands rgb (1, 4, 13),
    // alpha (7, 2, 0); ops rgb 8, alpha 4; colour; scales ×2 / ×4.
    r[0x0D0] = 3 | (14 << 4) | (15 << 8) | (13 << 20) | (5 << 24);
    r[0x0D1] = 1 | (4 << 4) | (13 << 8) | (7 << 12) | (2 << 16);
    r[0x0D2] = 8 | (4 << 16);
    r[0x0D3] = 0x4433_2211;
    r[0x0D4] = 1 | (2 << 16);
    r[0x0E0] = (0b1010 << 8) | (0b0101 << 12) | 5;
    r[0x0FD] = 0xDDCC_BBAA;
    let cfg = TevConfig::from_regs(&r);
    let s = cfg.stages[2];
    assert_eq!(
        s.rgb_source,
        [
            TevSource::Texture0,
            TevSource::Constant,
            TevSource::Previous
        ]
    );
    assert_eq!(
        s.alpha_source,
        [
            TevSource::PrimaryColor,
            TevSource::PreviousBuffer,
            TevSource::Texture2
        ]
    );
    assert_eq!(
        s.rgb_operand,
        [
            ColorOperand::OneMinusRgb,
            ColorOperand::Red,
            ColorOperand::OneMinusBlue
        ]
    );
    assert_eq!(
        s.alpha_operand,
        [
            AlphaOperand::OneMinusBlue,
            AlphaOperand::Red,
            AlphaOperand::Alpha
        ]
    );
    assert_eq!((s.rgb_op, s.alpha_op), (TevOp::MultiplyAdd, TevOp::Lerp));
    assert_eq!(s.constant, [0x11, 0x22, 0x33, 0x44]);
    assert_eq!((s.rgb_scale, s.alpha_scale), (2, 4));
    assert_eq!((cfg.update_rgb, cfg.update_alpha), (0b1010, 0b0101));
    assert_eq!(cfg.buffer_color, [0xAA, 0xBB, 0xCC, 0xDD]);
    // A zeroed register file: every stage replaces with the primary colour.
    let z = TevConfig::from_regs(&Box::new([0u32; 0x300]));
    assert_eq!(
        z.combine(&inputs([1, 2, 3, 4], [0; 4], [0; 4])),
        [1, 2, 3, 4]
    );
    // Stage bases.
    r[0x0F8] = 14 | (14 << 16);
    r[0x0FB] = 0x0102_0304;
    assert_eq!(TevConfig::from_regs(&r).stages[5].constant, [4, 3, 2, 1]);
}

#[test]
fn reads_only_counts_used_inputs() {
    let cfg = one_stage(TevOp::Replace);
    assert!(cfg.reads(TevSource::PrimaryColor));
    // Replace uses only input 0: texture 0 in slot 1 is not read.
    assert!(!cfg.reads(TevSource::Texture0));
    let cfg = one_stage(TevOp::Lerp);
    assert!(cfg.reads(TevSource::Texture1));
    assert!(!cfg.reads(TevSource::FragmentPrimary));
    assert!(TevStage::PASS_THROUGH.is_pass_through());
    assert!(!cfg.stages[0].is_pass_through());
}

#[test]
fn reserved_scale_is_reported() {
    let mut r = Box::new([0u32; 0x300]);
    r[0x0C4] = 3;
    let cfg = TevConfig::from_regs(&r);
    assert_eq!(cfg.stages[0].rgb_scale, 1);
    assert!(cfg.issues().contains(&TevIssue::ReservedScale { stage: 0 }));
}

#[test]
fn compiled_program_matches_reference() {
    // Random configurations over every source, operand, operation and scale value, random
    // update bits, buffer colour and inputs: the compiled program must equal the reference.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for case in 0..20_000 {
        let mut r = Box::new([0u32; 0x300]);
        for base in TEV_STAGE_BASE {
            for k in 0..5 {
                r[base + k] = next() as u32;
            }
            // Make pass-through stages common.
            if next() % 3 == 0 {
                r[base] = 0x000F_000F;
                r[base + 1] = 0;
                r[base + 2] = 0;
                r[base + 4] = 0;
            }
        }
        r[0x0E0] = next() as u32;
        r[0x0FD] = next() as u32;
        let cfg = TevConfig::from_regs(&r);
        let prog = TevProgram::new(&cfg);
        let b = |v: u64| v.to_le_bytes()[..4].try_into().unwrap_or([0; 4]);
        let inp = TevInputs {
            primary: b(next()),
            fragment_primary: b(next()),
            fragment_secondary: b(next()),
            texture: [b(next()), b(next()), b(next()), b(next())],
        };
        assert_eq!(prog.run(&inp), cfg.combine(&inp), "case {case}: {cfg:?}");
    }
}

#[test]
fn specialised_stage_shapes_match_reference() {
    // Replace / modulate / add with plain operands over every pair of sources (the shapes the
    // compiled program evaluates without operand selection), in stage 0 and stage 2, against
    // the reference on random inputs; and near misses (one operand or scale changed) that must
    // fall back to the generic evaluation.
    let sources = [
        TevSource::PrimaryColor,
        TevSource::FragmentPrimary,
        TevSource::FragmentSecondary,
        TevSource::Texture0,
        TevSource::Texture1,
        TevSource::Texture2,
        TevSource::Texture3,
        TevSource::Unknown(9),
        TevSource::PreviousBuffer,
        TevSource::Constant,
        TevSource::Previous,
    ];
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let b = |v: u64| -> Rgba { v.to_le_bytes()[..4].try_into().unwrap_or([0; 4]) };
    for op in [TevOp::Replace, TevOp::Modulate, TevOp::Add] {
        for &s0 in &sources {
            for &s1 in &sources {
                for variant in 0..4 {
                    let mut cfg = one_stage(op);
                    let mut st = cfg.stages[0];
                    st.rgb_source = [s0, s1, TevSource::Texture2];
                    st.alpha_source = st.rgb_source;
                    st.constant = b(next());
                    match variant {
                        1 => st.rgb_operand[1] = ColorOperand::OneMinusRgb,
                        2 => st.alpha_scale = 2,
                        3 => st.alpha_source[0] = TevSource::Texture1,
                        _ => {}
                    }
                    cfg.stages[0] = st;
                    // The same stage again in stage 2, reading the buffer and stage 1's output.
                    cfg.stages[1] = one_stage(TevOp::Add).stages[0];
                    cfg.stages[2] = st;
                    cfg.update_rgb = (next() & 0xF) as u8;
                    cfg.update_alpha = (next() & 0xF) as u8;
                    cfg.buffer_color = b(next());
                    let prog = TevProgram::new(&cfg);
                    for _ in 0..64 {
                        let inp = TevInputs {
                            primary: b(next()),
                            fragment_primary: b(next()),
                            fragment_secondary: b(next()),
                            texture: [b(next()), b(next()), b(next()), b(next())],
                        };
                        assert_eq!(
                            prog.run(&inp),
                            cfg.combine(&inp),
                            "{op:?} {s0:?} {s1:?} variant {variant}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn div255_is_exact_division() {
    for p in 0..=255u32 * 255 {
        assert_eq!(u32::from(div255(p as u16)), p / 255, "p = {p}");
    }
}

#[test]
fn lane_operations_match_op_channel() {
    // Every element-wise operation over every (a, b) and a spread of c (edges and random),
    // in every lane and channel, against the per-fragment `op_channel`.
    let ops = [
        TevOp::Replace,
        TevOp::Modulate,
        TevOp::Add,
        TevOp::AddSigned,
        TevOp::Lerp,
        TevOp::Subtract,
        TevOp::MultiplyAdd,
        TevOp::AddMultiply,
        TevOp::Unknown(12),
    ];
    let cs = [0u8, 1, 2, 127, 128, 129, 200, 254, 255];
    for op in ops {
        for a in 0..=255u8 {
            for &c in &cs {
                // 16 lanes × 4 channels = 64 values of b per pass; 4 passes cover 0..=255.
                for pass in 0..4u8 {
                    let mut rows = [
                        [[a; 4]; FRAGMENT_BATCH],
                        [[0; 4]; FRAGMENT_BATCH],
                        [[c; 4]; FRAGMENT_BATCH],
                    ];
                    for (i, px) in rows[1].iter_mut().enumerate() {
                        for (ch, b) in px.iter_mut().enumerate() {
                            *b = pass * 64 + (i * 4 + ch) as u8;
                        }
                    }
                    let mut out = [[0u8; 4]; FRAGMENT_BATCH];
                    op_lanes::<0, 4>(op, &rows, &mut out);
                    for i in 0..FRAGMENT_BATCH {
                        for ch in 0..4 {
                            let b = rows[1][i][ch];
                            let want = op_channel(op, a.into(), b.into(), c.into());
                            assert_eq!(out[i][ch], want, "{op:?} a={a} b={b} c={c}");
                        }
                    }
                }
            }
        }
    }
}

/// Random register files as in `compiled_program_matches_reference`, pass-through stages
/// common, plus a bias towards the specialised shapes and buffer readers.
fn random_tev_regs(next: &mut impl FnMut() -> u64) -> Box<[u32; 0x300]> {
    let mut r = Box::new([0u32; 0x300]);
    for base in TEV_STAGE_BASE {
        for k in 0..5 {
            r[base + k] = next() as u32;
        }
        match next() % 6 {
            0 | 1 => {
                r[base] = 0x000F_000F;
                r[base + 1] = 0;
                r[base + 2] = 0;
                r[base + 4] = 0;
            }
            2 => {
                // A specialised shape: same op and sources for RGB and alpha, plain operands.
                let src = (next() & 0xFF) as u32;
                let op = (next() % 3) as u32;
                r[base] = src | (src << 16);
                r[base + 1] = 0;
                r[base + 2] = op | (op << 16);
                r[base + 4] = 0;
            }
            3 => {
                // Reads the buffer (source 13) in the first slot.
                r[base] = (r[base] & !0x000F_000F) | 13 | (13 << 16);
            }
            _ => {}
        }
    }
    r[0x0E0] = next() as u32;
    r[0x0FD] = next() as u32;
    r
}

#[test]
fn run_batch_matches_run_table_per_column() {
    // Random programs (every op, source, operand modifier, scale, buffer-update bits,
    // constants) and random tables, every n in 1..=16: each column of `run_batch` equals
    // `run_table` on that column.
    let mut x = 0xD1B5_4A32_D192_ED03u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut shapes = [0usize; 4];
    for case in 0..6_000 {
        let r = random_tev_regs(&mut next);
        let cfg = TevConfig::from_regs(&r);
        let prog = TevProgram::new(&cfg);
        for c in &prog.stages {
            shapes[match c.fast {
                FastStage::Generic => 0,
                FastStage::Replace(_) => 1,
                FastStage::Modulate(..) => 2,
                FastStage::Add(..) => 3,
            }] += 1;
        }
        let n = case % FRAGMENT_BATCH + 1;
        let mut table: BatchTable = [[[0; 4]; FRAGMENT_BATCH]; 16];
        for (s, row) in table.iter_mut().enumerate() {
            for px in row.iter_mut() {
                // Entries 7-12 are zero by contract; 13-15 are scratch (random junk here).
                *px = if (7..13).contains(&s) {
                    [0; 4]
                } else {
                    match next() % 8 {
                        0 => [0; 4],
                        1 => [255; 4],
                        _ => (next() as u32).to_le_bytes(),
                    }
                };
            }
        }
        let mut want = [[0u8; 4]; FRAGMENT_BATCH];
        for (i, w) in want[..n].iter_mut().enumerate() {
            let mut col: [Rgba; 16] = [[0; 4]; 16];
            for (c, row) in col.iter_mut().zip(&table) {
                *c = row[i];
            }
            *w = prog.run_table(&mut col);
        }
        let mut out = [[7u8; 4]; FRAGMENT_BATCH];
        prog.run_batch(&mut table, n, &mut out);
        assert_eq!(out[..n], want[..n], "case {case} n {n}: {cfg:?}");
        // Entries past n are left alone.
        assert!(out[n..].iter().all(|o| *o == [7; 4]), "case {case}");
    }
    assert!(
        shapes.iter().all(|&k| k > 100),
        "shapes exercised: {shapes:?}"
    );
}

/// Instruction-count driver (not a check): runs the sprite scene's program (stage 0
/// MODULATE(texture 0, primary), stage 1 ADD(previous, texture 3)) and a six-stage generic
/// program `COST_ITERS` times over a 16-fragment batch, through `run_batch` (`COST_PATH=batch`)
/// or 16 `run_table` calls. Under callgrind, the difference between two iteration counts
/// divided by 16 × the difference is the per-fragment cost.
#[test]
#[ignore]
fn cost_driver() {
    let iters: usize = std::env::var("COST_ITERS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let batch = std::env::var("COST_PATH").is_ok_and(|p| p == "batch");
    let generic = std::env::var("COST_PROG").is_ok_and(|p| p == "generic");
    let mut r = Box::new([0u32; 0x300]);
    for base in TEV_STAGE_BASE {
        r[base] = 0x000F_000F;
    }
    if generic {
        for (i, base) in TEV_STAGE_BASE.into_iter().enumerate() {
            r[base] = 0x0F3 | (0x0E3 << 16);
            r[base + 1] = 0x0001_0005 + i as u32;
            r[base + 2] = (4 + i as u32 % 5) | (2 << 16);
            r[base + 3] = 0x8040_20FF;
        }
    } else {
        r[0x0C0] = 3 | (3 << 16);
        r[0x0C2] = 1 | (1 << 16);
        r[0x0C8] = 0x6F | (0x6F << 16);
        r[0x0CA] = 2 | (2 << 16);
    }
    let prog = TevProgram::new(&TevConfig::from_regs(&r));
    let mut table: BatchTable = [[[0; 4]; FRAGMENT_BATCH]; 16];
    for (s, row) in table.iter_mut().enumerate().take(7) {
        for (i, px) in row.iter_mut().enumerate() {
            *px = [
                (s * 37 + i * 11) as u8,
                (i * 53) as u8,
                (s * 7) as u8,
                (200 - i) as u8,
            ];
        }
    }
    let mut out = [[0u8; 4]; FRAGMENT_BATCH];
    let mut acc = 0u32;
    for k in 0..iters {
        table[3][k % FRAGMENT_BATCH][0] = k as u8;
        let t = std::hint::black_box(&mut table);
        if batch {
            prog.run_batch(t, FRAGMENT_BATCH, &mut out);
        } else {
            for (i, o) in out.iter_mut().enumerate() {
                let mut col: [Rgba; 16] = [[0; 4]; 16];
                for (c, row) in col.iter_mut().zip(t.iter()) {
                    *c = row[i];
                }
                *o = prog.run_table(&mut col);
            }
        }
        acc = acc.wrapping_add(u32::from_le_bytes(std::hint::black_box(out)[5]));
    }
    println!("{acc}");
}
