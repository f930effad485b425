//! Error messages of the assembler, as snapshots: one per kind of mistake. Each snapshot shows
//! every diagnostic rendered the way `picaview asm` prints it (`file:line:column: error: ...`,
//! the source line and a caret under the offending token).

use shader_unit::asm::{AsmErrors, assemble};

/// Assembles `src` (as `test.v.pica`) expecting failure, and renders the diagnostics.
fn errors_of(src: &str) -> String {
    match assemble(&[("test.v.pica", src)]) {
        Ok(_) => panic!("expected an error for:\n{src}"),
        Err(e) => e.render(),
    }
}

fn check(name: &str, src: &str) {
    insta::assert_snapshot!(name, errors_of(src));
}

/// Wraps instructions in a minimal vertex shader.
fn in_main(body: &str) -> String {
    format!(".out outpos position\n.proc main\n{body}\n\tend\n.end\n")
}

#[test]
fn unknown_instruction() {
    check("unknown_instruction", &in_main("\tmvo r0, r1"));
}

#[test]
fn unknown_directive() {
    check(
        "unknown_directive",
        ".fvecs proj[4]\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn instruction_outside_block() {
    check(
        "instruction_outside_block",
        "mov r0, r1\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn unknown_register() {
    check("unknown_register", &in_main("\tmov r0, q5"));
}

#[test]
fn register_out_of_range() {
    check(
        "register_out_of_range",
        &in_main("\tmov r16, r1\n\tmov r0, c96\n\tfor i8\n\t.end\n\tmov r0, i5"),
    );
}

#[test]
fn missing_operand() {
    check("missing_operand", &in_main("\tadd r0, r1"));
}

#[test]
fn too_many_operands() {
    check("too_many_operands", &in_main("\tmov r0, r1, r2"));
}

#[test]
fn invalid_swizzle() {
    check(
        "invalid_swizzle",
        &in_main("\tmov r0, r1.xyzwx\n\tmov r0.xk, r1"),
    );
}

#[test]
fn uniform_in_narrow_operand() {
    check(
        "uniform_in_narrow_operand",
        &in_main("\tadd r0, r1, c0\n\tmad r0, c1, r1, r2"),
    );
}

#[test]
fn two_uniforms() {
    check(
        "two_uniforms",
        &in_main("\tdp4 r0, c0, c1\n\tmad r0, r1, c0, c1"),
    );
}

#[test]
fn two_input_registers() {
    check("two_input_registers", &in_main("\tadd r0, v0, v1"));
}

#[test]
fn relative_addressing_not_allowed() {
    check(
        "relative_addressing_not_allowed",
        &in_main("\tmov r0, r1[a0.x]\n\tmov r0[aL], c0\n\tadd r0, c0, r1[a0.y]"),
    );
}

#[test]
fn bad_register_offset() {
    check(
        "bad_register_offset",
        &in_main("\tmov r0, c4[-1]\n\tmov r0, c4[a0.x+-2]\n\tmov r0, c4[1"),
    );
}

#[test]
fn destination_not_writable() {
    check(
        "destination_not_writable",
        &in_main("\tmov c0, r0\n\tmov v0, r0"),
    );
}

/// picasso 2.7.1 accepts the other register file's letter (both share numbers 0x00-0x0F):
/// reading `o1` reads v1, writing `v0.w` writes o0.w, `.in x o3` is v3 and `.out - color v2`
/// is o2. They assemble to picasso's bytes with a warning each.
#[test]
fn swapped_register_files_are_warnings() {
    let src = ".in x o3\n.out - color v2\n.out outpos position\n.proc main\n\tmov r0, o1\n\tmov v0.w, r0\n\tend\n.end\n";
    let asm = assemble(&[("test.v.pica", src)]).expect("picasso accepts this source");
    let warnings: Vec<String> = asm.warnings.iter().map(|w| w.render()).collect();
    assert_eq!(warnings.len(), 4, "{warnings:?}");
    assert!(warnings[0].contains("`.in` takes v3"), "{warnings:?}");
    assert!(warnings[1].contains("`.out` takes o2"), "{warnings:?}");
    assert!(warnings[2].contains("this reads v1"), "{warnings:?}");
    assert!(warnings[3].contains("this writes o0"), "{warnings:?}");
    let same = assemble(&[(
        "test.v.pica",
        ".in x v3\n.out - color o2\n.out outpos position\n.proc main\n\tmov r0, v1\n\tmov o0.w, r0\n\tend\n.end\n",
    )])
    .unwrap();
    assert_eq!(asm.to_shbin(), same.to_shbin());
}

/// What picasso 2.7.1 accepts is accepted: upper-case register letters (`C5` is register 5,
/// the register-file offset skipped) and register numbers with text after them or in octal/hex
/// (`r1x` = r1, `r010` = r8, `c0x1F` = c31) assemble to picasso's bytes with a warning each.
#[test]
fn picasso_register_misreadings_assemble_with_warnings() {
    let cases = [
        ("\tmov R0, C5", "\tmov o0, v5", 2, "upper-case"),
        ("\tmov r1x, r2", "\tmov r1, r2", 1, "read as `r1`"),
        ("\tmov r0, r010", "\tmov r0, r8", 1, "read as `r8`"),
        ("\tmov r0, c0x1F", "\tmov r0, c31", 1, "read as `c31`"),
        ("\tmov R20, r1", "\tmov r4, r1", 1, "register 0x14"),
        (
            "\tmov r0, C40[a0.x]",
            "\tmov r0, c8[a0.x]",
            1,
            "register 0x28",
        ),
        ("\tmov r0.x, r1x.y", "\tmov r0.x, r1.y", 1, "read as `r1`"),
    ];
    for (odd, canonical, warnings, says) in cases {
        let a = assemble(&[("test.v.pica", in_main(odd).as_str())])
            .unwrap_or_else(|e| panic!("{odd}: {}", e.render()));
        let b = assemble(&[("test.v.pica", in_main(canonical).as_str())]).unwrap();
        assert_eq!(a.program, b.program, "{odd}");
        assert_eq!(a.opdescs, b.opdescs, "{odd}");
        assert_eq!(a.warnings.len(), warnings, "{odd}: {:?}", a.warnings);
        assert!(
            a.warnings.iter().any(|w| w.message.contains(says)),
            "{odd}: {:?}",
            a.warnings
        );
    }
    // Still errors: no digit, relative addressing on a non-uniform, numbers past 255.
    for bad in ["\tmov r0, Cx", "\tmov r0, R1[a0.x]", "\tmov r0, c0x100"] {
        assert!(
            assemble(&[("test.v.pica", in_main(bad).as_str())]).is_err(),
            "{bad}"
        );
    }
}

#[test]
fn undefined_label() {
    check(
        "undefined_label",
        &in_main("\tjmpc cmp.x, nowhere\n\tjmpu !b0, elsewhere"),
    );
}

#[test]
fn undefined_procedure() {
    check(
        "undefined_procedure",
        &in_main("\tcall helper\n\tcallu b1, other"),
    );
}

#[test]
fn undefined_entry_point() {
    check(
        "undefined_entry_point",
        ".entry vmain\n.proc main\n\tend\n.end\n",
    );
    check("missing_main", ".proc vmain\n\tend\n.end\n");
}

#[test]
fn duplicate_names() {
    check(
        "duplicate_names",
        ".fvec proj[4]\n.alias proj r0\n.constf proj(1, 2, 3, 4)\n.proc main\nl1:\nl1:\tend\n.end\n.proc main\n\tnop\n.end\n",
    );
}

#[test]
fn alias_named_like_a_register() {
    check(
        "alias_named_like_a_register",
        ".alias r5x r0\n.alias 9lives r0\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn unclosed_blocks() {
    check(
        "unclosed_blocks",
        ".proc main\n\tifu b0\n\t\tfor i0\n\t\t\tnop\n\t.end\n\tend\n",
    );
}

#[test]
fn unmatched_end_and_else() {
    check(
        "unmatched_end_and_else",
        ".proc main\n\tend\n.end\n.end\n.proc other\n\t.else\n\tifc cmp.x\n\t\tnop\n\t.else\n\t\tnop\n\t.else\n\t.end\n.end\n",
    );
}

#[test]
fn invalid_condition() {
    check(
        "invalid_condition",
        &in_main("\tifc cmp.z\n\t.end\n\tbreakc cmp.x && cmp.x\n\tjmpc cmp, l\nl:"),
    );
}

#[test]
fn invalid_comparison() {
    check(
        "invalid_comparison",
        &in_main("\tcmp r0, eqq, lt, r1\n\tcmp r0, lt, gte, r1"),
    );
}

#[test]
fn inverted_uniform_condition() {
    check(
        "inverted_uniform_condition",
        &in_main("\tifu !b0\n\t.end\n\tcallu !b1, main"),
    );
}

#[test]
fn wrong_uniform_kind() {
    check(
        "wrong_uniform_kind",
        &in_main("\tfor b0\n\t.end\n\tifu i0\n\t.end"),
    );
}

#[test]
fn invalid_mova_destination() {
    check(
        "invalid_mova_destination",
        &in_main("\tmova a0.z, r0\n\tmova r0, r1"),
    );
}

#[test]
fn bad_setemit() {
    check(
        "bad_setemit",
        ".gsh point c0\n.proc main\n\tsetemit 3\n\tsetemit 0, prim, inv\n\temit\n\tend\n.end\n",
    );
}

#[test]
fn bad_outputs() {
    check(
        "bad_outputs",
        ".out a position\n.out b colour\n.out c texcoord0 o0.x\n.out d color o7\n.out e color r0\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn bad_inputs() {
    check(
        "bad_inputs",
        ".in pos v16\n.in col o1\n.in 2d\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn bad_gsh() {
    check(
        "bad_gsh_after_declarations",
        ".fvec x\n.gsh point c0\n.proc main\n\tend\n.end\n",
    );
    check(
        "bad_gsh_mode",
        ".gsh triangle c0\n.proc main\n\tend\n.end\n",
    );
    check(
        "bad_gsh_fixed",
        ".gsh fixed c10 c20 4\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn bad_constants() {
    check(
        "bad_constants",
        ".constf a(1.0, 2.0, 3.0)\n.constf d 1, 2, 3, 4\n.setf i0(1, 2, 3, 4)\n.setb b0 maybe\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn bad_constant_arrays() {
    check(
        "bad_constant_arrays",
        ".constfa arr\n.constfa empty[]\n.end\n.constfa two[2]\n.constfa (1, 2, 3, 4)\n.constfa (1, 2, 3, 4)\n.constfa (1, 2, 3, 4)\n.end\n.constfa big[200]\n.end\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn out_of_uniform_space() {
    check(
        "out_of_uniform_space",
        ".fvec big[90], more[10]\n.bool flags[17]\n.ivec ints[5]\n.proc main\n\tend\n.end\n",
    );
}

#[test]
fn invalid_label_name() {
    check(
        "invalid_label_name",
        ".proc main\n1st: nop\nmy label: end\n.end\n",
    );
}

#[test]
fn many_errors_in_one_run() {
    // Every mistake is reported, not only the first one; assembly continues after each.
    check(
        "many_errors_in_one_run",
        ".fvec proj[4]\n.out outpos position\n.proc main\n\tdp4 outpos.x, proj[0], v0\n\tdp4 outpos.y, proj[1], q0\n\tdp4 outpos.z, proj[2]\n\tdp4 outpos.w, proj[3], v0.xyzwq\n\tifc cmp.w\n\t\tnop\n\t.else\n\t\tmov r0, r1\n\t.end\n\tjmpc cmp.x, missing\n\tend\n.end\n",
    );
}

#[test]
fn errors_name_the_right_file() {
    let e: AsmErrors = assemble(&[
        ("a.v.pica", ".proc main\n\tcall helper\n\tend\n.end\n"),
        (
            "b.g.pica",
            ".gsh point c0\n.nodvle\n.proc helper\n\tmov r0, rr\n\tnop\n.end\n",
        ),
    ])
    .unwrap_err();
    insta::assert_snapshot!("errors_name_the_right_file", e.render());
}

#[test]
fn line_markers_renumber() {
    // `# N "file"` markers (from a C preprocessor) move diagnostics to the original source.
    check(
        "line_markers_renumber",
        "# 40 \"shader.pica.in\"\n.proc main\n\tmov r0, bogus\n\tend\n.end\n",
    );
}

#[test]
fn empty_input() {
    check("empty_input", "; nothing here\n");
}

#[test]
fn warnings_for_ignored_text() {
    let a = assemble(&[(
        "warn.v.pica",
        ".constf a(1.0f, 2, 3, 4) trailing\n.proc main\n\tmov r0, c0[1]junk.x\n\tend\n.end\n",
    )])
    .unwrap();
    let text: Vec<String> = a.warnings.iter().map(|w| w.render()).collect();
    insta::assert_snapshot!("warnings_for_ignored_text", text.join("\n"));
}
