//! The fast shader engine: a batched structure-of-arrays executor, bit-exact with the reference
//! interpreter ([`crate::interp`]).
//!
//! Stage: vertex shading (the draw pipeline's VS batches). Inputs: a decoded [`Program`],
//! [`Uniforms`], a [`VertexBatch`] of input registers and the unit's persistent [`UnitState`].
//! Outputs: a [`VertexBatch`] of output registers and the updated unit state, exactly as
//! [`Interpreter::run_batch`] produces them. Registers read: none.
//!
//! # How it works
//!
//! - **Compile once** (`compile`): each program is compiled once per flush mode into
//!   operations whose operands name register-file *planes* (one component of one register for
//!   all lanes); swizzles become plane choices, uniforms are splatted into planes with their
//!   negation and flushing applied once per batch, and the write mask, rounding and flushing of
//!   each destination are fixed. Compiled programs are cached (8 entries, most recently used
//!   first), validated against the program words and descriptors.
//! - **Lanes** (`exec`): vertices run `N` at a time, one per lane; an instruction is dispatched
//!   once per chunk of `N` vertices and its arithmetic is a loop over `[f32; N]` planes that the
//!   compiler vectorises. Per-lane semantics are the reference's own functions
//!   ([`crate::interp::alu`]), so every edge case (0·inf, NaN ordering in MAX/MIN, flushing,
//!   f24 rounding) is the same bit for bit; no FMA contraction, no reassociation, no approximate
//!   reciprocals. Relative addressing gathers per lane from a 128-entry uniform table.
//! - **One pass per operation**: each operation is a single loop over the lanes that reads its
//!   operand planes, computes, applies the f24 finishing (flush/round, chosen once outside the
//!   loop) and writes the destination plane directly when no operand is that plane (otherwise
//!   through scratch). Products with a finite non-zero uniform skip the 0·inf fix-up. MOVA's
//!   float→int conversion uses integer operations so it vectorises; relative reads compute the
//!   row indices, copy one 16-byte row per lane and transpose (three vectorised passes).
//! - **Straight-line traces** (`trace`): a program without IFC/CALLC/JMPC/BREAKC takes the same
//!   path on every lane, determined by the entry point, bool/int uniforms, the carried aL and
//!   the budget. That path (the arithmetic operations with the aL in effect, the counts, the
//!   written sets, the outcome) is simulated once with the reference's sequencer and cached per
//!   program (4 keys); chunks then run it without per-instruction sequencing or hazard checks.
//!   Within a batch the trace of the previous chunk is reused while the carried aL is unchanged.
//! - **Micro-operations** (`exec::micro`): a trace's steps are resolved once per batch into
//!   operations that name their operand planes directly (negated/flushed/gathered operands as a
//!   separate preparation step into scratch planes), with the finishing step and the 0·inf
//!   fix-up decision fixed (per product in dot products); each chunk then runs that list with
//!   one lane loop per result, written straight into the destination plane when no operand is
//!   one. A full-mask `MOV rN, rN.<permutation>` is resolved as a renaming of planes instead of
//!   copies (the planes go back home before a generic operation and at the end of the trace),
//!   so W3's rotating index/weight registers cost nothing.
//! - **Pass-through outputs**: in such programs, `MOV oK.xyzw, vJ` (identity swizzle, no
//!   negation) where every writer of oK is that same MOV is not executed on planes; the chunk
//!   records that it ran and the outputs are written straight from the input batch
//!   (`flush?(vJ)`), skipping two transpositions.
//! - **Control flow** uses the reference's [`FlowStacks`](crate::interp::FlowStacks) per warp
//!   (lanes on a common path): uniform branches cost nothing per lane, divergent conditions on
//!   cmp split the warp (see `exec`). Stack depths, overflow and priorities are therefore the
//!   reference's.
//!
//! # Persistent state (pica-core.md §5.4)
//!
//! The unit keeps r, o, a0, aL and cmp from one vertex to the next, so in general vertex i
//! depends on vertex i − 1. The engine proves per batch, at run time, that it does not:
//! - a component no instruction of the program writes holds the same value for every vertex
//!   (broadcast from the unit state);
//! - every other component must be written by an invocation before that invocation reads it;
//!   each warp tracks what it wrote, and each instruction's reads are checked against it (a few
//!   integer operations per instruction and chunk);
//! - output components an invocation does not write keep the previous vertex's value: after each
//!   chunk they are forward-filled in vertex order, and the unit state is updated from the last
//!   writer of every component.
//!
//! **Carried temps.** On a straight-line trace, temp components read before the invocation
//! writes them (the demos' lit shader: `max r3, zero, r3` reads r3.zw, which nothing else
//! writes) are *carried*: vertex i reads what vertex i − 1 left. When the trace proves that the
//! values those components hold at END depend only on their values at the start (no input
//! reaches them through temps, a0 or cmp; `trace::carry_closed`), lane l's carried value is the
//! result of l invocations from the unit state, with no dependency on the vertices: before each
//! chunk the engine computes it with the reference interpreter (one invocation on the unit
//! state per step) and writes it into the lanes' temp planes, stopping as soon as a step leaves
//! the values unchanged (the lit shader's settle after one step, so a batch costs one reference
//! invocation). A recurrence that has not settled after 16 steps per batch (a counter), or,
//! in flush mode, a carried starting value that is not flushed while the program reads that
//! component as already flushed, sends the batch to the reference interpreter.
//!
//! When the check fails (a read-before-write of a possibly-written component that is not
//! carried as above, or on a path with divergent control flow), or any lane
//! stops with an [`ExecError`](crate::interp::ExecError), or the program uses SETEMIT/EMIT (geometry shaders stay on the
//! reference engine: they run one invocation per primitive through the shading glue, not in
//! batches), the batch is re-run from its starting state on the reference interpreter. Results
//! and errors (including which vertex failed) are then the reference's by construction.
//! [`FastStats`] counts how often that happens. (None of the real shaders under
//! `tests/fixtures/real/` reads a register before writing it.)
//!
//! # Lanes and instruction sets
//!
//! [`FastEngineN<N>`] runs `N` lanes per chunk (1–64). [`FastEngine`] uses
//! [`DEFAULT_LANES`] = 64: on the bench workloads 8 → 16 → 32 → 64 lanes kept getting faster
//! (the per-instruction dispatch is amortised over more vertices while a chunk's planes still fit
//! in L1), see the `shader` criterion bench (`fast8/…`–`fast32/…`). The lane loops are compiled
//! three times, for the target's baseline, AVX2 and AVX-512, and [`Simd::detect`] picks one at
//! run time (module `simd`, the crate's only `unsafe`). At the AVX2 level the transpositions
//! between vertex-major registers and lane planes (inputs with their flush, outputs, gathered
//! uniform rows) use AVX2 shuffles from `simd` (8 vertices per step), at the AVX-512 level two
//! stages of `vpermt2ps` (16 vertices per step); the baseline level keeps the portable loops,
//! and all give the same bits. At the AVX-512 level a relative read whose rows (over the chunk)
//! lie in one 64-row window is gathered with `vpermt2ps` from per-component tables instead
//! (`simd::gather_cols`); after a MOVA of the trace the range of a0 is known, so the window
//! needs no scan and the row is the a0 value plus the offset (`simd::gather_cols_off`).
//!
//! Products without the 0·inf fix-up: in the trace's dot products, MUL and MAD a product with a
//! finite non-zero uniform needs none; the others are computed plainly and the result lanes
//! checked for NaN (a NaN product makes the whole result NaN, so a NaN-free result equals the
//! fixed-up one bit for bit); only when some lane is NaN is the operation recomputed with the
//! fix-up. A dot product whose first operand is a uniform (a matrix row) reads it as four
//! scalars instead of four planes. The resolved micro-operations are kept across batches while
//! the program, the rounding mode and the zero/non-zero classes of the uniforms stay the same;
//! pass-through outputs are written once per batch.
//!
//! # Bit-exactness
//!
//! Every value is computed with the reference's per-lane functions in the reference's order, in
//! both flush modes and with f24 rounding. The one thing not reproduced is the sign and payload
//! of NaN *results*: Rust leaves them unspecified (RFC 3514) and LLVM may commute `a + b` or
//! choose a vector instruction, after which x86 propagates the other operand's NaN. No
//! shader-visible result depends on them (comparisons, MOVA, flushing and the f24 conversion
//! treat every NaN alike), so the differential tests compare NaNs as equal and everything else
//! bit for bit.
//!
//! # Tests
//!
//! `tests/fast_differential.rs` compares this engine with [`Interpreter`] on the W1–W3 reference
//! hashes, on random programs from the encoder (every opcode, relative addressing, nested and
//! divergent control flow, edge-case inputs, random starting states, every [`ExecConfig`]
//! mode, every [`Simd`] level the machine has, 8/16/64 lanes) and on every real shader fixture.
//! The default 300 random programs take about a second in release; the longer run is
//! `PICAVIEW_FAST_DIFF_CASES=20000 cargo test --release -p shader-unit --test fast_differential`.

