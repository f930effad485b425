//! Malformed CiTrace files: clear, typed errors with offsets, never a panic, never an allocation
//! of a declared absurd size.

use pica_cmd::citrace::{CiTrace, CiTraceBuilder, CiTraceError, InitialState, Section};
use proptest::prelude::*;

fn sample() -> Vec<u8> {
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    b.frame_marker();
    b.submit_command_list(0x2000_0000, &[1u8; 32])
        .expect("submit");
    b.memory_load(0x1800_0000, &[2u8; 48]).expect("load");
    b.frame_marker();
    b.build().expect("build")
}

fn patch(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn truncated_header_is_reported_with_length() {
    for len in [0usize, 4, 0x5F, 0x63] {
        let e = CiTrace::from_bytes(sample()[..len].to_vec()).unwrap_err();
        assert!(
            matches!(e, CiTraceError::TruncatedHeader { len: l } if l == len as u64),
            "{e}"
        );
        assert!(e.to_string().contains("truncated header"), "{e}");
    }
}

#[test]
fn bad_magic_and_version() {
    let mut b = sample();
    b[..4].copy_from_slice(b"RIFF");
    let e = CiTrace::from_bytes(b).unwrap_err();
    assert!(e.to_string().contains("bad magic"), "{e}");
    let mut b = sample();
    patch(&mut b, 4, 7);
    let e = CiTrace::from_bytes(b).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported CiTrace version 7 at offset 0x4 (only version 1 exists)"
    );
}

#[test]
fn every_section_offset_past_the_end_is_named() {
    let good = sample();
    for sec in Section::ALL {
        let mut b = good.clone();
        let field = sec.header_field_offset() as usize;
        patch(&mut b, field, good.len() as u32 + 4);
        let e = CiTrace::from_bytes(b).unwrap_err();
        match e {
            CiTraceError::SectionOutOfBounds {
                section,
                field_offset,
                ..
            } => {
                assert_eq!((section, field_offset as usize), (sec, field));
            }
            other => panic!("{sec:?}: unexpected {other}"),
        }
        // Absurd word counts (up to 16 GiB declared) fail the same way, without allocating.
        let mut b = good.clone();
        patch(&mut b, field + 4, u32::MAX);
        let e = CiTrace::from_bytes(b).unwrap_err();
        assert!(e.to_string().contains(sec.name()), "{e}");
    }
}

#[test]
fn stream_and_blob_bounds() {
    let good = sample();
    let mut b = good.clone();
    patch(&mut b, 0x60, 0x1000_0000); // 5 GiB of elements
    let e = CiTrace::from_bytes(b).unwrap_err();
    assert!(
        matches!(
            e,
            CiTraceError::StreamOutOfBounds {
                count: 0x1000_0000,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.offset(), Some(0x5C));
    // Truncating the file cuts into the stream table.
    let e = CiTrace::from_bytes(good[..good.len() - 1].to_vec()).unwrap_err();
    assert!(matches!(e, CiTraceError::StreamOutOfBounds { .. }), "{e}");
    // A blob offset past the end.
    let t = CiTrace::from_bytes(good.clone()).expect("valid");
    let load = t.element_offset(3) as usize; // size, addr, load, trigger after the first marker
    let mut b = good.clone();
    patch(&mut b, load + 4, good.len() as u32);
    let e = CiTrace::from_bytes(b).unwrap_err();
    assert!(
        matches!(e, CiTraceError::BlobOutOfBounds { element: 3, .. }),
        "{e}"
    );
    assert!(e.to_string().contains(&format!("0x{load:X}")), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Random corruption of header words and stream elements: either a typed error or a trace
    /// that writes back identically.
    #[test]
    fn corrupted_traces_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u32>()), 1..6),
        header_only in any::<bool>(),
        cut in any::<Option<prop::sample::Index>>(),
    ) {
        let mut b = sample();
        let t = CiTrace::from_bytes(b.clone()).expect("valid");
        let stream = t.element_offset(0) as usize;
        for (at, v) in edits {
            let at = if header_only { at.index(0x64 / 4) * 4 } else { stream + at.index((b.len() - stream) / 4) * 4 };
            patch(&mut b, at, v);
        }
        if let Some(cut) = cut {
            b.truncate(cut.index(b.len()));
        }
        if let Ok(mut t) = CiTrace::from_bytes(b.clone()) {
            prop_assert_eq!(t.to_bytes().expect("write"), b);
            for i in 0..t.elements().len() {
                let _ = t.read_blob(i);
            }
            let _ = t.submissions();
            let _ = t.stats();
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(mut bytes in prop::collection::vec(any::<u8>(), 0..400), magic in any::<bool>()) {
        if magic && bytes.len() >= 12 {
            bytes[..4].copy_from_slice(b"CiTr");
            bytes[4..8].copy_from_slice(&1u32.to_le_bytes());
        }
        if let Ok(mut t) = CiTrace::from_bytes(bytes.clone()) {
            prop_assert_eq!(t.to_bytes().expect("write"), bytes);
        }
    }
}
