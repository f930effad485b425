//! Unit tests of the scene builder: projections, output maps, texture encoding, fog LUT,
//! vertex-input words, the register sequences of command lists, the trace stream a frame
//! produces, and an end-to-end render through gpu-core's trace player.

use pica_cmd::citrace::{
    CiTrace, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER, StreamEvent,
};
use pica_cmd::cmdlist::{FINALIZE_ID, RegWrite, parse};
use pica_cmd::regs::id;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::TevSource;
use pica_cmd::regs::texturing::{TextureFormat, WrapMode};
use shader_unit::asm::AsmOutput;

use gpu_core::lcd::{Screen, pdc};

use super::effect::{FogLut, tev_replace};
use super::layout::{AttribLayout, BufferLayout};
use super::math;
use super::shader::{Outmap, ShaderBinary, ShaderProgram};
use super::texture::{Image, Sampler, encode_level, encode_mip_chain};
use super::{CommandList, Effect, Scene, SceneError, Unit, VertexBuffer};

const PASS_VS: &str = "
.fvec projection[4]
.constf consts(0.0, 1.0, 0.5, 2.0)
.out outpos position
.out outclr color
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outclr, v1
    end
.end
";

const POINT_GS: &str = "
.gsh point c0
.out gpos position
.out gclr color
.entry gmain
.proc gmain
    setemit 0
    mov gpos, v0
    mov gclr, v1
    emit
    end
.end
";

const EPS: f32 = 1e-5;

fn writes(bytes: &[u8]) -> Vec<RegWrite> {
    parse(bytes).expect("list parses").reg_writes().collect()
}

fn finished(list: CommandList) -> (Vec<u8>, Vec<RegWrite>) {
    let done = list.finish().expect("list finishes");
    let w = writes(&done.bytes);
    (done.bytes, w)
}

fn values_of(w: &[RegWrite], id: u16) -> Vec<u32> {
    w.iter().filter(|x| x.id == id).map(|x| x.value).collect()
}

// ----- math ------------------------------------------------------------------------------

#[test]
fn perspective_depth_convention() {
    let p = math::perspective(1.0, 1.0, 0.5, 10.0);
    let near = math::transform(&p, [0.0, 0.0, -0.5, 1.0]);
    let far = math::transform(&p, [0.0, 0.0, -10.0, 1.0]);
    assert!(
        (near[2] / near[3] + 1.0).abs() < EPS,
        "near plane at z/w = -1"
    );
    assert!((far[2] / far[3]).abs() < EPS, "far plane at z/w = 0");
}

#[test]
fn tilt_rotates_screen_axes_into_pica_axes() {
    // Upright right (+x) becomes PICA -y; upright up (+y) becomes PICA +x.
    let p = math::perspective_tilt(1.2, 400.0 / 240.0, 0.1, 10.0);
    let right = math::transform(&p, [1.0, 0.0, -2.0, 1.0]);
    let up = math::transform(&p, [0.0, 1.0, -2.0, 1.0]);
    assert!(right[0].abs() < EPS && right[1] < 0.0);
    assert!(up[1].abs() < EPS && up[0] > 0.0);
    // Orthographic UI projection with y down: pixel (0, 0) is the upright top-left corner,
    // i.e. PICA NDC (+1, +1); pixel (320, 240) is (-1, -1).
    let o = math::ortho_tilt(0.0, 320.0, 240.0, 0.0, 0.0, 1.0);
    let tl = math::transform(&o, [0.0, 0.0, -0.5, 1.0]);
    let br = math::transform(&o, [320.0, 240.0, -0.5, 1.0]);
    assert!((tl[0] - 1.0).abs() < EPS && (tl[1] - 1.0).abs() < EPS);
    assert!((br[0] + 1.0).abs() < EPS && (br[1] + 1.0).abs() < EPS);
    assert!(
        (tl[2] / tl[3] + 0.5).abs() < EPS,
        "eye z -0.5 is halfway in [-1, 0]"
    );
}

#[test]
fn matrix_helpers() {
    let m = math::mul(&math::translate(1.0, 2.0, 3.0), &math::scale(2.0, 2.0, 2.0));
    assert_eq!(
        math::transform(&m, [1.0, 1.0, 1.0, 1.0]),
        [3.0, 4.0, 5.0, 1.0]
    );
    let r = math::rotate_z(std::f32::consts::FRAC_PI_2);
    let v = math::transform(&r, [1.0, 0.0, 0.0, 0.0]);
    assert!(v[0].abs() < EPS && (v[1] - 1.0).abs() < EPS);
    assert_eq!(math::normalize3([0.0, 3.0, 4.0]), [0.0, 0.6, 0.8]);
    assert_eq!(math::normalize3([0.0; 3]), [0.0; 3]);
}

