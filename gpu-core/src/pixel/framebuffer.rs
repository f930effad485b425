//! The render target: colour and depth/stencil buffers in VRAM (`pica-raster.md` §9.1, §9.7).
//!
//! Stage: storage of the fragment stage. Inputs: window pixel coordinates (x right, y **up**) and
//! colours / depth / stencil values; outputs: bytes in [`PhysMem`] laid out exactly as the PICA
//! stores them: 8×8 Morton tiles (or 32×32 blocks, see [`crate::pixel::tiling::TileMode::Block32`]),
//! memory row 0 at the **top**, so window row y lives in memory row `H − 1 − y`. Pixel encodings
//! come from [`crate::pixel::color`].
//!
//! Registers read (all in [`FramebufferConfig::from_regs`], via the typed views of
//! [`pica_cmd::regs::Regs`]): 0x112 COLORBUFFER_READ,
//! 0x113 COLORBUFFER_WRITE, 0x114 DEPTHBUFFER_READ, 0x115 DEPTHBUFFER_WRITE,
//! 0x116 DEPTHBUFFER_FORMAT, 0x117 COLORBUFFER_FORMAT, 0x11B FRAMEBUFFER_BLOCK32,
//! 0x11C DEPTHBUFFER_LOC, 0x11D COLORBUFFER_LOC, 0x11E FRAMEBUFFER_DIM. 0x110/0x111 (cache
//! invalidate/flush) have no effect on an emulator with coherent memory.
//!
//! Two access paths:
//! * [`FramebufferConfig`]'s `read_*`/`write_*` methods: one pixel at a time through
//!   [`PhysMem`], with typed errors (tools, tests, the viewer's pixel picker).
//! * [`TileCache`]: the fragment pipeline's hot path. It keeps one 8×8 tile of a buffer in a
//!   local array, so a triangle touches memory once per tile instead of once per pixel access.

use crate::memory::PhysMem;
use crate::pixel::color::{ColorFormat, DepthFormat, Rgba};
use crate::pixel::tiling::{TileMode, XY_TO_MORTON, flip_row, morton8};
use pica_cmd::regs::Regs;
use pica_cmd::regs::framebuffer::BlockMode;

/// An access to the render target that could not be done.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FramebufferError {
    /// The pixel lies outside the render target.
    #[error("pixel ({x}, {y}) is outside the {width}x{height} render target")]
    OutsideTarget {
        /// Window x.
        x: u32,
        /// Window y.
        y: u32,
        /// Target width.
        width: u32,
        /// Target height.
        height: u32,
    },
    /// COLORBUFFER_FORMAT (0x117 bits 16-18) holds an undocumented format id (5-7).
    #[error("colour buffer format {0} is not a known PICA colour-buffer format")]
    UnknownColorFormat(u32),
    /// DEPTHBUFFER_FORMAT (0x116 bits 0-1) is 1, whose meaning is unknown.
    #[error("depth buffer format {0} is not a known PICA depth-buffer format")]
    UnknownDepthFormat(u32),
    /// The pixel's bytes are not in mapped physical memory.
    #[error("framebuffer pixel at physical address 0x{addr:08X} is not mapped memory")]
    Unmapped {
        /// Physical address of the pixel.
        addr: u32,
    },
}

/// Render-target configuration, decoded once per draw.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FramebufferConfig {
    /// Colour buffer physical address (reg 0x11D bits 0-27 = PA >> 3).
    pub color_addr: u32,
    /// Depth/stencil buffer physical address (reg 0x11C bits 0-27 = PA >> 3).
    pub depth_addr: u32,
    /// Colour format, `None` for an unknown id (see [`FramebufferConfig::color_format_id`]).
    pub color_format: Option<ColorFormat>,
    /// Raw colour format id (reg 0x117 bits 16-18, unsigned 3-bit).
    pub color_format_id: u32,
    /// Depth format, `None` for id 1 (unknown).
    pub depth_format: Option<DepthFormat>,
    /// Raw depth format id (reg 0x116 bits 0-1, unsigned 2-bit).
    pub depth_format_id: u32,
    /// Width in pixels (reg 0x11E bits 0-10, unsigned 11-bit).
    pub width: u32,
    /// Height in pixels (reg 0x11E bits 12-21 hold height − 1, unsigned 10-bit).
    pub height: u32,
    /// Memory layout (reg 0x11B bit 0: 0 = 8×8 tiles, 1 = 32×32 blocks).
    pub tile_mode: TileMode,
    /// Colour reads enabled (reg 0x112 bits 0-3 ≠ 0).
    pub color_read: bool,
    /// Colour writes enabled (reg 0x113 bits 0-3 ≠ 0).
    pub color_write: bool,
    /// Stencil reads enabled (reg 0x114 bit 0).
    pub stencil_read: bool,
    /// Depth reads enabled (reg 0x114 bit 1).
    pub depth_read: bool,
    /// Stencil writes enabled (reg 0x115 bit 0, see [`DEPTH_STENCIL_WRITE_GATE`]).
    pub stencil_write: bool,
    /// Depth writes enabled (reg 0x115 bit 1, see [`DEPTH_STENCIL_WRITE_GATE`]).
    pub depth_write: bool,
}

/// How DEPTHBUFFER_WRITE (0x115) gates depth and stencil writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteGate {
    /// 3dbrew: bit 0 enables stencil writes, bit 1 depth writes.
    PerBit,
    /// Citra: any set bit enables both.
    AnyBit,
}

/// The DEPTHBUFFER_WRITE interpretation in use.
///
/// UNVERIFIED: \[3DB-I\] defines bit 0 = stencil and bit 1 = depth, and citro3d writes exactly that
/// (mask 3 for D24S8 targets, 2 for depth-only formats); Citra treats the register as one gate.
/// Both agree for the values real software writes (0, 2 with no stencil, 3); we follow 3dbrew.
pub const DEPTH_STENCIL_WRITE_GATE: WriteGate = WriteGate::PerBit;

