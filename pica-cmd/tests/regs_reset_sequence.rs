//! The real command stream `fixtures/gpuResetSequence.pica_cmdlist.bin` (ctrulib's 2014 GPU
//! reset sequence; provenance in `fixtures/PROVENANCE.md`): every register it writes has a name
//! in the catalogue, and a few of its values decode as the SDK meant them.
//!
//! The list is parsed here with a minimal reader of the documented format (little-endian words
//! `param, header`, header = id | mask << 16 | extra count << 20 | consecutive << 31, commands
//! 8-byte aligned) so that this test depends only on the register catalogue.

use std::collections::BTreeSet;

use pica_cmd::regs::{self, REG_COUNT, Regs, describe};

const RESET: &[u8] = include_bytes!("fixtures/gpuResetSequence.pica_cmdlist.bin");

/// (id, mask, value) of every register write, in order.
fn writes(bytes: &[u8]) -> Vec<(u16, u32, u32)> {
    let words: Vec<u32> = bytes
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < words.len() {
        let (param, header) = (words[i], words[i + 1]);
        let id = (header & 0xFFFF) as u16;
        let mask = (header >> 16) & 0xF;
        let extra = ((header >> 20) & 0xFF) as usize;
        let consecutive = header >> 31 != 0;
        out.push((id, mask, param));
        for k in 0..extra {
            let Some(&p) = words.get(i + 2 + k) else {
                break;
            };
            let step = if consecutive { k as u16 + 1 } else { 0 };
            out.push((id.wrapping_add(step), mask, p));
        }
        i += 2 + extra;
        i += i % 2;
    }
    out
}

#[test]
fn every_written_register_is_named() {
    let w = writes(RESET);
    assert_eq!(w.len(), 167);
    let ids: BTreeSet<u16> = w.iter().map(|&(id, _, _)| id).collect();
    let unnamed: Vec<String> = ids
        .iter()
        .filter(|&&id| regs::name(id).is_none())
        .map(|id| format!("{id:#05x}"))
        .collect();
    assert!(unnamed.is_empty(), "unnamed registers: {unnamed:?}");
    for &(id, _, value) in &w {
        let d = describe(id, value);
        assert!(d.known, "{id:#05x}");
        assert!(!d.fields.is_empty());
        assert!(!d.one_line().is_empty());
    }
    // Every write targets a different register.
    assert_eq!(ids.len(), 167);
}

#[test]
fn reset_values_decode_as_the_sdk_meant() {
    let mut file = Box::new([0u32; REG_COUNT]);
    for (id, mask, value) in writes(RESET) {
        let m = (0..4).fold(0u32, |m, b| {
            if mask & (1 << b) != 0 {
                m | (0xFF << (8 * b))
            } else {
                m
            }
        });
        let slot = &mut file[usize::from(id)];
        *slot = (*slot & !m) | (value & m);
    }
    let r = Regs::new(&file);
    // Depth map scale -1 (f24 0xBF0000), offset 0: depth = -z/w.
    assert_eq!(r.depthmap_scale(), -1.0);
    assert_eq!(r.depthmap_offset(), 0.0);
    // Every output-map component unused.
    for slot in 0..7 {
        let o = r.sh_outmap(slot).expect("slot");
        assert!(
            o.components()
                .iter()
                .all(|s| *s == regs::rasterizer::OutputSemantic::Unused)
        );
    }
    // TEV stage 0 uses the constant colour everywhere, stages 1-5 pass "previous" through.
    let s0 = r.tev_stage(0).expect("stage 0");
    assert_eq!(s0.sources.rgb, [regs::tev::TevSource::Constant; 3]);
    for stage in 1..6 {
        let s = r.tev_stage(stage).expect("stage");
        assert_eq!(
            s.sources.rgb,
            [regs::tev::TevSource::Previous; 3],
            "stage {stage}"
        );
        assert_eq!(
            s.sources.alpha,
            [regs::tev::TevSource::Previous; 3],
            "stage {stage}"
        );
    }
    // Lights: diffuse 0.8 grey on light 0, directional, unit attenuation scale; lighting off.
    let l0 = r.light(0).expect("light 0");
    assert_eq!(l0.diffuse.to_f32(), [0.8, 0.8, 0.8]);
    assert!(l0.config.directional);
    assert_eq!(l0.spot_direction(), [0.0, 0.0, 1.0]);
    assert_eq!(l0.attenuation_scale.to_f32(), 1.0);
    assert!(r.lighting_disabled());
    assert!(!r.lighting_enable0());
    // COLOR_OPERATION is written with byte mask 0xD: byte 1 (the blend-mode bit 8 of the
    // value 0x00E40100) is left alone, so only the fixed 0x0E4 field lands.
    assert_eq!(r.raw(0x100), 0x00E4_0000);
    assert_eq!(
        r.color_operation().blend_mode,
        regs::framebuffer::BlendMode::LogicOp
    );
    // Alpha test ALWAYS, disabled.
    assert_eq!(r.alpha_test().func, regs::framebuffer::CompareFunc::Always);
    assert!(!r.alpha_test().enable);
    // The masked write to 0x080 (mask 0x2, value 0x1000) only sets bit 12.
    assert_eq!(r.raw(0x080), 0x1000);
    let config = describe(0x080, r.raw(0x080));
    let fixed_1 = config
        .fields
        .iter()
        .find(|f| f.name == "fixed_1")
        .map(|f| f.meaning.as_str());
    assert_eq!(fixed_1, Some("0x1"));
    // Procedural-texture colour-LUT offsets of levels 4-7 (our PROCTEX6 reading of 0x0AE).
    assert_eq!(r.proctex().offsets_high, [0xF0, 0xF8, 0xFC, 0xFE]);
}

#[test]
fn the_whole_stream_describes() {
    // The text form the CLI prints: one line per write, each starting with the id and name.
    let text: Vec<String> = writes(RESET)
        .into_iter()
        .map(|(id, _, v)| describe(id, v).one_line())
        .collect();
    assert_eq!(
        text[0],
        "0x1D4 UNKNOWN_01D4 = 0x00000001 { value: 0x00000001 }"
    );
    assert_eq!(
        text[2],
        "0x04D DEPTHMAP_SCALE = 0x00BF0000 { value: f24 -1 }"
    );
    assert!(text.iter().all(|l| l.starts_with("0x")));
    assert!(!text.iter().any(|l| l.contains("unknown register")));
}
