//! The shader unit's control-flow stacks and the per-instruction PC update rule.
//!
//! Stage: helper of the reference interpreter. Inputs: the incremented PC after each instruction,
//! the pending JMP/CALL/IF target, integer uniforms at LOOP time. Output: the next PC and the
//! updated loop counter aL. Registers read: none (uniforms are passed in).
//!
//! // HW: [3DB] "GPU/Shader Instruction Set", section "Control Flow" (text added 2018):
//! - three independent stacks, CALL (4 deep), IF (8 deep), LOOP (4 deep), initially empty;
//! - an overflowing push discards the **oldest** entry (ring buffer with clamped size);
//! - after every instruction the PC is incremented and each stack compares the top entry with
//!   its own copy of that PC. The IF and LOOP stacks pop at most one entry per instruction; the
//!   CALL stack is checked again with its updated copy until it no longer matches or is empty
//!   (this is the "cascade" of pica-core.md §5.9's CALL test);
//! - the copy of the highest-priority stack that fired wins: LOOP > IF > CALL > JMP > PC + 1;
//! - a JMP (here also the targets of CALL/CALLC/CALLU and of a false IFU/IFC) only applies when no
//!   stack fired;
//! - if the CALL stack pops four times within one instruction, the fourth PC update is lost (the
//!   third one is used);
//! - BREAK with an empty LOOP stack hangs the GPU (we report an error instead).
//!
//! UNVERIFIED(SH-18): the three edge cases of hardware fact SH-18 (the lost fourth CALL pop, a JMP
//! at the end of a scope not being taken, the CALL → IF → LOOP check order) come from this same
//! [3DB] text (Citra PR #6844, fincs' research), not from a published hardware test.
//!
//! UNVERIFIED choices (documented where made): CALL/IF-false targets share the JMP priority;
//! a CALL with NUM = 0 does nothing (both emulators return immediately); a false IF pushes
//! nothing ([P]; [C] pushes an entry that pops at DST+NUM with no effect); nested-loop aL restore
//! ([CL] test, see [`LoopEntry::saved_al`]); the aL increment i.z is unsigned ([C]/[P]).

/// Depth of the CALL stack.
pub const CALL_DEPTH: usize = 4;
/// Depth of the IF stack.
pub const IF_DEPTH: usize = 8;
/// Depth of the LOOP stack.
pub const LOOP_DEPTH: usize = 4;

/// Whether LOOP's aL increment `i.z` is a signed byte.
///
/// UNVERIFIED: [C]/[P] treat it as unsigned (u8); hardware signedness is unknown
/// (pica-core.md §10 #27). `false` follows the emulators.
pub const LOOP_STEP_SIGNED: bool = false;

/// A fixed-capacity stack whose push discards the oldest entry when full.
#[derive(Clone, Copy, Debug)]
pub struct RingStack<T: Copy + Default, const N: usize> {
    items: [T; N],
    len: usize,
}

impl<T: Copy + Default, const N: usize> Default for RingStack<T, N> {
    fn default() -> Self {
        Self {
            items: [T::default(); N],
            len: 0,
        }
    }
}

impl<T: Copy + Default, const N: usize> RingStack<T, N> {
    /// Pushes; when full, the oldest entry is dropped. Returns true if an entry was dropped.
    pub fn push(&mut self, v: T) -> bool {
        if self.len == N {
            self.items.copy_within(1.., 0);
            self.items[N - 1] = v;
            true
        } else {
            self.items[self.len] = v;
            self.len += 1;
            false
        }
    }

    /// The top entry.
    pub fn top(&self) -> Option<&T> {
        self.len.checked_sub(1).and_then(|i| self.items.get(i))
    }

    /// The top entry, mutably.
    pub fn top_mut(&mut self) -> Option<&mut T> {
        self.len.checked_sub(1).and_then(|i| self.items.get_mut(i))
    }

    /// Pops the top entry.
    pub fn pop(&mut self) -> Option<T> {
        let i = self.len.checked_sub(1)?;
        self.len = i;
        self.items.get(i).copied()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Entries from bottom (oldest) to top.
    pub fn as_slice(&self) -> &[T] {
        &self.items[..self.len]
    }
}

/// A CALL stack entry (also used for IF entries: "when the PC copy reaches `check`, go to `ret`").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReturnEntry {
    /// PC value that triggers the pop (CALL: DST + NUM; IF: DST).
    pub check: u32,
    /// PC after the pop (CALL: the word after the CALL; IF: DST + NUM).
    pub ret: u32,
}

