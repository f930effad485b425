//! Texture units 0-2 as the pixel pipeline uses them: the [`TextureSampler`] interface,
//! [`TextureUnits`] (samplers from [`crate::pixel::texture`]) and [`TextureCache`] (decoded textures
//! reused across draws).
//!
//! Stage: texturing inside the fragment stage. Inputs: registers 0x080-0x09E (decoded by
//! [`crate::pixel::texture::TextureConfig`]), texture bytes in [`PhysMem`], and per-fragment texture
//! coordinates with their derivatives from [`crate::pixel::raster`]. Output: one RGBA colour per unit.
//!
//! A draw samples its textures as they were when the draw started (the textures are decoded or
//! looked up in the cache when the pipeline is built), which also makes a draw that renders
//! into a texture it samples deterministic.

use std::sync::Arc;

use crate::debug::fragment::TexelRecord;
use crate::memory::{PAGE_SIZE, PhysMem};
use crate::pixel::color::Rgba;
use crate::pixel::fragment::PixelPath;
use crate::pixel::raster::Fragment;
use crate::pixel::texture::{
    DecodedTexels, Gradients, RenderMode, Sampler, TexUnitsControl, TextureConfig, TextureError,
    UnitLookup,
};

/// Texture units 0-2 as the fragment pipeline sees them.
///
/// The sampler gets the fragment (texture coordinates, tc0.w, derivatives) and returns the
/// colour of each unit the combiners read.
pub trait TextureSampler {
    /// True if unit `unit` (0-2) is enabled (reg 0x080 bits 0-2); disabled units give (0,0,0,0).
    fn enabled(&self, unit: usize) -> bool;
    /// Whether the sampler needs [`Fragment::tc_grad`] (mipmaps or different min/mag filters).
    fn needs_gradients(&self) -> bool;
    /// The colour of enabled unit `unit` (0-2) for `frag`.
    fn sample(&self, mem: &PhysMem, unit: usize, frag: &Fragment) -> Rgba;
    /// As [`TextureSampler::sample`], with the number of texels the lookup read (1 per
    /// nearest tap, 4 per bilinear tap, summed over the mip levels read; the cost table's
    /// "texels fetched"). The default counts none.
    #[inline]
    fn sample_counted(&self, mem: &PhysMem, unit: usize, frag: &Fragment) -> (Rgba, u32) {
        (self.sample(mem, unit, frag), 0)
    }
    /// [`TextureSampler::sample_counted`] for every fragment of `frags` (a batch of the fast
    /// traversal, or the surviving fragments of one): `out[i]` receives the colour of
    /// `frags[i]` (`out` is at least as long as `frags`); returns the total texel count.
    /// Bit-identical to calling `sample_counted` per fragment (the default does exactly that).
    #[inline]
    fn sample_batch(
        &self,
        mem: &PhysMem,
        unit: usize,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) -> u64 {
        let mut texels = 0u64;
        for (o, f) in out.iter_mut().zip(frags) {
            let (c, n) = self.sample_counted(mem, unit, f);
            *o = c;
            texels += u64::from(n);
        }
        texels
    }
    /// Which pixel path the pipeline runs ([`PixelPath::Reference`]: sample through the
    /// generic code, the oracle of the specialised routines). The default ignores it.
    fn set_path(&mut self, _path: PixelPath) {}
    /// Where unit `unit`'s texel for `frag` comes from (level, address, texel coordinates), for
    /// pixel history; `None` when the sampler cannot say. The colour is filled in by the caller.
    fn describe(&self, _unit: usize, _frag: &Fragment) -> Option<TexelRecord> {
        None
    }
}

/// No texture sampling (for callers without memory to decode textures from): every unit reads
/// as (0, 0, 0, 0). [`super::PixelPipeline::new`] reports enabled units that the combiners read as
/// [`super::Feature::Textures`] not implemented.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoTextures;

impl TextureSampler for NoTextures {
    fn enabled(&self, _unit: usize) -> bool {
        false
    }
    fn needs_gradients(&self) -> bool {
        false
    }
    fn sample(&self, _mem: &PhysMem, _unit: usize, _frag: &Fragment) -> Rgba {
        [0; 4]
    }
}

