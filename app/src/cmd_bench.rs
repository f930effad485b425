//! `picaview bench shader --workload W1|W2|W3|all [--engine reference|fast|both] [--threads T]
//! [--vertices N] [--batch B]`: runs the shader benchmark workloads of
//! `testdata/bench-workloads.md` and prints million vertices per second, the bit hash (16
//! lowercase hex digits) and the f64 sum.
//!
//! Without `--batch` every workload runs twice: streamed (all N inputs in one array) and
//! cache-resident (batches of 2048 vertices generated, and so touched, just before they are
//! shaded). The checksum does not depend on the batch size. `--engine both` runs the reference
//! interpreter and the fast engine in the same run and prints the speed ratio. `--threads T`
//! splits the vertices into T contiguous ranges shaded at once by T engines (the workloads carry
//! no state from vertex to vertex, so the hash is the same); one thread is the default.
//!
//! With T threads every thread does what one core does: it warms its own engine up with one
//! untimed batch, waits for the others (all start together), then per batch generates the inputs
//! untimed and times only `run_batch` and the bit fold. The figure is all vertices divided by the
//! slowest thread's timed total (the threads run at the same time, so this is the whole
//! machine's shading throughput); the wall time of the threaded run, input generation included,
//! is printed on a second line.
//!
//! What is timed: per batch, the engine's `run_batch` and the checksum's bit fold (the spec's
//! timed loop). Not timed: generating the inputs (each batch's are written, so touched, just
//! before it is shaded), the f64 sum, allocating and touching the buffers and, with one thread,
//! one untimed warm-up batch per engine (it compiles and caches the program; the unit state is
//! then reset to zero, so the measured run starts from the protocol's state). A 1M-vertex run
//! takes a few milliseconds, so every measurement is repeated `--repeat R` times (default 5) and
//! the fastest run is reported with the median beside it; every repetition must give the same
//! hash.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::{Context, Result, bail};
use std::time::{Duration, Instant};

use shader_unit::bench::{BenchResult, Checksum, Workload, fill_inputs, run_workload};
use shader_unit::fast::FastEngine;
use shader_unit::interp::{ExecConfig, Interpreter, ShaderEngine, UnitState, VertexBatch};

/// Arguments of `picaview bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    #[command(subcommand)]
    command: BenchCommand,
}

#[derive(clap::Subcommand, Debug)]
enum BenchCommand {
    /// Shader-unit throughput on the W1/W2/W3 workloads.
    Shader(ShaderBenchArgs),
    /// Trace replay: frames per second, time in draws vs. the rest, index build and seek times.
    Replay(crate::cmd_bench_replay::ReplayBenchArgs),
}

/// Arguments of `picaview bench shader`.
#[derive(clap::Args, Debug)]
pub struct ShaderBenchArgs {
    /// Workload: W1, W2, W3 or all.
    #[arg(long, default_value = "all")]
    pub workload: String,
    /// Number of vertices.
    #[arg(long, default_value_t = 1_000_000)]
    pub vertices: u32,
    /// Vertices per batch (default: streamed, then cache-resident batches of 2048).
    #[arg(long)]
    pub batch: Option<u32>,
    /// Plain IEEE arithmetic instead of the hardware's subnormal flushing (same hashes).
    #[arg(long)]
    pub ieee: bool,
    /// Engine: reference (the interpreter), fast (the batched SIMD engine) or both.
    #[arg(long, default_value = "reference")]
    pub engine: String,
    /// Threads, each shading a contiguous range of the vertices with its own engine.
    #[arg(long, default_value_t = 1)]
    pub threads: u32,
    /// Repetitions of each measurement (the fastest is reported, with the median).
    #[arg(long, default_value_t = 5)]
    pub repeat: u32,
}

/// Which engines `bench shader` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum EngineKind {
    Reference,
    Fast,
}

