//! Work budgets: deterministic bounds on the work of one command-list submission, one frame and
//! a whole trace (issue 18).
//!
//! Input: the work the command processor and the draw driver report (register writes, draws,
//! vertices, shader instructions, fragments). Output: whether a scope ran out, as an
//! [`Exhausted`] value the command processor turns into a diagnostic, and the remaining
//! allowance of a draw (so a draw is truncated exactly at the budget).
//!
//! Per-draw caps (`DrawLimits` in the vertex loader) bound one draw; these budgets
//! bound how many draws and how much work a submission, a frame and a trace may add up to, so a
//! list that jumps back to its own start, a list of thousands of 0xFFFFFFFF-vertex draws or a
//! geometry shader that emits in nested loops ends in bounded time. Everything is counted, never
//! timed: the same trace stops at the same place every time, and a seek (which restores a
//! keyframe holding the counters) sees the same cuts as a linear replay.
//!
//! What is counted:
//! * **writes**: PICA register writes executed from command lists (jumps included) and external
//!   MMIO writes from the stream (the latter only for the frame and trace scopes);
//! * **draws**: DRAWARRAYS/DRAWELEMENTS draws and immediate-mode sequences started;
//! * **vertices**: vertex positions a draw walked (indices visited, post-transform cache hits
//!   included), and each immediate-mode vertex;
//! * **shader instructions**: vertex-shader instructions executed (per vertex, exact) plus
//!   geometry-shader instructions executed (exact);
//! * **fragments**: fragments the rasteriser produced (`DrawStats::fragments_generated`),
//!   whether or not they passed the tests: a depth-rejected fragment costs about as much as a
//!   written one, so counting only written ones left full-screen draws that fail the depth test
//!   bounded by nothing but the draw count;
//! * **transfer pixels**: pixels a display transfer processed (output pixels times the box
//!   filter's taps, i.e. input pixels read) and 4-byte units a texture copy moved. Memory fills
//!   are not counted: a fill of all of VRAM costs ~0.1 ms. Transfers are started from stream
//!   writes only, so only the frame and trace scopes apply; a transfer is not started once either
//!   has used its limit, and one transfer may overshoot by at most its own pixels (capped at
//!   4096x4096 by the engine).
//!
//! A count reaching its limit exhausts the scope: a write or draw is not started once its scope
//! has used its limit, a draw is truncated to the vertices and instructions left, and vertices,
//! instructions and fragments are checked again after each draw (a draw may overshoot the
//! fragment limit by its own fragments, which the per-draw caps bound). When a scope is
//! exhausted the rest of it is skipped: the submission's remaining commands; the frame's
//! remaining command lists, memory fills and transfers (register values are still stored, memory
//! loads still applied) until the next frame marker; or the same for the rest of the trace.
//!
//! The defaults ([`WorkBudget::default`]) bound the whole replay of any input of up to
//! [`TRACE_BUDGET_BASE_BYTES`] (16 MiB) to well under 30 s on a 2-core machine, even for an input
//! built to exhaust every trace-level limit one after the other (see [`DEFAULT_TRACE_BUDGET`]
//! for the measurements). Larger inputs get trace limits that grow with their size
//! ([`WorkBudget::for_input_size`], applied by [`crate::replay::Replay`]), so a long real
//! capture is not cut at the same point as a small hostile file.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A unit of work a budget counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BudgetResource {
    /// Register writes.
    Writes,
    /// Draws started.
    Draws,
    /// Vertex positions processed.
    Vertices,
    /// Shader instructions executed (VS + GS).
    ShaderInstructions,
    /// Fragments written.
    Fragments,
    /// Pixels moved by the transfer engine (display transfers and texture copies).
    TransferPixels,
}

impl BudgetResource {
    /// Every resource, in the order of [`WorkCount`]'s fields.
    pub const ALL: [BudgetResource; 6] = [
        BudgetResource::Writes,
        BudgetResource::Draws,
        BudgetResource::Vertices,
        BudgetResource::ShaderInstructions,
        BudgetResource::Fragments,
        BudgetResource::TransferPixels,
    ];

