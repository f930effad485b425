//! What a write to a data port (FIFO) or trigger register did: "`c4 = (1, 0.5, 0, 1)`" instead
//! of "`VSH_FLOATUNIFORM_DATA[0] = 0x3F800000`", and which registers are actions rather than
//! state (a repeated value there is not "redundant").
//!
//! Stage: viewer analysis of command pages. Input: the FIFO cursors of the GPU before the first
//! write of a page ([`PortTracker::new`]) and the page's register-write events in order. Output:
//! one [`PortEffect`] per data-port write. The cursors follow `gpu_core::gpu` exactly:
//! VSH/GSH_FLOATUNIFORM_INDEX (0x2C0/0x290: bits 0-7 target, bit 31 f32 mode; a write resets the
//! partial vector) and DATA ports (3 packed f24 words or 4 f32 words per vec4, the index
//! auto-increments after each vector), CODETRANSFER/OPDESCS_INDEX (12 bits, auto-increment),
//! LIGHTING_LUT_INDEX (0x1C5: bits 0-7 entry, 8-12 table), FOG_LUT_INDEX (0x0E6: bits 0-15),
//! PROCTEX_LUT (0x0AF: bits 0-7 entry, 8-11 table), FIXEDATTRIB_INDEX (0x232: bits 0-3, 0xF =
//! immediate-mode vertex) with 3 packed f24 words per vec4, VSH_COM_MODE (0x244 bit 0 = 0: the
//! vertex unit's uploads are mirrored into the geometry unit).

use gpu_core::debug::{RegSpace, RegWriteEvent};
use gpu_core::gpu::Gpu;
use pica_cmd::regs::{FieldKind, PortKind, ShaderUnit};
use shader_unit::float::{unpack_f24x4_f32, unpack_f32x4};

use super::widgets::fmt_vec4;

/// Index registers of the FIFOs: writing one resets a cursor even when the value repeats.
const INDEX_REGS: [u16; 11] = [
    0x0AF, // PROCTEX_LUT
    0x0E6, // FOG_LUT_INDEX
    0x1C5, // LIGHTING_LUT_INDEX
    0x232, // FIXEDATTRIB_INDEX
    0x290, 0x29B, 0x2A5, // GSH float uniform, code, opdesc index
    0x2C0, 0x2CB, 0x2D5, // VSH float uniform, code, opdesc index
    0x123, // GAS_LUT_INDEX
];

/// Other registers whose every write has a side effect whatever the value (the catalogue marks
/// draw kicks and command-list jumps as trigger fields; these are listed by id because their
/// fields are state-like): PRIMITIVE_CONFIG and RESTART_PRIMITIVE reset primitive assembly.
const ACTION_REGS: [u16; 2] = [0x25E, 0x25F];

/// True if a write to this register acts (a trigger, a data port, a FIFO index, a command-list
/// jump or kick): such a write is never "redundant", even when it stores the same value.
pub fn acts_on_write(ev: &RegWriteEvent) -> bool {
    match ev.space {
        RegSpace::Pica => {
            let Ok(id) = u16::try_from(ev.id) else {
                return false;
            };
            if INDEX_REGS.contains(&id) || ACTION_REGS.contains(&id) {
                return true;
            }
            match pica_cmd::regs::lookup(id) {
                Some(def) => {
                    def.port.is_some()
                        || def
                            .fields
                            .iter()
                            .any(|f| matches!(f.kind, FieldKind::Trigger))
                }
                None => false,
            }
        }
        // The external block's actions: memory-fill and transfer controls (their start bit),
        // the command-list kick.
        RegSpace::External => pica_cmd::regs::external::lookup_pa(ev.id).is_some_and(|def| {
            (def.name.starts_with("MEMFILL") && def.name.ends_with("_CONTROL"))
                || def.name == "PPF_CONTROL"
                || def.name == "P3D_CMDLIST_TRIGGER"
                || def
                    .fields
                    .iter()
                    .any(|f| matches!(f.kind, FieldKind::Trigger))
        }),
    }
}

/// What one data-port write did, as text for the command list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortEffect {
    /// Short text, e.g. `VS c4 = (1, 0.5, 0, 1) [f32]` or `VS c4 word 2/3 [f24]`.
    pub text: String,
    /// True when the write completed something (a vector, a LUT entry, a code word); false for
    /// the first words of a vector still in the FIFO.
    pub complete: bool,
}

