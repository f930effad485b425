//! Recording of geometry-shader invocations in the draw detail (`DrawDetail::gs_invocations`)
//! on the bundled `assets/demos/geoshader.ctf` (point mode, one VS vertex of two output slots
//! per invocation, six EMITs = two triangles per invocation).

use gpu_core::debug::{
    DetailLimits, DrawDetail, DrawInfo, DrawStats, EventLog, GpuEvent, GsInvocation, Observer,
};
use gpu_core::lcd::Screen;
use gpu_core::replay::{Replay, Target};
use gpu_core::shading::{InputConfig, OutputMap, OutputMask, ShaderUnit};
use pica_cmd::citrace::CiTrace;
use shader_unit::decode::Program;
use shader_unit::interp::{EmitSink, Vec4, run};

fn geoshader() -> Vec<u8> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../assets/demos/geoshader.ctf");
    std::fs::read(path).expect("bundled demo")
}

fn bits(v: &[[f32; 4]]) -> Vec<[u32; 4]> {
    v.iter().map(|x| x.map(f32::to_bits)).collect()
}

/// Every draw's info, stats and detail of one whole replay.
fn record_all() -> Vec<(DrawInfo, DrawStats, DrawDetail)> {
    let mut r = Replay::new(CiTrace::from_bytes(geoshader()).expect("parses"));
    let mut log = EventLog::new(usize::MAX, true);
    r.run_until(Target::End, &mut log);
    let ends: Vec<_> = log
        .events
        .iter()
        .filter_map(|e| match e {
            GpuEvent::DrawEnd { info, stats } => Some((*info, *stats)),
            _ => None,
        })
        .collect();
    assert_eq!(ends.len(), log.details.len());
    ends.into_iter()
        .zip(log.details)
        .map(|((info, stats), (d, detail))| {
            assert_eq!(info.draw, d);
            (info, stats, detail)
        })
        .collect()
}

#[test]
fn gs_invocations_receive_the_vs_outputs_and_emit_the_draws_triangles() {
    let draws = record_all();
    let gs_draws: Vec<_> = draws.iter().filter(|(i, _, _)| i.geometry_shader).collect();
    assert_eq!(gs_draws.len(), 4, "one star draw per frame");
    for (info, stats, detail) in &draws {
        if !info.geometry_shader {
            assert!(detail.gs_invocations.is_empty(), "draw {}", info.draw);
            continue;
        }
        let regs: [u32; 0x300] = detail.regs[..].try_into().expect("0x300 registers");
        let gs_in = InputConfig::from_regs(&regs, ShaderUnit::Geometry);
        let vs_out = OutputMask::from_regs(&regs, ShaderUnit::Vertex).count();
        let gs_mask = OutputMask::from_regs(&regs, ShaderUnit::Geometry);
        assert_eq!(gs_in.count, 2, "input stride 2");
        assert_eq!(vs_out, 2);
        assert_eq!(detail.gs_invocations_dropped, 0);
        assert_eq!(detail.gs_invocations.len() as u64, stats.gs_invocations);
        assert_eq!(stats.gs_invocations, u64::from(info.count), "one per star");
        let mut primitives = 0;
        let mut emitted = 0;
        for (k, inv) in detail.gs_invocations.iter().enumerate() {
            assert_eq!(inv.index as usize, k);
            // Point mode, one vertex per invocation: invocation k gets vertex k's outputs.
            assert_eq!(inv.vertices, vec![k as u32], "draw {} inv {k}", info.draw);
            assert_eq!(inv.input_uniforms, None);
            let shaded = detail
                .shaded
                .iter()
                .find(|s| s.index_in_draw == k as u32)
                .expect("vertex shaded");
            for a in 0..usize::from(gs_in.count) {
                let reg = usize::from(gs_in.permutation[a]);
                assert_eq!(
                    bits(&inv.state.inputs[reg..=reg]),
                    bits(&shaded.outputs[a..=a]),
                    "draw {} invocation {k}: v{reg} = VS output slot {a}",
                    info.draw
                );
            }
            assert_eq!(inv.error, None);
            assert!(inv.instructions > 0);
            assert_eq!(inv.emits.len(), 6);
            assert_eq!(inv.primitives(), 2);
            let slots: Vec<u8> = inv.emits.iter().map(|e| e.slot).collect();
            assert_eq!(slots, [0, 1, 2, 0, 1, 2]);
            assert!(inv.emits[2].primitive && inv.emits[5].primitive);
            for e in &inv.emits {
                assert_eq!(e.outputs.len(), gs_mask.count());
                // The colour comes from the VS output slot 1 (v1), clamped by the output map.
                assert_eq!(e.vertex.color, shaded.outputs[1].map(|c| c.abs().min(1.0)));
            }
            primitives += inv.primitives() as u64;
            emitted += inv.emits.len() as u64;
        }
        assert_eq!(primitives, stats.triangles_assembled, "draw {}", info.draw);
        assert_eq!(emitted, 3 * stats.triangles_assembled);
        // The first triangle of invocation 0 is the first assembled triangle of the draw.
        let first = &detail.gs_invocations[0].emits;
        let assembled = &detail.assembled[0];
        for (e, v) in first[..3].iter().zip(assembled) {
            assert_eq!(e.vertex.pos, v.pos);
        }
    }
}

