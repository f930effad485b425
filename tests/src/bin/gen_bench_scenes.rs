//! Writes the bench scenes of `picaview_tests::bench_scenes` as `.ctf` files for
//! `picaview bench replay` (issue 14).
//!
//! Usage: `cargo run --release -p picaview-tests --bin gen_bench_scenes -- DIR`

use std::path::PathBuf;
use std::process::ExitCode;

use picaview_tests::bench_scenes::BENCH_SCENES;

fn main() -> ExitCode {
    let Some(dir) = std::env::args().nth(1).map(PathBuf::from) else {
        eprintln!("usage: gen_bench_scenes DIR");
        return ExitCode::from(2);
    };
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("gen_bench_scenes: cannot create {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    for s in &BENCH_SCENES {
        let path = dir.join(format!("{}.ctf", s.name));
        let written = (s.build)()
            .map_err(|e| e.to_string())
            .and_then(|bytes| std::fs::write(&path, bytes).map_err(|e| e.to_string()));
        match written {
            Ok(()) => println!("{}", path.display()),
            Err(e) => {
                eprintln!("gen_bench_scenes: {}: {e}", s.name);
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