impl FramebufferConfig {
    /// Decodes the framebuffer registers (see the module doc).
    ///
    /// UNVERIFIED: the read enables (0x112, 0x114) are decoded but not applied by the fragment
    /// pipeline, which always reads, as Citra does; what the hardware reads when they are 0 is
    /// unknown (`pica-raster.md` §13.2). FRAMEBUFFER_DIM bit 24 ("vertical flip?") is ignored.
    pub fn from_regs(regs: &[u32; 0x300]) -> Self {
        let r = Regs::new(regs);
        let dim = r.framebuffer_dim();
        let cf = r.colorbuffer_format().format.raw();
        let df = r.depth_format().raw();
        let dw = r.depthbuffer_write();
        let dr = r.depthbuffer_read();
        let (stencil_write, depth_write) = match DEPTH_STENCIL_WRITE_GATE {
            WriteGate::PerBit => (dw.stencil, dw.depth),
            WriteGate::AnyBit => (dw.stencil || dw.depth, dw.stencil || dw.depth),
        };
        FramebufferConfig {
            color_addr: r.colorbuffer_addr().0,
            depth_addr: r.depthbuffer_addr().0,
            color_format: ColorFormat::from_pica_id(cf),
            color_format_id: cf,
            depth_format: DepthFormat::from_id(df),
            depth_format_id: df,
            width: u32::from(dim.width),
            height: dim.height(),
            tile_mode: match r.framebuffer_block_mode() {
                BlockMode::Block32 => TileMode::Block32,
                _ => TileMode::Tiled8,
            },
            color_read: r.colorbuffer_read() != 0,
            color_write: r.colorbuffer_write() != 0,
            stencil_read: dr.stencil,
            depth_read: dr.depth,
            stencil_write,
            depth_write,
        }
    }

    /// True if (x, y) lies inside the render target.
    #[inline]
    pub const fn contains(&self, x: u32, y: u32) -> bool {
        x < self.width && y < self.height
    }

    fn check(&self, x: u32, y: u32) -> Result<(), FramebufferError> {
        if self.contains(x, y) {
            Ok(())
        } else {
            Err(FramebufferError::OutsideTarget {
                x,
                y,
                width: self.width,
                height: self.height,
            })
        }
    }

    /// Byte offset of window pixel (x, y) from the buffer start, for `bpp` bytes per pixel.
    /// Applies the y flip (memory row `H − 1 − y`) and the tiling.
    #[inline]
    pub fn pixel_offset(&self, x: u32, y: u32, bpp: u32) -> u32 {
        self.tile_mode
            .offset(x, flip_row(y, self.height), self.width, bpp)
    }

    /// Physical address of colour pixel (x, y), or an error if the pixel is outside the target or
    /// the format is unknown. Does not check that the memory is mapped.
    pub fn color_pixel_addr(&self, x: u32, y: u32) -> Result<u32, FramebufferError> {
        self.check(x, y)?;
        let f = self
            .color_format
            .ok_or(FramebufferError::UnknownColorFormat(self.color_format_id))?;
        let bpp = f.bytes_per_pixel() as u32;
        Ok(self.color_addr.wrapping_add(self.pixel_offset(x, y, bpp)))
    }

    /// Physical address of depth pixel (x, y) (see [`FramebufferConfig::color_pixel_addr`]).
    pub fn depth_pixel_addr(&self, x: u32, y: u32) -> Result<u32, FramebufferError> {
        self.check(x, y)?;
        let f = self
            .depth_format
            .ok_or(FramebufferError::UnknownDepthFormat(self.depth_format_id))?;
        let bpp = f.bytes_per_pixel() as u32;
        Ok(self.depth_addr.wrapping_add(self.pixel_offset(x, y, bpp)))
    }

    /// Reads and decodes colour pixel (x, y) (window coordinates).
    pub fn read_color(&self, mem: &PhysMem, x: u32, y: u32) -> Result<Rgba, FramebufferError> {
        let addr = self.color_pixel_addr(x, y)?;
        // ok: color_pixel_addr succeeded, so the format is known.
        let f = self
            .color_format
            .ok_or(FramebufferError::UnknownColorFormat(self.color_format_id))?;
        let mut b = [0u8; 4];
        mem.read(addr, &mut b[..f.bytes_per_pixel()])
            .map_err(|_| FramebufferError::Unmapped { addr })?;
        Ok(f.decode_word(b))
    }

    /// Encodes and writes colour pixel (x, y) (window coordinates).
    pub fn write_color(
        &self,
        mem: &mut PhysMem,
        x: u32,
        y: u32,
        c: Rgba,
    ) -> Result<(), FramebufferError> {
        let addr = self.color_pixel_addr(x, y)?;
        let f = self
            .color_format
            .ok_or(FramebufferError::UnknownColorFormat(self.color_format_id))?;
        let w = f.encode_word(c);
        mem.write(addr, &w[..f.bytes_per_pixel()])
            .map_err(|_| FramebufferError::Unmapped { addr })
    }

    /// Reads depth pixel (x, y): the depth value (unsigned 16- or 24-bit integer) and the stencil
    /// byte (0 for formats without stencil).
    pub fn read_depth_stencil(
        &self,
        mem: &PhysMem,
        x: u32,
        y: u32,
    ) -> Result<(u32, u8), FramebufferError> {
        let addr = self.depth_pixel_addr(x, y)?;
        let f = self
            .depth_format
            .ok_or(FramebufferError::UnknownDepthFormat(self.depth_format_id))?;
        let mut b = [0u8; 4];
        mem.read(addr, &mut b[..f.bytes_per_pixel()])
            .map_err(|_| FramebufferError::Unmapped { addr })?;
        Ok((f.decode_depth(b), f.decode_stencil(b)))
    }

