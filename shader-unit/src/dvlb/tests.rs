// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Unit tests of the DVLB/DVOJ parser on small hand-built files.

use super::*;

/// Little-endian byte writer for hand-built test files.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn raw(&mut self, v: &[u8]) -> &mut Self {
        self.0.extend_from_slice(v);
        self
    }
    fn pos(&self) -> u32 {
        self.0.len() as u32
    }
    fn set_u32(&mut self, at: u32, v: u32) {
        self.0[at as usize..at as usize + 4].copy_from_slice(&v.to_le_bytes());
    }
}

/// A picasso-2.x-shaped file: DVLB, DVLP (0x28 header), code, opdescs, one DVLE with one float
/// constant, one bool constant, two outputs, one uniform and a symbol table.
fn picasso_like() -> Vec<u8> {
    let mut w = W::default();
    w.raw(b"DVLB").u32(1).u32(0); // DVLE offset patched below
    let dvlp = w.pos();
    assert_eq!(dvlp, 0xC);
    w.raw(b"DVLP")
        .u32(0)
        .u32(0x28)
        .u32(2)
        .u32(0x30)
        .u32(1)
        .u32(0x38)
        .u32(0)
        .u32(0)
        .u32(0);
    w.u32(0x4E07_F001).u32(0x8800_0000); // two program words
    w.u32(0x0000_036F).u32(0); // one opdesc
    let dvle = w.pos();
    w.set_u32(8, dvle);
    w.raw(b"DVLE")
        .u16(0x1002)
        .u8(0)
        .u8(0)
        .u32(0)
        .u32(2)
        .u16(0x0003)
        .u16(0x0003);
    w.u8(0).u8(0).u8(0).u8(0);
    // constant table at 0x40: 2 entries (0x28 bytes)
    w.u32(0x40).u32(2);
    w.u32(0x68).u32(0); // labels: empty, pointing at the outputs
    w.u32(0x68).u32(2); // outputs
    w.u32(0x78).u32(1); // uniforms
    w.u32(0x80).u32(11); // symbols
    // constants
    w.u16(2)
        .u16(95)
        .u32(0x3F_0000)
        .u32(0)
        .u32(0xBF_0000)
        .u32(0x3E_0000);
    w.u16(0).u16(3).u32(1).u32(0).u32(0).u32(0);
    // outputs
    w.u16(0).u16(0).u16(0xF).u16(0);
    w.u16(2).u16(1).u16(0x7).u16(0);
    // uniform: projection c0-c3
    w.u32(0).u16(0x10).u16(0x13);
    w.raw(b"projection\0");
    w.0
}

#[test]
fn parses_a_picasso_shaped_file() {
    let bytes = picasso_like();
    let dvlb = Dvlb::parse(&bytes).expect("valid file");
    assert_eq!(dvlb.dvlp.offset, 0xC);
    assert_eq!(dvlb.dvlp.code, vec![0x4E07_F001, 0x8800_0000]);
    assert_eq!(
        dvlb.dvlp.opdescs,
        vec![OpdescEntry {
            descriptor: 0x36F,
            extra: 0
        }]
    );
    assert_eq!(dvlb.operand_descriptors(), vec![0x36F]);
    let ext = dvlb.dvlp.layout.extension.expect("full DVLP header");
    assert_eq!(
        ext,
        DvlpExtension {
            line_count: 0,
            filename_offset: 0,
            filename_size: 0
        }
    );
    assert!(dvlb.dvlp.lines.is_empty());

    assert_eq!(dvlb.dvles.len(), 1);
    let e = &dvlb.dvles[0];
    assert_eq!(e.version, 0x1002);
    assert_eq!(e.kind, ShaderKind::Vertex);
    assert_eq!((e.main_start, e.main_end), (0, 2));
    assert_eq!((e.input_mask, e.output_mask), (3, 3));
    assert_eq!(e.gs_mode, GsMode::Point);
    assert_eq!(e.constants.len(), 2);
    assert_eq!(e.constants[0].register, 95);
    assert_eq!(
        e.constants[0].value,
        ConstantValue::Float([0x3F_0000, 0, 0xBF_0000, 0x3E_0000])
    );
    assert_eq!(e.constants[1].value, ConstantValue::Bool(true));
    assert_eq!(e.constants[1].register, 3);
    assert!(e.labels.is_empty());
    assert_eq!(e.outputs[1].semantic, OutputSemantic::Color);
    assert_eq!(e.outputs[1].mask, 7);
    assert_eq!(e.uniforms[0].name, "projection");
    assert_eq!(e.uniforms[0].start_register(), UniformRegister::Float(0));
    assert_eq!(e.uniforms[0].len(), 4);
    assert_eq!(e.symbols, b"projection\0");
}

