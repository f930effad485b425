//! Physical memory of the 3DS as the GPU sees it (`pica-core.md` §9.6, `pica-raster.md` §12).
//!
//! Input: physical addresses (PA) and byte ranges. Output: bytes, or a [`MemError`] naming the
//! address when a range leaves mapped memory.
//!
//! The model is sparse and cheap to snapshot: every region is split into 4 KiB pages that are
//! allocated on first write (unwritten pages read as zero). Pages are grouped in chunks of 256
//! (1 MiB); both levels are shared between clones through `Arc`, copy-on-write. Cloning a
//! [`PhysMem`] therefore copies one pointer per 1 MiB chunk (about 280 of them), which is what
//! makes keyframes for time travel affordable; a write after a clone copies one chunk table
//! (2 KiB) and one page.
//!
//! Memory use is bounded by the size of the mapped regions (about 270 MiB when every page of
//! every region has been written); nothing a trace does can grow it further.

use std::sync::Arc;

/// Size of one page in bytes.
pub const PAGE_SIZE: usize = 4096;
const PAGE_SHIFT: u32 = 12;

/// One mapped region of the physical address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegionInfo {
    /// Short name ("VRAM", "FCRAM", ...).
    pub name: &'static str,
    /// First physical address.
    pub base: u32,
    /// Size in bytes (a multiple of [`PAGE_SIZE`]).
    pub size: u32,
}

impl RegionInfo {
    /// One past the last physical address, as u64 so that it cannot overflow.
    pub fn end(&self) -> u64 {
        u64::from(self.base) + u64::from(self.size)
    }
}

/// VRAM: 6 MiB at PA 0x18000000.
pub const VRAM: RegionInfo = RegionInfo {
    name: "VRAM",
    base: 0x1800_0000,
    size: 0x60_0000,
};
/// New 3DS extra memory: 4 MiB at PA 0x1F000000.
pub const N3DS_EXTRA: RegionInfo = RegionInfo {
    name: "N3DS extra RAM",
    base: 0x1F00_0000,
    size: 0x40_0000,
};
/// DSP memory: 512 KiB at PA 0x1FF00000.
pub const DSP_RAM: RegionInfo = RegionInfo {
    name: "DSP RAM",
    base: 0x1FF0_0000,
    size: 0x8_0000,
};
/// AXI WRAM: 512 KiB at PA 0x1FF80000.
pub const AXI_WRAM: RegionInfo = RegionInfo {
    name: "AXI WRAM",
    base: 0x1FF8_0000,
    size: 0x8_0000,
};
/// FCRAM: mapped with the New 3DS size (256 MiB at PA 0x20000000) so traces from either model
/// replay; an Old 3DS only has the first 128 MiB.
pub const FCRAM: RegionInfo = RegionInfo {
    name: "FCRAM",
    base: 0x2000_0000,
    size: 0x1000_0000,
};

/// The regions a trace may load into or the GPU may read from, in ascending address order.
pub const REGIONS: [RegionInfo; 5] = [VRAM, N3DS_EXTRA, DSP_RAM, AXI_WRAM, FCRAM];

/// A memory access that left mapped memory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemError {
    /// Some byte of `[addr, addr + len)` is in no mapped region (or the range crosses from one
    /// region into unmapped space).
    #[error("physical range 0x{addr:08X}..+0x{len:X} is not mapped memory")]
    Unmapped {
        /// First physical address of the access.
        addr: u32,
        /// Length of the access in bytes.
        len: u64,
    },
}

type Page = [u8; PAGE_SIZE];
const CHUNK_PAGES: usize = 256;
const CHUNK_SHIFT: u32 = 8;
type Chunk = [Option<Arc<Page>>; CHUNK_PAGES];

#[derive(Clone)]
struct Region {
    info: RegionInfo,
    chunks: Vec<Option<Arc<Chunk>>>,
}

impl Region {
    #[inline]
    fn page(&self, page_index: usize) -> Option<&Arc<Page>> {
        self.chunks
            .get(page_index >> CHUNK_SHIFT)?
            .as_ref()?
            .get(page_index & (CHUNK_PAGES - 1))?
            .as_ref()
    }

    /// The page for writing, allocated and unshared as needed. `page_index` must be in range
    /// (callers check with `locate`).
    fn page_mut(&mut self, page_index: usize) -> &mut Page {
        let chunk = self.chunks[page_index >> CHUNK_SHIFT]
            .get_or_insert_with(|| Arc::new(std::array::from_fn(|_| None)));
        let page = Arc::make_mut(chunk)[page_index & (CHUNK_PAGES - 1)]
            .get_or_insert_with(|| Arc::new([0; PAGE_SIZE]));
        Arc::make_mut(page)
    }

