//! The per-draw cost counters (issue 15: the viewer's cost table and `picaview costs`) are exact
//! when costs are on: every counter of every draw of every bundled demo and generated bench
//! scene, as the trace index records them (the index is what the table reads; it always
//! counts costs), equals the values kept in `tests/data/costs/NAME.txt`. Those files were
//! written by the code from before counting became optional (every counter always on), so the
//! test proves that making the cost counters optional changed none of their values.
//!
//! Each file holds, per frame, the sum of every [`DrawStats`] field, and over the whole trace a
//! 64-bit FNV-1a hash of every draw's fields in order (so a change in any one draw is caught,
//! and the frame sums say where). `PICAVIEW_BLESS=1` rewrites the files (only after a change
//! that is meant to change the counters).

use std::fmt::Write as _;
use std::path::PathBuf;

use gpu_core::debug::DrawStats;
use gpu_core::replay::{Replay, TraceIndex};
use pica_cmd::citrace::CiTrace;
use picaview_tests::bench_scenes::all_traces as traces;

/// Every field of `s`, named, in declaration order (destructured, so a new field must be added
/// here).
fn fields(s: &DrawStats) -> [(&'static str, u64); 18] {
    let DrawStats {
        vertices_loaded,
        vs_invocations,
        gs_invocations,
        triangles_assembled,
        triangles_clipped,
        triangles_rasterized,
        fragments_written,
        vertex_cache_hits,
        vs_instructions,
        gs_instructions,
        triangles_clipped_away,
        triangles_culled,
        fragments_generated,
        fragments_alpha_failed,
        fragments_stencil_failed,
        fragments_depth_failed,
        texture_samples,
        texels_fetched,
    } = *s;
    [
        ("vertices_loaded", vertices_loaded),
        ("vs_invocations", vs_invocations),
        ("gs_invocations", gs_invocations),
        ("triangles_assembled", triangles_assembled),
        ("triangles_clipped", triangles_clipped),
        ("triangles_rasterized", triangles_rasterized),
        ("fragments_written", fragments_written),
        ("vertex_cache_hits", vertex_cache_hits),
        ("vs_instructions", vs_instructions),
        ("gs_instructions", gs_instructions),
        ("triangles_clipped_away", triangles_clipped_away),
        ("triangles_culled", triangles_culled),
        ("fragments_generated", fragments_generated),
        ("fragments_alpha_failed", fragments_alpha_failed),
        ("fragments_stencil_failed", fragments_stencil_failed),
        ("fragments_depth_failed", fragments_depth_failed),
        ("texture_samples", texture_samples),
        ("texels_fetched", texels_fetched),
    ]
}

/// 64-bit FNV-1a over the little-endian bytes of `words`, continuing from `h`.
fn fnv1a(mut h: u64, words: impl IntoIterator<Item = u64>) -> u64 {
    for w in words {
        for b in w.to_le_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
    }
    h
}

/// The snapshot text of an index: draw count, hash of every draw's counters, per-frame sums.
fn snapshot(index: &TraceIndex) -> String {
    let mut hash = 0xCBF2_9CE4_8422_2325;
    let frames = index
        .draws
        .iter()
        .map(|d| d.frame)
        .max()
        .map_or(0, |f| f + 1);
    let mut sums = vec![[0u64; 18]; frames as usize];
    for d in &index.draws {
        let f = fields(&d.stats);
        hash = fnv1a(hash, std::iter::once(d.info.draw).chain(f.map(|(_, v)| v)));
        for (sum, (_, v)) in sums[d.frame as usize].iter_mut().zip(f) {
            *sum += v;
        }
    }
    let mut out = String::new();
    writeln!(out, "draws {}", index.draws.len()).unwrap();
    writeln!(out, "hash {hash:016x}").unwrap();
    let names = fields(&DrawStats::default()).map(|(n, _)| n);
    for (frame, sum) in sums.iter().enumerate() {
        write!(out, "frame {frame}").unwrap();
        for (name, v) in names.iter().zip(sum) {
            write!(out, " {name}={v}").unwrap();
        }
        out.push('\n');
    }
    out
}

fn snapshot_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/costs")
        .join(format!("{name}.txt"))
}

#[test]
fn cost_counters_equal_the_values_from_before_they_became_optional() {
    let bless = std::env::var_os("PICAVIEW_BLESS").is_some();
    for (name, bytes) in traces() {
        let mut replay = Replay::new(CiTrace::from_bytes(bytes).expect("trace parses"));
        replay.set_threads(1);
        let index = replay.build_index();
        assert!(!index.draws.is_empty(), "{name}: no draws");
        let actual = snapshot(&index);
        let path = snapshot_path(&name);
        if bless {
            std::fs::create_dir_all(path.parent().expect("has a parent")).unwrap();
            std::fs::write(&path, &actual).unwrap();
            continue;
        }
        let kept = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (PICAVIEW_BLESS=1 writes it)", path.display()));
        if kept != actual {
            let diff: Vec<String> = kept
                .lines()
                .zip(actual.lines())
                .filter(|(a, b)| a != b)
                .take(4)
                .map(|(a, b)| format!("  kept:   {a}\n  actual: {b}"))
                .collect();
            panic!(
                "{name}: the cost counters differ from {}:\n{}",
                path.display(),
                diff.join("\n")
            );
        }
    }
}

#[test]
fn every_snapshot_counts_texels_and_killed_fragments_somewhere() {
    // The snapshots are not trivially zero: the demos together exercise texel counting and
    // the depth test's kills (so the exactness test above covers the counters made optional).
    let mut texels = 0;
    let mut depth_failed = 0;
    for (name, _) in traces() {
        let text = std::fs::read_to_string(snapshot_path(&name)).expect("snapshot exists");
        for word in text.split_whitespace() {
            if let Some(v) = word.strip_prefix("texels_fetched=") {
                texels += v.parse::<u64>().expect("a number");
            }
            if let Some(v) = word.strip_prefix("fragments_depth_failed=") {
                depth_failed += v.parse::<u64>().expect("a number");
            }
        }
    }
    assert!(texels > 0 && depth_failed > 0, "{texels} {depth_failed}");
}
