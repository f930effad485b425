//! The reference shader interpreter: simple and obviously correct, one invocation at a time.
//!
//! Stage: vertex shader (VS) and geometry shader (GS) execution. Inputs: a decoded
//! [`Program`], [`Uniforms`] (c0–c95, i0–i3, b0–b15), the unit's persistent registers
//! ([`UnitState`]: v, r, o, a0, aL, cmp, emitter) and an entry point. Outputs: the o-registers in
//! [`UnitState`], GS primitives through an [`EmitSink`], optional per-step records through a
//! [`ShaderTracer`]. Registers read (by the caller, gpu-core): SH_ENTRYPOINT, uniforms,
//! code/opdesc uploads; this module reads no GPU registers itself.
//!
//! # Semantics
//!
//! - Numbers are host `f32` ([C]/[P] do the same; pica-core.md §4.3). [`ExecConfig::flush`]
//!   adds the hardware's subnormal/negative-zero flushing, [`ExecConfig::round_f24`] rounds
//!   every written value to float24.
//! - Source fetch (§5.5): register → relative addressing (§5.6, c registers only) → swizzle →
//!   negate. Destination lanes follow the descriptor mask. Per-op edge cases: [`alu`].
//! - Relative addressing (§5.6, recommended rule; [3DB], [P-INT], [CL] tests): only c operands
//!   are offset (hardware fact SH-12); an offset outside −128..=127 counts as 0; the index wraps
//!   with `& 0x7F`; indices 96–127 read (1, 1, 1, 1). An IDX on a v/r operand is ignored. Two
//!   hardware claims disagree on out-of-range reads: see [`RELATIVE_UNIFORM_RULE`] (SH-13).
//! - Control flow: the [3DB] stack model in [`flow`]. LOOP runs i.x + 1 times, aL = i.y, aL += i.z
//!   after every iteration; BREAK/BREAKC leave the innermost loop without the increment.
//! - State persists between invocations (§5.4): nothing in [`UnitState`] is cleared by [`run`],
//!   including cmp.x/cmp.y (like [C-JIT]/[P]; [C-INT] clears them).
//! - Undefined opcodes execute as NOP and are counted in [`RunStats::unknown_ops`]
//!   (UNVERIFIED: hardware behaviour unknown; [P] panics, [C] logs).
//! - Every invocation is bounded by [`ExecConfig::budget`] instructions
//!   ([`ExecError::BudgetExceeded`]); nothing here can loop forever or panic on any program.
//!
//! # Geometry shaders (pica-core.md §6.3)
//!
//! SETEMIT stores the vertex slot and the primitive/winding flags; EMIT copies all 16 output
//! registers into emitter slot `vertex_id` and, if the primitive flag is set, hands slots 0, 1, 2
//! and the winding flag to the [`EmitSink`]. Compaction by the GS output mask (0x28D) and
//! primitive assembly are the caller's job. The buffer has [`EMIT_BUFFER_LEN`] = 4 slots
//! ([3DB]: 2-bit vertex id; [C] has 3 and asserts id < 3) and is never cleared.
//!
//! Output banking (hardware fact SH-16, [`GS_OUTPUT_BANKING`]): the output registers exist twice.
//! Instructions write the current bank ([`UnitState::outputs`]); EMIT stores the current bank and
//! then switches to the other one ([`UnitState::output_bank`]), so an output component that was
//! not rewritten since the last EMIT still holds the value it had two EMITs ago. Vertex shaders
//! never EMIT, so they only ever see one bank.

pub mod alu;
mod batch;
pub mod flow;
mod trace;

#[cfg(test)]
mod tests;

pub use batch::{BatchError, BatchStats, Interpreter, ShaderEngine, VertexBatch};
pub use flow::{FlowStacks, StackDepths};
pub use trace::{PcHistogram, Recorder, ShaderTracer, StepRecord};

use thiserror::Error;

use crate::decode::{BinaryOp, Dst, DstReg, Instr, Program, RelAddr, Src, SrcReg, UnaryOp};
use crate::float::round_to_f24;

/// One shader register: `[x, y, z, w]` as host f32 (float24 on hardware; see the module docs).
pub type Vec4 = [f32; 4];

