//! Packing a reduced trace: the commands reduction neutralised (register 0x000 written with
//! byte mask 0, see [`super`]) are removed from the command lists, so that the file really
//! shrinks.
//!
//! Input: trace bytes. Output: new trace bytes and a [`PackReport`]. A command list is packed
//! when it is safe to rewrite it in isolation:
//!
//! * it was submitted from the stream (`P3D_CMDLIST_*` writes) and its range is exactly one
//!   memory load's range (the list is that load's whole blob), unchanged in memory when
//!   submitted (no engine wrote into it);
//! * it parses without error and contains no write to the nested-buffer registers
//!   (0x238-0x23D: no jumps out of it, no size/address set up for a jump);
//! * no command from its range runs outside its own submissions (no jump lands in it).
//!
//! The live commands are concatenated in order (each with its padding word, so every command
//! stays 8-byte aligned; where an immediate-mode vertex may be open, i.e. at the list start or
//! after a fixed-attribute write, the first neutralised command of a run stays as an 8-byte
//! no-op, because any register write closes that vertex), the load carries only them, and the submission's size register write
//! is rewritten (or, when that write also serves submissions that are not packed alike, a new
//! size write is inserted before the trigger and the old value written back after it).
//! Memory behind the shortened list is no longer loaded; a later reader of those bytes would
//! see other data, so the caller checks its predicate on the packed trace and keeps the
//! unpacked one if it fails.

use std::collections::{BTreeMap, BTreeSet};

use pica_cmd::citrace::{
    CiTrace, CiTraceBuilder, PA_CMDLIST_ADDR, PA_CMDLIST_SIZE, PA_CMDLIST_TRIGGER, StreamEvent,
    WriteWidth, load_target,
};
use pica_cmd::cmdlist::{CmdHeader, Commands};

use super::ReduceError;
use crate::debug::{Observer, RegSpace, RegWriteEvent};
use crate::regs::reg;
use crate::replay::Replay;
use crate::replay::diff::hash_range;

/// What [`pack`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PackReport {
    /// Command lists (memory loads) rewritten without their neutralised commands.
    pub lists_packed: usize,
    /// Lists with neutralised commands that could not be packed safely (left as they were).
    pub lists_kept: usize,
    /// Neutralised commands removed (counted once per rewritten list).
    pub commands_removed: u64,
    /// Bytes of command-list data removed (per rewritten load).
    pub list_bytes_removed: u64,
    /// Size-register writes inserted (with their restoring writes) because the trace's own
    /// size write also served other submissions.
    pub size_writes_inserted: usize,
}

/// True for a command reduction neutralised: register 0x000 with byte mask 0 (nothing stored,
/// no side effect).
pub(super) fn is_neutralised(h: CmdHeader) -> bool {
    h.id() == 0 && h.mask() == 0
}

/// The list without its neutralised commands and how many were removed (a longer one kept as
/// an 8-byte no-op counts as removed), or `None` when it cannot be packed (malformed, touches
/// the nested-buffer registers, nothing to remove).
fn packed_list(bytes: &[u8]) -> Option<(Vec<u8>, u64)> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut removed = 0u64;
    // Whether an immediate-mode vertex may be open here: at the start of the list (unknown) and
    // after a write to the fixed-attribute ports. Any other write closes it, a neutralised one
    // included, so the first of a run of neutralised commands there is kept (as one 8-byte
    // no-op: register 0x000, mask 0, one parameter).
    let mut may_be_open = true;
    for c in Commands::new(bytes) {
        let c = c.ok()?;
        let touches_jump = c.writes().any(|w| {
            (reg::CMDBUF_SIZE0..=reg::CMDBUF_JUMP1).contains(&u32::from(w.id))
                && c.header.mask() != 0
        });
        if touches_jump {
            return None;
        }
        if is_neutralised(c.header) {
            if may_be_open {
                out.extend_from_slice(&[0; 8]);
                may_be_open = false;
                if c.param_count == 1 {
                    continue;
                }
            }
            removed += 1;
            continue;
        }
        out.extend_from_slice(bytes.get(c.offset as usize..c.end_offset() as usize)?);
        may_be_open = c.writes().last().is_some_and(|w| {
            (reg::FIXEDATTRIB_INDEX..=reg::FIXEDATTRIB_DATA2).contains(&u32::from(w.id))
        });
    }
    (removed > 0).then_some((out, removed))
}