mod compile;
mod exec;
#[cfg(all(target_arch = "x86_64", not(fuzzing)))]
mod simd;
mod trace;

use std::sync::Arc;

use crate::decode::Program;
use crate::interp::{
    BatchError, BatchStats, ExecConfig, Interpreter, ShaderEngine, Uniforms, UnitState, VertexBatch,
};

use compile::{Compiled, compile};
use exec::{Abort, ChunkStats, Lanes};
use trace::{Trace, TraceKey};

/// Lanes per chunk of the default [`FastEngine`] (measured fastest of 8, 16, 32 and 64 on the
/// bench workloads; see the crate's `shader` bench).
pub const DEFAULT_LANES: usize = 64;

/// The fast engine with the default lane count ([`FastEngineN`] of [`DEFAULT_LANES`] lanes, which
/// it dereferences to for its fields and inherent methods).
///
/// A plain struct rather than a type alias so that the engine is compiled once, in this crate:
/// a generic type is compiled again by every crate that names it with concrete parameters (an
/// optimised build shares no generic code between crates), and the engine is large (its lane
/// loops for three instruction-set levels). Through an alias, gpu-core's library, its unit-test
/// build, the viewer's binary and the binary's unit-test build each compiled it again (6-10 min
/// of one core each on a 2-core machine, session 17); through this struct they call the copy
/// compiled here. Its [`ShaderEngine`] methods are not `#[inline]` for that reason (one call
/// per batch).
#[derive(Clone, Debug, Default)]
pub struct FastEngine(FastEngineN<DEFAULT_LANES>);

