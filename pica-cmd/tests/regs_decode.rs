//! Specific decodes checked by hand: buffer locations and dimensions (0x11C-0x11E), viewport
//! float24/float31, TEV stage words, depth function, attribute formats and loaders, lights,
//! shader configuration; the `describe` text and JSON forms; the `Regs` getters.

use pica_cmd::regs::framebuffer::{ColorFormat, CompareFunc, DepthFormat};
use pica_cmd::regs::lighting::LightEnvConfig;
use pica_cmd::regs::pipeline::{AttribType, IndexFormat, LoaderEntry, PrimitiveTopology};
use pica_cmd::regs::rasterizer::{CullMode, OutputSemantic, ScissorMode};
use pica_cmd::regs::shader::{FloatUniformMode, ShaderUnitMode};
use pica_cmd::regs::tev::{TevAlphaOperand, TevColorOperand, TevOp, TevScale, TevSource};
use pica_cmd::regs::texturing::{CubeFace, TextureFilter, TextureFormat, TextureType, WrapMode};
use pica_cmd::regs::{
    self, F16, F24, PhysAddr, REG_COUNT, RegSpace, Regs, Rgba8, ShaderUnit, describe, id,
};

/// A register file with the given (id, value) words set.
fn file(words: &[(u16, u32)]) -> Box<[u32; REG_COUNT]> {
    let mut f = Box::new([0u32; REG_COUNT]);
    for &(id, v) in words {
        f[usize::from(id)] = v;
    }
    f
}

fn meaning(id: u16, value: u32, field: &str) -> String {
    let d = describe(id, value);
    d.fields
        .iter()
        .find(|f| f.name == field)
        .unwrap_or_else(|| panic!("{} has no field {field}", d.name))
        .meaning
        .clone()
}

#[test]
fn buffer_locations_and_dimensions() {
    // DEPTHBUFFER_LOC / COLORBUFFER_LOC hold PA >> 3.
    assert_eq!(meaning(0x11C, 0x0300_0000, "addr"), "0x18000000 (PA)");
    assert_eq!(meaning(0x11D, 0x0302_D000, "addr"), "0x18168000 (PA)");
    // Bits 28-31 are not part of the address.
    assert_eq!(meaning(0x11C, 0xF300_0000, "addr"), "0x18000000 (PA)");
    // FRAMEBUFFER_DIM: width 240, height 400 stored as 399, bit 24 set.
    let dim = 240 | (399 << 12) | (1 << 24);
    assert_eq!(dim, 0x0118_F0F0);
    assert_eq!(meaning(0x11E, dim, "width"), "240");
    assert_eq!(meaning(0x11E, dim, "height"), "400 (stored 399)");
    assert_eq!(meaning(0x11E, dim, "flip_bit"), "true");

    let f = file(&[(0x11C, 0x0300_0000), (0x11D, 0x0302_D000), (0x11E, dim)]);
    let r = Regs::new(&f);
    assert_eq!(r.depthbuffer_addr(), PhysAddr(0x1800_0000));
    assert_eq!(r.colorbuffer_addr(), PhysAddr(0x1816_8000));
    let d = r.framebuffer_dim();
    assert_eq!((d.width, d.height()), (240, 400));
    assert!(d.flip_bit);
}

