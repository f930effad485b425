//! Packing reduced traces (issue 16, "reduce output ... is smaller"): neutralised commands are
//! removed from the command lists, the lists and their submissions shrink, and the render does
//! not change; `reduce` packs its result and the picked pixel survives.

use gpu_core::replay::reduce::{PixelSource, ReduceBudget, measure, pack, pixel_at_end, reduce};
use gpu_core::replay::trim::trim;
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::{CiTrace, CiTraceBuilder, StreamEvent, load_target};
use pica_cmd::cmdlist::{CmdHeader, Commands};
use picaview_tests::frames::{demo_bytes, frames};

/// The trace with every third command of every submitted list (whose memory load is exactly
/// the list) neutralised the way `reduce` does it; returns the bytes and the count.
fn neutralise_every_third(bytes: &[u8]) -> (Vec<u8>, u64) {
    let mut trace = CiTrace::from_bytes(bytes.to_vec()).expect("parses");
    let subs = trace.submissions();
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    b.layout(trace.layout());
    let mut buf = Vec::new();
    let mut count = 0;
    for i in 0..trace.elements().len() {
        match trace.event(i) {
            Some(StreamEvent::MemoryLoad(m)) => {
                trace.read_blob_into(i, &mut buf).expect("blob");
                let pa = load_target(m.physical_address);
                if subs
                    .iter()
                    .any(|s| s.element > i && s.physical_address == pa && s.size == m.size)
                {
                    let headers: Vec<(usize, u32)> = Commands::new(&buf)
                        .filter_map(Result::ok)
                        .map(|c| (c.header_offset as usize, c.param_count - 1))
                        .collect();
                    for (k, &(h, extra)) in headers.iter().enumerate() {
                        if k % 3 != 1 {
                            continue;
                        }
                        let mut w = u32::from_le_bytes(buf[h..h + 4].try_into().unwrap());
                        w &= !0x000F_FFFF;
                        if extra >= 16 {
                            w &= !(1 << 31);
                        }
                        buf[h..h + 4].copy_from_slice(&w.to_le_bytes());
                        count += 1;
                    }
                }
                b.memory_load(m.physical_address, &buf).expect("load");
            }
            Some(_) => {
                b.raw_element(trace.elements()[i]).expect("element");
            }
            None => {}
        }
    }
    (b.build().expect("builds"), count)
}

#[test]
fn packing_removes_neutralised_commands_and_renders_the_same() {
    for name in ["cube", "fog_blend", "geoshader"] {
        let (neutral, count) = neutralise_every_third(&demo_bytes(name));
        assert!(count > 0, "{name}");
        let (packed, report) = pack(&neutral).expect("packs");
        eprintln!(
            "{name}: {} -> {} bytes, {report:?}",
            neutral.len(),
            packed.len()
        );
        assert!(report.lists_packed > 0, "{name}: {report:?}");
        assert_eq!(report.lists_kept, 0, "{name}: every list is packable");
        assert!(packed.len() < neutral.len(), "{name}");
        assert!(report.list_bytes_removed > 0);
        // Neutralised commands are no-ops: removing them changes nothing rendered.
        assert_eq!(frames(&packed), frames(&neutral), "{name}");
        let (before, after) = (measure(&neutral).unwrap(), measure(&packed).unwrap());
        assert_eq!(before.draws, after.draws, "{name}");
        assert!(after.commands < before.commands, "{name}");
        assert!(after.list_bytes < before.list_bytes, "{name}");
        // Nothing neutralised is left to pack.
        let (again, r2) = pack(&packed).expect("packs");
        assert_eq!(r2.lists_packed, 0, "{name}: {r2:?}");
        assert_eq!(again, packed);
    }
}

#[test]
fn reduce_output_is_packed_and_keeps_the_pixel() {
    let original = demo_bytes("cube");
    let trace = CiTrace::from_bytes(original.clone()).expect("parses");
    let frame = 1;
    let (x, y) = (120, 200);
    let cut = {
        let (b, _) = trim(trace, 0, frame).expect("trims");
        b.build().expect("builds")
    };
    let want = pixel_at_end(&cut, PixelSource::Color, x, y).expect("pixel");
    let mut check = |bytes: &[u8]| pixel_at_end(bytes, PixelSource::Color, x, y) == Some(want);
    let (out, report) = reduce(
        original,
        frame,
        &mut check,
        ReduceBudget {
            max_steps: 2000,
            deadline: None,
        },
        &mut |_| {},
    )
    .expect("reduces");
    eprintln!("{report:?}");
    assert_eq!(pixel_at_end(&out, PixelSource::Color, x, y), Some(want));
    assert_eq!(report.pack_note, None, "the packed trace passes the check");
    assert!(report.pack.lists_packed >= 1, "{report:?}");
    assert!(report.pack.commands_removed > 0, "{report:?}");
    assert!(report.after.bytes < report.before.bytes);
    assert!(report.after.commands < report.before.commands);
    assert_eq!(report.after.bytes, out.len());
    // No neutralised command is left in the packed lists.
    let trace = CiTrace::from_bytes(out.clone()).expect("parses");
    let mut r = Replay::new(trace);
    r.run_until(Target::End, &mut ());
    let (_, again) = pack(&out).expect("packs");
    assert_eq!(again.lists_packed, 0, "{again:?}");
    let _ = CmdHeader(0);
}