/// Collects EMITs of a re-run, compacted like the pipeline's.
struct Emits(OutputMask, Vec<Vec<Vec4>>);

impl EmitSink for Emits {
    fn vertex(&mut self, _slot: u8, outputs: &[Vec4; 16]) {
        let mut slots = [[0.0; 4]; 16];
        let n = self.0.compact(outputs, &mut slots);
        self.1.push(slots[..n].to_vec());
    }
    fn primitive(&mut self, _vertices: [&[Vec4; 16]; 3], _winding: bool) {}
}

#[test]
fn a_recorded_invocation_re_runs_identically() {
    let bytes = geoshader();
    let mut r = Replay::new(CiTrace::from_bytes(bytes).expect("parses"));
    let index = r.build_index();
    let rec = index
        .draws
        .iter()
        .find(|d| d.info.geometry_shader)
        .expect("a GS draw")
        .clone();
    r.seek(Target::AfterWrite(rec.before.writes), &mut ());
    let gpu = r.gpu();
    let program = Program::new(&gpu.gs.code, &gpu.gs.opdescs);
    let config = gpu.pipeline.gs_unit.config;
    let mut log = EventLog::new(usize::MAX, true);
    r.run_until(Target::AfterDraw(rec.info.draw), &mut log);
    let (_, detail) = log
        .details
        .iter()
        .find(|(d, _)| *d == rec.info.draw)
        .expect("detail");
    let regs: [u32; 0x300] = detail.regs[..].try_into().expect("registers");
    let mask = OutputMask::from_regs(&regs, ShaderUnit::Geometry);
    let _map = OutputMap::from_regs(&regs);
    for inv in detail.gs_invocations.iter().step_by(37) {
        let mut state = inv.state.to_state();
        let mut sink = Emits(mask, Vec::new());
        let stats = run(
            &program,
            &inv.uniforms(),
            &mut state,
            inv.entry,
            &config,
            &mut (),
            &mut sink,
        )
        .expect("runs");
        assert_eq!(stats.instructions, inv.instructions);
        let recorded: Vec<Vec<[u32; 4]>> = inv.emits.iter().map(|e| bits(&e.outputs)).collect();
        let rerun: Vec<Vec<[u32; 4]>> = sink.1.iter().map(|o| bits(o)).collect();
        assert_eq!(recorded, rerun, "invocation {}", inv.index);
    }
    // b15 is false for the draw's first invocation only if nothing ran the GS before; it is
    // set for every later one.
    assert!(
        detail.gs_invocations[1..]
            .iter()
            .all(|i| i.bool_uniforms & 0x8000 != 0)
    );
}

/// An observer that keeps at most `limit` GS invocations per draw.
struct Capped {
    limit: usize,
    details: Vec<(DrawInfo, DrawStats, DrawDetail)>,
}

impl Observer for Capped {
    fn wants_draw_detail(&self) -> bool {
        true
    }
    fn draw_detail_limits(&self) -> DetailLimits {
        DetailLimits {
            gs_invocations: self.limit,
            ..DetailLimits::DEFAULT
        }
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, detail: Option<DrawDetail>) {
        if let Some(d) = detail {
            self.details.push((*info, *stats, d));
        }
    }
}

#[test]
fn gs_invocations_are_bounded_and_counted() {
    let mut r = Replay::new(CiTrace::from_bytes(geoshader()).expect("parses"));
    let mut obs = Capped {
        limit: 5,
        details: Vec::new(),
    };
    r.run_until(Target::End, &mut obs);
    let mut seen = 0;
    for (info, stats, d) in &obs.details {
        if !info.geometry_shader {
            continue;
        }
        seen += 1;
        assert_eq!(d.gs_invocations.len(), 5);
        assert_eq!(d.gs_invocations_dropped, stats.gs_invocations - 5);
        assert!(d.truncated());
        assert!(d.gs_pending_vertices.is_empty());
        let first: Vec<&GsInvocation> = d.gs_invocations.iter().collect();
        assert_eq!(first[4].vertices, vec![4]);
    }
    assert_eq!(seen, 4);
}

#[test]
fn recording_does_not_change_the_picture() {
    let mut plain = Replay::new(CiTrace::from_bytes(geoshader()).expect("parses"));
    plain.run_until(Target::End, &mut ());
    let mut recorded = Replay::new(CiTrace::from_bytes(geoshader()).expect("parses"));
    recorded.run_until(Target::End, &mut EventLog::new(1 << 20, true));
    assert_eq!(
        plain.screen(Screen::Top).expect("top"),
        recorded.screen(Screen::Top).expect("top")
    );
}