#[test]
fn viewport_float24_and_float31() {
    // 120.0 = 1.875 * 2^6: exponent 6 + 63 = 0x45, mantissa 0.875 * 2^16 = 0xE000.
    assert_eq!(F24::from_f32(120.0).raw(), 0x45_E000);
    assert_eq!(meaning(0x041, 0x45_E000, "value"), "f24 120");
    assert_eq!(meaning(0x043, 0x3F_8000, "value"), "f24 1.5");
    assert_eq!(meaning(0x043, 0xBF_0000, "value"), "f24 -1");
    // float31 1.0 = exponent 63 << 23 = 0x1F800000, stored in bits 1-31: 0x3F000000.
    assert_eq!(meaning(0x042, 0x3F00_0000, "value"), "f31 1");
    // Bit 0 is not part of the float31.
    assert_eq!(meaning(0x042, 0x3F00_0001, "value"), "f31 1");
    // VIEWPORT_XY: signed 10-bit corner (-16, 8).
    let xy = (0x3F0 & 0x3FF) | (8 << 16);
    assert_eq!(meaning(0x068, xy, "x"), "-16");
    assert_eq!(meaning(0x068, xy, "y"), "8");

    let f = file(&[
        (0x041, 0x45_E000),
        (0x042, 0x3F00_0000),
        (0x043, 0x3F_8000),
        (0x068, xy),
        (0x04D, 0xBF_0000),
        (0x04E, 0),
        (0x06D, 1),
        (0x040, 2),
    ]);
    let r = Regs::new(&f);
    assert_eq!(r.viewport_width(), 120.0);
    assert_eq!(r.viewport_width_f24(), F24(0x45_E000));
    assert_eq!(r.viewport_height(), 1.5);
    assert_eq!(r.viewport_inv_width().to_f32(), 1.0);
    let c = r.viewport_xy();
    assert_eq!((c.x, c.y), (-16, 8));
    assert_eq!(r.depthmap_scale(), -1.0);
    assert_eq!(r.depthmap_offset(), 0.0);
    assert_eq!(r.depthmap_mode(), regs::rasterizer::DepthMapMode::ZBuffer);
    assert_eq!(r.cull_mode(), CullMode::CullCw);
}

#[test]
fn tev_stage_words() {
    // Stage 2 (0x0D0-0x0D4): RGB = TEXTURE0 * PRIMARY_COLOR, alpha likewise, constant colour
    // R 0xC0 G 0x40 B 0x80 A 0xFF, alpha scaled 2x.
    let base = id::texenv(2);
    assert_eq!(base, 0x0D0);
    let f = file(&[
        (base, 0x0003_0003),
        (base + 1, 0x0000_1010 | (1 << 12) | (3 << 4)),
        (base + 2, 0x0001_0001),
        (base + 3, 0xFF80_40C0),
        (base + 4, 0x0001_0000),
    ]);
    let r = Regs::new(&f);
    let s = r.tev_stage(2).expect("stage 2");
    assert_eq!(
        s.sources.rgb,
        [
            TevSource::Texture0,
            TevSource::PrimaryColor,
            TevSource::PrimaryColor
        ]
    );
    assert_eq!(
        s.sources.alpha,
        [
            TevSource::Texture0,
            TevSource::PrimaryColor,
            TevSource::PrimaryColor
        ]
    );
    assert_eq!(
        s.operands.rgb,
        [
            TevColorOperand::SrcColor,
            TevColorOperand::OneMinusSrcAlpha,
            TevColorOperand::SrcColor
        ]
    );
    assert_eq!(s.operands.alpha[0], TevAlphaOperand::OneMinusSrcAlpha);
    assert_eq!(s.combiner.rgb_op, TevOp::Modulate);
    assert_eq!(s.combiner.alpha_op, TevOp::Modulate);
    assert_eq!(
        s.const_color,
        Rgba8 {
            r: 0xC0,
            g: 0x40,
            b: 0x80,
            a: 0xFF
        }
    );
    assert_eq!(s.scales.rgb_scale, TevScale::X1);
    assert_eq!(s.scales.alpha_scale, TevScale::X2);
    assert_eq!(r.tev_stages()[2], s);
    assert_eq!(r.tev_stage(6), None);
    assert_eq!(
        meaning(base + 3, 0xFF80_40C0, "color"),
        "rgba(192, 64, 128, 255)"
    );
    assert_eq!(meaning(base, 0x0003_0003, "rgb_source0"), "TEXTURE0");
    assert_eq!(regs::name(base + 2), Some("TEXENV2_COMBINER"));
    // Stage 4 lives at 0x0F0 (after the fog registers).
    assert_eq!(regs::name(0x0F0), Some("TEXENV4_SOURCE"));
}

