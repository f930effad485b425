//! Primitive-ID / overdraw buffers and the per-draw cost counters (issue 15) on a scene with
//! known geometry: every count below follows from the rectangles drawn (the top-left fill rule
//! splits a quad's pixels exactly between its two triangles).
//!
//! The scene (top render target, 240 × 400, shown upright as 400 × 240), one frame:
//! 0. a full-screen quad (2 triangles, `draw_arrays`): 96 000 fragments, all written;
//! 1. quad A = upright [0, 100) × [0, 60) as an indexed draw of 4 vertices (6 indices: 2
//!    post-transform cache hits), green;
//! 2. quad A again with the alpha test GREATER 128 and vertex alpha 0: all 6 000 fragments
//!    killed by the alpha test;
//! 3. quad B = [100, 200) × [0, 60) with depth test NEVER: all 6 000 killed by the depth test;
//! 4. quad C = [200, 300) × [0, 60) drawn twice, once with each winding, back faces culled:
//!    2 of 4 triangles culled, 6 000 fragments, blue;
//! 5. a triangle entirely right of the screen (clipped away) and one crossing the right edge
//!    (partially clipped).

use gpu_core::debug::{DrawDetail, DrawStats, EventLog, GpuEvent, TriangleFate};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use pica_cmd::regs::framebuffer::{AlphaTest, CompareFunc};
use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
use pica_cmd::regs::rasterizer::CullMode;
use pica_cmd::regs::tev::TevSource;
use picaview_tests::scene::effect::{NO_BLEND, depth_test, tev_replace};
use picaview_tests::scene::shader::{ShaderBinary, ShaderProgram};
use picaview_tests::scene::{AttribLayout, BufferLayout, Effect, Scene, Unit, math};

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

/// Instructions the pass-through shader executes per vertex (4 dp4, mov, end).
const PASS_VS_INSTRUCTIONS: u64 = 6;

/// Vertex: upright screen position (x, y, z, 1) and colour.
fn vertex(out: &mut Vec<f32>, x: f32, y: f32, color: [f32; 4]) {
    out.extend_from_slice(&[x, y, -0.5, 1.0]);
    out.extend_from_slice(&color);
}

/// A quad as two triangles (6 vertices) with one winding, or the other when `flip`.
fn quad(out: &mut Vec<f32>, x0: f32, y0: f32, x1: f32, y1: f32, color: [f32; 4], flip: bool) {
    let mut tris = [
        [(x0, y0), (x1, y0), (x0, y1)],
        [(x1, y0), (x1, y1), (x0, y1)],
    ];
    if flip {
        for t in &mut tris {
            t.swap(1, 2);
        }
    }
    for t in tris {
        for (x, y) in t {
            vertex(out, x, y, color);
        }
    }
}

const RED: [f32; 4] = [1.0, 0.0, 0.0, 1.0];
const GREEN: [f32; 4] = [0.0, 1.0, 0.0, 1.0];
const BLUE: [f32; 4] = [0.0, 0.0, 1.0, 1.0];

/// The scene of the module doc, as CiTrace bytes, and the colour buffer's address.
fn scene() -> (Vec<u8>, u32) {
    scene_with(false)
}

