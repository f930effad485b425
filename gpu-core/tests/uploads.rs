//! Command-processor side effects: shader uploads, uniform FIFOs in both modes, fixed
//! attributes, LUT ports, immediate-mode vertices, command-buffer jumps, FINALIZE, com mode.

mod common;
use common::*;

use gpu_core::debug::{DiagKind, EngineEvent, EventLog, GpuEvent};
use gpu_core::framebuffer::FramebufferConfig;
use gpu_core::gpu::Gpu;
use gpu_core::memory::{FCRAM, PhysMem};
use pica_cmd::cmdlist::CmdListBuilder;
use shader_unit::float::{pack_f24x4_f32, pack_f32x4};

fn exec(b: &CmdListBuilder) -> (Gpu, PhysMem, EventLog) {
    let list = b.to_bytes();
    let mut mem = PhysMem::new();
    mem.write(LIST_ADDR, &list).unwrap();
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(1_000_000, true);
    gpu.run_command_list(&mut mem, LIST_ADDR, list.len() as u32, &mut log);
    (gpu, mem, log)
}

#[test]
fn float_uniforms_in_f24_and_f32_modes() {
    let mut b = CmdListBuilder::new();
    // f24 mode: index 5, packed w-first, consecutive data ports.
    let v24 = pack_f24x4_f32([1.0, -2.0, 0.5, 4.0]);
    b.write(0x2C0, 5);
    b.repeated(0x2C1, 0xF, &v24).unwrap();
    // f32 mode (bit 31): index 95, four words w-first; then index 96 overflows (dropped).
    let v32 = pack_f32x4([0.1, 0.2, 0.3, 0.4]);
    b.write(0x2C0, 0x8000_0000 | 95);
    b.repeated(0x2C1, 0xF, &v32).unwrap();
    b.repeated(0x2C1, 0xF, &v32).unwrap();
    let (gpu, _, log) = exec(&b);
    assert_eq!(gpu.vs.float_uniforms[5], [1.0, -2.0, 0.5, 4.0]);
    assert_eq!(gpu.vs.float_uniforms[95], [0.1, 0.2, 0.3, 0.4]);
    assert!(
        log.diagnostics()
            .any(|d| d.kind == DiagKind::UploadOverflow)
    );
}

#[test]
fn code_and_opdesc_uploads_autoincrement_and_mirror_in_com_mode() {
    let mut b = CmdListBuilder::new();
    b.write(0x244, 0); // shared configuration: VS uploads reach the GS unit too
    b.write(0x2CB, 10);
    b.consecutive(0x2CC, 0xF, &[0xAAAA_0001, 0xAAAA_0002, 0xAAAA_0003])
        .unwrap();
    b.write(0x2D5, 3);
    b.repeated(0x2D6, 0xF, &[0x11, 0x22]).unwrap();
    b.write(0x244, 1); // separate configuration: no more mirroring
    b.write(0x2CB, 20);
    b.write(0x2CC, 0xBBBB_0001);
    let (gpu, _, _) = exec(&b);
    assert_eq!(
        &gpu.vs.code[10..13],
        &[0xAAAA_0001, 0xAAAA_0002, 0xAAAA_0003]
    );
    assert_eq!(&gpu.vs.opdescs[3..5], &[0x11, 0x22]);
    assert_eq!(
        &gpu.gs.code[10..13],
        &[0xAAAA_0001, 0xAAAA_0002, 0xAAAA_0003]
    );
    assert_eq!(&gpu.gs.opdescs[3..5], &[0x11, 0x22]);
    assert_eq!(gpu.vs.code[20], 0xBBBB_0001);
    assert_eq!(gpu.gs.code[20], 0);
    assert_eq!(gpu.vs.code_index, 21);
}