    /// The name used in `--budget` specifications (`writes`, `draws`, `vertices`,
    /// `shader-instructions`, `fragments`, `transfer-pixels`).
    pub fn name(self) -> &'static str {
        match self {
            BudgetResource::Writes => "writes",
            BudgetResource::Draws => "draws",
            BudgetResource::Vertices => "vertices",
            BudgetResource::ShaderInstructions => "shader-instructions",
            BudgetResource::Fragments => "fragments",
            BudgetResource::TransferPixels => "transfer-pixels",
        }
    }
}

impl fmt::Display for BudgetResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The stretch of work a budget applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BudgetScope {
    /// One command-list submission (a kick, with every jump it takes).
    Submission,
    /// The stream between two frame markers.
    Frame,
    /// The whole trace (or everything run on one `Gpu`).
    Trace,
}

impl BudgetScope {
    /// Every scope, narrowest first.
    pub const ALL: [BudgetScope; 3] = [
        BudgetScope::Submission,
        BudgetScope::Frame,
        BudgetScope::Trace,
    ];

    /// The name used in `--budget` specifications (`submission`, `frame`, `trace`).
    pub fn name(self) -> &'static str {
        match self {
            BudgetScope::Submission => "submission",
            BudgetScope::Frame => "frame",
            BudgetScope::Trace => "trace",
        }
    }
}

impl fmt::Display for BudgetScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An amount of each kind of work (used both as limits and as counters).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkCount {
    /// Register writes.
    pub writes: u64,
    /// Draws.
    pub draws: u64,
    /// Vertex positions.
    pub vertices: u64,
    /// Shader instructions.
    pub shader_instructions: u64,
    /// Fragments written.
    pub fragments: u64,
    /// Pixels moved by the transfer engine (absent in budgets saved before it existed: 0).
    #[serde(default)]
    pub transfer_pixels: u64,
}

impl WorkCount {
    /// The amount of `r`.
    pub fn get(&self, r: BudgetResource) -> u64 {
        match r {
            BudgetResource::Writes => self.writes,
            BudgetResource::Draws => self.draws,
            BudgetResource::Vertices => self.vertices,
            BudgetResource::ShaderInstructions => self.shader_instructions,
            BudgetResource::Fragments => self.fragments,
            BudgetResource::TransferPixels => self.transfer_pixels,
        }
    }

    /// Sets the amount of `r`.
    pub fn set(&mut self, r: BudgetResource, v: u64) {
        match r {
            BudgetResource::Writes => self.writes = v,
            BudgetResource::Draws => self.draws = v,
            BudgetResource::Vertices => self.vertices = v,
            BudgetResource::ShaderInstructions => self.shader_instructions = v,
            BudgetResource::Fragments => self.fragments = v,
            BudgetResource::TransferPixels => self.transfer_pixels = v,
        }
    }

    fn add(&mut self, o: &WorkCount) {
        for r in BudgetResource::ALL {
            self.set(r, self.get(r).saturating_add(o.get(r)));
        }
    }

    /// No limit on anything.
    pub const UNLIMITED: WorkCount = WorkCount {
        writes: u64::MAX,
        draws: u64::MAX,
        vertices: u64::MAX,
        shader_instructions: u64::MAX,
        fragments: u64::MAX,
        transfer_pixels: u64::MAX,
    };
}

/// Default limits of one command-list submission: the frame's (a real list has thousands of
/// writes; the old fixed cap was 64 Mi).
pub const DEFAULT_SUBMISSION_BUDGET: WorkCount = DEFAULT_FRAME_BUDGET;

