// TEMP (not committed): time open, each frame, end
use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let th: usize = a[1].parse().unwrap();
    let mut best = vec![f64::MAX; 8];
    for _ in 0..a[2].parse::<u32>().unwrap() {
        let t = Instant::now();
        let mut r = Replay::new(CiTrace::open(std::path::Path::new(&a[0])).unwrap());
        r.set_threads(th);
        let mut v = vec![t.elapsed().as_secs_f64()];
        let mut t = Instant::now();
        for f in 0..6u32 {
            r.run_until(Target::Frame(f), &mut ());
            v.push(t.elapsed().as_secs_f64());
            t = Instant::now();
        }
        r.run_until(Target::End, &mut ());
        v.push(t.elapsed().as_secs_f64());
        for (b, x) in best.iter_mut().zip(v) {
            *b = b.min(x);
        }
    }
    println!(
        "{} open {:.3} | frames(ms) {}",
        a[0].rsplit('/').next().unwrap(),
        best[0] * 1e3,
        best[1..]
            .iter()
            .map(|x| format!("{:.3}", x * 1e3))
            .collect::<Vec<_>>()
            .join(" ")
    );
}
