//! `picaview bench replay TRACE.ctf`: how fast a trace replays, and where the time goes.
//!
//! Reports: a full replay (frames per second), the time spent inside draws (vertex fetch,
//! shading, assembly, clipping, rasterisation and fragment work) vs. everything else (memory
//! loads, command processing, fills, transfers), the index pass with keyframes and their memory
//! budget use (`--keyframe-budget MIB`), and the latency
//! of time-travel seeks to evenly spread draws (what the viewer's scrubbing costs). The full
//! replay is timed with 1 pixel-pipeline thread and with `--threads N` (default: the available
//! cores) in the same run; the index and the seeks use N.

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use gpu_core::debug::{DrawDetail, DrawInfo, DrawStats, Observer, StageTimes};
use gpu_core::pixel::fragment::parallel::ParallelTimes;
use gpu_core::replay::{Replay, Target};

use crate::cmd_trace::open_trace;

/// The trace type `open_trace` returns.
type Source = pica_cmd::citrace::SeekSource<std::fs::File>;

/// Arguments of `picaview bench replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayBenchArgs {
    /// The trace (.ctf).
    pub trace: PathBuf,
    /// Number of full replays to time (the best is reported). Fewer are run when the timed
    /// replays already took longer than `--max-seconds` (the report says so).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Number of seeks to time (fewer past `--max-seconds` of seeking, as stated).
    #[arg(long, default_value_t = 20)]
    pub seeks: u32,
    /// Wall-time allowance in seconds for the timed replays, and again for the seeks: once one
    /// is used up, no further run (or seek) starts, the stage-timing replay is left out, and
    /// the report says so. The first run of each thread count, the index and the first seek
    /// always run; 0 = no limit. Keeps the benchmark of a trace that replays in seconds (a
    /// long capture, or a hostile one cut by its work budget) to about four replays instead
    /// of `--runs` x 2 + 2 and the seeks.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_MAX_SECONDS)]
    pub max_seconds: f64,
    /// Memory budget of the index's keyframe store, in MiB (keyframes are thinned to stay
    /// under it; seeks re-execute more).
    #[arg(long, value_name = "MIB", default_value_t = gpu_core::replay::DEFAULT_KEYFRAME_BUDGET >> 20)]
    pub keyframe_budget: u64,
    /// Pixel-pipeline worker threads for the second replay timing, the index and the seeks
    /// (default: the available cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Work budgets (`--budget SPEC`).
    #[command(flatten)]
    pub budget: crate::budget_flag::BudgetArgs,
}

/// Default of `--max-seconds`.
pub const DEFAULT_MAX_SECONDS: f64 = 8.0;

/// True when `spent` has used up the `--max-seconds` allowance (never when it is 0 or not a
/// positive number).
fn over_allowance(spent: Duration, max_seconds: f64) -> bool {
    max_seconds > 0.0 && spent.as_secs_f64() >= max_seconds
}

#[derive(Default)]
struct Timer {
    draw_start: Option<Instant>,
    /// Draws begun and not yet ended: with several threads the pixels of a draw may wait for
    /// the following draws (gpu-core `draw/deferred.rs`), so draws overlap, and the time in
    /// draws runs from the first open draw's start until none is open.
    open: u64,
    /// Draws begun and ended so far, and the draws that ended after a later draw began: their
    /// pixels waited for the following draws (draws end in the order they begin).
    begun: u64,
    ended: u64,
    waited: u64,
    in_draws: Duration,
    draws: u64,
    vertices: u64,
    triangles: u64,
    fragments: u64,
    /// Per-stage times, collected only in the separate stage run (it reads more clocks).
    stages: Option<StageTimes>,
}