/// Texture units 0-2 sampled with [`crate::pixel::texture::Sampler`] over textures decoded once per
/// draw (so a draw sees the texture as it was when the draw started).
///
/// Coordinates (`pica-raster.md` §5.6): unit 0 uses texcoord0 (and tc0.w for projective, cube
/// and shadow types), unit 1 texcoord1, unit 2 texcoord2 or texcoord1 (reg 0x080 bit 13).
/// Derivatives for the LOD come from the rasteriser's analytic gradients.
pub struct TextureUnits {
    /// Per unit: the sampler with its lookup routine resolved for this draw.
    samplers: [Option<UnitLookup>; 3],
    /// Sample through the generic sampler ([`PixelPath::Reference`]).
    reference: bool,
    unit2_uses_texcoord1: bool,
    needs_gradients: bool,
    /// Units that were wanted but cannot be sampled, with the reason.
    pub errors: Vec<(u8, TextureError)>,
}

impl std::fmt::Debug for TextureUnits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextureUnits")
            .field("present", &self.samplers.each_ref().map(|s| s.is_some()))
            .field("errors", &self.errors)
            .finish()
    }
}

impl TextureUnits {
    /// Builds samplers for the units in `wanted` that reg 0x080 enables (others are not
    /// decoded and read as 0), decoding each texture now. Units whose texture cannot be
    /// sampled are listed in [`TextureUnits::errors`].
    pub fn from_regs(mem: &PhysMem, regs: &[u32; 0x300], wanted: [bool; 3]) -> Self {
        Self::from_regs_cached(mem, regs, wanted, &mut TextureCache::new(0))
    }

    /// As [`TextureUnits::from_regs`], reusing decoded textures from `cache` when their
    /// configuration and memory contents are unchanged.
    pub fn from_regs_cached(
        mem: &PhysMem,
        regs: &[u32; 0x300],
        wanted: [bool; 3],
        cache: &mut TextureCache,
    ) -> Self {
        let ctl = TexUnitsControl::from_regs(regs);
        let mut samplers: [Option<UnitLookup>; 3] = [None, None, None];
        let mut errors = Vec::new();
        let mut needs_gradients = false;
        for unit in 0..3 {
            if !(wanted[unit] && ctl.enabled[unit]) {
                continue;
            }
            let cfg = TextureConfig::from_regs(regs, unit).with_mode(cache.render_mode);
            match cache.get(mem, &cfg) {
                Ok(s) => {
                    let c = s.config();
                    // λ matters only with distinct filters or more than one usable level.
                    let levels = s.layout().levels().len() as u32;
                    let usable = c.lod.max_level.min(levels.saturating_sub(1));
                    needs_gradients |= c.min_filter != c.mag_filter || usable > c.lod.min_level;
                    let tc = match unit {
                        2 if ctl.unit2_uses_texcoord1 => 1,
                        u => u,
                    };
                    samplers[unit] = Some(UnitLookup::new(s, unit, tc));
                }
                Err(e) => errors.push((unit as u8, e)),
            }
        }
        TextureUnits {
            samplers,
            reference: false,
            unit2_uses_texcoord1: ctl.unit2_uses_texcoord1,
            needs_gradients,
            errors,
        }
    }
}

impl TextureSampler for TextureUnits {
    fn enabled(&self, unit: usize) -> bool {
        self.samplers.get(unit).is_some_and(|s| s.is_some())
    }

    fn needs_gradients(&self) -> bool {
        self.needs_gradients
    }

    #[inline]
    fn sample(&self, mem: &PhysMem, unit: usize, frag: &Fragment) -> Rgba {
        self.sample_counted(mem, unit, frag).0
    }

    #[inline]
    fn sample_counted(&self, _mem: &PhysMem, unit: usize, frag: &Fragment) -> (Rgba, u32) {
        let Some(Some(s)) = self.samplers.get(unit) else {
            return ([0; 4], 0);
        };
        if self.reference {
            s.sample_reference(frag)
        } else {
            s.sample(frag)
        }
    }

    /// The unit's routine is resolved once for the batch ([`UnitLookup::sample_batch`]:
    /// phase-by-phase lanes, bit-identical to [`TextureSampler::sample_counted`] per fragment).
    fn sample_batch(
        &self,
        _mem: &PhysMem,
        unit: usize,
        frags: &[Fragment],
        out: &mut [Rgba],
    ) -> u64 {
        let Some(Some(s)) = self.samplers.get(unit) else {
            for o in out.iter_mut().take(frags.len()) {
                *o = [0; 4];
            }
            return 0;
        };
        if self.reference {
            s.sample_batch_reference(frags, out)
        } else {
            s.sample_batch(frags, out)
        }
    }