/// nihstro layout: the DVLE header directly after a 0x1C-byte DVLP header, tables after the code.
#[test]
fn parses_a_dvle_placed_inside_the_long_dvlp_header_span() {
    let mut w = W::default();
    w.raw(b"DVLB").u32(1).u32(0x28);
    w.raw(b"DVLP")
        .u32(0)
        .u32(0x5C)
        .u32(1)
        .u32(0x60)
        .u32(1)
        .u32(0);
    assert_eq!(w.pos(), 0x28);
    w.raw(b"DVLE")
        .u16(0)
        .u8(0)
        .u8(0)
        .u32(0)
        .u32(0)
        .u16(0)
        .u16(0)
        .u32(0);
    w.u32(0x4C).u32(0); // constants (empty)
    w.u32(0x4C).u32(1); // one label, after the code and the opdesc
    w.u32(0x5C).u32(0);
    w.u32(0x5C).u32(0);
    w.u32(0x5C).u32(5);
    assert_eq!(w.pos(), 0x68);
    w.u32(0x8800_0000); // code at DVLP + 0x5C
    w.u32(0x1B).u32(0); // opdesc at DVLP + 0x60
    assert_eq!(w.pos(), 0x74);
    w.u16(0).u16(0).u32(0).u32(0xFFFF_FFFF).u32(0); // label "main" at 0
    w.raw(b"main\0");
    let dvlb = Dvlb::parse(&w.0).expect("valid nihstro-shaped file");
    assert_eq!(
        dvlb.dvlp.layout.extension, None,
        "bytes 0x1C.. of the DVLP belong to the DVLE"
    );
    assert_eq!(dvlb.dvlp.code, vec![0x8800_0000]);
    let e = &dvlb.dvles[0];
    assert_eq!(e.version, 0);
    assert_eq!(e.labels.len(), 1);
    assert_eq!(e.labels[0].name, "main");
    assert_eq!(e.labels[0].size, 0xFFFF_FFFF);
}

#[test]
fn parses_several_dvles_sharing_one_program() {
    // Insert a second DVLE offset after the first: everything after the offset table moves by
    // 4 bytes, which the relative DVLP/DVLE offsets absorb.
    let single = picasso_like();
    let first = u32::from_le_bytes(single[8..12].try_into().unwrap());
    let mut w = W::default();
    w.raw(b"DVLB").u32(2).u32(first + 4).u32(0);
    w.raw(&single[12..]);
    let second = w.pos();
    w.set_u32(12, second);
    // A geometry-shader DVLE with empty tables (all offsets and counts zero).
    w.raw(b"DVLE")
        .u16(0x1002)
        .u8(1)
        .u8(1)
        .u32(1)
        .u32(2)
        .u16(0)
        .u16(1);
    w.u8(2).u8(0x10).u8(0).u8(3);
    for _ in 0..10 {
        w.u32(0);
    }
    let dvlb = Dvlb::parse(&w.0).expect("two DVLEs");
    assert_eq!(dvlb.dvlp.offset, 0x10);
    assert_eq!(dvlb.dvlp.code.len(), 2);
    assert_eq!(dvlb.dvles.len(), 2);
    assert_eq!(dvlb.dvles[0].uniforms[0].name, "projection");
    let gs = &dvlb.dvles[1];
    assert_eq!(gs.offset, second);
    assert_eq!(gs.kind, ShaderKind::Geometry);
    assert_eq!(gs.merge_outmaps, 1);
    assert_eq!(gs.gs_mode, GsMode::Fixed);
    assert_eq!((gs.gs_fixed_start, gs.gs_fixed_num), (0x10, 3));
    assert!(gs.constants.is_empty() && gs.symbols.is_empty());
}