#[test]
fn depth_function_and_output_merger() {
    // depth test on, LESS, RGBA writes, depth write.
    let v = 0x0000_1F41;
    let f = file(&[
        (0x107, v),
        (0x104, 0x0000_8061),
        (0x105, 0xFF80_FF51),
        (0x116, 3),
        (0x117, 0x0000_0002),
        (0x100, 0x00E4_0100),
    ]);
    let r = Regs::new(&f);
    assert_eq!(r.depth_func(), CompareFunc::Less);
    let m = r.depth_color_mask();
    assert!(
        m.depth_test
            && m.red_write
            && m.green_write
            && m.blue_write
            && m.alpha_write
            && m.depth_write
    );
    let a = r.alpha_test();
    assert!(a.enable);
    assert_eq!(a.func, CompareFunc::Greater);
    assert_eq!(a.reference, 0x80);
    let s = r.stencil_test();
    assert!(s.enable);
    assert_eq!(s.func, CompareFunc::LessEqual);
    assert_eq!(
        (s.write_mask, s.reference, s.input_mask),
        (0xFF, 0x80, 0xFF)
    );
    assert_eq!(r.depth_format(), DepthFormat::D24S8);
    let cf = r.colorbuffer_format();
    assert_eq!(cf.format, ColorFormat::Rgba8);
    assert_eq!(cf.pixel_size, regs::framebuffer::PixelSize::Bits32);
    assert_eq!(
        r.color_operation().blend_mode,
        regs::framebuffer::BlendMode::Blend
    );

    let d = describe(0x107, v);
    assert_eq!(
        d.one_line(),
        "0x107 DEPTH_COLOR_MASK = 0x00001F41 { depth_test_enable: true, depth_func: LESS, \
         red_write: true, green_write: true, blue_write: true, alpha_write: true, \
         depth_write: true }"
    );
    assert_eq!(d.to_string(), d.one_line());
    let multi = format!("{d:#}");
    assert!(multi.starts_with("0x107 DEPTH_COLOR_MASK = 0x00001F41\n"));
    assert!(multi.contains("bits 4-6"));
    assert!(multi.contains("depth_func"));
    assert!(multi.contains("= LESS"));
    assert_eq!(multi.lines().count(), 1 + 7);
    // COLOR_OPERATION's fixed bits 16-25 = 0x0E4.
    assert_eq!(meaning(0x100, 0x00E4_0100, "fixed_0e4"), "0xE4");
    assert_eq!(
        meaning(0x100, 0x0000_0100, "fixed_0e4"),
        "0x0 (expected 0xE4)"
    );
}

#[test]
fn describe_serialises_to_json() {
    let d = describe(0x107, 0x1F41);
    let v = serde_json::to_value(&d).expect("serialise");
    assert_eq!(v["space"], "Internal");
    assert_eq!(v["id"], 0x107);
    assert_eq!(v["name"], "DEPTH_COLOR_MASK");
    assert_eq!(v["known"], true);
    assert_eq!(v["block"], "Framebuffer");
    assert_eq!(v["value"], 0x1F41);
    let f1 = &v["fields"][1];
    assert_eq!(f1["name"], "depth_func");
    assert_eq!(f1["bits"], serde_json::json!([4, 6]));
    assert_eq!(f1["raw"], 4);
    assert_eq!(f1["meaning"], "LESS");
    assert!(f1.get("doc").is_none(), "docs are not serialised");
    assert!(f1.get("alias").is_none(), "alias only when true");
    // Unknown register.
    let u = serde_json::to_value(describe(0x2E3, 7)).expect("serialise");
    assert_eq!(u["name"], "unknown register 0x2E3");
    assert_eq!(u["known"], false);
    assert_eq!(u["fields"][0]["meaning"], "0x00000007");
    assert_eq!(d.space, RegSpace::Internal);
}

