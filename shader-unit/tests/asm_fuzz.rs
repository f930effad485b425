//! Property tests: any text, however broken, assembles or fails with diagnostics — never a
//! panic, never a hang — and every diagnostic names a real position in the input.

use proptest::prelude::*;
use shader_unit::asm::{AsmOptions, assemble, assemble_with};

/// Source fragments that reach deep into the assembler when glued together at random.
const FRAGMENTS: &[&str] = &[
    ".proc main",
    ".proc",
    ".end",
    ".else",
    "end",
    "nop",
    "emit",
    "break",
    ".nodvle",
    ".gsh",
    ".gsh point c0",
    ".gsh variable c48 3",
    ".gsh fixed c48 c0 4",
    ".entry main",
    ".entry x",
    ".fvec a[4]",
    ".fvec b",
    ".ivec i",
    ".bool f[2]",
    ".constf k(1.0, 2.0, 3.0, 4.0)",
    ".consti n(3, 0, 1, 0)",
    ".constfa arr[]",
    ".constfa arr[2]",
    ".constfa (1, 2, 3, 4)",
    ".setf c3(1, 2, 3, 4)",
    ".seti i1(1, 2, 3, 4)",
    ".setb b2 true",
    ".alias x r0.xy",
    ".alias y c4.wzyx",
    ".in pos",
    ".in col v3",
    ".out o position",
    ".out - color o1.xy",
    ".out d dummy",
    "mov r0, v0",
    "mov o0, -c0[a0.x+2].yx",
    "add r1.xy, r0, c5",
    "dph r0, v1, c2",
    "mad r0, r1, c0[aL], r2",
    "mad r0, r1, r2, c3",
    "cmp c0, lt, ge, r1",
    "mova a0.xy, c1",
    "ifc cmp.x && !cmp.y",
    "ifu b0",
    "for i0",
    "breakc cmp.y",
    "call main",
    "callc cmp.x, main",
    "callu b3, main",
    "jmpc !cmp.x, lbl",
    "jmpu !b1, lbl",
    "lbl:",
    "x:",
    "setemit 1, prim inv",
    "setemit 0",
    "dp4 r0, a[1], r1",
    "rcp r0, x",
    "mov r0, arr[1]",
    "# 10 \"f.pica\"",
    "; comment",
    ",",
    "[",
    "]",
    "(",
    ")",
    "-",
    ".",
    ":",
    "c95[200]",
    "r15[1]",
    "v15",
    "o15",
    "b15",
    "i3",
    "0x7fffffff",
    "-2147483648",
    "99999999999999999999",
    "1e999",
    "nan",
    "\t",
    " ",
    "\0",
    "é",
    "\r",
];

fn glue() -> impl Strategy<Value = String> {
    prop::collection::vec(
        (
            prop::sample::select(FRAGMENTS),
            prop::sample::select(&[" ", ", ", "\n", "\n", "\n"][..]),
        ),
        0..60,
    )
    .prop_map(|parts| parts.into_iter().map(|(a, b)| format!("{a}{b}")).collect())
}

fn check_diagnostics(files: &[(&str, &str)]) {
    match assemble(files) {
        Ok(a) => {
            let bytes = a.to_shbin();
            assert_eq!(&bytes[..4], b"DVLB");
            assert_eq!(bytes.len() % 4, 0);
        }
        Err(e) => {
            assert!(e.errors().count() > 0);
            for d in e.iter() {
                let _ = d.render();
                let Some((_, text)) = files.iter().find(|(n, _)| *n == d.file) else {
                    continue;
                };
                if d.line == 0 || text.contains('#') || text.contains('\0') {
                    continue;
                }
                // The position exists in the input and the quoted line is that line.
                let line = text
                    .split('\n')
                    .nth(d.line as usize - 1)
                    .expect("line exists");
                assert_eq!(d.source_line.as_deref(), Some(line));
                assert!(d.column as usize <= line.chars().count() + 1, "{d:?}");
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        check_diagnostics(&[("fuzz.pica", &text)]);
    }

    #[test]
    fn glued_fragments_never_panic(a in glue(), b in glue()) {
        check_diagnostics(&[("a.pica", &a)]);
        check_diagnostics(&[("a.pica", &a), ("b.pica", &b)]);
        let _ = assemble_with(&[("a.pica", &a)], AsmOptions { auto_nop: false });
    }

    #[test]
    fn ascii_soup_never_panics(text in "[ -~\\t\\n]{0,400}") {
        check_diagnostics(&[("soup.pica", &text)]);
    }
}

#[test]
fn huge_declarations_stay_bounded() {
    // Sizes that would make a naive implementation allocate gigabytes or loop for long.
    let src = ".constfa big[2147483647]\n.end\n.fvec f[2147483647]\n.proc main\n\tmov r0, c0[2147483647]\n\tend\n.end\n";
    assert!(assemble(&[("big.pica", src)]).is_err());
    let many_lines = ".proc main\n".to_string() + &"\tnop\n".repeat(20_000) + "\tend\n.end\n";
    // More than 513 vertex-shader instructions is an error, reported once.
    let e = assemble(&[("long.pica", &many_lines)]).unwrap_err();
    assert_eq!(e.errors().count(), 1);
    assert_eq!(e[0].line, 515);
    let deep = ".proc main\n".to_string()
        + &"\tifu b0\n".repeat(100)
        + &"\t.end\n".repeat(100)
        + "\tend\n.end\n";
    assert!(assemble(&[("deep.pica", &deep)]).is_err());
}