impl EngineKind {
    fn name(self) -> String {
        match self {
            EngineKind::Reference => "interp".to_string(),
            EngineKind::Fast => {
                let e = FastEngine::default();
                format!(
                    "fast ({:?}, {} lanes)",
                    e.simd(),
                    shader_unit::fast::DEFAULT_LANES
                )
            }
        }
    }
}

/// Runs `picaview bench …`.
pub fn run(args: &BenchArgs) -> Result<()> {
    match &args.command {
        BenchCommand::Shader(a) => {
            let text = bench_shader(a)?;
            std::io::stdout()
                .lock()
                .write_all(text.as_bytes())
                .context("cannot write to stdout")
        }
        BenchCommand::Replay(a) => crate::cmd_bench_replay::run(a),
    }
}

/// Runs the requested workloads and renders the report.
pub fn bench_shader(args: &ShaderBenchArgs) -> Result<String> {
    let workloads: Vec<Workload> = if args.workload.eq_ignore_ascii_case("all") {
        Workload::ALL.to_vec()
    } else {
        match Workload::parse(&args.workload) {
            Some(w) => vec![w],
            None => bail!(
                "unknown workload `{}` (use W1, W2, W3 or all)",
                args.workload
            ),
        }
    };
    if args.vertices == 0 {
        bail!("--vertices must be at least 1");
    }
    let batch = args.batch.unwrap_or(args.vertices);
    if batch == 0 {
        bail!("--batch must be at least 1");
    }
    let engines = match args.engine.to_ascii_lowercase().as_str() {
        "reference" | "interp" => vec![EngineKind::Reference],
        "fast" => vec![EngineKind::Fast],
        "both" => vec![EngineKind::Reference, EngineKind::Fast],
        other => bail!("unknown engine `{other}` (use reference, fast or both)"),
    };
    if args.threads == 0 || args.threads > 256 {
        bail!("--threads must be 1..=256");
    }
    if args.repeat == 0 || args.repeat > 1000 {
        bail!("--repeat must be 1..=1000");
    }
    let batches = match args.batch {
        Some(b) => vec![b],
        None => vec![args.vertices, 2048.min(args.vertices)],
    };
    let config = ExecConfig {
        flush: !args.ieee,
        ..ExecConfig::default()
    };
    let mut out = String::new();
    if args.threads > 1 {
        let _ = writeln!(
            out,
            "{} threads: each times only its own shading (as one core), Mvertices/s = all vertices / the slowest thread's timed total",
            args.threads
        );
    }
    for w in workloads {
        for &batch in &batches {
            let mut speeds = Vec::new();
            for &kind in &engines {
                let (runs, walls) = repeated(
                    kind,
                    config,
                    w,
                    args.vertices,
                    batch,
                    args.threads,
                    args.repeat,
                )
                .with_context(|| format!("workload {w:?} failed"))?;
                let (best, median) = best_and_median(&runs)?;
                report(
                    &mut out,
                    best,
                    median,
                    runs.len(),
                    &kind.name(),
                    args.threads,
                );
                if let Some(wall) = walls.iter().min() {
                    let _ = writeln!(
                        out,
                        "  wall time    {:.3} s for all threads, input generation included: {:.3} Mvertices/s",
                        wall.as_secs_f64(),
                        f64::from(args.vertices) / wall.as_secs_f64().max(1e-12) / 1e6
                    );
                }
                speeds.push(best.mvertices_per_sec());
            }
            if let [reference, fast] = speeds[..] {
                let _ = writeln!(
                    out,
                    "  fast / reference  {:.1}x (batch {batch})",
                    fast / reference.max(1e-12)
                );
            }
        }
    }
    Ok(out)
}

