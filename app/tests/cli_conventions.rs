//! The command line as people use it in shells and pipelines (ripgrep/fd/git conventions): a
//! closed pipe ends quietly, user errors are one human line without a backtrace (JSON with
//! `--json`), every subcommand's help has examples, `--version` and shell completions work.
//! Each test runs the built `picaview` binary.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_picaview"));
    c.env_remove("RUST_BACKTRACE")
        .env_remove("RUST_LIB_BACKTRACE");
    c
}

fn demo(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
}

fn shbin() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/shaders/craftus-world.shbin")
}

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picaview-conv-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `args`, closes the read end of stdout after `keep` bytes, and returns the status and
/// stderr.
fn run_into_closed_pipe(args: &[&str], keep: usize) -> (std::process::ExitStatus, String) {
    let mut child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; keep];
    stdout.read_exact(&mut buf).unwrap();
    drop(stdout);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    (child.wait().unwrap(), err)
}

#[test]
fn closed_pipe_ends_quietly_with_status_0() {
    let stress = demo("stress.ctf");
    let stress = stress.to_str().unwrap();
    // Each of these prints far more than a pipe buffer holds (64 KiB).
    for args in [
        vec!["trace", "dump", stress],
        vec!["trace", "dump", stress, "--json"],
        vec!["trace", "info", stress],
        vec!["trace", "info", stress, "--json"],
    ] {
        let (status, err) = run_into_closed_pipe(&args, 100);
        assert!(status.success(), "{args:?}: {status:?}, stderr: {err}");
        assert!(err.is_empty(), "{args:?} printed on stderr: {err}");
    }
}

/// Bad inputs of every kind: (name, path).
fn bad_inputs(dir: &Path) -> Vec<(&'static str, PathBuf)> {
    let empty = dir.join("empty.ctf");
    std::fs::write(&empty, b"").unwrap();
    let cube = std::fs::read(demo("cube.ctf")).unwrap();
    let truncated = dir.join("truncated.ctf");
    std::fs::write(&truncated, &cube[..0x30]).unwrap();
    let cut_stream = dir.join("cut.ctf");
    std::fs::write(&cut_stream, &cube[..cube.len() / 2]).unwrap();
    vec![
        ("missing", dir.join("does-not-exist.ctf")),
        ("directory", dir.to_path_buf()),
        ("empty", empty),
        ("truncated header", truncated),
        ("truncated stream", cut_stream),
        ("shader binary", shbin()),
        (
            "text",
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"),
        ),
    ]
}

/// Every trace subcommand on every bad input: status 1, one line on stderr that starts with
/// `error: `, names the file once, and has no Rust Debug text; never a backtrace, even with
/// RUST_BACKTRACE=1.
#[test]
fn bad_trace_files_give_one_human_line_and_no_backtrace() {
    let dir = scratch("bad");
    let out_png = dir.join("out.png");
    for (what, path) in bad_inputs(&dir) {
        let p = path.to_str().unwrap();
        let o = out_png.to_str().unwrap();
        for args in [
            vec!["trace", "info", p],
            vec!["trace", "dump", p],
            vec!["trace", "check", p],
            vec!["render", p, "-o", o],
            vec!["bench", "replay", p, "--runs", "1"],
        ] {
            let out = bin()
                .args(&args)
                .env("RUST_BACKTRACE", "1")
                .output()
                .unwrap();
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{what} {args:?}: {err}");
            assert_eq!(
                err.lines().count(),
                1,
                "{what} {args:?}: not one line:\n{err}"
            );
            assert!(err.starts_with("error: "), "{what} {args:?}: {err}");
            assert!(!err.contains("acktrace"), "{what} {args:?}: {err}");
            for debug in ["Some(", "None", " { ", "[0x", "Os {", "kind:"] {
                assert!(
                    !err.contains(debug),
                    "{what} {args:?}: Debug text {debug:?}: {err}"
                );
            }
            assert_eq!(
                err.matches(p).count(),
                1,
                "{what} {args:?}: the file is not named exactly once: {err}"
            );
        }
    }
}

#[test]
fn bad_files_say_what_they_are() {
    let dir = scratch("what");
    let msg = |path: &Path| {
        let out = run(&["trace", "info", path.to_str().unwrap()]);
        assert!(!out.status.success());
        text(&out.stderr)
    };
    let inputs: std::collections::HashMap<_, _> = bad_inputs(&dir).into_iter().collect();
    let m = msg(&inputs["missing"]);
    assert!(m.contains("no such file"), "{m}");
    let m = msg(&inputs["directory"]);
    assert!(m.contains("is a directory"), "{m}");
    let m = msg(&inputs["empty"]);
    assert!(m.contains("empty file"), "{m}");
    // Magic bytes in hex, with the offset in hex and what was expected.
    let m = msg(&inputs["shader binary"]);
    assert!(
        m.contains("44 56 4C 42") && m.contains("0x0") && m.contains("43 69 54 72"),
        "{m}"
    );
    assert!(m.contains("picaview disasm"), "{m}");
    let m = msg(&inputs["truncated header"]);
    assert!(m.contains("truncated CiTrace") && m.contains("0x30"), "{m}");
    let m = msg(&inputs["truncated stream"]);
    assert!(m.contains("corrupt CiTrace") && m.contains("0x"), "{m}");
    // A device (or a pipe from `<(...)`): the reader needs a seekable file.
    if cfg!(unix) {
        let m = msg(Path::new("/dev/null"));
        assert!(m.contains("is not a regular file"), "{m}");
    }
}

