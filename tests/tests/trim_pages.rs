//! Trim carries only the memory frames A..B read (issue 16): on demos whose memory holds data
//! the trimmed frames never read, the output is smaller than with every non-zero page, and
//! still renders frames A..B bit-identically (colour, depth, both screens) to the original.

use std::hash::{DefaultHasher, Hasher as _};

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::lcd::Screen;
use gpu_core::replay::trim::{PageSelection, frame_count, trim_with};
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::scene::demos::demos_dir;

fn hash<T: std::hash::Hash>(v: &T) -> u64 {
    let mut h = DefaultHasher::new();
    v.hash(&mut h);
    h.finish()
}

/// Colour, depth, top and bottom screen hashes at every frame marker.
fn frames(bytes: &[u8]) -> Vec<[u64; 4]> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).expect("trace parses");
    let markers = trace.stats().frame_markers as u32;
    let mut r = Replay::new(trace);
    (0..markers)
        .map(|n| {
            assert!(r.run_until(Target::Frame(n), &mut ()));
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
        })
        .collect()
}

#[test]
fn trim_carries_only_pages_read_and_stays_identical() {
    for name in ["cube", "stress"] {
        let bytes = std::fs::read(demos_dir().join(format!("{name}.ctf"))).expect("demo");
        let original = frames(&bytes);
        let n = frame_count(&CiTrace::from_bytes(bytes.clone()).unwrap());
        for (first, last) in [(1, n - 1), (n - 1, n - 1)] {
            let trimmed = |sel| {
                let t = CiTrace::from_bytes(bytes.clone()).unwrap();
                let (b, report) = trim_with(t, first, last, sel).expect("trims");
                (b.build().expect("builds"), report)
            };
            let (read, rr) = trimmed(PageSelection::Read);
            let (all, ra) = trimmed(PageSelection::AllNonZero);
            eprintln!(
                "{name} {first}..{last}: {} bytes ({} pages, {} left out) vs {} bytes ({} pages)",
                read.len(),
                rr.pages,
                rr.pages_unused,
                all.len(),
                ra.pages
            );
            assert!(rr.pages_unused > 0, "{name}: some pages are not read");
            assert_eq!(rr.pages + rr.pages_unused, ra.pages);
            assert!(read.len() < all.len(), "{name} {first}..{last}");
            let want = &original[first as usize..=last as usize];
            assert_eq!(frames(&read), want, "{name} {first}..{last}");
        }
    }
}