impl FastEngine {
    /// [`FastEngineN::new`] with the default lane count.
    pub fn new(config: ExecConfig) -> Self {
        FastEngine(FastEngineN::new(config))
    }

    /// [`FastEngineN::with_simd`] with the default lane count.
    pub fn with_simd(config: ExecConfig, simd: Simd) -> Self {
        FastEngine(FastEngineN::with_simd(config, simd))
    }
}

impl std::ops::Deref for FastEngine {
    type Target = FastEngineN<DEFAULT_LANES>;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for FastEngine {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl ShaderEngine for FastEngine {
    fn name(&self) -> &'static str {
        self.0.name()
    }

    #[inline(never)]
    fn run_batch(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        self.0.run_batch(program, uniforms, entry, inputs, outputs)
    }

    #[inline(never)]
    fn run_batch_shared(
        &mut self,
        program: &Arc<Program>,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        self.0
            .run_batch_shared(program, uniforms, entry, inputs, outputs)
    }

    fn state(&self) -> &UnitState {
        &self.0.state
    }

    fn state_mut(&mut self) -> &mut UnitState {
        &mut self.0.state
    }
}

/// How many compiled programs the engine keeps.
const CACHE_LEN: usize = 8;

/// Counters of how batches were executed (cumulative).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastStats {
    /// Batches shaded completely on the lane executor.
    pub fast_batches: u64,
    /// Batches re-run on the reference interpreter because an invocation read a component
    /// before writing it (serial dependency between vertices).
    pub hazard_batches: u64,
    /// Batches re-run on the reference interpreter because a lane stopped with an error.
    pub error_batches: u64,
    /// Batches of SETEMIT/EMIT programs (always on the reference interpreter).
    pub serial_batches: u64,
    /// Warp splits on divergent conditions.
    pub splits: u64,
    /// Programs compiled.
    pub compiles: u64,
    /// Chunks run along a straight-line trace (programs without divergent control flow).
    pub traced_chunks: u64,
    /// Output registers of a chunk written straight from the input batch (pass-through MOVs).
    pub pass_outputs: u64,
    /// Batches shaded on the lane executor although an invocation reads temps before writing
    /// them (values carried from vertex to vertex, computed serially; see the module docs).
    pub carried_batches: u64,
    /// Invocations of the reference interpreter that computed carried values.
    pub carry_evals: u64,
}