    fn pages(&self) -> impl Iterator<Item = Option<&Arc<Page>>> + '_ {
        let n = (self.info.size as usize).div_ceil(PAGE_SIZE);
        (0..n).map(|i| self.page(i))
    }
}

/// A shared handle to one resident page of a [`PhysMem`] (see [`PhysMem::page_ref`]).
#[derive(Clone)]
pub struct PageRef(Arc<Page>);

impl PageRef {
    /// True if both handles are the same page (so its bytes are the same).
    pub fn same(&self, other: &PageRef) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for PageRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PageRef({:p})", Arc::as_ptr(&self.0))
    }
}

/// The sparse, copy-on-write physical memory.
#[derive(Clone)]
pub struct PhysMem {
    regions: Vec<Region>,
    /// Per 256 MiB block of the address space (`addr >> 28`): the first region that ends
    /// after the block's start. No earlier region can hold an address of the block, so a
    /// lookup starts there (for the 3DS layout: at the region itself, one comparison).
    first_region: [u8; 16],
}

impl std::fmt::Debug for PhysMem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PhysMem")
            .field("resident_pages", &self.resident_pages())
            .finish()
    }
}

impl Default for PhysMem {
    fn default() -> Self {
        Self::new()
    }
}

impl PhysMem {
    /// Memory with the standard 3DS regions ([`REGIONS`]), all reading as zero.
    pub fn new() -> Self {
        Self::with_regions(&REGIONS)
    }

    /// Memory with the given regions. Region sizes are rounded up to whole pages.
    pub fn with_regions(infos: &[RegionInfo]) -> Self {
        let mut regions: Vec<Region> = infos
            .iter()
            .map(|info| {
                let pages = (info.size as usize).div_ceil(PAGE_SIZE);
                Region {
                    info: *info,
                    chunks: vec![None; pages.div_ceil(CHUNK_PAGES)],
                }
            })
            .collect();
        regions.sort_by_key(|r| r.info.base);
        let first_region = std::array::from_fn(|block| {
            let start = (block as u64) << 28;
            let first = regions
                .iter()
                .position(|r| r.info.end() > start)
                .unwrap_or(regions.len());
            // More than 255 regions: start from 0 (still correct, only slower).
            u8::try_from(first).unwrap_or(0)
        });
        Self {
            regions,
            first_region,
        }
    }