// ----- output maps -----------------------------------------------------------------------

fn out(semantic: u16, register: u16, mask: u16) -> AsmOutput {
    AsmOutput {
        semantic,
        register,
        mask,
    }
}

#[test]
fn outmap_like_libctru() {
    // position o0 xyzw, texcoord0 o1 xy, colour o2 xyzw (the textured_cube example's outputs).
    let m = Outmap::from_outputs(&[out(0, 0, 0xF), out(3, 1, 0x3), out(2, 2, 0xF)]);
    assert_eq!(m.data[..4], [3, 0x0302_0100, 0x1F1F_0D0C, 0x0B0A_0908]);
    assert_eq!(m.data[4..], [0x1F1F_1F1F; 4]);
    assert_eq!(m.mask, 0b111);
    assert_eq!(m.mode, 1, "texture coordinates are output");
    assert_eq!(m.clock, 0x103, "position.z, colour, texcoord0");
    // A masked texcoord0 in zw lands in the z and w bytes; a dummy output counts as a register.
    let m = Outmap::from_outputs(&[out(0, 0, 0xF), out(3, 3, 0xC), out(9, 5, 0xF)]);
    assert_eq!(m.count(), 3);
    assert_eq!(m.mask, 0b10_1001);
    assert_eq!(m.data[4], 0x0D0C_1F1F);
    assert_eq!(m.data[6], 0x1F1F_1F1F, "dummy maps nothing");
    // View (3 components) and normal quaternion set clock bit 24.
    let m = Outmap::from_outputs(&[out(8, 0, 0x7), out(1, 1, 0xF)]);
    assert_eq!(m.data[1], 0x1F14_1312);
    assert_eq!(m.data[2], 0x0706_0504);
    assert_eq!(m.clock, 1 << 24);
    assert_eq!(m.mode, 0);
}

#[test]
fn outmap_merge_orders_common_then_gs_then_vs() {
    let vs = Outmap::from_outputs(&[out(0, 0, 0xF), out(2, 1, 0xF), out(3, 2, 0x3)]);
    let gs = Outmap::from_outputs(&[out(0, 0, 0xF), out(8, 1, 0x7)]);
    let m = Outmap::merge(&vs, &gs);
    assert_eq!(m.count(), 4);
    assert_eq!(
        m.data[1..5],
        [0x0302_0100, 0x1F14_1312, 0x0B0A_0908, 0x1F1F_0D0C]
    );
    assert_eq!(m.clock, vs.clock | gs.clock);
}

#[test]
fn shader_program_registers() {
    let bin =
        ShaderBinary::assemble(&[("pass.v.pica", PASS_VS), ("point.g.pica", POINT_GS)]).unwrap();
    assert!(matches!(
        ShaderProgram::new(&bin, 1),
        Err(SceneError::WrongShaderKind { entry: 1, .. })
    ));
    assert!(matches!(
        ShaderProgram::new(&bin, 7),
        Err(SceneError::NoSuchEntry(7))
    ));
    let vs_only = ShaderProgram::new(&bin, 0).unwrap();
    assert_eq!(vs_only.vs.float_uniform("projection"), Some(0));
    assert_eq!(vs_only.vs.float_uniform("nope"), None);
    assert_eq!(vs_only.gsh_inputbuffer_config(), 0xA000_0000);
    assert_eq!((vs_only.gsh_misc0(), vs_only.gsh_misc1()), (0, 0));
    let with_gs = vs_only.clone().with_geometry(&bin, 1, 2).unwrap();
    assert_eq!(
        with_gs.gsh_inputbuffer_config(),
        0x0800_0001,
        "point mode, stride 2"
    );
    assert_eq!(with_gs.gsh_misc0(), 0);
    assert!(matches!(
        vs_only.with_geometry(&bin, 0, 2),
        Err(SceneError::WrongShaderKind { entry: 0, .. })
    ));
    let err = ShaderBinary::assemble(&[("bad.v.pica", ".proc main\n bogus r0\n.end\n")]);
    assert!(matches!(err, Err(SceneError::Assembly(m)) if m.contains("bad.v.pica")));
}

// ----- textures --------------------------------------------------------------------------

fn test_image() -> Image {
    Image::from_fn(16, 8, |x, y| {
        // ok: small values.
        [
            (x * 16) as u8,
            (y * 32) as u8,
            ((x + y) * 8) as u8,
            (255 - x * 15) as u8,
        ]
    })
}

