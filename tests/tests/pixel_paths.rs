//! The specialised fragment pipeline against its oracle (issue 14): every bundled demo trace is
//! replayed once with [`PixelPath::Specialized`] (the default) and once with
//! [`PixelPath::Reference`] (the generic per-fragment code), and after every draw the colour,
//! depth and stencil buffers it rendered into must be bit-identical; at the end all of VRAM must
//! be.

use std::collections::hash_map::DefaultHasher;
use std::hash::Hasher;

use gpu_core::memory::VRAM;
use gpu_core::pixel::fragment::PixelPath;
use gpu_core::pixel::framebuffer::FramebufferConfig;
use gpu_core::replay::{Replay, Target};
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

/// Per draw: a hash of the current render target's colour and depth/stencil bytes; at the end,
/// a hash of VRAM.
fn fingerprints(bytes: &[u8], path: PixelPath) -> (Vec<u64>, u64) {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("demo trace parses");
    let mut replay = Replay::new(trace);
    replay.set_pixel_path(path);
    let mut per_draw = Vec::new();
    let mut draw = 0u64;
    while replay.run_until(Target::AfterDraw(draw), &mut ()) {
        let fb = FramebufferConfig::from_regs(&replay.gpu().regs);
        let pixels = (fb.width * fb.height) as usize;
        let mut h = DefaultHasher::new();
        let cbpp = fb.color_format.map_or(4, |f| f.bytes_per_pixel());
        let dbpp = fb.depth_format.map_or(4, |f| f.bytes_per_pixel());
        hash_range(&replay, fb.color_addr, pixels * cbpp, &mut h);
        hash_range(&replay, fb.depth_addr, pixels * dbpp, &mut h);
        per_draw.push(h.finish());
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
