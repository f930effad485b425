//! `picaview who-touched TRACE.ctf ADDR [--len N] [--json] [--limit N]`: every producer and
//! consumer of a physical address range in trace order (memory loads, fills, display transfers
//! and texture copies as source or destination, draws rendering into it as colour or depth
//! buffer, sampling it as a texture, reading vertex or index arrays from it).
//!
//! The trace is replayed once without keyframes (`gpu_core::replay::resources`); each event is
//! printed when it happens (text lines, or one JSON object per line inside a JSON array), so
//! memory stays bounded whatever the trace's length. `--limit N` prints the first N events;
//! the summary still counts them all.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};
use gpu_core::replay::Replay;
use gpu_core::replay::resources::{AddrRange, ResourceEvent, who_touched};
use serde_json::json;

use crate::cmd_trace::open_trace;

/// Arguments of `picaview who-touched`.
#[derive(clap::Args, Debug)]
pub struct WhoTouchedArgs {
    /// CiTrace file.
    pub file: PathBuf,
    /// Physical address (hex with 0x, or decimal).
    #[arg(value_parser = parse_u32)]
    pub addr: u32,
    /// Length of the range in bytes (hex with 0x, or decimal).
    #[arg(long, default_value = "1", value_parser = parse_u64)]
    pub len: u64,
    /// Print a JSON array, one object per event, then a summary object.
    #[arg(long)]
    pub json: bool,
    /// Print at most this many events (all are still counted).
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    r.map_err(|_| format!("`{s}` is not a number (use 0x1F000000 or 520093696)"))
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let v = parse_u64(s)?;
    u32::try_from(v).map_err(|_| format!("`{s}` is beyond the 32-bit physical address space"))
}

/// Runs `picaview who-touched`.
pub fn run(args: &WhoTouchedArgs) -> Result<()> {
    if args.len == 0 {
        bail!("--len must be at least 1");
    }
    let query = AddrRange {
        start: args.addr,
        len: args.len,
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    stream(&args.file, query, args.json, args.limit, &mut out)?;
    out.flush()?;
    Ok(())
}

/// Replays `path` and writes the events touching `query` to `out` as they happen.
fn stream(
    path: &Path,
    query: AddrRange,
    as_json: bool,
    limit: Option<u64>,
    out: &mut impl Write,
) -> Result<()> {
    let trace = open_trace(path)?;
    let mut replay = Replay::new(trace);
    let limit = limit.unwrap_or(u64::MAX);
    let end = query.end().saturating_sub(1);
    if as_json {
        write!(out, "[")?;
    } else {
        writeln!(
            out,
            "{}: who touched PA 0x{:08X}-0x{end:08X} ({} byte(s))",
            path.display(),
            query.start,
            query.len
        )?;
    }
    let mut printed = 0u64;
    let mut error: Option<io::Error> = None;
    let stats = who_touched(&mut replay, query, &mut |ev| {
        if printed >= limit {
            return true;
        }
        printed += 1;
        let r = if as_json {
            write_json(out, ev, printed == 1)
        } else {
            write_text(out, ev)
        };
        match r {
            Ok(()) => true,
            Err(e) => {
                // A closed pipe or full disk: stop replaying.
                error = Some(e);
                false
            }
        }
    });
    if let Some(e) = error {
        return Err(e.into());
    }
    let not_printed = stats.events.saturating_sub(printed);
    if as_json {
        let summary = json!({
            "summary": {
                "addr": query.start,
                "len": query.len,
                "events": stats.events,
                "writes": stats.writes,
                "reads": stats.events - stats.writes,
                "not_printed": not_printed,
                "draws_replayed": stats.draws,
            }
        });
        if printed > 0 {
            writeln!(out, ",")?;
        } else {
            writeln!(out)?;
        }
        serde_json::to_writer(&mut *out, &summary)?;
        writeln!(out, "\n]")?;
    } else {
        write!(
            out,
            "{} events ({} writes, {} reads) over {} draws",
            stats.events,
            stats.writes,
            stats.events - stats.writes,
            stats.draws
        )?;
        if not_printed > 0 {
            write!(out, "; {not_printed} not printed (--limit)")?;
        }
        writeln!(out)?;
    }
    Ok(())
}

fn write_text(out: &mut impl Write, ev: &ResourceEvent) -> io::Result<()> {
    let draw = ev
        .draw
        .map_or_else(|| "        ".to_string(), |d| format!("draw {d:<3}"));
    writeln!(
        out,
        "frame {:<3} cmd {:<8} {draw} {:<14} 0x{:08X}+0x{:X}  {}",
        ev.pos.frame,
        ev.pos.writes,
        ev.access.name(),
        ev.range.start,
        ev.range.len,
        ev.what
    )
}

fn write_json(out: &mut impl Write, ev: &ResourceEvent, first: bool) -> io::Result<()> {
    let v = json!({
        "access": ev.access.name(),
        "write": ev.access.is_write(),
        "frame": ev.pos.frame,
        "command": ev.pos.writes,
        "element": ev.pos.element,
        "draw": ev.draw,
        "addr": ev.range.start,
        "len": ev.range.len,
        "what": ev.what,
    });
    writeln!(out, "{}", if first { "" } else { "," })?;
    serde_json::to_writer(&mut *out, &v).map_err(io::Error::other)
}
