//! Every real `.shbin` fixture parses, disassembles (snapshot-tested) and runs a vertex; a few
//! files have their fields checked against values read by hand from their hex dumps and the
//! picasso/nihstro sources committed beside them.

#[path = "fixtures/list.rs"]
mod fixtures;

use shader_unit::decode::Program;
use shader_unit::disasm::{disassemble, disassemble_all, disassemble_listing, raw_listing};
use shader_unit::dvlb::{
    ConstantValue, Dvlb, GsMode, OutputEntry, OutputSemantic, ShaderKind, UniformRegister,
};
use shader_unit::float::F24;
use shader_unit::interp::{ExecConfig, Uniforms, UnitState, run};

fn parse(rel: &str) -> Dvlb {
    Dvlb::parse(&fixtures::read(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

#[test]
fn the_fixture_list_matches_the_directory() {
    let mut found = Vec::new();
    let root = fixtures::path("");
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "shbin") {
                found.push(
                    p.strip_prefix(&root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    found.sort();
    let mut listed: Vec<String> = fixtures::SHBINS.iter().map(|s| s.to_string()).collect();
    listed.sort();
    assert_eq!(found, listed);
}

#[test]
fn every_real_shbin_parses_and_disassembles_exactly() {
    for (rel, bytes) in fixtures::all() {
        let dvlb = Dvlb::parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert!(!dvlb.dvles.is_empty(), "{rel}");
        assert_eq!(dvlb.input_len, bytes.len() as u64);
        for index in 0..dvlb.dvles.len() {
            let listing = disassemble_listing(&dvlb, index).unwrap();
            assert!(
                !listing.text.contains("UNEXPRESSIBLE"),
                "{rel}:\n{}",
                listing.text
            );
            // picasso's own output round-trips completely. nihstro allocates operand
            // descriptors differently and writes DVLE fields picasso derives otherwise (entry
            // end 0, masks 0), and the listing says so.
            // Whether nihstro's descriptor tables happen to match picasso's allocation varies
            // per file; `disassembly_reassembles_to_the_same_binary` checks that `code_exact`
            // tells the truth either way.
            let nihstro = fixtures::NIHSTRO.contains(&rel);
            assert!(listing.code_exact || nihstro, "{rel}: {:?}", listing.notes);
            assert_eq!(listing.exact, !nihstro, "{rel}: {:?}", listing.notes);
            assert_eq!(listing.address_lines.len(), dvlb.dvlp.code.len());
        }
        insta::assert_snapshot!(fixtures::snapshot_name(rel), disassemble_all(&dvlb));
    }
}

#[test]
fn disassembly_is_deterministic() {
    for (rel, bytes) in fixtures::all() {
        let a = disassemble_all(&Dvlb::parse(&bytes).unwrap());
        let b = disassemble_all(&Dvlb::parse(&bytes).unwrap());
        assert_eq!(a, b, "{rel}");
    }
}

#[test]
fn raw_listing_of_the_craftus_shader() {
    let dvlb = parse("Lukas1h+Craftus-Rehabilitated/7d0e9b1/build/world.shbin");
    insta::assert_snapshot!("raw_craftus_world", raw_listing(&dvlb));
}

/// Craftus `world.shbin` (picasso 2.x), checked against `xxd` of the file and
/// `source/rendering/world.v.pica`.
#[test]
fn craftus_world_fields_verified_by_hand() {
    let d = parse("Lukas1h+Craftus-Rehabilitated/7d0e9b1/build/world.shbin");
    assert_eq!(d.input_len, 308);
    // DVLP right after the 12-byte DVLB header; the full 0x28-byte header (picasso).
    assert_eq!(d.dvlp.offset, 0xC);
    assert_eq!(d.dvlp.layout.code_offset, 0x28);
    assert_eq!(d.dvlp.code.len(), 11);
    assert_eq!(d.dvlp.opdescs.len(), 8);
    assert_eq!(
        d.dvlp.layout.line_offset, 0x94,
        "picasso writes the DVLP size here"
    );
    assert!(d.dvlp.layout.extension.is_some());
    // First word `mul r0.xyz, div255, in_fxyz.xyz` = 0x2207F180 (bytes 80 f1 07 22 at 0x34).
    assert_eq!(d.dvlp.code[0], 0x2207_F180);
    assert_eq!(d.dvlp.code[10], 0x8800_0000, "end");
    assert_eq!(d.dvlp.opdescs[0].descriptor, 0x0006_9FEE);
    assert_eq!(d.dvlp.opdescs[0].extra, 0);

    let e = &d.dvles[0];
    assert_eq!(e.offset, 0xA0);
    assert_eq!(e.version, 0x1002);
    assert_eq!(e.kind, ShaderKind::Vertex);
    assert_eq!((e.main_start, e.main_end), (0, 11));
    assert_eq!((e.input_mask, e.output_mask), (0, 0b111));
    assert_eq!(e.gs_mode, GsMode::Point);
    // .constf myconst(0.0, 1.0, 0.0000305185094759, 0.00392156862745) -> c95 (picasso 2.x
    // allocates from c95 down), .constf mysec(...) -> c94.
    assert_eq!(e.constants.len(), 2);
    assert_eq!(e.constants[0].register, 95);
    assert_eq!(
        e.constants[0].value,
        ConstantValue::Float([0, 0x3F_0000, 0x30_0002, 0x37_0101])
    );
    let c95: Vec<f32> = match e.constants[0].value {
        ConstantValue::Float(w) => w.iter().map(|&r| F24::from_bits(r).to_f32()).collect(),
        _ => unreachable!(),
    };
    assert_eq!(c95[1], 1.0);
    assert!((c95[2] - 0.000_030_518_5).abs() < 1e-9, "{}", c95[2]);
    assert!((c95[3] - 1.0 / 255.0).abs() < 1e-6, "{}", c95[3]);
    assert_eq!(e.constants[1].register, 94);
    assert_eq!(
        e.constants[1].data,
        [0x35_9B34, 0x38_47AE, 0x35_9B34, 0x35_9B34]
    );
    // .out out_position position / out_color color / out_uv texcoord0, allocated o0, o1, o2.
    let out = |semantic, register| OutputEntry {
        semantic,
        register,
        mask: 0xF,
        unknown: 0,
    };
    assert_eq!(
        e.outputs,
        [
            out(OutputSemantic::Position, 0),
            out(OutputSemantic::Color, 1),
            out(OutputSemantic::TexCoord0, 2)
        ]
    );
    // .fvec projection[4] -> c0-c3 (unified 0x10-0x13).
    assert_eq!(e.uniforms.len(), 1);
    assert_eq!(e.uniforms[0].name, "projection");
    assert_eq!((e.uniforms[0].start, e.uniforms[0].end), (0x10, 0x13));
    assert_eq!(e.uniforms[0].start_register(), UniformRegister::Float(0));
    assert!(e.labels.is_empty());
    assert_eq!(e.symbols, b"projection\0");

    let text = disassemble(&d, 0).unwrap();
    assert!(
        text.contains(".constf const_c95(0.0, 1.0, 3.051851e-5, 0.0039215684)"),
        "{text}"
    );
    assert!(
        text.contains("    dp4 out_position.x, projection[0], r0"),
        "{text}"
    );
    assert!(
        text.contains("    mul out_texcoord0, c95.z, v1.xy"),
        "{text}"
    );
}

/// Re-Craft-3DS `gui.shbin` (nihstro), checked against its hex dump and `source/gui.vsh`.
#[test]
fn recraft_gui_nihstro_fields_verified_by_hand() {
    let d = parse("SomeRandoLameo+Re-Craft-3DS/ea554bf/romfs/shaders/gui.shbin");
    assert_eq!(d.input_len, 495);
    // nihstro: a 0x1C-byte DVLP header with the DVLE header right after it, program after that.
    assert_eq!(d.dvlp.offset, 0xC);
    assert_eq!(d.dvlp.layout.extension, None);
    assert_eq!(d.dvlp.layout.code_offset, 0x5C);
    assert_eq!(d.dvlp.code.len(), 19);
    assert_eq!(d.dvlp.opdescs.len(), 15);
    let e = &d.dvles[0];
    assert_eq!(e.offset, 0x28);
    assert_eq!(e.version, 0);
    assert_eq!((e.main_start, e.main_end), (0, 0));
    assert_eq!((e.input_mask, e.output_mask), (0, 0));
    // .alias myconst c32 as (0.0, 1.0, 0.0000305185094759, 0.00001525902189)
    assert_eq!(e.constants[0].register, 32);
    assert_eq!(
        e.constants[0].value,
        ConstantValue::Float([0, 0x3F_0000, 0x30_0002, 0x2F_0001])
    );
    // .alias myconst2 c33 as (0.0009765625, 0.03125, 32.0, 0.03225806451)
    assert_eq!(e.constants[1].register, 33);
    assert_eq!(e.constants[1].data[0], 0x35_0000, "2^-10");
    assert_eq!(e.constants[1].data[2], 0x44_0000, "32.0");
    // Labels main: proj: tex: color: at instructions 0, 2, 6, 8.
    let labels: Vec<(&str, u32)> = e
        .labels
        .iter()
        .map(|l| (l.name.as_str(), l.location))
        .collect();
    assert_eq!(labels, [("main", 0), ("proj", 2), ("tex", 6), ("color", 8)]);
    assert!(e.labels.iter().all(|l| l.id == 0 && l.size == 0));
    let uniforms: Vec<(&str, UniformRegister, u32)> = e
        .uniforms
        .iter()
        .map(|u| (u.name.as_str(), u.start_register(), u.len()))
        .collect();
    assert_eq!(
        uniforms,
        [
            ("inpos", UniformRegister::Input(0)),
            ("inuvc", UniformRegister::Input(1)),
            ("projection", UniformRegister::Float(0))
        ]
        .map(|(n, r)| (n, r, if n == "projection" { 4 } else { 1 }))
    );
    assert_eq!(e.outputs[2].semantic, OutputSemantic::TexCoord0);
    assert_eq!(e.outputs[2].register, 2);

    let text = disassemble(&d, 0).unwrap();
    // The label table names the code; the constants at c32/c33 are not where picasso 2.x
    // would allocate them, so they are written with .setf.
    assert!(
        text.contains("proj:\n    dp4 out_position.x, projection[0], r0"),
        "{text}"
    );
    assert!(
        text.contains(".setf c33(0.0009765625, 0.03125, 32.0, 0.032258034)"),
        "{text}"
    );
    assert!(
        text.contains(".in inpos v0\n.in inuvc v1\n.fvec projection[4]"),
        "{text}"
    );
}

/// minivmac-3ds 3100403 (a picasso build without its source): a bool uniform named `test` in
/// the uniform table (unified index 0x78 = b0).
#[test]
fn minivmac_stale_build_has_a_bool_uniform() {
    let d = parse("TaraHoleInIt+minivmac-3ds/3100403/extracted/3DSGLU.c.vshader_shbin.shbin");
    let e = &d.dvles[0];
    assert_eq!(e.uniforms[1].name, "test");
    assert_eq!((e.uniforms[1].start, e.uniforms[1].end), (0x78, 0x78));
    assert_eq!(e.uniforms[1].start_register(), UniformRegister::Bool(0));
    let text = disassemble(&d, 0).unwrap();
    assert!(text.contains(".bool test\n"), "{text}");
}

/// Loads a DVLE's constant table into uniforms, as a loader does when selecting the program.
fn load_constants(uniforms: &mut Uniforms, dvlb: &Dvlb, index: usize) {
    for c in &dvlb.dvles[index].constants {
        let reg = usize::from(c.register);
        match c.value {
            ConstantValue::Float(w) => {
                if let Some(slot) = uniforms.f.get_mut(reg) {
                    *slot = w.map(|r| F24::from_bits(r).to_f32());
                }
            }
            ConstantValue::Int(v) => {
                if let Some(slot) = uniforms.i.get_mut(reg) {
                    *slot = v;
                }
            }
            ConstantValue::Bool(b) => {
                if let Some(slot) = uniforms.b.get_mut(reg) {
                    *slot = b;
                }
            }
            ConstantValue::Unknown => {}
        }
    }
}

#[test]
fn every_real_shbin_runs_one_vertex_per_entry() {
    for (rel, bytes) in fixtures::all() {
        let dvlb = Dvlb::parse(&bytes).unwrap();
        let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());
        for index in 0..dvlb.dvles.len() {
            let mut uniforms = Uniforms::default();
            // An identity-ish matrix in c0-c11 so positions are not all zero.
            for (i, row) in uniforms.f.iter_mut().take(12).enumerate() {
                row[i % 4] = 1.0;
            }
            load_constants(&mut uniforms, &dvlb, index);
            let mut state = UnitState::default();
            for (i, v) in state.inputs.iter_mut().enumerate() {
                *v = [0.25 * i as f32, -0.5, 1.0, 1.0];
            }
            let entry = dvlb.dvles[index].main_start;
            let stats = run(
                &program,
                &uniforms,
                &mut state,
                entry,
                &ExecConfig::default(),
                &mut (),
                &mut (),
            )
            .unwrap_or_else(|e| panic!("{rel} DVLE {index}: {e}"));
            assert!(stats.instructions >= 2, "{rel}");
            assert_eq!(stats.unknown_ops, 0, "{rel}");
            for o in &dvlb.dvles[index].outputs {
                let value = state.outputs[usize::from(o.register)];
                assert!(
                    value.iter().all(|x| x.is_finite()),
                    "{rel}: o{} = {value:?}",
                    o.register
                );
            }
        }
    }
}

/// Runs DVLE 0 of `dvlb` on a fixed set of inputs and returns the output registers.
fn outputs_of(dvlb: &Dvlb) -> Vec<[u32; 4]> {
    let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());
    let mut uniforms = Uniforms::default();
    for (i, row) in uniforms.f.iter_mut().enumerate() {
        *row = [
            0.5 + i as f32,
            -0.25 * i as f32,
            1.0 / (1.0 + i as f32),
            2.0,
        ];
    }
    load_constants(&mut uniforms, dvlb, 0);
    let mut state = UnitState::default();
    for (i, v) in state.inputs.iter_mut().enumerate() {
        *v = [0.3 * i as f32, -0.7, 0.9 + i as f32, 1.0];
    }
    let entry = dvlb.dvles[0].main_start;
    run(
        &program,
        &uniforms,
        &mut state,
        entry,
        &ExecConfig::default(),
        &mut (),
        &mut (),
    )
    .unwrap();
    state.outputs.iter().map(|o| o.map(f32::to_bits)).collect()
}

/// The disassembly re-assembles with the picasso-compatible assembler (`shader_unit::asm`):
/// picasso-built files come back byte for byte; every file comes back with the same constants
/// and computes bit-identical outputs.
#[test]
fn disassembly_reassembles_to_the_same_binary() {
    for (rel, bytes) in fixtures::all() {
        let dvlb = Dvlb::parse(&bytes).unwrap();
        let listing = disassemble_listing(&dvlb, 0).unwrap();
        let rebuilt = shader_unit::asm::assemble_to_shbin(&[("roundtrip.v.pica", &listing.text)])
            .unwrap_or_else(|e| panic!("{rel}: {e}\n{}", listing.text));
        let again = Dvlb::parse(&rebuilt).unwrap();
        assert_eq!(again.dvles[0].constants, dvlb.dvles[0].constants, "{rel}");
        assert_eq!(outputs_of(&again), outputs_of(&dvlb), "{rel}");
        if listing.code_exact {
            assert_eq!(again.dvlp.code, dvlb.dvlp.code, "{rel}\n{}", listing.text);
            assert_eq!(
                again.operand_descriptors(),
                dvlb.operand_descriptors(),
                "{rel}"
            );
        } else {
            // The note was right: something in the words or the descriptor table changes.
            assert_eq!(again.dvlp.code.len(), dvlb.dvlp.code.len(), "{rel}");
            assert!(
                again.dvlp.code != dvlb.dvlp.code
                    || again.operand_descriptors() != dvlb.operand_descriptors(),
                "{rel}: the listing claims a difference that re-assembly does not show"
            );
        }
        if listing.exact {
            // Some extracted files carry a stray byte after picasso's padding.
            assert!(bytes.len() >= rebuilt.len(), "{rel}");
            assert_eq!(rebuilt[..], bytes[..rebuilt.len()], "{rel}");
            assert!(bytes[rebuilt.len()..].iter().all(|&b| b == 0), "{rel}");
        }
    }
}

#[test]
fn the_model_round_trips_through_json() {
    for (rel, bytes) in fixtures::all() {
        let dvlb = Dvlb::parse(&bytes).unwrap();
        let json = serde_json::to_string(&dvlb).unwrap();
        let back: Dvlb = serde_json::from_str(&json).unwrap();
        assert_eq!(back, dvlb, "{rel}");
    }
}