/// Runs one measurement `repeat` times. With one thread the same engine is used for every
/// repetition, warmed up by one untimed batch (program compile) and reset to the zeroed unit
/// state before each run; with more, every repetition starts fresh engines (each warmed up the
/// same way). Returns the runs and, with several threads, each run's wall time.
fn repeated(
    kind: EngineKind,
    config: ExecConfig,
    w: Workload,
    vertices: u32,
    batch: u32,
    threads: u32,
    repeat: u32,
) -> Result<(Vec<BenchResult>, Vec<Duration>)> {
    let mut runs = Vec::with_capacity(repeat as usize);
    let mut walls = Vec::new();
    if threads <= 1 {
        match kind {
            EngineKind::Reference => {
                let mut e = Interpreter::new(config);
                warm_up(&mut e, w, batch.min(vertices))?;
                for _ in 0..repeat {
                    *e.state_mut() = UnitState::default();
                    runs.push(run_workload(&mut e, w, vertices, batch)?);
                }
            }
            EngineKind::Fast => {
                let mut e = FastEngine::new(config);
                warm_up(&mut e, w, batch.min(vertices))?;
                for _ in 0..repeat {
                    *e.state_mut() = UnitState::default();
                    runs.push(run_workload(&mut e, w, vertices, batch)?);
                }
            }
        }
    } else {
        for _ in 0..repeat {
            let (run, wall) = run_threads(kind, config, w, vertices, batch, threads)?;
            runs.push(run);
            walls.push(wall);
        }
    }
    Ok((runs, walls))
}

/// Shades one untimed batch of `n` vertices (the engine compiles and caches the program).
fn warm_up<E: ShaderEngine>(engine: &mut E, w: Workload, n: u32) -> Result<()> {
    let n = n.max(1) as usize;
    let mut inputs = VertexBatch::new(n, w.input_mask());
    let mut outputs = VertexBatch::new(n, w.spec().outputs);
    fill_inputs(w, 0, &mut inputs);
    engine
        .run_batch(&w.program(), &w.uniforms(), 0, &inputs, &mut outputs)
        .map_err(|e| anyhow::anyhow!("warm-up vertex {}: {}", e.vertex, e.error))?;
    Ok(())
}

/// The fastest run and the median speed; fails when the repetitions disagree on the hash.
fn best_and_median(runs: &[BenchResult]) -> Result<(&BenchResult, f64)> {
    let Some(first) = runs.first() else {
        bail!("no benchmark run");
    };
    if let Some(r) = runs
        .iter()
        .find(|r| r.checksum.hash() != first.checksum.hash())
    {
        bail!(
            "repetitions disagree on the hash: {} vs {}",
            first.hash_hex(),
            r.hash_hex()
        );
    }
    let mut speeds: Vec<f64> = runs.iter().map(BenchResult::mvertices_per_sec).collect();
    speeds.sort_by(f64::total_cmp);
    let median = speeds[speeds.len() / 2];
    let best = runs
        .iter()
        .max_by(|a, b| a.mvertices_per_sec().total_cmp(&b.mvertices_per_sec()))
        .unwrap_or(first);
    Ok((best, median))
}

