//! Pixel history of clipped triangles and screen-pixel identification (issue 15), on a trace
//! made with the scene builder.
//!
//! The vertex shader passes positions through (clip space = the attribute), so the triangles
//! are placed in clip space by hand. The 240×400 top target (window x = (cx + 1)·120, window
//! y = (cy + 1)·200) gets, after a blue clear:
//! * draw 0: (−1,−1,−0.5,1) (1,−1,−0.5,1) (−1,1,0.5,1): crosses the near plane z = 0 (PICA's
//!   clip volume is −w ≤ z ≤ 0) half way up, so its upper part is clipped away;
//! * draw 1: a triangle at z = 0.5 covering the whole target: clipped away entirely;
//! * draw 2: the same triangle with w = −1 (behind the eye): clipped away, but its projection
//!   is not defined, so it is never reported at a pixel;
//!
//! then presents the target to the top screen.

use gpu_core::debug::fragment::FragmentFate;
use gpu_core::history::{
    HistoryEvent, HistoryRequest, HistoryTarget, identify_screen_pixel, pixel_history,
};
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::tev::TevSource;
use picaview_tests::scene::effect::tev_replace;
use picaview_tests::scene::{
    AttribLayout, BufferLayout, Effect, Scene, ShaderBinary, ShaderProgram, Unit,
};

const PASS_VS: &str = "
.fvec projection[4]
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

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];

fn build() -> Vec<u8> {
    let mut scene = Scene::new().unwrap();
    let target = scene.top_target().unwrap();
    let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).unwrap();
    let prog = ShaderProgram::new(&bin, 0).unwrap();
    let tris: [[[f32; 4]; 3]; 3] = [
        [
            [-1.0, -1.0, -0.5, 1.0],
            [1.0, -1.0, -0.5, 1.0],
            [-1.0, 1.0, 0.5, 1.0],
        ],
        [
            [-1.0, -1.0, 0.5, 1.0],
            [3.0, -1.0, 0.5, 1.0],
            [-1.0, 3.0, 0.5, 1.0],
        ],
        [
            [1.0, 1.0, -0.5, -1.0],
            [-3.0, 1.0, -0.5, -1.0],
            [1.0, -3.0, -0.5, -1.0],
        ],
    ];
    let mut verts = Vec::new();
    for t in &tris {
        for p in t {
            verts.extend_from_slice(p);
            verts.extend_from_slice(&RED);
        }
    }
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
        .uniform_vec4s(
            Unit::Vertex,
            0,
            &[
                [1.0, 0.0, 0.0, 0.0],
                [0.0, 1.0, 0.0, 0.0],
                [0.0, 0.0, 1.0, 0.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
        )
        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .set_effect(&Effect::ui());
    for d in 0..3 {
        list.draw_arrays(PrimitiveTopology::Triangles, d * 3, 3);
    }
    scene.submit(list).unwrap();
    scene.present(&target, Screen::Top);
    scene.end_frame();
    scene.finish().unwrap()
}

fn replay(bytes: &[u8]) -> Replay<Vec<u8>> {
    Replay::new(CiTrace::from_bytes(bytes.to_vec()).unwrap())
}

/// (draw, fates with triangle indices) of every draw event of the history of colour-buffer
/// image pixel (x, row).
fn draws_at(rp: &mut Replay<Vec<u8>>, x: u32, row: u32) -> Vec<(u64, Vec<(FragmentFate, u32)>)> {
    let req = HistoryRequest {
        frame: 0,
        after_draw: None,
        until_write: None,
        target: HistoryTarget::Color,
        x,
        y: row,
    };
    let h = pixel_history(rp, &req).unwrap();
    h.events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Draw {
                draw, fragments, ..
            } => Some((
                *draw,
                fragments
                    .iter()
                    .map(|f| (f.fate.expect("every record has a fate"), f.triangle))
                    .collect(),
            )),
            HistoryEvent::Engine { .. } => None,
        })
        .collect()
}