    fn set_path(&mut self, path: PixelPath) {
        self.reference = path == PixelPath::Reference;
    }

    fn describe(&self, unit: usize, frag: &Fragment) -> Option<TexelRecord> {
        let Some(Some(s)) = self.samplers.get(unit) else {
            return None;
        };
        let s = s.sampler();
        let tc = match unit {
            2 if self.unit2_uses_texcoord1 => 1,
            u => u.min(2),
        };
        let [u, v] = frag.tc[tc];
        let g = frag.tc_grad[tc];
        // The 2D level choice of `Sampler::sample_face` (cube and projective lookups of unit 0
        // use other coordinates: the level shown is the 2D one, best effort).
        let lambda = s.lambda(&Gradients::uv(g[0], g[1], g[2], g[3]));
        let lod = s.lod(lambda);
        let cfg = s.config();
        let biased = lambda + cfg.lod.bias;
        let level = if biased.is_nan() || biased <= 0.0 || lod <= 0.5 {
            lod.floor().max(0.0) as u32
        } else {
            ((lod + 0.5).ceil() - 1.0).max(0.0) as u32
        };
        let layout = s.layout();
        let level = level.min(layout.count.saturating_sub(1) as u32);
        let info = layout
            .levels
            .get(level as usize)
            .copied()
            .unwrap_or_default();
        Some(TexelRecord {
            unit: unit as u8,
            color: [0; 4],
            addr: cfg.address,
            format: cfg.format_id,
            lod,
            level,
            level_addr: cfg.address.wrapping_add(info.offset),
            texel: [u * info.width as f32, v * info.height as f32],
        })
    }
}

/// Decoded textures shared between draws.
///
/// Decoding a texture costs far more than sampling it a few thousand times (about 1.4 ms for a
/// 256×256 RGBA8 texture with its mip chain on the development machine), and consecutive
/// draws usually reuse textures. The cache keys an entry on the complete [`TextureConfig`] plus
/// a 64-bit hash of every byte the texture covers (all levels of all used faces), so a texture
/// whose memory changed is decoded again. Hashing reads the bytes once (much cheaper than
/// decoding) and allocates nothing.
///
/// Memory is bounded: entries are evicted least-recently-used when their decoded size (4 bytes
/// per texel) exceeds the byte budget. A budget of 0 keeps nothing (every lookup decodes).
///
/// Caveat: a 64-bit hash collision between two contents of the same texture
/// configuration would show stale texels; with a well-mixed 64-bit hash this is negligible.
#[derive(Default)]
pub struct TextureCache {
    entries: Vec<CacheEntry>,
    budget_bytes: usize,
    used_bytes: usize,
    tick: u64,
    /// Lookups answered from the cache.
    pub hits: u64,
    /// Lookups that decoded.
    pub misses: u64,
    /// The sampling mode applied to every configuration built through
    /// [`TextureUnits::from_regs_cached`] (entries key on it, so modes never share entries).
    pub render_mode: RenderMode,
}

struct CacheEntry {
    config: TextureConfig,
    hash: u64,
    bytes: usize,
    last_use: u64,
    sampler: Arc<Sampler<DecodedTexels>>,
}

impl std::fmt::Debug for TextureCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TextureCache")
            .field("entries", &self.entries.len())
            .field("used_bytes", &self.used_bytes)
            .field("budget_bytes", &self.budget_bytes)
            .field("hits", &self.hits)
            .field("misses", &self.misses)
            .finish()
    }
}

/// Default budget of [`TextureCache::with_default_budget`]: 64 MiB of decoded texels.
pub const DEFAULT_TEXTURE_CACHE_BYTES: usize = 64 << 20;

impl TextureCache {
    /// An empty cache keeping at most `budget_bytes` of decoded texels.
    pub fn new(budget_bytes: usize) -> Self {
        TextureCache {
            budget_bytes,
            ..Default::default()
        }
    }

    /// An empty cache with [`DEFAULT_TEXTURE_CACHE_BYTES`].
    pub fn with_default_budget() -> Self {
        Self::new(DEFAULT_TEXTURE_CACHE_BYTES)
    }