#[test]
fn texture_encoding_round_trips_through_the_gpu_decoder() {
    let img = test_image();
    for id in [0u32, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11] {
        let format = TextureFormat::from_raw(id);
        let bytes = encode_level(&img, format).unwrap();
        let gpu_format = gpu_core::texture::TextureFormat::ALL[id as usize];
        for y in 0..img.height {
            for x in 0..img.width {
                let p = img.get(x, y);
                let got = gpu_core::texture::format::texel_from_slice(
                    gpu_format, &bytes, x, y, img.width,
                );
                // What each format keeps of the pixel (intensity = red; truncation to the
                // field width, then the decoder's expansion).
                let q = |v: u8, bits: u32| {
                    let t = u32::from(v) >> (8 - bits);
                    // ok: expanded values fit in 8 bits.
                    match bits {
                        8 => v,
                        5 => ((t << 3) | (t >> 2)) as u8,
                        6 => ((t << 2) | (t >> 4)) as u8,
                        4 => (t * 17) as u8,
                        _ => {
                            if t != 0 {
                                255
                            } else {
                                0
                            }
                        }
                    }
                };
                let want = match id {
                    0 => p,
                    1 => [p[0], p[1], p[2], 255],
                    2 => [q(p[0], 5), q(p[1], 5), q(p[2], 5), q(p[3], 1)],
                    3 => [q(p[0], 5), q(p[1], 6), q(p[2], 5), 255],
                    4 => [q(p[0], 4), q(p[1], 4), q(p[2], 4), q(p[3], 4)],
                    5 => [p[0], p[0], p[0], p[3]],
                    6 => [p[0], p[1], 0, 255],
                    7 => [p[0], p[0], p[0], 255],
                    8 => [0, 0, 0, p[3]],
                    9 => [q(p[0], 4), q(p[0], 4), q(p[0], 4), q(p[3], 4)],
                    10 => [q(p[0], 4), q(p[0], 4), q(p[0], 4), 255],
                    _ => [0, 0, 0, q(p[3], 4)],
                };
                assert_eq!(got, want, "format {id} texel ({x}, {y})");
            }
        }
    }
}

#[test]
fn texture_encoding_errors_and_mips() {
    let odd = Image::from_fn(12, 8, |_, _| [0; 4]);
    assert!(matches!(
        encode_level(&odd, TextureFormat::Rgba8),
        Err(SceneError::TextureSize {
            width: 12,
            height: 8
        })
    ));
    let img = Image::from_fn(
        32,
        16,
        |x, _| if x < 16 { [255; 4] } else { [0, 0, 0, 255] },
    );
    assert!(matches!(
        encode_level(&img, TextureFormat::Etc1),
        Err(SceneError::UnsupportedTexture(TextureFormat::Etc1))
    ));
    // 32x16 + 16x8 RGBA8 = 2048 + 512 bytes; level 1 is the 2x2 box average.
    let chain = encode_mip_chain(&img, TextureFormat::Rgba8, 2).unwrap();
    assert_eq!(chain.len(), 2048 + 512);
    let half = img.half();
    assert_eq!((half.width, half.height), (16, 8));
    assert_eq!(half.get(7, 0), [255; 4]);
    assert_eq!(half.get(8, 0), [0, 0, 0, 255]);
    assert_eq!(half.get(99, 0), [0; 4], "outside reads transparent black");
}

// ----- fog LUT ---------------------------------------------------------------------------

#[test]
fn fog_lut_entries() {
    let one = FogLut::from_fn(|_| 1.0);
    assert!(
        one.entries.iter().all(|&e| e == 0x7FF << 13),
        "value clamps to 0x7FF, diff 0"
    );
    let ramp = FogLut::from_fn(|x| x);
    for (i, &e) in ramp.entries.iter().enumerate() {
        assert_eq!(e >> 13, 16 * i as u32, "value = x·2048");
        assert_eq!(e & 0x1FFF, 16, "diff = 2048/128");
    }
    let down = FogLut::from_fn(|x| 1.0 - x);
    assert_eq!(
        down.entries[1] & 0x1FFF,
        0x1FFF & (-16i32) as u32,
        "13-bit two's complement"
    );
    // Exponential fog: far plane (depth 0) heavily fogged, near plane (depth → 1) clear.
    let exp = FogLut::exponential(0.07, 0.1, 40.0);
    let value = |i: usize| (exp.entries[i] >> 13) as f32 / 2048.0;
    assert!((value(0) - (-0.07f32 * 40.0).exp()).abs() < 1e-3);
    assert!(value(127) > 0.98);
    assert!((1..128).all(|i| value(i) >= value(i - 1)), "monotonic");
}

// ----- vertex input ----------------------------------------------------------------------

