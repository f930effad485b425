//! Differential tests of the fast engine ([`FastEngineN`]) against the reference interpreter
//! ([`Interpreter`]): both run the same batches from the same unit state, and outputs, the final
//! unit state (bit for bit, NaN payloads and signed zeros included), the counters and errors
//! (including which vertex failed) must be identical.
//!
//! Cases:
//! - the W1–W3 benchmark workloads against their N = 1,000,000 reference hashes;
//! - random programs built through the encoder ([`encode_program`]): every opcode, relative
//!   addressing through a0.x/a0.y/aL, nested IF/LOOP/CALL, uniform and divergent conditions,
//!   BREAK/BREAKC, JMPC/JMPU, odd masks, swizzles and negations, over random and edge-case
//!   inputs (NaN, ±inf, ±0, f32 and f24 subnormals, values beyond the f24 range) and random
//!   starting unit states, in every [`ExecConfig`] mode, in batches of varied sizes;
//! - every real shader binary and every picasso source under `tests/fixtures/real/` on random
//!   inputs.
//!
//! `PICAVIEW_FAST_DIFF_CASES` sets the number of random programs (default 300, a few seconds in
//! release); the longer run documented in `src/fast.rs` uses 20000.

#[path = "fixtures/list.rs"]
mod fixtures;

use std::sync::Arc;

use shader_unit::bench::{Workload, run_workload};
use shader_unit::decode::{
    BinaryOp, CmpOp, Cond, CondOp, Dst, DstReg, Instr, Program, RelAddr, Src, SrcReg, UnaryOp,
    encode_program,
};
use shader_unit::dvlb::{ConstantValue, Dvlb};
use shader_unit::fast::{FastEngine, FastEngineN, FastStats, Simd};
use shader_unit::float::F24;
use shader_unit::interp::{
    BatchError, BatchStats, ExecConfig, Interpreter, ShaderEngine, Uniforms, UnitState, VertexBatch,
};

// ----- deterministic PRNG -----

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }
}

/// A float drawn from ordinary values and every edge case the ALU treats specially.
fn edge_float(rng: &mut Rng) -> f32 {
    match rng.below(20) {
        0 => f32::NAN,
        1 => f32::from_bits(0x7FC0_1234 | (rng.next() as u32 & 0x8000_0000)),
        2 => f32::INFINITY,
        3 => f32::NEG_INFINITY,
        4 => 0.0,
        5 => -0.0,
        6 => f32::from_bits(rng.below(0x007F_FFFF) as u32 + 1), // f32 subnormal
        7 => -1.5e-20,                                          // f24 subnormal (< 2^-62)
        8 => 2.168_404_3e-19,                                   // 2^-62, smallest f24 normal
        9 => 3.0e19 * if rng.chance(50) { 1.0 } else { -1.0 },  // beyond f24's range
        10 => rng.range(0, 40) as f32 - 8.0,                    // small integers (a0 offsets)
        11 => (rng.range(0, 300) as f32 - 150.0) * 0.75,        // offsets incl. out of range
        _ => (rng.next() as i64 as f64 / i64::MAX as f64 * 4.0) as f32,
    }
}

fn plain_float(rng: &mut Rng) -> f32 {
    (rng.next() as i64 as f64 / i64::MAX as f64 * 2.0) as f32
}

fn random_vec(rng: &mut Rng, edges: bool) -> [f32; 4] {
    std::array::from_fn(|_| {
        if edges && rng.chance(30) {
            edge_float(rng)
        } else {
            plain_float(rng)
        }
    })
}

// ----- comparisons -----

/// Bit patterns, with every NaN written as one canonical NaN.
///
/// Rust does not specify the sign and payload of a NaN produced by arithmetic (RFC 3514): LLVM
/// may commute `a + b` or pick a vector instruction, and x86 then propagates the other operand's
/// NaN. No shader-visible result depends on them (every comparison, MOVA, flushing and the f24
/// conversion treat all NaNs alike), so the engines are compared bit for bit except for NaN
/// payloads.
fn canon(x: f32) -> u32 {
    if x.is_nan() { 0x7FC0_0000 } else { x.to_bits() }
}

fn bits4(v: &[f32; 4]) -> [u32; 4] {
    v.map(canon)
}

fn state_bits(s: &UnitState) -> Vec<u32> {
    let mut out = Vec::new();
    for r in s
        .inputs
        .iter()
        .chain(&s.temps)
        .chain(&s.outputs)
        .chain(&s.output_bank)
    {
        out.extend(bits4(r));
    }
    out.extend([s.a0[0] as u32, s.a0[1] as u32, s.al as u32]);
    out.extend([u32::from(s.cmp[0]), u32::from(s.cmp[1])]);
    out.push(u32::from(s.emitter.vertex_id));
    out.push(u32::from(s.emitter.prim_emit));
    out.push(u32::from(s.emitter.winding));
    for slot in &s.emitter.buffer {
        for r in slot {
            out.extend(bits4(r));
        }
    }
    out
}

fn batch_bits(b: &VertexBatch) -> Vec<u32> {
    let mut out = Vec::new();
    for r in 0..16 {
        if let Some(vs) = b.reg(r) {
            for v in vs {
                out.extend(bits4(v));
            }
        }
    }
    out
}

/// Everything one engine produced for a sequence of batches.
#[derive(Debug, PartialEq)]
struct Outcome {
    results: Vec<Result<BatchStats, BatchError>>,
    outputs: Vec<Vec<u32>>,
    state: Vec<u32>,
}

struct Case<'a> {
    program: &'a Program,
    uniforms: &'a Uniforms,
    entry: u32,
    config: ExecConfig,
    start: &'a UnitState,
    batches: &'a [VertexBatch],
    out_mask: u16,
}

fn run_engine<E: ShaderEngine>(engine: &mut E, case: &Case<'_>) -> Outcome {
    *engine.state_mut() = case.start.clone();
    let mut results = Vec::new();
    let mut outputs = Vec::new();
    for inputs in case.batches {
        let mut out = VertexBatch::new(inputs.len(), case.out_mask);
        let r = engine.run_batch(case.program, case.uniforms, case.entry, inputs, &mut out);
        let failed = r.as_ref().err().map(|e| e.vertex);
        results.push(r);
        // After an error only the vertices before the failing one are defined.
        let mut bits = batch_bits(&out);
        if let Some(v) = failed {
            let keep: Vec<u32> = (0..16)
                .filter(|&reg| case.out_mask & (1 << reg) != 0)
                .flat_map(|reg| {
                    let vs = out.reg(reg).unwrap_or(&[]);
                    vs[..v.min(vs.len())]
                        .iter()
                        .flat_map(bits4)
                        .collect::<Vec<_>>()
                })
                .collect();
            bits = keep;
        }
        outputs.push(bits);
        if failed.is_some() {
            break;
        }
    }
    Outcome {
        results,
        outputs,
        state: state_bits(engine.state()),
    }
}

