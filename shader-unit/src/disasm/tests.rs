// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Unit tests of the disassembler on small hand-built programs.

use super::*;
use crate::decode::{
    BinaryOp, CondOp, Dst, DstReg, Instr, RelAddr, Src, SrcReg, UnaryOp, encode_program,
};
use crate::dvlb::{
    Constant, ConstantValue, Dvlb, Dvle, DvleLayout, Dvlp, DvlpLayout, GsMode, Label, OpdescEntry,
    OutputEntry, OutputSemantic, ShaderKind, UniformEntry,
};

fn layout0() -> DvleLayout {
    DvleLayout {
        constant_offset: 0,
        constant_count: 0,
        label_offset: 0,
        label_count: 0,
        output_offset: 0,
        output_count: 0,
        uniform_offset: 0,
        uniform_count: 0,
        symbol_offset: 0,
        symbol_size: 0,
    }
}

fn vs(main_start: u32, main_end: u32) -> Dvle {
    Dvle {
        offset: 0,
        version: 0x1002,
        kind: ShaderKind::Vertex,
        merge_outmaps: 0,
        main_start,
        main_end,
        input_mask: 0,
        output_mask: 0,
        gs_mode: GsMode::Point,
        gs_fixed_start: 0,
        gs_variable_num: 0,
        gs_fixed_num: 0,
        layout: layout0(),
        constants: Vec::new(),
        labels: Vec::new(),
        outputs: Vec::new(),
        uniforms: Vec::new(),
        symbols: Vec::new(),
    }
}

fn file(code: Vec<u32>, opdescs: Vec<u32>, dvles: Vec<Dvle>) -> Dvlb {
    Dvlb {
        dvlp: Dvlp {
            offset: 0xC,
            version: 0,
            layout: DvlpLayout {
                code_offset: 0x28,
                code_words: code.len() as u32,
                opdesc_offset: 0,
                opdesc_count: opdescs.len() as u32,
                line_offset: 0,
                extension: None,
            },
            code,
            opdescs: opdescs
                .into_iter()
                .map(|descriptor| OpdescEntry {
                    descriptor,
                    extra: 0,
                })
                .collect(),
            lines: Vec::new(),
            filename_symbols: Vec::new(),
        },
        dvles,
        input_len: 0,
    }
}

fn program(instrs: &[Instr]) -> (Vec<u32>, Vec<u32>) {
    encode_program(instrs).expect("encodable test program")
}

/// Program words only (descriptor tables are given by hand where they matter).
fn words(instrs: &[Instr]) -> Vec<u32> {
    instrs
        .iter()
        .map(|i| i.encode().expect("encodable").word)
        .collect()
}

fn src(reg: SrcReg) -> Src {
    Src::plain(reg)
}

fn dst(reg: DstReg, mask: u8) -> Dst {
    Dst { reg, mask }
}

fn mov(d: Dst, s: Src, desc: u8) -> Instr {
    Instr::Unary {
        op: UnaryOp::Mov,
        dst: d,
        src: s,
        desc,
    }
}

/// Lines of the code part without the address comments, trimmed at the end.
fn code_lines(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.starts_with(';'))
        .map(|l| match l.find("; 0x") {
            Some(i) => l[..i].trim_end().to_string(),
            None => l.trim_end().to_string(),
        })
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn swizzles_masks_and_conditions_use_picasso_spelling() {
    assert_eq!(swizzle_suffix([0, 1, 2, 3]), "");
    assert_eq!(swizzle_suffix([0, 0, 0, 0]), ".x");
    assert_eq!(swizzle_suffix([0, 1, 2, 2]), ".xyz");
    assert_eq!(swizzle_suffix([3, 2, 1, 0]), ".wzyx");
    assert_eq!(swizzle_suffix([0, 1, 0, 0]), ".xyx");
    assert_eq!(swizzle_suffix([1, 1, 1, 3]), ".yyyw");
    assert_eq!(mask_letters(0b1010), "xz");
    assert_eq!(mask_letters(0xF), "xyzw");
    let c = |op, ref_x, ref_y| cond_text(Cond { op, ref_x, ref_y });
    assert_eq!(c(CondOp::X, true, true), "cmp.x");
    assert_eq!(c(CondOp::X, false, true), "!cmp.x");
    assert_eq!(c(CondOp::Y, true, false), "!cmp.y");
    assert_eq!(c(CondOp::And, true, false), "cmp.x && !cmp.y");
    assert_eq!(c(CondOp::Or, false, false), "!cmp.x || !cmp.y");
}