    /// Number of cached textures.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True if nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of decoded texels held.
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.used_bytes = 0;
    }

    /// The sampler for `cfg` over the current contents of `mem`, decoded now or reused.
    pub fn get(
        &mut self,
        mem: &PhysMem,
        cfg: &TextureConfig,
    ) -> Result<Arc<Sampler<DecodedTexels>>, TextureError> {
        self.tick += 1;
        let key = content_hash(mem, cfg);
        if let Some(h) = key
            && let Some(e) = self
                .entries
                .iter_mut()
                .find(|e| e.hash == h && e.config == *cfg)
        {
            e.last_use = self.tick;
            self.hits += 1;
            return Ok(Arc::clone(&e.sampler));
        }
        self.misses += 1;
        let sampler = Arc::new(Sampler::decoded(mem, cfg)?);
        let Some(hash) = key else { return Ok(sampler) };
        let bytes = decoded_bytes(&sampler);
        if bytes > self.budget_bytes {
            return Ok(sampler);
        }
        while self.used_bytes + bytes > self.budget_bytes {
            let Some((i, _)) = self
                .entries
                .iter()
                .enumerate()
                .min_by_key(|(_, e)| e.last_use)
            else {
                break;
            };
            let old = self.entries.swap_remove(i);
            self.used_bytes -= old.bytes;
        }
        self.used_bytes += bytes;
        self.entries.push(CacheEntry {
            config: *cfg,
            hash,
            bytes,
            last_use: self.tick,
            sampler: Arc::clone(&sampler),
        });
        Ok(sampler)
    }
}

/// Decoded size of a sampler's texels: 4 bytes per texel of every level of every used face.
fn decoded_bytes(s: &Sampler<DecodedTexels>) -> usize {
    let faces = if s.config().texture_type.is_cube() {
        6
    } else {
        1
    };
    let per_face: usize = s
        .layout()
        .levels()
        .iter()
        .map(|l| l.width as usize * l.height as usize)
        .sum();
    per_face * faces * 4
}

/// A 64-bit hash of every byte the texture covers, or `None` if the configuration has no
/// valid layout (the decoder then reports the error).
fn content_hash(mem: &PhysMem, cfg: &TextureConfig) -> Option<u64> {
    let layout = cfg.layout()?;
    let faces = if cfg.texture_type.is_cube() { 6 } else { 1 };
    let mut h = Hasher::new();
    for &base in cfg.face_addresses.iter().take(faces) {
        h.word(u64::from(base));
        let mut addr = u64::from(base);
        let end = addr.saturating_add(layout.total_bytes);
        while addr < end {
            // ok: addr < end ≤ u32::MAX + total_bytes is checked by the decoder; here we stop
            // hashing at the end of the 32-bit address space.
            let Ok(a) = u32::try_from(addr) else { break };
            let in_page = (a as usize) % PAGE_SIZE;
            let n = (PAGE_SIZE - in_page).min((end - addr) as usize);
            match mem.slice_in_page(a, n) {
                Some(bytes) => h.bytes(bytes),
                None => {
                    // Not resident (reads as zero), or unmapped (the decoder will fail).
                    // Hashed as one piece like a resident page, from a buffer that is only
                    // made when needed (zeroing a page-sized buffer per lookup cost more than
                    // hashing a small texture).
                    let mut chunk = vec![0u8; n];
                    if mem.read(a, &mut chunk).is_err() {
                        chunk.fill(0);
                    }
                    h.bytes(&chunk);
                }
            }
            addr += n as u64;
        }
    }
    Some(h.finish())
}

/// A small non-cryptographic 64-bit hash: four independent multiply-rotate lanes over 32-byte
/// blocks (so the multiplications overlap instead of forming one long dependency chain), then a
/// final avalanche. Deterministic across runs and platforms. The lane assignment depends on how
/// the bytes are split into [`Hasher::bytes`] calls, which is fixed for a given texture
/// configuration, so equal configurations over equal bytes always hash equally.
struct Hasher([u64; 4]);

impl Hasher {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;

    fn new() -> Self {
        Hasher([
            0x243F_6A88_85A3_08D3,
            0x1319_8A2E_0370_7344,
            0xA409_3822_299F_31D0,
            0x082E_FA98_EC4E_6C89,
        ])
    }

