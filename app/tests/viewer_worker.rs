//! The viewer's replay worker and its session cache, without a UI: indexing, state snapshots
//! as of a command, images, command pages, draw detail, shader traces, search, thumbnails and
//! the register/uniform history, on a synthetic trace.

mod viewer_common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use gpu_core::debug::RegSpace;
use picaview::viewer::load::{FileKind, Opened, open_bytes, open_path};
use picaview::viewer::protocol::{ImageSource, Request, Response};
use picaview::viewer::session::TraceSession;
use picaview::viewer::shader_debug::outputs_match;
use viewer_common::*;

fn session() -> (TraceSession, Arc<AtomicUsize>) {
    let wakes = Arc::new(AtomicUsize::new(0));
    let w = wakes.clone();
    let opened = open_bytes(
        std::path::Path::new("synthetic.ctf"),
        make_trace(),
        Arc::new(move || {
            w.fetch_add(1, Ordering::SeqCst);
        }),
    )
    .expect("opens");
    let Opened::Trace { info, worker } = opened else {
        panic!("not a trace");
    };
    assert_eq!(info.kind, FileKind::Trace);
    (TraceSession::new(info, worker), wakes)
}

fn pump(s: &mut TraceSession, what: &str, mut cond: impl FnMut(&mut TraceSession) -> bool) {
    wait_for(what, || {
        s.flush();
        s.poll();
        cond(s)
    });
}

#[test]
fn index_state_images_and_history() {
    let (mut s, wakes) = session();
    pump(&mut s, "index", |s| s.index.is_some());
    let index = s.index.clone().expect("index");
    assert_eq!(index.frames.len(), FRAMES as usize);
    assert_eq!(index.draws.len(), (FRAMES * DRAWS_PER_FRAME) as usize);
    assert!(wakes.load(Ordering::SeqCst) > 0, "the waker was called");

    // State as of the first draw's trigger: the tint uniform is set, the program listed.
    let trig = index.draws[0].before.writes + 1;
    pump(&mut s, "state", |s| {
        s.want_state(trig);
        s.state_is_current(trig)
    });
    let snap = s.state.clone().expect("state");
    assert_eq!(snap.pos.writes, trig);
    assert_eq!(snap.vs.float_uniforms[0], TINT);
    assert!(snap.vs.listing.lines.iter().any(|l| l.text.contains("mul")));
    assert_eq!(snap.regs[0x085], TEX_ADDR >> 3);
    // As of command 0 (initial state) nothing is set yet.
    pump(&mut s, "initial state", |s| {
        s.want_state(0);
        s.state_is_current(0)
    });
    assert_eq!(
        s.state.as_ref().expect("state").vs.float_uniforms[0],
        [0.0; 4]
    );

    // The texture of unit 0 decodes to the pattern that was loaded.
    let tex = ImageSource::Texture {
        unit: 0,
        face: 0,
        level: 0,
    };
    pump(&mut s, "texture", |s| {
        !matches!(
            s.want_image(trig, tex),
            picaview::viewer::session::ImageEntry::Pending
        )
    });
    let picaview::viewer::session::ImageEntry::Ready(img, _) = s.want_image(trig, tex) else {
        panic!("texture did not decode");
    };
    assert_eq!((img.width, img.height), (8, 8));
    // Texel (1, 0) is Morton index 1: R = 32, G = 251.
    assert_eq!(img.pixels[1], [32, 251, 0, 255]);

    // The colour buffer after the last draw of frame 0 shows draw 0's colour at its corner.
    let end0 = index.frames[0].end.writes;
    pump(&mut s, "colour buffer", |s| {
        !matches!(
            s.want_image(end0, ImageSource::Color),
            picaview::viewer::session::ImageEntry::Pending
        )
    });
    let picaview::viewer::session::ImageEntry::Ready(cb, _) =
        s.want_image(end0, ImageSource::Color)
    else {
        panic!("colour buffer did not decode");
    };
    assert_eq!((cb.width, cb.height), (W, H));
    // Bottom-left pixel (image row H-1): draw 0, colour (0.25, 0, 1) · tint (1, 0.5, 1).
    let px = cb.pixels[((H - 1) * W) as usize];
    assert_eq!(px[1], 0);
    assert!(px[0] > 50 && px[0] < 80 && px[2] > 240, "{px:?}");

    // The top screen decodes (LCD registers point at the colour buffer).
    pump(&mut s, "top screen", |s| {
        !matches!(
            s.want_image(end0, ImageSource::TopScreen),
            picaview::viewer::session::ImageEntry::Pending
        )
    });
    assert!(matches!(
        s.want_image(end0, ImageSource::TopScreen),
        picaview::viewer::session::ImageEntry::Ready(..)
    ));

    // Pixel picker: raw bytes and decoded value.
    s.pick(end0, ImageSource::Color, 0, H - 1);
    pump(&mut s, "pixel", |s| s.pixel.is_some());
    let (_, _, _, _, info) = s.pixel.clone().expect("pixel");
    let rows: std::collections::HashMap<_, _> = info.rows.into_iter().collect();
    let addr = u32::from_str_radix(rows["address"].trim_start_matches("0x"), 16).expect("hex");
    // Window row 0 is the last memory row: its tile row starts 7 tile rows into the buffer.
    assert!(
        (COLOR_ADDR + 7 * 8 * W * 4..COLOR_ADDR + W * H * 4).contains(&addr),
        "{addr:08X}"
    );
    assert_eq!(rows["raw bytes"].split(' ').count(), 4);
    assert!(
        rows["decoded"].starts_with(&format!("R {} G 0", px[0])),
        "{rows:?}"
    );

    // The background pass ends with the history: the draw-0 trigger wrote DRAWARRAYS, the
    // tint was uploaded by the fourth f32 word right before it.
    pump(&mut s, "history", |s| s.provenance.is_some());
    let p = s.provenance.clone().expect("provenance");
    assert_eq!(p.last_write(0x22E, trig), Some(trig));
    let setter = p.uniform_setter(0, 0, trig).expect("c0 was set");
    assert!(setter < trig && setter > index.draws[0].before.writes - 4);
    assert!(p.written_between(0x041, 1, trig));
    assert_eq!(p.complete_until, index.end.writes);
    // Thumbnails for every draw arrived.
    for d in 0..index.draws.len() as u64 {
        assert!(s.has_thumb(d), "thumbnail of draw {d}");
    }
}

