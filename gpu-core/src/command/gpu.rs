//! The GPU state and the command processor (`pica-core.md` §1, §2.5-§2.7; `pica-raster.md` §0.2,
//! §10, §11.4).
//!
//! Input: register writes (from command lists in memory, or external MMIO writes from a trace).
//! Output: changes to the register files, shader memories, uniforms, lookup tables and — through
//! draws and the external engines — to physical memory; every step is reported to an
//! [`Observer`].
//!
//! All state is in [`Gpu`], a plain value: cloning it (together with a [`PhysMem`]) gives a
//! keyframe for time travel.

use std::sync::Arc;

use pica_cmd::cmdlist::{CmdHeader, ExtraParamWidth, expand_mask};
use shader_unit::float::{unpack_f24x4_f32, unpack_f32x4};

use super::external;
use crate::budget::{BudgetResource, Exhausted, WorkBudget, WorkCount, WorkMeter};
use crate::debug::{DiagKind, Diagnostic, EngineEvent, Observer, RegSpace, RegWriteEvent};
use crate::draw::{DrawOutcome, DrawRequest, PipelineState, ShaderMemory};
use crate::memory::PhysMem;

pub use crate::lut::LookupTables;
pub use crate::regs::{
    EXT_REG_BASE, EXT_REG_COUNT, LCD_REG_BASE, LCD_REG_COUNT, PICA_MMIO_BASE, PICA_REG_COUNT, reg,
};

/// Words of shader code memory per unit. The index register has 12 bits ([3DB]); [C] limits the
/// VS to 512 words, which we do not: a longer upload is stored and flagged by the linter instead.
pub const CODE_WORDS: usize = 4096;
/// Operand-descriptor words stored per unit. Instructions address at most 128 (7-bit DESC);
/// we keep 4096 like [C] and CiTrace's swizzle section, index wrapping at 12 bits.
// UNVERIFIED: [P] keeps 128 entries and wraps the index at 7 bits; hardware behaviour past 128 is
// unknown. Keeping 4096 only matters for lists that upload more than 128 descriptors.
pub const OPDESC_WORDS: usize = 4096;
/// Float uniform registers c0-c95.
pub const FLOAT_UNIFORMS: usize = 96;
/// Fixed/default attribute slots. Indices 12-14 are stored like [C] (3dbrew: only 0-11 valid).
pub const FIXED_ATTRIBS: usize = 16;
/// Default maximum of register writes executed for one command-list submission (jumps included)
/// before the processor gives up with a diagnostic; bounds a list that jumps to itself forever.
/// The limit in force is the work budget's `writes-per-submission` ([`Gpu::work`]).
pub const MAX_WRITES_PER_SUBMISSION: u64 = crate::budget::DEFAULT_SUBMISSION_BUDGET.writes;

/// Which of the two shader units a register block addresses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnitKind {
    /// Vertex shader configuration (0x2B0-0x2DF).
    Vertex,
    /// Geometry shader configuration (0x280-0x2AF), unit 3.
    Geometry,
}

/// Shader memories and uniforms of one shader unit, with the upload FIFOs' cursors.
#[derive(Clone, Debug)]
pub struct ShaderUnitMemory {
    /// Program words.
    pub code: Arc<Vec<u32>>,
    /// Operand descriptors.
    pub opdescs: Arc<Vec<u32>>,
    /// Float uniforms c0-c95 as f32 (f24 uploads decoded exactly; f32 uploads kept unrounded).
    pub float_uniforms: [[f32; 4]; FLOAT_UNIFORMS],
    /// Next code word index (CODETRANSFER_INDEX, 12 bits).
    pub code_index: u32,
    /// Next operand-descriptor index (OPDESCS_INDEX).
    pub opdesc_index: u32,
    /// Float-uniform FIFO: target register (bits 0-7 of FLOATUNIFORM_INDEX).
    pub float_index: u32,
    /// Float-uniform FIFO: true for f32 mode (FLOATUNIFORM_INDEX bit 31), else packed f24.
    pub float_mode_f32: bool,
    /// Float-uniform FIFO: words received for the vector in progress.
    pub float_words: [u32; 4],
    /// Float-uniform FIFO: how many of `float_words` are valid.
    pub float_count: u8,
    /// Incremented on every change to `code` or `opdescs` (decoded-program cache key).
    pub program_generation: u64,
}

impl Default for ShaderUnitMemory {
    fn default() -> Self {
        Self {
            code: Arc::new(vec![0; CODE_WORDS]),
            opdescs: Arc::new(vec![0; OPDESC_WORDS]),
            float_uniforms: [[0.0; 4]; FLOAT_UNIFORMS],
            code_index: 0,
            opdesc_index: 0,
            float_index: 0,
            float_mode_f32: false,
            float_words: [0; 4],
            float_count: 0,
            program_generation: 0,
        }
    }
}

/// The upload cursors of a shader unit (trace editing puts them back after injected writes).
/// Two values are equal when they would continue an upload the same way (the words of the
/// partial float vector beyond its count are not compared).
#[derive(Clone, Copy, Debug)]
pub struct UnitCursors {
    code_index: u32,
    opdesc_index: u32,
    float_index: u32,
    float_mode_f32: bool,
    float_words: [u32; 4],
    float_count: u8,
}

impl PartialEq for UnitCursors {
    fn eq(&self, o: &Self) -> bool {
        let n = usize::from(self.float_count.min(4));
        self.code_index == o.code_index
            && self.opdesc_index == o.opdesc_index
            && self.float_index == o.float_index
            && self.float_mode_f32 == o.float_mode_f32
            && self.float_count == o.float_count
            && self.float_words[..n] == o.float_words[..n]
    }
}

impl Eq for UnitCursors {}

impl UnitCursors {
    /// The writes (to the unit whose register block starts at `base`) that set the cursors
    /// back to these values: index registers, then the partial float vector's words.
    fn restore_writes(&self, base: u32, out: &mut Vec<(u32, u32, u8)>) {
        out.push((base + reg::SH_CODETRANSFER_INDEX, self.code_index, 0xF));
        out.push((base + reg::SH_OPDESCS_INDEX, self.opdesc_index, 0xF));
        out.push((
            base + reg::SH_FLOATUNIFORM_INDEX,
            self.float_index | (u32::from(self.float_mode_f32) << 31),
            0xF,
        ));
        for &w in self.float_words.iter().take(usize::from(self.float_count)) {
            out.push((base + reg::SH_FLOATUNIFORM_DATA0, w, 0xF));
        }
    }
}

impl ShaderUnitMemory {
    /// The upload cursors.
    pub fn clone_cursors(&self) -> UnitCursors {
        UnitCursors {
            code_index: self.code_index,
            opdesc_index: self.opdesc_index,
            float_index: self.float_index,
            float_mode_f32: self.float_mode_f32,
            float_words: self.float_words,
            float_count: self.float_count,
        }
    }

