//! The shader debugger's engine: re-runs one vertex of a draw on the reference interpreter with
//! a [`Recorder`] and packages the steps for stepping forward and backward.
//!
//! Stage: vertex shader (VS), replayed for inspection. Inputs: a [`DrawInspection`] (the draw's
//! loaded vertices in invocation order, its shaded outputs, and the [`VsContext`]: program,
//! uniforms, unit setup and the unit's persistent registers before the draw) plus the vertex
//! ids of the draw. Output: a [`ShaderTrace`]. Registers read: none directly (the context was
//! decoded from SH_ENTRYPOINT, SH_INPUTBUFFER_CONFIG, SH_ATTRIBUTES_PERMUTATION_LOW/HIGH,
//! SH_OUTMAP_MASK and the bool/int uniform registers by the worker).
//!
//! Fidelity: the shader unit keeps its registers between invocations (`pica-core.md` §5.4), so
//! the invocations before the chosen one are re-run first (untraced) from the state the unit
//! had before the draw; the result is compared with the pipeline's own output for the vertex.
//! A vertex the post-transform cache served is traced through the invocation that shaded its
//! vertex id.
//!
//! Geometry shader ([`trace_gs`]): the pipeline recorded each GS invocation's unit registers
//! (inputs loaded from the VS outputs), uniforms (including those the variable/fixed input modes
//! wrote) and EMITs (`gpu_core::debug::GsInvocation`); the invocation is re-run from exactly that
//! state, its EMITs are tied to the steps that executed them, and compared with the recorded ones.

use gpu_core::shading::{OutputMap, OutputMask};
use shader_unit::decode::{Instr, Program};
use shader_unit::interp::{EmitSink, ExecConfig, Recorder, Uniforms, UnitState, Vec4, run};

use super::protocol::{
    CHECKPOINT_STEPS, DrawInspection, ShaderRegs, ShaderTrace, TraceEmit, VsContext, apply_step,
};

/// Most steps recorded for one invocation (bounded memory; the real budget may be larger).
pub const MAX_TRACE_STEPS: u64 = 200_000;

/// Most earlier invocations re-run to rebuild the persistent registers.
pub const MAX_PRE_RUNS: usize = 50_000;

fn to_regs(attrs: &[[f32; 4]]) -> [[f32; 4]; 16] {
    let mut out = [[0.0; 4]; 16];
    for (o, a) in out.iter_mut().zip(attrs) {
        *o = *a;
    }
    out
}

fn same_bits(a: &[[f32; 4]], b: &[[f32; 4]]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits()))
}