    /// Writes the depth value of pixel (x, y), leaving a D24S8 stencil byte unchanged.
    pub fn write_depth(
        &self,
        mem: &mut PhysMem,
        x: u32,
        y: u32,
        depth: u32,
    ) -> Result<(), FramebufferError> {
        let addr = self.depth_pixel_addr(x, y)?;
        let f = self
            .depth_format
            .ok_or(FramebufferError::UnknownDepthFormat(self.depth_format_id))?;
        let n = (f.depth_bits() / 8) as usize;
        mem.write(addr, &depth.to_le_bytes()[..n])
            .map_err(|_| FramebufferError::Unmapped { addr })
    }

    /// Writes the stencil byte of pixel (x, y) (D24S8 only; other formats do nothing).
    pub fn write_stencil(
        &self,
        mem: &mut PhysMem,
        x: u32,
        y: u32,
        stencil: u8,
    ) -> Result<(), FramebufferError> {
        let addr = self.depth_pixel_addr(x, y)?;
        if self.depth_format != Some(DepthFormat::D24S8) {
            return Ok(());
        }
        let addr3 = addr.wrapping_add(3);
        mem.write(addr3, &[stencil])
            .map_err(|_| FramebufferError::Unmapped { addr: addr3 })
    }

    /// The whole colour buffer decoded, rows **top first** (as a person sees the image):
    /// `result[row·width + x]` is window pixel (x, height − 1 − row). For tools and tests.
    pub fn read_color_image(&self, mem: &PhysMem) -> Result<Vec<Rgba>, FramebufferError> {
        let mut out = Vec::with_capacity((self.width * self.height) as usize);
        for row in 0..self.height {
            let y = self.height - 1 - row;
            for x in 0..self.width {
                out.push(self.read_color(mem, x, y)?);
            }
        }
        Ok(out)
    }

    /// The whole depth buffer as (depth, stencil) pairs, rows top first (see
    /// [`FramebufferConfig::read_color_image`]).
    pub fn read_depth_image(&self, mem: &PhysMem) -> Result<Vec<(u32, u8)>, FramebufferError> {
        let mut out = Vec::with_capacity((self.width * self.height) as usize);
        for row in 0..self.height {
            let y = self.height - 1 - row;
            for x in 0..self.width {
                out.push(self.read_depth_stencil(mem, x, y)?);
            }
        }
        Ok(out)
    }
}

/// Largest tile: 64 pixels of 4 bytes.
pub const TILE_BYTES_MAX: usize = 256;

/// One tile a [`TileStore`] holds.
#[derive(Clone, Debug)]
struct StoredTile {
    /// Physical address of the tile.
    addr: u32,
    /// Bit n set: pixel with Morton index n is in mapped memory.
    mapped: u64,
    data: [u8; TILE_BYTES_MAX],
}

/// The modified tiles of a [`TileCache`] in deferred mode ([`TileCache::deferred`]): the
/// cache reads memory but never writes it; a dirty tile it lets go of is kept here (and read
/// back from here when the cache needs it again), and [`TileStore::write_back`] writes them
/// all to memory later.
///
/// The parallel pixel path gives each share one per buffer: during a batch nobody writes the
/// caller's memory, so the shares read it without copying a page, and after the batch the
/// stores (whose tiles are disjoint between shares) are written back. A store is meant to be
/// reused: [`TileStore::reset`] keeps its allocations.
#[derive(Clone, Debug, Default)]
pub struct TileStore {
    /// Address of tile number 0 (the buffer's base address).
    base: u32,
    /// Bytes per tile (64 × bytes per pixel).
    tile_len: u32,
    /// Per tile number ((address − base) / `tile_len`): 1 + index into `tiles`, 0 = not held.
    slots: Vec<u32>,
    /// The tiles held, in the order they were first stored.
    tiles: Vec<StoredTile>,
}

/// Tiles a [`TileStore`] keeps its allocation for across [`TileStore::reset`]s (256 KiB of
/// tile data); above this it is freed, so an idle store stays small.
const STORE_KEEP_TILES: usize = 1024;

impl TileStore {
    /// Empties the store for a buffer at `base` with `bpp` bytes per pixel and `tiles` tiles
    /// (tiles at other addresses are still held correctly, found by a linear search).
    pub fn reset(&mut self, base: u32, bpp: u32, tiles: usize) {
        for t in &self.tiles {
            let n = t.addr.wrapping_sub(self.base) / self.tile_len.max(1);
            if let Some(s) = self.slots.get_mut(n as usize) {
                *s = 0;
            }
        }
        self.tiles.clear();
        if self.tiles.capacity() > STORE_KEEP_TILES {
            self.tiles.shrink_to(STORE_KEEP_TILES);
        }
        self.base = base;
        self.tile_len = 64 * bpp.clamp(1, 4);
        // Bounded by the largest render target (2048 × 1024 pixels: 32 Ki tiles).
        self.slots.resize(tiles.min(1 << 15), 0);
    }

    /// Number of tiles held.
    pub fn len(&self) -> usize {
        self.tiles.len()
    }

    /// True if no tile is held.
    pub fn is_empty(&self) -> bool {
        self.tiles.is_empty()
    }

    /// The slot of the tile at `addr` in the dense table, if it has one.
    fn slot(&self, addr: u32) -> Option<usize> {
        let off = addr.wrapping_sub(self.base);
        let len = self.tile_len.max(1);
        if !off.is_multiple_of(len) {
            return None;
        }
        let n = (off / len) as usize;
        (n < self.slots.len()).then_some(n)
    }

