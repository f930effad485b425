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

use shader_unit::interp::{ExecConfig, Recorder, run};

use super::protocol::{
    CHECKPOINT_STEPS, DrawInspection, ShaderRegs, ShaderTrace, VsContext, apply_step,
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
        && a
            .iter()
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
    if d
        .loaded
        .get(invocation)
        .is_some_and(|l| l.index_in_draw != index_in_draw)
    {
        notes.push(format!(
            "vertex {index_in_draw} came from the post-transform cache; tracing invocation {invocation} (vertex {}), which shaded the same vertex id",
            d.loaded[invocation].index_in_draw
        ));
    }
    let mut state = vs.state.clone();
    let mut config: ExecConfig = vs.config;
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
    let loaded = d
        .loaded
        .get(invocation)
        .ok_or("invocation out of range")?;
    vs.setup.input.load(&to_regs(&loaded.attrs), &mut state.inputs);
    let initial = ShaderRegs {
        temps: state.temps,
        outputs: state.outputs,
    };
    let inputs = state.inputs;
    if config.budget > MAX_TRACE_STEPS {
        config.budget = MAX_TRACE_STEPS;
    }
    let mut rec = Recorder::new();
    let result = run(
        &vs.program,
        &vs.uniforms,
        &mut state,
        vs.setup.entry,
        &config,
        &mut rec,
        &mut (),
    );
    let result = match result {
        Ok(stats) => Ok(stats.instructions),
        Err(e) => {
            if vs.config.budget > MAX_TRACE_STEPS
                && matches!(e, shader_unit::interp::ExecError::BudgetExceeded { .. })
            {
                notes.push(format!(
                    "the trace stops after {MAX_TRACE_STEPS} steps (the pipeline's budget is {})",
                    vs.config.budget
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
    let mut slot_buf = [[0.0f32; 4]; 16];
    let n = vs.setup.outputs.compact(&state.outputs, &mut slot_buf);
    let slots = slot_buf.get(..n).unwrap_or(&[]).to_vec();
    let expected = d
        .shaded
        .iter()
        .find(|s| s.index_in_draw == index_in_draw)
        .map(|s| s.outputs.clone());
    if let Some(e) = &expected
        && !same_bits(e, &slots)
    {
        notes.push(
            "this re-run's outputs differ from the pipeline's (see the output table)".to_string(),
        );
    }
    Ok(ShaderTrace {
        draw: insp.draw,
        index_in_draw,
        inputs,
        initial,
        steps: rec.steps,
        checkpoints,
        result,
        slots,
        expected,
        notes,
    })
}

/// True when the trace's outputs equal the pipeline's bit for bit.
pub fn outputs_match(t: &ShaderTrace) -> Option<bool> {
    t.expected.as_ref().map(|e| same_bits(e, &t.slots))
}
