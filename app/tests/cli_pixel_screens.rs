//! `picaview pixel` on screens, as a user runs it: the right eye of a stereoscopic top screen
//! (`--target top-right`) and a frame whose screen shows what an earlier frame transferred.
//! The trace is `tests/fixtures/screens/stereo_lookback.ctf` (built by
//! `picaview_tests::screen_scenes::stereo_lookback`, see its doc): frame 0 renders red draw 0
//! into the left eye's buffer and green draw 1 into the right eye's and transfers both (#2,
//! #3); frame 1 draws yellow draw 2 into the left buffer and presents nothing.

use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/screens/stereo_lookback.ctf")
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
        .args(args)
        .output()
        .unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn json_lines(o: &Output) -> Vec<serde_json::Value> {
    assert!(o.status.success(), "{}", text(&o.stderr));
    text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

fn draws(lines: &[serde_json::Value]) -> Vec<u64> {
    lines
        .iter()
        .filter(|l| l["type"] == "draw")
        .map(|l| l["draw"].as_u64().unwrap())
        .collect()
}

#[test]
fn an_image_transferred_in_an_earlier_frame_reports_that_frames_history() {
    let trace = fixture();
    let args = [
        "pixel", &trace, "--frame", "1", "--target", "top", "--x", "100", "--y", "20",
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    assert!(
        t.starts_with("pixel history of frame 1\ntop screen (100,20) -> "),
        "{t}"
    );
    assert!(
        t.contains(
            "displayed at the end of frame 1, rendered and transferred in frame 0 by display transfer #2 at command "
        ),
        "{t}"
    );
    assert!(
        t.contains(
            "events of frame 0 (where the displayed image was rendered), up to its display transfer"
        ),
        "{t}"
    );
    assert!(
        t.contains("draw 0 (draw 0 of frame 0): 1 fragment(s)"),
        "{t}"
    );
    assert!(
        !t.contains("draw 2"),
        "frame 1's draw is not on screen: {t}"
    );
    assert!(
        t.contains("colour before: rgba(0,0,0,0)   after: rgba(255,0,0,255)"),
        "{t}"
    );

    let mut jargs = args.to_vec();
    jargs.push("--json");
    let lines = json_lines(&run(&jargs));
    let m = &lines[0];
    assert_eq!(m["type"], "mapping");
    assert_eq!(m["request"]["frame"], 1);
    assert_eq!(m["frame"], 0);
    assert_eq!(m["mapping"]["transfer"]["frame"], 0);
    assert_eq!(m["mapping"]["transfer"]["ordinal"], 2);
    assert_eq!(m["mapping"]["transfer"]["eye"], "Left");
    assert_eq!(m["end"]["writes"], m["mapping"]["transfer"]["at_write"]);
    assert_eq!(draws(&lines), vec![0]);
}

#[test]
fn the_right_eye_follows_framebuffer_b() {
    let trace = fixture();
    for frame in ["0", "1"] {
        let args = [
            "pixel",
            &trace,
            "--frame",
            frame,
            "--target",
            "top-right",
            "--x",
            "100",
            "--y",
            "20",
            "--json",
        ];
        let lines = json_lines(&run(&args));
        let m = &lines[0];
        assert_eq!(m["request"]["target"], "TopRight");
        assert_eq!(m["frame"], 0);
        assert_eq!(m["mapping"]["transfer"]["eye"], "Right");
        assert_eq!(m["mapping"]["transfer"]["ordinal"], 3);
        assert_eq!(draws(&lines), vec![1], "frame {frame}");
        let summary = lines.last().unwrap();
        assert_eq!(
            summary["after"]["color"],
            serde_json::json!([0, 255, 0, 255])
        );
    }
    let o = run(&[
        "pixel",
        &trace,
        "--target",
        "top-right",
        "--x",
        "100",
        "--y",
        "20",
    ]);
    let t = text(&o.stdout);
    assert!(
        t.contains("top screen (right eye) (100,20) -> framebuffer 0x"),
        "{t}"
    );
    assert!(
        t.contains("draw 1 (draw 1 of the frame): 1 fragment(s)"),
        "{t}"
    );
    // Help names the choice; a bad pixel is an error, not a panic.
    let help = text(&run(&["pixel", "--help"]).stdout);
    assert!(help.contains("top-right"), "{help}");
    let o = run(&[
        "pixel",
        &trace,
        "--target",
        "top-right",
        "--x",
        "400",
        "--y",
        "0",
    ]);
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(e.contains("outside the top screen (right eye)"), "{e}");
    assert!(!e.contains("panicked"), "{e}");
}
