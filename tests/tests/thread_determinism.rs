//! The parallel pixel path is bit-identical at every thread count (issue 14): every bundled demo
//! and every generated bench scene is replayed with 1, 2 and 8 pixel-pipeline threads and with
//! the single-threaded reference path ([`PixelPath::Reference`]); after every draw the colour
//! and depth/stencil buffers it rendered into, the draw's counters, and at the end all of VRAM
//! must be identical, and so must every other mapped byte (FCRAM holds the display transfers'
//! output, which is converted in parallel too). Seeking with 2 threads must land on the linear
//! replay's state.
//!
//! The per-fragment cost counters are optional (issue 15: counted only for an observer that
//! wants them, [`Observer::wants_costs`]): with costs off, at 1, 2 and 8 threads, the images,
//! depth/stencil, memory, diagnostics and every counter shown by default are identical to the
//! replay with costs on, and the cost counters read 0.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use gpu_core::debug::{DrawDetail, DrawInfo, DrawStats, Observer};
use gpu_core::memory::{PAGE_SIZE, VRAM};
use gpu_core::pixel::fragment::PixelPath;
use gpu_core::pixel::framebuffer::FramebufferConfig;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::bench_scenes::all_traces as traces;

/// Hash of `len` bytes at `addr` (unmapped bytes hash as a marker, so they still compare).
fn hash_range(replay: &Replay<Vec<u8>>, addr: u32, len: usize, h: &mut DefaultHasher) {
    let mut buf = vec![0u8; len];
    match replay.mem().read(addr, &mut buf) {
        Ok(()) => h.write(&buf),
        Err(_) => h.write_u8(0xEE),
    }
}

/// Every non-zero page of every mapped region, with its address, hashed (a page never written
/// and a page of zeros hash alike: the parallel paths may leave untouched zero pages
/// unallocated).
fn memory_hash(replay: &Replay<Vec<u8>>) -> u64 {
    let mem = replay.mem();
    let mut h = DefaultHasher::new();
    let mut page = vec![0u8; PAGE_SIZE];
    for region in mem.regions() {
        for addr in (u64::from(region.base)..region.end()).step_by(PAGE_SIZE) {
            // ok: addr < region end <= 2^32.
            let addr = addr as u32;
            if mem.page_ref(addr).is_none() {
                continue;
            }
            mem.read(addr, &mut page).expect("a resident page reads");
            if page.iter().any(|&b| b != 0) {
                h.write_u32(addr);
                h.write(&page);
            }
        }
    }
    h.finish()
}

/// The current render target's colour and depth/stencil bytes, hashed.
fn target_hash(replay: &Replay<Vec<u8>>) -> u64 {
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let pixels = (fb.width * fb.height) as usize;
    let mut h = DefaultHasher::new();
    let cbpp = fb.color_format.map_or(4, |f| f.bytes_per_pixel());
    let dbpp = fb.depth_format.map_or(4, |f| f.bytes_per_pixel());
    hash_range(replay, fb.color_addr, pixels * cbpp, &mut h);
    hash_range(replay, fb.depth_addr, pixels * dbpp, &mut h);
    h.finish()
}

/// Collects every draw's counters and every diagnostic, in order; asks for the cost counters
/// when `costs`.
#[derive(Default)]
struct Log {
    costs: bool,
    stats: Vec<(u64, DrawStats)>,
    diagnostics: Vec<String>,
}

impl Observer for Log {
    fn wants_costs(&self) -> bool {
        self.costs
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, _detail: Option<DrawDetail>) {
        self.stats.push((info.draw, *stats));
    }
    fn diagnostic(&mut self, d: &gpu_core::debug::Diagnostic) {
        self.diagnostics.push(format!("{d:?}"));
    }
}

/// Everything compared between runs.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    per_draw: Vec<u64>,
    vram: u64,
    /// [`memory_hash`] at the end.
    memory: u64,
    stats: Vec<(u64, DrawStats)>,
    diagnostics: Vec<String>,
}

/// The replay of `bytes` on `path` with `threads` pixel threads, with or without the cost
/// counters.
fn fingerprint(bytes: &[u8], path: PixelPath, threads: usize, costs: bool) -> Fingerprint {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let mut replay = Replay::new(trace);
    replay.set_pixel_path(path);
    replay.set_threads(threads);
    let mut log = Log {
        costs,
        ..Log::default()
    };
    let mut per_draw = Vec::new();
    let mut draw = 0u64;
    while replay.run_until(Target::AfterDraw(draw), &mut log) {
        per_draw.push(target_hash(&replay));
        draw += 1;
    }
    replay.run_until(Target::End, &mut log);
    let mut h = DefaultHasher::new();
    hash_range(&replay, VRAM.base, VRAM.size as usize, &mut h);
    Fingerprint {
        per_draw,
        vram: h.finish(),
        memory: memory_hash(&replay),
        stats: log.stats,
        diagnostics: log.diagnostics,
    }
}