/// A LOOP stack entry.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoopEntry {
    /// First word of the body (the word after LOOP).
    pub start: u32,
    /// PC value that ends an iteration: DST + 1 (the body's last word is DST).
    pub check: u32,
    /// Iterations still to run after the current one.
    pub remaining: u32,
    /// aL increment after each iteration (i.z).
    pub step: i32,
    /// aL before this LOOP set it; restored when this loop ends **inside an enclosing loop**, so
    /// the outer loop continues with its own aL ([CL] "Nested Loop" test: final aL =
    /// (X0 + 1)·Z0). The outermost loop leaves aL at its final value ([3DB]: aL stays valid
    /// after the loop). UNVERIFIED on hardware.
    pub saved_al: i32,
}

/// The three control-flow stacks of one invocation.
#[derive(Clone, Copy, Debug, Default)]
pub struct FlowStacks {
    /// CALL stack.
    pub calls: RingStack<ReturnEntry, CALL_DEPTH>,
    /// IF stack.
    pub ifs: RingStack<ReturnEntry, IF_DEPTH>,
    /// LOOP stack.
    pub loops: RingStack<LoopEntry, LOOP_DEPTH>,
}

/// Depths of the three stacks, `[call, if, loop]`.
pub type StackDepths = [u8; 3];

impl FlowStacks {
    /// Current depths `[call, if, loop]`.
    pub fn depths(&self) -> StackDepths {
        [
            self.calls.len() as u8,
            self.ifs.len() as u8,
            self.loops.len() as u8,
        ]
    }

    /// Starts a LOOP at `pc` with body end `dst` using integer uniform `i` (x, y, z, w bytes).
    pub fn push_loop(&mut self, pc: u32, dst: u32, i: [u8; 4], al: &mut i32) {
        let step = if LOOP_STEP_SIGNED {
            i32::from(i[2] as i8)
        } else {
            i32::from(i[2])
        };
        let entry = LoopEntry {
            start: pc.wrapping_add(1),
            check: dst.wrapping_add(1),
            remaining: u32::from(i[0]),
            step,
            saved_al: *al,
        };
        *al = i32::from(i[1]);
        self.loops.push(entry);
    }

    /// BREAK: leaves the innermost loop without incrementing aL. Returns the PC to continue at
    /// (the word after the loop body), or `None` when no loop is active.
    pub fn break_loop(&mut self, al: &mut i32) -> Option<u32> {
        let e = self.loops.pop()?;
        if !self.loops.is_empty() {
            *al = e.saved_al;
        }
        Some(e.check)
    }

    /// The post-instruction PC update: `incremented` is PC + 1, `jump` a pending JMP-class
    /// target, `loop_done` true when this instruction already popped the LOOP stack (BREAK),
    /// in which case `loop_update` carries its PC.
    #[inline]
    pub fn next_pc(
        &mut self,
        incremented: u32,
        jump: Option<u32>,
        loop_update: Option<u32>,
        al: &mut i32,
    ) -> u32 {
        if self.calls.is_empty() && self.ifs.is_empty() && self.loops.is_empty() {
            // Fast path: nothing can fire (and BREAK cannot happen without a loop entry).
            return loop_update.or(jump).unwrap_or(incremented);
        }
        // LOOP stack (one check, highest priority).
        let loop_pc = if loop_update.is_some() {
            loop_update
        } else {
            match self.loops.top_mut() {
                Some(top) if top.check == incremented => {
                    *al = al.wrapping_add(top.step);
                    if top.remaining > 0 {
                        top.remaining -= 1;
                        Some(top.start)
                    } else {
                        let saved = top.saved_al;
                        self.loops.pop();
                        if !self.loops.is_empty() {
                            *al = saved;
                        }
                        Some(incremented)
                    }
                }
                _ => None,
            }
        };
        // IF stack (one check).
        let if_pc = match self.ifs.top() {
            Some(top) if top.check == incremented => {
                let ret = top.ret;
                self.ifs.pop();
                Some(ret)
            }
            _ => None,
        };
        // CALL stack (cascading; the 4th update in one instruction is lost).
        let mut call_pc = None;
        let mut copy = incremented;
        let mut pops = 0;
        while let Some(top) = self.calls.top() {
            if top.check != copy {
                break;
            }
            let ret = top.ret;
            self.calls.pop();
            pops += 1;
            if pops < 4 {
                copy = ret;
            }
            call_pc = Some(copy);
        }
        loop_pc
            .or(if_pc)
            .or(call_pc)
            .or(jump)
            .unwrap_or(incremented)
    }
}
