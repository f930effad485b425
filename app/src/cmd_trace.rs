//! `picaview trace info|dump TRACE.ctf [--json]`: inspects a CiTrace (`.ctf`) file.
//!
//! * `info`: header, initial-state sections (with what Citra's recorder leaves out), stream
//!   statistics (frames, memory loads and bytes, register writes by target register) and every
//!   command-list submission found in the stream (PA, size in bytes as Citra records it, how much
//!   of it the trace's memory loads cover).
//! * `dump`: the stream in order; each command-list submission is followed by the decoded list,
//!   whose bytes are reassembled from the memory loads that precede it.
//!
//! Traces are read lazily ([`CiTrace::open`]): only the header, sections and stream table are held
//! in memory; command lists are read from the file when needed, at most
//! [`MAX_CMDLIST_BYTES`] each.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use pica_cmd::citrace::{
    CiTrace, Coverage, MmioTarget, Section, SeekSource, StreamEvent, Submission, TraceSource,
    WriteWidth,
};
use pica_cmd::cmdlist::{self, CmdList};
use pica_cmd::regs;
use serde_json::{Value, json};

use crate::cmd_cmdlist::{self as cmdlist_cli, CountBits};

/// Largest command list decoded from a trace: 16 MiB, the most the hardware's size register
/// (21 bits of 8-byte units, \[3DB\]) can describe. Larger (corrupt) sizes are reported, not read.
pub const MAX_CMDLIST_BYTES: u32 = 16 << 20;

/// Arguments of `picaview trace`.
#[derive(clap::Args, Debug)]
pub struct TraceArgs {
    /// What to do with the trace.
    #[command(subcommand)]
    pub command: TraceCommand,
}