fn first_difference(a: &Fingerprint, b: &Fingerprint) -> String {
    if let Some(i) =
        (0..a.per_draw.len().min(b.per_draw.len())).find(|&i| a.per_draw[i] != b.per_draw[i])
    {
        return format!("render target differs after draw {i}");
    }
    if let Some(i) = (0..a.stats.len().min(b.stats.len())).find(|&i| a.stats[i] != b.stats[i]) {
        return format!("counters differ: {:?} vs {:?}", a.stats[i], b.stats[i]);
    }
    if a.diagnostics != b.diagnostics {
        return format!(
            "diagnostics differ: {:?} vs {:?}",
            a.diagnostics, b.diagnostics
        );
    }
    if a.memory != b.memory {
        return "memory outside the render targets differs (e.g. a display transfer)".to_string();
    }
    "draw count or VRAM differs".to_string()
}

#[test]
fn every_trace_is_identical_at_1_2_and_8_threads_and_on_the_reference_path() {
    for (name, bytes) in traces() {
        let reference = fingerprint(&bytes, PixelPath::Reference, 1, true);
        assert!(!reference.per_draw.is_empty(), "{name}: no draws");
        for threads in [1, 2, 8] {
            let fast = fingerprint(&bytes, PixelPath::Specialized, threads, true);
            assert!(
                fast == reference,
                "{name}, {threads} threads: {}",
                first_difference(&fast, &reference)
            );
        }
    }
}

#[test]
fn seeking_with_two_threads_matches_the_linear_replay() {
    for (name, bytes) in traces() {
        let linear = fingerprint(&bytes, PixelPath::Specialized, 1, true);
        let trace = CiTrace::from_bytes(bytes.clone()).expect("trace parses");
        let mut replay = Replay::new(trace);
        replay.set_threads(2);
        let index = replay.build_index();
        let n = index.draws.len() as u64;
        assert_eq!(n as usize, linear.per_draw.len(), "{name}");
        for k in 0..n {
            // Backwards and forwards jumps.
            let m = (k * 7 + n / 2) % n;
            assert!(
                replay.seek(Target::AfterDraw(m), &mut ()),
                "{name} draw {m}"
            );
            assert_eq!(
                target_hash(&replay),
                linear.per_draw[m as usize],
                "{name}: seek to draw {m} with 2 threads differs from the linear replay"
            );
        }
    }
}

/// `s` with the cost counters (the fields counted only for [`Observer::wants_costs`]) zeroed.
fn without_costs(s: &DrawStats) -> DrawStats {
    DrawStats {
        fragments_alpha_failed: 0,
        fragments_stencil_failed: 0,
        fragments_depth_failed: 0,
        texels_fetched: 0,
        ..*s
    }
}

#[test]
fn costs_off_changes_nothing_but_the_cost_counters_at_1_2_and_8_threads() {
    let mut killed_or_textured = 0;
    for (name, bytes) in traces() {
        let on = fingerprint(&bytes, PixelPath::Specialized, 1, true);
        killed_or_textured += on
            .stats
            .iter()
            .filter(|(_, s)| without_costs(s) != *s)
            .count();
        let expected = Fingerprint {
            stats: on
                .stats
                .iter()
                .map(|(d, s)| (*d, without_costs(s)))
                .collect(),
            ..on
        };
        for threads in [1, 2, 8] {
            let off = fingerprint(&bytes, PixelPath::Specialized, threads, false);
            assert!(
                off == expected,
                "{name}, {threads} threads, costs off: {}",
                first_difference(&off, &expected)
            );
        }
    }
    // The traces exercise what costs off leaves out (texel counts, killed fragments).
    assert!(killed_or_textured > 0);
}

// ----- draws whose pixels wait for the following draws ------------------------------------

/// The demo vertex shader (position, texcoord from the buffer; colour from fixed attribute 2).
const SCENE_VS: &str = include_str!("../src/scene/demos/scene.v.pica");

