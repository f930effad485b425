// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Unit tests of the CiTrace reader, writer and builder.

use super::*;

fn small_builder() -> CiTraceBuilder {
    let mut b = CiTraceBuilder::new(InitialState::citra_sized());
    b.initial_state_mut()
        .set_gpu_register(PA_CMDLIST_SIZE, 0x40);
    b.initial_state_mut().set_pica_register(0x2C0, 0x8000_0000);
    b.register_write(0x1040_0468, 0x1800_0000);
    b.memory_load(0x1800_0000, &[1, 2, 3, 4]).unwrap();
    b.memory_load(0x1800_1000, &[1, 2, 3, 4]).unwrap();
    b.memory_load(0x1800_2000, &[]).unwrap();
    b.submit_command_list(0x2000_0100, &[9; 16]).unwrap();
    b.frame_marker();
    b
}

#[test]
fn canonical_offsets_match_citra_2021() {
    let bytes = small_builder().build().unwrap();
    let t = CiTrace::from_bytes(bytes).unwrap();
    let offsets: Vec<u32> = Section::ALL
        .iter()
        .map(|&s| t.header().section(s).offset)
        .collect();
    assert_eq!(
        offsets,
        vec![
            0x64, 0x4064, 0x5064, 0x5C64, 0x5D64, 0x9D64, 0xDD64, 0xE364, 0xE364, 0xE364
        ]
    );
    // Blobs: [1,2,3,4] once, the empty blob, the command list.
    assert_eq!(t.header().stream_offset, 0xE364 + 4 + 16);
    assert_eq!(t.header().stream_len, 9);
    assert!(t.warnings().is_empty(), "{:?}", t.warnings());
}

#[test]
fn dedup_shares_offsets_and_empty_loads_are_normal() {
    let mut t = CiTrace::from_bytes(small_builder().build().unwrap()).unwrap();
    let loads: Vec<MemoryLoad> = t
        .events()
        .filter_map(|e| match e {
            StreamEvent::MemoryLoad(m) => Some(m),
            _ => None,
        })
        .collect();
    assert_eq!(loads.len(), 4);
    assert_eq!(loads[0].file_offset, loads[1].file_offset);
    assert_eq!((loads[2].size, loads[2].file_offset), (0, 0xE364 + 4));
    assert_eq!(t.read_blob(2).unwrap(), vec![1, 2, 3, 4]);
    assert_eq!(t.blob(2).unwrap(), Some(&[1u8, 2, 3, 4][..]));
    assert!(matches!(
        t.read_blob(0),
        Err(CiTraceError::NotAMemoryLoad { element: 0, .. })
    ));
    assert!(matches!(
        t.read_blob(99),
        Err(CiTraceError::NoSuchElement { .. })
    ));
}

#[test]
fn read_then_write_is_identical() {
    let bytes = small_builder().build().unwrap();
    let mut t = CiTrace::from_bytes(bytes.clone()).unwrap();
    assert_eq!(t.to_bytes().unwrap(), bytes);
    let rebuilt = CiTraceBuilder::from_trace(&mut t).unwrap().build().unwrap();
    assert_eq!(rebuilt, bytes);
}

#[test]
fn unreferenced_bytes_survive_the_round_trip() {
    let mut bytes = small_builder().build().unwrap();
    bytes.extend_from_slice(b"trailing junk");
    let mut t = CiTrace::from_bytes(bytes.clone()).unwrap();
    assert_eq!(t.gaps(), &[(bytes.len() as u64 - 13, 13)]);
    assert!(matches!(
        t.warnings(),
        [TraceWarning::UnreferencedBytes { len: 13, .. }]
    ));
    assert_eq!(t.to_bytes().unwrap(), bytes);
}

#[test]
fn submissions_use_byte_sizes_and_track_registers() {
    let t = CiTrace::from_bytes(small_builder().build().unwrap()).unwrap();
    assert_eq!(
        t.submissions(),
        vec![Submission {
            element: 7,
            frame: 0,
            physical_address: 0x2000_0100,
            size: 16
        }]
    );
    let s = t.stats();
    assert_eq!(
        (s.frame_markers, s.memory_loads, s.memory_load_bytes),
        (1, 4, 24)
    );
    assert_eq!((s.distinct_blobs, s.distinct_blob_bytes), (3, 20));
    assert_eq!(s.register_writes, 4);
    assert_eq!(s.writes_by_address.get(&PA_CMDLIST_TRIGGER), Some(&1));
}

