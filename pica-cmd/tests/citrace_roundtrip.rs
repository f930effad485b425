//! CiTrace round trips: traces written by the builder read back identically (model and bytes),
//! reading then writing reproduces the file, and the builder's layout matches a file assembled by
//! hand from the format description (`pica-raster.md` §11.1).

use pica_cmd::citrace::{
    CiTrace, CiTraceBuilder, InitialState, MemoryLoad, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE,
    PA_CMDLIST_TRIGGER, RegWriteLayout, RegisterWrite, Section, StreamEvent, WriteWidth,
};
use proptest::prelude::*;

/// What a test asks the builder to do.
#[derive(Clone, Debug)]
enum Op {
    Frame,
    Load(u32, Vec<u8>),
    Write(u32, WriteWidth, u64),
    Submit(u32, Vec<u8>),
}

fn arb_op() -> impl Strategy<Value = Op> {
    // Few distinct blob contents so that deduplication is exercised.
    let blob = prop_oneof![
        Just(Vec::new()),
        Just(vec![0xAB; 8]),
        prop::collection::vec(any::<u8>(), 0..64),
    ];
    prop_oneof![
        Just(Op::Frame),
        (any::<u32>(), blob.clone()).prop_map(|(pa, d)| Op::Load(pa, d)),
        (any::<u32>(), 0usize..4, any::<u64>()).prop_map(|(pa, w, v)| {
            let (width, value) = match w {
                0 => (WriteWidth::Bits8, v & 0xFF),
                1 => (WriteWidth::Bits16, v & 0xFFFF),
                2 => (WriteWidth::Bits32, v & 0xFFFF_FFFF),
                _ => (WriteWidth::Bits64, v),
            };
            Op::Write(pa, width, value)
        }),
        (any::<u32>(), blob).prop_map(|(pa, d)| Op::Submit(pa & !7, d)),
    ]
}

fn arb_initial() -> impl Strategy<Value = InitialState> {
    prop::collection::vec(prop::collection::vec(any::<u32>(), 0..40), 10).prop_map(|v| {
        let mut s = InitialState::default();
        for (sec, words) in Section::ALL.into_iter().zip(v) {
            *s.section_mut(sec) = words;
        }
        s
    })
}

/// The stream events the ops should produce, with blob contents instead of file offsets.
fn expected_events(ops: &[Op]) -> Vec<(StreamEvent, Option<Vec<u8>>)> {
    let mut out = Vec::new();
    let w32 = |pa, v: u32| {
        StreamEvent::RegisterWrite(RegisterWrite {
            physical_address: pa,
            width: WriteWidth::Bits32,
            value: u64::from(v),
        })
    };
    for op in ops {
        match op {
            Op::Frame => out.push((StreamEvent::FrameMarker, None)),
            Op::Load(pa, d) => out.push((
                StreamEvent::MemoryLoad(MemoryLoad {
                    file_offset: 0,
                    size: d.len() as u32,
                    physical_address: *pa,
                }),
                Some(d.clone()),
            )),
            Op::Write(pa, width, value) => out.push((
                StreamEvent::RegisterWrite(RegisterWrite {
                    physical_address: *pa,
                    width: *width,
                    value: *value,
                }),
                None,
            )),
            Op::Submit(pa, d) => {
                out.push((w32(PA_CMDLIST_SIZE, d.len() as u32), None));
                out.push((w32(PA_CMDLIST_ADDR, pa >> 3), None));
                out.push((
                    StreamEvent::MemoryLoad(MemoryLoad {
                        file_offset: 0,
                        size: d.len() as u32,
                        physical_address: *pa,
                    }),
                    Some(d.clone()),
                ));
                out.push((w32(PA_CMDLIST_TRIGGER, 1), None));
            }
        }
    }
    out
}

