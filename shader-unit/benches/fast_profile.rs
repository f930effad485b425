//! A plain (non-criterion) driver for profiling the shader engines on one workload:
//! `cargo bench -p shader-unit --bench fast_profile -- W1 fast 2048 1000000 [reps]`.
//!
//! Arguments: workload (W1/W2/W3), engine (`fast` or `interp`), batch size, vertex count and
//! repetitions of the whole run. Inputs are generated once per batch position before the timed
//! loop (cache-resident when the vertex count equals the batch size), so a profiler
//! (`perf record`, `valgrind --tool=callgrind --toggle-collect='*run_batch*'`) sees the engine and
//! little else. Prints Mvertices/s of the timed loop and the bit hash of the last repetition.

use std::hint::black_box;
use std::time::Instant;

use shader_unit::bench::{Checksum, Workload, fill_inputs};
use shader_unit::fast::FastEngine;
use shader_unit::interp::{ExecConfig, Interpreter, ShaderEngine, VertexBatch};

fn run<E: ShaderEngine>(
    mut engine: E,
    w: Workload,
    batch: usize,
    vertices: usize,
    reps: usize,
) -> (f64, u64) {
    let program = w.program();
    let uniforms = w.uniforms();
    let batches = vertices.div_ceil(batch).max(1);
    let mut inputs: Vec<VertexBatch> = Vec::with_capacity(batches.min(64));
    // At most 64 distinct input batches are kept (cache-resident runs reuse them).
    for b in 0..batches.min(64) {
        let mut v = VertexBatch::new(batch, w.input_mask());
        fill_inputs(w, (b * batch) as u32, &mut v);
        inputs.push(v);
    }
    let mut outputs = VertexBatch::new(batch, w.spec().outputs);
    let mut sum = Checksum::default();
    let t = Instant::now();
    for _ in 0..reps {
        sum = Checksum::default();
        for b in 0..batches {
            engine
                .run_batch(
                    &program,
                    &uniforms,
                    0,
                    &inputs[b % inputs.len()],
                    &mut outputs,
                )
                .expect("workload runs");
            sum.fold_bits(&outputs);
        }
    }
    let s = t.elapsed().as_secs_f64();
    black_box(&sum);
    ((batches * batch * reps) as f64 / s / 1e6, sum.hash())
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let w = args
        .first()
        .and_then(|s| Workload::parse(s))
        .unwrap_or(Workload::W1);
    let engine = args.get(1).map(String::as_str).unwrap_or("fast");
    let batch: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(2048);
    let vertices: usize = args.get(3).and_then(|s| s.parse().ok()).unwrap_or(1 << 20);
    let reps: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(1);
    let config = ExecConfig::default();
    let (mvs, hash) = match engine {
        "interp" | "reference" => run(Interpreter::new(config), w, batch, vertices, reps),
        _ => run(FastEngine::new(config), w, batch, vertices, reps),
    };
    println!(
        "{} {engine} batch {batch} vertices {vertices} x{reps}: {mvs:.2} Mv/s hash {hash:016x}",
        w.spec().name
    );
}
