//! `picaview shader-trace` on the geometry-shader demo: a GS invocation's steps with its EMITs,
//! a vertex's VS steps agreeing with the pipeline, JSON, and one-line errors.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn geoshader() -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos/geoshader.ctf")
        .to_string_lossy()
        .into_owned()
}

/// Draw 1 of geoshader.ctf is the first star draw (VS + GS, point mode).
const GS_DRAW: &str = "1";

#[test]
fn a_gs_invocation_is_traced_with_its_emits() {
    let out = bin()
        .args([
            "shader-trace",
            &geoshader(),
            "--draw",
            GS_DRAW,
            "--gs-invocation",
            "5",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("draw 1, geometry-shader invocation 5: geometry shader"),
        "{text}"
    );
    assert!(text.contains("EMIT #0 slot 0: pos ("), "{text}");
    assert!(text.contains("EMIT #5 slot 2 +primitive: pos ("), "{text}");
    assert!(text.contains("6 EMIT, 2 primitives"), "{text}");
    assert!(
        !text.contains("note:"),
        "the re-run agrees with the pipeline: {text}"
    );
}

#[test]
fn json_lists_steps_and_emits_and_a_vertex_trace_matches_the_pipeline() {
    let out = bin()
        .args([
            "shader-trace",
            &geoshader(),
            "--draw",
            GS_DRAW,
            "--gs-invocation",
            "0",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["unit"], "geometry");
    let steps = v["trace"].as_array().unwrap().len() as u64;
    assert_eq!(v["result"]["instructions"].as_u64(), Some(steps));
    let emits = v["emits"].as_array().unwrap();
    assert_eq!(emits.len(), 6);
    assert_eq!(emits[2]["primitive"], true);
    let step = emits[0]["step"].as_u64().unwrap() as usize;
    assert_eq!(v["trace"][step]["text"], "emit");
    let out = bin()
        .args([
            "shader-trace",
            &geoshader(),
            "--draw",
            GS_DRAW,
            "--vertex",
            "7",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("vertex 7: vertex shader"), "{text}");
    assert!(text.contains("outputs match the pipeline"), "{text}");
}

#[test]
fn errors_are_one_line() {
    for args in [
        vec!["--draw", "0", "--gs-invocation", "0"],
        vec!["--draw", "999"],
        vec!["--draw", GS_DRAW, "--gs-invocation", "100000"],
    ] {
        let out = bin()
            .arg("shader-trace")
            .arg(geoshader())
            .args(&args)
            .env("RUST_BACKTRACE", "1")
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("geoshader.ctf"), "{err}");
    }
}