#[test]
fn operands_print_negation_relative_addressing_and_v15() {
    let names = NoNames;
    let s = Src {
        reg: SrcReg::Const(40),
        rel: RelAddr::A0X,
        swizzle: [0, 1, 2, 3],
        negate: true,
    };
    assert_eq!(src_text(&s, &names).unwrap(), "-c40[a0.x]");
    let s = Src {
        reg: SrcReg::Const(3),
        rel: RelAddr::AL,
        swizzle: [3, 3, 3, 3],
        negate: false,
    };
    assert_eq!(src_text(&s, &names).unwrap(), "c3[aL].w");
    assert_eq!(src_text(&src(SrcReg::Input(15)), &names).unwrap(), "v14[1]");
    let bad = Src {
        reg: SrcReg::Temp(2),
        rel: RelAddr::A0Y,
        swizzle: [0, 1, 2, 3],
        negate: false,
    };
    assert!(src_text(&bad, &names).is_err());
    assert!(dst_text(&dst(DstReg::Temp(0), 0), &names).is_err());
    assert_eq!(
        dst_text(&dst(DstReg::Output(2), 0b1100), &names).unwrap(),
        "o2.xy"
    );
    assert_eq!(indexed("proj", Some(2), RelAddr::A0Y), "proj[a0.y+2]");
    assert_eq!(indexed("proj", Some(0), RelAddr::AL), "proj[aL]");
    assert_eq!(indexed("proj", Some(3), RelAddr::None), "proj[3]");
}

#[test]
fn float_constants_print_text_picasso_reads_back_exactly() {
    // Every exponent with a spread of mantissas, both signs.
    for sign in [0u32, 1] {
        for exp in 0..0x7Fu32 {
            for mant in [0u32, 1, 0x5555, 0x8000, 0xFFFF, 0x1234, 0xFFFE] {
                let bits = (sign << 23) | (exp << 16) | mant;
                let (text, ok) = f24_text(bits);
                assert!(ok, "0x{bits:06X} printed as {text}");
                assert_eq!(
                    picasso_reads(&text),
                    Some(bits),
                    "0x{bits:06X} printed as {text}"
                );
            }
        }
    }
    assert_eq!(f24_text(0x3F_0000).0, "1.0");
    assert_eq!(f24_text(0xBF_0000).0, "-1.0");
    assert_eq!(f24_text(0x80_0000).0, "-0.0");
    assert_eq!(f24_text(0x7F_0000), ("inf".to_string(), true));
    assert!(!f24_text(0x7F_0001).1, "NaN cannot be written for picasso");
}