/// `picaview trace` subcommands.
#[derive(clap::Subcommand, Debug)]
pub enum TraceCommand {
    /// Header, sections, stream statistics and command-list submissions.
    Info {
        /// CiTrace file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Lint: what the trace lacks or does wrong (uncovered memory reads, missing shader state,
    /// command lists not 16-byte sized, unknown registers, vertex counts beyond buffers).
    Check {
        /// CiTrace file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// The stream in order, with command lists decoded.
    Dump {
        /// CiTrace file.
        file: PathBuf,
        /// Print a JSON array with one object per stream element.
        #[arg(long)]
        json: bool,
        /// Width of the command headers' extra-parameter count (8 = hardware docs, 11 = Citra).
        #[arg(long, value_enum, default_value = "8")]
        count_bits: CountBits,
    },
}

/// Runs `picaview trace`.
pub fn run(args: &TraceArgs) -> Result<()> {
    match &args.command {
        TraceCommand::Info { file, json } => info(file, *json),
        TraceCommand::Check { file, json } => check(file, *json),
        TraceCommand::Dump {
            file,
            json,
            count_bits,
        } => dump(file, *json, *count_bits),
    }
}

fn open(path: &Path) -> Result<CiTrace<SeekSource<std::fs::File>>> {
    CiTrace::open(path).with_context(|| format!("cannot read CiTrace {}", path.display()))
}

/// Name of the MMIO register at `pa` from the catalogue.
fn mmio_name(pa: u32, value: u32) -> String {
    regs::external::describe(pa, value).name
}

/// A command list reassembled from the trace's memory loads.
struct ListBytes {
    bytes: Vec<u8>,
    coverage: Coverage,
}

/// Reads the bytes of a submission from the memory loads before it (`None` if its size is
/// larger than [`MAX_CMDLIST_BYTES`]).
fn list_bytes<S: TraceSource>(trace: &mut CiTrace<S>, s: &Submission) -> Result<Option<ListBytes>> {
    if s.size > MAX_CMDLIST_BYTES {
        return Ok(None);
    }
    let mut bytes = vec![0u8; s.size as usize];
    let coverage = trace.read_memory(s.element, s.physical_address, &mut bytes)?;
    Ok(Some(ListBytes { bytes, coverage }))
}

/// Parses the covered prefix of a list. Returns the list (possibly partial) and the error text.
fn decode(lb: &ListBytes, bits: CountBits) -> (CmdList, Option<String>) {
    let covered = lb.bytes.get(..lb.coverage.prefix as usize).unwrap_or(&[]);
    match cmdlist::parse_with(covered, bits.options()) {
        Ok(list) => (list, None),
        Err(e) => {
            let text = e.to_string();
            ((*e.partial).clone(), Some(text))
        }
    }
}

/// Says what is missing when the memory loads do not cover a whole list (`None` if they do).
fn coverage_note(lb: &ListBytes, size: u32) -> Option<String> {
    if lb.coverage.prefix >= u64::from(size) {
        None
    } else if lb.coverage.prefix == 0 {
        Some("list not recorded: no memory load before the trigger covers its start".to_string())
    } else {
        Some(format!(
            "only the first {} of {size} bytes are covered by memory loads; decoding those",
            lb.coverage.prefix
        ))
    }
}

fn info(path: &Path, as_json: bool) -> Result<()> {
    let mut trace = open(path)?;
    let header = *trace.header();
    let stats = trace.stats();
    let submissions = trace.submissions();
    let mut subs = Vec::with_capacity(submissions.len());
    for s in &submissions {
        let lb = list_bytes(&mut trace, s)?;
        let (covered, writes, error) = match &lb {
            Some(lb) => {
                let (list, error) = decode(lb, CountBits::Eight);
                let error = error.or_else(|| coverage_note(lb, s.size));
                (Some(lb.coverage.bytes), Some(list.writes.len()), error)
            }
            None => (
                None,
                None,
                Some(format!(
                    "size {} exceeds {MAX_CMDLIST_BYTES} bytes; not read",
                    s.size
                )),
            ),
        };
        subs.push((s, covered, writes, error));
    }

    // Replay once for frames and draws.
    let mut replay = gpu_core::replay::Replay::new(open(path)?);
    let index = replay.build_index();

    if as_json {
        let frames: Vec<Value> = index
            .frames
            .iter()
            .map(|f| {
                let draws: Vec<Value> = index
                    .draws
                    .iter()
                    .filter(|d| d.frame == f.index)
                    .map(draw_json)
                    .collect();
                json!({
                    "index": f.index,
                    "draws": draws,
                    "register_writes": f.end.writes - f.start.writes,
                    "unterminated": f.unterminated,
                })
            })
            .collect();
        let diagnostics: Vec<Value> = index
            .diagnostics
            .iter()
            .map(|(p, d)| json!({ "frame": p.frame, "draw": d.draw, "kind": d.kind, "detail": d.detail }))
            .collect();
        let sections: Vec<Value> = Section::ALL
            .iter()
            .map(|&sec| {
                let r = header.section(sec);
                json!({
                    "name": sec.name(),
                    "offset": r.offset,
                    "words": r.words,
                    "note": sec.recorder_note(),
                })
            })
            .collect();
        let writes_by_target: Vec<Value> = stats
            .writes_by_address
            .iter()
            .map(|(&pa, &count)| json!({ "address": pa, "name": mmio_name(pa, 0), "count": count }))
            .collect();
        let submissions: Vec<Value> = subs
            .iter()
            .map(|(s, covered, writes, error)| {
                json!({
                    "element": s.element,
                    "frame": s.frame,
                    "physical_address": s.physical_address,
                    "size": s.size,
                    "covered_bytes": covered,
                    "writes": writes,
                    "error": error,
                })
            })
            .collect();
        let warnings: Vec<String> = trace.warnings().iter().map(ToString::to_string).collect();
        let v = json!({
            "file": path.display().to_string(),
            "file_len": trace.file_len(),
            "header": {
                "magic": String::from_utf8_lossy(&header.magic),
                "version": header.version,
                "header_size": header.header_size,
                "stream_offset": header.stream_offset,
                "stream_len": header.stream_len,
            },
            "register_write_layout": trace.layout(),
            "sections": sections,
            "stream": {
                "elements": stats.elements,
                "frames": stats.frame_markers,
                "memory_loads": stats.memory_loads,
                "memory_load_bytes": stats.memory_load_bytes,
                "distinct_blobs": stats.distinct_blobs,
                "distinct_blob_bytes": stats.distinct_blob_bytes,
                "register_writes": stats.register_writes,
                "writes_by_target": writes_by_target,
                "unknown_elements": stats.unknown_elements,
            },
            "submissions": submissions,
            "warnings": warnings,
            "frames": frames,
            "draws": index.draws.len(),
            "diagnostics": diagnostics,
        });
        let stdout = std::io::stdout();
        let mut out = stdout.lock();
        serde_json::to_writer_pretty(&mut out, &v)?;
        writeln!(out)?;
        return Ok(());
    }

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    writeln!(
        out,
        "{}: CiTrace version {}, {} bytes, header size 0x{:X}, register-write layout {:?}",
        path.display(),
        header.version,
        trace.file_len(),
        header.header_size,
        trace.layout()
    )?;
    writeln!(out, "sections:")?;
    for sec in Section::ALL {
        let r = header.section(sec);
        let note = sec
            .recorder_note()
            .map(|n| format!("  ({n})"))
            .unwrap_or_default();
        writeln!(
            out,
            "  {:<20} offset 0x{:08X}  {:>6} words{note}",
            sec.name(),
            r.offset,
            r.words
        )?;
    }
    writeln!(
        out,
        "stream: offset 0x{:08X}, {} elements",
        header.stream_offset, stats.elements
    )?;
    writeln!(out, "  frames (frame markers): {}", stats.frame_markers)?;
    writeln!(
        out,
        "  memory loads: {} ({} bytes; {} distinct blobs, {} bytes stored)",
        stats.memory_loads,
        stats.memory_load_bytes,
        stats.distinct_blobs,
        stats.distinct_blob_bytes
    )?;
    writeln!(out, "  register writes: {}", stats.register_writes)?;
    for (&pa, &count) in &stats.writes_by_address {
        writeln!(out, "    0x{pa:08X} {:<40} {count}", mmio_name(pa, 0))?;
    }
    if stats.unknown_elements > 0 {
        writeln!(out, "  unknown elements: {}", stats.unknown_elements)?;
    }
    writeln!(out, "command-list submissions: {}", subs.len())?;
    for (i, (s, covered, writes, error)) in subs.iter().enumerate() {
        write!(
            out,
            "  #{i:<4} element {:<7} frame {:<5} PA 0x{:08X} size {:>7} bytes",
            s.element, s.frame, s.physical_address, s.size
        )?;
        if let Some(c) = covered {
            write!(out, ", {c} bytes in memory loads")?;
        }
        if let Some(n) = writes {
            write!(out, ", {n} writes")?;
        }
        if let Some(e) = error {
            write!(out, " [{e}]")?;
        }
        writeln!(out)?;
    }
    for w in trace.warnings() {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(
        out,
        "replay: {} frames, {} draws, {} diagnostics",
        index.frames.len(),
        index.draws.len(),
        index.diagnostics.len()
    )?;
    for f in &index.frames {
        let draws: Vec<_> = index.draws.iter().filter(|d| d.frame == f.index).collect();
        let verts: u64 = draws.iter().map(|d| u64::from(d.info.count)).sum();
        writeln!(
            out,
            "  frame {:<4} {:>5} draws, {:>7} vertices, {:>7} register writes{}",
            f.index,
            draws.len(),
            verts,
            f.end.writes - f.start.writes,
            if f.unterminated {
                " (no closing frame marker)"
            } else {
                ""
            }
        )?;
        for d in draws.iter().take(64) {
            let i = &d.info;
            write!(
                out,
                "    draw {:<5} {:?} {:?} {} vertices, VS {:016x}@{}",
                i.draw, i.kind, i.topology, i.count, i.vs_program.0, i.vs_program.1
            )?;
            if let Some((h, e)) = i.gs_program {
                write!(out, ", GS {h:016x}@{e}")?;
            }
            for t in i.textures.iter().flatten() {
                write!(
                    out,
                    ", tex{} {}x{} fmt {} @0x{:08X}",
                    t.unit, t.width, t.height, t.format, t.addr
                )?;
            }
            writeln!(out, "; {} triangles drawn", d.stats.triangles_rasterized)?;
        }
        if draws.len() > 64 {
            writeln!(out, "    ... {} more draws (see --json)", draws.len() - 64)?;
        }
    }
    for (p, d) in index.diagnostics.iter().take(20) {
        writeln!(out, "  diagnostic (frame {}): {}", p.frame, d.detail)?;
    }
    out.flush()?;
    Ok(())
}

fn draw_json(d: &gpu_core::replay::DrawRecord) -> Value {
    let i = &d.info;
    let textures: Vec<Value> = i
        .textures
        .iter()
        .flatten()
        .map(|t| json!({ "unit": t.unit, "address": t.addr, "width": t.width, "height": t.height, "format": t.format }))
        .collect();
    json!({
        "draw": i.draw,
        "kind": i.kind,
        "topology": i.topology,
        "vertex_count": i.count,
        "vertex_shader": { "hash": format!("{:016x}", i.vs_program.0), "entry": i.vs_program.1 },
        "geometry_shader": i.gs_program.map(|(h, e)| json!({ "hash": format!("{h:016x}"), "entry": e })),
        "textures": textures,
        "stats": d.stats,
        "command_address": d.trigger_addr,
    })
}

fn check(path: &Path, as_json: bool) -> Result<()> {
    let mut replay = gpu_core::replay::Replay::new(open(path)?);
    let report = gpu_core::lint::check(&mut replay);
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if as_json {
        serde_json::to_writer_pretty(&mut out, &report)?;
        writeln!(out)?;
    } else {
        writeln!(
            out,
            "{}: {} frames, {} draws checked, {} issues",
            path.display(),
            report.frames,
            report.draws,
            report.counts.values().sum::<u64>()
        )?;
        for (kind, n) in &report.counts {
            writeln!(out, "  {kind}: {n}")?;
        }
        for i in &report.issues {
            let draw = i.draw.map(|d| format!(" draw {d}")).unwrap_or_default();
            writeln!(out, "frame {}{draw}: {:?}: {}", i.frame, i.kind, i.detail)?;
        }
        if report.dropped > 0 {
            writeln!(out, "... {} more issues not listed", report.dropped)?;
        }
    }
    out.flush()?;
    Ok(())
}

fn width_text(w: WriteWidth) -> String {
    match w.bytes() {
        Some(b) => format!("{}-bit", b * 8),
        None => format!("size code 0x{:X}", w.code()),
    }
}

fn dump(path: &Path, as_json: bool, bits: CountBits) -> Result<()> {
    let mut trace = open(path)?;
    let submissions = trace.submissions();
    let mut next_sub = submissions.iter().peekable();
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut frame = 0u64;
    if as_json {
        write!(out, "[")?;
    } else {
        writeln!(out, "=== frame 0 ===")?;
    }
    for i in 0..trace.elements().len() {
        let Some(ev) = trace.event(i) else { continue };
        let offset = trace.element_offset(i);
        let submission = match next_sub.peek() {
            Some(s) if s.element == i => next_sub.next().copied(),
            _ => None,
        };
        let list = match &submission {
            Some(s) => Some((s, list_bytes(&mut trace, s)?)),
            None => None,
        };
        if as_json {
            let mut v = json!({ "index": i, "offset": offset, "frame": frame });
            let event = serde_json::to_value(ev)?;
            if let (Value::Object(map), Value::Object(ev_map)) = (&mut v, event) {
                map.extend(ev_map);
                if let StreamEvent::RegisterWrite(w) = ev {
                    let d = regs::external::describe(w.physical_address, w.value as u32);
                    map.insert("name".into(), Value::String(d.name.clone()));
                    map.insert("fields".into(), serde_json::to_value(&d.fields)?);
                }
                if let Some((s, lb)) = &list {
                    map.insert("command_list".into(), list_json(s, lb.as_ref(), bits));
                }
            }
            if i > 0 {
                write!(out, ",")?;
            }
            writeln!(out)?;
            serde_json::to_writer(&mut out, &v)?;
        } else {
            write!(out, "#{i:<7} @0x{offset:08X}  ")?;
            match ev {
                StreamEvent::FrameMarker => writeln!(out, "FRAME MARKER (end of frame {frame})")?,
                StreamEvent::MemoryLoad(m) => writeln!(
                    out,
                    "LOAD  {} bytes -> PA 0x{:08X} (blob at file offset 0x{:08X})",
                    m.size, m.physical_address, m.file_offset
                )?,
                StreamEvent::RegisterWrite(w) => {
                    let target = match MmioTarget::of(w.physical_address) {
                        MmioTarget::Gpu { .. } => "GPU",
                        MmioTarget::Lcd { .. } => "LCD",
                        MmioTarget::Other => "???",
                    };
                    let d = regs::external::describe(w.physical_address, w.value as u32);
                    writeln!(
                        out,
                        "WRITE {target} {} [{}]",
                        d.one_line(),
                        width_text(w.width)
                    )?;
                    if w.width == WriteWidth::Bits64 {
                        writeln!(out, "{:22}(64-bit value 0x{:016X})", "", w.value)?;
                    }
                }
                StreamEvent::Unknown { kind } => writeln!(out, "UNKNOWN element kind 0x{kind:X}")?,
            }
            if let Some((s, lb)) = &list {
                write_list_text(&mut out, s, lb.as_ref(), bits)?;
            }
        }
        if ev == StreamEvent::FrameMarker {
            frame += 1;
            if !as_json {
                writeln!(out, "=== frame {frame} ===")?;
            }
        }
    }
    if as_json {
        writeln!(out, "\n]")?;
    }
    out.flush()?;
    Ok(())
}

fn list_json(s: &Submission, lb: Option<&ListBytes>, bits: CountBits) -> Value {
    let Some(lb) = lb else {
        return json!({
            "physical_address": s.physical_address,
            "size": s.size,
            "error": format!("size exceeds {MAX_CMDLIST_BYTES} bytes; not read"),
        });
    };
    let (list, error) = decode(lb, bits);
    let writes: Vec<Value> = list.writes.iter().map(cmdlist_cli::write_json).collect();
    let diagnostics: Vec<String> = list.diagnostics.iter().map(ToString::to_string).collect();
    json!({
        "physical_address": s.physical_address,
        "size": s.size,
        "covered_bytes": lb.coverage.bytes,
        "decoded_bytes": lb.coverage.prefix,
        "writes": writes,
        "diagnostics": diagnostics,
        "error": error,
    })
}

fn write_list_text(
    out: &mut impl Write,
    s: &Submission,
    lb: Option<&ListBytes>,
    bits: CountBits,
) -> Result<()> {
    const INDENT: &str = "            | ";
    let Some(lb) = lb else {
        writeln!(
            out,
            "{INDENT}command list PA 0x{:08X}: size {} exceeds {MAX_CMDLIST_BYTES} bytes, not read",
            s.physical_address, s.size
        )?;
        return Ok(());
    };
    writeln!(
        out,
        "{INDENT}command list PA 0x{:08X}, {} bytes ({} covered by memory loads)",
        s.physical_address, s.size, lb.coverage.bytes
    )?;
    if let Some(note) = coverage_note(lb, s.size) {
        writeln!(out, "{INDENT}{note}")?;
    }
    let (list, error) = decode(lb, bits);
    cmdlist_cli::write_list_text(out, &list, INDENT)?;
    for d in &list.diagnostics {
        writeln!(out, "{INDENT}warning: {d}")?;
    }
    if let Some(e) = error {
        writeln!(out, "{INDENT}error: {e}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pica_cmd::citrace::{CiTraceBuilder, InitialState};
    use pica_cmd::cmdlist::CmdListBuilder;

    #[test]
    fn submissions_decode_from_memory_loads() {
        let mut list = CmdListBuilder::new();
        list.write(0x041, 0x3880_0000).finalize();
        let bytes = list.to_bytes();
        let mut b = CiTraceBuilder::new(InitialState::citra_sized());
        b.submit_command_list(0x2000_0000, &bytes).unwrap();
        let mut t = CiTrace::from_bytes(b.build().unwrap()).unwrap();
        let subs = t.submissions();
        assert_eq!(subs.len(), 1);
        let lb = list_bytes(&mut t, &subs[0]).unwrap().unwrap();
        assert_eq!(lb.bytes, bytes);
        let (decoded, error) = decode(&lb, CountBits::Eight);
        assert!(error.is_none());
        assert_eq!(decoded.writes.len(), 2);
        let v = list_json(&subs[0], Some(&lb), CountBits::Eight);
        assert_eq!(v["writes"][0]["id"], 0x041);
    }
}
