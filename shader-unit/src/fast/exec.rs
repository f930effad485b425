//! The lane executor of the fast engine: one compiled program over `N` vertices at once.
//!
//! Stage: vertex shading (called by [`super::FastEngineN`]). Inputs: a [`Compiled`] program,
//! uniforms, a chunk of up to `N` vertices already transposed into planes. Outputs: the planes of
//! the written registers, per-lane records of what each invocation wrote, counters.
//! Registers read: none.
//!
//! Every register component is a plane `[f32; N]` (lane l = vertex l of the chunk), so an
//! instruction is decoded once per chunk and its arithmetic is a loop over lanes that LLVM turns
//! into SIMD code. Control flow runs per *warp* (a set of lanes following the same path), with
//! the reference's own [`FlowStacks`]: uniform branches (bool/int uniforms) cost nothing per
//! lane; a condition on the per-lane cmp flags that differs between lanes splits the warp in two,
//! each of which then runs to END on its own with its lanes masked.

// Lane loops index several planes with one lane index; `for l in 0..N` is the clearest form and
// what LLVM vectorises.
#![allow(clippy::needless_range_loop)]

use crate::decode::{BinaryOp, Cond, UnaryOp};
use crate::float::round_to_f24;
use crate::interp::alu;
use crate::interp::flow::{FlowStacks, ReturnEntry};
use crate::interp::{
    OUT_OF_RANGE_UNIFORM, RELATIVE_UNIFORM_RULE, RelativeUniformRule, Uniforms, UnitState,
};

use super::compile::{
    C_BASE, Compiled, DstSpec, M_A0X, M_A0Y, M_AL, M_CMPX, M_CMPY, O_BASE, Op, R_BASE, RelIndex,
    SrcSpec, V_FL, V_RAW,
};
use super::trace::Trace;

mod micro;

/// Why a chunk could not be finished on the fast path (the caller re-runs the batch serially).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Abort {
    /// An execution error (budget, PC out of range, BREAK outside a loop) in some lane.
    Error,
    /// An invocation read a register component before writing it, while some instruction may
    /// write it: the value would come from the previous vertex.
    Hazard,
    /// A carried temp value (see [`super::trace::Trace::carry`]) in the batch's starting state
    /// is not flushed while the program reads that component as already flushed (flush mode):
    /// this batch runs serially, later ones may not.
    Unclean,
}

/// Counters of one chunk.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChunkStats {
    /// Instructions over all lanes.
    pub instructions: u64,
    /// Undefined opcodes over all lanes.
    pub unknown: u64,
    /// Warp splits.
    pub splits: u64,
}

/// One group of lanes on a common path.
#[derive(Clone, Copy, Debug)]
struct Warp {
    active: u64,
    pc: u32,
    flow: FlowStacks,
    al: i32,
    count: u64,
    unknown: u64,
    w_ro: u128,
    w_m: u8,
}

/// What an instruction asks the sequencer to do (as the reference's `Step`).
pub(crate) enum Step {
    Next,
    Jump(u32),
    Break(u32),
    End,
}

/// Register planes and per-lane state of one chunk of `N` lanes (`N` ≤ 64).
pub(crate) struct Lanes<const N: usize> {
    /// All float planes: v raw, v flushed, r, o, splatted uniforms.
    pub planes: Vec<[f32; N]>,
    scr: [[[f32; N]; 4]; 3],
    out: [[f32; N]; 4],
    a0: [[i32; N]; 2],
    /// Per a0 component: the smallest and largest value over all `N` lanes, when known (set by
    /// the trace's MOVA and at the batch start, cleared by the generic MOVA); relative reads
    /// use it to skip the per-gather range scan and index wrapping.
    a0_range: [Option<(i32, i32)>; 2],
    cmp: [[bool; N]; 2],
    /// Per splatted uniform plane: finite and non-zero (products with it need no 0·inf check).
    const_safe: Vec<bool>,
    /// Uniforms c0–c127 for relative reads (96–127 read as 1.0).
    rows: [[f32; 4]; ROWS],
    /// The same, flushed.
    rows_fl: [[f32; 4]; ROWS],
    /// `rows` by component (`cols[c][row]`), for the AVX-512 permute gather.
    cols: [[f32; ROWS]; 4],
    /// `rows_fl` by component.
    cols_fl: [[f32; ROWS]; 4],
    gath: [[f32; N]; 4],
    /// Relative reads: the table row of each lane.
    gath_ix: [u32; N],
    /// Relative reads: the gathered rows (vertex-major) before transposition.
    gath_rows: [[f32; 4]; N],
    warps: Vec<Warp>,
    lane_ro: [u128; N],
    lane_m: [u8; N],
    lane_al: [i32; N],
    /// Warps finished in the current chunk.
    finished: u32,
    /// The current chunk split (the per-lane arrays are then filled for every lane).
    split_chunk: bool,
    /// Written sets and aL of the last finished warp.
    first_done: (u128, u8, i32),
    /// Output registers whose [`Op::Pass`] ran in the current chunk (bit K = oK).
    pass_done: u16,
    /// The current trace's steps resolved for this batch.
    micro: micro::MicroList,
    /// Transpositions may use AVX2 (the engine runs at the AVX2 or AVX-512 level).
    pub wide: bool,
    /// Relative reads and transpositions may use AVX-512 (the engine runs at the AVX-512
    /// level).
    pub wide512: bool,
    /// Finishing step of each pass-through output (set per batch).
    pass_fins: [Fin; 16],
}

impl<const N: usize> Lanes<N> {
    /// Empty lanes (planes are sized per program by [`Lanes::begin_batch`]).
    pub fn new() -> Self {
        const { assert!(N > 0 && N <= 64, "lane count must be 1..=64") };
        Self {
            planes: Vec::new(),
            scr: [[[0.0; N]; 4]; 3],
            out: [[0.0; N]; 4],
            a0: [[0; N]; 2],
            a0_range: [None; 2],
            cmp: [[false; N]; 2],
            const_safe: Vec::new(),
            rows: [[0.0; 4]; ROWS],
            rows_fl: [[0.0; 4]; ROWS],
            cols: [[0.0; ROWS]; 4],
            cols_fl: [[0.0; ROWS]; 4],
            gath: [[0.0; N]; 4],
            gath_ix: [0; N],
            gath_rows: [[0.0; 4]; N],
            warps: Vec::with_capacity(N),
            lane_ro: [0; N],
            lane_m: [0; N],
            lane_al: [0; N],
            finished: 0,
            split_chunk: false,
            first_done: (0, 0, 0),
            pass_done: 0,
            micro: micro::MicroList::default(),
            wide: false,
            wide512: false,
            pass_fins: [Fin::Plain; 16],
        }
    }

    /// Prepares a batch: broadcasts the unit state into the register planes that keep one value
    /// for the whole batch (inputs the batch does not carry, temps the program reads but never
    /// writes, stored outputs it never writes), splats the uniforms the program reads directly
    /// and, for relative addressing, copies the uniform table.
    #[inline(always)]
    pub fn begin_batch(
        &mut self,
        prog: &Compiled,
        uniforms: &Uniforms,
        state: &UnitState,
        in_mask: u16,
        out_mask: u16,
        round: bool,
    ) {
        // Only pass-through outputs read their finishing step; scanning the ops for the others
        // walked the whole program for each of 16 outputs on every batch (a 4096-word program
        // made small draws spend most of their shading time here).
        for (r, f) in self.pass_fins.iter_mut().enumerate() {
            *f = if prog.pass[r].is_some() {
                pass_fin(prog, r, round)
            } else {
                Fin::Plain
            };
        }
        let count = prog.plane_count();
        if self.planes.len() != count {
            self.planes.resize(count, [0.0; N]);
        }
        let maywrite_r = prog.maywrite_ro as u64;
        let maywrite_o = (prog.maywrite_ro >> 64) as u64;
        for r in 0..16 {
            let carried = in_mask & (1 << r) != 0;
            for c in 0..4 {
                let k = r * 4 + c;
                let bit = 1u64 << k;
                if !carried && prog.v_raw_read & bit != 0 {
                    self.planes[usize::from(V_RAW) + k] = [state.inputs[r][c]; N];
                }
                if !carried && prog.v_fl_read & bit != 0 {
                    self.planes[usize::from(V_FL) + k] = [alu::flush(state.inputs[r][c]); N];
                }
                if prog.r_read & !maywrite_r & bit != 0 {
                    self.planes[usize::from(R_BASE) + k] = [state.temps[r][c]; N];
                }
                if out_mask & (1 << r) != 0 && maywrite_o & bit == 0 {
                    self.planes[usize::from(O_BASE) + k] = [state.outputs[r][c]; N];
                }
            }
        }
        for (i, p) in prog.consts.iter().enumerate() {
            let mut x = uniforms.f[usize::from(p.reg).min(95)][usize::from(p.comp & 3)];
            if p.neg {
                x = -x;
            }
            if p.flush {
                x = alu::flush(x);
            }
            self.planes[usize::from(C_BASE) + i] = [x; N];
        }
        // The resolved micro-operations depend on the program, the rounding mode and which
        // uniforms are finite and non-zero: they are kept across batches while those stay.
        let consts = &self.planes[usize::from(C_BASE)..];
        let same = self.const_safe.len() == consts.len()
            && self
                .const_safe
                .iter()
                .zip(consts)
                .all(|(&s, p)| s == (p[0].is_finite() && p[0] != 0.0));
        if !same {
            self.const_safe.clear();
            self.const_safe
                .extend(consts.iter().map(|p| p[0].is_finite() && p[0] != 0.0));
            self.micro.key = None;
        }
        if prog.uses_rel {
            let used_rows = self.rows.iter_mut().zip(&mut self.rows_fl).take(ROWS_USED);
            for (i, (t, f)) in used_rows.enumerate() {
                *t = match uniforms.f.get(i) {
                    Some(v) => *v,
                    None if i < 128 => OUT_OF_RANGE_UNIFORM,
                    // Row 128: what ZeroOutside reads outside c0–c95.
                    None => [0.0; 4],
                };
                *f = t.map(alu::flush);
            }
            for (i, (t, f)) in self
                .rows
                .iter()
                .zip(&self.rows_fl)
                .take(ROWS_USED)
                .enumerate()
            {
                for c in 0..4 {
                    self.cols[c][i] = t[c];
                    self.cols_fl[c][i] = f[c];
                }
            }
        }
        self.a0 = [[state.a0[0]; N], [state.a0[1]; N]];
        self.a0_range = [
            Some((state.a0[0], state.a0[0])),
            Some((state.a0[1], state.a0[1])),
        ];
        self.cmp = [[state.cmp[0]; N], [state.cmp[1]; N]];
        if self.micro.prog != prog.id || self.micro.round != round {
            self.micro.key = None;
        }
    }