impl Observer for Timer {
    fn wants_stage_times(&self) -> bool {
        self.stages.is_some()
    }
    fn allows_deferred_pixels(&self) -> bool {
        true
    }
    fn stage_times(&mut self, t: &StageTimes) {
        if let Some(s) = self.stages.as_mut() {
            s.add(t);
        }
    }
    fn draw_begin(&mut self, _info: &DrawInfo) {
        if self.open == 0 {
            self.draw_start = Some(Instant::now());
        }
        self.open += 1;
        self.begun += 1;
    }
    fn draw_end(&mut self, _info: &DrawInfo, stats: &DrawStats, _d: Option<DrawDetail>) {
        self.open = self.open.saturating_sub(1);
        self.ended += 1;
        if self.begun > self.ended {
            self.waited += 1;
        }
        if self.open == 0
            && let Some(t) = self.draw_start.take()
        {
            self.in_draws += t.elapsed();
        }
        self.draws += 1;
        self.vertices += stats.vs_invocations;
        self.triangles += stats.triangles_rasterized;
        self.fragments += stats.fragments_written;
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Runs the benchmark and prints the report.
pub fn run(args: &ReplayBenchArgs) -> Result<()> {
    let budget = args.budget.budget();
    let open = || -> Result<_> {
        let mut r = Replay::new(open_trace(&args.trace)?);
        r.set_work_budget(budget);
        Ok(r)
    };
    let mut out = std::io::stdout().lock();
    let threads = args
        .threads
        .map_or_else(crate::cmd_render::default_threads, usize::from);
    writeln!(out, "trace: {}", args.trace.display())?;
    // Which copies of the pixel kernels run (AVX2 where the CPU has it; PICAVIEW_SIMD=portable
    // keeps the portable ones), so numbers from different machines can be told apart.
    writeln!(out, "pixel kernels: {}", gpu_core::pixel::isa::kernels())?;
    // Interleaved runs (1 thread, N threads, 1, N, ...) so load changes hit both alike.
    let counts: Vec<usize> = if threads > 1 {
        vec![1, threads]
    } else {
        vec![1]
    };
    let mut best: Vec<Option<(Duration, Timer, u32, ParallelTimes)>> =
        counts.iter().map(|_| None).collect();
    let runs = args.runs.max(1);
    let mut rounds = 0u32;
    let started = Instant::now();
    while rounds < runs {
        if rounds > 0 && over_allowance(started.elapsed(), args.max_seconds) {
            break;
        }
        rounds += 1;
        for (slot, &n) in best.iter_mut().zip(&counts) {
            let mut replay = open()?;
            replay.set_threads(n);
            let mut timer = Timer::default();
            let t = Instant::now();
            replay.run_until(Target::End, &mut timer);
            let total = t.elapsed();
            let frames = replay.position().frame;
            let shares = replay.gpu().pipeline.parallel_times();
            if slot.as_ref().is_none_or(|(b, ..)| total < *b) {
                *slot = Some((total, timer, frames, shares));
            }
        }
    }
    for (slot, &n) in best.into_iter().zip(&counts) {
        if let Some((total, timer, frames, shares)) = slot {
            replay_report(&mut out, rounds, n, total, &timer, frames, &shares)?;
        }
    }
    let timed = started.elapsed();
    if rounds < runs {
        writeln!(
            out,
            "  timed runs stopped after {rounds} of {runs}: they took {:.1} s, past --max-seconds {}",
            timed.as_secs_f64(),
            args.max_seconds
        )?;
    }
    if over_allowance(timed, args.max_seconds) {
        writeln!(
            out,
            "  stages: not timed (one more replay; the timed runs took {:.1} s, past --max-seconds {})",
            timed.as_secs_f64(),
            args.max_seconds
        )?;
    } else {
        stage_report(&mut out, &open)?;
    }
    index_and_seeks(&mut out, args, &open, threads)
}

/// Prints one timed replay.
fn replay_report(
    out: &mut impl std::io::Write,
    rounds: u32,
    threads: usize,
    total: Duration,
    timer: &Timer,
    frames: u32,
    shares: &ParallelTimes,
) -> Result<()> {
    let fps = if total.as_secs_f64() > 0.0 {
        f64::from(frames) / total.as_secs_f64()
    } else {
        0.0
    };
    writeln!(
        out,
        "replay ({threads} thread{}): {frames} frames, {} draws in {:.2} ms = {fps:.1} frames/s (best of {})",
        if threads == 1 { "" } else { "s" },
        timer.draws,
        ms(total),
        rounds
    )?;
    writeln!(
        out,
        "  in draws: {:.2} ms ({:.0}%): {} vertices shaded, {} triangles, {} fragments written",
        ms(timer.in_draws),
        100.0 * timer.in_draws.as_secs_f64() / total.as_secs_f64().max(1e-12),
        timer.vertices,
        timer.triangles,
        timer.fragments
    )?;
    writeln!(
        out,
        "  elsewhere (loads, command processing, fills, transfers): {:.2} ms",
        ms(total.saturating_sub(timer.in_draws))
    )?;
    let secs = total.as_secs_f64().max(1e-12);
    writeln!(
        out,
        "  per frame: {:.2} ms; {:.2} Mfragments/s written, {:.2} Mvertices/s shaded ({threads} thread{})",
        ms(total) / f64::from(frames.max(1)),
        timer.fragments as f64 / secs / 1e6,
        timer.vertices as f64 / secs / 1e6,
        if threads == 1 { "" } else { "s" },
    )?;
    if threads > 1 {
        writeln!(
            out,
            "  cross-draw groups: {} of {} draws waited for later draws into the same buffers and were drawn with them",
            timer.waited, timer.draws
        )?;
        // Where the second core's time went: how much pixel work the pool took, and how
        // long the replay thread waited for it (the rest of its time is serial work).
        let serial = total
            .saturating_sub(shares.caller_pixels)
            .saturating_sub(shares.caller_waiting);
        writeln!(
            out,
            "  pixel shares: {} groups ({} drawn while the replay went on); pixel work on the replay thread {:.2} ms, on the pool {:.2} ms ({:.0}% of the replay); replay thread waiting for the pool {:.2} ms, other work {:.2} ms",
            shares.groups,
            shares.launched,
            ms(shares.caller_pixels),
            ms(shares.pool_pixels),
            100.0 * shares.pool_pixels.as_secs_f64() / total.as_secs_f64().max(1e-12),
            ms(shares.caller_waiting),
            ms(serial)
        )?;
    }
    Ok(())
}

/// One more run with stage timing (clock reads per triangle and per sampled fragment; the
/// pixel pipeline runs on one thread while it is timed).
fn stage_report(
    out: &mut impl std::io::Write,
    open: &dyn Fn() -> Result<Replay<Source>>,
) -> Result<()> {
    let mut staged = Timer {
        stages: Some(StageTimes::default()),
        ..Timer::default()
    };
    open()?.run_until(Target::End, &mut staged);
    if let Some(st) = staged.stages {
        let all = (st.geometry + st.raster + st.texture + st.fragment_ops).as_secs_f64();
        let pct = |d: Duration| 100.0 * d.as_secs_f64() / all.max(1e-12);
        writeln!(
            out,
            "  stages (share of draw time; pixel split sampled 1/{}): vertex load/shade/clip {:.0}%, setup/raster {:.0}%, texture/lighting {:.0}%, TEV/fragment ops {:.0}%",
            StageTimes::SAMPLE_EVERY,
            pct(st.geometry),
            pct(st.raster),
            pct(st.texture),
            pct(st.fragment_ops)
        )?;
    }
    Ok(())
}

/// Builds the index and times seeks, with `threads` pixel-pipeline workers.
fn index_and_seeks(
    out: &mut impl std::io::Write,
    args: &ReplayBenchArgs,
    open: &dyn Fn() -> Result<Replay<Source>>,
    threads: usize,
) -> Result<()> {
    let mut replay = open()?;
    replay.set_threads(threads);
    replay.set_keyframe_budget(args.keyframe_budget.saturating_mul(1 << 20));
    let t = Instant::now();
    let index = replay.build_index();
    writeln!(
        out,
        "index: {:.2} ms, {} keyframes, {} draws, {} frames",
        ms(t.elapsed()),
        index.keyframes,
        index.draws.len(),
        index.frames.len()
    )?;
    let mib = |b: u64| b as f64 / f64::from(1u32 << 20);
    writeln!(
        out,
        "keyframes: {:.2} MiB held (+ {:.2} MiB of index records) of a {:.0} MiB budget, {} kept, {} dropped, spacing x{}",
        mib(index.keyframe_bytes),
        mib(index.record_bytes),
        mib(index.keyframe_budget),
        index.keyframes,
        index.keyframes_dropped,
        index.keyframe_stride
    )?;
    let n = index.draws.len() as u64;
    if n > 0 && args.seeks > 0 {
        let mut worst = Duration::ZERO;
        let mut sum = Duration::ZERO;
        let mut all = Vec::new();
        let started = Instant::now();
        // A fixed, spread-out order: forwards and backwards jumps.
        for k in 0..u64::from(args.seeks) {
            if k > 0 && over_allowance(started.elapsed(), args.max_seconds) {
                break;
            }
            let m = (k * 7919) % n;
            let t = Instant::now();
            replay.seek(Target::AfterDraw(m), &mut ());
            let d = t.elapsed();
            worst = worst.max(d);
            sum += d;
            all.push(d);
        }
        all.sort();
        // Nearest-rank 99th percentile.
        let p99 = all[((all.len() * 99).div_ceil(100)).clamp(1, all.len()) - 1];
        let done = all.len();
        writeln!(
            out,
            "seek to a draw ({threads} thread{}): mean {:.2} ms, p99 {:.2} ms, worst {:.2} ms over {done} seeks{}",
            if threads == 1 { "" } else { "s" },
            ms(sum) / done as f64,
            ms(p99),
            ms(worst),
            if done < args.seeks as usize {
                format!(
                    " (stopped after {done} of {}: past --max-seconds {})",
                    args.seeks, args.max_seconds
                )
            } else {
                String::new()
            }
        )?;
    }
    Ok(())
}
