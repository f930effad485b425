//! Reducing a trace to a small one that still shows a behaviour (issue 16, "Trim and reduce").
//!
//! Input: trace bytes, a check (a closure: "does this candidate still show it?", e.g. the same
//! value of one pixel, see [`pixel_at_end`]) and a budget. Output: the smallest trace found
//! ([`reduce`]) and a [`ReduceReport`].
//!
//! Delta debugging (ddmin: remove chunks, halving the chunk size when no chunk can go) in four
//! phases, each on the result of the previous one:
//!
//! 1. **frames**: whole frames (every stream element between two markers, the marker included)
//!    before the target frame; everything after the target frame's marker is dropped first;
//! 2. **draws**: the command of each draw's trigger write is turned into a no-op in the memory
//!    load that brought it (register 0x000 with byte mask 0: nothing is stored and no side
//!    effect runs);
//! 3. **register writes**: the other executed commands, the same way;
//! 4. **stream elements**: memory loads and MMIO register writes (whole command-list
//!    submissions go with their trigger write).
//!
//! A command can only be neutralised when its first parameter is the write that ran (the
//! header follows it) and the memory load that last covered it is known; others are kept.
//! The candidate is always replayed to its end, so the check looks at the state after the
//! target frame. The budget (steps = candidates checked, and an optional deadline) stops the
//! search early with the best trace found so far. The deadline bounds the whole call, not only
//! the search: a candidate is not started when one more check (timed on the first, which
//! always runs) plus the final measurement (timed on the first measurement) would end past it;
//! once the budget is used up, the later phases' set-up replays and the packing check are
//! skipped, and the final measurement is skipped when nothing was removed.
//!
//! Finally the result is **packed** ([`pack`]): neutralised commands are removed from the
//! command lists that can be rewritten safely (sizes of the loads and of the submissions
//! adjusted), so the file really shrinks. The check is run once more on the packed trace; if it
//! fails, the unpacked result is kept and [`ReduceReport::pack_note`] says why.

mod pack;

pub use pack::{PackReport, pack};

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use pica_cmd::citrace::{
    CiTrace, CiTraceBuilder, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER, StreamEvent,
    load_target,
};
use pica_cmd::cmdlist::{CmdHeader, ExtraParamWidth};

use super::{Replay, Target, screen_image};
use crate::debug::{DrawInfo, Observer, RegSpace, RegWriteEvent};
use crate::engines::lcd::Screen;
use crate::pixel::framebuffer::FramebufferConfig;

