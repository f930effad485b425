//! Straight-line traces of programs without divergent control flow.
//!
//! Stage: vertex shading (used by [`super::FastEngineN`] before each chunk). Inputs: a
//! [`Compiled`] program, the bool/int uniforms, the entry point, the carried aL and the
//! instruction budget. Outputs: a [`Trace`]: the arithmetic operations every lane executes, in
//! order, each with the aL in effect, plus the totals the sequencer would have produced
//! (instruction and unknown-opcode counts, components written, final aL) and how the run ends
//! (END, an execution error, or a read-before-write hazard). Registers read: none.
//!
//! When a program has no IFC/CALLC/JMPC/BREAKC, every lane of a chunk follows the same path,
//! and that path depends only on the key ([`TraceKey`]): the sequencer (the reference's
//! [`FlowStacks`], the budget, the hazard check) then runs once per key instead of once per
//! instruction and chunk. The simulation below is the lane executor's sequencer step for step
//! (`exec::Lanes::run_chunk`) without the lane work, so a trace's outcome is exactly what a
//! chunk run would report.

use crate::decode::Program;
use crate::interp::Uniforms;
use crate::interp::flow::FlowStacks;

use super::compile::{
    Compiled, DEP_A0X, DEP_A0Y, DEP_CMPX, DEP_CMPY, M_A0X, M_A0Y, M_CMPX, M_CMPY, Op, lane_deps,
};
use super::exec::{Abort, Step, branch_if, call};

/// Longest trace kept (arithmetic operations); longer paths use the per-instruction sequencer.
const MAX_STEPS: usize = 4096;
/// Most instructions simulated (including control flow) before giving up on a trace.
const MAX_SIM: u64 = 1 << 16;

/// What determines the path of a program without divergent control flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct TraceKey {
    /// Entry point.
    pub entry: u32,
    /// Bool uniforms (bit n = b n).
    pub bools: u16,
    /// Int uniforms.
    pub ints: [[u8; 4]; 4],
    /// aL at the start (carried from the previous vertex).
    pub al0: i32,
    /// Instruction budget.
    pub budget: u64,
}

/// The path of one key: see the module docs.
#[derive(Clone, Debug)]
pub(crate) struct Trace {
    /// The key it was simulated for.
    pub key: TraceKey,
    /// Arithmetic operations executed: (program counter, aL in effect).
    pub steps: Vec<(u32, i32)>,
    /// Instructions executed per invocation (control flow included), as the sequencer counts.
    pub count: u64,
    /// Undefined opcodes executed per invocation.
    pub unknown: u64,
    /// Temp/output components written.
    pub w_ro: u128,
    /// a0/aL/cmp bits written.
    pub w_m: u8,
    /// aL at END.
    pub al_end: i32,
    /// Temp components an invocation reads before writing them (bit r·4 + c), each of which
    /// some instruction may write: every vertex reads the value the previous vertex left. Only
    /// set when the values these components hold at END are computed from their values at the
    /// start, uniforms and constants alone (not from inputs), see [`carry_closed`]; the engine
    /// then feeds each lane its carried value (`super::FastEngineN`).
    pub carry: u64,
    /// How a chunk run would end: `None` = END reached.
    pub outcome: Option<Abort>,
}

