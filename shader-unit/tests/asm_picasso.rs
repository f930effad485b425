//! Byte-exact compatibility with picasso 2.7.1: every real source/binary pair assembles to the
//! identical file, and the geometry-shader / control-flow sources assemble without error.
//!
//! Fixtures live in `tests/asm_fixtures/` (see its PROVENANCE.md); nothing here needs
//! `/work/shared`.

use std::path::{Path, PathBuf};

use shader_unit::asm::{Assembly, ShaderKind, assemble};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/asm_fixtures")
}

fn read(rel: &str) -> Vec<u8> {
    std::fs::read(fixture_dir().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn read_text(rel: &str) -> String {
    String::from_utf8(read(rel)).unwrap()
}

/// Assembles the given fixture sources (file names as picasso would see them).
fn assemble_files(files: &[&str]) -> Assembly {
    let texts: Vec<(String, String)> = files
        .iter()
        .map(|f| (f.rsplit('/').next().unwrap().to_string(), read_text(f)))
        .collect();
    let refs: Vec<(&str, &str)> = texts
        .iter()
        .map(|(n, t)| (n.as_str(), t.as_str()))
        .collect();
    match assemble(&refs) {
        Ok(a) => a,
        Err(e) => panic!("{files:?} failed:\n{}", e.render()),
    }
}

/// The picasso pairs of `testdata/README.md` (source, committed binary).
const PAIRS: &[(&str, &str)] = &[
    (
        "antoniorand+Randys_Engine/ffd3dc8/shaders/vshader.v.pica",
        "antoniorand+Randys_Engine/ffd3dc8/build/vshader.shbin",
    ),
    (
        "XanderMK+spookys-3d-mansion/9511411/src/vshader.v.pica",
        "XanderMK+spookys-3d-mansion/9511411/build/vshader.shbin",
    ),
    (
        "XanderMK+spookys-3d-mansion/9f8f6f7/src/vshader.v.pica",
        "XanderMK+spookys-3d-mansion/9f8f6f7/build/vshader.shbin",
    ),
    (
        "stevenjc2009-byte+model-game/1a0d031/source/vshader.v.pica",
        "stevenjc2009-byte+model-game/1a0d031/build/vshader.shbin",
    ),
    (
        "stevenjc2009-byte+model-game/b781212/source/vshader.v.pica",
        "stevenjc2009-byte+model-game/b781212/build/vshader.shbin",
    ),
    (
        "stevenjc2009-byte+model-game/0d7c334/source/vshader.v.pica",
        "stevenjc2009-byte+model-game/0d7c334/build/vshader.shbin",
    ),
    (
        "Lukas1h+Craftus-Rehabilitated/7d0e9b1/source/rendering/world.v.pica",
        "Lukas1h+Craftus-Rehabilitated/7d0e9b1/build/world.shbin",
    ),
    (
        "tobid7+amethyst/692611e/extracted/iron.cpp.__ironshader__.v.pica",
        "tobid7+amethyst/692611e/extracted/iron.cpp.li_shader.shbin",
    ),
    (
        "tobid7+palladium/a58dc20/shaders/li7_shader.v.pica",
        "tobid7+palladium/a58dc20/extracted/li7_shader.cpp.li7_shader.shbin",
    ),
    (
        "TaraHoleInIt+minivmac-3ds/a27fe96/vshader.v.pica",
        "TaraHoleInIt+minivmac-3ds/a27fe96/extracted/3DSGLU.c.vshader_shbin.shbin",
    ),
];

fn first_difference(a: &[u8], b: &[u8]) -> String {
    let at = a
        .iter()
        .zip(b)
        .position(|(x, y)| x != y)
        .unwrap_or(a.len().min(b.len()));
    format!(
        "lengths {} vs {}, first difference at byte {at:#x}",
        a.len(),
        b.len()
    )
}

#[test]
fn every_picasso_pair_is_byte_identical() {
    let mut failures = Vec::new();
    for (src, bin) in PAIRS {
        let ours = assemble_files(&[src]).to_shbin();
        let theirs = read(bin);
        if ours != theirs {
            failures.push(format!("{src}: {}", first_difference(&ours, &theirs)));
        }
    }
    assert!(
        failures.is_empty(),
        "not byte-identical:\n{}",
        failures.join("\n")
    );
}

const EXAMPLES: &str = "devkitPro+3ds-examples/a9aaa0c/graphics/gpu";

#[test]
fn every_example_source_assembles() {
    for name in [
        "both_screens/source/vshader.v.pica",
        "composite_scene/source/vshader.v.pica",
        "cubemap/source/skybox.v.pica",
        "fragment_light/source/vshader.v.pica",
        "immediate/source/vshader.v.pica",
        "lenny/source/vshader.v.pica",
        "mipmap_fog/source/vshader.v.pica",
        "multiple_buf/source/vshader.v.pica",
        "normal_mapping/source/vshader.v.pica",
        "proctex/source/vshader.v.pica",
        "simple_tri/source/vshader.v.pica",
        "textured_cube/source/vshader.v.pica",
        "toon_shading/source/vshader.v.pica",
        "wide_mode_3d/source/vshader.v.pica",
    ] {
        let a = assemble_files(&[&format!("{EXAMPLES}/{name}")]);
        assert_eq!(a.entries.len(), 1, "{name}");
        assert!(a.warnings.is_empty(), "{name}: {:?}", a.warnings);
    }
}

/// Geometry-shader programs, assembled as their Makefiles do: the vertex and geometry shader
/// together into one DVLB with two DVLEs.
#[test]
fn geometry_shader_pairs_give_two_entries() {
    for (v, g) in [
        (
            "geoshader/source/program.v.pica",
            "geoshader/source/program.g.pica",
        ),
        (
            "particles/source/particle.v.pica",
            "particles/source/particle.g.pica",
        ),
        (
            "loop_subdivision/source/program.v.pica",
            "loop_subdivision/source/program.g.pica",
        ),
    ] {
        let a = assemble_files(&[&format!("{EXAMPLES}/{v}"), &format!("{EXAMPLES}/{g}")]);
        assert_eq!(a.entries.len(), 2, "{g}");
        assert_eq!(a.entries[0].kind, ShaderKind::Vertex);
        assert_eq!(a.entries[1].kind, ShaderKind::Geometry, "{g}");
        assert!(a.warnings.is_empty(), "{g}: {:?}", a.warnings);
        let shbin = a.to_shbin();
        assert_eq!(&shbin[..4], b"DVLB");
        assert_eq!(u32::from_le_bytes(shbin[4..8].try_into().unwrap()), 2);
    }
    let m = "mgba-emu+mgba/afd6f14/src/platform/3ds";
    let a = assemble_files(&[
        &format!("{m}/uishader.v.pica"),
        &format!("{m}/uishader.g.pica"),
    ]);
    assert_eq!(a.entries.len(), 2);
    assert_eq!(a.entries[1].kind, ShaderKind::Geometry);
}

#[test]
fn loop_subdivision_has_183_instructions() {
    // testdata/README.md: "loop_subdivision/program.g.pica (ifc, jmpc, mova, 11 emits; 183
    // instructions assembled)" — the vertex shader (12 words) and the geometry shader together.
    let a = assemble_files(&[
        &format!("{EXAMPLES}/loop_subdivision/source/program.v.pica"),
        &format!("{EXAMPLES}/loop_subdivision/source/program.g.pica"),
    ]);
    assert_eq!(a.program.len(), 183);
    let emits = a.program.iter().filter(|&&w| w >> 26 == 0x2A).count();
    assert_eq!(emits, 11);
    let g = &a.entries[1];
    assert_eq!((g.gsh_mode, g.gsh_variable_num), (1, 3));
    assert_eq!(g.entry_start, 12);
    assert!(g.merge_outmaps);
}

/// Files written by picasso 2.7.1 (built from its v2.7.1 tag) for the sources that have no
/// committed binary, including the multi-file (VS + GS) runs; see PROVENANCE.md.
#[test]
fn matches_picasso_built_binaries() {
    let m = "mgba-emu+mgba/afd6f14/src/platform/3ds";
    let e = |p: &str| format!("{EXAMPLES}/{p}");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                e("geoshader/source/program.v.pica"),
                e("geoshader/source/program.g.pica"),
            ],
            "geoshader.shbin",
        ),
        (
            vec![
                e("particles/source/particle.v.pica"),
                e("particles/source/particle.g.pica"),
            ],
            "particles.shbin",
        ),
        (
            vec![
                e("loop_subdivision/source/program.v.pica"),
                e("loop_subdivision/source/program.g.pica"),
            ],
            "loop_subdivision.shbin",
        ),
        (
            vec![
                format!("{m}/uishader.v.pica"),
                format!("{m}/uishader.g.pica"),
            ],
            "uishader.shbin",
        ),
        (
            vec![e("normal_mapping/source/vshader.v.pica")],
            "normal_mapping.shbin",
        ),
        (
            vec![e("fragment_light/source/vshader.v.pica")],
            "fragment_light.shbin",
        ),
        (
            vec![
                e("loop_subdivision/source/program.g.pica"),
                e("loop_subdivision/source/program.v.pica"),
                e("lenny/source/vshader.v.pica"),
            ],
            "three_files.shbin",
        ),
    ];
    let mut failures = Vec::new();
    for (files, expected) in &cases {
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let ours = assemble_files(&refs).to_shbin();
        let theirs = read(&format!("picasso-2.7.1-built/{expected}"));
        if ours != theirs {
            failures.push(format!("{expected}: {}", first_difference(&ours, &theirs)));
        }
    }
    assert!(
        failures.is_empty(),
        "not byte-identical:\n{}",
        failures.join("\n")
    );
}
