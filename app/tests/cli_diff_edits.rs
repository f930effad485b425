//! `picaview diff --edits-a/--edits-b` as a user runs it on the bundled demos: one trace with an
//! edit list off vs on (trace B omitted), two traces each with its own list, exit statuses
//! (0 same, 1 different, 2 error), the JSON fields naming the lists and unapplied edits.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn demo(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
}

fn out_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("picaview-diffed-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
        .args(args)
        .output()
        .unwrap()
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

#[test]
fn edit_list_on_off() {
    let cube = demo("cube.ctf");
    let dir = out_dir("onoff");
    let tev = dir.join("tev.txt");
    std::fs::write(
        &tev,
        "# stage 0 outputs green from draw 5 on\ndraw 5: 0x0C0=0x000E000E\ndraw 5: 0x0C2=0\ndraw 5: 0x0C3=0xFF00FF00\n",
    )
    .unwrap();
    // Edits off (A) vs on (B): first difference at draw 5, status 1.
    let o = run(&["diff", s(&cube), "--edits-b", s(&tev), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let v = json(&o);
    assert_eq!(v["same"], false);
    assert_eq!(v["draw"], 5);
    assert_eq!(v["b"], s(&cube));
    assert_eq!(v["edits_a"], serde_json::Value::Null);
    assert_eq!(v["edits_b"], s(&tev));
    assert_eq!(v["color"]["b"], serde_json::json!([0, 255, 0, 255]));
    // Text: the side lines name the edit list.
    let o = run(&["diff", s(&cube), "--edits-b", s(&tev)]);
    assert_eq!(o.status.code(), Some(1));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains(&format!("edits {}", tev.display())), "{text}");
    assert!(text.contains("first difference: frame 0 draw 5"), "{text}");
    // The same list on both sides, through an explicit trace B: status 0.
    let o = run(&[
        "diff",
        s(&cube),
        s(&cube),
        "--edits-a",
        s(&tev),
        "--edits-b",
        s(&tev),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn unobservable_and_unapplied_edits() {
    let cube = demo("cube.ctf");
    let dir = out_dir("noop");
    // The fog colour, while the cube draws without fog: applied, nothing changes.
    let fog = dir.join("fog.txt");
    std::fs::write(&fog, "draw 5: 0x0E1=0x00FF00FF\n").unwrap();
    let o = run(&["diff", s(&cube), "--edits-b", s(&fog), "--json"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let v = json(&o);
    assert_eq!(v["same"], true);
    assert_eq!(v["unapplied_edits_b"], serde_json::json!([]));
    // An edit for a draw the trace does not have: same, with a warning naming it.
    let missing = dir.join("missing.txt");
    std::fs::write(&missing, "draw 9999: 0x0C3=0x1\n").unwrap();
    let o = run(&["diff", s(&cube), "--edits-a", s(&missing), "--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(
        v["unapplied_edits_a"][0],
        "edit 0 (draw 9999: 0x0C3=0x00000001)"
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("never applied"));
}

#[test]
fn two_traces_each_with_its_list_and_errors() {
    let cube = demo("cube.ctf");
    let fog = demo("fog_blend.ctf");
    let dir = out_dir("two");
    let ok = dir.join("ok.txt");
    std::fs::write(&ok, "draw 0: 0x0E1=0x00FF00FF\n").unwrap();
    let o = run(&[
        "diff",
        s(&cube),
        s(&fog),
        "--edits-a",
        s(&ok),
        "--edits-b",
        s(&ok),
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(json(&o)["draw"], 0);
    // A script that does not parse, a missing script: status 2.
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "draw x: nonsense\n").unwrap();
    let o = run(&["diff", s(&cube), "--edits-b", s(&bad)]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.txt"));
    let o = run(&["diff", s(&cube), "--edits-b", "/nonexistent/e.txt"]);
    assert_eq!(o.status.code(), Some(2));
    // One trace and nothing to compare it under: usage error.
    let o = run(&["diff", s(&cube)]);
    assert_eq!(o.status.code(), Some(2));
    // One trace under two configurations needs no B.
    let o = run(&["diff", s(&cube), "--engine-b", "reference"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}
