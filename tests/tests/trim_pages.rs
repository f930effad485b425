//! Trim carries only the memory frames A..B read (issue 16): on demos whose memory holds data
//! the trimmed frames never read, the output is smaller than with every non-zero page, and
//! still renders frames A..B bit-identically (colour, depth, both screens) to the original.

use gpu_core::replay::trim::{PageSelection, frame_count, trim_with};
use pica_cmd::citrace::CiTrace;
use picaview_tests::frames::{demo_bytes, frames};

#[test]
fn trim_carries_only_pages_read_and_stays_identical() {
    for name in ["cube", "stress"] {
        let bytes = demo_bytes(name);
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
