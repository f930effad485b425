//! The replay subcommands as a user runs them: `render`, `trace info --json`, `trace check`,
//! `bench replay`, on the bundled demo trace.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn demo(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picaview-cli-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn render_writes_upright_screens_and_buffers() {
    let dir = out_dir("render");
    for (target, w, h) in [("top", 400, 240), ("bottom", 320, 240)] {
        let out = dir.join(format!("{target}.png"));
        let st = bin()
            .args([
                "render",
                demo("cube.ctf").to_str().unwrap(),
                "--frame",
                "2",
                "--target",
                target,
                "-o",
            ])
            .arg(&out)
            .status()
            .unwrap();
        assert!(st.success());
        let img = image::open(&out).unwrap();
        assert_eq!((img.width(), img.height()), (w, h));
    }
    // The same frame as the golden image the tests crate keeps.
    let out = dir.join("after.png");
    let st = bin()
        .args([
            "render",
            demo("cube.ctf").to_str().unwrap(),
            "--frame",
            "1",
            "--after-draw",
            "0",
            "--target",
            "color",
            "-o",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let golden = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/goldens");
    let name = std::fs::read_dir(&golden)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .find(|n| n.starts_with("demo_cube_after_draw"))
        .unwrap();
    let a = image::open(&out).unwrap().to_rgba8();
    let g = image::open(golden.join(name)).unwrap().to_rgba8();
    assert_eq!(a, g);
}

#[test]
fn render_rejects_missing_frames_and_bad_files() {
    let dir = out_dir("errors");
    let out = dir.join("x.png");
    let o = bin()
        .args([
            "render",
            demo("cube.ctf").to_str().unwrap(),
            "--frame",
            "99",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("frame marker"));
    let o = bin()
        .args(["render", "Cargo.toml", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad magic"));
}

#[test]
fn all_frames_writes_one_png_per_marker() {
    let dir = out_dir("all");
    let st = bin()
        .args([
            "render",
            demo("geoshader.ctf").to_str().unwrap(),
            "--all-frames",
            "-o",
        ])
        .arg(&dir)
        .status()
        .unwrap();
    assert!(st.success());
    let n = std::fs::read_dir(&dir).unwrap().count();
    assert_eq!(n, 4);
}

#[test]
fn trace_info_json_lists_frames_and_draws() {
    let o = bin()
        .args([
            "trace",
            "info",
            demo("geoshader.ctf").to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let frames = v["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 4);
    let d = &frames[0]["draws"][1];
    assert_eq!(d["topology"], "Geometry");
    assert_eq!(d["vertex_count"], 240);
    assert!(d["geometry_shader"]["hash"].is_string());
    assert_eq!(d["textures"][0]["width"], 32);
}

#[test]
fn trace_check_and_bench_replay_run() {
    let o = bin()
        .args([
            "trace",
            "check",
            demo("stress.ctf").to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["draws"], 936);
    assert_eq!(v["issues"].as_array().unwrap().len(), 0);
    let o = bin()
        .args([
            "bench",
            "replay",
            demo("geoshader.ctf").to_str().unwrap(),
            "--runs",
            "1",
            "--seeks",
            "3",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("frames/s") && text.contains("seek to a draw"),
        "{text}"
    );
    assert!(
        text.contains("pixel kernels: avx2\n") || text.contains("pixel kernels: portable\n"),
        "{text}"
    );
    // The variable keeps the portable kernels.
    let o = bin()
        .env("PICAVIEW_SIMD", "portable")
        .args(["bench", "replay", demo("geoshader.ctf").to_str().unwrap()])
        .args(["--runs", "1", "--seeks", "1"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("pixel kernels: portable\n"), "{text}");
    // With 2 threads, stress's small draws wait and are drawn in groups (draw/deferred.rs).
    let o = bin()
        .args(["bench", "replay", demo("stress.ctf").to_str().unwrap()])
        .args(["--runs", "1", "--seeks", "1", "--threads", "2"])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let (line, waited) = report_count(&text, "cross-draw groups:");
    assert!(waited > 500 && line.contains("of 936 draws"), "{line}");
    // Those groups are drawn by shares, most of them launched on the pool; the line says
    // how the replay thread's time divides (numbers vary, the form does not).
    let (line, groups) = report_count(&text, "pixel shares:");
    assert!(groups > 0, "{line}");
    for part in [
        "drawn while the replay went on",
        "on the pool",
        "waiting for the pool",
        "other work",
    ] {
        assert!(line.contains(part), "{line}");
    }
}

/// The line of a `bench replay` report that contains `label` (two words, as in
/// "cross-draw groups:"), and the count that follows the label.
fn report_count<'t>(text: &'t str, label: &str) -> (&'t str, u64) {
    let line = text
        .lines()
        .find(|l| l.contains(label))
        .unwrap_or_else(|| panic!("{text}"));
    let count = line
        .split_whitespace()
        .nth(2)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("{line}"));
    (line, count)
}

/// `bench replay --max-seconds`: once the timed replays (or the seeks) have used the allowance,
/// no further one starts and the report says how many ran (an allowance of a microsecond is
/// used up by the first run and the first seek).
#[test]
fn bench_replay_stops_timing_past_its_allowance() {
    let o = bin()
        .args([
            "bench",
            "replay",
            demo("cube.ctf").to_str().unwrap(),
            "--runs",
            "3",
            "--seeks",
            "5",
            "--threads",
            "2",
            "--max-seconds",
            "0.000001",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("(best of 1)"), "{text}");
    assert!(text.contains("timed runs stopped after 1 of 3"), "{text}");
    assert!(text.contains("stages: not timed"), "{text}");
    assert!(
        text.contains("over 1 seeks (stopped after 1 of 5: past --max-seconds"),
        "{text}"
    );
    // 0 = no limit: every run and seek.
    let o = bin()
        .args([
            "bench",
            "replay",
            demo("cube.ctf").to_str().unwrap(),
            "--runs",
            "2",
            "--seeks",
            "3",
            "--max-seconds",
            "0",
        ])
        .output()
        .unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("(best of 2)") && text.contains("over 3 seeks\n"),
        "{text}"
    );
    assert!(
        !text.contains("stopped") && text.contains("stages (share"),
        "{text}"
    );
}

/// The pixel kernels' AVX2 copies (chosen at run time where the CPU has AVX2) and the portable
/// ones (`PICAVIEW_SIMD=portable`) give the same bytes: every frame of every demo, colour and
/// depth buffers and the top screen, at 1 and 2 threads. (On a CPU without AVX2 both runs take
/// the portable kernels and the test still checks that the variable changes nothing else.)
#[test]
fn portable_and_avx2_kernels_render_the_same_bytes() {
    let dir = out_dir("simd");
    for trace in ["cube.ctf", "fog_blend.ctf", "geoshader.ctf", "stress.ctf"] {
        for target in ["top", "color", "depth"] {
            for threads in ["1", "2"] {
                let mut files = Vec::new();
                for simd in ["portable", "auto"] {
                    let out = dir.join(format!("{trace}-{target}-{threads}-{simd}"));
                    std::fs::create_dir_all(&out).unwrap();
                    let mut cmd = bin();
                    if simd == "portable" {
                        cmd.env("PICAVIEW_SIMD", "portable");
                    } else {
                        cmd.env_remove("PICAVIEW_SIMD");
                    }
                    let st = cmd
                        .args(["render", demo(trace).to_str().unwrap(), "--all-frames"])
                        .args(["--target", target, "--threads", threads, "-o"])
                        .arg(&out)
                        .status()
                        .unwrap();
                    assert!(st.success(), "{trace} {target} {threads} {simd}");
                    let mut names: Vec<_> = std::fs::read_dir(&out)
                        .unwrap()
                        .map(|e| e.unwrap().path())
                        .collect();
                    names.sort();
                    let bytes: Vec<_> = names.iter().map(|p| std::fs::read(p).unwrap()).collect();
                    files.push(bytes);
                }
                assert!(!files[0].is_empty(), "{trace}: no frames written");
                assert!(
                    files[0] == files[1],
                    "{trace} {target} at {threads} thread(s): portable and AVX2 kernels differ"
                );
            }
        }
    }
}