#[derive(Clone, Copy, Debug, Default)]
struct UnitCursors {
    float_index: u32,
    f32_mode: bool,
    words: [u32; 4],
    count: u8,
    code_index: u32,
    opdesc_index: u32,
}

impl UnitCursors {
    fn from_gpu(u: &gpu_core::gpu::ShaderUnitMemory) -> Self {
        Self {
            float_index: u.float_index,
            f32_mode: u.float_mode_f32,
            words: u.float_words,
            count: u.float_count,
            code_index: u.code_index,
            opdesc_index: u.opdesc_index,
        }
    }
}

/// Follows the GPU's upload cursors through a stream of register writes.
#[derive(Clone, Debug)]
pub struct PortTracker {
    units: [UnitCursors; 2],
    com_mode: u32,
    lighting: u32,
    fog: u32,
    proctex: u32,
    fixed_index: u32,
    fixed_words: [u32; 3],
    fixed_count: u8,
}

fn unit_name(u: usize) -> &'static str {
    if u == 0 { "VS" } else { "GS" }
}

impl PortTracker {
    /// A tracker positioned where `gpu` is (before the next write).
    pub fn new(gpu: &Gpu) -> Self {
        Self {
            units: [
                UnitCursors::from_gpu(&gpu.vs),
                UnitCursors::from_gpu(&gpu.gs),
            ],
            com_mode: gpu.regs[0x244],
            lighting: gpu.regs[0x1C5],
            fog: gpu.regs[0x0E6],
            proctex: gpu.regs[0x0AF],
            fixed_index: gpu.fixed_fifo.index,
            fixed_words: gpu.fixed_fifo.words,
            fixed_count: gpu.fixed_fifo.count,
        }
    }

    /// A tracker with every cursor at zero (the state of a fresh GPU).
    pub fn fresh() -> Self {
        Self {
            units: [UnitCursors::default(); 2],
            com_mode: 0,
            lighting: 0,
            fog: 0,
            proctex: 0,
            fixed_index: 0,
            fixed_words: [0; 3],
            fixed_count: 0,
        }
    }

    fn mirrored(&self) -> bool {
        self.com_mode & 1 == 0
    }

    /// Follows one write; returns what it did if it fed a data port.
    pub fn write(&mut self, ev: &RegWriteEvent) -> Option<PortEffect> {
        if ev.space != RegSpace::Pica {
            return None;
        }
        let id = u16::try_from(ev.id).ok()?;
        let stored = ev.new;
        let param = ev.param;
        match id {
            0x244 => self.com_mode = stored,
            0x0AF => self.proctex = stored,
            0x0E6 => self.fog = stored,
            0x1C5 => self.lighting = stored,
            0x232 => {
                self.fixed_index = stored & 0xF;
                self.fixed_count = 0;
            }
            0x280..=0x2DF => {
                let (unit, off) = if id >= 0x2B0 {
                    (0, id - 0x2B0)
                } else {
                    (1, id - 0x280)
                };
                let index_effect = self.unit_index(unit, off, stored);
                if unit == 0 && self.mirrored() {
                    self.unit_index(1, off, stored);
                }
                if index_effect {
                    return None;
                }
            }
            _ => {}
        }
        let port = pica_cmd::regs::port(id)?;
        let (text, complete) = match port.kind {
            PortKind::FloatUniform(u) => {
                let unit = usize::from(u == ShaderUnit::Geometry);
                let r = self.float_word(unit, param);
                if unit == 0 && self.mirrored() {
                    self.float_word(1, param);
                }
                r
            }
            PortKind::Code(u) => {
                let unit = usize::from(u == ShaderUnit::Geometry);
                let t = self.code_word(unit, param, false);
                if unit == 0 && self.mirrored() {
                    self.code_word(1, param, false);
                }
                (t, true)
            }
            PortKind::OpDesc(u) => {
                let unit = usize::from(u == ShaderUnit::Geometry);
                let t = self.code_word(unit, param, true);
                if unit == 0 && self.mirrored() {
                    self.code_word(1, param, true);
                }
                (t, true)
            }
            PortKind::LightingLut => {
                let idx = self.lighting & 0xFF;
                let table = (self.lighting >> 8) & 0x1F;
                self.lighting = (self.lighting & !0xFF) | ((idx + 1) & 0xFF);
                (
                    format!(
                        "lighting LUT {table}[{idx}] = 0x{:06X}",
                        param & 0x00FF_FFFF
                    ),
                    true,
                )
            }
            PortKind::FogLut => {
                let idx = self.fog & 0xFFFF;
                self.fog = (self.fog & !0xFFFF) | ((idx + 1) & 0xFFFF);
                (format!("fog LUT[{}] = 0x{param:08X}", idx % 128), true)
            }
            PortKind::ProcTexLut => {
                let idx = self.proctex & 0xFF;
                let table = (self.proctex >> 8) & 0xF;
                self.proctex = (self.proctex & !0xFF) | ((idx + 1) & 0xFF);
                let name = match table {
                    0 => "noise",
                    2 => "rgb map",
                    3 => "alpha map",
                    4 => "colour",
                    5 => "colour diff",
                    _ => "unknown table",
                };
                (format!("proctex {name} LUT[{idx}] = 0x{param:08X}"), true)
            }
            // gpu-core does not model the gas LUT; its cursor is not followed.
            PortKind::GasLut => (format!("gas LUT word 0x{param:08X}"), true),
            PortKind::FixedAttrib => self.fixed_word(param),
        };
        Some(PortEffect { text, complete })
    }

