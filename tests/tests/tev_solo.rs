//! The combiner "solo" (issue 15): `Replay::set_tev_solo` re-renders a draw with one stage's
//! output as the final colour. Scenes built with the scene builder draw a full-screen quad with a
//! solid texture, a constant vertex colour and hand-chosen combiner stages; after the draw, the
//! colour buffer must hold exactly the soloed stage's output, computed here by hand with the
//! combiners' 8-bit arithmetic (`a·b/255` truncated, sums saturated, scale last). Clearing the
//! solo and seeking again must give the real image back.

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target};
use gpu_core::tev::{SoloChannel, TevSolo};
use pica_cmd::citrace::CiTrace;
use pica_cmd::regs::framebuffer::{AlphaTest, CompareFunc};
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::{TevOp, TevScale, TevSource, TevStage};
use pica_cmd::regs::texturing::{TextureFormat, WrapMode};
use picaview_tests::scene::effect::{NO_BLEND, tev_passthrough, tev_stage};
use picaview_tests::scene::math;
use picaview_tests::scene::{
    AttribLayout, BufferLayout, Effect, Image, Sampler, Scene, ShaderBinary, ShaderProgram, Unit,
};

const VS: &str = "
.fvec projection[4]
.out outpos position
.out outclr color
.out outtc0 texcoord0
.proc main
    dp4 outpos.x, projection[0], v0
    dp4 outpos.y, projection[1], v0
    dp4 outpos.z, projection[2], v0
    dp4 outpos.w, projection[3], v0
    mov outclr, v1
    mov outtc0, v2
    end
.end
";

/// The texel colour of the solid texture.
const TEXEL: [u8; 4] = [200, 100, 50, 128];
/// The vertex colour (1.0 and 0.0 only, so the interpolated bytes are exact: 255 and 0).
const PRIMARY: [f32; 4] = [1.0, 0.0, 1.0, 1.0];
/// Its bytes.
const PRIMARY_U8: [u8; 4] = [255, 0, 255, 255];
/// The clear colour.
const CLEAR: [u8; 4] = [1, 2, 3, 4];

/// A trace of one frame with one draw: a quad over the whole top render target, combiner
/// stages `stages` (the rest pass through), combiner-buffer updates `buffer` (rgb mask, alpha
/// mask, initial colour), no blending, and `alpha_test`.
fn scene(stages: &[TevStage], buffer: (u8, u8, [u8; 4]), alpha_test: Option<AlphaTest>) -> Vec<u8> {
    let mut scene = Scene::new().expect("scene");
    let target = scene.top_target().expect("target");
    let bin = ShaderBinary::assemble(&[("solo.v.pica", VS)]).expect("assembles");
    let prog = ShaderProgram::new(&bin, 0).expect("program");
    let [r, g, b, a] = PRIMARY;
    let corner = |x: f32, y: f32| [x, y, -0.5, 1.0, r, g, b, a, 0.5, 0.5];
    let quad: Vec<f32> = [
        corner(0.0, 0.0),
        corner(400.0, 0.0),
        corner(0.0, 240.0),
        corner(400.0, 0.0),
        corner(400.0, 240.0),
        corner(0.0, 240.0),
    ]
    .concat();
    let vb = scene.vertex_buffer_f32(&quad).expect("vertices");
    let tex = scene
        .texture(
            &Image::from_fn(8, 8, |_, _| TEXEL),
            TextureFormat::Rgba8,
            1,
            Sampler::nearest(WrapMode::ClampToEdge),
        )
        .expect("texture");
    scene.clear(&target, CLEAR, 0);
    let mut effect = Effect {
        blend: NO_BLEND,
        ..Effect::ui()
    };
    if let Some(t) = alpha_test {
        effect.alpha_test = t;
    }
    let mut list = scene.command_list();
    list.set_render_target(&target)
        .bind_program(&prog)
        .set_attributes(
            &AttribLayout::new()
                .loader(0, AttribType::Float, 4)
                .loader(1, AttribType::Float, 4)
                .loader(2, AttribType::Float, 2),
        )
        .set_buffers(&BufferLayout::new().buffer(vb, 40, &[0, 1, 2]))
        .uniform_mat4(
            Unit::Vertex,
            0,
            &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
        )
        .set_effect(&effect)
        .bind_textures([Some(&tex), None, None]);
    for i in 0..6 {
        list.set_tev(i, stages.get(i).unwrap_or(&tev_passthrough()));
    }
    list.tev_buffer(buffer.0, buffer.1, buffer.2)
        .draw_arrays(PrimitiveTopology::Triangles, 0, 6);
    scene.submit(list).expect("submit");
    scene.present(&target, Screen::Top);
    scene.end_frame();
    scene.finish().expect("trace")
}