#[test]
fn attribute_formats_and_loaders() {
    // attr0: float x3 (type 3, count-1 2 -> 0xB); attr1: ubyte x4 (1 | 3 << 2 -> 0xD).
    // attr2 fixed (mask bit 2), 3 attributes in total.
    let f = file(&[
        (0x200, 0x0300_0000),
        (0x201, 0xDB),
        (0x202, (1 << 18) | (2 << 28)),
        (id::attribbuffer(0), 0x100),
        (id::attribbuffer(0) + 1, 0xC10),
        (id::attribbuffer(0) + 2, (20 << 16) | (3 << 28)),
        (0x227, 0x8000_0040),
        (0x228, 36),
        (0x25E, 0x0000_0102),
    ]);
    let r = Regs::new(&f);
    // PA = (reg & 0x1FFFFFFE) << 3.
    assert_eq!(r.attribbuffers_base(), PhysAddr(0x1800_0000));
    let a0 = r.attrib_format(0).expect("attr0");
    assert_eq!(
        (a0.ty, a0.components, a0.size_bytes()),
        (AttribType::Float, 3, 12)
    );
    let a1 = r.attrib_format(1).expect("attr1");
    assert_eq!((a1.ty, a1.components), (AttribType::UnsignedByte, 4));
    assert_eq!(r.attrib_format(12), None);
    assert_eq!(r.fixed_attrib_mask(), 0b100);
    assert_eq!(r.attrib_count(), 3);
    let l = r.loader(0).expect("loader 0");
    assert_eq!(l.offset, 0x100);
    assert_eq!(l.stride, 20);
    assert_eq!(
        l.used_entries(),
        &[
            LoaderEntry::Attribute(0),
            LoaderEntry::Attribute(1),
            LoaderEntry::Padding(12)
        ]
    );
    assert_eq!(r.loader(12), None);
    let ib = r.index_buffer();
    assert_eq!((ib.offset, ib.format), (0x40, IndexFormat::U16));
    assert_eq!(r.num_vertices(), 36);
    let pc = r.primitive_config();
    assert_eq!(pc.topology, PrimitiveTopology::TriangleStrip);
    assert_eq!(pc.output_count_minus_1, 2);
    assert_eq!(r.topology(), PrimitiveTopology::TriangleStrip);
    assert_eq!(meaning(0x201, 0xDB, "attr0_components"), "3 (stored 2)");
    assert_eq!(meaning(0x201, 0xDB, "attr1_type"), "UNSIGNED_BYTE");
    assert_eq!(
        meaning(id::attribbuffer(0) + 1, 0xC10, "component2"),
        "PAD_4_BYTES"
    );
    assert_eq!(meaning(0x202, (1 << 18) | (2 << 28), "fixed_mask"), "{2}");
}

#[test]
fn command_buffer_channels() {
    let f = file(&[
        (0x238, 0x100),
        (0x23A, 0x0400_0000),
        (0x239, 2),
        (0x23B, 0x0300_0010),
    ]);
    let r = Regs::new(&f);
    let c0 = r.cmdbuf(0).expect("channel 0");
    assert_eq!(c0.size.0, 0x800);
    assert_eq!(c0.addr, PhysAddr(0x2000_0000));
    let c1 = r.cmdbuf(1).expect("channel 1");
    assert_eq!((c1.size.0, c1.addr), (16, PhysAddr(0x1800_0080)));
    assert_eq!(r.cmdbuf(2), None);
    assert_eq!(meaning(0x238, 0x100, "size"), "2048 bytes");
    assert_eq!(meaning(0x23A, 0x0400_0000, "addr"), "0x20000000 (PA)");
    assert_eq!(meaning(0x23C, 1, "trigger"), "0x1 (trigger)");
    assert_eq!(meaning(0x23C, 0, "trigger"), "0 (idle)");
}