    /// Index into `tiles` of the tile at `addr`, if held.
    fn find(&self, addr: u32) -> Option<usize> {
        match self.slot(addr) {
            Some(n) => self.slots[n].checked_sub(1).map(|i| i as usize),
            None => self.tiles.iter().position(|t| t.addr == addr),
        }
    }

    /// Keeps `data` (one tile) as the bytes of the tile at `addr`.
    fn put(&mut self, addr: u32, mapped: u64, data: &[u8; TILE_BYTES_MAX]) {
        if let Some(i) = self.find(addr) {
            let t = &mut self.tiles[i];
            t.mapped = mapped;
            t.data = *data;
            return;
        }
        if let Some(n) = self.slot(addr) {
            // ok: at most `slots.len()` ≤ 32 Ki tiles have a slot, so the index fits.
            self.slots[n] = self.tiles.len() as u32 + 1;
        }
        self.tiles.push(StoredTile {
            addr,
            mapped,
            data: *data,
        });
    }

    /// Writes every held tile to `mem` (the mapped pixels of each).
    pub fn write_back(&self, mem: &mut PhysMem) {
        let len = self.tile_len as usize;
        for t in &self.tiles {
            write_tile(mem, t.addr, t.mapped, &t.data[..len.min(TILE_BYTES_MAX)]);
        }
    }
}

/// Writes the tile `data` (64 pixels) to `addr`: in one piece when every pixel is mapped,
/// otherwise the mapped pixels one by one.
fn write_tile(mem: &mut PhysMem, addr: u32, mapped: u64, data: &[u8]) {
    if mapped == u64::MAX {
        // ok: the same range was read successfully at load time.
        let _ = mem.write(addr, data);
        return;
    }
    let bpp = data.len() / 64;
    for m in 0..64usize {
        if mapped & (1 << m) != 0 {
            let a = addr.wrapping_add((m * bpp) as u32);
            let _ = mem.write(a, &data[m * bpp..(m + 1) * bpp]);
        }
    }
}

/// The buffer's part of a [`TileCache`] lookup key: base address, width and layout
/// (see [`TileCache::pixel4_keyed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BufferKey(u64);

impl BufferKey {
    /// The key of the buffer at `base` laid out as `fb` says.
    #[inline(always)]
    pub fn new(fb: &FramebufferConfig, base: u32) -> Self {
        let mode = match fb.tile_mode {
            TileMode::Linear => 0u64,
            TileMode::Tiled8 => 1,
            TileMode::Block32 => 2,
        };
        BufferKey((u64::from(base) << 32) | (u64::from(fb.width) << 2) | mode)
    }
}

/// A write-back cache of one 8×8 tile of a colour or depth buffer.
///
/// The fragment pipeline asks for a pixel's bytes with [`TileCache::pixel`]; when the pixel is
/// in another tile, the current tile is written back (if modified) and the new one loaded.
/// [`TileCache::flush`] writes the current tile back; the pipeline calls it at the end of every
/// triangle so memory is always up to date between triangles.
///
/// Pixels whose bytes are not in mapped memory read as zero and their writes are dropped; they
/// are counted in [`TileCache::unmapped_pixels`]. A tile that straddles the end of a memory
/// region is handled pixel by pixel.
#[derive(Clone, Debug)]
pub struct TileCache {
    /// Bytes per pixel (2, 3 or 4).
    bpp: u32,
    /// Physical address of the cached tile; `None` if nothing is cached.
    tile: Option<u32>,
    /// What the last [`TileCache::pixel`] call's tile was looked up by: buffer address, width
    /// and layout, then the tile's column and memory tile row (`None` after an invalidation).
    /// A call with the same key is the same tile without recomputing its address.
    key: Option<(u64, u64)>,
    /// Bit n set: pixel with Morton index n is in mapped memory.
    mapped: u64,
    /// The tile was modified since it was loaded.
    dirty: bool,
    data: [u8; TILE_BYTES_MAX],
    /// Pixel accesses that hit unmapped memory (reads and writes, counted at load time).
    pub unmapped_pixels: u64,
    /// Tiles loaded from memory (statistics).
    pub tiles_loaded: u64,
    /// Deferred mode: where modified tiles go instead of memory (see [`TileStore`]).
    store: Option<TileStore>,
}

impl TileCache {
    /// An empty cache for pixels of `bpp` bytes (clamped to 1..=4).
    pub fn new(bpp: u32) -> Self {
        TileCache {
            bpp: bpp.clamp(1, 4),
            tile: None,
            key: None,
            mapped: 0,
            dirty: false,
            data: [0; TILE_BYTES_MAX],
            unmapped_pixels: 0,
            tiles_loaded: 0,
            store: None,
        }
    }

    /// A cache in deferred mode: it reads tiles from memory (or from `store` when it modified
    /// them before) and never writes memory; modified tiles go to `store` (emptied first by
    /// the caller with [`TileStore::reset`]). Get the store back with
    /// [`TileCache::into_store`] and write it with [`TileStore::write_back`].
    pub fn deferred(bpp: u32, store: TileStore) -> Self {
        let mut c = Self::new(bpp);
        c.store = Some(store);
        c
    }

    /// Ends deferred mode: keeps the current tile if modified and returns the store (`None`
    /// for a cache not in deferred mode).
    pub fn into_store(mut self) -> Option<TileStore> {
        self.save_dirty();
        self.store.take()
    }

    /// In deferred mode, moves the current tile into the store if it was modified; true if
    /// the cache is in deferred mode.
    fn save_dirty(&mut self) -> bool {
        let Some(store) = self.store.as_mut() else {
            return false;
        };
        if let (Some(tile_addr), true) = (self.tile, self.dirty) {
            store.put(tile_addr, self.mapped, &self.data);
        }
        self.dirty = false;
        true
    }

