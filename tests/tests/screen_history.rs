//! Screen pixels followed through the right display transfer (issue 15): the right eye of a
//! stereoscopic top screen, and a frame whose screen shows an image transferred in an earlier
//! frame. The trace is `picaview_tests::screen_scenes::stereo_lookback` (see its module doc for
//! the draws, fills and transfers); every expectation below is worked out from it by hand.

use gpu_core::debug::EngineEvent;
use gpu_core::debug::fragment::{FragmentFate, ProbeBuffer};
use gpu_core::history::{
    HistoryError, HistoryEvent, HistoryRequest, HistoryTarget, MAX_FRAMES_BACK, PixelHistory,
    identify_screen_pixel, pixel_history,
};
use gpu_core::lcd::{Eye, Screen};
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::scene::Scene;
use picaview_tests::screen_scenes::{STEREO_FIXTURE, stereo_lookback};

fn replay(bytes: &[u8]) -> Replay<Vec<u8>> {
    Replay::new(CiTrace::from_bytes(bytes.to_vec()).unwrap())
}

fn req(frame: u32, target: HistoryTarget, x: u32, y: u32) -> HistoryRequest {
    HistoryRequest {
        frame,
        after_draw: None,
        until_write: None,
        target,
        x,
        y,
    }
}

/// (draw, fates of its fragments) of every draw event.
fn draws(h: &PixelHistory) -> Vec<(u64, Vec<Option<FragmentFate>>)> {
    h.events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Draw {
                draw, fragments, ..
            } => Some((*draw, fragments.iter().map(|f| f.fate).collect())),
            HistoryEvent::Engine { .. } => None,
        })
        .collect()
}

/// Ordinals of the engine events are not in the event; count fills and transfers instead.
fn engine_kinds(h: &PixelHistory) -> Vec<&'static str> {
    h.events
        .iter()
        .filter_map(|e| match e {
            HistoryEvent::Engine { event, .. } => Some(match event {
                EngineEvent::MemoryFill { .. } => "fill",
                EngineEvent::Transfer { .. } => "transfer",
                EngineEvent::CommandList { .. } => "list",
            }),
            HistoryEvent::Draw { .. } => None,
        })
        .collect()
}

/// Writes at the end of frames 0 and 1.
fn frame_ends(rp: &mut Replay<Vec<u8>>) -> (u64, u64) {
    rp.seek(Target::Frame(0), &mut ());
    let f0 = rp.position().writes;
    rp.seek(Target::Frame(1), &mut ());
    (f0, rp.position().writes)
}

#[test]
fn the_fixture_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(STEREO_FIXTURE);
    let bytes = stereo_lookback(true).unwrap();
    let kept = std::fs::read(&path).unwrap_or_default();
    if kept != bytes {
        if std::env::var_os("PICAVIEW_BLESS").is_some() {
            std::fs::write(&path, &bytes).unwrap();
        } else {
            panic!(
                "{} is out of date: run with PICAVIEW_BLESS=1",
                path.display()
            );
        }
    }
}