#[test]
fn attribute_and_buffer_words() {
    let a = AttribLayout::new()
        .loader(0, AttribType::Short, 2)
        .loader(1, AttribType::Float, 2)
        .loader(2, AttribType::UnsignedByte, 4)
        .fixed(5);
    // short x2 = 0b01_10, float x2 = 0b01_11, ubyte x4 = 0b11_01.
    assert_eq!(a.format[0], 0x0D76);
    // Attributes 0-2 loaded (bits 16-18 clear), 3-11 fixed; 4 attributes (3 in bits 28-31).
    assert_eq!(a.format[1], (0xFF8 << 16) | (3 << 28));
    assert_eq!(a.permutation, 0x5210);
    assert_eq!(a.count, 4);
    let full = (0..14).fold(AttribLayout::new(), |l, r| l.fixed(r));
    assert_eq!(full.count, 12, "at most 12 attributes");

    let vb = VertexBuffer {
        pa: 0x2000_1000,
        len: 64,
    };
    let b = BufferLayout::new().buffer(vb, 16, &[0, 1, 2, 13]);
    let w = b.loader_words();
    assert_eq!(w[0], 0x0800_1000, "offset from the VRAM base");
    assert_eq!(w[1], 0xD210);
    assert_eq!(w[2], (16 << 16) | (4 << 28));
    assert!(w[3..].iter().all(|&x| x == 0));
}

// ----- command lists ---------------------------------------------------------------------

#[test]
fn bind_program_uploads_code_once_and_configures_the_unit() {
    let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).unwrap();
    let prog = ShaderProgram::new(&bin, 0).unwrap();
    let mut scene = Scene::new().unwrap();
    let mut first = scene.command_list();
    first.bind_program(&prog);
    let done = first.finish().unwrap();
    let w = writes(&done.bytes);
    assert_eq!(
        values_of(&w, id::VSH_CODETRANSFER_DATA),
        bin.code().words,
        "program words uploaded in order"
    );
    assert_eq!(values_of(&w, id::VSH_OPDESCS_DATA), bin.code().opdescs);
    assert_eq!(values_of(&w, id::VSH_CODETRANSFER_END), [1]);
    assert_eq!(
        values_of(&w, id::VSH_ENTRYPOINT),
        [0x7FFF_0000 | prog.vs.main]
    );
    assert_eq!(values_of(&w, id::VSH_OUTMAP_MASK), [0b11]);
    assert_eq!(values_of(&w, id::SH_OUTMAP_TOTAL), [2]);
    assert_eq!(values_of(&w, id::SH_OUTMAP_TOTAL + 1), [0x0302_0100]);
    assert_eq!(values_of(&w, id::SH_OUTMAP_TOTAL + 2), [0x0B0A_0908]);
    assert_eq!(values_of(&w, id::GSH_INPUTBUFFER_CONFIG), [0xA000_0000]);
    // The .constf is uploaded as float24 (index without bit 31, then three packed words).
    let idx = values_of(&w, id::VSH_FLOATUNIFORM_INDEX);
    assert_eq!(idx.len(), 1);
    assert_eq!(idx[0] >> 31, 0);
    let packed = values_of(&w, id::VSH_FLOATUNIFORM_INDEX + 1);
    let v = shader_unit::float::unpack_f24x4_f32([packed[0], 0, 0]);
    assert_eq!(v[3], 2.0, "w first");
    // The same program in the next list: the unit already holds the code.
    let mut second = CommandList::new(done.residency);
    second.bind_program(&prog);
    let (_, w2) = finished(second);
    assert!(values_of(&w2, id::VSH_CODETRANSFER_DATA).is_empty());
    assert_eq!(values_of(&w2, id::VSH_ENTRYPOINT).len(), 1);
}

#[test]
fn geometry_program_switches_com_mode_and_uploads_both_units() {
    let bin =
        ShaderBinary::assemble(&[("pass.v.pica", PASS_VS), ("point.g.pica", POINT_GS)]).unwrap();
    let vs_only = ShaderProgram::new(&bin, 0).unwrap();
    let gs = ShaderProgram::new(&bin, 0)
        .unwrap()
        .with_geometry(&bin, 1, 2)
        .unwrap();
    let mut list = CommandList::new(Default::default());
    list.bind_program(&gs)
        .bind_program(&gs)
        .bind_program(&vs_only)
        .bind_program(&gs);
    let (_, w) = finished(list);
    // With a GS: com mode 1 and separate uploads to both units; VS-only: com mode 0, the VS code
    // is mirrored into the GS unit, so binding the GS program again (same DVLP) uploads nothing.
    assert_eq!(values_of(&w, id::VSH_COM_MODE), [1, 0, 1]);
    assert_eq!(values_of(&w, id::VSH_CODETRANSFER_DATA), bin.code().words);
    assert_eq!(values_of(&w, id::GSH_CODETRANSFER_DATA), bin.code().words);
    assert_eq!(
        values_of(&w, id::GSH_ENTRYPOINT).len(),
        2,
        "rebinding the same program is free"
    );
    assert_eq!(
        values_of(&w, id::GSH_INPUTBUFFER_CONFIG),
        [0x0800_0001, 0xA000_0000, 0x0800_0001]
    );
    // GS bool uniforms: b15 cleared on bind.
    assert_eq!(values_of(&w, id::GSH_BOOLUNIFORM), [0x7FFF_0000; 2]);
}

