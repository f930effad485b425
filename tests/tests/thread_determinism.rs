//! The parallel pixel path is bit-identical at every thread count (issue 14): every bundled demo
//! and every generated bench scene is replayed with 1, 2 and 8 pixel-pipeline threads and with
//! the single-threaded reference path ([`PixelPath::Reference`]); after every draw the colour
//! and depth/stencil buffers it rendered into, the draw's counters, and at the end all of VRAM
//! must be identical, and so must every other mapped byte (FCRAM holds the display transfers'
//! output, which is converted in parallel too). Seeking with 2 threads must land on the linear
//! replay's state.
//!
//! The per-fragment cost counters are optional (issue 15: counted only for an observer that
//! wants them, [`Observer::wants_costs`]): with costs off, at 1, 2 and 8 threads, the images,
//! depth/stencil, memory, diagnostics and every counter shown by default are identical to the
//! replay with costs on, and the cost counters read 0.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use gpu_core::debug::{DrawDetail, DrawInfo, DrawStats, Observer};
use gpu_core::memory::{PAGE_SIZE, VRAM};
use gpu_core::pixel::fragment::PixelPath;
use gpu_core::pixel::framebuffer::FramebufferConfig;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::bench_scenes::all_traces as traces;

/// Hash of `len` bytes at `addr` (unmapped bytes hash as a marker, so they still compare).
fn hash_range(replay: &Replay<Vec<u8>>, addr: u32, len: usize, h: &mut DefaultHasher) {
    let mut buf = vec![0u8; len];
    match replay.mem().read(addr, &mut buf) {
        Ok(()) => h.write(&buf),
        Err(_) => h.write_u8(0xEE),
    }
}

/// Every non-zero page of every mapped region, with its address, hashed (a page never written
/// and a page of zeros hash alike: the parallel paths may leave untouched zero pages
/// unallocated).
fn memory_hash(replay: &Replay<Vec<u8>>) -> u64 {
    let mem = replay.mem();
    let mut h = DefaultHasher::new();
    let mut page = vec![0u8; PAGE_SIZE];
    for region in mem.regions() {
        for addr in (u64::from(region.base)..region.end()).step_by(PAGE_SIZE) {
            // ok: addr < region end <= 2^32.
            let addr = addr as u32;
            if mem.page_ref(addr).is_none() {
                continue;
            }
            mem.read(addr, &mut page).expect("a resident page reads");
            if page.iter().any(|&b| b != 0) {
                h.write_u32(addr);
                h.write(&page);
            }
        }
    }
    h.finish()
}

/// The current render target's colour and depth/stencil bytes, hashed.
fn target_hash(replay: &Replay<Vec<u8>>) -> u64 {
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let pixels = (fb.width * fb.height) as usize;
    let mut h = DefaultHasher::new();
    let cbpp = fb.color_format.map_or(4, |f| f.bytes_per_pixel());
    let dbpp = fb.depth_format.map_or(4, |f| f.bytes_per_pixel());
    hash_range(replay, fb.color_addr, pixels * cbpp, &mut h);
    hash_range(replay, fb.depth_addr, pixels * dbpp, &mut h);
    h.finish()
}

/// Collects every draw's counters and every diagnostic, in order; asks for the cost counters
/// when `costs`.
#[derive(Default)]
struct Log {
    costs: bool,
    stats: Vec<(u64, DrawStats)>,
    diagnostics: Vec<String>,
}

impl Observer for Log {
    fn wants_costs(&self) -> bool {
        self.costs
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, _detail: Option<DrawDetail>) {
        self.stats.push((info.draw, *stats));
    }
    fn diagnostic(&mut self, d: &gpu_core::debug::Diagnostic) {
        self.diagnostics.push(format!("{d:?}"));
    }
}

/// Everything compared between runs.
#[derive(Debug, PartialEq)]
struct Fingerprint {
    per_draw: Vec<u64>,
    vram: u64,
    /// [`memory_hash`] at the end.
    memory: u64,
    stats: Vec<(u64, DrawStats)>,
    diagnostics: Vec<String>,
}

