//! Lock-step diff (`gpu_core::replay::diff`) and the Citra software-renderer sampling mode
//! (issue 16): traces built with the scene builder that differ in one uniform, one shader
//! instruction or one register at a chosen draw must be reported at that draw, vertex and
//! instruction; a trace against itself (and under two equivalent configurations) must be the
//! same; a mipmapped, filtered quad must render differently with `RenderMode::CitraSwrast` and
//! equal the hand-computed nearest-base-level texels.

use gpu_core::draw::VsEngine;
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::pixel::fragment::PixelPath;
use gpu_core::replay::diff::{DiffOptions, DiffOutcome, RunConfig, diff_replays};
use gpu_core::replay::{Replay, Target};
use gpu_core::texture::RenderMode;
use pica_cmd::citrace::CiTrace;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::TevSource;
use pica_cmd::regs::texturing::{TextureFilter, TextureFormat, WrapMode};
use picaview_tests::scene::effect::{tev_modulate, tev_replace};
use picaview_tests::scene::math;
use picaview_tests::scene::{
    AttribLayout, BufferLayout, Effect, Image, Sampler, Scene, ShaderBinary, ShaderProgram, Unit,
};

/// The test shader: position through an orthographic projection, texcoord through, colour
/// = input colour times the `tint` uniform.
const VS: &str = "
.fvec projection[4]
.fvec tint
.constf consts(0.0, 1.0, 0.5, 0.0)
.alias one consts.yyyy
.out outpos position
.out outtc0 texcoord0
.out outclr color
.entry main
.proc main
	mov r0.xy, v0
	mov r0.z, consts.x
	mov r0.w, one
	dp4 outpos.x, projection[0], r0
	dp4 outpos.y, projection[1], r0
	dp4 outpos.z, projection[2], r0
	dp4 outpos.w, projection[3], r0
	mov outtc0, v1
	mov r1, v2
	mul outclr, tint, r1
	end
.end
";

/// Quads drawn (one draw each).
const QUADS: u32 = 4;

/// The draw where the variants differ.
const PLANTED: u32 = 2;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Variant {
    Base,
    /// `tint` differs at the planted draw.
    Uniform,
    /// One instruction of the program differs at the planted draw (`mov r1, v2` → `add r1, v2, v2`).
    Instruction,
    /// The TEV stage 0 constant colour register differs at the planted draw.
    Register,
}

/// One frame: `QUADS` separate 16×16 quads on the top screen, each its own draw.
fn build(variant: Variant) -> Vec<u8> {
    let mut scene = Scene::new().unwrap();
    let top = scene.top_target().unwrap();
    let bin = ShaderBinary::assemble(&[("t.v.pica", VS)]).unwrap();
    let prog = ShaderProgram::new(&bin, 0).unwrap();
    let alt_src = VS.replace("mov r1, v2", "add r1, v2, v2");
    let alt_bin = ShaderBinary::assemble(&[("t.v.pica", alt_src.as_str())]).unwrap();
    let alt = ShaderProgram::new(&alt_bin, 0).unwrap();
    let u_proj = prog.vs.float_uniform("projection").unwrap();
    let u_tint = prog.vs.float_uniform("tint").unwrap();
    let mut verts = Vec::new();
    for q in 0..QUADS {
        let (x0, y0) = (20.0 + 40.0 * q as f32, 30.0);
        let (x1, y1) = (x0 + 16.0, y0 + 16.0);
        let c = [0.2 + 0.2 * q as f32, 0.5, 0.25, 1.0];
        for (x, y, u, v) in [
            (x0, y0, 0.0, 1.0),
            (x1, y0, 1.0, 1.0),
            (x0, y1, 0.0, 0.0),
            (x1, y1, 1.0, 0.0),
        ] {
            verts.extend_from_slice(&[x, y, u, v]);
            verts.extend_from_slice(&c);
        }
    }
    let vbo = scene.vertex_buffer_f32(&verts).unwrap();
    let attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 2)
        .loader(1, AttribType::Float, 2)
        .loader(2, AttribType::Float, 4);
    scene.clear(&top, [0, 0, 0, 255], 0);
    let mut cmd = scene.command_list();
    cmd.set_render_target(&top)
        .bind_program(&prog)
        .set_attributes(&attrs)
        .set_buffers(&BufferLayout::new().buffer(vbo, 32, &[0, 1, 2]))
        .uniform_mat4(
            Unit::Vertex,
            u_proj,
            &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
        )
        .set_effect(&Effect::ui())
        .bind_textures([None, None, None])
        .set_tev(
            0,
            &tev_modulate(TevSource::PrimaryColor, TevSource::Constant),
        );
    for q in 0..QUADS {
        let planted = q == PLANTED;
        let tint = if planted && variant == Variant::Uniform {
            [1.0, 0.75, 1.0, 1.0]
        } else {
            [1.0, 1.0, 1.0, 1.0]
        };
        cmd.uniform_vec4s(Unit::Vertex, u_tint, &[tint]);
        if planted && variant == Variant::Instruction {
            cmd.bind_program(&alt);
        } else {
            cmd.bind_program(&prog);
        }
        if planted && variant == Variant::Register {
            // TEXENV0_COLOR (R bits 0-7, G 8-15, ...): green 0 here, white elsewhere.
            cmd.write(0x0C3, 0xFFFF_00FF);
        }
        cmd.draw_arrays(PrimitiveTopology::TriangleStrip, 4 * q, 4);
    }
    scene.submit(cmd).unwrap();
    scene.present(&top, gpu_core::lcd::Screen::Top);
    scene.end_frame();
    scene.finish().unwrap()
}

