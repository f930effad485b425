// Unit tests of the parent module, compiled only under #[cfg(test)] (declared there).
//! Tests of the shading data paths: permutation, compaction, output map, GS input modes.

use super::*;
use crate::geometry::assembly::Topology;
use pica_cmd::regs::id;
use pica_cmd::regs::shader::{GSH_BASE, VSH_BASE, sh_offset};

const VS_BLOCK: usize = VSH_BASE as usize;
const GS_BLOCK: usize = GSH_BASE as usize;
const SH_INPUTBUFFER_CONFIG: usize = sh_offset::INPUTBUFFER_CONFIG as usize;
const SH_ATTRIBUTES_PERMUTATION_LOW: usize = sh_offset::ATTRIBUTES_PERMUTATION_LOW as usize;
const SH_ATTRIBUTES_PERMUTATION_HIGH: usize = sh_offset::ATTRIBUTES_PERMUTATION_HIGH as usize;
const SH_OUTMAP_MASK: usize = sh_offset::OUTMAP_MASK as usize;
const REG_SH_OUTMAP_TOTAL: usize = id::SH_OUTMAP_TOTAL as usize;
const REG_SH_OUTMAP_O0: usize = id::SH_OUTMAP_O0 as usize;
const REG_GEOSTAGE_CONFIG: usize = id::GEOSTAGE_CONFIG as usize;
const REG_VSH_COM_MODE: usize = id::VSH_COM_MODE as usize;
const REG_VSH_OUTMAP_TOTAL1: usize = id::VSH_OUTMAP_TOTAL1 as usize;
const REG_VSH_OUTMAP_TOTAL2: usize = id::VSH_OUTMAP_TOTAL2 as usize;
const REG_GSH_MISC0: usize = id::GSH_MISC0 as usize;
const REG_GSH_MISC1: usize = id::GSH_MISC1 as usize;

type Regs = Box<[u32; 0x300]>;

fn regs() -> Regs {
    Box::new([0u32; 0x300])
}

/// Packs four 5-bit semantic ids into an SH_OUTMAP_Oi word.
fn outmap(x: u32, y: u32, z: u32, w: u32) -> u32 {
    x | (y << 8) | (z << 16) | (w << 24)
}

fn vec_slots(values: &[Vec4]) -> [Vec4; NUM_REGS] {
    let mut s = [[0.0; 4]; NUM_REGS];
    s[..values.len()].copy_from_slice(values);
    s
}