    /// Index writes of a shader unit; true if `off` was one.
    fn unit_index(&mut self, unit: usize, off: u16, stored: u32) -> bool {
        let Some(c) = self.units.get_mut(unit) else {
            return false;
        };
        match off {
            0x10 => {
                c.float_index = stored & 0xFF;
                c.f32_mode = stored >> 31 != 0;
                c.count = 0;
                true
            }
            0x1B => {
                c.code_index = stored & 0xFFF;
                true
            }
            0x25 => {
                c.opdesc_index = stored & 0xFFF;
                true
            }
            _ => false,
        }
    }

    fn float_word(&mut self, unit: usize, word: u32) -> (String, bool) {
        let name = unit_name(unit);
        let Some(c) = self.units.get_mut(unit) else {
            return (String::new(), false);
        };
        let need = if c.f32_mode { 4u8 } else { 3 };
        let mode = if c.f32_mode { "f32" } else { "f24" };
        if let Some(slot) = c.words.get_mut(usize::from(c.count)) {
            *slot = word;
        }
        c.count += 1;
        if c.count < need {
            return (
                format!("{name} c{} word {}/{need} [{mode}]", c.float_index, c.count),
                false,
            );
        }
        c.count = 0;
        let v = if c.f32_mode {
            unpack_f32x4(c.words)
        } else {
            unpack_f24x4_f32([c.words[0], c.words[1], c.words[2]])
        };
        let idx = c.float_index;
        if idx < 96 {
            c.float_index += 1;
            (format!("{name} c{idx} = {} [{mode}]", fmt_vec4(&v)), true)
        } else {
            (
                format!("{name} c{idx} (does not exist: dropped) [{mode}]"),
                true,
            )
        }
    }

    fn code_word(&mut self, unit: usize, word: u32, opdesc: bool) -> String {
        let name = unit_name(unit);
        let Some(c) = self.units.get_mut(unit) else {
            return String::new();
        };
        let (what, idx) = if opdesc {
            let i = c.opdesc_index;
            c.opdesc_index = (i + 1) & 0xFFF;
            ("opdesc", i)
        } else {
            let i = c.code_index;
            c.code_index = (i + 1) & 0xFFF;
            ("code", i)
        };
        format!("{name} {what}[0x{idx:03X}] = 0x{word:08X}")
    }