/// Runs the case on the reference and on the fast engine (default lanes at every supported
/// [`Simd`] level, 8 and 16 lanes); panics with `what` on any difference. Returns the stats of
/// the default engine.
fn check(case: &Case<'_>, what: &dyn Fn() -> String) -> FastStats {
    let want = run_engine(&mut Interpreter::new(case.config), case);
    let mut fast = FastEngine::new(case.config);
    let got = run_engine(&mut fast, case);
    if got != want {
        let first = got
            .outputs
            .iter()
            .zip(&want.outputs)
            .position(|(a, b)| a != b);
        let word = first.and_then(|b| {
            let (g, w) = (&got.outputs[b], &want.outputs[b]);
            let i = g.iter().zip(w).position(|(x, y)| x != y)?;
            Some((i, f32::from_bits(g[i]), f32::from_bits(w[i]), g.len()))
        });
        panic!(
            "fast engine differs: {}\nresults fast {:?}\nresults ref  {:?}\nfirst differing batch {first:?} word (index, fast, ref, words) {word:?}\nstate equal {}",
            what(),
            got.results,
            want.results,
            got.state == want.state
        );
    }
    // Every instruction-set level this machine has, and other lane counts.
    for simd in Simd::supported() {
        let got = run_engine(&mut FastEngine::with_simd(case.config, simd), case);
        assert!(got == want, "{simd:?} engine differs: {}", what());
    }
    let got8 = run_engine(&mut FastEngineN::<8>::new(case.config), case);
    assert!(got8 == want, "8-lane engine differs: {}", what());
    let got16 = run_engine(&mut FastEngineN::<16>::new(case.config), case);
    assert!(got16 == want, "16-lane engine differs: {}", what());
    fast.stats()
}

fn listing(program: &Program) -> String {
    program
        .instrs()
        .iter()
        .enumerate()
        .map(|(pc, i)| format!("{pc:03}: {}\n", shader_unit::disasm::instruction_text(i)))
        .collect()
}

// ----- the benchmark workloads -----

#[test]
fn workloads_match_reference_hashes() {
    for flush in [true, false] {
        for w in Workload::ALL {
            let mut e = FastEngine::new(ExecConfig {
                flush,
                ..ExecConfig::default()
            });
            for batch in [2048, 1000, 1_000_000] {
                *e.state_mut() = UnitState::default();
                let r = run_workload(&mut e, w, 1_000_000, batch).unwrap();
                assert!(r.matches_reference(), "{w:?} flush {flush} batch {batch}");
                assert_eq!(
                    r.instructions,
                    1_000_000 * u64::from(w.spec().instructions_per_vertex)
                );
            }
            let s = e.stats();
            assert_eq!(s.hazard_batches + s.error_batches + s.serial_batches, 0);
            assert!(s.fast_batches > 0);
        }
    }
}

// ----- random programs -----

struct Gen<'a> {
    rng: &'a mut Rng,
    code: Vec<Instr>,
    /// Subroutines emitted after the main END: (start, len).
    subs: Vec<(u16, u8)>,
    arith_descs: u8,
    mad_descs: u8,
    in_loop: bool,
    /// Temps the random body writes (r0 up to this one, exclusive).
    dst_temps: u64,
}

fn swz(rng: &mut Rng) -> [u8; 4] {
    if rng.chance(40) {
        [0, 1, 2, 3]
    } else {
        std::array::from_fn(|_| rng.below(4) as u8)
    }
}

impl Gen<'_> {
    fn desc(&mut self, mad: bool) -> u8 {
        if mad {
            let d = self.mad_descs;
            self.mad_descs = (self.mad_descs + 1) % 32;
            d
        } else {
            let d = 32 + self.arith_descs;
            self.arith_descs = (self.arith_descs + 1) % 96;
            d
        }
    }

    fn src(&mut self, wide: bool) -> Src {
        let r = &mut *self.rng;
        let reg = match r.below(if wide { 3 } else { 2 }) {
            0 => SrcReg::Input(r.below(6) as u8),
            1 => SrcReg::Temp(r.below(8) as u8),
            _ => SrcReg::Const(if r.chance(10) { 95 } else { r.below(24) as u8 }),
        };
        let rel = if wide && matches!(reg, SrcReg::Const(_)) && r.chance(35) {
            match r.below(if self.in_loop { 3 } else { 2 }) {
                0 => RelAddr::A0X,
                1 => RelAddr::A0Y,
                _ => RelAddr::AL,
            }
        } else {
            RelAddr::None
        };
        Src {
            reg,
            rel,
            swizzle: swz(r),
            negate: r.chance(25),
        }
    }

    fn dst(&mut self) -> Dst {
        let r = &mut *self.rng;
        let reg = if r.chance(50) {
            DstReg::Output(r.below(6) as u8)
        } else {
            DstReg::Temp(r.below(self.dst_temps) as u8)
        };
        let mask = if r.chance(40) { 0xF } else { r.below(16) as u8 };
        Dst { reg, mask }
    }

    fn cond(&mut self) -> Cond {
        let r = &mut *self.rng;
        Cond {
            op: CondOp::from_raw(r.below(4) as u32),
            ref_x: r.chance(50),
            ref_y: r.chance(50),
        }
    }

    fn arith(&mut self) -> Instr {
        let k = self.rng.below(100);
        if k < 45 {
            let ops = [
                BinaryOp::Add,
                BinaryOp::Dp3,
                BinaryOp::Dp4,
                BinaryOp::Dph,
                BinaryOp::Dst,
                BinaryOp::Mul,
                BinaryOp::Sge,
                BinaryOp::Slt,
                BinaryOp::Max,
                BinaryOp::Min,
            ];
            let op = ops[self.rng.below(ops.len() as u64) as usize];
            let inverted = matches!(
                op,
                BinaryOp::Dph | BinaryOp::Dst | BinaryOp::Sge | BinaryOp::Slt
            ) && self.rng.chance(30);
            let (src1, src2) = if inverted {
                (self.src(false), self.src(true))
            } else {
                (self.src(true), self.src(false))
            };
            Instr::Binary {
                op,
                dst: self.dst(),
                src1,
                src2,
                inverted,
                desc: self.desc(false),
            }
        } else if k < 70 {
            let ops = [
                UnaryOp::Ex2,
                UnaryOp::Lg2,
                UnaryOp::Litp,
                UnaryOp::Flr,
                UnaryOp::Rcp,
                UnaryOp::Rsq,
                UnaryOp::Mov,
                UnaryOp::Mov,
            ];
            let op = ops[self.rng.below(ops.len() as u64) as usize];
            Instr::Unary {
                op,
                dst: self.dst(),
                src: self.src(true),
                desc: self.desc(false),
            }
        } else if k < 82 {
            let inverted = self.rng.chance(40);
            let (src1, src2, src3) = if inverted {
                (self.src(false), self.src(false), self.src(true))
            } else {
                (self.src(false), self.src(true), self.src(false))
            };
            Instr::Mad {
                dst: self.dst(),
                src1,
                src2,
                src3,
                inverted,
                desc: self.desc(true),
            }
        } else if k < 91 {
            Instr::Cmp {
                src1: self.src(true),
                src2: self.src(false),
                op_x: CmpOp::from_raw(self.rng.below(8) as u32),
                op_y: CmpOp::from_raw(self.rng.below(8) as u32),
                desc: self.desc(false),
            }
        } else {
            let mask = [0b1000, 0b0100, 0b1100, 0b1111, 0][self.rng.below(5) as usize];
            Instr::Mova {
                src: self.src(true),
                mask,
                dst_raw: 0,
                desc: self.desc(false),
            }
        }
    }

    fn pc(&self) -> u16 {
        self.code.len() as u16
    }

    /// Emits a block of roughly `budget` instructions at nesting `depth`.
    fn block(&mut self, budget: usize, depth: u32) {
        let start = self.code.len();
        while self.code.len() - start < budget {
            let k = self.rng.below(100);
            if depth >= 3 || k < 55 {
                let i = self.arith();
                self.code.push(i);
                continue;
            }
            match k {
                55..=64 => {
                    // IFU / IFC with then and else blocks.
                    let at = self.code.len();
                    self.code.push(Instr::Nop);
                    let n = self.rng.range(1, 4) as usize;
                    self.block(n, depth + 1);
                    let else_start = self.pc();
                    let n = self.rng.range(0, 3) as usize;
                    self.block(n, depth + 1);
                    let num = (self.pc() - else_start) as u8;
                    self.code[at] = if self.rng.chance(50) {
                        Instr::IfU {
                            b: self.rng.below(16) as u8,
                            dst: else_start,
                            num,
                        }
                    } else {
                        Instr::IfC {
                            cond: self.cond(),
                            dst: else_start,
                            num,
                        }
                    };
                }
                65..=74 => {
                    // LOOP with an optional BREAKC/BREAK inside.
                    let at = self.code.len();
                    self.code.push(Instr::Nop);
                    let was = self.in_loop;
                    self.in_loop = true;
                    let n = self.rng.range(1, 4) as usize;
                    self.block(n, depth + 1);
                    if self.rng.chance(40) {
                        let c = self.cond();
                        self.code.push(Instr::BreakC { cond: c });
                        self.block(1, depth + 1);
                    } else if self.rng.chance(10) {
                        self.code.push(Instr::Break);
                    }
                    self.in_loop = was;
                    let last = self.pc() - 1;
                    self.code[at] = Instr::Loop {
                        i: self.rng.below(4) as u8,
                        dst: last,
                        num: 0,
                    };
                }
                75..=84 => {
                    // CALL / CALLC / CALLU to a subroutine (patched to its address later).
                    let len = self.rng.range(1, 3) as u8;
                    let idx = self.subs.len() as u16;
                    self.subs.push((0, len));
                    let i = match self.rng.below(3) {
                        0 => Instr::Call { dst: idx, num: len },
                        1 => Instr::CallC {
                            cond: self.cond(),
                            dst: idx,
                            num: len,
                        },
                        _ => Instr::CallU {
                            b: self.rng.below(16) as u8,
                            dst: idx,
                            num: len,
                        },
                    };
                    self.code.push(i);
                }
                85..=92 => {
                    // Forward JMPC / JMPU over a short block.
                    let at = self.code.len();
                    self.code.push(Instr::Nop);
                    let n = self.rng.range(1, 3) as usize;
                    self.block(n, depth + 1);
                    let target = self.pc();
                    self.code[at] = if self.rng.chance(50) {
                        Instr::JmpC {
                            cond: self.cond(),
                            dst: target,
                        }
                    } else {
                        Instr::JmpU {
                            b: self.rng.below(16) as u8,
                            dst: target,
                            invert: self.rng.chance(50),
                        }
                    };
                }
                93..=95 => self.code.push(Instr::Nop),
                96 => self.code.push(Instr::Unknown(0x10 << 26)),
                _ => {
                    let i = self.arith();
                    self.code.push(i);
                }
            }
        }
    }
}