/// Every pixel of the current colour buffer (all equal for these scenes: checked).
fn color(replay: &Replay<Vec<u8>>) -> [u8; 4] {
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let px = fb.read_color_image(replay.mem()).expect("colour buffer");
    let first = px[0];
    assert!(
        px.iter().all(|&p| p == first),
        "the quad covers the whole buffer with one colour"
    );
    first
}

/// The colour buffer right after draw 0, rendered with `solo`.
fn after_draw(replay: &mut Replay<Vec<u8>>, solo: Option<TevSolo>) -> [u8; 4] {
    // Just before the draw: the state after the writes that precede its trigger.
    let before = draw0_before(replay);
    replay.seek(Target::AfterWrite(before), &mut ());
    replay.set_tev_solo(solo);
    assert!(replay.run_until(Target::AfterDraw(0), &mut ()));
    let c = color(replay);
    replay.set_tev_solo(None);
    c
}

/// Register writes executed before draw 0's trigger.
fn draw0_before(replay: &mut Replay<Vec<u8>>) -> u64 {
    replay.rewind();
    let mut writes = 0;
    // Step write by write until the draw has happened; the write before is its trigger.
    while replay.position().draws == 0 {
        writes = replay.position().writes;
        assert!(
            replay.run_until(Target::AfterWrite(writes + 1), &mut ()),
            "the trace has a draw"
        );
    }
    writes
}

fn solo(stage: u8, channel: SoloChannel) -> Option<TevSolo> {
    Some(TevSolo { stage, channel })
}

fn replay(bytes: Vec<u8>) -> Replay<Vec<u8>> {
    Replay::new(CiTrace::from_bytes(bytes).expect("trace parses"))
}

/// Stage 0 = texture0 · primary, stage 1 = previous + constant, stage 2 = previous · constant2.
fn three_stages() -> Vec<TevStage> {
    vec![
        tev_stage(
            [
                TevSource::Texture0,
                TevSource::PrimaryColor,
                TevSource::PrimaryColor,
            ],
            TevOp::Modulate,
            [0; 4],
        ),
        tev_stage(
            [
                TevSource::Previous,
                TevSource::Constant,
                TevSource::Constant,
            ],
            TevOp::Add,
            [10, 20, 30, 40],
        ),
        tev_stage(
            [
                TevSource::Previous,
                TevSource::Constant,
                TevSource::Constant,
            ],
            TevOp::Modulate,
            [128, 128, 128, 128],
        ),
    ]
}

/// Hand-computed outputs of [`three_stages`].
const STAGE0: [u8; 4] = [200, 0, 50, 128]; // TEXEL · PRIMARY_U8 / 255
const STAGE1: [u8; 4] = [210, 20, 80, 168]; // + (10, 20, 30, 40)
const STAGE2: [u8; 4] = [105, 10, 40, 84]; // · 128 / 255, truncated: 26880/255 = 105.4 …

#[test]
fn hand_computed_stage_outputs_are_consistent() {
    for ch in 0..4 {
        let s0 = u32::from(TEXEL[ch]) * u32::from(PRIMARY_U8[ch]) / 255;
        assert_eq!(s0, u32::from(STAGE0[ch]));
        let s1 = (s0 + [10, 20, 30, 40][ch]).min(255);
        assert_eq!(s1, u32::from(STAGE1[ch]));
        assert_eq!(s1 * 128 / 255, u32::from(STAGE2[ch]));
    }
}

#[test]
fn without_a_solo_the_draw_writes_the_last_stage() {
    let mut r = replay(scene(&three_stages(), (0, 0, [0; 4]), None));
    assert_eq!(after_draw(&mut r, None), STAGE2);
}

#[test]
fn solo_of_each_stage_writes_exactly_its_output() {
    let mut r = replay(scene(&three_stages(), (0, 0, [0; 4]), None));
    let opaque = |c: [u8; 4]| [c[0], c[1], c[2], 255];
    let grey = |c: [u8; 4]| [c[3], c[3], c[3], 255];
    for (stage, out) in [(0u8, STAGE0), (1, STAGE1), (2, STAGE2)] {
        assert_eq!(
            after_draw(&mut r, solo(stage, SoloChannel::Both)),
            out,
            "stage {stage} rgba"
        );
        assert_eq!(
            after_draw(&mut r, solo(stage, SoloChannel::Color)),
            opaque(out),
            "stage {stage} colour"
        );
        assert_eq!(
            after_draw(&mut r, solo(stage, SoloChannel::Alpha)),
            grey(out),
            "stage {stage} alpha"
        );
    }
    // Pass-through stages 3-5 show the last active stage's output.
    for stage in 3..6 {
        assert_eq!(after_draw(&mut r, solo(stage, SoloChannel::Both)), STAGE2);
    }
    // Out-of-range stages read as stage 5.
    assert_eq!(after_draw(&mut r, solo(9, SoloChannel::Both)), STAGE2);
}