    /// The mapped regions.
    pub fn regions(&self) -> impl Iterator<Item = RegionInfo> + '_ {
        self.regions.iter().map(|r| r.info)
    }

    /// Number of pages that hold data (for memory statistics).
    pub fn resident_pages(&self) -> usize {
        self.regions
            .iter()
            .map(|r| r.pages().flatten().count())
            .sum()
    }

    /// A shared handle to the resident page holding `addr` (`None` when the page is unmapped or
    /// was never written, i.e. reads as zero). While a handle is held the page cannot change in
    /// place: the next write to it copies the page (copy-on-write), so a later handle to the same
    /// address is [`PageRef::same`] as this one only if the bytes did not change. Used to compare
    /// buffers draw after draw by reading only the pages written since the last comparison.
    pub fn page_ref(&self, addr: u32) -> Option<PageRef> {
        let (ri, off) = self.locate(addr, 1).ok()?;
        self.regions[ri]
            .page(off >> PAGE_SHIFT)
            .cloned()
            .map(PageRef)
    }

    /// The region containing `addr`, if any.
    pub fn region_of(&self, addr: u32) -> Option<RegionInfo> {
        self.find(addr).map(|i| self.regions[i].info)
    }

    /// The index of the region containing `addr`. One subtraction and one comparison per
    /// region (every memory read goes through here: command-list words, indices, vertices).
    #[inline]
    fn find(&self, addr: u32) -> Option<usize> {
        let first = usize::from(self.first_region[(addr >> 28) as usize]);
        let rest = self.regions.get(first..)?;
        rest.iter()
            .position(|r| {
                u64::from(addr).wrapping_sub(u64::from(r.info.base)) < u64::from(r.info.size)
            })
            .map(|i| first + i)
    }

    /// Region index and the offset of `addr` in it, checking that `len` bytes fit in the region.
    #[inline]
    fn locate(&self, addr: u32, len: u64) -> Result<(usize, usize), MemError> {
        let Some(ri) = self.find(addr) else {
            return Err(MemError::Unmapped { addr, len });
        };
        let info = self.regions[ri].info;
        let off = addr - info.base;
        if u64::from(off).saturating_add(len) > u64::from(info.size) {
            return Err(MemError::Unmapped { addr, len });
        }
        Ok((ri, off as usize))
    }

    /// True if every byte of `[addr, addr + len)` is mapped.
    pub fn is_mapped(&self, addr: u32, len: u64) -> bool {
        self.locate(addr, len).is_ok()
    }

    /// Copies `buf.len()` bytes starting at `addr` into `buf`.
    pub fn read(&self, addr: u32, buf: &mut [u8]) -> Result<(), MemError> {
        let (ri, mut off) = self.locate(addr, buf.len() as u64)?;
        let region = &self.regions[ri];
        let mut done = 0;
        while done < buf.len() {
            let in_page = off % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(buf.len() - done);
            let dst = &mut buf[done..done + n];
            match region.page(off >> PAGE_SHIFT) {
                Some(page) => dst.copy_from_slice(&page[in_page..in_page + n]),
                None => dst.fill(0),
            }
            done += n;
            off += n;
        }
        Ok(())
    }

    /// Copies `data` to memory starting at `addr`.
    pub fn write(&mut self, addr: u32, data: &[u8]) -> Result<(), MemError> {
        let (ri, mut off) = self.locate(addr, data.len() as u64)?;
        let region = &mut self.regions[ri];
        let mut done = 0;
        while done < data.len() {
            let in_page = off % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(data.len() - done);
            region.page_mut(off >> PAGE_SHIFT)[in_page..in_page + n]
                .copy_from_slice(&data[done..done + n]);
            done += n;
            off += n;
        }
        Ok(())
    }

    /// Fills `len` bytes starting at `addr` by repeating `pattern` (which must not be empty;
    /// an empty pattern writes nothing). The pattern restarts at `addr`.
    pub fn fill(&mut self, addr: u32, len: u64, pattern: &[u8]) -> Result<(), MemError> {
        let (ri, mut off) = self.locate(addr, len)?;
        if pattern.is_empty() {
            return Ok(());
        }
        let region = &mut self.regions[ri];
        let len = len as usize;
        let mut done = 0;
        while done < len {
            let in_page = off % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min(len - done);
            let page = region.page_mut(off >> PAGE_SHIFT);
            for (k, b) in page[in_page..in_page + n].iter_mut().enumerate() {
                *b = pattern[(done + k) % pattern.len()];
            }
            done += n;
            off += n;
        }
        Ok(())
    }

    /// A borrowed view of `[addr, addr + len)` when the range lies inside one resident page;
    /// `None` otherwise (unmapped, crossing a page boundary, or never written). Hot loops use
    /// this and fall back to [`PhysMem::read`].
    #[inline]
    pub fn slice_in_page(&self, addr: u32, len: usize) -> Option<&[u8]> {
        let (ri, off) = self.locate(addr, len as u64).ok()?;
        let in_page = off % PAGE_SIZE;
        if in_page + len > PAGE_SIZE {
            return None;
        }
        let page = self.regions[ri].page(off >> PAGE_SHIFT)?;
        Some(&page[in_page..in_page + len])
    }

    /// Reads one byte.
    pub fn read_u8(&self, addr: u32) -> Result<u8, MemError> {
        let mut b = [0u8; 1];
        self.read(addr, &mut b)?;
        Ok(b[0])
    }

    /// Reads a little-endian u16 (any alignment).
    pub fn read_u16(&self, addr: u32) -> Result<u16, MemError> {
        let mut b = [0u8; 2];
        self.read(addr, &mut b)?;
        Ok(u16::from_le_bytes(b))
    }

    /// Reads a little-endian u32 (any alignment).
    #[inline]
    pub fn read_u32(&self, addr: u32) -> Result<u32, MemError> {
        // Fast path (command-list and index reads): inside one resident page.
        if let Some(&[a, b, c, d]) = self.slice_in_page(addr, 4) {
            return Ok(u32::from_le_bytes([a, b, c, d]));
        }
        let mut b = [0u8; 4];
        self.read(addr, &mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    /// Writes a little-endian u32.
    pub fn write_u32(&mut self, addr: u32, value: u32) -> Result<(), MemError> {
        self.write(addr, &value.to_le_bytes())
    }

    /// Reads `len` bytes into a new vector (for tools and tests; hot paths use [`PhysMem::read`]).
    pub fn read_vec(&self, addr: u32, len: usize) -> Result<Vec<u8>, MemError> {
        // Validate before allocating so that absurd lengths never allocate.
        self.locate(addr, len as u64)?;
        let mut v = vec![0; len];
        self.read(addr, &mut v)?;
        Ok(v)
    }

    /// Bytes this memory holds that `prev` does not share with it: every resident page whose
    /// `Arc` is not pointer-equal to `prev`'s page at the same address, plus the 1 MiB chunk
    /// tables that are not shared (what a copy-on-write snapshot costs on top of `prev`), each
    /// with its `Arc`'s two counters, plus the region tables that every clone owns (~2.4 KB).
    /// With `prev == None` every resident page and chunk table counts. Cheap: chunks shared
    /// whole are skipped with one pointer comparison. Memories with other region layouts count
    /// whole.
    pub fn bytes_not_shared_with(&self, prev: Option<&PhysMem>) -> u64 {
        use std::mem::size_of;
        const ARC_COUNTS: u64 = 2 * size_of::<usize>() as u64;
        const CHUNK_TABLE_BYTES: u64 = size_of::<Chunk>() as u64 + ARC_COUNTS;
        const PAGE_BYTES: u64 = PAGE_SIZE as u64 + ARC_COUNTS;
        let tables = self.regions.capacity() * size_of::<Region>()
            + self
                .regions
                .iter()
                .map(|r| r.chunks.capacity() * size_of::<Option<Arc<Chunk>>>())
                .sum::<usize>();
        let mut bytes = tables as u64;
        for (ri, region) in self.regions.iter().enumerate() {
            let other = prev
                .and_then(|p| p.regions.get(ri))
                .filter(|o| o.info == region.info);
            for (ci, chunk) in region.chunks.iter().enumerate() {
                let Some(chunk) = chunk else { continue };
                let other_chunk = other
                    .and_then(|o| o.chunks.get(ci))
                    .and_then(Option::as_ref);
                if other_chunk.is_some_and(|oc| Arc::ptr_eq(oc, chunk)) {
                    continue;
                }
                bytes += CHUNK_TABLE_BYTES;
                for (pi, page) in chunk.iter().enumerate() {
                    let Some(page) = page else { continue };
                    let shared = other_chunk
                        .and_then(|oc| oc[pi].as_ref())
                        .is_some_and(|op| Arc::ptr_eq(op, page));
                    if !shared {
                        bytes += PAGE_BYTES;
                    }
                }
            }
        }
        bytes
    }

    /// True if the two memories share every page or hold equal bytes in every page.
    pub fn same_contents(&self, other: &PhysMem) -> bool {
        if self.regions.len() != other.regions.len() {
            return false;
        }
        self.regions.iter().zip(&other.regions).all(|(a, b)| {
            a.info == b.info
                && a.pages().zip(b.pages()).all(|(pa, pb)| match (pa, pb) {
                    (Some(x), Some(y)) => Arc::ptr_eq(x, y) || x[..] == y[..],
                    (None, None) => true,
                    (Some(x), None) | (None, Some(x)) => x.iter().all(|&b| b == 0),
                })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The block table only skips regions that cannot hold the address: region lookups (and
    /// the range check of `locate`) agree with a plain scan of every region, for the 3DS
    /// layout and for layouts whose regions cross 256 MiB blocks, touch the top of the address
    /// space or leave blocks empty; every region boundary and random addresses are probed.
    #[test]
    fn region_lookup_equals_a_scan_of_every_region() {
        let custom = [
            RegionInfo {
                name: "a",
                base: 0x0FFF_F000,
                size: 0x2000,
            },
            RegionInfo {
                name: "b",
                base: 0x3000_0000,
                size: 0x2000_0000,
            },
            RegionInfo {
                name: "c",
                base: 0x9000_0000,
                size: 0x1000,
            },
            RegionInfo {
                name: "d",
                base: 0xFFFF_0000,
                size: 0x1_0000,
            },
        ];
        let layouts: [&[RegionInfo]; 3] = [&REGIONS, &custom, &[]];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for layout in layouts {
            let m = PhysMem::with_regions(layout);
            let scan = |addr: u32, len: u64| {
                layout
                    .iter()
                    .find(|r| addr >= r.base && u64::from(addr) < r.end())
                    .filter(|r| u64::from(addr) + len <= r.end())
                    .map(|r| r.name)
            };
            let mut probes: Vec<u32> = Vec::new();
            for r in layout {
                for a in [r.base, r.base + r.size - 1] {
                    probes.extend([a.wrapping_sub(1), a, a.wrapping_add(1)]);
                }
            }
            for _ in 0..20_000 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                probes.push((x >> 32) as u32);
            }
            for (k, &addr) in probes.iter().enumerate() {
                let len = [1u64, 4, 8, 0x1000][k % 4];
                let found = m
                    .locate(addr, len)
                    .ok()
                    .map(|(ri, _)| m.regions[ri].info.name);
                assert_eq!(found, scan(addr, len), "addr 0x{addr:08X} len {len}");
                assert_eq!(m.region_of(addr).map(|r| r.name), scan(addr, 1));
            }
        }
    }

    #[test]
    fn unshared_bytes_count_copied_pages_only() {
        let mut a = PhysMem::new();
        // Every clone owns its region tables, shared or not.
        let tables = a.bytes_not_shared_with(None);
        assert!(tables > 0 && tables < 8192, "{tables}");
        let arc = 2 * std::mem::size_of::<usize>() as u64;
        let page = PAGE_SIZE as u64 + arc;
        a.write(VRAM.base, &[1; 2 * PAGE_SIZE]).unwrap();
        let chunk = std::mem::size_of::<Chunk>() as u64 + arc;
        assert_eq!(a.bytes_not_shared_with(None), tables + chunk + 2 * page);
        let mut b = a.clone();
        assert_eq!(b.bytes_not_shared_with(Some(&a)), tables);
        b.write(VRAM.base + PAGE_SIZE as u32, &[2]).unwrap();
        assert_eq!(b.bytes_not_shared_with(Some(&a)), tables + chunk + page);
        b.write(FCRAM.base, &[3]).unwrap();
        assert_eq!(
            b.bytes_not_shared_with(Some(&a)),
            tables + 2 * chunk + 2 * page
        );
    }

    #[test]
    fn unwritten_memory_reads_zero() {
        let m = PhysMem::new();
        assert_eq!(m.read_u32(VRAM.base).unwrap(), 0);
        assert_eq!(m.read_u32(FCRAM.base + 0x0FFF_FFFC).unwrap(), 0);
        assert_eq!(m.resident_pages(), 0);
    }

    #[test]
    fn write_read_across_pages() {
        let mut m = PhysMem::new();
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 7) as u8).collect();
        let addr = VRAM.base + PAGE_SIZE as u32 - 3;
        m.write(addr, &data).unwrap();
        assert_eq!(m.read_vec(addr, data.len()).unwrap(), data);
        assert_eq!(m.resident_pages(), 4);
        assert!(m.slice_in_page(addr, 4).is_none(), "crosses a page");
        assert_eq!(m.slice_in_page(addr + 3, 4).unwrap(), &data[3..7]);
    }

    #[test]
    fn unmapped_accesses_are_errors() {
        let mut m = PhysMem::new();
        assert_eq!(
            m.read_u32(0).unwrap_err(),
            MemError::Unmapped { addr: 0, len: 4 }
        );
        // Straddling the end of VRAM into unmapped space.
        let end = VRAM.base + VRAM.size - 2;
        assert!(m.read_u32(end).is_err());
        assert!(m.write(end, &[1, 2, 3, 4]).is_err());
        assert!(m.read_vec(FCRAM.base, usize::MAX).is_err());
        assert!(m.fill(0xFFFF_FFF0, 0x100, &[1]).is_err());
        assert!(!m.is_mapped(0x1000_0000, 1));
    }

    #[test]
    fn clones_are_copy_on_write() {
        let mut a = PhysMem::new();
        a.write_u32(FCRAM.base, 0x1122_3344).unwrap();
        let snapshot = a.clone();
        a.write_u32(FCRAM.base, 0x5566_7788).unwrap();
        assert_eq!(snapshot.read_u32(FCRAM.base).unwrap(), 0x1122_3344);
        assert_eq!(a.read_u32(FCRAM.base).unwrap(), 0x5566_7788);
        assert!(!a.same_contents(&snapshot));
        a.write_u32(FCRAM.base, 0x1122_3344).unwrap();
        assert!(a.same_contents(&snapshot));
    }

    #[test]
    fn fill_repeats_pattern() {
        let mut m = PhysMem::new();
        m.fill(VRAM.base + 1, 7, &[1, 2, 3]).unwrap();
        assert_eq!(
            m.read_vec(VRAM.base, 9).unwrap(),
            [0, 1, 2, 3, 1, 2, 3, 1, 0]
        );
    }
}