/// A random program: a prologue that (usually) writes every temp, a0 and cmp first so that most
/// programs run on the lane executor; a main block; END; subroutines.
fn random_program(rng: &mut Rng) -> Program {
    random_program_with(rng, false)
}

/// A random instruction that reads and writes only r6/r7 (and uniforms, and with
/// `input` an input register): a temp read before any write, whose value then comes from the
/// previous vertex.
fn carry_instr(g: &mut Gen<'_>, input: bool) -> Instr {
    let src = |g: &mut Gen<'_>, from_input: bool| {
        let r = &mut *g.rng;
        let reg = if from_input {
            SrcReg::Input(r.below(6) as u8)
        } else if r.chance(65) {
            SrcReg::Temp(6 + r.below(2) as u8)
        } else {
            SrcReg::Const(r.below(24) as u8)
        };
        Src {
            reg,
            rel: RelAddr::None,
            swizzle: swz(r),
            negate: r.chance(20),
        }
    };
    let dst = Dst {
        reg: DstReg::Temp(6 + g.rng.below(2) as u8),
        mask: if g.rng.chance(30) {
            0xF
        } else {
            1 + g.rng.below(15) as u8
        },
    };
    let k = g.rng.below(100);
    if k < 55 {
        let ops = [
            BinaryOp::Add,
            BinaryOp::Mul,
            BinaryOp::Max,
            BinaryOp::Max,
            BinaryOp::Min,
            BinaryOp::Dp3,
            BinaryOp::Dp4,
            BinaryOp::Sge,
            BinaryOp::Slt,
        ];
        let op = ops[g.rng.below(ops.len() as u64) as usize];
        let src1 = src(g, false);
        let src2 = src(g, input);
        Instr::Binary {
            op,
            dst,
            src1,
            src2,
            inverted: false,
            desc: g.desc(false),
        }
    } else if k < 85 {
        let ops = [
            UnaryOp::Mov,
            UnaryOp::Flr,
            UnaryOp::Rcp,
            UnaryOp::Rsq,
            UnaryOp::Ex2,
            UnaryOp::Lg2,
        ];
        let op = ops[g.rng.below(ops.len() as u64) as usize];
        let src = src(g, input);
        Instr::Unary {
            op,
            dst,
            src,
            desc: g.desc(false),
        }
    } else {
        let (src1, src2, src3) = (src(g, false), src(g, false), src(g, input));
        Instr::Mad {
            dst,
            src1,
            src2,
            src3,
            inverted: false,
            desc: g.desc(true),
        }
    }
}

/// A random program; with `carry`, it starts by updating r6/r7 from their own previous values
/// (read before written: carried from vertex to vertex) and copies them to o4/o5, instead of
/// the prologue that writes every temp from the inputs.
fn random_program_with(rng: &mut Rng, carry: bool) -> Program {
    loop {
        let mut g = Gen {
            rng: &mut *rng,
            code: Vec::new(),
            subs: Vec::new(),
            arith_descs: 0,
            mad_descs: 0,
            in_loop: false,
            dst_temps: 8,
        };
        let prologue = !carry && g.rng.chance(85);
        if carry && g.rng.chance(75) {
            // Mostly leave r6/r7 to the carried section (a body write from an input makes the
            // batch fall back).
            g.dst_temps = 6;
        }
        if carry {
            let input = g.rng.chance(15);
            for k in 0..g.rng.range(1, 4) {
                let i = carry_instr(&mut g, input && k == 0);
                g.code.push(i);
            }
            for (o, t) in [(4u8, 6u8), (5, 7)] {
                let desc = g.desc(false);
                g.code.push(Instr::Unary {
                    op: UnaryOp::Mov,
                    dst: Dst {
                        reg: DstReg::Output(o),
                        mask: 0xF,
                    },
                    src: Src::plain(SrcReg::Temp(t)),
                    desc,
                });
            }
        }
        if prologue || carry {
            // With `carry`, r6/r7 keep the carried values (no prologue writes them).
            for t in 0..if carry { 6 } else { 8u8 } {
                let src = Src {
                    swizzle: swz(g.rng),
                    ..Src::plain(SrcReg::Input(t % 6))
                };
                let desc = g.desc(false);
                g.code.push(Instr::Unary {
                    op: UnaryOp::Mov,
                    dst: Dst {
                        reg: DstReg::Temp(t),
                        mask: 0xF,
                    },
                    src,
                    desc,
                });
            }
            let desc = g.desc(false);
            g.code.push(Instr::Mova {
                src: Src::plain(SrcReg::Input(4)),
                mask: 0b1100,
                dst_raw: 0,
                desc,
            });
            let desc = g.desc(false);
            g.code.push(Instr::Cmp {
                src1: Src::plain(SrcReg::Input(5)),
                src2: Src::plain(SrcReg::Temp(0)),
                op_x: CmpOp::Lt,
                op_y: CmpOp::Ge,
                desc,
            });
        }
        let len = g.rng.range(3, 30) as usize;
        g.block(len, 0);
        g.code.push(Instr::End);
        // Subroutines.
        let subs = std::mem::take(&mut g.subs);
        let mut addrs = Vec::new();
        for &(_, len) in &subs {
            addrs.push(g.pc());
            for _ in 0..len {
                let i = g.arith();
                g.code.push(i);
            }
        }
        if g.rng.chance(50) {
            g.code.push(Instr::End);
        }
        for i in &mut g.code {
            match i {
                Instr::Call { dst, .. } | Instr::CallC { dst, .. } | Instr::CallU { dst, .. } => {
                    *dst = addrs[usize::from(*dst)]
                }
                _ => {}
            }
        }
        if let Ok((code, descs)) = encode_program(&g.code) {
            return Program::new(&code, &descs);
        }
    }
}