/// Number of float uniforms c0–c95.
pub const NUM_FLOAT_UNIFORMS: usize = 96;
/// Emitter buffer slots (SETEMIT vertex id is 2 bits, [3DB]).
pub const EMIT_BUFFER_LEN: usize = 4;
/// Default instruction budget per invocation.
///
/// Generous for real shaders (512 instructions with loops of at most 256 iterations rarely
/// exceed a few thousand steps) while stopping runaway programs quickly.
pub const DEFAULT_BUDGET: u64 = 1 << 20;

/// The value read through relative addressing for c-indices 96–127. // HW: [3DB], [P-INT], [CL].
pub const OUT_OF_RANGE_UNIFORM: Vec4 = [1.0; 4];

/// How a relatively addressed float-uniform read (`c[base + a0/aL]`) outside c0–c95 behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelativeUniformRule {
    /// Panda3DS PR #786 ("verified with our shader tests and on a real 3DS"): an offset outside
    /// −128..=127 counts as 0, the index is `(base + offset) mod 128`, indices 96–127 read
    /// [`OUT_OF_RANGE_UNIFORM`] (1, 1, 1, 1). Worked examples: c40[a0=128] reads c40,
    /// c40[a0=−42] reads (1, 1, 1, 1), c40[a0=−73] reads c95. Also [3DB] and [CL]'s tests.
    WrapMod128,
    /// Citra PR #6910 (Steveice10's hardware test: a negative a0 drew (0, 0, 0, 0)): any index
    /// `base + offset` outside 0..=95 reads (0, 0, 0, 0); the offset is not limited.
    ZeroOutside,
}

/// The out-of-range relative uniform rule in use.
///
/// UNVERIFIED(SH-13): the two hardware claims disagree (testdata/hw-facts.md SH-13). We keep
/// [`RelativeUniformRule::WrapMod128`]: it comes with worked examples that pin every part of the
/// rule, and the Citra observation is consistent with it when the indexed register of that test
/// fell on an index whose contents were (0, 0, 0, 0) — its base and a0 were not published. Switch
/// to [`RelativeUniformRule::ZeroOutside`] to follow Citra.
pub const RELATIVE_UNIFORM_RULE: RelativeUniformRule = RelativeUniformRule::WrapMod128;

/// Whether EMIT switches between two output-register banks (hardware fact SH-16).
///
/// HW: azahar PR #2338 (3D Thunderblade sprites; the azahar `shader_unit.h` comment says it was
/// verified on real hardware). UNVERIFIED: whether the bank selector is reset at the start of an
/// invocation; like every other unit register it persists here (pica-core.md §5.4). `false` gives
/// the single-bank model of every older emulator.
pub const GS_OUTPUT_BANKING: bool = true;

/// Shader uniforms of one unit.
#[derive(Clone, Debug, PartialEq)]
pub struct Uniforms {
    /// c0–c95 (`[x, y, z, w]`), host f32. On hardware these are float24; values uploaded in f24
    /// mode are exact in f32 ([`crate::float::unpack_f24x4_f32`]), values uploaded in f32 mode keep
    /// their f32 precision like [C]/[P] (pica-core.md §2.6).
    pub f: [Vec4; NUM_FLOAT_UNIFORMS],
    /// i0–i3 as (x = iterations − 1, y = aL start, z = aL step, w unused), unsigned bytes.
    pub i: [[u8; 4]; 4],
    /// b0–b15.
    pub b: [bool; 16],
}

impl Default for Uniforms {
    fn default() -> Self {
        Self {
            f: [[0.0; 4]; NUM_FLOAT_UNIFORMS],
            i: [[0; 4]; 4],
            b: [false; 16],
        }
    }
}

impl Uniforms {
    /// Sets b0–b15 from a BOOLUNIFORM register value (bit n = bn; bits 16–31 ignored).
    pub fn set_bools(&mut self, reg: u32) {
        for (n, b) in self.b.iter_mut().enumerate() {
            *b = reg >> n & 1 != 0;
        }
    }

