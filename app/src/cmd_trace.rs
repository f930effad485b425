//! `picaview trace info|dump|check TRACE.ctf [--json]`: inspects a CiTrace (`.ctf`) file.
//!
//! * `info`: header, initial-state sections (with what Citra's recorder leaves out), stream
//!   statistics (frames, memory loads and bytes, register writes by target register), every
//!   command-list submission found in the stream (PA, size in bytes as Citra records it, how much
//!   of it the trace's memory loads cover), then a replay listing every frame and every draw
//!   (`--limit N` lists only the first N draws; the counts stay complete).
//! * `dump`: the stream in order; each command-list submission is followed by the decoded list,
//!   whose bytes are reassembled from the memory loads that precede it.
//! * `check`: the linter's findings.
//!
//! Output is written as it is produced (text and JSON alike): `info` replays the stream once
//! without keyframes and prints each draw when it ends, `dump` prints each element and each list
//! write in turn, so memory stays bounded whatever the trace's length. Traces are read lazily
//! ([`CiTrace::open`]): only the header, sections and stream table are held in memory; command
//! lists are read from the file when needed, at most [`MAX_CMDLIST_BYTES`] each.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::Result;
use gpu_core::budget::WorkBudget;
use gpu_core::debug::{
    Diagnostic, DrawDetail, DrawInfo, DrawKind, DrawStats, Observer, RegWriteEvent, Topology,
};
use gpu_core::replay::{Position, Replay};
use pica_cmd::citrace::{
    CiTrace, CiTraceError, Coverage, MmioTarget, Section, SeekSource, StreamEvent, Submission,
    TraceSource, WriteWidth,
};
use pica_cmd::cmdlist::{self, CmdList};
use pica_cmd::regs;
use serde::Serialize;
use serde_json::{Value, json};

use crate::cmd_cmdlist::{self as cmdlist_cli, CountBits};
use crate::report::{self, FileError};

/// Largest command list decoded from a trace: 16 MiB, the most the hardware's size register
/// (21 bits of 8-byte units, \[3DB\]) can describe. Larger (corrupt) sizes are reported, not read.
pub const MAX_CMDLIST_BYTES: u32 = 16 << 20;

/// Diagnostics `trace info` keeps for its report (the rest are counted).
pub const MAX_LISTED_DIAGNOSTICS: usize = 10_000;

/// Diagnostics `trace info` prints in text form (all kept ones are in the JSON).
const TEXT_DIAGNOSTICS: usize = 20;

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
    /// Header, sections, stream statistics, command-list submissions, every frame and draw.
    Info {
        /// CiTrace file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// List at most this many draws (all frames and counts are still reported).
        #[arg(long, value_name = "N")]
        limit: Option<u64>,
        /// Work budgets (`--budget SPEC`).
        #[command(flatten)]
        budget: crate::budget_flag::BudgetArgs,
    },
    /// Lint: what the trace lacks or does wrong (uncovered memory reads, missing shader state,
    /// command lists not 16-byte sized, unknown registers, vertex counts beyond buffers).
    Check {
        /// CiTrace file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Work budgets (`--budget SPEC`).
        #[command(flatten)]
        budget: crate::budget_flag::BudgetArgs,
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
        /// Decode every submission in full, even one whose bytes equal a list already dumped
        /// (by default such a re-submission is printed as a reference to the first one, so the
        /// output does not grow with submissions x list size).
        #[arg(long)]
        repeat_lists: bool,
    },
}

/// Runs `picaview trace`.
pub fn run(args: &TraceArgs) -> Result<()> {
    match &args.command {
        TraceCommand::Info {
            file,
            json,
            limit,
            budget,
        } => info(file, *json, limit.unwrap_or(u64::MAX), budget.budget()),
        TraceCommand::Check { file, json, budget } => check(file, *json, budget.budget()),
        TraceCommand::Dump {
            file,
            json,
            count_bits,
            repeat_lists,
        } => dump(file, *json, *count_bits, *repeat_lists),
    }
}

