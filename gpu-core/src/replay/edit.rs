//! Trace editing: a list of edits applied while a trace replays, and saving a trace with the
//! edits baked in (issue 16, "Edit and re-render").
//!
//! Input: an [`EditList`] (built in code, parsed from the edit-script syntax below, or
//! deserialised from JSON) and a CiTrace. Output: the hooks the command processor runs
//! ([`EditList::compile`], installed by [`crate::replay::Replay::set_edits`]) and, for saving, a
//! new trace ([`save_edited`]; the input is never modified). Registers read: the shader-unit
//! blocks (0x280-0x2DF) and the fixed-attribute FIFO (0x232-0x235) are written by the edits.
//!
//! Two kinds of edit exist:
//!
//! * **Write overrides** (`cmd N: REG=VALUE[/MASK]`): the N-th register write of the trace
//!   (1-based, counted like [`crate::replay::Position::writes`]) is executed with another
//!   parameter and, optionally, another byte-enable mask. Nothing happens when write N does not
//!   address `REG` (the edit is then reported as not applied).
//! * **Injected writes before a draw** (`draw N: ...`): register writes executed right before
//!   draw N (0-based, counted over the whole trace) starts: a register value, a float / integer
//!   / boolean uniform of the vertex or geometry unit, a fixed attribute, or a whole shader
//!   program assembled from picasso source (code and operand descriptors uploaded from word 0,
//!   the entry point set, the source's constants uploaded). Like any upload they stay in effect
//!   until the trace writes the same state again. The upload cursors they move (uniform, code,
//!   descriptor, fixed-attribute FIFOs) are put back afterwards, so the trace's own uploads
//!   continue where they were.
//!
//! Positions name the unedited trace's writes and draws; an edit that changes how many writes
//! or draws run (for example an override of a command-list jump) moves the positions after it.
//!
//! # Edit-script syntax
//!
//! One edit per line; `#` starts a comment; a line starting with `off` is a disabled edit.
//! Numbers are decimal or `0x` hexadecimal; floats are decimal.
//!
//! ```text
//! draw 12: 0x0C0=0x00FF00FF          write register 0x0C0 before draw 12
//! draw 12: 0x0C0=0x00FF00FF/0x3      ... with byte-enable mask 0x3
//! cmd 345: 0x0C0=0x12345678[/MASK]   execute write 345 (to 0x0C0) with this value [and mask]
//! draw 12: vs c4=1,0.5,0,1           VS float uniform c4 (rounded to float24)
//! draw 12: gs c4=f32:1,0.5,0,1       GS float uniform uploaded in float32 mode (exact)
//! draw 12: vs i1=3,0,1,0             integer uniform i1 (x, y, z, w bytes)
//! draw 12: vs b3=1                   boolean uniform b3 (0/1/true/false)
//! draw 12: attr 2=1,0,0,1            fixed attribute 2 (float24)
//! draw 12: vs=shaders/flat.v.pica    replace the VS program (gs= for the geometry shader)
//! off draw 12: vs c4=0,0,0,0         a disabled edit
//! ```

use std::collections::BTreeMap;
use std::sync::Arc;

use pica_cmd::citrace::{
    CiTrace, CiTraceBuilder, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER, StreamEvent,
    TraceSource, WriteWidth, write_words,
};
use pica_cmd::cmdlist::{CmdHeader, ExtraParamWidth};
use serde::{Deserialize, Serialize};
use shader_unit::float::{F24, pack_f24x4, pack_f32x4};

use super::Replay;
use crate::command::gpu::{
    AppliedEdit, CODE_WORDS, EditHooks, Injection, ListSite, OPDESC_WORDS, WriteOverride,
};
use crate::memory::PhysMem;
use crate::regs::reg;

/// A shader unit named by an edit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// The vertex shader unit (registers 0x2B0-0x2DF).
    Vertex,
    /// The geometry shader unit (registers 0x280-0x2AF).
    Geometry,
}

impl Unit {
    /// First register of the unit's block.
    pub fn base(self) -> u32 {
        match self {
            Unit::Vertex => reg::VSH_BASE,
            Unit::Geometry => reg::GSH_BASE,
        }
    }

    /// `vs` or `gs`.
    pub fn short(self) -> &'static str {
        match self {
            Unit::Vertex => "vs",
            Unit::Geometry => "gs",
        }
    }
}

/// A float uniform value as uploaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FloatValue {
    /// True: uploaded in float32 mode (`bits` are IEEE f32); false: float24 (`bits` are the
    /// 24-bit encodings).
    pub f32_mode: bool,
    /// x, y, z, w.
    pub bits: [u32; 4],
}

impl FloatValue {
    /// Float24 values rounded (to nearest even) from `v`.
    pub fn f24(v: [f32; 4]) -> Self {
        Self {
            f32_mode: false,
            bits: v.map(|x| F24::from_f32(x).to_bits()),
        }
    }

