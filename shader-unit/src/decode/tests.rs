// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Decoder tests: known words from the benchmark listings, every opcode, and encode/decode
//! round trips (proptest).

use super::*;
use proptest::prelude::*;

const ID: [u8; 4] = [0, 1, 2, 3];

fn s(reg: SrcReg) -> Src {
    Src::plain(reg)
}

#[test]
fn op_info_table_covers_all_opcodes() {
    let unknown: Vec<u32> = (0..64)
        .filter(|&o| op_info(o).kind == OpKind::Unknown)
        .collect();
    assert_eq!(
        unknown,
        vec![0x10, 0x11, 0x14, 0x15, 0x16, 0x17, 0x1C, 0x1D, 0x1E, 0x1F]
    );
    assert_eq!(op_info(0x2F).mnemonic, "cmp");
    assert_eq!(op_info(0x33).mnemonic, "madi");
    assert_eq!(op_info(0x3F).mnemonic, "mad");
    assert!(op_info(0x1A).inverted && op_info(0x30).inverted && !op_info(0x38).inverted);
    assert_eq!(op_info(0x18).format, Format::F1i);
    assert_eq!(op_info(0x2B).format, Format::F4);
    assert_eq!(op_info(0x2D).format, Format::F3);
    assert_eq!(op_info(0x23).format, Format::F2);
    assert_eq!(op_info(0x20).format, Format::F0);
    // Every opcode's IR reports the same mnemonic as the table.
    for opc in 0..64u32 {
        let i = decode(opc << 26, &[]);
        assert_eq!(i.mnemonic(), op_info(opc).mnemonic, "opcode {opc:#x}");
    }
}

#[test]
fn decodes_bench_w1_words() {
    let descs = [0x0D86C368, 0x0D86C364, 0x0D86C362, 0x0D86C361, 0x0D86C36F];
    // 000: dp4 o0.x, c0, v0
    assert_eq!(
        decode(0x08020000, &descs),
        Instr::Binary {
            op: BinaryOp::Dp4,
            dst: Dst {
                reg: DstReg::Output(0),
                mask: 0b1000
            },
            src1: s(SrcReg::Const(0)),
            src2: s(SrcReg::Input(0)),
            inverted: false,
            desc: 0,
        }
    );
    // 004: mov o1.xyzw, v1
    assert_eq!(
        decode(0x4C201004, &descs),
        Instr::Unary {
            op: UnaryOp::Mov,
            dst: Dst {
                reg: DstReg::Output(1),
                mask: 0xF
            },
            src: s(SrcReg::Input(1)),
            desc: 4
        }
    );
    assert_eq!(decode(0x88000000, &descs), Instr::End);
}

#[test]
fn decodes_bench_w2_and_w3_words() {
    let w2 = [
        0x0D86C368, 0x0D86C364, 0x0D86C362, 0x0D86C361, 0x0D86C008, 0x0D80036E, 0x0D86C00E,
        0x0DAA9542, 0x0D80036F, 0x0D86CAAF, 0x0D86C36F, 0x0D86D54E, 0x0D86DFE1, 0x0D86C36E,
    ];
    // 008: rsq r1.x, r1.xxxx
    assert_eq!(
        decode(0x3E211004, &w2),
        Instr::Unary {
            op: UnaryOp::Rsq,
            dst: Dst {
                reg: DstReg::Temp(1),
                mask: 0b1000
            },
            src: Src {
                swizzle: [0; 4],
                ..s(SrcReg::Temp(1))
            },
            desc: 4
        }
    );
    // 013: max r2.xyz, c12.xxxx, r2
    assert_eq!(
        decode(0x3242C906, &w2),
        Instr::Binary {
            op: BinaryOp::Max,
            dst: Dst {
                reg: DstReg::Temp(2),
                mask: 0b1110
            },
            src1: Src {
                swizzle: [0; 4],
                ..s(SrcReg::Const(12))
            },
            src2: s(SrcReg::Temp(2)),
            inverted: false,
            desc: 6,
        }
    );
    // 018: mad r3.xyzw, r2.yyyy, c10, r3
    assert_eq!(
        decode(0xF324AA69, &w2),
        Instr::Mad {
            dst: Dst {
                reg: DstReg::Temp(3),
                mask: 0xF
            },
            src1: Src {
                swizzle: [1; 4],
                ..s(SrcReg::Temp(2))
            },
            src2: s(SrcReg::Const(10)),
            src3: s(SrcReg::Temp(3)),
            inverted: false,
            desc: 9,
        }
    );
    let w3 = [
        0x0D86C36F, 0x0D86C008, 0x0D86C368, 0x0D86C364, 0x0D86C362, 0x0D80036E, 0x0D86CD8F,
        0x0D86C361,
    ];
    assert_eq!(
        decode(0xA4002800, &w3),
        Instr::Loop {
            i: 0,
            dst: 10,
            num: 0
        }
    );
    // 004: mova a0.x, r1.xxxx
    assert_eq!(
        decode(0x48011001, &w3),
        Instr::Mova {
            src: Src {
                swizzle: [0; 4],
                ..s(SrcReg::Temp(1))
            },
            mask: 0b1000,
            dst_raw: 0,
            desc: 1
        }
    );
    // 005: dp4 r0.x, c8[a0.x], v0
    assert_eq!(
        decode(0x0A0A8002, &w3),
        Instr::Binary {
            op: BinaryOp::Dp4,
            dst: Dst {
                reg: DstReg::Temp(0),
                mask: 0b1000
            },
            src1: Src {
                rel: RelAddr::A0X,
                ..s(SrcReg::Const(8))
            },
            src2: s(SrcReg::Input(0)),
            inverted: false,
            desc: 2,
        }
    );
    // 009: mov r1.xyzw, r1.yzwx
    let Instr::Unary { src, .. } = decode(0x4E211006, &w3) else {
        panic!("not unary")
    };
    assert_eq!(src.swizzle, [1, 2, 3, 0]);
    assert_eq!(
        decode(0x9C004C01, &w3),
        Instr::IfU {
            b: 0,
            dst: 19,
            num: 1
        }
    );
    assert_eq!(decode(0x90005402, &w3), Instr::Call { dst: 21, num: 2 });
}