/// Errors of [`reduce`].
#[derive(Debug, thiserror::Error)]
pub enum ReduceError {
    /// The input does not show the behaviour to begin with.
    #[error("the input trace does not pass the check, so there is nothing to preserve")]
    InputFails,
    /// The target frame is not in the trace.
    #[error("the trace has {frames} frame marker(s); frame {frame} does not exist")]
    NoFrame {
        /// Asked for.
        frame: u32,
        /// Markers present.
        frames: u32,
    },
    /// Building a candidate failed.
    #[error(transparent)]
    Build(#[from] pica_cmd::citrace::BuildError),
    /// Reading a trace failed.
    #[error(transparent)]
    Trace(#[from] pica_cmd::citrace::CiTraceError),
}

/// Limits of the search.
#[derive(Clone, Copy, Debug)]
pub struct ReduceBudget {
    /// Candidates checked at most.
    pub max_steps: u64,
    /// Stop when this moment has passed.
    pub deadline: Option<Instant>,
}

/// Size of a trace, for before/after reports.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceSize {
    /// Bytes of the file.
    pub bytes: usize,
    /// Stream elements.
    pub elements: usize,
    /// Frame markers.
    pub frames: u32,
    /// Draws executed.
    pub draws: u64,
    /// Register writes executed.
    pub writes: u64,
    /// Commands in the command lists submitted from the stream (each submission counted; jumps
    /// into other buffers not followed).
    pub commands: u64,
    /// Bytes of those command lists.
    pub list_bytes: u64,
}

/// What [`reduce`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReduceReport {
    /// Size of the input (cut after the target frame: see `cut`).
    pub before: TraceSize,
    /// Size of the result.
    pub after: TraceSize,
    /// Candidates checked.
    pub steps: u64,
    /// True when the budget ended the search.
    pub budget_exhausted: bool,
    /// Units removed per phase: (phase name, removed, of).
    pub phases: Vec<(&'static str, usize, usize)>,
    /// What packing the command lists did (also when its result was not kept).
    pub pack: PackReport,
    /// Why the packed trace was not kept (`None`: it was, or there was nothing to pack).
    pub pack_note: Option<String>,
}

/// Measures a trace by replaying it.
pub fn measure(bytes: &[u8]) -> Result<TraceSize, ReduceError> {
    let trace = CiTrace::from_bytes(bytes.to_vec())?;
    let elements = trace.elements().len();
    let frames = trace.stats().frame_markers as u32;
    let mut r = Replay::new(trace);
    let (mut commands, mut list_bytes) = (0u64, 0u64);
    while !r.at_end() {
        let i = r.position().element;
        if let Some(StreamEvent::RegisterWrite(w)) = r.trace().event(i)
            && w.physical_address == PA_CMDLIST_TRIGGER
            && w.value & 1 != 0
        {
            let gpu = r.gpu();
            let size = gpu.external_reg(PA_CMDLIST_SIZE).unwrap_or(0);
            let addr = gpu
                .external_reg(PA_CMDLIST_ADDR)
                .unwrap_or(0)
                .wrapping_mul(8);
            if let Ok(list) = r.mem().read_vec(addr, size as usize) {
                commands += pack::count_commands(&list);
                list_bytes += u64::from(size);
            }
        }
        r.step_element(&mut ());
    }
    Ok(TraceSize {
        bytes: bytes.len(),
        elements,
        frames,
        draws: r.position().draws,
        writes: r.position().writes,
        commands,
        list_bytes,
    })
}

/// The image a pixel check reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelSource {
    /// The configured PICA colour buffer (upright, as `render --target color` shows it).
    Color,
    /// The top screen.
    Top,
    /// The bottom screen.
    Bottom,
}

/// Replays trace bytes to their end and reads one pixel (`None` when the trace does not parse
/// or the pixel is outside the image).
pub fn pixel_at_end(bytes: &[u8], source: PixelSource, x: u32, y: u32) -> Option<[u8; 4]> {
    let trace = CiTrace::from_bytes(bytes.to_vec()).ok()?;
    let mut r = Replay::new(trace);
    r.run_until(Target::End, &mut ());
    match source {
        PixelSource::Color => {
            let fb = FramebufferConfig::from_regs(&r.gpu.regs);
            let img = fb.read_color_image(&r.mem).ok()?;
            if x >= fb.width || y >= fb.height {
                return None;
            }
            img.get((y * fb.width + x) as usize).copied()
        }
        PixelSource::Top | PixelSource::Bottom => {
            let s = if source == PixelSource::Top {
                Screen::Top
            } else {
                Screen::Bottom
            };
            screen_image(&r.gpu, &r.mem, s).ok()?.get(x, y)
        }
    }
}

/// What is removed from a trace.
#[derive(Clone, Debug, Default)]
struct Plan {
    drop: BTreeSet<usize>,
    /// Memory-load element → blob offsets of command headers' parameters to neutralise.
    neutralise: BTreeMap<usize, BTreeSet<u32>>,
}

/// A removable unit of one phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Unit {
    Elements(usize, usize),
    Command(usize, u32),
}

fn apply(plan: &Plan, units: &[Unit]) -> Plan {
    let mut p = plan.clone();
    for &u in units {
        match u {
            Unit::Elements(a, b) => p.drop.extend(a..b),
            Unit::Command(e, off) => {
                p.neutralise.entry(e).or_default().insert(off);
            }
        }
    }
    p
}