#[test]
fn wrong_magic_is_a_typed_error() {
    let mut bytes = picasso_like();
    bytes[0] = b'X';
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::DvlbHeader);
    assert_eq!(err.offset, 0);
    assert!(matches!(err.kind, DvlbErrorKind::BadMagic { expected, .. } if expected == DVLB_MAGIC));
    assert_eq!(
        err.to_string(),
        "DVLB header at 0x0: expected magic \"DVLB\", found \"XVLB\""
    );

    let mut bytes = picasso_like();
    let dvle = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[dvle + 3] = 0;
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::DvleHeader(0));
    assert_eq!(err.offset, dvle as u64);
    assert!(err.to_string().contains("found \"DVL\\x00\""), "{err}");
}

#[test]
fn absurd_counts_are_rejected_before_allocating() {
    let mut bytes = picasso_like();
    bytes[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::DvleOffsetTable);
    assert!(
        matches!(err.kind, DvlbErrorKind::CountTooLarge { count, .. } if count == u64::from(u32::MAX))
    );

    let mut bytes = picasso_like();
    let dvle = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[dvle + 0x1C..dvle + 0x20].copy_from_slice(&4000u32.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::Constants(Owner::Dvle(0)));
    assert_eq!(err.offset, dvle as u64 + 0x40);
    let msg = err.to_string();
    assert!(
        msg.starts_with(&format!(
            "DVLE[0] constant table at 0x{:X}: count 4000 exceeds file size",
            dvle + 0x40
        )),
        "{msg}"
    );

    let mut bytes = picasso_like();
    bytes[0xC + 0x0C..0xC + 0x10].copy_from_slice(&0x4000_0000u32.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::Program);
}

#[test]
fn offsets_past_the_end_are_rejected() {
    let mut bytes = picasso_like();
    bytes[8..12].copy_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::DvleHeader(0));
    assert_eq!(err.offset, 0xFFFF_FFF0);
    assert!(matches!(err.kind, DvlbErrorKind::OffsetPastEnd { .. }));

    // A table offset that overflows 32 bits when added to the DVLE offset.
    let mut bytes = picasso_like();
    let dvle = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    bytes[dvle + 0x28..dvle + 0x2C].copy_from_slice(&u32::MAX.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::Outputs(Owner::Dvle(0)));
    assert_eq!(err.offset, dvle as u64 + u64::from(u32::MAX));
}

#[test]
fn symbol_offsets_outside_the_table_are_rejected() {
    let mut bytes = picasso_like();
    let dvle = u32::from_le_bytes(bytes[8..12].try_into().unwrap()) as usize;
    let uniform = dvle + 0x78;
    bytes[uniform..uniform + 4].copy_from_slice(&12u32.to_le_bytes());
    let err = Dvlb::parse(&bytes).unwrap_err();
    assert_eq!(err.section, Section::Uniform(Owner::Dvle(0), 0));
    assert_eq!(err.offset, uniform as u64);
    assert_eq!(
        err.kind,
        DvlbErrorKind::SymbolOutOfRange {
            symbol_offset: 12,
            table_size: 11
        }
    );
}

#[test]
fn short_and_empty_inputs() {
    let err = Dvlb::parse(&[]).unwrap_err();
    assert_eq!(
        err.kind,
        DvlbErrorKind::Truncated {
            needed: 4,
            available: 0
        }
    );
    let err = Dvlb::parse(b"DV").unwrap_err();
    assert_eq!(
        err.kind,
        DvlbErrorKind::Truncated {
            needed: 4,
            available: 2
        }
    );
    let err = Dvlb::parse(b"DX").unwrap_err();
    assert!(matches!(err.kind, DvlbErrorKind::BadMagic { .. }));
    let err = Dvlb::parse(b"DVLB\x01\x00").unwrap_err();
    assert_eq!(
        err.kind,
        DvlbErrorKind::Truncated {
            needed: 8,
            available: 6
        }
    );
}