#[test]
fn inverted_forms_normalise() {
    // sgei r0, r1, c5 (format 1i): src1 5-bit at 14, src2 7-bit at 7, idx applies to src2.
    let w = RawInstr::format1i(op::SGEI, 0x10, 1, 0x11, 0x25, 0).0;
    let Instr::Binary {
        op,
        src1,
        src2,
        inverted,
        ..
    } = decode(w, &[0x0D86C36F])
    else {
        panic!()
    };
    assert_eq!(op, BinaryOp::Sge);
    assert!(inverted);
    assert_eq!(src1.reg, SrcReg::Temp(1));
    assert_eq!(src1.rel, RelAddr::None);
    assert_eq!(src2.reg, SrcReg::Const(5));
    assert_eq!(src2.rel, RelAddr::A0X);
    // MADI: src3 is the 7-bit, relative operand.
    let w = RawInstr::format5i(0x00, 3, 0x01, 0x12, 0x7F, 2).0;
    let Instr::Mad {
        src2,
        src3,
        inverted,
        desc,
        ..
    } = decode(w, &[0, 0, 0x0D86C36F])
    else {
        panic!()
    };
    assert!(inverted);
    assert_eq!(desc, 2);
    assert_eq!(src2.reg, SrcReg::Temp(2));
    assert_eq!(src3.reg, SrcReg::Const(95));
    assert_eq!(src3.rel, RelAddr::AL);
}

#[test]
fn cmp_and_conditions() {
    for x in 0..8 {
        for y in 0..8 {
            let w = RawInstr::format1c(x, y, 0, 0x20, 0x01, 0).0;
            let Instr::Cmp {
                op_x,
                op_y,
                src1,
                src2,
                ..
            } = decode(w, &[])
            else {
                panic!()
            };
            assert_eq!((op_x.raw(), op_y.raw()), (x, y));
            assert_eq!(src1.reg, SrcReg::Const(0));
            assert_eq!(src2.reg, SrcReg::Input(1));
        }
    }
    // Condition truth tables: (op, refx, refy, cmp.x, cmp.y) -> result.
    for op in 0..4 {
        for bits in 0..16u32 {
            let (rx, ry, cx, cy) = (bits & 8 != 0, bits & 4 != 0, bits & 2 != 0, bits & 1 != 0);
            let c = Cond {
                op: CondOp::from_raw(op),
                ref_x: rx,
                ref_y: ry,
            };
            let expected = match op {
                0 => cx == rx || cy == ry,
                1 => cx == rx && cy == ry,
                2 => cx == rx,
                _ => cy == ry,
            };
            assert_eq!(c.eval(cx, cy), expected);
        }
    }
    let w = RawInstr::format2(op::JMPC, true, false, 2, 0x123, 0).0;
    assert_eq!(
        decode(w, &[]),
        Instr::JmpC {
            cond: Cond {
                op: CondOp::X,
                ref_x: true,
                ref_y: false
            },
            dst: 0x123
        }
    );
}