/// Default limits of one frame: 16 Mi writes, 64 Ki draws, 16 Mi vertices, 1 Gi shader
/// instructions, 256 Mi fragments, 64 Mi transfer pixels. The 3DS shades well under a million
/// vertices per frame at 60 fps, a full 400x240 screen is 96,000 fragments and a frame's display
/// transfers move about 2 x 96,000 pixels (one per screen), so real frames stay far below; a
/// frame that uses it all replays in seconds.
pub const DEFAULT_FRAME_BUDGET: WorkCount = WorkCount {
    writes: 1 << 24,
    draws: 1 << 16,
    vertices: 1 << 24,
    shader_instructions: 1 << 30,
    fragments: 1 << 28,
    transfer_pixels: 1 << 26,
};

/// Default limits of a whole trace, for an input of up to [`TRACE_BUDGET_BASE_BYTES`]: 64 Mi
/// writes, 512 Ki draws, 32 Mi vertices, 1 Gi shader instructions, 256 Mi fragments, 128 Mi
/// transfer pixels (~700 frames of two 400x240 display transfers).
///
/// Chosen by measurement (issue 18): each limit was run out by a trace built to do nothing but
/// that work (`tests/tests/hostile_inputs.rs`, `write_hostile_budget_inputs`), timing
/// `picaview trace info` (release build, CPU time = user + sys, 2-core machine, 2026-11-26):
///
/// | resource | worst-case rate | limit | CPU time |
/// |---|---|---|---|
/// | writes (a jump loop) | 27 M/s | 2^26 | 2.4 s |
/// | draws (3-vertex draws) | 156 K/s | 2^19 | 3.4 s |
/// | vertices (0xFFFFFFFF-vertex draws) | 8.4 M/s | 2^25 | 4.0 s |
/// | shader instructions (a geometry shader emitting in nested loops) | 190 M/s | 2^30 | 5.7 s |
/// | fragments (full-screen triangles, written or depth-rejected) | 27-44 M/s | 2^28 | 6-10 s |
/// | transfer pixels (display transfers of 4096x4096 RGBA8, the engine's maximum) | 72 M/s | 2^27 | 1.9 s |
///
/// (The transfer row: `transfers_max.ctf`, 1,000 such transfers; with a 2^28 limit 16 ran in
/// 2.8 s user + 1.0 s sys at load 6.8, and `bench replay`, which replays several times, took
/// 30.5 s, so the limit is 2^27: 8 transfers. Before transfers were budgeted the file took ~4
/// minutes.) An input that runs out of all six one after the other costs at most ~27 s of CPU,
/// so any input of up to 16 MiB finishes every CLI command in under 30 s. The old defaults (2^34
/// instructions and fragments) allowed ~90 s of geometry-shader loops and ~10 minutes of
/// fragments.
///
/// What real captures need (estimate): a heavy 3DS frame is ~300 draws, ~30 K vertices, 1-2 M
/// shader instructions, ~0.5 M fragments and ~10 K writes, ~30 ms of replay. The limits above
/// let ~500-1,000 such frames replay (8-16 s of 60 fps gameplay; light 2D/UI frames many times
/// more), which is also about what 30 s of replay allows anyway; a 16 MiB capture rarely holds
/// more heavy frames than that. Larger captures get proportionally larger limits
/// ([`WorkBudget::for_input_size`]); anything cut says which `--budget ...-per-trace=N` flag
/// lets it run further.
pub const DEFAULT_TRACE_BUDGET: WorkCount = WorkCount {
    writes: 1 << 26,
    draws: 1 << 19,
    vertices: 1 << 25,
    shader_instructions: 1 << 30,
    fragments: 1 << 28,
    transfer_pixels: 1 << 27,
};

/// Input size up to which the trace-level defaults apply as they are; above it they grow in
/// proportion ([`WorkBudget::for_input_size`]).
pub const TRACE_BUDGET_BASE_BYTES: u64 = 16 << 20;

/// Limits per submission, frame and trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkBudget {
    /// Limits of one command-list submission.
    pub submission: WorkCount,
    /// Limits of one frame.
    pub frame: WorkCount,
    /// Limits of the whole trace.
    pub trace: WorkCount,
}