/// Opens a CiTrace for the CLI. Failures are [`FileError`]s that say what the file is instead:
/// missing, a directory, empty, its first bytes in hex when they are not `CiTr`, or which
/// header field at which offset is out of bounds.
pub fn open_trace(path: &Path) -> Result<CiTrace<SeekSource<File>>, FileError> {
    report::check_input_file(path, "a CiTrace (.ctf)")?;
    CiTrace::open(path).map_err(|e| trace_error(path, e))
}

/// What a file that starts with `magic` probably is, as a hint for the user.
fn kind_hint(magic: &[u8]) -> &'static str {
    match magic {
        b"DVLB" | b"DVOJ" => {
            "; this is a compiled shader: use `picaview disasm` or `picaview shader run`"
        }
        [0x89, b'P', b'N', b'G', ..] => "; this is a PNG image",
        _ => "",
    }
}

fn trace_error(path: &Path, e: CiTraceError) -> FileError {
    const EXPECTED: &str = "expected 43 69 54 72 (\"CiTr\")";
    match e {
        CiTraceError::BadMagic { found } => FileError::at(
            path,
            Some(0),
            format!(
                "not a CiTrace: bad magic {} at offset 0x0, {EXPECTED}{}",
                report::hex_bytes(&found),
                kind_hint(&found)
            ),
        ),
        CiTraceError::TruncatedHeader { len } => {
            let mut head = [0u8; 4];
            let n = File::open(path)
                .and_then(|mut f| io::Read::read(&mut f, &mut head))
                .unwrap_or(0);
            let head = &head[..n];
            if len == 0 {
                FileError::at(
                    path,
                    Some(0),
                    "empty file, expected a CiTrace (.ctf) starting with 43 69 54 72 (\"CiTr\")",
                )
            } else if head == b"CiTr" {
                FileError::at(
                    path,
                    Some(len),
                    format!(
                        "truncated CiTrace: the file ends at offset 0x{len:X}, inside the 0x64-byte header"
                    ),
                )
            } else {
                FileError::at(
                    path,
                    Some(0),
                    format!(
                        "not a CiTrace: bad magic {} at offset 0x0, {EXPECTED} (and the file has only {len} bytes){}",
                        report::hex_bytes(head),
                        kind_hint(head)
                    ),
                )
            }
        }
        e @ CiTraceError::UnsupportedVersion { .. } => {
            FileError::at(path, e.offset(), e.to_string())
        }
        CiTraceError::Io {
            offset,
            len,
            source,
        } => FileError::at(
            path,
            Some(offset),
            format!("cannot read {len} byte(s) at offset 0x{offset:X}: {source}"),
        ),
        other => FileError::at(path, other.offset(), format!("corrupt CiTrace: {other}")),
    }
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
fn list_bytes<S: TraceSource>(
    trace: &mut CiTrace<S>,
    s: &Submission,
) -> Result<Option<ListBytes>, CiTraceError> {
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

/// What `trace info` says about one command-list submission.
struct SubmissionSummary {
    covered: Option<u64>,
    writes: Option<usize>,
    error: Option<String>,
}

fn summarize<S: TraceSource>(
    path: &Path,
    trace: &mut CiTrace<S>,
    s: &Submission,
) -> Result<SubmissionSummary> {
    let lb = list_bytes(trace, s).map_err(|e| trace_error(path, e))?;
    Ok(match lb {
        Some(lb) => {
            let (list, error) = decode(&lb, CountBits::Eight);
            SubmissionSummary {
                covered: Some(lb.coverage.bytes),
                writes: Some(list.writes.len()),
                error: error.or_else(|| coverage_note(&lb, s.size)),
            }
        }
        None => SubmissionSummary {
            covered: None,
            writes: None,
            error: Some(format!(
                "size {} exceeds {MAX_CMDLIST_BYTES} bytes; not read",
                s.size
            )),
        },
    })
}

/// The draw kind as people name it.
fn kind_name(k: DrawKind) -> &'static str {
    match k {
        DrawKind::Arrays => "DRAWARRAYS",
        DrawKind::Elements => "DRAWELEMENTS",
        DrawKind::Immediate => "immediate",
    }
}

/// The topology as people name it.
fn topology_name(t: Topology) -> &'static str {
    match t {
        Topology::List => "triangle list",
        Topology::Strip => "triangle strip",
        Topology::Fan => "triangle fan",
        Topology::Geometry => "geometry-shader primitives",
    }
}

