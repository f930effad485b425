//! The specialised fragment pipeline against its oracle (issue 14): every bundled demo trace is
//! replayed once with [`PixelPath::Specialized`] (the default) and once with
//! [`PixelPath::Reference`] (the generic per-fragment code), and after every draw the colour,
//! depth and stencil buffers it rendered into must be bit-identical; at the end all of VRAM must
//! be. Seeking (keyframes placed by replay cost, restored right after heavy draws) must land on
//! the same state as the linear replay for every draw.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use gpu_core::memory::VRAM;
use gpu_core::pixel::fragment::PixelPath;
use gpu_core::pixel::framebuffer::FramebufferConfig;
use gpu_core::replay::{Position, Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::scene::demos::{DEMOS, demos_dir};

/// Hash of `len` bytes at `addr` (unmapped bytes hash as a marker, so they still compare).
fn hash_range(replay: &Replay<Vec<u8>>, addr: u32, len: usize, h: &mut DefaultHasher) {
    let mut buf = vec![0u8; len];
    match replay.mem().read(addr, &mut buf) {
        Ok(()) => h.write(&buf),
        Err(_) => h.write_u8(0xEE),
    }
}

/// The current render target's colour and depth/stencil bytes, hashed, with the position.
fn target_hash(replay: &Replay<Vec<u8>>) -> (u64, Position) {
    let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
    let pixels = (fb.width * fb.height) as usize;
    let mut h = DefaultHasher::new();
    let cbpp = fb.color_format.map_or(4, |f| f.bytes_per_pixel());
    let dbpp = fb.depth_format.map_or(4, |f| f.bytes_per_pixel());
    hash_range(replay, fb.color_addr, pixels * cbpp, &mut h);
    hash_range(replay, fb.depth_addr, pixels * dbpp, &mut h);
    (h.finish(), replay.position())
}

/// Per draw: [`target_hash`] right after it; at the end, a hash of VRAM.
fn fingerprints(bytes: &[u8], path: PixelPath) -> (Vec<(u64, Position)>, u64) {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("demo trace parses");
    let mut replay = Replay::new(trace);
    replay.set_pixel_path(path);
    let mut per_draw = Vec::new();
    let mut draw = 0u64;
    while replay.run_until(Target::AfterDraw(draw), &mut ()) {
        per_draw.push(target_hash(&replay));
        draw += 1;
    }
    replay.run_until(Target::End, &mut ());
    let mut h = DefaultHasher::new();
    hash_range(&replay, VRAM.base, VRAM.size as usize, &mut h);
    (per_draw, h.finish())
}

#[test]
fn every_demo_renders_identically_through_both_pixel_paths() {
    for d in &DEMOS {
        let path = demos_dir().join(format!("{}.ctf", d.name));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (fast, fast_end) = fingerprints(&bytes, PixelPath::Specialized);
        let (reference, reference_end) = fingerprints(&bytes, PixelPath::Reference);
        assert!(!fast.is_empty(), "{}: no draws", d.name);
        assert_eq!(fast.len(), reference.len(), "{}: draw count", d.name);
        if let Some(i) = (0..fast.len()).find(|&i| fast[i] != reference[i]) {
            panic!("{}: render target differs after draw {i}", d.name);
        }
        assert_eq!(
            fast_end, reference_end,
            "{}: VRAM differs at the end",
            d.name
        );
    }
}

#[test]
fn seeking_to_every_draw_matches_the_linear_replay() {
    for d in &DEMOS {
        let path = demos_dir().join(format!("{}.ctf", d.name));
        let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let (linear, _) = fingerprints(&bytes, PixelPath::Specialized);
        let trace = CiTrace::from_bytes(bytes.clone()).expect("demo trace parses");
        let mut replay = Replay::new(trace);
        let index = replay.build_index();
        assert_eq!(index.draws.len(), linear.len(), "{}", d.name);
        let n = linear.len() as u64;
        // Backwards and forwards jumps, every draw once.
        let stride = (1..n.max(2)).rev().find(|s| gcd(*s, n) == 1).unwrap_or(1);
        for k in 0..n {
            let m = (k * stride + n / 2) % n;
            assert!(
                replay.seek(Target::AfterDraw(m), &mut ()),
                "{} draw {m}",
                d.name
            );
            assert_eq!(
                target_hash(&replay),
                linear[m as usize],
                "{}: seek to draw {m} differs from the linear replay",
                d.name
            );
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}