#[test]
fn textures() {
    let f = file(&[
        (0x080, 0x0000_1003),
        (0x081, 0xFF00_00FF),
        (0x082, (128 << 16) | 64),
        (
            0x083,
            (1 << 1) | (1 << 2) | (2 << 8) | (3 << 12) | (1 << 28),
        ),
        (0x084, 0x0300_1F80),
        (0x085, 0x0300_0000),
        (0x086, 0x0000_0800),
        (0x08E, 12),
        (0x095, 0x0310_0000),
        (0x096, 7),
    ]);
    let r = Regs::new(&f);
    let cfg = r.texunit_config();
    assert!(cfg.tex0_enable && cfg.tex1_enable && !cfg.tex2_enable);
    let t0 = r.texture_unit(0).expect("unit 0");
    assert!(t0.enabled);
    assert_eq!(
        t0.border_color,
        Rgba8 {
            r: 0xFF,
            g: 0,
            b: 0,
            a: 0xFF
        }
    );
    assert_eq!((t0.dim.width, t0.dim.height), (128, 64));
    assert_eq!(t0.param.mag_filter, TextureFilter::Linear);
    assert_eq!(t0.param.wrap_t, WrapMode::Repeat);
    assert_eq!(t0.param.wrap_s, WrapMode::MirroredRepeat);
    assert_eq!(t0.param.texture_type, TextureType::CubeMap);
    assert_eq!(t0.lod.bias(), -0.5);
    assert_eq!((t0.lod.min_level, t0.lod.max_level), (3, 0));
    assert_eq!(t0.addr, PhysAddr(0x1800_0000));
    assert_eq!(t0.format, TextureFormat::Etc1);
    // -X face: bits 22-27 of ADDR1 with its own low 22 bits.
    assert_eq!(r.cube_face_addr(CubeFace::PositiveX), PhysAddr(0x1800_0000));
    assert_eq!(r.cube_face_addr(CubeFace::NegativeX), PhysAddr(0x1800_4000));
    let t1 = r.texture_unit(1).expect("unit 1");
    assert_eq!(
        (t1.addr, t1.format),
        (PhysAddr(0x1880_0000), TextureFormat::I8)
    );
    assert!(r.texture_unit(3).is_none());
    assert_eq!(meaning(0x084, 0x0300_1F80, "bias"), "fixed1.4.8 -0.5");
    assert_eq!(meaning(0x082, (128 << 16) | 64, "width"), "128");
}