/// Builds the trace `plan` describes.
fn build(trace: &mut CiTrace<Vec<u8>>, plan: &Plan) -> Result<Vec<u8>, ReduceError> {
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    b.layout(trace.layout());
    let mut buf = Vec::new();
    for i in 0..trace.elements().len() {
        if plan.drop.contains(&i) {
            continue;
        }
        match trace.event(i) {
            Some(StreamEvent::MemoryLoad(m)) => {
                trace.read_blob_into(i, &mut buf)?;
                if let Some(offs) = plan.neutralise.get(&i) {
                    for &off in offs {
                        let h = off as usize + 4;
                        if let Some(bytes) = buf.get_mut(h..h + 4) {
                            let mut header =
                                u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]);
                            let extra = CmdHeader(header).extra_params(ExtraParamWidth::Bits8);
                            // Register 0x000 with mask 0; a consecutive run long enough to reach
                            // FINALIZE (0x010) writes 0x000 repeatedly instead.
                            header &= !0x000F_FFFF;
                            if extra >= 16 {
                                header &= !(1 << 31);
                            }
                            bytes.copy_from_slice(&header.to_le_bytes());
                        }
                    }
                }
                b.memory_load(m.physical_address, &buf)?;
            }
            Some(_) => {
                b.raw_element(trace.elements()[i])?;
            }
            None => {}
        }
    }
    Ok(b.build()?)
}

/// Records executed commands: (element, source address, register, was a draw trigger).
#[derive(Default)]
struct Commands {
    element: usize,
    last: Option<(usize, u32, u32)>,
    seen: Vec<(usize, u32, u32, bool)>,
}

impl Observer for Commands {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        if let Some(l) = self.last.take() {
            self.seen.push((l.0, l.1, l.2, false));
        }
        if ev.space == RegSpace::Pica
            && let Some(a) = ev.source_addr
        {
            self.last = Some((self.element, a, ev.id));
        }
    }
    fn draw_begin(&mut self, _info: &DrawInfo) {
        if let Some(l) = self.last.take() {
            self.seen.push((l.0, l.1, l.2, true));
        }
    }
}

/// The neutralisable commands of a trace: (draw triggers, other commands), as units.
fn command_units(trace: CiTrace<Vec<u8>>) -> (Vec<Unit>, Vec<Unit>) {
    let mut loads: Vec<(usize, u32, u32)> = Vec::new();
    for i in 0..trace.elements().len() {
        if let Some(StreamEvent::MemoryLoad(m)) = trace.event(i) {
            loads.push((i, load_target(m.physical_address), m.size));
        }
    }
    let mut r = Replay::new(trace);
    let mut obs = Commands::default();
    while !r.at_end() {
        obs.element = r.position().element;
        r.step_element(&mut obs);
    }
    if let Some(l) = obs.last.take() {
        obs.seen.push((l.0, l.1, l.2, false));
    }
    let (mut draws, mut others) = (BTreeSet::new(), BTreeSet::new());
    let mut blob = Vec::new();
    let mut trace = r.into_trace();
    for (element, addr, id, is_draw) in obs.seen {
        let Some(&(le, pa, size)) = loads.iter().rev().find(|&&(le, pa, size)| {
            le < element && pa <= addr && u64::from(addr) + 8 <= u64::from(pa) + u64::from(size)
        }) else {
            continue;
        };
        let off = addr - pa;
        let _ = size;
        if trace.read_blob_into(le, &mut blob).is_err() {
            continue;
        }
        let h = off as usize + 4;
        let Some(hb) = blob.get(h..h + 4) else {
            continue;
        };
        let header = CmdHeader(u32::from_le_bytes([hb[0], hb[1], hb[2], hb[3]]));
        // Only commands whose first parameter is this write (the header follows it).
        if u32::from(header.id()) != id || u32::from(header.id()) == 0 && header.mask() == 0 {
            continue;
        }
        let u = Unit::Command(le, off);
        if is_draw {
            draws.insert(u);
        } else {
            others.insert(u);
        }
    }
    others.retain(|u| !draws.contains(u));
    (draws.into_iter().collect(), others.into_iter().collect())
}