impl Default for WorkBudget {
    fn default() -> Self {
        Self {
            submission: DEFAULT_SUBMISSION_BUDGET,
            frame: DEFAULT_FRAME_BUDGET,
            trace: DEFAULT_TRACE_BUDGET,
        }
    }
}

/// A `--budget` specification that could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetParseError {
    /// An entry is not `NAME=VALUE`.
    #[error("budget entry `{0}` is not NAME=VALUE (e.g. draws-per-frame=1000)")]
    NotAssignment(String),
    /// The name is not `RESOURCE-per-SCOPE`.
    #[error(
        "unknown budget `{0}`: expected RESOURCE-per-SCOPE with RESOURCE one of writes, draws, vertices, shader-instructions, fragments, transfer-pixels and SCOPE one of submission, frame, trace"
    )]
    UnknownName(String),
    /// The value is not a number.
    #[error("budget `{name}`: `{value}` is not a count (decimal, 0x hex, 2^N, or `unlimited`)")]
    BadValue {
        /// The budget's name.
        name: String,
        /// The value given.
        value: String,
    },
}

fn parse_count(v: &str) -> Option<u64> {
    let v = v.trim().replace('_', "");
    if v.eq_ignore_ascii_case("unlimited") || v.eq_ignore_ascii_case("none") {
        return Some(u64::MAX);
    }
    if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    if let Some(e) = v.strip_prefix("2^") {
        let e: u32 = e.parse().ok()?;
        return 1u64.checked_shl(e).filter(|_| e < 64);
    }
    v.parse().ok()
}

impl WorkBudget {
    /// The limits of `scope`.
    pub fn scope(&self, scope: BudgetScope) -> &WorkCount {
        match scope {
            BudgetScope::Submission => &self.submission,
            BudgetScope::Frame => &self.frame,
            BudgetScope::Trace => &self.trace,
        }
    }

    /// The limits of `scope`, to change.
    pub fn scope_mut(&mut self, scope: BudgetScope) -> &mut WorkCount {
        match scope {
            BudgetScope::Submission => &mut self.submission,
            BudgetScope::Frame => &mut self.frame,
            BudgetScope::Trace => &mut self.trace,
        }
    }

    /// No limit at all (per-draw caps still apply).
    pub fn unlimited() -> Self {
        Self {
            submission: WorkCount::UNLIMITED,
            frame: WorkCount::UNLIMITED,
            trace: WorkCount::UNLIMITED,
        }
    }

    /// Applies a specification such as `draws-per-frame=1000,vertices-per-trace=2^24` on top
    /// of `self`: comma-separated `RESOURCE-per-SCOPE=VALUE` entries, RESOURCE one of `writes`,
    /// `draws`, `vertices`, `shader-instructions`, `fragments`, `transfer-pixels`, SCOPE one of `submission`,
    /// `frame`, `trace`; VALUE decimal (`_` allowed), `0x` hex, `2^N` or `unlimited`. The
    /// special entry `defaults` resets every limit to its default.
    pub fn apply_spec(&mut self, spec: &str) -> Result<(), BudgetParseError> {
        for entry in spec.split(',').map(str::trim).filter(|e| !e.is_empty()) {
            if entry == "defaults" {
                *self = Self::default();
                continue;
            }
            let Some((name, value)) = entry.split_once('=') else {
                return Err(BudgetParseError::NotAssignment(entry.to_string()));
            };
            let name = name.trim();
            let (resource, scope) = Self::parse_name(name)
                .ok_or_else(|| BudgetParseError::UnknownName(name.to_string()))?;
            let v = parse_count(value).ok_or_else(|| BudgetParseError::BadValue {
                name: name.to_string(),
                value: value.trim().to_string(),
            })?;
            self.scope_mut(scope).set(resource, v);
        }
        Ok(())
    }