#[test]
fn commands_detail_shader_and_search() {
    let (mut s, _) = session();
    pump(&mut s, "index", |s| s.index.is_some());
    let index = s.index.clone().expect("index");
    let trig = index.draws[1].before.writes + 1;
    pump(&mut s, "command page", |s| s.want_command(trig).is_some());
    let w = s.want_command(trig).expect("write");
    assert_eq!((w.space, w.id, w.new), (RegSpace::Pica, 0x22E, 1));
    // The first command of the trace is an MMIO write (command-list size).
    pump(&mut s, "first page", |s| s.want_command(1).is_some());
    assert_eq!(s.want_command(1).expect("write").space, RegSpace::External);

    // Draw detail: 3 vertices loaded and shaded, one triangle.
    pump(&mut s, "detail", |s| s.want_detail(1).is_some());
    let insp = s.want_detail(1).expect("detail").clone().expect("ok");
    assert_eq!(insp.detail.loaded.len(), 3);
    assert_eq!(insp.detail.shaded.len(), 3);
    assert_eq!(insp.detail.clipped.len(), 1);
    assert_eq!(insp.vertex_ids, vec![3, 4, 5]);
    let (p1, c1) = vertex(0, 1, 1);
    assert_eq!(insp.detail.loaded[1].attrs[0], p1);
    assert_eq!(insp.detail.loaded[1].attrs[1], c1);

    // Shader trace of vertex 1: three steps (mov, mul, end), matching the pipeline.
    pump(&mut s, "shader trace", |s| s.want_shader(1, 1).is_some());
    let t = s.want_shader(1, 1).expect("trace").clone().expect("ok");
    assert_eq!(t.steps.len(), 3);
    assert_eq!(t.inputs[0], p1);
    assert_eq!(outputs_match(&t), Some(true));
    let after_mul = t.regs_at(Some(1));
    let want: Vec<f32> = c1.iter().zip(TINT).map(|(a, b)| a * b).collect();
    assert_eq!(after_mul.outputs[1].to_vec(), want);
    assert_eq!(t.regs_at(None).outputs[1], t.initial.outputs[1]);

    // Search: every DRAWARRAYS write of the trace.
    s.search("drawarrays", 1, s.total_commands());
    pump(&mut s, "search", |s| !s.search.pending);
    let triggers: Vec<u64> = index.draws.iter().map(|d| d.before.writes + 1).collect();
    assert_eq!(s.search.matches, triggers);
    // Search by decoded field text finds the viewport width writes.
    let name = pica_cmd::regs::name(0x041).expect("named");
    s.search(&name.to_ascii_lowercase(), 1, s.total_commands());
    pump(&mut s, "search 2", |s| !s.search.pending);
    assert_eq!(s.search.matches.len(), FRAMES as usize);
}