#[test]
fn fixed_attributes_and_lut_ports() {
    let mut b = CmdListBuilder::new();
    b.write(0x232, 2);
    b.consecutive(0x233, 0xF, &pack_f24x4_f32([1.0, 2.0, 3.0, 4.0]))
        .unwrap();
    // The index increments: the next vector goes to attribute 3.
    b.consecutive(0x233, 0xF, &pack_f24x4_f32([5.0, 6.0, 7.0, 8.0]))
        .unwrap();
    // Lighting LUT 3, entries 254, 255, then wrap to 0.
    b.write(0x1C5, (3 << 8) | 254);
    b.repeated(0x1C8, 0xF, &[0x100, 0x200, 0x300]).unwrap();
    // Fog LUT from index 127: 127 then 128 -> stored mod 128 at 0.
    b.write(0x0E6, 127);
    b.repeated(0x0E8, 0xF, &[7, 8]).unwrap();
    // Proctex colour table (4) at 10.
    b.write(0x0AF, (4 << 8) | 10);
    b.write(0x0B0, 0xFF00_FF00);
    let (gpu, _, _) = exec(&b);
    assert_eq!(gpu.fixed_attribs[2], [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(gpu.fixed_attribs[3], [5.0, 6.0, 7.0, 8.0]);
    assert_eq!(gpu.luts.lighting[3][254], 0x100);
    assert_eq!(gpu.luts.lighting[3][255], 0x200);
    assert_eq!(gpu.luts.lighting[3][0], 0x300);
    assert_eq!(gpu.luts.fog[127], 7);
    assert_eq!(gpu.luts.fog[0], 8);
    assert_eq!(gpu.luts.proctex_color[10], 0xFF00_FF00);
}

#[test]
fn masked_writes_keep_other_bytes() {
    let mut b = CmdListBuilder::new();
    b.write(0x107, 0x1122_3344);
    b.write_masked(0x107, 0b0010, 0xAABB_CCDD).unwrap();
    let (gpu, _, log) = exec(&b);
    assert_eq!(gpu.regs[0x107], 0x1122_CC44);
    let last = log
        .events
        .iter()
        .rev()
        .find_map(|e| match e {
            GpuEvent::RegWrite(w) => Some(*w),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        (last.old, last.new, last.mask),
        (0x1122_3344, 0x1122_CC44, 0b0010)
    );
}

#[test]
fn immediate_mode_vertices_draw_a_triangle() {
    let mut b = CmdListBuilder::new();
    setup(&mut b, 0, 0);
    b.write(0x232, 0xF);
    for (p, c) in [
        ([-1.0f32, -1.0, -0.5, 1.0], RED),
        ([1.0, -1.0, -0.5, 1.0], RED),
        ([-1.0, 1.0, -0.5, 1.0], RED),
    ] {
        b.consecutive(0x233, 0xF, &pack_f24x4_f32(p)).unwrap();
        b.consecutive(0x233, 0xF, &pack_f24x4_f32(c)).unwrap();
    }
    b.write(0x25F, 1);
    b.finalize();
    let (gpu, mem, log) = exec(&b);
    assert_eq!(gpu.draw_count, 1);
    let (_, detail) = &log.details[0];
    assert_eq!(detail.loaded.len(), 3);
    assert_eq!(detail.clipped.len(), 1);
    let fb = FramebufferConfig::from_regs(&gpu.regs);
    assert_eq!(fb.read_color(&mem, 2, 2).unwrap(), [255, 0, 0, 255]);
}

#[test]
fn jumps_between_buffers_and_finalize() {
    // Buffer A sets a register, jumps to B on channel 1; B sets another, FINALIZEs, and a
    // write after the FINALIZE never runs. The rest of A after the jump never runs either.
    let b_addr = FCRAM.base + 0x8000;
    let mut b_list = CmdListBuilder::new();
    b_list.write(0x0C3, 0xB0B0_B0B0);
    b_list.write(0x010, 0x1234_5678);
    b_list.write(0x0C4, 0xDEAD);
    let b_bytes = b_list.to_bytes();
    let mut a = CmdListBuilder::new();
    a.write(0x0CB, 0xA0A0_A0A0);
    a.write(0x239, (b_bytes.len() / 8) as u32);
    a.write(0x23B, b_addr >> 3);
    a.write(0x23D, 1);
    a.write(0x0CC, 0xDEAD);
    let a_bytes = a.to_bytes();
    let mut mem = PhysMem::new();
    mem.write(LIST_ADDR, &a_bytes).unwrap();
    mem.write(b_addr, &b_bytes).unwrap();
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(1000, false);
    assert!(gpu.run_command_list(&mut mem, LIST_ADDR, a_bytes.len() as u32, &mut log));
    assert_eq!(gpu.regs[0x0CB], 0xA0A0_A0A0);
    assert_eq!(gpu.regs[0x0C3], 0xB0B0_B0B0);
    assert_eq!(gpu.regs[0x0C4], 0);
    assert_eq!(gpu.regs[0x0CC], 0);
    let lists: Vec<_> = log
        .events
        .iter()
        .filter_map(|e| match e {
            GpuEvent::Engine(EngineEvent::CommandList { addr, .. }) => Some(*addr),
            _ => None,
        })
        .collect();
    assert_eq!(lists, vec![LIST_ADDR, b_addr]);
}

#[test]
fn shader_that_never_ends_is_stopped_and_reported() {
    let mut b = CmdListBuilder::new();
    setup(&mut b, 3, 0);
    // Replace the program with an endless loop: JMPU b0 (always true with invert) to itself.
    // `jmpu !b0, 0` : opcode 0x2D, bool id 0, dst 0, num bit 0 = 1 inverts.
    let jmpu = (0x2D << 26) | 1;
    b.write(0x2CB, 0);
    b.write(0x2CC, jmpu);
    b.write(0x2BA, 0x7FFF_0000);
    b.write(0x22E, 1);
    b.finalize();
    let verts = vertex_bytes(&[([0.0; 4], RED); 3]);
    let list = b.to_bytes();
    let mut mem = PhysMem::new();
    mem.write(LIST_ADDR, &list).unwrap();
    mem.write(VERTEX_ADDR, &verts).unwrap();
    let mut gpu = Gpu::new();
    let mut log = EventLog::new(1000, false);
    gpu.run_command_list(&mut mem, LIST_ADDR, list.len() as u32, &mut log);
    assert_eq!(gpu.draw_count, 1);
    assert!(log.diagnostics().any(|d| d.kind == DiagKind::ShaderError));
}