fn random_uniforms(rng: &mut Rng, edges: bool) -> Uniforms {
    let mut u = Uniforms::default();
    for c in u.f.iter_mut() {
        *c = random_vec(rng, edges);
    }
    for i in u.i.iter_mut() {
        *i = [
            rng.below(4) as u8,
            {
                let hi = if rng.chance(20) { 256 } else { 12 };
                rng.below(hi) as u8
            },
            if rng.chance(15) {
                rng.below(256) as u8
            } else {
                rng.below(4) as u8
            },
            rng.below(256) as u8,
        ];
    }
    u.set_bools(rng.next() as u32);
    u
}

fn random_state(rng: &mut Rng, edges: bool) -> UnitState {
    let mut s = UnitState::default();
    if rng.chance(30) {
        return s;
    }
    for r in s
        .inputs
        .iter_mut()
        .chain(&mut s.temps)
        .chain(&mut s.outputs)
    {
        *r = random_vec(rng, edges);
    }
    s.a0 = [rng.below(20) as i32 - 10, rng.below(400) as i32 - 200];
    s.al = rng.below(300) as i32 - 20;
    s.cmp = [rng.chance(50), rng.chance(50)];
    s
}

fn random_batches(rng: &mut Rng, in_mask: u16, edges: bool) -> Vec<VertexBatch> {
    let count = rng.range(1, 3);
    (0..count)
        .map(|_| {
            let len = [1, 3, 8, 15, 16, 17, 31, 40, 64, 100][rng.below(10) as usize];
            let mut b = VertexBatch::new(len, in_mask);
            for r in 0..16 {
                if let Some(vs) = b.reg_mut(r) {
                    for v in vs {
                        *v = random_vec(rng, edges);
                    }
                }
            }
            b
        })
        .collect()
}

fn random_config(rng: &mut Rng) -> ExecConfig {
    ExecConfig {
        flush: rng.chance(60),
        round_f24: rng.chance(25),
        budget: if rng.chance(10) {
            rng.range(5, 80)
        } else {
            ExecConfig::default().budget
        },
    }
}

fn cases() -> u64 {
    std::env::var("PICAVIEW_FAST_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(300)
}

#[test]
fn random_programs_match_the_reference() {
    let mut rng = Rng(0x5EED_F00D_1234_5678);
    let mut total = FastStats::default();
    let n = cases();
    for case_no in 0..n {
        let program = random_program(&mut rng);
        let edges = rng.chance(70);
        let uniforms = random_uniforms(&mut rng, edges);
        let start = random_state(&mut rng, edges);
        let in_mask = if rng.chance(80) {
            0x3F
        } else {
            rng.below(0x10000) as u16
        };
        let batches = random_batches(&mut rng, in_mask, edges);
        let config = random_config(&mut rng);
        let out_mask = if rng.chance(70) {
            0x3F
        } else {
            rng.below(0x10000) as u16
        };
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask,
        };
        let s = check(&case, &|| {
            format!("case {case_no}, config {config:?}\n{}", listing(&program))
        });
        total.fast_batches += s.fast_batches;
        total.hazard_batches += s.hazard_batches;
        total.error_batches += s.error_batches;
        total.splits += s.splits;
    }
    eprintln!("random programs: {n} cases, {total:?}");
    // The generator is built so that most programs run on the lane executor, with divergence.
    assert!(total.fast_batches * 2 > n, "{total:?}");
    assert!(total.splits > 0, "{total:?}");
    assert!(total.hazard_batches > 0, "{total:?}");
    assert!(total.error_batches > 0, "{total:?}");
}

/// Programs that read temps before writing them, as `max r3, zero, r3` in the demos' lit
/// shader: vertex i reads vertex i − 1's values. When those values depend only on the starting
/// state (not on inputs), the fast engine computes them serially and shades on the lanes;
/// otherwise it falls back. Either way it must agree with the reference bit for bit.
#[test]
fn random_carried_temps_match_the_reference() {
    let mut rng = Rng(0xCA11_1ED0_7E39_5000);
    let mut total = FastStats::default();
    let n = cases().max(100);
    for case_no in 0..n {
        let program = random_program_with(&mut rng, true);
        let edges = rng.chance(60);
        let uniforms = random_uniforms(&mut rng, edges);
        let start = random_state(&mut rng, edges);
        let batches = random_batches(&mut rng, 0x3F, edges);
        let config = random_config(&mut rng);
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask: 0x3F,
        };
        let s = check(&case, &|| {
            format!(
                "carry case {case_no}, config {config:?}\n{}",
                listing(&program)
            )
        });
        total.fast_batches += s.fast_batches;
        total.hazard_batches += s.hazard_batches;
        total.carried_batches += s.carried_batches;
        total.carry_evals += s.carry_evals;
    }
    eprintln!("carried temps: {n} cases, {total:?}");
    // The random body after the carried section may overwrite r6/r7 from inputs or branch on
    // cmp, and some recurrences never settle (then the batch falls back): both kinds occur.
    assert!(total.carried_batches > 0, "{total:?}");
    assert!(total.hazard_batches > 0, "{total:?}");
}

/// The demos' lit shader (`tests/src/scene/demos/lit.v.pica`, the stress demo's vertex shader)
/// reads r3.zw in `max r3, zero, r3` before writing them: the fast engine must shade every
/// batch on the lanes (no reference fallback) and agree with the reference, in every mode and
/// from random starting states.
#[test]
fn lit_demo_shader_shades_without_fallback() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../tests/src/scene/demos/lit.v.pica"
    );
    let text = std::fs::read_to_string(path).unwrap();
    let asm = shader_unit::asm::assemble(&[(path, text.as_str())]).unwrap();
    let program = Program::new(&asm.program, &asm.opdescs);
    let entry = &asm.entries[0];
    let mut rng = Rng(0x117_DE30);
    let s = real_case(&mut rng, "lit.v.pica", &program, entry.entry_start, &|u| {
        for c in &entry.constants {
            if let shader_unit::asm::AsmConstant::Float { reg, value } = *c
                && let Some(slot) = u.f.get_mut(usize::from(reg))
            {
                *slot = value.map(|r| F24::from_bits(r).to_f32());
            }
        }
    });
    eprintln!("lit.v.pica: {s:?}");
    assert_eq!(s.hazard_batches + s.serial_batches, 0, "{s:?}");
    assert!(
        s.fast_batches > 0 && s.carried_batches == s.fast_batches,
        "{s:?}"
    );
}

