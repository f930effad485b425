//! Walks the register catalogue: ids unique and in range, names unique, every field inside 32
//! bits, non-alias fields disjoint, enum encodings within their fields, docs present, id
//! constants consistent with the table, every entry's generic field decode round-trips.

use std::collections::{HashMap, HashSet};

use pica_cmd::regs::{
    self, Block, FieldKind, REG_COUNT, covered_mask, id, id_by_name, id_constants, lookup, name,
};
use proptest::prelude::*;

#[test]
fn ids_are_unique_in_range_and_sorted() {
    let mut seen = HashSet::new();
    let mut last = None;
    for def in regs::all() {
        assert!(usize::from(def.id) < REG_COUNT, "{} out of range", def.name);
        assert!(seen.insert(def.id), "duplicate id {:#05x}", def.id);
        if let Some(prev) = last {
            assert!(def.id > prev, "all() not in ascending id order");
        }
        last = Some(def.id);
        assert_eq!(lookup(def.id), Some(def));
    }
    // 0x000-0x2FF: the catalogue holds everything the references name.
    assert!(seen.len() > 400, "only {} registers catalogued", seen.len());
}

#[test]
fn expected_register_counts_per_group() {
    let count = |pred: &dyn Fn(&regs::RegDef) -> bool| regs::all().filter(|d| pred(d)).count();
    // 8 lights x 11 registers, 6 TEV stages x 5, 12 loaders x 3.
    assert_eq!(
        count(&|d| d.name.starts_with("LIGHT") && d.name.as_bytes()[5].is_ascii_digit()),
        88
    );
    assert_eq!(
        count(&|d| d.name.starts_with("TEXENV") && d.name.as_bytes()[6].is_ascii_digit()),
        30
    );
    assert_eq!(
        count(&|d| d.name.starts_with("ATTRIBBUFFER")
            && d.name != "ATTRIBBUFFERS_LOC"
            && !d.name.starts_with("ATTRIBBUFFERS_FORMAT")),
        36
    );
    // Aliased data ports: 8 ids each.
    for port in [
        "VSH_FLOATUNIFORM_DATA",
        "GSH_FLOATUNIFORM_DATA",
        "VSH_CODETRANSFER_DATA",
        "GSH_CODETRANSFER_DATA",
        "VSH_OPDESCS_DATA",
        "GSH_OPDESCS_DATA",
        "LIGHTING_LUT_DATA",
        "FOG_LUT_DATA",
        "PROCTEX_LUT_DATA",
    ] {
        let ids: Vec<u16> = regs::all()
            .filter(|d| d.name.starts_with(port) && d.name.contains('['))
            .map(|d| d.id)
            .collect();
        assert_eq!(ids.len(), 8, "{port}");
        for (i, id) in ids.iter().enumerate() {
            let def = lookup(*id).expect("catalogued");
            assert_eq!(def.name, format!("{port}[{i}]"));
            let p = def.port.expect("port info");
            assert_eq!(usize::from(p.alias), i);
            assert_eq!(*id, ids[0] + i as u16, "aliases are consecutive");
        }
    }
}

#[test]
fn names_are_unique_and_well_formed() {
    let mut seen = HashMap::new();
    for def in regs::all() {
        assert!(!def.name.is_empty());
        assert!(
            !def.name.starts_with("GPUREG_"),
            "{}: prefix must be dropped",
            def.name
        );
        assert!(
            def.name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || "_[]".contains(c)),
            "{}",
            def.name
        );
        if let Some(other) = seen.insert(def.name, def.id) {
            panic!("name {} used by {other:#05x} and {:#05x}", def.name, def.id);
        }
    }
}