    /// The memories as a draw reads them.
    pub fn view(&self) -> ShaderMemory<'_> {
        ShaderMemory {
            code: &self.code,
            opdescs: &self.opdescs,
            generation: self.program_generation,
            float_uniforms: &self.float_uniforms,
        }
    }

    fn write_code(&mut self, word: u32) {
        let i = (self.code_index as usize) % CODE_WORDS;
        Arc::make_mut(&mut self.code)[i] = word;
        self.code_index = (self.code_index + 1) % CODE_WORDS as u32;
        self.program_generation += 1;
    }

    fn write_opdesc(&mut self, word: u32) {
        let i = (self.opdesc_index as usize) % OPDESC_WORDS;
        Arc::make_mut(&mut self.opdescs)[i] = word;
        self.opdesc_index = (self.opdesc_index + 1) % OPDESC_WORDS as u32;
        self.program_generation += 1;
    }

    /// Pushes one word into the float-uniform FIFO. Returns `Err(index)` when a completed vector
    /// targeted a register ≥ 96 (dropped without incrementing, like [C] and [P]).
    fn write_float(&mut self, word: u32) -> Result<(), u32> {
        let need = if self.float_mode_f32 { 4 } else { 3 };
        self.float_words[usize::from(self.float_count)] = word;
        self.float_count += 1;
        if self.float_count < need {
            return Ok(());
        }
        self.float_count = 0;
        let w = self.float_words;
        let v = if self.float_mode_f32 {
            unpack_f32x4(w)
        } else {
            unpack_f24x4_f32([w[0], w[1], w[2]])
        };
        let idx = self.float_index as usize;
        match self.float_uniforms.get_mut(idx) {
            Some(slot) => {
                *slot = v;
                self.float_index += 1;
                Ok(())
            }
            None => Err(self.float_index),
        }
    }
}

/// The fixed-attribute FIFO (0x232-0x235).
#[derive(Clone, Debug, Default)]
pub struct FixedAttribFifo {
    /// Current target (0-11 fixed attribute, 12-14 stored too, 15 immediate mode).
    pub index: u32,
    /// Words received for the vector in progress.
    pub words: [u32; 3],
    /// How many of `words` are valid.
    pub count: u8,
}

/// The whole GPU: register files, shader memories, uniforms, tables and pipeline state that
/// persists between draws.
#[derive(Clone, Debug)]
pub struct Gpu {
    /// PICA internal registers as stored (after byte masking).
    pub regs: Box<[u32; PICA_REG_COUNT]>,
    /// External GPU registers (PA 0x10400000 + 4·i).
    pub ext_regs: Box<[u32; EXT_REG_COUNT]>,
    /// LCD registers (PA 0x10202000 + 4·i).
    pub lcd_regs: Box<[u32; LCD_REG_COUNT]>,
    /// Vertex shader unit memories.
    pub vs: ShaderUnitMemory,
    /// Geometry shader unit (unit 3) memories.
    pub gs: ShaderUnitMemory,
    /// Fixed/default attribute values (f32 from packed f24).
    pub fixed_attribs: [[f32; 4]; FIXED_ATTRIBS],
    /// Fixed-attribute FIFO state.
    pub fixed_fifo: FixedAttribFifo,
    /// Immediate-mode attributes received for the vertex in progress.
    pub immediate_attrs: Vec<[f32; 4]>,
    /// Lookup tables.
    pub luts: LookupTables,
    /// Number of draws executed so far (the next draw's index).
    pub draw_count: u64,
    /// State of the vertex pipeline that persists across draws (assembler, shader registers).
    pub pipeline: PipelineState,
    /// The command list being executed, when one was interrupted by the observer.
    pub list: Option<ListState>,
    /// The jumps taken in the current submission (target, size and the four CMDBUF address/size
    /// registers), for loop detection; at most [`MAX_JUMPS_TRACKED`].
    pub jumps_taken: std::collections::HashSet<JumpState>,
    /// Work counted against the work budgets per submission, frame and trace (part of the state,
    /// so a keyframe restores the counts; see [`crate::budget`]).
    pub work: WorkMeter,
    /// Register writes executed so far (PICA and external), counted like the replay's
    /// positions; trace edits key write overrides by it (1-based: the next write is
    /// `writes_executed + 1`).
    pub writes_executed: u64,
    /// Trace-editing hooks (`replay::edit`), `None` when the trace is replayed unedited.
    pub edit_hooks: Option<Arc<EditHooks>>,
    /// What the hooks did, when [`EditHooks::record`] is set (drained by the editor's save).
    pub edit_log: Vec<AppliedEdit>,
}

/// Replacement of one executed register write (trace editing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteOverride {
    /// Index of the edit in its edit list (for reports).
    pub edit: usize,
    /// The register (PICA id or external PA) the write must address; a write to another
    /// register is left alone (the edit is then never applied).
    pub reg: u32,
    /// The new parameter.
    pub value: u32,
    /// The new byte-enable mask (bits 0-3), or `None` to keep the write's own.
    pub mask: Option<u8>,
}

/// One PICA register write injected by a trace edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Injection {
    /// A plain write.
    Write {
        /// Register id (0x000-0x2FF).
        id: u32,
        /// Parameter.
        param: u32,
        /// Byte-enable mask.
        mask: u8,
    },
    /// Read-modify-write: the bits `bits` of register `id` take `value`'s (written with mask
    /// 0xF), e.g. one boolean uniform.
    SetBits {
        /// Register id.
        id: u32,
        /// Bits replaced.
        bits: u32,
        /// Their new values.
        value: u32,
    },
}

/// The hooks of an edit list, compiled for the command processor.
#[derive(Clone, Debug, Default)]
pub struct EditHooks {
    /// Write overrides by 1-based write number.
    pub overrides: std::collections::BTreeMap<u64, WriteOverride>,
    /// Writes injected right before a draw (by draw index): (edit index, writes). They are
    /// executed when the draw's trigger write has been stored and before the draw runs; the
    /// upload cursors they move (uniform, code, descriptor and fixed-attribute FIFOs) are put
    /// back afterwards with further writes.
    pub before_draw: std::collections::BTreeMap<u64, Vec<(usize, Vec<Injection>)>>,
    /// Record what was applied in [`Gpu::edit_log`].
    pub record: bool,
}

