//! `picaview diff`, `picaview compare` and `render --citra-swrast` as a user runs them, on the
//! bundled demo traces: exit statuses (0 same / match, 1 different / mismatch, 2 error), the
//! golden directory layout `--update` writes, tolerance, difference images, JSON.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn demo(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picaview-cmp-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn diff_exit_status_and_json() {
    let cube = demo("cube.ctf");
    let fog = demo("fog_blend.ctf");
    // Same trace, fast vs reference engine: identical, status 0.
    let o = run(&[
        "diff",
        s(&cube),
        s(&cube),
        "--engine-a",
        "reference",
        "--engine-b",
        "fast",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("no difference: 66 draw(s)"), "{text}");
    // Different traces: status 1, JSON names the first draw.
    let o = run(&["diff", s(&cube), s(&fog), "--json"]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["same"], false);
    assert_eq!(v["result"], "different");
    assert_eq!(v["draw"], 0);
    assert!(
        v["summary"]
            .as_str()
            .unwrap()
            .starts_with("first difference: frame 0 draw 0")
    );
    // Citra software-renderer sampling changes the textured cube.
    let o = run(&[
        "diff",
        s(&cube),
        s(&cube),
        "--textures-b",
        "citra-swrast",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["config_b"]["render_mode"], "CitraSwrast");
    assert!(v["color"]["differing"].as_u64().unwrap() > 0);
    // Errors: status 2, also for JSON.
    let o = run(&["diff", s(&cube), "/nonexistent/x.ctf"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["diff", s(&cube), "/nonexistent/x.ctf", "--json"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["diff", s(&cube)]);
    assert_eq!(o.status.code(), Some(2), "usage error");
}

#[test]
fn compare_update_pass_tolerance_and_fail() {
    let dir = out_dir("golden");
    let golden = dir.join("golden");
    let diffs = dir.join("diffs");
    let cube = demo("cube.ctf");
    let fog = demo("fog_blend.ctf");
    // --update writes the layout GOLDEN/<stem>/frame_NNNN_<screen>.png.
    let o = run(&[
        "compare",
        s(&cube),
        s(&fog),
        "--golden",
        s(&golden),
        "--update",
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    for f in 0..6 {
        for screen in ["top", "bottom"] {
            let p = golden.join(format!("cube/frame_{f:04}_{screen}.png"));
            assert!(p.is_file(), "{}", p.display());
        }
    }
    assert!(golden.join("fog_blend/frame_0000_top.png").is_file());
    // Against themselves: all match, status 0; the report lists traces in the order given.
    let o = run(&["compare", s(&fog), s(&cube), "--golden", s(&golden)]);
    assert_eq!(o.status.code(), Some(0));
    let text = String::from_utf8_lossy(&o.stdout);
    let (i_fog, i_cube) = (
        text.find("fog_blend.ctf").unwrap(),
        text.find("cube.ctf").unwrap(),
    );
    assert!(i_fog < i_cube, "{text}");
    assert!(text.contains("all match"), "{text}");
    // One pixel off by 3 in one golden image: fails at tolerance 0 with a difference image,
    // passes at tolerance 3.
    let target = golden.join("cube/frame_0002_top.png");
    let mut img = image::open(&target).unwrap().to_rgba8();
    let p = img.get_pixel_mut(10, 20);
    p.0[0] = if p.0[0] >= 3 { p.0[0] - 3 } else { p.0[0] + 3 };
    img.save(&target).unwrap();
    let o = run(&[
        "compare",
        s(&cube),
        "--golden",
        s(&golden),
        "--write-diff",
        s(&diffs),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["mismatches"], 1);
    let bad: Vec<&serde_json::Value> = v["traces"][0]["images"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["status"] != "match")
        .collect();
    assert_eq!(bad.len(), 1);
    assert_eq!(bad[0]["name"], "frame_0002_top.png");
    assert_eq!(bad[0]["status"], "differ");
    assert_eq!(bad[0]["differing"], 1);
    assert_eq!(bad[0]["max_channel_diff"], 3);
    assert_eq!(bad[0]["first"], serde_json::json!([10, 20]));
    let diff_png = diffs.join("cube/frame_0002_top.diff.png");
    assert!(diff_png.is_file());
    let d = image::open(&diff_png).unwrap().to_rgba8();
    assert_eq!(d.get_pixel(10, 20).0[1], 0, "the differing pixel is red");
    assert!(d.get_pixel(10, 20).0[0] >= 128);
    let o = run(&[
        "compare",
        s(&cube),
        "--golden",
        s(&golden),
        "--tolerance",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0));
    // A missing golden file fails; a stray one of the naming pattern fails too.
    std::fs::remove_file(golden.join("cube/frame_0005_bottom.png")).unwrap();
    std::fs::copy(
        golden.join("cube/frame_0000_top.png"),
        golden.join("cube/frame_0009_top.png"),
    )
    .unwrap();
    let o = run(&[
        "compare",
        s(&cube),
        "--golden",
        s(&golden),
        "--tolerance",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("frame_0005_bottom.png: no golden file"),
        "{text}"
    );
    assert!(
        text.contains("frame_0009_top.png: golden file without a rendered frame"),
        "{text}"
    );
    // Errors: a missing golden directory without --update is status 2.
    let o = run(&["compare", s(&cube), "--golden", s(&dir.join("nope"))]);
    assert_eq!(o.status.code(), Some(2));
    // An unreadable trace is status 2; the other traces are still reported.
    let o = run(&[
        "compare",
        s(&fog),
        "/nonexistent/x.ctf",
        "--golden",
        s(&golden),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("fog_blend.ctf: 4 frame(s), ok"), "{text}");
    assert!(text.contains("x.ctf: ERROR"), "{text}");
}

#[test]
fn compare_citra_swrast_and_color_buffers() {
    let dir = out_dir("swrast");
    let golden = dir.join("golden");
    let cube = demo("cube.ctf");
    let o = run(&[
        "compare",
        s(&cube),
        "--golden",
        s(&golden),
        "--target",
        "all",
        "--update",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(golden.join("cube/frame_0000_color.png").is_file());
    // The hardware goldens do not match the Citra software-renderer sampling.
    let o = run(&[
        "compare",
        s(&cube),
        "--golden",
        s(&golden),
        "--target",
        "all",
        "--citra-swrast",
    ]);
    assert_eq!(o.status.code(), Some(1));
    // render --citra-swrast writes another image than the default.
    let a = dir.join("hw.png");
    let b = dir.join("citra.png");
    let st = bin()
        .args(["render", s(&cube), "--frame", "1", "-o", s(&a)])
        .status()
        .unwrap();
    assert!(st.success());
    let st = bin()
        .args([
            "render",
            s(&cube),
            "--frame",
            "1",
            "--citra-swrast",
            "-o",
            s(&b),
        ])
        .status()
        .unwrap();
    assert!(st.success());
    assert_ne!(
        image::open(&a).unwrap().to_rgba8().into_raw(),
        image::open(&b).unwrap().to_rgba8().into_raw()
    );
}