    /// Transposes `n` vertices' input registers (those the program reads) into the planes.
    #[inline(always)]
    pub fn load_inputs(
        &mut self,
        prog: &Compiled,
        inputs: &crate::interp::VertexBatch,
        first: usize,
        n: usize,
        wide: bool,
    ) {
        // Only the registers the program reads (a chunk is short: a loop over all 16 with
        // their lookups cost more than a one-register transposition).
        let mut regs = prog.v_regs;
        while regs != 0 {
            let r = regs.trailing_zeros() as usize;
            regs &= regs - 1;
            let raw = (prog.v_raw_read >> (r * 4)) & 15;
            let fl = (prog.v_fl_read >> (r * 4)) & 15;
            let Some(vs) = inputs.reg(r).and_then(|v| v.get(first..first + n)) else {
                continue;
            };
            let base = usize::from(V_RAW) + r * 4;
            let fbase = usize::from(V_FL) + r * 4;
            if let Ok(vs) = <&[[f32; 4]; N]>::try_from(vs) {
                // A full chunk: fixed trip counts, so the transposition vectorises.
                let (raws, fls) = self.planes.split_at_mut(fbase);
                let (Ok(rp), Ok(fp)) = (
                    <&mut [[f32; N]; 4]>::try_from(&mut raws[base..base + 4]),
                    <&mut [[f32; N]; 4]>::try_from(&mut fls[..4]),
                ) else {
                    continue;
                };
                if raw != 0 && !wide_in(wide, self.wide512, vs, rp, false) {
                    for l in 0..N {
                        let v = vs[l];
                        rp[0][l] = v[0];
                        rp[1][l] = v[1];
                        rp[2][l] = v[2];
                        rp[3][l] = v[3];
                    }
                }
                if fl != 0 && !wide_in(wide, self.wide512, vs, fp, true) {
                    for l in 0..N {
                        let v = vs[l];
                        fp[0][l] = alu::flush(v[0]);
                        fp[1][l] = alu::flush(v[1]);
                        fp[2][l] = alu::flush(v[2]);
                        fp[3][l] = alu::flush(v[3]);
                    }
                }
            } else {
                for c in 0..4 {
                    if raw & (1 << c) != 0 {
                        let p = &mut self.planes[base + c];
                        for (d, v) in p.iter_mut().zip(vs) {
                            *d = v[c];
                        }
                    }
                    if fl & (1 << c) != 0 {
                        let p = &mut self.planes[fbase + c];
                        for (d, v) in p.iter_mut().zip(vs) {
                            *d = alu::flush(v[c]);
                        }
                    }
                }
            }
        }
    }

