//! `picaview reduce`: delta debugging that shrinks a trace while a pixel keeps its value (or a
//! shell predicate keeps succeeding), `gpu_core::replay::reduce`. The predicate runner lives
//! here: the core never spawns processes.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use gpu_core::replay::reduce::{PixelSource, ReduceBudget, pixel_at_end, reduce};

use crate::cmd_edit::{check_not_input, write_new_trace};
use crate::cmd_trace::open_trace;

/// The image the pixel is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum PixelTarget {
    /// The PICA colour buffer configured at the end of the frame (as `render --target color`).
    Color,
    /// The top screen.
    Top,
    /// The bottom screen.
    Bottom,
}

/// Arguments of `picaview reduce`.
#[derive(Args, Debug)]
pub struct ReduceArgs {
    /// The trace (.ctf); it is not modified.
    pub trace: PathBuf,
    /// The frame (0-based) whose end state must keep the behaviour; later frames are dropped.
    #[arg(long)]
    pub frame: u32,
    /// The pixel whose value must stay the same: X,Y.
    #[arg(long, value_name = "X,Y", value_parser = parse_pixel, required_unless_present = "predicate")]
    pub pixel: Option<(u32, u32)>,
    /// Image the pixel is read from.
    #[arg(long, value_enum, default_value = "color")]
    pub target: PixelTarget,
    /// Instead of a pixel: a shell command run as `sh -c CMD sh CANDIDATE.ctf`; exit status 0
    /// means the candidate still shows the behaviour.
    #[arg(long, value_name = "CMD", conflicts_with = "pixel")]
    pub predicate: Option<String>,
    /// Candidates checked at most.
    #[arg(long, default_value_t = 2000)]
    pub max_steps: u64,
    /// Stop after this many seconds (the best trace found so far is written). The limit covers
    /// the whole run: no candidate starts that could not finish, with the final measurement,
    /// before it (both timed on the first run). The default keeps the command within the
    /// 30-second bound every command has on any input; give more for a long search on a big
    /// capture.
    #[arg(long, default_value_t = 25)]
    pub time_limit: u64,
    /// The reduced trace.
    #[arg(short, long)]
    pub output: PathBuf,
}

fn parse_pixel(s: &str) -> Result<(u32, u32), String> {
    let (x, y) = s
        .split_once(',')
        .ok_or_else(|| format!("expected X,Y, got '{s}'"))?;
    let n = |t: &str| {
        t.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{t}' is not a pixel coordinate"))
    };
    Ok((n(x)?, n(y)?))
}

/// Runs `picaview reduce`.
pub fn run(args: &ReduceArgs) -> Result<()> {
    check_not_input(&args.trace, &args.output)?;
    // Opened first for the usual error messages.
    drop(open_trace(&args.trace)?);
    let bytes =
        std::fs::read(&args.trace).with_context(|| format!("reading {}", args.trace.display()))?;
    let source = match args.target {
        PixelTarget::Color => PixelSource::Color,
        PixelTarget::Top => PixelSource::Top,
        PixelTarget::Bottom => PixelSource::Bottom,
    };
    let budget = ReduceBudget {
        max_steps: args.max_steps,
        deadline: Some(Instant::now() + Duration::from_secs(args.time_limit)),
    };
    let mut progress = |line: &str| eprintln!("reduce: {line}");
    let (out, report) = if let Some(cmd) = &args.predicate {
        let dir = std::env::temp_dir().join(format!("picaview-reduce-{}", std::process::id()));
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        let candidate = dir.join("candidate.ctf");
        let mut failed: Option<String> = None;
        let mut check = |b: &[u8]| {
            if std::fs::write(&candidate, b).is_err() {
                failed = Some(format!("cannot write {}", candidate.display()));
                return false;
            }
            match Command::new("sh")
                .arg("-c")
                .arg(cmd)
                .arg("sh")
                .arg(&candidate)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
            {
                Ok(s) => s.success(),
                Err(e) => {
                    failed = Some(format!("cannot run sh: {e}"));
                    false
                }
            }
        };
        let r = reduce(bytes, args.frame, &mut check, budget, &mut progress);
        let _ = std::fs::remove_dir_all(&dir);
        if let Some(f) = failed {
            bail!("{f}");
        }
        r?
    } else {
        let Some((x, y)) = args.pixel else {
            bail!("give --pixel X,Y or --predicate CMD");
        };
        // The pixel's value at the end of the frame, as the cut trace shows it.
        let mut want: Option<Option<[u8; 4]>> = None;
        let mut check = |b: &[u8]| {
            let v = pixel_at_end(b, source, x, y);
            match want {
                None => {
                    want = Some(v);
                    v.is_some()
                }
                Some(w) => v.is_some() && v == w,
            }
        };
        let r = reduce(bytes, args.frame, &mut check, budget, &mut progress)
            .with_context(|| format!("pixel {x},{y} of the {:?} image", args.target))?;
        if let Some(Some(v)) = want {
            eprintln!(
                "reduce: kept pixel {x},{y} = {:02X}{:02X}{:02X}{:02X} (RGBA)",
                v[0], v[1], v[2], v[3]
            );
        }
        r
    };
    write_new_trace(&args.output, &out)?;
    let (b, a) = (report.before, report.after);
    eprintln!(
        "wrote {}: {} -> {} bytes, {} -> {} stream elements, {} -> {} frames, {} -> {} draws, {} -> {} register writes executed ({} candidates checked{})",
        args.output.display(),
        b.bytes,
        a.bytes,
        b.elements,
        a.elements,
        b.frames,
        a.frames,
        b.draws,
        a.draws,
        b.writes,
        a.writes,
        report.steps,
        if report.budget_exhausted {
            "; budget exhausted, the result may shrink further with more --max-steps / --time-limit"
        } else {
            ""
        }
    );
    eprintln!(
        "  command lists: {} -> {} commands, {} -> {} bytes submitted",
        b.commands, a.commands, b.list_bytes, a.list_bytes
    );
    for (phase, removed, of) in &report.phases {
        eprintln!("  {phase}: removed {removed} of {of}");
    }
    let p = &report.pack;
    eprintln!(
        "  packing: {} list(s) rewritten without {} neutralised command(s) ({} bytes){}{}",
        p.lists_packed,
        p.commands_removed,
        p.list_bytes_removed,
        if p.lists_kept > 0 {
            format!(
                ", {} list(s) left unpacked (not safely rewritable)",
                p.lists_kept
            )
        } else {
            String::new()
        },
        if p.size_writes_inserted > 0 {
            format!(", {} size write(s) inserted", p.size_writes_inserted)
        } else {
            String::new()
        }
    );
    if let Some(note) = &report.pack_note {
        eprintln!("reduce: {note}");
    }
    Ok(())
}