/// Most evaluations of the carried recurrence per batch before the batch is handed to the
/// reference interpreter (each is one reference invocation; a recurrence that does not settle,
/// such as a counter, is cheaper to run serially).
const MAX_CARRY_EVALS: u32 = 16;

/// Per-batch progress of the carried values (see [`trace::Trace::carry`]).
#[derive(Default)]
struct Carried {
    /// The recurrence has reached a fixed point for the values in the unit state.
    fixed: bool,
    /// Evaluations so far in this batch.
    evals: u32,
    /// The batch used carried values.
    used: bool,
}

/// What [`Carried::fill`] needs from the engine for one chunk.
struct CarryRun<'a> {
    prog: &'a Compiled,
    program: &'a Program,
    uniforms: &'a Uniforms,
    entry: u32,
    config: &'a ExecConfig,
    state: &'a UnitState,
    carry: u64,
    n: usize,
}

impl Carried {
    /// Writes into the temp planes of `carry` the value each lane of the chunk reads before its
    /// invocation writes it: lane 0 the unit state's (the previous vertex's, as the reference
    /// keeps it), lane l the result of running one invocation on lane l − 1's value. The trace
    /// proved those results independent of the vertex ([`trace`]'s `carry_closed`), so one
    /// reference invocation on the unit state computes them exactly; once the values stop
    /// changing (typically after one step: `max r3, zero, r3` reads r3.zw it never uses),
    /// every later lane gets the same values without further invocations.
    ///
    /// Kept out of line: it runs only for programs with carried temps, and inlined into the
    /// chunk loop it cost W1 (which has none) ~5% (430 against 455 Mvertices/s, same run).
    #[cold]
    #[inline(never)]
    fn fill<const N: usize>(
        &mut self,
        lanes: &mut Lanes<N>,
        run: CarryRun<'_>,
    ) -> Result<(), Abort> {
        self.used = true;
        let r_base = usize::from(compile::R_BASE);
        let mut x = run.state.temps;
        let clean = run.carry & run.prog.clean_r;
        let unclean = |x: &[[f32; 4]; 16]| {
            run.config.flush
                && bits(clean).any(|k| {
                    let v = x[k / 4][k % 4];
                    v.to_bits() != crate::interp::alu::flush(v).to_bits()
                })
        };
        if unclean(&x) {
            return Err(Abort::Unclean);
        }
        let mut l = 0;
        while l < run.n {
            if self.fixed {
                for k in bits(run.carry) {
                    if let Some(p) = lanes.planes.get_mut(r_base + k) {
                        p[l..run.n].fill(x[k / 4][k % 4]);
                    }
                }
                return Ok(());
            }
            for k in bits(run.carry) {
                if let Some(p) = lanes.planes.get_mut(r_base + k) {
                    p[l] = x[k / 4][k % 4];
                }
            }
            l += 1;
            if l == run.n {
                break;
            }
            self.evals += 1;
            if self.evals > MAX_CARRY_EVALS {
                return Err(Abort::Hazard);
            }
            let mut st = run.state.clone();
            st.temps = x;
            crate::interp::run(
                run.program,
                run.uniforms,
                &mut st,
                run.entry,
                run.config,
                &mut (),
                &mut (),
            )
            .map_err(|_| Abort::Error)?;
            self.fixed = bits(run.carry)
                .all(|k| st.temps[k / 4][k % 4].to_bits() == x[k / 4][k % 4].to_bits());
            x = st.temps;
            if unclean(&x) {
                return Err(Abort::Unclean);
            }
        }
        Ok(())
    }
}

/// The set bits of `m`, lowest first.
fn bits(mut m: u64) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        (m != 0).then(|| {
            let k = m.trailing_zeros() as usize;
            m &= m - 1;
            k
        })
    })
}

/// Traces kept per compiled program (distinct uniform/entry/aL keys).
const TRACES_PER_PROGRAM: usize = 4;

struct CacheEntry {
    compiled: Compiled,
    /// Straight-line paths for programs without divergent control flow, most recent first.
    traces: Vec<Trace>,
    /// Bool and int uniforms of the last batch that hit a hazard: with the same control-flow
    /// uniforms the next batch goes straight to the reference interpreter.
    hazard_flow: Option<(u32, u16, [[u8; 4]; 4])>,
    /// The shared program last run through this entry
    /// ([`ShaderEngine::run_batch_shared`]): while the entry holds it, no other program can
    /// live at its address, and a [`Program`] never changes, so the same `Arc` again is the
    /// same program without comparing its words.
    source: Option<Arc<Program>>,
}

