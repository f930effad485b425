//! Geometry shaders, rich control flow and multi-DVLE files: the real picasso sources of the
//! devkitPro 3ds-examples and mGBA (no binaries of them exist in the test material) are
//! assembled with `shader_unit::asm`, disassembled, split into files again and re-assembled; the
//! result must be byte-identical. This exercises `.gsh`, `setemit`/`emit`, `ifu`/`ifc` with
//! `.else`, `for`, `jmpc`/`jmpu`, `call`, MOVA/relative addressing and the sharing of one program
//! by several DVLEs.

#[path = "fixtures/list.rs"]
mod fixtures;

use shader_unit::asm::assemble_to_shbin;
use shader_unit::disasm::{disassemble_all, disassemble_listing};
use shader_unit::dvlb::{Dvlb, ShaderKind};

const EXAMPLES: &str = "devkitPro+3ds-examples/a9aaa0c/graphics/gpu";

/// Source sets assembled together (picasso: `-o out.shbin a.v.pica b.g.pica`).
fn source_sets() -> Vec<Vec<String>> {
    let ex = |p: &str| format!("{EXAMPLES}/{p}");
    let mut sets = vec![
        vec![
            ex("geoshader/source/program.v.pica"),
            ex("geoshader/source/program.g.pica"),
        ],
        vec![
            ex("particles/source/particle.v.pica"),
            ex("particles/source/particle.g.pica"),
        ],
        vec![
            ex("loop_subdivision/source/program.v.pica"),
            ex("loop_subdivision/source/program.g.pica"),
        ],
        vec![
            "mgba-emu+mgba/afd6f14/src/platform/3ds/uishader.v.pica".to_string(),
            "mgba-emu+mgba/afd6f14/src/platform/3ds/uishader.g.pica".to_string(),
        ],
    ];
    for single in [
        "both_screens/source/vshader.v.pica",
        "composite_scene/source/vshader.v.pica",
        "cubemap/source/skybox.v.pica",
        "fragment_light/source/vshader.v.pica",
        "immediate/source/vshader.v.pica",
        "mipmap_fog/source/vshader.v.pica",
        "normal_mapping/source/vshader.v.pica",
        "proctex/source/vshader.v.pica",
        "toon_shading/source/vshader.v.pica",
    ] {
        sets.push(vec![ex(single)]);
    }
    sets
}

fn read_text(rel: &str) -> String {
    String::from_utf8(fixtures::read(rel)).unwrap()
}

/// Splits [`disassemble_all`] output into its per-file sections.
fn split_files(all: &str) -> Vec<String> {
    let mut files: Vec<String> = Vec::new();
    for line in all.lines() {
        if line.starts_with("; ======== file ") || files.is_empty() {
            files.push(String::new());
        }
        let f = files.last_mut().unwrap();
        f.push_str(line);
        f.push('\n');
    }
    files
}

#[test]
fn real_sources_survive_assemble_disassemble_assemble() {
    for set in source_sets() {
        let texts: Vec<(String, String)> = set.iter().map(|p| (p.clone(), read_text(p))).collect();
        let inputs: Vec<(&str, &str)> = texts
            .iter()
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let original = assemble_to_shbin(&inputs).unwrap_or_else(|e| panic!("{set:?}: {e}"));
        let dvlb = Dvlb::parse(&original).unwrap();
        assert_eq!(dvlb.dvles.len(), set.len(), "{set:?}");

        let all = disassemble_all(&dvlb);
        assert!(!all.contains("UNEXPRESSIBLE"), "{set:?}\n{all}");
        assert!(!all.contains("WARNING"), "{set:?}\n{all}");
        let files = split_files(&all);
        assert_eq!(files.len(), set.len(), "{all}");
        let names: Vec<String> = (0..files.len()).map(|i| format!("file{i}.pica")).collect();
        let inputs: Vec<(&str, &str)> = names
            .iter()
            .zip(&files)
            .map(|(n, t)| (n.as_str(), t.as_str()))
            .collect();
        let rebuilt = assemble_to_shbin(&inputs).unwrap_or_else(|e| panic!("{set:?}: {e}\n{all}"));
        assert_eq!(rebuilt, original, "{set:?}\n{all}");

        // Each DVLE alone: a stand-alone source whose code and constants are exact.
        for index in 0..dvlb.dvles.len() {
            let listing = disassemble_listing(&dvlb, index).unwrap();
            assert!(!listing.text.contains("UNEXPRESSIBLE"), "{set:?} {index}");
            let alone = assemble_to_shbin(&[("alone.pica", &listing.text)])
                .unwrap_or_else(|e| panic!("{set:?} DVLE {index}: {e}\n{}", listing.text));
            let alone = Dvlb::parse(&alone).unwrap();
            assert_eq!(
                alone.dvlp.code, dvlb.dvlp.code,
                "{set:?} {index}\n{}",
                listing.text
            );
            assert_eq!(
                alone.dvles[0].constants, dvlb.dvles[index].constants,
                "{set:?} {index}"
            );
            assert_eq!(
                alone.dvles[0].outputs, dvlb.dvles[index].outputs,
                "{set:?} {index}"
            );
            // A vertex shader alone with code that uses SETEMIT becomes a (legacy) geometry
            // shader in picasso; the listing says so.
            let setemit_note = listing.notes.iter().any(|n| n.contains("SETEMIT"));
            if !setemit_note {
                assert_eq!(
                    alone.dvles[0].kind, dvlb.dvles[index].kind,
                    "{set:?} {index}"
                );
            }
            assert_eq!(
                listing.exact, !setemit_note,
                "{set:?} {index}: {:?}",
                listing.notes
            );
            assert!(listing.code_exact, "{set:?} {index}: {:?}", listing.notes);
        }
    }
}

#[test]
fn geometry_shader_listing_shows_the_structures() {
    let ex = |p: &str| read_text(&format!("{EXAMPLES}/{p}"));
    let v = ex("loop_subdivision/source/program.v.pica");
    let g = ex("loop_subdivision/source/program.g.pica");
    let bin = assemble_to_shbin(&[("program.v.pica", &v), ("program.g.pica", &g)]).unwrap();
    let dvlb = Dvlb::parse(&bin).unwrap();
    assert_eq!(dvlb.dvles[1].kind, ShaderKind::Geometry);
    let gs = disassemble_listing(&dvlb, 1).unwrap();
    assert!(gs.exact, "{:?}", gs.notes);
    let t = &gs.text;
    assert!(t.contains(".gsh variable c"), "{t}");
    assert!(t.contains("    ifc "), "{t}");
    assert!(t.contains("jmpc "), "{t}");
    assert!(t.contains("mova a0."), "{t}");
    let emits = t
        .lines()
        .filter(|l| l.trim_start().starts_with("emit "))
        .count();
    assert_eq!(emits, 11, "{t}");
}

#[test]
fn loop_subdivision_listing_snapshot() {
    let ex = |p: &str| read_text(&format!("{EXAMPLES}/{p}"));
    let v = ex("loop_subdivision/source/program.v.pica");
    let g = ex("loop_subdivision/source/program.g.pica");
    let bin = assemble_to_shbin(&[("program.v.pica", &v), ("program.g.pica", &g)]).unwrap();
    insta::assert_snapshot!(
        "loop_subdivision_all",
        disassemble_all(&Dvlb::parse(&bin).unwrap())
    );
}