#[test]
fn draws_follow_the_sdk_sequences() {
    let mut scene = Scene::new().unwrap();
    let vb = scene.vertex_buffer_f32(&[0.0; 24]).unwrap();
    let ib = scene.index_buffer_u8(&[0, 1, 2]).unwrap();
    let mut list = CommandList::new(Default::default());
    list.set_buffers(&BufferLayout::new().buffer(vb, 32, &[0]))
        .draw_arrays(PrimitiveTopology::TriangleStrip, 1, 2)
        .draw_elements(PrimitiveTopology::Triangles, &ib, 3)
        .draw_immediate(
            PrimitiveTopology::Triangles,
            &[&[[0.0; 4]], &[[1.0; 4]], &[[2.0; 4]]],
        );
    assert_eq!(list.draw_count(), 3);
    let done = list.finish().unwrap();
    let w = writes(&done.bytes);
    assert_eq!(values_of(&w, id::DRAWARRAYS), [1]);
    assert_eq!(values_of(&w, id::DRAWELEMENTS), [1]);
    assert_eq!(values_of(&w, id::NUMVERTICES), [2, 3]);
    assert_eq!(values_of(&w, id::VERTEX_OFFSET), [1, 0]);
    assert_eq!(
        values_of(&w, id::INDEXBUFFER_CONFIG),
        [0x8000_0000, ib.pa - 0x1800_0000, 0x8000_0000],
        "arrays/immediate: bit 31; u8 elements: offset from the base"
    );
    // Topology byte: strip, then "geometry primitive" for an indexed triangle list.
    let topo: Vec<u32> = w
        .iter()
        .filter(|x| x.id == id::PRIMITIVE_CONFIG && x.mask == 0x2)
        .map(|x| x.value >> 8)
        .collect();
    assert_eq!(topo, [1, 3, 0]);
    assert_eq!(values_of(&w, id::FIXEDATTRIB_INDEX), [0xF]);
    assert_eq!(values_of(&w, id::FIXEDATTRIB_DATA0).len(), 3);
    // End of list: flush, then FINALIZE padded to 16 bytes.
    assert_eq!(done.bytes.len() % 16, 0);
    assert_eq!(w.last().map(|x| x.id), Some(FINALIZE_ID));
    assert_eq!(values_of(&w, id::FRAMEBUFFER_FLUSH), [1]);
    // Reads: vertices 1..=2 of the buffer, then the 3 index bytes and vertices 0..=2.
    assert_eq!(done.reads, [(vb.pa + 32, 64), (ib.pa, 3), (vb.pa, 96)]);
    // draw_elements without buffers is an error reported at the end.
    let mut bad = CommandList::new(Default::default());
    bad.draw_elements(PrimitiveTopology::Triangles, &ib, 3);
    assert!(matches!(bad.finish(), Err(SceneError::NoBuffers)));
}

#[test]
fn unchanged_state_is_not_rewritten() {
    let mut list = CommandList::new(Default::default());
    let e = Effect::default();
    list.set_effect(&e).set_effect(&e);
    list.set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .set_tev(0, &tev_replace(TevSource::Texture0));
    list.uniform_vec4s(Unit::Vertex, 4, &[[1.0, 2.0, 3.0, 4.0]])
        .uniform_vec4s(Unit::Vertex, 4, &[[1.0, 2.0, 3.0, 4.0]])
        .uniform_vec4s(Unit::Geometry, 4, &[[1.0, 2.0, 3.0, 4.0]]);
    let (_, w) = finished(list);
    assert_eq!(values_of(&w, id::BLEND_FUNC).len(), 1);
    assert_eq!(values_of(&w, id::texenv(0)).len(), 2);
    assert_eq!(values_of(&w, id::VSH_FLOATUNIFORM_INDEX), [0x8000_0004]);
    assert_eq!(values_of(&w, id::GSH_FLOATUNIFORM_INDEX), [0x8000_0004]);
    // f32 mode: w, z, y, x.
    assert_eq!(
        values_of(&w, id::VSH_FLOATUNIFORM_INDEX + 1),
        [4.0f32, 3.0, 2.0, 1.0].map(f32::to_bits)
    );
}

