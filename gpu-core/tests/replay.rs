//! Trace replay and time travel on a synthetic CiTrace: several frames, each one command list
//! with many small draws.

mod common;
use common::*;

use gpu_core::debug::EventLog;
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::{CiTrace, CiTraceBuilder, InitialState};
use pica_cmd::cmdlist::CmdListBuilder;

const FRAMES: u32 = 3;
const DRAWS_PER_FRAME: u32 = 40;

/// Frame f, draw d: a thin triangle at column d, with colour depending on f and d.
fn make_trace() -> Vec<u8> {
    let mut tb = CiTraceBuilder::new(InitialState::citra_sized());
    for f in 0..FRAMES {
        let mut verts = Vec::new();
        for d in 0..DRAWS_PER_FRAME {
            let x0 = -1.0 + (d as f32) * 2.0 / DRAWS_PER_FRAME as f32;
            let x1 = x0 + 2.0 / DRAWS_PER_FRAME as f32;
            let c = [(d as f32) / 40.0, (f as f32) / 3.0, 128.0 / 255.0, 1.0];
            verts.push(([x0, -1.0, -0.5, 1.0], c));
            verts.push(([x1, -1.0, -0.5, 1.0], c));
            verts.push(([x0, 1.0, -0.5, 1.0], c));
        }
        let mut b = CmdListBuilder::new();
        setup(&mut b, 3, 0);
        for d in 0..DRAWS_PER_FRAME {
            b.write(0x22A, d * 3); // VERTEX_OFFSET
            b.write(0x22E, 1);
        }
        b.finalize();
        tb.memory_load(VERTEX_ADDR, &vertex_bytes(&verts)).unwrap();
        tb.submit_command_list(LIST_ADDR, &b.to_bytes()).unwrap();
        tb.frame_marker();
    }
    tb.build().unwrap()
}

fn color_buffer(r: &Replay<Vec<u8>>) -> Vec<[u8; 4]> {
    let fb = FramebufferConfig::from_regs(&r.gpu().regs);
    fb.read_color_image(r.mem()).unwrap()
}

#[test]
fn index_counts_frames_and_draws() {
    let trace = CiTrace::from_bytes(make_trace()).unwrap();
    let mut r = Replay::new(trace);
    let index = r.build_index();
    assert_eq!(index.draws.len(), (FRAMES * DRAWS_PER_FRAME) as usize);
    assert_eq!(index.frames.len(), FRAMES as usize);
    for (f, frame) in index.frames.iter().enumerate() {
        let f = f as u64;
        assert_eq!(frame.draws, f * 40..(f + 1) * 40);
        assert!(!frame.unterminated);
    }
    assert!(index.diagnostics.is_empty(), "{:?}", index.diagnostics);
    assert!(
        index.keyframes >= 1 + FRAMES as usize + 5,
        "keyframes {}",
        index.keyframes
    );
    assert!(r.at_end());
}

#[test]
fn seeking_matches_linear_replay() {
    let bytes = make_trace();
    let mut indexed = Replay::new(CiTrace::from_bytes(bytes.clone()).unwrap());
    let index = indexed.build_index();
    // Forwards, backwards and across keyframes: every result equals a fresh linear replay.
    for &m in &[0u64, 17, 55, 3, 119, 40, 16, 15] {
        assert!(indexed.seek(Target::AfterDraw(m), &mut ()));
        assert_eq!(indexed.position().draws, m + 1);
        let mut linear = Replay::new(CiTrace::from_bytes(bytes.clone()).unwrap());
        assert!(linear.run_until(Target::AfterDraw(m), &mut ()));
        assert_eq!(indexed.position(), linear.position(), "draw {m}");
        assert!(
            indexed.mem().same_contents(linear.mem()),
            "memory after draw {m}"
        );
        assert_eq!(color_buffer(&indexed), color_buffer(&linear));
    }
    // Write positions inside a command list.
    let w = index.draws[70].before.writes + 1;
    assert!(indexed.seek(Target::AfterWrite(w), &mut ()));
    assert_eq!(indexed.position().writes, w);
    assert_eq!(indexed.position().draws, 71);
    // Frames: the state when the stream reaches marker 1 has all draws of frames 0 and 1.
    assert!(indexed.seek(Target::Frame(1), &mut ()));
    assert_eq!(indexed.position().draws, 80);
    assert_eq!(indexed.position().frame, 1);
}

#[test]
fn replaying_twice_is_bit_identical() {
    let bytes = make_trace();
    let mut a = Replay::new(CiTrace::from_bytes(bytes.clone()).unwrap());
    let mut b = Replay::new(CiTrace::from_bytes(bytes).unwrap());
    let mut log = EventLog::new(1_000_000, false);
    a.run_until(Target::End, &mut log);
    b.run_until(Target::End, &mut ());
    assert!(a.mem().same_contents(b.mem()));
    // Draw d of the last frame is at column d, colour (d / 40, 2/3, 128/255).
    let fb = FramebufferConfig::from_regs(&a.gpu().regs);
    let px = fb.read_color(a.mem(), 0, 10).unwrap();
    assert_eq!(px, [0, 170, 128, 255]);
}

#[test]
fn lint_finds_nothing_in_a_complete_trace() {
    let mut r = Replay::new(CiTrace::from_bytes(make_trace()).unwrap());
    let report = gpu_core::lint::check(&mut r);
    assert_eq!(report.draws, u64::from(FRAMES * DRAWS_PER_FRAME));
    assert_eq!(report.frames, FRAMES);
    assert!(report.issues.is_empty(), "{:#?}", report.issues);
}

#[test]
fn lint_reports_missing_vertex_data_and_odd_list_sizes() {
    use gpu_core::lint::LintKind;
    let mut tb = CiTraceBuilder::new(InitialState::citra_sized());
    let mut b = CmdListBuilder::new();
    setup(&mut b, 6, 0);
    b.write(0x22E, 1);
    b.write(0x010, 0x1234_5678); // FINALIZE without padding: 8 bytes past a 16-byte boundary
    let list = b.to_bytes();
    assert_ne!(list.len() % 16, 0);
    // Only the first three vertices are in the trace: the draw reads past them.
    let verts = vertex_bytes(&[
        ([-1.0, -1.0, -0.5, 1.0], RED),
        ([1.0, -1.0, -0.5, 1.0], RED),
        ([-1.0, 1.0, -0.5, 1.0], RED),
    ]);
    tb.memory_load(VERTEX_ADDR, &verts).unwrap();
    tb.submit_command_list(LIST_ADDR, &list).unwrap();
    tb.frame_marker();
    let mut r = Replay::new(CiTrace::from_bytes(tb.build().unwrap()).unwrap());
    let report = gpu_core::lint::check(&mut r);
    let kinds: Vec<LintKind> = report.issues.iter().map(|i| i.kind).collect();
    assert!(kinds.contains(&LintKind::CommandListSize), "{kinds:?}");
    assert!(
        kinds.contains(&LintKind::VertexCountBeyondBuffer),
        "{kinds:?}"
    );
}