/// What an edit hook did, recorded for saving an edited trace.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppliedEdit {
    /// A write was overridden.
    Override {
        /// Edit index.
        edit: usize,
        /// Physical address of the parameter word when the write came from a command list;
        /// `None` for an external write from the stream.
        source_addr: Option<u32>,
        /// The parameter and mask as the trace had them.
        original: (u32, u8),
        /// What was executed instead.
        replaced: (u32, u8),
    },
    /// Writes were injected before a draw.
    Injected {
        /// Edit indices.
        edits: Vec<usize>,
        /// The draw.
        draw: u64,
        /// True for an immediate-mode draw (injected at its first vertex).
        immediate: bool,
        /// Where the command processor was in its command list (`None`: not in a list).
        site: Option<ListSite>,
        /// Every write executed, cursor restores included: (id, param, mask).
        writes: Vec<(u32, u32, u8)>,
    },
}

/// Where the command processor is inside a command list (for saving an edited trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListSite {
    /// Start of the buffer being executed.
    pub start: u32,
    /// End (exclusive) of the buffer.
    pub end: u64,
    /// Address of the next command to read.
    pub cursor: u64,
    /// Start of the command being executed when the trigger was not its last write.
    pub current_cmd: Option<u32>,
    /// True when the buffer was reached by a jump (the submission cannot be split there).
    pub in_jump: bool,
}

/// Keeps diagnostics only (the writes injected by edits are not positions of the trace).
#[derive(Default)]
struct InjectedDiagnostics(Vec<Diagnostic>);

impl Observer for InjectedDiagnostics {
    fn diagnostic(&mut self, diag: &Diagnostic) {
        if self.0.len() < 64 {
            self.0.push(diag.clone());
        }
    }
}

/// What decides where a command-list jump leads and what follows: its target and size, and the
/// CMDBUF_SIZE0/1 and CMDBUF_ADDR0/1 registers (0x238-0x23B) at the jump.
pub type JumpState = (u32, u32, [u32; 4]);

/// Jumps remembered per submission for loop detection; later jumps are only bounded by
/// [`MAX_WRITES_PER_SUBMISSION`].
pub const MAX_JUMPS_TRACKED: usize = 4096;

impl Default for Gpu {
    fn default() -> Self {
        Self::new()
    }
}

/// One register write decoded from a command list.
struct ListWrite {
    id: u32,
    value: u32,
    mask: u8,
    /// Physical address of the parameter word.
    addr: u32,
}

/// The command being executed: its header fields and how many of its writes are done.
#[derive(Clone, Copy, Debug)]
struct CurrentCommand {
    id: u32,
    mask: u8,
    consecutive: bool,
    extra: u32,
    /// Next write (0 = the first parameter, which precedes the header).
    next: u32,
    first_param: u32,
    /// Physical address of the command (its first parameter).
    addr: u32,
}

/// Position of the command processor inside a command list (resumable; part of keyframes).
#[derive(Clone, Copy, Debug)]
pub struct ListState {
    start: u32,
    cursor: u64,
    end: u64,
    /// Register writes executed in this submission so far (jumps included).
    pub writes: u64,
    current: Option<CurrentCommand>,
}

impl ListState {
    fn new(addr: u32, size: u32, writes: u64) -> Self {
        let a = u64::from(addr);
        Self {
            start: addr,
            cursor: a,
            end: a + u64::from(size),
            writes,
            current: None,
        }
    }

    /// Physical address of the next command to be read.
    pub fn cursor(&self) -> u64 {
        self.cursor
    }

    /// The next register write of the list, `Ok(None)` at its end. The hot path of the command
    /// processor: a new command's parameter and header are read together when both lie in one
    /// resident page, and errors are returned as a small value (their text is made by
    /// [`ListError::into_diagnostic`] only when one happens).
    #[inline]
    fn next_write(&mut self, mem: &PhysMem) -> Result<Option<ListWrite>, ListError> {
        let cmd = match self.current.as_mut() {
            Some(cmd) => cmd,
            None => {
                // Padding: commands start 8-byte aligned relative to the buffer start.
                if !(self.cursor - u64::from(self.start)).is_multiple_of(8) {
                    self.cursor += 4;
                }
                if self.cursor + 8 > self.end {
                    return Ok(None);
                }
                let at = self.cursor as u32;
                let (param, header) = match mem.slice_in_page(at, 8) {
                    Some(&[a, b, c, d, e, f, g, h]) => (
                        u32::from_le_bytes([a, b, c, d]),
                        u32::from_le_bytes([e, f, g, h]),
                    ),
                    _ => {
                        let read = |a: u32| mem.read_u32(a).map_err(|_| ListError::Word(a));
                        (read(at)?, read(at.wrapping_add(4))?)
                    }
                };
                let h = CmdHeader(header);
                // Extra-parameter count: 8 bits (20-27) per [3DB]/[P]/[M]; [C] reads 11 bits.
                let extra = h.extra_params(ExtraParamWidth::Bits8);
                if self.cursor + 8 + 4 * u64::from(extra) > self.end {
                    return Err(ListError::PastEnd {
                        at,
                        id: h.id(),
                        extra,
                    });
                }
                self.cursor += 8;
                self.current.insert(CurrentCommand {
                    id: u32::from(h.id()),
                    mask: h.mask(),
                    consecutive: h.consecutive(),
                    extra,
                    next: 0,
                    first_param: param,
                    addr: at,
                })
            }
        };
        let k = cmd.next;
        let (value, addr) = if k == 0 {
            (cmd.first_param, cmd.addr)
        } else {
            let a = (self.cursor as u32).wrapping_add(4 * (k - 1));
            let v = mem.read_u32(a).map_err(|_| ListError::Parameter(a))?;
            (v, a)
        };
        let w = ListWrite {
            id: if cmd.consecutive { cmd.id + k } else { cmd.id },
            value,
            mask: cmd.mask,
            addr,
        };
        cmd.next += 1;
        if cmd.next > cmd.extra {
            self.cursor += 4 * u64::from(cmd.extra);
            self.current = None;
        }
        Ok(Some(w))
    }
}

/// Why a command list was abandoned while reading it.
#[derive(Clone, Copy, Debug)]
enum ListError {
    /// A command's parameter or header word at this address is outside mapped memory.
    Word(u32),
    /// An extra parameter word at this address is outside mapped memory.
    Parameter(u32),
    /// The command at `at` declares more extra parameters than the list holds.
    PastEnd { at: u32, id: u16, extra: u32 },
}

impl ListError {
    fn into_diagnostic(self) -> Diagnostic {
        let (kind, detail) = match self {
            ListError::Word(a) => (
                DiagKind::UnmappedRead { addr: a, len: 4 },
                format!("command list word at 0x{a:08X} is outside mapped memory; list abandoned"),
            ),
            ListError::Parameter(a) => (
                DiagKind::UnmappedRead { addr: a, len: 4 },
                format!(
                    "command list parameter at 0x{a:08X} is outside mapped memory; list abandoned"
                ),
            ),
            ListError::PastEnd { at, id, extra } => (
                DiagKind::CommandList,
                format!(
                    "command at 0x{at:08X} (id 0x{id:03X}) declares {extra} extra parameters past the end of the list; list abandoned"
                ),
            ),
        };
        Diagnostic {
            kind,
            draw: None,
            detail,
        }
    }
}