#[test]
fn render_target_and_texture_registers() {
    let mut scene = Scene::new().unwrap();
    let target = scene.top_target().unwrap();
    let tex = scene
        .texture(
            &test_image(),
            TextureFormat::Rgb565,
            1,
            Sampler::nearest(WrapMode::Repeat),
        )
        .unwrap();
    let mut list = CommandList::new(Default::default());
    list.set_render_target(&target)
        .bind_textures([None, Some(&tex), None]);
    let (_, w) = finished(list);
    assert_eq!(values_of(&w, id::COLORBUFFER_LOC), [target.color_pa >> 3]);
    assert_eq!(
        values_of(&w, id::DEPTHBUFFER_LOC),
        [target.depth_pa.unwrap_or(0) >> 3]
    );
    assert_eq!(
        values_of(&w, id::FRAMEBUFFER_DIM),
        [0x0100_0000 | (399 << 12) | 240]
    );
    assert_eq!(values_of(&w, id::DEPTHBUFFER_FORMAT), [3]);
    assert_eq!(values_of(&w, id::COLORBUFFER_FORMAT), [2]);
    assert_eq!(values_of(&w, id::TEXUNIT1_ADDR), [tex.pa >> 3]);
    assert_eq!(values_of(&w, id::TEXUNIT1_DIM), [(16 << 16) | 8]);
    assert_eq!(values_of(&w, id::TEXUNIT1_TYPE), [3]);
    // Nearest filters, REPEAT on both axes.
    assert_eq!(values_of(&w, id::TEXUNIT1_PARAM), [(2 << 8) | (2 << 12)]);
    let cfg: Vec<(u8, u32)> = w
        .iter()
        .filter(|x| x.id == id::TEXUNIT_CONFIG)
        .map(|x| (x.mask, x.value))
        .collect();
    assert_eq!(cfg, [(0xB, 0b10 | (1 << 12)), (0x4, 1 << 16)]);
    // Viewport: 240 × 400.
    let vp = values_of(&w, id::VIEWPORT_WIDTH);
    assert_eq!(shader_unit::float::F24::from_bits(vp[0]).to_f32(), 120.0);
}

// ----- the trace stream ------------------------------------------------------------------

#[test]
fn a_frame_in_the_stream() {
    let mut scene = Scene::new().unwrap();
    let target = scene.bottom_target().unwrap();
    let vb = scene.vertex_buffer_f32(&[0.0; 12]).unwrap();
    scene.clear(&target, [1, 2, 3, 4], 0x00FF_FFFF);
    let mut list = scene.command_list();
    list.set_render_target(&target)
        .set_buffers(&BufferLayout::new().buffer(vb, 16, &[0]))
        .draw_arrays(PrimitiveTopology::Triangles, 0, 3);
    scene.submit(list).unwrap();
    scene.present(&target, Screen::Bottom);
    scene.end_frame();
    assert_eq!((scene.frames(), scene.draws()), (1, 1));
    let bytes = scene.finish().unwrap();
    let mut trace = CiTrace::from_bytes(bytes).unwrap();
    // Initial state: both LCDs RGB8, stride 720, first buffer shown.
    let init = trace.initial_state();
    for s in [Screen::Top, Screen::Bottom] {
        assert_eq!(init.gpu_register(s.pdc_base() + pdc::FORMAT), Some(1));
        assert_eq!(init.gpu_register(s.pdc_base() + pdc::STRIDE), Some(720));
        assert_eq!(init.gpu_register(s.pdc_base() + pdc::SELECT), Some(0));
    }
    let events: Vec<StreamEvent> = trace.events().collect();
    let reg = |e: &StreamEvent| match e {
        StreamEvent::RegisterWrite(w) => Some((w.physical_address, w.value as u32)),
        _ => None,
    };
    // Memory fills: colour (32-bit, RGBA8 value R<<24|G<<16|B<<8|A) and depth (32-bit).
    let fills: Vec<(u32, u32)> = events[..8].iter().filter_map(reg).collect();
    assert_eq!(fills[0], (0x1040_0010, target.color_pa >> 3));
    assert_eq!(
        fills[1],
        (0x1040_0014, (target.color_pa + 240 * 320 * 4) >> 3)
    );
    assert_eq!(fills[2], (0x1040_0018, 0x0102_0304));
    assert_eq!(fills[3], (0x1040_001C, 0x201));
    assert_eq!(fills[6], (0x1040_0028, 0x00FF_FFFF));
    // Command list: size (bytes), address, the list's load, the vertex load, the trigger.
    assert_eq!(reg(&events[8]).map(|r| r.0), Some(PA_CMDLIST_SIZE));
    assert_eq!(reg(&events[9]).map(|r| r.0), Some(PA_CMDLIST_ADDR));
    let (list_pa, list_len) = match &events[10] {
        StreamEvent::MemoryLoad(m) => (m.physical_address, m.size),
        other => panic!("expected the list's load, got {other:?}"),
    };
    assert_eq!(reg(&events[8]), Some((PA_CMDLIST_SIZE, list_len)));
    assert_eq!(reg(&events[9]), Some((PA_CMDLIST_ADDR, list_pa >> 3)));
    match &events[11] {
        StreamEvent::MemoryLoad(m) => assert_eq!((m.physical_address, m.size), (vb.pa, 48)),
        other => panic!("expected the vertex load, got {other:?}"),
    }
    assert_eq!(reg(&events[12]), Some((PA_CMDLIST_TRIGGER, 1)));
    let blob = trace.read_blob(10).unwrap();
    assert!(
        parse(&blob).is_ok(),
        "the loaded list is a valid command list"
    );
    // Display transfer to the back buffer (the second one), RGBA8 → RGB8.
    let xfer: Vec<(u32, u32)> = events[13..19].iter().filter_map(reg).collect();
    assert_eq!(xfer[0], (0x1040_0C00, target.color_pa >> 3));
    assert_eq!(xfer[2], (0x1040_0C08, (320 << 16) | 240));
    assert_eq!(xfer[4], (0x1040_0C10, 0x1000));
    assert_eq!(xfer[5], (0x1040_0C18, 1));
    let back = xfer[1].1 << 3;
    // Swap: the second slot now holds the back buffer and is selected; then the marker.
    let base = Screen::Bottom.pdc_base();
    let swap: Vec<(u32, u32)> = events[19..24].iter().filter_map(reg).collect();
    assert_eq!(swap[0], (base + pdc::A_SECOND, back));
    assert_eq!(swap[4], (base + pdc::SELECT, 1));
    assert!(matches!(events[24], StreamEvent::FrameMarker));
    assert_eq!(events.len(), 25);
}

