//! `picaview costs` as a user runs it on the bundled cube demo: the table, sorting, JSON, and
//! errors for a frame that does not exist and an unknown column.

use std::path::PathBuf;
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_picaview"))
}

fn demo(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../assets/demos")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn json_rows_agree_with_the_totals_and_the_trace_index() {
    let out = bin()
        .args(["costs", &demo("cube.ctf"), "--frame", "0", "--json"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let draws = v["draws"].as_array().expect("draws");
    assert!(!draws.is_empty());
    let sum = |key: &str| -> u64 {
        draws
            .iter()
            .map(|d| d["stats"][key].as_u64().expect("counter"))
            .sum()
    };
    for key in [
        "fragments_generated",
        "fragments_written",
        "vs_instructions",
        "vertex_cache_hits",
        "triangles_assembled",
        "texture_samples",
        "texels_fetched",
    ] {
        assert_eq!(v["totals"][key].as_u64(), Some(sum(key)), "{key}");
    }
    for d in draws {
        let s = &d["stats"];
        let n = |k: &str| s[k].as_u64().expect("counter");
        // Every generated fragment is killed by a test or written (the demo uses no
        // shadow or gas mode).
        assert_eq!(
            n("fragments_generated"),
            n("fragments_written")
                + n("fragments_alpha_failed")
                + n("fragments_stencil_failed")
                + n("fragments_depth_failed")
        );
        assert!(n("triangles_rasterized") + n("triangles_culled") <= n("triangles_clipped"));
        assert_eq!(d["frame"].as_u64(), Some(0));
        // No procedural texture in the demo: every sample reads 1 to 8 texels.
        assert!(n("texels_fetched") >= n("texture_samples"));
        assert!(n("texels_fetched") <= 8 * n("texture_samples"));
    }
    // The textured cube fetches texels.
    assert!(sum("texels_fetched") > 0);
}

#[test]
fn table_sorts_largest_first() {
    let out = bin()
        .args(["costs", &demo("cube.ctf"), "--sort", "fragments"])
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert!(lines.next().is_some_and(|l| l.starts_with("frame 0:")));
    let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    assert_eq!(header.first(), Some(&"draw"));
    // "fragments" is the 13th title, but titles contain spaces: find the column by the
    // rows' cell count instead (one number per column).
    let rows: Vec<Vec<u64>> = lines
        .take_while(|l| !l.starts_with("total"))
        .map(|l| {
            l.split_whitespace()
                .filter_map(|c| c.parse::<f64>().ok())
                .map(|f| f as u64)
                .collect()
        })
        .collect();
    assert!(!rows.is_empty());
    let frags: Vec<u64> = rows.iter().map(|r| r[12]).collect();
    assert!(frags.windows(2).all(|w| w[0] >= w[1]), "{frags:?}");
}

#[test]
fn bad_frame_and_column_are_one_line_errors() {
    for args in [vec!["--frame", "999"], vec!["--sort", "bogus"]] {
        let out = bin()
            .arg("costs")
            .arg(demo("cube.ctf"))
            .args(&args)
            .output()
            .expect("runs");
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
    }
}
