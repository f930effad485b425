//! Per-instruction tracing of the reference interpreter.
//!
//! Stage: optional observer of [`super::run`]. Inputs: one [`StepRecord`] per executed
//! instruction. Outputs: whatever the tracer keeps ([`Recorder`] keeps them all, in order).
//! Registers read: none.
//!
//! The tracer is a type parameter. `()` has `ENABLED = false`, so the interpreter's
//! `if T::ENABLED { … }` blocks vanish at compile time and the untraced path pays nothing.

use crate::decode::{DstReg, Instr};

use super::Vec4;
use super::flow::StackDepths;

/// Observer of executed instructions.
pub trait ShaderTracer {
    /// Whether the interpreter should build [`StepRecord`]s at all.
    const ENABLED: bool;

    /// Called after each executed instruction (only when `ENABLED`).
    fn step(&mut self, record: &StepRecord);
}

impl ShaderTracer for () {
    const ENABLED: bool = false;

    #[inline(always)]
    fn step(&mut self, _record: &StepRecord) {}
}

/// Everything one executed instruction did, for a step-through debugger.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct StepRecord {
    /// Word address of the instruction.
    pub pc: u16,
    /// The decoded instruction.
    pub instr: Instr,
    /// Source operand values as the ALU saw them (after relative addressing, swizzle, negation
    /// and, in flush mode, subnormal flushing); only the first `src_count` entries are valid.
    pub srcs: [Vec4; 3],
    /// Number of valid entries in `srcs`.
    pub src_count: u8,
    /// Destination register, its value before and after (all four lanes; the mask decides which
    /// changed). `None` for instructions without a register destination.
    pub dst: Option<(DstReg, Vec4, Vec4)>,
    /// a0.x, a0.y after the instruction.
    pub a0: [i32; 2],
    /// aL after the instruction.
    pub al: i32,
    /// Iterations still to run in the innermost active loop after the instruction, if any.
    pub loop_remaining: Option<u32>,
    /// cmp.x, cmp.y after the instruction.
    pub cmp: [bool; 2],
    /// Depths of the CALL, IF and LOOP stacks after the instruction.
    pub stack_depths: StackDepths,
    /// The PC the unit continues at (meaningless after END).
    pub next_pc: u16,
}

/// A tracer that keeps every step (bounded by the instruction budget of the run).
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    /// Recorded steps in execution order.
    pub steps: Vec<StepRecord>,
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ShaderTracer for Recorder {
    const ENABLED: bool = true;

    fn step(&mut self, record: &StepRecord) {
        self.steps.push(*record);
    }
}

/// Counts executed instructions per PC (a cheap profile; `counts[pc]`).
#[derive(Clone, Debug, Default)]
pub struct PcHistogram {
    /// Executions per word address.
    pub counts: Vec<u64>,
}

impl ShaderTracer for PcHistogram {
    const ENABLED: bool = true;

    fn step(&mut self, record: &StepRecord) {
        let pc = usize::from(record.pc);
        if self.counts.len() <= pc {
            self.counts.resize(pc + 1, 0);
        }
        if let Some(c) = self.counts.get_mut(pc) {
            *c += 1;
        }
    }
}