/// Writes `"name": value` at the top level of a pretty JSON object (`first` tracks the comma).
fn json_key(
    out: &mut impl Write,
    first: &mut bool,
    name: &str,
    value: &impl Serialize,
) -> Result<()> {
    write!(out, "{}\n  \"{name}\": ", if *first { "" } else { "," })?;
    *first = false;
    serde_json::to_writer(&mut *out, value)?;
    Ok(())
}

/// The replay pass of `trace info`: an observer that writes each draw as it ends (text or
/// JSON), counts per frame, and keeps the first diagnostics.
struct InfoPass<'w, W: Write> {
    out: &'w mut W,
    json: bool,
    /// Draws still to list (`--limit`).
    limit: u64,
    listed: u64,
    /// Draws listed in the current frame (JSON commas).
    listed_in_frame: u64,
    /// True once the current frame's opening has been written.
    frame_open: bool,
    frame: u32,
    frame_draws: u64,
    frame_vertices: u64,
    frames: u64,
    draws: u64,
    last_addr: Option<u32>,
    open_draw: Option<(DrawInfo, Option<u32>)>,
    diagnostics: Vec<(u32, Diagnostic)>,
    dropped_diagnostics: u64,
    /// The first write error (the pass stops at it).
    error: Option<anyhow::Error>,
}

impl<W: Write> InfoPass<'_, W> {
    fn attempt(&mut self, f: impl FnOnce(&mut Self) -> Result<()>) {
        if self.error.is_none()
            && let Err(e) = f(self)
        {
            self.error = Some(e);
        }
    }

    fn open_frame(&mut self) -> Result<()> {
        if self.frame_open {
            return Ok(());
        }
        self.frame_open = true;
        if self.json {
            let comma = if self.frames == 0 { "" } else { "," };
            write!(
                self.out,
                "{comma}\n    {{\"index\": {}, \"draws\": [",
                self.frame
            )?;
        } else {
            writeln!(self.out, "  frame {}", self.frame)?;
        }
        Ok(())
    }

    fn draw(&mut self, info: &DrawInfo, stats: &DrawStats, addr: Option<u32>) -> Result<()> {
        self.open_frame()?;
        if self.json {
            let comma = if self.listed_in_frame == 0 { "" } else { "," };
            write!(self.out, "{comma}\n      ")?;
            serde_json::to_writer(&mut *self.out, &draw_json(info, stats, addr))?;
            return Ok(());
        }
        let i = info;
        write!(
            self.out,
            "    draw {:<5} {} {}, {} vertices, VS {:016x}@{}",
            i.draw,
            kind_name(i.kind),
            topology_name(i.topology),
            i.count,
            i.vs_program.0,
            i.vs_program.1
        )?;
        if let Some((h, e)) = i.gs_program {
            write!(self.out, ", GS {h:016x}@{e}")?;
        }
        for t in i.textures.iter().flatten() {
            write!(
                self.out,
                ", tex{} {}x{} fmt {} @0x{:08X}",
                t.unit, t.width, t.height, t.format, t.addr
            )?;
        }
        writeln!(self.out, "; {} triangles drawn", stats.triangles_rasterized)?;
        Ok(())
    }

    /// Closes frame `self.frame` (`writes` register writes, `unterminated` if no marker ended it).
    fn close_frame(&mut self, writes: u64, unterminated: bool) -> Result<()> {
        self.open_frame()?;
        if self.json {
            let close = if self.listed_in_frame == 0 {
                ""
            } else {
                "\n    "
            };
            write!(
                self.out,
                "{close}], \"draw_count\": {}, \"vertices\": {}, \"register_writes\": {writes}, \"unterminated\": {unterminated}}}",
                self.frame_draws, self.frame_vertices
            )?;
        } else {
            writeln!(
                self.out,
                "    = {} draws, {} vertices, {writes} register writes{}",
                self.frame_draws,
                self.frame_vertices,
                if unterminated {
                    " (no closing frame marker)"
                } else {
                    ""
                }
            )?;
        }
        self.frames += 1;
        self.frame_open = false;
        self.frame_draws = 0;
        self.frame_vertices = 0;
        self.listed_in_frame = 0;
        Ok(())
    }
}