    /// Bytes per pixel of the cached buffer.
    pub fn bpp(&self) -> u32 {
        self.bpp
    }

    fn tile_len(&self) -> usize {
        64 * self.bpp as usize
    }

    /// The bytes of window pixel (x, y) of the buffer at `base` described by `fb`, loading its
    /// tile if needed; `None` if the pixel is not in mapped memory. The caller must pass pixels
    /// inside the render target.
    #[inline(always)]
    pub fn pixel(
        &mut self,
        mem: &mut PhysMem,
        fb: &FramebufferConfig,
        base: u32,
        x: u32,
        y: u32,
    ) -> Option<&mut [u8]> {
        let ym = flip_row(y, fb.height);
        let key = (
            BufferKey::new(fb, base).0,
            (u64::from(ym >> 3) << 32) | u64::from(x >> 3),
        );
        if self.key != Some(key) {
            self.switch_tile(mem, fb, base, x, ym, key);
        }
        let m = morton8(x & 7, ym & 7);
        if self.mapped & (1u64 << m) == 0 {
            self.unmapped_pixels += 1;
            return None;
        }
        let off = (m * self.bpp) as usize;
        self.data.get_mut(off..off + self.bpp as usize)
    }

    /// As [`TileCache::pixel`], but the pixel's bytes as a 4-byte window with a fixed size (the
    /// fast path's word loads and stores need no length checks): the pixel's
    /// [`TileCache::bpp`] bytes first, then bytes of the next pixel (or padding) that the
    /// caller must keep unchanged; use [`TileCache::load_word`] and [`TileCache::store_word`].
    #[inline(always)]
    pub fn pixel4(
        &mut self,
        mem: &mut PhysMem,
        fb: &FramebufferConfig,
        base: u32,
        x: u32,
        y: u32,
    ) -> Option<&mut [u8; 4]> {
        self.pixel4_keyed(mem, fb, base, BufferKey::new(fb, base), x, y)
    }

    /// [`TileCache::pixel4`] with the buffer's part of the lookup key computed by the caller
    /// (`key` must be [`BufferKey::new`] of the same `fb` and `base`), so a loop over many
    /// pixels of one buffer computes it once.
    #[inline(always)]
    pub fn pixel4_keyed(
        &mut self,
        mem: &mut PhysMem,
        fb: &FramebufferConfig,
        base: u32,
        key: BufferKey,
        x: u32,
        y: u32,
    ) -> Option<&mut [u8; 4]> {
        let bpp = self.bpp as usize;
        let ym = flip_row(y, fb.height);
        let key = (key.0, (u64::from(ym >> 3) << 32) | u64::from(x >> 3));
        if self.key != Some(key) {
            self.switch_tile(mem, fb, base, x, ym, key);
        }
        // The table form of `morton8` (one load instead of six masks and shifts).
        let m = XY_TO_MORTON[((ym & 7) * 8 + (x & 7)) as usize] as usize;
        if self.mapped & (1u64 << m) == 0 {
            self.unmapped_pixels += 1;
            return None;
        }
        // ok: m ≤ 63 and bpp ≤ 4, so the window ends at most at byte 256 = TILE_BYTES_MAX.
        let off = m * bpp;
        self.data.get_mut(off..off + 4)?.try_into().ok()
    }

    /// The batch form of [`TileCache::pixel4_keyed`]: makes the tile of window pixel (x, y)
    /// current exactly as `pixel4_keyed` does (same key, same loads and write-backs) and
    /// returns its bytes and its mapped-pixel mask (bit [`TileCache::tile_index`] set: that
    /// pixel is in mapped memory). The fragment pipeline's batch colour write looks a tile up
    /// once for a run of pixels in it ([`TileCache::same_tile`]) instead of once per pixel; it
    /// must count the unmapped pixels it skips in [`TileCache::unmapped_pixels`] and call
    /// [`TileCache::mark_dirty`] after changing bytes, as the per-pixel callers do.
    #[inline(always)]
    pub fn tile_keyed(
        &mut self,
        mem: &mut PhysMem,
        fb: &FramebufferConfig,
        base: u32,
        key: BufferKey,
        x: u32,
        y: u32,
    ) -> (&mut [u8; TILE_BYTES_MAX], u64) {
        let ym = flip_row(y, fb.height);
        let key = (key.0, (u64::from(ym >> 3) << 32) | u64::from(x >> 3));
        if self.key != Some(key) {
            self.switch_tile(mem, fb, base, x, ym, key);
        }
        (&mut self.data, self.mapped)
    }

    /// The Morton index inside its tile of window pixel (x, y) of a buffer `height` rows high
    /// (the index [`TileCache::pixel4_keyed`] uses; the pixel's bytes start at index × bpp).
    #[inline(always)]
    pub fn tile_index(x: u32, y: u32, height: u32) -> usize {
        let ym = flip_row(y, height);
        XY_TO_MORTON[((ym & 7) * 8 + (x & 7)) as usize] as usize
    }

    /// True if window pixels (x0, y0) and (x1, y1) of a buffer `height` rows high are looked
    /// up under the same tile position (one [`TileCache::tile_keyed`] serves both).
    #[inline(always)]
    pub fn same_tile(x0: u32, y0: u32, x1: u32, y1: u32, height: u32) -> bool {
        (x0 >> 3) == (x1 >> 3) && (flip_row(y0, height) >> 3) == (flip_row(y1, height) >> 3)
    }

    /// The 4-byte window at byte `off` of a tile from [`TileCache::tile_keyed`] as a
    /// little-endian word, masked to the pixel's bytes (`mask` = [`TileCache::word_mask`]):
    /// [`TileCache::load_word`] on the window. `off` is index × bpp ≤ 63 × 4, so the window
    /// is inside the tile.
    #[inline(always)]
    pub fn tile_load(data: &[u8; TILE_BYTES_MAX], off: usize, mask: u32) -> u32 {
        let off = off.min(TILE_BYTES_MAX - 4);
        let w = [data[off], data[off + 1], data[off + 2], data[off + 3]];
        u32::from_le_bytes(w) & mask
    }

