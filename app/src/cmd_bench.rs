//! `picaview bench shader --workload W1|W2|W3|all [--vertices N] [--batch B]`: runs the shader
//! benchmark workloads of `testdata/bench-workloads.md` on the reference interpreter and prints
//! million vertices per second, the bit hash (16 lowercase hex digits) and the f64 sum.
//!
//! `--batch` defaults to N (all inputs in one streamed array); smaller values generate and shade
//! the vertices in cache-resident batches. The checksum does not depend on the batch size.

use std::fmt::Write as _;
use std::io::Write as _;

use anyhow::{Context, Result, bail};
use shader_unit::bench::{BenchResult, Workload, run_workload};
use shader_unit::interp::{ExecConfig, Interpreter};

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
    /// Vertices per batch (default: all of them, streamed).
    #[arg(long)]
    pub batch: Option<u32>,
    /// Plain IEEE arithmetic instead of the hardware's subnormal flushing (same hashes).
    #[arg(long)]
    pub ieee: bool,
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
    let mut out = String::new();
    for w in workloads {
        let mut engine = Interpreter::new(ExecConfig {
            flush: !args.ieee,
            ..ExecConfig::default()
        });
        let r = run_workload(&mut engine, w, args.vertices, batch)
            .with_context(|| format!("workload {w:?} failed"))?;
        report(&mut out, &r);
    }
    Ok(out)
}

fn report(out: &mut String, r: &BenchResult) {
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
    let _ = writeln!(
        out,
        "{}: interp, {} vertices, batch {}",
        spec.name, r.vertices, r.batch
    );
    let _ = writeln!(out, "  Mvertices/s  {:.3}", r.mvertices_per_sec());
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
        };
        let text = bench_shader(&args).unwrap();
        assert!(text.starts_with("W3: interp, 1000 vertices, batch 64"));
        assert!(text.contains("bit hash"));
        let bad = ShaderBenchArgs {
            workload: "W9".into(),
            vertices: 10,
            batch: None,
            ieee: false,
        };
        assert!(bench_shader(&bad).is_err());
    }
}