/// Traces vertex `index_in_draw` (k) of the draw. `vertex_ids[k]` is the vertex id of position
/// k (index buffer value or k + VERTEX_OFFSET), used to find the invocation that shaded a
/// vertex the cache served.
pub fn trace_vertex(
    insp: &DrawInspection,
    vertex_ids: &[u32],
    index_in_draw: u32,
) -> Result<ShaderTrace, String> {
    let d = &insp.detail;
    let vs: &VsContext = &insp.vs;
    let mut notes = Vec::new();
    // The invocation that produced vertex k: its own load, else the latest load of its id.
    let invocation = d
        .loaded
        .iter()
        .position(|l| l.index_in_draw == index_in_draw)
        .or_else(|| {
            let id = *vertex_ids.get(index_in_draw as usize)?;
            d.loaded
                .iter()
                .rposition(|l| l.vertex_id == id && l.index_in_draw <= index_in_draw)
        })
        .ok_or_else(|| {
            format!("vertex {index_in_draw} was not loaded by this draw (no invocation shaded it)")
        })?;
    if d.loaded
        .get(invocation)
        .is_some_and(|l| l.index_in_draw != index_in_draw)
    {
        notes.push(format!(
            "vertex {index_in_draw} came from the post-transform cache; tracing invocation {invocation} (vertex {}), which shaded the same vertex id",
            d.loaded[invocation].index_in_draw
        ));
    }
    let mut state = vs.state.clone();
    let config: ExecConfig = vs.config;
    let first = if invocation > MAX_PRE_RUNS {
        notes.push(format!(
            "the {invocation} earlier invocations of this draw were not re-run; temporaries (r0-r15) may differ from the pipeline's"
        ));
        invocation
    } else {
        0
    };
    for l in d.loaded.iter().take(invocation).skip(first) {
        let attrs = to_regs(&l.attrs);
        vs.setup.input.load(&attrs, &mut state.inputs);
        // Errors of earlier invocations were diagnosed by the pipeline; keep going.
        let _ = run(
            &vs.program,
            &vs.uniforms,
            &mut state,
            vs.setup.entry,
            &config,
            &mut (),
            &mut (),
        );
    }
    let loaded = d.loaded.get(invocation).ok_or("invocation out of range")?;
    vs.setup
        .input
        .load(&to_regs(&loaded.attrs), &mut state.inputs);
    let expected = d
        .shaded
        .iter()
        .find(|s| s.index_in_draw == index_in_draw)
        .map(|s| s.outputs.clone());
    let mut t = record(
        &vs.program,
        &vs.uniforms,
        state,
        vs.setup.entry,
        config,
        vs.setup.outputs.0,
        expected,
    );
    notes.append(&mut t.notes);
    t.notes = notes;
    t.draw = insp.draw;
    t.index_in_draw = index_in_draw;
    Ok(t)
}

/// Runs one invocation from `state` (inputs already loaded) with a [`Recorder`] and packages
/// it: checkpoints, compacted outputs (by `output_mask`, bit i = o_i), comparison with
/// `expected`. `draw` and `index_in_draw` of the result are 0.
pub fn record(
    program: &Program,
    uniforms: &Uniforms,
    state: UnitState,
    entry: u32,
    config: ExecConfig,
    output_mask: u16,
    expected: Option<Vec<[f32; 4]>>,
) -> ShaderTrace {
    record_with(
        program,
        uniforms,
        state,
        entry,
        config,
        output_mask,
        expected,
        &mut (),
    )
}

/// Collects the EMITs of a re-run, compacted and mapped like the pipeline's.
struct EmitCollector<'a> {
    mask: OutputMask,
    map: &'a OutputMap,
    emits: Vec<TraceEmit>,
    dropped: u64,
}

impl EmitSink for EmitCollector<'_> {
    fn vertex(&mut self, slot: u8, outputs: &[Vec4; 16]) {
        if self.emits.len() >= gpu_core::debug::GsInvocation::MAX_EMITS {
            self.dropped += 1;
            return;
        }
        let mut slots = [[0.0f32; 4]; 16];
        let n = self.mask.compact(outputs, &mut slots);
        self.emits.push(TraceEmit {
            step: 0,
            slot,
            primitive: false,
            winding: false,
            outputs: slots[..n].to_vec(),
            vertex: self.map.to_vertex(&slots, n),
        });
    }

    fn primitive(&mut self, _vertices: [&[Vec4; 16]; 3], winding: bool) {
        if self.dropped == 0
            && let Some(e) = self.emits.last_mut()
        {
            e.primitive = true;
            e.winding = winding;
        }
    }
}