#[test]
fn each_eye_follows_its_own_transfer_and_draw() {
    let bytes = stereo_lookback(true).unwrap();
    let mut rp = replay(&bytes);
    let (f0_end, _) = frame_ends(&mut rp);
    // Left eye (100, 20): colour buffer L, red draw 0 over the blue clear.
    let l = pixel_history(&mut rp, &req(0, HistoryTarget::Top, 100, 20)).unwrap();
    let lt = l.mapping.transfer.unwrap();
    assert_eq!((lt.eye, lt.frame, lt.ordinal), (Eye::Left, 0, 2));
    assert_eq!(l.frame, 0);
    assert_eq!(draws(&l), vec![(0, vec![Some(FragmentFate::Passed)])]);
    assert_eq!(engine_kinds(&l), vec!["fill"]);
    // VRAM starts zeroed.
    assert_eq!(l.before.color, Some([0, 0, 0, 0]));
    assert_eq!(l.after.color, Some([255, 0, 0, 255]));
    assert!(
        l.mapping.description.starts_with("top screen (100,20) -> ")
            && l.mapping.description.contains(
                "displayed at the end of frame 0, rendered and transferred in the same frame by display transfer #2 at command"
            ),
        "{}",
        l.mapping.description
    );
    // Right eye (100, 20): colour buffer R, green draw 1 over the black clear.
    let r = pixel_history(&mut rp, &req(0, HistoryTarget::TopRight, 100, 20)).unwrap();
    let rt = r.mapping.transfer.unwrap();
    assert_eq!((rt.eye, rt.frame, rt.ordinal), (Eye::Right, 0, 3));
    assert_ne!(r.mapping.buffer, l.mapping.buffer);
    assert_ne!(rt.framebuffer_addr, lt.framebuffer_addr);
    assert_eq!(draws(&r), vec![(1, vec![Some(FragmentFate::Passed)])]);
    assert_eq!(r.after.color, Some([0, 255, 0, 255]));
    assert!(
        r.mapping
            .description
            .starts_with("top screen (right eye) (100,20) -> "),
        "{}",
        r.mapping.description
    );
    // The range ends at the transfer (the frame's last writes are the buffer swap).
    assert_eq!(r.end.writes, rt.at_write);
    assert!(rt.at_write > lt.at_write && rt.at_write < f0_end);
    // (20, 20): the right triangle starts at x = 40, so the right eye shows R's clear only.
    let r = pixel_history(&mut rp, &req(0, HistoryTarget::TopRight, 20, 20)).unwrap();
    assert!(draws(&r).is_empty(), "{:?}", r.events);
    assert_eq!(engine_kinds(&r), vec!["fill"]);
    assert_eq!(r.after.color, Some([0, 0, 0, 255]));
    // The same pixel in R's own coordinates (R is the render target at the end of frame 0)
    // gives the same events.
    let direct = pixel_history(
        &mut rp,
        &req(0, HistoryTarget::Color, r.mapping.x, r.mapping.row),
    )
    .unwrap();
    assert_eq!(direct.mapping.buffer, r.mapping.buffer);
    assert_eq!(direct.events, r.events);
}

#[test]
fn screen_picks_name_each_eyes_draw() {
    let bytes = stereo_lookback(true).unwrap();
    let mut rp = replay(&bytes);
    let (f0_end, f1_end) = frame_ends(&mut rp);
    for at in [f0_end, f1_end] {
        let l = identify_screen_pixel(&mut rp, HistoryTarget::Top, 100, 20, at).unwrap();
        let r = identify_screen_pixel(&mut rp, HistoryTarget::TopRight, 100, 20, at).unwrap();
        // Frame 1 presents nothing: both picks go back to frame 0's transfers.
        assert_eq!((l.frame, r.frame), (0, 0));
        assert_eq!(l.primitive.map(|p| p.draw), Some(0), "at {at}");
        assert_eq!(r.primitive.map(|p| p.draw), Some(1), "at {at}");
        assert_eq!(r.mapping.transfer.unwrap().eye, Eye::Right);
        let r = identify_screen_pixel(&mut rp, HistoryTarget::TopRight, 20, 20, at).unwrap();
        assert_eq!(r.primitive, None, "cleared only");
        assert!(r.recorded);
    }
}