#[test]
fn command_buffer_overflow_is_an_error() {
    let mut scene = Scene::new().unwrap();
    let mut list = scene.command_list();
    let big = vec![0u32; super::COMMAND_BUFFER_SIZE as usize / 4];
    list.repeated(id::FOG_LUT_DATA, &big);
    assert!(matches!(
        scene.submit(list),
        Err(SceneError::CommandBufferFull { .. })
    ));
}

/// The whole path: a scene built here, replayed by gpu-core, scanned out upright. A red
/// triangle in the upright top-left corner of the top screen must appear there.
#[test]
fn rendered_orientation_matches_the_upright_screen() {
    let mut scene = Scene::new().unwrap();
    let target = scene.top_target().unwrap();
    let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).unwrap();
    let prog = ShaderProgram::new(&bin, 0).unwrap();
    // Upright pixels, y down: a triangle covering the top-left corner region.
    let verts = [
        0.0f32, 0.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0, //
        0.0, 120.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0, //
        200.0, 0.0, -0.5, 1.0, 1.0, 0.0, 0.0, 1.0,
    ];
    let vb = scene.vertex_buffer_f32(&verts).unwrap();
    scene.clear(&target, [0, 0, 255, 255], 0);
    let mut list = scene.command_list();
    list.set_render_target(&target)
        .bind_program(&prog)
        .set_attributes(&AttribLayout::new().loader(0, AttribType::Float, 4).loader(
            1,
            AttribType::Float,
            4,
        ))
        .set_buffers(&BufferLayout::new().buffer(vb, 32, &[0, 1]))
        .uniform_mat4(
            Unit::Vertex,
            0,
            &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
        )
        .set_effect(&Effect::ui())
        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .draw_arrays(PrimitiveTopology::Triangles, 0, 3);
    scene.submit(list).unwrap();
    scene.present(&target, Screen::Top);
    scene.end_frame();
    let r = super::preview::render_frames(scene.finish().unwrap()).unwrap();
    assert!(r.diagnostics.is_empty(), "{:?}", r.diagnostics);
    assert_eq!((r.frames.len(), r.draws), (1, 1));
    let top = &r.frames[0].top;
    assert_eq!((top.width, top.height), (400, 240));
    assert_eq!(
        top.get(20, 20),
        Some([255, 0, 0, 255]),
        "triangle at the top-left"
    );
    assert_eq!(top.get(380, 20), Some([0, 0, 255, 255]));
    assert_eq!(top.get(20, 220), Some([0, 0, 255, 255]));
    // The bottom screen was never presented: it shows its (zeroed) first framebuffer.
    assert_eq!(r.frames[0].bottom.get(0, 0), Some([0, 0, 0, 255]));
}

// ----- fragment lighting -----------------------------------------------------------------

