//! End-to-end tests of the command processor: command lists built with pica-cmd's builder, run
//! through `Gpu` from physical memory, checked at the screen-space triangles and the pixels.

use gpu_core::debug::{DiagKind, EventLog, GpuEvent};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::gpu::Gpu;
use gpu_core::memory::PhysMem;
use pica_cmd::cmdlist::CmdListBuilder;

mod common;
use common::*;

fn run(list: &[u8], verts: &[u8]) -> (Gpu, PhysMem, EventLog) {
    let mut mem = PhysMem::new();
    mem.write(LIST_ADDR, list).unwrap();
    mem.write(VERTEX_ADDR, verts).unwrap();
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(100_000, true);
    gpu.run_command_list(&mut mem, LIST_ADDR, list.len() as u32, &mut log);
    (gpu, mem, log)
}

#[test]
fn triangle_from_a_command_list_reaches_screen_and_pixels() {
    let mut b = CmdListBuilder::new();
    setup(&mut b, 3, 0);
    b.write(0x22E, 1); // DRAWARRAYS
    b.finalize();
    // A triangle covering the lower-left half of clip space.
    let verts = vertex_bytes(&[
        ([-1.0, -1.0, -0.5, 1.0], RED),
        ([1.0, -1.0, -0.5, 1.0], RED),
        ([-1.0, 1.0, -0.5, 1.0], RED),
    ]);
    let (gpu, mem, log) = run(&b.to_bytes(), &verts);
    assert_eq!(gpu.draw_count, 1);
    let diags: Vec<_> = log.diagnostics().collect();
    assert!(diags.is_empty(), "unexpected diagnostics: {diags:?}");
    let (_, detail) = &log.details[0];
    assert_eq!(detail.loaded.len(), 3);
    assert_eq!(detail.clipped.len(), 1);
    let screen = detail.clipped[0];
    let xy: Vec<(f32, f32)> = screen.iter().map(|v| (v.x, v.y)).collect();
    assert_eq!(xy, vec![(0.0, 0.0), (64.0, 0.0), (0.0, 64.0)]);
    assert!(screen.iter().all(|v| v.z_over_w == -0.5 && v.inv_w == 1.0));

    let fb = FramebufferConfig::from_regs(&gpu.regs);
    // Window (x, y) with y up: the pixel at (2, 2) is inside, (60, 60) outside.
    assert_eq!(fb.read_color(&mem, 2, 2).unwrap(), [255, 0, 0, 255]);
    assert_eq!(fb.read_color(&mem, 60, 60).unwrap(), [0, 0, 0, 0]);
    // Exactly the pixels with centre strictly inside or on an owned edge: x + y < 63 for
    // centres (x + 0.5) + (y + 0.5) < 64, plus the diagonal centres on the hypotenuse if owned.
    let mut covered = 0;
    for y in 0..H {
        for x in 0..W {
            if fb.read_color(&mem, x, y).unwrap()[0] == 255 {
                covered += 1;
            }
        }
    }
    assert!((2016..=2080).contains(&covered), "covered {covered}");
}

#[test]
fn strip_winding_and_events() {
    let mut b = CmdListBuilder::new();
    setup(&mut b, 4, 1);
    b.write(0x22E, 1);
    b.finalize();
    let verts = vertex_bytes(&[
        ([-1.0, -1.0, -0.5, 1.0], RED),
        ([1.0, -1.0, -0.5, 1.0], RED),
        ([-1.0, 1.0, -0.5, 1.0], RED),
        ([1.0, 1.0, -0.5, 1.0], RED),
    ]);
    let (gpu, mem, log) = run(&b.to_bytes(), &verts);
    let (_, detail) = &log.details[0];
    assert_eq!(detail.assembled.len(), 2);
    let fb = FramebufferConfig::from_regs(&gpu.regs);
    // The strip covers the whole target.
    for (x, y) in [(0, 0), (63, 63), (63, 0), (0, 63), (32, 32)] {
        assert_eq!(
            fb.read_color(&mem, x, y).unwrap(),
            [255, 0, 0, 255],
            "pixel ({x}, {y})"
        );
    }
    let draws = log
        .events
        .iter()
        .filter(|e| matches!(e, GpuEvent::DrawEnd { .. }))
        .count();
    assert_eq!(draws, 1);
}

#[test]
fn absurd_vertex_count_is_bounded_and_reported() {
    let mut b = CmdListBuilder::new();
    setup(&mut b, 3, 0);
    b.write(0x228, 0xFFFF_FFFF);
    b.write(0x200, 0x1000_0000 >> 3); // vertex data in unmapped (I/O) space
    b.write(0x22E, 1);
    b.finalize();
    let (gpu, _mem, log) = run(&b.to_bytes(), &[]);
    assert_eq!(gpu.draw_count, 1);
    assert!(
        log.diagnostics()
            .any(|d| matches!(d.kind, DiagKind::UnmappedRead { .. }))
    );
}

#[test]
fn list_that_jumps_to_itself_terminates() {
    let mut b = CmdListBuilder::new();
    b.write(0x238, 2); // 16 bytes
    b.write(0x23A, LIST_ADDR >> 3);
    b.write(0x23C, 1);
    let mut mem = PhysMem::new();
    let list = b.to_bytes();
    mem.write(LIST_ADDR, &list).unwrap();
    // The first 16 bytes re-arm the jump to themselves: patch size to cover the jump command.
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(1000, false);
    gpu.run_command_list(&mut mem, LIST_ADDR, list.len() as u32, &mut log);
    // Either the jump target runs out (size 16 does not reach the jump) or the budget stops it.
    assert!(!gpu.list_in_progress());
}