/// The batched engine with `N` lanes per chunk (1 ≤ `N` ≤ 64).
pub struct FastEngineN<const N: usize> {
    /// Persistent registers.
    pub state: UnitState,
    /// Options (the same meaning as for [`Interpreter`]).
    pub config: ExecConfig,
    cache: Vec<CacheEntry>,
    /// The lane planes and scratch (~40 KB at 64 lanes), allocated by the first batch: a
    /// clone (a replay keyframe holds one per keyframe) or an engine that never runs holds none.
    lanes: Option<Box<Lanes<N>>>,
    stats: FastStats,
    simd: Simd,
}

/// The instruction-set level the lane loops are compiled for.
///
/// The same Rust code is compiled once per level (`#[target_feature]`) and the level is picked
/// at run time, so a build for baseline x86-64 still uses AVX2/AVX-512 where the CPU has them
/// and never executes them where it does not. All levels give identical results (the
/// differential tests run each one the machine supports).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Simd {
    /// The target's baseline (SSE2 on x86-64).
    Portable,
    /// x86-64 with AVX2.
    Avx2,
    /// x86-64 with AVX-512 (F, VL, BW, DQ).
    Avx512,
}

impl Simd {
    /// The best level this CPU supports; always [`Simd::Portable`] in cargo-fuzz builds
    /// (cfg `fuzzing`), which compile the baseline copy of the engine only (the other two
    /// are the same code, and compiling them with coverage instrumentation took two thirds of
    /// the fuzz smoke's build).
    pub fn detect() -> Self {
        #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512dq")
                && std::arch::is_x86_feature_detected!("avx2")
            {
                return Simd::Avx512;
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return Simd::Avx2;
            }
        }
        Simd::Portable
    }

    /// Every level this CPU supports, baseline first.
    pub fn supported() -> Vec<Simd> {
        let best = Self::detect();
        [Simd::Portable, Simd::Avx2, Simd::Avx512]
            .into_iter()
            .filter(|&s| s as u8 <= best as u8)
            .collect()
    }
}

/// [`crate::bench::Checksum::fold_bits`] at the best instruction-set level of this CPU.
pub(crate) fn fold_bits_dispatch(bits: &mut [[u32; 4]; 16], outputs: &crate::interp::VertexBatch) {
    match Simd::detect() {
        #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
        Simd::Avx512 => simd::fold_bits_avx512(bits, outputs),
        #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
        Simd::Avx2 => simd::fold_bits_avx2(bits, outputs),
        _ => crate::bench::fold_bits_body(bits, outputs),
    }
}

impl<const N: usize> Default for FastEngineN<N> {
    fn default() -> Self {
        Self::new(ExecConfig::default())
    }
}

impl<const N: usize> std::fmt::Debug for FastEngineN<N> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FastEngineN")
            .field("lanes", &N)
            .field("config", &self.config)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl<const N: usize> Clone for FastEngineN<N> {
    /// A copy with the same state and options, an empty program cache and no lane buffers.
    fn clone(&self) -> Self {
        Self {
            state: self.state.clone(),
            config: self.config,
            cache: Vec::new(),
            lanes: None,
            stats: self.stats,
            simd: self.simd,
        }
    }
}

impl<const N: usize> FastEngineN<N> {
    /// An engine with zeroed state and the given options, using the best [`Simd`] level of
    /// this CPU.
    pub fn new(config: ExecConfig) -> Self {
        Self::with_simd(config, Simd::detect())
    }

    /// An engine that uses `simd` (clamped to what this CPU supports).
    pub fn with_simd(config: ExecConfig, simd: Simd) -> Self {
        let best = Simd::detect();
        Self {
            state: UnitState::default(),
            config,
            cache: Vec::with_capacity(CACHE_LEN),
            lanes: None,
            stats: FastStats::default(),
            simd: if simd as u8 <= best as u8 { simd } else { best },
        }
    }

    /// The instruction-set level in use.
    pub fn simd(&self) -> Simd {
        self.simd
    }

    /// How batches were executed so far.
    pub fn stats(&self) -> FastStats {
        self.stats
    }