/// Simulates the sequencer for `key`. `None` when the program has divergent control flow or the
/// path is too long to keep.
pub(crate) fn build(
    prog: &Compiled,
    program: &Program,
    uniforms: &Uniforms,
    key: TraceKey,
) -> Option<Trace> {
    if !prog.uniform_flow {
        return None;
    }
    let mut t = Trace {
        key,
        steps: Vec::new(),
        count: 0,
        unknown: 0,
        w_ro: 0,
        w_m: 0,
        al_end: key.al0,
        carry: 0,
        outcome: None,
    };
    let mut flow = FlowStacks::default();
    let mut al = key.al0;
    let mut pc = key.entry;
    let mut simulated = 0u64;
    loop {
        simulated += 1;
        if simulated > MAX_SIM {
            return None;
        }
        let Some(op) = prog.ops.get(pc as usize) else {
            t.outcome = Some(Abort::Error);
            return Some(t);
        };
        if t.count >= key.budget {
            t.outcome = Some(Abort::Error);
            return Some(t);
        }
        let meta = &prog.meta[pc as usize];
        if meta.hazard_m & !t.w_m != 0 {
            t.outcome = Some(Abort::Hazard);
            return Some(t);
        }
        t.carry |= meta.hazard_r & !(t.w_ro as u64);
        let step = match *op {
            Op::Bin { .. }
            | Op::Mad { .. }
            | Op::Un { .. }
            | Op::Mova { .. }
            | Op::Cmp { .. }
            | Op::Pass { .. } => {
                if t.steps.len() == MAX_STEPS {
                    return None;
                }
                t.steps.push((pc, al));
                Step::Next
            }
            Op::Nop => Step::Next,
            Op::Unknown => {
                t.unknown += 1;
                Step::Next
            }
            Op::End => Step::End,
            Op::Break => match flow.break_loop(&mut al) {
                Some(target) => Step::Break(target),
                None => {
                    t.outcome = Some(Abort::Error);
                    return Some(t);
                }
            },
            Op::BreakC { .. } | Op::CallC { .. } | Op::IfC { .. } | Op::JmpC { .. } => {
                return None;
            }
            Op::Call { dst, num } => call(&mut flow, pc, dst, num),
            Op::CallU { b, dst, num } => {
                if uniforms.b[usize::from(b & 15)] {
                    call(&mut flow, pc, dst, num)
                } else {
                    Step::Next
                }
            }
            Op::IfU { b, dst, num } => {
                branch_if(&mut flow, uniforms.b[usize::from(b & 15)], dst, num)
            }
            Op::Loop { i, dst } => {
                let iu = uniforms.i[usize::from(i & 3)];
                flow.push_loop(pc, u32::from(dst), iu, &mut al);
                Step::Next
            }
            Op::JmpU { b, dst, invert } => {
                if uniforms.b[usize::from(b & 15)] != invert {
                    Step::Jump(u32::from(dst))
                } else {
                    Step::Next
                }
            }
        };
        t.count += 1;
        t.w_ro |= meta.writes_ro;
        t.w_m |= meta.writes_m;
        let next = pc + 1;
        pc = match step {
            Step::End => {
                t.al_end = al;
                if t.carry != 0 && !carry_closed(program, &t.steps, t.carry) {
                    t.outcome = Some(Abort::Hazard);
                }
                return Some(t);
            }
            Step::Next => flow.next_pc(next, None, None, &mut al),
            Step::Jump(target) => flow.next_pc(next, Some(target), None, &mut al),
            Step::Break(target) => flow.next_pc(next, None, Some(target), &mut al),
        };
    }
}

/// Whether the values of the `carry` components at the end of the path `steps` depend only on
/// their values at the start (plus uniforms and constants): no input component reaches them,
/// directly or through temps, a0 (relative uniform reads) or cmp. Then the value vertex i reads
/// is the previous vertex's, which is a function of the batch's starting state alone, and the
/// engine can compute it serially without running the whole batch serially.
///
/// A forward pass over the path: `dep_r`/`dep_m` hold the temp components and a0/cmp bits whose
/// current value depends on an input (a write replaces its destination's mark).
fn carry_closed(program: &Program, steps: &[(u32, i32)], carry: u64) -> bool {
    let instrs = program.instrs();
    let mut dep_r = 0u64;
    let mut dep_m = 0u8;
    for &(pc, _) in steps {
        let Some(instr) = instrs.get(pc as usize) else {
            return false;
        };
        // All marks of one instruction are computed from the state before it (a destination
        // may also be an operand).
        let mut marks = [(0u8, false); 6];
        let mut n = 0;
        lane_deps(instr, |d| {
            let dep = d.v || d.r & dep_r != 0 || d.rel & dep_m != 0;
            if let Some(slot) = marks.get_mut(n) {
                *slot = (d.dst, dep);
                n += 1;
            }
        });
        for &(dst, dep) in &marks[..n] {
            let bit = match dst {
                0..=63 => {
                    dep_r = (dep_r & !(1u64 << dst)) | (u64::from(dep) << dst);
                    continue;
                }
                DEP_A0X => M_A0X,
                DEP_A0Y => M_A0Y,
                DEP_CMPX => M_CMPX,
                DEP_CMPY => M_CMPY,
                _ => continue,
            };
            dep_m = if dep { dep_m | bit } else { dep_m & !bit };
        }
    }
    dep_r & carry == 0
}
