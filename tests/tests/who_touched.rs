//! The resource timeline (`gpu_core::replay::resources`) on the bundled demos: the colour buffer
//! is written by draws (and cleared by fills) and read by display transfers; a texture is loaded
//! from the trace and then sampled by draws; events come in trace order and the collector is
//! bounded.

use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::replay::resources::{Access, AddrRange, Timeline, who_touched};
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use picaview_tests::scene::demos::demos_dir;

fn replay(name: &str) -> Replay<Vec<u8>> {
    let bytes = std::fs::read(demos_dir().join(format!("{name}.ctf"))).expect("demo");
    Replay::new(CiTrace::from_bytes(bytes).expect("parses"))
}

/// A colour-buffer address and a sampled texture address of cube.ctf's first textured draw.
fn cube_addresses(r: &mut Replay<Vec<u8>>) -> (u32, u32, u64) {
    let index = r.build_index();
    let rec = index
        .draws
        .iter()
        .find(|d| d.info.textures.iter().any(Option::is_some))
        .expect("a textured draw")
        .clone();
    let tex = rec
        .info
        .textures
        .iter()
        .flatten()
        .next()
        .expect("texture")
        .addr;
    r.seek(Target::AfterDraw(rec.info.draw), &mut ());
    let fb = FramebufferConfig::from_regs(&r.gpu().regs);
    (fb.color_addr, tex, rec.info.draw)
}

#[test]
fn a_colour_buffer_is_written_by_draws_and_read_by_display_transfers() {
    let mut r = replay("cube");
    let (color, _, draw) = cube_addresses(&mut r);
    let t = Timeline::collect(
        &mut r,
        AddrRange {
            start: color + 64,
            len: 4,
        },
        100_000,
        &mut || false,
    );
    assert_eq!(t.dropped, 0);
    assert_eq!(t.stats.events, t.events.len() as u64);
    let count = |a: Access| t.events.iter().filter(|e| e.access == a).count();
    assert!(count(Access::ColorWrite) > 0, "{:#?}", &t.events[..5]);
    assert!(count(Access::TransferRead) >= 6, "one per frame");
    assert!(count(Access::MemoryFill) >= 6, "the clear of every frame");
    assert_eq!(count(Access::TextureRead), 0);
    assert!(
        t.events
            .iter()
            .any(|e| e.access == Access::ColorWrite && e.draw == Some(draw))
    );
    // Trace order: positions never go backwards, and each frame clears, draws, then
    // transfers.
    for w in t.events.windows(2) {
        assert!(w[0].pos.writes <= w[1].pos.writes, "{w:?}");
    }
    let first_fill = t
        .events
        .iter()
        .position(|e| e.access == Access::MemoryFill)
        .expect("fill");
    let first_draw = t
        .events
        .iter()
        .position(|e| e.access == Access::ColorWrite)
        .expect("draw");
    let first_transfer = t
        .events
        .iter()
        .position(|e| e.access == Access::TransferRead)
        .expect("transfer");
    assert!(first_fill < first_draw && first_draw < first_transfer);
    for e in &t.events {
        assert!(
            e.range.overlaps(&AddrRange {
                start: color + 64,
                len: 4
            }),
            "{e:?}"
        );
        if e.access == Access::ColorWrite {
            assert_eq!(e.range.start, color);
            assert!(e.what.starts_with("colour buffer RGBA8 "), "{}", e.what);
        }
    }
}

#[test]
fn a_texture_is_loaded_then_sampled() {
    let mut r = replay("cube");
    let (_, tex, _) = cube_addresses(&mut r);
    let mut events = Vec::new();
    let stats = who_touched(&mut r, AddrRange { start: tex, len: 1 }, &mut |e| {
        events.push(e.clone());
        true
    });
    let first_load = events
        .iter()
        .position(|e| e.access == Access::MemoryLoad)
        .expect("the trace loads the texture");
    let first_sample = events
        .iter()
        .position(|e| e.access == Access::TextureRead)
        .expect("a draw samples it");
    assert!(first_load < first_sample);
    assert!(events.iter().all(|e| !matches!(
        e.access,
        Access::ColorWrite | Access::DepthWrite | Access::TransferRead
    )));
    let sample = &events[first_sample];
    assert!(sample.draw.is_some());
    assert!(sample.what.contains("texture unit"), "{}", sample.what);
    assert!(sample.what.contains("level"), "{}", sample.what);
    assert_eq!(stats.events, events.len() as u64);
    assert!(stats.draws > 60, "the whole trace was replayed: {stats:?}");
}

#[test]
fn the_collector_is_bounded_and_an_untouched_range_has_no_events() {
    let mut r = replay("cube");
    let (color, _, _) = cube_addresses(&mut r);
    let t = Timeline::collect(
        &mut r,
        AddrRange {
            start: color,
            len: 16,
        },
        3,
        &mut || false,
    );
    assert_eq!(t.events.len(), 3);
    assert_eq!(t.dropped, t.stats.events - 3);
    // Stopping early (cancel) ends the pass after the first event.
    let mut seen = 0;
    let stats = who_touched(
        &mut r,
        AddrRange {
            start: color,
            len: 16,
        },
        &mut |_| {
            seen += 1;
            false
        },
    );
    assert_eq!(seen, 1);
    assert!(stats.draws < 5);
    // An address no one uses.
    let t = Timeline::collect(
        &mut r,
        AddrRange {
            start: 0x0800_0000,
            len: 16,
        },
        10,
        &mut || false,
    );
    assert!(t.events.is_empty());
    assert!(t.stats.draws > 60);
}

#[test]
fn geoshader_vertex_arrays_are_read_by_the_draws_that_use_them() {
    let mut r = replay("geoshader");
    let index = r.build_index();
    let gs = index
        .draws
        .iter()
        .find(|d| d.info.geometry_shader)
        .expect("GS draw")
        .clone();
    r.seek(Target::AfterDraw(gs.info.draw), &mut ());
    let loader = gpu_core::vertex_loader::LoaderConfig::from_regs(&r.gpu().regs);
    let l = loader
        .loaders
        .iter()
        .find(|l| l.component_count > 0)
        .expect("a loader");
    let start = loader.base + l.offset;
    let t = Timeline::collect(&mut r, AddrRange { start, len: 1 }, 1000, &mut || false);
    assert!(
        t.events
            .iter()
            .any(|e| e.access == Access::VertexRead && e.draw == Some(gs.info.draw)),
        "{:?}",
        t.events
    );
    assert!(t.events.iter().any(|e| e.access == Access::MemoryLoad));
}