/// Read-before-write of a temp: vertex i sees vertex i − 1's value (the reference's persistent
/// state), so the fast engine must detect it and agree.
#[test]
fn serial_dependencies_between_vertices_are_kept() {
    let instrs = [
        // r0 = r0 + v0 (an accumulator across vertices), o0 = r0.
        Instr::Binary {
            op: BinaryOp::Add,
            dst: Dst {
                reg: DstReg::Temp(0),
                mask: 0xF,
            },
            src1: Src::plain(SrcReg::Temp(0)),
            src2: Src::plain(SrcReg::Input(0)),
            inverted: false,
            desc: 0,
        },
        Instr::Unary {
            op: UnaryOp::Mov,
            dst: Dst {
                reg: DstReg::Output(0),
                mask: 0xF,
            },
            src: Src::plain(SrcReg::Temp(0)),
            desc: 0,
        },
        Instr::End,
    ];
    let (code, descs) = encode_program(&instrs).unwrap();
    let program = Program::new(&code, &descs);
    let mut rng = Rng(7);
    let batches = random_batches(&mut rng, 1, false);
    let uniforms = Uniforms::default();
    let start = UnitState::default();
    let case = Case {
        program: &program,
        uniforms: &uniforms,
        entry: 0,
        config: ExecConfig::default(),
        start: &start,
        batches: &batches,
        out_mask: 1,
    };
    let s = check(&case, &|| "accumulator".into());
    assert!(s.hazard_batches > 0);
}

// ----- real shaders -----

fn load_constants(uniforms: &mut Uniforms, dvlb: &Dvlb, index: usize) {
    for c in &dvlb.dvles[index].constants {
        let reg = usize::from(c.register);
        match c.value {
            ConstantValue::Float(w) => {
                if let Some(slot) = uniforms.f.get_mut(reg) {
                    *slot = w.map(|r| F24::from_bits(r).to_f32());
                }
            }
            ConstantValue::Int(v) => {
                if let Some(slot) = uniforms.i.get_mut(reg) {
                    *slot = v;
                }
            }
            ConstantValue::Bool(b) => {
                if let Some(slot) = uniforms.b.get_mut(reg) {
                    *slot = b;
                }
            }
            ConstantValue::Unknown => {}
        }
    }
}

fn real_case(
    rng: &mut Rng,
    what: &str,
    program: &Program,
    entry: u32,
    constants: &dyn Fn(&mut Uniforms),
) -> FastStats {
    let mut total = FastStats::default();
    for round in 0..6 {
        let edges = round >= 3;
        let mut uniforms = random_uniforms(rng, edges);
        constants(&mut uniforms);
        let start = random_state(rng, edges);
        let batches = random_batches(rng, 0xFFFF, edges);
        let config = ExecConfig {
            flush: round % 2 == 0,
            round_f24: round == 4,
            ..ExecConfig::default()
        };
        let case = Case {
            program,
            uniforms: &uniforms,
            entry,
            config,
            start: &start,
            batches: &batches,
            out_mask: 0xFFFF,
        };
        let s = check(&case, &|| format!("{what} round {round}"));
        total.fast_batches += s.fast_batches;
        total.hazard_batches += s.hazard_batches;
        total.serial_batches += s.serial_batches;
        total.carried_batches += s.carried_batches;
        total.carry_evals += s.carry_evals;
    }
    total
}

#[test]
fn real_shader_binaries_match_the_reference() {
    let mut rng = Rng(0xDEC0_DE00_0000_0001);
    let (mut fast, mut hazard) = (0, 0);
    for (rel, bytes) in fixtures::all() {
        let dvlb = Dvlb::parse(&bytes).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let program = Program::new(&dvlb.dvlp.code, &dvlb.operand_descriptors());
        for index in 0..dvlb.dvles.len() {
            let s = real_case(
                &mut rng,
                &format!("{rel} DVLE {index}"),
                &program,
                dvlb.dvles[index].main_start,
                &|u| load_constants(u, &dvlb, index),
            );
            fast += s.fast_batches;
            hazard += s.hazard_batches;
            if s.hazard_batches > 0 {
                eprintln!("{rel} DVLE {index}: {s:?}");
            }
        }
    }
    eprintln!("real binaries: {fast} fast batches, {hazard} hazard batches");
    assert!(fast > 0);
}

fn pica_sources(dir: &std::path::Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            pica_sources(&p, found);
        } else if p.to_string_lossy().ends_with(".pica") {
            found.push(p);
        }
    }
}

#[test]
fn real_shader_sources_match_the_reference() {
    let mut files = Vec::new();
    pica_sources(&fixtures::path(""), &mut files);
    files.sort();
    assert!(files.len() >= 20);
    let mut rng = Rng(0xDEC0_DE00_0000_0002);
    let (mut assembled, mut fast, mut serial) = (0, 0, 0);
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let name = file.to_string_lossy().into_owned();
        // Some sources `.include` files that are not part of the fixtures.
        let Ok(asm) = shader_unit::asm::assemble(&[(name.as_str(), text.as_str())]) else {
            continue;
        };
        assembled += 1;
        let program = Program::new(&asm.program, &asm.opdescs);
        for entry in &asm.entries {
            let s = real_case(&mut rng, &name, &program, entry.entry_start, &|u| {
                for c in &entry.constants {
                    match *c {
                        shader_unit::asm::AsmConstant::Float { reg, value } => {
                            if let Some(slot) = u.f.get_mut(usize::from(reg)) {
                                *slot = value.map(|r| F24::from_bits(r).to_f32());
                            }
                        }
                        shader_unit::asm::AsmConstant::Int { reg, value } => {
                            if let Some(slot) = u.i.get_mut(usize::from(reg)) {
                                *slot = value;
                            }
                        }
                        shader_unit::asm::AsmConstant::Bool { reg, value } => {
                            if let Some(slot) = u.b.get_mut(usize::from(reg)) {
                                *slot = value;
                            }
                        }
                    }
                }
            });
            fast += s.fast_batches;
            serial += s.serial_batches;
            if s.hazard_batches > 0 {
                eprintln!("{name}: {s:?}");
            }
        }
    }
    eprintln!("real sources: {assembled} assembled, {fast} fast batches, {serial} serial (GS)");
    assert!(assembled >= 15, "{assembled}");
    assert!(fast > 0 && serial > 0);
}