/// Counts the commands of a list (those before a parse error).
pub(super) fn count_commands(bytes: &[u8]) -> u64 {
    Commands::new(bytes).take_while(Result::is_ok).count() as u64
}

/// One memory load of the trace, as a packing candidate.
#[derive(Debug)]
struct Load {
    /// The load's address as the trace stores it (written back unchanged).
    stored_pa: u32,
    size: u32,
    hash: u64,
    /// Cannot be packed.
    poisoned: bool,
    /// Submissions that ran exactly this load's bytes.
    triggers: Vec<usize>,
    /// The packed list (set at the first submission).
    packed: Option<(Vec<u8>, u64)>,
}

/// One stream submission of a candidate list.
#[derive(Debug)]
struct Trigger {
    /// The candidate load it ran exactly (`None`: not a packing candidate; its size write must
    /// then keep its value).
    load: Option<usize>,
    /// The size write it takes its size from (an exact 32-bit write element), if any.
    size_write: Option<usize>,
    /// The size register's value when it ran.
    size: u32,
}

/// Watches which memory load every executed command-list write came from.
#[derive(Default)]
struct Watch {
    /// Live loads: start → (end, element).
    live: BTreeMap<u32, (u64, usize)>,
    /// The candidate load of the submission running now.
    current: Option<usize>,
    /// Loads a write ran from outside their own submissions.
    poison: BTreeSet<usize>,
}

impl Watch {
    fn load_at(&self, addr: u32) -> Option<usize> {
        let (_, &(end, e)) = self.live.range(..=addr).next_back()?;
        (u64::from(addr) < end).then_some(e)
    }

    /// Makes `[pa, pa + size)` the range of load `e`; the parts of older loads it overlaps stop
    /// being theirs (their other parts stay: memory keeps them).
    fn load(&mut self, e: usize, pa: u32, size: u32) {
        let start = u64::from(pa);
        let end = start + u64::from(size);
        if size == 0 {
            return;
        }
        let overlapping: Vec<(u32, u64, usize)> = self
            .live
            .range(..)
            .filter(|(s, (en, _))| u64::from(**s) < end && *en > start)
            .map(|(s, (en, el))| (*s, *en, *el))
            .collect();
        for (s, en, el) in overlapping {
            self.live.remove(&s);
            if u64::from(s) < start {
                self.live.insert(s, (start, el));
            }
            if en > end {
                // A right part starting at 2^32 or above holds no addressable memory.
                if let Ok(at) = u32::try_from(end) {
                    self.live.insert(at, (en, el));
                }
            }
        }
        self.live.insert(pa, (end, e));
    }
}

impl Observer for Watch {
    fn reg_write(&mut self, ev: &RegWriteEvent) {
        if ev.space != RegSpace::Pica {
            return;
        }
        let Some(addr) = ev.source_addr else { return };
        if let Some(e) = self.load_at(addr)
            && Some(e) != self.current
        {
            self.poison.insert(e);
        }
    }
}