#[test]
fn jmpu_invert_and_setemit() {
    assert_eq!(
        decode(RawInstr::format3(op::JMPU, 7, 9, 1).0, &[]),
        Instr::JmpU {
            b: 7,
            dst: 9,
            invert: true
        }
    );
    assert_eq!(
        decode(RawInstr::format3(op::JMPU, 7, 9, 0xFE).0, &[]),
        Instr::JmpU {
            b: 7,
            dst: 9,
            invert: false
        }
    );
    assert_eq!(
        decode(RawInstr::format4(2, true, false).0, &[]),
        Instr::SetEmit {
            vertex_id: 2,
            prim_emit: true,
            winding: false
        }
    );
    // Raw bit positions from pica-core.md §5.7.
    let w = RawInstr::format4(3, false, true).0;
    assert_eq!((w >> 24) & 3, 3);
    assert_eq!((w >> 22) & 1, 1);
}

#[test]
fn unknown_and_missing_descriptors_never_panic() {
    assert_eq!(decode(0x4000_1234, &[]), Instr::Unknown(0x4000_1234));
    // Descriptor index 127 with an empty table reads as descriptor 0: mask 0, swizzle xxxx.
    let Instr::Unary { dst, src, .. } = decode(RawInstr::format1(op::MOV, 0, 0, 0, 0, 127).0, &[])
    else {
        panic!()
    };
    assert_eq!(dst.mask, 0);
    assert_eq!(src.swizzle, [0; 4]);
}

#[test]
fn program_limits_and_hash() {
    let code = vec![0x8800_0000u32; MAX_PROGRAM_WORDS + 10];
    let descs = vec![0u32; 1000];
    let p = Program::new(&code, &descs);
    assert_eq!(p.len(), MAX_PROGRAM_WORDS);
    assert_eq!(p.opdescs().len(), MAX_OPDESCS);
    let a = Program::new(&[0x88000000], &[]);
    let b = Program::new(&[0x84000000], &[]);
    assert_ne!(a.content_hash(), b.content_hash());
    assert_eq!(
        a.content_hash(),
        Program::new(&[0x88000000], &[]).content_hash()
    );
}

#[test]
fn register_access_sets() {
    let descs = [0x0D86C368u32];
    let i = decode(0x08020000, &descs); // dp4 o0.x, c0, v0
    let reads = i.reads();
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0].reg, RegRef::Const(0));
    assert_eq!(reads[0].lanes, 0xF);
    assert_eq!(
        i.writes(),
        vec![Access {
            reg: RegRef::Output(0),
            lanes: 0b1000,
            rel: RelAddr::None
        }]
    );
    // Relative operand reports the address register too.
    let w3 = [0x0D86C36F, 0x0D86C008, 0x0D86C368];
    let r = decode(0x0A0A8002, &w3).reads();
    assert!(r.iter().any(|a| a.reg == RegRef::A0X));
    assert_eq!(decode(0xA4002800, &[]).writes()[0].reg, RegRef::AL);
    // rsq r1.x, r1.xxxx reads only lane x of r1.
    let r = decode(0x3E211004, &[0, 0, 0, 0, 0x0D86C008]).reads();
    assert_eq!(r[0].lanes, 0b1000);
}