    /// [`TileCache::store_word`] on the window at byte `off` of a tile from
    /// [`TileCache::tile_keyed`]: stores the pixel's bytes of `v`, keeps the rest; true if
    /// any of the pixel's bytes changed. Stores unconditionally (the same bytes when nothing
    /// changed): a branch on the comparison was mispredicted for about 1 written fragment in 3
    /// of the sprite scene, where blending leaves many pixels as they were (callgrind's branch
    /// simulation: 0.56 M of the replay's 5.05 M conditional mispredictions; without the
    /// branch the sprite scene replays ~5% faster at 1 thread, paired runs).
    #[inline(always)]
    pub fn tile_store(data: &mut [u8; TILE_BYTES_MAX], off: usize, v: u32, mask: u32) -> bool {
        let off = off.min(TILE_BYTES_MAX - 4);
        let w = [data[off], data[off + 1], data[off + 2], data[off + 3]];
        let old = u32::from_le_bytes(w);
        let new = (old & !mask) | (v & mask);
        data[off..off + 4].copy_from_slice(&new.to_le_bytes());
        new != old
    }

    /// The pixel bytes of a [`TileCache::pixel4`] window, zero-padded past the pixel's bytes
    /// (`mask` = [`TileCache::word_mask`]; what `load_pixel` gives for a `bpp`-byte slice).
    #[inline(always)]
    pub fn load_word(px: &[u8; 4], mask: u32) -> [u8; 4] {
        (u32::from_le_bytes(*px) & mask).to_le_bytes()
    }

    /// Stores the pixel's bytes of `v` (`mask` = [`TileCache::word_mask`]) into the window
    /// `px`, keeping the rest; true if any of the pixel's bytes changed (the caller then marks
    /// the tile dirty).
    #[inline(always)]
    pub fn store_word(px: &mut [u8; 4], v: [u8; 4], mask: u32) -> bool {
        let old = u32::from_le_bytes(*px);
        let new = u32::from_le_bytes(v);
        if (old ^ new) & mask == 0 {
            return false;
        }
        *px = ((old & !mask) | (new & mask)).to_le_bytes();
        true
    }

    /// Mask of the pixel's bytes in a [`TileCache::pixel4`] window (as a little-endian word).
    #[inline(always)]
    pub fn word_mask(&self) -> u32 {
        u32::MAX >> (8 * (4 - self.bpp))
    }

    /// Makes the tile of (x, memory row `ym`) current (the slow part of [`TileCache::pixel`]).
    #[inline(never)]
    fn switch_tile(
        &mut self,
        mem: &mut PhysMem,
        fb: &FramebufferConfig,
        base: u32,
        x: u32,
        ym: u32,
        key: (u64, u64),
    ) {
        // A new tile position: compare addresses (different positions may share a tile's bytes
        // when the width is not a multiple of 8), so loads happen exactly when the address
        // changes.
        let tile_addr = base.wrapping_add(fb.tile_mode.offset(x & !7, ym & !7, fb.width, self.bpp));
        if self.tile != Some(tile_addr) {
            self.flush(mem);
            self.load(mem, tile_addr);
        }
        self.key = Some(key);
    }

    /// Marks the current tile as modified (call after changing bytes from [`TileCache::pixel`]).
    #[inline]
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    fn load(&mut self, mem: &PhysMem, tile_addr: u32) {
        let len = self.tile_len();
        self.tiles_loaded += 1;
        self.tile = Some(tile_addr);
        self.dirty = false;
        if let Some(t) = self
            .store
            .as_ref()
            .and_then(|s| s.find(tile_addr).map(|i| &s.tiles[i]))
        {
            self.mapped = t.mapped;
            self.data = t.data;
            return;
        }
        if mem.read(tile_addr, &mut self.data[..len]).is_ok() {
            self.mapped = u64::MAX;
            return;
        }
        // Partly or wholly unmapped: go pixel by pixel.
        self.mapped = 0;
        let bpp = self.bpp as usize;
        for m in 0..64usize {
            let chunk = &mut self.data[m * bpp..(m + 1) * bpp];
            let ok = tile_addr
                .checked_add((m * bpp) as u32)
                .is_some_and(|a| mem.read(a, chunk).is_ok());
            if ok {
                self.mapped |= 1 << m;
            } else {
                chunk.fill(0);
            }
        }
    }

    /// Writes the cached tile back if it was modified (in deferred mode: into the store).
    pub fn flush(&mut self, mem: &mut PhysMem) {
        if self.save_dirty() {
            return;
        }
        let Some(tile_addr) = self.tile else { return };
        if !self.dirty {
            return;
        }
        self.dirty = false;
        let len = self.tile_len();
        write_tile(mem, tile_addr, self.mapped, &self.data[..len]);
    }