impl<W: Write> Observer for InfoPass<'_, W> {
    /// The JSON listing carries every counter of each draw (the text one only triangle counts).
    fn wants_costs(&self) -> bool {
        self.json
    }
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.last_addr = ev.source_addr;
    }
    fn draw_begin(&mut self, info: &DrawInfo) {
        self.open_draw = Some((*info, self.last_addr));
    }
    fn draw_end(&mut self, info: &DrawInfo, stats: &DrawStats, _detail: Option<DrawDetail>) {
        let (begin, addr) = self.open_draw.take().unwrap_or((*info, None));
        // The count as the draw ended (immediate-mode draws learn theirs at the end).
        let info = DrawInfo {
            count: info.count.max(begin.count),
            ..begin
        };
        self.draws += 1;
        self.frame_draws += 1;
        self.frame_vertices += u64::from(info.count);
        if self.listed < self.limit {
            self.listed += 1;
            self.attempt(|p| p.draw(&info, stats, addr));
            self.listed_in_frame += 1;
        }
    }
    fn diagnostic(&mut self, diag: &Diagnostic) {
        if self.diagnostics.len() < MAX_LISTED_DIAGNOSTICS {
            self.diagnostics.push((self.frame, diag.clone()));
        } else {
            self.dropped_diagnostics += 1;
        }
    }
    fn stop_requested(&self) -> bool {
        self.error.is_some()
    }
}

/// Replays the whole trace through `pass`, closing frames at frame markers.
fn replay_frames<S: TraceSource, W: Write>(
    replay: &mut Replay<S>,
    pass: &mut InfoPass<'_, W>,
) -> Result<()> {
    let mut frame_start = replay.position();
    while !replay.at_end() {
        let before: Position = replay.position();
        replay.step_element(pass);
        if let Some(e) = pass.error.take() {
            return Err(e);
        }
        let after = replay.position();
        if after.frame > before.frame {
            pass.close_frame(before.writes - frame_start.writes, false)?;
            frame_start = after;
            pass.frame = after.frame;
        }
    }
    let end = replay.position();
    // The stream's tail after the last marker is a frame too if anything happened in it (or
    // if the trace has no marker at all).
    if end.writes > frame_start.writes || pass.frames == 0 || pass.frame_draws > 0 {
        pass.close_frame(end.writes - frame_start.writes, true)?;
    }
    Ok(())
}

