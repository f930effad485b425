//! Trace editing round trips (issue 16): saving with no edit renders every frame identically
//! (colour, depth and both screens) on every bundled demo; a trace saved with edits renders
//! exactly like the edited replay; re-rendering after an edit keeps the keyframes before it and
//! gives what a replay from the start gives.

use gpu_core::replay::edit::{Edit, EditKind, EditList, FloatValue, Unit, save_edited};
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::frames::{demo_bytes, fingerprint, frames_with_edits};
use picaview_tests::scene::demos::DEMOS;

fn save(bytes: &[u8], edits: &EditList) -> Vec<u8> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let (b, _) = save_edited(trace, edits).expect("edits save");
    b.build().expect("builds")
}

#[test]
fn saving_no_edit_renders_every_frame_identically() {
    for d in &DEMOS {
        let original = demo_bytes(d.name);
        let saved = save(&original, &EditList::default());
        assert_eq!(
            frames_with_edits(&saved, None),
            frames_with_edits(&original, None),
            "{}: frames differ",
            d.name
        );
        // The canonical layout of a builder-made trace is reproduced byte for byte.
        assert!(saved == original, "{}: bytes differ", d.name);
    }
}

/// The number of draws in a trace.
fn draws(bytes: &[u8]) -> Vec<gpu_core::replay::DrawRecord> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let mut r = Replay::new(trace);
    r.build_index().draws
}

const FLAT_VS: &str = "
    .out outpos position
    .out outclr color
    .alias inpos v0
    .constf red(1.0, 0.0, 0.0, 1.0)
    .proc main
        mov outpos, inpos
        mov outclr, red
        end
    .end
";

fn edit_sets(bytes: &[u8]) -> Vec<(&'static str, EditList)> {
    let d = draws(bytes);
    assert!(d.len() >= 2);
    // A draw from a vertex array (immediate-mode draws cannot take fixed-attribute edits).
    let k = (d.len() / 2..d.len())
        .find(|&i| d[i].info.kind != gpu_core::debug::DrawKind::Immediate)
        .expect("an array draw") as u64;
    let trigger = d[k as usize].before.writes + 1;
    let trigger_reg = if d[k as usize].info.kind == gpu_core::debug::DrawKind::Arrays {
        0x22E
    } else {
        0x22F
    };
    let one = |kind| EditList {
        edits: vec![Edit::new(kind)],
    };
    vec![
        (
            "tev constant source",
            EditList {
                edits: vec![
                    Edit::new(EditKind::SetRegister {
                        draw: k,
                        reg: 0x0C0,
                        value: 0x000E_000E,
                        mask: 0xF,
                    }),
                    Edit::new(EditKind::SetRegister {
                        draw: k,
                        reg: 0x0C3,
                        value: 0xFF00_00FF,
                        mask: 0xF,
                    }),
                ],
            },
        ),
        (
            "vs float uniform c0 (f32)",
            one(EditKind::FloatUniform {
                draw: k,
                unit: Unit::Vertex,
                index: 0,
                value: FloatValue::f32([0.5, 0.0, 0.0, 0.0]),
            }),
        ),
        (
            "vs float uniform c1 (f24)",
            one(EditKind::FloatUniform {
                draw: 0,
                unit: Unit::Vertex,
                index: 1,
                value: FloatValue::f24([0.0, 0.7, 0.0, 0.0]),
            }),
        ),
        (
            "fixed attribute",
            one(EditKind::FixedAttribute {
                draw: k,
                index: 3,
                bits: [0.25f32, 0.5, 0.75, 1.0]
                    .map(|x| shader_unit::float::F24::from_f32(x).to_bits()),
            }),
        ),
        (
            "bool and int uniforms",
            EditList {
                edits: vec![
                    Edit::new(EditKind::BoolUniform {
                        draw: k,
                        unit: Unit::Vertex,
                        index: 2,
                        value: true,
                    }),
                    Edit::new(EditKind::IntUniform {
                        draw: k,
                        unit: Unit::Vertex,
                        index: 1,
                        value: [2, 0, 1, 0],
                    }),
                ],
            },
        ),
        (
            "draw trigger overridden to 0",
            one(EditKind::OverrideWrite {
                write: trigger,
                reg: trigger_reg,
                value: 0,
                mask: None,
            }),
        ),
        (
            "vertex shader replaced",
            one(EditKind::Shader {
                draw: k,
                unit: Unit::Vertex,
                name: "flat.v.pica".into(),
                source: FLAT_VS.into(),
            }),
        ),
    ]
}