/// [`scene`], followed by a second frame that only clears the target when `second_clear`.
fn scene_with(second_clear: bool) -> (Vec<u8>, u32) {
    let mut scene = Scene::new().expect("scene");
    let target = scene.top_target().expect("target");
    let bin = ShaderBinary::assemble(&[("pass.v.pica", PASS_VS)]).expect("assembles");
    let prog = ShaderProgram::new(&bin, 0).expect("program");
    let mut v = Vec::new();
    quad(&mut v, 0.0, 0.0, 400.0, 240.0, RED, false); // 0..6
    let first_a_arrays = (v.len() / 8) as u32;
    quad(&mut v, 0.0, 0.0, 100.0, 60.0, [0.0, 0.0, 0.0, 0.0], false); // 6..12 (alpha 0)
    let first_b = (v.len() / 8) as u32;
    quad(&mut v, 100.0, 0.0, 200.0, 60.0, RED, false); // 12..18
    let first_c = (v.len() / 8) as u32;
    quad(&mut v, 200.0, 0.0, 300.0, 60.0, BLUE, false);
    quad(&mut v, 200.0, 0.0, 300.0, 60.0, BLUE, true); // 18..30
    let first_clip = (v.len() / 8) as u32;
    vertex(&mut v, 1000.0, 100.0, RED);
    vertex(&mut v, 1100.0, 100.0, RED);
    vertex(&mut v, 1000.0, 200.0, RED);
    vertex(&mut v, 350.0, 100.0, RED);
    vertex(&mut v, 500.0, 100.0, RED);
    vertex(&mut v, 350.0, 200.0, RED); // 30..36
    let vb = scene.vertex_buffer_f32(&v).expect("vertices");
    // Quad A as 4 vertices + 6 indices (a separate buffer, indexed from 0).
    let mut qa = Vec::new();
    for (x, y) in [(0.0, 0.0), (100.0, 0.0), (0.0, 60.0), (100.0, 60.0)] {
        vertex(&mut qa, x, y, GREEN);
    }
    let vb_a = scene.vertex_buffer_f32(&qa).expect("vertices");
    let ib = scene
        .index_buffer_u16(&[0, 1, 2, 1, 3, 2])
        .expect("indices");

    scene.clear(&target, [0, 0, 0, 255], 0);
    let attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 4)
        .loader(1, AttribType::Float, 4);
    let ui = Effect {
        blend: NO_BLEND,
        ..Effect::ui()
    };
    let mut list = scene.command_list();
    list.set_render_target(&target)
        .bind_program(&prog)
        .set_attributes(&attrs)
        .uniform_mat4(
            Unit::Vertex,
            0,
            &math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0),
        )
        .set_effect(&ui)
        .set_tev(0, &tev_replace(TevSource::PrimaryColor))
        .set_buffers(&BufferLayout::new().buffer(vb, 32, &[0, 1]))
        .draw_arrays(PrimitiveTopology::Triangles, 0, 6)
        .set_buffers(&BufferLayout::new().buffer(vb_a, 32, &[0, 1]))
        .draw_elements(PrimitiveTopology::Triangles, &ib, 6)
        .set_buffers(&BufferLayout::new().buffer(vb, 32, &[0, 1]))
        .set_effect(&Effect {
            alpha_test: AlphaTest {
                enable: true,
                func: CompareFunc::Greater,
                reference: 128,
            },
            ..ui
        })
        .draw_arrays(PrimitiveTopology::Triangles, first_a_arrays, 6)
        .set_effect(&Effect {
            depth: depth_test(true, CompareFunc::Never, false),
            ..ui
        })
        .draw_arrays(PrimitiveTopology::Triangles, first_b, 6)
        .set_effect(&Effect {
            cull: CullMode::CullCw,
            ..ui
        })
        .draw_arrays(PrimitiveTopology::Triangles, first_c, 12)
        .set_effect(&ui)
        .draw_arrays(PrimitiveTopology::Triangles, first_clip, 6);
    scene.submit(list).expect("submit");
    scene.present(&target, Screen::Top);
    scene.end_frame();
    if second_clear {
        scene.clear(&target, [0, 0, 0, 255], 0);
        scene.end_frame();
    }
    (scene.finish().expect("trace"), target.color_pa)
}

struct Run {
    stats: Vec<DrawStats>,
    details: Vec<DrawDetail>,
    buffers: gpu_core::debug::DebugBuffers,
    image: Vec<[u8; 4]>,
    fb: FramebufferConfig,
}

fn run(bytes: Vec<u8>) -> Run {
    let mut replay = Replay::new(CiTrace::from_bytes(bytes).expect("parses"));
    let mut log = EventLog::new(1 << 20, true);
    let buffers = replay.record_debug_buffers(Target::AfterWrite(0), Target::Frame(0), &mut log);
    let stats = log
        .events
        .iter()
        .filter_map(|e| match e {
            GpuEvent::DrawEnd { stats, .. } => Some(*stats),
            _ => None,
        })
        .collect();
    let details = log.details.into_iter().map(|(_, d)| d).collect();
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let image = fb.read_color_image(replay.mem()).expect("colour buffer");
    Run {
        stats,
        details,
        buffers,
        image,
        fb,
    }
}

