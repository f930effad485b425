//! Batch execution API: many vertices through one decoded program.
//!
//! Stage: vertex shading. Inputs: a [`VertexBatch`] of input registers (one array per register,
//! structure-of-arrays at register granularity), the program and uniforms. Outputs: a
//! [`VertexBatch`] of the output registers the caller asked for. Registers read: none.
//!
//! The [`ShaderEngine`] trait is the seam where a faster (batched/SIMD/JIT) engine can replace
//! the reference [`Interpreter`] without changing callers, and lets tests run the same cases on
//! every engine (differential testing).

use std::sync::Arc;

use thiserror::Error;

use crate::decode::Program;

use super::{EmitSink, ExecConfig, ExecError, RunStats, ShaderTracer, Uniforms, UnitState, Vec4};

/// A batch of vertices: for every register enabled in `mask`, one `Vec4` per vertex.
///
/// Storage is one allocation, register-major: all vertices of the lowest enabled register, then
/// the next register, and so on.
#[derive(Clone, Debug, PartialEq)]
pub struct VertexBatch {
    len: usize,
    mask: u16,
    data: Vec<Vec4>,
}

impl VertexBatch {
    /// A zero-filled batch of `len` vertices carrying the registers in `mask` (bit n = register n).
    ///
    /// Allocates `len × popcount(mask)` vec4s; callers bound `len` (guest-controlled counts must
    /// be clamped before they get here).
    pub fn new(len: usize, mask: u16) -> Self {
        let regs = mask.count_ones() as usize;
        Self {
            len,
            mask,
            data: vec![[0.0; 4]; len.saturating_mul(regs)],
        }
    }

    /// Makes this batch what [`VertexBatch::new`]`(len, mask)` makes (zero-filled), keeping
    /// its allocation when it is large enough.
    pub fn reset(&mut self, len: usize, mask: u16) {
        let regs = mask.count_ones() as usize;
        self.len = len;
        self.mask = mask;
        self.data.clear();
        self.data.resize(len.saturating_mul(regs), [0.0; 4]);
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the batch holds no vertices.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Which registers the batch carries.
    pub fn mask(&self) -> u16 {
        self.mask
    }

    fn slot(&self, reg: usize) -> Option<usize> {
        if reg >= 16 || self.mask & (1 << reg) == 0 {
            return None;
        }
        Some((self.mask & ((1u16 << reg) - 1)).count_ones() as usize)
    }

    /// All vertices' values of register `reg`, if the batch carries it.
    pub fn reg(&self, reg: usize) -> Option<&[Vec4]> {
        let s = self.slot(reg)?;
        self.data.get(s * self.len..(s + 1) * self.len)
    }

    /// All vertices' values of register `reg`, mutably.
    pub fn reg_mut(&mut self, reg: usize) -> Option<&mut [Vec4]> {
        let s = self.slot(reg)?;
        let len = self.len;
        self.data.get_mut(s * len..(s + 1) * len)
    }

    /// Copies vertex `i`'s registers into `regs` (registers not carried are left alone).
    pub fn load_vertex(&self, i: usize, regs: &mut [Vec4; 16]) {
        if i >= self.len {
            return;
        }
        let mut slot = 0;
        for (r, dst) in regs.iter_mut().enumerate() {
            if self.mask & (1 << r) != 0 {
                if let Some(v) = self.data.get(slot * self.len + i) {
                    *dst = *v;
                }
                slot += 1;
            }
        }
    }

    /// Stores `regs` into vertex `i` for every carried register.
    pub fn store_vertex(&mut self, i: usize, regs: &[Vec4; 16]) {
        if i >= self.len {
            return;
        }
        let mut slot = 0;
        for (r, src) in regs.iter().enumerate() {
            if self.mask & (1 << r) != 0 {
                if let Some(v) = self.data.get_mut(slot * self.len + i) {
                    *v = *src;
                }
                slot += 1;
            }
        }
    }
}

/// A failed batch: which vertex failed and why. Vertices before it were written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
#[error("vertex {vertex}: {error}")]
pub struct BatchError {
    /// Index of the failing vertex in the batch.
    pub vertex: usize,
    /// What went wrong.
    #[source]
    pub error: ExecError,
}

/// Totals of a batch run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchStats {
    /// Vertices shaded.
    pub vertices: usize,
    /// Instructions executed over all vertices.
    pub instructions: u64,
    /// Undefined opcodes executed (as NOP) over all vertices.
    pub unknown_ops: u64,
}

/// A shader execution engine.
pub trait ShaderEngine {
    /// Short name for reports ("interp", "jit", …).
    fn name(&self) -> &'static str;

    /// Shades every vertex of `inputs` in order: loads its registers into v0–v15 (registers the
    /// batch does not carry keep their previous contents, pica-core.md §5.2), runs from `entry` to
    /// END, and stores the output registers enabled in `outputs.mask()`. Unit state persists from
    /// vertex to vertex and across calls. `outputs.len()` must be at least `inputs.len()`;
    /// extra output vertices are left untouched.
    fn run_batch(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError>;

    /// [`ShaderEngine::run_batch`] for a program shared through an `Arc`, with the same
    /// results. Engines that keep per-program work may recognise the `Arc` instead of
    /// comparing the program's words (a program never changes once built); the default
    /// forwards to `run_batch`.
    fn run_batch_shared(
        &mut self,
        program: &Arc<Program>,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        self.run_batch(program, uniforms, entry, inputs, outputs)
    }

    /// The unit's persistent registers.
    fn state(&self) -> &UnitState;

    /// The unit's persistent registers, mutably (e.g. to reset them).
    fn state_mut(&mut self) -> &mut UnitState;
}

/// The reference interpreter as an engine: unit state plus options.
#[derive(Clone, Debug, Default)]
pub struct Interpreter {
    /// Persistent registers.
    pub state: UnitState,
    /// Options.
    pub config: ExecConfig,
    /// Instructions executed by the last [`Interpreter::run_with`], also when it failed.
    pub last_executed: u64,
}

impl Interpreter {
    /// An interpreter with zeroed state and the given options.
    pub fn new(config: ExecConfig) -> Self {
        Self {
            state: UnitState::default(),
            config,
            last_executed: 0,
        }
    }

    /// Runs one invocation on the current state (inputs already loaded), untraced, no GS output.
    pub fn run(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
    ) -> Result<RunStats, ExecError> {
        super::run(
            program,
            uniforms,
            &mut self.state,
            entry,
            &self.config,
            &mut (),
            &mut (),
        )
    }

    /// Runs one invocation with a tracer and an emit sink.
    pub fn run_with<T: ShaderTracer, E: EmitSink>(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        tracer: &mut T,
        sink: &mut E,
    ) -> Result<RunStats, ExecError> {
        let (result, executed) = super::run_counted(
            program,
            uniforms,
            &mut self.state,
            entry,
            &self.config,
            tracer,
            sink,
        );
        self.last_executed = executed;
        result
    }
}

impl ShaderEngine for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn run_batch(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        let mut stats = BatchStats::default();
        let n = inputs.len().min(outputs.len());
        for i in 0..n {
            inputs.load_vertex(i, &mut self.state.inputs);
            let r = self
                .run(program, uniforms, entry)
                .map_err(|error| BatchError { vertex: i, error })?;
            outputs.store_vertex(i, &self.state.outputs);
            stats.vertices += 1;
            stats.instructions += r.instructions;
            stats.unknown_ops += u64::from(r.unknown_ops);
        }
        Ok(stats)
    }

    fn state(&self) -> &UnitState {
        &self.state
    }

    fn state_mut(&mut self) -> &mut UnitState {
        &mut self.state
    }
}