/// The replay of `bytes` on `path` with `threads` pixel threads, with or without the cost
/// counters.
fn fingerprint(bytes: &[u8], path: PixelPath, threads: usize, costs: bool) -> Fingerprint {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let mut replay = Replay::new(trace);
    replay.set_pixel_path(path);
    replay.set_threads(threads);
    let mut log = Log {
        costs,
        ..Log::default()
    };
    let mut per_draw = Vec::new();
    let mut draw = 0u64;
    while replay.run_until(Target::AfterDraw(draw), &mut log) {
        per_draw.push(target_hash(&replay));
        draw += 1;
    }
    replay.run_until(Target::End, &mut log);
    let mut h = DefaultHasher::new();
    hash_range(&replay, VRAM.base, VRAM.size as usize, &mut h);
    Fingerprint {
        per_draw,
        vram: h.finish(),
        memory: memory_hash(&replay),
        stats: log.stats,
        diagnostics: log.diagnostics,
    }
}

fn first_difference(a: &Fingerprint, b: &Fingerprint) -> String {
    if let Some(i) =
        (0..a.per_draw.len().min(b.per_draw.len())).find(|&i| a.per_draw[i] != b.per_draw[i])
    {
        return format!("render target differs after draw {i}");
    }
    if let Some(i) = (0..a.stats.len().min(b.stats.len())).find(|&i| a.stats[i] != b.stats[i]) {
        return format!("counters differ: {:?} vs {:?}", a.stats[i], b.stats[i]);
    }
    if a.diagnostics != b.diagnostics {
        return format!(
            "diagnostics differ: {:?} vs {:?}",
            a.diagnostics, b.diagnostics
        );
    }
    if a.memory != b.memory {
        return "memory outside the render targets differs (e.g. a display transfer)".to_string();
    }
    "draw count or VRAM differs".to_string()
}

#[test]
fn every_trace_is_identical_at_1_2_and_8_threads_and_on_the_reference_path() {
    for (name, bytes) in traces() {
        let reference = fingerprint(&bytes, PixelPath::Reference, 1, true);
        assert!(!reference.per_draw.is_empty(), "{name}: no draws");
        for threads in [1, 2, 8] {
            let fast = fingerprint(&bytes, PixelPath::Specialized, threads, true);
            assert!(
                fast == reference,
                "{name}, {threads} threads: {}",
                first_difference(&fast, &reference)
            );
        }
    }
}

#[test]
fn seeking_with_two_threads_matches_the_linear_replay() {
    for (name, bytes) in traces() {
        let linear = fingerprint(&bytes, PixelPath::Specialized, 1, true);
        let trace = CiTrace::from_bytes(bytes.clone()).expect("trace parses");
        let mut replay = Replay::new(trace);
        replay.set_threads(2);
        let index = replay.build_index();
        let n = index.draws.len() as u64;
        assert_eq!(n as usize, linear.per_draw.len(), "{name}");
        for k in 0..n {
            // Backwards and forwards jumps.
            let m = (k * 7 + n / 2) % n;
            assert!(
                replay.seek(Target::AfterDraw(m), &mut ()),
                "{name} draw {m}"
            );
            assert_eq!(
                target_hash(&replay),
                linear.per_draw[m as usize],
                "{name}: seek to draw {m} with 2 threads differs from the linear replay"
            );
        }
    }
}

/// `s` with the cost counters (the fields counted only for [`Observer::wants_costs`]) zeroed.
fn without_costs(s: &DrawStats) -> DrawStats {
    DrawStats {
        fragments_alpha_failed: 0,
        fragments_stencil_failed: 0,
        fragments_depth_failed: 0,
        texels_fetched: 0,
        ..*s
    }
}

#[test]
fn costs_off_changes_nothing_but_the_cost_counters_at_1_2_and_8_threads() {
    let mut killed_or_textured = 0;
    for (name, bytes) in traces() {
        let on = fingerprint(&bytes, PixelPath::Specialized, 1, true);
        killed_or_textured += on
            .stats
            .iter()
            .filter(|(_, s)| without_costs(s) != *s)
            .count();
        let expected = Fingerprint {
            stats: on
                .stats
                .iter()
                .map(|(d, s)| (*d, without_costs(s)))
                .collect(),
            ..on
        };
        for threads in [1, 2, 8] {
            let off = fingerprint(&bytes, PixelPath::Specialized, threads, false);
            assert!(
                off == expected,
                "{name}, {threads} threads, costs off: {}",
                first_difference(&off, &expected)
            );
        }
    }
    // The traces exercise what costs off leaves out (texel counts, killed fragments).
    assert!(killed_or_textured > 0);
}