/// One engine pair shades batches of several programs in turn (as a draw sequence does): the
/// program cache, stale planes of other programs and the state carried between batches must not
/// leak into results.
#[test]
fn one_engine_switching_programs_matches_the_reference() {
    let mut rng = Rng(0xC0FF_EE00_0000_0003);
    for config in [
        ExecConfig::default(),
        ExecConfig {
            flush: false,
            round_f24: true,
            ..ExecConfig::default()
        },
    ] {
        let programs: Vec<Program> = (0..12).map(|_| random_program(&mut rng)).collect();
        let uniforms: Vec<Uniforms> = (0..3).map(|_| random_uniforms(&mut rng, true)).collect();
        let mut reference = Interpreter::new(config);
        let mut fast = FastEngine::new(config);
        let start = random_state(&mut rng, true);
        reference.state = start.clone();
        fast.state = start;
        for step in 0..200 {
            let program = &programs[rng.below(programs.len() as u64) as usize];
            let u = &uniforms[rng.below(3) as usize];
            let in_mask = if rng.chance(70) {
                0x3F
            } else {
                rng.next() as u16
            };
            let out_mask = if rng.chance(70) {
                0x3F
            } else {
                rng.next() as u16
            };
            let inputs = &random_batches(&mut rng, in_mask, true)[0];
            let mut want = VertexBatch::new(inputs.len(), out_mask);
            let mut got = VertexBatch::new(inputs.len(), out_mask);
            let r_want = reference.run_batch(program, u, 0, inputs, &mut want);
            let r_got = fast.run_batch(program, u, 0, inputs, &mut got);
            assert_eq!(r_got, r_want, "step {step}");
            if r_want.is_ok() {
                assert_eq!(batch_bits(&got), batch_bits(&want), "step {step}");
            }
            assert_eq!(
                state_bits(&fast.state),
                state_bits(&reference.state),
                "step {step}"
            );
        }
        assert!(fast.stats().fast_batches > 20, "{:?}", fast.stats());
    }
}

/// Shared programs (`run_batch_shared`, as the draw path shades): the engine may recognise an
/// `Arc` it ran before without comparing words. Batches alternate between shared and plain
/// calls, between two `Arc`s of equal programs, and through programs built and dropped at each
/// step (so a new program can sit at a freed one's address); every result must equal the
/// reference's, and equal programs in other `Arc`s must not be compiled again.
#[test]
fn shared_programs_match_the_reference() {
    let mut rng = Rng(0xC0FF_EE00_0000_0005);
    let config = ExecConfig::default();
    let programs: Vec<Program> = (0..5).map(|_| random_program(&mut rng)).collect();
    let first: Vec<Arc<Program>> = programs.iter().map(|p| Arc::new(p.clone())).collect();
    let second: Vec<Arc<Program>> = programs.iter().map(|p| Arc::new(p.clone())).collect();
    let u = random_uniforms(&mut rng, true);
    let mut reference = Interpreter::new(config);
    let mut fast = FastEngine::new(config);
    let start = random_state(&mut rng, true);
    reference.state = start.clone();
    fast.state = start;
    fn step(
        (reference, fast): (&mut Interpreter, &mut FastEngine),
        program: &Arc<Program>,
        u: &Uniforms,
        shared: bool,
        rng: &mut Rng,
        step: usize,
    ) {
        let inputs = &random_batches(rng, 0x3F, true)[0];
        let mut want = VertexBatch::new(inputs.len(), 0x3F);
        let mut got = VertexBatch::new(inputs.len(), 0x3F);
        let r_want = reference.run_batch(program, u, 0, inputs, &mut want);
        let r_got = if shared {
            fast.run_batch_shared(program, u, 0, inputs, &mut got)
        } else {
            fast.run_batch(program, u, 0, inputs, &mut got)
        };
        assert_eq!(r_got, r_want, "step {step}");
        if r_want.is_ok() {
            assert_eq!(batch_bits(&got), batch_bits(&want), "step {step}");
        }
        assert_eq!(
            state_bits(&fast.state),
            state_bits(&reference.state),
            "step {step}"
        );
    }
    for i in 0..300 {
        let k = rng.below(programs.len() as u64) as usize;
        let program = if rng.chance(50) {
            &first[k]
        } else {
            &second[k]
        };
        let shared = rng.chance(80);
        step(
            (&mut reference, &mut fast),
            program,
            &u,
            shared,
            &mut rng,
            i,
        );
    }
    let compiles = fast.stats().compiles;
    assert_eq!(compiles, programs.len() as u64, "{:?}", fast.stats());
    // Fresh programs, each dropped after its batch: freed addresses are reused by the next.
    for i in 300..400 {
        let program = Arc::new(random_program(&mut rng));
        step((&mut reference, &mut fast), &program, &u, true, &mut rng, i);
        let k = rng.below(programs.len() as u64) as usize;
        step(
            (&mut reference, &mut fast),
            &first[k],
            &u,
            true,
            &mut rng,
            i,
        );
    }
    assert!(fast.stats().fast_batches > 50, "{:?}", fast.stats());
}

// ----- pass-through outputs and straight-line traces -----

fn mov(dst: DstReg, mask: u8, src: Src) -> Instr {
    Instr::Unary {
        op: UnaryOp::Mov,
        dst: Dst { reg: dst, mask },
        src,
        desc: 0,
    }
}

/// Outputs that are plain copies of inputs (`MOV oK, vJ`, written straight from the input
/// batch) and programs without divergent control flow (run along a cached trace): with the
/// copy skipped by a uniform branch, repeated, next to other writers of the same output,
/// inputs the batch does not carry, outputs it does not store, negated and swizzled copies
/// (which are not pass-throughs), a LOOP with aL-relative reads, every flush/round mode and
/// edge-case inputs.
#[test]
fn pass_through_outputs_and_traces_match_the_reference() {
    let plain = |r| Src::plain(SrcReg::Input(r));
    let neg = Src {
        negate: true,
        ..plain(4)
    };
    let swizzled = Src {
        swizzle: [1, 2, 3, 0],
        ..plain(5)
    };
    let rel = Src {
        rel: RelAddr::AL,
        ..Src::plain(SrcReg::Const(2))
    };
    let instrs = [
        // 0: IFU b0 then {1: mov o0, v0} else {2: mov o6, v1}
        Instr::IfU {
            b: 0,
            dst: 2,
            num: 1,
        },
        mov(DstReg::Output(0), 0xF, plain(0)),
        mov(DstReg::Output(6), 0xF, plain(1)),
        // 3, 4: the same copy twice
        mov(DstReg::Output(1), 0xF, plain(3)),
        mov(DstReg::Output(1), 0xF, plain(3)),
        // 5, 6: a copy and a partial write of the same output (not a pass-through)
        mov(DstReg::Output(2), 0xF, plain(2)),
        mov(DstReg::Output(2), 0b0100, plain(0)),
        // 7, 8: negated and swizzled copies
        mov(DstReg::Output(3), 0xF, neg),
        mov(DstReg::Output(4), 0xF, swizzled),
        // 9: r0 = v0; 10: LOOP i1 { 11: add r0, c2[aL], r0 }; 12: mov o5, r0
        mov(DstReg::Temp(0), 0xF, plain(0)),
        Instr::Loop {
            i: 1,
            dst: 11,
            num: 0,
        },
        Instr::Binary {
            op: BinaryOp::Add,
            dst: Dst {
                reg: DstReg::Temp(0),
                mask: 0xF,
            },
            src1: rel,
            src2: Src::plain(SrcReg::Temp(0)),
            inverted: false,
            desc: 0,
        },
        mov(DstReg::Output(5), 0xF, Src::plain(SrcReg::Temp(0))),
        // 13: a copy from an input the batches may not carry
        mov(DstReg::Output(7), 0xF, plain(9)),
        Instr::End,
    ];
    let mut instrs = instrs;
    // One operand descriptor per instruction.
    for (i, ins) in instrs.iter_mut().enumerate() {
        if let Instr::Unary { desc, .. } | Instr::Binary { desc, .. } = ins {
            *desc = i as u8;
        }
    }
    let (code, descs) = encode_program(&instrs).unwrap();
    let program = Program::new(&code, &descs);
    let mut rng = Rng(0x9A55_7412);
    let (mut fast_batches, mut traced, mut passed) = (0, 0, 0);
    for case_no in 0..60 {
        let edges = rng.chance(70);
        let mut uniforms = random_uniforms(&mut rng, edges);
        uniforms.b[0] = case_no % 2 == 0;
        // Short loops from aL = 0..8 so the relative reads stay in c2..c20.
        uniforms.i[1] = [rng.below(4) as u8, rng.below(8) as u8, 1, 0];
        let start = random_state(&mut rng, edges);
        let in_mask = match case_no % 3 {
            0 => 0x3FF,
            1 => 0x3F,
            _ => rng.below(0x10000) as u16,
        };
        let out_mask = if case_no % 4 == 3 {
            rng.below(0x10000) as u16
        } else {
            0xFF
        };
        let batches = random_batches(&mut rng, in_mask, edges);
        let config = ExecConfig {
            flush: case_no % 5 != 1,
            round_f24: case_no % 7 == 3,
            ..ExecConfig::default()
        };
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask,
        };
        let s = check(&case, &|| {
            format!(
                "case {case_no}, config {config:?}, in {in_mask:#x}, out {out_mask:#x}\n{}",
                listing(&program)
            )
        });
        fast_batches += s.fast_batches;
        traced += s.traced_chunks;
        passed += s.pass_outputs;
    }
    assert!(fast_batches > 0 && traced > 0 && passed > 0);
}