fn replay(bytes: &[u8], cfg: RunConfig) -> Replay<Vec<u8>> {
    let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).unwrap());
    cfg.apply(&mut r);
    r
}

fn diff(a: &[u8], ca: RunConfig, b: &[u8], cb: RunConfig) -> DiffOutcome {
    let mut ra = replay(a, ca);
    let mut rb = replay(b, cb);
    diff_replays(&mut ra, &mut rb, &DiffOptions::default(), &mut |_| true).unwrap()
}

fn different(o: DiffOutcome) -> gpu_core::replay::diff::FirstDifference {
    match o {
        DiffOutcome::Different(d) => *d,
        DiffOutcome::Same { draws, .. } => panic!("expected a difference, all {draws} draws agree"),
    }
}

#[test]
fn same_trace_twice_is_the_same() {
    let base = build(Variant::Base);
    let o = diff(&base, RunConfig::default(), &base, RunConfig::default());
    assert_eq!(
        o,
        DiffOutcome::Same {
            draws: u64::from(QUADS),
            frames: 1
        }
    );
    // Reference vs fast shader engine and reference vs specialised pixel path: bit-identical.
    let reference = RunConfig {
        vs_engine: VsEngine::Reference,
        pixel_path: PixelPath::Reference,
        render_mode: RenderMode::Hardware,
    };
    assert!(diff(&base, reference, &base, RunConfig::default()).is_same());
}

#[test]
fn planted_uniform_is_found_at_its_draw_vertex_and_instruction() {
    let d = different(diff(
        &build(Variant::Base),
        RunConfig::default(),
        &build(Variant::Uniform),
        RunConfig::default(),
    ));
    assert_eq!(d.draw, Some(u64::from(PLANTED)), "{}", d.summary());
    assert_eq!(d.draw_in_frame, Some(u64::from(PLANTED)));
    assert_eq!(d.frame, 0);
    let c = d.color.as_ref().expect("colour differs");
    assert_eq!(c.differing, 16 * 16, "{}", d.summary());
    let v = d.vertex.as_ref().expect("vertex outputs differ");
    assert_eq!(v.index_in_draw, 0);
    // o2 = colour; its y (green) is scaled by the tint.
    assert_eq!(
        (v.output_register, v.component),
        (Some(2), 1),
        "{}",
        d.summary()
    );
    assert_eq!((v.a, v.b), (0.5, 0.375));
    assert!(d.input.is_none(), "same inputs: {}", d.summary());
    let i = d.instruction.as_ref().expect("divergent instruction");
    assert!(i.text.starts_with("mul o2"), "{}", d.summary());
    assert_eq!(i.register, "o2.y");
    assert_eq!(i.step, 9);
    assert_eq!((i.a, i.b), (0.5, 0.375));
    assert!(d.depth.is_none());
    let s = d.summary();
    assert!(s.starts_with("first difference: frame 0 draw 2"), "{s}");
    assert!(s.contains("vertex 0 output o2.y"), "{s}");
}