/// Runs `vertices` vertices of `w` split into `threads` contiguous ranges, one engine each, and
/// adds the checksums up (the bit sums are wrapping sums, so the order does not matter; the f64
/// sums are added per range, which can differ from a single run in the last bits).
///
/// Each thread warms its engine up (untimed), then all start together and each times its
/// batches as [`run_workload`] does; the result's `elapsed` is the slowest thread's timed
/// total, and the wall time from the common start to the last thread's end is returned beside.
fn run_threads(
    kind: EngineKind,
    config: ExecConfig,
    w: Workload,
    vertices: u32,
    batch: u32,
    threads: u32,
) -> Result<(BenchResult, Duration)> {
    let threads = threads.clamp(1, vertices.max(1));
    let per = vertices.div_ceil(threads);
    let barrier = std::sync::Barrier::new(threads as usize);
    let parts: Vec<Result<Part>> = std::thread::scope(|scope| {
        let barrier = &barrier;
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let first = (t * per).min(vertices);
                let count = per.min(vertices - first);
                scope.spawn(move || match kind {
                    EngineKind::Reference => thread_part(
                        &mut Interpreter::new(config),
                        w,
                        first,
                        count,
                        batch,
                        barrier,
                    ),
                    EngineKind::Fast => thread_part(
                        &mut FastEngine::new(config),
                        w,
                        first,
                        count,
                        batch,
                        barrier,
                    ),
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a benchmark thread panicked")))
            })
            .collect()
    });
    let mut checksum = Checksum::default();
    let mut instructions = 0;
    let mut elapsed = Duration::ZERO;
    let mut span: Option<(Instant, Instant)> = None;
    for part in parts {
        let part = part?;
        let c = part.checksum;
        for (acc, add) in checksum.bits.iter_mut().zip(&c.bits) {
            for (a, b) in acc.iter_mut().zip(add) {
                *a = a.wrapping_add(*b);
            }
        }
        for (acc, add) in checksum.sum.iter_mut().zip(&c.sum) {
            for (a, b) in acc.iter_mut().zip(add) {
                *a += b;
            }
        }
        instructions += part.instructions;
        elapsed = elapsed.max(part.timed);
        span = Some(match span {
            None => (part.start, part.end),
            Some((s, e)) => (s.min(part.start), e.max(part.end)),
        });
    }
    let wall = span.map_or(Duration::ZERO, |(s, e)| e.duration_since(s));
    Ok((
        BenchResult {
            workload: w,
            vertices,
            batch: batch.clamp(1, vertices.max(1)),
            elapsed,
            checksum,
            instructions,
        },
        wall,
    ))
}

/// One thread's share of a threaded run.
struct Part {
    checksum: Checksum,
    instructions: u64,
    /// The timed total (shading and bit fold of each batch).
    timed: Duration,
    /// When the thread started its first batch and finished its last.
    start: Instant,
    end: Instant,
}

/// A thread of [`run_threads`]: warm-up, the common start, then its range.
fn thread_part<E: ShaderEngine>(
    engine: &mut E,
    w: Workload,
    first: u32,
    count: u32,
    batch: u32,
    barrier: &std::sync::Barrier,
) -> Result<Part> {
    let warm = warm_up(engine, w, batch.min(count));
    *engine.state_mut() = UnitState::default();
    // Every thread reaches the barrier, also after a failed warm-up (no thread waits forever).
    barrier.wait();
    warm?;
    let start = Instant::now();
    let (checksum, instructions, timed) = range(engine, w, first, count, batch)?;
    Ok(Part {
        checksum,
        instructions,
        timed,
        start,
        end: Instant::now(),
    })
}

/// Writes every output register of `batch` (first-touch page faults happen before timing).
fn touch(batch: &mut VertexBatch) {
    for r in 0..16 {
        if let Some(v) = batch.reg_mut(r) {
            v.fill(std::hint::black_box([0.0; 4]));
        }
    }
}

/// Shades vertices `first .. first + count` of `w` in batches, with the per-batch steps and
/// timing of [`run_workload`] (inputs generated untimed just before each batch; `run_batch` and
/// the bit fold timed); returns the checksum, the instruction count and the timed total.
fn range<E: ShaderEngine>(
    engine: &mut E,
    w: Workload,
    first: u32,
    count: u32,
    batch: u32,
) -> Result<(Checksum, u64, Duration)> {
    let program = w.program();
    let uniforms = w.uniforms();
    let batch = batch.clamp(1, count.max(1));
    let spec = w.spec();
    let mut checksum = Checksum::default();
    let mut instructions = 0;
    let mut timed = Duration::ZERO;
    let mut inputs = VertexBatch::new(batch as usize, w.input_mask());
    let mut outputs = VertexBatch::new(batch as usize, spec.outputs);
    touch(&mut outputs);
    let mut done = 0;
    while done < count {
        let n = batch.min(count - done);
        if n != batch {
            inputs = VertexBatch::new(n as usize, w.input_mask());
            outputs = VertexBatch::new(n as usize, spec.outputs);
            touch(&mut outputs);
        }
        fill_inputs(w, first + done, &mut inputs);
        let t = Instant::now();
        let stats = engine
            .run_batch(&program, &uniforms, 0, &inputs, &mut outputs)
            .map_err(|e| {
                anyhow::anyhow!("vertex {}: {}", first + done + e.vertex as u32, e.error)
            })?;
        checksum.fold_bits(&outputs);
        timed += t.elapsed();
        checksum.fold_sum(&outputs);
        instructions += stats.instructions;
        done += n;
    }
    Ok((checksum, instructions, timed))
}