#[test]
fn encode_program_builds_descriptors() {
    let prog = [
        Instr::Binary {
            op: BinaryOp::Dp4,
            dst: Dst {
                reg: DstReg::Output(0),
                mask: 0b1000,
            },
            src1: s(SrcReg::Const(0)),
            src2: s(SrcReg::Input(0)),
            inverted: false,
            desc: 0,
        },
        Instr::End,
    ];
    let (code, descs) = encode_program(&prog).unwrap();
    assert_eq!(code, vec![0x08020000, 0x88000000]);
    // Like picasso: the unused source-3 field is 0.
    assert_eq!(descs, vec![0x0006_C368]);
    // Sharing a slot: a MOV uses only the mask and source 1, which agree with the DP4's.
    let shared = [
        prog[0],
        Instr::Unary {
            op: UnaryOp::Mov,
            dst: Dst {
                reg: DstReg::Output(1),
                mask: 0b1000,
            },
            src: s(SrcReg::Input(1)),
            desc: 0,
        },
    ];
    assert_eq!(encode_program(&shared).unwrap().1, vec![0x0006_C368]);
    let clash = [
        prog[0],
        Instr::Unary {
            op: UnaryOp::Mov,
            dst: Dst {
                reg: DstReg::Output(1),
                mask: 0xF,
            },
            src: s(SrcReg::Input(1)),
            desc: 0,
        },
    ];
    assert_eq!(
        encode_program(&clash),
        Err((1, EncodeError::DescriptorConflict { index: 0 }))
    );
    // Errors: c register in a 5-bit field.
    let bad = Instr::Binary {
        op: BinaryOp::Add,
        dst: Dst {
            reg: DstReg::Temp(0),
            mask: 0xF,
        },
        src1: s(SrcReg::Input(0)),
        src2: s(SrcReg::Const(3)),
        inverted: false,
        desc: 0,
    };
    assert!(matches!(
        bad.encode(),
        Err(EncodeError::ConstIn5BitField { operand: 2, .. })
    ));
    let bad = Instr::Mad {
        dst: Dst {
            reg: DstReg::Temp(0),
            mask: 0xF,
        },
        src1: s(SrcReg::Input(0)),
        src2: s(SrcReg::Input(1)),
        src3: s(SrcReg::Input(2)),
        inverted: false,
        desc: 40,
    };
    assert!(matches!(
        bad.encode(),
        Err(EncodeError::FieldTooLarge { field: "desc", .. })
    ));
    let _ = ID;
}

// ----- proptest round trip -----

fn arb_src(seven_bit: bool, rel_ok: bool) -> impl Strategy<Value = Src> {
    let reg = if seven_bit {
        (0u32..0x80).boxed()
    } else {
        (0u32..0x20).boxed()
    };
    let rel = if rel_ok {
        (0u32..4).boxed()
    } else {
        Just(0u32).boxed()
    };
    (reg, rel, any::<u8>(), any::<bool>()).prop_map(|(r, rel, sel, negate)| Src {
        reg: SrcReg::from_raw(r),
        rel: RelAddr::from_raw(rel),
        swizzle: selector_to_swizzle(sel),
        negate,
    })
}

fn arb_dst() -> impl Strategy<Value = Dst> {
    (0u32..0x20, 0u8..16).prop_map(|(r, mask)| Dst {
        reg: DstReg::from_raw(r),
        mask,
    })
}

fn arb_cond() -> impl Strategy<Value = Cond> {
    (0u32..4, any::<bool>(), any::<bool>()).prop_map(|(o, x, y)| Cond {
        op: CondOp::from_raw(o),
        ref_x: x,
        ref_y: y,
    })
}

