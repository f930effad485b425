//! The keyframe budget counts what the replay index really holds (issue 18): a counting global
//! allocator measures the heap that [`Replay::build_index`] leaves allocated (the keyframes and
//! the returned [`gpu_core::replay::TraceIndex`]) and the test compares it with what the index
//! says it holds (`keyframe_bytes + record_bytes`).
//!
//! The allocator counts per thread (the index pass runs on the test's thread with one pixel
//! worker), so tests running in parallel do not disturb each other's counts.

// The counting allocator: `GlobalAlloc` is an unsafe trait. Each method only forwards to the
// system allocator with the same arguments and adds the sizes to a thread-local counter.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use gpu_core::replay::{Replay, TraceIndex};
use pica_cmd::citrace::CiTrace;
use picaview_tests::synthetic::zero_vertex_draws;

struct Counting;

thread_local! {
    /// Bytes allocated minus bytes freed by this thread.
    static LIVE: Cell<i64> = const { Cell::new(0) };
    /// The highest `LIVE` since the last [`reset_peak`].
    static PEAK: Cell<i64> = const { Cell::new(0) };
}

fn add(delta: i64) {
    // `try_with`: the thread-locals may be gone while a thread is torn down.
    let _ = LIVE.try_with(|l| {
        let v = l.get() + delta;
        l.set(v);
        let _ = PEAK.try_with(|p| p.set(p.get().max(v)));
    });
}

// SAFETY: every method forwards to `System` with the caller's arguments unchanged, so the
// contract of `GlobalAlloc` is `System`'s; the counting touches no allocated memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            add(layout.size() as i64);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.dealloc(ptr, layout) };
        add(-(layout.size() as i64));
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded unchanged (see the impl).
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            add(new_size as i64 - layout.size() as i64);
        }
        p
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

fn live() -> i64 {
    LIVE.with(Cell::get)
}

fn reset_peak() {
    PEAK.with(|p| p.set(live()));
}

fn peak() -> i64 {
    PEAK.with(Cell::get)
}

/// `frames` frames of `draws` draws of `count` vertices that rasterise nothing.
fn draws_trace(frames: u32, draws: u32, count: u32) -> Vec<u8> {
    zero_vertex_draws(frames, draws, count, None)
}

/// What one index pass holds and what it says it holds.
struct Measured {
    index: TraceIndex,
    /// Heap left allocated by the pass (keyframes, the index, the caches the pass filled).
    held: i64,
    /// Highest heap during the pass, above the start.
    peak: i64,
}

impl Measured {
    fn counted(&self) -> i64 {
        (self.index.keyframe_bytes + self.index.record_bytes) as i64
    }
}

/// Builds the index of `bytes` under `budget` bytes and measures the heap it leaves behind.
/// A first pass warms the caches that outlive a pass (the compiled programs, the texture
/// cache) and is dropped, so the measured pass's growth is the keyframes and the index.
fn measure(bytes: &[u8], budget: u64) -> Measured {
    let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
    r.set_keyframe_budget(budget);
    drop(r.build_index());
    // The store of the warm-up pass goes with the next pass's `clear`; start from an empty one.
    r.set_keyframe_budget(0);
    drop(r.build_index());
    r.set_keyframe_budget(budget);
    r.rewind();
    let before = live();
    reset_peak();
    let index = r.build_index();
    let held = live() - before;
    let peak = peak() - before;
    let m = Measured { index, held, peak };
    eprintln!(
        "{} keyframes, {} draws: counted {} (keyframes {} + records {}), held {}, peak {}",
        m.index.keyframes,
        m.index.draws.len(),
        m.counted(),
        m.index.keyframe_bytes,
        m.index.record_bytes,
        m.held,
        m.peak
    );
    drop(r);
    m
}

/// Counted within `margin` (a fraction) of the heap actually held.
fn assert_counted_within(m: &Measured, margin: f64, what: &str) {
    let (held, counted) = (m.held as f64, m.counted() as f64);
    assert!(
        (counted - held).abs() <= margin * held,
        "{what}: counted {counted} bytes, the index holds {held} ({} keyframes)",
        m.index.keyframes
    );
}

/// The heap during the pass stayed within 5% of `budget` (the store goes over it by the one
/// keyframe being added before it thins; the records grow only after the store made room).
fn assert_peak_within_budget(m: &Measured, budget: u64) {
    assert!(
        m.peak <= budget as i64 + budget as i64 / 20,
        "peak {} over the budget {budget}",
        m.peak
    );
}

/// Many keyframes, small records: the cube scene for 300 frames (a keyframe per frame).
#[test]
fn keyframes_of_a_long_capture_are_counted_as_held() {
    let bytes = picaview_tests::scene::demos::cube_frames(300).expect("cube scene");
    let m = measure(&bytes, 256 << 20);
    assert!(m.index.keyframes >= 30, "{}", m.index.keyframes);
    assert_counted_within(&m, 0.10, "cube x300");
    assert!(m.index.keyframes_dropped > 0, "no thinning");
    assert_peak_within_budget(&m, 256 << 20);
}

/// Many keyframes of draws without pixels (one every 16 draws): 200 frames of 64 draws.
#[test]
fn keyframes_between_draws_are_counted_as_held() {
    let bytes = draws_trace(200, 64, 3);
    let m = measure(&bytes, 256 << 20);
    assert!(m.index.keyframes >= 800, "{}", m.index.keyframes);
    assert_counted_within(&m, 0.10, "draws 200x64");
}

/// Records dominate: 40,000 draws under a budget that forces thinning.
#[test]
fn records_and_thinned_keyframes_are_counted_as_held() {
    let bytes = draws_trace(40, 1000, 3);
    let budget = 24 << 20;
    let m = measure(&bytes, budget);
    assert!(m.index.keyframes_dropped > 0, "no thinning");
    assert_counted_within(&m, 0.10, "draws 40x1000");
    assert_peak_within_budget(&m, budget);
}

/// A clone of the GPU state (what a keyframe holds) carries no shader-engine buffers: the
/// vertex engine's lane planes (~40 KB at 64 lanes) were allocated by every clone, uncounted,
/// and never used (a restored keyframe keeps the running engine's buffers).
#[test]
fn a_state_clone_holds_no_shader_engine_buffers() {
    let bytes = draws_trace(2, 64, 3);
    let mut r = Replay::new(CiTrace::from_bytes(bytes.to_vec()).expect("trace parses"));
    r.run_until(gpu_core::replay::Target::End, &mut ());
    let before = live();
    let engine = r.gpu().pipeline.vs_unit.clone();
    assert_eq!(live() - before, 0, "a vertex engine clone allocates");
    drop(engine);
    let before = live();
    let gpu = Box::new(r.gpu().clone());
    let held = live() - before;
    // The registers, LUTs and the state itself (~62 KB), no buffers.
    assert!(held < 80 << 10, "a GPU clone holds {held} bytes");
    drop(gpu);
}
