//! A light replay timer and output fingerprint for engine work (no GUI, no CLI crate, so it
//! builds in a fraction of the app's time):
//!
//! `cargo run --release -p gpu-core --example replay_time -- TRACE [RUNS] [THREADS...]`
//!
//! For each thread count (default 1 and 2) it replays the whole trace `RUNS` times (default 5)
//! and prints the best time per frame, then a fingerprint of the emulated memory taken at every
//! frame marker and at the end of the stream (a 64-bit hash of every mapped byte, so any
//! changed output bit changes it). Runs with different thread counts must print the same
//! fingerprint; a faster engine must print the fingerprint of the one before it.
//!
//! The fingerprint pass is separate from the timed passes (hashing memory is not timed).

use std::hash::Hasher;
use std::time::{Duration, Instant};

use gpu_core::replay::{Replay, Target};
use pica_cmd::citrace::CiTrace;

fn fingerprint(mem: &gpu_core::memory::PhysMem, h: &mut std::hash::DefaultHasher) {
    let mut buf = vec![0u8; 1 << 16];
    for region in mem.regions() {
        let end = u64::from(region.base) + u64::from(region.size);
        let mut addr = u64::from(region.base);
        while addr < end {
            let n = (end - addr).min(buf.len() as u64) as usize;
            let chunk = &mut buf[..n];
            // Unreadable ranges hash as their absence.
            if mem.read(addr as u32, chunk).is_ok() {
                h.write(chunk);
            } else {
                h.write_u64(addr);
            }
            addr += n as u64;
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(path) = args.first() else {
        return Err("usage: replay_time TRACE [RUNS] [THREADS...]".into());
    };
    let runs: u32 = args.get(1).map_or(Ok(5), |s| s.parse())?;
    let mut threads: Vec<usize> = args
        .iter()
        .skip(2)
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    if threads.is_empty() {
        threads = vec![1, 2];
    }
    let open = || -> Result<Replay<_>, Box<dyn std::error::Error>> {
        Ok(Replay::new(CiTrace::open(std::path::Path::new(path))?))
    };
    let mut best = vec![Duration::MAX; threads.len()];
    let mut frames = 0;
    // Interleaved so load changes hit every thread count alike.
    for _ in 0..runs.max(1) {
        for (b, &n) in best.iter_mut().zip(&threads) {
            let mut r = open()?;
            r.set_threads(n);
            let t = Instant::now();
            r.run_until(Target::End, &mut ());
            *b = (*b).min(t.elapsed());
            frames = r.position().frame.max(1);
        }
    }
    for (b, &n) in best.iter().zip(&threads) {
        let per = b.as_secs_f64() * 1e3 / f64::from(frames);
        println!(
            "{path}: {n} thread(s): {per:.3} ms/frame ({:.1} frames/s, {frames} frames, best of {runs})",
            1e3 / per
        );
    }
    for &n in &threads {
        let mut r = open()?;
        r.set_threads(n);
        let mut h = std::hash::DefaultHasher::new();
        let mut f = 0;
        while r.run_until(Target::Frame(f), &mut ()) && !r.at_end() {
            fingerprint(r.mem(), &mut h);
            f += 1;
        }
        r.run_until(Target::End, &mut ());
        fingerprint(r.mem(), &mut h);
        println!("{path}: {n} thread(s): fingerprint {:016x}", h.finish());
    }
    Ok(())
}