#[test]
fn counters_of_each_draw_are_exact() {
    let (bytes, _) = scene();
    let r = run(bytes);
    assert_eq!(r.stats.len(), 6);
    let s = &r.stats;
    // Draw 0: full screen.
    assert_eq!(s[0].vertices_loaded, 6);
    assert_eq!(s[0].vs_invocations, 6);
    assert_eq!(s[0].vertex_cache_hits, 0);
    assert_eq!(s[0].vs_instructions, 6 * PASS_VS_INSTRUCTIONS);
    assert_eq!(s[0].triangles_assembled, 2);
    assert_eq!(s[0].fragments_generated, 400 * 240);
    assert_eq!(s[0].fragments_written, 400 * 240);
    assert_eq!(s[0].texture_samples, 0);
    // Draw 1: 6 indices over 4 vertices: 2 cache hits, 4 shaded.
    assert_eq!(s[1].vertices_loaded, 4);
    assert_eq!(s[1].vs_invocations, 4);
    assert_eq!(s[1].vertex_cache_hits, 2);
    assert_eq!(s[1].vs_instructions, 4 * PASS_VS_INSTRUCTIONS);
    assert_eq!(s[1].triangles_assembled, 2);
    assert_eq!(s[1].fragments_generated, 6000);
    assert_eq!(s[1].fragments_written, 6000);
    // Draw 2: alpha test kills everything.
    assert_eq!(s[2].fragments_generated, 6000);
    assert_eq!(s[2].fragments_alpha_failed, 6000);
    assert_eq!(s[2].fragments_written, 0);
    // Draw 3: depth test NEVER.
    assert_eq!(s[3].fragments_generated, 6000);
    assert_eq!(s[3].fragments_depth_failed, 6000);
    assert_eq!(s[3].fragments_stencil_failed, 0);
    assert_eq!(s[3].fragments_written, 0);
    // Draw 4: half the triangles culled.
    assert_eq!(s[4].triangles_assembled, 4);
    assert_eq!(s[4].triangles_culled, 2);
    assert_eq!(s[4].triangles_rasterized, 2);
    assert_eq!(s[4].fragments_generated, 6000);
    assert_eq!(s[4].fragments_written, 6000);
    // Draw 5: one triangle clipped away, one cut by the right edge.
    assert_eq!(s[5].triangles_assembled, 2);
    assert_eq!(s[5].triangles_clipped_away, 1);
    assert!(s[5].fragments_generated > 0);
    assert_eq!(s[5].fragments_written, s[5].fragments_generated);
}

#[test]
fn detail_records_triangle_fates_and_vertices() {
    let (bytes, _) = scene();
    let r = run(bytes);
    let d = &r.details;
    assert_eq!(d.len(), 6);
    assert_eq!(d[0].fates, vec![TriangleFate::Drawn; 2]);
    assert_eq!(
        d[0].triangle_vertices,
        vec![Some([0, 1, 2]), Some([3, 4, 5])]
    );
    // Indexed: indices in the draw, not vertex ids.
    assert_eq!(
        d[1].triangle_vertices,
        vec![Some([0, 1, 2]), Some([3, 4, 5])]
    );
    let culled = d[4]
        .fates
        .iter()
        .filter(|f| **f == TriangleFate::Culled)
        .count();
    assert_eq!(culled, 2);
    assert_eq!(d[4].clipped_culled.iter().filter(|c| **c).count(), 2);
    assert_eq!(
        d[5].fates,
        vec![TriangleFate::ClippedAway, TriangleFate::PartiallyClipped]
    );
    // Every clipped piece of draw 5 comes from its second triangle.
    assert!(!d[5].clipped_from.is_empty());
    assert!(d[5].clipped_from.iter().all(|&t| t == 1));
    assert_eq!(d[5].clipped_from.len(), d[5].clipped.len());
}

