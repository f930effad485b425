//! "Which command set this?": per-register and per-uniform write history of a whole trace.
//!
//! Stage: viewer analysis, run once by the worker in the background after indexing. Input: the
//! register-write events of a full replay ([`ProvenanceRecorder`] is a
//! [`gpu_core::debug::Observer`]). Output: [`Provenance`], sorted lists of command numbers per
//! PICA register, per float uniform (VS and GS) and per fixed attribute, answering "the last
//! command at or before `n` that set X" with a binary search.
//!
//! Registers interpreted (to follow the upload FIFOs, mirroring `gpu_core::gpu`):
//! VSH/GSH_FLOATUNIFORM_INDEX (0x2C0/0x290: bits 0-7 = target register, bit 31 = f32 mode) and
//! their data ports (0x2C1-0x2C8/0x291-0x298: 3 words per vec4 in f24 mode, 4 in f32 mode),
//! FIXEDATTRIB_INDEX (0x232: bits 0-3) and FIXEDATTRIB_DATA0-2 (0x233-0x235: 3 words per vec4),
//! VSH_COM_MODE (0x244 bit 0 = 0: VS uploads are mirrored into the GS unit).
//!
//! Memory is bounded: after [`MAX_ENTRIES`] recorded writes the history stops and
//! [`Provenance::complete_until`] says up to which command it is valid.

use gpu_core::debug::{Observer, RegSpace, RegWriteEvent};

/// Most register-write entries kept (8 bytes each).
pub const MAX_ENTRIES: usize = 16 << 20;

/// Number of PICA registers.
const REGS: usize = 0x300;

/// Write history of a trace.
#[derive(Clone, Debug)]
pub struct Provenance {
    /// For each PICA register id, the command numbers that wrote it, ascending.
    pub reg_writes: Vec<Vec<u64>>,
    /// For VS (index 0) and GS (index 1), per float uniform c0-c95: the command numbers whose
    /// data word completed an upload of that register, ascending.
    pub float_uniforms: [Vec<Vec<u64>>; 2],
    /// Per fixed attribute 0-15: the command numbers that completed an upload.
    pub fixed_attribs: Vec<Vec<u64>>,
    /// The history is complete up to and including this command number.
    pub complete_until: u64,
    /// True when the history stopped early because of [`MAX_ENTRIES`].
    pub truncated: bool,
}

impl Provenance {
    fn last_in(list: &[u64], at: u64) -> Option<u64> {
        let n = list.partition_point(|&w| w <= at);
        n.checked_sub(1).and_then(|i| list.get(i)).copied()
    }

    /// The last command at or before `at` that wrote PICA register `id`.
    pub fn last_write(&self, id: u16, at: u64) -> Option<u64> {
        Self::last_in(self.reg_writes.get(usize::from(id))?, at)
    }

    /// True if register `id` was written by a command in `lo..=hi`.
    pub fn written_between(&self, id: u16, lo: u64, hi: u64) -> bool {
        let Some(list) = self.reg_writes.get(usize::from(id)) else {
            return false;
        };
        let n = list.partition_point(|&w| w < lo);
        list.get(n).is_some_and(|&w| w <= hi)
    }

    /// The last command at or before `at` that completed an upload of float uniform `reg` of
    /// unit `unit` (0 = VS, 1 = GS).
    pub fn uniform_setter(&self, unit: usize, reg: usize, at: u64) -> Option<u64> {
        Self::last_in(self.float_uniforms.get(unit)?.get(reg)?, at)
    }

    /// The last command at or before `at` that completed an upload of fixed attribute `i`.
    pub fn fixed_attrib_setter(&self, i: usize, at: u64) -> Option<u64> {
        Self::last_in(self.fixed_attribs.get(i)?, at)
    }
}

/// Upload cursor of one float-uniform FIFO.
#[derive(Clone, Copy, Debug, Default)]
struct UniformFifo {
    index: u32,
    f32_mode: bool,
    count: u8,
}

impl UniformFifo {
    fn set_index(&mut self, stored: u32) {
        self.index = stored & 0xFF;
        self.f32_mode = stored >> 31 != 0;
        self.count = 0;
    }

    /// One data word; returns the register completed by it, if any.
    fn push(&mut self) -> Option<usize> {
        let need = if self.f32_mode { 4 } else { 3 };
        self.count += 1;
        if self.count < need {
            return None;
        }
        self.count = 0;
        let idx = self.index as usize;
        if idx < 96 {
            self.index += 1;
            Some(idx)
        } else {
            None
        }
    }
}

/// Observer that builds a [`Provenance`] from the writes it sees. Command numbers continue from
/// the `start` given to [`ProvenanceRecorder::new`].
#[derive(Clone, Debug)]
pub struct ProvenanceRecorder {
    prov: Provenance,
    entries: usize,
    writes: u64,
    fifos: [UniformFifo; 2],
    fixed_index: u32,
    fixed_count: u8,
    com_mode: u32,
}

impl ProvenanceRecorder {
    /// A recorder for a replay positioned after command `start`, whose registers are `regs`
    /// (used for the FIFO cursors and VSH_COM_MODE).
    pub fn new(start: u64, regs: &[u32; REGS]) -> Self {
        let mut fifos = [UniformFifo::default(); 2];
        fifos[0].set_index(regs[0x2C0]);
        fifos[1].set_index(regs[0x290]);
        Self {
            prov: Provenance {
                reg_writes: vec![Vec::new(); REGS],
                float_uniforms: [vec![Vec::new(); 96], vec![Vec::new(); 96]],
                fixed_attribs: vec![Vec::new(); 16],
                complete_until: start,
                truncated: false,
            },
            entries: 0,
            writes: start,
            fifos,
            fixed_index: regs[0x232] & 0xF,
            fixed_count: 0,
            com_mode: regs[0x244],
        }
    }