#[test]
fn clipped_parts_and_clipped_away_triangles_are_reported() {
    let bytes = build();
    let mut rp = replay(&bytes);
    // Window (12, 360) = image row 39: inside draw 0's triangle where z = 0.4 > 0 (clipped),
    // and under draw 1's.
    assert_eq!(
        draws_at(&mut rp, 12, 39),
        vec![
            (0, vec![(FragmentFate::ClippedAway, 0)]),
            (1, vec![(FragmentFate::ClippedAway, 0)]),
        ]
    );
    // Window (12, 20) = image row 379: draw 0's kept part (z = −0.45) is drawn there.
    assert_eq!(
        draws_at(&mut rp, 12, 379),
        vec![
            (0, vec![(FragmentFate::Passed, 0)]),
            (1, vec![(FragmentFate::ClippedAway, 0)]),
        ]
    );
    // Window (200, 360): outside draw 0's triangle (x + y > 0); only draw 1 is reported, and
    // draw 2 (behind the eye) never is.
    assert_eq!(
        draws_at(&mut rp, 200, 39),
        vec![(1, vec![(FragmentFate::ClippedAway, 0)])]
    );
    // The clipped record carries the projection's interpolated inputs; the pixel keeps the
    // clear colour where nothing was drawn.
    let h = pixel_history(
        &mut rp,
        &HistoryRequest {
            frame: 0,
            after_draw: None,
            until_write: None,
            target: HistoryTarget::Color,
            x: 12,
            y: 39,
        },
    )
    .unwrap();
    assert_eq!(h.after.color, Some([0, 0, 255, 255]));
    let Some((fragments, stats)) = h.events.iter().find_map(|e| match e {
        HistoryEvent::Draw {
            draw: 1,
            fragments,
            stats,
            ..
        } => Some((fragments, stats)),
        _ => None,
    }) else {
        panic!("{:?}", h.events);
    };
    let f = &fragments[0];
    assert_eq!((f.x, f.y), (12, 360));
    assert_eq!(f.inputs.primary, [255, 0, 0, 255]);
    assert!((f.inputs.w - 1.0).abs() < 1e-4, "{:?}", f.inputs);
    assert!(f.tev.is_empty() && f.blend.is_none());
    let stats = stats.expect("draw stats");
    assert_eq!(stats.triangles_clipped_away, 1);
    assert_eq!(stats.fragments_generated, 0);
}

#[test]
fn the_probe_does_not_change_the_image() {
    let bytes = build();
    let mut plain = replay(&bytes);
    plain.run_until(Target::End, &mut ());
    let mut probed = replay(&bytes);
    probed.set_pixel_probe(Some(gpu_core::debug::PixelProbe {
        buffer: gpu_core::debug::ProbeBuffer::Color(
            gpu_core::framebuffer::FramebufferConfig::from_regs(&plain.gpu().regs).color_addr,
        ),
        x: 4,
        y: 350,
        w: 16,
        h: 16,
    }));
    probed.run_until(Target::End, &mut ());
    assert_eq!(
        plain.screen(Screen::Top).unwrap().pixels,
        probed.screen(Screen::Top).unwrap().pixels
    );
}

#[test]
fn screen_pixels_are_identified_through_the_display_transfer() {
    let bytes = build();
    let mut rp = replay(&bytes);
    rp.run_until(Target::End, &mut ());
    let end = rp.position().writes;
    // The LCD is rotated: buffer image pixel (x, row) is screen pixel (row, 239 − x). Buffer
    // (12, 379) (draw 0's kept part) is screen (379, 227).
    let pick = identify_screen_pixel(&mut rp, HistoryTarget::Top, 379, 227, end).unwrap();
    let m = &pick.mapping;
    assert_eq!((m.x, m.row), (12, 379), "{}", m.description);
    assert!(m.transfer.is_some());
    assert!(
        m.description
            .starts_with("top screen (379,227) -> framebuffer 0x")
            && m.description.contains("LCD rotated")
            && m.description.contains("via display transfer #"),
        "{}",
        m.description
    );
    // The end of the trace lies after the frame marker (frame 1 is empty): the transfer is
    // found in frame 0.
    assert_eq!(pick.frame, 0);
    assert!(pick.recorded);
    assert_eq!(
        pick.primitive.map(|p| (p.draw, p.triangle)),
        Some((0, 0)),
        "{pick:?}"
    );
    // Buffer (12, 39): only the clear reached it.
    let pick = identify_screen_pixel(&mut rp, HistoryTarget::Top, 39, 227, end).unwrap();
    assert_eq!((pick.mapping.x, pick.mapping.row), (12, 39));
    assert_eq!(pick.primitive, None);
    assert!(pick.recorded);
    // Errors, never panics: outside the screen, a buffer target, a screen nothing was
    // presented to, a position before the transfer.
    assert!(identify_screen_pixel(&mut rp, HistoryTarget::Top, 400, 0, end).is_err());
    assert!(identify_screen_pixel(&mut rp, HistoryTarget::Color, 1, 1, end).is_err());
    assert!(identify_screen_pixel(&mut rp, HistoryTarget::Bottom, 5, 5, end).is_err());
    assert!(identify_screen_pixel(&mut rp, HistoryTarget::Top, 379, 227, 1).is_err());
}
