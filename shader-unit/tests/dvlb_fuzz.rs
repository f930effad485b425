//! Property tests: arbitrary bytes and mutated real files never make the parser or the
//! disassembler panic (or hang); arbitrary program words always disassemble to a listing whose
//! address map is consistent.

#[path = "fixtures/list.rs"]
mod fixtures;

use proptest::prelude::*;
use shader_unit::disasm::{disassemble_all, disassemble_listing, instruction_text, raw_listing};
use shader_unit::dvlb::{Dvlb, ShaderFile, parse_shader_file};

/// Runs every consumer of a parse result.
fn exercise(bytes: &[u8]) {
    if let Ok(file) = parse_shader_file(bytes) {
        let dvlb = match file {
            ShaderFile::Dvlb(d) => d,
            ShaderFile::Dvoj(d) => d.to_dvlb(),
        };
        let all = disassemble_all(&dvlb);
        assert!(!all.is_empty());
        let _ = raw_listing(&dvlb);
        for i in 0..dvlb.dvles.len().min(4) {
            let listing = disassemble_listing(&dvlb, i).unwrap();
            check_address_map(&listing.text, &listing.address_lines);
        }
    }
}

fn check_address_map(text: &str, address_lines: &[usize]) {
    let lines: Vec<&str> = text.lines().collect();
    for (addr, &line) in address_lines.iter().enumerate() {
        let l = lines.get(line).copied().unwrap_or("");
        assert!(
            l.contains(&format!("; 0x{addr:03X}")),
            "address 0x{addr:03X} -> line {line}: {l:?}"
        );
    }
}

/// A DVLB header with `n` DVLE offsets pointing into the buffer, followed by random bytes, so
/// that the parser gets past the first checks more often than with pure noise.
fn dvlb_like() -> impl Strategy<Value = Vec<u8>> {
    (
        1u32..4,
        proptest::collection::vec(any::<u8>(), 0..600),
        proptest::collection::vec(0u32..700, 4),
    )
        .prop_map(|(n, body, offs)| {
            let mut b = b"DVLB".to_vec();
            b.extend_from_slice(&n.to_le_bytes());
            for &o in offs.iter().take(n as usize) {
                b.extend_from_slice(&o.to_le_bytes());
            }
            b.extend_from_slice(b"DVLP");
            b.extend_from_slice(&body);
            b
        })
}

/// A real fixture with up to 12 bytes replaced and possibly truncated.
fn mutated_real() -> impl Strategy<Value = Vec<u8>> {
    let edits = proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..12);
    (
        0..fixtures::SHBINS.len(),
        edits,
        any::<prop::sample::Index>(),
        any::<bool>(),
    )
        .prop_map(|(which, edits, cut, truncate)| {
            let mut b = fixtures::read(fixtures::SHBINS[which]);
            for (i, v) in edits {
                let at = i.index(b.len());
                b[at] = v;
            }
            if truncate {
                b.truncate(cut.index(b.len() + 1));
            }
            b
        })
}

/// A real fixture with one header word replaced by an extreme value.
fn extreme_header_word() -> impl Strategy<Value = Vec<u8>> {
    let values = prop_oneof![
        Just(0u32),
        Just(u32::MAX),
        Just(0x8000_0000),
        Just(0x7FFF_FFFF),
        Just(0xFFFF_FFF0),
        0u32..0x400,
        any::<u32>()
    ];
    (0..fixtures::SHBINS.len(), 0usize..0x100, values).prop_map(|(which, word, v)| {
        let mut b = fixtures::read(fixtures::SHBINS[which]);
        let at = (word * 4).min(b.len().saturating_sub(4));
        b[at..at + 4].copy_from_slice(&v.to_le_bytes());
        b
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..1024)) {
        exercise(&bytes);
    }

    #[test]
    fn dvlb_shaped_noise_never_panics(bytes in dvlb_like()) {
        exercise(&bytes);
    }

    #[test]
    fn mutated_real_files_never_panic(bytes in mutated_real()) {
        exercise(&bytes);
    }

    #[test]
    fn extreme_header_words_never_panic(bytes in extreme_header_word()) {
        exercise(&bytes);
    }

    /// Random program words (and descriptors) inside a real file's structure: every word gets
    /// a line, unknown opcodes and odd flow control included.
    #[test]
    fn arbitrary_programs_disassemble(
        words in proptest::collection::vec(any::<u32>(), 1..200),
        descs in proptest::collection::vec(any::<u32>(), 0..40),
        main in (0u32..220, 0u32..220),
    ) {
        let mut dvlb = Dvlb::parse(&fixtures::read(fixtures::SHBINS[0])).unwrap();
        dvlb.dvlp.code = words.clone();
        dvlb.dvlp.opdescs = descs
            .iter()
            .map(|&d| shader_unit::dvlb::OpdescEntry { descriptor: d, extra: 0 })
            .collect();
        dvlb.dvles[0].main_start = main.0;
        dvlb.dvles[0].main_end = main.1;
        let listing = disassemble_listing(&dvlb, 0).unwrap();
        prop_assert_eq!(listing.address_lines.len(), words.len());
        check_address_map(&listing.text, &listing.address_lines);
        let program = shader_unit::decode::Program::new(&words, &dvlb.operand_descriptors());
        for instr in program.instrs() {
            prop_assert!(!instruction_text(instr).is_empty());
        }
        // Block directives stay balanced.
        let opens = listing.text.lines().filter(|l| {
            let t = l.trim_start();
            t.starts_with(".proc ") || t.starts_with("ifu ") || t.starts_with("ifc ") || t.starts_with("for ")
        }).count();
        let ends = listing.text.lines().filter(|l| l.trim_start() == ".end").count();
        prop_assert_eq!(opens, ends, "{}", listing.text);
    }
}