/// The search state shared by the phases.
struct Search<'a> {
    check: &'a mut dyn FnMut(&[u8]) -> bool,
    progress: &'a mut dyn FnMut(&str),
    budget: ReduceBudget,
    steps: u64,
    exhausted: bool,
    /// Time of one check (the first one's), kept free before the deadline for a candidate.
    check_time: Duration,
    /// Time of the final measurement (the first measurement's), kept free before the deadline.
    reserve: Duration,
}

impl Search<'_> {
    /// Checks `bytes` once, outside the budget (the input's own check), and times it.
    fn first(&mut self, bytes: &[u8]) -> bool {
        let start = Instant::now();
        self.steps += 1;
        let ok = (self.check)(bytes);
        self.check_time = start.elapsed();
        ok
    }

    /// True (and the search marked exhausted) when no further candidate fits the budget.
    fn out_of_budget(&mut self) -> bool {
        let late = self.budget.deadline.is_some_and(|d| {
            Instant::now()
                .checked_add(self.check_time + self.reserve)
                .is_none_or(|end| end >= d)
        });
        if self.steps >= self.budget.max_steps || late {
            self.exhausted = true;
        }
        self.exhausted
    }

    /// True (and the search marked exhausted) when a phase whose set-up replays the trace
    /// (about one check's time) could not also check one candidate within the budget.
    fn no_room_for_phase(&mut self) -> bool {
        let late = self.budget.deadline.is_some_and(|d| {
            Instant::now()
                .checked_add(self.check_time * 2 + self.reserve)
                .is_none_or(|end| end >= d)
        });
        if late {
            self.exhausted = true;
        }
        self.out_of_budget()
    }

    fn test(&mut self, bytes: &[u8]) -> bool {
        if self.out_of_budget() {
            return false;
        }
        self.steps += 1;
        (self.check)(bytes)
    }

    /// ddmin over `units` on top of `plan`: returns the units that could be removed.
    fn ddmin(
        &mut self,
        phase: &str,
        trace: &mut CiTrace<Vec<u8>>,
        plan: &Plan,
        units: &[Unit],
    ) -> Result<Vec<Unit>, ReduceError> {
        let mut kept: Vec<Unit> = units.to_vec();
        let mut removed: Vec<Unit> = Vec::new();
        let mut n = 2usize;
        while !kept.is_empty() && !self.exhausted {
            let n_eff = n.min(kept.len());
            let chunk = kept.len().div_ceil(n_eff);
            let mut progress = false;
            for c in 0..n_eff {
                let lo = c * chunk;
                if lo >= kept.len() {
                    break;
                }
                let hi = (lo + chunk).min(kept.len());
                let mut candidate = removed.clone();
                candidate.extend_from_slice(&kept[lo..hi]);
                let bytes = build(trace, &apply(plan, &candidate))?;
                if self.test(&bytes) {
                    removed = candidate;
                    kept.drain(lo..hi);
                    n = (n_eff - 1).max(2);
                    progress = true;
                    (self.progress)(&format!(
                        "{phase}: removed {} of {} ({} kept), {} step(s)",
                        removed.len(),
                        units.len(),
                        kept.len(),
                        self.steps
                    ));
                    break;
                }
                if self.exhausted {
                    break;
                }
            }
            if !progress {
                if n_eff >= kept.len() {
                    break;
                }
                n = (n_eff * 2).min(kept.len());
            }
        }
        Ok(removed)
    }
}