    /// Moves `program`'s compiled form to the front of the cache (compiling on a miss).
    fn lookup(&mut self, program: &Program) {
        let flush = self.config.flush;
        if let Some(i) = self
            .cache
            .iter()
            .position(|e| e.compiled.matches(program, flush))
        {
            if i != 0 {
                let e = self.cache.remove(i);
                self.cache.insert(0, e);
            }
            return;
        }
        self.stats.compiles += 1;
        if self.cache.len() == CACHE_LEN {
            self.cache.pop();
        }
        self.cache.insert(
            0,
            CacheEntry {
                compiled: compile(program, flush),
                traces: Vec::new(),
                hazard_flow: None,
                source: None,
            },
        );
    }

    /// [`Self::lookup`] for a shared program: the most recent entry is taken without comparing
    /// words when it was last used with this very `Arc`.
    fn lookup_shared(&mut self, program: &Arc<Program>) {
        let flush = self.config.flush;
        if let Some(e) = self.cache.first()
            && e.compiled.flush == flush
            && e.source.as_ref().is_some_and(|s| Arc::ptr_eq(s, program))
        {
            return;
        }
        self.lookup(program);
        if let Some(e) = self.cache.first_mut() {
            e.source = Some(Arc::clone(program));
        }
    }

    fn run_serial(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        let mut interp = Interpreter {
            state: std::mem::take(&mut self.state),
            config: self.config,
            last_executed: 0,
        };
        let r = interp.run_batch(program, uniforms, entry, inputs, outputs);
        self.state = interp.state;
        r
    }