#[test]
fn read_memory_overlays_later_loads() {
    let mut b = CiTraceBuilder::new(InitialState::default());
    b.memory_load(0x100, &[1; 8]).unwrap();
    b.memory_load(0x104, &[2; 8]).unwrap();
    b.frame_marker();
    let mut t = CiTrace::from_bytes(b.build().unwrap()).unwrap();
    let mut out = [0xAA; 16];
    assert_eq!(
        t.read_memory(3, 0x100, &mut out).unwrap(),
        Coverage {
            bytes: 12,
            prefix: 12
        }
    );
    assert_eq!(out, [1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0]);
    // Before the second load only the first is visible.
    assert_eq!(
        t.read_memory(1, 0x100, &mut out).unwrap(),
        Coverage {
            bytes: 8,
            prefix: 8
        }
    );
    let mut gap = [0u8; 4];
    assert_eq!(
        t.read_memory(3, 0xFE, &mut gap).unwrap(),
        Coverage {
            bytes: 2,
            prefix: 0
        }
    );
    assert_eq!(gap, [0, 0, 1, 1]);
    assert_eq!(out[..12], [1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0]);
}

#[test]
fn sized_writes_and_layout_detection() {
    let mut b = CiTraceBuilder::new(InitialState::default());
    b.register_write_sized(0x1040_0011, WriteWidth::Bits8, 0xAB)
        .unwrap();
    b.register_write_sized(0x1040_0010, WriteWidth::Bits64, 0x1122_3344_5566_7788)
        .unwrap();
    assert!(matches!(
        b.register_write_sized(0, WriteWidth::Bits16, 0x1_0000),
        Err(BuildError::ValueTooWide { .. })
    ));
    let t = CiTrace::from_bytes(b.build().unwrap()).unwrap();
    assert_eq!(t.layout(), RegWriteLayout::Sized);
    let ws: Vec<_> = t
        .events()
        .filter_map(|e| match e {
            StreamEvent::RegisterWrite(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(ws[0].width, WriteWidth::Bits8);
    assert_eq!(
        write_words(&ws[0]).collect::<Vec<_>>(),
        vec![(0x1040_0010, 0xFF00, 0xAB00)]
    );
    assert_eq!(
        write_words(&ws[1]).collect::<Vec<_>>(),
        vec![
            (0x1040_0010, u32::MAX, 0x5566_7788),
            (0x1040_0014, u32::MAX, 0x1122_3344)
        ]
    );

    let mut c = CiTraceBuilder::new(InitialState::default());
    c.layout(RegWriteLayout::Compact);
    c.register_write(PA_CMDLIST_SIZE, 0x80);
    c.register_write(PA_CMDLIST_TRIGGER, 1);
    assert!(c.register_write_sized(0, WriteWidth::Bits8, 1).is_err());
    let bytes = c.build().unwrap();
    let mut t = CiTrace::from_bytes(bytes.clone()).unwrap();
    assert_eq!(t.layout(), RegWriteLayout::Compact);
    assert_eq!(t.submissions()[0].size, 0x80);
    assert_eq!(t.to_bytes().unwrap(), bytes);
}

#[test]
fn malformed_headers() {
    let good = small_builder().build().unwrap();
    assert!(matches!(
        CiTrace::from_bytes(good[..0x63].to_vec()),
        Err(CiTraceError::TruncatedHeader { len: 0x63 })
    ));
    let mut bad = good.clone();
    bad[0] = b'X';
    let e = CiTrace::from_bytes(bad).unwrap_err();
    assert!(matches!(e, CiTraceError::BadMagic { .. }));
    assert_eq!(e.offset(), Some(0));
    let mut bad = good.clone();
    bad[4] = 2;
    assert!(matches!(
        CiTrace::from_bytes(bad),
        Err(CiTraceError::UnsupportedVersion { version: 2 })
    ));
}

fn patch(bytes: &mut [u8], at: usize, v: u32) {
    bytes[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn absurd_sizes_are_rejected_before_allocating() {
    let good = small_builder().build().unwrap();
    let mut bad = good.clone();
    patch(&mut bad, 0x10, u32::MAX); // gpu_registers size
    let e = CiTrace::from_bytes(bad).unwrap_err();
    assert!(
        matches!(
            e,
            CiTraceError::SectionOutOfBounds {
                section: Section::GpuRegisters,
                field_offset: 0x0C,
                ..
            }
        ),
        "{e}"
    );
    let mut bad = good.clone();
    patch(&mut bad, 0x60, u32::MAX); // stream_size
    assert!(matches!(
        CiTrace::from_bytes(bad),
        Err(CiTraceError::StreamOutOfBounds {
            count: u32::MAX,
            ..
        })
    ));
    let mut bad = good.clone();
    patch(&mut bad, 0x5C, u32::MAX); // stream_offset
    assert!(matches!(
        CiTrace::from_bytes(bad),
        Err(CiTraceError::StreamOutOfBounds { .. })
    ));
    // Memory load #1 with an absurd size.
    let t = CiTrace::from_bytes(good.clone()).unwrap();
    let at = t.element_offset(1) as usize;
    let mut bad = good.clone();
    patch(&mut bad, at + 8, u32::MAX);
    let e = CiTrace::from_bytes(bad).unwrap_err();
    assert!(
        matches!(e, CiTraceError::BlobOutOfBounds { element: 1, .. }),
        "{e}"
    );
    assert_eq!(e.offset(), Some(at as u64));
    let mut bad = good;
    patch(&mut bad, 8, 0x7FFF_FFFF); // header size
    assert!(matches!(
        CiTrace::from_bytes(bad),
        Err(CiTraceError::HeaderSizeOutOfBounds { .. })
    ));
}

#[test]
fn unknown_kinds_and_bad_size_codes_are_warnings() {
    let mut b = CiTraceBuilder::new(InitialState::default());
    b.raw_element(RawElement {
        kind: 0xE9,
        payload: [7; 16],
    })
    .unwrap();
    b.register_write(PA_CMDLIST_SIZE, 1);
    assert!(matches!(
        b.raw_element(RawElement {
            kind: KIND_MEMORY_LOAD,
            payload: [0; 16]
        }),
        Err(BuildError::RawMemoryLoad)
    ));
    let mut bytes = b.build().unwrap();
    let mut t = CiTrace::from_bytes(bytes.clone()).unwrap();
    assert!(matches!(
        t.warnings(),
        [TraceWarning::UnknownElementKind {
            element: 0,
            kind: 0xE9,
            ..
        }]
    ));
    assert_eq!(t.to_bytes().unwrap(), bytes);
    // Corrupt the size code of the register write; keep the tail non-zero so the layout stays
    // "sized".
    let at = t.element_offset(1) as usize;
    patch(&mut bytes, at + 8, 0x77);
    patch(&mut bytes, at + 16, 5);
    let t = CiTrace::from_bytes(bytes).unwrap();
    assert!(t.warnings().iter().any(|w| matches!(
        w,
        TraceWarning::BadWriteSize {
            element: 1,
            code: 0x77,
            ..
        }
    )));
}

#[test]
fn mmio_targets() {
    assert_eq!(
        MmioTarget::of(0x1040_18F0),
        MmioTarget::Gpu { index: 0x63C }
    );
    assert_eq!(pica_alias(PA_CMDLIST_TRIGGER), Some(0x23C));
    assert_eq!(pica_alias(0x1040_1C00), None);
    assert_eq!(MmioTarget::of(0x1020_2204), MmioTarget::Lcd { index: 0x81 });
    assert_eq!(MmioTarget::of(0x2000_0000), MmioTarget::Other);
}

#[test]
fn initial_state_accessors() {
    let mut s = InitialState::default();
    assert!(s.set_pica_register(0x2FF, 5));
    assert!(!s.set_pica_register(0x300, 5));
    assert_eq!(s.pica_registers.len(), 0x300);
    assert!(s.set_lcd_register(0x1020_2204, 0x0100_00FF));
    assert_eq!(s.lcd_register(0x1020_2204), Some(0x0100_00FF));
    assert!(!s.set_gpu_register(0x1040_4000, 1));
    s.vs_float_uniforms = (0..8).collect();
    assert_eq!(s.vs_float_uniform(1), Some([4, 5, 6, 7]));
    assert_eq!(s.vs_float_uniform(2), None);
}

#[test]
fn old_virtual_load_addresses_map_to_fcram() {
    assert_eq!(load_target(0x1400_0100), 0x2000_0100);
    assert_eq!(load_target(0x1800_0000), 0x1800_0000);
    let mut b = CiTraceBuilder::new(InitialState::default());
    b.memory_load(0x1400_0000, &[5; 4]).unwrap();
    let mut t = CiTrace::from_bytes(b.build().unwrap()).unwrap();
    let mut out = [0; 4];
    assert_eq!(t.read_memory(1, 0x2000_0000, &mut out).unwrap().bytes, 4);
    assert_eq!(out, [5; 4]);
}