/// Traces geometry-shader invocation `invocation` of the draw from the state the pipeline
/// recorded for it; the trace's `index_in_draw` is the invocation number and its `emits` list
/// every EMIT with the step that executed it.
pub fn trace_gs(insp: &DrawInspection, invocation: u32) -> Result<ShaderTrace, String> {
    let d = &insp.detail;
    let gs = insp
        .gs
        .as_ref()
        .ok_or("this draw does not use the geometry shader")?;
    let inv = d
        .gs_invocations
        .iter()
        .find(|i| i.index == invocation)
        .ok_or_else(|| {
            if u64::from(invocation) < d.gs_invocations.len() as u64 + d.gs_invocations_dropped {
                format!(
                    "invocation {invocation} was not recorded (only the first {} of the draw are kept)",
                    d.gs_invocations.len()
                )
            } else {
                format!("the draw has no geometry-shader invocation {invocation}")
            }
        })?;
    let regs: Box<[u32; 0x300]> = d
        .regs
        .clone()
        .into_boxed_slice()
        .try_into()
        .map_err(|_| "the draw detail has no register file".to_string())?;
    let map = OutputMap::from_regs(&regs);
    let mut sink = EmitCollector {
        mask: gs.setup.outputs,
        map: &map,
        emits: Vec::new(),
        dropped: 0,
    };
    let mut t = record_with(
        &gs.program,
        &inv.uniforms(),
        inv.state.to_state(),
        inv.entry,
        gs.config,
        gs.setup.outputs.0,
        None,
        &mut sink,
    );
    // The k-th EMIT instruction executed is the k-th emitted vertex.
    let emit_steps = t
        .steps
        .iter()
        .enumerate()
        .filter(|(_, s)| matches!(s.instr, Instr::Emit))
        .map(|(i, _)| i);
    for (e, step) in sink.emits.iter_mut().zip(emit_steps) {
        e.step = step;
    }
    let recorded: Vec<_> = inv.emits.iter().map(|e| bit_rows(&e.outputs)).collect();
    let rerun: Vec<_> = sink.emits.iter().map(|e| bit_rows(&e.outputs)).collect();
    if inv.emits_dropped == 0 && sink.dropped == 0 && recorded != rerun {
        t.notes.push(
            "this re-run's emitted vertices differ from the pipeline's recorded ones".to_string(),
        );
    }
    if let Some(e) = &inv.error {
        t.notes
            .push(format!("in the pipeline this invocation stopped: {e}"));
    }
    if sink.dropped > 0 {
        t.notes.push(format!(
            "only the first {} EMITs are listed ({} more)",
            sink.emits.len(),
            sink.dropped
        ));
    }
    t.emits = sink.emits;
    t.draw = insp.draw;
    t.index_in_draw = invocation;
    Ok(t)
}

fn bit_rows(v: &[Vec4]) -> Vec<[u32; 4]> {
    v.iter().map(|x| x.map(f32::to_bits)).collect()
}

/// [`record`] with a sink for geometry-shader output.
#[allow(clippy::too_many_arguments)]
fn record_with<E: EmitSink>(
    program: &Program,
    uniforms: &Uniforms,
    mut state: UnitState,
    entry: u32,
    mut config: ExecConfig,
    output_mask: u16,
    expected: Option<Vec<[f32; 4]>>,
    sink: &mut E,
) -> ShaderTrace {
    let mut notes = Vec::new();
    let initial = ShaderRegs {
        temps: state.temps,
        outputs: state.outputs,
    };
    let inputs = state.inputs;
    let budget = config.budget;
    if config.budget > MAX_TRACE_STEPS {
        config.budget = MAX_TRACE_STEPS;
    }
    let mut rec = Recorder::new();
    let result = run(
        program, uniforms, &mut state, entry, &config, &mut rec, sink,
    );
    let result = match result {
        Ok(stats) => Ok(stats.instructions),
        Err(e) => {
            if budget > MAX_TRACE_STEPS
                && matches!(e, shader_unit::interp::ExecError::BudgetExceeded { .. })
            {
                notes.push(format!(
                    "the trace stops after {MAX_TRACE_STEPS} steps (the pipeline's budget is {budget})"
                ));
            }
            Err(e.to_string())
        }
    };
    let mut checkpoints = vec![initial];
    let mut regs = initial;
    for (i, step) in rec.steps.iter().enumerate() {
        apply_step(&mut regs, step);
        if (i + 1) % CHECKPOINT_STEPS == 0 {
            checkpoints.push(regs);
        }
    }
    let mut slots = Vec::new();
    for (i, o) in state.outputs.iter().enumerate() {
        if output_mask & (1 << i) != 0 {
            slots.push(*o);
        }
    }
    if let Some(e) = &expected
        && !same_bits(e, &slots)
    {
        notes.push(
            "this re-run's outputs differ from the pipeline's (see the output table)".to_string(),
        );
    }
    ShaderTrace {
        draw: 0,
        index_in_draw: 0,
        inputs,
        initial,
        steps: rec.steps,
        checkpoints,
        result,
        slots,
        expected,
        notes,
        emits: Vec::new(),
    }
}

