//! Trim and reduce (issue 16): a trimmed trace renders its frames bit-identically (colour,
//! depth, both screens) to the original's frames A..=B on every bundled demo and several
//! ranges; a reduced trace is smaller and still gives the picked pixel's value.

use gpu_core::replay::reduce::{PixelSource, ReduceBudget, pixel_at_end, reduce};
use gpu_core::replay::trim::{frame_count, trim};
use pica_cmd::citrace::CiTrace;
use picaview_tests::frames::{demo_bytes, frames};
use picaview_tests::scene::demos::DEMOS;

#[test]
fn trimmed_traces_render_their_frames_identically() {
    for d in &DEMOS {
        let original = demo_bytes(d.name);
        let all = frames(&original);
        let n = frame_count(&CiTrace::from_bytes(original.clone()).expect("parses"));
        assert!(n >= 2, "{}: {n} frames", d.name);
        let last = all.len() as u32 - 1;
        let mut ranges = vec![(0, last), (1, last), (last, last), (1, 1)];
        if last >= 3 {
            ranges.push((2, last - 1));
        }
        for (a, b) in ranges {
            let trace = CiTrace::from_bytes(original.clone()).expect("parses");
            let (builder, report) = trim(trace, a, b).expect("trims");
            let out = builder.build().expect("builds");
            let got = frames(&out);
            assert_eq!(
                got,
                all[a as usize..=b as usize].to_vec(),
                "{}: frames {a}..{b} differ ({report:?})",
                d.name
            );
            assert!(
                report
                    .inexact
                    .iter()
                    .all(|s| s.starts_with("PICA register 0x")),
                "{}: {a}..{b}: {:?}",
                d.name,
                report.inexact
            );
        }
    }
}

#[test]
fn trim_refuses_ranges_outside_the_trace() {
    let original = demo_bytes("cube");
    let n = frame_count(&CiTrace::from_bytes(original.clone()).expect("parses"));
    for (a, b) in [(2, 1), (0, n), (n + 5, n + 6)] {
        let trace = CiTrace::from_bytes(original.clone()).expect("parses");
        assert!(trim(trace, a, b).is_err(), "{a}..{b} accepted");
    }
}

/// What the reduce tests keep: fog_blend's last frame and the colour of one pixel in the middle
/// of its colour buffer at the end of that frame (read from the trace trimmed to frames 0..=last,
/// the trace `reduce` starts from).
struct Target {
    original: Vec<u8>,
    frame: u32,
    x: u32,
    y: u32,
    want: [u8; 4],
}

fn fog_blend_target() -> Target {
    let original = demo_bytes("fog_blend");
    let trace = CiTrace::from_bytes(original.clone()).expect("parses");
    let frame = trace.stats().frame_markers as u32 - 1;
    let (x, y) = (120, 200);
    let cut = {
        let (b, _) = trim(trace, 0, frame).expect("trims");
        b.build().expect("builds")
    };
    let want = pixel_at_end(&cut, PixelSource::Color, x, y).expect("pixel");
    Target {
        original,
        frame,
        x,
        y,
        want,
    }
}

#[test]
fn reduce_keeps_the_pixel_and_shrinks_the_trace() {
    let Target {
        original,
        frame,
        x,
        y,
        want,
    } = fog_blend_target();
    let mut check = |bytes: &[u8]| pixel_at_end(bytes, PixelSource::Color, x, y) == Some(want);
    let mut lines = 0usize;
    let mut progress = |_: &str| lines += 1;
    let (out, report) = reduce(
        original,
        frame,
        &mut check,
        ReduceBudget {
            max_steps: 400,
            deadline: None,
        },
        &mut progress,
    )
    .expect("reduces");
    eprintln!("{report:?}");
    assert_eq!(pixel_at_end(&out, PixelSource::Color, x, y), Some(want));
    assert!(report.after.bytes < report.before.bytes, "{report:?}");
    assert!(report.after.writes < report.before.writes, "{report:?}");
    assert!(report.after.draws <= report.before.draws, "{report:?}");
    assert!(lines > 0);
}

/// The time limit bounds the whole reduction, not only the search: with a check that takes
/// 200 ms and a limit of 500 ms, at most a couple of candidates start (one more check plus the
/// final measurement must fit before the limit), and the later phases, whose set-up replays the
/// trace, are skipped. (A `reduce --time-limit 25` on a trace whose replay took ~5 s ran ~7
/// replays, 38 s of CPU, because only the search looked at the deadline.)
#[test]
fn reduce_stops_the_whole_run_at_its_deadline() {
    let Target {
        original,
        frame,
        x,
        y,
        want,
    } = fog_blend_target();
    let mut calls = 0u32;
    let mut check = |bytes: &[u8]| {
        calls += 1;
        std::thread::sleep(std::time::Duration::from_millis(200));
        pixel_at_end(bytes, PixelSource::Color, x, y) == Some(want)
    };
    let mut progress = |_: &str| {};
    let (out, report) = reduce(
        original,
        frame,
        &mut check,
        ReduceBudget {
            max_steps: 400,
            deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(500)),
        },
        &mut progress,
    )
    .expect("reduces");
    assert!(report.budget_exhausted, "{report:?}");
    // The input's own check, and at most two candidates that fitted (the second only if the
    // first measurement was very fast); no packing check.
    assert!(calls <= 3, "{calls} checks: {report:?}");
    // Only the first phase ran; the others' set-up replays were skipped.
    assert_eq!(report.phases.len(), 1, "{report:?}");
    assert_eq!(pixel_at_end(&out, PixelSource::Color, x, y), Some(want));
}