#[test]
fn planted_instruction_is_found() {
    let d = different(diff(
        &build(Variant::Base),
        RunConfig::default(),
        &build(Variant::Instruction),
        RunConfig::default(),
    ));
    assert_eq!(d.draw, Some(u64::from(PLANTED)), "{}", d.summary());
    let v = d.vertex.as_ref().expect("vertex outputs differ");
    assert_eq!((v.index_in_draw, v.output_register), (0, Some(2)));
    let i = d.instruction.as_ref().expect("divergent instruction");
    // `mov r1, v2` (A) vs `add r1, v2, v2` (B), at the same address.
    assert_eq!(i.step, 8, "{}", d.summary());
    assert!(i.text.starts_with("mov r1"), "{}", d.summary());
    let (pc, other) = i.other.clone().expect("B's instruction differs");
    assert_eq!(pc, i.pc);
    assert!(other.starts_with("add r1"), "{other}");
    assert_eq!(i.register, "r1.x");
    assert_eq!(i.b, 2.0 * i.a);
}

#[test]
fn planted_register_changes_only_the_colour() {
    let d = different(diff(
        &build(Variant::Base),
        RunConfig::default(),
        &build(Variant::Register),
        RunConfig::default(),
    ));
    assert_eq!(d.draw, Some(u64::from(PLANTED)), "{}", d.summary());
    let c = d.color.as_ref().expect("colour differs");
    assert_eq!(c.differing, 16 * 16);
    assert_eq!(c.a[1], 128, "{}", d.summary());
    assert_eq!(c.b[1], 0, "green removed by the constant");
    assert_eq!(c.a[0], c.b[0]);
    assert!(
        d.vertex.is_none() && d.instruction.is_none(),
        "{}",
        d.summary()
    );
    assert!(d.depth.is_none());
}

#[test]
fn cancelling_stops_with_an_error() {
    let base = build(Variant::Base);
    let mut a = replay(&base, RunConfig::default());
    let mut b = replay(&base, RunConfig::default());
    let r = diff_replays(&mut a, &mut b, &DiffOptions::default(), &mut |n| n < 2);
    assert!(
        matches!(
            r,
            Err(gpu_core::replay::diff::DiffError::Cancelled { draws: 2 })
        ),
        "{r:?}"
    );
}

/// Texel colours of the base level: A where both coordinates are 1 or 2 modulo 4, B elsewhere.
/// Every 2×2 box of the mip chain holds one A and three B, so every texel of levels 1 and 2 is
/// (A + 3B) / 4, while a nearest lookup of the base level at texel 4k + 2 (± a half texel) is A.
const A: [u8; 4] = [255, 0, 0, 255];
const B: [u8; 4] = [0, 0, 255, 255];

/// One frame: a 64×64 RGBA8 texture with 3 levels, linear / linear / linear-mip filtering,
/// drawn on a 16×16 quad (λ = 2: level 2 on the hardware).
fn textured_quad() -> Vec<u8> {
    let mut scene = Scene::new().unwrap();
    let top = scene.top_target().unwrap();
    let bin = ShaderBinary::assemble(&[("t.v.pica", VS)]).unwrap();
    let prog = ShaderProgram::new(&bin, 0).unwrap();
    let u_proj = prog.vs.float_uniform("projection").unwrap();
    let u_tint = prog.vs.float_uniform("tint").unwrap();
    let img = Image::from_fn(64, 64, |x, y| {
        let inner = |c: u32| c % 4 == 1 || c % 4 == 2;
        if inner(x) && inner(y) { A } else { B }
    });
    let tex = scene
        .texture(
            &img,
            TextureFormat::Rgba8,
            3,
            Sampler {
                mip: TextureFilter::Linear,
                ..Sampler::linear(WrapMode::ClampToEdge)
            },
        )
        .unwrap();
    let (x0, y0) = (100.0f32, 100.0f32);
    let (x1, y1) = (x0 + 16.0, y0 + 16.0);
    let mut verts = Vec::new();
    for (x, y, u, v) in [
        (x0, y0, 0.0, 1.0),
        (x1, y0, 1.0, 1.0),
        (x0, y1, 0.0, 0.0),
        (x1, y1, 1.0, 0.0),
    ] {
        verts.extend_from_slice(&[x, y, u, v, 1.0, 1.0, 1.0, 1.0]);
    }
    let vbo = scene.vertex_buffer_f32(&verts).unwrap();
    scene.clear(&top, [0, 0, 0, 255], 0);
    let mut cmd = scene.command_list();
    cmd.set_render_target(&top)
        .bind_program(&prog)
        .set_attributes(
            &AttribLayout::new()
                .loader(0, AttribType::Float, 2)
                .loader(1, AttribType::Float, 2)
                .loader(2, AttribType::Float, 4),
        )
        .set_buffers(&BufferLayout::new().buffer(vbo, 32, &[0, 1, 2]))
        .uniform_mat4(
            Unit::Vertex,
            u_proj,
            &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
        )
        .uniform_vec4s(Unit::Vertex, u_tint, &[[1.0; 4]])
        .set_effect(&Effect::ui())
        .bind_textures([Some(&tex), None, None])
        .set_tev(0, &tev_replace(TevSource::Texture0))
        .draw_arrays(PrimitiveTopology::TriangleStrip, 0, 4);
    scene.submit(cmd).unwrap();
    scene.present(&top, gpu_core::lcd::Screen::Top);
    scene.end_frame();
    scene.finish().unwrap()
}

