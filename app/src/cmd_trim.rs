//! `picaview trim`: writes a trace of frames A..B of another, starting from the full GPU state
//! at the start of frame A and the memory frames A..B read (`gpu_core::replay::trim`).

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use gpu_core::replay::trim::{PageSelection, trim_with};

use crate::cmd_edit::{check_not_input, write_new_trace};
use crate::cmd_trace::open_trace;

/// An inclusive frame range `A..B` (or a single frame `A`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameRange {
    /// First frame.
    pub first: u32,
    /// Last frame (inclusive).
    pub last: u32,
}

fn parse_range(s: &str) -> Result<FrameRange, String> {
    let num = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{t}' is not a frame number (expected A..B, e.g. 2..5)"))
    };
    match s.split_once("..") {
        Some((a, b)) => {
            let b = b.strip_prefix('=').unwrap_or(b);
            Ok(FrameRange {
                first: num(a)?,
                last: num(b)?,
            })
        }
        None => num(s).map(|f| FrameRange { first: f, last: f }),
    }
}

/// Arguments of `picaview trim`.
#[derive(Args, Debug)]
pub struct TrimArgs {
    /// The trace (.ctf); it is not modified.
    pub trace: PathBuf,
    /// Frames to keep, 0-based and inclusive: `A..B` (or one frame `A`).
    #[arg(long, value_name = "A..B", value_parser = parse_range)]
    pub frames: FrameRange,
    /// The new trace.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Copy every non-zero memory page at frame A, not only the pages frames A..B read before
    /// writing them whole.
    #[arg(long)]
    pub all_pages: bool,
}

/// Runs `picaview trim`.
pub fn run(args: &TrimArgs) -> Result<()> {
    check_not_input(&args.trace, &args.output)?;
    let trace = open_trace(&args.trace)?;
    let input_len = trace.file_len();
    let selection = if args.all_pages {
        PageSelection::AllNonZero
    } else {
        PageSelection::Read
    };
    let (builder, report) = trim_with(trace, args.frames.first, args.frames.last, selection)
        .with_context(|| args.trace.display().to_string())?;
    let bytes = builder.build()?;
    write_new_trace(&args.output, &bytes)?;
    eprintln!(
        "wrote {} ({} bytes, input {} bytes): frames {}..{} of {}; {} memory page(s) ({} non-zero page(s) not read by these frames left out) and a {}-write state prologue; {} stream element(s) copied",
        args.output.display(),
        bytes.len(),
        input_len,
        args.frames.first,
        args.frames.last,
        report.frames_in,
        report.pages,
        report.pages_unused,
        report.prologue_writes,
        report.elements_copied
    );
    let regs = report
        .inexact
        .iter()
        .filter(|d| d.starts_with("PICA register"))
        .count();
    if regs > 0 {
        eprintln!(
            "note: {regs} PICA register value(s) differ from frame {}'s: upload index registers hold their FIFO's cursor and data ports their last parameter (what later frames render is unaffected)",
            args.frames.first
        );
    }
    for d in report
        .inexact
        .iter()
        .filter(|d| !d.starts_with("PICA register"))
    {
        eprintln!(
            "note: differs from the original at frame {}: {d}",
            args.frames.first
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse() {
        assert_eq!(parse_range("2..5"), Ok(FrameRange { first: 2, last: 5 }));
        assert_eq!(parse_range("2..=5"), Ok(FrameRange { first: 2, last: 5 }));
        assert_eq!(parse_range("3"), Ok(FrameRange { first: 3, last: 3 }));
        assert!(parse_range("a..b").is_err());
    }
}