/// Packs the command lists of `bytes` (see the module docs).
pub fn pack(bytes: &[u8]) -> Result<(Vec<u8>, PackReport), ReduceError> {
    let trace = CiTrace::from_bytes(bytes.to_vec())?;
    let mut loads: BTreeMap<usize, Load> = BTreeMap::new();
    let mut triggers: BTreeMap<usize, Trigger> = BTreeMap::new();
    let mut last_size_write: Option<usize> = None;
    let mut watch = Watch::default();
    let mut r = Replay::new(trace);
    while !r.at_end() {
        let i = r.position().element;
        match r.trace().event(i) {
            Some(StreamEvent::MemoryLoad(m)) => {
                r.step_element(&mut watch);
                let pa = load_target(m.physical_address);
                loads.insert(
                    i,
                    Load {
                        stored_pa: m.physical_address,
                        size: m.size,
                        hash: hash_range(r.mem(), pa, u64::from(m.size)),
                        poisoned: false,
                        triggers: Vec::new(),
                        packed: None,
                    },
                );
                watch.load(i, pa, m.size);
            }
            Some(StreamEvent::RegisterWrite(w)) => {
                let pa = w.physical_address;
                let width = w.width.bytes().unwrap_or(4);
                let covers = |reg_pa: u32| {
                    u64::from(pa) < u64::from(reg_pa) + 4
                        && u64::from(reg_pa) < u64::from(pa) + u64::from(width)
                };
                if covers(PA_CMDLIST_SIZE) {
                    last_size_write =
                        (pa == PA_CMDLIST_SIZE && w.width == WriteWidth::Bits32).then_some(i);
                }
                if pa == PA_CMDLIST_TRIGGER && w.value & 1 != 0 {
                    let gpu = r.gpu();
                    let size = gpu.external_reg(PA_CMDLIST_SIZE).unwrap_or(0);
                    let addr = gpu
                        .external_reg(PA_CMDLIST_ADDR)
                        .unwrap_or(0)
                        .wrapping_mul(8);
                    let end = u64::from(addr) + u64::from(size);
                    let exact = watch
                        .live
                        .get(&addr)
                        .filter(|&&(e_end, _)| e_end == end)
                        .map(|&(_, e)| e)
                        // The whole load, not the part an overlapping later load left of it.
                        .filter(|e| loads.get(e).is_some_and(|l| l.size == size));
                    // Loads the list overlaps without being exactly one of them are not packed.
                    let partial: Vec<usize> = watch
                        .live
                        .iter()
                        .filter(|(s, (en, e))| {
                            u64::from(**s) < end && *en > u64::from(addr) && Some(*e) != exact
                        })
                        .map(|(_, (_, e))| *e)
                        .collect();
                    for e in partial {
                        watch.poison.insert(e);
                    }
                    if let Some(e) = exact
                        && let Some(l) = loads.get_mut(&e)
                    {
                        if hash_range(r.mem(), addr, u64::from(size)) != l.hash {
                            l.poisoned = true;
                        } else if l.packed.is_none() && !l.poisoned {
                            match r.mem().read_vec(addr, size as usize).ok() {
                                Some(list) => match packed_list(&list) {
                                    Some(p) => l.packed = Some(p),
                                    None => l.poisoned = true,
                                },
                                None => l.poisoned = true,
                            }
                        }
                        l.triggers.push(i);
                    }
                    triggers.insert(
                        i,
                        Trigger {
                            load: exact,
                            size_write: last_size_write,
                            size,
                        },
                    );
                    watch.current = exact;
                    r.step_element(&mut watch);
                    watch.current = None;
                } else {
                    r.step_element(&mut watch);
                }
            }
            _ => r.step_element(&mut watch),
        }
    }
    for e in &watch.poison {
        if let Some(l) = loads.get_mut(e) {
            l.poisoned = true;
        }
    }
    let packable = |l: &Load| !l.poisoned && l.packed.is_some() && !l.triggers.is_empty();
    let new_size = |t: &Trigger| {
        loads
            .get(&t.load?)
            .filter(|l| packable(l))
            .and_then(|l| l.packed.as_ref())
            .map(|(p, _)| p.len() as u32)
    };
    // Size writes rewritten in place: every submission they serve is packed to the same size.
    let mut served: BTreeMap<usize, Vec<Option<u32>>> = BTreeMap::new();
    for t in triggers.values() {
        if let Some(w) = t.size_write {
            served.entry(w).or_default().push(new_size(t));
        }
    }
    let in_place: BTreeMap<usize, u32> = served
        .into_iter()
        .filter_map(|(w, sizes)| {
            let first = sizes.first().copied().flatten()?;
            sizes
                .iter()
                .all(|s| *s == Some(first))
                .then_some((w, first))
        })
        .collect();

    let mut report = PackReport::default();
    for l in loads.values() {
        if packable(l) {
            let (p, removed) = l.packed.as_ref().map_or((0, 0), |(p, n)| (p.len(), *n));
            report.lists_packed += 1;
            report.commands_removed += removed;
            report.list_bytes_removed += u64::from(l.size) - p as u64;
        } else if l.packed.is_some() {
            report.lists_kept += 1;
        }
    }
    let mut trace = r.into_trace();
    let mut b = CiTraceBuilder::new(trace.initial_state().clone());
    b.layout(trace.layout());
    let mut buf = Vec::new();
    for i in 0..trace.elements().len() {
        match trace.event(i) {
            Some(StreamEvent::MemoryLoad(m)) => match loads.get(&i).filter(|l| packable(l)) {
                Some(l) => {
                    if let Some((p, _)) = &l.packed
                        && !p.is_empty()
                    {
                        b.memory_load(l.stored_pa, p)?;
                    }
                }
                None => {
                    trace.read_blob_into(i, &mut buf)?;
                    b.memory_load(m.physical_address, &buf)?;
                }
            },
            Some(_) => {
                if let Some(&size) = in_place.get(&i) {
                    b.register_write(PA_CMDLIST_SIZE, size);
                    continue;
                }
                let insert = triggers.get(&i).and_then(|t| {
                    let in_place = t.size_write.is_some_and(|w| in_place.contains_key(&w));
                    (!in_place)
                        .then(|| new_size(t).map(|n| (n, t.size)))
                        .flatten()
                });
                match insert {
                    Some((new, old)) => {
                        report.size_writes_inserted += 1;
                        b.register_write(PA_CMDLIST_SIZE, new);
                        b.raw_element(trace.elements()[i])?;
                        b.register_write(PA_CMDLIST_SIZE, old);
                    }
                    None => {
                        b.raw_element(trace.elements()[i])?;
                    }
                }
            }
            None => {}
        }
    }
    Ok((b.build()?, report))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(param: u32, header: u32) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&param.to_le_bytes());
        b[4..].copy_from_slice(&header.to_le_bytes());
        b
    }

    #[test]
    fn packed_list_drops_neutralised_commands_and_keeps_alignment() {
        let mut list = Vec::new();
        list.extend_from_slice(&cmd(1, 0x000F_0041));
        // Neutralised burst: 3 parameters, 4 words with the header, no padding.
        list.extend_from_slice(&cmd(0, 0x8020_0000));
        list.extend_from_slice(&[0; 8]);
        list.extend_from_slice(&cmd(2, 0x000F_0042));
        let (p, removed) = packed_list(&list).expect("packs");
        assert_eq!(removed, 1);
        assert_eq!(p.len(), 16);
        assert_eq!(&p[..8], &cmd(1, 0x000F_0041));
        assert_eq!(&p[8..], &cmd(2, 0x000F_0042));
        assert_eq!(count_commands(&list), 3);
        assert_eq!(count_commands(&p), 2);
        // A neutralised command after a fixed-attribute write (an immediate-mode vertex may be
        // open) stays as one 8-byte no-op; the next one of the run goes.
        let mut imm = Vec::new();
        imm.extend_from_slice(&cmd(1, 0x000F_0000 | reg::FIXEDATTRIB_DATA0));
        imm.extend_from_slice(&cmd(0, 0x8020_0000));
        imm.extend_from_slice(&[0; 8]);
        imm.extend_from_slice(&cmd(5, 0x0000_0000));
        let (p2, removed) = packed_list(&imm).expect("packs");
        assert_eq!(removed, 2);
        assert_eq!(p2.len(), 16);
        assert_eq!(&p2[8..], &[0; 8]);
        // Nothing to remove, or a jump register: not packed.
        assert!(packed_list(&p).is_none());
        let mut jump = list.clone();
        jump.extend_from_slice(&cmd(1, 0x000F_0000 | reg::CMDBUF_JUMP0));
        assert!(packed_list(&jump).is_none());
        // Malformed (truncated parameters): not packed.
        assert!(packed_list(&list[..20]).is_none());
    }
}