fn build(initial: &InitialState, ops: &[Op]) -> Vec<u8> {
    let mut b = CiTraceBuilder::new(initial.clone());
    for op in ops {
        match op {
            Op::Frame => {
                b.frame_marker();
            }
            Op::Load(pa, d) => {
                b.memory_load(*pa, d).expect("small blob");
            }
            Op::Write(pa, w, v) => {
                b.register_write_sized(*pa, *w, *v).expect("value fits");
            }
            Op::Submit(pa, d) => {
                b.submit_command_list(*pa, d).expect("small list");
            }
        }
    }
    b.build().expect("small trace")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn builder_trace_reads_back_identically(initial in arb_initial(), ops in prop::collection::vec(arb_op(), 0..30)) {
        let bytes = build(&initial, &ops);
        let mut trace = CiTrace::from_bytes(bytes.clone()).expect("builder output is valid");
        prop_assert!(trace.warnings().is_empty(), "{:?}", trace.warnings());
        prop_assert_eq!(trace.initial_state(), &initial);
        prop_assert_eq!(trace.layout(), RegWriteLayout::Sized);
        let expected = expected_events(&ops);
        prop_assert_eq!(trace.elements().len(), expected.len());
        let mut blob_offsets = std::collections::HashMap::new();
        for (i, (want, data)) in expected.iter().enumerate() {
            let got = trace.event(i).expect("element exists");
            match (got, want) {
                (StreamEvent::MemoryLoad(g), StreamEvent::MemoryLoad(w)) => {
                    prop_assert_eq!((g.size, g.physical_address), (w.size, w.physical_address));
                    let data = data.clone().expect("loads carry data");
                    prop_assert_eq!(&trace.read_blob(i).expect("blob"), &data);
                    // Equal contents share one blob; different contents never do.
                    let prev = blob_offsets.insert(data.clone(), g.file_offset);
                    prop_assert!(prev.is_none_or(|p| p == g.file_offset));
                }
                (g, w) => prop_assert_eq!(g, *w),
            }
        }
        // Different non-empty contents never share a blob (an empty blob may sit at the same
        // offset as the next one).
        let non_empty: Vec<u32> = blob_offsets.iter().filter(|(d, _)| !d.is_empty()).map(|(_, &o)| o).collect();
        let distinct: std::collections::HashSet<u32> = non_empty.iter().copied().collect();
        prop_assert_eq!(distinct.len(), non_empty.len());
        // Read then write: identical bytes; rebuild from the trace: identical bytes.
        prop_assert_eq!(&trace.to_bytes().expect("write"), &bytes);
        let rebuilt = CiTraceBuilder::from_trace(&mut trace).expect("rebuild").build().expect("build");
        prop_assert_eq!(&rebuilt, &bytes);
    }
}

/// Assembles a trace byte by byte from the format description, independently of the builder.
#[test]
fn builder_matches_a_hand_assembled_file() {
    let mut initial = InitialState::citra_sized();
    initial.pica_registers[0x2C0] = 0x8000_0000;
    initial.vs_float_uniforms[4] = 0x3F_0000; // c1.x = 1.0 in float24
    let list = [0x11u8; 16];
    let mut b = CiTraceBuilder::new(initial.clone());
    b.frame_marker();
    b.submit_command_list(0x2000_0000, &list).expect("submit");
    b.memory_load(0x1800_0000, &list).expect("load"); // same contents: shares the blob
    let built = b.build().expect("build");

    let mut f: Vec<u8> = Vec::new();
    let put = |f: &mut Vec<u8>, v: u32| f.extend_from_slice(&v.to_le_bytes());
    f.extend_from_slice(b"CiTr");
    put(&mut f, 1);
    put(&mut f, 0x64);
    let sizes = [0x1000u32, 0x400, 0x300, 64, 4096, 4096, 384, 0, 0, 0];
    let mut off = 0x64u32;
    for s in sizes {
        put(&mut f, off);
        put(&mut f, s);
        off += 4 * s;
    }
    assert_eq!(off, 0xE364, "reference offsets (pica-raster.md §11.1)");
    let stream_offset = off + 16; // one 16-byte blob
    put(&mut f, stream_offset);
    put(&mut f, 6);
    assert_eq!(f.len(), 0x64);
    for sec in Section::ALL {
        for w in initial.section(sec) {
            put(&mut f, *w);
        }
    }
    f.extend_from_slice(&list);
    let element = |f: &mut Vec<u8>, kind: u32, words: [u32; 4]| {
        put(f, kind);
        for w in words {
            put(f, w);
        }
    };
    element(&mut f, 0xE1, [0; 4]);
    element(&mut f, 0xE3, [0x1040_18E0, 0xD3, 16, 0]);
    element(&mut f, 0xE3, [0x1040_18E8, 0xD3, 0x2000_0000 >> 3, 0]);
    element(&mut f, 0xE2, [0xE364, 16, 0x2000_0000, 0]);
    element(&mut f, 0xE3, [0x1040_18F0, 0xD3, 1, 0]);
    element(&mut f, 0xE2, [0xE364, 16, 0x1800_0000, 0]);
    assert_eq!(built, f);
}

#[test]
fn open_from_disk_reads_blobs_lazily() {
    let initial = InitialState {
        gpu_registers: vec![7; 4],
        ..InitialState::default()
    };
    let big = vec![0x5A; 1 << 20];
    let mut b = CiTraceBuilder::new(initial);
    b.memory_load(0x1800_0000, &big).expect("load");
    b.frame_marker();
    let bytes = b.build().expect("build");
    let dir = std::env::temp_dir().join(format!("picaview-citrace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("lazy.ctf");
    std::fs::write(&path, &bytes).expect("write");
    let mut t = CiTrace::open(&path).expect("open");
    // The in-memory part is the header, sections and stream only.
    assert!(
        t.blob(0).expect("load").is_none(),
        "file sources do not hand out slices"
    );
    assert_eq!(t.read_blob(0).expect("blob"), big);
    let mut out = Vec::new();
    t.write_to(&mut out).expect("write");
    assert_eq!(out, bytes);
    std::fs::remove_dir_all(&dir).ok();
}