#[test]
fn every_field_is_inside_32_bits_and_disjoint_unless_aliased() {
    for def in regs::all() {
        assert!(!def.fields.is_empty(), "{} has no fields", def.name);
        let mut used = 0u32;
        let mut names = HashSet::new();
        for f in def.fields {
            assert!(
                f.lo <= f.hi && f.hi <= 31,
                "{}.{}: bits {}-{}",
                def.name,
                f.name,
                f.lo,
                f.hi
            );
            assert_eq!(f.width(), u32::from(f.hi - f.lo) + 1);
            assert_eq!(f.mask().count_ones(), f.width());
            assert!(
                names.insert(f.name),
                "{}: duplicate field name {}",
                def.name,
                f.name
            );
            assert!(
                !f.doc.trim().is_empty(),
                "{}.{} has no doc",
                def.name,
                f.name
            );
            if !f.alias {
                assert_eq!(
                    used & f.mask(),
                    0,
                    "{}.{} overlaps another field",
                    def.name,
                    f.name
                );
                used |= f.mask();
            } else {
                // An alias must actually overlap a non-alias field.
                let others = def
                    .fields
                    .iter()
                    .filter(|g| !g.alias)
                    .fold(0, |m, g| m | g.mask());
                assert_ne!(
                    others & f.mask(),
                    0,
                    "{}.{} marked alias but overlaps nothing",
                    def.name,
                    f.name
                );
            }
            match f.kind {
                FieldKind::Enum(names) => {
                    let mut values = HashSet::new();
                    for (v, n) in names {
                        assert!(
                            f.width() == 32 || *v < (1 << f.width()),
                            "{}.{}: {v} too wide",
                            def.name,
                            f.name
                        );
                        assert!(
                            values.insert(*v),
                            "{}.{}: duplicate enum value {v}",
                            def.name,
                            f.name
                        );
                        assert!(!n.is_empty());
                    }
                }
                FieldKind::Bool => assert_eq!(f.width(), 1, "{}.{}", def.name, f.name),
                FieldKind::Float24 => assert_eq!(f.width(), 24, "{}.{}", def.name, f.name),
                FieldKind::Float20 => assert_eq!(f.width(), 20, "{}.{}", def.name, f.name),
                FieldKind::Float16 => assert_eq!(f.width(), 16, "{}.{}", def.name, f.name),
                FieldKind::Float31 => {
                    assert_eq!((f.lo, f.hi), (1, 31), "{}.{}", def.name, f.name)
                }
                FieldKind::Fixed {
                    signed,
                    int_bits,
                    frac_bits,
                    ..
                } => assert_eq!(
                    f.width(),
                    u32::from(signed) + u32::from(int_bits) + u32::from(frac_bits),
                    "{}.{}: fixed-point width",
                    def.name,
                    f.name
                ),
                FieldKind::Rgba8 => assert_eq!(f.width(), 32),
                FieldKind::Rgb8 => assert_eq!(f.width(), 24),
                FieldKind::Const(v) => assert!(f.width() == 32 || v < (1 << f.width())),
                _ => {}
            }
        }
        assert!(!def.doc.trim().is_empty(), "{} has no doc", def.name);
    }
}

#[test]
fn blocks_match_id_ranges() {
    for def in regs::all() {
        assert_eq!(def.block, Block::of(def.id), "{}", def.name);
        assert_ne!(def.block, Block::Unknown, "{}", def.name);
    }
    assert_eq!(Block::of(0x2E3), Block::Unknown);
    assert_eq!(Block::of(0xFFFF), Block::Unknown);
}

#[test]
fn ports_are_exactly_the_fifo_registers() {
    let ports: Vec<_> = regs::all().filter(|d| d.port.is_some()).collect();
    // 9 aliased ports x 8 ids + GAS_LUT_DATA + FIXEDATTRIB_DATA0-2.
    assert_eq!(ports.len(), 9 * 8 + 1 + 3);
    for d in ports {
        assert!(
            d.fields.iter().all(|f| f.kind == FieldKind::Data),
            "{}: data ports hold data words",
            d.name
        );
    }
}

#[test]
fn id_constants_match_the_table() {
    let mut n = 0;
    for (const_name, id) in id_constants() {
        assert_eq!(name(id), Some(const_name), "id::{const_name} = {id:#05x}");
        n += 1;
    }
    assert!(n > 150, "only {n} constants");
    // Port constants name the first alias.
    for (c, want) in [
        (id::VSH_FLOATUNIFORM_DATA, "VSH_FLOATUNIFORM_DATA[0]"),
        (id::GSH_FLOATUNIFORM_DATA, "GSH_FLOATUNIFORM_DATA[0]"),
        (id::VSH_CODETRANSFER_DATA, "VSH_CODETRANSFER_DATA[0]"),
        (id::GSH_CODETRANSFER_DATA, "GSH_CODETRANSFER_DATA[0]"),
        (id::VSH_OPDESCS_DATA, "VSH_OPDESCS_DATA[0]"),
        (id::GSH_OPDESCS_DATA, "GSH_OPDESCS_DATA[0]"),
        (id::LIGHTING_LUT_DATA, "LIGHTING_LUT_DATA[0]"),
        (id::FOG_LUT_DATA, "FOG_LUT_DATA[0]"),
        (id::PROCTEX_LUT_DATA, "PROCTEX_LUT_DATA[0]"),
        (id::GAS_LUT_DATA, "GAS_LUT_DATA"),
        (id::FIXEDATTRIB_DATA0, "FIXEDATTRIB_DATA0"),
        (id::FIXEDATTRIB_DATA2, "FIXEDATTRIB_DATA2"),
        (id::VSH_FLOATUNIFORM_CONFIG, "VSH_FLOATUNIFORM_INDEX"),
        (id::GSH_FLOATUNIFORM_CONFIG, "GSH_FLOATUNIFORM_INDEX"),
    ] {
        assert_eq!(name(c), Some(want));
    }
    // Index-generated groups.
    assert_eq!(
        name(id::light(3) + id::light_offset::DIFFUSE),
        Some("LIGHT3_DIFFUSE")
    );
    assert_eq!(
        name(id::light(7) + id::light_offset::ATTENUATION_SCALE),
        Some("LIGHT7_ATTENUATION_SCALE")
    );
    assert_eq!(
        name(id::texenv(4) + id::texenv_offset::SCALE),
        Some("TEXENV4_SCALE")
    );
    assert_eq!(id::texenv(4), 0x0F0);
    assert_eq!(
        name(id::attribbuffer(11) + id::attribbuffer_offset::CONFIG2),
        Some("ATTRIBBUFFER11_CONFIG2")
    );
    assert_eq!(id::attribbuffer(11) + 2, 0x226);
}

