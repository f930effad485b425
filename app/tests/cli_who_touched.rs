//! `picaview who-touched` as a user runs it on the bundled demo: text and JSON, `--limit`,
//! bad arguments, a closed pipe.

use std::io::Read as _;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn cube() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/demos/cube.ctf")
}

/// cube.ctf's top colour buffer (COLORBUFFER_LOC of its first draws) and a byte inside it.
const COLOR: &str = "0x18000040";

#[test]
fn text_lists_fills_draws_and_transfers_of_the_colour_buffer_in_order() {
    let out = bin()
        .args(["who-touched", cube().to_str().unwrap(), COLOR])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("who touched PA 0x18000040"), "{text}");
    let kinds: Vec<&str> = lines[1..lines.len() - 1]
        .iter()
        .map(|l| {
            ["fill", "color-write", "transfer-read"]
                .into_iter()
                .find(|k| l.contains(&format!(" {k} ")))
                .unwrap_or("other")
        })
        .collect();
    assert!(!kinds.contains(&"other"), "{text}");
    // Each frame: fill, draws, then the display transfer.
    assert_eq!(kinds.first(), Some(&"fill"));
    assert_eq!(kinds.last(), Some(&"transfer-read"));
    assert_eq!(kinds.iter().filter(|k| **k == "transfer-read").count(), 6);
    assert!(lines.last().unwrap().contains("events ("), "{text}");
}

#[test]
fn json_is_an_array_of_events_with_a_summary_and_limit_counts_the_rest() {
    let out = bin()
        .args([
            "who-touched",
            cube().to_str().unwrap(),
            COLOR,
            "--len",
            "4",
            "--json",
            "--limit",
            "3",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("valid JSON");
    let arr = v.as_array().expect("array");
    assert_eq!(arr.len(), 4, "3 events + summary");
    assert_eq!(arr[0]["access"], "fill");
    assert_eq!(arr[1]["access"], "color-write");
    assert_eq!(arr[1]["draw"], 0);
    assert_eq!(arr[1]["write"], true);
    let s = &arr[3]["summary"];
    let events = s["events"].as_u64().unwrap();
    assert!(events > 3);
    assert_eq!(s["not_printed"].as_u64().unwrap(), events - 3);
    assert_eq!(s["addr"].as_u64().unwrap(), 0x1800_0040);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let out = bin()
        .args(["who-touched", cube().to_str().unwrap(), "0xZZ"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("is not a number"), "{err}");
    let out = bin()
        .args([
            "who-touched",
            cube().to_str().unwrap(),
            "0x100",
            "--len",
            "0",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    let out = bin()
        .args(["who-touched", "/nonexistent.ctf", "0x100"])
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let mut child = bin()
        .args(["who-touched", cube().to_str().unwrap(), COLOR])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
