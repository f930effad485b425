//! The replay index's keyframe store under a memory budget (issue 18): long traces (thousands of
//! frame markers, hundreds of cube frames) index with the accounted keyframe bytes under a small
//! budget, empty frames take no keyframe, and seeks to sampled draws, writes and frames still
//! land on the state a linear replay reaches.

use gpu_core::memory::{FCRAM, PhysMem};
use gpu_core::replay::{DEFAULT_KEYFRAME_BUDGET, Position, Replay, Target, TraceIndex};
use pica_cmd::citrace::{CiTrace, CiTraceBuilder, StreamEvent};
use picaview_tests::scene::demos::demos_dir;

const SMALL_BUDGET: u64 = 8 << 20;

fn cube_bytes() -> Vec<u8> {
    std::fs::read(demos_dir().join("cube.ctf")).expect("assets/demos/cube.ctf is readable")
}

/// The cube demo's stream repeated `times` times (same initial state; blobs are shared by the
/// builder, so the file stays small), then `empty_markers` frame markers with nothing between.
fn repeated_cube(times: usize, empty_markers: usize) -> Vec<u8> {
    let mut trace = CiTrace::from_bytes(cube_bytes()).expect("cube.ctf parses");
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    b.layout(trace.layout());
    let mut buf = Vec::new();
    for _ in 0..times {
        for i in 0..trace.elements().len() {
            match trace.event(i) {
                Some(StreamEvent::MemoryLoad(m)) => {
                    trace.read_blob_into(i, &mut buf).expect("blob reads");
                    b.memory_load(m.physical_address, &buf).expect("load fits");
                }
                Some(_) => {
                    let raw = trace.elements()[i];
                    b.raw_element(raw).expect("not a memory load");
                }
                None => {}
            }
        }
    }
    for _ in 0..empty_markers {
        b.frame_marker();
    }
    b.build().expect("trace builds")
}

/// `frames` frames that each load 4 bytes into a different FCRAM page, so that every frame
/// marker follows executed work and every keyframe holds a page of its own.
fn tiny_frames(frames: u32) -> Vec<u8> {
    let trace = CiTrace::from_bytes(cube_bytes()).expect("cube.ctf parses");
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    for f in 0..frames {
        let pa = FCRAM.base + 0x10_0000 + (f % 0x4000) * 0x1000;
        b.memory_load(pa, &f.to_le_bytes()).expect("load fits");
        b.frame_marker();
    }
    b.build().expect("trace builds")
}

fn index(bytes: &[u8], budget: u64) -> (Replay<Vec<u8>>, TraceIndex) {
    let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
    r.set_keyframe_budget(budget);
    let index = r.build_index();
    (r, index)
}

/// The state a linear replay reaches at `target`: whether it was reached, position, memory,
/// PICA and external registers.
type LinearState = (bool, Position, PhysMem, Vec<u32>, Vec<u32>);

/// Seeks `indexed` to each of `targets` (which must be in ascending order) in a scrambled order
/// (backwards, then every other one forwards) and compares each result with the state one
/// linear replay reaches on its way through the targets.
fn assert_seeks_match(indexed: &mut Replay<Vec<u8>>, bytes: &[u8], targets: &[Target]) {
    let mut linear = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
    let states: Vec<LinearState> = targets
        .iter()
        .map(|&t| {
            let reached = linear.run_until(t, &mut ());
            let g = linear.gpu();
            (
                reached,
                linear.position(),
                linear.mem().clone(),
                g.regs.to_vec(),
                g.ext_regs.to_vec(),
            )
        })
        .collect();
    let order = (0..targets.len())
        .rev()
        .chain((0..targets.len()).step_by(2));
    for i in order {
        let target = targets[i];
        let (reached, pos, mem, regs, ext) = &states[i];
        assert_eq!(indexed.seek(target, &mut ()), *reached, "{target:?}");
        assert_eq!(indexed.position(), *pos, "{target:?}");
        assert!(indexed.mem().same_contents(mem), "memory at {target:?}");
        assert_eq!(
            &indexed.gpu().regs[..],
            &regs[..],
            "PICA regs at {target:?}"
        );
        assert_eq!(
            &indexed.gpu().ext_regs[..],
            &ext[..],
            "ext regs at {target:?}"
        );
    }
}

fn assert_within_budget(index: &TraceIndex, budget: u64) {
    assert_eq!(index.keyframe_budget, budget);
    assert!(
        index.keyframe_bytes <= budget,
        "{} bytes held over a {budget} budget",
        index.keyframe_bytes
    );
    assert!(index.keyframes >= 1);
}