    fn fixed_word(&mut self, word: u32) -> (String, bool) {
        if let Some(slot) = self.fixed_words.get_mut(usize::from(self.fixed_count)) {
            *slot = word;
        }
        self.fixed_count += 1;
        let target = if self.fixed_index == 0xF {
            "immediate vertex attribute".to_string()
        } else {
            format!("fixed attribute {}", self.fixed_index)
        };
        if self.fixed_count < 3 {
            return (format!("{target} word {}/3", self.fixed_count), false);
        }
        self.fixed_count = 0;
        let v = unpack_f24x4_f32(self.fixed_words);
        if self.fixed_index != 0xF && self.fixed_index < 16 {
            self.fixed_index += 1;
        }
        (format!("{target} = {}", fmt_vec4(&v)), true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use shader_unit::float::{F24, pack_f32x4};

    fn ev(id: u32, value: u32) -> RegWriteEvent {
        RegWriteEvent {
            space: RegSpace::Pica,
            id,
            mask: 0xF,
            param: value,
            old: value,
            new: value,
            source_addr: None,
        }
    }

    #[test]
    fn f32_uniform_upload_names_the_register_and_auto_increments() {
        let mut t = PortTracker::fresh();
        assert_eq!(t.write(&ev(0x2C0, 0x8000_0004)), None);
        let words = pack_f32x4([1.0, 0.5, 0.0, 1.0]);
        let mut last = None;
        for (i, w) in words.iter().enumerate() {
            let e = t.write(&ev(0x2C1, *w)).expect("a port");
            if i < 3 {
                assert!(!e.complete);
                assert_eq!(e.text, format!("VS c4 word {}/4 [f32]", i + 1));
            }
            last = Some(e);
        }
        let e = last.take().expect("four words");
        assert!(e.complete);
        assert_eq!(
            e.text,
            format!("VS c4 = {} [f32]", fmt_vec4(&[1.0, 0.5, 0.0, 1.0]))
        );
        // The next vector goes to c5.
        for w in words {
            last = t.write(&ev(0x2C2, w));
        }
        assert!(last.take().expect("port").text.starts_with("VS c5 = "));
    }

    #[test]
    fn f24_uniform_and_fixed_attribute_uploads() {
        let mut t = PortTracker::fresh();
        t.write(&ev(0x2C0, 2));
        // Packed f24: w, z, y, x from the top (word 0 holds w and the top of z).
        let f = |v: f32| F24::from_f32(v).to_bits();
        let (x, y, z, w) = (f(1.0), f(2.0), f(3.0), f(4.0));
        let words = [
            (w << 8) | (z >> 16),
            ((z & 0xFFFF) << 16) | (y >> 8),
            ((y & 0xFF) << 24) | x,
        ];
        let mut last = None;
        for word in words {
            last = t.write(&ev(0x2C1, word));
        }
        assert_eq!(
            last.take().expect("port").text,
            format!("VS c2 = {} [f24]", fmt_vec4(&[1.0, 2.0, 3.0, 4.0]))
        );
        t.write(&ev(0x232, 3));
        for word in words {
            last = t.write(&ev(0x233, word));
        }
        assert_eq!(
            last.take().expect("port").text,
            format!("fixed attribute 3 = {}", fmt_vec4(&[1.0, 2.0, 3.0, 4.0]))
        );
    }

    #[test]
    fn code_and_lut_ports_auto_increment() {
        let mut t = PortTracker::fresh();
        t.write(&ev(0x2CB, 0x10));
        assert_eq!(
            t.write(&ev(0x2CC, 0x4C00_0000)).map(|e| e.text),
            Some("VS code[0x010] = 0x4C000000".into())
        );
        assert_eq!(
            t.write(&ev(0x2CD, 0x8800_0000)).map(|e| e.text),
            Some("VS code[0x011] = 0x88000000".into())
        );
        t.write(&ev(0x1C5, (3 << 8) | 17));
        assert_eq!(
            t.write(&ev(0x1C8, 0x0012_3456)).map(|e| e.text),
            Some("lighting LUT 3[17] = 0x123456".into())
        );
        assert_eq!(
            t.write(&ev(0x1C9, 0x0012_3456)).map(|e| e.text),
            Some("lighting LUT 3[18] = 0x123456".into())
        );
    }

    #[test]
    fn triggers_and_ports_are_actions_state_is_not() {
        assert!(acts_on_write(&ev(0x22E, 1))); // DRAWARRAYS
        assert!(acts_on_write(&ev(0x2C1, 0))); // uniform data
        assert!(acts_on_write(&ev(0x2C0, 0))); // uniform index
        assert!(acts_on_write(&ev(0x2CC, 0))); // code data
        assert!(acts_on_write(&ev(0x1C8, 0))); // lighting LUT data
        assert!(acts_on_write(&ev(0x233, 0))); // fixed attribute data
        assert!(acts_on_write(&ev(0x23C, 1))); // command-list jump
        assert!(!acts_on_write(&ev(0x041, 0))); // viewport width: state
        assert!(!acts_on_write(&ev(0x0C0, 0))); // TEV stage 0 source: state
    }
}
