//! `picaview pixel` as a user runs it on the bundled demo traces: the human report, JSON Lines,
//! agreement with the rendered screen, and errors.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn demo(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn top_screen_pixel_report_matches_the_rendered_screen() {
    let trace = demo("fog_blend.ctf");
    let args = [
        "pixel", &trace, "--frame", "1", "--target", "top", "--x", "200", "--y", "150",
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    assert!(t.starts_with("pixel history of frame 1\n"), "{t}");
    assert!(
        t.contains("top screen (200,150) -> framebuffer 0x")
            && t.contains("via display transfer #"),
        "{t}"
    );
    assert!(t.contains("memory fill (unit"), "the clear is listed: {t}");
    assert!(t.contains(": passed"), "{t}");
    assert!(t.contains("tev 0: rgb in"), "{t}");
    assert!(t.contains("fog: factor"), "fog_blend uses fog: {t}");
    assert!(t.contains("blend: src"), "{t}");

    // JSON Lines: mapping first, summary last, one draw object per draw.
    let mut jargs = args.to_vec();
    jargs.push("--json");
    let o = run(&jargs);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    assert_eq!(lines[0]["type"], "mapping");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "summary");
    let draws = lines.iter().filter(|l| l["type"] == "draw").count();
    assert!(draws >= 1);
    assert_eq!(last["events"].as_u64().unwrap() as usize, lines.len() - 2);
    let after: Vec<u8> = last["after"]["color"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u8)
        .collect();

    // The colour after the frame is what the top screen shows there (RGB).
    let dir = std::env::temp_dir().join(format!("picaview-cli-pixel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("top.png");
    let st = bin()
        .args(["render", &trace, "--frame", "1", "--target", "top", "-o"])
        .arg(&png)
        .status()
        .unwrap();
    assert!(st.success());
    let img = image::open(&png).unwrap().to_rgba8();
    let p = img.get_pixel(200, 150).0;
    assert_eq!(&p[..3], &after[..3], "history end value vs the screen");
}

#[test]
fn depth_target_and_after_draw() {
    let trace = demo("cube.ctf");
    let o = run(&[
        "pixel",
        &trace,
        "--frame",
        "1",
        "--after-draw",
        "0",
        "--target",
        "depth",
        "--x",
        "120",
        "--y",
        "200",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let t = text(&o.stdout);
    assert!(t.contains("up to draw 0 of the frame"), "{t}");
    assert!(t.contains("depth buffer 0x"), "{t}");
    assert!(t.contains("depth/stencil before: "), "{t}");
}

#[test]
fn bad_coordinates_and_frames_are_one_line_errors() {
    let trace = demo("cube.ctf");
    for args in [
        vec!["pixel", &trace, "--target", "top", "--x", "400", "--y", "0"],
        vec!["pixel", &trace, "--frame", "99", "--x", "0", "--y", "0"],
        vec![
            "pixel",
            &trace,
            "--frame",
            "1",
            "--after-draw",
            "9999",
            "--x",
            "0",
            "--y",
            "0",
        ],
    ] {
        let o = run(&args);
        assert!(!o.status.success(), "{args:?}");
        let e = text(&o.stderr);
        assert_eq!(e.trim_end().lines().count(), 1, "{args:?}: {e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    let json = [
        "pixel", &trace, "--frame", "99", "--x", "0", "--y", "0", "--json",
    ];
    let o = run(&json);
    assert!(!o.status.success());
    let v: serde_json::Value = serde_json::from_str(text(&o.stderr).trim()).expect("JSON error");
    assert!(v.is_object());
}