/// True when the trace's outputs equal the pipeline's bit for bit.
pub fn outputs_match(t: &ShaderTrace) -> Option<bool> {
    t.expected.as_ref().map(|e| same_bits(e, &t.slots))
}

/// The uniforms a DVLE's constant table sets (float constants are float24 bit patterns);
/// everything else is zero.
pub fn dvle_uniforms(dvle: &shader_unit::dvlb::Dvle) -> Uniforms {
    use shader_unit::dvlb::ConstantValue;
    use shader_unit::float::F24;
    let mut u = Uniforms::default();
    for c in &dvle.constants {
        let r = usize::from(c.register);
        match c.value {
            ConstantValue::Bool(b) => {
                if let Some(slot) = u.b.get_mut(r) {
                    *slot = b;
                }
            }
            ConstantValue::Int(v) => {
                if let Some(slot) = u.i.get_mut(r) {
                    *slot = v;
                }
            }
            ConstantValue::Float(w) => {
                if let Some(slot) = u.f.get_mut(r) {
                    *slot = w.map(|x| F24::from_bits(x & 0xFF_FFFF).to_f32());
                }
            }
            ConstantValue::Unknown => {}
        }
    }
    u
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_steps_and_checkpoints() {
        // A loop of 256 iterations: long enough to cross several checkpoints.
        let src = "
.out outpos position
.constf one(1.0, 1.0, 1.0, 1.0)
.consti cnt(255, 0, 1, 0)
.proc main
    mov r0, v0
    for cnt
        add r0, one, r0
    .end
    mov outpos, r0
    end
.end
";
        let bytes = shader_unit::asm::assemble_to_shbin(&[("t.v.pica", src)]).expect("assembles");
        let dvlb = shader_unit::dvlb::Dvlb::parse(&bytes).expect("parses");
        let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());
        let dvle = &dvlb.dvles[0];
        let uniforms = dvle_uniforms(dvle);
        let mut state = UnitState::default();
        state.inputs[0] = [1.0, 2.0, 3.0, 4.0];
        let t = record(
            &program,
            &uniforms,
            state,
            dvle.main_start,
            ExecConfig::default(),
            1,
            Some(vec![[257.0, 258.0, 259.0, 260.0]]),
        );
        assert_eq!(t.result, Ok(t.steps.len() as u64));
        assert!(t.steps.len() > 200, "{}", t.steps.len());
        assert_eq!(t.slots, vec![[257.0, 258.0, 259.0, 260.0]]);
        assert_eq!(outputs_match(&t), Some(true));
        assert!(t.checkpoints.len() > 3);
        // Stepping: before the loop r0 = v0; the final state has the outputs.
        assert_eq!(t.regs_at(Some(0)).temps[0], [1.0, 2.0, 3.0, 4.0]);
        let last = t.regs_at(Some(t.steps.len() - 1));
        assert_eq!(last.outputs[0], [257.0, 258.0, 259.0, 260.0]);
        // Every checkpoint-based reconstruction equals a linear replay.
        let mut regs = t.initial;
        for (i, s) in t.steps.iter().enumerate() {
            apply_step(&mut regs, s);
            assert_eq!(t.regs_at(Some(i)), regs, "step {i}");
        }
        assert_eq!(t.regs_at(None), t.initial);
    }
}