#[test]
fn every_truncation_of_the_synthetic_file_fails() {
    let bytes = picasso_like();
    for len in 0..bytes.len() {
        assert!(
            Dvlb::parse(&bytes[..len]).is_err(),
            "truncated to {len} bytes parsed"
        );
    }
}

#[test]
fn unknown_enum_values_are_kept() {
    assert_eq!(ShaderKind::from_raw(7), ShaderKind::Other(7));
    assert_eq!(ShaderKind::Other(7).to_raw(), 7);
    assert_eq!(GsMode::from_raw(9).to_raw(), 9);
    for raw in 0..16 {
        assert_eq!(OutputSemantic::from_raw(raw).to_raw(), raw);
    }
    assert_eq!(OutputSemantic::from_raw(7), OutputSemantic::Other(7));
    assert_eq!(OutputSemantic::from_raw(7).picasso_name(), None);
    for raw in 0..0x100 {
        assert_eq!(UniformRegister::from_raw(raw).to_raw(), raw);
    }
    assert_eq!(UniformRegister::from_raw(0x0F), UniformRegister::Input(15));
    assert_eq!(UniformRegister::from_raw(0x6F), UniformRegister::Float(95));
    assert_eq!(UniformRegister::from_raw(0x73), UniformRegister::Int(3));
    assert_eq!(
        UniformRegister::from_raw(0x74),
        UniformRegister::Other(0x74)
    );
    assert_eq!(UniformRegister::from_raw(0x87), UniformRegister::Bool(15));
}

/// A DVOJ laid out per the 3dbrew table.
#[test]
fn parses_a_dvoj_object() {
    let mut w = W::default();
    w.raw(b"DVOJ")
        .u16(0x1002)
        .u8(1)
        .u8(0)
        .u16(0x0001)
        .u16(0x0003)
        .u32(0xFFFF_FFFF);
    let hdr_end = DVOJ_HEADER_SIZE;
    // Tables start right after the header, in this order: code(2), opdesc(1), consts(1),
    // labels(0), block1(2), block2(1), outputs(1), uniforms(0), symbols.
    let code = hdr_end;
    let op = code + 8;
    let cst = op + 8;
    let b1 = cst + 20;
    let b2 = b1 + 16;
    let out = b2 + 12;
    let sym = out + 8;
    w.u32(cst)
        .u32(1)
        .u32(cst)
        .u32(0)
        .u32(code)
        .u32(2)
        .u32(op)
        .u32(1);
    w.u32(b1)
        .u32(2)
        .u32(b2)
        .u32(1)
        .u32(out)
        .u32(1)
        .u32(sym)
        .u32(0)
        .u32(sym)
        .u32(6);
    assert_eq!(w.pos(), hdr_end);
    w.u32(0x4C00_0000).u32(0x8800_0000);
    w.u32(0x1B).u32(0);
    w.u16(1).u16(2).raw(&[1, 2, 3, 4]).u32(0).u32(0).u32(0);
    w.u32(0).u32(10).u32(0).u32(11);
    w.u32(0).u32(5).u32(6);
    w.u16(0).u16(0).u16(0xF).u16(0);
    w.raw(b"a.vsh\0");
    let d = Dvoj::parse(&w.0).expect("valid DVOJ");
    assert_eq!(d.kind, ShaderKind::Geometry);
    assert_eq!((d.input_mask, d.output_mask), (1, 3));
    assert_eq!(d.code.len(), 2);
    assert_eq!(d.constants[0].value, ConstantValue::Int([1, 2, 3, 4]));
    assert_eq!(d.line_info.len(), 2);
    assert_eq!(d.line_info[1].line, 11);
    assert_eq!(d.line_info[1].filename.as_deref(), Some("a.vsh"));
    assert_eq!(d.block2, vec![[0, 5, 6]]);
    assert!(matches!(parse_shader_file(&w.0), Ok(ShaderFile::Dvoj(_))));
    assert!(matches!(
        parse_shader_file(&picasso_like()),
        Ok(ShaderFile::Dvlb(_))
    ));
    for len in 0..w.0.len() {
        assert!(
            Dvoj::parse(&w.0[..len]).is_err(),
            "truncated DVOJ to {len} bytes parsed"
        );
    }
}