    /// The defaults with [`WorkBudget::apply_spec`] applied.
    pub fn parse(spec: &str) -> Result<Self, BudgetParseError> {
        let mut b = Self::default();
        b.apply_spec(spec)?;
        Ok(b)
    }

    fn parse_name(name: &str) -> Option<(BudgetResource, BudgetScope)> {
        let (r, s) = name.split_once("-per-")?;
        let resource = BudgetResource::ALL.into_iter().find(|x| x.name() == r)?;
        let scope = BudgetScope::ALL.into_iter().find(|x| x.name() == s)?;
        Some((resource, scope))
    }

    /// The budget for an input of `bytes` bytes: every trace-level limit still at its default
    /// is multiplied by `ceil(bytes / TRACE_BUDGET_BASE_BYTES)` (at least 1), so replay time
    /// stays proportional to the input's size (a 64 MiB capture may run 4x as long as a 16 MiB
    /// one). Limits set to anything else (`--budget`) are kept as given; submission and frame
    /// limits never change. Applying it twice changes nothing more.
    pub fn for_input_size(mut self, bytes: u64) -> Self {
        let k = bytes.div_ceil(TRACE_BUDGET_BASE_BYTES).max(1);
        for r in BudgetResource::ALL {
            let d = DEFAULT_TRACE_BUDGET.get(r);
            if self.trace.get(r) == d {
                self.trace.set(r, d.saturating_mul(k));
            }
        }
        self
    }

    /// The entries that differ from the defaults, as a specification [`WorkBudget::parse`]
    /// reads back (empty for the defaults).
    pub fn spec(&self) -> String {
        let d = Self::default();
        let mut out = Vec::new();
        for scope in BudgetScope::ALL {
            for r in BudgetResource::ALL {
                let v = self.scope(scope).get(r);
                if v != d.scope(scope).get(r) {
                    let value = if v == u64::MAX {
                        "unlimited".to_string()
                    } else {
                        v.to_string()
                    };
                    out.push(format!("{}-per-{}={value}", r.name(), scope.name()));
                }
            }
        }
        out.join(",")
    }
}

/// A scope that ran out of a resource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Exhausted {
    /// The scope that ran out.
    pub scope: BudgetScope,
    /// What it ran out of.
    pub resource: BudgetResource,
    /// The limit.
    pub limit: u64,
    /// The amount used in the scope (at least the limit).
    pub used: u64,
    /// The frame (frame markers passed) it happened in.
    pub frame: u64,
}

impl Exhausted {
    /// What ran out: "work budget exhausted: frame used 1000 of 1000 draws-per-frame allowed".
    pub fn what(&self) -> String {
        format!(
            "work budget exhausted: {} used {} of {} {}-per-{} allowed",
            self.scope, self.used, self.limit, self.resource, self.scope
        )
    }

    /// What is skipped because of it.
    pub fn skipped(&self) -> String {
        match self.scope {
            BudgetScope::Submission => {
                "the rest of this command-list submission is skipped".to_string()
            }
            BudgetScope::Frame => format!(
                "the rest of frame {} (command lists, fills, transfers) is skipped until the next frame marker",
                self.frame
            ),
            BudgetScope::Trace => {
                "the rest of the trace (command lists, fills, transfers) is skipped".to_string()
            }
        }
    }

    /// Both in one sentence.
    pub fn describe(&self) -> String {
        format!("{}; {}", self.what(), self.skipped())
    }
}

/// Counts work against a [`WorkBudget`]; part of the GPU state (so keyframes and seeks see the
/// same counts as a linear replay).
#[derive(Clone, Debug, Default)]
pub struct WorkMeter {
    /// The limits.
    pub budget: WorkBudget,
    used: [WorkCount; 3],
    /// Scopes that ran out (indexed like [`BudgetScope::ALL`]).
    out: [bool; 3],
    frame: u64,
}

fn idx(s: BudgetScope) -> usize {
    match s {
        BudgetScope::Submission => 0,
        BudgetScope::Frame => 1,
        BudgetScope::Trace => 2,
    }
}

