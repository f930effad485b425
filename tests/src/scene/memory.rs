//! The application's view of 3DS memory while a scene is built: a bump allocator for VRAM and the
//! linear heap (FCRAM), and a copy of every byte the "CPU" wrote (vertex, index and texture data,
//! command lists), from which the trace's memory loads are cut.
//!
//! Stage: host-side helper (what libctru's `linearAlloc`/`vramAlloc` and the application's
//! `memcpy`s do). Inputs: allocation requests and data. Outputs: physical addresses and byte
//! ranges. Registers read: none.
//!
//! Addresses are physical (`pica-raster.md` §12): VRAM at 0x18000000 (6 MiB), FCRAM at
//! 0x20000000 (the linear heap of an Old 3DS application starts at its beginning in our traces;
//! real ones start wherever the kernel put the heap — the GPU only sees physical addresses).
//! Allocation is deterministic: the same sequence of requests gives the same addresses.

use super::SceneError;

/// Physical address of VRAM.
pub const VRAM_BASE: u32 = 0x1800_0000;
/// VRAM size in bytes (6 MiB).
pub const VRAM_SIZE: u32 = 0x0060_0000;
/// Physical address of FCRAM, where our linear heap starts.
pub const LINEAR_BASE: u32 = 0x2000_0000;
/// Size of the linear heap we hand out (64 MiB; an Old 3DS application gets about that much).
pub const LINEAR_SIZE: u32 = 0x0400_0000;

/// Which memory an allocation comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pool {
    /// Video RAM (render targets; libctru `vramAlloc`).
    Vram,
    /// The FCRAM linear heap (buffers, textures, command lists, LCD framebuffers;
    /// libctru `linearAlloc`).
    Linear,
}

impl Pool {
    const fn range(self) -> (u32, u32) {
        match self {
            Pool::Vram => (VRAM_BASE, VRAM_SIZE),
            Pool::Linear => (LINEAR_BASE, LINEAR_SIZE),
        }
    }
}

/// One block of guest memory the scene allocated, with the bytes the CPU wrote into it (render
/// targets and LCD framebuffers keep no host copy: only the GPU writes them).
#[derive(Clone, Debug)]
struct Block {
    pa: u32,
    len: u32,
    data: Option<Vec<u8>>,
}

/// Deterministic allocator plus host copy of CPU-written memory.
#[derive(Clone, Debug)]
pub(crate) struct GuestMemory {
    next: [u32; 2],
    blocks: Vec<Block>,
}

impl Default for GuestMemory {
    fn default() -> Self {
        Self {
            next: [VRAM_BASE, LINEAR_BASE],
            blocks: Vec::new(),
        }
    }
}

fn pool_index(pool: Pool) -> usize {
    match pool {
        Pool::Vram => 0,
        Pool::Linear => 1,
    }
}

impl GuestMemory {
    /// Allocates `len` bytes aligned to `align` (a power of two ≥ 8; libctru aligns linear
    /// allocations to at least 0x80, we use the caller's value). With `data`, the block's
    /// contents are recorded (zero-padded to `len`).
    pub fn alloc(
        &mut self,
        pool: Pool,
        len: u32,
        align: u32,
        data: Option<&[u8]>,
    ) -> Result<u32, SceneError> {
        let align = align.max(8).next_power_of_two();
        let (base, size) = pool.range();
        let slot = pool_index(pool);
        let start = self.next[slot]
            .checked_add(align - 1)
            .map(|a| a & !(align - 1))
            .ok_or(SceneError::OutOfMemory { pool, len })?;
        let end = start
            .checked_add(len.max(1))
            .ok_or(SceneError::OutOfMemory { pool, len })?;
        if end > base + size {
            return Err(SceneError::OutOfMemory { pool, len });
        }
        let contents = data.map(|d| {
            let mut v = d.to_vec();
            v.resize(len as usize, 0);
            v
        });
        self.next[slot] = end;
        self.blocks.push(Block {
            pa: start,
            len,
            data: contents,
        });
        Ok(start)
    }

    fn block_of(&self, pa: u32, len: u32) -> Option<&Block> {
        self.blocks.iter().find(|b| {
            pa >= b.pa && u64::from(pa) + u64::from(len) <= u64::from(b.pa) + u64::from(b.len)
        })
    }

    /// True if `pa..pa + len` lies in one block that only the GPU writes (a render target's
    /// colour or depth buffer): a draw sampling it as a texture reads what was rendered there,
    /// not a CPU upload.
    pub fn gpu_only(&self, pa: u32, len: u32) -> bool {
        self.block_of(pa, len).is_some_and(|b| b.data.is_none())
    }

    /// Overwrites part of a CPU-written block (e.g. the command buffer, reused every frame).
    pub fn write(&mut self, pa: u32, data: &[u8]) -> Result<(), SceneError> {
        let len = u32::try_from(data.len())
            .map_err(|_| SceneError::NotCpuMemory { pa, len: u32::MAX })?;
        let block = self
            .blocks
            .iter_mut()
            .find(|b| {
                pa >= b.pa && u64::from(pa) + u64::from(len) <= u64::from(b.pa) + u64::from(b.len)
            })
            .ok_or(SceneError::NotCpuMemory { pa, len })?;
        let buf = block
            .data
            .as_mut()
            .ok_or(SceneError::NotCpuMemory { pa, len })?;
        let off = (pa - block.pa) as usize;
        let dst = buf
            .get_mut(off..off + data.len())
            .ok_or(SceneError::NotCpuMemory { pa, len })?;
        dst.copy_from_slice(data);
        Ok(())
    }

    /// The CPU-written bytes of `[pa, pa + len)`, which must lie in one block with contents.
    pub fn read(&self, pa: u32, len: u32) -> Result<&[u8], SceneError> {
        let block = self
            .block_of(pa, len)
            .ok_or(SceneError::NotCpuMemory { pa, len })?;
        let buf = block
            .data
            .as_ref()
            .ok_or(SceneError::NotCpuMemory { pa, len })?;
        let off = (pa - block.pa) as usize;
        buf.get(off..off + len as usize)
            .ok_or(SceneError::NotCpuMemory { pa, len })
    }
}
