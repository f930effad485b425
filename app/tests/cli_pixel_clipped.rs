//! `picaview pixel` on triangles that clipping removed (issue 15): the human report and JSON
//! Lines name them "clipped before raster" with the assembled triangle's index, for a triangle
//! that crosses the near plane (its clipped part) and one that lies entirely beyond it.

mod viewer_common;

use std::process::Command;

fn pixel(trace: &std::path::Path, x: u32, y: u32, json: bool) -> String {
    let (x, y) = (x.to_string(), y.to_string());
    let mut args = vec![
        "pixel".to_string(),
        trace.to_string_lossy().into_owned(),
        "--frame".into(),
        "0".into(),
        "--target".into(),
        "color".into(),
        "--x".into(),
        x,
        "--y".into(),
        y,
    ];
    if json {
        args.push("--json".into());
    }
    let o = Command::new(env!("CARGO_BIN_EXE_picaview"))
        .args(&args)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn clipped_triangles_are_reported_in_text_and_json() {
    let dir = viewer_common::temp_dir("cli-pixel-clipped");
    let path = dir.join("clip.ctf");
    std::fs::write(&path, viewer_common::make_clip_trace()).unwrap();

    // Image pixel (3, 6) = window (3, 57): in draw 0's clipped part and under draw 1.
    let t = pixel(&path, 3, 6, false);
    assert!(
        t.contains("draw 0 (draw 0 of the frame): 1 fragment(s)")
            && t.contains("draw 1 (draw 1 of the frame): 1 fragment(s)"),
        "{t}"
    );
    assert_eq!(
        t.matches(
            "assembled triangle 0 at window (3,57): clipped before raster (its projection covers the pixel)"
        )
        .count(),
        2,
        "{t}"
    );
    // Nothing was drawn there (the trace has no clear): the value is unchanged.
    let before_after = t.lines().nth(2).unwrap_or_default();
    let (before, after) = before_after.split_once("   after: ").unwrap();
    assert_eq!(before.trim_start_matches("colour before: "), after, "{t}");

    // Image pixel (3, 60) = window (3, 3): draw 0 draws it; draw 1 is clipped away there.
    let t = pixel(&path, 3, 60, false);
    assert!(t.contains("triangle 0 at window (3,3): passed"), "{t}");
    assert!(
        t.contains("assembled triangle 0 at window (3,3): clipped before raster"),
        "{t}"
    );

    // JSON Lines: the draw lines carry the fate and the triangle index.
    let j = pixel(&path, 3, 6, true);
    let draws: Vec<serde_json::Value> = j
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "draw")
        .collect();
    assert_eq!(draws.len(), 2, "{j}");
    for (k, d) in draws.iter().enumerate() {
        assert_eq!(d["draw"], k as u64);
        let f = &d["fragments"][0];
        assert_eq!(f["fate"], "ClippedAway", "{d}");
        assert_eq!(f["triangle"], 0);
        assert_eq!((f["x"].as_u64(), f["y"].as_u64()), (Some(3), Some(57)));
    }
    let _ = std::fs::remove_dir_all(&dir);
}