#[test]
fn empty_frame_markers_take_no_keyframes() {
    let bytes = repeated_cube(1, 5_000);
    let (_, baseline) = index(&repeated_cube(1, 0), DEFAULT_KEYFRAME_BUDGET);
    let (mut r, idx) = index(&bytes, DEFAULT_KEYFRAME_BUDGET);
    assert_eq!(idx.frames.len(), baseline.frames.len() + 5_000);
    // The 5,000 empty frames add at most the one keyframe after the last executed work.
    assert!(
        idx.keyframes <= baseline.keyframes + 1,
        "{} keyframes vs {} without the empty frames",
        idx.keyframes,
        baseline.keyframes
    );
    assert_eq!(idx.keyframes_dropped, 0);
    assert_within_budget(&idx, DEFAULT_KEYFRAME_BUDGET);
    let mut targets: Vec<Target> = [2u32, 6, 7, 2_500, 5_005]
        .into_iter()
        .map(Target::Frame)
        .collect();
    targets.push(Target::End);
    assert_seeks_match(&mut r, &bytes, &targets);
}

#[test]
fn thousands_of_frames_stay_under_a_small_budget() {
    let frames = 6_000;
    let bytes = tiny_frames(frames);
    let (mut r, idx) = index(&bytes, SMALL_BUDGET);
    assert_eq!(idx.frames.len(), frames as usize);
    assert_within_budget(&idx, SMALL_BUDGET);
    assert!(idx.keyframes_dropped > 0, "{idx:?}");
    assert!(idx.keyframe_stride > 1);
    let mut targets: Vec<Target> = [0u32, 1, 2, 777, 3_001, 5_999]
        .into_iter()
        .map(Target::Frame)
        .collect();
    targets.push(Target::End);
    assert_seeks_match(&mut r, &bytes, &targets);
}

#[test]
fn many_cube_frames_stay_under_a_small_budget_and_seek_exactly() {
    let times = 16; // 96 cube frames
    let bytes = repeated_cube(times, 0);
    let (mut r, idx) = index(&bytes, SMALL_BUDGET);
    assert_eq!(idx.frames.len(), 6 * times);
    assert_within_budget(&idx, SMALL_BUDGET);
    assert!(idx.keyframes_dropped > 0, "{idx:?}");
    let n = idx.draws.len() as u64;
    assert!(n > 100);
    // Spread forwards and backwards jumps, the first and the last draw.
    let mut draws: Vec<u64> = (0..12u64).map(|k| (k * 7919) % n).collect();
    draws.extend([0, n - 1, n / 2, n / 2 - 1]);
    draws.sort_unstable();
    draws.dedup();
    let targets: Vec<Target> = draws.into_iter().map(Target::AfterDraw).collect();
    assert_seeks_match(&mut r, &bytes, &targets);
    // The default budget keeps more keyframes than the small one.
    let (_, roomy) = index(&bytes, DEFAULT_KEYFRAME_BUDGET);
    assert!(roomy.keyframes > idx.keyframes);
    assert_within_budget(&roomy, DEFAULT_KEYFRAME_BUDGET);
}

#[test]
fn a_zero_budget_keeps_only_the_first_keyframe_and_still_seeks() {
    let bytes = repeated_cube(2, 0);
    let (mut r, idx) = index(&bytes, 0);
    assert_eq!(idx.keyframes, 1);
    assert!(idx.keyframes_dropped > 0);
    let n = idx.draws.len() as u64;
    let targets = [3, n / 2, n - 1].map(Target::AfterDraw);
    assert_seeks_match(&mut r, &bytes, &targets);
}

/// Writes the inputs used to measure `bench replay`'s peak RSS: a 1,200-frame cube capture to
/// the path in `PICAVIEW_LONG_CUBE` and the cube followed by 20,000 empty frame markers to the
/// path in `PICAVIEW_EMPTY_FRAMES` (run with `--ignored`; does nothing without the variables).
#[test]
#[ignore = "writes a measurement input; run by hand"]
fn write_long_cube_capture() {
    if let Some(path) = std::env::var_os("PICAVIEW_LONG_CUBE") {
        std::fs::write(path, repeated_cube(200, 0)).expect("capture written");
    }
    if let Some(path) = std::env::var_os("PICAVIEW_EMPTY_FRAMES") {
        std::fs::write(path, repeated_cube(1, 20_000)).expect("capture written");
    }
}
