//! Per-frame fingerprints of a trace's render, for tests that check a rewritten trace (trimmed,
//! reduced, packed, edited) renders exactly like the original: at every frame marker, hashes of
//! the colour buffer, the depth buffer and both screens (errors hashed as their message, so a
//! buffer that fails to decode in both traces the same way still compares equal).
//!
//! Stage: test oracle over [`gpu_core::replay::Replay`]. Inputs: CiTrace bytes (and an optional
//! edit list). Outputs: one [`Fingerprint`] per frame marker. Panics (these are test helpers)
//! when the bytes do not parse, the edits do not compile or a frame marker is not reached.

use std::hash::{DefaultHasher, Hash, Hasher as _};

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::edit::EditList;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::{CiTrace, TraceSource};

use crate::scene::demos::demos_dir;

/// Hashes of the colour buffer, depth buffer, top screen and bottom screen at one frame marker.
pub type Fingerprint = [u64; 4];

/// A 64-bit hash of `v` (std's `DefaultHasher`: stable within one build, which is all a
/// comparison inside one test needs).
pub fn hash<T: Hash>(v: &T) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// The fingerprint of the replay's current state: colour and depth buffer as the registers
/// configure them, and both screens as the LCD registers show them.
pub fn fingerprint<S: TraceSource>(r: &Replay<S>) -> Fingerprint {
    let fb = FramebufferConfig::from_regs(&r.gpu().regs);
    let color = fb.read_color_image(r.mem()).map_err(|e| e.to_string());
    let depth = fb.read_depth_image(r.mem()).map_err(|e| e.to_string());
    let screen = |s| r.screen(s).map(|i| i.pixels).map_err(|e| e.to_string());
    [
        hash(&color),
        hash(&depth),
        hash(&screen(Screen::Top)),
        hash(&screen(Screen::Bottom)),
    ]
}

/// Fingerprints at every frame marker of the trace in `bytes`, replayed from the start.
///
/// # Panics
/// When the bytes are not a CiTrace or a frame marker the stream counts is not reached.
pub fn frames(bytes: &[u8]) -> Vec<Fingerprint> {
    frames_with_edits(bytes, None)
}

/// Fingerprints at every frame marker of the trace in `bytes`, replayed with `edits` applied.
///
/// # Panics
/// As [`frames`], and when the edit list does not compile against the trace.
pub fn frames_with_edits(bytes: &[u8], edits: Option<&EditList>) -> Vec<Fingerprint> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let markers = trace.stats().frame_markers as u32;
    let mut r = Replay::new(trace);
    if let Some(e) = edits {
        r.set_edits(e.clone()).expect("edits compile");
    }
    (0..markers)
        .map(|n| {
            assert!(r.run_until(Target::Frame(n), &mut ()));
            fingerprint(&r)
        })
        .collect()
}

/// The bytes of the bundled demo trace `assets/demos/{name}.ctf`.
///
/// # Panics
/// When the file cannot be read.
pub fn demo_bytes(name: &str) -> Vec<u8> {
    std::fs::read(demos_dir().join(format!("{name}.ctf"))).expect("demo exists")
}