#[test]
fn input_permutation_and_count() {
    let mut r = regs();
    // Slots 0, 1, 2 → v3, v0, v15; count 3; the slot-3 nibble (v1) is beyond the count.
    r[VS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x1F03;
    r[VS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0xA000_0002;
    let cfg = InputConfig::from_regs(&r, ShaderUnit::Vertex);
    assert_eq!(cfg.count, 3);
    assert_eq!(&cfg.permutation[..4], &[3, 0, 15, 1]);
    let attrs = vec_slots(&[[1.0; 4], [2.0; 4], [3.0; 4], [4.0; 4]]);
    let mut inputs = [[-1.0; 4]; NUM_REGS];
    cfg.load(&attrs, &mut inputs);
    assert_eq!(inputs[3], [1.0; 4]);
    assert_eq!(inputs[0], [2.0; 4]);
    assert_eq!(inputs[15], [3.0; 4]);
    assert_eq!(
        inputs[1], [-1.0; 4],
        "slot 3 is beyond the count: v1 keeps its value"
    );

    // High nibbles: slots 8-15; the GS block is decoded from its own registers.
    r[GS_BLOCK + SH_ATTRIBUTES_PERMUTATION_HIGH] = 0x0123_4567;
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0xF;
    let gs = InputConfig::from_regs(&r, ShaderUnit::Geometry);
    assert_eq!(gs.count, 16);
    assert_eq!(&gs.permutation[8..], &[7, 6, 5, 4, 3, 2, 1, 0]);
}

#[test]
fn output_mask_compacts_in_register_order() {
    let mut r = regs();
    r[VS_BLOCK + SH_OUTMAP_MASK] = 0x11;
    let mask = OutputMask::from_regs(&r, ShaderUnit::Vertex);
    assert_eq!(mask.count(), 2);
    assert_eq!(mask.registers().collect::<Vec<_>>(), vec![0, 4]);
    let mut outputs = [[0.0; 4]; NUM_REGS];
    for (i, o) in outputs.iter_mut().enumerate() {
        *o = [i as f32; 4];
    }
    let mut slots = [[9.0; 4]; NUM_REGS];
    assert_eq!(mask.compact(&outputs, &mut slots), 2);
    assert_eq!(&slots[..3], &[[0.0; 4], [4.0; 4], [9.0; 4]]);
    let all = OutputMask(0xFFFF);
    assert_eq!(all.compact(&outputs, &mut slots), 16);
    assert_eq!(slots, outputs);
}

/// A typical map: o0 position, o1 colour, o2 texcoord0 uv + unused, o3 quaternion, o4 view +
/// tc0.w, o5 tc1 + tc2.
fn typical_regs() -> Regs {
    let mut r = regs();
    r[REG_SH_OUTMAP_TOTAL] = 6;
    r[REG_SH_OUTMAP_O0] = outmap(0x00, 0x01, 0x02, 0x03);
    r[REG_SH_OUTMAP_O0 + 1] = outmap(0x08, 0x09, 0x0A, 0x0B);
    r[REG_SH_OUTMAP_O0 + 2] = outmap(0x0C, 0x0D, 0x1F, 0x1F);
    r[REG_SH_OUTMAP_O0 + 3] = outmap(0x04, 0x05, 0x06, 0x07);
    r[REG_SH_OUTMAP_O0 + 4] = outmap(0x12, 0x13, 0x14, 0x10);
    r[REG_SH_OUTMAP_O0 + 5] = outmap(0x0E, 0x0F, 0x16, 0x17);
    r
}

#[test]
fn output_map_routes_every_semantic() {
    let map = OutputMap::from_regs(&typical_regs());
    assert!(map.diagnostics.is_empty());
    assert_eq!(map.check_outputs(6), None);
    let slots = vec_slots(&[
        [1.0, 2.0, -3.0, 4.0],
        [0.25, 0.5, 0.75, 1.0],
        [5.0, 6.0, 7.0, 8.0],
        [0.0, 0.0, 0.6, 0.8],
        [9.0, 10.0, 11.0, 12.0],
        [13.0, 14.0, 15.0, 16.0],
    ]);
    let v = map.to_vertex(&slots, 6);
    assert_eq!(
        v,
        OutputVertex {
            pos: [1.0, 2.0, -3.0, 4.0],
            quat: [0.0, 0.0, 0.6, 0.8],
            color: [0.25, 0.5, 0.75, 1.0],
            tc0: [5.0, 6.0],
            tc1: [13.0, 14.0],
            tc2: [15.0, 16.0],
            tc0_w: 12.0,
            view: [9.0, 10.0, 11.0],
        }
    );
}

/// A vertex whose every semantic is unmapped: all components read 1.0 (hardware fact SH-15).
fn unmapped_vertex() -> OutputVertex {
    OutputVertex {
        pos: [1.0; 4],
        quat: [1.0; 4],
        color: [1.0; 4],
        tc0: [1.0; 2],
        tc1: [1.0; 2],
        tc2: [1.0; 2],
        tc0_w: 1.0,
        view: [1.0; 3],
    }
}

#[test]
fn unmapped_semantics_read_one_and_total_limits_slots() {
    let mut r = typical_regs();
    r[REG_SH_OUTMAP_TOTAL] = 1; // only the position
    let map = OutputMap::from_regs(&r);
    let slots = vec_slots(&[[0.25; 4], [0.5; 4], [2.0; 4]]);
    let v = map.to_vertex(&slots, 3);
    assert_eq!(
        v,
        OutputVertex {
            pos: [0.25; 4],
            ..unmapped_vertex()
        }
    );
}

#[test]
fn colour_is_abs_clamped() {
    let map = OutputMap::from_regs(&typical_regs());
    let cases: [(Vec4, Vec4); 3] = [
        ([-0.5, 2.0, -7.0, 0.0], [0.5, 1.0, 1.0, 0.0]),
        ([1.0, -1.0, 0.999, -0.0], [1.0, 1.0, 0.999, 0.0]),
        (
            [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1e-30],
            [1.0, 1.0, 1.0, 1e-30],
        ),
    ];
    for (color, want) in cases {
        let slots = vec_slots(&[[0.0; 4], color]);
        let v = map.to_vertex(&slots, 2);
        assert_eq!(v.color, want, "{color:?}");
        assert!(v.color.iter().all(|c| c.is_sign_positive()));
    }
}

#[test]
fn invalid_and_padding_semantics() {
    let mut r = regs();
    r[REG_SH_OUTMAP_TOTAL] = 2;
    // x → pos.x, y → 0x11 (padding), z → 0x18 (invalid), w → 0x1E (invalid)
    r[REG_SH_OUTMAP_O0] = outmap(0x00, 0x11, 0x18, 0x1E);
    // slot 1: colour r from x, w → 0x15 (padding); y and z dropped
    r[REG_SH_OUTMAP_O0 + 1] = outmap(0x08, 0x1F, 0x1F, 0x15);
    let map = OutputMap::from_regs(&r);
    assert_eq!(
        map.diagnostics,
        vec![
            ShadingDiag::InvalidSemantic {
                slot: 0,
                component: 2,
                semantic: 0x18
            },
            ShadingDiag::InvalidSemantic {
                slot: 0,
                component: 3,
                semantic: 0x1E
            },
        ]
    );
    assert_eq!(map.semantics[0], [0x00, 0x11, 0x18, 0x1E]);
    let v = map.to_vertex(&vec_slots(&[[1.0, 2.0, 3.0, 4.0], [0.5, 6.0, 7.0, 8.0]]), 2);
    assert_eq!(
        v,
        OutputVertex {
            pos: [1.0, 1.0, 1.0, 1.0],
            color: [0.5, 1.0, 1.0, 1.0],
            ..unmapped_vertex()
        }
    );
    let d = map.diagnostics[0].to_diagnostic(Some(2));
    assert!(d.detail.contains("0x18"), "{}", d.detail);
}

#[test]
fn outmap_beyond_enabled_outputs_reads_zero() {
    let map = OutputMap::from_regs(&typical_regs());
    assert_eq!(
        map.check_outputs(2),
        Some(ShadingDiag::OutmapBeyondOutputs {
            total: 6,
            enabled: 2
        })
    );
    // Stale data in slot 2 must not leak into tc0.
    let slots = vec_slots(&[[1.0; 4], [0.5; 4], [7.0; 4]]);
    let v = map.to_vertex(&slots, 2);
    assert_eq!(v.tc0, [0.0, 0.0]);
    assert_eq!(v.color, [0.5; 4]);
}

#[test]
fn duplicate_semantic_later_component_wins() {
    let mut r = regs();
    r[REG_SH_OUTMAP_TOTAL] = 2;
    r[REG_SH_OUTMAP_O0] = outmap(0x00, 0x00, 0x1F, 0x1F);
    r[REG_SH_OUTMAP_O0 + 1] = outmap(0x1F, 0x1F, 0x00, 0x1F);
    let map = OutputMap::from_regs(&r);
    let v = map.to_vertex(&vec_slots(&[[1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 3.0, 0.0]]), 2);
    assert_eq!(v.pos[0], 3.0);
}

/// Registers for a GS draw in `mode` with `vs_outputs` VS output slots.
fn gs_regs(mode: u32, vs_outputs: u32) -> Regs {
    let mut r = regs();
    r[REG_GEOSTAGE_CONFIG] = 2;
    r[REG_VSH_COM_MODE] = 1;
    r[REG_VSH_OUTMAP_TOTAL1] = vs_outputs - 1;
    r[REG_VSH_OUTMAP_TOTAL2] = vs_outputs - 1;
    r[REG_GSH_MISC0] = mode;
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0000;
    r
}

#[test]
fn gs_config_decodes_fields() {
    let mut r = gs_regs(0x0003_4702 | (5 << 16), 2);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0105;
    r[REG_GSH_MISC1] = 2;
    let cfg = GsConfig::from_regs(&r);
    assert!(cfg.enabled);
    assert_eq!(cfg.mode, GsInputMode::FixedPrimitive);
    assert_eq!(cfg.fixed_vertex_count, 8);
    assert_eq!(cfg.stride, 5);
    assert_eq!(cfg.start_uniform, 5 | 3);
    assert_eq!(cfg.vs_output_count, 2);
    assert_eq!(cfg.gs_input_count, 6);
    assert_eq!(cfg.main_vertex_count, 3);
    // Stride 5 ≠ 2 outputs.
    assert_eq!(
        cfg.diagnostics,
        vec![ShadingDiag::GsRequirement(
            "fixed-primitive mode: stride should equal the VS output count"
        )]
    );
    assert!(!GsConfig::from_regs(&regs()).enabled);
    assert_eq!(GsConfig::from_regs(&regs()).diagnostics, vec![]);
}

#[test]
fn gs_config_requirements() {
    // A clean point-mode configuration.
    let mut r = gs_regs(0, 2);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0005;
    assert_eq!(GsConfig::from_regs(&r).diagnostics, vec![]);
    // 5 inputs is not a multiple of 2 outputs; com mode 0; mismatched 0x251; wrong unit mode.
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0xA000_0004;
    r[REG_VSH_COM_MODE] = 0;
    r[REG_VSH_OUTMAP_TOTAL2] = 3;
    let cfg = GsConfig::from_regs(&r);
    assert_eq!(cfg.diagnostics.len(), 4, "{:?}", cfg.diagnostics);
    // Unknown mode.
    let cfg = GsConfig::from_regs(&gs_regs(7, 1));
    assert_eq!(cfg.mode, GsInputMode::Unknown(7));
    assert_eq!(cfg.effective_mode(), GsInputMode::Point);
    assert!(cfg.diagnostics.contains(&ShadingDiag::UnknownGsMode(7)));
    // Variable mode without the 0x229 flag.
    let cfg = GsConfig::from_regs(&gs_regs(1, 1));
    assert_eq!(cfg.diagnostics.len(), 1);
}

struct GsHarness {
    cfg: GsConfig,
    buf: GsInputBuffer,
    uniforms: [Vec4; NUM_FLOAT_UNIFORMS],
    perm: InputConfig,
    inputs: [Vec4; NUM_REGS],
}

impl GsHarness {
    fn new(r: &Regs) -> Self {
        let cfg = GsConfig::from_regs(r);
        let mut buf = GsInputBuffer::default();
        assert_eq!(buf.reconfigure(&cfg), None);
        Self {
            cfg,
            buf,
            uniforms: [[-1.0; 4]; NUM_FLOAT_UNIFORMS],
            perm: InputConfig::from_regs(r, ShaderUnit::Geometry),
            inputs: [[-1.0; 4]; NUM_REGS],
        }
    }

    /// Submits a vertex whose slot s holds (vertex·10 + s) in every lane.
    fn vertex(&mut self, vertex: u32) -> (GsFeed, Option<ShadingDiag>) {
        let slots: [Vec4; NUM_REGS] = std::array::from_fn(|s| [(vertex * 10) as f32 + s as f32; 4]);
        self.buf.submit_vertex(
            &self.cfg,
            &slots,
            &mut self.uniforms,
            &self.perm,
            &mut self.inputs,
        )
    }

    fn x(&self, range: std::ops::Range<usize>) -> Vec<f32> {
        self.uniforms[range].iter().map(|u| u[0]).collect()
    }
}

#[test]
fn gs_point_mode_fills_inputs_through_the_permutation() {
    // 2 VS outputs, 6 GS inputs → the GS runs every third vertex; permutation reverses v0-v5.
    let mut r = gs_regs(0, 2);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0005;
    r[GS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x0001_2345;
    let mut h = GsHarness::new(&r);
    assert!(!h.buf.needs_count());
    assert_eq!(h.vertex(1).0, GsFeed::Pending);
    assert_eq!(h.vertex(2).0, GsFeed::Pending);
    assert!(!h.buf.is_empty());
    assert_eq!(h.vertex(3), (GsFeed::Run, None));
    assert!(h.buf.is_empty());
    let x: Vec<f32> = h.inputs[..7].iter().map(|v| v[0]).collect();
    assert_eq!(x, vec![31.0, 30.0, 21.0, 20.0, 11.0, 10.0, -1.0]);
    // The next batch starts from scratch.
    assert_eq!(h.vertex(4).0, GsFeed::Pending);
}

#[test]
fn gs_point_mode_drops_what_does_not_fit() {
    // 2 VS outputs, 3 GS inputs: the second vertex only contributes its first slot.
    let mut r = gs_regs(0, 2);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0002;
    r[GS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x210;
    let mut h = GsHarness::new(&r);
    assert!(!h.cfg.diagnostics.is_empty());
    assert_eq!(h.vertex(1).0, GsFeed::Pending);
    assert_eq!(h.vertex(2).0, GsFeed::Run);
    let x: Vec<f32> = h.inputs[..3].iter().map(|v| v[0]).collect();
    assert_eq!(x, vec![10.0, 11.0, 20.0]);
}

#[test]
fn gs_fixed_primitive_mode_fills_uniforms() {
    // 2 outputs per vertex, 3 vertices per invocation, start at c4.
    let r = {
        let mut r = gs_regs(2 | (2 << 8) | (1 << 12) | (4 << 16), 2);
        r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0100;
        r
    };
    let mut h = GsHarness::new(&r);
    assert_eq!(h.cfg.diagnostics, vec![]);
    assert_eq!(h.vertex(1).0, GsFeed::Pending);
    assert_eq!(h.vertex(2).0, GsFeed::Pending);
    assert_eq!(h.vertex(3), (GsFeed::Run, None));
    assert_eq!(
        h.x(3..11),
        vec![-1.0, 10.0, 11.0, 20.0, 21.0, 30.0, 31.0, -1.0]
    );
    // The next batch overwrites from c4 again.
    assert_eq!(h.vertex(5).0, GsFeed::Pending);
    assert_eq!(h.x(4..6), vec![50.0, 51.0]);
}

#[test]
fn gs_fixed_primitive_overflow_is_bounded() {
    // 16 outputs per vertex, 16 vertices, start c15: 256 uniforms wanted, only c15-c95 exist.
    let mut r = gs_regs(2 | (15 << 8) | (15 << 12) | (15 << 16), 16);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0100;
    let mut h = GsHarness::new(&r);
    let mut diags = vec![];
    for v in 0..15 {
        let (feed, d) = h.vertex(v);
        assert_eq!(feed, GsFeed::Pending);
        diags.extend(d);
    }
    let (feed, d) = h.vertex(15);
    diags.extend(d);
    assert_eq!(feed, GsFeed::Run);
    assert_eq!(diags, vec![ShadingDiag::GsUniformOverflow(96)]);
    assert_eq!(
        h.uniforms[95][0], 50.0,
        "c95 = c(15 + 16·5 + 0): vertex 5, slot 0"
    );
}

#[test]
fn gs_variable_primitive_mode() {
    // 3 VS outputs; 2 main vertices (0x254 = 1); batches are "count, vertices…".
    let mut r = gs_regs(1, 3);
    r[REG_GEOSTAGE_CONFIG] = 0x8000_0002;
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0100;
    r[REG_GSH_MISC1] = 1;
    let mut h = GsHarness::new(&r);
    assert_eq!(h.cfg.diagnostics, vec![]);
    assert!(h.buf.needs_count());
    assert!(h.buf.is_empty());
    h.buf.submit_count(&h.cfg, 4, &mut h.uniforms);
    assert!(!h.buf.needs_count());
    assert_eq!(h.uniforms[0], [4.0; 4]);
    for v in 1..4 {
        assert_eq!(h.vertex(v).0, GsFeed::Pending);
    }
    assert_eq!(h.vertex(4), (GsFeed::Run, None));
    // c1-c3 vertex 1, c4-c6 vertex 2 (main: all outputs), c7 vertex 3, c8 vertex 4 (slot 0).
    assert_eq!(
        h.x(0..10),
        vec![4.0, 10.0, 11.0, 12.0, 20.0, 21.0, 22.0, 30.0, 40.0, -1.0]
    );
    assert!(h.buf.needs_count());
    // A zero count starts no batch.
    h.buf.submit_count(&h.cfg, 0, &mut h.uniforms);
    assert!(h.buf.needs_count());
    assert_eq!(h.uniforms[0], [0.0; 4]);
    // A huge batch cannot write past c95.
    h.buf.submit_count(&h.cfg, 200, &mut h.uniforms);
    let mut diags = vec![];
    for v in 0..199 {
        let (feed, d) = h.vertex(v);
        assert_eq!(feed, GsFeed::Pending);
        diags.extend(d);
    }
    assert_eq!(h.vertex(199).0, GsFeed::Run);
    assert_eq!(diags, vec![ShadingDiag::GsUniformOverflow(96)]);
}

#[test]
fn gs_reconfigure_drops_partial_batch() {
    let mut r = gs_regs(0, 1);
    r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0001;
    let mut h = GsHarness::new(&r);
    h.vertex(1);
    assert_eq!(h.buf.reconfigure(&h.cfg), Some(ShadingDiag::GsBatchDropped));
    assert!(h.buf.is_empty());
    assert_eq!(h.buf.reconfigure(&h.cfg), None);
}

#[test]
fn emitted_primitives_with_winding() {
    let vert = |x: f32| OutputVertex {
        pos: [x, 0.0, 0.0, 1.0],
        ..Default::default()
    };
    let mut pa = PrimitiveAssembler::new(Topology::Geometry);
    let mut out = vec![];
    submit_emitted(&mut pa, &[vert(0.0), vert(1.0), vert(2.0)], true, |t| {
        out.push(t)
    });
    submit_emitted(&mut pa, &[vert(3.0), vert(4.0), vert(5.0)], false, |t| {
        out.push(t)
    });
    let xs: Vec<[f32; 3]> = out.iter().map(|t| t.map(|v| v.pos[0])).collect();
    assert_eq!(xs, vec![[1.0, 0.0, 2.0], [3.0, 4.0, 5.0]]);
}

// ------------------------------------------------------------------------------------------
// Running shaders through the interpreter.
// ------------------------------------------------------------------------------------------

mod engine {
    use super::*;
    use crate::geometry::vertex_loader::AttributeSet;
    use shader_unit::interp::ExecConfig;

    /// Operand descriptor 0: mask xyzw, identity swizzles.
    const DESC_XYZW: u32 = 0xF | (0x1B << 5) | (0x1B << 14);
    const END: u32 = 0x22 << 26;
    const EMIT: u32 = 0x2A << 26;

    /// MOV dst, src (format 1u). Registers as encoded: o0-o15 = 0x00-0x0F, r0-r15 = 0x10-0x1F;
    /// sources v = 0x00-0x0F, r = 0x10-0x1F, c = 0x20-0x7F.
    fn mov(dst: u32, src: u32) -> u32 {
        (0x13 << 26) | (dst << 21) | (src << 12)
    }

    /// ADD dst, src1 (7-bit), src2 (5-bit).
    fn add(dst: u32, src1: u32, src2: u32) -> u32 {
        (dst << 21) | (src1 << 12) | (src2 << 7)
    }

    fn setemit(vtx: u32, prim: bool, winding: bool) -> u32 {
        (0x2B << 26) | (vtx << 24) | (u32::from(prim) << 23) | (u32::from(winding) << 22)
    }

    /// JMPU to `dst` when b`bool` is false (NUM bit 0 inverts).
    fn jmpu_if_false(b: u32, dst: u32) -> u32 {
        (0x2D << 26) | (b << 22) | (dst << 10) | 1
    }

    fn program(words: &[u32]) -> Arc<Program> {
        Program::new_shared(words, &[DESC_XYZW])
    }

    fn attrs(values: &[&[Vec4]]) -> Vec<AttributeSet> {
        values.iter().map(|v| AttributeSet::immediate(v)).collect()
    }

    /// VS: o0 ← v0 (position), o1 ← v1 (colour); attribute slot 0 → v1, slot 1 → v0.
    fn vs_regs() -> Regs {
        let mut r = regs();
        r[VS_BLOCK + SH_INPUTBUFFER_CONFIG] = 1;
        r[VS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x01;
        r[VS_BLOCK + SH_OUTMAP_MASK] = 0b11;
        r[REG_SH_OUTMAP_TOTAL] = 2;
        r[REG_SH_OUTMAP_O0] = outmap(0, 1, 2, 3);
        r[REG_SH_OUTMAP_O0 + 1] = outmap(8, 9, 10, 11);
        r
    }

    #[test]
    fn vertex_shader_batch_applies_permutation_and_compaction() {
        let r = vs_regs();
        let setup = ShadingSetup::from_regs(&r);
        assert_eq!(setup.diagnostics(), vec![]);
        assert_eq!(setup.vs.input.register_mask(), 0b11);
        let prog = program(&[mov(0, 0), mov(1, 1), END]);
        let mut engine = Interpreter::new(ExecConfig::default());
        let input = attrs(&[
            &[[0.5, 0.25, 0.0, 1.0], [1.0, 2.0, 3.0, 4.0]],
            &[[-0.5, 0.75, 0.0, 1.0], [5.0, 6.0, 7.0, 8.0]],
        ]);
        let mut slots = [[[9.0; 4]; NUM_REGS]; 2];
        let mut scratch = ShadeScratch::default();
        let stats = run_vertex_shader(
            &mut engine,
            &prog,
            &Uniforms::default(),
            &setup.vs,
            &input,
            &mut scratch,
            &mut slots,
        )
        .unwrap();
        assert_eq!(stats.vertices, 2);
        // Slot 0 of the attributes went to v1 → o1 → output slot 1, and vice versa.
        assert_eq!(
            &slots[0][..2],
            &[[1.0, 2.0, 3.0, 4.0], [0.5, 0.25, 0.0, 1.0]]
        );
        assert_eq!(
            &slots[1][..2],
            &[[5.0, 6.0, 7.0, 8.0], [-0.5, 0.75, 0.0, 1.0]]
        );
        let v = setup
            .output_map
            .to_vertex(&slots[1], setup.vs.outputs.count());
        assert_eq!(v.pos, [5.0, 6.0, 7.0, 8.0]);
        assert_eq!(v.color, [0.5, 0.75, 0.0, 1.0]);
    }

    #[test]
    fn disabled_outputs_take_no_slot() {
        let mut r = vs_regs();
        r[VS_BLOCK + SH_OUTMAP_MASK] = 0b1_0010; // o1 and o4
        let setup = ShadingSetup::from_regs(&r);
        let prog = program(&[mov(0, 0), mov(1, 1), mov(4, 0), END]);
        let mut engine = Interpreter::new(ExecConfig::default());
        let input = attrs(&[&[[1.0; 4], [2.0; 4]]]);
        let mut slots = [[[0.0; 4]; NUM_REGS]; 1];
        run_vertex_shader(
            &mut engine,
            &prog,
            &Uniforms::default(),
            &setup.vs,
            &input,
            &mut ShadeScratch::default(),
            &mut slots,
        )
        .unwrap();
        assert_eq!(&slots[0][..2], &[[1.0; 4], [2.0; 4]]);
    }

    #[test]
    fn unit_state_persists_between_vertices_and_batches() {
        // r0 += c0; o0 = r0: a shader with memory (§5.4).
        let mut r = vs_regs();
        r[VS_BLOCK + SH_OUTMAP_MASK] = 1;
        let setup = ShadingSetup::from_regs(&r);
        let prog = program(&[add(0x10, 0x20, 0x10), mov(0, 0x10), END]);
        let mut uniforms = Uniforms::default();
        uniforms.f[0] = [1.0; 4];
        let mut engine = Interpreter::new(ExecConfig::default());
        let mut scratch = ShadeScratch::default();
        let mut xs = vec![];
        for _ in 0..2 {
            let input = attrs(&[&[[0.0; 4]], &[[0.0; 4]], &[[0.0; 4]]]);
            let mut slots = [[[0.0; 4]; NUM_REGS]; 3];
            run_vertex_shader(
                &mut engine,
                &prog,
                &uniforms,
                &setup.vs,
                &input,
                &mut scratch,
                &mut slots,
            )
            .unwrap();
            xs.extend(slots.iter().map(|s| s[0][0]));
        }
        assert_eq!(xs, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    }

    #[test]
    fn endless_shader_is_a_bounded_error() {
        let setup = ShadingSetup::from_regs(&vs_regs());
        // MOV o0, v0; MOV o1, v1; then JMPU to itself while b0 is false: vertex 0 never ends.
        let prog = program(&[mov(0, 0), mov(1, 1), jmpu_if_false(0, 2), END]);
        let mut engine = Interpreter::new(ExecConfig {
            budget: 10_000,
            ..ExecConfig::default()
        });
        let input = attrs(&[&[[1.0; 4], [2.0; 4]], &[[3.0; 4], [4.0; 4]]]);
        let mut slots = [[[0.0; 4]; NUM_REGS]; 2];
        let err = run_vertex_shader(
            &mut engine,
            &prog,
            &Uniforms::default(),
            &setup.vs,
            &input,
            &mut ShadeScratch::default(),
            &mut slots,
        )
        .unwrap_err();
        assert_eq!(err.vertex, 0);
        assert!(matches!(
            err.error,
            ExecError::BudgetExceeded { budget: 10_000, .. }
        ));
        // With b0 set, the JMPU falls through to END.
        let mut uniforms = Uniforms::default();
        uniforms.b[0] = true;
        run_vertex_shader(
            &mut engine,
            &prog,
            &uniforms,
            &setup.vs,
            &input,
            &mut ShadeScratch::default(),
            &mut slots,
        )
        .unwrap();
        assert_eq!(&slots[1][..2], &[[4.0; 4], [3.0; 4]]);
    }

    #[test]
    fn route_without_gs_assembles_triangles() {
        let setup = ShadingSetup::from_regs(&vs_regs());
        let mut pa = PrimitiveAssembler::new(Topology::Strip);
        let mut tris = vec![];
        for k in 0..4 {
            let mut slots = [[0.0; 4]; NUM_REGS];
            slots[0] = [k as f32, 0.0, 0.0, 1.0];
            slots[1] = [-2.0, 0.5, 0.5, 1.0];
            let out = route_vertex(&setup, &slots, None, &mut pa, |t| tris.push(t)).unwrap();
            assert_eq!(out, RouteOutcome::default());
        }
        let xs: Vec<[f32; 3]> = tris.iter().map(|t| t.map(|v| v.pos[0])).collect();
        assert_eq!(xs, vec![[0.0, 1.0, 2.0], [2.0, 1.0, 3.0]]);
        assert_eq!(
            tris[0][0].color,
            [1.0, 0.5, 0.5, 1.0],
            "colour abs-clamped at the vertex"
        );
    }

    /// GS registers: VS has one output (position); GS outputs o0 only; map o0 → position.
    fn gs_draw_regs(mode: u32, gs_inputs: u32, to_uniform: u32) -> Regs {
        let mut r = vs_regs();
        r[VS_BLOCK + SH_OUTMAP_MASK] = 1;
        r[REG_GEOSTAGE_CONFIG] = 2 | if mode == 1 { 1 << 31 } else { 0 };
        r[REG_VSH_COM_MODE] = 1;
        r[REG_GSH_MISC0] = mode;
        r[GS_BLOCK + SH_INPUTBUFFER_CONFIG] = 0x0800_0000 | (to_uniform << 8) | (gs_inputs - 1);
        r[GS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x210;
        r[GS_BLOCK + SH_OUTMAP_MASK] = 1;
        r[REG_SH_OUTMAP_TOTAL] = 1;
        r
    }

    /// A GS that emits one triangle from three source registers, with the winding bit.
    fn triangle_gs(src: [u32; 3], winding: bool) -> Arc<Program> {
        program(&[
            setemit(0, false, false),
            mov(0, src[0]),
            EMIT,
            setemit(1, false, false),
            mov(0, src[1]),
            EMIT,
            setemit(2, true, winding),
            mov(0, src[2]),
            EMIT,
            END,
        ])
    }

    fn vs_out(x: f32) -> OutputSlots {
        let mut s = [[0.0; 4]; NUM_REGS];
        s[0] = [x, 0.0, 0.0, 1.0];
        s
    }

    #[test]
    fn gs_point_mode_emits_with_winding() {
        let setup = ShadingSetup::from_regs(&gs_draw_regs(0, 3, 0));
        assert_eq!(setup.diagnostics(), vec![]);
        let prog = triangle_gs([0x00, 0x01, 0x02], true);
        let mut unit = Interpreter::new(ExecConfig::default());
        let mut uniforms = Uniforms::default();
        let mut buffer = GsInputBuffer::default();
        assert_eq!(buffer.reconfigure(&setup.geometry), None);
        let mut pa = PrimitiveAssembler::new(Topology::Geometry);
        let mut tris = vec![];
        let mut invocations = 0;
        for k in 0..6 {
            let gs = GsContext {
                buffer: &mut buffer,
                unit: &mut unit,
                program: &prog,
                uniforms: &mut uniforms,
            };
            let out = route_vertex(&setup, &vs_out(k as f32), Some(gs), &mut pa, |t| {
                tris.push(t)
            })
            .unwrap();
            invocations += out.gs_invocations;
            if k % 3 == 2 {
                assert_eq!(out.gs_primitives, 1);
                assert!(out.gs_instructions >= 10);
            }
        }
        assert_eq!(invocations, 2);
        assert!(uniforms.b[GS_AFTER_INVOCATION_BOOL]);
        let xs: Vec<[f32; 3]> = tris.iter().map(|t| t.map(|v| v.pos[0])).collect();
        // The winding bit swaps the first two vertices of each emitted triangle.
        assert_eq!(xs, vec![[1.0, 0.0, 2.0], [4.0, 3.0, 5.0]]);
    }

    #[test]
    fn gs_fixed_primitive_mode_reads_uniforms() {
        // 3 vertices × 1 output into c4, c5, c6; the GS emits (c6, c5, c4) without winding.
        let setup = ShadingSetup::from_regs(&gs_draw_regs(2 | (2 << 8) | (4 << 16), 1, 1));
        assert_eq!(setup.diagnostics(), vec![]);
        let prog = triangle_gs([0x26, 0x25, 0x24], false);
        let mut unit = Interpreter::new(ExecConfig::default());
        let mut uniforms = Uniforms::default();
        let mut buffer = GsInputBuffer::default();
        buffer.reconfigure(&setup.geometry);
        let mut pa = PrimitiveAssembler::new(Topology::Geometry);
        let mut tris = vec![];
        for k in 0..3 {
            let gs = GsContext {
                buffer: &mut buffer,
                unit: &mut unit,
                program: &prog,
                uniforms: &mut uniforms,
            };
            route_vertex(&setup, &vs_out(10.0 + k as f32), Some(gs), &mut pa, |t| {
                tris.push(t)
            })
            .unwrap();
        }
        let xs: Vec<[f32; 3]> = tris.iter().map(|t| t.map(|v| v.pos[0])).collect();
        assert_eq!(xs, vec![[12.0, 11.0, 10.0]]);
    }

    #[test]
    fn gs_variable_primitive_mode_takes_counts_from_the_index_stream() {
        // Index stream: 3, v, v, v, 3, v, v, v. The GS emits (c1, c2, c3); c0 holds the count.
        let mut r = gs_draw_regs(1, 1, 1);
        r[REG_GSH_MISC1] = 2;
        let setup = ShadingSetup::from_regs(&r);
        assert_eq!(setup.diagnostics(), vec![]);
        let prog = triangle_gs([0x21, 0x22, 0x23], false);
        let mut unit = Interpreter::new(ExecConfig::default());
        let mut uniforms = Uniforms::default();
        let mut buffer = GsInputBuffer::default();
        buffer.reconfigure(&setup.geometry);
        let mut pa = PrimitiveAssembler::new(Topology::Geometry);
        let mut tris = vec![];
        let stream = [3, 7, 8, 9, 3, 4, 5, 6];
        for id in stream {
            if buffer.needs_count() {
                buffer.submit_count(&setup.geometry, id, &mut uniforms.f);
                assert_eq!(uniforms.f[0], [3.0; 4]);
                continue;
            }
            let gs = GsContext {
                buffer: &mut buffer,
                unit: &mut unit,
                program: &prog,
                uniforms: &mut uniforms,
            };
            route_vertex(&setup, &vs_out(id as f32), Some(gs), &mut pa, |t| {
                tris.push(t)
            })
            .unwrap();
        }
        let xs: Vec<[f32; 3]> = tris.iter().map(|t| t.map(|v| v.pos[0])).collect();
        assert_eq!(xs, vec![[7.0, 8.0, 9.0], [4.0, 5.0, 6.0]]);
    }

    #[test]
    fn gs_that_never_ends_reports_and_sets_b15() {
        let setup = ShadingSetup::from_regs(&gs_draw_regs(0, 1, 0));
        let prog = program(&[jmpu_if_false(0, 0), END]);
        let mut unit = Interpreter::new(ExecConfig {
            budget: 1000,
            ..ExecConfig::default()
        });
        let mut uniforms = Uniforms::default();
        let mut buffer = GsInputBuffer::default();
        buffer.reconfigure(&setup.geometry);
        let mut pa = PrimitiveAssembler::new(Topology::Geometry);
        let gs = GsContext {
            buffer: &mut buffer,
            unit: &mut unit,
            program: &prog,
            uniforms: &mut uniforms,
        };
        let err = route_vertex(&setup, &vs_out(1.0), Some(gs), &mut pa, |_| {}).unwrap_err();
        assert!(matches!(
            err,
            ExecError::BudgetExceeded { budget: 1000, .. }
        ));
        assert!(uniforms.b[GS_AFTER_INVOCATION_BOOL]);
    }

    /// Memory → loader → VS → strip assembly → clipping → viewport, with exact expectations.
    #[test]
    fn pipeline_from_memory_to_screen() {
        use crate::debug::DrawKind;
        use crate::geometry::clip::{ClipParams, clip_triangle};
        use crate::geometry::vertex_loader::{DrawCursor, DrawLimits, LoaderConfig};
        use crate::geometry::viewport::{Viewport, to_screen};
        use crate::memory::{FCRAM, PhysMem};

        // Attribute 0: f32 x4 position; attribute 1: u8 x4 colour (not normalised, so 255 and
        // 1 both clamp to 1.0 at the vertex). One loader, stride 20.
        let mut r = vs_regs();
        r[VS_BLOCK + SH_ATTRIBUTES_PERMUTATION_LOW] = 0x10; // slot 0 → v0, slot 1 → v1
        let base = FCRAM.base + 0x10_0000;
        r[0x200] = base >> 3;
        r[0x201] = 0xF | (0xD << 4); // attr0: f32 x4, attr1: u8 x4
        r[0x202] = 1 << 28; // two attributes, no fixed ones
        r[0x203] = 0; // loader 0 offset
        r[0x204] = 0x10; // entries: 0, 1
        r[0x205] = (20 << 16) | (2 << 28);
        r[0x228] = 4;
        let verts: [([f32; 4], [u8; 4]); 4] = [
            ([-0.5, -0.5, -0.5, 1.0], [255, 255, 255, 1]),
            ([0.5, -0.5, -0.5, 1.0], [0, 255, 0, 1]),
            ([-0.5, 0.5, -0.5, 1.0], [0, 0, 255, 1]),
            ([1.5, 0.5, -0.5, 1.0], [255, 0, 0, 1]),
        ];
        let mut mem = PhysMem::new();
        for (i, (pos, col)) in verts.iter().enumerate() {
            let mut bytes: Vec<u8> = pos.iter().flat_map(|f| f.to_le_bytes()).collect();
            bytes.extend_from_slice(col);
            mem.write(base + 20 * i as u32, &bytes).unwrap();
        }

        let cfg = LoaderConfig::from_regs(&r);
        assert_eq!(cfg.diagnostics, vec![]);
        let setup = ShadingSetup::from_regs(&r);
        let prog = program(&[mov(0, 0), mov(1, 1), END]);
        let mut engine = Interpreter::new(ExecConfig::default());
        let fixed = [[0.0; 4]; 16];
        let (mut cursor, cap) = DrawCursor::new(&cfg, DrawKind::Arrays, &DrawLimits::default());
        assert_eq!(cap, None);
        let mut loaded = vec![];
        while let Some(next) = cursor.next_id(&cfg, &mem) {
            let (k, id) = next.unwrap();
            let mut set = AttributeSet::default();
            cfg.load_vertex(&mem, &fixed, k, id, &mut set).unwrap();
            loaded.push(set);
        }
        let mut slots = vec![[[0.0; 4]; NUM_REGS]; loaded.len()];
        let uniforms = Uniforms::default();
        let mut scratch = ShadeScratch::default();
        run_vertex_shader(
            &mut engine,
            &prog,
            &uniforms,
            &setup.vs,
            &loaded,
            &mut scratch,
            &mut slots,
        )
        .unwrap();

        let mut pa = PrimitiveAssembler::new(Topology::Strip);
        let mut assembled = vec![];
        for s in &slots {
            route_vertex(&setup, s, None, &mut pa, |t| assembled.push(t)).unwrap();
        }
        assert_eq!(assembled.len(), 2);

        let vp = Viewport {
            half_width: 200.0,
            half_height: 120.0,
            x: 0,
            y: 0,
        };
        let mut screen = vec![];
        for tri in &assembled {
            let poly = clip_triangle(tri, &ClipParams::default());
            for t in poly.triangles() {
                screen.push(t.map(|v| {
                    let s = to_screen(&v, &vp);
                    assert_eq!((s.z_over_w, s.inv_w), (-0.5, 1.0));
                    (s.x, s.y, s.attrs.color)
                }));
            }
        }
        let white = [1.0; 4];
        let green = [0.0, 1.0, 0.0, 1.0];
        let blue = [0.0, 0.0, 1.0, 1.0];
        assert_eq!(
            screen,
            vec![
                // (v0, v1, v2) is inside.
                [
                    (100.0, 60.0, white),
                    (300.0, 60.0, green),
                    (100.0, 180.0, blue)
                ],
                // (v2, v1, v3) is cut by x = w: the fan starts at the cut on edge v3-v2.
                [
                    (400.0, 180.0, [0.75, 0.0, 0.25, 1.0]),
                    (100.0, 180.0, blue),
                    (300.0, 60.0, green)
                ],
                [
                    (400.0, 180.0, [0.75, 0.0, 0.25, 1.0]),
                    (300.0, 60.0, green),
                    (400.0, 120.0, [0.5, 0.5, 0.0, 1.0])
                ],
            ]
        );
    }
}