#[test]
fn lights_and_lighting() {
    // Values from ctrulib's reset sequence: light 0 diffuse 0x0CC330CC, z = f16 1.0,
    // spot direction z = 0x800, config directional, attenuation scale f20 1.0.
    let l0 = id::light(0);
    let f = file(&[
        (l0 + id::light_offset::DIFFUSE, 0x0CC3_30CC),
        (l0 + id::light_offset::Z, 0x3C00),
        (l0 + id::light_offset::SPOTDIR_XY, 0x1FFF_1800),
        (l0 + id::light_offset::SPOTDIR_Z, 0x0800),
        (l0 + id::light_offset::CONFIG, 1),
        (l0 + id::light_offset::ATTENUATION_SCALE, 0x0003_F000),
        (0x1C2, 3),
        (0x1C3, 0x8800_0480),
        (0x1C4, 0xFFFF_FFFF),
        (0x1C6, 1),
        (0x1D0, 0x0222_2222),
        (0x1D9, 0x7654_3210),
    ]);
    let r = Regs::new(&f);
    let l = r.light(0).expect("light 0");
    assert_eq!((l.diffuse.r, l.diffuse.g, l.diffuse.b), (204, 204, 204));
    assert_eq!(l.position[2], F16(0x3C00));
    assert_eq!(l.position[2].to_f32(), 1.0);
    assert_eq!(l.spot_direction_raw, [-2048, -1, 2048]);
    assert_eq!(l.spot_direction(), [-1.0, -1.0 / 2048.0, 1.0]);
    assert!(l.config.directional);
    assert_eq!(l.attenuation_scale.to_f32(), 1.0);
    assert!(r.light(8).is_none());
    assert_eq!(r.lighting_num_lights(), 4);
    let c0 = r.lighting_config0();
    assert_eq!(c0.config, LightEnvConfig::Config7);
    assert!(c0.clamp_highlights);
    let c1 = r.lighting_config1();
    assert!(c1.d0_disable && c1.rr_disable && c1.shadow_disabled(7) && c1.dist_atten_disabled(0));
    assert!(r.lighting_disabled());
    assert_eq!(r.lut_input_abs().signed, [true; 7]);
    assert_eq!(r.light_permutation().slots, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert_eq!(
        meaning(l0 + id::light_offset::SPOTDIR_Z, 0x0800, "z"),
        "fixed1.1.11 1"
    );
    assert_eq!(
        meaning(
            l0 + id::light_offset::ATTENUATION_SCALE,
            0x0003_F000,
            "value"
        ),
        "f20 1"
    );
    assert_eq!(meaning(l0 + id::light_offset::Z, 0x3C00, "z"), "f16 1");
    assert_eq!(meaning(0x1C4, 0x0000_0103, "shadow_disable"), "{0, 1}");
}

#[test]
fn lut_entries() {
    use pica_cmd::regs::RegView;
    use pica_cmd::regs::lighting::LightingLutEntry;
    use pica_cmd::regs::tev::{FogLutEntry, ProcTexLutEntry};
    // value 4095 (1.0), difference -2047 (sign-magnitude) per [C].
    let e = LightingLutEntry::from_raw(0xFFF | (0x7FF << 12) | (1 << 23));
    assert_eq!(e.value(), 1.0);
    assert_eq!(e.diff(), -1.0);
    // Fog: value 2047 in bits 13-23 (= 1.0), difference -1 in bits 0-12.
    let fog = FogLutEntry::from_raw((2047 << 13) | 0x1FFF);
    assert_eq!(fog.value(), 1.0);
    assert_eq!(fog.diff_raw, -1);
    let p = ProcTexLutEntry::from_raw(0x0FFF | (0xFFF << 12));
    assert_eq!(p.value(), 1.0);
    assert_eq!(p.diff_raw, -1);
}

#[test]
fn shader_unit_configuration() {
    let f = file(&[
        (0x2B0, 0x7FFF_0005),
        (0x2B1, 0x0001_0203),
        (0x2B9, 0xA000_0002),
        (0x2BA, 0x7FFF_0010),
        (0x2BB, 0x0000_0210),
        (0x2BD, 0x0000_0007),
        (0x2C0, 0x8000_0010),
        (0x2CB, 0x123),
        (0x289, 0x0800_0100),
    ]);
    let r = Regs::new(&f);
    let vs = r.shader_config(ShaderUnit::Vertex);
    assert_eq!(vs.bool_uniforms, 5);
    assert_eq!(
        (
            vs.int_uniforms[0].x,
            vs.int_uniforms[0].y,
            vs.int_uniforms[0].z
        ),
        (3, 2, 1)
    );
    assert_eq!(vs.input.input_count(), 3);
    assert_eq!(vs.input.unit_mode, ShaderUnitMode::VertexShader);
    assert_eq!(vs.entry_point, 0x10);
    assert_eq!(&vs.permutation[..4], &[0, 1, 2, 0]);
    assert_eq!(vs.output_mask, 7);
    assert_eq!(vs.float_uniform_index.index, 0x10);
    assert_eq!(vs.float_uniform_index.mode, FloatUniformMode::Float32);
    assert_eq!(vs.code_offset, 0x123);
    let gs = r.shader_config(ShaderUnit::Geometry);
    assert_eq!(gs.input.unit_mode, ShaderUnitMode::GeometryShader);
    assert_eq!(gs.input.input_to_uniform, 1);
    assert_eq!(meaning(0x2B0, 0x7FFF_0005, "bools"), "{0, 2}");
    assert_eq!(meaning(0x2B0, 0x7FFF_0005, "fixed_7fff"), "0x7FFF");
    assert_eq!(meaning(0x2C0, 0x8000_0010, "mode"), "FLOAT32");
    assert_eq!(meaning(0x2C4, 0x3F80_0000, "data"), "0x3F800000");
    assert_eq!(
        regs::port(0x2C4),
        Some(regs::Port {
            kind: regs::PortKind::FloatUniform(ShaderUnit::Vertex),
            alias: 3
        })
    );
    assert_eq!(
        regs::port(0x29C).map(|p| p.kind),
        Some(regs::PortKind::Code(ShaderUnit::Geometry))
    );
}

#[test]
fn rasterizer_misc() {
    let f = file(&[
        (0x04F, 4),
        (0x050, 0x0302_0100),
        (0x051, 0x1F1F_0D0C),
        (0x065, 3),
        (0x066, (10 << 16) | 20),
        (0x067, (200 << 16) | 300),
        (0x047, 1),
        (0x048, 0x3F_0000),
    ]);
    let r = Regs::new(&f);
    assert_eq!(r.sh_outmap_total(), 4);
    let o0 = r.sh_outmap(0).expect("o0");
    assert_eq!(
        o0.components(),
        [
            OutputSemantic::PositionX,
            OutputSemantic::PositionY,
            OutputSemantic::PositionZ,
            OutputSemantic::PositionW
        ]
    );
    let o1 = r.sh_outmap(1).expect("o1");
    assert_eq!(
        (o1.x, o1.y, o1.z),
        (
            OutputSemantic::Texcoord0U,
            OutputSemantic::Texcoord0V,
            OutputSemantic::Unused
        )
    );
    assert!(r.sh_outmap(7).is_none());
    let s = r.scissor();
    assert_eq!(
        (s.mode, s.x1, s.y1, s.x2, s.y2),
        (ScissorMode::Include, 20, 10, 300, 200)
    );
    assert!(r.user_clip_enabled());
    assert_eq!(r.user_clip_plane()[0].to_f32(), 1.0);
    assert_eq!(meaning(0x050, 0x1F1F_1F1F, "w"), "UNUSED");
}

#[test]
fn proctex_from_the_reset_sequence() {
    let f = file(&[
        (0x0A8, 0x0000_0009),
        (0x0AC, 0x01C0_0301),
        (0x0AD, 0xE0C0_8000),
        (0x0AE, 0xFEFC_F8F0),
    ]);
    let r = Regs::new(&f);
    let p = r.proctex();
    assert_eq!(p.lut.filter, regs::tev::ProcTexFilter::Linear);
    assert_eq!((p.lut.min_lod, p.lut.max_lod), (0, 6));
    // LOD bias f16 assembled from PROCTEX4 bits 19-26 (0x38) and PROCTEX0 bits 20-27 (0).
    assert_eq!(p.lod_bias(), F16(0x3800));
    assert_eq!(p.lod_bias().to_f32(), 0.5);
    assert_eq!(
        (
            p.offsets.level0,
            p.offsets.level1,
            p.offsets.level2,
            p.offsets.level3
        ),
        (0, 0x80, 0xC0, 0xE0)
    );
    assert_eq!(p.offsets_high, [0xF0, 0xF8, 0xFC, 0xFE]);
    assert_eq!(p.config.u_clamp, regs::tev::ProcTexClamp::ToEdge);
    assert_eq!(p.config.v_clamp, regs::tev::ProcTexClamp::ToEdge);
}

#[test]
fn float_text_forms() {
    assert_eq!(meaning(0x041, 0x7F_0000, "value"), "f24 inf");
    assert_eq!(meaning(0x041, 0xFF_0000, "value"), "f24 -inf");
    assert_eq!(meaning(0x041, 0x7F_0001, "value"), "f24 NaN");
    assert_eq!(meaning(0x041, 0x80_0000, "value"), "f24 -0");
    // 2^-63 * (1 + 2^-16): exponent 0 is a normal number (no denormals), printed in
    // scientific notation.
    assert!(meaning(0x041, 0x00_0001, "value").starts_with("f24 1.0842"));
    assert!(meaning(0x041, 0x00_0001, "value").contains("e-19"));
    // 2^20 = 1048576 stays decimal; 2^40 switches to scientific notation.
    assert_eq!(meaning(0x041, (63 + 20) << 16, "value"), "f24 1048576");
    assert_eq!(meaning(0x041, (63 + 40) << 16, "value"), "f24 1.0995116e12");
}
