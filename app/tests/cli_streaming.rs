//! `trace info --json` and `trace dump --json` write as they go: their memory does not grow with
//! the output. Each test builds a trace whose whole output would not fit the memory limit the
//! binary runs under (RLIMIT_DATA through the shell's `ulimit -d`), and checks the output is
//! complete.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pica_cmd::citrace::{CiTrace, CiTraceBuilder, InitialState, StreamEvent};
use pica_cmd::cmdlist::CmdListBuilder;

/// Data-segment limit for the runs below, in KiB. Measured: the streaming versions run under
/// 128 MiB on these inputs; the versions that built the output in memory (or an index with
/// keyframes) needed 3.7 GB for the dump and 0.4 GB for `trace info` or `render --after-draw`
/// on 30 repetitions of the cube demo (5.5 GB for 400).
const LIMIT_KIB: u64 = 256 * 1024;

/// A scratch directory removed when the test ends (the dump output is ~180 MB).
struct Scratch(PathBuf);

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn scratch(tag: &str) -> Scratch {
    let d = std::env::temp_dir().join(format!("picaview-stream-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    Scratch(d)
}

/// Runs picaview under the memory limit; stdout goes to `out`. Returns (success, stderr).
fn run_limited(args: &[&str], out: &Path) -> (bool, String) {
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -d {LIMIT_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_picaview"))
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(out).unwrap()))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// A trace with one command list of `writes` single register writes (the list is 8 bytes per
/// write; a write's JSON is a few hundred bytes).
fn huge_list_trace(path: &Path, writes: u32) {
    let mut list = CmdListBuilder::new();
    for i in 0..writes {
        // TEXUNIT0_BORDER_COLOR: plain state, no side effects.
        list.write(0x081, i);
    }
    list.finalize();
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    b.submit_command_list(0x2000_0000, &list.to_bytes())
        .unwrap();
    b.frame_marker();
    std::fs::write(path, b.build().unwrap()).unwrap();
}

/// The cube demo's stream repeated `copies` times after itself (identical memory loads are
/// stored once, so the file stays small while the draws multiply).
fn repeated_demo(path: &Path, copies: usize) -> u64 {
    let demo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../assets/demos/cube.ctf");
    let mut trace = CiTrace::open(&demo).unwrap();
    let mut b = CiTraceBuilder::from_trace(&mut trace).unwrap();
    let mut blob = Vec::new();
    for _ in 0..copies {
        for i in 0..trace.elements().len() {
            match trace.event(i).unwrap() {
                StreamEvent::MemoryLoad(m) => {
                    trace.read_blob_into(i, &mut blob).unwrap();
                    b.memory_load(m.physical_address, &blob).unwrap();
                }
                _ => {
                    b.raw_element(trace.elements()[i]).unwrap();
                }
            }
        }
    }
    std::fs::write(path, b.build().unwrap()).unwrap();
    66 * (copies as u64 + 1)
}

#[test]
fn trace_dump_json_streams_a_huge_list() {
    let dir = scratch("dump");
    let trace = dir.join("huge-list.ctf");
    let writes = 1_000_000;
    huge_list_trace(&trace, writes);
    let out = dir.join("dump.json");
    let (ok, err) = run_limited(&["trace", "dump", trace.to_str().unwrap(), "--json"], &out);
    assert!(ok, "{err}");
    let v: serde_json::Value =
        serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(&out).unwrap()))
            .unwrap();
    let list = v
        .as_array()
        .unwrap()
        .iter()
        .find_map(|e| e.get("command_list"))
        .unwrap();
    // The writes, then the padding and FINALIZE writes.
    let all = list["writes"].as_array().unwrap();
    assert_eq!(all.len(), writes as usize + 2);
    assert_eq!(all[writes as usize - 1]["value"], writes - 1);
    assert_eq!(all[writes as usize + 1]["name"], "FINALIZE");
}

