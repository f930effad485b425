//! `--budget SPEC` on the replaying commands (`trace info`, `trace check`, `render`,
//! `bench replay`): the budgets are applied, what ran out is reported, bad specifications are
//! refused with a usage error before anything runs.

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
    bin().args(args).output().expect("picaview runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn trace_info_applies_and_reports_the_draw_budget() {
    let full = run(&["trace", "info", &demo("cube.ctf"), "--json"]);
    assert!(full.status.success(), "{}", text(&full));
    let full: serde_json::Value = serde_json::from_slice(&full.stdout).unwrap();
    let all_draws = full["draws"].as_u64().unwrap();
    let frames = full["frames"].as_array().unwrap().len() as u64;
    assert!(
        all_draws > frames,
        "the demo has more than one draw per frame"
    );

    let cut = run(&[
        "trace",
        "info",
        &demo("cube.ctf"),
        "--json",
        "--budget",
        "draws-per-frame=1",
    ]);
    assert!(cut.status.success(), "{}", text(&cut));
    let cut: serde_json::Value = serde_json::from_slice(&cut.stdout).unwrap();
    assert!(cut["draws"].as_u64().unwrap() <= frames);
    let budget: Vec<&serde_json::Value> = cut["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["kind"].get("Budget").is_some())
        .collect();
    assert!(!budget.is_empty(), "{cut}");
    assert_eq!(budget[0]["kind"]["Budget"]["scope"], "Frame");
    assert_eq!(budget[0]["kind"]["Budget"]["resource"], "Draws");
    let detail = budget[0]["detail"].as_str().unwrap();
    assert!(detail.contains("draws-per-frame"), "{detail}");
    assert!(detail.contains("byte offset"), "{detail}");

    // Text output names it too; repeated flags apply in order (the last wins).
    let t = run(&[
        "trace",
        "info",
        &demo("cube.ctf"),
        "--budget",
        "draws-per-frame=1",
        "--budget",
        "draws-per-trace=1",
    ]);
    assert!(t.status.success());
    let out = text(&t);
    assert!(out.contains("work budget exhausted"), "{out}");
    assert!(out.contains("replay: "), "{out}");
    assert!(out.contains(", 1 draws,"), "{out}");
}

#[test]
fn trace_check_reports_budget_cuts() {
    let o = run(&[
        "trace",
        "check",
        &demo("cube.ctf"),
        "--budget",
        "vertices-per-trace=10",
    ]);
    let out = text(&o);
    assert!(out.contains("vertices-per-trace"), "{out}");
}

#[test]
fn render_and_bench_take_budgets() {
    let dir = std::env::temp_dir().join(format!("picaview-budget-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let png = dir.join("top.png");
    let o = bin()
        .args([
            "render",
            &demo("cube.ctf"),
            "--frame",
            "1",
            "--budget",
            "fragments-per-frame=100",
            "-o",
        ])
        .arg(&png)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(png.is_file());
    let b = run(&[
        "bench",
        "replay",
        &demo("cube.ctf"),
        "--runs",
        "1",
        "--seeks",
        "2",
        "--budget",
        "draws-per-trace=3",
    ]);
    assert!(b.status.success(), "{}", text(&b));
    assert!(text(&b).contains("3 draws"), "{}", text(&b));
}

#[test]
fn bad_budget_specs_are_usage_errors() {
    for spec in ["draws-per-week=1", "draws-per-frame=many", "draws"] {
        let o = run(&["trace", "info", &demo("cube.ctf"), "--budget", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("--budget"), "{err}");
    }
    let help = run(&["render", "--help"]);
    let h = text(&help);
    assert!(h.contains("--budget <SPEC>"), "{h}");
    assert!(h.contains("draws-per-frame"), "{h}");
}