/// The colour buffer after the only draw, rows top first.
fn render(bytes: &[u8], mode: RenderMode) -> (u32, Vec<[u8; 4]>) {
    let mut r = replay(
        bytes,
        RunConfig {
            render_mode: mode,
            ..RunConfig::default()
        },
    );
    assert!(r.run_until(Target::AfterDraw(0), &mut ()));
    let fb = FramebufferConfig::from_regs(&r.gpu().regs);
    (fb.width, fb.read_color_image(r.mem()).unwrap())
}

#[test]
fn citra_swrast_samples_the_base_level_nearest() {
    let bytes = textured_quad();
    let (w, hw) = render(&bytes, RenderMode::Hardware);
    let (_, citra) = render(&bytes, RenderMode::CitraSwrast);
    // The quad: every pixel not of the clear colour.
    let covered: Vec<usize> = (0..hw.len())
        .filter(|&i| citra[i] != [0, 0, 0, 255])
        .collect();
    assert_eq!(covered.len(), 16 * 16, "the quad covers 16×16 pixels");
    let (xs, ys): (Vec<usize>, Vec<usize>) = covered
        .iter()
        .map(|&i| (i % w as usize, i / w as usize))
        .unzip();
    let (minx, miny) = (*xs.iter().min().unwrap(), *ys.iter().min().unwrap());
    assert_eq!(
        (
            *xs.iter().max().unwrap() - minx,
            *ys.iter().max().unwrap() - miny
        ),
        (15, 15)
    );
    // Hand-computed: pixel k of the quad (along either axis) has its centre at texel
    // coordinate (k + 0.5) · 64 / 16 = 4k + 2, whose base-level texel is A; nearest from the
    // base level gives exactly A at every pixel.
    for &i in &covered {
        assert_eq!(citra[i], A, "citra-swrast pixel {}", i);
    }
    // The hardware minifies from level 2, where every texel is (A + 3B) / 4.
    let centre = (miny + 8) * w as usize + minx + 8;
    let p = hw[centre];
    assert_ne!(p, A);
    assert!(
        (60..=68).contains(&p[0]) && (187..=195).contains(&p[2]),
        "hardware pixel {p:?} is not (A + 3B) / 4"
    );
    for &i in &covered {
        assert_ne!(hw[i], A, "hardware pixel {i} sampled the base level");
    }
}

#[test]
fn citra_swrast_under_diff_reports_the_textured_draw() {
    let bytes = textured_quad();
    let d = different(diff(
        &bytes,
        RunConfig::default(),
        &bytes,
        RunConfig {
            render_mode: RenderMode::CitraSwrast,
            ..RunConfig::default()
        },
    ));
    assert_eq!(d.draw, Some(0));
    assert_eq!(d.color.as_ref().map(|c| c.differing), Some(16 * 16));
    assert!(d.vertex.is_none());
}

/// Writes the planted traces (`base.ctf`, `uniform.ctf`, `instruction.ctf`, `register.ctf`) to
/// `$PICAVIEW_DIFF_OUT` (default: the temporary directory), to try `picaview diff` on them:
/// `cargo test --release -p picaview-tests --test diff -- --ignored`.
#[test]
#[ignore]
fn write_planted_traces() {
    let dir = std::env::var_os("PICAVIEW_DIFF_OUT")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    std::fs::create_dir_all(&dir).unwrap();
    for (name, v) in [
        ("base", Variant::Base),
        ("uniform", Variant::Uniform),
        ("instruction", Variant::Instruction),
        ("register", Variant::Register),
    ] {
        std::fs::write(dir.join(format!("{name}.ctf")), build(v)).unwrap();
    }
    std::fs::write(dir.join("textured.ctf"), textured_quad()).unwrap();
}