#[test]
fn well_known_ids() {
    for (id, want) in [
        (0x010, "FINALIZE"),
        (0x041, "VIEWPORT_WIDTH"),
        (0x0C0, "TEXENV0_SOURCE"),
        (0x0FD, "TEXENV_BUFFER_COLOR"),
        (0x107, "DEPTH_COLOR_MASK"),
        (0x111, "FRAMEBUFFER_FLUSH"),
        (0x11C, "DEPTHBUFFER_LOC"),
        (0x11D, "COLORBUFFER_LOC"),
        (0x11E, "FRAMEBUFFER_DIM"),
        (0x140, "LIGHT0_SPECULAR0"),
        (0x1BB, "LIGHT7_ATTENUATION_SCALE"),
        (0x203, "ATTRIBBUFFER0_OFFSET"),
        (0x22E, "DRAWARRAYS"),
        (0x23C, "CMDBUF_JUMP0"),
        (0x25E, "PRIMITIVE_CONFIG"),
        (0x280, "GSH_BOOLUNIFORM"),
        (0x2BA, "VSH_ENTRYPOINT"),
        (0x2C0, "VSH_FLOATUNIFORM_INDEX"),
        (0x2C4, "VSH_FLOATUNIFORM_DATA[3]"),
        (0x2DD, "VSH_OPDESCS_DATA[7]"),
    ] {
        assert_eq!(name(id), Some(want), "{id:#05x}");
    }
    assert_eq!(id::FRAMEBUFFER_FLUSH, 0x111);
    assert_eq!(id::DEPTH_COLOR_MASK, 0x107);
}

#[test]
fn unknown_ids_have_no_entry_and_never_panic() {
    // 0x1AF: unused offset 0xF of light 6.
    for id in [0x001, 0x045, 0x1AF, 0x2E3, 0x2FF, 0x300, 0x1234, 0xFFFF] {
        assert_eq!(name(id), None, "{id:#x}");
        let d = regs::describe(id, 0xDEAD_BEEF);
        assert!(!d.known);
        assert_eq!(d.name, format!("unknown register 0x{id:03X}"));
        assert_eq!(d.fields.len(), 1);
        assert_eq!(d.fields[0].meaning, "0xDEADBEEF");
    }
    assert_eq!(name(0x148), None, "light 0 offset 8 is unused");
    assert_eq!(regs::describe(0x2E3, 5).name, "unknown register 0x2E3");
    for id in 0..=u16::MAX {
        let _ = regs::describe(id, u32::from(id).wrapping_mul(0x9E37_79B9));
        let _ = regs::port(id);
    }
}

#[test]
fn lookup_by_name() {
    assert_eq!(id_by_name("DEPTH_COLOR_MASK"), Some(0x107));
    assert_eq!(id_by_name("GPUREG_depth_color_mask"), Some(0x107));
    assert_eq!(id_by_name("vsh_floatuniform_data[3]"), Some(0x2C4));
    assert_eq!(id_by_name("NOT_A_REGISTER"), None);
    assert_eq!(id_by_name(""), None);
    assert_eq!(id_by_name("é"), None);
}

proptest! {
    /// Generic decode of every catalogued register: extracting each non-alias, non-constant
    /// field and inserting it into a zero word gives back the covered bits.
    #[test]
    fn every_entry_round_trips_through_its_fields(raw in any::<u32>()) {
        for def in regs::all() {
            let mut word = 0u32;
            for f in def.fields.iter().filter(|f| !f.alias && !matches!(f.kind, FieldKind::Const(_))) {
                word = f.insert(word, f.extract(raw));
            }
            prop_assert_eq!(word, raw & covered_mask(def.fields), "{}", def.name);
            prop_assert_eq!(def.covered_mask(), covered_mask(def.fields));
            // Describing never fails and gives one entry per field.
            let d = regs::describe(def.id, raw);
            prop_assert_eq!(d.fields.len(), def.fields.len());
        }
    }
}