#[test]
fn light_lut_encoding() {
    let ramp = super::lighting::LightLut::power(1.0);
    for (i, &e) in ramp.entries.iter().enumerate() {
        assert_eq!(e & 0xFFF, 16 * i as u32, "value = x·4096 with x = i/256");
        assert_eq!(e >> 12, 8, "difference 1/256 = 8/2048, positive");
    }
    let down = super::lighting::LightLut::from_fn(false, |x| 1.0 - x);
    assert_eq!(down.entries[0] & 0xFFF, 0xFFF, "1.0 clamps to 0xFFF");
    assert_eq!(
        down.entries[5] >> 12,
        0x800 | 8,
        "sign-magnitude difference"
    );
    // Signed inputs: entry 0xFF is x = -1/128, entry 0x80 is x = -1.
    let signed = super::lighting::LightLut::from_fn(true, |x| (x + 1.0) / 2.0);
    assert_eq!(signed.entries[0] & 0xFFF, 2048);
    assert_eq!(signed.entries[0x80] & 0xFFF, 0);
    assert_eq!(signed.entries[0xFF] & 0xFFF, 2032);
}

/// The light environment's writes, executed by gpu-core's command processor, decode (through
/// the register catalogue) to the configured lights and fill the LUT storage.
#[test]
fn light_env_through_the_command_processor() {
    use super::lighting::{Light, LightEnv, LightLut, LutSlot};
    use pica_cmd::regs::Regs;
    use pica_cmd::regs::lighting::{LightEnvConfig, LutInput, LutScale};

    let d0 = LightLut::power(8.0);
    let env = LightEnv {
        ambient: [0.1, 0.2, 0.3],
        lights: vec![
            Light {
                directional: true,
                position: [0.0, 0.6, 0.8],
                diffuse: [1.0, 0.5, 0.25],
                ambient: [0.0; 3],
                specular0: [1.0; 3],
                specular1: [0.0; 3],
                two_sided: false,
            },
            Light {
                directional: false,
                position: [1.0, -2.0, 0.5],
                diffuse: [0.0, 1.0, 0.0],
                ambient: [0.0; 3],
                specular0: [0.0; 3],
                specular1: [0.0; 3],
                two_sided: true,
            },
        ],
        d0: Some(LutSlot {
            lut: d0.clone(),
            input: LutInput::NH,
            signed: false,
            scale: LutScale::X2,
        }),
        config: LightEnvConfig::Config1,
        ..LightEnv::default()
    };
    let mut list = CommandList::new(Default::default());
    list.set_light_env(&env);
    let (_, w) = finished(list);
    let mut gpu = gpu_core::gpu::Gpu::new();
    let mut mem = gpu_core::memory::PhysMem::new();
    for x in &w {
        gpu.write_pica_reg(&mut mem, u32::from(x.id), x.value, x.mask, None, &mut ());
    }
    let r = Regs::new(&gpu.regs);
    assert!(gpu_core::fragment::lighting_enabled(&gpu.regs));
    assert_eq!(r.lighting_num_lights(), 2);
    assert_eq!(r.lighting_ambient().to_f32()[1], 51.0 / 255.0);
    let c0 = r.lighting_config0();
    assert_eq!(c0.config, LightEnvConfig::Config1);
    assert!(c0.clamp_highlights);
    let c1 = r.lighting_config1();
    assert!(!c1.d0_disable && c1.d1_disable && c1.fr_disable && c1.rr_disable);
    assert_eq!((c1.spot_disable, c1.dist_atten_disable), (0xFF, 0xFF));
    let l0 = r.light(0).unwrap();
    assert!(l0.config.directional && !l0.config.two_sided_diffuse);
    assert_eq!(l0.diffuse.to_f32(), [1.0, 127.0 / 255.0, 63.0 / 255.0]);
    let f16 = |v: f32| shader_unit::float::F16::from_f32_truncate(v).to_f32();
    assert_eq!(l0.position.map(|p| p.to_f32()), [0.0, f16(0.6), f16(0.8)]);
    let l1 = r.light(1).unwrap();
    assert!(!l1.config.directional && l1.config.two_sided_diffuse);
    assert_eq!(l1.position[1].to_f32(), -2.0);
    // The D0 table arrived through the data port.
    assert_eq!(gpu.luts.lighting[0].to_vec(), d0.entries.to_vec());
    let [abs, select, scale] = env.lut_input_words();
    assert_eq!(abs & 0xF, 0, "D0 uses |input|");
    assert_eq!(select & 7, LutInput::NH.raw());
    assert_eq!(scale & 7, LutScale::X2.raw());
    // Disabling writes both enables the other way.
    let mut off = CommandList::new(Default::default());
    off.disable_lighting();
    let (_, w) = finished(off);
    assert_eq!(values_of(&w, id::LIGHTING_ENABLE0), [0]);
    assert_eq!(values_of(&w, id::LIGHTING_ENABLE1), [1]);
}