#[test]
fn json_errors_are_json_on_stderr() {
    let dir = scratch("json");
    let missing = dir.join("nope.ctf");
    let shader = shbin();
    for args in [
        vec!["trace", "info", missing.to_str().unwrap(), "--json"],
        vec!["trace", "dump", shader.to_str().unwrap(), "--json"],
        vec!["trace", "check", "--json", "--no-such-flag", "x.ctf"],
    ] {
        let out = run(&args);
        assert!(!out.status.success(), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
        let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap_or_else(|e| {
            panic!("{args:?}: stderr is not JSON ({e}): {}", text(&out.stderr))
        });
        assert!(v["error"].is_string(), "{args:?}: {v}");
    }
    let out = run(&["trace", "info", missing.to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["file"], missing.to_str().unwrap());
    let out = run(&["trace", "info", shbin().to_str().unwrap(), "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stderr).unwrap();
    assert_eq!(v["offset"], 0);
}

#[test]
fn every_subcommand_help_has_an_example() {
    for path in [
        &[][..],
        &["mem-map"],
        &["asm"],
        &["disasm"],
        &["shader"],
        &["shader", "run"],
        &["bench"],
        &["bench", "shader"],
        &["bench", "replay"],
        &["cmdlist"],
        &["trace"],
        &["trace", "info"],
        &["trace", "dump"],
        &["trace", "check"],
        &["render"],
        &["completions"],
    ] {
        let mut args: Vec<&str> = path.to_vec();
        args.push("--help");
        let out = run(&args);
        assert!(out.status.success(), "{args:?}");
        let help = text(&out.stdout);
        assert!(help.contains("Examples:"), "{args:?}:\n{help}");
        let example = help.split("Examples:").nth(1).unwrap_or_default();
        let cmd = format!("picaview {}", path.join(" "));
        assert!(example.contains(cmd.trim_end()), "{args:?}:\n{help}");
    }
}

#[test]
fn version_and_completions() {
    let out = run(&["--version"]);
    assert!(out.status.success());
    assert_eq!(
        text(&out.stdout).trim(),
        format!("picaview {}", env!("CARGO_PKG_VERSION"))
    );
    for shell in ["bash", "zsh", "fish"] {
        let out = run(&["completions", shell]);
        assert!(out.status.success(), "{shell}: {}", text(&out.stderr));
        let script = text(&out.stdout);
        for word in ["picaview", "render", "trace", "--all-frames"] {
            assert!(script.contains(word), "{shell} script lacks {word}");
        }
    }
    let out = run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn trace_info_lists_every_draw_and_limit_cuts() {
    let stress = demo("stress.ctf");
    let out = run(&["trace", "info", stress.to_str().unwrap()]);
    assert!(out.status.success());
    let listed = |s: &str| s.lines().filter(|l| l.starts_with("    draw ")).count();
    let all = text(&out.stdout);
    assert_eq!(listed(&all), 936, "every draw of stress.ctf is listed");
    assert!(all.contains("    draw 935 "), "the last draw is listed");
    assert!(!all.contains("more draws"), "nothing is cut");

    let out = run(&["trace", "info", stress.to_str().unwrap(), "--limit", "10"]);
    assert!(out.status.success());
    let some = text(&out.stdout);
    assert_eq!(listed(&some), 10);
    assert!(some.contains("926 more draws not listed"), "{some}");
    assert!(some.contains("936 draws"), "the counts stay complete");

    let out = run(&["trace", "info", stress.to_str().unwrap(), "--json"]);
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n: usize = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["draws"].as_array().unwrap().len())
        .sum();
    assert_eq!(n, 936);
    assert_eq!(v["draws"], 936);
    let out = run(&[
        "trace",
        "info",
        stress.to_str().unwrap(),
        "--json",
        "--limit",
        "5",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let n: usize = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["draws"].as_array().unwrap().len())
        .sum();
    assert_eq!((n, v["draws_listed"].as_u64()), (5, Some(5)));
}

#[test]
fn render_depth_uses_the_full_grey_range() {
    let dir = scratch("depth");
    let out = dir.join("depth.png");
    // The stress demo draws within the nearest 5% of the depth range: without stretching, the
    // image would be grey levels 0..10.
    let o = bin()
        .args([
            "render",
            demo("stress.ctf").to_str().unwrap(),
            "--frame",
            "1",
        ])
        .args(["--target", "depth", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let img = image::open(&out).unwrap().to_luma8();
    let (lo, hi) = img
        .pixels()
        .fold((255u8, 0u8), |(lo, hi), p| (lo.min(p[0]), hi.max(p[0])));
    assert_eq!(
        (lo, hi),
        (0, 255),
        "depth present stretched to black..white"
    );
    assert!(text(&o.stderr).contains("shown black..white"));

    // A fixed range: 0.02..1 leaves the geometry (depth 0.036..0.042) in the darkest greys.
    let o = bin()
        .args([
            "render",
            demo("stress.ctf").to_str().unwrap(),
            "--frame",
            "1",
        ])
        .args(["--target", "depth", "--depth-range", "0.02..1", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let fixed = image::open(&out).unwrap().to_luma8();
    let fixed_hi = fixed.pixels().map(|p| p[0]).max().unwrap_or(0);
    assert!((1..16).contains(&fixed_hi), "{fixed_hi}");
    assert!(text(&o.stderr).contains("0.020000..1.000000 (given"));

    let o = run(&[
        "render",
        "x.ctf",
        "--target",
        "depth",
        "--depth-range",
        "1..0",
        "-o",
        "x.png",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("0 <= A < B <= 1"));
}

#[test]
fn all_frames_to_a_png_name_writes_numbered_files() {
    let dir = scratch("frames");
    let out = dir.join("out.png");
    let o = bin()
        .args([
            "render",
            demo("geoshader.ctf").to_str().unwrap(),
            "--all-frames",
            "-o",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(!out.exists(), "no file or directory named out.png");
    for f in 0..4 {
        let p = dir.join(format!("out_{f:04}.png"));
        let img = image::open(&p).unwrap();
        assert_eq!((img.width(), img.height()), (400, 240));
    }
    // -o naming an existing file that is not a directory, without .png: an error, not a mess.
    let file = dir.join("plain");
    std::fs::write(&file, b"x").unwrap();
    let o = bin()
        .args([
            "render",
            demo("geoshader.ctf").to_str().unwrap(),
            "--all-frames",
            "-o",
        ])
        .arg(&file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("not a directory"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn render_frame_out_of_range_names_the_frames() {
    let o = run(&[
        "render",
        demo("cube.ctf").to_str().unwrap(),
        "--frame",
        "99",
        "-o",
        "unused.png",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("frame 99") && err.contains("--frame 0..5") && !err.contains("Frame(99)"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1);
}

#[test]
fn render_output_is_checked_before_the_replay() {
    let dir = scratch("output");
    let cube = demo("cube.ctf");
    let cube = cube.to_str().unwrap();
    let missing_dir = dir.join("no-such-dir/x.png");
    for (out, expect) in [
        (dir.join("x.jpg"), "PNG images only"),
        (missing_dir.clone(), "does not exist"),
        (dir.clone(), "is a directory"),
    ] {
        let o = run(&["render", cube, "-o", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{out:?}");
        let err = text(&o.stderr);
        assert!(err.contains(expect), "{out:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
    assert!(!dir.join("x.jpg").exists());
    // Checked first: a wrong output name is reported even when the trace is also missing.
    let o = run(&["render", "missing.ctf", "-o", "x.jpg"]);
    assert!(text(&o.stderr).contains("PNG images only"));
}

#[test]
fn render_to_stdout_with_dash() {
    let o = run(&[
        "render",
        demo("cube.ctf").to_str().unwrap(),
        "--frame",
        "2",
        "-o",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let img = image::load_from_memory(&o.stdout).unwrap();
    assert_eq!((img.width(), img.height()), (400, 240));
    assert!(!Path::new("-").exists(), "no file named '-'");
    let o = run(&[
        "render",
        demo("cube.ctf").to_str().unwrap(),
        "--all-frames",
        "-o",
        "-",
    ]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn render_after_draw_out_of_range_names_the_valid_draws() {
    let o = run(&[
        "render",
        demo("cube.ctf").to_str().unwrap(),
        "--frame",
        "1",
        "--after-draw",
        "99",
        "-o",
        "unused.png",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains("draw 99 of frame 1") && err.contains("--after-draw 0..10"),
        "{err}"
    );
}

#[test]
fn viewer_reports_bad_files_and_no_display_on_the_command_line() {
    let viewer = |args: &[&str]| {
        bin()
            .args(args)
            .env_remove("DISPLAY")
            .env_remove("WAYLAND_DISPLAY")
            .env_remove("WAYLAND_SOCKET")
            .output()
            .unwrap()
    };
    let o = viewer(&["no-such-trace.ctf"]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("no-such-trace.ctf: no such file"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let o = viewer(&[demo("cube.ctf").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("needs an X11 or Wayland display"), "{err}");
    assert!(!err.contains(".rs:"), "no source paths: {err}");
}

#[test]
fn render_without_a_configured_screen_names_the_file_and_frame() {
    use pica_cmd::citrace::{CiTraceBuilder, InitialState};
    let dir = scratch("noscreen");
    let trace = dir.join("blank.ctf");
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    b.frame_marker();
    std::fs::write(&trace, b.build().unwrap()).unwrap();
    let o = run(&[
        "render",
        trace.to_str().unwrap(),
        "-o",
        dir.join("x.png").to_str().unwrap(),
    ]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("blank.ctf: no image at frame 0: top screen"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
}