#[test]
fn saved_edits_render_like_the_edited_replay() {
    for d in &DEMOS {
        let original = demo_bytes(d.name);
        let plain = frames_with_edits(&original, None);
        let mut changed = 0;
        for (what, edits) in edit_sets(&original) {
            let live = frames_with_edits(&original, Some(&edits));
            let baked = save(&original, &edits);
            assert_eq!(
                frames_with_edits(&baked, None),
                live,
                "{}: {what}: the saved trace renders differently from the edited replay",
                d.name
            );
            if live != plain {
                changed += 1;
            }
        }
        assert!(
            changed >= 3,
            "{}: only {changed} edit sets changed the images",
            d.name
        );
    }
}

#[test]
fn overriding_a_draw_trigger_removes_the_draw() {
    let original = demo_bytes("cube");
    let d = draws(&original);
    let trigger = d[0].before.writes + 1;
    let edits = EditList {
        edits: vec![Edit::new(EditKind::OverrideWrite {
            write: trigger,
            reg: 0x22E,
            value: 0,
            mask: None,
        })],
    };
    let baked = save(&original, &edits);
    assert_eq!(draws(&baked).len(), d.len() - 1);
}

#[test]
fn edits_that_never_apply_are_reported() {
    let original = demo_bytes("cube");
    let edits = EditList {
        edits: vec![Edit::new(EditKind::SetRegister {
            draw: 1_000_000,
            reg: 0x0C3,
            value: 1,
            mask: 0xF,
        })],
    };
    let trace = CiTrace::from_bytes(original).expect("parses");
    let err = save_edited(trace, &edits).expect_err("refused");
    assert!(err.to_string().contains("never applied"), "{err}");
}

#[test]
fn reediting_keeps_earlier_keyframes_and_matches_a_fresh_replay() {
    let original = demo_bytes("stress");
    let trace = CiTrace::from_bytes(original.clone()).expect("parses");
    let mut r = Replay::new(trace);
    let index = r.build_index();
    let k = index.draws.len() as u64 * 3 / 4;
    let before = r.keyframe_count();
    let edits = EditList {
        edits: vec![Edit::new(EditKind::SetRegister {
            draw: k,
            reg: 0x0C3,
            value: 0xFF00_FF00,
            mask: 0xF,
        })],
    };
    r.set_edits(edits.clone()).expect("compiles");
    let kept = r.keyframe_count();
    assert!(
        kept > 1 && kept < before,
        "kept {kept} of {before} keyframes"
    );
    let end = r.trace().stats().frame_markers as u32 - 1;
    assert!(r.seek(Target::Frame(end), &mut ()));
    let reedited = fingerprint(&r);
    let fresh = frames_with_edits(&original, Some(&edits));
    assert_eq!(Some(&reedited), fresh.last());
    // Turning the edit off again gives the original images.
    let mut off = edits;
    off.edits[0].enabled = false;
    r.set_edits(off).expect("compiles");
    assert!(r.seek(Target::Frame(end), &mut ()));
    assert_eq!(
        Some(&fingerprint(&r)),
        frames_with_edits(&original, None).last()
    );
}

#[test]
fn scripts_parse_and_print_back() {
    let text = "\
# a comment
draw 12: 0x0C0=0x00FF00FF/0x3
cmd 345: 0x0C3=0x12345678
draw 3: vs c4=1,0.5,0,1
draw 3: gs c5=f32:0.1,0.2,0.3,0.4
draw 3: vs i1=3,0,1,0
off draw 3: vs b3=1
draw 4: attr 2=1,0,0,1
draw 5: vs=flat.v.pica
";
    let mut load = |p: &str| {
        assert_eq!(p, "flat.v.pica");
        Ok(FLAT_VS.to_string())
    };
    let list = EditList::parse_script(text, &mut load).expect("parses");
    assert_eq!(list.edits.len(), 8);
    assert!(!list.edits[5].enabled);
    let again = EditList::parse_script(&list.to_script(), &mut load).expect("parses again");
    assert_eq!(again, list);
    let json = serde_json::to_string(&list).expect("serialises");
    let back: EditList = serde_json::from_str(&json).expect("deserialises");
    assert_eq!(back, list);
    assert!(list.compile().is_ok());
    let bad = EditList::parse_script("draw 1: vs c4=1,x", &mut load).expect_err("refused");
    assert!(bad.to_string().contains("line 1"), "{bad}");
}

#[test]
fn shader_errors_are_reported_at_line_and_column() {
    let edits = EditList {
        edits: vec![Edit::new(EditKind::Shader {
            draw: 0,
            unit: Unit::Vertex,
            name: "bad.v.pica".into(),
            source: ".proc main\n    mvo o0, v0\n    end\n.end\n".into(),
        })],
    };
    let err = edits.compile().expect_err("does not assemble");
    assert!(err.to_string().contains("bad.v.pica:2:5"), "{err}");
}

#[test]
fn debug_geoshader_draws() {
    let original = demo_bytes("geoshader");
    for d in draws(&original) {
        eprintln!(
            "{:?} kind {:?} before {:?} trig {:?}",
            d.info.draw, d.info.kind, d.before, d.trigger_addr
        );
    }
}