#[test]
fn structured_flow_control_becomes_blocks_procs_and_labels() {
    use Instr as I;
    let r0 = dst(DstReg::Temp(0), 0xF);
    let v0 = src(SrcReg::Input(0));
    let cx = Cond {
        op: CondOp::X,
        ref_x: true,
        ref_y: true,
    };
    let instrs = [
        /* 00 */ I::Call { dst: 12, num: 2 },
        /* 01 */ I::IfU {
            b: 3,
            dst: 4,
            num: 2,
        },
        /* 02 */ mov(r0, v0, 0),
        /* 03 */ mov(r0, v0, 0),
        /* 04 */ mov(r0, v0, 0),
        /* 05 */ I::Nop,
        /* 06 */ I::Loop {
            i: 1,
            dst: 8,
            num: 0,
        },
        /* 07 */ I::BreakC { cond: cx },
        /* 08 */ mov(r0, src(SrcReg::Const(0)), 0),
        /* 09 */ I::Nop,
        /* 10 */
        I::JmpC {
            cond: Cond {
                op: CondOp::And,
                ref_x: false,
                ref_y: true,
            },
            dst: 13,
        },
        /* 11 */ I::End,
        /* 12 */
        I::IfC {
            cond: cx,
            dst: 13,
            num: 0,
        },
        /* 13 */ I::Nop,
    ];
    let (code, descs) = program(&instrs);
    let dvlb = file(code, descs, vec![vs(0, 12)]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    let lines = code_lines(&listing.text);
    let expected = [
        ".proc main",
        "    call proc_00c",
        "    ifu b3",
        "        mov r0, v0",
        "        mov r0, v0",
        "    .else",
        "        mov r0, v0",
        "        nop",
        "    .end",
        "    for i1",
        "        breakc cmp.x",
        "        mov r0, c0",
        "    .end",
        "    nop",
        "    jmpc !cmp.x && cmp.y, l_00d",
        "    end",
        ".end",
        ".proc proc_00c",
        "    ifc cmp.x",
        "    .end",
        "l_00d:",
        "    nop",
        ".end",
    ];
    assert_eq!(lines, expected, "\n{}", listing.text);
    // The IFC at 12 has an empty then-block: picasso would pad it, so the listing says so.
    assert!(!listing.exact);
    assert!(
        listing.notes.iter().any(|n| n.contains("--no-nop")),
        "{:?}",
        listing.notes
    );
    // Address map: every word's line shows its address.
    for (addr, &line) in listing.address_lines.iter().enumerate() {
        let l = listing.text.lines().nth(line).unwrap();
        assert!(
            l.contains(&format!("; 0x{addr:03X}")),
            "line {line} for 0x{addr:03X}: {l}"
        );
    }
}

#[test]
fn picasso_shaped_padding_nops_are_exact() {
    use Instr as I;
    let r0 = dst(DstReg::Temp(0), 0xF);
    let v0 = src(SrcReg::Input(0));
    // call inside an IF then-block followed by picasso's padding NOP, then the else-block.
    let instrs = [
        I::IfU {
            b: 0,
            dst: 3,
            num: 1,
        },
        I::Call { dst: 6, num: 1 },
        I::Nop,
        mov(r0, v0, 0),
        I::Nop, // picasso's padding before a `.end` that follows an `.end`
        I::End,
        mov(r0, v0, 0),
    ];
    let (code, _) = program(&instrs);
    // picasso's descriptor for `mov r0, v0`: mask xyzw, src1 .xyzw, absent sources 0.
    let dvlb = file(code, vec![0x36F], vec![vs(0, 6)]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    assert!(listing.exact, "{}", listing.text);
    assert_eq!(
        code_lines(&listing.text),
        [
            ".proc main",
            "    ifu b0",
            "        call proc_006",
            "        nop",
            "    .else",
            "        mov r0, v0",
            "    .end",
            "    nop",
            "    end",
            ".end",
            ".proc proc_006",
            "    mov r0, v0",
            ".end",
        ]
    );
}

#[test]
fn unexpressible_instructions_become_marked_nops() {
    use Instr as I;
    let instrs = [
        I::Unknown(0x4000_0000),    // opcode 0x10
        I::Call { dst: 2, num: 9 }, // past the end
        I::IfU {
            b: 1,
            dst: 1,
            num: 0,
        }, // backwards IF
        I::JmpU {
            b: 2,
            dst: 0x100,
            invert: true,
        },
        I::End,
    ];
    let (code, descs) = program(&instrs);
    let dvlb = file(code, descs, vec![vs(0, 5)]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    assert!(!listing.exact);
    let text = &listing.text;
    assert_eq!(text.matches("UNEXPRESSIBLE").count(), 4, "{text}");
    assert!(
        text.contains("; 0x000 UNEXPRESSIBLE: unknown 0x40000000 (opcode 0x10)"),
        "{text}"
    );
    assert!(text.contains("UNEXPRESSIBLE: jmpu !b2, 0x100"), "{text}");
    let lines = code_lines(text);
    assert_eq!(
        lines,
        [
            ".proc main",
            "    nop",
            "    nop",
            "    nop",
            "    nop",
            "    end",
            ".end"
        ]
    );
    assert_eq!(listing.notes.len(), 4, "{:?}", listing.notes);
}

#[test]
fn words_with_stray_bits_and_non_picasso_encodings_get_notes() {
    use Instr as I;
    let v0 = src(SrcReg::Input(0));
    let v1 = src(SrcReg::Input(1));
    let instrs = [
        // SGEI with a narrow src2: picasso would choose the normal SGE form.
        I::Binary {
            op: BinaryOp::Sge,
            dst: dst(DstReg::Temp(1), 0xF),
            src1: src(SrcReg::Temp(0)),
            src2: src(SrcReg::Temp(2)),
            inverted: true,
            desc: 0,
        },
        // Two different inputs.
        I::Binary {
            op: BinaryOp::Add,
            dst: dst(DstReg::Temp(1), 0xF),
            src1: v0,
            src2: v1,
            inverted: false,
            desc: 0,
        },
        I::End,
    ];
    let (mut code, _) = program(&instrs);
    code[2] |= 0x0000_1234; // END with garbage in its unused bits
    // picasso's shared descriptor: mask xyzw, src1 and src2 .xyzw.
    let dvlb = file(code, vec![0x6C36F], vec![vs(0, 3)]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    let t = &listing.text;
    assert!(t.contains("sgei r1, r0, r2"), "{t}");
    assert!(
        t.contains("NOTE: picasso picks the other (normal/inverted) encoding"),
        "{t}"
    );
    assert!(
        t.contains("NOTE: picasso rejects two different input registers"),
        "{t}"
    );
    assert!(
        t.contains("NOTE: word 88001234 has bits outside the fields picasso writes (88000000)"),
        "{t}"
    );
    assert_eq!(listing.notes.len(), 3);
}

#[test]
fn directives_reproduce_picasso_allocation_or_fall_back() {
    let mut e = vs(0, 2);
    e.uniforms = vec![
        UniformEntry {
            symbol_offset: 0,
            start: 0x02,
            end: 0x02,
            name: "pos".into(),
        },
        UniformEntry {
            symbol_offset: 0,
            start: 0x14,
            end: 0x17,
            name: "mdl.view".into(),
        },
        UniformEntry {
            symbol_offset: 0,
            start: 0x16,
            end: 0x16,
            name: "overlap".into(),
        },
        UniformEntry {
            symbol_offset: 0,
            start: 0x79,
            end: 0x79,
            name: "flag".into(),
        },
        UniformEntry {
            symbol_offset: 0,
            start: 0x70,
            end: 0x70,
            name: "loops".into(),
        },
    ];
    e.input_mask = 0b100;
    e.constants = vec![
        Constant {
            type_raw: 2,
            register: 95,
            value: ConstantValue::Float([0x3F_0000, 0, 0, 0]),
            data: [0x3F_0000, 0, 0, 0],
        },
        Constant {
            type_raw: 2,
            register: 10,
            value: ConstantValue::Float([0; 4]),
            data: [0; 4],
        },
        Constant {
            type_raw: 2,
            register: 94,
            value: ConstantValue::Float([0x40_0000; 4]),
            data: [0x40_0000; 4],
        },
        Constant {
            type_raw: 1,
            register: 3,
            value: ConstantValue::Int([4, 0, 1, 0]),
            data: [0x0001_0004, 0, 0, 0],
        },
        Constant {
            type_raw: 0,
            register: 5,
            value: ConstantValue::Bool(true),
            data: [1, 0, 0, 0],
        },
    ];
    e.outputs = vec![
        OutputEntry {
            semantic: OutputSemantic::Position,
            register: 0,
            mask: 0xF,
            unknown: 0,
        },
        OutputEntry {
            semantic: OutputSemantic::TexCoord0,
            register: 2,
            mask: 0b0011,
            unknown: 0,
        },
        OutputEntry {
            semantic: OutputSemantic::TexCoord0W,
            register: 2,
            mask: 0b0100,
            unknown: 0,
        },
    ];
    e.output_mask = 0b101;
    let instrs = [
        mov(dst(DstReg::Output(2), 0b1100), src(SrcReg::Const(7)), 0),
        Instr::End,
    ];
    let (code, _) = program(&instrs);
    let dvlb = file(code, vec![0x36C], vec![e]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    let lines = code_lines(&listing.text);
    let expected = [
        ".in pos v2",
        ".fvec _unused_c0[4]",
        ".fvec mdl$view[4]",
        ".alias overlap c6",
        ".ivec loops",
        ".bool _unused_b0",
        ".bool flag",
        ".constf const_c95(1.0, 0.0, 0.0, 0.0)",
        ".setf c10(0.0, 0.0, 0.0, 0.0)",
        ".constf const_c94(2.0, 2.0, 2.0, 2.0)",
        ".consti const_i3(4, 0, 1, 0)",
        ".setb b5 true",
        ".out out_position position o0",
        ".out out_texcoord0 texcoord0 o2.xy",
        ".out - texcoord0w o2.z",
        ".proc main",
        "    mov out_texcoord0.xy, mdl$view[3]",
        "    end",
        ".end",
    ];
    assert_eq!(lines, expected, "\n{}", listing.text);
    // Only `overlap` (inside `mdl$view`) cannot be reproduced.
    assert_eq!(listing.notes.len(), 1, "{:?}", listing.notes);
    assert!(listing.notes[0].contains("overlap"));
}

#[test]
fn geometry_shaders_get_gsh_and_outputs_limited_to_o6() {
    let mut e = vs(0, 4);
    e.kind = ShaderKind::Geometry;
    e.gs_mode = GsMode::Fixed;
    e.gs_fixed_start = 0;
    e.gs_fixed_num = 4;
    e.merge_outmaps = 1;
    e.outputs = vec![OutputEntry {
        semantic: OutputSemantic::Dummy,
        register: 1,
        mask: 0xF,
        unknown: 0,
    }];
    e.output_mask = 0b10;
    e.uniforms = vec![UniformEntry {
        symbol_offset: 0,
        start: 0x10 + 48,
        end: 0x10 + 48,
        name: "scale".into(),
    }];
    let instrs = [
        Instr::SetEmit {
            vertex_id: 2,
            prim_emit: true,
            winding: true,
        },
        Instr::Emit,
        Instr::End,
        mov(dst(DstReg::Output(9), 0xF), src(SrcReg::Temp(0)), 0),
    ];
    let (code, descs) = program(&instrs);
    let dvlb = file(code, descs, vec![e]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    let lines = code_lines(&listing.text);
    assert_eq!(lines[0], ".gsh fixed c48 c0 4");
    assert_eq!(lines[1], ".fvec scale");
    assert_eq!(lines[2], ".out out_dummy dummy o1");
    assert!(
        lines.contains(&"    setemit 2, prim inv".to_string()),
        "{lines:?}"
    );
    assert!(lines.contains(&"    emit".to_string()));
    assert!(
        listing.text.contains("UNEXPRESSIBLE: mov o9, r0"),
        "{}",
        listing.text
    );
}

#[test]
fn labels_from_the_table_name_procs_and_jump_targets() {
    use Instr as I;
    let mut e = vs(1, 0); // nihstro: endmain 0
    let label = |name: &str, location| Label {
        id: 0,
        unknown: 0,
        location,
        size: 0,
        symbol_offset: 0,
        name: name.into(),
    };
    e.labels = vec![
        label("start", 1),
        label("skip", 3),
        label("bad name", 2),
        label("tail", 4),
    ];
    let cx = Cond {
        op: CondOp::Y,
        ref_x: true,
        ref_y: false,
    };
    let instrs = [I::Nop, I::JmpC { cond: cx, dst: 3 }, I::Nop, I::End, I::Nop];
    let (code, descs) = program(&instrs);
    let dvlb = file(code, descs, vec![e]);
    let listing = disassemble_listing(&dvlb, 0).unwrap();
    let lines = code_lines(&listing.text);
    assert_eq!(
        lines,
        [
            ".entry start",
            ".proc proc_000",
            "    nop",
            "    .proc start",
            "start:",
            "        jmpc !cmp.y, skip",
            "        nop",
            "skip:",
            "        end",
            "tail:",
            "        nop",
            "    .end",
            ".end",
        ],
        "\n{}",
        listing.text
    );
}

#[test]
fn several_dvles_put_the_code_in_the_geometry_file_when_it_emits() {
    use Instr as I;
    let v = vs(0, 2);
    let mut g = vs(2, 4);
    g.kind = ShaderKind::Geometry;
    let setemit = I::SetEmit {
        vertex_id: 0,
        prim_emit: false,
        winding: false,
    };
    let instrs = [I::Nop, I::End, setemit, I::End];
    let (code, descs) = program(&instrs);
    let dvlb = file(code, descs, vec![v, g]);
    let all = disassemble_all(&dvlb);
    let file0 = all.split("; ======== file 1").next().unwrap();
    assert!(
        file0.contains("; ======== file 0: DVLE 0 (vertex shader) ========"),
        "{all}"
    );
    assert!(file0.contains("; (no code in this file"), "{all}");
    assert!(!file0.contains(".proc"), "{all}");
    let file1 = all.split("; ======== file 1").nth(1).unwrap();
    assert!(file1.contains("geometry shader), holds the code"), "{all}");
    assert!(file1.contains(".entry proc_002"), "{all}");
    assert!(
        file1.contains(".proc main") && file1.contains(".proc proc_002"),
        "{all}"
    );
    // A single DVLE listing of the GS names its entry `main`.
    let gs = disassemble(&dvlb, 1).unwrap();
    assert!(gs.contains(".proc main\n    setemit 0 "), "{gs}");
    assert_eq!(
        disassemble(&dvlb, 2),
        Err(DisasmError::NoSuchDvle { index: 2, count: 2 })
    );
}

#[test]
fn instruction_text_shows_raw_targets() {
    use Instr as I;
    assert_eq!(
        instruction_text(&I::Call { dst: 16, num: 3 }),
        "call 0x010, 3"
    );
    assert_eq!(
        instruction_text(&I::IfU {
            b: 0,
            dst: 8,
            num: 2
        }),
        "ifu b0, 0x008, 2"
    );
    assert_eq!(
        instruction_text(&I::Loop {
            i: 2,
            dst: 12,
            num: 0
        }),
        "loop i2, 0x00C"
    );
    assert_eq!(
        instruction_text(&I::JmpU {
            b: 1,
            dst: 5,
            invert: false
        }),
        "jmpu b1, 0x005"
    );
    let mad = I::Mad {
        dst: dst(DstReg::Output(0), 0b1110),
        src1: src(SrcReg::Temp(1)),
        src2: Src {
            reg: SrcReg::Const(10),
            rel: RelAddr::A0Y,
            swizzle: [1, 1, 1, 1],
            negate: true,
        },
        src3: src(SrcReg::Input(3)),
        inverted: false,
        desc: 4,
    };
    assert_eq!(instruction_text(&mad), "mad o0.xyz, r1, -c10[a0.y].y, v3");
    let cmp = I::Cmp {
        src1: src(SrcReg::Const(1)),
        src2: src(SrcReg::Temp(0)),
        op_x: crate::decode::CmpOp::Lt,
        op_y: crate::decode::CmpOp::Unk6,
        desc: 0,
    };
    assert!(
        instruction_text(&cmp).starts_with("cmp ("),
        "{}",
        instruction_text(&cmp)
    );
}

#[test]
fn raw_listing_lists_words_and_descriptors() {
    let instrs = [
        mov(dst(DstReg::Temp(0), 0b1000), src(SrcReg::Input(1)), 0),
        Instr::End,
    ];
    let (code, descs) = program(&instrs);
    let dvlb = file(code.clone(), descs.clone(), vec![vs(0, 2)]);
    let raw = raw_listing(&dvlb);
    assert!(
        raw.contains(&format!(
            "  000   {:08X}  00    {:08X}  mov r0.x, v1",
            code[0], descs[0]
        )),
        "{raw}"
    );
    assert!(
        raw.contains("  001   88000000  --    --------  end"),
        "{raw}"
    );
    assert!(raw.contains(";   00"), "{raw}");
}

#[test]
fn empty_programs_and_files_without_dvles() {
    let dvlb = file(Vec::new(), Vec::new(), vec![vs(0, 0)]);
    let t = disassemble(&dvlb, 0).unwrap();
    assert!(t.contains("; (empty program)"), "{t}");
    let dvlb = file(vec![0x8800_0000], Vec::new(), Vec::new());
    let t = disassemble_all(&dvlb);
    assert!(t.contains("no DVLE"), "{t}");
    assert!(
        t.contains(".proc proc_000") || t.contains(".proc main"),
        "{t}"
    );
}

#[test]
fn descriptor_tables_picasso_would_not_write_are_flagged() {
    let r0 = dst(DstReg::Temp(0), 0xF);
    let r0x = dst(DstReg::Temp(0), 0b1000);
    let v0 = src(SrcReg::Input(0));
    let v0_w = Src {
        swizzle: [3, 3, 3, 3],
        ..v0
    };
    let exact = |instrs: &[Instr], descs: Vec<u32>| {
        let code = words(instrs);
        let n = code.len() as u32;
        disassemble_listing(&file(code, descs, vec![vs(0, n)]), 0).unwrap()
    };
    // `mov r0.x, v0.w` then `mov r0, v0`: the second is incompatible with descriptor 0 on the
    // x lane (w vs x), so picasso allocates descriptor 1.
    let instrs = [mov(r0x, v0_w, 0), mov(r0, v0, 1), Instr::End];
    let l = exact(&instrs, vec![0x0000_07E8, 0x0000_036F]);
    assert!(l.code_exact, "{:?}", l.notes);
    // Two copies of one descriptor (as nihstro writes them): picasso would share slot 0.
    let instrs_split = [mov(r0, v0, 0), mov(r0, v0, 1), Instr::End];
    let l = exact(&instrs_split, vec![0x0000_036F, 0x0000_036F]);
    assert!(!l.code_exact);
    assert!(
        l.notes[0].contains("0x001 gets 0 instead of 1"),
        "{:?}",
        l.notes
    );
    // `mov r0.x, v0.w` then `mov r0.x, v0.wxyz`: compatible (only lane x is used), so picasso
    // shares descriptor 0 and keeps the first instruction's unused lanes.
    let v0_wxyz = Src {
        swizzle: [3, 0, 1, 2],
        ..v0
    };
    let instrs = [mov(r0x, v0_w, 0), mov(r0x, v0_wxyz, 0), Instr::End];
    let l = exact(&instrs, vec![0x0000_07E8]);
    assert!(l.code_exact, "{:?}", l.notes);
    // Extra bits in a field no instruction uses (src3 of a MOV) are flagged.
    let l = exact(&instrs, vec![0x0000_07E8 | 0x0D80_0000]);
    assert!(
        l.notes[0].contains("operand descriptor 0 as 000007E8"),
        "{:?}",
        l.notes
    );
    // Too many descriptors: picasso writes only the ones it needs.
    let l = exact(&instrs, vec![0x0000_07E8, 0x36F]);
    assert!(
        l.notes[0].contains("1 operand descriptors instead of 2"),
        "{:?}",
        l.notes
    );
}

#[test]
fn mad_descriptors_are_moved_below_32_like_picasso() {
    // 32 distinct MOV descriptors, then a MAD whose descriptor picasso first allocates at 32
    // and then swaps with slot 0 (the first non-MAD slot), renumbering the MOV at address 0.
    let mut instrs = Vec::new();
    let mut table = Vec::new();
    for i in 0..32u8 {
        let sw = [i & 3, (i >> 2) & 3, (i >> 4) & 3, 0];
        instrs.push(mov(
            dst(DstReg::Temp(0), 0xF),
            Src {
                swizzle: sw,
                ..src(SrcReg::Input(0))
            },
            i,
        ));
        let sel = u32::from(crate::decode::swizzle_to_selector(sw));
        table.push(0xF | (sel << 5));
    }
    let mad = Instr::Mad {
        dst: dst(DstReg::Temp(1), 0xF),
        src1: src(SrcReg::Temp(2)),
        src2: src(SrcReg::Temp(3)),
        src3: src(SrcReg::Temp(4)),
        inverted: false,
        desc: 0,
    };
    instrs.push(mad);
    instrs.push(Instr::End);
    let mut code = words(&instrs);
    // As picasso leaves it: the MAD in slot 0, the first MOV's descriptor moved to slot 32.
    let mad_desc = 0xF | (0x1B << 5) | (0x1B << 14) | (0x1B << 23);
    let mov0 = table[0];
    table[0] = mad_desc;
    table.push(mov0);
    code[0] = (code[0] & !0x7F) | 32;
    let n = code.len() as u32;
    let l = disassemble_listing(&file(code, table, vec![vs(0, n)]), 0).unwrap();
    assert!(l.code_exact, "{:?}", l.notes);
}