fn arb_instr() -> impl Strategy<Value = Instr> {
    let binops = prop_oneof![
        Just((BinaryOp::Add, false)),
        Just((BinaryOp::Dp3, false)),
        Just((BinaryOp::Dp4, false)),
        Just((BinaryOp::Dph, false)),
        Just((BinaryOp::Dph, true)),
        Just((BinaryOp::Dst, false)),
        Just((BinaryOp::Dst, true)),
        Just((BinaryOp::Mul, false)),
        Just((BinaryOp::Sge, false)),
        Just((BinaryOp::Sge, true)),
        Just((BinaryOp::Slt, false)),
        Just((BinaryOp::Slt, true)),
        Just((BinaryOp::Max, false)),
        Just((BinaryOp::Min, false)),
    ];
    let binary = (
        binops,
        arb_dst(),
        arb_src(true, true),
        arb_src(false, false),
        0u8..128,
    )
        .prop_map(|((op, inverted), dst, a, b, desc)| {
            // The 7-bit relative operand is src1 normally, src2 when inverted.
            let (src1, src2) = if inverted { (b, a) } else { (a, b) };
            Instr::Binary {
                op,
                dst,
                src1,
                src2,
                inverted,
                desc,
            }
        });
    let unops = prop_oneof![
        Just(UnaryOp::Ex2),
        Just(UnaryOp::Lg2),
        Just(UnaryOp::Litp),
        Just(UnaryOp::Flr),
        Just(UnaryOp::Rcp),
        Just(UnaryOp::Rsq),
        Just(UnaryOp::Mov)
    ];
    let unary = (unops, arb_dst(), arb_src(true, true), 0u8..128)
        .prop_map(|(op, dst, src, desc)| Instr::Unary { op, dst, src, desc });
    let mova =
        (arb_src(true, true), 0u8..16, 0u8..32, 0u8..128).prop_map(|(src, mask, dst_raw, desc)| {
            Instr::Mova {
                src,
                mask,
                dst_raw,
                desc,
            }
        });
    let cmp = (
        arb_src(true, true),
        arb_src(false, false),
        0u32..8,
        0u32..8,
        0u8..128,
    )
        .prop_map(|(src1, src2, x, y, desc)| Instr::Cmp {
            src1,
            src2,
            op_x: CmpOp::from_raw(x),
            op_y: CmpOp::from_raw(y),
            desc,
        });
    let mad = (
        arb_dst(),
        arb_src(false, false),
        arb_src(true, true),
        arb_src(false, false),
        any::<bool>(),
        0u8..32,
    )
        .prop_map(|(dst, a, b, c, inverted, desc)| {
            if inverted {
                Instr::Mad {
                    dst,
                    src1: a,
                    src2: c,
                    src3: b,
                    inverted,
                    desc,
                }
            } else {
                Instr::Mad {
                    dst,
                    src1: a,
                    src2: b,
                    src3: c,
                    inverted,
                    desc,
                }
            }
        });
    let flow = prop_oneof![
        Just(Instr::Break),
        Just(Instr::Nop),
        Just(Instr::End),
        Just(Instr::Emit),
        arb_cond().prop_map(|cond| Instr::BreakC { cond }),
        (0u16..4096, any::<u8>()).prop_map(|(dst, num)| Instr::Call { dst, num }),
        (arb_cond(), 0u16..4096, any::<u8>()).prop_map(|(cond, dst, num)| Instr::CallC {
            cond,
            dst,
            num
        }),
        (0u8..16, 0u16..4096, any::<u8>()).prop_map(|(b, dst, num)| Instr::CallU { b, dst, num }),
        (0u8..16, 0u16..4096, any::<u8>()).prop_map(|(b, dst, num)| Instr::IfU { b, dst, num }),
        (arb_cond(), 0u16..4096, any::<u8>()).prop_map(|(cond, dst, num)| Instr::IfC {
            cond,
            dst,
            num
        }),
        (0u8..4, 0u16..4096, any::<u8>()).prop_map(|(i, dst, num)| Instr::Loop { i, dst, num }),
        (0u8..4, any::<bool>(), any::<bool>()).prop_map(|(vertex_id, prim_emit, winding)| {
            Instr::SetEmit {
                vertex_id,
                prim_emit,
                winding,
            }
        }),
        (arb_cond(), 0u16..4096).prop_map(|(cond, dst)| Instr::JmpC { cond, dst }),
        (0u8..16, 0u16..4096, any::<bool>()).prop_map(|(b, dst, invert)| Instr::JmpU {
            b,
            dst,
            invert
        }),
        prop_oneof![
            Just(0x10u32),
            Just(0x11),
            Just(0x14),
            Just(0x17),
            Just(0x1C),
            Just(0x1F)
        ]
        .prop_flat_map(
            |o| any::<u32>().prop_map(move |w| Instr::Unknown((o << 26) | (w & 0x03FF_FFFF)))
        ),
    ];
    prop_oneof![binary, unary, mova, cmp, mad, flow]
}

proptest! {
    #[test]
    fn encode_decode_round_trip(instr in arb_instr()) {
        let enc = instr.encode().expect("generated instructions are encodable");
        let mut table = vec![0u32; 128];
        if let Some((i, d)) = enc.opdesc {
            table[usize::from(i)] = d;
        }
        prop_assert_eq!(decode(enc.word, &table), instr);
    }

    #[test]
    fn decode_any_word_never_panics(word in any::<u32>(), descs in proptest::collection::vec(any::<u32>(), 0..130)) {
        let i = decode(word, &descs);
        let _ = (i.reads(), i.writes(), i.mnemonic(), i.flow_target());
        // Re-encoding a decoded word gives a word that decodes to the same IR.
        if let Ok(enc) = i.encode() {
            let mut table = descs.clone();
            table.resize(128, 0);
            if let Some((k, d)) = enc.opdesc {
                table[usize::from(k)] = d;
            }
            prop_assert_eq!(decode(enc.word, &table), i);
        }
    }

    #[test]
    fn raw_setters_round_trip(v in any::<u32>()) {
        let r = RawInstr(0).with_flow_dst(v).with_num(v).with_bool_id(v);
        prop_assert_eq!(r.flow_dst(), v & 0xFFF);
        prop_assert_eq!(r.num(), v & 0xFF);
        prop_assert_eq!(r.bool_id(), v & 0xF);
        let d = OpDesc(0).with_swizzle3(v).with_mask(v);
        prop_assert_eq!(d.swizzle3(), v & 0xFF);
        prop_assert_eq!(d.mask(), v & 0xF);
        prop_assert_eq!(d.0 >> 31, 0);
    }
}