#[test]
fn a_frame_that_presents_nothing_shows_the_previous_frames_transfer() {
    let bytes = stereo_lookback(true).unwrap();
    let mut rp = replay(&bytes);
    let (f0_end, f1_end) = frame_ends(&mut rp);
    // Frame 1 draws yellow over all of L but presents nothing: the screen still shows frame 0.
    let h = pixel_history(&mut rp, &req(1, HistoryTarget::Top, 100, 20)).unwrap();
    let t = h.mapping.transfer.unwrap();
    assert_eq!((t.frame, t.ordinal, t.eye), (0, 2, Eye::Left));
    assert_eq!(h.frame, 0);
    assert_eq!(h.request.frame, 1);
    assert_eq!(draws(&h), vec![(0, vec![Some(FragmentFate::Passed)])]);
    // in_frame counts from the start of frame 0.
    assert!(matches!(
        h.events[1],
        HistoryEvent::Draw { in_frame: 0, .. }
    ));
    assert_eq!(h.after.color, Some([255, 0, 0, 255]));
    assert_eq!(h.start.writes, 0);
    assert_eq!(h.end.writes, t.at_write);
    let want = format!(
        "displayed at the end of frame 1, rendered and transferred in frame 0 by display transfer #2 at command {}: the history covers frame 0 up to that transfer",
        t.at_write
    );
    assert!(
        h.mapping.description.ends_with(&want),
        "{}",
        h.mapping.description
    );
    // The colour buffer itself in frame 1 has the yellow draw 2, which the screen never shows.
    let c = pixel_history(
        &mut rp,
        &req(1, HistoryTarget::Color, h.mapping.x, h.mapping.row),
    )
    .unwrap();
    assert_eq!(c.frame, 1);
    assert_eq!(draws(&c), vec![(2, vec![Some(FragmentFate::Passed)])]);
    assert_eq!(c.after.color, Some([255, 255, 0, 255]));
    // Right eye, frame 1: frame 0's transfer #3 and draw 1.
    let r = pixel_history(&mut rp, &req(1, HistoryTarget::TopRight, 100, 20)).unwrap();
    let rt = r.mapping.transfer.unwrap();
    assert_eq!((rt.frame, rt.ordinal, rt.eye), (0, 3, Eye::Right));
    assert_eq!(draws(&r), vec![(1, vec![Some(FragmentFate::Passed)])]);
    // `after_draw` of frame 1 is checked but the history is frame 0's up to the transfer.
    let a = pixel_history(
        &mut rp,
        &HistoryRequest {
            after_draw: Some(0),
            ..req(1, HistoryTarget::Top, 100, 20)
        },
    )
    .unwrap();
    assert_eq!(a.events, h.events);
    assert!(
        pixel_history(
            &mut rp,
            &HistoryRequest {
                after_draw: Some(1),
                ..req(1, HistoryTarget::Top, 100, 20)
            },
        )
        .is_err()
    );
    // As the viewer asks (up to a command of frame 1): the same transfer.
    let v = pixel_history(
        &mut rp,
        &HistoryRequest {
            until_write: Some(f1_end),
            ..req(1, HistoryTarget::Top, 100, 20)
        },
    )
    .unwrap();
    assert_eq!(v.events, h.events);
    assert!(
        v.mapping
            .description
            .contains(&format!("displayed at command {f1_end} of frame 1")),
        "{}",
        v.mapping.description
    );
    // Up to a command of frame 0 before its transfers: the screen shows a framebuffer no
    // transfer wrote.
    let e = pixel_history(
        &mut rp,
        &HistoryRequest {
            until_write: Some(5),
            ..req(0, HistoryTarget::Top, 100, 20)
        },
    )
    .unwrap_err();
    assert!(matches!(e, HistoryError::Unmappable(_)), "{e}");
    assert!(f0_end < f1_end);
}

#[test]
fn with_3d_off_the_right_eye_sees_the_left_framebuffer() {
    let bytes = stereo_lookback(false).unwrap();
    let mut rp = replay(&bytes);
    // With 3D off both presents go to framebuffer A; R's transfer (#3) is the last one.
    let l = pixel_history(&mut rp, &req(0, HistoryTarget::Top, 100, 20)).unwrap();
    let r = pixel_history(&mut rp, &req(0, HistoryTarget::TopRight, 100, 20)).unwrap();
    let (lt, rt) = (l.mapping.transfer.unwrap(), r.mapping.transfer.unwrap());
    assert_eq!(lt.framebuffer_addr, rt.framebuffer_addr);
    assert_eq!((lt.ordinal, rt.ordinal), (3, 3));
    assert_eq!(rt.eye, Eye::Right);
    assert_eq!(l.events, r.events);
    assert_eq!(draws(&r), vec![(1, vec![Some(FragmentFate::Passed)])]);
}

#[test]
fn the_look_back_is_bounded() {
    // Frame 0 presents; frames 1..=MAX_FRAMES_BACK + 1 present nothing.
    let mut scene = Scene::new().unwrap();
    let target = scene.top_target().unwrap();
    scene.clear(&target, [0, 0, 255, 255], 0);
    scene.present(&target, Screen::Top);
    scene.end_frame();
    for _ in 0..=MAX_FRAMES_BACK {
        scene.end_frame();
    }
    let bytes = scene.finish().unwrap();
    let mut rp = replay(&bytes);
    let last_ok = MAX_FRAMES_BACK;
    let h = pixel_history(&mut rp, &req(last_ok, HistoryTarget::Top, 5, 5)).unwrap();
    assert_eq!(h.frame, 0);
    assert_eq!(h.mapping.buffer, ProbeBuffer::Color(target.color_pa));
    assert_eq!(engine_kinds(&h), vec!["fill"]);
    assert_eq!(h.after.color, Some([0, 0, 255, 255]));
    let e = pixel_history(&mut rp, &req(last_ok + 1, HistoryTarget::Top, 5, 5)).unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with(&format!(
            "no display transfer in frames 1..={} wrote the top screen framebuffer pixel",
            last_ok + 1
        )),
        "{text}"
    );
    // Outside the screen, and the bottom screen that nothing was presented to: errors.
    assert!(pixel_history(&mut rp, &req(0, HistoryTarget::TopRight, 400, 0)).is_err());
    assert!(pixel_history(&mut rp, &req(0, HistoryTarget::Bottom, 5, 5)).is_err());
}