fn info(path: &Path, as_json: bool, limit: u64, budget: WorkBudget) -> Result<()> {
    let mut trace = open_trace(path)?;
    let header = *trace.header();
    let stats = trace.stats();
    let submissions = trace.submissions();
    let warnings: Vec<String> = trace.warnings().iter().map(ToString::to_string).collect();
    let file_len = trace.file_len();
    let layout = trace.layout();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());

    if as_json {
        let mut first = true;
        write!(out, "{{")?;
        json_key(&mut out, &mut first, "file", &path.display().to_string())?;
        json_key(&mut out, &mut first, "file_len", &file_len)?;
        json_key(
            &mut out,
            &mut first,
            "header",
            &json!({
                "magic": String::from_utf8_lossy(&header.magic),
                "version": header.version,
                "header_size": header.header_size,
                "stream_offset": header.stream_offset,
                "stream_len": header.stream_len,
            }),
        )?;
        json_key(&mut out, &mut first, "register_write_layout", &layout)?;
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
        json_key(&mut out, &mut first, "sections", &sections)?;
        let writes_by_target: Vec<Value> = stats
            .writes_by_address
            .iter()
            .map(|(&pa, &count)| json!({ "address": pa, "name": mmio_name(pa, 0), "count": count }))
            .collect();
        json_key(
            &mut out,
            &mut first,
            "stream",
            &json!({
                "elements": stats.elements,
                "frames": stats.frame_markers,
                "memory_loads": stats.memory_loads,
                "memory_load_bytes": stats.memory_load_bytes,
                "distinct_blobs": stats.distinct_blobs,
                "distinct_blob_bytes": stats.distinct_blob_bytes,
                "register_writes": stats.register_writes,
                "writes_by_target": writes_by_target,
                "unknown_elements": stats.unknown_elements,
            }),
        )?;
        write!(out, ",\n  \"submissions\": [")?;
        for (k, s) in submissions.iter().enumerate() {
            let sum = summarize(path, &mut trace, s)?;
            write!(out, "{}\n    ", if k == 0 { "" } else { "," })?;
            serde_json::to_writer(
                &mut out,
                &json!({
                    "element": s.element,
                    "frame": s.frame,
                    "physical_address": s.physical_address,
                    "size": s.size,
                    "covered_bytes": sum.covered,
                    "writes": sum.writes,
                    "error": sum.error,
                }),
            )?;
        }
        write!(out, "\n  ]")?;
        json_key(&mut out, &mut first, "warnings", &warnings)?;
        write!(out, ",\n  \"frames\": [")?;
        let mut replay = Replay::new(trace);
        replay.set_work_budget(budget);
        let mut pass = InfoPass::new(&mut out, true, limit);
        replay_frames(&mut replay, &mut pass)?;
        let (draws, listed) = (pass.draws, pass.listed);
        let diagnostics: Vec<Value> = pass
            .diagnostics
            .iter()
            .map(|(frame, d)| json!({ "frame": frame, "draw": d.draw, "kind": d.kind, "detail": d.detail }))
            .collect();
        let dropped = pass.dropped_diagnostics;
        write!(out, "\n  ]")?;
        json_key(&mut out, &mut first, "draws", &draws)?;
        json_key(&mut out, &mut first, "draws_listed", &listed)?;
        json_key(&mut out, &mut first, "diagnostics", &diagnostics)?;
        json_key(&mut out, &mut first, "dropped_diagnostics", &dropped)?;
        writeln!(out, "\n}}")?;
        out.flush()?;
        return Ok(());
    }

    writeln!(
        out,
        "{}: CiTrace version {}, {} bytes, header size 0x{:X}, register-write layout {}",
        path.display(),
        header.version,
        file_len,
        header.header_size,
        serde_json::to_value(layout)?.as_str().unwrap_or("?")
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
    writeln!(out, "command-list submissions: {}", submissions.len())?;
    for (i, s) in submissions.iter().enumerate() {
        let sum = summarize(path, &mut trace, s)?;
        write!(
            out,
            "  #{i:<4} element {:<7} frame {:<5} PA 0x{:08X} size {:>7} bytes",
            s.element, s.frame, s.physical_address, s.size
        )?;
        if let Some(c) = sum.covered {
            write!(out, ", {c} bytes in memory loads")?;
        }
        if let Some(n) = sum.writes {
            write!(out, ", {n} writes")?;
        }
        if let Some(e) = sum.error {
            write!(out, " [{e}]")?;
        }
        writeln!(out)?;
    }
    for w in &warnings {
        writeln!(out, "warning: {w}")?;
    }
    writeln!(out, "frames and draws:")?;
    let mut replay = Replay::new(trace);
    replay.set_work_budget(budget);
    let mut pass = InfoPass::new(&mut out, false, limit);
    replay_frames(&mut replay, &mut pass)?;
    let (frames, draws, listed) = (pass.frames, pass.draws, pass.listed);
    let diagnostics = std::mem::take(&mut pass.diagnostics);
    let dropped = pass.dropped_diagnostics;
    if listed < draws {
        writeln!(
            out,
            "  ... {} more draws not listed (--limit {listed})",
            draws - listed
        )?;
    }
    writeln!(
        out,
        "replay: {frames} frames, {draws} draws, {} diagnostics",
        diagnostics.len() as u64 + dropped
    )?;
    for (frame, d) in diagnostics.iter().take(TEXT_DIAGNOSTICS) {
        writeln!(out, "  diagnostic (frame {frame}): {}", d.detail)?;
    }
    let unlisted = diagnostics.len().saturating_sub(TEXT_DIAGNOSTICS) as u64 + dropped;
    if unlisted > 0 {
        writeln!(out, "  ... {unlisted} more diagnostics (see --json)")?;
    }
    out.flush()?;
    Ok(())
}