#[test]
fn clearing_the_solo_gives_the_real_image_back() {
    let mut r = replay(scene(&three_stages(), (0, 0, [0; 4]), None));
    r.build_index();
    assert_eq!(after_draw(&mut r, solo(0, SoloChannel::Both)), STAGE0);
    // A plain seek after a solo run must not continue from the soloed state.
    assert!(r.seek(Target::AfterDraw(0), &mut ()));
    assert_eq!(color(&r), STAGE2);
    assert!(r.seek(Target::End, &mut ()));
    assert!(r.seek(Target::AfterDraw(0), &mut ()));
    assert_eq!(color(&r), STAGE2);
    // Indexing with a solo set takes keyframes of the real trace and keeps the solo.
    r.set_tev_solo(solo(1, SoloChannel::Both));
    r.build_index();
    assert_eq!(r.tev_solo(), solo(1, SoloChannel::Both));
    r.set_tev_solo(None);
    assert!(r.seek(Target::AfterDraw(0), &mut ()));
    assert_eq!(color(&r), STAGE2, "keyframes hold the real image");
    // The solo applies to the draws executed while it is set.
    assert_eq!(after_draw(&mut r, solo(1, SoloChannel::Both)), STAGE1);
}

#[test]
fn solo_sees_the_combiner_buffer_and_scales() {
    // Stage 0: texture0 (updates the buffer's RGB and alpha). Stage 1: constant × 2.
    // Stage 2: lerp(previous buffer, previous, constant.a = 64) — the buffer as of stage 0.
    let mut s1 = tev_stage(
        [
            TevSource::Constant,
            TevSource::Constant,
            TevSource::Constant,
        ],
        TevOp::Replace,
        [60, 70, 200, 100],
    );
    s1.scales.rgb_scale = TevScale::X2;
    s1.scales.alpha_scale = TevScale::X4;
    let mut s2 = tev_stage(
        [
            TevSource::PreviousBuffer,
            TevSource::Previous,
            TevSource::Constant,
        ],
        TevOp::Interpolate,
        [0, 0, 0, 64],
    );
    s2.operands.rgb[2] = pica_cmd::regs::tev::TevColorOperand::SrcAlpha;
    let stages = [
        tev_stage(
            [
                TevSource::Texture0,
                TevSource::PrimaryColor,
                TevSource::PrimaryColor,
            ],
            TevOp::Replace,
            [0; 4],
        ),
        s1,
        s2,
    ];
    let mut r = replay(scene(&stages, (0b0001, 0b0001, [9, 9, 9, 9]), None));
    // Stage 1: (120, 140, 255 (400 saturated), 255 (400 saturated)).
    let stage1 = [120, 140, 255, 255];
    // Stage 2: (buffer·64 + prev·191)/255 with buffer = TEXEL (stage 0's output).
    let lerp = |a: u32, b: u32| ((a * 64 + b * 191) / 255) as u8;
    let stage2 = [
        lerp(200, 120),
        lerp(100, 140),
        lerp(50, 255),
        lerp(128, 255),
    ];
    assert_eq!(stage2, [140, 129, 203, 223]);
    assert_eq!(after_draw(&mut r, solo(0, SoloChannel::Both)), TEXEL);
    assert_eq!(after_draw(&mut r, solo(1, SoloChannel::Both)), stage1);
    assert_eq!(after_draw(&mut r, solo(2, SoloChannel::Both)), stage2);
    assert_eq!(after_draw(&mut r, None), stage2);
}

#[test]
fn the_alpha_test_uses_the_real_output() {
    // Real alpha 84 (stage 2); stage 0's alpha is 128. With "alpha < 100" the real fragments
    // pass, so the solo writes stage 0 even though its own alpha would fail the test.
    let pass = AlphaTest {
        enable: true,
        func: CompareFunc::Less,
        reference: 100,
    };
    let mut r = replay(scene(&three_stages(), (0, 0, [0; 4]), Some(pass)));
    assert_eq!(after_draw(&mut r, None), STAGE2);
    assert_eq!(after_draw(&mut r, solo(0, SoloChannel::Both)), STAGE0);
    // With "alpha > 100" the real fragments fail: the solo writes nothing either.
    let fail = AlphaTest {
        func: CompareFunc::Greater,
        ..pass
    };
    let mut r = replay(scene(&three_stages(), (0, 0, [0; 4]), Some(fail)));
    assert_eq!(after_draw(&mut r, None), CLEAR_AS_STORED);
    assert_eq!(
        after_draw(&mut r, solo(0, SoloChannel::Both)),
        CLEAR_AS_STORED
    );
}

/// The clear colour as the colour buffer holds it.
const CLEAR_AS_STORED: [u8; 4] = CLEAR;