/// Reduces `bytes` (see the module docs): keeps frames up to `frame`'s marker, then removes
/// what it can while `check` holds. `check` must hold for the input cut after `frame`.
pub fn reduce(
    bytes: Vec<u8>,
    frame: u32,
    check: &mut dyn FnMut(&[u8]) -> bool,
    budget: ReduceBudget,
    progress: &mut dyn FnMut(&str),
) -> Result<(Vec<u8>, ReduceReport), ReduceError> {
    let mut trace = CiTrace::from_bytes(bytes)?;
    let n = trace.elements().len();
    // Frame ranges: frame k = elements after marker k-1 up to marker k inclusive.
    let mut frames: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for i in 0..n {
        if matches!(trace.event(i), Some(StreamEvent::FrameMarker)) {
            frames.push((start, i + 1));
            start = i + 1;
        }
    }
    let Some(&(_, cut)) = frames.get(frame as usize) else {
        return Err(ReduceError::NoFrame {
            frame,
            frames: frames.len() as u32,
        });
    };
    let mut plan = Plan::default();
    plan.drop.extend(cut..n);
    let mut current = build(&mut trace, &plan)?;
    let mut search = Search {
        check,
        progress,
        budget,
        steps: 0,
        exhausted: false,
        check_time: Duration::ZERO,
        reserve: Duration::ZERO,
    };
    if !search.first(&current) {
        return Err(ReduceError::InputFails);
    }
    let cut_bytes = current.clone();
    let measured = Instant::now();
    let mut report = ReduceReport {
        before: measure(&current)?,
        ..ReduceReport::default()
    };
    search.reserve = measured.elapsed();
    // Phase 1: frames before the target.
    let mut trace = CiTrace::from_bytes(current.clone())?;
    let units: Vec<Unit> = frames[..frame as usize]
        .iter()
        .map(|&(a, b)| Unit::Elements(a, b))
        .collect();
    let removed = search.ddmin("frames", &mut trace, &Plan::default(), &units)?;
    report.phases.push(("frames", removed.len(), units.len()));
    current = build(&mut trace, &apply(&Plan::default(), &removed))?;
    // Phase 2: draws (its set-up replays the trace: skipped once the budget is used up).
    if !search.no_room_for_phase() {
        let mut trace = CiTrace::from_bytes(current.clone())?;
        let (draws, _) = command_units(CiTrace::from_bytes(current.clone())?);
        let removed = search.ddmin("draws", &mut trace, &Plan::default(), &draws)?;
        report.phases.push(("draws", removed.len(), draws.len()));
        current = build(&mut trace, &apply(&Plan::default(), &removed))?;
    }
    // Phase 3: memory loads and stream register writes (these shrink the file most), then the
    // remaining commands.
    if !search.out_of_budget() {
        let mut trace = CiTrace::from_bytes(current.clone())?;
        let units: Vec<Unit> = (0..trace.elements().len())
            .filter(|&i| !matches!(trace.event(i), Some(StreamEvent::FrameMarker) | None))
            .map(|i| Unit::Elements(i, i + 1))
            .collect();
        let removed = search.ddmin("stream elements", &mut trace, &Plan::default(), &units)?;
        report
            .phases
            .push(("stream elements", removed.len(), units.len()));
        current = build(&mut trace, &apply(&Plan::default(), &removed))?;
    }
    if !search.no_room_for_phase() {
        let mut trace = CiTrace::from_bytes(current.clone())?;
        let (_, others) = command_units(CiTrace::from_bytes(current.clone())?);
        let removed = search.ddmin("register writes", &mut trace, &Plan::default(), &others)?;
        report
            .phases
            .push(("register writes", removed.len(), others.len()));
        current = build(&mut trace, &apply(&Plan::default(), &removed))?;
    }
    // Packing: the neutralised commands leave the lists. The check must hold on the result
    // (not counted against the steps; skipped when the deadline leaves no time for it).
    match pack(&current) {
        Ok((packed, pr)) => {
            let changed = packed != current;
            report.pack = pr;
            let late = search.budget.deadline.is_some_and(|d| {
                Instant::now()
                    .checked_add(search.check_time + search.reserve)
                    .is_none_or(|end| end >= d)
            });
            if changed && late {
                search.exhausted = true;
                report.pack_note = Some(
                    "packing not checked: the time limit ran out; the unpacked result is kept"
                        .into(),
                );
            } else if changed {
                if (search.check)(&packed) {
                    current = packed;
                } else {
                    report.pack_note = Some(
                        "the packed trace no longer passes the check; the unpacked result is kept"
                            .into(),
                    );
                }
            }
        }
        Err(e) => {
            report.pack_note = Some(format!("packing failed ({e}); the unpacked result is kept"))
        }
    }
    report.after = if current == cut_bytes {
        report.before
    } else {
        measure(&current)?
    };
    report.steps = search.steps;
    report.budget_exhausted = search.exhausted;
    Ok((current, report))
}