#[test]
fn raw_command_lists_and_bad_files() {
    let dir = temp_dir("worker-files");
    let list = dir.join("list.bin");
    std::fs::write(&list, make_cmdlist()).expect("write");
    let opened = open_path(&list, Arc::new(|| {})).expect("command list opens");
    let Opened::Trace { info, worker } = opened else {
        panic!("command list should open as a trace");
    };
    assert_eq!(info.kind, FileKind::CommandList);
    let mut s = TraceSession::new(info, worker);
    pump(&mut s, "index", |s| s.index.is_some());
    let index = s.index.clone().expect("index");
    assert_eq!(index.draws.len(), 1);
    assert!(index.end.writes > 50);

    // Garbage with the CiTrace magic: a clear error, no panic.
    let bad = dir.join("bad.ctf");
    std::fs::write(&bad, b"CiTr\x01\0\0\0garbage").expect("write");
    let e = open_path(&bad, Arc::new(|| {})).expect_err("must fail");
    assert!(e.contains("not a valid CiTrace"), "{e}");
    // An empty file.
    let empty = dir.join("empty.bin");
    std::fs::write(&empty, b"").expect("write");
    assert!(
        open_path(&empty, Arc::new(|| {}))
            .expect_err("must fail")
            .contains("empty")
    );
    // A missing file.
    assert!(open_path(&dir.join("missing.ctf"), Arc::new(|| {})).is_err());
    // A truncated shader binary.
    let shbin = dir.join("bad.shbin");
    std::fs::write(&shbin, b"DVLB\x01\0\0\0\x10").expect("write");
    let e = open_path(&shbin, Arc::new(|| {})).expect_err("must fail");
    assert!(e.contains("not a valid shader binary"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn requests_for_nonsense_answer_with_errors() {
    let (mut s, _) = session();
    pump(&mut s, "index", |s| s.index.is_some());
    // A draw that does not exist, an image of an unconfigured unit, commands past the end.
    pump(&mut s, "bad draw", |s| s.want_detail(999).is_some());
    assert!(s.want_detail(999).expect("answer").is_err());
    let src = ImageSource::Texture {
        unit: 2,
        face: 0,
        level: 0,
    };
    pump(&mut s, "bad image", |s| {
        !matches!(
            s.want_image(5, src),
            picaview::viewer::session::ImageEntry::Pending
        )
    });
    assert!(matches!(
        s.want_image(5, src),
        picaview::viewer::session::ImageEntry::Failed(_)
    ));
    let total = s.total_commands();
    assert!(s.want_command(total + 10).is_none());
    // The worker keeps answering afterwards.
    pump(&mut s, "state", |s| {
        s.want_state(3);
        s.state_is_current(3)
    });
    let _ = (Request::State { at: 0 }, Response::Idle);
}

#[test]
fn indexing_can_be_cancelled() {
    use pica_cmd::citrace::{CiTraceBuilder, InitialState};
    // 200 000 writes to an unused MMIO word: indexing takes a while.
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    for i in 0..200_000u32 {
        b.register_write(0x1040_0FF0, i);
    }
    b.frame_marker();
    let opened = open_bytes(
        std::path::Path::new("big.ctf"),
        b.build().expect("builds"),
        Arc::new(|| {}),
    )
    .expect("opens");
    let Opened::Trace { info, worker } = opened else {
        panic!("not a trace");
    };
    let mut s = TraceSession::new(info, worker);
    s.cancel();
    pump(&mut s, "cancellation", |s| s.cancelled);
    assert!(s.index.is_none());
    assert!(!s.loading());
    assert!(s.log.iter().any(|l| l.contains("cancelled")));
}

/// Prints how long the viewer waits on the worker for the demo traces (not a test of
/// behaviour; run with `cargo test -p picaview --test viewer_worker --release -- --ignored
/// --nocapture`).
#[test]
#[ignore = "measurement"]
fn measure_demo_latencies() {
    use std::time::Instant;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../assets/demos");
    for name in ["cube.ctf", "fog_blend.ctf", "geoshader.ctf", "stress.ctf"] {
        let t0 = Instant::now();
        let opened = open_path(&dir.join(name), Arc::new(|| {})).expect("opens");
        let Opened::Trace { info, worker } = opened else {
            panic!("not a trace");
        };
        let mut s = TraceSession::new(info, worker);
        pump(&mut s, "index", |s| s.index.is_some());
        let t_index = t0.elapsed();
        pump(&mut s, "analysis", |s| s.provenance.is_some());
        let t_analysis = t0.elapsed();
        let index = s.index.clone().expect("index");
        // Step through every draw (state snapshot + colour buffer), worst and mean.
        let mut worst = std::time::Duration::ZERO;
        let mut total = std::time::Duration::ZERO;
        let n = index.draws.len().min(200);
        for d in index.draws.iter().take(n) {
            let at = d.before.writes + 1;
            let t = Instant::now();
            pump(&mut s, "step", |s| {
                s.want_state(at);
                let img = s.want_image(at, ImageSource::Color);
                s.state_is_current(at)
                    && !matches!(img, picaview::viewer::session::ImageEntry::Pending)
            });
            let e = t.elapsed();
            worst = worst.max(e);
            total += e;
        }
        // Draw detail + a shader trace of the last draw.
        let last = index.draws.len() as u64 - 1;
        let t = Instant::now();
        pump(&mut s, "detail", |s| s.want_detail(last).is_some());
        pump(&mut s, "shader", |s| s.want_shader(last, 0).is_some());
        let t_detail = t.elapsed();
        println!(
            "{name}: {} commands, {} draws; index {:.0} ms, background analysis done at {:.0} ms; step to a draw (state + colour buffer): mean {:.1} ms, worst {:.1} ms over {n}; draw detail + shader trace {:.1} ms",
            index.end.writes,
            index.draws.len(),
            t_index.as_secs_f64() * 1e3,
            t_analysis.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3 / n.max(1) as f64,
            worst.as_secs_f64() * 1e3,
            t_detail.as_secs_f64() * 1e3
        );
    }
}