#[test]
fn primitive_ids_and_overdraw_match_the_geometry() {
    let (bytes, color_pa) = scene();
    let r = run(bytes);
    let t = r
        .buffers
        .target(color_pa)
        .expect("the top target was recorded");
    assert_eq!((t.width, t.height), (r.fb.width, r.fb.height));
    let green = [0, 255, 0, 255];
    let blue = [0, 0, 255, 255];
    let (mut n_green, mut n_blue, mut n_b, mut sum) = (0, 0, 0, 0u64);
    let mut green_tris = [false; 2];
    for row in 0..t.height {
        for x in 0..t.width {
            let px = r.image[(row * t.width + x) as usize];
            let id = t
                .id_at_image(x, row)
                .expect("every pixel was written by draw 0 at least");
            let over = t.overdraw_at_image(x, row);
            sum += u64::from(over);
            if px == green {
                // Quad A: draws 0 and 1 wrote it, draw 2's fragments were generated and
                // killed.
                n_green += 1;
                assert_eq!(id.draw, 1);
                assert_eq!(over, 3);
                green_tris[id.triangle as usize] = true;
            } else if px == blue {
                n_blue += 1;
                assert_eq!(id.draw, 4);
                // Culled triangles generate nothing: draw 0 and one of draw 4's windings.
                assert_eq!(over, 2);
            } else if id.draw == 0 && over == 2 {
                // Quad B: draw 3 generated fragments there that the depth test killed.
                n_b += 1;
            }
        }
    }
    assert_eq!(n_green, 6000);
    assert_eq!(n_blue, 6000);
    assert_eq!(n_b, 6000);
    assert_eq!(
        green_tris,
        [true, true],
        "both triangles of quad A own pixels"
    );
    let generated: u64 = r.stats.iter().map(|s| s.fragments_generated).sum();
    assert_eq!(sum, generated);
    assert_eq!(t.max_overdraw(), 3);
}

#[test]
fn recording_does_not_change_the_image() {
    let (bytes, _) = scene();
    let recorded = run(bytes.clone()).image;
    let mut replay = Replay::new(CiTrace::from_bytes(bytes).expect("parses"));
    replay.run_until(Target::Frame(0), &mut ());
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let plain = fb.read_color_image(replay.mem()).expect("colour buffer");
    assert_eq!(plain, recorded);
}

#[test]
fn a_memory_fill_clears_the_target_buffers() {
    // Recording over both frames: the second frame's clear (a memory fill of the colour
    // buffer) resets what the first frame's draws recorded.
    let (bytes, color_pa) = scene_with(true);
    let mut replay = Replay::new(CiTrace::from_bytes(bytes.clone()).expect("parses"));
    let first = replay.record_debug_buffers(Target::AfterWrite(0), Target::Frame(0), &mut ());
    let t = first.target(color_pa).expect("target");
    assert_eq!(t.max_overdraw(), 3);
    let both = replay.record_debug_buffers(Target::AfterWrite(0), Target::End, &mut ());
    let t = both.target(color_pa).expect("target");
    assert_eq!(t.max_overdraw(), 0);
    assert!(t.ids.iter().all(Option::is_none));
}

/// Not a test: prints how long recording the debug buffers of each bundled demo's last frame
/// takes next to a plain replay of the same span (`cargo test --release -p picaview-tests
/// --test debug_buffers -- --ignored --nocapture`). No assertion on time.
#[test]
#[ignore]
fn print_recording_cost_of_the_demos() {
    use picaview_tests::scene::demos::{DEMOS, demos_dir};
    for d in &DEMOS {
        let path = demos_dir().join(format!("{}.ctf", d.name));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut replay = Replay::new(CiTrace::from_bytes(bytes).expect("parses"));
        let index = replay.build_index();
        let Some(f) = index.frames.last() else {
            continue;
        };
        let (from, to) = (
            Target::AfterWrite(f.start.writes),
            Target::AfterWrite(f.end.writes),
        );
        let best = |replay: &mut Replay<Vec<u8>>, record: bool| {
            (0..5)
                .map(|_| {
                    replay.seek(from, &mut ());
                    let t = std::time::Instant::now();
                    if record {
                        let _ = replay.record_debug_buffers(from, to, &mut ());
                    } else {
                        replay.run_until(to, &mut ());
                    }
                    t.elapsed()
                })
                .min()
                .unwrap_or_default()
        };
        let plain = best(&mut replay, false);
        let recorded = best(&mut replay, true);
        println!(
            "{}: frame {} ({} draws): plain {:.2} ms, recording {:.2} ms",
            d.name,
            f.index,
            f.draws.end - f.draws.start,
            plain.as_secs_f64() * 1e3,
            recorded.as_secs_f64() * 1e3
        );
    }
}