/// Three frames whose command list reads back what its own small draws wrote: a grid of 60
/// quads, one draw each, paints the top target; a draw then samples the start of that
/// target's colour buffer as a 64×64 texture onto a quad of the same target; 60 more quads and
/// a second sampling draw follow. With several threads the quads' pixels wait for the
/// following draws into the same buffers, so the sampling draws must have them drawn first.
fn feedback_trace() -> Vec<u8> {
    use pica_cmd::regs::pipeline::{AttribType, PrimitiveTopology};
    use pica_cmd::regs::tev::TevSource;
    use pica_cmd::regs::texturing::{TextureFormat, WrapMode};
    use picaview_tests::scene::effect::{tev_modulate, tev_replace};
    use picaview_tests::scene::{
        AttribLayout, BufferLayout, Effect, Sampler, Scene, ShaderBinary, ShaderProgram, Texture,
        Unit, math,
    };

    let mut scene = Scene::new().expect("scene");
    let top = scene.top_target().expect("render target");
    let bin = ShaderBinary::assemble(&[("scene.v.pica", SCENE_VS)]).expect("assembles");
    let prog = ShaderProgram::new(&bin, 0).expect("program");
    let u_proj = prog.vs.float_uniform("projection").expect("projection");
    let u_mv = prog.vs.float_uniform("modelView").expect("modelView");
    let attrs = AttribLayout::new()
        .loader(0, AttribType::Float, 3)
        .loader(1, AttribType::Float, 2)
        .fixed(2);
    let own = Texture {
        pa: top.color_pa,
        size: 64 * 64 * 4,
        width: 64,
        height: 64,
        format: TextureFormat::Rgba8,
        max_level: 0,
        sampler: Sampler::nearest(WrapMode::ClampToEdge),
    };
    let projection = math::ortho_tilt(0.0, 400.0, 240.0, 0.0, 0.0, 1.0);
    let identity = math::scale(1.0, 1.0, 1.0);
    let quad = |x: f32, y: f32, s: f32| {
        [
            x,
            y,
            -0.5,
            0.0,
            0.0,
            x + s,
            y,
            -0.5,
            1.0,
            0.0,
            x,
            y + s,
            -0.5,
            0.0,
            1.0,
            x + s,
            y + s,
            -0.5,
            1.0,
            1.0,
        ]
    };
    for frame in 0..3u32 {
        scene.clear(&top, [10, 20, 30, 255], 0);
        let mut v = Vec::new();
        for pass in 0..2u32 {
            for j in 0..6u32 {
                for i in 0..10u32 {
                    let (x, y) = (i * 40 + pass * 13 + frame, j * 40 + pass * 7);
                    v.extend(quad(x as f32, y as f32, 40.0));
                }
            }
        }
        v.extend(quad(150.0, 80.0, 96.0));
        v.extend(quad(30.0 + frame as f32, 20.0, 128.0));
        let vb = scene.vertex_buffer_f32(&v).expect("vertex buffer");
        let mut cmd = scene.command_list();
        cmd.set_render_target(&top)
            .bind_program(&prog)
            .set_attributes(&attrs)
            .uniform_mat4(Unit::Vertex, u_proj, &projection)
            .uniform_mat4(Unit::Vertex, u_mv, &identity)
            .set_effect(&Effect::ui())
            .set_buffers(&BufferLayout::new().buffer(vb, 20, &[0, 1]));
        for pass in 0..2u32 {
            cmd.bind_textures([None, None, None])
                .set_tev(0, &tev_replace(TevSource::PrimaryColor));
            for q in 0..60u32 {
                let c = (q * 37 + frame * 11 + pass * 101) % 255;
                let colour = [c as f32 / 255.0, 1.0 - c as f32 / 510.0, 0.5, 0.75];
                cmd.fixed_attribute(2, colour).draw_arrays(
                    PrimitiveTopology::TriangleStrip,
                    (pass * 60 + q) * 4,
                    4,
                );
            }
            cmd.bind_textures([Some(&own), None, None])
                .set_tev(
                    0,
                    &tev_modulate(TevSource::Texture0, TevSource::PrimaryColor),
                )
                .fixed_attribute(2, [1.0, 1.0, 1.0, 1.0])
                .draw_arrays(PrimitiveTopology::TriangleStrip, (120 + pass) * 4, 4);
        }
        scene.submit(cmd).expect("submits");
        scene.present(&top, gpu_core::lcd::Screen::Top);
        scene.end_frame();
    }
    scene.finish().expect("trace")
}

/// Draw ends, diagnostics, and how often a draw began while an earlier one had not ended (its
/// pixels waited); accepts late draw ends ([`Observer::allows_deferred_pixels`]).
#[derive(Default)]
struct LateLog {
    open: u64,
    overlapped: u64,
    stats: Vec<(u64, DrawStats)>,
    /// Diagnostics of a draw, by draw (in order within one draw).
    of_draws: Vec<(u64, String)>,
    /// Diagnostics of no draw, in order.
    others: Vec<String>,
}