/// Runs of identical instruction words (the compiler copies the op of the word before for a
/// repeat instead of compiling it again): straight-line random arithmetic with each
/// instruction repeated 1-4 times in a row (accumulating MAD/ADD, repeated copies to one
/// output, repeated CMP/MOVA), END, and the rest of a 4096-word code memory filled with one
/// word (zeros, as a GPU's code memory past the uploaded program), in every mode.
#[test]
fn runs_of_identical_words_match_the_reference() {
    let mut rng = Rng(0x0DD5_1DE4_7100_0004);
    let mut repeats = 0usize;
    for case_no in 0..80 {
        let mut g = Gen {
            rng: &mut rng,
            code: Vec::new(),
            subs: Vec::new(),
            arith_descs: 0,
            mad_descs: 0,
            in_loop: false,
            dst_temps: 8,
        };
        let len = g.rng.range(2, 12);
        for _ in 0..len {
            let i = g.arith();
            let times = g.rng.range(1, 4);
            repeats += times as usize - 1;
            for _ in 0..times {
                g.code.push(i);
            }
        }
        g.code.push(Instr::End);
        let Ok((mut code, descs)) = encode_program(&g.code) else {
            continue;
        };
        code.resize(4096, 0);
        let program = Program::new(&code, &descs);
        let edges = rng.chance(70);
        let uniforms = random_uniforms(&mut rng, edges);
        let start = random_state(&mut rng, edges);
        let in_mask = if rng.chance(80) {
            0x3F
        } else {
            rng.below(0x10000) as u16
        };
        let batches = random_batches(&mut rng, in_mask, edges);
        let config = random_config(&mut rng);
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask: 0xFF,
        };
        check(&case, &|| {
            format!("case {case_no}, config {config:?}\n{}", listing(&program))
        });
    }
    assert!(repeats > 100, "{repeats} repeated words");
}

/// Uniform matrix transforms (DP3/DP4/DPH with a uniform first operand, the engine's
/// scalar-uniform path) and a0-relative matrix rows after MOVA (the known-range permute gather)
/// feeding MAD/MUL, over batches of whole 64-lane chunks plus a remainder: uniforms with zeros,
/// infinities and NaNs against inputs with the same (0·inf in every product position, which the
/// engine detects after the fact and recomputes), a0 ranges inside one 32- or 64-row window,
/// wider ones, and offsets that wrap or leave -128..=127; uniform values that change between
/// runs of one engine with and without changing which uniforms are zero.
#[test]
fn transforms_and_relative_rows_match_the_reference() {
    let input = |r| Src::plain(SrcReg::Input(r));
    let temp = |r| Src::plain(SrcReg::Temp(r));
    let cst = |r| Src::plain(SrcReg::Const(r));
    let row = |r| Src {
        rel: RelAddr::A0X,
        ..cst(r)
    };
    let bin = |op, reg, mask, src1, src2| Instr::Binary {
        op,
        dst: Dst { reg, mask },
        src1,
        src2,
        inverted: false,
        desc: 0,
    };
    let mut instrs = vec![
        Instr::Mova {
            src: input(1),
            mask: 0b1000,
            dst_raw: 0,
            desc: 0,
        },
        bin(BinaryOp::Dp4, DstReg::Temp(0), 0b1000, row(8), input(0)),
        bin(BinaryOp::Dp4, DstReg::Temp(0), 0b0100, row(9), input(0)),
        bin(BinaryOp::Dp4, DstReg::Temp(0), 0b0010, row(10), input(0)),
        Instr::Mad {
            dst: Dst {
                reg: DstReg::Temp(1),
                mask: 0xF,
            },
            src1: temp(0),
            src2: input(2),
            src3: input(3),
            inverted: false,
            desc: 0,
        },
        bin(BinaryOp::Dp4, DstReg::Output(0), 0b1000, cst(0), temp(1)),
        bin(BinaryOp::Dp4, DstReg::Output(0), 0b0100, cst(1), input(0)),
        bin(BinaryOp::Dph, DstReg::Output(0), 0b0010, cst(2), input(0)),
        bin(BinaryOp::Dp3, DstReg::Output(0), 0b0001, cst(3), input(0)),
        bin(BinaryOp::Dp4, DstReg::Output(3), 0b1111, cst(4), input(2)),
        bin(BinaryOp::Mul, DstReg::Output(1), 0xF, input(0), temp(0)),
        bin(BinaryOp::Mul, DstReg::Output(4), 0xF, cst(5), input(3)),
        mov(DstReg::Output(2), 0xF, temp(1)),
        Instr::End,
    ];
    for (i, ins) in instrs.iter_mut().enumerate() {
        if let Instr::Unary { desc, .. }
        | Instr::Binary { desc, .. }
        | Instr::Mad { desc, .. }
        | Instr::Mova { desc, .. } = ins
        {
            *desc = i as u8;
        }
    }
    let (code, descs) = encode_program(&instrs).unwrap();
    let program = Program::new(&code, &descs);
    let mut rng = Rng(0x7A4E_5F01);
    let mut fast_batches = 0;
    for case_no in 0..48 {
        let edges = case_no % 3 != 0;
        let mut uniforms = random_uniforms(&mut rng, false);
        if edges {
            // Zeros, infinities and NaNs in the transform rows.
            for c in uniforms.f.iter_mut().take(6) {
                for x in c.iter_mut() {
                    if rng.chance(30) {
                        *x = [0.0, -0.0, f32::INFINITY, f32::NAN][rng.below(4) as usize];
                    }
                }
            }
        }
        // a0.x ranges: one 32-row window, one 64-row window, wider, wrapping/invalid offsets.
        let (lo, span) = [(0, 24), (-8, 60), (0, 90), (-200, 400)][case_no % 4];
        let lens: &[usize] = if case_no % 2 == 0 { &[64, 200] } else { &[128] };
        let batches: Vec<VertexBatch> = lens
            .iter()
            .map(|&len| {
                let mut b = VertexBatch::new(len, 0xF);
                for r in 0..4 {
                    if let Some(vs) = b.reg_mut(r) {
                        for v in vs {
                            *v = random_vec(&mut rng, edges);
                            if r == 1 {
                                v[0] = (lo + rng.below(span) as i64) as f32 + 0.5;
                            }
                        }
                    }
                }
                b
            })
            .collect();
        let config = ExecConfig {
            flush: case_no % 5 != 1,
            round_f24: case_no % 7 == 3,
            ..ExecConfig::default()
        };
        let start = UnitState::default();
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask: 0x1F,
        };
        let what = || format!("case {case_no}, config {config:?}\n{}", listing(&program));
        fast_batches += check(&case, &what).fast_batches;
        // One engine over a batch, then the same batch with other uniform values (same zero /
        // non-zero classes), then with a transform row zeroed: the resolved operations are
        // kept across batches only while the classes stay.
        let mut scaled = uniforms.clone();
        for c in scaled.f.iter_mut() {
            for x in c.iter_mut() {
                *x *= 1.5;
            }
        }
        let mut zeroed = scaled.clone();
        zeroed.f[0] = [0.0, f32::INFINITY, 1.0, 0.0];
        let mut reference = Interpreter::new(config);
        let mut fast = FastEngine::new(config);
        for u in [&uniforms, &scaled, &zeroed, &uniforms] {
            let inputs = &batches[0];
            let mut want = VertexBatch::new(inputs.len(), 0x1F);
            let mut got = VertexBatch::new(inputs.len(), 0x1F);
            let a = reference.run_batch(&program, u, 0, inputs, &mut want);
            let b = fast.run_batch(&program, u, 0, inputs, &mut got);
            assert_eq!(a, b, "{}", what());
            assert_eq!(batch_bits(&got), batch_bits(&want), "{}", what());
            assert_eq!(
                state_bits(fast.state()),
                state_bits(&reference.state),
                "{}",
                what()
            );
        }
    }
    assert!(fast_batches > 0);
}