    /// b0–b15 as a bit mask (bit n = bn).
    pub fn bools(&self) -> u16 {
        self.b
            .iter()
            .enumerate()
            .fold(0, |m, (n, &b)| m | (u16::from(b) << n))
    }

    /// Sets `i[index & 3]` from an INTUNIFORM register value (x = bits 0–7 … w = bits 24–31).
    pub fn set_int(&mut self, index: usize, reg: u32) {
        if let Some(i) = self.i.get_mut(index & 3) {
            *i = reg.to_le_bytes();
        }
    }
}

/// GS emitter state (SETEMIT/EMIT).
#[derive(Clone, Debug, PartialEq)]
pub struct Emitter {
    /// Slot the next EMIT writes.
    pub vertex_id: u8,
    /// The next EMIT submits a primitive.
    pub prim_emit: bool,
    /// That primitive has the inverted winding flag.
    pub winding: bool,
    /// The buffered vertices (all 16 output registers each).
    pub buffer: [[Vec4; 16]; EMIT_BUFFER_LEN],
}

impl Default for Emitter {
    fn default() -> Self {
        Self {
            vertex_id: 0,
            prim_emit: false,
            winding: false,
            buffer: [[[0.0; 4]; 16]; EMIT_BUFFER_LEN],
        }
    }
}

/// Receiver of geometry-shader output.
pub trait EmitSink {
    /// Called on every EMIT with the slot just written and its 16 output registers.
    fn vertex(&mut self, _slot: u8, _outputs: &[Vec4; 16]) {}

    /// Called on an EMIT whose primitive flag is set: emitter slots 0, 1, 2 in order, and the
    /// winding flag.
    fn primitive(&mut self, vertices: [&[Vec4; 16]; 3], winding: bool);
}

/// Ignores all geometry output (use for vertex shaders).
impl EmitSink for () {
    fn primitive(&mut self, _vertices: [&[Vec4; 16]; 3], _winding: bool) {}
}

/// A primitive produced by a geometry shader.
#[derive(Clone, Debug, PartialEq)]
pub struct EmittedPrimitive {
    /// The three vertices (all 16 output registers each).
    pub vertices: [[Vec4; 16]; 3],
    /// Winding flag from SETEMIT.
    pub winding: bool,
}

/// Collects primitives in order.
impl EmitSink for Vec<EmittedPrimitive> {
    fn primitive(&mut self, vertices: [&[Vec4; 16]; 3], winding: bool) {
        self.push(EmittedPrimitive {
            vertices: [*vertices[0], *vertices[1], *vertices[2]],
            winding,
        });
    }
}

/// The registers of one shader unit that persist between invocations (pica-core.md §5.4).
#[derive(Clone, Debug, PartialEq)]
pub struct UnitState {
    /// v0–v15.
    pub inputs: [Vec4; 16],
    /// r0–r15.
    pub temps: [Vec4; 16],
    /// o0–o15: the output bank instructions currently write.
    pub outputs: [Vec4; 16],
    /// The other output bank, made current by the next EMIT ([`GS_OUTPUT_BANKING`], SH-16).
    pub output_bank: [Vec4; 16],
    /// a0.x, a0.y.
    pub a0: [i32; 2],
    /// Loop counter aL.
    pub al: i32,
    /// cmp.x, cmp.y.
    pub cmp: [bool; 2],
    /// GS emitter.
    pub emitter: Emitter,
}

impl Default for UnitState {
    fn default() -> Self {
        Self {
            inputs: [[0.0; 4]; 16],
            temps: [[0.0; 4]; 16],
            outputs: [[0.0; 4]; 16],
            output_bank: [[0.0; 4]; 16],
            a0: [0; 2],
            al: 0,
            cmp: [false; 2],
            emitter: Emitter::default(),
        }
    }
}