impl Observer for LateLog {
    fn allows_deferred_pixels(&self) -> bool {
        true
    }
    fn draw_begin(&mut self, _info: &DrawInfo) {
        if self.open > 0 {
            self.overlapped += 1;
        }
        self.open += 1;
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, _detail: Option<DrawDetail>) {
        self.open = self.open.saturating_sub(1);
        self.stats.push((info.draw, *stats));
    }
    fn diagnostic(&mut self, d: &gpu_core::debug::Diagnostic) {
        match d.draw {
            Some(draw) => self.of_draws.push((draw, format!("{d:?}"))),
            None => self.others.push(format!("{d:?}")),
        }
    }
}

/// What a frame-by-frame replay with [`LateLog`] gives.
struct FrameRun {
    /// All of memory at every frame end and at the end.
    frames: Vec<u64>,
    /// Every draw's counters, in the order the draws ended.
    stats: Vec<(u64, DrawStats)>,
    /// Diagnostics of a draw, by draw (in order within one draw).
    of_draws: Vec<(u64, String)>,
    /// Diagnostics of no draw, in order.
    others: Vec<String>,
    /// Draws that began before an earlier one ended.
    overlapped: u64,
}

/// Replays `bytes` frame by frame with `threads` pixel threads (and the work budget `budget`).
fn frame_fingerprint(bytes: &[u8], threads: usize, budget: Option<&str>) -> FrameRun {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let mut replay = Replay::new(trace);
    replay.set_threads(threads);
    if let Some(b) = budget {
        replay.set_work_budget(gpu_core::budget::WorkBudget::parse(b).expect("budget"));
    }
    let mut log = LateLog::default();
    let mut frames = Vec::new();
    let mut f = 0;
    while replay.run_until(Target::Frame(f), &mut log) && !replay.at_end() {
        frames.push(memory_hash(&replay));
        f += 1;
    }
    replay.run_until(Target::End, &mut log);
    frames.push(memory_hash(&replay));
    assert_eq!(log.open, 0, "a draw never ended");
    // A draw's diagnostics keep their order; those of different draws may interleave when
    // pixels wait (the pixel diagnostics come with the late draw end).
    log.of_draws.sort_by_key(|(draw, _)| *draw);
    FrameRun {
        frames,
        stats: log.stats,
        of_draws: log.of_draws,
        others: log.others,
        overlapped: log.overlapped,
    }
}

/// With several threads, consecutive draws into the same buffers are drawn together
/// (gpu-core `draw/deferred.rs`): memory at every frame, every draw's counters and
/// diagnostics equal the one-thread replay's (where every draw ends before the next), on
/// every trace (the fuzzers' seeds too), on a trace whose draws sample what the previous draws
/// of the same list rendered, and under a fragment budget that runs out mid-frame (so a frame's draws are cut
/// at the same draw whether pixels waited or not). And draws did wait.
#[test]
fn draws_drawn_together_match_drawing_each_in_turn() {
    let mut all = traces();
    all.push(("feedback".to_string(), feedback_trace()));
    // The fuzzers' small seed traces (immediate mode, u8/u16 indices, a geometry shader,
    // every texture format, fills and transfers; 16x16 targets, so groups stay on one thread).
    let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data/fuzz");
    for name in ["replay-seed-basic", "replay-seed-formats", "replay-seed-gs"] {
        let path = seeds.join(format!("{name}.ctf"));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        all.push((name.to_string(), bytes));
    }
    let mut overlapped = 0;
    for (name, bytes) in &all {
        for budget in [None, Some("fragments-per-frame=40000")] {
            let linear = frame_fingerprint(bytes, 1, budget);
            assert_eq!(linear.overlapped, 0, "{name}: one thread never defers");
            for threads in [2, 8] {
                let together = frame_fingerprint(bytes, threads, budget);
                let what = format!("{name}, {threads} threads, budget {budget:?}");
                if let Some(i) = (0..linear.frames.len())
                    .find(|&i| linear.frames.get(i) != together.frames.get(i))
                {
                    panic!("{what}: memory differs at frame {i}");
                }
                assert_eq!(together.frames.len(), linear.frames.len(), "{what}: frames");
                assert!(
                    together.stats == linear.stats,
                    "{what}: draw counters differ"
                );
                assert_eq!(
                    together.of_draws, linear.of_draws,
                    "{what}: draw diagnostics"
                );
                assert_eq!(together.others, linear.others, "{what}: other diagnostics");
                overlapped += together.overlapped;
            }
        }
    }
    assert!(overlapped > 100, "only {overlapped} draws waited");
}