    /// Writes `n` vertices' output registers in `outputs.mask()` from the planes, except those
    /// in `skip` (pass-through outputs the caller writes for the whole batch with
    /// [`Lanes::store_pass`]).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn store_outputs(
        &self,
        prog: &Compiled,
        inputs: &crate::interp::VertexBatch,
        state: &UnitState,
        outputs: &mut crate::interp::VertexBatch,
        first: usize,
        n: usize,
        wide: bool,
        skip: u16,
    ) {
        let mut regs = outputs.mask() & !skip;
        while regs != 0 {
            let r = regs.trailing_zeros() as usize;
            regs &= regs - 1;
            let Some(dst) = outputs.reg_mut(r).and_then(|v| v.get_mut(first..first + n)) else {
                continue;
            };
            if self.pass_done & (1 << r) != 0
                && let Some(j) = prog.pass[r]
            {
                self.pass_into(prog, inputs, state, dst, r, j, first, n);
                continue;
            }
            let base = usize::from(O_BASE) + r * 4;
            let Ok(src) = <&[[f32; N]; 4]>::try_from(&self.planes[base..base + 4]) else {
                continue;
            };
            if let Ok(dst) = <&mut [[f32; 4]; N]>::try_from(&mut *dst) {
                if wide_out(wide, self.wide512, src, dst) {
                    continue;
                }
                for l in 0..N {
                    dst[l] = [src[0][l], src[1][l], src[2][l], src[3][l]];
                }
            } else {
                for (l, d) in dst.iter_mut().enumerate() {
                    *d = [src[0][l], src[1][l], src[2][l], src[3][l]];
                }
            }
        }
    }

    /// Writes pass-through outputs `regs` (those in `outputs.mask()` with a pass-through MOV)
    /// of vertices `first .. first + n` straight from the input batch: the batch-wide form of
    /// the pass-through branch of [`Lanes::store_outputs`] (one long loop per register instead
    /// of one per chunk), for when every chunk of the range ran the same pass-through MOVs.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn store_pass(
        &self,
        prog: &Compiled,
        inputs: &crate::interp::VertexBatch,
        state: &UnitState,
        outputs: &mut crate::interp::VertexBatch,
        regs: u16,
        first: usize,
        n: usize,
    ) {
        let mut regs = regs & outputs.mask();
        while regs != 0 {
            let r = regs.trailing_zeros() as usize;
            regs &= regs - 1;
            let Some(j) = prog.pass[r] else {
                continue;
            };
            let Some(dst) = outputs.reg_mut(r).and_then(|v| v.get_mut(first..first + n)) else {
                continue;
            };
            self.pass_into(prog, inputs, state, dst, r, j, first, n);
        }
    }

    /// Pass-through output `r` (from input `j`) of vertices `first .. first + n` into `dst`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn pass_into(
        &self,
        prog: &Compiled,
        inputs: &crate::interp::VertexBatch,
        state: &UnitState,
        dst: &mut [[f32; 4]],
        r: usize,
        j: u8,
        first: usize,
        n: usize,
    ) {
        let fin = self.pass_fins[r];
        let fl = prog.flush;
        match inputs
            .reg(usize::from(j))
            .and_then(|v| v.get(first..first + n))
        {
            Some(src) => {
                match (fl, fin) {
                    // The usual case (flush mode, MOV): one flush per component.
                    (true, Fin::Plain) => {
                        // Flat float slices: a plain element-wise loop that vectorises.
                        let d = dst.as_flattened_mut();
                        for (d, s) in d.iter_mut().zip(src.as_flattened()) {
                            *d = alu::flush(*s);
                        }
                    }
                    (false, Fin::Plain) => dst.copy_from_slice(src),
                    _ => {
                        for (d, s) in dst.iter_mut().zip(src) {
                            *d = pass_vec(*s, fl, fin);
                        }
                    }
                }
            }
            None => {
                let v = pass_vec(state.inputs[usize::from(j)], fl, fin);
                dst.fill(v);
            }
        }
    }

    /// Output registers written by pass-through MOVs in the last chunk (bit K = oK).
    pub fn pass_done(&self) -> u16 {
        self.pass_done
    }

    /// Runs lanes `0..n` from `entry` to END. `al0` is aL at the start (the carried value).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub fn run_chunk(
        &mut self,
        prog: &Compiled,
        uniforms: &Uniforms,
        budget: u64,
        round: bool,
        entry: u32,
        n: usize,
        al0: i32,
        trace: Option<&Trace>,
        stats: &mut ChunkStats,
    ) -> Result<(), Abort> {
        let init = if n >= 64 { !0u64 } else { (1u64 << n) - 1 };
        self.warps.clear();
        self.finished = 0;
        self.split_chunk = false;
        self.pass_done = 0;
        if let Some(t) = trace {
            return self.run_trace(prog, t, round, init, stats);
        }
        self.warps.push(Warp {
            active: init,
            pc: entry,
            flow: FlowStacks::default(),
            al: al0,
            count: 0,
            unknown: 0,
            w_ro: 0,
            w_m: 0,
        });
        while let Some(mut w) = self.warps.pop() {
            // Lanes past `n` hold no vertex: writing them is harmless, so a warp with every real
            // lane writes unmasked.
            let mut all = w.active == init;
            loop {
                let pc = w.pc;
                let Some(op) = prog.ops.get(pc as usize) else {
                    return Err(Abort::Error);
                };
                if w.count >= budget {
                    return Err(Abort::Error);
                }
                let meta = &prog.meta[pc as usize];
                if meta.hazard_r & !(w.w_ro as u64) != 0 || meta.hazard_m & !w.w_m != 0 {
                    return Err(Abort::Hazard);
                }
                let step = match op {
                    Op::Bin { op, dst, a, b } => {
                        self.binary(*op, dst, a, b, w.active, all, w.al, round);
                        Step::Next
                    }
                    Op::Mad { dst, a, b, c } => {
                        self.mad(dst, a, b, c, w.active, all, w.al, round);
                        Step::Next
                    }
                    Op::Un { op, dst, a } => {
                        self.unary(*op, dst, a, w.active, all, w.al, round);
                        Step::Next
                    }
                    Op::Mova { a, mask } => {
                        self.mova(a, *mask, w.active, all, w.al);
                        Step::Next
                    }
                    Op::Cmp { a, b, ops } => {
                        self.compare(a, b, *ops, w.active, all, w.al);
                        Step::Next
                    }
                    &Op::Pass { reg, .. } => {
                        // Programs with pass-through outputs have no divergent control flow,
                        // so the single warp always has every lane.
                        if !all {
                            return Err(Abort::Error);
                        }
                        self.pass_done |= 1 << (reg & 15);
                        Step::Next
                    }
                    Op::Nop => Step::Next,
                    Op::Unknown => {
                        w.unknown += 1;
                        Step::Next
                    }
                    Op::End => Step::End,
                    Op::Break => match w.flow.break_loop(&mut w.al) {
                        Some(t) => Step::Break(t),
                        None => return Err(Abort::Error),
                    },
                    &Op::BreakC { cond } => match self.cond(cond, w.active) {
                        Some(true) => match w.flow.break_loop(&mut w.al) {
                            Some(t) => Step::Break(t),
                            None => return Err(Abort::Error),
                        },
                        Some(false) => Step::Next,
                        None => {
                            self.split(&mut w, cond, stats);
                            all = false;
                            continue;
                        }
                    },
                    &Op::Call { dst, num } => call(&mut w.flow, pc, dst, num),
                    &Op::CallC { cond, dst, num } => match self.cond(cond, w.active) {
                        Some(true) => call(&mut w.flow, pc, dst, num),
                        Some(false) => Step::Next,
                        None => {
                            self.split(&mut w, cond, stats);
                            all = false;
                            continue;
                        }
                    },
                    &Op::CallU { b, dst, num } => {
                        if uniforms.b[usize::from(b & 15)] {
                            call(&mut w.flow, pc, dst, num)
                        } else {
                            Step::Next
                        }
                    }
                    &Op::IfU { b, dst, num } => {
                        branch_if(&mut w.flow, uniforms.b[usize::from(b & 15)], dst, num)
                    }
                    &Op::IfC { cond, dst, num } => match self.cond(cond, w.active) {
                        Some(t) => branch_if(&mut w.flow, t, dst, num),
                        None => {
                            self.split(&mut w, cond, stats);
                            all = false;
                            continue;
                        }
                    },
                    &Op::Loop { i, dst } => {
                        let iu = uniforms.i[usize::from(i & 3)];
                        w.flow.push_loop(pc, u32::from(dst), iu, &mut w.al);
                        Step::Next
                    }
                    &Op::JmpC { cond, dst } => match self.cond(cond, w.active) {
                        Some(true) => Step::Jump(u32::from(dst)),
                        Some(false) => Step::Next,
                        None => {
                            self.split(&mut w, cond, stats);
                            all = false;
                            continue;
                        }
                    },
                    &Op::JmpU { b, dst, invert } => {
                        if uniforms.b[usize::from(b & 15)] != invert {
                            Step::Jump(u32::from(dst))
                        } else {
                            Step::Next
                        }
                    }
                };
                w.count += 1;
                w.w_ro |= meta.writes_ro;
                w.w_m |= meta.writes_m;
                let next = pc + 1;
                w.pc = match step {
                    Step::End => {
                        self.finish_warp(&w, stats);
                        break;
                    }
                    Step::Next => w.flow.next_pc(next, None, None, &mut w.al),
                    Step::Jump(t) => w.flow.next_pc(next, Some(t), None, &mut w.al),
                    Step::Break(t) => w.flow.next_pc(next, None, Some(t), &mut w.al),
                };
            }
        }
        Ok(())
    }

    /// Runs a chunk along a precomputed [`Trace`]: every lane active, no sequencer.
    #[inline(always)]
    fn run_trace(
        &mut self,
        prog: &Compiled,
        t: &Trace,
        round: bool,
        init: u64,
        stats: &mut ChunkStats,
    ) -> Result<(), Abort> {
        if let Some(abort) = t.outcome {
            return Err(abort);
        }
        if self.micro.key != Some(t.key) {
            self.build_micro(prog, t, round);
        }
        self.run_micro(prog, round, init);
        let lanes = u64::from(init.count_ones());
        stats.instructions += t.count * lanes;
        stats.unknown += t.unknown * lanes;
        self.finished = 1;
        self.first_done = (t.w_ro, t.w_m, t.al_end);
        Ok(())
    }

    #[inline(always)]
    fn finish_warp(&mut self, w: &Warp, stats: &mut ChunkStats) {
        let lanes = u64::from(w.active.count_ones());
        stats.instructions += w.count * lanes;
        stats.unknown += w.unknown * lanes;
        self.finished += 1;
        self.first_done = (w.w_ro, w.w_m, w.al);
        if self.finished > 1 || self.split_chunk {
            self.expand(w);
        }
    }

    /// Records a warp's written sets and aL in the per-lane arrays.
    #[cold]
    fn expand(&mut self, w: &Warp) {
        for l in 0..N {
            if w.active >> l & 1 != 0 {
                self.lane_ro[l] = w.w_ro;
                self.lane_m[l] = w.w_m;
                self.lane_al[l] = w.al;
            }
        }
    }

    /// The condition over the warp's lanes: `Some(v)` when every active lane agrees.
    #[inline(always)]
    fn cond(&self, cond: Cond, active: u64) -> Option<bool> {
        let t = self.cond_bits(cond) & active;
        if t == active {
            Some(true)
        } else if t == 0 {
            Some(false)
        } else {
            None
        }
    }

    #[inline(always)]
    fn cond_bits(&self, cond: Cond) -> u64 {
        let (cx, cy) = (&self.cmp[0], &self.cmp[1]);
        let mut t = 0u64;
        for l in 0..N {
            t |= u64::from(cond.eval(cx[l], cy[l])) << l;
        }
        t
    }

    /// Splits `w` on a divergent condition: the lanes where it holds continue later as their
    /// own warp (re-executing this instruction), the others continue now.
    #[cold]
    fn split(&mut self, w: &mut Warp, cond: Cond, stats: &mut ChunkStats) {
        self.split_chunk = true;
        let t = self.cond_bits(cond) & w.active;
        let mut taken = *w;
        taken.active = t;
        w.active &= !t;
        self.warps.push(taken);
        stats.splits += 1;
    }

    /// Fills source slot `slot`'s scratch planes if the operand needs negation, flushing or a
    /// gather.
    #[inline(always)]
    fn prep(&mut self, s: &SrcSpec, slot: usize, al: i32) {
        let scr = &mut self.scr[slot];
        match *s {
            SrcSpec::Planes {
                planes,
                neg,
                flush,
                used,
            } => {
                if !neg && !flush {
                    return;
                }
                for lane in 0..4 {
                    if used & (1 << lane) == 0 {
                        continue;
                    }
                    let src = &self.planes[usize::from(planes[lane])];
                    let dst = &mut scr[lane];
                    match (neg, flush) {
                        (true, true) => {
                            for l in 0..N {
                                dst[l] = alu::flush(-src[l]);
                            }
                        }
                        (true, false) => {
                            for l in 0..N {
                                dst[l] = -src[l];
                            }
                        }
                        _ => {
                            for l in 0..N {
                                dst[l] = alu::flush(src[l]);
                            }
                        }
                    }
                }
            }
            SrcSpec::Rel {
                base,
                comps,
                index,
                neg,
                flush,
                used,
            } => {
                let base = i32::from(base);
                let fix = |mut x: f32| {
                    if neg {
                        x = -x;
                    }
                    if flush { alu::flush(x) } else { x }
                };
                match index {
                    RelIndex::Al => {
                        let row = self.rows[rel_index(base, al)];
                        for lane in 0..4 {
                            if used & (1 << lane) != 0 {
                                let x = fix(row[usize::from(comps[lane] & 3)]);
                                scr[lane] = [x; N];
                            }
                        }
                    }
                    RelIndex::A0X | RelIndex::A0Y => {
                        // One 16-byte row per lane (from the pre-flushed table when the operand
                        // is flushed), transposed into four component planes; the swizzle and
                        // negation follow as plane operations unless they are the identity.
                        let k = usize::from(index == RelIndex::A0Y);
                        let a = &self.a0[k];
                        // flush(-x) == -flush(x) except at zero, so negated operands gather raw.
                        let rows = if flush && !neg {
                            &self.rows_fl
                        } else {
                            &self.rows
                        };
                        let direct = !neg && comps == [0, 1, 2, 3];
                        let g = if direct { &mut *scr } else { &mut self.gath };
                        // Three vectorisable passes: row indices, a 16-byte copy per lane, and
                        // the transposition into component planes (as for inputs).
                        let (ix, tmp) = (&mut self.gath_ix, &mut self.gath_rows);
                        let cols = if flush && !neg {
                            &self.cols_fl
                        } else {
                            &self.cols
                        };
                        // Known a0 range with every row `base + a0` read without wrapping:
                        // the permute gather adds the offset itself (no index pass, no range
                        // scan).
                        let known = match self.a0_range[k] {
                            Some((mn, mx)) if self.wide512 && rel_plain(base, mn, mx) => {
                                wide_gather_off(cols, a, base, base + mn, base + mx, g)
                            }
                            _ => false,
                        };
                        let gathered = known || {
                            for l in 0..N {
                                ix[l] = rel_index(base, a[l]) as u32;
                            }
                            wide_gather(self.wide512, cols, ix, g)
                        };
                        if gathered {
                            // Done with permutes (all lanes' rows within a 64-row window).
                        } else {
                            for l in 0..N {
                                tmp[l] = rows[ix[l] as usize & (ROWS - 1)];
                            }
                            if !wide_in(self.wide, self.wide512, tmp, g, false) {
                                for l in 0..N {
                                    let row = tmp[l];
                                    g[0][l] = row[0];
                                    g[1][l] = row[1];
                                    g[2][l] = row[2];
                                    g[3][l] = row[3];
                                }
                            }
                        }
                        if direct {
                            return;
                        }
                        let g = &self.gath;
                        for lane in 0..4 {
                            if used & (1 << lane) == 0 {
                                continue;
                            }
                            let (src, dst) = (&g[usize::from(comps[lane] & 3)], &mut scr[lane]);
                            match (neg, flush) {
                                (false, _) => *dst = *src,
                                (true, false) => {
                                    for l in 0..N {
                                        dst[l] = -src[l];
                                    }
                                }
                                (true, true) => {
                                    for l in 0..N {
                                        dst[l] = alu::flush(-src[l]);
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn binary(
        &mut self,
        op: BinaryOp,
        dst: &DstSpec,
        a: &SrcSpec,
        b: &SrcSpec,
        active: u64,
        all: bool,
        al: i32,
        round: bool,
    ) {
        self.prep(a, 0, al);
        self.prep(b, 1, al);
        let Self {
            planes,
            scr,
            out,
            const_safe,
            ..
        } = self;
        let fin = Fin::of(dst, round);
        let m = dst.mask;
        // A product with a finite non-zero uniform cannot be 0·inf: plain multiplication then
        // gives exactly `alu::mul`'s result.
        let safe = |k: usize| is_safe(a, k, const_safe) || is_safe(b, k, const_safe);
        if matches!(op, BinaryOp::Dp3 | BinaryOp::Dp4 | BinaryOp::Dph) {
            let safe_all = safe(0) && safe(1) && safe(2) && (op != BinaryOp::Dp4 || safe(3));
            let first = m.trailing_zeros() as usize;
            // Straight into the first destination plane when no operand plane is that plane.
            let mut done = None;
            if all && first < 4 {
                let d = usize::from(dst.planes[first]);
                if let Some((dp, sp)) = split_dst(planes, d)
                    && let (Some(xs), Some(ys)) =
                        (views_split(a, &sp, &scr[0]), views_split(b, &sp, &scr[1]))
                {
                    dot(op, dp, xs, ys, fin, safe_all);
                    done = Some(d);
                }
            }
            match done {
                Some(d) => {
                    for c in first + 1..4 {
                        if m & (1 << c) != 0 {
                            copy_plane(planes, d, usize::from(dst.planes[c]), active, true);
                        }
                    }
                }
                None => {
                    {
                        let pl: &[[f32; N]] = planes;
                        let xs = view(a, pl, &scr[0]);
                        let ys = view(b, pl, &scr[1]);
                        dot(op, &mut out[0], xs, ys, fin, safe_all);
                    }
                    for c in 0..4 {
                        if m & (1 << c) != 0 {
                            commit(
                                &mut planes[usize::from(dst.planes[c])],
                                &out[0],
                                active,
                                all,
                            );
                        }
                    }
                }
            }
            return;
        }
        if all && dst.direct {
            // Component by component straight into the destination planes; a component whose
            // operand is its own destination plane goes through scratch.
            for c in 0..4 {
                if m & (1 << c) == 0 {
                    continue;
                }
                let d = usize::from(dst.planes[c]);
                let sc = safe(c);
                if let Some((dp, sp)) = split_dst(planes, d)
                    && let (Some(xs), Some(ys)) =
                        (src_split(a, c, &sp, &scr[0]), src_split(b, c, &sp, &scr[1]))
                {
                    elementwise(op, c, dp, xs, ys, fin, sc);
                    continue;
                }
                {
                    let pl: &[[f32; N]] = planes;
                    let (xs, ys) = (src_plane(a, c, pl, &scr[0]), src_plane(b, c, pl, &scr[1]));
                    elementwise(op, c, &mut out[c], xs, ys, fin, sc);
                }
                planes[d] = out[c];
            }
            return;
        }
        {
            let pl: &[[f32; N]] = planes;
            for c in 0..4 {
                if m & (1 << c) != 0 {
                    let (xs, ys) = (src_plane(a, c, pl, &scr[0]), src_plane(b, c, pl, &scr[1]));
                    elementwise(op, c, &mut out[c], xs, ys, fin, safe(c));
                }
            }
        }
        for c in 0..4 {
            if m & (1 << c) != 0 {
                commit(
                    &mut planes[usize::from(dst.planes[c])],
                    &out[c],
                    active,
                    all,
                );
            }
        }
    }

    /// [`micro::Micro::DotRel`] fused: DP4 of the a0-relative row `src` and planes `y` into
    /// plane `d` with the AVX-512 gather kernel, when the engine runs at that level, a0's range
    /// is known and reads every row without wrapping. `None` when it did nothing; else whether
    /// some lane came out NaN (the caller recomputes with the 0·inf fix-up).
    #[inline(always)]
    fn dot_rel(&mut self, src: &SrcSpec, y: [u16; 4], fin: Fin, d: usize) -> Option<bool> {
        let SrcSpec::Rel {
            base,
            index,
            flush,
            neg: false,
            ..
        } = *src
        else {
            return None;
        };
        if !self.wide512 || index == RelIndex::Al || !matches!(fin, Fin::Plain | Fin::Flush) {
            return None;
        }
        let k = usize::from(index == RelIndex::A0Y);
        let (mn, mx) = self.a0_range[k]?;
        let base = i32::from(base);
        if !rel_plain(base, mn, mx) {
            return None;
        }
        let Self {
            planes,
            cols,
            cols_fl,
            a0,
            ..
        } = self;
        let cols = if flush { &*cols_fl } else { &*cols };
        let (dp, sp) = split_dst(planes, d)?;
        let ys = [
            sp.get(usize::from(y[0]))?,
            sp.get(usize::from(y[1]))?,
            sp.get(usize::from(y[2]))?,
            sp.get(usize::from(y[3]))?,
        ];
        dot4_rel(
            cols,
            &a0[k],
            base,
            base + mn,
            base + mx,
            ys,
            dp,
            fin == Fin::Flush,
        )
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn mad(
        &mut self,
        dst: &DstSpec,
        a: &SrcSpec,
        b: &SrcSpec,
        c: &SrcSpec,
        active: u64,
        all: bool,
        al: i32,
        round: bool,
    ) {
        self.prep(a, 0, al);
        self.prep(b, 1, al);
        self.prep(c, 2, al);
        let Self {
            planes,
            scr,
            out,
            const_safe,
            ..
        } = self;
        let fin = Fin::of(dst, round);
        let kernel = |o: &mut [f32; N], x: &[f32; N], y: &[f32; N], z: &[f32; N], safe: bool| {
            if safe {
                fill(o, fin, |l| x[l] * y[l] + z[l]);
            } else {
                fill(o, fin, |l| alu::mul(x[l], y[l]) + z[l]);
            }
        };
        let direct = all && dst.direct;
        for k in 0..4 {
            if dst.mask & (1 << k) == 0 {
                continue;
            }
            let safe = is_safe(a, k, const_safe) || is_safe(b, k, const_safe);
            let d = usize::from(dst.planes[k]);
            if direct
                && let Some((dp, sp)) = split_dst(planes, d)
                && let (Some(x), Some(y), Some(z)) = (
                    src_split(a, k, &sp, &scr[0]),
                    src_split(b, k, &sp, &scr[1]),
                    src_split(c, k, &sp, &scr[2]),
                )
            {
                kernel(dp, x, y, z, safe);
                continue;
            }
            {
                let pl: &[[f32; N]] = planes;
                let x = src_plane(a, k, pl, &scr[0]);
                let y = src_plane(b, k, pl, &scr[1]);
                let z = src_plane(c, k, pl, &scr[2]);
                kernel(&mut out[k], x, y, z, safe);
            }
            if direct {
                planes[d] = out[k];
            }
        }
        if !direct {
            for k in 0..4 {
                if dst.mask & (1 << k) != 0 {
                    commit(
                        &mut planes[usize::from(dst.planes[k])],
                        &out[k],
                        active,
                        all,
                    );
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn unary(
        &mut self,
        op: UnaryOp,
        dst: &DstSpec,
        a: &SrcSpec,
        active: u64,
        all: bool,
        al: i32,
        round: bool,
    ) {
        self.prep(a, 0, al);
        let Self {
            planes,
            scr,
            out,
            cmp,
            ..
        } = self;
        let m = dst.mask;
        let fin = Fin::of(dst, round);
        match op {
            UnaryOp::Mov if fin == Fin::Plain && dst.direct => {
                // Straight copies from the source planes (or the prepared scratch).
                for k in 0..4 {
                    if m & (1 << k) == 0 {
                        continue;
                    }
                    let d = usize::from(dst.planes[k]);
                    match *a {
                        SrcSpec::Planes {
                            planes: p,
                            neg: false,
                            flush: false,
                            ..
                        } => copy_plane(planes, usize::from(p[k]), d, active, all),
                        _ => commit(&mut planes[d], &scr[0][k], active, all),
                    }
                }
            }
            UnaryOp::Mov | UnaryOp::Flr => {
                let kernel = |o: &mut [f32; N], x: &[f32; N]| {
                    if op == UnaryOp::Mov {
                        fill(o, fin, |l| x[l]);
                    } else {
                        fill(o, fin, |l| alu::flr(x[l]));
                    }
                };
                let direct = all && dst.direct;
                for k in 0..4 {
                    if m & (1 << k) == 0 {
                        continue;
                    }
                    let d = usize::from(dst.planes[k]);
                    if direct
                        && let Some((dp, sp)) = split_dst(planes, d)
                        && let Some(x) = src_split(a, k, &sp, &scr[0])
                    {
                        kernel(dp, x);
                        continue;
                    }
                    kernel(&mut out[k], src_plane(a, k, planes, &scr[0]));
                    if direct {
                        planes[d] = out[k];
                    }
                }
                if !direct {
                    for k in 0..4 {
                        if m & (1 << k) != 0 {
                            commit(
                                &mut planes[usize::from(dst.planes[k])],
                                &out[k],
                                active,
                                all,
                            );
                        }
                    }
                }
            }
            UnaryOp::Ex2 | UnaryOp::Lg2 | UnaryOp::Rcp | UnaryOp::Rsq => {
                {
                    let x = src_plane(a, 0, planes, &scr[0]);
                    let o = &mut out[0];
                    match op {
                        UnaryOp::Rcp => fill(o, fin, |l| alu::rcp(x[l])),
                        UnaryOp::Rsq => fill(o, fin, |l| alu::rsq(x[l])),
                        UnaryOp::Ex2 => fill(o, fin, |l| alu::ex2(x[l])),
                        _ => fill(o, fin, |l| alu::lg2(x[l])),
                    }
                }
                for k in 0..4 {
                    if m & (1 << k) != 0 {
                        commit(
                            &mut planes[usize::from(dst.planes[k])],
                            &out[0],
                            active,
                            all,
                        );
                    }
                }
            }
            UnaryOp::Litp => {
                let va = view(a, planes, &scr[0]);
                for l in 0..N {
                    let (v, cx, cy) = alu::litp(&[va[0][l], va[1][l], va[2][l], va[3][l]]);
                    out[0][l] = v[0];
                    out[1][l] = v[1];
                    out[2][l] = v[2];
                    out[3][l] = v[3];
                    if all || active >> l & 1 != 0 {
                        cmp[0][l] = cx;
                        cmp[1][l] = cy;
                    }
                }
                for k in 0..4 {
                    if m & (1 << k) != 0 {
                        let o = &mut out[k];
                        let v = *o;
                        fill(o, fin, |l| v[l]);
                        commit(&mut planes[usize::from(dst.planes[k])], o, active, all);
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn mova(&mut self, a: &SrcSpec, mask: u8, active: u64, all: bool, al: i32) {
        self.prep(a, 0, al);
        for k in 0..2 {
            if mask & (1 << k) != 0 {
                self.a0_range[k] = None;
            }
        }
        let Self {
            planes, scr, a0, ..
        } = self;
        let va = view(a, planes, &scr[0]);
        for k in 0..2 {
            if mask & (1 << k) != 0 {
                let (d, x) = (&mut a0[k], va[k]);
                if all {
                    for l in 0..N {
                        d[l] = mova_bits(x[l]);
                    }
                } else {
                    for l in 0..N {
                        if active >> l & 1 != 0 {
                            d[l] = mova_bits(x[l]);
                        }
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn compare(
        &mut self,
        a: &SrcSpec,
        b: &SrcSpec,
        ops: [crate::decode::CmpOp; 2],
        active: u64,
        all: bool,
        al: i32,
    ) {
        self.prep(a, 0, al);
        self.prep(b, 1, al);
        let Self {
            planes, scr, cmp, ..
        } = self;
        let va = view(a, planes, &scr[0]);
        let vb = view(b, planes, &scr[1]);
        for k in 0..2 {
            let (d, x, y) = (&mut cmp[k], va[k], vb[k]);
            for l in 0..N {
                let v = alu::compare(ops[k], x[l], y[l], d[l]);
                if all || active >> l & 1 != 0 {
                    d[l] = v;
                }
            }
        }
    }

    /// After a chunk: carries the last writer's value of every possibly-written component into
    /// `state` (the unit's registers as of the chunk's last vertex), and gives output components
    /// a lane did not write the value the previous vertex left (as the serial unit would).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn finish_chunk(
        &mut self,
        prog: &Compiled,
        state: &mut UnitState,
        n: usize,
        out_mask: u16,
        inputs: &crate::interp::VertexBatch,
        first_vertex: usize,
    ) {
        if n == 0 {
            return;
        }
        // Pass-through outputs: the last vertex's value, from the input batch; their planes
        // were not written, so they are taken out of the plane bookkeeping below.
        let mut pass_bits = 0u128;
        let mut pass = self.pass_done;
        while pass != 0 {
            let r = pass.trailing_zeros() as usize;
            pass &= pass - 1;
            let Some(j) = prog.pass[r] else {
                continue;
            };
            let (fl, fin) = (prog.flush, self.pass_fins[r]);
            let v = inputs
                .reg(usize::from(j))
                .and_then(|v| v.get(first_vertex + n - 1))
                .copied()
                .unwrap_or(state.inputs[usize::from(j)]);
            state.outputs[r] = pass_vec(v, fl, fin);
            pass_bits |= 15u128 << (64 + r * 4);
        }
        // One warp ran every lane (no divergence): every lane wrote the same components.
        let uniform = !self.split_chunk;
        let first = (self.first_done.0, self.first_done.1);
        if uniform {
            self.lane_m[n - 1] = first.1;
            self.lane_al[n - 1] = self.first_done.2;
        }
        let mut bits = prog.maywrite_ro & !pass_bits;
        if uniform {
            // Every lane wrote the same components: the last vertex's value of each written
            // component is carried, and stored output components the chunk did not write keep
            // the carried value (two tight loops over bit sets instead of one branchy one).
            let written = bits & first.0;
            let li = n - 1;
            let r_base = usize::from(R_BASE);
            let mut w = written as u64;
            let temps = state.temps.as_flattened_mut();
            while w != 0 {
                let k = w.trailing_zeros() as usize;
                w &= w - 1;
                if let (Some(c), Some(p)) = (temps.get_mut(k), self.planes.get(r_base + k)) {
                    *c = p[li];
                }
            }
            let mut w = (written >> 64) as u64;
            let outs = state.outputs.as_flattened_mut();
            while w != 0 {
                let k = w.trailing_zeros() as usize;
                w &= w - 1;
                if let (Some(c), Some(p)) = (outs.get_mut(k), self.planes.get(r_base + 64 + k)) {
                    *c = p[li];
                }
            }
            let stored = (0..16).fold(0u64, |m, r| {
                m | (u64::from(out_mask >> r & 1) * 15) << (r * 4)
            });
            let mut f = ((bits & !first.0) >> 64) as u64 & stored;
            while f != 0 {
                let k = f.trailing_zeros() as usize;
                f &= f - 1;
                if let (Some(c), Some(p)) = (outs.get(k), self.planes.get_mut(r_base + 64 + k)) {
                    p[..n].fill(*c);
                }
            }
            bits = 0;
        }
        // Divergent chunks: per lane, in vertex order.
        while bits != 0 {
            let k = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (reg, c) = ((k % 64) / 4, k % 4);
            let stored = k >= 64 && out_mask & (1 << reg) != 0;
            let carry = if k < 64 {
                &mut state.temps[reg][c]
            } else {
                &mut state.outputs[reg][c]
            };
            let p = &mut self.planes[usize::from(R_BASE) + k];
            let mut prev = *carry;
            for l in 0..n {
                if self.lane_ro[l] >> k & 1 != 0 {
                    prev = p[l];
                } else if stored {
                    p[l] = prev;
                }
            }
            *carry = prev;
        }
        let lane_m = &self.lane_m[..n];
        let last = |bit: u8| {
            if uniform {
                (first.1 & bit != 0).then_some(n - 1)
            } else {
                lane_m.iter().rposition(|&m| m & bit != 0)
            }
        };
        if prog.maywrite_m & M_A0X != 0
            && let Some(l) = last(M_A0X)
        {
            state.a0[0] = self.a0[0][l];
        }
        if prog.maywrite_m & M_A0Y != 0
            && let Some(l) = last(M_A0Y)
        {
            state.a0[1] = self.a0[1][l];
        }
        if prog.maywrite_m & M_CMPX != 0
            && let Some(l) = last(M_CMPX)
        {
            state.cmp[0] = self.cmp[0][l];
        }
        if prog.maywrite_m & M_CMPY != 0
            && let Some(l) = last(M_CMPY)
        {
            state.cmp[1] = self.cmp[1][l];
        }
        if prog.maywrite_m & M_AL != 0
            && let Some(l) = last(M_AL)
        {
            state.al = self.lane_al[l];
        }
    }
}

/// Rows of the relative-read table: c0–c127 as the reference reads them under
/// [`RelativeUniformRule::WrapMod128`] (96–127 read as 1.0), and row 128 = (0, 0, 0, 0) for
/// [`RelativeUniformRule::ZeroOutside`]. Rows 129–255 are never read ([`rel_index`] returns at
/// most 128) and stay zero: they pad the table to a power of two so that a masked index needs
/// no bounds check.
pub(crate) const ROWS: usize = 256;
/// Rows of the table that [`rel_index`] can return.
const ROWS_USED: usize = 129;

/// The table row a relative read of `c[base + offset]` reads, by [`RELATIVE_UNIFORM_RULE`] (the
/// reference's rule).
#[inline(always)]
fn rel_index(base: i32, offset: i32) -> usize {
    match RELATIVE_UNIFORM_RULE {
        RelativeUniformRule::WrapMod128 => {
            // Offsets outside -128..=127 count as 0; the index wraps at 7 bits.
            let offset = if offset as i8 as i32 == offset {
                offset
            } else {
                0
            };
            (base.wrapping_add(offset) & 0x7F) as usize
        }
        RelativeUniformRule::ZeroOutside => {
            let i = base.saturating_add(offset);
            if (0..96).contains(&i) {
                i as usize
            } else {
                128
            }
        }
    }
}

/// Whether [`rel_index`]`(base, o)` is `base + o` for every offset `o` in `mn..=mx` (no
/// wrapping, no out-of-range row).
#[inline(always)]
fn rel_plain(base: i32, mn: i32, mx: i32) -> bool {
    match RELATIVE_UNIFORM_RULE {
        RelativeUniformRule::WrapMod128 => {
            mn >= -128 && mx <= 127 && base + mn >= 0 && base + mx <= 127
        }
        RelativeUniformRule::ZeroOutside => base + mn >= 0 && base + mx < 96,
    }
}

#[inline(always)]
pub(crate) fn call(flow: &mut FlowStacks, pc: u32, dst: u16, num: u8) -> Step {
    if num == 0 {
        return Step::Next;
    }
    let dst = u32::from(dst);
    flow.calls.push(ReturnEntry {
        check: dst + u32::from(num),
        ret: pc + 1,
    });
    Step::Jump(dst)
}

#[inline(always)]
pub(crate) fn branch_if(flow: &mut FlowStacks, taken: bool, dst: u16, num: u8) -> Step {
    let dst = u32::from(dst);
    if taken {
        flow.ifs.push(ReturnEntry {
            check: dst,
            ret: dst + u32::from(num),
        });
        Step::Next
    } else {
        Step::Jump(dst)
    }
}

/// The four operand lanes of a source: register planes, or the scratch filled by `prep`.
#[inline(always)]
fn view<'a, const N: usize>(
    s: &SrcSpec,
    planes: &'a [[f32; N]],
    scr: &'a [[f32; N]; 4],
) -> [&'a [f32; N]; 4] {
    match *s {
        SrcSpec::Planes {
            planes: p,
            neg: false,
            flush: false,
            ..
        } => [
            &planes[usize::from(p[0])],
            &planes[usize::from(p[1])],
            &planes[usize::from(p[2])],
            &planes[usize::from(p[3])],
        ],
        _ => [&scr[0], &scr[1], &scr[2], &scr[3]],
    }
}

/// Operand lane `lane` of a source: its register plane, or the scratch filled by `prep`.
#[inline(always)]
fn src_plane<'a, const N: usize>(
    s: &SrcSpec,
    lane: usize,
    planes: &'a [[f32; N]],
    scr: &'a [[f32; N]; 4],
) -> &'a [f32; N] {
    match *s {
        SrcSpec::Planes {
            planes: p,
            neg: false,
            flush: false,
            ..
        } => &planes[usize::from(p[lane])],
        _ => &scr[lane],
    }
}

/// Whether operand lane `k` of `s` is a splatted uniform that is finite and non-zero.
#[inline(always)]
fn is_safe(s: &SrcSpec, k: usize, const_safe: &[bool]) -> bool {
    match *s {
        SrcSpec::Planes {
            planes,
            neg: false,
            flush: false,
            ..
        } => usize::from(planes[k])
            .checked_sub(usize::from(C_BASE))
            .and_then(|i| const_safe.get(i))
            .copied()
            .unwrap_or(false),
        _ => false,
    }
}

/// The register planes other than a destination plane `d` (so operands can be read while `d`
/// is written).
struct Split<'a, const N: usize> {
    lo: &'a [[f32; N]],
    hi: &'a [[f32; N]],
    d: usize,
}

impl<'a, const N: usize> Split<'a, N> {
    /// Plane `i`, or `None` when it is the destination plane.
    #[inline(always)]
    fn get(&self, i: usize) -> Option<&'a [f32; N]> {
        if i < self.d {
            self.lo.get(i)
        } else if i > self.d {
            self.hi.get(i - self.d - 1)
        } else {
            None
        }
    }
}

/// Plane `d` mutably and the other planes shared (`None` if `d` is out of range, which
/// compiled destinations never are).
#[inline(always)]
fn split_dst<const N: usize>(
    planes: &mut [[f32; N]],
    d: usize,
) -> Option<(&mut [f32; N], Split<'_, N>)> {
    let (lo, rest) = planes.split_at_mut(d.min(planes.len()));
    let (dp, hi) = rest.split_first_mut()?;
    Some((dp, Split { lo, hi, d }))
}

/// Operand lane `k` of `s` from split planes (`None` if it is the destination plane).
#[inline(always)]
fn src_split<'a, const N: usize>(
    s: &SrcSpec,
    k: usize,
    sp: &Split<'a, N>,
    scr: &'a [[f32; N]; 4],
) -> Option<&'a [f32; N]> {
    match *s {
        SrcSpec::Planes {
            planes: p,
            neg: false,
            flush: false,
            ..
        } => sp.get(usize::from(p[k])),
        _ => Some(&scr[k]),
    }
}

/// All four operand lanes of `s` from split planes (`None` if one is the destination plane).
#[inline(always)]
fn views_split<'a, const N: usize>(
    s: &SrcSpec,
    sp: &Split<'a, N>,
    scr: &'a [[f32; N]; 4],
) -> Option<[&'a [f32; N]; 4]> {
    Some([
        src_split(s, 0, sp, scr)?,
        src_split(s, 1, sp, scr)?,
        src_split(s, 2, sp, scr)?,
        src_split(s, 3, sp, scr)?,
    ])
}

/// DP3/DP4/DPH into `o`: ((p0 + p1) + p2) + p3, the reference's order, in one pass.
#[inline(always)]
fn dot<const N: usize>(
    op: BinaryOp,
    o: &mut [f32; N],
    x: [&[f32; N]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
    safe: bool,
) {
    let [x0, x1, x2, x3] = x;
    let [y0, y1, y2, y3] = y;
    match op {
        BinaryOp::Dp4 if safe => fill(o, fin, |l| {
            ((x0[l] * y0[l] + x1[l] * y1[l]) + x2[l] * y2[l]) + x3[l] * y3[l]
        }),
        BinaryOp::Dp4 => fill(o, fin, |l| {
            ((alu::mul(x0[l], y0[l]) + alu::mul(x1[l], y1[l])) + alu::mul(x2[l], y2[l]))
                + alu::mul(x3[l], y3[l])
        }),
        BinaryOp::Dp3 if safe => fill(o, fin, |l| (x0[l] * y0[l] + x1[l] * y1[l]) + x2[l] * y2[l]),
        BinaryOp::Dp3 => fill(o, fin, |l| {
            (alu::mul(x0[l], y0[l]) + alu::mul(x1[l], y1[l])) + alu::mul(x2[l], y2[l])
        }),
        _ => fill(o, fin, |l| {
            ((alu::mul(x0[l], y0[l]) + alu::mul(x1[l], y1[l])) + alu::mul(x2[l], y2[l]))
                + alu::mul(1.0, y3[l])
        }),
    }
}

/// DP3/DP4/DPH into `o` with the 0·inf fix-up decided per product: bit k of `S` set = product
/// k is with a finite non-zero uniform, so plain multiplication gives exactly [`alu::mul`]'s
/// result. The reference's summation order, in one pass.
#[inline(always)]
fn dot_terms<const S: u8, const N: usize>(
    op: BinaryOp,
    o: &mut [f32; N],
    x: [&[f32; N]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
) {
    let [x0, x1, x2, x3] = x;
    let [y0, y1, y2, y3] = y;
    #[inline(always)]
    fn t<const S: u8>(k: u8, a: f32, b: f32) -> f32 {
        if S >> k & 1 != 0 {
            a * b
        } else {
            alu::mul(a, b)
        }
    }
    match op {
        BinaryOp::Dp4 => fill(o, fin, |l| {
            ((t::<S>(0, x0[l], y0[l]) + t::<S>(1, x1[l], y1[l])) + t::<S>(2, x2[l], y2[l]))
                + t::<S>(3, x3[l], y3[l])
        }),
        BinaryOp::Dp3 => fill(o, fin, |l| {
            (t::<S>(0, x0[l], y0[l]) + t::<S>(1, x1[l], y1[l])) + t::<S>(2, x2[l], y2[l])
        }),
        _ => fill(o, fin, |l| {
            ((t::<S>(0, x0[l], y0[l]) + t::<S>(1, x1[l], y1[l])) + t::<S>(2, x2[l], y2[l]))
                + alu::mul(1.0, y3[l])
        }),
    }
}

/// [`dot_terms`] with the per-product mask `safe` (bit k = product k needs no fix-up) chosen at
/// run time.
#[inline(always)]
fn dot_masked<const N: usize>(
    op: BinaryOp,
    o: &mut [f32; N],
    x: [&[f32; N]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
    safe: u8,
) {
    macro_rules! arms {
        ($($k:literal)*) => {
            match safe & 15 {
                $($k => dot_terms::<$k, N>(op, o, x, y, fin),)*
                _ => dot_terms::<0, N>(op, o, x, y, fin),
            }
        };
    }
    arms!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15)
}

/// Component `c` of a component-wise two-source operation into `o`.
#[inline(always)]
fn elementwise<const N: usize>(
    op: BinaryOp,
    c: usize,
    o: &mut [f32; N],
    xs: &[f32; N],
    ys: &[f32; N],
    fin: Fin,
    safe: bool,
) {
    match op {
        BinaryOp::Add => fill(o, fin, |l| xs[l] + ys[l]),
        BinaryOp::Mul if safe => fill(o, fin, |l| xs[l] * ys[l]),
        BinaryOp::Mul => fill(o, fin, |l| alu::mul(xs[l], ys[l])),
        BinaryOp::Sge => fill(o, fin, |l| alu::sge(xs[l], ys[l])),
        BinaryOp::Slt => fill(o, fin, |l| alu::slt(xs[l], ys[l])),
        BinaryOp::Max => fill(o, fin, |l| alu::max(xs[l], ys[l])),
        BinaryOp::Min => fill(o, fin, |l| alu::min(xs[l], ys[l])),
        // (1, a.y·b.y, a.z, b.w); DP3/DP4/DPH go through `dot`.
        _ => match c {
            0 => fill(o, fin, |_| 1.0),
            1 => fill(o, fin, |l| alu::mul(xs[l], ys[l])),
            2 => fill(o, fin, |l| xs[l]),
            _ => fill(o, fin, |l| ys[l]),
        },
    }
}

/// [`alu::mova`] (`x as i32`: truncation, saturation at the i32 range, NaN → 0) with integer
/// operations only, so a loop of it vectorises (LLVM keeps the saturating float conversion
/// scalar). Equal to `alu::mova` for every input (checked over all 2^32 bit patterns with
/// `PICAVIEW_MOVA_EXHAUSTIVE=1`, see the test below).
#[inline(always)]
fn mova_bits(x: f32) -> i32 {
    let bits = x.to_bits();
    let e = (bits >> 23) & 0xFF;
    let frac = bits & 0x7F_FFFF;
    let m = frac | 0x80_0000;
    // |x| = m · 2^(e − 150): shift right below 2^23, left from 2^23 up to 2^31.
    let right = m >> (150u32.saturating_sub(e)).min(31);
    let left = m << e.saturating_sub(150).min(7);
    let mag = if e >= 150 { left } else { right } as i32;
    let neg = bits >> 31 != 0;
    let v = if neg { mag.wrapping_neg() } else { mag };
    let sat = if neg { i32::MIN } else { i32::MAX };
    let nan = e == 0xFF && frac != 0;
    // e < 127 (|x| < 1, zero and subnormals included) gives mag = 0 through the right shift.
    if nan {
        0
    } else if e >= 158 {
        sat
    } else {
        v
    }
}

/// The input transposition of a full chunk with AVX2 when `wide` (the engine runs at an AVX2 or
/// AVX-512 level); `false` when it did nothing (the caller's portable loop runs instead).
#[inline(always)]
fn wide_in<const N: usize>(
    wide: bool,
    wide512: bool,
    src: &[[f32; 4]; N],
    dst: &mut [[f32; N]; 4],
    flush: bool,
) -> bool {
    #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
    {
        if wide512 && super::simd::transpose_in512(src, dst, flush) {
            return true;
        }
        if wide {
            return super::simd::transpose_in(src, dst, flush);
        }
    }
    let _ = (wide, wide512, src, dst, flush);
    false
}

/// The relative-read gather `dst[c][l] = cols[c][ix[l]]` with AVX-512 permutes when `wide512`
/// (the engine runs at the AVX-512 level) and every index lies in one 64-row window; `false`
/// when it did nothing (the caller's copy-and-transpose runs instead).
#[inline(always)]
fn wide_gather<const N: usize>(
    wide512: bool,
    cols: &[[f32; ROWS]; 4],
    ix: &[u32; N],
    dst: &mut [[f32; N]; 4],
) -> bool {
    #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
    if wide512 {
        return super::simd::gather_cols(cols, ix, dst);
    }
    let _ = (wide512, cols, ix, dst);
    false
}

/// The relative-read gather `dst[c][l] = cols[c][base + a[l]]` with AVX-512 permutes when
/// `wide512`, for rows known to lie in `lo..=hi` (`false` when it did nothing).
#[inline(always)]
fn wide_gather_off<const N: usize>(
    cols: &[[f32; ROWS]; 4],
    a: &[i32; N],
    base: i32,
    lo: i32,
    hi: i32,
    dst: &mut [[f32; N]; 4],
) -> bool {
    #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
    {
        super::simd::gather_cols_off(cols, a, base, lo, hi, dst)
    }
    #[cfg(any(not(target_arch = "x86_64"), fuzzing))]
    {
        let _ = (cols, a, base, lo, hi, dst);
        false
    }
}

/// [`super::simd::dot4_rel`] on x86-64; `None` elsewhere.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
fn dot4_rel<const N: usize>(
    cols: &[[f32; ROWS]; 4],
    a: &[i32; N],
    base: i32,
    lo: i32,
    hi: i32,
    y: [&[f32; N]; 4],
    o: &mut [f32; N],
    flush: bool,
) -> Option<bool> {
    #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
    {
        super::simd::dot4_rel(cols, a, base, lo, hi, y, o, flush)
    }
    #[cfg(any(not(target_arch = "x86_64"), fuzzing))]
    {
        let _ = (cols, a, base, lo, hi, y, o, flush);
        None
    }
}

/// The output transposition of a full chunk with AVX2 when `wide` (see [`wide_in`]).
#[inline(always)]
fn wide_out<const N: usize>(
    wide: bool,
    wide512: bool,
    src: &[[f32; N]; 4],
    dst: &mut [[f32; 4]; N],
) -> bool {
    #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
    {
        if wide512 && super::simd::transpose_out512(src, dst) {
            return true;
        }
        if wide {
            return super::simd::transpose_out(src, dst);
        }
    }
    let _ = (wide, wide512, src, dst);
    false
}

/// The finishing step of pass-through output `r` (from its first [`Op::Pass`]).
#[inline(always)]
fn pass_fin(prog: &Compiled, r: usize, round: bool) -> Fin {
    prog.ops
        .iter()
        .find_map(|op| match op {
            Op::Pass { reg, dst } if usize::from(*reg) == r => Some(Fin::of(dst, round)),
            _ => None,
        })
        .unwrap_or(Fin::Plain)
}

/// A pass-through output component: the fetched input (`flush?(x)`), finished as the MOV's
/// destination would be.
#[inline(always)]
fn pass_value(x: f32, fl: bool, fin: Fin) -> f32 {
    let x = if fl { alu::flush(x) } else { x };
    match fin {
        Fin::Plain => x,
        Fin::Flush => alu::flush(x),
        Fin::Round => round_to_f24(x),
        Fin::RoundFlush => alu::flush(round_to_f24(x)),
    }
}

/// [`pass_value`] of each component.
#[inline(always)]
fn pass_vec(v: [f32; 4], fl: bool, fin: Fin) -> [f32; 4] {
    [
        pass_value(v[0], fl, fin),
        pass_value(v[1], fl, fin),
        pass_value(v[2], fl, fin),
        pass_value(v[3], fl, fin),
    ]
}

/// How a result is finished before it is stored: f24 rounding and/or subnormal flushing (the
/// reference rounds first, then flushes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fin {
    Plain,
    Flush,
    Round,
    RoundFlush,
}

impl Fin {
    #[inline(always)]
    fn of(d: &DstSpec, round: bool) -> Fin {
        let flush = d.flush && (round || !d.clean);
        match (round, flush) {
            (false, false) => Fin::Plain,
            (false, true) => Fin::Flush,
            (true, false) => Fin::Round,
            (true, true) => Fin::RoundFlush,
        }
    }
}

/// `o[l] = finish(f(l))` for every lane: the whole operation in one pass over the lanes, with
/// the finishing step chosen once outside the loop (so each loop vectorises without branches).
#[inline(always)]
fn fill<const N: usize>(o: &mut [f32; N], fin: Fin, f: impl Fn(usize) -> f32) {
    match fin {
        Fin::Plain => {
            for l in 0..N {
                o[l] = f(l);
            }
        }
        Fin::Flush => {
            for l in 0..N {
                o[l] = alu::flush(f(l));
            }
        }
        Fin::Round => {
            for l in 0..N {
                o[l] = round_to_f24(f(l));
            }
        }
        Fin::RoundFlush => {
            for l in 0..N {
                o[l] = alu::flush(round_to_f24(f(l)));
            }
        }
    }
}

/// [`fill`] that also reports whether any value before finishing was NaN.
///
/// Used for products computed without the 0·inf fix-up: a NaN product makes the whole
/// expression NaN, so a NaN-free result proves that no product was 0·inf and equals the fixed-up
/// result bit for bit; otherwise the caller recomputes with the fix-up (rare: only lanes with
/// NaN or 0·inf operands). One compare per lane instead of a fix-up per product.
#[inline(always)]
fn fill_chk<const N: usize>(o: &mut [f32; N], fin: Fin, f: impl Fn(usize) -> f32) -> bool {
    let mut nan = 0u32;
    match fin {
        Fin::Plain => {
            for l in 0..N {
                let v = f(l);
                nan |= u32::from(v.is_nan());
                o[l] = v;
            }
        }
        Fin::Flush => {
            for l in 0..N {
                let v = f(l);
                nan |= u32::from(v.is_nan());
                o[l] = alu::flush(v);
            }
        }
        Fin::Round => {
            for l in 0..N {
                let v = f(l);
                nan |= u32::from(v.is_nan());
                o[l] = round_to_f24(v);
            }
        }
        Fin::RoundFlush => {
            for l in 0..N {
                let v = f(l);
                nan |= u32::from(v.is_nan());
                o[l] = alu::flush(round_to_f24(v));
            }
        }
    }
    nan != 0
}

/// DP3/DP4/DPH into `o` as [`dot_masked`] does, but with plain products first and the per-product
/// fix-up only when a result lane came out NaN (see [`fill_chk`]). `o` must not be an operand.
#[inline(always)]
fn dot_checked<const N: usize>(
    op: BinaryOp,
    o: &mut [f32; N],
    x: [&[f32; N]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
    safe: u8,
) {
    if safe & 15 == 15 {
        dot_terms::<15, N>(op, o, x, y, fin);
        return;
    }
    let [x0, x1, x2, x3] = x;
    let [y0, y1, y2, y3] = y;
    let nan = match op {
        BinaryOp::Dp4 => fill_chk(o, fin, |l| {
            ((x0[l] * y0[l] + x1[l] * y1[l]) + x2[l] * y2[l]) + x3[l] * y3[l]
        }),
        BinaryOp::Dp3 => fill_chk(o, fin, |l| (x0[l] * y0[l] + x1[l] * y1[l]) + x2[l] * y2[l]),
        _ => fill_chk(o, fin, |l| {
            ((x0[l] * y0[l] + x1[l] * y1[l]) + x2[l] * y2[l]) + alu::mul(1.0, y3[l])
        }),
    };
    if nan {
        dot_masked(op, o, x, y, fin, safe);
    }
}

/// [`dot_checked`] with the first operand a uniform (`k[c]`, the same in every lane; `kp` its
/// splatted planes for the fix-up). `o` must not be an operand.
#[inline(always)]
fn dot_const<const N: usize>(
    op: BinaryOp,
    o: &mut [f32; N],
    k: [f32; 4],
    kp: [&[f32; N]; 4],
    y: [&[f32; N]; 4],
    fin: Fin,
    safe: u8,
) {
    let [k0, k1, k2, k3] = k;
    let [y0, y1, y2, y3] = y;
    let nan = match op {
        BinaryOp::Dp4 => fill_chk(o, fin, |l| {
            ((k0 * y0[l] + k1 * y1[l]) + k2 * y2[l]) + k3 * y3[l]
        }),
        BinaryOp::Dp3 => fill_chk(o, fin, |l| (k0 * y0[l] + k1 * y1[l]) + k2 * y2[l]),
        _ => fill_chk(o, fin, |l| {
            ((k0 * y0[l] + k1 * y1[l]) + k2 * y2[l]) + alu::mul(1.0, y3[l])
        }),
    };
    if nan {
        dot_masked(op, o, kp, y, fin, safe);
    }
}

/// [`elementwise`] with MUL's 0·inf fix-up replaced by the NaN check of [`fill_chk`]. `o` must
/// not be an operand.
#[inline(always)]
fn elem_checked<const N: usize>(
    op: BinaryOp,
    c: usize,
    o: &mut [f32; N],
    xs: &[f32; N],
    ys: &[f32; N],
    fin: Fin,
    safe: bool,
) {
    if op == BinaryOp::Mul && !safe {
        if fill_chk(o, fin, |l| xs[l] * ys[l]) {
            elementwise(op, c, o, xs, ys, fin, false);
        }
    } else {
        elementwise(op, c, o, xs, ys, fin, safe);
    }
}

/// MAD `a·b + c` into `o` (0·inf fix-up per [`fill_chk`] unless `safe`). `o` must not be an
/// operand.
#[inline(always)]
fn mad_checked<const N: usize>(
    o: &mut [f32; N],
    a: &[f32; N],
    b: &[f32; N],
    e: &[f32; N],
    fin: Fin,
    safe: bool,
) {
    if safe {
        fill(o, fin, |l| a[l] * b[l] + e[l]);
    } else if fill_chk(o, fin, |l| a[l] * b[l] + e[l]) {
        fill(o, fin, |l| alu::mul(a[l], b[l]) + e[l]);
    }
}

/// Writes `v` into the destination plane, only into active lanes unless `all`.
#[inline(always)]
fn commit<const N: usize>(dst: &mut [f32; N], v: &[f32; N], active: u64, all: bool) {
    if all {
        *dst = *v;
    } else {
        for l in 0..N {
            if active >> l & 1 != 0 {
                dst[l] = v[l];
            }
        }
    }
}

/// Copies plane `s` into plane `d` (active lanes only unless `all`).
#[inline(always)]
fn copy_plane<const N: usize>(planes: &mut [[f32; N]], s: usize, d: usize, active: u64, all: bool) {
    if s == d {
        return;
    }
    let (lo, hi) = planes.split_at_mut(s.max(d));
    let (src, dst) = if s < d {
        (&lo[s], &mut hi[0])
    } else {
        (&hi[0], &mut lo[d])
    };
    commit(dst, src, active, all);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `mova_bits` equals the reference conversion on every f32 bit pattern (in strides that
    /// cover every exponent and sign, plus every edge value).
    #[test]
    fn mova_bits_matches_reference_conversion() {
        let edges = [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            0.999_999_9,
            1.0,
            -1.0,
            127.9,
            128.0,
            -128.9,
            -129.0,
            8_388_607.5,
            8_388_608.0,
            16_777_217.0,
            2_147_483_520.0,
            2_147_483_648.0,
            -2_147_483_648.0,
            -2_147_483_904.0,
            f32::MAX,
            f32::MIN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::MIN_POSITIVE,
            f32::from_bits(1),
            f32::from_bits(0x8000_0001),
        ];
        for x in edges {
            assert_eq!(mova_bits(x), alu::mova(x), "{x:?} ({:#010x})", x.to_bits());
        }
        // Every bit pattern with PICAVIEW_MOVA_EXHAUSTIVE=1 (a few seconds in release).
        let stride = if std::env::var_os("PICAVIEW_MOVA_EXHAUSTIVE").is_some() {
            1
        } else {
            4099
        };
        let mut b = 0u32;
        loop {
            let x = f32::from_bits(b);
            assert_eq!(mova_bits(x), alu::mova(x), "{:#010x}", b);
            match b.checked_add(stride) {
                Some(n) => b = n,
                None => break,
            }
        }
    }
}
