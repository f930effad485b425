//! `picaview bench replay TRACE.ctf`: how fast a trace replays, and where the time goes.
//!
//! Reports: a full replay (frames per second), the time spent inside draws (vertex fetch,
//! shading, assembly, clipping, rasterisation and fragment work) vs. everything else (memory
//! loads, command processing, fills, transfers), the index pass with keyframes, and the latency
//! of time-travel seeks to evenly spread draws (what the viewer's scrubbing costs).

use std::io::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Result;
use gpu_core::debug::{DrawDetail, DrawInfo, DrawStats, Observer};
use gpu_core::replay::{Replay, Target};

use crate::cmd_trace::open_trace;

/// Arguments of `picaview bench replay`.
#[derive(clap::Args, Debug)]
pub struct ReplayBenchArgs {
    /// The trace (.ctf).
    pub trace: PathBuf,
    /// Number of full replays to time (the best is reported).
    #[arg(long, default_value_t = 3)]
    pub runs: u32,
    /// Number of seeks to time.
    #[arg(long, default_value_t = 20)]
    pub seeks: u32,
}

#[derive(Default)]
struct Timer {
    draw_start: Option<Instant>,
    in_draws: Duration,
    draws: u64,
    vertices: u64,
    triangles: u64,
    fragments: u64,
}

impl Observer for Timer {
    fn draw_begin(&mut self, _info: &DrawInfo) {
        self.draw_start = Some(Instant::now());
    }
    fn draw_end(&mut self, _info: &DrawInfo, stats: &DrawStats, _d: Option<DrawDetail>) {
        if let Some(t) = self.draw_start.take() {
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
    let open = || open_trace(&args.trace);
    let mut out = std::io::stdout().lock();
    let mut best: Option<(Duration, Timer, u32)> = None;
    for _ in 0..args.runs.max(1) {
        let mut replay = Replay::new(open()?);
        let mut timer = Timer::default();
        let t = Instant::now();
        replay.run_until(Target::End, &mut timer);
        let total = t.elapsed();
        let frames = replay.position().frame;
        if best.as_ref().is_none_or(|(b, _, _)| total < *b) {
            best = Some((total, timer, frames));
        }
    }
    let Some((total, timer, frames)) = best else {
        return Ok(());
    };
    let fps = if total.as_secs_f64() > 0.0 {
        f64::from(frames) / total.as_secs_f64()
    } else {
        0.0
    };
    writeln!(out, "trace: {}", args.trace.display())?;
    writeln!(
        out,
        "replay: {frames} frames, {} draws in {:.2} ms = {fps:.1} frames/s (best of {})",
        timer.draws,
        ms(total),
        args.runs.max(1)
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
    let mut replay = Replay::new(open()?);
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
    let n = index.draws.len() as u64;
    if n > 0 && args.seeks > 0 {
        let mut worst = Duration::ZERO;
        let mut sum = Duration::ZERO;
        // A fixed, spread-out order: forwards and backwards jumps.
        for k in 0..u64::from(args.seeks) {
            let m = (k * 7919) % n;
            let t = Instant::now();
            replay.seek(Target::AfterDraw(m), &mut ());
            let d = t.elapsed();
            worst = worst.max(d);
            sum += d;
        }
        writeln!(
            out,
            "seek to a draw: mean {:.2} ms, worst {:.2} ms over {} seeks",
            ms(sum) / f64::from(args.seeks),
            ms(worst),
            args.seeks
        )?;
    }
    Ok(())
}
