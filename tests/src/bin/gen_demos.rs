//! Regenerates the bundled demo traces `assets/demos/*.ctf` from the scene builder
//! (`picaview_tests::scene::demos`).
//!
//! Usage: `cargo run -p picaview-tests --bin gen_demos [-- [--out DIR] [--png DIR] [NAME...]]`
//!
//! * `--out DIR`: write the traces to DIR instead of `assets/demos/`.
//! * `--png DIR`: also replay each trace with gpu-core's trace player and write both screens of
//!   every frame as `DIR/{name}_f{frame}_{top,bottom}.png`, for people to look at.
//! * `NAME...`: only these demos (default: all).
//!
//! The output is deterministic: running it twice gives identical files, and
//! `tests/tests/demo_traces.rs` checks that the committed files are what this writes.

use std::path::PathBuf;
use std::process::ExitCode;

use picaview_tests::scene::demos::{DEMOS, demos_dir};
use picaview_tests::scene::preview::{render_frames, save_png};

fn main() -> ExitCode {
    let mut out = demos_dir();
    let mut png: Option<PathBuf> = None;
    let mut names: Vec<String> = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--out" | "--png" => {
                let Some(dir) = args.next() else {
                    eprintln!("gen_demos: {a} needs a directory");
                    return ExitCode::from(2);
                };
                if a == "--out" {
                    out = PathBuf::from(dir);
                } else {
                    png = Some(PathBuf::from(dir));
                }
            }
            "-h" | "--help" => {
                println!("usage: gen_demos [--out DIR] [--png DIR] [NAME...]");
                for d in &DEMOS {
                    println!("  {:<10} {}", d.name, d.summary);
                }
                return ExitCode::SUCCESS;
            }
            name => names.push(name.to_string()),
        }
    }
    if let Some(unknown) = names
        .iter()
        .find(|n| !DEMOS.iter().any(|d| d.name == n.as_str()))
    {
        eprintln!("gen_demos: no demo called {unknown:?} (see --help)");
        return ExitCode::from(2);
    }
    for dir in std::iter::once(&out).chain(png.as_ref()) {
        if let Err(e) = std::fs::create_dir_all(dir) {
            eprintln!("gen_demos: cannot create {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    for demo in DEMOS
        .iter()
        .filter(|d| names.is_empty() || names.iter().any(|n| n == d.name))
    {
        let bytes = match (demo.build)() {
            Ok(b) => b,
            Err(e) => {
                eprintln!("gen_demos: building {}: {e}", demo.name);
                return ExitCode::FAILURE;
            }
        };
        let path = out.join(format!("{}.ctf", demo.name));
        if let Err(e) = std::fs::write(&path, &bytes) {
            eprintln!("gen_demos: writing {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("{}: {} bytes", path.display(), bytes.len());
        let Some(dir) = &png else { continue };
        let rendered = match render_frames(bytes) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("gen_demos: replaying {}: {e}", demo.name);
                return ExitCode::FAILURE;
            }
        };
        for d in &rendered.diagnostics {
            println!("  diagnostic: {:?} draw {:?}: {}", d.kind, d.draw, d.detail);
        }
        for (i, f) in rendered.frames.iter().enumerate() {
            for (which, img) in [("top", &f.top), ("bottom", &f.bottom)] {
                let p = dir.join(format!("{}_f{i}_{which}.png", demo.name));
                if let Err(e) = save_png(img, &p) {
                    eprintln!("gen_demos: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
        println!(
            "  {} frames, {} draws replayed; PNGs in {}",
            rendered.frames.len(),
            rendered.draws,
            dir.display()
        );
    }
    ExitCode::SUCCESS
}