/// Where the processor is told to go next after a register write.
enum Flow {
    Continue,
    /// FINALIZE: stop the current buffer.
    Stop,
    /// Jump to a new buffer (physical address, size in bytes).
    Jump(u32, u32),
}

impl Gpu {
    /// A GPU with every register and memory zero.
    pub fn new() -> Self {
        Self {
            regs: Box::new([0; PICA_REG_COUNT]),
            ext_regs: Box::new([0; EXT_REG_COUNT]),
            lcd_regs: Box::new([0; LCD_REG_COUNT]),
            vs: ShaderUnitMemory::default(),
            gs: ShaderUnitMemory::default(),
            fixed_attribs: [[0.0; 4]; FIXED_ATTRIBS],
            fixed_fifo: FixedAttribFifo::default(),
            immediate_attrs: Vec::new(),
            luts: LookupTables::default(),
            draw_count: 0,
            pipeline: PipelineState::default(),
            list: None,
            jumps_taken: std::collections::HashSet::new(),
            work: WorkMeter::default(),
            writes_executed: 0,
            edit_hooks: None,
            edit_log: Vec::new(),
        }
    }

    /// Sets the work budgets (the counts so far are kept).
    pub fn set_work_budget(&mut self, budget: WorkBudget) {
        self.work.budget = budget;
    }

    /// A frame marker passed: the per-frame work counters restart.
    pub fn begin_frame(&mut self) {
        self.work.begin_frame();
    }

    /// The diagnostic for a budget that ran out at `addr` (a command-list word; `list_start` is
    /// the start of the buffer it is in).
    fn budget_diagnostic(
        &self,
        e: &Exhausted,
        list_start: Option<u32>,
        addr: Option<u32>,
        draw: Option<(u64, bool)>,
    ) -> Diagnostic {
        let mut at = String::new();
        match draw {
            Some((d, true)) => at.push_str(&format!(" before draw {d} (not run)")),
            Some((d, false)) => at.push_str(&format!(" after draw {d}")),
            None => {}
        }
        match (list_start, addr) {
            (Some(start), Some(a)) => at.push_str(&format!(
                " in the command list at PA 0x{start:08X} (byte offset 0x{:X}, PA 0x{a:08X})",
                a.wrapping_sub(start)
            )),
            (None, Some(a)) => at.push_str(&format!(" at PA 0x{a:08X}")),
            _ => at.push_str(" in a stream register write"),
        }
        let mut detail = format!("{}{at}; {}", e.what(), e.skipped());
        if e.resource == BudgetResource::Writes && list_start.is_some() {
            detail.push_str(
                "; a command list this long almost certainly loops (a jump back into itself with changing registers)",
            );
        }
        Diagnostic {
            kind: DiagKind::Budget {
                scope: e.scope,
                resource: e.resource,
            },
            draw: draw.map(|d| d.0),
            detail,
        }
    }

    /// Checks the draw budgets before a draw (or immediate-mode vertex) starts; reports the
    /// scope that ran out. `new_draw`: the draw count goes up.
    fn draw_allowed<O: Observer>(
        &mut self,
        new_draw: bool,
        source: Option<u32>,
        obs: &mut O,
    ) -> bool {
        let in_list = self.list.is_some();
        const ALL: [BudgetResource; 4] = [
            BudgetResource::Draws,
            BudgetResource::Vertices,
            BudgetResource::ShaderInstructions,
            BudgetResource::Fragments,
        ];
        let checks = if new_draw { &ALL[..] } else { &ALL[1..] };
        for &r in checks {
            if let Some(e) = self.work.check_start(r, in_list) {
                let start = self.list.as_ref().map(|l| l.start);
                let d = self.budget_diagnostic(&e, start, source, Some((self.draw_count, true)));
                obs.diagnostic(&d);
                return false;
            }
        }
        true
    }

    /// Counts a finished draw's work; reports a scope whose count reached its limit.
    fn charge_draw<O: Observer>(
        &mut self,
        mut work: WorkCount,
        new_draw: bool,
        source: Option<u32>,
        obs: &mut O,
    ) {
        let in_list = self.list.is_some();
        work.draws = u64::from(new_draw);
        if let Some(e) = self.work.charge(&work, in_list) {
            let start = self.list.as_ref().map(|l| l.start);
            let draw = self.draw_count.checked_sub(1).map(|d| (d, false));
            let d = self.budget_diagnostic(&e, start, source, draw);
            obs.diagnostic(&d);
        }
    }

    /// Draws the pixels of draws that wait for following draws and charges their fragments
    /// ([`PipelineState::flush_pixels`]).
    fn flush_pixels<O: Observer>(&mut self, mem: &mut PhysMem, obs: &mut O) {
        let fragments = self.pipeline.flush_pixels(mem, obs);
        if fragments > 0 {
            let work = WorkCount {
                fragments,
                ..WorkCount::default()
            };
            self.charge_draw(work, false, None, obs);
        }
    }

    /// Shader memories of a unit.
    pub fn unit(&self, kind: UnitKind) -> &ShaderUnitMemory {
        match kind {
            UnitKind::Vertex => &self.vs,
            UnitKind::Geometry => &self.gs,
        }
    }

    /// The draw pipeline's state, and the read-only view of everything else a draw reads.
    fn split_for_draw(&mut self) -> (&mut PipelineState, DrawRequest<'_>) {
        let req = DrawRequest {
            regs: &self.regs,
            vs: self.vs.view(),
            gs: self.gs.view(),
            fixed_attribs: &self.fixed_attribs,
            luts: &self.luts,
            next_draw: self.draw_count,
        };
        (&mut self.pipeline, req)
    }

    /// Applies what a draw changed outside memory and the pipeline state.
    fn apply_draw(&mut self, outcome: DrawOutcome) {
        self.draw_count += outcome.draws_started;
        if let Some(u) = outcome.gs_float_uniforms {
            self.gs.float_uniforms = u;
        }
    }

    /// True when VS uploads are mirrored into the GS unit (VSH_COM_MODE bit 0 = 0, §2.7).
    fn com_mode_shared(&self) -> bool {
        self.regs[reg::VSH_COM_MODE as usize] & 1 == 0
    }