    /// Float32 values.
    pub fn f32(v: [f32; 4]) -> Self {
        Self {
            f32_mode: true,
            bits: v.map(f32::to_bits),
        }
    }

    /// The values as f32.
    pub fn to_f32(self) -> [f32; 4] {
        if self.f32_mode {
            self.bits.map(f32::from_bits)
        } else {
            self.bits.map(|b| F24::from_bits(b).to_f32())
        }
    }
}

/// What one edit does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum EditKind {
    /// Execute the `write`-th register write (1-based) with another value and mask.
    OverrideWrite {
        /// 1-based write number.
        write: u64,
        /// The register it addresses (PICA id, or physical address for an external write).
        reg: u32,
        /// New parameter.
        value: u32,
        /// New byte-enable mask, or the write's own.
        mask: Option<u8>,
    },
    /// Write a PICA register right before a draw.
    SetRegister {
        /// Draw index (0-based).
        draw: u64,
        /// Register id (0x000-0x2FF; not a draw trigger, FINALIZE, jump or fixed-attribute port).
        reg: u32,
        /// Parameter.
        value: u32,
        /// Byte-enable mask.
        mask: u8,
    },
    /// Set a float uniform before a draw.
    FloatUniform {
        /// Draw index.
        draw: u64,
        /// Shader unit.
        unit: Unit,
        /// c0-c95.
        index: u8,
        /// Value.
        value: FloatValue,
    },
    /// Set an integer uniform before a draw.
    IntUniform {
        /// Draw index.
        draw: u64,
        /// Shader unit.
        unit: Unit,
        /// i0-i3.
        index: u8,
        /// x, y, z, w.
        value: [u8; 4],
    },
    /// Set a boolean uniform before a draw.
    BoolUniform {
        /// Draw index.
        draw: u64,
        /// Shader unit.
        unit: Unit,
        /// b0-b15.
        index: u8,
        /// Value.
        value: bool,
    },
    /// Set a fixed (default) attribute before a draw.
    FixedAttribute {
        /// Draw index.
        draw: u64,
        /// Attribute 0-11.
        index: u8,
        /// Float24 encodings of x, y, z, w.
        bits: [u32; 4],
    },
    /// Replace a unit's program before a draw by picasso assembly.
    Shader {
        /// Draw index.
        draw: u64,
        /// Shader unit.
        unit: Unit,
        /// Name used in diagnostics (the file name).
        name: String,
        /// Picasso source text.
        source: String,
    },
}

impl EditKind {
    /// The draw an injected edit precedes (`None` for write overrides).
    pub fn draw(&self) -> Option<u64> {
        match *self {
            EditKind::OverrideWrite { .. } => None,
            EditKind::SetRegister { draw, .. }
            | EditKind::FloatUniform { draw, .. }
            | EditKind::IntUniform { draw, .. }
            | EditKind::BoolUniform { draw, .. }
            | EditKind::FixedAttribute { draw, .. }
            | EditKind::Shader { draw, .. } => Some(draw),
        }
    }
}

/// One edit of a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Edit {
    /// Disabled edits are kept in the list but do nothing.
    pub enabled: bool,
    /// What it does.
    #[serde(flatten)]
    pub kind: EditKind,
}

impl Edit {
    /// An enabled edit.
    pub fn new(kind: EditKind) -> Self {
        Self {
            enabled: true,
            kind,
        }
    }
}

/// An ordered list of edits (later edits at the same draw run after earlier ones).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct EditList {
    /// The edits.
    pub edits: Vec<Edit>,
}