/// Interpreter options.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExecConfig {
    /// Maximum instructions per invocation.
    pub budget: u64,
    /// Hardware subnormal handling: source operands and results of arithmetic instructions with
    /// |x| < 2^−62 ([`alu::F24_MIN_NORMAL`]) become +0, which also removes −0 ([3DB]: "no
    /// negative zero", "input and output subnormals are flushed to +0").
    /// CMP, MAX and MIN compare unflushed values and write them unflushed ([3DB]: "CMP and MAX do
    /// not flush"; MIN assumed alike), and MOVA converts unflushed values.
    /// UNVERIFIED: which other instructions flush; we flush all remaining ones, including MOV,
    /// SGE/SLT inputs, FLR, LITP and the scalar ops. Alternative: flush only results.
    ///
    /// Default `true`: measured, it does not change any of the benchmark reference hashes or
    /// sums (`bench::tests::reference_hashes_1m` runs both modes), which are defined with plain
    /// IEEE semantics; `false` is plain IEEE f32 ([C]/[P] behaviour).
    pub flush: bool,
    /// Round every value written to a register to float24 (round-to-nearest-even).
    /// UNVERIFIED: the hardware ALU's rounding mode is undocumented. Default `false` ([C]/[P]
    /// and the bench reference keep f32 precision).
    pub round_f24: bool,
}

impl Default for ExecConfig {
    fn default() -> Self {
        Self {
            budget: DEFAULT_BUDGET,
            flush: true,
            round_f24: false,
        }
    }
}

/// Why an invocation stopped without reaching END.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum ExecError {
    /// The instruction budget ran out (endless loop, or a very long program).
    #[error("instruction budget of {budget} exhausted at pc {pc:#05x}")]
    BudgetExceeded {
        /// The budget.
        budget: u64,
        /// PC of the instruction that would have exceeded it.
        pc: u32,
    },
    /// The PC left the program (fell off the end, or a jump/return past the last word).
    #[error("pc {pc:#05x} is outside the program ({len} words)")]
    PcOutOfRange {
        /// The PC.
        pc: u32,
        /// Program length in words.
        len: usize,
    },
    /// BREAK/BREAKC with an empty LOOP stack (hangs real hardware, [3DB]).
    #[error("BREAK at pc {pc:#05x} with no active loop (hangs the PICA200)")]
    BreakOutsideLoop {
        /// PC of the BREAK.
        pc: u32,
    },
}

/// Counters of one invocation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Instructions executed (including the END).
    pub instructions: u64,
    /// Undefined opcodes executed as NOP.
    pub unknown_ops: u32,
    /// EMIT instructions executed.
    pub emits: u32,
}

/// Loads vertex attributes into the input registers through the attribute permutation
/// (pica-core.md §5.2): attribute slot `a` (`a < attrs.len()`, at most 16) goes to input register
/// `(permutation >> 4a) & 0xF`. `permutation` is SH_ATTRIBUTES_PERMUTATION_LOW (0x2BB/0x28B,
/// attributes 0–7) in bits 0–31 and `_HIGH` (0x2BC/0x28C, attributes 8–15) in bits 32–63.
/// Registers no slot targets keep their previous contents ([C]); when two slots target the same
/// register the later slot wins.
pub fn load_permuted_inputs(state: &mut UnitState, attrs: &[Vec4], permutation: u64) {
    for (a, v) in attrs.iter().take(16).enumerate() {
        let reg = ((permutation >> (4 * a)) & 0xF) as usize;
        state.inputs[reg] = *v;
    }
}

/// Compacts the output registers enabled in `mask` (SH_OUTMAP_MASK, bit i = o_i) into
/// consecutive slots, lowest register first (pica-core.md §5.3: mask 0x11 puts o0 in slot 0 and o4
/// in slot 1). Returns the number of slots written to `out`.
pub fn compact_outputs(outputs: &[Vec4; 16], mask: u16, out: &mut [Vec4; 16]) -> usize {
    let mut n = 0;
    for (r, v) in outputs.iter().enumerate() {
        if mask & (1 << r) != 0 {
            out[n] = *v;
            n += 1;
        }
    }
    n
}

/// Runs one invocation of `program` from `entry` until END.
///
/// `state` is read and updated in place (inputs must already be loaded). Trace records go to
/// `tracer`, GS output to `sink`. Returns the counters, or the reason the run stopped early; on
/// error the registers hold whatever the program wrote so far.
pub fn run<T: ShaderTracer, E: EmitSink>(
    program: &Program,
    uniforms: &Uniforms,
    state: &mut UnitState,
    entry: u32,
    config: &ExecConfig,
    tracer: &mut T,
    sink: &mut E,
) -> Result<RunStats, ExecError> {
    run_counted(program, uniforms, state, entry, config, tracer, sink).0
}

