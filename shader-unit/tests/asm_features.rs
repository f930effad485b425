//! Feature tests of the assembler. Each source in `tests/asm_fixtures/features/` exercises one
//! part of picasso's behaviour; the expected files in `picasso-2.7.1-built/` were written by
//! picasso 2.7.1 itself (see PROVENANCE.md), and the tests also check the decisive fields by
//! name so that a failure says what went wrong.

use std::path::Path;

use shader_unit::asm::{
    AsmConstant, AsmOptions, Assembly, ShaderKind, UniformKind, assemble, assemble_str,
    assemble_with,
};
use shader_unit::decode::{RawInstr, op};

fn fixture(rel: &str) -> Vec<u8> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/asm_fixtures")
        .join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Assembles feature sources and checks the bytes against picasso's file.
fn feature(files: &[&str], expected: &str) -> Assembly {
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            (
                f.to_string(),
                String::from_utf8(fixture(&format!("features/{f}"))).unwrap(),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    let a = assemble(&refs).unwrap_or_else(|e| panic!("{}", e.render()));
    assert!(a.warnings.is_empty(), "{:?}", a.warnings);
    assert!(
        a.to_shbin() == fixture(&format!("picasso-2.7.1-built/{expected}")),
        "{expected}: bytes differ from picasso's"
    );
    a
}

fn opcode(w: u32) -> u32 {
    w >> 26
}

#[test]
fn inverted_forms_are_chosen_automatically() {
    let a = feature(&["inverted.v.pica"], "features_inverted.shbin");
    let ops: Vec<u32> = a.program.iter().map(|&w| opcode(w)).collect();
    assert_eq!(ops[0], op::DPHI);
    assert_eq!(ops[1], op::DPH);
    assert_eq!(ops[2], op::DPH, "`dphi` with the uniform in src1 stays DPH");
    assert_eq!(ops[3], op::DSTI);
    assert_eq!(ops[4], op::SGEI);
    assert_eq!(ops[5], op::SLTI);
    assert_eq!(RawInstr(a.program[5]).idx(), 1, "a0.x on src2 of SLTI");
    assert_eq!(ops[6] & !7, op::MAD);
    assert_eq!(ops[7] & !7, op::MADI);
    assert_eq!(ops[8] & !7, op::MADI);
    assert_eq!(RawInstr(a.program[8]).mad_idx(), 3, "aL on src3 of MADI");
    assert_eq!(
        RawInstr(a.program[8]).madi_src3(),
        0x20 + 3,
        "c2[aL+1] is c3 relative to aL"
    );
    assert_eq!(ops[9] & !7, op::MAD);
}

#[test]
fn padding_nops_where_picasso_puts_them() {
    let a = feature(&["padding.v.pica"], "features_padding.shbin");
    let nop = RawInstr::format0(op::NOP).0;
    // helper: `call leaf` + padding NOP; leaf: a single padding NOP.
    assert_eq!(opcode(a.program[0]), op::CALL);
    assert_eq!(a.program[1], nop);
    assert_eq!(a.program[2], nop);
    let call = RawInstr(a.program[0]);
    assert_eq!(
        (call.flow_dst(), call.num()),
        (2, 1),
        "call leaf: DST 2, NUM 1"
    );
    // main starts at 3: `ifu b0` with an empty body gets a NOP, closing at 5.
    let e = &a.entries[0];
    assert_eq!(e.entry_start, 3);
    assert_eq!(opcode(a.program[3]), op::IFU);
    assert_eq!(a.program[4], nop);
    assert_eq!(RawInstr(a.program[3]).flow_dst(), 5);
    assert_eq!(e.entry_end as usize, a.program.len());
}

#[test]
fn mad_descriptors_are_moved_below_32() {
    let a = feature(&["madswap.v.pica"], "features_madswap.shbin");
    assert!(a.opdescs.len() > 32);
    for &w in &a.program {
        let r = RawInstr(w);
        if opcode(w) >= 0x30 {
            assert!(r.mad_desc() < 32);
        } else if opcode(w) < 0x20 {
            // Every descriptor index points into the table.
            assert!((r.desc() as usize) < a.opdescs.len());
        }
    }
}

#[test]
fn uniforms_constants_and_entries() {
    let a = feature(
        &["uniforms_a.v.pica", "uniforms_b.v.pica", "geo_fixed.g.pica"],
        "features_uniforms.shbin",
    );
    assert_eq!(a.entries.len(), 3);
    let (va, vb, g) = (&a.entries[0], &a.entries[1], &a.entries[2]);
    // Shared vertex-shader space: proj is c0-c3 in both files (DVLE numbering c0 = 0x10).
    let proj = |e: &shader_unit::asm::AsmEntry| {
        e.uniforms
            .iter()
            .find(|u| u.name == "proj")
            .map(|u| (u.first, u.last))
    };
    assert_eq!(proj(va), Some((0x10, 0x13)));
    assert_eq!(proj(vb), Some((0x10, 0x13)));
    // `$` becomes `.`; `_private` is hidden; inputs are listed by v register.
    assert!(va.uniforms.iter().any(|u| u.name == "model.view"));
    assert!(!va.uniforms.iter().any(|u| u.name.starts_with('_')));
    assert!(
        va.uniforms
            .iter()
            .any(|u| u.name == "nrm" && u.first == 5 && u.kind == UniformKind::Input)
    );
    assert_eq!(va.input_mask, 0b10_0011);
    // Constants from c95 down: k0 = c95, k1 = c94, then the 3-element array c91-c93.
    assert!(matches!(
        va.constants[0],
        AsmConstant::Float {
            reg: 95,
            value: [0, 0x3F0000, 0xBF0000, 0x3E0000]
        }
    ));
    assert!(matches!(
        va.constants[1],
        AsmConstant::Float { reg: 94, .. }
    ));
    assert!(matches!(
        va.constants[2],
        AsmConstant::Int {
            reg: 3,
            value: [3, 0, 1, 0]
        }
    ));
    let array: Vec<u8> = va
        .constants
        .iter()
        .filter_map(|c| match c {
            AsmConstant::Float { reg, .. } if *reg < 94 && *reg > 11 => Some(*reg),
            _ => None,
        })
        .collect();
    assert_eq!(array, [91, 92, 93]);
    assert!(va.constants.contains(&AsmConstant::Bool {
        reg: 7,
        value: true
    }));
    assert!(va.constants.contains(&AsmConstant::Int {
        reg: 2,
        value: [4, 5, 6, 7]
    }));
    // The second file's constant reuses c95.
    assert!(matches!(
        vb.constants[0],
        AsmConstant::Float { reg: 95, .. }
    ));
    assert_eq!(vb.entry_start, va.entry_end);
    // Geometry shader: fixed mode, own uniform space from c20, dummy output merges outmaps.
    assert_eq!(g.kind, ShaderKind::Geometry);
    assert_eq!((g.gsh_mode, g.gsh_fixed_start, g.gsh_fixed_num), (2, 0, 4));
    assert!(g.merge_outmaps);
    assert_eq!(
        g.uniforms
            .iter()
            .find(|u| u.name == "gproj")
            .map(|u| u.first),
        Some(0x10 + 20)
    );
    // Output table: texcoord0w wired to o2.z, view to o3.xyz.
    assert!(
        va.outputs
            .iter()
            .any(|o| o.semantic == 4 && o.register == 2 && o.mask == 0b0100)
    );
    assert!(
        va.outputs
            .iter()
            .any(|o| o.semantic == 8 && o.register == 3 && o.mask == 0b0111)
    );
}

#[test]
fn nodvle_files_contribute_code_only() {
    let a = feature(
        &["shared_code.pica", "uses_shared.v.pica"],
        "features_nodvle.shbin",
    );
    assert_eq!(a.entries.len(), 1);
    assert_eq!(a.entries[0].source, "uses_shared.v.pica");
    assert_eq!(
        RawInstr(a.program[2]).flow_dst(),
        0,
        "call shared_helper at word 0"
    );
    assert_eq!(RawInstr(a.program[2]).num(), 2);
}

#[test]
fn no_nop_option_warns_instead() {
    let src = ".proc main\n\tifu b0\n\t.end\n\tend\n.end\n";
    let a = assemble_with(&[("n.pica", src)], AsmOptions { auto_nop: false }).unwrap();
    assert_eq!(a.program.len(), 2);
    assert_eq!(a.warnings.len(), 1);
    assert!(a.warnings[0].message.contains("padding NOP"));
}

#[test]
fn assemble_str_gives_a_runnable_program() {
    let p = assemble_str(
        "
        .constf half(0.5, 0.5, 0.5, 0.5)
        .out outpos position
        .out outclr color.rgb
        .proc main
            mul outpos, half, v0
            mov outclr.xyz, v1
            end
        .end
        ",
    )
    .unwrap();
    assert_eq!(p.program.len(), 3);
    assert_eq!((p.entry_point, p.entry_end), (0, 3));
    assert_eq!(p.outputs.len(), 2);
    assert_eq!((p.outputs[1].register, p.outputs[1].mask), (1, 0b0111));
    assert_eq!(
        p.constants,
        vec![AsmConstant::Float {
            reg: 95,
            value: [0x3E0000; 4]
        }]
    );
    let mul = RawInstr(p.program[0]);
    assert_eq!(opcode(p.program[0]), op::MUL);
    assert_eq!((mul.src1(), mul.src2(), mul.dst()), (0x20 + 95, 0, 0));
    assert_eq!(p.opdescs[mul.desc() as usize] & 0xF, 0xF);
}

#[test]
fn accepts_what_picasso_wrongly_rejects() {
    // picasso 2.7.1 rejects v15 (off by one) and explicit o8-o15 outputs whose mask overlaps the
    // register 8 below (32-bit bookkeeping overflow); both are valid hardware configurations.
    let p = assemble_str(
        ".out p position\n.out - dummy o8\n.proc main\n\tmov p, v15\n\tmov o8, v15\n\tend\n.end\n",
    )
    .unwrap();
    assert_eq!(RawInstr(p.program[0]).src1(), 15);
    assert_eq!(p.entry.output_mask, 0x101);
}