    #[inline]
    fn mix(lane: u64, w: u64) -> u64 {
        (lane ^ w).wrapping_mul(Self::K).rotate_left(29)
    }

    #[inline]
    fn word(&mut self, w: u64) {
        self.0[0] = Self::mix(self.0[0], w);
    }

    fn bytes(&mut self, b: &[u8]) {
        let mut blocks = b.chunks_exact(32);
        for blk in &mut blocks {
            for (k, lane) in self.0.iter_mut().enumerate() {
                let mut w = [0u8; 8];
                w.copy_from_slice(&blk[8 * k..8 * k + 8]);
                *lane = Self::mix(*lane, u64::from_le_bytes(w));
            }
        }
        let mut words = blocks.remainder().chunks_exact(8);
        for c in &mut words {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.word(u64::from_le_bytes(w));
        }
        let rest = words.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.word(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }

    fn finish(&self) -> u64 {
        let mut x = 0u64;
        for (k, &lane) in self.0.iter().enumerate() {
            x = Self::mix(x, lane.rotate_left(16 * k as u32));
        }
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        x = x.wrapping_mul(0xC4CE_B9FE_1A85_EC53);
        x ^ (x >> 33)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::FCRAM;
    use crate::pixel::texture::TextureFormat;

    fn cfg(addr: u32, size: u32) -> TextureConfig {
        TextureConfig::new_2d(addr, size, size, TextureFormat::Rgba8)
    }

    #[test]
    fn cache_hits_until_memory_changes() {
        let mut mem = PhysMem::new();
        mem.write(FCRAM.base, &[7u8; 64 * 4]).unwrap();
        let mut c = TextureCache::new(1 << 20);
        let a = c.get(&mem, &cfg(FCRAM.base, 8)).unwrap();
        let b = c.get(&mem, &cfg(FCRAM.base, 8)).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!((c.hits, c.misses, c.len()), (1, 1, 1));
        assert_eq!(c.used_bytes(), 8 * 8 * 4);
        // One changed byte: decoded again, and the new texel is visible.
        mem.write(FCRAM.base + 3, &[0x99]).unwrap();
        let d = c.get(&mem, &cfg(FCRAM.base, 8)).unwrap();
        assert!(!Arc::ptr_eq(&a, &d));
        assert_eq!(c.misses, 2);
        // A different configuration of the same bytes is a different entry.
        let mut other = cfg(FCRAM.base, 8);
        other.format = Some(TextureFormat::Rgb565);
        other.format_id = TextureFormat::Rgb565.id();
        c.get(&mem, &other).unwrap();
        assert_eq!(c.misses, 3);
        // Errors are not cached and do not panic.
        assert!(c.get(&mem, &cfg(0x0800_0000, 8)).is_err());
    }

    #[test]
    fn cache_respects_its_budget() {
        let mem = PhysMem::new();
        // Each 16×16 RGBA8 texture decodes to 1 KiB; the budget holds two.
        let mut c = TextureCache::new(2048);
        for k in 0..5u32 {
            c.get(&mem, &cfg(FCRAM.base + k * 0x1000, 16)).unwrap();
            assert!(c.used_bytes() <= 2048);
        }
        assert_eq!(c.len(), 2);
        // The most recent two are kept.
        c.get(&mem, &cfg(FCRAM.base + 4 * 0x1000, 16)).unwrap();
        assert_eq!(c.hits, 1);
        // Budget 0 keeps nothing.
        let mut z = TextureCache::new(0);
        z.get(&mem, &cfg(FCRAM.base, 16)).unwrap();
        z.get(&mem, &cfg(FCRAM.base, 16)).unwrap();
        assert_eq!((z.len(), z.hits, z.misses), (0, 0, 2));
    }

    #[test]
    fn hash_covers_unwritten_and_partial_pages() {
        let mut mem = PhysMem::new();
        // A texture straddling a page boundary, partly never written.
        let base = FCRAM.base + PAGE_SIZE as u32 - 128;
        let c8 = cfg(base, 8);
        let h0 = content_hash(&mem, &c8).unwrap();
        mem.write(base + 200, &[1]).unwrap();
        let h1 = content_hash(&mem, &c8).unwrap();
        assert_ne!(h0, h1);
        mem.write(base + 200, &[0]).unwrap();
        assert_eq!(content_hash(&mem, &c8).unwrap(), h0);
    }
}