    /// Writes back and forgets the cached tile (call before anything else may change memory).
    pub fn invalidate(&mut self, mem: &mut PhysMem) {
        self.flush(mem);
        self.tile = None;
        self.key = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::VRAM;

    fn regs_for(color_fmt: u32, depth_fmt: u32, w: u32, h: u32) -> Box<[u32; 0x300]> {
        let mut r = Box::new([0u32; 0x300]);
        r[0x11D] = VRAM.base >> 3;
        r[0x11C] = (VRAM.base + 0x10_0000) >> 3;
        r[0x117] = color_fmt << 16;
        r[0x116] = depth_fmt;
        r[0x11E] = w | ((h - 1) << 12) | (1 << 24);
        r[0x112] = 0xF;
        r[0x113] = 0xF;
        r[0x114] = 3;
        r[0x115] = 3;
        r
    }

    #[test]
    fn decodes_registers() {
        let r = regs_for(2, 3, 400, 240);
        let fb = FramebufferConfig::from_regs(&r);
        assert_eq!(fb.color_addr, VRAM.base);
        assert_eq!(fb.depth_addr, VRAM.base + 0x10_0000);
        assert_eq!(fb.color_format, Some(ColorFormat::Rgb5a1));
        assert_eq!(fb.depth_format, Some(DepthFormat::D24S8));
        assert_eq!((fb.width, fb.height), (400, 240));
        assert_eq!(fb.tile_mode, TileMode::Tiled8);
        assert!(fb.color_write && fb.depth_write && fb.stencil_write);
        let mut r2 = r.clone();
        r2[0x115] = 2;
        let fb2 = FramebufferConfig::from_regs(&r2);
        assert!(fb2.depth_write && !fb2.stencil_write);
        r2[0x117] = 5 << 16;
        r2[0x116] = 1;
        let fb3 = FramebufferConfig::from_regs(&r2);
        assert_eq!(fb3.color_format, None);
        assert_eq!(fb3.depth_format, None);
        assert_eq!(
            fb3.color_pixel_addr(0, 0),
            Err(FramebufferError::UnknownColorFormat(5))
        );
        assert_eq!(
            fb3.depth_pixel_addr(0, 0),
            Err(FramebufferError::UnknownDepthFormat(1))
        );
    }

    #[test]
    fn pixel_addresses_flip_y_and_tile() {
        let r = regs_for(0, 0, 16, 16);
        let fb = FramebufferConfig::from_regs(&r);
        // Window (0, 15) is memory row 0: the very first pixel.
        assert_eq!(fb.color_pixel_addr(0, 15).unwrap(), VRAM.base);
        // Window (0, 0) is memory row 15: tile row 1 (16·8 pixels), morton(0, 7) = 42.
        assert_eq!(
            fb.color_pixel_addr(0, 0).unwrap(),
            VRAM.base + (128 + 42) * 4
        );
        // Window (9, 14) is memory row 1: tile 1 (64 pixels), morton(1, 1) = 3.
        assert_eq!(
            fb.color_pixel_addr(9, 14).unwrap(),
            VRAM.base + (64 + 3) * 4
        );
        assert!(matches!(
            fb.color_pixel_addr(16, 0),
            Err(FramebufferError::OutsideTarget { .. })
        ));
        // D16 depth: 2 bytes per pixel.
        assert_eq!(
            fb.depth_pixel_addr(0, 0).unwrap(),
            VRAM.base + 0x10_0000 + (128 + 42) * 2
        );
    }

    #[test]
    fn color_round_trip_in_every_format() {
        for f in ColorFormat::ALL {
            let r = regs_for(f.pica_id(), 3, 8, 8);
            let fb = FramebufferConfig::from_regs(&r);
            let mut mem = PhysMem::new();
            let c = [0xF8, 0x84, 0x10, 0xFF];
            fb.write_color(&mut mem, 3, 5, c).unwrap();
            let back = fb.read_color(&mem, 3, 5).unwrap();
            assert_eq!(back, f.decode_word(f.encode_word(c)), "{f:?}");
            // The bytes sit where §9.7 says: memory row 8 − 1 − 5 = 2, morton(3, 2) = 13.
            let bpp = f.bytes_per_pixel();
            let raw = mem.read_vec(VRAM.base + 13 * bpp as u32, bpp).unwrap();
            assert_eq!(raw, f.encode_word(c)[..bpp].to_vec(), "{f:?}");
        }
    }

    #[test]
    fn rgba8_bytes_are_abgr_in_memory() {
        let fb = FramebufferConfig::from_regs(&regs_for(0, 3, 8, 8));
        let mut mem = PhysMem::new();
        fb.write_color(&mut mem, 0, 7, [0x11, 0x22, 0x33, 0x44])
            .unwrap();
        assert_eq!(
            mem.read_vec(VRAM.base, 4).unwrap(),
            [0x44, 0x33, 0x22, 0x11]
        );
    }

    #[test]
    fn depth_and_stencil_are_independent() {
        let fb = FramebufferConfig::from_regs(&regs_for(0, 3, 8, 8));
        let mut mem = PhysMem::new();
        fb.write_stencil(&mut mem, 1, 1, 0x5A).unwrap();
        fb.write_depth(&mut mem, 1, 1, 0x12_3456).unwrap();
        assert_eq!(
            fb.read_depth_stencil(&mem, 1, 1).unwrap(),
            (0x12_3456, 0x5A)
        );
        fb.write_stencil(&mut mem, 1, 1, 0x01).unwrap();
        assert_eq!(
            fb.read_depth_stencil(&mem, 1, 1).unwrap(),
            (0x12_3456, 0x01)
        );
        // D16: 2 bytes, no stencil.
        let fb16 = FramebufferConfig::from_regs(&regs_for(0, 0, 8, 8));
        fb16.write_depth(&mut mem, 0, 0, 0xBEEF).unwrap();
        fb16.write_stencil(&mut mem, 0, 0, 9).unwrap();
        assert_eq!(fb16.read_depth_stencil(&mem, 0, 0).unwrap(), (0xBEEF, 0));
    }

    #[test]
    fn unmapped_buffers_are_errors_not_panics() {
        let mut r = regs_for(0, 3, 8, 8);
        r[0x11D] = 0x0800_0000 >> 3; // PA 0x08000000: unmapped
        let fb = FramebufferConfig::from_regs(&r);
        let mut mem = PhysMem::new();
        assert!(matches!(
            fb.read_color(&mem, 0, 0),
            Err(FramebufferError::Unmapped { .. })
        ));
        assert!(matches!(
            fb.write_color(&mut mem, 0, 0, [0; 4]),
            Err(FramebufferError::Unmapped { .. })
        ));
        let mut cache = TileCache::new(4);
        assert!(cache.pixel(&mut mem, &fb, fb.color_addr, 0, 0).is_none());
        assert_eq!(cache.unmapped_pixels, 1);
    }

    #[test]
    fn tile_cache_writes_back_and_handles_region_ends() {
        let fb = FramebufferConfig::from_regs(&regs_for(0, 3, 16, 8));
        let mut mem = PhysMem::new();
        let mut cache = TileCache::new(4);
        let px = cache.pixel(&mut mem, &fb, fb.color_addr, 9, 0).unwrap();
        px.copy_from_slice(&[1, 2, 3, 4]);
        cache.mark_dirty();
        // Not written yet.
        assert_eq!(fb.read_color(&mem, 9, 0).unwrap(), [0, 0, 0, 0]);
        // Touching another tile writes the first back.
        cache.pixel(&mut mem, &fb, fb.color_addr, 0, 0).unwrap();
        assert_eq!(
            fb.read_color(&mem, 9, 0).unwrap(),
            ColorFormat::Rgba8.decode(&[1, 2, 3, 4])
        );
        assert_eq!(cache.tiles_loaded, 2);

        // A buffer whose first tile straddles the end of VRAM: 128 bytes mapped, 128 not.
        let mut r = regs_for(0, 3, 8, 8);
        r[0x11D] = (VRAM.base + VRAM.size - 128) >> 3;
        let fb = FramebufferConfig::from_regs(&r);
        let mut cache = TileCache::new(4);
        // Morton index 0 (window (0, 7)) is mapped, index 63 (window (7, 0)) is not.
        cache
            .pixel(&mut mem, &fb, fb.color_addr, 0, 7)
            .unwrap()
            .copy_from_slice(&[9; 4]);
        cache.mark_dirty();
        assert!(cache.pixel(&mut mem, &fb, fb.color_addr, 7, 0).is_none());
        cache.flush(&mut mem);
        assert_eq!(mem.read_vec(fb.color_addr, 4).unwrap(), [9; 4]);
    }

    /// A deferred cache leaves memory alone, reads its own earlier writes back from its store
    /// (also for tiles straddling the end of VRAM and tiles outside the store's dense table),
    /// and after the write-back memory equals what a normal cache leaves.
    #[test]
    fn deferred_cache_matches_the_write_back_cache() {
        for (base, w, h) in [
            (VRAM.base, 32u32, 16u32),
            // The last tiles straddle the end of VRAM.
            (VRAM.base + VRAM.size - 32 * 16 * 4 + 128, 32, 16),
        ] {
            let mut r = regs_for(0, 3, w, h);
            r[0x11D] = base >> 3;
            let fb = FramebufferConfig::from_regs(&r);
            let mut start = PhysMem::new();
            let noise: Vec<u8> = (0..w * h * 4).map(|i| (i * 7 + 3) as u8).collect();
            for (i, b) in noise.iter().enumerate() {
                let _ = start.write(base.wrapping_add(i as u32), &[*b]);
            }
            // A walk that leaves tiles and comes back to them, writing each pixel twice.
            let walk: Vec<(u32, u32, u8)> = (0..3 * w * h)
                .map(|i| ((i * 13) % w, (i * 5 / w) % h, i as u8))
                .collect();
            let run = |cache: &mut TileCache, mem: &mut PhysMem| {
                let mut seen = Vec::new();
                for &(x, y, v) in &walk {
                    if let Some(px) = cache.pixel(mem, &fb, fb.color_addr, x, y) {
                        seen.push(px[0]);
                        px[0] = px[0].wrapping_add(v);
                        cache.mark_dirty();
                    }
                }
                seen
            };
            let mut normal_mem = start.clone();
            let mut normal = TileCache::new(4);
            let seen_normal = run(&mut normal, &mut normal_mem);
            normal.flush(&mut normal_mem);

            let mut deferred_mem = start.clone();
            let mut store = TileStore::default();
            // The dense table covers only the first 3 tiles: the rest are searched for.
            store.reset(fb.color_addr, 4, 3);
            let mut deferred = TileCache::deferred(4, store);
            let seen_deferred = run(&mut deferred, &mut deferred_mem);
            deferred.flush(&mut deferred_mem);
            assert_eq!(deferred.unmapped_pixels, normal.unmapped_pixels);
            let store = deferred.into_store().unwrap();
            assert_eq!(seen_deferred, seen_normal, "reads see earlier writes");
            let len = (w * h * 4) as usize;
            let read = |m: &PhysMem| {
                (0..len)
                    .map(|i| {
                        let mut b = [0u8];
                        m.read(base.wrapping_add(i as u32), &mut b).map(|_| b[0])
                    })
                    .collect::<Vec<_>>()
            };
            assert_eq!(read(&deferred_mem), read(&start), "nothing written yet");
            assert!(!store.is_empty() && store.len() <= (w * h / 64) as usize);
            store.write_back(&mut deferred_mem);
            assert_eq!(read(&deferred_mem), read(&normal_mem));
            // Reset keeps nothing.
            let mut store = store;
            store.reset(fb.color_addr, 4, 8);
            assert!(store.is_empty());
        }
    }

    #[test]
    fn whole_image_is_upright() {
        let fb = FramebufferConfig::from_regs(&regs_for(0, 3, 8, 8));
        let mut mem = PhysMem::new();
        fb.write_color(&mut mem, 2, 7, [255, 0, 0, 255]).unwrap(); // top row
        let img = fb.read_color_image(&mem).unwrap();
        assert_eq!(img[2], [255, 0, 0, 255]);
        assert_eq!(img.len(), 64);
    }
}