/// Runs of DP3/DP4 with uniform rows on one operand (matrix transforms, fused into one pass
/// over the lanes by the fast engine): destinations in order and permuted, two to four rows,
/// into outputs and into temps that later rows read, a repeated destination (not fused), a
/// prepared (negated) operand, pass-through outputs beside them; zeros, infinities and NaNs in
/// the rows and the inputs (the 0·inf fix-up of single rows), both flush modes and f24
/// rounding, batches that end mid-chunk.
#[test]
fn matrix_transform_runs_match_the_reference() {
    let input = |r| Src::plain(SrcReg::Input(r));
    let temp = |r| Src::plain(SrcReg::Temp(r));
    let cst = |r| Src::plain(SrcReg::Const(r));
    let bin = |op, reg, mask, src1, src2| Instr::Binary {
        op,
        dst: Dst { reg, mask },
        src1,
        src2,
        inverted: false,
        desc: 0,
    };
    let (dp3, dp4) = (BinaryOp::Dp3, BinaryOp::Dp4);
    let mut instrs = vec![
        bin(dp4, DstReg::Output(0), 0b1000, cst(0), input(0)),
        bin(dp4, DstReg::Output(0), 0b0100, cst(1), input(0)),
        bin(dp4, DstReg::Output(0), 0b0010, cst(2), input(0)),
        bin(dp4, DstReg::Output(0), 0b0001, cst(3), input(0)),
        bin(dp4, DstReg::Output(1), 0b0010, cst(4), input(1)),
        bin(dp4, DstReg::Output(1), 0b1000, cst(5), input(1)),
        bin(dp4, DstReg::Output(1), 0b0001, cst(6), input(1)),
        bin(dp3, DstReg::Temp(0), 0b1000, cst(7), input(2)),
        bin(dp3, DstReg::Temp(0), 0b0100, cst(8), input(2)),
        bin(dp3, DstReg::Temp(0), 0b0010, cst(9), input(2)),
        bin(dp4, DstReg::Temp(1), 0b1000, cst(10), temp(0)),
        bin(dp4, DstReg::Temp(1), 0b0100, cst(11), temp(0)),
        bin(dp4, DstReg::Output(2), 0b0100, cst(12), input(3)),
        bin(dp4, DstReg::Output(2), 0b0100, cst(13), input(3)),
        bin(dp4, DstReg::Output(2), 0b1000, cst(14), input(3)),
        bin(
            dp4,
            DstReg::Temp(2),
            0b1000,
            cst(15),
            Src {
                negate: true,
                ..input(0)
            },
        ),
        bin(dp4, DstReg::Temp(2), 0b0100, cst(16), input(0)),
        bin(dp4, DstReg::Temp(2), 0b0010, cst(17), input(0)),
        bin(BinaryOp::Add, DstReg::Output(3), 0xF, temp(1), temp(2)),
        mov(DstReg::Output(4), 0xF, temp(0)),
        mov(DstReg::Output(5), 0xF, input(4)),
        Instr::End,
    ];
    for (i, ins) in instrs.iter_mut().enumerate() {
        if let Instr::Unary { desc, .. }
        | Instr::Binary { desc, .. }
        | Instr::Mad { desc, .. }
        | Instr::Mova { desc, .. } = ins
        {
            *desc = i as u8;
        }
    }
    let (code, descs) = encode_program(&instrs).unwrap();
    let program = Program::new(&code, &descs);
    let mut rng = Rng(0x3A71_C0DE);
    let mut fast_batches = 0;
    for case_no in 0..36 {
        let edges = case_no % 3 != 0;
        let mut uniforms = random_uniforms(&mut rng, false);
        if edges {
            for c in uniforms.f.iter_mut().take(18) {
                for x in c.iter_mut() {
                    if rng.chance(25) {
                        *x = [0.0, -0.0, f32::INFINITY, f32::NAN][rng.below(4) as usize];
                    }
                }
            }
        }
        let lens: &[usize] = if case_no % 2 == 0 {
            &[64, 77]
        } else {
            &[130, 5]
        };
        let batches: Vec<VertexBatch> = lens
            .iter()
            .map(|&len| {
                let mut b = VertexBatch::new(len, 0x1F);
                for r in 0..5 {
                    if let Some(vs) = b.reg_mut(r) {
                        for v in vs {
                            *v = random_vec(&mut rng, edges);
                        }
                    }
                }
                b
            })
            .collect();
        let config = ExecConfig {
            flush: case_no % 4 != 1,
            round_f24: case_no % 5 == 3,
            ..ExecConfig::default()
        };
        let start = random_state(&mut rng, edges);
        let case = Case {
            program: &program,
            uniforms: &uniforms,
            entry: 0,
            config,
            start: &start,
            batches: &batches,
            out_mask: if case_no % 6 == 5 { 0x2D } else { 0x3F },
        };
        let what = || format!("case {case_no}, config {config:?}\n{}", listing(&program));
        fast_batches += check(&case, &what).fast_batches;
    }
    assert!(fast_batches > 0);
}