/// Problems with an edit list or with saving an edited trace.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// A line of an edit script does not parse.
    #[error("line {line}: {message}")]
    Parse {
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// An edit names something that does not exist or cannot be edited.
    #[error("edit {edit} ({text}): {message}")]
    Invalid {
        /// Index of the edit in the list.
        edit: usize,
        /// The edit in script syntax.
        text: String,
        /// What is wrong.
        message: String,
    },
    /// A shader edit's source does not assemble.
    #[error("edit {edit}: {name} does not assemble:\n{}", errors.join("\n"))]
    Assembly {
        /// Index of the edit.
        edit: usize,
        /// Source name.
        name: String,
        /// The assembler's errors, `file:line:column: error: ...` each.
        errors: Vec<String>,
    },
    /// Enabled edits were never applied while replaying (no such draw or write, or the write
    /// addresses another register).
    #[error("edit(s) never applied during the replay: {}", .0.join("; "))]
    NotApplied(Vec<String>),
    /// An edit cannot be expressed in a saved trace.
    #[error("edit {edit} cannot be saved: {message}")]
    Unsavable {
        /// Index of the edit.
        edit: usize,
        /// Why.
        message: String,
    },
    /// The trace could not be read or written.
    #[error(transparent)]
    Build(#[from] pica_cmd::citrace::BuildError),
    /// The trace could not be read.
    #[error(transparent)]
    Trace(#[from] pica_cmd::citrace::CiTraceError),
}

/// Registers an injected write may not address: they would start draws, end or redirect the
/// command list, or feed the fixed-attribute FIFO (which has its own edit).
fn forbidden_injection(id: u32) -> Option<&'static str> {
    match id {
        reg::FINALIZE => Some("FINALIZE would end the command list"),
        reg::DRAWARRAYS | reg::DRAWELEMENTS => Some("a draw trigger would start a draw"),
        reg::CMDBUF_JUMP0 | reg::CMDBUF_JUMP1 => Some("a jump would redirect the command list"),
        reg::FIXEDATTRIB_INDEX..=reg::FIXEDATTRIB_DATA2 => {
            Some("the fixed-attribute FIFO is edited with `attr K=...`")
        }
        _ => None,
    }
}

fn write(id: u32, param: u32) -> Injection {
    Injection::Write {
        id,
        param,
        mask: 0xF,
    }
}

/// The writes that upload a float uniform.
fn float_uniform_writes(unit: Unit, index: u8, value: FloatValue, out: &mut Vec<Injection>) {
    let base = unit.base();
    out.push(write(
        base + reg::SH_FLOATUNIFORM_INDEX,
        u32::from(index) | (u32::from(value.f32_mode) << 31),
    ));
    if value.f32_mode {
        for w in pack_f32x4(value.bits.map(f32::from_bits)) {
            out.push(write(base + reg::SH_FLOATUNIFORM_DATA0, w));
        }
    } else {
        for w in pack_f24x4(value.bits.map(F24::from_bits)) {
            out.push(write(base + reg::SH_FLOATUNIFORM_DATA0, w));
        }
    }
}

impl EditList {
    /// Parses an edit script (see the module docs). `load` reads the file a shader edit names.
    pub fn parse_script(
        text: &str,
        load: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<Self, EditError> {
        let mut list = EditList::default();
        for (i, line) in text.lines().enumerate() {
            if let Some(e) = parse_line(line, load).map_err(|message| EditError::Parse {
                line: i + 1,
                message,
            })? {
                list.edits.push(e);
            }
        }
        Ok(list)
    }

    /// The list in script syntax (shader edits name their source by `name`).
    pub fn to_script(&self) -> String {
        let mut s = String::new();
        for e in &self.edits {
            if !e.enabled {
                s.push_str("off ");
            }
            s.push_str(&describe(&e.kind));
            s.push('\n');
        }
        s
    }

    /// Compiles the enabled edits into the command processor's hooks. Shader sources are
    /// assembled here; every problem is reported with the edit's index.
    pub fn compile(&self) -> Result<EditHooks, EditError> {
        let mut hooks = EditHooks::default();
        for (i, e) in self.edits.iter().enumerate() {
            if !e.enabled {
                continue;
            }
            let invalid = |message: String| EditError::Invalid {
                edit: i,
                text: describe(&e.kind),
                message,
            };
            let mut inj = Vec::new();
            match &e.kind {
                &EditKind::OverrideWrite {
                    write,
                    reg,
                    value,
                    mask,
                } => {
                    if write == 0 {
                        return Err(invalid("writes are numbered from 1".into()));
                    }
                    if mask.is_some_and(|m| m > 0xF) {
                        return Err(invalid("the byte-enable mask has 4 bits (0x0-0xF)".into()));
                    }
                    if hooks
                        .overrides
                        .insert(
                            write,
                            WriteOverride {
                                edit: i,
                                reg,
                                value,
                                mask,
                            },
                        )
                        .is_some()
                    {
                        return Err(invalid(format!("write {write} is overridden twice")));
                    }
                    continue;
                }
                &EditKind::SetRegister {
                    reg: id,
                    value,
                    mask,
                    ..
                } => {
                    if id >= 0x300 {
                        return Err(invalid(format!(
                            "register 0x{id:X} does not exist (0x000-0x2FF)"
                        )));
                    }
                    if mask > 0xF {
                        return Err(invalid("the byte-enable mask has 4 bits (0x0-0xF)".into()));
                    }
                    if let Some(why) = forbidden_injection(id) {
                        return Err(invalid(format!("register 0x{id:03X} cannot be set: {why}")));
                    }
                    inj.push(Injection::Write {
                        id,
                        param: value,
                        mask,
                    });
                }
                &EditKind::FloatUniform {
                    unit, index, value, ..
                } => {
                    if index >= 96 {
                        return Err(invalid("float uniforms are c0-c95".into()));
                    }
                    float_uniform_writes(unit, index, value, &mut inj);
                }
                &EditKind::IntUniform {
                    unit, index, value, ..
                } => {
                    if index >= 4 {
                        return Err(invalid("integer uniforms are i0-i3".into()));
                    }
                    inj.push(write(
                        unit.base() + reg::SH_INTUNIFORM_I0 + u32::from(index),
                        u32::from_le_bytes(value),
                    ));
                }
                &EditKind::BoolUniform {
                    unit, index, value, ..
                } => {
                    if index >= 16 {
                        return Err(invalid("boolean uniforms are b0-b15".into()));
                    }
                    inj.push(Injection::SetBits {
                        id: unit.base() + reg::SH_BOOLUNIFORM,
                        bits: 1 << index,
                        value: u32::from(value) << index,
                    });
                }
                &EditKind::FixedAttribute { index, bits, .. } => {
                    if index >= 12 {
                        return Err(invalid("fixed attributes are 0-11".into()));
                    }
                    inj.push(write(reg::FIXEDATTRIB_INDEX, u32::from(index)));
                    let words = pack_f24x4(bits.map(F24::from_bits));
                    for (k, w) in words.into_iter().enumerate() {
                        inj.push(write(reg::FIXEDATTRIB_DATA0 + k as u32, w));
                    }
                }
                EditKind::Shader {
                    unit, name, source, ..
                } => shader_writes(i, *unit, name, source, &mut inj)?,
            }
            if let Some(draw) = e.kind.draw() {
                hooks.before_draw.entry(draw).or_default().push((i, inj));
            }
        }
        Ok(hooks)
    }
}

/// Assembles a shader edit and appends its upload.
fn shader_writes(
    edit: usize,
    unit: Unit,
    name: &str,
    source: &str,
    out: &mut Vec<Injection>,
) -> Result<(), EditError> {
    let asm = shader_unit::asm::assemble(&[(name, source)]).map_err(|e| EditError::Assembly {
        edit,
        name: name.to_string(),
        errors: e.errors().map(|e| e.headline()).collect(),
    })?;
    let Some(entry) = asm.entries.first() else {
        return Err(EditError::Assembly {
            edit,
            name: name.to_string(),
            errors: vec![format!(
                "{name}: error: the source declares no shader entry"
            )],
        });
    };
    if asm.program.len() > CODE_WORDS || asm.opdescs.len() > OPDESC_WORDS {
        return Err(EditError::Assembly {
            edit,
            name: name.to_string(),
            errors: vec![format!(
                "{name}: error: {} program words / {} operand descriptors do not fit ({CODE_WORDS} / {OPDESC_WORDS})",
                asm.program.len(),
                asm.opdescs.len()
            )],
        });
    }
    let base = unit.base();
    out.push(write(base + reg::SH_CODETRANSFER_INDEX, 0));
    for &w in &asm.program {
        out.push(write(base + reg::SH_CODETRANSFER_DATA0, w));
    }
    out.push(write(base + reg::SH_OPDESCS_INDEX, 0));
    for &w in &asm.opdescs {
        out.push(write(base + reg::SH_OPDESCS_DATA0, w));
    }
    out.push(Injection::SetBits {
        id: base + reg::SH_ENTRYPOINT,
        bits: 0xFFFF,
        value: entry.entry_start & 0xFFFF,
    });
    for c in &entry.constants {
        match *c {
            shader_unit::asm::AsmConstant::Float { reg: r, value } => float_uniform_writes(
                unit,
                r,
                FloatValue {
                    f32_mode: false,
                    bits: value,
                },
                out,
            ),
            shader_unit::asm::AsmConstant::Int { reg: r, value } => out.push(write(
                base + reg::SH_INTUNIFORM_I0 + u32::from(r & 3),
                u32::from_le_bytes(value),
            )),
            shader_unit::asm::AsmConstant::Bool { reg: r, value } => out.push(Injection::SetBits {
                id: base + reg::SH_BOOLUNIFORM,
                bits: 1 << (r & 15),
                value: u32::from(value) << (r & 15),
            }),
        }
    }
    Ok(())
}

/// The first write number and the first draw at which two compiled edit lists act
/// differently (`u64::MAX` when they never do).
pub fn first_difference(a: &EditHooks, b: &EditHooks) -> (u64, u64) {
    let strip = |o: Option<&WriteOverride>| o.map(|o| (o.reg, o.value, o.mask));
    let first_write = a
        .overrides
        .keys()
        .chain(b.overrides.keys())
        .copied()
        .filter(|k| strip(a.overrides.get(k)) != strip(b.overrides.get(k)))
        .min()
        .unwrap_or(u64::MAX);
    let writes = |v: Option<&Vec<(usize, Vec<Injection>)>>| -> Vec<Injection> {
        v.map(|v| v.iter().flat_map(|(_, w)| w.iter().copied()).collect())
            .unwrap_or_default()
    };
    let first_draw = a
        .before_draw
        .keys()
        .chain(b.before_draw.keys())
        .copied()
        .filter(|k| writes(a.before_draw.get(k)) != writes(b.before_draw.get(k)))
        .min()
        .unwrap_or(u64::MAX);
    (first_write, first_draw)
}

fn floats(v: [f32; 4]) -> String {
    v.iter()
        .map(|x| format!("{x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// One edit in script syntax.
pub fn describe(kind: &EditKind) -> String {
    let mask_suffix = |m: Option<u8>| m.map(|m| format!("/0x{m:X}")).unwrap_or_default();
    match kind {
        EditKind::OverrideWrite {
            write,
            reg,
            value,
            mask,
        } => format!(
            "cmd {write}: 0x{reg:03X}=0x{value:08X}{}",
            mask_suffix(*mask)
        ),
        EditKind::SetRegister {
            draw,
            reg,
            value,
            mask,
        } => format!(
            "draw {draw}: 0x{reg:03X}=0x{value:08X}{}",
            if *mask == 0xF {
                String::new()
            } else {
                mask_suffix(Some(*mask))
            }
        ),
        EditKind::FloatUniform {
            draw,
            unit,
            index,
            value,
        } => format!(
            "draw {draw}: {} c{index}={}{}",
            unit.short(),
            if value.f32_mode { "f32:" } else { "" },
            floats(value.to_f32())
        ),
        EditKind::IntUniform {
            draw,
            unit,
            index,
            value,
        } => format!(
            "draw {draw}: {} i{index}={},{},{},{}",
            unit.short(),
            value[0],
            value[1],
            value[2],
            value[3]
        ),
        EditKind::BoolUniform {
            draw,
            unit,
            index,
            value,
        } => format!(
            "draw {draw}: {} b{index}={}",
            unit.short(),
            u8::from(*value)
        ),
        EditKind::FixedAttribute { draw, index, bits } => format!(
            "draw {draw}: attr {index}={}",
            floats(bits.map(|b| F24::from_bits(b).to_f32()))
        ),
        EditKind::Shader {
            draw, unit, name, ..
        } => format!("draw {draw}: {}={name}", unit.short()),
    }
}

fn parse_u64(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(&h.replace('_', ""), 16),
        None => t.replace('_', "").parse(),
    };
    r.map_err(|_| format!("'{t}' is not a number"))
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let v = parse_u64(s)?;
    u32::try_from(v).map_err(|_| format!("'{}' does not fit 32 bits", s.trim()))
}

fn parse_floats(s: &str) -> Result<[f32; 4], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.is_empty() || parts.len() > 4 {
        return Err(format!(
            "expected 1 to 4 comma-separated numbers, got '{s}'"
        ));
    }
    // Missing components: y, z = 0, w = 1.
    let mut v = [0.0, 0.0, 0.0, 1.0];
    for (k, p) in parts.iter().enumerate() {
        v[k] = p
            .parse::<f32>()
            .map_err(|_| format!("'{p}' is not a number"))?;
    }
    Ok(v)
}

/// Parses one script line; `Ok(None)` for blank and comment lines.
fn parse_line(
    line: &str,
    load: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<Option<Edit>, String> {
    let line = match line.find('#') {
        Some(i) => &line[..i],
        None => line,
    }
    .trim();
    if line.is_empty() {
        return Ok(None);
    }
    let (enabled, line) = match line.strip_prefix("off ") {
        Some(rest) => (false, rest.trim()),
        None => (true, line),
    };
    let (anchor, body) = line
        .split_once(':')
        .ok_or("expected 'draw N: ...' or 'cmd N: ...'")?;
    let mut a = anchor.split_whitespace();
    let (what, n) = (a.next().unwrap_or(""), a.next().unwrap_or(""));
    if a.next().is_some() {
        return Err(format!(
            "expected 'draw N' or 'cmd N' before ':', got '{anchor}'"
        ));
    }
    let n = parse_u64(n)?;
    let body = body.trim();
    let (lhs, rhs) = body
        .split_once('=')
        .ok_or_else(|| format!("expected 'WHAT=VALUE' after ':', got '{body}'"))?;
    let (lhs, rhs) = (lhs.trim(), rhs.trim());
    let reg_value = |rhs: &str| -> Result<(u32, Option<u8>), String> {
        let (v, m) = match rhs.split_once('/') {
            Some((v, m)) => (v, Some(m)),
            None => (rhs, None),
        };
        let value = parse_u32(v)?;
        let mask = m
            .map(|m| {
                parse_u32(m).and_then(|m| {
                    u8::try_from(m)
                        .ok()
                        .filter(|m| *m <= 0xF)
                        .ok_or_else(|| format!("mask 0x{m:X} has more than 4 bits"))
                })
            })
            .transpose()?;
        Ok((value, mask))
    };
    let kind = match what {
        "cmd" => {
            let (value, mask) = reg_value(rhs)?;
            EditKind::OverrideWrite {
                write: n,
                reg: parse_u32(lhs)?,
                value,
                mask,
            }
        }
        "draw" => {
            let mut words = lhs.split_whitespace();
            let first = words.next().unwrap_or("");
            let second = words.next();
            let unit = match first {
                "vs" => Some(Unit::Vertex),
                "gs" => Some(Unit::Geometry),
                _ => None,
            };
            match (unit, second) {
                (Some(unit), None) => {
                    let source = load(rhs)?;
                    EditKind::Shader {
                        draw: n,
                        unit,
                        name: rhs.to_string(),
                        source,
                    }
                }
                (Some(unit), Some(r)) => {
                    let (class, idx) = r.split_at(1.min(r.len()));
                    let index = u8::try_from(parse_u64(idx)?)
                        .map_err(|_| format!("'{r}': index too large"))?;
                    match class {
                        "c" => {
                            let value = match rhs.strip_prefix("f32:") {
                                Some(v) => FloatValue::f32(parse_floats(v)?),
                                None => FloatValue::f24(parse_floats(rhs)?),
                            };
                            EditKind::FloatUniform {
                                draw: n,
                                unit,
                                index,
                                value,
                            }
                        }
                        "i" => {
                            let parts: Vec<&str> = rhs.split(',').collect();
                            if parts.len() != 4 {
                                return Err(format!("expected x,y,z,w bytes, got '{rhs}'"));
                            }
                            let mut value = [0u8; 4];
                            for (k, p) in parts.iter().enumerate() {
                                value[k] = u8::try_from(parse_u64(p)?)
                                    .map_err(|_| format!("'{p}' is not a byte"))?;
                            }
                            EditKind::IntUniform {
                                draw: n,
                                unit,
                                index,
                                value,
                            }
                        }
                        "b" => EditKind::BoolUniform {
                            draw: n,
                            unit,
                            index,
                            value: match rhs {
                                "1" | "true" => true,
                                "0" | "false" => false,
                                _ => return Err(format!("expected 0/1/true/false, got '{rhs}'")),
                            },
                        },
                        _ => {
                            return Err(format!(
                                "expected cN, iN or bN after '{first}', got '{r}'"
                            ));
                        }
                    }
                }
                (None, Some(k)) if first == "attr" => EditKind::FixedAttribute {
                    draw: n,
                    index: u8::try_from(parse_u64(k)?)
                        .map_err(|_| format!("'{k}': attribute index too large"))?,
                    bits: parse_floats(rhs)?.map(|x| F24::from_f32(x).to_bits()),
                },
                (None, None) => {
                    let (value, mask) = reg_value(rhs)?;
                    EditKind::SetRegister {
                        draw: n,
                        reg: parse_u32(first)?,
                        value,
                        mask: mask.unwrap_or(0xF),
                    }
                }
                _ => return Err(format!("cannot read '{lhs}' (see the edit-script syntax)")),
            }
        }
        _ => return Err(format!("expected 'draw N' or 'cmd N', got '{what}'")),
    };
    Ok(Some(Edit { enabled, kind }))
}

/// Where injected command lists are placed while an edited trace runs: the upper half of DSP
/// RAM, whose previous contents are loaded back right after each use.
pub const SCRATCH_BASE: u32 = 0x1FF4_0000;
/// Room for one injected list (a whole program plus its descriptors fits).
pub const SCRATCH_SIZE: u32 = 0x4_0000;

/// What happened while saving an edited trace.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SaveReport {
    /// Stream elements of the input.
    pub elements_in: usize,
    /// Stream elements written.
    pub elements_out: usize,
    /// Write overrides baked (command words patched or stream writes rewritten).
    pub overrides: usize,
    /// Draws before which writes were inserted (each splits its submission).
    pub injections: usize,
}

/// What the recording pass saw at one stream element.
struct ElementEdits {
    log: Vec<AppliedEdit>,
    mem_before: PhysMem,
    cmdlist_regs: (u32, u32),
}

/// Writes `trace` with `edits` baked in: overridden command-list words are patched by memory
/// loads around their submission (and put back after it), overridden stream writes are
/// rewritten, and a submission containing a draw with injected writes is split at the draw's
/// command into parts with an inserted command list (loaded at [`SCRATCH_BASE`], whose old
/// contents are restored) in between. The result replays exactly like the edited replay;
/// editing nothing gives the input's elements unchanged. Fails when an enabled edit is never
/// applied or cannot be expressed (see [`EditError`]).
pub fn save_edited<S: TraceSource>(
    trace: CiTrace<S>,
    edits: &EditList,
) -> Result<(CiTraceBuilder, SaveReport), EditError> {
    let mut hooks = edits.compile()?;
    hooks.record = true;
    let mut replay = Replay::new(trace);
    replay.set_edit_hooks(Some(Arc::new(hooks)));
    let mut at: BTreeMap<usize, ElementEdits> = BTreeMap::new();
    let mut applied = vec![false; edits.edits.len()];
    while !replay.at_end() {
        let element = replay.pos.element;
        let mem_before = replay.mem.clone();
        let cmdlist_regs = (
            replay.gpu.external_reg(PA_CMDLIST_SIZE).unwrap_or(0),
            replay.gpu.external_reg(PA_CMDLIST_ADDR).unwrap_or(0),
        );
        replay.step_element(&mut ());
        if replay.gpu.edit_log.is_empty() {
            continue;
        }
        let log = std::mem::take(&mut replay.gpu.edit_log);
        for a in &log {
            match a {
                AppliedEdit::Override { edit, .. } => applied[*edit] = true,
                AppliedEdit::Injected { edits, .. } => {
                    for &e in edits {
                        applied[e] = true;
                    }
                }
            }
        }
        let entry = at.entry(element).or_insert(ElementEdits {
            log: Vec::new(),
            mem_before,
            cmdlist_regs,
        });
        entry.log.extend(log);
    }
    let missing: Vec<String> = edits
        .edits
        .iter()
        .enumerate()
        .filter(|(i, e)| e.enabled && !applied[*i])
        .map(|(i, e)| format!("edit {i} ({})", describe(&e.kind)))
        .collect();
    if !missing.is_empty() {
        return Err(EditError::NotApplied(missing));
    }
    let mut trace = replay.into_trace();
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    b.layout(trace.layout());
    let mut report = SaveReport {
        elements_in: trace.elements().len(),
        ..SaveReport::default()
    };
    let mut buf = Vec::new();
    for i in 0..trace.elements().len() {
        let Some(ev) = trace.event(i) else { continue };
        let raw = trace.elements()[i];
        let Some(ed) = at.get(&i) else {
            copy_element(&mut trace, &mut b, i, ev, raw, &mut buf)?;
            continue;
        };
        bake_element(&mut b, ev, raw, ed, &mut report)?;
    }
    report.elements_out = b.element_count();
    Ok((b, report))
}

fn copy_element<S: TraceSource>(
    trace: &mut CiTrace<S>,
    b: &mut CiTraceBuilder,
    i: usize,
    ev: StreamEvent,
    raw: pica_cmd::citrace::RawElement,
    buf: &mut Vec<u8>,
) -> Result<(), EditError> {
    match ev {
        StreamEvent::MemoryLoad(m) => {
            trace.read_blob_into(i, buf)?;
            b.memory_load(m.physical_address, buf)?;
        }
        _ => {
            b.raw_element(raw)?;
        }
    }
    Ok(())
}

/// The start of the command whose last write ends at `cursor`, walking the list from `start`
/// in `mem` the way the command processor reads it.
fn command_ending_at(mem: &PhysMem, start: u32, end: u64, cursor: u64) -> Option<u32> {
    let mut cur = u64::from(start);
    let mut steps = 0u32;
    while cur + 8 <= end && steps < 1 << 22 {
        steps += 1;
        let at = u32::try_from(cur).ok()?;
        let header = mem.read_u32(at.wrapping_add(4)).ok()?;
        let extra = CmdHeader(header).extra_params(ExtraParamWidth::Bits8);
        let next = cur + 8 + 4 * u64::from(extra);
        if next == cursor {
            return Some(at);
        }
        cur = next;
        if !(cur - u64::from(start)).is_multiple_of(8) {
            cur += 4;
        }
    }
    None
}

/// Encodes writes as a command list of single-write commands.
fn encode_list(writes: &[(u32, u32, u8)]) -> Vec<u8> {
    let mut out = Vec::with_capacity(writes.len() * 8);
    for &(id, param, mask) in writes {
        out.extend_from_slice(&param.to_le_bytes());
        out.extend_from_slice(&((id & 0xFFFF) | (u32::from(mask & 0xF) << 16)).to_le_bytes());
    }
    out
}

/// Where a submission is split to insert writes.
struct Cut<'a> {
    /// The command the inserted writes precede.
    at: u32,
    /// Start of the submitted buffer.
    start: u32,
    /// Its end (exclusive).
    end: u64,
    /// The writes to insert.
    writes: &'a [(u32, u32, u8)],
    /// The first edit involved (for errors).
    edit: usize,
}

fn bake_element(
    b: &mut CiTraceBuilder,
    ev: StreamEvent,
    raw: pica_cmd::citrace::RawElement,
    ed: &ElementEdits,
    report: &mut SaveReport,
) -> Result<(), EditError> {
    let mut patches: Vec<(u32, u32, u32)> = Vec::new(); // (addr, new, old)
    let mut stream_value: Option<u32> = None;
    let mut cuts: Vec<Cut<'_>> = Vec::new();
    for a in &ed.log {
        match a {
            AppliedEdit::Override {
                edit,
                source_addr: None,
                replaced,
                ..
            } => {
                stream_value = Some(replaced.0);
                report.overrides += 1;
                let _ = edit;
            }
            AppliedEdit::Override {
                edit,
                source_addr: Some(addr),
                original,
                replaced,
            } => {
                let old = ed
                    .mem_before
                    .read_u32(*addr)
                    .map_err(|_| EditError::Unsavable {
                        edit: *edit,
                        message: format!("command word at 0x{addr:08X} is unmapped"),
                    })?;
                patches.push((*addr, replaced.0, old));
                if replaced.1 != original.1 {
                    let haddr = addr.wrapping_add(4);
                    let header = ed.mem_before.read_u32(haddr).unwrap_or(0);
                    let h = CmdHeader(header);
                    if h.mask() != original.1 || h.extra_params(ExtraParamWidth::Bits8) != 0 {
                        return Err(EditError::Unsavable {
                            edit: *edit,
                            message: format!(
                                "the write at 0x{addr:08X} is part of a command with several parameters, which share one mask"
                            ),
                        });
                    }
                    let new = (header & !(0xF << 16)) | (u32::from(replaced.1) << 16);
                    patches.push((haddr, new, header));
                }
                report.overrides += 1;
            }
            AppliedEdit::Injected {
                edits,
                draw,
                immediate,
                site,
                writes,
            } => {
                let edit = edits.first().copied().unwrap_or(0);
                let unsavable = |message: String| EditError::Unsavable { edit, message };
                // The inserted list runs before the command that completes the first vertex,
                // while earlier words of that vertex may already sit in the FIFO.
                if *immediate
                    && writes
                        .iter()
                        .any(|w| (reg::FIXEDATTRIB_INDEX..=reg::FIXEDATTRIB_DATA2).contains(&w.0))
                {
                    return Err(unsavable(format!(
                        "draw {draw} is an immediate-mode draw, whose vertices go through the fixed-attribute FIFO this edit writes"
                    )));
                }
                let Some(ListSite {
                    start,
                    end,
                    cursor,
                    current_cmd,
                    in_jump,
                }) = *site
                else {
                    return Err(unsavable(format!(
                        "draw {draw} did not come from a command list"
                    )));
                };
                if in_jump {
                    return Err(unsavable(format!(
                        "draw {draw} is in a command buffer reached by a jump; only submitted buffers can be split"
                    )));
                }
                let at = match current_cmd {
                    Some(c) => Some(c),
                    None => command_ending_at(&ed.mem_before, start, end, cursor),
                }
                .ok_or_else(|| unsavable(format!("the command of draw {draw} was not found")))?;
                let bytes = writes.len() as u64 * 8;
                if bytes > u64::from(SCRATCH_SIZE) {
                    return Err(unsavable(format!(
                        "{bytes} bytes of inserted commands exceed the {SCRATCH_SIZE}-byte scratch area"
                    )));
                }
                cuts.push(Cut {
                    at,
                    start,
                    end,
                    writes,
                    edit,
                });
                report.injections += 1;
            }
        }
    }
    for &(addr, new, _) in &patches {
        b.memory_load(addr, &new.to_le_bytes())?;
    }
    if cuts.is_empty() {
        match (ev, stream_value) {
            (StreamEvent::RegisterWrite(w), Some(v)) => {
                if write_words(&w).count() != 1 {
                    return Err(EditError::Unsavable {
                        edit: 0,
                        message: "a 64-bit stream write cannot be overridden".into(),
                    });
                }
                b.register_write_sized(w.physical_address & !3, WriteWidth::Bits32, u64::from(v))?;
            }
            _ => {
                b.raw_element(raw)?;
            }
        }
    } else {
        cuts.sort_by_key(|c| c.at);
        let (start, end) = (cuts[0].start, cuts[0].end);
        if cuts.iter().any(|c| c.start != start) {
            return Err(EditError::Unsavable {
                edit: cuts[0].edit,
                message: "inserted writes in two different buffers of one submission".into(),
            });
        }
        let submit = |b: &mut CiTraceBuilder, from: u64, to: u64| {
            if to > from {
                b.register_write(PA_CMDLIST_SIZE, (to - from) as u32);
                b.register_write(PA_CMDLIST_ADDR, (from >> 3) as u32);
                b.register_write(PA_CMDLIST_TRIGGER, 1);
            }
        };
        let mut from = u64::from(start);
        let mut scratch_used = 0usize;
        for &Cut { at, writes, .. } in &cuts {
            submit(b, from, u64::from(at));
            let list = encode_list(writes);
            scratch_used = scratch_used.max(list.len());
            b.memory_load(SCRATCH_BASE, &list)?;
            submit(
                b,
                u64::from(SCRATCH_BASE),
                u64::from(SCRATCH_BASE) + list.len() as u64,
            );
            from = u64::from(at);
        }
        submit(b, from, end);
        let old = ed
            .mem_before
            .read_vec(SCRATCH_BASE, scratch_used)
            .unwrap_or_else(|_| vec![0; scratch_used]);
        b.memory_load(SCRATCH_BASE, &old)?;
        b.register_write(PA_CMDLIST_SIZE, ed.cmdlist_regs.0);
        b.register_write(PA_CMDLIST_ADDR, ed.cmdlist_regs.1);
    }
    for &(addr, _, old) in patches.iter().rev() {
        b.memory_load(addr, &old.to_le_bytes())?;
    }
    Ok(())
}