impl WorkMeter {
    /// A meter with no work counted.
    pub fn new(budget: WorkBudget) -> Self {
        Self {
            budget,
            ..Self::default()
        }
    }

    /// A command-list submission starts: its counters restart.
    pub fn begin_submission(&mut self) {
        self.used[0] = WorkCount::default();
        self.out[0] = false;
    }

    /// A frame marker passed: the frame counters restart.
    pub fn begin_frame(&mut self) {
        self.used[1] = WorkCount::default();
        self.out[1] = false;
        self.frame += 1;
    }

    /// The work counted so far in `scope`.
    pub fn used(&self, scope: BudgetScope) -> &WorkCount {
        &self.used[idx(scope)]
    }

    /// True when `scope` ran out.
    pub fn is_exhausted(&self, scope: BudgetScope) -> bool {
        self.out[idx(scope)]
    }

    /// True when the frame or the trace ran out: command lists, fills and transfers are skipped.
    pub fn stream_blocked(&self) -> bool {
        self.out[1] || self.out[2]
    }

    /// True when the running command list must stop (any scope ran out).
    pub fn list_blocked(&self) -> bool {
        self.out.iter().any(|&o| o)
    }

    /// The smallest allowance left of `r` over the scopes that apply (`in_list`: the
    /// submission's too).
    pub fn remaining(&self, r: BudgetResource, in_list: bool) -> u64 {
        BudgetScope::ALL
            .into_iter()
            .filter(|&s| in_list || s != BudgetScope::Submission)
            .map(|s| {
                self.budget
                    .scope(s)
                    .get(r)
                    .saturating_sub(self.used[idx(s)].get(r))
            })
            .min()
            .unwrap_or(u64::MAX)
    }

    /// Counts one register write (`in_list`: in the submission too). The hot path: no checks.
    #[inline]
    pub fn count_write(&mut self, in_list: bool) {
        if in_list {
            self.used[0].writes += 1;
        }
        self.used[1].writes += 1;
        self.used[2].writes += 1;
    }

    /// Checks, before one unit of `r` is started, that every applicable scope has some left;
    /// marks the first scope (narrowest first) that has none as exhausted and returns it.
    /// Does not count anything (see [`WorkMeter::charge`]).
    #[inline]
    pub fn check_start(&mut self, r: BudgetResource, in_list: bool) -> Option<Exhausted> {
        // The hot path (every register write): every scope has some left.
        let b = &self.budget;
        if (!in_list || self.used[0].get(r) < b.submission.get(r))
            && self.used[1].get(r) < b.frame.get(r)
            && self.used[2].get(r) < b.trace.get(r)
        {
            return None;
        }
        self.check_start_scopes(r, in_list)
    }

    /// [`WorkMeter::check_start`] scope by scope, narrowest first.
    fn check_start_scopes(&mut self, r: BudgetResource, in_list: bool) -> Option<Exhausted> {
        for s in BudgetScope::ALL {
            if s == BudgetScope::Submission && !in_list {
                continue;
            }
            let limit = self.budget.scope(s).get(r);
            let used = self.used[idx(s)].get(r);
            if used >= limit {
                return Some(self.exhaust(s, r, limit, used));
            }
        }
        None
    }

    /// Counts `work` in every applicable scope, then reports the first scope (narrowest first)
    /// and resource whose count reached its limit, marking the scope exhausted.
    pub fn charge(&mut self, work: &WorkCount, in_list: bool) -> Option<Exhausted> {
        for s in BudgetScope::ALL {
            if s == BudgetScope::Submission && !in_list {
                continue;
            }
            self.used[idx(s)].add(work);
        }
        self.reached(
            &[
                BudgetResource::Vertices,
                BudgetResource::ShaderInstructions,
                BudgetResource::Fragments,
                BudgetResource::TransferPixels,
            ],
            in_list,
        )
    }