    fn run_fast(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, Abort> {
        match self.simd {
            #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
            Simd::Avx512 => simd::run_avx512(self, program, uniforms, entry, inputs, outputs),
            #[cfg(all(target_arch = "x86_64", not(fuzzing)))]
            Simd::Avx2 => simd::run_avx2(self, program, uniforms, entry, inputs, outputs),
            _ => self.run_portable(program, uniforms, entry, inputs, outputs),
        }
    }

    #[inline(never)]
    pub(crate) fn run_portable(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, Abort> {
        self.run_fast_body(program, uniforms, entry, inputs, outputs)
    }

    /// The whole batch on the lane executor. Inlined into one wrapper per instruction-set level
    /// so that every lane loop is compiled for that level.
    #[inline(always)]
    pub(crate) fn run_fast_body(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, Abort> {
        let Some(entry_c) = self.cache.first_mut() else {
            return Err(Abort::Error);
        };
        let (prog, traces) = (&entry_c.compiled, &mut entry_c.traces);
        let lanes = &mut **self.lanes.get_or_insert_with(|| Box::new(Lanes::new()));
        let total = inputs.len().min(outputs.len());
        let out_mask = outputs.mask();
        let budget = self.config.budget;
        let round = self.config.round_f24;
        let wide = self.simd != Simd::Portable;
        lanes.wide = wide;
        lanes.wide512 = self.simd == Simd::Avx512;
        lanes.begin_batch(prog, uniforms, &self.state, inputs.mask(), out_mask, round);
        let mut stats = ChunkStats::default();
        let bools = uniforms.bools();
        // The trace of the previous chunk: (carried aL it was looked up for, index in `traces`).
        let mut last: Option<(i32, usize)> = None;
        // Pass-through outputs are written once for the whole batch (after the chunks) while
        // every chunk ran the same pass-through MOVs; when one differs, the vertices so far are
        // written and the remaining chunks write their own.
        let mut deferred = 0u16;
        let mut deferring = true;
        let mut carried = Carried::default();
        let mut first = 0;
        while first < total {
            let n = (total - first).min(N);
            lanes.load_inputs(prog, inputs, first, n, wide);
            let trace = if prog.uniform_flow {
                // Within a batch only the carried aL can change the key: the last chunk's trace
                // is reused when it is the same.
                match last {
                    Some((al, i)) if al == self.state.al => Some(i),
                    _ => {
                        let key = TraceKey {
                            entry,
                            bools,
                            ints: uniforms.i,
                            al0: self.state.al,
                            budget,
                        };
                        let found = match traces.iter().position(|t| t.key == key) {
                            Some(i) => Some(i),
                            None => trace::build(prog, program, uniforms, key).map(|t| {
                                if traces.len() == TRACES_PER_PROGRAM {
                                    traces.pop();
                                }
                                traces.insert(0, t);
                                0
                            }),
                        };
                        last = found.map(|i| (self.state.al, i));
                        found
                    }
                }
            } else {
                None
            };
            let trace_ref = trace.and_then(|i| traces.get(i));
            if let Some(t) = trace_ref
                && t.carry != 0
                && t.outcome.is_none()
            {
                carried.fill(
                    lanes,
                    CarryRun {
                        prog,
                        program,
                        uniforms,
                        entry,
                        config: &self.config,
                        state: &self.state,
                        carry: t.carry,
                        n,
                    },
                )?;
            }
            lanes.run_chunk(
                prog,
                uniforms,
                budget,
                round,
                entry,
                n,
                self.state.al,
                trace_ref,
                &mut stats,
            )?;
            self.stats.traced_chunks += u64::from(trace.is_some());
            let pass = lanes.pass_done();
            self.stats.pass_outputs += u64::from(pass.count_ones());
            let skip = if !deferring {
                0
            } else if first == 0 || pass == deferred {
                deferred = pass;
                pass
            } else {
                lanes.store_pass(prog, inputs, &self.state, outputs, deferred, 0, first);
                deferring = false;
                deferred = 0;
                0
            };
            lanes.finish_chunk(prog, &mut self.state, n, out_mask, inputs, first);
            lanes.store_outputs(prog, inputs, &self.state, outputs, first, n, wide, skip);
            first += n;
        }
        if deferred != 0 {
            // Before the unit state's inputs move to the last vertex: an input register the
            // batch does not carry is read from them.
            lanes.store_pass(prog, inputs, &self.state, outputs, deferred, 0, total);
        }
        if total > 0 {
            inputs.load_vertex(total - 1, &mut self.state.inputs);
        }
        self.stats.splits += stats.splits;
        self.stats.carried_batches += u64::from(carried.used);
        self.stats.carry_evals += u64::from(carried.evals);
        Ok(BatchStats {
            vertices: total,
            instructions: stats.instructions,
            unknown_ops: stats.unknown,
        })
    }
}

impl<const N: usize> ShaderEngine for FastEngineN<N> {
    fn name(&self) -> &'static str {
        "fast"
    }

    fn run_batch(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        self.lookup(program);
        self.run_front(program, uniforms, entry, inputs, outputs)
    }

    fn run_batch_shared(
        &mut self,
        program: &Arc<Program>,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        self.lookup_shared(program);
        self.run_front(program, uniforms, entry, inputs, outputs)
    }

    fn state(&self) -> &UnitState {
        &self.state
    }

    fn state_mut(&mut self) -> &mut UnitState {
        &mut self.state
    }
}

impl<const N: usize> FastEngineN<N> {
    /// Runs a batch with the front cache entry, which [`Self::lookup`] made `program`'s.
    fn run_front(
        &mut self,
        program: &Program,
        uniforms: &Uniforms,
        entry: u32,
        inputs: &VertexBatch,
        outputs: &mut VertexBatch,
    ) -> Result<BatchStats, BatchError> {
        let flow_key = (entry, uniforms.bools(), uniforms.i);
        let (serial_only, known_hazard) = match self.cache.first() {
            Some(e) => (e.compiled.serial_only, e.hazard_flow == Some(flow_key)),
            None => (true, false),
        };
        if serial_only {
            self.stats.serial_batches += 1;
            return self.run_serial(program, uniforms, entry, inputs, outputs);
        }
        if known_hazard {
            self.stats.hazard_batches += 1;
            return self.run_serial(program, uniforms, entry, inputs, outputs);
        }
        let snapshot = self.state.clone();
        match self.run_fast(program, uniforms, entry, inputs, outputs) {
            Ok(stats) => {
                self.stats.fast_batches += 1;
                Ok(stats)
            }
            Err(abort) => {
                match abort {
                    Abort::Hazard => {
                        self.stats.hazard_batches += 1;
                        if let Some(e) = self.cache.first_mut() {
                            e.hazard_flow = Some(flow_key);
                        }
                    }
                    Abort::Unclean => self.stats.hazard_batches += 1,
                    Abort::Error => self.stats.error_batches += 1,
                }
                self.state = snapshot;
                self.run_serial(program, uniforms, entry, inputs, outputs)
            }
        }
    }
}