    /// Executes one PICA register write (id, parameter, byte mask), with its side effects.
    ///
    /// `source_addr` is the physical address of the parameter word when it came from a command
    /// list. Writes to ids ≥ 0x300 are reported as diagnostics and otherwise ignored.
    pub fn write_pica_reg<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        id: u32,
        param: u32,
        mask: u8,
        source_addr: Option<u32>,
        obs: &mut O,
    ) {
        let _ = self.write_pica_reg_flow(mem, id, param, mask, source_addr, obs);
    }

    fn write_pica_reg_flow<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        id: u32,
        param: u32,
        mask: u8,
        source_addr: Option<u32>,
        obs: &mut O,
    ) -> Flow {
        let (param, mask) = if (id as usize) < PICA_REG_COUNT {
            self.edited_write(id, param, mask, source_addr)
        } else {
            (param, mask)
        };
        let Some(slot) = self.regs.get_mut(id as usize) else {
            obs.diagnostic(&Diagnostic {
                kind: DiagKind::UnknownRegister { id },
                draw: None,
                detail: format!(
                    "write of 0x{param:08X} to register id 0x{id:X} (only 0x000-0x2FF exist)"
                ),
            });
            return Flow::Continue;
        };
        let m = expand_mask(mask);
        let old = *slot;
        let in_fixed_ports = (reg::FIXEDATTRIB_INDEX..=reg::FIXEDATTRIB_DATA2).contains(&id);
        let new = (old & !m) | (param & m);
        *slot = new;
        obs.reg_write(&RegWriteEvent {
            space: RegSpace::Pica,
            id,
            mask,
            param,
            old,
            new,
            source_addr,
        });
        if !in_fixed_ports && self.pipeline.immediate_open() {
            self.pipeline.close_immediate(obs);
        }
        self.side_effect(mem, id, param, new, source_addr, obs)
    }

    /// Side effects. Data FIFOs consume the raw parameter; triggers fire on a non-zero stored
    /// value (§10.1 suggested resolution; [3DB]); configuration reads use the stored value.
    // UNVERIFIED: what a mask does to side effects is unknown on hardware (§1.3). [C] fires every
    // trigger on any write; we follow [3DB] "non-zero triggers" using the masked stored value.
    fn side_effect<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        id: u32,
        param: u32,
        stored: u32,
        source_addr: Option<u32>,
        obs: &mut O,
    ) -> Flow {
        match id {
            reg::FINALIZE => return Flow::Stop,
            reg::PROCTEX_LUT_DATA0..=reg::PROCTEX_LUT_DATA7 => self.proctex_lut_write(param),
            reg::FOG_LUT_DATA0..=reg::FOG_LUT_DATA7 => {
                let r = &mut self.regs[reg::FOG_LUT_INDEX as usize];
                let idx = (*r & 0xFFFF) as usize;
                // [C] stores at index mod 128.
                self.luts.fog[idx % 128] = param;
                *r = (*r & !0xFFFF) | ((idx as u32 + 1) & 0xFFFF);
            }
            reg::LIGHTING_LUT_DATA0..=reg::LIGHTING_LUT_DATA7 => {
                let r = &mut self.regs[reg::LIGHTING_LUT_INDEX as usize];
                let idx = (*r & 0xFF) as usize;
                let table = ((*r >> 8) & 0x1F) as usize;
                match self.luts.lighting.get_mut(table) {
                    Some(t) => t[idx] = param & 0x00FF_FFFF,
                    None => obs.diagnostic(&Diagnostic {
                        kind: DiagKind::UploadOverflow,
                        draw: None,
                        detail: format!("lighting LUT data for table {table} (only 0-23 exist)"),
                    }),
                }
                // The 8-bit index wraps.
                *r = (*r & !0xFF) | ((idx as u32 + 1) & 0xFF);
            }
            reg::DRAWARRAYS | reg::DRAWELEMENTS if stored != 0 => {
                if !self.draw_allowed(true, source_addr, obs) {
                    return Flow::Continue;
                }
                if self.edit_hooks.is_some() {
                    self.inject_before_draw(mem, false, obs);
                }
                let indexed = id == reg::DRAWELEMENTS;
                // The draw is truncated to what the budgets have left.
                let in_list = self.list.is_some();
                let saved = self.pipeline.limits;
                let left_vertices = self.work.remaining(BudgetResource::Vertices, in_list);
                let left_instr = self
                    .work
                    .remaining(BudgetResource::ShaderInstructions, in_list);
                self.pipeline.limits.max_vertices = saved
                    .max_vertices
                    .min(u32::try_from(left_vertices).unwrap_or(u32::MAX));
                self.pipeline.limits.max_shader_instructions =
                    saved.max_shader_instructions.min(left_instr);
                // Inside a list without edits, the draw's pixels may wait for the following
                // draws while the fragment budgets have room for them (draw/deferred.rs).
                self.pipeline.defer_fragments = if in_list && self.edit_hooks.is_none() {
                    self.work.remaining(BudgetResource::Fragments, in_list)
                } else {
                    0
                };
                let (pipeline, req) = self.split_for_draw();
                let mut outcome = pipeline.draw(&req, mem, indexed, obs);
                self.pipeline.limits = saved;
                self.pipeline.defer_fragments = 0;
                let work = std::mem::take(&mut outcome.work);
                self.apply_draw(outcome);
                self.charge_draw(work, true, source_addr, obs);
                // The list's next commands must not lie where waiting pixels go.
                if let Some(l) = self.list.as_ref()
                    && self.pipeline.pixels_wait_on(u64::from(l.start), l.end)
                {
                    self.flush_pixels(mem, obs);
                }
            }
            reg::FIXEDATTRIB_INDEX => {
                self.fixed_fifo.index = stored & 0xF;
                self.fixed_fifo.count = 0;
                if self.fixed_fifo.index == 0xF {
                    self.immediate_attrs.clear();
                }
            }
            reg::FIXEDATTRIB_DATA0..=reg::FIXEDATTRIB_DATA2 => {
                self.fixed_attrib_write(mem, param, source_addr, obs)
            }
            reg::CMDBUF_JUMP0 | reg::CMDBUF_JUMP1 if stored != 0 => {
                let ch = (id - reg::CMDBUF_JUMP0) as usize;
                let size = self.regs[reg::CMDBUF_SIZE0 as usize + ch] & 0x1F_FFFF;
                let addr = self.regs[reg::CMDBUF_ADDR0 as usize + ch] & 0x1FFF_FFFF;
                // Sizes and addresses are in units of 8 bytes ([3DB] widths: 21/29 bits).
                return Flow::Jump(addr.wrapping_mul(8), size.wrapping_mul(8));
            }
            reg::PRIMITIVE_CONFIG | reg::RESTART_PRIMITIVE => {
                // [C]: any write to either resets primitive assembly.
                // UNVERIFIED: [P] resets only on RESTART_PRIMITIVE bit 0.
                self.pipeline
                    .reset_assembly(self.regs[reg::PRIMITIVE_CONFIG as usize]);
            }
            0x280..=0x2AF => {
                if id == reg::GSH_BASE + reg::SH_BOOLUNIFORM {
                    // A new GS bool uniform value replaces the b15 the GS set ([C]).
                    self.pipeline.gs_b15_set = false;
                }
                self.shader_unit_write(UnitKind::Geometry, id - reg::GSH_BASE, param, stored, obs)
            }
            0x2B0..=0x2DF => {
                let off = id - reg::VSH_BASE;
                self.shader_unit_write(UnitKind::Vertex, off, param, stored, obs);
                if self.com_mode_shared() {
                    self.mirror_to_gs(off, param, stored);
                }
            }
            _ => {}
        }
        Flow::Continue
    }

    /// [C] and [3DB] both mirror code and operand descriptors; [3DB] also mirrors uniforms and
    /// the output mask, which [C] does not (TODO in its code). We follow [3DB].
    // UNVERIFIED: uniform mirroring is from the 3dbrew description only.
    fn mirror_to_gs(&mut self, off: u32, param: u32, stored: u32) {
        let gs_id = (reg::GSH_BASE + off) as usize;
        match off {
            reg::SH_CODETRANSFER_INDEX
            | reg::SH_OPDESCS_INDEX
            | reg::SH_FLOATUNIFORM_INDEX
            | reg::SH_BOOLUNIFORM
            | reg::SH_OUTMAP_MASK => self.regs[gs_id] = stored,
            o if (reg::SH_INTUNIFORM_I0..reg::SH_INTUNIFORM_I0 + 4).contains(&o) => {
                self.regs[gs_id] = stored
            }
            _ => {}
        }
        let mut ignore = ();
        self.shader_unit_write(UnitKind::Geometry, off, param, stored, &mut ignore);
    }

    fn shader_unit_write<O: Observer>(
        &mut self,
        kind: UnitKind,
        off: u32,
        param: u32,
        stored: u32,
        obs: &mut O,
    ) {
        let unit = match kind {
            UnitKind::Vertex => &mut self.vs,
            UnitKind::Geometry => &mut self.gs,
        };
        match off {
            reg::SH_FLOATUNIFORM_INDEX => {
                unit.float_index = stored & 0xFF;
                unit.float_mode_f32 = stored >> 31 != 0;
                // [C] keeps a partial vector across index writes, [P] resets it. Resetting is
                // what an upload that starts with the index write expects either way.
                // UNVERIFIED: hardware behaviour for a partial vector is unknown.
                unit.float_count = 0;
            }
            reg::SH_FLOATUNIFORM_DATA0..=reg::SH_FLOATUNIFORM_DATA7 => {
                // UNVERIFIED(SH-19): writes to c96 and above are dropped, not wrapped (azahar
                // `shader_setup.cpp` says so of real hardware; no test is cited).
                if let Err(idx) = unit.write_float(param) {
                    obs.diagnostic(&Diagnostic {
                        kind: DiagKind::UploadOverflow,
                        draw: None,
                        detail: format!(
                            "{kind:?} float uniform upload to c{idx} (only c0-c95 exist); dropped"
                        ),
                    });
                }
            }
            reg::SH_CODETRANSFER_INDEX => unit.code_index = stored & 0xFFF,
            reg::SH_CODETRANSFER_DATA0..=reg::SH_CODETRANSFER_DATA7 => unit.write_code(param),
            reg::SH_OPDESCS_INDEX => unit.opdesc_index = stored & 0xFFF,
            reg::SH_OPDESCS_DATA0..=reg::SH_OPDESCS_DATA7 => unit.write_opdesc(param),
            _ => {}
        }
    }

    fn proctex_lut_write(&mut self, param: u32) {
        let r = &mut self.regs[reg::PROCTEX_LUT as usize];
        let idx = (*r & 0xFF) as usize;
        let table = (*r >> 8) & 0xF;
        let l = &mut self.luts;
        // [C] stores at index mod table size.
        match table {
            0 => l.proctex_noise[idx % 128] = param,
            2 => l.proctex_rgb_map[idx % 128] = param,
            3 => l.proctex_alpha_map[idx % 128] = param,
            4 => l.proctex_color[idx % 256] = param,
            5 => l.proctex_color_diff[idx % 256] = param,
            _ => {}
        }
        *r = (*r & !0xFF) | ((idx as u32 + 1) & 0xFF);
    }

    fn fixed_attrib_write<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        param: u32,
        source: Option<u32>,
        obs: &mut O,
    ) {
        let f = &mut self.fixed_fifo;
        f.words[usize::from(f.count)] = param;
        f.count += 1;
        if f.count < 3 {
            return;
        }
        f.count = 0;
        let v = unpack_f24x4_f32(f.words);
        let index = f.index;
        if index == 0xF {
            self.immediate_attrs.push(v);
            let needed = (self.regs[reg::VSH_NUM_ATTR as usize] & 0xF) as usize + 1;
            if self.immediate_attrs.len() >= needed {
                let new_draw = !self.pipeline.immediate_open();
                if !self.draw_allowed(new_draw, source, obs) {
                    self.immediate_attrs.clear();
                    return;
                }
                let attrs = std::mem::take(&mut self.immediate_attrs);
                if self.edit_hooks.is_some() && !self.pipeline.immediate_open() {
                    // The first vertex opens an immediate-mode draw.
                    self.inject_before_draw(mem, true, obs);
                }
                // As for a draw (see DRAWARRAYS): the vertex's pixels may wait.
                let in_list = self.list.is_some();
                self.pipeline.defer_fragments = if in_list && self.edit_hooks.is_none() {
                    self.work.remaining(BudgetResource::Fragments, in_list)
                } else {
                    0
                };
                let (pipeline, req) = self.split_for_draw();
                let mut outcome = pipeline.immediate_vertex(&req, mem, &attrs, obs);
                self.pipeline.defer_fragments = 0;
                let work = std::mem::take(&mut outcome.work);
                self.apply_draw(outcome);
                self.charge_draw(work, new_draw, source, obs);
                if let Some(l) = self.list.as_ref()
                    && self.pipeline.pixels_wait_on(u64::from(l.start), l.end)
                {
                    self.flush_pixels(mem, obs);
                }
                self.immediate_attrs = attrs;
                self.immediate_attrs.clear();
            }
        } else if let Some(slot) = self.fixed_attribs.get_mut(index as usize) {
            *slot = v;
            self.fixed_fifo.index += 1;
        }
    }

    /// Counts a PICA write and applies a write override to it (trace editing).
    #[inline]
    fn edited_write(
        &mut self,
        id: u32,
        param: u32,
        mask: u8,
        source_addr: Option<u32>,
    ) -> (u32, u8) {
        self.writes_executed += 1;
        let Some(hooks) = self.edit_hooks.as_ref() else {
            return (param, mask);
        };
        match hooks.overrides.get(&self.writes_executed) {
            Some(o) if o.reg == id => {
                let replaced = (o.value, o.mask.unwrap_or(mask) & 0xF);
                if hooks.record {
                    self.edit_log.push(AppliedEdit::Override {
                        edit: o.edit,
                        source_addr,
                        original: (param, mask),
                        replaced,
                    });
                }
                replaced
            }
            _ => (param, mask),
        }
    }

    /// Runs the writes edits inject before the draw about to start, then puts the upload
    /// cursors they moved back (trace editing).
    fn inject_before_draw<O: Observer>(&mut self, mem: &mut PhysMem, immediate: bool, obs: &mut O) {
        let Some(hooks) = self.edit_hooks.take() else {
            return;
        };
        let draw = self.draw_count;
        let Some(edits) = hooks.before_draw.get(&draw) else {
            self.edit_hooks = Some(hooks);
            return;
        };
        let saved_count = self.writes_executed;
        let cursors = |g: &Gpu| {
            (
                g.vs.clone_cursors(),
                g.gs.clone_cursors(),
                (g.fixed_fifo.index, g.fixed_fifo.count, g.fixed_fifo.words),
            )
        };
        let before = cursors(self);
        let mut done: Vec<(u32, u32, u8)> = Vec::new();
        let mut quiet = InjectedDiagnostics::default();
        for (_, writes) in edits {
            for inj in writes {
                let (id, param, mask) = match *inj {
                    Injection::Write { id, param, mask } => (id, param, mask),
                    Injection::SetBits { id, bits, value } => {
                        let old = self.regs.get(id as usize).copied().unwrap_or(0);
                        (id, (old & !bits) | (value & bits), 0xF)
                    }
                };
                done.push((id, param, mask));
                let _ = self.write_pica_reg_flow(mem, id, param, mask, None, &mut quiet);
            }
        }
        // Put the FIFO cursors back: the VS first (with com mode sharing its index writes
        // reach the GS too), then the GS, then the fixed-attribute FIFO.
        let mut restore = Vec::new();
        if cursors(self).0 != before.0 {
            before.0.restore_writes(reg::VSH_BASE, &mut restore);
        }
        for &(id, param, mask) in &restore {
            let _ = self.write_pica_reg_flow(mem, id, param, mask, None, &mut quiet);
        }
        done.append(&mut restore);
        if cursors(self).1 != before.1 {
            before.1.restore_writes(reg::GSH_BASE, &mut restore);
        }
        let (index, count, words) = before.2;
        if (
            self.fixed_fifo.index,
            self.fixed_fifo.count,
            self.fixed_fifo.words,
        ) != before.2
        {
            // At both injection points no immediate-mode vertex is pending (the one that
            // opens an immediate draw has been taken), so selecting 0xF again loses nothing.
            restore.push((reg::FIXEDATTRIB_INDEX, index, 0xF));
            for &w in words.iter().take(usize::from(count)) {
                restore.push((reg::FIXEDATTRIB_DATA0, w, 0xF));
            }
        }
        for &(id, param, mask) in &restore {
            let _ = self.write_pica_reg_flow(mem, id, param, mask, None, &mut quiet);
        }
        done.append(&mut restore);
        for d in &quiet.0 {
            obs.diagnostic(d);
        }
        self.writes_executed = saved_count;
        if hooks.record {
            let site = self.list.as_ref().map(|l| ListSite {
                start: l.start,
                end: l.end,
                cursor: l.cursor,
                current_cmd: l.current.map(|c| c.addr),
                in_jump: !self.jumps_taken.is_empty(),
            });
            self.edit_log.push(AppliedEdit::Injected {
                edits: edits.iter().map(|(e, _)| *e).collect(),
                draw,
                immediate,
                site,
                writes: done,
            });
        }
        self.edit_hooks = Some(hooks);
    }

    /// Executes the command list at `addr` (physical) of `size` bytes, following jumps, until its
    /// end, a FINALIZE, or until the observer asks to stop ([`Observer::stop_requested`]; the
    /// list can then be continued with [`Gpu::resume_command_list`]). Problems (unmapped memory,
    /// jump loops, malformed commands) are reported as diagnostics; the GPU keeps everything
    /// executed before them. Returns true when the list is finished.
    pub fn run_command_list<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        addr: u32,
        size: u32,
        obs: &mut O,
    ) -> bool {
        obs.engine(&EngineEvent::CommandList { addr, size });
        self.work.begin_submission();
        if self.work.stream_blocked() {
            // The frame's or the trace's budget ran out (reported once when it did).
            return true;
        }
        self.list = Some(ListState::new(addr, size, 0));
        self.jumps_taken.clear();
        self.resume_command_list(mem, obs)
    }

    /// True while a command list was interrupted by the observer and not yet finished.
    pub fn list_in_progress(&self) -> bool {
        self.list.is_some()
    }

    /// Continues an interrupted command list (see [`Gpu::run_command_list`]). Returns true when
    /// the list is finished (or there was none).
    pub fn resume_command_list<O: Observer>(&mut self, mem: &mut PhysMem, obs: &mut O) -> bool {
        // The list state stays in place (the write below reads it: budgets, edits).
        while let Some(st) = self.list.as_mut() {
            let w = match st.next_write(mem) {
                Ok(Some(w)) => w,
                Ok(None) => break,
                Err(e) => {
                    obs.diagnostic(&e.into_diagnostic());
                    break;
                }
            };
            let start = st.start;
            if let Some(e) = self.work.check_start(BudgetResource::Writes, true) {
                let d = self.budget_diagnostic(&e, Some(start), Some(w.addr), None);
                obs.diagnostic(&d);
                break;
            }
            self.work.count_write(true);
            st.writes += 1;
            let writes = st.writes;
            match self.write_pica_reg_flow(mem, w.id, w.value, w.mask, Some(w.addr), obs) {
                Flow::Continue => {}
                Flow::Stop => {
                    // Waiting pixels are charged to this submission (as drawn in the list).
                    self.flush_pixels(mem, obs);
                    self.list = None;
                }
                Flow::Jump(new_addr, new_size) => {
                    // The new list may lie where waiting pixels go.
                    self.flush_pixels(mem, obs);
                    // Loop detection: command lists are fixed data and only the CMDBUF
                    // registers steer jumps, so taking the same jump with the same CMDBUF
                    // registers again repeats forever (the hardware hangs). UNVERIFIED: a draw
                    // that renders over the list's own memory could break the cycle; no real
                    // program does that.
                    let base = reg::CMDBUF_SIZE0 as usize;
                    let state: JumpState = (
                        new_addr,
                        new_size,
                        [
                            self.regs[base],
                            self.regs[base + 1],
                            self.regs[base + 2],
                            self.regs[base + 3],
                        ],
                    );
                    if self.jumps_taken.contains(&state) {
                        obs.diagnostic(&Diagnostic {
                            kind: DiagKind::CommandList,
                            draw: None,
                            detail: format!(
                                "command-list loop: the jump at PA 0x{:08X} to 0x{new_addr:08X} ({new_size} bytes) repeats an earlier jump of this submission with the same CMDBUF registers, so the list would run forever; stopped after {writes} writes",
                                w.addr
                            ),
                        });
                        self.list = None;
                    } else {
                        if self.jumps_taken.len() < MAX_JUMPS_TRACKED {
                            self.jumps_taken.insert(state);
                        }
                        obs.engine(&EngineEvent::CommandList {
                            addr: new_addr,
                            size: new_size,
                        });
                        self.list = Some(ListState::new(new_addr, new_size, writes));
                    }
                }
            }
            if self.work.list_blocked() {
                // A budget ran out during this write (reported where it did).
                self.flush_pixels(mem, obs);
                self.list = None;
            }
            if obs.stop_requested() && self.list.is_some() {
                self.flush_pixels(mem, obs);
                return false;
            }
        }
        self.flush_pixels(mem, obs);
        self.list = None;
        self.pipeline.close_immediate(obs);
        true
    }

    /// The stored value of an external register (GPU block or LCD block).
    pub fn external_reg(&self, pa: u32) -> Option<u32> {
        let word = |base: u32, len: usize| {
            pa.checked_sub(base)
                .map(|o| (o / 4) as usize)
                .filter(|&i| i < len)
        };
        if let Some(i) = word(EXT_REG_BASE, EXT_REG_COUNT) {
            return self.ext_regs.get(i).copied();
        }
        word(LCD_REG_BASE, LCD_REG_COUNT).and_then(|i| self.lcd_regs.get(i).copied())
    }

    /// Executes one 32-bit write to an external MMIO register (GPU block, LCD block or the PICA
    /// register window) with its side effects: memory fills, transfers and command-list kicks.
    ///
    /// `cmdlist_size_in_bytes`: CiTraces recorded by Citra hold the command-list size register
    /// (PA 0x104018E0) in bytes; real hardware takes bytes >> 3 (§10.5). Pass `true` for traces.
    pub fn write_external<O: Observer>(
        &mut self,
        mem: &mut PhysMem,
        pa: u32,
        value: u32,
        cmdlist_size_in_bytes: bool,
        obs: &mut O,
    ) {
        // The PICA register window (PA 0x10401000 + 4·id) lies inside the external block. Like
        // [C], writes there are stored in the external register file and only the P3D
        // command-list registers (which alias 0x238/0x23A/0x23C) have side effects.
        let base: u32 = if (EXT_REG_BASE..EXT_REG_BASE + 4 * EXT_REG_COUNT as u32).contains(&pa) {
            EXT_REG_BASE
        } else if (LCD_REG_BASE..LCD_REG_BASE + 4 * LCD_REG_COUNT as u32).contains(&pa) {
            LCD_REG_BASE
        } else {
            obs.diagnostic(&Diagnostic {
                kind: DiagKind::UnknownRegister { id: pa },
                draw: None,
                detail: format!(
                    "write of 0x{value:08X} to PA 0x{pa:08X}, which is no GPU or LCD register"
                ),
            });
            return;
        };
        let idx = ((pa - base) / 4) as usize;
        if !self.work.stream_blocked() {
            if let Some(e) = self.work.check_start(BudgetResource::Writes, false) {
                let d = self.budget_diagnostic(&e, None, None, None);
                obs.diagnostic(&d);
            } else {
                self.work.count_write(false);
            }
        }
        // Register values are stored even when a budget ran out; only side effects are skipped.
        let file: &mut [u32] = if base == EXT_REG_BASE {
            &mut self.ext_regs[..]
        } else {
            &mut self.lcd_regs[..]
        };
        let old = file[idx];
        self.writes_executed += 1;
        let value = match self
            .edit_hooks
            .as_ref()
            .and_then(|h| h.overrides.get(&self.writes_executed))
        {
            Some(o) if o.reg == pa => {
                let m = expand_mask(o.mask.unwrap_or(0xF));
                let v = (old & !m) | (o.value & m);
                if self.edit_hooks.as_ref().is_some_and(|h| h.record) {
                    self.edit_log.push(AppliedEdit::Override {
                        edit: o.edit,
                        source_addr: None,
                        original: (value, 0xF),
                        replaced: (v, 0xF),
                    });
                }
                v
            }
            _ => value,
        };
        let file: &mut [u32] = if base == EXT_REG_BASE {
            &mut self.ext_regs[..]
        } else {
            &mut self.lcd_regs[..]
        };
        file[idx] = value;
        obs.reg_write(&RegWriteEvent {
            space: RegSpace::External,
            id: pa,
            mask: 0xF,
            param: value,
            old,
            new: value,
            source_addr: None,
        });
        if base != EXT_REG_BASE || self.work.stream_blocked() {
            return;
        }
        // A transfer is not started once the frame or trace has used its transfer pixels
        // (issue 18: 1,000 transfers of 4096x4096 took over a minute).
        if pa == external::TRANSFER_TRIGGER
            && value & 1 != 0
            && let Some(e) = self.work.check_start(BudgetResource::TransferPixels, false)
        {
            let mut d = self.budget_diagnostic(&e, None, Some(pa), None);
            d.detail
                .push_str("; the display transfer / texture copy was not run");
            obs.diagnostic(&d);
            return;
        }
        let effect = external::external_side_effect(
            &mut self.ext_regs[..],
            mem,
            pa,
            value,
            cmdlist_size_in_bytes,
            self.pipeline.threads,
            self.pipeline.transfer_scratch(),
            obs,
        );
        if effect.transfer_pixels > 0 {
            let work = WorkCount {
                transfer_pixels: effect.transfer_pixels,
                ..WorkCount::default()
            };
            if let Some(e) = self.work.charge(&work, false) {
                let d = self.budget_diagnostic(&e, None, Some(pa), None);
                obs.diagnostic(&d);
            }
        }
        if let Some(kick) = effect.kick {
            self.run_command_list(mem, kick.addr, kick.size, obs);
            if !self.list_in_progress() {
                external::command_list_finished(&mut self.ext_regs[..]);
            }
        }
    }
}