    fn reached(&mut self, resources: &[BudgetResource], in_list: bool) -> Option<Exhausted> {
        for s in BudgetScope::ALL {
            if (s == BudgetScope::Submission && !in_list) || self.out[idx(s)] {
                continue;
            }
            for &r in resources {
                // Transfers run from stream writes only: a submission never counts them, so
                // its transfer limit (even 0) never cuts a command list.
                if s == BudgetScope::Submission && r == BudgetResource::TransferPixels {
                    continue;
                }
                let limit = self.budget.scope(s).get(r);
                let used = self.used[idx(s)].get(r);
                if used >= limit {
                    return Some(self.exhaust(s, r, limit, used));
                }
            }
        }
        None
    }

    fn exhaust(&mut self, s: BudgetScope, r: BudgetResource, limit: u64, used: u64) -> Exhausted {
        self.out[idx(s)] = true;
        Exhausted {
            scope: s,
            resource: r,
            limit,
            used,
            frame: self.frame,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_and_round_trip() {
        let b = WorkBudget::parse(
            "draws-per-frame=1000, vertices-per-trace=2^24,writes-per-submission=0x100,fragments-per-frame=unlimited,shader-instructions-per-trace=1_000",
        )
        .unwrap();
        assert_eq!(b.frame.draws, 1000);
        assert_eq!(b.trace.vertices, 1 << 24);
        assert_eq!(b.submission.writes, 256);
        assert_eq!(b.frame.fragments, u64::MAX);
        assert_eq!(b.trace.shader_instructions, 1000);
        assert_eq!(b.frame.writes, DEFAULT_FRAME_BUDGET.writes);
        assert_eq!(WorkBudget::parse(&b.spec()).unwrap(), b);
        assert_eq!(WorkBudget::default().spec(), "");
        assert_eq!(WorkBudget::parse("").unwrap(), WorkBudget::default());
        let mut c = b;
        c.apply_spec("defaults").unwrap();
        assert_eq!(c, WorkBudget::default());
    }

    #[test]
    fn bad_specs_are_typed_errors() {
        assert!(matches!(
            WorkBudget::parse("draws"),
            Err(BudgetParseError::NotAssignment(_))
        ));
        assert!(matches!(
            WorkBudget::parse("draws-per-week=1"),
            Err(BudgetParseError::UnknownName(_))
        ));
        assert!(matches!(
            WorkBudget::parse("pixels-per-frame=1"),
            Err(BudgetParseError::UnknownName(_))
        ));
        for v in ["x", "-1", "2^64", "0xZZ", ""] {
            assert!(
                matches!(
                    WorkBudget::parse(&format!("draws-per-frame={v}")),
                    Err(BudgetParseError::BadValue { .. })
                ),
                "{v}"
            );
        }
    }

    #[test]
    fn meter_exhausts_narrowest_scope_first_and_resets_per_scope() {
        let mut b = WorkBudget::unlimited();
        b.submission.draws = 2;
        b.frame.draws = 3;
        b.trace.draws = 5;
        let mut m = WorkMeter::new(b);
        let draw = WorkCount {
            draws: 1,
            ..WorkCount::default()
        };
        m.begin_submission();
        for _ in 0..2 {
            assert_eq!(m.check_start(BudgetResource::Draws, true), None);
            assert_eq!(m.charge(&draw, true), None);
        }
        let e = m.check_start(BudgetResource::Draws, true).unwrap();
        assert_eq!((e.scope, e.used, e.limit), (BudgetScope::Submission, 2, 2));
        assert!(m.list_blocked() && !m.stream_blocked());
        m.begin_submission();
        assert!(!m.list_blocked());
        assert_eq!(m.check_start(BudgetResource::Draws, true), None);
        m.charge(&draw, true);
        let e = m.check_start(BudgetResource::Draws, true).unwrap();
        assert_eq!(e.scope, BudgetScope::Frame);
        assert!(m.stream_blocked());
        m.begin_frame();
        assert!(!m.stream_blocked());
        m.begin_submission();
        m.charge(&draw, true);
        m.charge(&draw, true);
        let e = m.check_start(BudgetResource::Draws, true).unwrap();
        assert_eq!((e.scope, e.frame), (BudgetScope::Submission, 1));
        m.begin_submission();
        let e = m.check_start(BudgetResource::Draws, true).unwrap();
        assert_eq!(e.scope, BudgetScope::Trace);
        m.begin_frame();
        assert!(m.stream_blocked(), "the trace scope never resets");
        assert_eq!(m.remaining(BudgetResource::Draws, true), 0);
        assert_eq!(m.remaining(BudgetResource::Vertices, true), u64::MAX);
    }

    #[test]
    fn trace_defaults_grow_with_the_input_size_only() {
        let d = WorkBudget::default();
        assert_eq!(d.for_input_size(0), d);
        assert_eq!(d.for_input_size(TRACE_BUDGET_BASE_BYTES), d);
        let big = d.for_input_size(3 * TRACE_BUDGET_BASE_BYTES - 1);
        assert_eq!(big.trace.shader_instructions, 3 << 30);
        assert_eq!(big.trace.fragments, 3 << 28);
        assert_eq!((big.submission, big.frame), (d.submission, d.frame));
        // Applying it again (the scaled values are no longer the defaults) changes nothing.
        assert_eq!(big.for_input_size(3 * TRACE_BUDGET_BASE_BYTES), big);
        // Limits given explicitly are kept.
        let mut set =
            WorkBudget::parse("draws-per-trace=10,fragments-per-trace=unlimited").unwrap();
        set = set.for_input_size(u64::MAX);
        assert_eq!(set.trace.draws, 10);
        assert_eq!(set.trace.fragments, u64::MAX);
        assert_eq!(
            set.trace.writes,
            DEFAULT_TRACE_BUDGET
                .writes
                .saturating_mul(u64::MAX / TRACE_BUDGET_BASE_BYTES + 1)
        );
    }

    #[test]
    fn charged_work_reaching_a_limit_exhausts() {
        let mut b = WorkBudget::unlimited();
        b.frame.vertices = 100;
        let mut m = WorkMeter::new(b);
        let v = |n| WorkCount {
            vertices: n,
            ..WorkCount::default()
        };
        assert_eq!(m.charge(&v(60), false), None);
        assert_eq!(m.remaining(BudgetResource::Vertices, false), 40);
        let e = m.charge(&v(40), false).unwrap();
        assert_eq!(
            (e.scope, e.resource, e.used),
            (BudgetScope::Frame, BudgetResource::Vertices, 100)
        );
        assert!(e.describe().contains("vertices-per-frame"));
        // Reported once per scope instance.
        assert_eq!(m.charge(&v(1), false), None);
    }

    #[test]
    fn transfer_pixels_count_in_frame_and_trace_only() {
        let mut b = WorkBudget::parse("transfer-pixels-per-submission=0").unwrap();
        b.frame.transfer_pixels = 100;
        let mut m = WorkMeter::new(b);
        m.begin_submission();
        // A draw in a list is not cut by the submission's transfer limit.
        let draw = WorkCount {
            draws: 1,
            ..WorkCount::default()
        };
        assert_eq!(m.charge(&draw, true), None);
        assert!(!m.list_blocked());
        let t = WorkCount {
            transfer_pixels: 100,
            ..WorkCount::default()
        };
        let e = m.charge(&t, false).unwrap();
        assert_eq!(
            (e.scope, e.resource),
            (BudgetScope::Frame, BudgetResource::TransferPixels)
        );
        assert!(e.describe().contains("transfer-pixels-per-frame"));
        assert!(m.stream_blocked());
        assert_eq!(
            WorkBudget::parse("transfer-pixels-per-trace=2^20")
                .unwrap()
                .trace
                .transfer_pixels,
            1 << 20
        );
    }
}
