//! Quick timing of the fast engine against the reference on W1-W3 (development aid):
//! `cargo bench -p shader-unit --bench fast_smoke -- [W1|W2|W3|all] [lanes] [ref]`.
//!
//! A bench target, not an example: `cargo test` builds every example, and this one names the
//! engine at four lane counts (8, 16, 32, 64), each compiled for every instruction-set level;
//! as an example it was the slowest unit of the test command's build (38 min of one core, the
//! last 38 of the build's 59 on a 2-core machine: `cargo test --no-run --timings`, session 17).
use shader_unit::bench::{Workload, run_workload};
use shader_unit::fast::FastEngineN;
use shader_unit::interp::{ExecConfig, Interpreter, ShaderEngine};

/// Best of five runs (the machine is shared; the best run is the least disturbed one).
fn time<E: ShaderEngine>(e: &mut E, w: Workload) -> f64 {
    let mut best: f64 = 0.0;
    for _ in 0..5 {
        *e.state_mut() = Default::default();
        let r = run_workload(e, w, 1_000_000, 2048).unwrap();
        assert!(r.matches_reference());
        best = best.max(r.mvertices_per_sec());
    }
    best
}

fn main() {
    // `cargo bench` adds `--bench`.
    let args: Vec<String> = std::env::args().filter(|a| a != "--bench").collect();
    let only = args.get(1).and_then(|s| Workload::parse(s));
    let lanes: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(16);
    let reference = args.iter().any(|a| a == "ref");
    let c = ExecConfig::default();
    for w in Workload::ALL {
        if only.is_some_and(|o| o != w) {
            continue;
        }
        let f = match lanes {
            8 => time(&mut FastEngineN::<8>::new(c), w),
            32 => time(&mut FastEngineN::<32>::new(c), w),
            64 => time(&mut FastEngineN::<64>::new(c), w),
            _ => time(&mut FastEngineN::<16>::new(c), w),
        };
        print!("{w:?} lanes {lanes} fast {f:.1} Mv/s");
        if reference {
            let r = time(&mut Interpreter::new(c), w);
            print!(" ref {r:.1} Mv/s ratio {:.1}", f / r);
        }
        println!();
    }
}