    /// Command number of the last write seen.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// The history so far.
    pub fn finish(mut self) -> Provenance {
        if !self.prov.truncated {
            self.prov.complete_until = self.writes;
        }
        self.prov
    }

    fn push(&mut self, list: Entry, n: u64) {
        if self.prov.truncated {
            return;
        }
        if self.entries >= MAX_ENTRIES {
            self.prov.truncated = true;
            self.prov.complete_until = n.saturating_sub(1);
            return;
        }
        let target = match list {
            Entry::Reg(id) => self.prov.reg_writes.get_mut(id),
            Entry::Uniform(unit, reg) => self
                .prov
                .float_uniforms
                .get_mut(unit)
                .and_then(|u| u.get_mut(reg)),
            Entry::Fixed(i) => self.prov.fixed_attribs.get_mut(i),
        };
        if let Some(t) = target {
            t.push(n);
            self.entries += 1;
        }
    }

    fn uniform_data(&mut self, unit: usize, n: u64) {
        if let Some(reg) = self.fifos.get_mut(unit).and_then(UniformFifo::push) {
            self.push(Entry::Uniform(unit, reg), n);
        }
    }
}

#[derive(Clone, Copy)]
enum Entry {
    Reg(usize),
    Uniform(usize, usize),
    Fixed(usize),
}

impl Observer for ProvenanceRecorder {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        self.writes += 1;
        let n = self.writes;
        if ev.space != RegSpace::Pica || ev.id as usize >= REGS {
            return;
        }
        let id = ev.id;
        self.push(Entry::Reg(id as usize), n);
        let shared = self.com_mode & 1 == 0;
        match id {
            0x244 => self.com_mode = ev.new,
            0x2C0 => {
                self.fifos[0].set_index(ev.new);
                if shared {
                    self.fifos[1].set_index(ev.new);
                }
            }
            0x2C1..=0x2C8 => {
                self.uniform_data(0, n);
                if shared {
                    self.uniform_data(1, n);
                }
            }
            0x290 => self.fifos[1].set_index(ev.new),
            0x291..=0x298 => self.uniform_data(1, n),
            0x232 => {
                self.fixed_index = ev.new & 0xF;
                self.fixed_count = 0;
            }
            0x233..=0x235 => {
                self.fixed_count += 1;
                if self.fixed_count >= 3 {
                    self.fixed_count = 0;
                    if self.fixed_index < 0xF {
                        let i = self.fixed_index as usize;
                        self.fixed_index += 1;
                        self.push(Entry::Fixed(i), n);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(id: u32, value: u32) -> RegWriteEvent {
        RegWriteEvent {
            space: RegSpace::Pica,
            id,
            mask: 0xF,
            param: value,
            old: 0,
            new: value,
            source_addr: None,
        }
    }

    #[test]
    fn follows_uniform_fifo_and_registers() {
        let regs = [0u32; REGS];
        let mut r = ProvenanceRecorder::new(10, &regs);
        r.reg_write(&write(0x2C0, 4)); // 11: index c4, f24 mode
        for _ in 0..6 {
            r.reg_write(&write(0x2C1, 0)); // 12..17: c4 done at 14, c5 at 17
        }
        r.reg_write(&write(0x2C0, 0x8000_0010)); // 18: c16, f32 mode
        for _ in 0..4 {
            r.reg_write(&write(0x2C1, 0)); // 19..22: c16 done at 22
        }
        r.reg_write(&write(0x041, 7)); // 23
        let p = r.finish();
        assert_eq!(p.complete_until, 23);
        assert_eq!(p.uniform_setter(0, 4, 100), Some(14));
        assert_eq!(p.uniform_setter(0, 5, 100), Some(17));
        assert_eq!(p.uniform_setter(0, 5, 16), None);
        assert_eq!(p.uniform_setter(0, 16, 100), Some(22));
        // Shared com mode (0x244 bit 0 = 0) mirrors VS uploads into the GS unit.
        assert_eq!(p.uniform_setter(1, 4, 100), Some(14));
        assert_eq!(p.last_write(0x041, 100), Some(23));
        assert_eq!(p.last_write(0x041, 22), None);
        assert!(p.written_between(0x2C1, 12, 12));
        assert!(!p.written_between(0x041, 1, 22));
    }

    #[test]
    fn fixed_attributes_and_separate_gs() {
        let mut regs = [0u32; REGS];
        regs[0x244] = 1; // separate units
        let mut r = ProvenanceRecorder::new(0, &regs);
        r.reg_write(&write(0x232, 2)); // 1
        r.reg_write(&write(0x233, 0)); // 2
        r.reg_write(&write(0x234, 0)); // 3
        r.reg_write(&write(0x235, 0)); // 4: attribute 2
        r.reg_write(&write(0x2C0, 0)); // 5
        r.reg_write(&write(0x2C1, 0));
        r.reg_write(&write(0x2C1, 0));
        r.reg_write(&write(0x2C1, 0)); // 8: VS c0 only
        let p = r.finish();
        assert_eq!(p.fixed_attrib_setter(2, 10), Some(4));
        assert_eq!(p.fixed_attrib_setter(3, 10), None);
        assert_eq!(p.uniform_setter(0, 0, 10), Some(8));
        assert_eq!(p.uniform_setter(1, 0, 10), None);
    }
}
