//! Criterion benchmarks of the reference interpreter (`interp/…`) and the fast batched engine
//! (`fast/…`, and `fast8/…`–`fast32/…` for other lane counts) on the W1/W2/W3 workloads of
//! `testdata/bench-workloads.md`: a streamed run (all inputs in one large array, as the spec's
//! 1M-vertex measurement) and cache-resident batches of 256 and 2048 vertices (as real draws).
//!
//! Throughput is reported in vertices. Inputs are generated outside the timed region (and so are
//! touched before it). One core: criterion runs one thread.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use shader_unit::bench::{Checksum, Workload, fill_inputs};
use shader_unit::fast::{FastEngine, FastEngineN};
use shader_unit::interp::{ExecConfig, Interpreter, ShaderEngine, VertexBatch};

/// Vertices of the streamed measurement. The spec uses 1,000,000; criterion repeats each
/// measurement many times, so the default here is smaller. Set `PICAVIEW_BENCH_STREAM` to
/// override (e.g. 1000000).
fn stream_len() -> usize {
    std::env::var("PICAVIEW_BENCH_STREAM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1 << 18)
}

fn shade(c: &mut Criterion, group_name: &str, len: usize) {
    let mut group = c.benchmark_group(group_name);
    group.throughput(Throughput::Elements(len as u64));
    if len > 100_000 {
        group.sample_size(10);
    }
    let config = ExecConfig::default();
    engine(&mut group, "interp", Interpreter::new(config), len);
    engine(&mut group, "fast", FastEngine::new(config), len);
    if len <= 2048 {
        engine(&mut group, "fast8", FastEngineN::<8>::new(config), len);
        engine(&mut group, "fast16", FastEngineN::<16>::new(config), len);
        engine(&mut group, "fast32", FastEngineN::<32>::new(config), len);
    }
    group.finish();
}

fn engine<E: ShaderEngine>(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    mut engine: E,
    len: usize,
) {
    for w in Workload::ALL {
        let program = w.program();
        let uniforms = w.uniforms();
        let mut inputs = VertexBatch::new(len, w.input_mask());
        fill_inputs(w, 0, &mut inputs);
        let mut outputs = VertexBatch::new(len, w.spec().outputs);
        group.bench_with_input(
            BenchmarkId::new(name, w.spec().name),
            &inputs,
            |b, inputs| {
                b.iter(|| {
                    let mut sum = Checksum::default();
                    engine
                        .run_batch(&program, &uniforms, 0, inputs, &mut outputs)
                        .expect("workload runs");
                    sum.fold_bits(&outputs);
                    black_box(sum.bits)
                });
            },
        );
    }
}

fn benches(c: &mut Criterion) {
    shade(c, "shader/stream", stream_len());
    shade(c, "shader/batch256", 256);
    shade(c, "shader/batch2048", 2048);
}

criterion_group!(shader, benches);
criterion_main!(shader);