/// [`run`], also returning the number of instructions executed, including when the run stops
/// with an error (a run that fails still did that work: budgets must see it).
pub fn run_counted<T: ShaderTracer, E: EmitSink>(
    program: &Program,
    uniforms: &Uniforms,
    state: &mut UnitState,
    entry: u32,
    config: &ExecConfig,
    tracer: &mut T,
    sink: &mut E,
) -> (Result<RunStats, ExecError>, u64) {
    let mut machine = Machine {
        program,
        uniforms,
        state,
        config,
        flow: FlowStacks::default(),
        executed: 0,
    };
    let result = machine.run(entry, tracer, sink);
    (result, machine.executed)
}

struct Machine<'a> {
    program: &'a Program,
    uniforms: &'a Uniforms,
    state: &'a mut UnitState,
    config: &'a ExecConfig,
    flow: FlowStacks,
    /// Instructions executed so far (kept here so an error return still reports them).
    executed: u64,
}

/// What an instruction asks the sequencer to do besides PC + 1.
enum Step {
    Next,
    Jump(u32),
    Break(u32),
    End,
}

impl Machine<'_> {
    fn run<T: ShaderTracer, E: EmitSink>(
        &mut self,
        entry: u32,
        tracer: &mut T,
        sink: &mut E,
    ) -> Result<RunStats, ExecError> {
        let instrs = self.program.instrs();
        let mut stats = RunStats::default();
        let mut pc = entry;
        loop {
            let Some(instr) = instrs.get(pc as usize) else {
                return Err(ExecError::PcOutOfRange {
                    pc,
                    len: instrs.len(),
                });
            };
            if stats.instructions >= self.config.budget {
                return Err(ExecError::BudgetExceeded {
                    budget: self.config.budget,
                    pc,
                });
            }
            stats.instructions += 1;
            self.executed = stats.instructions;

            let mut rec = if T::ENABLED {
                Some(TraceScratch::default())
            } else {
                None
            };
            let step = self.exec(pc, instr, &mut stats, rec.as_mut(), sink)?;
            let next = match step {
                Step::End => None,
                Step::Next => Some(self.flow.next_pc(pc + 1, None, None, &mut self.state.al)),
                Step::Jump(t) => Some(self.flow.next_pc(pc + 1, Some(t), None, &mut self.state.al)),
                Step::Break(t) => {
                    Some(self.flow.next_pc(pc + 1, None, Some(t), &mut self.state.al))
                }
            };
            if T::ENABLED
                && let Some(scratch) = rec
            {
                tracer.step(&StepRecord {
                    pc: pc as u16,
                    instr: *instr,
                    srcs: scratch.srcs,
                    src_count: scratch.src_count,
                    dst: scratch
                        .dst_before
                        .map(|(reg, before)| (reg, before, self.reg_value(reg))),
                    a0: self.state.a0,
                    al: self.state.al,
                    loop_remaining: self.flow.loops.top().map(|l| l.remaining),
                    cmp: self.state.cmp,
                    stack_depths: self.flow.depths(),
                    next_pc: next.unwrap_or(pc) as u16,
                });
            }
            match next {
                None => return Ok(stats),
                Some(n) => pc = n,
            }
        }
    }

    fn reg_value(&self, reg: DstReg) -> Vec4 {
        match reg {
            DstReg::Output(i) => self.state.outputs[usize::from(i & 15)],
            DstReg::Temp(i) => self.state.temps[usize::from(i & 15)],
        }
    }

    /// Fetches a source operand: relative addressing, swizzle, negate (pica-core.md §5.5/§5.6).
    #[inline(always)]
    fn fetch(&self, s: &Src) -> Vec4 {
        let reg = match s.reg {
            SrcReg::Input(i) => self.state.inputs[usize::from(i & 15)],
            SrcReg::Temp(i) => self.state.temps[usize::from(i & 15)],
            SrcReg::Const(c) => {
                let offset = match s.rel {
                    RelAddr::None => 0,
                    RelAddr::A0X => self.state.a0[0],
                    RelAddr::A0Y => self.state.a0[1],
                    RelAddr::AL => self.state.al,
                };
                match RELATIVE_UNIFORM_RULE {
                    RelativeUniformRule::WrapMod128 => {
                        // HW: [3DB]/[P-INT]/[CL]: offsets outside -128..=127 are ignored; wrap at
                        // 7 bits. UNVERIFIED for aL, which can exceed 127 (u8 start plus
                        // increments): the same rule is applied (pica-core.md §5.6).
                        let offset = if (-128..=127).contains(&offset) {
                            offset
                        } else {
                            0
                        };
                        let idx = (i32::from(c) + offset) & 0x7F;
                        match self.uniforms.f.get(idx as usize) {
                            Some(v) => *v,
                            None => OUT_OF_RANGE_UNIFORM,
                        }
                    }
                    RelativeUniformRule::ZeroOutside => {
                        let idx = i32::from(c).saturating_add(offset);
                        usize::try_from(idx)
                            .ok()
                            .and_then(|i| self.uniforms.f.get(i))
                            .copied()
                            .unwrap_or([0.0; 4])
                    }
                }
            }
        };
        let sw = s.swizzle;
        let mut v = [
            reg[usize::from(sw[0] & 3)],
            reg[usize::from(sw[1] & 3)],
            reg[usize::from(sw[2] & 3)],
            reg[usize::from(sw[3] & 3)],
        ];
        if s.negate {
            for x in &mut v {
                *x = -*x;
            }
        }
        v
    }

    /// Fetch for arithmetic that flushes its inputs in flush mode.
    #[inline(always)]
    fn fetch_arith(&self, s: &Src) -> Vec4 {
        let v = self.fetch(s);
        if self.config.flush {
            v.map(alu::flush)
        } else {
            v
        }
    }

    /// Writes the masked lanes of `v` (after the optional flush / f24 rounding).
    #[inline(always)]
    fn write(&mut self, dst: &Dst, v: Vec4, flush: bool) {
        let flush = flush && self.config.flush;
        let round = self.config.round_f24;
        let reg = match dst.reg {
            DstReg::Output(i) => &mut self.state.outputs[usize::from(i & 15)],
            DstReg::Temp(i) => &mut self.state.temps[usize::from(i & 15)],
        };
        for lane in 0..4 {
            if dst.mask & (8 >> lane) != 0 {
                let mut x = v[lane];
                if round {
                    x = round_to_f24(x);
                }
                if flush {
                    x = alu::flush(x);
                }
                reg[lane] = x;
            }
        }
    }

    fn exec<E: EmitSink>(
        &mut self,
        pc: u32,
        instr: &Instr,
        stats: &mut RunStats,
        mut rec: Option<&mut TraceScratch>,
        sink: &mut E,
    ) -> Result<Step, ExecError> {
        if let Some(r) = rec.as_deref_mut()
            && let Some(dst) = instr_dst(instr)
        {
            r.dst_before = Some((dst, self.reg_value(dst)));
        }
        let step = match *instr {
            Instr::Binary {
                op,
                ref dst,
                ref src1,
                ref src2,
                ..
            } => {
                let compare_op = matches!(op, BinaryOp::Max | BinaryOp::Min);
                let (a, b) = if compare_op {
                    (self.fetch(src1), self.fetch(src2))
                } else {
                    (self.fetch_arith(src1), self.fetch_arith(src2))
                };
                if let Some(r) = rec {
                    r.record(&[a, b]);
                }
                let out = match op {
                    BinaryOp::Add => [a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3]],
                    BinaryOp::Dp3 => [alu::dp3(&a, &b); 4],
                    BinaryOp::Dp4 => [alu::dp4(&a, &b); 4],
                    BinaryOp::Dph => [alu::dph(&a, &b); 4],
                    BinaryOp::Dst => alu::dst(&a, &b),
                    BinaryOp::Mul => [
                        alu::mul(a[0], b[0]),
                        alu::mul(a[1], b[1]),
                        alu::mul(a[2], b[2]),
                        alu::mul(a[3], b[3]),
                    ],
                    BinaryOp::Sge => [
                        alu::sge(a[0], b[0]),
                        alu::sge(a[1], b[1]),
                        alu::sge(a[2], b[2]),
                        alu::sge(a[3], b[3]),
                    ],
                    BinaryOp::Slt => [
                        alu::slt(a[0], b[0]),
                        alu::slt(a[1], b[1]),
                        alu::slt(a[2], b[2]),
                        alu::slt(a[3], b[3]),
                    ],
                    BinaryOp::Max => [
                        alu::max(a[0], b[0]),
                        alu::max(a[1], b[1]),
                        alu::max(a[2], b[2]),
                        alu::max(a[3], b[3]),
                    ],
                    BinaryOp::Min => [
                        alu::min(a[0], b[0]),
                        alu::min(a[1], b[1]),
                        alu::min(a[2], b[2]),
                        alu::min(a[3], b[3]),
                    ],
                };
                self.write(dst, out, !compare_op);
                Step::Next
            }
            Instr::Unary {
                op,
                ref dst,
                ref src,
                ..
            } => {
                let a = self.fetch_arith(src);
                if let Some(r) = rec {
                    r.record(&[a]);
                }
                let out = match op {
                    UnaryOp::Mov => a,
                    UnaryOp::Flr => a.map(alu::flr),
                    UnaryOp::Ex2 => [alu::ex2(a[0]); 4],
                    UnaryOp::Lg2 => [alu::lg2(a[0]); 4],
                    UnaryOp::Rcp => [alu::rcp(a[0]); 4],
                    UnaryOp::Rsq => [alu::rsq(a[0]); 4],
                    UnaryOp::Litp => {
                        let (v, cx, cy) = alu::litp(&a);
                        self.state.cmp = [cx, cy];
                        v
                    }
                };
                self.write(dst, out, true);
                Step::Next
            }
            Instr::Mova { ref src, mask, .. } => {
                let a = self.fetch(src);
                if let Some(r) = rec {
                    r.record(&[a]);
                }
                if mask & 0b1000 != 0 {
                    self.state.a0[0] = alu::mova(a[0]);
                }
                if mask & 0b0100 != 0 {
                    self.state.a0[1] = alu::mova(a[1]);
                }
                Step::Next
            }
            Instr::Cmp {
                ref src1,
                ref src2,
                op_x,
                op_y,
                ..
            } => {
                let (a, b) = (self.fetch(src1), self.fetch(src2));
                if let Some(r) = rec {
                    r.record(&[a, b]);
                }
                let [cx, cy] = self.state.cmp;
                self.state.cmp = [
                    alu::compare(op_x, a[0], b[0], cx),
                    alu::compare(op_y, a[1], b[1], cy),
                ];
                Step::Next
            }
            Instr::Mad {
                ref dst,
                ref src1,
                ref src2,
                ref src3,
                ..
            } => {
                let (a, b, c) = (
                    self.fetch_arith(src1),
                    self.fetch_arith(src2),
                    self.fetch_arith(src3),
                );
                if let Some(r) = rec {
                    r.record(&[a, b, c]);
                }
                let mut out = [0.0; 4];
                for lane in 0..4 {
                    out[lane] = alu::mul(a[lane], b[lane]) + c[lane];
                }
                self.write(dst, out, true);
                Step::Next
            }
            Instr::Nop => Step::Next,
            Instr::Unknown(_) => {
                stats.unknown_ops = stats.unknown_ops.saturating_add(1);
                Step::Next
            }
            Instr::End => Step::End,
            Instr::Break => self.do_break(pc)?,
            Instr::BreakC { cond } => {
                if cond.eval(self.state.cmp[0], self.state.cmp[1]) {
                    self.do_break(pc)?
                } else {
                    Step::Next
                }
            }
            Instr::Call { dst, num } => self.call(pc, dst, num),
            Instr::CallC { cond, dst, num } => {
                if cond.eval(self.state.cmp[0], self.state.cmp[1]) {
                    self.call(pc, dst, num)
                } else {
                    Step::Next
                }
            }
            Instr::CallU { b, dst, num } => {
                if self.bool_uniform(b) {
                    self.call(pc, dst, num)
                } else {
                    Step::Next
                }
            }
            Instr::IfU { b, dst, num } => {
                let taken = self.bool_uniform(b);
                self.branch_if(taken, dst, num)
            }
            Instr::IfC { cond, dst, num } => {
                let taken = cond.eval(self.state.cmp[0], self.state.cmp[1]);
                self.branch_if(taken, dst, num)
            }
            Instr::Loop { i, dst, .. } => {
                let iu = self.uniforms.i[usize::from(i & 3)];
                self.flow
                    .push_loop(pc, u32::from(dst), iu, &mut self.state.al);
                Step::Next
            }
            Instr::JmpC { cond, dst } => {
                if cond.eval(self.state.cmp[0], self.state.cmp[1]) {
                    Step::Jump(u32::from(dst))
                } else {
                    Step::Next
                }
            }
            Instr::JmpU { b, dst, invert } => {
                // HW: [3DB]/[C]/[P]: NUM bit 0 set = jump when the bool is false.
                if self.bool_uniform(b) != invert {
                    Step::Jump(u32::from(dst))
                } else {
                    Step::Next
                }
            }
            Instr::SetEmit {
                vertex_id,
                prim_emit,
                winding,
            } => {
                let e = &mut self.state.emitter;
                e.vertex_id = vertex_id & 3;
                e.prim_emit = prim_emit;
                e.winding = winding;
                Step::Next
            }
            Instr::Emit => {
                stats.emits = stats.emits.saturating_add(1);
                let e = &mut self.state.emitter;
                let slot = usize::from(e.vertex_id) % EMIT_BUFFER_LEN;
                e.buffer[slot] = self.state.outputs;
                sink.vertex(slot as u8, &e.buffer[slot]);
                if e.prim_emit {
                    sink.primitive([&e.buffer[0], &e.buffer[1], &e.buffer[2]], e.winding);
                }
                if GS_OUTPUT_BANKING {
                    // HW: SH-16: later writes go to the other bank.
                    std::mem::swap(&mut self.state.outputs, &mut self.state.output_bank);
                }
                Step::Next
            }
        };
        Ok(step)
    }

    fn bool_uniform(&self, b: u8) -> bool {
        self.uniforms.b[usize::from(b & 15)]
    }

    fn do_break(&mut self, pc: u32) -> Result<Step, ExecError> {
        match self.flow.break_loop(&mut self.state.al) {
            Some(t) => Ok(Step::Break(t)),
            None => Err(ExecError::BreakOutsideLoop { pc }),
        }
    }

    fn call(&mut self, pc: u32, dst: u16, num: u8) -> Step {
        if num == 0 {
            // UNVERIFIED: an empty subroutine; [C]/[P] return immediately, so do nothing.
            return Step::Next;
        }
        let dst = u32::from(dst);
        self.flow.calls.push(flow::ReturnEntry {
            check: dst + u32::from(num),
            ret: pc + 1,
        });
        Step::Jump(dst)
    }

    fn branch_if(&mut self, taken: bool, dst: u16, num: u8) -> Step {
        let dst = u32::from(dst);
        if taken {
            // Then-block [pc+1, dst); on reaching dst continue at dst + num (skipping the else).
            self.flow.ifs.push(flow::ReturnEntry {
                check: dst,
                ret: dst + u32::from(num),
            });
            Step::Next
        } else {
            // Else-block [dst, dst+num) is reached by jumping; it needs no stack entry.
            Step::Jump(dst)
        }
    }
}

fn instr_dst(instr: &Instr) -> Option<DstReg> {
    match instr {
        Instr::Binary { dst, .. } | Instr::Unary { dst, .. } | Instr::Mad { dst, .. } => {
            Some(dst.reg)
        }
        _ => None,
    }
}

#[derive(Default)]
struct TraceScratch {
    srcs: [Vec4; 3],
    src_count: u8,
    dst_before: Option<(DstReg, Vec4)>,
}

impl TraceScratch {
    fn record(&mut self, srcs: &[Vec4]) {
        for (slot, v) in self.srcs.iter_mut().zip(srcs) {
            *slot = *v;
        }
        self.src_count = srcs.len().min(3) as u8;
    }
}