fn report(out: &mut String, r: &BenchResult, median: f64, runs: usize, engine: &str, threads: u32) {
    let spec = r.workload.spec();
    let reference = if r.vertices == 1_000_000 {
        if r.matches_reference() {
            "  (matches the reference)"
        } else {
            "  (DIFFERS from the reference!)"
        }
    } else {
        ""
    };
    let threads = if threads > 1 {
        format!(", {threads} threads (shading timed per thread; figure over the slowest)")
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{}: {engine}, {} vertices, batch {}{threads}",
        spec.name, r.vertices, r.batch
    );
    let _ = writeln!(
        out,
        "  Mvertices/s  {:.3}  (best of {runs}; median {median:.3})",
        r.mvertices_per_sec()
    );
    let _ = writeln!(out, "  bit hash     {}{reference}", r.hash_hex());
    let _ = writeln!(out, "  f64 sum      {}", r.checksum.fsum());
    let _ = writeln!(
        out,
        "  time         {:.3} s, {:.1} M instructions/s",
        r.elapsed.as_secs_f64(),
        r.instructions as f64 / r.elapsed.as_secs_f64().max(1e-12) / 1e6
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_run_reports_hash_and_sum() {
        let args = ShaderBenchArgs {
            workload: "w3".into(),
            vertices: 1000,
            batch: Some(64),
            ieee: false,
            engine: "reference".into(),
            threads: 1,
            repeat: 2,
        };
        let text = bench_shader(&args).unwrap();
        assert!(text.starts_with("W3: interp, 1000 vertices, batch 64"));
        assert!(text.contains("bit hash"));
        assert!(text.contains("best of 2"), "{text}");
        let bad = ShaderBenchArgs {
            workload: "W9".into(),
            vertices: 10,
            batch: None,
            ieee: false,
            engine: "reference".into(),
            threads: 1,
            repeat: 1,
        };
        assert!(bench_shader(&bad).is_err());
        let bad_engine = ShaderBenchArgs {
            workload: "W1".into(),
            engine: "jit".into(),
            ..args
        };
        assert!(bench_shader(&bad_engine).is_err());
        let no_runs = ShaderBenchArgs {
            workload: "W1".into(),
            engine: "fast".into(),
            repeat: 0,
            ..bad_engine
        };
        assert!(bench_shader(&no_runs).is_err());
    }

    fn hashes(text: &str) -> Vec<&str> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix("bit hash"))
            .map(|h| h.split_whitespace().next().unwrap_or(""))
            .collect()
    }

    #[test]
    fn engines_and_threads_agree_on_the_hash() {
        let args = ShaderBenchArgs {
            workload: "all".into(),
            vertices: 3000,
            batch: None,
            ieee: false,
            engine: "both".into(),
            threads: 1,
            repeat: 3,
        };
        let text = bench_shader(&args).unwrap();
        assert!(text.contains("fast / reference"), "{text}");
        // 3 workloads x (streamed, batches of 2048) x 2 engines.
        let one = hashes(&text);
        assert_eq!(one.len(), 12, "{text}");
        for pair in one.chunks(2) {
            assert_eq!(pair[0], pair[1], "{text}");
        }
        let threaded = bench_shader(&ShaderBenchArgs { threads: 3, ..args }).unwrap();
        assert_eq!(hashes(&threaded), one, "{threaded}");
        // Threaded runs say what is timed and add the wall time per measurement.
        assert!(threaded.contains("slowest thread"), "{threaded}");
        assert_eq!(threaded.matches("wall time").count(), 12, "{threaded}");
    }
}