#[test]
fn trace_info_json_streams_many_draws() {
    let dir = scratch("info");
    let trace = dir.join("long.ctf");
    let draws = repeated_demo(&trace, 30);
    let out = dir.join("info.json");
    let (ok, err) = run_limited(&["trace", "info", trace.to_str().unwrap(), "--json"], &out);
    assert!(ok, "{err}");
    let v: serde_json::Value =
        serde_json::from_reader(std::io::BufReader::new(std::fs::File::open(&out).unwrap()))
            .unwrap();
    assert_eq!(v["draws"], draws);
    let listed: usize = v["frames"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["draws"].as_array().unwrap().len())
        .sum();
    assert_eq!(listed as u64, draws);

    // `render --after-draw` finds the draw without keyframes, in the same bounded memory.
    let png = dir.join("late.png");
    let (ok, err) = run_limited(
        &[
            "render",
            trace.to_str().unwrap(),
            "--frame",
            "180",
            "--after-draw",
            "3",
            "-o",
            png.to_str().unwrap(),
        ],
        &dir.join("render.out"),
    );
    assert!(ok, "{err}");
    assert!(err.contains("after 1984 draw(s)"), "{err}");
}

/// A list submitted again with the same bytes is dumped once and then referenced (the output
/// no longer grows with submissions x list size); `--repeat-lists` dumps every submission.
#[test]
fn trace_dump_prints_identical_resubmissions_by_reference() {
    let dir = scratch("dedup");
    let trace = dir.join("resubmit.ctf");
    let mut list = CmdListBuilder::new();
    for i in 0..1000 {
        list.write(0x081, i);
    }
    list.finalize();
    let bytes = list.to_bytes();
    let mut other = CmdListBuilder::new();
    other.write(0x081, 7);
    other.finalize();
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    for _ in 0..3 {
        b.submit_command_list(0x2000_0000, &bytes).unwrap();
        b.frame_marker();
    }
    // Other bytes at the same address: dumped in full.
    b.submit_command_list(0x2000_0000, &other.to_bytes())
        .unwrap();
    b.frame_marker();
    std::fs::write(&trace, b.build().unwrap()).unwrap();
    let lists = |extra: &[&str]| -> Vec<serde_json::Value> {
        let out = dir.join("dump.json");
        let mut args = vec!["trace", "dump", trace.to_str().unwrap(), "--json"];
        args.extend_from_slice(extra);
        let (ok, err) = run_limited(&args, &out);
        assert!(ok, "{err}");
        let v: serde_json::Value =
            serde_json::from_reader(std::fs::File::open(&out).unwrap()).unwrap();
        v.as_array()
            .unwrap()
            .iter()
            .filter_map(|e| Some((e["index"].clone(), e.get("command_list")?.clone())))
            .map(|(i, mut l)| {
                l["element"] = i;
                l
            })
            .collect()
    };
    let l = lists(&[]);
    assert_eq!(l.len(), 4);
    assert_eq!(l[0]["writes"].as_array().unwrap().len(), 1000 + 2);
    for k in [1, 2] {
        assert!(l[k].get("writes").is_none(), "{}", l[k]);
        assert_eq!(l[k]["same_as_element"], l[0]["element"]);
        assert_eq!(l[k]["size"], l[0]["size"]);
    }
    assert!(l[3].get("same_as_element").is_none());
    assert!(l[3]["writes"].as_array().is_some());
    let full = lists(&["--repeat-lists"]);
    assert_eq!(full.len(), 4);
    for list in &full[..3] {
        assert_eq!(list["writes"], l[0]["writes"]);
    }
    // Text: one reference line instead of the list.
    let out = dir.join("dump.txt");
    let (ok, err) = run_limited(&["trace", "dump", trace.to_str().unwrap()], &out);
    assert!(ok, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        text.matches("the same bytes as the list of element #")
            .count(),
        2
    );
}