impl<'w, W: Write> InfoPass<'w, W> {
    fn new(out: &'w mut W, json: bool, limit: u64) -> Self {
        Self {
            out,
            json,
            limit,
            listed: 0,
            listed_in_frame: 0,
            frame_open: false,
            frame: 0,
            frame_draws: 0,
            frame_vertices: 0,
            frames: 0,
            draws: 0,
            last_addr: None,
            open_draw: None,
            diagnostics: Vec::new(),
            dropped_diagnostics: 0,
            error: None,
        }
    }
}

fn draw_json(i: &DrawInfo, stats: &DrawStats, command_address: Option<u32>) -> Value {
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
        "stats": stats,
        "command_address": command_address,
    })
}

fn check(path: &Path, as_json: bool, budget: WorkBudget) -> Result<()> {
    let mut replay = Replay::new(open_trace(path)?);
    replay.set_work_budget(budget);
    let report = gpu_core::lint::check(&mut replay);
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
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
            let kind = serde_json::to_value(i.kind)?;
            writeln!(
                out,
                "frame {}{draw}: {}: {}",
                i.frame,
                kind.as_str().unwrap_or("issue"),
                i.detail
            )?;
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

/// Total bytes of distinct command lists `trace dump` remembers to recognise re-submissions
/// (beyond it, new lists are dumped in full and not remembered).
pub const MAX_REMEMBERED_LIST_BYTES: usize = 64 << 20;

/// The command lists `trace dump` has decoded, to print an identical re-submission as a reference
/// (issue 18: a trace submitting one 10,000-draw list 420 times dumped 11 GB of JSON).
#[derive(Default)]
struct SeenLists {
    /// (hash of size, coverage and bytes) -> (element index, the bytes) of the first dump.
    by_hash: std::collections::HashMap<u64, Vec<(usize, ListBytes)>>,
    bytes: usize,
}

impl SeenLists {
    fn key(lb: &ListBytes) -> u64 {
        use std::hash::{Hash, Hasher};
        // Fixed keys: the same input always gives the same output.
        let mut h = std::hash::DefaultHasher::new();
        (lb.coverage.bytes, lb.coverage.prefix, &lb.bytes).hash(&mut h);
        h.finish()
    }

    /// The element whose list had exactly these bytes (and coverage), if one was dumped;
    /// otherwise remembers this one as dumped at `element` (within the memory bound).
    fn seen_or_insert(&mut self, element: usize, lb: &ListBytes) -> Option<usize> {
        let key = Self::key(lb);
        let same = |x: &ListBytes| {
            x.bytes == lb.bytes
                && x.coverage.bytes == lb.coverage.bytes
                && x.coverage.prefix == lb.coverage.prefix
        };
        if let Some(e) = self
            .by_hash
            .get(&key)
            .and_then(|v| v.iter().find(|(_, x)| same(x)))
        {
            return Some(e.0);
        }
        if self.bytes + lb.bytes.len() <= MAX_REMEMBERED_LIST_BYTES {
            self.bytes += lb.bytes.len();
            self.by_hash.entry(key).or_default().push((
                element,
                ListBytes {
                    bytes: lb.bytes.clone(),
                    coverage: lb.coverage,
                },
            ));
        }
        None
    }
}

fn dump(path: &Path, as_json: bool, bits: CountBits, repeat_lists: bool) -> Result<()> {
    let mut seen = SeenLists::default();
    let mut trace = open_trace(path)?;
    let submissions = trace.submissions();
    let mut next_sub = submissions.iter().peekable();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut frame = 0u64;
    let mut first = true;
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
            Some(s) => Some((
                s,
                list_bytes(&mut trace, s).map_err(|e| trace_error(path, e))?,
            )),
            None => None,
        };
        // An earlier element whose list had the same bytes (printed by reference).
        let same_as = match &list {
            Some((_, Some(lb))) if !repeat_lists => seen.seen_or_insert(i, lb),
            _ => None,
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
            }
            writeln!(out, "{}", if first { "" } else { "," })?;
            first = false;
            match (&list, same_as) {
                (None, _) => serde_json::to_writer(&mut out, &v)?,
                (Some((s, _)), Some(k)) => {
                    let head = serde_json::to_string(&v)?;
                    let head = head.strip_suffix('}').unwrap_or(&head);
                    write!(out, "{head},\"command_list\":")?;
                    serde_json::to_writer(
                        &mut out,
                        &json!({
                            "physical_address": s.physical_address,
                            "size": s.size,
                            "same_as_element": k,
                        }),
                    )?;
                    write!(out, "}}")?;
                }
                (Some((s, lb)), None) => {
                    // The element's own keys, then the list streamed write by write.
                    let head = serde_json::to_string(&v)?;
                    let head = head.strip_suffix('}').unwrap_or(&head);
                    write!(out, "{head},\"command_list\":")?;
                    write_list_json(&mut out, s, lb.as_ref(), bits)?;
                    write!(out, "}}")?;
                }
            }
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
            match (&list, same_as) {
                (Some((s, _)), Some(k)) => writeln!(
                    out,
                    "            | command list PA 0x{:08X}, {} bytes: the same bytes as the list of element #{k} (not repeated; --repeat-lists prints it)",
                    s.physical_address, s.size
                )?,
                (Some((s, lb)), None) => write_list_text(&mut out, s, lb.as_ref(), bits)?,
                (None, _) => {}
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

/// Writes the JSON object of a submitted list, one write at a time (a 16 MiB list has millions
/// of writes; their JSON is never held whole).
fn write_list_json(
    out: &mut impl Write,
    s: &Submission,
    lb: Option<&ListBytes>,
    bits: CountBits,
) -> Result<()> {
    let Some(lb) = lb else {
        serde_json::to_writer(
            &mut *out,
            &json!({
                "physical_address": s.physical_address,
                "size": s.size,
                "error": format!("size exceeds {MAX_CMDLIST_BYTES} bytes; not read"),
            }),
        )?;
        return Ok(());
    };
    let (list, error) = decode(lb, bits);
    let diagnostics: Vec<String> = list.diagnostics.iter().map(ToString::to_string).collect();
    let head = serde_json::to_string(&json!({
        "physical_address": s.physical_address,
        "size": s.size,
        "covered_bytes": lb.coverage.bytes,
        "decoded_bytes": lb.coverage.prefix,
        "diagnostics": diagnostics,
        "error": error,
    }))?;
    let head = head.strip_suffix('}').unwrap_or(&head);
    write!(out, "{head},\"writes\":[")?;
    for (k, w) in list.writes.iter().enumerate() {
        if k > 0 {
            write!(out, ",")?;
        }
        serde_json::to_writer(&mut *out, &cmdlist_cli::write_json(w))?;
    }
    write!(out, "]}}")?;
    Ok(())
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
        let mut json = Vec::new();
        write_list_json(&mut json, &subs[0], Some(&lb), CountBits::Eight).unwrap();
        let v: Value = serde_json::from_slice(&json).unwrap();
        assert_eq!(v["writes"][0]["id"], 0x041);
        assert_eq!(v["writes"].as_array().unwrap().len(), 2);
        assert_eq!(v["size"], bytes.len());
    }
}
